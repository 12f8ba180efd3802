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

# What LM Studio says where it runs an MLX model: mlx/settings.py LMS_PROGRAM, whether the model came as
# `lms load MODEL` or as MODEL with engine "lmstudio" (lm_studio_load)
LM_STUDIO_MLX_NOTE = ("LM Studio runs this MLX model on its MLX engine (lmstudio-ai/mlx-engine, on mlx-lm), not its "
                      "llama.cpp runtime: sized as that engine loads it")


def lm_studio_load(engine: object, model: object, args: tuple[str, ...] | list[str] = (),
                   env: dict[str, str] | None = None) -> Any:
    """Engine "lmstudio" (or "lm-studio") with a model LM Studio loads on its MLX engine (engines/lms_keys.py
    lms_names_mlx: an mlx-community repo, a key or path naming MLX, an @4bit variant): the `lms load MODEL ARGS`
    command LM Studio runs, parsed (engines/cmdline.py parse_command, mlx/args.py from_lms: LM Studio's 4096-token
    default context, --context-length N, -c N); None for any other engine or model (a GGUF stays on LM Studio's
    llama.cpp runtime, llama.cpp's alias). The Python API and the CLI's MODEL --engine lmstudio both read it so."""
    # lazy: `import oomkit` stays light (see estimate); engines.base, lms_keys and cmdline import no oomkit.estimate
    from .engines.base import LM_STUDIO_NAMES
    from .engines.cmdline import parse_command
    from .engines.lms_keys import lms_names_mlx

    if not isinstance(engine, str) or engine.strip().lower() not in LM_STUDIO_NAMES:
        return None
    if not isinstance(model, str) or not lms_names_mlx(model):
        return None
    return parse_command(["lms", "load", model, *args], env)


def lm_studio_note(engine: str, settings: Any) -> tuple[str, ...]:
    """LM_STUDIO_MLX_NOTE where the mlx engine runs as LM Studio's (settings.program "lmstudio"), else nothing."""
    return (LM_STUDIO_MLX_NOTE,) if engine == "mlx" and getattr(settings, "program", None) == "lmstudio" else ()


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
    engine "lmstudio" (or "lm-studio") is llama.cpp's alias for a GGUF; with an MLX model ("mlx-community/...", a
    "-MLX-8bit" key, an "@4bit" variant) it is LM Studio's MLX engine, sized as `lms load MODEL` loads it (engine
    "mlx", from LM Studio's 4096-token context; its options are the mlx engine's, e.g. context_length=8192), with a
    note that says so first among the warnings, as the CLI's `MODEL --engine lmstudio` (lm_studio_load).

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
    if isinstance(model, os.PathLike):  # a pathlib.Path names what its text names (request.py resolve_model)
        model = os.fspath(model)
    eng = get_engine(engine)
    lms = None if isinstance(settings, eng.Settings) else lm_studio_load(engine, model)
    if lms is not None:
        # LM Studio runs an MLX model on its MLX engine, not its llama.cpp runtime: the model as `lms load MODEL`
        # loads it, from LM Studio's defaults (its 4096-token context) where settings and options do not say
        eng, model, quant = get_engine(lms.engine), lms.model or model, quant or lms.quant
        settings = lms.settings if settings is None else settings
    if settings is not None and not isinstance(settings, eng.Settings):
        raise SettingsError(f"settings: a {type(settings).__name__} is not the {eng.name} engine's "
                            f"{eng.Settings.__name__}")
    unknown = sorted(set(options) - set(eng.Settings.__dataclass_fields__))
    if unknown:
        raise SettingsError(f"{', '.join(unknown)}: no option of the {eng.name} engine"
                            + (" (LM Studio runs this MLX model on its MLX engine)" if lms is not None else "")
                            + f"; its options: {', '.join(f.name for f in fields(eng.Settings))}")
    if lms is None and isinstance(model, str) and (read := read_as_model_flag(eng, model)) is not None:
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
    if note := lm_studio_note(eng.name, settings):  # said first: which runtime LM Studio runs the model on
        est = replace(est, warnings=(*note, *est.warnings))
    if not devs:  # no GPU: the verdict weighs the host's memory where the settings know it (--ram, --cpu-only)
        ram = next((getattr(settings, n) for n in eng.neutral_fields("ram") if getattr(settings, n, None)), None)
        est = replace(est, host=replace(est.host, memory_bytes=ram)) if ram else est
    if find_max_context and est.fits is not None:
        from .limits import max_context  # lazy: only a known memory size has a largest context

        est = est.with_max_context(max_context(eng, spec, devs, settings))
    return est
