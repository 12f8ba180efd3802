"""A model reference -> ModelSpec: "qwen2.5:32b" | "Qwen/Qwen2.5-32B-Instruct" | a .gguf | config.json | a directory.

A ":QUANT" suffix picks the weight format ("Qwen/Qwen3-32B:Q4_K_M"); Ollama tags carry their own size after the
colon ("llama3.1:8b"), so the suffix is only a format when it names one.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..errors import OomkitError
from ..quant import gguf_recipes
from . import catalog
from .hf_config import load_config, spec_from_config
from .spec import ModelSpec


def split_quant(ref: str) -> tuple[str, str | None]:
    """"name:Q4_K_M" -> ("name", "Q4_K_M"); "llama3.1:8b-q8_0" -> ("llama3.1:8b", "q8_0"); else (ref, None)."""
    def is_format(s: str) -> bool:
        try:
            gguf_recipes.ftype_by_name(s)
            return True
        except OomkitError:
            return s.lower() in _HF_FORMATS

    if ":" in ref:
        base, tail = ref.rsplit(":", 1)
        if is_format(tail):
            return base, tail
        # Ollama: "8b-instruct-q4_K_M", "8b-q8_0": the quant is the last dash-separated part(s)
        parts = tail.split("-")
        for i in range(1, len(parts)):
            cand = "-".join(parts[i:])
            if is_format(cand):
                return f"{base}:{'-'.join(parts[:i])}", cand
    return ref, None


_HF_FORMATS = {"bf16", "fp16", "fp32", "fp8", "int8", "int4", "awq", "gptq", "nf4", "mxfp4", "nvfp4", "w8a8",
               "w4a16"}


def resolve(ref: str, weight_format: str | None = None, default_format=None, tag_formats: bool = True) -> ModelSpec:
    """The ModelSpec for `ref`; `weight_format` (or a :QUANT suffix) sets the weight storage.

    default_format: for a model named without a format, a function of its config.json giving the format the
    engine would load (llama.cpp: a GGUF file type); the guess is labelled in the result.
    tag_formats: whether the GGUF an Ollama tag or GGUF repo name stands for is the format to take (engines that
    load GGUF files); otherwise the checkpoint as published is taken, and a label says so."""
    if not ref or not str(ref).strip():
        raise OomkitError("no model given")
    ref = str(ref).strip()
    path = Path(ref).expanduser()
    if path.exists():
        return _from_path(path, weight_format, default_format)
    name, suffix = split_quant(ref)
    fmt = weight_format or suffix

    entry = catalog.lookup(name) or (catalog.lookup(ref) if suffix else None)
    if entry is None:
        hint = catalog.suggest(name)
        more = f"; did you mean {', '.join(hint)}?" if hint else ""
        from . import hub  # lazy: the hub client (threads, HTTP) only for a name not in the catalog

        if hub.is_hf_id(ref):
            return hub.spec_from_hub(ref, weight_format, default_format, hint=more)
        if ref.lower().endswith((".gguf", ".json")) or "/" in ref and Path(ref).suffix:
            raise OomkitError(f"no such file: {ref}")
        raise OomkitError(f"unknown model {name!r}: not a file and not in the built-in catalog{more}")
    labels: tuple[str, ...] = ()
    tag_format = entry.default_format  # the GGUF an Ollama tag / GGUF repo name stands for
    if fmt is None and tag_format is not None:
        if tag_formats:
            fmt = tag_format
        else:
            labels = (f"{name} names a {tag_format} GGUF, which this engine does not load by default: taking the "
                      f"checkpoint as published ({entry.hf_id}); name a format with :QUANT or --quant",)
    if fmt is None and default_format is not None and not labels:
        fmt = default_format(entry.config)
        if fmt is not None:
            labels = (f"no quant given: assuming {fmt} weights (name one with :QUANT or --quant)",)
    spec = spec_from_config(entry.config, name=entry.name, source=f"catalog: {entry.hf_id} ({entry.source})",
                            weight_format=fmt)
    return replace(spec, labels=spec.labels + labels) if labels else spec


def _from_path(path: Path, weight_format: str | None, default_format=None) -> ModelSpec:
    if path.is_dir():
        ggufs = sorted(path.glob("*.gguf"))
        if (path / "config.json").exists():
            return _from_config_dir(path, weight_format, default_format)
        if len(ggufs) == 1:
            return _from_path(ggufs[0], weight_format)
        if ggufs:
            raise OomkitError(f"{path} holds {len(ggufs)} GGUF files: name one ({', '.join(p.name for p in ggufs[:4])})")
        raise OomkitError(f"{path}: no config.json and no .gguf file")
    if path.suffix.lower() == ".gguf" or _looks_like_gguf(path):
        from .gguf_file import read_gguf_spec  # lazy: only a local GGUF needs the header reader

        spec = read_gguf_spec(path)
        if weight_format and weight_format.lower() != spec.weights.format.lower():
            raise OomkitError(f"{path.name} is a {spec.weights.format} GGUF: its weights cannot be read as "
                              f"{weight_format}")
        return spec
    if path.name.endswith(".json"):
        return _from_config_dir(path, weight_format, default_format)
    raise OomkitError(f"{path}: not a .gguf file, a config.json or a model directory")


def _looks_like_gguf(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            return f.read(4) == b"GGUF"
    except OSError:
        return False


def _from_config_dir(path: Path, weight_format: str | None, default_format=None) -> ModelSpec:
    cfg = load_config(path)
    directory = path if path.is_dir() else path.parent
    name = directory.name if path.is_dir() or path.name == "config.json" else path.stem
    labels: tuple[str, ...] = ()
    if weight_format is None and default_format is not None:
        weight_format = default_format(cfg)
        if weight_format is not None:
            labels = (f"no quant given: assuming {weight_format} weights (name one with :QUANT or --quant)",)
    spec = spec_from_config(cfg, name=name, source=str(path), weight_format=weight_format)
    if labels:
        spec = replace(spec, labels=spec.labels + labels)
    if weight_format is None and path.is_dir():
        exact = _safetensors_weights(directory)
        if exact is not None:
            spec = replace(spec, weights=exact)
    return spec


def _safetensors_weights(directory: Path):
    """Exact bytes from the safetensors headers next to config.json, when they are there."""
    if not (any(directory.glob("*.safetensors")) or (directory / "model.safetensors.index.json").exists()):
        return None
    from .safetensors_weights import inventory_from_safetensors  # lazy: only a local checkpoint

    return inventory_from_safetensors(directory)
