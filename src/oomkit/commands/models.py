"""`oomkit models [QUERY] [--family F] [--kind K] [--json]`: list and search the built-in model catalog.

Reads the catalog index only (one small row per model), never the data files: listing the whole catalog
must stay well under 0.3 s.
"""

from __future__ import annotations

import argparse
import json
import sys

from ..errors import OomkitError
from ..model import catalog

KINDS = ("full", "sliding", "chunked", "latent", "recurrent", "moe")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="oomkit models", allow_abbrev=False,
        description="List and search the built-in model catalog (works offline).",
        epilog="Examples: oomkit models qwen3 | oomkit models --kind latent | oomkit models --family gemma --json",
    )
    p.add_argument("query", nargs="?", help="substring of a model's name, HF id, alias, Ollama tag or family")
    p.add_argument("--family", help="only this family (llama, qwen, deepseek, gemma, ...)")
    p.add_argument("--kind", choices=KINDS, help="only models with layers of this kind (or MoE)")
    p.add_argument("--json", action="store_true", help="print JSON")
    return p


def _rows(query: str | None, family: str | None, kind: str | None) -> list[dict]:
    idx = catalog._index()
    by_slug: dict[str, list[str]] = {}
    for alias, slug in idx["aliases"].items():
        by_slug.setdefault(slug, []).append(alias)
    for alias, slug in idx.get("variants", {}).items():
        by_slug.setdefault(slug, []).append(alias)
    q = catalog.normalize(query) if query else ""
    out = []
    for row in catalog.entries():
        slug = row["slug"]
        if family and row["family"].lower() != family.lower():
            continue
        if kind and kind not in row.get("kinds", []):
            continue
        if q:
            hay = [slug, row["name"].lower(), row["hf_id"].lower(), row["family"].lower(), *by_slug.get(slug, [])]
            if not any(q in h for h in hay):
                continue
        out.append({**row, "aliases": sorted(by_slug.get(slug, []))})
    return out


def _fmt_params(n: int | None) -> str:
    if not n:
        return "-"
    if n >= 10**12:
        return f"{n / 1e12:.2f}T"
    if n >= 10**9:
        return f"{n / 1e9:.1f}B"
    return f"{n / 1e6:.0f}M"


def _fmt_ctx(n: int | None) -> str:
    if not n:
        return "-"
    return f"{n // 1024}K" if n % 1024 == 0 else str(n)


def run(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    rows = _rows(args.query, args.family, args.kind)
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    if not rows:
        what = " ".join(x for x in (args.query, args.family and f"family {args.family}",
                                     args.kind and f"kind {args.kind}") if x)
        hint = catalog.suggest(args.query) if args.query else []
        more = f"; did you mean {', '.join(hint)}?" if hint else ""
        raise OomkitError(f"no catalog model matches {what}{more} (run `oomkit models` to list all)")
    header = ("NAME", "HF ID", "FAMILY", "PARAMS", "ACTIVE", "CONTEXT", "KINDS")
    table = [header] + [
        (r["name"], r["hf_id"], r["family"], _fmt_params(r["params"]), _fmt_params(r.get("active")),
         _fmt_ctx(r["context"]), ",".join(r.get("kinds", [])))
        for r in rows
    ]
    widths = [max(len(t[i]) for t in table) for i in range(len(header))]
    out = sys.stdout
    for t in table:
        out.write("  ".join(c.ljust(w) if i < 3 else c.rjust(w) if i < 6 else c
                            for i, (c, w) in enumerate(zip(t, widths, strict=True))).rstrip() + "\n")
    out.write(f"{len(rows)} model{'s' if len(rows) != 1 else ''}\n")
    return 0
