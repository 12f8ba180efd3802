"""vLLM (`vllm serve`, the OpenAI API server, the `LLM` class): what it really allocates on each GPU.

Each rule mirrors vLLM's source, read in the released wheels 0.6.4.post1, 0.6.6.post1, 0.7.3, 0.8.5, 0.9.2,
0.10.2, 0.11.0, 0.12.0, 0.15.1, 0.17.1, 0.19.1, 0.21.0 and 0.33.0 (the newest), cited as `file:function`.
Behaviour that changed between releases follows `engine_version` (default the newest), see ERAS.

The chain, per GPU (rank):

    requested  = total_memory * gpu_memory_utilization        (v1/worker/gpu_worker.py; ceil from 0.21)
    available  = requested - weights - activation peak - non-torch increase [- CUDA graphs, from 0.21]
    num_blocks = available // (page_bytes * layers per pool)   (v1/core/kv_cache_utils.py)
    -> "GPU KV cache size: N tokens", "Maximum concurrency for L tokens per request: Cx"

The page arithmetic (block sizes, groups of hybrid models, MLA, Mamba pages, TP head split) is exact; the
weights are exact up to the few small buffers vLLM also allocates while loading (the rotary cos/sin cache is
counted). The activation peak and the non-torch memory are measured by vLLM at start-up; they are modelled
here from the dummy batch vLLM profiles (max_num_batched_tokens tokens, max_num_seqs sampled rows) and fitted
to published start-up logs (tests/fixtures/engine_logs/vllm/), so they carry the residual error.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from typing import Any

from ..errors import OomkitError
from ..memory import Device, LayerUse, MemoryEstimate, Usage
from ..model.spec import LayerKind, LayerSpec, ModelSpec, TensorSpec
from ..units import GiB, MiB
from . import _tp
from .base import EngineModule

NEWEST = "0.33.0"

# Release boundaries (the first release with the new rule). Placed by reading the wheels listed above; where a
# change landed between two wheels read, the later one is named and the rule is labelled approximate.
ERAS = {
    # worker/worker.py determine_num_available_blocks: PR #10511 (v0.6.5) subtracts only what the profile run
    # added; before it, the absolute torch peak (weights included) plus all non-torch memory (CUDA context too).
    "profile_increase": (0, 6, 5),
    "v1_default": (0, 8, 0),  # VLLM_USE_V1 defaults to 1
    "v1_only": (0, 11, 0),  # the V0 engine is gone
    # engine/arg_utils.py get_batch_defaults: >= 70 GiB and not A100 -> 16384/8192 tokens, 1024 seqs
    "batch_by_memory": (0, 8, 5),
    # ... and >= 160 GiB -> 16384 tokens for `vllm serve` too (in 0.33.0, not in 0.21.0; approximate)
    "batch_160gib": (0, 25, 0),
    # v1/core/kv_cache_utils.py _get_kv_cache_config_uniform_page_size: hybrid allocator (sliding/chunked
    # layers get their own groups). 0.8.5 converts every sliding layer to full attention.
    "hybrid_allocator": (0, 9, 1),
    # envs.VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE default 0 -> 1 (0 in 0.12.0, 1 in 0.15.1)
    "chunked_hybrid": (0, 13, 0),
    # v1/sample/ops/topk_topp_sampler.py: up to 0.11 FlashInfer's top-k/top-p sampler is used when FlashInfer
    # is installed, else a PyTorch sort (heavy); from 0.12 FlashInfer is opt-in (VLLM_USE_FLASHINFER_SAMPLER=1);
    # 0.17 adds a Triton top-k/top-p kernel for batches >= 8 (light again)
    "sampler_flashinfer_opt_in": (0, 12, 0),
    "sampler_triton": (0, 17, 0),
    # platforms/cuda.py: MLA block size forced by the backend (FlashMLA 64 on Hopper, CUTLASS 128 on
    # Blackwell) up to 0.11; from 0.12 the backend's preferred size (FLASH_ATTN_MLA: 16 on Hopper)
    "mla_preferred_block": (0, 12, 0),
    # non-torch increase at TP=1: 0.13 GiB measured on 0.15-0.17, 0.25 GiB from 0.18 (llm-d version sweep)
    "non_torch_025": (0, 18, 0),
    # v1/worker/gpu_worker.py: CUDA graph memory estimated before the KV cache is sized and subtracted
    # (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1 "default since v0.21.0"); default utilization 0.92;
    # "GPU KV cache size" = int(max_concurrency * max_model_len) (_report_kv_cache_config)
    "cudagraph_budget": (0, 21, 0),
    # v1/core/kv_cache_planning.py get_kv_cache_configs: one block held back (null block) in the checks;
    # "GPU KV cache size: N tokens, Maximum concurrency ..." on one line (in 0.33.0, not in 0.21.0; approximate)
    "null_block": (0, 30, 0),
    # format_gib(): "58.11 GiB" printed as round(x, 2) instead of "%.2f" (0.12.0 -> 0.15.1)
    "format_gib": (0, 15, 0),
    # "the model's max seq len" (typo "models's" fixed) and the CPU-backend note (in 0.33.0, not 0.21.0)
    "msg_fixed": (0, 30, 0),
}

# Memory CUDA reserves for itself: cudaMemGetInfo's total (vLLM's total_memory) is about this much below
# nvidia-smi's total: H100 80GB 81559 MiB vs 79.19 GiB, RTX 3090 24576 MiB vs 23.58 GiB, RTX 4090
# 24564 MiB vs 23.52 GiB, L4 23034 MiB vs 22.05 GiB (start-up logs and OOM messages).
CUDA_DRIVER_RESERVED = 470 * MiB
# Memory in use before vLLM's worker-init snapshot (outside its budget): CUDA context and cuBLAS 0.51 GiB at
# TP=1; with TP/PP > 1 NCCL is initialised first (1.51 GiB TP, 1.43 GiB PP). llm-d v0.19.0 H100 logs
# ("worker init memory snapshot").
CONTEXT_TP1 = int(0.51 * GiB)
CONTEXT_MULTI = int(1.51 * GiB)
# "non-torch forward increase memory" during the profile run: TP=1 0.25 GiB (0.13 in 0.15-0.17), TP>=2 about
# 2.07 GiB (NCCL and custom all-reduce buffers), PP>=2 0.07 GiB (llm-d v0.19.0 and version-sweep logs).
NON_TORCH_TP1 = int(0.25 * GiB)
NON_TORCH_TP1_OLD = int(0.13 * GiB)
NON_TORCH_TP = int(2.07 * GiB)
NON_TORCH_PP = int(0.07 * GiB)
# V0 from 0.6.5: non_torch_increase of 0.03 GiB at TP=1 (vllm#13882); before 0.6.5 the whole non-torch
# memory, CUDA context included: 0.35 GiB on an RTX 3090 (vllm#10517).
NON_TORCH_V0 = int(0.03 * GiB)
NON_TORCH_V0_TP = int(0.25 * GiB)  # TP=2 on two RTX 4090s, V0 0.7.x (vllm#13061)
NON_TORCH_V0_ABS = int(0.35 * GiB)
# Activation peak of the profile run, fitted to the "torch peak memory increase" of the v0.19.0 H100 logs:
# the sampler warm-up holds about (12.85 + logits dtype) bytes per (request x vocab) element with the
# Triton/FlashInfer top-k/top-p and about 36.4 + 2 with the PyTorch sort path (Qwen3-14B 5.64 GiB on
# 0.15/0.16 vs 2.23 GiB on 0.17); the dense forward holds about T x dtype x (3 ff + 4.25 hidden) (V1,
# CodeLlama-7b, Granite-3.1-8b) and T x dtype x (3 ff + 3 hidden) in V0 (vllm#10517: 2.07 GiB at 20000 tokens).
SAMPLER_BYTES = 12.85
SAMPLER_BYTES_SORT = 36.4
SAMPLER_BYTES_V0 = 6.0
FORWARD_HIDDEN = 4.25
FORWARD_HIDDEN_V0 = 3.0
# CUDA graph memory (estimate printed by 0.19+, "Estimated CUDA graph memory"): about 0.30 GiB plus
# 0.017 GiB per layer for the default 51+51 graphs (0.84 GiB Llama-3.1-8B, 1.24 GiB Qwen3-30B-A3B, 0.52 GiB
# gemma-2-2b in the v0.19.0 logs).
CUDAGRAPH_BASE = int(0.30 * GiB)
CUDAGRAPH_PER_LAYER = int(0.017 * GiB)
# vllm/model_executor/layers/vocab_parallel_embedding.py DEFAULT_VOCAB_PADDING_SIZE
VOCAB_PADDING = 64

KV_DTYPE_BYTES = {"float16": 2, "bfloat16": 2, "fp8": 1, "fp8_e4m3": 1, "fp8_e5m2": 1, "fp8_inc": 1}
MODEL_DTYPES = {"float32": 4, "bfloat16": 2, "float16": 2}
_DTYPE_ALIASES = {"half": "float16", "float": "float32", "fp16": "float16", "bf16": "bfloat16", "fp32": "float32"}
# model_executor/layers/attention/mla_attention.py state_content_bytes: bytes per token per layer
MLA_PACKED_BYTES = {"fp8_ds_mla": 656, "nvfp4_ds_mla": 352}


def parse_version(version: str | None) -> tuple[int, int, int]:
    if not version or version.strip().lower() in ("newest", "latest"):
        version = NEWEST
    m = re.match(r"v?(\d+)\.(\d+)(?:\.(\d+))?", version.strip())
    if not m:
        raise OomkitError(f"cannot read vLLM version {version!r}: expected a release such as 0.10.2")
    return int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)


@dataclass(frozen=True)
class VllmSettings:
    """vLLM's options by their own names (engine/arg_utils.py EngineArgs; None = the release's default)."""

    max_model_len: int | None = None  # --max-model-len; None: the model's; -1: auto-fit (0.19+)
    gpu_memory_utilization: float | None = None  # None: 0.9 (0.92 from 0.21)
    tensor_parallel_size: int = 1  # -tp
    pipeline_parallel_size: int = 1  # -pp
    data_parallel_size: int = 1  # -dp
    enable_expert_parallel: bool = False  # -ep
    dtype: str = "auto"  # --dtype
    kv_cache_dtype: str = "auto"  # --kv-cache-dtype
    block_size: int | None = None  # --block-size; None: 16 or the attention backend's
    max_num_seqs: int | None = None  # --max-num-seqs
    max_num_batched_tokens: int | None = None  # --max-num-batched-tokens
    enable_chunked_prefill: bool | None = None
    enable_prefix_caching: bool | None = None
    enforce_eager: bool = False  # no CUDA graphs
    cpu_offload_gb: float = 0.0  # GiB of weights per GPU kept in host memory
    swap_space: float = 4.0  # GiB of host memory per GPU for swapped blocks (V0)
    kv_cache_memory_bytes: int | None = None  # --kv-cache-memory-bytes: skip the budget, use this much
    num_gpu_blocks_override: int | None = None
    quantization: str | None = None  # -q: online quantization (fp8) or the checkpoint's method
    max_cudagraph_capture_size: int | None = None
    disable_hybrid_kv_cache_manager: bool = False
    attention_backend: str | None = None  # --attention-backend / VLLM_ATTENTION_BACKEND
    mamba_cache_dtype: str = "auto"
    mamba_ssm_cache_dtype: str = "auto"
    mamba_cache_mode: str | None = None  # None: "align" with prefix caching on a hybrid model (0.15+), else "none"
    num_speculative_tokens: int = 0  # --speculative-config {"num_speculative_tokens": N}: extra Mamba state slots
    usage_context: str = "serve"  # "serve" (OpenAI server) or "llm" (the LLM class): different batch defaults
    allow_long_max_model_len: bool = False  # VLLM_ALLOW_LONG_MAX_MODEL_LEN=1
    use_v1: bool | None = None  # VLLM_USE_V1
    estimate_cudagraphs: bool | None = None  # VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS
    use_flashinfer_sampler: bool | None = None  # VLLM_USE_FLASHINFER_SAMPLER
    engine_version: str = NEWEST

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


# The engine-neutral CLI options (--ctx, --kv-type, --parallel, ...) -> these fields (commands/_model_args.py).
NEUTRAL = {"ctx": "max_model_len", "kv_type": "kv_cache_dtype", "parallel": "max_num_seqs",
           "engine_version": "engine_version", "kv_memory": "kv_cache_memory_bytes"}


# ---------------------------------------------------------------------------------------------------------
# The configuration vLLM settles on


@dataclass(frozen=True)
class Resolved:
    version: tuple[int, int, int]
    v1: bool
    tp: int
    pp: int
    dp: int
    max_model_len: int
    derived_max_len: int
    util: float
    dtype: str  # model dtype
    dtype_bytes: int
    kv_dtype: str
    max_num_seqs: int
    max_num_batched_tokens: int
    chunked_prefill: bool
    prefix_caching: bool
    cc: tuple[int, int] | None  # compute capability of the first GPU
    cc_guessed: bool
    mamba_cache_mode: str = "none"
    num_spec: int = 0
    warnings: tuple[str, ...] = ()

    def at_least(self, era: str) -> bool:
        return self.version >= ERAS[era]


def _gpu_info(dev: Device | None) -> tuple[tuple[int, int] | None, str]:
    """(compute capability, name) of the first GPU; the capability as the GPU catalog gives it with the Device,
    None when unknown. The name is matched the way vLLM matches torch.cuda.get_device_name()."""
    if dev is None:
        return None, ""
    return dev.compute_capability, dev.name or ""


def cuda_total(dev: Device) -> int | None:
    """vLLM's total_memory (torch.cuda.mem_get_info): the device's memory less what the driver reserves."""
    if dev.memory_bytes is None:
        return None
    return max(dev.memory_bytes - CUDA_DRIVER_RESERVED, 0)


def _model_dtype(spec: ModelSpec, s: VllmSettings, version: tuple[int, int, int], cc) -> str:
    """config/model.py _get_and_verify_dtype / _resolve_auto_dtype."""
    want = _DTYPE_ALIASES.get(s.dtype.lower(), s.dtype.lower())
    config_dtype = _checkpoint_dtype(spec)
    bf16_ok = cc is None or cc >= (8, 0)
    if want == "auto":
        dtype = config_dtype
        if dtype == "float32":  # "Downcast for float32 models" to the platform's first supported dtype
            dtype = "bfloat16" if bf16_ok and version >= (0, 9, 0) else "float16"
        if dtype == "bfloat16" and not bf16_ok:
            dtype = "float16"  # "Your device ... doesn't support torch.bfloat16. Falling back to torch.float16"
        return dtype
    if want not in MODEL_DTYPES:
        raise OomkitError(f"Unknown dtype: {s.dtype!r}")
    if want == "bfloat16" and not bf16_ok:
        raise OomkitError(f"Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your GPU "
                          f"has compute capability {cc[0]}.{cc[1]}. You can use float16 instead by explicitly "
                          "setting the `dtype` flag in CLI, for example: --dtype=half.")
    return want


def _checkpoint_dtype(spec: ModelSpec) -> str:
    """The dtype the checkpoint's unquantized tensors carry (config torch_dtype); bfloat16 when unsure."""
    fmt = spec.weights.format.lower()
    if fmt in MODEL_DTYPES:
        return fmt
    for t in spec.weights.tensors:  # a quantized checkpoint keeps its norms in the config's dtype
        if t.name.endswith("norm.weight") and t.dtype.lower() in MODEL_DTYPES:
            return t.dtype.lower()
    return "bfloat16"


def resolve(spec: ModelSpec, devices: tuple[Device, ...], s: VllmSettings) -> Resolved:
    version = parse_version(s.engine_version)
    warnings: list[str] = []
    v1 = version >= ERAS["v1_default"] if s.use_v1 is None else s.use_v1
    if version >= ERAS["v1_only"]:
        v1 = True
    elif v1 and version < (0, 7, 0):
        raise OomkitError(f"the V1 engine (VLLM_USE_V1=1) needs vLLM 0.7 or newer, not {s.engine_version}")
    tp, pp, dp = s.tensor_parallel_size, s.pipeline_parallel_size, s.data_parallel_size
    if min(tp, pp, dp) < 1:
        raise OomkitError("tensor, pipeline and data parallel sizes must be at least 1")
    util = s.gpu_memory_utilization
    if util is None:
        util = 0.92 if version >= ERAS["cudagraph_budget"] else 0.9
    if not 0 < util <= 1:
        raise OomkitError(f"GPU memory utilization must be within (0, 1]. Got {util}.")
    first = devices[0] if devices else None
    cc, gpu_name = _gpu_info(first)
    cc_guessed = False
    if cc is None and first is not None:
        cc, cc_guessed = (9, 0), True  # an unnamed GPU: assume a current datacenter part (Hopper)
    _check_parallel(spec, tp)
    dtype = _model_dtype(spec, s, version, cc)
    kv_dtype = _kv_dtype(spec, s, version, dtype)
    derived = spec.n_ctx_train or 0
    if derived <= 0:
        derived = 2048  # config/model.py: "Assuming the model's maximum length is 2048"
        warnings.append("the model declares no maximum length: vLLM assumes 2048")
    if s.max_model_len is None or s.max_model_len == -1:
        max_len = derived
    else:
        max_len = s.max_model_len
        if max_len <= 0:
            raise OomkitError(f"max_model_len must be positive, got {max_len}")
        if max_len > derived:
            msg = (f"User-specified max_model_len ({max_len}) is greater than the derived max_model_len "
                   f"(max_position_embeddings={derived} or model_max_length=None in model's config.json).")
            if not s.allow_long_max_model_len:
                raise OomkitError(f"{msg} To allow overriding this maximum, set the env var "
                                  "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. VLLM_ALLOW_LONG_MAX_MODEL_LEN must be used "
                                  "with extreme caution.")
            warnings.append(msg + " Allowed by VLLM_ALLOW_LONG_MAX_MODEL_LEN=1.")
    seqs, tokens, chunked = _batch_defaults(s, version, v1, max_len, first, gpu_name, tp * pp)
    # config/model.py is_prefix_caching_supported: on by default in V1, except for hybrid (Mamba / linear
    # attention) models, where it is experimental and off unless asked for
    hybrid = any(layer.recurrent is not None for layer in _trunk(spec))
    prefix = s.enable_prefix_caching if s.enable_prefix_caching is not None else (v1 and not hybrid)
    # model_executor/models/config.py MambaModelConfig: prefix caching on a hybrid model caches Mamba states at
    # block boundaries ("align": 2 state pages per request; "all" is chosen only for models declaring
    # SupportsMambaPrefixCaching and is not modelled here)
    mode = s.mamba_cache_mode
    if mode is None:
        mode = "align" if (hybrid and prefix and version >= (0, 15, 0)) else "none"
    if mode not in ("none", "align", "all"):
        raise OomkitError(f"vllm serve: error: argument --mamba-cache-mode: invalid choice: {mode!r} (choose from "
                          "'all', 'align', 'none')")
    return Resolved(version=version, v1=v1, tp=tp, pp=pp, dp=dp, max_model_len=max_len, derived_max_len=derived,
                    util=util, dtype=dtype, dtype_bytes=MODEL_DTYPES[dtype], kv_dtype=kv_dtype,
                    max_num_seqs=seqs, max_num_batched_tokens=tokens, chunked_prefill=chunked,
                    prefix_caching=prefix, cc=cc, cc_guessed=cc_guessed, mamba_cache_mode=mode,
                    num_spec=max(s.num_speculative_tokens, 0), warnings=tuple(warnings))


def _check_parallel(spec: ModelSpec, tp: int) -> None:
    """config/model.py verify_with_parallel_config (its own words for the heads), then the divide() asserts of
    VocabParallelEmbedding and the layers (QKVParallelLinear, linear-attention heads: engines/_tp.py)."""
    att = next((layer.attention for layer in spec.layers if layer.attention is not None), None)
    if att is not None and att.n_heads % tp:
        raise OomkitError(f"Total number of attention heads ({att.n_heads}) must be divisible by tensor parallel "
                          f"size ({tp}).")
    padded = _tp.pad_vocab(spec.n_vocab)
    if padded % tp:  # vocab_parallel_embedding.py: divide(num_embeddings_padded, tp_size); the embedding is
        # built before the decoder layers, so this assert fires first (Qwen3-14B at TP5 in the llm-d sweep)
        raise OomkitError(f"AssertionError: {padded} is not divisible by {tp} (the vocabulary, padded to "
                          f"{VOCAB_PADDING}, must divide evenly over tensor parallel size {tp})")
    _tp.check_tp(spec, tp)


def _kv_dtype(spec: ModelSpec, s: VllmSettings, version, model_dtype: str) -> str:
    """config/cache.py CacheDType by release, and the MLA-only packed formats."""
    name = s.kv_cache_dtype.lower()
    allowed = ["auto", "fp8", "fp8_e4m3", "fp8_e5m2"]
    if version >= (0, 10, 0):
        allowed.append("fp8_inc")
    if version >= (0, 12, 0):
        allowed += ["bfloat16", "fp8_ds_mla"]
    if version >= (0, 15, 0):
        allowed.append("float16")
    if version >= ERAS["null_block"]:
        allowed.append("nvfp4_ds_mla")
    if name not in allowed:
        listed = ", ".join(repr(c) for c in allowed)
        raise OomkitError(f"vllm serve: error: argument --kv-cache-dtype: invalid choice: {s.kv_cache_dtype!r} "
                          f"(choose from {listed})")
    mla = any(layer.kind is LayerKind.LATENT for layer in spec.layers)
    if name in MLA_PACKED_BYTES and not mla:
        raise OomkitError(f"No valid attention backend found for cuda with kv_cache_dtype={name}: "
                          f"{name} is the DeepSeek sparse-MLA cache format, and {spec.name} has no MLA layers")
    return model_dtype if name == "auto" else name


def _batch_defaults(s: VllmSettings, version, v1: bool, max_len: int, dev: Device | None, gpu_name: str,
                    world: int) -> tuple[int, int, bool]:
    """engine/arg_utils.py get_batch_defaults / _set_default_max_num_seqs_and_batched_tokens_args (V1) and
    config.py SchedulerConfig.__post_init__ (V0) -> (max_num_seqs, max_num_batched_tokens, chunked prefill)."""
    llm = s.usage_context.lower() in ("llm", "llm_class", "offline")
    mem = dev.memory_bytes if dev is not None and dev.memory_bytes is not None else 0
    cuda_mem = max(mem - CUDA_DRIVER_RESERVED, 0)
    name = gpu_name.lower()
    if not v1:
        chunked = s.enable_chunked_prefill
        if chunked is None:  # V0: on by default only for max_model_len > 32K
            chunked = max_len > 32768
        seqs = s.max_num_seqs or 256
        if s.max_num_batched_tokens is not None:
            tokens = s.max_num_batched_tokens
        elif chunked:
            tokens = 2048 if version >= ERAS["profile_increase"] else 512
        else:
            tokens = max(max_len, 2048)
        return seqs, tokens, chunked
    chunked = True if s.enable_chunked_prefill is None else s.enable_chunked_prefill
    if version >= ERAS["batch_160gib"] and cuda_mem >= 160 * GiB:
        d_tokens, d_seqs = (16384, 16384), (1024, 1024)
    elif version >= ERAS["batch_by_memory"] and cuda_mem >= 70 * GiB and "a100" not in name:
        d_tokens, d_seqs = (16384, 8192), (1024, 1024)
    elif version < ERAS["batch_by_memory"] and ("h100" in name or "h200" in name):
        d_tokens, d_seqs = (16384, 8192), (256, 256)
    else:
        d_tokens, d_seqs = (8192, 2048), (256, 256)
    tokens = s.max_num_batched_tokens
    seqs = s.max_num_seqs
    if tokens is None:
        tokens = d_tokens[0] if llm else d_tokens[1]
        if not chunked:
            tokens = max(max_len, tokens)
        tokens = min((seqs or (d_seqs[0] if llm else d_seqs[1])) * max_len, tokens)
    if seqs is None:
        seqs = min(d_seqs[0] if llm else d_seqs[1], tokens)
    return seqs, tokens, chunked


def _pad(x: int, n: int) -> int:
    return (x + n - 1) // n * n


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


# ---------------------------------------------------------------------------------------------------------
# KV cache specs (v1/kv_cache_interface.py) and their grouping (v1/core/kv_cache_utils.py)


@dataclass(frozen=True)
class KvSpec:
    """One layer's KV cache spec on one rank. kind: full | sliding | chunked | mla | mamba."""

    kind: str
    block_size: int
    bytes_per_token: int = 0  # attention: page_size / block_size
    window: int = 0  # sliding window or attention chunk size
    state_bytes: int = 0  # mamba: one page holds one request's state
    padded_page: int = 0
    mamba_mode: str = "none"  # cache_config.mamba_cache_mode
    spec_blocks: int = 0  # MambaSpec.num_speculative_blocks

    @property
    def page_bytes(self) -> int:
        if self.padded_page:
            return self.padded_page
        return self.state_bytes if self.kind == "mamba" else self.block_size * self.bytes_per_token

    def max_memory_usage(self, max_model_len: int, max_num_batched_tokens: int) -> int:
        """The KV one request at max_model_len needs in this layer (*Spec.max_memory_usage_bytes)."""
        if self.kind in ("full", "mla"):
            return _cdiv(max_model_len, self.block_size) * self.page_bytes
        if self.kind == "sliding":  # SlidingWindowSpec: window-1 + in-flight tokens, +1 for misalignment
            n = min(self.window - 1 + max_num_batched_tokens, max_model_len)
            return (_cdiv(n, self.block_size) + 1) * self.page_bytes
        if self.kind == "chunked":  # ChunkedLocalAttentionSpec
            n = min(self.window + max_num_batched_tokens, max_model_len)
            return _cdiv(n, self.block_size) * self.page_bytes
        if self.kind == "mamba":  # MambaSpec: one page per request (two in "align" mode), + speculative slots
            if self.mamba_mode == "all":
                return _cdiv(max_model_len, self.block_size) * self.page_bytes
            return self.page_bytes * ((2 if self.mamba_mode == "align" else 1) + self.spec_blocks)
        raise AssertionError(self.kind)


@dataclass(frozen=True)
class KvPlan:
    """How vLLM lays out the KV cache of one rank: groups of layers sharing block tables and memory pools."""

    layers: dict[int, KvSpec]  # layer index -> spec (this rank's layers)
    groups: tuple[tuple[KvSpec, tuple[int, ...]], ...]  # (group spec, layer indices); padding not listed
    group_size: int  # layers per group = tensors in the pool; bytes per block = page * group_size
    page_bytes: int
    block_size: int
    label: str = ""

    @property
    def bytes_per_block(self) -> int:
        return self.page_bytes * self.group_size

    @property
    def n_groups(self) -> int:
        return len(self.groups)

    def needed(self, max_len: int, batched: int) -> int:
        """check_enough_kv_cache_memory: sum over this rank's layers of max_memory_usage_bytes."""
        return sum(sp.max_memory_usage(max_len, batched) for sp in self.layers.values())

    def blocks_per_request(self, max_len: int, batched: int) -> int:
        """get_max_concurrency_for_kv_cache_config: cdiv(group_size * sum over groups of max usage,
        page * group_size), i.e. the blocks one max_model_len request draws from the shared pool."""
        per_group = sum(spec.max_memory_usage(max_len, batched) for spec, _ in self.groups)
        return _cdiv(self.group_size * per_group, self.bytes_per_block)


def _attention_bytes_per_token(layer: LayerSpec, r: Resolved) -> tuple[str, int]:
    """(kind, page bytes per token) of an attention layer on one TP rank (AttentionSpec.page_size_bytes)."""
    a = layer.attention
    if layer.kind is LayerKind.LATENT:
        # MLAAttentionSpec: one latent row (kv_lora_rank + qk_rope_head_dim), no V, 1 head, never TP-split
        if r.kv_dtype in MLA_PACKED_BYTES:
            return "mla", MLA_PACKED_BYTES[r.kv_dtype]
        return "mla", (a.kv_lora_rank + a.qk_rope_head_dim) * _kv_bytes(r)
    # ModelConfig.get_num_kv_heads: max(1, total // tp): heads are replicated when fewer than the ranks
    heads = max(1, a.n_kv_heads // r.tp)
    kind = {LayerKind.SLIDING: "sliding", LayerKind.CHUNKED: "chunked"}.get(layer.kind, "full")
    return kind, heads * (a.head_dim_k + a.head_dim_v) * _kv_bytes(r)


def _kv_bytes(r: Resolved) -> int:
    return KV_DTYPE_BYTES.get(r.kv_dtype, MODEL_DTYPES.get(r.kv_dtype, 2))


# Qwen3.5 / 3.6 configs declare mamba_ssm_dtype "float32", which vLLM applies to the temporal state
# (model_executor/models/config.py Qwen3_5ForConditionalGenerationConfig). ModelSpec does not carry the field, so
# the architecture stands for it (every published Qwen3.5/3.6 config sets it).
_SSM_FP32_ARCHS = frozenset({"qwen35", "qwen35moe"})


def _mamba_state_bytes(layer: LayerSpec, r: Resolved, s: VllmSettings, spec_arch: str = "") -> int:
    """model_executor/layers/mamba/mamba_utils.py MambaStateShapeCalculator (shapes per TP rank) and
    MambaStateDtypeCalculator (conv and temporal state in the model dtype unless mamba_*_cache_dtype)."""
    st = layer.recurrent
    tp = r.tp
    conv_b = MODEL_DTYPES.get(s.mamba_cache_dtype, r.dtype_bytes) if s.mamba_cache_dtype != "auto" else r.dtype_bytes
    ssm_dtype = s.mamba_ssm_cache_dtype
    if ssm_dtype == "auto" and spec_arch in _SSM_FP32_ARCHS:
        ssm_dtype = "float32"
    ssm_b = MODEL_DTYPES.get(ssm_dtype, conv_b) if ssm_dtype != "auto" else conv_b
    k1 = max(st.d_conv - 1, 0) + (r.num_spec if st.kind != "mamba" else 0)
    if st.kind == "gated_delta_net":  # gated_delta_net_state_shape
        n_v = st.n_heads
        d_v = st.d_inner // n_v
        d_k = st.d_state
        conv_dim = d_k * st.n_group * 2 + d_v * n_v
        return k1 * (conv_dim // tp) * conv_b + (n_v // tp) * d_v * d_k * ssm_b
    if st.kind == "mamba2":  # mamba2_state_shape (groups extended so each rank holds whole groups)
        n_group = st.n_group if st.n_group % tp == 0 or st.n_group >= tp else tp
        conv_dim = st.d_inner + 2 * n_group * st.d_state
        head_dim = st.d_inner // max(st.n_heads, 1)
        return k1 * (conv_dim // tp) * conv_b + (st.n_heads // tp) * head_dim * st.d_state * ssm_b
    if st.kind == "mamba":  # mamba1_state_shape
        return k1 * (st.d_inner // tp) * conv_b + (st.d_inner // tp) * st.d_state * ssm_b
    raise OomkitError(f"{layer.index}: vLLM state layout for recurrent kind {st.kind!r} is not modelled")


def block_size_for(spec: ModelSpec, s: VllmSettings, r: Resolved) -> tuple[int, str]:
    """The KV block size in tokens and why (platforms/cuda.py, v1/attention/backends/*)."""
    mla = any(layer.kind is LayerKind.LATENT for layer in _trunk(spec))
    backend = (s.attention_backend or "").upper()
    if mla and r.version >= (0, 7, 3):
        if r.version < ERAS["mla_preferred_block"]:
            # platforms/cuda.py check_and_update_config (<= 0.11): the MLA backend forces its block size
            if backend == "CUTLASS_MLA" or (not backend and r.cc and r.cc[0] == 10):
                return 128, "CUTLASS_MLA forces 128-token blocks"
            if backend == "FLASHINFER_MLA":
                return (s.block_size if s.block_size in (32, 64) else 64), "FLASHINFER_MLA: 32 or 64"
            if backend in ("", "FLASHMLA") and r.cc and r.cc[0] == 9:
                return 64, "FlashMLA forces 64-token blocks (Hopper)"
        else:
            # 0.12+: the first valid backend's preferred size (FLASH_ATTN_MLA on Hopper: multiples of 16;
            # FLASHINFER_MLA first on Blackwell: 32/64; TRITON_MLA elsewhere)
            if s.block_size is not None:
                return s.block_size, "--block-size"
            if backend == "FLASHMLA":
                return 64, "FLASHMLA backend: 64-token blocks"
            if backend == "CUTLASS_MLA":
                return 128, "CUTLASS_MLA backend: 128-token blocks"
            if backend == "FLASHINFER_MLA" or (not backend and r.cc and r.cc[0] == 10):
                return 32, "FLASHINFER_MLA backend: 32-token blocks"
    if s.block_size is not None:
        return s.block_size, "--block-size"
    return 16, "default"


def _trunk(spec: ModelSpec) -> list[LayerSpec]:
    """The layers vLLM runs: MTP / next-n layers are loaded only for speculative decoding."""
    return list(spec.layers[: spec.n_layers - spec.n_nextn_layers])


def pp_partition(n_layers: int, pp: int) -> list[tuple[int, int]]:
    """distributed/utils.py get_pp_indices: even split, the remainder to the stages before the last."""
    per = [n_layers // pp] * pp
    rem = n_layers % pp
    for i in range(2, rem + 2):
        per[-i] += 1
    out, start = [], 0
    for n in per:
        out.append((start, start + n))
        start += n
    return out


def kv_plan(spec: ModelSpec, s: VllmSettings, r: Resolved, layer_range: tuple[int, int] | None = None) -> KvPlan:
    """The KV layout of one rank (the layers in layer_range, default all)."""
    block, why = block_size_for(spec, s, r)
    trunk = _trunk(spec)
    lo, hi = layer_range or (0, len(trunk))
    specs: dict[int, KvSpec] = {}
    attn_bpt = []
    for layer in trunk:
        if layer.kind is LayerKind.NONE:
            continue
        if layer.attention is not None and layer.kind is not LayerKind.RECURRENT:
            kind, bpt = _attention_bytes_per_token(layer, r)
            win = layer.attention.window or 0
            if kind in ("sliding", "chunked") and not r.v1:
                kind, win = "full", 0  # V0's block manager allocates every layer for the whole sequence
            specs[layer.index] = KvSpec(kind, block, bytes_per_token=bpt, window=win)
            attn_bpt.append(bpt)
        if layer.recurrent is not None and (layer.kind is LayerKind.RECURRENT or layer.parallel_recurrent):
            if layer.parallel_recurrent:
                raise OomkitError(f"{spec.name}: vLLM's layout for parallel attention+Mamba layers (Falcon-H1) is "
                                  "not modelled")
            specs[layer.index] = KvSpec("mamba", block, state_bytes=_mamba_state_bytes(layer, r, s, spec.architecture),
                                        mamba_mode=r.mamba_cache_mode, spec_blocks=r.num_spec)
    label = why
    mamba = [k for k, v in specs.items() if v.kind == "mamba"]
    if mamba:
        if not r.v1:
            raise OomkitError(f"{spec.name}: hybrid Mamba models need vLLM's V1 engine (0.10+)")
        # model_executor/models/config.py HybridAttentionMambaModelConfig: the attention block grows until its
        # page holds a Mamba state (in multiples of 16; 64 for MLA), then the Mamba page is padded to match
        state = max(specs[i].state_bytes for i in mamba)
        if attn_bpt:
            align = 64 if any(v.kind == "mla" for v in specs.values()) else 16
            per_tok = max(attn_bpt)
            need = align * _cdiv(state, align * per_tok)
            block = max(block, need)
            page = block * per_tok
            label = f"attention block size raised to {block} tokens so a page holds one Mamba state"
        else:
            page = state
        specs = {k: (replace(v, block_size=block, padded_page=page) if v.kind == "mamba"
                     else replace(v, block_size=block)) for k, v in specs.items()}
    own = {k: v for k, v in specs.items() if lo <= k < hi}
    if not own:
        return KvPlan(layers={}, groups=(), group_size=1, page_bytes=0, block_size=block, label="no KV cache")
    hybrid_ok = r.v1 and r.at_least("hybrid_allocator") and not s.disable_hybrid_kv_cache_manager
    if any(v.kind == "chunked" for v in own.values()) and not r.at_least("chunked_hybrid"):
        hybrid_ok = False  # VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE was 0 by default
    kinds = {v.kind for v in own.values()}
    if len(kinds) > 1 and not hybrid_ok:
        # unify_hybrid_kv_cache_specs: sliding/chunked layers become full attention (all tokens kept)
        if "mamba" in kinds:
            raise OomkitError("Hybrid KV cache manager is disabled but failed to convert the KV cache specs to one "
                              "unified type.")
        own = {k: (replace(v, kind="full", window=0) if v.kind in ("sliding", "chunked") else v)
               for k, v in own.items()}
        kinds = {v.kind for v in own.values()}
    # unify_kv_cache_spec_page_size: layers with a smaller page get a proportionally larger block
    pages = {v.page_bytes for v in own.values()}
    if len(pages) > 1:
        biggest = max(pages)
        unified = {}
        for k, v in own.items():
            if v.page_bytes == biggest:
                unified[k] = v
            elif v.kind == "mamba":
                unified[k] = replace(v, padded_page=biggest)
            elif biggest % v.page_bytes == 0:
                unified[k] = replace(v, block_size=v.block_size * (biggest // v.page_bytes))
            else:
                raise OomkitError(f"{spec.name}: vLLM cannot unify the KV page sizes of its layers "
                                  "(NotImplementedError in unify_kv_cache_spec_page_size)")
        own = unified
    page = next(iter(own.values())).page_bytes
    # group layers of the same spec; uniform models: one group holding every layer
    buckets: dict[KvSpec, list[int]] = {}
    for k in sorted(own):
        buckets.setdefault(own[k], []).append(k)
    if len(buckets) == 1:
        sp, idx = next(iter(buckets.items()))
        return KvPlan(layers=own, groups=((sp, tuple(idx)),), group_size=len(idx), page_bytes=page,
                      block_size=min(v.block_size for v in own.values()), label=label)
    # _get_kv_cache_config_uniform_page_size: groups of group_size layers (the smallest type's count; the
    # largest when it is under 1.5x the smallest, in the newest releases)
    counts = [len(v) for v in buckets.values()]
    group_size = min(counts)
    if r.at_least("null_block") and max(counts) < group_size * 1.5:
        group_size = max(counts)
    groups = []
    for sp, idx in buckets.items():
        n = _cdiv(len(idx), group_size)
        for i in range(n):
            groups.append((sp, tuple(idx[i::n])))
    return KvPlan(layers=own, groups=tuple(groups), group_size=group_size, page_bytes=page,
                  block_size=min(v.block_size for v in own.values()), label=label)


def estimate_max_model_len(plan: KvPlan, available: int, max_len: int, batched: int) -> int:
    """kv_cache_utils.py estimate_max_model_len: binary search 1..max_model_len on the per-request need."""
    if plan.needed(1, batched) > available:
        return 0
    lo, hi, best = 1, max_len, 1
    while lo <= hi:
        mid = (lo + hi) // 2
        if plan.needed(mid, batched) <= available:
            best, lo = mid, mid + 1
        else:
            hi = mid - 1
    return best


# ---------------------------------------------------------------------------------------------------------
# Weights per rank (the "Model loading took" figure)


def _linear_weight(t: TensorSpec) -> bool:
    """Weights an online fp8 quantization (-q fp8) converts: the decoder's Linear / FusedMoE weights."""
    return (t.layer is not None and t.name.endswith(".weight") and len(t.shape) >= 2
            and not t.name.endswith(("norm.weight", "ffn_gate_inp.weight", "ssm_conv1d.weight")))


def rank_bytes(t: TensorSpec, spec: ModelSpec, r: Resolved, nbytes: int, ep: int) -> int:
    """Bytes of tensor t one rank holds: FusedMoE experts placed whole over the EP group when expert parallelism
    is on, everything else by vLLM's tensor-parallel layer classes (engines/_tp.py)."""
    if ep > 1 and "_exps." in t.name:
        return -(-nbytes // ep)
    return _tp.tensor_bytes_per_rank(replace(t, nbytes=nbytes), spec, r.tp)


def weights_by_rank(spec: ModelSpec, s: VllmSettings, r: Resolved) -> list[int]:
    """Bytes of weights each pipeline stage's ranks load (TP ranks of a stage hold the same amount)."""
    trunk_n = spec.n_layers - spec.n_nextn_layers
    parts = pp_partition(trunk_n, r.pp)
    ep = r.tp * r.dp if s.enable_expert_parallel else 1
    plain = spec.weights.format.lower() in MODEL_DTYPES or spec.weights.format.lower() in _DTYPE_ALIASES
    online_fp8 = (s.quantization or "").lower() in ("fp8", "ptpc_fp8", "fbgemm_fp8") and plain
    out = []
    for stage, (lo, hi) in enumerate(parts):
        first, last = stage == 0, stage == r.pp - 1
        total = 0
        for t in spec.weights.tensors:
            if t.layer is not None:
                if t.layer >= trunk_n or not lo <= t.layer < hi:
                    continue  # another stage's layer, or an MTP layer (loaded only for speculative decoding)
                copies = 1
            elif t.name == "token_embd.weight":
                # the embedding lives on the first stage; with tied embeddings the last stage builds its own
                # lm_head from it when PP > 1 (PPMissingLayer elsewhere)
                copies = (1 if first else 0) + (1 if spec.tied_embeddings and last and not first else 0)
            else:
                copies = 1 if last else 0  # output_norm, output: last stage
            if copies:
                nbytes = _tensor_bytes(t, r, plain, online_fp8 and _linear_weight(t))
                total += copies * rank_bytes(t, spec, r, nbytes, ep)
        total += _rope_cache_bytes(spec, r)
        out.append(int(total))
    return out


def _tensor_bytes(t: TensorSpec, r: Resolved, plain: bool, to_fp8: bool) -> int:
    if to_fp8:
        return t.n_elements  # fp8: one byte per weight (per-tensor scales are negligible)
    if plain or t.dtype.lower() in MODEL_DTYPES:
        return t.n_elements * r.dtype_bytes  # loaded (and cast) to the model dtype
    if t.dtype.lower() == "mxfp4" and "_exps" in t.name and len(t.shape) == 3:
        return _mxfp4_expert_bytes(t, r)
    return t.nbytes  # a quantized format: as stored


def _mxfp4_expert_bytes(t: TensorSpec, r: Resolved) -> int:
    """MXFP4 MoE experts (gpt-oss) as vLLM lays them out for its kernel (quantization/mxfp4.py,
    fused_moe/oracle/mxfp4.py mxfp4_round_up_hidden_size_and_intermediate_size): Marlin (before Hopper, and on
    Hopper before 0.10.2 or without triton_kernels) pads the intermediate size to 128 and the hidden size to 256;
    the Triton kernels on Hopper store each matrix with its reduction dimension padded to 256 (fitted: gpt-oss-120b
    64.38 GiB on v0.14.1, vllm#33155); FlashInfer on Blackwell pads both to 256."""
    k, n, experts = t.shape  # GGUF order: ne0 (the row, reduction dim) first
    down = "ffn_down_exps" in t.name
    hidden, inter = (n, k) if down else (k, n)
    cc = r.cc or (9, 0)
    if cc[0] >= 10:
        hidden, inter = _pad(hidden, 256), _pad(inter, 256)
    elif cc[0] == 9 and r.version >= (0, 10, 2):
        if down:
            inter = _pad(inter, 256)
        else:
            hidden = _pad(hidden, 256)
    else:
        hidden, inter = _pad(hidden, 256), _pad(inter, 128)
    return t.nbytes * (hidden * inter) // (k * n)


def _rope_cache_bytes(spec: ModelSpec, r: Resolved) -> int:
    """model_executor/layers/rotary_embedding: cos_sin_cache of max_position x rotary_dim in the model dtype."""
    a = next((layer.attention for layer in spec.layers if layer.attention is not None), None)
    if a is None or not spec.n_ctx_train:
        return 0
    rot = a.qk_rope_head_dim if a.kv_lora_rank else a.head_dim_k
    return spec.n_ctx_train * rot * r.dtype_bytes


# ---------------------------------------------------------------------------------------------------------
# Activation peak of the profile run, non-torch memory, CUDA graphs


def activation_bytes(spec: ModelSpec, s: VllmSettings, r: Resolved, last_stage: bool = True) -> int:
    """torch peak increase of profile_run (v1/worker/gpu_model_runner.py): _dummy_run of max_num_batched_tokens
    tokens, then _dummy_sampler_run on min(max_num_seqs, tokens) rows of full-vocabulary logits with top-k and
    top-p; MoE layers keep the fused-MoE workspace (T x top_k x (max(2N, H) + N)) alive."""
    T = r.max_num_batched_tokens
    S = min(r.max_num_seqs, T)
    b = r.dtype_bytes
    h = spec.n_embd
    trunk = _trunk(spec)
    ff = max((layer.ffn.n_ff or layer.ffn.n_ff_shared for layer in trunk), default=0)
    ff_rank = ff / r.tp
    k_hidden = FORWARD_HIDDEN if r.v1 else FORWARD_HIDDEN_V0
    forward = T * b * (3 * ff_rank + k_hidden * h)
    moe = [layer.ffn for layer in trunk if layer.ffn.is_moe]
    ws = 0.0
    if moe:
        f = max(moe, key=lambda x: x.n_ff_expert * x.n_experts_used)
        n_rank = f.n_ff_expert if s.enable_expert_parallel else f.n_ff_expert / r.tp
        ws = T * f.n_experts_used * (max(2 * n_rank, h) + n_rank) * b
    if not last_stage:
        return int(forward + ws)
    if not r.v1:
        per_elem = SAMPLER_BYTES_V0
    elif r.at_least("sampler_triton") or s.use_flashinfer_sampler:
        per_elem = SAMPLER_BYTES + b
    else:
        # the PyTorch sort path; before 0.12 FlashInfer's sampler replaced it when FlashInfer was installed
        # (VLLM_USE_FLASHINFER_SAMPLER unset), which depends on the installation: the heavier path is assumed
        # (gpt-oss-120b on 0.10.1 needs it to reproduce its -2.14 GiB; vllm#23278)
        per_elem = SAMPLER_BYTES_SORT + b
    sampler = S * spec.n_vocab * per_elem + T * h * b
    return int(max(forward, sampler) + ws)


def non_torch_bytes(r: Resolved) -> int:
    """The non-torch memory the profile counts against the budget (NCCL / custom all-reduce buffers, cuBLAS)."""
    if not r.v1:
        if not r.at_least("profile_increase"):
            return NON_TORCH_V0_ABS + (CONTEXT_MULTI - CONTEXT_TP1 if r.tp * r.pp > 1 else 0)
        return NON_TORCH_V0_TP if r.tp * r.pp > 1 else NON_TORCH_V0
    if r.tp > 1:
        return NON_TORCH_TP + int(0.035 * GiB) * (min(r.tp, 8) - 2)
    if r.pp > 1:
        return NON_TORCH_PP
    if r.at_least("sampler_flashinfer_opt_in") and not r.at_least("non_torch_025"):
        return NON_TORCH_TP1_OLD
    return NON_TORCH_TP1


def cudagraph_bytes(spec: ModelSpec, s: VllmSettings, r: Resolved, n_layers_rank: int) -> int:
    if s.enforce_eager:
        return 0
    return CUDAGRAPH_BASE + CUDAGRAPH_PER_LAYER * n_layers_rank


def context_bytes(r: Resolved) -> int:
    return CONTEXT_MULTI if r.tp * r.pp > 1 else CONTEXT_TP1


# ---------------------------------------------------------------------------------------------------------
# The estimate


@dataclass(frozen=True)
class VllmEstimate(MemoryEstimate):
    """A MemoryEstimate that also knows when vLLM would refuse to start (then it does not fit)."""

    error: str | None = None

    @property
    def fits(self) -> bool | None:
        if self.error is not None:
            return False
        return super().fits


@dataclass
class _Rank:
    index: int  # global rank
    device: Device | None
    stage: int
    layers: tuple[int, int]
    plan: KvPlan
    weights: int
    activation: int
    non_torch: int
    cudagraph: int
    context: int
    total: int | None = None
    requested: int | None = None
    available: int | None = None
    num_blocks: int | None = None
    host_weights: int = 0


def _cudagraphs_in_budget(s: VllmSettings, r: Resolved) -> bool:
    """gpu_worker.py determine_available_memory: the CUDA graph estimate is subtracted when
    VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS is set (default from 0.21; opt-in in 0.19-0.20) and graphs are on."""
    if not r.v1 or s.enforce_eager:
        return False
    if s.estimate_cudagraphs is not None:
        return s.estimate_cudagraphs and r.version >= (0, 19, 0)
    return r.at_least("cudagraph_budget")


def _gib(x: float, r: Resolved) -> str:
    v = x / GiB
    if r.at_least("format_gib"):
        return f"{round(v, 2)}"
    return f"{v:.2f}"


def estimate(spec: ModelSpec, devices: tuple[Device, ...], s: VllmSettings) -> VllmEstimate:
    if not devices:
        raise OomkitError("vLLM needs a GPU: give --vram or --gpu (vLLM's CPU backend is not modelled)")
    r = resolve(spec, devices, s)
    warnings: list[str] = list(r.warnings)
    world = r.tp * r.pp * r.dp
    if len(devices) < world and any(d.memory_bytes is not None for d in devices):
        if len(devices) == 1:
            warnings.append(f"{world} GPUs in use (TP {r.tp} x PP {r.pp} x DP {r.dp}); one size given, assumed "
                            "for every GPU")
        else:
            raise OomkitError(f"tensor x pipeline x data parallel = {world} GPUs, but {len(devices)} were given")
    devs = [devices[i] if i < len(devices) else replace(devices[0], id=f"CUDA{i}") for i in range(world)]
    if len({d.id for d in devs}) < len(devs):  # one GPU listed several times: one id per rank
        devs = [replace(d, id=f"CUDA{i}") for i, d in enumerate(devs)]
    if r.cc_guessed:
        warnings.append(f"GPU model {devices[0].name!r} is not in the GPU catalog: its attention backend (MLA block "
                        "size, bfloat16 support) is taken to be a Hopper's")
    trunk_n = spec.n_layers - spec.n_nextn_layers
    parts = pp_partition(trunk_n, r.pp)
    weights_stage = weights_by_rank(spec, s, r)
    ranks: list[_Rank] = []
    for g in range(world):
        stage = (g // r.tp) % r.pp
        plan = kv_plan(spec, s, r, parts[stage])
        act = activation_bytes(spec, s, r, last_stage=stage == r.pp - 1)
        n_layers_rank = parts[stage][1] - parts[stage][0]
        ranks.append(_Rank(index=g, device=devs[g], stage=stage, layers=parts[stage], plan=plan,
                           weights=weights_stage[stage], activation=act, non_torch=non_torch_bytes(r),
                           cudagraph=cudagraph_bytes(spec, s, r, n_layers_rank), context=context_bytes(r)))
    offload = int(s.cpu_offload_gb * GiB)
    for rk in ranks:
        if offload:
            moved = min(offload, rk.weights)
            rk.weights -= moved
            rk.host_weights = moved
    budget_cudagraphs = _cudagraphs_in_budget(s, r)
    known = all(rk.device.memory_bytes is not None for rk in ranks)
    error: str | None = None
    estimated_len: int | None = None
    for rk in ranks:
        total = cuda_total(rk.device)
        rk.total = total
        if s.kv_cache_memory_bytes is not None:
            rk.available = s.kv_cache_memory_bytes  # gpu_worker.py: "skipped memory profiling"
            continue
        if total is None:
            continue
        requested = math.ceil(total * r.util) if r.at_least("cudagraph_budget") else int(total * r.util)
        rk.requested = requested
        if rk.weights + rk.context > total and error is None:
            # the weights alone do not fit: PyTorch runs out of memory while loading, before any profiling
            error = (f"CUDA out of memory while loading the model: {_fmt(rk.weights)} of weights per GPU "
                     f"({rk.device.id}) on a GPU with {_fmt(total)} ({_fmt(total - rk.context)} free after the "
                     "CUDA context). Use more GPUs (--tensor-parallel-size / --pipeline-parallel-size), a quantized "
                     "checkpoint, or --cpu-offload-gb")
        if rk.device.free_bytes is not None:  # gpu_worker.py init_device: the snapshot's free memory
            free = rk.device.free_bytes
            if free < requested and r.v1:
                error = error or (f"Free memory on device ({_gib(free, r)}/{_gib(total, r)} GiB) on startup is less "
                                  f"than desired GPU memory utilization ({r.util}, {_gib(requested, r)} GiB). "
                                  "Decrease GPU memory utilization or reduce GPU memory used by other processes.")
        # one formula for every generation; what the terms hold differs: before 0.6.5 the profile's absolute
        # peak, here weights + activation, plus all non-torch memory (CUDA context too: NON_TORCH_V0_ABS); from
        # 0.6.5 only what the profile added; from 0.21 the CUDA graph estimate as well
        avail = requested - rk.weights - rk.activation - rk.non_torch
        if budget_cudagraphs:
            avail -= rk.cudagraph
        rk.available = int(avail)
    # blocks per rank, then the minimum over ranks (unify_kv_cache_configs / get_kv_cache_configs)
    plan0 = ranks[0].plan
    batched = r.max_num_batched_tokens
    null_block = r.at_least("null_block")
    max_len = r.max_model_len
    auto_fit_from: int | None = None
    if all(rk.available is not None for rk in ranks) and plan0.layers:
        for rk in ranks:
            if not rk.plan.layers:
                continue
            if r.v1:
                rk.num_blocks = max(int(rk.available // rk.plan.bytes_per_block), 0)
            else:
                # V0 CacheEngine.get_cache_block_size: block_size * per-token bytes of every layer
                rk.num_blocks = max(int(rk.available // (rk.plan.block_size * sum(
                    sp.bytes_per_token for sp in rk.plan.layers.values()))), 0)
        if s.num_gpu_blocks_override is not None:
            for rk in ranks:
                rk.num_blocks = s.num_gpu_blocks_override
        # the request-fits check (check_enough_kv_cache_memory) on every worker
        if error is None and r.v1:
            for rk in ranks:
                if not rk.plan.layers:
                    continue
                check = rk.available - (rk.plan.bytes_per_block if null_block else 0)
                if s.num_gpu_blocks_override is not None:
                    check = s.num_gpu_blocks_override * rk.plan.bytes_per_block
                if check <= 0:
                    error = "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` " \
                            "when initializing the engine."
                    if r.at_least("msg_fixed"):
                        error = error[:-1] + " (this flag also controls CPU memory reservation on the CPU " \
                            "backend, despite its name). See https://docs.vllm.ai/en/latest/configuration/" \
                            "conserving_memory/ for more details."
                    break
                need = rk.plan.needed(max_len, batched)
                if need > check:
                    fit = estimate_max_model_len(rk.plan, check, max_len, batched)
                    if s.max_model_len == -1 and r.version >= (0, 19, 0) and fit > 0:
                        auto_fit_from, max_len = max_len, min(max_len, fit)
                        warnings.append(f"Auto-fit max_model_len: reduced from {auto_fit_from} to {max_len} to fit "
                                        f"in available KV cache memory ({_gib(check, r)} GiB)")
                        continue
                    error = _too_long_message(r, max_len, need, check, fit)
                    estimated_len = fit
                    break
        elif error is None and not r.v1:
            rk = min(ranks, key=lambda x: x.num_blocks or 0)
            if not rk.num_blocks:
                error = "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when " \
                        "initializing the engine."
            elif rk.num_blocks * rk.plan.block_size < max_len:
                cap = rk.num_blocks * rk.plan.block_size
                error = (f"The model's max seq len ({max_len}) is larger than the maximum number of tokens that can "
                         f"be stored in KV cache ({cap}). Try increasing `gpu_memory_utilization` or decreasing "
                         "`max_model_len` when initializing the engine.")
                estimated_len = cap
    return _assemble(spec, s, r, ranks, warnings, error, estimated_len, max_len, known)


def _too_long_message(r: Resolved, max_len: int, need: int, available: int, fit: int) -> str:
    """kv_cache_utils.py check_enough_kv_cache_memory's ValueError, in the chosen release's words."""
    gib = (lambda x: f"{x / GiB:.2f}") if not r.at_least("format_gib") else (lambda x: f"{round(x / GiB, 2)}")
    model = "model's" if r.at_least("msg_fixed") else "models's"
    est = (f"Based on the available memory, the estimated maximum model length is {fit}. " if fit > 0 else "")
    msg = (f"To serve at least one request with the {model} max seq len ({max_len}), ({gib(need)} GiB KV cache is "
           f"needed, which is larger than the available KV cache memory ({gib(available)} GiB). {est}")
    if r.at_least("msg_fixed"):
        msg += ("Try increasing `gpu_memory_utilization` (which also controls CPU memory on the CPU backend) or "
                "decreasing `max_model_len` when initializing the engine. ")
    else:
        msg += "Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine. "
    if r.at_least("format_gib"):
        msg += "See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."
    return msg.strip()


def _assemble(spec: ModelSpec, s: VllmSettings, r: Resolved, ranks: list[_Rank], warnings: list[str],
              error: str | None, estimated_len: int | None, max_len: int, known: bool) -> VllmEstimate:
    batched = r.max_num_batched_tokens
    with_blocks = [rk for rk in ranks if rk.num_blocks is not None and rk.plan.layers]
    num_blocks = min((rk.num_blocks for rk in with_blocks), default=None)
    plan0 = next((rk.plan for rk in ranks if rk.plan.layers), ranks[0].plan)
    view: dict[str, Any] = {
        "engine_version": ".".join(map(str, r.version)),
        "engine": "V1" if r.v1 else "V0",
        "max_model_len": max_len,
        "max_num_seqs": r.max_num_seqs,
        "max_num_batched_tokens": batched,
        "gpu_memory_utilization": r.util,
        "dtype": r.dtype,
        "kv_cache_dtype": r.kv_dtype,
        "block_size": plan0.block_size,
        "block_size_reason": plan0.label,
        "kv_cache_groups": [{"kind": sp.kind, "layers": len(idx), "block_size": sp.block_size,
                             "page_bytes": sp.page_bytes} for sp, idx in plan0.groups],
        "kv_block_bytes": plan0.bytes_per_block,
        "model_loading_bytes": {rk.device.id: rk.weights for rk in ranks},
        "activation_peak_bytes": {rk.device.id: rk.activation for rk in ranks},
        "non_torch_bytes": {rk.device.id: rk.non_torch for rk in ranks},
        "cudagraph_bytes": {rk.device.id: rk.cudagraph for rk in ranks},
    }
    if any(rk.total is not None for rk in ranks):
        view["total_memory_bytes"] = {rk.device.id: rk.total for rk in ranks}
    if any(rk.requested is not None for rk in ranks):
        view["requested_memory_bytes"] = {rk.device.id: rk.requested for rk in ranks}
    if any(rk.available is not None for rk in ranks):
        view["available_kv_cache_bytes"] = {rk.device.id: rk.available for rk in ranks}
    lines = [f"Model loading took {_loading_str(ranks[0].weights, r)}"]
    if ranks[0].available is not None:
        if r.v1:
            lines.append(f"Available KV cache memory: {_gib(ranks[0].available, r)} GiB")
    tokens = concurrency = None
    # V1 raises before it reports the cache (kv_cache_utils.py check_enough_kv_cache_memory runs first); V0
    # prints its block counts and then refuses
    if num_blocks is not None and (error is None or not r.v1):
        bpr = plan0.blocks_per_request(max_len, batched)
        if r.v1:
            concurrency = num_blocks / bpr if bpr else None
            if r.at_least("cudagraph_budget"):  # _report_kv_cache_config: int(max_concurrency * max_model_len)
                tokens = int((concurrency or 0) * max_len)
            else:  # num_blocks // number of groups * block size
                tokens = num_blocks // plan0.n_groups * plan0.block_size
        else:
            tokens = num_blocks * plan0.block_size
            concurrency = tokens / max_len
        view.update(num_gpu_blocks=num_blocks, kv_cache_tokens=tokens,
                    max_concurrency=round(concurrency, 2) if concurrency is not None else None)
        if r.v1:
            ml = f"{max_len:,}"
            if r.at_least("null_block"):
                lines.append(f"GPU KV cache size: {tokens:,} tokens, Maximum concurrency for {ml} tokens per request: "
                             f"{concurrency:.2f}x")
            else:
                lines.append(f"GPU KV cache size: {tokens:,} tokens")
                lines.append(f"Maximum concurrency for {ml} tokens per request: {concurrency:.2f}x")
        else:
            cpu_blocks = int(s.swap_space * GiB // (plan0.block_size * sum(
                sp.bytes_per_token for sp in plan0.layers.values()))) if plan0.layers else 0
            label = "# GPU blocks" if r.version < (0, 7, 0) else "# cuda blocks"
            lines.append(f"{label}: {num_blocks}, # CPU blocks: {cpu_blocks}")
            lines.append(f"Maximum concurrency for {max_len} tokens per request: {concurrency:.2f}x")
    # one request at max_model_len, and max_num_seqs of them: what the KV cache must hold at least
    need_one = {rk.device.id: rk.plan.needed(max_len, batched) for rk in ranks}
    need_many = {rk.device.id: _needed_many(rk.plan, max_len, batched, r) for rk in ranks}
    if error is not None or not known:
        view["kv_needed_one_request_bytes"] = need_one
    if not known and s.kv_cache_memory_bytes is None:
        view["kv_needed_max_num_seqs_bytes"] = need_many
    if error is not None:
        view["error"] = error
        if estimated_len is not None:
            view["estimated_max_model_len"] = estimated_len
        warnings.append(f"vLLM refuses to start: {error}")
    if not known and s.kv_cache_memory_bytes is None:
        warnings.append("no GPU memory given: the KV cache shown is what one max_model_len request needs "
                        f"({max_len} tokens); {r.max_num_seqs} such requests need "
                        f"{_fmt(sum(need_many.values()))} in all. vLLM itself sizes "
                        "the cache from gpu_memory_utilization x the GPU's memory")
    budget_cudagraphs = _cudagraphs_in_budget(s, r)
    usages = []
    for rk in ranks:
        if rk.num_blocks is not None and num_blocks is not None and rk.plan.layers:
            if r.v1:
                kv = num_blocks * rk.plan.bytes_per_block
            else:
                kv = num_blocks * rk.plan.block_size * sum(sp.bytes_per_token for sp in rk.plan.layers.values())
        elif error is not None or rk.available is None:
            kv = need_one[rk.device.id]
        else:
            kv = 0
        overhead = rk.context + rk.non_torch + rk.cudagraph
        usages.append(Usage(id=rk.device.id, name=rk.device.name, memory_bytes=rk.device.memory_bytes,
                            weights_bytes=rk.weights, kv_cache_bytes=kv, compute_bytes=rk.activation,
                            overhead_bytes=overhead + (CUDA_DRIVER_RESERVED if rk.device.memory_bytes else 0)))
        if rk.total is not None and rk.requested is not None and not budget_cudagraphs and rk.cudagraph and r.v1:
            headroom = rk.total - rk.requested - rk.context
            if rk.cudagraph > headroom:
                warnings.append(f"{rk.device.id}: CUDA graphs (about {_fmt(rk.cudagraph)}) are captured after the KV "
                                f"cache, outside the {r.util} budget, and the {_fmt(max(headroom, 0))} left may not "
                                "hold them: lower --gpu-memory-utilization or use --enforce-eager")
    host = Usage(id="CPU", name="host", weights_bytes=sum(rk.host_weights for rk in ranks),
                 kv_cache_bytes=int(s.swap_space * GiB) * len(ranks) if not r.v1 else 0)
    per_token = _kv_bytes_per_token(ranks)
    view["log"] = "\n".join(lines)  # the start-up lines as this release prints them
    settings = s.to_dict()
    settings.update(max_model_len=max_len, gpu_memory_utilization=r.util, max_num_seqs=r.max_num_seqs,
                    max_num_batched_tokens=batched, enable_chunked_prefill=r.chunked_prefill,
                    enable_prefix_caching=r.prefix_caching, block_size=plan0.block_size, dtype=r.dtype,
                    engine_version=".".join(map(str, r.version)))
    layers = _layer_uses(spec, ranks, num_blocks)
    return VllmEstimate(model=spec, engine="vllm", settings=settings, devices=tuple(usages), host=host,
                        engine_view=view, kv_bytes_per_token=per_token, layers=layers, warnings=tuple(warnings),
                        error=error)


def _needed_many(plan: KvPlan, max_len: int, batched: int, r: Resolved) -> int:
    """KV for max_num_seqs requests of max_model_len each (whole blocks per request)."""
    if not plan.layers:
        return 0
    return plan.needed(max_len, batched) * r.max_num_seqs


def _loading_str(weights: int, r: Resolved) -> str:
    if not r.v1:
        return f"{weights / GiB:.4f} GB"  # V0 model_runner.py: "Loading model weights took %.4f GB"
    if r.at_least("format_gib"):
        return f"{round(weights / GiB, 2)} GiB memory"
    return f"{weights / GiB:.4f} GiB"


def _fmt(n: int) -> str:
    return f"{n / GiB:.2f} GiB"


def _kv_bytes_per_token(ranks: list[_Rank]) -> int | None:
    """Bytes one more token of one sequence costs over all ranks (full-attention and MLA layers; sliding,
    chunked and Mamba layers are bounded)."""
    seen: set[tuple[int, int]] = set()
    total = 0
    linear = False
    for rk in ranks:
        for idx, sp in rk.plan.layers.items():
            if sp.kind in ("full", "mla"):
                total += sp.bytes_per_token
                linear = True
            seen.add((rk.index, idx))
    return total if linear else None


def _layer_uses(spec: ModelSpec, ranks: list[_Rank], num_blocks: int | None) -> tuple[LayerUse, ...]:
    first_by_stage = {}
    for rk in ranks:
        first_by_stage.setdefault(rk.stage, rk)
    out = []
    for layer in spec.layers:
        rk = next((x for x in first_by_stage.values() if x.layers[0] <= layer.index < x.layers[1]), None)
        if rk is None:
            out.append(LayerUse(index=layer.index, kind=layer.kind.value, device="-", weights_bytes=0, kv_bytes=0,
                                recurrent_bytes=0))
            continue
        sp = rk.plan.layers.get(layer.index)
        kv = sp.page_bytes * num_blocks if sp is not None and num_blocks is not None else 0
        w = sum(t.nbytes for t in spec.weights.tensors if t.layer == layer.index)
        is_state = sp is not None and sp.kind == "mamba"
        out.append(LayerUse(index=layer.index, kind=layer.kind.value, device=rk.device.id, weights_bytes=w,
                            kv_bytes=0 if is_state else kv, recurrent_bytes=kv if is_state else 0,
                            cells=(num_blocks * sp.block_size if sp is not None and num_blocks and not is_state
                                   else None)))
    return tuple(out)


def _parse_args(argv: list[str], env: dict[str, str] | None = None, program: str | None = None):
    from .vllm_args import parse_args

    return parse_args(argv, env)


def _flag_takes_value(name: str, following: str | None) -> bool:
    from .vllm_args import flag_takes_value

    return flag_takes_value(name, following)


# vLLM loads the checkpoint as published (its config's dtype / quantization_config): the default format hook.
ENGINE = EngineModule(
    "vllm", VllmSettings, estimate, _parse_args, _flag_takes_value,
    context_field="max_model_len", neutral=NEUTRAL,
    kv_types=("auto", "fp8"), kv_fields=("kv_cache_dtype",),  # --kv-cache-dtype (cache_dtype choices)
    programs={"vllm": None},
    python_modules={"vllm.entrypoints.openai.api_server": None, "vllm.entrypoints.api_server": None},
    newest=NEWEST, eras=ERAS,
)
