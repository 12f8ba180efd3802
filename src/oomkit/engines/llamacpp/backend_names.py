"""llama.cpp's backends by name: the one a run uses (--backend, else its devices), and the buffer-name prefix and
host buffer type each prints. Kept apart from backends.py so that the compute and weight rules, which backends.py
builds on, ask the same question the same way."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ...errors import OomkitError
from ...memory import Device
from ...units import MiB


@dataclass(frozen=True)
class Backend:
    name: str  # --backend value
    prefix: str  # the device buffer name before its index ("CUDA" -> CUDA0)
    host: str | None  # the pinned host buffer type, None when the backend has none
    unified: bool = False  # the GPU shares the system RAM (Metal): weights stay mapped from the file
    indexed: bool = True  # OpenCL prints one device buffer without an index
    runtime_reserve: int = 0  # memory the driver context takes on each device (not printed by llama.cpp)


# runtime_reserve: Ollama's per-GPU minimum for the driver context and library workspaces (ollama
# discover/types.go MinimumMemory: 457 MiB for CUDA and ROCm, 512 MiB on Metal); oomkit counts the same for
# the other GPU backends, which print no figure of their own.
BACKENDS = {
    "cuda": Backend("cuda", "CUDA", "CUDA_Host", runtime_reserve=457 * MiB),
    "rocm": Backend("rocm", "ROCm", "ROCm_Host", runtime_reserve=457 * MiB),
    "vulkan": Backend("vulkan", "Vulkan", "Vulkan_Host", runtime_reserve=457 * MiB),
    "sycl": Backend("sycl", "SYCL", "SYCL_Host", runtime_reserve=457 * MiB),
    "opencl": Backend("opencl", "OpenCL", None, indexed=False, runtime_reserve=457 * MiB),
    "metal": Backend("metal", "MTL", None, unified=True, runtime_reserve=512 * MiB),
    "cpu": Backend("cpu", "CPU", None),
    # Qualcomm Hexagon NPU sessions (ggml-hexagon.cpp): HTP0, HTP1 ... as devices, no host buffer type (the CPU
    # side and the logits print as CPU buffers); Q4_0 / Q8_0 / MXFP4 weights go to an HTPn-REPACK buffer type
    # beside the session's own, the weights it refuses to the CPU (hexagon_buffers below)
    "hexagon": Backend("hexagon", "HTP", None),
}
# device ids oomkit gives (hardware/catalog.py: llama.cpp's backend device names) -> backend
_BY_PREFIX = {"CUDA": "cuda", "ROCm": "rocm", "MTL": "metal", "Metal": "metal", "Vulkan": "vulkan",
              "SYCL": "sycl", "OpenCL": "opencl", "HTP": "hexagon", "GPU": "cuda"}


def backend_named(name: str) -> Backend:
    key = str(name).strip().lower()
    if key not in BACKENDS:
        raise OomkitError(f"--backend {name}: llama.cpp backends are {', '.join(BACKENDS)}")
    return BACKENDS[key]


def infer_backend(devices: tuple[Device, ...], asked: str = "") -> Backend:
    """The backend a run uses: the one asked for (--backend), else the devices' own (an Apple chip is Metal, an
    AMD GPU ROCm, an Intel GPU SYCL: the device ids hardware/catalog.py and detection give), else CUDA; none
    without a GPU. RPC devices (RPC0[host:port], first in the list) say nothing of the local build: the first local
    device decides, and with RPC devices alone the client's host side is the plain CPU (ggml-rpc.cpp
    ggml_backend_rpc_device_i has no host buffer type)."""
    local = [d for d in devices if not d.id.startswith("RPC")]
    if asked:
        backend = backend_named(asked)
        _check_runs_on(backend, local)
        return backend
    if not local:
        return BACKENDS["cpu"]
    head = local[0].id.rstrip("0123456789")
    return BACKENDS[_BY_PREFIX.get(head, "cuda")]


# the first NVIDIA generation no macOS driver ever took: Turing (RTX 20, compute capability 7.5); NVIDIA's last web
# driver (387.10.10.10.40, macOS 10.13) stops at Pascal, and macOS 10.14 on has drivers for Kepler only
_NO_MACOS_DRIVER_CC = (7, 5)
# backends whose builds have no Apple-GPU device (ggml-cuda, ggml-hip, ggml-sycl: CUDA, ROCm and oneAPI run on no
# Apple chip); Metal, Vulkan (MoltenVK) and the CPU do
_NOT_ON_APPLE = ("cuda", "rocm", "sycl")


def _check_runs_on(backend: Backend, local: list[Device]) -> None:
    """--backend against the GPUs named: a backend that cannot drive them (Metal on an NVIDIA card no macOS driver
    takes, CUDA / ROCm / SYCL on an Apple chip) is refused, as another contradiction of the hardware is."""
    for d in local:
        cc = d.compute_capability
        if backend.name == "metal" and cc is not None and cc >= _NO_MACOS_DRIVER_CC:
            raise OomkitError(f"--backend metal with {d.name}: llama.cpp's Metal backend runs on macOS, which has no "
                              f"driver for an NVIDIA card of compute capability {cc[0]}.{cc[1]} (none from Turing on); "
                              "give --backend cuda or vulkan, or an Apple --gpu")
        if backend.name in _NOT_ON_APPLE and d.id.rstrip("0123456789") in ("MTL", "Metal"):
            raise OomkitError(f"--backend {backend.name} with {d.name}: an Apple GPU runs llama.cpp's Metal backend "
                              f"(or Vulkan through MoltenVK), not {backend.prefix}; give --backend metal")


# backends whose devices are numbered by the backend's own prefix (ggml_backend_dev_name: CUDA0, ROCm0, Vulkan0,
# SYCL0): a device given under another vendor's id (--gpu "RTX 3090" is CUDA0) takes this name in such a build
_RENAMED = ("cuda", "rocm", "vulkan", "sycl")


def backend_of_names(names: tuple[str, ...]) -> str:
    """The backend that -dev names imply (-dev Vulkan1 is a Vulkan build), "" when they imply none or several."""
    heads = {n.rstrip("0123456789").lower() for n in names if not n.upper().startswith("RPC") and n.lower() != "none"}
    by_prefix = {k.lower(): v for k, v in _BY_PREFIX.items()}  # -dev names compare without case (striequals)
    found = {by_prefix.get(h) for h in heads - {"gpu"}}  # GPU0 is oomkit's generic id, no backend's name
    return found.pop() if len(found) == 1 and None not in found else ""


def device_index(d: Device, position: int) -> int:
    """A local device's backend index: the number its id ends in (CUDA1, Vulkan1), else its position."""
    digits = d.id[len(d.id.rstrip("0123456789")):]
    return int(digits) if digits else position


def named_by_backend(devices: tuple[Device, ...], backend: Backend) -> tuple[Device, ...]:
    """The local devices under the names the backend gives them (Vulkan0, Vulkan1 ... for --backend vulkan with
    NVIDIA cards), each keeping its own number; RPC devices keep theirs."""
    if backend.name not in _RENAMED:
        return devices
    out = []
    for position, d in enumerate(devices):
        head = d.id.rstrip("0123456789")
        if d.id.startswith("RPC") or head == backend.prefix or _BY_PREFIX.get(head) not in _RENAMED:
            out.append(d)
            continue
        out.append(replace(d, id=f"{backend.prefix}{device_index(d, position)}"))
    return tuple(out)
