"""MemoryEstimate -> JSON, or a readable terminal table (rich, imported only when a table is drawn)."""

from __future__ import annotations

import io
import json
from typing import Any

from ..accuracy import error_band
from ..engines.base import get_engine
from ..memory import MemoryEstimate
from ..units import fmt_bytes, fmt_mib


def to_json(est: MemoryEstimate) -> str:
    return json.dumps(est.to_dict(), indent=2)


def _components(u: Any) -> list[int]:
    return [u.weights_bytes, u.kv_cache_bytes, u.recurrent_state_bytes, u.compute_bytes, u.overhead_bytes,
            u.total_bytes]


def table(est: MemoryEstimate, explain: bool = False) -> str:
    from rich.console import Console  # lazy: rich costs ~30 ms, only for a drawn table
    from rich.table import Table  # lazy: rich only for a drawn table

    buf = io.StringIO()
    console = Console(file=buf, width=110, force_terminal=False, color_system=None)
    m = est.model
    kinds = ", ".join(f"{n} {k}" for k, n in m.kinds().items())
    fmt = m.weights.format + ("" if m.weights.exact else " (computed)")
    console.print(f"[bold]{m.name}[/] · {m.architecture} · {m.n_layers} layers ({kinds}) · "
                  f"{m.params_total / 1e9:.2f}B params"
                  + (f" ({m.params_active / 1e9:.2f}B active)" if m.params_active != m.params_total else "")
                  + f" · weights {fmt}")
    s = est.settings
    shown = [f"{key} {s[key]}" for key in get_engine(est.engine).headline if s.get(key) not in (None, "")]
    console.print(" · ".join([f"engine {est.engine}", *shown]))
    t = Table(show_edge=False, header_style="bold")
    for col in ("device", "memory", "weights", "KV cache", "state", "compute", "overhead", "total", "left"):
        t.add_column(col, justify="left" if col == "device" else "right")
    for u in (*est.devices, est.host):
        left = None if u.memory_bytes is None else u.memory_bytes - u.total_bytes
        t.add_row(u.id, fmt_bytes(u.memory_bytes) if u.memory_bytes else "-",
                  *[fmt_bytes(x) for x in _components(u)], fmt_bytes(left) if left is not None else "-")
    t.add_row("all", "", *[fmt_bytes(x) for x in (est.weights_bytes, est.kv_cache_bytes, est.recurrent_state_bytes,
                                                    est.compute_bytes, est.overhead_bytes, est.total_bytes)], "")
    if est.devices:
        console.print("devices: " + ", ".join(f"{u.id} {u.name}" for u in est.devices))
    console.print(t)
    marginal = est.kv_bytes_per_token_marginal if est.kv_bytes_per_token_marginal is not None \
        else est.kv_bytes_per_token
    if marginal:
        console.print(f"KV cache per extra token of context: {fmt_bytes(marginal)}")
    if est.kv_bytes_per_token and est.kv_bytes_per_token != marginal:
        console.print(f"KV budget per token of the engine's capacity: {fmt_bytes(est.kv_bytes_per_token)}")
    verdict = {True: "fits", False: "does NOT fit", None: "fit unknown (no GPU memory given: use --vram or --gpu)"}
    line = f"verdict: {_host_verdict(est) or verdict[est.fits]}"
    if est.max_context is not None:
        line += f" · largest context that fits: {est.max_context}"
    console.print(line)
    _engine_view(console, est)
    if explain:
        _explain(console, est)
    band = error_band(est)
    console.print(f"error band: {band['summary']}")
    for g in band["guesses"]:
        if g.removeprefix("model: ") in m.labels:
            continue  # printed below as a note
        console.print(f"  resting on a guess: {g}")
    for w in (*est.warnings, *m.labels):
        console.print(f"note: {w}")
    return buf.getvalue().rstrip()


def host_fit(est: MemoryEstimate) -> tuple[int, int] | None:
    """Without a GPU, (the host's memory, what is left of it; negative: short) where the estimate knows that memory
    (--ram, or this machine's total with --cpu-only: the total llama.cpp's --fit weighs), as `check --cpu-only`
    weighs it; else None."""
    if est.devices:
        return None
    sizes = [est.settings.get(n) for n in get_engine(est.engine).neutral_fields("ram")]
    memory = next((x for x in sizes if isinstance(x, int) and x > 0), None)
    return None if memory is None else (memory, memory - est.total_bytes)


def _host_verdict(est: MemoryEstimate) -> str | None:
    host = host_fit(est)
    if host is None:
        return None
    memory, left = host
    if left >= 0:
        return f"fits in the host's {fmt_bytes(memory)} of memory ({fmt_bytes(left)} left)"
    return f"does NOT fit in the host's {fmt_bytes(memory)} of memory (short by {fmt_bytes(-left)})"


def _engine_view(console: Any, est: MemoryEstimate) -> None:
    v = est.engine_view
    lines = []
    for key, value in v.items():
        if isinstance(value, dict):
            value = ", ".join(f"{k} {_nested(b)}" for k, b in value.items()) or "-"
        elif isinstance(value, list) and not all(isinstance(d, dict) for d in value):
            value = ", ".join(str(x) for x in value) or "-"
        elif isinstance(value, list):
            value = "; ".join(", ".join(f"{k}={fmt_mib(x) if k.endswith('bytes') else x}" for k, x in d.items())
                              for d in value) or "-"
        elif key.endswith("bytes"):
            value = fmt_mib(value)
        elif isinstance(value, str) and "\n" in value:
            # a block the engine logs line by line (llama.cpp's memory breakdown table, its --fit lines):
            # indented under its key as in the log, never wrapped
            lines.append(f"  {key}:")
            lines += [f"    {row}" for row in value.splitlines()]
            continue
        lines.append(f"  {key}: {value}")
    # soft_wrap: a long table row stays one line; no markup: log text such as "[MiB]" is printed as it is
    console.print(f"what {est.engine} will print:\n" + "\n".join(lines), soft_wrap=True, markup=False,
                  highlight=False)


def _nested(b: Any) -> str:
    """A value inside an engine_view dict: sizes in MiB, nested dicts (per device) in brackets."""
    if isinstance(b, dict):
        return "[" + ", ".join(f"{k} {_nested(x)}" for k, x in b.items()) + "]"
    if isinstance(b, bool) or b is None or isinstance(b, str):
        return "-" if b is None else str(b)
    if isinstance(b, float):
        return f"{b:.4g}"
    if isinstance(b, (list, tuple)):
        return "[" + ", ".join(_nested(x) for x in b) + "]"
    return fmt_mib(b)


def _explain(console: Any, est: MemoryEstimate) -> None:
    from rich.table import Table  # lazy: rich only for a drawn table

    t = Table(title="per layer", show_edge=False, header_style="bold")
    for col in ("layer", "kind", "device", "weights", "KV", "cells", "state"):
        t.add_column(col, justify="right" if col not in ("kind", "device") else "left")
    for lu in est.layers:
        t.add_row(str(lu.index), lu.kind, lu.device, fmt_mib(lu.weights_bytes), fmt_mib(lu.kv_bytes),
                  str(lu.cells or "-"), fmt_mib(lu.recurrent_bytes))
    console.print(t)
