"""Hugging Face transformers (`model.generate(...)` on one GPU or with `device_map="auto"`): what it allocates.

Each rule mirrors transformers' source, read in the released wheels 4.55.4, 4.57.6, 5.0.0, 5.10.0, 5.14.0, 5.15.0,
5.16.0, 5.17.0, 5.18.0 and 5.24.0 (the newest), cited as `file:function`; behaviour that changed between releases
follows `engine_version` (default the newest), see ERAS. transformers has no command line of its own: its options
are given as `oomkit estimate MODEL --engine transformers --ctx 8192 --cache-implementation static ...`.

What is exact, and checked against transformers itself on the CPU (tests/test_transformers_engine.py builds tiny
random-weight models with real layer shapes and sums the bytes of the cache tensors after a real `generate`):
the cache of every layer kind: DynamicCache (full, sliding and chunked layers), StaticCache, the fp8
QuantizedCache, MLA latents, linear-attention / Mamba conv and recurrent states, and the storage a sliding
DynamicCache layer really holds (a view on the last `torch.cat`).

What is modelled and labelled: the prefill activation and logits peak, the CUDA context, PyTorch's
reserved-vs-allocated rounding, the quanto/HQQ cache layouts, offloaded caches and `device_map="auto"` placement.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from ..errors import OomkitError
from ..flags import flag_value
from ..memory import Device, LayerUse, MemoryEstimate, Usage
from ..model.spec import LayerKind, LayerSpec, ModelSpec, TensorSpec
from ..units import GiB, MiB
from .base import EngineModule

NEWEST = "5.24.0"

# Release boundaries (the first release with the new rule), placed by reading the wheels listed above.
ERAS = {
    # generation/utils.py GenerationMixin.generate: model_kwargs["logits_to_keep"] = 1 ("num_logits_to_keep" when
    # added by PR #31292, released in 4.45.0); before it the models computed the logits of every prompt token and
    # upcast them (`logits = logits.float()`, transformers #30860)
    "logits_to_keep": (4, 45, 0),
    # cache_utils.py: DynamicSlidingWindowLayer, and StaticCache taking each layer's type from the config
    # (not in 4.55.4, present in 4.57.6; the cache refactor released in 4.56.0). Before: DynamicCache keeps every
    # token on sliding layers; StaticCache is full everywhere ("hybrid"/"sliding_window" caches window them)
    "sliding_layers": (4, 56, 0),
    # modeling_utils.py PreTrainedModel.from_pretrained: `dtype` defaults to "auto" (the checkpoint's dtype);
    # before v5 it defaulted to torch's default dtype, float32
    "auto_dtype": (5, 0, 0),
    # models/deepseek_v3/modeling_deepseek_v3.py DeepseekV3Attention.forward: the cache holds the compressed
    # latents (cache.update(kv_nope, k_rot)), PR #47761; 5.14.0 still caches per-head K and V
    "mla_latent": (5, 15, 0),
}

# generation/configuration_utils.py STATIC_CACHE_IMPLEMENTATIONS, DEPRECATED_STATIC_CACHE_IMPLEMENTATIONS,
# DYNAMIC_CACHE_IMPLEMENTATIONS
STATIC_IMPLEMENTATIONS = ("static", "offloaded_static")
DEPRECATED_STATIC = ("sliding_window", "hybrid", "hybrid_chunked", "offloaded_hybrid", "offloaded_hybrid_chunked")
DYNAMIC_IMPLEMENTATIONS = ("dynamic", "offloaded", "quantized")
CACHE_IMPLEMENTATIONS = STATIC_IMPLEMENTATIONS + DEPRECATED_STATIC + DYNAMIC_IMPLEMENTATIONS
QUANT_BACKENDS = ("quanto", "hqq", "fp8")

DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2}
_DTYPE_ALIASES = {"fp32": "float32", "float": "float32", "f32": "float32", "fp16": "float16", "half": "float16",
                  "f16": "float16", "bf16": "bfloat16", "torch.float32": "float32", "torch.float16": "float16",
                  "torch.bfloat16": "bfloat16"}

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

# The engine-neutral CLI options -> these fields (commands/_model_args.py reads a module's NEUTRAL).
NEUTRAL = {"ctx": "max_length", "parallel": "batch_size", "kv_type": "kv_cache_dtype",
           "engine_version": "engine_version"}


def parse_version(version: str | None) -> tuple[int, int, int]:
    if not version or version in ("newest", "latest"):
        version = NEWEST
    m = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.(\d+))?(?:[.+-].*)?", str(version).strip())
    if not m:
        raise OomkitError(f"cannot read transformers version {version!r}: expected a release such as 4.57.6")
    v = int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)
    if v < (4, 36, 0):
        raise OomkitError(f"transformers {version} predates the Cache classes (4.36); oomkit models 4.36 and later")
    return v


@dataclass(frozen=True)
class TransformersSettings:
    """`from_pretrained` and `generate` arguments by their own names (GenerationConfig defaults).

    prompt_tokens is oomkit's: the length of `input_ids` (transformers takes the tensor, not a number).
    kv_cache_dtype is oomkit's shorthand for the engine-neutral --kv-type: "auto" (the model dtype), "fp8"
    (cache_implementation="quantized", backend fp8), "int4"/"int2" (quantized, backend quanto with that nbits).
    """

    max_length: int | None = None  # prompt + max_new_tokens (GenerationConfig.max_length); None: the trained context
    max_new_tokens: int = 20  # GenerationConfig: max_length=20 -> 20 new tokens when nothing is set
    prompt_tokens: int | None = None  # None: max_length - max_new_tokens
    batch_size: int = 1  # input_ids.shape[0]
    num_beams: int = 1
    num_return_sequences: int = 1
    torch_dtype: str | None = None  # from_pretrained(dtype=...); None: "auto" from 5.0, float32 before
    cache_implementation: str = "dynamic"  # GenerationConfig.cache_implementation (None = dynamic)
    max_cache_len: int | None = None  # GenerationConfig.max_cache_len (static caches)
    cache_backend: str = "quanto"  # cache_config["backend"] for cache_implementation="quantized"
    cache_nbits: int | None = None  # cache_config["nbits"]: quanto 2/4, hqq 1/2/3/4/8 (QuantizedLayer default 4)
    q_group_size: int = 64  # cache_config["q_group_size"] (QuantizedLayer default)
    residual_length: int = 128  # cache_config["residual_length"] (QuantizedLayer default)
    kv_cache_dtype: str = "auto"
    logits_to_keep: int | None = None  # None: generate's 1 (from 4.45); 0 = the logits of every prompt token
    attn_implementation: str = "sdpa"  # "eager" materialises B x H x T x T scores
    prefill_chunk_size: int | None = None  # GenerationConfig.prefill_chunk_size
    device_map: str | None = None  # None: model.to("cuda"); "auto" | "balanced" | "sequential" | "cpu" | "cuda:N"
    max_memory: tuple[tuple[str, int], ...] = ()  # from_pretrained(max_memory={0: "20GiB", "cpu": "64GiB"})
    load_in_4bit: bool = False  # BitsAndBytesConfig(load_in_4bit=True)
    load_in_8bit: bool = False
    bnb_4bit_quant_type: str = "fp4"  # BitsAndBytesConfig default
    bnb_4bit_use_double_quant: bool = False
    expandable_segments: bool = False  # PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
    engine_version: str = NEWEST

    def to_dict(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        d["max_memory"] = {k: v for k, v in self.max_memory}
        return d


# ---------------------------------------------------------------------------------------------------------
# What transformers settles on


@dataclass(frozen=True)
class Resolved:
    version: tuple[int, int, int]
    dtype: str
    dtype_bytes: int
    prompt: int  # P: input_ids.shape[1]
    new: int  # max_new_tokens
    max_length: int  # P + new
    batch: int  # the cache batch: batch_size x max(num_beams, num_return_sequences)
    impl: str  # cache_implementation
    backend: str | None  # quantized cache backend
    nbits: int
    static: bool
    offload: bool
    max_cache_len: int  # StaticCache length (prompt + new - 1, or GenerationConfig.max_cache_len)
    keep: int  # logits rows kept in prefill
    group_size: int = 64  # quantized cache q_group_size
    residual_length: int = 128  # quantized cache residual_length
    labels: tuple[str, ...] = ()

    @property
    def end_tokens(self) -> int:
        """Tokens in the cache when generate returns: the last generated token is never fed back
        (generation/utils.py: max_cache_length = generation_config.max_length - 1)."""
        return self.prompt + self.new - 1


def _dtype_name(name: str) -> str:
    key = str(name).strip().lower()
    key = _DTYPE_ALIASES.get(key, key)
    if key not in DTYPE_BYTES:
        raise OomkitError(f"dtype {name!r}: transformers loads float32, float16 or bfloat16 (or 'auto')")
    return key


def is_gguf(spec: ModelSpec) -> bool:
    from ..model.weights import is_gguf_format

    return is_gguf_format(spec.weights.format)


def checkpoint_dtype(spec: ModelSpec) -> str:
    """The dtype the checkpoint's unquantized tensors carry (config torch_dtype); bfloat16 when unsure.
    A GGUF is dequantized to float32 on load (transformers docs, "GGUF": "The GGUF checkpoint is dequantized to
    fp32"; modeling_gguf_pytorch_utils.py converts to `dtype` right after dequantizing when one is given)."""
    if is_gguf(spec):
        return "float32"
    fmt = spec.weights.format.lower()
    fmt = _DTYPE_ALIASES.get(fmt, fmt)
    if fmt in DTYPE_BYTES:
        return fmt
    for t in spec.weights.tensors:  # a quantized checkpoint keeps its norms in the config's dtype
        d = _DTYPE_ALIASES.get(t.dtype.lower(), t.dtype.lower())
        if t.name.endswith("norm.weight") and d in DTYPE_BYTES:
            return d
    return "bfloat16"


def resolve(spec: ModelSpec, s: TransformersSettings) -> Resolved:
    v = parse_version(s.engine_version)
    labels: list[str] = []
    # dtype: modeling_utils.py from_pretrained (dtype "auto" from 5.0; torch's default float32 before)
    want = s.torch_dtype
    if want is None:
        want = "auto" if v >= ERAS["auto_dtype"] else "float32"
    dtype = checkpoint_dtype(spec) if str(want).lower() == "auto" else _dtype_name(want)
    # lengths: generation/utils.py _prepare_generated_length (max_length = max_new_tokens + input length)
    if s.max_new_tokens < 1:
        raise OomkitError("max_new_tokens must be at least 1")
    if s.batch_size < 1 or s.num_beams < 1 or s.num_return_sequences < 1:
        raise OomkitError("batch_size, num_beams and num_return_sequences must be at least 1")
    if s.prompt_tokens is not None:
        if s.prompt_tokens < 1:
            raise OomkitError("prompt_tokens must be at least 1")
        prompt = s.prompt_tokens
        new = s.max_length - prompt if s.max_length is not None else s.max_new_tokens
        if new < 1:
            raise OomkitError(f"max_length {s.max_length} leaves no room for new tokens after a prompt of {prompt}")
    else:
        total = s.max_length or spec.n_ctx_train
        if not total:
            raise OomkitError(f"{spec.name}: the model declares no trained context; give --ctx (prompt + new tokens)")
        if s.max_length is None:
            labels.append(f"no --ctx given: prompt + new tokens = the trained context ({total})")
        new = s.max_new_tokens
        prompt = total - new
        if prompt < 1:
            raise OomkitError(f"max_length {total} must exceed max_new_tokens {new} (the prompt needs a token)")
    impl = (s.cache_implementation or "dynamic").lower()
    backend = None
    nbits = s.cache_nbits or 4
    kvd = (s.kv_cache_dtype or "auto").lower()
    if kvd not in ("auto", "fp8", "int4", "int2", "bf16", "bfloat16", "fp16", "float16", "f16"):
        raise OomkitError(f"--kv-type {s.kv_cache_dtype}: transformers caches in the model dtype, or quantized "
                          "(fp8, int4, int2)")
    if kvd in ("fp8", "int4", "int2"):
        if impl not in ("dynamic", "quantized"):
            raise OomkitError(f"--kv-type {kvd} needs cache_implementation='quantized', not {impl!r}")
        impl = "quantized"
        backend = "fp8" if kvd == "fp8" else "quanto"
        nbits = 8 if kvd == "fp8" else int(kvd[3:])
    if impl not in CACHE_IMPLEMENTATIONS:
        raise OomkitError(f"Invalid `cache_implementation` ({s.cache_implementation}). Choose one of: "
                          f"{', '.join(CACHE_IMPLEMENTATIONS)}")
    if impl == "quantized":
        backend = backend or s.cache_backend.lower()
        if backend not in QUANT_BACKENDS:
            raise OomkitError(f"Unknown quantization backend `{backend}` (quanto, hqq or fp8)")
        # cache_utils.py QuantoQuantizedLayer / HQQQuantizedLayer __init__
        if backend == "quanto" and nbits not in (2, 4):
            raise OomkitError(f"`nbits` for `quanto` backend has to be one of [`2`, `4`] but got {nbits}")
        if backend == "hqq" and nbits not in (1, 2, 3, 4, 8):
            raise OomkitError(f"`nbits` for `HQQ` backend has to be one of [`1`, `2`, `3`, `4`, `8`] but got {nbits}")
    static = impl in STATIC_IMPLEMENTATIONS + DEPRECATED_STATIC
    max_cache_len = prompt + new - 1
    if static and s.max_cache_len:
        # generation/utils.py _prepare_cache_for_generation: max(max_cache_length, generation_config.max_cache_len)
        max_cache_len = max(max_cache_len, s.max_cache_len)
    batch = s.batch_size * max(s.num_beams, s.num_return_sequences)
    if s.logits_to_keep is not None and s.logits_to_keep < 0:
        raise OomkitError("logits_to_keep must be 0 (all) or positive")
    if v < ERAS["logits_to_keep"]:
        keep = prompt
    elif s.logits_to_keep is None:
        keep = 1
    else:
        keep = prompt if s.logits_to_keep == 0 else min(s.logits_to_keep, prompt)
    if s.prefill_chunk_size is not None and s.prefill_chunk_size < 1:
        raise OomkitError("prefill_chunk_size must be positive")
    if s.load_in_4bit and s.load_in_8bit:
        raise OomkitError("You can't pass `load_in_4bit`and `load_in_8bit` as True at the same time")
    return Resolved(version=v, dtype=dtype, dtype_bytes=DTYPE_BYTES[dtype], prompt=prompt, new=new,
                    max_length=prompt + new, batch=batch, impl=impl, backend=backend, nbits=nbits, static=static,
                    offload=impl.startswith("offloaded"), max_cache_len=max_cache_len, keep=keep,
                    group_size=s.q_group_size, residual_length=s.residual_length, labels=tuple(labels))


# ---------------------------------------------------------------------------------------------------------
# The cache, per layer


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


def _kv_per_token(layer: LayerSpec, r: Resolved) -> tuple[int, int]:
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
    conv_dim = st.d_inner + 2 * st.n_group * st.d_state
    if st.conv_override is not None or st.ssm_override is not None:
        raise OomkitError(f"{st.kind} recurrent state: transformers' layout for this kind is not modelled")
    return r.batch * conv_dim * st.d_conv * r.dtype_bytes, r.batch * st.ssm * 4


def _trunk(spec: ModelSpec) -> list[LayerSpec]:
    """Layers transformers runs: MTP / next-n blocks are not loaded (e.g. DeepseekV3ForCausalLM
    _keys_to_ignore_on_load_unexpected drops model.layers.61)."""
    return list(spec.layers[: spec.n_layers - spec.n_nextn_layers])


def _windowed(layer: LayerSpec, r: Resolved) -> bool:
    if layer.kind not in (LayerKind.SLIDING, LayerKind.CHUNKED) or not layer.attention or not layer.attention.window:
        return False
    if r.version >= ERAS["sliding_layers"]:
        return True
    return r.impl in DEPRECATED_STATIC  # 4.55: only HybridCache / SlidingWindowCache window their layers


def layer_caches(spec: ModelSpec, r: Resolved) -> list[LayerCache]:
    """One LayerCache per layer, following the Cache class generate builds
    (generation/utils.py _prepare_cache_for_generation; cache_utils.py get_layer_types_and_kwargs)."""
    layers = _trunk(spec)
    out: list[LayerCache] = []
    if r.impl == "quantized":
        bad = {layer.kind.value for layer in layers if layer.kind not in (LayerKind.FULL, LayerKind.LATENT)}
        if bad:
            # cache_utils.py QuantizedCache.__init__
            raise OomkitError("`QuantizedCache` is only supported for models with only full attention layers. "
                              f"We found the following invalid layer types: {sorted(bad)}")
    P, N, B = r.prompt, r.end_tokens, r.batch
    for layer in layers:
        kind = layer.kind.value
        if layer.kind is LayerKind.NONE or layer.kv_source is not None:
            out.append(LayerCache(layer.index, "none", "DummyLayer"))
            continue
        conv, ssm = _recurrent_bytes(layer, r) if (layer.recurrent is not None and (
            layer.kind is LayerKind.RECURRENT or layer.parallel_recurrent)) else (0, 0)
        if layer.attention is None:  # a pure linear-attention / Mamba layer
            out.append(LayerCache(layer.index, "recurrent", "LinearAttentionLayer", nbytes_end=conv + ssm,
                                  storage_prefill=conv + ssm, storage_end=conv + ssm, conv_bytes=conv, ssm_bytes=ssm))
            continue
        kpt, vpt = _kv_per_token(layer, r)
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
            data = -(-n // 10) * 4  # hqq BitPack.pack_3bit_32: 10 values per int32
        else:
            data = -(-n * r.nbits // 8)
        groups = -(-B * tokens * el_k // r.group_size) + -(-B * tokens * el_v // r.group_size)
        return data + groups * 2 * dt

    q_end = packed(N - resid) + B * resid * (kpt + vpt)
    cls = "QuantoQuantizedLayer" if r.backend == "quanto" else "HQQQuantizedLayer"
    return LayerCache(layer.index, kind, cls, kpt, vpt, tokens_end=N, nbytes_end=q_end, storage_prefill=packed(P),
                      storage_end=q_end)


# ---------------------------------------------------------------------------------------------------------
# Weights


_NOT_LINEAR = ("norm.weight", "ffn_gate_inp.weight", "ssm_conv1d.weight", "ssm_a", "ssm_d", "ssm_dt.bias",
               "attn_sinks", "exp_probs_b")


def _bnb_format(s: TransformersSettings, dtype: str):
    from ..quant import hf_formats

    cfg = {"quant_method": "bitsandbytes", "load_in_4bit": s.load_in_4bit, "load_in_8bit": s.load_in_8bit,
           "bnb_4bit_quant_type": s.bnb_4bit_quant_type, "bnb_4bit_use_double_quant": s.bnb_4bit_use_double_quant}
    return hf_formats.parse_quantization_config(cfg, dtype)


def tensor_bytes(spec: ModelSpec, s: TransformersSettings, r: Resolved) -> list[tuple[TensorSpec, int]]:
    """Bytes each weight takes once loaded.

    Plain checkpoints: every tensor in the resolved dtype (modeling_utils.py from_pretrained casts to `dtype`).
    Quantized checkpoints: quantized tensors as stored, the rest in the resolved dtype (needs the format's kernels;
    transformers dequantizes some formats when they are missing). load_in_4bit / load_in_8bit
    (integrations/bitsandbytes.py replace_with_bnb_linear): every `nn.Linear` of the decoder becomes a bnb layer
    (bytes: quant/hf_formats.py linear_weight_bytes); lm_head, embeddings, norms, routers and fused 3-D expert
    parameters (not nn.Linear in v5) stay in the dtype.
    """
    n_trunk = spec.n_layers - spec.n_nextn_layers
    bnb = _bnb_format(s, r.dtype) if (s.load_in_4bit or s.load_in_8bit) else None
    # a GGUF is dequantized on load, so it counts as a float checkpoint
    plain_fmt = is_gguf(spec) or _DTYPE_ALIASES.get(spec.weights.format.lower(),
                                                    spec.weights.format.lower()) in DTYPE_BYTES
    if bnb is not None and not plain_fmt:
        raise OomkitError(f"{spec.name} is already quantized ({spec.weights.format}); load_in_4bit/load_in_8bit "
                          "quantize a float checkpoint")
    from ..quant import hf_formats

    out = []
    for t in spec.weights.tensors:
        if t.layer is not None and t.layer >= n_trunk:
            continue
        dt = _DTYPE_ALIASES.get(t.dtype.lower(), t.dtype.lower())
        is_float = dt in DTYPE_BYTES
        if bnb is not None and t.layer is not None and len(t.shape) == 2 and not t.name.endswith(_NOT_LINEAR):
            nbytes = hf_formats.linear_weight_bytes(bnb, t.shape[1], t.shape[0])
        elif is_float or plain_fmt:
            nbytes = t.n_elements * r.dtype_bytes
        else:
            nbytes = t.nbytes
        out.append((t, nbytes))
    return out


# ---------------------------------------------------------------------------------------------------------
# device_map placement (integrations/accelerate.py _get_device_map, get_balanced_memory, infer_auto_device_map)


@dataclass(frozen=True)
class Placement:
    layer_device: tuple[int, ...]  # per trunk layer: GPU index, -1 = CPU
    embed_device: int
    head_device: int  # final norm + lm_head (the logits)
    note: str = ""


def place(spec: ModelSpec, devices: tuple[Device, ...], s: TransformersSettings,
          weights: list[tuple[TensorSpec, int]]) -> Placement:
    n = len(_trunk(spec))
    dm = (s.device_map or "").strip().lower()
    if not devices or dm == "cpu":
        return Placement(tuple([-1] * n), -1, -1)
    if dm in ("", "cuda", "cuda:0", "0"):
        return Placement(tuple([0] * n), 0, 0)
    m = re.fullmatch(r"(?:cuda:)?(\d+)", dm)
    if m:
        idx = int(m.group(1))
        if idx >= len(devices):
            raise OomkitError(f"device_map={s.device_map!r}: there are {len(devices)} GPUs")
        return Placement(tuple([idx] * n), idx, idx)
    if dm not in ("auto", "balanced", "balanced_low_0", "sequential"):
        raise OomkitError(f"device_map {s.device_map!r}: oomkit reads 'auto', 'balanced', 'balanced_low_0', "
                          "'sequential', 'cpu' or 'cuda:N'")
    # module sizes: embed, each decoder layer (a no-split module), then norm + lm_head
    layer_bytes = [0] * n
    embed = head = 0
    for t, b in weights:
        if t.layer is not None:
            layer_bytes[t.layer] += b
        elif t.name.startswith("token_embd"):
            embed += b
        else:
            head += b
    total = embed + head + sum(layer_bytes)
    user = {k: v for k, v in s.max_memory}
    free = []
    for i, d in enumerate(devices):
        # accelerate get_max_memory: torch.cuda.mem_get_info free memory (the CUDA context already taken)
        have = None if d.memory_bytes is None else max((d.free_bytes or d.memory_bytes) - CUDA_CONTEXT, 0)
        lim = user.get(str(i), user.get(f"cuda:{i}"))
        if lim is not None:
            have = lim if have is None else min(lim, have)
        free.append(have if have is not None else float("inf"))
    cpu_max = user.get("cpu", float("inf"))
    max_mem = list(free)
    n_gpu = len(devices)
    if dm != "sequential":
        # get_balanced_memory
        if n_gpu == 1:
            if not user:
                max_mem[0] = max_mem[0] * 0.9  # "We will use 90% of the memory on device 0 ..."
        else:
            low_zero = dm == "balanced_low_0"
            per_gpu = total // (n_gpu - 1 if low_zero else n_gpu)
            biggest = max(layer_bytes + [embed, head])
            per_gpu += int(1.25 * biggest)
            for i in range(n_gpu - 1):
                max_mem[i] = min(max_mem[0] if low_zero and i == 0 else per_gpu, max_mem[i])
            if low_zero:
                max_mem[0] = min(max(0, total - sum(max_mem[1:])), max_mem[0])
    # infer_auto_device_map: modules in order onto GPU 0, 1, ..., then the CPU; the first GPU (and the CPU) keep
    # room for the largest layer ("main devices")
    max_layer = max(layer_bytes, default=0)
    caps = max_mem + [cpu_max]
    used = [0.0] * len(caps)
    cur = 0

    def put(size: int) -> int:
        nonlocal cur
        while cur < len(caps) - 1:
            cap = caps[cur] - (max_layer if cur == 0 else 0)
            if used[cur] + size <= cap:
                break
            cur += 1
        used[cur] += size
        return cur

    to_dev = [put(embed)] + [put(b) for b in layer_bytes] + [put(head)]
    if used[-1] > cpu_max:
        raise OomkitError("device_map: the model does not fit on the GPUs and in max_memory['cpu'] (disk offload "
                          "is not modelled)")

    def as_dev(i: int) -> int:
        return -1 if i == n_gpu else i

    return Placement(tuple(as_dev(d) for d in to_dev[1:-1]), as_dev(to_dev[0]), as_dev(to_dev[-1]),
                     note="device_map placement modelled on accelerate's infer_auto_device_map (module sizes, "
                          "90% / balanced budgets); not measured")


# ---------------------------------------------------------------------------------------------------------
# Activations and logits (modelled, labelled)


@dataclass(frozen=True)
class Transients:
    prefill_layer: int  # the largest layer's working set during the prefill forward
    prefill_logits: int  # hidden rows + logits (model dtype) + the float32 copy generate takes
    decode_layer: int  # the largest per-step working set during decoding (cat / dequant / MLA expansion)
    decode_logits: int


def transients(spec: ModelSpec, s: TransformersSettings, r: Resolved, caches: list[LayerCache]) -> Transients:
    """The working set of one forward, modelled from the ops transformers runs (not measured):

    prefill, per layer: two hidden-state rows (residual and normed) plus the larger of attention (Q, new K and V, the
    copy `torch.cat` makes into the cache, the output; eager attention adds the B x H x T x T_kv scores and their
    float32 softmax, sdpa/flash do not) and the MLP (gate, up and their product: 3 x T x n_ff; MoE: the routed
    tokens' experts). MLA layers from 5.15 expand the cached latents to per-head K and V every forward
    (DeepseekV3Attention.expand_kv).
    logits: generate passes logits_to_keep=1, so [B, 1, V] in the model dtype plus the float32 copy
    (`outputs.logits[:, -1].to(copy=True, dtype=torch.float32)`); before 4.45 the models computed [B, T, V] and
    upcast it (`logits = logits.float()`).
    decode: a DynamicCache layer's torch.cat keeps the old and the new tensor of one layer alive; QuantizedCache
    dequantizes a whole layer.
    """
    B, dt = r.batch, r.dtype_bytes
    T = min(r.prompt, s.prefill_chunk_size) if s.prefill_chunk_size else r.prompt
    resid = B * T * spec.n_embd * dt
    by_index = {c.index: c for c in caches}
    pre_layer = dec_layer = 0
    for layer in _trunk(spec):
        c = by_index.get(layer.index)
        a = layer.attention
        attn = 0
        if a is not None and c is not None:
            q = B * T * a.n_heads * a.head_dim_k * dt
            new_kv = B * T * (c.k_per_token + c.v_per_token)
            out = B * T * a.n_heads * a.head_dim_v * dt
            attn = q + 2 * new_kv + out
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
        f = layer.ffn
        if f.is_moe:
            mlp = B * T * (3 * f.n_ff_expert * f.n_experts_used + 3 * f.n_ff_shared + 2 * spec.n_embd * f.n_experts_used) * dt
        else:
            mlp = 3 * B * T * f.n_ff * dt
        pre_layer = max(pre_layer, 2 * resid + max(attn, mlp))
        if c is not None and c.cls.startswith(("DynamicLayer", "DynamicSlidingWindow", "Dynamic+")):
            dec_layer = max(dec_layer, c.storage_end - c.conv_bytes - c.ssm_bytes)  # the old copy during the cat
        elif c is not None and c.cls in ("QuantoQuantizedLayer", "HQQQuantizedLayer"):
            dec_layer = max(dec_layer, 2 * B * r.end_tokens * (c.k_per_token + c.v_per_token))
        elif c is not None and c.cls == "Fp8QuantizedLayer":
            dec_layer = max(dec_layer, B * r.end_tokens * (c.k_per_token + c.v_per_token) * (4 + dt))
    V = spec.n_vocab
    if r.version < ERAS["logits_to_keep"]:
        pre_logits = B * r.prompt * V * (dt + 4) + B * V * 4
    else:
        pre_logits = B * r.keep * V * dt + B * V * 4
    pre_logits += B * T * spec.n_embd * dt
    dec_logits = B * V * (dt + 4)
    return Transients(pre_layer, pre_logits, dec_layer, dec_logits)


# ---------------------------------------------------------------------------------------------------------
# PyTorch's caching allocator (modelled: block rounding only)


def allocation_size(nbytes: int) -> int:
    """CUDACachingAllocator round_size: multiples of 512 bytes."""
    return max(K_MIN_BLOCK, -(-nbytes // K_MIN_BLOCK) * K_MIN_BLOCK)


def reserved_for(tensors: list[int], expandable: bool = False) -> int:
    """Segment bytes cudaMalloc'd for a set of live tensors (CUDACachingAllocator get_allocation_size): small blocks
    share 2 MiB segments, 1-10 MiB blocks share 20 MiB segments, larger ones round up to 2 MiB each. With
    expandable_segments the segments grow in 2 MiB pages. Fragmentation beyond this rounding (freed blocks too small
    for the next request) is not modelled."""
    sizes = [allocation_size(b) for b in tensors if b > 0]
    if expandable:
        return -(-sum(sizes) // K_ROUND_LARGE) * K_ROUND_LARGE
    small = sum(b for b in sizes if b <= K_SMALL_SIZE)
    mid = sum(b for b in sizes if K_SMALL_SIZE < b < K_MIN_LARGE_ALLOC)
    large = sum(-(-b // K_ROUND_LARGE) * K_ROUND_LARGE for b in sizes if b >= K_MIN_LARGE_ALLOC)
    return -(-small // K_SMALL_BUFFER) * K_SMALL_BUFFER + -(-mid // K_LARGE_BUFFER) * K_LARGE_BUFFER + large


# ---------------------------------------------------------------------------------------------------------
# The estimate


def _cache_tensors(c: LayerCache, phase: str) -> list[int]:
    """The tensors (bytes) a layer's cache is made of at a phase, for the allocator rounding."""
    total = c.storage_prefill if phase == "prefill" else c.storage_end
    kv = total - c.conv_bytes - c.ssm_bytes
    parts = [c.conv_bytes, c.ssm_bytes]
    if kv > 0:
        kt = c.k_per_token + c.v_per_token
        k = kv * c.k_per_token // kt if kt else kv
        parts += [k, kv - k]
    return [p for p in parts if p > 0]


def estimate(spec: ModelSpec, devices: tuple[Device, ...], s: TransformersSettings) -> MemoryEstimate:
    r = resolve(spec, s)
    warnings: list[str] = list(r.labels)
    caches = layer_caches(spec, r)
    weights = tensor_bytes(spec, s, r)
    placement = place(spec, devices, s, weights)
    tr = transients(spec, s, r, caches)
    n_dev = len(devices)

    # weights per device (-1: host)
    w_by: dict[int, int] = {}
    w_tensors: dict[int, list[int]] = {}
    for t, b in weights:
        if t.layer is not None:
            d = placement.layer_device[t.layer]
        elif t.name.startswith("token_embd"):
            d = placement.embed_device
        else:
            d = placement.head_device
        w_by[d] = w_by.get(d, 0) + b
        w_tensors.setdefault(d, []).append(b)

    # cache per device and phase; offloaded layers live on the host, with the layer being updated and the
    # prefetched next one on the GPU (cache_utils.py Cache.update: prefetch(layer_idx + 1), offload(layer_idx))
    def cache_on(phase: str) -> tuple[dict[int, int], dict[int, int], dict[int, list[int]]]:
        kv: dict[int, int] = {}
        rs: dict[int, int] = {}
        parts: dict[int, list[int]] = {}
        offl: dict[int, list[int]] = {}
        for c in caches:
            d = placement.layer_device[c.index]
            total = c.storage_prefill if phase == "prefill" else c.storage_end
            state = c.conv_bytes + c.ssm_bytes
            if c.offloaded and d >= 0:
                kv[-1] = kv.get(-1, 0) + total - state
                offl.setdefault(d, []).append(total - state)
                if state:
                    rs[d] = rs.get(d, 0) + state
                continue
            kv[d] = kv.get(d, 0) + total - state
            rs[d] = rs.get(d, 0) + state
            parts.setdefault(d, []).extend(_cache_tensors(c, phase))
        for d, sizes in offl.items():
            top = sorted(sizes, reverse=True)[:2]
            kv[d] = kv.get(d, 0) + sum(top)
            parts.setdefault(d, []).extend(top)
        return kv, rs, parts

    # the working set: prefill on every device with layers, logits on the lm_head's device
    def compute_on(phase: str) -> dict[int, int]:
        out: dict[int, int] = {}
        layer_part = tr.prefill_layer if phase == "prefill" else tr.decode_layer
        logit_part = tr.prefill_logits if phase == "prefill" else tr.decode_logits
        for d in set(placement.layer_device):
            out[d] = max(out.get(d, 0), layer_part)
        out[placement.head_device] = max(out.get(placement.head_device, 0), logit_part)
        return out

    phases = {}
    for phase in ("prefill", "decode"):
        kv, rs, parts = cache_on("prefill" if phase == "prefill" else "end")
        comp = compute_on(phase)
        phases[phase] = (kv, rs, parts, comp)

    def dev_total(phase: str, d: int) -> int:
        kv, rs, _, comp = phases[phase]
        return w_by.get(d, 0) + kv.get(d, 0) + rs.get(d, 0) + comp.get(d, 0)

    # the peak phase per device (the GPU that fills first decides; one phase for all keeps the parts consistent)
    ids = list(range(n_dev)) or [-1]
    peak_phase = max(("prefill", "decode"), key=lambda p: max(dev_total(p, d) for d in ids))
    kv, rs, parts, comp = phases[peak_phase]

    allocated: dict[str, int] = {}
    reserved: dict[str, int] = {}
    usages = []
    for i, dev in enumerate(devices):
        # caching_allocator_warmup (modeling_utils.py) reserves the device's weights in one block (capped at
        # total - 1.2 GiB), then the tensors are carved out of it
        w_res = -(-w_by.get(i, 0) // K_ROUND_LARGE) * K_ROUND_LARGE if w_by.get(i) else 0
        live = parts.get(i, []) + ([comp[i]] if comp.get(i) else [])
        alloc = sum(allocation_size(b) for b in w_tensors.get(i, [])) + sum(allocation_size(b) for b in live)
        res = w_res + reserved_for(live, s.expandable_segments)
        allocated[dev.id] = alloc
        reserved[dev.id] = max(res, alloc)
        gap = reserved[dev.id] - (w_by.get(i, 0) + kv.get(i, 0) + rs.get(i, 0) + comp.get(i, 0))
        used = bool(w_by.get(i) or kv.get(i) or rs.get(i) or comp.get(i))  # torch opens a context where it works
        usages.append(Usage(id=dev.id, name=dev.name, memory_bytes=dev.memory_bytes, weights_bytes=w_by.get(i, 0),
                            kv_cache_bytes=kv.get(i, 0), recurrent_state_bytes=rs.get(i, 0),
                            compute_bytes=comp.get(i, 0),
                            overhead_bytes=(CUDA_CONTEXT + max(gap, 0)) if used else 0))
    host = Usage(id="CPU", name="host", weights_bytes=w_by.get(-1, 0), kv_cache_bytes=kv.get(-1, 0),
                 recurrent_state_bytes=rs.get(-1, 0), compute_bytes=comp.get(-1, 0))
    if not devices:
        warnings.append("no GPU: transformers runs on the CPU (torch's CPU allocator, no caching)")
    if is_gguf(spec):
        warnings.append(f"{spec.weights.format} GGUF weights: transformers dequantizes a GGUF on load "
                        f"(to {r.dtype}); name the Hugging Face model for its own checkpoint")
    if placement.note and devices and any(d != 0 for d in placement.layer_device):
        warnings.append(placement.note)
    if s.max_length and spec.n_ctx_train and r.max_length > spec.n_ctx_train:
        warnings.append(f"max_length {r.max_length} > the model's max_position_embeddings {spec.n_ctx_train}")
    if r.impl == "quantized" and r.backend != "fp8":
        warnings.append(f"QuantizedCache {r.backend}: packed layout from the backend's source, not measured here")
    if r.offload:
        warnings.append("offloaded cache: two offloaded layers on the GPU at a time (the updated one and the "
                        "prefetched next), the rest on the host; modelled from cache_utils.py, not measured")
    if r.impl in DEPRECATED_STATIC:
        warnings.append(f"cache_implementation={r.impl!r} is deprecated (transformers: removed in v5.13); "
                        "the layer types come from the config")

    by_kind: dict[str, int] = {}
    for c in caches:
        if c.kind == "none":
            continue
        if c.conv_bytes or c.ssm_bytes:
            by_kind["recurrent_conv"] = by_kind.get("recurrent_conv", 0) + c.conv_bytes
            by_kind["recurrent_ssm"] = by_kind.get("recurrent_ssm", 0) + c.ssm_bytes
        kv_b = c.nbytes_end - c.conv_bytes - c.ssm_bytes
        if kv_b:
            by_kind[c.kind] = by_kind.get(c.kind, 0) + kv_b
    tokens_by_kind: dict[str, int] = {}
    for c in caches:
        if c.k_per_token:
            key = f"cache_tokens_{c.kind}"
            tokens_by_kind[key] = max(tokens_by_kind.get(key, 0), c.tokens_end)

    def dn(d: int) -> str:
        return "cpu" if d < 0 else devices[d].id

    cache_class = ("QuantizedCache" if r.impl == "quantized" else "StaticCache" if r.static else "DynamicCache")
    view = {
        "cache_class": cache_class,
        "cache_implementation": r.impl,
        "dtype": r.dtype,
        "prompt_tokens": r.prompt,
        "max_new_tokens": r.new,
        "max_length": r.max_length,
        "cache_batch_size": r.batch,
        "max_cache_len": r.max_cache_len if r.static else None,
        **tokens_by_kind,  # tokens the K/V tensors of each layer kind hold when generate returns
        "weights_bytes": {dn(d): b for d, b in sorted(w_by.items())},
        "cache_bytes": by_kind,
        "cache_nbytes": sum(c.nbytes_end for c in caches),
        "cache_storage_bytes": {"after_prefill": sum(c.storage_prefill for c in caches),
                                "end": sum(c.storage_end for c in caches)},
        "logits_peak_bytes": tr.prefill_logits,
        "activation_peak_bytes": {"prefill": tr.prefill_layer, "decode": tr.decode_layer},
        "peak_phase": peak_phase,
        "torch_allocated_bytes": allocated,
        "torch_reserved_bytes": reserved,
        "cuda_context_bytes": CUDA_CONTEXT if devices else 0,
        "device_map": {"embed": dn(placement.embed_device), "lm_head": dn(placement.head_device),
                       "layers": _ranges(placement.layer_device, dn)},
    }
    # marginal bytes per context token, one sequence: the layers that keep every token
    if r.static:
        per_token = None
    else:
        per_token = sum((c.k_per_token + c.v_per_token) for c in caches
                        if c.k_per_token and not c.window and r.impl != "quantized") or None
        if r.impl == "quantized":
            per_token = None
    layer_uses = tuple(
        LayerUse(index=c.index, kind=c.kind, device=dn(placement.layer_device[c.index]),
                 weights_bytes=sum(b for t, b in weights if t.layer == c.index),
                 kv_bytes=c.storage_end - c.conv_bytes - c.ssm_bytes, recurrent_bytes=c.conv_bytes + c.ssm_bytes,
                 cells=c.tokens_end or None)
        for c in caches
    )
    eff = s.to_dict()
    eff.update(torch_dtype=r.dtype, max_length=r.max_length, prompt_tokens=r.prompt, max_new_tokens=r.new,
               cache_implementation=r.impl, engine_version=".".join(map(str, r.version)))
    if r.impl == "quantized":
        eff.update(cache_backend=r.backend, cache_nbits=r.nbits)
    return MemoryEstimate(model=spec, engine="transformers", settings=eff, devices=tuple(usages), host=host,
                          engine_view=view, kv_bytes_per_token=per_token, layers=layer_uses,
                          warnings=tuple(warnings))


def _ranges(devs: tuple[int, ...], name) -> dict[str, str]:
    """{"0-15": "CUDA0", "16-31": "CUDA1"}"""
    out: dict[str, str] = {}
    start = 0
    for i in range(1, len(devs) + 1):
        if i == len(devs) or devs[i] != devs[start]:
            key = f"{start}" if i - 1 == start else f"{start}-{i - 1}"
            out[key] = name(devs[start])
            start = i
    return out


# ---------------------------------------------------------------------------------------------------------
# Options form: oomkit estimate MODEL --engine transformers [these flags]

# flag -> (field, kind); kind: "int", "str", "bool", "dtype", "memory"
FLAGS: dict[str, tuple[str, str]] = {
    "--max-new-tokens": ("max_new_tokens", "int"),
    "--max-length": ("max_length", "int"),
    "--prompt-tokens": ("prompt_tokens", "int"),
    "--batch-size": ("batch_size", "int"),
    "--num-beams": ("num_beams", "int"),
    "--num-return-sequences": ("num_return_sequences", "int"),
    "--dtype": ("torch_dtype", "str"),
    "--torch-dtype": ("torch_dtype", "str"),
    "--cache-implementation": ("cache_implementation", "str"),
    "--max-cache-len": ("max_cache_len", "int"),
    "--cache-backend": ("cache_backend", "str"),
    "--cache-nbits": ("cache_nbits", "int"),
    "--q-group-size": ("q_group_size", "int"),
    "--residual-length": ("residual_length", "int"),
    "--logits-to-keep": ("logits_to_keep", "int"),
    "--attn-implementation": ("attn_implementation", "str"),
    "--prefill-chunk-size": ("prefill_chunk_size", "int"),
    "--device-map": ("device_map", "str"),
    "--max-memory": ("max_memory", "memory"),
    "--load-in-4bit": ("load_in_4bit", "bool"),
    "--load-in-8bit": ("load_in_8bit", "bool"),
    "--bnb-4bit-quant-type": ("bnb_4bit_quant_type", "str"),
    "--bnb-4bit-use-double-quant": ("bnb_4bit_use_double_quant", "bool"),
    "--expandable-segments": ("expandable_segments", "bool"),
}


def _norm_flag(name: str) -> str:
    return name.replace("_", "-") if name.startswith("--") else name


def parse_max_memory(text: str) -> tuple[tuple[str, int], ...]:
    """"0=20GiB,1=20GiB,cpu=64GiB" (from_pretrained's max_memory dict) -> (("0", bytes), ...)."""
    from ..units import parse_size

    out = []
    for part in (p.strip() for p in str(text).split(",") if p.strip()):
        key, eq, value = part.partition("=")
        if not eq:
            key, eq, value = part.partition(":")
        if not eq:
            raise OomkitError(f"--max-memory takes DEVICE=SIZE pairs (0=20GiB,cpu=64GiB), got {part!r}")
        key = key.strip().lower().removeprefix("cuda:")
        if key != "cpu" and not key.isdigit():
            raise OomkitError(f"--max-memory: device {key!r} is not a GPU index or 'cpu'")
        out.append((key, parse_size(value.strip())))
    return tuple(out)


def parse_args(argv: list[str], env: dict[str, str] | None = None) -> tuple[str | None, str | None,
                                                                             TransformersSettings]:
    opts: dict[str, Any] = {}
    i = 0
    while i < len(argv):
        arg = argv[i]
        name, eq, inline = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        name = _norm_flag(name)
        if name not in FLAGS:
            raise OomkitError(f"unknown transformers option {arg!r}; known: {', '.join(sorted(FLAGS))}")
        fld, kind = FLAGS[name]
        if kind == "bool":
            if eq:
                low = inline.lower()
                if low not in ("true", "false", "1", "0", "yes", "no"):
                    raise OomkitError(f"{name} takes true or false, got {inline!r}")
                opts[fld] = low in ("true", "1", "yes")
            else:
                opts[fld] = True
            i += 1
            continue
        value, i = flag_value(argv, i, inline if eq else None, f"{name} expects a value")
        if kind == "int":
            try:
                opts[fld] = int(value)
            except ValueError:
                raise OomkitError(f"{name} takes an integer, got {value!r}") from None
        elif kind == "memory":
            opts[fld] = parse_max_memory(value)
        else:
            opts[fld] = value
        i += 1
    return None, None, TransformersSettings(**opts)


def flag_takes_value(name: str, following: str | None) -> bool:
    name = _norm_flag(name.partition("=")[0])
    spec = FLAGS.get(name)
    return spec is not None and spec[1] != "bool"


def with_context(s: TransformersSettings, n_ctx: int) -> TransformersSettings:
    """The same generate call at another total length; the new tokens shrink only when the total is smaller."""
    return replace(s, max_length=n_ctx, prompt_tokens=None, max_new_tokens=max(1, min(s.max_new_tokens, n_ctx - 1)))


# transformers loads the checkpoint as published (its config's dtype / quantization_config).
def _parse_args(argv: list[str], env: dict[str, str] | None = None, program: str | None = None):
    return parse_args(argv, env)


ENGINE = EngineModule(
    "transformers", TransformersSettings, estimate, _parse_args, flag_takes_value,
    context_field="max_length", neutral=NEUTRAL,
    kv_types=("auto", "fp8"), kv_fields=("kv_cache_dtype",),  # the model dtype, or the quantized cache (fp8)
    newest=NEWEST, eras=ERAS, with_context_fn=with_context,
)
