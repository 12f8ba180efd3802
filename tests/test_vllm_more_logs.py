"""vLLM start-up logs that fill gaps left by the others: a W4A16 (int4) checkpoint, model runner V2. Each log is a
fixture under tests/fixtures/engine_logs/vllm/ with its URL; the figures below are the log's, never oomkit's.

Held against each log, as in tests/test_vllm_startup.py: the weights one rank loads (3 %), the KV budget one rank gets
(3 % of the GPU's memory) and the start-up verdict. None of these logs was used to fit a constant: every figure is
held out. Where oomkit misses, the case is a strict xfail with the measured error.
"""

from __future__ import annotations

import pytest

from oomkit.engines.vllm import ENGINE, VllmSettings
from oomkit.model.resolve import resolve
from oomkit.units import GiB
from tests.test_startup_deaths import _verdict
from tests.test_vllm_startup import LIMIT, check_known, devices, fixture, known_params

H100 = "NVIDIA H100 80GB HBM3"


@pytest.fixture(autouse=True)
def offline(monkeypatch, tmp_path):
    # quantized checkpoints resolve by their published names (model/names.py), never from the hub
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("OOMKIT_CACHE", str(tmp_path / "cache"))


# stem -> (the model as the log names it, GPU for the devices, the settings the log shows)
LOGS = {
    # llm-d-planner v0.19.0 sweep: RedHatAI's compressed-tensors W4A16 Llama-3.1-8B, --dtype float16, util 0.95,
    # prefix caching off, vllm serve defaults (1024 sequences, 8192 batched tokens): starts
    "llmd-llama-3.1-8b-w4a16-h100-v0.19": (
        "RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w4a16", H100,
        VllmSettings(engine_version="0.19.0", max_model_len=8192, gpu_memory_utilization=0.95,
                     enable_prefix_caching=False, dtype="float16")),
}

KNOWN: dict[tuple[str, str], str] = {}


def _check(stem: str, figure: str, ok: bool, message: str) -> None:
    check_known(KNOWN, stem, figure, ok, message)


def _params(figure: str) -> list:
    return known_params(KNOWN, LOGS, figure)


def estimate(stem: str):
    model, gpu, s = LOGS[stem]
    fx = fixture(stem)
    world = s.tensor_parallel_size * s.pipeline_parallel_size
    return fx, ENGINE.estimate(resolve(model), devices(fx, gpu, world), s)


@pytest.mark.parametrize("stem", _params("weights"))
def test_weights_per_rank(stem):
    fx, est = estimate(stem)
    logged = fx["printed"]["model_loading_bytes"]
    got = est.engine_view["model_loading_bytes"][est.devices[0].id]
    err = (got - logged) / logged
    _check(stem, "weights", abs(err) < LIMIT, f"{stem}: weights {err:+.2%} ({got / GiB:.2f} vs {logged / GiB:.2f} GiB)")


@pytest.mark.parametrize("stem", _params("available"))
def test_kv_budget_per_rank(stem):
    fx, est = estimate(stem)
    logged = fx["printed"]["available_kv_cache_bytes"]
    got = est.engine_view["available_kv_cache_bytes"][est.devices[0].id]
    err = (got - logged) / est.devices[0].memory_bytes
    _check(stem, "available", abs(err) < LIMIT,
           f"{stem}: available KV {err:+.2%} of the GPU ({got / GiB:.2f} vs {logged / GiB:.2f} GiB)")


@pytest.mark.parametrize("stem", _params("verdict"))
def test_start_up_verdict_agrees_with_the_log(stem):
    fx, est = estimate(stem)
    logged, got = _verdict(fx, est)
    _check(stem, "verdict", got == logged, f"{stem}: the log {logged}, oomkit: {got}")


def test_w4a16_is_read_as_int4_with_float16_embeddings():
    """RedHatAI's -quantized.w4a16: the log's 'The model is convertible to gptq_marlin during runtime' and 5.38 GiB;
    the same sweep's float16/bfloat16 Llama-3.1-8B loads 14.99 GiB (vllm-eng-llama-3.1-8b-h100-v0.19-tp1). The
    embedding and lm_head (2 x 128,256 x 4,096 x 2 B = 1.96 GiB) stay in 16 bits, so the ratio is far above 4/16."""
    fx, est = estimate("llmd-llama-3.1-8b-w4a16-h100-v0.19")
    bf16 = fixture("vllm-eng-llama-3.1-8b-h100-v0.19-tp1")["printed"]["model_loading_bytes"]
    got = est.engine_view["model_loading_bytes"]["CUDA0"]
    assert abs(got / bf16 - fx["printed"]["model_loading_bytes"] / bf16) < 0.01
