"""oomkit table: hard limits (largest context by VRAM size) and context impact (KV memory by context length)."""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path

from .. import limits
from ..engines.base import get_engine
from ..errors import OomkitError, SettingsError
from ..hardware.detect import detect
from ..memory import Device
from ..report import tables as report
from ..report.plot import check_plot_target, plot
from ..request import devices_from, resolve_model
from ..units import GiB, parse_size
from ._model_args import parse_model_request

HELP = """\
usage: oomkit table MODEL [--kind limits|context] [--json | --markdown | --csv] [--plot FILE] [options]
                          [engine flags]

The two tables for MODEL with an engine, its settings and each KV cache type:
  limits   the largest context that fits, by VRAM size (8 ... 192 GB, and this machine's GPUs)
  context  the KV cache and the whole GPU total by context length (2K ... 1M, up to the model's maximum), with
           the smallest listed VRAM size that holds it
Both by default.

options:
  --kind limits|context one of the two tables
  --json | --markdown | --csv
                        output format (default: a terminal table); CSV numbers in tokens and bytes
  --plot FILE           also write the context-impact chart (.png or .svg; needs `pip install 'oomkit[plot]'`)
  --sizes S[,S...]      the VRAM sizes to list (default 8,12,16,24,32,48,80,96,141,192: cards as sold, a
                        bare 24 = a "24 GB" card of 24 GiB); with a unit as --vram reads it: 24GB = 24 x 10^9
                        bytes, 24GiB = 24 x 2^30
  --kv-types T[,T...]   the KV cache types (default the engine's: llama.cpp f16,q8_0,q4_0)
  --vram SIZE[,SIZE]    add planned GPUs (one row for the set) instead of the detected ones
  --gpu NAME[,NAME]     add planned GPUs from the catalog instead of the detected ones
  --engine E, --quant Q, --parallel N, --engine-version V, engine flags: as for `oomkit estimate`

examples:
  oomkit table llama3.1:8b
  oomkit table qwen3:32b --kind limits --markdown
  oomkit table gemma-3-27b-it --kind context --csv --plot gemma.svg
"""

MAX_KV_TYPES = 64  # more than ggml has types (ggml.h enum ggml_type: 40 ids, some retired)
EXTRA = {"--kind": True, "--markdown": False, "--csv": False, "--plot": True, "--sizes": True, "--kv-types": True}


def run(argv: list[str]) -> int:
    if "-h" in argv[: argv.index("--") if "--" in argv else len(argv)] or "--help" in argv:
        print(HELP)
        return 0
    req = parse_model_request(argv, extra_options=EXTRA)
    o = req.opts
    kind = o.get("--kind")
    if kind is not None and kind not in ("limits", "context"):
        raise OomkitError(f"--kind takes limits or context, not {kind!r}")
    kinds = (kind,) if kind else ("limits", "context")
    formats = [f for f in ("--json", "--markdown", "--csv") if o.get(f)]
    if len(formats) > 1:
        raise OomkitError(f"give one output format, not {' and '.join(formats)}")

    if o.get("--plot"):
        _check_plot_path(o["--plot"])
        check_plot_target(o["--plot"])

    targets = limits.size_targets()
    if "--sizes" in o:
        targets = _size_targets(str(o["--sizes"]))
    notes = []
    if o.get("--vram") is not None or o.get("--gpu") is not None:
        devs = devices_from(o.get("--vram"), o.get("--gpu"))
        if o.get("--gpu") is not None:  # which size a name sold in several was taken as
            from ..hardware.catalog import size_notes  # lazy: only named GPUs need the catalog

            notes += size_notes(o["--gpu"])
        label = _group([d.name if d.name != "GPU" else "GPU" for d in devs])
        targets += (limits.Target(f"planned: {label}", devs, kind="planned"),)
    else:
        hw = detect()
        notes += [f"GPU detection: {e}" for e in hw.errors]
        devs = hw.devices()
        if devs:
            label = _group([g.name for g in hw.gpus if g.budget_bytes is not None])
            targets += (limits.Target(f"this machine: {label}", devs, kind="detected"),)
    eng = get_engine(req.engine)
    spec = resolve_model(eng, req.model, req.quant)
    kv_types = None
    if "--kv-types" in o:
        # each type once (a column per type: "f16,f16" is one column, and 500 of them took 500 searches)
        kv_types = tuple(dict.fromkeys(x.strip() for x in str(o["--kv-types"]).split(",") if x.strip()))
        if not kv_types:
            raise OomkitError("--kv-types takes a comma list, e.g. f16,q8_0")
        if len(kv_types) > MAX_KV_TYPES:
            raise OomkitError(f"--kv-types: {len(kv_types):,} types; oomkit lists at most {MAX_KV_TYPES}")
    tables = limits.build_tables(eng, spec, req.settings, targets, kv_types=kv_types)
    if notes:
        tables = replace(tables, notes=(*tables.notes, *notes))
    if not tables.kv_types:
        raise OomkitError("no KV cache type could be estimated: " + "; ".join(c.error for c in tables.kv if c.error))

    if o.get("--json"):
        print(report.to_json(tables, kinds))
    elif o.get("--markdown"):
        print(report.markdown(tables, kinds))
    elif o.get("--csv"):
        print(report.to_csv(tables, kinds))
    else:
        print(report.terminal(tables, kinds))
    if o.get("--plot"):
        plot(tables, o["--plot"])
    return 0


def _group(names: list[str]) -> str:
    """["RTX 3090", "RTX 3090", "RTX 4090"] -> "2× RTX 3090, RTX 4090"."""
    counts: dict[str, int] = {}
    for n in names:
        counts[n] = counts.get(n, 0) + 1
    return ", ".join(n if c == 1 else f"{c}× {n}" for n, c in counts.items())


def _size_targets(text: str) -> tuple[limits.Target, ...]:
    """--sizes: a bare number is a card as sold (24 = a "24 GB" card, 24 GiB, as the default list); a size with
    a unit is read as --vram reads it (units.py: 24GB = 24 x 10^9 bytes, 24GiB = 24 x 2^30)."""
    from ..hardware.catalog import MAX_DEVICES  # lazy: only a typed list is counted

    parts = list(dict.fromkeys(p.strip() for p in text.split(",") if p.strip()))  # a size typed twice: one row
    if not parts:
        raise SettingsError("--sizes takes a comma list of sizes, e.g. 16,24,48 or 24GB,24GiB")
    if len(parts) > MAX_DEVICES:
        raise SettingsError(f"--sizes: {len(parts):,} sizes; oomkit lists at most {MAX_DEVICES:,}")
    out: list[limits.Target] = []
    for p in parts:
        if re.fullmatch(r"[0-9]{1,7}(?:\.[0-9]{1,6})?", p):
            gb = float(p)
            if not 0 < gb <= 1 << 20:
                raise SettingsError(f"--sizes {p}: out of range; a card from more than 0 to 1,048,576 GB")
            out += limits.size_targets((gb,))
            continue
        if not re.fullmatch(r"[0-9.]+\s*[a-zA-Z]+", p):
            raise SettingsError(f"--sizes: cannot read {p[:40]!r} as a size (e.g. 24, 24GB or 24GiB)")
        n = parse_size(p, "--sizes")
        if not 0 < n <= 1 << 60:
            raise SettingsError(f"--sizes {p}: out of range; more than 0 bytes and up to 1 EiB")
        label = f"{p} ({n / GiB:.2f} GiB)" if p.lower().endswith(("gb", "tb", "mb", "kb")) else p
        out.append(limits.Target(label, (Device(id="CUDA0", name=f"{p} GPU", memory_bytes=n),)))
    return tuple(out)


def _check_plot_path(path: str) -> None:
    """--plot FILE is written after the tables: refuse at once a file name that cannot be written there."""
    p = Path(path)
    if any(len(part.encode("utf-8", "surrogateescape")) > 255 for part in p.parts):
        raise SettingsError(f"--plot {str(path)[:60]}...: a part of the path is over 255 bytes")
    folder = p.parent
    if not folder.is_dir():
        raise SettingsError(f"--plot {path}: there is no folder {folder}")
    if not os.access(folder, os.W_OK):
        raise SettingsError(f"--plot {path}: the folder {folder} is not writable")
    if p.exists() and not p.is_file():
        raise SettingsError(f"--plot {path}: exists and is not a regular file")
