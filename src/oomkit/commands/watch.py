"""oomkit watch: live GPU memory per device and per process, with the headroom left for a model's KV cache."""

from __future__ import annotations

import io
import sys
import time
from typing import Any

from ..engines.base import get_engine
from ..errors import OomkitError
from ..hardware.monitor import Monitor
from ..request import resolve_model
from ..units import MiB
from ..watch import EngineTracker, headroom, seen_by_engine
from ._model_args import OPTIONS, parse_model_request, split_args

HELP = """\
usage: oomkit watch [MODEL] [options] [engine flags] [--interval S] [--iterations N | --once]

A live view of used and free memory per GPU and per process (NVML, polled). With MODEL: the headroom its KV
cache would have now (free memory less its weights, runtime and compute buffers) and the largest context that
fits. Running engines (llama-server, vllm, sglang, ollama) whose command line asks for more than their GPU can give
are flagged. Ctrl-C ends it. Without a GPU it says so and exits 0.

options:
  --interval S          seconds between readings (default 1)
  --iterations N        stop after N readings (printed one after the other, not redrawn)
  --once                one reading, then exit
  --engine E, --ctx N, --quant Q, --kv-type T, --parallel N, engine flags: as for `oomkit check`
"""

EXTRA = {"--interval": True, "--iterations": True, "--once": False}


def run(argv: list[str]) -> int:
    if "-h" in argv or "--help" in argv:
        print(HELP)
        return 0
    opts, model, engine_args, command = split_args(argv, {**OPTIONS, **EXTRA})
    interval = _float(opts.get("--interval", "1"), "--interval")
    iterations = 1 if opts.get("--once") else (_int(opts["--iterations"], "--iterations")
                                                if "--iterations" in opts else None)
    want = None
    if model is not None or command is not None:
        req = parse_model_request(argv, extra_options=EXTRA)
        eng = get_engine(req.engine)
        want = (eng, resolve_model(eng, req.model, req.quant), req.settings, req)
    elif engine_args:
        raise OomkitError(f"engine flags {' '.join(engine_args)} need a MODEL")

    monitor = Monitor()
    tracker = EngineTracker()
    try:
        hw = monitor.poll()
        if hw.failed:
            raise OomkitError("could not read this machine's GPUs (" + "; ".join(hw.errors) + ")")
        if not hw.gpus:
            print("no GPU found on this machine: nothing to watch")
            return 0
        if want is not None:
            want = (*want[:3], req, req.hides_every_gpu(detected=True))  # as `oomkit check` reads the variables
            if want[4] is None:
                with req.devices_seen():  # vLLM / SGLang left without the GPUs they start on: refused, as by check
                    seen_by_engine(hw)
        live = iterations is None and sys.stdout.isatty()
        if live:
            _live(monitor, tracker, want, interval, hw)
            return 0
        n = 0
        while True:
            print(snapshot_text(hw, want, tracker, monitor.source))
            n += 1
            if iterations is not None and n >= iterations:
                return 0
            time.sleep(interval)
            print()
            hw = monitor.poll()
    except KeyboardInterrupt:
        return 0
    finally:
        monitor.close()


def _live(monitor: Any, tracker: Any, want: Any, interval: float, hw: Any) -> None:
    from rich.console import Console  # lazy: rich costs ~30 ms, only for a drawn table
    from rich.live import Live
    from rich.text import Text

    console = Console()
    with Live(Text(snapshot_text(hw, want, tracker, monitor.source)), console=console, auto_refresh=False,
              transient=False) as live:
        while True:
            time.sleep(interval)
            hw = monitor.poll()
            live.update(Text(snapshot_text(hw, want, tracker, monitor.source)), refresh=True)


def snapshot_text(hw: Any, want: Any, tracker: Any, source: str) -> str:
    from rich.console import Console  # lazy: rich costs ~30 ms, only for a drawn table
    from rich.table import Table

    buf = io.StringIO()
    console = Console(file=buf, width=110, force_terminal=False, color_system=None, markup=False,
                      highlight=False, soft_wrap=True)
    console.print(f"{time.strftime('%H:%M:%S')} · {len(hw.gpus)} GPU{'s' if len(hw.gpus) != 1 else ''} "
                  f"(read via {source})")
    t = Table(show_edge=False, header_style="bold")
    for col in ("GPU", "name", "total", "used", "free", "used %"):
        t.add_column(col, justify="left" if col in ("GPU", "name") else "right")
    for g in hw.gpus:
        pct = "-" if not g.total_bytes or g.used_bytes is None else f"{100 * g.used_bytes / g.total_bytes:.0f}%"
        t.add_row(g.id, g.name, _mib(g.total_bytes), _mib(g.used_bytes), _mib(g.free_bytes), pct)
    console.print(t)
    procs = [p for g in hw.gpus for p in g.processes]
    if procs:
        pt = Table(show_edge=False, header_style="bold")
        for col in ("GPU", "pid", "process", "memory"):
            pt.add_column(col, justify="right" if col in ("pid", "memory") else "left")
        ids = {g.index: g.id for g in hw.gpus}
        for p in procs:
            pt.add_row(ids.get(p.gpu_index, str(p.gpu_index)), str(p.pid), p.name, _mib(p.used_bytes))
        console.print(pt)
    elif hw.gpus and hw.gpus[0].vendor == "nvidia":
        console.print("no processes on the GPUs")
    if want is not None:

        eng, spec, settings, req, hidden = want
        rooms, machine, seen = [], {}, []
        if hidden is not None:  # CUDA_VISIBLE_DEVICES=-1 llama-server ...: no GPU memory to watch for it
            console.print(f"headroom: {hidden}")
        else:
            try:
                with req.devices_seen() as seen:  # CUDA_VISIBLE_DEVICES and the like: the GPUs its engine sees
                    engine_hw, machine = seen_by_engine(hw)
                rooms = headroom(eng, spec, settings, engine_hw)
            except OomkitError as e:
                console.print(f"headroom: {e}")
        for n in dict.fromkeys(seen):
            console.print(f"note: {n}")
        n_ctx = getattr(settings, eng.context_field, None) or spec.n_ctx_train
        for r in rooms:
            on = machine.get(r.gpu_id, r.gpu_id)
            on = on if on == r.gpu_id else f"{on} (the engine's {r.gpu_id})"
            line = (f"{spec.name} at {n_ctx} tokens on {on}: {_mib(r.headroom_bytes)} left for the KV cache, "
                    f"it needs {_mib(r.kv_needed_bytes)}")
            console.print(line + (" · fits" if r.fits else " · WARNING: does not fit"))
        if rooms:
            best = rooms[0].max_context
            console.print(f"largest context that fits in the free memory now: {best if best else 'none'}")
    for e in tracker.engines(hw):
        cmd = " ".join(e.command)[:80]
        if e.error:
            console.print(f"engine pid {e.process.pid} ({cmd}): not estimated ({e.error})")
        elif e.fits is False:
            console.print(f"WARNING: engine pid {e.process.pid} ({cmd}) needs {_mib(e.needed_bytes)} but its GPU "
                          f"can give it {_mib(e.available_bytes)}: its context would not fit")
    for n in hw.notes:
        console.print(f"note: {n}")
    return buf.getvalue().rstrip()


def _mib(n: int | None) -> str:
    return "-" if n is None else f"{n / MiB:,.0f} MiB"


def _float(v: str, name: str) -> float:
    try:
        x = float(v)
    except ValueError:
        raise OomkitError(f"{name} takes a number of seconds, got {v!r}") from None
    if x < 0:
        raise OomkitError(f"{name} must not be negative")
    if not x <= 86400:  # NaN and inf too: time.sleep refuses them (ValueError, OverflowError)
        raise OomkitError(f"{name} {v!r}: seconds between readings, at most 86400 (a day)")
    return x


def _int(v: str, name: str) -> int:
    try:
        x = int(v)
    except ValueError:
        raise OomkitError(f"{name} takes a whole number, got {v!r}") from None
    if x < 1:
        raise OomkitError(f"{name} must be at least 1")
    return x
