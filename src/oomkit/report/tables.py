"""The hard-limits and context-impact tables (oomkit.limits.Tables) as a terminal table, Markdown, CSV or JSON."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from ..limits import Tables
from ..units import fmt_bytes

KINDS = ("limits", "context")


def ctx_label(n: int) -> str:
    """2048 -> 2K, 131072 -> 128K, 1048576 -> 1M, 40960 -> 40K; other numbers as they are."""
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return f"{n >> 20}M"
    if n % 1024 == 0:
        return f"{n >> 10}K"
    return str(n)


def _limit_cell(t: Tables, v: int | None) -> str:
    if v is None:
        return "does not fit"
    return f"{v} (max)" if v == t.model.n_ctx_train else str(v)


def _target_label(target: Any) -> str:
    if target.kind == "size":
        return target.label
    return f"{target.label} ({fmt_bytes(target.memory_bytes)} {'free' if target.kind == 'detected' else ''})".replace(
        " )", ")")


def limits_rows(t: Tables) -> tuple[list[str], list[list[str]]]:
    header = ["VRAM", *t.kv_types]
    rows = [[_target_label(g), *(_limit_cell(t, t.limits[g.label][kv]) for kv in t.kv_types)] for g in t.targets]
    return header, rows


def context_rows(t: Tables, with_total: bool = True) -> tuple[list[str], list[list[str]]]:
    header = ["context"]
    for kv in t.kv_types:
        header += [f"{kv} KV", f"{kv} total", f"{kv} fits in"] if with_total else [f"{kv} KV", f"{kv} fits in"]
    rows = []
    for r in t.rows:
        row = [ctx_label(r.n_ctx)]
        for kv in t.kv_types:
            fit = t.smallest_fitting(r, kv) or "none listed"
            kvb, tot = r.kv_cache_bytes.get(kv), r.total_bytes.get(kv)
            cells = [fmt_bytes(kvb) if kvb is not None else "n/a", fmt_bytes(tot) if tot is not None else "n/a", fit]
            row += cells if with_total else [cells[0], cells[2]]
        rows.append(row)
    return header, rows


def title(t: Tables) -> str:
    m, s = t.model, t.settings
    bits = [m.name, m.weights.format, t.engine, f"weights {fmt_bytes(t.weights_bytes)}",
            f"trained context {m.n_ctx_train}"]
    if "n_parallel" in s:
        bits.append(f"{s['n_parallel']} sequence{'s' if s['n_parallel'] != 1 else ''}")
    if "flash_attn" in s:
        bits.append(f"flash attention {s['flash_attn']}")
    return " · ".join(str(b) for b in bits)


def _footer(t: Tables) -> list[str]:
    lines = [f"note: {c.kv} KV cache: {c.error}" for c in t.kv if c.error]
    per = ", ".join(f"{kv} {fmt_bytes(b)}" for kv, b in t.kv_bytes_per_token.items() if b)
    if per:
        lines.append(f"KV cache per token of context: {per}")
    return lines + [f"note: {n}" for n in (*t.notes, *t.model.labels)]


def grid(header: list[str], rows: list[list[str]]) -> str:
    """A plain aligned table (first column left, the rest right): no rich here, the tables must draw fast."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return " " + " │ ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True)))

    rule = "─" + "─┼─".join("─" * w for w in widths) + "─"
    return "\n".join([line(header), rule, *(line(r) for r in rows)])


def terminal(t: Tables, kinds: tuple[str, ...] = KINDS) -> str:
    out = [title(t)]
    if "limits" in kinds:
        out += ["", "hard limits: the largest context (tokens) that fits, by VRAM and KV cache type",
                grid(*limits_rows(t))]
    if "context" in kinds:
        out += ["", "context impact: KV cache and total GPU memory by context length, and the smallest listed VRAM "
                "size that holds it", grid(*context_rows(t))]
    return "\n".join([*out, *_footer(t)]).rstrip()


def markdown(t: Tables, kinds: tuple[str, ...] = KINDS) -> str:
    out = [f"**{title(t)}**", ""]

    def md(header: list[str], rows: list[list[str]]) -> list[str]:
        lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|"]
        return lines + ["| " + " | ".join(r) + " |" for r in rows]

    if "limits" in kinds:
        out += ["Hard limits: the largest context (tokens) that fits, by VRAM and KV cache type", "",
                *md(*limits_rows(t)), ""]
    if "context" in kinds:
        out += ["Context impact: KV cache and total GPU memory by context length, and the smallest listed VRAM "
                "size that holds it", "", *md(*context_rows(t)), ""]
    out += [line.removeprefix("note: ") for line in _footer(t)]
    return "\n".join(out).rstrip()


def to_csv(t: Tables, kinds: tuple[str, ...] = KINDS) -> str:
    """Numbers as numbers: contexts in tokens (empty: does not fit), sizes in bytes."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    if "limits" in kinds:
        w.writerow(["target", "memory_bytes", *(f"max_context_{kv}" for kv in t.kv_types)])
        for g in t.targets:
            w.writerow([g.label, g.memory_bytes, *("" if t.limits[g.label][kv] is None else t.limits[g.label][kv]
                                                   for kv in t.kv_types)])
    if "context" in kinds:
        if "limits" in kinds:
            w.writerow([])
        header = ["n_ctx"]
        for kv in t.kv_types:
            header += [f"kv_cache_bytes_{kv}", f"total_bytes_{kv}", f"smallest_size_{kv}"]
        w.writerow(header)
        for r in t.rows:
            row: list[Any] = [r.n_ctx]
            for kv in t.kv_types:
                row += [r.kv_cache_bytes.get(kv), r.total_bytes.get(kv), t.smallest_fitting(r, kv) or ""]
            w.writerow(row)
    return buf.getvalue().rstrip("\n")


def to_json(t: Tables, kinds: tuple[str, ...] = KINDS) -> str:
    d = t.to_dict()
    if "limits" not in kinds:
        d.pop("limits")
    if "context" not in kinds:
        d.pop("context")
    return json.dumps(d, indent=2)
