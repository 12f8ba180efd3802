"""The layout on the one Metal device: its budget (the working set, the largest buffer), the working set of one
forward, and the assembly of the MemoryEstimate, engine_view and warnings."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from ...errors import OomkitError
from ...memory import Device, LayerUse, MemoryEstimate, Usage, apple_default_gpu_share
from ...model.spec import LayerKind, ModelSpec, TensorSpec
from ...model.weights import per_layer_sum
from ...units import GiB, KiB, MiB
from . import context_fit
from .context_fit import ContextFit
from .kv import LayerCache, kv_dims, latent_cache, layer_caches
from .settings import LMS_PROGRAM, MlxSettings, Resolved, parse_version, resolve, with_context
from .weights import is_plain_dtype, tensor_bytes

# Apple silicon pages are 16 KiB: MetalAllocator::malloc rounds buffers above a page up to whole pages
VM_PAGE = 16 * KiB


# ---------------------------------------------------------------------------------------------------------
# The Metal device: unified memory, the working set, the largest buffer


def default_working_set(ram: int, macos: int | None = None) -> int:
    """Metal's recommendedMaxWorkingSetSize with iogpu.wired_limit_mb=0 (hardware/detect.py apple_default_gpu_share):
    pass --wired-limit-mb or the value from mx.device_info() when you know it."""
    return apple_default_gpu_share(ram, macos)


def default_max_buffer(ram: int) -> int:
    """MTLDevice.maxBufferLength: reported as 9,534,832,640 bytes on a 16 GB Mac and 14,302,248,960 on a 24 GB Mac
    (both 0.555 x RAM; mlx "[metal::malloc] ... maximum allowed buffer size" messages); larger Macs report
    relatively more (86,586,540,032 on 128 GB). An approximation: pass --max-buffer-length from mx.device_info()."""
    return int(ram * 0.555)


@dataclass(frozen=True)
class Metal:
    """The device mlx runs on and its limits (None where no Mac was given)."""

    device: Device | None
    ram: int | None
    working_set: int | None
    max_buffer: int | None


def metal_device(devices: tuple[Device, ...], s: MlxSettings) -> Metal:
    if len(devices) > 1:
        raise OomkitError("MLX runs on one Metal device (unified memory); give one --gpu / --vram")
    dev = devices[0] if devices else None
    # A Mac found on this machine (hardware/detect.py apple_gpus: free memory known) already gives Metal's share,
    # iogpu.wired_limit_mb or macOS's default, less what RAM has free: it is the working set, and the RAM behind it is
    # not on the Device. A named Mac (--gpu) or a --vram size gives the RAM, whose default share Metal offers.
    detected = dev is not None and dev.free_bytes is not None
    ram = None if detected else (dev.memory_bytes if dev else None)
    if s.wired_limit_mb:
        working_set = s.wired_limit_mb * MiB
    elif detected:
        working_set = dev.memory_bytes
    else:
        working_set = default_working_set(ram, dev.macos) if ram else None
    max_buffer = s.max_buffer_length or (default_max_buffer(ram) if ram else None)
    return Metal(dev, ram, working_set, max_buffer)


# ---------------------------------------------------------------------------------------------------------
# The working set of one forward (modelled, not measured)


# mlx/backend/metal/scaled_dot_product_attention.cpp has_fused_kernel / use_fallback (mlx 0.32): a query of more
# than 8 tokens runs the fused full-attention kernel only for equal query/value head dims of 64, 72, 80, 96, 128,
# 192 or 256, and use_fallback prefers the unfused path for 192 and 256 ("Unfused path is faster for following
# shapes"): the fused prefill kernels are these head dims.
FUSED_PREFILL_HEAD_DIMS = (64, 72, 80, 96, 128)


def _scores_materialized(a, quantized: bool, latent: bool = True) -> bool:
    """Whether a prefill chunk's attention holds the B x H x S x L scores: the unfused SDPA (mlx fast.cpp
    scaled_dot_product_attention's fallback: matmul(q, k^T), where(mask, ...), softmax, matmul), mlx-lm's
    quantized_scaled_dot_product_attention (models/base.py: quantized_matmul scores, where, softmax) for a
    QuantizedKVCache, and MLA (models/deepseek_v3.py DeepseekV3Attention: the pe_scores it builds and masks with
    mx.where, passed to the SDPA as its mask; before mlx-lm 0.30.6 the decompressed 192/128 heads took the unfused
    path). latent: whether the release caches the MLA latent (kv.latent_cache); before it the decompressed heads run
    the model's plain scaled_dot_product_attention with the causal mask, as any other attention."""
    if quantized or (a.kv_lora_rank and latent):
        return True
    return a.head_dim_k != a.head_dim_v or a.head_dim_k not in FUSED_PREFILL_HEAD_DIMS


def _scores_bytes(a, B: int, plain: int, quant: int, dt: int, latent: bool = True) -> int:
    """The score arrays a chunk's attention holds at once, for the largest S x L of the plain and the quantized path.

    The fast SDPA's unfused fallback (mlx fast.cpp scaled_dot_product_attention `fallback`: scores = matmul(q, k^T),
    where(mask, scores, min), softmax(scores, precise), matmul(scores, v)) holds ONE B x H x S x L array of the dtype:
    `where` writes into the scores' buffer (backend/common/ternary.h set_ternary_op_output_data donates a
    row-contiguous donatable input, the General case of a broadcast mask included) and so does softmax
    (backend/metal/softmax.cpp set_output: copy_shared_buffer of a donatable input); beside it the causal mask,
    greater_equal(q_idx, k_idx): S x L bool bytes. MLA (models/deepseek_v3.py) builds pe_scores itself and passes them
    to the SDPA as its mask, so two arrays of the dtype are alive (the mask and the scores added to it).
    mlx-lm's quantized_scaled_dot_product_attention (models/base.py) is written the same way as the fallback, but the
    one public figure on that path (test_mlx_heldout.py, granite-4.1-8b --kv-bits 4 at 32K) holds about two arrays;
    it keeps the two-array bound."""
    st_plain = plain if _scores_materialized(a, False, latent) else 0
    if a.kv_lora_rank and latent:
        return 2 * B * a.n_heads * max(st_plain, quant) * dt
    fallback = B * a.n_heads * st_plain * dt + st_plain  # scores + the S x L bool causal mask
    return max(fallback, 2 * B * a.n_heads * quant * dt)


def _scores_tokens(chunks: list[int], window: int | None, quantized_from: int | None) -> tuple[int, int]:
    """The largest S x L (query x key tokens) over the prompt chunks, for the plain and the quantized path: L is the
    cache's keys after the chunk's update (cache.py KVCache: every token so far; RotatingKVCache._update_concat:
    min(offset, max_size - 1) + S). A chunk runs on the quantized cache when maybe_quantize_kv_cache converted it
    after an earlier call (offset >= the offset kv.simulate_kv converted it at)."""
    plain = quant = 0
    offset = 0
    for S in chunks:
        keys = (min(offset, window - 1) if window else offset) + S
        if S > 8 or quantized_from is not None:
            if quantized_from is not None and offset and offset >= quantized_from:
                quant = max(quant, S * keys)
            elif S > 8:
                plain = max(plain, S * keys)
        offset += S
    return plain, quant


# mlx/transforms.cpp eval_impl: MAX_ACTIVE_TASKS = 10 command buffers may be committed and not yet completed before
# the CPU waits for one; mlx/backend/metal/eval.cpp gpu::eval keeps every input of an op alive (the completion
# handler holds their data) until its command buffer completes, and CommandEncoder::needs_commit commits a buffer
# once its inputs pass max_mb_per_buffer MiB (mlx/backend/metal/device.cpp Device::Device, from PR #1864, 7aea5b18,
# first in mlx 0.23.0, to 0.32.x: by the last letter of MTLDevice.architecture's name, 'p' 40, 'g' 40, 's' 50,
# 'd' 50, others 40). device.cpp's comments call 'g' "base, pro" and 's' "max", but the Pro and the Max dies both
# report 's' (applegpu_g13s on an M1 Max, g14s on an M2 Pro, g15s on an M3 Max, g16s on an M4 Pro, as mx.device_info()
# ["architecture"] prints them in public benchmark logs), the base chips 'g' (g13g ... g16g), the Ultras 'd' (g13d).
MAX_ACTIVE_TASKS = 10


def max_mb_per_buffer(device_name: str | None) -> int:
    """device.cpp's max_mb_per_buffer for the chip a name says: 50 for a Pro, Max or Ultra ('s' and 'd'
    architectures), 40 for a base chip ('g') and when the name says none."""
    words = (device_name or "").lower().split()
    return 50 if any(w in words for w in ("pro", "max", "ultra")) else 40


def compute_bytes(spec: ModelSpec, s: MlxSettings, r: Resolved, caches: list[LayerCache],
                  max_mb: int = 40) -> int:
    """A prefill chunk of S tokens holds two hidden rows plus the larger of attention (Q, K, V, output) and the MLP
    (gate, up and their product); where the chunk's attention materialises its scores (_scores_materialized) the
    score arrays of _scores_bytes (one B x H x S x L array of the dtype and the bool mask on the fast SDPA's fallback,
    two on MLA and on mlx-lm's quantized path); plus the largest
    cache buffer's growth (old and new alive during mx.concatenate) and what every RotatingKVCache holds beyond its
    end buffer between prompt chunks (its window and the last chunk, kv.simulate_rotating prefill_peak; mlx-engine's
    context_fit.py charges the same max_size + prefill step - 1 tokens); the logits of the last token only
    (generate_step takes logits[:, -1, :]). The prefill runs ahead of the GPU: the inputs of up to MAX_ACTIVE_TASKS + 1
    command buffers of max_mb MiB each stay alive until their buffers complete, at most the chunk's activations of all
    layers."""
    chunks = list(r.updates[: len(r.updates) - r.max_tokens])
    S = max(chunks)  # the largest prompt chunk
    B, dt = s.batch, r.dtype_bytes
    resid = B * S * spec.n_embd * dt
    by_index = {c.index: c for c in caches}
    work = 0
    activations = 0  # every layer's intermediates of the chunk, the most in-flight buffers can hold
    score_memo: dict[tuple, tuple[int, int]] = {}
    latent = latent_cache(spec, parse_version(s.engine_version))
    for layer in spec.trunk_layers:
        a = layer.attention
        attn = 0
        if a is not None:
            attn = B * S * (a.n_heads * (a.head_dim_k + a.head_dim_v) + a.n_kv_heads * (a.head_dim_k + a.head_dim_v)) * dt
            c = by_index.get(layer.index)
            if c is not None and c.cls != "none":
                window = c.tokens if c.cls == "RotatingKVCache" else None
                qfrom = c.quantized_from if c.cls == "QuantizedKVCache" else None
                key = (window, qfrom)
                if key not in score_memo:
                    score_memo[key] = _scores_tokens(chunks, window, qfrom)
                plain, quant = score_memo[key]
                attn += _scores_bytes(a, B, plain, quant, dt, latent)
        f = layer.ffn
        mlp = 3 * B * S * (f.n_ff_expert * f.n_experts_used + f.n_ff_shared if f.is_moe else f.n_ff) * dt
        work = max(work, 2 * resid + max(attn, mlp))
        activations += 2 * resid + attn + mlp
    grow = max((c.transient for c in caches), default=0)
    # every rotating layer keeps its last chunk beside its window until its next update (cache.py RotatingKVCache
    # _update_concat: max_size - 1 + S tokens after a chunk, trimmed only by the next call), all at once in the prefill
    grow += sum(c.prefill_extra for c in caches)
    logits = B * spec.n_vocab * (dt + 4)
    if r.logits_tokens > 1:
        # before mlx-lm 0.27.0 the last prompt call's lm_head ran on all of its tokens: B x T x vocab logits of the
        # dtype, beside the hidden rows, before generate_step's _step keeps logits[:, -1, :] (settings.ERAS)
        T = r.logits_tokens
        work = max(work, B * T * (spec.n_embd + spec.n_vocab) * dt)
    in_flight = min((MAX_ACTIVE_TASKS + 1) * max_mb * MiB, activations)
    return work + in_flight + grow + logits


# ---------------------------------------------------------------------------------------------------------
# Warnings, engine_view, the estimate


def _buffer_warnings(metal: Metal, weights: list[tuple[TensorSpec, int]], caches: list[LayerCache],
                     w_total: int) -> list[str]:
    """The largest single buffers (each must stay under maxBufferLength), and generate.py's working-set warning."""
    out = []
    biggest = sorted(((b, t.name) for t, b in weights), reverse=True)[:1]
    big_kv = max(((max(c.k_bytes, c.v_bytes), f"layer {c.index} {'K' if c.k_bytes >= c.v_bytes else 'V'} cache")
                  for c in caches if c.k_bytes), default=None)
    max_buffer = metal.max_buffer
    if max_buffer:
        for b, what in [*biggest, *([big_kv] if big_kv else [])]:
            if b > max_buffer:
                out.append(f"{what} is one buffer of {b / GiB:.2f} GiB, over Metal's maximum buffer length "
                           f"{max_buffer / GiB:.2f} GiB: mlx fails with \"[metal::malloc] Attempting to allocate "
                           f"{b} bytes which is greater than the maximum allowed buffer size of {max_buffer} "
                           "bytes\"")
    working_set = metal.working_set
    if working_set and w_total > 0.9 * working_set:
        # generate.py wired_limit prints this warning when the model is over 90% of the working set
        out.append(f"[WARNING] Generating with a model that requires {w_total // MiB} MB which is close to the "
                   f"maximum recommended size of {working_set // MiB} MB. This can be slow.")
    return out


def _count(items: Iterable[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for x in items:
        if x != "none":
            out[x] = out.get(x, 0) + 1
    return out


def _sum_by(pairs: Iterable[tuple[str, int]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for k, v in pairs:
        out[k] = out.get(k, 0) + v
    return out


def _engine_view(s: MlxSettings, r: Resolved, metal: Metal, caches: list[LayerCache],
                 weights: list[tuple[TensorSpec, int]], w_total: int) -> dict[str, Any]:
    kv = sum(c.k_bytes + c.v_bytes for c in caches)
    biggest = sorted(((b, t.name) for t, b in weights), reverse=True)[:1]
    working_set, ram = metal.working_set, metal.ram
    return {
        "program": s.program,
        "prompt_tokens": r.prompt,
        "max_tokens": r.max_tokens,
        "dtype": r.dtype,
        "kv_cache_bytes": kv,
        "kv_cache_tokens": max((c.tokens for c in caches if c.cls != "ArraysCache"), default=0),
        "cache_layers": ", ".join(f"{n} {k}" for k, n in _count(c.cls for c in caches).items()),
        "kv_bytes_by_class": _sum_by((c.cls, c.k_bytes + c.v_bytes) for c in caches if c.k_bytes),
        "arrays_cache_bytes": sum(c.state_bytes for c in caches),
        "weights_bytes": w_total,
        "largest_weight": biggest[0][1] if biggest else None,
        "largest_weight_bytes": biggest[0][0] if biggest else 0,
        "unified_memory_bytes": ram,
        "recommended_working_set_bytes": working_set,
        "max_buffer_bytes": metal.max_buffer,
        # allocator.cpp MetalAllocator: memory limit min(1.5 x working set, 0.95 x RAM), the cache is trimmed above
        # 0.95 x the working set
        "memory_limit_bytes": int(min(1.5 * working_set, 0.95 * ram)) if working_set and ram else None,
        "quantized_kv_from_token": next((c.quantized_from for c in caches if c.quantized_from), None),
    }


def _kv_bytes_per_token(spec: ModelSpec, s: MlxSettings, r: Resolved, caches: list[LayerCache]) -> int | None:
    """Marginal bytes per context token, one sequence (none when a rotating or quantized cache caps it)."""
    if any(c.cls == "RotatingKVCache" for c in caches) or s.kv_bits is not None:
        return None
    B = s.batch
    latent = latent_cache(spec, parse_version(s.engine_version))
    return sum(B * (h * (kw + vw)) * r.dtype_bytes for h, kw, vw in
               (kv_dims(layer, latent) for layer in spec.trunk_layers
                if layer.attention is not None and layer.kind is not LayerKind.NONE
                and layer.kv_source is None)) // B or None


def lms_context_fit(spec: ModelSpec, devices: tuple[Device, ...], s: MlxSettings) -> ContextFit | None:
    """The context LM Studio's MLX runtime loads an `lms load` run at (context_fit.py): where mlx-engine's
    generate.py load_model picks BatchedVisionModelKit, a model with a vision encoder (config.json vision_config) at
    any --parallel, a text model from --parallel 2 when every layer's cache can merge; None where it keeps -c."""
    if s.program != LMS_PROGRAM or s.kv_bits is not None:
        return None
    working_set = metal_device(devices, s).working_set
    if not working_set:
        return None
    # the probe's cache is mlx_vlm's make_prompt_cache(language_model), uncapped: oomkit's cache of one sequence
    # without the lms cap (kv.layer_caches caps it at -c, ModelKit's max_kv_size)
    one = replace(s, batch=1, program="mlx_lm.server")
    r = resolve(spec, one)
    caches, _ = layer_caches(spec, one, r)
    if not spec.towers and (s.batch < 2 or any(c.cls not in ("KVCache", "RotatingKVCache", "ArraysCache", "none")
                                               for c in caches)):
        return None  # ModelKit: the context asked
    # the baseline is what mlx holds after mlx_vlm loads the model: the weights and the encoder (kept at bf16)
    baseline = sum(b for _, b in tensor_bytes(spec, one, r)) + sum(t.nbytes(2) for t in spec.towers)
    return context_fit.fit(spec, caches, working_set=working_set, baseline=baseline, dtype_bytes=r.dtype_bytes,
                           prefill_step=s.prefill_step_size or context_fit.PROMPT_PROCESSING_CHUNK_SIZE)


def estimate(spec: ModelSpec, devices: tuple[Device, ...], s: MlxSettings) -> MemoryEstimate:
    fitted = lms_context_fit(spec, devices, s)
    if fitted is not None:
        s = with_context(s, fitted.context_length)
    r = resolve(spec, s)
    warnings = list(r.labels)
    if fitted is not None:
        warnings.append(fitted.describe())
    caches, notes = layer_caches(spec, s, r)
    warnings += notes
    weights = tensor_bytes(spec, s, r)
    w_total = sum(b for _, b in weights)
    if s.q_bits is None and not is_plain_dtype(spec.weights.format):
        warnings.append(f"{spec.weights.format} weights counted as stored; mlx-lm loads MLX safetensors (give "
                        "--q-bits for an mlx_lm.convert -q model)")
    metal = metal_device(devices, s)

    kv = sum(c.k_bytes + c.v_bytes for c in caches)
    state = sum(c.state_bytes for c in caches)
    compute = compute_bytes(spec, s, r, caches, max_mb_per_buffer(devices[0].name if devices else None))
    dev = metal.device
    if dev is not None:
        usage = (Usage(id=dev.id if dev.id.startswith("MTL") else "MTL0", name=dev.name,
                       memory_bytes=metal.working_set, weights_bytes=w_total, kv_cache_bytes=kv,
                       recurrent_state_bytes=state, compute_bytes=compute),)
        host = Usage(id="CPU", name="host")
    else:
        usage = ()
        host = Usage(id="CPU", name="unified memory", weights_bytes=w_total, kv_cache_bytes=kv,
                     recurrent_state_bytes=state, compute_bytes=compute)
        warnings.append("no Mac given: give --gpu \"M3 Max 128GB\" (or --vram with the RAM size) to check the fit")
    warnings += _buffer_warnings(metal, weights, caches, w_total)

    w_by_layer = per_layer_sum((t.layer, b) for t, b in weights)
    layer_uses = tuple(
        LayerUse(index=c.index, kind=c.kind, device=usage[0].id if usage else "CPU",
                 weights_bytes=w_by_layer.get(c.index, 0), kv_bytes=c.k_bytes + c.v_bytes,
                 recurrent_bytes=c.state_bytes, cells=c.tokens or None)
        for c in caches
    )
    eff = s.to_dict()
    eff.update(max_tokens=r.max_tokens, prompt_tokens=r.prompt, context_length=r.total)
    if s.q_bits is not None and is_plain_dtype(spec.weights.format):
        # the weights mlx-lm holds are the quantized ones (utils.py quantize_model), not the checkpoint's dtype
        warnings.append(f"weights: the {spec.weights.format} checkpoint quantized to {s.q_bits} bits, group "
                        f"{s.q_group_size} (mlx_lm.convert -q; the bits of --q-bits, or of an mlx-community "
                        "name's -Nbit)")
        spec = replace(spec, weights=replace(spec.weights, format="mlx-affine"))
    elif s.q_bits is not None:
        # a quantized checkpoint converted with -q (weights.tensor_bytes): its float tensors quantized, the rest kept
        warnings.append(f"weights: the {spec.weights.format} checkpoint's float tensors quantized to {s.q_bits} bits, "
                        f"group {s.q_group_size}, its {spec.weights.format} tensors as stored (mlx_lm.convert -q over "
                        "the quantized checkpoint; the bits of --q-bits, or of an mlx-community name's -Nbit or "
                        "-MXFP4-QN)")
    return MemoryEstimate(model=spec, engine="mlx", settings=eff, devices=usage, host=host,
                          engine_view={**_engine_view(s, r, metal, caches, weights, w_total),
                                       # the context the runtime picks whatever -c asks (limits.context_slack)
                                       "runtime_fitted_context": fitted.context_length if fitted else None},
                          kv_bytes_per_token=_kv_bytes_per_token(spec, s, r, caches), layers=layer_uses,
                          warnings=tuple(warnings))
