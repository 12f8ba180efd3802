"""vLLM's CUDA-graph capture beyond the H100 / 0.19 sweep (tests/test_vllm_phases.py holds that one): what
"Graph capturing finished in N secs, took X GiB" prints on other GPUs and releases, and the graph sets "Profiling
CUDA graph memory: PIECEWISE=N (largest=M), FULL=N (largest=M)" names. Each log is a fixture under
tests/fixtures/engine_logs/vllm/ with its URL; the figures are the logs', never oomkit's.

The V1 rule (engines/vllm/phases.py cudagraph_actual_bytes): a one-off first capture, FlashAttention 3's split buffers
in the largest FULL graph (fa3_split_bytes, read from vLLM's flash_attn.py and FA3's flash_api.cpp: no constant of
ours), and a share per captured graph and per decoder layer of the rank (a MoE layer 1.55 layers). Fitted: the Hopper
one-off and the per-graph-layer share on the seven llm-d v0.19.0 H100 logs the per-hidden rule before it was fitted on,
the MoE layer's extra on gpt-oss-20b TP1 (where the MXFP4-only term was fitted before), the one-off elsewhere on a line
by SM count through the DGX Spark Qwen3.6-27B log (less the FlashInfer workspace, read from the source) and the RTX
5090 0.20.2 log (five graphs, the one-off alone). GeForce parts take the one-off alone (phases.py geforce_capture).
Everything else below is held out.

Errors against "took", before (one-off 386 MiB + 1.88 MiB per SM off 132, 1,645 B per hidden unit per graph) -> after:
  vllm#37972 Qwen3.5-397B-A17B-FP8 PP 8, the ranks of 7 layers +128 % -> +23 % (the ranks of 8: +26 %)
  vllm#50722 Qwen3.5-35B-A3B TP 4 at the log's 16 FULL graphs (--max-num-seqs 104 inferred) -65 % -> -70 %; at
    vLLM's largest default set (51 + 51) -48 % -> -19 %
  Qwen1.5-MoE-A2.7B H100 (test_vllm_phases.py) -37 % -> -28 %; gpt-oss-20b TP 2 +19 % -> +3 %; Llama-4-Scout TP 4
    +4 % -> +13 %; the other H100 0.19 logs -17 .. +19 % -> -21 .. +14 %
  GH200 0.10.1 PP 2 PIECEWISE only -7 % -> -22 %; RTX 5090 +12 % -> 0 % (fitted); RTX 4090 -3 % -> -11 %;
  GB10 Qwen3.6-27B 0 % -> 0 % (fitted), its MTP run +6 % -> +7 %, Qwen3.6-35B-A3B MTP -24 % -> -22 %
vLLM's own estimate ("Estimated CUDA graph memory", a budget term from 0.21) is phases.py cudagraph_estimate_bytes,
profile_cudagraph_memory's extrapolation over the capture's terms; no constant of its own. Against the printed figure
(before -> after): vllm#37972's PP 8 rank 0.61 -> 0.33 against 0.29; GB10 Qwen3.6-27B 0.62 -> 0.62 against 0.61,
Qwen3.6-35B-A3B MTP 0.23 -> 0.23 against 0.19, RTX 4090 Qwen2.5-0.5B 0.45 -> 0.42 against 0.28 (+61 % -> +50 %, a
strict xfail), vllm#50159's RTX PRO 6000 0.62 -> 0.76 against 0.20 (+207 % -> +276 %, a strict xfail), the H100 0.19
logs within 1 % of the GPU now all (granite-3.1-2b's printed 1.60, 0.76 above its own capture: -1.14 % -> -0.97 %).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest

from oomkit.engines.vllm import ENGINE, VllmSettings
from oomkit.engines.vllm.config import resolve
from oomkit.engines.vllm.phases import capture_sizes, graph_count
from oomkit.units import GiB, MiB
from tests.test_startup_deaths import RTX3090, VLLM_LOGS
from tests.test_startup_deaths import devices as devices_3090
from tests.test_vllm_new_logs import gpus
from tests.test_vllm_startup import fixture, spec_of

BAND = 0.25  # the band tests/test_vllm_phases.py holds the H100 logs to


def _settings(fx: dict) -> VllmSettings:
    st = fx["settings"]
    n_spec = (st.get("speculative_config") or {}).get("num_speculative_tokens", 0)
    return VllmSettings(engine_version=fx["engine_version"], max_model_len=st["max_model_len"],
                        gpu_memory_utilization=st["gpu_memory_utilization"], kv_cache_dtype=st["kv_cache_dtype"],
                        max_num_seqs=st["max_num_seqs"], max_num_batched_tokens=st["max_num_batched_tokens"],
                        num_speculative_tokens=n_spec, enable_prefix_caching=st["enable_prefix_caching"],
                        attention_backend=st.get("attention_backend"))


def _gh200(fx: dict) -> VllmSettings:
    st = fx["settings"]
    return VllmSettings(engine_version=fx["engine_version"], tensor_parallel_size=st["tensor_parallel_size"],
                        pipeline_parallel_size=st["pipeline_parallel_size"], nnodes=st["nnodes"],
                        max_model_len=st["max_model_len"], max_num_batched_tokens=st["max_num_batched_tokens"],
                        gpu_memory_utilization=st["gpu_memory_utilization"], usage_context="llm")


# stem -> (GPU, how the log's settings read, what the log's run is)
LOGS = {
    # vLLM 0.10.1 V1, PIECEWISE only (67 graphs to 512), Qwen3-30B-A3B-2507 -tp 4 -pp 2 on GH200 nodes: "took 0.63
    # GiB" on the worker that printed it alone (0.70 on the seven others): 0.49 (-22 %; the one-off and the share of
    # 67 graphs x 24 MoE layers, no FULL graph to hold FlashAttention 3's split buffers)
    "qwen3-30b-a3b-2507-2x4xgh200-pp2-tp4-ray-v0.10.1": ("NVIDIA GH200 120GB", _gh200),
    # vLLM 0.20.2, Gemma-4-26B-A4B NVFP4, --max-num-seqs 2: five graphs to 4 tokens, "took 0.40 GiB" (one of the
    # two points of the one-off's per-SM line: 0.40, 0 %)
    "gemma-4-26b-a4b-nvfp4-5090-v0.20.2": ("NVIDIA GeForce RTX 5090", _settings),
    # vLLM 0.24.0, Qwen2.5-0.5B on an RTX 4090 at the serve defaults: 51 + 35 graphs to 512, "took 0.38 GiB" (held
    # out: 0.34, -11 %; the per-graph share of the datacenter parts would add 0.28 GiB)
    "qwen2.5-0.5b-4090-v0.24": ("NVIDIA GeForce RTX 4090", _settings),
    # DGX Spark (GB10, 48 SMs, unified memory), 0.22 / 0.23 nightlies. The 27B without MTP (5 + 4 graphs, "took 0.62
    # GiB", its own estimate 0.61) is the per-SM line's other point; its FULL graphs allocate FlashInfer's 394 MiB
    # workspace (phases.py FLASHINFER_WORKSPACE). The two MTP runs (PIECEWISE only) are held out: 0.25 vs 0.23 GiB
    # (+7 %) and 0.23 vs 0.30 GiB (-22 %). On the GB10's unified memory torch.cuda.mem_get_info reads the host's free memory, so
    # "took" also counts what the host did meanwhile: the 27B MTP run's own estimate printed -0.81 GiB, the 35B's
    # 0.19 against 0.30 taken
    "qwen3.6-35b-a3b-nvfp4-mixed-dgx-spark-mtp2-v0.22": ("NVIDIA GB10", _settings),
    "qwen3.6-27b-nvfp4-mixed-dgx-spark-v0.23": ("NVIDIA GB10", _settings),
    "qwen3.6-27b-nvfp4-mixed-dgx-spark-mtp2-v0.23": ("NVIDIA GB10", _settings),
}

KNOWN: dict[str, str] = {}


def _estimate(stem: str):
    fx = fixture(stem)
    gpu, how = LOGS[stem]
    s = how(fx)
    spec = spec_of(fx["model"])
    return fx, spec, s, ENGINE.estimate(spec, gpus(gpu, 1), s)  # one worker's figures, as the log prints them


@pytest.mark.parametrize("stem", [pytest.param(k, marks=pytest.mark.xfail(strict=True, reason=KNOWN[k]))
                                  if k in KNOWN else k for k in sorted(LOGS)])
def test_capture_against_the_log(stem):
    fx, _, _, est = _estimate(stem)
    assert_capture_in_band(est.engine_view, fx, stem)


def assert_capture_in_band(view: dict, fx: dict, what: str = "") -> None:
    """oomkit's capture against the log's "Graph capturing finished ... took X GiB", within BAND."""
    took = fx["printed"]["cudagraph_actual_bytes"]
    got = view["cudagraph_actual_bytes"]
    err = (got - took) / took
    assert abs(err) < BAND, f"{what}: {got / GiB:.2f} vs {took / GiB:.2f} GiB ({err:+.0%})"


@pytest.mark.parametrize("stem, piecewise, full, largest", [
    # "Profiling CUDA graph memory: PIECEWISE=5 (largest=16), FULL=4 (largest=8)" (--max-num-seqs 8)
    ("qwen3.6-27b-nvfp4-mixed-dgx-spark-v0.23", 5, 4, 16),
    # "PIECEWISE=6 (largest=24)": --max-num-seqs 5 with two speculative tokens, 5 x 3 x 2 = 30 -> sizes to 24;
    # --attention-backend flashinfer has no FULL decode graphs with spec-decode on this GPU
    ("qwen3.6-35b-a3b-nvfp4-mixed-dgx-spark-mtp2-v0.22", 6, 0, 24),
])
def test_graph_sets_as_the_log_profiles_them(stem, piecewise, full, largest):
    _, spec, s, est = _estimate(stem)
    r = resolve(spec, gpus(LOGS[stem][0], 1), s)
    assert graph_count(spec, s, r) == (piecewise, full)
    assert max(capture_sizes(spec, s, r)) == largest


def test_spec_decode_sizes_without_a_backend_named():
    # "PIECEWISE=9 (largest=48)": --max-num-seqs 8 with two speculative tokens, 8 x 3 x 2 = 48, and no FULL graphs.
    # No backend is named: with --kv-cache-dtype fp8 on the GB10 (SM 12.1) FlashAttention is out (fp8 KV only with FA3
    # on SM 9.x) and FlashInfer runs, whose decode graphs take one token per request (no TRTLLM attention off SM
    # 10.x), so spec-decode drops the FULL graphs; the same run without MTP keeps them ("FULL=4 (largest=8)")
    from oomkit.engines.vllm.phases import attention_backend

    stem = "qwen3.6-27b-nvfp4-mixed-dgx-spark-mtp2-v0.23"
    _, spec, s, _ = _estimate(stem)
    r = resolve(spec, gpus("NVIDIA GB10", 1), s)
    sizes = capture_sizes(spec, s, r)
    assert (len(sizes), max(sizes)) == (9, 48)
    assert attention_backend(s, r) == "FLASHINFER"
    assert graph_count(spec, s, r) == (9, 0)


def test_default_attention_backend_by_gpu_and_kv_dtype():
    # platforms/cuda.py _get_backend_priorities (FLASH_ATTN first, FLASHINFER first on SM 10.x) and
    # flash_attn.py supports_kv_cache_dtype (fp8 only with FA3 on SM 9.x), 0.19 -> 0.33 (read in 0.19.0 and 0.20.0 too)
    from dataclasses import replace

    from oomkit.engines.vllm.phases import attention_backend
    from tests.test_vllm_phases import H100

    spec = spec_of("qwen3-8b")
    gb10, b200, rtx3090 = gpus("NVIDIA GB10", 1)[0], gpus("NVIDIA B200", 1)[0], gpus(RTX3090, 1)[0]
    cases = ((H100, "fp8", "FLASH_ATTN"), (H100, "auto", "FLASH_ATTN"), (gb10, "fp8", "FLASHINFER"),
             (gb10, "auto", "FLASH_ATTN"), (b200, "auto", "FLASHINFER"), (rtx3090, "fp8_e4m3", "FLASHINFER"))
    for gpu, kv, want in cases:
        s = VllmSettings(engine_version="0.23.0", max_model_len=8192, kv_cache_dtype=kv)
        assert attention_backend(s, resolve(spec, (gpu,), s)) == want, (gpu.name, kv)
    s = VllmSettings(engine_version="0.23.0", max_model_len=8192, attention_backend="triton_attn")
    assert attention_backend(s, resolve(spec, (H100,), s)) == "TRITON_ATTN"
    old = replace(s, attention_backend=None, engine_version="0.18.0")
    assert attention_backend(old, resolve(spec, (H100,), old)) == ""  # not read before 0.19
    for version in ("0.19.0", "0.20.0"):  # the 0.21 rule in both wheels
        for gpu, kv, want in cases:
            s = VllmSettings(engine_version=version, max_model_len=8192, kv_cache_dtype=kv)
            assert attention_backend(s, resolve(spec, (gpu,), s)) == want, (version, gpu.name, kv)


def test_default_attention_backend_by_head_size():
    # validate_configuration's head sizes (0.20.0): FlashInfer 64 / 128 / 256 (get_supported_head_sizes),
    # FlashAttention multiples of 8 up to 256, up to 512 through FA4 on SM 9.x / 10.x / 11.x (supports_head_size).
    # Gemma 4's full layers (head size 512) leave neither on an RTX 5090: TRITON_ATTN, as its 0.20.2 log ran; FA4
    # takes them on an H100; MLA models keep their own backends ("")
    from oomkit.engines.vllm.phases import attention_backend
    from tests.test_vllm_phases import H100

    gemma = spec_of("nvidia/Gemma-4-26B-A4B-NVFP4")
    s = VllmSettings(engine_version="0.20.2", max_model_len=8192, kv_cache_dtype="fp8_e4m3")
    r = resolve(gemma, gpus("NVIDIA GeForce RTX 5090", 1), s)
    assert attention_backend(s, r) == "FLASHINFER" and attention_backend(s, r, gemma) == "TRITON_ATTN"
    h = VllmSettings(engine_version="0.20.0", max_model_len=8192)
    assert attention_backend(h, resolve(gemma, (H100,), h), gemma) == "FLASH_ATTN"
    old = VllmSettings(engine_version="0.19.0", max_model_len=8192)
    assert attention_backend(old, resolve(gemma, (H100,), old), gemma) == "TRITON_ATTN"  # no FA4 in 0.19
    mla = spec_of("deepseek-ai/DeepSeek-V2-Lite-Chat")
    assert attention_backend(h, resolve(mla, (H100,), h), mla) == ""


def test_default_attention_backend_on_sm_12_and_turing():
    # RTX PRO 6000 Blackwell (SM 12.0): fa_utils.py get_flash_attn_version gives FA2 off SM 9.x / 10.x, which holds
    # no fp8 cache (flash_attn.py supports_kv_cache_dtype): FLASH_ATTN for a 16-bit cache, FLASHINFER for fp8 (FP8 and
    # NVFP4 checkpoints alike: the checkpoint's format does not enter the choice), 16-token blocks either way
    # (FLASH_ATTN MultipleOf(16), FLASHINFER [16, 32, 64] off SM 10.x: the default 16 is taken). FlashInfer takes head
    # size 512 from 0.22 (get_supported_head_sizes), so Gemma 4's fp8 cache there is FLASHINFER's, TRITON_ATTN in 0.20.
    # A T4 (SM 7.5) has no FlashAttention (supports_compute_capability >= 8.0) and, from 0.24, no FlashInfer (its
    # floor raised to 8.0, "currently broken on SM75"): TRITON_ATTN; 0.23 still runs FlashInfer there
    from oomkit.engines.vllm.phases import attention_backend

    spec = spec_of("qwen3-8b")
    pro = gpus("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", 1)
    t4 = gpus("NVIDIA T4", 1)
    for version in ("0.20.0", "0.27.1", "0.33.0"):
        for kv, want in (("auto", "FLASH_ATTN"), ("fp8", "FLASHINFER"), ("fp8_e4m3", "FLASHINFER")):
            s = VllmSettings(engine_version=version, max_model_len=8192, kv_cache_dtype=kv)
            r = resolve(spec, pro, s)
            assert attention_backend(s, r, spec) == want, (version, kv)
            est = ENGINE.estimate(spec, pro, s)
            assert est.engine_view["block_size"] == 16
            # 36 layers x 8 KV heads x (128 + 128) x 1 B (fp8) or 2 B: no scales in an fp8 page
            assert est.engine_view["kv_block_bytes"] == 16 * 36 * 8 * 256 * (1 if kv != "auto" else 2)
    gemma = spec_of("nvidia/Gemma-4-26B-A4B-NVFP4")
    rtx5090 = gpus("NVIDIA GeForce RTX 5090", 1)
    for version, want in (("0.20.2", "TRITON_ATTN"), ("0.22.0", "FLASHINFER")):
        s = VllmSettings(engine_version=version, max_model_len=8192, kv_cache_dtype="fp8_e4m3")
        assert attention_backend(s, resolve(gemma, rtx5090, s), gemma) == want, version
    for version, kv, want in (("0.23.0", "auto", "FLASHINFER"), ("0.24.0", "auto", "TRITON_ATTN"),
                              ("0.30.0", "fp8", "TRITON_ATTN")):
        s = VllmSettings(engine_version=version, max_model_len=8192, kv_cache_dtype=kv, dtype="float16")
        assert attention_backend(s, resolve(spec, t4, s), spec) == want, (version, kv)


def test_flashinfer_workspace_counts_in_the_capture_of_hybrid_models_with_full_graphs():
    # kernel_warmup.py warms FlashInfer up only when every attention group is FlashInfer (0.21 -> 0.33), so on a
    # hybrid model the first FULL graph's warm-up allocates the builder's 394 MiB workspace inside capture_model.
    # The GB10 27B: 5 + 4 graphs take 0.62 GiB, the MTP run's 9 + 0 graphs 0.23 GiB
    from oomkit.engines.vllm.phases import FLASHINFER_WORKSPACE, flashinfer_workspace_in_capture

    fx, spec, s, _ = _estimate("qwen3.6-27b-nvfp4-mixed-dgx-spark-v0.23")
    gb10 = gpus("NVIDIA GB10", 1)
    assert flashinfer_workspace_in_capture(spec, s, resolve(spec, gb10, s)) == FLASHINFER_WORKSPACE == 394 * MiB
    _, spec_m, s_m, _ = _estimate("qwen3.6-27b-nvfp4-mixed-dgx-spark-mtp2-v0.23")
    assert flashinfer_workspace_in_capture(spec_m, s_m, resolve(spec_m, gb10, s_m)) == 0  # PIECEWISE only
    from dataclasses import replace
    # a bf16 cache: FLASH_ATTN (auto is the checkpoint's fp8 from 0.14, config.auto_kv_dtype)
    for other in (replace(s, engine_version="0.34.0"), replace(s, kv_cache_dtype="bfloat16"),  # any( / FLASH_ATTN
                  replace(s, cudagraph_mode="PIECEWISE")):
        assert flashinfer_workspace_in_capture(spec, other, resolve(spec, gb10, other)) == 0
    dense, s_dense = spec_of("qwen3-8b"), replace(s, max_model_len=8192)  # all FlashInfer: warmed up before
    r_dense = resolve(dense, gb10, s_dense)
    assert graph_count(dense, s_dense, r_dense)[1] and flashinfer_workspace_in_capture(dense, s_dense, r_dense) == 0


def test_flashinfer_workspace_in_the_estimate_of_every_model_it_serves():
    # gpu_model_runner.py profile_cudagraph_memory (0.19.0, 0.20.0) profiles on new metadata builders (minimal KV
    # cache), before any attention ran: the first FULL warm-up allocates FlashInfer's 394 MiB workspace inside the
    # estimate, dense model or hybrid, while capture_model's "took" holds it only for the hybrids (the dense model's
    # kernel warm-up allocated it first)
    from dataclasses import replace

    from oomkit.engines.vllm.phases import (
        FLASHINFER_WORKSPACE,
        cudagraph_actual_bytes,
        cudagraph_estimate_bytes,
        fa3_split_bytes,
        flashinfer_workspace_in_estimate,
    )
    from tests.test_vllm_phases import H100

    spec = spec_of("qwen3-8b")
    fi = VllmSettings(engine_version="0.20.0", max_model_len=8192, attention_backend="FLASHINFER")
    fa = replace(fi, attention_backend=None)
    r_fi, r_fa = resolve(spec, (H100,), fi), resolve(spec, (H100,), fa)
    assert flashinfer_workspace_in_estimate(spec, fi, r_fi) == FLASHINFER_WORKSPACE
    assert cudagraph_estimate_bytes(spec, fi, r_fi) - cudagraph_estimate_bytes(spec, fa, r_fa) == \
        FLASHINFER_WORKSPACE - fa3_split_bytes(spec, fa, r_fa)
    assert cudagraph_actual_bytes(spec, fa, r_fa) - cudagraph_actual_bytes(spec, fi, r_fi) == \
        fa3_split_bytes(spec, fa, r_fa)
    for other in (replace(fi, cudagraph_mode="PIECEWISE"), replace(fi, engine_version="0.18.0"),
                  replace(fi, engine_version="0.34.0"), fa):
        assert flashinfer_workspace_in_estimate(spec, other, resolve(spec, (H100,), other)) == 0, other
    # the A100's default with an fp8 cache (FlashAttention 2 holds none): FlashInfer, and its workspace
    a100 = gpus("NVIDIA A100-SXM4-80GB", 1)
    fp8 = replace(fa, kv_cache_dtype="fp8")
    assert flashinfer_workspace_in_estimate(spec, fp8, resolve(spec, a100, fp8)) == FLASHINFER_WORKSPACE


def test_few_graphs_cost_the_one_off_and_many_add_a_share_per_graph_and_layer():
    # what the capture of Llama-3.1-8B costs on an H100 with the default 51 + 51 graphs ("took 0.91 GiB",
    # llmd-llama-3.1-8b-h100-v0.19-16384) and with --max-num-seqs 2 (3 + 2 graphs to 4 tokens): the one-off stays, the
    # split buffers shrink with the largest FULL graph and the per-graph share goes
    from oomkit.engines.vllm.phases import CG_ONE_OFF_HOPPER, fa3_split_bytes
    from tests.test_vllm_phases import H100

    spec = spec_of("llama-3.1-8b-instruct")
    s_few = VllmSettings(engine_version="0.19.0", max_model_len=8192, max_num_seqs=2)
    many = ENGINE.estimate(spec, (H100,), VllmSettings(engine_version="0.19.0", max_model_len=8192)).engine_view
    few = ENGINE.estimate(spec, (H100,), s_few).engine_view
    assert (few["cudagraph_piecewise_graphs"], few["cudagraph_full_graphs"]) == (3, 2)
    assert fa3_split_bytes(spec, s_few, resolve(spec, (H100,), s_few)) == 4 * MiB  # 2 + 2 MiB blocks at 4 tokens
    assert CG_ONE_OFF_HOPPER + 4 * MiB < few["cudagraph_actual_bytes"] < CG_ONE_OFF_HOPPER + 8 * MiB
    assert abs(many["cudagraph_actual_bytes"] - 0.91 * GiB) < BAND * 0.91 * GiB


def test_fa3_split_buffers_by_hand():
    # flash_attn.py: 32 splits for every FULL batch up to the largest capture size; FA3's mha_fwd allocates
    # out_accum [32, heads, tokens, head_dim_v] and softmax_lse_accum [32, heads, tokens] in fp32, each a block of the
    # pool (2 MiB granules). Llama-3.1-8B (32 heads x 128) at 512 tokens: 256 MiB + 2 MiB; at TP 2 16 heads a rank
    from dataclasses import replace

    from oomkit.engines.vllm.phases import fa3_split_bytes
    from tests.test_vllm_phases import H100

    spec = spec_of("llama-3.1-8b-instruct")
    s = VllmSettings(engine_version="0.19.0", max_model_len=8192)
    assert fa3_split_bytes(spec, s, resolve(spec, (H100,), s)) == (256 + 2) * MiB
    tp2 = replace(s, tensor_parallel_size=2)
    assert fa3_split_bytes(spec, tp2, resolve(spec, (H100, H100), tp2)) == (128 + 2) * MiB
    # no FULL graph, no split buffers: PIECEWISE only, FA2 (an Ampere part), another backend
    for other, gpu in ((replace(s, cudagraph_mode="PIECEWISE"), (H100,)), (s, gpus(RTX3090, 1)),
                       (replace(s, engine_version="0.23.0", attention_backend="flashinfer"), (H100,))):
        assert fa3_split_bytes(spec, other, resolve(spec, gpu, other)) == 0
    # gpt-oss (64 heads x 64) captures FULL graphs to 1,024 tokens; FA3 splits none past 992 requests, so the largest
    # graph that splits is 992's: 32 x 64 x 992 x 64 x 4 B = 496 MiB, and 7.75 MiB of softmax_lse_accum -> 8
    gpt = spec_of("gpt-oss-20b")
    assert fa3_split_bytes(gpt, s, resolve(gpt, (H100,), s)) == (496 + 8) * MiB


def test_a_pipeline_rank_pays_the_share_of_its_own_layers():
    # vllm#37972's PP 8 rank: the same one-off and split buffers as the whole model would have, but a per-graph share of
    # its 7 layers (compilation/backends.py split_graph over the stage's layers alone)
    from oomkit.engines.vllm.phases import (
        CG_MOE_LAYER_EXTRA,
        CG_PER_GRAPH_LAYER,
        first_stage_layers,
        per_graph_share,
    )

    spec = spec_of("Qwen/Qwen3.5-397B-A17B")
    s = VllmSettings(engine_version="0.18.0", pipeline_parallel_size=8, max_num_seqs=128, max_model_len=262144,
                     max_num_batched_tokens=16384, quantization="fp8")
    r = resolve(spec, gpus("NVIDIA H100 80GB HBM3", 8), s)
    sizes = capture_sizes(spec, s, r)
    assert first_stage_layers(spec, r) == 7 and spec.n_trunk_layers == 60
    expected = CG_PER_GRAPH_LAYER * 7 * (1 + CG_MOE_LAYER_EXTRA) * (max(sizes) / 512) ** 0.5  # every layer MoE
    assert abs(per_graph_share(spec, r, sizes) - expected) < 1
    assert abs(per_graph_share(spec, r, sizes, 8) / per_graph_share(spec, r, sizes) - 8 / 7) < 1e-9


def _rtx_3090_death() -> tuple[dict, dict]:
    """The RTX 3090 0.17.1 run that died in the sampler warm-up: the fixture's printed figures and oomkit's phases
    (bytes by phase name) for its settings."""
    stem = "llama-3.1-8b-3090-v0.17.1-util090-sampler-fail"
    model, gpu, s = VLLM_LOGS[stem]
    assert gpu == RTX3090
    fx = fixture(stem)
    v = ENGINE.estimate(spec_of(model), devices_3090(fx, gpu, 1), s).engine_view
    return fx["printed"], {x["phase"]: x["bytes"] for x in v["phases"] if x["device"] == "CUDA0"}


NON_TORCH = "non-torch memory (NCCL / custom all-reduce buffers, cuBLAS)"


def test_rtx_3090_process_outside_weights_and_kv():
    # held 21.72 GiB at its death ("this process has 21.72 GiB memory in use"), 1.12 GiB beside its 14.99 GiB of
    # weights and 5.61 GiB of KV cache, the warm-up's own tensors included; oomkit's context (0.37, the 3090's 82
    # SMs), non-torch memory (0.13) and capture (0.27: a GeForce part, the one-off alone at 82 SMs; 0.65 with the
    # datacenter parts' per-graph share for 51 + 35 graphs of 32 layers) come to 0.77 GiB
    p, phases = _rtx_3090_death()
    held = round(21.72 * GiB) - p["model_loading_bytes"] - p["available_kv_cache_bytes"]
    ours = phases["CUDA context"] + phases[NON_TORCH] + phases["CUDA graph capture"]
    assert ours <= held, f"{ours / GiB:.2f} vs {held / GiB:.2f} GiB ({(ours - held) / MiB:+.0f} MiB)"


def test_rtx_3090_capture_within_what_the_oom_line_leaves():
    # the capture is the drop in free memory across capture_model: the graphs' private pools (84.00 MiB allocated,
    # at most the 45.61 MiB reserved-unallocated beside) and what the driver keeps outside PyTorch for them. Outside
    # PyTorch the process held 21.72 - 20.96 GiB - 45.61 MiB = 0.72 GiB, the context and the non-torch increase
    # included: whatever those are, the capture took at most 0.84 GiB
    p, phases = _rtx_3090_death()
    outside = round(21.72 * GiB) - round(20.96 * GiB) - round(45.61 * MiB)
    pools = round(84.00 * MiB) + round(45.61 * MiB)
    assert phases["CUDA graph capture"] <= pools + outside


def test_rtx_3090_capture_within_what_the_oom_line_leaves_beside_oomkits_context():
    # with oomkit's own context (0.372 GiB) and non-torch increase (0.130 GiB) the OOM line leaves the capture at most
    # 0.340 GiB (0.716 GiB outside PyTorch less those two, plus 84.00 MiB of graph pools and 45.61 MiB
    # reserved-unallocated); the one-off at the 3090's 82 SMs is 0.271 GiB, held out (with the datacenter parts'
    # per-graph share 0.65: +91 % past the bound)
    p, phases = _rtx_3090_death()
    outside = round(21.72 * GiB) - round(20.96 * GiB) - round(45.61 * MiB)
    pools = round(84.00 * MiB) + round(45.61 * MiB)
    bound = pools + outside - phases["CUDA context"] - phases[NON_TORCH]
    assert phases["CUDA graph capture"] <= bound, f"{phases['CUDA graph capture'] / GiB:.3f} vs {bound / GiB:.3f} GiB"


def test_datacenter_parts_keep_the_per_graph_share():
    # the same model and graphs on an H100 against a GeForce part: only the GeForce capture drops the per-graph share;
    # the H100's one-off is 152 MiB, a GeForce part's on the line through the GB10 (48 SMs, 227 MiB) and the RTX 5090
    # (170 SMs, 410 MiB): the 3090's 82 SMs 278 MiB
    from oomkit.engines.vllm.phases import CG_FIRST_PER_SM, CG_ONE_OFF_HOPPER, CG_PER_GRAPH_LAYER
    from tests.test_vllm_phases import H100

    spec = spec_of("llama-3.1-8b-instruct")
    s = VllmSettings(engine_version="0.17.1", max_model_len=8192, max_num_seqs=256)
    h100 = ENGINE.estimate(spec, (H100,), s).engine_view["cudagraph_actual_bytes"]
    geforce = ENGINE.estimate(spec, gpus(RTX3090, 1), s).engine_view["cudagraph_actual_bytes"]
    assert CG_ONE_OFF_HOPPER == 152 * MiB and CG_FIRST_PER_SM == int(1.5 * MiB)
    assert geforce == 227 * MiB + CG_FIRST_PER_SM * (82 - 48) == 278 * MiB
    # 51 + 35 graphs to 512, 32 layers; FlashAttention 3's split buffers at 256 tokens (the largest FULL graph)
    assert h100 == int(CG_ONE_OFF_HOPPER + (128 + 2) * MiB + CG_PER_GRAPH_LAYER * 32 * (51 + 35))


def test_optimization_levels_choose_the_graphs():
    # config/vllm.py OPTIMIZATION_LEVEL_00..03 (0.12 -> 0.19): -O0 captures nothing, -O1 PIECEWISE graphs only,
    # -O2 (the default) and -O3 PIECEWISE and FULL decode graphs
    from oomkit.engines.cmdline import parse_command
    from tests.test_vllm_phases import H100

    spec = spec_of("qwen3-8b")

    def graphs(*flags):
        s = parse_command(["vllm", "serve", "Qwen/Qwen3-8B", *flags], env={}).settings
        v = ENGINE.estimate(spec, (H100,), s).engine_view
        return v["cudagraph_piecewise_graphs"], v["cudagraph_full_graphs"]

    assert graphs("-O0") == (0, 0)
    assert graphs("-O1") == (51, 0)
    assert graphs() == graphs("-O2") == graphs("-O3") == (51, 51)


@pytest.mark.parametrize("argv", [["-O", "1"], ["-O1"], ["-O.level=1"], ["-O.mode=1"], ["--compilation-config", "1"],
                                  ["-O", '{"level": 1}']])
def test_every_spelling_of_the_optimization_level(argv):
    """vLLM's FlexibleArgumentParser takes -O3, -O 3, -O.level=3 (-O.mode=3 from 0.11) and -O as the short form of
    --compilation-config with a number or JSON: each gives the level that picks the graph set (-O1: PIECEWISE only)."""
    from oomkit.engines.cmdline import parse_command

    assert parse_command(["vllm", "serve", "Qwen/Qwen3-8B", *argv]).settings.optimization_level == 1


# ---------------------------------------------------------------------------------------------------------
# vLLM's own estimate ("Estimated CUDA graph memory: X GiB total", in the budget from 0.21): phases.py
# cudagraph_estimate_bytes, profile_cudagraph_memory's shape over the capture's terms. Before it, 0.30 GiB + 0.017 GiB
# per layer (fitted on the H100 0.19 logs): the DGX Spark Qwen3.6-27B 1.39 GiB against 0.61 printed (+128 %), the
# Qwen3.6-35B-A3B MTP run 0.98 against 0.19, the RTX 4090 Qwen2.5-0.5B 0.71 against 0.28.


@functools.cache
def _printed_estimates() -> tuple[tuple[str, dict, dict, int], ...]:
    """(stem, printed, engine_view, the GPU's memory) of every capture log that prints vLLM's estimate."""
    from tests.test_vllm_phases import PHASE_LOGS, devices_of, settings_of
    from tests.test_vllm_phases import fixture as phase_fixture
    from tests.test_vllm_phases import spec_of as phase_spec

    out = []
    for stem, model in sorted(PHASE_LOGS.items()):
        fx = phase_fixture(stem)
        if "cudagraph_estimate_bytes" in fx["printed"]:
            devs = devices_of(fx)
            out.append((stem, fx["printed"], ENGINE.estimate(phase_spec(model), devs, settings_of(fx)).engine_view,
                        devs[0].memory_bytes))
    for stem in sorted(LOGS):
        fx, _, _, est = _estimate(stem)
        if "cudagraph_estimate_bytes" in fx["printed"]:
            out.append((stem, fx["printed"], est.engine_view, est.devices[0].memory_bytes))
    return tuple(out)


# granite-3.1-2b printed 1.60 GiB, 0.76 above what its own capture took ("took 0.84 GiB"): oomkit 0.83 (-0.97 % of the
# GPU; 0.69 and -1.14 % before, a strict xfail), inside the band by a hair
ESTIMATE_KNOWN: dict[str, str] = {}


@pytest.mark.parametrize("stem", [pytest.param(s, marks=pytest.mark.xfail(strict=True, reason=ESTIMATE_KNOWN[s]))
                                  if s in ESTIMATE_KNOWN else s for s, *_ in _printed_estimates()])
def test_estimate_within_a_percent_of_the_gpu(stem):
    # the estimate is a budget term from 0.21: held to 1 % of the GPU's memory (the available-KV band is 3 %)
    _, p, v, total = next(x for x in _printed_estimates() if x[0] == stem)
    ours = next(iter(v["cudagraph_bytes"].values()))
    err = (ours - p["cudagraph_estimate_bytes"]) / total
    assert abs(err) < 0.01, f"{stem}: {ours / GiB:.2f} vs {p['cudagraph_estimate_bytes'] / GiB:.2f} GiB ({err:+.2%})"


@pytest.mark.parametrize("stem, printed", [
    ("qwen3.6-27b-nvfp4-mixed-dgx-spark-v0.23", 0.61),  # 0.62 here (+1 %); 1.39 before
    ("qwen3.6-35b-a3b-nvfp4-mixed-dgx-spark-mtp2-v0.22", 0.19),  # 0.23 (+20 %); 0.98 before
    pytest.param("qwen2.5-0.5b-4090-v0.24", 0.28, marks=pytest.mark.xfail(strict=True, reason=(
        "RTX 4090, Qwen2.5-0.5B on 0.24: oomkit 0.42 GiB (the 0.34 one-off at 128 SMs and vLLM's 1 MiB floor for 84 "
        "further graphs) against 0.28 printed (+50 %, 0.14 GiB: 0.6 % of the GPU; 0.45 and +61 % before); the run's "
        "capture took 0.38, so vLLM's own profiling capture of the first graph (at most 0.20 GiB, 0.28 less the 84 MiB "
        "floor) is half of what the real first capture takes on this GeForce part; not fitted"))),
])
def test_estimate_against_the_log_from_0_21(stem, printed):
    # the logs whose estimate is in the budget and is not the host's memory (the GB10 27B MTP run printed -0.81)
    fx, _, _, est = _estimate(stem)
    took = fx["printed"]["cudagraph_estimate_bytes"]
    assert fx["printed"]["cudagraph_estimate_gib"] == f"{printed:.2f}"
    ours = est.engine_view["cudagraph_bytes"]["CUDA0"]
    assert abs(ours - took) / took < BAND, f"{stem}: {ours / GiB:.2f} vs {took / GiB:.2f} GiB"


def test_estimate_by_hand():
    # gpu_model_runner.py profile_cudagraph_memory (0.19 -> 0.33): the larger first capture of the two modes (FULL's
    # with FlashAttention 3's split buffers) + max(per graph, 1 MiB) x (n - 1) per mode. Llama-3.1-8B on an H100 (51 +
    # 51 graphs to 512, 32 layers): 152 MiB + 258 MiB + 144.1 KiB x 32 x (50 + 50); a GeForce part takes vLLM's 1 MiB
    # floor per further graph
    from dataclasses import replace

    from oomkit.engines.vllm.phases import (
        CG_ONE_OFF_HOPPER,
        CG_PER_GRAPH_LAYER,
        cudagraph_estimate_bytes,
        first_capture,
    )
    from tests.test_vllm_phases import H100

    spec = spec_of("llama-3.1-8b-instruct")
    s = VllmSettings(engine_version="0.23.0", max_model_len=8192, use_v2_model_runner=False)
    assert cudagraph_estimate_bytes(spec, s, resolve(spec, (H100,), s)) == \
        int(CG_ONE_OFF_HOPPER + 258 * MiB + CG_PER_GRAPH_LAYER * 32 * (50 + 50))
    r = resolve(spec, gpus(RTX3090, 1), s)
    assert cudagraph_estimate_bytes(spec, s, r) == int(first_capture(r) + MiB * (50 + 34))
    assert cudagraph_estimate_bytes(spec, replace(s, enforce_eager=True), r) == 0
    # model runner V2 (v1/worker/gpu/cudagraph_utils.py, 0.29+): every PIECEWISE graph measured, the FULL ones from
    # the two largest: the one-off, the split buffers (V2 builds its metadata with the same FlashAttention builder)
    # and a share for each of the 51 + 51 graphs
    v2 = VllmSettings(engine_version="0.29.0", max_model_len=8192)
    r2 = resolve(spec, (H100,), v2)
    assert r2.runner_v2
    assert cudagraph_estimate_bytes(spec, v2, r2) == \
        int(CG_ONE_OFF_HOPPER + 258 * MiB + CG_PER_GRAPH_LAYER * 32 * (51 + 51))


# ---------------------------------------------------------------------------------------------------------
# New MoE logs (tests/fixtures/engine_logs/vllm/capture/, held out: no constant was fitted on them)

CAPTURE = Path(__file__).parent / "fixtures" / "engine_logs" / "vllm" / "capture"


def _capture_fixture(stem: str) -> dict:
    return json.loads((CAPTURE / f"{stem}.json").read_text(encoding="utf-8"))


@pytest.mark.xfail(strict=True, reason=(
    "vllm#50722, Qwen3.5-35B-A3B bf16 at TP 4 (Triton fused MoE, 30 gated-delta-net and 10 attention layers, all MoE, "
    "80 GB-class GPU): capture_model took 1.34 GiB on both runs; at the log's 16 FULL graphs (--max-num-seqs 104: 29 + "
    "16 graphs to 208, inferred) oomkit gives 0.41 (-70 %; 0.47 and -65 % before), at vLLM's largest default set (51 + "
    "51 to 512) 1.08 (-19 %; 0.70 and -48 % before). vLLM's own estimate (1.32 and 1.49 GiB, the two largest graphs "
    "of each mode extrapolated) sees it, so about 1 GiB is in the first capture of this model, beyond the one-off of "
    "the dense H100 logs; not found in the source (the MoE modular kernels take their workspace from the profile "
    "run's, v1/worker/workspace.py; the gated delta net updates its state in place), not fitted"))
def test_qwen3_5_35b_a3b_tp4_capture_vllm_50722():
    fx = _capture_fixture("qwen3.5-35b-a3b-tp4-80gb-triton-moe-issue50722")
    from tests.test_vllm_phases import H100

    spec = spec_of("Qwen/Qwen3.5-35B-A3B")
    s = VllmSettings(engine_version="0.23.0", tensor_parallel_size=4, gpu_memory_utilization=0.85, max_num_seqs=104)
    v = ENGINE.estimate(spec, (H100,) * 4, s).engine_view
    assert v["cudagraph_full_graphs"] == 16  # "Capturing CUDA graphs (decode, FULL): 16/16"
    assert abs(v["model_loading_bytes"]["CUDA0"] - fx["printed"]["model_loading_bytes"]) / \
        fx["printed"]["model_loading_bytes"] < 0.03  # bf16 at TP 4: the model the log ran
    assert_capture_in_band(v, fx)


def test_qwen3_5_397b_pp8_capture_vllm_37972():
    # vllm#37972, Qwen3.5-397B-A17B-FP8 at PP 8 (35 + 19 graphs at --max-num-seqs 128, 0.18.x, 80 GB-class GPU): took
    # 0.27 GiB (276 MiB) on every rank the log quotes (PP0, PP1, PP2, PP7: 7 of the 60 layers each here), vLLM's
    # estimate 0.29. oomkit 0.33 (+23 %; the ranks of 8 layers 0.34, +26 %) and estimate 0.33 (+14 %): 152 MiB of
    # one-off, 130 MiB of FlashAttention 3 split buffers at 128 tokens (32 heads x 256), and 35 + 19 graphs of the
    # rank's 7 MoE layers. Before: 0.62 (+128 %) and 0.61, the 386 MiB first capture alone above the whole of it and
    # a per-graph share of the whole model's hidden size
    fx = _capture_fixture("qwen3.5-397b-a17b-fp8-pp8-80gb-v0.18-issue37972")
    st = fx["settings"]
    s = VllmSettings(engine_version="0.18.0", pipeline_parallel_size=8, max_num_seqs=st["max_num_seqs"],
                     max_num_batched_tokens=st["max_num_batched_tokens"], max_model_len=262144,
                     gpu_memory_utilization=st["gpu_memory_utilization"], quantization="fp8")
    v = ENGINE.estimate(spec_of("Qwen/Qwen3.5-397B-A17B"), gpus("NVIDIA H100 80GB HBM3", 8), s).engine_view
    assert (v["cudagraph_piecewise_graphs"], v["cudagraph_full_graphs"]) == (35, 19)  # vllm#39610's graph sets
    assert_capture_in_band(v, fx, "PP0")
    took = fx["printed"]["cudagraph_actual_bytes"]
    for rank in (0, 1, 2, 7):  # the workers the log quotes
        phase = next(x for x in v["phases"] if x["device"] == f"CUDA{rank}" and x["phase"] == "CUDA graph capture")
        assert abs(phase["bytes"] - took) / took < BAND, (rank, phase["bytes"] / GiB)
    estimate = fx["printed"]["cudagraph_estimate_bytes"]
    assert abs(v["cudagraph_bytes"]["CUDA0"] - estimate) / estimate < BAND


@pytest.mark.xfail(strict=True, reason=(
    "vllm#50159 (manunicholasjacob), Qwen2.5-0.5B on an RTX PRO 6000 Blackwell Server Edition (188 SMs), 0.26.0, model "
    "runner V1: its graph run holds 17,584 KV tokens fewer than its eager run, 0.20 GiB of CUDA-graph estimate; oomkit "
    "0.76 GiB (+276 %, 0.58 % of the GPU; 0.62 and +207 % before): 0.43 of it the one-off at 188 SMs on the line "
    "through the GB10 and the RTX 5090 (1.50 MiB an SM), the rest the per-graph share of 51 + 51 graphs of 24 layers, "
    "which the GeForce parts do not take and this part (the RTX 5090's GB202, not named GeForce) is charged. The same "
    "model's RTX 4090 log printed 0.28 GiB: on both the first graph vLLM profiles costs at most about 0.2 GiB. What "
    "the one-off grows with is not found in the source; not fitted"))
def test_rtx_pro_6000_blackwell_estimate_from_kv_tokens_vllm_50159():
    from oomkit.hardware.catalog import with_facts
    from oomkit.memory import Device

    fx = _capture_fixture("qwen2.5-0.5b-rtx-pro-6000-blackwell-v0.26-estimate-from-kv-issue50159")
    p = fx["printed"]
    per_token = 24 * 2 * 2 * 64 * 2  # 24 layers x K and V x 2 KV heads x head_dim 64 x bf16
    logged = (p["kv_cache_tokens_v1_eager"] - p["kv_cache_tokens_v1_graphs"]) * per_token
    assert abs(logged / GiB - 0.2012) < 0.001
    gpu = (with_facts(Device("CUDA0", fx["gpus"][0]["name"], 97887 * MiB)),)
    spec = spec_of(fx["model"])
    for usage in ("llm", "serve"):  # the smaller of vLLM's two batch defaults' figures
        s = VllmSettings(engine_version="0.26.0", gpu_memory_utilization=0.85, max_model_len=2048,
                         usage_context=usage, use_v2_model_runner=False)
        ours = ENGINE.estimate(spec, gpu, s).engine_view["cudagraph_bytes"]["CUDA0"]
        assert abs(ours - logged) / logged < BAND, f"{usage}: {ours / GiB:.2f} vs {logged / GiB:.2f} GiB"
