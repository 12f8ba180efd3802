"""Names users type most that failed to resolve: vLLM's and transformers' quickstart models and Ollama library
names without a tag (Ollama reads them as the tag ``latest``, the size its library page marks latest). Each resolves
to its model, whose parameter total is checked against a published figure, and ``oomkit check NAME --gpu "RTX 4090"``
answers (exit 0: fits, 1: does not)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from oomkit.model import catalog
from oomkit.model.hf_config import spec_from_config

# name -> (slug, published total, tolerance as a fraction of it, where the figure is published)
NAMES = {
    # vLLM's quickstart model: OPT-125M, 125,239,296 parameters as transformers counts them (model card: 125M)
    "facebook/opt-125m": ("opt-125m", 125_239_296, 0.0, "transformers OPTForCausalLM parameter count"),
    "opt-125m": ("opt-125m", 125_000_000, 0.005, "model card: 125M"),
    # GPT-2 small: model card "124M parameters"; transformers counts 124,439,808 (tied head once)
    "gpt2": ("gpt2", 124_439_808, 0.0, "transformers GPT2LMHeadModel('gpt2') parameter count"),
    "openai-community/gpt2": ("gpt2", 124_000_000, 0.005, "model card: 124M parameters"),
    # Ollama's llava (= llava:7b = llava:7b-v1.6-mistral-q4_0: one blob in ollama/ollama's llama/llava and
    # llama/example READMEs) is LLaVA 1.6 Mistral 7B; llava-hf's model page: 7.57B parameters
    "llava": ("llava-v1.6-mistral-7b-hf", 7_570_000_000, 0.001, "llava-hf/llava-v1.6-mistral-7b-hf: 7.57B"),
    "llava:7b": ("llava-v1.6-mistral-7b-hf", 7_570_000_000, 0.001, "llava-hf/llava-v1.6-mistral-7b-hf: 7.57B"),
    "llava:7b-v1.5": ("llava-1.5-7b-hf", 7_060_000_000, 0.001, "llava-hf/llava-1.5-7b-hf: 7.06B"),
    # ollama.com/library/hermes3: latest = 8b (Hermes 3 Llama 3.1 8B)
    "hermes3": ("hermes-3-llama-3.1-8b", 8_030_261_248, 0.0, "Llama-3.1-8B safetensors total"),
    # ollama.com/library/cogito: latest = 8b; 14b / 32b are the Qwen2.5 fine-tunes
    "cogito": ("cogito-v1-preview-llama-8b", 8_030_261_248, 0.0, "Llama-3.1-8B safetensors total"),
    "cogito:14b": ("cogito-v1-preview-qwen-14b", 14_700_000_000, 0.01, "Qwen2.5-14B model card: 14.7B"),
    "cogito:32b": ("cogito-v1-preview-qwen-32b", 32_500_000_000, 0.01, "Qwen2.5-32B model card: 32.5B"),
    # ollama.com/library/granite3.1-moe: latest = 3b (Granite 3.1 3B-A800M, model card: 3.3B)
    "granite3.1-moe": ("granite-3.1-3b-a800m-instruct", 3_300_000_000, 0.01, "model card: 3.3B"),
    # ollama.com/library/all-minilm: latest = 22m, sentence-transformers' all-MiniLM-L6-v2 (22,713,216 with the pooler)
    "all-minilm": ("all-minilm-l6-v2", 22_713_216, 0.0, "AutoModel parameter count"),
    "sentence-transformers/all-MiniLM-L6-v2": ("all-minilm-l6-v2", 22_700_000, 0.005, "model card: 22.7M"),
    # LFM2 1.2B (model card: 1.17B parameters)
    "lfm2:1.2b": ("lfm2-1.2b", 1_170_000_000, 0.005, "model card: 1.17B"),
}


@pytest.mark.parametrize("name", sorted(NAMES))
def test_name_resolves_with_its_published_total(name):
    slug, published, tol, _ = NAMES[name]
    e = catalog.lookup(catalog.resolve_slug(name))
    assert e is not None and e.slug == slug
    assert abs(e.params_published - published) <= tol * published


def test_gpt2_config_counts_the_checkpoint_and_the_gguf():
    """GPT-2 small from its config.json: wte 50257 x 768, wpe 1024 x 768, 12 blocks of LayerNorm + fused qkv +
    out + 3072-wide MLP, all biased (n_inner null -> 4 x 768), tied head: 124,439,808 parameters, and the 148
    tensors llama.cpp's gpt2 loader requires (src/models/gpt2.cpp load_arch_tensors)."""
    e = catalog.lookup("gpt2")
    spec = spec_from_config(e.config, name=e.name, weight_format="bf16")
    assert spec.params_total == 124_439_808
    assert len(spec.weights.tensors) == 148
    assert spec.n_ctx_train == 1024


@pytest.mark.parametrize("name", sorted(NAMES))
def test_check_answers_on_a_4090(name):
    r = subprocess.run([sys.executable, "-m", "oomkit", "check", name, "--gpu", "RTX 4090"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode in (0, 1), r.stderr


def test_opt125m_config_counts_the_checkpoint():
    """OPT-125M from its config.json: embed_tokens 50272 x 768, embed_positions 2050 x 768 (2048 + the offset of 2),
    12 pre-norm blocks of biased q/k/v/out, fc1 / fc2 of 3072 and two biased LayerNorms, the final LayerNorm, tied
    head: 125,239,296 parameters; multi-head KV of 12 x 64 per layer."""
    e = catalog.lookup("opt-125m")
    spec = spec_from_config(e.config, name=e.name, weight_format="bf16")
    assert spec.params_total == 125_239_296
    assert spec.n_ctx_train == 2048
    assert all(la.attention.n_kv_heads == 12 and la.attention.head_dim_k == 64 for la in spec.layers)


def test_opt_with_a_projected_embedding_is_refused():
    """OPT-350M (word_embed_proj_dim 512 under hidden 1024, post-norm) carries project_in / project_out and no final
    LayerNorm: not listed by the reader, so refused rather than miscounted."""
    from oomkit.errors import ModelError

    cfg = {**catalog.lookup("opt-125m").config, "hidden_size": 1024, "word_embed_proj_dim": 512}
    with pytest.raises(ModelError):
        spec_from_config(cfg, name="opt-350m-like", weight_format="bf16")


def test_all_minilm_is_the_f16_encoder():
    """Ollama ships all-minilm as F16 (embedding models are not quantized by default); the GGUF drops BERT's
    pooler (convert_hf_to_gguf.py BertModel), so the spec counts 22,565,376 = 22,713,216 - 147,840."""
    e = catalog.lookup("all-minilm")
    assert e.default_format == "F16"
    spec = spec_from_config(e.config, name=e.name, weight_format="F16")
    assert spec.params_total == 22_713_216 - (384 * 384 + 384)
    assert all(la.attention is not None and la.ffn.n_ff == 1536 for la in spec.layers) and len(spec.layers) == 6


def test_ollama_llava_is_the_mistral_decoder_in_q4_0():
    """LLaVA 1.6 Mistral 7B: Mistral-7B-Instruct-v0.2's decoder (8 KV heads of 128, FFN 14336, 32K positions, no
    window) under LLaVA 1.5's CLIP tower and projector; Ollama's llava tags are Q4_0 (llava:7b-v1.6-mistral-q4_0)."""
    from oomkit.model.towers import vision_tower

    e = catalog.lookup("llava")
    assert e.default_format == "Q4_0"
    tc = e.text_config
    assert (tc["num_key_value_heads"], tc["intermediate_size"], tc["max_position_embeddings"]) == (8, 14336, 32768)
    assert vision_tower(e.config).params == vision_tower(catalog.lookup("llava-1.5-7b-hf").config).params
    spec = spec_from_config(e.config, name=e.name, weight_format="Q4_0")
    assert spec.layers[0].attention.n_kv_heads == 8
