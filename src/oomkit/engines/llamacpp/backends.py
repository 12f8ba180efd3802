"""llama.cpp's backends: the buffer names each prints, where it keeps compute buffers and graph inputs, Apple's
unified memory (Metal), and the CPU backend's repacked weights (CPU_REPACK).

Cited against ggml-org/llama.cpp@0c1e57098 (the copy vendored by llama-cpp-python 0.3.36) as `file:function`.

Buffer names (ggml_backend_buft_name, as the load_tensors / llama_kv_cache / sched_reserve lines print them):

| backend | device buffer | host (pinned) buffer | weights mapped from the file |
|---|---|---|---|
| CUDA    | CUDA0, CUDA1 ...     | CUDA_Host   | CPU_Mapped (the layers left on the CPU) |
| ROCm    | ROCm0 ...            | ROCm_Host   | CPU_Mapped |
| Vulkan  | Vulkan0 ...          | Vulkan_Host | CPU_Mapped |
| SYCL    | SYCL0 ...            | SYCL_Host   | CPU_Mapped |
| OpenCL  | OpenCL               | (none)      | CPU_Mapped |
| Hexagon | HTP0, HTP1 ... and HTP0-REPACK ... | (none) | CPU (the weights the NPU refuses) |
| Metal   | MTL0 (before January 2026: Metal) | (none: unified memory) | MTL0_Mapped / Metal_Mapped: every offloaded weight |
| CPU     | CPU                  | -           | CPU_Mapped; CPU_REPACK for the repacked matrices |

The compute buffer of the graph's CPU side (the inputs of an offloaded graph, and the CPU layers) is allocated
in the first GPU's host buffer type (ggml-backend.cpp ggml_backend_sched_new: the CPU backend takes the host
buffer type of the first device), so it prints as `CUDA_Host compute buffer`, `Vulkan_Host compute buffer`, and
as `CPU compute buffer` on Metal and OpenCL, which have no host buffer type. The output buffer (logits) is
allocated in the host buffer type of the output layer's device (llama_context::output_reserve), printed
`CUDA_Host  output buffer` or `CPU  output buffer`.
"""

from __future__ import annotations

from dataclasses import replace

from ...errors import OomkitError
from ...memory import Device, apple_default_gpu_share
from ...model.spec import ModelSpec, TensorSpec
from ...quant import ggml
from ...units import round_up
from ..versions import llamacpp_build_on
from .backend_names import Backend, device_index, infer_backend
from .compute import METAL_ALIGNMENT, compute_phases, reserved_outputs
from .kv import Cache, Context
from .repack import (
    CPU_ISAS,
    GET_ROWS_TENSORS,
    REPACK_NAME_BUILD,
    REPACK_TYPES,
    read_by_get_rows,
    repack_applies,
    repackable,
)
from .settings import build_number
from .weights import (
    CPU_ALIGNMENT,
    ModelBuffers,
    Placement,
    converter_order,
    duplicates_embd_as_output,
    loaded_tensors,
    mapped_range,
    override_patterns,
    split_layout,
    split_mapped_bytes,
    split_mapped_ranges,
    tensor_device,
)


def device_buffer_name(backend: Backend, index: int, build: int) -> str:
    """The device's buffer name in the log: CUDA0, ROCm0, Vulkan0, SYCL0, MTL0 (`Metal` before ggml-metal numbered
    its devices, PR #18919, merged 2026-01-18)."""
    if backend.name == "metal":
        return f"MTL{index}" if build >= METAL_DEVICE_RENAME else "Metal"
    return f"{backend.prefix}{index}" if backend.indexed else backend.prefix


def host_buffer_name(backend: Backend) -> str:
    """Where the CPU side of the graph and the output buffer live: the backend's pinned host buffer, or CPU."""
    return backend.host or "CPU"


def mapped_buffer_name(backend: Backend, build: int) -> str:
    """Metal maps the offloaded weights straight from the file (ggml-metal.m buffer_from_host_ptr)."""
    return device_buffer_name(backend, 0, build) + "_Mapped"


# PR #18919 ("metal : support virtual devices", 6fdddb498, 2026-02-02, b7909: its count on master) names the devices
# GGML_METAL_NAME "MTL" + index
# (ggml-metal.cpp); before it the one device and its buffer types are `Metal`: logs print `Metal KV buffer size`,
# `Metal_Mapped model buffer size` up to then (PR #17609's log of late November 2025, issue #19224's --fit-era
# log, ollama 0.12's runner) and `MTL0 ...` after (issue #22800 at b9049).
METAL_DEVICE_RENAME = 7909


# ---------------------------------------------------------------------------------------------------------
# Metal: unified memory


def metal_working_set(ram_bytes: int, macos: int | None = None) -> int:
    """MTLDevice.recommendedMaxWorkingSetSize, what ggml-metal takes as the device's memory (ggml-metal-device.m
    ggml_metal_device_get_memory: total = recommendedMaxWorkingSetSize) and what it warns past ("current
    allocated size is greater than the recommended max working set size"): macOS's default
    (hardware/detect.py apple_default_gpu_share) for the macOS release named with --gpu (None: the newest)."""
    return apple_default_gpu_share(ram_bytes, macos)


def is_metal(d: Device) -> bool:
    """An Apple GPU: ggml-metal's device, named MTL0 (before January 2026: Metal)."""
    return d.id.startswith(("MTL", "Metal"))


def metal_devices(devices: tuple[Device, ...]) -> tuple[Device, ...]:
    """Apple GPUs as ggml-metal sees them: the catalog gives the whole unified RAM; Metal offers its working set."""
    out = []
    for d in devices:
        if is_metal(d) and d.memory_bytes and d.free_bytes is None:
            ws = metal_working_set(d.memory_bytes, d.macos)
            d = replace(d, memory_bytes=ws)
        out.append(d)
    return tuple(out)


def with_cpu_repack(spec: ModelSpec, weights: ModelBuffers, mmap: bool, isa: str,
                    build: int | None = None) -> tuple[ModelBuffers, int]:
    """The model buffers with the repacked matrices moved from the host buffer into CPU_REPACK, and its size.

    CPU_REPACK is allocated (ggml_backend_cpu_repack_buffer_type_alloc_buffer: a plain CPU buffer, each tensor
    ggml_nbytes padded to TENSOR_ALIGNMENT). With mmap the file stays mapped beside it: the CPU_Mapped buffer
    covers the file range from the first to the last tensor left in it (llama_model_loader::get_mapping_range),
    so a repacked tensor between two mapped ones is held twice; without mmap the CPU buffer holds the rest."""
    if isa not in REPACK_TYPES:
        raise OomkitError(f"unknown CPU instruction set {isa!r}: one of {', '.join(CPU_ISAS)}")
    moved = [t for t in weights.cpu_tensors if repackable(t, isa, build)]
    if not moved:
        return weights, 0
    names = {t.name for t in moved}
    rest = [t for t in weights.cpu_tensors if t.name not in names]
    repack = sum(round_up(t.nbytes, CPU_ALIGNMENT) for t in moved)
    host = ((split_mapped_bytes(spec.weights, rest) or mapped_range(rest)) if mmap
            else sum(round_up(t.nbytes, CPU_ALIGNMENT) for t in rest))
    return replace(weights, host_buffer_bytes=host, host_weight_bytes=sum(t.nbytes for t in rest)), repack


def metal_mapped(spec: ModelSpec, devices: tuple[Device, ...], s, weights: ModelBuffers,
                 placement: Placement) -> ModelBuffers:
    """Metal with mmap wraps the file itself (llama-model.cpp load_tensors: ggml_backend_dev_buffer_from_host_ptr
    over the mapping range of the device's tensors, no copy): MTL0_Mapped spans the file from the first to the
    last tensor on the device, holes included (a tied output maps token_embd's own bytes; experts left to the
    CPU by -ot between two offloaded layers are mapped all the same), and has no row padding. An RPC server
    beside it maps nothing: ggml-rpc's device reports no buffer_from_host_ptr (ggml-rpc.cpp
    ggml_backend_rpc_device_get_props), so load_tensors allocates its RPC0[host:port] buffer and copies in."""
    if not s.mmap or not devices or infer_backend(devices, s.backend).name != "metal":
        return weights
    overrides = override_patterns(s, spec)
    per: dict[int, list[TensorSpec]] = {}
    for t in loaded_tensors(spec, s):
        d = tensor_device(t, placement, overrides, len(devices))
        if d >= 0 and not devices[d].id.startswith("RPC"):
            per.setdefault(d, []).append(t)
    emb = next((t for t in spec.weights.tensors if t.name == "token_embd.weight"), None)
    if duplicates_embd_as_output(spec, build_number(s.engine_version)) and placement.output_device >= 0 \
            and emb is not None:
        per.setdefault(placement.output_device, []).append(emb)
    return replace(weights, by_device={**weights.by_device, **{d: _device_range(spec, ts) for d, ts in per.items()}})



def vulkan_unpadded(spec: ModelSpec, devices: tuple[Device, ...], s, weights: ModelBuffers,
                    placement: Placement) -> ModelBuffers:
    """A Vulkan device's weights take their own bytes: ggml_backend_vk_buffer_type_get_alloc_size returns
    ggml_nbytes (ggml/src/ggml-vulkan/ggml-vulkan.cpp), without the padded last row ggml-cuda gives a quantized
    tensor whose rows are not a multiple of 512 (weights.gpu_alloc_size). The HilbertRaum RTX 3090 log at b9849
    (Qwen3-30B-A3B Q4_K_M, experts of 768-element rows): Vulkan0 17524.42 MiB, 17524.43 with CUDA's padding."""
    backend = infer_backend(devices, s.backend).name if devices else None
    if backend == "metal" and not s.mmap:
        # Metal without the mapped file (--no-mmap): the weights go to the device's own MTL0 buffer type, whose
        # get_alloc_size is ggml_nbytes (ggml-metal.cpp ggml_backend_metal_buffer_type_get_alloc_size: extra
        # bytes only for MUL_MAT_ID / FLASH_ATTN_EXT / CUMSUM / ARGSORT results, never for a weight) at its
        # alignment of 32 (ggml_backend_metal_buffer_type_shared_get_alignment), read at b7140; no row padding.
        # ontouchstart/rabbit-holes' llama-server log at b8193 (gpt-oss-20b, --n-cpu-moe 12 --no-mmap, Apple M5):
        # MTL0 model buffer 6095.68 MiB, 6095.70 with ggml-cuda's padded rows
        local = _device_weights(spec, devices, s, placement, lambda t: round_up(t.nbytes, METAL_ALIGNMENT),
                                local_only=True)
        return replace(weights, by_device={**weights.by_device, **local})
    if backend != "vulkan":
        return weights
    local = _device_weights(spec, devices, s, placement, lambda t: t.nbytes, local_only=True)
    return replace(weights, by_device={**weights.by_device, **local})


def _device_weights(spec: ModelSpec, devices: tuple[Device, ...], s, placement: Placement, size_of,
                    local_only: bool = False) -> dict[int, int]:
    """Each device's model buffer with the backend's own tensor size (`size_of`, its buffer type's get_alloc_size)
    in place of ggml-cuda's (weights._model_buffers), the tied output's copy of token_embd included
    (TENSOR_DUPLICATED); local_only leaves RPC devices out (their remote buffer type keeps its own sizes)."""
    overrides, ids = override_patterns(s, spec), tuple(d.id for d in devices)
    placed = [(t, tensor_device(t, placement, overrides, len(devices), ids)) for t in loaded_tensors(spec, s)]
    emb = next((t for t in spec.weights.tensors if t.name == "token_embd.weight"), None)
    if duplicates_embd_as_output(spec, build_number(s.engine_version)) and placement.output_device >= 0 \
            and emb is not None:
        placed.append((emb, placement.output_device))
    per: dict[int, int] = {}
    for t, d in placed:
        if d >= 0 and not (local_only and devices[d].id.startswith("RPC")):
            per[d] = per.get(d, 0) + size_of(t)
    return per


def _device_range(spec: ModelSpec, tensors: list[TensorSpec]) -> int:
    """The mapping range of one device's tensors. A computed inventory (offsets of oomkit's own layout: token_embd,
    the blocks, then output_norm and output) puts output.weight last; the converters write it first, before
    token_embd and the blocks (issue #19224: gpt-oss-20b with the output layer and blocks 1-23 on Metal maps
    11536.18 MiB, the whole file, beside a CPU_Mapped token_embd + block 0 of 1018.60 MiB), so the device holding
    the output layer maps from the start of the file. A computed model published in gguf-split parts
    (weights.published_split) maps each part apart, as the CPU does: one MTL0_Mapped buffer per file idx in
    load_tensors, over that file's [first, last) (weights.split_mapped_ranges)."""
    layout = split_layout(spec.weights)
    if layout is not None and all(t.name in layout for t in tensors):
        return sum(split_mapped_ranges(tensors, layout))
    order = converter_order(spec)
    if order is not None and all(t.name in order for t in tensors):  # the converter's own file (experts first)
        return mapped_range([replace(t, offset=order[t.name]) for t in tensors])
    out = next((t for t in tensors if t.name == "output.weight"), None)
    rest = [t for t in tensors if t is not out]
    if out is None or spec.weights.exact or not rest or any(t.offset is None for t in tensors):
        return mapped_range(tensors)
    start = min((t.offset for t in spec.weights.tensors if t.offset is not None and t.name != out.name),
                default=0)
    return out.nbytes + max(t.offset + t.nbytes for t in rest) - start


def cpu_repack(spec: ModelSpec, devices: tuple[Device, ...], s, weights: ModelBuffers,
               placement: Placement | None = None) -> tuple[ModelBuffers, int]:
    """The model buffers of one load after the CPU backend repacks what it can (see with_cpu_repack); the
    weights as loaded when it does not (a GPU's host buffer comes first, or --no-repack). Metal's mapped weights
    are laid out here too (metal_mapped)."""
    if placement is not None:
        weights = vulkan_unpadded(spec, devices, s, metal_mapped(spec, devices, s, weights, placement), placement)
    isa, build = s.cpu_isa, build_number(s.engine_version)
    if not repack_applies(devices, s.no_host, s.repack, s.backend, build):
        return weights, 0
    if devices and infer_backend(devices, s.backend).name in ("metal", "hexagon") and isa == "avx2":
        isa = "neon"  # an Apple chip's or a Snapdragon's CPU: the ARM table (the avx2 default is for x86 machines)
    tensors = weights.cpu_tensors
    output_on_cpu = not devices or (placement is not None and placement.output_device < 0)
    if duplicates_embd_as_output(spec, build) and output_on_cpu \
            and not any(t.name == "output.weight" for t in tensors):
        # the output layer of a tied model is token_embd again (TENSOR_DUPLICATED): a MUL_MAT weight, so the CPU
        # buffer list gives it a repacked copy of its own while token_embd itself stays mapped. The encoders and
        # bitnet create no output tensor (weights.NO_OUTPUT_TENSOR_ARCHS): no copy (the eurobert file of
        # tests/test_llamacpp_embedding_output.py: CPU_REPACK 190.12 MiB measured, 260.44 with a copy)
        emb = next((t for t in tensors if t.name == "token_embd.weight"), None)
        if emb is not None:
            dup = replace(emb, name="output.weight", offset=None)
            if repackable(dup, isa, build):
                rest, extra = with_cpu_repack(spec, weights, s.mmap, isa, build)
                return rest, extra + round_up(dup.nbytes, CPU_ALIGNMENT)
    return with_cpu_repack(spec, weights, s.mmap, isa, build)


# ---------------------------------------------------------------------------------------------------------
# Hexagon: the weights and the matmuls an HTP session refuses stay on the CPU

# ggml-hexagon.cpp (the backend as the Snapdragon guides of October-December 2025 run it):
# ggml_hexagon_supported_mul_mat takes Q4_0, Q8_0 and MXFP4 weights held in the session's repack buffer type (and
# F16 weights in its plain one), but not one of more than 16 x 1024 rows ("typically the lm-head which would be too
# large for VTCM"); ggml_hexagon_supported_mul_mat_id takes the same three types for the expert stacks, without the
# row limit; every other weight type (F32 routers, Q6_K output layers, K-quants) is refused. llama-model.cpp
# select_weight_buft asks the device's supports_op for each weight's own op, tries the session's REPACK then its
# plain buffer type, and falls back to the CPU buffer types after them: so a refused weight loads into the CPU
# buffer and its matmul runs on the CPU. Two OLMoE sessions print it: CPU model buffer 143.86 MiB = token_embd
# (q4_0) + output (q6_K) + the 16 layers' f32 routers (8 MiB); gpt-oss-20b's 1182.09 MiB = its two q8_0 tables of
# 201088 rows + 24 f32 routers (8.44 MiB).
HTP_REPACK_TYPES = ("q4_0", "q8_0", "mxfp4")
HTP_MAX_ROWS = 16 * 1024
HTP_ALIGNMENT = 128  # ggml_backend_hexagon_buffer_type_get_alignment: "HVX alignment"
# PR #18611 ("Hexagon add support for f16/f32 flash attention, scale, set-rows ...", 95ea9e086, 2026-01-06, b7652): SCALE,
# SET_ROWS and FLASH_ATTN_EXT (the last only with GGML_HEXAGON_EXPERIMENTAL set). Before it the SCALE test of
# gpt-oss's attention sinks (llama-model.cpp weight_buft_supported: ggml_scale(w)) is refused and they load on
# the CPU: the guide's gpt-oss-20b sessions print 7.75 / 6.64 / 6.64 / 5.55 MiB of HTPn buffers, its layers'
# norms and biases without the sinks' 256 bytes a layer
HTP_SCALE_BUILD = 7652
# PR #18114 ("ggml-hexagon: swiglu_oai operation", 0a0bba05e, merged 2025-12-17, b7464): before it the HTP
# refuses GGML_GLU_OP_SWIGLU_OAI, gpt-oss's expert activation, so the CPU computes it, reading the gate and up
# rows in place in the session's buffer (host memory: ggml_backend_hexagon_buffer_type_is_host), and the session
# takes the product back as a split input. Its workspace is then the gate and up rows above two hidden-state rows
# and one attention-output row (n_head x head_dim): 4 T (2 k n_ff + 2 n_embd + n_head head_dim) bytes. Read off
# the pinned llama.cpp's scheduler split over devices that run only the HTP's ops of that era (MUL_MAT /
# MUL_MAT_ID of q4_0 / q8_0 / mxfp4 weights, ADD / SUB / MUL / ADD_ID, RMS_NORM, ROPE, SOFT_MAX without sinks,
# SWIGLU; tests/test_llamacpp_split.py): 8.03 / 16.06 / 32.13 / 64.25 MiB at 64 / 128 / 256 / 512 tokens, the
# context making no difference; with SWIGLU_OAI allowed the same run prints 21.69 MiB
HTP_SWIGLU_OAI_BUILD = 7464
SWIGLU_OAI_ARCHS = frozenset({"gpt-oss"})


def _matmul_weight(t: TensorSpec) -> bool:
    """A weight read by MUL_MAT (2-D) or MUL_MAT_ID (an expert stack): not the GET_ROWS tables, not the norms and
    biases (1-D, or an expert stack's [n_ff, n_expert] bias: they feed MUL / ADD / ADD_ID, which the HTP runs on
    F32)."""
    dims = [n for n in t.shape if n > 1]
    return len(dims) >= 2 and t.name.endswith(".weight") and not read_by_get_rows(t.name)


def htp_takes(t: TensorSpec, build: int | None = None) -> str | None:
    """The Hexagon buffer type a weight loads into: "REPACK" (a quantized matmul weight the HTP multiplies),
    "plain" (F16 matmul weights, norms, biases), None when the session refuses it (it stays on the CPU).
    `build`: the llama.cpp build, None for the newest."""
    if not _matmul_weight(t):
        sinks = ".attn_sinks." in t.name
        return None if sinks and build is not None and build < HTP_SCALE_BUILD else "plain"
    kind = ggml.type_by_name(t.dtype).name.lower()
    if "_exps" in t.name:
        return "REPACK" if kind in HTP_REPACK_TYPES else None
    if kind == "f16":
        return "plain"
    rows = t.shape[1] if len(t.shape) > 1 else 1
    return "REPACK" if kind in HTP_REPACK_TYPES and rows <= HTP_MAX_ROWS else None


def _is_hexagon(devices: tuple[Device, ...], s) -> bool:
    return bool(devices) and infer_backend(devices, s.backend).name == "hexagon"


def hexagon_output_on_cpu(spec: ModelSpec, devices: tuple[Device, ...], s) -> bool:
    """Whether the logits matmul runs on the CPU: the HTP refuses the output weight (see htp_takes). A file
    without output.weight has token_embd as its output weight only where the loader duplicates it
    (weights.duplicates_embd_as_output)."""
    if not _is_hexagon(devices, s):
        return False
    out = next((t for t in spec.weights.tensors if t.name == "output.weight"), None)
    if out is None and duplicates_embd_as_output(spec, build_number(s.engine_version)):
        emb = next((t for t in spec.weights.tensors if t.name == "token_embd.weight"), None)
        out = replace(emb, name="output.weight") if emb is not None else None
    return out is not None and htp_takes(out, build_number(s.engine_version)) is None


def hexagon_buffers(spec: ModelSpec, devices: tuple[Device, ...], s, placement: Placement,
                    weights: ModelBuffers) -> tuple[ModelBuffers, dict[int, int]]:
    """The model buffers of a Hexagon load (see HTP_REPACK_TYPES): the refused weights in the CPU buffer, each
    session's weights at their own size (ggml_nbytes, 128-byte aligned: no CUDA row padding), and per session the
    part in its HTPn-REPACK buffer type (returned apart: the log prints `HTP0` and `HTP0-REPACK` lines). Other
    backends' buffers are returned as they are."""
    if not _is_hexagon(devices, s):
        return weights, {}
    overrides = override_patterns(s, spec)
    ids = tuple(d.id for d in devices)
    plain: dict[int, int] = {}
    repack: dict[int, int] = {}
    cpu: list[TensorSpec] = []
    tensors = list(loaded_tensors(spec, s))
    build = build_number(s.engine_version)
    emb = next((t for t in spec.weights.tensors if t.name == "token_embd.weight"), None)
    if duplicates_embd_as_output(spec, build) and emb is not None \
            and not any(t.name == "output.weight" for t in tensors):
        # a tied output is token_embd again (TENSOR_DUPLICATED): a copy on the session that takes it; refused, it
        # falls back to the CPU buffer type that already holds token_embd, and create_tensor hands back that very
        # tensor (no second copy: Llama-3.2-1B's CPU buffer of 225.49 MiB holds its q6_K table once)
        dup = replace(emb, name="output.weight", offset=None)
        if placement.output_device >= 0 and htp_takes(dup, build) is not None:
            tensors.append(dup)
    for t in tensors:
        d = tensor_device(t, placement, overrides, len(devices), ids)
        kind = htp_takes(t, build) if d >= 0 else None
        if kind is None:
            cpu.append(t)
            continue
        into = repack if kind == "REPACK" else plain
        into[d] = into.get(d, 0) + round_up(t.nbytes, HTP_ALIGNMENT)
    by_device = {d: plain.get(d, 0) + repack.get(d, 0) for d in set(plain) | set(repack)}
    host = ((split_mapped_bytes(spec.weights, cpu) or mapped_range(cpu, file_order=spec.weights.exact)) if s.mmap
            else sum(round_up(t.nbytes, CPU_ALIGNMENT) for t in cpu))
    return replace(weights, by_device=by_device, cpu_tensors=tuple(cpu), host_buffer_bytes=host,
                   host_weight_bytes=sum(t.nbytes for t in cpu)), repack


def hexagon_refused(spec: ModelSpec, devices: tuple[Device, ...], s, placement: Placement) -> tuple[int, int]:
    """The offloaded layers' matrices an HTP session refuses for their type (not the output layer, which it refuses
    for its rows, nor the F32 routers): their count and bytes. A Q4_K_M file on Hexagon leaves nearly every weight
    on the CPU while the log still says every layer is offloaded."""
    if not _is_hexagon(devices, s):
        return 0, 0
    overrides, ids, build = override_patterns(s, spec), tuple(d.id for d in devices), build_number(s.engine_version)
    refused = [t for t in loaded_tensors(spec, s)
               if t.layer is not None and _matmul_weight(t) and ggml.type_by_name(t.dtype).name.lower() != "f32"
               and tensor_device(t, placement, overrides, len(devices), ids) >= 0 and htp_takes(t, build) is None]
    return len(refused), sum(t.nbytes for t in refused)


def hexagon_compute(compute: dict[int, int], spec: ModelSpec, ctx: Context, caches: list[Cache],
                    placement: Placement, devices: tuple[Device, ...], s) -> dict[int, int]:
    """Hexagon's compute buffers. The sessions run no FLASH_ATTN_EXT (refused before PR #18611, and after it
    unless GGML_HEXAGON_EXPERIMENTAL is set), so with -fa on the attention and the KQ masks it reads stay on the
    CPU: each session's workspace is the layer's without the masks. When the HTP refuses the output weight
    (hexagon_output_on_cpu) the logits matmul runs on the CPU too: the session holding the output layer keeps only
    its layers' workspace and the CPU's buffer holds the logits (n_vocab x reserved rows, f32); the final norm it
    reads stays in the session's buffer, which the CPU reads in place (ggml_backend_hexagon_buffer_type_is_host:
    host memory unless GGML_HEXAGON_HOSTBUF=0). The guide's logs print the CPU compute buffer as the logits alone
    (OLMoE 24.56 MiB = 50304 x 128 x 4 bytes; gpt-oss-20b 98.19 MiB = 201088 x 128 x 4)."""
    if not _is_hexagon(devices, s):
        return compute
    p = compute_phases(spec, ctx, caches, reserved_outputs(ctx, s))
    T = min(ctx.n_ctx, ctx.n_ubatch)
    masks = sum(c.cells * T * 2 for c in caches) if ctx.flash_attn else 0
    layer = max(p.attention - masks, 3 * spec.n_embd * T * 4)
    moe = next((la for la in spec.trunk_layers if la.ffn.is_moe and la.attention is not None), None)
    if spec.architecture in SWIGLU_OAI_ARCHS and build_number(s.engine_version) < HTP_SWIGLU_OAI_BUILD and moe:
        f, a = moe.ffn, moe.attention
        layer = 4 * T * (2 * f.n_experts_used * f.n_ff_expert + 2 * spec.n_embd + a.n_heads * a.head_dim_v)
    out = dict(compute)
    for d in set(placement.layer_device) - {-1}:
        out[d] = layer if d != placement.output_device else max(layer, p.output)
    if not hexagon_output_on_cpu(spec, devices, s):
        return out
    d = placement.output_device
    if d >= 0:
        if d in placement.layer_device:
            out[d] = layer
        else:
            out.pop(d, None)
    logits = spec.n_vocab * reserved_outputs(ctx, s) * 4
    out[-1] = max(p.inputs, logits)
    return out


# ---------------------------------------------------------------------------------------------------------
# OpenCL: its own tensor sizes (ggml/src/ggml-opencl/ggml-opencl.cpp)

# ggml_backend_opencl_buffer_type_get_alignment: CL_DEVICE_MEM_BASE_ADDR_ALIGN in bytes (the driver reports bits);
# 1024 bits on Adreno ("ggml_opencl: mem base addr align: 128" in every Adreno log) and on Intel's NEO driver
OPENCL_ALIGNMENT = 128
# ggml_backend_opencl_buffer_type_get_alloc_size (PR #25464, 92366df30, 2026-07-08, b9933; NULL before, so
# ggml_nbytes): set_tensor carves a quantized weight into per-component subbuffers (GGML_OPENCL_SOA_Q, always
# defined by ggml-opencl/CMakeLists.txt), each aligned, so every quantized tensor reserves 4 alignments of slack.
# No MATRIX_ROW_PADDING: that is CUDA's. Measured: Llama-3.2-3B Q4_K_M on an Adreno 830 at b10354 prints
# `OpenCL model buffer size = 1918.45 MiB` where Vulkan prints 1918.35 for the same file (197 quantized weights x 512)
OPENCL_SOA_SLACK_BUILD = 9933


def _opencl_alloc_size(t: TensorSpec, build: int) -> int:
    size = t.nbytes
    if ggml.type_by_name(t.dtype).quantized and build >= OPENCL_SOA_SLACK_BUILD:
        size += 4 * OPENCL_ALIGNMENT
    return round_up(size, OPENCL_ALIGNMENT)


def opencl_buffers(spec: ModelSpec, devices: tuple[Device, ...], s, placement: Placement,
                   weights: ModelBuffers) -> ModelBuffers:
    """The OpenCL device's model buffer, each offloaded tensor at OpenCL's own size (_opencl_alloc_size) instead
    of CUDA's row-padded one; the host buffers are the same. Other backends' buffers are returned as they are."""
    if not devices or infer_backend(devices, s.backend).name != "opencl":
        return weights
    build = build_number(s.engine_version)
    return replace(weights, by_device=_device_weights(spec, devices, s, placement,
                                                      lambda t: _opencl_alloc_size(t, build)))


def backend_view(view: dict, devices: tuple[Device, ...], s, build: int) -> dict:
    """engine_view's buffer names as the backend prints them: the devices under the backend's own names
    (--backend vulkan with --vram sizes: Vulkan0 ...), the CPU side of the graph and the output buffer under the
    host buffer type (CUDA_Host, ROCm_Host, Vulkan_Host, SYCL_Host; CPU on Metal and OpenCL), Metal's weights as
    MTL0_Mapped (mmap'd from the file); the backend named too."""
    b = infer_backend(devices, s.backend)
    mb = view.get("model_buffer_bytes")
    if build < REPACK_NAME_BUILD and isinstance(mb, dict) and "CPU_REPACK" in mb:
        mb["CPU_AARCH64"] = mb.pop("CPU_REPACK")
    if not devices:
        view["backend"] = "cpu"
        view["output_buffer_name"] = "CPU"  # llama_context::output_reserve: the CPU buffer type, no device
        return view
    # RPC devices keep their RPC[host:port] names and come first (split.model_devices): the local devices are
    # numbered among themselves, each by its own backend index (the digits of its id) where it has one: a device
    # left out (-dev, an integrated GPU beside a discrete one) keeps its number, as ggml_backend_dev_name does
    local = [d for d in devices if not d.id.startswith("RPC")]
    names = {d.id: d.id for d in devices if d.id.startswith("RPC")}
    names.update({d.id: device_buffer_name(b, device_index(d, i), build) for i, d in enumerate(local)})
    host = host_buffer_name(b)

    def rename(table: dict) -> dict:
        out = {}
        for k, v in table.items():
            if k.endswith("_Host") and k[:-5] in names:
                k = host
            elif b.unified and k in names and table is view.get("model_buffer_bytes") and s.mmap \
                    and not k.startswith("RPC"):  # an RPC server's weights are copied in (metal_mapped)
                k = names[k] + "_Mapped"
            else:
                k = names.get(k, k)
            out[k] = out.get(k, 0) + v
        return out

    # the MTP draft context's buffers (mtp.engine_view) print under the same names: its CPU-side compute buffer is
    # the first device's host buffer type too ("sched_reserve: Vulkan_Host compute buffer size" of the second context)
    for key in ("kv_buffer_bytes", "rs_buffer_bytes", "model_buffer_bytes", "compute_buffer_bytes",
                "mtp_kv_buffer_bytes", "mtp_compute_buffer_bytes"):
        if isinstance(view.get(key), dict):
            view[key] = rename(view[key])
    if "CUDA_Host" in view.get("model_buffer_bytes", {}) and host != "CUDA_Host":
        mb = view["model_buffer_bytes"]
        mb[host] = mb.pop("CUDA_Host")
    # the CPU side of the graph takes the host buffer type of the model's first device only
    # (llama-context.cpp: "use the host buffer of the first device CPU"), the output buffer that of the output
    # layer's device (llama_context::output_reserve: model.dev_output()); an RPC device has none, so with the RPC
    # servers first the CPU compute buffer is plain CPU, and so is the output buffer when the last device (the
    # output layer's in the default split) is an RPC server
    if devices[0].id.startswith("RPC") and host in view.get("compute_buffer_bytes", {}):
        cb = view["compute_buffer_bytes"]
        moved = cb.pop(host)  # popped first: with a CPU client the host buffer is CPU itself, counted once
        cb["CPU"] = cb.get("CPU", 0) + moved
    view["backend"] = b.name
    view["output_buffer_name"] = "CPU" if devices[-1].id.startswith("RPC") else host
    return view


# ---------------------------------------------------------------------------------------------------------
# The token embeddings under --no-mmap: the host buffer type only where the GPU reads their type with GET_ROWS

# llama-model.cpp make_cpu_buft_list puts the first device's host buffer type (CUDA_Host, ROCm_Host, Vulkan_Host)
# before the CPU's, and select_weight_buft asks that device's supports_op for each weight's own op: token_embd is
# read with GET_ROWS, so a type the GPU backend cannot gather falls back to the plain CPU buffer type ("tensor
# 'token_embd.weight' (q4_K) (and 0 others) cannot be used with preferred buffer type ROCm_Host, using CPU
# instead", ROCm/TheRock#2595). The types each backend's supports_op gathers:
#   CUDA / HIP (ggml-cuda.cu): F32, F16, BF16, I32 and the legacy quants Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, until
#     PR #25962 ("cuda: GET_ROWS quants", c5a4a0bb8, 2026-07-22, b10089) added the k-quants, i-quants and MXFP4;
#   Vulkan (ggml-vulkan.cpp): the same and IQ4_NL, until PR #16235 ("vulkan: support GET_ROWS for k-quants",
#     3f81b4e91, 2025-09-27, b6604) added the k-quants, i-quants and MXFP4.
# With mmap the CPU weights are mapped from the file whatever the list says (CPU_Mapped), so only --no-mmap shows it.
_LEGACY_GET_ROWS = frozenset({"f32", "f16", "bf16", "i32", "q4_0", "q4_1", "q5_0", "q5_1", "q8_0"})
GET_ROWS_TYPES = {"cuda": _LEGACY_GET_ROWS, "rocm": _LEGACY_GET_ROWS, "vulkan": _LEGACY_GET_ROWS | {"iq4_nl"}}
GET_ROWS_ALL_SINCE = {"cuda": 10089, "rocm": 10089, "vulkan": 6604}


def gathered_on_host(t: TensorSpec, backend: Backend, build: int) -> bool:
    """Whether the host buffer type takes a GET_ROWS weight (the backend's device gathers its type)."""
    kinds = GET_ROWS_TYPES.get(backend.name)
    if kinds is None or build >= GET_ROWS_ALL_SINCE.get(backend.name, 0):
        return True
    return ggml.type_by_name(t.dtype).name.lower() in kinds


def split_host_embeddings(view: dict, devices: tuple[Device, ...], s, weights: ModelBuffers, build: int) -> dict:
    """engine_view's host model buffer with the token embeddings the GPU cannot gather moved under `CPU` (see
    GET_ROWS_TYPES); the bytes stay on the host, only the buffer they print under changes."""
    mb = view.get("model_buffer_bytes")
    local = tuple(d for d in devices if not d.id.startswith("RPC"))
    if s.mmap or not local or not isinstance(mb, dict):
        return view
    b = infer_backend(local, s.backend)
    host = b.host
    if host is None or host not in mb:
        return view
    moved = sum(round_up(t.nbytes, CPU_ALIGNMENT) for t in weights.cpu_tensors
                if t.name.startswith(GET_ROWS_TENSORS) and not gathered_on_host(t, b, build))
    return _host_to_cpu(view, mb, host, moved)


def _host_to_cpu(view: dict, mb: dict, host: str, moved: int) -> dict:
    """`moved` bytes of the host buffer type's model buffer printed under the plain `CPU` buffer instead."""
    if moved:
        mb[host] -= moved
        if not mb[host]:
            del mb[host]
        mb["CPU"] = mb.get("CPU", 0) + moved
    return view


# Until PR #14990 ("llama : allow other bufts when overriding to CPU, add --no-repack option", 2025-07-31) a tensor
# -ot (or --cpu-moe / --n-cpu-moe) sends to "CPU" took that buffer type as named, the CPU device's own
# (common/arg.cpp maps each device's default buffer type by name; ggml_backend_cpu_buffer_type), not the CPU list
# that puts the first GPU's host buffer type first; llama-model.cpp load_tensors demotes a host buffer only under
# mmap ("avoid using a host buffer when using mmap"), so under --no-mmap those tensors print as `CPU` and the
# layers -ngl leaves on the CPU as CUDA_Host. Since #14990 an override to the CPU selects from the CPU list
# (select_weight_buft on cpu_buft_list): the host buffer type again. ikawrakow/ik_llama.cpp PR #394 (mainline
# b5331, DeepSeek-V3-0324, -ot exps=CPU --no-mmap on four GPUs): `CPU model buffer size = 134253.11 MiB`, no
# CUDA_Host model buffer.
CPU_OVERRIDE_HOST_BUILD = llamacpp_build_on("2025-07-31")


def split_cpu_overrides(view: dict, devices: tuple[Device, ...], s, spec: ModelSpec, weights: ModelBuffers,
                        build: int) -> dict:
    """engine_view's host model buffer with the tensors an override sends to the CPU moved under `CPU` (see
    CPU_OVERRIDE_HOST_BUILD): before that build, under --no-mmap; the bytes stay on the host."""
    mb = view.get("model_buffer_bytes")
    local = tuple(d for d in devices if not d.id.startswith("RPC"))
    if s.mmap or not local or not isinstance(mb, dict) or build >= CPU_OVERRIDE_HOST_BUILD:
        return view
    host = infer_backend(local, s.backend).host
    overrides = override_patterns(s, spec)
    if host is None or host not in mb or not overrides:
        return view
    moved = 0
    for t in weights.cpu_tensors:
        hit = next((buft for pat, buft in overrides if pat.search(t.name)), None)
        if hit is not None and hit.upper().startswith("CPU"):
            moved += round_up(t.nbytes, CPU_ALIGNMENT)
    return _host_to_cpu(view, mb, host, moved)


def split_repack(view: dict, devices: tuple[Device, ...], repack: dict[int, int]) -> dict:
    """Hexagon's model buffers as printed: each session's `HTPn` line and its `HTPn-REPACK` line apart."""
    mb = view.get("model_buffer_bytes")
    if not repack or not isinstance(mb, dict):
        return view
    for d, b in repack.items():
        name = devices[d].id
        if name in mb:
            mb[name] -= b
            mb[f"{name}-REPACK"] = b
    return view
