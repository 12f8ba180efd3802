"""Plain-text forms of a Diagnosis and of the error index, for the terminal (no colour, no width tricks)."""

from __future__ import annotations

from typing import Any

from .result import Diagnosis
from .signatures import Signature

GiB = 1 << 30
MiB = 1 << 20

STAGE_WORDS = {
    "weights": "weights (the model itself does not fit)",
    "kv_cache": "KV cache / context",
    "compute": "compute (activations, compute buffers, warm-up, CUDA graphs)",
    "fragmentation": "fragmentation (free memory in pieces too small)",
    "other_process": "memory held by another process or allocation",
    "host_ram": "host RAM (or unified memory on a Mac)",
    "buffer_limit": "a single buffer over a device limit",
    "not_oom": "not an out-of-memory",
    "unknown": "not placed",
}
COUNTS = {"estimated_max_len", "max_model_len", "n_ctx", "kv_capacity_tokens", "device", "max_num_seqs",
          "prefill_tokens", "total_tokens", "max_total_tokens", "num_gpu", "model_max_len", "resource_limit",
          "input_tokens", "max_req_input_len", "request_limit_tokens"}


def size(n: int | float | None) -> str:
    if n is None:
        return "-"
    if abs(n) >= GiB:
        return f"{n / GiB:,.2f} GiB"
    if abs(n) >= MiB:
        return f"{n / MiB:,.2f} MiB"
    return f"{int(n):,} bytes"


def number(key: str, value: Any) -> str:
    """One figure of a Diagnosis's numbers (or a *_bytes buffer) as the text form prints it: 'requested 2.00 GiB'."""
    if key.endswith("_bytes") and isinstance(value, (int, float)):
        return f"{key.removesuffix('_bytes').replace('_', ' ')} {size(value)}"
    if key == "processes":
        return "processes " + ", ".join(f"PID {p['pid']} {size(p['bytes'])}" for p in value)
    if isinstance(value, float):
        return f"{key.replace('_', ' ')} {value:g}"
    if isinstance(value, int) and key in COUNTS:
        return f"{key.replace('_', ' ')} {value:,}"
    return f"{key.replace('_', ' ')} {value}"




def render(d: Diagnosis) -> str:
    if d.short and d.short.get("unplaced"):
        return d.short["unplaced"]
    out: list[str] = []
    prog = d.engine or "unknown program"
    extra = [x for x in (d.backend, d.engine_version and f"version {d.engine_version}") if x]
    if extra:
        prog += f" ({', '.join(extra)})"
    if d.host:
        prog += f", in {'an' if d.host[:1].lower() in 'aeiou' else 'a'} {d.host} log"
    out.append(f"program   {prog}")
    out.append(f"stage     {d.stage}: {STAGE_WORDS.get(d.stage, d.stage)} (confidence {d.confidence})")
    if d.phase:
        out.append(f"phase     {d.phase} (after the KV cache was allocated)")
    if d.line is not None and d.evidence:
        out.append(f"message   line {d.line}: {d.evidence[:200]}")
    if d.numbers:
        out.append("numbers   " + "; ".join(number(k, v) for k, v in d.numbers.items()))
    if d.settings:
        out.append("settings  " + ", ".join(f"{k}={v}" for k, v in d.settings.items()))
    if d.buffers:
        parts = []
        for k, v in d.buffers.items():
            if isinstance(v, dict):
                parts.append(f"{k} " + ", ".join(f"{dev} {size(b) if isinstance(b, int) else b}" for dev, b in v.items()))
            elif k.endswith("_bytes"):
                parts.append(number(k, v))
            else:
                parts.append(f"{k.replace('_', ' ')} {v:,}" if isinstance(v, int) else f"{k} {v}")
        out.append("buffers   " + "; ".join(parts))
    if d.prediction and d.prediction.get("figures"):
        p = d.prediction
        out.append(f"oomkit    {p['model']} with {p['engine']}: printed vs predicted")
        for name, f in p["figures"].items():
            pr, om = f["printed"], f["oomkit"]
            fmt = size if name.endswith("bytes") or "bytes[" in name else (lambda x: f"{x:,}")
            out.append(f"          {name}: {fmt(pr)} printed, {fmt(om)} predicted ({fmt(om - pr)} apart)")
    if d.short:
        out.append(f"ran out   {d.short['ran_out']}")
        out.append(f"unknown   {d.short['unknown']}")
        out.append(f"paste     {d.short['paste']}")
    if d.causes:
        out.append("causes")
        out.extend(f"  - {c}" for c in d.causes)
    if d.fixes:
        out.append("fixes")
        for i, f in enumerate(d.fixes, 1):
            line = f"  {i}. {f.summary}"
            if f.saves_bytes:
                line += f" [saves {size(f.saves_bytes)}]"
            out.append(line)
            if f.flags:
                out.append(f"     flags: {' '.join(f.flags)}")
            if f.env:
                out.append(f"     env:   {' '.join(f'{k}={v}' for k, v in f.env)}")
            if f.command:
                out.append(f"     run:   {f.command}".replace("\n", "\n            "))  # Ollama: serve, then run
    if d.recognised and len(d.recognised) > 1:
        out.append("seen      " + ", ".join(d.recognised))
    return "\n".join(out)


def index_entry(s: Signature) -> dict[str, Any]:
    return {"id": s.id, "program": s.engine, "backend": s.backend, "role": s.role,
            "stage": s.stage or ("not_oom" if s.role == "not_oom" else "from the numbers and context"),
            "message": s.message, "versions": s.versions, "causes": list(s.causes), "fixes": list(s.fixes)}


def render_index(rows: list[dict[str, Any]]) -> str:
    out = []
    for r in rows:
        head = f"{r['id']}  [{r['program']}{', ' + r['backend'] if r['backend'] else ''}]  stage: {r['stage']}"
        out.append(head)
        if r["message"]:
            out.append(f"  message:  {r['message']}")
        if r["versions"]:
            out.append(f"  versions: {r['versions']}")
        for c in r["causes"]:
            out.append(f"  cause:    {c}")
        for f in r["fixes"]:
            out.append(f"  fix:      {f}")
        out.append("")
    return "\n".join(out).rstrip()
