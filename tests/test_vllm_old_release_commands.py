"""The vLLM command `oomkit plan` / `oomkit fit` write, as the release chosen (--engine-version) runs it.

- The program: `vllm serve MODEL` from 0.5.2 (setup.py console_scripts "vllm=vllm.scripts:main", vllm/scripts.py,
  vllm#5090, merged after 0.5.1; vllm#6431 moved the docs to it once 0.5.2 was out); before it the OpenAI server is
  `python -m vllm.entrypoints.openai.api_server --model MODEL` with the same engine flags.
- The 8-bit KV cache: vllm/engine/arg_utils.py EngineArgs.add_cli_args --kv-cache-dtype `choices`: no such flag
  before 0.3.0; ['auto', 'fp8_e5m2'] in 0.3.0-0.4.0.post1 (vllm#2279); ['auto', 'fp8'] in 0.4.1-0.4.2 (vllm#3290,
  "fp8" = E5M2 on CUDA, E4M3 on ROCm); ['auto', 'fp8', 'fp8_e5m2', 'fp8_e4m3'] from 0.4.3 (vllm#4535, RFC vllm#4532).
- --quantization: engine/arg_utils.py `choices` (a literal list to 0.3.3, [*QUANTIZATION_METHODS, None] from 0.4.1)
  with model_executor/layers/quantization/__init__.py QUANTIZATION_METHODS, read in the sdists 0.2.0-0.5.5: ['awq']
  in 0.2.0-0.2.1, + squeezellm 0.2.2, + gptq 0.2.6, + marlin 0.3.3, + aqlm/fp8 0.4.1, + gptq_marlin 0.4.2,
  + deepspeedfp/gptq_marlin_24/sparseml 0.4.3, compressed-tensors (for sparseml)/bitsandbytes 0.5.0, + fbgemm_fp8/
  awq_marlin 0.5.3, + qqq 0.5.4, + tpu_int8/gguf/experts_int8 0.5.5. fp8's get_min_capability (fp8.py): 90 in 0.4.1,
  89 in 0.4.2-0.5.0, 80 from 0.5.1 (Marlin below 89). bitsandbytes in 0.5.0-0.5.5 needs --load-format bitsandbytes
  (arg_utils.py create_engine_config) and TP = PP = 1 (config.py verify_with_parallel_config).
"""

from __future__ import annotations

import json
import re

import pytest

from oomkit.cli import main
from oomkit.engines.cmdline import parse_command
from oomkit.engines.vllm.args import format_command
from oomkit.engines.vllm.config import cache_dtypes_at, fp8_kv_name
from oomkit.engines.vllm.quantization import methods_at, offered_at
from oomkit.engines.vllm.settings import VllmSettings, parse_version

MODULE = ["python", "-m", "vllm.entrypoints.openai.api_server", "--model"]


def _plan(version: str, gpu: str = "RTX 4090") -> list[dict]:
    assert main(["plan", "meta-llama/Llama-2-7b-hf", "--engine", "vllm", "--engine-version", version,
                 "--gpu", gpu, "--json", "--limit", "12"]) == 0
    return json.loads(_plan.capsys.readouterr().out)["plan"]["options"]  # type: ignore[attr-defined]


@pytest.fixture(autouse=True)
def _cap(capsys):
    _plan.capsys = capsys  # type: ignore[attr-defined]


@pytest.mark.parametrize("version, program", [
    ("0.3.0", MODULE), ("0.4.0", MODULE), ("0.4.2", MODULE), ("0.5.1", MODULE),
    ("0.5.2", ["vllm", "serve"]), ("0.6.0", ["vllm", "serve"]),
])
def test_program_by_release(version, program):
    cmd = format_command("meta-llama/Llama-2-7b-hf", VllmSettings(engine_version=version, max_model_len=4096))
    assert cmd[:len(program)] == program
    assert cmd[len(program)] == "meta-llama/Llama-2-7b-hf"
    assert cmd[len(program) + 1:] == ["--max-model-len", "4096"]


@pytest.mark.parametrize("version, fp8", [
    ("0.2.7", None), ("0.3.0", "fp8_e5m2"), ("0.4.0", "fp8_e5m2"), ("0.4.0.post1", "fp8_e5m2"),
    ("0.4.1", "fp8"), ("0.4.3", "fp8"), ("0.34.0", "fp8"),
])
def test_fp8_spelling_by_release(version, fp8):
    assert fp8_kv_name(parse_version(version)) == fp8


def test_choices_by_release_as_arg_utils_lists_them():
    assert cache_dtypes_at((0, 3, 0)) == ["auto", "fp8_e5m2"]
    assert cache_dtypes_at((0, 4, 0)) == ["auto", "fp8_e5m2"]
    assert cache_dtypes_at((0, 4, 1)) == ["auto", "fp8"]
    assert cache_dtypes_at((0, 4, 2)) == ["auto", "fp8"]
    assert sorted(cache_dtypes_at((0, 4, 3))) == ["auto", "fp8", "fp8_e4m3", "fp8_e5m2"]


@pytest.mark.parametrize("version, kv_flags, program", [
    ("0.2.7", [], MODULE),
    ("0.4.0", ["fp8_e5m2"], MODULE),
    ("0.4.1", ["fp8"], MODULE),
    ("0.5.2", ["fp8"], ["vllm", "serve"]),
])
def test_plan_writes_the_releases_command(version, kv_flags, program):
    options = _plan(version)
    commands = [o["command"] for o in options]
    assert commands and all(c.startswith(" ".join(program) + " ") for c in commands), commands
    written = {c.split("--kv-cache-dtype ", 1)[1].split()[0] for c in commands if "--kv-cache-dtype" in c}
    assert sorted(written) == kv_flags
    for c in commands:  # each command reads back to the release's settings
        parsed = parse_command(c.split(), env={})
        assert parsed.settings.kv_cache_dtype in ("auto", *kv_flags)


@pytest.mark.parametrize("version, kv, message", [
    ("0.4.0", "fp8", r"api_server\.py: error: argument --kv-cache-dtype: invalid choice: 'fp8' "
                     r"\(choose from 'auto', 'fp8_e5m2'\)"),
    ("0.4.1", "fp8_e5m2", r"invalid choice: 'fp8_e5m2' \(choose from 'auto', 'fp8'\)"),
    ("0.4.2", "fp8_e4m3", r"invalid choice: 'fp8_e4m3' \(choose from 'auto', 'fp8'\)"),
    ("0.2.7", "fp8_e5m2", r"api_server\.py: error: unrecognized arguments: --kv-cache-dtype"),
    ("0.5.2", "fp8_inc", r"vllm serve: error: argument --kv-cache-dtype: invalid choice: 'fp8_inc'"),
])
def test_kv_cache_dtype_refused_as_the_release_refuses_it(version, kv, message, capsys):
    rc = main(["estimate", "--engine-version", version, "--gpu", "RTX 4090", "--", *MODULE,
               "meta-llama/Llama-2-7b-hf", "--kv-cache-dtype", kv])
    err = capsys.readouterr().err
    assert rc == 2
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert re.search(message, err), err


def test_fit_keeps_the_old_releases_program(capsys):
    rc = main(["fit", "--engine-version", "0.4.0", "--gpu", "RTX 4090", "--", *MODULE, "meta-llama/Llama-2-7b-hf",
               "--max-model-len", "4096", "--kv-cache-dtype", "fp8_e5m2"])
    out = capsys.readouterr().out
    assert rc == 0
    assert out.strip().splitlines()[-1].startswith(" ".join(MODULE) + " meta-llama/Llama-2-7b-hf")


@pytest.mark.parametrize("version, methods", [
    ((0, 2, 0), ["awq"]),
    ((0, 2, 5), ["awq", "squeezellm"]),
    ((0, 3, 1), ["awq", "gptq", "squeezellm"]),
    ((0, 3, 3), ["awq", "gptq", "marlin", "squeezellm"]),
    ((0, 4, 1), ["aqlm", "awq", "fp8", "gptq", "marlin", "squeezellm"]),
    ((0, 4, 3), ["aqlm", "awq", "deepspeedfp", "fp8", "gptq", "gptq_marlin", "gptq_marlin_24", "marlin", "sparseml",
                 "squeezellm"]),
    ((0, 5, 2), ["aqlm", "awq", "bitsandbytes", "compressed-tensors", "deepspeedfp", "fp8", "gptq", "gptq_marlin",
                 "gptq_marlin_24", "marlin", "squeezellm"]),
])
def test_quantization_choices_as_the_sdists_list_them(version, methods):
    assert sorted(methods_at(version)) == methods


def test_quantization_choices_after_the_table_are_the_registry():
    assert methods_at((0, 5, 6)) is None and methods_at((0, 10, 0)) is None
    assert offered_at("fp8", (0, 6, 0)) and offered_at("bitsandbytes", (0, 6, 0))


@pytest.mark.parametrize("version, written", [
    ("0.2.7", set()),  # neither method in 0.2.7's parser
    ("0.4.0", set()),  # fp8 first read in 0.4.1 (0.4.0: no sdist, placed with 0.3.3)
    ("0.4.2", {"fp8"}),  # fp8 on SM 8.9; bitsandbytes first in 0.5.0
    ("0.5.2", {"fp8"}),  # bitsandbytes needs --load-format bitsandbytes beside it, not written
    ("0.6.0", {"fp8", "bitsandbytes"}),
])
def test_plan_offers_only_the_releases_methods(version, written):
    commands = [o["command"] for o in _plan(version)]
    offered = {c.split("--quantization ", 1)[1].split()[0] for c in commands if "--quantization" in c}
    assert offered == written, commands


@pytest.mark.parametrize("version, fp8", [("0.4.1", False), ("0.5.0", False), ("0.5.1", True)])
def test_plan_fp8_on_ampere_by_release(version, fp8):
    # RTX 3090, SM 8.6: under fp8.py's minimum capability 89 until 0.5.1's Marlin path (minimum 80)
    commands = [o["command"] for o in _plan(version, gpu="RTX 3090")]
    assert any("--quantization fp8" in c for c in commands) is fp8, commands


@pytest.mark.parametrize("version, gpu, extra, message", [
    ("0.3.0", "RTX 4090", ["--quantization", "fp8"],
     r"api_server\.py: error: argument --quantization/-q: invalid choice: 'fp8' "
     r"\(choose from 'awq', 'gptq', 'squeezellm', None\)"),
    ("0.4.3", "RTX 4090", ["--quantization", "compressed-tensors"], r"invalid choice: 'compressed-tensors'"),
    ("0.5.0", "RTX 4090", ["--quantization", "sparseml"], r"invalid choice: 'sparseml'"),
    ("0.4.1", "RTX 4090", ["--quantization", "fp8"], r"Minimum capability: 90\. Current capability: 89\."),
    ("0.4.2", "RTX 3090", ["-q", "fp8"], r"Minimum capability: 89\. Current capability: 86\."),
    ("0.5.3", "2x RTX 4090", ["--quantization", "bitsandbytes", "--load-format", "bitsandbytes", "-tp", "2"],
     r"BitAndBytes quantization with TP or PP is not supported yet"),
])
def test_quantization_refused_as_the_release_refuses_it(version, gpu, extra, message, capsys):
    rc = main(["estimate", "--engine-version", version, "--gpu", gpu, "--", *MODULE, "meta-llama/Llama-2-7b-hf",
               *extra])
    err = capsys.readouterr().err
    assert rc == 2
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert re.search(message, err), err


@pytest.mark.parametrize("version, offloads", [("0.4.2", False), ("0.5.2", False), ("0.5.3", True), ("0.6.0", True)])
def test_plan_offers_cpu_offload_only_where_the_parser_has_it(version, offloads, capsys):
    # --cpu-offload-gb is first in 0.5.3 (vllm#6496): absent from the add_cli_args of the 0.4.2 and 0.5.2 sdists, in
    # 0.5.3.post1's (tools/build_vllm_flags.py --merge over those sdists); before it plan has no tier 2 for vLLM
    rc = main(["plan", "Qwen/Qwen2.5-32B-Instruct-GPTQ-Int4", "--engine", "vllm", "--engine-version", version,
               "--vram", "22GiB"])
    out = capsys.readouterr().out
    assert rc in (0, 1)
    assert ("--cpu-offload-gb" in out) is offloads


@pytest.mark.parametrize("version, flag, known", [
    ("0.2.7", "--max-model-len", True), ("0.2.7", "--enable-prefix-caching", False),
    ("0.4.1", "--enable-prefix-caching", True), ("0.4.2", "--max-seq_len-to-capture", True),
    ("0.5.2", "--cpu-offload-gb", False), ("0.5.3", "--cpu-offload-gb", True),
])
def test_flag_table_reaches_back_to_0_2_7(version, flag, known):
    # read from the sdists' vllm/engine/arg_utils.py add_cli_args (0.4.2's own spelling --max-seq_len-to-capture)
    from oomkit.engines.release_flags import known_in  # the table the parsers consult
    assert known_in("vllm_flags.json", flag, parse_version(version)) is known


def test_plan_says_why_there_is_no_second_tier(capsys):
    # 0.4.2 has no --cpu-offload-gb (first in 0.5.3): the note does not claim that system RAM was tried
    main(["plan", "Qwen/Qwen2.5-32B-Instruct-GPTQ-Int4", "--engine", "vllm", "--engine-version", "0.4.2",
          "--vram", "12GiB"])
    out = capsys.readouterr().out
    assert "even with part of the model in system RAM" not in out
    assert "has no option to keep part of the weights in system RAM" in out
