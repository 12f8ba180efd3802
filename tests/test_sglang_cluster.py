"""SGLang beyond one TP group: data-parallel attention (--enable-dp-attention), expert parallelism (--ep-size,
--moe-a2a-backend deepep, --ep-num-redundant-experts), --moe-dense-tp-size and ranks named by node (--nnodes).

The expected figures are worked by hand from DeepSeek-V3's config.json (61 layers, the first 3 dense; hidden 7168;
128 heads; q_lora_rank 1536, qk 128 + 64, v 128, kv_lora_rank 512; 256 experts of 2048; vocab 129280; FP8 weights
in 128 x 128 blocks, bf16 embedding) and SGLang's sharding rules (cited on each test), not from oomkit's code."""

from __future__ import annotations

import pytest

from oomkit.engines.sglang import SGLangSettings
from oomkit.engines.sglang.args import parse_args
from oomkit.engines.sglang.layout import estimate
from oomkit.errors import OomkitError
from oomkit.hardware.catalog import with_facts
from oomkit.memory import Device
from oomkit.model.catalog import lookup
from oomkit.model.hf_config import spec_from_config
from oomkit.units import MiB

H200 = with_facts(Device("CUDA0", "NVIDIA H200", 143771 * MiB))
# per layer, FP8 (1 byte a weight; the block scales are 0.02 % and left out of the hand figures)
Q_B = 1536 * 128 * (128 + 64)
KV_B = 512 * 128 * (128 + 128)
O_PROJ = 128 * 128 * 7168
EMBED = 129280 * 7168 * 2  # bf16
# deepseek_v2.py post_load_weights: kv_b_proj dequantized to bf16 and kept again as w_kc + w_vc, per attention head
W_KC_VC = KV_B * 2
EXPERT = 3 * 7168 * 2048  # gate, up, down of one routed expert
MOE_LAYERS = 61 - 3


@pytest.fixture(scope="module")
def dsv3():
    e = lookup("deepseek-v3")
    return spec_from_config(e.config, name=e.name)


def _w(spec, **kw) -> list[int]:
    est = estimate(spec, (H200,), SGLangSettings(context_length=8192, **kw))
    return [u.weights_bytes for u in est.devices]


def test_dp_attention_replicates_attention_and_embedding(dsv3):
    """layers/dp_attention.py: attn_tp_size = tp_size // dp_size (8 // 8 = 1), so every rank holds all 128 heads'
    q_b / kv_b / o_proj (the MLA q_a / kv_a are ReplicatedLinear in both layouts); models/deepseek_v2.py builds
    the embedding with VocabParallelEmbedding(enable_tp=not is_dp_attention_enabled()): whole on every rank. The
    MoE and lm_head stay split over the 8 ranks."""
    tp8 = _w(dsv3, tp_size=8)
    dp8 = _w(dsv3, tp_size=8, dp_size=8, enable_dp_attention=True)
    assert len(dp8) == 8  # DP attention runs inside the TP group: 8 GPUs, not 64
    expected = 7 / 8 * (61 * (Q_B + KV_B + O_PROJ + W_KC_VC) + EMBED)
    assert dp8[0] - tp8[0] == pytest.approx(expected, rel=2e-3)


def test_dp_attention_with_attention_tp(dsv3):
    """--tp 8 --dp 2: attn_tp_size 4, the attention split over 4 ranks instead of 8."""
    tp8 = _w(dsv3, tp_size=8)
    dp2 = _w(dsv3, tp_size=8, dp_size=2, enable_dp_attention=True)
    expected = (1 / 4 - 1 / 8) * 61 * (Q_B + KV_B + O_PROJ + W_KC_VC) + 7 / 8 * EMBED
    assert dp2[0] - tp8[0] == pytest.approx(expected, rel=2e-3)


def test_redundant_experts_add_physical_slots(dsv3):
    """eplb: num_physical_experts = 256 + 32 redundant = 288, 36 whole experts per rank over EP 8 (deepep sets
    ep_size = tp_size) instead of 32: 4 more experts in each of the 58 MoE layers."""
    base = _w(dsv3, tp_size=8, dp_size=8, enable_dp_attention=True, moe_a2a_backend="deepep")
    red = _w(dsv3, tp_size=8, dp_size=8, enable_dp_attention=True, moe_a2a_backend="deepep",
             ep_num_redundant_experts=32)
    assert red[0] - base[0] == pytest.approx(4 * MOE_LAYERS * EXPERT, rel=2e-3)


def test_moe_dense_tp_size_one_keeps_dense_mlp_whole(dsv3):
    """--moe-dense-tp-size 1: the 3 dense layers' MLP (intermediate 18432) and the shared experts (2048) whole."""
    tp8 = _w(dsv3, tp_size=8, dp_size=8, enable_dp_attention=True)
    dense1 = _w(dsv3, tp_size=8, dp_size=8, enable_dp_attention=True, moe_dense_tp_size=1)
    mlp = 3 * 3 * 7168 * 18432 + MOE_LAYERS * 3 * 7168 * 2048
    # the router (ffn_gate_inp, 256 x 7168) is replicated either way
    assert dense1[0] - tp8[0] == pytest.approx(7 / 8 * mlp, rel=2e-3)


def test_ranks_named_by_node(dsv3):
    est = estimate(dsv3, (H200,), SGLangSettings(context_length=8192, tp_size=16, dp_size=16,
                                                 enable_dp_attention=True, moe_a2a_backend="deepep", nnodes=2))
    ids = [u.id for u in est.devices]
    assert len(ids) == 16 and ids[0] == "node0/GPU0 (rank 0)" and ids[11] == "node1/GPU3 (rank 11)"


def test_ep_size_must_divide_tp(dsv3):
    with pytest.raises(OomkitError, match="--ep-size 3"):
        estimate(dsv3, (H200,), SGLangSettings(context_length=8192, tp_size=8, ep_size=3))


def test_flags_parsed():
    _, _, s = parse_args(["--model-path", "deepseek-ai/DeepSeek-V3", "--tp", "16", "--dp-size", "16",
                          "--enable-dp-attention", "--moe-a2a-backend", "deepep", "--ep-num-redundant-experts", "32",
                          "--moe-dense-tp-size", "1", "--nnodes", "2", "--node-rank", "0"])
    assert (s.tp_size, s.dp_size, s.enable_dp_attention, s.moe_a2a_backend, s.ep_num_redundant_experts,
            s.moe_dense_tp_size, s.nnodes) == (16, 16, True, "deepep", 32, 1, 2)


# DeepSeek V3.2 (NSA): the index keys beside the latent. config.json: 61 layers, 512 + 64 latent, index_head_dim 128.
INDEXER = 128 + 128 // 128 * 4  # memory_pool.py NSATokenToKVPool index_k_with_scale_buffer (uint8)


@pytest.fixture(scope="module")
def dsv32():
    e = lookup("deepseek-v3.2")
    return spec_from_config(e.config, name=e.name)


def test_v32_cell_size_counts_the_index_keys(dsv32):
    """profile_max_num_token: "Add indexer KV cache overhead for NSA models (DeepSeek V3.2)": cell_size +=
    (index_head_dim + index_head_dim // 128 * 4) * num_layers; server_args.py: page size 64 for DeepSeek NSA."""
    est = estimate(dsv32, (H200,), SGLangSettings(context_length=32768, tp_size=8, dp_size=8,
                                                  enable_dp_attention=True, mem_fraction_static=0.85))
    v = est.engine_view
    assert v["cell_size_bytes"] == 61 * (576 * 2 + INDEXER)
    assert v["page_size"] == 64
    # the pool: (tokens + page) rows of latent + index key in each layer, logged together as the KV size
    assert v["k_bytes"] == (v["max_total_num_tokens"] + 64) * 61 * (576 * 2 + INDEXER)


def test_v32_fp8_pool_is_packed(dsv32):
    """An fp8 NSA latent is allocated as 656 bytes a row (layers/attention/nsa/utils.py: kv_lora_rank +
    kv_lora_rank // 128 * 4 + rope in bf16), while cell_size prices it at 576: the pool takes more than priced."""
    est = estimate(dsv32, (H200,), SGLangSettings(context_length=32768, tp_size=8, dp_size=8,
                                                  enable_dp_attention=True, mem_fraction_static=0.85,
                                                  kv_cache_dtype="fp8_e4m3"))
    v = est.engine_view
    assert v["cell_size_bytes"] == 61 * (576 + INDEXER)
    assert v["k_bytes"] == (v["max_total_num_tokens"] + 64) * 61 * (656 + INDEXER)


def test_dp_attention_kv_pool_matches_log(dsv3):
    """sglang#6017: a DP-attention rank's MLA pool, "#tokens: 161488, KV size: 10.57 GB"."""
    import json
    from pathlib import Path

    from oomkit.engines.sglang.kv import cache_layout, kv_pools

    fx = json.loads((Path(__file__).parent / "fixtures" / "engine_logs" / "sglang" /
                     "deepseek-v3-dp-attention-kv-issue6017.json").read_text())
    s = SGLangSettings(tp_size=8, dp_size=8, enable_dp_attention=True)
    (pool,) = kv_pools(cache_layout(dsv3, s), s, fx["printed"]["kv_cache_tokens"])
    assert f"{pool.k_bytes / 2**30:.2f}" == fx["printed"]["k_size_gb"]


def test_node_totals(dsv3):
    est = estimate(dsv3, (H200,), SGLangSettings(context_length=8192, tp_size=16, nnodes=2))
    nodes = est.engine_view["node_memory_bytes"]
    assert nodes == {"node0": sum(u.total_bytes for u in est.devices[:8]),
                     "node1": sum(u.total_bytes for u in est.devices[8:])}


@pytest.mark.parametrize(("version", "sizes"), [("0.5.5", [7] * 7 + [12]), ("0.5.6", [7, 7, 7] + [8] * 5)])
def test_pp_remainder_by_release(dsv3, version, sizes):
    """sglang#13282 (review, 2025-11-17): DeepSeek's 61 layers at --pp-size 8 were 7 x 7 + 12 before the fix;
    after it distributed/utils.py get_pp_indices gives the last 61 % 8 = 5 stages one layer more."""
    from oomkit.engines.sglang.layout import get_pp_indices
    from oomkit.engines.sglang.settings import parse_version

    assert [len(st) for st in get_pp_indices(dsv3, 8, parse_version(version))] == sizes


def test_deepep_keeps_shared_experts_whole(dsv3):
    """models/deepseek_v2.py DeepseekV2MoE: shared_experts get tp_size=1 under DeepEP (and mooncake / flashinfer
    all-to-all): each rank holds the whole shared expert (2048 wide) of the 58 MoE layers instead of 1/8."""
    tp = _w(dsv3, tp_size=8, dp_size=8, enable_dp_attention=True, ep_size=8)
    a2a = _w(dsv3, tp_size=8, dp_size=8, enable_dp_attention=True, moe_a2a_backend="deepep")
    old = _w(dsv3, tp_size=8, dp_size=8, enable_dp_attention=True, enable_deepep_moe=True)
    assert a2a == old
    assert a2a[0] - tp[0] == pytest.approx(7 / 8 * MOE_LAYERS * 3 * 7168 * 2048, rel=2e-3)


def test_v32_pool_matches_log():
    """sglang#11309 on 8x B200 (fixture): "KV Cache is allocated. #tokens: 975424, KV size: 43.67 GB" with the
    index keys counted; the same day's main logged the latent alone, "#tokens: 1462784, KV size: 54.52 GB"
    (65.49 GB with the index, as the author says)."""
    import json
    from pathlib import Path

    from oomkit.engines.sglang.kv import cache_layout, kv_pools, row_bytes

    fx = json.loads((Path(__file__).parent / "fixtures" / "engine_logs" / "sglang" /
                     "deepseek-v3.2-exp-8xb200-dp8-nsa-pr11309.json").read_text())
    e = lookup("deepseek-v3.2-exp")
    spec = spec_from_config(e.config, name=e.name)
    s = SGLangSettings(tp_size=8, dp_size=8, enable_dp_attention=True, kv_cache_dtype="fp8_e4m3")
    lay = cache_layout(spec, s)
    p = fx["printed"]
    (pool,) = kv_pools(lay, s, p["kv_cache_tokens"])
    assert f"{pool.k_bytes / 2**30:.2f}" == p["k_size_gb"]
    (before,) = kv_pools(lay, s, p["before_pr_kv_cache_tokens"])
    latent_only = before.k_bytes * 656 // (656 + INDEXER)
    assert f"{latent_only / 2**30:.2f}" == p["before_pr_k_size_gb"]
    assert f"{before.k_bytes / 2**30:.2f}" == p["before_pr_k_size_with_index_gb"]
    assert row_bytes(lay.full_layers[0], lay, s) == 656 + INDEXER
