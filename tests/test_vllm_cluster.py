"""vLLM beyond one TP group: data parallelism, expert parallelism for MoE, pipeline stages across nodes, each rank
named by its node. The expected figures are worked by hand from vLLM's source (cited on each test), not from
oomkit's code: the Qwen3-30B-A3B checkpoint's tensor shapes (config.json: 48 layers, 128 experts of
moe_intermediate_size 768, hidden 2048) give the expert bytes."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from oomkit.engines.vllm import VllmSettings
from oomkit.engines.vllm.args import parse_args
from oomkit.engines.vllm.layout import estimate
from oomkit.errors import OomkitError
from oomkit.hardware.catalog import with_facts
from oomkit.memory import Device
from oomkit.model.catalog import lookup
from oomkit.model.hf_config import spec_from_config
from oomkit.units import MiB

H100 = with_facts(Device("CUDA0", "NVIDIA H100 80GB HBM3", 81559 * MiB))
# Qwen3-30B-A3B routed experts in bf16: 48 layers x 128 experts x 3 matrices x 2048 x 768 x 2 bytes
EXPERT_BYTES = 48 * 128 * 3 * 2048 * 768 * 2
PER_EXPERT = EXPERT_BYTES // 128


@pytest.fixture(scope="module")
def qwen3_moe():
    e = lookup("qwen3-30b-a3b")
    return spec_from_config(e.config, name=e.name)


def _weights(spec, **kw) -> list[int]:
    est = estimate(spec, (H100,), VllmSettings(max_model_len=8192, **kw))
    return [u.weights_bytes for u in est.devices]


def test_expert_parallel_splits_experts_over_dp_x_tp(qwen3_moe):
    """fused_moe/config.py FusedMoEParallelConfig.make: with --enable-expert-parallel the EP group is dp x tp and
    the experts' TP size is 1; attention stays TP-sharded. TP2 x DP2: 32 experts each instead of half of 128."""
    tp2 = _weights(qwen3_moe, tensor_parallel_size=2)
    ep4 = _weights(qwen3_moe, tensor_parallel_size=2, data_parallel_size=2, enable_expert_parallel=True)
    assert len(ep4) == 4 and len(set(ep4)) == 1
    # TP2 holds 64 experts' worth per rank (each expert's intermediate halved); EP4 holds 32 whole experts
    assert tp2[0] - ep4[0] == pytest.approx(EXPERT_BYTES // 2 - EXPERT_BYTES // 4, rel=1e-6)


def test_expert_remainder_goes_to_the_first_ranks(qwen3_moe):
    """fused_moe/layer.py determine_expert_map: base = 128 // 3 = 42, the first 128 % 3 = 2 ranks hold 43."""
    w = _weights(qwen3_moe, data_parallel_size=3, enable_expert_parallel=True)
    assert w[0] == w[1]
    # one expert more in each of the 48 layers; and the 43 experts' w2 (43 x 3 MiB = 129 MiB) sits in a 130 MiB
    # segment whose 1 MiB tail the caching allocator does not split off, where 42 x 3 MiB fills its own
    assert w[0] - w[2] == PER_EXPERT + 48 * (1 << 20)


def test_data_parallel_without_ep_replicates_the_model(qwen3_moe):
    assert _weights(qwen3_moe, data_parallel_size=2) == _weights(qwen3_moe) * 2


def test_ranks_named_by_node():
    """-tp 4 -pp 2 over two nodes with Ray: TP inside a node, one stage per node (docs/serving/
    parallelism_scaling.md); ranks ordered (dp, pp, tp) by initialize_model_parallel."""
    e = lookup("qwen3-30b-a3b")
    spec = spec_from_config(e.config, name=e.name)
    est = estimate(spec, (H100,), VllmSettings(max_model_len=8192, tensor_parallel_size=4,
                                               pipeline_parallel_size=2, nnodes=2))
    ids = [u.id for u in est.devices]
    assert ids[0] == "node0/GPU0 (rank 0)" and ids[7] == "node1/GPU3 (rank 7)"
    # get_pp_indices: 48 layers, 24 per stage; the embedding on stage 0, norm + lm_head on stage 1 (same size)
    assert len({u.weights_bytes for u in est.devices[:4]}) == 1


def test_nnodes_must_divide_the_world(qwen3_moe):
    with pytest.raises(OomkitError, match="--nnodes 3"):
        estimate(qwen3_moe, (H100,), VllmSettings(max_model_len=8192, tensor_parallel_size=4, nnodes=3))


def test_nnodes_flag_parsed():
    _, _, s = parse_args(["serve", "Qwen/Qwen3-30B-A3B", "-tp", "8", "-dp", "2", "--enable-expert-parallel",
                    "--nnodes", "2"])
    assert (s.tensor_parallel_size, s.data_parallel_size, s.enable_expert_parallel, s.nnodes) == (8, 2, True, 2)


# DeepSeek V3.2 sparse attention: the lightning indexer's key cache beside the latent. config.json: 61 layers,
# kv_lora_rank 512 + qk_rope_head_dim 64, index_head_dim 128.
INDEXER = 128 + 128 // 128 * 4  # models/deepseek_v2.py DeepseekV32IndexerCache: fp8 key + a float32 scale per 128


@pytest.fixture(scope="module")
def dsv32():
    e = lookup("deepseek-v3.2")
    return spec_from_config(e.config, name=e.name)


@pytest.mark.parametrize(("kv", "latent"), [("auto", 576 * 2), ("fp8", 656)])
def test_v32_indexer_cache_beside_the_latent(dsv32, kv, latent):
    """UniformTypeKVCacheSpecs: the MLA layer and its indexer cache share one block table, the page is the sum,
    so each token costs latent + indexer in every layer on every rank (MLA is not split by TP). An fp8 cache
    becomes fp8_ds_mla (656 bytes: 512 fp8 + 4 float32 scales + 64 bf16 rope)."""
    H200 = with_facts(Device("CUDA0", "NVIDIA H200", 143771 * MiB))
    est = estimate(dsv32, (H200,), VllmSettings(max_model_len=32768, tensor_parallel_size=8, kv_cache_dtype=kv))
    assert est.kv_bytes_per_token == 8 * 61 * (latent + INDEXER)
    assert est.engine_view["block_size"] == 64  # "Forcing kv cache block size to 64 for FlashMLASparse backend."
    assert est.engine_view["kv_block_bytes"] == 64 * 61 * (latent + INDEXER)


def test_models_without_indexer_unchanged():
    e = lookup("deepseek-v3.1")
    spec = spec_from_config(e.config, name=e.name)
    H200 = with_facts(Device("CUDA0", "NVIDIA H200", 143771 * MiB))
    est = estimate(spec, (H200,), VllmSettings(max_model_len=32768, tensor_parallel_size=8))
    assert est.kv_bytes_per_token == 8 * 61 * 576 * 2


def test_expert_placement_matches_a_dp_ep_log():
    """vllm#28037: DP2 x TP2 with --enable-expert-parallel prints each rank's EP rank and its 16 of 64 experts."""
    import json
    from pathlib import Path

    from oomkit.engines import _tp
    from oomkit.engines.vllm.weights import ep_rank_of

    fx = json.loads((Path(__file__).parent / "fixtures" / "engine_logs" / "vllm" /
                     "moe-64e-dp2-tp2-ep4-placement-pr28037.json").read_text())
    tp, dp = fx["settings"]["tensor_parallel_size"], fx["settings"]["data_parallel_size"]
    r = SimpleNamespace(tp=tp, pp=1, dp=dp)  # the three sizes ep_rank_of reads off a Resolved
    for rank in fx["printed"]["ranks"]:
        g = rank["dp"] * tp + rank["tp"]  # global rank, ordered (dp, pp, tp)
        e = ep_rank_of(g, r)
        assert e == rank["ep"]
        n = _tp.local_experts(fx["printed"]["global_experts"], fx["printed"]["ep_size"], e)
        assert n == rank["local_experts"]
        assert sum(_tp.local_experts(64, 4, i) for i in range(e)) == rank["first_global_expert"]  # linear placement


def test_v32_indexer_weights_close_the_published_count():
    """The HF safetensors totals (catalog params_published): DeepSeek-V3.2 = V3 + the indexer. With the indexer's
    wq_b (1536 x 64 x 128), wk (7168 x 128), k_norm and weights_proj (7168 x 64) in every layer, V3.2 falls short
    of its published count by what V3 falls short of its own (the fp8 scales and the MTP block's extras)."""
    gaps = []
    for name in ("deepseek-v3", "deepseek-v3.2"):
        e = lookup(name)
        spec = spec_from_config(e.config, name=e.name)
        gaps.append(e.params_published - sum(t.n_elements for t in spec.weights.tensors))
    assert abs(gaps[1] - gaps[0]) < 0.001 * 685e9


def test_v32_indexer_replicated_on_every_rank(dsv32):
    """models/deepseek_v2.py Indexer: wq_b, wk, weights_proj are ReplicatedLinear: whole on each TP rank."""
    H200 = with_facts(Device("CUDA0", "NVIDIA H200", 143771 * MiB))
    e = lookup("deepseek-v3.1")
    v31 = spec_from_config(e.config, name=e.name)
    w = [estimate(sp, (H200,), VllmSettings(max_model_len=8192, tensor_parallel_size=8)).devices[0].weights_bytes
         for sp in (v31, dsv32)]
    # fp8 wq_b + wk with their 128x128 block scales, bf16 weights_proj and k_norm, in 61 layers
    per_layer = (1536 * 8192 + 12 * 64 * 4) + (7168 * 128 + 56 * 4) + 7168 * 64 * 2 + 2 * 128 * 2
    assert w[1] - w[0] == pytest.approx(61 * per_layer, rel=0.01)


def test_node_totals(qwen3_moe):
    """-tp 4 -pp 2 on two nodes: each node's four GPUs summed under engine_view node_memory_bytes."""
    est = estimate(qwen3_moe, (H100,), VllmSettings(max_model_len=8192, tensor_parallel_size=4,
                                                    pipeline_parallel_size=2, nnodes=2))
    nodes = est.engine_view["node_memory_bytes"]
    assert list(nodes) == ["node0", "node1"]
    assert nodes["node0"] == sum(u.total_bytes for u in est.devices[:4])


@pytest.mark.parametrize(("version", "sizes"), [("0.7.2", [20, 20, 21]), ("0.8.0", [20, 21, 20])])
def test_pp_remainder_by_release(version, sizes):
    """get_pp_indices for 61 layers at -pp 3: up to 0.7.x (PR #6115) the last stage takes the leftover layer,
    the last node fullest (vllm#12895, DeepSeek-R1 -pp 3 -tp 8 on 0.7.2); PR #13839 (0.8.0) gives it to the
    stage before the last."""
    from oomkit.engines.vllm.config import pp_partition
    from oomkit.engines.vllm.settings import parse_version

    assert [hi - lo for lo, hi in pp_partition(61, 3, parse_version(version))] == sizes


def test_last_node_fullest_on_0_7_2():
    """vllm#12895 (fixture): DeepSeek-R1 BF16, -pp 3 -tp 8 over three Ray nodes on 0.7.2, "the last node in the
    Ray cluster consistently consumes more GPU memory for model preloading than other nodes"."""
    import json
    from pathlib import Path

    fx = json.loads((Path(__file__).parent / "fixtures" / "engine_logs" / "vllm" /
                     "deepseek-r1-bf16-3x8xa100-pp3-tp8-ray-v0.7.2-issue12895.json").read_text())
    st = fx["settings"]
    e = lookup("deepseek-r1")
    spec = spec_from_config(e.config, name=e.name)
    a100 = with_facts(Device("CUDA0", "NVIDIA A100-SXM4-80GB", 81920 * MiB))
    est = estimate(spec, (a100,), VllmSettings(
        max_model_len=st["max_model_len"], tensor_parallel_size=st["tensor_parallel_size"],
        pipeline_parallel_size=st["pipeline_parallel_size"], nnodes=st["nnodes"], dtype="bfloat16",
        engine_version=fx["engine_version"]))
    per_node = {n: sum(u.weights_bytes for u in est.devices if u.id.startswith(n + "/")) for n in
                ("node0", "node1", "node2")}
    assert max(per_node, key=per_node.get) == "node2"  # the last stage: 21 layers and the lm_head


def test_expert_remainder_before_balanced_sharding(qwen3_moe):
    """vllm#21497 ("More balanced expert sharding", July 2025): before it "all remaining experts are assigned to
    the last rank" (30 experts over 8 ranks: 3 x 7 + 9). 128 experts over EP 3: 42, 42, 44 on 0.10.0."""
    w = _weights(qwen3_moe, data_parallel_size=3, enable_expert_parallel=True, engine_version="0.10.0")
    assert w[0] == w[1]
    assert w[2] - w[0] == 2 * PER_EXPERT
    from oomkit.engines import _tp

    assert [_tp.local_experts(30, 8, r, balanced=False) for r in range(8)] == [3] * 7 + [9]
    assert [_tp.local_experts(30, 8, r) for r in range(8)] == [4] * 6 + [3] * 2


def test_head_node_gpus_hold_no_more_than_their_workers():
    """Qwen3-30B-A3B-2507 -pp 2 -tp 4 over two GH200 Ray nodes (vLLM 0.10.1, rwood-97/multi_node_inference): the
    head node's four GPUs, GPU 0 beside the Ray head, the API server and the EngineCore, print the same KV cache
    (6,654,432 tokens each); oomkit gives GPU 0 of the head the same budget as the other GPUs of its stage, and
    the head node the first stage (the placement group's first bundle is pinned to the node running vllm serve)."""
    import json
    from pathlib import Path

    from oomkit.engines.vllm.cluster import HEAD_NODE_PROCESSES

    fx = json.loads((Path(__file__).parent / "fixtures" / "engine_logs" / "vllm" /
                     "qwen3-30b-a3b-2507-2x4xgh200-pp2-tp4-ray-v0.10.1.json").read_text())
    printed = fx["printed"]["kv_cache_tokens_printed"]
    assert printed[:4] == [fx["printed"]["kv_cache_tokens_per_stage"]["0"]] * 4
    e = lookup(fx["model"])
    spec = spec_from_config(e.config, name=e.name)
    gh200 = with_facts(Device("CUDA0", "NVIDIA GH200 120GB", 97871 * MiB))
    st = fx["settings"]
    est = estimate(spec, (gh200,), VllmSettings(
        max_model_len=st["max_model_len"], tensor_parallel_size=4, pipeline_parallel_size=2, nnodes=2,
        engine_version=fx["engine_version"]))
    ids = [u.id for u in est.devices]
    avail = est.engine_view["available_kv_cache_bytes"]
    assert all(i.startswith("node0/") for i in ids[:4])
    assert len({avail[i] for i in ids[:4]}) == 1
    assert any("EngineCore" in p for p in HEAD_NODE_PROCESSES)
