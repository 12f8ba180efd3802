"""Qwen3-Omni-30B-A3B: config.json files nest the language model under thinker_config.text_config (model_type
qwen3_omni_moe_text), which text engines load and llama.cpp converts as qwen3vlmoe (conversion/qwen3vl.py
Qwen3OmniMoeTextModel(Qwen3VLMoeTextModel), num_deepstack_layers 0; convert_hf_to_gguf.py ModelBase.load_hparams
reads config["thinker_config"]["text_config"]).

The catalog's config (first layers) is held to the spec read from a synthetic GGUF written as that converter writes
it (src/models/qwen3vlmoe.cpp load_arch_tensors, llama.cpp@0c1e57098) and to llama.cpp itself on the CPU (n_ctx,
caches, KV and model buffers exactly); the total to keras-hub's published thinker count.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oomkit.model import catalog
from oomkit.model.gguf_file import read_gguf_spec
from oomkit.model.hf_config import spec_from_config, text_config
from oomkit.model.towers import vision_tower
from tests import gt_compare as g
from tests.groundtruth import synth
from tests.groundtruth.synth import VT, SynthModel, _attn_gqa, _blk, _embeddings, _ffn_moe, _Meta

CATALOG = Path(__file__).resolve().parents[1] / "src" / "oomkit" / "model" / "catalog" / "data"
SLUG = "qwen3-omni-30b-a3b-instruct"
needs_llama_cpp = pytest.mark.skipif(not g.llamacpp_run.available(), reason="llama-cpp-python not installed")


def _config() -> dict:
    return json.loads((CATALOG / f"{SLUG}.json").read_text(encoding="utf-8"))["config"]


def _first(n: int) -> dict:
    cfg = _config()
    thinker = cfg["thinker_config"]
    return dict(cfg, thinker_config=dict(thinker, text_config=dict(thinker["text_config"], num_hidden_layers=n)))


def omni_thinker_gguf(n_layers: int = 2) -> SynthModel:
    """The thinker's text model as Qwen3OmniMoeTextModel writes it (qwen3vlmoe): 32 / 4 heads of 128 with q/k norms,
    128 experts of 768 (8 used), no shared expert, 152,064 tokens, untied, 65,536 positions, rope sections
    [24, 20, 20, 0], n_deepstack_layers 0."""
    arch, n_embd, n_head, n_kv, hd, n_vocab, n_exp, n_ff_exp = "qwen3vlmoe", 2048, 32, 4, 128, 152064, 128, 768
    md = _Meta(arch).base(ctx=65536, n_embd=n_embd, n_layers=n_layers, n_ff=6144, n_head=n_head, n_head_kv=n_kv,
                          rms_eps=1e-6, rope_base=1000000.0, n_vocab=n_vocab)
    md.u32("attention.key_length", hd).u32("attention.value_length", hd)
    md.u32("expert_count", n_exp).u32("expert_used_count", 8).u32("expert_feed_forward_length", n_ff_exp)
    md.u32("n_deepstack_layers", 0)
    md.items += [(f"{arch}.rope.dimension_sections", [24, 20, 20, 0], (VT.ARRAY, VT.INT32))]
    ts = _embeddings(n_embd, n_vocab, tied=False)
    for i in range(n_layers):
        ts += _attn_gqa(i, n_embd, n_head * hd, n_kv * hd, qk_norm_dim=hd)
        ts += [_blk(i, "ffn_norm.weight", n_embd)] + _ffn_moe(i, n_embd, n_ff_exp, n_exp)
    return SynthModel("qwen3-omni-thinker", arch, "Qwen/Qwen3-Omni-30B-A3B-Instruct (catalog)", n_vocab, n_layers,
                      tuple(md.items), tuple(ts), tied_embeddings=False, dims={})


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    path = synth.synth_path(omni_thinker_gguf(2), "q4_0", cache_dir=tmp_path_factory.mktemp("gguf"))
    return spec_from_config(_first(2), SLUG, weight_format="Q4_0"), read_gguf_spec(path), path


def test_thinker_config_is_the_text_config():
    tc = text_config(_config())
    assert tc["model_type"] == "qwen3_omni_moe_text" and tc["num_hidden_layers"] == 48
    assert tc["torch_dtype"] == "bfloat16" and tc["tie_word_embeddings"] is False
    assert catalog.lookup(SLUG).text_config["hidden_size"] == 2048


def test_config_spec_equals_the_converted_gguf(pair):
    ours, gguf, _ = pair
    assert ours.architecture == gguf.architecture == "qwen3vlmoe"
    assert not [x for x in ours.labels if "generically" in x]
    assert any("thinker's language model and vision encoder: its audio encoder" in x for x in ours.labels)
    assert ours.n_ctx_train == gguf.n_ctx_train == 65536
    assert list(ours.layers) == list(gguf.layers)
    assert sorted((t.name, t.shape) for t in ours.weights.tensors) == sorted((t.name, t.shape) for t in gguf.weights.tensors)
    assert ours.params_total == gguf.params_total


GRID = g.small_grid(dict(n_ctx=4096), dict(n_ctx=8192, n_seq_max=4, type_k="q8_0", type_v="q8_0"))


@needs_llama_cpp
def test_config_spec_caches_and_model_buffer_equal_llama_cpp(pair):
    ours, _, path = pair
    g.assert_equals_llama_cpp(ours, path, GRID, "", fields=(*g.CACHE_FIELDS, "model_mib"))


def test_thinker_total_and_kv():
    """30,532,646,912: Qwen3-30B-A3B's decoder (48 layers of q 2048 x 4096, k/v 2048 x 512, o 4096 x 2048, q/k norms of
    128, two norms, router 2048 x 128, 128 experts of 3 x 2048 x 768) with 152,064 rows of embeddings and head; the
    published 30,532,122,624 (keras-hub's thinker preset) is that count at 151,936 rows, 2 x 128 x 2048 fewer."""
    e = catalog.lookup("Qwen/Qwen3-Omni-30B-A3B-Instruct")
    spec = spec_from_config(e.config, e.name)
    layer = 2048 * 4096 + 2 * 2048 * 512 + 4096 * 2048 + 2 * 128 + 2 * 2048 + 2048 * 128 + 128 * 3 * 2048 * 768
    total = 2 * 152064 * 2048 + 48 * layer + 2048
    assert spec.params_total == total == 30_532_646_912
    assert total - e.params_published == 2 * 128 * 2048
    a = spec.layers[0].attention  # 4 KV heads of 128, K and V at 16 bits: 2 KiB per token and layer
    assert spec.kinds() == {"full": 48} and 2 * a.n_kv_heads * a.head_dim_k * 2 == 2048


@pytest.mark.parametrize("name", ["Qwen/Qwen3-Omni-30B-A3B-Instruct", "Qwen/Qwen3-Omni-30B-A3B-Thinking",
                                  "Qwen/Qwen3-Omni-30B-A3B-Captioner", "unsloth/Qwen3-Omni-30B-A3B-Instruct-GGUF"])
def test_names_resolve(name):
    assert catalog.resolve_slug(name) == SLUG


def test_thinker_vision_encoder_is_the_tower():
    """thinker_config.vision_config read as Qwen3-VL's tower family: 538,631,408 parameters, transformers 5.24's
    count of Qwen3OmniMoeVisionEncoder for these values (patch_embed Conv3d 3 x 2 x 16^2 -> 1152 with bias, 2,304
    position rows, 27 blocks, the merger and 3 deepstack mergers to 2048)."""
    cfg = _config()
    tower = vision_tower(cfg)
    assert tower is not None and tower.family == "qwen3_omni_moe_vision_encoder"
    h, ff, m = 1152, 4304, 1152 * 4
    block = 2 * 2 * h + (h * 3 * h + 3 * h) + (h * h + h) + (h * ff + ff) + (ff * h + h)
    enc = 3 * 2 * 16 * 16 * h + h + 2304 * h + 27 * block
    merger = 2 * h + (m * m + m) + (m * 2048 + 2048)
    deepstack = 2 * m + (m * m + m) + (m * 2048 + 2048)
    assert tower.params == enc + merger + 3 * deepstack == 538_631_408
    assert spec_from_config(cfg, SLUG).towers == (tower,)
