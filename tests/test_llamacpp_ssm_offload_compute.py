"""Mamba-2's pp graph scheduled and replayed for one ggml-cuda device (sched_replay.mamba2_graph: src/models/mamba.cpp
and mamba-base.cpp build_mamba2_layer, src/llama-graph.cpp build_rs at llama.cpp@0c1e57098, through
ggml_backend_sched_split_graph's passes and ggml-alloc), against llama.cpp's own CUDA0 compute buffers for the
mamba2-2.7b 4-layer synthetic file on the H200 (tests/fixtures/llamacpp_cuda/h200_run1.json and the held-out
h200_run2_heldout.json; nothing fitted): fully offloaded 108.22 MiB (-ub 512) and 432.88 (-ub 2048), -ngl 4 113.28,
-ngl 2 164.37, held out -ngl 1 103.22 and -ngl 3 119.43, each to the 0.01 MiB, and the graph's node and split
counts as sched_reserve prints them (208 nodes; 2 splits fully offloaded, 18 with -nkvo).

-nkvo (the conv and SSM states in the CPU's RS buffer, llama_memory_recurrent with offload false): the stores and the
state gathers run on the host, the scan on the device reading the host's state copied in; 115.72 MiB measured, 115.72
replayed (171.78 while galloc inserted a freed block by bisection: its free list leaves address order once a block grows
over an empty one, and ggml_dyn_tallocr_insert_block scans it from the start; the closed forms gave 108.22, 0.935)."""

import pytest

from oomkit.engines.llamacpp import sched_replay as sr
from oomkit.engines.llamacpp.compute import CUDA_ALIGN
from oomkit.engines.llamacpp.weights import gpu_alloc_size
from tests import test_llamacpp_cuda_measured as t

MiB = 1 << 20


def _rows(nkvo: bool):
    return [p for p in t.ROWS if p.values[0]["key"] == "mamba2-2.7b" and p.values[0]["n_layers"] == 4
            and p.values[0]["settings"]["n_seq_max"] == 1 and (p.values[0]["settings"].get("offload_kqv") is False) == nkvo]


def _replayed(r) -> float:
    s = r["settings"]
    spec = t._spec(r["key"], r["n_layers"])
    n = len(spec.trunk_layers)
    T = min(s["n_ctx"], s["n_ubatch"])
    # llama_model::load_tensors: the first n_layer + 1 - n_gpu_layers repeating layers stay on the CPU
    host_layers = set(range(max(0, n + 1 - s["n_gpu_layers"])))
    host = {w.name: gpu_alloc_size(w) for w in spec.weights.tensors
            if w.name.startswith("blk.") and int(w.name.split(".")[1]) in host_layers}
    g = sr.mamba2_graph(spec, T, T, host, host_layers, s.get("offload_kqv") is False)
    return sr.device_peak(g, CUDA_ALIGN) / MiB


def test_rows_covered():
    assert len(_rows(False)) == 12 and len(_rows(True)) == 1


@pytest.mark.parametrize("r", _rows(False))
def test_cuda0_equals_llama_cpp(r):
    assert _replayed(r) == pytest.approx(t.measured(r)["compute_buffer_mib"]["CUDA0"], abs=0.01)


@pytest.mark.parametrize("nkvo,splits", [(False, 2), (True, 18)])
def test_nodes_and_splits_as_sched_reserve_prints(nkvo, splits):
    # h200_run1.json, the -ngl 99 c4096 rows: "sched_reserve: graph: nodes = 208, splits = 2" / "splits = 18" (-nkvo)
    spec = t._spec("mamba2-2.7b", 4)
    g = sr.mamba2_graph(spec, 512, 512, {}, set(), nkvo)
    assert len(g.nodes) == 208
    assert len(sr.split_graph(g)[0]) == splits


@pytest.mark.parametrize("r", _rows(True))
def test_nkvo_cuda0(r):
    assert _replayed(r) == pytest.approx(t.measured(r)["compute_buffer_mib"]["CUDA0"], abs=0.01)


@pytest.mark.parametrize("r", _rows(True))
def test_nkvo_estimate_is_the_replay(r):
    # compute.mamba2_offload_device_bytes hands -nkvo to sched_replay.mamba2_graph (with host_caches)
    got = {k: round(b / MiB, 2) for k, b in t.oomkit_view(r)["compute_buffer_bytes"].items() if b}
    assert got == t.measured(r)["compute_buffer_mib"] == {"CUDA0": 115.72, "CUDA_Host": 15.56}
