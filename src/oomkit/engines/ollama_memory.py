"""Ollama's own memory arithmetic: the figures it logs and shows in `ollama ps`, computed with its formulas, its
known mistakes included (q8_0 counted as 1 byte per element, q4_0 as 0.5; a KV cache for embedding models; one
graph formula per architecture). What the runner really allocates is oomkit.engines.ollama's job.

Sources, all in ollama/ollama (cited as `file:function@commit-or-tag`):

- era A/B: llm/memory.go estimateGPULayers and fs/ggml/ggml.go GraphSize at f560bd077^ (v0.12.10, the last
  release that has them); older forms are selected by version, each with the commit that changed it;
- era C (v0.12.11 - v0.24): llm/server.go llamaServer.Load, createLayout/buildLayout/assignLayers/findBestFit/
  greedyFit at v0.13.0 (the llama engine still sizes KV and graph with GraphSize);
- the Ollama engine's own KV cache: kvcache/causal.go Causal.Init, runner/ollamarunner/cache.go NewInputCache;
- era D (v0.30+): llm/llama_server.go PredictServerVRAM and server/sched.go automaticGenerationBatch at fb3076099.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ..model.archs import INTERVAL_HYBRIDS, NO_CACHE_ARCHS
from ..model.spec import LayerKind, ModelSpec
from ..quant import ggml
from ..units import GiB, MiB, fmt_bytes

Version = tuple[int, int, int]


def human_bytes2(b: int) -> str:
    """format/bytes.go HumanBytes2: what Ollama prints for every size (binary units, one decimal)."""
    return fmt_bytes(b, decimals=1)


# ---------------------------------------------------------------------------------------------------------
# The model as Ollama's GGUF reader sees it (fs/ggml/ggml.go KV accessors, Tensors().GroupLayers())


@dataclass(frozen=True)
class GgufView:
    arch: str
    block_count: int
    embedding: int
    vocab: int
    heads: tuple[int, ...]  # KV.HeadCount(): per layer, 0 where the GGUF array has 0
    heads_kv: tuple[int, ...]  # KV.HeadCountKV()
    key_length: int  # KV.EmbeddingHeadCountK(): attention.key_length, else embedding / head_count_min
    value_length: int
    blk_sizes: tuple[int, ...]  # GroupLayers()["blk.N"].Size()
    groups: dict[str, int]  # other groups by name ("output_norm", "output", "token_embd", ...)
    sliding_window: int = 0
    ssm: tuple[int, int, int, int] = (0, 0, 0, 0)  # d_conv, d_inner, d_state, n_group
    ffn_gate_exps_bytes: int = 0  # blk.0.ffn_gate_exps.weight (Mixtral 8x22B branch of the llama formula)
    feed_forward_length: int = 0
    qkv_bias_len: int = 0  # blk.0.attn_qkv.bias (chatglm branch)
    is_embedding: bool = False  # <arch>.pooling_type present
    labels: tuple[str, ...] = ()

    @property
    def heads_max(self) -> int:
        return max(self.heads, default=1) or 1

    @property
    def heads_min(self) -> int:
        return min(self.heads, default=1)

    @property
    def heads_kv_max(self) -> int:
        return max(self.heads_kv, default=1) or 1

    @property
    def heads_kv_min(self) -> int:
        return min(self.heads_kv, default=1)

    @property
    def embedding_heads(self) -> int:
        """KV.EmbeddingHeadCountMax(): embedding / HeadCountMin() (0 when the minimum is 0)."""
        return self.embedding // self.heads_min if self.heads_min else 0

    @property
    def output_bytes(self) -> int:
        """memoryLayerOutput: output_norm + output, or token_embd when the output is tied (llm/memory.go)."""
        out = self.groups.get("output_norm", 0)
        return out + (self.groups["output"] if "output" in self.groups else self.groups.get("token_embd", 0))


def gguf_view(spec: ModelSpec) -> GgufView:
    """The KV accessors GraphSize reads, filled from the ModelSpec the way the GGUF would carry them."""
    n = spec.n_layers
    labels: list[str] = []
    att = [layer.attention for layer in spec.layers if layer.attention is not None]
    # Per-layer head counts: hybrids whose GGUF stores head_count_kv as an array with zeros for the recurrent
    # layers (granitehybrid, jamba, lfm2, nemotron_h: llama.cpp's KV_ZERO_HYBRIDS) show 0 there; the interval
    # hybrids (qwen3next, qwen35) store scalars, so Ollama sees attention heads on every layer.
    scalar_heads = spec.architecture in INTERVAL_HYBRIDS or not att
    h_scalar = max((a.n_heads for a in att), default=0)
    hkv_scalar = max((_kv_heads(a) for a in att), default=0)
    heads, heads_kv = [], []
    is_embedding = spec.architecture in NO_CACHE_ARCHS
    for layer in spec.layers:
        a = layer.attention
        if a is not None:
            heads.append(a.n_heads)
            heads_kv.append(_kv_heads(a))
        elif scalar_heads or layer.kind is LayerKind.NONE and is_embedding:
            heads.append(h_scalar)
            heads_kv.append(hkv_scalar)
        else:
            heads.append(0)
            heads_kv.append(0)
    k_len = max((_head_k(a) for a in att), default=0)
    v_len = max((_head_v(a) for a in att), default=0)
    if not att:
        # encoder-only models carry no attention spec here: read K and V widths off the weights, as the GGUF's
        # head_count/head_count_kv and key_length would give them (BERT: heads = kv heads, K = V = n_embd)
        kv_w = _kv_width_from_tensors(spec)
        h = 1
        heads, heads_kv = [h] * n, [h] * n
        k_len = v_len = kv_w // 2
        if is_embedding:
            labels.append("Ollama estimates a KV cache for this embedding model from its attention weights "
                          "(llama.cpp allocates none)")
    blk = [0] * n
    groups: dict[str, int] = {}
    for t in spec.weights.tensors:
        if t.layer is not None and t.layer < n and t.name.startswith("blk."):
            blk[t.layer] += t.nbytes
        elif t.layer is None:
            key = t.name.split(".")[0]
            groups[key] = groups.get(key, 0) + t.nbytes
    window = max((a.window or 0 for a in att if a.window), default=0)
    st = next((layer.recurrent for layer in spec.layers if layer.recurrent is not None), None)
    ssm = (st.d_conv, st.d_inner, st.d_state, st.n_group) if st is not None else (0, 0, 0, 0)
    by_name = {t.name: t for t in spec.weights.tensors if t.name.startswith("blk.0.")}
    exps = by_name.get("blk.0.ffn_gate_exps.weight")
    ffn0 = spec.layers[0].ffn if spec.layers else None
    qkv_bias = by_name.get("blk.0.attn_qkv.bias")
    return GgufView(
        arch=spec.architecture, block_count=n, embedding=spec.n_embd, vocab=spec.n_vocab,
        heads=tuple(heads), heads_kv=tuple(heads_kv), key_length=k_len, value_length=v_len,
        blk_sizes=tuple(blk), groups=groups, sliding_window=window, ssm=ssm,
        ffn_gate_exps_bytes=exps.nbytes if exps is not None else 0,
        feed_forward_length=(ffn0.n_ff_expert or ffn0.n_ff) if ffn0 else 0,
        qkv_bias_len=qkv_bias.shape[0] if qkv_bias is not None else 0,
        is_embedding=is_embedding, labels=tuple(labels),
    )


def _kv_heads(a) -> int:
    return 1 if a.kv_lora_rank and a.latent_cache else a.n_kv_heads


def _head_k(a) -> int:
    # MLA-converted GGUFs store key_length = kv_lora_rank + rope and head_count_kv = 1
    return a.kv_lora_rank + a.qk_rope_head_dim if a.kv_lora_rank and a.latent_cache else a.head_dim_k


def _head_v(a) -> int:
    return a.kv_lora_rank if a.kv_lora_rank and a.latent_cache else a.head_dim_v


def _kv_width_from_tensors(spec: ModelSpec) -> int:
    for t in spec.weights.tensors:
        if t.name == "blk.0.attn_qkv.weight" and len(t.shape) == 2:
            return t.shape[1] * 2 // 3
    k = next((t for t in spec.weights.tensors if t.name == "blk.0.attn_k.weight"), None)
    v = next((t for t in spec.weights.tensors if t.name == "blk.0.attn_v.weight"), None)
    if k is not None and v is not None and len(k.shape) == 2 and len(v.shape) == 2:
        return k.shape[1] + v.shape[1]
    return 2 * spec.n_embd


# ---------------------------------------------------------------------------------------------------------
# Versions at which Ollama's arithmetic changed (first release that has the change; git tag --contains)

V_LLAMA_VOCAB_GRAPH = (0, 3, 10)  # 2003d6015 "llama3.1 memory": llama full graph gains max(.., 4b(e+V))
V_GPU_OVERHEAD = (0, 3, 10)  # b05c9e83d: OLLAMA_GPU_OVERHEAD
V_KV_REFACTOR = (0, 4, 0)  # d07cf41a9: GraphSize returns kv (with mllama cross-attention)
V_KV_QUANT = (0, 5, 0)  # 1bdab9fdb: OLLAMA_KV_CACHE_TYPE, kvCacheBytesPerElement
V_WEIGHTS_NO_KV = (0, 6, 1)  # 033cec232: memory.weights.* stop counting each layer's KV
V_PER_LAYER_KV = (0, 6, 3)  # f66216e39: per-layer KV (gemma3 sliding window), weights.total gains the output
V_MAX_LAYER_BUFFER = (0, 7, 0)  # 0478d440f: buffer = largest layer, layers placed last to first
V_BLK0_BUFFER_AGAIN = (0, 7, 1)  # 3fe74fba4: buffer back to blk.0 (placement order stays reversed)
V_GEMMA3N_X4 = (0, 9, 3)  # ba0490267: gemma3n graph x4
V_GPTOSS = (0, 11, 0)  # fa7776fd2 gpt-oss: its own KV (4096-token SWA memory) and graph
V_GPTOSS_PARTIAL_EQ_FULL = (0, 11, 3)  # fcec04bf4 "gptoss: fix memory calc"
V_GPTOSS_PARTIAL_ONLY = (0, 11, 5)  # 1a19df1f3: partial = 2 h/hkv kvTotal/6, full = partial
V_GPTOSS_FA_GRAPH = (0, 11, 8)  # 85ccf7354: with flash attention (4 np + ctx>>10 + 110) MiB
V_RECURRENT = (0, 11, 11)  # 7b91c9ce5 "Hybrid and recurrent memory estimates" (PR #12186)
V_CTX_INSIDE_GRAPHSIZE = (0, 10, 0)  # context *= numParallel moved into GraphSize; batch = min(num_ctx, num_batch)
# Ollama engine KV cache (kvcache/causal.go)
V_CAUSAL_SWA = (0, 6, 3)  # per-sequence capacity, sliding-window layers sized np*window + batch
V_SWA_MEM = (0, 11, 0)  # 4183bb057: SWA memory size (NewSWAMemCache), "> capacity" -> full
V_SWA_EXTRA_TOKEN = (0, 12, 4)  # 1fc35f126: +1 token with parallel sequences, ">= capacity" -> full
V_CACHE_PAD_256 = (0, 13, 2)  # 7837a5bc7 "ggml: Always set cache padding to 256" (32 without FA before)


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
               flash_attention: bool) -> Graph:
    """GraphSize(context, batch, numParallel, kvCacheType, useFlashAttention) plus estimateGPULayers' defaults
    for a zero graph (llm/memory.go: partial = h/hkv * kvTotal / 6, full = partial)."""
    labels: list[str] = []
    context = num_ctx * num_parallel  # sched/server multiply num_ctx by the parallel slots
    if version >= V_CTX_INSIDE_GRAPHSIZE:
        batch = min(num_ctx, num_batch)  # memory.go: min(opts.NumCtx, opts.NumBatch), NumCtx per slot
    else:
        batch = min(context, num_batch)  # opts.NumCtx already held num_ctx x numParallel
    e, V, n = g.embedding, g.vocab, g.block_count
    h, hkv = g.heads_max, g.heads_kv_max
    eh, ehk, ehv = g.embedding_heads, g.key_length, g.value_length
    bpe = kv_bytes_per_element(kvct, version)

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
    default_kv_total = sum(kv) if total is None else total

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
    elif arch in ("gemma", "gemma2", "gemma3", "gemma3n"):
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
    elif arch == "stablelm":
        full = 4 * batch * (context * (1 + h) + 3 * e + 2)
        partial = max(4 * batch * (V + 2 * e), full)
    elif arch == "deepseek2":
        full = max(4 * batch * (3 * e + V), 4 * batch * (3 * e + 2 + context * (1 + hkv) + 2 * ehk * hkv))
        partial = max(4 * batch * (3 * e + V) + e * V * 105 // 128,
                      4 * batch * (2 * e + 1 + 2 * ehk * hkv + context + context * hkv) + 4 * ehk * context * hkv
                      + e * ehk * hkv * 9 // 16)
    elif arch == "chatglm":
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
        labels.append("mllama cross-attention KV and graph are not modelled; Ollama's generic formula is used")

    # memory.go sums the per-layer KV GraphSize returns (one uniform total before v0.6.3)
    kv_total = total if total is not None else sum(kv)
    # llm/memory.go estimateGPULayers: a zero graph falls back to h/hkv * kvTotal / 6 (GQA() before v0.6.3)
    if partial == 0:
        partial = (g.heads_max // max(g.heads_kv_min, 1)) * kv_total // 6
    if full == 0:
        full = partial
    return Graph(kv=tuple(kv), kv_total=kv_total, partial=partial, full=full, labels=tuple(labels))


# ---------------------------------------------------------------------------------------------------------
# Era A/B: llm/memory.go estimateGPULayers


@dataclass(frozen=True)
class OGpu:
    """One GPU as Ollama's scheduler sees it (ml.DeviceInfo): free memory and its MinimumMemory()."""

    id: str
    free: int
    minimum: int
    library: str = "cuda"


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
            "memory.required.partial": self.vram,
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
                        projector_weights: int = 0) -> LayerEstimate:
    """llm/memory.go estimateGPULayers@f560bd077^, with the older forms where the version asks for them."""
    gr = graph_size(g, version, num_ctx, num_batch, num_parallel, kvct, flash_attention)
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
    else:
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

    if output > 0 and (num_gpu < 0 or layer_count < num_gpu):
        for j in range(len(with_space), 0, -1):
            gi = with_space[layer_count % j]
            used = allocations[gi] + max(partial, full)
            if gpus[gi].free > overhead + used + output:
                allocations[gi] += output
                tensor_split[gi] += 1
                layer_count += 1
                break
    if output > 0 and layer_count < n + 1:
        fully_loaded = False
        overflow += output

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


def layout_era_c(layer_weights: list[int], layer_cache: list[int], gpus: list[OGpu], graph_partial: int,
                 graph_full: int, gpu_overhead: int, num_gpu: int, buffer: int = 0) -> EraCLayout:
    """llamaServer.Load + createLayout (v0.13.0): every GPU's free memory less one layer as a buffer (`buffer`),
    its MinimumMemory, OLLAMA_GPU_OVERHEAD and the graph of the GPUs in use; layers fitted by assignLayers;
    the graph is full when every layer (output included) is on a GPU."""
    order = sorted(range(len(gpus)), key=lambda i: -gpus[i].free)  # sort.Reverse(ByFreeMemory)
    graph_of = [0] * len(gpus)
    layers = [w + c for w, c in zip(layer_weights, layer_cache, strict=True)]
    per_gpu: list[list[int]] = [[] for _ in gpus]
    used_count = 0
    for _ in range(len(gpus) + 1):
        free = []
        for i in order:
            f = max(gpus[i].free - buffer, 0)
            reserved = gpus[i].minimum + gpu_overhead + graph_of[i]
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
    cpu_w = sum(w for j, w in enumerate(layer_weights) if j not in on_gpu)
    cpu_c = sum(c for j, c in enumerate(layer_cache) if j not in on_gpu)
    if cpu_w:
        weights["CPU"] = cpu_w
    if cpu_c:
        cache["CPU"] = cpu_c
    total = sum(weights.values()) + sum(cache.values()) + sum(graphs.values())
    return EraCLayout(per_gpu=per_gpu, graph=graph, weights=weights, cache=cache, graphs=graphs, total=total)


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
        full = PAD(num_parallel * capacity, pad)
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
                cells = PAD(num_parallel * mem + num_batch, pad)
        elif version < V_CAUSAL_SWA:
            cells = PAD(num_parallel * capacity, pad)
        k = _row(dtype, _kv_heads(a) * _head_k(a))
        v = _row(dtype, _kv_heads(a) * _head_v(a))
        out_b[layer.index] = (k + v) * cells
        out_c[layer.index] = cells
    return CausalCache(out_b, out_c)


def _row(t, n: int) -> int:
    return math.ceil(n * t.type_size / t.block_size)


def PAD(x: int, n: int) -> int:  # noqa: N802 - ggml's GGML_PAD / Ollama's roundUp
    return (x + n - 1) // n * n


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
