"""Held-out start-up logs, third set (tests/fixtures/engine_logs/vllm/heldout3/): vLLM 0.15.1, 0.19.0 and 0.20.0
serving Qwen3-235B-A22B-Instruct-2507-FP8 (block-FP8 MoE) on 4x H100 (TP4, with and without expert parallelism) and
2x B200 (TP2), MiniMax-M2.7 (block FP8, fp8 KV cache) on 4x A100, 2x H200 and 2x B200, Kimi-K2.6 INT4 (MLA,
vision) over two 8x H100 nodes (TP8 x PP2) and Kimi-K2.5 INT4 on 8x H200 and 4x B200, from kaitakuai/experiments' benchmark pages and logs, each cited in its fixture (URL at a commit, the lines
kept, the command). No constant in oomkit was fitted on any of them. Errors: weights per rank relative to the
printed load, the KV budget as a share of the GPU's memory (vLLM's 79.19 GiB total on an H100), tokens relative to
the printed count. "before" is oomkit at the commit before the two rules below, "after" with them.

| log | version | GPUs | figure | printed | before | after |
|---|---|---|---|---|---|---|
| vllm019 | 0.19.0 | 4x H100, TP4 | weights | 55.22 GiB | 55.13 (-0.16 %) | same |
| | | | tokens from the printed 10.89 GiB | 242,912 | 242,944 (+0.01 %) | same |
| | | | available KV | 10.89 GiB | 14.70 (+4.82 %) | 14.25 (+4.24 %): strict xfail |
| vllm020-240k | 0.20.0 | 4x H100, TP4 EP | available KV at 65,536 batched tokens, util 0.92 | 4.15 GiB | 7.96 (+4.81 %) | 4.54 (+0.49 %); 4.19 (+0.05 %) with the FlashInfer workspace |
| | | | verdict (one 240,000-token request needs 10.76 GiB) | refused | refused | refused |
| | | | available KV at 32,768 tokens, util 0.96 | 12.15 GiB | 14.94 (+3.52 %) | 12.77 (+0.78 %); 12.42 (+0.34 %) with it |
| | | | CUDA-graph capture ("took") | 0.96 GiB | 0.95 (-1.5 %) | 0.91 (-4.9 %) as FlashInfer's (no FA3 split buffers) |
| | | | CUDA-graph estimate | 1.10 GiB | 0.92 (-17 %) | 1.27 (+15 %) with the FlashInfer workspace |
| | | | available KV at 8,192 tokens, estimate off | 13.95 GiB | 14.56 (+0.77 %) | 14.25 (+0.38 %) |
| alpha3 | 0.15.1 (fork, 32,768 batched tokens) | 4x H100, TP4 | available KV, util 0.92, 128 sequences | 14.03 GiB | 12.33 (-2.14 %) | 12.52 (-1.91 %) |
| | | | tokens from the printed 14.03 GiB | 312,944 | 313,008 (+0.02 %) | same |
| | | | available KV, defaults (0.9, 1,024 sequences) | 9.27 GiB | 6.00 (-4.13 %) | 6.18 (-3.90 %): strict xfail |
| | | | verdict, defaults | refused (11.75 GiB) | refused | refused |
| | | | verdict at 0.95 and 128 sequences | starts | starts | starts |
| | | | verdict at --max-model-len 200000 / at 0.95 | dies in the sampler warm-up | refused at the KV check | same: strict xfail |
| 2xb200 | 0.15.1 (fork, 32,768 batched tokens) | 2x B200, TP2 | available KV | 48.87 GiB | 48.65 (-0.12 %) | 49.02 (+0.09 %) |
| | | | tokens from the printed budget | 545,136 | 545,136 | same |
| qwen235b-fp8-4xh100 | 0.20.0 | 4x H100, TP4 EP, fp8 KV | verdict (one 240,000-token request needs 5.38 GiB) | refused | refused | refused |
| | | | available KV | 1.32 GiB | 7.96 (+8.39 %) | 4.54 (+4.07 %): strict xfail |
| kimi-k26 | 0.15.1 (fork, 32,768 batched tokens) | 2x8 H100, TP8 PP2, Ray | weights stage 0 / 1 | 35.83 / 35.69 GiB | 35.58 / 35.33 (-0.70 / -1.00 %) | same |
| | | | available KV stage 0 / 1 | 29.85 / 29.03 GiB | 28.65 / 28.90 (-1.51 / -0.16 %) | 28.78 / 29.03 (-1.35 / -0.00 %) |
| | | | tokens from the printed 29.85 GiB (MLA, 64-token blocks) | 897,536 | 897,472 (one block) | same |
| kimi-k25-int4-8xh200 | 0.15.1 (fork, 32,768 batched tokens) | 8x H200, TP8, encoder TP data | weights | 71.92 GiB | 71.64 (-0.39 %) | same |
| | | | available KV eager / compiled | 45.84 / 46.24 GiB | 45.81 (-0.02 / -0.31 %) | same |
| | | | tokens from the printed budgets | 700,352 / 706,560 | 700,416 / 706,496 (one block) | same |
| kimi-k25-int4-4xb200 | 0.19.0 | 4x B200, TP4 | weights | 140.49 GiB | 139.90 (-0.42 %) | same |
| | | | available KV | 14.44 GiB | 20.55 (+3.42 %) | 19.74 (+2.97 %) |
| | | | tokens from the printed budget | 220,704 | 220,640 (-0.03 %) | same |
| minimax A100 | 0.20.0 | 4x A100 80GB, TP4, fp8 KV, Marlin MoE | weights | 54.58 GiB | 53.67 (-1.66 %) | 54.49 (-0.17 %) |
| | | | tokens from the printed 12.72 GiB | 430,112 | 430,240 (+0.03 %) | same |
| | | | available KV | 12.72 GiB | 16.89 (+5.25 %) | 15.20 (+3.12 %); 14.82 (+2.64 %) with the FlashInfer workspace |
| minimax H200 | 0.20.0 | 2x H200, TP2, fp8 KV | weights | 107.31 GiB | 107.21 (-0.10 %) | same |
| | | | available KV from the printed 241,760 tokens (14.29 GiB) | 12.2 GiB printed | 18.60 (+3.08 %) | 17.64 (+2.40 %); 17.30 (+2.15 %) with it |
| minimax B200 | 0.20.0 | 2x B200, TP2, fp8 KV | weights | 107.32 GiB | 107.21 (-0.10 %) | same |
| | | | tokens from the printed budget | 845,568 | 845,616 (+0.01 %) | same |
| | | | available KV | 50.0 GiB | 54.17 (+2.33 %) | 53.03 (+1.70 %); 52.65 (+1.48 %) with it |

The rules these logs led to, both read in the wheels (settings.ERAS):
- cudagraph_budget moves from 0.21.0 to 0.20.0: the 0.20.0 wheel's envs.py defaults
  VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS to "1" (0.19.0: "0") and config/cache.py gpu_memory_utilization to 0.92
  (0.19.0: 0.9), so v1/worker/gpu_worker.py determine_available_memory subtracts the CUDA-graph estimate from 0.20.0
  on; the 0.20.0 log's own line "default since v0.21.0" is its text, not its code.
- moe_modular (0.14.0) / moe_unchunked (0.18): from 0.14.0 the unquantized MoE method runs TritonExperts through
  FusedMoEModularKernel (0.13.0 still calls fused_experts), whose workspace_shapes are (M, top_k, max(N/2, K)) and
  (M, top_k, max(N, K)) with N = 2 x intermediate, where fused_experts holds (M, top_k, max(N, K)) and
  (M x top_k, N/2); modular_kernel.py cuts M into VLLM_FUSED_MOE_CHUNK_SIZE (16,384) chunks up to 0.17.0, and 0.18.0
  has no chunking (PR #34086). The fitted 0.19 logs move toward their printed peaks with it, by the rule alone: Qwen3-30B-A3B
  2.527 -> 2.683 GiB (printed 2.68), Qwen1.5-MoE 2.441 -> 2.480 (2.47), Llama-4-Scout TP4 3.151 -> 3.198 (3.19).
  CUTLASS FP4 experts keep their own shapes (experts/cutlass_moe.py, the fused_experts sizes).
- fp8_block_marlin (0.9.0): on a GPU without FP8 (below compute capability 8.9) block-quantized FP8 weights run on
  Marlin, which turns each [N/128, K/128] fp32 block scale into [K/128, N] group scales in the model dtype
  (quantization/utils/marlin_utils_fp8.py prepare_fp8_layer_for_marlin, prepare_fp8_moe_layer_for_marlin; 0.8.5
  turns Marlin off for block-wise FP8): MiniMax-M2.7 on the A100 loads 54.49 GiB (54.58 printed; 53.67 before).
- the FlashInfer workspace in vLLM's own graph estimate (engines/vllm/phases.py flashinfer_workspace_in_estimate,
  read in the 0.19.0 and 0.20.0 wheels): profile_cudagraph_memory builds new metadata builders on a minimal KV
  cache, and the first FULL warm-up allocates FlashInferMetadataBuilder's 394 MiB workspace (trtllm-gen's, of the
  same size, on SM 10.x) between its two mem_get_info readings, for every model FlashInfer serves, not only the
  hybrids whose capture_model takes it too. With it, attention_backend is read for 0.19 / 0.20 (their cuda.py
  priorities and flash_attn.py fp8 rule are 0.21's) and checks the head sizes each backend takes. Settings as the
  logs print them: the 240k run named FlashInfer ("Using AttentionBackendEnum.FLASHINFER backend", the line for a
  backend named in the configuration), the MiniMax A100 and H200 pages say FlashInfer attention, the B200 runs it
  by default.

What remains, measured: every 0.20 run with an FP8 KV cache keeps 2.1-3.0 GiB a GPU outside the KV pool that
oomkit does not model (the same Qwen3-235B settings print 4.15 GiB with a bf16 cache, 1.32 with fp8; the MiniMax
runs sit +1.5 to +2.6 % of the GPU above their budgets); no source rule for it was found in the 0.20.0 wheel (see
test_v020_fp8_kv_cache_budget for what was read). Further: the 0.19.0 run's budget is 3.36 GiB under oomkit's (+4.24 % of the GPU). It ran
FLASHINFER_CUTLASS MoE, FlashAttention 3 and FlashInfer's trtllm all-reduce (printed), whose workspaces oomkit does
not size (its MoE workspace is TritonExperts'); the 0.19.0 wheel does not subtract the 1.76 GiB graph estimate
(VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS "0"), which would leave +2.0 % even if it did. The 0.15.1 runs are the Gonka
fork's build: at 1,024 sequences its budget is 1.90 GiB above oomkit's PyTorch-sort sampler profile (fitted on the
PyPI 0.15/0.16 Qwen3-14B logs), so oomkit refuses the two runs that passed the KV check and died in the sampler
warm-up.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oomkit.engines.vllm import CUDA_DRIVER_RESERVED, ENGINE, VllmSettings
from oomkit.hardware.catalog import with_facts
from oomkit.memory import Device
from oomkit.units import GiB
from tests.test_vllm import LIMITS
from tests.test_vllm_cudagraph import BAND as CAPTURE_BAND
from tests.test_vllm_startup import spec_of

HERE = Path(__file__).parent / "fixtures" / "engine_logs" / "vllm" / "heldout3"
H100 = ("NVIDIA H100 80GB HBM3", 81559 * 2**20)
B200 = ("NVIDIA B200", 183359 * 2**20)
A_LIMIT, T_LIMIT = LIMITS["available"], LIMITS["tokens"]
# Qwen3-235B-A22B-Instruct-2507-FP8 has Qwen3-235B-A22B-FP8's layers and weights; its context is 262,144 where the
# catalog's entry says 40,960, hence VLLM_ALLOW_LONG_MAX_MODEL_LEN
MODEL = "Qwen/Qwen3-235B-A22B-FP8"

V019 = "qwen3-235b-a22b-fp8-4xh100-tp4-v0.19.0-kaitaku"
V020 = "qwen3-235b-a22b-fp8-4xh100-tp4-ep-v0.20.0-240k-kaitaku"
ALPHA3 = "qwen3-235b-a22b-fp8-4xh100-tp4-v0.15.1-alpha3-kaitaku"
B200_RUN = "qwen3-235b-a22b-fp8-2xb200-tp2-v0.15.1-alpha3-kaitaku"


def fixture(stem: str) -> dict:
    return json.loads((HERE / f"{stem}.json").read_text(encoding="utf-8"))


def gpus(gpu: tuple[str, int], n: int) -> tuple[Device, ...]:
    return tuple(with_facts(Device(f"CUDA{i}", gpu[0], gpu[1])) for i in range(n))


def estimate(gpu: tuple[str, int], n: int, **kw):
    kw.setdefault("allow_long_max_model_len", True)
    return ENGINE.estimate(spec_of(MODEL), gpus(gpu, n), VllmSettings(**kw))


def share(est, printed_bytes: int) -> float:
    """The rank-0 budget's error as a share of the GPU vLLM sees (total less the driver's reserve)."""
    total = est.devices[0].memory_bytes - CUDA_DRIVER_RESERVED
    return (est.engine_view["available_kv_cache_bytes"]["CUDA0"] - printed_bytes) / total


# ---------------------------------------------------------------------------------------------------------
# 0.19.0, upstream image, 4x H100 TP4


def _v019(**kw):
    return estimate(H100, 4, engine_version="0.19.0", tensor_parallel_size=4, gpu_memory_utilization=0.92,
                    max_num_seqs=128, max_model_len=240000, **kw)


def test_v019_weights_and_tokens_from_the_printed_budget():
    printed = fixture(V019)["printed"]
    v = _v019().engine_view
    w = (v["model_loading_bytes"]["CUDA0"] - printed["model_loading_bytes"]) / printed["model_loading_bytes"]
    assert abs(w) < 0.005, w  # 55.13 vs 55.22 GiB
    # 94 layers x 1 KV head a rank (4 / TP4) x 128 x K,V x 2 B = 48,128 B per token a rank
    t = _v019(kv_cache_memory_bytes=printed["available_kv_cache_bytes"]).engine_view
    assert abs(t["kv_cache_tokens"] - printed["kv_cache_tokens"]) / printed["kv_cache_tokens"] < T_LIMIT
    assert t["max_concurrency"] == printed["max_concurrency"]


@pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
    "+4.24 % of the GPU (14.25 vs 10.89 GiB; +4.82 % before the modular MoE workspace). The run printed "
    "FLASHINFER_CUTLASS MoE, FlashAttention 3 and FlashInfer's trtllm all-reduce, whose workspaces are not sized "
    "(oomkit's MoE workspace is TritonExperts'); the 0.19.0 wheel does not subtract the 1.76 GiB graph estimate "
    "(envs.py VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS '0'), and subtracting it would still leave +2.0 %"))
def test_v019_budget():
    est = _v019()
    err = share(est, fixture(V019)["printed"]["available_kv_cache_bytes"])
    assert abs(err) < A_LIMIT, f"{err:+.2%}"


# ---------------------------------------------------------------------------------------------------------
# 0.20.0, 4x H100 TP4 with expert parallelism, 240,000 tokens, TRITON MoE


def _v020(run: str, **kw):
    r = fixture(V020)["runs"][run]
    if "estimate_cudagraphs" in r:
        kw["estimate_cudagraphs"] = r["estimate_cudagraphs"]
    kw.setdefault("attention_backend", fixture(V020)["attention_backend"])  # printed: a backend named, not the default
    return r, estimate(H100, 4, engine_version="0.20.0", tensor_parallel_size=4, enable_expert_parallel=True,
                       max_num_seqs=128, max_model_len=240000, max_num_batched_tokens=r["max_num_batched_tokens"],
                       gpu_memory_utilization=r["gpu_memory_utilization"], **kw)


@pytest.mark.parametrize("run", ["prod_65536", "fit_32768", "fit_8192_no_estimate"])
def test_v020_budget(run):
    # the CUDA-graph estimate is in the budget from 0.20.0 (settings.ERAS cudagraph_budget) and the modular MoE
    # workspace grows with the whole batch (moe_unchunked): before both, +4.81 / +3.52 / +0.77 % of the GPU; then
    # +0.49 / +0.78 / +0.38 % until FlashInfer's workspace entered the estimate (phases.py
    # flashinfer_workspace_in_estimate)
    r, est = _v020(run)
    err = share(est, r["available_kv_cache_bytes"])
    assert abs(err) < 0.01, f"{err:+.2%}"  # +0.05 / +0.34 / +0.38 %


def test_v020_refused_at_65536_batched_tokens():
    r, est = _v020("prod_65536")
    v = est.engine_view
    assert est.fits is False
    assert "(10.76 GiB KV cache is needed, which is larger than the available KV cache memory" in v["error"]
    assert f"{v['kv_needed_one_request_bytes']['CUDA0'] / GiB:.2f}" == r["kv_needed_one_request_gib"]
    # and the two settings the page found starting
    for run in ("fit_32768", "fit_8192_no_estimate"):
        assert _v020(run)[1].fits is True, run


def test_v020_weights_and_capture():
    r, est = _v020("fit_32768")
    v = est.engine_view
    w = (v["model_loading_bytes"]["CUDA0"] - r["model_loading_bytes"]) / r["model_loading_bytes"]
    assert abs(w) < 0.005, w
    # "Graph capturing finished in 18 secs, took 0.96 GiB": 0.913 GiB here (-4.9 %; 0.946 and -1.5 % while
    # FlashAttention 3's split buffers were charged to this FlashInfer run), held to the capture band of the other
    # held-out capture logs (tests/test_vllm_cudagraph.py BAND)
    took = v["cudagraph_actual_bytes"]
    assert abs(took - r["cudagraph_actual_bytes"]) / r["cudagraph_actual_bytes"] < CAPTURE_BAND, took / GiB


def test_v020_cudagraph_estimate():
    # "Estimated CUDA graph memory: 1.10 GiB total" (both runs with the estimate on): 1.27 GiB here (+15 %), where it
    # was 0.92 (-17 %) before the FlashInfer workspace the profiling capture allocates (394 MiB, phases.py
    # flashinfer_workspace_in_estimate) and without FlashAttention 3's split buffers (this run is FlashInfer's)
    for run in ("prod_65536", "fit_32768"):
        r, est = _v020(run)
        printed = round(float(r["cudagraph_estimate_gib"]) * GiB)
        ours = est.engine_view["cudagraph_bytes"]["CUDA0"]
        assert abs(ours - printed) / printed < CAPTURE_BAND, (run, ours / GiB)


# ---------------------------------------------------------------------------------------------------------
# 0.15.1 (the Gonka fork's alpha3 build), 4x H100 TP4 and 2x B200 TP2


def _alpha3(run: str, **kw):
    fx = fixture(ALPHA3)
    r = fx["runs"][run]
    for key in ("gpu_memory_utilization", "max_num_seqs", "max_model_len"):
        if key in r:
            kw.setdefault(key, r[key])
    # the fork batches 32,768 tokens (its printed compile range; upstream 0.15.1 would take 8,192 on an H100)
    return r, estimate(H100, 4, engine_version="0.15.1", tensor_parallel_size=4,
                       max_num_batched_tokens=fx["max_num_batched_tokens"], **kw)


def test_alpha3_budget_and_tokens():
    r, est = _alpha3("util_092_seqs_128")
    err = share(est, r["available_kv_cache_bytes"])
    assert abs(err) < A_LIMIT, f"{err:+.2%}"  # -1.91 % (12.52 vs 14.03 GiB)
    t = _alpha3("util_092_seqs_128", kv_cache_memory_bytes=r["available_kv_cache_bytes"])[1].engine_view
    assert abs(t["kv_cache_tokens"] - r["kv_cache_tokens"]) / r["kv_cache_tokens"] < T_LIMIT


def test_alpha3_defaults_refused_at_the_kv_check():
    _, est = _alpha3("defaults")
    v = est.engine_view
    assert est.fits is False
    assert "(11.75 GiB KV cache is needed, which is larger than the available KV cache memory" in v["error"]


@pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
    "-3.90 % of the GPU (6.18 vs 9.27 GiB): at 1,024 sequences oomkit profiles 0.15's PyTorch-sort sampler "
    "(1,024 x 151,936 x 38.4 B = 5.56 GiB, fitted on the PyPI 0.15/0.16 Qwen3-14B logs) beside the 32,768-token "
    "MoE workspace; the fork's build printed 3.09 GiB more budget than that. At 128 sequences the same build is "
    "held to -1.91 %, so the gap is the sampler's: the build's top-k/top-p path is not known"))
def test_alpha3_defaults_budget():
    r, est = _alpha3("defaults")
    err = share(est, r["available_kv_cache_bytes"])
    assert abs(err) < A_LIMIT, f"{err:+.2%}"


def test_alpha3_starts_with_128_sequences():
    for run in ("util_095_seqs_128", "util_092_seqs_128"):
        est = _alpha3(run)[1]
        assert est.fits is True and est.engine_view["failed_phase"] is None, run


@pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
    "the fork's build passed the KV check with 1,024 sequences and died in the sampler warm-up; oomkit refuses at "
    "the KV check: its profile at 1,024 sequences (the PyTorch-sort sampler of PyPI 0.15/0.16, 1,024 x 151,936 x "
    "38.4 B = 5.56 GiB) leaves 6.18 GiB at 0.9 where the build printed 9.27 (-3.90 % of the GPU), under the 8.96 "
    "GiB one 200,000-token request needs, and 10.14 GiB at 0.95 under the 11.75 GiB of 262,144 tokens"))
@pytest.mark.parametrize("run", ["len_200000", "util_095"])
def test_alpha3_dies_in_the_sampler_warmup(run):
    est = _alpha3(run)[1]
    assert "error" not in est.engine_view, est.engine_view["error"][:120]
    assert (est.engine_view["failed_phase"] or {}).get("phase") == "sampler warm-up"


def test_b200_budget_and_tokens():
    printed = fixture(B200_RUN)["printed"]
    kw = dict(engine_version="0.15.1", **fixture(B200_RUN)["settings"])
    est = estimate(B200, 2, **kw)
    err = share(est, printed["available_kv_cache_bytes"])
    assert abs(err) < A_LIMIT, f"{err:+.2%}"  # +0.09 % (49.02 vs 48.87 GiB) at the fork's 32,768 tokens
    # 94 layers x 2 KV heads a rank x 128 x K,V x 2 B = 96,256 B per token: the printed budget gives the count
    t = estimate(B200, 2, kv_cache_memory_bytes=printed["available_kv_cache_bytes"], **kw).engine_view
    assert t["kv_cache_tokens"] == printed["kv_cache_tokens"]


# ---------------------------------------------------------------------------------------------------------
# 0.20.0, MiniMax-M2.7 (block FP8, 62 layers, 8 KV heads x 128) with an FP8 KV cache on 4x A100, 2x H200, 2x B200


MINIMAX = "minimax-m2.7-fp8-a100-h200-b200-v0.20.0-fp8kv-kaitaku"
MINIMAX_KW = dict(engine_version="0.20.0", gpu_memory_utilization=0.92, max_num_seqs=128, max_model_len=180000,
                  kv_cache_dtype="fp8")


def _minimax(run: str, **kw):
    r = fixture(MINIMAX)["runs"][run]
    if run == "a100_tp4":
        kw.setdefault("moe_backend", "marlin")  # the only FP8 MoE kernel on sm_80 (printed)
    if "attention_backend" in r:  # the pages': FlashInfer (the A100's default with an fp8 cache, named on the H200)
        kw.setdefault("attention_backend", r["attention_backend"].split()[0])
    devices = gpus((r["gpu"], r["memory_mib"] * 2**20), r["count"])
    est = ENGINE.estimate(spec_of("MiniMaxAI/MiniMax-M2.7"), devices,
                          VllmSettings(tensor_parallel_size=r["count"], **MINIMAX_KW, **kw))
    return r, est


@pytest.mark.parametrize("run", ["a100_tp4", "h200_tp2", "b200_tp2"])
def test_minimax_weights(run):
    r, est = _minimax(run)
    got = est.engine_view["model_loading_bytes"]["CUDA0"]
    w = (got - r["model_loading_bytes"]) / r["model_loading_bytes"]
    assert abs(w) < 0.005, f"{w:+.2%}"  # -0.17 % (Marlin's group scales on the A100; -1.66 % before), -0.10 %, -0.10 %


@pytest.mark.parametrize("run", ["a100_tp4", "b200_tp2"])
def test_minimax_tokens_from_the_printed_budget(run):
    # 62 layers x (8 / TP) KV heads x 128 x K,V x 1 B (fp8): 31,744 B a token a rank at TP4, 63,488 at TP2
    r, _ = _minimax(run)
    v = _minimax(run, kv_cache_memory_bytes=r["available_kv_cache_bytes"])[1].engine_view
    assert abs(v["kv_cache_tokens"] - r["kv_cache_tokens"]) / r["kv_cache_tokens"] < T_LIMIT  # +0.03 / +0.01 %


def test_minimax_h200_page_budget_and_count_disagree():
    # the H200 page prints 12.2 GiB and 241,760 tokens; at 63,488 B a token a rank the count needs 14.29 GiB, so
    # the budget is taken from the count (12.2 GiB would give 206,320 tokens, -14.7 %)
    r, est = _minimax("h200_tp2")
    per_token = 62 * 4 * 128 * 2
    assert r["kv_cache_tokens"] * per_token > 14.2 * GiB
    err = (est.engine_view["available_kv_cache_bytes"]["CUDA0"] - r["kv_cache_tokens"] * per_token) / (
        est.devices[0].memory_bytes - CUDA_DRIVER_RESERVED)
    assert abs(err) < A_LIMIT, f"{err:+.2%}"  # +2.15 % (17.30 GiB vs 14.29); +3.08 % and +2.4 % before


def test_minimax_b200_budget():
    r, est = _minimax("b200_tp2")
    err = share(est, r["available_kv_cache_bytes"])
    assert abs(err) < A_LIMIT, f"{err:+.2%}"  # +1.48 % (52.64 vs 50.0 GiB); +2.33 % and +1.70 % before


def test_minimax_a100_budget():
    # +2.64 % of the GPU (14.82 vs 12.72 GiB); +5.25 % before the graph estimate entered 0.20's budget and Marlin's
    # group scales entered the weights (54.49 GiB against 54.58 printed), +3.12 % (a strict xfail) before the
    # FlashInfer workspace entered the estimate (FlashAttention 2 holds no fp8 cache on sm_80: FlashInfer runs, as
    # printed). The rest, about 2.1 GiB, is the fp8-cache gap of test_v020_fp8_kv_cache_budget
    r, est = _minimax("a100_tp4")
    err = share(est, r["available_kv_cache_bytes"])
    assert abs(err) < A_LIMIT, f"{err:+.2%}"


V020_FP8KV = "qwen3-235b-a22b-fp8-4xh100-tp4-ep-v0.20.0-fp8kv-240k-refused-kaitaku"


def _v020_fp8kv():
    fx = fixture(V020_FP8KV)
    return fx["printed"], estimate(H100, 4, engine_version="0.20.0", **fx["settings"])


def test_v020_fp8_kv_cache_refused_at_240000():
    printed, est = _v020_fp8kv()
    v = est.engine_view
    assert est.fits is False
    assert "(5.38 GiB KV cache is needed, which is larger than the available KV cache memory" in v["error"]
    assert f"{v['kv_needed_one_request_bytes']['CUDA0'] / GiB:.2f}" == printed["kv_needed_one_request_gib"]


@pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
    "+4.07 % of the GPU (4.54 vs 1.32 GiB) under FlashAttention 3, the default this run got (0.20.0's envs.py has no "
    "VLLM_ATTENTION_BACKEND, so the page's FLASHINFER variable did nothing; +3.62 % had FlashInfer run): the same "
    "settings with a bf16 cache printed 4.15 GiB (oomkit 4.19, +0.05 %). Read in the 0.20.0 wheel, nothing of the "
    "fp8 cache enters the budget: profile_run's dummy forward builds no attention metadata, so FlashAttentionImpl / "
    "FlashInferImpl.forward return before any fp8 path (Attention.forward's query quantization is a transient fp8 "
    "copy of the query, FlashInfer's only with TRTLLM); profile_cudagraph_memory captures on a minimal KV cache "
    "(max_cudagraph_capture_size blocks) with workspaces of fixed size; the weights carry scalar k / v scales. The "
    "2.8 GiB stays unexplained (the MiniMax-M2.7 fp8 runs keep 2.1-3.0 GiB of the same); the image is the pocv2 "
    "fork (kaitakuai/vllm), whose patches include a KV-scratch dtype check 'required for FP8 KV cache' (the stored "
    "vllm/poc/poc_model_runner.py execute_poc_forward reuses a KV tensor as the PoC input after start-up, not in "
    "the profile). Read further in 0.20.0: _dummy_run(is_profile=True) builds attention metadata only for "
    "force_attention or a FULL graph, so no fp8 attention kernel runs in the profile; profile_cudagraph_memory's "
    "samples do not depend on the cache dtype; --logprobs-mode processed_logprobs adds one float32 log_softmax of the "
    "128 sampled rows (forward_native, 0.07 GiB) where the forward over 65,536 tokens peaks. The bf16 run it is held "
    "against is another image (mlnode-h100-minimax-m2-7:0.2.13-vllm0.20.0-k1) without that flag, so the 2.83 GiB "
    "between the two printed budgets crosses builds"))
def test_v020_fp8_kv_cache_budget():
    printed, est = _v020_fp8kv()
    err = share(est, printed["available_kv_cache_bytes"])
    assert abs(err) < A_LIMIT, f"{err:+.2%}"


# ---------------------------------------------------------------------------------------------------------
# 0.15.1 (the fork), Kimi-K2.6 INT4 (MLA, W4A16 Marlin experts, vision tower) on 2 x 8 H100, TP8 x PP2 over Ray


KIMI = "kimi-k2.6-int4-2x8xh100-tp8-pp2-v0.15.1-ray-kaitaku"


def _kimi(**kw):
    fx = fixture(KIMI)
    return fx["printed"], ENGINE.estimate(spec_of(fx["model"]), gpus(H100, 16),
                                          VllmSettings(engine_version="0.15.1", **fx["settings"], **kw))


def test_kimi_k26_weights_per_stage():
    printed, est = _kimi()
    v = est.engine_view["model_loading_bytes"]
    for rank, key in (("CUDA0", "model_loading_stage0_bytes"), ("CUDA8", "model_loading_stage1_bytes")):
        err = (v[rank] - printed[key]) / printed[key]
        assert abs(err) < 0.015, f"{rank}: {err:+.2%}"  # -0.71 % (31 layers), -0.71 % (30 + lm_head), tower on both
    # 0.15.1 builds Kimi-K2.5/2.6's tower on every pipeline stage and loads it there (kimi_k25.py __init__: no stage
    # test; weights.tower_on_stage): the printed stages differ by 0.14 GiB (35.83 - 35.69, rounded to 0.01 GiB), as
    # the estimate's do (0.141 GiB; with the tower on the first stage only 0.250)
    gap = (v["CUDA0"] - v["CUDA8"]) - (printed["model_loading_stage0_bytes"] - printed["model_loading_stage1_bytes"])
    assert abs(gap) < 0.01 * 2**30, f"{gap / 2**30:+.3f} GiB"


def test_kimi_k26_budget_per_stage():
    # the printed 32,768 batched tokens (the fork's default) drive the profile; at upstream's 8,192 the budgets
    # would be +3.43 / +4.78 % of the GPU
    printed, est = _kimi()
    v = est.engine_view["available_kv_cache_bytes"]
    total = est.devices[0].memory_bytes - CUDA_DRIVER_RESERVED
    for rank, key in (("CUDA0", "available_kv_cache_stage0_bytes"), ("CUDA8", "available_kv_cache_stage1_bytes")):
        err = (v[rank] - printed[key]) / total
        assert abs(err) < A_LIMIT, f"{rank}: {err:+.2%}"  # -1.35 % (28.78 vs 29.85), -0.14 % (28.92 vs 29.03)
    assert est.fits is True


def test_kimi_k26_tokens_from_the_printed_budget():
    # MLA: one 576-wide latent row in bf16 per token and layer, replicated on every TP rank, 64-token FlashMLA
    # blocks; the count is the 31-layer stage's: 29.85 GiB / (64 x 576 x 2 x 31) = 14,024 blocks = 897,536
    printed, _ = _kimi()
    v = _kimi(kv_cache_memory_bytes=printed["available_kv_cache_stage0_bytes"])[1].engine_view
    assert v["block_size"] == 64
    assert abs(v["kv_cache_tokens"] - printed["kv_cache_tokens"]) <= 64  # 897,472: one block (the print rounding)
    assert v["max_concurrency"] == printed["max_concurrency"]


K25 = "kimi-k2.5-int4-8xh200-tp8-v0.15.1-eager-compiled-kaitaku"
H200 = ("NVIDIA H200", 143771 * 2**20)


def _k25(run: str, **kw):
    fx = fixture(K25)
    r = fx["runs"][run]
    return r, ENGINE.estimate(spec_of(fx["model"]), gpus(H200, 8),
                              VllmSettings(engine_version="0.15.1", enforce_eager=r["enforce_eager"],
                                           **fx["settings"], **kw))


@pytest.mark.parametrize("run", ["eager", "compiled"])
def test_kimi_k25_8xh200_budget_and_tokens(run):
    r, est = _k25(run)
    err = share(est, r["available_kv_cache_bytes"])
    assert abs(err) < 0.01, f"{err:+.2%}"  # -0.02 % eager, -0.31 % compiled (45.81 GiB for both here)
    v = _k25(run, kv_cache_memory_bytes=r["available_kv_cache_bytes"])[1].engine_view
    assert abs(v["kv_cache_tokens"] - r["kv_cache_tokens"]) <= 64  # 700,416 / 706,496: one 64-token FlashMLA block


def test_kimi_k25_8xh200_weights():
    r, est = _k25("eager")
    got = est.engine_view["model_loading_bytes"]["CUDA0"]
    assert abs(got - r["model_loading_bytes"]) / r["model_loading_bytes"] < 0.01  # 71.64 vs 71.92 GiB (-0.39 %)


K25_B200 = "kimi-k2.5-int4-4xb200-tp4-v0.19.0-kaitaku"


def test_kimi_k25_4xb200_v019():
    fx = fixture(K25_B200)
    printed = fx["printed"]
    spec, devices = spec_of(fx["model"]), gpus(B200, 4)
    est = ENGINE.estimate(spec, devices, VllmSettings(engine_version="0.19.0", **fx["settings"]))
    w = (est.engine_view["model_loading_bytes"]["CUDA0"] - printed["model_loading_bytes"]) / printed[
        "model_loading_bytes"]
    assert abs(w) < 0.01, f"{w:+.2%}"  # -0.42 % (139.90 vs 140.49 GiB)
    # +2.97 % of the GPU (19.74 vs 14.44 GiB): inside the limit by a hair; 5.3 GiB a B200 rank is not accounted for
    # (FLASHINFER_MLA and the W4A16 experts on Blackwell, the MoonViT dummy pass at 8,192 tokens)
    err = share(est, printed["available_kv_cache_bytes"])
    assert abs(err) < A_LIMIT, f"{err:+.2%}"
    # 61 layers x 576 x 2 B = 70,272 B a token, 32-token FLASHINFER_MLA blocks: 220,640 (two blocks under the print)
    v = ENGINE.estimate(spec, devices, VllmSettings(engine_version="0.19.0", **fx["settings"],
                                                    kv_cache_memory_bytes=printed["available_kv_cache_bytes"]))
    tokens = v.engine_view["kv_cache_tokens"]
    assert abs(tokens - printed["kv_cache_tokens"]) / printed["kv_cache_tokens"] < T_LIMIT
