"""Catalog entries GLM-4.6V (glm4v_moe: GLM-4.5V's shapes at 128K) and GLM-4.6V-Flash (glm4v: GLM-4.1V-Thinking's
GLM-4-0414-shaped decoder and Glm4vVisionModel tower), read as llama.cpp's GGUFs of their decoders hold them.

For each, the catalog's config (first layers) is held to
(a) the spec oomkit reads from a synthetic GGUF written as conversion/glm.py writes the decoder (Glm4vMoe... on
    Glm4MoeModel -> glm4moe without a next-n block; Glm4vForConditionalGeneration on Glm4Model -> glm4; tensors from
    src/models/glm4-moe.cpp / glm4.cpp load_arch_tensors, llama.cpp@0c1e57098): layers, head, parameter count;
(b) llama.cpp (llama-cpp-python 0.3.36, same build) loading that GGUF on the CPU: n_ctx, every KV cache, the KV
    buffer and the model buffer exactly;
(c) the totals: GLM-4.6V-Flash's decoder + tower as transformers counts Glm4vForConditionalGeneration.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from oomkit.model import catalog
from oomkit.model.gguf_file import read_gguf_spec
from oomkit.model.hf_config import spec_from_config
from oomkit.model.towers import vision_tower
from tests import gt_compare as g
from tests.groundtruth import synth
from tests.groundtruth.synth import SynthModel, _attn_gqa, _blk, _embeddings, _ffn_dense, _ffn_moe, _Meta

CATALOG = Path(__file__).resolve().parents[1] / "src" / "oomkit" / "model" / "catalog" / "data"
needs_llama_cpp = pytest.mark.skipif(not g.llamacpp_run.available(), reason="llama-cpp-python not installed")


def _config(slug: str) -> dict:
    return json.loads((CATALOG / f"{slug}.json").read_text(encoding="utf-8"))["config"]


def _first(slug: str, n: int) -> dict:
    cfg = _config(slug)
    return dict(cfg, text_config=dict(cfg["text_config"], num_hidden_layers=n))


def _comparable(layer):
    f = layer.ffn
    return dataclasses.replace(layer, ffn=dataclasses.replace(f, n_shared_experts=1 if f.n_ff_shared else 0))


def glm46v_gguf(n_layers: int = 2) -> SynthModel:
    """GLM-4.6V's decoder as conversion/glm.py Glm4MoeModel writes a Glm4vMoeForConditionalGeneration: GLM-4.5-Air's
    layers (tests/ggufs.glm45_air: 96 / 8 heads of 128 with q/k/v bias, post_attention_norm, layer 0 dense 10944,
    then 128 experts of 1408 with 8 used, the score bias and one shared expert) without a next-n block (the
    config has no num_nextn_predict_layers), 131,072 positions, M-RoPE sections [8, 12, 12, 0]."""
    arch, n_embd, n_head, n_kv, hd, n_vocab = "glm4moe", 4096, 96, 8, 128, 151552
    n_exp, n_used, n_ff_exp, n_ff = 128, 8, 1408, 10944
    md = _Meta(arch).base(ctx=131072, n_embd=n_embd, n_layers=n_layers, n_ff=n_ff, n_head=n_head, n_head_kv=n_kv,
                          rms_eps=1e-5, rope_base=10000.0, n_vocab=n_vocab)
    md.u32("rope.dimension_count", hd // 2).u32("attention.key_length", hd).u32("attention.value_length", hd)
    md.u32("expert_count", n_exp).u32("expert_used_count", n_used).u32("expert_feed_forward_length", n_ff_exp)
    md.u32("expert_shared_count", 1).u32("leading_dense_block_count", 1).f32("expert_weights_scale", 1.0)
    md.bool("expert_weights_norm", True).u32("expert_gating_func", 2)
    ts = _embeddings(n_embd, n_vocab, tied=False)
    for i in range(n_layers):
        ts += _attn_gqa(i, n_embd, n_head * hd, n_kv * hd, bias=True) + [_blk(i, "post_attention_norm.weight", n_embd)]
        if i == 0:
            ts += _ffn_dense(i, n_embd, n_ff, norm=False)
        else:
            ts += _ffn_moe(i, n_embd, n_ff_exp, n_exp) + [_blk(i, "exp_probs_b.bias", n_exp)]
            ts += [_blk(i, "ffn_gate_shexp.weight", n_embd, n_ff_exp), _blk(i, "ffn_down_shexp.weight", n_ff_exp, n_embd),
                   _blk(i, "ffn_up_shexp.weight", n_embd, n_ff_exp)]
    return SynthModel("glm-4.6v", arch, "zai-org/GLM-4.6V (catalog)", n_vocab, n_layers, tuple(md.items), tuple(ts),
                      tied_embeddings=False, dims={})


def glm46v_flash_gguf(n_layers: int = 2) -> SynthModel:
    """GLM-4.6V-Flash's decoder as conversion/glm.py Glm4Model writes a Glm4vForConditionalGeneration (glm4): 32 / 2
    heads of 128 with q/k/v bias, post_attention_norm and post_ffw_norm, the fused ffn_up {n_embd, 2 x 13696}
    (src/models/glm4.cpp load_arch_tensors), 151,552 tokens, untied, 131,072 positions, rope over 64 of 128."""
    arch, n_embd, n_head, n_kv, hd, n_ff, n_vocab = "glm4", 4096, 32, 2, 128, 13696, 151552
    md = _Meta(arch).base(ctx=131072, n_embd=n_embd, n_layers=n_layers, n_ff=n_ff, n_head=n_head, n_head_kv=n_kv,
                          rms_eps=1e-5, rope_base=500000.0, n_vocab=n_vocab)
    md.u32("rope.dimension_count", hd // 2).u32("attention.key_length", hd).u32("attention.value_length", hd)
    ts = _embeddings(n_embd, n_vocab, tied=False)
    for i in range(n_layers):
        ts += _attn_gqa(i, n_embd, n_head * hd, n_kv * hd, bias=True)
        ts += [_blk(i, "post_attention_norm.weight", n_embd), _blk(i, "ffn_norm.weight", n_embd),
               _blk(i, "ffn_down.weight", n_ff, n_embd), _blk(i, "ffn_up.weight", n_embd, 2 * n_ff),
               _blk(i, "post_ffw_norm.weight", n_embd)]
    return SynthModel("glm-4.6v-flash", arch, "zai-org/GLM-4.6V-Flash (catalog)", n_vocab, n_layers, tuple(md.items),
                      tuple(ts), tied_embeddings=False, dims={})


CASES = {"glm-4.6v": (glm46v_gguf, 2, "glm4moe"), "glm-4.6v-flash": (glm46v_flash_gguf, 2, "glm4")}


@pytest.fixture(scope="module")
def gguf_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("gguf")


def _pair(slug: str, gguf_dir):
    build, n, arch = CASES[slug]
    path = synth.synth_path(build(n), "q4_0", cache_dir=gguf_dir)
    return spec_from_config(_first(slug, n), slug, weight_format="Q4_0"), read_gguf_spec(path), path, arch


@pytest.mark.parametrize("slug", list(CASES))
def test_config_spec_equals_the_converted_gguf(slug, gguf_dir):
    ours, gguf, _, arch = _pair(slug, gguf_dir)
    assert ours.architecture == gguf.architecture == arch
    assert not [x for x in ours.labels if "generically" in x]
    assert ours.n_ctx_train == gguf.n_ctx_train == 131072
    # glm4's fused gate-up (ffn_up {n_embd, 2 n_ff}) is read back as the FFN of ffn_down's width
    assert [_comparable(x) for x in ours.layers] == [_comparable(x) for x in gguf.layers]
    assert sorted((t.name, t.shape) for t in ours.weights.tensors) == sorted((t.name, t.shape) for t in gguf.weights.tensors)
    assert ours.params_total == gguf.params_total


GRID = g.small_grid(dict(n_ctx=4096), dict(n_ctx=8192, n_seq_max=4, type_k="q8_0", type_v="q8_0"))


@needs_llama_cpp
@pytest.mark.parametrize("slug", list(CASES))
def test_config_spec_caches_and_model_buffer_equal_llama_cpp(slug, gguf_dir):
    ours, _, path, _ = _pair(slug, gguf_dir)
    g.assert_equals_llama_cpp(ours, path, GRID, slug, fields=(*g.CACHE_FIELDS, "model_mib"))


def test_glm46v_flash_decoder_and_tower_add_up_to_transformers_count():
    """Decoder 9,400,279,040 (GLM-4-9B-0414's: untied 2 x 151,552 x 4,096; 40 layers of q 4096^2 + k/v 4096 x 256
    with biases, o 4096^2, fused gate_up 4096 x 27,392, down 13,696 x 4,096, four norms; the final norm) and the
    Glm4vVisionModel tower with its merger 892,498,432: 10,292,777,472, transformers 5.24's parameter count of
    Glm4vForConditionalGeneration built from this config (measured on the meta device)."""
    e = catalog.lookup("zai-org/GLM-4.6V-Flash")
    spec = spec_from_config(e.config, e.name)
    layer = 4096 * 4096 + 4096 + 2 * (4096 * 256 + 256) + 4096 * 4096 + 4096 * 2 * 13696 + 13696 * 4096 + 4 * 4096
    decoder = 2 * 151552 * 4096 + 40 * layer + 4096
    assert spec.architecture == "glm4" and spec.params_total == decoder == e.params_decoder == 9_400_279_040
    assert vision_tower(e.config).params == 892_498_432
    assert e.params_decoder + vision_tower(e.config).params == e.params_published == 10_292_777_472
    a = spec.layers[0].attention  # K and V of 2 heads of 128 at 16 bits: 1 KiB per token and layer
    assert spec.kinds() == {"full": 40} and 2 * a.n_kv_heads * a.head_dim_k * 2 == 1024


def test_glm46v_is_glm45v_at_128k():
    v46, v45 = catalog.lookup("zai-org/GLM-4.6V"), catalog.lookup("zai-org/GLM-4.5V")
    s46, s45 = spec_from_config(v46.config, "46"), spec_from_config(v45.config, "45")
    assert s46.layers == s45.layers and s46.params_total == s45.params_total
    assert (s46.n_ctx_train, s45.n_ctx_train) == (131072, 65536)
    assert vision_tower(v46.config).params == vision_tower(v45.config).params


@pytest.mark.parametrize("name,slug", [("zai-org/GLM-4.6V", "glm-4.6v"), ("unsloth/GLM-4.6V-GGUF", "glm-4.6v"),
                                       ("zai-org/GLM-4.6V-Flash", "glm-4.6v-flash"),
                                       ("unsloth/GLM-4.6V-Flash-GGUF", "glm-4.6v-flash"),
                                       ("bartowski/zai-org_GLM-4.6V-Flash-GGUF", "glm-4.6v-flash")])
def test_names_resolve(name, slug):
    assert catalog.resolve_slug(name) == slug
