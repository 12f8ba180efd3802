"""Every source gives the same per-layer ModelSpec: a model's config.json (catalog) and a GGUF carrying the same
model's layout (written by tests/groundtruth/synth.py from the published dims) describe every layer alike."""

import pytest

from oomkit.model import catalog
from oomkit.model.gguf_file import read_gguf_spec
from oomkit.model.hf_config import spec_from_config
from tests.groundtruth import synth

PAIRS = [("llama-3.1-8b", "llama3.1:8b"), ("qwen3-8b", "qwen3:8b"), ("qwen3-30b-a3b", "qwen3:30b-a3b"),
         ("gemma-2-9b", "gemma2:9b"), ("gpt-oss-20b", "gpt-oss:20b"), ("deepseek-v3", "deepseek-v3"),
         ("qwen3.5-27b", "qwen3.5:27b")]


def layer_view(layer):
    a, r, f = layer.attention, layer.recurrent, layer.ffn
    att = None if a is None else (a.n_heads, a.n_kv_heads, a.head_dim_k, a.head_dim_v, a.window, a.kv_lora_rank,
                                   a.qk_rope_head_dim)
    rec = None if r is None else (r.conv, r.ssm)
    return layer.kind, att, rec, (f.n_ff, f.n_experts, f.n_experts_used, f.n_ff_expert, f.n_ff_shared)


@pytest.mark.parametrize("synth_key,name", PAIRS, ids=[p[0] for p in PAIRS])
def test_gguf_and_config_agree(synth_key, name, tmp_path):
    model = synth.MODELS[synth_key](n_layers=8)
    gguf_spec = read_gguf_spec(synth.write_gguf(model, tmp_path / "m.gguf", "q4_0"))
    cfg_spec = spec_from_config(catalog.lookup(name).config, name=name, weight_format="Q4_0")
    assert gguf_spec.n_embd == cfg_spec.n_embd and gguf_spec.n_vocab == cfg_spec.n_vocab
    assert gguf_spec.tied_embeddings == cfg_spec.tied_embeddings
    for i, layer in enumerate(gguf_spec.layers):
        assert layer_view(layer) == layer_view(cfg_spec.layers[i]), f"{synth_key} layer {i}"


def test_unknown_architecture_and_missing_keys_are_named(tmp_path):
    import gguf

    from oomkit.errors import OomkitError

    def write(arch, keys):
        path = tmp_path / f"{arch}.gguf"
        w = gguf.GGUFWriter(str(path), arch)
        for k, v in keys.items():
            w.add_uint32(k, v)
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()
        return path

    with pytest.raises(OomkitError, match="frobnicator"):
        read_gguf_spec(write("frobnicator", {"frobnicator.block_count": 2}))
    with pytest.raises(OomkitError, match="llama.embedding_length"):
        read_gguf_spec(write("llama", {"llama.block_count": 2}))
