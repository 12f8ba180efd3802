"""What `oomkit watch` reads into the GPU readings: the headroom a model's KV cache would have now, and the running
engines whose command line asks for more than their GPU can give."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from .engines.base import EngineModule, get_engine
from .engines.cmdline import is_engine_command, parse_command
from .errors import OomkitError
from .hardware.detect import Gpu, GpuProcess, Hardware
from .hardware.visible import device_prefix, select
from .limits import max_context
from .memory import Device, MemoryEstimate
from .model.spec import ModelSpec
from .request import resolve_model


@dataclass(frozen=True)
class Headroom:
    """What a model at a context would have on a GPU now: the memory left for its KV cache once its weights,
    runtime and compute buffers are in, against the KV cache it needs."""

    gpu_id: str
    kv_needed_bytes: int
    headroom_bytes: int  # free - (weights + runtime + compute) on this GPU
    max_context: int | None  # the largest context that fits in the free memory now

    @property
    def fits(self) -> bool:
        return self.headroom_bytes >= self.kv_needed_bytes


def headroom(eng: EngineModule, spec: ModelSpec, settings: Any, hw: Hardware) -> list[Headroom]:
    devs = hw.devices()
    if not devs:
        return []
    settings = eng.typed_layout(settings)  # the KV headroom of the layout as typed (not refitted by the engine)
    est = eng.estimate(spec, devs, settings)
    best = max_context(eng, spec, devs, settings)
    out = []
    for u in est.devices:
        need = u.kv_cache_bytes + u.recurrent_state_bytes
        room = (u.memory_bytes or 0) - u.weights_bytes - u.overhead_bytes - u.compute_bytes
        out.append(Headroom(gpu_id=u.id, kv_needed_bytes=need, headroom_bytes=room, max_context=best))
    return out


def seen_by_engine(hw: Hardware) -> tuple[Hardware, dict[str, str]]:
    """Within engine_sees (a model's command setting CUDA_VISIBLE_DEVICES and the like): the reading's GPUs its
    engine's process sees, renumbered as it numbers them, by the rule detect applies to the detected GPUs
    (hardware/visible.py select; vLLM and SGLang left with none, or fewer than their parallel settings start
    workers on, refused), and each renumbered id's id on this machine."""
    machine: dict[str, str] = {}

    def renumber(g: Gpu, prefix: str, index: int) -> Gpu:
        machine[f"{prefix}{index}"] = g.id
        return replace(g, index=index)

    gpus = select(list(hw.gpus), device_prefix, renumber, "detected")
    return replace(hw, gpus=tuple(gpus)), machine


@dataclass(frozen=True)
class EngineProcess:
    process: GpuProcess
    command: tuple[str, ...]
    needed_bytes: int | None = None  # what oomkit estimates its command needs on this GPU
    available_bytes: int | None = None  # what it can have there: its own use + the free memory
    error: str | None = None  # why its command could not be estimated

    @property
    def fits(self) -> bool | None:
        if self.needed_bytes is None or self.available_bytes is None:
            return None
        return self.needed_bytes <= self.available_bytes


@dataclass
class EngineTracker:
    """Running engines found among the GPU processes, each command read and estimated once (by pid)."""

    cmdline: Any = None  # pid -> argv (psutil by default; replaced in tests)
    _seen: dict[int, tuple[tuple[str, ...], Any]] = field(default_factory=dict)

    def _argv(self, pid: int) -> list[str] | None:
        if self.cmdline is not None:
            return self.cmdline(pid)
        try:
            import psutil  # optional: read only when a GPU process is found

            return psutil.Process(pid).cmdline()
        except Exception:  # gone, or another user's: not an engine we can read
            return None

    def engines(self, hw: Hardware) -> list[EngineProcess]:
        out = []
        for g in hw.gpus:
            for p in g.processes:
                found = self._read(p.pid)
                if found is None:
                    continue
                argv, est_or_error = found
                if isinstance(est_or_error, str):
                    out.append(EngineProcess(p, argv, error=est_or_error))
                    continue
                need = _need_on(est_or_error, g)
                avail = None if g.free_bytes is None else g.free_bytes + (p.used_bytes or 0)
                out.append(EngineProcess(p, argv, needed_bytes=need, available_bytes=avail))
        return out

    def _read(self, pid: int) -> tuple[tuple[str, ...], Any] | None:
        if pid in self._seen:
            return self._seen[pid]
        argv = self._argv(pid)
        if not argv or not is_engine_command(argv):
            self._seen[pid] = None
            return None
        try:
            parsed = parse_command(list(argv))
            eng = get_engine(parsed.engine)
            spec = resolve_model(eng, parsed.model, parsed.quant)
            est = eng.estimate(spec, (Device(id="CUDA0", name="GPU"),), parsed.settings)
            result: Any = est
        except Exception as e:  # its model may be unreadable from here (another user's file, no network)
            result = f"{type(e).__name__}: {e}" if not isinstance(e, OomkitError) else str(e)
        self._seen[pid] = (tuple(argv), result)
        return self._seen[pid]


def _need_on(est: MemoryEstimate, gpu: Gpu) -> int | None:
    return est.devices[0].total_bytes if est.devices else None
