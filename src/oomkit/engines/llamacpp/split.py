"""The devices a llama.cpp model is split over, in llama.cpp's order (src/llama.cpp llama_model_load_from_splits).

Without -dev: the RPC servers of --rpc first ("add RPC servers at the front of the list to minimize network
transfers"), each under its buffer name (RPC0[host:port]; RPC[host:port] before multi-device servers), then the
local GPUs; layers are then dealt out in that order (weights.place_layers), so the last layers and the output
layer stay on a local GPU (b3078 to b3663 and b4501 to b4558 put the RPC servers after the local GPUs instead:
RPC_LAST_BUILDS). With -dev the devices named there, in that order. oomkit is given the sizes of all devices:
the local GPUs first, then one per --rpc endpoint (the remote hosts' GPUs, in --rpc order).
"""

from __future__ import annotations

from dataclasses import replace

from ...errors import SettingsError
from ...memory import Device
from .backend_names import backend_of_names, infer_backend, named_by_backend
from .settings import ERAS, build_number
from .weights import loaded_tensors, tensor_device

# PR #16276 "rpc : add support for multiple devices" (898acba68, 2025-10-04, b6688: its count on master): an
# rpc-server exposes each of its devices, and the buffer type gains the device's
# index on its server: "RPC" + device + "[" + endpoint + "]" (before: "RPC[" + endpoint + "]")
RPC_DEVICE_INDEX_BUILD = 6688


def rpc_name(endpoint: str, build: int = RPC_DEVICE_INDEX_BUILD) -> str:
    """The buffer type name of an RPC server's first device (ggml-rpc.cpp ggml_backend_rpc_buffer_type)."""
    return f"RPC0[{endpoint}]" if build >= RPC_DEVICE_INDEX_BUILD else f"RPC[{endpoint}]"


# Integrated GPUs in the default device selection (src/llama.cpp llama_model_load_from_file_impl, later
# llama_prepare_model_devices): since PR #15797 (360d6533d, b6451) a device of type GGML_BACKEND_DEVICE_TYPE_IGPU is
# used only when no other device was found, and then only the first; since PR #23868 (1738129be, b9426) only a
# discrete GPU keeps it out, an RPC server no longer does ("otherwise the local iGPU would be dropped on iGPU+RPC
# setups"). A backend reports the type from: ggml-vulkan PR #15947 (304ac5693, b6454: VkPhysicalDeviceType
# eIntegratedGpu), ggml-cuda / HIP PR #23007 (30af6e2b9, b9389: the device's integrated property).
IGPU_SELECTION_BUILD = 6451
IGPU_BESIDE_RPC_BUILD = 9426
IGPU_TYPE_BUILD = {"vulkan": 6454, "cuda": 9389, "rocm": 9389}


def _default_selection(devices: tuple[Device, ...], build: int, backend: str) -> tuple[Device, ...]:
    """Without -dev: an integrated GPU (Device.integrated) only where no discrete GPU (nor, before b9426, an RPC
    server) was found, and then only the first one."""
    typed = IGPU_TYPE_BUILD.get(backend)
    if build < IGPU_SELECTION_BUILD or typed is None or build < typed:
        return devices
    remote = [d for d in devices if d.id.startswith("RPC")]
    local = [d for d in devices if not d.id.startswith("RPC")]
    igpus = [d for d in local if d.integrated]
    if not igpus:
        return devices
    gpus = [d for d in local if not d.integrated]
    keep_igpu = not gpus and (build >= IGPU_BESIDE_RPC_BUILD or not remote)
    return tuple(remote + gpus + (igpus[:1] if keep_igpu else []))


# The backends whose registry exports "ggml_backend_split_buffer_type" (ggml_backend_reg_get_proc_address): before
# b9890 ggml-cuda's (CUDA, and HIP / MUSA built from the same source) and ggml-sycl's; PR #24216 ("CUDA: remove -sm
# row, refactor cuBLAS", 74976e1ae, b9890) took CUDA's out (its description: -sm tensor now does all -sm row did),
# SYCL's stays. Vulkan, Metal, RPC, OpenCL and the others never had one.
SPLIT_BUFFER_BACKENDS = frozenset({"sycl"})
SPLIT_BUFFER_BACKENDS_BEFORE = frozenset({"cuda", "rocm", "sycl"})


def has_split_buffers(backend: str, build: int) -> bool:
    """Whether the backend's -sm row devices get a split buffer type (their matrices cut by rows over the devices)."""
    era = ERAS.reached(build, "sm_row_split_buffers_required")
    return backend in (SPLIT_BUFFER_BACKENDS if era else SPLIT_BUFFER_BACKENDS_BEFORE)


def row_split_refusal(devices: tuple[Device, ...], s, backend: str) -> str | None:
    """-sm row as src/llama-model.cpp load_tensors takes it: make_gpu_buft_list runs for every model device (whatever
    -ngl; the fit's dry run loads the same way, so --fit changes nothing) and, from ERAS sm_row_split_buffers_required
    (b9890) on, throws "device %s does not support split buffers" for the first whose backend exports no split buffer
    type. Before it such a device simply took its default buffer type. No devices (-dev none, CPU only): no list."""
    build = build_number(s.engine_version)
    if s.split_mode != "row" or not devices or not ERAS.reached(build, "sm_row_split_buffers_required"):
        return None
    # ggml_backend_dev_name: a local device by its id (CUDA0), an RPC device as ggml-rpc.cpp registers it ("RPC" +
    # its index among the RPC devices, RPC0), not by its buffer type's RPC0[host:port]
    rpc = [d for d in devices if d.id.startswith("RPC")]
    lacking = [f"RPC{rpc.index(d)}" if d in rpc else d.id for d in devices
               if d in rpc or not has_split_buffers(backend, build)]
    if not lacking:
        return None
    first = ERAS["sm_row_split_buffers_required"]
    return (f"-sm row: llama.cpp b{first} and later do not load the model: \"error loading model: device "
            f"{lacking[0]} does not support split buffers\" (src/llama-model.cpp make_gpu_buft_list; PR #24216 "
            "\"CUDA: remove -sm row\" took CUDA's split buffers out, only SYCL has them); use -sm tensor, the build's "
            "replacement for -sm row (weights and KV split across the GPUs; oomkit does not size it), or -sm layer "
            f"(the default), which oomkit sizes; --engine-version b{first - 1} for an older build's row split")


# Where the RPC servers stand among the devices a model is split over (without -dev), by build:
# - b3078 (PR #7640 "llama : offload to RPC in addition to other backends", bde7cd3c) to b3663: last. llama.cpp
#   llama_get_device_count counts the local GPUs and then model.rpc_servers, and llama_default_buffer_type_offload
#   gives device i >= dev_count - rpc_count to RPC server i - (dev_count - rpc_count). PR #7640's own log (CUDA0 and
#   one rpc-server, TinyLlama 1.1B F16) prints CUDA0 1008.19 MiB (12 layers), RPC 965.16 MiB (10 and the output).
# - b3664 (PR #9296 "rpc : make RPC servers come first in the device list", 82e3b03c) to b4500: first
#   (llama_default_buffer_type_offload: gpu < rpc_count; from the device registry on, llama_load_model_from_file
#   pushes the RPC devices before the registry's GPUs).
# - b4501 (PR #11262 "rpc : early register backend devices", 667d7284) to b4558: last again. common/arg.cpp
#   add_rpc_devices registers each server (ggml_backend_device_register) after the backends' own devices, and
#   llama_model_load_from_file_impl takes the GPUs in registry order.
# - b4559 (PR #11424 "rpc: fix register position", 1d8ee060) on: first ("add RPC servers at the front of the list").
RPC_LAST_BUILDS = ((3078, 3664), (4501, 4559))


def rpc_first(build: int) -> bool:
    """Whether the build puts the --rpc servers before the local GPUs (RPC_LAST_BUILDS)."""
    return not any(lo <= build < hi for lo, hi in RPC_LAST_BUILDS)


def model_devices(devices: tuple[Device, ...], s) -> tuple[Device, ...]:
    # the build's backend names the local devices (-dev Vulkan1 names the second card of a Vulkan build)
    devices = named_by_backend(devices, infer_backend(devices, s.backend or backend_of_names(s.device)))
    if s.rpc:
        k = len(s.rpc)
        if k > len(devices):
            raise SettingsError(f"--rpc names {k} servers but {len(devices)} device sizes are given: give one "
                                "size per local GPU and then one per RPC server")
        local, remote = devices[:len(devices) - k], devices[len(devices) - k:]
        build = build_number(s.engine_version)
        remote = tuple(replace(d, id=rpc_name(ep, build), name=ep) for d, ep in zip(remote, s.rpc, strict=True))
        devices = remote + local if rpc_first(build) else local + remote
    if s.device and not (len(s.device) == 1 and s.device[0].lower() == "none"):
        # ggml-backend-reg.cpp ggml_backend_dev_by_name compares without case (striequals): -dev cuda0 is CUDA0
        by_name = {d.id.lower(): d for d in devices}
        # RPC devices are also named RPC0, RPC1 ... in --list-devices (registry order: --rpc order)
        rpc = [d for d in devices if d.id.startswith("RPC") and "[" in d.id]
        by_name.update({f"rpc{i}": d for i, d in enumerate(rpc)})
        missing = [n for n in s.device if n.lower() not in by_name]
        if missing:
            raise SettingsError(f"-dev {','.join(s.device)}: no device {missing[0]} (there are "
                                f"{', '.join(d.id for d in devices) or 'none'})")
        devices = tuple(by_name[n.lower()] for n in s.device)
    elif s.device:
        devices = ()  # -dev none: CPU only
    else:
        devices = _default_selection(devices, build_number(s.engine_version), infer_backend(devices, s.backend).name)
    if s.split_mode == "none" and s.main_gpu < 0:
        devices = ()  # src/llama.cpp llama_model_load: single-GPU mode with main_gpu < 0 clears the devices (CPU)
    refusal = row_split_refusal(devices, s, infer_backend(devices, s.backend or backend_of_names(s.device)).name)
    if refusal:
        raise SettingsError(refusal)
    return devices


# ggml-cuda.cu get_row_rounding (b1650, CUDA on Volta and later): a device's share of a split matrix starts and ends
# on a multiple of these rows (64 for the other quantized types, 1 for F16 / F32)
_ROW_ROUNDING_128 = frozenset({"q4_0", "q4_1", "q4_K", "q5_K"})
_ROW_PADDING = 512  # ggml-cuda.cu MATRIX_ROW_PADDING: the last row padded to a multiple of 512 elements


def _row_rounding(dtype: str) -> int:
    if dtype.lower() in ("f16", "f32"):
        return 1
    return 128 if dtype in _ROW_ROUNDING_128 else 64


def row_split_era(spec, devices: tuple[Device, ...], s, placement, weights, state, compute: dict[int, int]):
    """Before PR #4766 (ERAS split_layer, b1843) a CUDA / ROCm build had one multi-GPU layout, a row split
    (llama.cpp b1650 llm_load_tensors): each offloaded layer's matrices are GGML_BACKEND_GPU_SPLIT, cut by rows
    over all GPUs (ggml-cuda.cu ggml_cuda_transform_tensor: device id takes rows nrows*g_tensor_split[id] to
    nrows*g_tensor_split[id+1], rounded down by get_row_rounding, its last row padded to MATRIX_ROW_PADDING), where
    g_tensor_split holds each device's starting fraction of -ts (ggml_cuda_set_tensor_split) or, without -ts, of
    the devices' total memory (ggml_init_cublas: prop.totalGlobalMem). The norms, biases and the MoE router
    (ffn_gate_inp) are GGML_BACKEND_GPU, whole on the main GPU (-mg), as is every offloaded layer's K and V
    (llama_kv_cache_init: ggml_cuda_assign_buffers_no_scratch) and the one compute scratch buffer of the whole graph
    (llama_new_context_with_model: ggml_cuda_set_scratch_size(alloc_size)). Returns weights, state and compute as
    that build held them; other builds and backends unchanged. Not modelled: the per-device cuBLAS / MMQ buffer
    pool (ggml_cuda_pool_malloc) and cudaMalloc's granularity over the many split allocations."""
    n = len(devices)
    backend = infer_backend(devices, s.backend or backend_of_names(s.device)).name
    if (n < 2 or backend not in ("cuda", "rocm") or ERAS.reached(build_number(s.engine_version), "split_layer")
            or placement.n_gpu_layers == 0):
        return weights, state, compute
    main = s.main_gpu if 0 <= s.main_gpu < n else 0
    parts = [float(p) for p in s.tensor_split[:n]] if s.tensor_split and any(s.tensor_split) else []
    parts = parts + [0.0] * (n - len(parts)) if parts else [float(d.memory_bytes or 1) for d in devices]
    starts = [sum(parts[:i]) / sum(parts) for i in range(n)]  # g_tensor_split: each device's starting fraction
    ids = tuple(d.id for d in devices)
    by_device: dict[int, int] = {}
    for t in loaded_tensors(spec, s):
        if tensor_device(t, placement, (), n, ids) < 0:
            continue
        ne0 = t.shape[0] if t.shape else 1
        rows = max(t.n_elements // max(ne0, 1), 1)
        row = t.nbytes // rows
        pad = (_ROW_PADDING - ne0 % _ROW_PADDING) * row // ne0 if ne0 % _ROW_PADDING else 0  # ggml_row_size
        if len(t.shape) < 2 or rows == 1 or ".ffn_gate_inp." in t.name:
            by_device[main] = by_device.get(main, 0) + t.nbytes + pad
            continue
        r = _row_rounding(t.dtype)
        for i in range(n):
            lo = 0 if i == 0 else int(rows * starts[i]) // r * r
            hi = rows if i == n - 1 else int(rows * starts[i + 1]) // r * r
            if hi > lo:
                by_device[i] = by_device.get(i, 0) + (hi - lo) * row + pad
    kv = {d: b for d, b in state.kv.items() if d < 0}
    rs = {d: b for d, b in state.rs.items() if d < 0}
    if any(d >= 0 for d in state.kv):
        kv[main] = sum(b for d, b in state.kv.items() if d >= 0)
    if any(d >= 0 for d in state.rs):
        rs[main] = sum(b for d, b in state.rs.items() if d >= 0)
    scratch = {d: b for d, b in compute.items() if d < 0}
    if any(d >= 0 for d in compute):
        # the scratch holds the whole graph's tensors as one allocator measured them: the largest device graph here
        scratch[main] = max(b for d, b in compute.items() if d >= 0)
    return replace(weights, by_device=by_device), replace(state, kv=kv, rs=rs), scratch
