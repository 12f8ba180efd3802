"""The device replays' reuse across a context search (sched_replay.device_peak_by_kv): a fit asks the same graph at
many contexts, and the answers must come from two lowerings per graph shape, equal to a lowering made afresh at each
context. Counts of lowerings, not wall time: a regression to one lowering per question (the Gemma 3 fit on an RTX
3060 made 1759 of them, ~170 s) shows here as a count."""

from __future__ import annotations

import pytest

import oomkit
from oomkit.engines.llamacpp import sched_replay
from oomkit.limits import largest_context
from tests.test_llamacpp_cuda_measured import _spec

CONTEXTS = (4096, 8192, 9000, 16384, 40000, 131072)


def _cuda0(spec, n_ctx: int, **kw) -> int:
    est = oomkit.estimate(spec, "llama.cpp", gpu="H200", backend="cuda", fit=False, find_max_context=False,
                          program="llama-cpp-python", repack=False, n_ctx=n_ctx, **kw)
    return next(b for k, b in est.engine_view["compute_buffer_bytes"].items() if k.endswith("0"))


@pytest.mark.parametrize("kw", [{}, {"flash_attn": "off"}, {"n_gpu_layers": 5, "flash_attn": "off"},
                                {"cache_type_k": "q8_0", "cache_type_v": "q8_0", "flash_attn": "on"}],
                         ids=["fa", "no-fa", "ngl5-no-fa", "q8_0"])
def test_gemma3_replay_reused_across_contexts(kw, monkeypatch):
    """Gemma 3's iSWA graph (compute.iswa_device_bytes): the base cache's cells follow the context, the SWA cache's
    stop at n_swa + n_ubatch; six contexts take at most three lowerings per setting (one while the SWA cells still
    grow, two once they are fixed) and give the answers of a lowering made afresh at each (the H200 CUDA0 figures
    of test_llamacpp_cuda_measured are the first lowering's)."""
    spec = _spec("gemma-3-12b", 12)
    sched_replay._LOWERED.clear()
    lowered = []
    real = sched_replay.device_nodes

    def counted(g, names=None):
        lowered.append(g)
        return real(g, names)

    monkeypatch.setattr(sched_replay, "device_nodes", counted)
    warm = [_cuda0(spec, c, **kw) for c in CONTEXTS]
    assert len(lowered) <= 3, len(lowered)  # was one a context (device_peak)
    monkeypatch.setattr(sched_replay, "device_nodes", real)
    cold = []
    for c in CONTEXTS:
        sched_replay._LOWERED.clear()
        cold.append(_cuda0(spec, c, **kw))
    assert warm == cold


def test_lowerings_kept_least_recently_used(monkeypatch):
    """The kept lowerings are bounded (keys and nodes): the least recently used goes first, one asked again stays."""
    monkeypatch.setattr(sched_replay, "_LOWERED_MAX", 2)
    sched_replay._LOWERED.clear()
    built = []

    def build_for(ngl):
        def build(n_kv):
            built.append(ngl)
            g = sched_replay.Graph()
            x = g.input((n_kv, 4))
            y = g.op("SCALE", x.ne, x)
            y.output = True
            g.expand(y)
            return g
        return build

    for key in ("a", "b", "a", "c"):  # "a" used again before "c": "b" is the one dropped
        sched_replay.device_peak_by_kv(key, build_for(key), 256, 128)
    assert list(sched_replay._LOWERED) == ["a", "c"]
    assert built == ["a", "b", "c"]


def test_refused_slack_is_bisected():
    """A context the engine refuses (slack -1: est.fits False) has no bytes to interpolate on: the search bisects
    it at once, one estimate per halving, and finds the same largest context."""
    calls = []

    def slack(n: int) -> int:
        calls.append(n)
        return (1 << 30) - n * 1000 if n <= 147_200 else -1

    assert largest_context(slack, 999_999_999) == 147_200
    assert len(calls) <= 26  # log2(3.9M steps) + 3 (was 32: a regula falsi step a step below hi per halving)
