"""The knobs the planner may turn for Ollama: its server variables (docs/faq.md) OLLAMA_KV_CACHE_TYPE f16 | q8_0 |
q4_0 (quantized types need OLLAMA_FLASH_ATTENTION=1), OLLAMA_NUM_PARALLEL for the concurrency asked, and the
context (OLLAMA_CONTEXT_LENGTH / num_ctx). The weights are the tag's. Ollama splits layers between the GPU and the
CPU itself (llm/memory.go EstimateGPULayers), so the planner's second tier is its own split. Where that split does not
fit (its estimate is short of what the runner allocates), fit lowers num_gpu, the layers Ollama offloads
(fit_offload), as a user fixes it with a Modelfile's PARAMETER num_gpu."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from ...errors import OomkitError
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


def fit_offload(spec: ModelSpec, devices: tuple[Device, ...], settings: OllamaSettings
                ) -> tuple[str, tuple[int, ...]] | None:
    """num_gpu values for fit's second tier, most layers on the GPUs first: Ollama's own choice (-1), then one layer
    fewer than it at a time down to none.

    num_gpu is the layers Ollama offloads (api/types.go Options.NumGPU, -1: "set dynamically"). With -1 Ollama's
    scheduler picks the count itself (llm/server.go NewLlamaServer, v0.9.3: opts.NumGPU = estimate.Layers); an
    explicit N stops EstimateGPULayers at N layers (llm/memory.go: "Stop allocating on GPU(s) once we hit the users
    target NumGPU") and goes to the runner as --n-gpu-layers N as given, even where fewer fit, so the runner runs
    out of memory; the counts are searched from below Ollama's own one (its estimate here caps a larger N at it).
    A num_gpu the user set bounds them too. From v0.30 (era D) Ollama passes -ngl only for a num_gpu it is given
    (llama-server's --fit decides otherwise): every count from all the layers down."""
    from .layout import estimate  # lazy: layout reads this package's modules

    try:
        auto = estimate(spec, devices, replace(settings, num_gpu=-1)).settings.get("num_gpu", -1)
    except OomkitError:
        return None
    top = auto if isinstance(auto, int) and auto >= 0 else spec.n_trunk_layers + 2  # the output layer counts
    if settings.num_gpu >= 0:
        top = min(top, settings.num_gpu)
    return "num_gpu", (-1, *range(top - 1, -1, -1))
