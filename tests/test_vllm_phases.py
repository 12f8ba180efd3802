"""vLLM's start-up phases after the KV budget (CUDA-graph capture, the sampler warm-up) and the per-token
figures, held against public start-up logs (tests/fixtures/engine_logs/vllm/, each with its URL).

Fitted constants and the logs they were fitted on (engines/vllm/phases.py):
  CG_ONE_OFF_HOPPER + FlashAttention 3's split buffers (read from the source) + CG_PER_GRAPH_LAYER x the rank's
  layers per graph (x sqrt(largest size / 512)), V1: the v0.19.0 runs (gemma-2-2b/9b/27b, gemma-3-4b/12b/27b,
  Llama-3.3-70B FP8 TP2); CG_MOE_LAYER_EXTRA (a MoE layer's extra share): gpt-oss-20b TP1; the one-off elsewhere by SM
  count (CG_FIRST_PER_SM): the DGX Spark Qwen3.6-27B log, less FlashInfer's 394 MiB workspace (read from the source,
  FLASHINFER_WORKSPACE), and the RTX 5090 0.20.2 run (five graphs); held out in tests/test_vllm_cudagraph.py;
  CG_GRAPH_BASE + CG_GRAPH_PER_HIDDEN x hidden per graph (V0, and SGLang's piecewise graphs): the same v0.19.0 runs
  and gpt-oss-20b TP1, before V1's first capture was split off;
  SAMPLER_WARMUP_FACTOR (MXFP4 Triton MoE, 1.62): bounded below by gpt-oss-20b TP1 (died with 4.48 GiB free);
  SAMPLER_WARMUP_FACTOR_DENSE (every other model, 1.35): bounded above by Llama-4-Scout TP4 (started with 3.95 GiB
  free) and Llama-3.3-70B FP8 TP2 (2.61 GiB); both on the Triton / FlashInfer top-k/top-p. On the PyTorch sort (V1
  before 0.17) SAMPLER_WARMUP_FACTOR_SORT is 1.0, read from the 0.11.0 source, not fitted: gpt-oss-120b on 0.11
  (tests/test_vllm_heldout2.py, started) held out;
  NCCL_GRAPH_PER_ALLREDUCE (0.49 MiB per all-reduce captured through NCCL, TP > 2 without NVLink): vllm#7553
  (4 x RTX 4090, TP 4, V0 0.5.4, 2464 MiB of graphs); vllm#17469 and vllm#15598 held out (test_vllm_startup.py);
  0 from vLLM 0.9 (torch 2.7, NCCL 2.26: a captured all-reduce's work in the kernel arguments, NCCL >= 2.22), not
  fitted: djl-serving#3055 (0.22 / 0.23, NCCL 2.28.9) held out (test_vllm_more_logs.py);
  the other verdicts are held out.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from oomkit.engines.vllm import CUDA_DRIVER_RESERVED, ENGINE, VllmSettings
from oomkit.engines.vllm.config import resolve
from oomkit.engines.vllm.phases import (
    CG_GRAPH_BASE,
    CG_GRAPH_PER_HIDDEN,
    NCCL_GRAPH_PER_ALLREDUCE,
    SAMPLER_WARMUP_FACTOR,
    SAMPLER_WARMUP_FACTOR_DENSE,
    capture_sizes,
    graph_count,
    nccl_graph_bytes,
)
from oomkit.hardware.catalog import with_facts
from oomkit.memory import Device
from oomkit.model.catalog import lookup
from oomkit.model.hf_config import spec_from_config
from oomkit.model.resolve import resolve as resolve_model
from oomkit.units import GiB, MiB

FIXTURES = Path(__file__).parent / "fixtures" / "engine_logs" / "vllm"
H100 = with_facts(Device("CUDA0", "NVIDIA H100 80GB HBM3", 81559 * MiB))

# fixture -> catalog model; the logs of the llm-d v0.19.0 sweep that carry the post-KV phases
PHASE_LOGS = {
    "llmd-gpt-oss-20b-h100-v0.19-tp1-util095-sampler-fail": "gpt-oss-20b",
    "llmd-gpt-oss-20b-h100-v0.19-tp2-util095-sampler-fail": "gpt-oss-20b",
    "llmd-gpt-oss-20b-h100-v0.19-tp2-util090": "gpt-oss-20b",
    "llmd-gemma-3-27b-it-h100-v0.19-multimodal-swa": "gemma-3-27b-it",
    "vllm-eng-gemma-2-9b-h100-v0.19-swa": "gemma-2-9b-it",
    "llmd-gemma-3-12b-it-h100-v0.19-multimodal-swa": "gemma-3-12b-it",
    "llmd-gemma-3-4b-it-h100-v0.19-multimodal-swa": "gemma-3-4b-it",
    "llmd-gemma-2-27b-it-h100-v0.19-swa": "gemma-2-27b-it",
    "llmd-gemma-2-2b-it-h100-v0.19-swa": "gemma-2-2b-it",
    "llmd-llama-3.3-70b-fp8-dynamic-h100-v0.19-tp2": "llama-3.3-70b-instruct",
    "llmd-gemma-7b-h100-v0.19": "gemma-7b",
    "llmd-llama-4-scout-h100-v0.19-tp4": "llama-4-scout-17b-16e-instruct",
    "llmd-qwen2.5-7b-fp8-dynamic-h100-v0.19": "qwen2.5-7b-instruct",
    "llmd-phi-2-h100-v0.19-2048": "phi-2",
    "llmd-llama-3.3-70b-fp8-dynamic-h100-v0.19-tp4": "llama-3.3-70b-instruct",
    "llmd-qwen2.5-7b-w8a8-h100-v0.19": "qwen2.5-7b-instruct",
    "llmd-qwen1.5-moe-a2.7b-h100-v0.19": "Qwen/Qwen1.5-MoE-A2.7B",
    "llmd-codellama-7b-h100-v0.19": "codellama/CodeLlama-7b-hf",
    "llmd-granite-3.1-2b-h100-v0.19": "ibm-granite/granite-3.1-2b-instruct",
    "llmd-mistral-small-3.1-24b-w8a8-h100-v0.19": "mistral-small-3.1-24b-instruct-2503",
    "llmd-mistral-small-3.1-24b-w8a8-h100-v0.19-tp2": "mistral-small-3.1-24b-instruct-2503",
    "llmd-llama-3.1-8b-h100-v0.19-16384": "llama-3.1-8b-instruct",
}
# what the checkpoint's quantization_config amounts to in vLLM (fixture notes)
EXTRA = {"llmd-llama-3.3-70b-fp8-dynamic-h100-v0.19-tp2": {"quantization": "fp8"},
         "llmd-qwen2.5-7b-fp8-dynamic-h100-v0.19": {"quantization": "fp8"},
         "llmd-llama-3.3-70b-fp8-dynamic-h100-v0.19-tp4": {"quantization": "fp8"},
         "llmd-qwen2.5-7b-w8a8-h100-v0.19": {"quantization": "fp8"},  # int8 W8A8: the same bytes
         "llmd-mistral-small-3.1-24b-w8a8-h100-v0.19": {"quantization": "fp8"},
         "llmd-mistral-small-3.1-24b-w8a8-h100-v0.19-tp2": {"quantization": "fp8"}}


@pytest.mark.parametrize("stem", sorted(EXTRA))
def test_fp8_dynamic_checkpoints_load_as_online_fp8(stem):
    # compressed-tensors FP8-dynamic (and INT8 W8A8): 1-byte linear weights, bf16 embeddings / lm_head / norms
    fx = fixture(stem)
    v = ENGINE.estimate(spec_of(PHASE_LOGS[stem]), devices_of(fx), settings_of(fx)).engine_view
    got, logged = v["model_loading_bytes"]["CUDA0"], fx["printed"]["model_loading_bytes"]
    assert abs(got - logged) / logged < 0.03, (got / GiB, logged / GiB)


def spec_of(name: str):
    entry = lookup(name)
    assert entry is not None, name
    return spec_from_config(entry.config, name=entry.name)


def fixture(stem: str) -> dict:
    return {**json.loads((FIXTURES / f"{stem}.json").read_text(encoding="utf-8")), "_stem": stem}


def settings_of(fx: dict, **kw) -> VllmSettings:
    st = fx["settings"]
    kw = {**EXTRA.get(fx.get("_stem", ""), {}), **kw}
    return VllmSettings(engine_version=fx["engine_version"], tensor_parallel_size=st["tensor_parallel_size"],
                        max_model_len=st["max_model_len"], gpu_memory_utilization=st["gpu_memory_utilization"],
                        enable_prefix_caching=st["enable_prefix_caching"], **kw)


def devices_of(fx: dict) -> tuple[Device, ...]:
    total = fx["printed"]["total_gpu_memory_bytes"] + CUDA_DRIVER_RESERVED
    return tuple(with_facts(Device(f"CUDA{i}", "NVIDIA H100 80GB HBM3", total))
                 for i in range(fx["settings"]["tensor_parallel_size"]))


# ---------------------------------------------------------------------------------------------------------
# Per-token figures: a KV budget divided by kv_bytes_per_token is the engine's own capacity


@pytest.mark.parametrize("stem, tokens", [
    ("llmd-gemma-3-27b-it-h100-v0.19-multimodal-swa", 36560),  # "GPU KV cache size: 36,560 tokens"
    ("vllm-eng-gemma-2-9b-h100-v0.19-swa", 168880),  # "GPU KV cache size: 168,880 tokens"
    ("llmd-gpt-oss-20b-h100-v0.19-tp2-util090", 323972 // 2 * 16),  # num_gpu_blocks 323,972, two groups
])
def test_budget_over_kv_bytes_per_token_is_the_logged_capacity(stem, tokens):
    fx = fixture(stem)
    budget = fx["printed"]["available_kv_cache_bytes"]
    est = ENGINE.estimate(spec_of(PHASE_LOGS[stem]), devices_of(fx), settings_of(fx, kv_cache_memory_bytes=budget))
    ranks = fx["settings"]["tensor_parallel_size"]
    capacity = ranks * budget / est.kv_bytes_per_token
    assert abs(capacity - tokens) / tokens < 0.005, (capacity, tokens)
    # the marginal figure (full-attention layers only) overstates the capacity of these hybrid models
    overstated = ranks * budget / est.kv_bytes_per_token_marginal
    assert overstated > 1.9 * tokens


def test_gemma_3_27b_charges_seven_groups_per_token():
    # 10 full + 52 sliding layers: groups of 10, 6 sliding groups (8 padding layers) + 1 full; each token of the
    # printed capacity takes a 16 x 131,072 B page in each of the 7 groups' 10 layers: 7 x 10 x 131,072 / 16 x 16
    est = ENGINE.estimate(spec_of("gemma-3-27b-it"), (H100,), VllmSettings(
        engine_version="0.19.0", max_model_len=8192, kv_cache_memory_bytes=20 * GiB))
    per_layer = 16 * 128 * 2 * 2  # 16 KV heads x 128 x (K, V) x 2 B
    assert est.kv_bytes_per_token == 7 * 10 * per_layer
    assert est.kv_bytes_per_token_marginal == 10 * per_layer
    assert est.to_dict()["kv_bytes_per_token_marginal"] == 10 * per_layer


def test_newest_release_charges_per_max_model_len():
    # 0.21+: "GPU KV cache size" = int(max_concurrency x max_model_len): at 128k a gpt-oss request pays its 12
    # full layers for every token and its sliding layers only for the window + one batch
    spec = spec_of("gpt-oss-20b")
    short = ENGINE.estimate(spec, (H100,), VllmSettings(max_model_len=8192, kv_cache_memory_bytes=20 * GiB))
    long = ENGINE.estimate(spec, (H100,), VllmSettings(max_model_len=131072, kv_cache_memory_bytes=20 * GiB))
    for est in (short, long):
        assert abs(20 * GiB / est.kv_bytes_per_token - est.engine_view["kv_cache_tokens"]) <= 16
    assert long.kv_bytes_per_token < short.kv_bytes_per_token
    assert short.kv_bytes_per_token_marginal == long.kv_bytes_per_token_marginal == 12 * 8 * 64 * 2 * 2  # 8 KV heads x 64


# ---------------------------------------------------------------------------------------------------------
# CUDA graphs and the sampler warm-up, by hand


def test_capture_sizes_by_release():
    spec = spec_of("llama-3.1-8b-instruct")
    r19 = resolve(spec, (H100,), VllmSettings(engine_version="0.19.0"))
    assert len(capture_sizes(spec, VllmSettings(engine_version="0.19.0"), r19)) == 51  # "PIECEWISE=51 (largest=512)"
    assert graph_count(spec, VllmSettings(engine_version="0.19.0"), r19) == (51, 51)
    r11 = resolve(spec, (H100,), VllmSettings(engine_version="0.11.0"))
    assert len(capture_sizes(spec, VllmSettings(engine_version="0.11.0"), r11)) == 67  # llm-d/llm-d#787: 67 + 67
    gpt = spec_of("gpt-oss-20b")
    rg = resolve(gpt, (H100,), VllmSettings(engine_version="0.19.0"))
    assert capture_sizes(gpt, VllmSettings(engine_version="0.19.0"), rg)[-1] == 1024  # 83 sizes, to 1024
    assert len(capture_sizes(gpt, VllmSettings(engine_version="0.19.0"), rg)) == 83
    assert capture_sizes(spec, VllmSettings(enforce_eager=True), r19) == ()


def test_graph_flags():
    # -O0 captures nothing (0.11+); --compilation-config cudagraph_mode / cudagraph_capture_sizes and
    # --cudagraph-capture-sizes choose the graphs (config/compilation.py CompilationConfig)
    from oomkit.engines.cmdline import parse_command

    spec = spec_of("qwen3-8b")

    def graphs(*flags):
        s = parse_command(["vllm", "serve", "Qwen/Qwen3-8B", *flags], env={}).settings
        v = ENGINE.estimate(spec, (H100,), s).engine_view
        return v["cudagraph_piecewise_graphs"], v["cudagraph_full_graphs"], v["cudagraph_bytes"]["CUDA0"]

    assert graphs()[:2] == (51, 51)
    assert graphs("-O0") == (0, 0, 0)
    assert graphs("--compilation-config", '{"cudagraph_mode": "FULL_DECODE_ONLY", "cudagraph_capture_sizes": [1, 2, 4, 8]}')[:2] == (0, 4)
    assert graphs("--cudagraph-capture-sizes", "1", "2", "4", "8", "16")[:2] == (5, 5)
    assert graphs("--compilation-config", '{"cudagraph_mode": "PIECEWISE"}')[:2] == (51, 0)


def test_sampler_warm_up_is_logits_rows_by_vocabulary():
    # 1024 requests x 201,088 vocabulary: the bf16 logits, their float32 copy, the probabilities and random_sample's
    # float32 noise (2 + 12 B per element), and the Triton top-k/top-p kernel's cached float32 scratch of one row per
    # SM (132 on an H100, whatever the rows beyond that), times the warm-up factor
    spec = spec_of("gpt-oss-20b")
    v = ENGINE.estimate(spec, (H100,), VllmSettings(engine_version="0.19.0", max_model_len=8192)).engine_view
    assert v["sampler_warmup_requests"] == 1024
    scratch = 4 * 132 * 201088
    assert v["sampler_warmup_bytes"] == int(SAMPLER_WARMUP_FACTOR * (1024 * 201088 * 14 + scratch))  # MXFP4 MoE
    half = ENGINE.estimate(spec, (H100,), VllmSettings(engine_version="0.19.0", max_model_len=8192,
                                                       max_num_seqs=512)).engine_view
    assert half["sampler_warmup_bytes"] == int(SAMPLER_WARMUP_FACTOR * (512 * 201088 * 14 + scratch))


def test_sampler_warm_up_by_sampler_path():
    # the warm-up repeats the profile's _dummy_sampler_run (0.11.0 gpu_worker.py compile_or_warm_up_model). On the
    # PyTorch sort (V1 before 0.17, FlashInfer's sampler not opted in) it needs the sampler's allocated peak, the
    # profile's 36 + 2 B per (row x vocabulary) element (profile.py SAMPLER_BYTES_SORT), and nothing beside it: the sort's
    # freed temporaries serve every later tensor. FlashInfer's sampler, or the Triton kernel from 0.17, keep the
    # fragmentation factor the 0.19 logs bound (gpt-oss-120b on 0.11: tests/test_vllm_heldout2.py)
    spec = spec_of("qwen3-8b")

    def view(version, **kw):
        return ENGINE.estimate(spec, (H100,), VllmSettings(engine_version=version, max_model_len=8192, **kw)).engine_view

    rows = 1024 * spec.n_vocab
    sort = view("0.15.0")
    assert sort["sampler_warmup_requests"] == 1024
    assert sort["sampler_warmup_bytes"] == rows * 38
    assert sort["activation_peak_bytes"]["CUDA0"] >= sort["sampler_warmup_bytes"]  # the profile ran the same pass
    light = rows * 14  # the float32 copy and two float32 tensors of its shape beside the bf16 logits
    assert view("0.15.0", use_flashinfer_sampler=True)["sampler_warmup_bytes"] == int(SAMPLER_WARMUP_FACTOR_DENSE * light)
    scratch = 4 * 132 * spec.n_vocab  # the Triton kernel's cached scratch, one row per H100 SM
    assert view("0.17.0")["sampler_warmup_bytes"] == int(SAMPLER_WARMUP_FACTOR_DENSE * (light + scratch))


def test_budget_membership_by_release():
    spec = spec_of("llama-3.1-8b-instruct")
    for version, inside in (("0.19.0", False), ("0.21.0", True)):
        v = ENGINE.estimate(spec, (H100,), VllmSettings(engine_version=version, max_model_len=8192)).engine_view
        by_name = {p["phase"]: p for p in v["phases"]}
        assert by_name["CUDA graph capture"]["in_budget"] is inside
        assert by_name["sampler warm-up"]["in_budget"] is False and by_name["sampler warm-up"]["transient"]
        assert by_name["CUDA context"]["in_budget"] is False and by_name["weights"]["in_budget"] is True
    eager = ENGINE.estimate(spec, (H100,), VllmSettings(engine_version="0.19.0", enforce_eager=True)).engine_view
    assert "CUDA graph capture" not in {p["phase"] for p in eager["phases"]}


def test_pipeline_parallel_warm_up_on_the_last_stage_only():
    spec = spec_of("llama-3.1-8b-instruct")
    v = ENGINE.estimate(spec, (H100, H100), VllmSettings(engine_version="0.19.0", pipeline_parallel_size=2,
                                                         max_model_len=8192)).engine_view
    warm = {p["device"] for p in v["phases"] if p["phase"] == "sampler warm-up"}
    assert warm == {"CUDA1"}


# ---------------------------------------------------------------------------------------------------------
# The logs: the CUDA-graph pool, and whether the run starts


# the graph pool of Qwen1.5-MoE-A2.7B (hidden 2048, 24 layers of 60 experts, top-4, a shared expert) on the Triton
# fused-MoE kernels is under-predicted: it takes 1.10 GiB, the rule 0.80 GiB (-28 %: the 152 MiB one-off, 130 MiB of
# FlashAttention 3 split buffers, 102 graphs x 24 MoE layers x 1.55 x 144.1 KiB); kept visible, not fitted. What it is
# not, read in the source: the fused-MoE temporaries. In 0.8.x fused_moe.py fused_experts_impl takes them per call
# (cache13 of M x top_k x max(N, K), cache2 of M x top_k x N / 2: 16.5 MiB at M = 512, freed inside each graph and
# shared through the one graph pool, largest size first); from 0.21 the modular kernels take them from one global
# buffer (v1/worker/workspace.py WorkspaceManager, grown by the profile run at max_num_batched_tokens and locked after
# capture_model, lock_workspace), so not in the capture at all. vLLM's own estimate (profile_cudagraph_memory, the two
# largest graphs of each mode extrapolated) printed 0.82 GiB here, 0.28 below what capture_model took; oomkit's 0.79
CG_KNOWN_MISSES = {"llmd-qwen1.5-moe-a2.7b-h100-v0.19": (
    "Triton fused-MoE graph memory under-predicted: 0.80 vs 1.10 GiB (-28 %; 0.70 and -36.6 % before phases.py's "
    "share per graph and layer, a MoE layer 1.55 layers as gpt-oss-20b TP1 gives); vllm#50722's Qwen3.5-35B-A3B "
    "(tests/test_vllm_cudagraph.py) is short by more still")}


@pytest.mark.parametrize("stem", [pytest.param(k, marks=pytest.mark.xfail(reason=CG_KNOWN_MISSES[k], strict=True))
                                  if k in CG_KNOWN_MISSES else k for k in sorted(PHASE_LOGS)])
def test_cuda_graph_pool_against_the_log(stem):
    fx = fixture(stem)
    took = fx["printed"].get("cudagraph_actual_bytes")
    if took is None:
        pytest.skip("the fixture does not carry the 'Graph capturing finished' line")
    v = ENGINE.estimate(spec_of(PHASE_LOGS[stem]), devices_of(fx), settings_of(fx)).engine_view
    err = (v["cudagraph_actual_bytes"] - took) / took
    # one rule for every model: -15 % .. +14 % on the logs it was fitted on, -21 % .. +13 % on the others
    assert abs(err) < 0.25, f"{stem}: {err:+.1%}"


@pytest.mark.parametrize("stem", sorted(PHASE_LOGS))
def test_starts_then_dies_verdict_agrees_with_the_log(stem):
    fx = fixture(stem)
    dies = fx["printed"].get("failed_phase")
    est = ENGINE.estimate(spec_of(PHASE_LOGS[stem]), devices_of(fx), settings_of(fx))
    v = est.engine_view
    if dies:
        assert est.fits is False
        assert v["failed_phase"]["phase"] == dies and v["failed_phase"]["after_kv"]
        assert v["error"].startswith("KV cache allocated, then the sampler warm-up needs ")
        assert "lower --max-num-seqs to " in v["error"] and "--gpu-memory-utilization to " in v["error"]
        assert "warming up sampler with 1024 dummy requests" in v["log"]
        assert "Graph capturing finished in N secs, took " in v["log"]
        # the fixes it names do start
        for fix in v["fixes"]:
            if "max-num-seqs" in fix:
                n = int(fix.rsplit(" ", 1)[1])
                assert ENGINE.estimate(spec_of(PHASE_LOGS[stem]), devices_of(fx),
                                       settings_of(fx, max_num_seqs=n)).fits is True
    else:
        assert est.fits is True, v.get("error")
        assert v["failed_phase"] is None


def test_free_memory_before_the_warm_up_against_the_log():
    # what the log's own figures leave before the warm-up (free at init - weights - non-torch - KV - graphs) and
    # what oomkit predicts for the same run, within 1 GiB
    for stem in ("llmd-gpt-oss-20b-h100-v0.19-tp1-util095-sampler-fail", "llmd-gpt-oss-20b-h100-v0.19-tp2-util090",
                 "llmd-gemma-3-27b-it-h100-v0.19-multimodal-swa"):
        fx = fixture(stem)
        p = fx["printed"]
        logged = p["init_free_memory_bytes"] - p["model_loading_bytes"] - p["non_torch_increase_bytes"] - \
            p["available_kv_cache_bytes"] - p["cudagraph_actual_bytes"]
        v = ENGINE.estimate(spec_of(PHASE_LOGS[stem]), devices_of(fx), settings_of(fx)).engine_view
        ours = next(x for x in v["phases"] if x["device"] == "CUDA0" and x["phase"] == "CUDA graph capture")
        assert abs(ours["free_after_bytes"] - logged) < 1 * GiB, (stem, ours["free_after_bytes"] / GiB, logged / GiB)


@pytest.mark.parametrize("stem", [k for k in sorted(PHASE_LOGS) if "gpt-oss" in k])
def test_mxfp4_weights_per_rank(stem):
    # "Model loading took" of gpt-oss-20b on 0.19.0: 13.64 GiB at TP1, 7.01 GiB per rank at TP2 (MXFP4 experts as
    # the Triton kernels lay them out, each rank's slice padded)
    fx = fixture(stem)
    v = ENGINE.estimate(spec_of(PHASE_LOGS[stem]), devices_of(fx), settings_of(fx)).engine_view
    got, logged = v["model_loading_bytes"]["CUDA0"], fx["printed"]["model_loading_bytes"]
    assert abs(got - logged) / logged < 0.01, (got / GiB, logged / GiB)


@pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
    "starts with 0.24 GiB left: the warm-up needs 2.74 GiB (1.35 x the 12 B FlashInfer pass over 1,024 x 151,936 "
    "logits, profile.py SAMPLER_BYTES_FLASHINFER) and 2.98 GiB is left after the KV cache (40.47 GiB here, 41.87 "
    "printed: -1.8 % of the GPU; 40.53 before the weights' allocator tails) and the graphs (1.58 GiB). The warm-up repeats the profile's own _dummy_sampler_run "
    "(0.11.0 gpu_worker.py compile_or_warm_up_model), so its allocated peak is the profile's; this death came from "
    "the 4 B fitted before (a profile 1.16 GiB lighter than the warm-up), which the source does not hold. Not known: "
    "the GPU (not named; an H100 80GB is inferred), whether the image's FlashInfer sampler ran, and how far the "
    "capture (134 graphs, not printed) and the caching allocator's fragments went past what oomkit counts"))
def test_llm_d_787_qwen3_32b_tp2_dies_in_the_warm_up():
    # llm-d/llm-d#787 (vLLM 0.11.0, TP2, util 0.95): "KV cache allocated: 41.87 GiB per worker", then the sampler
    # warm-up with 1024 dummy requests runs out. The GPU (an 80 GB part) and the FlashInfer sampler are inferred
    # from that figure (fixture notes)
    fx = fixture("llmd-issue787-qwen3-32b-tp2-v0.11-util095-sampler-fail")
    s = VllmSettings(engine_version="0.11.0", tensor_parallel_size=2, gpu_memory_utilization=0.95,
                     use_flashinfer_sampler=True)
    est = ENGINE.estimate(spec_of("qwen3-32b"), (H100, H100), s)
    v = est.engine_view
    assert abs(v["available_kv_cache_bytes"]["CUDA0"] - fx["printed"]["available_kv_cache_bytes"]) < 0.03 * H100.memory_bytes
    assert v["cudagraph_piecewise_graphs"] + v["cudagraph_full_graphs"] == fx["printed"]["cudagraph_graphs"]
    assert est.fits is False and v["failed_phase"]["phase"] == "sampler warm-up"
    assert "lower --max-num-seqs to " in v["error"]


def test_a_run_refused_before_any_memory():
    # llm-d v0.19.0 phi-2 at --max-model-len 8192: ModelConfig refuses it (max_position_embeddings 2048)
    from oomkit.errors import OomkitError

    fx = fixture("llmd-phi-2-h100-v0.19-8192-refused-max-model-len")
    with pytest.raises(OomkitError, match=r"User-specified max_model_len \(8192\) is greater than the derived "
                                          r"max_model_len \(max_position_embeddings=2048"):
        ENGINE.estimate(spec_of("phi-2"), (H100,), VllmSettings(engine_version=fx["engine_version"],
                                                              max_model_len=fx["settings"]["requested_max_model_len"]))


def test_nccl_inside_the_graphs_fitted_on_vllm_7553():
    # vllm#7553 (ChuanhongLi, 2024-08-15): 4 x RTX 4090 (24564MiB, driver 535.54.03), vLLM 0.5.4,
    # `--served-model-name Yi-1.5-34B-Chat ... --gpu-memory-utilization 0.9 --swap-space 0 --tensor-parallel-size 4`:
    # "23859 - 21395 = 2464 MiB is consumed by the cuda grapy" (nvidia-smi with CUDA graphs vs --enforce-eager).
    # The fit of NCCL_GRAPH_PER_ALLREDUCE: V0's 35 graphs x 121 all-reduces through NCCL, plus the dense pool
    from oomkit.hardware.catalog import lookup as gpu_lookup

    g = gpu_lookup("NVIDIA GeForce RTX 4090")
    devs = tuple(with_facts(Device(f"CUDA{i}", g.name, 24564 * MiB)) for i in range(4))
    s = VllmSettings(engine_version="0.5.4", tensor_parallel_size=4, gpu_memory_utilization=0.9, swap_space=0)
    v = ENGINE.estimate(spec_of("yi-1.5-34b-chat"), devs, s).engine_view
    capture = next(p for p in v["phases"] if p["device"] == "CUDA0" and p["phase"] == "CUDA graph capture")
    assert len(v["cudagraph_capture_sizes"]) == 35
    assert abs(capture["bytes"] - 2464 * MiB) < 0.01 * 2464 * MiB, capture["bytes"] / MiB


def test_nccl_share_ends_where_vllm_ships_nccl_2_22():
    # djl-serving#3055 (tests/test_vllm_more_logs.py): Llama-3-8B-Instruct at TP 4 on four L4 (custom all-reduce off
    # beyond two PCIe GPUs), vLLM 0.22.0 (torch 2.11, NCCL 2.28.9): "35 FULL graphs", 51 + 35 in all, 65 all-reduces
    # each, and the whole capture took "0.60 GiB": at most 0.11 MiB an all-reduce, where vllm#7553 (NCCL 2.20.5)
    # took 0.49. From NCCL 2.22 a captured all-reduce's work rides in the kernel arguments (enqueue.cc finishPlan);
    # vLLM 0.9.0 is the first release whose torch (2.7.0) ships it (NCCL 2.26.2), 0.8.5's torch 2.6.0 ships 2.21.5
    fx = json.loads((FIXTURES / "deaths" / "llama-3-8b-4xl4-tp4-v0.22-v0.23-runner-v2-capture-oom-djl3055.json")
                    .read_text(encoding="utf-8"))
    run = fx["printed"]["runs"][0]
    assert run["engine_version"] == "0.22.0"
    spec = resolve_model("meta-llama/Meta-Llama-3-8B-Instruct")
    total = fx["printed"]["total_gpu_memory_bytes"] + CUDA_DRIVER_RESERVED
    devs = tuple(with_facts(Device(f"CUDA{i}", "NVIDIA L4", total)) for i in range(4))
    for version, nccl_era in (("0.8.5", True), ("0.9.0", False), ("0.22.0", False), ("0.23.1", False)):
        s = VllmSettings(engine_version=version, tensor_parallel_size=4, max_num_seqs=run["max_num_seqs"],
                         enable_chunked_prefill=True)
        r = resolve(spec, devs, s)
        share = nccl_graph_bytes(spec, s, r, spec.n_trunk_layers)
        if nccl_era:  # the NCCL 2.20 figure would take more than the whole logged capture
            assert share > run["capture_bytes"], share / GiB
        else:
            assert share == 0, (version, share / GiB)


def test_disable_custom_all_reduce_puts_nccl_in_the_graphs_at_tp2():
    # --disable-custom-all-reduce: 0.8.0's init_worker_distributed_environment calls
    # set_custom_all_reduce(not parallel_config.disable_custom_all_reduce), CudaCommunicator makes no CustomAllreduce and
    # all_reduce takes pynccl, inside the graphs too (vllm#15105, tests/test_startup_deaths_heldout.py); two GPUs
    # otherwise keep the custom all-reduce. From 0.9 (NCCL >= 2.22) a captured all-reduce allocates nothing
    from oomkit.engines.vllm.args import parse_args

    spec = resolve_model("Qwen/QwQ-32B")
    devs = tuple(with_facts(Device(f"CUDA{i}", "NVIDIA L40S", 48 * GiB)) for i in range(2))
    for version, shared in (("0.8.0", True), ("0.9.0", False)):
        _, _, s = parse_args(["serve", "Qwen/QwQ-32B", "-tp", "2", "--disable-custom-all-reduce"])
        s = replace(s, engine_version=version)
        assert s.disable_custom_all_reduce
        r = resolve(spec, devs, s)
        share = nccl_graph_bytes(spec, s, r, spec.n_trunk_layers)
        pw, full = graph_count(spec, s, r)
        assert share == (NCCL_GRAPH_PER_ALLREDUCE * (pw + full) * (2 * spec.n_trunk_layers + 1) if shared else 0)
        assert nccl_graph_bytes(spec, replace(s, disable_custom_all_reduce=False), r, spec.n_trunk_layers) == 0


def test_vllm_7553_starts():
    # vllm#7553 started (nvidia-smi 23859 of 24564 MiB with CUDA graphs, 21395 with --enforce-eager). The driver's
    # profile peak (its forward plus the sampler's 256 x 64,000 rows: profile.py v0_activation) is freed before the
    # KV cache is allocated (0.5.4 worker.py determine_num_available_blocks: gc.collect(); torch.cuda.empty_cache()),
    # so no GPU holds it beside the KV cache and the graphs: each holds its weights, non-torch memory, KV cache and
    # graphs, 24,289 MiB of 24,564 (CUDA context and the driver's reserve included)
    from dataclasses import replace

    from oomkit.hardware.catalog import lookup as gpu_lookup

    g = gpu_lookup("NVIDIA GeForce RTX 4090")
    devs = tuple(with_facts(Device(f"CUDA{i}", g.name, 24564 * MiB)) for i in range(4))
    s = VllmSettings(engine_version="0.5.4", tensor_parallel_size=4, gpu_memory_utilization=0.9, swap_space=0)
    est = ENGINE.estimate(spec_of("yi-1.5-34b-chat"), devs, s)
    assert est.fits is not False, est.engine_view.get("failed_phase")
    # what each GPU holds once started, against nvidia-smi's used memory (driver 535 leaves its reserve,
    # CUDA_DRIVER_RESERVED, out of it): 21,395 MiB with --enforce-eager (context, weights, non-torch memory, KV cache:
    # not fitted on this log) and 23,859 MiB with the graphs (whose NCCL share is fitted on the difference)
    for settings, logged in ((replace(s, enforce_eager=True), 21395 * MiB), (s, 23859 * MiB)):
        u = ENGINE.estimate(spec_of("yi-1.5-34b-chat"), devs, settings).devices[0]
        held = u.total_bytes - CUDA_DRIVER_RESERVED
        assert abs(held - logged) < 0.01 * 24564 * MiB, (held / MiB, logged / MiB)
    # the eager prefill of a full batch needs the driver's profile peak again, beside the graphs: said, not refused
    assert any("needs the profile run's" in w for w in est.warnings), est.warnings


def test_vllm_7553_phases_let_it_start():
    # the start-up verdict of tests/test_vllm_startup.py (no refusal, no phase past the GPU's memory) for vllm#7553,
    # which started: the driver's profile peak (forward plus sampler, profile.py v0_activation) sets a KV cache that
    # leaves room for the 2,464 MiB capture
    from oomkit.hardware.catalog import lookup as gpu_lookup

    g = gpu_lookup("NVIDIA GeForce RTX 4090")
    devs = tuple(with_facts(Device(f"CUDA{i}", g.name, 24564 * MiB)) for i in range(4))
    s = VllmSettings(engine_version="0.5.4", tensor_parallel_size=4, gpu_memory_utilization=0.9, swap_space=0)
    v = ENGINE.estimate(spec_of("yi-1.5-34b-chat"), devs, s).engine_view
    assert v.get("error") is None and v.get("failed_phase") is None, v.get("failed_phase")
    assert v["activation_peak_bytes"]["CUDA0"] > v["activation_peak_bytes"]["CUDA1"]


def test_nccl_inside_the_graphs_only_without_custom_all_reduce():
    # custom_all_reduce.py: on at TP 2 over PCIe (P2P) and on NVLink at any size; NCCL carries the graphs' all-reduces
    # beyond two PCIe GPUs only (0.8.5: the last release whose NCCL, 2.21.5, holds memory per captured all-reduce)
    spec = spec_of("llama-3.1-8b-instruct")
    l40s = with_facts(Device("CUDA0", "NVIDIA L40S", 46068 * MiB))
    for dev, tp, expect in ((l40s, 2, False), (l40s, 4, True), (H100, 4, False), (H100, 8, False)):
        s = VllmSettings(engine_version="0.8.5", tensor_parallel_size=tp, max_model_len=8192)
        r = resolve(spec, (dev,) * tp, s)
        got = nccl_graph_bytes(spec, s, r, spec.n_trunk_layers)
        assert (got > 0) is expect, (dev.name, tp, got)
    s = VllmSettings(engine_version="0.8.5", tensor_parallel_size=4, max_model_len=8192, enforce_eager=True)
    assert nccl_graph_bytes(spec, s, resolve(spec, (l40s,) * 4, s), 32) == 0


def test_constants_are_the_documented_ones():
    assert (CG_GRAPH_BASE, CG_GRAPH_PER_HIDDEN) == (2.91 * MiB, 1.84 * 1024)
    assert (SAMPLER_WARMUP_FACTOR, SAMPLER_WARMUP_FACTOR_DENSE) == (1.62, 1.35)
