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


def test_memoised_weights_follow_every_setting_they_read():
    """weights_by_global_rank and the offloader's parameter order are memoised by what they read: a memo filled by
    one setting never answers for another (-q fp8, TP, expert parallelism, a version on either side of an era),
    and a fit's contexts and utilisations, which move no weight, share one entry."""
    from oomkit.engines.vllm import weights
    from oomkit.engines.vllm.config import resolve

    spec = catalog_spec("qwen3-30b-a3b")
    runs = [VllmSettings(engine_version=v, tensor_parallel_size=tp, quantization=q, enable_expert_parallel=ep,
                         max_model_len=n, gpu_memory_utilization=u)
            for v in ("0.10.0", "0.17.1") for tp in (1, 2) for q in (None, "fp8") for ep in (False, True)
            for n, u in ((8192, 0.9), (32768, 0.8))]
    devices = (H100, H100)
    got = []
    for s in runs + runs:
        r = resolve(spec, devices, s)
        cached = weights.weights_by_global_rank(spec, s, r)
        assert cached == weights._weights_by_global_rank(spec, s, r), s
        assert weights._params_in_order(spec, s, r, (0, 24), 0) == weights._params_in_order(spec, s, r, (0, 24), 0)
        got.append(tuple(cached))
    # TP and -q fp8 move the weights (4 layouts); the context, the utilisation and, at TP 2 over 128 experts,
    # expert parallelism do not
    assert len(set(got)) == 4
