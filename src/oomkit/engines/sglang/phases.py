"""SGLang's start-up, phase by phase, on one GPU, and the lines it prints for each (model_executor/model_runner.py
load_model / init_memory_pool, cuda_graph_runner.py CudaGraphRunner, managers/scheduler.py).

mem_fraction_static is a fraction of the memory free before the weights ("Load weight begin. avail mem"): the
weights and the KV (and state) pool live inside it; the req_to_token table, CUDA-graph capture and the run-time
activations (one --chunked-prefill-size chunk) come out of the (1 - mem_fraction_static) rest. The CUDA context
and the distributed init are in use before the first measurement (outside). SGLang prints "GB" for GiB.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...units import GiB, MiB
from ..versions import Version
from .settings import SGLangSettings

# CUDA-graph capture ("Capture cuda graph end. ... mem usage=X GB"), labelled estimate fitted on two logs:
# sglang#11830 (B200, 52 sizes to bs 512: 1.44 GB; tests/fixtures/engine_logs/sglang/unnamed-qwen2-7b-b200-capture-pr11830.json)
# and QwQ-32B on 4x L4 TP4 (sizes to 80: 0.93 GB); a fixed part
# (custom all-reduce / graph buffers) and a part per captured batch size.
CG_BASE = int(0.84 * GiB)
CG_PER_BS = int(1.2 * MiB)


def capture_bs(max_bs: int, v: Version) -> tuple[int, ...]:
    """cuda_graph_runner.py get_batch_sizes_to_capture: 1, 2, 4, 8, (12 from 0.5,) steps of 8 to 256, then 16."""
    if v < (0, 5, 0):
        sizes = [1, 2, 4] + list(range(8, 257, 8)) + list(range(272, max_bs + 1, 16))
    else:
        sizes = [1, 2, 4, 8, 12] + list(range(16, 257, 8)) + list(range(272, max_bs + 1, 16))
    return tuple(x for x in sizes if x <= max_bs)


def cuda_graph_bytes(max_bs: int, s: SGLangSettings, v: Version) -> int:
    if s.disable_cuda_graph or max_bs <= 0:
        return 0
    return CG_BASE + CG_PER_BS * max(capture_bs(max_bs, v))


@dataclass(frozen=True)
class Phase:
    name: str
    bytes: int
    in_budget: bool  # inside mem_fraction_static
    free_after: int | None

    def to_dict(self) -> dict:
        return {"phase": self.name, "bytes": self.bytes, "in_budget": self.in_budget,
                "free_after_bytes": self.free_after}


def startup_phases(total: int | None, overhead: int, weights: int, pool: int, req_to_token: int, cuda_graphs: int
                   ) -> tuple[Phase, ...]:
    steps = [("CUDA context and distributed init", overhead, False), ("weights", weights, True),
             ("KV cache pool", pool, True), ("req_to_token pool", req_to_token, False),
             ("CUDA graph capture", cuda_graphs, False)]
    out, free = [], total
    for name, n, inside in steps:
        free = None if free is None else free - n
        out.append(Phase(name, n, inside, free))
    return tuple(out)


def gb(n: int | float) -> str:
    """SGLang's "%.2f GB" of bytes / 2**30."""
    return f"{n / GiB:.2f}"
