"""SGLang refuses a model in the releases that predate it (engines/sglang/archs.py FIRST_RELEASES, read from each
wheel's python/sglang/srt/models/) and sizes it from the first release that runs it."""
from __future__ import annotations

import pytest

from oomkit.errors import OomkitError
from oomkit.estimate import estimate

# (catalog name, settings, the release before, the first release that runs it)
CASES = [
    ("nemotron-3-super-120b-a12b", dict(gpu="8x H100", tp_size=8), "0.5.7", "0.5.8"),
    ("lfm2-1.2b", dict(gpu="H100"), "0.5.8.post1", "0.5.9"),
    ("lfm2-8b-a1b", dict(gpu="H100"), "0.5.8.post1", "0.5.9"),
    ("kimi-linear-48b-a3b-instruct", dict(gpu="2x H100", tp_size=2), "0.5.4.post1", "0.5.4.post2"),
    ("glm-5", dict(gpu="8x H200", tp_size=8), "0.5.8.post1", "0.5.9"),
    ("qwen3.5-0.8b", dict(gpu="H100"), "0.5.8.post1", "0.5.9"),
    ("qwen3.6-27b", dict(gpu="H100"), "0.5.8.post1", "0.5.9"),
    ("qwen3.8-27b", dict(gpu="H100"), "0.5.8.post1", "0.5.9"),
    ("qwen3.5-35b-a3b", dict(gpu="H100"), "0.5.8.post1", "0.5.9"),
    ("ministral-3-8b-instruct-2512", dict(gpu="H100"), "0.5.6", "0.5.6.post1"),
    ("ministral-3-3b-instruct-2512", dict(gpu="H100"), "0.5.6", "0.5.6.post1"),
    ("gemma-4-12b-it", dict(gpu="H100"), "0.5.10.post1", "0.5.11"),
    ("kimi-k3", dict(gpu="8x H200", tp_size=8), "0.5.16", "0.5.17"),
]


@pytest.mark.parametrize("name,kw,before,first", CASES, ids=[c[0] for c in CASES])
def test_refused_before_the_first_release(name, kw, before, first):
    with pytest.raises(OomkitError, match=rf"SGLang {before} has no .*runs from SGLang {first}"):
        estimate(name, "sglang", context_length=4096, engine_version=before, **kw)


@pytest.mark.parametrize("name,kw,before,first", CASES, ids=[c[0] for c in CASES])
def test_sized_from_the_first_release(name, kw, before, first):
    r = estimate(name, "sglang", context_length=4096, engine_version=first, **kw)
    assert r.to_dict()


def test_nemotron_h_without_latent_moe_runs_before_it():
    """The plain Nemotron-H models (no moe_latent_size) run from 0.5.3.post1, before the latent MoE (0.5.8)."""
    from oomkit.engines.sglang.archs import check_model_release
    spec = type("S", (), {"architecture": "nemotron_h", "name": "nemotron-h", "layers": ()})()
    with pytest.raises(OomkitError, match="SGLang 0.5.3 has no nemotron_h model.*0.5.3.post1"):
        check_model_release(spec, (0, 5, 3, 0))
    check_model_release(spec, (0, 5, 3, 1))
