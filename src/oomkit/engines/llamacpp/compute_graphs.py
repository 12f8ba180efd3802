"""Worst-case graphs modelled node by node for galloc's replay, where the closed-form phases of compute.py cannot say
which free block a late tensor lands in: Hunyuan V3's (hy_v3) and GLM-4.5's (glm4moe), both with flash attention.
Both are the same MoE trunk (src/models/hy-v3.cpp and src/models/glm4-moe.cpp at llama.cpp@0c1e57098, with
llm_graph_context::build_attn_mha, build_moe_ffn and build_ffn of src/llama-graph.cpp), told apart by where the
out_ids rows are gathered and whether the router's top-k weights are normalised."""

from __future__ import annotations

from ...model.spec import ModelSpec
from .galloc import Node

F32 = 4


class _Graph:
    """The node list under construction: add() appends a tensor and returns its index; view() a view of one."""

    def __init__(self) -> None:
        self.nodes: list[Node] = []

    def add(self, size: int, *srcs: int, inplace: bool = False, view: int = -1, output: bool = False) -> int:
        self.nodes.append(Node(size, tuple(srcs), inplace, view, output))
        return len(self.nodes) - 1

    def view(self, of: int) -> int:
        root = self.nodes[of].view if self.nodes[of].view >= 0 else of
        return self.add(self.nodes[of].size, of, view=root)


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


def _moe_trunk_graph(spec: ModelSpec, T: int, n_outputs: int, masks: int, k_rot: int, v_rot: int, *,
                     gather_before_last_ffn: bool, normalize_weights: bool) -> tuple[int, list[Node]]:
    """The trunk node by node as ggml_build_forward_expand orders it, the K/V cache writes as unallocated nodes.
    Inputs: the token ids, the embedding input rows, the K rotation matrix, the positions, the V rotation matrix, the
    K and V cache indices, the KQ mask (masks bytes) and out_ids (n_outputs int32). Per layer: the attention norm;
    Q, V and K projections, each with its bias added in place where the file has one, reshaped (Q and K through
    their optional head norms, then RoPE); a quantized cache rotates Q and K after RoPE and V before the cache write
    and un-rotates the attention output (llama_kv_cache build_input_k_rot / build_input_v_rot); FLASH_ATTN_EXT and
    the output projection; the residual add and the FFN norm; an MoE layer's sigmoid router (logits, probs in place,
    the biased scores, argsort, the top-k weights), the routed experts' gate, up, SwiGLU, down and weighted rows,
    their sum over n_used views and the shared expert (gate, up, SwiGLU, down) added to it; a dense layer's gate, up,
    SwiGLU and down; the residual add."""
    g = _Graph()
    add, view, nodes = g.add, g.view, g.nodes
    resid = spec.n_embd * T * F32
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
    trunk = spec.trunk_layers
    for layer in trunk:
        a, f, il = layer.attention, layer.ffn, layer.index
        inp = cur
        x = add(resid, add(resid, inp, inplace=True), inplace=True)  # RMS_NORM, attn_norm (MUL)

        def project(size: int, w: str, x: int = x, il: int = il) -> int:
            h = add(size, x)  # MUL_MAT
            if f"blk.{il}.attn_{w}.bias" in names:
                h = add(size, h, inplace=True)  # the bias (ADD)
            return view(h)  # reshaped to heads

        def norm_rope(h: int, w: str, il: int = il) -> int:
            size = nodes[h].size
            if f"blk.{il}.attn_{w}_norm.weight" in names:
                h = add(size, add(size, h, inplace=True), inplace=True)  # RMS_NORM, then MUL by the norm weight
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
        add(0, view(k), k_idx)  # SET_ROWS into the K cache
        add(0, view(v), v_idx)  # SET_ROWS into the V cache
        o = view(add(a.n_heads * a.head_dim_v * T * F32, view(view(q)), mask))  # FLASH_ATTN_EXT, reshaped
        if vrot >= 0:
            o = view(add(nodes[o].size, vrot, view(o)))  # the output un-rotated
        o = add(resid, o)  # the output projection (MUL_MAT)
        rows, r = T, resid
        if gather_before_last_ffn and layer is trunk[-1]:
            rows, r = n_outputs, spec.n_embd * n_outputs * F32
            o, inp = add(r, o, out_ids), add(r, inp, out_ids)  # GET_ROWS of cur and inpSA
        ffn_inp = add(r, o, inp, inplace=True)
        n = add(r, add(r, ffn_inp, inplace=True), inplace=True)  # RMS_NORM, the FFN norm
        if f.is_moe:
            scores = f.n_experts * rows * F32
            probs = add(scores, add(scores, n), inplace=True)  # logits, SIGMOID in place
            probs_r = view(probs)
            biased = bool({f"blk.{il}.exp_probs_b", f"blk.{il}.exp_probs_b.bias"} & names)
            ranked = add(scores, probs, inplace=True) if biased else probs  # the biased scores
            topk = view(add(scores, ranked))  # ARGSORT, its top-k view
            weights = add(f.n_experts_used * rows * F32, probs_r, topk)  # GET_ROWS
            if normalize_weights:
                weights = view(weights)
                total = add(rows * F32, add(rows * F32, weights))  # SUM_ROWS, CLAMP
                weights = view(add(f.n_experts_used * rows * F32, weights, total, inplace=True))  # DIV, reshaped
            n_r = view(n)
            wide = f.n_experts_used * f.n_ff_expert * rows * F32
            gate, up = add(wide, n_r, topk), add(wide, n_r, topk)
            down = add(f.n_experts_used * r, add(wide, gate, up), topk)  # SWIGLU, MUL_MAT_ID
            weighted = add(f.n_experts_used * r, down, weights, inplace=True)
            parts = [view(weighted) for _ in range(f.n_experts_used)]
            ffn_out = parts[0]
            for p in parts[1:]:
                ffn_out = add(r, ffn_out, p, inplace=True)
            sh = f.n_ff_shared * rows * F32
            if sh:
                s_out = add(r, add(sh, add(sh, n), add(sh, n)))  # gate, up, SWIGLU, down
                ffn_out = add(r, ffn_out, s_out, inplace=True)
        else:
            wide = f.n_ff * rows * F32
            ffn_out = add(r, add(wide, add(wide, n), add(wide, n)))  # gate, up, SWIGLU, down
        cur = add(r, ffn_out, ffn_inp, inplace=True)  # l_out
    if gather_before_last_ffn:
        r = spec.n_embd * n_outputs * F32
        h = add(r, add(r, cur, inplace=True), inplace=True, output=True)  # RMS_NORM, result_norm
    else:
        h = add(resid, add(resid, cur, inplace=True), inplace=True, output=True)  # RMS_NORM, h_nextn
        h = add(spec.n_embd * n_outputs * F32, h, out_ids, output=True)  # result_norm (GET_ROWS)
    add(spec.n_vocab * n_outputs * F32, h, output=True)  # result_output
    return n_inputs, nodes
