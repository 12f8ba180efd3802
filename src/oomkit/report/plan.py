"""Plan, Fit and diff results -> the decision matrix a person reads (terminal or Markdown), or JSON."""

from __future__ import annotations

import io
import json
from typing import Any

from ..engines.llamacpp.backends import metal_devices
from ..memory import MemoryEstimate
from ..plan.fit import Fit
from ..plan.options import Option
from ..plan.search import Plan
from ..plan.speed import tps_number
from ..units import GiB, MiB
from .check import refusal

_TIER = {1: "GPU", 2: "GPU+RAM", 3: "-"}


def gib(n: int | None) -> str:
    return "-" if n is None else f"{n / GiB:.2f} GiB"


def _vram(o: Option) -> str:
    used = [u.total_bytes for u in o.estimate.devices]
    if len(used) > 2:
        return f"{len(used)} × ≤ {max(used) / GiB:.1f} GiB"
    return " + ".join(f"{u / GiB:.1f}" for u in used) + " GiB"


def _speed(o: Option) -> str:
    t = o.rating.tokens_per_s
    return "unknown" if t is None else f"≤ {tps_number(t)}"


def _ctx(n: int) -> str:
    return f"{n // 1024}K" if n % 1024 == 0 else str(n)


def matrix_rows(p: Plan) -> list[list[str]]:
    rows = []
    for o in p.options:
        rows.append([str(o.rank), _TIER[o.tier], o.label + (f", {o.offload[0]}={o.offload[1]}" if o.offload else ""),
                     _ctx(o.context), f"{o.rating.weight_bits:.2f}", o.kv_type, _vram(o), gib(o.headroom_bytes),
                     _speed(o), o.rating.quality_note])
    return rows


HEADERS = ["#", "tier", "option", "context", "bits/weight", "KV", "VRAM used", "headroom", "decode tok/s",
           "quality (published)"]


def _header(p: Plan) -> list[str]:
    m = p.model
    kinds: dict[tuple[str, int | None, int | None], int] = {}
    # an Apple GPU: the headroom is counted against Metal's working set, shown beside the unified memory
    for d, usable in zip(p.devices, metal_devices(p.devices), strict=True):
        ws = usable.memory_bytes if usable.memory_bytes != d.memory_bytes else None
        kinds[(d.name, d.memory_bytes, ws)] = kinds.get((d.name, d.memory_bytes, ws), 0) + 1
    devs = ", ".join((f"{n} × " if n > 1 else "") + f"{name} {gib(mem)}"
                     + (f" (Metal working set {gib(ws)})" if ws is not None else "") for (name, mem, ws), n in kinds.items())
    if p.goals.nodes > 1:
        devs += f" over {p.goals.nodes} machines"
    want = p.goals.context_for(m)
    lines = [f"{m.name} · {p.engine} · {devs}",
             f"goal: {want} tokens of context" + (f" × {p.goals.concurrency} sequences" if p.goals.concurrency > 1
                                                  else "")
             + (f" · {gib(p.goals.reserve_bytes)} held by other programs per GPU" if p.goals.reserve_bytes else "")]
    return lines


def text(p: Plan) -> str:
    from rich.console import Console  # lazy: rich only for a drawn table
    from rich.table import Table  # lazy: rich only for a drawn table

    buf = io.StringIO()
    console = Console(file=buf, width=160, force_terminal=False, color_system=None)
    for line in _header(p):
        console.print(line, highlight=False)
    if p.options:
        t = Table(show_edge=False, header_style="bold")
        for h in HEADERS:
            t.add_column(h, justify="left" if h in ("option", "quality (published)", "KV", "tier") else "right")
        for row in matrix_rows(p):
            t.add_row(*row)
        console.print(t)
        console.print("launch commands:", highlight=False)
        for o in p.options:
            console.print(f"  {o.rank}. " + o.command.replace("\n", "\n" + " " * (len(str(o.rank)) + 4)),
                          highlight=False, soft_wrap=True)  # a second command (Ollama's run after its serve) lines up
        console.print("decode tok/s is an upper bound (memory bandwidth); prefill is compute-bound", highlight=False)
    _nodes(console.print, p)
    _tier3(console.print, p)
    for n in p.notes:
        console.print(f"note: {n}", highlight=False, soft_wrap=True)
    return buf.getvalue().rstrip()


def _nodes(say: Any, p: Plan) -> None:
    if not p.node_commands:
        return
    say(f"across {p.goals.nodes} machines (option 1):", highlight=False)
    for (label, lines), mem in zip(p.node_commands, p.node_memory(), strict=False):
        say(f"  {label}: {gib(mem)} on its GPUs", highlight=False)
        for line in lines:
            say(f"    {line}", highlight=False, soft_wrap=True)


def _tier3(say: Any, p: Plan) -> None:
    h = p.smallest_hardware
    if h is None:
        if not any(o.tier == 1 for o in p.options):
            say("no GPU in the catalog (up to 8 of one kind) runs it at this context", highlight=False)
        return
    say(f"tier 3: it fits entirely on {h.count} × {h.gpu} ({gib(h.option.estimate.devices[0].memory_bytes)} each), "
        f"using {gib(h.needed_bytes)} at {_ctx(h.option.context)} context:", highlight=False)
    say(f"  {h.option.command}", highlight=False, soft_wrap=True)


def markdown(p: Plan) -> str:
    out = [f"**{line}**" if i == 0 else line for i, line in enumerate(_header(p))]
    out.append("")
    if p.options:
        out.append("| " + " | ".join(HEADERS) + " |")
        out.append("|" + "|".join("---" for _ in HEADERS) + "|")
        for row in matrix_rows(p):
            out.append("| " + " | ".join(c.replace("|", "\\|") for c in row) + " |")
        out.append("")
        for o in p.options:
            out.append(f"{o.rank}. " + " then ".join(f"`{line}`" for line in o.command.splitlines()))
    lines: list[str] = []
    _tier3(lambda s, **_: lines.append(s), p)
    out += lines + [f"> {n}" for n in p.notes]
    return "\n".join(out)


def to_json(obj: Any) -> str:
    return json.dumps(obj.to_dict(), indent=2, default=str)


# ---------------------------------------------------------------------------------------------------------
# fit


def fit_text(f: Fit) -> str:
    from ..plan.rating import shell_join  # the one shell quoting rule

    lines = []
    b = f.before
    lines.append(f"before: {usage_text(b)}")
    if b.fits is False and all(u.memory_bytes is None or u.total_bytes <= u.memory_bytes for u in b.devices):
        # the memory is there, yet the engine splits the model with system RAM by itself (Ollama) or refuses to start
        # (vLLM: no KV room for one max-length request): say which
        if b.host.weights_bytes:
            lines.append(f"        the engine keeps {gib(b.host.weights_bytes)} of weights in system RAM (slower)")
        elif getattr(b, "request_limit", None) is not None:  # SGLang: its pool is short of one full-length request
            lines.append(f"        {b.engine} starts, but {refusal(b, 'see its notes')}")
        elif (b.engine_view.get("failed_phase") or {}).get("after_kv"):  # vLLM, SGLang: dies in a later phase
            lines.append(f"        {b.engine} starts, then dies: {refusal(b, 'see its notes')}")
        else:
            lines.append(f"        {b.engine} refuses these settings: {refusal(b, 'see its notes')}")
    if f.command is None:
        lines.append("nothing fits on these GPUs with any knob of this command")
        p = f.plan
        if p is not None:
            if p.options:
                lines.append(f"tier {p.options[0].tier}: {p.options[0].command}")
            h = p.smallest_hardware
            if h is not None:
                lines.append(f"tier 3: it fits on {h.count} × {h.gpu}: {h.option.command}")
        return "\n".join(lines)
    lines += [f"note: {n}" for n in f.notes]
    if not f.changes and f.tier == 2:
        # the engine's own split is the answer (Ollama places what its estimate holds): it runs, but not all on the
        # GPUs, and no knob of this command changes that
        lines.append("it runs as it is, part of the model in system RAM (the engine's own split): no change to this "
                     "command keeps it all on the GPUs")
        lines.append(shell_join(f.command))
        return "\n".join(lines)
    if not f.changes:
        lines.append("it fits as it is: nothing to change")
        lines.append(shell_join(f.command))
        return "\n".join(lines)
    lines.append(f"after:  {usage_text(f.after)}")
    lines.append("changes:")
    for c in f.changes:
        before = "the engine's default" if c.before is None else c.before
        lines.append(f"  {c.flag}: {before} -> {c.after}: {c.why}")
    if saved := saved_text(f.before, f.after):
        lines.append(f"together they save {saved}")
    if f.tier == 2 and f.rating is not None and f.rating.tokens_per_s is not None:
        lines.append(f"part of the model in system RAM: decode ≤ {tps_number(f.rating.tokens_per_s)} tok/s (upper bound)")
    lines.append("")
    lines.append(shell_join(f.command))
    return "\n".join(lines)


def saved_text(before: MemoryEstimate | None, after: MemoryEstimate | None) -> str:
    """What the changes as a whole free: on the GPUs and in system RAM, each where it shrinks."""
    if before is None or after is None:
        return ""
    gpus = sum(u.total_bytes for u in before.devices) - sum(u.total_bytes for u in after.devices)
    ram = before.host.total_bytes - after.host.total_bytes
    parts = [f"{gib(gpus)} on the GPUs"] if gpus >= 1 << 20 else []
    parts += [f"{gib(ram)} of system RAM"] if ram >= 1 << 20 else []
    return " and ".join(parts)


def usage_text(est: MemoryEstimate | None) -> str:
    if est is None:
        return "-"
    parts = []
    for u in est.devices:
        mem = f" of {gib(u.memory_bytes)}" if u.memory_bytes else ""
        parts.append(f"{u.id} {gib(u.total_bytes)}{mem}")
    if est.host.total_bytes:
        parts.append(f"RAM {gib(est.host.total_bytes)}")
    return ", ".join(parts)


# ---------------------------------------------------------------------------------------------------------
# diff

_COMPONENTS = ("weights_bytes", "kv_cache_bytes", "recurrent_state_bytes", "compute_bytes", "overhead_bytes",
               "total_bytes")


def diff_dict(a: MemoryEstimate, b: MemoryEstimate) -> dict[str, Any]:
    places = {u.id: u for u in a.devices} | {"host": a.host}
    after = {u.id: u for u in b.devices} | {"host": b.host}
    rows = []
    for pid in dict.fromkeys([*places, *after]):
        u, v = places.get(pid), after.get(pid)
        for c in _COMPONENTS:
            x, y = (getattr(u, c) if u else 0), (getattr(v, c) if v else 0)
            if x or y:
                rows.append({"place": pid, "component": c.removesuffix("_bytes"), "before_bytes": x,
                             "after_bytes": y, "delta_bytes": y - x})
    changed = {k: {"from": a.settings.get(k), "to": b.settings.get(k)} for k in b.settings
               if a.settings.get(k) != b.settings.get(k)}
    return {"settings_changed": changed, "rows": rows, "total_delta_bytes": b.total_bytes - a.total_bytes,
            "before": a.to_dict(), "after": b.to_dict()}


def diff_text(a: MemoryEstimate, b: MemoryEstimate) -> str:
    d = diff_dict(a, b)
    lines = ["settings: " + (", ".join(f"{k} {v['from']} -> {v['to']}" for k, v in d["settings_changed"].items())
                             or "no change")]
    lines.append(f"{'place':<8} {'component':<16} {'before':>12} {'after':>12} {'change':>12}")
    for r in d["rows"]:
        delta = r["delta_bytes"]
        lines.append(f"{r['place']:<8} {r['component']:<16} {r['before_bytes'] / MiB:>10,.0f} M "
                     f"{r['after_bytes'] / MiB:>10,.0f} M {delta / MiB:>+10,.0f} M")
    lines.append(f"total change: {d['total_delta_bytes'] / MiB:+,.0f} MiB")
    return "\n".join(lines)


def survey_text(fitting: list[Any], total: int) -> str:
    """`plan --all`: the catalog models that fit, largest first, with their command."""
    lines = [f"{len(fitting)} of {total} catalog models fit entirely on these GPUs at the asked context "
             "(the engine's default weights):"]
    for f in fitting:
        o = f.option
        lines.append(f"  {f.name:<40} {(f.params or 0) / 1e9:6.1f}B  {o.weight_format:<8} KV {o.kv_type:<5} "
                     f"{_ctx(o.context):>6}  {o.command}")
    return "\n".join(lines)
