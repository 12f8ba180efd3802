"""The request step: what the user typed (a model reference, hardware words) -> the ModelSpec and the devices.

Shared by every command and the Python API, so a model and a machine are read the same way everywhere.
"""

from __future__ import annotations

from typing import Any

from .engines.base import EngineModule
from .memory import Device
from .model.resolve import resolve
from .model.spec import ModelSpec
from .units import parse_sizes

UNKNOWN_GPU = Device(id="CUDA0", name="GPU (size unknown)")


def resolve_model(eng: EngineModule, ref: str | ModelSpec, quant: str | None = None) -> ModelSpec:
    """The model `ref` as `eng` would load it: a named format (`quant`, a :QUANT suffix), else the engine's own
    default (llama.cpp: the GGUF people download), labelled in the result when it is a guess."""
    if isinstance(ref, ModelSpec):
        return ref
    return resolve(ref, quant, default_format=eng.default_weight_format, tag_formats=eng.loads_gguf)


def devices_from(vram: Any = None, gpu: str | None = None, devices: tuple[Device, ...] | None = None,
                 cpu_only: bool = False) -> tuple[Device, ...]:
    """The devices to lay the model out on: explicit `devices`, one per `vram` size ("24GiB,24GiB", bytes, or a
    list), the catalog GPUs named in `gpu` ("2x H100"), none for `cpu_only`; with nothing given, one GPU of
    unknown size."""
    if cpu_only:
        return ()
    if devices is None and vram is not None:
        sizes = (vram,) if isinstance(vram, int) else tuple(vram) if isinstance(vram, (tuple, list)) \
            else parse_sizes(vram)
        return tuple(Device(id=f"CUDA{i}", name="GPU", memory_bytes=int(s)) for i, s in enumerate(sizes))
    if devices is None and gpu is None:
        return (UNKNOWN_GPU,)
    from .hardware.catalog import devices_for_names, with_facts  # lazy: only named GPUs need the catalog

    return tuple(with_facts(d) for d in devices) if devices is not None else devices_for_names(gpu)
