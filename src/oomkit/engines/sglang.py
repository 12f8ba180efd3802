"""SGLang (`python -m sglang.launch_server`, `sglang serve`): what it really allocates, per GPU.

SGLang loads the weights, then gives the KV cache everything that is free except a slice of the memory that was
free *before* the weights loaded:

    rest = free_after_weights - free_before_weights * (1 - mem_fraction_static)
    max_total_num_tokens = int(rest // cell_size) // page_size * page_size

Each rule below was read in SGLang's own source, in the PyPI wheels of 0.4.6.post5, 0.4.7, 0.4.8, 0.4.10,
0.5.1-0.5.10, 0.5.14, 0.5.18, 0.5.20 and 0.5.23 (the newest), and is cited as `file:function`. The file moved
over time: 0.4.x-0.5.2 `model_executor/model_runner.py:ModelRunner.profile_max_num_token/init_memory_pool`;
0.5.3-0.5.13 `model_executor/model_runner_kv_cache_mixin.py`; 0.5.14+ `model_executor/pool_configurator.py` and
`mem_cache/kv_cache_configurator.py:KVCacheConfigurator._profile_available_bytes`. Defaults live in
`server_args.py:ServerArgs._handle_gpu_memory_settings` (0.5.20+: `arg_groups/memory_hook.py`).
Behaviour that changed is keyed on `engine_version` (default the newest), see ERAS; a boundary is the first
release read that has the new rule.

SGLang prints "GB" but divides by 2**30 (`get_available_gpu_memory` returns free / (1 << 30); `GB = 1 << 30` in
`mem_cache/memory_pool.py`), so every printed size here is GiB.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, fields, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..errors import OomkitError
from ..memory import Device, LayerUse, MemoryEstimate, Usage
from ..model.spec import LayerKind, LayerSpec, ModelSpec, TensorSpec
from ..units import GiB, MiB
from . import _tp
from .base import EngineModule

NEWEST = "0.5.23"
OLDEST = (0, 4, 0)

ERAS = {
    # server_args.py __post_init__: mem_fraction_static = (gpu_mem - reserved_mem) / gpu_mem, reserved by GPU
    # class (2.8/9.5/12 GiB + tp*pp/10 or /2, 32 GiB above 160 GiB). Before: 0.88/0.87/0.85/0.81/0.79 by tp*pp.
    "reserve_by_gpu_class": (0, 4, 8),
    # _handle_gpu_memory_settings: reserved_mem = 512 MiB + max(chunked_prefill_size, 2048) * 1.5 MiB
    # + cuda_graph_max_bs * 2 MiB + tp*pp/8 GiB, at least 10 GiB above 60 GiB; six GPU classes pick
    # chunked_prefill_size and cuda_graph_max_bs.
    "reserve_by_activation": (0, 5, 3),
    # RTX 4090/5090 class (< 35 GiB): cuda_graph_max_bs 24 (16 before) for tp < 4.
    "max_bs_24": (0, 5, 5),
    # hybrid Mamba/GDN: the state pool and the KV pool split the rest by mamba_full_memory_ratio (0.9).
    "mamba_ratio": (0, 5, 4),
    # cell = kv_heads * (head_dim + v_head_dim) * layers (before: head_dim * 2).
    "cell_k_plus_v": (0, 5, 7),
    # PR #18039: sliding-window pools split by bytes (full and SWA layers priced with their own heads/dims);
    # before: tokens of an all-full-layer cell spread over num_hidden_layers.
    "swa_split_by_bytes": (0, 5, 9),
    # Piecewise (prefill) CUDA graphs on by default; their reserve (8 MiB per captured size, 1.5 GiB with MLA)
    # joins reserved_mem.
    "prefill_graph_default": (0, 5, 10),
    # Speculative decoding no longer adds 2/6 GiB to reserved_mem (draft weights are measured instead).
    "no_spec_reserve": (0, 5, 14),
    # The Mamba pool's padding slot is budgeted: size = (budget - per_req) // per_req, state = (size + 1) * per_req.
    "mamba_padding_slot": (0, 5, 18),
    # rest <= 0 raises "Loaded weights leave no GPU memory for the KV cache ..." with the minimum viable fraction
    # (0.5.11-0.5.13 not read; before: "Not enough memory. Please try to increase --mem-fraction-static.").
    "no_memory_message": (0, 5, 14),
    # < 35 GiB GPUs: chunked_prefill_size 4096 and cuda_graph_max_bs 48 (160 at tp >= 4); no GPU: mfs 0.95.
    "small_gpu_4096": (0, 5, 20),
    # A default decode cuda_graph_max_bs is capped at --max-running-requests.
    "decode_bs_capped": (0, 5, 23),
}

# Not printed by SGLang: memory already in use when it measures "free before the weights" (the "Load weight begin.
# avail mem" line; bootstrap.py measure_pre_model_load_memory). Labelled estimates, not engine rules:
# - every GPU: the driver's reserve that nvidia-smi counts in memory.total (H100: 81,559 MiB vs cudaMemGetInfo's
#   79.19 GiB, 0.46 GiB) plus the CUDA context (0.3 GiB, pytorch#107667; 0.51 GiB with torch 2.10, vLLM's
#   worker-init snapshot): 0.8 GiB;
# - tp*pp > 1, PCIe cards: the distributed init, "Init torch distributed ends. mem usage=0.13 GB" (QwQ-32B, 4x L4);
# - tp*pp > 1, NVLink data-centre GPUs: NCCL's NVLS/NVLink buffers, 1.7 GiB (DeepSeek-V4 on 8x H200: 140.40 GiB
#   total - 137.90 GiB free before load - 0.8; vLLM's TP2 H100 snapshot shows cuda_memory 2.01 GiB incl. context).
PRE_LOAD_OVERHEAD = int(0.8 * GiB)
DIST_INIT_OVERHEAD_PCIE = int(0.13 * GiB)
DIST_INIT_OVERHEAD_NVLINK = int(1.7 * GiB)


def pre_load_overhead(devices: tuple[Device, ...], world: int) -> int:
    """Bytes in use on each GPU before the weights load (see PRE_LOAD_OVERHEAD)."""
    if world <= 1:
        return PRE_LOAD_OVERHEAD
    # NVLink as the GPU catalog knows it; a GPU of 70 GiB or more without a name is taken for a data-centre part
    nvlink = all(d.nvlink or (d.memory_bytes or 0) >= 70 * GiB for d in devices)
    return PRE_LOAD_OVERHEAD + (DIST_INIT_OVERHEAD_NVLINK if nvlink else DIST_INIT_OVERHEAD_PCIE)


# model_config.py is_hybrid_swa_model: only these architectures get the two-pool sliding-window cache; other
# sliding-window models (Gemma 2/3, Mistral v0.1) cache every layer in full. Names as oomkit's ModelSpec
# (llama.cpp) spells them.
HYBRID_SWA_ARCHS = frozenset({"llama4", "gpt-oss", "gemma4", "mimo2", "mimo_v2_flash", "step35", "granite_swa"})

KV_CACHE_DTYPES = {  # --kv-cache-dtype choices (0.5.23 arg_groups/fields/model.py) -> bytes per element
    "auto": None, "fp8_e5m2": 1, "fp8_e4m3": 1, "mxfp8": 1, "bf16": 2, "bfloat16": 2,
    "nvfp4": None, "fp4_mx_block16": None, "fp4_e2m1": None,
}
DTYPES = {"auto": None, "half": 2, "float16": 2, "bfloat16": 2, "float": 4, "float32": 4}
_DTYPE_NAMES = {"half": "float16", "float": "float32"}


# oomkit's engine-neutral options (--ctx, --parallel, --kv-type, --engine-version, --kv-memory) -> these settings
# (commands/_model_args.py neutral_options reads a module's NEUTRAL)
NEUTRAL = {"ctx": "context_length", "parallel": "max_running_requests", "kv_type": "kv_cache_dtype",
           "engine_version": "engine_version", "kv_memory": "kv_cache_memory_bytes"}


@dataclass(frozen=True)
class SGLangSettings:
    """SGLang's server arguments by their own names (server_args.py ServerArgs; None = SGLang's default)."""

    model_path: str | None = None  # --model-path / --model
    tp_size: int = 1  # --tp-size / --tensor-parallel-size / --tp
    dp_size: int = 1  # --dp-size
    pp_size: int = 1  # --pp-size
    enable_dp_attention: bool = False  # --enable-dp-attention
    mem_fraction_static: float | None = None  # None: by GPU memory and TP (see default_mem_fraction_static)
    context_length: int | None = None  # None: the model's derived context length
    kv_cache_dtype: str = "auto"
    chunked_prefill_size: int | None = None  # None: by GPU memory
    max_prefill_tokens: int = 16384
    max_running_requests: int | None = None
    max_total_tokens: int | None = None
    page_size: int | None = None  # None: 1, or what the attention backend forces
    attention_backend: str | None = None
    dtype: str = "auto"
    quantization: str | None = None
    cuda_graph_max_bs: int | None = None
    disable_cuda_graph: bool = False
    disable_piecewise_cuda_graph: bool = False
    swa_full_tokens_ratio: float = 0.8
    mamba_full_memory_ratio: float = 0.9
    max_mamba_cache_size: int | None = None
    mamba_ssm_dtype: str = "float32"
    speculative_algorithm: str | None = None
    allow_overwrite_longer_context_len: bool = False  # env SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1
    engine_version: str = NEWEST
    kv_cache_memory_bytes: int | None = None  # oomkit --kv-memory: size the pool from this budget

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


# ---------------------------------------------------------------------------------------------------------
# Versions


def parse_version(version: str | None) -> tuple[int, ...]:
    if not version or version in ("newest", "latest"):
        version = NEWEST
    m = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.(\d+))?(?:\.?post(\d+))?(?:rc\d+|\.dev\d+.*)?", str(version).strip())
    if not m:
        raise OomkitError(f"cannot read SGLang version {version!r}: expected e.g. 0.5.2 or 0.4.6.post5")
    v = tuple(int(x or 0) for x in m.groups())
    if v[:3] < OLDEST:
        raise OomkitError(f"SGLang {version}: oomkit models SGLang 0.4.0 and newer")
    return v


def _at_least(v: tuple[int, ...], era: str) -> bool:
    return v[:3] >= ERAS[era]


# ---------------------------------------------------------------------------------------------------------
# Defaults that depend on the GPU (server_args.py _handle_gpu_memory_settings)


@dataclass(frozen=True)
class Defaults:
    mem_fraction_static: float
    chunked_prefill_size: int
    cuda_graph_max_bs: int
    reserved_mib: float | None  # what mem_fraction_static keeps back (None for the 0.4.x table)
    prefill_graph_sizes: int  # captured prefill (piecewise) CUDA graph sizes counted in the reserve


def _capacity_defaults(gpu_mib: int | None, s: SGLangSettings, v: tuple[int, ...]) -> tuple[int, int]:
    """chunked_prefill_size and cuda_graph_max_bs SGLang picks for this GPU."""
    tp = s.tp_size
    if gpu_mib is None:
        cps, bs = 4096, 160
    elif not _at_least(v, "reserve_by_activation"):
        # 0.4.x: chunked 2048 below 25,000 MiB (0.5.0-0.5.2: below 35 GiB), else 8192 (16384 from 160 GiB in 0.5.x);
        # cuda_graph_max_bs 8 (80 at tp >= 4) on small GPUs, else 160 (cuda_graph_runner default)
        small = gpu_mib < (35 * 1024 if v[:2] >= (0, 5) else 25_000)
        cps = 2048 if small else (16384 if v[:2] >= (0, 5) and gpu_mib >= 160 * 1024 else 8192)
        bs = (8 if tp < 4 else 80) if small else 160
    elif gpu_mib < 20 * 1024:  # T4, 4080
        cps, bs = 2048, 8
    elif gpu_mib < 35 * 1024:  # A10, 4090, 5090
        if _at_least(v, "small_gpu_4096"):
            cps, bs = 4096, (48 if tp < 4 else 160)
        else:
            cps, bs = 2048, ((24 if _at_least(v, "max_bs_24") else 16) if tp < 4 else 80)
    elif gpu_mib < 60 * 1024:  # A100 40GB, L40
        cps, bs = 4096, (32 if tp < 4 else 160)
    elif gpu_mib < 160 * 1024:  # H100, A100 80GB, H20, H200
        cps, bs = 8192, (256 if tp < 4 else 512)
    else:  # B200, MI300
        cps, bs = 16384, 512
    if s.chunked_prefill_size is not None:
        cps = s.chunked_prefill_size
    if s.cuda_graph_max_bs is not None:
        bs = s.cuda_graph_max_bs
    elif _at_least(v, "decode_bs_capped") and s.max_running_requests is not None:
        bs = min(bs, s.max_running_requests)
    return cps, bs


def prefill_graph_sizes(max_tokens: int) -> list[int]:
    """arg_groups/cuda_graph_hook.py generate_prefill_cuda_graph_batch_sizes (0.5.8+
    _generate_piecewise_cuda_graph_tokens): the token counts captured for prefill."""
    sizes = (list(range(4, 33, 4)) + list(range(48, 257, 16)) + list(range(288, 513, 32))
             + list(range(576, 1025, 64)) + list(range(1280, 4097, 256)) + list(range(4608, max_tokens + 1, 512)))
    return [x for x in sizes if x <= max_tokens]


def default_mem_fraction_static(gpu_mib: int | None, s: SGLangSettings, *, mla: bool = False,
                                version: str | None = None) -> Defaults:
    """mem_fraction_static SGLang picks when it is not given, with the chunked prefill and CUDA graph sizes it
    is derived from. gpu_mib: the smallest GPU's memory.total as nvidia-smi prints it (utils
    get_nvgpu_memory_capacity), None when unknown."""
    v = parse_version(version or s.engine_version)
    cps, bs = _capacity_defaults(gpu_mib, s, v)
    tp_pp = s.tp_size * s.pp_size
    if not _at_least(v, "reserve_by_gpu_class"):
        # 0.4.6.post5 server_args.py __post_init__
        if gpu_mib is not None and gpu_mib <= 81920:
            mfs = 0.79 if tp_pp >= 16 else 0.81 if tp_pp >= 8 else 0.85 if tp_pp >= 4 else 0.87 if tp_pp >= 2 \
                else 0.88
        else:
            mfs = 0.88
        if gpu_mib is not None and gpu_mib > 96 * 1024:
            mfs = min(mfs + 48 * 1024 * (1 - mfs) / gpu_mib, (gpu_mib - 1024 * 18) / gpu_mib)
        return Defaults(mfs, cps, bs, None, 0)
    if gpu_mib is None:
        return Defaults(0.95 if _at_least(v, "small_gpu_4096") else 0.88, cps, bs, None, 0)
    spec = (s.speculative_algorithm or "").upper() or None
    if not _at_least(v, "reserve_by_activation"):
        # 0.4.8-0.5.2: reserved by GPU class
        if gpu_mib < 35 * 1024:
            reserved = (2.8 + tp_pp / 10) * 1024
        elif gpu_mib < 90 * 1024:
            reserved = (9.5 + tp_pp / 2) * 1024
        elif gpu_mib < 160 * 1024:
            reserved = (12 + tp_pp / 2) * 1024
        else:
            reserved = 32 * 1024
        if spec:
            reserved += (6 if spec == "STANDALONE" else 2) * 1024
        if s.enable_dp_attention:
            reserved += 4 * 1024
        return Defaults(round((gpu_mib - reserved) / gpu_mib, 3), cps, bs, reserved, 0)
    # 0.5.3+: activations of one prefill chunk + CUDA graphs + parallel slack
    reserved = 512 + max(cps if cps > 0 else s.max_prefill_tokens, 2048) * 1.5 + tp_pp / 8 * 1024
    if not s.disable_cuda_graph:
        reserved += bs * 2
    dp = s.dp_size if s.enable_dp_attention else 1
    if s.enable_dp_attention:
        reserved += bs * dp * 3 + (bs * dp * 1.5 if bs > 300 else 0)
    n_graphs = 0
    prefill_graph = (_at_least(v, "prefill_graph_default") and not s.disable_cuda_graph
                     and not s.disable_piecewise_cuda_graph and s.pp_size == 1 and not s.enable_dp_attention
                     and not spec)
    if prefill_graph:
        if mla:
            reserved += 1.5 * 1024  # "MLA backend overhead is much higher than expected with fa3"
        else:
            max_tokens = cps if s.max_total_tokens is None else min(cps, s.max_total_tokens)
            n_graphs = len(prefill_graph_sizes(max_tokens))
            reserved += n_graphs * 8
    if gpu_mib > 60 * 1024:
        reserved = max(reserved, 10 * 1024)
    if spec and not _at_least(v, "no_spec_reserve"):
        reserved += (6 if spec == "STANDALONE" else 0 if spec == "NGRAM" else
                     4 if _at_least(v, "prefill_graph_default") else 2) * 1024
    return Defaults(round((gpu_mib - reserved) / gpu_mib, 3), cps, bs, reserved, n_graphs)


# ---------------------------------------------------------------------------------------------------------
# What the model puts in the pools


@dataclass(frozen=True)
class Layout:
    """How SGLang caches this model on one rank."""

    mla: bool
    full_layers: tuple[LayerSpec, ...]  # layers in the full pool (all attention layers unless hybrid SWA)
    swa_layers: tuple[LayerSpec, ...]  # layers in the sliding-window pool (hybrid-SWA architectures only)
    mamba_layers: tuple[LayerSpec, ...]
    kv_bytes: float  # bytes per element of the KV cache
    kv_dtype: str
    model_dtype: str
    attn_tp: int
    page_size: int
    labels: tuple[str, ...] = ()


def _model_dtype(spec: ModelSpec, s: SGLangSettings) -> str:
    """configs/model_config.py _get_and_verify_dtype: auto = the config's dtype, float32 -> float16 (Gemma:
    bfloat16)."""
    if s.dtype not in DTYPES:
        raise OomkitError(f"error: argument --dtype: invalid choice: {s.dtype!r} (choose from "
                          + ", ".join(repr(k) for k in DTYPES) + ")")
    if s.dtype != "auto":
        return _DTYPE_NAMES.get(s.dtype, s.dtype)
    fmt = spec.weights.format.lower()
    if fmt in ("float32", "fp32", "f32"):
        return "bfloat16" if spec.architecture.startswith("gemma") else "float16"
    if fmt in ("float16", "fp16", "f16"):
        return "float16"
    return "bfloat16"


def _trunk(spec: ModelSpec) -> tuple[LayerSpec, ...]:
    """The layers the target model runs (next-n / MTP layers belong to the draft worker)."""
    return spec.layers[: spec.n_layers - spec.n_nextn_layers]


def layout(spec: ModelSpec, s: SGLangSettings, layers: tuple[LayerSpec, ...] | None = None) -> Layout:
    if s.kv_cache_dtype not in KV_CACHE_DTYPES:
        raise OomkitError(f"error: argument --kv-cache-dtype: invalid choice: {s.kv_cache_dtype!r} (choose from "
                          + ", ".join(repr(k) for k in KV_CACHE_DTYPES) + ")")
    model_dtype = _model_dtype(spec, s)
    if s.kv_cache_dtype == "auto":
        kv_bytes, kv_dtype = DTYPES[model_dtype], model_dtype  # model_runner init_memory_pool: auto = self.dtype
    elif KV_CACHE_DTYPES[s.kv_cache_dtype] is None:
        raise OomkitError(f"--kv-cache-dtype {s.kv_cache_dtype}: FP4 KV caches are not modelled by oomkit yet")
    else:
        kv_bytes, kv_dtype = KV_CACHE_DTYPES[s.kv_cache_dtype], s.kv_cache_dtype
    layers = _trunk(spec) if layers is None else layers
    attn = [la for la in layers if la.attention is not None and la.kind is not LayerKind.NONE and la.kv_source is None]
    mamba = tuple(la for la in layers if la.recurrent is not None
                  and (la.kind is LayerKind.RECURRENT or la.parallel_recurrent))
    mla = any(la.kind is LayerKind.LATENT for la in attn)
    labels: list[str] = []
    windowed = [la for la in attn if la.kind in (LayerKind.SLIDING, LayerKind.CHUNKED)]
    if windowed and spec.architecture in HYBRID_SWA_ARCHS:
        full = tuple(la for la in attn if la not in windowed)
        swa = tuple(windowed)
    else:
        full, swa = tuple(attn), ()
        if windowed:
            labels.append(f"{spec.architecture}: SGLang keeps sliding-window layers in the full pool "
                          "(not a hybrid-SWA architecture in model_config.py is_hybrid_swa_model)")
    if s.page_size is not None:
        if s.page_size < 1:
            raise OomkitError(f"--page-size must be at least 1, got {s.page_size}")
        page = s.page_size
    else:
        # server_args.py: FlashMLA forces 64, CUTLASS MLA 128, TRT-LLM MLA/MHA 64, Ascend 128; otherwise 1
        page = {"flashmla": 64, "cutlass_mla": 128, "trtllm_mla": 64, "trtllm_mha": 64, "ascend": 128}.get(
            s.attention_backend or "", 1)
    attn_tp = s.tp_size // s.dp_size if s.enable_dp_attention else s.tp_size
    if attn_tp < 1:
        raise OomkitError(f"--dp-size {s.dp_size} must not exceed --tp-size {s.tp_size} with --enable-dp-attention")
    return Layout(mla=mla, full_layers=full, swa_layers=swa, mamba_layers=mamba, kv_bytes=kv_bytes,
                  kv_dtype=kv_dtype, model_dtype=model_dtype, attn_tp=attn_tp, page_size=page,
                  labels=tuple(labels))


def _row(la: LayerSpec, lay: Layout, v: tuple[int, ...]) -> tuple[int, int]:
    """(K, V) elements per token of one layer on one rank (memory_pool.py MHATokenToKVPool / MLATokenToKVPool)."""
    a = la.attention
    if la.kind is LayerKind.LATENT:
        return a.kv_lora_rank + a.qk_rope_head_dim, 0  # one latent row, replicated on every TP rank
    heads = _tp.kv_heads_per_rank(a.n_kv_heads, lay.attn_tp)
    return heads * a.head_dim_k, heads * a.head_dim_v


def _cell_row(la: LayerSpec, lay: Layout, v: tuple[int, ...]) -> int:
    """Elements per token one layer adds to SGLang's cell_size. Before 0.5.7 the cell took head_dim twice."""
    k, vv = _row(la, lay, v)
    if la.kind is LayerKind.LATENT:
        return k
    if not _at_least(v, "cell_k_plus_v"):
        return 2 * k
    return k + vv


def _elem_bytes(n_elements: int, lay: Layout, s: SGLangSettings) -> float:
    b = n_elements * lay.kv_bytes
    if s.kv_cache_dtype == "mxfp8":
        b += n_elements // 32  # MHATokenToKVPoolMXFP8: one scale byte per 32 elements
    return b


def mamba_cache_per_req(lay: Layout, s: SGLangSettings, spec: ModelSpec) -> tuple[int, int]:
    """(conv, ssm) bytes of one request's state on one rank (configs/mamba_utils.py Mamba2CacheParams
    .mamba_cache_per_req: conv (conv_dim/tp, d_conv-1) in the model dtype, temporal (heads/tp, head_dim,
    state) in mamba_ssm_dtype, float32 by default)."""
    conv_b = DTYPES[lay.model_dtype]
    ssm_b = {"float32": 4, "float16": 2, "bfloat16": 2}.get(s.mamba_ssm_dtype)
    if ssm_b is None:
        raise OomkitError(f"--mamba-ssm-dtype {s.mamba_ssm_dtype}: expected float32, bfloat16 or float16")
    conv = ssm = 0
    tp = lay.attn_tp
    for la in lay.mamba_layers:
        r = la.recurrent
        if r.kind not in ("gated_delta_net", "mamba2"):
            raise OomkitError(f"{spec.name}: SGLang's state pool for {r.kind} layers is not modelled by oomkit")
        conv_dim = r.d_inner + 2 * r.n_group * r.d_state
        conv += -(-conv_dim // tp) * (r.d_conv - 1) * conv_b
        ssm += r.d_inner * r.d_state // tp * ssm_b  # (heads/tp) x head_dim x state
    return conv, ssm


# ---------------------------------------------------------------------------------------------------------
# The token pool


class NotEnoughMemory(OomkitError):
    """SGLang refuses to start: the weights leave nothing for the KV pool."""


@dataclass(frozen=True)
class SubPool:
    name: str  # "full", "swa", "mla"
    tokens: int
    n_layers: int
    k_bytes: int
    v_bytes: int


@dataclass(frozen=True)
class Pool:
    max_total_num_tokens: int
    cell_bytes: float  # bytes per token of max_total_num_tokens (SWA: full + ratio x swa)
    rest_bytes: int  # what the KV (and state) pool may take
    mem_fraction_static: float | None
    pools: tuple[SubPool, ...]
    full_tokens: int | None = None
    swa_tokens: int | None = None
    max_mamba_cache_size: int | None = None
    conv_state_bytes: int = 0
    ssm_state_bytes: int = 0

    @property
    def k_bytes(self) -> int:
        return sum(p.k_bytes for p in self.pools)

    @property
    def v_bytes(self) -> int:
        return sum(p.v_bytes for p in self.pools)

    @property
    def kv_bytes(self) -> int:
        return self.k_bytes + self.v_bytes

    @property
    def state_bytes(self) -> int:
        return self.conv_state_bytes + self.ssm_state_bytes


def kv_pools(lay: Layout, s: SGLangSettings, v: tuple[int, ...], tokens: int, swa_tokens: int | None = None
             ) -> tuple[SubPool, ...]:
    """The buffers SGLang allocates for `tokens` (memory_pool.py _create_buffers: (size + page_size) rows per
    layer for K and for V, or one latent row for MLA; the SWA pool holds swa_tokens)."""

    def sub(name: str, layers: tuple[LayerSpec, ...], n: int) -> SubPool:
        k = vb = 0.0
        for la in layers:
            ke, ve = _row(la, lay, v)
            k += _elem_bytes((n + lay.page_size) * ke, lay, s)
            vb += _elem_bytes((n + lay.page_size) * ve, lay, s)
        return SubPool(name, n, len(layers), int(k), int(vb))

    out = []
    if lay.full_layers:
        out.append(sub("mla" if lay.mla else "full", lay.full_layers, tokens))
    if lay.swa_layers:
        out.append(sub("swa", lay.swa_layers, tokens if swa_tokens is None else swa_tokens))
    return tuple(out)


def _cell(lay: Layout, s: SGLangSettings, v: tuple[int, ...], layers: tuple[LayerSpec, ...]) -> float:
    return sum(_elem_bytes(_cell_row(la, lay, v), lay, s) for la in layers)


def size_pool(spec: ModelSpec, s: SGLangSettings, *, avail_after_load: float | None = None,
              pre_load_free: float | None = None, kv_budget: int | None = None, gpu_mib: int | None = None,
              lay: Layout | None = None) -> Pool:
    """The KV (and Mamba state) pool of one rank.

    avail_after_load / pre_load_free: free bytes after and before the weights loaded (the "Load weight end/begin.
    avail mem" lines; SGLang takes the minimum over ranks). kv_budget: size from this many bytes instead
    (oomkit's --kv-memory). gpu_mib: memory.total for the mem_fraction_static default.
    """
    v = parse_version(s.engine_version)
    lay = lay or layout(spec, s)
    mfs = None
    if kv_budget is not None:
        rest_gib = kv_budget / GiB
    else:
        if avail_after_load is None or pre_load_free is None:
            raise OomkitError("SGLang sizes its KV pool from free GPU memory: give the GPU memory or --kv-memory")
        mfs = s.mem_fraction_static
        if mfs is None:
            mfs = default_mem_fraction_static(gpu_mib, s, mla=lay.mla).mem_fraction_static
        if not 0 < mfs <= 1:
            raise OomkitError(f"--mem-fraction-static must be in (0, 1], got {mfs}")
        # profile_max_num_token: rest_memory = available_gpu_memory - total_gpu_memory * (1 - mem_fraction_static),
        # both in GiB as floats
        rest_gib = avail_after_load / GiB - pre_load_free / GiB * (1 - mfs)
    max_mamba = None
    conv_state = ssm_state = 0
    if lay.mamba_layers:
        rest_gib, max_mamba, conv_state, ssm_state = _mamba_pool(spec, lay, s, v, rest_gib)
    if rest_gib <= 0:
        raise NotEnoughMemory(_no_memory_message(s, v, mfs, avail_after_load, pre_load_free))
    rest_bytes = int(rest_gib * GiB)
    page = lay.page_size
    full_tokens = swa_tokens = None
    if lay.swa_layers:
        max_tokens, full_tokens, swa_tokens, cell = _swa_split(lay, s, v, rest_bytes, spec)
    else:
        cell = _cell(lay, s, v, lay.full_layers)
        if cell <= 0:
            max_tokens = s.max_total_tokens or spec.n_ctx_train
        else:
            max_tokens = int(rest_bytes // cell)
        if s.max_total_tokens is not None:
            max_tokens = min(max_tokens, s.max_total_tokens)
        max_tokens = max_tokens // page * page
    if max_tokens <= 0:
        raise NotEnoughMemory(_no_memory_message(s, v, mfs, avail_after_load, pre_load_free, tokens=True))
    pools = kv_pools(lay, s, v, full_tokens if full_tokens is not None else max_tokens, swa_tokens)
    return Pool(max_total_num_tokens=max_tokens, cell_bytes=cell, rest_bytes=rest_bytes, mem_fraction_static=mfs,
                pools=pools, full_tokens=full_tokens, swa_tokens=swa_tokens, max_mamba_cache_size=max_mamba,
                conv_state_bytes=conv_state, ssm_state_bytes=ssm_state)


def _no_memory_message(s: SGLangSettings, v, mfs, avail, pre, tokens: bool = False) -> str:
    if _at_least(v, "no_memory_message") and not tokens and avail is not None and pre:
        # model_runner_kv_cache_mixin.py profile_max_num_token (0.5.14), kv_cache_configurator.py (0.5.20+)
        minimum = 1 - avail / pre
        return (f"ValueError: Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static={mfs}. "
                f"Raise --mem-fraction-static above {-(-minimum * 1000 // 1) / 1000:.3f} (minimum viable = "
                f"1 - available/pre = {minimum:.4f}). If using speculative decoding, draft weights are now counted.")
    return ("RuntimeError: Not enough memory. Please try to increase --mem-fraction-static."
            + (f" Current value: self.server_args.mem_fraction_static={mfs}" if v[:3] >= (0, 5, 8) else ""))


def _swa_split(lay: Layout, s: SGLangSettings, v: tuple[int, ...], rest_bytes: int, spec: ModelSpec
               ) -> tuple[int, int, int, float]:
    """Hybrid sliding-window pools: (max_total_num_tokens, full_tokens, swa_tokens, cell)."""
    page, ratio = lay.page_size, s.swa_full_tokens_ratio
    full_cell = _cell(lay, s, v, lay.full_layers)
    swa_cell = _cell(lay, s, v, lay.swa_layers)
    if _at_least(v, "swa_split_by_bytes"):
        # pool_configurator.py HybridSWAPoolConfigurator: cell = full + ratio * swa (each with its own heads/dims)
        cell = full_cell + ratio * swa_cell
        tokens = int(rest_bytes // cell)
        if s.max_total_tokens is not None:
            tokens = min(tokens, s.max_total_tokens)
        full = tokens // page * page
        swa = int(full * ratio) // page * page
        if 0 < swa <= _window(lay) + page:
            raise OomkitError(f"ValueError: SWA pool ({swa} tokens) cannot hold even one request: the prefill "
                              f"admission floor is sliding_window_size ({_window(lay)}) + page_size ({page}). "
                              "Increase --swa-full-tokens-ratio or the total KV budget.")
        return full, full, swa, cell
    # <= 0.5.8 model_runner_kv_cache_mixin.py set_num_tokens_hybrid_swa: a cell of every layer priced like a full
    # layer; the tokens of all layers are then shared out with swa = ratio x full
    all_layers = lay.full_layers + lay.swa_layers
    first = lay.full_layers[0] if lay.full_layers else lay.swa_layers[0]
    cell = _elem_bytes(_cell_row(first, lay, v), lay, s) * len(all_layers)
    tokens = int(rest_bytes // cell)
    if s.max_total_tokens is not None:
        tokens = min(tokens, s.max_total_tokens)
    tokens = tokens // page * page
    total = tokens * len(all_layers)
    full = int(total / (ratio * len(lay.swa_layers) + len(lay.full_layers)))
    swa = int(full * ratio)
    full, swa = full // page * page, swa // page * page
    return full, full, swa, cell


def _window(lay: Layout) -> int:
    return max((la.attention.window or 0) for la in lay.swa_layers) if lay.swa_layers else 0


def _mamba_pool(spec: ModelSpec, lay: Layout, s: SGLangSettings, v: tuple[int, ...], rest_gib: float
                ) -> tuple[float, int, int, int]:
    """handle_max_mamba_cache: the state pool takes mamba_full_memory_ratio / (1 + ratio) of the rest (0.5.4+).
    -> (rest left for KV in GiB, max_mamba_cache_size, conv bytes, ssm bytes) of the allocated pool (size + 1
    slots: memory_pool.py MambaPool keeps a padding slot)."""
    conv, ssm = mamba_cache_per_req(lay, s, spec)
    per_req = conv + ssm
    if s.speculative_algorithm:
        raise OomkitError("speculative decoding with a hybrid Mamba/linear-attention model is not modelled by oomkit")
    padded = _at_least(v, "mamba_padding_slot")
    if s.max_mamba_cache_size is not None:
        size = s.max_mamba_cache_size // (s.dp_size if s.enable_dp_attention else 1)
    else:
        if not _at_least(v, "mamba_ratio"):
            raise OomkitError(f"SGLang {s.engine_version}: the Mamba state pool before 0.5.4 took a fixed "
                              "--max-mamba-cache-size; give it (oomkit models the 0.5.4+ ratio rule)")
        r = s.mamba_full_memory_ratio
        budget = rest_gib * r / (1 + r) * GiB
        size = int((budget - per_req) // per_req) if padded else int(budget // per_req)
    if size <= 0:
        raise NotEnoughMemory(
            f"RuntimeError: Not enough GPU memory for hybrid (mamba/linear-attention) state cache. Computed "
            f"max_mamba_cache_size={size} (total_rest_memory={rest_gib:.2f} GB, mamba_cache_per_req="
            f"{per_req / MiB:.2f} MB). Try: (1) reduce --max-running-requests, (2) increase --mem-fraction-static, "
            "(3) reduce --speculative-num-draft-tokens, or (4) use GPUs with more memory.")
    charged = (size + 1) * per_req if padded else size * per_req
    return rest_gib - charged / GiB, size, (size + 1) * conv, (size + 1) * ssm


def max_running_requests(pool: Pool, s: SGLangSettings, context_len: int, v: tuple[int, ...]) -> tuple[int, int]:
    """(max_running_requests, req_to_token rows). init_memory_pool / kv_cache_configurator.py
    resolve_max_num_reqs: min(max(int(tokens / context_len * 512), 2048), 4096) unless --max-running-requests,
    then at most tokens // 2 (tp_worker.py), at most max_mamba_cache_size // 3 for hybrid models."""
    tokens = pool.max_total_num_tokens
    estimated = min(max(int(tokens / context_len * 512), 2048), 4096)
    user = s.max_running_requests
    if user is not None:
        user = max(1, user // (s.dp_size if s.enable_dp_attention else 1))
    max_num_reqs = user if user is not None else estimated
    if pool.max_mamba_cache_size is not None:
        max_num_reqs = min(max_num_reqs, pool.max_mamba_cache_size // 3)  # MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO
    rows = max_num_reqs + (0 if _at_least(v, "reserve_by_gpu_class") else 1)  # 0.4.6: ReqToTokenPool(size + 1)
    running = min(tokens // 2 if user is None else user, rows)
    if pool.max_mamba_cache_size is not None:
        running = min(running, max_num_reqs)
    return max(running, 0), rows


# ---------------------------------------------------------------------------------------------------------
# Weights per rank


_ONLINE_QUANT = {"fp8": 1, "w8a8_fp8": 1, "w8a8_int8": 1}


def rank_weights(spec: ModelSpec, s: SGLangSettings, lay: Layout, tensors: tuple[TensorSpec, ...] | None = None
                 ) -> tuple[int, list[str]]:
    """Bytes one TP rank loads ("Load weight end. ... mem usage"), and labels."""
    labels: list[str] = []
    tensors = spec.weights.tensors if tensors is None else tensors
    fmt = spec.weights.format.lower()
    plain = {"float32": 4, "fp32": 4, "f32": 4, "float16": 2, "fp16": 2, "f16": 2, "bfloat16": 2, "bf16": 2}
    src = plain.get(fmt)
    dst = DTYPES[lay.model_dtype]
    quant = (s.quantization or "").lower() or None
    total = 0
    for t in tensors:
        b = _tp.tensor_bytes_per_rank(t, spec, lay.attn_tp)
        if src is not None and src != dst:
            b = b * dst // src  # loaded in --dtype (float32 checkpoints load as float16 with auto)
        if src is not None and quant in _ONLINE_QUANT and _online_quantized(t):
            b = b * _ONLINE_QUANT[quant] // dst
        total += b
    if quant and src is not None and quant not in _ONLINE_QUANT:
        labels.append(f"--quantization {quant} on an unquantized checkpoint: weights counted as stored")
    elif quant in _ONLINE_QUANT and src is not None:
        labels.append(f"--quantization {quant}: linear weights quantized online to 1 byte (scales not counted)")
    return total, labels


def _online_quantized(t: TensorSpec) -> bool:
    """Linear layers inside the blocks (not norms, routers, embeddings or the lm_head) get online fp8."""
    if t.layer is None or len(t.shape) < 2:
        return False
    return not any(x in t.name for x in ("norm", "ffn_gate_inp", "ssm_conv1d", "attn_sinks"))


# ---------------------------------------------------------------------------------------------------------
# The estimate


def _context_len(spec: ModelSpec, s: SGLangSettings) -> int:
    """configs/model_config.py _derive_context_length."""
    derived = spec.n_ctx_train
    if s.context_length is None:
        if not derived:
            raise OomkitError(f"{spec.name}: the model declares no context length; give --context-length")
        return derived
    if s.context_length <= 0:
        raise OomkitError(f"--context-length must be positive, got {s.context_length}")
    if derived and s.context_length > derived and not s.allow_overwrite_longer_context_len:
        raise OomkitError(
            f"ValueError: Warning: User-specified context_length ({s.context_length}) is greater than the derived "
            f"context_length ({derived}). This may lead to incorrect model outputs or CUDA errors. Note that the "
            "derived context_length may differ from max_position_embeddings in the model's config. To allow "
            "overriding this maximum, set the env var SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1")
    return s.context_length


def _pp_stages(spec: ModelSpec, pp: int) -> list[tuple[LayerSpec, ...]]:
    """distributed/utils.py get_pp_indices: layers split evenly, the last stages taking the remainder."""
    trunk = _trunk(spec)
    n = len(trunk)
    if pp < 1 or pp > n:
        raise OomkitError(f"--pp-size {pp}: must be between 1 and the {n} layers")
    base, rem = divmod(n, pp)
    sizes = [base + (1 if i >= pp - rem else 0) for i in range(pp)]
    out, start = [], 0
    for k in sizes:
        out.append(trunk[start:start + k])
        start += k
    return out


def _stage_tensors(spec: ModelSpec, stage: tuple[LayerSpec, ...], first: bool, last: bool
                   ) -> tuple[TensorSpec, ...]:
    ids = {la.index for la in stage}
    n_trunk = spec.n_layers - spec.n_nextn_layers
    out = []
    for t in spec.weights.tensors:
        if t.layer is not None:
            if t.layer in ids:
                out.append(t)
            elif t.layer >= n_trunk and last:
                continue  # next-n / MTP weights are loaded by the draft worker only
        elif t.name.startswith("token_embd"):
            if first or (last and spec.tied_embeddings):
                out.append(t)
        elif last:
            out.append(t)
    return tuple(out)


def _expand_devices(devices: tuple[Device, ...], n_gpus: int) -> tuple[Device, ...]:
    if not devices:
        raise OomkitError("SGLang runs on GPUs: --cpu-only is not an SGLang configuration")
    if len(devices) == n_gpus:
        return devices
    if len(devices) == 1:
        d = devices[0]
        return tuple(replace(d, id=f"CUDA{i}") for i in range(n_gpus))
    if len(devices) < n_gpus:
        raise OomkitError(f"SGLang needs {n_gpus} GPUs for this --tp-size/--dp-size/--pp-size; {len(devices)} given")
    return devices[:n_gpus]


def estimate(spec: ModelSpec, devices: tuple[Device, ...], s: SGLangSettings) -> MemoryEstimate:
    v = parse_version(s.engine_version)
    if s.tp_size < 1 or s.dp_size < 1 or s.pp_size < 1:
        raise OomkitError("--tp-size, --dp-size and --pp-size must be at least 1")
    if s.mem_fraction_static is not None and not 0 < s.mem_fraction_static <= 1:
        raise OomkitError(f"--mem-fraction-static must be in (0, 1], got {s.mem_fraction_static}")
    if s.max_running_requests is not None and s.max_running_requests < 1:
        raise OomkitError(f"--max-running-requests must be at least 1, got {s.max_running_requests}")
    context_len = _context_len(spec, s)
    lay_all = layout(spec, s)
    _tp.check_tp(spec, lay_all.attn_tp)
    warnings: list[str] = list(lay_all.labels)
    n_gpus = s.tp_size * s.pp_size * (1 if s.enable_dp_attention else s.dp_size)
    devs = _expand_devices(devices, n_gpus)
    if len(devices) == 1 and n_gpus > 1:
        warnings.append(f"one memory size given: used for each of the {n_gpus} GPUs")
    stages = _pp_stages(spec, s.pp_size)
    sizes = [d.memory_bytes for d in devs]
    known = all(x is not None for x in sizes)
    gpu_mib = min(sizes) // MiB if known else None
    defaults = default_mem_fraction_static(gpu_mib, s, mla=lay_all.mla)
    mfs = s.mem_fraction_static if s.mem_fraction_static is not None else defaults.mem_fraction_static
    world = s.tp_size * s.pp_size
    overhead = pre_load_overhead(devs, world)
    pre_free = min(sizes) - overhead if known else None

    # per pipeline stage: weights, layout, pool
    stage_info = []
    for i, stage in enumerate(stages):
        lay = layout(spec, s, stage)
        w, wl = rank_weights(spec, s, lay, _stage_tensors(spec, stage, i == 0, i == len(stages) - 1))
        warnings += [x for x in wl if x not in warnings]
        stage_info.append((stage, lay, w))
    pool: Pool | None = None
    error: str | None = None
    pools: list[Pool | None] = []
    for _, lay, w in stage_info:
        try:
            if s.kv_cache_memory_bytes is not None:
                p = size_pool(spec, s, kv_budget=s.kv_cache_memory_bytes, gpu_mib=gpu_mib, lay=lay)
            elif known:
                p = size_pool(spec, s, avail_after_load=pre_free - w, pre_load_free=pre_free, gpu_mib=gpu_mib,
                              lay=lay)
            else:
                p = None
        except NotEnoughMemory as e:
            p, error = None, str(e)
        pools.append(p)
    if error is None and all(p is not None for p in pools):
        # init_memory_pool: different PP ranks may hold different layer counts -> the minimum token count
        tokens = min(p.max_total_num_tokens for p in pools)
        pools = [p if p.max_total_num_tokens == tokens else _resize(p, spec, s, lay, tokens)
                 for p, (_, lay, _) in zip(pools, stage_info, strict=True)]
        pool = pools[0]
    if error:
        warnings.append(f"SGLang would not start: {error}")
    if not known and s.kv_cache_memory_bytes is None:
        warnings.append("GPU memory unknown: SGLang sizes its KV pool from free memory (give --vram or --gpu); "
                        "the KV shown is one request of context_length")

    usages: list[Usage] = []
    layer_kv: dict[int, int] = {}
    headroom = int(pre_free * (1 - mfs)) if pre_free is not None else 0
    need_one = _one_request(spec, s, lay_all, v, context_len)
    for i, d in enumerate(devs):
        stage_idx = (i // s.tp_size) % s.pp_size
        stage, lay, w = stage_info[stage_idx]
        p = pools[stage_idx] if pools else None
        compute = headroom
        if p is not None:
            kv, state = p.kv_bytes, p.state_bytes
            if pre_free is not None and s.kv_cache_memory_bytes is None:
                # what the pool leaves is the headroom activations and CUDA graphs get (the pool's page_size
                # padding rows and the req_to_token table come out of the (1 - mem_fraction_static) slice)
                compute = max(0, pre_free - w - kv - state)
            if p.max_total_num_tokens < context_len:
                kv = max(kv, need_one[stage_idx][0])  # one full-length request does not fit the pool
        else:
            kv, state = need_one[stage_idx]
            if error:
                kv = state = 0
        usages.append(Usage(id=d.id, name=d.name, memory_bytes=d.memory_bytes, weights_bytes=w, kv_cache_bytes=kv,
                            recurrent_state_bytes=state, compute_bytes=compute, overhead_bytes=overhead))
    if pool is not None and pool.max_total_num_tokens < context_len:
        warnings.append(f"the KV pool holds {pool.max_total_num_tokens} tokens, fewer than context_length "
                        f"{context_len}: one full-length request cannot fit (SGLang warns and refuses or truncates "
                        "long requests); the estimate counts what that request needs")
    running = rows = None
    req_bytes = None
    if pool is not None:
        running, rows = max_running_requests(pool, s, context_len, v)
        req_bytes = rows * (context_len + 4) * 4  # ReqToTokenPool: int32 (rows, context_len + 4)
        if pre_free is not None and req_bytes > headroom:
            warnings.append(f"req_to_token table ({req_bytes / GiB:.2f} GiB) exceeds the {(1 - mfs):.3f} headroom "
                            f"({headroom / GiB:.2f} GiB): lower --context-length or --max-running-requests")
    w0 = stage_info[0][2]
    view: dict[str, Any] = {
        "mem_fraction_static": mfs,
        "chunked_prefill_size": defaults.chunked_prefill_size,
        "cuda_graph_max_bs": defaults.cuda_graph_max_bs,
        "page_size": lay_all.page_size,
        "kv_cache_dtype": lay_all.kv_dtype,
        "cell_size_bytes": int(pool.cell_bytes) if pool else int(_cell(lay_all, s, v, lay_all.full_layers)),
        "weights_bytes": w0,  # "Load weight end. ... mem usage" of one rank
        "load_weight_begin_avail_bytes": pre_free,
        "load_weight_end_avail_bytes": pre_free - w0 if pre_free is not None else None,
        "max_total_num_tokens": pool.max_total_num_tokens if pool else (0 if error else None),
        "k_bytes": pool.k_bytes if pool else None,
        "v_bytes": pool.v_bytes if pool else None,
        "kv_pools": [{"pool": p.name, "tokens": p.tokens, "layers": p.n_layers, "k_bytes": p.k_bytes,
                      "v_bytes": p.v_bytes} for p in pool.pools] if pool else [],
    }
    if pool is not None and pool.swa_tokens is not None:
        view["full_layer_tokens"], view["swa_layer_tokens"] = pool.full_tokens, pool.swa_tokens
    if pool is not None and pool.max_mamba_cache_size is not None:
        view["max_mamba_cache_size"] = pool.max_mamba_cache_size
        view["conv_state_bytes"], view["ssm_state_bytes"] = pool.conv_state_bytes, pool.ssm_state_bytes
    end_avail = None
    if pool is not None and pre_free is not None and s.kv_cache_memory_bytes is None:
        end_avail = pre_free - w0 - pool.kv_bytes - pool.state_bytes - (req_bytes or 0)
    view.update({
        "memory_pool_end_avail_bytes": end_avail,
        # the scheduler's line prints free memory after CUDA graph capture; oomkit does not model the graphs, so
        # this is the "Memory pool end" figure, an upper bound
        "available_gpu_mem_bytes": end_avail,
        "req_to_token_bytes": req_bytes,
        "max_prefill_tokens": s.max_prefill_tokens,
        "max_running_requests": running,
        "context_len": context_len,
    })
    if error:
        view["error"] = error
    per_token = int(sum(_elem_bytes(sum(_row(la, lay_all, v)), lay_all, s) for la in lay_all.full_layers)) * world
    for la in lay_all.full_layers + lay_all.swa_layers:
        ke, ve = _row(la, lay_all, v)
        n = (pool.swa_tokens if pool and la in lay_all.swa_layers else pool.max_total_num_tokens) if pool else 0
        layer_kv[la.index] = int(_elem_bytes((n + lay_all.page_size) * (ke + ve), lay_all, s)) if pool else 0
    layers = tuple(
        LayerUse(index=la.index, kind=la.kind.value, device=devs[min(k, len(devs) - 1)].id,
                 weights_bytes=sum(_tp.tensor_bytes_per_rank(t, spec, lay_all.attn_tp) for t in spec.weights.tensors
                                   if t.layer == la.index),
                 kv_bytes=layer_kv.get(la.index, 0), recurrent_bytes=0,
                 cells=(pool.swa_tokens if la in lay_all.swa_layers else pool.max_total_num_tokens) if pool else None)
        for k, stage in enumerate(stages) for la in stage
    )
    eff = s.to_dict()
    eff.update(n_ctx=context_len, mem_fraction_static=mfs, context_length=context_len, chunked_prefill_size=defaults.chunked_prefill_size,
               page_size=lay_all.page_size, cuda_graph_max_bs=defaults.cuda_graph_max_bs,
               max_running_requests=running if s.max_running_requests is None else s.max_running_requests)
    return MemoryEstimate(model=spec, engine="sglang", settings=eff, devices=tuple(usages),
                          host=Usage(id="CPU", name="host"), engine_view=view, kv_bytes_per_token=per_token,
                          layers=layers, warnings=tuple(warnings))


def _resize(p: Pool, spec: ModelSpec, s: SGLangSettings, lay: Layout, tokens: int) -> Pool:
    v = parse_version(s.engine_version)
    swa = None if p.swa_tokens is None else int(tokens * s.swa_full_tokens_ratio) // lay.page_size * lay.page_size
    return replace(p, max_total_num_tokens=tokens, full_tokens=tokens if p.full_tokens is not None else None,
                   swa_tokens=swa, pools=kv_pools(lay, s, v, tokens, swa))


def _one_request(spec: ModelSpec, s: SGLangSettings, lay_all: Layout, v, context_len: int) -> list[tuple[int, int]]:
    """(KV, state) bytes per stage for one request of context_len: what a pool must at least hold."""
    out = []
    for stage in _pp_stages(spec, s.pp_size):
        lay = layout(spec, s, stage)
        kv = sum(p.k_bytes + p.v_bytes for p in kv_pools(
            lay, s, v, context_len, min(context_len, _window(lay) + s.max_prefill_tokens) if lay.swa_layers else None))
        state = sum(mamba_cache_per_req(lay, s, spec)) * 2 if lay.mamba_layers else 0  # one slot + padding slot
        out.append((kv, state))
    return out


# ---------------------------------------------------------------------------------------------------------
# Command line (python -m sglang.launch_server ARGS / sglang serve ARGS)


@lru_cache(maxsize=1)
def flags_table() -> dict[str, str]:
    """Every flag SGLang knows and its kind (value, flag, optional, multi): engines/data/sglang_flags.json,
    generated by tools/build_sglang_flags.py from the wheels' argument definitions."""
    path = Path(__file__).with_name("data") / "sglang_flags.json"
    return dict(json.loads(path.read_text(encoding="utf-8"))["flags"])


# flag -> (Settings field, type)
_APPLY: dict[str, tuple[str, Any]] = {
    "--model-path": ("model_path", str), "--model": ("model_path", str),
    "--tp-size": ("tp_size", int), "--tensor-parallel-size": ("tp_size", int),
    "--dp-size": ("dp_size", int), "--data-parallel-size": ("dp_size", int),
    "--pp-size": ("pp_size", int), "--pipeline-parallel-size": ("pp_size", int),
    "--enable-dp-attention": ("enable_dp_attention", bool),
    "--mem-fraction-static": ("mem_fraction_static", float),
    "--context-length": ("context_length", int),
    "--kv-cache-dtype": ("kv_cache_dtype", str),
    "--chunked-prefill-size": ("chunked_prefill_size", int),
    "--max-prefill-tokens": ("max_prefill_tokens", int),
    "--max-running-requests": ("max_running_requests", int),
    "--max-total-tokens": ("max_total_tokens", int),
    "--page-size": ("page_size", int),
    "--attention-backend": ("attention_backend", str),
    "--dtype": ("dtype", str),
    "--quantization": ("quantization", str),
    "--cuda-graph-max-bs": ("cuda_graph_max_bs", int),
    "--disable-cuda-graph": ("disable_cuda_graph", bool),
    "--disable-piecewise-cuda-graph": ("disable_piecewise_cuda_graph", bool),
    "--swa-full-tokens-ratio": ("swa_full_tokens_ratio", float),
    "--mamba-full-memory-ratio": ("mamba_full_memory_ratio", float),
    "--max-mamba-cache-size": ("max_mamba_cache_size", int),
    "--mamba-ssm-dtype": ("mamba_ssm_dtype", str),
    "--speculative-algorithm": ("speculative_algorithm", str),
}
_TYPE_NAMES = {int: "int", float: "float", str: "str"}


def _resolve_flag(name: str, flags: dict[str, str]) -> str | None:
    """argparse (allow_abbrev): an exact flag, or a long flag's unique prefix (`--tp` for `--tp-size`)."""
    if name in flags:
        return name
    if name.startswith("--") and len(name) > 2:
        hits = [f for f in flags if f.startswith(name)]
        if len(hits) == 1:
            return hits[0]
        if len(hits) > 1:
            raise OomkitError(f"launch_server.py: error: ambiguous option: {name} could match {', '.join(hits[:6])}")
    return None


def parse_args(argv: list[str], env: dict[str, str] | None = None) -> tuple[str | None, str | None, SGLangSettings]:
    """SGLang's flags (after `python -m sglang.launch_server`, or `sglang serve`) -> (model, None, settings)."""
    env = dict(os.environ) if env is None else env
    flags = flags_table()
    args = list(argv)
    if args and args[0] == "serve":
        args = args[1:]
    opts: dict[str, Any] = {}
    unknown: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if not arg.startswith("-") or arg == "-":
            unknown.append(arg)
            continue
        name, eq, inline = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        flag = _resolve_flag(name, flags)
        if flag is None:
            unknown.append(arg)
            continue
        kind = flags[flag]
        value: Any = None
        if kind == "value":
            if eq:
                value = inline
            elif i < len(args) and not (args[i].startswith("--") and len(args[i]) > 2):
                value = args[i]
                i += 1
            else:
                raise OomkitError(f"launch_server.py: error: argument {flag}: expected one argument")
        elif kind in ("optional", "multi"):
            vals = [inline] if eq else []
            while not eq and i < len(args) and not args[i].startswith("--"):
                vals.append(args[i])
                i += 1
            value = vals
        elif eq:
            raise OomkitError(f"launch_server.py: error: argument {flag}: ignored explicit argument {inline!r}")
        if flag in _APPLY:
            field_name, typ = _APPLY[flag]
            if typ is bool:
                opts[field_name] = True
            else:
                try:
                    opts[field_name] = typ(value)
                except ValueError:
                    raise OomkitError(f"launch_server.py: error: argument {flag}: invalid {_TYPE_NAMES[typ]} value: "
                                      f"{value!r}") from None
    if unknown:
        raise OomkitError(f"launch_server.py: error: unrecognized arguments: {' '.join(unknown)}")
    if "kv_cache_dtype" in opts and opts["kv_cache_dtype"] not in KV_CACHE_DTYPES:
        raise OomkitError(f"launch_server.py: error: argument --kv-cache-dtype: invalid choice: "
                          f"{opts['kv_cache_dtype']!r} (choose from " + ", ".join(repr(k) for k in KV_CACHE_DTYPES)
                          + ")")
    if "dtype" in opts and opts["dtype"] not in DTYPES:
        raise OomkitError(f"launch_server.py: error: argument --dtype: invalid choice: {opts['dtype']!r} (choose from "
                          + ", ".join(repr(k) for k in DTYPES) + ")")
    if env.get("SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN", "").lower() in ("1", "true", "yes"):
        opts["allow_overwrite_longer_context_len"] = True
    s = SGLangSettings(**opts)
    return s.model_path, None, s


def flag_takes_value(name: str, following: str | None) -> bool:
    flags = flags_table()
    try:
        flag = _resolve_flag(name, flags)
    except OomkitError:
        return False
    return flag is not None and flags[flag] == "value"


# SGLang loads the checkpoint as published (its own dtype / quantization_config): the default format hook.
def _parse_args(argv: list[str], env: dict[str, str] | None = None, program: str | None = None):
    return parse_args(argv, env)


ENGINE = EngineModule(
    "sglang", SGLangSettings, estimate, _parse_args, flag_takes_value,
    context_field="context_length", neutral=NEUTRAL,
    # --kv-cache-dtype choices (KV_CACHE_DTYPES): SGLang spells fp8 with its format and refuses a bare "fp8"
    kv_types=("auto", "fp8_e4m3"), kv_fields=("kv_cache_dtype",),
    programs={"sglang": None}, python_modules={"sglang.launch_server": None},
    newest=NEWEST, eras=ERAS,
)

__all__ = ["ENGINE", "ERAS", "NEWEST", "SGLangSettings", "default_mem_fraction_static", "estimate", "kv_pools",
           "layout", "parse_args", "size_pool"]
