"""The cache, per layer: the cache-layer class generate builds for each layer and the bytes its tensors hold
(cache_utils.py: DynamicLayer, DynamicSlidingWindowLayer, StaticLayer, the QuantizedLayers, LinearAttentionLayer)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ...errors import OomkitError
from ...model.archs import refuse_llamacpp_only_caches
from ...model.spec import LayerKind, LayerSpec, ModelSpec
from ...units import cdiv
from .settings import DEPRECATED_STATIC, ERAS, Resolved


@dataclass(frozen=True)
class LayerCache:
    """What one layer's cache holds. Bytes include the batch; *_storage is what the allocator keeps alive."""

    index: int
    kind: str  # "full" | "sliding" | "chunked" | "latent" | "recurrent" | "none"
    cls: str  # the transformers cache-layer class
    k_per_token: int = 0  # bytes of K per token, one sequence, as cached
    v_per_token: int = 0
    tokens_end: int = 0  # tokens the K/V tensors hold when generate returns (their shape)
    nbytes_end: int = 0  # sum of tensor.nbytes when generate returns
    storage_prefill: int = 0  # bytes alive right after the prefill forward
    storage_end: int = 0  # bytes alive when generate returns
    conv_bytes: int = 0  # linear attention / Mamba conv state
    ssm_bytes: int = 0  # recurrent state (float32)
    window: int | None = None
    offloaded: bool = False  # lives on the host between its own updates (offloaded caches)

    @property
    def kv_end(self) -> int:
        return self.storage_end - self.conv_bytes - self.ssm_bytes


def kv_per_token(layer: LayerSpec, r: Resolved) -> tuple[int, int]:
    """Bytes of K and V per token for one sequence, in the model dtype."""
    a = layer.attention
    if a is None:
        return 0, 0
    if a.kv_lora_rank:
        if r.version >= ERAS["mla_latent"]:
            # DeepseekV3Attention.forward: cache.update(kv_nope [B,1,T,kv_lora_rank], k_rot [B,1,T,rope])
            return a.kv_lora_rank * r.dtype_bytes, a.qk_rope_head_dim * r.dtype_bytes
        # up to 5.14: key_states [B,H,T,nope+rope], value_states [B,H,T,v_head_dim] (padding for flash
        # attention is applied after the cache update)
        return a.n_heads * a.head_dim_k * r.dtype_bytes, a.n_heads * a.head_dim_v * r.dtype_bytes
    return a.n_kv_heads * a.head_dim_k * r.dtype_bytes, a.n_kv_heads * a.head_dim_v * r.dtype_bytes


def _recurrent_bytes(layer: LayerSpec, r: Resolved) -> tuple[int, int]:
    """cache_utils.py LinearAttentionLayer.lazy_initialization: conv_states zeros of (B, conv_dim, kernel) in the
    dtype of the projected inputs (the model dtype), the full kernel kept (not kernel - 1); recurrent_states
    zeros_like the model's final state, float32 (modeling_qwen3_next.py torch_chunk_gated_delta_rule casts to
    float32; modeling_mamba.py's scan accumulates in float32)."""
    st = layer.recurrent
    if st is None:
        return 0, 0
    if st.kind == "short_conv":
        # LFM2 / LFM2-MoE (models/lfm2/modeling_lfm2.py Lfm2ShortConv): one conv state (B, hidden, conv_L_cache) in
        # the model dtype, the full kernel kept, no recurrent state; 5.5+: DynamicCache's LinearAttentionLayer
        # (update_conv_state), before: Lfm2HybridConvCache's conv_cache (see _hybrid_conv_cache)
        return r.batch * st.d_inner * st.d_conv * r.dtype_bytes, 0
    conv_dim = st.d_inner + 2 * st.n_group * st.d_state
    if st.conv_override is not None or st.ssm_override is not None:
        raise OomkitError(f"{st.kind} recurrent state: transformers' layout for this kind is not modelled")
    return r.batch * conv_dim * st.d_conv * r.dtype_bytes, r.batch * st.ssm * 4


# The first release with each LFM2 model (models/lfm2 in the 4.54.0 wheel, not 4.53.3; models/lfm2_moe in 5.0.0,
# not 4.57.6)
_LFM2_FIRST = {"lfm2": (4, 54, 0), "lfm2moe": (5, 0, 0)}


def _hybrid_conv_cache(spec: ModelSpec, r: Resolved) -> tuple[str, int]:
    """(cache class, conv bytes each attention layer also holds) for LFM2 before 5.5: Lfm2HybridConvCache.__init__
    (Lfm2MoeHybridConvCache alike) allocates torch.zeros(max_batch_size, hidden_size, conv_L_cache) for every
    layer, attention layers included, and keeps K/V by torch.cat (measured on 5.4.0). ("", 0): not LFM2, or 5.5+."""
    conv = next((la.recurrent for la in spec.trunk_layers
                 if la.recurrent is not None and la.recurrent.kind == "short_conv"), None)
    if conv is None:
        return "", 0
    first = _LFM2_FIRST.get(spec.architecture)
    if first is None:
        raise OomkitError(f"{spec.name}: transformers' cache for short-convolution layers is modelled for LFM2 / "
                          f"LFM2-MoE only, not {spec.architecture!r}")
    if r.version < first:
        raise OomkitError(f"transformers {'.'.join(map(str, r.version))} has no {spec.architecture} model (added in "
                          f"{'.'.join(map(str, first))})")
    if r.version >= ERAS["lfm2_linear_layer"]:
        return "", 0
    cls = "Lfm2MoeHybridConvCache" if spec.architecture == "lfm2moe" else "Lfm2HybridConvCache"
    return cls, r.batch * conv.d_inner * conv.d_conv * r.dtype_bytes


def _windowed(layer: LayerSpec, r: Resolved) -> bool:
    if layer.kind not in (LayerKind.SLIDING, LayerKind.CHUNKED) or not layer.attention or not layer.attention.window:
        return False
    if r.version >= ERAS["sliding_layers"]:
        return True
    return r.impl in DEPRECATED_STATIC  # 4.55: only HybridCache / SlidingWindowCache window their layers


def layer_caches(spec: ModelSpec, r: Resolved) -> list[LayerCache]:
    """One LayerCache per layer, following the Cache class generate builds
    (generation/utils.py _prepare_cache_for_generation; cache_utils.py get_layer_types_and_kwargs).
    Layers transformers runs: MTP / next-n blocks are not loaded (e.g. DeepseekV3ForCausalLM
    _keys_to_ignore_on_load_unexpected drops model.layers.61)."""
    refuse_llamacpp_only_caches(spec, "transformers")
    layers = spec.trunk_layers
    out: list[LayerCache] = []
    if r.impl == "quantized":
        bad = {layer.kind.value for layer in layers if layer.kind not in (LayerKind.FULL, LayerKind.LATENT)}
        if bad:
            # cache_utils.py QuantizedCache.__init__
            raise OomkitError("`QuantizedCache` is only supported for models with only full attention layers. "
                              f"We found the following invalid layer types: {sorted(bad)}")
    P, N, B = r.prompt, r.end_tokens, r.batch
    lfm2_cls, lfm2_attn_conv = _hybrid_conv_cache(spec, r)
    if lfm2_cls and (r.impl != "dynamic" or r.offload):
        # modeling_lfm2.py Lfm2Model.forward builds its own cache whatever cache_implementation says (not modelled)
        raise OomkitError(f"transformers {'.'.join(map(str, r.version))}: LFM2 keeps its own {lfm2_cls}; "
                          f"cache_implementation {r.impl!r} is not modelled for it")
    for layer in layers:
        kind = layer.kind.value
        if layer.kind is LayerKind.NONE or layer.kv_source is not None:
            out.append(LayerCache(layer.index, "none", "DummyLayer"))
            continue
        conv, ssm = _recurrent_bytes(layer, r) if (layer.recurrent is not None and (
            layer.kind is LayerKind.RECURRENT or layer.parallel_recurrent)) else (0, 0)
        if lfm2_cls and layer.attention is not None:
            conv = lfm2_attn_conv
        if layer.attention is None:  # a pure linear-attention / Mamba layer
            out.append(LayerCache(layer.index, "recurrent", lfm2_cls or "LinearAttentionLayer", nbytes_end=conv + ssm,
                                  storage_prefill=conv + ssm, storage_end=conv + ssm, conv_bytes=conv, ssm_bytes=ssm))
            continue
        kpt, vpt = kv_per_token(layer, r)
        per_tok = B * (kpt + vpt)
        window = layer.attention.window if _windowed(layer, r) else None
        hybrid = conv + ssm
        if r.impl == "quantized":
            lc = _quantized_layer(layer, r, kpt, vpt)
        elif r.static:
            length = min(window, r.max_cache_len) if window else r.max_cache_len
            cls = "StaticSlidingWindowLayer" if window else "StaticLayer"
            # StaticLayer.lazy_initialization: torch.zeros((B, H, max_cache_len, D)) at the first update, in full
            b = per_tok * length
            lc = LayerCache(layer.index, kind, cls, kpt, vpt, tokens_end=length, nbytes_end=b, storage_prefill=b,
                            storage_end=b, window=window)
        elif window:
            # DynamicSlidingWindowLayer.update: full = torch.cat([keys, new]); keys = full[:, :, -window + 1:] is a
            # view, so the storage of the whole cat stays alive: after prefill all P tokens, after a decode step
            # min(cached, window - 1) + 1 tokens; tensor.nbytes shows min(N, window - 1)
            shown = min(N, window - 1)
            end_store = min(N, window) if r.new > 1 else P
            lc = LayerCache(layer.index, kind, "DynamicSlidingWindowLayer", kpt, vpt, tokens_end=shown,
                            nbytes_end=per_tok * shown, storage_prefill=per_tok * P, storage_end=per_tok * end_store,
                            window=window)
        else:
            # DynamicLayer.update: self.keys = torch.cat([self.keys, key_states], dim=-2)
            lc = LayerCache(layer.index, kind, "DynamicLayer", kpt, vpt, tokens_end=N, nbytes_end=per_tok * N,
                            storage_prefill=per_tok * P, storage_end=per_tok * N)
        if hybrid:
            lc = replace(lc, cls=lc.cls.replace("Layer", "") + "+LinearAttention", conv_bytes=conv, ssm_bytes=ssm,
                         nbytes_end=lc.nbytes_end + hybrid, storage_prefill=lc.storage_prefill + hybrid,
                         storage_end=lc.storage_end + hybrid)
        if r.offload and (r.impl != "offloaded_static" or not window):
            # Cache.offload: DynamicCache(offloading=True) offloads every layer (offload_only_non_sliding=False);
            # StaticCache keeps sliding layers resident (offload_only_non_sliding=True). Linear states never move.
            lc = replace(lc, offloaded=True)
        out.append(lc)
    return out


def _quantized_layer(layer: LayerSpec, r: Resolved, kpt: int, vpt: int) -> LayerCache:
    """cache_utils.py QuantizedCache: one layer class per backend.

    fp8 (Fp8QuantizedLayer): every token stored as float8_e4m3fn (1 byte per element) plus one float32 scale per
    K and V, appended with torch.cat; the model-dtype keys/values stay empty tensors.
    quanto / hqq (QuantizedLayer.update): the prefill is quantized whole; each decode step appends to a
    full-precision residual and, when it would reach residual_length, re-quantizes everything and empties it. So after
    k decode steps the residual holds k mod residual_length tokens. The stored layouts (packed nbits data plus a
    scale and a zero point per q_group_size elements in the model dtype) follow optimum-quanto's WeightQBitsTensor
    and HQQ's packing; not measured here (neither backend is installed)."""
    P, N, B, dt = r.prompt, r.end_tokens, r.batch, r.dtype_bytes
    el_k, el_v = kpt // dt, vpt // dt  # elements per token
    kind = layer.kind.value
    if r.backend == "fp8":
        def fp8(tokens: int) -> int:
            return B * tokens * (el_k + el_v) + 2 * 4
        return LayerCache(layer.index, kind, "Fp8QuantizedLayer", el_k, el_v, tokens_end=N, nbytes_end=fp8(N),
                          storage_prefill=fp8(P), storage_end=fp8(N))
    steps = r.new - 1
    resid = steps % r.residual_length if steps else 0

    def packed(tokens: int) -> int:
        n = B * tokens * (el_k + el_v)
        if r.backend == "hqq" and r.nbits == 3:
            data = cdiv(n, 10) * 4  # hqq BitPack.pack_3bit_32: 10 values per int32
        else:
            data = cdiv(n * r.nbits, 8)
        groups = cdiv(B * tokens * el_k, r.group_size) + cdiv(B * tokens * el_v, r.group_size)
        return data + groups * 2 * dt

    q_end = packed(N - resid) + B * resid * (kpt + vpt)
    cls = "QuantoQuantizedLayer" if r.backend == "quanto" else "HQQQuantizedLayer"
    return LayerCache(layer.index, kind, cls, kpt, vpt, tokens_end=N, nbytes_end=q_end, storage_prefill=packed(P),
                      storage_end=q_end)


def cache_tensors(c: LayerCache, phase: str) -> list[int]:
    """The tensors (bytes) a layer's cache is made of at a phase, for the allocator rounding."""
    total = c.storage_prefill if phase == "prefill" else c.storage_end
    kv = total - c.conv_bytes - c.ssm_bytes
    parts = [c.conv_bytes, c.ssm_bytes]
    if kv > 0:
        kt = c.k_per_token + c.v_per_token
        k = kv * c.k_per_token // kt if kt else kv
        parts += [k, kv - k]
    return [p for p in parts if p > 0]
