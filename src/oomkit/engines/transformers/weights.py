"""Weights: the bytes each tensor takes once `from_pretrained` has loaded it (dtype cast, bitsandbytes, as stored)."""

from __future__ import annotations

from ...errors import OomkitError
from ...model.hf_config import ST_DENSE_TENSORS
from ...model.spec import ModelSpec, TensorSpec
from ...quant import hf_formats
from .settings import Resolved, TransformersSettings, is_gguf, is_plain_dtype

_NOT_LINEAR = ("norm.weight", "ffn_gate_inp.weight", "ssm_conv1d.weight", "ssm_a", "ssm_d", "ssm_dt.bias",
               "attn_sinks", "exp_probs_b")


def is_bnb_linear(spec: ModelSpec, t: TensorSpec) -> bool:
    """A decoder nn.Linear weight, which load_in_4bit / load_in_8bit turn into a bitsandbytes layer
    (integrations/bitsandbytes.py replace_with_bnb_linear): 2-D, in a trunk layer, not a norm, router or state."""
    return (t.layer is not None and t.layer < spec.n_trunk_layers and len(t.shape) == 2
            and not t.name.endswith(_NOT_LINEAR))


def _bnb_format(s: TransformersSettings, dtype: str):
    cfg = {"quant_method": "bitsandbytes", "load_in_4bit": s.load_in_4bit, "load_in_8bit": s.load_in_8bit,
           "bnb_4bit_quant_type": s.bnb_4bit_quant_type, "bnb_4bit_use_double_quant": s.bnb_4bit_use_double_quant}
    return hf_formats.parse_quantization_config(cfg, dtype)


def tensor_bytes(spec: ModelSpec, s: TransformersSettings, r: Resolved) -> list[tuple[TensorSpec, int]]:
    """Bytes each weight takes once loaded.

    Plain checkpoints: every tensor in the resolved dtype (modeling_utils.py from_pretrained casts to `dtype`).
    Quantized checkpoints: quantized tensors as stored, the rest in the resolved dtype (needs the format's kernels;
    transformers dequantizes some formats when they are missing). load_in_4bit / load_in_8bit
    (integrations/bitsandbytes.py replace_with_bnb_linear): every `nn.Linear` of the decoder becomes a bnb layer
    (bytes: quant/hf_formats.py linear_weight_bytes); lm_head, embeddings, norms, routers and fused 3-D expert
    parameters (not nn.Linear in v5) stay in the dtype. MTP / next-n blocks are not loaded.
    """
    n_trunk = spec.n_trunk_layers
    bnb = _bnb_format(s, r.dtype) if (s.load_in_4bit or s.load_in_8bit) else None
    # a GGUF is dequantized on load, so it counts as a float checkpoint
    plain_fmt = is_gguf(spec) or is_plain_dtype(spec.weights.format)
    if bnb is not None and not plain_fmt:
        raise OomkitError(f"{spec.name} is already quantized ({spec.weights.format}); load_in_4bit/load_in_8bit "
                          "quantize a float checkpoint")
    out = []
    for t in spec.weights.tensors:
        if t.layer is not None and t.layer >= n_trunk:
            continue
        if t.name in ST_DENSE_TENSORS:
            # EmbeddingGemma's sentence-transformers Dense modules live in 2_Dense/ and 3_Dense/ beside the checkpoint:
            # Gemma3TextModel.from_pretrained reads model.safetensors only (models/gemma3/modeling_gemma3.py: no
            # Dense layer); sentence-transformers loads them as models.Dense, not this engine
            continue
        if bnb is not None and is_bnb_linear(spec, t):
            nbytes = hf_formats.linear_weight_bytes(bnb, t.shape[1], t.shape[0])
        elif is_plain_dtype(t.dtype) or plain_fmt:
            nbytes = t.n_elements * r.dtype_bytes
        else:
            nbytes = t.nbytes
        out.append((t, nbytes))
    out += tower_bytes(spec, r)
    out += buffer_bytes(spec, r)
    return out


def placement_bytes(spec: ModelSpec, s: TransformersSettings,
                    weights: list[tuple[TensorSpec, int]]) -> list[tuple[TensorSpec, int]]:
    """The bytes device_map="auto" sizes each weight at, where they differ from what it takes once loaded: a
    bitsandbytes Linear's weight counts numel x quantized_element_size (integrations/accelerate.py
    compute_module_sizes -> quantizers/base.py param_element_size: 0.5 for 4-bit, 1 for 8-bit, quantizer_bnb_4bit.py /
    quantizer_bnb_8bit.py; accelerate's compute_module_sizes with CustomDtype.INT4 / torch.int8 before the quantizer
    classes), without the absmax / SCB statistics it holds once quantized."""
    if not (s.load_in_4bit or s.load_in_8bit):
        return weights
    per = 0.5 if s.load_in_4bit else 1
    return [(t, int(t.n_elements * per) if is_bnb_linear(spec, t) else b) for t, b in weights]


# A multimodal tower's pseudo-tensor name; layout.py places it with the embeddings (the first modules loaded).
TOWER_PREFIX = "mm."


def tower_bytes(spec: ModelSpec, r: Resolved) -> list[tuple[TensorSpec, int]]:
    """The vision encoder and projector of a VLM checkpoint (model/towers.py), in the resolved dtype.

    from_pretrained builds the whole *ForConditionalGeneration model, tower included (models/<vlm>/modeling_*.py:
    vision_tower / vision_model + multi_modal_projector), and casts it to `dtype` like the decoder; quantized
    checkpoints leave it unquantized (their ignore / modules_to_not_convert lists name it). A GGUF has none.
    """
    if is_gguf(spec):
        return []
    return [(TensorSpec(name=f"{TOWER_PREFIX}{t.kind}.{t.family}", shape=(t.params,), dtype=r.dtype,
                        nbytes=t.params * r.dtype_bytes), t.params * r.dtype_bytes) for t in spec.towers]


# GGUF architecture names of the decoders with ALiBi rather than rotary positions (transformers MptAttention,
# BloomAttention, JAISAttention add the alibi bias to the scores; no rotary embedding module)
_ALIBI = frozenset({"mpt", "bloom", "jais"})


def rotary_width(spec: ModelSpec) -> int:
    """Columns of the cos / sin the rotary embedding makes per token: its `dim`, head_dim x partial_rotary_factor
    (modeling_rope_utils.py _compute_default_rope_parameters: `dim = int(head_dim * partial_rotary_factor)`; the
    whole head without a factor), qk_rope_head_dim for MLA (DeepseekV3RotaryEmbedding
    on config.qk_rope_head_dim); 0 with learned absolute positions (GPT-2, StarCoder, OPT, BERT: a position_embd table),
    ALiBi (_ALIBI) or no attention layer."""
    if spec.architecture in _ALIBI or any(t.name == "position_embd.weight" for t in spec.weights.tensors):
        return 0
    widths = [0]
    for layer in spec.trunk_layers:
        a = layer.attention
        if a is None:
            continue
        if a.kv_lora_rank:
            widths.append(a.qk_rope_head_dim)
            continue
        partial = spec.partial_rotary_factor
        widths.append(int(a.head_dim_k * partial) if partial else a.head_dim_k)
    return max(widths)


# Decoders whose attention layers each build a rotary embedding that precomputes cos and sin for every position at
# construction: `_set_cos_sin_cache(seq_len=max_position_embeddings, ..., dtype=torch.get_default_dtype())`, two
# non-persistent buffers (cos_cached, sin_cached; `_cos_cached` / `_sin_cached` in Llama 4.38-4.40) of
# max_position_embeddings x the rotary dim in the dtype from_pretrained initialises the model in. One such module per
# attention layer (LlamaAttention._init_rope, MistralAttention / MixtralAttention / Qwen2Attention / Qwen2MoeAttention
# / Starcoder2Attention.__init__, PhiAttention._init_rope), so each layer holds the buffers on its device beside its
# weights. The HF model_type (the class transformers builds: MistralForCausalLM is not LlamaForCausalLM, though both
# are the GGUF architecture "llama" here) -> the releases that have them (first, first without), read in the wheels
# 4.36.2, 4.37.2, 4.38.2, 4.39.0, 4.40.2, 4.41.2, 4.42.4, 4.43.4, 4.44.2, 4.45.2, 4.46.3, 4.47.1, 4.48.3: models/llama
# modeling_llama.py has them to 4.40 (4.41 computes cos / sin per forward), models/mistral to 4.41, models/mixtral
# to 4.47, models/qwen2, qwen2_moe (from 4.40), starcoder2 (from 4.39) and phi to 4.44. Gemma, Cohere and Phi-3
# compute cos / sin in every forward in all of these.
ROTARY_CACHE_RELEASES = {
    "llama": ((4, 36, 0), (4, 41, 0)),
    "mistral": ((4, 36, 0), (4, 42, 0)),
    "mixtral": ((4, 36, 0), (4, 48, 0)),
    "qwen2": ((4, 37, 0), (4, 45, 0)),
    "qwen2_moe": ((4, 40, 0), (4, 45, 0)),
    "starcoder2": ((4, 39, 0), (4, 45, 0)),
    "phi": ((4, 36, 0), (4, 45, 0)),
}
# The base model's (max_position_embeddings, max_position_embeddings) bool causal_mask buffer, registered in
# LlamaModel.__init__ and GemmaModel.__init__ in 4.38 and in CohereModel.__init__ in 4.39
# (`self.register_buffer("causal_mask", torch.triu(causal_mask, diagonal=1), persistent=False)`; MistralModel has
# none); later releases build the mask per forward.
CAUSAL_MASK_BUFFER_RELEASES = {
    "llama": ((4, 38, 0), (4, 39, 0)),
    "gemma": ((4, 38, 0), (4, 39, 0)),
    "cohere": ((4, 39, 0), (4, 40, 0)),
}
# The model_type of a spec read without a config.json (a GGUF), from its architecture name: transformers'
# modeling_gguf_pytorch_utils.py load_gguf_checkpoint takes general.architecture as the model_type (4.41.2); a
# "llama" with routed experts is a converted Mixtral (convert_hf_to_gguf.py writes both as llama)
_MODEL_TYPE_BY_ARCH = {"qwen2moe": "qwen2_moe", "phi2": "phi", "command-r": "cohere"}
BUFFER_SUFFIX = ".rope_cache"  # a layer's rotary buffers: the pseudo-tensor blk.N.rope_cache


def _max_positions(spec: ModelSpec) -> int:
    """config.max_position_embeddings (the length every cache buffer is built at)."""
    return dict(spec.config_lengths).get("max_position_embeddings") or spec.n_ctx_train or 0


def _model_type(spec: ModelSpec) -> str:
    """The HF model_type of the class transformers builds for the spec (config.json's; from the GGUF architecture
    name where none was read)."""
    if spec.hf_model_type:
        return spec.hf_model_type
    if spec.architecture == "llama" and any(layer.ffn.is_moe for layer in spec.trunk_layers):
        return "mixtral"
    return _MODEL_TYPE_BY_ARCH.get(spec.architecture, spec.architecture)


def buffer_bytes(spec: ModelSpec, r: Resolved) -> list[tuple[TensorSpec, int]]:
    """The non-persistent buffers from_pretrained builds beside the weights and moves to the device with their module
    (accelerate's compute_module_sizes counts them in each module's size; get_memory_footprint in the model's): the
    per-layer rotary cos / sin caches (ROTARY_CACHE_RELEASES) and the base model's causal-mask buffer
    (CAUSAL_MASK_BUFFER_RELEASES). The float32 inv_freq (rotary dim / 2 x 4 bytes a layer) is left out."""
    positions = _max_positions(spec)
    out: list[tuple[TensorSpec, int]] = []
    if not positions:
        return out
    model_type = _model_type(spec)
    span = ROTARY_CACHE_RELEASES.get(model_type)
    width = rotary_width(spec)
    if span and span[0] <= r.version < span[1] and width:
        per_layer = 2 * positions * width * r.dtype_bytes
        for layer in spec.trunk_layers:
            if layer.attention is None:
                continue
            out.append((TensorSpec(name=f"blk.{layer.index}{BUFFER_SUFFIX}", shape=(2, positions, width),
                                   dtype=r.dtype, nbytes=per_layer, layer=layer.index), per_layer))
    span = CAUSAL_MASK_BUFFER_RELEASES.get(model_type)
    if span and span[0] <= r.version < span[1]:
        out.append((TensorSpec(name="token_embd.causal_mask_buffer", shape=(positions, positions), dtype="bool",
                               nbytes=positions * positions), positions * positions))
    return out


# ---------------------------------------------------------------------------------------------------------
# GPTQ's ExLlama kernels: scratch allocated once per device after loading

# qlinear_exllamav2.py QuantLinear.scratch_space_fixed(max_input_len=2048, max_batch_size=8) (auto-gptq 0.7.1)
EXLLAMA_V2_MAX_INPUT_LEN = 2048
EXLLAMA_V2_MAX_BATCH = 8
# transformers loads GPTQ through optimum and auto-gptq before 5.0 (quantizers/quantizer_gptq.py, 4.38.2:
# GPTQQuantizer.from_dict(...).convert_model / post_init_model); 5.0 loads it through gptqmodel only, whose kernels'
# scratch is not modelled
_AUTO_GPTQ_BEFORE = (5, 0, 0)


def _gptq_linears(spec: ModelSpec) -> list[tuple[int, int, int]]:
    """(layer, in_features, out_features) of every 4-bit GPTQ linear of the decoder (the ExLlama kernels take 4 bits
    only: auto-gptq utils/import_utils.py dynamically_import_QuantLinear); the bits read back from the stored layout
    (qweight in*bits/8 x out bytes plus scales, zeros and g_idx: under one bit a weight more)."""
    out = []
    for t in spec.weights.tensors:
        if (t.dtype == "gptq" and len(t.shape) == 2 and t.layer is not None and t.layer < spec.n_trunk_layers
                and 8 * t.nbytes // t.n_elements == 4):
            out.append((t.layer, t.shape[0], t.shape[1]))
    return out


def exllama_version(spec: ModelSpec, s: TransformersSettings) -> tuple[int, str]:
    """(the ExLlama kernel a GPTQ checkpoint loads with: 0 none, 1 or 2; where that came from). from_pretrained
    (4.38.2 modeling_utils.py, quantizers/auto.py AutoHfQuantizer.merge_quantization_configs) builds GPTQConfig from
    the checkpoint's quantization_config, whose post_init refuses a bad one (quant/hf_formats.py gptq_exllama), then
    overwrites its loading attributes (use_exllama, exllama_config, disable_exllama) with those of a GPTQConfig
    passed to from_pretrained (TransformersSettings.exllama_version); where neither names one, post_init's default:
    use_exllama true, exllama_config {"version": 1}."""
    named = spec.weights.gptq_exllama
    if isinstance(named, str):
        raise OomkitError(f"{spec.name}: transformers refuses the checkpoint's GPTQ quantization_config "
                          f"(GPTQConfig.post_init): {named}")
    if s.exllama_version is not None:
        return s.exllama_version, "--exllama-version"
    if named is not None:
        return named, "the checkpoint's quantization_config"
    return 1, "transformers' default: the checkpoint's quantization_config names none; --exllama-version sets it"


def exllama_scratch(spec: ModelSpec, s: TransformersSettings, r: Resolved,
                    layer_device: tuple[int, ...]) -> dict[int, int]:
    """Bytes the ExLlama kernels of a 4-bit GPTQ checkpoint allocate on each GPU once the model is loaded, beside the
    weights and for good: optimum gptq/quantizer.py GPTQQuantizer.post_init_model (1.17.1) calls auto-gptq's
    modeling/_utils.py autogptq_post_init (0.7.1), which sizes one set of buffers per device from the QuantLinear
    modules on it:

    - version 1 (qlinear_exllama.py): `temp_dq`, float16 of the largest `qweight.numel() * 8` (in x out), and
      `temp_state`, float16 max_input_len x max_inner_outer_dim: 1 x 1 without act-order (desc_act false; act-order
      checkpoints, 2048 x the widest in / out, are not read here);
    - version 2 (qlinear_exllamav2.py): one `ExLlamaV2DeviceTensors` scratch of the largest
      `scratch_space_fixed()`, `temp_dq_size()` (in x out x 2 + 128) plus `temp_fwd_size(2048, 8)` (out x 2048 x 8
      x 4 + 128), allocated (`torch.empty(scratch_bytes // 2, dtype=torch.half)`) when post_init takes the first
      slice.

    Which version: exllama_version; use_exllama=False (0) loads the cuda-old kernel, which keeps none."""
    if r.version >= _AUTO_GPTQ_BEFORE:
        return {}
    version, _ = exllama_version(spec, s)
    if not version:
        return {}
    out: dict[int, int] = {}
    for layer, n_in, n_out in _gptq_linears(spec):
        d = layer_device[layer]
        if d < 0:
            continue  # on the CPU optimum refuses the ExLlama kernels (post_init_model: "Found modules on cpu/disk")
        if version == 1:
            b = n_in * n_out * 2 + 2  # temp_dq and the 1 x 1 temp_state
        else:
            padded = n_out + (-n_out % 32)
            b = (n_in * padded * 2 + 128) + (padded * EXLLAMA_V2_MAX_INPUT_LEN * EXLLAMA_V2_MAX_BATCH * 4 + 128)
        out[d] = max(out.get(d, 0), b)
    return out
