"""llama.cpp (llama-server, llama-cli, llama-cpp-python, LM Studio's runtime): what it really allocates.

Each rule mirrors llama.cpp's source; the reference tree is ggml-org/llama.cpp@0c1e57098 (the copy vendored by
llama-cpp-python 0.3.36), cited as `file:function`. Behaviour that changed between releases is selected
by `engine_version` (a build tag such as "b6500"; default the newest), see ERAS.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import OomkitError
from ..memory import Device, LayerUse, MemoryEstimate, Usage
from ..model.archs import SWA_PATTERN_DEFAULT
from ..model.spec import LayerKind, LayerSpec, ModelSpec, TensorSpec
from ..quant import ggml
from ..units import MiB
from .base import EngineModule

# Build tags at which behaviour changed: the first release build after each PR's merge. The merge dates are
# the PRs'; the build numbers are placed by those dates (llama.cpp tags about eight builds a day), so a build
# within a few days of a boundary may still follow the other rule.
ERAS = {
    # PR #12801 (merged 2025-04-15): MLA GGUFs cache the latent (K = kv_lora_rank + rope, V = kv_lora_rank)
    "mla_latent": 5150,
    # PR #14363 (first in b5913, 2025-07; issue #14847 bisects to b5912 -> b5913): per-sequence KV streams.
    # Before it every sequence shared one unified cache of n_ctx cells.
    "kv_streams": 5913,
    # PR #13194 (merged 2025-05-20): sliding-window layers get their own small cache (before: n_ctx everywhere)
    "iswa": 5450,
    # PR #17046 (merged 2025-11-07): n_ctx always padded to 256 (before: 256 with flash attention, 32 without)
    "pad_256_always": 6900,
    # PR #18148 (merged 2025-12-17): -ngl counts the output layer first (before: the last ngl repeating layers)
    "ngl_output_first": 7215,
    # PR #19067 (merged 2026-01-24): MLA caches K only ("V-less"), V = 0
    "mla_k_only": 7510,
}
NEWEST = "b9999"
DEFAULT_GGUF_TYPE = "Q4_K_M"

# Architectures with sliding-window or chunked caches (swa_type != NONE in src/models/<arch>.cpp).
SWA_ARCHS = frozenset(SWA_PATTERN_DEFAULT) | {"llama4", "gemma3n", "gemma4", "exaone4", "olmo2", "mimo2", "step35",
                                              "afmoe", "cohere2moe", "granite_swa", "exaone-moe", "smallthinker"}

# CUDA: ggml-cuda.cu ggml_backend_cuda_buffer_type_get_alignment / _get_alloc_size, MATRIX_ROW_PADDING
CUDA_ALIGNMENT = 128
CUDA_MATRIX_ROW_PADDING = 512
# ggml-impl.h TENSOR_ALIGNMENT: CPU buffers align each tensor to 32 bytes; GGUF pads tensor data the same way
CPU_ALIGNMENT = 32
# Not printed by llama.cpp: the CUDA context and cuBLAS workspace each GPU carries. Ollama reserves 457 MiB per
# CUDA/ROCm GPU for it (ollama discover/types.go MinimumMemory); we count the same so totals are comparable.
GPU_RUNTIME_RESERVE = 457 * MiB


@dataclass(frozen=True)
class LlamaCppSettings:
    """llama.cpp's options by their own names (common/common.h defaults; tools/server/server.cpp for -np)."""

    program: str = "llama-server"  # llama-server | llama-cli | llama-cpp-python
    n_ctx: int = 0  # -c; 0 = the model's trained context
    n_batch: int = 2048  # -b
    n_ubatch: int = 512  # -ub
    n_parallel: int = -1  # -np; -1 = auto (llama-server: 4 slots, unified KV)
    kv_unified: bool = False  # -kvu
    cache_type_k: str = "f16"  # -ctk
    cache_type_v: str = "f16"  # -ctv
    flash_attn: str = "auto"  # -fa on|off|auto
    swa_full: bool = False  # --swa-full
    n_gpu_layers: int = -1  # -ngl; -1 = default (all layers and the output layer)
    split_mode: str = "layer"  # -sm
    tensor_split: tuple[float, ...] = ()  # -ts
    main_gpu: int = 0  # -mg
    no_kv_offload: bool = False  # -nkvo
    override_tensor: tuple[tuple[str, str], ...] = ()  # -ot PATTERN=BUFT
    n_cpu_moe: int = 0  # --n-cpu-moe N
    cpu_moe: bool = False  # --cpu-moe
    mmap: bool = True  # --no-mmap
    n_rs_seq: int = 0  # recurrent-state snapshots per sequence (MTP rollback)
    embeddings: bool = False  # --embeddings
    engine_version: str = NEWEST

    def to_dict(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        d["tensor_split"] = list(self.tensor_split)
        d["override_tensor"] = [f"{p}={b}" for p, b in self.override_tensor]
        return d


@dataclass(frozen=True)
class Context:
    """The context parameters llama.cpp settles on (llama-context.cpp llama_context::llama_context)."""

    n_ctx: int
    n_ctx_seq: int
    n_seq_max: int
    kv_unified: bool
    n_ubatch: int
    n_batch: int
    flash_attn: bool
    type_k: ggml.GgmlType
    type_v: ggml.GgmlType
    build: int

    @property
    def n_stream(self) -> int:
        return 1 if self.kv_unified else self.n_seq_max


@dataclass(frozen=True)
class Cache:
    """One KV cache llama.cpp creates (the base cache, or the SWA cache of an iSWA pair)."""

    name: str  # "", "non-SWA" or "SWA"
    cells: int
    layers: tuple[int, ...]
    k_bytes: int
    v_bytes: int
    k_bytes_by_layer: dict[int, int] = field(default_factory=dict)
    v_bytes_by_layer: dict[int, int] = field(default_factory=dict)


def build_number(version: str | None) -> int:
    if not version or version in ("newest", "latest"):
        return int(NEWEST[1:])
    m = re.fullmatch(r"b?(\d{3,5})", version.strip())
    if not m:
        raise OomkitError(f"cannot read llama.cpp version {version!r}: expected a build tag such as b6500")
    return int(m.group(1))


# ---------------------------------------------------------------------------------------------------------
# Context parameters


def resolve_context(spec: ModelSpec, s: LlamaCppSettings) -> Context:
    build = build_number(s.engine_version)
    if s.n_ctx < 0:
        raise OomkitError(f"context size must be positive, got {s.n_ctx}")
    if s.n_batch <= 0 or s.n_ubatch <= 0:
        raise OomkitError("batch sizes -b and -ub must be positive")
    n_ctx = s.n_ctx or spec.n_ctx_train
    if n_ctx <= 0:
        raise OomkitError(f"{spec.name}: the model declares no trained context; give -c")
    # tools/server/server.cpp: -np -1 (auto) becomes 4 slots with a unified KV cache; llama-cli defaults to 1
    if s.n_parallel < 0:
        n_seq, unified = (4, True) if s.program == "llama-server" else (1, s.kv_unified)
    elif s.n_parallel == 0:
        raise OomkitError("-np must be at least 1")
    else:
        n_seq, unified = s.n_parallel, s.kv_unified
    if build < ERAS["kv_streams"]:
        unified = True  # one stream for all sequences before PR #14363
    type_k = _cache_type(s.cache_type_k, "-ctk")
    type_v = _cache_type(s.cache_type_v, "-ctv")
    # llama-context.cpp llama_init_from_model: a quantized V cache needs flash attention; "auto" turns it on.
    fa_mode = s.flash_attn.lower()
    if fa_mode not in ("on", "off", "auto", "1", "0", "true", "false", "enabled", "disabled"):
        raise OomkitError(f"-fa takes on, off or auto, not {s.flash_attn!r}")
    fa = fa_mode not in ("off", "0", "false", "disabled")
    if type_v.quantized and not fa:
        raise OomkitError("quantized V cache requires flash_attn to be enabled (llama.cpp refuses -ctv "
                          f"{type_v.name} with -fa off)")
    if any(layer.kind is LayerKind.LATENT and layer.attention and layer.attention.latent_cache
           for layer in spec.layers) and type_k.name != type_v.name:
        raise OomkitError(f"model does not support different K ({type_k.name}) and V ({type_v.name}) cache types "
                          "(llama.cpp: MLA models)")
    if fa:
        _check_block_divides(spec, type_k, "K", lambda a: _cache_head_k(a))
        _check_block_divides(spec, type_v, "V", lambda a: _cache_head_v(a))
    n_ubatch = min(s.n_batch, s.n_ubatch)  # llama_context: n_ubatch = min(n_batch, n_ubatch)
    # llama_context::llama_context: n_ctx = GGML_PAD(n_ctx, 256); per-sequence size padded too when not unified
    if build >= ERAS["pad_256_always"]:
        pad = 256
    else:
        pad = 256 if fa else 32  # llama_kv_cache::get_padding before PR #17046
    n_ctx = _pad(n_ctx, pad)
    if unified:
        n_ctx_seq = n_ctx
    else:
        n_ctx_seq = _pad(n_ctx // n_seq, pad)
        if n_ctx_seq == 0:
            raise OomkitError("n_ctx_seq == 0: context too small for -np")
        n_ctx = n_ctx_seq * n_seq
    return Context(n_ctx=n_ctx, n_ctx_seq=n_ctx_seq, n_seq_max=n_seq, kv_unified=unified, n_ubatch=n_ubatch,
                   n_batch=s.n_batch, flash_attn=fa, type_k=type_k, type_v=type_v, build=build)


def _pad(x: int, n: int) -> int:
    return (x + n - 1) // n * n


def _cache_type(name: str, flag: str) -> ggml.GgmlType:
    t = ggml.type_by_name(name)
    if t.name not in ggml.KV_CACHE_TYPES:
        raise OomkitError(f"{flag} {name}: llama.cpp accepts {', '.join(sorted(ggml.KV_CACHE_TYPES))}")
    return t


def _check_block_divides(spec: ModelSpec, t: ggml.GgmlType, which: str, head) -> None:
    if t.block_size == 1:
        return
    for layer in spec.layers[: spec.n_layers - spec.n_nextn_layers]:
        a = layer.attention
        if a is not None and head(a) % t.block_size:
            raise OomkitError(f"{which} cache type {t.name} with block size {t.block_size} does not divide "
                              f"n_embd_head_{which.lower()}={head(a)}")


# ---------------------------------------------------------------------------------------------------------
# KV cache, recurrent state, output buffer


def _cache_head_k(a) -> int:
    """n_embd_head_k as llama.cpp holds it: the MLA latent row when the GGUF is MLA-converted."""
    if a.kv_lora_rank and a.latent_cache:
        return a.kv_lora_rank + a.qk_rope_head_dim
    return a.head_dim_k


def _cache_head_v(a) -> int:
    if a.kv_lora_rank and a.latent_cache:
        return a.kv_lora_rank
    return a.head_dim_v


def _n_kv_heads(a) -> int:
    return 1 if a.kv_lora_rank and a.latent_cache else a.n_kv_heads


def k_row(layer: LayerSpec) -> int:
    """n_embd_k_gqa(il) in elements."""
    a = layer.attention
    return 0 if a is None else _cache_head_k(a) * _n_kv_heads(a)


def v_row(layer: LayerSpec) -> int:
    a = layer.attention
    return 0 if a is None else _cache_head_v(a) * _n_kv_heads(a)


def _swa_honoured(spec: ModelSpec, build: int) -> bool:
    """llama.cpp gives windowed layers their own small cache only for architectures whose loader sets a
    swa_type (src/models/*.cpp load_arch_hparams); others, e.g. Mistral v0.1 ("llama"), Qwen2 and Phi-3
    (SWA disabled in phi3.cpp), cache every layer in full."""
    return build >= ERAS["iswa"] and spec.architecture in SWA_ARCHS


def _attention_layers(spec: ModelSpec) -> list[LayerSpec]:
    """Layers that own a KV cache in the main context: not recurrent, not cache-less, not next-n/MTP layers
    (llama_model::create_memory filters il < n_layer() when n_layer_nextn > 0)."""
    n_trunk = spec.n_layers - spec.n_nextn_layers
    return [layer for layer in spec.layers
            if layer.index < n_trunk and layer.attention is not None and layer.kind is not LayerKind.NONE]


def kv_caches(spec: ModelSpec, ctx: Context, swa_full: bool) -> list[Cache]:
    """llama_kv_cache / llama_kv_cache_iswa constructors (src/llama-kv-cache.cpp, llama-kv-cache-iswa.cpp)."""
    layers = _attention_layers(spec)
    if not layers:
        return []
    mla_k_only = ctx.build >= ERAS["mla_k_only"]
    # [TAG_V_CACHE_VARIABLE]: without flash attention V is stored transposed, each row padded to the widest
    # layer's n_embd_v_gqa (max over all layers of the model, llama_hparams::n_embd_v_gqa_max).
    v_max = max(v_row(layer) for layer in spec.layers)
    size_base = ctx.n_ctx if ctx.kv_unified else ctx.n_ctx_seq

    def build_cache(name: str, members: list[LayerSpec], cells: int) -> Cache:
        kb, vb = {}, {}
        for layer in members:
            a = layer.attention
            latent = bool(a.kv_lora_rank and a.latent_cache)
            if latent and ctx.build < ERAS["mla_latent"]:
                k_el, v_el = a.n_heads * a.head_dim_k, a.n_heads * a.head_dim_v  # decompressed, pre-#12801
            else:
                k_el = k_row(layer)
                v_el = v_row(layer) if ctx.flash_attn else v_max
            kb[layer.index] = ggml.row_bytes(ctx.type_k, k_el) * cells * ctx.n_stream
            # PR #19067: an MLA cache keeps only K ("V-less"); V reads the latent out of K
            has_v = not (latent and mla_k_only and ctx.build >= ERAS["mla_latent"])
            vb[layer.index] = ggml.row_bytes(ctx.type_v, v_el) * cells * ctx.n_stream if has_v else 0
        return Cache(name, cells, tuple(sorted(kb)), sum(kb.values()), sum(vb.values()), kb, vb)

    windowed = [layer for layer in layers if layer.kind in (LayerKind.SLIDING, LayerKind.CHUNKED)]
    if not windowed or not _swa_honoured(spec, ctx.build):
        return [build_cache("", layers, size_base)]
    full = [layer for layer in layers if layer.kind not in (LayerKind.SLIDING, LayerKind.CHUNKED)]
    n_swa = max(layer.attention.window or 0 for layer in windowed)
    if swa_full:
        size_swa = size_base
    elif ctx.build >= ERAS["pad_256_always"]:
        # llama_kv_cache_iswa: GGML_PAD(min(size_base, n_swa*(unified ? n_seq_max : 1) + n_ubatch), 256)
        size_swa = _pad(min(size_base, n_swa * (ctx.n_seq_max if ctx.kv_unified else 1) + ctx.n_ubatch), 256)
    else:
        pad = 256 if ctx.flash_attn else 32
        size_swa = min(size_base, _pad(n_swa * (ctx.n_seq_max if ctx.kv_unified else 1) + ctx.n_ubatch, pad))
    caches = []
    if full:
        caches.append(build_cache("non-SWA", full, size_base))
    caches.append(build_cache("SWA", windowed, size_swa))
    return caches


def recurrent_rows(ctx: Context, s: LlamaCppSettings) -> int:
    # llama_memory_recurrent: mem_size = max(1, n_seq_max) cells, (1 + n_rs_seq) rows each
    return max(1, ctx.n_seq_max) * (1 + s.n_rs_seq)


def recurrent_bytes_by_layer(spec: ModelSpec, ctx: Context, s: LlamaCppSettings) -> dict[int, tuple[int, int]]:
    """(R, S) bytes per layer that holds recurrent state; both F32 (llama_model::create_memory)."""
    rows = recurrent_rows(ctx, s)
    n_trunk = spec.n_layers - spec.n_nextn_layers
    f32 = ggml.type_by_name("f32")
    out = {}
    for layer in spec.layers:
        st = layer.recurrent
        if st is None or layer.index >= n_trunk:
            continue
        if layer.kind is LayerKind.RECURRENT or layer.parallel_recurrent:
            out[layer.index] = (ggml.row_bytes(f32, st.conv) * rows, ggml.row_bytes(f32, st.ssm) * rows)
    return out


def output_buffer_bytes(spec: ModelSpec, ctx: Context, s: LlamaCppSettings) -> int:
    # llama_context::output_reserve(n_seq_max): (n_vocab [+ n_embd with embeddings]) * n_seq_max floats
    per_output = spec.n_vocab + (spec.n_embd if s.embeddings else 0)
    return per_output * max(1, ctx.n_seq_max) * 4


# ---------------------------------------------------------------------------------------------------------
# Placement: which device holds each layer and tensor (llama_model::load_tensors)


@dataclass(frozen=True)
class Placement:
    layer_device: tuple[int, ...]  # per layer: -1 = CPU, else the GPU index
    output_device: int
    n_gpu_layers: int


def place_layers(spec: ModelSpec, devices: tuple[Device, ...], s: LlamaCppSettings) -> Placement:
    n_all = spec.n_layers
    if not devices:
        return Placement(tuple([-1] * n_all), -1, 0)
    # llama_model::n_gpu_layers: -1 (default) means all layers plus the output layer
    ngl = n_all + 1 if s.n_gpu_layers < 0 else s.n_gpu_layers
    if s.split_mode not in ("layer", "none", "row"):
        raise OomkitError(f"-sm {s.split_mode}: llama.cpp takes none, layer or row")
    if s.split_mode == "none":
        if not 0 <= s.main_gpu < len(devices):
            raise OomkitError(f"-mg {s.main_gpu}: there are {len(devices)} GPUs")
        splits = [0.0] * len(devices)
        splits[s.main_gpu:] = [1.0] * (len(devices) - s.main_gpu)
    else:
        weights = list(s.tensor_split) if s.tensor_split and any(s.tensor_split) else None
        if weights is not None and len(weights) > len(devices):
            raise OomkitError(f"--tensor-split has {len(weights)} values for {len(devices)} GPUs")
        if weights is None:
            # default split by each device's free memory; unknown sizes split evenly
            weights = [float(d.free_bytes or d.memory_bytes or 1) for d in devices]
        weights += [0.0] * (len(devices) - len(weights))
        total, acc, splits = sum(weights), 0.0, []
        if total <= 0:
            raise OomkitError("--tensor-split values must not all be zero")
        for w in weights:
            acc += w
            splits.append(acc / total)
    # llama_model::load_tensors: i_gpu_start = max(n_layer + 1 - ngl, 0) since PR #18148 (the output layer is
    # offloaded first); before it, max(n_layer - ngl, 0) and the output layer only when ngl > n_layer
    if build_number(s.engine_version) >= ERAS["ngl_output_first"]:
        i_gpu_start = max(n_all + 1 - ngl, 0)
    else:
        i_gpu_start = max(n_all - ngl, 0)
    act = min(ngl, n_all + 1)

    def dev(il: int) -> int:
        if il < i_gpu_start or il - i_gpu_start >= act:
            return -1
        frac = (il - i_gpu_start) / act
        for i, sp in enumerate(splits):  # std::upper_bound: first split point greater than frac
            if sp > frac:
                return i
        return len(splits) - 1

    return Placement(tuple(dev(il) for il in range(n_all)), dev(n_all), min(ngl, n_all + 1))


def _override_patterns(s: LlamaCppSettings, spec: ModelSpec) -> list[tuple[re.Pattern[str], str]]:
    pats = []
    for pattern, buft in s.override_tensor:
        try:
            pats.append((re.compile(pattern), buft))
        except re.error as e:
            raise OomkitError(f"-ot {pattern}={buft}: bad regular expression ({e})") from None
    # common/arg.cpp --cpu-moe / --n-cpu-moe N: "blk\.(i)\.ffn_(up|down|gate|gate_up)_(ch|)exps" on CPU
    n_moe = spec.n_layers if s.cpu_moe else s.n_cpu_moe
    for i in range(n_moe):
        pats.append((re.compile(rf"blk\.{i}\.ffn_(up|down|gate|gate_up)_(ch|)exps"), "CPU"))
    return pats


def tensor_device(t: TensorSpec, placement: Placement, overrides, n_devices: int) -> int:
    for pat, buft in overrides:
        if pat.search(t.name):
            if buft.upper().startswith("CPU"):
                return -1
            m = re.fullmatch(r"(?:CUDA|ROCm|Vulkan|Metal|SYCL|GPU)(\d*)", buft, re.IGNORECASE)
            if not m:
                raise OomkitError(f"-ot: unknown buffer type {buft!r}")
            idx = int(m.group(1) or 0)
            if idx >= n_devices:
                raise OomkitError(f"-ot: buffer type {buft} names a GPU that is not there")
            return idx
    if t.name.startswith("token_embd"):
        return -1  # load_tensors: "very little benefit to offloading the input layer"
    if t.layer is not None and t.layer < len(placement.layer_device):
        return placement.layer_device[t.layer]
    return placement.output_device  # output_norm, output


def _gpu_alloc_size(t: TensorSpec) -> int:
    gt = ggml.type_by_name(t.dtype)
    size = t.nbytes
    if gt.quantized and t.shape and t.shape[0] % CUDA_MATRIX_ROW_PADDING:
        size += ggml.row_bytes(gt, CUDA_MATRIX_ROW_PADDING - t.shape[0] % CUDA_MATRIX_ROW_PADDING)
    return _pad(size, CUDA_ALIGNMENT)


def _mapped_range(tensors: list[TensorSpec]) -> int:
    """An mmap'd CPU buffer spans the file range from its first to its last tensor
    (llama_model_loader::get_mapping_range), holes included."""
    if not tensors:
        return 0
    if all(t.offset is not None for t in tensors):
        return max(t.offset + t.nbytes for t in tensors) - min(t.offset for t in tensors)
    return sum(_pad(t.nbytes, CPU_ALIGNMENT) for t in tensors)


# ---------------------------------------------------------------------------------------------------------
# Compute buffers (measured by llama.cpp: graph_reserve of a worst-case ubatch, ggml-alloc peak per backend)


@dataclass(frozen=True)
class ComputePhases:
    """The two candidate peaks of the worst-case graph (see compute_phases)."""

    output: int  # logits of every token, plus the hidden-state rows around them
    attention: int  # the largest layer workspace, masks included
    inputs: int  # what the CPU side keeps for a fully offloaded graph: the input rows and the masks


def compute_phases(spec: ModelSpec, ctx: Context, caches: list[Cache]) -> ComputePhases:
    """Peak of the worst-case ubatch graph: llama_context::graph_reserve builds it with
    n_tokens = min(n_ctx, n_ubatch) and every token an output, and ggml-alloc sizes each backend's buffer to the
    most tensors alive at once. The live set is modelled at its two candidate peaks, fitted to llama.cpp's own
    "compute buffer size" lines (tests/test_groundtruth_llamacpp.py; within a few percent):

    - output: the logits of every token (n_vocab x T floats) and two hidden-state rows;
    - attention: without flash attention the KQ scores (n_kv x T x n_head floats, softmax in place) and the
      f32 masks; with it, f16 masks only; plus Q, K, V, the attention output and three hidden-state rows.
      The reserve sizes n_kv to the whole cache (llama_kv_cache::init_full), so this grows with n_ctx.
      MLA (absorbed, src/models/deepseek2.cpp) holds the absorbed query and the latent output per head.
    """
    T = min(ctx.n_ctx, ctx.n_ubatch)
    f32 = 4
    resid = spec.n_embd * T * f32
    out_phase = spec.n_vocab * T * f32 + 2 * resid
    cells = {il: c.cells for c in caches for il in c.layers}
    masks = sum(c.cells * T * (2 if ctx.flash_attn else 4) for c in caches)  # one KQ mask per cache
    attn_phase = 0
    for layer in _attention_layers(spec):
        a = layer.attention
        n_kv = cells.get(layer.index, 0)
        kq = 0 if ctx.flash_attn else n_kv * T * a.n_heads * f32
        if a.kv_lora_rank and a.latent_cache and ctx.build >= ERAS["mla_latent"]:
            inner = a.n_heads * T * f32 * (3 * a.kv_lora_rank + a.qk_rope_head_dim) + resid
        else:
            q = a.n_heads * a.head_dim_k
            inner = T * f32 * (q + 2 * a.n_kv_heads * a.head_dim_k + a.n_heads * a.head_dim_v) + 3 * resid
            if a.kv_lora_rank and ctx.flash_attn:
                # MLA without the latent cache: wkv_b's decompressed K_nope and V per head are still alive when
                # flash attention runs (fitted to the legacy-GGUF ground truth; without FA they are not)
                inner += a.n_heads * (a.qk_nope_head_dim + a.v_head_dim) * T * f32
        attn_phase = max(attn_phase, kq + inner)
    if attn_phase:
        attn_phase += masks
        if any(layer.recurrent is not None for layer in spec.layers):
            # hybrids: the recurrent layers' inputs are allocated after the masks and live to the end, so the
            # freed mask block cannot merge with the free tail and the logits go above it
            out_phase += masks + resid
    # the CPU side of an offloaded graph holds the graph inputs: the token embeddings and the KQ masks
    return ComputePhases(output=out_phase, attention=max(attn_phase, 3 * resid), inputs=resid + masks)


def compute_buffer_bytes(spec: ModelSpec, ctx: Context, caches: list[Cache]) -> int:
    """The compute buffer of a graph that runs on one backend (CPU only, or everything on one GPU)."""
    p = compute_phases(spec, ctx, caches)
    return max(p.output, p.attention)


def compute_by_device(spec: ModelSpec, ctx: Context, caches: list[Cache], placement: Placement,
                      n_devices: int) -> dict[int, int]:
    """Per backend (-1 = the CPU side): a device that runs layers needs the layer workspace, the one that
    holds the output layer the logits too; the CPU side of an offloaded graph keeps its input rows.
    Multi-GPU figures follow the same live-set model; they are not checked against a multi-GPU log here."""
    p = compute_phases(spec, ctx, caches)
    if n_devices == 0:
        return {-1: max(p.output, p.attention)}
    out: dict[int, int] = {}
    for d in sorted(set(placement.layer_device) | {placement.output_device}):
        need = p.attention if d in placement.layer_device else 0
        if d == placement.output_device:
            need = max(need, p.output)
        out[d] = need
    out[-1] = max(out.get(-1, 0), p.inputs)
    return out


# ---------------------------------------------------------------------------------------------------------
# The estimate


def estimate(spec: ModelSpec, devices: tuple[Device, ...], s: LlamaCppSettings) -> MemoryEstimate:
    ctx = resolve_context(spec, s)
    warnings: list[str] = []
    caches = kv_caches(spec, ctx, s.swa_full)
    rs = recurrent_bytes_by_layer(spec, ctx, s)
    placement = place_layers(spec, devices, s)
    overrides = _override_patterns(s, spec)
    n_dev = len(devices)

    # weights by device
    dev_tensors: dict[int, list[TensorSpec]] = {}
    for t in spec.weights.tensors:
        dev_tensors.setdefault(tensor_device(t, placement, overrides, n_dev), []).append(t)
    if spec.tied_embeddings and placement.output_device >= 0:
        # tied output: token_embd is loaded a second time on the output device (TENSOR_DUPLICATED)
        emb = next((t for t in spec.weights.tensors if t.name == "token_embd.weight"), None)
        if emb is not None:
            dev_tensors.setdefault(placement.output_device, []).append(replace(emb, offset=None))
    weights_by_dev = {d: sum(_gpu_alloc_size(t) for t in ts) for d, ts in dev_tensors.items() if d >= 0}
    cpu_tensors = dev_tensors.get(-1, [])
    if s.mmap:
        host_buft = "CPU_Mapped"
        model_buffer_host = _mapped_range(cpu_tensors)
    else:
        host_buft = "CUDA_Host" if devices else "CPU"
        model_buffer_host = sum(_pad(t.nbytes, CPU_ALIGNMENT) for t in cpu_tensors)
    host_weight_bytes = sum(t.nbytes for t in cpu_tensors)

    # KV and recurrent state follow their layer's device unless -nkvo
    kv_by_dev: dict[int, int] = {}
    layer_kv: dict[int, int] = {}
    layer_cells: dict[int, int] = {}
    for c in caches:
        for il in c.layers:
            b = c.k_bytes_by_layer[il] + c.v_bytes_by_layer[il]
            d = -1 if s.no_kv_offload else placement.layer_device[il]
            kv_by_dev[d] = kv_by_dev.get(d, 0) + b
            layer_kv[il] = b
            layer_cells[il] = c.cells
    rs_by_dev: dict[int, int] = {}
    for il, (r, st) in rs.items():
        d = -1 if s.no_kv_offload else placement.layer_device[il]
        rs_by_dev[d] = rs_by_dev.get(d, 0) + r + st

    out_bytes = output_buffer_bytes(spec, ctx, s)
    compute_by_dev = compute_by_device(spec, ctx, caches, placement, n_dev)

    usages = []
    for i, dev in enumerate(devices):
        usages.append(Usage(
            id=dev.id, name=dev.name, memory_bytes=dev.memory_bytes, weights_bytes=weights_by_dev.get(i, 0),
            kv_cache_bytes=kv_by_dev.get(i, 0), recurrent_state_bytes=rs_by_dev.get(i, 0),
            compute_bytes=compute_by_dev.get(i, 0),
            overhead_bytes=GPU_RUNTIME_RESERVE,
        ))
    host = Usage(id="CPU", name="host", weights_bytes=host_weight_bytes, kv_cache_bytes=kv_by_dev.get(-1, 0),
                 recurrent_state_bytes=rs_by_dev.get(-1, 0), compute_bytes=compute_by_dev.get(-1, 0),
                 overhead_bytes=out_bytes)

    def dev_name(d: int) -> str:
        return "CPU" if d < 0 else devices[d].id

    k_total = sum(c.k_bytes for c in caches)
    v_total = sum(c.v_bytes for c in caches)
    swa = next((c for c in caches if c.name == "SWA"), None)
    model_buffers = {f"{dev_name(d)}": b for d, b in sorted(weights_by_dev.items())}
    if cpu_tensors:
        model_buffers[host_buft] = model_buffer_host
    host_compute_name = "CPU" if not devices else f"{devices[0].id}_Host"
    view = {
        "n_ctx": ctx.n_ctx,
        "n_ctx_seq": ctx.n_ctx_seq,
        "n_seq_max": ctx.n_seq_max,
        "kv_unified": ctx.kv_unified,
        "flash_attn": ctx.flash_attn,
        "n_ubatch": ctx.n_ubatch,
        "type_k": ctx.type_k.name,
        "type_v": ctx.type_v.name,
        "kv_buffer_bytes": {dev_name(d): b for d, b in sorted(kv_by_dev.items())},
        "k_bytes": k_total,
        "v_bytes": v_total,
        "swa_kv_bytes": (swa.k_bytes + swa.v_bytes) if swa else 0,
        "kv_caches": [{"name": c.name, "cells": c.cells, "layers": len(c.layers), "k_bytes": c.k_bytes,
                       "v_bytes": c.v_bytes, "streams": ctx.n_stream} for c in caches],
        "recurrent_state_bytes": sum(r + st for r, st in rs.values()),
        "r_bytes": sum(r for r, _ in rs.values()),
        "s_bytes": sum(st for _, st in rs.values()),
        "rs_buffer_bytes": {dev_name(d): b for d, b in sorted(rs_by_dev.items())},
        "model_buffer_bytes": model_buffers,
        "compute_buffer_bytes": {(host_compute_name if d < 0 else dev_name(d)): b
                                 for d, b in sorted(compute_by_dev.items())},
        "output_buffer_bytes": out_bytes,
        "offloaded_layers": f"{placement.n_gpu_layers}/{spec.n_layers + 1}",
    }
    if s.n_ctx and spec.n_ctx_train and ctx.n_ctx_seq > spec.n_ctx_train:
        warnings.append(f"n_ctx_seq ({ctx.n_ctx_seq}) > n_ctx_train ({spec.n_ctx_train}): the model was not "
                        "trained for this context; quality may drop unless RoPE scaling is set")
    if not devices:
        warnings.append("no GPU: every buffer is on the CPU")
    per_token = sum(ggml.row_bytes(ctx.type_k, k_row(layer))
                    + (0 if layer.kind is LayerKind.LATENT and ctx.build >= ERAS["mla_k_only"]
                       else ggml.row_bytes(ctx.type_v, v_row(layer)))
                    for layer in _attention_layers(spec)
                    if layer.kind not in (LayerKind.SLIDING, LayerKind.CHUNKED) or not _swa_honoured(spec, ctx.build))
    layers = tuple(
        LayerUse(index=layer.index, kind=layer.kind.value, device=dev_name(placement.layer_device[layer.index]),
                 weights_bytes=sum(t.nbytes for t in spec.weights.tensors if t.layer == layer.index),
                 kv_bytes=layer_kv.get(layer.index, 0), recurrent_bytes=sum(rs.get(layer.index, (0, 0))),
                 cells=layer_cells.get(layer.index))
        for layer in spec.layers
    )
    eff = s.to_dict()
    eff.update(n_ctx=ctx.n_ctx, n_parallel=ctx.n_seq_max, kv_unified=ctx.kv_unified,
               flash_attn="on" if ctx.flash_attn else "off", n_ubatch=ctx.n_ubatch,
               n_gpu_layers=placement.n_gpu_layers)
    return MemoryEstimate(model=spec, engine="llama.cpp", settings=eff, devices=tuple(usages), host=host,
                          engine_view=view, kv_bytes_per_token=per_token, layers=layers, warnings=tuple(warnings))


def default_weight_format(config: dict[str, Any]) -> str:
    """The GGUF people download for a model named without a quant: the MXFP4 release for models published
    in mxfp4 (gpt-oss), otherwise Q4_K_M."""
    q = config.get("quantization_config") or {}
    return "MXFP4_MOE" if isinstance(q, dict) and q.get("quant_method") == "mxfp4" else DEFAULT_GGUF_TYPE


def _parse_args(argv: list[str], env: dict[str, str] | None = None, program: str | None = None):
    from .llamacpp_args import parse_args

    return parse_args(argv, program=program or "llama-server")


def _flag_takes_value(name: str, following: str | None) -> bool:
    from .llamacpp_args import flag_takes_value

    return flag_takes_value(name, following)


ENGINE = EngineModule(
    "llama.cpp", LlamaCppSettings, estimate, _parse_args, _flag_takes_value,
    context_field="n_ctx",
    neutral={"ctx": "n_ctx", "parallel": "n_parallel", "kv_type": ("cache_type_k", "cache_type_v"),
             "engine_version": "engine_version"},
    # -ctk/-ctv: the types llama.cpp's docs name for the KV cache (tools/server/README.md)
    kv_types=("f16", "q8_0", "q4_0"), kv_fields=("cache_type_k", "cache_type_v"),
    aliases=("llamacpp", "llama-cpp", "llama_cpp", "llama-server", "llama-cli", "lmstudio", "lm-studio"),
    # the programs' own names; llama-cli's defaults differ from llama-server's (tools/main, tools/server)
    programs={"llama-server": "llama-server", "llama-cli": "llama-cli", "llama-completion": "llama-cli",
              "llama-run": "llama-cli", "server": "llama-server", "main": "llama-cli"},
    newest=NEWEST, eras=ERAS, default_format_fn=default_weight_format, loads_gguf=True,
    effective_context_fn=lambda est: est.engine_view.get("n_ctx"),
)
