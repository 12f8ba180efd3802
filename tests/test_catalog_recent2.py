"""More 2025-2026 models people run by their Hugging Face name (ERNIE 4.5 300B-A47B, LFM2 350M / 2.6B, Nemotron
Nano 12B v2, GLM-4.5V, Nemotron 3 Ultra, Nemotron 3.5 Lightning, Falcon-H1R 7B) resolve offline from the catalog, and their per-layer KV and parameter
totals are the ones their cited sources give, recomputed here from those sources' shapes (layer counts, heads, the
published tensor lists), not from oomkit's own output."""

from __future__ import annotations

import pytest

from oomkit import estimate
from oomkit.model import catalog
from oomkit.model.hf_config import spec_from_config
from oomkit.model.towers import vision_tower

NAMES = {
    "baidu/ERNIE-4.5-300B-A47B-PT": "ernie-4.5-300b-a47b-pt",
    "baidu/ERNIE-4.5-300B-A47B-Base-PT": "ernie-4.5-300b-a47b-pt",
    "baidu/ERNIE-4.5-300B-A47B-Paddle": "ernie-4.5-300b-a47b-pt",
    "LiquidAI/LFM2-350M": "lfm2-350m",
    "LiquidAI/LFM2-350M-GGUF": "lfm2-350m",
    "LiquidAI/LFM2-2.6B": "lfm2-2.6b",
    "LiquidAI/LFM2-2.6B-GGUF": "lfm2-2.6b",
    "nvidia/NVIDIA-Nemotron-Nano-12B-v2": "nvidia-nemotron-nano-12b-v2",
    "nvidia/NVIDIA-Nemotron-Nano-12B-v2-Base": "nvidia-nemotron-nano-12b-v2",
    "zai-org/GLM-4.5V": "glm-4.5v",
    "unsloth/GLM-4.5V-GGUF": "glm-4.5v",
    "nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16": "nemotron-3-ultra-550b-a55b",
    "nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B": "nemotron-3-ultra-550b-a55b",
    "tiiuae/Falcon-H1R-7B": "falcon-h1r-7b",
    "tiiuae/Falcon-H1R-7B-GGUF": "falcon-h1r-7b",
    "nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-BF16": "nemotron-3.5-lightning-30b-a3b",
    "nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4": "nemotron-3.5-lightning-30b-a3b",
    "ggml-org/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-GGUF": "nemotron-3.5-lightning-30b-a3b",
}


@pytest.mark.parametrize("name,slug", sorted(NAMES.items()))
def test_names_resolve_offline(name, slug):
    assert catalog.resolve_slug(name) == slug


def _gqa(layers: int, kv_heads: int, head_dim: int) -> int:
    return layers * 2 * kv_heads * head_dim * 2  # K and V, f16


# name -> marginal f16 KV bytes per token in llama.cpp, from the attention layers the sources give
KV_PER_TOKEN = {
    # 54 layers; fused qkv_proj [8192, 10240] = (64 + 2 x 8) x 128: 8 KV heads of 128 (Hchnr/test tensor list)
    "baidu/ERNIE-4.5-300B-A47B-PT": _gqa(54, 8, 128),
    # 6 attention layers (2, 5, 8, 10, 12, 14) of 8 KV heads, head_dim 1024 / 16 = 64; the 10 conv layers hold a state
    "LiquidAI/LFM2-350M": _gqa(6, 8, 64),
    # 8 attention layers of 30, 8 KV heads, head_dim 2048 / 32 = 64
    "LiquidAI/LFM2-2.6B": _gqa(8, 8, 64),
    # 6 '*' of the 62-symbol pattern, 8 query groups of kv_channels 128 (Megatron-Bridge NemotronNano12Bv2Provider)
    "nvidia/NVIDIA-Nemotron-Nano-12B-v2": _gqa(6, 8, 128),
    # GLM-4.5-Air's decoder, no MTP block: 46 layers, k_proj [1024, 4096] = 8 KV heads of 128
    "zai-org/GLM-4.5V": _gqa(46, 8, 128),
    # 12 attention layers of 108, 2 KV heads of 128; llama.cpp caches no KV for the MTP block (as Super's)
    "nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16": _gqa(12, 2, 128),
    # 6 'attention' entries of the 52 in layers_block_type, 2 KV heads of 128 (Nano 30B-A3B's layout)
    "nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-BF16": _gqa(6, 2, 128),
}


@pytest.mark.parametrize("name,expected", sorted(KV_PER_TOKEN.items()))
def test_llamacpp_kv_per_token_matches_the_architecture(name, expected):
    r = estimate(name, engine="llama.cpp", n_ctx=32768).to_dict()
    assert r["kv_bytes_per_token"] == expected


# vLLM: the same rows for the plain GQA decoders; Nemotron 3 Ultra's MTP block is an attention layer vLLM caches
# (models/nemotron_h_mtp.py), 13 in all
VLLM_KV_PER_TOKEN = {
    "baidu/ERNIE-4.5-300B-A47B-PT": KV_PER_TOKEN["baidu/ERNIE-4.5-300B-A47B-PT"],
    "zai-org/GLM-4.5V": KV_PER_TOKEN["zai-org/GLM-4.5V"],
}


@pytest.mark.parametrize("name,expected", sorted(VLLM_KV_PER_TOKEN.items()))
def test_vllm_kv_per_token_matches_the_architecture(name, expected):
    r = estimate(name, engine="vllm", max_model_len=32768).to_dict()
    assert r["kv_bytes_per_token"] == expected


def _spec(slug: str):
    e = catalog.lookup(slug)
    return spec_from_config(e.config, name=e.name, weight_format="bf16")


def test_ernie_300b_total_is_the_published_tensor_list():
    """Hchnr/test load/safe_open.output.all.sort lists the checkpoint's tensors; summed by their shapes."""
    emb = 103424 * 8192  # ernie.embed_tokens.weight, and lm_head.weight [8192, 103424]
    attn = 8192 * 10240 + 8192 * 8192 + 2 * 8192  # qkv_proj, o_proj, input / post_attention layernorms
    dense = 8192 * 57344 + 28672 * 8192  # layers 0-2: up_gate_proj, down_proj
    moe = 64 * (8192 * 7168 + 3584 * 8192) + 8192 * 64 + 64  # 64 experts, gate, e_score_correction_bias
    total = 2 * emb + 54 * attn + 3 * dense + 51 * moe + 8192  # + ernie.norm
    assert total == 299_484_163_264 == catalog.lookup("ernie-4.5-300b-a47b-pt").params_published
    assert _spec("ernie-4.5-300b-a47b-pt").params_total == total


def test_glm45v_decoder_and_tower_add_up_to_the_checkpoint():
    """The public GLM-4.5V report sums the checkpoint's 18,106 tensors to 107,710,933,120; its tensor list splits
    them into the decoder and the vision tower, each recomputed here from the listed shapes."""
    h, heads, kv, hd, ff, moe_ff, n_exp, v = 4096, 96, 8, 128, 10944, 1408, 128, 151552
    attn = h * heads * hd + 2 * h * kv * hd + heads * hd * h + heads * hd + 2 * kv * hd + 2 * h  # q/k/v/o, biases, norms
    decoder = (2 * v * h + 46 * attn + 3 * h * ff + 45 * (3 * n_exp * h * moe_ff + n_exp * h + n_exp
                                                          + 3 * h * moe_ff) + h)
    vh, out, vff = 1536, 4096, 10944
    tower = (3 * 2 * 14 * 14 * vh + vh + 576 * vh  # patch_embed (with bias), position_embedding
             + 24 * (2 * vh + 3 * vh * vh + vh * vh + 3 * vh * out)  # norms, qkv, proj, gate / up / down
             + 2 * vh + vh * out * 4 + out  # post_conv_layernorm, post_layernorm, downsample (with bias)
             + out * out + 2 * out + 3 * out * vff)  # merger: proj, post_projection_norm, gate / up / down
    assert decoder + tower == 107_710_933_120 == catalog.lookup("glm-4.5v").params_published
    assert _spec("glm-4.5v").params_total == decoder
    assert vision_tower(catalog.lookup("glm-4.5v").config).params == tower


def test_nemotron_3_ultra_total_is_its_bf16_checkpoint_size():
    """The Ultra BF16 checkpoint is 1121 GB (code search id 61848234692): the config's parameters at 2 bytes each
    round to it, the MTP block included."""
    spec = _spec("nemotron-3-ultra-550b-a55b")
    assert round(spec.params_total * 2 / 1e9) == 1121
    assert spec.params_total == catalog.lookup("nemotron-3-ultra-550b-a55b").params_published


def test_nemotron_3_ultra_layer_counts():
    """48 Mamba-2, 48 MoE and 12 attention layers in the released layers_block_type (and the deployment README),
    read as the trunk's layer kinds."""
    blocks = catalog.lookup("nemotron-3-ultra-550b-a55b").config["layers_block_type"]
    assert (len(blocks), blocks.count("mamba"), blocks.count("moe"), blocks.count("attention")) == (108, 48, 48, 12)
    spec = _spec("nemotron-3-ultra-550b-a55b")
    trunk = [la for la in spec.layers if la.index < 108]
    assert [la.index for la in trunk if la.attention is not None] == [i for i, b in enumerate(blocks) if b == "attention"]
    assert [la.index for la in trunk if la.recurrent is not None] == [i for i, b in enumerate(blocks) if b == "mamba"]
    assert [la.index for la in trunk if la.ffn.n_experts] == [i for i, b in enumerate(blocks) if b == "moe"]
    assert spec.n_nextn_layers == 1 and spec.layers[-1].attention is not None and spec.layers[-1].ffn.n_experts == 512


def test_lightning_trunk_is_nano_30b_a3b():
    """Nemotron 3.5 Lightning's list schedule names the layers Nano 30B-A3B's hybrid_override_pattern does: the same
    per-layer spec, the same trunk total (Nano's published 31.6B), one MTP block more."""
    import copy

    light = copy.deepcopy(catalog.lookup("nemotron-3.5-lightning-30b-a3b").config)
    nano = catalog.lookup("nemotron-3-nano-30b-a3b").config
    sym = {"mamba": "M", "moe": "E", "attention": "*", "mlp": "-"}
    assert "".join(sym[b] for b in light["layers_block_type"]) == nano["hybrid_override_pattern"]
    light["num_nextn_predict_layers"] = 0
    a = spec_from_config(light, name="lightning", weight_format="bf16")
    b = spec_from_config(nano, name="nano", weight_format="bf16")
    assert a.layers == b.layers and a.params_total == b.params_total


def test_list_schedule_disagreeing_with_num_hidden_layers_is_refused():
    import copy

    from oomkit.errors import OomkitError

    cfg = copy.deepcopy(catalog.lookup("nemotron-3.5-lightning-30b-a3b").config)
    cfg["num_hidden_layers"] = 50
    with pytest.raises(OomkitError, match="disagrees"):
        spec_from_config(cfg, name="x")
    cfg = copy.deepcopy(catalog.lookup("nemotron-3.5-lightning-30b-a3b").config)
    cfg["layers_block_type"][0] = "conv"
    with pytest.raises(OomkitError, match="block kind"):
        spec_from_config(cfg, name="x")


def test_lfm2_350m_mlp_is_the_auto_adjusted_width():
    """block_ff_dim 6656 auto-adjusted: int(2 x 6656 / 3) = 4437, rounded up to 256 = 4608 (the effective width a
    public test asserts for this config, code search id 59241052540)."""
    spec = _spec("lfm2-350m")
    assert {la.ffn.n_ff for la in spec.layers} == {4608}
    assert [la.index for la in spec.layers if la.attention is not None] == [2, 5, 8, 10, 12, 14]


def test_falcon_h1r_7b_is_its_official_gguf():
    """The official Q8_0 GGUF's metadata (code search id 58215168677): 7,585,648,736 parameters, 8,063,277,440 bytes
    of Q8_0 tensors, 262,144 positions; Falcon-H1 7B's shapes with the Base vocabulary give both exactly."""
    e = catalog.lookup(catalog.resolve_slug("tiiuae/Falcon-H1R-7B"))
    spec = spec_from_config(e.config, name=e.name, weight_format="Q8_0")
    assert spec.params_total == 7_585_648_736 == e.params_published
    assert spec.weights.nbytes == 8_063_277_440
    assert spec.n_ctx_train == 262_144
    # every one of the 44 layers has attention (beside its Mamba-2 mixer): 2 KV heads of 128
    r = estimate("tiiuae/Falcon-H1R-7B", engine="llama.cpp", n_ctx=32768).to_dict()
    assert r["kv_bytes_per_token"] == _gqa(44, 2, 128)
