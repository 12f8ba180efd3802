"""A llama.cpp cache with K and V typed apart (-ctk q8_0, V left f16: where flash attention is off, llama.cpp
refuses only a quantized V, PR #7527) is rated by both halves, and its quality column names the pair.

PR #7412 (ggml-org/llama.cpp, JohannesGaessler, 2024-05-20), LLaMA-3-8B F16 weights, wikitext-2, n_ctx 512, rows
weights/K/V: f16/f16/f16 PPL 6.232196 (ΔPPL 0.002443 against FP16 logits, so 6.229753 for the 16-bit model),
f16/q8_0/f16 KV BPV 12.25, PPL 6.233073, KLD 0.000944; f16/f16/q8_0 12.25, 6.232771, 0.000743; f16/q8_0/q8_0 8.50,
6.234369, 0.000980. https://github.com/ggml-org/llama.cpp/pull/7412
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from oomkit.engines.base import get_engine
from oomkit.plan import rating
from oomkit.plan.quality import kv_quality
from oomkit.plan.search import plan
from oomkit.request import devices_from
from tests.sweep_harness import offline  # noqa: F401 (the autouse fixture: no network, a fresh cache)

BASE_PPL = 6.232196 - 0.002443


@pytest.mark.parametrize(("kv", "bpv"), [("f16", 16.0), ("q8_0/f16", 12.25), ("f16/q8_0", 12.25),
                                         ("q8_0", 8.5), ("q8_0/q8_0", 8.5), ("q4_0/f16", 10.25)])
def test_kv_bits_is_the_mean_of_k_and_v(kv, bpv):
    """PR #7412's KV BPV column: K q8_0 with V f16 keeps 12.25 bits per value, not q8_0's 8.5."""
    assert rating.kv_bits(kv) == pytest.approx(bpv)


def test_k_alone_ranks_between_f16_and_k_and_v_q8_0():
    assert rating.kv_bits("f16") > rating.kv_bits("q8_0/f16") > rating.kv_bits("q8_0/q8_0")


@pytest.mark.parametrize(("kv", "ppl", "kld", "name"), [("q8_0/f16", 6.233073, 0.000944, "K q8_0 / V f16"),
                                                       ("f16/q8_0", 6.232771, 0.000743, "K f16 / V q8_0")])
def test_a_measured_pair_has_its_own_figure(kv, ppl, kld, name):
    q = kv_quality(kv)
    assert q.ppl_delta_pct == pytest.approx((ppl / BASE_PPL - 1) * 100, abs=5e-4)
    assert q.kld == kld
    assert q.source == "https://github.com/ggml-org/llama.cpp/pull/7412"
    assert q.text.startswith(f"{name}: +0.0")
    # less loss than both halves q8_0 (6.234369), more than none
    assert 0 < q.ppl_delta_pct < kv_quality("q8_0").ppl_delta_pct


def test_an_unmeasured_pair_is_named_not_unknown():
    q = kv_quality("q4_0/f16")
    assert not q.known and q.text == "K q4_0 / V f16: not measured"
    assert kv_quality("f16/bf16").text == "f16: baseline"  # both halves 16-bit: the baseline


def test_plan_keeps_k_alone_beside_k_and_v_q8_0():
    """llama.cpp b3000 (-fa off by default, PR #15434 made it auto at b6325): Qwen1.5-14B Q4_K_M on a T4 is offered
    -ctk q8_0 alone and -ctk q8_0 -ctv q8_0 -fa; K alone keeps more bits and fewer tokens, so neither dominates."""
    eng = get_engine("llama.cpp")
    p = plan("Qwen/Qwen1.5-14B-Chat-GGUF:Q4_K_M", "llama.cpp", devices=devices_from(gpu="T4"),
             settings=replace(eng.settings(), engine_version="b3000"), fixed_format=True, limit=None)
    by_kv = {(o.settings.cache_type_k, o.settings.cache_type_v): o for o in p.options}
    k_alone, both, f16 = by_kv[("q8_0", "f16")], by_kv[("q8_0", "q8_0")], by_kv[("f16", "f16")]
    assert f16.rating.kv_bits > k_alone.rating.kv_bits > both.rating.kv_bits
    assert f16.context < k_alone.context < both.context
    assert "KV K q8_0 / V f16: +0.053 % ppl" in k_alone.rating.quality_note
    assert "unknown" not in k_alone.rating.quality_note


# PR #7412's rows (weights/K/V, LLaMA-3-8B F16 weights, wikitext-2, n_ctx 512, KLD against FP16 logits), better first
# by KLD: f16/f16/q8_0 0.000743 (KV BPV 12.25), f16/q8_0/f16 0.000944 (12.25), f16/q8_0/q8_0 0.000980 (8.50),
# f16/f16/q5_1 0.001759 (11.00). https://github.com/ggml-org/llama.cpp/pull/7412
@pytest.mark.parametrize(("better", "worse"), [("f16", "f16/q8_0"), ("f16/q8_0", "q8_0/f16"), ("q8_0/f16", "q8_0"),
                                               ("q8_0", "f16/q5_1"), ("q8_0/q8_0", "f16/q5_1")])
def test_kv_order_follows_the_measured_order(better, worse):
    assert rating.kv_order(better) > rating.kv_order(worse)


def test_mean_bits_alone_would_invert_a_measured_pair():
    """f16/f16/q5_1 keeps 11.00 bits per value and K+V q8_0 8.50, yet the q5_1 V loses more (KLD 0.001759 against
    0.000980, ΔPPL 0.006960 against 0.004616): the mean does not rank, the order does."""
    assert rating.kv_bits("f16/q5_1") > rating.kv_bits("q8_0")
    assert rating.kv_order("q8_0") > rating.kv_order("f16/q5_1")


@pytest.mark.parametrize("measured", ["q8_0", "q8_0/f16", "f16/q8_0", "f16"])
def test_an_unmeasured_pair_never_ranks_above_a_measured_better_or_equal_cache(measured):
    """K q4_0 / V f16 has no published figure; K is the more sensitive half (PR #7412), so it ranks with its q4_0
    half, below every measured cache whose halves both keep q8_0 or more."""
    assert rating.kv_order("q4_0/f16") < rating.kv_order(measured)
    assert kv_quality("q4_0/f16").text == "K q4_0 / V f16: not measured"


def test_plan_ranks_k_q4_0_alone_below_k_and_v_q8_0():
    """Qwen1.5-14B Q4_K_M on a T4 at b3000: K q4_0 with V f16 (10.25 bits per value, unmeasured) ranked above K+V q8_0
    (8.5, measured) by the mean (tier 1 was K q8_0 9472, K q4_0 11008, K+V q8_0 14848, K+V q4_0 28416); now it ranks
    below, and K+V q8_0, which also reaches more context, leaves it off the front."""
    eng = get_engine("llama.cpp")
    p = plan("Qwen/Qwen1.5-14B-Chat-GGUF:Q4_K_M", "llama.cpp", devices=devices_from(gpu="T4"),
             settings=replace(eng.settings(), engine_version="b3000"), fixed_format=True, limit=None)
    ranks = {(o.settings.cache_type_k, o.settings.cache_type_v): o.rank for o in p.options if o.tier == 1}
    assert ranks[("q8_0", "f16")] < ranks[("q8_0", "q8_0")] < ranks[("q4_0", "q4_0")]
    assert ("q4_0", "f16") not in ranks  # was ranked 2nd, above K+V q8_0
