"""The buffers from_pretrained builds beside the weights, keyed on the class transformers builds (config.json's
model_type), not on the GGUF architecture name: Mistral and Mixtral are both "llama" to llama.cpp, but
MistralForCausalLM keeps its per-layer cos / sin caches one release longer than LlamaForCausalLM (to 4.41) and
MixtralForCausalLM to 4.47, and LlamaModel 4.38 alone registers a max_pos^2 causal_mask.

Measured on this machine with the transformers wheels 4.38.2, 4.41.2 and 4.42.4 (torch 2.13, CPU): a tiny model of
each class (3 layers, hidden 256, 4 heads of 64, 2 KV heads, vocab 128) built by AutoModelForCausalLM.from_config under
torch.set_default_dtype(dtype), as from_pretrained initialises a model, then sum(b.numel() * b.element_size()) over
model.buffers() (persistent and non-persistent alike). Every figure includes the float32 inv_freq (32 values a layer,
3 x 128 = 384 bytes), which buffer_bytes leaves out.
"""

from __future__ import annotations

import pytest

from oomkit.engines import transformers as tfe
from oomkit.engines.transformers.settings import resolve
from oomkit.engines.transformers.weights import buffer_bytes
from oomkit.model.hf_config import spec_from_config

# (release, model_type, max_position_embeddings, dtype) -> bytes of model.buffers()
MEASURED = {
    ("4.41.2", "mistral", 32768, "bfloat16"): 25_166_208,  # cos_cached + sin_cached (32768 x 64 bf16) x 3 + inv_freq
    ("4.41.2", "llama", 4096, "float16"): 384,  # inv_freq only: LlamaRotaryEmbedding computes cos / sin per forward
    ("4.41.2", "mixtral", 32768, "bfloat16"): 25_166_208,
    ("4.42.4", "mistral", 32768, "bfloat16"): 384,  # MistralRotaryEmbedding no longer caches
    ("4.42.4", "mixtral", 32768, "bfloat16"): 25_166_208,
    ("4.38.2", "mistral", 32768, "bfloat16"): 25_166_208,
    ("4.38.2", "llama", 4096, "float16"): 19_923_328,  # _cos / _sin_cached 3,145,728 + causal_mask 4096^2 bool
}
INV_FREQ = 3 * 32 * 4  # float32 inv_freq, rotary dim / 2 per layer: not counted by buffer_bytes


def _tiny(model_type: str, positions: int, dtype: str):
    cfg = dict(model_type=model_type, architectures=[f"{model_type.title()}ForCausalLM"], vocab_size=128,
               hidden_size=256, intermediate_size=512, num_hidden_layers=3, num_attention_heads=4,
               num_key_value_heads=2, max_position_embeddings=positions, torch_dtype=dtype, rms_norm_eps=1e-5,
               rope_theta=10000.0, tie_word_embeddings=False)
    if model_type == "mixtral":
        cfg.update(num_local_experts=4, num_experts_per_tok=2)
    return spec_from_config(cfg, name="tiny")


@pytest.mark.parametrize("version,model_type,positions,dtype", list(MEASURED))
def test_buffers_match_transformers(version, model_type, positions, dtype):
    spec = _tiny(model_type, positions, dtype)
    s = tfe.TransformersSettings(prompt_tokens=8, max_new_tokens=1, torch_dtype=dtype, engine_version=version)
    predicted = sum(b for _, b in buffer_bytes(spec, resolve(spec, s)))
    assert predicted == MEASURED[(version, model_type, positions, dtype)] - INV_FREQ


def test_mistral_is_keyed_apart_from_llama():
    """Both are the GGUF architecture "llama"; transformers 4.41.2 builds MistralForCausalLM with the caches and
    LlamaForCausalLM without."""
    mistral, llama = _tiny("mistral", 32768, "bfloat16"), _tiny("llama", 32768, "bfloat16")
    assert mistral.architecture == llama.architecture == "llama"
    s = tfe.TransformersSettings(prompt_tokens=8, max_new_tokens=1, torch_dtype="bfloat16", engine_version="4.41.2")
    assert sum(b for _, b in buffer_bytes(mistral, resolve(mistral, s))) == 25_165_824
    assert buffer_bytes(llama, resolve(llama, s)) == []
