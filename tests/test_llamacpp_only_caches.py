"""DeepSeek-V4's compressed attention and MiniMax-M3's sparse-attention indexer are modelled for llama.cpp only
(src/models/deepseek4.cpp llama_kv_cache_dsv4; src/models/minimax-m3.cpp llama_kv_cache_msa): the other engines
refuse such a model by name instead of sizing its layers as the plain sliding / GQA layers they resemble."""

from __future__ import annotations

import subprocess
import sys

import pytest

from oomkit.errors import OomkitError
from oomkit.model.archs import refuse_llamacpp_only_caches
from oomkit.model.gguf_file import read_gguf_spec
from tests import ggufs
from tests.groundtruth import synth


def _spec(arch: str):
    path = synth.synth_path(ggufs.ADDED_BUILDERS[arch](), ggufs.ADDED_QUANT.get(arch, "q4_0"))
    return path, read_gguf_spec(path)


@pytest.mark.parametrize("arch,what", [("deepseek4", "DeepSeek-V4's compressed attention"),
                                       ("minimax-m3", "MiniMax-M3's sparse-attention indexer")])
@pytest.mark.parametrize("engine", ["vLLM", "SGLang", "transformers", "MLX"])
def test_other_engines_refuse_llamacpp_only_caches(arch, what, engine):
    _, spec = _spec(arch)
    with pytest.raises(OomkitError, match=f"{what}.*not for {engine}( \\(vLLM runs .*\\))?; use --engine llama.cpp"):
        refuse_llamacpp_only_caches(spec, engine)


def test_kimi_k3_gguf_is_not_refused():
    """Kimi K3's caches are Kimi-Linear's (KDA states and MLA latents, src/models/kimi-k3.cpp), which the engines
    size; only its config.json is refused (hf_config._REFUSED)."""
    _, spec = _spec("kimi-k3")
    refuse_llamacpp_only_caches(spec, "vLLM")


@pytest.mark.parametrize("engine", ["vllm", "sglang", "transformers", "mlx"])
def test_check_cli_refuses_deepseek4_gguf_with_exit_2(engine):
    path, _ = _spec("deepseek4")
    # vLLM models DeepSeek-V4's own caches from 0.20.0 (tests/test_vllm_deepseek_v4.py): the release before refuses
    old = ["--engine-version", "0.19.1"] if engine == "vllm" else []
    p = subprocess.run([sys.executable, "-m", "oomkit", "check", str(path), "--engine", engine, "--gpu", "8x H200",
                        *old], capture_output=True, text=True, timeout=120)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "modelled for llama.cpp only" in p.stderr


def test_check_cli_llamacpp_still_sizes_deepseek4_gguf():
    path, _ = _spec("deepseek4")
    p = subprocess.run([sys.executable, "-m", "oomkit", "check", str(path), "--engine", "llama.cpp", "--gpu",
                        "8x H200"], capture_output=True, text=True, timeout=120)
    assert p.returncode in (0, 1), p.stdout + p.stderr


def test_check_cli_refuses_deepseek_v4_flash_config_with_exit_2(tmp_path):
    """DeepSeek-V4-Flash's verbatim config.json (tests/test_hf_config_recent.py DSV4_FLASH) under vLLM 0.19.1 on
    8x H200: read as its GGUF (hf_config._deepseek_v4_spec), then refused at its caches as the GGUF is: an input error
    (exit 2) that names llama.cpp and vLLM's first release that runs it (0.20.0+ is modelled:
    tests/test_vllm_deepseek_v4.py)."""
    import json

    from tests.test_hf_config_recent import DSV4_FLASH

    (tmp_path / "config.json").write_text(json.dumps(DSV4_FLASH))
    p = subprocess.run([sys.executable, "-m", "oomkit", "check", str(tmp_path), "--engine", "vllm", "--gpu",
                        "8x H200", "--engine-version", "0.19.1"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "modelled for llama.cpp only" in p.stderr and "DeepseekV4ForCausalLM from 0.20.0" in p.stderr


@pytest.mark.parametrize("arch,first", [("deepseek4", "DeepseekV4ForCausalLM from 0.20.0"),
                                        ("minimax-m3", "MiniMaxM3SparseForCausalLM from 0.24.0")])
def test_vllm_refusal_names_the_first_release_that_runs_the_model(arch, first):
    """vLLM's registry.py in the released wheels: DeepseekV4ForCausalLM first in 0.20.0 (not in 0.19.1),
    MiniMaxM3SparseForCausalLM first in 0.24.0 (not in 0.23.0)."""
    _, spec = _spec(arch)
    with pytest.raises(OomkitError, match=f"vLLM runs {first}"):
        refuse_llamacpp_only_caches(spec, "vLLM")
