"""`oomkit models`: lists and searches the catalog from the index alone, fast."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from oomkit.cli import main
from oomkit.model import catalog


def _run(capsys, *argv):
    rc = main(["models", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_lists_everything(capsys):
    rc, out, _ = _run(capsys)
    assert rc == 0
    lines = out.strip().splitlines()
    assert lines[0].split()[:3] == ["NAME", "HF", "ID"]
    assert lines[-1] == f"{len(catalog.entries())} models"
    assert any("meta-llama/Llama-3.1-8B-Instruct" in line and "128K" in line for line in lines)


def test_query_matches_aliases_and_ollama_tags(capsys):
    rc, out, _ = _run(capsys, "gpt-oss:20b")
    assert rc == 0 and "openai/gpt-oss-20b" in out and "openai/gpt-oss-120b" not in out
    rc, out, _ = _run(capsys, "Qwen3-30B-A3B-FP8")  # a quantized variant repo finds its base model
    assert rc == 0 and "Qwen/Qwen3-30B-A3B " in out


def test_json_rows(capsys):
    rc, out, _ = _run(capsys, "deepseek-v3", "--json")
    rows = json.loads(out)
    assert rc == 0 and {r["slug"] for r in rows} >= {"deepseek-v3", "deepseek-v3.1", "deepseek-v3.2"}
    v3 = next(r for r in rows if r["slug"] == "deepseek-v3")
    assert v3["kinds"] == ["latent", "moe"] and v3["context"] == 163840
    assert v3["params"] == 684531386000 and 37e9 < v3["active"] < 39e9
    assert "deepseek-v3:671b" in v3["aliases"]


@pytest.mark.parametrize("kind,slug", [("sliding", "gemma-3-27b-it"), ("latent", "kimi-k2-instruct"),
                                       ("recurrent", "qwen3.5-27b"), ("moe", "mixtral-8x7b-instruct-v0.1"),
                                       ("chunked", "llama-4-scout-17b-16e-instruct")])
def test_kind_filter(capsys, kind, slug):
    rc, out, _ = _run(capsys, "--kind", kind, "--json")
    slugs = {r["slug"] for r in json.loads(out)}
    assert rc == 0 and slug in slugs
    assert all(kind in r["kinds"] for r in json.loads(out))


def test_family_filter(capsys):
    rc, out, _ = _run(capsys, "--family", "GEMMA", "--json")
    rows = json.loads(out)
    assert rc == 0 and rows and all(r["family"] == "gemma" for r in rows)


def test_no_match_is_exit_2_with_a_hint(capsys):
    rc, out, err = _run(capsys, "qwen3-31b")
    assert rc == 2 and out == ""
    assert "no catalog model matches qwen3-31b" in err and "did you mean" in err and "oomkit models" in err


def test_listing_opens_no_data_file(monkeypatch, capsys):
    from pathlib import Path

    catalog._index.cache_clear()
    opened: list[Path] = []
    real_open = Path.open

    def spy(self, *args, **kwargs):
        opened.append(Path(self))
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", spy)
    assert _run(capsys)[0] == 0
    assert opened == [catalog.INDEX_PATH]


def test_cold_listing_is_fast():
    cmd = [sys.executable, "-m", "oomkit.cli", "models"]
    best = min(_timed(cmd) for _ in range(3))
    assert best < 3, f"oomkit models took {best:.3f}s"  # 10x the 0.3 s budget (docs/benchmarks.md has the figure)


def _timed(cmd):
    t = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    return time.perf_counter() - t
