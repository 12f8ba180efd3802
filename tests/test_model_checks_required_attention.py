"""A GGUF lacking an attention projection llama.cpp creates as required is refused, as llama.cpp refuses it.

llama.cpp's load_tensors (src/llama-model.cpp, each architecture's per-layer loop) creates attn_q / attn_k / attn_v /
attn_output without TENSOR_NOT_REQUIRED for the plain transformers (llama, qwen2/3 and their MoE, gemma2/3, gpt-oss,
...): a file without one stops loading at "missing tensor" (b7140) / check_tensor_dims' "tensor '...' not found"
(the llama-cpp-python 0.3.36 build in .venv, measured below on the same files). oomkit used to estimate such a file
(exit 0) as if whole.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from tests.groundtruth import synth
from tests.sweep_harness import offline, run_cli  # noqa: F401 (autouse: no network, a fresh cache)

MODELS = {"llama3_8b": synth.llama3_8b, "qwen3_8b": synth.qwen3_8b, "qwen3_30b_a3b": synth.qwen3_30b_a3b,
          "gemma3_12b": synth.gemma3_12b, "gpt_oss_20b": synth.gpt_oss_20b}


def _without(model_key: str, drop: str, tmp: Path) -> Path:
    model = MODELS[model_key](n_layers=2)
    assert any(t.name == drop for t in model.tensors), drop
    model = replace(model, tensors=tuple(t for t in model.tensors if t.name != drop))
    return synth.write_gguf(model, tmp / f"{model_key}.gguf")


CASES = [("llama3_8b", "blk.0.attn_k.weight"), ("llama3_8b", "blk.1.attn_output.weight"),
         ("qwen3_8b", "blk.1.attn_q.weight"), ("qwen3_30b_a3b", "blk.0.attn_v.weight"),
         ("gemma3_12b", "blk.1.attn_k.weight"), ("gpt_oss_20b", "blk.0.attn_output.weight")]


@pytest.mark.parametrize(("model_key", "drop"), CASES)
def test_a_missing_attention_projection_is_refused_in_one_line(tmp_path, model_key, drop):
    p = _without(model_key, drop, tmp_path)
    rc, _, err = run_cli("estimate", str(p), "--vram", "24GiB")
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1 and lines[0].startswith("oomkit: error: "), (rc, err)
    assert f"tensor '{drop}' not found" in lines[0], lines[0]


@pytest.mark.parametrize(("model_key", "drop"), [CASES[0], CASES[1], CASES[4]])
def test_llama_cpp_refuses_the_same_files(tmp_path, model_key, drop, capfd):
    """The engine's own words on these files (llama-cpp-python 0.3.36)."""
    llama_cpp = pytest.importorskip("llama_cpp")
    p = _without(model_key, drop, tmp_path)
    with pytest.raises(ValueError):
        llama_cpp.Llama(str(p), n_ctx=256, verbose=True)
    assert f"check_tensor_dims: tensor '{drop}' not found" in capfd.readouterr().err


@pytest.mark.parametrize("model_key", sorted(MODELS))
def test_the_whole_files_still_estimate(tmp_path, model_key):
    p = synth.write_gguf(MODELS[model_key](n_layers=2), tmp_path / "m.gguf")
    rc, _, err = run_cli("estimate", str(p), "--vram", "24GiB")
    assert rc == 0, err


def test_a_fused_qkv_in_place_of_the_three_is_not_refused(tmp_path):
    """Either form serves: llama.cpp reads a fused attn_qkv where the three are missing for phi2 / glm4 / bert
    (`if (layer.wqkv == nullptr)`), and a later build reading one for another architecture is never contradicted."""
    model = synth.llama3_8b(n_layers=2)
    qkv = [t for t in model.tensors if t.name.startswith("blk.") and t.name.endswith(("attn_q.weight", "attn_k.weight",
                                                                                      "attn_v.weight"))]
    fused = []
    for i in range(2):
        q, k, v = (next(t for t in qkv if t.name == f"blk.{i}.attn_{x}.weight") for x in "qkv")
        fused.append(replace(q, name=f"blk.{i}.attn_qkv.weight", ne=(q.ne[0], q.ne[1] + k.ne[1] + v.ne[1])))
    model = replace(model, tensors=tuple(t for t in model.tensors if t not in qkv) + tuple(fused))
    p = synth.write_gguf(model, tmp_path / "m.gguf")
    rc, _, err = run_cli("estimate", str(p), "--vram", "24GiB")
    assert rc == 0, err


def test_ollama_s_attn_out_serves_as_the_output_projection(tmp_path):
    """Ollama's own llama4 model read its output projection as `attn_out` (model/models/llama4 TextAttention, before it
    became attn_output): a file so named is not refused."""
    model = synth.llama3_8b(n_layers=2)
    model = replace(model, tensors=tuple(replace(t, name=t.name.replace("attn_output", "attn_out"))
                                         for t in model.tensors))
    p = synth.write_gguf(model, tmp_path / "m.gguf")
    rc, _, err = run_cli("estimate", str(p), "--vram", "24GiB")
    assert rc == 0, err
