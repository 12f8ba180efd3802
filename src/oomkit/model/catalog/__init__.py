"""The embedded model catalog: real `config.json` values of popular models, usable offline.

Layout (package data, json only):

- ``data/<slug>.json``: one model. ``config`` holds the memory-relevant keys of the model's real
  ``config.json`` with their original names and nesting (``text_config`` for VLM wrappers), so the
  config.json reader (``model/hf_config.py``) reads a catalog entry exactly as it reads a downloaded file.
  ``source`` names the verbatim copy the values were read from; ``verified`` says whether it was one.
  Keys the real file leaves to the transformers class defaults (e.g. Gemma 3's ``vocab_size``) are
  filled in and listed under ``filled`` with ``filled_source``.
- ``index.json``: aliases (lowercase) -> slug, and one small row per model. Generated from the data
  files by ``tools/build_catalog_index.py``; ``tests/test_catalog_data.py`` fails when it drifts.

A lookup reads the index and one data file, never the whole catalog: start-up time matters.
"""

from __future__ import annotations

import difflib
import functools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
DATA_DIR = _HERE / "data"
INDEX_PATH = _HERE / "index.json"

# Prefixes users paste in front of an HF id or an Ollama name; dropped before matching.
_PREFIXES = (
    "https://huggingface.co/",
    "http://huggingface.co/",
    "huggingface.co/",
    "hf.co/",
    "https://ollama.com/library/",
    "ollama.com/library/",
    "registry.ollama.ai/library/",
    "library/",
)


@dataclass(frozen=True)
class CatalogEntry:
    """One catalog model. ``config`` is the config.json subset (original key names and nesting)."""

    slug: str
    name: str
    hf_id: str
    config: dict[str, Any] = field(hash=False, repr=False)
    source: str
    verified: bool
    params_published: int | None
    notes: str = ""
    family: str = ""
    aliases: tuple[str, ...] = ()
    params_source: str = ""
    filled: tuple[str, ...] = ()  # config key paths filled from the transformers class defaults
    filled_source: str = ""

    @property
    def text_config(self) -> dict[str, Any]:
        """The decoder's config: ``text_config`` of a VLM wrapper, else the config itself."""
        for key in ("text_config", "llm_config"):
            sub = self.config.get(key)
            if isinstance(sub, dict):
                return sub
        return self.config


def normalize(name: str) -> str:
    """The key a name is looked up by: lowercase, surrounding space, URL prefixes and ``:latest`` dropped."""
    key = name.strip().lower()
    for prefix in _PREFIXES:
        if key.startswith(prefix):
            key = key[len(prefix) :]
            break
    key = key.rstrip("/")
    if key.endswith(":latest"):
        key = key[: -len(":latest")]
    return key


@functools.lru_cache(maxsize=1)
def _index() -> dict[str, Any]:
    with INDEX_PATH.open(encoding="utf-8") as f:
        return json.load(f)


def resolve_slug(name: str) -> str | None:
    """The slug a name (slug, HF id, alias or Ollama tag; any case) refers to, or None."""
    key = normalize(name)
    idx = _index()
    if key in idx["models"]:
        return key
    return idx["aliases"].get(key)


@functools.lru_cache(maxsize=64)
def _load(slug: str) -> CatalogEntry:
    with (DATA_DIR / f"{slug}.json").open(encoding="utf-8") as f:
        d = json.load(f)
    return CatalogEntry(
        slug=slug,
        name=d["name"],
        hf_id=d["hf_id"],
        config=d["config"],
        source=d["source"],
        verified=bool(d["verified"]),
        params_published=d.get("params_published"),
        notes=d.get("notes", ""),
        family=d.get("family", ""),
        aliases=tuple(d.get("aliases", ())),
        params_source=d.get("params_source", ""),
        filled=tuple(d.get("filled", ())),
        filled_source=d.get("filled_source", ""),
    )


def lookup(name: str) -> CatalogEntry | None:
    """The catalog entry for a slug, HF id, alias or Ollama tag (case-insensitive), or None.

    The returned entry's ``config`` is shared between calls: copy it before changing it.
    """
    slug = resolve_slug(name)
    return _load(slug) if slug else None


def entries() -> list[dict[str, Any]]:
    """One small row per model (slug, name, hf_id, family, params, context), sorted by slug."""
    return [{"slug": slug, **row} for slug, row in sorted(_index()["models"].items())]


def suggest(name: str, n: int = 3) -> list[str]:
    """Up to ``n`` catalog names close to ``name`` (for "did you mean"), best first, one per model.

    Scores every slug and alias with difflib, also against the part after ``org/`` so that
    "Qwen3-32B" finds "Qwen/Qwen3-32B". A match on a model's HF id is shown with the id's casing.
    """
    key = normalize(name)
    if not key:
        return []
    idx = _index()
    models, aliases = idx["models"], idx["aliases"]
    key_tail = key.split("/", 1)[-1]
    scored: list[tuple[float, str, str]] = []
    for cand, slug in [*((s, s) for s in models), *aliases.items()]:
        tail = cand.split("/", 1)[-1]
        score = max(
            difflib.SequenceMatcher(None, key, cand).ratio(),
            difflib.SequenceMatcher(None, key_tail, tail).ratio(),
        )
        if score >= 0.6:
            scored.append((score, cand, slug))
    scored.sort(key=lambda t: (-t[0], t[1]))
    out: list[str] = []
    seen: set[str] = set()
    for _, cand, slug in scored:
        if slug in seen:
            continue
        seen.add(slug)
        hf_id = models[slug]["hf_id"]
        out.append(hf_id if cand == hf_id.lower() else cand)
        if len(out) == n:
            break
    return out


__all__ = [
    "CatalogEntry",
    "DATA_DIR",
    "INDEX_PATH",
    "entries",
    "lookup",
    "normalize",
    "resolve_slug",
    "suggest",
]
