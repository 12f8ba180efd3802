"""Architectures llama.cpp does not load, or that oomkit reads from a GGUF only, refused in one line with exit code 2.

Phi-4-mini-flash-reasoning (phi4flash, SambaY) has no llama.cpp support: src/llama-arch.cpp's LLM_ARCH_NAMES names
no phi4flash, and ggml-org/llama.cpp#20880 (its converter and src/models/phi4flash.cpp) was closed unmerged. A GGUF
that PR's converter writes is refused by llama.cpp itself (llama-cpp-python 0.3.36's build: "unknown model
architecture: 'phi4flash'"), and by oomkit, by name, by config.json and by file, saying so.

MiniMax-M3 does load in llama.cpp (PR #24908, merged: minimax-m3, held to llama.cpp in tests/test_llamacpp_archs.py),
but oomkit reads it from its GGUF only: a config.json is refused with the reason (model/hf_config.py _REFUSED).
"""

from __future__ import annotations

import json

import pytest

from tests import gt_compare as g
from tests.groundtruth import synth
from tests.groundtruth.synth import SynthModel, _attn_gqa, _embeddings, _ffn_dense, _Meta
from tests.hardware_fakes import run_oomkit
from tests.test_llamacpp_archs import BASE

needs_llama_cpp = pytest.mark.skipif(not g.llamacpp_run.available(), reason="llama-cpp-python not installed")


def one_line_error(r, *words: str) -> str:
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("oomkit: error: "), r.stderr
    for w in words:
        assert w in lines[0], (w, lines[0])
    return lines[0]


def phi4flash_gguf() -> SynthModel:
    """A GGUF of general.architecture phi4flash (conversion/phi4flash.py of PR #20880 writes that name): two
    attention blocks of Phi-4-mini-flash's width (2560, 40 / 20 heads, FFN 10240, vocabulary 200064) are enough for
    the loader to stop at the architecture name."""
    arch = "phi4flash"
    md = _Meta(arch).base(ctx=262144, n_embd=2560, n_layers=2, n_ff=10240, n_head=40, n_head_kv=20, rms_eps=1e-5,
                          rope_base=10000.0, n_vocab=200064)
    ts = _embeddings(2560, 200064, tied=True)
    for i in range(2):
        ts += _attn_gqa(i, 2560, 2560, 1280) + _ffn_dense(i, 2560, 10240)
    return SynthModel("phi4flash-2l", arch, "Phi-4-mini-flash-reasoning's width, PR #20880's architecture name", 200064,
                      2, tuple(md.items), tuple(ts), tied_embeddings=True, dims={})


@needs_llama_cpp
def test_llama_cpp_itself_does_not_load_phi4flash():
    m = g.llamacpp_run.measure(synth.synth_path(phi4flash_gguf(), "f16"), **dict(BASE, n_ctx=8192))
    assert not m["ok"] and "unknown model architecture: 'phi4flash'" in (m["error"] or ""), (m["stage"], m["error"])


def test_phi4flash_gguf_is_refused_saying_llama_cpp_has_no_support():
    path = synth.synth_path(phi4flash_gguf(), "f16")
    one_line_error(run_oomkit("check", str(path), "--engine", "llama.cpp", "--gpu", "RTX-4090", "-c", "8192"),
                   "'phi4flash' has no llama.cpp support", "#20880", "closed unmerged", "unknown model architecture")


@pytest.mark.parametrize("name", ["microsoft/Phi-4-mini-flash-reasoning", "Phi-4-mini-flash-reasoning"])
def test_phi4flash_name_is_refused(name):
    one_line_error(run_oomkit("check", name, "--engine", "llama.cpp", "--gpu", "RTX-4090", "-c", "8192"),
                   "llama.cpp has no architecture for it", "#20880")


def test_phi4flash_config_is_refused(tmp_path):
    cfg = {"architectures": ["Phi4FlashForCausalLM"], "model_type": "phi4flash", "hidden_size": 2560,
           "intermediate_size": 10240, "num_hidden_layers": 32, "num_attention_heads": 40, "num_key_value_heads": 20,
           "sliding_window": 512, "mb_per_layer": 2, "max_position_embeddings": 262144, "vocab_size": 200064}
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    one_line_error(run_oomkit("check", str(tmp_path / "config.json"), "--engine", "llama.cpp", "--gpu", "RTX-4090"),
                   "llama.cpp has no architecture for it", "#20880")


def test_minimax_m3_config_is_refused_in_one_line(tmp_path):
    text = {"model_type": "minimax_m3", "architectures": ["MiniMaxM3SparseForCausalLM"], "num_hidden_layers": 4,
            "hidden_size": 6144, "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim": 128,
            "intermediate_size": 3072, "vocab_size": 200064}
    cfg = {"model_type": "minimax_m3_vl", "architectures": ["MiniMaxM3SparseForConditionalGeneration"],
           "text_config": text}
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    one_line_error(run_oomkit("check", str(tmp_path / "config.json"), "--engine", "llama.cpp", "--gpu", "RTX-4090"),
                   "MiniMax-M3", "read from its GGUF only")
