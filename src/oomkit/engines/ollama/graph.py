"""The Ollama engine's own worst-case graph where its Go model code is mirrored (model/models/*), sized the way
ml/backend/ggml Context.Reserve reads it (ggml_backend_sched_get_attempted_buffer_size: ggml-alloc's high-water
mark over the graph runner/ollamarunner reserveWorstCaseGraph builds).

The Ollama engine does not run llama.cpp's graph: its inputs (token ids, positions, the f32 causal masks, the
output rows) are created with ctx.Input(), each in a buffer of its own outside the compute buffer
(ml/backend/ggml/ggml.go Context.newTensor), and its blocks are Go code with their own intermediate tensors.

gpt-oss (model/models/gptoss/model.go: the same block code v0.11.5-v0.13.2), the library GGUF (convert/convert_gptoss.go from the
original checkpoint: fused attn_qkv and ffn_gate_up_exps, 13 tensors a block; ollama/ollama#12147 prints
num_tensors=315 = 24 x 13 + 3), flash attention on, the whole graph on one CPU backend:
- the masks: kvcache/causal.go buildMask makes each cache's f32 mask an input (outside the buffer) and casts it
  to F16 in the graph (CacheConfig with flash attention: MaskDType F16, MaskBatchPadding GGML_KQ_MASK_PAD = 64);
  both casts (full cache and SWA cache) stay alive from the first block to the last;
- the MoE block holds the fused gate_up rows (mul_mat_id + add_id: 2 x n_ff x k per token), the contiguous gate
  and up halves (n_ff x k each: View + Contiguous, from v0.13.0 Slice, which is the same copy), the residual,
  the attention output (n_head x head_dim) and one more hidden row;
- when the full-cache mask (2 B a cell and token) does not fit the hole the freed qkv and hidden rows leave
  (4 B x (qkv width + n_embd) a token), ggml-alloc places it above and the qkv rows add to the peak.

Derived by building this graph node for node with the ggml of the pinned llama-cpp-python binding and sizing it
with ggml_gallocr_reserve (tests/test_ollama_graph_ggml.py), equal to the byte at every (tokens, cells) tried, and
to ollama/ollama#13320's CPU "compute graph" 139.5 MiB (146276352 B) at 16128 / 4608 cells and 512 tokens.

Where best fit into freed holes leaves no closed form, the graph is replayed through ggml-alloc (galloc.py):
dense qwen3 on a GPU from v0.12.7 (the freed f32 reserve mask), gpt-oss on a GPU (v0.11.5-v0.12.11: the split
inputs the scheduler copies in beside the MoE rows; on the CPU it equals gptoss_cpu_graph) and the Qwen2.5-VL vision
encoder from v0.13.4; each replay is held to ggml_gallocr_reserve on the same graph built with ggml, shape for
shape. glm4moelite with MLA absorbed (v0.15.0+) is replayed through the scheduler as well (llamacpp/sched_replay.py:
the splits, the copies of the CPU blocks' weights and cache views that op_offload brings to the GPU), held to
ollama/ollama#14273's printed CUDA0 graph."""

from __future__ import annotations

from functools import lru_cache, partial

from ...model.spec import LayerSpec, ModelSpec
from ...units import round_up
from ..llamacpp import sched_replay
from ..llamacpp.weights import gpu_alloc_size
from .galloc import Graph, T, reserve, view


def _weight(*shape: int) -> T:
    """A weight the graph reads: in its own buffer, never placed by ggml-alloc."""
    return T("", layout=("w", shape), external=True)


def _made(op: str, srcs: tuple, per: int, *shape: int) -> T:
    """A node of `per` bytes an element over `shape` (its layout: the element size and the shape)."""
    nb = per
    for d in shape:
        nb *= d
    return T(op, srcs, nb, (per, shape))


def _f32(op: str, srcs: tuple, *shape: int) -> T:
    """An F32 node over `shape` (4 B an element; its layout: "f32" and the shape)."""
    n = 4
    for d in shape:
        n *= d
    return T(op, srcs, n, ("f32", shape))


MASK_BATCH_PAD = 64  # ggml.h GGML_KQ_MASK_PAD in the ggml Ollama vendors, v0.12.x-v0.13.4 (gone from v0.13.5)
_GPT_OSS = ("gptoss", "gpt-oss")


def gptoss_moe_layer(spec: ModelSpec) -> LayerSpec | None:
    """The first attention + MoE layer of a gpt-oss model, whose shapes every gpt-oss graph reads (None for
    other models, or a gpt-oss spec without one)."""
    if spec.architecture not in _GPT_OSS:
        return None
    return next((la for la in spec.layers if la.attention is not None and la.ffn.is_moe), None)


def gptoss_cpu_graph(spec: ModelSpec, n_tokens: int, full_cells: int, swa_cells: int, masks: bool = True
                     ) -> int | None:
    """Bytes of the CPU compute buffer for Ollama's gpt-oss graph with flash attention (None for other models).
    masks=False: v0.8.0-v0.12.6, whose buildMask returned an F16 input of its own while reserving (ea7900318,
    until 1c093e97a in v0.12.7), so no mask is in the buffer and nothing is placed above the freed rows."""
    layer = gptoss_moe_layer(spec)
    if layer is None:
        return None
    at, ffn = layer.attention, layer.ffn
    T, E = n_tokens, spec.n_embd
    n_ff, k = ffn.n_ff_expert or ffn.n_ff, ffn.n_experts_used
    qkv = at.n_heads * at.head_dim_k + at.n_kv_heads * (at.head_dim_k + at.head_dim_v)
    moe = 4 * T * (2 * n_ff * k + 2 * n_ff * k + 2 * E + at.n_heads * at.head_dim_v)
    if not masks:
        return moe
    mask_bytes = 2 * round_up(T, MASK_BATCH_PAD) * (full_cells + swa_cells)
    # the full mask placed above the freed qkv + hidden rows when it is larger than they are
    above = 4 * T * qkv if 2 * round_up(T, MASK_BATCH_PAD) * full_cells > 4 * T * (qkv + E) else 0
    return mask_bytes + moe + above


def gptoss_vulkan_cpu_split(spec: ModelSpec, n_tokens: int) -> int | None:
    """The CPU compute buffer of gpt-oss with blocks left on the CPU beside a Vulkan GPU (None for other models).

    ml/backend/ggml New builds the scheduler with op_offload, so the ops of a CPU block whose weights sit in host
    memory run on the GPU when its offload_op says so; ggml-vulkan's asks for ne[1] >= 32 (or ne[2] for
    MUL_MAT_ID), and the expert biases' add_id outputs ([2 x n_ff, k, T]: ne[1] = k) fail it. That add_id stays on
    the CPU as a split of its own: the scheduler copies in the gate_up rows (add_id then writes them in place,
    ggml_op_can_inplace) and the selected-expert ids, a view of the argsort rows copied with its layout
    (ggml_dup_tensor_layout: 4 B x (k + n_expert x (T - 1))); the down add_id, the cache writes' k and v and the
    input rows come and go in smaller splits. ollama/ollama#12913 (v0.12.8-v0.12.9, gpt-oss:20b, 14 of 24 blocks
    on the CPU): "compute graph" device=CPU "45.1 MiB" = 45 MiB + 64 KiB."""
    if spec.architecture not in _GPT_OSS:
        return None
    layer = next((la for la in spec.layers if la.ffn.is_moe), None)
    if layer is None:
        return None
    ffn, T = layer.ffn, n_tokens
    n_ff, k = ffn.n_ff_expert or ffn.n_ff, ffn.n_experts_used
    ids = 4 * (k + ffn.n_experts * (T - 1))
    return 4 * T * 2 * n_ff * k + round_up(ids, 32)  # the CPU buffer's TENSOR_ALIGNMENT


VULKAN_MAX_BUFFER = 1 << 30  # ggml-vulkan.cpp suballocation_block_size (1 GiB unless GGML_VK_SUBALLOCATION_BLOCK_SIZE)


def gptoss_vulkan_gpu_graph(spec: ModelSpec, n_tokens: int, full_cells: int, swa_cells: int, partial: int,
                            full: int, chunked: bool) -> tuple[int, int] | None:
    """Vulkan0's compute buffer for gpt-oss without flash attention, with blocks left on the CPU and with every
    block on the GPU: (partial, full), from the closed forms' (partial, full) (None for other models).

    Blocks left on the CPU: Ollama offloads the last blocks, so block 0 (sliding-window) runs on the GPU by
    op_offload with its weights, its cache views and the inputs copied in split by split (a weight on another
    backend starts a new split, ggml_backend_sched_split_graph). Its KQ scores (swa_cells x T x n_head F32) sit above
    the copied token rows, the freed norm rows, the q-bias copy's hole, the positions and Q; the sliding-window mask
    is copied in after them (the softmax's sinks weight starts its split) and stays to the last block, so the freed
    scores stay a hole and every full layer's scores (full_cells x T x n_head F32) go above the mask.

    Every block on the GPU: one split, the inputs copied in first, so the full layers' scores reuse the sliding-window
    layers' freed ones in one buffer. Vulkan's buffers are at most 1 GiB (ggml_backend_vk_buffer_type_get_max_size)
    and ggml-alloc splits the graph into chunks (galloc.chunk_sizes; Ollama v0.12.4 on): scores of 1 GiB or more
    take a chunk of their own, and the sliding-window scores, which fit the first chunk's tail, add to it.

    Measured with Ollama's own ggml-base built from source (scheduler and ggml-alloc of v0.12.9 and v0.13.2) on this
    graph rebuilt node for node (1445 nodes, as ollama/ollama#12913 prints; tests/groundtruth/ollama_vulkan_reserve.c)
    beside a stand-in Vulkan0 with ggml-vulkan's offload_op (tests/test_llamacpp_vulkan_chunks.py): exact at 512
    tokens in one buffer and in chunks with either allocator, and at 1024 tokens in one buffer; at 1024 tokens in
    chunks the sliding-window scores (1152 MiB) take chunks of their own and v0.12.9 reserves 803 MiB more (v0.13.2
    4.5 MiB more), and at 128 and 256 tokens the freed blocks take the mask: those keep the closed forms."""
    if spec.architecture not in _GPT_OSS or n_tokens < 512:
        return None
    layer = next((la for la in spec.layers if la.attention is not None), None)
    if layer is None:
        return None
    at, T = layer.attention, n_tokens
    q = 4 * at.n_heads * at.head_dim_k
    full_kq, swa_kq = 4 * full_cells * T * at.n_heads, 4 * swa_cells * T * at.n_heads
    if chunked and swa_kq >= VULKAN_MAX_BUFFER:
        return None  # the sliding-window scores in chunks of their own: not this placement (measured at 1024 tokens)
    first = 2 * 4 * spec.n_embd * T + q + 4 * T + q * T + swa_kq + 4 * swa_cells * T
    if chunked and full_kq >= VULKAN_MAX_BUFFER and full - full_kq + swa_kq <= VULKAN_MAX_BUFFER:
        full += swa_kq
    return max(partial, first + full_kq), full


_QWEN3_DENSE = ("qwen3",)


def qwen3_gpu_graph(spec: ModelSpec, n_tokens: int, cells: int) -> int | None:
    """The GPU's compute buffer (ggml-alloc's part; cuda_pool.py adds the CUDA scratch) for Ollama's dense qwen3
    graph (model/models/qwen3/model.go, v0.12.4-v0.12.6 alike) with flash attention and every block on that GPU,
    before v0.12.7: kvcache/causal.go buildMask hands the reserve an F16 mask input of its own (ctx.Input().Empty),
    which the scheduler copies into the GPU's buffer with the token rows, the positions and the output index (split
    inputs, allocated at the split's start), None for other models.

    The peak is in a block's MLP: the gate, up and SwiGLU rows (n_ff floats a token each), the residual and the
    normed rows (n_embd each), the hole the attention output left (n_head x head_dim_v) and the mask (2 B a cell
    and padded token): 4T(3 n_ff + 2 n_embd + n_head x head_dim_v) + 2 x cells x PAD(T, 64), plus the positions
    (4T) and the output index. Measured by building the graph node for node and sizing it with ggml_gallocr_reserve
    (tests/test_ollama_graph_ggml.py qwen3_gpu_graph_bytes, mask_input=True): equal at every shape tried (128-1024
    tokens, 8192-131072 cells, n_ff 3072-51200, n_embd 1024-8192)."""
    if spec.architecture not in _QWEN3_DENSE:
        return None
    layer = next((la for la in spec.layers if la.attention is not None), None)
    if layer is None or layer.ffn.is_moe:
        return None
    at, T = layer.attention, n_tokens
    rows = 4 * T * (3 * layer.ffn.n_ff + 2 * spec.n_embd + at.n_heads * at.head_dim_v)
    return rows + 2 * cells * round_up(T, MASK_BATCH_PAD) + 4 * T + 128  # the output index: 4 B in a 128 B CUDA slot


@lru_cache(maxsize=256)  # a pure replay of a few thousand nodes, asked again for the same shapes while planning
def qwen3_dense_graph_bytes(n_embd: int, n_head: int, n_head_kv: int, head_dim: int, n_ff: int, n_layer: int,
                            n_vocab: int, n_tokens: int, cells: int, n_outputs: int = 1, mask_cast: bool = True,
                            set_rows: bool = True, alignment: int = 128, flash_attention: bool = True,
                            on_cpu: bool = False, mask_pad: int = MASK_BATCH_PAD, n_expert: int = 0,
                            n_expert_used: int = 0, norm_top_k: bool = True) -> int:
    """ggml-alloc's buffer for Ollama's dense qwen3 graph with flash attention and every block on one GPU, replayed
    node for node (galloc.py): model/models/qwen3 Forward, nn.Attention's Forward calls (query; key and value; the
    cache writes), kvcache/causal.go Put and Get. The split inputs the scheduler copies in: the token rows (the
    embeddings stay on the CPU), the positions, the cells the batch writes (set_rows: v0.13.0+, 53985b3c4, SetRows
    with c.curLoc, an I32 input; before it ggml_cpy into a cache view), the mask (mask_cast: v0.12.7+, 1c093e97a,
    an f32 input cast to F16 in the graph; before it an F16 input) and the output index.

    From v0.12.7 the f32 mask (4 B a cell and padded token) is freed after its cast and leaves a hole under the
    F16 mask that the blocks' rows fill by best fit as they fit; the peak follows no closed form (with qwen3:32b's
    shapes at 512 tokens: +8, 0, +8, +6, +14, +22, +30 MiB over the v0.12.4-v0.12.6 form at 4096-32768 cells, not
    monotone), hence the replay. Equal to ggml_gallocr_reserve on the same graph built with ggml
    (tests/test_ollama_graph_ggml.py) at every shape tried.

    flash_attention=False: ml/backend/ggml Tensor.ScaledDotProductAttention's other branch (v0.12.x): kq =
    ggml_mul_mat(K view, Q view) in F32 (cells x tokens x heads), ggml_soft_max_ext with the mask (in place),
    kqv = ggml_mul_mat(V view, kq) and a contiguous copy of its permutation; Backend.CacheConfig gives that cache
    PermutedV (V read as a view, no copy) and an F32 mask of cells x tokens (MaskBatchPadding 1, kvcache/causal.go
    buildMask: an input of its own before v0.12.7, cast in the graph from then on: that is not mirrored here, the
    caller asks for mask_cast=False only). on_cpu: the whole graph on the CPU backend (no GPU layer): the token
    rows are the get_rows output of the CPU's token_embd, a node of this buffer, and the inputs (positions, mask,
    output index) stay in buffers of their own (external), as no split copies them.

    n_expert > 0: qwen3moe, whose blocks run model/models/qwen3's sparse MLP (_qwen3_sparse_mlp; n_ff the experts'
    n_ff_exp, n_expert_used the k routed a token, norm_top_k norm_top_k_prob). mask_pad: the mask's batch padding
    (ggml.h GGML_KQ_MASK_PAD 64 to v0.13.4; from v0.13.5, 49a9c9ba6, kvcache/causal.go buildMask pads nothing)."""
    E, H, KV, D, FF, Tn = n_embd, n_head, n_head_kv, head_dim, n_ff, n_tokens
    pad = round_up(Tn, mask_pad) if flash_attention else Tn

    w = _weight

    def inp(nbytes: int, *shape: int, kind: str = "f32") -> T:
        return T("", nbytes=nbytes, layout=(kind, shape))

    g = Graph()
    ck, cv = w(D, KV, cells), w(D, KV, cells)
    if on_cpu:
        def inp(nbytes: int, *shape: int, kind: str = "f32") -> T:  # noqa: F811 (ctx.Input(): a buffer of its own)
            return T("", nbytes=nbytes, layout=(kind, shape), external=True)

        x = _f32("get_rows", (w(E, n_vocab), inp(4 * Tn, Tn, kind="i32")), E, Tn)
    else:
        x = inp(4 * E * Tn, E, Tn)
    pos = inp(4 * Tn, Tn, kind="i32")
    outs = inp(4 * n_outputs, n_outputs, kind="i32")
    locs = inp(4 * Tn, Tn, kind="i32") if set_rows else None
    if not flash_attention:
        mask = inp(4 * cells * pad, cells, pad)  # MaskDType F32: no cast
    elif mask_cast:
        mask = T("cpy", (inp(4 * cells * pad, cells, pad),), 2 * cells * pad, ("f16", (cells, pad)))
    else:
        mask = inp(2 * cells * pad, cells, pad, kind="f16")
    an, qn, kn, fn, on = w(E), w(D), w(D), w(E), w(E)
    wq, wk, wv, wo = w(E, H * D), w(E, KV * D), w(E, KV * D), w(H * D, E)
    if n_expert:  # model/models/qwen3 sparse: ffn_gate_inp and the experts' gate, up and down (FF: n_ff_exp)
        wr, wg, wu, wd = w(E, n_expert), w(E, FF, n_expert), w(E, FF, n_expert), w(FF, E, n_expert)
    else:
        wg, wu, wd = w(E, FF), w(E, FF), w(FF, E)
    wout = w(E, n_vocab)

    def norm(t: T, weight: T, *shape: int) -> T:
        return _f32("mul", (_f32("rms_norm", (t,), *shape), weight), *shape)

    t = Tn
    for il in range(n_layer):
        res = x
        n = norm(x, an, E, Tn)
        q = view(_f32("mul_mat", (wq, n), H * D, Tn))
        k = view(_f32("mul_mat", (wk, n), KV * D, Tn))
        v = view(_f32("mul_mat", (wv, n), KV * D, Tn))
        q = _f32("rope", (norm(q, qn, D, H, Tn), pos, None), D, H, Tn)
        k = _f32("rope", (norm(k, kn, D, KV, Tn), pos, None), D, KV, Tn)
        g.expand(q)
        g.expand(k, v)
        for src, dst in ((k, ck), (v, cv)):
            if set_rows:
                g.expand(view(view(dst), view(src), locs))
            else:
                g.expand(view(view(dst), src))
        if flash_attention:
            o = _f32("flash_attn_ext", (view(q), view(view(ck)), view(view(cv)), mask), D, H, Tn)
        else:
            kq = _f32("soft_max", (_f32("mul_mat", (view(view(ck)), view(q)), cells, Tn, H), mask), cells, Tn, H)
            o = _f32("cont", (view(_f32("mul_mat", (view(view(cv)), kq), D, Tn, H)),), D, H, Tn)
        x = _f32("mul_mat", (wo, view(o)), E, Tn)
        if il == n_layer - 1:
            t = n_outputs
            x, res = _f32("get_rows", (x, outs), E, t), _f32("get_rows", (res, outs), E, t)
        x = _f32("add", (x, res), E, t)
        res = x
        n = norm(x, fn, E, t)
        if n_expert:
            x = _f32("add", (_qwen3_sparse_mlp(n, wr, wg, wu, wd, E, FF, n_expert, n_expert_used, t, norm_top_k),
                             res), E, t)
            continue
        a = _f32("glu", (_f32("mul_mat", (wg, n), FF, t), _f32("mul_mat", (wu, n), FF, t)), FF, t)
        x = _f32("add", (_f32("mul_mat", (wd, a), E, t), res), E, t)
    g.expand(_f32("mul_mat", (wout, norm(x, on, E, t)), n_vocab, t))
    return reserve(g, alignment)


def _qwen3_sparse_mlp(n: T, wr: T, wg: T, wu: T, wd: T, E: int, FF: int, n_expert: int, k: int, t: int,
                      norm_top_k: bool) -> T:
    """model/models/qwen3 sparse.Forward (v0.12.4-v0.24.0 alike) on the normed rows n (E x t): the router's
    logits and their softmax (in place), TopK (ml/backend/ggml Tensor.TopK: ggml_argsort_top_k, an I32 argsort of
    every expert and a view of its first k), the routing weights' Rows of the k selected (get_rows, 1 x k x t),
    normalized by their SumRows (Div) where norm_top_k_prob, the gate and up mul_mat_id (FF x k x t each) and their
    SwiGLU, down's mul_mat_id (E x k x t) times the weights (in place), and the k experts' rows summed by views
    (the first Add takes a block of its own, the others run in place)."""
    flat = view(n)  # hiddenStates.Reshape(hiddenDim, sequenceLength*batchSize)
    probs = _f32("soft_max", (_f32("mul_mat", (wr, flat), n_expert, t),), n_expert, t)
    sel = view(_made("argsort", (probs,), 4, n_expert, t))
    weights = _f32("get_rows", (view(probs), sel), 1, k, t)
    if norm_top_k:
        rows = view(weights)
        weights = _f32("div", (rows, _f32("sum_rows", (rows,), 1, t)), k, t)
    weights = view(weights)
    h = view(flat)  # Reshape(hiddenDim, 1, tokens)
    act = _f32("glu", (_f32("mul_mat_id", (wg, h, sel), FF, k, t), _f32("mul_mat_id", (wu, h, sel), FF, k, t)),
               FF, k, t)
    experts = _f32("mul", (_f32("mul_mat_id", (wd, act, sel), E, k, t), weights), E, k, t)
    out = view(experts)
    for _ in range(1, k):
        out = _f32("add", (out, view(experts)), E, t)
    return out


_QWEN3_MOE = ("qwen3moe",)  # model/models/qwen3 registers both: the sparse MLP where the GGUF has experts


def qwen3_gpu_graph_replayed(spec: ModelSpec, n_tokens: int, cells: int, n_outputs: int, mask_cast: bool,
                             set_rows: bool, flash_attention: bool = True, on_cpu: bool = False,
                             mask_pad: int = MASK_BATCH_PAD, moe: bool = False) -> int | None:
    """qwen3_dense_graph_bytes for a dense qwen3 model (None for other models), 128 B aligned as the CUDA buffer
    type places tensors (32 B on the CPU, ggml-cpu's TENSOR_ALIGNMENT); equal to qwen3_gpu_graph before v0.12.7.
    Without flash attention (v0.12.0-v0.12.6), equal to the printed compute graph of two held-out logs:
    ollama/ollama#13343 (qwen3:8b, all on the CPU, 4096 cells: required.CPU.Graph=301989888, 288.00 MiB) and
    ollama/ollama#13085 (qwen3:4b F16, all on a ROCm GPU, 4096 cells: "290.0 MiB", replayed 290.002 MiB).
    moe: a qwen3moe model too, through model/models/qwen3's sparse MLP (_qwen3_sparse_mlp), where the caller has
    it replayed (the whole graph on the CPU: josheeg/Game-Note-'s Qwen3-Coder-30B-A3B at v0.16.1, "compute graph"
    CPU 96.0 / 88.0 MiB at 16384 / 4096 cells, replayed to the byte). mask_pad: the mask's batch padding (ggml.h
    GGML_KQ_MASK_PAD: 64 to v0.13.4, none from v0.13.5, kvcache/causal.go buildMask)."""
    if spec.architecture not in _QWEN3_DENSE + (_QWEN3_MOE if moe else ()):
        return None
    layer = next((la for la in spec.layers if la.attention is not None), None)
    if layer is None or layer.ffn.is_moe != (spec.architecture in _QWEN3_MOE):
        return None
    at, ffn = layer.attention, layer.ffn
    return qwen3_dense_graph_bytes(spec.n_embd, at.n_heads, at.n_kv_heads, at.head_dim_v,
                                   ffn.n_ff_expert if ffn.is_moe else ffn.n_ff, spec.n_trunk_layers, spec.n_vocab,
                                   n_tokens, cells, n_outputs, mask_cast, set_rows, 32 if on_cpu else 128,
                                   flash_attention, on_cpu, mask_pad, ffn.n_experts, ffn.n_experts_used)


GEMMA3_GLOBAL_EVERY = 6  # model/models/gemma3/model_text.go gemmaGlobalCacheCount: every 6th block is a global one


@lru_cache(maxsize=64)
def gemma3_embed_graph_bytes(n_embd: int, n_head: int, n_head_kv: int, head_dim: int, n_ff: int, n_layer: int,
                             n_vocab: int, n_tokens: int, swa_cells: int, full_cells: int, dense: tuple[int, ...],
                             on_cpu: bool = False, alignment: int = 128) -> int:
    """ggml-alloc's buffer for Ollama's gemma3 embedding graph without flash attention (v0.11.10-v0.11.11), replayed
    node for node (galloc.py): model/models/gemma3/embed.go embedModel.Forward sets batch.Outputs to every position
    and runs TextModel.Forward (model_text.go: the token rows scaled by sqrt(n_embd); per block attn_norm, the Q / K /
    V projections, the Q and K norms, NeoX RoPE, Q scaled by 1/sqrt(head_dim), nn.Attention's cache writes (Put:
    ctx.Forward of K's copy and of V's permuted copy), post_attention_norm, on the last block Rows of the hidden
    state and the residual at the outputs, ffn_norm, GELU in place on the gate, x up, ffn_down, post_ffw_norm) and
    output_norm, then the mean pooling (pooling_type 1: permute, contiguous, ggml_mean, permute, contiguous) and the
    dense projections (dense.0, dense.1 of the GGUF). ml/backend/ggml ScaledDotProductAttention without flash
    attention: kq = mul_mat(K view, Q) in F32 (cells x tokens x heads), soft_max_ext with the mask, kqv =
    mul_mat(V view, kq), a contiguous copy of its permutation; Backend.CacheConfig {CachePadding 32, PermutedV}:
    kvcache/causal.go buildMask makes each cache's reserve mask an F32 input of cells x tokens
    (ctx.Input().Empty), the SWA cache's (swa_cells: one sequence's window + the batch) and the global cache's.

    Every block on a GPU: the token rows (token_embd's get_rows stays on the CPU with the input weights), the
    positions, the output index (one row a token) and the two masks are the split's inputs the scheduler copies
    into the GPU's buffer. on_cpu: the whole graph on the CPU backend (get_rows a node of this buffer, the inputs
    in buffers of their own). Held to ollama/ollama#12247's CUDA0 "compute graph" 108.0 MiB (embeddinggemma,
    2048-token batch: 113,262,592 B replayed) and to ggml_gallocr_reserve on the same graph built with ggml
    (tests/test_ollama_graph_ggml.py)."""
    E, H, KV, D, FF, Tn = n_embd, n_head, n_head_kv, head_dim, n_ff, n_tokens

    def inp(nbytes: int, *shape: int, kind: str = "f32") -> T:
        return T("", nbytes=nbytes, layout=(kind, shape), external=on_cpu)

    def norm(t: T, *shape: int) -> T:
        return _f32("mul", (_f32("rms_norm", (t,), *shape), _weight(shape[0])), *shape)

    g = Graph()
    if on_cpu:
        rows = _f32("get_rows", (_weight(E, n_vocab), inp(4 * Tn, Tn, kind="i32")), E, Tn)
    else:
        rows = inp(4 * E * Tn, E, Tn)
    masks = {False: inp(4 * swa_cells * Tn, swa_cells, Tn), True: inp(4 * full_cells * Tn, full_cells, Tn)}
    pos = inp(4 * Tn, Tn, kind="i32")
    outs = inp(4 * Tn, Tn, kind="i32")
    x = _f32("scale", (rows,), E, Tn)
    for il in range(n_layer):
        is_global = (il + 1) % GEMMA3_GLOBAL_EVERY == 0
        cells = full_cells if is_global else swa_cells
        ck, cv = _weight(D, KV, cells), _weight(cells, D, KV)  # the layer's K cache and its permuted V cache
        res = x
        n = norm(x, E, Tn)
        q = view(_f32("mul_mat", (_weight(E, H * D), n), H * D, Tn))
        q = _f32("scale", (_f32("rope", (norm(q, D, H, Tn), pos, None), D, H, Tn),), D, H, Tn)
        k = view(_f32("mul_mat", (_weight(E, KV * D), n), KV * D, Tn))
        k = _f32("rope", (norm(k, D, KV, Tn), pos, None), D, KV, Tn)
        v = view(_f32("mul_mat", (_weight(E, KV * D), n), KV * D, Tn))
        g.expand(view(view(ck), k))  # Put: ctx.Forward(key.Copy(the K cache's view))
        g.expand(view(view(cv), view(v)))  # and value.Permute(1, 2, 0, 3).Copy(the V cache's view)
        kq = _f32("soft_max", (_f32("mul_mat", (view(ck), view(q)), cells, Tn, H), masks[is_global]), cells, Tn, H)
        o = _f32("cont", (view(_f32("mul_mat", (view(cv), kq), D, Tn, H)),), D, H, Tn)
        x = norm(_f32("mul_mat", (_weight(H * D, E), view(o)), E, Tn), E, Tn)
        if il == n_layer - 1:
            x, res = _f32("get_rows", (x, outs), E, Tn), _f32("get_rows", (res, outs), E, Tn)
        x = _f32("add", (x, res), E, Tn)
        res = x
        n = norm(x, E, Tn)
        gate = view(_f32("mul_mat", (_weight(E, FF), n), FF, Tn))  # ggml_gelu_inplace: a view of the gate rows
        a = _f32("mul", (gate, _f32("mul_mat", (_weight(E, FF), n), FF, Tn)), FF, Tn)
        x = _f32("add", (norm(_f32("mul_mat", (_weight(FF, E), a), E, Tn), E, Tn), res), E, Tn)
    x = _f32("cont", (view(norm(x, E, Tn)),), Tn, E)
    x = _f32("cont", (view(_f32("mean", (x,), 1, E)),), E, 1)
    width = E
    for d in dense:
        x, width = _f32("mul_mat", (_weight(width, d), x), d, 1), d
    g.expand(x)
    return reserve(g, alignment)


def gemma3_embed_graph_replayed(spec: ModelSpec, n_tokens: int, swa_cells: int, full_cells: int,
                                on_cpu: bool = False) -> int | None:
    """gemma3_embed_graph_bytes for EmbeddingGemma in Ollama's GGUF (weights.py gemma3_embed; None for other
    models): 128 B aligned as the CUDA buffer type places tensors, 32 B on the CPU (ggml-cpu's TENSOR_ALIGNMENT).
    The dense projections are the checkpoint's sentence-transformers Dense modules (n_embd -> 4 x n_embd ->
    n_embd), a few KiB at the graph's end."""
    from .weights import gemma3_embed  # weights.py imports the llama.cpp engine, which graph.py need not load

    if not gemma3_embed(spec):
        return None
    layer = next((la for la in spec.layers if la.attention is not None), None)
    if layer is None or layer.ffn.is_moe:
        return None
    at = layer.attention
    return gemma3_embed_graph_bytes(spec.n_embd, at.n_heads, at.n_kv_heads, at.head_dim_v, layer.ffn.n_ff,
                                    spec.n_trunk_layers, spec.n_vocab, n_tokens, swa_cells, full_cells,
                                    (4 * spec.n_embd, spec.n_embd), on_cpu, 32 if on_cpu else 128)


@lru_cache(maxsize=64)
def nomicbert_graph_bytes(n_embd: int, n_head: int, head_dim: int, n_ff: int, n_layer: int, n_vocab: int,
                          n_tokens: int, on_cpu: bool = False, alignment: int = 128) -> int:
    """ggml-alloc's buffer for Ollama's nomic-bert graph (model/models/nomicbert/model.go, v0.13.2+), replayed node
    for node (galloc.py): the token rows plus token_types' first row, token_embd_norm (norm, x weight, + bias); per
    block attn_qkv (no bias), Reshape and Chunk into Q, K and V views, NeoX RoPE on Q and K, nn.Attention without a
    cache: ml/backend/ggml ScaledDotProductAttention without flash attention (embedding models never have it):
    the permuted V made contiguous (value.Permute(1, 2, 0, 3).Contiguous) before kq = mul_mat(K, Q) in F32
    (tokens x tokens x heads) and soft_max_ext (no mask), kqv = mul_mat(V, kq), its permutation made contiguous,
    attn_output, + residual, attn_output_norm; the SwiGLU FFN (ffn_gate, ffn_up, SILU(gate, up), ffn_down),
    + residual, layer_output_norm; then the mean pooling (permute, contiguous, ggml_mean, permute, contiguous).
    The batch is the whole context from v0.13.3 (layout._reserve_batch), so the scores dominate: 12 heads x 2048^2
    x 4 B = 192 MiB of Ka0s-Klaus/ka0s's CPU "compute graph" 234.0 MiB (nomic-embed-text v1.5 at 2048 tokens).
    on_cpu: token_embd's get_rows a node of this buffer and the inputs in buffers of their own; on a GPU the token
    rows and positions are split inputs copied in."""
    E, H, D, FF, Tn = n_embd, n_head, head_dim, n_ff, n_tokens

    def inp(nbytes: int, *shape: int, kind: str = "f32") -> T:
        return T("", nbytes=nbytes, layout=(kind, shape), external=on_cpu)

    def layer_norm(t: T) -> T:
        return _f32("add", (_f32("mul", (_f32("norm", (t,), E, Tn), _weight(E)), E, Tn), _weight(E)), E, Tn)

    g = Graph()
    if on_cpu:
        rows = _f32("get_rows", (_weight(E, n_vocab), inp(4 * Tn, Tn, kind="i32")), E, Tn)
    else:
        rows = inp(4 * E * Tn, E, Tn)
    x = layer_norm(_f32("add", (rows, view(_weight(E, 2))), E, Tn))  # TypeEmbedding.Weight.Slice(1, 0, 1, 1)
    pos = inp(4 * Tn, Tn, kind="i32")
    for _ in range(n_layer):
        res = x
        qkv = _f32("mul_mat", (_weight(E, 3 * E), x), 3 * E, Tn)
        q = _f32("rope", (view(qkv), pos, None), D, H, Tn)
        k = _f32("rope", (view(qkv), pos, None), D, H, Tn)
        v = _f32("cont", (view(qkv),), Tn, D, H)
        kq = _f32("soft_max", (_f32("mul_mat", (view(k), view(q)), Tn, Tn, H), None), Tn, Tn, H)
        o = _f32("cont", (view(_f32("mul_mat", (v, kq), D, Tn, H)),), D, H, Tn)
        x = layer_norm(_f32("add", (_f32("mul_mat", (_weight(E, E), view(o)), E, Tn), res), E, Tn))
        res = x
        gate = _f32("mul_mat", (_weight(E, FF), x), FF, Tn)
        hidden = _f32("glu", (gate, _f32("mul_mat", (_weight(E, FF), x), FF, Tn)), FF, Tn)
        x = layer_norm(_f32("add", (_f32("mul_mat", (_weight(FF, E), hidden), E, Tn), res), E, Tn))
    x = _f32("cont", (view(x),), Tn, E)
    g.expand(_f32("cont", (view(_f32("mean", (x,), 1, E)),), E, 1))
    return reserve(g, alignment)


def nomicbert_graph_replayed(spec: ModelSpec, n_tokens: int, on_cpu: bool = False) -> int | None:
    """nomicbert_graph_bytes for a dense nomic-bert (None for other models and for nomic-bert-moe's sparse FFN):
    32 B aligned on the CPU (ggml-cpu's TENSOR_ALIGNMENT), 128 B on a GPU."""
    if spec.architecture != "nomic-bert":
        return None
    layer = next((la for la in spec.layers if la.attention is not None), None)
    if layer is None or layer.ffn.is_moe:
        return None
    at = layer.attention
    return nomicbert_graph_bytes(spec.n_embd, at.n_heads, at.head_dim_v, layer.ffn.n_ff, spec.n_trunk_layers,
                                 spec.n_vocab, n_tokens, on_cpu, 32 if on_cpu else 128)


@lru_cache(maxsize=64)
def _reshaped(x: T, per: int, *shape: int) -> T:
    """A Reshape of a contiguous tensor: a view with a fresh tensor's layout."""
    v = view(x)
    v.layout = (per, shape)
    return v


def _split_input(on_gpu: bool, nbytes: int, *shape: int) -> T:
    """A graph input: on a GPU a split input the scheduler copies into the buffer, on the CPU a buffer of its own."""
    if on_gpu:
        return T("cpy", (), nbytes, ("cpy", shape))
    return T("", nbytes=nbytes, layout=("in", shape), external=True)


def _vl_input(size: int, shape: tuple[int, ...], on_gpu: bool) -> T:
    """A ctx.Input() tensor: in a buffer of its own on the CPU, a leaf in the scheduler's buffer on a GPU."""
    return T("", nbytes=size, layout=("in", shape), external=not on_gpu)


def _vl_linear(x: T, i: int, o: int, cols: int) -> T:
    return _made("add", (_made("mul_mat", (_weight(i, o), x), 4, o, cols), _weight(o)), 4, o, cols)


def _vl_rms_norm(x: T, E: int, cols: int) -> T:
    return _made("mul", (_made("rms_norm", (x,), 4, E, cols), _weight(E)), 4, E, cols)


def _qwen25vl_patch_embed(pix: T, E: int, n: int) -> T:
    """PatchEmbedding (the same code in v0.13.0-v0.13.3 and v0.13.4+): the two temporal halves' F16 conv_2d
    (im2col, matmul, permuted copy), summed."""
    t, w = _made, _weight
    pv = t("cont", (view(view(pix)),), 4, 2, 196, 3, n)
    convs = []
    for _ in range(2):
        x = view(t("cont", (view(pv),), 4, 1, 196, 3, n))
        col = t("im2col", (w(14, 14, 3, E), x), 2, 588, 1, 1, n)
        mm = t("mul_mat", (view(col), view(w(14, 14, 3, E))), 4, n, E)
        convs.append(t("cont", (view(view(mm)),), 4, 1, 1, E, n))
    return view(t("add", (convs[0], convs[1]), 4, 1, 1, E, n))


def _qwen25vl_blocks(h: T, E: int, H: int, n: int, n_ff: int, n_layer: int, full_layers: tuple[int, ...],
                     mask: T, rope) -> T:
    """The encoder blocks: RMSNorm, q/k/v with biases, `rope` on q and k, the attention by hand (kq = k x q in
    F32 per head, scaled, the block-diagonal mask on the window blocks, softmax), the output, the SwiGLU MLP."""
    t, D = _made, E // H
    for il in range(n_layer):
        res = h
        x = _vl_rms_norm(h, E, n)
        q, k, v = (view(_vl_linear(x, E, E, n)) for _ in range(3))
        q, k = rope(q), rope(k)
        v = t("cont", (view(v),), 4, n, D, H)
        kq = t("scale", (t("mul_mat", (k, q), 4, n, n, H),), 4, n, n, H)
        if il not in full_layers:
            kq = t("add", (kq, mask), 4, n, n, H)
        kq = t("soft_max", (kq, None, None), 4, n, n, H)
        a = view(t("cont", (view(t("mul_mat", (v, kq), 4, D, n, H)),), 4, D, H, n))
        h = t("add", (_vl_linear(a, E, E, n), res), 4, E, n)
        res = h
        x = _vl_rms_norm(h, E, n)
        x = t("glu", (_vl_linear(x, E, n_ff, n), _vl_linear(x, E, n_ff, n)), 4, n_ff, n)
        h = t("add", (_vl_linear(x, n_ff, E, n), res), 4, E, n)
    return h


def _qwen25vl_merger(h: T, E: int, n: int, out_hidden: int) -> T:
    """The patch merger: RMSNorm, then 4 patches' rows through the two-layer GELU MLP."""
    x = view(_vl_rms_norm(h, E, n))
    hidden = _made("unary", (_vl_linear(x, 4 * E, 4 * E, n // 4),), 4, 4 * E, n // 4)
    return _vl_linear(hidden, 4 * E, out_hidden, n // 4)


def qwen25vl_vision_graph_bytes(grid_h: int, grid_w: int, hidden: int, n_head: int, n_ff: int, out_hidden: int,
                                n_layer: int, full_layers: tuple[int, ...], on_gpu: bool,
                                alignment: int = 128) -> int:
    """ggml-alloc's buffer for Ollama's own Qwen2.5-VL vision encoder on one image of grid_h x grid_w patches
    (model/models/qwen25vl/model_vision.go v0.13.4+, 971d62595; 14 x 14 patches of 2 frames x 3 channels and F16
    patch kernels, as every Qwen2.5-VL GGUF has them), replayed node for node (galloc.py): the two
    temporal patch convolutions (ggml_conv_2d: im2col in the kernel's F16, the matmul, the permuted copy), the
    window order (argsort + get_rows), per block RMSNorm, q/k/v with biases, the vision RoPE, the attention by hand
    (kq = k x q in F32 for every head, scaled, plus the block-diagonal mask on the window blocks, softmaxed in
    place), the output, the SwiGLU MLP, then the merger and the rows back in order. The encoder's inputs (the
    pixels, the window index, the positions, the n x n f32 mask) are ctx.Input() tensors in buffers of their own
    on the CPU; on a GPU the scheduler copies them into its buffer.

    The peak is the first window block's scores: 4 B x patches^2 x heads, above the mask copy and the rows
    (ollama/ollama#13687: a 2048 x 2048 image resized to 1428 x 1428, 102 x 102 patches, 16 heads:
    6.45 GiB of scores). Equal to ggml_gallocr_reserve on the graph built with ggml
    (tests/test_ollama_graph_ggml.py) on the CPU and with the inputs in the buffer."""
    E, H, n = hidden, n_head, grid_h * grid_w
    D = E // H
    g, t = Graph(), _made
    pix = _vl_input(4 * 1176 * n, (1176, n), on_gpu)
    widx = _vl_input(4 * (n // 4), (n // 4,), on_gpu)
    pos = _vl_input(4 * 4 * n, (4 * n,), on_gpu)
    mask = _vl_input(4 * n * n, (n, n), on_gpu)
    h = _qwen25vl_patch_embed(pix, E, n)
    h = view(t("get_rows", (view(h), t("argsort", (widx,), 4, n // 4)), 4, 4 * E, n // 4))
    h = _qwen25vl_blocks(h, E, H, n, n_ff, n_layer, full_layers, mask,
                         lambda a: view(t("rope", (a, pos, None), 4, D, H, n)))
    g.expand(t("get_rows", (_qwen25vl_merger(h, E, n, out_hidden), widx), 4, out_hidden, n // 4))
    return reserve(g, alignment)


def qwen25vl_rotate_half_vision_graph_bytes(grid_h: int, grid_w: int, hidden: int, n_head: int, n_ff: int,
                                            out_hidden: int, n_layer: int, full_layers: tuple[int, ...],
                                            on_gpu: bool, merge: int = 2, alignment: int = 128) -> int:
    """ggml-alloc's buffer for Ollama's Qwen2.5-VL vision encoder as model/models/qwen25vl/model_vision.go builds it
    in v0.13.0-v0.13.3 (333203d87's Slice in rotateHalf; 971d62595 replaced the whole encoder in v0.13.4), replayed
    node for node (galloc.py) on one image of grid_h x grid_w patches. What differs from the v0.13.4+ encoder
    (qwen25vl_vision_graph_bytes):
    - PositionalEmbedding: a frequency table [head_dim / 4, max(grid)] and the (y, x) ids [2, w, h] are ctx.Input()
      tensors; the ids are reshaped, permuted and copied twice into the merge order, the table's rows taken by
      them ([head_dim / 4, 2 x patches] -> [head_dim / 2, patches]);
    - the window order: hiddenStates and the position rows taken by the window index at the start (get_rows on
      4-patch rows), the position rows concatenated with themselves ([head_dim, patches]), Cos and Sin of them;
      the index's argsort puts the merger's rows back at the end;
    - the rotate-half RoPE on q and k: q x cos + concat(-x2, x1) x sin (the second half's Contiguous copy, its
      Scale(-1), the Concat), no ggml_rope;
    - blockDiagonalMask: an n x n F32 ctx.Input() reshaped to [n, n, 1].
    Inputs in a buffer of their own on the CPU; on a GPU leafs of the graph in its buffer, as in the v0.13.4+
    replay. Equal to ggml_gallocr_reserve on the encoder built with ggml (tests/test_ollama_graph_ggml.py)."""
    E, H, n = hidden, n_head, grid_h * grid_w
    D = E // H
    F = D // 4  # the frequencies of one axis (PositionalEmbedding: dim = head_dim / 2, freq = dim / 2)
    g, t = Graph(), _made
    pix = _vl_input(4 * 1176 * n, (1176, n), on_gpu)
    freqs = _vl_input(4 * F * max(grid_h, grid_w), (F, max(grid_h, grid_w)), on_gpu)
    coords = _vl_input(4 * 2 * n, (2, grid_w, grid_h), on_gpu)
    widx = _vl_input(4 * (n // 4), (n // 4,), on_gpu)
    mask = _vl_input(4 * n * n, (n, n), on_gpu)
    h = _qwen25vl_patch_embed(pix, E, n)
    pos = t("cont", (view(view(coords)),), 4, 2, merge, grid_w, grid_h // merge)  # I32 ids
    pos = view(t("cont", (view(view(pos)),), 4, 2, merge, merge, n // (merge * merge)))
    pe = view(t("get_rows", (freqs, pos), 4, F, 2 * n))
    h = view(t("get_rows", (view(h), widx), 4, 4 * E, n // 4))
    pe = view(t("get_rows", (view(pe), widx), 4, 8 * F, n // 4))
    pe = t("concat", (pe, pe), 4, D, n)
    cos, sin = view(t("cos", (pe,), 4, D, n)), view(t("sin", (pe,), 4, D, n))

    def rotate_half(a: T) -> T:
        half = t("scale", (t("cont", (view(a),), 4, D // 2, H, n),), 4, D // 2, H, n)
        rotated = t("mul", (t("concat", (half, view(a)), 4, D, H, n), sin), 4, D, H, n)
        return view(t("add", (t("mul", (a, cos), 4, D, H, n), rotated), 4, D, H, n))

    h = _qwen25vl_blocks(h, E, H, n, n_ff, n_layer, full_layers, view(mask), rotate_half)
    x = _qwen25vl_merger(h, E, n, out_hidden)
    g.expand(t("get_rows", (x, t("argsort", (widx,), 4, n // 4)), 4, out_hidden, n // 4))
    return reserve(g, alignment)


QWEN25VL_MAX_PIXELS = 2 << 20  # process_image.go newImageProcessor vision.max_pixels default from v0.13.4 (28 x 28 x 1280 before)
QWEN25VL_MAX_PIXELS_1MP = 28 * 28 * 1280  # process_image.go newImageProcessor vision.max_pixels default, v0.7.0-v0.13.3
RESERVE_IMAGE = 2048  # runner/ollamarunner reserveWorstCaseGraph: a 2048 x 2048 image (v0.7.0+)


def qwen25vl_reserve_grid(max_pixels: int, patch: int = 14, merge: int = 2, side: int = RESERVE_IMAGE
                          ) -> tuple[int, int]:
    """Patches (rows, columns) of the reserve image after process_image.go SmartResize: sides rounded to
    patch x merge, scaled down by sqrt(pixels / max_pixels) and floored to that factor when over max_pixels
    (2048 x 2048 -> 1428 x 1428 at 2 << 20, 980 x 980 at 28 x 28 x 1280)."""
    factor = patch * merge
    h = w = round(side / factor) * factor
    if h * w > max_pixels:
        beta = (side * side / max_pixels) ** 0.5
        h = w = int(side / beta / factor) * factor
    return h // patch, w // patch


def pixtral_reserve_side(image_size: int, patch: int, side: int = RESERVE_IMAGE) -> int:
    """The reserve image's side after model/models/mistral3/imageproc.go ProcessImage (v0.6.5+): scaled down to
    the longest edge (vision.longest_edge, the encoder's image_size) by floor(side / ratio), then rounded up to
    whole patches (2048 -> 1540 for Pixtral's 1540 / 14: 110 x 110 patches)."""
    size = side
    ratio = side / image_size
    if ratio > 1.0:
        size = int(side / ratio)
    return ((size - 1) // patch + 1) * patch


def pixtral_vision_graph_bytes(side: int, patch: int, hidden: int, n_head: int, n_ff: int, n_layer: int,
                               merge: int, text_hidden: int, on_gpu: bool, alignment: int = 128,
                               flash_attention: bool = False) -> int:
    """ggml-alloc's buffer for Ollama's Pixtral encoder (mistral3: Mistral Small 3.x, Ministral 3) on the side x side
    reserve image, replayed node for node (galloc.py) as runner/ollamarunner multimodal.go getTensor reserves it
    (computeCtx.Forward(rows...).Reserve(): the graph of the image rows alone), without flash attention
    (model/models/mistral3/model_vision.go and model.go, v0.13.0+):
    - nn.Conv2D (ggml_conv_2d: im2col in the F16 kernel's type, the matmul, the permuted copy), Reshape + Permute
      + Contiguous to [hidden, patches], the encoder RMSNorm;
    - positionalEmbedding: the two frequency tables and the position ids are ctx.Input() tensors, their
      Permute/Contiguous, Repeat, the two Concats and Rows, then Cos and Sin [head_dim, patches];
    - per block: RMSNorm, q/k/v (no biases), the rotate-half RoPE on q and k (t x cos + concat(-x2, x1) x sin: the
      second half's Contiguous copy, its Scale and the Concat), nn.Attention with no cache: before v0.13.2
      (1108d8b34) always by hand, from it ScaledDotProductAttention's non-flash branch (soft_max_ext in place of
      Scale + Softmax, same buffers): V permuted and copied, kq = k x q F32 [patches, patches, heads] scaled and
      softmaxed in place, kqv, its permuted copy, the output and the residual; the SwiGLU MLP and the residual;
    - the projector: RMSNorm, the patch merger (a copy to [patches, hidden], IM2Col of merge x merge on an input
      kernel, merging_layer), linear_1, GELU in place, linear_2.
    On a GPU the inputs (pixels, the two tables, the ids, the merger's kernel) are split inputs the scheduler
    copies into the buffer at the split's start (ggml_backend_sched_split_graph; the position chain runs on the GPU
    as the expansion skips the tables' CPU views); on the CPU they stay in buffers of their own. The peak is the
    first block's scores, 4 B x patches^2 x heads, above the block's residual, V, the roped q and k and a freed
    matmul's hole.

    flash_attention (v0.13.2+, 1108d8b34, with flash attention on): ScaledDotProductAttention's flash branch with
    no cache and no mask: q, k and v permuted (views, F32) into ggml_flash_attn_ext, whose [head_dim, heads,
    patches] output is reshaped for the output projection; no scores in the buffer (ggml-cuda's kernels take F32 K
    and V, fattn.cu ggml_cuda_get_best_fattn_kernel, converting them to F16 in its pool, not in this buffer)."""
    px = side // patch
    n, E, H, FF = px * px, hidden, n_head, n_ff
    D = E // H
    g = Graph()

    w, t = _weight, _made

    rs, inp = _reshaped, partial(_split_input, on_gpu)

    def lin(x: T, i: int, o: int, cols: int) -> T:
        return t("mul_mat", (w(i, o), x), 4, o, cols)

    def norm(x: T, *shape: int) -> T:
        return t("mul", (t("rms_norm", (x,), 4, *shape), w(shape[0])), 4, *shape)

    F = D // 4  # the frequencies of one axis
    pix = inp(4 * side * side * 3, side, side, 3)
    f_h, f_w = inp(4 * px * F, px, F), inp(4 * px * F, px, F, 1)
    ids, kernel = inp(4 * n, n), inp(4 * merge * merge * E, merge, merge, E)
    g.expand(pix, f_h, f_w, ids, kernel)  # the split's inputs, in the order its nodes first read them
    k2 = 3 * patch * patch
    col = t("im2col", (w(patch, patch, 3, E), pix), 2, k2, px, px, 1)
    mm = t("mul_mat", (rs(col, 2, k2, n), view(w(k2, E))), 4, n, E)
    h = t("cont", (view(rs(mm, 4, px, px, E, 1)),), 4, px, px, E, 1)
    h = norm(t("cont", (view(rs(h, 4, n, E)),), 4, E, n), E, n)
    hh = t("repeat", (t("cont", (view(f_h),), 4, F, px),), 4, F, n)
    hh = t("cont", (view(rs(hh, 4, F, px, px)),), 4, F, px, px)
    ww = t("repeat", (t("cont", (view(f_w),), 4, F, px, 1),), 4, F, px, px)
    freqs = view(t("concat", (hh, ww), 4, 2 * F, px, px))
    pe = t("get_rows", (t("concat", (freqs, freqs), 4, D, n), ids), 4, D, n)
    cos, sin = view(t("cos", (pe,), 4, D, n)), view(t("sin", (pe,), 4, D, n))

    def rope(a: T) -> T:
        half = t("scale", (t("cont", (view(a),), 4, D // 2, H, n),), 4, D // 2, H, n)
        rotated = t("mul", (t("concat", (half, view(a)), 4, D, H, n), sin), 4, D, H, n)
        return t("add", (t("mul", (a, cos), 4, D, H, n), rotated), 4, D, H, n)

    for _ in range(n_layer):
        res = h
        x = norm(h, E, n)
        q, k, v = (rs(lin(x, E, E, n), 4, D, H, n) for _ in range(3))
        if flash_attention:
            a = t("flash_attn_ext", (view(rope(q)), view(rope(k)), view(v), None), 4, D, H, n)
        else:
            v = t("cont", (view(v),), 4, n, D, H)
            kq = t("mul_mat", (view(rope(k)), view(rope(q))), 4, n, n, H)
            kq = t("soft_max", (t("scale", (kq,), 4, n, n, H),), 4, n, n, H)
            a = t("cont", (view(t("mul_mat", (v, kq), 4, D, n, H)),), 4, D, H, n)
        h = t("add", (lin(rs(a, 4, E, n), E, E, n), res), 4, E, n)
        res = h
        x = norm(h, E, n)
        x = t("glu", (lin(x, E, FF, n), lin(x, E, FF, n)), 4, FF, n)
        h = t("add", (lin(x, FF, E, n), res), 4, E, n)
    m = px // merge
    h = t("cont", (view(norm(h, E, n)),), 4, n, E)
    x = t("im2col", (kernel, rs(h, 4, px, px, E)), 4, merge * merge * E, m, m, 1)
    x = lin(rs(x, 4, merge * merge * E, m * m), merge * merge * E, E, m * m)
    x = view(lin(x, E, text_hidden, m * m))  # GELU in place: ggml_gelu_inplace is a view
    g.expand(view(lin(x, text_hidden, text_hidden, m * m)))
    return reserve(g, alignment)


@lru_cache(maxsize=16)
def pixtral_host_weights_graph_bytes(side: int, patch: int, hidden: int, n_head: int, n_ff: int, n_layer: int,
                                     merge: int, text_hidden: int, attn_v_bytes: tuple[int, ...],
                                     alignment: int = 128, flash_attention: bool = False) -> int:
    """The GPU's buffer for Ollama's Pixtral encoder (pixtral_vision_graph_bytes' graph, node for node) when its
    weights stay on the CPU: ml/backend/ggml/ggml.go New creates every v.* and mm.* tensor with the output layer
    ("TODO: assign vision tensors to the gpu if possible"), so once the output layer is off the GPU (a partial
    offload) the whole tower is in host memory. The encoder still runs on the GPU: getTensor's SetBatchSize(512)
    lets op_offload move each op reading a host weight there (ggml-backend.cpp ggml_backend_sched_backend_id_from_cur,
    ggml-cuda.cu offload_op: 12100 rows >= 32), each such op starts a split (pass 5: a weight of another backend)
    and the weights it reads are copied into the GPU's buffer at the split's start (the conv kernel twice: the
    im2col's and the matmul's reshaped view), beside the inputs. Replayed through the scheduler
    (llamacpp/sched_replay.py). attn_v_bytes: each block's v.blk.N.attn_v.weight in bytes, the one tower weight
    the Go quantizer types (server/quantization.go newType, v0.7.0+: "_v." is excepted from the v. rule); the
    others are F16 (norms F32). ollama/ollama#13303 (ministral-3:14b Q4_K_M, v0.13.1, the alloc with Layers
    37(3..39) of 41: the output layer on the CPU) and #13312 (ministral-3:3b): ggml_gallocr_reserve_n failed on a
    CUDA0 buffer of 9668469760 B, this replay's figure to the byte with block 0's attn_v Q6_K (860160 B) live at
    the first block's scores; with the weights on the GPU the same graph gives 9646586240."""

    px = side // patch
    n, E, H, FF = px * px, hidden, n_head, n_ff
    D, F, HOST = E // H, E // H // 4, sched_replay.HOST
    g = sched_replay.Graph()

    def w(ne: tuple[int, ...], es: int = 2, size: int = -1) -> sched_replay.T:
        return g.weight(ne, HOST, size=size, es=es)

    def norm(x: sched_replay.T) -> sched_replay.T:
        return g.op("MUL", x.ne, g.op("RMS_NORM", x.ne, x), w((x.ne[0],), 4))

    def lin(x: sched_replay.T, i: int, o: int, size: int = -1) -> sched_replay.T:
        return g.op("MUL_MAT", (o, x.ne[1]), w((i, o), size=size), x)

    pix = g.cache((side, side, 3), HOST, 4)  # ctx.Input() tensors: CPU buffers, not weights
    conv, k2 = w((patch, patch, 3, E)), 3 * patch * patch
    col = g.op("IM2COL", (k2, px, px, 1), conv, pix, es=2)
    mm = g.op("MUL_MAT", (n, E), g.reshape(col, (k2, n)), g.reshape(conv, (k2, E)))
    h = g.op("CONT", (px, px, E, 1), g.permute(g.reshape(mm, (px, px, 1, E)), (0, 1, 3, 2)))
    h = norm(g.op("CONT", (E, n), g.permute(g.reshape(h, (n, E)), (1, 0, 2, 3))))
    f_h, f_w, ids = g.cache((px, F), HOST, 4), g.cache((px, F), HOST, 4), g.cache((n,), HOST, 4)
    hh = g.op("REPEAT", (F, n), g.op("CONT", (F, px), g.permute(f_h, (1, 0, 2, 3))))
    hh = g.op("CONT", (F, px, px), g.permute(g.reshape(hh, (F, px, px)), (0, 2, 1, 3)))
    ww = g.op("REPEAT", (F, px, px), g.op("CONT", (F, px), g.permute(f_w, (1, 0, 2, 3))))
    freqs = g.reshape(g.op("CONCAT", (2 * F, px, px), hh, ww), (2 * F, n))
    pe = g.op("GET_ROWS", (D, n), g.op("CONCAT", (D, n), freqs, freqs), ids)
    cos = g.reshape(g.op("COS", (D, n), pe), (D, 1, n))
    sin = g.reshape(g.op("SIN", (D, n), pe), (D, 1, n))

    def rope(a: sched_replay.T) -> sched_replay.T:
        half = g.op("SCALE", (D // 2, H, n), g.op("CONT", (D // 2, H, n), g.view(a, (D // 2, H, n), a.nb)))
        rotated = g.op("MUL", (D, H, n), g.op("CONCAT", (D, H, n), half, g.view(a, (D // 2, H, n), a.nb)), sin)
        return g.op("ADD", (D, H, n), g.op("MUL", (D, H, n), a, cos), rotated)

    for il in range(n_layer):
        res = h
        x = norm(h)
        q = g.reshape(lin(x, E, E), (D, H, n))
        k = g.reshape(lin(x, E, E), (D, H, n))
        v = g.reshape(lin(x, E, E, attn_v_bytes[il] if il < len(attn_v_bytes) else -1), (D, H, n))
        if flash_attention:
            a = g.op("FLASH_ATTN_EXT", (D, H, n), g.permute(rope(q), (0, 2, 1, 3)), g.permute(rope(k), (0, 2, 1, 3)),
                     g.permute(v, (0, 2, 1, 3)))
        else:
            vc = g.op("CONT", (n, D, H), g.permute(v, (1, 2, 0, 3)))
            kq = g.op("MUL_MAT", (n, n, H), g.permute(rope(k), (0, 2, 1, 3)), g.permute(rope(q), (0, 2, 1, 3)))
            kq = g.op("SOFT_MAX", kq.ne, g.op("SCALE", kq.ne, kq))
            a = g.op("CONT", (D, H, n), g.permute(g.op("MUL_MAT", (D, n, H), vc, kq), (0, 2, 1, 3)))
        h = g.op("ADD", (E, n), lin(g.reshape(a, (E, n)), E, E), res)
        res = h
        x = norm(h)
        h = g.op("ADD", (E, n), lin(g.op("GLU", (FF, n), lin(x, E, FF), lin(x, E, FF)), FF, E), res)
    m = px // merge
    h = g.op("CONT", (n, E), g.permute(norm(h), (1, 0, 2, 3)))
    x = g.op("IM2COL", (merge * merge * E, m, m, 1), g.cache((merge, merge, E), HOST, 4), g.reshape(h, (px, px, E)))
    x = lin(lin(g.reshape(x, (merge * merge * E, m * m)), merge * merge * E, E), E, text_hidden)
    x = g.into("UNARY", x, x)  # ggml_gelu_inplace
    out = lin(x, text_hidden, text_hidden)
    for _ in range(m):  # EncodeMultimodal's rows: views of the features, the tensors getTensor forwards
        g.expand(g.view(out, (text_hidden, m), out.nb))
    return sched_replay.device_peak(g, alignment)


def siglip_vision_graph(side: int, patch: int, hidden: int, n_head: int, n_ff: int, n_layer: int, tokens: int,
                        text_hidden: int, on_gpu: bool, flash_attention: bool = False, conv_bias: bool = True
                        ) -> Graph:
    """The graph of Ollama's gemma3 vision encoder (SigLIP) and projector on the side x side image, as
    runner/ollamarunner multimodal.go getTensor reserves it (model/models/gemma3/model_vision.go and model.go,
    v0.12.3+: the same code through v0.2x):
    - the projector's mm_input_projection weight Permute + Contiguous (the final Mulmat's first source, so the
      first node: its copy, in the weight's F16, lives through the whole encoder);
    - nn.Conv2D (its bias added from v0.12.7, 0d140bd1a: conv_bias), Reshape + Permute + Contiguous to [hidden,
      patches]; the position embedding's Rows at the Arange ids (an I32 ctx.Input()), added: the weight is
      v.position_embedding.weight, which ml/backend/ggml New's "position_embd" match does not take for an input
      tensor, so it sits with the other v.* tensors and its get_rows runs where they do;
    - per block LayerNorm (norm, weight, bias), q/k/v with biases, nn.Attention without a cache: the scores by hand
      (k x q F32 [patches, patches, heads], scaled and softmaxed in place; V permuted and copied; kqv permuted
      back and copied) before v0.13.2 and from it without flash attention, ggml_flash_attn_ext on the permuted q,
      k, v from v0.13.2 (1108d8b34) with flash attention; the output with its bias and the residual; LayerNorm,
      fc1 + bias, GELU in place, fc2 + bias, the residual; the post LayerNorm;
    - the projector: Permute + Contiguous, AvgPool2D to tokens, Permute + Contiguous, RMSNorm, the Mulmat.
    On a GPU the pixels and the ids are split inputs copied in at the start; on the CPU the inputs have buffers of
    their own."""
    px = side // patch
    n, E, H, FF = px * px, hidden, n_head, n_ff
    D = E // H
    g = Graph()

    w, t = _weight, _made

    rs, inp = _reshaped, partial(_split_input, on_gpu)

    def lin(x: T, i: int, o: int, cols: int) -> T:
        return t("add", (t("mul_mat", (w(i, o), x), 4, o, cols), w(o)), 4, o, cols)

    def layer_norm(x: T, cols: int) -> T:
        return t("add", (t("mul", (t("norm", (x,), 4, E, cols), w(E)), 4, E, cols), w(E)), 4, E, cols)

    pix, ids = inp(4 * side * side * 3, side, side, 3), inp(4 * n, n)
    g.expand(pix, ids)
    proj = t("cont", (view(w(text_hidden, E)),), 2, E, text_hidden)  # the F16 weight's transposed copy
    g.expand(proj)
    k2 = 3 * patch * patch
    col = t("im2col", (w(patch, patch, 3, E), pix), 2, k2, px, px, 1)
    mm = t("mul_mat", (rs(col, 2, k2, n), view(w(k2, E))), 4, n, E)
    h = t("cont", (view(rs(mm, 4, px, px, E, 1)),), 4, px, px, E, 1)
    if conv_bias:
        h = t("add", (h, view(w(E))), 4, px, px, E, 1)
    h = t("cont", (view(rs(h, 4, n, E)),), 4, E, n)
    h = t("add", (h, t("get_rows", (w(E, n), ids), 4, E, n)), 4, E, n)
    for _ in range(n_layer):
        res = h
        x = layer_norm(h, n)
        q, k, v = (rs(lin(x, E, E, n), 4, D, H, n) for _ in range(3))
        if flash_attention:
            a = t("flash_attn_ext", (view(q), view(k), view(v), None), 4, D, H, n)
        else:
            v = t("cont", (view(v),), 4, n, D, H)
            kq = t("soft_max", (t("scale", (t("mul_mat", (view(k), view(q)), 4, n, n, H),), 4, n, n, H),), 4, n, n, H)
            a = t("cont", (view(t("mul_mat", (v, kq), 4, D, n, H)),), 4, D, H, n)
        h = t("add", (lin(rs(a, 4, E, n), E, E, n), res), 4, E, n)
        res = h
        x = view(lin(layer_norm(h, n), E, FF, n))  # GELU in place: ggml_gelu_inplace is a view
        h = t("add", (lin(x, FF, E, n), res), 4, E, n)
    h = layer_norm(h, n)
    m = int(round(tokens ** 0.5))
    h = t("cont", (view(h),), 4, n, E)
    h = t("pool_2d", (rs(h, 4, px, px, E),), 4, m, m, E)
    h = t("cont", (view(rs(h, 4, m * m, E)),), 4, E, m * m)
    h = t("mul", (t("rms_norm", (h,), 4, E, m * m), w(E)), 4, E, m * m)
    g.expand(t("mul_mat", (proj, h), 4, text_hidden, m * m))
    return g


def siglip_vision_graph_bytes(side: int, patch: int, hidden: int, n_head: int, n_ff: int, n_layer: int,
                              tokens: int, text_hidden: int, on_gpu: bool, alignment: int = 128,
                              flash_attention: bool = False, conv_bias: bool = True) -> int:
    """ggml-alloc's buffer for siglip_vision_graph (galloc.py). ollama/ollama#12303 (gemma3:4b on the CPU,
    v0.12.3, no conv bias): the vision reserve ("compute graph" nodes=972, as many as siglip_vision_graph has) is
    the larger of the two graphs, "compute graph" CPU 1.1 GiB: 1174011904 B, the scores by hand (4 B x 4096^2 x
    16 heads = 1 GiB) above the block's rows and the projection weight's copy."""
    return reserve(siglip_vision_graph(side, patch, hidden, n_head, n_ff, n_layer, tokens, text_hidden, on_gpu,
                                       flash_attention, conv_bias), alignment)


GEMMA4_MAX_TOKENS = 280  # model/models/gemma4/process_image.go newImageProcessor: maxTokens (v0.20.0+)


def gemma4_reserve_side(patch: int = 16, merge: int = 3, side: int = RESERVE_IMAGE) -> int:
    """The side of the reserve image after gemma4's process_image.go smartResize: the pixel budget is maxTokens x
    (patch x merge)^2, the side scaled by sqrt(budget / pixels) and floored to patch x merge (2048 -> 768 for
    patch 16 and merge 3: 48 x 48 = 2304 patches, 256 tokens after the 3 x 3 pooling)."""
    align = patch * merge
    factor = (GEMMA4_MAX_TOKENS * align * align / (side * side)) ** 0.5
    return max(align, int(factor * side / align) * align)


@lru_cache(maxsize=64)
def gemma4_vision_graph_bytes(side: int, patch: int, hidden: int, n_head: int, n_ff: int, n_layer: int,
                              merge: int, text_hidden: int, on_gpu: bool, alignment: int = 128) -> int:
    """ggml-alloc's buffer for Ollama's gemma4 vision encoder on the side x side reserve image (v0.20.0+,
    model/models/gemma4/model_vision.go VisionModel.Forward and visionPoolAndProject, model.go EncodeMultimodal),
    replayed node for node (galloc.py) as runner/ollamarunner multimodal.go getTensor reserves it
    (computeCtx.Forward(tensors...).Reserve() on the backend's scheduler, before the text batch):
    - nn.Conv2D: ggml_conv_2d (im2col in the F16 kernel's type, the matmul, the permuted copy), the Reshape /
      Permute / Contiguous to [hidden, patches] and the Cast to F32 (a copy);
    - the two position-table rows (v.position_embd.weight is created with the input tensors, ml/backend/ggml/ggml.go
      New, so its get_rows runs on the CPU) added: on a GPU each arrives as a split input the scheduler copies into
      the GPU's buffer at the start of its split (ggml_backend_sched_split_graph), as do the pixels and positions;
    - per block: RMSNorm x weight, q/k/v (ClippableLinear: ggml_clamp is a view), the q/k RMSNorms and the
      unweighted v norm, the 2-D NeoX RoPE on both halves of the head (views) and their concat, nn.Attention with
      no cache: ml/backend/ggml ScaledDotProductAttention's flash branch (ggml_flash_attn_ext) with flash attention
      on, the output, the post-attention norm and the residual; the MLP: gate and up, geglu_quick_split
      (QuickGELU(up)), down, the post norm and the residual;
    - the pooling: Permute + Contiguous, ggml_pool_2d (merge x merge average), the copy back, Cast, Scale, the
      standardization (Sub, Mul) and mm.input_projection with the unweighted RMSNorm.
    Flash attention only: without it the attention is mul_mat / soft_max_ext / mul_mat over n_head x patches^2
    F32 scores, not this graph."""
    px = side // patch
    n, E, H, FF = px * px, hidden, n_head, n_ff
    D = E // H
    g = Graph()

    w, t = _weight, _made

    rs, inp = _reshaped, partial(_split_input, on_gpu)

    def lin(x: T, i: int, o: int) -> T:
        return view(t("mul_mat", (w(i, o), view(x)), 4, o, n))

    def norm(x: T, *shape: int, weight: bool = True) -> T:
        r = t("rms_norm", (x,), 4, *shape)
        return t("mul", (r, w(shape[0])), 4, *shape) if weight else r

    pix = inp(4 * side * side * 3, side, side, 3)
    k2 = 3 * patch * patch
    col = t("im2col", (w(patch, patch, 3, E), pix), 2, k2, px, px, 1)
    mm = t("mul_mat", (rs(col, 2, k2, n), view(w(k2, E))), 4, n, E)
    h = t("cont", (view(rs(mm, 4, px, px, 1, E)),), 4, px, px, E, 1)
    h = t("cont", (view(rs(h, 4, n, E)),), 4, E, n)
    h = t("cpy", (h,), 4, E, n)
    if on_gpu:
        for _ in range(2):
            h = t("add", (h, inp(4 * E * n, E, n)), 4, E, n)
    else:
        for _ in range(2):
            rows = t("get_rows", (view(w(E, 1)), inp(4 * n, n)), 4, E, n)
            h = t("add", (h, rows), 4, E, n)
    posx, posy = inp(4 * n, n), inp(4 * n, n)
    for _ in range(n_layer):
        res = h
        x = norm(h, E, n)
        q, k, v = (rs(lin(x, E, E), 4, D, H, n) for _ in range(3))
        q, k, v = norm(q, D, H, n), norm(k, D, H, n), norm(v, D, H, n, weight=False)

        def rope2(a: T) -> T:
            first = t("rope", (view(a), posx, None), 4, D // 2, H, n)
            second = t("rope", (view(a), posy, None), 4, D // 2, H, n)
            return t("concat", (first, second), 4, D, H, n)

        q, k = rope2(q), rope2(k)
        a = t("flash_attn_ext", (view(q), view(k), view(v), None), 4, D, H, n)
        a = norm(lin(rs(a, 4, E, n), E, E), E, n)
        h = t("add", (a, res), 4, E, n)
        res = h
        x = norm(h, E, n)
        x = t("glu", (lin(x, E, FF), lin(x, E, FF)), 4, FF, n)
        h = t("add", (norm(lin(x, FF, E), E, n), res), 4, E, n)
    m = px // merge
    h = t("cont", (view(h),), 4, n, E)
    h = t("pool_2d", (rs(h, 4, px, px, E),), 4, m, m, E)
    h = t("cont", (view(rs(h, 4, m * m, E)),), 4, E, m * m)
    h = t("scale", (t("cpy", (h,), 4, E, m * m),), 4, E, m * m)
    h = t("mul", (t("sub", (h, w(E)), 4, E, m * m), w(E)), 4, E, m * m)
    h = t("rms_norm", (t("mul_mat", (w(E, text_hidden), h), 4, text_hidden, m * m),), 4, text_hidden, m * m)
    g.expand(h)
    return reserve(g, alignment)


@lru_cache(maxsize=64)
def gemma4_text_graph_bytes(n_embd: int, n_vocab: int, layers: tuple[tuple[int, ...], ...], n_tokens: int,
                            swa_cells: int, full_cells: int, n_outputs: int, n_image: int, fa_on_cpu: bool,
                            alignment: int = 128) -> int:
    """ggml-alloc's buffer on the GPU for Ollama's gemma4 text batch with flash attention, every block on the GPU
    (v0.20.0-v0.20.3), replayed node for node (galloc.py) from model/models/gemma4/model_text.go TextModel.Forward,
    TextLayer.Forward, TextSelfAttention, TextMLP, TextRouter and TextMoEBlock (the fused ffn_gate_up_exps the
    converter writes), model.go Forward (the tied output and the final logit softcap), as
    runner/ollamarunner/runner.go reserveWorstCaseGraph builds the batch: n_tokens inputs with the reserve image's
    n_image embeddings (an Empty input, multimodal.go getTensor) copied into the scaled token rows, and
    batch.Outputs = n_outputs rows taken on the last block.

    layers: per block (global, n_head, n_head_kv, head_dim, v_from_k, dense n_ff, n_expert, n_expert_used,
    expert n_ff). The masks: kvcache/causal.go buildMask, rebuilt by SetCausal for the image's Except rows, an f32
    input of cells x n_tokens per cache (the SWA memory's cells, the full cache's) cast to F16 in the graph when
    first met (at block 0 and at the first global block). Inputs live outside the compute buffer (ctx.Input()),
    so ggml_backend_sched_split_graph copies every one the GPU reads into its buffer, all at the start of the first
    GPU split (the token rows from the CPU's get_rows, the image, positions, the cache locations and both f32 masks):
    the 64 MiB f32 full mask at 32768 cells and 512 tokens is held from before block 0 to its cast, and the MoE
    rows of the first blocks (gate_up 2 x n_ff x k, the GELU'd half, down n_embd x k, per token) sit above it.
    fa_on_cpu: before v0.20.4 ggml-cuda has no flash attention for head dim 512, so the global blocks' attention
    runs on the CPU: q and the F16 mask go out as that split's inputs (the mask's GPU copy freed after the first)
    and the output comes back as the next GPU split's input.
    ollama/ollama#15388 (gemma4:26b, 32768 cells, 512 tokens, an L40): required.CUDA0.Graph 339613696 = this
    186521600 + the CUDA pool's 146 MiB (cuda_pool.py), to the byte."""
    E, Tn = n_embd, n_tokens
    g = Graph()

    w, t = _weight, _made

    rs = _reshaped

    def cpy(*shape: int, per: int = 4) -> T:  # a split input's copy: the same type and shape as its source
        nb = per
        for d in shape:
            nb *= d
        return T("cpy", (), nb, (per, shape))

    def norm(x: T, *shape: int, weight: bool = True) -> T:
        r = t("rms_norm", (x,), 4, *shape)
        return t("mul", (r, w(shape[0])), 4, *shape) if weight else r

    rows = cpy(E, Tn)
    firsts = [rows]
    vis = cpy(E, n_image) if n_image else None
    if vis is not None:
        firsts.append(vis)
    pos = cpy(Tn)
    loc = {False: cpy(Tn), True: cpy(Tn)}
    mask32 = {False: cpy(swa_cells, Tn), True: cpy(full_cells, Tn)}
    firsts += [pos, loc[False], mask32[False], loc[True], mask32[True]]
    g.expand(*firsts)
    h = t("scale", (rows,), 4, E, Tn)
    if vis is not None:
        g.expand(view(h, vis))  # ggml_cpy of the image into a view of the rows
    masks: dict[bool, T] = {}
    mask_sent = False
    for il, (glob, H, KV, hd, v_from_k, ff, n_exp, k_used, eff) in enumerate(layers):
        glob, v_from_k = bool(glob), bool(v_from_k)
        res = h
        x = norm(h, E, Tn)
        q = norm(rs(t("mul_mat", (w(E, H * hd), x), 4, H * hd, Tn), 4, hd, H, Tn), hd, H, Tn)
        q = t("rope", (q, pos, None), 4, hd, H, Tn)
        g.expand(q)  # nn.Attention: ctx.Forward(query), then key and value, then the cache writes
        kraw = rs(t("mul_mat", (w(E, KV * hd), x), 4, KV * hd, Tn), 4, hd, KV, Tn)
        v = kraw if v_from_k else rs(t("mul_mat", (w(E, KV * hd), x), 4, KV * hd, Tn), 4, hd, KV, Tn)
        k = t("rope", (norm(kraw, hd, KV, Tn),), 4, hd, KV, Tn)
        k.srcs = (*k.srcs, pos, None)
        v = norm(v, hd, KV, Tn, weight=False)
        g.expand(k, v)
        g.expand(T("set_rows", (w(1), view(k), loc[glob]), external=True),
                 T("set_rows", (w(1), view(v), loc[glob]), external=True))
        if glob not in masks:
            masks[glob] = t("cpy", (mask32[glob],), 2, full_cells if glob else swa_cells, Tn)
        if glob and fa_on_cpu:
            g.expand(T("flash_attn_ext", (view(q),) + (() if mask_sent else (masks[glob],)), external=True))
            mask_sent = True
            a = cpy(hd, H, Tn)
            g.expand(a)
        else:
            a = t("flash_attn_ext", (view(q), view(w(1)), view(w(1)), masks[glob]), 4, hd, H, Tn)
        a = norm(t("mul_mat", (w(H * hd, E), rs(a, 4, H * hd, Tn)), 4, E, Tn), E, Tn)
        tc = Tn
        if il == len(layers) - 1:
            outs = cpy(n_outputs)
            a = t("get_rows", (a, outs), 4, E, n_outputs)
            res = t("get_rows", (res, outs), 4, E, n_outputs)
            tc = n_outputs
        h = t("add", (a, res), 4, E, tc)
        res = h
        x = norm(h, E, tc)
        x = t("glu", (t("mul_mat", (w(E, ff), x), 4, ff, tc), t("mul_mat", (w(E, ff), x), 4, ff, tc)), 4, ff, tc)
        mlp = norm(t("mul_mat", (w(ff, E), x), 4, E, tc), E, tc)
        if n_exp:
            r = t("mul", (t("scale", (t("rms_norm", (h,), 4, E, tc),), 4, E, tc), w(E)), 4, E, tc)
            probs = t("soft_max", (t("mul_mat", (w(E, n_exp), r), 4, n_exp, tc),), 4, n_exp, tc)
            sel = view(t("argsort", (probs,), 4, n_exp, tc))
            rw = rs(t("get_rows", (rs(probs, 4, 1, n_exp, tc), sel), 4, 1, k_used, tc), 4, k_used, tc)
            rw = t("div", (rw, t("sum_rows", (rw,), 4, 1, tc)), 4, k_used, tc)
            xm = norm(h, E, tc)
            gu = t("mul_mat_id", (w(E, 2 * eff, n_exp), rs(xm, 4, E, 1, tc), sel), 4, 2 * eff, k_used, tc)
            act = t("glu", (view(gu), view(gu)), 4, eff, k_used, tc)
            ex = t("mul_mat_id", (w(eff, E, n_exp), act, sel), 4, E, k_used, tc)
            sc = t("get_rows", (rs(t("repeat", (w(n_exp, 1),), 4, n_exp, tc), 4, 1, n_exp, tc), sel), 4, 1, k_used,
                   tc)
            ex = t("mul", (t("mul", (ex, sc), 4, E, k_used, tc), rs(rw, 4, 1, k_used, tc)), 4, E, k_used, tc)
            s = t("add", (view(ex), view(ex)), 4, E, tc)
            for _ in range(k_used - 2):
                s = t("add", (s, view(ex)), 4, E, tc)
            mlp = norm(t("add", (mlp, norm(s, E, tc)), 4, E, tc), E, tc)
        h = t("mul", (t("add", (mlp, res), 4, E, tc), w(1)), 4, E, tc)
    out = t("mul_mat", (w(E, n_vocab), norm(h, E, n_outputs)), 4, n_vocab, n_outputs)
    g.expand(t("scale", (t("unary", (t("scale", (out,), 4, n_vocab, n_outputs),), 4, n_vocab, n_outputs),), 4,
               n_vocab, n_outputs))
    return reserve(g, alignment)


def gemma4_gpu_graph_replayed(spec: ModelSpec, n_tokens: int, swa_cells: int, full_cells: int, n_outputs: int,
                              n_image: int, fa_on_cpu: bool) -> int | None:
    """gemma4_text_graph_bytes for a gemma4 spec: None for other models and for the shapes the replay does not
    build (per-layer embeddings, shared KV layers, a block without attention)."""
    if spec.architecture != "gemma4" or any(la.attention is None or la.kv_source is not None for la in spec.layers):
        return None
    if any(t.name.startswith("per_layer_") for t in spec.weights.tensors):
        return None
    layers = []
    for la in spec.layers[:spec.n_trunk_layers]:
        at, ffn = la.attention, la.ffn
        dense = ffn.n_ff_shared if ffn.n_experts else ffn.n_ff
        layers.append((int(at.window is None), at.n_heads, at.n_kv_heads, at.head_dim_k, int(at.v_from_k), dense,
                       ffn.n_experts, ffn.n_experts_used, ffn.n_ff_expert))
    return gemma4_text_graph_bytes(spec.n_embd, spec.n_vocab, tuple(layers), n_tokens, swa_cells, full_cells,
                                   n_outputs, n_image, fa_on_cpu)


@lru_cache(maxsize=256)
def gptoss_graph_bytes(n_embd: int, n_head: int, n_head_kv: int, head_dim: int, n_ff: int, n_expert: int,
                       n_expert_used: int, n_layer: int, n_vocab: int, n_tokens: int, full_cells: int,
                       swa_cells: int, n_outputs: int = 1, mask_cast: bool = False, on_cpu: bool = False,
                       alignment: int = 128) -> int:
    """ggml-alloc's buffer for Ollama's gpt-oss graph with flash attention on one backend, replayed node for node
    (galloc.py): model/models/gptoss/model.go Transformer.Forward of v0.11.5-v0.13.2 on the library GGUF
    (convert_gptoss.go from the original checkpoint: fused attn_qkv and ffn_gate_up_exps), nn.AttentionWithSinks
    (Forward(query); Forward(key, value); the cache writes, kvcache/causal.go Put: ggml_cpy into a view of the
    layer's cache before v0.13.0), ml/backend/ggml Tensor.ScaledDotProductAttention's flash branch
    (ggml_flash_attn_ext with the sinks, over the cache views Get returns and the layer type's mask; even blocks
    slide, kvcache.WrapperCache{SWAMemCache, Causal}), MLPBlock.Forward (the router and its bias, TopK: argsort
    and a view, the routing weights' Rows and softmax, the gate_up rows of mul_mat_id + add_id and their two
    halves made contiguous, swiglu_oai, down mul_mat_id + add_id, x routing weights, the k expert rows summed,
    the residual); on the last block Rows(outputs) after the attention; output_norm and the output rows.

    The inputs (ctx.Input(): the token ids, the positions, the outputs and both masks) have buffers of their own on
    the CPU (ml/backend/ggml Context.newTensor). Every block on a GPU (not on_cpu): token_embd stays on the CPU
    (New: the input layer) and its get_rows rows, the positions, the masks and the output index are the GPU
    split's inputs, which ggml_backend_sched_split_graph copies into the GPU's buffer at the split's start
    (leafs placed first here, in the order the split meets them). on_cpu: all of it on the CPU backend, the rows
    a node, the inputs external. The masks: kvcache/causal.go buildMask, cells x PAD(tokens, GGML_KQ_MASK_PAD);
    before v0.12.7 an F16 input while reserving (curReserve: ctx.Input().Empty(MaskDType, ...)), from v0.12.7
    (mask_cast) an f32 input cast to F16 in the graph. From v0.13.0 the blocks differ (ChunkSections, Slice, the
    cache written with SetRows): not this graph."""
    E, H, KV, D, FF, NE, K, Tn = n_embd, n_head, n_head_kv, head_dim, n_ff, n_expert, n_expert_used, n_tokens
    pad = round_up(Tn, MASK_BATCH_PAD)
    QKV = (H + 2 * KV) * D

    w, t = _weight, _made

    def inp(nbytes: int, *shape: int, kind: str = "f32") -> T:
        return T("", nbytes=nbytes, layout=(kind, shape), external=on_cpu)

    g = Graph()
    caches = {kind: (w(D, KV, cells), w(D, KV, cells)) for kind, cells in (("swa", swa_cells), ("full", full_cells))}
    if on_cpu:
        x = t("get_rows", (w(E, n_vocab), T("", nbytes=4 * Tn, layout=("i32", (Tn,)), external=True)), 4, E, Tn)
    else:
        x = inp(4 * E * Tn, E, Tn)
    pos = inp(4 * Tn, Tn, kind="i32")
    masks = {}
    for kind, cells in (("swa", swa_cells), ("full", full_cells)):
        if mask_cast:
            masks[kind] = t("cpy", (inp(4 * cells * pad, cells, pad),), 2, cells, pad)
        else:
            masks[kind] = inp(2 * cells * pad, cells, pad, kind="f16")
    outs = inp(4 * n_outputs, n_outputs, kind="i32")

    def norm(x: T, *shape: int) -> T:
        return t("mul", (t("rms_norm", (x,), 4, *shape), w(E)), 4, *shape)

    n_t = Tn
    for il in range(n_layer):
        kind = "swa" if il % 2 == 0 else "full"
        res = x
        n = norm(x, E, Tn)
        qkv = t("add", (t("mul_mat", (w(E, QKV), n), 4, QKV, Tn), w(QKV)), 4, QKV, Tn)
        q, k, v = view(qkv), view(qkv), view(qkv)
        q = t("rope", (q, pos, None), 4, D, H, Tn)
        k = t("rope", (k, pos, None), 4, D, KV, Tn)
        g.expand(q)
        g.expand(k, v)
        ck, cv = caches[kind]
        g.expand(view(view(ck), k))
        g.expand(view(view(cv), v))
        o = t("flash_attn_ext", (view(q), view(view(ck)), view(view(cv)), masks[kind], w(H)), 4, D, H, Tn)
        x = t("add", (t("add", (t("mul_mat", (w(H * D, E), view(o)), 4, E, Tn), w(E)), 4, E, Tn), res), 4, E, Tn)
        if il == n_layer - 1:
            n_t = n_outputs
            x = t("get_rows", (x, outs), 4, E, n_t)
        res = x
        n = view(norm(x, E, n_t))
        rw = t("add", (t("mul_mat", (w(E, NE), n), 4, NE, n_t), w(NE)), 4, NE, n_t)
        sel = view(t("argsort", (rw,), 4, NE, n_t))
        rw = t("get_rows", (view(rw), sel), 4, 1, K, n_t)
        rw = view(t("soft_max", (view(rw), None, None), 4, K, n_t))
        n3 = view(n)
        gu = t("mul_mat_id", (w(E, 2 * FF, NE), n3, sel), 4, 2 * FF, K, n_t)
        gu = view(t("add_id", (gu, w(2 * FF, NE), sel), 4, 2 * FF, K, n_t))
        gate = t("cont", (view(gu),), 4, FF, K, n_t)
        up = t("cont", (view(gu),), 4, FF, K, n_t)
        a = t("glu", (gate, up), 4, FF, K, n_t)
        ex = t("mul_mat_id", (w(FF, E, NE), a, sel), 4, E, K, n_t)
        ex = t("mul", (t("add_id", (ex, w(E, NE), sel), 4, E, K, n_t), rw), 4, E, K, n_t)
        nxt = view(ex)
        for _ in range(1, K):
            nxt = t("add", (nxt, view(ex)), 4, E, n_t)
        x = t("add", (nxt, res), 4, E, n_t)
    g.expand(t("mul_mat", (w(E, n_vocab), norm(x, E, n_t)), 4, n_vocab, n_t))
    return reserve(g, alignment)


def gptoss_graph_replayed(spec: ModelSpec, n_tokens: int, full_cells: int, swa_cells: int, n_outputs: int,
                          mask_cast: bool, on_cpu: bool = False) -> int | None:
    """gptoss_graph_bytes for a gpt-oss model (None for other models): 128 B aligned as the CUDA / ROCm buffer type
    places tensors (ggml-cuda.cu ggml_backend_cuda_buffer_type_get_alignment), 32 B on the CPU."""
    layer = gptoss_moe_layer(spec)
    if layer is None:
        return None
    at, ffn = layer.attention, layer.ffn
    return gptoss_graph_bytes(spec.n_embd, at.n_heads, at.n_kv_heads, at.head_dim_v, ffn.n_ff_expert or ffn.n_ff,
                              ffn.n_experts, ffn.n_experts_used, spec.n_trunk_layers, spec.n_vocab, n_tokens,
                              full_cells, swa_cells, n_outputs, mask_cast, on_cpu, 32 if on_cpu else 128)


def glm4moelite_sched_graph(spec: ModelSpec, n_tokens: int, cells: int, n_outputs: int, host_layers: frozenset[int],
                            output_on_host: bool):
    """Ollama's own glm4moelite graph with MLA absorbed (model/models/glm4moelite/model.go, v0.15.0+: 64737330a,
    #13870), built tensor by tensor in ggml_build_forward_expand's order for ggml_backend_sched
    (llamacpp/sched_replay.py: one ggml-cuda device beside the CPU; op_offload on, ml/backend/ggml New
    ggml_backend_sched_new_ext(..., op_offload true), with the reserve's batch size at least 32,
    Context.Reserve ggml_backend_sched_set_batch_size). Per block, as Layer.Forward / Attention.Forward build it:
    attn_norm (ggml_rms_norm x weight); q_a, its norm, q_b, viewed as heads and cut by ChunkSections (views) into the
    nope and rope parts; kv_a_mqa, its latent view normed and its rope view; RoPE of q's rope part and of k's;
    attn_k_b's product with the permuted nope part (MLA absorption), permuted back and CONCAT after the roped q
    (576 a head); key the CONCAT of k's rope and the latent; nn.AttentionWithVMLA: Forward(query), Forward(key,
    value), kvcache/causal.go Put (SetRows of the key and of the latent at the I32 cell index), Get's views;
    ml/backend/ggml ScaledDotProductAttention's flash branch: ggml_flash_attn_ext over the permuted views and the
    F16 mask (causal.go buildMask: an f32 input of cells x tokens cast in the graph), attn_v_b's product with the
    permuted output, permuted and made contiguous; attn_output; on the last block Rows(outputs) of it and of the
    residual; the residual; ffn_norm; block 0's dense SwiGLU (ggml_swiglu_split), the others' sparse block: the
    router, sigmoid in place, + exp_probs_b, TopK (ggml_argsort_top_k: argsort and a view), the weights' Rows,
    SumRows, Div, Scale, then Moe: gate and up MulmatID, swiglu_split, down MulmatID, x weights, the k rows' views
    summed, beside the shared expert on the normed input; the sum and the residual. output_norm and output last.
    host_layers: the blocks whose weights and cache stay on the CPU (their products run on the GPU with the weights
    copied in, their SetRows on the CPU and their attention on the GPU with the cache views copied in);
    output_on_host: the output layer on the CPU. The token ids, positions, cell index, outputs and the f32 mask are
    ctx.Input() tensors on the CPU (graph inputs)."""
    DEVICE, HOST = sched_replay.DEVICE, sched_replay.HOST
    g = sched_replay.Graph()
    Tn, E = n_tokens, spec.n_embd
    shapes = {t.name: t for t in spec.weights.tensors}
    f32 = 4

    def w(name: str, il: int | None) -> sched_replay.T:
        t = shapes[name]
        on_host = il in host_layers if il is not None else output_on_host
        return g.weight(tuple(t.shape), HOST if on_host else DEVICE, name=name if on_host else "")

    def norm(x, name: str, il: int | None):
        return g.op("MUL", x.ne, g.op("RMS_NORM", x.ne, x), w(name, il))

    def dense(x, il: int, suffix: str, n_ff: int, rows: int):
        gate = g.op("MUL_MAT", (n_ff, rows), w(f"blk.{il}.ffn_gate{suffix}.weight", il), x)
        up = g.op("MUL_MAT", (n_ff, rows), w(f"blk.{il}.ffn_up{suffix}.weight", il), x)
        return g.op("MUL_MAT", (E, rows), w(f"blk.{il}.ffn_down{suffix}.weight", il), g.op("GLU", gate.ne, gate, up))

    tokens = g.input((Tn,))
    h = g.op("GET_ROWS", (E, Tn), g.weight((E, spec.n_vocab), HOST), tokens)
    pos = g.input((Tn,))
    loc = g.input((Tn,))
    outs = g.input((n_outputs,))
    mask = g.op("CPY", (cells, Tn), g.input((cells, Tn)), es=2)  # causal.go buildMask: Cast(MaskDType F16)
    trunk = spec.layers[:spec.n_trunk_layers]
    for la in trunk:
        il, a, f = la.index, la.attention, la.ffn
        H, r, rope, nope = a.n_heads, a.kv_lora_rank, a.qk_rope_head_dim, a.qk_nope_head_dim
        dk = nope + rope
        res = h
        x = norm(h, f"blk.{il}.attn_norm.weight", il)
        if a.q_lora_rank:
            q = g.op("MUL_MAT", (a.q_lora_rank, Tn), w(f"blk.{il}.attn_q_a.weight", il), x)
            q = norm(q, f"blk.{il}.attn_q_a_norm.weight", il)
            q = g.op("MUL_MAT", (H * dk, Tn), w(f"blk.{il}.attn_q_b.weight", il), q)
        else:
            q = g.op("MUL_MAT", (H * dk, Tn), w(f"blk.{il}.attn_q.weight", il), x)
        q = g.reshape(q, (dk, H, Tn))
        q_nope = g.view(q, (nope, H, Tn), (f32, dk * f32, dk * H * f32))
        q_rope = g.view(q, (rope, H, Tn), (f32, dk * f32, dk * H * f32))
        ckv = g.op("MUL_MAT", (r + rope, Tn), w(f"blk.{il}.attn_kv_a_mqa.weight", il), x)
        k_pass = g.view(ckv, (r, Tn), (f32, (r + rope) * f32))
        k_rot = g.view(ckv, (rope, 1, Tn), (f32, (r + rope) * f32, (r + rope) * f32))
        q_rot = g.op("ROPE", q_rope.ne, q_rope, pos)
        k_rot = g.op("ROPE", k_rot.ne, k_rot, pos)
        k_pass = norm(k_pass, f"blk.{il}.attn_kv_a_norm.weight", il)
        absorbed = g.op("MUL_MAT", (r, Tn, H), w(f"blk.{il}.attn_k_b.weight", il), g.permute(q_nope, (0, 2, 1, 3)))
        query = g.op("CONCAT", (rope + r, H, Tn), q_rot, g.permute(absorbed, (0, 2, 1, 3)))
        k_pass = g.reshape(k_pass, (r, 1, Tn))
        key = g.op("CONCAT", (rope + r, 1, Tn), k_rot, k_pass)
        g.expand(query)
        g.expand(key)
        g.expand(k_pass)
        dev = HOST if il in host_layers else DEVICE
        kc, vc = g.cache((rope + r, 1, cells), dev, 2), g.cache((r, 1, cells), dev, 2)
        for cache, src, width in ((kc, key, rope + r), (vc, k_pass, r)):
            flat = g.reshape(cache, (width, cells))
            g.expand(g.into("SET_ROWS", flat, g.reshape(src, (width, Tn)), loc, flat))
        kv = g.view(kc, (rope + r, 1, cells))
        vv = g.view(vc, (r, 1, cells))
        fa = g.op("FLASH_ATTN_EXT", (r, H, Tn), g.permute(query, (0, 2, 1, 3)), g.permute(kv, (0, 2, 1, 3)),
                  g.permute(vv, (0, 2, 1, 3)), mask)
        dv = a.v_head_dim or a.head_dim_v
        o = g.op("MUL_MAT", (dv, Tn, H), w(f"blk.{il}.attn_v_b.weight", il), g.permute(fa, (0, 2, 1, 3)))
        o = g.op("CONT", (dv, H, Tn), g.permute(o, (0, 2, 1, 3)))
        att = g.op("MUL_MAT", (E, Tn), w(f"blk.{il}.attn_output.weight", il), g.reshape(o, (dv * H, Tn)))
        rows = Tn
        if la is trunk[-1]:
            rows = n_outputs
            att = g.op("GET_ROWS", (E, rows), att, outs)
            res = g.op("GET_ROWS", (E, rows), res, outs)
        h = g.op("ADD", att.ne, att, res)
        x = norm(h, f"blk.{il}.ffn_norm.weight", il)
        if not f.n_experts:
            out = dense(x, il, "", f.n_ff, rows)
        else:
            ne_, k = f.n_experts, f.n_experts_used
            logits = g.op("MUL_MAT", (ne_, rows), w(f"blk.{il}.ffn_gate_inp.weight", il), x)
            scores = g.into("UNARY", logits, logits)  # ggml_sigmoid_inplace: a view of the logits
            sel = g.op("ADD", scores.ne, scores, w(f"blk.{il}.exp_probs_b.bias", il)) \
                if f"blk.{il}.exp_probs_b.bias" in shapes else scores
            topk = g.view(g.op("ARGSORT", sel.ne, sel), (k, rows), (4, ne_ * 4))
            wts = g.op("GET_ROWS", (1, k, rows), g.reshape(scores, (1, ne_, rows)), topk)
            wts = g.reshape(wts, (k, rows))
            wts = g.reshape(g.op("DIV", wts.ne, wts, g.op("SUM_ROWS", (1, rows), wts)), (1, k, rows))
            wts = g.op("SCALE", wts.ne, wts)
            x3 = g.reshape(x, (E, 1, rows))
            n_ff = f.n_ff_expert
            up = g.op("MUL_MAT_ID", (n_ff, k, rows), w(f"blk.{il}.ffn_up_exps.weight", il), x3, topk)
            gate = g.op("MUL_MAT_ID", (n_ff, k, rows), w(f"blk.{il}.ffn_gate_exps.weight", il), x3, topk)
            down = g.op("MUL_MAT_ID", (E, k, rows), w(f"blk.{il}.ffn_down_exps.weight", il),
                        g.op("GLU", gate.ne, gate, up), topk)
            ex = g.op("MUL", down.ne, down, wts)
            out = g.view(ex, (E, rows), (f32, ex.nb[2]))
            for _ in range(1, k):
                out = g.op("ADD", out.ne, out, g.view(ex, (E, rows), (f32, ex.nb[2])))
            if f.n_shared_experts:
                out = g.op("ADD", out.ne, out, dense(x, il, "_shexp", f.n_ff_shared, rows))
        h = g.op("ADD", out.ne, out, h)
    h = norm(h, "output_norm.weight", None)
    g.expand(g.op("MUL_MAT", (spec.n_vocab, n_outputs), w("output.weight" if "output.weight" in shapes
                                                          else "token_embd.weight", None), h))
    return g


def glm4moelite_gpu_graph_replayed(spec: ModelSpec, n_tokens: int, cells: int, n_outputs: int,
                                   host_layers: frozenset[int], output_on_host: bool) -> int | None:
    """The GPU's ggml-alloc buffer for glm4moelite_sched_graph (128 B aligned, the CUDA buffer type): the copies of the
    host blocks' weights sized as ggml-cuda's buffer type allocates them (quantized rows padded to 512); None for other
    models and for a block without MLA attention. The lowering is kept by the graph's shapes and the host blocks
    (sched_replay.device_peak_by_kv)."""
    trunk = spec.layers[:spec.n_trunk_layers]
    if spec.architecture not in ("deepseek2", "glm4moelite") or not trunk \
            or any(la.attention is None or not la.attention.latent_cache or not la.attention.kv_lora_rank
                   for la in trunk):
        return None
    host = {t.name: gpu_alloc_size(t) for t in spec.weights.tensors
            if t.layer is not None and t.layer in host_layers or t.layer is None and output_on_host
            and t.name != "token_embd.weight"}
    key = ("ollama-glm4moelite", spec.n_embd, spec.n_vocab, tuple((la.attention, la.ffn) for la in trunk),
           tuple((t.name, tuple(t.shape)) for t in spec.weights.tensors), n_tokens, n_outputs, host_layers,
           output_on_host)
    return sched_replay.device_peak_by_kv(key, lambda c: glm4moelite_sched_graph(spec, n_tokens, c, n_outputs, host_layers,
                                                                     output_on_host), cells, 128, host)
