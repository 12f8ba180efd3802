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
    """Moves that cost no context, the cheapest first. A larger static fraction gives the token pool more of the
    GPU. The phases after the pool (CUDA graph capture, --enable-symm-mem's pool) get their room in the order
    SGLang's own capture failure lists (cuda_graph_runner.py CudaGraphRunner.__init__, 0.4-0.5: "1. set
    --mem-fraction-static to a smaller value ... 2. set --cuda-graph-max-bs to a smaller value (e.g., 16) ... 4.
    disable CUDA graph by --disable-cuda-graph. (Not recommended. Huge performance loss)"): a fraction a little
    lower, fewer captured batch sizes (halved from the one in force: server_args.py's default for the GPU), and no
    CUDA graphs last."""
    effective = effective or {}
    mfs = s.mem_fraction_static
    if mfs is None or mfs < 0.9:
        yield "mem_fraction_static", 0.9, "SGLang may take 90 % of the GPU for weights and KV pool"
    in_force = mfs if mfs is not None else effective.get("mem_fraction_static")
    for lower in (0.01, 0.02, 0.03, 0.05):
        if isinstance(in_force, float) and in_force - lower >= 0.5:
            yield ("mem_fraction_static", round(in_force - lower, 2),
                   "a little less of the GPU for the KV pool leaves the CUDA graphs and the phases SGLang allocates "
                   "after the pool the room they need")
    if not s.disable_cuda_graph:
        bs = s.cuda_graph_max_bs or effective.get("cuda_graph_max_bs")
        n = bs // 2 if isinstance(bs, int) and bs > 16 else 0
        while n >= 16:
            yield "cuda_graph_max_bs", n, "CUDA graphs for fewer batch sizes: less graph memory (larger batches run " \
                                          "without a graph)"
            n //= 2
        yield "disable_cuda_graph", True, "no CUDA graphs: their memory goes to the KV pool (much slower decode)"
