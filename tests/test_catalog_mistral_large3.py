"""Mistral Large 3 675B (catalog mistral-large-3-675b-instruct-2512): params.json's MLA MoE read as llama.cpp's GGUF of
it holds it. convert_hf_to_gguf.py --mistral-format sends a params.json with "moe" to conversion/mistral.py
MistralMoeModel (MODEL_ARCH.DEEPSEEK2, DeepseekV2Model's tensors: split attn_k_b / attn_v_b, head_count_kv 1, key
576 / value 512), no router bias (topk_method None, softmax scoring), no next-n block.

The catalog's config (first layers) is held to the spec read from a synthetic GGUF written that way
(src/models/deepseek2.cpp load_arch_tensors, llama.cpp@0c1e57098) and to llama.cpp itself on the CPU (n_ctx, the
K-only latent cache, the KV and model buffers exactly); the totals to the card's 673B + 2.5B = 675B.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oomkit.model import catalog
from oomkit.model.gguf_file import read_gguf_spec
from oomkit.model.hf_config import spec_from_config
from oomkit.model.spec import LayerKind
from oomkit.model.towers import vision_tower
from tests import gt_compare as g
from tests.groundtruth import synth
from tests.groundtruth.synth import SynthModel, _blk, _embeddings, _ffn_dense, _ffn_moe, _Meta

CATALOG = Path(__file__).resolve().parents[1] / "src" / "oomkit" / "model" / "catalog" / "data"
SLUG = "mistral-large-3-675b-instruct-2512"
needs_llama_cpp = pytest.mark.skipif(not g.llamacpp_run.available(), reason="llama-cpp-python not installed")


def _config() -> dict:
    return json.loads((CATALOG / f"{SLUG}.json").read_text(encoding="utf-8"))["config"]


def _first(n: int) -> dict:
    cfg = _config()
    return dict(cfg, text_config=dict(cfg["text_config"], num_hidden_layers=n))


def mistral_large3_gguf(n_layers: int = 4) -> SynthModel:
    """The decoder as MistralMoeModel(DeepseekV2Model) writes it: 7168 wide, 128 heads, q LoRA 1536, KV latent 512 +
    rope 64 (head_count_kv 1, key_length 576, value_length 512, key/value_length_mla 192 / 128), the first 3 layers
    dense (16384), then 128 experts of 4096 (4 used) and one shared expert of 4096, no exp_probs_b, 131,072 tokens,
    untied, 294,912 positions."""
    arch, n_embd, n_head, n_vocab = "deepseek2", 7168, 128, 131072
    q_lora, kv_lora, rope, nope, v_dim = 1536, 512, 64, 128, 128
    n_ff, n_ff_exp, n_exp, n_used, n_dense = 16384, 4096, 128, 4, 3
    md = _Meta(arch).base(ctx=294912, n_embd=n_embd, n_layers=n_layers, n_ff=n_ff, n_head=n_head, n_head_kv=1,
                          rms_eps=1e-6, rope_base=10000.0, n_vocab=n_vocab)
    md.u32("attention.key_length", kv_lora + rope).u32("attention.value_length", kv_lora)
    md.u32("attention.key_length_mla", nope + rope).u32("attention.value_length_mla", v_dim)
    md.u32("attention.q_lora_rank", q_lora).u32("attention.kv_lora_rank", kv_lora).u32("rope.dimension_count", rope)
    md.u32("leading_dense_block_count", n_dense).u32("expert_count", n_exp).u32("expert_used_count", n_used)
    md.u32("expert_feed_forward_length", n_ff_exp).u32("expert_shared_count", 1).f32("expert_weights_scale", 1.0)
    md.bool("expert_weights_norm", True).u32("expert_gating_func", 1)  # softmax
    md.str("rope.scaling.type", "yarn").f32("rope.scaling.factor", 36.0)
    md.u32("rope.scaling.original_context_length", 8192).f32("rope.scaling.yarn_log_multiplier", 0.1)
    ts = _embeddings(n_embd, n_vocab, tied=False)
    for i in range(n_layers):
        ts += [_blk(i, "attn_norm.weight", n_embd), _blk(i, "attn_q_a_norm.weight", q_lora),
               _blk(i, "attn_kv_a_norm.weight", kv_lora), _blk(i, "attn_q_a.weight", n_embd, q_lora),
               _blk(i, "attn_q_b.weight", q_lora, n_head * (nope + rope)),
               _blk(i, "attn_kv_a_mqa.weight", n_embd, kv_lora + rope),
               _blk(i, "attn_k_b.weight", nope, kv_lora, n_head), _blk(i, "attn_v_b.weight", kv_lora, v_dim, n_head),
               _blk(i, "attn_output.weight", n_head * v_dim, n_embd)]
        if i < n_dense:
            ts += _ffn_dense(i, n_embd, n_ff)
        else:
            ts += [_blk(i, "ffn_norm.weight", n_embd)] + _ffn_moe(i, n_embd, n_ff_exp, n_exp)
            ts += [_blk(i, "ffn_gate_shexp.weight", n_embd, n_ff_exp), _blk(i, "ffn_down_shexp.weight", n_ff_exp, n_embd),
                   _blk(i, "ffn_up_shexp.weight", n_embd, n_ff_exp)]
    return SynthModel("mistral-large-3", arch, "mistralai/Mistral-Large-3-675B-Instruct-2512 (catalog)", n_vocab,
                      n_layers, tuple(md.items), tuple(ts), tied_embeddings=False, dims={})


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    path = synth.synth_path(mistral_large3_gguf(4), "q4_0", cache_dir=tmp_path_factory.mktemp("gguf"))
    return spec_from_config(_first(4), SLUG, weight_format="Q4_0"), read_gguf_spec(path), path


def test_config_spec_equals_the_converted_gguf(pair):
    ours, gguf, _ = pair
    assert ours.architecture == gguf.architecture == "deepseek2"
    assert ours.n_ctx_train == gguf.n_ctx_train == 294912
    assert list(ours.layers) == list(gguf.layers)
    assert sorted((t.name, t.shape) for t in ours.weights.tensors) == sorted((t.name, t.shape) for t in gguf.weights.tensors)
    assert ours.params_total == gguf.params_total


GRID = g.small_grid(dict(n_ctx=4096), dict(n_ctx=8192, n_seq_max=4, type_k="q8_0", type_v="q8_0"))


@needs_llama_cpp
def test_config_spec_caches_and_model_buffer_equal_llama_cpp(pair):
    ours, _, path = pair
    g.assert_equals_llama_cpp(ours, path, GRID, "", fields=(*g.CACHE_FIELDS, "model_mib"))


def test_totals_are_the_cards():
    """Decoder 673,421,089,792 (the card's 673B language model) + the 48-layer, 1664-wide encoder and projector
    2,570,087,168 (its 2.5B vision encoder) = 675,991,176,960, 0.15% over the card's 675B; 39.9B of the decoder
    active (the card: 41B with the encoder's share)."""
    e = catalog.lookup("mistralai/Mistral-Large-3-675B-Instruct-2512")
    spec, tower = spec_from_config(e.config, e.name), vision_tower(e.config)
    attn = (7168 * 1536 + 1536 + 1536 * 128 * 192 + 7168 * 576 + 512 + 128 * 128 * 512 + 128 * 512 * 128
            + 128 * 128 * 7168 + 7168)
    dense, moe = 3 * 7168 * 16384 + 7168, 129 * 3 * 7168 * 4096 + 7168 * 128 + 7168
    assert spec.params_total == 2 * 131072 * 7168 + 61 * attn + 3 * dense + 58 * moe + 7168 == 673_421_089_792
    assert tower.params == 2_570_087_168
    assert abs((spec.params_total + tower.params) / e.params_published - 1) < 0.002
    assert abs(spec.params_active / 39.9e9 - 1) < 0.01
    # llama.cpp's MLA cache: one K-only latent row of 512 + 64 per token and layer
    assert all(x.kind is LayerKind.LATENT for x in spec.layers)
    a = spec.layers[0].attention
    assert a.kv_lora_rank + a.qk_rope_head_dim == 576


def test_fp8_block_weights_from_the_quantization_config():
    e = catalog.lookup("mistral-large-3")
    spec = spec_from_config(e.config, e.name)
    # FP8 block-quantized experts and projections: about a byte per parameter (629.9 GiB for 673.4B)
    assert 0.99 < spec.weights.nbytes / spec.params_total < 1.01


@pytest.mark.parametrize("name", ["mistralai/Mistral-Large-3-675B-Instruct-2512", "mistral-large-3",
                                  "unsloth/Mistral-Large-3-675B-Instruct-2512-GGUF"])
def test_names_resolve(name):
    assert catalog.resolve_slug(name) == SLUG
