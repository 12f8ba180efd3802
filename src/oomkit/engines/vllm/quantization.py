"""`--quantization` as vLLM checks it against the checkpoint (config/model.py ModelConfig._verify_quantization and
model_loader/weight_utils.py get_quant_config, 0.6-0.27.1): which names exist, which a plain 16-bit checkpoint
can be quantized to while loading, and which contradict the checkpoint's own quantization_config."""

from __future__ import annotations

from ...errors import OomkitError
from ...model.spec import LayerKind, ModelSpec
from ...quant.dtypes import FLOAT_BYTES
from ..versions import Version

# Every name some release accepts (model_executor/layers/quantization/__init__.py QuantizationMethods, 0.5-0.27.1),
# lowered as ModelConfig's validator lowers it; a name no release knows is vLLM's "Unknown quantization method"
KNOWN = frozenset({
    "aqlm", "awq", "auto_awq", "awq_marlin", "awq_triton", "auto-round", "bitblas", "bitsandbytes", "compressed-tensors",
    "cpu_awq", "deepseek_v4_fp8", "deepspeedfp", "experts_int8", "fbgemm_fp8", "fp8", "fp8_per_block",
    "fp8_per_channel", "fp8_per_tensor", "fp_quant", "gguf", "gpt_oss_mxfp4", "gptq", "auto_gptq", "gptq_bitblas",
    "gptq_marlin", "gptq_marlin_24", "hqq", "humming", "inc", "int8_per_channel_weight_only", "ipex", "marlin",
    "modelopt", "modelopt_fp4", "modelopt_mixed", "modelopt_mxfp8", "moe_wna16", "mxfp4", "mxfp8", "neuron_quant",
    "nvfp4_per_token", "online", "petit_nvfp4", "ptpc_fp8", "qqq", "quark", "rtn", "squeezellm", "torchao",
    "tpu_int8",
})
# The --quantization choices of the early releases, as their parsers list them: engine/arg_utils.py
# EngineArgs.add_cli_args `choices` (a literal list through 0.3.3, [*QUANTIZATION_METHODS, None] from 0.4.1) and
# model_executor/layers/quantization/__init__.py QUANTIZATION_METHODS (model_executor/quantization_utils/
# __init__.py _QUANTIZATION_REGISTRY in 0.2.0-0.2.1), read in the sdists of 0.2.0-0.2.7, 0.3.0, 0.3.1, 0.3.3,
# 0.4.1-0.4.3 and 0.5.0-0.5.5 (0.3.2 and 0.4.0 have no sdist: placed with the release read before them). Each
# entry holds from its release to the next; from OLD_METHODS_END the registry is KNOWN's (0.5.5's list is a subset).
# "sparseml" is 0.4.3's name for what 0.5.0 calls "compressed-tensors".
OLD_METHODS: tuple[tuple[Version, tuple[str, ...]], ...] = (
    ((0, 2, 0), ("awq",)),
    ((0, 2, 2), ("awq", "squeezellm")),
    ((0, 2, 6), ("awq", "gptq", "squeezellm")),
    ((0, 3, 3), ("awq", "gptq", "squeezellm", "marlin")),
    ((0, 4, 1), ("aqlm", "awq", "fp8", "gptq", "squeezellm", "marlin")),
    ((0, 4, 2), ("aqlm", "awq", "fp8", "gptq", "squeezellm", "gptq_marlin", "marlin")),
    ((0, 4, 3), ("aqlm", "awq", "deepspeedfp", "fp8", "marlin", "gptq_marlin_24", "gptq_marlin", "gptq",
                 "squeezellm", "sparseml")),
    ((0, 5, 0), ("aqlm", "awq", "deepspeedfp", "fp8", "marlin", "gptq_marlin_24", "gptq_marlin", "gptq",
                 "squeezellm", "compressed-tensors", "bitsandbytes")),
    ((0, 5, 3), ("aqlm", "awq", "deepspeedfp", "fp8", "fbgemm_fp8", "marlin", "gptq_marlin_24", "gptq_marlin",
                 "awq_marlin", "gptq", "squeezellm", "compressed-tensors", "bitsandbytes")),
    ((0, 5, 4), ("aqlm", "awq", "deepspeedfp", "fp8", "fbgemm_fp8", "marlin", "gptq_marlin_24", "gptq_marlin",
                 "awq_marlin", "gptq", "squeezellm", "compressed-tensors", "bitsandbytes", "qqq")),
    ((0, 5, 5), ("aqlm", "awq", "deepspeedfp", "tpu_int8", "fp8", "fbgemm_fp8", "marlin", "gguf", "gptq_marlin_24",
                 "gptq_marlin", "awq_marlin", "gptq", "squeezellm", "compressed-tensors", "bitsandbytes", "qqq",
                 "experts_int8")),
)
OLD_METHODS_END: Version = (0, 5, 6)
# fp8.py Fp8Config.get_min_capability, checked by model_loader/loader.py _get_quantization_config ("The quantization
# method fp8 is not supported for the current GPU. Minimum capability: 89. Current capability: 86."): 90 in 0.4.1
# (torch._scaled_mm), 89 in 0.4.2-0.5.0, 80 from 0.5.1 (Fp8LinearMethod use_marlin = capability < 89:
# weight-only FP8 through the Marlin kernel on Ampere)
FP8_MIN_CAPABILITY: tuple[tuple[Version, int], ...] = (((0, 4, 1), 90), ((0, 4, 2), 89), ((0, 5, 1), 80))
# bitsandbytes in 0.5.0-0.5.5 (engine/arg_utils.py create_engine_config: "BitsAndBytes quantization and QLoRA
# adapter only support 'bitsandbytes' load format"; config.py ModelConfig.verify_with_parallel_config:
# "BitAndBytes quantization with TP or PP is not supported yet."): it needs --load-format bitsandbytes beside it,
# which oomkit does not write, and one GPU
BNB_LOAD_FORMAT: tuple[Version, Version] = ((0, 5, 0), OLD_METHODS_END)


def methods_at(version: Version) -> tuple[str, ...] | None:
    """The --quantization choices of the parser of `version` (OLD_METHODS); None from OLD_METHODS_END (KNOWN)."""
    if version >= OLD_METHODS_END:
        return None
    listed = [names for first, names in OLD_METHODS if version >= first]
    return listed[-1] if listed else OLD_METHODS[0][1]


def offered_at(method: str, version: Version) -> bool:
    """Whether the planner may write --quantization `method` for the release: its parser lists it, and (for
    bitsandbytes) no --load-format bitsandbytes is needed beside it (BNB_LOAD_FORMAT)."""
    names = methods_at(version)
    if names is not None and method not in names:
        return False
    return not (method == "bitsandbytes" and BNB_LOAD_FORMAT[0] <= version < BNB_LOAD_FORMAT[1])


def check_release(quantization: str | None, version: Version, cc: tuple[int, int] | None, tp: int, pp: int,
                  program: str) -> None:
    """The early releases' refusals of --quantization: the parser's choices (OLD_METHODS), fp8 below its minimum
    compute capability (FP8_MIN_CAPABILITY, 0.4.1-0.5.5 read), bitsandbytes with TP or PP (0.5.0-0.5.5)."""
    names = methods_at(version)
    if not quantization or names is None:
        return
    if quantization not in names:  # argparse matches the value as typed (no lowering before 0.6)
        listed = ", ".join([repr(n) for n in names] + ["None"])
        raise OomkitError(f"{program}: error: argument --quantization/-q: invalid choice: {quantization!r} "
                          f"(choose from {listed})")
    if quantization == "fp8" and cc is not None:
        need = [c for first, c in FP8_MIN_CAPABILITY if version >= first][-1]
        have = cc[0] * 10 + cc[1]
        if have < need:
            raise OomkitError(f"ValueError: The quantization method fp8 is not supported for the current GPU. "
                              f"Minimum capability: {need}. Current capability: {have}.")
    if quantization == "bitsandbytes" and (tp > 1 or pp > 1):
        raise OomkitError("ValueError: BitAndBytes quantization with TP or PP is not supported yet.")


# Online methods that store each linear weight in one byte (fp8.py Fp8OnlineLinearMethod, ptpc_fp8.py,
# fbgemm_fp8.py; 0.27's online shorthands fp8_per_* and int8_per_channel_weight_only); their scales are per tensor,
# row or 128 x 128 block (under 0.1 % of the weight)
ONE_BYTE_ONLINE = frozenset({"fp8", "ptpc_fp8", "fbgemm_fp8", "fp8_per_tensor", "fp8_per_block", "fp8_per_channel",
                             "int8_per_channel_weight_only"})
# Methods whose config comes from the checkpoint: without a quantization_config, get_quant_config looks for their
# files (get_config_filenames: quantize_config.json, quant_config.json, hf_quant_config.json,
# quantization_config.json) and raises "Cannot find the config file for <method>"
FROM_CHECKPOINT = frozenset({"aqlm", "awq", "auto_awq", "awq_marlin", "awq_triton", "bitblas", "gptq", "auto_gptq",
                             "gptq_bitblas", "gptq_marlin", "gptq_marlin_24", "marlin", "modelopt", "modelopt_fp4",
                             "modelopt_mixed", "modelopt_mxfp8", "moe_wna16", "inc", "qqq", "squeezellm", "gguf"})
# Methods that certainly read another format than the checkpoint's (no override_quantization_method maps an AWQ
# checkpoint to a GPTQ kernel, nor either to fp8, bitsandbytes or GGUF): vLLM's mismatch error. Kernels that do
# override (awq -> awq_marlin, gptq -> gptq_marlin, both -> moe_wna16, inc, humming) are accepted.
_CLASH = {
    "awq": ONE_BYTE_ONLINE | {"bitsandbytes", "gguf", "gptq", "auto_gptq", "gptq_marlin", "mxfp4", "modelopt_fp4"},
    "gptq": ONE_BYTE_ONLINE | {"bitsandbytes", "gguf", "awq", "auto_awq", "awq_marlin", "mxfp4", "modelopt_fp4"},
    "bitsandbytes": ONE_BYTE_ONLINE | {"awq", "auto_awq", "awq_marlin", "gptq", "auto_gptq", "gptq_marlin", "gguf"},
}


def checkpoint_method(spec: ModelSpec) -> str | None:
    """The checkpoint's quant_method family by oomkit's weight format name; None for a plain float checkpoint or a
    format outside the families checked here."""
    fmt = spec.weights.format.lower()
    if fmt in FLOAT_BYTES:
        return None
    for family in ("awq", "gptq"):
        if fmt.startswith(family):
            return family
    return "bitsandbytes" if fmt.startswith("bnb-") else "other"


# ModelConfig.use_mla (config.py; config/model.py from 0.11), read in the 0.7.1-0.8.3, 0.8.5, 0.9.2, 0.10.1,
# 0.11.0, 0.11.2, 0.12.0, 0.13.0, 0.20.0, 0.27.0 and 0.34.0 sdists: 0.7.1 and 0.7.2 turn MLA off ("MLA is not supported
# with %s quantization. Disabling MLA.") when self.quantization (the --quantization name, else the checkpoint's
# quant_method as _verify_quantization sets it) is anything but "fp8" and "compressed-tensors", and for a
# compressed-tensors checkpoint unless every config group's weights and input_activations have type "fp8", which
# compressed-tensors never writes (QuantizationArgs.type is "int" or "float"; vllm#12680, 0.7.1: "compressed-tensors
# MLA support requires fp8 activations and weights in group 'group_0', but got activations type 'float' and weights
# type 'float'"): every compressed-tensors checkpoint, FP8 ones too, is cached per head. The test is on the method's
# name, not on how the weights are stored: a ModelOpt checkpoint is "modelopt" whatever its quant_algo (0.7.1-0.7.2
# modelopt.py ModelOptFp8Config takes any quant_algo containing "FP8", FP8_PB_WO's 128 x 128 blocks too), so its MLA
# is off where fp8.py's block FP8 (DeepSeek's own checkpoints) keeps it. 0.7.3 drops that check. VLLM_MLA_DISABLE=1
# (envs.py bool(int(...))) turns it off in every release read.
MLA_QUANT_CHECK = ((0, 7, 1), (0, 7, 3))
# The methods 0.7.1-0.7.2 let keep MLA (compressed-tensors only with "fp8" group types, which it never writes: off)
_MLA_QUANT_METHODS = frozenset({"fp8"})
# oomkit's top-level weight format (quant/hf_formats.py QuantFormat.name) -> the quant_method vLLM reads from that
# checkpoint's quantization_config; a name not listed here or under _METHOD_PREFIXES is its own method's
_FORMAT_METHOD = {"fp8": "fp8", "fp8-block": "fp8", "fbgemm-fp8": "fbgemm_fp8", "mxfp4": "mxfp4"}
# read from a checkpoint's own safetensors headers (model/safetensors_weights.py): "safetensors <the dtype most bytes
# are in>", a float one for a checkpoint with no quantization_config (quantized ones are mostly I32, U8 or F8 bytes)
_SAFETENSORS_FLOAT = frozenset({"safetensors bf16", "safetensors f16", "safetensors f32"})
_METHOD_PREFIXES = (("modelopt", "modelopt"), ("ct-", "compressed-tensors"), ("awq", "awq"), ("gptq", "gptq"),
                    ("bnb-", "bitsandbytes"), ("mlx", "mlx"))


def checkpoint_quantization(spec: ModelSpec) -> str | None:
    """The quantization name vLLM's _verify_quantization takes from the checkpoint (its quantization_config's
    quant_method) by oomkit's weight format; None for a plain float checkpoint. "fp8-block" is fp8.py's own block FP8
    (DeepSeek's, Qwen's): a ModelOpt checkpoint's format is "modelopt-*" whatever its per-module layouts are."""
    fmt = spec.weights.format.lower()
    if fmt in FLOAT_BYTES or fmt in _SAFETENSORS_FLOAT:
        return None
    if fmt in _FORMAT_METHOD:
        return _FORMAT_METHOD[fmt]
    return next((method for prefix, method in _METHOD_PREFIXES if fmt.startswith(prefix)), fmt)


def mla_latent_kept(spec: ModelSpec, quantization: str | None, mla_disable: bool, version: Version) -> bool:
    """Whether vLLM caches the MLA latent (ModelConfig.use_mla), from 0.7.1 on; where it does not, DeepseekV2Attention
    caches every head's K and V at qk_nope + qk_rope (kv.py)."""
    if version < MLA_QUANT_CHECK[0]:
        return True
    latent = [la.attention for la in spec.trunk_layers if la.kind is LayerKind.LATENT and la.attention is not None]
    if mla_disable and latent:
        if any(a.index_head_dim for a in latent):
            # DeepseekV2Attention builds no indexer: the sparse-MLA model's cache without it is not sized here
            raise OomkitError(f"VLLM_MLA_DISABLE=1 with {spec.name}'s sparse MLA (its indexer) is not modelled; "
                              "leave it unset")
        return False
    if version >= MLA_QUANT_CHECK[1]:
        return True
    # self.quantization: --quantization as given (lowered), else the checkpoint's method
    method = (quantization or "").lower() or checkpoint_quantization(spec)
    return method is None or method in _MLA_QUANT_METHODS


def load_layout(quantization: str | None, plain: bool) -> str | None:
    """The layout a 16-bit (`plain`) checkpoint's linear weights take when --quantization converts them while
    loading: "one byte" (ONE_BYTE_ONLINE), "nf4" (in-flight bitsandbytes: get_quant_config's "Inflight BNB
    quantization"), else None (loaded as stored)."""
    q = (quantization or "").lower()
    if not plain:
        return None
    if q in ONE_BYTE_ONLINE:
        return "one byte"
    return "nf4" if q == "bitsandbytes" else None


# Methods an out-of-tree platform plugin registers (register_quantization_config); upstream vLLM alone refuses them:
# vllm-ascend's "ascend" (vllm_ascend/utils.py ASCEND_QUANTIZATION_METHOD, registered by its ModelSlim config class)
PLATFORM_PLUGIN_METHODS = {"ascend": "vllm-ascend's quantization (the Huawei Ascend NPU plugin, ModelSlim checkpoints)"}


# The weight widths an AWQ checkpoint loads with: awq.py AWQConfig.__init__ takes 4 bits only (0.2-0.23: "Currently,
# only 4-bit weight quantization is supported for AWQ, but got {bits} bits."; auto_awq.py AutoAWQConfig from 0.24,
# TYPE_MAP {4}: "Unsupported num_bits = {bits}. Supported: 4."); awq_marlin.py AWQMarlinConfig.TYPE_MAP {4, 8}
# (0.5.3-0.11.2 read; {4} from 0.12.0: check_awq_bits_release), whose override_quantization_method takes the
# checkpoint only where is_awq_marlin_compatible finds its bits there: any other width stays with AWQConfig and is
# refused in every release.
_AWQ_BITS_SOME_KERNEL = (4, 8)
_AWQ_GROUPS = (32, 64, 128, 256, -1)  # the group sizes AutoAWQ writes (q_group_size), -1 one group per row


def awq_bits(spec: ModelSpec) -> int | None:
    """The weight width of an AWQ checkpoint, read back from the stored bytes of its first quantized linear (quant/
    hf_formats.linear_weight_bytes of the awq layout: qweight, qzeros, scales); None where no width (1-8) and group
    size fits those bytes alone, or for another format."""
    from ...quant import hf_formats  # lazy: only an AWQ checkpoint needs the format tables

    t = next((t for t in spec.weights.tensors if t.dtype == "awq" and len(t.shape) == 2), None)
    if t is None:
        return None
    n_in, n_out = t.shape
    fits = {bits for bits in range(1, 9) for group in _AWQ_GROUPS
            if hf_formats.linear_weight_bytes(hf_formats.QuantFormat("awq", bits, group_size=group, method="awq"), n_out, n_in)
            == t.nbytes}
    return fits.pop() if len(fits) == 1 else None


def check_awq_bits(spec: ModelSpec) -> None:
    """vLLM's refusal of an AWQ checkpoint whose weights no AWQ kernel takes (3-bit, ...), whatever --quantization
    names (awq_marlin takes 4 or 8 bits, moe_wna16.py is_moe_wna16_compatible AWQ at 4 only, AWQConfig 4)."""
    if checkpoint_method(spec) != "awq" or (bits := awq_bits(spec)) is None or bits in _AWQ_BITS_SOME_KERNEL:
        return
    raise OomkitError(f"vllm serve: ValueError: Currently, only 4-bit weight quantization is supported for AWQ, but got "
                      f"{bits} bits. ({spec.name} is {bits}-bit AWQ; vLLM 0.24 and later: Unsupported num_bits = "
                      f"{bits}. Supported: 4.)")


def check(spec: ModelSpec, quantization: str | None) -> list[str]:
    """Warnings on --quantization; raises OomkitError with vLLM's own error where it refuses to start."""
    check_awq_bits(spec)
    if not quantization:
        return []
    q = quantization.lower()
    if q in PLATFORM_PLUGIN_METHODS:
        raise OomkitError(f"--quantization {quantization} is {PLATFORM_PLUGIN_METHODS[q]}: oomkit models vLLM on "
                          "NVIDIA and AMD GPUs, not that plugin or its device")
    if q not in KNOWN:
        raise OomkitError(f"vllm serve: ValueError: Unknown quantization method: {quantization}. Must be one of "
                          "vLLM's methods (awq, gptq, fp8, bitsandbytes, compressed-tensors, modelopt, gguf, mxfp4, "
                          "experts_int8, ...)")
    method = checkpoint_method(spec)
    if method is None:  # a 16-bit checkpoint: only methods that quantize while loading
        if q in FROM_CHECKPOINT:
            raise OomkitError(f"vllm serve: ValueError: Cannot find the config file for {q}: {spec.name} is a "
                              f"{spec.weights.format} checkpoint with no quantization_config; load a checkpoint "
                              f"quantized with {q} (its own repo) or drop --quantization")
        if load_layout(q, plain=True) is not None:
            return []
        return [f"--quantization {q} quantizes this {spec.weights.format} checkpoint while loading: oomkit does "
                "not model that method's layout, so the weights are counted as published (an upper bound)"]
    if method in _CLASH and q in _CLASH[method]:
        raise OomkitError("vllm serve: ValueError: Quantization method specified in the model config "
                          f"({method}) does not match the quantization method specified in the `quantization` "
                          f"argument ({q}).")
    return []


# --- block-quantized FP8 under tensor parallelism -------------------------------------------------------------------
# Fp8Config with weight_block_size [block_n, block_k] (DeepSeek-V3, Qwen3-*-FP8, MiniMax-M2 ...) checks each rank's
# slice of every linear against the block while building the layers, and raises before any weight is read:
# - FusedMoE (fp8.py Fp8MoEMethod.create_weights): "The output_size of gate's and up's weight = {I} is not divisible
#   by weight quantization block_n = {n}." where I = moe_intermediate_size / tp (the whole expert under expert
#   parallelism), then "The input_size of down's weight = {I} ... block_k" when tp > 1;
# - column-parallel linears (QKV, gate_up, MLA q_b / kv_b): "Weight output_partition_size = {o} is not divisible by
#   weight quantization block_n = {n}."; row-parallel ones (o_proj, down_proj): "Weight input_size_per_partition =
#   {i} is not divisible by weight quantization block_k = {k}." (fp8.py Fp8LinearMethod.create_weights in 0.8.5 and
#   0.9.2, quantization/utils/fp8_utils.py validate_fp8_block_shape from 0.10.x; read in 0.8.5.post1, 0.9.2, 0.24.0
#   and 0.27.1, the same checks and words; block FP8 came in 0.6.6 with DeepSeek-V3).
# Only a TP-split slice is checked here: at TP 1 every published checkpoint loads (its whole matrices are blocks).
# Shared experts are not checked here: no log shows their refusal (zai-org/GLM-4.6-FP8, once read as the example of
# a block-FP8 shared expert split into 192 rows a rank at TP 8, is llm-compressor's channel FP8: model/names.py).
_COLUMN = ("attn_q", "attn_k", "attn_v", "attn_q_b", "attn_kv_b", "ffn_gate", "ffn_up")
_ROW = ("attn_output", "ffn_down")
_EXPERTS = ("ffn_gate_exps", "ffn_up_exps", "ffn_down_exps")
_BLOCKS = ((128, 128), (64, 64), (256, 256), (128, 64), (64, 128), (32, 32))


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def fp8_block(t) -> tuple[int, int] | None:
    """(block_n, block_k) of a block-FP8 tensor, read back from its bytes (the inventory keeps the weight, one byte
    an element, and a float32 scale per block: quant/hf_formats.linear_weight_bytes); None where no common block
    gives its size."""
    if t.dtype.lower() != "fp8-block" or len(t.shape) < 2:
        return None
    k, n = t.shape[0], t.shape[1]
    stacks = t.n_elements // (k * n)
    for bn, bk in _BLOCKS:
        if t.nbytes == stacks * (k * n + _cdiv(n, bn) * _cdiv(k, bk) * 4):
            return bn, bk
    return None


# ModelOpt's block FP8 (quant_algo FP8_PB_WO, a module of a MIXED_PRECISION checkpoint; a top-level FP8_PB_WO,
# "modelopt-fp8-pb-wo", goes to ModelOptFp8PbWoLinearMethod from 0.14, whose checks are not modelled) is not
# fp8.py's, and vLLM checks it otherwise (model_executor/layers/quantization/modelopt.py
# ModelOptMixedPrecisionConfig.get_quant_method, read in 0.17.0, 0.20.0, 0.24.0, 0.27.0-0.34.0):
# - 0.17-0.28: only FP8 / NVFP4 (0.24 W4A16_NVFP4, 0.27 MXFP8) modules get a quantized method; an FP8_PB_WO linear
#   gets UnquantizedLinearMethod and its experts none: nothing checks a block;
# - 0.29: linears ModelOptFp8PbWoLinearMethod.create_weights, fixed 128 x 128 blocks: the output is padded to a
#   block ("output_padding"), the input refused unless whole: "ModelOpt FP8_PB_WO requires in_features divisible by
#   128, got {input_size_per_partition}." (the full input of a column-parallel linear, input / tp of a row-parallel
#   one); experts still none;
# - 0.30+: linears KFp8Block128.create_weights, the same input rule ("FP8_PB_WO requires in divisible by 128, got
#   {in_}"), a partial last output block padded (_Fp8PbWoPartialBlock); routed experts Fp8MoEMethod with
#   fp8_block_config (weight_block_size [group_size, group_size]): fp8.py's checks below.
MODELOPT_PBWO_LINEAR: Version = (0, 29, 0)
MODELOPT_PBWO_MOE: Version = (0, 30, 0)


def _check_modelopt_pbwo(spec: ModelSpec, tp: int, moe_tp: int, version: Version) -> bool:
    """The ModelOpt FP8_PB_WO rules above for the linears; -> whether fp8.py's expert checks apply too."""
    if version < MODELOPT_PBWO_LINEAR:
        return False
    for t in spec.weights.tensors:
        if fp8_block(t) is None or not t.name.startswith("blk."):
            continue
        module = t.name.split(".")[2]
        k = t.shape[0]  # GGUF order: ne0 = in_features
        part = k // tp if module in _ROW else k if module in _COLUMN else None
        if part is not None and part % 128:
            words = (f"ModelOpt FP8_PB_WO requires in_features divisible by 128, got {part}." if version <
                     MODELOPT_PBWO_MOE else f"FP8_PB_WO requires in divisible by 128, got {part}")
            raise OomkitError(f"vllm serve: ValueError: {words} ({t.name.rsplit('.', 1)[0]} at tensor parallel size "
                              f"{tp})")
    return version >= MODELOPT_PBWO_MOE and moe_tp > 1


def modelopt_pbwo_warning(spec: ModelSpec, version: Version) -> str | None:
    """0.17-0.28 build a ModelOpt FP8_PB_WO module unquantized (MODELOPT_PBWO_LINEAR): a note, as what then loads
    (the checkpoint's fp8 weights and scales into model-dtype parameters) is not modelled."""
    if not (MIXED_PRECISION_FROM <= version < MODELOPT_PBWO_LINEAR and spec.weights.format.lower().startswith(
            "modelopt") and any(fp8_block(t) is not None for t in spec.weights.tensors)):
        return None
    return ("ModelOpt FP8_PB_WO modules get UnquantizedLinearMethod in this release (modelopt.py "
            "ModelOptMixedPrecisionConfig.get_quant_method handles them from 0.29): their parameters are built in "
            "the model dtype, which the checkpoint's fp8 weights and block scales may not load into; the weights "
            "are counted as stored")


def check_fp8_block_tp(spec: ModelSpec, tp: int, dp: int, expert_parallel: bool,
                       version: Version | None = None) -> None:
    """Raises OomkitError with vLLM's words where a rank's slice of a block-FP8 weight is not a whole number of
    blocks (see above); the first tensor that fails in the model's order. The routed experts are split over
    tp x dp without expert parallelism and kept whole with it (fused_moe/layer.py FusedMoE.__init__: use_ep =
    enable_expert_parallel and tp_size * dp_size > 1, else tp_size = tp_size * dp_size). A ModelOpt checkpoint's
    block FP8 follows MODELOPT_PBWO_LINEAR's rules for `version` (None: the newest)."""
    moe_tp = 1 if expert_parallel and tp * dp > 1 else tp * dp
    experts_only = False
    if spec.weights.format.lower().startswith("modelopt"):
        if not _check_modelopt_pbwo(spec, tp, moe_tp, version or (99, 0, 0)):
            return
        experts_only = True
    if tp <= 1 and moe_tp <= 1:
        return
    for t in spec.weights.tensors:
        block = fp8_block(t)
        if block is None or not t.name.startswith("blk."):
            continue
        module = t.name.split(".")[2]
        k, n = t.shape[0], t.shape[1]  # GGUF order: ne0 = in_features, ne1 = out_features
        bn, bk = block
        if module in _EXPERTS:
            inter = (k if module == "ffn_down_exps" else n) // moe_tp
            if inter % bn:
                raise OomkitError(f"vllm serve: ValueError: The output_size of gate's and up's weight = {inter} is not "
                                  f"divisible by weight quantization block_n = {bn}. (moe_intermediate_size split "
                                  f"over {moe_tp} ranks; a size whose slice is a multiple of {bn}, or "
                                  "--enable-expert-parallel, keeps the experts whole)")
            if tp > 1 and inter % bk:
                raise OomkitError(f"vllm serve: ValueError: The input_size of down's weight = {inter} is not divisible "
                                  f"by weight quantization block_k = {bk}.")
        elif tp <= 1 or experts_only:
            continue
        elif module in _COLUMN:
            part = n // tp
            if module in ("attn_k", "attn_v"):
                layer = spec.layers[t.layer] if t.layer is not None and t.layer < spec.n_layers else None
                a = layer.attention if layer is not None else None
                if a is not None and a.n_kv_heads and a.n_kv_heads < tp:
                    part = n // a.n_kv_heads  # one KV head a rank, replicated (QKVParallelLinear num_kv_head_replicas)
            if part % bn:
                raise OomkitError(f"vllm serve: ValueError: Weight output_partition_size = {part} is not divisible by "
                                  f"weight quantization block_n = {bn}. ({t.name.rsplit('.', 1)[0]} split over tensor "
                                  f"parallel size {tp})")
        elif module in _ROW:
            part = k // tp
            if part % bk:
                raise OomkitError(f"vllm serve: ValueError: Weight input_size_per_partition = {part} is not divisible "
                                  f"by weight quantization block_k = {bk}. ({t.name.rsplit('.', 1)[0]} split over "
                                  f"tensor parallel size {tp})")


# --- ModelOpt MIXED_PRECISION before 0.17 -------------------------------------------------------------------------
# A ModelOpt checkpoint's quant_method is "modelopt" (no override_quantization_method claims quant_algo
# MIXED_PRECISION before 0.17: ModelOptNvFp4Config's looks for "NVFP4", ModelOptMxFp8Config's for "MXFP8"), so
# ModelOptFp8Config.from_config (ModelOptQuantConfigBase.from_config from 0.12) reads it and refuses a quant_algo
# outside its list, raising before any weight is read. model_executor/layers/quantization/modelopt.py, read in the
# 0.6.1-0.6.6, 0.7.0-0.7.3, 0.8.0-0.8.5, 0.9.0-0.9.2, 0.10.0-0.10.2, 0.11.0, 0.11.2, 0.12.0, 0.13.0, 0.14.0 and 0.16.0
# sdists and the 0.15.0 / 0.15.1 wheels: 0.6.1-0.7.3 accept any quant_algo containing "FP8" ("ModelOpt currently
# only supports static FP8quantization ...", the missing space is vLLM's); from 0.8.0 QUANT_ALGOS lists them. 0.17.0
# adds "MIXED_PRECISION" to QUANT_ALGOS and ModelOptMixedPrecisionConfig (quantization "modelopt_mixed").
MIXED_PRECISION_FROM: Version = (0, 17, 0)
MODELOPT_FROM: Version = (0, 6, 1)  # modelopt.py ModelOptFp8Config (0.6.0 has none)
_MODELOPT_ALGOS: tuple[tuple[Version, tuple[str, ...]], ...] = (
    ((0, 8, 0), ("FP8", "NVFP4")),
    ((0, 14, 0), ("FP8", "FP8_PER_CHANNEL_PER_TOKEN", "FP8_PB_WO", "NVFP4")),
    ((0, 16, 0), ("FP8", "FP8_PER_CHANNEL_PER_TOKEN", "FP8_PB_WO", "NVFP4", "MXFP8")),
)
# 0.6.1-0.9.2 read the config nested only (cls.get_from_keys(config, ["quantization"]), the hf_quant_config.json
# form); a config.json quantization_config written flat ({"quant_method": "modelopt", "quant_algo": ...}, as ModelOpt
# exports MIXED_PRECISION checkpoints) stops there first with base_config.py get_from_keys's words. 0.10.0 reads both.
_FLAT_FROM: Version = (0, 10, 0)


# ModelOpt's own 128 x 128 block FP8 as a whole checkpoint's quant_algo (quant/hf_formats.py "modelopt-fp8-pb-wo"):
# 0.6.1-0.7.3 take it ("FP8" in "FP8_PB_WO"; ModelOptFp8LinearMethod), 0.8.0-0.13.x refuse it (not in QUANT_ALGOS),
# 0.14.0 lists it (ModelOptFp8PbWoLinearMethod; its divisibility checks are not modelled here).
_TOP_ALGO = {"modelopt-mixed": "MIXED_PRECISION", "modelopt-fp8-pb-wo": "FP8_PB_WO"}


def check_checkpoint_release(spec: ModelSpec, version: Version, release: str) -> None:
    """Raises OomkitError with vLLM's words where the release refuses the checkpoint's quantization: an 8-bit AWQ
    checkpoint from AWQ_8BIT_DROPPED (check_awq_bits_release), a ModelOpt top-level quant_algo it does not list
    (check_modelopt_release)."""
    check_awq_bits_release(spec, version, release)
    check_modelopt_release(spec, version, release)


def check_modelopt_release(spec: ModelSpec, version: Version, release: str) -> None:
    """Raises OomkitError with vLLM's words where the release refuses a ModelOpt checkpoint's top-level quant_algo
    (MIXED_PRECISION before MIXED_PRECISION_FROM, FP8_PB_WO in 0.8.0-0.13.x)."""
    algo = _TOP_ALGO.get(spec.weights.format.lower())
    if algo is None or (algo == "MIXED_PRECISION" and version >= MIXED_PRECISION_FROM):
        return
    if version < MODELOPT_FROM:
        raise OomkitError(f"vLLM {release} has no ModelOpt quantization (model_executor/layers/quantization/"
                          f"modelopt.py came in 0.6.1); ModelOpt {algo} checkpoints load from vLLM "
                          f"{'0.17.0' if algo == 'MIXED_PRECISION' else '0.6.1'}")
    if version < _MODELOPT_ALGOS[0][0]:
        # 0.6.1-0.7.3 ModelOptFp8Config.from_config: is_checkpoint_fp8_serialized = ("FP8" in quant_method)
        if "FP8" in algo:
            return
        words = ("ModelOpt currently only supports static FP8quantization in vLLM. Please check the "
                 "`hf_quant_config.json` file for your model's quant configuration.")
    else:
        algos = [names for first, names in _MODELOPT_ALGOS if version >= first][-1]
        if algo in algos:
            return
        words = (f"ModelOpt currently only supports: {list(algos)} quantizations in vLLM. Please check the "
                 "`hf_quant_config.json` file for your model's quant configuration.")
    loads = "loads from vLLM 0.17.0" if algo == "MIXED_PRECISION" else "loads in 0.6.1-0.7.3 and from vLLM 0.14.0"
    early = ("; a config.json quantization_config written flat stops earlier: \"Cannot find any of ['quantization'] "
             "in the model's quantization config.\"" if version < _FLAT_FROM else "")
    raise OomkitError(f"vllm serve: ValueError: {words} (vLLM {release} refuses quant_algo {algo}; it "
                      f"{loads}{early})")


# 8-bit AWQ: awq_marlin.py AWQMarlinConfig.TYPE_MAP is {4: uint4, 8: uint8} in 0.5.3-0.11.2 and {4: uint4} from
# 0.12.0 (read in the 0.11.2, 0.12.0, 0.13.0 and 0.14.0 sdists), so from 0.12.0 is_awq_marlin_compatible is False for
# 8 bits and override_quantization_method leaves the checkpoint with awq.py AWQConfig, whose __init__ refuses it
# ("Currently, only 4-bit weight quantization is supported for AWQ, but got 8 bits."; auto_awq.py AutoAWQConfig from
# 0.24, read in 0.24.0, 0.27.0 and 0.34.0: "Unsupported num_bits = 8. Supported: 4. For 8-bit AWQ, use Marlin backend
# by setting backend='awq:marlin' or backend='marlin'.", the backend being inc.py's, not a plain AWQ checkpoint's).
# moe_wna16.py is_moe_wna16_compatible takes AWQ at num_bits 4
# only (0.12.0, 0.13.0), so no other method claims it.
AWQ_8BIT_DROPPED: Version = (0, 12, 0)
_AUTO_AWQ_FROM: Version = (0, 24, 0)


def check_awq_bits_release(spec: ModelSpec, version: Version, release: str) -> None:
    """vLLM's refusal of an 8-bit AWQ checkpoint from AWQ_8BIT_DROPPED."""
    if checkpoint_method(spec) != "awq" or awq_bits(spec) != 8:
        return
    if version < AWQ_8BIT_DROPPED:
        return
    words = ("Unsupported num_bits = 8. Supported: 4. For 8-bit AWQ, use Marlin backend by setting "
             "backend='awq:marlin' or backend='marlin'." if version >= _AUTO_AWQ_FROM else
             "Currently, only 4-bit weight quantization is supported for AWQ, but got 8 bits.")
    why = f"awq_marlin takes 8-bit AWQ through 0.11.2; vLLM {release} has no 8-bit AWQ kernel"
    raise OomkitError(f"vllm serve: ValueError: {words} ({spec.name} is 8-bit AWQ; {why})")
