"""Repeated readings for `oomkit watch`: GPU memory per device and per process, the headroom a model's KV cache
would have, and running engines whose context would not fit.

NVML is opened once and polled (a reading takes well under a millisecond per GPU); without NVML each poll runs
the detection chain again (nvidia-smi, rocm-smi, sysfs, sysctl).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import OomkitError
from .detect import (
    Gpu,
    GpuProcess,
    Hardware,
    NotPresent,
    NvmlSession,
    Probe,
    ProbeFailed,
    detect,
    host_memory,
)


class Monitor:
    def __init__(self, probe: Probe | None = None):
        self.probe = probe or Probe()
        self.session: NvmlSession | None = None
        self.source = "detect"
        try:
            self.session = NvmlSession(self.probe)
            self.source = "nvml"
        except (NotPresent, ProbeFailed):
            self.session = None

    def poll(self) -> Hardware:
        if self.session is not None:
            try:
                gpus = self.session.read(processes=True)
                return Hardware(gpus=tuple(gpus), host=host_memory(self.probe))
            except ProbeFailed as e:
                self.close()
                hw = detect(self.probe)
                return Hardware(gpus=hw.gpus, host=hw.host, notes=(f"NVML stopped answering ({e})", *hw.notes),
                                errors=hw.errors)
        return detect(self.probe)

    def close(self) -> None:
        if self.session is not None:
            self.session.close()
            self.session = None


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


def headroom(eng: Any, spec: Any, settings: Any, hw: Hardware) -> list[Headroom]:
    from ..limits import device_slack, largest_context

    devs = hw.devices()
    if not devs:
        return []
    est = eng.estimate(spec, devs, settings)

    def slack(n: int) -> int | None:
        try:
            return device_slack(eng.estimate(spec, devs, eng.with_context(settings, n)))
        except OomkitError:
            return None

    best = largest_context(slack, spec.n_ctx_train or (1 << 20))
    out = []
    for u in est.devices:
        need = u.kv_cache_bytes + u.recurrent_state_bytes
        room = (u.memory_bytes or 0) - u.weights_bytes - u.overhead_bytes - u.compute_bytes
        out.append(Headroom(gpu_id=u.id, kv_needed_bytes=need, headroom_bytes=room, max_context=best))
    return out


# Programs whose command line oomkit can read (oomkit.engines.cmdline.parse_command).
ENGINE_PROGRAMS = {"llama-server", "llama-cli", "vllm", "sglang", "ollama"}
ENGINE_MODULES = ("vllm.entrypoints", "sglang.launch_server", "mlx_lm")


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
            import psutil

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
        if not argv or not _is_engine(argv):
            self._seen[pid] = None
            return None
        try:
            from ..engines.base import Device, get_engine
            from ..engines.cmdline import parse_command
            from ..estimate import _resolve_for_engine

            parsed = parse_command(list(argv))
            eng = get_engine(parsed.engine)
            spec = _resolve_for_engine(eng, parsed.model, parsed.quant)
            est = eng.estimate(spec, (Device(id="CUDA0", name="GPU"),), parsed.settings)
            result: Any = est
        except Exception as e:  # its model may be unreadable from here (another user's file, no network)
            result = f"{type(e).__name__}: {e}" if not isinstance(e, OomkitError) else str(e)
        self._seen[pid] = (tuple(argv), result)
        return self._seen[pid]


def _is_engine(argv: list[str]) -> bool:
    prog = Path(argv[0]).name.removesuffix(".exe")
    if prog in ENGINE_PROGRAMS:
        return prog != "ollama" or (len(argv) > 1 and argv[1] in ("run", "serve"))
    if prog.startswith("python") and len(argv) > 2 and argv[1] == "-m":
        return argv[2].startswith(ENGINE_MODULES)
    return False


def _need_on(est: Any, gpu: Gpu) -> int | None:
    return est.devices[0].total_bytes if est.devices else None
