"""Held-out SGLang start-up logs, fourth set (tests/fixtures/engine_logs/sglang/heldout4/, each with its URL, the lines
kept verbatim and the release read from the log or the thread's date). No constant in oomkit was fitted on any of
them; the figures below are the logs', never oomkit's. "before" is oomkit at the commit before the two weight rules
below, "after" with them.

| log | release | GPUs | model | figure | printed | before | after |
|---|---|---|---|---|---|---|---|
| sglang#14700 | 0.5.6 (dsv32 image) | 8x B300, DP8 TP8, DP attention, fp8 KV | DeepSeek-V3.2 | weights per rank | 93.06 GB | 91.98 GiB (-1.2 %) | same |
| | | | | free memory after the weights, end to end | 172.51 GB | 193.52 GiB (+7.3 % of the GPU) | 174.11 GiB (+0.6 %) |
| | | | | KV size at the printed 3,627,136 tokens | 162.38 GB | 162.38 GiB | same |
| sglang#8337 | 0.4.9 era | 4 x 8 H200, PP4 TP8 | Qwen3-235B-A22B (BF16) | weights, stage 0 rank 0 | 13.73 GB | 13.51 GiB (-1.6 %) | same |
| | | | | the same with --quantization fp8 (online) | 19.99 GB | 6.84 GiB (-66 %) | 19.78 GiB (-1.1 %) |
| sglang#6001 | 0.4.6 | 8x MI308X, TP8 | DeepSeek-R1 (FP8) | weights per rank | 81.66 GB | 79.43 GiB (-2.7 %) | 81.51 GiB (-0.2 %) |
| sglang#13466 | 0.5.5 era | 8 GPUs, TP8 | Kimi-K2-Instruct-0905 | KV size at 8,050 tokens (MLA) | 0.53 GB | 0.53 GiB | same |
| sglang#15909 | Dec 2025 | 4 GPUs, TP4 | Qwen3-Omni-30B-A3B | K / V size at 2,090,351 tokens | 23.92 GB | 23.92 GiB | same |
| sglang#27537 | 0.5.6 | 2x MTT S5000, TP2 | Qwen3-30B-A3B FP8 (inferred) | K / V size at 1,106,304 tokens | 25.32 GB | 25.32 GiB | same |
| sglang#5755 | main of 2025-04-25 | 8x H100 80GB, TP8 | Llama-4-Scout | the failing allocation (req_to_token) | 80.04 GiB | 80.04 GiB; does not start | same |
| | | | | the phase that fails | ReqToTokenPool | attention backend init | req_to_token pool |
| ktransformers#1757 | fork, Dec 2025 | RTX PRO 6000 | MiniMax-M2.1 | tokens from the printed 5.45 GB budget | 23,063 | 23,043 (-0.09 %) | same |
| | | | | K / V size at 23,063 tokens | 2.73 GB | 2.73 GiB | same |

The rules these logs led to, read in the wheels (settings.ERAS, weights.py), and one catalog fact:
- hardware/gpus.json: the B300's memory is nvidia-smi's 275,040 MiB (268.6 GiB), not the 288 GiB the nominal "288 GB"
  was taken for; sglang#14700 frees 265.57 GiB before the weights, which the nominal size could not explain.
- shared_experts_replicated (0.4.5.post2-0.4.6.post5): DeepSeek V3/R1 fuse tp_size replicas of the shared expert
  into the routed experts (deepseek_v2.py determine_n_share_experts_fusion; the log prints "Cloning 8 replicas of
  the shared expert into MoE"), a whole shared expert on every rank; CUDA only from 0.4.6.post4, one replica from 0.4.7.
- experts_held_before_quantization (qwen3_moe.py 0.4.6.post5-0.5.8, deepseek_v2.py 0.4.6.post5): load_weights keeps
  every routed-expert tensor in routed_experts_weights_of_layer before Fp8MoEMethod.process_weights_after_loading
  replaces them, so online fp8 holds the bf16 experts beside their fp8 copies (the issue's "both are stored").
- layout.py: when init_memory_pool itself runs out, the failing phase is the pool SGLang allocates first, the
  ReqToTokenPool, then the token-to-KV pool (model_runner.py init_memory_pool in every wheel read), not the
  attention-backend init after them.

None of these logs prints "Capture cuda graph end ... mem usage" (sglang#14700 dies in the capture on FlashMLA's
missing SM103 kernel), so no capture figure is held here. What is not held, and why: sglang#14700's pool from the
printed free memory (its mem_fraction_static is not in the excerpt: 0.9 reproduces the count to 0.04 %, SGLang 0.5.6's
default for a B300 under DP8 attention, 0.834 by server_args.py _handle_gpu_memory_settings, gives -11 %),
sglang#13466's end-to-end pool (GPU not named, piecewise capture before the pool), the MiniMax weights (ktransformers
keeps the experts on the CPU).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oomkit.engines import sglang as sg
from oomkit.hardware.catalog import with_facts
from oomkit.memory import Device
from oomkit.units import GiB, MiB
from tests.test_vllm_startup import spec_of

HERE = Path(__file__).parent / "fixtures" / "engine_logs" / "sglang" / "heldout4"
WEIGHTS_LIMIT = 0.03  # weights per rank, relative to the printed load
TOKENS_LIMIT = 0.03  # tokens from a printed budget
H100 = ("NVIDIA H100 80GB HBM3", 81559 * MiB)
H200 = ("NVIDIA H200", 143771 * MiB)
B300 = ("NVIDIA B300", 275040 * MiB)  # nvidia-smi's total (hardware/gpus.json)
MI308X = ("AMD Instinct MI308X", 192 * 1024 * MiB)  # 192 GB HBM3, a ROCm gfx942 part as the MI300X


def fixture(stem: str) -> dict:
    return json.loads((HERE / f"{stem}.json").read_text(encoding="utf-8"))


def gpus(gpu: tuple[str, int], n: int) -> tuple[Device, ...]:
    return tuple(with_facts(Device(f"CUDA{i}", gpu[0], gpu[1])) for i in range(n))


def pool_at(model: str, tokens: int, **kw) -> sg.Pool:
    """The pool SGLang allocates for `tokens` tokens: its per-token layout alone."""
    spec = spec_of(model)
    s = sg.SGLangSettings(**kw)
    return sg.kv_pools(sg.cache_layout(spec, s), s, tokens)[0]


def two(b: int) -> str:
    return f"{b / GiB:.2f}"  # SGLang prints GiB with two decimals as "GB"


def weights_error(got: int, printed: int) -> float:
    return (got - printed) / printed


# ---------------------------------------------------------------------------------------------------------
# sglang#14700: DeepSeek-V3.2 on 8x B300, DP8 TP8 with DP attention, fp8 KV cache (0.5.6)

V32 = "deepseek-v3.2-8xb300-dp8-dp-attention-fp8kv-issue14700"
V32_SETTINGS = dict(tp_size=8, dp_size=8, enable_dp_attention=True, kv_cache_dtype="fp8_e4m3", engine_version="0.5.6")


def test_dsv32_dp_attention_weights_per_rank():
    # attention, embedding and lm_head whole on each DP-attention rank, the 256 experts split over 8, the next-n
    # layer left to the draft worker: 91.98 GiB
    est = sg.ENGINE.estimate(spec_of("deepseek-v3.2"), gpus(B300, 8), sg.SGLangSettings(**V32_SETTINGS))
    err = weights_error(est.devices[0].weights_bytes, fixture(V32)["printed"]["weights_mem_bytes"])
    assert abs(err) < WEIGHTS_LIMIT, f"{err:+.2%}"


def test_dsv32_free_memory_after_the_weights_on_the_catalog_b300():
    # end to end on the catalog's B300 (nvidia-smi's 275,040 MiB): the GPU less the pre-load overhead and the weights,
    # 174.11 GiB against the printed 172.51 (+0.6 % of the GPU; the nominal 288 GiB gave 193.52, +7.3 %)
    from oomkit.hardware.catalog import devices_for_names

    est = sg.ENGINE.estimate(spec_of("deepseek-v3.2"), devices_for_names("B300") * 8, sg.SGLangSettings(**V32_SETTINGS))
    line = next(x for x in est.engine_view["log"].split("\n") if x.startswith("Load weight end."))
    after = float(line.split("avail mem=")[1].split(" GB")[0]) * GiB
    printed = fixture(V32)["printed"]["weights_avail_after_bytes"]
    err = (after - printed) / est.devices[0].memory_bytes
    assert abs(err) < 0.03, f"{err:+.2%}"


def test_dsv32_kv_size_at_the_printed_tokens():
    # one packed fp8 latent row (656 B) and the NSA index keys (132 B) a token and layer, 61 layers: 48,068 B a token
    p = fixture(V32)["printed"]
    pool = pool_at("deepseek-v3.2", p["kv_cache_tokens"], **V32_SETTINGS)
    assert two(pool.k_bytes) == p["kv_size_gb"]


# ---------------------------------------------------------------------------------------------------------
# sglang#8337: Qwen3-235B-A22B over four 8x H200 nodes, PP4 TP8 (July 2025)

Q235 = "qwen3-235b-a22b-pp4-tp8-4x8xh200-online-fp8-issue8337"


def _q235(**kw):
    return sg.ENGINE.estimate(spec_of("qwen3-235b-a22b"), gpus(H200, 32),
                              sg.SGLangSettings(tp_size=8, pp_size=4, nnodes=4, engine_version="0.4.9", **kw))


def test_qwen3_235b_pp4_tp8_stage0_weights():
    # the first stage's 24 of 94 layers and the embedding, a TP8 shard each: 13.51 GiB
    est = _q235()
    err = weights_error(est.devices[0].weights_bytes, fixture(Q235)["printed"]["weights_mem_bytes"])
    assert abs(err) < WEIGHTS_LIMIT, f"{err:+.2%}"


def test_qwen3_235b_online_fp8_keeps_the_bf16_experts():
    # --quantization fp8 on the BF16 checkpoint: the fp8 weights (6.84 GiB) and the bf16 routed experts that
    # Qwen3MoeForCausalLM.load_weights still references in routed_experts_weights_of_layer (weights.py
    # experts_held_before_quantization): 19.78 GiB
    est = _q235(quantization="fp8")
    err = weights_error(est.devices[0].weights_bytes, fixture(Q235)["printed"]["weights_mem_online_fp8_bytes"])
    assert abs(err) < WEIGHTS_LIMIT, f"{err:+.2%}"
    assert any("routed_experts_weights_of_layer" in w for w in est.warnings)


def test_experts_held_by_release():
    from oomkit.engines.sglang.weights import experts_held_before_quantization as held

    q3, ds = spec_of("qwen3-235b-a22b"), spec_of("deepseek-r1")
    assert held(q3, sg.SGLangSettings(engine_version="0.4.6.post5")) and held(q3, sg.SGLangSettings(engine_version="0.5.8"))
    assert not held(q3, sg.SGLangSettings(engine_version="0.4.6.post4"))
    assert not held(q3, sg.SGLangSettings(engine_version="0.5.9"))  # a LazyValue, never read at start-up
    assert held(ds, sg.SGLangSettings(engine_version="0.4.6.post5"))
    assert not held(ds, sg.SGLangSettings(engine_version="0.4.7"))
    # and the quantized checkpoint or no --quantization adds nothing
    assert _q235().devices[0].weights_bytes < 14 * GiB


# ---------------------------------------------------------------------------------------------------------
# sglang#6001: DeepSeek-R1 on 8x MI308X, TP8 (0.4.6)


def test_deepseek_r1_tp8_weights_on_mi308x():
    # "Cloning 8 replicas of the shared expert into MoE": 0.4.6 fuses tp_size copies of the shared expert into the
    # routed experts on a ROCm gfx9 part (weights.py shared_experts_replicated), a whole shared expert a rank where
    # the TP-split MLP held an eighth: 81.51 GiB (79.43, -2.7 %, without the rule)
    est = sg.ENGINE.estimate(spec_of("deepseek-r1"), gpus(MI308X, 8), sg.SGLangSettings(tp_size=8, engine_version="0.4.6"))
    err = weights_error(est.devices[0].weights_bytes, fixture("deepseek-r1-8xmi308x-tp8-v0.4.6-issue6001")["printed"]
                        ["weights_mem_bytes"])
    assert abs(err) < 0.005, f"{err:+.2%}"
    assert any("replicas" in w for w in est.warnings)


def test_shared_expert_replicas_by_release_and_platform():
    # the same run as SGLang's rule reads it: 0.4.5.post1 (opt-in only), 0.4.6.post4 (CUDA only), 0.4.7 (one replica,
    # the MLP's share) and an A100 (capability 8.0) keep the TP-split MLP; 0.4.5.post2 on an H100 fuses tp_size replicas
    from oomkit.engines.sglang.weights import shared_experts_replicated

    spec = spec_of("deepseek-r1")

    def fused(version, cc, hip=False, **kw):
        return shared_experts_replicated(spec, sg.SGLangSettings(tp_size=8, engine_version=version, **kw), cc, hip)

    assert fused("0.4.6", None, hip=True) and fused("0.4.5.post2", (9, 0)) and fused("0.4.6.post5", (10, 0))
    assert not fused("0.4.5.post1", (9, 0)) and not fused("0.4.6.post4", None, hip=True)
    assert not fused("0.4.7", (9, 0)) and not fused("0.4.6", (8, 0)) and not fused("0.4.6", (9, 0), enable_deepep_moe=True)
    assert not shared_experts_replicated(spec_of("kimi-k2-instruct"), sg.SGLangSettings(tp_size=8, engine_version="0.4.6"),
                                         (9, 0), False)  # 384 routed experts


# ---------------------------------------------------------------------------------------------------------
# Pool layouts: the size SGLang prints for the token count it prints


@pytest.mark.parametrize(("stem", "model", "settings", "keys"), [
    # sglang#13466: MLA keeps one latent row (512 + 64) a token and layer on every TP rank
    ("kimi-k2-instruct-0905-tp8-piecewise-pr13466", "kimi-k2-instruct-0905",
     dict(tp_size=8, engine_version="0.5.5"), ("kv_size_gb",)),
    # sglang#15909: the Omni thinker's text attention is Qwen3-30B-A3B's (48 layers, 4 KV heads x 128), one head a rank
    ("qwen3-omni-30b-a3b-tp4-pr15909", "qwen3-30b-a3b", dict(tp_size=4, engine_version="0.5.6"),
     ("k_size_gb", "v_size_gb")),
    # sglang#27537: two KV heads a rank under TP2 (block-FP8 weights do not change the bf16 cache)
    ("qwen3-30b-a3b-fp8-tp2-musa-s5000-v0.5.6-pr27537", "qwen3-30b-a3b", dict(tp_size=2, engine_version="0.5.6"),
     ("k_size_gb", "v_size_gb")),
    # ktransformers#1757: MiniMax-M2.1, 62 layers x 8 KV heads x 128 in fp16
    ("minimax-m2.1-rtx-pro-6000-ktransformers-sglang-1757", "minimax-m2.1",
     dict(dtype="float16", engine_version="0.5.6"), ("k_size_gb", "v_size_gb")),
])
def test_pool_size_at_the_printed_tokens(stem, model, settings, keys):
    p = fixture(stem)["printed"]
    pool = pool_at(model, p["kv_cache_tokens"], **settings)
    got = (two(pool.k_bytes),) if len(keys) == 1 else (two(pool.k_bytes), two(pool.v_bytes))
    assert got == tuple(p[k] for k in keys)


def test_minimax_tokens_from_the_printed_kv_budget():
    # "The available memory for KV cache is 5.45 GB" then "#tokens: 23063": the budget over the cell
    # (profile_max_num_token), the printed budget itself rounded to 0.01 GB
    stem = "minimax-m2.1-rtx-pro-6000-ktransformers-sglang-1757"
    p = fixture(stem)["printed"]
    spec = spec_of("minimax-m2.1")
    s = sg.SGLangSettings(dtype="float16", engine_version="0.5.6")
    pool = sg.size_pool(spec, s, kv_budget=p["kv_budget_bytes"], lay=sg.cache_layout(spec, s))
    err = (pool.max_total_num_tokens - p["kv_cache_tokens"]) / p["kv_cache_tokens"]
    assert abs(err) < TOKENS_LIMIT, f"{err:+.2%}"


# ---------------------------------------------------------------------------------------------------------
# sglang#5755: Llama-4-Scout TP8 on 80 GB GPUs, its 10M-token context


def test_llama4_scout_req_to_token_table_does_not_fit():
    stem = "llama-4-scout-tp8-h100-req-to-token-oom-issue5755"
    p = fixture(stem)["printed"]
    est = sg.ENGINE.estimate(spec_of("llama-4-scout-17b-16e-instruct"), gpus(H100, 8),
                             sg.SGLangSettings(tp_size=8, disable_cuda_graph=True, engine_version="0.4.5.post3"))
    by = {ph["phase"]: ph["bytes"] for ph in est.engine_view["phases"]}
    # 2,049 rows x (10,485,760 + 4) int32: "Tried to allocate 80.04 GiB" on a 79.10 GiB GPU
    assert two(by["req_to_token pool"]) == p["failed_alloc_gib"]
    assert est.fits is False
    # init_memory_pool allocates the ReqToTokenPool before the token-to-KV pool (model_runner.py, 0.4.5.post3 and 0.4.6
    # wheels; model_runner_kv_cache_mixin.py _init_pools in 0.5.x): that allocation is the one that fails (before:
    # "attention backend init", the first phase after the pools)
    failed = est.engine_view["failed_phase"]
    assert failed["phase"] == "req_to_token pool" and not failed["after_kv"]
    assert "80.04 GiB: 2049 rows x 10,485,764 int32" in est.engine_view["error"]


def test_pool_phase_when_the_table_fits_but_not_the_kv_pool():
    # the same settings on 141 GB H200s: the 80.04 GiB table fits after the weights, the KV pool profiled beside it
    # (the profile does not count the table) does not: the second allocation of init_memory_pool fails
    est = sg.ENGINE.estimate(spec_of("llama-4-scout-17b-16e-instruct"), gpus(H200, 8),
                             sg.SGLangSettings(tp_size=8, disable_cuda_graph=True, engine_version="0.4.5.post3"))
    failed = est.engine_view["failed_phase"]
    assert est.fits is False and failed["phase"] == "KV cache pool" and not failed["after_kv"]
    assert failed["left_bytes"] < failed["needed_bytes"]
