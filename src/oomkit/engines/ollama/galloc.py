"""ggml-alloc's graph allocator replayed on a graph described in Python: the buffer size ggml_gallocr_reserve
reaches for one backend, for graphs whose peak no closed form follows (best fit into freed holes).

Mirrors the ggml Ollama vendors (ml/backend/ggml/ggml/src/ggml-alloc.c, v0.12.4-v0.13.x): ggml_build_forward_expand's
depth-first order (ggml_visit_parents: sources left to right, then the node; an op-less tensor is a leaf),
ggml_gallocr_alloc_graph_impl (views counted on their source, inputs placed before the first node in node order,
a node takes its parent's memory in place when ggml_op_can_inplace, the parent is its own, has one reader, no
views and the same layout; a parent is freed after its last reader) and ggml_dyn_tallocr (best fit among the free
blocks but the last, else the last; freed blocks merge with their neighbours; sizes padded to the alignment).
One chunk only: the CPU and CUDA buffer types have no maximum size. Tensors with data of their own (weights, the
cache, a view of them) are external: never placed, never reused."""

from __future__ import annotations

from dataclasses import dataclass, field

# ggml-alloc.c ggml_op_can_inplace
INPLACE_OPS = frozenset({"fill", "scale", "diag_mask_zero", "diag_mask_inf", "add", "add_id", "add1", "sub", "mul",
                         "div", "sqr", "sqrt", "log", "unary", "rope", "rope_back", "silu_back", "rms_norm",
                         "rms_norm_back", "soft_max", "soft_max_back"})


@dataclass(eq=False)
class T:
    """A tensor of the graph: op ("" for a leaf), its sources in ggml's order, its size in bytes and its layout
    (type and shape, for ggml_are_same_layout), the tensor it views, and whether it is a split input or external."""
    op: str
    srcs: tuple = ()
    nbytes: int = 0
    layout: tuple = ()
    view_of: T | None = None
    external: bool = False
    is_input: bool = False
    # allocator state
    n_children: int = field(default=0, repr=False)
    n_views: int = field(default=0, repr=False)
    allocated: bool = field(default=False, repr=False)
    addr: int = field(default=-1, repr=False)


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


class _Dyn:
    """ggml_dyn_tallocr with one chunk: free blocks sorted by offset, the last one the endless tail."""

    def __init__(self, alignment: int):
        self.align = alignment
        self.blocks: list[list[int]] = [[0, 1 << 62]]
        self.max_size = 0

    def _pad(self, n: int) -> int:
        return (n + self.align - 1) // self.align * self.align

    def alloc(self, size: int) -> int:
        size = self._pad(size)
        best, best_size = -1, None
        for i, (_, bsize) in enumerate(self.blocks[:-1]):
            if bsize >= size and (best_size is None or bsize <= best_size):
                best, best_size = i, bsize
        if best == -1:
            best = len(self.blocks) - 1
        block = self.blocks[best]
        addr = block[0]
        block[0] += size
        block[1] -= size
        if block[1] == 0:
            del self.blocks[best]
        self.max_size = max(self.max_size, addr + size)
        return addr

    def free(self, addr: int, size: int) -> None:
        size = self._pad(size)
        b = self.blocks
        for i, block in enumerate(b):
            if block[0] + block[1] == addr:
                block[1] += size
                if i < len(b) - 1 and block[0] + block[1] == b[i + 1][0]:
                    block[1] += b[i + 1][1]
                    del b[i + 1]
                return
            if addr + size == block[0]:
                block[0] = addr
                block[1] += size
                if i > 0 and b[i - 1][0] + b[i - 1][1] == block[0]:
                    b[i - 1][1] += block[1]
                    del b[i]
                return
        pos = next((i for i, block in enumerate(b) if block[0] >= addr), len(b))
        b.insert(pos, [addr, size])


def reserve(graph: Graph, alignment: int) -> int:
    """The buffer ggml_gallocr_reserve sizes for this graph on one backend with this alignment."""
    dyn = _Dyn(alignment)

    def placed(t: T) -> bool:
        return t.external or t.allocated

    def allocate(t: T) -> None:
        if placed(t) or t.view_of is not None:
            return
        t.allocated = True
        if t.op in INPLACE_OPS:
            # a view is never its allocator's own (allocate_node skips views), so only a plain parent is taken over
            for p in t.srcs:
                if p is not None and p.allocated and p.layout == t.layout and p.n_children == 1 and p.n_views == 0:
                    t.addr, p.allocated = p.addr, False
                    return
        t.addr = dyn.alloc(t.nbytes)

    def free(t: T) -> None:
        dyn.free(t.addr, t.nbytes)

    for n in graph.nodes:
        if n.view_of is not None:
            n.view_of.n_views += 1
        if n.is_input:
            allocate(n)
        for s in n.srcs:
            if s is None:
                continue
            s.n_children += 1
            if s.is_input:
                allocate(s)
    for n in graph.nodes:
        for p in n.srcs:
            if p is not None:
                allocate(p)
        allocate(n)
        for p in n.srcs:
            if p is None:
                continue
            p.n_children -= 1
            if p.n_children == 0 and p.n_views == 0:
                if p.view_of is not None:
                    src = p.view_of
                    src.n_views -= 1
                    if src.n_views == 0 and src.n_children == 0 and src.allocated:
                        free(src)
                elif p.allocated:
                    free(p)
    return dyn.max_size

