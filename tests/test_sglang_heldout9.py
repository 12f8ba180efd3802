"""Held-out SGLang start-up logs, ninth set (tests/fixtures/engine_logs/sglang/heldout9/, each with its URL, the
lines kept verbatim and the release read from the log or its date): TP2 on two 48 GB RTX 4090s with block-FP8
weights, a PP2 x DP2 pipeline, a TP2 profile on H200s with the memory saver, and an engine inside verl's rollout. No
constant in oomkit was fitted on any of them; the printed figures were recorded in the fixtures before oomkit was run,
and the figures below are the logs', never oomkit's. No rule changed for this set: the "oomkit" column is the figure
recorded before, and after, the work of this round.

| log | release | GPUs | model | figure | printed | oomkit |
|---|---|---|---|---|---|---|
| sglang#16920 | main of 2026-01-12 (0.5.7 read) | 2x RTX 4090 48 GB (inferred), TP2, flashinfer | Qwen3-32B-FP8, --mem-fraction-static 0.85 | max_total_num_tokens | 192,406 | 196,648 (+2.2 %) |
| | | | | decode capture, sizes | 0.27 GB, 8 | 0.29 GiB (+7.8 %), 8 |
| | | | | free at the end | 5.74 GB | 5.86 GiB (+0.25 % of the GPU) |
| | | | | max_running_requests | 2,405 | 2,458 (from the tokens) |
| | | | | starts | yes | yes |
| sglang PR #10741 | main of 2025-09-22 (0.5.2 read) | 4x a 22.5 GiB card (L4 / A10 inferred), PP2 x DP2 | DeepSeek-R1-Distill-Qwen-7B | PP0 weights | 7.21 GB | 7.21 GiB (-0.07 %) |
| | | | | free after PP0's weights | 14.53 GB | 14.36 GiB (-0.8 % of the GPU) |
| | | | | default mem_fraction_static | 0.867 | 0.867 |
| sglang PR #7873 | main of 2025-09-18 (0.5.2 read) | 2x H200, TP2, --enable-memory-saver | Meta-Llama-3-8B-Instruct, 0.85 | weights per rank | 7.5 GB | 7.49 GiB (-0.2 %) |
| | | | | KV pool | 110 GB | 109.73 GiB (-0.25 %) |
| | | | | decode capture | 0.6 GB | 0.58 GiB |
| verl#1611 | main of 2025-05-23 (0.4.6.post4 read) | 8 GPUs shared with verl's trainer | Qwen2.5-0.5B (inferred from the pool) | K / V at 4,502,600 tokens | 25.76 / 25.76 GB | 25.76 / 25.76 GiB |
| | | | | capture sizes | 23 | 23 |
| | | | | weights | 1.03 GB | 0.99 GiB (-4.1 %, strict xfail) |

What the logs fix beyond their flags (fixture notes): sglang#16920's pool is 192,406 tokens x 131,072 B (64 layers x
4 KV heads a rank x 128 x K,V x 2 B) = 23.5 GiB a rank beside 16.0 GiB of FP8 weights, which no 24 GB card holds: a
48 GB RTX 4090 (memory-modified, 49,152 MiB in the catalog) gives 196,648 tokens, and 0.5.7's default capture list for
that card at TP2 is the printed 8 sizes (1,032 registered all-reduce inputs = 8 x (2 x 64 + 1)). sglang PR #10741's
0.867 is 0.5.2's default fraction for a 22.5 GiB card at PP2 (server_args.py _handle_gpu_memory_settings: (2.8 +
tp x pp / 10) GiB kept back under 35 GiB; an RTX 4090's 24 GiB gives 0.875).

Searched and not held (corpus "issues": "KV Cache is allocated. #tokens", "Load weight end. type=", "Capture cuda graph
end. Time elapsed", "max_total_num_tokens=" with DP attention, ModelOpt FP4 / NVFP4, multimodal, TP2-TP8, capture
deaths, verl / slime rollouts): held by an earlier set or examined and refused there (sglang#4161, #12496, #1479,
#4489, #7227, #14700, #14365, PR #10622, #15909, #17392, #11716, #11830, #12978, #13075, #22537, #27537, #4826, #5576,
#4708, #3416, #5755, #4895, club-3090#1261, InferenceX#2128); a capture that fails for a reason other than memory
(sglang#1751 FlashInfer plan error, #9706 custom all-reduce 'invalid argument', #6033 / #7918 / #1522 / #11218
torch.compile or CUDA-generator errors, #24834 ViT graph on B200); no model or figure in the stored excerpt
(sglang#29575, PR #23745's NVFP4 Llama-3.1-8B: the piecewise list only, PR #26083: distributed init only); not a CUDA
GPU (sglang PR #17157 / #28876 / #29853 on Ascend, PR #17985 / #23654 on MUSA); another engine behind SGLang's log
format (ktransformers#1661 / #1854 / #1969, kvcached#101 with its own virtual pool). Only four logs were found that no
earlier set holds: the set is smaller than the six to eight asked for.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from oomkit.engines import sglang as sg
from oomkit.hardware.catalog import devices_for_names
from oomkit.model.resolve import resolve
from oomkit.units import GiB
from tests.sglang_heldout import (
    assert_avail_mem,
    assert_every_fixture_cites_its_thread,
    assert_weights,
    gb,
    load,
)
from tests.test_sglang_heldout4 import pool_at, two
from tests.test_vllm_startup import spec_of

HERE = Path(__file__).parent / "fixtures" / "engine_logs" / "sglang" / "heldout9"
TOKENS_LIMIT = 0.03  # KV tokens, relative to the printed count


def fixture(stem: str) -> dict:
    return load(HERE, stem)


def test_every_fixture_cites_its_thread():
    assert_every_fixture_cites_its_thread(HERE)


# ---------------------------------------------------------------------------------------------------------
# sglang#16920: Qwen3-32B-FP8 at TP2 on two 48 GB RTX 4090s, flashinfer, no chunked prefill (main of 2026-01-12)

QWEN32 = "qwen3-32b-fp8-2x4090-tp2-flashinfer-issue16920"


def _qwen32(gpu: str = "RTX 4090 48GB"):
    s = sg.SGLangSettings(**fixture(QWEN32)["settings"], engine_version="0.5.7")
    return sg.estimate(resolve("Qwen/Qwen3-32B-FP8"), devices_for_names(gpu) * 2, s)


def test_qwen32_fp8_tp2_pool_tokens():
    # 196,648 tokens against 192,406 (+2.2 %); max_running_requests follows the tokens (0.5.7 model_runner:
    # min(max(tokens / 40,960 x 512, 2048), 4096)): 2,458 against 2,405
    p = fixture(QWEN32)["printed"]
    ev = _qwen32().engine_view
    got = ev["max_total_num_tokens"]
    assert abs(got - p["max_total_num_tokens"]) / p["max_total_num_tokens"] < TOKENS_LIMIT, got
    assert abs(ev["max_running_requests"] - p["max_running_requests"]) / p["max_running_requests"] < TOKENS_LIMIT
    assert ev["context_len"] == p["context_len"]


def test_qwen32_fp8_tp2_does_not_fit_a_24gb_4090():
    # the printed pool (23.5 GiB a rank at 131,072 B a token) beside 16.0 GiB of FP8 weights needs the 48 GB card:
    # on the 24 GB one oomkit's pool holds under a sixth of the printed tokens
    assert _qwen32("RTX 4090").engine_view["max_total_num_tokens"] < fixture(QWEN32)["printed"]["max_total_num_tokens"] / 6


def test_qwen32_fp8_tp2_capture_and_start():
    # 8 decode graphs (1..32), 0.29 GiB against 0.27 (+7.8 %), 5.86 GiB left against 5.74; the server starts
    p = fixture(QWEN32)["printed"]
    est = _qwen32()
    ev = est.engine_view
    assert est.fits is True and ev.get("failed_phase") is None
    assert len(ev["cuda_graph_bs"]) == p["capture_sizes"]
    assert p["registered_graph_addresses"] == p["capture_sizes"] * (2 * 64 + 1)
    printed = gb(p["capture_end_mem_usage_gb"])
    assert abs(ev["cuda_graph_bytes"] - printed) / printed <= 0.10
    assert_avail_mem(est, "Capture cuda graph end.", p["capture_end_avail_gb"])


# ---------------------------------------------------------------------------------------------------------
# sglang PR #10741: DeepSeek-R1-Distill-Qwen-7B, --pp-size 2 --dp-size 2, four 22.5 GiB cards (main of 2025-09-22)

PP = "deepseek-r1-distill-qwen-7b-pp2-dp2-24gb-pr10741"


def _pp(gpu: str = "L4"):
    s = sg.SGLangSettings(**fixture(PP)["settings"], engine_version="0.5.2")
    return sg.ENGINE.estimate(spec_of("deepseek-r1-distill-qwen-7b"), devices_for_names(gpu) * 4, s)


def test_pp0_weights():
    # embed_tokens (152,064 x 3,584) and 14 of the 28 layers: 7.21 GiB against 7.21
    assert_weights(_pp(), fixture(PP)["printed"]["weights_pp0_mem_usage_gb"])


def test_pp0_free_memory_after_the_weights():
    # 14.36 GiB against 14.53 (-0.8 % of the card)
    assert_avail_mem(_pp(), "Load weight end.", fixture(PP)["printed"]["weights_pp0_avail_after_gb"])


def test_pp_default_fraction_names_the_card():
    # 0.5.2 server_args.py _handle_gpu_memory_settings, (2.8 + tp x pp / 10) GiB kept back under 35 GiB: 0.867 for the
    # 22.5 GiB card, 0.875 for a 24 GiB RTX 4090
    printed = float(fixture(PP)["printed"]["mem_fraction_static"])
    assert _pp().engine_view["mem_fraction_static"] == pytest.approx(printed)
    assert _pp("RTX 4090").engine_view["mem_fraction_static"] != pytest.approx(printed)


# ---------------------------------------------------------------------------------------------------------
# sglang PR #7873: Meta-Llama-3-8B-Instruct at TP2 on H200s, --enable-memory-saver, 0.85 (a hand-written profile)

SAVER = "llama-3-8b-instruct-tp2-h200-memory-saver-pr7873"


def _saver():
    s = sg.SGLangSettings(**fixture(SAVER)["settings"], engine_version="0.5.2")
    return sg.ENGINE.estimate(spec_of("llama-3-8b-instruct"), devices_for_names("H200") * 2, s)


def test_saver_weights_per_rank():
    # half of 8.03 B parameters in bf16 (the vocabulary-parallel embedding and lm_head split too): 7.49 GiB against 7.5
    assert_weights(_saver(), fixture(SAVER)["printed"]["weights_gb"])


def test_saver_pool_and_capture():
    # the KV pool 109.73 GiB against 110 (-0.25 %); the decode capture 0.58 GiB against 0.6, given to a tenth
    p = fixture(SAVER)["printed"]
    by = {x["phase"]: x["bytes"] for x in _saver().engine_view["phases"]}
    assert abs(by["KV cache pool"] - gb(p["kv_pool_gb"])) / gb(p["kv_pool_gb"]) < TOKENS_LIMIT
    assert abs(by["CUDA graph capture"] - gb(p["cuda_graph_gb"])) <= 0.1 * GiB


# ---------------------------------------------------------------------------------------------------------
# verl#1611: Qwen2.5-0.5B in verl's SGLang rollout, eight GPUs shared with the trainer (main of 2025-05-23)

VERL = "qwen2.5-0.5b-verl-rollout-fa3-issue1611"


def test_verl_pool_at_the_printed_tokens():
    # 24 layers x 2 KV heads x 64 x 2 B = 6,144 B a token for K over 4,502,601 rows: 25.76 GiB, as printed
    p = fixture(VERL)["printed"]
    pool = pool_at("qwen2.5-0.5b-instruct", p["kv_cache_tokens"], engine_version="0.4.6.post4")
    assert (two(pool.k_bytes), two(pool.v_bytes)) == (p["k_size_gb"], p["v_size_gb"])


def test_verl_capture_sizes():
    # 0.4.6's list for an 80 GB-plus card: 1, 2, 4, 8..160 (23 sizes), the progress bar's 0/23
    s = sg.SGLangSettings(engine_version="0.4.6.post4")
    ev = sg.ENGINE.estimate(spec_of("qwen2.5-0.5b-instruct"), devices_for_names("H20"), s).engine_view
    assert len(ev["cuda_graph_bs"]) == fixture(VERL)["printed"]["capture_sizes"]


@pytest.mark.xfail(strict=True, reason="verl#1611 (held out): 'mem usage=1.03 GB' for the weights of a Qwen2.5-0.5B "
                                       "engine; oomkit gives 0.99 GiB (-4.1 %; lm_head tied to embed_tokens, qwen2.py "
                                       "0.4.6). The engine "
                                       "shares each GPU with verl's FSDP workers, whose allocations during the load fall "
                                       "in the same free-memory difference (the 'Load weight begin' and 'end' lines come "
                                       "from different processes: 89.40 - 86.57 = 2.83 GB against the 1.03 printed), so "
                                       "the 0.04 GiB are not read as the engine's")
def test_verl_weights():
    s = sg.SGLangSettings(engine_version="0.4.6.post4")
    est = sg.ENGINE.estimate(spec_of("qwen2.5-0.5b-instruct"), devices_for_names("H20"), s)
    assert_weights(est, fixture(VERL)["printed"]["weights_mem_usage_gb"])
