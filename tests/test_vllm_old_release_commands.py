"""The vLLM command `oomkit plan` / `oomkit fit` write, as the release chosen (--engine-version) runs it.

- The program: `vllm serve MODEL` from 0.5.2 (setup.py console_scripts "vllm=vllm.scripts:main", vllm/scripts.py,
  vllm#5090, merged after 0.5.1; vllm#6431 moved the docs to it once 0.5.2 was out); before it the OpenAI server is
  `python -m vllm.entrypoints.openai.api_server --model MODEL` with the same engine flags.
- The 8-bit KV cache: vllm/engine/arg_utils.py EngineArgs.add_cli_args --kv-cache-dtype `choices`: no such flag
  before 0.3.0; ['auto', 'fp8_e5m2'] in 0.3.0-0.4.0.post1 (vllm#2279); ['auto', 'fp8'] in 0.4.1-0.4.2 (vllm#3290,
  "fp8" = E5M2 on CUDA, E4M3 on ROCm); ['auto', 'fp8', 'fp8_e5m2', 'fp8_e4m3'] from 0.4.3 (vllm#4535, RFC vllm#4532).
"""

from __future__ import annotations

import json
import re

import pytest

from oomkit.cli import main
from oomkit.engines.cmdline import parse_command
from oomkit.engines.vllm.args import format_command
from oomkit.engines.vllm.config import cache_dtypes_at, fp8_kv_name
from oomkit.engines.vllm.settings import VllmSettings, parse_version

MODULE = ["python", "-m", "vllm.entrypoints.openai.api_server", "--model"]


def _plan(version: str) -> list[dict]:
    assert main(["plan", "meta-llama/Llama-2-7b-hf", "--engine", "vllm", "--engine-version", version,
                 "--gpu", "RTX 4090", "--json", "--limit", "12"]) == 0
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
    ("0.2.7", "fp8_e5m2", r"api_server\.py: error: unrecognized arguments: --kv-cache-dtype fp8_e5m2"),
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
