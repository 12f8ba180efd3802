"""SGLang runs that allocate their KV pool, then die capturing CUDA graphs: public logs kept as fixtures under
tests/fixtures/engine_logs/sglang/deaths/ (each with its URL; the figures below are the logs', never oomkit's).

Held against each log: the weights one rank loads (3 %), the KV pool one rank allocates (K + V, within 3 % of the
GPU's memory; from the free memory the log prints before the weights, and end to end from the GPU's size), the
per-token layout (K size at the printed #tokens, to SGLang's two decimals) and the start-up verdict (the phase that
dies). None of these logs was used to fit a constant: every figure is held out. Where oomkit misses, the case is a
strict xfail with the measured error (tests/test_vllm_startup.py check_known / known_params).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from oomkit.engines import sglang as sg
from oomkit.engines.sglang.layout import PRE_LOAD_OVERHEAD
from oomkit.hardware.catalog import with_facts
from oomkit.memory import Device
from oomkit.units import GiB, MiB
from tests.test_vllm_startup import LIMIT, check_known, check_share, known_params, spec_of

FIXTURES = Path(__file__).parent / "fixtures" / "engine_logs" / "sglang" / "deaths"
H100 = ("NVIDIA H100 80GB HBM3", 81559 * MiB)


def fixture(stem: str) -> dict:
    return json.loads((FIXTURES / f"{stem}.json").read_text(encoding="utf-8"))


# stem -> (catalog model, GPU (name, bytes), the settings the log shows)
LOGS = {
    # sglang#39713: Qwen3-0.6B on an idle H100, bare engine defaults (mem_fraction_static 0.83 as the PR states),
    # SGLang main of September 2026: KV pool allocated, then out of memory in the breakable prefill-graph capture
    "qwen3-0.6b-h100-prefill-capture-oom-pr39713": (
        "qwen3-0.6b", H100, sg.SGLangSettings(engine_version="0.5.23", mem_fraction_static=0.83)),
}

# The weights, a known miss before: 1.11 GiB of parameters (tied embeddings) against the 1.18 GB the PR annotates
# (-5.9 %). SGLang's 'Load weight end ... mem usage' is the free memory lost across load_model (get_available_gpu_memory
# empties PyTorch's cache both times), so it holds the caching allocator's segments, not the parameters' bytes: the
# 1-10 MiB fused projections carved from 20 MiB segments and the embedding's rounding to 2 MiB
# (engines/sglang/weights.py rank_weights, vllm/allocator.py reserved_for) give 1.17 GiB (-1.02 %), and
# RotaryEmbedding's cos_sin_cache, built with the model and float32 on CUDA (40,960 x 128 x 4 B = 20 MiB;
# weights.py rope_cache_bytes), 1.1875 GiB (+0.64 %).
KNOWN: dict[tuple[str, str], str] = {
    ("qwen3-0.6b-h100-prefill-capture-oom-pr39713", "pool"):
        "from the log's 77.24 GB free before the weights and mem_fraction_static 0.83: oomkit's pool 589,814 tokens "
        "(K + V 63.00 GiB) vs 556,202 (59.40 GB): +3.59 GiB, +4.5 % of the GPU. September 2026 main sizes the pool as "
        "the free memory at the profile less pre_model_load_memory x (1 - mem_fraction_static) "
        "(mem_cache/kv_cache_configurator.py KVCacheConfigurator._profile_available_bytes; pre_model_load_memory is "
        "distributed/bootstrap.py init_torch_distributed's free memory, before 'Load weight begin'), divided by the "
        "K + V cell with no bias (model_executor/pool_configurator.py DefaultPoolConfigurator.calculate_pool_sizes): "
        "556,202 tokens need 59.41 GiB, so the profile saw 72.54 GB free, 3.52 GB less than after the weights "
        "(77.24 - 1.18 = 76.06). The source allocates nothing that size in between for a dense TP-1 text model: after "
        "'Load weight end' load_model only pre-expands the RoPE cache (reserve_rope_cache_for_long_sequences, 40,964 "
        "positions), initialize() then runs prepare_moe_topk (MoE only), the LoRA manager (off) and "
        "configure_kv_cache_dtype; Scheduler.init_model_worker goes init_tp_model_worker -> maybe_init_draft_worker "
        "(none) -> init_memory_pools; the sampler is built before 'Load weight begin' (create_sampler), so "
        "whatever it holds is already out of the 77.24 GB, and the attention backends' workspaces and the eager/prefill/decode graph runners' batch buffers come "
        "after the pool (init_all_attention_backends, init_all_cuda_graphs); "
        "mm_runtime_reservation_gb is 0 for a text model and the Mamba / post-capture slack is for hybrid models only. "
        "Even with pre_model_load_memory at the whole card (79.65 GiB) 3.1 GB stays unexplained, and the pool phase "
        "lost 0.99 GB beyond K + V where _init_pools allocates only req_to_token (4,096 rows x 40,964 int32, 0.625 "
        "GiB) and the allocator's index arrays (4 MiB): both gaps look like memory taken on the card outside the "
        "worker's own start-up, which the log does not show; kept as a known miss",
    ("qwen3-0.6b-h100-prefill-capture-oom-pr39713", "pool end to end"):
        "on an H100 (81,559 MiB) at mem_fraction_static 0.83: oomkit 602,305 tokens (K + V 64.33 GiB, 78.85 GB free "
        "before the weights) vs 556,202 (59.40 GB, 77.24 GB free): +4.94 GiB, +6.2 % of the GPU; 1.61 GB of the "
        "difference is the free memory before the weights (the CI worker's CUDA context and whatever else held the "
        "card), the rest the 3.6 GiB of the 'pool' miss (3.5 GB held at the profile that SGLang's start-up does not "
        "allocate)",
    ("qwen3-0.6b-h100-prefill-capture-oom-pr39713", "verdict"):
        "the log dies in the prefill CUDA-graph capture (breakable backend, 58 sizes to 8,192, largest first); "
        "oomkit: starts, with 1.09 GiB of prefill graphs and 10.79 GB left (from the log's free memory). The log's capture progress: the 8,192-"
        "token size took 5.53 GB, the next five (33,280 tokens) 2.81 GB, the next ten (35,456) 2.24 GB, the next ten "
        "(11,840) 0.49 GB, out of memory at the 26th size with 0.01 GB left: about 11.5 GB for 26 graphs, 10x oomkit's "
        "piecewise rule (engines/sglang/phases.py prefill_graph_bytes, fitted on vLLM 0.19's piecewise graphs). The "
        "shape (about 5 GB for the first size, then 88 -> 66 -> 43 KB a captured token, 28 layers x 1-1.5 bf16 rows "
        "of hidden 1,024) suggests each breakable segment's outputs stay in the graph pool per size (all sizes share one pool: "
        "runner_backend/breakable_cuda_graph_backend.py takes get_or_create_global_graph_memory_pool, so the growth fits "
        "what each size keeps live across its eager attention breaks, not a pool per size); one log does not fit that "
        "rule, so it stays a known miss",
}


def _check(stem: str, figure: str, ok: bool, message: str) -> None:
    check_known(KNOWN, stem, figure, ok, message)


def _params(figure: str) -> list:
    return known_params(KNOWN, LOGS, figure)


def _gpu(stem: str, memory: int | None = None) -> tuple[Device, ...]:
    _, (name, size), s = LOGS[stem]
    return tuple(with_facts(Device(f"CUDA{i}", name, memory or size)) for i in range(s.tp_size * s.pp_size))


def estimate(stem: str, from_printed_free: bool = False):
    """oomkit's estimate on the log's GPU; from_printed_free: a GPU whose free memory before the weights is the
    log's 'Load weight begin. avail mem' (oomkit charges PRE_LOAD_OVERHEAD before the weights)."""
    model, _, s = LOGS[stem]
    fx = fixture(stem)
    memory = fx["printed"]["weights_avail_before_bytes"] + PRE_LOAD_OVERHEAD if from_printed_free else None
    return fx, sg.ENGINE.estimate(spec_of(model), _gpu(stem, memory), s)


def _pool_bytes(est) -> int:
    return est.engine_view["phases"][[p["phase"] for p in est.engine_view["phases"]].index("KV cache pool")]["bytes"]


@pytest.mark.parametrize("stem", _params("weights"))
def test_weights_per_rank(stem):
    fx, est = estimate(stem)
    got = next(p["bytes"] for p in est.engine_view["phases"] if p["phase"] == "weights")
    logged = fx["printed"]["weights_mem_bytes"]
    check_share(_check, stem, "weights", got, logged, logged, "weights")


@pytest.mark.parametrize("stem", _params("layout"))
def test_k_size_at_the_printed_tokens(stem):
    # the pool's per-token layout alone: SGLang's K size at the printed #tokens, to its two decimals
    model, _, s = LOGS[stem]
    fx = fixture(stem)
    spec = spec_of(model)
    lay = sg.cache_layout(spec, s)
    pool = sg.kv_pools(lay, s, fx["printed"]["kv_cache_tokens"])[0]
    got = f"{pool.k_bytes / GiB:.2f}", f"{pool.v_bytes / GiB:.2f}"
    _check(stem, "layout", got == (fx["printed"]["k_size_gb"], fx["printed"]["v_size_gb"]),
           f"{stem}: K, V {got} vs {fx['printed']['k_size_gb']}, {fx['printed']['v_size_gb']} GB")


def _pool_check(stem: str, figure: str, from_printed_free: bool) -> None:
    fx, est = estimate(stem, from_printed_free)
    logged = fx["printed"]["k_size_bytes"] + fx["printed"]["v_size_bytes"]
    got = _pool_bytes(est)
    err = (got - logged) / _gpu(stem)[0].memory_bytes
    _check(stem, figure, abs(err) < LIMIT,
           f"{stem}: KV pool {err:+.2%} of the GPU ({got / GiB:.2f} vs {logged / GiB:.2f} GiB; "
           f"{est.engine_view['max_total_num_tokens']:,} vs {fx['printed']['kv_cache_tokens']:,} tokens)")


@pytest.mark.parametrize("stem", _params("pool"))
def test_kv_pool_from_the_printed_free_memory(stem):
    _pool_check(stem, "pool", True)


@pytest.mark.parametrize("stem", _params("pool end to end"))
def test_kv_pool_end_to_end(stem):
    _pool_check(stem, "pool end to end", False)


def _verdict(fx: dict, est) -> tuple[str, str]:
    logged = f"dies in {fx['printed']['failed_phase']}" if fx["printed"].get("failed_phase") else "starts"
    phase = (est.engine_view.get("failed_phase") or {}).get("phase")
    got = f"dies in {phase}" if phase else ("starts" if est.fits is not False else f"error: {est.engine_view.get('error')}")
    return logged, got


@pytest.mark.parametrize("stem", _params("verdict"))
def test_start_up_verdict_agrees_with_the_log(stem):
    fx, est = estimate(stem, from_printed_free=True)
    logged, got = _verdict(fx, est)
    _check(stem, "verdict", got == logged, f"{stem}: the log {logged}, oomkit: {got}")


def test_prefill_sizes_are_the_logged_58_to_8192():
    # "num_tokens=[4 … 8192]  (58 buckets)": the breakable backend's sizes, as oomkit lists them in its capture line
    fx, est = estimate("qwen3-0.6b-h100-prefill-capture-oom-pr39713", from_printed_free=True)
    line = next(x for x in est.engine_view["log"].split("\n") if x.startswith("Capture target prefill CUDA graph begin"))
    sizes = [int(t) for t in line.split("num_tokens=[")[1].split("]")[0].split(", ")]
    assert "backend=breakable" in line
    assert (len(sizes), sizes[0], sizes[-1]) == (fx["printed"]["prefill_capture_sizes"], 4, 8192)


def test_the_pool_is_allocated_before_the_capture_dies():
    # the log's order: 'KV Cache allocated', 'Memory pool end', then the prefill capture; oomkit's phases keep it
    fx, est = estimate("qwen3-0.6b-h100-prefill-capture-oom-pr39713", from_printed_free=True)
    names = [p["phase"] for p in est.engine_view["phases"]]
    assert names.index("KV cache pool") < names.index("prefill CUDA graph capture") < names.index("CUDA graph capture")


def test_a_bounded_budget_starts():
    # the PR's fix: a bounded memory budget (a lower mem_fraction_static) and no prefill graph; oomkit agrees that
    # without the prefill graphs the run starts with room left
    model, gpu, s = LOGS["qwen3-0.6b-h100-prefill-capture-oom-pr39713"]
    est = sg.ENGINE.estimate(spec_of(model), _gpu("qwen3-0.6b-h100-prefill-capture-oom-pr39713"),
                             replace(s, mem_fraction_static=0.7, disable_piecewise_cuda_graph=True))
    assert est.fits is True
    assert "prefill CUDA graph capture" not in [p["phase"] for p in est.engine_view["phases"]]
