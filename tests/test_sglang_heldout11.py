"""Held-out SGLang start-up logs, eleventh set (tests/fixtures/engine_logs/sglang/heldout11/, each with its URL, the
lines kept verbatim and the release read from its date). No constant in oomkit was fitted on it; the printed figures
were recorded in the fixture before oomkit was run, and the figures below are the log's, never oomkit's. No rule
changed for this set: the "oomkit" column is the figure recorded before, and after, this round.

| log | release | GPUs | model | figure | printed | oomkit |
|---|---|---|---|---|---|---|
| sglang#12421 | main of 2025-10-31 (0.5.4 read) | 4x B200 (inferred), TP4, EAGLE3 (title) | Qwen3-30B-A3B (bf16) | weights per rank | 14.31 GB | 14.31 GiB (-0.02 %) |
| | | | | free after the weights (TP0) | 161.97 GB | 162.25 GiB (+0.16 % of the GPU) |
| | | | | max_total_num_tokens, end to end | 5,874,221 | 5,885,625 (+0.19 %) |
| | | | | the same from the printed free memory | 5,874,221 | 5,873,787 (-0.007 %) |
| | | | | free after the pool (TP0) | 27.30 GB | 27.54 GiB (+0.13 % of the GPU) |
| LMCache#2400 | pip install of 2026-01-14 (0.5.7 read) | 1x H100 80GB (inferred), fa3 | Qwen3-14B (bf16), --enable-lmcache | weights | 27.69 GB | 27.53 GiB (-0.58 %) |
| | | | | free after the weights | 50.99 GB | 51.32 GiB (+0.41 % of the GPU) |
| | | | | default mem_fraction_static, chunked prefill, backend | 0.835, 8,192, fa3 | 0.835, 8,192, fa3 |

What the logs fix beyond their flags (fixture notes): sglang#12421's command is not in the stored text, but the pool names the
fraction it ran with: 134.46 GiB of K and V out of 161.94 GiB free is 0.5.4's default for an EAGLE-family draft on a
B200 (0.844, 2 GiB more kept back than the plain 0.855, which would give 5,970,480 tokens end to end, +1.6 %). The
capture and the draft's lines are not in the stored text, so neither the capture nor the verdict is held.
LMCache#2400's excerpt ends after 'Load weight end': its pool, capture and max_total_num_tokens lines are not in the
stored text, so the set holds its load and the defaults its server_args line prints.

Searched and not held (corpus "issues": "Load weight end. type=" with Qwen3Moe / Qwen3Next / DeepseekV3 / Glm4Moe /
GptOss / Qwen3VLMoe, "KV Cache is allocated. #tokens", "Capture cuda graph end. Time elapsed", "max_total_num_tokens=
... available_gpu_mem", DP attention, MLA, FP8 / NVFP4, TP2-TP16, EAGLE / MTP, rollouts and PD disaggregation): held or
cited by an earlier set (sglang#24453, #16143, #24589, #7227, #5402, #5755, #8186, #21395, #14885, #10088, #29562,
#23265, #29575, #1828, #10053, PR #10622, #11716, #11830, #12978, #13075, #15909, #15464,
#17392, #17985, #18263, #22537, #27537, #30891, #5390, #4390, #6081, #4424, kvcached#101, ktransformers#1757 /
#1870 / #1969, club-3090#1261); no start-up figure in the stored text (sglang#3344, #6875, #10990, #11698, #14422, #3315's
log cut before its pool, PR #2863's after 'Load weight end. type=Qwen2ForCausalLM', PR #2360, PR #14476's
OLMo-2-32B cut at its piecewise OOM, zai-org/GLM-4.5#113);
a model oomkit does not describe (PR #17356's Eagle2_5_VL on an SM89 card, whose capture dies on a JIT error, not
memory). Two logs were found that no earlier set holds, one of them cut after the weights: the set is smaller than
the four to six asked for.
"""

from __future__ import annotations

from pathlib import Path

from oomkit.engines import sglang as sg
from oomkit.engines.sglang.settings import default_mem_fraction_static
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

HERE = Path(__file__).parent / "fixtures" / "engine_logs" / "sglang" / "heldout11"
TOKENS_LIMIT = 0.03  # KV tokens, relative to the printed count (the earlier sets' band)
B200_MIB = 183359  # nvidia-smi memory.total of a B200, what get_nvgpu_memory_capacity reads


def fixture(stem: str) -> dict:
    return load(HERE, stem)


def test_every_fixture_cites_its_thread():
    assert_every_fixture_cites_its_thread(HERE)


# ---------------------------------------------------------------------------------------------------------
# sglang#12421: Qwen3-30B-A3B (bf16) at TP4 on four B200s with an EAGLE3 draft (main of 2025-10-31)

QWEN = "qwen3-30b-a3b-tp4-b200-eagle3-issue12421"


def _settings() -> sg.SGLangSettings:
    return sg.SGLangSettings(**fixture(QWEN)["settings"], engine_version="0.5.4")


def _qwen():
    return sg.ENGINE.estimate(resolve("Qwen/Qwen3-30B-A3B"), devices_for_names("B200") * 4, _settings())


def test_qwen3_moe_weights_per_rank():
    # attention and the 128 experts split four ways, embeddings and lm_head by vocabulary: 14.31 GiB against 14.31
    assert_weights(_qwen(), fixture(QWEN)["printed"]["weights_mem_gb"])


def test_qwen3_moe_free_memory_after_the_weights():
    # 162.25 GiB against 161.97 on TP0 (+0.16 % of the card)
    assert_avail_mem(_qwen(), "Load weight end.", fixture(QWEN)["printed"]["weights_avail_after_tp0_gb"])


def test_eagle_default_fraction_on_a_b200():
    # 0.5.4 server_args.py: reserved 512 + 16,384 x 1.5 + 512 x 2 + 4 / 8 x 1,024 = 26,624 MiB, and 2,048 more for an
    # EAGLE-family draft: round((183,359 - 28,672) / 183,359, 3) = 0.844 (0.855 without the draft)
    assert default_mem_fraction_static(B200_MIB, _settings()).mem_fraction_static == 0.844


def test_pool_from_the_printed_free_memory():
    # from the smallest free figure after the weights (161.94) at the draft's default 0.844: 5,873,787 tokens against
    # 5,874,221 (-0.007 %); the K and V halves at 24,576 B a token (48 layers x 1 KV head a rank x 128 x K,V x 2 B)
    p = fixture(QWEN)["printed"]
    after = gb(p["weights_avail_after_min_gb"])
    pre = gb(p["weights_avail_after_tp0_gb"]) + gb(p["weights_mem_gb"])
    pool = sg.size_pool(resolve("Qwen/Qwen3-30B-A3B"), _settings(), avail_after_load=after, pre_load_free=pre,
                        gpu_mib=B200_MIB)
    assert abs(pool.max_total_num_tokens - p["kv_cache_tokens"]) / p["kv_cache_tokens"] < 0.001
    assert f"{p['kv_cache_tokens'] * 48 * 128 * 2 / GiB:.2f}" == p["k_size_gb"]


def test_pool_end_to_end():
    # 5,885,625 tokens against 5,874,221 (+0.19 %); 27.54 GiB left after the pool against 27.30 on TP0
    p = fixture(QWEN)["printed"]
    est = _qwen()
    got = est.engine_view["max_total_num_tokens"]
    assert abs(got - p["kv_cache_tokens"]) / p["kv_cache_tokens"] < TOKENS_LIMIT, got
    assert_avail_mem(est, "Memory pool end.", p["pool_end_avail_tp0_gb"])


# ---------------------------------------------------------------------------------------------------------
# LMCache#2400: Qwen3-14B (bf16) on one H100 with the LMCache connector, SGLang's defaults (pip install of 2026-01-14)

QWEN14 = "qwen3-14b-h100-fa3-lmcache-issue2400"


def _qwen14():
    s = sg.SGLangSettings(**fixture(QWEN14)["settings"], engine_version="0.5.7")
    return sg.ENGINE.estimate(resolve("Qwen/Qwen3-14B"), devices_for_names("H100"), s)


def test_qwen14_defaults_match_the_printed_server_args():
    # 0.5.7 on an 81,559 MiB card at TP1: fa3 on Hopper, chunked_prefill_size 8,192 and mem_fraction_static 0.835
    p = fixture(QWEN14)["printed"]
    ev = _qwen14().engine_view
    assert ev["attention_backend"] == p["attention_backend"]
    assert ev["chunked_prefill_size"] == p["chunked_prefill_size"]
    assert f"{ev['mem_fraction_static']:.3f}" == p["mem_fraction_static"]


def test_qwen14_weights_and_free_memory_after_them():
    # 27.53 GiB against 27.69 (-0.58 %); 51.32 GiB free after them against 50.99 (+0.41 % of the card)
    p = fixture(QWEN14)["printed"]
    est = _qwen14()
    assert_weights(est, p["weights_mem_gb"])
    assert_avail_mem(est, "Load weight end.", p["weights_avail_after_gb"])
