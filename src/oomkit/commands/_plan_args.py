"""The hardware and goal options plan and fit share: --gpu/--vram (else the detected GPUs, else the reference
card), --nodes, --reserve, --headroom, --min-ctx, --concurrency, --ram-bandwidth."""

from __future__ import annotations

import re
import sys
from dataclasses import replace
from typing import Any

from ..check import hardware_target
from ..errors import HardwareError, OomkitError, SettingsError
from ..memory import Device
from ..plan.options import Goals
from ..units import parse_size

OPTIONS = {"--gpu": True, "--vram": True, "--nodes": True, "--reserve": True, "--headroom": True,
           "--min-ctx": True, "--concurrency": True, "--ram-bandwidth": True, "--json": False, "--markdown": False,
           "--limit": True, "--ram": True, "--also": True}


def devices(opts: dict[str, Any], notes: list[str] | None = None) -> tuple[Device, ...]:
    """The GPUs of one machine (planned, detected, or the reference card, said so on stderr) times --nodes.
    With `notes`, the reference-card note is appended there for the caller to print once the command has
    succeeded: printed here it would stand before a later one-line error, making that error two lines."""
    target = hardware_target(opts.get("--vram"), opts.get("--gpu"))
    if target.kind == "reference":
        note = (f"oomkit: no GPU found on this machine: planning for the reference card, {target.reference} "
                "(give --gpu NAME or --vram SIZE)")
        if notes is None:
            print(note, file=sys.stderr)
        else:
            notes.append(note)
    # a name sold in several sizes, or named with a size it is not sold with: which size was taken
    for note in target.notes if target.kind == "planned" else ():
        if notes is None:
            print(f"oomkit: note: {note}", file=sys.stderr)
        else:
            notes.append(f"oomkit: note: {note}")
    nodes = _positive(opts, "--nodes", 1)
    devs = target.devices
    for d in devs:
        if d.memory_bytes is not None and d.memory_bytes <= 0:
            raise OomkitError(f"GPU memory must be positive, got {d.memory_bytes} bytes for {d.id}")
    reserve = _size(opts, "--reserve") + _size(opts, "--headroom")
    small = [d for d in devs if d.memory_bytes is not None and d.memory_bytes <= reserve]
    if small:
        raise OomkitError(f"--reserve and --headroom ({reserve / (1 << 30):.2f} GiB) leave nothing of {small[0].id}'s "
                          f"{small[0].memory_bytes / (1 << 30):.2f} GiB")
    if nodes == 1:
        return devs
    from ..hardware.catalog import MAX_DEVICES  # lazy: only a multi-node plan counts against the ceiling

    if nodes * len(devs) > MAX_DEVICES:
        raise HardwareError(f"--nodes {nodes} x {len(devs)} GPUs is {nodes * len(devs):,} devices; oomkit takes at "
                            f"most {MAX_DEVICES:,}")
    prefix = devs[0].id.rstrip("0123456789") or "CUDA"
    every = [d for _ in range(nodes) for d in devs]
    return tuple(replace(d, id=f"{prefix}{i}") for i, d in enumerate(every))


def say_notes(notes: list[str]) -> None:
    """The notes devices() held back, on stderr, once the command has succeeded."""
    for note in notes:
        print(note, file=sys.stderr)


def goals(opts: dict[str, Any]) -> Goals:
    bw = opts.get("--ram-bandwidth")
    text = None if bw is None else str(bw).lower().removesuffix("gb/s").strip()
    if text is not None and not re.fullmatch(r"[0-9]{1,9}(?:\.[0-9]{0,9})?|\.[0-9]{1,9}", text):
        raise SettingsError(f"--ram-bandwidth takes GB/s, e.g. 89.6, got {bw!r}")
    bandwidth = None if text is None else float(text)
    if bandwidth is not None and bandwidth <= 0:
        raise SettingsError(f"--ram-bandwidth must be positive, got {bw!r}")
    return Goals(min_ctx=_positive(opts, "--min-ctx", None), concurrency=_positive(opts, "--concurrency", 1),
                 reserve_bytes=_size(opts, "--reserve"), headroom_bytes=_size(opts, "--headroom"),
                 nodes=_positive(opts, "--nodes", 1), ram_bandwidth_gbs=bandwidth, ram_bytes=_ram(opts))


def typed_goals(goals: Goals, opts: dict[str, Any], engine: str, settings: Any) -> Goals:
    """The goals with the context and the sequences the command names (--ctx, -c 100000, --max-model-len; --parallel,
    -np 4), which plan would otherwise replace by its own: read as --min-ctx and --concurrency, unless those are
    given too and disagree (refused)."""
    from ..engines.base import get_engine  # lazy: the engine record, only for a plan with settings

    eng = get_engine(engine)
    default = eng.settings()
    changes: dict[str, int] = {}
    for goal, option, fields in (("min_ctx", "--min-ctx", (eng.context_field,)),
                                 ("concurrency", "--concurrency", eng.neutral_fields("parallel"))):
        field = fields[0] if fields else None
        value = getattr(settings, field, None) if field else None
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0 or value == getattr(default, field):
            continue
        if opts.get(option) is not None and getattr(goals, goal) != value:
            raise SettingsError(f"{option} {getattr(goals, goal)} and the command's {value} ({field}) both say "
                                f"the {'context' if goal == 'min_ctx' else 'sequences at once'}: give one")
        changes[goal] = value
    return replace(goals, **changes) if changes else goals


def _ram(opts: dict[str, Any]) -> int | None:
    """--ram SIZE, else this machine's available RAM when its GPUs are the ones planned for (None: planned
    hardware elsewhere, the RAM unchecked and said so)."""
    if opts.get("--ram") is not None:
        return _size(opts, "--ram")
    if opts.get("--gpu") is not None or opts.get("--vram") is not None:
        return None
    from ..hardware.detect import host_memory  # lazy: psutil only when the RAM is this machine's

    host = host_memory()
    return None if host is None else host.available_bytes


def _size(opts: dict[str, Any], name: str) -> int:
    v = opts.get(name)
    if v is None:
        return 0
    return parse_size(v, name)  # bytes, or a size with its unit (units.py: "2GiB"; a bare 2 is refused)


# The most sequences a plan serves, the web API's bound (web/api.py MAX_PARALLEL): past it the engines' own ranges
# refused the command plan wrote, naming its flag, not the one typed (99999999999 x 8192 tokens as llama.cpp's -c)
_MOST = {"--concurrency": 4096}


def _positive(opts: dict[str, Any], name: str, default: int | None) -> int | None:
    v = opts.get(name)
    if v is None:
        return default
    text = str(v).strip().lower()
    mult = 1024 if text.endswith("k") else 1024 * 1024 if text.endswith("m") else 1  # "32k", "1M" (as --ctx)
    digits = text.removesuffix("k") if mult == 1024 else text.removesuffix("m")
    if not re.fullmatch(r"\+?[0-9]{1,12}", digits):  # ASCII digits: no `1_024`, no other scripts' digits
        raise SettingsError(f"{name} takes a positive integer, got {v!r}")
    n = int(digits) * mult
    if n < 1:
        raise SettingsError(f"{name} takes a positive integer, got {v!r}")
    if n > _MOST.get(name, n):
        raise SettingsError(f"{name} {n:,}: out of range; oomkit takes 1 to {_MOST[name]:,}")
    return n


def limit(opts: dict[str, Any], default: int = 12) -> int:
    return _positive(opts, "--limit", default) or default
