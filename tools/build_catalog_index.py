#!/usr/bin/env python3
"""Regenerate src/oomkit/model/catalog/index.json from the catalog data files.

The index is what a lookup reads first (aliases -> slug, one small row per model), so it must never
drift from data/*.json: run this after adding or editing a data file. ``--check`` only compares and
exits 1 when index.json is stale (tests/test_catalog_data.py does the same).

    python tools/build_catalog_index.py          # rewrite index.json
    python tools/build_catalog_index.py --check  # exit 1 if index.json differs
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CATALOG = ROOT / "src" / "oomkit" / "model" / "catalog"
DATA_DIR = CATALOG / "data"
INDEX_PATH = CATALOG / "index.json"


class CatalogError(ValueError):
    """A data file breaks a catalog rule (duplicate alias, alias shadowing a slug, bad field)."""


def text_config(config: dict) -> dict:
    """The decoder's part of a config.json: ``text_config``/``llm_config`` of a wrapper, else itself."""
    for key in ("text_config", "llm_config"):
        if isinstance(config.get(key), dict):
            return config[key]
    return config


def context_length(config: dict) -> int | None:
    tc = text_config(config)
    for key in ("max_position_embeddings", "max_sequence_length", "seq_length", "n_positions"):
        if isinstance(tc.get(key), int):
            return tc[key]
        if isinstance(config.get(key), int):
            return config[key]
    return None


def load_data(data_dir: Path = DATA_DIR) -> dict[str, dict]:
    """slug -> parsed data file, sorted by slug."""
    return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted(data_dir.glob("*.json"))}


def build_index(data: dict[str, dict]) -> dict:
    """The index for these data files; raises CatalogError on a duplicate or shadowing alias."""
    aliases: dict[str, str] = {}
    models: dict[str, dict] = {}
    for slug, d in sorted(data.items()):
        if slug != slug.lower():
            raise CatalogError(f"{slug}: slugs are lowercase")
        models[slug] = {
            "name": d["name"],
            "hf_id": d["hf_id"],
            "family": d.get("family", ""),
            "params": d.get("params_published"),
            "context": context_length(d["config"]),
        }
        for alias in [d["hf_id"], *d.get("aliases", [])]:
            key = alias.strip().lower()
            if key == slug:
                continue
            if key in aliases and aliases[key] != slug:
                raise CatalogError(f"alias {key!r} is claimed by both {aliases[key]} and {slug}")
            aliases[key] = slug
    for key, slug in aliases.items():
        if key in models and key != slug:
            raise CatalogError(f"alias {key!r} of {slug} is another model's slug")
    return {"aliases": dict(sorted(aliases.items())), "models": models}


def render(index: dict) -> str:
    return json.dumps(index, indent=1, ensure_ascii=False, sort_keys=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if index.json is not up to date")
    args = ap.parse_args(argv)
    try:
        text = render(build_index(load_data()))
    except CatalogError as e:
        print(f"build_catalog_index: {e}", file=sys.stderr)
        return 2
    current = INDEX_PATH.read_text(encoding="utf-8") if INDEX_PATH.exists() else ""
    if args.check:
        if current != text:
            print(
                f"{INDEX_PATH.relative_to(ROOT)} is stale: run tools/build_catalog_index.py", file=sys.stderr
            )
            return 1
        return 0
    if current != text:
        INDEX_PATH.write_text(text, encoding="utf-8")
        print(f"wrote {INDEX_PATH.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
