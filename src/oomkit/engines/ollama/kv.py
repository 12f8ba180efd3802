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
    K and V are stored in the cache type (f16 unless flash attention lets OLLAMA_KV_CACHE_TYPE apply)."""
    pad = 256 if (flash_attention or version >= V_CACHE_PAD_256) else 32
    dtype = ggml.type_by_name(cache_type or "f16")
    capacity = num_ctx
    mem_default = 4096 if spec.architecture in ("gpt-oss", "gptoss", "gemma4") else 0
    out_b: dict[int, int] = {}
    out_c: dict[int, int] = {}
    for layer in spec.layers:
        a = layer.attention
        if a is None or layer.kind in (LayerKind.NONE, LayerKind.RECURRENT):
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
