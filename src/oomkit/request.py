"""The request step: what the user typed (a model reference, hardware words) -> the ModelSpec and the devices.

Shared by every command and the Python API, so a model and a machine are read the same way everywhere, and
checked once here: the types of API arguments (a bool is no byte count, a float no device list), options that
contradict each other (--gpu with --vram, --cpu-only with either, a :QUANT suffix with another --quant), and the
sizes and counts of the devices (1 MiB to 1 EiB each, at most hardware.catalog.MAX_DEVICES).
"""

from __future__ import annotations

import math
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from .engines.base import EngineModule
from .errors import HardwareError, ModelError, SettingsError
from .hardware.visible import device_prefix, hides_any_count, renumbered, select
from .memory import Device
from .model.names import OLLAMA_MLX_FORMAT, ollama_mlx_build
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
    if spec.weights.format.startswith(OLLAMA_MLX_FORMAT) and eng.name != "ollama":
        # an Ollama library tag of an MLX build (model/names.py ollama_mlx_build): only Ollama's MLX runner loads it
        gguf = ref.strip().rsplit("-", 1)[0]
        raise ModelError(f"{ref} is an Ollama MLX build ({spec.weights.format[len(OLLAMA_MLX_FORMAT):]}, quantized by "
                         f"`ollama create`), which only Ollama's MLX runner loads: run it with --engine ollama; "
                         f"{eng.name} loads {gguf}'s own weights")
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
    if suffix is None or Path(ref).expanduser().exists() or ollama_mlx_build(ref) is not None:
        return ref, quant  # an Ollama MLX build's "-nvfp4" is its tag's, resolved whole (model/resolve.py)
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
    if not given:  # one GPU of unknown size: hidden only by a variable that leaves no GPU of any count ("", -1)
        return _as_seen((UNKNOWN_GPU,), "assumed") if hides_any_count() else (UNKNOWN_GPU,)
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


def _as_seen(devices: tuple[Device, ...], what: str = "planned") -> tuple[Device, ...]:
    """The planned devices the engine's visible-devices variables leave it (hardware/visible.py select), renumbered
    per vendor; unchanged outside engine_sees."""
    return tuple(select(list(devices), device_prefix, renumbered, what))


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
