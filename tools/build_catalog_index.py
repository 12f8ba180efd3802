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
if str(ROOT / "src") not in sys.path:
    sys.path.insert(0, str(ROOT / "src"))
CATALOG = ROOT / "src" / "oomkit" / "model" / "catalog"
DATA_DIR = CATALOG / "data"
INDEX_PATH = CATALOG / "index.json"


class CatalogError(ValueError):
    """A data file breaks a catalog rule (duplicate alias, alias shadowing a slug, bad field)."""


def text_config(config: dict) -> dict:
    """The decoder's part of a config.json: ``text_config``/``llm_config`` of a wrapper (``thinker_config.text_config``
    of an omni model), else itself."""
    thinker = config.get("thinker_config")
    if isinstance(thinker, dict) and isinstance(thinker.get("text_config"), dict):
        return thinker["text_config"]
    for key in ("text_config", "llm_config"):
        if isinstance(config.get(key), dict):
            return config[key]
    from oomkit.model.catalog import with_standard_keys

    return with_standard_keys(config)


def context_length(config: dict) -> int | None:
    tc = text_config(config)
    for key in ("max_position_embeddings", "max_sequence_length", "seq_length", "n_positions"):
        if isinstance(tc.get(key), int):
            return tc[key]
        if isinstance(config.get(key), int):
            return config[key]
    return None


# Ollama library names -> the quant their tags default to. Ollama's library tags are Q4_K_M unless the library
# page says otherwise (https://ollama.com/library/<name>/tags lists each tag's quantization): models published
# before mid-2024 default to Q4_0, gpt-oss ships MXFP4, the embedding models F16.
OLLAMA_LIBRARY = {
    **dict.fromkeys(
        ["llama3.1", "llama3.2", "llama3.3", "llama4", "qwen2.5", "qwen2.5-coder", "qwq", "qwen3", "qwen3-coder",
         "qwen3-next", "qwen3-vl", "qwen3.5", "qwen3.6", "deepseek-r1", "deepseek-v3", "deepseek-v3.1", "deepseek-v3.2",
         "deepseek-v2", "deepseek-v2.5", "deepseek-coder-v2", "mistral-nemo", "mistral-small", "mistral-small3.1",
         "mistral-large", "gemma3", "gemma3n", "gemma4", "phi3.5", "phi4", "phi4-mini", "glm4", "granite3.1-dense",
         "olmo2", "olmoe", "smollm2", "nemotron-3-nano", "falcon-h1", "kimi-k2", "minimax-m2"],
        "Q4_K_M",
    ),
    # library tags published as Q4_0 (the Ollama default before the Q4_K_M switch)
    **dict.fromkeys(
        ["llama2", "codellama", "mistral", "mixtral", "gemma", "gemma2", "phi3", "phi", "tinyllama", "yi",
         "deepseek-coder", "command-r", "qwen2", "llama3", "aya", "stablelm2", "smollm", "internlm2"],
        "Q4_0",
    ),
    "gpt-oss": "MXFP4",  # ollama.com/library/gpt-oss: MXFP4 weights as OpenAI ships them
    "bge-m3": "F16",
    "nomic-embed-text": "F16",
    # More library names, by the same rule (their pages not read one by one): published from mid-2024 on -> Q4_K_M,
    # before -> Q4_0, embedding models -> F16, gpt-oss derivatives -> MXFP4.
    **dict.fromkeys(
        ["aya-expanse", "codestral", "cogito", "command-a", "command-r7b", "devstral", "devstral-2", "devstral-small-2",
         "falcon3", "glm-4.6", "glm-4.7-flash", "olmo-3", "olmo-3.1",
         "granite3-dense", "granite3.1-moe", "granite3.2", "granite3.3", "granite4", "hermes3", "llama-guard3",
         "magistral", "ministral-3", "mistral-small3.2", "nemotron", "phi4-mini-reasoning", "phi4-reasoning",
         "qwen2-math", "qwen2.5vl", "qwen3-embedding", "seed-oss", "shieldgemma", "tulu3", "dolphin3", "exaone3.5",
         "openthinker", "marco-o1", "smallthinker", "athene-v2", "deepscaler", "deepcoder", "r1-1776", "exaone-deep"],
        "Q4_K_M",
    ),
    **dict.fromkeys(
        ["baichuan2", "codegemma", "command-r-plus", "deepseek-llm", "llava", "mathstral", "nous-hermes2-mixtral",
         "openhermes", "qwen", "solar", "starcoder2", "vicuna", "wizardlm2", "zephyr", "openchat", "nous-hermes2",
         "llama2-uncensored", "nous-hermes", "stable-beluga", "neural-chat", "mistral-openorca", "notus", "notux",
         "starling-lm", "dolphin-mixtral", "dolphin-phi", "nuextract", "phind-codellama", "llama3-chatqa",
         "firefunction-v2", "yi-coder"],
        "Q4_0",
    ),
    **dict.fromkeys(["all-minilm", "bge-large", "granite-embedding", "mxbai-embed-large", "snowflake-arctic-embed",
                     "paraphrase-multilingual", "snowflake-arctic-embed2"], "F16"),
    "gpt-oss-safeguard": "MXFP4",
    # ollama.com/library/embeddinggemma: the latest (300m) tag is the BF16 blob (ollama#12247's log: BF16, the
    # Ollama engine, tests/fixtures/engine_logs/ollama_heldout4/embeddinggemma-300m-cuda-8gib-0.11.10.json)
    "embeddinggemma": "BF16",
    # registry.ollama.ai/v2/library/laguna-xs.2: the blob Mesh-LLM/mesh-llm#406 catalogs as Laguna-XS.2-Q4_K_M
    "laguna-xs.2": "Q4_K_M",
    "nemotron-mini": "Q4_K_M",  # published 2024-09, by the rule above
    "lfm2": "Q4_K_M",  # ollama.com/library/lfm2:latest: LFM2-24B-A2B, Q4_K_M
}


def ollama_default(alias: str) -> str | None:
    """The default quant of an Ollama tag ("llama3.1:8b", "gemma3"), or None when the alias is not one."""
    if "/" in alias:
        return None
    return OLLAMA_LIBRARY.get(alias.split(":", 1)[0])


def row_facts(d: dict) -> dict:
    """Active parameters and attention kinds, from the per-layer spec of the data file's config."""
    from oomkit.model.hf_config import spec_from_config

    spec = spec_from_config(d["config"], name=d["name"], weight_format="bf16")
    kinds = sorted({layer.kind.value for layer in spec.layers} - {"none"})
    moe = any(layer.ffn.is_moe for layer in spec.layers)
    if moe:
        kinds.append("moe")
    ratio = spec.params_active / spec.params_total if spec.params_total else 1.0
    # a dense model's next-n (MTP) layer is not an active-parameter count of its own
    return {"active": round(d["params_published"] * ratio) if moe and ratio < 1 else None, "kinds": kinds}


def load_data(data_dir: Path = DATA_DIR) -> dict[str, dict]:
    """slug -> parsed data file, sorted by slug."""
    return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted(data_dir.glob("*.json"))}


def build_index(data: dict[str, dict]) -> dict:
    """The index for these data files; raises CatalogError on a duplicate or shadowing alias."""
    aliases: dict[str, str] = {}
    models: dict[str, dict] = {}
    variants: dict[str, str] = {}
    formats: dict[str, str] = {}
    library_formats: dict[str, str] = {}  # a slug that is also an Ollama library name ("bge-m3": its F16 tags)
    for slug, d in sorted(data.items()):
        if slug != slug.lower():
            raise CatalogError(f"{slug}: slugs are lowercase")
        models[slug] = {
            "name": d["name"],
            "hf_id": d["hf_id"],
            "family": d.get("family", ""),
            "params": d.get("params_published"),
            "context": context_length(d["config"]),
            **row_facts(d),
        }
        for alias in [d["hf_id"], *d.get("aliases", [])]:
            key = alias.strip().lower()
            if key == slug:
                if ollama_default(key):
                    library_formats[key] = ollama_default(key)
                continue
            if key in aliases and aliases[key] != slug:
                raise CatalogError(f"alias {key!r} is claimed by both {aliases[key]} and {slug}")
            aliases[key] = slug
            fmt = ollama_default(key)
            if fmt:
                formats[key] = fmt
        for v in d.get("variants", []):
            key = v["hf_id"].lower()
            if key in aliases or key in variants or key in models:
                raise CatalogError(f"variant {key!r} of {slug} is already a catalog name")
            variants[key] = slug
    for key, slug in aliases.items():
        if key in models and key != slug:
            raise CatalogError(f"alias {key!r} of {slug} is another model's slug")
    return {
        "aliases": dict(sorted(aliases.items())),
        "variants": dict(sorted(variants.items())),
        "formats": dict(sorted(formats.items())),
        "library_formats": dict(sorted(library_formats.items())),
        "models": models,
    }


def render(index: dict) -> str:
    """Two lines: the names a lookup reads (with slug -> HF id), then the listing rows `oomkit models` reads."""
    names = {k: v for k, v in index.items() if k != "models"}
    names["slugs"] = {slug: row["hf_id"] for slug, row in index["models"].items()}
    return (json.dumps(names, ensure_ascii=False, separators=(",", ":")) + "\n"
            + json.dumps({"models": index["models"]}, ensure_ascii=False, separators=(",", ":")) + "\n")


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
