"""vLLM refuses a model in the releases that predate it (engines/vllm/archs.py FIRST_RELEASES, read from each
wheel's models/registry.py and model files) and sizes it from the first release that runs it."""
from __future__ import annotations

import pytest

from oomkit.errors import OomkitError
from oomkit.estimate import estimate

# (catalog name, GPU setting, the release before, the first release that runs it)
CASES = [
    ("nemotron-3-super-120b-a12b", dict(gpu="8x H100", tensor_parallel_size=8), "0.12.0", "0.13.0"),
    ("lfm2-1.2b", dict(gpu="H100"), "0.10.1", "0.10.2"),
    ("lfm2-8b-a1b", dict(gpu="H100"), "0.11.0", "0.11.1"),
    ("kimi-linear-48b-a3b-instruct", dict(gpu="2x H100", tensor_parallel_size=2), "0.11.0", "0.11.1"),
    ("glm-5", dict(gpu="8x H200", tensor_parallel_size=8), "0.15.1", "0.16.0"),
    ("glm-5.2", dict(gpu="8x H200", tensor_parallel_size=8), "0.22.0", "0.23.0"),
    ("qwen3.5-0.8b", dict(gpu="H100"), "0.16.0", "0.17.0"),
    ("qwen3.6-27b", dict(gpu="H100"), "0.16.0", "0.17.0"),
    ("qwen3.8-27b", dict(gpu="H100"), "0.16.0", "0.17.0"),
    ("qwen3.5-35b-a3b", dict(gpu="H100"), "0.16.0", "0.17.0"),
    ("gemma-4-12b-it", dict(gpu="H100"), "0.18.1", "0.19.0"),
    ("kimi-k3", dict(gpu="8x H200", tensor_parallel_size=8), "0.26.0", "0.27.0"),
]


@pytest.mark.parametrize("name,kw,before,first", CASES, ids=[c[0] for c in CASES])
def test_refused_before_the_first_release(name, kw, before, first):
    with pytest.raises(OomkitError, match=rf"vLLM {before} has no .*runs from vLLM {first}"):
        estimate(name, "vllm", max_model_len=4096, engine_version=before, **kw)


@pytest.mark.parametrize("name,kw,before,first", CASES, ids=[c[0] for c in CASES])
def test_sized_from_the_first_release(name, kw, before, first):
    r = estimate(name, "vllm", max_model_len=4096, engine_version=first, **kw)
    assert r.to_dict()


def test_nemotron_h_without_latent_moe_runs_before_it():
    """The plain Nemotron-H models (no moe_latent_size) run from 0.9.1 (registry.py NemotronHForCausalLM), before
    the latent MoE (0.13.0)."""
    from oomkit.engines.vllm.archs import check_model_release
    spec = type("S", (), {"architecture": "nemotron_h", "name": "nemotron-h", "layers": ()})()
    with pytest.raises(OomkitError, match=r"vLLM 0\.9\.0 has no NemotronHForCausalLM.*0\.9\.1"):
        check_model_release(spec, (0, 9, 0))
    check_model_release(spec, (0, 9, 1))
