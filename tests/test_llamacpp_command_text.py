"""llama.cpp command text as llama.cpp reads it.

- -ctk / -ctv: common/arg.cpp kv_cache_type_from_str (llama.cpp, b4317 on; common.cpp's from b1619 before) returns
  the type whose ggml_type_name(type) == s, the value untrimmed, else throws "Unsupported cache type: " + s; so
  " q8_0", "q8_0\\t" and "q8_0\\u2028" stop llama.cpp as "Q8_0" does. Ollama's OLLAMA_KV_CACHE_TYPE is read by
  envconfig.Var (ollama envconfig/config.go: strings.Trim(strings.TrimSpace(s), "\\"'")), so there the padding goes.
- the model: llama-server loads a file (-m) or a Hugging Face repo of GGUF files (-hf REPO[:QUANT], common/arg.cpp;
  no tag is the tag "latest", which the hub answers with the repo's Q4_K_M file). A catalog name or Ollama tag
  (qwen3:8b) is neither, nor is a checkpoint repo of safetensors (Qwen/Qwen3-8B): the command names the GGUF repo
  plan names (unsloth/Qwen3-8B-GGUF, which publishes Q4_K_M and Q8_0), else a -m path for the user to fill in.
"""

from __future__ import annotations

import pytest

from oomkit.engines.base import get_engine
from oomkit.engines.cmdline import parse_command
from oomkit.engines.llamacpp.args import download_command, format_command, model_args
from oomkit.engines.llamacpp.settings import LlamaCppSettings
from oomkit.request import devices_from, resolve_model
from tests.sweep_harness import offline, one_line_or_answer, run_cli  # noqa: F401 (autouse: no network)

_LLAMA = ["estimate", "--vram", "24GiB", "--", "llama-server", "-hf", "unsloth/Qwen3-8B-GGUF:Q4_K_M"]


@pytest.mark.parametrize("flag,value", [("-ctk", " q8_0"), ("-ctk", "q8_0\t"), ("-ctk", "q8_0\u2028"),
                                        ("-ctv", "f16 "), ("-ctkd", " q4_0"), ("-ctk", " Q8_0")])
def test_a_cache_type_with_white_space_around_it_is_refused_as_llama_cpp_refuses_it(flag, value):
    argv = (*_LLAMA, flag, value, "-fa", "on")
    rc, out, err = run_cli(*argv)
    one_line_or_answer(rc, err, argv)
    assert rc == 2, out[:300]
    assert f'error while handling argument "{flag}": Unsupported cache type:' in err, err
    assert f"give {value.strip().lower()})" in err, err


def test_the_exact_name_is_still_read():
    rc, out, err = run_cli(*_LLAMA, "-ctk", "q8_0", "-ctv", "q8_0", "-fa", "on")
    assert rc in (0, 1), err
    assert "type_k: q8_0" in out and "type_v: q8_0" in out, out


def test_ollama_trims_its_cache_type_variable_as_envconfig_does():
    rc, out, err = run_cli("estimate", "--vram", "24GiB", "--", "env", "OLLAMA_FLASH_ATTENTION=1",
                           "OLLAMA_KV_CACHE_TYPE= q8_0 ", "ollama", "run", "qwen3:8b")
    assert rc in (0, 1), err
    assert "type_k: q8_0" in out and "type_v: q8_0" in out, out


@pytest.mark.parametrize("model,quant,want", [
    ("qwen3:8b", None, ["-hf", "unsloth/Qwen3-8B-GGUF"]),
    ("Qwen/Qwen3-8B", None, ["-hf", "unsloth/Qwen3-8B-GGUF"]),
    ("qwen3:8b", "Q8_0", ["-hf", "unsloth/Qwen3-8B-GGUF:Q8_0"]),
    ("qwen3:8b-q8_0", None, ["-hf", "unsloth/Qwen3-8B-GGUF:Q8_0"]),  # the tag's quant, as the repo's files spell it
    ("Qwen/Qwen3-8B:Q8_0", None, ["-hf", "unsloth/Qwen3-8B-GGUF:Q8_0"]),
    ("unsloth/Qwen3-8B-GGUF", "Q4_K_M", ["-hf", "unsloth/Qwen3-8B-GGUF:Q4_K_M"]),  # a GGUF repo as given
    ("my-own-model", "Q4_K_M", ["-m", "/path/to/my-own-model-Q4_K_M.gguf"]),  # no repo known: a path to fill in
    ("mine:latest", None, ["-m", "/path/to/mine-latest.gguf"]),
    ("models/x.gguf", None, ["-m", "models/x.gguf"]),  # a file not on this machine is still a file
])
def test_the_model_is_written_as_llama_server_loads_it(model, quant, want):
    assert model_args(model, quant) == want


def test_a_catalog_name_in_a_build_before_repo_tags_names_the_repo_file():
    # b4000: -hfr/-hff (from b2514), no REPO:QUANT (from b4470); b2000: a local file only, downloaded first
    assert model_args("qwen3:8b", None, 4000) == ["-hfr", "unsloth/Qwen3-8B-GGUF", "-hff", "FILE-Q4_K_M.gguf"]
    assert model_args("qwen3:8b", None, 2000) == ["-m", "models/unsloth_Qwen3-8B-GGUF_FILE-Q4_K_M.gguf"]
    assert download_command("qwen3:8b", None, LlamaCppSettings(engine_version="b2000")) == (
        "curl -L --create-dirs -o models/unsloth_Qwen3-8B-GGUF_FILE-Q4_K_M.gguf "
        "https://huggingface.co/unsloth/Qwen3-8B-GGUF/resolve/main/FILE-Q4_K_M.gguf")


@pytest.mark.parametrize("model", ["qwen3:8b", "Qwen/Qwen3-8B"])
def test_the_written_command_reads_back_as_the_same_model_and_estimate(model):
    eng = get_engine("llama.cpp")
    s = LlamaCppSettings(n_ctx=4096)
    argv = format_command(model, s)
    assert argv[:3] == ["llama-server", "-hf", "unsloth/Qwen3-8B-GGUF"]
    back = parse_command(argv, env={})
    assert back.model == "unsloth/Qwen3-8B-GGUF" and back.settings == s
    devices = devices_from(vram="24GiB")
    a = eng.estimate(resolve_model(eng, back.model), devices, back.settings)
    b = eng.estimate(resolve_model(eng, model), devices, s)
    assert (a.weights_bytes, a.total_bytes) == (b.weights_bytes, b.total_bytes)
