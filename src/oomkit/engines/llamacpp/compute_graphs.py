"""Worst-case graphs modelled node by node for galloc's replay, where the closed-form phases of compute.py cannot say
which free block a late tensor lands in: Hunyuan V3's (hy_v3) and GLM-4.5's (glm4moe), both with flash attention.
Both are the same MoE trunk (src/models/hy-v3.cpp and src/models/glm4-moe.cpp at llama.cpp@0c1e57098, with
llm_graph_context::build_attn_mha, build_moe_ffn and build_ffn of src/llama-graph.cpp), told apart by where the
out_ids rows are gathered and whether the router's top-k weights are normalised. Gemma 4 with per-layer embeddings
(gemma4_ple_graph) and Gemma 3n (gemma3n_graph, built in source order through _Dag and ordered as
ggml_build_forward_expand walks it) are whole graphs of their own."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Hashable
from functools import partial
from typing import NamedTuple

from ...model.spec import Attention, Ffn, ModelSpec, RecurrentState
from .galloc import Node

F32 = 4
# a Node from its seven fields, without NamedTuple's keyword __new__ (the graphs here make thousands of nodes each)
_node = partial(tuple.__new__, Node)


class _Graph:
    """The node list under construction: add() appends a tensor and returns its index; view() a view of one."""

    def __init__(self) -> None:
        self.nodes: list[Node] = []
        self.inputs: set[int] = set()  # split inputs, placed at the start of the split of their first reader
        self.splits: list[int] = [0]  # the first node of each split

    def inp(self, size: int, empty: bool = False) -> int:
        """A split input: the scheduler's copy of a tensor another backend holds (hoisted by _hoisted)."""
        self.inputs.add(len(self.nodes))
        return self.add(size, empty=empty)

    def add(self, size: int, *srcs: int, inplace: bool = False, view: int = -1, output: bool = False,
            empty: bool = False) -> int:
        self.nodes.append(_node((size, srcs, inplace, view, output, None, empty)))
        return len(self.nodes) - 1

    def view(self, of: int) -> int:
        root = self.nodes[of].view if self.nodes[of].view >= 0 else of
        return self.add(self.nodes[of].size, of, view=root)

    def token_inputs(self, resid: int, T: int, masks: int, n_outputs: int, v_idx_size: int, k_rot: int = 0,
                     v_rot: int = 0) -> tuple[int, int, int, int, int, int, int, int]:
        """A token graph's inputs in llm_graph_context's order: the tokens, inp_embd (never read by it), K's
        rotation, the positions, V's rotation, the K / V row indices, the masks and the output ids -> (tokens,
        k_rot, pos, v_rot, k_idx, v_idx, mask, out_ids), -1 for a rotation the cache does not have."""
        tokens = self.add(T * 4)
        self.add(resid)
        krot = self.add(k_rot) if k_rot else -1
        pos = self.add(T * 4)
        vrot = self.add(v_rot) if v_rot else -1
        k_idx, v_idx = self.add(T * 8), self.add(v_idx_size)
        return tokens, krot, pos, vrot, k_idx, v_idx, self.add(masks), self.add(n_outputs * 4)

    def split_between(self, lo: int, hi: int) -> bool:
        """Whether a split starts at a node strictly between lo and hi (splits ascend: each starts at the end)."""
        k = bisect_right(self.splits, lo)
        return k < len(self.splits) and self.splits[k] < hi

    def store_kv(self, k: int, v: int, k_idx: int, v_idx: int, kv: tuple[int, int] | None
                 ) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """SET_ROWS of K and V into their caches; into a cache on the host (kv: its K and V views' bytes) they run
        there, reading the rows' copies, and the attention reads the cache's K and V views copied in, a new split
        after the host's stores. Returns the attention's extra K and V sources."""
        self.add(0, self.view(k), *(() if kv else (k_idx,)))
        self.add(0, self.view(v), *(() if kv else (v_idx,)))
        if not kv:
            return (), ()
        self.splits.append(len(self.nodes))
        return (self.inp(kv[0]),), (self.inp(kv[1]),)

    def rotated(self, h: int, r: int) -> int:
        """h multiplied by a cache's Hadamard rotation r (llama_mul_mat_hadamard: a MUL_MAT between two reshapes);
        h itself where the cache has none (r < 0)."""
        return self.view(self.add(self.nodes[h].size, r, self.view(h))) if r >= 0 else h

    def softcap(self, h: int, output: bool = False) -> int:
        """Gemma 2's soft-capping of h: SCALE, TANH, SCALE, each in place."""
        size = self.nodes[h].size
        return self.add(size, self.add(size, self.add(size, h, inplace=True), inplace=True), inplace=True,
                        output=output)

    def cpu_attention(self, a: Attention, q: int, mask: int, cells: int, T: int, flash_attn: bool,
                      softcap: bool = False) -> int:
        """build_attn_mha after the K / V stores, with the cache on the same backend (no copies): FLASH_ATTN_EXT
        of Q's permuted view, reshaped; or KQ over a stream's cells for every stream's tokens, Gemma 2's
        soft-capping where `softcap`, SOFT_MAX in place with the mask (and gpt-oss's sinks), KQV and the CONT of
        its permuted view."""
        add, view = self.add, self.view
        o_size = a.n_heads * a.head_dim_v * T * F32
        if flash_attn:
            return view(add(o_size, view(view(q)), mask))
        kq = add(cells * T * a.n_heads * F32, view(view(q)))
        if softcap:
            kq = self.softcap(kq)
        kq = add(self.nodes[kq].size, kq, mask, inplace=True)
        return add(o_size, view(add(o_size, kq)))

    def host_weight(self, host: dict[str, int], il: int, *names: str) -> tuple[int, ...]:
        """The copy of a host weight (the first of `names` in layer il that `host` holds) an op multiplies on the
        device: a new split whose input it is (ggml_backend_sched_split_graph starts one at every such weight)."""
        name = next((f"blk.{il}.{n}" for n in names if f"blk.{il}.{n}" in host), None) if host else None
        if name is None:
            return ()
        self.splits.append(len(self.nodes))
        return (self.inp(host[name]),)


def hy_v3_graph(spec: ModelSpec, T: int, n_outputs: int, masks: int, k_rot: int, v_rot: int
                ) -> tuple[int, list[Node]]:
    """Hunyuan V3: every layer runs on all T rows; the final norm (h_nextn, kept for the MTP head) is an output, then
    its out_ids rows (result_norm) and the logits. The router's top-k weights are used as gathered.
    Returns (the number of inputs, the nodes)."""
    return _moe_trunk_graph(spec, T, n_outputs, masks, k_rot, v_rot, gather_before_last_ffn=False,
                            normalize_weights=False)


def glm4moe_graph(spec: ModelSpec, T: int, n_outputs: int, masks: int, k_rot: int, v_rot: int
                  ) -> tuple[int, list[Node]]:
    """GLM-4.5: the last layer gathers its attention output and its input to the out_ids rows before the FFN
    (`il == n_layer - 1 && inp_out_ids`: two GET_ROWS, built even when every token is an output,
    src/llama-graph.cpp build_inp_out_ids), so its FFN runs on n_outputs rows; the router's top-k weights are
    normalised by their sum (SUM_ROWS, CLAMP, DIV for expert_weights_norm); result_norm and the logits are outputs.
    Read off llama.cpp@0c1e57098's reserve on GLM-4.5-Air's 2-trunk file at -c 32768, every token an output (the
    graph dumped from ggml_gallocr_reserve_n): this node list through galloc.placement lands every tensor at
    llama.cpp's offset, 384.01 MiB, the logits above the last layer's residual at 88.01 MiB (the closed form's
    logits + 4 rows: 328.00). Returns (the number of inputs, the nodes)."""
    return _moe_trunk_graph(spec, T, n_outputs, masks, k_rot, v_rot, gather_before_last_ffn=True,
                            normalize_weights=True)


# src/models/hunyuan-moe.cpp: Q and K are roped, then normed (attn_q_norm / attn_k_norm); the others norm, then rope
ROPE_BEFORE_QK_NORM = frozenset({"hunyuan-moe"})


def moe_device_graph(spec: ModelSpec, T: int, n_outputs: int, masks: int, k_rot: int, v_rot: int,
                     flash_attn: bool, fa_extra: int = 0, host: dict[str, int] | None = None,
                     host_kv: dict[int, tuple[int, int]] | None = None) -> tuple[int, list[Node]]:
    """Qwen3-MoE's and GLM-4.5's graph (src/models/qwen3moe.cpp, glm4-moe.cpp: the last layer gathers the out_ids rows
    before its FFN, the router's top-k weights normalised) as a ggml-cuda device that runs all of it holds it, with
    the allocation dependencies of ggml_backend_cuda_graph_optimize (compute.CUDA_FUSION_DEPS_BUILD):

    - the split's inputs: ggml_backend_sched_split_graph (ggml-backend.cpp) copies what the split reads from the host
      (the token embeddings' rows, the positions, the K and V indices, the KQ mask, out_ids) into tensors it puts at
      the head of the split as nodes, in the order the split first reads them ("allocated by ggml-alloc at the start
      of the split"); with one copy (no pipeline parallelism) they are not flagged input / output, so ggml-alloc
      frees each after its last reader. The token ids and the unread embeddings input stay on the host;
    - the top-k router's fused nodes (ggml_cuda_topk_moe_fusion: the SOFT_MAX or SIGMOID, the reshape, the biased
      scores, ARGSORT, its view, GET_ROWS and the normalisation) and their sources are read again by a GGML_OP_NONE
      node after the node that follows them (ggml_backend_sched_split_graph's "dependency node"), so the logits are
      not overwritten in place and everything there lives until the FFN input's reshape;
    - the experts' down rows and the router weights are read again after the expert sum
      (ggml_cuda_match_moe_weighted_reduction), so the weighted product cannot take the down rows' block in place.
    Without flash attention the attention is KQ (n_kv x T x n_head F32), SOFT_MAX in place, KQV and its permuted
    CONT, the V indices one per element of the transposed V cache. fa_extra: ggml-cuda's F16 copies of a quantized
    K / V behind each flash-attention output (compute.fa_f16_bytes). Hunyuan-MoE ropes Q and K before their norms
    (ROPE_BEFORE_QK_NORM).

    host / host_kv: the layers left on the CPU of a partly offloaded load whose pp graph runs on the device
    (compute.moe_offload_device_bytes): each op that reads a host weight (host: name -> the device's alloc size of
    its copy) starts a split with the copy as its input, the layer's K / V stores run on the host, and its
    attention reads copies of the cache's K and V views (host_kv: layer -> their bytes), a split of their own after
    the host's stores; the other inputs (positions, indices, mask, out_ids) are copied at the start of the split
    that first reads them.

    Sized at the CUDA buffer's 128-byte alignment, it gives the H200's printed CUDA0 compute buffer to the byte on
    the qwen3-30b-a3b file (4 layers: -ub 512 and 2048, 4K to 32K, flash attention on and off, a q8_0 cache, -ngl 2
    and 4). Returns (0: the inputs are nodes of their splits, the nodes)."""
    return _moe_trunk_graph(spec, T, n_outputs, masks, k_rot, v_rot, gather_before_last_ffn=True,
                            normalize_weights=True, device=True, flash_attn=flash_attn, fa_extra=fa_extra,
                            cuda_deps=True, host=host, host_kv=host_kv)


def _moe_trunk_graph(spec: ModelSpec, T: int, n_outputs: int, masks: int, k_rot: int, v_rot: int, *,
                     gather_before_last_ffn: bool, normalize_weights: bool, device: bool = False,
                     flash_attn: bool = True, fa_extra: int = 0, cuda_deps: bool = False,
                     host: dict[str, int] | None = None, host_kv: dict[int, tuple[int, int]] | None = None
                     ) -> tuple[int, list[Node]]:
    """The trunk node by node as ggml_build_forward_expand orders it, the K/V cache writes as unallocated nodes.
    Inputs: the token ids, the embedding input rows, the K rotation matrix, the positions, the V rotation matrix, the
    K and V cache indices, the KQ mask (masks bytes) and out_ids (n_outputs int32). Per layer: the attention norm;
    Q, V and K projections, each with its bias added in place where the file has one, reshaped (Q and K through
    their optional head norms, then RoPE); a quantized cache rotates Q and K after RoPE and V before the cache write
    and un-rotates the attention output (llama_kv_cache build_input_k_rot / build_input_v_rot); FLASH_ATTN_EXT and
    the output projection; the residual add and the FFN norm; an MoE layer's sigmoid router (logits, probs in place,
    the biased scores, argsort, the top-k weights), the routed experts' gate, up, SwiGLU, down and weighted rows,
    their sum over n_used views and the shared expert (gate, up, SwiGLU, down) added to it; a dense layer's gate, up,
    SwiGLU and down; the residual add. device, flash_attn, fa_extra, cuda_deps, host and host_kv: moe_device_graph."""
    g = _Graph()
    add, view, nodes = g.add, g.view, g.nodes
    host, host_kv = host or {}, host_kv or {}
    rope_first = spec.architecture in ROPE_BEFORE_QK_NORM
    w = partial(g.host_weight, host if device else {})  # w(il, *names): a host weight's copy, () on the CPU
    resid = spec.n_embd * T * F32
    a0 = spec.trunk_layers[0].attention if spec.trunk_layers else None
    # the V indices: one per row with flash attention, one per element of the transposed V cache without
    v_idx_size = T * 8 if flash_attn or a0 is None else a0.n_kv_heads * a0.head_dim_v * T * 8
    if device:
        inp = g.inp
        embd = inp(resid)  # the copy of the host's GET_ROWS result
        pos = inp(T * 4)
        krot = inp(k_rot) if k_rot else -1
        vrot = inp(v_rot) if v_rot else -1
        k_idx, v_idx = inp(T * 8), inp(v_idx_size)
        mask = inp(masks)
        out_ids = inp(n_outputs * 4)
    else:
        tokens, krot, pos, vrot, k_idx, v_idx, mask, out_ids = g.token_inputs(resid, T, masks, n_outputs, v_idx_size,
                                                                               k_rot, v_rot)
    n_inputs = len(nodes)
    names = {t.name for t in spec.weights.tensors}
    cur = embd if device else add(resid, tokens)  # GET_ROWS of the token embeddings
    trunk = spec.trunk_layers
    for layer in trunk:
        a, f, il = layer.attention, layer.ffn, layer.index
        inp = cur
        x = add(resid, add(resid, inp, inplace=True), *w(il, "attn_norm.weight"), inplace=True)  # RMS_NORM, MUL

        def project(size: int, t: str, x: int = x, il: int = il) -> int:
            h = add(size, x, *w(il, f"attn_{t}.weight"))  # MUL_MAT
            if f"blk.{il}.attn_{t}.bias" in names:
                h = add(size, h, *w(il, f"attn_{t}.bias"), inplace=True)  # the bias (ADD)
            return view(h)  # reshaped to heads

        def norm_rope(h: int, t: str, il: int = il) -> int:
            size = nodes[h].size
            if rope_first:
                h = add(size, h, pos, inplace=True)  # ROPE
            if f"blk.{il}.attn_{t}_norm.weight" in names:
                h = add(size, h, inplace=True)  # RMS_NORM
                h = add(size, h, *w(il, f"attn_{t}_norm.weight"), inplace=True)  # MUL by the norm weight
            if not rope_first:
                h = add(size, h, pos, inplace=True)  # ROPE
            if krot >= 0:
                h = view(add(size, krot, view(h)))  # the K rotation (MUL_MAT), reshaped back
            return h

        q_size, kv_size = a.n_heads * a.head_dim_k * T * F32, a.n_kv_heads * a.head_dim_k * T * F32
        q = norm_rope(project(q_size, "q"), "q")
        v = project(kv_size, "v")
        if vrot >= 0:
            v = view(add(kv_size, vrot, view(v)))
        k = norm_rope(project(kv_size, "k"), "k")
        kc, vc = g.store_kv(k, v, k_idx, v_idx, host_kv.get(il) if device else None)
        o_size = a.n_heads * a.head_dim_v * T * F32
        if flash_attn:
            # FLASH_ATTN_EXT (with its F16 copies), reshaped
            o = view(add(o_size + fa_extra, view(view(q)), *kc, *vc, mask))
        else:
            kq = add(masks // 4 * a.n_heads * F32, *kc, view(view(q)))  # KQ over the cache's n_kv cells
            kq = add(nodes[kq].size, kq, mask, inplace=True)  # SOFT_MAX
            o = add(o_size, view(add(o_size, *vc, kq)))  # KQV, the CONT of its permuted view
        if vrot >= 0:
            o = view(add(o_size, vrot, view(o)))  # the output un-rotated
        o = add(resid, o, *w(il, "attn_output.weight"))  # the output projection (MUL_MAT)
        rows, r = T, resid
        if gather_before_last_ffn and layer is trunk[-1]:
            rows, r = n_outputs, spec.n_embd * n_outputs * F32
            o, inp = add(r, o, out_ids), add(r, inp, out_ids)  # GET_ROWS of cur and inpSA
        ffn_inp = add(r, o, inp, inplace=True)
        n = add(r, ffn_inp, inplace=True)  # RMS_NORM
        n = add(r, n, *w(il, "ffn_norm.weight", "post_attention_norm.weight"), inplace=True)  # the FFN norm
        if f.is_moe:
            scores = f.n_experts * rows * F32
            logits = add(scores, n, *w(il, "ffn_gate_inp.weight"))
            first = len(nodes)  # the gating op, the top-k fusion's first node
            probs = add(scores, logits, inplace=True)  # SIGMOID / SOFT_MAX in place
            probs_r = view(probs)
            biased = bool({f"blk.{il}.exp_probs_b", f"blk.{il}.exp_probs_b.bias"} & names)
            # the biased scores
            ranked = add(scores, probs, *w(il, "exp_probs_b.bias", "exp_probs_b"), inplace=True) if biased else probs
            topk = view(add(scores, ranked))  # ARGSORT, its top-k view
            weights = add(f.n_experts_used * rows * F32, probs_r, topk)  # GET_ROWS
            if normalize_weights:
                weights = view(weights)
                total = add(rows * F32, add(rows * F32, weights), inplace=True)  # SUM_ROWS, CLAMP (in place)
                weights = view(add(f.n_experts_used * rows * F32, weights, total, inplace=True))  # DIV, reshaped
            fused = range(first, len(nodes))
            n_r = view(n)
            if cuda_deps and topk_moe_fused(f.n_experts):
                # the top-k fusion's nodes and their sources kept until the node after it
                add(0, *_kept(nodes, fused))
            wide = f.n_experts_used * f.n_ff_expert * rows * F32
            gate = add(wide, *w(il, "ffn_gate_exps.weight"), n_r, topk)
            up = add(wide, *w(il, "ffn_up_exps.weight"), n_r, topk)
            swiglu = add(wide, gate, up)
            down = add(f.n_experts_used * r, *w(il, "ffn_down_exps.weight"), swiglu, topk)  # MUL_MAT_ID
            weighted = add(f.n_experts_used * r, down, weights, inplace=True)
            parts = [view(weighted) for _ in range(f.n_experts_used)]
            ffn_out = parts[0]
            for p in parts[1:]:
                ffn_out = add(r, ffn_out, p, inplace=True)
            if cuda_deps and moe_reduction_fused(f.n_experts_used):
                add(0, down, weights)  # the experts and the router weights kept until the sum
            sh = f.n_ff_shared * rows * F32
            if sh:
                s_gate = add(sh, n, *w(il, "ffn_gate_shexp.weight"))
                s_up = add(sh, n, *w(il, "ffn_up_shexp.weight"))
                s_out = add(r, add(sh, s_gate, s_up), *w(il, "ffn_down_shexp.weight"))  # SWIGLU, down
                ffn_out = add(r, ffn_out, s_out, inplace=True)
        else:
            wide = f.n_ff * rows * F32
            d_gate, d_up = add(wide, n, *w(il, "ffn_gate.weight")), add(wide, n, *w(il, "ffn_up.weight"))
            ffn_out = add(r, add(wide, d_gate, d_up), *w(il, "ffn_down.weight"))  # SWIGLU, down
        cur = add(r, ffn_out, ffn_inp, inplace=True)  # l_out
    if gather_before_last_ffn:
        r = spec.n_embd * n_outputs * F32
        h = add(r, add(r, cur, inplace=True), inplace=True, output=True)  # RMS_NORM, result_norm
    else:
        h = add(resid, add(resid, cur, inplace=True), inplace=True, output=True)  # RMS_NORM, h_nextn
        h = add(spec.n_embd * n_outputs * F32, h, out_ids, output=True)  # result_norm (GET_ROWS)
    add(spec.n_vocab * n_outputs * F32, h, output=True)  # result_output
    if device:
        return 0, _hoisted(nodes, g.inputs, g.splits)
    return n_inputs, nodes


def qwen3moe_graph(spec: ModelSpec, T: int, n_outputs: int, masks: int, flash_attn: bool = True, k_rot: int = 0,
                   v_rot: int = 0) -> tuple[int, list[Node]]:
    """Qwen3-MoE (src/models/qwen3moe.cpp at llama.cpp@0c1e57098) on the CPU alone: _moe_trunk_graph's trunk (Q, V,
    K with their head norms before RoPE; build_moe_ffn's softmax router, the top-k weights normalised; the last
    layer's rows gathered before its FFN), the graph inputs as leafs. Checked node for node against the graph
    llama-cpp-python 0.3.36 hands ggml_gallocr_reserve_n (tests/groundtruth/gallocr_dump.c) on the qwen3-30b-a3b
    file (compute.dense_cpu_bytes)."""
    return _moe_trunk_graph(spec, T, n_outputs, masks, k_rot, v_rot, gather_before_last_ffn=True,
                            normalize_weights=True, flash_attn=flash_attn)


def _hoisted(nodes: list[Node], inputs: set[int], splits: list[int]) -> list[Node]:
    """The device's graph as ggml_backend_sched_split_graph hands it to ggml-alloc: each split's inputs (copies of
    tensors on another backend, found in the order its nodes read them) at its start, "so that they are allocated
    by ggml-alloc at the start of the split"; an input no node on the device reads is not copied."""
    first: dict[int, tuple[int, int]] = {}  # each input's first reader and the source it is there
    unread = set(inputs)
    for i, n in enumerate(nodes):
        if unread.isdisjoint(n.srcs):
            continue
        for j, src in enumerate(n.srcs):
            if src in unread:
                first[src] = (i, j)
                unread.discard(src)
        if not unread:
            break
    starts = sorted(set(splits))
    by_split: dict[int, list[int]] = {}
    for src, (i, _) in sorted(first.items(), key=lambda kv: kv[1]):
        by_split.setdefault(bisect_right(starts, i) - 1, []).append(src)
    order: list[int] = []
    for k, start in enumerate(starts):
        end = starts[k + 1] if k + 1 < len(starts) else len(nodes)
        order += by_split.get(k, [])
        order += [i for i in range(start, end) if i not in inputs]
    return _reordered(nodes, order)


def _reordered(nodes: list[Node], order: list[int]) -> list[Node]:
    """The nodes in `order`, their sources and views renumbered to it (a node left out is read by none kept)."""
    if order == list(range(len(nodes))):
        return nodes  # nothing moved (a device that holds the whole graph: its inputs come first, in reading order)
    at = {i: n for n, i in enumerate(order)}
    return [_node((n.size, tuple([at[s] for s in n.srcs]), n.inplace, at.get(n.view, -1), n.output, n.layout,
                   n.empty)) for n in map(nodes.__getitem__, order)]


def topk_moe_fused(n_experts: int) -> bool:
    """ggml-cuda/topk-moe.cu ggml_cuda_should_use_topk_moe: an expert count launch_topk_moe_cuda is built for."""
    return n_experts & (n_experts - 1) == 0 and n_experts <= 512 or n_experts in (288, 576)


def moe_reduction_fused(n_used: int) -> bool:
    """ggml-cuda.cu ggml_cuda_match_moe_weighted_reduction: 2 to MOE_WEIGHTED_REDUCTION_MAX_EXPERTS (15) used."""
    return 2 <= n_used <= 15


def _kept(nodes: list[Node], fused: range) -> list[int]:
    """ggml_backend_cuda_graph_optimize's add_alloc_deps: every node of the fused range and each of its sources
    (in this buffer), each once (the scheduler's add_alloc_dep skips a tensor already kept until that node)."""
    out: list[int] = []
    for i in fused:
        for j in (i, *nodes[i].srcs):
            if j not in out:
                out.append(j)
    return out


def _cache_inputs(new_input, caches, att, T: int, k_rot: bool, v_rot: bool, v_idx_bytes
                  ) -> tuple[int, list[tuple[int, int, int, int, int]]]:
    """The graph inputs each KV cache brings, in first-use order (llm_graph_input_attn_kv / _iswa): its K rotation
    (the largest power of two from 64 dividing the head), the positions (with the first cache), its V rotation
    (64 x 64), the K and V indices (v_idx_bytes(the cache's first layer's attention)) and the KQ mask; the positions
    come last when no cache has any. -> (positions, per cache (k_idx, v_idx, mask, k_rot, v_rot); -1: none)."""
    pos = -1
    idx: list[tuple[int, int, int, int, int]] = []
    for _, layers, _, mask_bytes in caches:
        a0 = att[min(layers)]
        nrot = 64
        while a0.head_dim_k % (2 * nrot) == 0:
            nrot *= 2
        kr = new_input(nrot * nrot * F32) if k_rot and a0.head_dim_k % 64 == 0 else -1
        if pos < 0:
            pos = new_input(T * 4)
        vr = new_input(64 * 64 * F32) if v_rot and a0.head_dim_v % 64 == 0 else -1
        k_idx, v_idx = new_input(T * 8), new_input(v_idx_bytes(a0))
        idx.append((k_idx, v_idx, new_input(mask_bytes), kr, vr))
    if pos < 0:
        pos = new_input(T * 4)
    return pos, idx


# ggml-vulkan's graph_optimize (ggml/src/ggml-vulkan/ggml-vulkan.cpp ggml_vk_graph_optimize, PR #15850): the ops
# it treats as views, and the producer / consumer pairs it keeps adjacent for its fusions
_VK_EMPTY = frozenset({"NONE", "RESHAPE", "TRANSPOSE", "VIEW", "PERMUTE"})
_VK_FUSED = frozenset({("RMS_NORM", "MUL"), ("MUL_MAT", "ADD"), ("MUL_MAT_ID", "ADD_ID"), ("MUL_MAT_ID", "MUL"),
                       ("ADD", "ADD")})
# its topk-MoE keep patterns (ggml-vulkan.cpp topk_moe_early_softmax_norm, topk_moe_sigmoid_norm_bias,
# topk_moe_early_softmax, topk_moe_late_softmax, tried in that order; as at b8770 and in llama.cpp@000651ca): a
# run of unused nodes with these ops that starts at the first unused node is taken whole, and a node that starts
# one is never pulled up into another node's set
_VK_KEEP = (("SOFT_MAX", "RESHAPE", "ARGSORT", "VIEW", "GET_ROWS", "RESHAPE", "SUM_ROWS", "CLAMP", "DIV", "RESHAPE"),
            ("UNARY", "RESHAPE", "ADD", "ARGSORT", "VIEW", "GET_ROWS", "RESHAPE", "SUM_ROWS", "CLAMP", "DIV",
             "RESHAPE"),
            ("SOFT_MAX", "RESHAPE", "ARGSORT", "VIEW", "GET_ROWS"),
            ("ARGSORT", "VIEW", "GET_ROWS", "RESHAPE", "SOFT_MAX", "RESHAPE"))


def vk_graph_optimize(n_inputs: int, nodes: list[Node], ops: list[str], roots: dict[int, Hashable]) -> list[Node]:
    """A Vulkan device's split in the order ggml_vk_graph_optimize gives it before ggml-alloc places it
    (ggml_backend_sched_split_graph calls each split's backend graph_optimize; the split's input copies are put at
    its head afterwards, in their first-use order, so the first n_inputs nodes stay). Its dense path, line by line:
    from the first node not yet taken, the next 20 nodes are scanned and each real (non-view) node that depends on
    no untaken node of the window is pulled up beside it, except a node right after its producer where the pair
    fuses (RMS_NORM + MUL, MUL_MAT + ADD, ADD + ADD, ...); an RMS_NORM + MUL pulls the ROPE reading it, a ROPE the
    VIEW and SET_ROWS writing it into the cache, MUL_MAT + ADD the ADD after it; then, unless the set ends with an
    ADD, the window's views whose sources are taken. A node depends on another it reads or that views the same
    tensor (view_src; roots: the KV cache a cache write or view is a view of). ops: each node's GGML_OP_.
    The topk-MoE keep patterns (_VK_KEEP): a router run starting at the first unused node is taken whole, and
    none of its nodes is pulled up before it. Returns the reordered node list (sources and view roots renumbered)."""
    split = range(n_inputs, len(nodes))
    n = len(nodes)

    def root(i: int) -> Hashable:
        return roots.get(i, nodes[i].view if nodes[i].view >= 0 else i)

    def is_src_of(d: int, c: int) -> bool:
        return c in nodes[d].srcs or root(d) == root(c)

    used = [False] * n
    order: list[int] = []

    def match(pattern: tuple[str, ...], start: int) -> bool:  # match_pattern
        return start + len(pattern) <= n and all(ops[start + k] == op and not used[start + k]
                                                 for k, op in enumerate(pattern))

    first = n_inputs
    while first < n:
        keep = next((p for p in _VK_KEEP if match(p, first)), None)
        if keep is not None:  # keep_pattern: the run taken as it stands
            for k in range(first, first + len(keep)):
                order.append(k)
                used[k] = True
            while first < n and used[first]:
                first += 1
            continue
        cur = [first]
        window = range(first + 1, min(first + 20, n))
        for j in window:
            if used[j] or ops[j] in _VK_EMPTY or any(match(p, j) for p in _VK_KEEP):
                continue
            if any(not used[c] and is_src_of(j, c) and not (j == c + 1 and c == cur[-1] and (ops[c], ops[j]) in _VK_FUSED)
                   for c in range(first, j)):
                continue
            cur.append(j)
            rope = j
            if ops[j] == "MUL" and ops[j - 1] == "RMS_NORM":  # RMS_NORM + MUL: the ROPE that reads it
                k = next((k for k in range(j + 1, min(j + 15, n)) if ops[k] == "ROPE" and nodes[k].srcs[0] == j), -1)
                if k >= 0:
                    rope = k
                    cur.append(k)
                    used[k] = True
            if ops[rope] == "ROPE":  # ROPE + VIEW + SET_ROWS made consecutive
                vi = next((k for k in range(rope + 1, min(rope + 10, n)) if ops[k] == "VIEW" and nodes[k].srcs
                           and nodes[k].srcs[0] == rope), -1)
                si = next((k for k in range(vi + 1, min(rope + 10, n)) if ops[k] == "SET_ROWS"
                           and nodes[k].srcs[0] == vi), -1) if vi >= 0 else -1
                if si >= 0:
                    cur += [vi, si]
                    used[vi] = used[si] = True
            for a, b, c3 in (("MUL_MAT_ID", "ADD_ID", "MUL"), ("MUL_MAT", "ADD", "ADD")):
                if ops[j] == b and ops[j - 1] == a:
                    k = next((k for k in range(j + 1, min(j + 15, n)) if ops[k] == c3 and nodes[k].srcs[0] == j
                              and (len(nodes[k].srcs) < 2 or nodes[k].srcs[1] < n_inputs
                                   or nodes[k].srcs[1] in order)), -1)
                    if k >= 0:
                        cur.append(k)
                        used[k] = True
        if ops[cur[-1]] != "ADD":  # the views whose sources are taken
            for j in window:
                if not used[j] and ops[j] in _VK_EMPTY and j not in cur and not any(
                        not used[c] and is_src_of(j, c) and c not in cur for c in range(first, j)):
                    cur.append(j)
        for c in cur:
            order.append(c)
            used[c] = True
        while first < n and used[first]:
            first += 1
    assert len(order) == len(split)
    at = {i: i for i in range(n_inputs)}
    at.update({old: n_inputs + k for k, old in enumerate(order)})
    out = nodes[:n_inputs]
    for old in order:
        nd = nodes[old]
        out.append(nd._replace(srcs=tuple(at[s] for s in nd.srcs), view=at[nd.view] if nd.view >= 0 else -1))
    return out


def gemma4_ple_graph(spec: ModelSpec, T: int, n_outputs: int, caches: list[tuple[str, tuple[int, ...], int, int]],
                     flash_attn: bool = True, device: bool = False, k_rot: bool = False, v_rot: bool = False,
                     vk_order: bool = False, fa_extra: dict[int, int] | None = None) -> tuple[int, list[Node]]:
    """Gemma 4 with per-layer embeddings (E2B / E4B: per_layer_token_embd) or without (12B, 31B: the same graph
    less the per-layer path), node by node as ggml_build_forward_expand orders src/models/gemma4.cpp (b9849; the
    same graph in llama.cpp@0c1e57098), each node with its GGML_OP_ for ggml-vulkan's reorder:

    - build_inp_per_layer: the per-layer rows of every token (GET_ROWS of per_layer_token_embd, n_embd_per_layer x
      n_layer floats a token), reshaped and scaled into a new tensor (SCALE of a view cannot run in place), expanded
      before the first layer;
    - project_per_layer_inputs, pulled in by the first layer's per-layer gate (its first reader): per_layer_model_proj
      times the scaled embeddings, scaled in place, RMS-normed from a reshaped view (a new tensor), the norm weight,
      the sum with the selected rows and its scale in place, then the permuted CONT: that block is read by every
      layer's slice and lives to the last one;
    - per layer: attention norm; Q (head norm, RoPE) and, in a layer that owns its cache, K (head norm, RoPE) and V
      (attn_v's product, or K's where the file has no attn_v; an RMS norm without weight), the cache writes, the
      views of Q and the caches, FLASH_ATTN_EXT, the output projection, its post-norm and the residual (without
      flash attention: V reshaped, padded to the cache's widest row where narrower and written through the
      transposed cache, llama_kv_cache::cpy_v [TAG_V_CACHE_VARIABLE]; the V cache's view first, KQ, the soft-max in
      place, KQV and its permuted CONT, llm_graph_context::build_attn_mha); the FFN norm, gate, up, GEGLU (the
      KV-shared layers twice as wide: use_double_wide_mlp), down, the post-norm and residual; the per-layer gate (MUL_MAT, GELU in place) times this layer's slice, its projection,
      post-norm and residual, the layer output scale;
    - the final norm (h_nextn) on every row, result_norm's out_ids rows, the logits with the soft-capping (SCALE,
      TANH, SCALE, all in place).
    Inputs, in first-use order: the token ids, the unread embeddings input (PR #18898), the per-layer token ids,
    the positions, per cache (caches: (name, layers, KV cells a stream, mask bytes) in first-use order) its K and
    V indices (the V indices one per element of the widest V row without flash attention) and KQ mask, and out_ids.
    Read off the pinned binding's reserve (ggml_gallocr_reserve_n dumped) on Gemma 4 E2B's 35-layer shapes: every
    tensor at llama.cpp's offset, 480.09 MiB at -c 8192 -ub 2048 with one output row, as HilbertraumAI's b9849 CPU
    log prints.

    device: the graph as a fully offloaded device's split holds it (ggml_backend_sched_split_graph): the two
    GET_ROWS of weights in CPU_Mapped run on the host (the offload_op of ggml-cuda and ggml-vulkan takes no
    GET_ROWS: get_op_batch_size returns 0 for it), and their results (the per-layer rows as the reshaped view
    inp_per_layer_selected scales, in place on the copy), the positions, indices, masks and out_ids come in as
    copies placed at the start of the split in the order the split first reads them (the per-layer rows before the
    embeddings: build_inp_per_layer is expanded first); the token ids and the unread embeddings input stay on the
    host. With one copy of the inputs (no pipeline parallelism: one device) ggml_backend_sched_split_graph does not
    mark a copy input and output (only `if (sched->n_copies > 1)`, ggml-backend.cpp), so ggml-alloc frees it after
    its last reader, as the other device replays' split inputs (_Graph.inp).
    vk_order: the split in ggml-vulkan's order (vk_graph_optimize), which pulls the per-layer projection up beside
    the first layer's attention. Checked against the pinned binding with a stand-in Vulkan device
    (tests/groundtruth/vk_standin_device.c): the same node list, Vulkan0 446.07 / 530.07 MiB for E4B's shapes
    without / with the reorder at -c 8192 -ub 2048 -np 1, 496.07 / 554.07 for E2B's; HilbertraumAI's b9849 Vulkan
    logs print 530.07 and 554.07 (tests/test_llamacpp_gemma4_ple.py).

    k_rot / v_rot: a quantized K / V cache whose head size is a multiple of 64 (compute._rotations): each cache has
    its Hadamard matrices as inputs (K's the largest power of two from 64 dividing its head, V's 64 x 64), Q and K
    are rotated after RoPE (MUL_MAT), V before its cache write, the attention output un-rotated.
    fa_extra: per layer, ggml-cuda's F16 copies of a K / V cache of another type behind its flash-attention output
    (compute.fa_f16_bytes: the buffer type's get_alloc_size, ggml_cuda_flash_attn_ext_get_alloc_size), each layer's
    own head sizes over the cells of the cache it reads. Returns (the number of inputs, the nodes)."""
    g = _Graph()
    nodes = g.nodes
    ops: list[str] = []  # each node's GGML_OP_, for ggml-vulkan's reorder (vk_graph_optimize)
    roots: dict[int, tuple[str, int]] = {}  # the KV cache a cache write or cache view is a view of

    def add(op: str, size: int, *srcs: int, **kw) -> int:
        ops.append(op)
        return g.add(size, *srcs, **kw)

    def view(of: int, op: str = "VIEW") -> int:
        ops.append(op)
        return g.view(of)

    def cache_view(op: str, cache: tuple[str, int], *srcs: int) -> int:
        """A node that views a KV cache (outside this buffer): SET_ROWS into it, the attention's VIEW and PERMUTE."""
        ops.append(op)
        roots[len(nodes)] = cache
        return g.add(0, *srcs)

    resid = spec.n_embd * T * F32
    names = {t.name for t in spec.weights.tensors}
    # per-layer embeddings (E2B / E4B); a dense Gemma 4 without them (12B, 31B) is the same graph less that path
    ple = next((t.shape[0] for t in spec.weights.tensors if t.name == "per_layer_token_embd.weight"), 0)
    ple_rows = ple * T * F32
    n_per = ple // len(spec.trunk_layers)
    by_layer = {il: i for i, (_, layers, _, _) in enumerate(caches) for il in layers}
    cells = [c for _, _, c, _ in caches]
    v_max = max(la.attention.n_kv_heads * la.attention.head_dim_v for la in spec.trunk_layers)
    v_idx_size = T * 8 if flash_attn else v_max * T * 8
    if device:  # the copies of the host's GET_ROWS results, in the order the split first reads them
        rows = add("NONE", ple_rows) if ple else -1  # the reshaped per-layer rows (inp_per_layer_selected's source)
        embd = add("NONE", resid)  # inp_scaled's source
    else:
        tokens = add("NONE", T * 4)
        add("NONE", resid)  # inp_embd: an input the token graph never reads
        tokens_pl = add("NONE", T * 4) if ple else -1
    att = {la.index: la.attention for la in spec.trunk_layers}
    pos, idx = _cache_inputs(lambda n: add("NONE", n), caches, att, T, k_rot, v_rot, lambda a0: v_idx_size)
    out_ids = add("NONE", n_outputs * 4)  # on a device: the copy result_norm's GET_ROWS reads
    n_inputs = len(nodes)
    if not device:
        embd = add("GET_ROWS", resid, tokens)  # GET_ROWS of token_embd
        if ple:  # GET_ROWS of per_layer_token_embd, reshaped
            rows = view(add("GET_ROWS", ple_rows, tokens_pl), "RESHAPE")
    # inp_per_layer_selected: SCALE of the reshaped rows, a new block on the host graph (ggml_are_same_layout: the
    # 2-D GET_ROWS result is not the 3-D scale's shape), in place on a device's copy of the reshaped view
    selected = add("SCALE", ple_rows, rows, inplace=device) if ple else -1
    inp = add("SCALE", resid, embd, inplace=True)  # inp_scaled
    per_layer = -1
    for layer in spec.trunk_layers:
        a, il = layer.attention, layer.index
        owner = il if layer.kv_source is None else layer.kv_source
        ic = by_layer.get(owner, 0)
        k_idx, v_idx, mask, kr, vr = idx[ic]
        x = add("MUL", resid, add("RMS_NORM", resid, inp, inplace=True), inplace=True)  # attn_norm
        q_size, kv_size = a.n_heads * a.head_dim_k * T * F32, a.n_kv_heads * a.head_dim_k * T * F32
        q = add("RMS_NORM", q_size, view(add("MUL_MAT", q_size, x), "RESHAPE"))  # Qcur, its head norm
        q = add("ROPE", q_size, add("MUL", q_size, q, inplace=True), pos, inplace=True)  # the norm weight, ROPE
        if kr >= 0:
            q = view(add("MUL_MAT", q_size, kr, view(q, "RESHAPE")), "RESHAPE")  # the K rotation, reshaped back
        if layer.kv_source is None:
            k_proj = add("MUL_MAT", kv_size, x)
            k = add("RMS_NORM", kv_size, view(k_proj, "RESHAPE"))
            k = add("ROPE", kv_size, add("MUL", kv_size, k, inplace=True), pos, inplace=True)
            if kr >= 0:
                k = view(add("MUL_MAT", kv_size, kr, view(k, "RESHAPE")), "RESHAPE")
            # Vcur: attn_v's product, or without attn_v (attention_k_eq_v: the 12B's and 31B's full layers) Kcur
            # itself, reshaped a second time; an RMS norm without weight
            v_proj = add("MUL_MAT", kv_size, x) if f"blk.{il}.attn_v.weight" in names else k_proj
            v = add("RMS_NORM", kv_size, view(v_proj, "RESHAPE"))
            if vr >= 0:
                v = view(add("MUL_MAT", kv_size, vr, view(v, "RESHAPE")), "RESHAPE")
            cache_view("SET_ROWS", ("k", il), view(k), k_idx)  # SET_ROWS into the K cache
            if flash_attn:
                cache_view("SET_ROWS", ("v", il), view(v), v_idx)  # SET_ROWS into the V cache
            else:  # into the transposed V cache (llama_kv_cache::cpy_v): V reshaped, padded to the widest row
                v = view(v, "RESHAPE")
                if a.n_kv_heads * a.head_dim_v < v_max:
                    v = add("PAD", v_max * T * F32, v)  # [TAG_V_CACHE_VARIABLE]
                cache_view("SET_ROWS", ("v", il), view(v, "RESHAPE"), v_idx, cache_view("RESHAPE", ("v", il)))
        o_size = a.n_heads * a.head_dim_v * T * F32
        if flash_attn:  # the attention's views: Q's, then the K and V caches' (build_attn_mha)
            qp = view(view(q), "PERMUTE")
            kc = cache_view("PERMUTE", ("k", owner), cache_view("VIEW", ("k", owner)))
            vc = cache_view("PERMUTE", ("v", owner), cache_view("VIEW", ("v", owner)))
        else:  # the transposed V cache's view first
            vc = cache_view("PERMUTE", ("v", owner), cache_view("VIEW", ("v", owner)))
            kc = cache_view("PERMUTE", ("k", owner), cache_view("VIEW", ("k", owner)))
            qp = view(view(q), "PERMUTE")
        if flash_attn:
            o_alloc = o_size + (fa_extra or {}).get(il, 0)  # with ggml-cuda's F16 copies of K and V
            o = view(add("FLASH_ATTN_EXT", o_alloc, qp, kc, vc, mask), "RESHAPE")  # FLASH_ATTN_EXT, reshaped
            if vr >= 0:
                o = view(add("MUL_MAT", o_size, vr, view(o, "RESHAPE")), "RESHAPE")  # the output un-rotated
        else:
            kq = add("MUL_MAT", cells[ic] * T * a.n_heads * F32, kc, qp)  # KQ
            kq = add("SOFT_MAX", nodes[kq].size, kq, mask, inplace=True)
            o = add("CONT", o_size, view(add("MUL_MAT", o_size, vc, kq), "PERMUTE"))  # KQV, its permuted CONT
        o = add("MUL_MAT", resid, o)  # the output projection
        o = add("MUL", resid, add("RMS_NORM", resid, o, inplace=True), inplace=True)  # attn_post_norm
        attn_out = add("ADD", resid, o, inp, inplace=True)
        n = add("MUL", resid, add("RMS_NORM", resid, attn_out, inplace=True), inplace=True)  # ffn_norm
        wide = layer.ffn.n_ff * T * F32
        h = add("MUL_MAT", resid, add("GLU", wide, add("MUL_MAT", wide, n), add("MUL_MAT", wide, n)))  # gate, up, GEGLU, down
        h = add("MUL", resid, add("RMS_NORM", resid, h, inplace=True), inplace=True)  # ffn_post_norm
        h = pe_in = add("ADD", resid, h, attn_out, inplace=True)
        if ple:
            gate = add("UNARY", n_per * T * F32, add("MUL_MAT", n_per * T * F32, pe_in), inplace=True)  # inp_gate, GELU
            if per_layer < 0:  # project_per_layer_inputs, pulled in here
                p = add("SCALE", ple_rows, add("MUL_MAT", ple_rows, inp), inplace=True)  # per_layer_model_proj, SCALE
                p = add("RMS_NORM", ple_rows, view(p, "RESHAPE"))  # RMS_NORM of the reshaped view
                p = add("MUL", ple_rows, p, inplace=True)  # the norm weight
                p = add("SCALE", ple_rows, add("ADD", ple_rows, p, selected, inplace=True), inplace=True)  # + rows
                per_layer = add("CONT", ple_rows, view(p, "PERMUTE"))  # the permuted CONT
            h = add("MUL", n_per * T * F32, gate, view(per_layer), inplace=True)  # times this layer's slice
            h = add("MUL_MAT", resid, h)  # proj
            h = add("MUL", resid, add("RMS_NORM", resid, h, inplace=True), inplace=True)  # post_norm
            h = add("ADD", resid, pe_in, h, inplace=True)
        if f"blk.{il}.layer_output_scale.weight" in names:
            h = add("MUL", resid, h, inplace=True)  # out_scaled
        inp = h
    h = add("MUL", resid, add("RMS_NORM", resid, inp, inplace=True), inplace=True, output=True)  # h_nextn
    h = add("GET_ROWS", spec.n_embd * n_outputs * F32, h, out_ids)  # result_norm
    logits = spec.n_vocab * n_outputs * F32
    out = add("MUL_MAT", logits, h)
    for op in ("SCALE", "UNARY", "SCALE"):  # the soft-capping: SCALE, TANH, SCALE (result_output)
        out = add(op, logits, out, inplace=True)
    nodes[out] = nodes[out]._replace(output=True)
    if vk_order:
        return n_inputs, vk_graph_optimize(n_inputs, nodes, ops, roots)
    return n_inputs, nodes


class _Dag:
    """Tensors built in source order, then ordered the way ggml_build_forward_expand does (ggml_visit_parents: a
    depth-first walk, sources left to right, each tensor once), so a builder can follow the model's C++ line by
    line. Shapes are ne tuples of F32 elements; a tensor's layout (ggml_are_same_layout) is its shape."""

    def __init__(self) -> None:
        self.t: list[Node] = []
        self.order: list[int] = []
        self.seen: set[int] = set()

    def input(self, size: int, output: bool = False) -> int:
        self.t.append(Node(size, output=output))
        self.expand(len(self.t) - 1)
        return len(self.t) - 1

    def op(self, ne: tuple[int, ...], *srcs: int, inplace: bool = False) -> int:
        size = F32
        for n in ne:
            size *= n
        self.t.append(Node(size, tuple(srcs), inplace, -1, False, ne))
        return len(self.t) - 1

    def view(self, of: int, ne: tuple[int, ...] | None = None) -> int:
        root = self.t[of].view if self.t[of].view >= 0 else of
        size = self.t[of].size
        if ne is not None:
            size = F32
            for n in ne:
                size *= n
        self.t.append(Node(size, (of,), False, root, False, ne))
        return len(self.t) - 1

    def shape(self, i: int) -> tuple[int, ...]:
        ne = self.t[i].layout
        assert isinstance(ne, tuple)
        return ne

    def expand(self, root: int) -> None:
        stack = [(root, 0)]
        while stack:
            i, k = stack.pop()
            if i in self.seen:
                continue
            srcs = self.t[i].srcs
            if k < len(srcs):
                stack.append((i, k + 1))
                if srcs[k] not in self.seen:
                    stack.append((srcs[k], 0))
                continue
            self.seen.add(i)
            self.order.append(i)

    def nodes(self) -> list[Node]:
        at = {i: n for n, i in enumerate(self.order)}
        out = []
        for i in self.order:
            n = self.t[i]
            out.append(n._replace(srcs=tuple(at[s] for s in n.srcs), view=at[n.view] if n.view >= 0 else -1))
        return out


def gemma3n_graph(spec: ModelSpec, T: int, n_outputs: int, caches: list[tuple[str, tuple[int, ...], int, int]],
                  flash_attn: bool = True, k_rot: bool = False, v_rot: bool = False, device: bool = False
                  ) -> tuple[int, list[Node]]:
    """Gemma 3n (E2B / E4B) node by node, src/models/gemma3n.cpp llama_model_gemma3n::graph (llama.cpp@3f545becc;
    no graph change to it since PR #23764 on 2026-05-29, the ERAS kq_mask_f16 gate: b9849 and the binding's
    llama.cpp@0c1e57098 reserve this graph, the latter checked node by node), ordered by ggml_build_forward_expand
    (_Dag):

    - the token embeddings (GET_ROWS) and build_inp_per_layer (GET_ROWS of per_layer_token_embd, n_embd_altup x
      n_layer floats a token, reshaped and scaled into a new tensor) expanded first; inp_scaled;
    - the AltUp stack: the scaled embeddings repeated n_altup - 1 times (REPEAT), altup_proj (MUL_MAT), rescaled to
      their magnitude (calc_magnitude: SQR, SUM_ROWS, SQRT of each; MUL, DIV) and CONCAT into n_altup streams;
    - per layer: altup_predict (the router on the active stream: RMS norm, weight, SCALE, MUL_MAT, TANH; the
      coefficients MUL_MAT; the streams' permuted CONT times them, its permuted CONT plus the streams), the attention
      norm, Q / K / V as build_attn expands them (Q, K with head norms and RoPE, V an RMS norm without weight; the
      KV-shared layers, hparams.has_kv false, Q only and the source layer's cache), FLASH_ATTN_EXT or KQ, SOFT_MAX,
      KQV and its permuted CONT, the output projection and post-norm, plus the active stream; LAuReL (laurel_l,
      laurel_r, the norm, plus its input), their sum scaled; the FFN norm, up, gate with the gaussian top-k of the
      first n_layer_sparsity (10) layers (MEAN, SUB, SQR, SUM_ROWS, SCALE, SQRT, SCALE, ADD, SUB, RELU), GELU, MUL,
      down, post-norm, residual; altup_correct (the router again, the innovation SUB, REPEAT, the coefficients
      MUL_MAT, SCALE (+1), the transposed CONT, MUL, ADD); the per-layer gate (MUL by altup_correct_scale, MUL_MAT,
      GELU) times this layer's slice of project_per_layer_inputs (pulled in by the first layer: per_layer_model_proj
      MUL_MAT, SCALE, RMS norm of the reshaped view, its weight, + the selected rows, SCALE, the permuted CONT that
      lives to the last layer), per_layer_proj, its norm, added to the other streams and CONCAT behind the first;
    - the AltUp merge (altup_unembd_proj on the other streams, rescaled to the active one's magnitude, summed onto
      the first stream, SCALE), out_ids' rows (GET_ROWS), result_norm, the logits and their soft-capping.
    Inputs, in first-use order as gemma4_ple_graph's: the token ids, the unread embeddings input, the per-layer
    token ids, per cache (caches: (name, layers, KV cells a stream, mask bytes) in first-use order) its K rotation,
    the positions (first cache), its V rotation, K and V indices (V one per element without flash attention) and
    KQ mask, and out_ids. Checked against the binding's reserve dumped from ggml_gallocr_reserve_n on Gemma 3n
    E2B's 30-layer and E4B's 35-layer shapes: every tensor at llama.cpp's offset
    (tests/test_llamacpp_gemma3n_compute.py).

    device: a fully offloaded device's split, by gemma4_ple_graph's rule (the two GET_ROWS of CPU_Mapped weights run
    on the host; their results and the graph inputs come in as split inputs, freed after their last reader). Not
    checked against a device log of Gemma 3n. Returns (the number of inputs, the nodes)."""
    g = _Dag()
    op, view, shape = g.op, g.view, g.shape
    E = spec.n_embd
    tensors = {t.name: t for t in spec.weights.tensors}
    n_layer = len(spec.trunk_layers)
    P = tensors["per_layer_token_embd.weight"].shape[0] // n_layer
    A = tensors["altup_proj.weight"].shape[2] + 1
    by_layer = {il: i for i, (_, layers, _, _) in enumerate(caches) for il in layers}
    cells = [c for _, _, c, _ in caches]
    att = {la.index: la.attention for la in spec.trunk_layers}
    tokens = tokens_pl = -1
    if device:
        embd = g.input(E * T * F32)  # the copies of the host's GET_ROWS results
        rows = g.input(P * n_layer * T * F32)
    else:
        tokens = g.input(T * 4)
        g.input(E * T * F32)  # inp_embd: an input the token graph never reads
        tokens_pl = g.input(T * 4)
    pos, idx = _cache_inputs(lambda n: g.input(n), caches, att, T, k_rot, v_rot,
                             lambda a0: T * 8 if flash_attn else a0.n_kv_heads * a0.head_dim_v * T * 8)
    out_ids = -1 if device else g.input(n_outputs * 4)
    n_inputs = len(g.order)

    def norm(x: int) -> int:  # build_norm, LLM_NORM_RMS with a weight: RMS_NORM, MUL
        return op(shape(x), op(shape(x), x, inplace=True), inplace=True)

    def magnitude(x: int) -> int:  # calc_magnitude: SQRT(SUM_ROWS(SQR(x)))
        ne = shape(x)
        s = op((1,) + ne[1:], op(ne, x, inplace=True))
        return op((1,) + ne[1:], s, inplace=True)

    def router(x: int) -> int:  # altup_compute_router_modalities: norm, SCALE, MUL_MAT, TANH
        r = op((E, T), norm(x), inplace=True)
        return op((A, T), op((A, T), r), inplace=True)

    if not device:
        embd = op((E, T), tokens)  # GET_ROWS of token_embd
        g.expand(embd)
        rows = op((P * n_layer, T), tokens_pl)  # GET_ROWS of per_layer_token_embd
    selected = op((P, n_layer, T), view(rows, (P, n_layer, T)), inplace=True)  # inp_per_layer_selected (SCALE)
    g.expand(selected)
    inp = op((E, T), embd, inplace=True)  # inp_scaled
    p = op((P * n_layer, T), op((P * n_layer, T), inp), inplace=True)  # per_layer_model_proj, SCALE
    p = norm(view(p, (P, n_layer, T)))  # per_layer_proj (RMS norm of the reshaped view)
    p = op((P, n_layer, T), op((P, n_layer, T), p, selected, inplace=True), inplace=True)  # + selected, SCALE
    per_layer = op((P, T, n_layer), view(p, (P, T, n_layer)))  # the permuted CONT
    target = magnitude(inp)
    added = op((E, T, A - 1), op((E, T, A - 1), inp))  # REPEAT, altup_proj
    added = op((E, T, A - 1), op((E, T, A - 1), added, target, inplace=True), magnitude(added), inplace=True)
    cur = op((E, T, A), inp, added)  # inp_stacked (CONCAT)
    for layer in spec.trunk_layers:
        a, il = layer.attention, layer.index
        ic = by_layer.get(il if layer.kv_source is None else layer.kv_source, 0)
        k_idx, v_idx, mask, kr, vr = idx[ic]
        # altup_predict
        coefs = view(op((A * A, T), router(view(cur, (E, T)))), (A, A, T))  # all_coefs, reshaped
        pred = op((E, A, T), op((A, E, T), view(cur, (A, E, T))), coefs)  # the permuted CONT times the coefficients
        pred = op((E, T, A), op((E, T, A), view(pred, (E, T, A))), cur, inplace=True)  # permuted CONT, + cur
        active = view(pred, (E, T))
        x = norm(active)  # attn_norm

        def head(x: int, w: int, heads: int, rot: int, rope: bool = True, normed: bool = True) -> int:
            h = view(op((w * heads, T), x), (w, heads, T))  # MUL_MAT, reshaped to heads
            h = norm(h) if normed else op(shape(h), h, inplace=True)
            if rope:
                h = op(shape(h), h, pos, inplace=True)  # ROPE
            if rot >= 0:  # the Hadamard rotation (llama_kv_cache build_input_k_rot / build_input_v_rot)
                h = view(op((w, heads * T), rot, view(h, (w, heads * T))), (w, heads, T))
            return h

        q = head(x, a.head_dim_k, a.n_heads, kr)
        g.expand(q)
        if layer.kv_source is None:
            k = head(x, a.head_dim_k, a.n_kv_heads, kr)
            g.expand(k)
            v = head(x, a.head_dim_v, a.n_kv_heads, vr, rope=False, normed=False)
            g.expand(v)
            g.expand(op((0,), view(k, (a.n_kv_heads * a.head_dim_k, T)), k_idx))  # SET_ROWS into the K cache
            g.expand(op((0,), view(v, (a.n_kv_heads * a.head_dim_v, T)), v_idx))  # SET_ROWS into the V cache
        qv = view(view(q), (a.head_dim_k, T, a.n_heads))  # permuted
        o_ne = (a.head_dim_v, a.n_heads, T)
        if flash_attn:
            o = view(op(o_ne, qv, mask), (a.head_dim_v * a.n_heads, T))  # FLASH_ATTN_EXT, reshaped
            if vr >= 0:  # the output un-rotated
                o = view(op((64, a.head_dim_v * a.n_heads * T // 64), vr, view(o)))
        else:
            kq = op((cells[ic], T, a.n_heads), qv)  # KQ
            kq = op(shape(kq), kq, mask, inplace=True)  # SOFT_MAX
            kqv = op((a.head_dim_v, T, a.n_heads), kq)  # KQV
            o = op((a.head_dim_v * a.n_heads, T), view(kqv, o_ne))  # the CONT of its permuted view
        o = norm(op((E, T), o))  # wo, attn_post_norm
        gated = op((E, T), o, active, inplace=True)  # attn_gated
        lo = norm(op((E, T), op((tensors[f"blk.{il}.laurel_l.weight"].shape[1], T), x)))  # laurel_l, laurel_r, laurel_post_norm
        lo = op((E, T), lo, x, inplace=True)  # laurel_out
        attn_laurel = op((E, T), op((E, T), gated, lo, inplace=True), inplace=True)  # ADD, SCALE
        n = norm(attn_laurel)  # ffn_norm
        F = layer.ffn.n_ff
        up, gate = op((F, T), n), op((F, T), n)
        if il < N_LAYER_SPARSITY:  # gaussian_topk
            mean = op((1, T), gate)
            s = op((F, T), op((F, T), gate, mean, inplace=True), inplace=True)  # SUB, SQR
            s = op((1, T), op((1, T), op((1, T), op((1, T), s), inplace=True), inplace=True), inplace=True)
            cutoff = op((1, T), mean, s, inplace=True)
            gate = op((F, T), op((F, T), gate, cutoff, inplace=True), inplace=True)  # SUB, RELU
        h = op((F, T), up, op((F, T), gate, inplace=True), inplace=True)  # GELU, MUL
        h = norm(op((E, T), h))  # ffn_down, ffn_post_norm
        laurel_gated = op((E, T), h, attn_laurel, inplace=True)  # attn_ffw_laurel_gated
        # altup_correct
        innov = op((E, T, A), op((E, T), laurel_gated, view(pred, (E, T)), inplace=True))  # SUB, REPEAT
        c = op((A, T), op((A, T), router(laurel_gated)), inplace=True)  # all_coefs, SCALE (+1)
        c = op((1, T, A), view(c, (T, A)))  # the transposed CONT
        corrected = op((E, T, A), op((E, T, A), innov, c, inplace=True), pred, inplace=True)  # MUL, ADD
        first = view(corrected, (E, T))
        rest = view(corrected, (E, T, A - 1))
        fp = op((E, T), view(corrected, (E, T)), inplace=True)  # times altup_correct_scale
        fp = op((P, T), op((P, T), fp), inplace=True)  # per_layer_inp_gate, GELU
        fp = op((P, T), fp, view(per_layer, (P, T)), inplace=True)  # times this layer's slice
        fp = norm(op((E, T), fp))  # per_layer_proj, per_layer_post_norm
        cur = op((E, T, A), first, op((E, T, A - 1), rest, fp, inplace=True))  # ADD, CONCAT (l_out)
    # the AltUp merge
    first = view(cur, (E, T))
    un = op((E, T, A - 1), view(cur, (E, T, A - 1)))  # altup_unembd_proj
    un = op((E, T, A - 1), op((E, T, A - 1), un, magnitude(view(cur, (E, T))), inplace=True), magnitude(un),
            inplace=True)
    h = first
    for _ in range(A - 1):
        h = op((E, T), h, view(un, (E, T)), inplace=True)
    h = op((E, T), h, inplace=True)  # unembd_merged (SCALE)
    h = op((E, n_outputs), h, *([out_ids] if out_ids >= 0 else []))  # GET_ROWS of out_ids
    h = op((E, n_outputs), op((E, n_outputs), h, inplace=True), inplace=True)  # result_norm
    g.t[h] = g.t[h]._replace(output=True)
    out = op((spec.n_vocab, n_outputs), h)
    for _ in range(3):  # the soft-capping: SCALE, TANH, SCALE (result_output)
        out = op((spec.n_vocab, n_outputs), out, inplace=True)
    g.t[out] = g.t[out]._replace(output=True)
    g.expand(out)
    return n_inputs, g.nodes()


# src/models/models.h llama_model_gemma3n::graph n_layer_sparsity: the first 10 layers use activation sparsity
N_LAYER_SPARSITY = 10


def mla_split_graph(spec: ModelSpec, il: int, T: int, masks: int, fa_extra: int = 0) -> tuple[int, list[Node]]:
    """The first absorbed-MLA layer's attention (src/models/deepseek2.cpp, `is_mla`, with flash attention) at the
    head of a device's split, up to the output projection and the residual add. ggml_backend_sched_split_graph
    (ggml-backend.cpp) puts the split's input copies at its head as nodes, in the order the split first reads them
    (the hidden-state rows handed in, the positions, the K indices, the KQ mask, the out_ids), so the hidden-state
    block sits at the bottom of the buffer, where a CPU graph has the small inputs first. Then the Q path: the
    LoRA'd Q (q_a, its norm in place; wq for the lite models), wq_b's rows (alive until q_pe is roped), q_nope
    absorbed by wk_b (n_head x kv_lora_rank a token), the roped q_pe and their concat Qcur; the latent path, the
    cache write, the flash-attention output (n_head x kv_lora_rank, with ggml-cuda's F16 copy of a non-F16 K:
    fa_extra), wv_b's product and its contiguous copy. Equal to llama.cpp@0c1e57098's CUDA0 buffer measured on an
    H200 with deepseek-v3's 4-layer file (tests/test_llamacpp_cuda_measured.py): 371.01 MiB at -c 4096 -ub 512
    (f16 and q8_0), 399.01 at 32K, 1500.03 at 8K -ub 2048, where Qcur lands above everything alive at its concat.
    Returns (the number of inputs, the nodes)."""
    layer = next(la for la in spec.trunk_layers if la.index == il)
    a = layer.attention
    g = _Graph()
    resid = spec.n_embd * T * F32
    r, rope, nope, H = a.kv_lora_rank, a.qk_rope_head_dim, a.qk_nope_head_dim, a.n_heads
    dv = a.v_head_dim or a.head_dim_v
    x = g.add(resid)
    pos = g.add(T * 4)
    k_idx = g.add(T * 8)
    mask = g.add(masks)
    g.add(T * 4)  # out_ids
    norm = g.add(resid, x, inplace=True)
    cur = g.add(resid, norm, inplace=True)  # attn_norm
    if a.q_lora_rank:
        q = g.add(a.q_lora_rank * T * F32, cur)
        q = g.add(a.q_lora_rank * T * F32, q, inplace=True)  # rms norm
        q = g.add(a.q_lora_rank * T * F32, q, inplace=True)  # q_a_norm
    else:
        q = cur
    q = g.add(H * (nope + rope) * T * F32, q)  # wq_b / wq
    q_nope = g.view(g.view(g.view(q)))  # reshape, view, permute
    q_pe = g.view(g.view(q))
    absorbed = g.add(H * r * T * F32, q_nope)  # wk_b
    absorbed = g.view(absorbed)  # permute
    q_pe = g.add(H * rope * T * F32, q_pe, pos, inplace=True)
    qcur = g.add(H * (r + rope) * T * F32, absorbed, q_pe)
    kv = g.add((r + rope) * T * F32, cur)  # wkv_a_mqa
    kv_cmpr, k_pe = g.view(kv), g.view(kv)
    kv_cmpr = g.add(r * T * F32, kv_cmpr, inplace=True)  # rms norm of a view: a new block
    kv_cmpr = g.add(r * T * F32, kv_cmpr, inplace=True)
    k_pe = g.add(rope * T * F32, k_pe, pos, inplace=True)
    kcur = g.add((r + rope) * T * F32, g.view(kv_cmpr), k_pe)
    store = g.add(0, g.view(kcur), k_idx)  # set_rows into the cache
    out = g.add(H * r * T * F32 + fa_extra, g.view(qcur), store, mask)
    out = g.add(H * dv * T * F32, g.view(g.view(out)))  # wv_b
    out = g.add(H * dv * T * F32, g.view(out))  # cont
    out = g.add(resid, g.view(out))  # wo
    g.add(resid, out, x, inplace=True)  # ffn_inp
    return 0, g.nodes


def _gpt_oss_projection(g: _Graph, names: set[str], host: dict[str, int], x: int, il: int, size: int, t: str) -> int:
    """openai-moe.cpp's Q, K or V (t) of layer il: the product, its bias (ADD in place) where the file has one,
    reshaped. host: the weights a device copies in (_Graph.host_weight), empty on the CPU."""
    h = g.add(size, x, *g.host_weight(host, il, f"attn_{t}.weight"))
    if f"blk.{il}.attn_{t}.bias" in names:
        h = g.add(size, h, *g.host_weight(host, il, f"attn_{t}.bias"), inplace=True)
    return g.view(h)


def _gpt_oss_ffn(g: _Graph, names: set[str], host: dict[str, int], f: Ffn, il: int, ffn_inp: int, T: int,
                 cuda_deps: bool = False) -> int:
    """openai-moe.cpp's layer from the attention's residual (ffn_inp) to its output, the same in every gpt-oss graph
    here: attn_post_norm; the router's logits and bias, ARGSORT of the logits and its top-k view, GET_ROWS of the
    weights and their SOFT_MAX; gate and up (MUL_MAT_ID, ADD_ID of their biases in place), SWIGLU_OAI, down and its
    bias, the weighted rows, their views' sum, the residual. host: the weights a device copies in
    (_Graph.host_weight), empty on the CPU; cuda_deps: ggml-cuda's allocation dependency keeping the down rows and
    the router weights until the expert sum (moe_reduction_fused). Returns the layer's output."""
    add, view = g.add, g.view
    resid = g.nodes[ffn_inp].size

    def w(name: str) -> tuple[int, ...]:
        return g.host_weight(host, il, name)

    n = add(resid, add(resid, ffn_inp, inplace=True), *w("post_attention_norm.weight"), inplace=True)
    scores = f.n_experts * T * F32
    logits = add(scores, n, *w("ffn_gate_inp.weight"))
    if f"blk.{il}.ffn_gate_inp.bias" in names:
        logits = add(scores, logits, *w("ffn_gate_inp.bias"), inplace=True)
    probs_r = view(logits)
    topk = view(add(scores, logits))  # ARGSORT, its top-k view
    weights = add(f.n_experts_used * T * F32, probs_r, topk)  # GET_ROWS
    weights = view(add(f.n_experts_used * T * F32, view(weights)))  # SOFT_MAX of the reshaped rows, reshaped
    n_r = view(n)
    wide = f.n_experts_used * f.n_ff_expert * T * F32

    def expert(t: str, size: int, *srcs: int) -> int:
        h = add(size, *w(f"ffn_{t}_exps.weight"), *srcs, topk)  # MUL_MAT_ID
        if f"blk.{il}.ffn_{t}_exps.bias" in names:
            h = add(size, h, *w(f"ffn_{t}_exps.bias"), topk, inplace=True)  # ADD_ID
        return h

    gate = expert("gate", wide, n_r)
    up = expert("up", wide, n_r)
    down = expert("down", f.n_experts_used * resid, add(wide, gate, up))  # SWIGLU_OAI, down
    weighted = add(f.n_experts_used * resid, down, weights, inplace=True)
    parts = [view(weighted) for _ in range(f.n_experts_used)]
    ffn_out = parts[0]
    for p in parts[1:]:
        ffn_out = add(resid, ffn_out, p, inplace=True)
    if cuda_deps and moe_reduction_fused(f.n_experts_used):
        add(0, down, weights)
    return add(resid, ffn_out, ffn_inp, inplace=True)


def _out_rows_head(g: _Graph, spec: ModelSpec, cur: int, out_ids: int, n_outputs: int) -> None:
    """The output head of a graph that gathers out_ids' rows after the last layer: GET_ROWS of them, result_norm
    (RMS_NORM, MUL in place) and the logits, both outputs."""
    r = spec.n_embd * n_outputs * F32
    h = g.add(r, cur, out_ids)  # GET_ROWS of out_ids
    h = g.add(r, g.add(r, h, inplace=True), inplace=True, output=True)  # result_norm
    g.add(spec.n_vocab * n_outputs * F32, h, output=True)


def gpt_oss_device_graph(spec: ModelSpec, T: int, n_outputs: int, caches: list[tuple[tuple[int, ...], int, int]],
                         flash_attn: bool, fa_extra: dict[int, int] | None = None, k_rot: int = 0, v_rot: int = 0,
                         host: dict[str, int] | None = None, host_kv: dict[int, tuple[int, int]] | None = None
                         ) -> tuple[int, list[Node]]:
    """gpt-oss (src/models/openai-moe.cpp) as a ggml-cuda device that runs all of it holds it, by moe_device_graph's
    rules (the split's input copies, the host layers' weight and K / V copies, the allocation dependencies of
    ggml_backend_cuda_graph_optimize). Per layer: the attention norm; Q, V and K with their biases (ADD in place),
    Q and K roped from their reshaped views; the cache writes into its iSWA cache (caches: (layers, cells, mask
    bytes) per cache), FLASH_ATTN_EXT with the attention sinks (or KQ, SOFT_MAX, KQV and its CONT), the output
    projection and its bias, the residual; attn_post_norm; the router's logits and bias, ARGSORT of the logits
    themselves and its top-k view, GET_ROWS of the weights and their SOFT_MAX (LLAMA_EXPERT_GATING_FUNC_TYPE_SOFTMAX_
    WEIGHT: the top-k fusion's delayed-softmax form, to which graph_optimize adds no dependency); gate and up
    (MUL_MAT_ID, ADD_ID of their biases in place), SWIGLU_OAI, down and its bias, the weighted rows (kept with the
    router weights until the expert sum, ggml_cuda_match_moe_weighted_reduction), their sum, the residual. The
    last layer's output is kept (t_h_nextn, an output), out_ids' rows gathered from it, then result_norm and the
    logits. fa_extra: per layer, the F16 copies of a K / V cache of another type beside its flash-attention output.
    Returns (0, the nodes)."""
    g = _Graph()
    add, view, nodes, inp = g.add, g.view, g.nodes, g.inp
    host, host_kv = host or {}, host_kv or {}
    names = {t.name for t in spec.weights.tensors}
    w = partial(g.host_weight, host)  # w(il, name): the copy of a host weight an op reads, () for a device one
    resid = spec.n_embd * T * F32
    embd = inp(resid)
    pos = inp(T * 4)
    a0 = spec.trunk_layers[0].attention
    by_layer: dict[int, tuple[int, int, int, int, int, int]] = {}
    for layers, cells, mask_bytes in caches:
        v_idx = T * 8 if flash_attn else a0.n_kv_heads * a0.head_dim_v * T * 8
        # each cache's own rotation matrices (llama_kv_cache build_input_k_rot / build_input_v_rot)
        entry = (inp(T * 8), inp(v_idx), inp(mask_bytes), cells, inp(k_rot) if k_rot else -1,
                 inp(v_rot) if v_rot else -1)
        for il in layers:
            by_layer[il] = entry
    out_ids = inp(n_outputs * 4)
    cur = embd
    for layer in spec.trunk_layers:
        a, f, il = layer.attention, layer.ffn, layer.index
        k_idx, v_idx, mask, cells, krot, vrot = by_layer[il]
        x = add(resid, add(resid, cur, inplace=True), *w(il, "attn_norm.weight"), inplace=True)

        def project(size: int, t: str, x: int = x, il: int = il) -> int:
            return _gpt_oss_projection(g, names, host, x, il, size, t)

        q_size, kv_size = a.n_heads * a.head_dim_k * T * F32, a.n_kv_heads * a.head_dim_k * T * F32
        q = add(q_size, project(q_size, "q"), pos, inplace=True)  # ROPE of the reshaped view
        if krot >= 0:
            q = view(add(q_size, krot, view(q)))  # the K rotation (MUL_MAT), reshaped back
        v = project(kv_size, "v")
        if vrot >= 0:
            v = view(add(kv_size, vrot, view(v)))
        k = add(kv_size, project(kv_size, "k"), pos, inplace=True)
        if krot >= 0:
            k = view(add(kv_size, krot, view(k)))
        kv = host_kv.get(il)
        add(0, view(k), *(() if kv else (k_idx,)))
        add(0, view(v), *(() if kv else (v_idx,)))
        kc = vc = ()
        if kv:
            g.splits.append(len(nodes))
            kc, vc = (inp(kv[0]),), (inp(kv[1]),)
        o_size = a.n_heads * a.head_dim_v * T * F32
        if flash_attn:
            extra = (fa_extra or {}).get(il, 0)  # the F16 copies of K and V (compute.fa_f16_bytes)
            o = view(add(o_size + extra, view(view(q)), *kc, *vc, mask, *w(il, "attn_sinks.weight")))
            if vrot >= 0:
                o = view(add(o_size, vrot, view(o)))  # the output un-rotated
        else:
            kq = add(cells * T * a.n_heads * F32, *kc, view(view(q)))
            kq = add(nodes[kq].size, kq, mask, *w(il, "attn_sinks.weight"), inplace=True)  # SOFT_MAX with the sinks
            o = add(o_size, view(add(o_size, *vc, kq)))
        o = add(resid, o, *w(il, "attn_output.weight"))
        if f"blk.{il}.attn_output.bias" in names:
            o = add(resid, o, *w(il, "attn_output.bias"), inplace=True)
        cur = _gpt_oss_ffn(g, names, host, f, il, add(resid, o, cur, inplace=True), T, cuda_deps=True)
    nodes[cur] = nodes[cur]._replace(output=True)  # t_h_nextn
    _out_rows_head(g, spec, cur, out_ids, n_outputs)
    return 0, _hoisted(nodes, g.inputs, g.splits)


def gpt_oss_graph(spec: ModelSpec, T: int, n_outputs: int, caches: list[tuple[tuple[int, ...], int, int]],
                  flash_attn: bool, k_rot: int = 0, v_rot: int = 0) -> tuple[int, list[Node]]:
    """gpt-oss (src/models/openai-moe.cpp at llama.cpp@0c1e57098) on the CPU alone, node by node as
    ggml_build_forward_expand orders it: the layer of gpt_oss_device_graph (the attention norm; Q, K and V with their
    biases, Q and K roped; the cache writes; FLASH_ATTN_EXT with the sinks, or KQ, SOFT_MAX with the sinks in place,
    KQV and its CONT; wo and its bias, the residual; attn_post_norm; the router, ARGSORT of its logits, the top-k
    weights' SOFT_MAX; gate / up MUL_MAT_ID with ADD_ID of their biases, SWIGLU_OAI, down and its bias, the weighted
    rows' views and their sum; the residual), but Q, K, V in that order (build_attn's Q, then K, then V: the graph
    the CPU backend is handed, with no split), a quantized cache's rotations (llama_mul_mat_hadamard: Q and K after
    their ropes by each cache's K matrix, V by its V matrix, the attention's output back) with or without flash
    attention, and the graph inputs as ggml-alloc's leafs, in the order the walk first reads them: the tokens,
    inp_embd (never read), the first cache's K rotation, the positions, its V rotation, its K / V row indices (V one
    per element without flash attention) and mask; then each further cache's rotations, row indices and mask;
    out_ids. The token rows a GET_ROWS node; the last layer's output kept (an output), out_ids' rows gathered from
    it, result_norm and the logits. caches: (layers, cells a stream, mask bytes) in the order the layers read them
    (compute._iswa_caches). Checked node for node against the graph llama-cpp-python 0.3.36 hands
    ggml_gallocr_reserve_n (tests/groundtruth/gallocr_dump.c) on gpt-oss-20b's 4-layer file."""
    g = _Graph()
    add, nodes, rot = g.add, g.nodes, g.rotated
    names = {t.name for t in spec.weights.tensors}
    resid = spec.n_embd * T * F32
    tokens, pos, by_layer, out_ids = _iswa_inputs(g, spec, T, n_outputs, caches, flash_attn, k_rot, v_rot)
    n_inputs = len(nodes)
    cur = add(resid, tokens)  # GET_ROWS of the token embeddings

    for layer in spec.trunk_layers:
        a, f, il = layer.attention, layer.ffn, layer.index
        k_idx, v_idx, mask, cells, krot, vrot = by_layer[il]
        x = add(resid, add(resid, cur, inplace=True), inplace=True)  # RMS_NORM, MUL: attn_norm

        def project(size: int, t: str, x: int = x, il: int = il) -> int:
            return _gpt_oss_projection(g, names, {}, x, il, size, t)

        q_size, kv_size = a.n_heads * a.head_dim_k * T * F32, a.n_kv_heads * a.head_dim_k * T * F32
        q = rot(add(q_size, project(q_size, "q"), pos, inplace=True), krot)  # ROPE of the reshaped view
        k = rot(add(kv_size, project(kv_size, "k"), pos, inplace=True), krot)
        v = rot(project(a.n_kv_heads * a.head_dim_v * T * F32, "v"), vrot)
        g.store_kv(k, v, k_idx, v_idx, None)
        o = add(resid, rot(g.cpu_attention(a, q, mask, cells, T, flash_attn), vrot))  # wo
        if f"blk.{il}.attn_output.bias" in names:
            o = add(resid, o, inplace=True)
        cur = _gpt_oss_ffn(g, names, {}, f, il, add(resid, o, cur, inplace=True), T)
    nodes[cur] = nodes[cur]._replace(output=True)  # t_h_nextn
    _out_rows_head(g, spec, cur, out_ids, n_outputs)
    return n_inputs, nodes


def _iswa_inputs(g: _Graph, spec: ModelSpec, T: int, n_outputs: int, caches: list[tuple[tuple[int, ...], int, int]],
                 flash_attn: bool, k_rot: int, v_rot: int
                 ) -> tuple[int, int, dict[int, tuple[int, int, int, int, int, int]], int]:
    """The graph inputs of an iSWA model on the CPU, ggml-alloc's leafs in the order the walk first reads them: the
    tokens, inp_embd (never read), the first cache's K rotation, the positions, its V rotation, its K / V row
    indices (V one per element without flash attention) and mask; each further cache's rotations, row indices and
    mask; out_ids -> (tokens, positions, per layer (K indices, V indices, mask, cells a stream, K rotation, V
    rotation; -1: none), out_ids). caches: (layers, cells a stream, mask bytes) in the order the layers read them."""
    add = g.add
    a0 = spec.trunk_layers[0].attention
    tokens = add(T * 4)
    add(spec.n_embd * T * F32)  # inp_embd, never read
    by_layer: dict[int, tuple[int, int, int, int, int, int]] = {}
    pos = -1
    for layers, cells, mask_bytes in caches:
        krot = add(k_rot) if k_rot else -1
        if pos < 0:
            pos = add(T * 4)
        vrot = add(v_rot) if v_rot else -1
        v_idx = T * 8 if flash_attn else a0.n_kv_heads * a0.head_dim_v * T * 8
        entry = (add(T * 8), add(v_idx), add(mask_bytes), cells, krot, vrot)
        for il in layers:
            by_layer[il] = entry
    return tokens, pos, by_layer, add(n_outputs * 4)


def gemma_graph(spec: ModelSpec, T: int, n_outputs: int, caches: list[tuple[tuple[int, ...], int, int]],
                flash_attn: bool, k_rot: int = 0, v_rot: int = 0) -> tuple[int, list[Node]]:
    """Gemma 2 and Gemma 3 (src/models/gemma2-iswa.cpp, gemma3.cpp at llama.cpp@0c1e57098) on the CPU alone, node by
    node as ggml_build_forward_expand orders them: the token rows (GET_ROWS) scaled by sqrt(n_embd); per layer the
    attention norm; Q (Gemma 3: RMS-normed by attn_q_norm on its reshaped heads, a new block, the weight in place),
    roped and scaled (f_attention_scale), then K (normed the same way for Gemma 3) and roped, then V, a quantized
    cache's rotations as gpt_oss_graph has them; the K / V stores; FLASH_ATTN_EXT, or KQ (Gemma 2: soft-capped,
    SCALE, TANH, SCALE in place), SOFT_MAX in place, KQV and its CONT; wo; in the last layer out_ids' rows of it,
    the post-attention norm, the rows of the layer input, the residual add; ffn_norm, gate, up, GEGLU, down, the
    post-FFW norm, the residual add; the output norm (result_norm) and the logits (Gemma 2: soft-capped, SCALE,
    TANH, SCALE in place, the last an output). The inputs: _iswa_inputs. Checked node for node against the graph
    llama-cpp-python 0.3.36 hands ggml_gallocr_reserve_n (tests/groundtruth/gallocr_dump.c) on the gemma-3-12b and
    gemma-2-9b files (compute.gemma_cpu_bytes)."""
    g = _Graph()
    add, view, nodes, rot = g.add, g.view, g.nodes, g.rotated
    gemma2 = spec.architecture == "gemma2"
    resid = spec.n_embd * T * F32
    tokens, pos, by_layer, out_ids = _iswa_inputs(g, spec, T, n_outputs, caches, flash_attn, k_rot, v_rot)
    n_inputs = len(nodes)
    cur = add(resid, add(resid, tokens), inplace=True)  # GET_ROWS of the token embeddings, SCALE
    trunk = spec.trunk_layers
    width = {t.name: t.shape for t in spec.weights.tensors}

    def normed(h: int) -> int:  # Gemma 3's head norm: RMS_NORM of the reshaped heads, MUL by the weight
        return h if gemma2 else add(nodes[h].size, add(nodes[h].size, h, inplace=True), inplace=True)

    for layer in trunk:
        a, il = layer.attention, layer.index
        k_idx, v_idx, mask, cells, krot, vrot = by_layer[il]
        inp = cur
        x = add(resid, add(resid, cur, inplace=True), inplace=True)  # RMS_NORM, MUL: attn_norm
        q_size, kv_size = a.n_heads * a.head_dim_k * T * F32, a.n_kv_heads * a.head_dim_k * T * F32
        q = add(q_size, add(q_size, normed(view(add(q_size, x))), pos, inplace=True), inplace=True)  # ROPE, SCALE
        q = rot(q, krot)
        k = rot(add(kv_size, normed(view(add(kv_size, x))), pos, inplace=True), krot)
        v = rot(view(add(a.n_kv_heads * a.head_dim_v * T * F32, x)), vrot)
        g.store_kv(k, v, k_idx, v_idx, None)
        o = add(resid, rot(g.cpu_attention(a, q, mask, cells, T, flash_attn, softcap=gemma2), vrot))  # wo
        r = resid
        if layer is trunk[-1]:
            r = spec.n_embd * n_outputs * F32
            o = add(r, o, out_ids)  # GET_ROWS of the attention's rows
        o = add(r, add(r, o, inplace=True), inplace=True)  # attn_post_norm
        if layer is trunk[-1]:
            inp = add(r, inp, out_ids)  # GET_ROWS of the layer input
        sa = add(r, o, inp, inplace=True)  # sa_out
        rows = r // (spec.n_embd * F32)
        n = add(r, add(r, sa, inplace=True), inplace=True)  # ffn_norm
        ff = width[f"blk.{il}.ffn_down.weight"][0]
        gate, up = add(ff * rows * F32, n), add(ff * rows * F32, n)
        down = add(r, add(ff * rows * F32, gate, up))  # GEGLU, ffn_down
        cur = add(r, add(r, add(r, down, inplace=True), inplace=True), sa, inplace=True)  # post-FFW norm, l_out
    r = nodes[cur].size
    h = add(r, add(r, cur, inplace=True), inplace=True, output=True)  # result_norm
    rows = r // (spec.n_embd * F32)
    logits = add(spec.n_vocab * rows * F32, h, output=not gemma2)
    if gemma2:
        g.softcap(logits, output=True)
    return n_inputs, nodes


def gpt_oss_pipeline_split_graph(spec: ModelSpec, layers: set[int], T: int, n_outputs: int,
                                 caches: list[tuple[tuple[int, ...], int, int]], head: bool, n_copies: int
                                 ) -> tuple[int, list[Node]]:
    """gpt-oss without flash attention as one device of a pipeline-parallel layer split holds its split (the layers
    `layers`, the output head where `head`), for ggml-alloc's chunked replay (galloc.chunk_sizes). With n_copies > 1
    ggml_backend_sched_split_graph (ggml/src/ggml-backend.cpp) gives every split input n_copies copies, each marked
    input and output (never freed), and adds them as leafs "so that they are allocated first", input by input in the
    order the split's nodes first read them: the hidden state handed over (the embeddings on the first device), the
    positions, each cache's K and V row indices and its F32 KQ mask (caches: (layers, cells, mask bytes)), out_ids on
    the device with the head. The layer is openai-moe.cpp's as gpt_oss_device_graph has it, with KQ, its SOFT_MAX
    (in place, with the sinks) and KQV, and no CUDA allocation dependencies. Returns (the leafs, the nodes)."""
    g = _Graph()
    add, view, nodes = g.add, g.view, g.nodes
    names = {t.name for t in spec.weights.tensors}
    leafs: list[int] = []

    def inp(size: int) -> int:  # a split input and its copies, placed in this order before every node
        first = add(size, output=n_copies > 1)
        leafs.append(first)
        leafs.extend(add(size, output=True) for _ in range(n_copies - 1))
        return first

    resid = spec.n_embd * T * F32
    run = [la for la in spec.trunk_layers if la.index in layers]
    by_layer = {il: (cells, mask_bytes, key) for key, (ils, cells, mask_bytes) in enumerate(caches) for il in ils}
    seen: dict[tuple[str, int], int] = {}

    def once(what: str, key: int, size: int) -> int:
        if (what, key) not in seen:
            seen[what, key] = inp(size)
        return seen[what, key]

    cur = -1
    for layer in run:
        a, f, il = layer.attention, layer.ffn, layer.index
        cells, mask_bytes, key = by_layer[il]
        if cur < 0:
            cur = inp(resid)
        x = add(resid, add(resid, cur, inplace=True), inplace=True)  # RMS_NORM, attn_norm

        def project(size: int, t: str, x: int = x, il: int = il) -> int:
            return _gpt_oss_projection(g, names, {}, x, il, size, t)

        pos = once("pos", 0, T * 4)
        q_size, kv_size = a.n_heads * a.head_dim_k * T * F32, a.n_kv_heads * a.head_dim_k * T * F32
        q = add(q_size, project(q_size, "q"), pos, inplace=True)
        v = project(kv_size, "v")
        k = add(kv_size, project(kv_size, "k"), pos, inplace=True)
        add(0, view(k), once("k_idxs", key, T * 8))  # SET_ROWS into the cache
        add(0, view(v), once("v_idxs", key, a.n_kv_heads * a.head_dim_v * T * 8))  # v_trans: a row per element
        o = add(resid, g.cpu_attention(a, q, once("mask", key, mask_bytes), cells, T, False))
        if f"blk.{il}.attn_output.bias" in names:
            o = add(resid, o, inplace=True)
        cur = _gpt_oss_ffn(g, names, {}, f, il, add(resid, o, cur, inplace=True), T)
    if head:
        _out_rows_head(g, spec, cur, inp(n_outputs * 4), n_outputs)
    else:
        add(0, cur)  # the next device's copy reads it
    kept = set(leafs)
    return len(leafs), _reordered(nodes, leafs + [i for i in range(len(nodes)) if i not in kept])


# dense graphs replayed as a device that runs all of them holds them (split inputs first): src/models/phi3.cpp
DENSE_DEVICE_GRAPHS = frozenset({"phi3"})


def phi3_graph(spec: ModelSpec, T: int, n_outputs: int, masks: int, flash_attn: bool = True,
               device: bool = False, host: dict[str, int] | None = None,
               host_kv: dict[int, tuple[int, int]] | None = None) -> tuple[int, list[Node]]:
    """Phi-3's graph (src/models/phi3.cpp at llama.cpp@0c1e57098, with build_qkv, build_attn, build_attn_mha and
    build_ffn of src/llama-graph.cpp) node by node as ggml_build_forward_expand orders it, for an F16 cache (no
    rotations) and no sliding window. Per layer: the attention norm (RMS_NORM, MUL); the fused QKV projection, Q
    and K roped from their views of it (new tensors: the projection has three views), Q scaled in place, V a view;
    the K / V stores (SET_ROWS); FLASH_ATTN_EXT, or KQ, SOFT_MAX in place and KQV with its permuted CONT; the output
    projection; in the last layer the out_ids rows of it and of the residual (GET_ROWS); the residual add, the FFN
    norm, the fused gate-up projection (ffn_up, twice ffn_down's input wide), SWIGLU of its halves (a new tensor:
    GLU runs in place nowhere), ffn_down and the residual add; then the output norm and the logits, graph outputs.
    device: as a device that runs it all (moe_device_graph's split inputs: the embeddings' rows, the positions, the
    K and V indices, the mask and out_ids at the head of the split, each freed after its last reader; the token ids
    and the unread embeddings input stay on the host). Replayed through galloc it gives llama.cpp's CPU buffer on
    the Phi-3-mini-shaped 4-layer file (74.63 / 164.03 MiB at -c 8192 -ub 512 / -c 16384 -ub 1024, flash attention)
    and, as a device at the CUDA buffer's 128-byte alignment, the H200's CUDA0 buffer (74.62 / 152.02, and 552.01
    without flash attention), each to the printed 0.01 MiB. host / host_kv: the layers left on the CPU of a partly
    offloaded load whose pp graph runs on the device, as moe_device_graph has them (each op reading a host weight
    starts a split with the weight's copy as its input; the host layers' K / V stores run on the CPU and their
    attention reads copies of the cache's K and V views, a split of their own)."""
    g = _Graph()
    add, view, nodes = g.add, g.view, g.nodes
    host, host_kv = host or {}, host_kv or {}
    w = partial(g.host_weight, host if device else {})  # w(il, *names): a host weight's copy, () on the CPU
    resid = spec.n_embd * T * F32
    a0 = spec.trunk_layers[0].attention if spec.trunk_layers else None
    v_idx_size = T * 8 if flash_attn or a0 is None else a0.n_kv_heads * a0.head_dim_v * T * 8
    if device:
        inp = g.inp
        cur, pos = inp(resid), inp(T * 4)  # the copy of the host's GET_ROWS result, the positions
        k_idx, v_idx = inp(T * 8), inp(v_idx_size)
        mask, out_ids = inp(masks), inp(n_outputs * 4)
    else:
        tokens, _, pos, _, k_idx, v_idx, mask, out_ids = g.token_inputs(resid, T, masks, n_outputs, v_idx_size)
    n_inputs = len(nodes)
    if not device:
        cur = add(resid, tokens)  # GET_ROWS of the token embeddings
    width = {t.name: t.shape for t in spec.weights.tensors}
    trunk = spec.trunk_layers
    for layer in trunk:
        a, il = layer.attention, layer.index
        res = cur
        x = add(resid, add(resid, cur, inplace=True), *w(il, "attn_norm.weight"), inplace=True)  # RMS_NORM, MUL
        q_size = a.n_heads * a.head_dim_k * T * F32
        kv_size = a.n_kv_heads * a.head_dim_k * T * F32
        qkv = add(q_size + kv_size + a.n_kv_heads * a.head_dim_v * T * F32, x, *w(il, "attn_qkv.weight"))
        q = add(q_size, add(q_size, view(qkv), pos, inplace=True), inplace=True)  # ROPE of its Q view, SCALE
        v = view(qkv)
        k = add(kv_size, view(qkv), pos, inplace=True)  # ROPE of its K view
        kc, vc = g.store_kv(k, v, k_idx, v_idx, host_kv.get(il) if device else None)
        o_size = a.n_heads * a.head_dim_v * T * F32
        if flash_attn:
            o = view(add(o_size, view(view(q)), *kc, *vc, mask))  # FLASH_ATTN_EXT, reshaped
        else:
            kq = add(masks // 4 * a.n_heads * F32, *kc, view(view(q)))  # KQ over the cache's n_kv cells
            kq = add(nodes[kq].size, kq, mask, inplace=True)  # SOFT_MAX
            o = add(o_size, view(add(o_size, *vc, kq)))  # KQV, the CONT of its permuted view
        o = add(resid, o, *w(il, "attn_output.weight"))  # the output projection
        r = resid
        if layer is trunk[-1]:
            r = spec.n_embd * n_outputs * F32
            o, res = add(r, o, out_ids), add(r, res, out_ids)  # GET_ROWS of cur and the residual
        ffn_inp = add(r, o, res, inplace=True)
        n = add(r, add(r, ffn_inp, inplace=True), *w(il, "ffn_norm.weight"), inplace=True)  # RMS_NORM, FFN norm
        rows = r // (spec.n_embd * F32)
        up = add(width[f"blk.{il}.ffn_up.weight"][-1] * rows * F32, n, *w(il, "ffn_up.weight"))  # fused gate-up
        swiglu = add(width[f"blk.{il}.ffn_down.weight"][0] * rows * F32, up)
        cur = add(r, ffn_inp, add(r, swiglu, *w(il, "ffn_down.weight")), inplace=True)  # ffn_down, residual add
    r = spec.n_embd * n_outputs * F32
    h = add(r, add(r, cur, inplace=True), inplace=True, output=True)  # RMS_NORM, result_norm
    add(spec.n_vocab * n_outputs * F32, h, output=True)  # result_output
    if device:
        return 0, _hoisted(nodes, g.inputs, g.splits)
    return n_inputs, nodes


def deci_graph(spec: ModelSpec, T: int, n_outputs: int, masks: int, flash_attn: bool = True, k_rot: int = 0,
               v_rot: int = 0, qk_norm: bool = False) -> tuple[int, list[Node]]:
    """DeciLM's graph (Nemotron-Super / Ultra / 51B: src/models/deci.cpp at llama.cpp@0c1e57098, with build_qkv's
    separate Q / K / V path, build_attn, build_attn_mha and build_ffn of src/llama-graph.cpp) node by node as
    ggml_build_forward_expand orders it, on the CPU, with no sliding window; the inputs as phi3_graph has them, and a
    quantized cache's rotation matrices (k_rot / v_rot bytes; 0: none) where _moe_trunk_graph has them: Q and K
    rotated after RoPE, V before its store, the attention output un-rotated (llm_graph_context::build_attn,
    llama_mul_mat_hadamard: a MUL_MAT between two reshapes). A layer with attention: the norm (RMS_NORM, MUL), Q / K / V each a product and its
    reshape, expanded Q (roped), V, K (roped) as build_attn does ("expand k later"), the K / V stores,
    FLASH_ATTN_EXT (or KQ, SOFT_MAX in place, KQV and its CONT), the output projection and the residual add
    (ffn_inp). A layer with no heads (n_head 0, "attention-free layer of Llama-3_1-Nemotron-51B"): cur = inpL, no
    new tensor, and ffn_inp is the layer's input itself. The last layer gathers the out_ids rows of cur and, where
    it runs attention, of the residual (an unread GET_ROWS of inpSA is never expanded). build_ffn with
    LLM_FFN_PAR: ffn_up, ffn_gate, SWIGLU of the two (a new tensor), ffn_down, then ggml_add(cur, ffn_inp) in place
    of ffn_down's product. A layer with no FFN (n_ff 0) `continue`s before inpL = cur: its output is never read,
    and only what build_attn expanded (Q, V, K and the K / V stores) is in the graph. Then the output norm and the
    logits, graph outputs. The logits land above whatever the attention-free tail leaves in the freed blocks below them.

    The same graph is Llama's (src/models/llama.cpp llama_model_llama::graph: every layer attends, a dense SwiGLU
    FFN, no biases) and, with qk_norm, Qwen3's (src/models/qwen3.cpp: Q and K each RMS-normed by attn_q_norm /
    attn_k_norm on their reshaped heads before RoPE: RMS_NORM of the view, a new block, and MUL in place). Checked
    against the graphs llama-cpp-python 0.3.36 hands ggml_gallocr_reserve_n (tests/groundtruth/gallocr_dump.c)
    through the accuracy grid's llama-3.1-8b and qwen3-8b files, every setting equal (compute.dense_cpu_bytes)."""
    g = _Graph()
    add, view, nodes = g.add, g.view, g.nodes
    resid = spec.n_embd * T * F32
    a0 = next((la.attention for la in spec.trunk_layers if la.attention is not None), None)
    v_idx_size = T * 8 if flash_attn or a0 is None else a0.n_kv_heads * a0.head_dim_v * T * 8
    tokens, krot, pos, vrot, k_idx, v_idx, mask, out_ids = g.token_inputs(resid, T, masks, n_outputs, v_idx_size,
                                                                           k_rot, v_rot)
    n_inputs = len(nodes)
    cur = add(resid, tokens)  # GET_ROWS of the token embeddings
    width = {t.name: t.shape for t in spec.weights.tensors}
    trunk = spec.trunk_layers

    def rot(h: int, r: int) -> int:  # llama_mul_mat_hadamard
        return view(add(nodes[h].size, r, view(h))) if r >= 0 else h

    def normed(h: int) -> int:  # qk_norm: RMS_NORM of the reshaped heads, MUL by the weight
        return add(nodes[h].size, add(nodes[h].size, h, inplace=True), inplace=True) if qk_norm else h

    for layer in trunk:
        a, il = layer.attention, layer.index
        last = layer is trunk[-1]
        r = spec.n_embd * n_outputs * F32 if last else resid
        ff = width.get(f"blk.{il}.ffn_down.weight")
        if not ff and not (a is not None and a.n_heads and a.n_kv_heads):
            continue  # n_ff 0 (Nemotron-Ultra-253B): `continue` before inpL = cur, nothing of the layer expanded
        if a is not None and a.n_heads:
            res = cur
            x = add(resid, add(resid, cur, inplace=True), inplace=True)  # RMS_NORM, MUL
        if a is not None and a.n_heads and not a.n_kv_heads:  # "linear attention" of Nemotron-51B: wo alone
            o = add(resid, x)
        elif a is not None and a.n_heads:
            q_size = a.n_heads * a.head_dim_k * T * F32
            kv_size = a.n_kv_heads * a.head_dim_k * T * F32
            q = rot(add(q_size, normed(view(add(q_size, x))), pos, inplace=True), krot)  # wq, its reshape, ROPE
            v = rot(view(add(a.n_kv_heads * a.head_dim_v * T * F32, x)), vrot)  # wv, its reshape
            k = rot(add(kv_size, normed(view(add(kv_size, x))), pos, inplace=True), krot)  # wk, its reshape, ROPE
            add(0, view(k), k_idx)  # SET_ROWS of K's and V's 2-d views into the caches
            add(0, view(v), v_idx)
            if not ff:  # n_ff 0: only build_attn's expanded Q, V, K and the stores are in the graph
                continue
            o_size = a.n_heads * a.head_dim_v * T * F32
            if flash_attn:
                o = view(add(o_size, view(q), mask))  # FLASH_ATTN_EXT of the permuted Q, reshaped
            else:
                kq = add(masks // 4 * a.n_heads * F32, view(q))  # KQ over the cache's n_kv cells
                kq = add(nodes[kq].size, kq, mask, inplace=True)  # SOFT_MAX
                o = add(o_size, view(add(o_size, kq)))  # KQV, the CONT of its permuted view
            o = add(resid, rot(o, vrot))  # wo of the un-rotated output
        if a is not None and a.n_heads:
            if last:
                o, res = add(r, o, out_ids), add(r, res, out_ids)  # GET_ROWS of cur and the residual
            ffn_inp = add(r, o, res, inplace=True)
        else:
            ffn_inp = add(r, cur, out_ids) if last else cur  # cur = inpL (its rows in the last layer)
        rows = r // (spec.n_embd * F32)
        n = add(r, add(r, ffn_inp, inplace=True), inplace=True)  # RMS_NORM, MUL: ffn_norm
        up = add(ff[0] * rows * F32, n)
        gate = add(ff[0] * rows * F32, n)
        down = add(r, add(ff[0] * rows * F32, gate, up))  # SWIGLU, ffn_down
        cur = add(r, down, ffn_inp, inplace=True)
    r = nodes[cur].size
    h = add(r, add(r, cur, inplace=True), inplace=True, output=True)  # RMS_NORM, result_norm
    add(spec.n_vocab * (r // (spec.n_embd * F32)) * F32, h, output=True)  # result_output
    return n_inputs, nodes


def deepseek2_device_graph(spec: ModelSpec, T: int, n_outputs: int, n_kv: int, masks: int, attn: str,
                           fa_extra: int = 0,
                           k_rot: int = 0, v_rot: int = 0, v_cont: bool = False, host: dict[str, int] | None = None,
                           host_kv: dict[int, tuple[int, int]] | None = None, cpu: bool = False,
                           k_es: int = 2) -> tuple[int, list[Node]]:
    """DeepSeek-V2 / V3's graph (src/models/deepseek2.cpp at llama.cpp@0c1e57098, with build_attn_mha and
    build_moe_ffn of src/llama-graph.cpp) as a ggml-cuda device that runs it holds it, by moe_device_graph's rules
    (the split's input copies first, each freed after its last reader; the host layers' weight copies, one split
    each; the allocation dependencies of ggml_backend_cuda_graph_optimize), node by node as the GGML_SCHED_DEBUG=2
    dumps of the deepseek-v3 and legacy files order them (tests/fixtures/llamacpp_cuda/h200_sched_debug.json.gz).
    Per layer: the attention norm, the LoRA'd Q (q_a, its norm, q_b), the latent projection kv_cmpr_pe and its
    norm (a new block: the RMS_NORM of a view), then
    - absorbed MLA (latent cache): q_nope absorbed by wk_b, q_pe roped from its view, their concat Qcur; k_pe roped,
      Kcur the concat of the latent and k_pe; its store; FLASH_ATTN_EXT (the F16 copy of a non-F16 latent:
      fa_extra), wv_b's product and its CONT;
    - the legacy decompressed heads (a GGUF with attn_kv_b): Q roped in place; wkv_b's kv rows, V's CONT of its view,
      k_pe roped and repeated over the heads, Kcur the concat of k_nope and it; a quantized cache rotates Q, V and K
      (k_rot / v_rot: MUL_MAT by the rotation input) and un-rotates the attention output; the K / V stores. attn
      "kq": KQ over the cache's n_kv cells, SOFT_MAX in place, KQV and its permuted CONT (v_cont: the cache keeps
      flash attention's V layout, -fa auto turned off, so V's view is first made contiguous, F16); "host": the
      attention runs on the CPU (flash attention ggml-cuda has no kernel for, or -nkvo's attention without it): its
      device sources are read by the scheduler's input dependency at the start of the CPU split (ggml-backend.cpp
      ggml_backend_sched_split_graph: "add a dependency to the input source so that it is not freed before the copy
      is done"), and the output comes back as the next device split's input;
    the output projection, the residual; in the last layer out_ids' rows of it and of the layer input (GET_ROWS)
    before the FFN; a dense layer's SwiGLU FFN, an MoE layer's sigmoid router (logits, SIGMOID in place, its
    reshape, the biased scores, ARGSORT and its top-k view, GET_ROWS of the weights, their normalisation and
    SCALE: the twelve nodes ggml_cuda_topk_moe_fusion fuses, kept with their sources until the node after them),
    the experts (MUL_MAT_ID gate and up, SWIGLU, down), the weighted rows kept with the weights until their sum,
    the shared expert and the residual; then the output norm and the logits.
    ggml_backend_sched_split_graph hands graph_optimize one split at a time, so where a host layer's exp_probs_b
    copy starts a split inside the router's nodes ggml_cuda_topk_moe_fusion matches nothing and adds no dependency.
    host_kv: per host layer the bytes of its cache's K and V views, copied in for its attention (MLA: the latent
    K view and its V view, both of the K cache; the V view's ggml_nbytes ends kv_lora_rank into the last row).
    At the CUDA buffer's 128-byte alignment it gives the H200's CUDA0 buffer to the byte on every setting of the
    deepseek-v3 and legacy 4-layer files it covers (tests/test_llamacpp_cuda_measured.py): legacy 1287.01 MiB at
    -c 4096 (FA auto, off), 362.00 with flash attention on the CPU (q8_0), 350.05 at -nkvo, 1633.25 at -ngl 2;
    deepseek-v3 505.16 at -ngl 2 -c 32768. Returns (0, the nodes).

    cpu: the graph as the CPU backend alone is handed it (compute.deepseek2_cpu_bytes): no split, no copies, no
    graph_optimize dependencies; the inputs ggml-alloc's leafs in the order the walk first reads them (the tokens,
    inp_embd never read, K's rotation, the positions, V's rotation, the K / V row indices, the mask, out_ids:
    _Graph.token_inputs) and the token rows a GET_ROWS node; the legacy heads' attention FLASH_ATTN_EXT (attn "fa",
    reshaped, un-rotated) or KQ's; absorbed MLA without flash attention (attn "kq": V the CONT of the latent's
    transposed view in the cache's type, k_es bytes an element, then KQ, SOFT_MAX in place, KQV, wv_b's product and
    its CONT). Checked node for node against the graph llama-cpp-python 0.3.36 hands ggml_gallocr_reserve_n
    (tests/groundtruth/gallocr_dump.c) on the deepseek-v3 and legacy 4-layer files. Returns (the leafs' count, the
    nodes)."""
    g = _Graph()
    add, view, nodes, inp = g.add, g.view, g.nodes, g.inp
    host, host_kv = host or {}, host_kv or {}
    names = {t.name for t in spec.weights.tensors}
    w = partial(g.host_weight, host)  # w(il, name): the copy of a host weight an op reads, () for a device one
    resid = spec.n_embd * T * F32
    trunk = spec.trunk_layers
    a0 = trunk[0].attention
    mla = bool(a0.kv_lora_rank and a0.latent_cache)
    transposed_v = attn == "kq" and not v_cont and not mla
    v_idx_size = a0.n_kv_heads * a0.head_dim_v * T * 8 if transposed_v else T * 8
    if cpu:
        tokens = add(T * 4)
        add(resid)  # inp_embd, never read
        krot = add(k_rot) if k_rot else -1
        pos = add(T * 4)
        vrot = add(v_rot) if v_rot else -1
        k_idx = add(T * 8)
        v_idx = -1 if mla else add(v_idx_size)
        mask, out_ids = add(masks), add(n_outputs * 4)
        n_inputs = len(nodes)
        cur = add(resid, tokens)  # GET_ROWS of the token embeddings
    else:
        embd = inp(resid)
        pos = inp(T * 4)
        krot = inp(k_rot) if k_rot else -1
        vrot = inp(v_rot) if v_rot else -1
        k_idx = inp(T * 8)
        v_idx = -1 if mla else inp(v_idx_size)
        mask = inp(masks)
        out_ids = inp(n_outputs * 4)
        cur = embd
    for layer in trunk:
        a, f, il = layer.attention, layer.ffn, layer.index
        H, r, rope, nope = a.n_heads, a.kv_lora_rank, a.qk_rope_head_dim, a.qk_nope_head_dim
        dk, dv = nope + rope, a.v_head_dim or a.head_dim_v
        x = add(resid, add(resid, cur, inplace=True), *w(il, "attn_norm.weight"), inplace=True)
        if a.q_lora_rank:
            q = add(a.q_lora_rank * T * F32, x, *w(il, "attn_q_a.weight"))
            q = add(a.q_lora_rank * T * F32, add(a.q_lora_rank * T * F32, q, inplace=True),
                    *w(il, "attn_q_a_norm.weight"), inplace=True)
            q = add(H * dk * T * F32, q, *w(il, "attn_q_b.weight"))
        else:
            q = add(H * dk * T * F32, x, *w(il, "attn_q.weight"))
        q = view(q)  # reshaped to heads
        kv_size = (r + rope) * T * F32
        if mla:
            absorbed = view(add(H * r * T * F32, *w(il, "attn_k_b.weight"), view(q)))  # wk_b x q_nope, permuted
            q_pe = add(H * rope * T * F32, view(q), pos, inplace=True)  # ROPE of q's view: a new block
            qcur = add(H * (r + rope) * T * F32, absorbed, q_pe)  # CONCAT
            kvp = add(kv_size, x, *w(il, "attn_kv_a_mqa.weight"))
            cmpr, k_pe = view(kvp), view(kvp)
            cmpr = add(r * T * F32, add(r * T * F32, cmpr, inplace=True), *w(il, "attn_kv_a_norm.weight"),
                       inplace=True)
            k_pe = add(rope * T * F32, k_pe, pos, inplace=True)
            kcur = add(kv_size, view(cmpr), k_pe)  # CONCAT
            kv = host_kv.get(il)
            add(0, view(kcur), *(() if kv else (k_idx,)))  # SET_ROWS into the latent cache
            kc = ()
            if kv:
                g.splits.append(len(nodes))
                kc = (inp(kv[0]), inp(kv[1]))
            if attn == "kq":  # without flash attention: V the contiguous transposed latent, KQ, SOFT_MAX, KQV
                vt = add(n_kv * r * k_es, *kc)  # CONT of the latent's transposed view
                kq = add(n_kv * T * H * F32, view(view(qcur)))
                kq = add(nodes[kq].size, kq, mask, inplace=True)  # SOFT_MAX
                o = add(H * r * T * F32, vt, kq)  # KQV
                o = add(H * dv * T * F32, *w(il, "attn_v_b.weight"), o)  # wv_b
            else:
                o = add(H * r * T * F32 + fa_extra, view(qcur), *kc, mask)  # FLASH_ATTN_EXT
                o = add(H * dv * T * F32, *w(il, "attn_v_b.weight"), view(view(o)))  # wv_b
            o = add(H * dv * T * F32, view(o))  # CONT of the permuted rows
        else:
            q = add(H * dk * T * F32, q, pos, inplace=True)  # ROPE of the rope dims (ggml_rope_set_offset)
            if krot >= 0:
                q = view(add(H * dk * T * F32, krot, view(q)))
            kvp = add(kv_size, x, *w(il, "attn_kv_a_mqa.weight"))
            cmpr, k_pe = view(kvp), view(kvp)
            cmpr = add(r * T * F32, add(r * T * F32, cmpr, inplace=True), *w(il, "attn_kv_a_norm.weight"),
                       inplace=True)
            kvb = add(H * (nope + dv) * T * F32, *w(il, "attn_kv_b.weight"), cmpr)  # wkv_b
            v = add(H * dv * T * F32, view(kvb))  # CONT of V's view
            if vrot >= 0:
                v = view(add(H * dv * T * F32, vrot, view(v)))
            k_pe = add(rope * T * F32, k_pe, pos, inplace=True)
            rep = add(H * rope * T * F32, k_pe)  # REPEAT over the heads
            k = add(H * dk * T * F32, view(kvb), rep)  # CONCAT
            if krot >= 0:
                k = view(add(H * dk * T * F32, krot, view(k)))
            kv = host_kv.get(il)
            o_size = H * dv * T * F32
            if attn == "host":
                # the stores (into a host cache: on the CPU, reading the rows' copies) and the attention on the CPU
                if kv:
                    g.splits.append(len(nodes))
                    add(0, view(k))
                    add(0, view(v))
                else:
                    add(0, view(k), k_idx)
                    add(0, view(v), v_idx)
                    g.splits.append(len(nodes))
                add(0, view(view(q)))  # the input dependency on Q before the CPU split
                g.splits.append(len(nodes))
                o = view(inp(o_size))  # the attention output copied back
            elif attn == "fa":  # on the CPU: FLASH_ATTN_EXT over the cache's K and V views, reshaped
                add(0, view(k), k_idx)
                add(0, view(v), v_idx)
                o = view(add(o_size, view(view(q)), mask))
            else:
                add(0, view(k), *(() if kv else (k_idx,)))
                add(0, view(v), *(() if kv else (v_idx,)))
                kc = vc = ()
                if kv:
                    g.splits.append(len(nodes))
                    kc, vc = (inp(kv[0]),), (inp(kv[1]),)
                vt = (add(n_kv * a.n_kv_heads * dv * 2, *vc),) if v_cont else vc  # V's contiguous copy
                kq = add(n_kv * T * H * F32, *kc, view(view(q)))
                kq = add(nodes[kq].size, kq, mask, inplace=True)  # SOFT_MAX
                o = add(o_size, view(add(o_size, *vt, kq)))  # KQV, the CONT of its permuted view
            if vrot >= 0:
                o = view(add(o_size, vrot, view(o)))
        o = add(resid, o, *w(il, "attn_output.weight"))
        rows, rr = T, resid
        inpsa = cur
        if layer is trunk[-1]:
            rows, rr = n_outputs, spec.n_embd * n_outputs * F32
            o, inpsa = add(rr, o, out_ids), add(rr, inpsa, out_ids)
        ffn_inp = add(rr, o, inpsa, inplace=True)
        n = add(rr, add(rr, ffn_inp, inplace=True), *w(il, "ffn_norm.weight"), inplace=True)
        if f.is_moe:
            scores = f.n_experts * rows * F32
            logits = add(scores, n, *w(il, "ffn_gate_inp.weight"))
            first = len(nodes)
            probs = add(scores, logits, inplace=True)  # SIGMOID
            probs_r = view(probs)
            ranked = probs
            if f"blk.{il}.exp_probs_b.bias" in names:
                ranked = add(scores, probs, *w(il, "exp_probs_b.bias"), inplace=True)
            topk = view(add(scores, ranked))  # ARGSORT, its top-k view
            used = f.n_experts_used * rows * F32
            weights = view(add(used, probs_r, topk))  # GET_ROWS, reshaped
            total = add(rows * F32, add(rows * F32, weights), inplace=True)  # SUM_ROWS, CLAMP (in place)
            weights = view(add(used, weights, total, inplace=True))  # DIV, reshaped
            weights = add(used, weights, inplace=True)  # SCALE by expert_weights_scale
            fused = range(first, len(nodes))
            n_r = view(n)
            # graph_optimize sees one split at a time: a host bias's copy starts a split inside the fused nodes
            if not cpu and topk_moe_fused(f.n_experts) and not g.split_between(first, len(nodes)):
                add(0, *_kept(nodes, fused))
            wide = f.n_experts_used * f.n_ff_expert * rows * F32
            gate = add(wide, *w(il, "ffn_gate_exps.weight"), n_r, topk)
            up = add(wide, *w(il, "ffn_up_exps.weight"), n_r, topk)
            swiglu = add(wide, gate, up)  # before the down product's split (its weight's copy)
            down = add(f.n_experts_used * rr, *w(il, "ffn_down_exps.weight"), swiglu, topk)
            weighted = add(f.n_experts_used * rr, down, weights, inplace=True)
            parts = [view(weighted) for _ in range(f.n_experts_used)]
            ffn_out = parts[0]
            for p in parts[1:]:
                ffn_out = add(rr, ffn_out, p, inplace=True)
            if not cpu and moe_reduction_fused(f.n_experts_used):
                add(0, down, weights)
            sh = f.n_ff_shared * rows * F32
            s_gate = add(sh, n, *w(il, "ffn_gate_shexp.weight"))
            s_up = add(sh, n, *w(il, "ffn_up_shexp.weight"))
            s_out = add(rr, add(sh, s_gate, s_up), *w(il, "ffn_down_shexp.weight"))
            ffn_out = add(rr, ffn_out, s_out, inplace=True)
        else:
            wide = f.n_ff * rows * F32
            d_gate, d_up = add(wide, n, *w(il, "ffn_gate.weight")), add(wide, n, *w(il, "ffn_up.weight"))
            ffn_out = add(rr, add(wide, d_gate, d_up), *w(il, "ffn_down.weight"))
        cur = add(rr, ffn_out, ffn_inp, inplace=True)
    rr = spec.n_embd * n_outputs * F32
    h = add(rr, add(rr, cur, inplace=True), inplace=True, output=True)  # RMS_NORM, result_norm
    add(spec.n_vocab * n_outputs * F32, h, output=True)
    if cpu:
        return n_inputs, nodes
    return 0, _hoisted(nodes, g.inputs, g.splits)


def mamba2_offload_graph(spec: ModelSpec, T: int, n_outputs: int, host: dict[str, int]) -> tuple[int, list[Node]]:
    """Mamba-2's pp graph (src/models/graph-context-mamba.cpp build_mamba2_layer, one sequence) as the ggml-cuda device
    holds it when the first layers are left on the CPU (`host`: their weights' sizes by name), in the order and splits
    ggml_backend_sched_split_graph gives it (the GGML_SCHED_DEBUG=2 dump of mamba2-2.7b -ngl 2, tests/fixtures/
    llamacpp_cuda): every op of a host layer runs on the device (op offload) but its conv-state store and SSM_SCAN,
    which read the host's recurrent state; an op reading a host weight starts a split with the weight's copy as its
    input when the split has inputs already (else the copy joins it); the host's results come back as split inputs (the
    token rows, the gathered conv states, the scan's y view, the scan's own layout-keeping copy), and a device tensor
    a host split reads stays alive until that split (the scheduler's input dependency). The scan's x / B / C are views
    of the conv output, also read by the y * D product after the scan; z is copied out of the projection after it.
    A device layer's build_rs also gathers the extra states (src/llama-graph.cpp build_rs: GET_ROWS by s_copy_extra,
    then their CPY), none with one sequence: tensors of no bytes, allocated and freed all the same (galloc's empty
    nodes); the node-by-node reconstruction of this graph with ggml_backend_sched_split_graph's graph_copy (each
    input's dependency view and copy at its split's start) through ggml-alloc.c gives the H200's CUDA0 buffer at
    -ngl 1 / 2 / 3 / 4 / 99 to the byte only with them.
    Returns (the number of inputs, the nodes) for _hoisted's placement."""
    g = _Graph()
    add, view, nodes = g.add, g.view, g.nodes
    state = {"inputs": False}

    def split() -> None:
        g.splits.append(len(nodes))
        state["inputs"] = False

    def fresh(size: int) -> int:
        state["inputs"] = True
        return g.inp(size)

    def w(name: str) -> tuple[int, ...]:
        if name not in host:
            return ()
        if state["inputs"]:
            split()
        return (fresh(host[name]),)

    f32 = 4
    resid = spec.n_embd * T * f32
    trunk = spec.trunk_layers
    on_host = [any(n.startswith(f"blk.{la.index}.") for n in host) for la in trunk]
    split()
    cur = res = fresh(resid)  # the host's token rows (GET_ROWS of the embeddings)
    # rs_s_copy's views of the sequences' state rows and of the extra rows (build_rs_inp_impl: s_copy_main, and
    # s_copy_extra, empty with one sequence: n_rs - n_seqs = 0), each copied once for the graph, read by every
    # device layer's build_rs; the empty copy and the empty GET_ROWS of the extra states are tensors of no bytes that
    # ggml-alloc still allocates and frees (galloc's Node.empty), leaving an empty free block where they sat
    ids: list[int] = []

    def extra_rows() -> None:  # build_rs's GET_ROWS of the extra states (none) and their CPY into the cache
        add(0, add(0, ids[1], empty=True))

    def gather(r) -> int:  # build_rs's GET_ROWS of the conv states, on the device, then of the extra ones
        state["inputs"] = True
        if not ids:
            ids.extend((g.inp(4), g.inp(0, empty=True)))
        rows = add(r.conv * f32, ids[0])
        extra_rows()
        return rows

    r_prev = None if on_host[0] else gather(trunk[0].recurrent)
    cur = add(resid, cur, inplace=True)  # RMS_NORM
    for k, la in enumerate(trunk):
        r, il, cpu = la.recurrent, la.index, on_host[k]
        conv_dim = r.d_inner + 2 * r.n_group * r.d_state
        x = add(resid, cur, *w(f"blk.{il}.attn_norm.weight"), inplace=True)  # MUL by the norm weight
        wi = w(f"blk.{il}.ssm_in.weight")
        rs = fresh(r.conv * f32) if cpu else r_prev  # the conv states gathered (build_rs), on the host or here
        proj = add((2 * r.d_inner + 2 * r.n_group * r.d_state + r.n_heads) * T * f32, x, *wi)
        concat = add((r.d_conv - 1 + T) * conv_dim * f32, rs, view(proj))
        if cpu:
            split()  # the host stores the conv state from its copy of the concat's view
        add(0, view(concat))
        if cpu:
            split()
        conv = add(conv_dim * T * f32, concat, *w(f"blk.{il}.ssm_conv1d.weight"))  # SSM_CONV
        conv = add(conv_dim * T * f32, conv, *w(f"blk.{il}.ssm_conv1d.bias"), inplace=True)  # ADD
        conv = add(conv_dim * T * f32, conv, inplace=True)  # SILU
        dt = add(r.n_heads * T * f32, view(proj))  # CONT
        dt = add(r.n_heads * T * f32, dt, *w(f"blk.{il}.ssm_dt.bias"), inplace=True)
        if cpu:  # SSM_SCAN on the host: x, B, C and dt copied out
            split()
            add(0, view(conv), view(conv), view(conv), dt)
            split()
            scan = None
        else:
            scan = add((r.d_inner * T + r.ssm) * f32, view(conv), dt, view(conv), view(conv), ids[0])
            extra_rows()
            add(0, view(scan))  # the state's store into the cache
        nxt = trunk[k + 1] if k + 1 < len(trunk) else None
        r_prev = None
        if nxt is not None and not on_host[k + 1]:  # the next layer's conv states gathered here (build_rs)
            r_prev = gather(nxt.recurrent)
        z = add(r.d_inner * T * f32, view(proj))  # CONT of z
        xd = add(r.d_inner * T * f32, view(conv), *w(f"blk.{il}.ssm_d"))  # y's D term
        y = fresh(r.d_inner * T * f32) if cpu else view(scan)  # the scan's y (its view, copied in)
        y = add(r.d_inner * T * f32, y, xd, inplace=True)
        y = add(r.d_inner * T * f32, z, y)  # SWIGLU
        y = add(r.d_inner * T * f32, view(y), inplace=True)  # the grouped RMS_NORM of its reshape
        y = add(r.d_inner * T * f32, y, *w(f"blk.{il}.ssm_norm.weight"), inplace=True)
        wo = w(f"blk.{il}.ssm_out.weight")
        if nxt is None:
            state["inputs"] = True
            ids = g.inp(n_outputs * 4)
        out = add(resid, view(y), *wo)
        if nxt is None:
            rows = spec.n_embd * n_outputs * f32
            out = add(rows, add(rows, out, ids), add(rows, res, ids), inplace=True)  # GET_ROWS x2, ADD
            out = add(rows, add(rows, out, inplace=True), inplace=True, output=True)  # result_norm
            add(spec.n_vocab * n_outputs * f32, out, output=True)  # the logits
        else:
            res = add(resid, out, res, inplace=True)
            cur = add(resid, res)  # the next layer's RMS_NORM
    return 0, _hoisted(nodes, g.inputs, g.splits)


# the dense graphs replayed on the CPU alone (compute.dense_cpu_bytes)
DENSE_CPU_GRAPHS = {"phi3": phi3_graph, "deci": deci_graph, "llama": deci_graph,
                    "qwen3": partial(deci_graph, qk_norm=True), "qwen3moe": qwen3moe_graph}
# those that take a quantized cache's rotations (k_rot / v_rot)
DENSE_CPU_ROTATED = frozenset({"deci", "llama", "qwen3", "qwen3moe", "falcon-h1", "jamba", "nemotron_h", "nemotron_h_moe", "granitehybrid",
                               "mamba2"})


def _rs_inputs(g: _Graph, resid: int, T: int, masks: int, n_outputs: int, v_idx_size: int, k_rot: int, v_rot: int,
               n_seqs: int) -> tuple[int, int, int, int, int, int, int, int, int]:
    """A hybrid token graph's inputs in llm_graph_context's order (build_inp_mem_hybrid: the attention's K / V row
    indices and masks, then the recurrent states' s_copy, n_seqs int32): _Graph.token_inputs with s_copy before
    out_ids -> (tokens, k_rot, pos, v_rot, k_idx, v_idx, mask, s_copy, out_ids)."""
    tokens = g.add(T * 4)
    g.add(resid)  # inp_embd, never read
    krot = g.add(k_rot) if k_rot else -1
    pos = g.add(T * 4)
    vrot = g.add(v_rot) if v_rot else -1
    k_idx, v_idx, mask = g.add(T * 8), g.add(v_idx_size), g.add(masks)
    return tokens, krot, pos, vrot, k_idx, v_idx, mask, g.add(n_seqs * 4), g.add(n_outputs * 4)


def falcon_h1_graph(spec: ModelSpec, T: int, n_outputs: int, masks: int, flash_attn: bool = True, k_rot: int = 0,
                    v_rot: int = 0, n_seqs: int = 1) -> tuple[int, list[Node]]:
    """Falcon-H1's graph (src/models/falcon-h1.cpp at llama.cpp@0c1e57098, with build_attn / build_attn_mha,
    build_ffn and build_rs of src/llama-graph.cpp and build_mamba2_layer of src/models/graph-context-mamba.cpp) on the
    CPU, node by node as ggml_build_forward_expand orders it (the GGML_SCHED_DEBUG order of the reserve): every layer
    attends first (the norm; Q, V, K and their ropes, Q / V / K rotated for a quantized cache as deci_graph has them;
    the K / V stores; FLASH_ATTN_EXT, or KQ, SOFT_MAX in place, KQV and its CONT), then its Mamba-2 block, which the
    conv- and ssm-state stores expand before the attention's output projection: build_rs's GET_ROWS of the n_seqs
    conv states by s_copy and of the extra states (none: a tensor of no bytes, and its copy into the cache), the
    block's own norm of the layer input, the in-projection, the CONCAT of the states with its x / B / C, the conv state
    store, SSM_CONV, bias and SiLU in place, dt's CONT and bias, SSM_SCAN (y and the n_seqs states), the extra states
    again, the state store; then wo, z's CONT, y + x * D (a new tensor: x is a view), SWIGLU of z and y, the grouped
    RMS norm and its weight in place, ssm_out, attn_out + ssm_out + the layer input (the last layer's sum gathered by
    out_ids), the SwiGLU FFN (gate, up, GLU, down) and its residual add; the output norm and the logits. The last
    layer's attention frees the masks before its Mamba-2 block, so the recurrent inputs do not outlive them: the
    logits land above the output norm at the bottom. Replayed through galloc it equals the reserve llama-cpp-python
    0.3.36 prints on the Falcon-H1-1.5B-shaped file (tests/test_llamacpp_real_shapes.py): 136.00 MiB at 8K and at
    16K x 4 unified, 140.00 at 8K x 2 without flash attention, 161.18 at 32K with a q8_0 cache."""
    g = _Graph()
    add, view, nodes = g.add, g.view, g.nodes
    resid = spec.n_embd * T * F32
    trunk = spec.trunk_layers
    a0 = next((la.attention for la in trunk if la.attention is not None), None)
    v_idx_size = T * 8 if flash_attn or a0 is None else a0.n_kv_heads * a0.head_dim_v * T * 8
    tokens, krot, pos, vrot, k_idx, v_idx, mask, s_copy, out_ids = _rs_inputs(
        g, resid, T, masks, n_outputs, v_idx_size, k_rot, v_rot, n_seqs)
    n_inputs = len(nodes)
    cur = add(resid, tokens)  # GET_ROWS of the token embeddings
    width = {t.name: t.shape for t in spec.weights.tensors}

    def rot(h: int, r: int) -> int:  # llama_mul_mat_hadamard
        return view(add(nodes[h].size, r, view(h))) if r >= 0 else h

    for layer in trunk:
        a, r, il = layer.attention, layer.recurrent, layer.index
        last = layer is trunk[-1]
        inp = cur
        x = add(resid, add(resid, inp, inplace=True), inplace=True)  # RMS_NORM, MUL: attn_norm
        q_size = a.n_heads * a.head_dim_k * T * F32
        kv_size = a.n_kv_heads * a.head_dim_k * T * F32
        q = rot(add(q_size, view(add(q_size, x)), pos, inplace=True), krot)  # wq, its reshape, ROPE
        v = rot(view(add(a.n_kv_heads * a.head_dim_v * T * F32, x)), vrot)  # wv, its reshape
        k = rot(add(kv_size, view(add(kv_size, x)), pos, inplace=True), krot)  # wk, its reshape, ROPE
        add(0, view(k), k_idx)  # SET_ROWS of K and V into the caches
        add(0, view(v), v_idx)
        o_size = a.n_heads * a.head_dim_v * T * F32
        if flash_attn:
            o = view(add(o_size, view(view(q)), mask))  # FLASH_ATTN_EXT of the permuted Q, reshaped
        else:
            kq = add(masks // 4 * a.n_heads * F32, view(view(q)))  # KQ over the cache's n_kv cells
            kq = add(nodes[kq].size, kq, mask, inplace=True)  # SOFT_MAX
            o = add(o_size, view(add(o_size, kq)))  # KQV, the CONT of its permuted view
        # build_mamba2_layer
        conv_dim = r.d_inner + 2 * r.n_group * r.d_state
        ids = view(s_copy)  # s_copy_main
        rs = add(r.conv * n_seqs * F32, ids)  # build_rs: GET_ROWS of the conv states
        add(0, add(0, view(s_copy), empty=True))  # the extra states (none) and their copy into the cache
        m = add(resid, add(resid, inp, inplace=True), inplace=True)  # RMS_NORM, MUL: ssm_in
        proj = add((2 * r.d_inner + 2 * r.n_group * r.d_state + r.n_heads) * T * F32, m)
        concat = add((r.d_conv - 1 + T // n_seqs) * conv_dim * n_seqs * F32, view(rs), view(proj))
        add(0, view(concat))  # the conv state's store
        xbc = add(conv_dim * T * F32, concat)  # SSM_CONV
        xbc = add(nodes[xbc].size, add(nodes[xbc].size, xbc, inplace=True), inplace=True)  # bias ADD, SILU
        xv = view(xbc)
        dt = add(r.n_heads * T * F32, view(proj))  # CONT of dt
        dt = add(nodes[dt].size, dt, inplace=True)  # ADD of dt's bias
        scan = add((r.d_inner * T + r.ssm * n_seqs) * F32, xv, dt, view(xbc), view(xbc), ids)  # SSM_SCAN
        add(0, add(0, view(s_copy), empty=True))  # the extra states again
        add(0, view(scan))  # the ssm state's store
        o = add(resid, rot(o, vrot))  # wo of the un-rotated output
        z = add(r.d_inner * T * F32, view(proj))  # CONT of z
        y = add(r.d_inner * T * F32, view(scan), add(r.d_inner * T * F32, xv), inplace=True)  # x * D, y + it
        y = add(r.d_inner * T * F32, z, y)  # SWIGLU
        if f"blk.{il}.ssm_norm.weight" in width:  # the grouped RMS_NORM and its weight (ssm_norm is optional)
            y = add(nodes[y].size, add(nodes[y].size, view(y), inplace=True), inplace=True)
        s = add(resid, view(y))  # ssm_out
        ffn_inp = add(resid, add(resid, o, s, inplace=True), inp, inplace=True)  # layer_out, + the input
        rr = resid
        if last:
            rr = spec.n_embd * n_outputs * F32
            ffn_inp = add(rr, ffn_inp, out_ids)
        rows = rr // (spec.n_embd * F32)
        n = add(rr, add(rr, ffn_inp, inplace=True), inplace=True)  # RMS_NORM, MUL: ffn_norm
        ff = width[f"blk.{il}.ffn_down.weight"][0]
        gate, up = add(ff * rows * F32, n), add(ff * rows * F32, n)
        cur = add(rr, add(rr, add(ff * rows * F32, gate, up)), ffn_inp, inplace=True)  # SWIGLU, ffn_down, + ffn_inp
    rr = nodes[cur].size
    h = add(rr, add(rr, cur, inplace=True), inplace=True, output=True)  # RMS_NORM, result_norm
    add(spec.n_vocab * (rr // (spec.n_embd * F32)) * F32, h, output=True)  # result_output
    return n_inputs, nodes



class _HybridInputs(NamedTuple):
    """A hybrid _Dag graph's inputs (-1: not in the graph)."""
    tokens: int
    s_copy: int
    krot: int
    vrot: int
    k_idx: int
    v_idx: int
    mask: int
    out_ids: int
    n_inputs: int
    pos: int = -1


def _hybrid_dag_inputs(d: _Dag, spec: ModelSpec, T: int, n_outputs: int, masks: int, flash_attn: bool, k_rot: int,
                       v_rot: int, ns: int, rope: bool = False) -> _HybridInputs:
    """jamba_graph's, nemotron_h_graph's and granite_hybrid_graph's inputs, in the order the walk first reads them:
    tokens, inp_embd (never read), s_copy (ns int32), the positions (T int32, where the attention ropes), the K / V
    rotations, the K / V row indices (V one per element without flash attention) and the masks (where a layer
    attends), out_ids."""
    a0 = next((la.attention for la in spec.trunk_layers if la.attention is not None), None)
    tokens, _ = d.input(T * 4), d.input(spec.n_embd * T * F32)
    s_copy = d.input(ns * 4)
    pos = d.input(T * 4) if rope and a0 is not None else -1
    krot = d.input(k_rot) if k_rot and a0 is not None else -1
    vrot = d.input(v_rot) if v_rot and a0 is not None else -1
    k_idx = v_idx = mask = -1
    if a0 is not None:
        k_idx = d.input(T * 8)
        v_idx = d.input(T * 8 if flash_attn else a0.n_kv_heads * a0.head_dim_v * T * 8)
        mask = d.input(masks)
    out_ids = d.input(n_outputs * 4)
    return _HybridInputs(tokens, s_copy, krot, vrot, k_idx, v_idx, mask, out_ids, len(d.t), pos)


def _dag_empty(d: _Dag, *srcs: int) -> int:
    """A tensor of no bytes (the extra states: n_rs - n_seqs = 0)."""
    d.t.append(Node(0, srcs, empty=True))
    return len(d.t) - 1


def _dag_store(d: _Dag, *srcs: int) -> None:
    """A copy into the cache (no bytes here), expanded where the source makes it."""
    d.t.append(Node(0, srcs))
    d.expand(len(d.t) - 1)


def _dag_norm(d: _Dag, x: int) -> int:
    """RMS_NORM, MUL by the weight."""
    return d.op(d.shape(x), d.op(d.shape(x), x, inplace=True), inplace=True)


def _dag_output(d: _Dag, x: int, n_vocab: int) -> None:
    """result_norm and result_output, both graph outputs (ggml_set_output), the logits expanded last."""
    h = _dag_norm(d, x)
    logits = d.op((n_vocab, d.shape(h)[1]), h)
    d.t[h] = d.t[h]._replace(output=True)
    d.t[logits] = d.t[logits]._replace(output=True)
    d.expand(logits)


def _dag_swiglu(d: _Dag, x: int, E: int, ff: int, rows: int) -> int:
    """build_ffn's SwiGLU FFN of x's rows: gate and up (ff wide), SWIGLU, down."""
    gate, up = d.op((ff, rows), x), d.op((ff, rows), x)
    return d.op((E, rows), d.op((ff, rows), gate, up))


def _dag_attention(d: _Dag, a: Attention, x: int, E: int, T: int, masks: int, flash_attn: bool,
                   ins: _HybridInputs) -> int:
    """build_attn on the normed input x, as jamba_graph and nemotron_h_graph expand it: Q, V, K (Q and K roped where
    the inputs hold positions, granite_hybrid_graph's; each rotated for a quantized cache: llama_mul_mat_hadamard, a
    MUL_MAT between two reshapes), the K / V stores, the attention (FLASH_ATTN_EXT, or KQ, SOFT_MAX in place, KQV
    and its CONT); wo of the un-rotated output is returned, not expanded."""
    op, view, expand = d.op, d.view, d.expand

    def rot(h: int, r: int, ne: tuple[int, ...]) -> int:
        return view(op(ne, r, view(h))) if r >= 0 else h

    def rope(h: int, ne: tuple[int, ...]) -> int:  # ROPE of the reshape (a new tensor: its source is a view)
        return op(ne, h, ins.pos, inplace=True) if ins.pos >= 0 else h

    q_ne, k_ne, v_ne = ((n * hd, T) for n, hd in ((a.n_heads, a.head_dim_k), (a.n_kv_heads, a.head_dim_k),
                                                   (a.n_kv_heads, a.head_dim_v)))
    q = rot(rope(view(op(q_ne, x)), q_ne), ins.krot, q_ne)  # wq and its reshape
    expand(q)
    v = rot(view(op(v_ne, x)), ins.vrot, v_ne)
    expand(v)
    k = rot(rope(view(op(k_ne, x)), k_ne), ins.krot, k_ne)
    expand(k)
    _dag_store(d, view(k), ins.k_idx)  # SET_ROWS of K and V into the caches
    _dag_store(d, view(v), ins.v_idx)
    o_ne = (a.n_heads * a.head_dim_v, T)
    if flash_attn:
        o = view(op(o_ne, view(view(q)), ins.mask))  # FLASH_ATTN_EXT, reshaped
    else:
        kq = op((masks // (4 * T), T, a.n_heads), view(view(q)))  # KQ over the cache's n_kv cells
        kq = op(d.shape(kq), kq, ins.mask, inplace=True)  # SOFT_MAX
        o = op(o_ne, view(op(o_ne, kq)))  # KQV, the CONT of its permuted view
    expand(o)
    return op((E, T), rot(o, ins.vrot, o_ne))  # wo


def _dag_mamba2(d: _Dag, r: RecurrentState, x: int, E: int, T: int, ns: int, s_main: int, s_extra: int,
                ssm_norm: bool) -> int:
    """build_mamba2_layer (src/models/graph-context-mamba.cpp at llama.cpp@0c1e57098) as ggml_build_forward_expand
    walks it (_Dag) on the layer's normed input x (expanded with ssm_in, after build_rs's expands): build_rs's GET_ROWS of the
    n_seqs conv states by s_main (expanded) and the extra states' copy (a tensor of no bytes); ssm_in, the CONCAT of
    the states with xBC's transpose, the conv state's store, SSM_CONV, bias and SiLU in place, dt's CONT and bias,
    SSM_SCAN (y and the n_seqs states, reading the ssm states by s_main; expanded), the extra states again, the ssm
    state's store; z's CONT, y + x * D (a new tensor: x is a view), SWIGLU, the grouped RMS norm of its reshape
    (ssm_norm: the weight is optional) -> ssm_out, not expanded. Shared by nemotron_h_graph, granite_hybrid_graph
    and mamba2_graph."""
    op, view, expand = d.op, d.view, d.expand
    conv_dim = r.d_inner + 2 * r.n_group * r.d_state
    rs = op((r.conv, ns), s_main)  # build_rs: the conv states' GET_ROWS
    expand(rs)
    _dag_store(d, _dag_empty(d, s_extra))
    proj = op((2 * r.d_inner + 2 * r.n_group * r.d_state + r.n_heads, T), x)  # ssm_in
    concat = op((r.d_conv - 1 + T // ns, conv_dim, ns), view(rs), view(view(proj)))  # CONCAT with xBC^T
    _dag_store(d, view(concat))  # the conv state's store
    conv = op((conv_dim, T), concat)  # SSM_CONV
    conv = op((conv_dim, T), op((conv_dim, T), conv, inplace=True), inplace=True)  # bias ADD, SILU
    xv = view(conv, (r.d_inner, T))
    dt = op((r.n_heads, T), op((r.n_heads, T), view(proj)), inplace=True)  # dt's CONT, its bias
    scan = op((r.d_inner * T + r.ssm * ns,), xv, dt, view(conv), view(conv), s_main)  # SSM_SCAN
    expand(scan)
    _dag_store(d, _dag_empty(d, s_extra))
    _dag_store(d, view(scan))  # the ssm state's store
    z = op((r.d_inner, T), view(proj))  # z's CONT
    y = op((r.d_inner, T), view(scan, (r.d_inner, T)), op((r.d_inner, T), xv), inplace=True)  # y + x * D
    y = op((r.d_inner, T), z, y)  # SWIGLU
    if ssm_norm:  # the grouped RMS norm of its reshape
        y = _dag_norm(d, view(y, (r.d_inner, T)))
    return op((E, T), view(y))  # ssm_out


def mamba2_graph(spec: ModelSpec, T: int, n_outputs: int, masks: int, flash_attn: bool = True, k_rot: int = 0,
                 v_rot: int = 0, n_seqs: int = 1) -> tuple[int, list[Node]]:
    """Mamba-2's graph (src/models/mamba.cpp llama_model_mamba::graph at llama.cpp@0c1e57098, LLM_ARCH_MAMBA2: every
    layer the attention norm, build_mamba2_layer (_dag_mamba2), the last layer's output and input gathered by out_ids
    (two GET_ROWS), the residual add; the output norm (result_norm) and the logits) on the CPU, ordered as
    ggml_build_forward_expand walks it (_Dag). The inputs: tokens, inp_embd (never read), s_copy, out_ids (masks,
    flash_attn and the rotations are unused: no layer attends). Checked node for node against the graph
    llama-cpp-python 0.3.36 hands ggml_gallocr_reserve_n (tests/groundtruth/gallocr_dump.c) on mamba2-2.7b's 4-layer
    file: 113.22 MiB at -ub 512, where the closed-form recurrent phase gave 108.22."""
    d = _Dag()
    op, view, expand = d.op, d.view, d.expand
    E, ns = spec.n_embd, max(1, n_seqs)
    ins = _hybrid_dag_inputs(d, spec, T, n_outputs, masks, flash_attn, k_rot, v_rot, ns)
    width = {t.name: t.shape for t in spec.weights.tensors}
    cur = op((E, T), ins.tokens)  # GET_ROWS of the token embeddings
    expand(cur)
    s_main, s_extra = view(ins.s_copy), view(ins.s_copy)
    trunk = spec.trunk_layers
    for layer in trunk:
        inp, rows = cur, T
        out = _dag_mamba2(d, layer.recurrent, _dag_norm(d, inp), E, T, ns, s_main, s_extra,
                          f"blk.{layer.index}.ssm_norm.weight" in width)
        if layer is trunk[-1]:
            rows = n_outputs
            out, inp = op((E, rows), out, ins.out_ids), op((E, rows), inp, ins.out_ids)  # GET_ROWS of both
        cur = op((E, rows), out, inp, inplace=True)  # the residual add
    _dag_output(d, cur, spec.n_vocab)
    return ins.n_inputs, d.nodes()


def jamba_graph(spec: ModelSpec, T: int, n_outputs: int, masks: int, flash_attn: bool = True, k_rot: int = 0,
                v_rot: int = 0, n_seqs: int = 1) -> tuple[int, list[Node]]:
    """Jamba's graph (src/models/jamba.cpp at llama.cpp@0c1e57098: build_mamba_layer of
    src/models/graph-context-mamba.cpp for a layer without KV heads, else build_attn without RoPE; build_ffn or
    build_moe_ffn by the layer's experts; build_rs of src/llama-graph.cpp) on the CPU, built in source order and
    ordered as ggml_build_forward_expand walks it (_Dag), the expand calls where the source makes them: build_rs
    expands the n_seqs conv states it gathers (GET_ROWS by s_copy) and the copy of the extra states (none: a GET_ROWS
    of no bytes) as soon as the layer starts, before the previous layer's output is in the graph; the conv state's
    store pulls in the layer's norm, its in-projection and the CONCAT; SSM_SCAN (with SSM_CONV, bias and SiLU in
    place, the x_db projection, dt / B / C's RMS norms, dt's projection and bias) is expanded by build_rs, then the
    extra states and the ssm state's store; build_attn expands Q, V, K (rotated for a quantized cache), the K / V
    stores and the attention (FLASH_ATTN_EXT, or KQ, SOFT_MAX in place, KQV and its CONT), not wo; build_moe_ffn
    expands the weighted experts' sum (router logits, SOFT_MAX in place, ARGSORT, the top-k weights, gate / up
    MUL_MAT_ID, SWIGLU, down, the weights' MUL in place, the views' ADDs). The rest (y + x * D in x's block, z's
    CONT, SWIGLU, ssm_out, the residual adds, the dense FFN) comes with the next expand that reads it; the last layer
    gathers the out_ids rows of the residual and of its output. The inputs: tokens, inp_embd, s_copy, the rotations,
    the K / V indices, the masks, out_ids, in the order the walk first reads them. Replayed through galloc it equals
    the reserve llama-cpp-python 0.3.36 prints on the Jamba-v0.1-shaped 8-layer file
    (tests/test_llamacpp_real_shapes.py): 200.08 / 240.01 / 224.08 MiB at 8K / 16K / 32K, 300.01 at 8K x 2
    without flash attention, 224.16 at 32K with a q8_0 cache, 240.01 at 16K x 4 unified."""
    d = _Dag()
    op, view, expand = d.op, d.view, d.expand
    E, ns = spec.n_embd, max(1, n_seqs)
    trunk = spec.trunk_layers
    ins = _hybrid_dag_inputs(d, spec, T, n_outputs, masks, flash_attn, k_rot, v_rot, ns)
    tokens, s_copy, out_ids, n_inputs = ins.tokens, ins.s_copy, ins.out_ids, ins.n_inputs
    width = {t.name: t.shape for t in spec.weights.tensors}

    empty, store, norm = partial(_dag_empty, d), partial(_dag_store, d), partial(_dag_norm, d)

    cur = op((E, T), tokens)  # GET_ROWS of the token embeddings
    expand(cur)
    s_main = s_extra = -1
    for layer in trunk:
        a, r, il, f = layer.attention, layer.recurrent, layer.index, layer.ffn
        last = layer is trunk[-1]
        inp = cur
        if r is not None:
            if s_main < 0:
                s_main, s_extra = view(s_copy), view(s_copy)
            rs = op((r.conv, ns), s_main)  # build_rs: the conv states' GET_ROWS
            expand(rs)
            store(empty(s_extra))
            x = norm(inp)
            xz = op((2 * r.d_inner, T), view(x))  # ssm_in
            concat = op((r.d_conv - 1 + T // ns, r.d_inner, ns), view(rs), view(view(xz)))  # CONCAT with x^T
            store(view(concat))  # the conv state's store
            conv = op((r.d_inner, T), concat)  # SSM_CONV
            conv = op((r.d_inner, T), op((r.d_inner, T), conv, inplace=True), inplace=True)  # bias ADD, SILU
            xr = view(conv)
            dt_rank = width[f"blk.{il}.ssm_dt.weight"][0]
            x_db = op((dt_rank + 2 * r.d_state, T), conv)  # ssm_x
            dt, b, c = view(x_db), view(x_db), view(x_db)
            if f"blk.{il}.ssm_dt_norm.weight" in width:  # dt / B / C's RMS norms (of views: new tensors)
                dt, b, c = (norm(view(x_db, ne)) for ne in ((dt_rank, T), (r.d_state, T), (r.d_state, T)))
            dt = op((r.d_inner, T), op((r.d_inner, T), dt), inplace=True)  # ssm_dt, its bias
            scan = op((r.d_inner * T + r.ssm * ns,), xr, dt, b, c, s_main)  # SSM_SCAN
            expand(scan)
            store(empty(s_extra))
            store(view(scan))  # the ssm state's store
            y = op((r.d_inner, T), view(scan, (r.d_inner, T)), op((r.d_inner, T), conv, inplace=True),
                   inplace=True)  # y + x * D
            y = op((r.d_inner, T), op((r.d_inner, T), view(xz, (r.d_inner, T))), y)  # SWIGLU of z's CONT and y
            out = view(op((E, T), y))  # ssm_out
        else:
            out = _dag_attention(d, a, norm(inp), E, T, masks, flash_attn, ins)
        rows = T
        if last:
            rows = n_outputs
            inp, out = op((E, rows), inp, out_ids), op((E, rows), out, out_ids)  # GET_ROWS of both
        ffn_inp = op((E, rows), inp, out, inplace=True)
        n = norm(ffn_inp)
        if f.is_moe:
            n_exp, n_used, ff = f.n_experts, f.n_experts_used, f.n_ff_expert or f.n_ff
            probs = op((n_exp, rows), op((n_exp, rows), n), inplace=True)  # ffn_gate_inp, SOFT_MAX
            topk = view(op((n_exp, rows), probs))  # ARGSORT, its top-k view
            weights = op((1, n_used, rows), view(probs), topk)  # GET_ROWS of the top-k probabilities
            expand(weights)
            nv = view(n)
            gate, up = op((ff, n_used, rows), nv, topk), op((ff, n_used, rows), nv, topk)  # MUL_MAT_ID
            down = op((E, n_used, rows), op((ff, n_used, rows), gate, up), topk)  # SWIGLU, MUL_MAT_ID
            wd = op((E, n_used, rows), down, weights, inplace=True)  # weighted
            moe = view(wd, (E, rows))
            for _ in range(1, n_used):
                moe = op((E, rows), moe, view(wd, (E, rows)), inplace=True)
            expand(moe)
            ffn_out = moe
        else:
            ff = width[f"blk.{il}.ffn_down.weight"][0]
            ffn_out = _dag_swiglu(d, n, E, ff, rows)
        cur = op((E, rows), ffn_inp, ffn_out, inplace=True)
    _dag_output(d, cur, spec.n_vocab)
    return n_inputs, d.nodes()


def nemotron_h_graph(spec: ModelSpec, T: int, n_outputs: int, masks: int, flash_attn: bool = True, k_rot: int = 0,
                     v_rot: int = 0, n_seqs: int = 1, weights_norm: bool = True, weights_scale: bool = True
                     ) -> tuple[int, list[Node]]:
    """Nemotron-H's graph (src/models/nemotron-h.cpp at llama.cpp@0c1e57098: a layer is Mamba-2 (no KV heads, no FFN:
    build_mamba2_layer of src/models/graph-context-mamba.cpp), attention (KV heads: build_attn without RoPE) or an
    MLP (ffn_up, ReLU, SQR in place, ffn_down), each added to the layer input; then the output norm (h_nextn, an
    output) and its out_ids rows (result_norm)) on the CPU, ordered as ggml_build_forward_expand walks it (_Dag), with
    the expands jamba_graph has: build_rs's GET_ROWS of the conv states and the extra states' copy before the previous
    layer's output; the conv state's store, SSM_SCAN, the extra states and the ssm state's store; build_attn's Q, V, K
    (rotated for a quantized cache), their stores and the attention, not wo. The Mamba-2 block as falcon_h1_graph
    has it (x * D a new tensor, x being a view; the grouped RMS norm of SWIGLU's reshape a new tensor). Replayed
    through galloc it equals the reserve llama-cpp-python 0.3.36 prints on the NVIDIA-Nemotron-Nano-9B-v2-shaped
    files (tests/test_llamacpp_real_shapes.py): the layer patterns M-M* (its GRID: 290.26 / 378.26 / 325.59 / 289.51
    MiB), M-*M, M*-M and *-M- (282.25 MiB at 32K with a q8_0 cache where the closed-form rule gives 305.50)."""
    d = _Dag()
    op, view, expand = d.op, d.view, d.expand
    E, ns = spec.n_embd, max(1, n_seqs)
    trunk = spec.trunk_layers
    ins = _hybrid_dag_inputs(d, spec, T, n_outputs, masks, flash_attn, k_rot, v_rot, ns)
    tokens, s_copy, out_ids, n_inputs = ins.tokens, ins.s_copy, ins.out_ids, ins.n_inputs
    width = {t.name: t.shape for t in spec.weights.tensors}

    norm = partial(_dag_norm, d)

    cur = op((E, T), tokens)  # GET_ROWS of the token embeddings
    expand(cur)
    s_main = s_extra = -1
    for layer in trunk:
        a, r, il = layer.attention, layer.recurrent, layer.index
        inp = cur
        if r is not None:
            if s_main < 0:
                s_main, s_extra = view(s_copy), view(s_copy)
            out = _dag_mamba2(d, r, norm(inp), E, T, ns, s_main, s_extra, f"blk.{il}.ssm_norm.weight" in width)
        elif a is not None:
            out = _dag_attention(d, a, norm(inp), E, T, masks, flash_attn, ins)
        elif layer.ffn.is_moe:
            f = layer.ffn
            x = norm(inp)
            n_exp, n_used = f.n_experts, f.n_experts_used
            probs = op((n_exp, T), op((n_exp, T), x), inplace=True)  # ffn_gate_inp, SIGMOID
            probs_r = view(probs, (1, n_exp, T))
            topk = view(op((n_exp, T), op((n_exp, T), probs, inplace=True)))  # + exp_probs_b, ARGSORT, top-k
            w = op((1, n_used, T), probs_r, topk)  # GET_ROWS of the top-k probabilities
            if weights_norm:  # SUM_ROWS, CLAMP in place, DIV (of the reshaped weights: a new tensor)
                wr = view(w, (n_used, T))
                w = view(op((n_used, T), wr, op((1, T), op((1, T), wr), inplace=True), inplace=True), (1, n_used, T))
            if weights_scale:  # SCALE by expert_weights_scale (of the reshaped weights: a new tensor)
                w = op((1, n_used, T), w, inplace=True)
            expand(w)
            ff = f.n_ff_expert or f.n_ff
            up = op((ff, n_used, T), view(x, (E, 1, T)), topk)  # MUL_MAT_ID
            up = op((ff, n_used, T), op((ff, n_used, T), up, inplace=True), inplace=True)  # RELU, SQR
            wd = op((E, n_used, T), op((E, n_used, T), up, topk), w, inplace=True)  # down (MUL_MAT_ID), weighted
            moe = view(wd, (E, T))
            for _ in range(1, n_used):
                moe = op((E, T), moe, view(wd, (E, T)), inplace=True)
            expand(moe)
            out = moe
            if f.n_ff_shared:  # the shared expert: ffn_up, RELU, SQR, ffn_down, added to the experts' sum
                sh = op((f.n_ff_shared, T), op((f.n_ff_shared, T), op((f.n_ff_shared, T), x), inplace=True),
                        inplace=True)
                out = op((E, T), moe, op((E, T), sh), inplace=True)
        else:
            x = norm(inp)
            ff = width[f"blk.{il}.ffn_down.weight"][0]
            up = op((ff, T), op((ff, T), op((ff, T), x), inplace=True), inplace=True)  # ffn_up, RELU, SQR
            out = op((E, T), up)  # ffn_down
        cur = op((E, T), out, inp, inplace=True)  # + the layer input
    h = norm(cur)  # h_nextn
    rows = op((E, n_outputs), h, out_ids)  # result_norm
    logits = op((spec.n_vocab, n_outputs), rows)
    for i in (h, rows, logits):
        d.t[i] = d.t[i]._replace(output=True)
    expand(logits)
    return n_inputs, d.nodes()

def granite_hybrid_graph(spec: ModelSpec, T: int, n_outputs: int, masks: int, flash_attn: bool = True,
                         k_rot: int = 0, v_rot: int = 0, n_seqs: int = 1, rope: bool = True
                         ) -> tuple[int, list[Node]]:
    """Granite 4.0 H's graph (src/models/granite-hybrid.cpp at llama.cpp@0c1e57098: the attention norm, then
    build_mamba2_layer for a recurrent layer or build_attention_layer: build_attn, Q and K roped (`rope`) unless the
    GGUF's rope.scaling.finetuned is false, as the converter writes it for a hybrid with Mamba layers; the last layer
    gathers the out_ids rows of its output and of its input; the residual add, ffn_norm, and build_moe_ffn (softmax
    router, the top-k weights normalised: SUM_ROWS, CLAMP, DIV; expanded early; gate / up MUL_MAT_ID, SWIGLU, down,
    weighted, each expert's view expanded, their ADDs, expanded) plus the shared expert's SwiGLU FFN, or build_ffn's
    SwiGLU for a dense layer; the residual add; the output norm and the logits) on the CPU, ordered as
    ggml_build_forward_expand walks it (_Dag) with nemotron_h_graph's Mamba-2 block and build_rs expands and
    _dag_attention's. Replayed through galloc it equals the reserve llama-cpp-python 0.3.36 prints on the
    Granite-4.0-H-Tiny-shaped file (tests/test_llamacpp_real_shapes.py GRANITE_GRID)."""
    d = _Dag()
    op, view, expand = d.op, d.view, d.expand
    E, ns = spec.n_embd, max(1, n_seqs)
    trunk = spec.trunk_layers
    ins = _hybrid_dag_inputs(d, spec, T, n_outputs, masks, flash_attn, k_rot, v_rot, ns, rope)
    tokens, s_copy, out_ids, n_inputs = ins.tokens, ins.s_copy, ins.out_ids, ins.n_inputs
    width = {t.name: t.shape for t in spec.weights.tensors}
    norm = partial(_dag_norm, d)

    cur = op((E, T), tokens)  # GET_ROWS of the token embeddings, expanded
    expand(cur)
    s_main = s_extra = -1
    for layer in trunk:
        a, r, il, f = layer.attention, layer.recurrent, layer.index, layer.ffn
        inp = cur
        x = norm(inp)
        if r is not None:
            if s_main < 0:
                s_main, s_extra = view(s_copy), view(s_copy)
            out = _dag_mamba2(d, r, x, E, T, ns, s_main, s_extra, f"blk.{il}.ssm_norm.weight" in width)
        else:
            out = _dag_attention(d, a, x, E, T, masks, flash_attn, ins)
        rows = T
        if layer is trunk[-1]:
            rows = n_outputs
            out, inp = op((E, rows), out, out_ids), op((E, rows), inp, out_ids)  # GET_ROWS of both
        ffn_inp = op((E, rows), out, inp, inplace=True)
        n = norm(ffn_inp)
        if f.is_moe:
            n_exp, n_used, ff = f.n_experts, f.n_experts_used, f.n_ff_expert or f.n_ff
            probs = op((n_exp, rows), op((n_exp, rows), n), inplace=True)  # ffn_gate_inp, SOFT_MAX
            topk = view(op((n_exp, rows), probs))  # ARGSORT, its top-k view
            w = op((1, n_used, rows), view(probs), topk)  # GET_ROWS of the top-k probabilities
            wr = view(w, (n_used, rows))  # SUM_ROWS, CLAMP in place, DIV (of the reshaped weights: a new tensor)
            w = view(op((n_used, rows), wr, op((1, rows), op((1, rows), wr), inplace=True), inplace=True),
                     (1, n_used, rows))
            expand(w)
            nv = view(n, (E, 1, rows))
            gate, up = op((ff, n_used, rows), nv, topk), op((ff, n_used, rows), nv, topk)  # MUL_MAT_ID
            down = op((E, n_used, rows), op((ff, n_used, rows), gate, up), topk)  # SWIGLU, MUL_MAT_ID
            wd = op((E, n_used, rows), down, w, inplace=True)  # weighted
            views = [view(wd, (E, rows)) for _ in range(n_used)]
            for v in views:
                expand(v)
            moe = views[0]
            for v in views[1:]:
                moe = op((E, rows), moe, v, inplace=True)
            expand(moe)
            ffn_out = moe
            if f.n_ff_shared:  # the shared expert's SwiGLU FFN, added to the experts' sum
                sh = f.n_ff_shared
                ffn_out = op((E, rows), moe, _dag_swiglu(d, n, E, sh, rows), inplace=True)
        else:
            ff = width[f"blk.{il}.ffn_down.weight"][0]
            ffn_out = _dag_swiglu(d, n, E, ff, rows)
        cur = op((E, rows), ffn_out, ffn_inp, inplace=True)
    _dag_output(d, cur, spec.n_vocab)
    return n_inputs, d.nodes()


# the hybrid graphs replayed on the CPU alone, with their recurrent states' n_seqs (compute.dense_cpu_bytes)
HYBRID_CPU_GRAPHS = {"falcon-h1": falcon_h1_graph, "jamba": jamba_graph, "nemotron_h": nemotron_h_graph,
                     "nemotron_h_moe": nemotron_h_graph, "granitehybrid": granite_hybrid_graph,
                     "mamba2": mamba2_graph}


# ggml-metal's graph_optimize (ggml/src/ggml-metal/ggml-metal-common.cpp ggml_graph_optimize and
# ggml_metal_graph_optimize_reorder at llama.cpp@62ede36c, 2025-11-23), which ggml_backend_sched_split_graph calls on
# each Metal split before ggml-alloc places it ("This needs to happen before we make graph_copy"): from PR #15929
# ("metal : allow ops to run concurrently", f161463a, b6460), on unless GGML_METAL_GRAPH_OPTIMIZE_DISABLE is set.
# CPY and SET_ROWS joined the ops it moves with PR #16216 ("metal : relax reorder conditions", 4ea00794, b6576).
METAL_REORDER_BUILD = 6460
METAL_REORDER_STORES_BUILD = 6576
METAL_REORDER_ARCHS = frozenset({"llama", "qwen2", "qwen3"})
_METAL_EMPTY = frozenset({"NONE", "RESHAPE", "TRANSPOSE", "VIEW", "PERMUTE"})  # ggml_op_is_empty
_METAL_SAFE = frozenset({"MUL_MAT", "MUL_MAT_ID", "ROPE", "NORM", "RMS_NORM", "GROUP_NORM", "SUM_ROWS", "MUL", "ADD",
                         "DIV", "GLU", "SCALE", "GET_ROWS"}) | _METAL_EMPTY
_METAL_FUSE_FIRST = frozenset({"ADD", "NORM", "RMS_NORM"})
_METAL_FUSE_NEXT = frozenset({"ADD", "MUL", "NORM", "RMS_NORM"})
_METAL_FORWARD = 8  # N_FORWARD: that many nodes ahead searched for one to pull up


class OpGraph(_Graph):
    """A _Graph that also records each node's GGML_OP_, the memory it writes (its own index, a view its root's, a
    cache store the cache's key) and what it reads: the memory ranges ggml-metal's reorder compares. Weights are
    only ever read (two reads never conflict), so they are left out."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: list[str] = []
        self.writes: list[Hashable] = []
        self.reads: list[tuple[Hashable, ...]] = []

    def op(self, name: str, size: int, *srcs: int, inplace: bool = False, output: bool = False,
           writes: Hashable = None, reads: tuple[Hashable, ...] = ()) -> int:
        i = self.add(size, *srcs, inplace=inplace, output=output)
        self._record(name, i if writes is None else writes, tuple(self.writes[s] for s in srcs) + reads)
        return i

    def vop(self, name: str, of: int) -> int:
        """A view (RESHAPE, PERMUTE, VIEW): it writes its root's memory as far as the reorder is concerned."""
        i = self.view(of)
        self._record(name, self.writes[of], (self.writes[of],))
        return i

    def input(self, size: int) -> int:
        i = self.inp(size)
        self._record("NONE", i, ())
        return i

    def _record(self, name: str, writes: Hashable, reads: tuple[Hashable, ...]) -> None:
        self.ops.append(name)
        self.writes.append(writes)
        self.reads.append(reads)


def metal_graph_optimize(g: OpGraph, stores_safe: bool) -> list[int]:
    """The node order ggml-metal's graph_optimize gives a split. First the fusable runs are packed (ggml_graph_optimize:
    a run starting with ADD, NORM or RMS_NORM and going on with ADD, MUL, NORM or RMS_NORM, as long as ggml_can_fuse
    holds: each node but the last read once and only by the next, of the same shape); then, run by run
    (ggml_metal_graph_optimize_reorder), a run that conflicts with the current concurrent set (it reads what the set
    writes, or writes what the set reads or writes) closes the set, after the next N_FORWARD - 1 runs are searched for
    ones that conflict neither with the set nor with the runs passed over (a run of an op not in h_safe ends the
    search) and pulled up into it. Views take part (ggml_op_is_empty: always concurrent, their root written). Before
    ggml-alloc sees the split, so the order sets where each tensor lands."""
    nodes, ops, n = g.nodes, g.ops, len(g.nodes)
    uses = [0] * n
    for node in nodes:
        for s in node.srcs:
            uses[s] += 1
    runs: list[list[int]] = []
    i = 0
    while i < n:
        m = 1
        if ops[i] in _METAL_FUSE_FIRST:
            f = i + 1
            while f < n and f < i + 16 and ops[f] in _METAL_FUSE_NEXT:
                f += 1
            m = f - i
            while m > 1 and not all(uses[i + k] == 1 and not nodes[i + k].output for k in range(m - 1)) \
                    or m > 1 and not all(i + k - 1 in nodes[i + k].srcs and nodes[i + k].size == nodes[i + k - 1].size
                                         for k in range(1, m)):
                m -= 1
        runs.append(list(range(i, i + m)))
        i += m
    safe = _METAL_SAFE | ({"CPY", "SET_ROWS"} if stores_safe else set())

    def ranges(run: list[int]) -> tuple[set[Hashable], Hashable]:
        return {r for j in run for r in g.reads[j]}, g.writes[run[-1]]

    def fits(reads_: set[Hashable], writes_: set[Hashable], run: list[int]) -> bool:
        r, w = ranges(run)
        return r.isdisjoint(writes_) and w not in writes_ and w not in reads_

    def take(reads_: set[Hashable], writes_: set[Hashable], run: list[int]) -> None:
        r, w = ranges(run)
        reads_ |= r
        writes_.add(w)

    order: list[int] = []
    used = [False] * len(runs)
    r0: set[Hashable] = set()
    w0: set[Hashable] = set()
    for i0, run0 in enumerate(runs):
        if used[i0]:
            continue
        if ops[run0[0]] not in _METAL_EMPTY and not fits(r0, w0, run0):
            r1: set[Hashable] = set()
            w1: set[Hashable] = set()
            take(r1, w1, run0)
            for i1 in range(i0 + 1, min(i0 + _METAL_FORWARD, len(runs))):
                if used[i1]:
                    continue
                run1 = runs[i1]
                if ops[run1[0]] not in safe:
                    break
                if (ops[run1[0]] in _METAL_EMPTY or fits(r0, w0, run1)) and fits(r1, w1, run1):
                    take(r0, w0, run1)
                    order += run1
                    used[i1] = True
                else:
                    take(r1, w1, run1)
            r0, w0 = set(), set()
        take(r0, w0, run0)
        order += run0
    return order


def dense_metal_graph(spec: ModelSpec, T: int, n_outputs: int, masks: int, mask_cast: bool,
                      stores_safe: bool, n_kv: int = 0) -> tuple[int, list[Node]]:
    """dense_metal_op_graph's split in the order metal_graph_optimize gives it, its inputs at its head in first-use
    order (ggml_backend_sched's copies), as ggml-alloc places it; `n_kv` the cache cells FLASH_ATTN_EXT reads when
    its result takes ggml-metal's extra bytes (metal_fa_extra_bytes), 0 where it does not."""
    g = dense_metal_op_graph(spec, T, n_outputs, masks, mask_cast, n_kv)
    order = metal_graph_optimize(g, stores_safe)
    inputs = sorted(g.inputs)
    return 0, _hoisted(_reordered(g.nodes, inputs + [i for i in order if i not in g.inputs]),
                       set(range(len(inputs))), [0])


# PR #17143 ("metal : make the FA extra sizes consistent", 2606b0ad, b7057): from it ggml-metal sizes every
# FLASH_ATTN_EXT result with its padding, block-mask and temporary scratch ("always reserve ... to avoid graph
# reallocations"); before it the scratch only for the vector kernel (a handful of tokens), not a reserve's ubatch
METAL_FA_EXTRA_BUILD = 7057
_METAL_FA_NQPTG, _METAL_FA_NCPSG = 8, 64  # ggml-metal-impl.h OP_FLASH_ATTN_EXT_NQPTG / _NCPSG (not the vec kernel's)


def metal_fa_extra_bytes(a: Attention, T: int, n_kv: int, n_stream: int = 1) -> int:
    """The bytes ggml-metal's get_alloc_size adds to a FLASH_ATTN_EXT result of T tokens over n_kv cells
    (ggml/src/ggml-metal/ggml-metal-ops.cpp at llama.cpp@62ede36c, b7140, the matrix kernel of T >= 20):
    ggml_metal_op_flash_attn_ext_extra_pad, NCPSG times K's and V's nb1 x ne2 x ne3 (an F16 cache cell of
    n_kv_heads x head_dim, times the n_kv_heads of the permuted view) and the F16 mask row; _extra_blk, one byte per (NQPTG tokens, NCPSG cells) block of the mask, padded
    to 32; _extra_tmp, the 32 workgroups' partial results of min(T, 32) tokens (F32, head_dim_v + 2 a head)."""
    k_row, v_row = 2 * a.n_kv_heads * a.head_dim_k, 2 * a.n_kv_heads * a.head_dim_v  # nb11, nb21: an F16 cell
    pad = _METAL_FA_NCPSG * (k_row * a.n_kv_heads * n_stream + v_row * a.n_kv_heads * n_stream + 2 * T * n_stream)
    blk = -(-T // _METAL_FA_NQPTG) * -(-n_kv // _METAL_FA_NCPSG) * n_stream
    blk = -(-blk // 32) * 32
    tmp = F32 * min(T, 32) * a.n_heads * n_stream * 32 * (a.head_dim_v + 2)
    return pad + blk + tmp


def dense_metal_op_graph(spec: ModelSpec, T: int, n_outputs: int, masks: int, mask_cast: bool,
                         n_kv: int = 0) -> OpGraph:
    """The split of a Metal device that runs a whole Llama / Qwen2 / Qwen3 graph with flash attention (src/models/
    llama.cpp, qwen2.cpp, qwen3.cpp with build_attn and build_ffn of src/llama-graph.cpp) node by node as
    ggml_build_forward_expand orders it, each node's op and memory recorded for the reorder. Per layer: the attention norm (RMS_NORM, MUL); Q, V, K as
    build_attn expands them, each a product (Qwen2: and its bias, an ADD), a reshape, Qwen3's RMS_NORM and MUL of the
    heads, Q and K roped; the K and V stores (SET_ROWS into the cache); FLASH_ATTN_EXT of Q's permuted view and the
    cache's K / V views, reshaped; the output projection; in the last layer the out_ids rows of it and of the residual
    (GET_ROWS); the residual add, the FFN norm, ffn_up, ffn_gate, SWIGLU of the two, ffn_down and the residual add;
    then the output norm and the logits, graph outputs. The split's inputs: the copy of the host's GET_ROWS rows, the positions, the K / V indices, the mask (mask_cast: the F32 mask, cast to F16 on the
    device, a CPY, before PR #23764 / ERAS kq_mask_f16) and out_ids. The Metal buffer's alignment is 32 bytes
    (ggml-metal.cpp get_alignment). In this build order, unreordered, at the CUDA buffer's 128-byte alignment the
    replay gives the H200's CUDA0 buffer of the 4-layer Llama-3.1-8B and Qwen3-8B files to the printed 0.01 MiB
    (llama.cpp 0c1e570, flash attention: 258.50 / 1034.00 and 304.75 / 1219.00 MiB at -ub 512 / 2048)."""
    g = OpGraph()
    op, vop = g.op, g.vop
    resid = spec.n_embd * T * F32
    cur, pos = g.input(resid), g.input(T * 4)
    k_idx, v_idx = g.input(T * 8), g.input(T * 8)
    mask = g.input(2 * masks if mask_cast else masks)
    out_ids = g.input(n_outputs * 4)
    names = {t.name for t in spec.weights.tensors}
    width = {t.name: t.shape for t in spec.weights.tensors}
    trunk = spec.trunk_layers
    fa_mask = -1
    for layer in trunk:
        a, il = layer.attention, layer.index
        res = cur
        x = op("MUL", resid, op("RMS_NORM", resid, cur, inplace=True), inplace=True)

        def proj(x: int, il: int, kind: str, size: int, roped: bool) -> int:
            h = op("MUL_MAT", size, x)
            if f"blk.{il}.attn_{kind}.bias" in names:
                h = op("ADD", size, h, inplace=True)
            h = vop("RESHAPE", h)
            if f"blk.{il}.attn_{kind}_norm.weight" in names:
                h = op("MUL", size, op("RMS_NORM", size, h, inplace=True), inplace=True)
            return op("ROPE", size, h, pos, inplace=True) if roped else h

        q = proj(x, il, "q", a.n_heads * a.head_dim_k * T * F32, True)
        v = proj(x, il, "v", a.n_kv_heads * a.head_dim_v * T * F32, False)
        k = proj(x, il, "k", a.n_kv_heads * a.head_dim_k * T * F32, True)
        op("SET_ROWS", 0, vop("RESHAPE", k), k_idx, writes=("k", il))
        op("SET_ROWS", 0, vop("RESHAPE", v), v_idx, writes=("v", il))
        qp = vop("PERMUTE", q)
        for kv in ("k", "v"):  # the cache's K / V view and its permutation, in the cache's memory
            op("PERMUTE", 0, op("VIEW", 0, writes=(kv, il)), writes=(kv, il))
        if fa_mask < 0:  # the mask as FLASH_ATTN_EXT reads it, made where the first layer first reads it
            fa_mask = op("CPY", masks, mask) if mask_cast else mask
        extra = metal_fa_extra_bytes(a, T, n_kv) if n_kv else 0
        o = vop("RESHAPE", op("FLASH_ATTN_EXT", a.n_heads * a.head_dim_v * T * F32 + extra, qp, fa_mask,
                              reads=(("k", il), ("v", il))))
        o = op("MUL_MAT", resid, o)  # wo
        r = resid
        if layer is trunk[-1]:
            r = spec.n_embd * n_outputs * F32
            o, res = op("GET_ROWS", r, o, out_ids), op("GET_ROWS", r, res, out_ids)
        ffn_inp = op("ADD", r, o, res, inplace=True)
        nrm = op("MUL", r, op("RMS_NORM", r, ffn_inp, inplace=True), inplace=True)
        rows = r // (spec.n_embd * F32)
        ff = width[f"blk.{il}.ffn_down.weight"][0] * rows * F32
        up, gate = op("MUL_MAT", ff, nrm), op("MUL_MAT", ff, nrm)
        cur = op("ADD", r, op("MUL_MAT", r, op("GLU", ff, gate, up)), ffn_inp, inplace=True)
    r = spec.n_embd * n_outputs * F32
    h = op("MUL", r, op("RMS_NORM", r, cur, inplace=True), inplace=True, output=True)  # result_norm
    op("MUL_MAT", spec.n_vocab * n_outputs * F32, h, output=True)  # result_output
    return g
