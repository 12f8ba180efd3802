"""The catalog's MiniMax-M2 family (config model_type minimax_m2, read under that name; llama.cpp's minimax-m2) held to
the GGUF llama.cpp's converter writes and to llama.cpp itself.

Read from config.json the layers were right but two tensors per layer and the router's bias were missing against
src/models/minimax-m2.cpp load_arch_tensors: the whole-projection QK norms (attn_q_norm {n_head x 128} = 6144,
attn_k_norm {n_kv x 128} = 1024; qk_norm_type per_layer) and exp_probs_b {256} (use_routing_bias). Measured: the
2-layer file's spec and the config's agree tensor by tensor, and llama.cpp (llama-cpp-python 0.3.36,
ggml-org/llama.cpp@0c1e57098) maps the same model buffer and makes the same caches the config's spec predicts.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oomkit.model.gguf_file import read_gguf_spec
from oomkit.model.hf_config import spec_from_config
from tests import ggufs
from tests import gt_compare as g
from tests.groundtruth import synth

CATALOG = Path(__file__).resolve().parents[1] / "src" / "oomkit" / "model" / "catalog" / "data"
needs_llama_cpp = pytest.mark.skipif(not g.llamacpp_run.available(), reason="llama-cpp-python not installed")
SLUGS = ["minimax-m2", "minimax-m2.1", "minimax-m2.5", "minimax-m2.7"]


def _config(slug: str, n_layers: int = 2) -> dict:
    cfg = json.loads((CATALOG / f"{slug}.json").read_text(encoding="utf-8"))["config"]
    return dict(cfg, num_hidden_layers=n_layers)


@pytest.fixture(scope="module")
def gguf_path():
    return synth.synth_path(ggufs.minimax_m2(2), "q4_0")


@pytest.mark.parametrize("slug", SLUGS)
def test_config_tensors_equal_the_converted_gguf(slug, gguf_path):
    ours, gguf = spec_from_config(_config(slug), slug, weight_format="Q4_0"), read_gguf_spec(gguf_path)
    assert {t.name: t.shape for t in ours.weights.tensors} == {t.name: t.shape for t in gguf.weights.tensors}
    assert ours.layers == gguf.layers and ours.params_total == gguf.params_total
    names = {t.name: t.shape for t in ours.weights.tensors}
    assert names["blk.1.attn_q_norm.weight"] == (6144,) and names["blk.1.attn_k_norm.weight"] == (1024,)
    assert names["blk.1.exp_probs_b.bias"] == (256,)


@needs_llama_cpp
def test_config_spec_caches_and_model_buffer_equal_llama_cpp(gguf_path):
    ours = spec_from_config(_config("minimax-m2"), "minimax-m2", weight_format="Q4_0")
    grid = g.small_grid(dict(n_ctx=4096), dict(n_ctx=8192, n_seq_max=4, type_k="q8_0", type_v="q8_0"))
    g.assert_equals_llama_cpp(ours, gguf_path, grid, "minimax-m2", fields=(*g.CACHE_FIELDS, "model_mib"))
