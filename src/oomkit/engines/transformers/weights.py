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
