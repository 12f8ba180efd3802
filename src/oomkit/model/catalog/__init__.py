"""The embedded model catalog: real `config.json` values of popular models, usable offline.

Layout (package data, json only):

- ``data/<slug>.json``: one model. ``config`` holds the memory-relevant keys of the model's real
  ``config.json`` with their original names and nesting (``text_config`` for VLM wrappers), so the
  config.json reader (``model/hf_config.py``) reads a catalog entry exactly as it reads a downloaded file.
  ``source`` names the verbatim copy the values were read from; ``verified`` says whether it was one.
  Keys the real file leaves to the transformers class defaults (e.g. Gemma 3's ``vocab_size``) are
  filled in and listed under ``filled`` with ``filled_source``.
- ``data/<slug>.json`` may list ``variants``: quantized official repos of the same model (FP8, NVFP4, ...),
  each with its verbatim ``quantization_config``; looking a variant up returns the base config with that
  ``quantization_config`` merged in (``CatalogEntry.variant_of`` names the base repo). A ModelOpt variant may also
  carry its ``hf_quant_config`` (hf_quant_config.json, with ``hf_quant_config_source``), kept apart from the config.
- ``context_extension`` (optional): the YaRN extension the model card documents as an opt-in (its ``rope_scaling``
  and ``max_position_embeddings``, with ``source``), which a publisher's context-extended repo ("-128K") applies.
- ``index.json``, two lines: first the names (aliases (lowercase) -> slug, variant repos -> slug, Ollama tags -> their
  default quant (``formats``), slug -> HF id), then one small row per model (what ``oomkit models`` lists), so a
  lookup parses only the names. Generated from the data files by ``tools/build_catalog_index.py``;
  ``tests/test_catalog_data.py`` fails when it drifts.
- GGUF repos (``unsloth/Qwen3-30B-A3B-GGUF``, ``bartowski/Qwen_Qwen3-30B-A3B-GGUF``, ...) resolve to the base
  model; their weight format is left to the ``:QUANT`` suffix.

A lookup reads the index and one data file, never the whole catalog: start-up time matters.
"""

from __future__ import annotations

import functools
import gc
import json
import re
from dataclasses import dataclass, field, replace
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
    params_decoder: int | None = None  # the published count the per-layer spec describes (no vision tower, ...)
    # The weight format the name implies when it carries none: an Ollama tag's default quant ("Q4_K_M",
    # "MXFP4"); None for HF ids. resolve() uses it when no --quant / :QUANT is given.
    default_format: str | None = None
    variant_of: str = ""  # for a quantized variant repo: the base model's HF id
    # a ModelOpt variant's hf_quant_config.json (its nested "quantization" section), which some engines read beside
    # or instead of config.json's quantization_config (SGLang 0.5.15+ for an incomplete MIXED_PRECISION section:
    # model_loader/weight_utils.py get_quant_config); None where the catalog holds no copy
    hf_quant_config: dict[str, Any] | None = field(default=None, hash=False, repr=False)
    # the context extension the model's card documents as an opt-in ({"rope_scaling": {...}, "max_position_embeddings":
    # N, "source": ...}: the keys a publisher's "-128K" repo writes into config.json); None where the card gives none
    context_extension: dict[str, Any] | None = field(default=None, hash=False, repr=False)

    @property
    def text_config(self) -> dict[str, Any]:
        """The decoder's config: ``text_config`` of a VLM wrapper (``thinker_config.text_config`` of an omni model),
        else the config itself."""
        thinker = self.config.get("thinker_config")
        if isinstance(thinker, dict) and isinstance(thinker.get("text_config"), dict):
            return thinker["text_config"]
        for key in ("text_config", "llm_config"):
            sub = self.config.get(key)
            if isinstance(sub, dict):
                return sub
        return with_standard_keys(self.config)


# GPT-2's config.json keeps its own key names; transformers GPT2Config.attribute_map reads them under the standard ones
_GPT2_KEYS = {"hidden_size": "n_embd", "max_position_embeddings": "n_positions", "num_attention_heads": "n_head",
              "num_hidden_layers": "n_layer"}


def with_standard_keys(config: dict[str, Any]) -> dict[str, Any]:
    """The config itself, or for GPT-2 a copy with the standard key names added (GPT2Config.attribute_map); for
    OPT the FFN width under its standard name (OPTDecoderLayer fc1: ffn_dim) and its multi-head KV count; for
    EXAONE 3.x its layer count under the standard name (ExaoneConfig.attribute_map)."""
    if config.get("model_type") == "opt":
        std = dict(config)
        if "ffn_dim" in config:
            std.setdefault("intermediate_size", config["ffn_dim"])
        if "num_attention_heads" in config:  # OPTAttention: k_proj / v_proj of embed_dim, every head
            std.setdefault("num_key_value_heads", config["num_attention_heads"])
        return std
    if config.get("model_type") == "exaone":  # EXAONE's ExaoneConfig.attribute_map: num_hidden_layers -> num_layers
        return {**config, "num_hidden_layers": config["num_layers"]} if "num_layers" in config else config
    if config.get("model_type") != "gpt2":
        return config
    std = {**config, **{k: config[v] for k, v in _GPT2_KEYS.items() if v in config and k not in config}}
    if "n_head" in config:  # GPT2Attention: multi-head, K and V of every head (c_attn: 3 x n_embd)
        std.setdefault("num_key_value_heads", config["n_head"])
    if "n_embd" in config:  # GPT2Block: inner_dim = n_inner if not None else 4 * hidden_size
        std.setdefault("intermediate_size", config.get("n_inner") or 4 * config["n_embd"])
    return std


# Ollama libraries whose default tag (":latest") is another model than the catalog entry of the bare name: Ollama's
# deepseek-r1:latest is its 8b tag (DeepSeek-R1-0528-Qwen3-8B since the R1-0528 update; the catalog entry's notes),
# while the bare "deepseek-r1" is the 671B DeepSeek-R1. Ollama's deepseek-v2:latest is its 16b (DeepSeek-V2-Lite;
# ollama.com/library/deepseek-v2: 16b, 236b), the bare "deepseek-v2" the 236B DeepSeek-V2 of that name.
OLLAMA_LATEST = {"deepseek-r1": "deepseek-r1:8b", "deepseek-v2": "deepseek-v2:16b"}


def normalize(name: str) -> str:
    """The key a name is looked up by: lowercase, surrounding space, URL prefixes and ``:latest`` dropped (or read as
    the library's default tag where that is another model: OLLAMA_LATEST)."""
    key = name.strip().lower()
    for prefix in _PREFIXES:
        if key.startswith(prefix):
            key = key[len(prefix) :]
            break
    key = key.rstrip("/")
    if key.endswith(":latest"):
        key = key[: -len(":latest")]
        key = OLLAMA_LATEST.get(key, key)
    return key


_ROWS_TEXT: list[str] = []  # index.json's second line (the listing rows), kept by _index() for _rows()


def _parse(text: str) -> dict[str, Any]:
    # json builds ~10^4 small objects: with the collector on, allocation-triggered collections walk everything
    # imported so far; nothing parsed here can form a cycle
    enabled = gc.isenabled()
    gc.disable()
    try:
        return json.loads(text)
    finally:
        if enabled:
            gc.enable()


@functools.lru_cache(maxsize=1)
def _index() -> dict[str, Any]:
    """index.json's first line: aliases, variants, formats (Ollama tags' default quant) and slugs (slug -> HF id).
    The second line, the listing rows `oomkit models` shows, is kept unparsed until _rows() asks for it."""
    with INDEX_PATH.open(encoding="utf-8") as f:
        names, _, rows = f.read().partition("\n")
    _ROWS_TEXT[:] = [rows]
    return _parse(names)


@functools.lru_cache(maxsize=1)
def _rows() -> dict[str, dict[str, Any]]:
    if not _ROWS_TEXT:
        _index()
    return _parse(_ROWS_TEXT[0])["models"]


def resolve_slug(name: str) -> str | None:
    """The slug a name (slug, HF id, alias, Ollama tag, quantized variant or GGUF repo; any case) refers to."""
    return _resolve(normalize(name))[0]


# Publishers of GGUF conversions: "<publisher>/<model>-GGUF" names the model of the part after the slash
# (bartowski writes "<org>_<model>" for newer uploads).
_GGUF_SUFFIXES = ("-gguf", "_gguf", ".gguf")


def _resolve(key: str) -> tuple[str | None, str | None]:
    """normalized name -> (slug, variant HF id or None)."""
    idx = _index()
    if key in idx["slugs"]:
        return key, None
    if key in idx["aliases"]:
        return idx["aliases"][key], None
    if key in idx.get("variants", {}):
        return idx["variants"][key], key
    if key.endswith(_GGUF_SUFFIXES) and "/" in key:
        return _gguf_repo(key), None
    return None, None


def _gguf_repo(key: str) -> str | None:
    tail = key.split("/", 1)[1]
    for suffix in _GGUF_SUFFIXES:
        tail = tail.removesuffix(suffix)
    return match_tail(tail.removesuffix("-i1"))  # mradermacher's imatrix repos: "<model>-i1-GGUF"


@functools.lru_cache(maxsize=1)
def _tails() -> dict[str, str]:
    """Every catalog name and the part after its "org/" (also as bartowski's "org_name") -> slug."""
    idx = _index()
    tails: dict[str, str] = {}
    for cand, slug in [*((s, s) for s in idx["slugs"]), *idx["aliases"].items()]:
        tails.setdefault(cand, slug)
        if "/" in cand:
            org, rest = cand.split("/", 1)
            tails.setdefault(rest, slug)
            tails.setdefault(f"{org}_{rest}", slug)  # bartowski/Qwen_Qwen3-8B-GGUF
            if rest.endswith("-hf"):  # meta-llama/Llama-2-7b-chat-hf, as TheBloke names it: Llama-2-7B-Chat
                tails.setdefault(rest.removesuffix("-hf"), slug)
    return tails


def match_tail(name: str) -> str | None:
    """The slug of a model part of a repo name ("qwen3-8b", "qwen/qwen3-8b", "qwen_qwen3-8b",
    "meta-llama-3.1-8b-instruct"; lowercase), or None."""
    tails = _tails()
    for cand in (name, name.removeprefix("meta-")):
        if cand in tails:
            return tails[cand]
    return None


def library_format(name: str) -> str | None:
    """The quant Ollama's library tags of a name default to when the name is also a catalog slug ("bge-m3": F16),
    for engines that load GGUF files; None otherwise. A slug keeps meaning the checkpoint for vLLM and the rest."""
    return _index().get("library_formats", {}).get(normalize(name))


def name_kind(name: str) -> str:
    """What a catalog name is: "slug", "HF id", "alias", "Ollama tag", "quantized variant", "GGUF repo"; "" if none."""
    key = normalize(name)
    idx = _index()
    if key in idx["slugs"]:
        return "slug"
    if key in idx["aliases"]:
        slug = idx["aliases"][key]
        if key == idx["slugs"][slug].lower():
            return "HF id"
        return "Ollama tag" if key in idx.get("formats", {}) or ("/" not in key and ":" in key) else "alias"
    if key in idx.get("variants", {}):
        return "quantized variant"
    if _resolve(key)[0] is not None:
        return "GGUF repo"
    return ""


@functools.lru_cache(maxsize=64)
def _load(slug: str) -> tuple[CatalogEntry, tuple[dict[str, Any], ...]]:
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
        params_decoder=d.get("params_decoder"),
        context_extension=d.get("context_extension"),
    ), tuple(d.get("variants", ()))


def lookup(name: str) -> CatalogEntry | None:
    """The catalog entry for a slug, HF id, alias or Ollama tag (case-insensitive), or None.

    The returned entry's ``config`` is shared between calls: copy it before changing it.
    """
    key = normalize(name)
    slug, variant = _resolve(key)
    if slug is None and re.search(r"\s", key):  # "Qwen3 30B A3B", as a model card titles it: no HF id, alias or
        key = re.sub(r"\s+", "-", key)  # Ollama tag holds a space, and the words are the dashed id's
        slug, variant = _resolve(key)
    if slug is None:
        return None
    entry, variants = _load(slug)
    if variant is not None:
        return _variant_entry(entry, variants, variant)
    fmt = _index().get("formats", {}).get(key)
    return replace(entry, default_format=fmt) if fmt else entry


def _variant_entry(entry: CatalogEntry, variants: tuple[dict[str, Any], ...], hf_key: str) -> CatalogEntry:
    """The base entry with a quantized variant's quantization_config (and dtype) merged into its config."""
    v = next(v for v in variants if v["hf_id"].lower() == hf_key)
    config = dict(entry.config)
    config["quantization_config"] = v["quantization_config"]
    for key in ("text_config", "llm_config"):  # the variant's config replaces the base's, also a nested one
        if isinstance(config.get(key), dict) and "quantization_config" in config[key]:
            config[key] = {k: val for k, val in config[key].items() if k != "quantization_config"}
    for k in ("torch_dtype", "dtype"):
        if k in v:
            config[k] = v[k]
    return replace(
        entry, hf_id=v["hf_id"], name=f"{entry.name} ({v['hf_id']})", config=config,
        source=f"{v['source']} (quantization_config); {entry.source} (architecture)",
        verified=bool(v.get("verified", False)) and entry.verified, variant_of=entry.hf_id,
        hf_quant_config=v.get("hf_quant_config"),
    )


def entries() -> list[dict[str, Any]]:
    """One small row per model (slug, name, hf_id, family, params, active, context, kinds), sorted by slug."""
    return [{"slug": slug, **row} for slug, row in sorted(_rows().items())]


def suggest(name: str, n: int = 3) -> list[str]:
    """Up to ``n`` catalog names close to ``name`` (for "did you mean"), best first, one per model.

    Scores every slug and alias with difflib, also against the part after ``org/`` so that
    "Qwen3-32B" finds "Qwen/Qwen3-32B". A match on a model's HF id is shown with the id's casing.
    """
    import difflib  # only a miss pays for it

    key = normalize(name)
    if not key:
        return []
    idx = _index()
    slugs, aliases = idx["slugs"], idx["aliases"]
    key_tail = key.split("/", 1)[-1]
    scored: list[tuple[float, str, str]] = []
    def close(a: str, b: str) -> float:
        # ratio() is quadratic in the text's length (a 100,000-character MODEL took minutes); its bounds from the
        # lengths and the letters alone first, as difflib.get_close_matches tests them: the same scores at 0.6 up
        m = difflib.SequenceMatcher(None, a, b)
        return m.ratio() if m.real_quick_ratio() >= 0.6 and m.quick_ratio() >= 0.6 else 0.0

    for cand, slug in [*((s, s) for s in slugs), *aliases.items()]:
        tail = cand.split("/", 1)[-1]
        score = max(close(key, cand), close(key_tail, tail))
        if score >= 0.6:
            scored.append((score, cand, slug))
    scored.sort(key=lambda t: (-t[0], t[1]))
    out: list[str] = []
    seen: set[str] = set()
    for _, cand, slug in scored:
        if slug in seen:
            continue
        seen.add(slug)
        hf_id = slugs[slug]
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
    "match_tail",
    "name_kind",
    "normalize",
    "resolve_slug",
    "suggest",
]


def variant_ids(name: str) -> tuple[str, ...]:
    """The HF ids of the quantized official repos of the model `name` refers to (FP8, NVFP4, ...), as listed."""
    slug, _ = _resolve(normalize(name))
    if slug is None:
        return ()
    return tuple(v["hf_id"] for v in _load(slug)[1])


def base_hf_id(name: str) -> str | None:
    """The published HF id of the model `name` refers to (an Ollama tag or GGUF repo -> the original checkpoint)."""
    slug, _ = _resolve(normalize(name))
    return None if slug is None else _load(slug)[0].hf_id
