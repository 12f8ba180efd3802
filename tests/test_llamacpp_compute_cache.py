"""The compute-buffer simulation's memos (sched_replay's kept lowerings and answers, compute's replayed peaks and
phases, the per-object tables of oomkit.memo.ByObject and the functools caches of the llama.cpp engine's modules)
change no figure: every estimate of a grid (models of the dense, MoE, sliding-window, gpt-oss and hybrid graphs;
three contexts, two ubatch sizes, flash attention on and off, -ngl from none to all on one RTX 4090) made with every
memo emptied before it is equal, figure for figure (MemoryEstimate.to_dict), to the same estimate made with the
memos warm from the whole grid, in another order. The figures themselves are held to llama.cpp's by the accuracy
tests (tests/test_llamacpp_cuda_measured.py, bench/accuracy_llamacpp_cuda.py); this holds the memos to the
computation they stand for."""

from __future__ import annotations

import functools
import importlib
import pkgutil

import oomkit
from oomkit.engines import llamacpp
from oomkit.engines.base import get_engine
from oomkit.engines.llamacpp import compute, sched_replay
from oomkit.memo import ByObject
from oomkit.request import resolve_model

MODELS = ("llama3.1:8b", "qwen3:8b", "qwen3:30b-a3b", "gemma3:12b", "gpt-oss:20b", "qwen3.5:27b")
CONTEXTS = (4096, 16384, 40960)
UBATCHES = (512, 1024)
FLASH = ("on", "off")
NGL = (0, 8, 20, 999)


def _clear_memos() -> None:
    """Empties every memo of the llama.cpp engine's modules (a fresh process's state, less the parsed catalog)."""
    for info in pkgutil.iter_modules(llamacpp.__path__):
        mod = importlib.import_module(f"{llamacpp.__name__}.{info.name}")
        for value in vars(mod).values():
            if isinstance(value, ByObject):
                value._table.clear()
            elif isinstance(value, functools._lru_cache_wrapper) and value.__module__ == mod.__name__:
                value.cache_clear()
    sched_replay._LOWERED.clear()
    sched_replay._SIZES.clear()


@functools.cache
def _spec(model: str):
    """One spec object per model, so that the memos keyed by the spec's identity (compute_by_device's) answer too."""
    return resolve_model(get_engine("llama.cpp"), model)


def _figures(model: str, n_ctx: int, ub: int, fa: str, ngl: int | None, fit: bool = False) -> dict:
    ngl_kw = {} if ngl is None else {"n_gpu_layers": ngl}
    return oomkit.estimate(_spec(model), "llama.cpp", gpu="RTX 4090", n_ctx=n_ctx, n_ubatch=ub,
                           n_batch=max(ub, 2048), flash_attn=fa, find_max_context=False, fit=fit, **ngl_kw).to_dict()


GRID = [(m, c, ub, fa, ngl) for m in MODELS for c in CONTEXTS for ub in UBATCHES for fa in FLASH for ngl in NGL]


def test_memos_change_no_figure():
    cold = {}
    lowered, peaks = sched_replay._LOWERED_COUNT[0], 0
    for case in GRID:
        _clear_memos()
        cold[case] = _figures(*case)
        peaks += compute._peak.cache_info().misses
    # the grid reaches the replays the memos keep: the scheduler's lowerings and compute_graphs' peaks
    assert sched_replay._LOWERED_COUNT[0] - lowered >= 50
    assert peaks >= 20
    _clear_memos()
    # warm: each model's settings visited contexts first, then again in reverse (every answer a kept one)
    for order in (sorted(GRID, key=lambda c: (c[0], c[4], c[3], c[2], c[1])), GRID[::-1]):
        for case in order:
            assert _figures(*case) == cold[case], case
    # the compute buffers differ over the grid (the memos are not answering one setting for another)
    distinct = {tuple(d["compute_bytes"] for d in f["devices"]) for f in cold.values()}
    assert len(distinct) > len(GRID) // 4


# --fit (llama.cpp's default): its dry runs and the estimate of the layout it settles on ask compute_by_device the
# same questions (a memo hit within one estimate)
FIT_GRID = [(m, c, 512, fa, None, True) for m in ("llama3.3:70b", "qwen3:30b-a3b", "gemma3:27b")
            for c in (8192, 65536) for fa in FLASH]


def test_memos_change_no_figure_under_fit():
    cold = {}
    for case in FIT_GRID:
        _clear_memos()
        cold[case] = _figures(*case)
    _clear_memos()
    hits = compute._BY_DEVICE._table
    for order in (FIT_GRID, FIT_GRID[::-1]):
        for case in order:
            assert _figures(*case) == cold[case], case
    assert hits  # the answers were kept
