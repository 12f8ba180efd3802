"""`estimate(...)`: the Python API the CLI and the web app call: resolve the model, pick the engine, lay it out on
the devices, and find the largest context that fits. The result types live in `memory` (re-exported here).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from .memory import Device, LayerUse, MemoryEstimate, Usage
from .model.spec import ModelSpec

__all__ = ["Device", "LayerUse", "MemoryEstimate", "Usage", "estimate"]


# ---------------------------------------------------------------------------------------------------------
# The Python API


def estimate(
    model: str | ModelSpec,
    engine: str = "llama.cpp",
    *,
    quant: str | None = None,
    vram: str | int | tuple[int, ...] | list[int] | None = None,
    gpu: str | None = None,
    devices: tuple[Device, ...] | None = None,
    cpu_only: bool = False,
    settings: Any = None,
    find_max_context: bool = True,
    **options: Any,
) -> MemoryEstimate:
    """How much memory `model` takes with `engine` and its options (the engine's own option names, e.g.
    n_ctx=32768, cache_type_k="q8_0", flash_attn="on", n_parallel=1 for llama.cpp).

    vram: one size per GPU ("24GiB", "24GiB,24GiB", or bytes); devices: explicit oomkit.memory.Device
    tuple; cpu_only: no GPU at all. With no memory given, one GPU of unknown size is assumed.
    settings: a ready engine Settings object (as parsed from a command line); options then override it.
    """
    # lazy: `import oomkit`, which every command runs (--help too), stays as light as the types above
    from .engines.base import get_engine
    from .request import devices_from, resolve_model

    eng = get_engine(engine)
    settings = replace(settings, **options) if settings is not None else eng.settings(**options)
    spec = resolve_model(eng, model, quant)
    devs = devices_from(vram, gpu, devices, cpu_only)
    est = eng.estimate(spec, devs, settings)
    if find_max_context and est.fits is not None:
        from .limits import max_context  # lazy: only a known memory size has a largest context

        est = est.with_max_context(max_context(eng, spec, devs, settings))
    return est
