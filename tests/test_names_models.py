"""`oomkit models` says what each entry resolves from; `oomkit models --explain NAME` how a reference is read."""

from __future__ import annotations

import json

import pytest

from oomkit.cli import main
from oomkit.model import catalog, names


@pytest.fixture(autouse=True)
def offline(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("OOMKIT_CACHE", str(tmp_path / "cache"))


def _run(capsys, *argv):
    rc = main(["models", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_json_rows_say_what_each_entry_resolves_from(capsys):
    rc, out, _ = _run(capsys, "Qwen/Qwen3-30B-A3B", "--json")
    row = next(r for r in json.loads(out) if r["slug"] == "qwen3-30b-a3b")
    rf = row["resolves_from"]
    assert rc == 0 and "qwen3:30b-a3b" in rf["ollama_tags"] and "qwen/qwen3-30b-a3b" in rf["hf_ids"]
    assert "qwen/qwen3-30b-a3b-fp8" in rf["variants"]
    assert rf["derivatives"][0].startswith("*/Qwen3-30B-A3B-{GGUF,i1-GGUF,AWQ,")
    assert "bartowski/Qwen_Qwen3-30B-A3B-GGUF" in rf["derivatives"]


def test_names_flag_lists_them_under_each_entry(capsys):
    rc, out, _ = _run(capsys, "--family", "gpt-oss", "--names")
    assert rc == 0
    assert "    Ollama tags: gpt-oss, gpt-oss:20b" in out
    assert "    derivatives: */gpt-oss-20b-{GGUF," in out
    lines = out.strip().splitlines()
    assert lines[0].split()[-2:] == ["OLLAMA", "TAGS"] and lines[-1] == "4 models"  # with the two safeguard models


def test_a_derivative_name_finds_its_base_in_the_listing(capsys):
    rc, out, _ = _run(capsys, "unsloth/Qwen3-30B-A3B-GGUF", "--json")
    assert rc == 0 and [r["slug"] for r in json.loads(out)] == ["qwen3-30b-a3b"]
    rc, out, _ = _run(capsys, "RedHatAI/Qwen3-8B-FP8-dynamic", "--json")
    assert rc == 0 and [r["slug"] for r in json.loads(out)] == ["qwen3-8b"]


@pytest.mark.parametrize("suffix", names.DERIVATIVE_SUFFIXES)
def test_every_listed_derivative_suffix_is_read(suffix):
    d = names.derive(f"someone/Qwen3-8B-{suffix}")
    assert d is not None and d.slug == "qwen3-8b", suffix


@pytest.mark.parametrize("suffix", names.MLX_SUFFIXES)
def test_every_listed_mlx_suffix_is_read(suffix):
    d = names.derive(f"mlx-community/Qwen3-8B-{suffix}")
    assert d is not None and d.slug == "qwen3-8b", suffix
    assert d.weight_format == "bfloat16" or (d.quantization_config or {}).get("quant_method") == "mlx"


def test_explain_text_and_json(capsys):
    rc, out, _ = _run(capsys, "--explain", "RedHatAI/Qwen3-8B-FP8-dynamic")
    assert rc == 0
    assert "derivative of        Qwen/Qwen3-8B (catalog qwen3-8b)" in out
    assert "weights ct-float-quantized" in out and "inferred from the name" in out
    rc, out, _ = _run(capsys, "--explain", "gemma3:27b-it-qat", "--json")
    rows = json.loads(out)
    assert rc == 0 and rows["Ollama tag"].startswith("gemma3:27b-it") and "Q4_0" in rows["result"]
    rc, out, _ = _run(capsys, "--explain", "llama3.1:8b-q4_K_XXL")
    assert rc == 0 and "unknown quant tag 'q4_K_XXL'" in out


def test_explain_an_unknown_name(capsys):
    rc, out, _ = _run(capsys, "--explain", "acme/not-a-model")
    assert rc == 0 and "not found: read from the hub" in out and "result" in out and "error:" in out


def test_listing_still_reads_the_index_only(monkeypatch, capsys):
    from pathlib import Path

    catalog._index.cache_clear()
    catalog._tails.cache_clear()
    opened: list[Path] = []
    real_open = Path.open

    def spy(self, *args, **kwargs):
        opened.append(Path(self))
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", spy)
    assert _run(capsys, "--names")[0] == 0
    assert opened == [catalog.INDEX_PATH]


def test_ollama_command_r_is_the_08_2024_release():
    """ollama.com/library/command-r: command-r and command-r:35b are Command R 08-2024 since August 2024 (64 query
    / 8 KV heads, GQA; 18 GB at Q4); the March 2024 weights (v01, 64 KV heads) kept the -v0.1 tags."""
    from oomkit.model.resolve import resolve

    for name in ("command-r", "command-r:35b", "command-r:35b-08-2024"):
        assert catalog.lookup(name).hf_id == "CohereForAI/c4ai-command-r-08-2024", name
        assert resolve(name).layers[0].attention.n_kv_heads == 8
    assert catalog.lookup("command-r:35b-v0.1").hf_id == "CohereForAI/c4ai-command-r-v01"
    assert resolve("command-r:35b-v0.1").layers[0].attention.n_kv_heads == 64
