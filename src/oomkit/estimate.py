"""`estimate(...)`: the Python API the CLI and the web app call: resolve the model, pick the engine, lay it out on
the devices, and find the largest context that fits. The result types live in `memory` (re-exported here).
"""

from __future__ import annotations

import os
from dataclasses import fields, replace
from typing import Any

from .errors import SettingsError
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
    ram: str | int | None = None,
    settings: Any = None,
    find_max_context: bool = True,
    **options: Any,
) -> MemoryEstimate:
    """How much memory `model` takes with `engine` and its options (the engine's own option names, e.g.
    n_ctx=32768, cache_type_k="q8_0", flash_attn="on", n_parallel=1 for llama.cpp).

    vram: one size per GPU ("24GiB", "24GiB,24GiB", an int of bytes, or a list of these; "24GB" is 24 x 10^9
    bytes, "24GiB" 24 x 2^30; a float or a bare number under 1 MiB is refused); gpu: catalog names ("2x H100");
    devices: explicit oomkit.memory.Device tuple; cpu_only: no GPU at all (True or False). Give one of these;
    with none, one GPU of unknown size is assumed. ram: the host's total memory, by vram's rules for one size
    ("64GiB", or an int of bytes): llama.cpp's --fit fits the context to it when there is no GPU (cpu_only).
    settings: a ready engine Settings object (as parsed from a command line); options then override it.

    Raises oomkit.SettingsError (an option or argument of the wrong type, out of range, or contradicting
    another), oomkit.HardwareError (a GPU name, memory size or device count that cannot be), oomkit.ModelError
    (the model), oomkit.HubError (the hub); all are oomkit.OomkitError. See docs/api.md.
    """
    # lazy: `import oomkit`, which every command runs (--help too), stays as light as the types above
    from .engines.base import get_engine
    from .engines.cmdline import read_as_model_flag
    from .flags import check_settings
    from .request import devices_from, resolve_model, with_ram

    if not isinstance(engine, str):
        raise SettingsError(f"engine: {engine!r} is no engine name; give a string such as 'llama.cpp' or 'vllm'")
    if not isinstance(find_max_context, bool):
        raise SettingsError(f"find_max_context: {find_max_context!r} is not True or False")
    eng = get_engine(engine)
    if settings is not None and not isinstance(settings, eng.Settings):
        raise SettingsError(f"settings: a {type(settings).__name__} is not the {eng.name} engine's "
                            f"{eng.Settings.__name__}")
    unknown = sorted(set(options) - set(eng.Settings.__dataclass_fields__))
    if unknown:
        raise SettingsError(f"{', '.join(unknown)}: no option of the {eng.name} engine; its options: "
                            f"{', '.join(f.name for f in fields(eng.Settings))}")
    if isinstance(model, os.PathLike):  # a pathlib.Path names what its text names (request.py resolve_model)
        model = os.fspath(model)
    if isinstance(model, str) and (read := read_as_model_flag(eng, model)) is not None:
        # a name the engine reads itself (mlx-community's "-MXFP4-Q8"), as the CLI reads MODEL: the model its flag
        # resolves, and what the name says (mlx_lm.convert --q-bits) where neither settings nor options say it
        model, named = read
        default = eng.settings()
        base = settings if settings is not None else default
        said = {f.name: getattr(named, f.name) for f in fields(named) if f.name not in options
                and getattr(named, f.name) != getattr(default, f.name) == getattr(base, f.name)}
        settings = replace(base, **said)
    settings = replace(settings, **options) if settings is not None else eng.settings(**options)
    if ram is not None:
        settings = with_ram(eng, settings, ram)
    check_settings(settings)  # every option's type and range, as the engine takes them
    spec = eng.model_for(resolve_model(eng, model, quant), settings)
    devs = devices_from(vram, gpu, devices, cpu_only)
    est = eng.estimate(spec, devs, settings)
    if gpu is not None:  # which size a name sold in several was taken as (hardware/catalog.py size_notes)
        from .hardware.catalog import size_notes  # lazy: only named GPUs need the catalog

        est = replace(est, warnings=(*size_notes(gpu), *est.warnings))
    if not devs:  # no GPU: the verdict weighs the host's memory where the settings know it (--ram, --cpu-only)
        ram = next((getattr(settings, n) for n in eng.neutral_fields("ram") if getattr(settings, n, None)), None)
        est = replace(est, host=replace(est.host, memory_bytes=ram)) if ram else est
    if find_max_context and est.fits is not None:
        from .limits import max_context  # lazy: only a known memory size has a largest context

        est = est.with_max_context(max_context(eng, spec, devs, settings))
    return est
