"""ggml-alloc replayed on a graph modelled tensor by tensor: where the closed-form phases of compute.py cannot say
which free block a tensor lands in (the placement of a graph's last layer turns on the size of every hole below it),
the worst-case graph is rebuilt node by node and allocated the way ggml_gallocr_alloc_graph_impl does.

Mirrors ggml/src/ggml-alloc.c at llama.cpp@0c1e57098 (the build llama-cpp-python 0.3.36 vendors):
- ggml_dyn_tallocr_alloc: the best-fitting free block (the smallest that fits, the later one on a tie) among all but
  the last; the last block (the free tail) only when none fits; sizes padded to the buffer's alignment (32 bytes on
  the CPU);
- ggml_dyn_tallocr_free_bytes: a freed range merges with the free block ending where it starts or starting where it
  ends (and that one with its next / previous neighbour), else it is inserted in address order;
- ggml_gallocr_allocate_node: graph inputs (leafs) first, in leaf order; a node whose op may run in place
  (ggml_op_can_inplace: ADD, MUL, SCALE, unary ops, ROPE, RMS_NORM, SOFT_MAX, ...) takes the block of a parent of the
  same size that has no other consumer left, is not a view, not an output and owned by the allocator; views take
  none (they count on their source: a source is freed once its last view's consumers and its own are done);
- outputs are never freed.
Checked against the offsets of every node in llama.cpp's own reserve (dumped from ggml_gallocr_reserve_n; equal to
the byte on the hy_v3 file at 16K and 24K with a q8_0 cache).
"""

from __future__ import annotations

from dataclasses import dataclass

ALIGN = 32  # the CPU buffer type's alignment (ggml-backend.cpp TENSOR_ALIGNMENT)


@dataclass(frozen=True)
class Node:
    """One tensor of the modelled graph: its bytes (0: not in this buffer, as a write into the KV cache), the nodes it
    reads (indices into the list), whether its op may run in place, the node it is a view of (-1: none), and whether
    it is a graph output (never freed)."""

    size: int
    srcs: tuple[int, ...] = ()
    inplace: bool = False
    view: int = -1
    output: bool = False


def _pad(n: int, align: int = ALIGN) -> int:
    return -(-n // align) * align


MAX_CHUNKS = 16  # ggml-alloc.c GGML_VBUFFER_MAX_CHUNKS (llama.cpp PR #15815; in ggml b6646, Ollama v0.12.4 on)
_ENDLESS = (1 << 63) - 1  # SIZE_MAX / 2: the last chunk's free space, and a buffer type without a maximum


def peak_bytes(n_inputs: int, nodes: list[Node]) -> int:
    """The buffer ggml-alloc reserves for the graph: the first n_inputs nodes are the input leafs (allocated first,
    in order), the rest the graph's nodes in execution order."""
    return placement(n_inputs, nodes)[0]


def placement(n_inputs: int, nodes: list[Node]) -> tuple[int, list[int | None]]:
    """peak_bytes and each node's offset in the buffer (None: a view, or not in this buffer)."""
    sizes, addr = _replay(n_inputs, nodes, None, True, ALIGN)
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
    return _replay(n_inputs, nodes, max_size, prefer_reuse, align)[0]


def _replay(n_inputs: int, nodes: list[Node], max_size: int | None, prefer_reuse: bool, align: int
            ) -> tuple[tuple[int, ...], list[tuple[int, int] | None]]:
    limit = min(max_size, _ENDLESS) if max_size else _ENDLESS
    chunks: list[list[list[int]]] = []  # per chunk its free blocks [offset, size], address order; last: the tail
    tops: list[int] = []  # per chunk its high-water mark (tallocr_chunk.max_size)

    def alloc(size: int) -> tuple[int, int]:
        size = _pad(size, align)
        best_c = best_b = -1
        for c, free in enumerate(chunks):  # ggml_dyn_tallocr_alloc, the blocks besides the last
            best_size = None
            for b, (_, n) in enumerate(free[:-1]):
                if n >= size and (best_size is None or n <= best_size):
                    best_c, best_b, best_size = c, b, n
        if best_b < 0:  # the last blocks
            best_reuse = None
            for c, free in enumerate(chunks):
                if not free or free[-1][1] < size:
                    continue
                if not prefer_reuse:
                    best_c, best_b = c, len(free) - 1
                    break
                reuse = tops[c] - free[-1][0] - size
                if best_reuse is None or (best_reuse < 0 and reuse > best_reuse) or 0 <= reuse < best_reuse:
                    best_c, best_b, best_reuse = c, len(free) - 1, reuse
        if best_b < 0:  # ggml_dyn_tallocr_new_chunk
            chunks.append([[0, _ENDLESS if len(chunks) == MAX_CHUNKS - 1 else max(size, limit)]])
            tops.append(0)
            best_c, best_b = len(chunks) - 1, 0
        block = chunks[best_c][best_b]
        at = block[0]
        block[0] += size
        block[1] -= size
        if not block[1]:
            del chunks[best_c][best_b]
        tops[best_c] = max(tops[best_c], at + size)
        return best_c, at

    def release(where: tuple[int, int], size: int) -> None:  # ggml_dyn_tallocr_free_bytes
        free, at = chunks[where[0]], where[1]
        size = _pad(size, align)
        for i, block in enumerate(free):
            if block[0] + block[1] == at:
                block[1] += size
                if i + 1 < len(free) and block[0] + block[1] == free[i + 1][0]:
                    block[1] += free[i + 1][1]
                    del free[i + 1]
                return
            if at + size == block[0]:
                block[0] = at
                block[1] += size
                if i > 0 and free[i - 1][0] + free[i - 1][1] == at:
                    free[i - 1][1] += block[1]
                    del free[i]
                return
        free.insert(sum(1 for b in free if b[0] < at), [at, size])

    children = [0] * len(nodes)
    views = [0] * len(nodes)
    for node in nodes:
        if node.view >= 0:
            views[node.view] += 1
        for s in node.srcs:
            children[s] += 1
    addr: list[tuple[int, int] | None] = [None] * len(nodes)
    held = [False] * len(nodes)  # allocated and not yet freed

    def place(i: int) -> None:
        node = nodes[i]
        if node.view >= 0 or not node.size or addr[i] is not None:
            return
        if node.inplace:
            for s in node.srcs:
                p = nodes[s]
                if held[s] and p.view < 0 and not p.output and p.size == node.size and children[s] == 1 and not views[s]:
                    addr[i], held[i], held[s] = addr[s], True, False
                    return
        addr[i], held[i] = alloc(node.size), True

    for i in range(n_inputs):
        place(i)
    for i in range(n_inputs, len(nodes)):
        node = nodes[i]
        place(i)
        for s in node.srcs:
            children[s] -= 1
            if children[s] or views[s]:
                continue
            src = nodes[s]
            if src.view >= 0:
                root = src.view
                views[root] -= 1
                if not views[root] and not children[root] and held[root] and not nodes[root].output:
                    release(addr[root], nodes[root].size)
                    held[root] = False
            elif held[s] and not src.output:
                release(addr[s], src.size)
                held[s] = False
    return tuple(tops), addr
