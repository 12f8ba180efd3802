"""The knobs the planner may turn for SGLang, by SGLang's own options (python/sglang/srt/server_args.py): the
checkpoint and its quantized repos or `--quantization fp8`, `--kv-cache-dtype auto|fp8_e4m3`,
`--max-running-requests` for the concurrency asked, `--tp` over the GPUs (`--nnodes` across machines), and
`--mem-fraction-static` lowered by what other programs hold. SGLang has no CPU weight offload for planning."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from ...memory import Device
from ...model.spec import ModelSpec
from .._hf_knobs import hf_weight_choices
from ..base import Choice
from .settings import SGLangSettings

KV_TYPES = ("auto", "fp8_e4m3")


def knobs(model: str, spec: ModelSpec, devices: tuple[Device, ...], base: SGLangSettings, *, concurrency: int = 1,
          fixed_format: bool = False, reserve_bytes: int = 0, nodes: int = 1) -> Iterator[Choice]:
    n = max(len(devices), 1)
    for arg, quantization, wlabel in hf_weight_choices(model, spec, fixed_format):
        for kv in KV_TYPES:
            s = replace(base, kv_cache_dtype=kv, tp_size=n if n > 1 else base.tp_size)
            if nodes > 1 and n % nodes == 0:
                s = replace(s, nnodes=nodes)  # --tp spans the machines: the command names how many
            if quantization:
                s = replace(s, quantization=quantization)
            if concurrency > 1:
                s = replace(s, max_running_requests=concurrency)
            yield Choice(s, f"{wlabel}, {'fp8' if kv != 'auto' else 'model-dtype'} KV", model=arg, weight_format=quantization)


def relief(s: SGLangSettings, effective: dict[str, Any] | None = None) -> Iterator[tuple[str, Any, str]]:
    """Moves that cost no context: without CUDA graphs SGLang reserves no graph memory (--disable-cuda-graph,
    model_runner.py), and a larger static fraction gives the token pool more of the GPU."""
    if not s.disable_cuda_graph:
        yield "disable_cuda_graph", True, "no CUDA graphs: their memory goes to the KV pool (slower decode)"
    if s.mem_fraction_static is None or s.mem_fraction_static < 0.9:
        yield "mem_fraction_static", 0.9, "SGLang may take 90 % of the GPU for weights and KV pool"
