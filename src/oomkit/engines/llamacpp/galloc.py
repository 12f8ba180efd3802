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

from ...model.spec import ModelSpec

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


def final_norm_kept_graph(spec: ModelSpec, T: int, n_outputs: int, masks: int, k_rot: int, v_rot: int
                          ) -> tuple[int, list[Node]]:
    """Hunyuan V3's worst-case graph with flash attention (src/models/hy-v3.cpp, llm_graph_context::build_attn_mha,
    build_moe_ffn and build_ffn at llama.cpp@0c1e57098), node by node as ggml_build_forward_expand orders it, with the
    K/V cache writes as unallocated nodes. Inputs: the token ids, the embedding input rows, the K rotation matrix, the
    positions, the V rotation matrix, the K and V cache indices, the KQ mask (masks bytes) and out_ids. A quantized
    cache (llama_kv_cache build_input_k_rot / build_input_v_rot) rotates Q and K after RoPE and V before the cache
    write, and un-rotates the attention output (one MUL_MAT each). Per MoE layer the sigmoid router (logits, probs in
    place, the biased scores, argsort, the top-k weights), the routed experts' gate, up, SwiGLU, down and weighted
    rows, their sum, the shared expert (gate, up, SwiGLU, down) and the adds; a dense layer runs gate, up, SwiGLU and
    down. The final norm (h_nextn, kept for the MTP head), its out_ids rows and the logits are outputs.
    Returns (the number of inputs, the nodes)."""
    f32 = 4
    nodes: list[Node] = []

    def add(size: int, *srcs: int, inplace: bool = False, view: int = -1, output: bool = False) -> int:
        nodes.append(Node(size, tuple(srcs), inplace, view, output))
        return len(nodes) - 1

    def view(of: int) -> int:
        root = nodes[of].view if nodes[of].view >= 0 else of
        return add(nodes[of].size, of, view=root)

    resid = spec.n_embd * T * f32
    tokens = add(T * 4)
    add(resid)  # inp_embd: an input the token graph never reads
    krot = add(k_rot) if k_rot else -1
    pos = add(T * 4)
    vrot = add(v_rot) if v_rot else -1
    k_idx, v_idx = add(T * 8), add(T * 8)
    mask = add(masks)
    out_ids = add(n_outputs * 4)
    n_inputs = len(nodes)
    names = {t.name for t in spec.weights.tensors}
    cur = add(resid, tokens)  # GET_ROWS of the token embeddings
    for layer in spec.trunk_layers:
        a, f, il = layer.attention, layer.ffn, layer.index
        inp = cur
        x = add(resid, inp, inplace=True)  # RMS_NORM
        x = add(resid, x, inplace=True)  # attn_norm (MUL)
        q_size, kv_size = a.n_heads * a.head_dim_k * T * f32, a.n_kv_heads * a.head_dim_k * T * f32

        def head_norm_rope(size: int, weights: int, normed: bool) -> int:
            h = add(size, weights)  # projection (MUL_MAT)
            h = view(h)
            if normed:
                h = add(size, add(size, h, inplace=True), inplace=True)  # RMS_NORM, then MUL by the norm weight
            h = add(size, h, pos, inplace=True)  # ROPE
            if krot >= 0:
                h = view(add(size, krot, view(h)))  # the K rotation (MUL_MAT), reshaped back
            return h

        q = head_norm_rope(q_size, x, f"blk.{il}.attn_q_norm.weight" in names)
        v = view(add(kv_size, x))
        if vrot >= 0:
            v = view(add(kv_size, vrot, view(v)))
        k = head_norm_rope(kv_size, x, f"blk.{il}.attn_k_norm.weight" in names)
        add(0, view(k), k_idx)  # SET_ROWS into the K cache
        add(0, view(v), v_idx)  # SET_ROWS into the V cache
        o = add(a.n_heads * a.head_dim_v * T * f32, view(view(q)), mask)  # FLASH_ATTN_EXT
        o = view(o)
        if vrot >= 0:
            o = view(add(nodes[o].size, vrot, view(o)))  # the output un-rotated
        o = add(resid, o)  # attn_out (MUL_MAT)
        ffn_inp = add(resid, o, inp, inplace=True)
        n = add(resid, add(resid, ffn_inp, inplace=True), inplace=True)  # RMS_NORM, ffn_norm
        if f.is_moe:
            biased = bool({f"blk.{il}.exp_probs_b", f"blk.{il}.exp_probs_b.bias"} & names)
            scores = f.n_experts * T * f32
            probs = add(scores, add(scores, n), inplace=True)  # logits, SIGMOID in place
            probs_r = view(probs)
            ranked = add(scores, probs, inplace=True) if biased else probs  # the biased scores
            topk = view(add(scores, ranked))  # ARGSORT, its top-k view
            weights = add(f.n_experts_used * T * f32, probs_r, topk)  # GET_ROWS
            n_r = view(n)
            wide = f.n_experts_used * f.n_ff_expert * T * f32
            gate, up = add(wide, n_r, topk), add(wide, n_r, topk)
            down = add(f.n_experts_used * resid, add(wide, gate, up), topk)  # SWIGLU, MUL_MAT_ID
            weighted = add(f.n_experts_used * resid, down, weights, inplace=True)
            parts = [view(weighted) for _ in range(f.n_experts_used)]
            moe = parts[0]
            for p in parts[1:]:
                moe = add(resid, moe, p, inplace=True)
            sh = f.n_ff_shared * T * f32
            if sh:
                s_out = add(resid, add(sh, add(sh, n), add(sh, n)))  # gate, up, SWIGLU, down
                moe = add(resid, moe, s_out, inplace=True)  # ffn_out
            ffn_out = moe
        else:
            wide = f.n_ff * T * f32
            ffn_out = add(resid, add(wide, add(wide, n), add(wide, n)))
        cur = add(resid, ffn_out, ffn_inp, inplace=True)  # l_out
    h = add(resid, add(resid, cur, inplace=True), inplace=True, output=True)  # RMS_NORM, h_nextn
    rows = add(spec.n_embd * n_outputs * f32, h, out_ids, output=True)  # result_norm (GET_ROWS)
    add(spec.n_vocab * n_outputs * f32, rows, output=True)  # result_output
    return n_inputs, nodes
