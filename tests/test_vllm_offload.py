"""vLLM's --cpu-offload-gb: which weights move to host memory, and the releases where nothing moves.

The per-parameter rule (engines/vllm/weights.py offloaded_bytes) is held to three real logs elsewhere
(tests/test_diagnose.py, tests/test_startup_deaths.py, tests/test_vllm.py: Llama-3.1-8B and Qwen2.5-7B on an RTX
3090 at 0.17.1, Llama-3-70B on a GH200 at 0.5.2). Here: the bytes moved, worked by hand from Llama-3.1-8B's
config.json, and model runner V2's missing offloader (read in the 0.21.0-0.28.0 wheels)."""

from __future__ import annotations

from oomkit.engines.vllm import ENGINE, VllmSettings
from oomkit.units import GiB
from tests.test_vllm import H100, catalog_spec

# Llama-3.1-8B (hidden 4096, 8 KV heads of 128, intermediate 14336), bfloat16: one decoder layer's vLLM parameters
QKV = (4096 + 2 * 1024) * 4096 * 2  # qkv_proj
O_PROJ = 4096 * 4096 * 2  # o_proj
GATE_UP = 2 * 14336 * 4096 * 2  # gate_up_proj
DOWN = 14336 * 4096 * 2  # down_proj
LAYER = QKV + O_PROJ + GATE_UP + DOWN + 2 * 4096 * 2  # and the two norms


def _loaded(version: str, offload: float, **kw) -> tuple[int, tuple[str, ...]]:
    s = VllmSettings(engine_version=version, max_model_len=8192, cpu_offload_gb=offload, **kw)
    est = ENGINE.estimate(catalog_spec("llama-3.1-8b-instruct"), (H100,), s)
    return est.engine_view["model_loading_bytes"]["CUDA0"], est.warnings


def test_the_parameter_that_crosses_the_budget_moves_whole():
    """12 GiB: 29 whole layers (12,650,496,000 B), then layer 29's qkv_proj and o_proj (still under 12 GiB) and its
    gate_up_proj, which crosses it: 12,969,263,104 B move, 84,361,216 B more than the budget."""
    moved = 29 * LAYER + QKV + O_PROJ + GATE_UP
    assert moved == 12_969_263_104 and moved - 12 * GiB == 84_361_216
    full, _ = _loaded("0.17.1", 0.0)
    offloaded, warnings = _loaded("0.17.1", 12.0)
    assert full - offloaded == moved
    assert not any("offloader" in w for w in warnings)


def test_model_runner_v2_ignores_the_offload_before_0_28():
    """Llama runs on model runner V2 by default from 0.23 (config/vllm.py _is_default_v2_model_runner_model), whose
    load_model sets no offloader until 0.28: every weight loads on the GPU, with a warning naming the way back."""
    full, _ = _loaded("0.25.0", 0.0)
    ignored, warnings = _loaded("0.25.0", 12.0)
    assert ignored == full
    assert any("--cpu-offload-gb is ignored" in w and "VLLM_USE_V2_MODEL_RUNNER=0" in w for w in warnings)
    v1, warnings = _loaded("0.25.0", 12.0, use_v2_model_runner=False)  # the V1 runner offloads
    assert full - v1 == 29 * LAYER + QKV + O_PROJ + GATE_UP and not any("offloader" in w for w in warnings)
    full28, _ = _loaded("0.28.0", 0.0)
    moved28, _ = _loaded("0.28.0", 12.0)
    assert full28 - moved28 == 29 * LAYER + QKV + O_PROJ + GATE_UP
