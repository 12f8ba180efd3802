"""A derivative name and the hub: the repo's own config.json wins when the hub answers; when it cannot (offline,
unreachable, gated, not there) the name's convention stands in, labelled with why the hub was not read."""

from __future__ import annotations

import json
import socket

import pytest

from oomkit.model import catalog
from oomkit.model.resolve import resolve

from .test_hub import FakeFile
from .test_hub import fake as fake  # noqa: F401 - the fake hub fixture
from .test_hub import gguf_files as gguf_files  # noqa: F401 - what the fake hub serves

# The repo's own config differs from what its name says (GPTQ 8-bit, group 64, not AWQ 4-bit): the hub must win.
_OWN = {**catalog.lookup("Qwen/Qwen3-8B").config,
        "quantization_config": {"quant_method": "gptq", "bits": 8, "group_size": 64, "desc_act": False}}


def test_the_repos_own_config_wins(fake):  # noqa: F811
    fake.add("acme/Qwen3-8B-AWQ", {"config.json": FakeFile(json.dumps(_OWN).encode())})
    spec = resolve("acme/Qwen3-8B-AWQ", tag_formats=False)
    assert spec.weights.format == "gptq" and spec.source.startswith("hub: acme/Qwen3-8B-AWQ@")
    assert not any("inferred" in label for label in spec.labels)
    up = next(t for t in spec.weights.tensors if t.name == "blk.0.ffn_up.weight")
    assert 8 * up.nbytes / up.n_elements > 8  # 8-bit, as the repo says


def test_not_on_the_hub_falls_back_to_the_name(fake):  # noqa: F811
    spec = resolve("acme/Qwen3-8B-AWQ", tag_formats=False)  # the fake hub has no such repo
    assert spec.weights.format == "awq"
    assert any("inferred from the name as Qwen/Qwen3-8B" in label for label in spec.labels)
    assert any(label.startswith("hub not read: no such repo 'acme/Qwen3-8B-AWQ'") for label in spec.labels)


def test_gated_repo_falls_back_to_the_name(fake):  # noqa: F811
    fake.add("acme/Qwen3-8B-FP8-dynamic", {"config.json": FakeFile(b"{}")}, status=403)
    spec = resolve("acme/Qwen3-8B-FP8-dynamic", tag_formats=False)
    assert spec.weights.format == "ct-float-quantized"
    assert any("gated" in label for label in spec.labels)


def test_unreachable_hub_falls_back_to_the_name(fake, monkeypatch):  # noqa: F811
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    spec = resolve("RedHatAI/Qwen3-8B-quantized.w4a16", tag_formats=False)
    assert spec.weights.format == "ct-pack-quantized"
    assert any("hub not read: the Hugging Face hub is unreachable" in label for label in spec.labels)


def test_offline_uses_what_an_online_call_cached(fake, monkeypatch):  # noqa: F811
    fake.add("acme/Qwen3-8B-AWQ", {"config.json": FakeFile(json.dumps(_OWN).encode())})
    online = resolve("acme/Qwen3-8B-AWQ", tag_formats=False)
    fake.reset()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    offline = resolve("acme/Qwen3-8B-AWQ", tag_formats=False)
    assert offline.weights == online.weights and offline.weights.format == "gptq" and fake.requests == []


@pytest.mark.parametrize("ref", ["Qwen/Qwen3-8B-AWQ", "unsloth/Qwen3-8B-GGUF:Q4_K_M"])
def test_offline_and_uncached_makes_no_request(fake, monkeypatch, ref):  # noqa: F811
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    resolve(ref)
    assert fake.requests == []
