"""Ollama's own memory arithmetic: the figures it logs and shows in `ollama ps`, computed with its formulas, its
known mistakes included (q8_0 counted as 1 byte per element, q4_0 as 0.5; a KV cache for embedding models; one
graph formula per architecture). What the runner really allocates is layout.py's job.

Sources, all in ollama/ollama (cited as `file:function@commit-or-tag`):

- era A/B: llm/memory.go estimateGPULayers and fs/ggml/ggml.go GraphSize at f560bd077^ (v0.12.10, the last
  release that has them); older forms are selected by version, each with the commit that changed it;
- era C (v0.12.11 - v0.24): llm/server.go llamaServer.Load, createLayout/buildLayout/assignLayers/findBestFit/
  greedyFit at v0.13.0 (the llama engine still sizes KV and graph with GraphSize);
- era D (v0.30+): llm/llama_server.go PredictServerVRAM and server/sched.go automaticGenerationBatch at fb3076099.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...model.spec import ModelSpec
from ...units import GiB, MiB, fmt_bytes
from ..versions import Version
from .settings import (
    V_ASYM_KV,
    V_BLK0_BUFFER_AGAIN,
    V_CHATGLM_GRAPH,
    V_CTX_INSIDE_GRAPHSIZE,
    V_DEEPSEEK2_GRAPH,
    V_GEMMA2_GRAPH,
    V_GEMMA3N_X4,
    V_GPTOSS,
    V_GPTOSS_FA_GRAPH,
    V_GPTOSS_PARTIAL_EQ_FULL,
    V_GPTOSS_PARTIAL_ONLY,
    V_GPU_OVERHEAD,
    V_KV_QUANT,
    V_KV_REFACTOR,
    V_LLAMA_VOCAB_GRAPH,
    V_MAX_LAYER_BUFFER,
    V_PER_GPU_ESTIMATE,
    V_PER_LAYER_KV,
    V_POOLED_ESTIMATE_BUFFER,
    V_RECURRENT,
    V_STABLELM_GRAPH,
    V_UNASSIGNED_TRACKED,
    V_WEIGHTS_NO_KV,
)
from .weights import GgufView


def human_bytes2(b: int) -> str:
    """format/bytes.go HumanBytes2: what Ollama prints for every size (binary units, one decimal)."""
    return fmt_bytes(b, decimals=1)


def kv_bytes_per_element(kvct: str, version: Version) -> float:
    """fs/ggml/ggml.go kvCacheBytesPerElement: Ollama's own (rounded) bytes per element; before v0.5.0 always f16."""
    if version < V_KV_QUANT:
        return 2.0
    return {"q8_0": 1.0, "q4_0": 0.5, "f32": 4.0}.get(kvct, 2.0)


# ---------------------------------------------------------------------------------------------------------
# GraphSize (fs/ggml/ggml.go)


@dataclass(frozen=True)
class Graph:
    kv: tuple[int, ...]  # per layer
    kv_total: int  # what memory.required.kv prints
    partial: int
    full: int
    labels: tuple[str, ...] = ()


def graph_size(g: GgufView, version: Version, num_ctx: int, num_batch: int, num_parallel: int, kvct: str,
               flash_attention: bool, mllama_branch: bool = True) -> Graph:
    """GraphSize(context, batch, numParallel, kvCacheType, useFlashAttention) plus estimateGPULayers' defaults
    for a zero graph (llm/memory.go: partial = h/hkv * kvTotal / 6, full = partial). mllama_branch False: a
    candidate of v0.4.0 before -rc7 (settings.RC_MLLAMA_GRAPH), whose GraphSize has no mllama case."""
    context = num_ctx * num_parallel  # sched/server multiply num_ctx by the parallel slots
    if version >= V_CTX_INSIDE_GRAPHSIZE:
        batch = min(num_ctx, num_batch)  # memory.go: min(opts.NumCtx, opts.NumBatch), NumCtx per slot
    else:
        batch = min(context, num_batch)  # opts.NumCtx already held num_ctx x numParallel
    bpe = kv_bytes_per_element(kvct, version)
    kv, total = _default_kv(g, version, context, bpe)
    if g.arch == "mllama" and g.cross_layers and mllama_branch:
        kv, total = _mllama_kv(g, version, context, kv, total)
    labels: list[str] = []
    partial = full = 0
    if g.arch != "mllama" or mllama_branch:
        partial, full = _arch_graph(g, version, context, batch, num_parallel, bpe, flash_attention, kv,
                                    sum(kv) if total is None else total, labels)

    # memory.go sums the per-layer KV GraphSize returns (one uniform total before v0.6.3)
    kv_total = total if total is not None else sum(kv)
    # llm/memory.go estimateGPULayers: a zero graph falls back to h/hkv * kvTotal / 6 (GQA() before v0.6.3)
    if partial == 0:
        partial = (g.heads_max // max(g.heads_kv_min, 1)) * kv_total // 6
    if full == 0:
        full = partial
    return Graph(kv=tuple(kv), kv_total=kv_total, partial=partial, full=full, labels=tuple(labels))


def _default_kv(g: GgufView, version: Version, context: int, bpe: float) -> tuple[list[int], int | None]:
    """GraphSize's KV per layer before the architecture branches, and the uniform total of releases before
    v0.6.3 (None from then on: the total is the sum)."""
    n, hkv = g.block_count, g.heads_kv_max
    ehk, ehv = g.key_length, g.value_length
    if version < V_ASYM_KV:
        # v0.1.44 llm/memory.go: 2 * 2 * NumCtx * BlockCount * EmbeddingLength / HeadCount * HeadCountKV, K and V
        # as wide as n_embd / n_head whatever key_length / value_length say (DeepSeek-V2: 128, not 192 and 128)
        ehk = ehv = g.embedding_heads
    # KV per layer. Default: "mirror the cache usage in llama.cpp"; a layer without heads is recurrent (v0.11.11+)
    kv = [0] * n
    if version < V_KV_REFACTOR:
        total = 2 * context * n * (ehk + ehv) * hkv
        kv = [total // n] * n
    elif version < V_PER_LAYER_KV:
        total = int(float(context * n * (ehk + ehv) * hkv) * bpe)
        kv = [total // n] * n
    else:
        d_conv, d_inner, d_state, n_group = g.ssm
        for i in range(n):
            if version < V_RECURRENT:
                kv[i] = int(float(context * (ehk + ehv) * hkv) * bpe)
            elif g.heads[i] > 0 and g.heads_kv[i] > 0:
                kv[i] = int(float(context * (ehk + ehv) * g.heads_kv[i]) * bpe)
            else:
                n_embd_r = (d_conv - 1) * (d_inner + 2 * n_group * d_state) if d_conv > 0 else 0
                kv[i] = (n_embd_r + d_state * d_inner) * 4  # recurrent state is always f32
        total = None
    return kv, total


# fs/ggml/ggml.go GraphSize, mllama: the cross-attention layers' K and V are those of the vision encoder's output,
# 1601 tokens (40 x 40 patches + the class token) x 4 tiles, in F32
MLLAMA_VISION_TOKENS, MLLAMA_TILES = 1601, 4


def _mllama_kv(g: GgufView, version: Version, context: int, kv: list[int],
               total: int | None) -> tuple[list[int], int | None]:
    """GraphSize's mllama branch. v0.4.0-v0.6.2 (llm/ggml.go, then fs/ggml/ggml.go): one total, headsKV x (K + V)
    x (2 B x the non-cross layers x context + 4 B x the cross layers x 1601 x 4): the self-attention layers in F16
    whatever the cache type; from v0.6.3 (f66216e39, per-layer KV) only the cross-attention layers' entries are
    replaced, headsKV x (K + V) x 4 x 1601 x 4, the others keep the default context x (K + V) x headsKV x bpe."""
    n, hkv, row = g.block_count, g.heads_kv_max, g.key_length + g.value_length
    cross = [i for i in g.cross_layers if i < n]
    image = hkv * row * 4 * MLLAMA_VISION_TOKENS * MLLAMA_TILES
    if version < V_PER_LAYER_KV:
        total = hkv * row * (2 * (n - len(cross)) * context + 4 * len(cross) * MLLAMA_VISION_TOKENS * MLLAMA_TILES)
        return [total // n] * n, total
    kv = list(kv)
    for i in cross:
        kv[i] = image
    return kv, total


def _arch_graph(g: GgufView, version: Version, context: int, batch: int, num_parallel: int, bpe: float,
                flash_attention: bool, kv: list[int], default_kv_total: int, labels: list[str]) -> tuple[int, int]:
    """GraphSize's per-architecture graph formulas -> (partial, full); 0 where Ollama has none. gemma3 and
    gpt-oss also resize their sliding-window layers' entries of `kv` (in place, as GraphSize does)."""
    e, V, n = g.embedding, g.vocab, g.block_count
    h, hkv = g.heads_max, g.heads_kv_max
    eh, ehk, ehv = g.embedding_heads, g.key_length, g.value_length
    partial = full = 0
    arch = g.arch
    if arch in ("llama", "llama4"):
        full = 4 * batch * (1 + 4 * e + context * (1 + h))
        if version >= V_LLAMA_VOCAB_GRAPH:
            full = max(full, 4 * batch * (e + V))
        partial = 4 * batch * e + max(
            4 * batch * (1 + e + max(context, e)) + e * e * 9 // 16 + 4 * context * (batch * h + eh * hkv),
            4 * batch * (e + V) + e * V * 105 // 128,
        )
        if g.ffn_gate_exps_bytes:  # mixtral 8x22b
            ff = g.feed_forward_length
            partial = max(
                3 * g.ffn_gate_exps_bytes + 4 * batch * (2 * ff + hkv + e + context + eh * hkv),
                4 * (context * batch * h + context * eh * hkv + batch * 1024 + eh * hkv * batch),
            )
    elif arch in ("gemma", "gemma3", "gemma3n") or (arch == "gemma2" and version >= V_GEMMA2_GRAPH):
        full = max(4 * batch * (e + V), 4 * batch * (2 + context + context * h + 2 * e + 2 * ehk * h))
        partial = max(
            4 * e * batch + e * V * 105 // 128 + 4 * V * batch,
            4 * batch * (2 * e + 1 + 2 * ehk * h + context + context * h) + 4 * ehk * context * 8
            + e * ehk * h * 9 // 16,
        )
        if arch == "gemma3n" and version >= V_GEMMA3N_X4:
            full, partial = full * 4, partial * 4
        if arch == "gemma3" and version >= V_PER_LAYER_KV:
            # every 6th layer is global; the others hold numParallel * sliding_window + batch tokens
            swa = num_parallel * g.sliding_window + batch
            for i in range(n):
                if (i + 1) % 6 != 0:
                    kv[i] = int(float(swa * (ehk + ehv) * hkv) * bpe)
    elif arch == "command-r":
        full = max(4 * batch * (e + V), 4 * batch * (2 + 4 * e + context * (1 + h)))
        partial = max(4 * batch * (e + V) + e * V * 105 // 128,
                      4 * batch * (1 + 2 * e + context * (1 + h)) + 4 * e * context + e * e * 9 // 16)
    elif arch == "qwen2":
        full = max(4 * batch * (e + V), 4 * batch * (1 + 2 * e + context + context * h))
        partial = max(4 * batch * (e + V) + e * V * 105 // 128,
                      4 * (batch * (1 + 2 * e + context * (1 + h)) + e * (1 + context)))
    elif arch == "phi2":
        full = max(4 * batch * (e + V), 4 * batch * (1 + 4 * e + context + context * h))
        partial = max(4 * batch * (2 * e + V) + e * V * 105 // 128, 4 * batch * (2 + 3 * e + context + context * h))
    elif arch == "stablelm" and version >= V_STABLELM_GRAPH:
        full = 4 * batch * (context * (1 + h) + 3 * e + 2)
        partial = max(4 * batch * (V + 2 * e), full)
    elif arch == "deepseek2" and version >= V_DEEPSEEK2_GRAPH:
        full = max(4 * batch * (3 * e + V), 4 * batch * (3 * e + 2 + context * (1 + hkv) + 2 * ehk * hkv))
        partial = max(4 * batch * (3 * e + V) + e * V * 105 // 128,
                      4 * batch * (2 * e + 1 + 2 * ehk * hkv + context + context * hkv) + 4 * ehk * context * hkv
                      + e * ehk * hkv * 9 // 16)
    elif arch == "chatglm" and version >= V_CHATGLM_GRAPH:
        full = 4 * batch * (e + V)
        partial = 4 * batch * (e + V) + e * V * 105 // 128
        if g.qkv_bias_len:
            q = g.qkv_bias_len
            full = max(full, 4 * batch * (2 + 2 * e + context + context * h + ehk * h + q))
            partial = max(partial, 4 * batch * (1 + 2 * e + ehk * h + context + context * h) + 4 * ehk * context
                          + 4 * context * ehk + 4 * q)
    elif arch in ("gptoss", "gpt-oss") and version >= V_GPTOSS:
        row = (ehk + ehv) * hkv
        for i in range(n):
            kv[i] = int(float(row) * bpe)
            kv[i] *= (num_parallel * 4096 + batch) if i % 2 == 0 else context
        # note: kvTotal here is the default (full-context) total computed before this branch
        ratio = g.heads_max // max(g.heads_kv_min, 1)
        if version < V_GPTOSS_PARTIAL_ONLY:
            full = 4 * ratio * default_kv_total // 6
            partial = 2 * full if version < V_GPTOSS_PARTIAL_EQ_FULL else full
        else:
            partial = 2 * ratio * default_kv_total // 6
            if flash_attention and version >= V_GPTOSS_FA_GRAPH:
                partial = (4 * num_parallel + (context >> 10) + 110) * MiB
    elif arch == "mllama":
        # GraphSize's mllama branch (v0.4.0-v0.12.10). ropeFreqsCount is read as GroupLayers()["rope_freqs"]
        # ["weights"], a key no tensor has (the GGUF's is rope_freqs.weight): 0
        full = max(4 * batch * (2 + 3 * e + ehk * h + context * (1 + h)), 4 * batch * (e + V))
        partial = max(4 * (batch * (2 * e + 1 + context * (1 + h) + ehk * h) + ehk * context * hkv),
                      4 * batch * (e + V) + e * V * 105 // 128)
    return partial, full


# ---------------------------------------------------------------------------------------------------------
# Era A/B: llm/memory.go estimateGPULayers


@dataclass(frozen=True)
class OGpu:
    """One GPU as Ollama's scheduler sees it (ml.DeviceInfo): free memory and its MinimumMemory()."""

    id: str
    free: int
    minimum: int
    library: str = "cuda"
    sms: int = 0  # streaming multiprocessors (the Device's sm_count, from the GPU catalog); 0 = unknown
    cc: tuple[int, int] | None = None  # NVIDIA compute capability; None = unknown
    gfx: str | None = None  # AMD: the LLVM target ROCm reports (the Device's gfx_target); None = unknown
    # Vulkan: the driver's maxBufferSize, the largest buffer ggml-vulkan creates (ggml_vk_create_buffer refuses a
    # larger one: "Requested buffer size exceeds device buffer size limit"); None = unknown or no such limit
    max_buffer: int | None = None


@dataclass
class LayerEstimate:
    """estimateGPULayers' MemoryEstimate and the fields its LogValue prints."""

    layers: int  # layers.offload (output layer included)
    gpu_sizes: list[int]  # memory.required.allocations
    tensor_split: list[int]  # layers.split
    vram: int  # memory.required.partial
    total: int  # memory.required.full
    graph: Graph
    memory_weights: int
    output_bytes: int
    graph_full: int
    graph_partial: int
    fully_loaded: bool
    version: Version
    gpus: list[OGpu] = field(default_factory=list)
    projector_weights: int = 0
    logged_partial: int | None = None  # memory.required.partial as printed, where it is not `vram` (v0.1.35-v0.1.44)

    def log_fields(self, num_gpu: int, gpu_overhead: int, n_blocks: int) -> dict[str, Any]:
        v = self.version
        if v < V_WEIGHTS_NO_KV:
            w_total, w_rep = self.memory_weights, self.memory_weights - self.output_bytes
        elif v < V_PER_LAYER_KV:
            w_total = w_rep = self.memory_weights
        else:
            w_total, w_rep = self.memory_weights + self.output_bytes, self.memory_weights
        return {
            "layers.requested": num_gpu,
            "layers.model": n_blocks + 1,
            "layers.offload": self.layers,
            "layers.split": list(self.tensor_split) if len(self.gpus) > 1 else [],
            "memory.available": [gp.free for gp in self.gpus],
            "memory.gpu_overhead": gpu_overhead,
            "memory.required.full": self.total,
            "memory.required.partial": self.vram if self.logged_partial is None else self.logged_partial,
            "memory.required.kv": self.graph.kv_total,
            "memory.required.allocations": list(self.gpu_sizes),
            "memory.weights.total": w_total,
            "memory.weights.repeating": w_rep,
            "memory.weights.nonrepeating": self.output_bytes,
            "memory.graph.full": self.graph_full,
            "memory.graph.partial": self.graph_partial,
        }


def estimate_gpu_layers(g: GgufView, version: Version, gpus: list[OGpu], num_ctx: int, num_batch: int,
                        num_parallel: int, kvct: str, flash_attention: bool, num_gpu: int, gpu_overhead: int,
                        projector_weights: int = 0, projector_last: int = 0,
                        mllama_branch: bool = True) -> LayerEstimate:
    """llm/memory.go estimateGPULayers@f560bd077^, with the older forms where the version asks for them.
    `projector_weights` is gpuZeroOverhead (on the first GPU with space), `projector_last` the Ollama-engine
    projector that v0.7.1+ places with the output layer (memoryLastLayer, d75557747)."""
    gr = graph_size(g, version, num_ctx, num_batch, num_parallel, kvct, flash_attention, mllama_branch)
    if version < V_PER_GPU_ESTIMATE:
        return _pooled_estimate(g, version, gpus, gr, num_gpu, projector_weights)
    kv = list(gr.kv)
    n = g.block_count
    overhead = gpu_overhead if version >= V_GPU_OVERHEAD else 0
    # one layer as a buffer: blk.0 (v0.7.0 only: the largest layer group of the file)
    if V_MAX_LAYER_BUFFER <= version < V_BLK0_BUFFER_AGAIN:
        layer_size = max([*g.blk_sizes, *g.groups.values()], default=0)
    else:
        layer_size = g.blk_sizes[0] if g.blk_sizes else 0
    per_layer_kv = version >= V_PER_LAYER_KV
    layer_size += kv[0] if kv else 0
    partial, full = gr.partial, gr.full
    library = gpus[0].library if gpus else "cpu"
    if gpus and library == "metal":
        partial = full  # "on metal there's no partial offload overhead"
    elif len(gpus) > 1:
        full = partial  # "multigpu should always use the partial graph size"
    output = g.output_bytes
    gpu_zero_overhead = projector_weights

    tensor_split = [0] * len(gpus)
    allocations = [0] * len(gpus)
    with_space: list[int] = []
    for i, gp in enumerate(gpus):
        gzo = gpu_zero_overhead if not with_space else 0
        if gp.free < overhead + gzo + max(partial, full) + gp.minimum + 2 * layer_size:
            continue  # "gpu has too little memory to allocate any layers"
        with_space.append(i)
        allocations[i] += gp.minimum + layer_size
    overflow = 0
    if with_space:
        allocations[with_space[0]] += gpu_zero_overhead
    elif version >= V_UNASSIGNED_TRACKED or not gpus:
        # before a2cc8571c (v0.7.1) a projector no GPU could hold fell out of the total (ollama/ollama#10765,
        # 0.7.0: 2.6 GiB without gemma3's 1.8 GiB projector); CPU-only, the CPU device always holds it
        overflow += gpu_zero_overhead

    layer_count = 0
    memory_weights = 0
    reverse = version >= V_MAX_LAYER_BUFFER
    order = range(n - 1, -1, -1) if reverse else range(n)
    for i in order:
        blk = g.blk_sizes[i]
        layer_size = blk + (kv[i] if per_layer_kv else gr.kv_total // n)
        memory_weights += blk if version >= V_WEIGHTS_NO_KV else layer_size
        if 0 <= num_gpu <= layer_count:
            if reverse:
                overflow += layer_size
            continue
        for j in range(len(with_space), 0, -1):
            gi = with_space[i % j]
            used = allocations[gi] + max(partial, full)
            if gpus[gi].free > overhead + used + layer_size:
                allocations[gi] += layer_size
                tensor_split[gi] += 1
                layer_count += 1
                break
            del with_space[i % j]
        if not with_space and reverse:
            overflow += layer_size
    fully_loaded = layer_count >= n
    if not reverse and not fully_loaded:
        overflow += (n - layer_count) * layer_size  # old form: the last layer's size for every missing layer

    last = output + projector_last  # memoryLastLayer
    if last > 0 and (num_gpu < 0 or layer_count < num_gpu):
        for j in range(len(with_space), 0, -1):
            gi = with_space[layer_count % j]
            used = allocations[gi] + max(partial, full)
            if gpus[gi].free > overhead + used + last:
                allocations[gi] += last
                tensor_split[gi] += 1
                layer_count += 1
                break
    if last > 0 and layer_count < n + 1:
        fully_loaded = False
        overflow += last

    for i in range(len(gpus)):
        if tensor_split[i] > 0:
            allocations[i] += full if fully_loaded else partial
    vram = sum(allocations)
    total = vram + overflow
    if not gpus or layer_count == 0:
        vram, layer_count = 0, 0  # Layers and VRAMSize stay 0 ("insufficient VRAM to load any model layers")
    return LayerEstimate(layers=layer_count, gpu_sizes=allocations, tensor_split=tensor_split, vram=vram, total=total,
                         graph=gr, memory_weights=memory_weights, output_bytes=output, graph_full=full,
                         graph_partial=partial, fully_loaded=fully_loaded, version=version, gpus=list(gpus),
                         projector_weights=projector_weights)


# ---------------------------------------------------------------------------------------------------------
# Era C layout: llm/server.go buildLayout / assignLayers / findBestFit / greedyFit (v0.12.11+)


def greedy_fit(layers: list[int], free: list[int], capacity: float, requested: int) -> list[list[int]]:
    """greedyFit: assign from the last layer down, filling the last GPU first. -> per GPU, its layer indices."""
    out: list[list[int]] = [[] for _ in free]
    device = len(free) - 1
    space = int(free[device] * capacity)
    for i in range(len(layers) - 1, -1, -1):
        if requested >= 0 and len(layers) - 1 - i >= requested:
            break
        while True:
            if layers[i] <= space:
                out[device].insert(0, i)
                space -= layers[i]
                break
            device -= 1
            if device < 0:
                return out
            space = int(free[device] * capacity)
    return out


def find_best_fit(layers: list[int], free: list[int], requested: int, force: bool) -> list[list[int]]:
    """findBestFit: the smallest capacity factor that still fits the most layers (one performance group)."""
    high, low = (1000.0 if requested >= 0 and force else 1.0), 0.0
    best = greedy_fit(layers, free, high, requested)
    most = sum(map(len, best))
    while high - low > 1e-6:
        mid = (low + high) / 2
        a = greedy_fit(layers, free, mid, requested)
        if sum(map(len, a)) == most:
            high, best = mid, a
        else:
            low = mid
    return best


def assign_layers(layers: list[int], free: list[int], requested: int, require_full: bool = False,
                  last_used: int = 0) -> list[list[int]]:
    """assignLayers: pack onto as few GPUs as possible (GPUs sorted by free memory, largest first); when not
    everything fits, try again without the output layer."""
    got: list[list[int]] = [[] for _ in free]
    for _ in range(2):
        req = min(len(layers), requested)
        for i in range(last_used, len(free)):
            force = i == len(free) - 1 and not require_full
            sub = find_best_fit(layers, free[: i + 1], req, force)
            got = sub + [[] for _ in free[i + 1:]]
            total = sum(map(len, got))
            if total == len(layers) or total == req:
                break
        if sum(map(len, got)) == len(layers):
            return got
        layers = layers[:-1]
    return got


@dataclass
class EraCLayout:
    per_gpu: list[list[int]]  # layer indices per GPU (in the order of `gpus`)
    graph: int  # the graph each used GPU reserves
    weights: dict[str, int]  # "model weights" by device (GPU ids and "CPU")
    cache: dict[str, int]  # "kv cache" by device
    graphs: dict[str, int]  # "compute graph" by device
    total: int  # "total memory"
    gr: Graph | None = None

    @property
    def n_layers(self) -> int:
        return sum(map(len, self.per_gpu))


def _pooled_estimate(g: GgufView, version: Version, gpus: list[OGpu], gr: Graph, num_gpu: int,
                     projector_weights: int) -> LayerEstimate:
    """llm/memory.go EstimateGPULayers of v0.1.33-v0.1.44: the GPUs' free memory pooled, the graph once per GPU,
    layers counted in file order against the pool (ollama/ollama#4636, 0.1.39: command-r Q8_0, 5 layers on
    7.8 GiB, full 38.9 GiB, partial 7.7 GiB). From v0.1.38 blk.0 is added as a buffer and num_gpu is honoured;
    the CPU (library cpu) is one device with no minimum."""
    n = g.block_count
    n_dev = max(len(gpus), 1)
    available = sum(gp.free for gp in gpus)
    minimum = (gpus[0].minimum if gpus else 0) + projector_weights
    if version >= V_POOLED_ESTIMATE_BUFFER:
        minimum += g.blk_sizes[0] if g.blk_sizes else 0
    honour = version >= V_POOLED_ESTIMATE_BUFFER and num_gpu >= 0
    kv_total = gr.kv_total
    partial, full = gr.partial * n_dev, gr.full * n_dev
    if gpus and gpus[0].library == "metal":
        partial = full  # "on metal there's no partial offload overhead"
    # the mmap'd Metal output preallocation (use_mmap on Metal) is not modelled: the output goes at the end
    total, vram = minimum + full, minimum + partial
    layer_count = 0
    for i in range(n):
        layer = g.blk_sizes[i] + kv_total // n  # "KV is proportional to the number of layers"
        total += layer
        if (honour and layer_count + 1 <= num_gpu) or (not honour and available > vram + layer):
            vram += layer
            layer_count += 1
    output = g.output_bytes
    total += output
    if (honour and layer_count + 1 <= num_gpu) or (not honour and available > total):
        layer_count, vram = n + 1, total
    weights = total - minimum - full - kv_total  # memoryWeights: the blocks and the output layer
    fully = layer_count >= n + 1
    # the line prints memoryRequiredPartial before the returns that zero it: "if gpus[0].Library == "cpu" {
    # return 0, 0, memoryRequiredTotal }" and "insufficient VRAM to load any model layers" come after slog.Info
    # from v0.1.35 (v0.1.34 returned for the CPU first): ollama/ollama#4726 (v0.1.38-v0.1.41, llama3:8b on the CPU,
    # memory.required.partial="794.5 MiB" = blk.0 117.0 MiB + the partial graph 677.5 MiB; "0 B" before)
    logged = vram
    if not gpus or vram > available:
        layer_count, vram = 0, 0  # CPU, or "insufficient VRAM to load any model layers"
    return LayerEstimate(layers=layer_count, gpu_sizes=[vram] if gpus else [], tensor_split=[],
                         vram=vram, total=total, graph=gr, memory_weights=weights, output_bytes=output,
                         graph_full=full, graph_partial=partial, fully_loaded=fully, version=version,
                         gpus=list(gpus), projector_weights=projector_weights, logged_partial=logged)


def layout_era_c(layer_weights: list[int], layer_cache: list[int], gpus: list[OGpu], graph_partial: int,
                 graph_full: int, gpu_overhead: int, num_gpu: int, buffer: int = 0,
                 cpu_weights: list[int] | None = None, backoff: float = 0.0) -> EraCLayout:
    """llamaServer.Load + createLayout (v0.13.0): every GPU's free memory less one layer as a buffer (`buffer`),
    its MinimumMemory, OLLAMA_GPU_OVERHEAD and the graph of the GPUs in use; layers fitted by assignLayers;
    the graph is full when every layer (output included) is on a GPU. cpu_weights: the layers' weights as the CPU
    holds them where they differ from a GPU's (layer_weights). backoff: the share of each GPU's free memory
    llm/server.go buildLayout also reserves after a failed allocation (float32(FreeMemory) * backoff, v0.11.5+)."""
    order = sorted(range(len(gpus)), key=lambda i: -gpus[i].free)  # sort.Reverse(ByFreeMemory)
    graph_of = [0] * len(gpus)
    layers = [w + c for w, c in zip(layer_weights, layer_cache, strict=True)]
    per_gpu: list[list[int]] = [[] for _ in gpus]
    used_count = 0
    for _ in range(len(gpus) + 1):
        free = []
        for i in order:
            f = max(gpus[i].free - buffer, 0)
            reserved = gpus[i].minimum + gpu_overhead + graph_of[i] + int(gpus[i].free * backoff)
            free.append(f - reserved if f > reserved else 0)
        assigned = assign_layers(layers, free, num_gpu)
        per_gpu = [[] for _ in gpus]
        for pos, i in enumerate(order):
            per_gpu[i] = assigned[pos]
        n_used = sum(1 for x in per_gpu if x)
        if n_used > used_count:
            used_count = n_used
            for i, x in enumerate(per_gpu):
                if x:
                    graph_of[i] = max(graph_partial, graph_full)
            continue
        break
    n_total = len(layers)
    graph = graph_full if sum(map(len, per_gpu)) >= n_total else graph_partial
    weights: dict[str, int] = {}
    cache: dict[str, int] = {}
    graphs: dict[str, int] = {}
    on_gpu = set()
    for i, ls in enumerate(per_gpu):
        if not ls:
            continue
        on_gpu.update(ls)
        weights[gpus[i].id] = sum(layer_weights[j] for j in ls)
        c = sum(layer_cache[j] for j in ls)
        if c:
            cache[gpus[i].id] = c
        graphs[gpus[i].id] = graph
    cpu_w = sum(w for j, w in enumerate(cpu_weights or layer_weights) if j not in on_gpu)
    cpu_c = sum(c for j, c in enumerate(layer_cache) if j not in on_gpu)
    if cpu_w:
        weights["CPU"] = cpu_w
    if cpu_c:
        cache["CPU"] = cpu_c
    total = sum(weights.values()) + sum(cache.values()) + sum(graphs.values())
    return EraCLayout(per_gpu=per_gpu, graph=graph, weights=weights, cache=cache, graphs=graphs, total=total)


# ---------------------------------------------------------------------------------------------------------
# Era D: llm/llama_server.go PredictServerVRAM, server/sched.go automatic batch (fb3076099)


def predict_server_vram(spec: ModelSpec, g: GgufView, file_bytes: int, num_ctx: int) -> int:
    """PredictServerVRAM: file size + 2 (K+V) * layers * kv_heads_min * (embedding / heads_max) * ctx * 2 bytes
    ("intentionally conservative")."""
    head_dim = g.embedding // g.heads_max if g.heads_max else 0
    kv_heads = g.heads_kv_min or 1
    return file_bytes + 2 * g.block_count * kv_heads * head_dim * num_ctx * 2


def generation_batch_surcharge(batch: int) -> int:
    if batch >= 2048:
        return 2 * GiB
    if batch >= 1024:
        return 768 * MiB
    return 0


def automatic_generation_batch(effective_ctx: int, predicted: int, available: int, fa_disabled: bool,
                               cuda: bool, small_cuda: bool) -> int:
    """server/sched.go automaticGenerationBatch: 512 up to 4096 tokens, 1024 up to 32768, else 2048, stepped
    down unless the prediction leaves headroom (<= 60% of available for 2048, <= 75% for 1024, and the batch
    surcharge within 80%); CUDA without flash attention stays at 512 (256 on <= 8 GiB GPUs past 4096 tokens)."""
    if fa_disabled and cuda:
        return 256 if (effective_ctx > 4096 and small_cuda) else 512
    batch = 2048 if effective_ctx > 32768 else 1024 if effective_ctx > 4096 else 512

    def fits(b: int) -> bool:
        if predicted == 0 or available == 0:
            return True
        threshold = available * 80 // 100
        if predicted > threshold:
            return False
        if b >= 2048 and predicted > available * 60 // 100:
            return False
        if 1024 <= b < 2048 and predicted > available * 75 // 100:
            return False
        return generation_batch_surcharge(b) <= threshold - predicted

    while batch > 512 and not fits(batch):
        batch = 1024 if batch > 1024 else 512
    return batch
