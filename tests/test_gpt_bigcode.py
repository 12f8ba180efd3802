"""GPTBigCode configs (StarCoder, SantaCoder, OctoCoder, WizardCoder 15B) read as llama.cpp's starcoder architecture.

convert_hf_to_gguf.py StarCoderModel maps GPTBigCodeForCausalLM to MODEL_ARCH.STARCODER; src/models/starcoder.cpp
load_arch_tensors requires GPT-2's layout: learned positions {n_embd, n_ctx_train}, biased LayerNorms, one fused
attn_qkv {n_embd, n_embd + 2 n_embd_gqa} with its bias, biased attn_output / ffn_up / ffn_down, no gate. transformers
GPTBigCodeAttention keeps one K and one V head when multi_query (the default), n_inner None means 4 x n_embd, and the
head is tied to wte. bigcode/starcoder's config.json: n_embd 6144, n_head 48, n_inner 24576, n_layer 40,
n_positions 8192, multi_query true, vocab_size 49152 (the StarCoder paper's 15.5B parameters).
"""

from __future__ import annotations

import pytest

from oomkit.model.gguf_file import read_gguf_spec
from oomkit.model.hf_config import spec_from_config
from tests import gt_compare as g
from tests.groundtruth import synth
from tests.test_llamacpp_real_shapes import resized

STARCODER = {"model_type": "gpt_bigcode", "architectures": ["GPTBigCodeForCausalLM"], "n_embd": 6144, "n_head": 48,
             "n_inner": 24576, "n_layer": 40, "n_positions": 8192, "multi_query": True, "vocab_size": 49152,
             "activation_function": "gelu_pytorch_tanh", "torch_dtype": "float32"}
needs_llama_cpp = pytest.mark.skipif(not g.llamacpp_run.available(), reason="llama-cpp-python not installed")


def test_starcoder_is_multi_query_gpt2_layout():
    spec = spec_from_config(STARCODER, "bigcode/starcoder")
    assert spec.architecture == "starcoder" and not spec.labels
    assert spec.n_ctx_train == 8192
    attn = spec.layers[0].attention
    assert (attn.n_heads, attn.n_kv_heads, attn.head_dim_k) == (48, 1, 128)
    shapes = {t.name: t.shape for t in spec.weights.tensors if t.layer in (None, 0)}
    assert shapes["blk.0.attn_qkv.weight"] == (6144, 6144 + 2 * 128)
    assert shapes["blk.0.attn_qkv.bias"] == (6144 + 2 * 128,)
    assert shapes["blk.0.ffn_up.weight"] == (6144, 24576) and "blk.0.ffn_gate.weight" not in shapes
    assert shapes["position_embd.weight"] == (6144, 8192)
    assert "output.weight" not in shapes  # tied: llama.cpp duplicates token_embd (TENSOR_DUPLICATED)
    # per layer: qkv 6144 x 6400 + 6400, out 6144^2 + 6144, up and down 2 x (6144 x 24576) + 24576 + 6144, two norms
    # with biases 4 x 6144 = 379,128,064; x 40 + embeddings 49152 x 6144 + positions 8192 x 6144 + final norm 12,288
    assert spec.params_total == 379_128_064 * 40 + 301_989_888 + 50_331_648 + 12_288 == 15_517_456_384


def test_multi_query_false_keeps_every_head():
    spec = spec_from_config(dict(STARCODER, multi_query=False), "mha")
    assert spec.layers[0].attention.n_kv_heads == 48


@needs_llama_cpp
def test_config_spec_equals_llama_cpp_on_the_published_shapes():
    """The config's first two layers against llama.cpp loading the same shapes written as its converter writes them."""
    model = resized("starcoder", "bigcode/starcoder config.json dims", n_embd=6144, n_head=48, n_kv=1, hd=128,
                    n_ff=24576, n_vocab=49152, tied=True, ctx=8192)
    path = synth.synth_path(model, "q4_0")
    ours = spec_from_config(dict(STARCODER, n_layer=2), "bigcode/starcoder", weight_format="Q4_0")
    gguf = read_gguf_spec(path)
    assert sorted((t.name, t.shape) for t in ours.weights.tensors) == sorted((t.name, t.shape)
                                                                            for t in gguf.weights.tensors)
    g.assert_equals_llama_cpp(ours, path, g.small_grid(dict(n_ctx=4096), dict(n_ctx=8192, n_seq_max=2)),
                              "starcoder", fields=g.CACHE_FIELDS)
