"""Catalog entries Ling-flash-2.0 (bailingmoe2), Llama-3.1-Minitron-4B Width / Depth and Mistral-NeMo-Minitron-8B
(llama), and the refusal of Phi-4-mini-flash-reasoning (phi4flash, SambaY).

For the three that llama.cpp runs on this CPU the catalog's config (first layers) is held to
(a) the spec oomkit reads from a synthetic GGUF written as llama.cpp's converter writes that checkpoint (tensor names
    and shapes from src/models/bailingmoe2.cpp / llama.cpp load_arch_tensors, llama.cpp@0c1e57098): layers, tied
    head, parameter count;
(b) llama.cpp (llama-cpp-python 0.3.36, same build) loading that GGUF: n_ctx, every KV cache and the KV buffer
    exactly, and the model buffer;
(c) the published totals: each entry's params_published, worked by hand from the shapes.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from oomkit.errors import ModelError, OomkitError
from oomkit.model import catalog, names
from oomkit.model.gguf_file import read_gguf_spec
from oomkit.model.hf_config import spec_from_config
from oomkit.model.resolve import resolve
from oomkit.model.spec import LayerKind
from tests import gt_compare as g
from tests.groundtruth import synth
from tests.groundtruth.synth import SynthModel, _attn_gqa, _embeddings, _ffn_dense, _Meta
from tests.test_hf_config_recent import bailingmoe2_gguf

CATALOG = Path(__file__).resolve().parents[1] / "src" / "oomkit" / "model" / "catalog" / "data"
needs_llama_cpp = pytest.mark.skipif(not g.llamacpp_run.available(), reason="llama-cpp-python not installed")


def _config(slug: str) -> dict:
    return json.loads((CATALOG / f"{slug}.json").read_text(encoding="utf-8"))["config"]


def _comparable(layer):
    """A layer as a GGUF can tell it: shared experts as one MLP of their summed width."""
    f = layer.ffn
    return dataclasses.replace(layer, ffn=dataclasses.replace(f, n_shared_experts=1 if f.n_ff_shared else 0))


def ling_flash_gguf(n_layers: int = 2) -> SynthModel:
    """Ling-flash-2.0: 32 heads over 4096, dense 9216, experts of 1024 (the catalog's ling-flash-2.0 entry)."""
    return bailingmoe2_gguf("ling-flash-2.0", "inclusionAI/Ling-flash-2.0 (catalog)", n_embd=4096, n_head=32,
                            n_ff=9216, n_ff_exp=1024, rope_base=10000.0, n_layers=n_layers)


def _llama_gguf(name: str, n_embd: int, n_ff: int, n_vocab: int, ctx: int, rope_base: float, n_layers: int) -> SynthModel:
    """A Llama-architecture decoder of 32 heads / 8 KV heads of 128 as convert_hf_to_gguf.py LlamaModel writes it:
    key_length / value_length 128 (head_dim from the config: the 3072-wide Minitron has heads of 128, not 96), an
    untied output.weight; src/models/llama.cpp load_arch_tensors."""
    arch, n_head, n_kv, hd = "llama", 32, 8, 128
    md = _Meta(arch).base(ctx=ctx, n_embd=n_embd, n_layers=n_layers, n_ff=n_ff, n_head=n_head, n_head_kv=n_kv,
                          rms_eps=1e-5, rope_base=rope_base, n_vocab=n_vocab)
    md.u32("attention.key_length", hd).u32("attention.value_length", hd).u32("rope.dimension_count", hd)
    ts = _embeddings(n_embd, n_vocab, tied=False)
    for i in range(n_layers):
        ts += _attn_gqa(i, n_embd, n_head * hd, n_kv * hd) + _ffn_dense(i, n_embd, n_ff)
    return SynthModel(name, arch, f"{name} (catalog)", n_vocab, n_layers, tuple(md.items), tuple(ts),
                      tied_embeddings=False, dims={})


def minitron_4b_width_gguf(n_layers: int = 2) -> SynthModel:
    return _llama_gguf("llama-3.1-minitron-4b-width", 3072, 9216, 128256, 131072, 500000.0, n_layers)


def minitron_8b_gguf(n_layers: int = 2) -> SynthModel:
    return _llama_gguf("mistral-nemo-minitron-8b", 4096, 11520, 131072, 8192, 1000000.0, n_layers)


# catalog slug -> (GGUF builder, layers written, llama.cpp architecture)
CASES = {
    "ling-flash-2.0": (ling_flash_gguf, 2, "bailingmoe2"),
    "llama-3.1-minitron-4b-width-base": (minitron_4b_width_gguf, 2, "llama"),
    "mistral-nemo-minitron-8b-base": (minitron_8b_gguf, 2, "llama"),
}


@pytest.fixture(scope="module")
def gguf_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("gguf")


def _pair(slug: str, gguf_dir):
    build, n, arch = CASES[slug]
    path = synth.synth_path(build(n), "q4_0", cache_dir=gguf_dir)
    cfg = dict(_config(slug), num_hidden_layers=n)
    return spec_from_config(cfg, slug, weight_format="Q4_0"), read_gguf_spec(path), path, arch


@pytest.mark.parametrize("slug", list(CASES))
def test_config_spec_equals_the_converted_gguf(slug, gguf_dir):
    ours, gguf, _, arch = _pair(slug, gguf_dir)
    assert ours.architecture == gguf.architecture == arch
    assert not [x for x in ours.labels if "generically" in x]
    assert [_comparable(x) for x in ours.layers] == [_comparable(x) for x in gguf.layers]
    assert ours.tied_embeddings == gguf.tied_embeddings
    assert ours.params_total == gguf.params_total


GRID = g.small_grid(dict(n_ctx=4096), dict(n_ctx=8192, n_seq_max=4, type_k="q8_0", type_v="q8_0"))


@needs_llama_cpp
@pytest.mark.parametrize("slug", list(CASES))
def test_config_spec_caches_and_model_buffer_equal_llama_cpp(slug, gguf_dir):
    ours, _, path, _ = _pair(slug, gguf_dir)
    g.assert_equals_llama_cpp(ours, path, GRID, slug, fields=(*g.CACHE_FIELDS, "model_mib"))


def test_ling_flash_counts_the_hugging_face_total_exactly():
    """102,889,705,216 (the HF API's safetensors total, cited in the entry) from the shapes, worked by hand: untied
    embeddings 2 x 157,184 x 4,096; 32 attention blocks (fused QKV 4096 x 5120, output 4096^2, Q/K norms 2 x 128, two
    RMSNorms); layer 0's dense SwiGLU 3 x 4096 x 9216; 31 MoE layers of 256 + 1 experts of 3 x 4096 x 1024, the router
    256 x 4096 and its 256 F32 biases (the API's F32 count: 31 x 256 = 7,936); the final norm."""
    spec = spec_from_config(_config("ling-flash-2.0"), "ling-flash-2.0")
    attn = 4096 * 5120 + 4096 * 4096 + 2 * 128 + 2 * 4096
    moe = 257 * 3 * 4096 * 1024 + 256 * 4096 + 256
    total = 2 * 157184 * 4096 + 32 * attn + 3 * 4096 * 9216 + 31 * moe + 4096
    assert spec.architecture == "bailingmoe2" and spec.params_total == total == 102_889_705_216
    assert spec.params_total == catalog.lookup("inclusionAI/Ling-flash-2.0").params_published
    assert 31 * 256 == 7936
    # KV: 4 heads of 128, K and V at 16 bits = 2 KiB per token and layer, every layer full attention
    a = spec.layers[0].attention
    assert spec.kinds() == {"full": 32} and 2 * a.n_kv_heads * a.head_dim_k * 2 == 2048
    # active: the card's 6.1B (4.8B non-embedding)
    assert abs(spec.params_active / 6.1e9 - 1) < 0.01


@pytest.mark.parametrize("slug,published", [("llama-3.1-minitron-4b-width-base", 4_512_746_496),
                                            ("llama-3.1-minitron-4b-depth-base", 4_540_469_248),
                                            ("mistral-nemo-minitron-8b-base", 8_414_105_600)])
def test_minitron_totals_are_the_cards(slug, published):
    """Each total from the shapes (untied embeddings and head, GQA 32 / 8 of 128, SwiGLU, two RMSNorms per layer and
    the final one) equals the entry's params_published and rounds to the card's figure (4.51B, 4.54B, 8.41B)."""
    cfg = _config(slug)
    h, f, n, v = cfg["hidden_size"], cfg["intermediate_size"], cfg["num_hidden_layers"], cfg["vocab_size"]
    per_layer = 2 * h * 4096 + 2 * h * 1024 + 3 * h * f + 2 * h
    spec = spec_from_config(cfg, slug)
    assert spec.architecture == "llama" and spec.kinds() == {"full": n}
    assert spec.params_total == 2 * v * h + n * per_layer + h == published == catalog.lookup(slug).params_published
    assert spec.layers[0].attention.head_dim_k == 128


@pytest.mark.parametrize("name,slug", [("nvidia/Llama-3.1-Minitron-4B-Width-Base", "llama-3.1-minitron-4b-width-base"),
                                       ("bartowski/Llama-3.1-Minitron-4B-Width-Base-GGUF", "llama-3.1-minitron-4b-width-base"),
                                       ("nvidia/Llama-3.1-Minitron-4B-Depth-Base", "llama-3.1-minitron-4b-depth-base"),
                                       ("nvidia/Mistral-NeMo-Minitron-8B-Base", "mistral-nemo-minitron-8b-base"),
                                       ("QuantFactory/Mistral-NeMo-Minitron-8B-Base-GGUF", "mistral-nemo-minitron-8b-base"),
                                       ("inclusionAI/Ling-flash-2.0", "ling-flash-2.0"),
                                       ("unsloth/Ling-flash-2.0-GGUF", "ling-flash-2.0")])
def test_names_resolve(name, slug):
    assert catalog.resolve_slug(name) == slug


@pytest.mark.parametrize("name", ["microsoft/Phi-4-mini-flash-reasoning", "Phi-4-mini-flash-reasoning"])
def test_phi4_mini_flash_is_refused_with_the_reason(name):
    with pytest.raises(ModelError) as e:
        resolve(name)
    msg = str(e.value)
    assert "phi4flash" in msg and "llama.cpp has no architecture" in msg and "\n" not in msg
    assert names.hf_unsized(name) is not None


def test_phi4flash_config_is_refused_not_read_generically():
    """The repo's config.json (cited in model/names.py) is refused by the reader too: read generically it came out as
    a plain 32-layer GQA decoder with a full KV cache per layer."""
    cfg = {"architectures": ["Phi4FlashForCausalLM"], "model_type": "phi4flash", "hidden_size": 2560,
           "intermediate_size": 10240, "num_hidden_layers": 32, "num_attention_heads": 40, "num_key_value_heads": 20,
           "sliding_window": 512, "mb_per_layer": 2, "max_position_embeddings": 262144, "vocab_size": 200064,
           "tie_word_embeddings": True, "torch_dtype": "bfloat16"}
    with pytest.raises(OomkitError, match="SambaY"):
        spec_from_config(cfg, "phi4flash")


def test_minitron_8b_context_is_8k():
    spec = spec_from_config(_config("mistral-nemo-minitron-8b-base"), "m")
    assert spec.n_ctx_train == 8192 and spec.layers[0].kind is LayerKind.FULL
