"""Weights: the bytes each tensor takes as mlx-lm holds it (as the checkpoint, or after mlx_lm.convert -q)."""

from __future__ import annotations

from ...model.spec import ModelSpec, TensorSpec
from ...quant.dtypes import float_bytes
from .quantize import quant_row
from .settings import ERAS, MlxSettings, Resolved, parse_version

_NOT_QUANTIZED = ("norm.weight", "ssm_conv1d.weight", "ssm_a", "ssm_d", "ssm_dt.bias", "attn_sinks", "exp_probs_b",
                  ".bias")
# nn.Embedding modules (token, position and per-layer token tables); every other matrix is a Linear
_EMBEDDINGS = ("token_embd.weight", "position_embd.weight")


# Architectures whose mlx-lm Model holds an lm_head Linear of its own that sanitize() fills with the token embedding
# when the checkpoint stores none, and the ERAS key of the release that ties the two instead (settings.ERAS
# "gemma3_tied_head"). mlx_lm.convert (convert.py: fetch_from_hub loads, sanitizes, then `weights =
# dict(tree_flatten(model.parameters()))`, quantize_model, save_weights; read at 0895f8f5, mlx-lm 0.22.3) saves both
# keys, each quantized on its own under -q, so the converted checkpoint loads two tables where the original is tied.
_SANITIZED_HEAD = {"gemma3": "gemma3_tied_head"}

# The stored formats mlx_lm/utils.py load_model makes quantized layers of, which quantize_model then leaves as they
# are: MLX's own ("quantization" in config.json), quant_method "mxfp4" and AutoAWQ / GPTQ (_transform_awq_weights).
_LOADED_QUANTIZED = frozenset({"mlx-affine", "mlx-mxfp4", "mlx-mxfp8", "mlx-nvfp4", "mxfp4", "awq", "gptq"})


# mlx-lm model types whose Model.quant_predicate gives the MoE router {group_size 64, bits 8} under -q (utils.py
# quantize_model: `quant_predicate or getattr(model, "quant_predicate", None)`; models/<type>.py, e.g. qwen3_moe.py
# `path.endswith("mlp.gate")`, gpt_oss.py `router`, gemma4_text.py `router.proj`, qwen3_next.py / qwen3_5.py the
# shared_expert_gate too), each with the first release holding it (`git tag --contains` of the commit adding it,
# read at d78bf58e; the first, qwen3_moe's, PR #349 cbfba0a9, in 0.26.3). Other MoE models (mixtral, deepseek_v3,
# qwen2_moe, glm4_moe, llama4, ...) define none: their router is quantized at --q-bits like any Linear. Keys are
# config.json model types after utils.py MODEL_REMAPPING (minimax_m2 -> minimax).
_ROUTER_8BIT = {"qwen3_moe": (0, 26, 3), "bailing_moe": (0, 26, 4), "gpt_oss": (0, 27, 0), "granitemoe": (0, 27, 1),
                "longcat_flash": (0, 27, 1), "Klear": (0, 28, 0), "granitemoehybrid": (0, 28, 0),
                "qwen3_next": (0, 28, 0), "jamba": (0, 28, 3), "lfm2_moe": (0, 28, 3), "afmoe": (0, 28, 4),
                "bailing_moe_linear": (0, 28, 4), "kimi_linear": (0, 28, 4), "minimax": (0, 28, 4),
                "minimax_m2": (0, 28, 4), "step3p5": (0, 30, 6), "qwen3_5": (0, 30, 7), "qwen3_5_moe": (0, 30, 7),
                "gemma4_text": (0, 31, 2), "gemma4": (0, 31, 2)}
_ROUTERS = ("ffn_gate_inp.weight", "ffn_gate_inp_shexp.weight")


def router_at_8_bits(spec: ModelSpec, version) -> bool:
    """Whether mlx_lm.convert -q of this release keeps the model's MoE router at 8 bits, group 64 (_ROUTER_8BIT)."""
    first = _ROUTER_8BIT.get(spec.hf_model_type)
    return first is not None and tuple(version) >= first


def is_plain_dtype(name: str) -> bool:
    """A float dtype in any spelling (float32, float16, bfloat16)."""
    return float_bytes(name) is not None


def tensor_bytes(spec: ModelSpec, s: MlxSettings, r: Resolved) -> list[tuple[TensorSpec, int]]:
    """Bytes of each weight as mlx-lm holds it.

    q_bits (an mlx_lm.convert -q model): utils.py quantize_model quantizes every module with `to_quantized`
    (Linear, Embedding, SwitchLinear experts) whose input width divides by the group size, mode "affine": packed
    uint32 data of bits/32 per value plus a scale and a bias per group in the model dtype; MoE routers at 8 bits,
    group 64, where the model's quant_predicate says so in that release (_ROUTER_8BIT), at q_bits otherwise. Norms, biases and
    conv weights stay in the dtype. Without q_bits: float checkpoints in their dtype, others as stored.

    q_bits over a quantized checkpoint (mlx-community's gpt-oss "-MXFP4-Q8": openai/gpt-oss-20b's MXFP4 experts, the
    rest at 8 bits): utils.py load_model turns the checkpoint's quantized modules into quantized layers first
    (quant_method "mxfp4": config "quantization" {group_size 32, bits 4, mode mxfp4}, class_predicate `{p}.scales in
    weights`, the experts only), and quantize_model's wrapped_predicate takes only modules that still have
    `to_quantized` (a quantized layer has none): the other tensors are quantized to q_bits (per layer in config
    "quantization", as the config already has one), the ones loaded quantized stay as stored (_LOADED_QUANTIZED).
    The router is a float Linear in every checkpoint mlx-lm loads (gpt-oss lists model.layers.*.mlp.router as not
    converted). FP8 checkpoints are no such case: the models' sanitize() dequantizes them (deepseek_v3.py dequant of
    weight_scale_inv), so -q quantizes every layer of them.

    Before mlx-lm 0.10.0 (ERAS "quantize_embeddings") -q quantized Linear layers only: embeddings and a Linear of 8
    output rows stayed in the dtype (_float_before_0_10).

    A tied model whose mlx-lm Model filled an lm_head of its own in sanitize() (_SANITIZED_HEAD, gemma3 before
    0.26.4) comes out of mlx_lm.convert -q with the head stored as its own quantized tensor, and out of
    mlx_lm.convert --dtype (s.converted_repo) with it stored in the dtype: stored_head adds it."""
    n_trunk = spec.n_trunk_layers
    out = []
    plain = is_plain_dtype(spec.weights.format)
    version = parse_version(s.engine_version)
    linear_only = not ERAS.reached(version, "quantize_embeddings")
    router_8 = router_at_8_bits(spec, version)
    tensors = spec.weights.tensors
    if s.q_bits is not None or s.converted_repo:
        # an mlx_lm.convert output, quantized (-q) or not (--dtype: an mlx-community "-bf16" repo): convert.py saves
        # the sanitized model's parameters either way (read at 0895f8f5, 0.22.3)
        tensors = tensors + stored_head(spec, version)
    for t in tensors:
        if t.layer is not None and t.layer >= n_trunk:
            continue  # MTP / next-n blocks: models' sanitize() drops them (e.g. qwen3_next.py "mtp.")
        loaded_quantized = t.dtype in _LOADED_QUANTIZED and not t.name.endswith("ffn_gate_inp.weight")
        if (s.q_bits is not None and len(t.shape) >= 2 and not t.name.endswith(_NOT_QUANTIZED)
                and not loaded_quantized and not (linear_only and _float_before_0_10(t))):
            in_dim = t.shape[0]
            router = router_8 and t.name.endswith(_ROUTERS)
            bits = 8 if router else s.q_bits
            g = 64 if router else s.q_group_size
            if in_dim % g == 0:
                rows = t.n_elements // in_dim
                out.append((t, rows * quant_row(in_dim, bits, g, r.dtype_bytes)))
                continue
        if plain or is_plain_dtype(t.dtype):
            out.append((t, t.n_elements * r.dtype_bytes))
        else:
            out.append((t, t.nbytes))
    return out


def stored_head(spec: ModelSpec, version) -> tuple[TensorSpec, ...]:
    """The lm_head an mlx_lm.convert of this release writes beside a tied embedding (_SANITIZED_HEAD): a Linear of the
    embedding's shape and dtype, named output.weight; none where the checkpoint lists a head of its own already."""
    era = _SANITIZED_HEAD.get(spec.architecture)
    if era is None or ERAS.reached(version, era):
        return ()
    names = {t.name: t for t in spec.weights.tensors}
    embd = names.get("token_embd.weight")
    if embd is None or "output.weight" in names:
        return ()
    return (TensorSpec("output.weight", embd.shape, embd.dtype, embd.nbytes),)


def _float_before_0_10(t: TensorSpec) -> bool:
    """What nn.QuantizedLinear.quantize_module's linear_class_predicate in utils.py (read in mlx-lm 0.1.0 to 0.9.0) leaves in
    float: every nn.Embedding, and a Linear whose weight.shape[0] (its output rows) is 8, Mixtral's expert gate."""
    return t.name.endswith(_EMBEDDINGS) or t.n_elements // t.shape[0] == 8
