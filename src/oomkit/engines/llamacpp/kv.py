"""The context llama.cpp settles on, its KV caches (one, or an iSWA pair) and its recurrent state.

Cited against ggml-org/llama.cpp@0c1e57098 as `file:function`; rules that changed between builds follow ERAS.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ...errors import OomkitError
from ...memo import ByObject
from ...model.archs import (
    DSV4_ARCHS,
    FLASH_ATTN_FORCED_OFF,
    INDEXER_KPOOL_ROW,
    LATENT_SWA_ARCHS,
    MSA_INDEXER_ARCHS,
    NO_CACHE_ARCHS,
    ROUTER_LAYER_ARCHS,
    SWA_PATTERN_DEFAULT,
    SWA_PATTERN_FROM_GGUF,
)
from ...model.spec import LayerKind, LayerSpec, ModelSpec
from ...quant import ggml
from ...units import round_up
from .settings import ERAS, LlamaCppSettings, build_number, flash_attn_mode, max_seq_limit, n_rs_seq

# Architectures with sliding-window or chunked caches (swa_type != NONE in src/models/<arch>.cpp).
SWA_ARCHS = frozenset(SWA_PATTERN_DEFAULT) | SWA_PATTERN_FROM_GGUF | {
    "llama4", "gemma3n", "gemma4", "exaone4", "olmo2", "mimo2", "step35", "afmoe", "cohere2moe", "granite_swa",
    "exaone-moe", "smallthinker",
    "lfm2"} | LATENT_SWA_ARCHS | DSV4_ARCHS  # lfm2.cpp: a GGUF window > 0 makes every attention layer slide
_WINDOWED = (LayerKind.SLIDING, LayerKind.CHUNKED)


@dataclass(frozen=True)
class Context:
    """The context parameters llama.cpp settles on (llama-context.cpp llama_context::llama_context)."""

    n_ctx: int
    n_ctx_seq: int
    n_seq_max: int
    kv_unified: bool
    n_ubatch: int
    n_batch: int
    flash_attn: bool
    type_k: ggml.GgmlType
    type_v: ggml.GgmlType
    build: int
    n_rs_seq: int = 0  # recurrent-state snapshots per sequence after the rollback clamp (settings.n_rs_seq)
    n_seq_extra: int = 0  # sequences beyond the slots, in n_seq_max (llama-server's reserved one, _sequences)
    # -fa auto turned off by llama_context's device check (compute.device_auto_fa_off): the KV cache was made for
    # flash attention (V not transposed), the graph runs without it
    fa_auto_off: bool = False
    # KQ_mask_swa beside KQ_mask over the one cache (pre_iswa_swa_mask), in llama.cpp's own graph only
    swa_mask_pair: bool = False

    @property
    def n_stream(self) -> int:
        return 1 if self.kv_unified else self.n_seq_max


@dataclass(frozen=True)
class Cache:
    """One KV cache llama.cpp creates (the base cache, or the SWA cache of an iSWA pair)."""

    name: str  # "", "non-SWA" or "SWA"
    cells: int
    layers: tuple[int, ...]
    k_bytes: int
    v_bytes: int
    k_bytes_by_layer: dict[int, int] = field(default_factory=dict)
    v_bytes_by_layer: dict[int, int] = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------------------
# Context parameters


def resolve_context(spec: ModelSpec, s: LlamaCppSettings) -> Context:
    build = build_number(s.engine_version)
    if s.n_ctx < 0:
        raise OomkitError(f"context size must be positive, got {s.n_ctx}")
    if s.n_batch <= 0 or s.n_ubatch <= 0:
        raise OomkitError("batch sizes -b and -ub must be positive")
    n_ctx = s.n_ctx or spec.n_ctx_train
    if n_ctx <= 0:
        raise OomkitError(f"{spec.name}: the model declares no trained context; give -c")
    n_seq, unified = _sequences(s, build)
    extra = server_extra_seq(s, build)
    n_seq += extra
    type_k = _cache_type(s.cache_type_k, "-ctk")
    type_v = _cache_type(s.cache_type_v, "-ctv")
    fa = _flash_attention(spec, s, type_k, type_v, build)
    # llama_context: n_batch raised to GGML_KQ_MASK_PAD (-b 8 runs a 32-token ubatch at b4394), then n_ubatch =
    # min(n_batch, n_ubatch)
    n_batch = max(s.n_batch, kq_mask_pad(build))
    n_ubatch = min(n_batch, s.n_ubatch)
    # llama_context::llama_context: n_ctx = GGML_PAD(n_ctx, 256); per-sequence size padded too when not unified
    if ERAS.reached(build, "pad_256_always"):
        pad = 256
    else:
        pad = 256 if fa else 32  # llama_kv_cache::get_padding before PR #17046
    n_ctx = round_up(n_ctx, pad)
    if unified:
        n_ctx_seq = n_ctx
    else:
        n_ctx_seq = round_up(n_ctx // n_seq, pad)
        if n_ctx_seq == 0:
            raise OomkitError("n_ctx_seq == 0: context too small for -np")
        n_ctx = n_ctx_seq * n_seq
    return Context(n_ctx=n_ctx, n_ctx_seq=n_ctx_seq, n_seq_max=n_seq, kv_unified=unified, n_ubatch=n_ubatch,
                   n_batch=n_batch, flash_attn=fa, type_k=type_k, type_v=type_v, build=build,
                   n_rs_seq=n_rs_seq(spec.architecture, s, build), n_seq_extra=extra,
                   swa_mask_pair=s.llama_graph_masks and pre_iswa_swa_mask(spec, build))


def kq_mask_pad(build: int) -> int:
    """GGML_KQ_MASK_PAD at a build, the least n_batch llama_context takes (src/llama-context.cpp llama_context::
    llama_context, b2771-b7349; settings.ERAS kq_mask_pad_*): 32, 64 from b4617, 1 from b7256 (and no rule from
    b7350, the same as 1); before b2771 no such rule."""
    if ERAS.reached(build, "kq_mask_pad_1") or not ERAS.reached(build, "kq_mask_pad_32"):
        return 1
    return 64 if ERAS.reached(build, "kq_mask_pad_64") else 32


def server_extra_seq(s: LlamaCppSettings, build: int) -> int:
    """The sequence llama-server reserves beyond its slots (ERAS server_extra_seq: server.cpp load_model's
    n_parallel + 1, for the system prompt). Its cache is one unified stream in those builds, so only the output
    rows and the recurrent-state cells (both n_seq_max) grow."""
    era = ERAS.reached(build, "server_extra_seq") and not ERAS.reached(build, "server_extra_seq_gone")
    return int(era and s.program == "llama-server" and s.server_extra_seq)


def _sequences(s: LlamaCppSettings, build: int) -> tuple[int, bool]:
    """(n_seq_max, unified KV) from -np and -kvu."""
    # tools/server/server.cpp: -np -1 (auto) becomes 4 slots with a unified KV cache (ERAS np_auto; before it
    # llama-server's default was one slot); llama-cli and the other programs default to 1
    if s.n_parallel < 0:
        auto = s.program == "llama-server" and ERAS.reached(build, "np_auto")
        n_seq, unified = (4, True) if auto else (1, s.kv_unified)
    elif s.n_parallel == 0:
        raise OomkitError("-np must be at least 1")
    else:
        n_seq, unified = s.n_parallel, s.kv_unified
    most = max_seq_limit(build)
    if most is not None and n_seq > most:  # llama_init_from_model refuses it
        raise OomkitError(f"-np {n_seq}: n_seq_max must be <= {most} (LLAMA_MAX_SEQ at b{build})")
    if not ERAS.reached(build, "kv_streams"):
        unified = True  # one stream for all sequences before PR #14363
    return n_seq, unified


def _flash_attention(spec: ModelSpec, s: LlamaCppSettings, type_k: ggml.GgmlType, type_v: ggml.GgmlType,
                     build: int) -> bool:
    """-fa, and the cache types it allows."""
    # llama-context.cpp llama_init_from_model: a quantized V cache needs flash attention; "auto" turns it on.
    fa_mode = flash_attn_mode(s, build)  # "auto" is off before ERAS fa_auto
    if fa_mode not in ("on", "off", "auto", "1", "0", "true", "false", "enabled", "disabled"):
        raise OomkitError(f"-fa takes on, off or auto, not {s.flash_attn!r}")
    fa = fa_mode not in ("off", "0", "false", "disabled") and spec.architecture not in FLASH_ATTN_FORCED_OFF
    if type_v.quantized and not fa:
        raise OomkitError("quantized V cache requires flash_attn to be enabled (llama.cpp refuses -ctv "
                          f"{type_v.name} with -fa off)")
    # the latent cache (ERAS mla_latent) holds one tensor for K and V; before it the decompressed per-head K and V
    # were two caches of their own types (issue #12728: -ctk q8_0 with an f16 V on DeepSeek-V2.5, April 2025)
    # DeepSeek-V4's K-only caches are refused the same way (measured: -ctk q4_0 with an f16 V)
    if any((layer.kind is LayerKind.LATENT and layer.attention and layer.attention.latent_cache)
           or (layer.attention and layer.attention.k_only)
           for layer in spec.layers) and type_k.name != type_v.name and ERAS.reached(build, "mla_latent"):
        raise OomkitError(f"model does not support different K ({type_k.name}) and V ({type_v.name}) cache types "
                          "(llama.cpp: MLA models)")
    if fa:
        _check_block_divides(spec, type_k, "K", cache_head_k)
        _check_block_divides(spec, type_v, "V", cache_head_v)
    return fa


def _cache_type(name: str, flag: str) -> ggml.GgmlType:
    t = ggml.type_by_name(name)
    if t.name not in ggml.KV_CACHE_TYPES:
        raise OomkitError(f"{flag} {name}: llama.cpp accepts {', '.join(sorted(ggml.KV_CACHE_TYPES))}")
    return t


def _check_block_divides(spec: ModelSpec, t: ggml.GgmlType, which: str, head) -> None:
    if t.block_size == 1:
        return
    for layer in spec.trunk_layers:
        a = layer.attention
        if a is not None and head(a) % t.block_size:
            raise OomkitError(f"{which} cache type {t.name} with block size {t.block_size} does not divide "
                              f"n_embd_head_{which.lower()}={head(a)}")


# ---------------------------------------------------------------------------------------------------------
# KV cache


def cache_head_k(a) -> int:
    """n_embd_head_k as llama.cpp holds it: the MLA latent row when the GGUF is MLA-converted."""
    if a.kv_lora_rank and a.latent_cache:
        return a.kv_lora_rank + a.qk_rope_head_dim
    return a.head_dim_k


def cache_head_v(a) -> int:
    """n_embd_head_v: the latent width for an MLA-converted GGUF."""
    if a.kv_lora_rank and a.latent_cache:
        return a.kv_lora_rank
    return a.head_dim_v


def cache_kv_heads(a) -> int:
    """n_head_kv: one shared latent "head" for an MLA-converted GGUF."""
    return 1 if a.kv_lora_rank and a.latent_cache else a.n_kv_heads


def k_row(layer: LayerSpec) -> int:
    """n_embd_k_gqa(il) in elements."""
    a = layer.attention
    return 0 if a is None else cache_head_k(a) * cache_kv_heads(a)


def v_row(layer: LayerSpec) -> int:
    a = layer.attention
    return 0 if a is None else cache_head_v(a) * cache_kv_heads(a)


def swa_honoured(spec: ModelSpec, build: int) -> bool:
    """llama.cpp gives windowed layers their own small cache only for architectures whose loader sets a
    swa_type (src/models/*.cpp load_arch_hparams); others, e.g. Mistral v0.1 ("llama"), Qwen2 and Phi-3
    (SWA disabled in phi3.cpp), cache every layer in full."""
    if spec.architecture == "phi3":
        # phi3 had a sliding-window cache from PR #13194 until PR #13676 ("model : disable SWA for Phi models")
        return ERAS.reached(build, "iswa") and not ERAS.reached(build, "phi3_swa_off")
    return ERAS.reached(build, "iswa") and spec.architecture in SWA_ARCHS


def pre_iswa_swa_mask(spec: ModelSpec, build: int) -> bool:
    """Whether the graph makes a second KQ mask, KQ_mask_swa, beside KQ_mask for the one cache of a model with
    sliding and full layers, before the iSWA caches gave each its own cache and mask (ERAS gemma2_swa_mask,
    swa_mask_pattern, iswa): llama.cpp build_gemma2 (b3274-b4880), then src/llama-graph.cpp
    build_attn_inp_kv_unified for any hparams.n_swa_pattern > 1 (b4881-b5428). Both masks n_kv x n_tokens F32
    graph inputs, cast to F16 for flash attention."""
    if ERAS.reached(build, "iswa"):
        return False
    kinds = {layer.kind for layer in attention_layers(spec)}
    if LayerKind.FULL not in kinds or not kinds & {LayerKind.SLIDING, LayerKind.CHUNKED}:
        return False  # hparams.n_swa_pattern > 1: windowed (Gemma 2 / 3, Cohere 2) or chunked (Llama 4) and full
    return ERAS.reached(build, "swa_mask_pattern") or (spec.architecture == "gemma2"
                                                       and ERAS.reached(build, "gemma2_swa_mask"))


def attention_layers(spec: ModelSpec) -> list[LayerSpec]:
    """Layers that own a KV cache in the main context: not recurrent, not cache-less, not next-n/MTP layers
    (llama_model::create_memory filters il < n_layer() when n_layer_nextn > 0), not layers that read an earlier
    layer's cache (Gemma 3n's shared-KV layers: llama_kv_cache skips il >= n_layer_kv_from_start)."""
    return [layer for layer in spec.trunk_layers
            if layer.attention is not None and layer.kind is not LayerKind.NONE and layer.kv_source is None]


def cached_layers(spec: ModelSpec, build: int) -> list[LayerSpec]:
    """The layers a context gives a KV cache: attention_layers, and before PR #13108 ("context : allow
    cache-less context for embeddings", merged May 2025) an encoder's too: llama_context built its KV cache for
    every model, BERT-like embedding models included (PR #12825: "We still allocate the KV cache for embeddings
    models, even though it is not used by the computation graph")."""
    layers = attention_layers(spec)
    if spec.architecture in NO_CACHE_ARCHS and not ERAS.reached(build, "encoder_no_kv"):
        layers = [layer for layer in spec.trunk_layers if layer.attention is not None]
    if spec.architecture in ROUTER_LAYER_ARCHS and layers:
        layers = layers + [router_layer(spec)]
    return layers


def router_layer(spec: ModelSpec) -> LayerSpec:
    """Granite Switch's adapter router (src/models/granite-switch.cpp load_arch_hparams): one more attention layer
    past the GGUF's blocks (index n_layer, n_head = n_head_kv = 1, the model's head dims) that the KV cache holds
    beside the others; the file has no tensors for it."""
    last = next(layer for layer in reversed(spec.trunk_layers) if layer.attention is not None)
    a = replace(last.attention, n_heads=1, n_kv_heads=1, window=None)
    return LayerSpec(index=len(spec.layers), kind=LayerKind.FULL, attention=a)


# the last caches built, by the spec object (kept, so that its id is not reused), the context and swa_full: a fit's
# dry runs move layers at one context; each call gets its own list
_CACHES = ByObject[tuple[Cache, ...]](256)


def kv_caches(spec: ModelSpec, ctx: Context, swa_full: bool) -> list[Cache]:
    """_kv_caches, memoised."""
    return list(_CACHES.get(spec, (ctx, swa_full), lambda: tuple(_kv_caches(spec, ctx, swa_full))))


def _kv_caches(spec: ModelSpec, ctx: Context, swa_full: bool) -> list[Cache]:
    """llama_kv_cache / llama_kv_cache_iswa constructors (src/llama-kv-cache.cpp, llama-kv-cache-iswa.cpp)."""
    layers = cached_layers(spec, ctx.build)
    if not layers:
        return []
    # [TAG_V_CACHE_VARIABLE]: without flash attention V is stored transposed, each row padded to the widest
    # layer's n_embd_v_gqa (max over all layers of the model, llama_hparams::n_embd_v_gqa_max).
    v_max = max(v_row(layer) for layer in spec.layers)
    if spec.architecture in DSV4_ARCHS:
        # measured: the next-n (MTP) block's weights go unused in this build, yet its K row sits in the SWA cache
        # (a 4-layer trunk + 1 MTP block prints 5 SWA layers)
        mtp = [la for la in spec.layers[spec.n_trunk_layers:] if la.attention is not None]
        return _dsv4_caches(layers, ctx, swa_full, mtp)
    size_base = ctx.n_ctx if ctx.kv_unified else ctx.n_ctx_seq
    windowed = [layer for layer in layers if layer.kind in _WINDOWED]
    if not windowed or not swa_honoured(spec, ctx.build):
        return [_build_cache("", layers, size_base, ctx, v_max)] + _indexer_caches(
            layers, size_base, ctx, spec.architecture in MSA_INDEXER_ARCHS, INDEXER_KPOOL_ROW.get(spec.architecture, 1))
    full = [layer for layer in layers if layer.kind not in _WINDOWED]
    n_swa = max(layer.attention.window or 0 for layer in windowed)
    if swa_full:
        size_swa = size_base
    elif ERAS.reached(ctx.build, "pad_256_always"):
        # llama_kv_cache_iswa: GGML_PAD(min(size_base, n_swa*(unified ? n_seq_max : 1) + n_ubatch), 256)
        size_swa = round_up(min(size_base, n_swa * (ctx.n_seq_max if ctx.kv_unified else 1) + ctx.n_ubatch), 256)
    else:
        pad = 256 if ctx.flash_attn else 32
        # b5429-b5553 (ERAS swa_cells_ubatch): + n_batch, the logical batch, where later builds add n_ubatch
        batch = ctx.n_ubatch if ERAS.reached(ctx.build, "swa_cells_ubatch") else ctx.n_batch
        size_swa = min(size_base, round_up(n_swa * (ctx.n_seq_max if ctx.kv_unified else 1) + batch, pad))
    caches = []
    if full:
        caches.append(_build_cache("non-SWA", full, size_base, ctx, v_max))
        # llama_kv_cache_dsa_iswa (dots3note): the full layers' DSA indexer cache follows the main one
        caches += _indexer_caches(full, size_base, ctx)
    caches.append(_build_cache("SWA", windowed, size_swa, ctx, v_max))
    return caches


def _dsv4_caches(layers: list[LayerSpec], ctx: Context, swa_full: bool, mtp: list[LayerSpec]) -> list[Cache]:
    """llama_kv_cache_dsv4 (src/models/deepseek4.cpp; measured on llama.cpp@0c1e57098): one stream per sequence
    whatever -kvu says, each of n_ctx_seq cells; a raw iSWA pair whose non-SWA cache holds no layer and whose SWA
    cache holds every layer's K row (GGML_PAD(min(n_ctx_seq, n_swa + n_ubatch), 256) cells), then the CSA cache
    (ratio-4 layers), the HCA cache (ratio-128 layers), each of GGML_PAD(n_ctx_seq / ratio, 256) cells, and the
    lightning indexer's key per CSA cell. Then the compressors' f32 state ("llama_dsv4_comp_state: csa / hca / lid
    ... state = rows x width"), a kv and a score tensor of coff x ratio rows of coff x width per layer and stream
    (coff 2 for ratio 4, whose windows overlap, 1 for 128), 1 + n_rs_seq row sets per stream ("rs_seq = N": the
    draft's rollback snapshots, measured at 0 / 3 / 16), named "... state" so that they count in the context
    memory beside the caches."""
    c = replace(ctx, kv_unified=False)
    base = ctx.n_ctx_seq
    n_swa = max(la.attention.window or 0 for la in layers)
    size_swa = base if swa_full else round_up(min(base, n_swa + ctx.n_ubatch), 256)
    caches = [Cache("non-SWA", base, (), 0, 0), _build_cache("SWA", layers + mtp, size_swa, c, 0)]
    for ratio in (4, 128):
        members = [la for la in layers if la.attention.compress_ratio == ratio]
        if members:
            caches.append(_build_cache(f"ratio {ratio}", members, round_up(-(-base // ratio), 256), c, 0))
    csa = [la for la in layers if la.attention.compress_ratio == 4]
    caches += _indexer_caches(csa, round_up(-(-base // 4), 256), c)
    f32 = ggml.type_by_name("f32")
    for name, ratio, width in (("csa state", 4, None), ("hca state", 128, None), ("lid state", 4, "index")):
        members = [la for la in layers if la.attention.compress_ratio == ratio]
        if not members:
            continue
        coff = 2 if ratio == 4 else 1
        per = {la.index: ggml.row_bytes(f32, coff * (la.attention.index_head_dim if width else la.attention.head_dim_k))
               * coff * ratio * ctx.n_seq_max * (1 + ctx.n_rs_seq) for la in members}
        caches.append(Cache(name, coff * ratio, tuple(sorted(per)), sum(per.values()), sum(per.values()), per, per))
    return caches


def _indexer_caches(layers: list[LayerSpec], cells: int, ctx: Context, with_v: bool = False,
                    row_mult: int = 1) -> list[Cache]:
    """llama_kv_cache_dsa's indexer cache (src/llama-kv-cache-dsa.cpp, "creating indexer KV cache"): one key of
    index_head_dim per cell and layer in -ctk's type, no V, as many cells and streams as the main cache.
    llama_kv_cache_msa's (MiniMax-M3) also holds one head's value per cell and layer in -ctv's type; a k-pool
    indexer's (llama_memory_hybrid_idx) row is row_mult keys wide (archs.INDEXER_KPOOL_ROW)."""
    # llama_model::create_memory, LLM_ARCH_GLM_DSA: filter_lid = hparams.is_indexer_full(il): GLM-5.2's shared-indexer
    # layers hold no indexer key
    members = [layer for layer in layers if layer.attention is not None and layer.attention.index_head_dim
               and not layer.attention.indexer_shared]
    if not members:
        return []
    rows = cells * ctx.n_stream
    kb = {la.index: ggml.row_bytes(ctx.type_k, la.attention.index_head_dim * row_mult) * rows for la in members}
    vb = {la.index: ggml.row_bytes(ctx.type_v, la.attention.head_dim_v) * rows if with_v else 0 for la in members}
    return [Cache("indexer", cells, tuple(sorted(kb)), sum(kb.values()), sum(vb.values()), kb, vb)]


def _build_cache(name: str, members: list[LayerSpec], cells: int, ctx: Context, v_max: int) -> Cache:
    """One llama_kv_cache: K and V tensors per layer, cells x n_stream rows each."""
    mla_k_only = ERAS.reached(ctx.build, "mla_k_only")
    kb, vb = {}, {}
    for layer in members:
        a = layer.attention
        latent = bool(a.kv_lora_rank and a.latent_cache)
        if latent and not ERAS.reached(ctx.build, "mla_latent"):
            k_el, v_el = a.n_heads * a.head_dim_k, a.n_heads * a.head_dim_v  # decompressed, pre-#12801
        else:
            k_el = k_row(layer)
            v_el = v_row(layer) if ctx.flash_attn else v_max
        kb[layer.index] = ggml.row_bytes(ctx.type_k, k_el) * cells * ctx.n_stream
        # PR #19067: an MLA cache keeps only K ("V-less"); V reads the latent out of K
        has_v = not (latent and mla_k_only and ERAS.reached(ctx.build, "mla_latent")) and not a.k_only
        vb[layer.index] = ggml.row_bytes(ctx.type_v, v_el) * cells * ctx.n_stream if has_v else 0
    return Cache(name, cells, tuple(sorted(kb)), sum(kb.values()), sum(vb.values()), kb, vb)


def kv_bytes_per_token(spec: ModelSpec, ctx: Context) -> int:
    """Marginal KV bytes of one more context token, one sequence: the layers whose cache grows with n_ctx."""
    return sum(ggml.row_bytes(ctx.type_k, k_row(layer))
               # the DSA / MSA indexer key (0: none), k-pool rows wider
               + (0 if layer.attention.indexer_shared else
                  ggml.row_bytes(ctx.type_k, layer.attention.index_head_dim * INDEXER_KPOOL_ROW.get(spec.architecture, 1)))
               + (ggml.row_bytes(ctx.type_v, layer.attention.head_dim_v)  # MSA's indexer value
                  if layer.attention.index_head_dim and spec.architecture in MSA_INDEXER_ARCHS else 0)
               + (0 if layer.kind is LayerKind.LATENT and ERAS.reached(ctx.build, "mla_k_only")
                  else ggml.row_bytes(ctx.type_v, v_row(layer)))
               for layer in cached_layers(spec, ctx.build)
               if layer.kind not in _WINDOWED or not swa_honoured(spec, ctx.build)) + _dsv4_bytes_per_token(spec, ctx)


def _dsv4_bytes_per_token(spec: ModelSpec, ctx: Context) -> int:
    """DeepSeek-V4's compressed caches grow by one K row per `ratio` tokens (and the indexer's key per 4), rounded
    down to whole bytes per token (_dsv4_caches)."""
    if spec.architecture not in DSV4_ARCHS:
        return 0
    return sum((ggml.row_bytes(ctx.type_k, k_row(la)) + ggml.row_bytes(ctx.type_k, la.attention.index_head_dim))
               // la.attention.compress_ratio
               for la in spec.trunk_layers if la.attention is not None and la.attention.compress_ratio)


# ---------------------------------------------------------------------------------------------------------
# Recurrent state


def recurrent_rows(ctx: Context, s: LlamaCppSettings) -> int:
    # llama_memory_recurrent: mem_size = max(1, n_seq_max) cells, (1 + n_rs_seq) rows each ("R (f32)" and "S (f32)"
    # grow by the same factor); n_rs_seq is the context's, 0 on an architecture that cannot roll back
    return max(1, ctx.n_seq_max) * (1 + ctx.n_rs_seq)


def recurrent_bytes_by_layer(spec: ModelSpec, ctx: Context, s: LlamaCppSettings) -> dict[int, tuple[int, int]]:
    """(R, S) bytes per layer that holds recurrent state; both F32 (llama_model::create_memory)."""
    rows = recurrent_rows(ctx, s)
    f32 = ggml.type_by_name("f32")
    out = {}
    for layer in spec.trunk_layers:
        st = layer.recurrent
        if st is None:
            continue
        if layer.kind is LayerKind.RECURRENT or layer.parallel_recurrent:
            out[layer.index] = (ggml.row_bytes(f32, st.conv) * rows, ggml.row_bytes(f32, st.ssm) * rows)
    return out
