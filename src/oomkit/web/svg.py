"""Inline SVG charts for the hub's pages: a stacked memory bar per device and the memory-vs-context chart.
Text in them is escaped like everything else on a page."""

from __future__ import annotations

import math
from html import escape

from ..units import GiB

# (key, label, colour variable) of a bar's parts, in the order the engines allocate them
PARTS = (("weights_bytes", "weights", "--w"), ("kv_cache_bytes", "KV cache", "--kv"),
         ("recurrent_state_bytes", "state", "--st"), ("compute_bytes", "compute", "--cp"),
         ("overhead_bytes", "overhead", "--ov"))


def gib(n: int | float | None) -> str:
    return "-" if n is None else f"{n / GiB:,.2f} GiB"


def legend(free: bool = True) -> str:
    items = [f'<span><i style="background:var({c})"></i>{label}</span>' for _, label, c in PARTS]
    if free:
        items.append('<span><i style="background:var(--free)"></i>free</span>')
    return f'<div class="legend">{"".join(items)}</div>'


def stacked_bar(parts: dict[str, int], memory: int | None, scale_to: int = 0) -> str:
    """One device: its parts side by side, the rest of its memory as free; past its memory, a red end mark.
    scale_to: a device of no known size (the host) is drawn to the GPUs' scale, so the bars compare."""
    used = sum(parts.get(k, 0) for k, _, _ in PARTS)
    scale = max(memory or scale_to, used) or 1
    x = 0.0
    rects = []
    for key, label, colour in PARTS:
        v = parts.get(key, 0)
        if v <= 0:
            continue
        w = 1000 * v / scale
        rects.append(f'<rect x="{x:.2f}" y="0" width="{w:.2f}" height="26" style="fill:var({colour})">'
                     f'<title>{escape(label)}: {gib(v)}</title></rect>')
        x += w
    if memory is not None and memory > used:
        rects.append(f'<rect x="{x:.2f}" y="0" width="{1000 - x:.2f}" height="26" style="fill:var(--free)">'
                     f'<title>free: {gib(memory - used)}</title></rect>')
    if memory is not None and used > memory:
        m = 1000 * memory / scale
        rects.append(f'<line x1="{m:.2f}" x2="{m:.2f}" y1="-2" y2="28" stroke="#c0392b" stroke-width="4"/>')
    # a role=img hides its parts' titles from a screen reader: the label says them (each bar read "memory use" alone)
    said = [f"{label} {gib(parts[key])}" for key, label, _ in PARTS if parts.get(key, 0) > 0]
    if memory is not None:
        said.append(f"free {gib(memory - used)}" if memory >= used else f"{gib(used - memory)} over its memory")
    return (f'<svg viewBox="0 -2 1000 30" preserveAspectRatio="none" width="100%" height="26" role="img" '
            f'aria-label="{escape("memory use: " + ", ".join(said) if said else "memory use: none")}">'
            f'{"".join(rects)}</svg>')


COLOURS = ("#2f5fd0", "#e07b00", "#1e8a4c", "#9c6fb6", "#c0392b", "#59a89c")


def context_chart(series: dict[str, list[tuple[int, int]]], lines: list[tuple[str, int]], title: str) -> str:
    """Memory (GiB) against context (log2 axis), one line per KV type; dashed lines at the VRAM sizes given."""
    points = [p for s in series.values() for p in s]
    if not points:
        return ""
    w, h, left, right, top, bottom = 760, 330, 62, 16, 26, 46
    xs = [math.log2(n) for n, _ in points]
    x0, x1 = min(xs), max(xs)
    if x1 == x0:
        x1 = x0 + 1
    ymax = max(v for _, v in points)
    shown = [(label, v) for label, v in lines if v <= ymax * 1.6]
    ymax = max([ymax, *(v for _, v in shown)]) * 1.08 / GiB
    step = _nice_step(ymax)

    def px(n: int) -> float:
        return left + (math.log2(n) - x0) / (x1 - x0) * (w - left - right)

    def py(b: float) -> float:
        return top + (1 - b / GiB / ymax) * (h - top - bottom)

    out = [f'<svg viewBox="0 0 {w} {h}" width="100%" role="img" aria-label="{escape(title)}" '
           f'style="max-width:{w}px;background:#fff">']
    y = 0.0
    while y <= ymax + 1e-9:
        yy = py(y * GiB)
        out.append(f'<line x1="{left}" x2="{w - right}" y1="{yy:.1f}" y2="{yy:.1f}" stroke="#eceef3"/>'
                   f'<text x="{left - 6}" y="{yy + 4:.1f}" font-size="11" text-anchor="end" fill="#5b6475">'
                   f'{y:g}</text>')
        y += step
    ticks = sorted({n for n, _ in points})
    every = max(1, math.ceil(len(ticks) / 8))
    for n in ticks[::every]:
        xx = px(n)
        out.append(f'<text x="{xx:.1f}" y="{h - bottom + 16}" font-size="11" text-anchor="middle" fill="#5b6475">'
                   f'{escape(_ctx(n))}</text>')
    out.append(f'<text x="{(left + w - right) / 2:.0f}" y="{h - 8}" font-size="12" text-anchor="middle" '
               f'fill="#1d2330">context (tokens, log scale)</text>')
    out.append(f'<text x="14" y="{(top + h - bottom) / 2:.0f}" font-size="12" text-anchor="middle" fill="#1d2330" '
               f'transform="rotate(-90 14 {(top + h - bottom) / 2:.0f})">GiB on the GPU</text>')
    for label, v in shown:
        yy = py(v)
        out.append(f'<line x1="{left}" x2="{w - right}" y1="{yy:.1f}" y2="{yy:.1f}" stroke="#8a93a6" '
                   f'stroke-dasharray="5 4"/><text x="{w - right - 4}" y="{yy - 4:.1f}" font-size="11" '
                   f'text-anchor="end" fill="#5b6475">{escape(label)}</text>')
    for i, (name, pts) in enumerate(series.items()):
        c = COLOURS[i % len(COLOURS)]
        path = " ".join(f"{'M' if j == 0 else 'L'}{px(n):.1f},{py(v):.1f}" for j, (n, v) in enumerate(sorted(pts)))
        out.append(f'<path d="{path}" fill="none" stroke="{c}" stroke-width="2.2"/>')
        for n, v in pts:
            out.append(f'<circle cx="{px(n):.1f}" cy="{py(v):.1f}" r="3" fill="{c}"><title>{escape(name)} at '
                       f'{escape(_ctx(n))}: {gib(v)}</title></circle>')
        out.append(f'<rect x="{left + 10 + i * 110}" y="6" width="12" height="12" fill="{c}"/>'
                   f'<text x="{left + 27 + i * 110}" y="16" font-size="12" fill="#1d2330">KV {escape(name)}</text>')
    out.append(f'<line x1="{left}" x2="{left}" y1="{top}" y2="{h - bottom}" stroke="#8a93a6"/>'
               f'<line x1="{left}" x2="{w - right}" y1="{h - bottom}" y2="{h - bottom}" stroke="#8a93a6"/></svg>')
    return "".join(out)


def _nice_step(span: float) -> float:
    raw = span / 6 if span > 0 else 1
    mag = 10 ** math.floor(math.log10(raw))
    return next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)


def _ctx(n: int) -> str:
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return f"{n >> 20}M"
    return f"{n // 1024}K" if n % 1024 == 0 else str(n)
