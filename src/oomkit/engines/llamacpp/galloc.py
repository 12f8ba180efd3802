"""ggml-alloc replayed on a graph modelled tensor by tensor: where the closed-form phases of compute.py cannot say
which free block a tensor lands in (the placement of a graph's last layer turns on the size of every hole below it),
the worst-case graph is rebuilt node by node and allocated the way ggml_gallocr_alloc_graph_impl does.

Mirrors ggml/src/ggml-alloc.c at llama.cpp@0c1e57098 (the build llama-cpp-python 0.3.36 vendors):
- ggml_dyn_tallocr_alloc: the best-fitting free block (the smallest that fits, the later one on a tie) among all but
  the last; the last block (the free tail) only when none fits; sizes padded to the buffer's alignment (32 bytes on
  the CPU);
- ggml_dyn_tallocr_free_bytes: a freed range merges with the free block ending where it starts or starting where it
  ends (and that one with its next / previous neighbour), else it is inserted in address order;
- ggml_gallocr_alloc_graph_impl: the graph's leafs first, in leaf order ("allocate leafs"), then the nodes in order;
- ggml_gallocr_allocate_node: a node whose op may run in place (ggml_op_can_inplace, INPLACE_OPS) takes the block of
  the first parent, in source order, of the same layout (ggml_are_same_layout) that has no other consumer left, is
  not a view, not an output and owned by the allocator (ggml_gallocr_is_own); views take none (they count on their
  source: a source is freed once its last view's consumers and its own are done);
- outputs are never freed;
- a tensor of no bytes in the buffer (Node.empty: a recurrent layer's GET_ROWS of the extra states when there are
  none, n_rs - n_seqs = 0, and the device's copy of their empty ids view) is allocated and freed all the same
  (ggml_gallocr_allocate_node asks ggml_dyn_tallocr_alloc for its 0 bytes: the best-fitting block besides the last,
  the smallest, any fits; an empty block taken is removed); freed where it touches no free block,
  ggml_dyn_tallocr_free_bytes inserts its empty range as a free block of its own, and ranges freed later on either
  side of it no longer merge across it (only list neighbours merge), so the free space above can stay split from
  the tail.
Checked against the offsets of every node in llama.cpp's own reserve (dumped from ggml_gallocr_reserve_n; equal to
the byte on the hy_v3 file at 16K and 24K with a q8_0 cache).

The one allocator for both engines: the Ollama engine describes its Go graphs tensor by tensor (ollama/galloc.py)
and lowers them to this node list. The ggml-alloc.c Ollama vendors (ml/backend/ggml/ggml/src, v0.12.4-v0.13.5) and
llama.cpp's (ggml/src, as of fa9704152, 2026-05-21) run the same algorithm where this replay looks: the same best
fit (ties to the later block), merging, leaf order, in-place and freeing rules. What differs by version is a
parameter here: the chunk choice (prefer_reuse: PR #16788, Ollama v0.13.2 on), the buffer type's alignment (align),
and ggml_op_can_inplace's FILL (ggml PR #17870, llama.cpp 86a3f0fad, Ollama v0.13.3 on; no graph replayed here has
one). The rest of their diff leaves the replay alone: ggml_gallocr_free_extra_space (Ollama
v0.13.0 on; padded to the alignment from llama.cpp PR #17884) frees a parent's tail only under an in-place node
smaller than its parent, which a node of the same layout never is; llama.cpp's ggml_gallocr_is_allocated also
skips a tensor with a buffer and no data yet (external here either way); the bounds fix in
ggml_dyn_tallocr_remove_block changes no placement.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from functools import lru_cache
from operator import eq
from typing import NamedTuple

ALIGN = 32  # the CPU buffer type's alignment (ggml-backend.cpp TENSOR_ALIGNMENT)

# ggml-alloc.c ggml_op_can_inplace, by the lower-case name of the GGML_OP_ (FILL: ggml PR #17870, Ollama v0.13.3 on;
# CLAMP: listed there at llama.cpp@0c1e57098, where ggml.c ggml_clamp makes a new tensor (ggml_dup_tensor) since
# llama.cpp PR #27644, 2026-08-24; before it ggml_clamp returned ggml_view_tensor of its source, which takes no
# memory either, so the op never needs a block of its own where its source has no other consumer)
INPLACE_OPS = frozenset({"fill", "scale", "diag_mask_zero", "diag_mask_inf", "add", "add_id", "add1", "sub", "mul",
                         "div", "sqr", "sqrt", "log", "unary", "rope", "rope_back", "silu_back", "rms_norm",
                         "rms_norm_back", "clamp", "soft_max", "soft_max_back"})


class Node(NamedTuple):
    """One tensor of the modelled graph: its bytes (0: not in this buffer, as a write into the KV cache), the nodes it
    reads (indices into the list), whether its op may run in place, the node it is a view of (-1: none), whether
    it is a graph output (never freed), its layout for ggml_are_same_layout (type, shape, strides; None: equal
    sizes stand for equal layouts), and whether a node of size 0 is a tensor of no bytes in this buffer (empty: it
    is allocated and freed as ggml-alloc does, see the module's note) rather than one outside it. A NamedTuple: the
    Ollama replays make thousands per graph, and a frozen dataclass costs twice as much to build."""

    size: int
    srcs: tuple[int, ...] = ()
    inplace: bool = False
    view: int = -1
    output: bool = False
    layout: Hashable | None = None
    empty: bool = False


MAX_CHUNKS = 16  # ggml-alloc.c GGML_VBUFFER_MAX_CHUNKS (llama.cpp PR #15815; in ggml b6646, Ollama v0.12.4 on)
_ENDLESS = (1 << 63) - 1  # SIZE_MAX / 2: the last chunk's free space, and a buffer type without a maximum


def peak_bytes(n_inputs: int, nodes: list[Node], align: int = ALIGN, kept: bool = True) -> int:
    """The buffer ggml-alloc reserves for the graph: the first n_inputs nodes are the leafs it places (allocated
    first, in leaf order), the rest the graph's nodes in execution order; align: the buffer type's alignment;
    kept: the replay looked up and kept by its arguments (_replay_kept; False: replayed afresh, for a caller that
    keeps its own answers and would only pay for hashing the node list)."""
    if not kept:
        return _peak(n_inputs, tuple(nodes), align)
    return _peak_kept(n_inputs, tuple(nodes), align)


def _peak(n_inputs: int, nodes: tuple[Node, ...], align: int) -> int:
    """sum(_replay(n_inputs, nodes, None, True, align)[0]), by Replay's two steps (the walk's events, then the
    allocator alone on them): no node offsets kept, a third less time."""
    sizes = [n.size for n in nodes]
    return _peak_of(_events(n_inputs, nodes, sizes), sizes, align)


@lru_cache(maxsize=32)  # as _replay_kept
def _peak_kept(n_inputs: int, nodes: tuple[Node, ...], align: int) -> int:
    return _peak(n_inputs, nodes, align)


def placement(n_inputs: int, nodes: list[Node], align: int = ALIGN) -> tuple[int, list[int | None]]:
    """peak_bytes and each node's offset in the buffer (None: a view, or not in this buffer)."""
    sizes, addr = _replay_kept(n_inputs, tuple(nodes), None, True, align)
    return sum(sizes), [a[1] if a else None for a in addr]


def chunk_sizes(n_inputs: int, nodes: list[Node], max_size: int | None, prefer_reuse: bool = True,
                align: int = ALIGN) -> tuple[int, ...]:
    """The backend buffers ggml-alloc reserves for the graph when the buffer type has a maximum size
    (ggml_backend_buft_get_max_size: Vulkan's suballocation block, 1 GiB by default; None: no maximum, one buffer).
    Their sum is the compute buffer the log prints (ggml_gallocr_get_buffer_size / ggml_vbuffer_size).

    ggml-alloc.c (ggml_dyn_tallocr with chunks, llama.cpp PR #15815 "split graph allocations according to backend
    max buffer size", September 2025: in ggml b6646, which Ollama v0.12.4 vendors; before it one buffer):
    - a tensor goes to the best-fitting free block other than a chunk's last one; the chunks are scanned in order
      and the best size is tracked within one chunk only, so the last chunk with any fitting block wins;
    - failing that, a chunk's last block (its free tail, bounded by the maximum): the first chunk whose tail fits
      (prefer_reuse=False: PR #15815 until PR #16788, Ollama v0.12.4-v0.13.1); from PR #16788 ("make gallocr
      prefer chunks that allow memory reuse", opened 2025-10-26: not in ggml b6840, in b7108; Ollama v0.13.2 on)
      with reuse = the chunk's high-water mark - the tail's offset - the tensor: a tail inside its chunk's
      high-water mark (reuse >= 0) before any that grows its chunk, the tightest of those, else the least growth;
    - failing that, a new chunk of max(the tensor, the maximum): a tensor larger than the maximum gets a chunk of
      its own, exactly its size; the 16th chunk is endless.
    The chunks are sized by their own high-water marks and allocated one by one (ggml_vbuffer_alloc)."""
    return _replay_kept(n_inputs, tuple(nodes), max_size, prefer_reuse, align)[0]


# Different questions build equal graphs (the absorbed-MLA attention at the head of each device's split is the same
# for every layer of the same shapes, compute.mla_split_attention): the replay, a pure function of its arguments, is
# kept by them (a node list hashes in a thirtieth of the time its replay takes)
@lru_cache(maxsize=32)
def _replay_kept(n_inputs: int, nodes: tuple[Node, ...], max_size: int | None, prefer_reuse: bool, align: int
                 ) -> tuple[tuple[int, ...], tuple[tuple[int, int] | None, ...]]:
    tops, addr = _replay(n_inputs, nodes, max_size, prefer_reuse, align)
    return tops, tuple(addr)


def _replay(n_inputs: int, nodes: tuple[Node, ...], max_size: int | None, prefer_reuse: bool, align: int
            ) -> tuple[tuple[int, ...], list[tuple[int, int] | None]]:
    limit = min(max_size, _ENDLESS) if max_size else _ENDLESS
    # per chunk its free blocks, address order, as two parallel lists (offsets, sizes); the last: the tail
    offsets: list[list[int]] = []
    lengths: list[list[int]] = []
    tops: list[int] = []  # per chunk its high-water mark (tallocr_chunk.max_size)
    unfit = _ENDLESS + 1  # above any free block's size

    def alloc(size: int) -> tuple[int, int]:  # size: aligned
        best_c = best_b = -1
        for c, lens in enumerate(lengths):  # ggml_dyn_tallocr_alloc, the blocks besides the last
            best_size = unfit  # the best size is tracked within one chunk only
            for b in range(len(lens) - 1):
                n = lens[b]
                if size <= n <= best_size:
                    best_c, best_b, best_size = c, b, n
        if best_b < 0:  # the last blocks
            best_reuse = None
            for c, lens in enumerate(lengths):
                if not lens or lens[-1] < size:
                    continue
                if not prefer_reuse:
                    best_c, best_b = c, len(lens) - 1
                    break
                reuse = tops[c] - offsets[c][-1] - size
                if best_reuse is None or (best_reuse < 0 and reuse > best_reuse) or 0 <= reuse < best_reuse:
                    best_c, best_b, best_reuse = c, len(lens) - 1, reuse
        if best_b < 0:  # ggml_dyn_tallocr_new_chunk
            offsets.append([0])
            lengths.append([_ENDLESS if len(lengths) == MAX_CHUNKS - 1 else max(size, limit)])
            tops.append(0)
            best_c, best_b = len(lengths) - 1, 0
        offs, lens = offsets[best_c], lengths[best_c]
        at = offs[best_b]
        if lens[best_b] == size:
            del offs[best_b], lens[best_b]
        else:
            offs[best_b] = at + size
            lens[best_b] -= size
        if at + size > tops[best_c]:
            tops[best_c] = at + size
        return best_c, at

    def release(where: tuple[int, int], size: int) -> None:  # ggml_dyn_tallocr_free_bytes; size: aligned
        c, at = where
        offs, lens = offsets[c], lengths[c]
        end = at + size
        for i, o in enumerate(offs):
            if o + lens[i] == at:
                lens[i] += size
                if i + 1 < len(offs) and end == offs[i + 1]:
                    lens[i] += lens[i + 1]
                    del offs[i + 1], lens[i + 1]
                return
            if end == o:
                offs[i] = at
                lens[i] += size
                if i > 0 and offs[i - 1] + lens[i - 1] == at:
                    lens[i - 1] += lens[i]
                    del offs[i], lens[i]
                return
        # ggml_dyn_tallocr_insert_block: before the first block, scanning from the list's start, whose offset is not
        # below at. The list can leave address order (a block that grew over an empty one listed after it, a freed
        # tensor of no bytes, moves its offset past that one when allocated from): a bisection inserts elsewhere
        i = next((k for k, o in enumerate(offs) if o >= at), len(offs))
        offs.insert(i, at)
        lens.insert(i, size)

    # per node, read once (the node list transposed): its size, view source, whether an output; the consumers
    # and views left of each
    n_nodes = len(nodes)
    sizes = [n.size for n in nodes]
    view_of = [n.view for n in nodes]
    is_output = [n.output for n in nodes]
    children = [0] * n_nodes
    for n in nodes:
        for s in n.srcs:
            children[s] += 1
    views = [0] * n_nodes
    for v in view_of:
        if v >= 0:
            views[v] += 1
    addr: list[tuple[int, int] | None] = [None] * n_nodes
    held = [False] * n_nodes  # allocated and not yet freed

    for i, (size, srcs, inplace, view, _, layout, empty) in enumerate(nodes):
        if (size or empty) and view < 0 and addr[i] is None:  # views and tensors of other buffers take no memory here
            for s in srcs if inplace else ():
                if (held[s] and view_of[s] < 0 and not is_output[s] and children[s] == 1 and not views[s]
                        and sizes[s] == size and nodes[s].layout == layout):
                    addr[i], held[i], held[s] = addr[s], True, False
                    break
            else:
                addr[i], held[i] = alloc(-(-size // align) * align), True  # aligned_offset
        if i < n_inputs:  # the leafs: placed first, reading nothing
            continue
        for s in srcs:
            children[s] -= 1
            if children[s] or views[s]:
                continue
            root = view_of[s]
            if root >= 0:  # a view's last consumer done: its source may go
                views[root] -= 1
                if views[root] or children[root]:
                    continue
                s = root
            if held[s] and not is_output[s]:
                release(addr[s], -(-sizes[s] // align) * align)
                held[s] = False
    return tuple(tops), addr


class Replay:
    """_replay's one-buffer peak (no maximum size: one chunk, its tail endless) for one node list at many size
    vectors (device_peak_by_kv: the same lowering re-placed at each context and host weight size). Which node
    allocates, takes its parent's block in place, or frees which block when is the node list's alone but for
    two things the sizes decide: whether a node has bytes (size or empty) and, for a candidate in-place pair (a
    parent of the same layout, no view, no output), whether their sizes are equal. Those decisions, read from the
    sizes, key the sequence of allocations and frees (_events: _replay's walk with ggml_dyn_tallocr_alloc and
    ggml_dyn_tallocr_free_bytes left out), made once per distinct decisions; _peak_of then runs only the
    allocator's free-block list, exactly as _replay does, on the sizes. Equal to sum(_replay(...)[0]) at any
    sizes (tests/test_llamacpp_galloc_replay.py)."""

    __slots__ = ("n_inputs", "nodes", "pair_i", "pair_s", "programs")

    def __init__(self, n_inputs: int, nodes: Sequence[Node]) -> None:
        self.n_inputs = n_inputs
        self.nodes = tuple(nodes)
        self.pair_i: list[int] = []
        self.pair_s: list[int] = []
        for i, n in enumerate(self.nodes):  # the in-place pairs the node list alone allows
            if n.inplace and n.view < 0:
                for s in n.srcs:
                    p = self.nodes[s]
                    if p.view < 0 and not p.output and p.layout == n.layout:
                        self.pair_i.append(i)
                        self.pair_s.append(s)
        self.programs: dict[tuple[bytes, bytes], list[int]] = {}

    def peak(self, sizes: list[int], align: int = ALIGN) -> int:
        """sum(_replay(n_inputs, nodes with these sizes, None, True, align)[0])."""
        decided = (bytes(map(bool, sizes)),
                   bytes(map(eq, [sizes[i] for i in self.pair_i], [sizes[s] for s in self.pair_s])))
        events = self.programs.get(decided)
        if events is None:
            events = self.programs[decided] = _events(self.n_inputs, self.nodes, sizes)
        return _peak_of(events, sizes, align)


def _events(n_inputs: int, nodes: tuple[Node, ...], sizes: list[int]) -> list[int]:
    """_replay's walk at these sizes as its allocations and frees in order: i >= 0 allocates node i's block, ~i frees
    node i's block (the node that allocated it: one that took its parent's block in place frees the parent's, of
    the same size)."""
    n_nodes = len(nodes)
    view_of = [n.view for n in nodes]
    is_output = [n.output for n in nodes]
    children = [0] * n_nodes
    for n in nodes:
        for s in n.srcs:
            children[s] += 1
    views = [0] * n_nodes
    for v in view_of:
        if v >= 0:
            views[v] += 1
    owner = list(range(n_nodes))  # whose block a node holds
    held = [False] * n_nodes
    events: list[int] = []
    for i, (_, srcs, inplace, view, _, layout, empty) in enumerate(nodes):
        size = sizes[i]
        if (size or empty) and view < 0:
            for s in srcs if inplace else ():
                if (held[s] and view_of[s] < 0 and not is_output[s] and children[s] == 1 and not views[s]
                        and sizes[s] == size and nodes[s].layout == layout):
                    owner[i], held[i], held[s] = owner[s], True, False
                    break
            else:
                events.append(i)
                held[i] = True
        if i < n_inputs:
            continue
        for s in srcs:
            children[s] -= 1
            if children[s] or views[s]:
                continue
            root = view_of[s]
            if root >= 0:
                views[root] -= 1
                if views[root] or children[root]:
                    continue
                s = root
            if held[s] and not is_output[s]:
                events.append(~owner[s])
                held[s] = False
    return events


def _peak_of(events: list[int], sizes: list[int], align: int) -> int:
    """The high-water mark of _replay's one chunk (its alloc and release, the tail endless) over these events. The
    free blocks are kept as _replay keeps them, in list order (not always address order), by their offsets and
    ends: the blocks release merges with are then found by C-speed list searches (the first block in list order
    ending where the range starts or starting where it ends, as _replay's scan finds it). A node's block is kept
    by its start and end (its aligned size past the start)."""
    offs = [0]  # the free blocks in list order; the last: the tail
    ends = [_ENDLESS]
    top = 0
    start = [0] * len(sizes)
    stop = [0] * len(sizes)
    for e in events:
        if e >= 0:  # ggml_dyn_tallocr_alloc: the best fit besides the last block (the later on a tie), else the tail
            size = -(-sizes[e] // align) * align
            best = last = len(offs) - 1
            best_size = _ENDLESS + 1
            for b in range(last):
                n = ends[b] - offs[b]
                if size <= n <= best_size:
                    best, best_size = b, n
            at = offs[best]
            end = at + size
            if best_size == size:  # a block besides the tail taken whole (the endless tail never is)
                del offs[best], ends[best]
            else:
                offs[best] = end
            if end > top:
                top = end
            start[e] = at
            stop[e] = end
            continue
        e = ~e  # ggml_dyn_tallocr_free_bytes, as _replay's release
        at = start[e]
        end = stop[e]
        n = len(offs)
        i = ends.index(at) if at in ends else n  # the first block ending at the range's start
        j = offs.index(end) if end in offs else n  # the first block starting at its end
        if i < n and i <= j:  # _replay's scan meets block i first (the same block: its first test, merge after)
            ends[i] = end
            if i + 1 < n and end == offs[i + 1]:
                ends[i] = ends[i + 1]
                del offs[i + 1], ends[i + 1]
        elif j < n:
            offs[j] = at
            if j > 0 and ends[j - 1] == at:
                ends[j - 1] = ends[j]
                del offs[j], ends[j]
        else:  # ggml_dyn_tallocr_insert_block: the linear scan of _replay's release (the list may leave address order)
            k = 0
            for o in offs:
                if o >= at:
                    break
                k += 1
            offs.insert(k, at)
            ends.insert(k, end)
    return top
