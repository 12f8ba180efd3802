"""Bytes of a linear layer's weight as Hugging Face checkpoints store it, per quantization format.

`parse_quantization_config` reads config.json's `quantization_config` (or its absence) into a QuantFormat;
`linear_weight_bytes` gives the bytes of every tensor the format stores for one [out, in] linear weight
(the packed weight plus its scales, zero points and index tensors; never the bias). Each layout cites the
code that creates the stored tensors; scales that are one scalar per linear are counted once.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from oomkit.errors import OomkitError

# torch / safetensors dtype names -> bytes per element
_DTYPE_ALIASES = {
    "float32": "float32", "float": "float32", "fp32": "float32", "f32": "float32",
    "float16": "float16", "half": "float16", "fp16": "float16", "f16": "float16",
    "bfloat16": "bfloat16", "bf16": "bfloat16",
    "float64": "float64", "double": "float64", "f64": "float64",
    "float8_e4m3fn": "float8_e4m3fn", "f8_e4m3": "float8_e4m3fn", "fp8": "float8_e4m3fn", "e4m3": "float8_e4m3fn",
    "float8_e4m3fnuz": "float8_e4m3fnuz", "float8_e5m2": "float8_e5m2", "f8_e5m2": "float8_e5m2",
    "float8_e8m0fnu": "float8_e8m0fnu", "f8_e8m0": "float8_e8m0fnu",
    "int8": "int8", "i8": "int8", "uint8": "uint8", "u8": "uint8", "int16": "int16", "i16": "int16",
    "int32": "int32", "i32": "int32", "int64": "int64", "i64": "int64", "bool": "bool",
}
_DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "float64": 8, "float8_e4m3fn": 1, "float8_e4m3fnuz": 1,
                "float8_e5m2": 1, "float8_e8m0fnu": 1, "int8": 1, "uint8": 1, "int16": 2, "int32": 4, "int64": 8,
                "bool": 1}


def normalize_dtype(dtype: str) -> str:
    """"torch.bfloat16", "BF16" (safetensors), "bf16" -> "bfloat16"."""
    key = str(dtype).strip().lower().removeprefix("torch.")
    name = _DTYPE_ALIASES.get(key)
    if name is None:
        raise OomkitError(f"unknown dtype {dtype!r}; valid: {', '.join(sorted(_DTYPE_BYTES))}")
    return name


def dtype_bytes(dtype: str) -> int:
    return _DTYPE_BYTES[normalize_dtype(dtype)]


@dataclass(frozen=True)
class QuantFormat:
    """How a checkpoint stores its linear weights. `name` selects the layout in linear_weight_bytes."""

    name: str  # "bfloat16" (plain), "fp8", "fp8-block", "gptq", "awq", "bnb-nf4", "ct-pack-quantized", ...
    bits: int  # bits per stored weight element, scales not counted
    group_size: int = 0  # input elements per scale; 0: per output channel or per tensor (see strategy)
    dtype: str = "bfloat16"  # torch_dtype: what unquantized tensors (norms, embeddings, skipped modules) use
    unquantized: tuple[str, ...] = ()  # module-name patterns left in `dtype` (lm_head, modules_to_not_convert, ignore)
    strategy: str = ""  # compressed-tensors / fp8: "tensor", "channel", "group", "block"
    block: tuple[int, int] | None = None  # (out, in) block of one scale: fp8 weight_block_size, ct block_structure
    scale_dtype: str = "float32"
    zero_point: bool = False  # asymmetric: zero points stored
    double_quant: bool = False  # bitsandbytes 4-bit: absmax quantized again
    static_input_scale: bool = False  # a calibrated activation scale stored with every linear
    method: str = ""  # quantization_config.quant_method as written
    # ModelOpt MIXED_PRECISION: (module name, its own format) per quantized module; modules not listed stay in dtype
    per_module: tuple[tuple[str, QuantFormat], ...] = ()
    # GPTQ: the ExLlama kernel transformers loads the checkpoint with (gptq_exllama): 0 (use_exllama false), 1 or 2;
    # None where the config names none (GPTQConfig's default then applies); a str: the ValueError GPTQConfig.post_init
    # raises on the config as written
    exllama: int | str | None = None

    @property
    def quantized(self) -> bool:
        return self.method != ""

    @property
    def label(self) -> str:
        if not self.quantized:
            return self.name
        return f"{self.name}-w{self.bits}" + (f"-g{self.group_size}" if self.group_size > 0 else "")


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def linear_weight_bytes(fmt: QuantFormat, out_features: int, in_features: int) -> int:
    """Bytes stored for one nn.Linear weight of shape [out_features, in_features] in this format."""
    o, i, n = out_features, in_features, out_features * in_features
    name = fmt.name
    if not fmt.quantized:
        return n * dtype_bytes(fmt.dtype)
    if name in ("fp8", "modelopt-fp8"):
        # vllm fp8.py:Fp8LinearMethod.create_weights / modelopt.py:ModelOptFp8LinearMethod.create_weights:
        # fp8 weight, one fp32 weight_scale, one fp32 input_scale when activations are static
        return n + 4 + (4 if fmt.static_input_scale else 0)
    if name in ("fp8-block", "modelopt-fp8-pb-wo"):
        # vllm fp8.py:Fp8LinearMethod.create_weights (block_quant): weight_scale_inv fp32 [ceil(o/bo), ceil(i/bi)];
        # a ModelOpt FP8_PB_WO checkpoint stores the same (modelopt.py ModelOptFp8PbWoLinearMethod, 0.14+)
        bo, bi = fmt.block or (128, 128)
        return n + _cdiv(o, bo) * _cdiv(i, bi) * 4
    if name == "fbgemm-fp8":
        # transformers integrations/fbgemm_fp8.py:FbgemmFp8Linear: fp8 weight, fp32 weight_scale [o, 1]
        return n + o * 4
    if name in ("ct-int-quantized", "ct-float-quantized", "ct-naive-quantized"):
        # compressed-tensors quantized_compressors/naive_quantized.py: 8-bit weight + scales (+ int8 zero points)
        n_scales = _ct_scale_count(fmt, o, i)
        return n * fmt.bits // 8 + n_scales * (dtype_bytes(fmt.scale_dtype) + (1 if fmt.zero_point else 0)) + (
            dtype_bytes(fmt.scale_dtype) if fmt.static_input_scale else 0)
    if name == "ct-pack-quantized":
        # compressed-tensors pack_quantized.py: weight_packed int32 [o, ceil(i / (32/bits))], weight_scale
        # [o, groups] in the model dtype, weight_shape int64 [2]; asymmetric: weight_zero_point int32 packed
        # along dim 0 [ceil(o / (32/bits)), groups] (initialize.py:initialize_qparams for the scale shapes)
        pack = 32 // fmt.bits
        groups = _ct_scale_count(fmt, o, i) // o if fmt.strategy in ("group", "channel") else 0
        size = o * _cdiv(i, pack) * 4 + _ct_scale_count(fmt, o, i) * dtype_bytes(fmt.scale_dtype) + 16
        if fmt.zero_point:
            size += _cdiv(o, pack) * groups * 4
        return size
    if name in ("ct-nvfp4-pack-quantized", "modelopt-nvfp4"):
        # compressed-tensors fp4_quantized.py:NVFP4PackedCompressor: weight_packed uint8 [o, i/2], weight_scale
        # fp8 e4m3 [o, i/16], weight_global_scale fp32 [1] (+ input_global_scale fp32 [1] for W4A4).
        # vllm modelopt.py:ModelOptNvFp4LinearMethod.create_weights: the same with weight_scale_2 / input_scale.
        return o * _cdiv(i, 2) + o * _cdiv(i, fmt.group_size) + 4 + (4 if fmt.static_input_scale else 0)
    if name in ("ct-mxfp4-pack-quantized", "mxfp4"):
        # transformers integrations/mxfp4.py (gpt-oss *_blocks uint8 [.., o, i/32, 16] + *_scales uint8 e8m0
        # [.., o, i/32]); compressed-tensors MXFP4PackedCompressor: the same per-32 uint8 exponent
        return o * _cdiv(i, 2) + o * _cdiv(i, fmt.group_size)
    if name == "gptq":
        # vllm gptq.py:GPTQLinearMethod.create_weights: qweight int32 [i*bits/32, o], qzeros int32
        # [groups, o*bits/32], scales fp16 [groups, o], g_idx int32 [i] (AutoGPTQ writes all four)
        groups = _cdiv(i, fmt.group_size) if fmt.group_size > 0 else 1
        return _cdiv(i * fmt.bits, 32) * o * 4 + groups * _cdiv(o * fmt.bits, 32) * 4 + groups * o * 2 + i * 4
    if name == "awq":
        # vllm awq.py:AWQLinearMethod.create_weights: qweight int32 [i, o*bits/32], qzeros int32
        # [groups, o*bits/32], scales fp16 [groups, o]
        groups = _cdiv(i, fmt.group_size) if fmt.group_size > 0 else 1
        return i * _cdiv(o * fmt.bits, 32) * 4 + groups * _cdiv(o * fmt.bits, 32) * 4 + groups * o * 2
    if name in ("bnb-nf4", "bnb-fp4"):
        # bitsandbytes functional.py:quantize_4bit + QuantState.as_dict(packed=True): packed uint8 [(n+1)/2, 1],
        # absmax per 64-block (fp32, or uint8 with double quant), quant_map fp32[16]; double quant adds
        # nested_absmax fp32 per 256 absmax and nested_quant_map fp32[256]. The JSON quant_state blob
        # (~100 bytes of metadata) is not counted.
        blocks = _cdiv(n, fmt.group_size)
        size = _cdiv(n, 2) + 16 * 4
        if fmt.double_quant:
            return size + blocks + _cdiv(blocks, 256) * 4 + 256 * 4
        return size + blocks * 4
    if name == "mlx-affine":
        # mlx python/mlx/nn/layers/quantized.py QuantizedLinear (mx.quantize, mode "affine"): weight uint32
        # [o, i*bits/32], scales and biases [o, i/group] in the model dtype
        return o * _cdiv(i * fmt.bits, 32) * 4 + 2 * o * _cdiv(i, fmt.group_size) * dtype_bytes(fmt.scale_dtype)
    if name in ("mlx-mxfp4", "mlx-mxfp8", "mlx-nvfp4"):
        # mx.quantize's floating-point modes (mlx/backend/cuda/quantized dispatch_quant_types: mxfp4 e2m1 with a
        # ue8m0 scale per 32, mxfp8 e4m3 with a ue8m0 scale per 32, nvfp4 e2m1 with an e4m3 scale per 16): weight
        # uint32 [o, i*bits/32], one uint8 scale per group, no biases
        return o * _cdiv(i * fmt.bits, 32) * 4 + o * _cdiv(i, fmt.group_size)
    if name == "bnb-int8":
        # bitsandbytes nn/modules.py:Linear8bitLt._save_to_state_dict: int8 weight, SCB fp32 [o],
        # weight_format uint8 scalar
        return n + o * 4 + 1
    raise OomkitError(f"no byte layout for quantization format {name!r}")


def _ct_scale_count(fmt: QuantFormat, o: int, i: int) -> int:
    # compressed-tensors quantization/lifecycle/initialize.py:initialize_qparams (expected_shape)
    if fmt.strategy == "tensor":
        return 1
    if fmt.strategy == "channel":
        return o
    if fmt.strategy in ("group", "tensor_group"):
        return o * _cdiv(i, fmt.group_size)
    if fmt.strategy == "block":
        bo, bi = fmt.block or (128, 128)
        return _cdiv(o, bo) * _cdiv(i, bi)
    raise OomkitError(f"unknown compressed-tensors strategy {fmt.strategy!r}")


def _matches(name: str, pattern: str) -> bool:
    # compressed-tensors `ignore` takes "re:" regexes (re.match); ModelOpt exclude_modules and gpt-oss use
    # wildcards; transformers modules_to_not_convert matches whole dotted components.
    if pattern.startswith("re:"):
        return re.match(pattern[3:], name) is not None
    if any(c in pattern for c in "*?["):
        return fnmatch.fnmatchcase(name, pattern) or fnmatch.fnmatchcase(name, pattern + ".*")  # or a child
    return (name == pattern or name.endswith("." + pattern) or name.startswith(pattern + ".")
            or f".{pattern}." in name)


def module_is_quantized(fmt: QuantFormat, module_name: str) -> bool:
    """Whether the linear `module_name` ("model.layers.0.mlp.down_proj") is stored quantized."""
    return format_of(fmt, module_name) is not None


def format_of(fmt: QuantFormat, module_name: str) -> QuantFormat | None:
    """The format the linear `module_name` is stored in; None when it stays in the checkpoint's dtype. A mixed
    checkpoint names its modules as the model class does (a VLM's "model.language_model.layers.N..."); they are
    matched on the decoder's own names ("model.layers.N...", a stacked "mlp.experts" covering every expert)."""
    if not fmt.quantized or any(_matches(module_name, p) for p in fmt.unquantized):
        return None
    if fmt.method == "mxfp4" and ".experts" not in module_name:
        # transformers integrations/mxfp4.py replace_with_mxfp4_linear swaps in Mxfp4GptOssExperts for the experts
        # only: gpt-oss's router (mlp.router, which no GGUF-side name matches) and attention stay in the dtype
        return None
    if not fmt.per_module:
        return fmt
    if fmt.method == "mlx":
        return _mlx_module(fmt, module_name)
    for name, sub in fmt.per_module:
        if module_name == name or module_name.startswith(name + "."):
            return sub
    return None


# ---- quantization_config -> QuantFormat ----

def parse_quantization_config(config: Mapping[str, Any] | None, torch_dtype: str | None) -> QuantFormat:
    """config.json's quantization_config (None: an unquantized checkpoint) and its torch_dtype."""
    if torch_dtype is None or str(torch_dtype) == "auto":
        raise OomkitError("config.json names no torch_dtype; the size of unquantized tensors is unknown")
    dtype = normalize_dtype(torch_dtype)
    if not config:
        return QuantFormat(name=dtype, bits=8 * dtype_bytes(dtype), dtype=dtype)
    method = str(config.get("quant_method", "")).lower().replace("_", "-")
    if not method and "bits" in config:
        # mlx-lm writes its "quantization" block a second time as "quantization_config", with no quant_method
        # (mlx_lm/utils.py quantize_model: `quantized_config["quantization_config"] = quantized_config["quantization"]`,
        # #957, mlx-lm 0.18.1 on; load_model reads "quantization" first), and config.json's quantization_config
        # comes first here: the same block, read as MLX's
        method = "mlx"
    parser = _PARSERS.get(method)
    if parser is None:
        raise OomkitError(f"unknown quant_method {config.get('quant_method')!r}; "
                          f"known: {', '.join(sorted(_PARSERS))}")
    return parser(config, dtype)


def _whole(c: Mapping[str, Any], key: str, default: int, lo: int = 1, hi: int = 1 << 20,
           also: tuple[int, ...] = ()) -> int:
    """An integer field of a quantization_config, checked where it enters: a JSON integer (transformers' config
    classes compare it with integers: GPTQConfig.post_init `bits not in [2, 3, 4, 8]` refuses "4"; a bool is none)
    within [lo, hi] or one of `also` (GPTQ's group_size -1: one group per row); absent or null: `default`."""
    v = c.get(key)
    if v is None:
        return default
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if isinstance(v, bool) or not isinstance(v, int):
        raise OomkitError(f"quantization_config {key} = {v!r}: not a whole number")
    if not (lo <= v <= hi or v in also):
        extra = "".join(f" or {a}" for a in also)
        raise OomkitError(f"quantization_config {key} = {v}: out of range ({lo} to {hi}{extra})")
    return v


def _mapping(v: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(v, Mapping):
        raise OomkitError(f"quantization_config {what} must be a JSON object, not {type(v).__name__}")
    return v


def _block(v: Any, key: str) -> tuple[int, int]:
    """fp8 weight_block_size / compressed-tensors block_structure: [out, in], two positive integers (vllm
    fp8.py Fp8Config: "The quantization block size of weight must have 2 dimensions")."""
    if not isinstance(v, (list, tuple)) or len(v) != 2:
        raise OomkitError(f"quantization_config {key} = {v!r}: give [out, in], two block sizes")
    return (_whole({key: v[0]}, key, 0), _whole({key: v[1]}, key, 0))


def _skip(*lists: Any) -> tuple[str, ...]:
    out: list[str] = []
    for lst in lists:
        if isinstance(lst, str):
            out.append(lst)
        elif lst:
            out.extend(str(x) for x in lst)
    # A VLM wrapper's checkpoint names the decoder's modules under its own prefix ("language_model.model.layers.0",
    # "model.language_model.layers.0", "language_model.lm_head"); the decoder's own names are matched too.
    out += [_decoder_pattern(p) for p in out if not p.startswith("re:")]
    return tuple(dict.fromkeys(out))


def _decoder_pattern(p: str) -> str:
    for prefix, repl in (("language_model.model.", "model."), ("model.language_model.", "model."),
                         ("language_model.", "")):
        if p.startswith(prefix):
            return repl + p[len(prefix):]
    return _nemotron_h_pattern(p)


# Nemotron-H (NemotronHForCausalLM) names every block's module "backbone.layers.N.mixer", whatever the block is;
# its linears are read on the names the decoder's tensors take, as llama.cpp converts them: gguf-py
# tensor_mapping.py maps backbone.embeddings -> token_embd, backbone.layers.N.mixer.{q,k,v,o}_proj ->
# attn_q / attn_k / attn_v / attn_output, mixer.up_proj / down_proj -> ffn_up / ffn_down, mixer.gate ->
# ffn_gate_inp, mixer.shared_experts.{up,down}_proj -> ffn_{up,down}_shexp (mixer.in_proj / out_proj ->
# ssm_in / ssm_out, and Super's mixer.fc{1,2}_latent_proj, keep their names); convert_hf_to_gguf.py
# NemotronHModel.modify_tensors stacks backbone.layers.N.mixer.experts.E.{up,down}_proj into one
# model.layers.N.mlp.experts.{up,down}_proj per layer, so a per-expert name covers the layer's stacked experts,
# as vLLM's ModelOptMixedPrecisionConfig._resolve_quant_algo reads the routed experts' prefix
# "backbone.layers.N.mixer.experts" off the first per-expert key under it (vllm 0.34.0 modelopt.py).
_NEMOTRON_H = (
    (re.compile(r"^backbone\.embeddings(?=\.|$)"), "model.embed_tokens"),
    (re.compile(r"^backbone\.(?=layers\.)"), "model."),
    (re.compile(r"(^|\.)mixer\.experts(?:\.\d+)?(?=\.|$)"), r"\1mlp.experts"),
    (re.compile(r"(^|\.)mixer\.(shared_experts|gate|up_proj|down_proj)(?=\.|$)"), r"\1mlp.\2"),
    (re.compile(r"(^|\.)mixer\.([qkvo]_proj)(?=\.|$)"), r"\1self_attn.\2"),
)


def _nemotron_h_pattern(p: str) -> str:
    """"backbone.layers.1.mixer.experts.7.up_proj" -> "model.layers.1.mlp.experts.up_proj"; other names as given
    (no decoder tensor is named mixer.{q,k,v,o}_proj, mixer.gate, mixer.experts or mixer.shared_experts)."""
    if "backbone." not in p and "mixer." not in p:
        return p
    for rx, repl in _NEMOTRON_H:
        p = rx.sub(repl, p)
    return p


def _fp8(c: Mapping[str, Any], dtype: str) -> QuantFormat:
    # transformers FineGrainedFP8Config / vllm fp8.py:Fp8Config; lm_head is a ParallelLMHead, never fp8
    skip = _skip(["lm_head"], c.get("modules_to_not_convert"), c.get("ignored_layers"))
    static = str(c.get("activation_scheme", "dynamic")) == "static"
    block = c.get("weight_block_size")
    if block:
        return QuantFormat("fp8-block", 8, dtype=dtype, unquantized=skip, strategy="block",
                           block=_block(block, "weight_block_size"), method="fp8")
    return QuantFormat("fp8", 8, dtype=dtype, unquantized=skip, strategy="tensor", static_input_scale=static,
                       method="fp8")


def _fbgemm_fp8(c: Mapping[str, Any], dtype: str) -> QuantFormat:
    return QuantFormat("fbgemm-fp8", 8, dtype=dtype, unquantized=_skip(["lm_head"], c.get("modules_to_not_convert")),
                       strategy="channel", method="fbgemm_fp8")


def _gptq(c: Mapping[str, Any], dtype: str) -> QuantFormat:
    bits = _whole(c, "bits", 4)
    if bits not in (2, 3, 4, 8):
        raise OomkitError(f"GPTQ with {bits} bits is not a GPTQ layout (2, 3, 4 or 8)")
    # GPTQ leaves lm_head alone unless quantization_config.lm_head is true (vllm gptq.py:GPTQConfig)
    skip = _skip([] if c.get("lm_head") else ["lm_head"], c.get("modules_to_not_convert"))
    return QuantFormat("gptq", bits, group_size=_whole(c, "group_size", 128, also=(-1,)), dtype=dtype, unquantized=skip,
                       strategy="group", scale_dtype="float16", zero_point=True, method="gptq", exllama=gptq_exllama(c))


def gptq_exllama(c: Mapping[str, Any]) -> int | str | None:
    """The ExLlama kernel a GPTQ quantization_config selects in transformers (utils/quantization_config.py
    GPTQConfig.post_init, 4.38.2; from_pretrained builds the config with GPTQConfig(**quantization_config)):
    `disable_exllama` (older configs, deprecated) and `use_exllama` both given (not null) is refused;
    disable_exllama alone gives use_exllama = not disable_exllama; use_exllama false: 0, the cuda-old kernel;
    otherwise `exllama_config["version"]`, which must be 1 or 2 (ExllamaVersion), version 1 where exllama_config is
    null. None: the config names none of the three, so GPTQConfig's defaults (use_exllama true, version 1) apply.
    A str: post_init's ValueError, which stops the load."""
    disable, use, ec = c.get("disable_exllama"), c.get("use_exllama"), c.get("exllama_config")
    if disable is None and use is None and ec is None:
        return None
    if disable is not None and use is not None:
        return "Cannot specify both `disable_exllama` and `use_exllama`. Please use just `use_exllama`"
    version = 1
    if ec is not None:
        if not isinstance(ec, Mapping) or "version" not in ec:
            return "`exllama_config` needs to have a `version` key."
        version = ec["version"]
        if isinstance(version, bool) or version not in (1, 2):
            return (f"Only supported versions are in [ExllamaVersion.ONE, ExllamaVersion.TWO] - not recognized "
                    f"version {version}")
        version = int(version)
    on = (not disable) if disable is not None else (use if use is not None else True)
    return version if on else 0


def _awq(c: Mapping[str, Any], dtype: str) -> QuantFormat:
    version = str(c.get("version", "gemm")).lower()
    if version != "gemm":
        raise OomkitError(f"AWQ version {version!r} is not supported (only the GEMM layout)")
    bits = _whole(c, "bits", _whole(c, "w_bit", 4, hi=8), hi=8)
    group = _whole(c, "group_size", _whole(c, "q_group_size", 128, also=(-1,)), also=(-1,))
    return QuantFormat("awq", bits, group_size=group, dtype=dtype,
                       unquantized=_skip(["lm_head"], c.get("modules_to_not_convert")), strategy="group",
                       scale_dtype="float16", zero_point=bool(c.get("zero_point", True)), method="awq")


def _bnb(c: Mapping[str, Any], dtype: str) -> QuantFormat:
    # transformers quantizers/quantizer_bnb_*bit.py keep the output embedding (lm_head) and
    # llm_int8_skip_modules in the model dtype
    skip = _skip(["lm_head"], c.get("llm_int8_skip_modules"), c.get("modules_to_not_convert"))
    if c.get("load_in_4bit"):
        qtype = str(c.get("bnb_4bit_quant_type", "fp4")).lower()
        if qtype not in ("nf4", "fp4"):
            raise OomkitError(f"unknown bnb_4bit_quant_type {qtype!r}; valid: nf4, fp4")
        # bitsandbytes nn/modules.py:Params4bit blocksize=64
        return QuantFormat(f"bnb-{qtype}", 4, group_size=64, dtype=dtype, unquantized=skip,
                           double_quant=bool(c.get("bnb_4bit_use_double_quant", False)), method="bitsandbytes")
    if c.get("load_in_8bit"):
        return QuantFormat("bnb-int8", 8, dtype=dtype, unquantized=skip, strategy="channel", method="bitsandbytes")
    raise OomkitError("bitsandbytes quantization_config sets neither load_in_4bit nor load_in_8bit")


def _mxfp4(c: Mapping[str, Any], dtype: str) -> QuantFormat:
    # transformers quantizers/quantizer_mxfp4.py: gpt-oss lists everything but the experts as not converted
    return QuantFormat("mxfp4", 4, group_size=32, dtype=dtype,
                       unquantized=_skip(["lm_head"], c.get("modules_to_not_convert")), strategy="group",
                       scale_dtype="uint8", method="mxfp4")


def _modelopt(c: Mapping[str, Any], dtype: str) -> QuantFormat:
    # vllm modelopt.py:ModelOptFp8Config / ModelOptNvFp4Config.from_config (flat, or nested under "quantization")
    q = c.get("quantization", c)
    algo = str(q.get("quant_algo", "")).upper()
    skip = _skip(["lm_head"], q.get("exclude_modules"), q.get("ignore"))
    if algo == "FP8":
        return QuantFormat("modelopt-fp8", 8, dtype=dtype, unquantized=skip, strategy="tensor",
                           static_input_scale=True, method="modelopt")
    if algo == "NVFP4":
        return QuantFormat("modelopt-nvfp4", 4, group_size=_whole(q, "group_size", 16), dtype=dtype,
                           unquantized=skip, strategy="tensor_group", scale_dtype="float8_e4m3fn",
                           static_input_scale=True, method="modelopt")
    if algo == "FP8_PB_WO":
        # a whole checkpoint in ModelOpt's 128 x 128 block FP8 (fp8 weight, one fp32 scale a block). vLLM's ModelOpt
        # reads it as its own method ("modelopt", not fp8.py's): modelopt.py ModelOptFp8Config.from_config takes any
        # quant_algo containing "FP8" in 0.6.1-0.7.3 (ModelOptFp8LinearMethod), refuses it in 0.8.0-0.13.x
        # (QUANT_ALGOS ["FP8", "NVFP4"]) and lists it from 0.14.0 (ModelOptFp8PbWoLinearMethod, fixed 128 x 128
        # blocks, _WEIGHT_BLOCK_SIZE, whatever group_size says): engines/vllm/quantization.py check_modelopt_release
        return QuantFormat("modelopt-fp8-pb-wo", 8, dtype=dtype, unquantized=skip, strategy="block",
                           block=(128, 128), method="modelopt")
    if algo == "MIXED_PRECISION":
        # only what quantized_layers lists is quantized, lm_head included when it is listed
        skip = _skip(q.get("exclude_modules"), q.get("ignore"))
        # vllm modelopt.py:ModelOptMixedPrecisionConfig: quantized_layers maps each module to its own quant_algo
        layers = q.get("quantized_layers") or c.get("quantized_layers")
        if not isinstance(layers, Mapping) or not layers:
            raise OomkitError("ModelOpt MIXED_PRECISION config has no quantized_layers")
        per: dict[str, QuantFormat] = {}
        for name, spec in layers.items():
            sub = _modelopt_layer(spec if isinstance(spec, Mapping) else {}, dtype, _whole(q, "group_size", 16))
            # one entry per decoder module: a stacked experts tensor takes its first expert's format, as vLLM's
            # _resolve_quant_algo gives the routed experts the first key under their prefix
            if sub is not None:
                per.setdefault(_decoder_module(str(name)), sub)
        # the longest name first: a module before its parent
        per_module = tuple(sorted(per.items(), key=lambda t: -len(t[0])))
        return QuantFormat("modelopt-mixed", 4, dtype=dtype, unquantized=skip, strategy="mixed",
                           method="modelopt", per_module=per_module)
    raise OomkitError(f"ModelOpt quant_algo {algo or None!r} is not supported; known: FP8, NVFP4, FP8_PB_WO, "
                      "MIXED_PRECISION")


def _decoder_module(name: str) -> str:
    """"model.language_model.layers.3.mlp" (a VLM wrapper's name) -> "model.layers.3.mlp"."""
    return _decoder_pattern(name)


def _modelopt_layer(spec: Mapping[str, Any], dtype: str, group: int) -> QuantFormat | None:
    """One module's format in a MIXED_PRECISION checkpoint (modelopt's per-layer quant_algo names)."""
    algo = str(spec.get("quant_algo", "")).upper()
    if algo in ("", "UNQUANTIZED", "NONE"):
        return None
    if algo == "FP8":
        return QuantFormat("modelopt-fp8", 8, dtype=dtype, strategy="tensor", static_input_scale=True,
                           method="modelopt")
    if algo in ("NVFP4", "W4A16_NVFP4"):
        return QuantFormat("modelopt-nvfp4", 4, group_size=_whole(spec, "group_size", group), dtype=dtype,
                           strategy="tensor_group", scale_dtype="float8_e4m3fn", static_input_scale=algo == "NVFP4",
                           method="modelopt")
    if algo == "FP8_PER_CHANNEL_PER_TOKEN":  # fp8 weight, one fp32 scale per output channel
        return QuantFormat("fbgemm-fp8", 8, dtype=dtype, strategy="channel", method="modelopt")
    if algo == "FP8_PB_WO":  # fp8 weight, one fp32 scale per block
        b = _whole(spec, "group_size", 128)
        return QuantFormat("fp8-block", 8, dtype=dtype, strategy="block", block=(b, b), method="modelopt")
    raise OomkitError(f"ModelOpt per-layer quant_algo {algo!r} is not supported; known: FP8, NVFP4, W4A16_NVFP4, "
                      "FP8_PER_CHANNEL_PER_TOKEN, FP8_PB_WO")


def _compressed_tensors(c: Mapping[str, Any], dtype: str) -> QuantFormat:
    # compressed-tensors config/base.py + quantization/quant_config.py:QuantizationConfig
    sparsity = _mapping(c.get("sparsity_config") or {}, "sparsity_config")
    if sparsity.get("format", "dense") != "dense":
        raise OomkitError(f"compressed-tensors sparsity format {sparsity.get('format')!r} is not supported")
    groups = [g for g in _mapping(c.get("config_groups") or {}, "config_groups").values()
              if _mapping(g, "config_groups entry").get("weights")]
    if not groups and isinstance(c.get("weights"), Mapping):
        # a copy reduced to one scheme at the top level (aiconfigurator's model_configs): one group, every Linear
        groups = [{"weights": c["weights"], "input_activations": c.get("input_activations"), "targets": ["Linear"]}]
    if not groups:
        raise OomkitError("compressed-tensors config has no config_groups with weights")
    schemes = {repr((g.get("weights"), g.get("input_activations"), g.get("format"))) for g in groups}
    if len(schemes) > 1:
        raise OomkitError(f"compressed-tensors config mixes {len(schemes)} weight schemes; not supported")
    g = groups[0]
    w, act = _mapping(g["weights"], "weights"), g.get("input_activations")
    act = _mapping(act, "input_activations") if act else None
    fmt = str(g.get("format") or c.get("format") or "").lower()
    bits, wtype = _whole(w, "num_bits", 8, hi=64), str(w.get("type", "int")).lower()
    strategy = str(w.get("strategy", "tensor")).lower()
    group_size = _whole(w, "group_size", 0, lo=0)
    block = _block(w["block_structure"], "block_structure") if w.get("block_structure") else None
    if strategy == "group" and group_size <= 0:  # compressed-tensors QuantizationArgs: a group strategy needs one
        raise OomkitError(f"compressed-tensors weights: strategy group with group_size {w.get('group_size')!r}")
    symmetric = bool(w.get("symmetric", True))
    # scales take the model dtype unless the args name one (initialize.py:initialize_qparams)
    scale_dtype = normalize_dtype(w["scale_dtype"]) if w.get("scale_dtype") else dtype
    static_act = bool(act) and act.get("dynamic") is False
    skip = _skip(c.get("ignore"))
    common = dict(dtype=dtype, unquantized=skip, strategy=strategy, block=block, method="compressed-tensors")
    if fmt == "nvfp4-pack-quantized":
        return QuantFormat("ct-nvfp4-pack-quantized", 4, group_size=group_size or 16, scale_dtype="float8_e4m3fn",
                           static_input_scale=bool(act), **common)
    if fmt == "mxfp4-pack-quantized":
        return QuantFormat("ct-mxfp4-pack-quantized", 4, group_size=group_size or 32, scale_dtype="uint8", **common)
    if fmt == "pack-quantized":
        if wtype != "int" or not 1 <= bits <= 8:
            raise OomkitError(f"pack-quantized {wtype}{bits} is not a packable layout (int, 1-8 bits)")
        return QuantFormat("ct-pack-quantized", bits, group_size=group_size, scale_dtype=scale_dtype,
                           zero_point=not symmetric, **common)
    if fmt in ("int-quantized", "float-quantized", "naive-quantized"):
        if bits != 8:
            raise OomkitError(f"{fmt} stores 8-bit weights, config says {bits}")
        return QuantFormat(f"ct-{fmt}", 8, group_size=group_size, scale_dtype=scale_dtype,
                           zero_point=not symmetric, static_input_scale=static_act, **common)
    raise OomkitError(f"compressed-tensors format {fmt or None!r} is not supported; known: int-quantized, "
                      "float-quantized, naive-quantized, pack-quantized, nvfp4-pack-quantized, mxfp4-pack-quantized")


# (bits, group size) of mx.quantize's floating-point modes, fixed by the mode (the group_size in config.json is
# the same; mlx/backend/cuda/quantized dispatch_quant_types)
_MLX_FP_MODES = {"mxfp4": (4, 32), "mxfp8": (8, 32), "nvfp4": (4, 16)}


def _mlx(c: Mapping[str, Any], dtype: str) -> QuantFormat:
    # mlx-lm's config.json "quantization" block ({"group_size": 64, "bits": 4[, "mode": ...]}, mlx_lm/utils.py
    # quantize_model); every Linear and Embedding with a whole number of groups is quantized, lm_head included.
    # Beside the block's own settings, a module path may carry its own: {"group_size": 64, "bits": 8[, "mode"]}, or
    # a bool (see _mlx_modules); they go into per_module, which format_of reads for method "mlx" (a module not
    # listed takes the block's settings).
    base = _mlx_one(c, dtype)
    modules = _mlx_modules(c, base, dtype)
    return replace(base, per_module=modules) if modules else base


def _mlx_one(c: Mapping[str, Any], dtype: str) -> QuantFormat:
    mode = str(c.get("mode", "affine")).lower()
    if mode in _MLX_FP_MODES:  # mlx/quantization_mode.h QuantizationMode: Affine, Mxfp4, Mxfp8, Nvfp4
        bits, group = _MLX_FP_MODES[mode]
        return QuantFormat(f"mlx-{mode}", bits, group_size=group, dtype=dtype, strategy="group", scale_dtype="uint8",
                           method="mlx")
    if mode != "affine":
        raise OomkitError(f"MLX quantization mode {mode!r} is not supported; known: affine, mxfp4, mxfp8, nvfp4")
    bits = _whole(c, "bits", 4, hi=64)
    if not 2 <= bits <= 8:
        raise OomkitError(f"MLX quantization with {bits} bits: mlx quantizes to 2-8 bits")
    return QuantFormat("mlx-affine", bits, group_size=_whole(c, "group_size", 64), dtype=dtype, strategy="group",
                       scale_dtype=dtype, zero_point=True, method="mlx")


def _mlx_modules(c: Mapping[str, Any], base: QuantFormat, dtype: str) -> tuple[tuple[str, QuantFormat], ...]:
    """The per-module entries of an MLX "quantization" block, as mlx_lm/utils.py load_model applies them: its
    class_predicate returns `config["quantization"][p]` for a module path listed there (mlx-lm 0.20.3 on, #1132),
    and nn.quantize quantizes with a dict's own group_size / bits / mode (to_quantized's defaults, affine 64 / 4,
    for what it leaves out), with the block's settings for True, and not at all for False. quantize_model writes
    them from a quant_predicate: 0.20.3-0.26.1 every leaf module's answer, True / False / dict (convert.py
    --quant-predicate mixed_3_6 / mixed_2_6, 0.21.5 on); 0.26.2 on (#349) only the dicts, which the models' own
    predicates give (qwen3_moe.py / gpt_oss.py: the router at 8 bits, gemma4_text.py: router.proj at 8 bits).
    A module left in the dtype is an entry of the unquantized format (not `quantized`)."""
    plain = QuantFormat(dtype, 8 * dtype_bytes(dtype), dtype=dtype)
    out = []
    for key, v in c.items():
        if isinstance(v, bool):
            out.append((str(key), base if v else plain))
        elif isinstance(v, Mapping):
            try:
                out.append((str(key), _mlx_one(v, dtype)))
            except OomkitError as e:
                raise OomkitError(f"MLX quantization of {key}: {e}") from None
    return tuple(out)


def _mlx_module(fmt: QuantFormat, module_name: str) -> QuantFormat | None:
    """The format an MLX checkpoint stores `module_name` in: its own entry where the block lists it, the block's
    otherwise. mlx-lm names modules by its Model's tree: a wrapper's prefix ("language_model.model.layers.N..."
    in gemma3.py / gemma4.py), the stacked experts as mlp.switch_mlp (switch_layers.py SwitchGLU); the decoder's
    names here ("model.layers.N.mlp.experts...") are matched on the path's end."""
    tail = "." + module_name
    for key, sub in fmt.per_module:
        path = key.replace(".switch_mlp.", ".experts.")
        if path == module_name or path.endswith(tail):
            return sub if sub.quantized else None
    return fmt


_PARSERS = {"mlx": _mlx, "fp8": _fp8, "fbgemm-fp8": _fbgemm_fp8, "gptq": _gptq, "awq": _awq, "bitsandbytes": _bnb,
            "mxfp4": _mxfp4, "modelopt": _modelopt, "compressed-tensors": _compressed_tensors}


def bits_per_weight(fmt: QuantFormat, out_features: int = 4096, in_features: int = 4096) -> float:
    """Effective stored bits per weight, scales included, for a typical linear."""
    return 8 * linear_weight_bytes(fmt, out_features, in_features) / (out_features * in_features)

