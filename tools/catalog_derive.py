#!/usr/bin/env python3
"""Write the catalog's derived entries: published models whose config.json no verbatim copy was found for, built
from a catalog sibling whose config was read (a base/instruct twin, a fine-tune of a named base, another size of
the same family), each with what differs stated.

Every entry written here has ``verified: false`` and a ``source`` that starts with "derived", names the sibling the
architecture values come from (and that sibling's own source), and lists every value changed from it with where
that value comes from (the model card, the family's published table). Parameter totals: the sibling's published
count when the architecture is the sibling's unchanged, else the count computed from the derived config (said so).

The rows live in tools/catalog_rows.py. Run after editing them, then tools/build_catalog_index.py:

    python tools/catalog_derive.py            # (re)write every derived data file
    python tools/catalog_derive.py --check    # exit 1 when a data file differs from what the rows give
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for p in (ROOT / "src", ROOT / "tools"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))
DATA_DIR = ROOT / "src" / "oomkit" / "model" / "catalog" / "data"


@dataclass(frozen=True)
class Row:
    slug: str
    base: str  # the sibling's slug
    hf_id: str
    why: str  # what the model is, relative to the sibling, and the source of that statement
    aliases: tuple[str, ...] = ()
    name: str = ""
    text: dict[str, Any] = field(default_factory=dict)  # keys set in the decoder's config (text_config if nested)
    top: dict[str, Any] = field(default_factory=dict)  # keys set at the top level
    drop: tuple[str, ...] = ()  # top-level keys removed (a text-only release of a VLM drops vision_config)
    flat: bool = False  # a text-only release of a VLM: the decoder's config becomes the whole config
    config: dict[str, Any] | None = None  # a whole config assembled from the model card (no sibling architecture)
    family: str = ""
    params: int | None = None  # a published total, with params_source
    params_source: str = ""
    source: str = ""  # an assembled entry's sources where they are not the model card (e.g. a llama.cpp log)


def _text_config(cfg: dict) -> dict:
    for key in ("text_config", "llm_config"):
        if isinstance(cfg.get(key), dict):
            return cfg[key]
    return cfg


def _name(hf_id: str) -> str:
    return hf_id.split("/", 1)[1].replace("_", " ").replace("-", " ")


def _count(cfg: dict, name: str) -> tuple[int, int]:
    """(decoder + tower, decoder) parameters of a config, as the catalog's consistency test counts them."""
    from oomkit.model.hf_config import spec_from_config
    from oomkit.model.towers import vision_tower

    dec = spec_from_config(cfg, name=name, weight_format="bf16").params_total
    tower = vision_tower(cfg)
    return dec + (tower.params if tower else 0), dec


def _fmt(v: Any) -> str:
    return json.dumps(v, ensure_ascii=False)


def build(row: Row, data: dict[str, dict]) -> dict:
    base = data[row.base]
    if row.config is not None:
        return _assembled(row, base)
    cfg = copy.deepcopy(base["config"])
    if row.flat:
        dtype = {k: cfg[k] for k in ("torch_dtype", "dtype") if k in cfg}
        cfg = {**dtype, **copy.deepcopy(_text_config(cfg))}
    for k in row.drop:
        cfg.pop(k, None)
    cfg.update(copy.deepcopy(row.top))
    _text_config(cfg).update(copy.deepcopy(row.text))
    changed = [f"{k}={_fmt(v)}" for k, v in {**row.top, **row.text}.items()] + [f"no {k}" for k in row.drop]
    if row.flat:
        changed.insert(0, "the decoder's config (text_config) as the whole config")
    same = not changed
    if row.params is not None:
        params, psrc = row.params, row.params_source
        decoder = None
    elif same:
        params, decoder = base["params_published"], base.get("params_decoder")
        psrc = f"the sibling's count (the architecture is {row.base}'s unchanged): {base['params_source']}"
    else:
        params, decoder = _count(cfg, row.hf_id)
        psrc = ("computed from this config (decoder tensors as model/tensors.py lists them, plus the vision tower "
                "model/towers.py counts); no published exact total was read")
        decoder = decoder if decoder != params else None
    d = {
        "name": row.name or _name(row.hf_id),
        "hf_id": row.hf_id,
        "family": row.family or base["family"],
        "aliases": sorted({row.hf_id.lower(), *row.aliases}),
        "config": cfg,
        "params_published": params,
        **({"params_decoder": decoder} if decoder else {}),
        "params_source": psrc,
        "source": f"derived, not read from a verbatim copy of this repo's config.json: the architecture of "
                  f"{row.base} ({base['hf_id']}; {base['source']})"
                  + (f" with {', '.join(changed)}" if changed else ", unchanged"),
        "verified": False,
        "notes": row.why + (f" Changed from {row.base}: {', '.join(changed)}." if changed else
                            f" Same memory-relevant config as {row.base}."),
    }
    # a key the row sets is the row's value now, not the sibling's filled default
    overridden = {f"{w}.{k}" for w in ("text_config", "llm_config") for k in row.text} | set(row.top) | set(row.text)
    filled = [f.split(".", 1)[1] if row.flat and f.startswith(("text_config.", "llm_config.")) else f
              for f in base.get("filled", ()) if f not in overridden]
    if filled:
        d["filled"], d["filled_source"] = filled, base["filled_source"]
    return d


def _assembled(row: Row, family_of: dict) -> dict:
    """An entry whose config was assembled from the model card's architecture table: no sibling to derive from."""
    if row.params is not None:
        params, psrc, decoder = row.params, row.params_source, None
        total, dec = _count(row.config, row.hf_id)
        if total != dec:  # a VLM's published total: its decoder's count kept beside it, as a derived one has
            decoder = dec
    else:
        params, decoder = _count(row.config, row.hf_id)
        psrc = ("computed from this config (decoder tensors as model/tensors.py lists them, plus any vision tower); "
                "no published exact total was read")
        decoder = decoder if decoder != params else None
    return {
        "name": row.name or _name(row.hf_id),
        "hf_id": row.hf_id,
        "family": row.family or family_of["family"],
        "aliases": sorted({row.hf_id.lower(), *row.aliases}),
        "config": copy.deepcopy(row.config),
        "params_published": params,
        **({"params_decoder": decoder} if decoder else {}),
        "params_source": psrc,
        "source": "derived, not read from a verbatim copy of this repo's config.json: "
                  + (row.source or "assembled from the model card's architecture figures and the family's published "
                                   "config conventions (see notes)"),
        "verified": False,
        "notes": row.why,
    }


def render(d: dict) -> str:
    return json.dumps(d, indent=1, ensure_ascii=False) + "\n"


def apply(rows: list[Row], data: dict[str, dict]) -> dict[str, dict]:
    """data with every row's entry written and the names a row claims taken off the entries that held them."""
    out = dict(data)
    for row in rows:
        d = build(row, out)
        claimed = {*d["aliases"], row.slug}  # a name the new entry takes (its slug included) leaves its old owner
        for slug, other in list(out.items()):
            if slug != row.slug and claimed & set(other.get("aliases", ())):
                out[slug] = {**other, "aliases": [a for a in other["aliases"] if a not in claimed]}
        out[row.slug] = d
    return out


def main(argv: list[str] | None = None) -> int:
    from build_catalog_index import load_data
    from catalog_rows import ROWS

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    data = load_data(DATA_DIR)
    new = apply(ROWS, data)
    stale = [s for s, d in new.items() if (DATA_DIR / f"{s}.json").read_text(encoding="utf-8")
             != render(d)] if args.check else []
    if args.check:
        if stale:
            print(f"catalog_derive: stale data files: {', '.join(stale[:10])}", file=sys.stderr)
            return 1
        return 0
    for slug, d in new.items():
        path = DATA_DIR / f"{slug}.json"
        text = render(d)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
    print(f"{len(ROWS)} derived entries; {len(new)} data files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
