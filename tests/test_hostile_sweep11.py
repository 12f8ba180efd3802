"""Hostile input, eleventh real-world sweep: GPU names, sizes and engine versions garbled the ways people garble them
(a count that is negative, fractional or in exponent form, a size of 0 or NaN, a calendar date that does not exist,
an emoji), none of them in the earlier hostile tests. Each holds the promise: exit 2 and one line `oomkit: error:`
naming the bad value, never a traceback. Measured (2026-12-06) with estimate, check and fit over 8,372 config.json
field mutations (6 architectures, 2 or 3 engines each), 1,342 GGUF header mutations (retyped keys, bad dims, cuts,
byte flips, versions and counts) and 2,226 engine-command flag values (vLLM, SGLang, llama.cpp, mlx_lm, lms,
Ollama): no traceback. A MoE period of 0 in config.json (decoder_sparse_step, moe_layer_freq) was read as a model
without (or with only) MoE layers where the engines divide by it; now refused. Two answers were wrong and are fixed:
a negative size after a GPU name, and fit of an `lms load` context out of llama.cpp's range."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests import hostile as H
from tests.sweep_harness import offline, one_line_or_answer, run_cli  # noqa: F401 (autouse: no network)

CATALOG = Path(__file__).resolve().parents[1] / "src" / "oomkit" / "model" / "catalog" / "data"

MODEL = "Qwen/Qwen3-8B"


def refused(args: list[str], words: str) -> None:
    rc, _, err = run_cli(*args)
    one_line_or_answer(rc, err, args)
    assert rc == 2 and words in err, (args, rc, err)


@pytest.mark.parametrize("gpu,words", [
    ("-2x H100", "unknown GPU '-2x H100'"),
    ("1e9x H100", "unknown GPU '1e9x H100'"),
    ("1.5x H100", "unknown GPU '1.5x H100'"),
    ("H100 nanGB", "unknown GPU 'H100 nanGB'"),
    ("MI300X 0GB", "AMD Instinct MI300X is sold with 192 GB"),
    ("M4 Max 0GB", "Apple M4 Max is sold with"),
    ("GTX 99999", "unknown GPU 'GTX 99999'"),
    ("999999999x RTX 4090", "more than 1,024 devices"),
])
def test_a_garbled_gpu_name_is_refused(gpu, words):
    refused(["check", MODEL, "--gpu", gpu], words)


@pytest.mark.parametrize("vram", ["nanGiB", "8GiB,-1GiB", "1e30GiB"])
def test_a_garbled_size_is_refused(vram):
    refused(["check", MODEL, "--vram", vram], f"cannot read size '{vram.split(',')[-1]}'")


@pytest.mark.parametrize("engine,version,words", [
    ("llama.cpp", "2026-13-45", "cannot read llama.cpp version '2026-13-45'"),
    ("llama.cpp", "2026-02-30", "cannot read llama.cpp version '2026-02-30'"),
    ("llama.cpp", "b-1", "cannot read llama.cpp version 'b-1'"),
    ("vllm", "\U0001f642", "cannot read vLLM version"),
    ("sglang", "1..2", "cannot read SGLang version '1..2'"),
    ("ollama", "9" * 30, "cannot read Ollama version"),
    ("mlx", "nightly", "cannot read mlx-lm version 'nightly'"),
])
def test_a_garbled_engine_version_is_refused(engine, version, words):
    refused(["check", MODEL, "--engine", engine, "--engine-version", version, "--vram", "80GiB"], words)


# ---- a MoE period of 0 in config.json (model/hf_config.py _is_moe_layer) ----

@pytest.mark.parametrize("file,field,engine", [
    ("qwen3-30b-a3b.json", "decoder_sparse_step", "vllm"),  # was: read as no MoE layer, 3.34B of 30.5B params
    ("qwen3-30b-a3b.json", "decoder_sparse_step", "sglang"),
    ("deepseek-v3.json", "moe_layer_freq", "vllm"),  # was: read as every layer past the dense ones MoE
    ("deepseek-v3.json", "moe_layer_freq", "llama.cpp"),
])
def test_a_moe_period_of_zero_is_refused(tmp_path, file, field, engine):
    """transformers and vLLM build each layer with (layer + 1) % decoder_sparse_step / layer % moe_layer_freq: a
    division by zero, not a model without (or with only) MoE layers."""
    cfg = json.loads((CATALOG / file).read_text())["config"]
    H.write_config(tmp_path / "m", {**cfg, field: 0})
    refused(["estimate", str(tmp_path / "m"), "--engine", engine, "--vram", "80GiB"], f"{field} = 0")


# ---- found by this sweep, fixed in hardware/catalog.py and llamacpp/programs.py ----

def test_a_negative_size_after_a_gpu_name_is_refused():
    refused(["check", MODEL, "--gpu", "H100 -5GB"], "H100 -5GB")


def test_fit_refuses_an_out_of_range_lms_context_as_check_does():
    refused(["fit", "--vram", "80GiB", "--", "lms", "load", "qwen/qwen3-8b", "-c", "99999999999"], "out of range")
