"""The 2025-2026 models users type by name resolve offline from the catalog (HF ids, the common GGUF repos, Ollama
tags), and the llama.cpp estimate's marginal KV per token is what their published architecture gives, recomputed
here from the shape values the entries cite (layer counts, KV heads, head sizes, MLA ranks), not from the code."""

from __future__ import annotations

import pytest

from oomkit import estimate
from oomkit.model import catalog

NAMES = {
    "zai-org/GLM-4.7-Flash": "glm-4.7-flash",
    "unsloth/GLM-4.7-Flash-GGUF": "glm-4.7-flash",
    "bartowski/zai-org_GLM-4.7-Flash-GGUF": "glm-4.7-flash",
    "ggml-org/GLM-4.7-Flash-GGUF": "glm-4.7-flash",
    "lmstudio-community/GLM-4.7-Flash-GGUF": "glm-4.7-flash",
    "mistralai/Devstral-2-123B-Instruct-2512": "devstral-2-123b-instruct-2512",
    "unsloth/Devstral-2-123B-Instruct-2512-GGUF": "devstral-2-123b-instruct-2512",
    "devstral-2": "devstral-2-123b-instruct-2512",
    "mistralai/Devstral-Small-2-24B-Instruct-2512": "devstral-small-2-24b-instruct-2512",
    "bartowski/mistralai_Devstral-Small-2-24B-Instruct-2512-GGUF": "devstral-small-2-24b-instruct-2512",
    "devstral-small-2:24b": "devstral-small-2-24b-instruct-2512",
    "allenai/Olmo-3-7B-Think": "olmo-3-7b-think",
    "allenai/Olmo-3-7B-Instruct": "olmo-3-7b-instruct",
    "allenai/Olmo-3-32B-Think": "olmo-3-32b-think",
    "allenai/Olmo-3.1-32B-Instruct": "olmo-3.1-32b-instruct",
    "unsloth/Olmo-3-7B-Think-GGUF": "olmo-3-7b-think",
    "olmo-3:7b-instruct": "olmo-3-7b-instruct",
    "olmo-3.1:32b-instruct": "olmo-3.1-32b-instruct",
    "ibm-granite/granite-4.0-h-small": "granite-4.0-h-small",
    "ibm-granite/granite-4.0-h-small-GGUF": "granite-4.0-h-small",
    "granite4:small-h": "granite-4.0-h-small",
    "inclusionAI/Ling-mini-2.0": "ling-mini-2.0",
    "bartowski/inclusionAI_Ling-mini-2.0-GGUF": "ling-mini-2.0",
    "PrimeIntellect/INTELLECT-3": "intellect-3",
    "unsloth/INTELLECT-3-GGUF": "intellect-3",
}


@pytest.mark.parametrize("name,slug", sorted(NAMES.items()))
def test_recent_names_resolve_offline(name, slug):
    assert catalog.resolve_slug(name) == slug


def _gqa(layers: int, kv_heads: int, head_dim: int) -> int:
    return layers * 2 * kv_heads * head_dim * 2  # K and V, f16


# name -> marginal f16 KV bytes per token in llama.cpp, from the architecture the entry cites
KV_PER_TOKEN = {
    # MLA as llama.cpp's deepseek2 caches it: one K row of kv_lora_rank + qk_rope_head_dim per layer; 47 trunk layers
    "zai-org/GLM-4.7-Flash": 47 * (512 + 64) * 2,
    "mistralai/Devstral-2-123B-Instruct-2512": _gqa(88, 8, 128),
    "mistralai/Devstral-Small-2-24B-Instruct-2512": _gqa(40, 8, 128),
    # 3 sliding (4,096-token window) to 1 full: past the window only the 8 full layers grow
    "allenai/Olmo-3-7B-Think": _gqa(8, 32, 128),
    "allenai/Olmo-3-32B-Think": _gqa(16, 8, 128),
    # 4 attention layers of 40; the 36 Mamba-2 layers carry a fixed state
    "ibm-granite/granite-4.0-h-small": _gqa(4, 8, 128),
    "inclusionAI/Ling-mini-2.0": _gqa(20, 4, 128),
    # 46 trunk layers; llama.cpp allocates no KV for the next-n layer
    "PrimeIntellect/INTELLECT-3": _gqa(46, 8, 128),
}


@pytest.mark.parametrize("name,expected", sorted(KV_PER_TOKEN.items()))
def test_llamacpp_kv_per_token_matches_the_architecture(name, expected):
    r = estimate(name, engine="llama.cpp", n_ctx=32768).to_dict()
    assert r["kv_bytes_per_token"] == expected


# vLLM caches the same rows for these (no sliding or recurrent layers): MLA's latent row per layer, else K and V
VLLM_KV_PER_TOKEN = {name: KV_PER_TOKEN[name] for name in (
    "zai-org/GLM-4.7-Flash", "mistralai/Devstral-2-123B-Instruct-2512", "mistralai/Devstral-Small-2-24B-Instruct-2512",
    "inclusionAI/Ling-mini-2.0", "PrimeIntellect/INTELLECT-3")}


@pytest.mark.parametrize("name,expected", sorted(VLLM_KV_PER_TOKEN.items()))
def test_vllm_kv_per_token_matches_the_architecture(name, expected):
    r = estimate(name, engine="vllm", max_model_len=32768).to_dict()
    assert r["kv_bytes_per_token"] == expected


# --- 2026 models whose GGUF metadata a public llama.cpp log prints whole (HilbertraumAI/HilbertRaum's b9849 arch
# sweep on an RTX 3090; the URLs are in tools/catalog_rows.py). Each log gives the shapes the entry holds, the file's
# tensor count (an untied output.weight is one tensor more), print_info's "model params" (the GGUF's tensors: the
# decoder without the MTP layer the converter drops) and the KV buffer of -c 8192.

HILBERTRAUM_NAMES = {
    "Qwen/Qwen3.5-9B": "qwen3.5-9b",
    "unsloth/Qwen3.5-9B-GGUF": "qwen3.5-9b",
    "qwen3.5:9b": "qwen3.5-9b",
    "Qwen/Qwen3.5-4B": "qwen3.5-4b",
    "unsloth/Qwen3.5-4B-GGUF": "qwen3.5-4b",
    "qwen3.5:4b": "qwen3.5-4b",
    "Qwen/Qwen3.5-2B": "qwen3.5-2b",
    "unsloth/Qwen3.5-2B-GGUF": "qwen3.5-2b",
    "qwen3.5:2b": "qwen3.5-2b",
    "ibm-granite/granite-4.1-8b": "granite-4.1-8b",
    "ibm-granite/granite-4.1-8b-GGUF": "granite-4.1-8b",
    "mistralai/Ministral-3-8B-Instruct-2512": "ministral-3-8b-instruct-2512",
    "unsloth/Ministral-3-8B-Instruct-2512-GGUF": "ministral-3-8b-instruct-2512",
    "bartowski/mistralai_Ministral-3-8B-Instruct-2512-GGUF": "ministral-3-8b-instruct-2512",
    "ministral-3:8b": "ministral-3-8b-instruct-2512",
    "google/gemma-4-E4B-it": "gemma-4-e4b-it",
    "unsloth/gemma-4-E4B-it-GGUF": "gemma-4-e4b-it",
    "gemma4:e4b": "gemma-4-e4b-it",
    "google/gemma-4-12B-it": "gemma-4-12b-it",
    "unsloth/gemma-4-12B-it-GGUF": "gemma-4-12b-it",
    "gemma4:12b": "gemma-4-12b-it",
    "Qwen/Qwen3.8-27B": "qwen3.8-27b",
    "unsloth/Qwen3.8-27B-GGUF": "qwen3.8-27b",
    "qwen3.8:27b": "qwen3.8-27b",
}


@pytest.mark.parametrize("name,slug", sorted(HILBERTRAUM_NAMES.items()))
def test_hilbertraum_sweep_names_resolve_offline(name, slug):
    assert catalog.resolve_slug(name) == slug


# slug -> (print_info "model params", the GGUF's tensor count, llama_kv_cache size at -c 8192 in MiB; None for the
# sliding-window models, whose SWA cache holds n_swa + n_ubatch cells)
HILBERTRAUM_GGUF = {
    "qwen3.5-9b": ("8.95", 427, 256.00),
    "qwen3.5-4b": ("4.21", 426, 256.00),
    "qwen3.5-2b": ("1.88", 320, 96.00),
    "granite-4.1-8b": ("8.79", 363, 1280.00),
    "ministral-3-8b-instruct-2512": ("8.49", 309, 1088.00),
    "gemma-4-e4b-it": ("7.46", 666, None),
    "gemma-4-12b-it": ("11.91", 667, None),
}


def _gguf_decoder(slug: str):
    import copy

    from oomkit.model.hf_config import spec_from_config

    cfg = copy.deepcopy(catalog.lookup(slug).config)
    cfg.get("text_config", cfg)["mtp_num_hidden_layers"] = 0  # convert_hf_to_gguf.py leaves the MTP block out
    return spec_from_config(cfg, name=slug, weight_format="bf16")


@pytest.mark.parametrize("slug", sorted(HILBERTRAUM_GGUF))
def test_hilbertraum_sweep_decoders_match_the_printed_gguf(slug):
    printed, n_tensors, _ = HILBERTRAUM_GGUF[slug]
    spec = _gguf_decoder(slug)
    assert f"{spec.params_total / 1e9:.2f}" == printed
    assert len(spec.weights.tensors) == n_tensors


@pytest.mark.parametrize("slug", sorted(s for s, v in HILBERTRAUM_GGUF.items() if v[2] is not None))
def test_hilbertraum_sweep_kv_at_8192(slug):
    *_, kv_mib = HILBERTRAUM_GGUF[slug]
    r = estimate(slug, engine="llama.cpp", n_ctx=8192).to_dict()
    assert r["kv_bytes_per_token"] * 8192 == kv_mib * 2**20


def test_qwen35_9b_total_is_ollamas_parameter_count():
    """Ollama's qwen3.5:9b GGUF holds the decoder, the MTP layer and the vision tower in one file; the
    general.parameter_count its llama.cpp log prints (ollama/ollama#16685) is 9,653,104,368, this entry's count to
    the parameter: the decoder shapes of the llama.cpp log, one MTP layer, the qwen3_vit_416m tower."""
    from oomkit.model.hf_config import spec_from_config
    from oomkit.model.towers import vision_tower

    e = catalog.lookup("qwen3.5-9b")
    decoder = spec_from_config(e.config, name=e.name, weight_format="bf16").params_total
    assert decoder + vision_tower(e.config).params == e.params_published == 9_653_104_368


def test_qwen38_27b_is_the_file_with_its_mtp_block():
    """Qwen3.8-27B's GGUF keeps the next-n block (block_count 65, nextn_predict_layers 1): its 866 tensors and
    'model params = 27.32 B' are the Qwen3.5 27B decoder's with the MTP layer, which the entry carries unchanged."""
    from oomkit.model.hf_config import spec_from_config

    e = catalog.lookup("qwen3.8-27b")
    spec = spec_from_config(e.config, name=e.name, weight_format="bf16")
    assert (f"{spec.params_total / 1e9:.2f}", len(spec.weights.tensors)) == ("27.32", 866)
    assert e.config == catalog.lookup("qwen3.5-27b").config


@pytest.mark.parametrize("name", ["moonshotai/Kimi-K2.7-Code", "kimi-k2.7-code", "unsloth/Kimi-K2.7-Code-GGUF"])
def test_kimi_k27_code_is_k25s_architecture(name):
    """nvidia/Kimi-K2.7-Code-NVFP4's config.json (aiconfigurator's copy) holds every memory-relevant value of K2.5's:
    the entry is K2.5's config and published total."""
    e, k25 = catalog.lookup(catalog.resolve_slug(name)), catalog.lookup("kimi-k2.5")
    assert e.slug == "kimi-k2.7-code" and e.config == k25.config
    assert e.params_published == k25.params_published == 1_026_879_376_368
