"""What a PyTorch process holds beside weights and cache (modelled, labelled): the working set of one forward
(activations and logits), the CUDA context, and the caching allocator's rounding."""

from __future__ import annotations

from dataclasses import dataclass

from ...model.spec import ModelSpec
from ...units import GiB, MiB, round_up
from .kv import LayerCache
from .settings import ERAS, Resolved, TransformersSettings
from .weights import is_bnb_linear, rotary_width

# Not visible to torch.cuda.memory_*: the CUDA context, loaded kernels and cuBLAS handles of a PyTorch process.
# 0.51 GiB measured on an H100 with torch 2.10 / CUDA 12.9 (a vLLM worker's "worker init memory snapshot",
# non-torch memory before anything else was allocated); ptrblck in pytorch#107667 gives "~300MB" since CUDA 11.7's
# lazy kernel loading (over 1000 MB before it). A label, not a measurement of this machine.
CUDA_CONTEXT = int(0.51 * GiB)

# PyTorch's CUDA caching allocator (c10/core/AllocatorConfig.h, c10/cuda/CUDACachingAllocator.cpp):
# every block rounds up to 512 B; requests up to 1 MiB are carved from 2 MiB segments, 1-10 MiB from 20 MiB
# segments, larger ones are rounded up to 2 MiB.
K_MIN_BLOCK = 512
K_SMALL_SIZE = 1 * MiB
K_SMALL_BUFFER = 2 * MiB
K_LARGE_BUFFER = 20 * MiB
K_MIN_LARGE_ALLOC = 10 * MiB
K_ROUND_LARGE = 2 * MiB


# ---------------------------------------------------------------------------------------------------------
# Activations and logits (modelled, labelled)


@dataclass(frozen=True)
class Transients:
    prefill_layer: int  # the largest layer's working set during the prefill forward
    prefill_layer_far: int  # the same on a device without the embedding output (device_map across devices)
    prefill_logits: int  # hidden rows + logits (model dtype) + the float32 copy generate takes
    decode_layer: int  # the largest per-step working set during decoding (cat / dequant / MLA expansion)
    decode_logits: int
    # before 4.42, the prefill's [B, T, V] float32 logits, alive through the first decode step (legacy_tuple)
    first_step_logits: int = 0
    # the prefill's logits as the model returns them ([B, T, V] float32 before 4.45, [B, keep, V] in the model dtype
    # from 4.45): what accelerate copies onto the input's device when the lm_head sits on another (layout._compute_on)
    returned_logits: int = 0


def transients(spec: ModelSpec, s: TransformersSettings, r: Resolved, caches: list[LayerCache]) -> Transients:
    """The working set of one forward, modelled from the ops transformers runs (the dense prefill is checked on the
    CPU against a real forward's live tensors: test_transformers_engine.py test_prefill_working_set_matches_transformers):

    prefill, per layer: the hidden-state rows alive plus the larger of attention (Q, new K and V, the copy
    `torch.cat` makes into the cache, the output; eager attention adds the B x H x T x T_kv scores and their float32
    softmax, sdpa/flash do not) and the MLP (gate, up and their product: 3 x T x n_ff; MoE: the routed tokens'
    experts). The rows (B x T x n_embd each): the decoder layer's normed input and, in the MLP, its post-attention
    residual (`residual = hidden_states` then the norm); the model's forward (LlamaModel / Qwen2Model.forward, 4.46 to
    5.24) keeps `inputs_embeds` (the embedding output) for the whole forward and the layer's input in its loop variable
    `hidden_states` until the layer returns, so from the second layer on the attention sees three rows and the MLP
    four. With device_map across devices, accelerate's AlignDevicesHook.pre_forward (send_to_device) copies the input of
    a device's first layer onto it, so a device without the embedding holds no `inputs_embeds` (prefill_layer_far).
    MLA layers from 5.15 expand the cached latents to per-head K and V every forward
    (DeepseekV3Attention.expand_kv).
    rotary: the model's forward computes the RoPE cos and sin once (B x T x the rotary width each, in the model dtype:
    Qwen2RotaryEmbedding.forward `cos.to(dtype=x.dtype)`) and keeps them through every layer (`position_embeddings`,
    from 4.45; before, each attention layer computed its own, alive in its attention only), beside the int64 position
    ids (B x T x 8: Qwen2Model.forward `position_ids = torch.arange(...)`, in 4.45-4.57 a view of `cache_position`).
    The rotary width is head_dim x partial_rotary_factor (the rotary embedding's `dim`), qk_rope_head_dim on MLA
    layers; models with learned or ALiBi positions have none (rotary_width).
    logits: generate passes logits_to_keep=1, so [B, 1, V] in the model dtype plus the float32 copy
    (`outputs.logits[:, -1].to(copy=True, dtype=torch.float32)`); before 4.45 the models computed [B, T, V] and
    upcast it (`logits = logits.float()`).
    decode: a DynamicCache layer's torch.cat keeps the old and the new tensor of one layer alive; QuantizedCache
    dequantizes a whole layer. Before 4.42 the legacy tuple generate holds keeps every layer's old tensors
    (legacy_tuple; counted per device in layout._phase_on).
    load_in_4bit: a bitsandbytes Linear4bit dequantizes its whole weight for an input of more than one row
    (bnb_4bit_dequant), in the attention or the MLP it belongs to; a single-row decode step takes gemv_4bit.
    """
    B, dt = r.batch, r.dtype_bytes
    T = min(r.prompt, s.prefill_chunk_size) if s.prefill_chunk_size else r.prompt
    resid = B * T * spec.n_embd * dt
    by_index = {c.index: c for c in caches}
    rope = 2 * B * T * rotary_width(spec) * dt  # cos and sin
    positions = B * T * 8
    model_level = r.version >= ERAS["rotary_model_level"]
    deq = bnb_4bit_dequant(spec, s, r, B * T) if s.load_in_4bit else {}
    deq_step = bnb_4bit_dequant(spec, s, r, B) if s.load_in_4bit and B > 1 else {}
    pre_layer = pre_far = dec_layer = 0
    for layer in spec.trunk_layers:
        c = by_index.get(layer.index)
        a = layer.attention
        attn_deq, mlp_deq = deq.get(layer.index, (0, 0))
        dec_layer = max(dec_layer, *deq_step.get(layer.index, (0, 0)))
        attn = 0
        if a is not None and c is not None:
            q = B * T * a.n_heads * a.head_dim_k * dt
            new_kv = B * T * (c.k_per_token + c.v_per_token)
            out = B * T * a.n_heads * a.head_dim_v * dt
            attn = q + 2 * new_kv + out + (0 if model_level else rope)
            t_kv = min(c.window, r.prompt) if c.window else r.prompt
            if s.attn_implementation == "eager":
                attn += B * a.n_heads * T * t_kv * (4 + dt)
                if a.n_kv_heads != a.n_heads:  # repeat_kv expands K and V to every head
                    attn += B * a.n_heads * t_kv * (a.head_dim_k + a.head_dim_v) * dt
            if a.kv_lora_rank and r.version >= ERAS["mla_latent"]:
                attn += B * a.n_heads * t_kv * (a.head_dim_k + a.head_dim_v) * dt
                n_kv = c.window and min(c.window, r.end_tokens) or r.end_tokens
                dec_layer = max(dec_layer, B * a.n_heads * n_kv * (a.head_dim_k + a.head_dim_v) * dt)
        if layer.recurrent is not None and c is not None and c.conv_bytes:
            st = layer.recurrent
            attn = max(attn, B * T * (st.d_inner + 2 * st.n_group * st.d_state) * dt * 3)
        attn += attn_deq
        f = layer.ffn
        if f.is_moe:
            mlp = B * T * (3 * f.n_ff_expert * f.n_experts_used + 3 * f.n_ff_shared + 2 * spec.n_embd * f.n_experts_used) * dt
        else:
            mlp = 3 * B * T * f.n_ff * dt
        mlp += mlp_deq
        # the rows held beside the layer's working set: inputs_embeds and the loop's layer input (one tensor on the
        # first layer), the normed input, and during the MLP the post-attention residual
        held = 2 if layer is spec.trunk_layers[0] else 3
        pre_layer = max(pre_layer, held * resid + attn, (held + 1) * resid + mlp)
        pre_far = max(pre_far, 2 * resid + attn, 3 * resid + mlp)
        if c is not None and legacy_tuple(r, c):
            pass  # the old copy is part of the whole previous cache the tuple holds (layout._phase_on)
        elif c is not None and c.cls.startswith(("DynamicLayer", "DynamicSlidingWindow", "Dynamic+")):
            dec_layer = max(dec_layer, c.storage_end - c.conv_bytes - c.ssm_bytes)  # the old copy during the cat
        elif c is not None and c.cls in ("QuantoQuantizedLayer", "HQQQuantizedLayer"):
            dec_layer = max(dec_layer, 2 * B * r.end_tokens * (c.k_per_token + c.v_per_token))
        elif c is not None and c.cls == "Fp8QuantizedLayer":
            dec_layer = max(dec_layer, B * r.end_tokens * (c.k_per_token + c.v_per_token) * (4 + dt))
    # the positions (and from 4.45 the cos / sin) live through every layer; accelerate's send_to_device copies them
    # onto each device with layers
    kept = positions + (rope if model_level else 0)
    pre_layer += kept
    pre_far += kept
    V = spec.n_vocab
    if r.logits_float:
        # before 4.45 every model, and a forward that upcasts unconditionally (settings.FORWARD_WITHOUT_LOGITS_TO_KEEP):
        # the dtype's logits of the kept rows and their float32 copy
        pre_logits = B * r.keep * V * (dt + 4) + B * V * 4
        returned = B * r.keep * V * 4
    else:
        pre_logits = B * r.keep * V * dt + B * V * 4
        returned = B * r.keep * V * dt
    pre_logits += B * T * spec.n_embd * dt
    dec_logits = B * V * (dt + 4)
    # generate's loop variable `outputs` keeps the prefill's ModelOutput, its float32 logits of every prompt token
    # included, until the first decode step's forward returns (4.42.0 added `del outputs`: "Otherwise a reference
    # to outputs is kept which keeps the logits alive in the next iteration"; 4.38.2 greedy_search / sample have none)
    first = B * r.prompt * V * 4 if r.version < ERAS["cache_object_in_generate"] else 0
    return Transients(pre_layer, pre_far, pre_logits, dec_layer, dec_logits, first, returned)


def legacy_tuple(r: Resolved, c: LayerCache) -> bool:
    """Whether generate carries this layer's K/V as the legacy tuple between decode steps (before 4.42.0, settings.py
    ERAS "cache_object_in_generate"): the previous step's tensors stay alive beside the torch.cat result until the
    step returns, so a decode step ends holding the layer's cache twice. Static caches were objects already."""
    return (r.version < ERAS["cache_object_in_generate"] and not c.offloaded
            and c.cls.startswith(("DynamicLayer", "DynamicSlidingWindow", "Dynamic+")))


def bnb_4bit_dequant(spec: ModelSpec, s: TransformersSettings, r: Resolved, rows: int) -> dict[int, tuple[int, int]]:
    """Per decoder layer, what the largest bitsandbytes 4-bit Linear of its attention and of its MLP holds beyond its
    packed weight while it runs on `rows` > 1 input rows: bitsandbytes autograd/_functions.py matmul_4bit sends such an
    input to MatMul4Bit.forward, `linear(A, F.dequantize_4bit(B, quant_state).to(A.dtype).t(), bias)`: the weight
    dequantized whole, in the dtype it was loaded in (nn/modules.py Params4bit._quantize keeps it in quant_state,
    0.45.0; 0.41.1 .half()), then copied to the compute dtype where the two differ. The compute dtype is
    BitsAndBytesConfig's bnb_4bit_compute_dtype, float32 when not given (utils/quantization_config.py), which
    Linear4bit.set_compute_type keeps for a float16 input (a bfloat16 or float32 input becomes the compute dtype):
    under float16 the layer also casts its input to float32 (`x = x.to(self.compute_dtype)`) and returns a float32
    output before `out.to(inp_dtype)`. One row (a decode step of one sequence) takes F.gemv_4bit on the packed weight.
    """
    if rows <= 1:
        return {}
    up = 4 if r.dtype == "float16" else 0  # the float32 compute copy
    out: dict[int, tuple[int, int]] = {}
    for t in spec.weights.tensors:
        if not is_bnb_linear(spec, t):
            continue
        n_in, n_out = t.shape[0], t.shape[1]
        b = t.n_elements * (r.dtype_bytes + up) + rows * (n_in + n_out) * up
        attn, mlp = out.get(t.layer, (0, 0))
        out[t.layer] = (max(attn, b), mlp) if ".attn" in t.name or ".ssm" in t.name else (attn, max(mlp, b))
    return out


# ---------------------------------------------------------------------------------------------------------
# PyTorch's caching allocator (modelled: block rounding only)


def allocation_size(nbytes: int) -> int:
    """CUDACachingAllocator round_size: multiples of 512 bytes."""
    return max(K_MIN_BLOCK, round_up(nbytes, K_MIN_BLOCK))


def reserved_for(tensors: list[int], expandable: bool = False) -> int:
    """Segment bytes cudaMalloc'd for a set of live tensors (CUDACachingAllocator get_allocation_size): small blocks
    share 2 MiB segments, 1-10 MiB blocks share 20 MiB segments, larger ones round up to 2 MiB each. With
    expandable_segments the segments grow in 2 MiB pages. Fragmentation beyond this rounding (freed blocks too small
    for the next request) is not modelled."""
    sizes = [allocation_size(b) for b in tensors if b > 0]
    if expandable:
        return round_up(sum(sizes), K_ROUND_LARGE)
    small = sum(b for b in sizes if b <= K_SMALL_SIZE)
    mid = sum(b for b in sizes if K_SMALL_SIZE < b < K_MIN_LARGE_ALLOC)
    large = sum(round_up(b, K_ROUND_LARGE) for b in sizes if b >= K_MIN_LARGE_ALLOC)
    return round_up(small, K_SMALL_BUFFER) + round_up(mid, K_LARGE_BUFFER) + large
