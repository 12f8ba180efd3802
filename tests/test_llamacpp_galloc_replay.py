"""galloc.Replay, the one-buffer replay device_peak_by_kv re-runs at each context and host weight size: its peak
must be _replay's (the node-by-node mirror of ggml_gallocr_alloc_graph_impl, checked against llama.cpp's own reserve
offsets) at every size vector, including the sizes that change which node runs in place or allocates at all
(a zero-byte node, an in-place parent of another size). Differential: no engine figure is asserted here, only that
the two replays agree; the engine figures they give are pinned by the CUDA table and band (bench/band.py)."""

from __future__ import annotations

import random

import pytest

from oomkit.engines.llamacpp import galloc
from oomkit.engines.llamacpp.galloc import Node


def _graph(rng: random.Random, n_inputs: int, n: int) -> list[Node]:
    layouts = [("f32", 1), ("f32", 2), ("f16", 1), None]
    nodes: list[Node] = []
    for i in range(n):
        if i < n_inputs:
            nodes.append(Node(0, (), layout=rng.choice(layouts)))
            continue
        srcs = tuple(rng.sample(range(i), min(i, rng.randint(1, 3))))
        roots = [k for k in range(i) if nodes[k].view < 0]
        view = rng.choice(roots) if roots and rng.random() < 0.15 else -1
        nodes.append(Node(0, srcs, inplace=rng.random() < 0.5, view=view, output=rng.random() < 0.05,
                          layout=rng.choice(layouts), empty=rng.random() < 0.05))
    return nodes


def _sizes(rng: random.Random, n: int) -> list[int]:
    pool = [0, 32, 64, 100, 4096, 4100, 65536]  # few values: equal sizes (in place) and zeros (no bytes) are common
    return [rng.choice(pool) if rng.random() < 0.7 else rng.randint(0, 1 << 20) for _ in range(n)]


@pytest.mark.parametrize("seed", range(40))
def test_replay_equals_node_by_node(seed):
    rng = random.Random(seed)
    n_inputs = rng.randint(0, 5)
    nodes = _graph(rng, n_inputs, rng.randint(5, 120))
    replay = galloc.Replay(n_inputs, nodes)
    for _ in range(12):  # one Replay at many sizes: its kept walks are reused where the decisions repeat
        sizes = _sizes(rng, len(nodes))
        align = rng.choice([32, 128, 256])
        sized = tuple(x._replace(size=s) for x, s in zip(nodes, sizes, strict=True))
        assert replay.peak(sizes, align) == sum(galloc._replay(n_inputs, sized, None, True, align)[0])


def test_replay_keeps_one_walk_per_decisions():
    """Sizes that change no decision (every node keeps its bytes, every in-place pair its equality) share a walk."""
    nodes = [Node(0), Node(0, (0,), inplace=True, layout="a"), Node(0, (1,), inplace=True, layout="a"),
             Node(0, (2,), output=True, layout="b")]
    replay = galloc.Replay(1, [x._replace(layout="a" if not x.output else "b") for x in nodes])
    for k in (1, 2, 3):
        replay.peak([100 * k, 100 * k, 100 * k, 50 * k], 32)
    assert len(replay.programs) == 1
    replay.peak([100, 100, 200, 50], 32)  # node 2 no longer runs in place
    assert len(replay.programs) == 2


@pytest.mark.parametrize("seed", range(40, 60))
def test_peak_bytes_equals_node_by_node(seed):
    """peak_bytes (kept or not) takes the same two steps as Replay, once."""
    rng = random.Random(seed)
    n_inputs = rng.randint(0, 5)
    shape = _graph(rng, n_inputs, rng.randint(5, 120))
    nodes = [x._replace(size=s) for x, s in zip(shape, _sizes(rng, len(shape)), strict=True)]
    want = sum(galloc._replay(n_inputs, tuple(nodes), None, True, 256)[0])
    assert galloc.peak_bytes(n_inputs, nodes, 256) == galloc.peak_bytes(n_inputs, nodes, 256, kept=False) == want
