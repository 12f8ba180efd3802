"""Start-up held out, ninth set (tests/fixtures/engine_logs/startup_heldout9/): vLLM start-up logs from public threads
no earlier set cites (each issue number grepped in tests/ first), each fixture with its URL, the lines kept verbatim,
the release and the command the thread gives; the printed figures were recorded before oomkit was run on them and
none was used to fit a constant. Limits as sets 7 and 8: weights per rank 3 % of the printed load, the KV budget 3 %
of the GPU's memory, tokens 3 %, the verdict equal to the log's. "before" is oomkit at 540a9a7b, before this file;
"after" with the gpt-oss launch-build rule below.

| log | release | GPUs, model | figure | printed | before | after |
|---|---|---|---|---|---|---|
| club-3090#104 (first boot) | 0.21.x | 2 x RTX 3090, TP2, Qwen3.6-27B AutoRound INT4, fp8_e5m2, 262,144, 0.88 | available KV | 9.84 GiB | 9.91 (+0.3 % of the GPU) | same |
| | | | tokens / concurrency | 619,202 / 2.36x | 623,721 (+0.7 %) / 2.38x | same |
| | | | tokens at 9.84 GiB | 619,202 | 619,202 | same |
| | | | CUDA graph estimate (from the notice: 0.8800 - 0.8592 of 23.54 GiB) | 0.49 GiB | 0.66 (+35 %) | same (strict xfail) |
| club-3090#104 (turn 13) | 0.21.x | the same with MTP n=3, 0.92 (PIECEWISE graphs only) | available KV | 11.06 GiB | 11.02 (-0.2 % of the GPU) | same |
| | | | CUDA graph estimate | 0.13 GiB | 0.28 (+111 %) | 0.13 (+1 %), later rule below |
| club-3090#487 | 0.21-0.22 | 2 x RTX 3090, TP2, the same with MTP n=3, default 0.92 | available KV | 10.85 GiB | 11.02 (+0.7 % of the GPU) | same |
| | | | tokens / at 10.85 GiB | 612,157 / 612,157 | 620,944 (+1.4 %) / 612,157 | same |
| club-3090#446 | 0.22.0 | 4 x RTX 3090, TP4, the same with int8_per_token_head KV | tokens at 15.73 GiB | 1,746,661 / 6.66x | 1,746,661 / 6.66x | same |
| | | | available KV (compose settings from PR #44) | 15.73 GiB | 15.63 (-0.4 % of the GPU) | same |
| club-3090#617 | 0.24.x | 1 x RTX 5090, Qwen3.6-27B NVFP4 (ModelOpt), 100,352, 0.85, MTP | available KV | 3.93 GiB | 3.93 (+0.0 %) | same |
| | | | verdict | dies at the KV sizing | refused: 4.0 GiB needed for 100,352 tokens | same |
| | | | CUDA graph estimate | 0.08 GiB | 0.40 (+404 %) | same (strict xfail) |
| vllm#22331 | 0.10.1+gptoss image | 1 x RTX 3090, gpt-oss-20b MXFP4 | weights | 12.8848 GiB | 13.686 (+6.2 %) | 12.832 (-0.4 %) |
| xorbits/inference#4944 | xinference 2.9.0's vLLM | 2 GPUs, TP2, Qwen3.6-27B bf16 | weights per rank | 25.69 GiB | 25.666 (-0.1 %) | same |

The rule (src/oomkit/engines/vllm/weights.py _mxfp4_expert_bytes, settings.py ERAS mxfp4_marlin and parse_version):
the gpt-oss launch build (vllm#22259's branch, shipped 2025-08-05 as the vllm/vllm-openai:gptoss image and the
0.10.1+gptoss wheel; the image reports 0.10.2.dev2+gf5635d62e.d20250807, vllm#22793) predates 0.10.1's Marlin MXFP4
backend. Its quantization/mxfp4.py (read in the stored source: Mxfp4MoEMethod.create_weights, "pad the intermediate
size to be a multiple of 2 * mxfp4_block", round_up(intermediate_size_per_partition, 64); get_min_capability 80;
every GPU on triton_kernels, swizzle_mxfp4 keeping the strided layout before Hopper) pads gpt-oss's 2,880 to 2,880.
oomkit gave every pre-Hopper GPU 0.10.1's Marlin layout (hidden 2,880 -> 3,072, intermediate -> 2,944: +0.85 GiB of
experts). The build now reads as 0.10.0 (the release before it) and pre-Hopper MXFP4 experts before 0.10.1 take the
triton_kernels padding. Hopper and Blackwell in that build are not changed (their swizzled layouts pad; not read).
The remaining -0.05 GiB on the 3090: process_weights_after_loading turns the expert biases to float32 (+0.012 GiB),
and the swizzled scales, not modelled.

Later rule (phases.py piecewise_only_ampere_geforce, CG_EST_PW_FIRST_AMPERE / CG_EST_PW_PER_LAYER_AMPERE): on an
Ampere GeForce part a PIECEWISE-only estimate is a 56 MiB first sample and 0.307 MiB per layer for each further size,
fitted on club-3090 PR #44 (TP 4, 7 graphs, 0.17 GiB) and club-3090#434 (TP 2, 3 + 2 graphs, 0.094 GiB), held out
on #104 turn 13 here (0.13 against 0.13; its budget 11.16 against 11.06, +0.4 % of the GPU, -0.2 % before) and on
#487 (11.16 against 10.85, +1.3 % of the GPU, tokens +2.9 %; +0.7 % and +1.4 % before: the term found short below
is what the old estimate covered). The RTX 5090 and the FULL first boot keep their xfails.

Not fixed at first (strict xfails): vLLM's own CUDA graph estimate where the run captures PIECEWISE graphs only (spec
decode with FlashInfer, "setting cudagraph_mode=PIECEWISE"). gpu_model_runner.py profile_cudagraph_memory (0.24.0 read)
samples the first two captures of each mode and forces attention only for FULL ("profile_seq_lens ... if mode ==
CUDAGraphMode.FULL and i == 0"); a PIECEWISE capture runs attention and the GDN core outside the graph (splitting
ops), so its first capture holds none of the attention working set that oomkit's one-off (first_capture, fitted on
FULL runs: 278 MiB at the 3090's 82 SMs, 410 MiB at the 5090's 170) stands for. Printed: 0.13 (3090, 5 graphs) and
0.08 GiB (5090, 4 graphs); a rule would need a PIECEWISE one-off that no source line gives, and fitting it on these
two would be fitting on the logs held out. With FULL graphs (#104's first boot, from the utilization notice) oomkit
is 0.17 GiB high as well. In both PIECEWISE runs oomkit's budget nonetheless matches (-0.2 % and +0.0 % of the GPU):
another term is short by about as much, not found; lowering the estimate alone would start #617, which vLLM refused.

Settings read from the thread rather than the log: #104's first boot ran without MTP (the 619,202 tokens at 9.84 GiB
are exact without the drafter's Mamba slots, 555,042 with them; the compose's 67 TPS is its no-drafter speed),
#446's max_num_seqs and utilization (PR #44's TP=4 args), #617's checkpoint, KV dtype and max_num_seqs (club-3090's
single-card compose: nvidia/Qwen3.6-27B-NVFP4, fp8, 1). Each fixture's notes say which.

Searched and not held (corpus "issues"): already cited in tests/ (club-3090#294, #295, #602, #642, #652, #1084, #1086,
#1087, #1047; vllm#14452, #17327, #17469, #21348, #27508, #28228, #32105, #39788, #42147, #49011, #51454, #15598,
#7593, #30515, #13061, #10517; xorbits/inference#4926; gpustack#1800; QwenLM/Qwen3-VL#1684); gpustack/runner#251
(Qwen3.6-27B AWQ MTP TP2 on a custom 'paddlex-vllm' image, no GPU named), vllm#38820 and gpustack#1916 (loads of
12.66 and 31.28 GiB with no model named in the excerpt), vllm#14011 (V0 TP4 15.41 GB, model not in the excerpt),
vllm#29070 (OPT-2.7B TP4: OPT is not in the catalog), club-3090#46 and PR #96 (DFlash drafters, not modelled),
club-3090#44 and #142 (no KV line in the stored excerpts), unsloth#7091 (Qwen3.6-27B-NVFP4 on 24 GB: the excerpt
stops in the load), LMCache#3163 (a profiling exception, not memory), syv-ai/qwen38-27b-rtx3090#39 and
weicj/vLLM-2080Ti-Definitive#48 (patched vLLM builds).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oomkit.engines.vllm import ENGINE, VllmSettings
from oomkit.units import GiB
from tests.startup_heldout import died, first, fixture_loader, gpus
from tests.test_sglang_heldout_set3 import AUTOROUND_INT4
from tests.test_vllm_startup import spec_of

HERE = Path(__file__).parent / "fixtures" / "engine_logs" / "startup_heldout9"
fixture = fixture_loader(HERE)
WEIGHTS_LIMIT = 0.03  # of the printed load
KV_LIMIT = 0.03  # of the GPU's memory
TOKENS_LIMIT = 0.03
ESTIMATE_BAND = 0.25  # tests/test_vllm_cudagraph.py's band for vLLM's own CUDA graph estimate

DUAL_088 = "qwen3.6-27b-autoround-int4-2x3090-tp2-util088-v0.21-club3090-issue104"
DUAL_MTP_092 = "qwen3.6-27b-autoround-int4-2x3090-tp2-util092-mtp3-v0.21-club3090-issue104"
DUAL_487 = "qwen3.6-27b-autoround-int4-2x3090-tp2-mtp3-v0.21-club3090-issue487"
QUAD_446 = "qwen3.6-27b-autoround-int4-4x3090-tp4-int8pth-mtp3-v0.22.0-club3090-issue446"
SINGLE_NVFP4 = "qwen3.6-27b-nvfp4-rtx5090-util085-100k-mtp-v0.24-kv-refused-club3090-issue617"
GPTOSS_3090 = "gpt-oss-20b-mxfp4-rtx3090-gptoss-image-issue22331"
QWEN36_BF16 = "qwen3.6-27b-bf16-tp2-xinference-2.9.0-issue4944"

# stem -> (catalog model, checkpoint quantization_config or None, GPU, count, the release oomkit reads)
RUNS = {
    DUAL_088: ("Qwen/Qwen3.6-27B", AUTOROUND_INT4, "RTX 3090", 2, "0.21.0"),
    DUAL_MTP_092: ("Qwen/Qwen3.6-27B", AUTOROUND_INT4, "RTX 3090", 2, "0.21.0"),
    DUAL_487: ("Qwen/Qwen3.6-27B", AUTOROUND_INT4, "RTX 3090", 2, "0.21.0"),
    QUAD_446: ("Qwen/Qwen3.6-27B", AUTOROUND_INT4, "RTX 3090", 4, "0.22.0"),
    SINGLE_NVFP4: ("nvidia/Qwen3.6-27B-NVFP4", None, "RTX 5090", 1, "0.24.0"),
    GPTOSS_3090: ("openai/gpt-oss-20b", None, "RTX 3090", 1, "0.10.1+gptoss"),
    # the GPU is not named: the load does not depend on it (an 80 GB part holds it)
    QWEN36_BF16: ("Qwen/Qwen3.6-27B", None, "A100 80GB", 2, "0.21.0"),
}


def estimate(stem: str, **kw):
    model, quant, gpu, n, version = RUNS[stem]
    return ENGINE.estimate(spec_of(model, quant), gpus(gpu, n),
                           VllmSettings(engine_version=version, **{**fixture(stem)["settings"], **kw}))


def verdict(est) -> str:
    if phase := died(est):
        return phase
    error = est.engine_view.get("error") or ""
    return ("refused: " + error[:80]) if error else "starts"


def kv_error(stem: str) -> tuple[float, str]:
    est = estimate(stem)
    printed = fixture(stem)["printed"]["available_kv_cache_gib"] * GiB
    got = first(est.engine_view, "available_kv_cache_bytes")
    err = (got - printed) / est.devices[0].memory_bytes
    return err, f"{got / GiB:.2f} vs {printed / GiB:.2f} GiB ({err:+.2%} of the GPU)"


# ---------------------------------------------------------------------------------------------------------------
# club-3090#104, #487, #446: Qwen3.6-27B AutoRound INT4 on RTX 3090s (TP2 and TP4), the club's composes


@pytest.mark.parametrize("stem", [DUAL_088, DUAL_MTP_092, DUAL_487, QUAD_446])
def test_available_kv_and_verdict(stem):
    err, msg = kv_error(stem)
    assert abs(err) < KV_LIMIT, msg
    assert verdict(estimate(stem)) == fixture(stem)["printed"]["verdict"]


@pytest.mark.parametrize("stem", [DUAL_088, DUAL_487])
def test_tokens_end_to_end(stem):
    printed = fixture(stem)["printed"]
    v = estimate(stem).engine_view
    err = (v["kv_cache_tokens"] - printed["kv_cache_tokens"]) / printed["kv_cache_tokens"]
    assert abs(err) < TOKENS_LIMIT, (v["kv_cache_tokens"], printed["kv_cache_tokens"], f"{err:+.2%}")


@pytest.mark.parametrize("stem", [DUAL_088, DUAL_487, QUAD_446])
def test_tokens_at_the_printed_budget(stem):
    printed = fixture(stem)["printed"]
    v = estimate(stem, kv_cache_memory_bytes=int(printed["available_kv_cache_gib"] * GiB)).engine_view
    err = (v["kv_cache_tokens"] - printed["kv_cache_tokens"]) / printed["kv_cache_tokens"]
    assert abs(err) < TOKENS_LIMIT, (v["kv_cache_tokens"], printed["kv_cache_tokens"], f"{err:+.2%}")
    assert round(v["max_concurrency"], 2) == printed["max_concurrency"]


def test_first_boot_ran_without_the_drafter():
    # the layout alone tells the two readings apart: at the printed 9.84 GiB the MTP drafter's extra Mamba slots per
    # request (hybrid pages, prefix caching) leave 555,042 tokens, against the 619,202 vLLM printed
    printed = fixture(DUAL_088)["printed"]
    budget = int(printed["available_kv_cache_gib"] * GiB)
    with_mtp = estimate(DUAL_088, kv_cache_memory_bytes=budget, num_speculative_tokens=3,
                        speculative_method="mtp").engine_view["kv_cache_tokens"]
    assert abs(with_mtp - printed["kv_cache_tokens"]) / printed["kv_cache_tokens"] > 0.08, with_mtp


# ---------------------------------------------------------------------------------------------------------------
# club-3090#617: Qwen3.6-27B NVFP4 on one RTX 5090, 100,352 tokens at 0.85 with MTP: dies at the KV sizing


def test_single_nvfp4_budget():
    err, msg = kv_error(SINGLE_NVFP4)
    assert abs(err) < KV_LIMIT, msg


def test_single_nvfp4_refused_at_the_kv_check():
    # the log's ERROR at core.py in the second of the KV sizing, before any allocation: _check_enough_kv_cache_memory
    est = estimate(SINGLE_NVFP4)
    assert est.engine_view.get("failed_phase") is None
    assert verdict(est).startswith("refused: To serve at least one request with the model's max seq len (100352)")


# ---------------------------------------------------------------------------------------------------------------
# vLLM's own CUDA graph estimate ("Estimated CUDA graph memory", or the utilization notice's difference)

PIECEWISE_ONLY = ("PIECEWISE only (spec decode on FlashInfer): profile_cudagraph_memory forces attention in FULL "
                  "captures alone, and oomkit's one-off first capture was fitted on FULL runs; ")


@pytest.mark.parametrize("stem", [
    # RTX 3090 TP2, 5 graphs to 16: 0.13 GiB here (phases.py piecewise_only_ampere_geforce, fitted on club-3090
    # PR #44 and #434, not on this log) against 0.13 printed; 0.28 before (278 MiB one-off + 4 x 1 MiB, +111 %)
    DUAL_MTP_092,
    pytest.param(SINGLE_NVFP4, marks=pytest.mark.xfail(strict=True, reason=PIECEWISE_ONLY + (
        "RTX 5090, 4 graphs to 8: oomkit 0.40 GiB (410 MiB one-off + 3 x 1 MiB) against 0.08 printed (+404 %); "
        "oomkit's budget matches all the same (3.93 GiB), so a term elsewhere is short by about as much, not found; "
        "the Ampere rule that fixes the 3090 run (piecewise_only_ampere_geforce) would give 0.11 (+34 %) and a 4.22 "
        "GiB budget that starts what vLLM refused, so it is not applied to this GPU"))),
])
def test_piecewise_only_estimate(stem):
    printed = fixture(stem)["printed"]["cudagraph_estimate_gib"]
    ours = first(estimate(stem).engine_view, "cudagraph_bytes") / GiB
    assert abs(ours - printed) / printed < ESTIMATE_BAND, f"{ours:.2f} vs {printed:.2f} GiB"


@pytest.mark.xfail(strict=True, reason=(
    "club-3090#104's first boot (FULL_AND_PIECEWISE, 3 + 2 graphs to 4 on an RTX 3090): vLLM's estimate from its "
    "notice, (0.8800 - 0.8592) x 23.54 GiB = 0.49 GiB; oomkit 0.66 (+35 %, 0.7 % of the GPU; the budget stays "
    "within 0.3 %): the FULL first sample's one-off (278 MiB at 82 SMs) plus FlashInfer's 394 MiB workspace. The "
    "Ampere PIECEWISE rule's 56 MiB first sample in its place would give 0.48 (-2 %), but FULL graphs keep the "
    "one-off fitted on FULL runs (tests/test_vllm_cudagraph.py test_estimate_by_hand); not changed on this log"))
def test_first_boot_estimate_from_the_notice():
    est = estimate(DUAL_088)
    notice = (0.8800 - 0.8592) * est.engine_view["total_memory_bytes"]["CUDA0"]  # util - equivalent util, x total
    ours = first(est.engine_view, "cudagraph_bytes")
    assert abs(ours - notice) / notice < ESTIMATE_BAND, (ours / GiB, notice / GiB)


# ---------------------------------------------------------------------------------------------------------------
# vllm#22331: gpt-oss-20b on an RTX 3090, the vllm/vllm-openai:gptoss image; xorbits#4944: Qwen3.6-27B bf16 TP2


@pytest.mark.parametrize("stem", [GPTOSS_3090, QWEN36_BF16])
def test_weights_per_rank(stem):
    printed = fixture(stem)["printed"]["model_loading_gib"] * GiB
    got = first(estimate(stem).engine_view, "model_loading_bytes")
    err = (got - printed) / printed
    assert abs(err) < WEIGHTS_LIMIT, f"{got / GiB:.4f} vs {printed / GiB:.4f} GiB ({err:+.2%})"


def test_gptoss_build_reads_as_the_release_before_marlin():
    # settings.py parse_version: the launch build's three spellings; 0.10.1 itself keeps Marlin's padding
    from oomkit.engines.vllm.settings import parse_version

    for text in ("0.10.1+gptoss", "gptoss", "0.10.2.dev2+gf5635d62e.d20250807"):
        assert parse_version(text) == (0, 10, 0), text
    assert parse_version("0.10.1") == (0, 10, 1)
    # worked by hand: gpt-oss-20b's experts, 24 layers x 32 experts x (gate+up 5,760 + down 2,880) x 2,880 in MXFP4
    # (half a byte a weight, one scale byte per 32): Marlin pads hidden 2,880 -> 3,072 and intermediate -> 2,944
    experts = 24 * 32 * 3 * 2880 * 2880 * 17 // 32
    marlin = experts * 3072 * 2944 // (2880 * 2880)
    gptoss = first(estimate(GPTOSS_3090).engine_view, "model_loading_bytes")
    released = first(ENGINE.estimate(spec_of("openai/gpt-oss-20b"), gpus("RTX 3090", 1),
                                     VllmSettings(engine_version="0.10.1")).engine_view, "model_loading_bytes")
    assert abs((released - gptoss) - (marlin - experts)) < 0.01 * GiB, ((released - gptoss) / GiB,
                                                                        (marlin - experts) / GiB)


# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", sorted(HERE.glob("*.json")), ids=lambda p: p.stem)
def test_fixtures_are_cited(path):
    fx = json.loads(path.read_text(encoding="utf-8"))
    assert fx["source"].startswith("https://"), path.name
    assert fx["quoted"] and fx["command"] and fx["gpus"] and fx["engine_version"], path.name
    assert path.stem in RUNS, path.name
