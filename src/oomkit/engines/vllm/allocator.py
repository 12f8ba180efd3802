"""What PyTorch's caching allocator holds after V0's profile forward (vLLM 0.4 -> 0.6.3), as against the peak it
allocated. Up to 0.6.3 worker.py determine_num_available_blocks takes the profile's memory as init_gpu_memory less
torch.cuda.mem_get_info() after profile_run, without emptying the cache in between: every segment the forward made
the allocator cudaMalloc still counts, so a long profile (one forward over max_num_batched_tokens tokens) counts the
tensors that could not reuse a freed segment as well as the peak of those alive at once.

The walk follows c10/cuda/CUDACachingAllocator.cpp (PyTorch 2.1-2.4, the releases vLLM 0.4-0.6 pin) for the large
pool: a request is rounded to 512 B and served by the smallest cached free block that holds it (get_free_block), the
rest split off when over 1 MiB (should_split); with none, a new segment of the request rounded to 2 MiB (over
10 MiB; 20 MiB from 1 to 10 MiB; get_allocation_size). A freed block merges with free neighbours of its own segment.
Requests up to 1 MiB (the small pool: index tensors, metadata) are left out. Segments are never returned here."""

from __future__ import annotations

from dataclasses import dataclass

_MiB = 1 << 20
_SMALL = _MiB  # kSmallSize: requests up to it go to the small pool
_MIN_LARGE = 10 * _MiB  # kMinLargeAlloc
_LARGE_BUFFER = 20 * _MiB  # kLargeBuffer
_ROUND_LARGE = 2 * _MiB  # kRoundLarge


def _segment_size(size: int) -> int:
    if size < _MIN_LARGE:
        return _LARGE_BUFFER
    return -(-size // _ROUND_LARGE) * _ROUND_LARGE


class _Pool:
    """The large pool: segments of [offset, size, free] blocks in address order."""

    def __init__(self) -> None:
        self.segments: list[list[list]] = []
        self.where: dict[int, tuple[int, int]] = {}
        self.sizes: dict[int, int] = {}
        self.next_handle = 0
        self.live = 0  # bytes allocated now, and their high-water mark (torch.cuda.max_memory_allocated)
        self.peak = 0

    def malloc(self, size: int) -> int | None:
        size = -(-size // 512) * 512
        if size <= _SMALL:
            return None
        best = None
        for si, seg in enumerate(self.segments):
            for block in seg:
                if block[2] and block[1] >= size and (best is None or block[1] < best[1][1]):
                    best = (si, block)
        if best is None:
            self.segments.append([[0, _segment_size(size), True]])
            best = (len(self.segments) - 1, self.segments[-1][0])
        si, block = best
        seg = self.segments[si]
        if block[1] - size > _SMALL:
            seg.insert(seg.index(block) + 1, [block[0] + size, block[1] - size, True])
            block[1] = size
        block[2] = False
        self.next_handle += 1
        self.where[self.next_handle] = (si, block[0])
        self.sizes[self.next_handle] = size
        self.live += size
        self.peak = max(self.peak, self.live)
        return self.next_handle

    def free(self, handle: int | None) -> None:
        if handle is None:
            return
        si, offset = self.where.pop(handle)
        self.live -= self.sizes.pop(handle)
        seg = self.segments[si]
        i = next(k for k, b in enumerate(seg) if b[0] == offset)
        seg[i][2] = True
        if i + 1 < len(seg) and seg[i + 1][2]:
            seg[i][1] += seg.pop(i + 1)[1]
        if i > 0 and seg[i - 1][2]:
            seg[i - 1][1] += seg.pop(i)[1]

    def reserved(self) -> int:
        return sum(b[1] for seg in self.segments for b in seg)


def reserved_for(sizes: list[int]) -> int:
    """The segments the caching allocator holds for tensors allocated in this order and kept (the weights after a
    load, torch.cuda.empty_cache() having given back the rest): the large pool walked as above, the requests up to
    1 MiB packed in the small pool's 2 MiB segments (kSmallBuffer) at 512 B each."""
    pool = _Pool()
    small = 0
    for size in sizes:
        if pool.malloc(size) is None:
            small += -(-max(size, 1) // 512) * 512
    return sum(b[1] for seg in pool.segments for b in seg) + -(-small // (2 * _MiB)) * (2 * _MiB)


@dataclass(frozen=True)
class DenseForward:
    """Per-token widths (elements, one rank) of the tensors a V0 dense decoder layer allocates: hidden, the fused
    qkv projection, the attention output (query width) and the feed-forward width."""

    hidden: int
    qkv: int
    attn: int
    ff: int


def v0_reserved_forward(tokens: int, dtype_bytes: int, w: DenseForward, n_layers: int) -> int:
    """The large pool after V0's forward over `tokens` (model_executor/models/llama.py LlamaModel.forward and its
    decoder layer, 0.4 -> 0.6.3): the embedding's output stays the residual (fused_add_rms_norm updates it in place);
    layer 0's input_layernorm writes a new tensor (rms_norm into torch.empty_like), later layers norm in place; the
    attention allocates qkv, torch.empty_like(query) and the backend's own output copied into it
    (attention/backends/xformers.py and flash_attn.py forward: output[:num_prefill_tokens] = out), then o_proj's
    output; the MLP gate_up, SiluAndMul's output and down_proj's, gate_up and the activation freed on return. The
    layer's input is freed once the attention returns. Three layers reach the steady state; the rest reuse them."""
    b, t = dtype_bytes, tokens
    pool = _Pool()
    pool.malloc(t * w.hidden * b)  # the embedding's output, the residual to the end
    hidden = None
    for layer in range(min(n_layers, 3)):
        normed = pool.malloc(t * w.hidden * b) if layer == 0 else hidden
        qkv = pool.malloc(t * w.qkv * b)
        output = pool.malloc(t * w.attn * b)
        out = pool.malloc(t * w.attn * b)
        pool.free(out)
        o_proj = pool.malloc(t * w.hidden * b)
        pool.free(qkv)
        pool.free(output)
        pool.free(normed)
        gate_up = pool.malloc(t * 2 * w.ff * b)
        act = pool.malloc(t * w.ff * b)
        down = pool.malloc(t * w.hidden * b)
        pool.free(gate_up)
        pool.free(act)
        pool.free(o_proj)
        hidden = down
    return pool.reserved()


def v0_reserved_forward_glm(tokens: int, dtype_bytes: int, w: DenseForward, n_layers: int) -> int:
    """The same pool after ChatGLM's forward (model_executor/models/chatglm.py, the same code in the 0.3.0, 0.4.1,
    0.4.3 and 0.5.5 sdists): ChatGLMModel.forward keeps the embedding's output (inputs_embeds) to the end; GLMBlock
    norms into new tensors and adds its residuals unfused ("layernorm_input = residual + attention_output",
    "output = self.mlp(layernorm_output) + residual"), so the layer's input, the attention's output, layernorm_input
    and the second norm's output all stay alive through the MLP (freed when the block returns); GLMMLP frees
    dense_h_to_4h's output once SiluAndMul has run (the name is rebound) and keeps the activation to its return."""
    b, t = dtype_bytes, tokens
    pool = _Pool()
    emb = pool.malloc(t * w.hidden * b)
    hidden = emb
    for _ in range(min(n_layers, 3)):
        normed = pool.malloc(t * w.hidden * b)  # input_layernorm (RMSNorm into torch.empty_like)
        qkv = pool.malloc(t * w.qkv * b)
        output = pool.malloc(t * w.attn * b)
        out = pool.malloc(t * w.attn * b)
        pool.free(out)
        attention_output = pool.malloc(t * w.hidden * b)  # dense
        pool.free(qkv)
        pool.free(output)
        layernorm_input = pool.malloc(t * w.hidden * b)
        normed2 = pool.malloc(t * w.hidden * b)  # post_attention_layernorm
        pool.free(normed)
        gate_up = pool.malloc(t * 2 * w.ff * b)
        act = pool.malloc(t * w.ff * b)
        pool.free(gate_up)
        down = pool.malloc(t * w.hidden * b)
        pool.free(act)
        new = pool.malloc(t * w.hidden * b)  # + residual
        pool.free(down)
        for h in (attention_output, layernorm_input, normed2):
            pool.free(h)
        if hidden != emb:
            pool.free(hidden)
        hidden = new
    return pool.reserved()


@dataclass(frozen=True)
class MlaMoeForward:
    """Per-token widths (elements, one rank) of what V0's DeepSeek-V2 / V3 decoder layer allocates before vLLM cached
    the latent (models/deepseek_v2.py / deepseek_v3.py DeepseekV2Attention, 0.5.1 -> 0.7.0): q_lora (0: q_proj
    straight from the hidden state), q (heads x qk_head_dim), the latent row (kv_lora_rank + rope), kv_lora_rank, kv
    (heads x (qk_nope + v_head_dim)), the rotary part of q (heads x rope) and of k (rope), padded (heads x the head
    the Attention is built with; 0 where q and k are not padded), v_out (heads x v_head_dim); the dense layers'
    feed-forward, the shared experts', the router's experts; the fused-MoE caches in bytes for the chunk."""

    hidden: int
    q_lora: int
    q: int
    latent: int
    kv_lora: int
    kv: int
    rope_q: int
    rope_k: int
    padded: int
    v_padded: int
    v_out: int
    ff_dense: int
    ff_shared: int
    experts: int
    top_k: int
    moe_caches: tuple[int, ...]


def v0_forward_mla_moe(tokens: int, dtype_bytes: int, w: MlaMoeForward, n_dense: int, n_layers: int
                       ) -> tuple[int, int]:
    """(segments held, peak allocated) after V0's profile forward of DeepSeek-V2 / V3 over `tokens`, walking
    models/deepseek_v2.py of 0.5.1 -> 0.7.0 (DeepseekV2Model / DecoderLayer / Attention / MLP / MoE.forward, the
    same allocations in deepseek_v3.py): the embedding's output stays the residual; layer 0 norms into a new tensor,
    later layers in place. The attention: q (q_a_proj, its norm, q_b_proj with a q LoRA), the latent row
    (kv_a_proj_with_mqa), kv_a.contiguous() and its norm, kv_b_proj's kv, the rotary's new q_pe and k_pe
    (DeepseekScalingRotaryEmbedding.forward: the cos / sin rows, x * cos + rotate(x) * sin), k = empty_like(q), the
    padded q, k and v (F.pad), the backend's output and flash-attn's own copied into it, the v_head_dim slice's
    reshape and o_proj's output; q (held by its q_nope view), the latent, kv_a, kv and the padded copies live to the
    return. The MoE: the shared experts' gate_up, activation and output, the router logits and grouped_topk's
    softmax / masked scores, fused_experts' three caches (inplace=True: the output is the input), then the
    "* routed_scaling_factor" and "+ shared_output" copies. The layer's input is freed when the attention returns,
    the attention's output when the MLP returns. The dense layers and three MoE layers reach the steady state."""
    b, t = dtype_bytes, tokens
    pool = _Pool()
    pool.malloc(t * w.hidden * b)  # the embedding's output, the residual to the end
    hidden = None
    for layer in range(n_dense + min(n_layers - n_dense, 3)):
        normed = pool.malloc(t * w.hidden * b) if layer == 0 else hidden
        if w.q_lora:
            qa = pool.malloc(t * w.q_lora * b)
            qn = pool.malloc(t * w.q_lora * b)
            pool.free(qa)
            q = pool.malloc(t * w.q * b)
            pool.free(qn)
        else:
            q = pool.malloc(t * w.q * b)
        latent = pool.malloc(t * w.latent * b)
        contiguous = pool.malloc(t * w.kv_lora * b)
        kv_a = pool.malloc(t * w.kv_lora * b)
        pool.free(contiguous)
        kv = pool.malloc(t * w.kv * b)
        rows = [pool.malloc(t * w.rope_k * b) for _ in range(3)]  # cos_sin, cos, sin
        rotated = []
        for width in (w.rope_q, w.rope_k):
            x_cos = pool.malloc(t * width * b)
            rot = pool.malloc(t * width * b)
            x_sin = pool.malloc(t * width * b)
            pool.free(rot)
            rotated.append(pool.malloc(t * width * b))
            pool.free(x_cos)
            pool.free(x_sin)
        for h in rows:
            pool.free(h)
        k = pool.malloc(t * w.q * b)
        held = [q, latent, kv_a, kv, *rotated]
        if w.padded:
            held.append(pool.malloc(t * w.padded * b))
            held.append(pool.malloc(t * w.padded * b))
            pool.free(k)
        else:
            held.append(k)
        held.append(pool.malloc(t * w.v_padded * b))
        attn_width = w.padded or w.q
        output = pool.malloc(t * attn_width * b)
        pool.free(pool.malloc(t * attn_width * b))  # flash-attn's out, copied into output
        held.append(pool.malloc(t * w.v_out * b))
        pool.free(output)
        o_proj = pool.malloc(t * w.hidden * b)
        for h in held:
            pool.free(h)
        pool.free(normed)
        if layer < n_dense:
            gate_up = pool.malloc(t * 2 * w.ff_dense * b)
            act = pool.malloc(t * w.ff_dense * b)
            out = pool.malloc(t * w.hidden * b)
            pool.free(gate_up)
            pool.free(act)
        else:
            shared = None
            if w.ff_shared:
                gate_up = pool.malloc(t * 2 * w.ff_shared * b)
                act = pool.malloc(t * w.ff_shared * b)
                shared = pool.malloc(t * w.hidden * b)
                pool.free(gate_up)
                pool.free(act)
            router = pool.malloc(t * w.experts * b)
            scores = [pool.malloc(t * w.experts * b) for _ in range(2)]  # softmax, masked_fill
            picked = [pool.malloc(t * w.top_k * b), pool.malloc(t * w.top_k * 8)]
            for h in scores:
                pool.free(h)
            caches = [pool.malloc(c) for c in w.moe_caches]
            for h in caches:
                pool.free(h)
            scaled = pool.malloc(t * w.hidden * b)
            out = scaled
            if shared is not None:
                out = pool.malloc(t * w.hidden * b)
                pool.free(scaled)
                pool.free(shared)
            for h in (router, *picked):
                pool.free(h)
        pool.free(o_proj)
        hidden = out
    return pool.reserved(), pool.peak
