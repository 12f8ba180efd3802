"""Bare Ollama library names: the model Ollama's :latest tag is, or a one-line refusal where the library has none.

gemma4:latest is gemma4:e4b (ochyai/vibe-local#21: "gemma4:e4b (= gemma4:latest)", 9.6GB; kryptobaseddev/cleo#1080's
table of ollama.com/library/gemma4); qwen3.8:latest is qwen3.8:27b (the same manifest, sha256:22130167c4c2..., in
public `ollama list` output and pinned references); granite4.1 publishes size tags only (a model inventory's record:
"granite4.1:latest ... were unavailable. Their official tag pages expose explicit local variants").
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from oomkit.errors import ModelError
from oomkit.model import catalog
from oomkit.model.resolve import resolve


@pytest.mark.parametrize("name, slug", [
    ("gemma4", "gemma-4-e4b-it"), ("gemma4:latest", "gemma-4-e4b-it"),
    ("qwen3.8", "qwen3.8-27b"), ("qwen3.8:latest", "qwen3.8-27b"),
])
def test_latest_is_the_tag_ollama_ships(name, slug):
    tag = {"gemma-4-e4b-it": "gemma4:e4b", "qwen3.8-27b": "qwen3.8:27b"}[slug]
    assert catalog.resolve_slug(name) == catalog.resolve_slug(tag) == slug
    a, b = resolve(name), resolve(tag)
    assert (a.architecture, a.params_total, a.weights.nbytes, a.weights.format) == (
        b.architecture, b.params_total, b.weights.nbytes, b.weights.format)


@pytest.mark.parametrize("name", ["granite4.1", "granite4.1:latest"])
def test_no_latest_is_refused_with_the_tags(name):
    with pytest.raises(ModelError, match=r"granite4\.1:3b, granite4\.1:8b"):
        resolve(name)
    p = subprocess.run([sys.executable, "-m", "oomkit", "estimate", name, "--engine", "ollama"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "has no default here" in lines[0] and "ibm-granite/granite-4.1-8b" in lines[0]
    assert "Traceback" not in p.stderr
