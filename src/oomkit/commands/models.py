"""`oomkit models [QUERY] [--family F] [--kind K] [--names] [--json]` and `oomkit models --explain NAME`: list and
search the built-in model catalog, with the names each entry answers to; say how a model reference is read.

Reads the catalog index only (one small row per model), never the data files: listing the whole catalog
must stay well under 0.3 s.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..engines.command import given_twice
from ..errors import OomkitError
from ..model import catalog, names

KINDS = ("full", "sliding", "chunked", "latent", "recurrent", "moe")


class _Once(argparse.Action):
    """An option of one value: given twice with two values (`--kind moe --kind full`) it is refused naming both, as
    the other commands refuse their own options given twice (argparse would take the last)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        before = getattr(namespace, self.dest, None)
        if before is not None and before != values:
            raise OomkitError(given_twice(str(option_string), before, values))
        setattr(namespace, self.dest, values)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="oomkit models", allow_abbrev=False,
        description="List and search the built-in model catalog (works offline).",
        epilog="Examples: oomkit models qwen3 | oomkit models --kind latent | oomkit models --family gemma --json | "
               "oomkit models qwen3-8b --names | oomkit models --explain RedHatAI/Qwen3-8B-FP8-dynamic",
    )
    p.add_argument("query", nargs="?", help="substring of a model's name, HF id, alias, Ollama tag or family")
    p.add_argument("--family", action=_Once, help="only this family (llama, qwen, deepseek, gemma, ...)")
    p.add_argument("--kind", choices=KINDS, action=_Once, help="only models with layers of this kind (or MoE)")
    p.add_argument("--names", action="store_true",
                   help="under each model, every name it resolves from: HF ids, aliases, Ollama tags, quantized "
                        "variants, derivative repo names")
    p.add_argument("--explain", metavar="NAME", action=_Once,
                   help="how NAME is read: URL, quant tag, catalog entry, Ollama tag "
                        "qualifiers or the derivative convention, and what it resolves to")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.error = _refuse  # type: ignore[method-assign]  # argparse's usage block + exit: one line and exit 2 instead
    return p


def _refuse(message: str) -> None:
    raise OomkitError(f"oomkit models: {message} (see oomkit models --help)")


def _resolves_from(row: dict, names_of: list[str], variants: list[str], ollama: dict) -> dict:
    """What a catalog entry answers to, grouped (the index's aliases and variants; derivative name patterns)."""
    tags = sorted(a for a in names_of if "/" not in a and (":" in a or a in ollama))
    ids = sorted(a for a in names_of if "/" in a)
    others = sorted(a for a in names_of if a not in tags and a not in ids)
    return {"hf_ids": ids, "aliases": others, "ollama_tags": tags, "variants": sorted(variants),
            "derivatives": list(names.derivative_patterns(row["hf_id"]))}


def _rows(query: str | None, family: str | None, kind: str | None) -> list[dict]:
    idx = catalog._index()
    by_slug: dict[str, list[str]] = {}
    for alias, slug in idx["aliases"].items():
        by_slug.setdefault(slug, []).append(alias)
    variants: dict[str, list[str]] = {}
    for alias, slug in idx.get("variants", {}).items():
        by_slug.setdefault(slug, []).append(alias)
        variants.setdefault(slug, []).append(alias)
    q = catalog.normalize(query) if query else ""
    q_slug = None
    if query:  # a name the catalog answers to, or a derivative repo of one ("RedHatAI/Qwen3-8B-FP8-dynamic")
        derived = None if catalog.resolve_slug(query) else names.derive(query)
        q_slug = catalog.resolve_slug(query) or (derived.slug if derived else None)
    out = []
    for row in catalog.entries():
        slug = row["slug"]
        if family and row["family"].lower() != family.lower():
            continue
        if kind and kind not in row.get("kinds", []):
            continue
        if q:
            hay = [slug, row["name"].lower(), row["hf_id"].lower(), row["family"].lower(), *by_slug.get(slug, [])]
            if not any(q in h for h in hay) and slug != q_slug:
                continue
        own = [a for a in by_slug.get(slug, []) if a not in variants.get(slug, [])]
        out.append({**row, "aliases": sorted(by_slug.get(slug, [])),
                    "resolves_from": _resolves_from(row, own, variants.get(slug, []), idx.get("formats", {}))})
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


def _short(items: list[str], n: int = 3) -> str:
    return ", ".join(items[:n]) + (f" +{len(items) - n}" if len(items) > n else "") if items else "-"


def _explain(name: str, as_json: bool) -> int:
    from ..model.resolve import explain  # lazy: resolving loads the spec builder, which a listing never needs

    rows = explain(name)
    if as_json:
        print(json.dumps({k: v for k, v in rows}, indent=1))
        return 0
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        sys.stdout.write(f"{k.ljust(width)}  {_shown(v)}\n")
    return 0


def _shown(text: str) -> str:
    """`text` with its control and other unprintable characters escaped (`--explain 'a<NUL>b'` echoes the name as
    typed: a NUL, escape or line separator written raw would cut or recolour the terminal's line)."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def run(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    for name in ("explain", "family"):  # an empty value listed the whole catalog as if the option were not given
        if getattr(args, name) is not None and not getattr(args, name).strip():
            raise OomkitError(f"--{name} is empty (an unset shell variable?): give a value or leave --{name} out")
    if args.explain:
        return _explain(args.explain, args.json)
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
    header = ("NAME", "HF ID", "FAMILY", "PARAMS", "ACTIVE", "CONTEXT", "KINDS", "OLLAMA TAGS")
    table = [header] + [
        (r["name"], r["hf_id"], r["family"], _fmt_params(r["params"]), _fmt_params(r.get("active")),
         _fmt_ctx(r["context"]), ",".join(r.get("kinds", [])), _short(r["resolves_from"]["ollama_tags"]))
        for r in rows
    ]
    widths = [max(len(t[i]) for t in table) for i in range(len(header))]
    out = sys.stdout
    for t, r in zip(table, [None, *rows], strict=True):
        out.write("  ".join(c.ljust(w) if i < 3 or i > 5 else c.rjust(w)
                            for i, (c, w) in enumerate(zip(t, widths, strict=True))).rstrip() + "\n")
        if args.names and r is not None:
            rf = r["resolves_from"]
            for label, key in (("HF ids", "hf_ids"), ("aliases", "aliases"), ("Ollama tags", "ollama_tags"),
                               ("variants", "variants"), ("derivatives", "derivatives")):
                if rf[key]:
                    out.write(f"    {label}: {', '.join(rf[key])}\n")
    out.write(f"{len(rows)} model{'s' if len(rows) != 1 else ''}\n")
    return 0
