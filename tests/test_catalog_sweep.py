"""Models a name sweep found missing resolve offline from the catalog with their published shapes. The expected
values are read from each entry's cited source (model card, the sibling's config.json, the third-party config
named in the entry), not from oomkit's output."""

from __future__ import annotations

import pytest

from oomkit.model import catalog
from oomkit.model.hf_config import spec_from_config

NAMES = {
    "NousResearch/Hermes-4-70B": "hermes-4-70b",
    "Hermes-4-70B": "hermes-4-70b",
    "NousResearch/Hermes-4-405B": "hermes-4-405b",
    "NousResearch/Hermes-4-14B": "hermes-4-14b",
    "Qwen/Qwen3-Embedding-8B": "qwen3-embedding-8b",
    "qwen3-embedding:8b": "qwen3-embedding-8b",
    "qwen3-embedding:4b": "qwen3-embedding-4b",
    "qwen3-embedding:0.6b": "qwen3-embedding-0.6b",
    "google/gemma-3n-E2B-it": "gemma-3n-e2b-it",
    "google/gemma-3n-E2B": "gemma-3n-e2b-it",
    "gemma3n:e2b": "gemma-3n-e2b-it",
    "mixtral:8x22b": "mixtral-8x22b-instruct-v0.1",
    "baidu/ERNIE-4.5-21B-A3B-PT": "ernie-4.5-21b-a3b-pt",
    "ERNIE-4.5-21B-A3B-PT": "ernie-4.5-21b-a3b-pt",
    "baidu/ERNIE-4.5-0.3B-PT": "ernie-4.5-0.3b-pt",
    "LiquidAI/LFM2-1.2B": "lfm2-1.2b",
    "LiquidAI/LFM2-1.2B-GGUF": "lfm2-1.2b",
    "LiquidAI/LFM2-8B-A1B": "lfm2-8b-a1b",
    "tencent/Hunyuan-A13B-Instruct": "hunyuan-a13b-instruct",
}


@pytest.mark.parametrize("name,slug", sorted(NAMES.items()))
def test_swept_names_resolve_offline(name, slug):
    assert catalog.resolve_slug(name) == slug


# name -> (layers, attention layers' KV heads, head_dim, routed experts, FFN width)
SHAPES = {
    # Llama-3.1-70B / 405B config.json: 80 / 126 layers, 8 KV heads, 8192 / 16384 hidden over 64 / 128 heads
    "NousResearch/Hermes-4-70B": (80, 8, 128, 0, 28672),
    "NousResearch/Hermes-4-405B": (126, 8, 128, 0, 53248),
    # Qwen3-14B config.json: 40 layers, 8 KV heads, head_dim 128, intermediate 17408
    "NousResearch/Hermes-4-14B": (40, 8, 128, 0, 17408),
    # Qwen3-8B(-Base): 36 layers (also the Qwen3-Embedding card), 8 KV heads, head_dim 128, intermediate 12288
    "Qwen/Qwen3-Embedding-8B": (36, 8, 128, 0, 12288),
    # ai-edge-torch get_model_config_e2b: 30 layers, 2 query groups, head_dim 256, intermediate 8192
    "google/gemma-3n-E2B-it": (30, 2, 256, 0, 8192),
    # Mixtral-8x22B config.json: 56 layers, 8 KV heads, 6144 / 48 heads, 8 experts of 16384
    "mixtral:8x22b": (56, 8, 128, 8, 16384),
    # transformers Ernie4_5Config defaults (baidu/ERNIE-4.5-0.3B-PT): 18 layers, 2 KV heads, head_dim 128, FFN 3072
    "baidu/ERNIE-4.5-0.3B-PT": (18, 2, 128, 0, 3072),
    # Hunyuan-A13B config (code search id 57609511449): 32 layers, 8 KV heads of 128, 64 experts of 3072
    "tencent/Hunyuan-A13B-Instruct": (32, 8, 128, 64, 3072),
}


# name -> (attention layer indices, KV heads, head_dim (hidden / heads), dense FFN widths, (experts, used, width))
LFM2 = {
    # LFM2-1.2B config: full_attn_idxs [2, 5, 8, 10, 12, 14] of 16, 32 / 8 heads over 2048, block_ff_dim 12288
    # auto-adjusted: int(2 * 12288 / 3) = 8192, already a multiple of 256
    "LiquidAI/LFM2-1.2B": ([2, 5, 8, 10, 12, 14], 8, 64, {8192}, None),
    # LFM2-8B-A1B config: attention at 2, 6, 10, 14, 18, 21 of 24; 2 dense layers of 7168; 32 experts of 1792, 4 used
    "LiquidAI/LFM2-8B-A1B": ([2, 6, 10, 14, 18, 21], 8, 64, {7168}, (32, 4, 1792)),
}


@pytest.mark.parametrize("name", sorted(LFM2))
def test_lfm2_entries_have_their_published_shapes(name):
    attn_at, kv_heads, head_dim, dense, moe = LFM2[name]
    spec = spec_from_config(catalog.lookup(name).config, name=name, weight_format="bf16")
    assert [lay.index for lay in spec.layers if lay.attention is not None] == attn_at
    assert {(lay.attention.n_kv_heads, lay.attention.head_dim_k) for lay in spec.layers if lay.attention} == \
        {(kv_heads, head_dim)}
    assert {lay.ffn.n_ff for lay in spec.layers if not lay.ffn.n_experts} == dense
    experts = {(lay.ffn.n_experts, lay.ffn.n_experts_used, lay.ffn.n_ff_expert) for lay in spec.layers
               if lay.ffn.n_experts}
    assert experts == ({moe} if moe else set())


# Published totals (model cards): LFM2-1.2B 1.17B; LFM2-8B-A1B 8.3B; Hunyuan-A13B 80B; within 2 %
@pytest.mark.parametrize("name,published", [("LiquidAI/LFM2-1.2B", 1.17e9), ("LiquidAI/LFM2-8B-A1B", 8.3e9),
                                            ("tencent/Hunyuan-A13B-Instruct", 80e9)])
def test_parameter_count_matches_the_card(name, published):
    total = spec_from_config(catalog.lookup(name).config, name=name, weight_format="bf16").params_total
    assert abs(total / published - 1) <= 0.02


def test_ernie_21b_a3b_has_one_dense_layer_then_64_experts_with_2_shared():
    # transformers Ernie4_5_MoeConfig defaults (baidu/ERNIE-4.5-21B-A3B-PT): 28 layers, 20 query / 4 KV heads over
    # hidden 2560; layer 0 dense (FFN 12288), layers 1-27 MoE: 64 experts of 1536, 6 active, 2 shared experts
    cfg = catalog.lookup("baidu/ERNIE-4.5-21B-A3B-PT").config
    spec = spec_from_config(cfg, name="ernie", weight_format="bf16")
    assert spec.architecture == "ernie4_5-moe"
    assert len(spec.layers) == 28
    assert {(lay.attention.n_kv_heads, lay.attention.head_dim_k) for lay in spec.layers} == {(4, 128)}
    assert spec.layers[0].ffn.n_experts == 0 and spec.layers[0].ffn.n_ff == 12288
    moe = {(f.n_experts, f.n_experts_used, f.n_ff_expert, f.n_ff_shared) for f in (lay.ffn for lay in spec.layers[1:])}
    assert moe == {(64, 6, 1536, 2 * 1536)}
    # model card: 21B total (transformers' docs: 21B total, 3B active)
    assert 21e9 < spec.params_total < 22e9


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_swept_entries_have_their_published_shapes(name):
    layers, kv_heads, head_dim, experts, ff = SHAPES[name]
    spec = spec_from_config(catalog.lookup(name).config, name=name, weight_format="bf16")
    assert len(spec.layers) == layers
    attn = [lay.attention for lay in spec.layers if lay.attention is not None]
    assert {a.n_kv_heads for a in attn} == {kv_heads}
    assert {a.head_dim_k for a in attn} == {head_dim}
    assert {lay.ffn.n_experts for lay in spec.layers} == {experts}
    assert {lay.ffn.n_ff_expert if experts else lay.ffn.n_ff for lay in spec.layers} == {ff}


def test_gemma3n_e2b_shares_the_kv_of_its_last_ten_layers():
    # ai-edge-torch E2B num_kv_shared_layers 10; llama.cpp src/models/gemma3n.cpp n_layer_kv_from_start = 20
    spec = spec_from_config(catalog.lookup("gemma3n:e2b").config, name="gemma3n:e2b", weight_format="bf16")
    assert [lay.index for lay in spec.layers if lay.kv_source is not None] == list(range(20, 30))
    # every 5th layer global, the rest a 512-token window
    assert [lay.index for lay in spec.layers if lay.attention.window is None] == [4, 9, 14, 19, 24, 29]


def test_nemotron_nas_block_configs_give_each_layer_its_own_attention_and_ffn():
    # Llama-3.3-Nemotron-Super-49B-v1's config.json (ai-dynamo/aiconfigurator@095f58a51c4c, the catalog entry):
    # 49 layers with 64 heads / 8 KV heads (n_heads_in_group 8), 31 whose attention is a no-op; every FFN from
    # ffn_mult, int(2 * ffn_mult * 8192 / 3) rounded up to 256 (conversion/deci.py _ffn_mult_to_intermediate_size)
    from oomkit.errors import OomkitError

    spec = spec_from_config(catalog.lookup("nvidia/Llama-3_3-Nemotron-Super-49B-v1").config, name="super",
                            weight_format="bf16")
    assert spec.architecture == "deci"
    heads = [(la.attention.n_heads, la.attention.n_kv_heads) for la in spec.layers]
    assert heads.count((64, 8)) == 49 and heads.count((0, 0)) == 31
    assert {la.ffn.n_ff for la in spec.layers} == {2816, 5632, 7168, 14336, 17920, 28672}
    # src/models/deci.cpp: a layer without attention loads no attn_norm and no q/k/v/o; the KV cache row is 0 bytes
    names = {t.name for t in spec.weights.tensors}
    no_attn = next(la.index for la in spec.layers if not la.attention.n_heads)
    assert f"blk.{no_attn}.attn_norm.weight" not in names and f"blk.{no_attn}.attn_q.weight" not in names
    assert sum(la.attention.k_per_token + la.attention.v_per_token for la in spec.layers) == 49 * 2 * 8 * 128
    # a cut config (2 of its 80 block_configs) is refused with the reason
    block = {"attention": {"n_heads_in_group": 8, "no_op": False, "replace_with_linear": False},
             "ffn": {"ffn_mult": 2.625, "no_op": False, "replace_with_linear": False}}
    cfg = {"architectures": ["DeciLMForCausalLM"], "model_type": "nemotron-nas", "hidden_size": 8192,
           "intermediate_size": None, "num_attention_heads": 64, "num_hidden_layers": 80,
           "num_key_value_heads": None, "vocab_size": 128256, "max_position_embeddings": 131072,
           "block_configs": [block, {"attention": {"no_op": True}, "ffn": {"ffn_mult": 5.25}}],
           "torch_dtype": "bfloat16"}
    with pytest.raises(OomkitError, match="nemotron-nas needs block_configs with one entry per layer"):
        spec_from_config(cfg, name="nvidia/Llama-3_3-Nemotron-Super-49B-v1")


def test_nemotron_nano_9b_v2_is_the_hybrid_its_config_describes():
    # config quoted by public code (code search ids 58647227636, 60558215653, 69055529906, 71072035201): pattern
    # M-M-M-MM-M-M-M*-M-M-M*-M-M-M-M*-M-M-M-M*-M-MM-M-M-M-M-M- (27 M, 25 -, 4 *), 40 / 8 heads of 128, Mamba-2 128
    # heads x 80, 8 groups, state 128
    from oomkit.model.spec import LayerKind

    name = "nvidia/NVIDIA-Nemotron-Nano-9B-v2"
    assert catalog.resolve_slug(name) == "nvidia-nemotron-nano-9b-v2"
    spec = spec_from_config(catalog.lookup(name).config, name=name, weight_format="bf16")
    pattern = "M-M-M-MM-M-M-M*-M-M-M*-M-M-M-M*-M-M-M-M*-M-MM-M-M-M-M-M-"
    assert len(spec.layers) == len(pattern) == 56
    assert [lay.index for lay in spec.layers if lay.kind is LayerKind.FULL] == [i for i, c in enumerate(pattern)
                                                                                  if c == "*"]
    assert {(lay.attention.n_kv_heads, lay.attention.head_dim_k) for lay in spec.layers if lay.attention} == {(8, 128)}
    mamba = [lay.recurrent for lay in spec.layers if lay.kind is LayerKind.RECURRENT]
    assert len(mamba) == 27 and {(m.d_inner, m.d_state, m.n_group) for m in mamba} == {(128 * 80, 128, 8)}
    assert {lay.ffn.n_ff for lay in spec.layers if lay.ffn.n_ff} == {15680}
