"""The memo of the graphs replayed through ggml-alloc (compute._replayed) is keyed by what compute_graphs' builders read
of a spec (compute._graph_shapes: the architecture, n_embd, n_vocab, the trunk layers and the tensors' names and
shapes), so that the weight formats of one model share their replays. These tests hold the builders to that: they
read no other attribute of the spec nor of its tensors, and a memoised peak is the one built and replayed afresh."""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path

from oomkit.engines.base import get_engine
from oomkit.engines.llamacpp import compute, compute_graphs, galloc
from oomkit.request import resolve_model

GRAPHS = Path(compute_graphs.__file__)
# the spec attributes the builders read (spec.weights only for its tensors), as compute._graph_shapes keys them
SPEC_READ = {"architecture", "n_embd", "n_vocab", "trunk_layers", "weights"}
# TensorSpec's fields other than name and shape: a builder reading one of these would differ between weight formats
TENSOR_UNREAD = {"dtype", "nbytes", "layer", "offset", "file"}


def _attributes() -> list[tuple[str, str]]:
    """(the object's name, the attribute) of every attribute read `name.attr` in compute_graphs.py."""
    tree = ast.parse(GRAPHS.read_text(encoding="utf-8"))
    return [(n.value.id, n.attr) for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)]


def test_builders_read_only_the_graph_shapes():
    reads = _attributes()
    why = "a builder reads more of the spec than compute._graph_shapes keys its replays by: add it there"
    assert {attr for name, attr in reads if name == "spec"} <= SPEC_READ, why
    assert not {attr for _, attr in reads} & TENSOR_UNREAD, why
    weights = [n for n in ast.walk(ast.parse(GRAPHS.read_text(encoding="utf-8")))
               if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Attribute) and n.value.attr == "weights"]
    assert {n.attr for n in weights} == {"tensors"}, why


def test_weight_formats_share_a_replay_and_it_is_the_fresh_one():
    eng = get_engine("llama.cpp")
    q4, q8 = (resolve_model(eng, "qwen3:30b-a3b", q) for q in ("Q4_K_M", "Q8_0"))
    assert q4.weights.tensors != q8.weights.tensors
    assert compute._graph_shapes(q4) == compute._graph_shapes(q8)
    args = (512, 512, 4096 * 512 * 2, 0, 0, True, 0)
    fresh = galloc.peak_bytes(*compute_graphs.moe_device_graph(q8, *args), compute.CUDA_ALIGN)
    assert compute._replayed(compute_graphs.moe_device_graph, q4, *args, align=compute.CUDA_ALIGN) == fresh
    assert compute._replayed(compute_graphs.moe_device_graph, q8, *args, align=compute.CUDA_ALIGN) == fresh
    # a different argument, a different graph: not the kept peak
    wider = (2048, 2048, 4096 * 2048 * 2, 0, 0, True, 0)
    assert compute._replayed(compute_graphs.moe_device_graph, q4, *wider, align=compute.CUDA_ALIGN) \
        == galloc.peak_bytes(*compute_graphs.moe_device_graph(q4, *wider), compute.CUDA_ALIGN) != fresh
    # the host weights' copies (a dict, by its items): the sizes differ between formats, so do the keys
    host = {t.name: t.nbytes for t in q4.weights.tensors if t.layer == 0}
    host_kv = {0: (1 << 20, 1 << 20)}
    for spec in (q4, replace(q4, weights=replace(q4.weights, tensors=q8.weights.tensors))):
        sizes = {n: next(t.nbytes for t in spec.weights.tensors if t.name == n) for n in host}
        assert compute._replayed(compute_graphs.moe_device_graph, spec, *args, sizes, host_kv,
                                 align=compute.CUDA_ALIGN) \
            == galloc.peak_bytes(*compute_graphs.moe_device_graph(spec, *args, sizes, host_kv), compute.CUDA_ALIGN)
