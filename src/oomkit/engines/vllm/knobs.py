"""The knobs the planner may turn for vLLM, by vLLM's own options (vllm/engine/arg_utils.py EngineArgs):
the checkpoint and its quantized repos or `--quantization fp8`, `--kv-cache-dtype auto|fp8`, `--max-num-seqs` for
the concurrency asked, `-tp` over the GPUs of one machine (and `-pp` across machines), `--gpu-memory-utilization`
lowered to what other programs leave free (vLLM refuses to start when free memory is below total x utilization:
v1/worker/gpu_worker.py init_device), and, for the second tier, `--cpu-offload-gb` (GiB of weights per GPU kept in
host memory and streamed in for each forward pass)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from ...memory import Device
from ...model.spec import ModelSpec
from .._hf_knobs import hf_weight_choices
from ..base import Choice
from .settings import VllmSettings

KV_TYPES = ("auto", "fp8")
OFFLOAD_GB = (0, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256)


def utilization_for(devices: tuple[Device, ...], reserve_bytes: int) -> float | None:
    """The largest --gpu-memory-utilization (two decimals, as people type it) that other programs' memory leaves."""
    sizes = [d.memory_bytes for d in devices if d.memory_bytes]
    if not reserve_bytes or not sizes:
        return None
    return math.floor((min(sizes) - reserve_bytes) / min(sizes) * 100) / 100


def knobs(model: str, spec: ModelSpec, devices: tuple[Device, ...], base: VllmSettings, *, concurrency: int = 1,
          fixed_format: bool = False, reserve_bytes: int = 0, nodes: int = 1) -> Iterator[Choice]:
    n = max(len(devices), 1)
    per_node = n // nodes if nodes > 1 else n
    parallel = dict(tensor_parallel_size=per_node, pipeline_parallel_size=nodes) if n > 1 else {}
    util = utilization_for(devices, reserve_bytes)
    for arg, quantization, wlabel in hf_weight_choices(model, spec, fixed_format):
        for kv in KV_TYPES:
            s = replace(base, kv_cache_dtype=kv, **parallel)
            if quantization:
                s = replace(s, quantization=quantization)
            if concurrency > 1:
                s = replace(s, max_num_seqs=concurrency)
            if util is not None and (base.gpu_memory_utilization is None or base.gpu_memory_utilization > util):
                s = replace(s, gpu_memory_utilization=util)
            label = f"{wlabel}, {'fp8' if kv == 'fp8' else 'model-dtype'} KV"
            yield Choice(s, label, model=arg, weight_format=quantization, offload=("cpu_offload_gb", OFFLOAD_GB))


def relief(s: VllmSettings) -> Iterator[tuple[str, Any, str]]:
    """Moves that cost no context: without CUDA graphs vLLM keeps no graph memory (--enforce-eager; from 0.21 the
    estimate is taken from the KV budget: gpu_worker.py); fewer concurrent sequences shrink the sampler and
    activation profile (--max-num-seqs); a utilization up to 0.95 gives the KV cache more of the GPU. In
    that order: the first costs least."""
    if s.gpu_memory_utilization is None or s.gpu_memory_utilization < 0.95:
        yield "gpu_memory_utilization", 0.95, "vLLM may use 95 % of the GPU (nothing else runs on it)"
    if s.max_num_seqs is None or s.max_num_seqs > 32:
        yield "max_num_seqs", 32, "fewer concurrent sequences: a smaller sampler and activation profile"
    if not s.enforce_eager:
        yield "enforce_eager", True, "no CUDA graphs: their memory goes to the KV cache (slower decode)"
