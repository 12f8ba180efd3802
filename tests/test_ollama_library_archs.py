"""Models whose Ollama library GGUF is Ollama's own conversion under an architecture name llama.cpp's converter does
not write (engines/ollama/weights.py library_arch): Olmo 3 / 3.1 ("olmo3", convert/convert_olmo.go, v0.13.4; llama.cpp
names it olmo2) and GLM-4.7-Flash ("glm4moelite", convert/convert_glm4moelite.go, v0.14.3; llama.cpp: deepseek2). No
vendored llama.cpp runner loads those names, so a release before the Ollama engine registered them refuses; from
then on the Ollama engine runs them (fs/ggml KV.OllamaEngineRequired), with its flash-attention default
(GGML.FlashAttention), and from v0.30.0 llama-server through llama/compat/llama-ollama-compat.cpp (handle_olmo3 ->
olmo2, handle_glm4moelite -> deepseek2 with the MLA conventions)."""

from __future__ import annotations

import pytest

from oomkit.engines import ollama as ol
from oomkit.engines.ollama.weights import gguf_view, library_arch, ollama_gguf
from oomkit.errors import OomkitError
from oomkit.memory import Device
from oomkit.model.resolve import resolve
from tests.test_ollama import _no_ollama_env  # noqa: F401  (autouse: no OLLAMA_* from the environment)

MiB, GiB = 1 << 20, 1 << 30


def _est(name: str, version: str, num_ctx: int = 4096):
    gpu = Device(id="CUDA0", name="NVIDIA GeForce RTX 4090", memory_bytes=24 * GiB, free_bytes=24 * GiB)
    return ol.ENGINE.estimate(resolve(name, "Q4_K_M"), (gpu,),
                              ol.OllamaSettings(num_ctx=num_ctx, engine_version=version))


@pytest.mark.parametrize("name,entry", [
    ("olmo-3", "Olmo 3 7B Think"), ("olmo-3:7b", "Olmo 3 7B Think"), ("olmo-3:latest", "Olmo 3 7B Think"),
    ("olmo-3:7b-instruct", "Olmo 3 7B Instruct"), ("olmo-3:32b", "Olmo 3 32B Think"),
    ("olmo-3.1", "Olmo 3.1 32B Think"), ("olmo-3.1:32b-instruct", "Olmo 3.1 32B Instruct"),
    ("glm-4.7-flash", "GLM-4.7-Flash"), ("glm-4.7-flash:q8_0", "GLM-4.7-Flash"),
])
def test_library_names_resolve(name, entry):
    assert resolve(name, "Q4_K_M").name == entry


@pytest.mark.parametrize("name,arch,llama_arch", [
    ("olmo-3", "olmo3", "olmo2"), ("olmo-3.1:32b-instruct", "olmo3", "olmo2"),
    ("glm-4.7-flash", "glm4moelite", "deepseek2"), ("olmo2", "olmo2", "olmo2"), ("deepseek-v2:16b", "deepseek2",
                                                                               "deepseek2"),
])
def test_library_architecture(name, arch, llama_arch):
    spec = resolve(name, "Q4_K_M")
    assert spec.architecture == llama_arch and library_arch(spec) == arch
    assert gguf_view(ollama_gguf(spec)).arch == arch


@pytest.mark.parametrize("name,before,first", [("olmo-3", "0.13.3", "0.13.4"), ("glm-4.7-flash", "0.14.2", "0.14.3")])
def test_refused_before_the_ollama_engine_ran_it(name, before, first):
    """The vendored llama.cpp of those releases has no olmo3 / glm4moelite: Ollama's runner fails to load the blob."""
    with pytest.raises(OomkitError, match=rf"architecture (olmo3|glm4moelite).*from Ollama {first}; {before} cannot"):
        _est(name, before)
    est = _est(name, first)
    assert est.engine_view["ollama_runner"] == "Ollama engine" and est.settings["flash_attention"] == "on"


@pytest.mark.parametrize("name", ["olmo-3", "glm-4.7-flash"])
@pytest.mark.parametrize("version", ["0.20.0", "0.29.0"])
def test_ollama_engine_in_later_releases(name, version):
    assert _est(name, version).engine_view["ollama_runner"] == "Ollama engine"


def test_llama_server_runs_them_from_0_30():
    for name in ("olmo-3", "glm-4.7-flash"):
        assert _est(name, "0.30.0").engine_view["ollama_runner"].startswith("llama-server")


def test_glm_flash_blob_has_no_mtp_block():
    """convert_glm4moelite.go skips every block >= num_hidden_layers: 47 blocks (llama.cpp's converter keeps the
    next-n block 47); handle_glm4moelite's "844 tensors" = 3 + 13 (the dense block 0) + 46 x 18."""
    spec = ollama_gguf(resolve("glm-4.7-flash", "Q4_K_M"))
    assert spec.n_layers == 47 and spec.n_nextn_layers == 0
    assert len(spec.weights.tensors) == 844
    assert resolve("glm-4.7-flash", "Q4_K_M").n_nextn_layers == 1


def test_glm_flash_go_quantizer_types():
    """server/quantization.go (v0.15.1+): the MLA tensors Q8_0; ffn_down Q6_K where useMoreBits(i, 47) over the 93
    ffn_down tensors in file order (blk.0's dense ffn_down, then each block's _exps and _shexp)."""
    ts = {t.name: t.dtype for t in ollama_gguf(resolve("glm-4.7-flash", "Q4_K_M")).weights.tensors}
    for n in ("attn_k_b", "attn_v_b", "attn_kv_a_mqa", "attn_q_a", "attn_q_b"):
        assert ts[f"blk.5.{n}.weight"] == "q8_0"
    downs = [ts[k] for k in sorted((k for k in ts if "ffn_down" in k),
                                   key=lambda k: (int(k.split(".")[1]), k))]
    assert len(downs) == 93 and downs.count("q6_K") == 69
    assert ts["blk.3.ffn_down_exps.weight"] == "q4_K" and ts["blk.4.ffn_down_exps.weight"] == "q6_K"
    assert ts["blk.21.ffn_down_exps.weight"] == "q6_K" and ts["blk.20.ffn_down_exps.weight"] == "q4_K"


@pytest.mark.parametrize("version,per_token", [("0.14.3", 47 * 20 * (256 + 256) * 2),
                                               ("0.15.0", 47 * (576 + 512) * 2)])
def test_glm_flash_kv_per_head_then_latent(version, per_token):
    """v0.14.3's model/models/glm4moelite cached K and V per head (20 x 256 / 256); v0.15.0's MLA absorption
    (64737330a, #13870) caches the 576-wide key and the 512-wide latent value (nn.AttentionWithVMLA)."""
    est = _est("glm-4.7-flash", version)
    kv = sum(est.engine_view["ollama_memory"]["kv cache"].values())
    assert kv == per_token * 4096


def test_glm_flash_gguf_view_keeps_the_per_head_keys():
    """convert_glm4moelite.go writes head_count_kv 20, key_length 256, value_length 256 (the latent widths only as
    *_mla), which fs/ggml's accessors read."""
    g = gguf_view(ollama_gguf(resolve("glm-4.7-flash", "Q4_K_M")))
    assert (g.heads_kv_max, g.key_length, g.value_length, g.block_count) == (20, 256, 256, 47)


@pytest.mark.parametrize("name,arch,runner", [
    ("hf.co/unsloth/GLM-4.7-Flash-GGUF:Q4_K_M", "deepseek2", "Ollama engine"),  # deepseek2 listed from v0.13.0
    ("hf.co/unsloth/Olmo-3-7B-Think-GGUF:Q4_K_M", "olmo2", "llama.cpp runner"),
])
def test_a_publishers_gguf_is_llama_cpps_conversion(name, arch, runner):
    """A GGUF repo's file is llama.cpp's conversion (deepseek2 / olmo2), not the library's: no Ollama-only name, so
    a release before the Ollama engine knew glm4moelite / olmo3 loads it (v0.13.0 here), by the rules of its name."""
    spec = resolve(name, "Q4_K_M")
    assert library_arch(spec) == arch
    assert _est(name, "0.13.0").engine_view["ollama_runner"] == runner
