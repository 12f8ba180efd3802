"""Held-out vLLM start-up logs, eighteenth set (tests/fixtures/engine_logs/vllm/heldout18/): kaitakuai/experiments
benchmark pages that no test cited before (each path grepped in tests/ first; sets 3 and 17 cite other pages of the
same repository): MiniMax-M2.7 (block FP8 MoE) on 4x A100 (Marlin), 2x H200 (FlashInfer CUTLASS MoE) and 4x RTX PRO
6000 Blackwell Server Edition (SM 12.0, Triton MoE) on 0.19.0, on one B300 with an fp8 KV cache on 0.20.0, and the
compressed-tensors W4A16 (AWQ) MiniMax-M2.7 at TP 2 on A100s, refused at 131,072 tokens; DeepSeek-V4-Flash on 2x B200
on 0.25.1: the FP8 checkpoint eager and with the breakable CUDA graph, and nvidia's NVFP4 checkpoint (ModelOpt NVFP4
routed experts, block-FP8 linear layers), Intel's W4A16 AutoRound DeepSeek-V4-Flash on 2x H200 and the FP8 one on a
B300 (TP 1, the Gonka PoC fork). The printed figures were recorded before oomkit was run on them; none was
used to fit a constant. "before" is oomkit before the DeepSeek-V4 NVFP4 rule below, "after" with it.
Limits: weights 3 % of the printed load; the KV budget 3 % of the GPU's memory (vLLM's total: 80.00 GiB A100,
140.40 GiB H200, 95.59 GiB RTX PRO 6000 Server Edition, 179.06 GiB B200, 268.59 GiB B300); tokens 3 %.

| page | release | GPUs, flags | figure | printed | before | after |
|---|---|---|---|---|---|---|
| minimax-m27-fp8-4xa100 | 0.19.0 | 4x A100, TP4, 131,072, util 0.92, Marlin MoE | weights | 54.58 GiB | 54.49 (-0.17 %) | same |
| | | | available KV | 13.66 GiB | 15.93 (+2.84 %) | same |
| | | | tokens for the printed budget | 231,088 | 231,014 (-0.03 %) | same |
| | | | verdict | starts | starts | same |
| minimax-m27-fp8-2xh200 | 0.19.0 | 2x H200, TP2, 131,072 | weights | 107.3 GiB | 107.21 (-0.09 %) | same |
| | | | available KV | 16.58 GiB | 18.24 (+1.18 %) | same |
| | | | tokens for the printed budget | 140,192 | 140,198 (+0.00 %) | same |
| | | | verdict | starts | starts | same |
| minimax-m27-fp8-4xrtxpro6000 | 0.19.0 | 4x RTX PRO 6000 SE, TP4, 32,768 | weights ("56 GiB", after weights, rounded) | 55.5-56.5 | 53.67 (-3.3 % from 55.5) | same: strict xfail |
| | | | available KV | 29.19 GiB | 32.37 (+3.33 %) | same: strict xfail |
| | | | tokens for the printed budget | 493,712 | 493,674 (-0.01 %) | same |
| | | | verdict | starts | starts | same |
| minimax-m27-awq4bit-2xa100 | 0.19.0 | 2x A100, TP2, W4A16, 131,072 | KV one request needs | 15.5 GiB | 15.5 | same |
| | | | available KV | 13.49 GiB | 14.19 (+0.88 %) | same |
| | | | verdict at 131,072 / 32,768 | refused / starts | refused / starts | same |
| | | | weights ("~56 GiB") | ~56 | 56.30 (+0.5 %) | same |
| minimax_m27_1xb300_sxm6 | 0.20.0 | 1x B300, TP1, fp8 KV, 180,000 | budget of the printed 221,616 tokens | 26.21 GiB | 29.91 (+1.38 %) | same |
| | | | verdict | starts | starts | same |
| deepseek-v4-flash-2xb200 | 0.25.1 | 2x B200, TP2, fp8 KV, 400k, eager | budget of the printed 2,359,479 tokens | 76.40 GiB | 72.78 (-2.02 %) | same |
| | | same, breakable CUDA graph | budget of the printed 2,300,269 tokens | 74.48 GiB | 71.11 (-1.88 %) | same |
| | | | verdicts | start | start | same |
| deepseek-v4-nvfp4-2xb200 | 0.25.1 | nvidia/DeepSeek-V4-Flash-NVFP4, 2x B200, TP2 | weights | 78.93 GiB | 74.89 (-5.12 %) | 78.92 (-0.01 %) |
| | | | verdict | starts | starts | same |
| deepseek-v4-int4-2xh200 | 0.25.1 (+ vllm#45645) | Intel W4A16 AutoRound, 2x H200, TP2, eager | weights | 72.65 GiB | 72.72 (+0.10 %) | same |
| | | | budget of the printed 1,282,446 tokens | 41.52 GiB | 40.15 (-0.98 %) | same |
| | | | verdict | starts | starts | same |
| deepseek-v4-flash-poc-1xb300 | 0.25.1 (Gonka fork) | 1x B300, TP1, graphs, 400k | weights ("~149 GiB") | ~149 | 147.29 (-1.1 %) | same |
| | | | budget of the printed 2,604,694 tokens | 84.34 GiB | 80.33 (-1.49 %) | same |
| | | | verdict | starts | starts | same |

27 of 30 figures agree before, 28 after. The rule (engines/vllm/weights.py dsv4_moe_nvfp4, settings.ERAS
dsv4_moe_nvfp4), read in the 0.22.0, 0.23.0, 0.24.0, 0.25.1 and 0.27.0 sdists (not in 0.21.0's):
models/deepseek_v4/quant_config.py DeepseekV4FP8Config.get_quant_method gives DeepSeek-V4's routed experts
ModelOptNvFp4FusedMoE (group_size 16) when the checkpoint's quantization_config names moe_quant_algo "NVFP4", and
Mxfp4MoEMethod otherwise; the linear layers stay on Fp8Config's block method. quantization/modelopt.py
ModelOptNvFp4FusedMoE.create_weights holds an expert matrix as e2m1 packed two a byte and a float8_e4m3 scale per 16
values (0.5625 B a value, where MXFP4 keeps an e8m0 scale per 32: 0.53125), plus a float32 weight_scale_2 and
input_scale per expert and shard. oomkit sized nvidia/DeepSeek-V4-Flash-NVFP4 as the MXFP4 checkpoint: 43 layers x
256 experts x 3 x 4,096 x 2,048 values x 1/32 B = 8.06 GiB less, 4.03 GiB a rank at TP 2, the whole gap.

What is left, and why it stays: every MiniMax-M2.7 budget of this set sits above the printed one, by 1.66 (H200),
2.27 (A100), 3.18 (RTX PRO 6000) and 3.70 GiB (B300) a GPU, as set 3's 0.20.0 MiniMax runs (tests/
test_vllm_sglang_heldout3.py: +1.5 to +2.6 % of the GPU) and set 17's Kimi-K2.5-NVFP4 (+3.13 %) on the same PoC
images do; the token counts for the printed budgets agree within 0.04 % in every log, so the KV cache is sized right
and the gap is memory taken before it. The AWQ page, the one run of the set whose budget is printed by vLLM's own
refusal and whose load oomkit sizes at the page's "~56 GiB", is within 0.88 %. The RTX PRO 6000 page prints its load
rounded ("56 GiB x 4", "after weights"), not vLLM's "Model loading took"; if the load was 56 GiB, 2.3 GiB of the
budget gap is weights and 0.9 GiB remains, as on the other GPUs. vLLM 0.19.0's TRITON block-FP8 MoE and CUTLASS
block-FP8 linear on SM 12.0 keep the checkpoint's tensors as loaded (no repack read that would add 2.3 GiB), so no
rule is written: a strict xfail names both figures. The DeepSeek-V4-Flash budgets sit 1.0-2.0 % of the GPU below the
printed token counts (2x B200 FP8, 2x H200 W4A16, one B300), inside the limit.

Searched and not held (corpus "issues", "pages" and "code", uncited): a Qwen3-8B start on one RTX 5090 (0.24.0,
15.27 GiB, 89,040 tokens) and a Qwen3.6-35B-A3B-AWQ TP 2 + EP start on two RTX 3090s (0.19.1, 11.62 GiB), both in
repository notes the index does not name; vllm#28747 (NVFP4A16 on a B200: a kernel error, no memory line),
vllm-project/llm-compressor#2549 (W8A8 Llama-3-8B: the excerpt has no memory line), vllm PR #20707 (112.61 GiB,
922,496 tokens: neither model nor GPU in the excerpt), LMCache/LMCache PR #3171 (DeepSeek-V4-Flash TP 8 + EP on 8x
H20, 0.20.1: no memory line in the excerpt), spark-arena/sparkrun#175 (Qwen3.5-122B-A10B NVFP4 on GB10: the excerpt
stops at the load); kaitakuai pages without a memory figure (minimax-m27-awq4bit-2xh100, glm-5.2-awq4bit-8xb200,
deepseek-v4-nvfp4-vs-fp8-1xb300, deepseek-v4-flash-0731-nvfp4-2xb200). No uncited log was found with a death after
the KV cache and its model, GPU and release all given.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from oomkit.engines.vllm import ENGINE
from oomkit.engines.vllm.args import parse_args
from oomkit.request import resolve_model
from oomkit.units import GiB
from tests.startup_heldout import died, first, fixture_loader, gpus
from tests.sweep_harness import offline, run_cli  # noqa: F401  (offline: autouse, no hub)

HERE = Path(__file__).parent / "fixtures" / "engine_logs" / "vllm" / "heldout18"
fixture = fixture_loader(HERE)
WEIGHTS_LIMIT = 0.03  # of the printed load
KV_LIMIT = 0.03  # of the GPU's memory
TOKENS_LIMIT = 0.03

MM_A100 = "minimax-m2.7-fp8-4xa100-tp4-v0.19.0-marlin-kaitaku"
MM_H200 = "minimax-m2.7-fp8-2xh200-tp2-v0.19.0-kaitaku"
MM_RTX = "minimax-m2.7-fp8-4xrtxpro6000-tp4-v0.19.0-triton-kaitaku"
MM_AWQ = "minimax-m2.7-awq-w4a16-2xa100-tp2-v0.19.0-kv-refused-kaitaku"
MM_B300 = "minimax-m2.7-fp8-1xb300-tp1-v0.20.0-fp8kv-kaitaku"
DSV4_EAGER = "deepseek-v4-flash-fp8-2xb200-tp2-v0.25.1-eager-400k-kaitaku"
DSV4_GRAPHS = "deepseek-v4-flash-fp8-2xb200-tp2-v0.25.1-cudagraph-400k-kaitaku"
DSV4_NVFP4 = "deepseek-v4-flash-nvfp4-2xb200-tp2-v0.25.1-kaitaku"
DSV4_INT4 = "deepseek-v4-flash-w4a16-autoround-2xh200-tp2-v0.25.1-eager-kaitaku"
DSV4_B300 = "deepseek-v4-flash-fp8-1xb300-tp1-v0.25.1-cudagraph-400k-gonka-fork"
STARTS = [MM_A100, MM_H200, MM_RTX, MM_B300, DSV4_EAGER, DSV4_GRAPHS, DSV4_NVFP4, DSV4_INT4, DSV4_B300]
ALL = [*STARTS, MM_AWQ]


def settings(stem: str, **changes):
    """The page's command as oomkit reads it, at the page's release."""
    fx = fixture(stem)
    _, _, s = parse_args(fx["argv"])
    return replace(s, **{"engine_version": fx["engine_version"], **changes})


def estimate(stem: str, **changes):
    fx = fixture(stem)
    g = fx["gpus"][0]
    return ENGINE.estimate(resolve_model(ENGINE, fx["model"]), gpus(g["name"], g["count"]), settings(stem, **changes))


def kv_error(stem: str, printed_bytes: float) -> float:
    est = estimate(stem)
    return (first(est.engine_view, "available_kv_cache_bytes") - printed_bytes) / est.devices[0].memory_bytes


def budget_of_printed_tokens(stem: str) -> float:
    """The budget the printed token count stands for, at oomkit's bytes a token (the page prints no budget)."""
    v = estimate(stem).engine_view
    return fixture(stem)["printed"]["kv_cache_tokens"] * first(v, "available_kv_cache_bytes") / v["kv_cache_tokens"]


@pytest.mark.parametrize("stem", ALL)
def test_command_reads_as_the_page(stem):
    _, _, s = parse_args(fixture(stem)["argv"])
    for key, value in fixture(stem)["settings"].items():
        assert getattr(s, key) == value, key


@pytest.mark.parametrize("stem", STARTS)
def test_starts(stem):
    est = estimate(stem)
    assert died(est) is None and not est.engine_view.get("error")


@pytest.mark.parametrize(("stem", "expected"), [(MM_A100, "-0.17 %"), (MM_H200, "-0.09 %"), (DSV4_NVFP4, "-0.01 %"),
                                               (DSV4_INT4, "+0.10 %")])
def test_weights(stem, expected):
    est = estimate(stem)
    printed = fixture(stem)["printed"]["model_loading_gib"] * GiB
    err = (first(est.engine_view, "model_loading_bytes") - printed) / printed
    assert abs(err) < WEIGHTS_LIMIT, f"{err:+.2%} (recorded {expected})"


@pytest.mark.parametrize("stem", [MM_A100, MM_H200])
def test_available_kv(stem):
    err = kv_error(stem, fixture(stem)["printed"]["available_kv_cache_gib"] * GiB)
    assert abs(err) < KV_LIMIT, f"available KV {err:+.2%} of the GPU"  # A100 +2.84 %, H200 +1.18 %


@pytest.mark.xfail(strict=True, reason="MiniMax-M2.7 FP8 on 4x RTX PRO 6000 SE (0.19.0, PoC image): printed 29.19 GiB, "
                   "oomkit 32.37 (+3.33 % of the GPU); the memory taken before the KV cache on these images is not "
                   "modelled (module docstring)")
def test_rtx_pro_6000_available_kv():
    err = kv_error(MM_RTX, fixture(MM_RTX)["printed"]["available_kv_cache_gib"] * GiB)
    assert abs(err) < KV_LIMIT, f"available KV {err:+.2%} of the GPU"


@pytest.mark.xfail(strict=True, reason="MiniMax-M2.7 FP8 on 4x RTX PRO 6000 SE (0.19.0): the page's rounded load "
                   "'56 GiB' (after weights) against oomkit's 53.67 GiB, -3.3 % from 55.5; no SM 12.0 repack found "
                   "that would add it")
def test_rtx_pro_6000_rounded_load():
    est = estimate(MM_RTX)
    low = (fixture(MM_RTX)["printed"]["model_memory_after_weights_gib_rounded"] - 0.5) * GiB
    assert first(est.engine_view, "model_loading_bytes") > low * (1 - WEIGHTS_LIMIT)


@pytest.mark.parametrize("stem", [MM_A100, MM_H200, MM_RTX])
def test_tokens_for_the_printed_budget(stem):
    """The KV cache's size a token: MiniMax-M2.7's 62 layers x 8 KV heads of 128 split over TP, bf16 (the 0.19.0
    runs keep the default KV dtype), 16-token blocks: oomkit's count scaled to the printed budget is the printed
    count within 0.04 %."""
    v = estimate(stem).engine_view
    p = fixture(stem)["printed"]
    scaled = v["kv_cache_tokens"] * p["available_kv_cache_gib"] * GiB / first(v, "available_kv_cache_bytes")
    assert abs(scaled / p["kv_cache_tokens"] - 1) < TOKENS_LIMIT, scaled


@pytest.mark.parametrize(("stem", "recorded"), [(MM_B300, "+1.38 %"), (DSV4_EAGER, "-2.02 %"),
                                                (DSV4_GRAPHS, "-1.88 %"), (DSV4_INT4, "-0.98 %"),
                                                (DSV4_B300, "-1.49 %")])
def test_budget_of_the_printed_tokens(stem, recorded):
    est = estimate(stem)
    err = (first(est.engine_view, "available_kv_cache_bytes") - budget_of_printed_tokens(stem)) \
        / est.devices[0].memory_bytes
    assert abs(err) < KV_LIMIT, f"{err:+.2%} (recorded {recorded})"


def test_minimax_b300_tokens_by_hand():
    """One B300, TP 1, fp8 KV: 62 layers x 8 KV heads x 128 x K,V x 1 B = 126,976 B a token; the printed 221,616
    tokens are 26.21 GiB."""
    v = estimate(MM_B300).engine_view
    assert first(v, "available_kv_cache_bytes") / v["kv_cache_tokens"] == pytest.approx(126_976, rel=1e-3)
    assert 221_616 * 126_976 / GiB == pytest.approx(26.21, abs=0.005)


def test_dsv4_graphs_cost_tokens_as_printed():
    """The breakable CUDA graph's estimate comes out of the budget (0.25.1): printed 2,359,479 -> 2,300,269 tokens
    (-2.5 %), oomkit 2,247,577 -> 2,196,052 (-2.3 %)."""
    eager, graphs = estimate(DSV4_EAGER).engine_view, estimate(DSV4_GRAPHS).engine_view
    ours = graphs["kv_cache_tokens"] / eager["kv_cache_tokens"] - 1
    printed = 2_300_269 / 2_359_479 - 1
    assert ours < 0 and abs(ours - printed) < 0.01, (ours, printed)


def test_awq_refused_at_131072():
    """vLLM's refusal at 131,072 tokens: 15.5 GiB needed (62 layers x 4 KV heads a rank x 128 x K,V x 2 B x 131,072),
    13.49 GiB available; oomkit 15.5 and 14.19 GiB (+0.88 % of the A100)."""
    est = estimate(MM_AWQ)
    p = fixture(MM_AWQ)["printed"]
    error = est.engine_view.get("error") or ""
    assert f"({p['kv_needed_gib']} GiB KV cache is needed" in error, error
    err = kv_error(MM_AWQ, p["available_kv_cache_gib"] * GiB)
    assert abs(err) < KV_LIMIT, f"{err:+.2%}"


def test_awq_starts_at_32768_and_loads_the_rounded_figure():
    est = estimate(MM_AWQ, max_model_len=32_768)
    assert died(est) is None and not est.engine_view.get("error")
    w = first(est.engine_view, "model_loading_bytes") / GiB
    assert abs(w / fixture(MM_AWQ)["printed"]["model_memory_gib_approx"] - 1) < WEIGHTS_LIMIT, w  # 56.30


def test_dsv4_nvfp4_expert_bytes_by_hand():
    """One routed expert matrix of 4,096 x 2,048 as ModelOptNvFp4FusedMoE holds it: 4,194,304 B of e2m1, 524,288
    float8 scales (one per 16) and a float32 weight_scale_2 and input_scale; the MXFP4 one has 262,144 e8m0
    scales."""
    from oomkit.engines.vllm.weights import _nvfp4_expert_bytes  # a test-only look at the per-tensor rule
    from oomkit.model.spec import TensorSpec

    t = TensorSpec("blk.3.ffn_up_exps.weight", (4_096, 2_048, 1), "nvfp4", 0)
    assert _nvfp4_expert_bytes(t) == 4_194_304 + 524_288 + 8


def test_dsv4_nvfp4_rule_by_release_and_name():
    """NVFP4 experts from 0.22.0 (the quant config's moe_quant_algo branch), by the checkpoint's name; DeepSeek's
    own checkpoint stays MXFP4; 0.21.0 sizes the NVFP4 name as MXFP4 (Mxfp4MoEMethod for every fp4 expert)."""
    from oomkit.engines.vllm.config import resolve  # a test-only look at the resolved settings
    from oomkit.engines.vllm.weights import dsv4_moe_nvfp4

    nv = resolve_model(ENGINE, "nvidia/DeepSeek-V4-Flash-NVFP4")
    own = resolve_model(ENGINE, "deepseek-ai/DeepSeek-V4-Flash")
    for version, expected in (("0.21.0", False), ("0.22.0", True), ("0.25.1", True), ("0.27.0", True)):
        s = settings(DSV4_NVFP4, engine_version=version)
        assert dsv4_moe_nvfp4(nv, resolve(nv, gpus("B200", 2), s)) is expected, version
        assert dsv4_moe_nvfp4(own, resolve(own, gpus("B200", 2), s)) is False, version
    # the NVFP4 checkpoint loads 8.06 GiB more than the MXFP4 one over both ranks (1/32 B a value more)
    s = settings(DSV4_NVFP4)
    diff = first(estimate(DSV4_NVFP4).engine_view, "model_loading_bytes") - first(
        ENGINE.estimate(own, gpus("B200", 2), s).engine_view, "model_loading_bytes")
    assert diff == pytest.approx(43 * 256 * 3 * 4_096 * 2_048 / 32 / 2, rel=0.001)


def test_dsv4_b300_rounded_load():
    """One B300 holds the whole FP8 checkpoint with the model's buffers: 147.29 GiB against the page's '~149 GiB'."""
    w = first(estimate(DSV4_B300).engine_view, "model_loading_bytes") / GiB
    assert abs(w / fixture(DSV4_B300)["printed"]["model_loading_gib_approx"] - 1) < WEIGHTS_LIMIT, w
