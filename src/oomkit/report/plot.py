"""The context-impact chart: GPU memory against context length for each KV cache type, with the VRAM sizes as
horizontal lines, written as PNG or SVG with matplotlib (the optional extra `oomkit[plot]`, imported only here)."""

from __future__ import annotations

from pathlib import Path

from ..errors import OomkitError
from ..limits import Tables
from ..units import GiB
from .tables import ctx_label

FORMATS = (".png", ".svg")


def check_plot_target(path: str | Path) -> None:
    """Fail early (before the tables are computed): a known format, and matplotlib installed."""
    if Path(path).suffix.lower() not in FORMATS:
        raise OomkitError(f"--plot {path}: give a .png or .svg file name")
    import importlib.util  # lazy: only when a plot is asked for

    if importlib.util.find_spec("matplotlib") is None:
        raise OomkitError("--plot needs matplotlib: pip install 'oomkit[plot]'")


def plot(t: Tables, path: str | Path) -> Path:
    check_plot_target(path)
    path = Path(path)
    from matplotlib.figure import Figure  # optional extra oomkit[plot], heavy

    rows = [r for r in t.rows if all(r.total_bytes.get(kv) is not None for kv in t.kv_types)]
    if not rows or not t.kv_types:
        raise OomkitError("nothing to plot: no KV cache type could be estimated")
    fig = Figure(figsize=(9, 5.5), layout="constrained")
    ax = fig.subplots()
    xs = [r.n_ctx for r in rows]
    top = 0.0
    for i, kv in enumerate(t.kv_types):
        color = f"C{i}"
        total = [r.total_bytes[kv] / GiB for r in rows]
        kv_only = [r.kv_cache_bytes[kv] / GiB for r in rows]
        ax.plot(xs, total, marker="o", color=color, label=f"{kv}: all GPU memory")
        ax.plot(xs, kv_only, linestyle=":", color=color, label=f"{kv}: KV cache alone")
        top = max(top, *total)
    # VRAM lines up to the first size above the largest requirement
    shown = []
    for g in sorted((g for g in t.targets if g.kind == "size"), key=lambda g: g.memory_bytes):
        shown.append(g)
        if g.memory_bytes / GiB > top:
            break
    shown += [g for g in t.targets if g.kind != "size"]  # the detected or planned GPUs, always
    for g in shown:
        y = g.memory_bytes / GiB
        style = "-" if g.kind != "size" else "--"
        ax.axhline(y, color="0.55", linewidth=0.8, linestyle=style)
        ax.annotate(g.label, (xs[-1], y), xytext=(0, 2), textcoords="offset points", fontsize=8, color="0.35",
                    ha="right")
    ax.set_xscale("log", base=2)
    ax.set_xticks(xs, [ctx_label(x) for x in xs])
    ax.minorticks_off()
    ax.set_xlabel("context length (tokens)")
    ax.set_ylabel("GiB")
    ax.set_ylim(bottom=0)
    m = t.model
    ax.set_title(f"{m.name} · {m.weights.format} · {t.engine}: memory by context and KV cache type", fontsize=10)
    ax.grid(True, which="major", axis="y", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    fig.savefig(path, format=path.suffix[1:].lower())
    return path
