"""Catalog entries LFM2 700M, LFM2 24B-A2B (Ollama's lfm2), Granite 4.0 H-350M, H-1B and Micro, Apertus 8B and
Ministral 3 14B, held to the GGUF llama.cpp's converter writes from the same config and to llama.cpp itself.

For each, the catalog's config (cited in its data file) is read by spec_from_config and compared with
(a) the spec oomkit reads from a synthetic GGUF written as llama.cpp's converter writes it (builders below; tensor
    names and shapes from src/models/lfm2.cpp, lfm2moe.cpp, granite-hybrid.cpp, granite.cpp, apertus.cpp, mistral3.cpp
    load_arch_tensors, metadata keys from conversion/lfm2.py, granite.py, apertus.py, mistral3.py, llama.cpp@0c1e57098):
    kinds, heads and head sizes per layer, recurrent state shapes, FFN widths, tied head and the parameter count;
(b) llama.cpp (llama-cpp-python 0.3.36, same build) loading that GGUF on the CPU: n_ctx, every cache, the KV and
    recurrent-state buffers exactly, the CPU compute buffer within 10%;
(c) the figures the sources publish (parameter counts, per-token KV).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oomkit.model.gguf_file import read_gguf_spec
from oomkit.model.hf_config import spec_from_config
from oomkit.model.resolve import resolve
from oomkit.model.spec import LayerKind
from oomkit.model.towers import vision_tower
from tests import gt_compare as g
from tests.groundtruth import synth
from tests.groundtruth.synth import VT, SynthModel, Tensor, _attn_gqa, _blk, _ffn_dense, _Meta

CATALOG = Path(__file__).resolve().parents[1] / "src" / "oomkit" / "model" / "catalog" / "data"
needs_llama_cpp = pytest.mark.skipif(not g.llamacpp_run.available(), reason="llama-cpp-python not installed")


def _entry(slug: str) -> dict:
    return json.loads((CATALOG / f"{slug}.json").read_text(encoding="utf-8"))


def _first_layers(cfg: dict, n: int) -> dict:
    if isinstance(cfg.get("text_config"), dict):  # a VLM's decoder: the GGUF of llama.cpp's converter is its text_config
        return dict(cfg, text_config=_first_layers(cfg["text_config"], n))
    out = dict(cfg, num_hidden_layers=n)
    if isinstance(cfg.get("layer_types"), list):
        out["layer_types"] = cfg["layer_types"][:n]
    return out


def _kv_array(md: _Meta, n_kv: int, attn: set[int], n_layers: int) -> None:
    md.items.append((f"{md.arch}.attention.head_count_kv", [n_kv if i in attn else 0 for i in range(n_layers)],
                     (VT.ARRAY, VT.INT32)))


def _shortconv(i: int, n_embd: int, l_cache: int) -> list[Tensor]:
    # src/models/lfm2.cpp load_arch_tensors: shortconv.conv {d_conv, n_embd}, in_proj {n_embd, 3 n_embd}, out_proj
    return [_blk(i, "shortconv.conv.weight", l_cache, n_embd), _blk(i, "shortconv.in_proj.weight", n_embd, 3 * n_embd),
            _blk(i, "shortconv.out_proj.weight", n_embd, n_embd)]


def lfm2_700m_gguf(n_layers: int = 16) -> SynthModel:
    """LFM2-700M as conversion/lfm2.py LFM2Model writes it: hidden 1536, attention at 2, 5, 8, 10, 12, 14 (24 heads /
    8 KV heads of 64, per-head q/k norms), short convolutions elsewhere (l_cache 3), FFN 6912 (block_ff_dim 10240
    auto-adjusted), vocabulary 65,536, tied (token_embd_norm is the final norm: src/models/lfm2.cpp)."""
    arch, n_embd, n_head, n_kv, hd, n_ff, n_vocab, l_cache = "lfm2", 1536, 24, 8, 64, 6912, 65536, 3
    attn = {2, 5, 8, 10, 12, 14}
    md = _Meta(arch)
    md.u32("context_length", 128000).u32("embedding_length", n_embd).u32("block_count", n_layers)
    md.u32("feed_forward_length", n_ff).u32("attention.head_count", n_head).u32("vocab_size", n_vocab)
    _kv_array(md, n_kv, attn, n_layers)
    md.f32("attention.layer_norm_rms_epsilon", 1e-5).f32("rope.freq_base", 1e6).u32("shortconv.l_cache", l_cache)
    ts = [Tensor("token_embd.weight", (n_embd, n_vocab)), Tensor("token_embd_norm.weight", (n_embd,))]
    for i in range(n_layers):
        ts.append(_blk(i, "attn_norm.weight", n_embd))
        ts += _attn_gqa(i, n_embd, n_head * hd, n_kv * hd, qk_norm_dim=hd)[1:] if i in attn else _shortconv(i, n_embd, l_cache)
        ts += _ffn_dense(i, n_embd, n_ff)
    return SynthModel("lfm2-700m", arch, "LiquidAI/LFM2-700M config.json", n_vocab, n_layers, tuple(md.items),
                      tuple(ts), tied_embeddings=True)


def lfm2_24b_a2b_gguf(n_layers: int = 4) -> SynthModel:
    """LFM2-24B-A2B as conversion/lfm2.py LFM2MoeModel writes it: hidden 2048, attention every 4th layer from 2
    (32 heads / 8 KV heads of 64), short convolutions elsewhere, the first 2 layers dense (11776), then 64 experts of
    1536 with 4 used, sigmoid gating with a router bias (exp_probs_b), vocabulary 65,536, tied."""
    arch, n_embd, n_head, n_kv, hd, n_vocab, l_cache = "lfm2moe", 2048, 32, 8, 64, 65536, 3
    n_ff, n_exp, n_ff_exp, n_used, n_dense = 11776, 64, 1536, 4, 2
    attn = {2 + 4 * k for k in range(10)}
    md = _Meta(arch)
    md.u32("context_length", 128000).u32("embedding_length", n_embd).u32("block_count", n_layers)
    md.u32("feed_forward_length", n_ff).u32("attention.head_count", n_head).u32("vocab_size", n_vocab)
    _kv_array(md, n_kv, attn, n_layers)
    md.f32("attention.layer_norm_rms_epsilon", 1e-5).f32("rope.freq_base", 1e6).u32("shortconv.l_cache", l_cache)
    md.u32("expert_count", n_exp).u32("expert_used_count", n_used).u32("expert_feed_forward_length", n_ff_exp)
    md.u32("leading_dense_block_count", n_dense).u32("expert_gating_func", 2)
    ts = [Tensor("token_embd.weight", (n_embd, n_vocab)), Tensor("token_embd_norm.weight", (n_embd,))]
    for i in range(n_layers):
        ts.append(_blk(i, "attn_norm.weight", n_embd))
        ts += _attn_gqa(i, n_embd, n_head * hd, n_kv * hd, qk_norm_dim=hd)[1:] if i in attn else _shortconv(i, n_embd, l_cache)
        if i < n_dense:
            ts += _ffn_dense(i, n_embd, n_ff)
        else:
            ts += [_blk(i, "ffn_norm.weight", n_embd), _blk(i, "ffn_gate_inp.weight", n_embd, n_exp),
                   _blk(i, "ffn_gate_exps.weight", n_embd, n_ff_exp, n_exp),
                   _blk(i, "ffn_up_exps.weight", n_embd, n_ff_exp, n_exp),
                   _blk(i, "ffn_down_exps.weight", n_ff_exp, n_embd, n_exp), _blk(i, "exp_probs_b.bias", n_exp)]
    return SynthModel("lfm2-24b-a2b", arch, "LiquidAI/LFM2-24B-A2B config", n_vocab, n_layers, tuple(md.items),
                      tuple(ts), tied_embeddings=True)


def _granite_hybrid_gguf(key: str, n_layers: int, *, n_embd: int, n_head: int, n_kv: int, n_ff: int, attn: set[int],
                         ssm_heads: int, ssm_head_dim: int, d_state: int, n_vocab: int = 100352) -> SynthModel:
    """A dense Granite 4.0 H model as conversion/granite.py GraniteHybridModel writes it: head_count_kv per layer
    (0 for Mamba-2 layers), ssm.* keys (inner_size = mamba_expand x hidden, time_step_rank = mamba_n_heads), NoPE
    (rope.scaling.finetuned false, context_length 2^20), the shared MLP as ffn_gate / ffn_up / ffn_down, tied.
    Tensors: src/models/granite-hybrid.cpp load_arch_tensors (Mamba-2: ssm_in {n_embd, 2 d_inner + 2 ng d_state +
    n_heads}, ssm_conv1d {d_conv, d_inner + 2 ng d_state} with its bias, ssm_dt bias, ssm_a / ssm_d {1, n_heads},
    ssm_norm {d_inner / ng, ng}, ssm_out)."""
    arch, d_conv, ng = "granitehybrid", 4, 1
    d_inner = ssm_heads * ssm_head_dim
    md = _Meta(arch)
    md.u32("context_length", 2 ** 20).u32("embedding_length", n_embd).u32("block_count", n_layers)
    md.u32("feed_forward_length", n_ff).u32("attention.head_count", n_head).u32("vocab_size", n_vocab)
    md.f32("attention.layer_norm_rms_epsilon", 1e-5).f32("rope.freq_base", 10000.0)
    _kv_array(md, n_kv, attn, n_layers)
    md.u32("ssm.conv_kernel", d_conv).u32("ssm.inner_size", d_inner).u32("ssm.state_size", d_state)
    md.u32("ssm.time_step_rank", ssm_heads).u32("ssm.group_count", ng).bool("rope.scaling.finetuned", False)
    md.u32("expert_count", 0).u32("expert_used_count", 0).u32("expert_shared_feed_forward_length", n_ff)
    hd = n_embd // n_head
    ts = [Tensor("token_embd.weight", (n_embd, n_vocab)), Tensor("output_norm.weight", (n_embd,))]
    for i in range(n_layers):
        if i in attn:
            ts += _attn_gqa(i, n_embd, n_head * hd, n_kv * hd)
        else:
            conv = d_inner + 2 * ng * d_state
            ts += [_blk(i, "attn_norm.weight", n_embd),
                   _blk(i, "ssm_in.weight", n_embd, 2 * d_inner + 2 * ng * d_state + ssm_heads),
                   _blk(i, "ssm_conv1d.weight", d_conv, conv), _blk(i, "ssm_conv1d.bias", conv),
                   _blk(i, "ssm_dt.bias", ssm_heads), _blk(i, "ssm_a", 1, ssm_heads), _blk(i, "ssm_d", 1, ssm_heads),
                   _blk(i, "ssm_norm.weight", d_inner // ng, ng), _blk(i, "ssm_out.weight", d_inner, n_embd)]
        ts += _ffn_dense(i, n_embd, n_ff)
    return SynthModel(key, arch, f"ibm-granite/{key} config", n_vocab, n_layers, tuple(md.items), tuple(ts),
                      tied_embeddings=True)


def granite_h_350m_gguf(n_layers: int = 32) -> SynthModel:
    return _granite_hybrid_gguf("granite-4.0-h-350m", n_layers, n_embd=768, n_head=12, n_kv=4, n_ff=2048,
                                attn={10, 13, 17, 27}, ssm_heads=48, ssm_head_dim=32, d_state=128)


def granite_h_1b_gguf(n_layers: int = 6) -> SynthModel:
    return _granite_hybrid_gguf("granite-4.0-h-1b", n_layers, n_embd=1536, n_head=12, n_kv=4, n_ff=4096,
                                attn={5, 15, 25, 35}, ssm_heads=48, ssm_head_dim=64, d_state=128)


def granite_micro_gguf(n_layers: int = 4) -> SynthModel:
    """Granite 4.0 Micro as conversion/granite.py writes an all-attention GraniteMoeHybrid config: MODEL_ARCH.GRANITE
    (src/models/granite.cpp: a Llama-shaped decoder) with 40 heads / 8 KV heads of 64, FFN 8192, vocabulary 100,352,
    tied, RoPE (rope.scaling.finetuned true)."""
    arch, n_embd, n_head, n_kv, hd, n_ff, n_vocab = "granite", 2560, 40, 8, 64, 8192, 100352
    md = _Meta(arch).base(ctx=131072, n_embd=n_embd, n_layers=n_layers, n_ff=n_ff, n_head=n_head, n_head_kv=n_kv,
                          rms_eps=1e-5, rope_base=1e7, n_vocab=n_vocab)
    md.u32("rope.dimension_count", hd).f32("logit_scale", 10.0).f32("embedding_scale", 12.0)
    md.f32("residual_scale", 0.22).f32("attention.scale", 0.015625)
    ts = [Tensor("token_embd.weight", (n_embd, n_vocab)), Tensor("output_norm.weight", (n_embd,))]
    for i in range(n_layers):
        ts += _attn_gqa(i, n_embd, n_head * hd, n_kv * hd) + _ffn_dense(i, n_embd, n_ff)
    return SynthModel("granite-4.0-micro", arch, "ibm-granite/granite-4.0-micro config", n_vocab, n_layers,
                      tuple(md.items), tuple(ts), tied_embeddings=True)


def apertus_8b_gguf(n_layers: int = 4) -> SynthModel:
    """Apertus 8B as conversion/apertus.py ApertusModel (a LlamaModel) writes it: hidden 4096, 32 heads / 8 KV heads
    of 128 with per-head q/k norms, an ungated MLP of 21504 (ffn_up / ffn_down), vocabulary 131,072, untied; the
    per-layer xIELU scalars as xielu.* metadata arrays, not tensors, and the llama3 rope factors as rope_freqs
    (LlamaModel.generate_extra_tensors: {head_dim / 2} F32). Tensors: src/models/apertus.cpp load_arch_tensors."""
    arch, n_embd, n_head, n_kv, hd, n_ff, n_vocab = "apertus", 4096, 32, 8, 128, 21504, 131072
    md = _Meta(arch).base(ctx=65536, n_embd=n_embd, n_layers=n_layers, n_ff=n_ff, n_head=n_head, n_head_kv=n_kv,
                          rms_eps=1e-5, rope_base=12e6, n_vocab=n_vocab)
    md.u32("rope.dimension_count", hd)
    for key, v in (("alpha_n", 0.8), ("alpha_p", 0.8), ("beta", 0.5), ("eps", -1e-6)):
        md.items.append((f"xielu.{key}", [v] * n_layers, (VT.ARRAY, VT.FLOAT32)))
    ts = [Tensor("token_embd.weight", (n_embd, n_vocab)), Tensor("output_norm.weight", (n_embd,)),
          Tensor("output.weight", (n_embd, n_vocab)), Tensor("rope_freqs.weight", (hd // 2,))]
    for i in range(n_layers):
        ts += _attn_gqa(i, n_embd, n_head * hd, n_kv * hd, qk_norm_dim=hd)
        ts += [_blk(i, "ffn_norm.weight", n_embd), _blk(i, "ffn_up.weight", n_embd, n_ff),
               _blk(i, "ffn_down.weight", n_ff, n_embd)]
    return SynthModel("apertus-8b", arch, "swiss-ai/Apertus-8B-Instruct-2509 config", n_vocab, n_layers,
                      tuple(md.items), tuple(ts), tied_embeddings=False)


def ministral3_14b_gguf(n_layers: int = 4) -> SynthModel:
    """Ministral 3 14B's decoder as conversion/mistral3.py Ministral3Model writes it (MODEL_ARCH.MISTRAL3): hidden
    5120, 32 heads / 8 KV heads of 128, FFN 16384, vocabulary 131,072, untied, YaRN x16 over 16,384 (262,144
    positions) and the llama-4 attention temperature scale 0.1. Tensors: src/models/mistral3.cpp load_arch_tensors."""
    arch, n_embd, n_head, n_kv, hd, n_ff, n_vocab = "mistral3", 5120, 32, 8, 128, 16384, 131072
    md = _Meta(arch).base(ctx=262144, n_embd=n_embd, n_layers=n_layers, n_ff=n_ff, n_head=n_head, n_head_kv=n_kv,
                          rms_eps=1e-5, rope_base=1e6, n_vocab=n_vocab)
    md.u32("rope.dimension_count", hd).u32("attention.key_length", hd).u32("attention.value_length", hd)
    md.str("rope.scaling.type", "yarn").f32("rope.scaling.factor", 16.0)
    md.u32("rope.scaling.original_context_length", 16384).f32("attention.temperature_scale", 0.1)
    ts = [Tensor("token_embd.weight", (n_embd, n_vocab)), Tensor("output_norm.weight", (n_embd,)),
          Tensor("output.weight", (n_embd, n_vocab))]
    for i in range(n_layers):
        ts += _attn_gqa(i, n_embd, n_head * hd, n_kv * hd) + _ffn_dense(i, n_embd, n_ff)
    return SynthModel("ministral-3-14b", arch, "mistralai/Ministral-3-14B-Instruct-2512 text_config", n_vocab,
                      n_layers, tuple(md.items), tuple(ts), tied_embeddings=False)


# catalog slug -> (GGUF builder, layers written, llama.cpp architecture)
CASES = {
    "lfm2-700m": (lfm2_700m_gguf, 16, "lfm2"),
    "lfm2-24b-a2b": (lfm2_24b_a2b_gguf, 4, "lfm2moe"),
    "granite-4.0-h-350m": (granite_h_350m_gguf, 32, "granitehybrid"),
    "granite-4.0-h-1b": (granite_h_1b_gguf, 6, "granitehybrid"),
    "granite-4.0-micro": (granite_micro_gguf, 4, "granite"),
    "apertus-8b-instruct-2509": (apertus_8b_gguf, 4, "apertus"),
    "ministral-3-14b-instruct-2512": (ministral3_14b_gguf, 4, "mistral3"),
}
# tensors the converter writes that a config-read spec does not count: the llama3 rope factors (rope_freqs, head_dim / 2
# values; as for every Llama-3-rope entry of the catalog)
GGUF_EXTRA = {"apertus-8b-instruct-2509": 64}


@pytest.fixture(scope="module")
def gguf_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("gguf")


def _pair(slug: str, gguf_dir):
    build, n, arch = CASES[slug]
    path = synth.synth_path(build(n), "q4_0", cache_dir=gguf_dir)
    cfg = _first_layers(_entry(slug)["config"], n)
    return spec_from_config(cfg, slug, weight_format="Q4_0"), read_gguf_spec(path), path, arch


@pytest.mark.parametrize("slug", list(CASES))
def test_config_spec_equals_the_converted_gguf(slug, gguf_dir):
    ours, gguf, _, arch = _pair(slug, gguf_dir)
    assert ours.architecture == gguf.architecture == arch
    assert not [x for x in ours.labels if "generically" in x]
    assert list(ours.layers) == list(gguf.layers)
    assert ours.tied_embeddings == gguf.tied_embeddings
    assert ours.params_total + GGUF_EXTRA.get(slug, 0) == gguf.params_total


GRID = g.small_grid(dict(n_ctx=2048), dict(n_ctx=4096, n_seq_max=4, type_k="q8_0", type_v="q8_0"),
                    dict(n_ctx=4096, flash_attn="off"))


@needs_llama_cpp
@pytest.mark.parametrize("slug", list(CASES))
def test_config_spec_caches_and_compute_equal_llama_cpp(slug, gguf_dir):
    ours, _, path, _ = _pair(slug, gguf_dir)
    g.assert_equals_llama_cpp(ours, path, GRID, slug, compute_band=(0.9, 1.1))


@pytest.mark.parametrize("slug,total,source", [
    ("lfm2-700m", 742_489_344, "model card: 742,489,344"),
    ("lfm2-24b-a2b", 23_843_661_440, "Ollama: 23.8B"),
    ("granite-4.0-h-350m", 340_332_224, "0.34B"),
    ("granite-4.0-h-1b", 1_461_538_368, "1.46B"),
    ("granite-4.0-micro", 3_402_836_480, "3.4B"),
    ("apertus-8b-instruct-2509", 8_053_338_112, "8B"),
    ("ministral-3-14b-instruct-2512", 13_506_073_600, "card: 13.5B language model (+ 0.4B vision encoder)"),
])
def test_totals(slug, total, source):
    e = _entry(slug)
    spec = spec_from_config(e["config"], slug)
    assert spec.params_total == e.get("params_decoder", e["params_published"]) == total, source


def test_ministral3_14b_tower_is_the_cards_0_4b_vision_encoder():
    """Mistral's card: 13.5B language model + 0.4B vision encoder; the Pixtral tower with the projector sized by the
    5120-wide decoder is Mistral Small 3.1's (438,958,080, equal there to the HF safetensors total less the decoder)."""
    e = _entry("ministral-3-14b-instruct-2512")
    tower = vision_tower(e["config"])
    assert tower is not None and round(tower.params / 1e9, 1) == 0.4
    assert tower.params == _entry("mistral-small-3.1-24b-instruct-2503")["params_published"] - 23_572_403_200
    assert e["params_published"] == 13_506_073_600 + tower.params


def test_lfm2_700m_is_its_verbatim_config_with_the_card_total():
    e = _entry("lfm2-700m")
    assert e["verified"] is True
    spec = spec_from_config(e["config"], "lfm2-700m")
    assert spec.architecture == "lfm2" and spec.tied_embeddings and len(spec.layers) == 16
    assert [la.index for la in spec.layers if la.kind is LayerKind.FULL] == [2, 5, 8, 10, 12, 14]
    # block_ff_dim 10240 -> int(2 x 10240 / 3) = 6826 -> rounded up to 256: 6912, the GGUF's feed_forward_length
    assert {la.ffn.n_ff for la in spec.layers} == {6912}
    a = spec.layers[2].attention
    assert (a.n_heads, a.n_kv_heads, a.head_dim_k) == (24, 8, 64)


def test_lfm2_24b_a2b_layers_and_active_parameters():
    spec = spec_from_config(_entry("lfm2-24b-a2b")["config"], "lfm2-24b-a2b")
    assert spec.architecture == "lfm2moe" and len(spec.layers) == 40
    assert [la.index for la in spec.layers if la.kind is LayerKind.FULL] == list(range(2, 40, 4))
    assert [la.ffn.is_moe for la in spec.layers[:3]] == [False, False, True]
    f = spec.layers[2].ffn
    assert (f.n_experts, f.n_experts_used, f.n_ff_expert) == (64, 4, 1536)
    # Liquid's announcement: 2.3B active per token
    assert spec.params_active == 2_326_881_920


@pytest.mark.parametrize("name", ["lfm2", "lfm2:24b", "lfm2:latest", "LiquidAI/LFM2-24B-A2B",
                                  "unsloth/LFM2-24B-A2B-GGUF", "bartowski/LiquidAI_LFM2-24B-A2B-GGUF"])
def test_lfm2_names_resolve_to_24b(name):
    spec = resolve(name, tag_formats=True)
    assert spec.architecture == "lfm2moe" and round(spec.params_total / 1e9, 1) == 23.8


@pytest.mark.parametrize("name,slug", [
    ("LiquidAI/LFM2-700M", "lfm2-700m"), ("LiquidAI/LFM2-700M-GGUF", "lfm2-700m"), ("unsloth/LFM2-700M-GGUF", "lfm2-700m"),
    ("bartowski/LiquidAI_LFM2-700M-GGUF", "lfm2-700m"), ("lmstudio-community/LFM2-700M-GGUF", "lfm2-700m"),
    ("granite4:micro", "granite-4.0-micro"), ("ibm-granite/granite-4.0-micro", "granite-4.0-micro"),
    ("unsloth/granite-4.0-micro-GGUF", "granite-4.0-micro"), ("ibm-granite/granite-4.0-h-350m-GGUF", "granite-4.0-h-350m"),
    ("granite4:350m-h", "granite-4.0-h-350m"), ("granite4:1b-h", "granite-4.0-h-1b"),
    ("unsloth/granite-4.0-h-1b-GGUF", "granite-4.0-h-1b"), ("lmstudio-community/granite-4.0-h-1b-GGUF", "granite-4.0-h-1b"),
    ("swiss-ai/Apertus-8B-Instruct-2509", "apertus-8b-instruct-2509"), ("swiss-ai/Apertus-8B-2509", "apertus-8b-instruct-2509"),
    ("unsloth/Apertus-8B-Instruct-2509-GGUF", "apertus-8b-instruct-2509"),
    ("bartowski/swiss-ai_Apertus-8B-Instruct-2509-GGUF", "apertus-8b-instruct-2509"),
    ("ministral-3:14b", "ministral-3-14b-instruct-2512"), ("mistralai/Ministral-3-14B-Instruct-2512", "ministral-3-14b-instruct-2512"),
    ("unsloth/Ministral-3-14B-Instruct-2512-GGUF", "ministral-3-14b-instruct-2512"),
    ("bartowski/mistralai_Ministral-3-14B-Instruct-2512-GGUF", "ministral-3-14b-instruct-2512"),
])
def test_names_resolve(name, slug):
    spec = resolve(name, tag_formats=True)
    assert spec.params_total == _entry(slug)["params_published"] or spec.architecture == CASES[slug][2]
    assert spec.architecture == CASES[slug][2]


def test_an_all_attention_granitemoehybrid_config_reads_as_granite():
    # conversion/granite.py GraniteHybridModel.__init__: no SSM layer -> GRANITE, or GRANITE_MOE with experts
    cfg = _entry("granite-4.0-micro")["config"]
    assert spec_from_config(cfg, "m").architecture == "granite"
    assert spec_from_config(dict(cfg, num_experts_per_tok=2, num_local_experts=8), "m").architecture == "granitemoe"
    hybrid = _entry("granite-4.0-h-1b")["config"]
    assert spec_from_config(hybrid, "h").architecture == "granitehybrid"


def test_granite_h_kv_and_state_per_layer():
    spec = spec_from_config(_entry("granite-4.0-h-1b")["config"], "h1b")
    attn = [la for la in spec.layers if la.attention is not None]
    assert [la.index for la in attn] == [5, 15, 25, 35]
    a = attn[0].attention
    # 4 layers x K and V of 4 heads x 128 at 16 bits: 8,192 bytes per token
    assert len(attn) * 2 * a.n_kv_heads * a.head_dim_k * 2 == 8192
    r = spec.layers[0].recurrent
    assert (r.d_inner, r.d_state, r.n_heads, r.n_group, r.d_conv) == (3072, 128, 48, 1, 4)


def test_apertus_reads_as_llama_cpp_apertus_with_an_ungated_mlp():
    spec = spec_from_config(_entry("apertus-8b-instruct-2509")["config"], "apertus")
    assert spec.architecture == "apertus" and not spec.tied_embeddings and not spec.labels
    names = {t.name for t in spec.weights.tensors if t.name.startswith("blk.0.")}
    assert {"blk.0.ffn_up.weight", "blk.0.ffn_down.weight", "blk.0.attn_q_norm.weight",
            "blk.0.attn_k_norm.weight"} <= names and "blk.0.ffn_gate.weight" not in names
    a = spec.layers[0].attention
    # 32 layers x K and V of 8 heads x 128 at 16 bits: 131,072 bytes per token
    assert len(spec.layers) * 2 * a.n_kv_heads * a.head_dim_k * 2 == 131072
