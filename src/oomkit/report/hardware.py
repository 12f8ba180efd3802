"""Hardware (oomkit.hardware.detect) -> the `oomkit gpus` table, or JSON."""

from __future__ import annotations

import io
import json

from ..units import GiB, MiB


def to_json(hw) -> str:
    return json.dumps(hw.to_dict(), indent=2)


def _mib(n: int | None) -> str:
    return "-" if n is None else f"{n / MiB:,.0f} MiB"


def text(hw) -> str:
    from rich.console import Console  # lazy: rich costs ~30 ms, only for a drawn table
    from rich.table import Table

    buf = io.StringIO()
    console = Console(file=buf, width=120, force_terminal=False, color_system=None, markup=False,
                      highlight=False, soft_wrap=True)
    if hw.gpus:
        sources = sorted({g.source for g in hw.gpus})
        console.print(f"{len(hw.gpus)} GPU{'s' if len(hw.gpus) != 1 else ''} (read via {', '.join(sources)})")
        t = Table(show_edge=False, header_style="bold")
        for col in ("GPU", "name", "total", "free", "used by processes", "driver reserve", "bandwidth"):
            t.add_column(col, justify="left" if col in ("GPU", "name") else "right")
        for g in hw.gpus:
            t.add_row(g.id, g.name, _mib(g.total_bytes), _mib(g.free_bytes), _mib(g.used_bytes),
                      _mib(g.reserved_bytes), f"{g.bandwidth_gbs:,.0f} GB/s" if g.bandwidth_gbs else "-")
        console.print(t)
        for g in hw.gpus:
            for n in g.notes:
                console.print(f"{g.id}: {n}")
            if g.bandwidth_gbs is None:
                console.print(f"{g.id}: not in the GPU catalog (no bandwidth figure)")
    else:
        console.print("no GPU found on this machine (NVIDIA, AMD or Apple silicon)")
    h = hw.host
    if h is not None:
        line = f"host RAM: {h.total_bytes / GiB:.1f} GiB, {h.available_bytes / GiB:.1f} GiB available"
        line += (f" · swap {h.swap_total_bytes / GiB:.1f} GiB ({h.swap_free_bytes / GiB:.1f} GiB free)"
                 if h.swap_total_bytes else " · no swap")
        console.print(line)
    else:
        console.print("host RAM: unknown (psutil missing and no /proc/meminfo)")
    for n in (*hw.notes, *hw.errors):
        console.print(f"note: {n}")
    return buf.getvalue().rstrip()
