"""The Ollama engine's own KV cache (kvcache/causal.go), which the Go runner allocates instead of llama.cpp's for
the architectures Ollama runs itself (eras A-C)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ...model.spec import LayerKind, ModelSpec
from ...quant import ggml
from ...units import round_up
from ..llamacpp import cache_head_k, cache_head_v, cache_kv_heads
from ..versions import Version
from .settings import V_CACHE_PAD_256, V_CAUSAL_SWA, V_SWA_EXTRA_TOKEN, V_SWA_MEM

# ---------------------------------------------------------------------------------------------------------
# The Ollama engine's own KV cache: kvcache/causal.go Causal.Init


@dataclass(frozen=True)
class CausalCache:
    bytes_by_layer: dict[int, int]
    cells_by_layer: dict[int, int]


def causal_cache(spec: ModelSpec, version: Version, num_ctx: int, num_parallel: int, num_batch: int,
                 cache_type: str, flash_attention: bool) -> CausalCache:
    """Cache cells per layer, as runner/ollamarunner/cache.go NewInputCache calls Causal.Init(backend, dtype,
    numSlots=num_parallel, capacity=kvSize/numSlots=num_ctx, maxBatch=num_batch):

    - full layers: PAD(np * capacity, CachePadding);
    - sliding layers: swaMemorySize = the window (4096 for gpt-oss and gemma4: NewSWAMemCache(window, 4096)),
      at least window + 1 with parallel sequences (v0.12.4+); when it reaches the capacity the layer is full;
      else PAD(np * swaMemorySize + maxBatch, CachePadding);
    - CachePadding (ml/backend/ggml/ggml.go CacheConfig): 256 with flash attention, 32 without; 256 always
      from v0.13.2. Before v0.6.3 every layer held PAD(np * num_ctx) cells.
    K and V are stored in the cache type (f16 unless flash attention lets OLLAMA_KV_CACHE_TYPE apply).

    A KV-shared layer (kv_source: gemma3n's and gemma4's last shared_kv_layers) holds no cache: Causal.Put
    creates a layer's K and V on its first Put (kvcache/causal.go: c.keys[c.curLayer] = ctx.Zeros(...)), and the
    shared layers never Put: model/models/gemma3n/model_text.go (v0.9.3+) SetLayer(firstSharedKeyValue - 2 or
    - 1) and model/models/gemma4/model_text.go (v0.20.0+) SetLayer(kvDonorMap[i]) point them at a donor layer's
    cache, and TextSelfAttention.Forward with sharedKV computes no K or V, so nn.Attention only reads it.
    gemma4:e4b at 32768 cells (ollama/ollama#15261): 20 sliding layers x 4608 cells x 2 KiB + 4 full layers x
    32768 x 4 KiB = 692.0 MiB ("kv cache" Vulkan0), not the 1211 MiB of all 42 layers."""
    pad = 256 if (flash_attention or version >= V_CACHE_PAD_256) else 32
    dtype = ggml.type_by_name(cache_type or "f16")
    capacity = num_ctx
    mem_default = 4096 if spec.architecture in ("gpt-oss", "gptoss", "gemma4") else 0
    out_b: dict[int, int] = {}
    out_c: dict[int, int] = {}
    for layer in spec.layers:
        a = layer.attention
        if a is None or layer.kind in (LayerKind.NONE, LayerKind.RECURRENT) or layer.kv_source is not None:
            continue
        full = round_up(num_parallel * capacity, pad)
        cells = full
        if version >= V_CAUSAL_SWA and layer.kind is LayerKind.SLIDING and a.window:
            window = a.window
            mem = max(mem_default, window) if version >= V_SWA_MEM else window
            if version >= V_SWA_EXTRA_TOKEN and num_parallel > 1:
                mem = max(mem, window + 1)
            if version >= V_SWA_EXTRA_TOKEN:
                is_full = mem >= capacity
            elif version >= V_SWA_MEM:
                is_full = mem > capacity
            else:
                is_full = capacity < window
            if not is_full:
                cells = round_up(num_parallel * mem + num_batch, pad)
        elif version < V_CAUSAL_SWA:
            cells = round_up(num_parallel * capacity, pad)
        k = _row(dtype, cache_kv_heads(a) * cache_head_k(a))
        v = _row(dtype, cache_kv_heads(a) * cache_head_v(a))
        out_b[layer.index] = (k + v) * cells
        out_c[layer.index] = cells
    return CausalCache(out_b, out_c)


def _row(t, n: int) -> int:
    # rounded up, never refused: the runner's own llama.cpp figures check the block sizes (ggml.row_bytes)
    return math.ceil(n * t.type_size / t.block_size)


# ---------------------------------------------------------------------------------------------------------
# mllama's encoder cache: kvcache/encoder.go EncoderCache (v0.7.0+)

MLLAMA_ENCODER_TOKENS = 1601 * 4  # model.go EncodeMultimodal: 1601 positions x maxNumTiles (padded to 4 tiles)


def mllama_encoder_cache(spec: ModelSpec) -> dict[int, int]:
    """The cross-attention layers' K and V on the Ollama engine (model/models/mllama, v0.7.0+:
    kvcache.NewWrapperCache(NewEncoderCache(), NewCausalCache); the self-attention layers use the causal cache,
    the cross-attention layers only the encoder cache, TextDecoder.Forward SetLayerType). EncoderCache.Put
    creates each layer's K and V with ctx.Layer(i).Empty(key.DType(), key.Shape()) on the first Put, which
    reserveWorstCaseGraph's batch makes (its 2048 x 2048 image: crossAttentionStates of 1601 x 4 tiles), so
    ml/backend/ggml newTensor counts them in the layer's Cache. TextCrossAttention.Forward: K and V are the
    F32 products of the F32 states, [head_dim, kv_heads, 1601 x 4] each, whatever OLLAMA_KV_CACHE_TYPE says
    (CacheConfig{}). -> bytes by layer (11b: 8 layers x 2 x 128 x 8 x 6404 x 4 B = 400.25 MiB)."""
    out: dict[int, int] = {}
    if spec.architecture != "mllama":
        return out
    for la in spec.layers:
        a = la.attention
        if la.cross_attention and a is not None:
            out[la.index] = 4 * MLLAMA_ENCODER_TOKENS * a.n_kv_heads * ((a.head_dim_k or 0) + (a.head_dim_v or 0))
    return out


# ---------------------------------------------------------------------------------------------------------
# The recurrent layers' state and its checkpoints: model/models/qwen3next cache.go (v0.15.5-v0.17.0), then the
# shared kvcache/recurrent.go Recurrent (v0.17.1+, 0ade9205c #14356: lfm2, nemotronh, qwen3next/qwen35/qwen35moe)

V_RECURRENT_SHARED = (0, 17, 1)  # kvcache/recurrent.go: DefaultCheckpointCount = 24, every recurrent model
QWEN3NEXT_CHECKPOINTS = 32  # model/models/qwen3next/checkpoints.go checkpointCountDefault (77eb2ca61, v0.15.5)
RECURRENT_CHECKPOINTS = 24  # kvcache/recurrent.go DefaultCheckpointCount
_QWEN3NEXT_ARCHS = ("qwen3next", "qwen35", "qwen35moe")  # model.Register in model/models/qwen3next/model.go


def recurrent_cache(spec: ModelSpec, version: Version, num_parallel: int) -> dict[int, int]:
    """Bytes by layer of the recurrent layers' state on the Ollama engine. Recurrent.Init/convCtxs and
    recurrentCtxs (kvcache/recurrent.go; qwen3next's HybridCache before v0.17.1) give each recurrent layer,
    in a context of its own tagged with the layer (ctx.Layer: counted in the layer's Cache), an F32 conv state
    of convDim x convChannels and a recurrent state of RecurrentStateSize (the delta-net state; lfm2 keeps 1
    float) per slot: llama.cpp's n_embd_r and n_embd_s floats. The worst-case reserve (StartForward with
    reserve: reserveCheckpointConv / reserveCheckpointRecurrent) then allocates every checkpoint entry of every
    slot, each a copy of both states: 24 a slot from v0.17.1 (DefaultCheckpointCount), 32 in qwen3next's own
    cache (checkpointCountDefault, v0.15.5-v0.17.0), none elsewhere before. Whatever OLLAMA_KV_CACHE_TYPE says:
    the states are F32. qwen3.6-35b-a3b at 4096 cells: 30 delta-net layers x (96 KiB + 2 MiB) x 25 = 1570.3 MiB
    beside the 10 attention layers' 80 MiB ("kv cache" 1.6 GiB)."""
    out: dict[int, int] = {}
    if version >= V_RECURRENT_SHARED:
        checkpoints = RECURRENT_CHECKPOINTS
    elif spec.architecture in _QWEN3NEXT_ARCHS:
        checkpoints = QWEN3NEXT_CHECKPOINTS
    else:
        checkpoints = 0
    slots = max(num_parallel, 1)
    for layer in spec.layers:
        st = layer.recurrent
        if st is None or layer.kind is not LayerKind.RECURRENT:
            continue
        out[layer.index] = 4 * (st.conv + max(st.ssm, 1)) * slots * (1 + checkpoints)
    return out
