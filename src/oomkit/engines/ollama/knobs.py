"""The knobs the planner may turn for Ollama: its server variables (docs/faq.md) OLLAMA_KV_CACHE_TYPE f16 | q8_0 |
q4_0 (quantized types need OLLAMA_FLASH_ATTENTION=1), OLLAMA_NUM_PARALLEL for the concurrency asked, and the
context (OLLAMA_CONTEXT_LENGTH / num_ctx). The weights are the tag's. Ollama splits layers between the GPU and the
CPU itself (llm/memory.go EstimateGPULayers), so the second tier is its own split: no knob to search."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from ...memory import Device
from ...model import catalog
from ...model.spec import ModelSpec
from ..base import Choice
from ..llamacpp.knobs import gguf_repo
from .settings import OllamaSettings

KV_TYPES = ("f16", "q8_0", "q4_0")


def ollama_ref(model: str, spec: ModelSpec) -> str:
    """The name `ollama run` takes for `model`: the tag as given, the catalog's Ollama tag of the model, else
    Ollama's `hf.co/{user}/{repo}:{quant}` form for unsloth's GGUF conversion (docs/huggingface.md)."""
    if ":" in model or model.lower().startswith(("hf.co/", "huggingface.co/")) or Path(model).expanduser().exists():
        return model
    entry = catalog.lookup(model)
    tags = [a for a in (entry.aliases if entry else ()) if ":" in a and "/" not in a]
    if tags:
        return tags[0]
    return f"hf.co/{gguf_repo(model)}:{spec.weights.format}"


def knobs(model: str, spec: ModelSpec, devices: tuple[Device, ...], base: OllamaSettings, *, concurrency: int = 1,
          fixed_format: bool = False, reserve_bytes: int = 0, nodes: int = 1) -> Iterator[Choice]:
    for kv in KV_TYPES:
        s = replace(base, kv_cache_type=kv, num_parallel=concurrency)
        if kv != "f16":
            s = replace(s, flash_attention="1")
        yield Choice(s, f"{spec.weights.format} weights, {kv} KV" + (", flash attention on" if kv != "f16" else ""),
                     model=ollama_ref(model, spec))
