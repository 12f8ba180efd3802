"""The request step: what the user typed (a model reference, hardware words) -> the ModelSpec and the devices.

Shared by every command and the Python API, so a model and a machine are read the same way everywhere, and
checked once here: the types of API arguments (a bool is no byte count, a float no device list), options that
contradict each other (--gpu with --vram, --cpu-only with either, a :QUANT suffix with another --quant), and the
sizes and counts of the devices (1 MiB to 1 EiB each, at most hardware.catalog.MAX_DEVICES).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from dataclasses import field as dataclass_field
from pathlib import Path
from typing import Any

from .engines.base import EngineModule
from .errors import HardwareError, ModelError, OomkitError, SettingsError
from .memory import Device
from .model.resolve import resolve, split_quant
from .model.spec import ModelSpec
from .units import GiB, MiB, parse_size, parse_sizes

UNKNOWN_GPU = Device(id="CUDA0", name="GPU (size unknown)")
LARGEST_DEVICE = 1 << 60  # 1 EiB: oomkit's ceiling on one device's memory
_SAME_FORMAT = {"fp16": "f16", "fp32": "f32", "float16": "f16", "float32": "f32", "bfloat16": "bf16"}


def resolve_model(eng: EngineModule, ref: str | ModelSpec, quant: str | None = None) -> ModelSpec:
    """The model `ref` as `eng` would load it: a named format (`quant`, a :QUANT suffix), else the engine's own
    default (llama.cpp: the GGUF people download), labelled in the result when it is a guess."""
    if isinstance(ref, ModelSpec):
        return ref
    if isinstance(ref, os.PathLike):  # a pathlib.Path names its file as its text does (bytes are refused below)
        ref = os.fspath(ref)
    if not isinstance(ref, str) or not ref.strip():
        raise SettingsError(f"model: {ref!r} is no model reference; give a name, an HF id, a path or a ModelSpec")
    if quant is not None and not isinstance(quant, str):
        raise SettingsError(f"quant: {quant!r} is no weight format; give a string such as 'Q4_K_M'")
    check_quant_agrees(ref, quant)
    spec = resolve(ref, quant, default_format=eng.default_weight_format, tag_formats=eng.loads_gguf)
    if spec.weights.format.startswith("mlx-") and not eng.loads_mlx:
        # quant/hf_formats.py _mlx: an mlx_lm.convert checkpoint, whose packed weights only mlx-lm reads
        raise ModelError(f"{ref} is an MLX conversion ({spec.weights.format}, mlx_lm.convert): {eng.name} does not "
                         "load MLX weights; name the model it was converted from, or run it with --engine mlx")
    return spec


def check_quant_agrees(ref: str, quant: str | None) -> None:
    """A :QUANT suffix and a --quant that name different formats: refused, naming both (the same format
    twice is fine)."""
    if not quant:
        return
    _, suffix = split_quant(ref)
    if suffix is not None and _format_key(suffix) != _format_key(quant):
        raise SettingsError(f"the model {ref!r} names the weight format {suffix} and --quant names {quant}: "
                            "give one of them")


def model_and_quant(ref: str, quant: str | None) -> tuple[str, str | None]:
    """A model named with a :QUANT suffix, and --quant: ("unsloth/X-GGUF:Q4_K_M", None) -> ("unsloth/X-GGUF",
    "Q4_K_M"), the one format both name (two different ones refused, naming both); a file's path unchanged."""
    check_quant_agrees(ref, quant)
    name, suffix = split_quant(ref)
    if suffix is None or Path(ref).expanduser().exists():
        return ref, quant
    return name, quant or suffix


def _format_key(name: str) -> str:
    low = name.strip().lower()
    return _SAME_FORMAT.get(low, low)


def devices_from(vram: Any = None, gpu: str | None = None, devices: tuple[Device, ...] | None = None,
                 cpu_only: bool = False) -> tuple[Device, ...]:
    """The devices to lay the model out on: explicit `devices`, one per `vram` size ("24GiB,24GiB", bytes as an
    int, or a list of either), the catalog GPUs named in `gpu` ("2x H100"), none for `cpu_only`; with nothing
    given, one GPU of unknown size. Two ways of saying the hardware at once is an error that names both."""
    if not isinstance(cpu_only, bool):
        raise SettingsError(f"cpu_only: {cpu_only!r} is not True or False")
    given = [(n, v) for n, v in (("--vram", vram), ("--gpu", gpu), ("devices", devices)) if v is not None]
    if cpu_only and given:
        raise SettingsError(f"--cpu-only and {given[0][0]} {_shown(given[0][1])} contradict each other: give one")
    if len(given) > 1:
        (a, va), (b, vb) = given[:2]
        raise SettingsError(f"{a} {_shown(va)} and {b} {_shown(vb)} both say the hardware: give one")
    if cpu_only:
        return ()
    if not given:
        return (UNKNOWN_GPU,)
    from .hardware.catalog import MAX_DEVICES  # lazy: the catalog module is only needed for counts and names

    if vram is not None:
        sizes = _vram_sizes(vram, MAX_DEVICES)
        return _as_seen(tuple(Device(id=f"CUDA{i}", name="GPU", memory_bytes=s) for i, s in enumerate(sizes)))
    if devices is not None:
        if not isinstance(devices, (tuple, list)) or not all(isinstance(d, Device) for d in devices):
            raise SettingsError("devices: give a tuple of oomkit.memory.Device")
        if len(devices) > MAX_DEVICES:
            raise HardwareError(f"devices: {len(devices):,} devices; oomkit takes 1 to {MAX_DEVICES:,}")
        devices = tuple(_checked_device(d) for d in devices)
        ids = [d.id for d in devices]
        if len(set(ids)) < len(ids):
            # llama.cpp names each device once (CUDA0, CUDA1) and the reports key a device by its id
            twice = next(i for i in ids if ids.count(i) > 1)
            raise HardwareError(f"devices: two devices have the id {twice!r}; give each its own (CUDA0, CUDA1, ...)")
        from .hardware.catalog import with_facts  # lazy: only named GPUs need the catalog

        return _as_seen(tuple(with_facts(d) for d in devices))
    if not isinstance(gpu, str):
        raise SettingsError(f"gpu: {gpu!r} is no GPU name; give a string such as '2x H100'")
    from .hardware.catalog import devices_for_names  # lazy: only named GPUs need the catalog

    return _as_seen(devices_for_names(gpu))


# ---------------------------------------------------------------------------------------------------------
# The visible-devices variables: which of the machine's GPUs the engine's process sees
#
# CUDA (CUDA C++ Programming Guide, "CUDA Environment Variables"; NVIDIA MPS docs 5.2.1): CUDA_VISIBLE_DEVICES is
# a comma-separated sequence of GPU indices or UUIDs ("GPU-...", a prefix of one will do; "MIG-..." a MIG
# instance); only the devices named are visible, enumerated in the order of the sequence (2,1: the process's
# device 0 is GPU 2); the list is read up to its first invalid entry (0,2,-1,1: GPUs 0 and 2), so an empty value
# or -1 leaves no device. ROCm's HIP runtime reads HIP_VISIBLE_DEVICES (or, for CUDA compatibility,
# CUDA_VISIBLE_DEVICES) by the same rule, on top of ROCR_VISIBLE_DEVICES, which the ROCr runtime applies first
# (ROCm docs, "GPU isolation techniques"). What the engines do with what is left:
# - vLLM and SGLang need a CUDA (or ROCm) device: with none, startup fails in torch ("RuntimeError: No CUDA GPUs
#   are available", diagnose/signatures.py no_gpu_visible);
# - llama.cpp's CUDA / HIP backend finds no device (ggml-cuda.cu ggml_cuda_info: cudaGetDeviceCount fails, "failed
#   to initialize CUDA", device_count 0) and the model runs on the CPU;
# - Ollama on the server: "If you want to ignore the GPUs and force CPU usage, use an invalid GPU ID (e.g., "-1")"
#   (docs/gpu.mdx, "GPU Selection", NVIDIA: CUDA_VISIBLE_DEVICES, AMD: ROCR_VISIBLE_DEVICES).

VISIBLE_VARS = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES")
_NEEDS_A_GPU = {"vllm": "vLLM", "sglang": "SGLang"}
_INDEX = re.compile(r"[0-9]+")


@dataclass
class _Seen:
    """The visible-devices variables the engine's environment sets, the engine, and the warnings applying them
    gave."""

    variables: dict[str, str]
    engine: str
    needed: int = 0  # the GPUs the engine's settings start workers on (vLLM, SGLang: TP x PP x DP); 0: not said
    warnings: list[str] = dataclass_field(default_factory=list)


_SEEN: ContextVar[_Seen | None] = ContextVar("oomkit_visible_devices", default=None)


def visible_variables(env: Mapping[str, str] | None) -> dict[str, str]:
    """The visible-devices variables `env` sets (VISIBLE_VARS), by name."""
    return {k: env[k] for k in VISIBLE_VARS if env is not None and k in env}


@contextmanager
def engine_sees(variables: Mapping[str, str], engine: str, needed: int = 0) -> Iterator[list[str]]:
    """Within: the planned devices devices_from returns are the ones `variables` (the engine's
    CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES) leave visible to `engine`, renumbered;
    yields the list the warnings of applying them go to (a form that cannot be applied to planned devices, a list
    cut short). `needed`: the GPUs vLLM's or SGLang's parallel settings start workers on, refused where fewer stay
    visible. No variable: nothing changes."""
    seen = _Seen(dict(variables), engine, needed) if variables else None
    token = _SEEN.set(seen)
    try:
        yield seen.warnings if seen is not None else []
    finally:
        _SEEN.reset(token)


def _as_seen(devices: tuple[Device, ...]) -> tuple[Device, ...]:
    seen = _SEEN.get()
    if seen is None:
        return devices
    out = visible_devices(devices, seen.variables, seen.engine, seen.warnings)
    if devices and not out and seen.engine in _NEEDS_A_GPU:
        said = ", ".join(f"{k}={v!r}" if not v or "," in v else f"{k}={v}" for k, v in seen.variables.items())
        raise OomkitError(f"{said} leaves none of the {len(devices)} planned GPU{'s' if len(devices) > 1 else ''} "
                          f"({_numbered(devices)}) visible: {_NEEDS_A_GPU[seen.engine]} fails at startup "
                          "(RuntimeError: No CUDA GPUs are available); name a GPU that exists, or leave the variable "
                          "out")
    if seen.engine in _NEEDS_A_GPU and 0 < len(out) < min(seen.needed, len(devices)):
        # vLLM (config/parallel.py ParallelConfig.__post_init__, 0.10 to 0.17 read): fewer CUDA devices than
        # world_size on the node selects the Ray backend, which looks for the rest in a Ray cluster ("Unable to load
        # Ray" without it); SGLang starts one worker per GPU id, and a hidden one is no device for torch
        said = ", ".join(f"{k}={v}" for k, v in seen.variables.items())
        raise OomkitError(f"{said} leaves {len(out)} of the {len(devices)} planned GPUs visible "
                          f"({_numbered(out)}), and {_NEEDS_A_GPU[seen.engine]}'s parallel settings start workers on "
                          f"{seen.needed}: name {seen.needed} GPUs in the variable, or lower the tensor / pipeline / "
                          "data parallel size")
    return out


def _numbered(devices: tuple[Device, ...]) -> str:
    ids = [d.id for d in devices]
    return ids[0] if len(ids) == 1 else f"{ids[0]}-{ids[-1]}" if len(ids) > 2 else f"{ids[0]} and {ids[1]}"


def visible_devices(devices: tuple[Device, ...], variables: Mapping[str, str], engine: str = "",
                    warnings: list[str] | None = None) -> tuple[Device, ...]:
    """The devices a process whose environment sets `variables` sees, each vendor's renumbered from 0 in the order
    the variable names them (CUDA0, CUDA1 for NVIDIA; ROCm0, ... for AMD). NVIDIA devices read
    CUDA_VISIBLE_DEVICES; AMD ones ROCR_VISIBLE_DEVICES, then HIP_VISIBLE_DEVICES (or CUDA_VISIBLE_DEVICES where
    that is unset); other devices (Apple, Intel) none of them. A form that names GPUs by UUID or MIG instance
    cannot be matched to planned devices: that vendor's devices are kept whole and a warning says so."""
    notes = warnings if warnings is not None else []
    groups: dict[str, list[Device]] = {}
    for d in devices:
        groups.setdefault(_prefix(d.id), []).append(d)
    out: list[Device] = []
    for prefix, group in groups.items():
        if prefix == "CUDA":
            chain = [k for k in ("CUDA_VISIBLE_DEVICES",) if k in variables]
        elif prefix == "ROCm":
            hip = "HIP_VISIBLE_DEVICES" if "HIP_VISIBLE_DEVICES" in variables else "CUDA_VISIBLE_DEVICES"
            chain = [k for k in ("ROCR_VISIBLE_DEVICES", hip) if k in variables]
        else:
            chain = []
        for name in chain:
            group = _pick(group, name, variables[name], notes)
        out += [replace(d, id=f"{prefix}{i}") if chain else d for i, d in enumerate(group)]
    return tuple(out)


def _prefix(device_id: str) -> str:
    return device_id.rstrip("0123456789")


def _pick(group: list[Device], name: str, value: str, notes: list[str]) -> list[Device]:
    """The devices of `group` that `name`=`value` names, in its order, read by CUDA's rule (up to the first
    entry that is no index of a device here, or names one twice)."""
    kept: list[int] = []
    entries = value.split(",")
    for k, entry in enumerate(entries):
        if entry[:4].upper() in ("GPU-", "MIG-"):
            what = "a MIG instance" if entry[:4].upper() == "MIG-" else "a GPU UUID"
            notes.append(f"{name}={value}: {entry!r} is {what}, which cannot be matched to the planned devices "
                         f"({_numbered(tuple(group))}); all {len(group)} are kept: give the index of each GPU to "
                         "see the subset")
            return group
        if not _INDEX.fullmatch(entry) or int(entry) >= len(group) or int(entry) in kept:
            rest = entries[k:]
            if kept or rest not in ([""], ["-1"]):
                why = ("names a device twice" if _INDEX.fullmatch(entry) and int(entry) in kept else
                       f"is no device of the {len(group)} planned" if _INDEX.fullmatch(entry) else
                       "is no device index")
                left = (", ".join(f"{group[i].id}" for i in kept) if kept else "none")
                notes.append(f"{name}={value}: {entry!r} {why}; the runtime reads the list up to it: visible: "
                             f"{left} of {_numbered(tuple(group))}")
            break
        kept.append(int(entry))
    return [group[i] for i in kept]


def _vram_sizes(vram: Any, most: int) -> tuple[int, ...]:
    """vram -> bytes per device: a size string ("24GiB,24GiB"), an int of bytes, or a list or tuple of either.
    A float is refused (24.5 was read as 24 bytes): write "24.5GiB", or an int of bytes."""
    if isinstance(vram, str):
        sizes = parse_sizes(vram, "--vram", most)
    elif isinstance(vram, (tuple, list)):
        if not vram:
            raise SettingsError("vram: an empty list names no device")
        if len(vram) > most:
            raise HardwareError(f"vram: {len(vram):,} sizes; oomkit takes at most {most:,} devices")
        sizes = tuple(_one_size(v) for v in vram)
    else:
        sizes = (_one_size(vram),)
    for s in sizes:
        if s <= 0:
            raise HardwareError(f"--vram: GPU memory must be positive, got {s} bytes")
        if s > LARGEST_DEVICE:
            raise HardwareError(f"--vram: {s / GiB:,.0f} GiB on one device; oomkit takes up to 1 EiB")
    return sizes


def _checked_device(d: Device) -> Device:
    """An API caller's Device, checked as a --vram size is: an id string, its memory a number of bytes from 1 to
    1 EiB (its free memory from 0), or None (unknown). A finite float (a log's free MiB times 2**20, say) is taken
    down to whole bytes; NaN, infinities, bools and other types are refused."""
    if not isinstance(d.id, str) or not d.id.strip():
        raise SettingsError(f"devices: a Device's id is {d.id!r}; give a name such as 'CUDA0'")
    whole = {}
    for field in ("memory_bytes", "free_bytes"):
        v = getattr(d, field)
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, int | float):
            kind = "a bool" if isinstance(v, bool) else f"a {type(v).__name__}"
            raise SettingsError(f"devices: {d.id} {field} {v!r} is {kind}; give bytes as a number (None: unknown)")
        if not math.isfinite(v):
            raise SettingsError(f"devices: {d.id} {field} {v!r} is not a finite number of bytes")
        least = 0 if field == "free_bytes" else 1  # a device may have nothing free, never nothing at all
        if not least <= v <= LARGEST_DEVICE:
            raise HardwareError(f"devices: {d.id} {field} {v:,} bytes: out of range; oomkit takes {least} to 1 EiB")
        if isinstance(v, float):
            whole[field] = int(v)
    return replace(d, **whole) if whole else d


def with_ram(eng: EngineModule, settings: Any, ram: Any) -> Any:
    """The settings with the host's memory (`ram`, see ram_size) in the engine's field for it: llama.cpp's --fit
    weighs it when there is no GPU. An engine without such a field refuses it."""
    names = eng.neutral_fields("ram")
    if not names:
        raise SettingsError(f"--ram: the {eng.name} engine does not size anything by the host's memory (llama.cpp's "
                            "--fit does, without a GPU)")
    size = ram_size(ram)
    return replace(settings, **{n: size for n in names})


def ram_size(ram: Any) -> int:
    """--ram / ram=: the host's memory in bytes, read by --vram's rules for one device (a size string such as
    "64GiB" or "64GB", or an int of bytes; a float, a bool, a list or a bare number under 1 MiB refused)."""
    if isinstance(ram, str) and "," in ram:
        raise SettingsError(f"--ram {_shown(ram)}: one size, the host's memory (e.g. 64GiB)")
    size = _one_size(ram, "ram", "--ram")
    if size <= 0:
        raise HardwareError(f"--ram: the host's memory must be positive, got {size} bytes")
    if size > LARGEST_DEVICE:
        raise HardwareError(f"--ram: {size / GiB:,.0f} GiB of host memory; oomkit takes up to 1 EiB")
    return size


def _one_size(v: Any, key: str = "vram", flag: str = "--vram") -> int:
    if isinstance(v, bool) or not isinstance(v, (int, str)):
        kind = "a bool" if isinstance(v, bool) else f"a {type(v).__name__}"
        raise SettingsError(f"{key}: {v!r} is {kind}; give bytes as an int or a size string such as '24GiB' or "
                            "'24GB'")
    if isinstance(v, int) and 0 < v < MiB:
        raise SettingsError(f"{key}={v}: {v} bytes; {v} what? give '{v}GiB' or '{v}GB' (an int is bytes)")
    return parse_size(v, flag)


def _shown(v: Any) -> str:
    text = v if isinstance(v, str) else repr(v)
    return text if len(text) <= 40 else text[:37] + "..."
