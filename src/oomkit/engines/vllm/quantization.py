"""`--quantization` as vLLM checks it against the checkpoint (config/model.py ModelConfig._verify_quantization and
model_loader/weight_utils.py get_quant_config, 0.6-0.27.1): which names exist, which a plain 16-bit checkpoint
can be quantized to while loading, and which contradict the checkpoint's own quantization_config."""

from __future__ import annotations

from ...errors import OomkitError
from ...model.spec import ModelSpec
from ...quant.dtypes import FLOAT_BYTES

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


def check(spec: ModelSpec, quantization: str | None) -> list[str]:
    """Warnings on --quantization; raises OomkitError with vLLM's own error where it refuses to start."""
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
