"""A graph of the Ollama engine described tensor by tensor, the way its Go model code builds it with ggml, and
lowered to the node list of the one ggml-alloc replay (llamacpp/galloc.py) to size ggml_gallocr_reserve's buffer
for one backend: for graphs whose peak no closed form follows (best fit into freed holes).

Mirrors the ggml Ollama vendors (ml/backend/ggml/ggml/src, v0.12.4-v0.13.x): ggml.c ggml_build_forward_expand's
depth-first order (ggml_visit_parents: sources left to right, then the node; an op-less tensor is a leaf) and
ggml-alloc.c ggml_gallocr_alloc_graph_impl's view of it: the leafs placed first in leaf order ("allocate leafs"),
then the nodes in order; a view counted on the tensor it views. Tensors with data or a buffer of their own (weights,
the cache, ctx.Input() tensors left on the CPU, a view of any of them) are external: never placed, never reused
(ggml_gallocr_is_allocated). One chunk: the CPU and CUDA buffer types have no maximum size."""

from __future__ import annotations

from dataclasses import dataclass

from ..llamacpp.galloc import INPLACE_OPS, Node, peak_bytes


@dataclass(eq=False)
class T:
    """A tensor of the graph: op ("" for a leaf), its sources in ggml's order (None: an empty slot), its size in
    bytes and its layout (type and shape, for ggml_are_same_layout), the tensor it views, and whether it is
    external (a split input the scheduler copies into the buffer is a leaf that is not). Compared by identity, as
    ggml's graph hashes tensors by address; not frozen, as a replay builds thousands and nothing changes one."""
    op: str
    srcs: tuple = ()
    nbytes: int = 0
    layout: tuple = ()
    view_of: T | None = None
    external: bool = False


def view(src: T, *more: T) -> T:
    """A view (reshape, permute, view; set_rows's and cpy's results, views of their destination): no memory of its
    own; more: the op's other sources."""
    return T("view", (src, *more), src.nbytes, ("view", id(src)), view_of=src.view_of or src, external=src.external)


class Graph:
    """The node and leaf order ggml_build_forward_expand gives."""

    def __init__(self):
        self.nodes: list[T] = []
        self.leafs: list[T] = []
        self._seen: set[int] = set()

    def expand(self, *ts: T) -> None:
        for t in ts:
            self._visit(t)

    def _visit(self, t: T) -> None:
        if id(t) in self._seen:
            return
        self._seen.add(id(t))
        for s in t.srcs:
            if s is not None:
                self._visit(s)
        (self.leafs if not t.op else self.nodes).append(t)


def lower(graph: Graph) -> tuple[int, list[Node]]:
    """The graph as llamacpp/galloc.py reads it: the leafs ggml-alloc places (not external), then the nodes, each
    with its in-buffer sources by index. External tensors are left out, as they are never placed nor freed, but
    for a view of one that reads in-buffer tensors (set_rows, cpy into the cache): it counts among their readers
    and takes no memory."""
    at: dict[T, int] = {}  # by identity (eq=False), as ggml's hash set keys tensors by address
    out: list[Node] = []
    for leaf in graph.leafs:
        if not leaf.external:
            at[leaf] = len(out)
            out.append(Node(leaf.nbytes, (), False, -1, False, leaf.layout))
    n_leafs = len(out)
    for t in graph.nodes:
        srcs = tuple([at[s] for s in t.srcs if s in at])
        if t.external:
            if srcs:
                at[t] = len(out)
                out.append(Node(0, srcs))
            continue
        at[t] = len(out)
        out.append(Node(t.nbytes, srcs, t.op in INPLACE_OPS, -1 if t.view_of is None else at[t.view_of], False,
                        t.layout))
    return n_leafs, out


def reserve(graph: Graph, alignment: int) -> int:
    """The buffer ggml_gallocr_reserve sizes for this graph on one backend with this alignment."""
    return peak_bytes(*lower(graph), align=alignment)
