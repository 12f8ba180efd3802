"""The buffers llama.cpp sizes by running a graph: the compute buffers (graph_reserve of a worst-case ubatch,
ggml-alloc's peak per backend) and the output buffer (logits)."""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable
from dataclasses import dataclass, fields, replace
from functools import lru_cache
from typing import Any, NamedTuple

from ...memo import ByObject
from ...memory import Device
from ...model.archs import KDA_ARCHS, MSA_INDEXER_ARCHS, NO_CACHE_ARCHS
from ...model.spec import Attention, LayerSpec, ModelSpec, TensorSpec
from ...quant.ggml import GgmlType
from ...units import round_up
from ..versions import llamacpp_build_on
from . import compute_graphs, galloc, sched_replay
from .backend_names import infer_backend
from .kv import Cache, Context, attention_layers
from .repack import repack_applies, repackable
from .settings import ERAS, NEWEST, LlamaCppSettings, build_number, speculative_n_max
from .weights import (
    LAYER0_TENSORS,
    Placement,
    gpu_alloc_size,
    loaded_tensors,
    model_buffers,
    sycl_refused_weights,
)


def output_buffer_bytes(spec: ModelSpec, ctx: Context, s: LlamaCppSettings) -> int:
    # llama_context::output_reserve(n_seq_max): (n_vocab [+ n_embd with embeddings]) * n_seq_max floats; the
    # encoder-decoder T5 always reserves the embeddings too ("hacky enc-dec support": has_embd = true for LLM_ARCH_T5).
    # n_outputs_max (speculation's 1 + n_max rows per slot) does not size it at load: it grows at the first batch
    # with more outputs (measured: 1.96 MiB at 4 slots for n_outputs_max 4, 16, 68 and n_batch)
    # Before PR #14208 (ERAS embd_rework, src/llama-context.cpp output_reserve to b5679): no logits with
    # --embeddings (has_logits = !cparams.embeddings) and the embedding rows only with no pooling (has_embd =
    # embeddings && pooling_type == NONE): --embeddings --pooling mean reserves nothing (ROCm/ROCm#4903, b5618:
    # 'output buffer size = 0.00 MiB')
    # Before PR #7477 (ERAS pooled_embd_any_model, b3194; llama.cpp llama_output_reserve): has_logits =
    # cparams.causal_attn and has_embd = embeddings && (hparams.causal_attn || pooling NONE), a causal model keeping
    # both (ollama/ollama#3796, b2679, --embedding: 0.50 MiB). The encoders (NO_CACHE_ARCHS) are the non-causal ones.
    if s.embeddings and spec.architecture != "t5" and not ERAS.reached(ctx.build, "pooled_embd_any_model"):
        causal = spec.architecture not in NO_CACHE_ARCHS
        rows = (spec.n_vocab if causal else 0) + (spec.n_embd if causal or pooling_type(spec, s) == "none" else 0)
        return rows * max(1, ctx.n_seq_max) * 4
    if s.embeddings and spec.architecture != "t5" and not ERAS.reached(ctx.build, "embd_rework"):
        return spec.n_embd * max(1, ctx.n_seq_max) * 4 if pooling_type(spec, s) == "none" else 0
    per_output = spec.n_vocab + (spec.n_embd if s.embeddings or spec.architecture == "t5" else 0)
    return per_output * max(1, ctx.n_seq_max) * 4


def mean_pooling_input(spec: ModelSpec, ctx: Context, s: LlamaCppSettings) -> int:
    """The mean-pooling graph input of --embeddings --pooling mean before PR #14217 (ERAS mean_by_seq, b5713):
    src/llama-graph.cpp build_inp_mean, an n_tokens x n_tokens F32 input (later builds: n_tokens x n_seqs_unq), which
    llm_graph_context::build_pooling multiplies with the last hidden state at the graph's very end, after the output
    layer (the lm_head still built: the logits, n_vocab x n_tokens, are in the buffer). A graph input, it is on the
    host and copied to the device; ggml-alloc places a split's inputs first (ggml_gallocr_alloc_graph_impl:
    "allocate all graph inputs first"), in graph order: the hidden-state rows, the positions, the F32 KQ mask, the
    output ids, then the mean input, which stays alive to the last node. The logits, allocated once the layers have
    freed the inputs below it, cannot go under it: they sit above the whole input block. ROCm/ROCm#4903 (b5618,
    Qwen3-Embedding-8B, -ub 2048 at 40960 cells, -fa): ROCm0 1552.90 MiB = 32 (rows) + 320 (the F32 mask) + 16 (the
    mean input) + 1184.88 (151665 x 2048 logits) + the small inputs; ROCm_Host 368.02 = the inputs, the mean's 16
    among them. 0 elsewhere."""
    if not s.embeddings or pooling_type(spec, s) != "mean" or ERAS.reached(ctx.build, "mean_by_seq") \
            or spec.architecture in NO_CACHE_GRAPHS or spec.architecture == "t5":
        return 0
    T = min(ctx.n_ctx, ctx.n_ubatch)
    return T * T * 4


def pooling_type(spec: ModelSpec, s: LlamaCppSettings) -> str:
    """The context's pooling: --pooling, else the GGUF's <arch>.pooling_type (src/llama-context.cpp llama_context:
    an unspecified cparams.pooling_type takes hparams.pooling_type, none for a file without the key). The ModelSpec
    carries no pooling: the catalog's embedding family (converted with a sentence-transformers Pooling module,
    which the converter writes as <arch>.pooling_type) reads as pooled, its kind not known ("gguf")."""
    if s.pooling:
        return s.pooling
    src = spec.source or ""
    if src.startswith("catalog: "):
        from ...model import catalog  # lazy: only catalog models reach here

        entry = catalog.lookup(src[len("catalog: "):].split(" ", 1)[0])
        if entry and entry.family == "embedding":
            return "gguf"
    return "none"


# ---------------------------------------------------------------------------------------------------------
# Compute buffers (measured by llama.cpp: graph_reserve of a worst-case ubatch, ggml-alloc peak per backend)


@dataclass(frozen=True)
class ComputePhases:
    """The two candidate peaks of the worst-case graph (see compute_phases)."""

    output: int  # logits of every token, plus the hidden-state rows around them
    attention: int  # the largest layer workspace, masks included
    inputs: int  # what the CPU side keeps for a fully offloaded graph: the input rows and the masks
    # the buffer of a device that runs every layer and the output, where a whole-graph replay knows it (0: the
    # phases above say it; compute_graphs.gemma4_ple_graph with device=True)
    device: int = 0
    ffn: int = 0  # the feed-forward workspace alone (feed_forward_phases), beside a weight the scheduler copies in
    # the output phase on a device whose graph inputs are the scheduler's split-input copies (0: output says it;
    # a hybrid's logits there, see _compute_phases)
    split_output: int = 0


def reserved_outputs(ctx: Context, s: LlamaCppSettings) -> int:
    """The logits rows the worst-case graph reserves. Before PR #23861 ("llama: limit max outputs of
    llama_context", merged 2026-06-01) every token of the ubatch; since, at most n_outputs_max
    (src/llama-context.cpp sched_reserve: n_outputs_pp = min(n_tokens, n_outputs_max)), which llama-server and
    llama-cli (built on the server context since late 2025) set to n_parallel x (1 + the longest draft), at most
    n_batch and at least 1 (tools/server/server-context.cpp server_output_limits ->
    common_speculative_get_output_limits, ggml-org/llama.cpp@001d906a6; PR #23861 / #23988, the same day): one row
    per slot without speculation, the logs printing `llama_context: n_outputs_max = 1`. The library default
    (0 = n_batch) keeps every token for the other programs and the Python binding. The output buffer does not
    follow (output_buffer_bytes)."""
    T = min(ctx.n_ctx, ctx.n_ubatch)
    if ERAS.reached(ctx.build, "outputs_max") and s.program in ("llama-server", "llama-cli") and not s.embeddings:
        return min(T, max(1, min(ctx.n_batch, ctx.n_seq_max * (1 + speculative_n_max(s)))))
    return T


# Graphs whose attention reads the ubatch's own K and V through build_attn_inp_no_cache (llm_graph_input_attn_no_cache
# in src/llama-graph.cpp: n_kv = n_tokens, one n_tokens x n_tokens KQ mask): the encoders and diffusion models
# llama.cpp gives no cache (NO_CACHE_ARCHS), and llama-embed, which keeps a KV cache its graph never reads
# (src/models/llama.cpp: llm_build_llama<embed = true> builds build_attn_inp_no_cache).
# t5encoder too: llama.cpp@0c1e57098 still gives it a KV cache, but src/models/t5-enc.cpp attends through
# build_attn_inp_no_cache
NO_CACHE_GRAPHS = NO_CACHE_ARCHS | {"llama-embed", "t5encoder"}
# Graphs whose attention adds a relative position bias (src/models/t5-enc.cpp: kq_b from build_pos_bias, the
# attn_rel_b rows gathered by the T x T int32 bucket input, build_inp_pos_bucket_enc). build_attn_mha takes the
# flash-attention path only without kq_b, so the KQ scores are always materialised, and beside them the gathered
# bias rows (n_head x T x T floats) and their permuted copy (pos_bias, ggml_cont). Measured: 137.50 MiB at every
# context with -fa on (138.00 off: the f32 mask), n_embd 4096, 32 heads, -ub 512
# The T5 decoder's self-attention the same over the n_kv cache cells (src/models/t5-dec.cpp: kq_b from build_pos_bias
# of build_inp_pos_bucket_dec, n_kv x T buckets): the scores, the bias rows, their copy and the buckets grow with the
# cache; its cross-attention reads n_ctx_train encoder rows at reserve (build_inp_cross_embd without an encoder
# output), small beside them
REL_POS_BIAS_GRAPHS = frozenset({"t5encoder", "t5"})
# Graphs that end at the embeddings (res->t_embd) with no output projection: no logits rows (src/models/bert.cpp,
# modern-bert.cpp, neo-bert.cpp, eurobert.cpp, gemma-embedding.cpp, t5-enc, llama.cpp with embed = true)
EMBEDDING_GRAPHS = NO_CACHE_GRAPHS - {"dream", "llada", "llada-moe", "rnd1"}
# src/models/bert.cpp (bert, jina-bert-v2/v3, nomic-bert, nomic-bert-moe): post-norm, the FFN reads the attention
# norm's output and the layer input is freed by the residual add before it, one hidden-state row fewer below the FFN
POST_NORM_ENCODERS = frozenset({"bert", "jina-bert-v2", "jina-bert-v3", "nomic-bert", "nomic-bert-moe"})
# Before PR #12181 (e0dbec0b, b4881: KV_FIRST_GRAPH_UNTIL) build_bert in src/llama.cpp wrote its own attention for
# the separate wq / wk / wv branch (LLM_ARCH_BERT, LLM_ARCH_JINA_BERT_V2; read at b4779, d7cfe1ff, the build Ollama
# 0.6.1 vendors): the output ggml_cont_2d(kqv) is expanded from kqv = ggml_mul_mat(v, kq), so ggml_visit_parents
# makes V and its transposed copy first (v = ggml_cont(ggml_transpose(Vcur))), then K and its permuted copy
# (k = ggml_cont(ggml_permute(Kcur)), into V's freed block), then Q (into K's), then KQ: at the scores only the
# layer input, Q and the two copies are alive, four hidden-state rows with the mask; the graph has no flash-attention
# path. From b4881 build_attn expands Q, K and V first (llm_graph_context::build_attn, no-cache input)
EARLY_BERT_GRAPHS = frozenset({"bert", "jina-bert-v2"})
# src/models/minicpm3.cpp: the final norm is kept as res->t_embd and ggml_scale(cur, n_embd_base / n_embd) makes a
# new row block for the lm head: the logits sit one row higher (measured: 77.50 MiB at 4K, 12K and 16K x 4; at 8K
# scaled_head_swiglu_in_hole)
LM_HEAD_SCALED = frozenset({"minicpm3"})
# Qwen3-TTS's talker: a codec head narrower than the vocabulary, widened to n_vocab logits in the graph (compute_phases)
CODEC_HEAD_GRAPHS = frozenset({"qwen3tts"})


# The last build shown to run the older graph: llama.cpp b228aba (2024-05-12) and 8733e0c (spring 2025), run on
# the CPU with a 2-layer CodeLlama-7B-shaped file without flash attention, print 70.53 / 164.01 / 296.01 MiB at
# -c 512 / 2048 / 4096 (KQ + mask + Q + KQV + two rows; logits + one row), 0c1e57098 105.51 at 512; the b4880
# MI50 log (2664.00 per card) and the b5380 -sm row log (logits + one row) fit it. The second row of the 2026 CPU
# graph is build_inp_embd's unread embeddings input (PR #18898, ERAS embd_input: a graph input allocated first,
# never freed): sched_replay.llama_graph run all on the CPU gives llama-3.1-8b's 4-layer file 258.50 MiB without it
# and 266.50 with it (0c1e57098 prints 266.50 on the CPU, 258.50 on the H200, whose split leaves it on the host);
# #14307 (b5716, CPU) and node-llama-cpp#560 (b8100, CUDA0) print logits + one row. With flash attention the older
# graph's logits also sit above one hidden row:
# ggml-org/llama.cpp#9530 (b3779, Qwen2.5-7B on CUDA, 2048 x 512) 304.00 MiB = 297 + 7, ollama/ollama#7606 (v0.6.5,
# Qwen2.5-32B on ROCm) 306.22 = 297 + 9.22 (two rows: 311 / 317). A last layer whose FFN is one fused gate-up
# (src/llama-graph.cpp build_ffn LLM_FFN_SWIGLU before SWIGLU_OP_BUILD, e.g. at 558a7647 = b5190: two ggml_cont
# halves of the 2 n_ff up projection, then SiLU and the product in place on the first) puts them one n_ff block
# higher: GLM-Z1-32B's CUDA0 353.00 MiB at b5192 and b5274 (ik_llama.cpp PR #344 / #370) = 296 + 45 + 12 (read off
# those logs, not replayed)
OLD_GRAPH_LAST_BUILD = 5380
# Without flash attention the older graph's attention (K and V copied into views of the cache before KQ, the masks
# and three rows below the FFN) lasts until the stores became ggml_set_rows with index inputs, PR #14959 (ERAS
# set_rows, b6071). NeoZhangJianyu/ci_log's SYCL CI (llama-2-7b Q4_0, 4096 cells, 512-token ubatch, no flash
# attention): SYCL0 296.00 MiB in every build it ran from b3091 to b6070, 312.01 from b6093
OLD_ATTN_LAST_BUILD = ERAS["set_rows"] - 1


# the last phases computed: a fit's dry runs move layers and tensors at one context, which changes no phase
# (by the spec object, and by what else compute_phases reads)
_PHASES = ByObject[ComputePhases](512)


def _graph_shapes(spec: ModelSpec) -> Hashable:
    """A spec as compute_graphs' builders read it: its architecture, n_embd, n_vocab, trunk layers and the names and
    shapes of its tensors (not their types or sizes), equal for the weight formats of one model."""
    return (spec.architecture, spec.n_embd, spec.n_vocab, spec.trunk_layers,
            tuple((t.name, t.shape) for t in spec.weights.tensors))


# each spec's graph shapes, made once and shared by the specs of equal shapes (the first made: _shared), so that
# _peak's lookups find them equal by identity (comparing two specs' layers and tensors costs a tenth of a millisecond)
_SHAPES = ByObject[Hashable](64)


@lru_cache(maxsize=64)
def _shared(shapes: Hashable) -> Hashable:
    return shapes


class _Call:
    """One call of a graph builder, hashed and compared by the builder, the alignment, the spec's graph shapes and
    the other arguments (a dict or list by its items, in order); it carries the call's own arguments."""

    __slots__ = ("build", "align", "spec", "args", "kw", "key", "_hash")

    def __init__(self, build: Callable[..., tuple[int, list[galloc.Node]]], align: int, spec: ModelSpec,
                 args: tuple[Any, ...], kw: dict[str, Any]) -> None:
        self.build, self.align, self.spec, self.args, self.kw = build, align, spec, args, kw
        shapes = _SHAPES.get(spec, None, lambda: _shared(_graph_shapes(spec)))
        self.key = (build, align, shapes, tuple(map(_value, args)), tuple((k, _value(v)) for k, v in kw.items()))
        self._hash = hash(self.key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Call) and self._hash == other._hash and self.key == other.key

    def __hash__(self) -> int:
        return self._hash


def _value(x: Any) -> Hashable:
    """An argument as a hashable value: a dict or list as its items (a dict's values hashable as they are)."""
    if isinstance(x, dict):
        return dict, tuple(x.items())
    if isinstance(x, list):
        return list, tuple(map(_value, x))
    return x


# The peaks of the graphs replayed through ggml-alloc, kept: a plan or a fit comes back to the same graph many times
# (each weight format it weighs, each try of a context or a layer split, and an absorbed-MLA device's attention for
# each device of each try), and a graph costs milliseconds to build and replay. The builders are pure functions of
# the spec's graph shapes and their other arguments
@lru_cache(maxsize=512)
def _peak(call: _Call) -> int:
    return galloc.peak_bytes(*call.build(call.spec, *call.args, **call.kw), call.align)


@lru_cache(maxsize=128)
def _chunked(call: _Call, max_size: int, prefer_reuse: bool) -> int:
    """The buffers ggml-alloc reserves for the graph in chunks of at most max_size (galloc.chunk_sizes), summed."""
    return sum(galloc.chunk_sizes(*call.build(call.spec, *call.args, **call.kw), max_size, prefer_reuse, call.align))


def _replayed(build: Callable[..., tuple[int, list[galloc.Node]]], spec: ModelSpec, *args: Any,
              align: int = galloc.ALIGN, **kw: Any) -> int:
    """galloc.peak_bytes(*build(spec, *args, **kw), align), memoised (_peak)."""
    return _peak(_Call(build, align, spec, args, kw))


def compute_phases(spec: ModelSpec, ctx: Context, caches: list[Cache], n_outputs: int | None = None,
                   fa_f16_copies: bool = False, cuda_deps: bool = False, vk_order: bool = False) -> ComputePhases:
    """_compute_phases, memoised by the spec object and the contents of the context and caches."""
    key = (ctx, n_outputs, fa_f16_copies, cuda_deps, vk_order,
           tuple((c.name, c.cells, c.layers, c.k_bytes, c.v_bytes, tuple(c.k_bytes_by_layer.items()),
                  tuple(c.v_bytes_by_layer.items())) for c in caches))
    return _PHASES.get(spec, key, lambda: _compute_phases(spec, ctx, caches, n_outputs, fa_f16_copies, cuda_deps,
                                                          vk_order))


def _compute_phases(spec: ModelSpec, ctx: Context, caches: list[Cache], n_outputs: int | None = None,
                    fa_f16_copies: bool = False, cuda_deps: bool = False, vk_order: bool = False) -> ComputePhases:
    """Peak of the worst-case ubatch graph: llama_context::graph_reserve builds it with
    n_tokens = min(n_ctx, n_ubatch) and every token an output, and ggml-alloc sizes each backend's buffer to the
    most tensors alive at once. The live set is modelled at its two candidate peaks, fitted to llama.cpp's own
    "compute buffer size" lines (tests/test_groundtruth_llamacpp.py; within a few percent):

    - output: the logits of every token (n_vocab x T floats) and a hidden-state row, two with the unread
      embeddings input (ERAS embd_input) that only the buffer holding the graph inputs has;
    - attention: without flash attention the KQ scores (n_kv x T x n_head floats, softmax in place) and the
      f32 masks; with it, f16 masks only; plus Q, K, V, the attention output and three hidden-state rows.
      The reserve sizes n_kv to the whole cache (llama_kv_cache::init_full), so this grows with n_ctx.
      MLA (absorbed, src/models/deepseek2.cpp) holds the absorbed query and the latent output per head;
    - the feed-forward workspace and, for a last MoE layer with shared experts, the logits above the weighted
      experts' rows (feed_forward_phases); hybrids place the logits by the freed mask block (below);
    - a Mamba or RWKV layer's state op with its inputs (recurrent_phase), part of the layer workspace.

    fa_f16_copies: the graph runs on a ggml-cuda device (CUDA, HIP) that sizes the flash-attention output with
    F16 copies of a K / V cache of another type (fa_f16_bytes).
    cuda_deps: the graph runs on a ggml-cuda device whose graph_optimize keeps the MoE fusions' tensors alive
    (CUDA_FUSION_DEPS_BUILD): ComputePhases.device is then the whole split replayed with them where
    compute_graphs.moe_device_graph models the architecture (MOE_DEVICE_GRAPHS).
    """
    T = min(ctx.n_ctx, ctx.n_ubatch)
    f32 = 4
    resid = spec.n_embd * T * f32
    no_cache = spec.architecture in NO_CACHE_GRAPHS
    # the logits rows (reserved_outputs: every token of the ubatch unless the build reserves fewer); an embedding
    # graph has none, its output the t_embd rows
    rows_out = 0 if spec.architecture in EMBEDDING_GRAPHS else (T if n_outputs is None else n_outputs)
    # the logits beside one hidden-state row (the final norm), and from PR #18898 (ERAS embd_input) below them
    # build_inp_embd's unread embeddings input: a graph input, allocated first and never freed, in the buffer of the
    # backend that holds the graph inputs (the CPU's; a device's output phase drops it, compute_bytes). A last layer
    # with the fused gate-up FFN (OLD_GRAPH_LAST_BUILD) one n_ff block more
    old = ctx.build <= OLD_ATTN_LAST_BUILD and not ctx.flash_attn
    out_phase = spec.n_vocab * rows_out * f32 + (2 if ERAS.reached(ctx.build, "embd_input") else 1) * resid
    if ctx.build <= OLD_GRAPH_LAST_BUILD and rows_out and spec.trunk_layers:
        fused = _dense_ffn_rows(spec).get(spec.trunk_layers[-1].index, (0, 1, False))
        if fused[1] == 0:
            out_phase += fused[0] * T * f32
    if spec.architecture in LM_HEAD_SCALED and rows_out:
        out_phase += resid
    if no_cache:
        # the ubatch attends to itself: n_kv = T for every attention layer, one T x T mask
        run = [layer for layer in spec.trunk_layers if layer.attention is not None]
        cells = {layer.index: T for layer in run}
        masks = _mask_bytes(T, T, ctx.flash_attn)
    else:
        run = attention_layers(spec)
        cells = {il: c.cells for c in caches for il in c.layers}
        masks = sum(_mask_bytes(c.cells, T, ctx.flash_attn) for c in caches  # one KQ mask per cache
                    if not (c.name == "indexer" and spec.architecture in HC_GDN_ARCHS))
        if ctx.swa_mask_pair:
            masks *= 2  # KQ_mask and KQ_mask_swa over the one cache (kv.pre_iswa_swa_mask)
        if spec.architecture in HC_ATTN_ARCHS:
            # DeepSeek-V4: no mask for the empty non-SWA cache nor the compressor states (hc_attention_phase; the
            # feed-forward workspace counted 128 MiB too much at 128K with them)
            masks = dsv4_masks(caches, T, ctx.flash_attn)
    if spec.architecture == "chameleon" and rows_out:
        # src/models/chameleon.cpp masks the image tokens with ggml_set_1d(cur, img_logits, ...), a new tensor:
        # two copies of the logits, above the masks and one hidden-state row (two when the masks are at most one
        # row). Measured: 145.04 / 149.04 / 149.04 / 165.04 MiB at 4K / 8K / 16K / 32K, -ub 512, FA on
        out_phase = 2 * spec.n_vocab * rows_out * f32 + masks + (2 if masks <= resid else 1) * resid
    if spec.architecture in CODEC_HEAD_GRAPHS and rows_out:
        # the codec head's logits (output.weight: n_codec rows) are concatenated with a filler for the rest of the
        # vocabulary (REPEAT, n_vocab - n_codec floats a row, made after the first layer's attention and alive to the
        # end) into result_output (CONCAT, n_vocab floats a row): the filler sits above the masks and three rows, the
        # full logits above it and the final norm. Read off ggml-alloc's placement of llama.cpp@0c1e57098's CPU graph
        # (qwen3tts file: 20.02 + 56.50 + 4.00 + 62.50 = 143.02 MiB at 8K, -ub 512, FA on)
        n_codec = next((t.shape[1] for t in spec.weights.tensors if t.name == "output.weight"), spec.n_vocab)
        filler = (spec.n_vocab - n_codec) * rows_out * f32
        out_phase = max(out_phase, masks + 4 * resid + filler + spec.n_vocab * rows_out * f32)
    attn_phase = 0
    split_output = 0
    hybrid = any(layer.recurrent is not None and layer.recurrent.kind != "short_conv" for layer in spec.layers)
    # an iSWA pair without flash attention: each cache's V is transposed, so each has its own V-index input of
    # n_embd_v_gqa x T int64 (llama_kv_cache::build_input_v_idxs), alive until its last layer has stored; the fitted
    # rows below count one. Read off ggml-alloc's placement of llama.cpp@0c1e57098's reserve on the 6-layer gemma3
    # file at 4K x 4 split: two 8 MiB blocks below the first layers' FFN (132.51 MiB; 124.00 predicted with one).
    # Not before ERAS set_rows: from PR #14285 (b5817) to PR #14959 (b6071) llama_kv_cache_unified::cpy_v stores
    # through ggml_cpy unless LLAMA_SET_ROWS is set, so no node reads the indices and ggml-alloc places none
    # (ggml-org/llama.cpp#14709, b5902 with "LLAMA_SET_ROWS=0, using old ggml_cpy() method": SYCL0 667.01 MiB)
    iswa = [c for c in caches if c.layers and c.name in ("SWA", "non-SWA")] if not no_cache and not hybrid else []
    v_idxs = (0, -1)
    if len(iswa) > 1 and not ctx.flash_attn and ERAS.reached(ctx.build, "set_rows"):
        n_embd_v = max(layer.attention.n_kv_heads * layer.attention.head_dim_v for layer in run)
        v_idxs = ((len(iswa) - 1) * n_embd_v * T * 8, min(max(c.layers) for c in iswa))
    # the Q projection's width per layer (attn_q's rows: twice the heads' where a gate half rides along)
    q_width = {int(t.name.split(".")[1]): t.shape[-1] for t in spec.weights.tensors
               if fa_f16_copies and t.name.startswith("blk.") and t.name.endswith(".attn_q.weight")}
    early_bert = spec.architecture in EARLY_BERT_GRAPHS and ctx.build < KV_FIRST_GRAPH_UNTIL
    for layer in run:
        a = layer.attention
        if spec.architecture in KPOOL_INDEXER_ARCHS:
            continue  # kpool_indexer_phase
        n_kv = cells.get(layer.index, 0)
        kq = 0 if ctx.flash_attn and not early_bert else n_kv * T * a.n_heads * f32
        if spec.architecture in REL_POS_BIAS_GRAPHS:
            # the KQ scores, the bias rows and their copy above Q, K, the copied V, the layer input and the
            # embedding input row block, and the bucket input (n_kv x T int32) beside the mask. t5 on the CPU:
            # 0.98-1.00 of llama.cpp's at 8K to 32K (tests/test_llamacpp_archs.py ADDED_GRID)
            kq = n_kv * T * a.n_heads * f32
            qkv = a.n_heads * a.head_dim_k + a.n_kv_heads * a.head_dim_k + a.n_kv_heads * a.head_dim_v
            inner = (2 * a.n_heads * n_kv * T + n_kv * T + T * qkv) * f32 + 2 * resid
            if no_cache:
                # the encoder's Q and K are freed once KQ is made, and the gathered bias rows, then their copy, take the
                # block they leave where they fit it (ggml-alloc's best fit). Read off llama.cpp@0c1e57098's reserve on
                # the t5encoder file (32 heads of 128): the rows there at -ub 256 (36.38 MiB; 44.38 with them above),
                # the rows and the copy at -ub 64 and 128, neither at 512 (137.50)
                fits = T * (a.n_heads + a.n_kv_heads) * a.head_dim_k // (a.n_heads * n_kv * T) if n_kv else 0
                inner -= min(fits, 2) * a.n_heads * n_kv * T * f32
        elif a.kv_lora_rank and a.latent_cache and ERAS.reached(ctx.build, "mla_latent"):
            inner = a.n_heads * T * f32 * (3 * a.kv_lora_rank + a.qk_rope_head_dim) + resid
        else:
            q = a.n_heads * a.head_dim_k
            # Q, K, V, the attention output and three hidden-state rows (the layer input, its norm and one more);
            # two in the post-norm BERT graphs, whose attention reads the layer input itself (src/models/bert.cpp)
            rows = 2 if spec.architecture in POST_NORM_ENCODERS else 3
            if spec.architecture in HC_GDN_ARCHS:
                # the hc residual streams and their norm (kept for hc_inject) beside the mixed row: 2 hc + 1 rows
                # more (measured: 202.14 MiB at 8K x 2 without flash attention, 618.39 at 16K with a q4_0 K)
                rows += 2 * _hc_streams(spec) + 1
            inner = T * f32 * (q + 2 * a.n_kv_heads * a.head_dim_k + a.n_heads * a.head_dim_v) + rows * resid
            if early_bert:
                # Q, the K and V copies and the layer input (EARLY_BERT_GRAPHS)
                inner = T * f32 * (q + a.n_kv_heads * a.head_dim_k + a.n_kv_heads * a.head_dim_v) + resid
            if old and spec.architecture not in POST_NORM_ENCODERS and spec.architecture not in HC_GDN_ARCHS:
                # K and V are copied into the cache before KQ (llm_build_kv: ggml_cpy, then views of the cache):
                # Q, the KQV output and two hidden-state rows beside the scores
                inner = T * f32 * (q + a.n_heads * a.head_dim_v) + 2 * resid
            if ctx.fa_auto_off:
                # the cache keeps flash attention's V layout, so build_attn_mha copies the layer's V view transposed
                # (ggml_cont(ggml_transpose(v))) beside the scores: the GGML_SCHED_DEBUG=2 dump of the legacy
                # DeepSeek-V3 GGUF with -fa auto on CUDA, v_cont-0 (128 MiB) alive with kq-0 (CUDA0 1287.01 MiB at
                # 4K, 9407.01 at 32K; -fa off, V transposed in the cache: 1223.01 / 8447.01)
                inner += n_kv * a.n_kv_heads * a.head_dim_v * ctx.type_v.type_size // ctx.type_v.block_size
            if a.kv_lora_rank and ctx.flash_attn:
                # MLA without the latent cache: wkv_b's decompressed K_nope and V per head are still alive when
                # flash attention runs (fitted to the legacy-GGUF ground truth; without FA they are not)
                inner += a.n_heads * (a.qk_nope_head_dim + a.v_head_dim) * T * f32
            extra = fa_f16_bytes(a, n_kv, T, ctx) if fa_f16_copies and ctx.flash_attn else 0
            if extra:
                # the flash-attention output with its F16 copies is too large for any block freed before it, so it
                # lands above everything alive: the rows, the Q projection where a gate half is read after
                # attention (Qwen3.5 / Qwen3-Next: attn_q twice as wide), the roped Q, its Hadamard-rotated copy
                # for a rotated K (_rotations). Read off ggml-alloc's placement of llama.cpp@0c1e57098's reserve
                # with ggml-cuda's sizes on a Qwen3.5-397B-shaped file: 720.30 MiB at 128K -ub 1024 (584.30 without
                # the copies), 200.28 at 32K -ub 512 (tests/test_llamacpp_split.py)
                q_kept = q_width.get(layer.index, q)
                q_kept = q_kept if q_kept > q else 0
                q_rot = q if _rotations(spec, ctx)[0] else 0
                inner = max(inner, T * f32 * (q_kept + q + q_rot + a.n_heads * a.head_dim_v) + rows * resid + extra)
        attn_phase = max(attn_phase, kq + inner + (v_idxs[0] if layer.index <= v_idxs[1] else 0))
    if attn_phase:
        attn_phase += masks
        if hybrid:
            # hybrids: the recurrent layers' inputs are allocated after the masks and live to the end, so the
            # freed mask block cannot merge with the free tail. With masks of at most one hidden-state row the
            # logits sit three rows and the masks up; with more, a dense last FFN leaves one row in the freed
            # block (two rows and the masks), an MoE one fills it with its expert rows and the logits sit three
            # rows up. Measured on the CPU (Qwen3.5 27B at 4, 8, 16 and 64 layers, -c 4096 to 262144; Qwen3.5
            # 397B at 4 and 60 layers: tests/test_groundtruth_llamacpp.py, tests/test_llamacpp_compute.py); the
            # dense case is 2 rows high at -c 32768 -ub 512 (515.00 MiB printed, 537 here). Not LFM2's short
            # convolutions: its CPU figure is the plain logits phase at every context (tests/test_llamacpp_archs.py)
            last = spec.trunk_layers[-1].ffn if spec.trunk_layers else None
            # on a device the graph inputs are the split's input copies instead: ggml_backend_sched_split_graph
            # (ggml-backend.cpp) puts them at the head of the split as nodes ("so that they are allocated by
            # ggml-alloc at the start of the split") in the order the split first reads them, the recurrent
            # layers' state indices before the mask, and ggml-alloc frees each after its last reader; by the
            # logits nothing sits above the freed mask block, and they take it and the free tail: the plain logits
            # phase. Measured on an H200 (qwen3.5-27b, -ub 512): CUDA0 505.00 MiB at -c 4096 x 1 to 262144 x 4
            # unified (the logits and two rows), where the CPU's placement gives 519 to 761
            split_output = out_phase
            if masks <= resid:
                out_phase += resid + masks
            elif last is not None and last.is_moe:
                out_phase += resid
            else:
                out_phase += masks
    # MiniMax-M3's per-stream sparse masks (msa_phase) leave no hole below the last layer for the expert sum, small
    # masks or not: its logits sit above the weighted experts as with large masks (feed_forward_phases; measured
    # 113.04 MiB at 4K x 2, where the three-rows rule gives 86.50)
    msa_streams = spec.architecture in MSA_INDEXER_ARCHS and ctx.flash_attn and ctx.n_stream > 1 and not no_cache
    if spec.architecture in MSA_INDEXER_ARCHS and ctx.flash_attn and (ctx.n_seq_max == 1 or ctx.n_stream > 1) \
            and not no_cache:
        attn_phase = max(attn_phase, msa_phase(spec, T, cells, ctx.n_stream))
    if spec.architecture in KPOOL_INDEXER_ARCHS and not no_cache:
        attn_phase = max(attn_phase, kpool_indexer_phase(spec, ctx, caches, T))
    if spec.architecture in DSA_SCORE_ARCHS and not no_cache:
        attn_phase = max(attn_phase, dsa_score_phase(spec, T, caches, masks))
    # the attention output un-rotated for a rotated V cache (ERAS attn_rot: build_attn's llama_mul_mat_hadamard)
    # (not on ggml-vulkan's graph, which its graph_optimize reorders first, vk_order: not read there; Ollama 0.30.3's
    # llama3.2 on a Vega iGPU with a q4_0 cache prints 128 MiB, which the rows without the rotation give)
    v_rotated = ctx.flash_attn and _rotations(spec, ctx)[1] > 0 and ERAS.reached(ctx.build, "attn_rot") and not vk_order
    ffn_phase, moe_out = feed_forward_phases(spec, T, masks, T if n_outputs is None else n_outputs, ctx.build,
                                             old_graph=old, v_rotated=v_rotated,
                                             sum_hole=not msa_streams, iswa_v_idxs=v_idxs,
                                             freed_masks={} if no_cache or hybrid or not ctx.flash_attn
                                             else _freed_iswa_masks(run, caches, T, ctx.flash_attn))
    attn_phase = max(attn_phase, ffn_phase, recurrent_phase(spec, T, ctx.n_seq_max, masks, 1 + ctx.n_rs_seq),
                     convnext_phase(spec, T))
    enc = [t for t in spec.weights.tensors if t.name.startswith("enc.blk.")] if spec.architecture in REL_POS_BIAS_GRAPHS else []
    enc_up = [t.shape[-1] for t in enc if ".ffn_up." in t.name]
    if no_cache and enc_up and not any(".ffn_gate." in t.name for t in enc):
        # t5encoder's ReLU FFN (src/models/t5-enc.cpp build_ffn, LLM_FFN_RELU / LLM_FFN_SEQ; the enc.blk.N tensors
        # carry its width, the spec's layers none): the up rows, ReLU in place, above the masks, the T x T bucket
        # input and four rows, the attention's freed row block too small for them. Read off llama.cpp@0c1e57098's
        # reserve on the t5encoder file (n_ff 11008): 6.71 / 13.47 MiB at -ub 64 / 128, the graph's peak there.
        # A gated encoder FFN (LLM_FFN_GELU / LLM_FFN_PAR) was not measured: not this case
        attn_phase = max(attn_phase, masks + T * T * f32 + 4 * resid + max(enc_up) * T * f32)
    if spec.architecture in HC_GDN_ARCHS:
        attn_phase = max(attn_phase, hc_gdn_conv_phase(spec, T, ctx.n_seq_max, masks, 1 + ctx.n_rs_seq))
    if spec.architecture in KDA_ARCHS and ctx.n_rs_seq:
        attn_phase = max(attn_phase, kda_delta_net_phase(spec, T, ctx.n_seq_max, masks, 1 + ctx.n_rs_seq))
    if spec.architecture in HC_ATTN_ARCHS and not no_cache:
        attn_phase = max(attn_phase, hc_attention_phase(spec, T, caches, cells, ctx.flash_attn, ctx.n_seq_max,
                                                           ctx.type_k, _rotations(spec, ctx)[0]))
    if spec.architecture in FINAL_NORM_KEPT and rows_out >= T and not no_cache:
        moe_out = final_norm_kept_output(spec, T, rows_out, input_block(spec, ctx, masks, T)) or moe_out
    if spec.architecture in LM_HEAD_SCALED and rows_out >= T and ctx.flash_attn and not no_cache:
        out_phase = max(out_phase, scaled_head_swiglu_in_hole(spec, ctx, T, rows_out, input_block(spec, ctx, masks, T)))
    out_phase = max(out_phase, 0 if hybrid else moe_out)  # the hybrids' own placement above
    if ctx.flash_attn and rows_out >= T and not hybrid and not no_cache and ERAS.reached(ctx.build, "embd_input"):
        # a plain MLP's last layer: the final norm's block (plain_mlp_output_rows)
        rows = plain_mlp_output_rows(spec, T, masks, v_rotated)
        if rows:
            out_phase = max(out_phase, spec.n_vocab * rows_out * f32 + rows * resid)
    if spec.architecture in FINAL_NORM_KEPT and ctx.flash_attn and not no_cache and ERAS.reached(ctx.build, "kq_mask_f16"):
        # Hunyuan V3 with flash attention: the whole graph replayed through ggml-alloc (compute_graphs.hy_v3_graph),
        # one peak for both phases. Equal to llama.cpp@0c1e57098's CPU buffer where the closed forms miss where the
        # last layer lands: with q8_0 K and V 110.59 / 86.50 / 110.55 / 112.14 MiB at 16K / 24K / 40K / 64K
        # (final_norm_kept_output: 0.93, 1.28, 0.93, 1.07 of those)
        k_rot, v_rot = _rotations(spec, ctx)
        out_phase = attn_phase = _replayed(compute_graphs.hy_v3_graph, spec, T, rows_out, masks, k_rot, v_rot)
    device = 0
    if ple_replayed(spec, ctx) and not no_cache:
        # Gemma 4 E2B / E4B: the whole graph replayed through ggml-alloc
        # (compute_graphs.gemma4_ple_graph). The per-layer embedding path's rows (n_embd_per_layer x n_layer floats
        # a token: the selected rows, the projection, its norm and the permuted copy that lives to the last layer)
        # set where the wide FFN lands: llama.cpp's CPU buffer 480.09 MiB at 8K -ub 2048 with one output row (the
        # closed-form phases: 348.00), equal to the byte on the E2B-shaped file (tests/test_llamacpp_gemma4_ple.py)
        ple_caches, fa = _ple_caches(caches, T, ctx.flash_attn), ctx.flash_attn
        rot: dict[str, Any] = dict(k_rot=ctx.type_k.quantized, v_rot=ctx.type_v.quantized)
        if fa_f16_copies and fa:  # a ggml-cuda device: the F16 copies of a quantized K / V behind each FA output,
            # the sliding layers' (heads of 256 over the SWA cells) and the full ones' (512 over every cell) apart
            rot["fa_extra"] = {la.index: fa_f16_bytes(la.attention, cells.get(
                la.index if la.kv_source is None else la.kv_source, 0), T, ctx) for la in spec.trunk_layers}
        out_phase = attn_phase = _replayed(compute_graphs.gemma4_ple_graph, spec, T, rows_out, ple_caches, fa, **rot)
        # vk_order: the device is ggml-vulkan's, whose graph_optimize reorders the split before ggml-alloc places it
        # (compute_graphs.vk_graph_optimize): E4B's per-layer projection is pulled up beside the first layer's
        # attention, so its 84 MiB live through that layer's FFN, in ggml-vulkan's 1 GiB chunks (VK_MAX_BUFFER)
        call = _Call(compute_graphs.gemma4_ple_graph, galloc.ALIGN, spec, (T, rows_out, ple_caches, fa),
                     dict(device=True, vk_order=vk_order, **rot))
        device = _chunked(call, VK_MAX_BUFFER, ctx.build >= GALLOC_PREFER_REUSE_BUILD) \
            if vk_order and ctx.build >= VK_CHUNKS_BUILD else _peak(call)
    if gemma3n_replayed(spec, ctx) and not no_cache:
        # Gemma 3n E2B / E4B: the whole graph replayed through ggml-alloc (compute_graphs.gemma3n_graph). AltUp's
        # n_altup streams (each layer's predictions, corrected streams and their permuted copies), LAuReL and the
        # per-layer rows set the peak: llama.cpp's CPU buffer 450.09 MiB at 8K -ub 2048 with one output row (the
        # closed-form phases: 298.00), equal to the byte on the E2B-shaped file (tests/test_llamacpp_gemma3n_compute.py)
        # (ComputePhases.device: a fully offloaded device's split by gemma4_ple_graph's rule, no Gemma 3n device log)
        g3n = dict(caches=_ple_caches(caches, T, ctx.flash_attn), flash_attn=ctx.flash_attn,
                   k_rot=ctx.type_k.quantized, v_rot=ctx.type_v.quantized)
        out_phase = attn_phase = _replayed(compute_graphs.gemma3n_graph, spec, T, rows_out, **g3n)
        device = _replayed(compute_graphs.gemma3n_graph, spec, T, rows_out, device=True, **g3n)
    trunk = spec.trunk_layers
    if spec.architecture in GATE_IN_ATTN_OUT and ctx.flash_attn and not no_cache and ERAS.reached(ctx.build, "kq_mask_f16") \
            and trunk and trunk[-1].index == len(trunk) - 1:
        # GLM-4.5 with flash attention (not the MTP context's view, mtp.nextn_view): the whole graph replayed through
        # ggml-alloc (compute_graphs.glm4moe_graph) as the output phase, the peak of the device that holds the output
        # layer; the closed-form workspace stays for the others (never above the replay on the CPU grid). Where every
        # token is an output the logits sit above wherever the last layer's residual lands, which the closed forms
        # miss: llama.cpp@0c1e57098's CPU buffer on GLM-4.5-Air's 2-trunk file 384.01 / 450.75 MiB at 32K / 128K
        # (logits + 4 rows: 328.00), on GLM-4.5's 4-trunk file 344.01 at 8K (326.00); equal to the printed MiB on 80
        # flash-attention settings of five files, llama-server's few rows included (tests/test_llamacpp_glm4moe.py)
        k_rot, v_rot = _rotations(spec, ctx)
        out_phase = _replayed(compute_graphs.glm4moe_graph, spec, T, rows_out, masks, k_rot, v_rot)
    if cuda_deps and spec.architecture in MOE_DEVICE_GRAPHS and not no_cache and trunk \
            and trunk[-1].index == len(trunk) - 1 and all(la.attention is not None for la in trunk):
        # a ggml-cuda device that runs the whole graph, with the allocation dependencies its graph_optimize adds
        # for the MoE fusions (CUDA_FUSION_DEPS_BUILD): the split replayed through ggml-alloc at the CUDA buffer's
        # 128-byte alignment (compute_graphs.moe_device_graph). The routed experts' down rows stay alive beside
        # their weighted copy until the expert sum, so the last layer's blocks and the logits sit higher: on an
        # H200 (llama.cpp 0c1e570, tests/test_llamacpp_cuda_measured.py) the qwen3-30b-a3b file's CUDA0 buffer
        # 341.54 / 1366.14 MiB at -c 4096 -ub 512 / -c 8192 -ub 2048 (the CPU graph's phases: 304.75 / 1219.00),
        # 300.75 at 32K, 2158.79 at 32K without flash attention, every one to the byte of the printed MiB
        a0 = trunk[0].attention
        extra = fa_f16_bytes(a0, cells.get(trunk[0].index, 0), T, ctx) if fa_f16_copies and ctx.flash_attn else 0
        k_rot, v_rot = _fa_rotations(spec, ctx)
        device = _replayed(compute_graphs.moe_device_graph, spec, T, rows_out, masks, k_rot, v_rot, ctx.flash_attn,
                           extra, align=CUDA_ALIGN)
    if cuda_deps and spec.architecture in GPT_OSS_GRAPHS and not no_cache and trunk \
            and all(la.attention is not None and la.ffn.is_moe for la in trunk):
        # gpt-oss on a ggml-cuda device that runs the whole graph, the same way (compute_graphs.gpt_oss_device_graph):
        # on the H200 408.77 MiB at -c 4096 (the closed forms: 404.00), 552.76 without flash attention (558.38)
        extras = {la.index: fa_f16_bytes(la.attention, cells.get(la.index, 0), T, ctx) for la in trunk} \
            if fa_f16_copies and ctx.flash_attn else {}
        device = _replayed(compute_graphs.gpt_oss_device_graph, spec, T, rows_out,
                           _iswa_caches(caches, T, ctx.flash_attn), ctx.flash_attn, extras,
                           *_fa_rotations(spec, ctx), align=CUDA_ALIGN)
    # the CPU side of an offloaded graph holds the graph inputs: the token embeddings and the KQ masks. The masks
    # are filled on the host as F32 and cast to F16 for flash attention on the device, until PR #23764 ("use f16
    # mask for FA to save VRAM", merged 2026-05-28) made the input itself F16 (ERAS kq_mask_f16)
    mask_in = masks if not ctx.flash_attn or ERAS.reached(ctx.build, "kq_mask_f16") else 2 * masks
    return ComputePhases(output=out_phase, attention=max(attn_phase, 3 * resid), inputs=resid + mask_in,
                         device=device, ffn=ffn_phase, split_output=split_output)



# architectures whose per-layer embedding graph is replayed node by node (compute_graphs.gemma4_ple_graph)
PLE_GRAPHS = frozenset({"gemma4"})


def ple_replayed(spec: ModelSpec, ctx: Context) -> bool:
    """Whether compute_graphs.gemma4_ple_graph models this graph: Gemma 4 with dense FFNs in every layer, with
    per-layer embeddings (the E2B / E4B files carry per_layer_token_embd) or without (12B, 31B: the same graph less
    that path, the full layers' V their K where the file has no attn_v; 26B-A4B's MoE layers are not replayed), and
    a build whose flash-attention masks are F16 graph inputs (ERAS kq_mask_f16, PR #23764: before it the CPU side
    casts an F32 mask, not replayed). The 12B's shapes (hidden 3840, 16 heads, 8 KV heads of 256 in the sliding
    layers, one of 512 in every 6th, K = V there, intermediate 15360) on a 12-layer file: the pinned binding's CPU
    buffer and the stand-in Vulkan device's (tests/groundtruth/vk_standin_device.c, 1 GiB chunks) equal to the
    replay at 11 settings each (558.08 / 528.07 MiB at -c 8192 -ub 2048 -np 1; the closed-form phases: 526.00 /
    496.00; HilbertraumAI's b9849 Vulkan log of Gemma 4 12B prints 529.07)."""
    return (spec.architecture in PLE_GRAPHS and ERAS.reached(ctx.build, "kq_mask_f16")
            and bool(spec.trunk_layers) and len(spec.trunk_layers) == len(spec.layers)
            and all(la.attention is not None and not la.ffn.is_moe and la.ffn.n_ff for la in spec.trunk_layers))


def gemma3n_replayed(spec: ModelSpec, ctx: Context) -> bool:
    """Whether compute_graphs.gemma3n_graph models this graph: Gemma 3n with its AltUp, LAuReL and per-layer tensors
    (per_layer_token_embd, altup_proj, laurel_l in every layer), dense FFNs, and a build whose flash-attention masks
    are F16 graph inputs (ERAS kq_mask_f16, PR #23764, as ple_replayed)."""
    names = {t.name for t in spec.weights.tensors}
    return (spec.architecture == "gemma3n" and ERAS.reached(ctx.build, "kq_mask_f16")
            and bool(spec.trunk_layers) and len(spec.trunk_layers) == len(spec.layers)
            and all(la.attention is not None and not la.ffn.is_moe and la.ffn.n_ff for la in spec.trunk_layers)
            and {"per_layer_token_embd.weight", "altup_proj.weight"} <= names
            and all(f"blk.{la.index}.laurel_l.weight" in names for la in spec.trunk_layers))


def _ple_caches(caches: list[Cache], T: int, flash_attn: bool) -> list[tuple[str, tuple[int, ...], int, int]]:
    """The iSWA caches in the order the graph first reads them (the first layer of each), with their cells and KQ
    mask bytes (n_kv x T, F16 with flash attention, else F32, as compute_phases sizes the masks)."""
    used = sorted((c for c in caches if c.layers), key=lambda c: min(c.layers))
    return [(c.name, tuple(c.layers), c.cells, _mask_bytes(c.cells, T, flash_attn)) for c in used]


def _freed_iswa_masks(run: list, caches: list[Cache], T: int, flash_attn: bool) -> dict[int, int]:
    """Per attention layer, the KQ mask bytes of the iSWA caches (llama_kv_cache_iswa: "SWA" / "non-SWA") that no
    later layer reads: ggml-alloc frees a graph input once its last reader has run, so by that layer's FFN the mask
    block is a hole (feed_forward_phases)."""
    if sum(1 for c in caches if c.layers and c.name in ("SWA", "non-SWA")) < 2:
        return {}
    return {layer.index: sum(_mask_bytes(c.cells, T, flash_attn) for c in caches
                             if c.name in ("SWA", "non-SWA") and c.layers and max(c.layers) <= layer.index)
            for layer in run}


def _mask_bytes(cells: int, T: int, flash_attn: bool) -> int:
    """A KQ mask's bytes: a row of `cells` for each of the T tokens, F16 with flash attention, else F32."""
    return cells * T * (2 if flash_attn else 4)


def _cache_types(ctx: Context) -> tuple[tuple[int, int], tuple[int, int]]:
    """K's and V's cache types as (bytes, values) a block: what the scheduler replays size the cache views by."""
    return (ctx.type_k.type_size, ctx.type_k.block_size), (ctx.type_v.type_size, ctx.type_v.block_size)


def _fa_rotations(spec: ModelSpec, ctx: Context) -> tuple[int, int]:
    """_rotations with flash attention, (0, 0) without: the rotation inputs the MoE, gpt-oss and DeepSeek-V2 device
    graphs are given (compute_graphs.moe_device_graph, gpt_oss_device_graph, deepseek2_device_graph)."""
    return _rotations(spec, ctx) if ctx.flash_attn else (0, 0)


def _rotations(spec: ModelSpec, ctx: Context) -> tuple[int, int]:
    """The Hadamard rotation inputs of a quantized cache (llama_kv_cache::build_input_k_rot / build_input_v_rot,
    llama.cpp@0c1e57098: attn_rot_k / attn_rot_v set for a quantized type whose head size is a multiple of 64;
    K's matrix the largest power of two from 64 dividing the head, V's 64 x 64 f32), in bytes."""
    a = next((layer.attention for layer in attention_layers(spec)), None)
    if a is None:
        return 0, 0
    k = v = 0
    if ctx.type_k.quantized and a.head_dim_k % 64 == 0:
        nrot = 64
        while a.head_dim_k % (2 * nrot) == 0:
            nrot *= 2
        k = nrot * nrot * 4
    if ctx.type_v.quantized and a.head_dim_v % 64 == 0:
        v = 64 * 64 * 4
    return k, v


def input_block(spec: ModelSpec, ctx: Context, masks: int, T: int) -> int:
    """The graph inputs ggml-alloc places first, between the embedding input rows and the first node: the positions
    (T int32), the K and V cache indices (T int64 each; flash attention, V not transposed), the rotation matrices of a
    quantized cache and the KQ masks. Freed together once the last layer has attended, they make one hole whose size
    decides where the last layer's tensors go (read off ggml-alloc's placement of llama.cpp@0c1e57098's reserve:
    [8.00, 24.01) MiB on the hy_v3 file at 16K, [8.00, 40.09) at 32K with a q8_0 cache)."""
    k_rot, v_rot = _rotations(spec, ctx)
    return masks + T * 4 + 2 * T * 8 + k_rot + v_rot


# Graphs that keep the final norm for a next-token (MTP) head and copy the out_ids rows into the lm head's input
# (src/models/hy-v3.cpp: h_nextn kept as a graph output, result_norm = ggml_get_rows(h_nextn, inp_out_ids))
FINAL_NORM_KEPT = frozenset({"hy_v3"})


def final_norm_kept_output(spec: ModelSpec, T: int, n_outputs: int, block: int) -> int:
    """The logits phase of a last MoE layer with a shared expert whose final norm stays alive (FINAL_NORM_KEPT), read
    off ggml-alloc's placement of llama.cpp@0c1e57098's reserve on the hy_v3 file (n_embd 4096: r = 8 MiB a row
    block; 8 experts, 2 used of 2048: W = 8 MiB; router R = 3 x 8 floats a token) at 4K to 40K. Once the last layer
    has attended, the freed input block (input_block: B) takes the FFN norm at its bottom when B >= r, then the
    router's scores, then as many of the experts' gate, up and SwiGLU blocks as fit; what is left above decides the
    top before the logits, which sit above the final norm (h_nextn) and its copy (result_norm):
    - B < r: the norm above the layer input (4K: 52.01 MiB = inp_embd + B + 2 r + 3 W);
    - the router does not fit the rest (B - r < R): 2 r + B + R + 3 W (8K: 48.06);
    - the three expert blocks fit it: 2 r + R + 3 W, the expert sum in the SwiGLU block (32K q8_0, 40K: 40.05);
    - one of them fits: 3 r + B (24K, 32K f16: 48.01, 56.01);
    - none, but the expert sum does once the router is freed: r + B (16K, 16K x 4 unified: 24.00);
    - neither: 2 r + B + 3 W (12K: 52.01).
    Only where the weighted experts fit the gate and up blocks (n_embd <= 2 n_ff_exp, as on that file); else 0
    (feed_forward_phases' figure holds). A quantized cache's rotations un-rotate the attention output into one more
    row block, placed in B or above by what other holes are free: with q8_0 K and V exact at 4K to 12K and 32K,
    0.93 at 16K and 40K (102.59 vs 110.59, 102.55 vs 110.55 MiB), 1.28 at 24K (110.59 vs 86.50), 1.07 at 64K. With
    flash attention compute_phases replays the whole graph instead (compute_graphs.hy_v3_graph: exact there)."""
    f32 = 4
    r = spec.n_embd * T * f32
    last = spec.trunk_layers[-1] if spec.trunk_layers else None
    f = last.ffn if last is not None else None
    if f is None or not f.is_moe or not f.n_ff_shared or spec.n_embd > 2 * f.n_ff_expert:
        return 0
    W = f.n_experts_used * f.n_ff_expert * T * f32
    biased = any(t.layer == last.index and ".exp_probs_b" in t.name for t in spec.weights.tensors)
    R = (3 if biased else 2) * f.n_experts * T * f32
    if block < r:
        top = 3 * r + block + 3 * W
    elif block - r < R:
        top = 2 * r + block + R + 3 * W
    elif block - r - R >= 3 * W:
        top = 2 * r + R + 3 * W
    elif block - r - R >= W:
        top = 3 * r + block
    elif block - r >= r:
        top = r + block
    else:
        top = 2 * r + block + 3 * W
    return spec.n_vocab * n_outputs * f32 + top


def scaled_head_swiglu_in_hole(spec: ModelSpec, ctx: Context, T: int, n_outputs: int, block: int) -> int:
    """MiniCPM3's last layer (LM_HEAD_SCALED) where the freed input block (input_block: B) holds one hidden-state row
    but not two: the attention output takes its bottom, the residual's out_ids copy goes above the layer, and the
    SwiGLU product (n_ff floats a token) then fits the block and the freed row beside it, so the FFN output, the
    final norm (kept as t_embd) and the logits sit higher: logits + B + 4 rows. Read off ggml-alloc's placement of
    llama.cpp@0c1e57098's reserve on the minicpm3 file (n_embd 2560, n_ff 6400, -ub 512, flash attention): 90.51
    MiB at 8K (B = 8.01 MiB), 77.50 (logits + 3 rows) at 4K and 12K, where B is under one row or holds two. A
    quantized V cache's rotation (V heads of 64) un-rotates the attention output into a new block (n_heads x
    head_dim_v floats a token) that takes the hole first, as if B were that much larger: with q8_0 90.53 / 91.53 MiB
    at 3K / 4K (45.77 at -ub 256, 183.04 at -ub 1024), 77.50 at 2K, 6K, 8K, 12K and 16K. A rotated K (heads a
    multiple of 64) was not measured: not this case."""
    f32 = 4
    resid = spec.n_embd * T * f32
    last = spec.trunk_layers[-1] if spec.trunk_layers else None
    n_ff = last.ffn.n_ff if last is not None and last.ffn is not None and not last.ffn.is_moe else 0
    k_rot, v_rot = _rotations(spec, ctx)
    a = next((layer.attention for layer in attention_layers(spec)), None)
    if v_rot and a is not None:
        block += a.n_heads * a.head_dim_v * T * f32
    if k_rot or not n_ff or not resid <= block < 2 * resid or block + resid < n_ff * T * f32:
        return 0
    return spec.n_vocab * n_outputs * f32 + block + 4 * resid


# src/models/plamo2.cpp build_plamo2_mamba_layer: the in-projection is copied whole (ggml_cont of its reshape,
# "mamba_in_proj_out") before the split, and the conv reads a copy of x ("mamba_x_split"), not a view of it
PLAMO2_MAMBA = frozenset({"plamo2"})
# Hidden-state rows alive beside the WKV op's output at the peak of an RWKV layer, read off ggml-alloc's placement
# of llama.cpp@0c1e57098's graphs (node offsets in the CPU compute buffer, dumped through the scheduler's eval
# callback on a real 512-token ubatch whose buffer equals the reserved one; n_embd 4096, 2 layers, rwkv6 also 4:
# the second layer on is the steady state). The counts are read off the dumps, not derived tensor by tensor: the
# time-mix blocks keep the layer input, its norm, the token-shifted input, the fused lerp of every branch (one
# n_embd x T x 5 tensor in rwkv6-base.cpp build_rwkv6_time_mix, x 6 in rwkv7-base.cpp build_rwkv7_time_mix, x 5 in
# arwkv7.cpp) and the r, k, v, w, g projections (rwkv7 more: a, kk, and the first layer's v for the value
# residual), with the fragmentation between them; the WKV output (n_embd x (T + head_size x n_seqs) floats,
# ggml.c ggml_rwkv_wkv6 / ggml_rwkv_wkv7, and ggml_gated_linear_attn for rwkv6qwen2, whose time mix takes the
# is_qrwkv branch) adds one row block, counted here. arwkv7 peaks on a projection after the WKV op: 16 row blocks,
# no WKV output rows above them.
# Gated delta nets whose conv stage recurrent_phase models, read off ggml-alloc's placement of the qwen3next and
# qwen35moe files (tests/test_llamacpp_compute.py); qwen4exp's hyper-connection streams and KDA's three convs
# (kimi-linear) are not
GDN_CONV_ARCHS = frozenset({"qwen3next", "qwen35", "qwen35moe"})
GDN_REPEATS_QK = frozenset({"qwen3next"})
# Gated delta nets under hyper-connections (src/models/qwen4exp.cpp): hc residual streams in place of the layer
# norms, and an indexer cache that tracks the attention cache cell for cell (the graph asserts equal n_kv) and adds
# no mask of its own (measured: 2 bytes per cell and token with flash attention, one f16 mask)
HC_GDN_ARCHS = frozenset({"qwen4exp"})
RWKV_LIVE_ROWS = {"rwkv6": 14, "rwkv6qwen2": 13, "rwkv7": 18, "arwkv7": 16}


def recurrent_phase(spec: ModelSpec, T: int, n_seqs: int, masks: int, snapshots: int = 1) -> int:
    """The largest live set of a recurrent layer in the worst-case graph (llama_context::graph_reserve builds it
    with n_seqs = n_seq_max sequences of T / n_seqs tokens each). Measured against ggml-alloc's placement of each
    node (see RWKV_LIVE_ROWS), the peak is the layer's state op:

    - Mamba-1 and Mamba-2 layers (src/models/graph-context-mamba.cpp build_mamba_layer / build_mamba2_layer), at
      ggml_ssm_scan: below it the graph's embedding input row block, the layer input, its norm, the conv states
      gathered per sequence (llm_graph_context::build_rs: n_embd_r floats x n_seqs), and the KQ masks while a later
      layer still attends (a layer with attention beside the SSM, falcon-h1.cpp, also keeps the attention output);
      above, the in-projection (2 d_inner, plus 2 n_group d_state + n_head for Mamba-2), the conv input
      (ggml_concat of the states and x^T: (d_conv - 1 + T / n_seqs) x conv_dim x n_seqs), the conv output
      (conv_dim x T; bias and SiLU in place), and the scan output (ggml_ssm_scan: d_inner x T + d_state x d_inner
      x n_seqs, the last states after the outputs). Mamba-1's dt (d_inner x T) takes the freed conv input block.
      PLaMo-2 keeps the copied in-projection instead of the conv input and output, and the scan output goes
      above it only when it does not fit the hole the in-projection leaves (else z's copy, d_inner x T, is the top);
    - RWKV layers: RWKV_LIVE_ROWS hidden-state row blocks, plus per sequence the token-shift rows (n_embd_r) and
      the WKV state gathered by build_rs and carried out by the WKV op (n_embd_s each; arwkv7's peak is past
      the WKV op: only the gathered state).
    - gated delta nets (GDN_CONV_ARCHS), at the conv: see the branch below.
    With n_rs_seq snapshots kept for rollback the state op writes 1 + n_rs_seq states per sequence (`snapshots`;
    ggml_ssm_scan / ggml_gated_delta_net with K = n_rs_seq + 1, src/models/delta-net-base.cpp): measured on
    nemotron_h, +4.00 MiB per snapshot and sequence, one layer's S (tests/test_llamacpp_rs_rollback.py).
    KDA (kimi-linear) and LFM2's short convolutions are not modelled here: their peaks are the logits and
    feed-forward phases (tests/test_llamacpp_compute.py, tests/test_llamacpp_archs.py)."""
    f32 = 4
    resid = spec.n_embd * T * f32
    n_seqs = max(1, min(n_seqs, T))
    attn_at = [layer.index for layer in attention_layers(spec)]
    last_attn = max(attn_at, default=-1)
    if spec.architecture in RWKV_LIVE_ROWS:
        r = next((layer.recurrent for layer in spec.layers if layer.recurrent is not None), None)
        if r is None:
            return 0
        states = 1 if spec.architecture == "arwkv7" else 2
        return RWKV_LIVE_ROWS[spec.architecture] * resid + n_seqs * (r.conv + states * r.ssm) * f32
    peak = 0
    for layer in spec.trunk_layers:
        r = layer.recurrent
        gdn = r is not None and r.kind == "gated_delta_net" and spec.architecture in GDN_CONV_ARCHS
        if r is None or (r.kind not in ("mamba", "mamba2") and not gdn):
            continue
        tokens = round_up(T, n_seqs)  # graph_reserve rounds n_tokens up to a multiple of n_seqs
        conv_dim = r.d_inner + 2 * r.n_group * r.d_state
        if gdn:
            # a gated delta net's conv (src/models/delta-net-base.cpp build_conv_state): the fused q, k, v
            # projection (conv_dim wide), the conv input and output above the masks, three row blocks and the
            # gathered conv states. The delta-net output (ggml_gated_delta_net: d_inner x T plus the states) goes on
            # top only where the hole the projection and the conv input leave is too small for it: they hold the
            # gathered SSM states and the normalised q and k by then (n_group x d_state x T each; qwen3next.cpp
            # repeats them to the value heads first, n_heads x d_state x T each)
            below = 3 * resid + (masks if layer.index < last_attn else 0)
            qkv = conv_out = conv_dim * tokens * f32
            concat = (max(r.d_conv - 1, 0) + tokens // n_seqs) * conv_dim * n_seqs * f32
            out = (r.d_inner * tokens + r.ssm * n_seqs * snapshots) * f32
            qk_heads = r.n_heads if spec.architecture in GDN_REPEATS_QK and r.n_heads > r.n_group else r.n_group
            hole = r.conv * n_seqs * f32 + qkv + concat - r.ssm * n_seqs * f32 - 2 * qk_heads * r.d_state * tokens * f32
            peak = max(peak, below + r.conv * n_seqs * f32 + qkv + concat + conv_out + (out if out > hole else 0))
            continue
        in_proj = 2 * r.d_inner + (2 * r.n_group * r.d_state + r.n_heads if r.kind == "mamba2" else 0)
        if spec.architecture in PLAMO2_MAMBA:
            in_proj = 2 * r.d_inner
        below = 3 * resid + r.conv * n_seqs * f32
        if layer.index < last_attn:
            below += masks
        if layer.attention is not None:
            below += resid
        scan = (r.d_inner * tokens + r.ssm * n_seqs * snapshots) * f32
        if spec.architecture in PLAMO2_MAMBA:
            hole = in_proj * tokens * f32 + resid - conv_dim * tokens * f32
            top = 2 * in_proj * tokens * f32 + (scan if scan > hole else r.d_inner * tokens * f32)
        else:
            concat = (max(r.d_conv - 1, 0) + tokens // n_seqs) * conv_dim * n_seqs * f32
            top = in_proj * tokens * f32 + concat + conv_dim * tokens * f32 + scan
        peak = max(peak, below + top)
    return peak


# Absorbed-MLA graphs whose lightning indexer scores every cell of the indexer cache before the top-k
# (src/models/dots3note.cpp: ggml_lightning_indexer, or the relu / weighted sum / mask add path, then ggml_top_k)
DSA_SCORE_ARCHS = frozenset({"dots3note"})


def dsa_score_phase(spec: ModelSpec, T: int, caches: list[Cache], masks: int) -> int:
    """The indexer's scores (indexer_score: n_kv x T floats, n_kv the indexer cache's cells per stream) above the
    masks and the layer's query path: the embedding input and attention-norm rows, the q_lora row, the q projection
    (twice), the absorbed query, q_pe and Qcur (n_heads x (kv_lora + rope)), which src/models/dots3note.cpp builds
    before the indexer's score is placed. Fitted to llama.cpp@0c1e57098's CPU buffer on the dots3note file
    (tests/ggufs.py; the split among the query tensors read off a decode-graph dump, not the reserve itself): 247.58
    / 375.58 / 631.58 MiB at 32K / 64K / 128K, 123.70 / 187.70 at -ub 256, 387.58 at 64K x 4 unified, each
    masks + 4 n_kv T + 115.08 MiB at -ub 512 (this formula: 115.00). Where the scores fit the block freed below
    Qcur (21984 cells on that file; llama.cpp: 21760 fit, 22016 do not), they go there and the other phases hold
    (4K to 21760 cells: 127.08 to 162.08 MiB printed)."""
    cells = max((c.cells for c in caches if c.name == "indexer"), default=0)
    peak = 0
    for layer in attention_layers(spec):
        a = layer.attention
        if not a.index_n_heads or not cells:
            continue
        q = a.n_heads * (a.qk_nope_head_dim + a.qk_rope_head_dim)
        qcur = a.n_heads * (a.kv_lora_rank + a.qk_rope_head_dim)
        # the block qr, q, the absorbed query and q_pe leave below Qcur, less the rotated indexer query and the
        # scaled head weights still alive in it
        hole = a.q_lora_rank + q + qcur - a.index_n_heads * (a.index_head_dim + 1)
        if cells <= hole:
            continue  # the scores take that block: no new peak
        rows = 2 * spec.n_embd + a.q_lora_rank + 2 * q + 2 * qcur
        peak = max(peak, masks + (cells + rows) * T * 4)
    return peak



# Nope-only MLA layers whose DSA indexer scores pools of kpool tokens (src/models/glm5-next.cpp build_kpool_select
# and build_dsa_layer), beside KDA layers under hyper-connections
KPOOL_INDEXER_ARCHS = frozenset({"glm5-next"})


def _align(n: int) -> int:
    return round_up(n, 32)  # ggml-alloc's CPU buffer alignment (TENSOR_ALIGNMENT)


def kpool_indexer_phase(spec: ModelSpec, ctx: Context, caches: list[Cache], T: int) -> int:
    """The MLA layer of a k-pool indexer graph (KPOOL_INDEXER_ARCHS), read off ggml-alloc's placement of
    llama.cpp@0c1e57098's reserve on the glm5-next file (tests/ggufs.py: n_embd 2304, hc 4, 32 heads, kv_lora 512,
    K 192, indexer 32 x 128, top-k 2048, kpool 4).

    Below every candidate (Z): the graph inputs (the embedding rows; the k-pool inputs build_inp_kpool makes: pool
    cells, pool indices, an f16 pool mask of n_pool x T, the tail indices, the f32 gather mask of n_sel x T, the new
    pools' indices and target cells; the indexer's zero key block, the cache indices and the KQ mask, f16 with flash
    attention, f32 without), then the hc residual streams and their flattened norm (hc x n_embd x T each) and the
    hc mixes ((2 + hc) hc floats a token). The reserve pools every cell: n_new = n_seq_max x cells / kpool new pools,
    n_pool = n_new + 1 padded to 64. Above Z, the largest of:
    - the pooling of the new pools: their gathered key and gate rows (2 x 128 x kpool floats a pool), the gate
      logits plus the positional term and their permuted copy (128 x kpool each);
    - the query (n_heads x K) and the absorbed query (n_heads x kv_lora), then with flash attention its output
      (n_heads x kv_lora) or the selection mask (-inf over n_kv + n_sel slots a token) where it does not fit the
      query's freed block plus the selection (n_kv x T) where it does not fit the freed norm block; without flash
      attention the KQ scores (cells x T x n_heads f32), the latent's transposed copy and the selection.
    Measured (llama.cpp's printed buffer = this): 130.97 MiB at 8K, 141.06 at 16K, 129.06 at 16K x 4, 195.23 at
    32K q8_0, 205.57 at 16K x 4 unified, 354.97 at 8K x 2 without flash attention."""
    f32 = 4
    layers = [layer for layer in attention_layers(spec) if layer.attention.kv_lora_rank]
    shapes = {t.name: t.shape for t in spec.weights.tensors}
    idx = next((c for c in caches if c.name == "indexer"), None)
    cells = idx.cells if idx is not None else max((c.cells for c in caches), default=0)
    hc = _hc_streams(spec)
    mtype = 2 if ctx.flash_attn else 4
    peak = 0
    for layer in layers:
        a = layer.attention
        ape = shapes.get(f"blk.{layer.index}.indexer_compressor_ape.weight")
        if ape is None or not a.index_head_dim:
            continue
        kpool, ik = ape[-1], a.index_head_dim
        n_new = max(1, ctx.n_seq_max * cells // kpool)
        n_pool = round_up(n_new + 1, 64)
        n_sel = kpool * min(n_pool, a.index_topk // kpool) + kpool - 1
        inputs = sum(_align(n) for n in (
            spec.n_embd * T * f32, n_pool * 4, kpool * n_pool * 4, n_pool * T * 2, (kpool - 1) * T * 4,
            n_sel * T * f32, ctx.n_seq_max * 4, ik * T * f32, T * 8, kpool * n_new * 4, n_new * 8, T * 8,
            cells * T * mtype))
        hc_block = hc * spec.n_embd * T * f32
        z = inputs + 2 * hc_block + (2 + hc) * hc * T * f32
        pooling = (2 * ik * kpool + 2 * ik * kpool) * n_new * f32
        q = a.n_heads * (a.qk_nope_head_dim + a.qk_rope_head_dim) * T * f32
        q_abs = a.n_heads * a.kv_lora_rank * T * f32
        mask_all = (cells + n_sel) * T * mtype
        sel = cells * T * mtype
        if ctx.flash_attn:
            attend = max(q_abs, (mask_all if mask_all > q else 0) + (sel if sel > hc_block else 0))
        else:
            # the KQ scores above the latent's transposed f16 copy (v_cont, cells x kv_lora) where the freed norm
            # block (less the attention norm's row) is too small for it; the selection is built after KQ, its mask
            # and then the selection itself in the block the query and absorbed query free, else above the scores
            v_cont = ctx.n_stream * cells * a.kv_lora_rank * 2
            attend = cells * T * a.n_heads * f32 + (v_cont if v_cont > hc_block - spec.n_embd * T * f32 else 0)
            if mask_all <= q + q_abs:
                attend += sel if sel > q + q_abs - mask_all else 0
            else:
                attend += mask_all + sel
        peak = max(peak, z + pooling, z + q + q_abs + attend)
    return peak


def _hc_streams(spec: ModelSpec) -> int:
    """The hyper-connection count, read off the first block's grouped-norm weight (hc x n_embd)."""
    norm = next((t.shape for t in spec.weights.tensors
                 if t.name.endswith((".hc_attn_norm.weight", ".hc_attn_fn.weight"))), None)
    return norm[0] // spec.n_embd if norm else 0


# DeepSeek-V4's blocks under hyper-connections (src/models/deepseek4.cpp)
HC_ATTN_ARCHS = frozenset({"deepseek4"})


def dsv4_masks(caches: list[Cache], T: int, flash_attn: bool) -> int:
    """DeepSeek-V4's KQ masks: one per cache that holds layers (not the empty non-SWA cache nor the compressor
    states), f16 with flash attention; without it f32, the indexer's f16 (fitted: 2 bytes a cell and token fit 8K to
    32K, 4 do not)."""
    held = [c for c in caches if c.layers and not c.name.endswith("state")]
    return sum(c.cells * T * (2 if flash_attn or c.name == "indexer" else 4) for c in held)


def hc_attention_phase(spec: ModelSpec, T: int, caches: list[Cache], cells: dict[int, int], flash_attn: bool,
                       n_seqs: int = 1, type_k: GgmlType | None = None, k_rot: int = 0) -> int:
    """A DeepSeek-V4 attention layer at its per-head query (q_norm, then RoPE in place): below it the masks and
    two row blocks of graph inputs, the hc residual streams (hc x n_embd x T) and their flattened norm, the mixed
    row and the attention norm, and the q projection (n_heads x head_dim); without flash attention the KQ scores
    over the layer's cells on top. Read off ggml-alloc's placement of llama.cpp@0c1e57098's graph on the deepseek4
    file (tests/ggufs.py: n_embd 4096, hc 4, 32 heads of 512): 164.84 MiB at 8K, layer 1 (20.84 MiB of inputs,
    then 32 + 32 + 16 + 32 MiB, the query 32). That dump runs the graph unfused (an eval callback is set); the
    fused one the reserve builds holds about one row block less (157.59 MiB printed at 8K, 161.59 at 16K, 185.84 at
    64K, masks + 152.5-152.8 MiB), so one inputs row is counted here. The masks: one per cache that holds layers
    (llama_kv_cache_dsv4: the SWA, ratio-4, ratio-128 and indexer caches; not the empty non-SWA one nor the
    compressor states), 2 bytes a cell and token with flash attention (4 without).

    With flash attention a layer with the lightning indexer peaks later, at its scores (lid_score_masked: the
    indexer's cells x T floats) above the query; below them the window's and the ratio cache's keys gathered for
    each of the n_seqs sequences of the reserve (csa_k_all: n_seqs x (SWA + ratio cells) x head_dim f16, split
    streams and a unified cache alike) where they do not fit the hole the q projection leaves below the hc streams
    (the query and two row blocks: 47.95 MiB on that file); the scores go below too where they fit what the keys
    leave of that hole, or a block of four rows beside it. Read off the same reserve (free blocks before each
    allocation replayed with galloc.py's rules): 282.34 MiB at 128K and 252.34 at 100K (the keys in the hole, the
    scores above the query), 347.84 at 256K x 2 (65.50 MiB of keys above the query, then the scores), 328.59 at 100K
    x 3 unified (75.75), and the query's peak where both fit below (169.59 at 32K, 185.84 at 128K x 2). The hole and
    the four-row block are read off this one file (n_embd 4096, 32 heads of 512, hc 4), not derived tensor by
    tensor. A rotated (quantized) K cache (k_rot bytes a matrix, one per cache with layers and the indexer's of its
    own key width) rotates the query into a new block that takes that hole: the query above the hc streams is gone
    and the keys, gathered in the cache's type, go above the streams where they miss the part of the region the
    rotated query leaves below it ((2 hc - 1) rows less the q_lora rows and the query: 21.99 MiB on that file); the
    scores take it, or the two-row block above the rotated query, where they fit. With q8_0 K and V: 253.34 MiB at
    128K (the keys below), 416.74 at 256K, 288.14 at 256K x 2 (34.40 / 34.80 MiB of keys above)."""
    resid = spec.n_embd * T * 4
    hc = _hc_streams(spec)
    held = [c for c in caches if c.layers and not c.name.endswith("state")]
    masks = dsv4_masks(caches, T, flash_attn)
    peak = 0
    for layer in attention_layers(spec):
        a = layer.attention
        q = a.n_heads * a.head_dim_k * T * 4
        if flash_attn:
            peak = max(peak, masks + (3 + 2 * hc) * resid + 2 * q)
            idx = next((c.cells for c in held if c.name == "indexer" and layer.index in c.layers), 0)
            k_rows = n_seqs * sum(c.cells for c in held if layer.index in c.layers and c.name != "indexer") \
                * a.head_dim_k
            lid = idx * T * 4
            if idx and not k_rot:
                k_all, hole = k_rows * 2, q + 2 * resid
                k_top = k_all if k_all > hole else 0
                # the scores take what the keys leave of that hole, or the block of four rows beside it
                lid_in = lid < hole if k_top else lid <= max(hole - k_all, 4 * resid)
                peak = max(peak, masks + (3 + 2 * hc) * resid + 2 * q + k_top + (0 if lid_in else lid))
            elif idx:
                k_all = k_rows * type_k.type_size // type_k.block_size if type_k is not None else k_rows * 2
                hole = (2 * hc - 1) * resid - a.q_lora_rank * T * 4 - q
                rots = (len(held) - 1) * k_rot + (a.index_head_dim ** 2 * 4 if a.index_head_dim % 64 == 0 else 0)
                k_top = k_all if k_all > hole else 0
                lid_in = lid <= max(hole - (k_all - k_top), 2 * resid)
                peak = max(peak, masks + rots + (3 + 2 * hc) * resid + q + k_top + (0 if lid_in else lid))
            continue
        # without flash attention the KQ scores over the window's cells and the layer's compressed rows (n_kv =
        # SWA cells + the ratio cache's cells), above the masks, 5 + 2 hc row blocks and the query. Fitted: 321.14
        # / 455.14 / 723.14 MiB at 8K / 16K / 32K (masks + KQ + 137.14 to 137.39 MiB; this formula 136)
        n_kv = sum(c.cells for c in held if layer.index in c.layers and c.name != "indexer")
        peak = max(peak, masks + n_kv * T * a.n_heads * 4 + (5 + 2 * hc) * resid + q)
    return peak


def hc_gdn_conv_phase(spec: ModelSpec, T: int, n_seqs: int, masks: int, snapshots: int = 1) -> int:
    """A gated delta-net layer's conv under hyper-connections (src/models/qwen4exp.cpp build_hc_mix, then
    build_layer_attn_linear): below the conv input and output, the masks while a later layer attends, one
    hidden-state row block beside them, the hc residual streams (hc x n_embd x T), their grouped norm (xn, kept for
    hc_inject), the block the hc gate (hc x n_embd) leaves and the fused q, k, v projection (conv_dim) takes, the
    mixed stream (one row block) and the low-rank gate input; above, the conv input (ggml_concat of the states and
    x^T) and the conv output. Read off ggml-alloc's placement of llama.cpp@0c1e57098's graph on the qwen4exp file
    (tests/ggufs.py: n_embd 2048, hc 4, conv_dim 8192): 96.24 MiB at 8K, 2 x 4 MiB more per doubling of the cells
    to 152.24 at 64K, 76.20 at 64K -ub 256.

    Then the delta-net output (ggml_gated_delta_net: d_inner x T floats plus the last states, d_state x d_inner per
    sequence and per kept row set: 1 + n_rs_seq with recurrent-state snapshots, src/models/delta-net-base.cpp) takes
    the hole the fused projection, the gathered conv states and the conv input leave, less the gathered SSM states
    and the normalised q and k (n_group x d_state x T each), where it fits; else it goes above the conv output, which
    its value view keeps alive. Read off the same reserve at -c 4096 x 4 (split streams): the output at 89.77 MiB,
    40.00 MiB with n_rs_seq 3, 129.77 printed (the conv phase's 89.88 before), 233.77 with 16 (144.00 MiB of output),
    134.24 with 16 and one sequence; without snapshots it fits the hole (16.00 of 16.56 MiB)."""
    f32 = 4
    resid = spec.n_embd * T * f32
    n_seqs = max(1, min(n_seqs, T))
    tokens = round_up(T, n_seqs)
    last_attn = max((layer.index for layer in attention_layers(spec)), default=-1)
    shapes = {t.name: t.shape for t in spec.weights.tensors}
    peak = 0
    for layer in spec.trunk_layers:
        r = layer.recurrent
        norm = shapes.get(f"blk.{layer.index}.hc_attn_norm.weight")
        if r is None or r.kind != "gated_delta_net" or not norm:
            continue
        hc = norm[0] // spec.n_embd
        low_rank = shapes.get(f"blk.{layer.index}.hc_attn_down.weight", (0, 0))[-1]
        conv_dim = r.d_inner + 2 * r.n_group * r.d_state
        concat = (max(r.d_conv - 1, 0) + tokens // n_seqs) * conv_dim * n_seqs * f32
        below = (masks if layer.index < last_attn else 0) + (2 + 2 * hc) * resid + low_rank * T * f32
        below += max(hc * spec.n_embd, conv_dim) * tokens * f32 + r.conv * n_seqs * f32
        out = (r.d_inner * tokens + r.ssm * n_seqs * snapshots) * f32
        hole = (r.conv * n_seqs + conv_dim * tokens - r.ssm * n_seqs - 2 * r.n_group * r.d_state * tokens) * f32 + concat
        peak = max(peak, below + concat + conv_dim * tokens * f32 + (out if out > hole else 0))
    return peak


def kda_delta_net_phase(spec: ModelSpec, T: int, n_seqs: int, masks: int, snapshots: int) -> int:
    """A KDA layer's delta net with recurrent-state snapshots (KDA_ARCHS: q, k and v each through its own short conv,
    n_group 0, then ggml_gated_delta_net, src/models/delta-net-base.cpp). Its output (d_inner x T floats plus the last
    states, d_state x d_inner per sequence and per kept row set, 1 + n_rs_seq) goes above the layer's conv stage:
    below, the masks while a later layer attends, three hidden-state row blocks (the embedding input, the embedded
    tokens, the attention norm) and the gathered conv states; above them the projection block (d_inner x T, each of
    q, k and v projected in it in turn), the three conv inputs (ggml_concat of the states and x^T), the first conv's
    output and the KDA gate (d_inner x T each). Read off ggml-alloc's placement of llama.cpp@0c1e57098's reserve on the
    kimi-k3 file (n_embd 2304, 32 heads of 128, -c 4096): with 16 snapshots the first KDA layer's output at 65.79 MiB
    with one sequence (107.79 printed, this formula exact) and at 63.63 with four (207.63); later layers there sit
    7.44 MiB higher (the previous layer's output kept for the attention residuals, and the fragmentation around it:
    215.07 printed, this formula 0.965 of it; 103.63 vs 111.07 at 3 snapshots, 0.933). Without snapshots the output
    (16 MiB there) is no peak (the attention phase holds), so the phase is only counted with them."""
    f32 = 4
    resid = spec.n_embd * T * f32
    n_seqs = max(1, min(n_seqs, T))
    tokens = round_up(T, n_seqs)
    last_attn = max((layer.index for layer in attention_layers(spec)), default=-1)
    peak = 0
    for layer in spec.trunk_layers:
        r = layer.recurrent
        if r is None or r.kind != "gated_delta_net" or r.n_group:
            continue
        below = (masks if layer.index < last_attn else 0) + 3 * resid + r.conv * n_seqs * f32
        block = r.d_inner * tokens * f32
        concat = (max(r.d_conv - 1, 0) + tokens // n_seqs) * r.d_inner * n_seqs * f32
        out = (r.d_inner * tokens + r.ssm * n_seqs * snapshots) * f32
        peak = max(peak, below + 3 * block + 3 * concat + out)
    return peak


def convnext_phase(spec: ModelSpec, T: int) -> int:
    """WavTokenizer's decoder (src/models/wavtokenizer-dec.cpp): each ConvNeXt block's depthwise convolution
    unfolds its input with IM2COL into an F16 tensor of kernel x T x channels, above three f32
    row blocks of the block's width (the block input, its transposed copy and the residual) and one token-embedding
    row block. Read off ggml-alloc's placement of llama.cpp@0c1e57098's CPU graph and checked at three ubatches on
    the wavtokenizer-dec file (width 768, kernel 7, n_embd 512): 5.38 / 10.75 / 21.50 MiB at -ub 256 / 512 / 1024,
    equal to this formula at every context (no KV cache)."""
    dw = next((t.shape for t in spec.weights.tensors if t.name.startswith("convnext.") and t.name.endswith(".dw.weight")),
              None)
    if dw is None:
        return 0
    kernel, width = dw[0], dw[-1]
    return (3 * width * 4 + kernel * width * 2 + spec.n_embd * 4) * T


def msa_phase(spec: ModelSpec, T: int, cells: dict[int, int], n_stream: int = 1) -> int:
    """MiniMax sparse attention with flash attention and one sequence (src/models/minimax-m3.cpp; in the stored
    source the block selection builds one attention mask per index head, dst [n_kv, T, n_index_heads], from the
    indexer's f32 scores over the whole cache, and asserts a single stream, -np 1; the binding's own graph was not
    read, and the split of the bytes below among its tensors is not verified). Measured on llama.cpp@0c1e57098's CPU
    buffer with 4, 8 and 16 index heads (= KV heads) at 4K to 32K cells and -ub 256 / 512: 8 bytes per index head
    and 6 more per cell and token, above five hidden-state row blocks (8K: 192.60 / 320.60 / 576.60 MiB, each
    doubling of the cells adding 152 / 280 / 536 MiB; the key length does not enter). Several sequences in a
    unified cache take the plain masked path (the feed-forward and logits phases hold).

    Split streams (-np N without --kv-unified) build the sparse mask stream by stream: the gathered index scores
    (GET_ROWS, cells x T / N x index heads floats) and their transposed copy for one stream at a time, above the f16
    mask input and its f32 copy for all streams (6 bytes a cell and token) and six row blocks. Read off ggml-alloc's
    placement of the reserve on that file (8 index heads): 124.56 / 200.59 / 344.65 MiB at 8K / 16K / 32K x 2 (this
    formula 124 / 200 / 352; before, the plain path: 110.55, 0.89 to 0.32 of those). At 4K x 2 the logits are the
    peak, placed by compute_phases (msa_streams)."""
    resid = spec.n_embd * T * 4
    peak = 0
    for layer in attention_layers(spec):
        a = layer.attention
        if a.index_n_heads:
            n_kv = cells.get(layer.index, 0)
            if n_stream > 1:
                peak = max(peak, n_kv * T * 6 + 2 * n_kv * (T // n_stream) * a.index_n_heads * 4 + 6 * resid)
            else:
                peak = max(peak, n_kv * T * (8 * a.index_n_heads + 6) + 5 * resid)
    return peak


# each spec's dense FFN rows, read once: every compute_phases of a plan or a fit asks for them, and reading them walks
# all the spec's tensors
_DENSE_FFN_ROWS = ByObject[dict[int, tuple[int, int, bool]]](64)


def _dense_ffn_rows(spec: ModelSpec) -> dict[int, tuple[int, int, bool]]:
    """_read_dense_ffn_rows(spec), memoised (the caller only reads it)."""
    return _DENSE_FFN_ROWS.get(spec, None, lambda: _read_dense_ffn_rows(spec))


_FFN_NORMED = ByObject[frozenset[int]](64)


def _ffn_normed(spec: ModelSpec) -> frozenset[int]:
    """The layers with a norm of their own before the FFN (ffn_norm / post_attention_norm), memoised."""
    return _FFN_NORMED.get(spec, None, lambda: frozenset(
        t.layer for t in spec.weights.tensors
        if t.layer is not None and t.name.split(".", 2)[-1].startswith(("ffn_norm.", "post_attention_norm."))))


_HEAD_GATED = ByObject[frozenset[int]](64)


def _head_gated(spec: ModelSpec) -> frozenset[int]:
    """The layers whose attention output is gated per head (attn_gate narrower than the hidden state: one sigmoid
    a head and token, a small block of its own after the attention), memoised."""
    return _HEAD_GATED.get(spec, None, lambda: frozenset(
        t.layer for t in spec.weights.tensors
        if t.layer is not None and ".attn_gate." in t.name and len(t.shape) == 2 and t.shape[1] < spec.n_embd))


def _read_dense_ffn_rows(spec: ModelSpec) -> dict[int, tuple[int, int, bool]]:
    """Per layer with a dense FFN: (gated wide tensors, ungated wide tensors, parallel block), each wide tensor
    n_ff floats a token, read off the layer's tensors as llm_graph_context::build_ffn (src/llama-graph.cpp) runs
    them:
    - ffn_gate beside ffn_up (LLM_FFN_PAR): gate, up and the SwiGLU product;
    - ffn_up alone, twice ffn_down's input wide (glm4, chatglm, modern-bert, neo-bert: the fused gate-up that
      build_ffn splits in the SWIGLU op, LLM_FFN_SEQ): the 2 n_ff up projection and the n_ff product, counted
      as three n_ff tensors like the gated case;
    - ffn_up alone as wide as ffn_down's input (GELU MLPs, LLM_FFN_SEQ): one tensor, the activation and the bias
      add run in place on it (ggml-alloc's ggml_op_can_inplace for unary ops and ggml_add);
    - parallel block: no ffn_norm / post-attention norm in the layer, so the FFN reads the attention norm's
      output (src/models/phi2.cpp: build_ffn(attn_norm_output, ...) beside the attention), which stays alive
      through the attention: one more hidden-state row below the FFN."""
    up: dict[int, int] = {}
    down: dict[int, int] = {}
    gate, norm = set(), set()
    for t in spec.weights.tensors:
        if t.layer is None:
            continue
        name = t.name.split(".", 2)[-1]
        if name.startswith("ffn_up.") and len(t.shape) == 2:
            up[t.layer] = t.shape[1]
        elif name.startswith("ffn_down.") and len(t.shape) == 2:
            down[t.layer] = t.shape[0]
        elif name.startswith(("ffn_gate.", "ffn_gate_up.")):
            gate.add(t.layer)
        elif name.startswith(("ffn_norm.", "post_attention_norm.", "attn_post_norm.", "attn_output_norm.")):
            norm.add(t.layer)
    rows: dict[int, tuple[int, int, bool]] = {}
    for il, width in up.items():
        if il in gate:
            continue
        fused = down.get(il) is not None and width == 2 * down[il]
        rows[il] = (down[il], 0, il not in norm) if fused else (0, width, il not in norm)
    return rows


# PR #14158 ("ggml : implement REGLU/GEGLU/SWIGLU ops", a0535ffa0, 2025-06-29, b5776: its count on master; the
# OpenCL port #14456 followed at b5788): build_ffn's gated activation became one SWIGLU node beside gate and up.
# Before it SiLU ran in place on the gate and the product in place on it, so two n_ff-wide tensors were alive, not
# three.
SWIGLU_OP_BUILD = 5776
# PR #6505 "ggml : group all experts in a single ggml_mul_mat_id" (0d56246f, b2694): build_moe_ffn runs the used
# experts as one MUL_MAT_ID each for up, gate and down ([n_ff, n_expert_used, n_tokens]). Before it llama.cpp's MoE
# branch (llama.cpp build_llama at ceebbb5b, b2008) loops over the n_expert_used experts, each with its own up, gate,
# SiLU (a new tensor) and product of one n_ff row per token, the previous experts' weighted sum (moe_out) alive
MOE_GROUPED_BUILD = 2694
# The speculative drafts that carry their own embeddings (src/models/eagle3.cpp, dflash.cpp): their layer input is
# the normed token embeddings beside the target's features, freed once the attention has read them, so below the
# FFN only the FFN input and its norm stay (plus the masks and one more row block while a later layer attends).
# Read off ggml-alloc's placement of llama.cpp@0c1e57098's CPU graphs (eagle3 1 layer: 100.00 MiB at 8K = 2 rows +
# 3 x n_ff; dflash 2 layers: 104.01 = masks + 3 rows + 3 x n_ff in the first layer, its last layer 2 rows).
# Granite Switch (src/models/granite-switch.cpp) adds each projection's per-token adapter delta (MUL_MAT_ID on the
# lora_b stacks) to it, so its FFN runs gate + delta, SiLU in place, up + delta, product in place: still three
# n_ff-wide tensors at the up delta, above the masks and three rows (the scaled input, the FFN input and its norm).
# Read off the same dumps: 97.02 / 105.02 MiB at 8K / 16K x 4 (masks + 3 rows + 3 x n_ff exactly), 112.85 at 32K
# q8_0 where the quantized cache's rotation leaves two rows; its last layer's FFN sits four rows up
DRAFT_FFN_ROWS = {"eagle3": (3, 2), "dflash": (3, 2), "graniteswitch": (3, 4)}
# Read off ggml-alloc's placement of laguna's dense first layer (src/models/laguna.cpp; 32K, q8_0 cache): ffn_gate and
# ffn_up above the masks and the FFN input rows, ffn_swiglu in the freed FFN-norm block below them. Measured 110.55 /
# 104.52 MiB at 32K q8_0 / 16K x 4 unified (gate and up: 111.50 / 107.00 here; three wide tensors: 133.00 / 128.50)
SWIGLU_IN_HOLE = frozenset({"laguna"})
# GLM-4.5's dense leading layers (src/models/glm4-moe.cpp build_ffn, LLM_FFN_PAR): 96 heads of 128 make the attention
# output (n_head x head_dim_v floats a token) as wide as the FFN or wider, so once the output projection has read it
# the gate takes its block, and up and the SwiGLU product sit above the FFN input: the masks, three hidden-state rows
# and the attention output below two n_ff-wide tensors. Read off ggml-alloc's placement of llama.cpp@0c1e57098's
# reserve on GLM-4.5-Air's 2-trunk file with one output row (the dense layer the peak): 94.76 / 98.76 MiB at 4K / 8K
# (masks + 4 rows + three wide tensors: 100.12 / 104.12); GLM-4.5's (n_embd 5120, n_ff 12288) 106.01 at 4K (116.00).
# The first MoE layer after them keeps its FFN input above that block, the experts above it: masks, two rows and the
# attention output below (GLM-4.5-Air 174.01 MiB at 4K, GLM-4.5 200.01; masks + 4 rows: 166 / 196). The MoE layers
# after an MoE layer sit lower (GLM-4.5-Air's third: 158.76)
GATE_IN_ATTN_OUT = frozenset({"glm4moe"})
# plain GELU MLPs whose first layer stays at masks + 3 rows (the plain MLP's first-layer rule skips them): gptneox's
# RoPE'd Q (from the fused QKV) takes the attention norm's block, the output projection goes back there and
# ffn_up takes the freed flash-attention output's block (ggml-alloc's placement of llama.cpp@0c1e57098's reserve on
# the 2-layer sweep file, -c 8192 -np 1, one output row: 53.51 MiB, ffn_up at 32.01)
PLAIN_FFN_THREE_ROWS = frozenset({"gptneox"})
# the architectures whose graph builds the final norm with LLM_NORM (src/models/<arch>.cpp: build_norm(cur,
# model.output_norm, model.output_norm_b, LLM_NORM, -1), llama.cpp@0c1e57098 to 3f545becc): ggml_norm, which
# ggml-alloc.c ggml_op_can_inplace does not list (RMS_NORM it does), so result_norm takes a block of its own instead of
# the last layer's output (plain_mlp_output_rows)
FINAL_LAYER_NORM = frozenset({"bloom", "codeshell", "cohere2", "command-r", "dbrx", "falcon", "gpt2", "gptneox", "jais",
                              "jais2", "modern-bert", "mpt", "nemotron", "orion", "phi2", "pockettts", "rwkv6", "rwkv7",
                              "stablelm", "starcoder", "starcoder2", "wavtokenizer-dec"})


def plain_mlp_output_rows(spec: ModelSpec, T: int, masks: int, v_rotated: bool) -> int:
    """The hidden-state rows below the logits (the unread embeddings input included) where the last layer is a
    sequential ungated MLP (GELU / ReLU^2: build_ffn with ffn_up alone, LLM_FFN_SEQ), every token an output and flash
    attention on; 0 for any other graph (the plain logits phase's two rows hold). Read off ggml-alloc's placement of
    llama.cpp@0c1e57098's reserve (tests/groundtruth/gallocr_dump.c) on the 2-layer sweep files:
    - an F16 cache: the last layer's output projection takes the freed KQ mask block, its gathered rows the flash
      attention output's, so l_out lands in the mask block one row above inp_embd. An RMS final norm runs in place on
      it (logits + 2 rows: arcee 78.50 MiB at 8K); a LayerNorm (FINAL_LAYER_NORM) needs a new block, which only the
      free tail above l_out has: logits + 3 rows (nemotron, bloom, mpt, codeshell, jais2 86.50 at 4K to 32K);
    - a rotated V cache (q8_0 V with flash attention) with masks of a row or more: the un-rotation and the output
      projection both land in the mask block, and l_out a row higher, above the freed ffn_inp block. An RMS norm in
      place on l_out: logits + 3 rows (arcee, apertus 86.50 at 32K); a LayerNorm drops into the freed ffn_inp block,
      l_out is freed under the logits: 2 rows (nemotron 78.50 at 8K to 20K and 32K; 86.50 at 24K, where the placement
      differs: not modelled)."""
    last = spec.trunk_layers[-1] if spec.trunk_layers else None
    if last is None or spec.architecture in PLAIN_FFN_THREE_ROWS or spec.architecture in POST_NORM_ENCODERS:
        return 0
    fused, plain, parallel = _dense_ffn_rows(spec).get(last.index, (0, 0, True))
    if not plain or parallel or fused:
        return 0
    rotated = v_rotated and masks >= spec.n_embd * T * 4
    layer_norm = spec.architecture in FINAL_LAYER_NORM
    return 3 if rotated != layer_norm else 2
# parallel blocks whose attention output projection (build_attn's wo and its bias) runs before the FFN in the first
# layer: the flash-attention output's block is freed under it, too narrow for ffn_up, so the first layer's FFN sits
# above masks + 5 rows (inp_embd, embd, attn_norm, the freed FA block, the projected output), one row over falcon's
# (whose wo runs after its FFN). ggml-alloc's placement of llama.cpp@0c1e57098's reserve on the 2-layer phi2 sweep
# file (src/models/phi2.cpp), -c 8192 -np 1, one output row, flash attention: ffn_up at 48.01 MiB, 69.51 in all
# (65.51 at 4K); later layers reuse the embedding lookup's block and stay at masks + 4 rows
PARALLEL_ATTN_OUT_FIRST = frozenset({"phi2"})
# GLM-4.5-Air's MTP graph (llama.cpp@0c1e57098, LLAMA_CONTEXT_TYPE_MTP): see mtp_moe_block
MTP_BLOCK_ROWS = frozenset({"glm4moe"})


def mtp_moe_block(resid: int, masks: int, router: int, wide: int, weighted: int) -> int:
    """The MoE block of GLM-4.5-Air's MTP graph. Its FFN input sits in the target's hidden-state input block, and the
    freed KQ mask block is a closed hole (out_ids, read at the graph's end, sits just above it): the post-attention
    norm, the router's scores, then gate, up and the SwiGLU product each take it while they fit what is left of it,
    the rest stacks on the free tail above; the down projection (the weighted rows) takes the block gate and up free
    where it fits, else the tail. Read off ggml-alloc's placement: 150.01 / 146.76 / 154.01 / 148.01 / 158.01 MiB at
    4K / 8K / 16K / 32K / 64K (the norm above the masks; in them; norm and router; gate too; up too)."""
    room, tail, placed = masks, 0, []
    for item in (resid, router, wide, wide, wide):
        fits = item <= room
        room -= item if fits else 0
        tail += 0 if fits else item
        placed.append(fits)
    if placed[2] and placed[3]:
        # gate and up in the hole: the block they free, and what the product (if in the hole too) leaves above it
        free = 2 * wide + (0 if placed[4] else room)
    elif not placed[2] and not placed[3]:
        free = 2 * wide  # both on the tail, under the product
    else:
        free = max(wide + room, wide)  # gate in the hole (with what is left of it), up on the tail
    return resid + masks + tail + (0 if weighted <= free else weighted)


def feed_forward_phases(spec: ModelSpec, T: int, masks: int, n_outputs: int, build: int,
                        old_graph: bool = False, v_rotated: bool = False, sum_hole: bool = True,
                        freed_masks: dict[int, int] | None = None, iswa_v_idxs: tuple[int, int] = (0, -1)
                        ) -> tuple[int, int]:
    """The feed-forward block's peaks in the worst-case graph, read off ggml-alloc's placement of the graph
    llama.cpp@0c1e57098 builds (each node's offset in the CPU compute buffer, dumped through the scheduler's
    eval callback; tests/test_llamacpp_compute.py holds the measured buffers). Returns (workspace, output).

    Workspace (every layer): ggml_gallocr places the FFN's wide tensors above what the layer keeps alive: the
    graph's embedding input row block, the KQ masks while a later layer still reads them, the FFN input and its
    norm and one freed row block between them (masks + 4 hidden-state rows; 5 rows once no attention layer
    follows). Above that a gated dense FFN (build_ffn, LLM_FFN_PAR) holds gate, up and the SwiGLU product at
    once (3 x n_ff floats a token); an MoE block (build_moe_ffn) the same for the used experts (ffn_moe_gate,
    ffn_moe_up, ffn_moe_swiglu: 3 x n_used x n_ff_exp), then ffn_moe_down / ffn_moe_weighted (n_used x n_embd
    floats a token) in the freed gate and up block, or above the SwiGLU product where it does not fit there; a
    shared expert's gate, up and product one row higher (the routed sum alive beside it). Dense layers by their
    tensors (_dense_ffn_rows: gated, fused gate-up, GELU in place, parallel blocks). Builds before the SWIGLU op
    (SWIGLU_OP_BUILD) hold two wide tensors, not three.

    Output (the last layer is MoE with shared experts and every token is an output): the shared experts read
    the FFN norm after the routed experts, so it stays alive, and the expert sum (ffn_moe_out) finds no free
    row block below ffn_moe_weighted: it and the final norm sit above the n_used weighted rows, and the logits
    above them (ernie4_5-moe, hunyuan-moe, llama4). Only when the KQ masks are at least one row block (the freed
    mask block takes the last layer's FFN input); smaller masks (short contexts, several streams of few cells)
    leave a hole the sum fits in, and the logits sit three rows up. Where the weighted rows went above the
    SwiGLU product, the sum takes the freed gate block and the logits sit four rows up (glm4moe). Without shared
    experts the FFN norm is freed early and the output phase of compute_phases holds (qwen3moe, minimax-m2;
    Hunyuan V3's graph, whose final norm stays alive, in final_norm_kept_output)."""
    f32 = 4
    resid = spec.n_embd * T * f32
    attn_at = [layer.index for layer in attention_layers(spec)]
    last_attn = max(attn_at, default=-1)
    post_norm = spec.architecture in POST_NORM_ENCODERS
    if spec.architecture in NO_CACHE_GRAPHS:
        # every layer reads the one T x T mask (NO_CACHE_GRAPHS): below the FFN the masks and four hidden-state
        # rows as in a decoder; two in the post-norm BERT graphs (POST_NORM_ENCODERS), plus the down projection's
        # rows where it cannot take the block of the up projection it reads (GELU in place on it)
        last_attn = len(spec.layers)
        if post_norm:
            masks -= 2 * resid
    gated_experts = {t.layer for t in spec.weights.tensors
                     if t.layer is not None and (".ffn_gate_exps." in t.name or ".ffn_gate_up_exps." in t.name)}
    dense = _dense_ffn_rows(spec)
    wide_alive = 3 if build >= SWIGLU_OP_BUILD else 2  # gate, up (and the SWIGLU product)
    work = 0
    recurrent = any(layer.recurrent is not None for layer in spec.layers)
    # the last layer's FFN reads only the output rows: its graph gathers them (ggml_get_rows of inp_out_ids) after the
    # attention, before the FFN (src/models/glm4-moe.cpp and the other decoders: `il == n_layer - 1 && inp_out_ids`),
    # so with fewer outputs than tokens (llama-server's n_outputs_max, reserved_outputs) its workspace is that of
    # n_outputs rows (ggml-alloc's placement of llama.cpp@0c1e57098's reserve on the 2-layer glm4moe file at 4K with
    # one output row: the MoE layer's rows within 0.3 MiB above the embedding input; the peak the dense first
    # layer's FFN, 94.76 MiB). Not the MTP context's view (mtp.nextn_view: the next-n block at its own index, not
    # n_layer - 1): the MTP graph runs its block on every token (GLM-4.5-Air's: 150.01 MiB at 4K with one output row)
    trunk = spec.trunk_layers
    gathered = trunk[-1].index if trunk and trunk[-1].index == len(trunk) - 1 and n_outputs < T else None
    T_all, resid_all, masks_all = T, resid, masks
    for layer in spec.trunk_layers:
        f = layer.ffn
        T, resid, masks = (n_outputs, spec.n_embd * n_outputs * f32, 0) if layer.index == gathered \
            else (T_all, resid_all, masks_all)
        # below the FFN: the masks, the embedding input, the FFN norm in the layer input's freed block, the attention
        # output's freed block (one row, or up to two where n_head x head_dim_v is wider than n_embd) and the FFN input
        # above it. Wider still (glm4moe's three rows) the FFN input takes a lower block (GATE_IN_ATTN_OUT). Read off
        # ggml-alloc's placement with one output row: Qwen3-30B-A3B (2 rows) 92.01 MiB at 4K, gpt-oss-20b (1.42)
        # 97.14, Gemma 3 12B (1.07) 126.02, Seed-OSS and MiniMax-M2 (2 rows) 216.01 / 106.01 (one row: 0.94-0.98).
        # Not in hybrids: Qwen3.5's gated attention keeps the one-row figure (325.13 MiB on a device of the
        # pipeline-parallel split in tests/test_llamacpp_split.py)
        a_out = layer.attention.n_heads * layer.attention.head_dim_v * T * f32 \
            if layer.attention is not None and not layer.attention.kv_lora_rank and not recurrent else 0
        base = masks + 3 * resid + (a_out if resid < a_out <= 2 * resid else resid) if layer.index < last_attn \
            else 5 * resid
        freed = (freed_masks or {}).get(layer.index, 0)
        if layer.index < last_attn and freed >= resid:
            # the last layer of one iSWA cache (_freed_iswa_masks) while the other's layers follow: its freed mask block
            # takes the attention output's residual (sa_out), and the FFN norm too where it holds two row blocks, so
            # gate, up and the product sit above the masks and one row (the embedding input), or two (the norm in the
            # freed layer-input block). Read off ggml-alloc's placement of llama.cpp@0c1e57098's reserve on the 2-layer
            # gemma2 file (sliding, then full; n_embd 3584), 4 slots unified with flash attention: 139.52 MiB at 32K
            # (16.50 MiB SWA mask, the norm there too), 114.02 / 122.02 at 8K / 12K (8 / 12 MiB: the residual only)
            base = masks + (1 if freed >= 2 * resid else 2) * resid
        if layer.index < iswa_v_idxs[1]:
            base += iswa_v_idxs[0]  # the other iSWA cache's V indices (compute_phases), while both caches have layers to run
        if v_rotated and spec.architecture in LM_HEAD_SCALED:
            # MiniCPM3 with a rotated V cache: the attention output is un-rotated into a new block, the output
            # projection takes the freed one below it, and the FFN's input sits one row lower (llama.cpp@0c1e57098's
            # reserve on the minicpm3 file with q8_0 K and V: 84.53 / 100.53 / 116.53 MiB at 32K / 48K / 64K, one
            # row block under the f16 cache's 89.51 at 32K)
            base -= resid
        if old_graph:
            # the older graph (OLD_GRAPH_LAST_BUILD, no flash attention): the masks and three rows below gate and
            # up in every layer (b228aba on the CPU, 2 layers, -c 512, vocab 4096: 68.01 MiB at n_ff 11008,
            # 153.01 at 32768 = 1 + 24 + 2 x n_ff x 512 x 4 B)
            base = masks + 3 * resid
        if spec.architecture in DRAFT_FFN_ROWS:
            attending, last = DRAFT_FFN_ROWS[spec.architecture]
            base = masks + attending * resid if layer.index < last_attn else last * resid
        if spec.architecture in MTP_BLOCK_ROWS and trunk and trunk[-1].index != len(trunk) - 1 and f.is_moe:
            # the MTP context's block (mtp.nextn_view)
            biased = any(t.layer == layer.index and ".exp_probs_b" in t.name for t in spec.weights.tensors)
            work = max(work, mtp_moe_block(resid, masks, (3 if biased else 2) * f.n_experts * T * f32,
                                           f.n_experts_used * f.n_ff_expert * T * f32, f.n_experts_used * resid))
            continue
        if f.is_moe and layer.index not in gated_experts:
            # GELU experts (build_moe_ffn with up only, nomic-bert-moe): the activation in place on the used
            # experts' up rows, their down projection above them
            work = max(work, base + f.n_experts_used * (f.n_ff_expert * T * f32 + resid))
        elif f.is_moe:
            wide = f.n_experts_used * f.n_ff_expert * T * f32
            weighted = f.n_experts_used * resid
            a = layer.attention
            prev = next((la for la in spec.layers if la.index == layer.index - 1), None)
            if spec.architecture in GATE_IN_ATTN_OUT and a is not None and prev is not None and not prev.ffn.is_moe \
                    and a.n_heads * a.head_dim_v > 2 * spec.n_embd:
                # the first MoE layer after the dense ones: its FFN input sits above the attention output's block
                # (GATE_IN_ATTN_OUT), the experts above it
                base = masks + 2 * resid + a.n_heads * a.head_dim_v * T * f32
            # three wide blocks in every era: llama.cpp 8733e0c (May 2025, before the SWIGLU op) gives a 2-layer
            # Qwen3-30B-A3B-shaped file the same CPU buffer as 0c1e57098 (120.01 MiB at 32K, FA, -ub 512)
            if build >= MOE_GROUPED_BUILD:
                work = max(work, base + 3 * wide + (weighted if weighted > 2 * wide else 0))
            else:
                # one expert at a time (MOE_GROUPED_BUILD): its up, gate and SiLU rows beside the sum of the ones
                # before. llama.cpp#5206 (b2008, Mixtral 8x7B through Metal, -c 512): Metal 125.98 MiB
                one = f.n_ff_expert * T * f32
                work = max(work, base + 3 * one + (resid if f.n_experts_used > 1 else 0))
            if f.n_ff_shared:
                # the shared expert (build_ffn after build_moe_ffn, src/models/qwen2moe.cpp and the other MoE
                # graphs with ffn_*_shexp) runs while the routed experts' sum is alive: its gate, up and product
                # above the masks and five hidden-state rows in every layer (qwen2moe on the CPU: 0.94 to 1.08 of
                # llama.cpp's at -ub 256 to 1024, 4K to 32K)
                work = max(work, masks + 5 * resid + wide_alive * f.n_ff_shared * T * f32)
        elif layer.index in dense:
            fused, plain, parallel = dense[layer.index]
            if plain:
                # a GELU MLP keeps one row fewer below its up rows than a gated FFN (gpt2, starcoder, gptneox:
                # masks + 3 rows), a parallel block one more (falcon), BERT's post-norm graph three rows
                below = base + (resid if post_norm else 0 if parallel else -resid)
                if not post_norm and not parallel and layer.index == spec.trunk_layers[0].index \
                        and spec.architecture not in PLAIN_FFN_THREE_ROWS:
                    # the first layer keeps the gated FFN's rows: below the inp_embd input, the masks and the
                    # embedding lookup (gpt2 / starcoder's learned pos_embd added there) the flash-attention
                    # output takes the attention norm's block and the output projection / ffn_inp the freed QKV
                    # block above it, so masks + 4 rows sit under ffn_up (not gptneox: PLAIN_FFN_THREE_ROWS).
                    # Read off ggml-alloc's placement of llama.cpp@0c1e57098's reserve on the 2-layer gpt2 sweep
                    # file with one output row (-c 8192 -np 1, flash attention): ffn_up at 40.01 MiB, 61.51 in all
                    # (57.51 at 4K; the same for starcoder, bloom and mpt)
                    below = base
                    if v_rotated:
                        # a rotated V cache (flash attention, quantized V: the attention output un-rotated by a
                        # mul_mat into a new block) moves the output projection and ffn_inp into the attention
                        # norm's block, one row lower: masks + 3 rows, as MiniCPM3's (ggml-alloc's placement of
                        # llama.cpp@0c1e57098's reserve on the 2-layer nemotron / arcee sweep files, q8_0 K and V:
                        # ffn_up-0 at 56.09 MiB of 77.59 at 32K; 109.59 printed at 64K, masks + 4 rows: 117.50)
                        below -= resid
                if parallel and layer.index == spec.trunk_layers[0].index \
                        and spec.architecture in PARALLEL_ATTN_OUT_FIRST:
                    below = base + resid
            else:
                below = base + (resid if parallel else 0)
            work = max(work, below + (wide_alive * fused + plain) * T * f32)
        elif f.n_ff:
            # Laguna's leading dense layer: the SwiGLU product takes the block its FFN norm frees (with the attention
            # temporaries freed beside it), so only gate and up sit above the rest (SWIGLU_IN_HOLE)
            alive = 2 if spec.architecture in SWIGLU_IN_HOLE else wide_alive
            a = layer.attention
            attn_out = a.n_heads * a.head_dim_v * T * f32 if a is not None else 0
            if spec.architecture in GATE_IN_ATTN_OUT and wide_alive == 3 and f.n_ff * T * f32 <= attn_out:
                # the gate takes the attention output's freed block (GATE_IN_ATTN_OUT)
                work = max(work, masks + 3 * resid + attn_out + 2 * f.n_ff * T * f32)
            else:
                if v_rotated and layer.index in _ffn_normed(spec) and layer.index not in _head_gated(spec) \
                        and spec.architecture not in LM_HEAD_SCALED and spec.architecture not in SWIGLU_IN_HOLE \
                        and spec.architecture not in NO_CACHE_GRAPHS and spec.architecture not in DRAFT_FFN_ROWS \
                        and not (old_graph or layer.index == gathered):
                    # a rotated V cache: ffn_inp one row lower, as for the plain MLP's first layer above (ggml-alloc's
                    # placement of llama.cpp@0c1e57098's reserve on the 4-layer xverse sweep file, q8_0 K and V: gate,
                    # up and the SwiGLU product above the masks and three rows in every layer, 120.59 MiB at 32K,
                    # 152.59 at 64K; masks + 4 rows: 128.50 / 160.50). Not where the FFN reads the layer input's
                    # own rows without a norm of its own (talkie, hrm_text: 128.59 at 32K, masks + 4 rows), nor under
                    # a per-head attention gate (_head_gated: its small block takes the freed one the output
                    # projection would, spark2_5 133.18 at 32K), nor in a graph without a cache (no rotation), nor
                    # in the drafts' graphs (DRAFT_FFN_ROWS, placed there)
                    base -= resid
                work = max(work, base + alive * f.n_ff * T * f32)
    T, resid, masks = T_all, resid_all, masks_all
    out = 0
    trunk = spec.trunk_layers
    last = trunk[-1] if trunk else None
    f = last.ffn if last is not None else None
    if f is not None and f.is_moe and (f.n_ff_shared or f.n_shared_experts) and n_outputs >= T:
        logits = spec.n_vocab * n_outputs * f32
        if masks < resid and sum_hole:
            # the sum in a hole below: the logits three rows up
            out = logits + 3 * resid
        elif f.n_experts_used * resid <= 2 * f.n_experts_used * f.n_ff_expert * T * f32:
            # the embedding input, FFN input and FFN norm below the router's scores (the logits in place, the
            # top-k sort, and the biased scores where the layer has exp_probs_b); the weighted experts, their sum
            # and the logits above
            biased = any(t.layer == last.index and ".exp_probs_b" in t.name for t in spec.weights.tensors)
            router = (3 if biased else 2) * f.n_experts * T * f32
            out = logits + (4 + f.n_experts_used) * resid + router
        else:
            # the weighted experts above the SwiGLU product: the sum in the freed gate block, four rows up
            out = logits + 4 * resid
    return work, out


# PR #23907 "cuda: reserve space for quantize kv-cache at startup" (f8f0a47a5, 2026-06-03, b9489): ggml-cuda's
# buffer type sizes a FLASH_ATTN_EXT node with room for F16 copies of its K and V views behind the output
# (ggml-cuda.cu ggml_backend_cuda_buffer_type_get_alloc_size -> fattn.cu ggml_cuda_flash_attn_ext_get_alloc_size,
# fattn-common.cuh ggml_cuda_flash_attn_ext_get_f16_extra_data; unchanged to 2026-08), so the conversion the
# kernels made in the pool before now sits in the compute buffer. The HIP build compiles the same file.
CUDA_FA_F16_BUILD = 9489
_GGML_CUDA = ("cuda", "rocm")


def fa_f16_bytes(a: Attention, n_kv: int, T: int, ctx: Context) -> int:
    """The F16 copies of one layer's K and V views (n_kv cells of n_kv_heads x head_dim) that ggml-cuda adds to its
    flash-attention output, each 128-byte aligned behind it (ggml_cuda_flash_attn_ext_get_f16_extra_data).
    ggml_cuda_get_best_fattn_kernel picks the MMA, WMMA or tile kernel, which read F16 and so convert any other
    type, for every batch of more than two tokens (the vector kernel, which reads quantized K and V itself and
    converts only F32, takes batches of one, and of two on Ada and newer; a -ub 2 on older cards is counted without
    the copies): the worst-case graph's n_tokens = min(n_ctx, n_ubatch).
    Replayed on the CPU through llama.cpp's own scheduler and ggml-alloc with the fake devices sized this way
    (tests/test_llamacpp_split.py), it gives the 8 x RTX 3090 log's 1553 / 1617 / 1601 MiB to the MiB."""
    out = a.n_heads * a.head_dim_v * T * 4  # the F32 output rows, 128-byte aligned before each copy
    end = out
    for ty, dim in ((ctx.type_k, a.head_dim_k), (ctx.type_v, a.head_dim_v)):
        if ty.name != "f16" and (T > 2 or ty.name == "f32"):
            end = round_up(end, 128) + n_kv * a.n_kv_heads * dim * 2
    return end - out


# ggml-cuda's graph_optimize (ggml-cuda.cu ggml_backend_cuda_graph_optimize, llama.cpp@0c1e57098: "add alloc deps
# for performance positive fusions. This may increase the overall compute buffer size") asks the scheduler to keep
# the tensors of two MoE fusions allocated until a later node (add_alloc_dep; ggml-backend.cpp
# ggml_backend_sched_split_graph puts a GGML_OP_NONE node reading the kept tensors right after that node, and
# ggml-alloc.c ggml_gallocr_alloc_graph_impl counts it as one more consumer): the top-k router
# (ggml_cuda_topk_moe_fusion with ggml_cuda_should_use_topk_moe: a power-of-two expert count up to 512, or 288 /
# 576) keeps its nodes and their sources until the node after it, and the weighted expert sum
# (ggml_cuda_match_moe_weighted_reduction: 2 to 15 experts used) its experts and router weights until the sum, so
# the weighted product no longer runs in place on the experts' down rows. PR #27301 ("ggml: allow passing alloc
# dependencies in graph_optimize", opened 2026-08-18) and PR #25952 ("cuda: fuse MoE weighted expert reduction",
# reviewed to 2026-09-01, about b10729) came after NEWEST, so the rule is placed there (settings.NEWEST_PLACED).
# GGML_CUDA_DISABLE_FUSION=1 turns it off (not modelled).
CUDA_FUSION_DEPS_BUILD = int(NEWEST[1:])
CUDA_ALIGN = 128  # ggml-cuda.cu ggml_backend_cuda_buffer_type_get_alignment
METAL_ALIGNMENT = 32  # ggml-metal.cpp ggml_backend_metal_buffer_type_{shared,private}_get_alignment (b7140)
# the MoE graphs compute_graphs.moe_device_graph replays (src/models/qwen3moe.cpp, glm4-moe.cpp, hunyuan-moe.cpp,
# ernie4-5-moe.cpp: the same trunk, see moe_device_graph)
MOE_DEVICE_GRAPHS = frozenset({"qwen3moe", "glm4moe", "hunyuan-moe", "ernie4_5-moe"})
# src/models/openai-moe.cpp, replayed by compute_graphs.gpt_oss_device_graph
GPT_OSS_GRAPHS = frozenset({"gpt-oss"})
# src/models/deepseek2.cpp, replayed by compute_graphs.deepseek2_device_graph
DEEPSEEK2_DEVICE_GRAPHS = frozenset({"deepseek2"})


def _iswa_caches(caches: list[Cache], T: int, flash_attn: bool) -> list[tuple[tuple[int, ...], int, int]]:
    """The caches in the order the graph first reads them: (layers, cells, KQ mask bytes)."""
    used = sorted((c for c in caches if c.layers), key=lambda c: min(c.layers))
    return [(tuple(c.layers), c.cells, _mask_bytes(c.cells, T, flash_attn)) for c in used]


def cuda_fusion_deps(ctx: Context, devices: tuple[Device, ...], s: LlamaCppSettings) -> bool:
    """Whether the devices are ggml-cuda's (CUDA or HIP) in a build whose graph_optimize keeps the MoE fusions'
    tensors alive (CUDA_FUSION_DEPS_BUILD)."""
    return ctx.build >= CUDA_FUSION_DEPS_BUILD and infer_backend(devices, s.backend).name in _GGML_CUDA


def _tensor_overrides(s: LlamaCppSettings) -> bool:
    """Whether tensors are placed by hand (-ot, --cpu-moe, --n-cpu-moe), not by -ngl's layer split alone: no
    pipeline parallelism then (pipeline_parallel), and the device replays below model -ngl's placement only."""
    return bool(s.override_tensor or s.cpu_moe or s.n_cpu_moe)


def _host_weights(spec: ModelSpec, devices: tuple[Device, ...], s: LlamaCppSettings, placement: Placement,
                  host_layers: set[int]) -> dict[str, int]:
    """The host layers' weights by name, at their size in a device buffer: the copies a split reads when op offload
    runs their products on the device (compute_graphs._Graph.host_weight, sched_replay)."""
    return {t.name: gpu_alloc_size(t) for t in model_buffers(spec, devices, s, placement).cpu_tensors
            if t.layer in host_layers}


def _host_cache_views(caches: list[Cache], host_layers: set[int], s: LlamaCppSettings) -> dict[int, tuple[int, int]]:
    """Per layer whose cache is on the host (a host layer's, every layer's with -nkvo), its K and V views' bytes: the
    copies the device's attention reads, the stores running on the host (compute_graphs._Graph.store_kv)."""
    return {il: (c.k_bytes_by_layer.get(il, 0), c.v_bytes_by_layer.get(il, 0))
            for c in caches for il in c.layers if il in host_layers or s.no_kv_offload}


def _f16_copies_affine(attentions: list[Attention]) -> bool:
    """Whether fa_f16_bytes grows linearly with n_kv for these layers: each K copy a whole number of 128-byte
    blocks at any n_kv (n_kv_heads x head_dim_k a multiple of 64 F16 values), so V's 128-byte alignment behind it
    adds nothing that depends on n_kv."""
    return all(a.n_kv_heads * a.head_dim_k % 64 == 0 for a in attentions)


def _cuda_device_peak(key: Hashable, build: Callable[[int], sched_replay.Graph], n_kv: int, host: dict[str, int],
                      affine: bool = True) -> int:
    """A replayed pp graph's peak on the ggml-cuda device: its lowering kept by `key` and re-placed for n_kv cells
    (sched_replay.device_peak_by_kv: a context search replays only ggml-alloc), or the graph built and replayed for
    n_kv itself where its sizes are not affine in n_kv (flash attention's padded F16 copies, no cache that follows
    the context)."""
    if not affine:
        return sched_replay.device_peak(build(n_kv), CUDA_ALIGN)
    return sched_replay.device_peak_by_kv(key, build, n_kv, CUDA_ALIGN, host)


class _OneDevice(NamedTuple):
    """What every scheduler replay of one ggml-cuda device's pp graph reads first (lfm2_, mla_, qwen35_, iswa_,
    gemma3n_, llama_ and kimi_linear_device_bytes): the device holding the output layer, the trunk, the worst-case
    ubatch's tokens and the layers -ngl leaves on the CPU."""
    d: int
    trunk: tuple[LayerSpec, ...]
    T: int
    host_layers: set[int]

    @classmethod
    def of(cls, spec: ModelSpec, ctx: Context, placement: Placement) -> _OneDevice:
        return cls(placement.output_device, spec.trunk_layers, min(ctx.n_ctx, ctx.n_ubatch),
                   {i for i, dev in enumerate(placement.layer_device) if dev < 0})

    def refused(self, ctx: Context, placement: Placement, devices: tuple[Device, ...], s: LlamaCppSettings) -> bool:
        """Whether the load is not the one these replays model: the first device alone, ggml-cuda's, holding the
        output; the newest build's graph (QWEN35_REPLAY_BUILD); every layer on it or on the CPU, the host layers'
        ops run on it by op offload (_offload_device); no tensor overrides."""
        return self.d != 0 or len(devices) != 1 or ctx.build < QWEN35_REPLAY_BUILD \
            or infer_backend(devices, s.backend).name not in _GGML_CUDA \
            or not set(placement.layer_device) <= {-1, self.d} \
            or bool(self.host_layers) and _offload_device(devices, s, self.T) != self.d or _tensor_overrides(s)


def moe_offload_device_bytes(spec: ModelSpec, ctx: Context, caches: list[Cache], placement: Placement,
                             devices: tuple[Device, ...], s: LlamaCppSettings) -> tuple[int, int] | None:
    """(device, compute buffer) of a ggml-cuda device that holds the output layer and the last layers of an MoE
    graph compute_graphs.moe_device_graph replays, the other layers left on the CPU (-ngl below the layer count),
    where the worst-case ubatch reaches the offload batch (OP_OFFLOAD_MIN_BATCH): every op with a host weight runs
    on the device ("1.off" above) and ggml_backend_sched_split_graph starts a split at each one with the weight's
    copy as its input; the host layers' K / V stores run on the CPU (their cache is there), and their attention on
    the device with the cache's K and V views copied in (GGML_SCHED_DEBUG=2 dump of llama-3.1-8b -ngl 2,
    tests/fixtures/llamacpp_cuda: one split per host weight, [cache_k_l0 (view), cache_v_l0 (view), kq_mask] before
    the first host layer's FLASH_ATTN_EXT). The whole pp graph then runs on the device, replayed with the
    allocation dependencies (CUDA_FUSION_DEPS_BUILD). With -nkvo every layer's cache is on the host, each layer's
    attention reading the copies. gpt-oss by compute_graphs.gpt_oss_device_graph. None where this does not
    describe the load (tensor overrides, several devices, an output left on the CPU)."""
    gpt_oss = spec.architecture in GPT_OSS_GRAPHS
    if not cuda_fusion_deps(ctx, devices, s) or spec.architecture not in MOE_DEVICE_GRAPHS | GPT_OSS_GRAPHS \
            or len(devices) != 1:
        return None
    T = min(ctx.n_ctx, ctx.n_ubatch)
    d = _offload_device(devices, s, T)
    trunk = spec.trunk_layers
    if d is None or placement.output_device != d or (-1 not in placement.layer_device and not s.no_kv_offload) \
            or not set(placement.layer_device) <= {-1, d} or _tensor_overrides(s) \
            or not trunk or trunk[-1].index != len(trunk) - 1 \
            or any(la.attention is None for la in trunk) or spec.architecture in NO_CACHE_GRAPHS:
        return None
    rows_out = reserved_outputs(ctx, s)
    if rows_out < OP_OFFLOAD_MIN_BATCH and placement.layer_device[trunk[-1].index] < 0 and not gpt_oss:
        return None  # the gathered last layer's ops stay on the CPU: not this graph
    host_layers = {i for i, dev in enumerate(placement.layer_device) if dev < 0}
    host = _host_weights(spec, devices, s, placement, host_layers)
    host_kv = _host_cache_views(caches, host_layers, s)
    masks = sum(_mask_bytes(c.cells, T, ctx.flash_attn) for c in caches)
    a0 = trunk[0].attention
    cells = {il: c.cells for c in caches for il in c.layers}
    fa16 = cuda_fa_f16_copies(ctx, devices, s)
    k_rot, v_rot = _fa_rotations(spec, ctx)
    if gpt_oss:
        extras = {la.index: fa_f16_bytes(la.attention, cells.get(la.index, 0), T, ctx) for la in trunk} if fa16 else {}
        return d, _replayed(compute_graphs.gpt_oss_device_graph, spec, T, rows_out,
                            _iswa_caches(caches, T, ctx.flash_attn), ctx.flash_attn, extras, k_rot, v_rot, host,
                            host_kv, align=CUDA_ALIGN)
    extra = fa_f16_bytes(a0, cells.get(trunk[0].index, 0), T, ctx) if fa16 else 0
    return d, _replayed(compute_graphs.moe_device_graph, spec, T, rows_out, masks, k_rot, v_rot, ctx.flash_attn, extra,
                        host, host_kv, align=CUDA_ALIGN)


def deepseek2_device_bytes(spec: ModelSpec, ctx: Context, caches: list[Cache], placement: Placement,
                           devices: tuple[Device, ...], s: LlamaCppSettings) -> tuple[int, int] | None:
    """(device, compute buffer) of the one ggml-cuda device that runs a DeepSeek-V2 / V3 graph (src/models/
    deepseek2.cpp), replayed with the MoE fusions' allocation dependencies (CUDA_FUSION_DEPS_BUILD) and the split's
    input copies (compute_graphs.deepseek2_device_graph): all of it, or, with the first layers left on the CPU and
    the worst-case ubatch at the offload batch, its pp graph with a split per host weight's copy and the host
    layers' cache views copied in (as moe_offload_device_bytes has it); -nkvo (every layer's cache on the host).
    The legacy decompressed heads (192 / 128, attn_kv_b) have no ggml-cuda flash-attention kernel: with flash
    attention on it runs on the CPU (device_fa_on_host), as -nkvo's attention does without it
    (host_attention_without_offload); then the device keeps the rest, and Q until the CPU split reads it.
    Where the graph modelled holds: one device, one KV stream, no tensor overrides; absorbed MLA with flash
    attention and an F16 cache, the legacy heads with any cache (its rotations included). None elsewhere."""
    if spec.architecture not in DEEPSEEK2_DEVICE_GRAPHS or not cuda_fusion_deps(ctx, devices, s) \
            or len(devices) != 1 or ctx.n_stream != 1 or _tensor_overrides(s):
        return None
    trunk = spec.trunk_layers
    if not trunk or trunk[-1].index != len(trunk) - 1 or any(la.attention is None for la in trunk) \
            or any(la.ffn.is_moe and not la.ffn.n_ff_shared for la in trunk):
        return None
    a0 = trunk[0].attention
    mla = bool(a0.kv_lora_rank and a0.latent_cache)
    if not a0.kv_lora_rank or (mla and (not ctx.flash_attn or ctx.type_k.quantized or s.no_kv_offload)):
        return None
    T = min(ctx.n_ctx, ctx.n_ubatch)
    d = placement.output_device
    host_layers = {i for i, dev in enumerate(placement.layer_device) if dev < 0}
    rows_out = reserved_outputs(ctx, s)
    if d != 0 or not set(placement.layer_device) <= {-1, d}:
        return None
    if host_layers and (_offload_device(devices, s, T) != d or (rows_out < OP_OFFLOAD_MIN_BATCH
                                                                and placement.layer_device[trunk[-1].index] < 0)):
        return None
    cells = {il: c.cells for c in caches for il in c.layers}
    n_kv = cells.get(trunk[0].index, 0)
    masks = sum(_mask_bytes(c.cells, T, ctx.flash_attn) for c in caches)
    host = _host_weights(spec, devices, s, placement, host_layers)
    host_kv = _host_cache_views(caches, host_layers, s)
    if mla:  # MLA's V is a view of the latent K cache: its first kv_lora_rank of each row
        host_kv = {il: (k, k - a0.qk_rope_head_dim * 2) for il, (k, _) in host_kv.items()}
    if mla:
        attn = "fa"
    elif ctx.flash_attn or s.no_kv_offload:
        attn = "host"  # no kernel for the heads (cuda_fa_supported), or -nkvo's attention without flash attention
    else:
        attn = "kq"
    k_rot, v_rot = _fa_rotations(spec, ctx)
    return d, _replayed(compute_graphs.deepseek2_device_graph, spec, T, rows_out, n_kv, masks, attn, 0, k_rot, v_rot,
                        v_cont=ctx.fa_auto_off, host=host, host_kv=host_kv, align=CUDA_ALIGN)


def lfm2_device_bytes(spec: ModelSpec, ctx: Context, caches: list[Cache], placement: Placement,
                      devices: tuple[Device, ...], s: LlamaCppSettings, rough: bool = False) -> int | None:
    """The compute buffer of the one ggml-cuda device that holds the output layer of LFM2, its other layers on it
    or left on the CPU (sched_replay.lfm2_graph scheduled and allocated as ggml_backend_sched does, as
    iswa_device_bytes; H200, the lfm2 16-layer file, held out: 550.00 MiB by the closed forms for 546.01 without flash
    attention, 558.00 for 570.25 at -ngl 8; all 4 rows exact by the replay). Where it holds: one sequence, an F16 cache (on the CPU with -nkvo and flash attention),
    dense FFNs, no sliding window, every layer on the device or the CPU, no tensor overrides, the newest build's
    graph (QWEN35_REPLAY_BUILD); None elsewhere."""
    run = _OneDevice.of(spec, ctx, placement)
    d, trunk, T, host_layers = run
    if rough and host_layers:
        return None
    kv = [c for c in caches if c.layers and any(trunk[i].attention for i in c.layers if i < len(trunk))]
    if spec.architecture != "lfm2" or run.refused(ctx, placement, devices, s) or max(1, ctx.n_seq_max) != 1 \
            or s.no_kv_offload and not ctx.flash_attn or ctx.n_rs_seq \
            or ctx.type_k.name != "f16" or ctx.type_v.name != "f16" or len(kv) != 1 \
            or not trunk or trunk[-1].index != len(trunk) - 1 \
            or any(la.ffn.is_moe or (la.attention is None) == (la.recurrent is None)
                   or la.attention is not None and (la.attention.window
                                                    or ctx.flash_attn and not cuda_fa_supported(la.attention, ctx))
                   or la.recurrent is not None and la.recurrent.kind != "short_conv" for la in trunk):
        return None
    bufs = model_buffers(spec, devices, s, placement)
    host = {t.name: gpu_alloc_size(t) for t in bufs.cpu_tensors if t.layer in host_layers}
    norm_host = next((gpu_alloc_size(t) for t in bufs.cpu_tensors if t.name == "token_embd_norm.weight"), -1)
    g = sched_replay.lfm2_graph(spec, T, reserved_outputs(ctx, s), kv[0].cells, host, host_layers, ctx.flash_attn,
                                s.no_kv_offload, norm_host)
    return sched_replay.device_peak(g, CUDA_ALIGN)


# the architectures whose graph is deepseek2.cpp's (src/models/models.h: llama_model_mistral4 uses
# llama_model_deepseek2::graph; a file with attention.temperature_scale would add Qcur's MUL by inp_attn_scale, in
# place, and its 1 x 1 x n_tokens input, not replayed)
MLA_DEVICE_GRAPHS = frozenset({"deepseek2", "mistral4"})


def mla_device_bytes(spec: ModelSpec, ctx: Context, caches: list[Cache], placement: Placement,
                     devices: tuple[Device, ...], s: LlamaCppSettings, rough: bool = False) -> int | None:
    """The compute buffer of the one ggml-cuda device that holds the output layer of DeepSeek-V2 / V3 (or mistral4)
    with the absorbed MLA cache, its other layers on it or left on the CPU (sched_replay.deepseek2_graph scheduled and
    allocated as ggml_backend_sched does, as kimi_linear_device_bytes), with flash attention or without (where
    deepseek2_device_bytes' graph has none: H200, the deepseek-v3 4-layer file at -c 4096 without flash attention
    1446.00 MiB by the closed forms for 1399.01 measured) and with -nkvo (371.01 for 377.00); the replay equals
    every F16-cache row of the deepseek-v3 file (-ngl 2, 3 (held out, without flash attention), 4, 99, the full
    model's dry runs) and of the mistral4 file (held out: 2478.00 for 2431.01 without flash attention, 375.01 for
    380.75 at -ngl 2 before). The decompressed heads of a file converted before PR #12801
    (sched_replay._decompressed_attention) without flash attention (-fa auto turns it off: no ggml-cuda kernel for
    192 / 128), in KV streams (held out: deepseek-v3-legacy at -np 2 -ub 1024). Where it holds: an F16 cache,
    absorbed MLA (latent cache) in one KV stream or the decompressed heads without flash attention nor -nkvo, the MoE layers with a shared expert, every layer on the
    device or the CPU, no tensor overrides, the newest build (the fusion dependencies); None elsewhere."""
    if spec.architecture not in MLA_DEVICE_GRAPHS or not cuda_fusion_deps(ctx, devices, s) \
            or ctx.type_k.name != "f16" or len(caches) != 1 or s.no_kv_offload and not ctx.flash_attn:
        return None
    run = _OneDevice.of(spec, ctx, placement)
    d, trunk, T, host_layers = run
    if rough and host_layers:
        return None
    if run.refused(ctx, placement, devices, s) or not trunk or trunk[-1].index != len(trunk) - 1 \
            or T % max(1, ctx.n_seq_max, ctx.n_stream) \
            or any(la.attention is None or not la.attention.kv_lora_rank or la.ffn.is_moe and not la.ffn.n_ff_shared
                   or ctx.flash_attn and not cuda_fa_supported(la.attention, ctx) for la in trunk):
        return None
    mla = all(la.attention.latent_cache for la in trunk)
    if mla and ctx.n_stream != 1 or not mla and (ctx.flash_attn or s.no_kv_offload
                                                 or any(la.attention.latent_cache for la in trunk)):
        return None
    host = _host_weights(spec, devices, s, placement, host_layers)
    n_outputs = reserved_outputs(ctx, s)

    def build(n_kv: int) -> sched_replay.Graph:
        return sched_replay.deepseek2_graph(spec, T, n_outputs, n_kv, host, host_layers, ctx.flash_attn,
                                            s.no_kv_offload, True, ctx.n_stream, not ctx.fa_auto_off)

    key = ("deepseek2", spec.n_embd, spec.n_vocab, tuple((la.index, la.attention, la.ffn) for la in trunk), T,
           n_outputs, frozenset(host_layers), frozenset(host), ctx.flash_attn, s.no_kv_offload, ctx.n_stream,
           ctx.fa_auto_off)
    return _cuda_device_peak(key, build, caches[0].cells, host)


def cuda_fa_f16_copies(ctx: Context, devices: tuple[Device, ...], s: LlamaCppSettings) -> bool:
    """Whether the devices are ggml-cuda's (CUDA or HIP) in a build that sizes flash attention's F16 copies in the
    compute buffer (CUDA_FA_F16_BUILD) and the run uses flash attention with a K or V cache not in F16."""
    return (ctx.flash_attn and ctx.build >= CUDA_FA_F16_BUILD and infer_backend(devices, s.backend).name in _GGML_CUDA
            and (ctx.type_k.name != "f16" or ctx.type_v.name != "f16"))


# ggml-cuda/fattn.cu ggml_cuda_get_best_fattn_kernel (llama.cpp@0c1e57098): the head sizes a flash-attention kernel
# exists for. K's head size among these with V's equal to it; or one of the pairs below (K's: V's, and the multiple
# the GQA ratio must be), which also need gqa_opt_applies (a GQA ratio of 2 or more, a mask, no ALiBi); and K and V
# of the types ggml_cuda_fattn_kv_type_supported lists. Anything else is BEST_FATTN_KERNEL_NONE, which
# ggml_backend_cuda_device_supports_op reports as unsupported (GGML_OP_FLASH_ATTN_EXT), so the scheduler runs the op
# on the CPU
CUDA_FA_HEADS = frozenset({40, 64, 72, 80, 96, 112, 128, 256})
CUDA_FA_PAIRS = {192: (128, 8), 320: (256, 32), 512: (512, 1), 576: (512, 1)}
CUDA_FA_TYPES = frozenset({"f32", "f16", "bf16", "q4_0", "q4_1", "q5_0", "q5_1", "q8_0"})
# From PR #15454 "CUDA: refactor FA support/selection code" (2025-08-20: an op without a kernel is unsupported, no
# longer a crash) until PR #28079 "CUDA: replace GGML_FA_ALL_QUANTS with GGML_FA_QUANTS" (opened 2026-08-31, in
# review to 2026-09-09; in the reference tree, so placed at NEWEST, settings.NEWEST_PLACED; after it a pair not
# compiled falls back to the f16-f16 kernel, converted), a
# default build (GGML_CUDA_FA_ALL_QUANTS off) has ggml_cuda_get_best_fattn_kernel return BEST_FATTN_KERNEL_NONE
# for K and V of different types ("#ifndef GGML_CUDA_FA_ALL_QUANTS if (K->type != V->type) return NONE", quoted in
# llama.cpp#27109 and PR #27150; ggml-org/llama.cpp@00a2d609 lets K q8_0 with V q4_0 through, taken here for the
# whole range) and ggml_cuda_fattn_kv_type_supported refuses q4_1, q5_0 and q5_1. So -fa auto turns flash
# attention off for -ctk q8_0 with an F16 V (device_auto_fa_off), and a forced one runs on the CPU
CUDA_FA_QUANTS_GATED = (llamacpp_build_on("2025-08-20"), int(NEWEST[1:]))
CUDA_FA_GATED_TYPES = frozenset({"f32", "f16", "bf16", "q4_0", "q8_0"})


def cuda_fa_supported(a: Attention, ctx: Context) -> bool:
    """Whether ggml-cuda has a flash-attention kernel for the layer's FLASH_ATTN_EXT op: Q / K of cache_head_k,
    V of cache_head_v (an MLA latent cache: kv_lora_rank + rope and kv_lora_rank, one K head for all, so the GQA
    ratio is n_head; a GGUF without the split k_b / v_b keeps the decompressed 192 / 128 heads, one K head per Q
    head: GQA ratio 1, no kernel)."""
    if ctx.type_k.name not in CUDA_FA_TYPES or ctx.type_v.name not in CUDA_FA_TYPES:
        return False
    if CUDA_FA_QUANTS_GATED[0] <= ctx.build < CUDA_FA_QUANTS_GATED[1] and (
            ctx.type_k.name not in CUDA_FA_GATED_TYPES or ctx.type_v.name not in CUDA_FA_GATED_TYPES
            or ctx.type_k.name != ctx.type_v.name and (ctx.type_k.name, ctx.type_v.name) != ("q8_0", "q4_0")):
        return False
    latent = bool(a.kv_lora_rank and a.latent_cache)
    dk = a.kv_lora_rank + a.qk_rope_head_dim if latent else a.head_dim_k
    dv = a.kv_lora_rank if latent else a.head_dim_v
    gqa = a.n_heads if latent else a.n_heads // max(1, a.n_kv_heads)
    if dk in CUDA_FA_HEADS:
        return dv == dk
    pair = CUDA_FA_PAIRS.get(dk)
    return pair is not None and dv == pair[0] and gqa >= 2 and gqa % pair[1] == 0


# recurrent blocks whose first graph expansion is build_rs (src/llama-graph.cpp: ggml_build_forward_expand of the
# state's in-place clear, its gathered rows and the copy of the other sequences' states), made before any expansion
# through the layer's input: src/models/lfm2.cpp build_shortconv_block, src/models/mamba-base.cpp build_mamba_layer /
# build_mamba2_layer (Jamba, Granite hybrid, Nemotron-H; their main loops expand nothing between the norm and the block)
STATE_FIRST_RECURRENT = frozenset({"short_conv", "mamba", "mamba2"})


def fa_pulled_to_next_layer(spec: ModelSpec, placement: Placement) -> int | None:
    """The first attention layer whose FLASH_ATTN_EXT the scheduler puts on the next layer's device, in the graph
    llama_context::resolve_fused_ops reserves for -fa auto (one token, so no op offload). build_attn_mha expands the
    flash attention at its end (src/llama-graph.cpp), before the output projection; with a dense FFN or none after it
    (build_ffn expands nothing; build_moe_ffn does, and would put the projection and the FFN first) the next nodes
    in the graph are the next layer's: for a STATE_FIRST_RECURRENT layer its build_rs nodes, which write into its
    device's state buffer ("1.dst" / "1.vsrc"). ggml_backend_sched_split_graph's "expand gpu up" pass then gives the
    unassigned FLASH_ATTN_EXT (no weight, its K / V writes and the output projection on the CPU) that GPU, and on
    another device than its layer's the check turns flash attention off. Measured on an H200 with the LFM2-1.2B-shaped
    16-layer file at -ngl 8 (layer 8 attention on the CPU, layer 9 short convolution on CUDA0): "layer 8 is assigned
    to device CPU but Flash Attention is assigned to device CUDA0", then "Flash Attention not supported, set to
    disabled"."""
    dev = placement.layer_device
    for il in _state_first_followed(spec, placement):
        if dev[il + 1] >= 0 and dev[il + 1] != dev[il]:
            return il
    return None


def _state_first_followed(spec: ModelSpec, placement: Placement) -> list[int]:
    """The attention layers (with a dense FFN or none) followed by a STATE_FIRST_RECURRENT layer: in the graph their
    attention core sits between their K / V stores and the next layer's build_rs nodes (fa_pulled_to_next_layer)."""
    layers = {la.index: la for la in spec.layers}
    out = []
    for la in attention_layers(spec):
        nxt = layers.get(la.index + 1)
        if nxt is None or la.index + 1 >= len(placement.layer_device) or (la.ffn is not None and la.ffn.is_moe) \
                or nxt.recurrent is None or nxt.attention is not None or nxt.recurrent.kind not in STATE_FIRST_RECURRENT:
            continue
        out.append(la.index)
    return out


def host_attention_kept(spec: ModelSpec, placement: Placement) -> bool:
    """Whether an attention layer left on the CPU keeps its attention core on the CPU in the worst-case (pp) graph,
    where op offload sends every op with a host weight to the device (compute_by_device): the core (K x Q, the
    soft-max, V x KQ, or the flash attention; no weight) sits between the layer's K / V stores into its host cache
    and, when the next layer is a STATE_FIRST_RECURRENT one on the CPU too, that layer's build_rs nodes in its host
    state buffer; every neighbour is on the CPU, so "expand gpu up / down" leave it and "expand rest down" gives it
    the CPU. Measured on an H200 with the LFM2-1.2B-shaped 16-layer file at -ngl 8 (attention layers 2 and 5 on
    the CPU before short convolutions on the CPU; flash attention off, fa_pulled_to_next_layer): CUDA_Host 546.01
    MiB, the 8192-cell scores of one layer, as CUDA0's fully offloaded without flash attention (546.01)."""
    dev = placement.layer_device
    return any(dev[il] < 0 and dev[il + 1] < 0 for il in _state_first_followed(spec, placement))


def device_auto_fa_off(spec: ModelSpec, ctx: Context, placement: Placement, devices: tuple[Device, ...],
                       s: LlamaCppSettings) -> Context:
    """The context with -fa auto resolved as llama_context::resolve_fused_ops does (llama-context.cpp, since PR
    #15434 "-fa auto", ERAS fa_auto): it reserves a graph with flash attention and turns it off when the scheduler
    put a layer's FLASH_ATTN_EXT on another device than the layer's ("usually due to missing support"): on a
    ggml-cuda device whose kernels lack the layer's head sizes or a ggml-metal one without a kernel for the heads,
    whose K and V types differ or without simdgroup matrix multiplication (the Apple Paravirtual device;
    device_fa_supported), the op goes to the CPU. A quantized V cache forces it on before
    (llama_init_from_model), and the KV cache is made before the check, for flash attention (cparams.flash_attn is
    true for auto: V not transposed): Context.fa_auto_off. Measured on an
    H200 with the DeepSeek-V3 GGUF converted before llama.cpp's MLA layout (heads of 192 / 128, one K head per Q
    head): "layer 0 is assigned to device CUDA0 but Flash Attention is assigned to device CPU", then the graph
    without it (tests/fixtures/llamacpp_cuda/h200_sched_debug.json.gz)."""
    if not ctx.flash_attn or ctx.type_v.quantized or s.flash_attn.lower() != "auto" \
            or not ERAS.reached(ctx.build, "fa_auto") or not devices:
        return ctx
    if fa_pulled_to_next_layer(spec, placement) is not None:
        return replace(ctx, flash_attn=False, fa_auto_off=True)
    backend = infer_backend(devices, s.backend).name
    if backend not in _FA_REFUSING or spec.architecture in HC_ATTN_ARCHS:
        return ctx
    on_device = [(la.attention, devices[placement.layer_device[la.index]]) for la in attention_layers(spec)
                 if la.index < len(placement.layer_device) and 0 <= placement.layer_device[la.index] < len(devices)
                 and not devices[placement.layer_device[la.index]].id.startswith("RPC")]
    if all(device_fa_supported(a, ctx, backend, dev) for a, dev in on_device):
        return ctx
    return replace(ctx, flash_attn=False, fa_auto_off=True)


# ggml/src/ggml-metal/ggml-metal-device.m ggml_metal_device_supports_op, case GGML_OP_FLASH_ATTN_EXT
# (llama.cpp@0c1e57098): the head sizes of Q / K (src[0]->ne[0]) it has kernels for ("for new head sizes, add checks
# here"); 320 came with PR #20549 "metal : add FA specialization for HSK = 320, HSV = 256" (b8351), earlier builds
# refuse it (ERAS metal_fa_hs320)
METAL_FA_HEADS = frozenset({32, 40, 48, 64, 72, 80, 96, 112, 128, 192, 256, 320, 512, 576})
# the K / V cache types its switch on src[1]->type lets through (BF16 only where the device has bfloat, which
# oomkit does not know of an Apple GPU: taken as supported)
METAL_FA_TYPES = frozenset({"f32", "f16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "bf16"})


def metal_fa_supported(a: Attention, ctx: Context) -> bool:
    """Whether ggml-metal takes the layer's FLASH_ATTN_EXT: ggml/src/ggml-metal/ggml-metal-device.m
    ggml_metal_device_supports_op (llama.cpp@0c1e57098) refuses it for a Q / K head size not in METAL_FA_HEADS, a K
    head of 72 with another V head and a K head smaller than V's (PR #29122 "metal : fix FA support checks": no
    kernel for HK72 / HV64 and the like), K and V of different types ("if (op->src[1]->type != op->src[2]->type)
    return false", a check ggml-metal has kept since its flash attention took quantized caches) and a cache type
    outside METAL_FA_TYPES. An MLA latent cache is K = kv_lora_rank + rope, V = kv_lora_rank (576 / 512 for
    DeepSeek-V3), both in the list; a GGUF without the split k_b / v_b keeps the decompressed 192 / 128 heads. Until
    PR #18950 "metal : enable FA for MLA heads" (b7781, ERAS metal_fa_mla) supports_op refused a K head of 576
    ("DeepSeek sizes // TODO: disabled for now, until optmized"): -fa auto turned flash attention off there and a
    forced one ran on the CPU. Not modelled: the builds before the other head sizes' kernels (but 320) and before
    PR #29122, which the catalog's head sizes (64, 80, 96, 128, 192 / 128, 256, 512, 576 / 512) do not meet."""
    if ctx.type_k.name != ctx.type_v.name or ctx.type_k.name not in METAL_FA_TYPES:
        return False
    dk, dv, _ = fa_head_dims(a, ctx)
    if dk not in METAL_FA_HEADS or (dk == 320 and not ERAS.reached(ctx.build, "metal_fa_hs320")) \
            or (dk == 576 and not ERAS.reached(ctx.build, "metal_fa_mla")):
        return False
    return not (dk == 72 and dv != dk) and dk >= dv


def fa_head_dims(a: Attention, ctx: Context) -> tuple[int, int, int]:
    """(K's head size, V's, the K / V heads) of the layer's FLASH_ATTN_EXT: an MLA layer's latent cache (ERAS
    mla_latent) is one head of kv_lora_rank + rope for K and kv_lora_rank for V (src/llama-graph.cpp build_attn_mha
    with the absorbed Q); other layers their own heads."""
    if a.kv_lora_rank and a.latent_cache and ERAS.reached(ctx.build, "mla_latent"):
        return a.kv_lora_rank + a.qk_rope_head_dim, a.kv_lora_rank, 1
    return a.head_dim_k, a.head_dim_v, a.n_kv_heads


# the backends whose refusal of a layer's FLASH_ATTN_EXT oomkit models (device_fa_supported)
_FA_REFUSING = (*_GGML_CUDA, "metal", "sycl")
# PR #20190 "[SYCL] supprt Flash Attention for fp32/fp16/Q4/Q5/Q8" (213c4a0b8, 2026-03-08, b8234: its count on
# master): before it ggml-sycl.cpp ggml_backend_sycl_device_supports_op has no
# GGML_OP_FLASH_ATTN_EXT case (default: false; llama.cpp@96ac5a23, 2025-11-23), so -fa auto turns flash attention
# off on a SYCL device (llama_context's "Flash Attention was auto, set to disabled") and a forced one runs on the CPU.
# NeoZhangJianyu/ci_log's SYCL CI (llama-2-7b Q4_0 on an Arc A770, -fa auto): "set to disabled" at b8205, SYCL0
# 92.51 MiB with flash attention from b8234 on
SYCL_FA_BUILD = 8234


def device_fa_supported(a: Attention, ctx: Context, backend: str, device: Device | None = None) -> bool:
    """Whether the device's backend runs the layer's flash attention (cuda_fa_supported, metal_fa_supported and a
    Metal device with simdgroup matrix multiplication, metal_simdgroup_mm; a SYCL device from SYCL_FA_BUILD on).
    ggml-cuda's refusal is by kernel only: FLASH_ATTN_AVAILABLE (ggml-cuda/common.cuh) is a build switch
    (GGML_CUDA_NO_FA, MUSA before arch 220), not the card's compute capability, so no CUDA / ROCm card is refused
    for its age."""
    if backend == "sycl":
        return ctx.build >= SYCL_FA_BUILD
    if backend == "metal":
        return metal_fa_supported(a, ctx) and (device is None or metal_simdgroup_mm(device))
    if backend == "rocm" and HIP_FA_HEADS_GATED[0] <= ctx.build < HIP_FA_HEADS_GATED[1]:
        return hip_fa_gated_supported(a, ctx)
    return cuda_fa_supported(a, ctx)


# ggml/src/ggml-cuda.cu ggml_backend_cuda_supports_op, case GGML_OP_FLASH_ATTN_EXT: from PR #7188 "CUDA: add FP32
# FlashAttention vector kernel" (dc685be4, b2862) a HIP build (GGML_USE_HIPBLAS && __HIP_PLATFORM_AMD__) takes only
# Q / K heads of 64 and 128, and from PR #8896 (a8dbc6f7, b3539) the 64 only with an F16 K cache, until PR #9581
# "CUDA: enable Gemma FA for HIP/Pascal" (a5b57b08, b3802) adds 256 (F16 K and V). Before b2862 (from the flash
# attention merge, b2771) every head size was taken. llama.cpp#9580 (b3758, Gemma 2 9B on two AMD GPUs, -fa):
# every layer's flash attention on the CPU, 87 graph splits
HIP_FA_HEADS_GATED = (2862, 3802)
HIP_FA_F16_K64_BUILD = 3539


def hip_fa_gated_supported(a: Attention, ctx: Context) -> bool:
    """Whether a HIP build in HIP_FA_HEADS_GATED takes the layer's FLASH_ATTN_EXT: a K head of 128, or of 64 (with
    an F16 K cache from HIP_FA_F16_K64_BUILD)."""
    dk, _, _ = fa_head_dims(a, ctx)
    if dk == 64:
        return ctx.build < HIP_FA_F16_K64_BUILD or ctx.type_k.name == "f16"
    return dk == 128


def device_fa_on_host(spec: ModelSpec, ctx: Context, caches: list[Cache], placement: Placement,
                      devices: tuple[Device, ...], s: LlamaCppSettings) -> tuple[set[int], int]:
    """With flash attention on (-fa on, or auto forced on by a quantized V cache) for layers on a ggml-cuda device
    that has no kernel for their heads (cuda_fa_supported), or on a ggml-metal device without a kernel for their
    heads or with K and V caches of different types (metal_fa_supported): ggml_backend_sched_backend_id_from_cur
    leaves the FLASH_ATTN_EXT to the CPU (the device's supports_op says no), and ggml_backend_sched_split_graph
    copies its sources into the host's compute buffer: the (rotated) Q rows in F32, the layer's whole K and V views
    of the cache in their types, beside the mask (read there, never copied to the device) and the output rows.
    -> (the devices that give up their flash attention, the host's block: those and one hidden-state row).
    GGML_SCHED_DEBUG=2 dump of the legacy DeepSeek-V3 GGUF (192 / 128 heads, GQA 1), -fa on with a q8_0 cache on
    CUDA (a CPU split per layer with Q 48 MiB, K 102, V 68; tests/fixtures/llamacpp_cuda): CUDA_Host 268.04 MiB =
    14 + 4 (mask) + 48 + 102 + 68 + 32 (output)."""
    backend = infer_backend(devices, s.backend).name if devices else ""
    if not ctx.flash_attn or not devices or backend not in _FA_REFUSING or spec.architecture in HC_ATTN_ARCHS:
        return set(), 0
    T = min(ctx.n_ctx, ctx.n_ubatch)
    cells = {il: c.cells for c in caches for il in c.layers}
    devs: set[int] = set()
    block = 0
    worst = (0, 0, 0, 0)  # the largest layer's Q rows, K view, V view, output rows
    for la in attention_layers(spec):
        d = placement.layer_device[la.index] if la.index < len(placement.layer_device) else -1
        a = la.attention
        if not 0 <= d < len(devices) or devices[d].id.startswith("RPC") \
                or device_fa_supported(a, ctx, backend, devices[d]):
            continue
        devs.add(d)
        n_kv = cells.get(la.index, 0)
        dk, dv, n_kv_heads = fa_head_dims(a, ctx)  # an MLA layer: its latent K and V rows, one head
        k = n_kv * n_kv_heads * dk * ctx.type_k.type_size // ctx.type_k.block_size
        v = n_kv * n_kv_heads * dv * ctx.type_v.type_size // ctx.type_v.block_size
        q, o = T * 4 * a.n_heads * dk, T * 4 * a.n_heads * dv
        if q + o + k + v > block:
            block, worst = q + o + k + v, (q, k, v, o)
    if not devs:
        return set(), 0
    if ERAS.reached(ctx.build, "kq_mask_f16"):
        masks = sum(c.cells * T * 2 for c in caches)
        return devs, spec.n_embd * T * 4 + masks + block
    # before PR #23764 the graph input is the F32 mask, cast to F16 for flash attention (build_attn_inp_kv's
    # ggml_cast): on the host the F16 copy sits above the F32 input, which is freed after the cast; the layer's
    # Q rows and K view take that hole, and a V view larger than what K left of it goes above the F16 mask
    # (ggml-alloc's best fit, replayed). The b9222 M4 Pro log (Metal, K q5_1 beside V q8_0, 262144 cells, -ub 256,
    # Qwen3.5-9B's 16 x 256 heads; tests/test_llamacpp_heldout7_logs.py): the CPU buffer 660.28 MiB, 660 of it
    # 4 (the hidden-state rows) + 256 (the F32 mask's hole: Q 4, K 192, the output rows 4) + 128 (F16) + 272 (V)
    if pipeline_parallel(spec, placement, devices, s):  # every layer's sources kept (fa_host_split_copies)
        return devs, 0
    q, k, v, o = worst
    nodes = [galloc.Node(spec.n_embd * T * 4, output=True)] + [galloc.Node(c.cells * T * 4) for c in caches]
    n_in = len(nodes)
    nodes += [galloc.Node(c.cells * T * 2, (1 + i,), output=True) for i, c in enumerate(caches)]
    first = len(nodes)
    nodes += [galloc.Node(q), galloc.Node(k), galloc.Node(v), galloc.Node(o, (first, first + 1, first + 2))]
    return devs, galloc.peak_bytes(n_in, nodes)


def fa_host_split_copies(spec: ModelSpec, ctx: Context, caches: list[Cache], placement: Placement,
                         devices: tuple[Device, ...], s: LlamaCppSettings) -> dict[int, int]:
    """Under pipeline parallelism, the flash attention device_fa_on_host leaves to the CPU makes each such layer a
    CPU split of its own, and ggml_backend_sched_split_graph (ggml/src/ggml-backend.c, llama.cpp@3c7989fd) gives
    every split input SCHED_MAX_COPIES copies, each marked input and output ("prevent ggml-alloc from overwriting
    the tensor"), so none is freed or reused: the host keeps every such layer's Q rows (F32) and K and V views of
    its cache, n_copies times, with one layer's output rows at a time; each device keeps, n_copies times, the
    output rows of each of its layers handed back. -> backend (-1 the host) -> bytes. llama.cpp#9580 (b3758, Gemma
    2 9B over two AMD GPUs, -fa, 2048 cells, 14 / 28 layers): ROCm_Host 4088.02 MiB = 42 x 4 x (8 + 8 + 8) and
    the graph inputs; ROCm0 578.01 and ROCm1 1431.02 with 14 and 28 x 4 x 8 MiB of returned rows."""
    devs, _ = device_fa_on_host(spec, ctx, caches, placement, devices, s)
    if not devs or not pipeline_parallel(spec, placement, devices, s):
        return {}
    T = min(ctx.n_ctx, ctx.n_ubatch)
    cells = {il: c.cells for c in caches for il in c.layers}
    backend = infer_backend(devices, s.backend).name
    out: dict[int, int] = {}
    largest_o = 0
    for la in attention_layers(spec):
        d = placement.layer_device[la.index] if la.index < len(placement.layer_device) else -1
        a = la.attention
        if d not in devs or device_fa_supported(a, ctx, backend, devices[d]):
            continue
        n_kv = cells.get(la.index, 0)
        dk, dv, n_kv_heads = fa_head_dims(a, ctx)
        k = n_kv * n_kv_heads * dk * ctx.type_k.type_size // ctx.type_k.block_size
        v = n_kv * n_kv_heads * dv * ctx.type_v.type_size // ctx.type_v.block_size
        q, o = T * 4 * a.n_heads * dk, T * 4 * a.n_heads * dv
        out[-1] = out.get(-1, 0) + SCHED_MAX_COPIES * (q + k + v)
        out[d] = out.get(d, 0) + SCHED_MAX_COPIES * o
        largest_o = max(largest_o, o)
    out[-1] += largest_o
    return out


# src/llama-graph.cpp build_moe_ffn: Mistral 4 asks for F32 precision of the experts' down product
# (ggml_prec_set_src(experts, GGML_PREC_F32, 1): "src1 can exceed F16 range")
F32_DOWN_EXPS_ARCHS = frozenset({"mistral4"})


def cuda_f32_down_exps_host(spec: ModelSpec, ctx: Context, placement: Placement, devices: tuple[Device, ...],
                            s: LlamaCppSettings) -> int:
    """The host's block when ggml-cuda refuses an MoE layer's down product: ggml_backend_cuda_device_supports_op
    says no to a MUL_MAT_ID of GGML_PREC_F32 (F32_DOWN_EXPS_ARCHS), so it runs on the CPU and
    ggml_backend_sched_split_graph copies its sources into the host's compute buffer: the layer's whole
    ffn_down_exps weight from the device, the SwiGLU rows (n_ff_exp x n_used a token) beside the output rows
    (n_embd x n_used). Freed blocks below (the embeddings' rows, the mask after its copy to the device) are taken
    over; the unread embeddings input (ERAS embd_input) stays under it. Measured on an H200 with mistral4's 4-layer
    file (DeepSeek-V3's dims, 16 experts; splits = 4): CUDA_Host 284.03 MiB at 8K -ub 512 = 14 + 126 (the q4_0
    weight) + 32 + 112, 442.07 at 16K -ub 1024 = 28 + 126 + 64 + 224, with flash attention or without."""
    if spec.architecture not in F32_DOWN_EXPS_ARCHS or not devices \
            or infer_backend(devices, s.backend).name not in _GGML_CUDA:
        return 0
    T = min(ctx.n_ctx, ctx.n_ubatch)
    sizes = {t.name: t.nbytes for t in spec.weights.tensors}
    block = 0
    for la in spec.trunk_layers:
        f = la.ffn
        if f is None or not f.is_moe or la.index >= len(placement.layer_device) \
                or not 0 <= placement.layer_device[la.index] < len(devices):
            continue
        w = sizes.get(f"blk.{la.index}.ffn_down_exps.weight", 0)
        block = max(block, w + (f.n_ff_expert + spec.n_embd) * f.n_experts_used * T * 4)
    if not block:
        return 0
    return block + (spec.n_embd * T * 4 if ERAS.reached(ctx.build, "embd_input") else 0)


# -nkvo's attention ops ran on the GPU only from PR #4766 "llama : ggml-backend integration" (e7e4df03, b1843: the
# scheduler copied the host cache's views to the GPU) to PR #5049 "llama : run all KQV ops on the CPU with no KV
# offload" (6df465a9, 2024-01-20, b1929: the graph callback pins kqv_merged_cont to the CPU backend,
# kq_host_device_attention). Before b1843 llama_build_graph's offload map left them on the CPU (OFFLOAD_FUNC_KQV
# turned OFFLOAD_FUNC_NOP when !cparams.offload_kqv)
NKVO_GPU_KQV_BUILDS = range(1843, 1929)


def host_attention_without_offload(spec: ModelSpec, ctx: Context, caches: list[Cache], placement: Placement,
                                   s: LlamaCppSettings) -> int:
    """-nkvo without flash attention: build_attn_mha (src/llama-graph.cpp) puts each layer's attention output on the
    CPU backend ("all nodes between the KV store and the attention output are run on the CPU"), so the host's compute
    buffer holds the largest layer's copy of Q (F32), its scores (n_kv x T x n_head F32, the soft-max in place) and,
    where the cache keeps flash attention's V layout (Context.fa_auto_off), V's transposed copy; the KQV rows take Q's
    freed block. Above the graph inputs and the K / V rows stored into the host cache (host_cache_stores). Measured
    on an H200 with the legacy DeepSeek-V3 GGUF, -fa auto (turned off) -nkvo at 4K -ub 512: CUDA_Host 1302.01 MiB =
    36 (inputs) + 66 (the stored rows over the freed embeddings) + 48 + 1024 + 128."""
    if ctx.flash_attn or not s.no_kv_offload or spec.architecture in NO_CACHE_GRAPHS or ctx.build in NKVO_GPU_KQV_BUILDS:
        return 0
    T = min(ctx.n_ctx, ctx.n_ubatch)
    cells = {il: c.cells for c in caches for il in c.layers}
    block = 0
    for la in attention_layers(spec):
        if la.index >= len(placement.layer_device) or placement.layer_device[la.index] < 0:
            continue
        a, n_kv = la.attention, cells.get(la.index, 0)
        v_cont = n_kv * a.n_kv_heads * a.head_dim_v * ctx.type_v.type_size // ctx.type_v.block_size \
            if ctx.fa_auto_off else 0
        block = max(block, T * 4 * a.n_heads * (a.head_dim_k + n_kv) + v_cont)
    return block


def kq_host_device_attention(spec: ModelSpec, ctx: Context, caches: list[Cache]) -> int:
    """A device's attention workspace with -nkvo and no flash attention (host_attention_without_offload): Q, K, V,
    the attention output and the rows, as with flash attention, and no KQ mask (outside NKVO_GPU_KQV_BUILDS). From
    PR #5049 (b1929, "run all KQV ops on the CPU with no KV offload") the graph callback pins kqv_merged_cont to the CPU backend (llama.cpp, then
    llama_context::graph_get_cb; build_attn_mha in src/llama-graph.cpp too, read at b5092 and b7140), and
    ggml_backend_sched_split_graph's expansion (ggml-backend.cpp: "expand gpu down / up" skip the CPU, "expand rest"
    gives the nodes after the K / V stores into the host cache the CPU) leaves KQ, the soft-max and KQV there; the
    masks are graph inputs on the CPU (ggml_backend_sched_backend_id_from_cur: "graph input ... last backend"), so
    no device split reads them. Both masks of the builds with a second one (kv.pre_iswa_swa_mask, b4881-b5428)
    leave the device: lukewp/TrashCanLLM's b5092 Llama 4 Scout, -ngl 11 -nkvo over two Vulkan devices, prints the
    same Vulkan0 616.06 / Vulkan1 72.00 MiB at 256000 and 64000 cells (tests/test_llamacpp_heldout14_logs.py)."""
    fa = compute_phases(spec, replace(ctx, flash_attn=True, fa_auto_off=False), caches)
    T = min(ctx.n_ctx, ctx.n_ubatch)
    # flash attention's masks as its phases count them: F16, the F32 input cast before PR #23764 (ERAS kq_mask_f16)
    fa_masks = (fa.inputs - spec.n_embd * T * 4) // (1 if ERAS.reached(ctx.build, "kq_mask_f16") else 2)
    return fa.attention - fa_masks


def compute_buffer_bytes(spec: ModelSpec, ctx: Context, caches: list[Cache]) -> int:
    """The compute buffer of a graph that runs on one backend (CPU only, or everything on one GPU)."""
    p = compute_phases(spec, ctx, caches)
    return max(p.output, p.attention)


# ggml-backend.cpp: GGML_SCHED_MAX_COPIES (default 4, a compile-time define) copies of every graph input and every
# split input when the scheduler runs pipeline-parallel (sched->n_copies = parallel ? GGML_SCHED_MAX_COPIES : 1)
SCHED_MAX_COPIES = 4
# PR #6017 "llama : add pipeline parallelism support" (f30ea47a8, 2024-03-13, b2413: its count on master)
PIPELINE_PARALLEL_BUILD = 2413
# ggml_backend_sched_split_graph's "pass 6" (ggml-backend.cpp): with n_copies > 1 every leaf flagged input gets its
# copies, one that no node reads too (build_inp_embd's embeddings input on a token batch, ERAS embd_input). Not in
# master at b10587 (2026-08-22, ngxson/llama.cpp's copy: only a node's sources get them; #20024's b8184 ROCm_Host
# 4112.16 MiB is matched without them), in the pinned llama.cpp@0c1e57098 (CPU#inp_embd#1-3 in the graph it hands
# ggml-alloc); its PR not found, placed at the first build after b10587
SCHED_LEAF_INPUTS_BUILD = 10588
# backends whose devices report async compute and events (ggml_backend_dev_props caps): CUDA, its HIP build, and
# Vulkan / SYCL; the RPC backend reports neither (ggml-rpc.cpp ggml_backend_rpc_device_get_props) until PR #18626
# ("rpc : implement event and async backend APIs", merged 2026-08-26: one dispatcher thread per endpoint, async
# and events reported true), placed by its date
_ASYNC_EVENTS = ("CUDA", "ROCm", "HIP", "Vulkan", "SYCL")
RPC_EVENTS_BUILD = llamacpp_build_on("2026-08-26")


def mask_cast_device(spec: ModelSpec, ctx: Context, placement: Placement) -> int | None:
    """The backend that casts the F32 KQ mask to F16 for flash attention, in a build before PR #23764 (ERAS
    kq_mask_f16; None otherwise): llm_graph_context::build_attn_inp_kv* makes one cast node,
    self_kq_mask_cnv = ggml_cast(self_kq_mask, GGML_TYPE_F16), which every attention layer reads. The mask is a
    graph input (the CPU); the cast is first expanded with the first attention layer's flash attention, so
    ggml_backend_sched_split_graph's expansion passes give it that layer's backend (ggml-backend.cpp, pass 2). A
    device whose attention layers come later copies the cast's F16 output as its split input, not the F32 mask:
    #20024's two MI60s, Qwen3.5-35B-A3B at 262144 x 4 unified with pipeline parallelism, ROCm1 3066.14 MiB (its
    four copies of the 512 MiB F16 mask) against ROCm0 4840.13 (four of the 1 GiB F32 mask, and the cast)."""
    if not ctx.flash_attn or ERAS.reached(ctx.build, "kq_mask_f16"):
        return None
    first = min((la.index for la in attention_layers(spec) if la.index < len(placement.layer_device)), default=None)
    return None if first is None else placement.layer_device[first]


def pipeline_parallel(spec: ModelSpec, placement: Placement, devices: tuple[Device, ...],
                      s: LlamaCppSettings) -> bool:
    """llama_context::llama_context (llama-context.cpp, since PR #6017): pipeline parallelism when the model
    spans more than one device, every layer and the output layer are offloaded, -sm layer, the KV cache is
    offloaded, no tensor is overridden (-ot, --cpu-moe, --n-cpu-moe, and the overrides --fit writes), and every
    device supports async compute and events (RPC devices from RPC_EVENTS_BUILD).

    "Every device" is every backend of the context but the CPU: the model's devices and each ACCEL backend the
    build registered ("add ACCEL backends (such as BLAS)", then the caps loop that skips only
    GGML_BACKEND_DEVICE_TYPE_CPU; src/llama.cpp llama_init_from_model of b4873, llama-context.cpp to 2026-08 with
    "TODO: should we ignore ACCEL types too?"). ggml-blas reports neither async nor events
    (ggml_backend_blas_device_get_props), and ggml-cuda no events when built with GGML_CUDA_NO_PEER_COPY
    (ggml_backend_cuda_device_get_props), so either build option turns it off: s.async_events, s.blas."""
    build = build_number(s.engine_version)
    if build < PIPELINE_PARALLEL_BUILD or not s.async_events or s.blas:
        return False
    if len(devices) < 2 or placement.n_gpu_layers <= spec.n_layers or s.split_mode != "layer" or s.no_kv_offload:
        return False
    if _tensor_overrides(s):
        return False
    capable = _ASYNC_EVENTS + (("RPC",) if build >= RPC_EVENTS_BUILD else ())
    return all(d.id.startswith(capable) for d in devices)


# ggml-alloc splits a graph into chunks of at most the buffer type's maximum size (llama.cpp PR #15815; in ggml b6646,
# the build Ollama v0.12.4 vendors, an upper bound for its first build; galloc.chunk_sizes); ggml-vulkan's maximum is
# its suballocation block (ggml_backend_vk_buffer_type_get_max_size), 1 GiB unless GGML_VK_SUBALLOCATION_BLOCK_SIZE
VK_CHUNKS_BUILD = 6646
VK_MAX_BUFFER = 1 << 30


def vulkan_chunked_scores(spec: ModelSpec, caches: list[Cache], placement: Placement, d: int, T: int,
                          flat: int) -> int:
    """What Vulkan's 1 GiB chunks add to device d's compute buffer without flash attention, when every attention
    layer runs on d: the full layers' KQ scores (n_kv x T x n_head F32, 1 GiB or more) take a chunk of their own
    and the largest scores below the maximum (an iSWA model's sliding-window layers), which reuse the freed full
    scores' space in one buffer, land in the first chunk's tail beside the rest instead (while it fits there).
    Measured with the pinned binding's ggml-alloc given a 1 GiB buffer limit (ggml_backend_buft_get_max_size
    interposed): gpt-oss-20b's 24-layer file, -ub 512 -np 1 -fa off, +96 MiB (768 sliding-window cells x 512 x 64
    heads x 4 B) at every context from 8192 to 131072 cells (16678.39 -> 16774.39 MiB at 131072;
    tests/test_llamacpp_vulkan_chunks.py). It holds where the one buffer has only the masks and rows under the full
    scores, as compute_phases models it: on the 4-layer file at 32768 cells the sliding-window scores already sit
    under them (4294.39 MiB both ways). Blocks left on the CPU (op_offload copies) were not measured."""
    run = attention_layers(spec)
    if not run or any(placement.layer_device[la.index] != d for la in run if la.index < len(placement.layer_device)):
        return 0
    cells = {il: c.cells for c in caches for il in c.layers}
    scores = [cells.get(la.index, 0) * T * la.attention.n_heads * 4 for la in run]
    big, small = max(scores), max((x for x in scores if x < VK_MAX_BUFFER), default=0)
    if big < VK_MAX_BUFFER or not small or flat - big + small > VK_MAX_BUFFER:
        return 0
    return small


# PR #16788 ("ggml-alloc : make gallocr prefer chunks that allow memory reuse"): not in b6840, in b7108 (the builds
# Ollama v0.12.11 and v0.13.2 vendor); placed at the first build seen with it
GALLOC_PREFER_REUSE_BUILD = 7108


def vulkan_pipeline_split(spec: ModelSpec, ctx: Context, caches: list[Cache], placement: Placement,
                          devices: tuple[Device, ...], s: LlamaCppSettings) -> dict[int, int]:
    """Each Vulkan device's compute buffer for gpt-oss without flash attention under pipeline parallelism, its split
    replayed through ggml-alloc's chunks (compute_graphs.gpt_oss_pipeline_split_graph, galloc.chunk_sizes at the
    1 GiB maximum, VK_MAX_BUFFER): the split inputs' SCHED_MAX_COPIES copies come first and are never freed, so the
    four F32 masks of the full cache (256 MiB each at 131072 cells and 512 tokens) fill the first chunk. A full
    layer's scores take a chunk of their own; where the device's first layer is a full-attention one no sliding-
    window scores have raised the small chunks' high-water marks yet, so with PR #16788's preference for a chunk
    whose freed space fits (GALLOC_PREFER_REUSE_BUILD) the next layers' tensors that would grow a small chunk land at
    the start of the freed scores' chunk instead: the next full layer's Q (n_head x head_dim x T F32) is there when
    its own scores are allocated, and these take a second chunk of their size. Issue #18527 (b7600, RX 9070 XT +
    Arc A770, -c 131072 -np 4 unified): Vulkan1 (layers 13-23, full layer first) prints 40766 MiB used, one more
    16 GiB score chunk than Vulkan0 (layers 0-12, sliding-window first; 24769). {} where it does not apply."""
    if ctx.flash_attn or ctx.build < VK_CHUNKS_BUILD or spec.architecture not in GPT_OSS_GRAPHS or not devices \
            or infer_backend(devices, s.backend).name != "vulkan" or not pipeline_parallel(spec, placement, devices, s):
        return {}
    trunk = spec.trunk_layers
    if not trunk or any(la.attention is None or la.ffn is None or not la.ffn.is_moe for la in trunk) \
            or placement.output_device < 0 or len(placement.layer_device) < len(trunk):
        return {}
    T = min(ctx.n_ctx, ctx.n_ubatch)
    iswa = _iswa_caches(caches, T, False)
    if {il for layers, _, _ in iswa for il in layers} < {la.index for la in trunk}:
        return {}
    out = {}
    for d in sorted({placement.layer_device[la.index] for la in trunk}):
        layers = {la.index for la in trunk if placement.layer_device[la.index] == d}
        n_in, nodes = compute_graphs.gpt_oss_pipeline_split_graph(
            spec, layers, T, reserved_outputs(ctx, s), iswa, d == placement.output_device, SCHED_MAX_COPIES)
        out[d] = sum(galloc.chunk_sizes(n_in, nodes, VK_MAX_BUFFER, ctx.build >= GALLOC_PREFER_REUSE_BUILD))
    return out


# ggml_backend_sched_split_graph hands each split to its backend's graph_optimize before ggml-alloc places it.
# ggml-vulkan's (ggml_vk_graph_optimize, PR #15850 "vulkan: sort graph to allow more parallel execution", e68aa10d8,
# 2025-09-08; on unless GGML_VK_DISABLE_GRAPH_OPTIMIZE) pulls up to 20 following independent nodes beside each one,
# so a layer's Q, K and V projections run together: attn_norm's block is freed before the Q norm takes it, and the
# FFN input and the FFN's wide tensors sit one hidden-state row lower. Measured with a C port of that function
# applied to the pinned binding's CPU graph before ggml_gallocr_reserve_n (-c 8192 -np 1, flash attention, one
# output row): qwen3-8b 448.05 -> 416.05 MiB at -ub 2048 and 112.01 -> 104.01 at -ub 512, llama-3.1-8b 496.05 ->
# 464.05 and 124.01 -> 116.01; qwen3-30b-a3b (MoE) unchanged at 384.05; qwen3.5-27b (hybrid GDN) 560.07 -> 608.19,
# not modelled. Without flash attention (qwen3-8b 2288.03 -> 2224.03) not modelled either.
VK_GRAPH_OPTIMIZE_BUILD = llamacpp_build_on("2025-09-08")
# PR #17475 "vulkan: allow graph_optimize for prompt processing workloads" (opened 2025-11-24, after
# llama.cpp@96ac5a23 of 2025-11-23; dated here by that day): before it ggml_vk_graph_optimize returned unchanged a
# graph whose nodes mostly have more than 8 rows ("only reorder if the majority of nodes have few rows"), as the
# worst-case pp graph's do; since, it reorders every graph
VK_PP_REORDER_BUILD = llamacpp_build_on("2025-11-24")


def vk_reorders(ctx: Context) -> bool:
    """Whether ggml_vk_graph_optimize reorders the worst-case graph: from VK_PP_REORDER_BUILD every graph; from
    VK_GRAPH_OPTIMIZE_BUILD only one whose nodes mostly have at most 8 rows (ggml_nrows; taken here as a ubatch of
    at most 8 tokens, the rows of the graph's nodes)."""
    return ctx.build >= VK_PP_REORDER_BUILD or (ctx.build >= VK_GRAPH_OPTIMIZE_BUILD
                                                and min(ctx.n_ctx, ctx.n_ubatch) <= 8)
VK_REORDER_ROW_ARCHS = frozenset({"llama", "qwen3"})


def vulkan_graph_optimize(ctx: Context, devices: tuple[Device, ...], s: LlamaCppSettings) -> bool:
    """Whether the devices are ggml-vulkan's in a build whose graph_optimize reorders the worst-case graph's
    splits (vk_reorders); the graphs replayed node by node apply it (compute_graphs.vk_graph_optimize)."""
    return vk_reorders(ctx) and infer_backend(devices, s.backend).name == "vulkan"


def vulkan_host_rows(spec: ModelSpec, ctx: Context) -> int:
    """Hidden-state rows a Vulkan device's layer workspace holds fewer than the CPU graph's buffer (which
    compute_phases fits): since PR #18898 (ERAS embd_input) the unread embeddings input is a graph input on the
    host (Vulkan_Host), never on the device, and on a dense attention-only graph with flash attention
    ggml_vk_graph_optimize saves one row more (VK_GRAPH_OPTIMIZE_BUILD). Checked against HilbertraumAI's b9849
    RTX 3090 logs, -c 8192 -ub 2048 -np 1: the CPU buffer under the Vulkan order less the embeddings input row is
    qwen3-8b's 384.05 (384.04 printed), qwen3-30b-a3b's 368.05 (368.04) and qwen3.5-27b's 8-layer file 568.19
    (Qwen3.6-27B's 568.18)."""
    rows = 1 if ERAS.reached(ctx.build, "embd_input") else 0
    if ctx.flash_attn and vk_reorders(ctx) and spec.architecture in VK_REORDER_ROW_ARCHS \
            and spec.trunk_layers and all(la.attention is not None and la.ffn is not None and not la.ffn.is_moe
                                          for la in spec.trunk_layers):
        rows += 1
    return rows * spec.n_embd * min(ctx.n_ctx, ctx.n_ubatch) * 4


def device_host_rows(spec: ModelSpec, ctx: Context, backend: str) -> int:
    """Bytes of the CPU graph's layer workspace (compute_phases) a device's split does not hold. The unread
    embeddings input of PR #18898 (ERAS embd_input: build_inp_embd makes it beside the token ids, src/llama-graph.cpp)
    is a graph input no device node reads, so ggml_backend_sched_split_graph leaves it on the host whatever the
    backend: a Metal, SYCL or OpenCL device, or an RPC server, holds one hidden-state row less than the CPU-only
    buffer. Vulkan's node order saves a row more (vulkan_host_rows); a ggml-cuda device's figures are its own
    (compute_phases with cuda_deps, measured on the H200 runs), unchanged here. benemon/llamesh's b10566 log of
    gpt-oss-20b over an M4 Pro's Metal and one rpc-server (-ts 1,1, -c 8192 -ub 512, flash attention): MTL0 87.77 and
    RPC0 87.64 MiB printed, the CPU graph's 101.12 less the 5.62 MiB row 95.50 (1.09; 1.15 before)."""
    if backend == "vulkan":
        return vulkan_host_rows(spec, ctx)
    if backend in _GGML_CUDA or not ERAS.reached(ctx.build, "embd_input"):
        return 0
    return spec.n_embd * min(ctx.n_ctx, ctx.n_ubatch) * 4


def position_rows(spec: ModelSpec, T: int) -> int:
    """The learned absolute positions' rows on the host of an offloaded graph: BERT's graph (llm_build_bert in
    src/llama.cpp, src/models/bert.cpp from b6600) adds ggml_get_rows(model.pos_embd, inp_pos) to the token rows;
    position_embd is an input-layer tensor kept on the CPU (LLM_TENSOR_INFOS: LLM_TENSOR_POS_EMBD
    {LLM_TENSOR_LAYER_INPUT, GGML_OP_GET_ROWS}) and GET_ROWS is no op a device takes over (ggml-cuda offload_op), so
    the gathered n_embd x T floats sit in the host's compute buffer beside the token rows until the device split
    copies them. ollama/ollama#9994 (bge-m3, Ollama 0.6.1, CUDA, 512-token ubatch): CUDA_Host 5.01 MiB = the 1 MiB
    F32 mask + the token rows' 2 + the position rows' 2 + the small inputs (3.01 without the position rows)."""
    t = next((t for t in spec.weights.tensors if t.name == "position_embd.weight"), None)
    return spec.n_embd * T * 4 if t is not None else 0


def per_layer_input_rows(spec: ModelSpec, T: int) -> int:
    """Gemma 3n / Gemma 4's per-layer token rows, on the host of an offloaded graph: build_inp_per_layer
    (src/models/gemma4.cpp, gemma3n.cpp; b9849) gathers n_embd_per_layer x n_layer floats a token from
    per_layer_token_embd, an input-layer tensor kept in CPU_Mapped, and scales them in place; GET_ROWS is no op a
    device takes over (offload_op), so the block sits in the host's compute buffer beside the graph inputs.
    HilbertraumAI's b9849 Gemma 4 E2B logs, -ub 2048: Vulkan_Host 136.09 MiB = the inputs' 66.0 + 70.0 (8960 x 2048
    floats), on the RTX 3090 and the UHD 620 alike. The device side (the projection, the sum, its contiguous copy)
    is compute_graphs.gemma4_ple_graph's replay (ComputePhases.device)."""
    t = next((t for t in spec.weights.tensors if t.name == "per_layer_token_embd.weight"), None)
    return t.shape[0] * T * 4 if t is not None and t.shape else 0


# ggml_backend_sched_backend_id_from_cur (ggml/src/ggml-backend.cpp, "1.off", op_offload on unless
# --no-op-offload, PR #13386): an op whose weight sits in a host buffer of the CPU backend runs on the first device
# whose offload_op wants it, and the scheduler copies the weight into that device's compute buffer as a split input.
# CUDA / ROCm, Vulkan and SYCL want every op of at least GGML_OP_OFFLOAD_MIN_BATCH (32) rows (get_op_batch_size:
# ne[1] of a MUL_MAT); RPC and OpenCL have no offload_op, Metal only takes matrix products (not modelled here).
OP_OFFLOAD_BACKENDS = frozenset({"cuda", "rocm", "vulkan", "sycl"})
OP_OFFLOAD_MIN_BATCH = 32


# ggml-blas (a build with -DGGML_BLAS=ON: LlamaCppSettings.blas). llama_context adds its device to every context
# ("add ACCEL backends (such as BLAS)", src/llama-context.cpp), ranked after the GPUs and before the CPU; its buffer
# type is the CPU's (ggml_backend_blas_device_get_buffer_type), so its compute buffer prints as "CPU" beside the CPU
# backend's, which takes the first device's host buffer type (CUDA_Host). ggml_backend_blas_device_supports_op takes
# a MUL_MAT whose src0 is F32 or dequantizable and src1 contiguous F32, of at least min_batch (32) in ne0, ne1 and
# ne10, and ggml_backend_blas_device_supports_buft any host buffer: ggml_backend_sched_backend_from_buffer then
# gives such a product of a host weight to BLAS, the highest backend that supports the weight's buffer and the op,
# and ggml_backend_sched_backend_id_from_cur tries op offload only for a weight whose backend is the last (the CPU):
# the product stays with BLAS, not the GPU ("1.wgt0"). No other op (MUL_MAT_ID, the norms' MUL, GET_ROWS) is BLAS's.
BLAS_KEY = -2  # compute_by_device's key for the BLAS backend's buffer (-1 is the CPU backend's)
BLAS_MIN_BATCH = 32  # ggml-blas.cpp ggml_backend_blas_device_supports_op: min_batch
# the 2-D weights the graphs multiply with ggml_mul_mat (build_lora_mm, build_ffn, build_moe_ffn's router, the
# output layer), grouped by the input they read: the products of one group read one copy of that input
_BLAS_GROUPS = {"attn_q": "attn_in", "attn_k": "attn_in", "attn_v": "attn_in", "attn_qkv": "attn_in",
                "attn_output": "attn_out", "ffn_gate_inp": "router", "ffn_up": "ffn_in", "ffn_gate": "ffn_in",
                "ffn_down": "ffn_down", "ffn_up_shexp": "shexp_in", "ffn_gate_shexp": "shexp_in",
                "ffn_down_shexp": "shexp_down", "output": "output"}


def _blas_base(t: Any, tied: bool) -> str:
    """A weight's name without block and suffix (blk.3.attn_q.weight: attn_q); the token embeddings of a model
    without an output matrix are its output layer's."""
    if t.layer is not None:
        return t.name.rsplit(".", 1)[0].split(".")[-1]
    return "output" if t.name == "output.weight" or (tied and t.name == "token_embd.weight") else t.name


def blas_weights(spec: ModelSpec, ctx: Context, placement: Placement, devices: tuple[Device, ...],
                 s: LlamaCppSettings, rows: int | None = None) -> list:
    """The host weights whose products the BLAS backend takes in the worst-case ubatch (see BLAS_KEY): a 2-D
    matrix of _BLAS_GROUPS left on the CPU, both of its sides and the op's rows (the ubatch's tokens, the output
    layer's its reserved outputs) at least BLAS_MIN_BATCH. None without -DGGML_BLAS, and where the CPU backend keeps
    the CPU buffer type (no device, or a first device without a host buffer type: Metal, an RPC server): BLAS and the
    CPU then share one ggml-alloc buffer (ggml_gallocr_new_n reuses the allocator of a repeated buffer type), not
    modelled."""
    if not s.blas or not devices or s.backend == "cpu" or devices[0].id.startswith("RPC") \
            or infer_backend(devices, s.backend).name not in OP_OFFLOAD_BACKENDS:
        return []
    T = min(ctx.n_ctx, ctx.n_ubatch)
    # a tied output multiplies the token embeddings; on a device it reads its own copy (TENSOR_DUPLICATED)
    tied = placement.output_device < 0 and not any(t.name == "output.weight" for t in spec.weights.tensors)
    out = []
    for t in model_buffers(spec, devices, s, placement).cpu_tensors:
        base = _blas_base(t, tied)
        if len(t.shape) != 2 or base not in _BLAS_GROUPS:
            continue
        n = (reserved_outputs(ctx, s) if rows is None else rows) if base == "output" else T
        if min(t.shape[0], t.shape[1], n) >= BLAS_MIN_BATCH:
            out.append(t)
    return out


def blas_compute_bytes(spec: ModelSpec, ctx: Context, placement: Placement, devices: tuple[Device, ...],
                       s: LlamaCppSettings) -> int:
    """The BLAS backend's compute buffer: per group of products that read one input (_BLAS_GROUPS), the input's
    copy beside their F32 products, the largest group. The input comes from a device backend where op offload put
    its producer there (the norm's MUL of a host weight: ggml_backend_sched_split_graph copies a split input whose
    buffer the split's backend cannot read; BLAS reads any host buffer, so an input the CPU made is read in place).
    The ik_llama.cpp discussion #357 logs of mainline b5269 (Qwen3-235B-A22B Q6_K, -ub 512, two RTX 3090) print
    CPU 8.25 MiB (-ot ffn=CPU: the router's 4096-wide input and its 128 logits) and 304.75 (no -ngl: the output
    layer's input and its 151936 x 512 logits)."""
    weights = blas_weights(spec, ctx, placement, devices, s)
    if not weights:
        return 0
    T = min(ctx.n_ctx, ctx.n_ubatch)
    copied = _offload_device(devices, s, T) is not None
    groups: dict[tuple[int | None, str], tuple[int, int]] = {}
    for t in weights:
        base = _blas_base(t, True)
        n = reserved_outputs(ctx, s) if base == "output" else T
        key = (t.layer, _BLAS_GROUPS[base])
        inp, prod = groups.get(key, (0, 0))
        groups[key] = (max(inp, t.shape[0] * n * 4 if copied else 0), prod + t.shape[1] * n * 4)
    return max(inp + prod for inp, prod in groups.values())


def output_offload_device(ctx: Context, placement: Placement, devices: tuple[Device, ...],
                          s: LlamaCppSettings) -> int | None:
    """The device that computes the logits of an output layer left on the CPU (-ngl up to n_layer before PR
    #18148, -ngl 0 after): the first local device, when the worst-case graph's output rows reach the offload batch.
    llama.cpp's tools/fit-params/README.md (b6895, RTX 4090, Qwen3-30B-A3B F16, -ngl 48): CUDA0 compute 898 MiB =
    the F16 output weight's copy (593.5) + the logits (296.75) + the rest, the Host's 12 the graph inputs."""
    if placement.output_device >= 0:
        return None
    return _offload_device(devices, s, reserved_outputs(ctx, s))


def _offload_device(devices: tuple[Device, ...], s: LlamaCppSettings, rows: int) -> int | None:
    """The device that multiplies a weight left on the CPU in an op of `rows` rows: the first local one, where its
    backend has an offload_op and the op reaches the offload batch; None when the op stays on the CPU."""
    if not devices or s.backend == "cpu" or infer_backend(devices, s.backend).name not in OP_OFFLOAD_BACKENDS:
        return None
    if rows < OP_OFFLOAD_MIN_BATCH:
        return None
    return next((i for i, d in enumerate(devices) if not d.id.startswith("RPC")), None)


def _offloaded_host_matrices(spec: ModelSpec, ctx: Context, placement: Placement, devices: tuple[Device, ...],
                             s: LlamaCppSettings) -> list[TensorSpec]:
    """The matrices left on the CPU whose products op offload runs on a device, each copied in at its split: not
    the gathered ones (GET_ROWS in LLM_TENSOR_INFOS, no offload: the token, position and token-type tables) nor the
    output weight (output_offload_device), not those whose products stay with BLAS (blas_weights) nor those of an
    op the device refuses (sycl_refused_weights)."""
    gathered = ("token_embd.weight", "per_layer_token_embd.weight", "position_embd.weight", "token_types.weight",
                "output.weight")
    kept = {t.name for t in blas_weights(spec, ctx, placement, devices, s)} | sycl_refused_weights(spec, devices, s)
    return [t for t in model_buffers(spec, devices, s, placement).cpu_tensors
            if len(t.shape) >= 2 and t.name not in gathered and t.name not in kept]


def host_weight_copy(spec: ModelSpec, ctx: Context, placement: Placement, devices: tuple[Device, ...],
                     s: LlamaCppSettings) -> tuple[int, int] | None:
    """(device, bytes) of the largest host weight the scheduler copies into a device's compute buffer: a matrix
    left on the CPU (-ngl below the layer count, -ot ...=CPU, --n-cpu-moe) is multiplied on the first device
    whose offload_op wants the op ("1.off" above) once the worst-case ubatch has OP_OFFLOAD_MIN_BATCH tokens, and
    ggml_backend_sched_split_graph (ggml/src/ggml-backend.cpp) starts a new split at every such weight ("by
    starting a new split, the memory of the previously offloaded weights can be reused"), so one copy at a time
    sits beside the layer's workspace. The token embeddings are gathered (GET_ROWS, no offload) and the output
    weight has its own path (output_offload_device). The mainline logs in ikawrakow/ik_llama.cpp discussion #357
    and PR #370 (b5269 / b5271, Qwen3-235B-A22B Q6_K, -ot blk.N.ffn=CPU on RTX 3090s, -ub 512) print 774.00 MiB
    for the first GPU on one GPU or two: one 630 MiB q6_K expert tensor and 144 MiB of rows. Sized here as the copy
    above the whole FFN workspace (feed_forward_phases), 822 MiB, where ggml-alloc's placement of the copy among the
    freed FFN rows is not replayed: host_experts_split_bytes replays it where the host weights the device
    multiplies are all experts (750.02 MiB for those logs, tests/test_llamacpp_heldout3_logs.py)."""
    d = _offload_device(devices, s, min(ctx.n_ctx, ctx.n_ubatch))
    if d is None:
        return None
    host = _offloaded_host_matrices(spec, ctx, placement, devices, s)
    if not host:
        return None
    big = max(host, key=gpu_alloc_size)
    return d, gpu_alloc_size(big) if infer_backend((devices[d],), s.backend).name in _GGML_CUDA else big.nbytes


# build_moe_ffn (src/llama-graph.cpp): weight_before_ffn = arch == LLM_ARCH_LLAMA4, "we apply the sigmoid-ed weights
# before the FFN" (read at b5092 and b7140): the experts read the weighted input, their outputs are not weighted
WEIGHT_BEFORE_FFN = frozenset({"llama4"})
# backends whose offloaded expert products are replayed (host_experts_split_bytes), and ggml-cuda's (CUDA, HIP) in the
# builds before CUDA_FUSION_DEPS_BUILD, whose graph_optimize adds no allocation dependencies (in those, and without
# the replay's conditions, host_weight_copy's bound)
HOST_EXPERT_REPLAY_BACKENDS = ("sycl", "vulkan")
SYCL_ALIGN = 128  # ggml-sycl.cpp ggml_backend_sycl_buffer_type_get_alignment


def host_experts_split_bytes(spec: ModelSpec, ctx: Context, placement: Placement, devices: tuple[Device, ...],
                             s: LlamaCppSettings) -> tuple[int, int] | None:
    """(device, bytes) of the offloaded routed experts of the MoE layers whose expert weights sit on the host (-ot
    ...exps=CPU, --cpu-moe, --n-cpu-moe, the overrides --fit writes), replayed through ggml-alloc, where every host
    tensor of the load is such an expert weight, or a weight whose product the BLAS backend takes (blas_weights: with
    -DGGML_BLAS a dense host matrix is multiplied there, never copied to the device), and the device is SYCL or
    Vulkan, or ggml-cuda before CUDA_FUSION_DEPS_BUILD; None elsewhere.

    Each MUL_MAT_ID with a host weight goes to the first device whose offload_op wants it (ggml-sycl.cpp
    get_op_batch_size: ne[2], the tokens, against op_offload_min_batch_size 32; "1.off" above) and starts a split
    whose input is the weight's copy (ggml_backend_sched_split_graph), freed once its product is done. In
    build_moe_ffn's order (src/llama-graph.cpp): up (or the merged gate_up) with the copies of the FFN input and the
    selected experts, gate, the SWIGLU node (GGML_OP_GLU, not in place; before SWIGLU_OP_BUILD SiLU and the product in
    place on the gate), the down product in a split of its own with the router weights' copy, the weighting in
    place, the views' sum; the rest of the layer stays with its weights. A router left on the host with too few
    experts for BLAS goes first, its logits giving the selection on the device; Llama 4 weights the repeated input
    before the experts instead of their outputs (WEIGHT_BEFORE_FFN). Between two such layers the device holds
    nothing of them, so each layer is replayed from an empty buffer and the largest counts. The down weight's copy
    then lands above the SWIGLU block and the two freed products, where the whole FFN workspace over the copy
    (host_weight_copy's bound) counted the FFN's rows a second time: the b9694 log of Qwen3-Coder-Next Q4_K_M on two
    Arc Pro B50 (PR #24476, -c 131072 -ub 2048, experts of layers 26-48 on the CPU) prints SYCL0 727 MiB. On ggml-cuda
    (b5269, before SWIGLU_OP_BUILD: SiLU and the product in place) the mainline logs of ik_llama.cpp discussion #357
    (Qwen3-235B-A22B Q6_K, -ub 512, RTX 3090s, 630 MiB q6_K expert tensors) print CUDA0 742.00 MiB with no -ngl and
    a BLAS build (every dense product on BLAS, the experts offloaded) and 774.00 with -ot ffn=CPU (attention on the
    GPU): 750.02 replayed for both (host_weight_copy's bound: 822.00)."""
    d = _offload_device(devices, s, min(ctx.n_ctx, ctx.n_ubatch))
    if d is None or infer_backend((devices[d],), s.backend).name not in HOST_EXPERT_REPLAY_BACKENDS \
            + (_GGML_CUDA if not cuda_fusion_deps(ctx, devices, s) else ()):
        return None
    host = _offloaded_host_matrices(spec, ctx, placement, devices, s)
    # a router left on the host (-ngl below the layer count) with fewer experts than BLAS_MIN_BATCH: ggml-blas's
    # supports_op refuses the product (ne0, the experts, below its min_batch 32), so op offload gives it the device too
    if not host or not all(t.name.endswith("_exps.weight") or t.name.endswith(".ffn_gate_inp.weight") for t in host):
        return None
    T = min(ctx.n_ctx, ctx.n_ubatch)
    vulkan = infer_backend((devices[d],), s.backend).name == "vulkan"
    cuda = infer_backend((devices[d],), s.backend).name in _GGML_CUDA
    by_layer: dict[int, dict[str, int]] = {}
    for t in host:
        by_layer.setdefault(t.layer, {})[t.name.rsplit(".", 2)[-2]] = gpu_alloc_size(t)
    ffn = {la.index: la.ffn for la in spec.layers if la.ffn is not None and la.ffn.is_moe}
    peak = 0
    for il, w in by_layer.items():
        f = ffn.get(il)
        if f is None or "ffn_down_exps" not in w:
            return None
        resid, used = spec.n_embd * T * 4, f.n_experts_used
        wide = f.n_ff_expert * used * T * 4
        g = compute_graphs._Graph()
        add, view = g.add, g.view
        # a split's inputs in the order its nodes read them: the weight (src0), the FFN input, the selected experts.
        # Only the host weights are copied: --fit's overflow pattern may leave a layer's up / gate on the device
        # (llama_params_fit_impl's LAYER_FRACTION_DOWN / _GATE), whose products then read them where they are.
        def weight(name: str, add=add, w=w) -> list[int]:
            return [add(w[name])] if name in w else []

        layer = {t.name.rsplit(".", 2)[-2] for t in spec.weights.tensors if t.layer == il}
        # the router's split first: its weight's copy and the FFN input give the logits, from which the selection
        # (top-k, expanded onto the same device) reads the experts' ids
        router = weight("ffn_gate_inp")
        w0 = weight("ffn_gate_up_exps" if "ffn_gate_up_exps" in layer else "ffn_up_exps")
        x = add(resid)
        logits = [add(f.n_experts * T * 4, *router, x)] if router else []
        ids = add(used * T * 4, *logits)
        before = spec.architecture in WEIGHT_BEFORE_FFN
        if before:  # the selected experts' weights scale the repeated input (ggml_repeat, then MUL in place)
            weights = add(used * T * 4, *logits, ids) if router else add(used * T * 4)
            x = add(spec.n_embd * used * T * 4, add(spec.n_embd * used * T * 4, x), weights, inplace=True)
        if "ffn_gate_up_exps" in layer:
            gate_up = add(2 * wide, *w0, x, ids)
            glu = add(wide, view(gate_up), view(gate_up))
        else:
            up = add(wide, *w0, x, ids)
            gate = add(wide, *weight("ffn_gate_exps"), x, ids) if "ffn_gate_exps" in layer else up
            if ctx.build >= SWIGLU_OP_BUILD:
                glu = add(wide, gate, up)
            else:
                glu = add(wide, add(wide, gate, inplace=True), up, inplace=True)
        down_w = add(w["ffn_down_exps"])
        experts = add(spec.n_embd * used * T * 4, down_w, glu, ids)
        if not before:
            weights = add(used * T * 4)  # the router weights' copy, read by the weighting in the down split
            experts = add(spec.n_embd * used * T * 4, experts, weights, inplace=True)
        parts = [view(experts) for _ in range(used)]
        out = parts[0]
        for p in parts[1:]:
            out = add(resid, out, p, inplace=True)
        add(0, out)  # the copy the rest of the layer reads
        if vulkan:
            size = sum(galloc.chunk_sizes(0, g.nodes, VK_MAX_BUFFER, ctx.build >= GALLOC_PREFER_REUSE_BUILD))
        else:
            size = galloc.peak_bytes(0, g.nodes, CUDA_ALIGN if cuda else SYCL_ALIGN)
        peak = max(peak, size)
    return d, peak


def output_weight_copy(spec: ModelSpec, device: Device, s: LlamaCppSettings) -> int:
    """The bytes the copy of the output weight (the token embeddings when tied) takes on the device: ggml-alloc
    sizes it by the device buffer type's get_alloc_size (ggml-cuda pads a quantized tensor's last row)."""
    by_name = {t.name: t for t in loaded_tensors(spec, s)}
    t = by_name.get("output.weight") or by_name.get("token_embd.weight")
    if t is None:
        return 0
    return gpu_alloc_size(t) if infer_backend((device,), s.backend).name in _GGML_CUDA else t.nbytes


# architectures whose RoPE is M-RoPE / interleaved M-RoPE (src/llama-model.cpp llama_model_rope_type at b7140:
# QWEN2VL LLAMA_ROPE_TYPE_MROPE, QWEN3VL / QWEN3VLMOE LLAMA_ROPE_TYPE_IMROPE; Qwen3.5's, added later, measured: the
# H200's qwen3.5-27b CUDA_Host 112.08 MiB at -ub 2048 needs the 24 KiB of three more positions a token): four
# positions a token (llama_hparams::n_pos_per_embd), the positions input n_tokens x 4 int32
MROPE_POSITIONS = frozenset({"qwen2vl", "qwen3vl", "qwen3vlmoe", "qwen35", "qwen35moe"})


def token_index_inputs(spec: ModelSpec, ctx: Context, caches: list[Cache], s: LlamaCppSettings) -> int:
    """The small graph inputs of a token ubatch, each in its own block of the host's buffer (ggml-alloc rounds a
    tensor up to the buffer's alignment, galloc.ALIGN: ggml_dyn_tallocr_alloc's aligned_offset):

    - inp_tokens, n_tokens int32 (llm_build_inp_embd; llm_graph_context::build_inp_embd from PR #12181);
    - inp_pos, n_tokens x n_pos_per_embd int32 where the graph has attention (build_inp_pos; MROPE_POSITIONS);
    - inp_out_ids, n_outputs int32 from PR #6122 (ERAS out_ids: build_inp_out_ids, the last layer's row gather;
      always built from then, PR #14275 dropping the n_outputs < n_tokens shortcut it briefly had);
    - from ERAS set_rows, each KV cache's K row indices (n_tokens int64, llama_kv_cache::build_input_k_idxs) and,
      with V not transposed (flash attention), its V row indices (n_tokens int64; the transposed V's wide indices
      are v_index_inputs);
    - from ERAS attn_rot, a quantized cache's Hadamard matrices (_rotations: build_input_k_rot / _v_rot), each cache.

    ggml_backend_sched gives every graph input the last backend, the CPU (ggml_backend_sched_backend_id_from_cur:
    "graph input ... last backend (assumed CPU)"), whose buffer is the GPU's host buffer type when layers are
    offloaded, and the input_dep views it puts at the head of each device split keep them alive to the graph's end
    (ggml_backend_sched_split_graph). ollama/ollama#7606 (vendored llama.cpp d7cfe1ff = b4779, deepseek-r1:32b,
    512 tokens): ROCm_Host 26.01 MiB = 10 MiB of rows + the 16 MiB F32 mask + 3 x 2 KiB; on an H200 at
    llama.cpp@0c1e57098: CUDA_Host 20.01 at -ub 512 (14 KiB: tokens, positions, out_ids, K and V indices), 96.05 at
    -ub 2048 (56 KiB), 20.09 with a q8_0 cache (the 64 + 16 KiB rotations beside them)."""
    T = min(ctx.n_ctx, ctx.n_ubatch)
    a = galloc.ALIGN

    def block(n: int) -> int:
        return round_up(n, a) if n else 0
    total = block(T * 4)
    attending = [la for la in spec.trunk_layers if la.attention is not None]
    if attending:
        total += block(T * 4 * (4 if spec.architecture in MROPE_POSITIONS else 1))
    if ERAS.reached(ctx.build, "out_ids"):
        total += block(4 * (T if spec.architecture in EMBEDDING_GRAPHS else min(T, reserved_outputs(ctx, s))))
    if spec.architecture in NO_CACHE_GRAPHS or not attending:
        return total
    stored = [c for c in caches if c.layers and c.k_bytes]
    if ERAS.reached(ctx.build, "set_rows"):
        v_rows = ctx.flash_attn or ctx.fa_auto_off
        total += sum(block(T * 8) + (block(T * 8) if c.v_bytes and v_rows else 0) for c in stored)
    a0 = attending[0].attention
    if ERAS.reached(ctx.build, "attn_rot") and not (a0.kv_lora_rank and a0.latent_cache
                                                     and ERAS.reached(ctx.build, "mla_latent")):
        k_rot, v_rot = _rotations(spec, ctx)  # none for MLA's latent cache (as deepseek2_cpu_bytes)
        total += len(stored) * (block(k_rot) + block(v_rot))
    return total


def v_index_inputs(spec: ModelSpec, ctx: Context, caches: list[Cache], layers: set[int] | None = None) -> int:
    """The V-index graph inputs without flash attention (ERAS set_rows): each KV cache with a V transposes it
    (v_trans) and stores it through ggml_set_rows with n_embd_v_gqa_max x n_tokens int64 indices
    (llama_kv_cache::build_input_v_idxs), an input the host keeps for an offloaded graph. Measured on an H200
    (llama.cpp 0c1e570, -fa off, -ub 512): CUDA_Host 28.01 MiB for llama-3.1-8b at 4K (the flash-attention
    inputs' 20.01, the F32 mask's 4 MiB more and 4 MiB of indices), 42.01 for gemma-3-12b's two caches.
    `layers`: only the caches those layers store into (a device's split inputs). The n_tokens-wide indices (K's
    build_input_k_idxs, V's with flash attention: 4 KiB at 512 tokens) are left out."""
    if ctx.flash_attn or ctx.fa_auto_off or not ERAS.reached(ctx.build, "set_rows") or spec.architecture in NO_CACHE_GRAPHS:
        return 0
    run = attention_layers(spec)
    if not run:
        return 0
    n_embd_v = max(la.attention.n_kv_heads * la.attention.head_dim_v for la in run)
    read = [c for c in caches if c.layers and c.v_bytes and (layers is None or layers & set(c.layers))]
    return len(read) * n_embd_v * min(ctx.n_ctx, ctx.n_ubatch) * 8


def blas_host_attention(spec: ModelSpec, ctx: Context, caches: list[Cache], placement: Placement,
                        devices: tuple[Device, ...], s: LlamaCppSettings) -> int:
    """The host's compute buffer where a BLAS build (-DGGML_BLAS, blas_weights) keeps the flash attention of the
    layers left on the CPU on the CPU backend, in the worst-case (pp) graph; 0 where it does not.

    ggml_backend_sched_split_graph (ggml/src/ggml-backend.cpp): the layer's output projection (attn_output, a host
    weight) goes to BLAS, the first backend that takes the host buffer and the MUL_MAT
    (ggml_backend_sched_backend_from_buffer, ggml-blas.cpp ggml_backend_blas_device_supports_op), not to the device
    (op offload is tried only for a weight of the last backend). FLASH_ATTN_EXT has no weight (pass 1 leaves it);
    "expand gpu up" from the projection stops at it (BLAS supports no FLASH_ATTN_EXT), "expand gpu down" finds the
    K / V stores into the host cache before it (the CPU: their destination's buffer), and "expand rest down" gives
    it the CPU, with the F16 cast of the mask before it (llm_graph_context's build_attn_inp_kv*: one cast, first
    expanded with the first attention layer; before PR #23764, ERAS kq_mask_f16). Without BLAS the projection is
    offloaded to the device and "expand gpu up" takes the attention there (the GGML_SCHED_DEBUG=2 dump of
    llama-3.1-8b -ngl 2, moe_offload_device_bytes). The CPU then holds, at the first such layer's split, the graph
    inputs (the F32 masks), the layer's Q and K rows in F32 (copies of the device's rope output where op offload
    sent the Q / K norms there, else the CPU's own rope output; V is BLAS's product, read in place), the F16 masks
    the cast makes, then the attention output in the F32 masks' block, freed after the cast (ggml-alloc, replayed);
    in later layers the F16 masks stay beside each layer's Q, K and output. The mainline b5269 log of ik_llama.cpp
    discussion #357 (Qwen3-235B-A22B Q6_K, no -ngl: 0 of 95 layers offloaded, -fa, q8_0 cache, -c 16384 -ub 512,
    two RTX 3090, BLAS): CUDA_Host 65.01 MiB = the 32 MiB F32 mask + K 1 + Q 16 (Qwen3's Q / K norms on the
    device: K's copy below Q's, so its block, freed by the store, stays a hole) + the 16 MiB F16 mask, and the
    inputs' few KiB."""
    if not ctx.flash_attn or not devices or not ERAS.reached(ctx.build, "pp_offload"):
        return 0
    T = min(ctx.n_ctx, ctx.n_ubatch)
    if _offload_device(devices, s, T) is None:
        return 0
    blas = {t.name for t in blas_weights(spec, ctx, placement, devices, s)}
    # an absorbed-MLA layer's FLASH_ATTN_EXT is followed by the per-head V decompression (attn_v_b: one row a head,
    # under BLAS's batch, so offloaded to the device), which takes the attention there: not such a layer
    host = [la for la in attention_layers(spec) if la.index < len(placement.layer_device)
            and placement.layer_device[la.index] < 0 and f"blk.{la.index}.attn_output.weight" in blas
            and not (la.attention.kv_lora_rank and la.attention.latent_cache and ERAS.reached(ctx.build, "mla_latent"))]
    cast = not ERAS.reached(ctx.build, "kq_mask_f16")
    if not host or (cast and host[0] != attention_layers(spec)[0]):
        return 0  # not modelled: a first attention layer on a device, which casts the mask there
    normed = {t.name for t in spec.weights.tensors if t.name.endswith(("attn_q_norm.weight", "attn_k_norm.weight"))}
    # the graph inputs: the masks (F32 before PR #23764, cast to F16 for flash attention; F16 inputs after) and,
    # since PR #18898, the unread embeddings input
    nodes = [galloc.Node(c.cells * T * (4 if cast else 2), output=not cast) for c in caches]
    if ERAS.reached(ctx.build, "embd_input"):
        nodes.append(galloc.Node(spec.n_embd * T * 4, output=True))
    n_in = len(nodes)
    f16 = list(range(len(caches)))
    first = True
    for la in (host[0], max(host, key=lambda la: la.attention.n_heads * (la.attention.head_dim_k
                                                                        + la.attention.head_dim_v))):
        a = la.attention
        q_rows, k_rows = galloc.Node(a.n_heads * a.head_dim_k * T * 4), galloc.Node(a.n_kv_heads * a.head_dim_k * T * 4)
        if f"blk.{la.index}.attn_q_norm.weight" in normed and f"blk.{la.index}.attn_k_norm.weight" in normed:
            # the Q / K norms' MUL goes to the device (op offload) and the rope after it: both rows are the
            # split's input copies, K's (the store's) first, then Q's (the attention's)
            k, q = len(nodes), len(nodes) + 1
            nodes += [k_rows, q_rows]
        else:  # roped on the CPU (pass 3: the backend that reads most of the rope's sources), Q first
            q, k = len(nodes), len(nodes) + 1
            nodes += [q_rows, k_rows]
        nodes.append(galloc.Node(0, (k,)))  # K's store into the host cache (its last reader)
        if cast and first:
            f16 = list(range(len(nodes), len(nodes) + len(caches)))
            nodes += [galloc.Node(c.cells * T * 2, (i,), output=True) for i, c in enumerate(caches)]
        out = len(nodes)
        nodes.append(galloc.Node(a.n_heads * a.head_dim_v * T * 4, (q, *f16)))
        nodes.append(galloc.Node(0, (out,)))  # the output projection on BLAS, the output's last reader
        first = False
    return galloc.peak_bytes(n_in, nodes)


def host_layer_fa_q(spec: ModelSpec, ctx: Context, placement: Placement, devices: tuple[Device, ...],
                    s: LlamaCppSettings) -> int:
    """The Q rows a layer left on the CPU hands back to the host for its flash attention in the worst-case (pp)
    graph: op offload runs the layer's projections on the device (ERAS pp_offload), but FLASH_ATTN_EXT for heads
    ggml-cuda has no kernel for stays on the CPU (ggml_backend_cuda_device_supports_op, cuda_fa_supported), right
    after the layer's K / V stores into the host cache, in the same CPU split: ggml_backend_sched_split_graph puts
    that split's inputs (the K and V rows, then Q in F32) at its head, all alive together before the stores free
    the first two; the attention output takes their block. 0 where no such layer is on the host. The legacy
    DeepSeek-V3 GGUF (192 / 128 heads) at -ngl 1 (every layer on the CPU, flash attention kept by -fa auto since
    each op sits with its layer's CPU)."""
    if not ctx.flash_attn or not devices or infer_backend(devices, s.backend).name not in _GGML_CUDA \
            or not ERAS.reached(ctx.build, "pp_offload") \
            or _offload_device(devices, s, min(ctx.n_ctx, ctx.n_ubatch)) is None:
        return 0
    T = min(ctx.n_ctx, ctx.n_ubatch)
    return max((la.attention.n_heads * la.attention.head_dim_k * T * 4 for la in attention_layers(spec)
                if (la.index >= len(placement.layer_device) or placement.layer_device[la.index] < 0)
                and not cuda_fa_supported(la.attention, ctx)), default=0)


def host_cache_stores(spec: ModelSpec, ctx: Context, placement: Placement, s: LlamaCppSettings) -> int:
    """The largest K and V rows (F32, n_embd_k_gqa + n_embd_v_gqa a token) the scheduler copies to the host to
    store them into a KV cache there (-nkvo, or a layer left on the CPU): the SET_ROWS into a host buffer runs on
    the CPU (ggml_backend_sched_backend_id_from_cur: an op whose destination is a host buffer), its sources are
    split inputs copied into the host's compute buffer. They take the block of the token embeddings, freed once
    the first split has copied them (the GGML_SCHED_DEBUG=2 dumps, tests/fixtures/llamacpp_cuda).

    A layer with a fused QKV projection (blk.N.attn_qkv.weight: llm_graph_context::build_qkv, src/llama-graph.cpp)
    has V as a view of the projection, one n_embd_v_gqa slice of each token's row; with flash attention the cache
    keeps V untransposed and llama_kv_cache::cpy_v stores that strided view as it is (ggml_set_rows of a 2-D view
    with the projection's row stride), so the scheduler's copy of it keeps its layout (ggml_dup_tensor_layout):
    nearly the whole projection, (T - 1) rows of Q + K + V and one of V. Phi-3's held-out -ngl 2 on an H200:
    CUDA_Host 37.99 MiB = the inputs' 20.01 + the roped K rows' 6.00 + V's copy 17.98 less the freed embeddings
    block (6.00)."""
    T = min(ctx.n_ctx, ctx.n_ubatch)
    rows = []
    fused = {t.name for t in spec.weights.tensors if t.name.endswith(".attn_qkv.weight")} if ctx.flash_attn else set()
    for la in attention_layers(spec):
        if not (s.no_kv_offload or (la.index < len(placement.layer_device) and placement.layer_device[la.index] < 0)):
            continue
        a = la.attention
        if a.kv_lora_rank and a.latent_cache and ERAS.reached(ctx.build, "mla_latent"):
            # MLA caches the latent row (kv_lora_rank + rope), V the latent again before ERAS mla_k_only
            width = a.kv_lora_rank + a.qk_rope_head_dim + (0 if ERAS.reached(ctx.build, "mla_k_only") else a.kv_lora_rank)
        elif f"blk.{la.index}.attn_qkv.weight" in fused:
            n_v = a.n_kv_heads * a.head_dim_v
            row = (a.n_heads + a.n_kv_heads) * a.head_dim_k + n_v
            rows.append(a.n_kv_heads * a.head_dim_k * T * 4 + _view_bytes((n_v, T), (4, row * 4)))
            continue
        else:
            width = a.n_kv_heads * (a.head_dim_k + a.head_dim_v)
        rows.append(width * T * 4)
    return max(rows + [host_recurrent_stores(spec, ctx, placement, s)])


def _view_bytes(ne: tuple[int, ...], nb: tuple[int, ...]) -> int:
    """ggml_nbytes of an F32 view: the span its strides reach (the scheduler's copy of a view keeps its layout:
    ggml-backend.cpp ggml_dup_tensor_layout)."""
    return 4 + sum((n - 1) * b for n, b in zip(ne, nb, strict=True))


# gated delta nets whose conv-state store is a ggml_cpy of a view of the conv input (host_recurrent_stores)
HOST_GDN_STORE_ARCHS = GDN_CONV_ARCHS | {"kimi-linear"}


def host_recurrent_stores(spec: ModelSpec, ctx: Context, placement: Placement, s: LlamaCppSettings) -> int:
    """The largest block a Mamba-2 layer whose recurrent state sits on the host (-nkvo, or a layer left on the
    CPU) puts in the host's compute buffer (src/models/graph-context-mamba.cpp build_mamba2_layer). The store of
    the conv state (the conv input's last d_conv - 1 tokens, a strided view of conv_dim rows) runs on the host,
    its source a split-input copy that keeps the view's layout (ggml_dup_tensor_layout: nearly the whole conv
    input). Where the layer's weights are on the host too, SSM_SCAN stays there (the state source is a host
    buffer): its x, B and C (strided views of the conv output, each spanning it), dt and its output (d_inner x T
    plus the states). GGML_SCHED_DEBUG=2 dump of mamba2-2.7b -ngl 2 (tests/fixtures/llamacpp_cuda): CUDA_Host
    49.12 MiB = the unread embeddings input (5.00) + 44.12; -nkvo: 15.56 = the inputs' 10.00 + the conv copy's
    10.56 less the freed embeddings block.

    A gated delta net's layer (GDN_CONV_ARCHS: src/models/delta-net-base.cpp build_conv_state; kimi-linear's KDA:
    src/models/kimi-linear.cpp causal_conv1d, one conv input each for q, k and v, d_inner wide) stores its conv
    state the same way, a layout-keeping copy of the conv input's last d_conv - 1 tokens, and the new SSM state
    (build_recurrent_attn / the KDA layer: a ggml_cpy of the delta net's state view, n_embd_s floats a sequence).
    ggml_gated_delta_net itself reads the state gathered by build_rs, not the host buffer, so it runs on the GPU:
    the host holds only the copies. qwen3.5-27b's file on an H200 (-nkvo, or -ngl 4 / 8): CUDA_Host 34.13 MiB =
    the inputs' 24.02 + the conv copy's 20.12 less the freed 10.00 embeddings block.

    With n_rs_seq rollback snapshots (PR #22673's [TAG_RECURRENT_ROLLBACK_SPLITS]) the layer stores K = n_rs_seq + 1
    conv states, one ggml_cpy per slot, each from its own view of the conv input (delta-net-base.cpp
    build_conv_state loops t = 1..K; mamba-base.cpp over min(n_seq_tokens, K) slots), and the delta net's new
    states as one view of its K snapshots (build_recurrent_attn: D x n_seqs x min(n_seq_tokens, K)). Each view is a
    split input of its own, and ggml_backend_sched_split_graph adds a split's input copies to the graph "so that
    they are allocated by ggml-alloc at the start of the split" (ggml-backend.cpp): the K conv copies are live
    together. Qwen3.8-27B's MTP run (-np auto, n_rs_seq 2, two layers on the CPU): Vulkan_Host 313.47 MiB printed,
    the inputs' 72.00 + 3 x 80.47."""
    T = min(ctx.n_ctx, ctx.n_ubatch)
    n_seqs = max(1, min(ctx.n_seq_max, T))
    ts = -(-T // n_seqs)
    slots = 1 + ctx.n_rs_seq  # conv-state copies per layer (K); 1 without rollback
    peak = 0
    for la in spec.trunk_layers:
        r = la.recurrent
        gdn = r is not None and r.kind == "gated_delta_net" and spec.architecture in HOST_GDN_STORE_ARCHS
        if r is None or not (r.kind == "mamba2" or gdn):
            continue
        on_cpu = la.index < len(placement.layer_device) and placement.layer_device[la.index] < 0
        if not (s.no_kv_offload or on_cpu):
            continue
        conv_dim = r.d_inner if gdn and not r.n_group else r.d_inner + 2 * r.n_group * r.d_state
        row = (r.d_conv - 1 + ts) * 4
        blk = _view_bytes((r.d_conv - 1, conv_dim, n_seqs), (row, row, row * conv_dim))
        if gdn:
            peak = max(peak, slots * blk, r.ssm * n_seqs * min(ts, slots) * 4)
            continue
        blk *= min(ts, slots)  # mamba-base.cpp: one conv-state copy per written slot
        if on_cpu:
            head_dim = r.d_inner // max(1, r.n_heads)
            x = _view_bytes((head_dim, r.n_heads, ts, n_seqs), (4, head_dim * 4, conv_dim * 4, conv_dim * ts * 4))
            bc = _view_bytes((r.d_state, r.n_group, ts, n_seqs),
                             (4, r.d_state * 4, conv_dim * 4, conv_dim * ts * 4))
            dt = r.n_heads * ts * n_seqs * 4
            out = (r.d_inner * ts * n_seqs + r.ssm * n_seqs) * 4
            blk = max(blk, x + 2 * bc + dt + out)
        peak = max(peak, blk)
    return peak


# graphs built by src/models/deepseek2.cpp (llama_model_mistral4 reuses llama_model_deepseek2::graph, models.h)
MLA_SPLIT_ARCHS = frozenset({"deepseek2", "mistral4"})


def mla_split_attention(spec: ModelSpec, ctx: Context, caches: list[Cache], placement: Placement,
                        devices: tuple[Device, ...], s: LlamaCppSettings, d: int) -> int:
    """The attention workspace of ggml-cuda device d for an absorbed-MLA graph with flash attention, replayed
    through ggml-alloc with the split's input copies first (compute_graphs.mla_split_graph); 0 where it does not
    apply. The closed form of compute_phases (the absorbed query, Qcur and the latent output per head above the
    inputs, fitted on the CPU, whose graph allocates its small inputs below the embeddings) is ~96 KB a token too
    high there: the device's Qcur lands above the inputs, attn_norm, q_a, wq_b's rows, the absorbed query and
    the roped q_pe (deepseek-v3 -c 4096 -ub 512: 371.01 MiB measured, 418 closed form). ggml-cuda sizes the flash-
    attention node with an F16 copy of a non-F16 K for the MMA kernel (every batch over two tokens: Q's 576 columns
    rule out the vector kernel, ggml_cuda_get_best_fattn_kernel); V is a view of K and shares it
    (ggml_cuda_flash_attn_ext_get_f16_extra_data: V_is_K_view)."""
    if d < 0 or d >= len(devices) or not ctx.flash_attn or spec.architecture not in MLA_SPLIT_ARCHS \
            or not ERAS.reached(ctx.build, "mla_latent") or infer_backend((devices[d],), s.backend).name not in _GGML_CUDA:
        return 0
    run = [la for la in attention_layers(spec) if la.index < len(placement.layer_device)
           and placement.layer_device[la.index] == d]
    if not run or not all(la.attention.kv_lora_rank and la.attention.latent_cache for la in run):
        return 0
    T = min(ctx.n_ctx, ctx.n_ubatch)
    masks = sum(c.cells * T * 2 for c in caches) if ERAS.reached(ctx.build, "kq_mask_f16") else \
        sum(c.cells * T * 4 for c in caches)
    a = run[0].attention
    n_kv = next((c.cells for c in caches if run[0].index in c.layers), 0)
    copy = n_kv * (a.kv_lora_rank + a.qk_rope_head_dim) * 2 \
        if ctx.type_k.name != "f16" and T > 2 and ctx.build >= CUDA_FA_F16_BUILD else 0
    return _replayed(compute_graphs.mla_split_graph, spec, run[0].index, T, masks, copy, align=128)


def _dense_device_mask_era(ctx: Context) -> bool:
    """Whether phi3_graph's inputs are the build's: the K / V index inputs (ERAS set_rows) and the mask as the
    graph holds it. Without flash attention the KQ mask is an F32 input in every build, read by SOFT_MAX as is
    (src/llama-graph.cpp build_attn_inp_kv_impl to b9410: F32, cast to F16 only "if (cparams.flash_attn)"), so the
    graph holds from set_rows on; with flash attention only from PR #23764 (kq_mask_f16), before which the F32
    input is cast on the device, a node the graph does not have. ollama/ollama#13552 (Ollama v0.13.2 by its server.go
    line numbers, llama.cpp 7f8ef50cc = b7209, phi4:14b at 4096 x 512, no flash attention): CUDA0 353.01 MiB, replayed to the 0.01 MiB
    (383.00 by the closed-form phases)."""
    if ERAS.reached(ctx.build, "kq_mask_f16"):
        return True
    return not ctx.flash_attn and ERAS.reached(ctx.build, "set_rows")


def dense_device_bytes(spec: ModelSpec, ctx: Context, caches: list[Cache], placement: Placement,
                       devices: tuple[Device, ...], s: LlamaCppSettings, masks: int) -> int | None:
    """The compute buffer of the ggml-cuda device that runs a dense graph of DENSE_DEVICE_GRAPHS
    (compute_graphs.phi3_graph with device=True: the split's input copies at its head, freed after their last
    reader, the unread embeddings input on the host), at the CUDA buffer's alignment: all of it, or, with the first
    layers left on the CPU (-ngl below the layer count) and the worst-case ubatch at the offload batch, its whole pp
    graph with a split per host weight's copy and the host layers' K / V views copied in (as
    moe_offload_device_bytes has it). Where the graph modelled holds: an F16 mask input (ERAS kq_mask_f16, which
    also has the K / V index inputs), an unquantized cache (no rotations, no flash-attention F16 copies), one KV
    stream, no sliding-window cache, no pipeline parallelism, no tensor overrides. The closed-form phases count the
    CPU graph's placement (one row more than a device's, the unread input below the FFN's rows): Phi-3-mini's
    4-layer file on an H200, CUDA0 152.02 MiB at -c 16384 -ub 1024 (176 by those, 152.02 replayed), 74.62 and
    552.01 (no flash attention) at -c 8192 -ub 512; -ngl 2: 129.19 (107 by those)."""
    d = placement.output_device
    if spec.architecture not in compute_graphs.DENSE_DEVICE_GRAPHS or d < 0 or d >= len(devices) \
            or devices[d].id.startswith("RPC") or infer_backend(devices, s.backend).name not in _GGML_CUDA \
            or ctx.type_k.quantized or ctx.type_v.quantized or ctx.n_stream != 1 or ctx.fa_auto_off \
            or not _dense_device_mask_era(ctx) or any(c.name == "SWA" for c in caches) \
            or _tensor_overrides(s) or pipeline_parallel(spec, placement, devices, s):
        return None
    T = min(ctx.n_ctx, ctx.n_ubatch)
    rows_out = reserved_outputs(ctx, s)
    trunk = spec.trunk_layers
    host_layers = {i for i, dev in enumerate(placement.layer_device) if dev < 0}
    host = host_kv = None
    if host_layers or s.no_kv_offload:
        if not set(placement.layer_device) <= {-1, d} or len(devices) != 1 or _offload_device(devices, s, T) != d \
                or not trunk or (rows_out < OP_OFFLOAD_MIN_BATCH and placement.layer_device[trunk[-1].index] < 0):
            return None
        host = _host_weights(spec, devices, s, placement, host_layers)
        host_kv = _host_cache_views(caches, host_layers, s)
    elif set(placement.layer_device) != {d}:
        return None
    return _replayed(compute_graphs.phi3_graph, spec, T, rows_out, masks, ctx.flash_attn, device=True, host=host,
                     host_kv=host_kv, align=CUDA_ALIGN)


# the layer tensors dense_metal_graph models (any other, a bias of the output projection or of the FFN, a tensor of
# another graph, leaves the closed-form phases in charge)
_METAL_DENSE_TENSORS = frozenset({"attn_norm.weight", "attn_q.weight", "attn_k.weight", "attn_v.weight",
                                  "attn_q.bias", "attn_k.bias", "attn_v.bias", "attn_q_norm.weight",
                                  "attn_k_norm.weight", "attn_output.weight", "ffn_norm.weight", "ffn_up.weight",
                                  "ffn_gate.weight", "ffn_down.weight"})


def metal_dense_device_bytes(spec: ModelSpec, ctx: Context, caches: list[Cache], placement: Placement,
                             devices: tuple[Device, ...], s: LlamaCppSettings, masks: int) -> int | None:
    """The compute buffer of the one Metal device that runs a whole Llama / Qwen2 / Qwen3 graph with flash attention,
    in a build whose ggml-metal reorders each split before ggml-alloc places it (compute_graphs.metal_graph_optimize,
    METAL_REORDER_BUILD on): compute_graphs.dense_metal_graph replayed at the Metal buffer's 32-byte alignment. The
    reorder pulls the last layer's GET_ROWS of the residual up beside the attention, so the final norm lands one
    hidden-state block higher and the logits above it: gollek's Qwen2.5-0.5B run on an Apple M4 (mid-February 2026,
    tests/test_llamacpp_heldout19_logs.py) prints MTL0 300.25 MiB = 296.75 of logits + two 896 x 512 F32 blocks,
    replayed to the 0.01 MiB (298.50 by the closed-form phases, which keep one); a Qwen3-8B run at -c 2048 on an M4
    (ChnjFan's blog, early August 2026) 312.75 MiB (304.75 by those). Where the graph modelled holds: an
    unquantized cache, one KV stream, no sliding-window cache, every layer and the output on the device, its KV
    cache there, no tensor overrides, no layer tensor dense_metal_graph does not have (_METAL_DENSE_TENSORS); None
    elsewhere."""
    d = placement.output_device
    if spec.architecture not in compute_graphs.METAL_REORDER_ARCHS or ctx.build < compute_graphs.METAL_REORDER_BUILD \
            or len(devices) != 1 or d != 0 or set(placement.layer_device) != {0} \
            or infer_backend(devices, s.backend).name != "metal" or not ctx.flash_attn or ctx.fa_auto_off \
            or s.no_kv_offload or ctx.type_k.quantized or ctx.type_v.quantized or ctx.n_stream != 1 \
            or not ERAS.reached(ctx.build, "set_rows") or any(c.name == "SWA" for c in caches) \
            or _tensor_overrides(s) or not spec.trunk_layers:
        return None
    for la in spec.trunk_layers:
        if la.attention is None or not la.attention.n_heads or la.ffn.is_moe or not la.ffn.n_ff:
            return None
    prefix = [f"blk.{la.index}." for la in spec.trunk_layers]
    for t in spec.weights.tensors:
        if t.layer is not None and t.name.startswith("blk.") and t.name.split(".", 2)[2] not in _METAL_DENSE_TENSORS:
            return None
    names = {t.name for t in spec.weights.tensors}
    if not all(f"{p}ffn_gate.weight" in names and f"{p}ffn_down.weight" in names for p in prefix):
        return None
    T = min(ctx.n_ctx, ctx.n_ubatch)
    # from b7057 each FLASH_ATTN_EXT result takes ggml-metal's extra bytes over the cache's cells
    # (compute_graphs.metal_fa_extra_bytes), which decide whether a pulled-up block fits a freed hole. The b8054
    # llama-server log of Qwen2.5-3B Q4_K_M on an Apple M4 (4 slots in 4096 unified cells,
    # tests/test_llamacpp_heldout20_logs.py) prints MTL0 300.75 MiB, 304.75 without them; the two heldout19 runs
    # (b8040, b10262) are the same either way
    n_kv = caches[0].cells if ctx.build >= compute_graphs.METAL_FA_EXTRA_BUILD and caches else 0
    return _replayed(compute_graphs.dense_metal_graph, spec, T, reserved_outputs(ctx, s), masks,
                     not ERAS.reached(ctx.build, "kq_mask_f16"),
                     ctx.build >= compute_graphs.METAL_REORDER_STORES_BUILD, n_kv, align=METAL_ALIGNMENT)


def _stream_ubatch(ctx: Context) -> int:
    """The CPU replays' worst-case ubatch: one sequence a KV stream, T / n_stream tokens each rounded up
    (graph_reserve: 513 tokens for 512 in 3 streams, the masks 171 rows a stream, out_ids still 512:
    gpt_oss_cpu_bytes' dump of the reserve at -c 5000 -np 3, 412.17 MiB)."""
    return round_up(min(ctx.n_ctx, ctx.n_ubatch), ctx.n_stream)


def dense_cpu_bytes(spec: ModelSpec, ctx: Context, caches: list[Cache], s: LlamaCppSettings) -> int | None:
    """The CPU compute buffer of a dense graph of DENSE_DEVICE_GRAPHS that runs on the CPU alone, replayed through
    ggml-alloc as llama.cpp's CPU backend allocates it (compute_graphs.phi3_graph: the graph inputs as leafs first,
    the unread embeddings input among them, the token rows a GET_ROWS node), where dense_device_bytes' graph holds
    (an F16 mask input, an unquantized cache, one stream, no sliding-window cache, no tensor overrides); None
    elsewhere. The closed-form phases put the FFN's rows one block high there. Phi-3-mini's 4- and 2-layer files
    through llama-cpp-python 0.3.36 on the CPU (tests/groundtruth/llamacpp_run.py), to the printed 0.01 MiB: 164.03
    MiB at -c 16384 -ub 1024 (176 by those), 74.63 at -c 8192 -ub 512, 558.01 there without flash attention, 90.64
    at -c 4096 -fa auto, 328.05 at -ub 2048, 98.01 at -c 32768 -np 4 unified, 44.32 at -c 2048 -ub 256.

    The hybrids of HYBRID_CPU_GRAPHS (Falcon-H1, Jamba, Nemotron-H and its MoE, Granite 4.0 H) the same way, with any number of
    streams and the recurrent states of n_seq_max sequences, where the closed-form hybrid rule cannot say which hole
    the last layer's tensors and the logits land in; not with rollback snapshots (n_rs_seq) nor LatentMoE. Equal to
    the printed figure on every setting measured (tests/test_llamacpp_real_shapes.py).

    Llama and Qwen3 (compute_graphs.deci_graph) and Qwen3-MoE (compute_graphs.qwen3moe_graph), LLAMA_CPU_REPLAYED
    where _plain_llama holds, with a quantized cache's rotations and any number of KV streams (the worst-case ubatch
    of one sequence a stream, T rounded up to a multiple of them); Gemma 2 / 3, gpt-oss and DeepSeek-V2 / V3 by
    their own replays (gemma_cpu_bytes, gpt_oss_cpu_bytes, deepseek2_cpu_bytes). Each equal to the printed figure
    on every setting of the ground-truth grid (tests/test_groundtruth_llamacpp.py COMPUTE_EQUAL)."""
    if spec.architecture in GDN_CPU_REPLAYED:
        return gdn_cpu_bytes(spec, ctx, caches, s)
    if spec.architecture in GPT_OSS_GRAPHS:
        return gpt_oss_cpu_bytes(spec, ctx, caches, s)
    if spec.architecture in DEEPSEEK2_DEVICE_GRAPHS:
        return deepseek2_cpu_bytes(spec, ctx, caches, s)
    if spec.architecture in GEMMA_CPU_REPLAYED:
        return gemma_cpu_bytes(spec, ctx, caches, s)
    hybrid = compute_graphs.HYBRID_CPU_GRAPHS.get(spec.architecture)
    build = compute_graphs.DENSE_CPU_GRAPHS.get(spec.architecture) or hybrid
    rotated = spec.architecture in compute_graphs.DENSE_CPU_ROTATED
    if spec.architecture in LLAMA_CPU_REPLAYED and not _plain_llama(spec):
        return None
    if build is None or (ctx.type_k.quantized or ctx.type_v.quantized) and not rotated \
            or ctx.n_stream != 1 and not (hybrid or spec.architecture in LLAMA_CPU_REPLAYED) \
            or not ERAS.reached(ctx.build, "kq_mask_f16") \
            or any(c.name == "SWA" for c in caches) or s.override_tensor or not spec.trunk_layers \
            or hybrid and (ctx.n_rs_seq or any(la.ffn.n_embd_latent for la in spec.trunk_layers)):
        return None
    # the worst-case ubatch of one sequence a KV stream (_stream_ubatch), KQ and the masks a stream's cells over
    # every stream's tokens
    T = _stream_ubatch(ctx) if not hybrid else min(ctx.n_ctx, ctx.n_ubatch)
    masks = sum(_mask_bytes(c.cells, T, ctx.flash_attn) for c in caches)
    if not rotated:
        return _replayed(build, spec, T, reserved_outputs(ctx, s), masks, ctx.flash_attn)
    k_rot, v_rot = _rotations(spec, ctx)
    if hybrid:
        # the worst-case ubatch: n_seq_max sequences of equal length (recurrent_phase), T / n_seq_max tokens each
        # rounded up (the reserve's ubatch: 513 tokens for 512 in 3 sequences, the masks 171 rows per stream, out_ids
        # still 512: the GGML_SCHED_DEBUG dump of the binding's reserve on the jamba file at 16K x 3)
        n_seqs = max(1, min(ctx.n_seq_max, T))
        t_eff = round_up(T, n_seqs)
        masks = masks // T * t_eff
        if build is compute_graphs.granite_hybrid_graph:  # RoPE unless the file says otherwise (ModelSpec)
            return _replayed(build, spec, t_eff, reserved_outputs(ctx, s), masks, ctx.flash_attn, k_rot, v_rot,
                             n_seqs, spec.rope_finetuned is not False)
        return _replayed(build, spec, t_eff, reserved_outputs(ctx, s), masks, ctx.flash_attn, k_rot, v_rot, n_seqs)
    return _replayed(build, spec, T, reserved_outputs(ctx, s), masks, ctx.flash_attn, k_rot, v_rot)


def gpt_oss_cpu_bytes(spec: ModelSpec, ctx: Context, caches: list[Cache], s: LlamaCppSettings) -> int | None:
    """The CPU compute buffer of gpt-oss run on the CPU alone: compute_graphs.gpt_oss_graph (src/models/openai-moe.cpp
    at llama.cpp@0c1e57098) replayed through ggml-alloc with its iSWA caches' masks (F16 with flash attention, F32
    without: a stream's cells x the ubatch's tokens, every stream), a quantized cache's rotations per cache. The
    closed-form phases miss where the sliding-window layers' smaller scores leave holes the full layers' blocks and
    the logits do not fit: gpt-oss-20b's 4-layer file through llama-cpp-python 0.3.36 prints 414.40 MiB at -c 4096
    (the phases 404.00), 434.01 at -np 4 without flash attention (404.00), 1731.09 at -ub 2048 (1616.00); the
    replay equals each. None where it does not hold: tensor overrides, a build before the F16 mask (kq_mask_f16), a
    layer without attention or experts, an output layer not last."""
    trunk = spec.trunk_layers
    if s.override_tensor or not trunk or not ERAS.reached(ctx.build, "kq_mask_f16") \
            or any(la.attention is None or not la.ffn.is_moe for la in trunk) or trunk[-1].index != len(trunk) - 1:
        return None
    T = _stream_ubatch(ctx)
    k_rot, v_rot = _rotations(spec, ctx)
    return _replayed(compute_graphs.gpt_oss_graph, spec, T, reserved_outputs(ctx, s),
                     _iswa_caches(caches, T, ctx.flash_attn), ctx.flash_attn, k_rot, v_rot)


# src/models/gemma2-iswa.cpp and gemma3.cpp, replayed by compute_graphs.gemma_graph (gemma_cpu_bytes)
GEMMA_CPU_REPLAYED = frozenset({"gemma2", "gemma3"})


def gemma_cpu_bytes(spec: ModelSpec, ctx: Context, caches: list[Cache], s: LlamaCppSettings) -> int | None:
    """The CPU compute buffer of Gemma 2 / Gemma 3 (the text model) run on the CPU alone: compute_graphs.gemma_graph
    replayed through ggml-alloc with its iSWA caches' masks and the worst-case ubatch of one sequence a KV stream
    (_stream_ubatch), a quantized cache's rotations per cache. The closed-form phases miss where the logits land
    without flash attention: the gemma-3-12b file through llama-cpp-python 0.3.36 prints 534.50 MiB at -c 4096
    (527.00 by them), the gemma-2-9b file 521.00 at -np 4 (514.00). None where it does not hold: tensor overrides, a
    build before the F16 mask (kq_mask_f16), a layer without attention or without a dense FFN, an output layer not
    last."""
    trunk = spec.trunk_layers
    names = {t.name for t in spec.weights.tensors}
    if s.override_tensor or not trunk or not ERAS.reached(ctx.build, "kq_mask_f16") \
            or trunk[-1].index != len(trunk) - 1 \
            or any(la.attention is None or la.ffn.is_moe or f"blk.{la.index}.ffn_down.weight" not in names
                   for la in trunk):
        return None
    T = _stream_ubatch(ctx)
    k_rot, v_rot = _rotations(spec, ctx)
    return _replayed(compute_graphs.gemma_graph, spec, T, reserved_outputs(ctx, s),
                     _iswa_caches(caches, T, ctx.flash_attn), ctx.flash_attn, k_rot, v_rot)


def deepseek2_cpu_bytes(spec: ModelSpec, ctx: Context, caches: list[Cache], s: LlamaCppSettings) -> int | None:
    """The CPU compute buffer of DeepSeek-V2 / V3 (src/models/deepseek2.cpp at llama.cpp@0c1e57098) run on the CPU
    alone: compute_graphs.deepseek2_device_graph as the CPU backend is handed it (cpu=True: the leafs first, no
    split), replayed through ggml-alloc with the worst-case ubatch of one sequence a KV stream; absorbed MLA (the
    latent cache: no rotations, V the latent's view) with or without flash attention, or the legacy decompressed
    heads (attn_kv_b) with either, a quantized cache's rotations included. The closed-form phases put the last
    layer's blocks and the logits a few MiB off: the deepseek-v3 4-layer file through llama-cpp-python 0.3.36 prints
    412.01 MiB at -c 4096 (the phases 418.00), the legacy one 300.01 (294.50) and 1186.03 with a q8_0 K cache
    without flash attention (1250.00), 463.01 at -np 4 without it (476.00); the replay equals each. None where it
    does not hold: tensor overrides, a build before the F16 mask (kq_mask_f16), an MoE layer without a shared
    expert or without the sigmoid router's score bias (exp_probs_b: V2's softmax router), an output layer not last,
    more than one cache, MLA's quantized latent without flash attention. Expert groups (expert_group_count 8, 4 used,
    as DeepSeek-V3's GGUFs carry them) change nothing: equal on the grouped file too."""
    trunk = spec.trunk_layers
    if s.override_tensor or not trunk or not ERAS.reached(ctx.build, "kq_mask_f16") \
            or trunk[-1].index != len(trunk) - 1 or any(la.attention is None for la in trunk) \
            or any(la.ffn.is_moe and not la.ffn.n_ff_shared for la in trunk) or len(caches) != 1:
        return None
    # the sigmoid router with its score bias (DeepSeek-V3's layout; V2's softmax router has none)
    biased = {t.layer for t in spec.weights.tensors if t.name.endswith(".exp_probs_b.bias")}
    if any(la.ffn.is_moe and la.index not in biased for la in trunk):
        return None
    a0 = trunk[0].attention
    if not a0.kv_lora_rank:
        return None
    mla = bool(a0.latent_cache)
    if mla and not ctx.flash_attn and ctx.type_k.quantized:
        return None
    T = _stream_ubatch(ctx)
    n_kv = caches[0].cells  # a stream's: KQ and the mask over every stream's tokens
    masks = _mask_bytes(n_kv, T, ctx.flash_attn)
    attn = "fa" if ctx.flash_attn else "kq"
    k_rot, v_rot = (0, 0) if mla else _rotations(spec, ctx)
    return _replayed(compute_graphs.deepseek2_device_graph, spec, T, reserved_outputs(ctx, s), n_kv, masks, attn, 0,
                     k_rot, v_rot, cpu=True, k_es=ctx.type_k.type_size)


# the llama.cpp-derived dense graphs compute_graphs.deci_graph replays for (dense_cpu_bytes): src/models/llama.cpp,
# src/models/qwen3.cpp (its Q / K norms)
LLAMA_CPU_REPLAYED = frozenset({"llama", "qwen3", "qwen3moe"})


def _plain_llama(spec: ModelSpec) -> bool:
    """Whether a llama / qwen3 file has the graph deci_graph mirrors (every layer attends, dense FFNs: Mixtral's
    llama-arch experts not), a qwen3moe file qwen3moe_graph's (every layer's FFN routed experts, no shared ones);
    no projection biases (build_qkv's and build_ffn's ADDs not modelled)."""
    moe = spec.architecture == "qwen3moe"
    return all(la.attention is not None and la.attention.n_heads
               and (la.ffn.is_moe and not la.ffn.n_ff_shared if moe else not la.ffn.is_moe and la.ffn.n_ff)
               for la in spec.trunk_layers) \
        and not any(t.name.endswith(".bias") for t in spec.weights.tensors if t.layer is not None)


# the gated delta net hybrids whose CPU graph sched_replay.qwen35_graph rebuilds (dense_cpu_bytes)
GDN_CPU_REPLAYED = frozenset({"qwen35", "qwen35moe", "qwen3next"})


def gdn_cpu_bytes(spec: ModelSpec, ctx: Context, caches: list[Cache], s: LlamaCppSettings) -> int | None:
    """The CPU compute buffer of Qwen3.5 / 3.6 (qwen35, qwen35moe) and Qwen3-Next (qwen3next) run on the CPU alone:
    sched_replay.qwen35_graph (src/models/qwen35.cpp, qwen35moe.cpp, qwen3next.cpp at llama.cpp@0c1e57098: the fused
    gated delta net of delta-net-base.cpp, qwen3next's ssm_ba split and q / k repeated to the value heads, the MoE
    FFN of build_moe_ffn with the sigmoid-gated shared expert) lowered as the CPU backend hands it to ggml-alloc
    (sched_replay.host_nodes) and replayed through galloc: the worst-case ubatch's n_seq_max sequences, T rounded up
    to a multiple of them (graph_reserve), the masks and attention per KV stream, a quantized cache's rotations. The
    closed-form phases miss where the logits land beside the freed mask block and the last layer's holes.
    Checked node for node against the graph llama-cpp-python 0.3.36 hands to ggml_gallocr_reserve_n
    (tests/groundtruth/gallocr_dump.c) and equal to its printed figures on the published shapes
    (tests/test_llamacpp_real_shapes.py GDN_GRID); None where it does not hold: rollback snapshots (n_rs_seq), a
    sliding-window cache, tensor overrides, an older build's graph (QWEN35_REPLAY_BUILD), a layer neither attention
    nor a gated delta net, the MTP context's view (mtp.nextn_view: its own graph_mtp)."""
    trunk = spec.trunk_layers
    if ctx.n_rs_seq or len(caches) != 1 or ctx.build < QWEN35_REPLAY_BUILD or s.override_tensor or not trunk \
            or trunk[-1].index != len(trunk) - 1 \
            or not ERAS.reached(ctx.build, "kq_mask_f16") \
            or any((la.attention is None) == (la.recurrent is None) for la in trunk) \
            or any(la.recurrent is not None and (la.recurrent.kind != "gated_delta_net" or not la.recurrent.n_group)
                   for la in trunk) \
            or spec.attention_free:
        return None
    T = min(ctx.n_ctx, ctx.n_ubatch)
    n_seqs = max(1, min(ctx.n_seq_max, T))
    t_eff = round_up(T, n_seqs)
    k_rot, v_rot = _rotations(spec, ctx)
    kt, vt = _cache_types(ctx)
    n_outputs = reserved_outputs(ctx, s)
    g = sched_replay.qwen35_graph(spec, t_eff, n_outputs, caches[0].cells, {}, set(), ctx.flash_attn, kt, vt,
                                  math.isqrt(k_rot // 4), math.isqrt(v_rot // 4), False, 0, n_seqs, ctx.n_stream)
    return galloc.peak_bytes(*sched_replay.host_nodes(g, spec.n_embd, t_eff))


def mamba2_offload_device_bytes(spec: ModelSpec, ctx: Context, placement: Placement, devices: tuple[Device, ...],
                                s: LlamaCppSettings) -> int | None:
    """The compute buffer of the one ggml-cuda device that runs a partly offloaded Mamba-2 model's pp graph
    (compute_graphs.mamba2_offload_graph, replayed through ggml-alloc): the first layers left on the CPU run on the
    device by op offload (ERAS pp_offload, the worst-case ubatch at the offload batch) but for their conv-state stores
    and SSM_SCAN (host_recurrent_stores), so the device's buffer holds their weights' copies, one split at a time,
    and the scan's results copied back, and the logits land above what those splits leave; not monotonic in -ngl.
    Where it holds: one sequence, one device holding the output, Mamba-2 layers only, no tensor overrides; None
    elsewhere. mamba2-2.7b's 4-layer file on an H200 (the graph with no host layer gives the full offload's 108.22 /
    432.88 MiB at -ub 512 / 2048, as measured): CUDA0 113.28 MiB at -ngl 4 (113.28 measured, was 108.22) and 164.37
    at -ngl 2 (164.37; 118.22 before the empty tensors: the extra states' copy and GET_ROWS of no bytes leave an
    empty free block that keeps the space freed above the layer's scan apart from the tail, so the logits (98.22)
    go at 66.15 MiB); held out -ngl 1 103.22 (103.22) and -ngl 3 119.43 (119.43; 118.22 before)."""
    d = placement.output_device
    trunk = spec.trunk_layers
    T = min(ctx.n_ctx, ctx.n_ubatch)
    host_layers = {i for i, dev in enumerate(placement.layer_device) if dev < 0}
    if spec.architecture != "mamba2" or not (host_layers or s.no_kv_offload) or d != 0 or len(devices) != 1 \
            or ctx.n_seq_max != 1 \
            or not ERAS.reached(ctx.build, "pp_offload") or infer_backend(devices, s.backend).name not in _GGML_CUDA \
            or not set(placement.layer_device) <= {-1, d} or _offload_device(devices, s, T) != d \
            or s.override_tensor or s.cpu_moe or s.n_cpu_moe or not trunk \
            or any(la.attention is not None or la.recurrent is None or la.recurrent.kind != "mamba2" for la in trunk) \
            or any(la.index in host_layers and k and trunk[k - 1].index not in host_layers for k, la in enumerate(trunk)):
        return None
    host = _host_weights(spec, devices, s, placement, host_layers)
    if s.no_kv_offload:  # the states on the host (-nkvo): their stores scheduled (sched_replay, 115.72 MiB exact)
        return sched_replay.device_peak(sched_replay.mamba2_graph(spec, T, reserved_outputs(ctx, s), host, host_layers,
                                                                  True), CUDA_ALIGN)
    return _replayed(compute_graphs.mamba2_offload_graph, spec, T, reserved_outputs(ctx, s), host, align=CUDA_ALIGN)


# the fused gated delta net graph sched_replay.qwen35_graph rebuilds (src/models/delta-net-base.cpp
# build_delta_net_fused, cparams.fused_gdn_* never probed) is the newest build's; older builds keep the closed forms
QWEN35_REPLAY_BUILD = int(NEWEST[1:])


def qwen35_device_bytes(spec: ModelSpec, ctx: Context, caches: list[Cache], placement: Placement,
                        devices: tuple[Device, ...], s: LlamaCppSettings, rough: bool = False) -> int | None:
    """The compute buffer of the one ggml-cuda device that runs Qwen3.5's pp graph, its first layers left on the
    CPU or none (sched_replay.qwen35_graph scheduled and allocated as ggml_backend_sched does: the host layers' ops
    run on the device by op offload with their weights copied in, one split at a time, but for the stores into their
    caches, their build_rs gathers and the states' copies; the host attention layer's flash attention reads copies of
    its cache's K and V views and of the mask; the zero-row extra states' copy and GET_ROWS as ggml-alloc places
    them). The peak is the logits' block above h_nextn (an output, never freed) and result_norm, which the last
    layers leave high: 76 / 86 / 104 MiB above the buffer's start at -ngl 4 (4K, 32K) and -ngl 1 (8K) on the
    8-layer qwen3.5-27b file, 20 at -ngl 8, against 20-24 fully offloaded. Also without flash attention
    (llm_graph_context::build_attn_mha's KQ, soft_max and KQV on the transposed V cache, whose indices are
    n_embd_v_gqa per token: llama_kv_cache::build_input_v_idxs / cpy_v), with a quantized cache (the Hadamard
    rotations of llm_graph_context::build_attn, llama_kv_cache::build_input_k_rot / build_input_v_rot, read as
    split inputs; FLASH_ATTN_EXT allocated with its F16 copies of K and V, ggml-cuda.cu
    ggml_backend_cuda_buffer_type_get_alloc_size / fattn.cu ggml_cuda_flash_attn_ext_get_alloc_size) and with
    -nkvo (every KV and recurrent cache on the host: the stores run there, the attention and the delta net on the
    device read copies of the caches' views and states). The lowering is kept by shape
    (sched_replay.device_peak_by_kv), so a context search replays only ggml-alloc. Several sequences: the worst-case
    ubatch's n_seq_max sequences (llama_context::sched_reserve), each recurrent layer's n_seqs states gathered and
    stored, a stream per sequence unless the cache is unified (the mask and the attention per stream:
    build_attn_inp_kq_mask, build_attn_mha). Where it holds: a ubatch that n_seq_max divides, one device holding the
    output, no tensor overrides; None elsewhere. H200 CUDA0 (test_llamacpp_cuda_measured):
    -ngl 4 561.00 / 571.01 MiB at 4K / 32K (561.00 / 571.01 measured, were 505.00), -ngl 8 505.00 (505.00); held
    out -ngl 1 589.00 at 8K (589.00, was 505.00); fully offloaded 509.02 at 4K (509.02, was 505.00), 505.00 at 32K
    and 2052.07 at 8K with -ub 2048 (2052.07, was 0.984 of it); without flash attention 505.00 / 1660.01 at 4K /
    32K (1660.01, was 1658.00), held out -ngl 5 at 8K 509.01 (509.01, was 505.00); q8_0 at 4K 509.28 (509.28, was
    505.00), held out q4_0 at 64K 505.00 (505.00); -nkvo 513.00 (513.00, was 505.00); -np 4 unified at 32K 505.00
    (505.00); held out -np 2 at 16K -ub 1024 1026.04 (1026.04, was 1010.00)."""
    run = _OneDevice.of(spec, ctx, placement)
    d, trunk, T, host_layers = run
    # a layout that cannot fit whatever its compute buffer, weighed only for that (layout.estimate's `rough`): the
    # closed forms stand in for a lowering of its own (two builds of the whole graph)
    if rough and host_layers:
        return None
    if spec.architecture != "qwen35" or run.refused(ctx, placement, devices, s) or T % max(1, ctx.n_seq_max) \
            or ctx.n_rs_seq or len(caches) != 1 \
            or (not ctx.flash_attn and (ctx.type_v.quantized or ctx.type_k.quantized)) \
            or s.no_kv_offload and _offload_device(devices, s, T) != d \
            or not trunk or spec.trunk_layers[-1].attention is None \
            or any((la.attention is None) == (la.recurrent is None) or la.ffn.n_experts for la in trunk) \
            or any(la.recurrent is not None and (la.recurrent.kind != "gated_delta_net" or not la.recurrent.n_group)
                   for la in trunk) \
            or any(la.attention is not None and ctx.flash_attn and not cuda_fa_supported(la.attention, ctx)
                   for la in trunk):
        return None
    host = _host_weights(spec, devices, s, placement, host_layers)
    k_rot, v_rot = _rotations(spec, ctx)
    a = next(la.attention for la in trunk if la.attention is not None)
    fa16 = cuda_fa_f16_copies(ctx, devices, s)
    n_outputs = reserved_outputs(ctx, s)
    kt, vt = _cache_types(ctx)

    def build(n_kv: int) -> sched_replay.Graph:
        return sched_replay.qwen35_graph(spec, T, n_outputs, n_kv, host, host_layers, ctx.flash_attn, kt, vt,
                                         math.isqrt(k_rot // 4), math.isqrt(v_rot // 4), s.no_kv_offload,
                                         fa_f16_bytes(a, n_kv, T, ctx) if fa16 else 0, max(1, ctx.n_seq_max),
                                         ctx.n_stream)

    # the graph reads the spec's shapes only (a quantization of the same model gives the same lowering)
    shape = (spec.n_embd, spec.n_vocab, tuple((la.index, la.attention, la.recurrent, la.ffn.n_ff) for la in trunk))
    key = (shape, T, n_outputs, frozenset(host_layers), frozenset(host), ctx.flash_attn, kt, vt, k_rot, v_rot,
           s.no_kv_offload, fa16, ctx.n_seq_max, ctx.n_stream)
    return _cuda_device_peak(key, build, caches[0].cells, host, not fa16 or _f16_copies_affine([a]))


# the iSWA graphs sched_replay rebuilds for a ggml-cuda device, by architecture: their layers' FFN (dense or MoE)
ISWA_DEVICE_GRAPHS = {"gemma2": False, "gemma3": False, "llama4": True}


def iswa_device_bytes(spec: ModelSpec, ctx: Context, caches: list[Cache], placement: Placement,
                      devices: tuple[Device, ...], s: LlamaCppSettings, rough: bool = False) -> int | None:
    """The compute buffer of the one ggml-cuda device that holds the output layer of Gemma 2, Gemma 3 or Llama 4,
    their other layers on it or left on the CPU (sched_replay.gemma2_graph / llama4_graph scheduled and allocated as
    ggml_backend_sched does, as qwen35_device_bytes: the host layers' products run on the device by op offload, one
    weight copy a split, their K / V stores on the CPU, their attention on the device reading copies of their
    cache's views and masks). With the repeating layers on the CPU the logits land above what the last host
    layer's splits leave (a weight copy and the FFN's rows), where the closed forms put them at the buffer's start.
    H200 (tests/fixtures/llamacpp_cuda): the gemma-2-9b 4-layer file at -ngl 1, -c 8192: CUDA0 569.56 MiB measured,
    514.00 by the closed forms (0.902); the gemma-3-12b 12-layer file 519.50 measured, 527.00 by them (all 17 rows
    exact by the replay, 4 held out). Where it holds: the caches on the CPU with -nkvo and flash attention, every
    layer on the device or the CPU, no tensor overrides, the newest build's graph (QWEN35_REPLAY_BUILD); Gemma 2 / 3
    in one KV stream or one a sequence (held out: -np 2 at -ub 1024, exact) with an F16 cache, or a quantized one with flash
    attention (its rotations and F16 copies, as llama_device_bytes); Llama 4 in one KV stream with an F16 cache and
    every layer's FFN an MoE of one shared expert; None elsewhere."""
    run = _OneDevice.of(spec, ctx, placement)
    d, trunk, T, host_layers = run
    if rough and host_layers:
        return None
    names = {t.name for t in spec.weights.tensors}
    moe = ISWA_DEVICE_GRAPHS.get(spec.architecture)
    if moe is None or run.refused(ctx, placement, devices, s) or moe and ctx.n_stream != 1 \
            or T % max(1, ctx.n_seq_max, ctx.n_stream) or s.no_kv_offload and not ctx.flash_attn or ctx.n_rs_seq \
            or (ctx.type_k.type_size != 2 or ctx.type_v.type_size != 2) and (moe or not ctx.flash_attn) \
            or ctx.type_k.name == "f32" or ctx.type_v.name == "f32" or not trunk or trunk[-1].index != len(trunk) - 1 \
            or any(la.attention is None for la in trunk) \
            or any(ctx.flash_attn and not cuda_fa_supported(la.attention, ctx) for la in trunk):
        return None
    if moe and any(not la.ffn.is_moe or not la.ffn.n_ff_shared or not la.ffn.n_ff_expert for la in trunk) \
            or not moe and any(la.ffn.is_moe or f"blk.{la.index}.ffn_down.weight" not in names for la in trunk):
        return None
    host = _host_weights(spec, devices, s, placement, host_layers)
    iswa = [(layers, cells) for layers, cells, _ in _iswa_caches(caches, T, ctx.flash_attn)]
    n_outputs = reserved_outputs(ctx, s)
    # the lowering kept by shape (sched_replay.device_peak_by_kv) over the base (non-SWA) cache's cells, which follow
    # the context; the SWA cache's (n_swa + n_ubatch, padded: llama_kv_cache_iswa) are fixed once the context is
    # larger, and go in the key with everything else the graph reads
    base = [i for i, (layers, _) in enumerate(iswa)
            if any(c.name != "SWA" and tuple(c.layers) == layers for c in caches)]
    vary = base[0] if len(base) == 1 else -1

    def with_cells(n_kv: int) -> list[tuple[tuple[int, ...], int]]:
        return [(layers, n_kv if i == vary else cells) for i, (layers, cells) in enumerate(iswa)]

    shape = (spec.architecture, spec.n_embd, spec.n_vocab,
             tuple((la.index, la.attention, la.ffn) for la in trunk))
    fixed = tuple((layers, None if i == vary else cells) for i, (layers, cells) in enumerate(iswa))
    n_kv = iswa[vary][1] if vary >= 0 else 0
    if moe:
        def build4(n_kv: int) -> sched_replay.Graph:
            return sched_replay.llama4_graph(spec, T, n_outputs, with_cells(n_kv), host, host_layers, ctx.flash_attn,
                                             s.no_kv_offload)

        key = ("llama4", shape, T, n_outputs, fixed, frozenset(host_layers), frozenset(host), ctx.flash_attn,
               s.no_kv_offload)
        return _cuda_device_peak(key, build4, n_kv, host, vary >= 0)
    k_rot, v_rot = _rotations(spec, ctx)  # Gemma 2 with a quantized cache: its rotations and F16 copies too
    fa16 = cuda_fa_f16_copies(ctx, devices, s)
    kt, vt = _cache_types(ctx)

    def build(n_kv: int) -> sched_replay.Graph:
        cells = {il: c for layers, c in with_cells(n_kv) for il in layers}
        extra = {la.index: fa_f16_bytes(la.attention, cells[la.index], T, ctx) for la in trunk} if fa16 else {}
        return sched_replay.gemma2_graph(spec, T, n_outputs, with_cells(n_kv), host, host_layers, ctx.flash_attn,
                                         s.no_kv_offload, kt, vt, math.isqrt(k_rot // 4), math.isqrt(v_rot // 4),
                                         extra, spec.architecture == "gemma3", ctx.n_stream)

    key = ("gemma2", shape, T, n_outputs, fixed, frozenset(host_layers), frozenset(host), ctx.flash_attn,
           s.no_kv_offload, kt, vt, k_rot, v_rot, fa16, ctx.n_stream)
    return _cuda_device_peak(key, build, n_kv, host,
                             vary >= 0 and (not fa16 or _f16_copies_affine([la.attention for la in trunk])))


def gemma3n_device_bytes(spec: ModelSpec, ctx: Context, caches: list[Cache], placement: Placement,
                         devices: tuple[Device, ...], s: LlamaCppSettings, rough: bool = False) -> int | None:
    """The compute buffer of the one ggml-cuda device that holds the output layer of Gemma 3n, its other layers on it
    or left on the CPU (sched_replay.gemma3n_graph scheduled and allocated as ggml_backend_sched does, as
    iswa_device_bytes; per_layer_model_proj and its norm with layer 0, weights.LAYER0_TENSORS). compute_graphs'
    gemma3n_graph(device=True) puts the host's two GET_ROWS ahead of the split by a rule and left the measured rows
    off (H200, the E2B-shaped 25-layer file at -c 8192: 516.00 MiB for 548.00 without flash attention, 520.00 for
    536.00 at -ngl 12); the replay equals all four rows (held out) and, at -ngl 12, the 368 splits and 2341 nodes
    llama.cpp prints for the pp graph. Where it holds: gemma3n_replayed's graph, one KV stream, an F16 cache (on the CPU with -nkvo
    and flash attention), every layer on the device or the CPU, no tensor overrides, the newest build's graph
    (QWEN35_REPLAY_BUILD); None elsewhere."""
    run = _OneDevice.of(spec, ctx, placement)
    d, trunk, T, host_layers = run
    if rough and host_layers:
        return None
    if not gemma3n_replayed(spec, ctx) or run.refused(ctx, placement, devices, s) or ctx.n_stream != 1 \
            or T % max(1, ctx.n_seq_max) or s.no_kv_offload and not ctx.flash_attn or ctx.n_rs_seq \
            or ctx.type_k.name != "f16" or ctx.type_v.name != "f16" or trunk[-1].index != len(trunk) - 1 \
            or any(ctx.flash_attn and not cuda_fa_supported(la.attention, ctx) for la in trunk):
        return None
    host = {t.name: gpu_alloc_size(t) for t in model_buffers(spec, devices, s, placement).cpu_tensors
            if t.layer in host_layers or 0 in host_layers and t.name.startswith(LAYER0_TENSORS)}
    iswa = [(layers, cells) for layers, cells, _ in _iswa_caches(caches, T, ctx.flash_attn)]
    cells = {il: c for layers, c in iswa for il in layers}
    extra = {la.index: fa_f16_bytes(la.attention, cells[la.kv_source if la.kv_source is not None else la.index], T,
                                    ctx) for la in trunk} if cuda_fa_f16_copies(ctx, devices, s) else {}
    g = sched_replay.gemma3n_graph(spec, T, reserved_outputs(ctx, s), iswa, host, host_layers, ctx.flash_attn,
                                   s.no_kv_offload, extra)
    return sched_replay.device_peak(g, CUDA_ALIGN)


# the dense one-cache graphs sched_replay.llama_graph rebuilds for a ggml-cuda device: whether Q and K are RMS-normed
# by a weight before RoPE (src/models/qwen3.cpp), and the FFN norm's tensor (src/models/seed-oss.cpp: attn_post_norm,
# the llama graph's ffn_norm otherwise)
LLAMA_DEVICE_GRAPHS = {"llama": (False, "ffn_norm"), "qwen3": (True, "ffn_norm"),
                       "seed_oss": (False, "post_attention_norm"),
                       # minimax-m2.cpp: Q and K normed over all heads ("rows"), every FFN an MoE with
                       # exp_probs_b (MiniMax-M2's expert_gating_func 2, SIGMOID; a softmax router is the same
                       # op count and sizes), no shared expert, no expert_weights_scale (routed_scaling_factor 1)
                       "minimax-m2": ("rows", "ffn_norm")}
_QKV_BIASES = (".attn_q.bias", ".attn_k.bias", ".attn_v.bias")  # build_qkv's, which llama_graph adds


# per spec: whether its tensors are llama_graph's (llama_device_bytes' checks on the file's names) and the names the
# graph's shape reads (rope_freqs, the Q / K / V biases); the names walked once per model, not once per dry run
_LLAMA_NAMES = ByObject[tuple[bool, Hashable]](64)


def _llama_names(spec: ModelSpec, qk_norm: bool | str) -> tuple[bool, Hashable]:
    trunk = spec.trunk_layers
    names = {t.name for t in spec.weights.tensors}
    biases = _QKV_BIASES + ((".exp_probs_b.bias",) if qk_norm == "rows" else ())  # the MoE's selection bias
    bad = not trunk or trunk[-1].index != len(trunk) - 1 \
        or any(n.startswith("blk.") and (n.endswith(".bias") and not n.endswith(biases) or ".attn_qkv." in n)
               for n in names) \
        or any(la.attention is None or la.attention.window or la.attention.kv_lora_rank for la in trunk) \
        or qk_norm != "rows" and any(la.ffn.is_moe or f"blk.{la.index}.ffn_down.weight" not in names
                                     for la in trunk) \
        or qk_norm == "rows" and any(not la.ffn.n_experts or la.ffn.n_ff_shared or not la.ffn.n_ff_expert
                                     or f"blk.{la.index}.exp_probs_b.bias" not in names for la in trunk) \
        or qk_norm and any(f"blk.{la.index}.attn_q_norm.weight" not in names for la in trunk) \
        or not qk_norm and any(f"blk.{la.index}.attn_q_norm.weight" in names for la in trunk)
    return not bad, ("rope_freqs.weight" in names, frozenset(n for n in names if n.endswith(_QKV_BIASES)))


def llama_device_bytes(spec: ModelSpec, ctx: Context, caches: list[Cache], placement: Placement,
                       devices: tuple[Device, ...], s: LlamaCppSettings, rough: bool = False) -> int | None:
    """The compute buffer of the one ggml-cuda device that holds the output layer of a dense Llama, Qwen3 or Seed-OSS,
    or of MiniMax-M2 (its sigmoid-gated experts with ggml-cuda's fusion dependencies: the minimax-m2 2-layer file,
    held out, 402.75 MiB by the closed forms for 396.75 measured, 758.00 for 742.12 at -ngl 1; all 4 rows exact by
    the replay), their other layers on it or left on the CPU (sched_replay.llama_graph scheduled and allocated as ggml_backend_sched
    does, as iswa_device_bytes). The closed forms count the CPU graph's placement, a hidden-state row block more
    than the device's (H200, tests/fixtures/llamacpp_cuda: the llama-3.1-8b 4-layer file fully offloaded 258.50 MiB
    measured, 266.50 by them; -ub 2048 1034.00, 1066.00). A quantized cache with its Hadamard rotations
    (_rotations) and, with flash attention, ggml-cuda's F16 copies of K and V behind each output (fa_f16_bytes).
    Where it holds: one KV cache (on the CPU with -nkvo and flash attention), one stream or one a sequence, an F16
    cache without flash attention, every layer's attention and FFN dense and without biases but Q, K and V's
    (Seed-OSS's: the seed_oss 2-layer file 313.00 MiB measured, 323.00 by the closed forms; its 4 rows, all held
    out, exact by the replay), every layer on the
    device or the CPU, no tensor overrides, the newest build's graph (QWEN35_REPLAY_BUILD); None elsewhere."""
    run = _OneDevice.of(spec, ctx, placement)
    d, trunk, T, host_layers = run
    if rough and host_layers:
        return None
    qk_norm, ffn_norm = LLAMA_DEVICE_GRAPHS.get(spec.architecture, (None, ""))
    if qk_norm is None:
        return None
    names_ok, names_shape = _LLAMA_NAMES.get(spec, qk_norm, lambda: _llama_names(spec, qk_norm))
    if not names_ok or run.refused(ctx, placement, devices, s) or T % max(1, ctx.n_seq_max, ctx.n_stream) \
            or len(caches) != 1 or caches[0].name == "SWA" or s.no_kv_offload and not ctx.flash_attn or ctx.n_rs_seq \
            or not ctx.flash_attn and (ctx.type_k.type_size != 2 or ctx.type_v.type_size != 2) \
            or ctx.type_k.name == "f32" or ctx.type_v.name == "f32" \
            or any(ctx.flash_attn and not cuda_fa_supported(la.attention, ctx) for la in trunk):
        return None
    host = _host_weights(spec, devices, s, placement, host_layers)
    n_outputs = reserved_outputs(ctx, s)
    k_rot, v_rot = _rotations(spec, ctx)
    kt, vt = _cache_types(ctx)
    a = trunk[0].attention
    fa16 = cuda_fa_f16_copies(ctx, devices, s)
    deps = cuda_fusion_deps(ctx, devices, s)

    def build(n_kv: int) -> sched_replay.Graph:
        return sched_replay.llama_graph(spec, T, n_outputs, n_kv, host, host_layers, ctx.flash_attn, s.no_kv_offload,
                                        qk_norm, kt, vt, math.isqrt(k_rot // 4), math.isqrt(v_rot // 4),
                                        fa_f16_bytes(a, n_kv, T, ctx) if fa16 else 0, ctx.n_stream, ffn_norm, deps)

    shape = (spec.architecture, spec.n_embd, spec.n_vocab, *names_shape,
             tuple((la.index, la.attention, la.ffn.n_ff) for la in trunk))
    key = ("llama", shape, T, n_outputs, frozenset(host_layers), frozenset(host), ctx.flash_attn, s.no_kv_offload,
           kt, vt, k_rot, v_rot, fa16, ctx.n_stream, deps)
    return _cuda_device_peak(key, build, caches[0].cells, host, not fa16 or _f16_copies_affine([a]))


# ggml-metal's supports_op answers no to these ops on a device without simdgroup reduction (ggml/src/ggml-metal/
# ggml-metal.m ggml_metal_supports_op, the same from ggml-org/llama.cpp@de4c07f9 to @e54d41be, the sources Ollama
# vendored before and after b5920: SUM_ROWS, MEAN, SOFT_MAX, GROUP_NORM, RMS_NORM, L2_NORM, NORM, MUL_MAT and
# MUL_MAT_ID all `return has_simdgroup_reduction && ...`); has_simdgroup_reduction is supportsFamily Apple7 or Metal3
# (ggml_backend_metal_device_acq)
METAL_SIMDGROUP_REDUCTION_OPS = frozenset({"SUM_ROWS", "MEAN", "SOFT_MAX", "GROUP_NORM", "RMS_NORM", "L2_NORM", "NORM",
                                           "MUL_MAT", "MUL_MAT_ID"})


def metal_simdgroup_reduction(device: Device) -> bool:
    """Whether ggml-metal finds simdgroup reduction on the device. The macOS virtual machine's GPU (GitHub Actions'
    hosted runners) is named "Apple Paravirtual device" and reports MTLGPUFamilyCommon3 alone, neither Apple7 nor
    Metal3: 'simdgroup reduction support = false' in its ggml_metal_init lines (ggml-org/llama.cpp#8617). Every
    other name: true (Apple silicon is Apple7 or later; the Intel and AMD Macs' GPUs are not told apart here)."""
    return "paravirtual" not in device.name.lower()


def metal_simdgroup_mm(device: Device) -> bool:
    """Whether ggml-metal finds simdgroup matrix multiplication on the device (has_simdgroup_mm: supportsFamily
    MTLGPUFamilyApple7, ggml_metal_device_init / ggml_backend_metal_device_acq). Its supports_op ends the
    GGML_OP_FLASH_ATTN_EXT case with `return has_simdgroup_mm;` (ggml-metal.m ggml_metal_supports_op from the op's
    first Metal kernels, ggml-metal-device.m ggml_metal_device_supports_op to llama.cpp@0c1e57098), so under -fa auto
    (ERAS fa_auto) llama_context's check finds the op on the CPU and turns flash attention off
    (device_auto_fa_off). The macOS VM's GPU reports MTLGPUFamilyCommon3 alone (llama.cpp#8617), not Apple7: false.
    Every other name: true, as metal_simdgroup_reduction (the Intel and AMD Macs' GPUs, also without Apple7, are
    not told apart here)."""
    return metal_simdgroup_reduction(device)


def _whole_dense_llama_on_device0(spec: ModelSpec, ctx: Context, caches: list[Cache], placement: Placement,
                                  s: LlamaCppSettings) -> tuple[str, str] | None:
    """(qk_norm, ffn_norm) of sched_replay.llama_graph where a dense Llama or Qwen3 graph runs wholly on device 0
    (every layer and the output) with one F16 cache, one stream, no recurrent state, no tensor overrides and the
    cache on the device: the graph the refused-op replays below rebuild; None elsewhere."""
    qk_norm, ffn_norm = LLAMA_DEVICE_GRAPHS.get(spec.architecture, (None, ""))
    if qk_norm is None or qk_norm == "rows" or placement.output_device != 0 or set(placement.layer_device) != {0}:
        return None
    names_ok, _ = _LLAMA_NAMES.get(spec, qk_norm, lambda: _llama_names(spec, qk_norm))
    if not names_ok or len(caches) != 1 or caches[0].name == "SWA" or ctx.n_stream != 1 or ctx.n_rs_seq \
            or ctx.type_k.name != "f16" or ctx.type_v.name != "f16" or _tensor_overrides(s) or s.no_kv_offload:
        return None
    return qk_norm, ffn_norm


def metal_no_simdgroup_bytes(spec: ModelSpec, ctx: Context, caches: list[Cache], placement: Placement,
                             devices: tuple[Device, ...], s: LlamaCppSettings) -> tuple[int, int] | None:
    """(the Metal buffer, the CPU's) for a dense Llama or Qwen3 graph on one Metal device without simdgroup
    reduction (metal_simdgroup_reduction): every product, norm and softmax runs on the CPU backend
    (METAL_SIMDGROUP_REDUCTION_OPS; ggml_backend_sched_backend_from_buffer sends an op reading a Metal weight to the
    first backend that takes both the op and the weight's buffer, the CPU, whose supports_buft takes Metal's host
    buffer type; the expansions leave those ops unassigned and pass 3 gives them to the CPU), which reads the Metal
    tensors in place; Metal keeps the elementwise ops, RoPE and the stores, with copies of the CPU results they read.
    Scheduled and allocated as ggml_backend_sched does (sched_replay.llama_graph with Graph.refused; before ERAS
    set_rows, b5920's ggml_cpy stores and build_attn's order: the K store, the V store, then the attention). The
    KQ scores of the whole ubatch (n_kv x T x n_head F32) are the CPU's. llama.cpp#14829 (b5920, a GitHub Actions
    macOS runner, Qwen3-Embedding-8B with --embedding, -c 20480, 2048-token ubatch, no flash attention): Metal
    104.01 / CPU 5344.02 MiB printed, both to the 0.01 MiB (760 graph splits printed, 579 here: the graph's
    op count differs, 1483 nodes printed against 1374, the buffers do not). Where it holds: every layer and the
    output on the one Metal device, one F16 cache, one stream, no flash attention (its FLASH_ATTN_EXT also needs
    simdgroup matrix multiplication), no tensor overrides; None elsewhere. Later builds only through the same
    graph as the ggml-cuda replays (SET_ROWS stores; since ERAS embd_input the embeddings input on the CPU): not
    measured."""
    # -fa auto turned off (device_auto_fa_off: FLASH_ATTN_EXT refused too) leaves V untransposed in the cache, and
    # build_attn_mha's ggml_cont(ggml_transpose(v)) per layer is not in this replay: not modelled
    if len(devices) != 1 or infer_backend(devices, s.backend).name != "metal" \
            or metal_simdgroup_reduction(devices[0]) or ctx.flash_attn or ctx.fa_auto_off:
        return None
    norms = _whole_dense_llama_on_device0(spec, ctx, caches, placement, s)
    if norms is None:
        return None
    qk_norm, ffn_norm = norms
    T = min(ctx.n_ctx, ctx.n_ubatch)
    n_outputs = reserved_outputs(ctx, s)
    cpy_store = not ERAS.reached(ctx.build, "set_rows")
    out = []
    for backend in (sched_replay.DEVICE, sched_replay.HOST):
        g = sched_replay.llama_graph(spec, T, n_outputs, caches[0].cells, {}, set(), False, False, qk_norm,
                                     ffn_norm=ffn_norm, cpy_store=cpy_store)
        g.refused, g.host_reads_device = METAL_SIMDGROUP_REDUCTION_OPS, True
        if ERAS.reached(ctx.build, "embd_input"):  # build_inp_embd's embeddings input beside the token ids
            k = next(i for i, t in enumerate(g.leafs) if t.inp)
            g.leafs.insert(k + 1, g.input((spec.n_embd, T)))
        out.append(galloc.peak_bytes(0, sched_replay.device_nodes(g, backend=backend)))
    return out[0], out[1]


# ggml-vulkan.cpp ggml_backend_vk_device_supports_op (tensor_size_supported, at llama.cpp@a731805ce, the build Ollama
# v0.30.0 runs): an op whose result or any source is larger than the device's maxStorageBufferRange (without
# VK_EXT_shader_64bit_indexing) or max_buffer_size is refused and runs on the CPU. Intel's Windows driver, whose
# device names read "Intel(R) Arc(TM)" (Mesa's ANV: "Intel(R) Arc(tm) ... (MTL)"), reports 1073741820 on Arc
# (KhronosGroup/Vulkan-Profiles#621, "maxStorageBufferRange >= 1073741824 (Arc: 1073741820)"); taken here for its
# integrated Arc Graphics too, which only ollama/ollama#16447's sums attest
VK_INTEL_WINDOWS_STORAGE_RANGE = 1073741820


def vulkan_storage_range(device: Device) -> int:
    """The largest tensor ggml-vulkan's supports_op takes on the device (0: not known here, no limit applied)."""
    return VK_INTEL_WINDOWS_STORAGE_RANGE if "Arc(TM)" in device.name else 0


def vulkan_refused_logits_bytes(spec: ModelSpec, ctx: Context, caches: list[Cache], placement: Placement,
                                devices: tuple[Device, ...], s: LlamaCppSettings) -> tuple[int, int] | None:
    """(the Vulkan buffer, the host's) when the device refuses the logits' product for its size
    (vulkan_storage_range): n_outputs x n_vocab F32 above the limit (every token an output: an embedding context,
    or a program without n_outputs_max). ggml_backend_sched_backend_from_buffer finds no backend for it (the CPU
    does not take a Vulkan buffer), the expansions skip it and pass 3 gives it to the CPU, which copies in the
    output weight (the token embeddings' duplicate on the device where the model ties them) and the normed rows:
    the host's buffer replayed (sched_replay.llama_graph with Graph.max_tensor); the device's is its split without
    the logits, in ggml_vk_graph_optimize's order (sched_replay.vk_device_nodes). ollama/ollama#16447 (v0.30.0's
    llama-server, qwen3-embedding:8b, Intel Arc iGPU, 32768 cells, 2048-token ubatch, flash attention): Vulkan0
    480.05 MiB exact; Vulkan_Host 1734.88 against 1830.92 printed (-5.2%: the log's sum is the logits, the weight's
    copy, the rows' copy and the 128 MiB F16 mask, which this replay frees after its copy to the device).
    Where it holds: a dense Llama or Qwen3 wholly on the one Vulkan device, one F16 cache, one stream, flash
    attention, the F16-mask and set_rows graph (ERAS kq_mask_f16), graph_optimize on (vk_reorders), the logits the
    only op refused; None elsewhere."""
    if len(devices) != 1 or infer_backend(devices, s.backend).name != "vulkan" or not ctx.flash_attn \
            or not vk_reorders(ctx) or not ERAS.reached(ctx.build, "kq_mask_f16"):
        return None
    limit = vulkan_storage_range(devices[0])
    T = min(ctx.n_ctx, ctx.n_ubatch)
    n_outputs = reserved_outputs(ctx, s)
    if not limit or n_outputs * spec.n_vocab * 4 <= limit:
        return None
    norms = _whole_dense_llama_on_device0(spec, ctx, caches, placement, s)
    if norms is None:
        return None
    qk_norm, ffn_norm = norms
    out_w = next((t for t in spec.weights.tensors if t.name == "output.weight"), None) \
        or next((t for t in spec.weights.tensors if t.name == "token_embd.weight"), None)
    if out_w is None:
        return None

    def build(logits: bool) -> sched_replay.Graph:
        g = sched_replay.llama_graph(spec, T, n_outputs, caches[0].cells, {}, set(), True, False, qk_norm,
                                     ffn_norm=ffn_norm)
        head = g.nodes[-1]  # output_head's logits, reading the output weight (on the device)
        head.srcs[0].size = out_w.nbytes
        if not logits:
            g.nodes.pop()
            g.leafs.remove(head.srcs[0])
        g.max_tensor = limit
        if ERAS.reached(ctx.build, "embd_input"):  # build_inp_embd's embeddings input beside the token ids
            k = next(i for i, t in enumerate(g.leafs) if t.inp)
            g.leafs.insert(k + 1, g.input((spec.n_embd, T)))
        return g

    g = build(True)
    if [t for t in g.nodes if t.op not in sched_replay.VIEW_OPS and g.refuses(t)] != [g.nodes[-1]]:
        return None
    host = galloc.peak_bytes(0, sched_replay.device_nodes(g, backend=sched_replay.HOST))
    device = galloc.peak_bytes(0, sched_replay.vk_device_nodes(build(False))[1])
    return device, host


# the first build seen printing "fused Gated Delta Net (chunked) enabled" on a Vulkan device (issue #21608's
# b8770-82764d8 log: llama_context's probe of ggml-vulkan's GATED_DELTA_NET), the fused graph
# sched_replay.qwen35_graph rebuilds; the PR that brought the op to ggml-vulkan is not dated here, so earlier
# builds keep the closed forms
VK_FUSED_GDN_SEEN_BUILD = 8770


def vulkan_qwen35_device_bytes(spec: ModelSpec, ctx: Context, caches: list[Cache], placement: Placement,
                               devices: tuple[Device, ...], s: LlamaCppSettings, rough: bool = False) -> int | None:
    """The compute buffer of the one ggml-vulkan device that runs a whole Qwen3.5 / Qwen3.5-MoE pp graph
    (sched_replay.qwen35_graph, the experts through _qwen_moe_ffn) in the order ggml_vk_graph_optimize gives the
    device's split before ggml-alloc places it (sched_replay.vk_device_nodes, compute_graphs.vk_graph_optimize,
    from VK_PP_REORDER_BUILD), with flash attention, before PR #23764 (ERAS kq_mask_f16) the mask's F32 input and its
    cast to F16 on the device (qwen35_graph mask_cast: llama-graph.cpp build_attn_inp_kv_impl's ggml_cast, at
    b9010; from that PR an F16 input), a quantized cache's
    Hadamard rotations (_rotations) and the streams of -np without a unified cache. Before ERAS outputs_max the
    graph keeps a logits row per token of the ubatch, an output ggml-alloc never frees, allocated last: in Vulkan's
    order it lands above the tensors the last layers leave (the closed forms put it at the buffer's start). Before
    ERAS spec_mtp the last layer takes out_ids' rows before its residual and the final norm is result_norm itself
    (sched_replay.qwen35_graph last_layer_rows), which leaves the free tail higher.
    ggml-org/llama.cpp#21608 (Qwen3.5-35B-A3B on an Arrow Lake iGPU, b8770, -c 32768 -ub 512 -np 1): Vulkan0 574.02
    MiB printed, the 248320 x 512 logits (485.00 MiB) 89.02 MiB above the start; replayed 574.02 (exact; 578.02
    without the mask's cast, the closed forms 493.00, 0.859; 531.02 with 0c1e57098's t_h_nextn graph and without
    the topk-MoE keep patterns, 530.02 with them, which a stand-in Vulkan device in the pinned binding prints too on
    that graph, 3787 nodes; the log prints 3729, the replay's graph of that build 3789 less the 60 nodes
    ggml_l2_norm saves).
    The F32 mask's copy is placed at the device split's head, below everything the layers allocate, and lives until
    the cast before the first attention layer's flash attention; in Vulkan's order the logits (485 MiB here), too
    large for the hole it leaves, land above the layers' high-water mark: the buffer grows 2 KiB a cell, as
    hogeheer499-commits/strix-halo-guide's b9010 Strix Halo logs (Qwen3.6-35B-A3B UD-Q4_K_M, -ub 512) print:
    498.00 / 576.52 / 640.52 / 646.52 / 768.52 MiB at 4096 / 34048 / 66816 / 69888 / 132352 F16 cells, all five
    replayed exactly (were 554.02 / 579.27 / 579.27 / 582.27 / 643.27 without the cast); -np 2 / 4 / 8 / 16 (4096
    cells a stream) 498.00 / 501.00 / 501.00 / 557.02, exact (the closed forms 493.00); a q8_0 or q4_0 cache at
    34048 / 66816 cells 555.78 / 619.78 against 563.78 / 627.78 (8 MiB short, 0.986; the graph's node count, 3849,
    matches the log's). None elsewhere (an MTP context's next-n view: no gated delta net layer; a layer or weight
    on the host, several devices, -nkvo, no flash attention, a buffer over Vulkan's 1 GiB suballocation block,
    builds before VK_FUSED_GDN_SEEN_BUILD) and when `rough`."""
    d = placement.output_device
    trunk = spec.trunk_layers
    T = min(ctx.n_ctx, ctx.n_ubatch)
    if rough or spec.architecture not in ("qwen35", "qwen35moe") or d != 0 or len(devices) != 1 \
            or infer_backend(devices, s.backend).name != "vulkan" or ctx.build < max(VK_PP_REORDER_BUILD,
                                                                                     VK_FUSED_GDN_SEEN_BUILD) \
            or set(placement.layer_device) != {d} or s.no_kv_offload or not ctx.flash_attn \
            or ctx.n_rs_seq or len(caches) != 1 \
            or T % max(1, ctx.n_seq_max) or _tensor_overrides(s) \
            or not trunk or trunk[-1].attention is None or not any(la.recurrent for la in trunk) \
            or any((la.attention is None) == (la.recurrent is None) for la in trunk) \
            or any(la.recurrent is not None and (la.recurrent.kind != "gated_delta_net" or not la.recurrent.n_group)
                   for la in trunk) \
            or any(la.ffn.n_experts and not la.ffn.n_ff_expert for la in trunk) \
            or model_buffers(spec, devices, s, placement).cpu_tensors and any(
                t.layer is not None for t in model_buffers(spec, devices, s, placement).cpu_tensors):
        return None
    n_outputs = reserved_outputs(ctx, s)
    kt, vt = _cache_types(ctx)
    k_rot, v_rot = _rotations(spec, ctx)

    last_rows = not ERAS.reached(ctx.build, "spec_mtp")  # out_ids' rows taken in the last layer, no t_h_nextn
    cast = not ERAS.reached(ctx.build, "kq_mask_f16")  # the F32 mask cast to F16 on the device (PR #23764)

    def build(n_kv: int) -> sched_replay.Graph:
        return sched_replay.qwen35_graph(spec, T, n_outputs, n_kv, {}, set(), True, kt, vt,
                                         math.isqrt(k_rot // 4), math.isqrt(v_rot // 4), n_seqs=max(1, ctx.n_seq_max),
                                         n_stream=ctx.n_stream, last_layer_rows=last_rows, mask_cast=cast)

    shape = (spec.architecture, spec.n_embd, spec.n_vocab,
             tuple((la.index, la.attention, la.recurrent, la.ffn) for la in trunk))
    key = ("vulkan", shape, T, n_outputs, kt, vt, k_rot, v_rot, ctx.n_seq_max, ctx.n_stream, last_rows, cast)
    peak = sched_replay.device_peak_by_kv(key, build, caches[0].cells, galloc.ALIGN, lower=sched_replay.vk_lowering)
    return peak if peak <= VK_MAX_BUFFER else None


def kimi_linear_device_bytes(spec: ModelSpec, ctx: Context, caches: list[Cache], placement: Placement,
                             devices: tuple[Device, ...], s: LlamaCppSettings, rough: bool = False) -> int | None:
    """The compute buffer of the one ggml-cuda device that runs a Kimi-Linear pp graph, its first layers left on the
    CPU or none (sched_replay.kimi_linear_graph scheduled and allocated as ggml_backend_sched does: the
    host layers' ops run on the device by op offload with their weights copied in, one split at a time, but for the
    stores into their conv and recurrent states and their build_rs gathers; the allocation dependencies of
    ggml-cuda's graph_optimize for the top-k router and the weighted expert sum, matched split by split
    (sched_replay.alloc_deps: a host layer's exp_probs_b copy starts a split inside its router group, which is then
    not fused). The graph, rebuilt from src/models/kimi-linear.cpp, equals llama.cpp's own node for node (op and
    size, with flash attention and without) in the GGML_SCHED_DEBUG=2 dump of the CPU ground truth's pp graph
    (kimi-linear 4-layer file, -c 8192 -ub 512). The lowering is kept by shape (sched_replay.device_peak_by_kv).
    Several sequences: the larger of the pp graphs of n_seq_max sequences and of one (llama_context::sched_reserve),
    a stream per sequence unless the cache is unified; each graph equals llama.cpp's CPU graph at -np 4, unified or
    not. Where it holds: a ubatch that n_seq_max divides, an F16 cache, a latent (wk_b / wv_b) MLA cache, separate q / k / v projections,
    one device holding the output, no tensor overrides, no -nkvo, the newest build (the fused gated delta net and
    the fusion dependencies); None elsewhere. H200 CUDA0 of the 4-layer file, held out (not fitted): -ngl 2 at 8K
    99.06 MiB (99.06 measured, was 112.50 from the closed forms); fully offloaded 110.58 / 630.58 MiB at 8K with /
    without flash attention (110.58 / 630.58, were 112.50 / 632.50) and 237.16 at 16K -ub 1024 (237.16, was
    241.00)."""
    run = _OneDevice.of(spec, ctx, placement)
    d, trunk, T, host_layers = run
    # a layout that cannot fit whatever its compute buffer, weighed only for that (layout.estimate's `rough`)
    if spec.architecture != "kimi-linear" or (rough and host_layers):
        return None
    names = {t.name for t in spec.weights.tensors}
    if run.refused(ctx, placement, devices, s) or not cuda_fusion_deps(ctx, devices, s) or T % max(1, ctx.n_seq_max) \
            or len(caches) != 1 or ctx.type_k.name != "f16" or s.no_kv_offload or not trunk \
            or any((la.attention is None) == (la.recurrent is None) for la in trunk) \
            or any(la.recurrent is not None and (f"blk.{la.index}.attn_q.weight" not in names
                                                 or la.recurrent.n_heads * la.recurrent.d_state
                                                 != la.recurrent.d_inner) for la in trunk) \
            or any(la.attention is not None and (not la.attention.kv_lora_rank or not la.attention.latent_cache
                                                 or (ctx.flash_attn and not cuda_fa_supported(la.attention, ctx)))
                   for la in trunk) \
            or any(la.ffn.n_experts and f"blk.{la.index}.exp_probs_b.bias" not in names for la in trunk):
        return None
    host = _host_weights(spec, devices, s, placement, host_layers)
    n_outputs = reserved_outputs(ctx, s)
    n_rs = max(1, ctx.n_seq_max)
    shape = (spec.n_embd, spec.n_vocab, tuple((la.index, la.attention, la.recurrent, la.ffn) for la in trunk))
    peak = 0
    # llama_context::sched_reserve: the pp graph of n_seq_max sequences, then (TAG_RESERVE_DIAG_DECAY, Kimi-Linear
    # and MiniMax-01) again of one sequence, the recurrent states of the others copied through build_rs; the buffer
    # keeps the larger (ggml_gallocr_reserve_n grows it only). The tg graph of n_seq_max tokens is smaller
    for n_seqs in sorted({n_rs, 1}):
        def build(n_kv: int, n_seqs: int = n_seqs) -> sched_replay.Graph:
            return sched_replay.kimi_linear_graph(spec, T, n_outputs, n_kv, host, host_layers, ctx.flash_attn,
                                                  n_seqs=n_seqs, n_stream=ctx.n_stream, n_rs=n_rs)

        key = ("kimi-linear", shape, T, n_outputs, frozenset(host_layers), frozenset(host), ctx.flash_attn, n_seqs,
               ctx.n_stream, n_rs)
        peak = max(peak, _cuda_device_peak(key, build, caches[0].cells, host))
    return peak


# ggml-opencl.cpp ggml_opencl_supports_op, GGML_OP_MUL_MAT_ID: experts of Q4_0, Q8_0 or MXFP4 only (with an F32 src1:
# the mul_mv_id kernels); Q4_0 is admitted at PR #15270's merge (e2c1bfff5, b6177), Q4_1 / K-quants / F16 never
OPENCL_MUL_MAT_ID_TYPES = frozenset({"q4_0", "q8_0", "mxfp4"})


def opencl_refused_down_exps_host(spec: ModelSpec, ctx: Context, placement: Placement, devices: tuple[Device, ...],
                                  s: LlamaCppSettings, inputs: int) -> int:
    """The CPU compute buffer when ggml-opencl refuses the down product of some MoE layers on the device: an
    ffn_down_exps of a type its MUL_MAT_ID has no kernel for (OPENCL_MUL_MAT_ID_TYPES), e.g. the Q4_1 that
    llama-quantize gives the first n_layer/8 ffn_down of an imatrix Q4_0 file (llama-quant.cpp
    llama_tensor_get_type). llama_model's select_weight_buft tries the op on the device (weight_buft_supported),
    finds it refused and leaves the weight in a host buffer; OpenCL has no offload_op, so ggml_backend_sched_split_graph
    gives the MUL_MAT_ID to the CPU (pass 1: the backend of its weight) and nothing else (the expansion passes give
    the weighting and the views' sum after it back to the device), a split of its own with two inputs copied in:
    the SwiGLU rows (n_ff_exp x n_used a token) and the selected experts (the top-k view of the argsort,
    copied with its layout: ggml_dup_tensor_layout), beside the product's rows (n_embd x n_used a token).

    Replayed through ggml-alloc over the host's whole buffer: the graph inputs (`inputs`: token ids, positions,
    masks, cache indices, then the output ids, read only in the last split) and the embeddings' rows are freed at
    the first device split that copies them; the SwiGLU copy takes the freed block, the product goes above the
    inputs. Two splits a refused layer beside the embeddings' (b6166 log of granite-3.1-3b-a800m Q4_0 on an Adreno
    830, tests/test_llamacpp_opencl_logs.py: 'graph splits = 10' on 32 layers, 4 of them with a Q4_1 down product;
    CPU 34.01 MiB printed, 10 MiB of inputs + the 24 MiB product above them). 0 where no layer is refused."""
    if not devices or infer_backend(devices, s.backend).name != "opencl" or not spec.weights.tensors:
        return 0
    types = {t.name: t.dtype for t in spec.weights.tensors}
    T = min(ctx.n_ctx, ctx.n_ubatch)
    refused = []
    for la in spec.trunk_layers:
        f = la.ffn
        dt = types.get(f"blk.{la.index}.ffn_down_exps.weight")
        if f is None or not f.is_moe or dt is None or dt.lower() in OPENCL_MUL_MAT_ID_TYPES \
                or la.index >= len(placement.layer_device) or not 0 <= placement.layer_device[la.index] < len(devices) \
                or any(types.get(f"blk.{la.index}.{n}.weight", "q4_0").lower() not in OPENCL_MUL_MAT_ID_TYPES
                       for n in ("ffn_gate_exps", "ffn_up_exps", "ffn_gate_up_exps")):
            continue  # only the down product refused (not modelled: gate / up refused as well)
        refused.append(f)
    if not refused:
        return 0
    resid, out_ids = spec.n_embd * T * 4, T * 4
    g = compute_graphs._Graph()
    add = g.add
    held = add(max(0, inputs - resid - out_ids))  # the graph inputs the first device split copies
    kept = add(out_ids)  # the output ids: copied by the last split
    add(0, held, add(resid))  # the embeddings' rows (GET_ROWS on the host) and the inputs, copied to the device
    for f in refused:
        swiglu = add(f.n_ff_expert * f.n_experts_used * T * 4)  # the split's copies, in the order the node reads them
        ids = add(((T - 1) * f.n_experts + f.n_experts_used) * 4)
        add(0, add(spec.n_embd * f.n_experts_used * T * 4, swiglu, ids))  # the product, copied back to the device
    add(0, kept)
    return galloc.peak_bytes(2, g.nodes)


# the builds whose ggml-sycl offload_op takes the token embeddings' GET_ROWS: PR #10133 (3bcd40b3c, b4040) gave
# ggml_backend_sycl_device_offload_op get_op_batch_size, "case GGML_OP_GET_ROWS: return op->ne[1]; // this will
# increse the speed of prefill in test" (before it: `op->op != GGML_OP_GET_ROWS`), and PR #10432 "sycl : offload of
# get_rows set to 0" (0f77aae56, b4220) made it `return 0` (ggml/src/ggml-sycl/ggml-sycl.cpp)
SYCL_GET_ROWS_OFFLOAD = (4040, 4220)


def sycl_offloaded_token_rows(spec: ModelSpec, ctx: Context, placement: Placement, devices: tuple[Device, ...],
                              s: LlamaCppSettings) -> tuple[int, int, int] | None:
    """(device, the token embeddings' bytes, the gathered rows' bytes) where a SYCL build of SYCL_GET_ROWS_OFFLOAD
    runs build_inp_embd's GET_ROWS on the device: token_embd stays on the CPU (an input-layer tensor), but
    ggml_backend_sched_backend_id_from_cur gives an op reading a host weight to the first backend whose offload_op
    wants it (get_op_batch_size >= 32: the worst-case ubatch's rows), so the whole table is copied into that device's
    compute buffer as its split's input and the gathered rows are made there, not on the host (SYCL_Host keeps the
    other graph inputs). Sized as host_weight_copy's copies, the table above the device's workspace, where ggml-alloc
    reuses its block once the rows are gathered (not replayed). NeoZhangJianyu/ci_log's b4127 run of llama-2-7b Q4_0
    on a UHD Graphics 770 (-ngl 33, 4096 cells, no flash attention): "graph splits = 1 (with bs=512)", SYCL_Host 8.01
    MiB (the mask; 16.01 with the rows on the host, as at b5652), SYCL0 342.32 = the 70.31 MiB table + 272.01."""
    if not SYCL_GET_ROWS_OFFLOAD[0] <= ctx.build < SYCL_GET_ROWS_OFFLOAD[1] or not devices \
            or infer_backend(devices, s.backend).name != "sycl" or not any(d >= 0 for d in placement.layer_device):
        return None
    T = min(ctx.n_ctx, ctx.n_ubatch)
    d = _offload_device(devices, s, T)
    tok = next((t for t in model_buffers(spec, devices, s, placement).cpu_tensors if t.name == "token_embd.weight"),
               None)
    if d is None or tok is None:
        return None
    return d, tok.nbytes, spec.n_embd * T * 4


def sycl_refused_moe_host(spec: ModelSpec, ctx: Context, caches: list[Cache], placement: Placement,
                          devices: tuple[Device, ...], s: LlamaCppSettings) -> int:
    """The CPU compute buffer (SYCL_Host: llama_context gives the CPU backend the device's host buffer type) when a
    SYCL build before weights.SYCL_GPT_OSS_OPS_BUILD refuses gpt-oss's expert block: the MXFP4 experts'
    MUL_MAT_ID, every ADD_ID of an expert bias and the SWIGLU_OAI (ggml-sycl.cpp
    ggml_backend_sycl_device_supports_op at llama.cpp@96ac5a23). The weights stay on the host
    (weights.sycl_refused_weights) and ggml-sycl offloads no op it refuses, so ggml_backend_sched_split_graph (pass
    1) gives each product and bias to the CPU, the expansion passes give it the SWIGLU_OAI between them (the CPU's
    assignments break "expand gpu down / up"; "expand rest down" then takes it) and give the device the router
    before and the weighting and the views' sum after: one CPU split a layer, two splits more a layer beside the
    embeddings' (issue #17643, b7195: 'graph splits = 50' for 24 layers). build_moe_ffn's order (src/llama-graph.cpp):
    the split's copies of the FFN input (n_embd a token) and of the selected experts (the top-k view of the argsort,
    copied with its layout), up, its ADD_ID in place, gate, its ADD_ID in place, the SWIGLU_OAI (not in place),
    down and its ADD_ID, copied back to the device.

    Replayed through ggml-alloc over the host's buffer (ggml_gallocr_alloc_graph_impl: the graph inputs first, in
    leaf order, the order the graph first reads them: the token ids, the positions, then each KV cache's K / V row
    indices and F32 mask, the first attention layer's cache first, the output ids last; then the embeddings' rows).
    The first device split copies the token embeddings, the positions and the first attention layer's cache inputs,
    which are then freed; the other cache's inputs wait for the next attention layer's split, after the first
    expert block. The embeddings' freed block joins the buffer's last one, which ggml_dyn_tallocr_alloc takes only
    when no other block fits: the FFN input's copy lands in the first inputs' freed block when it fits there, above
    the inputs otherwise, and up, gate and the SWIGLU_OAI rows (n_ff_exp x n_used a token each) go above. Issue
    #17643 (gpt-oss-20b MXFP4 on an Arc A770, b7195, -fa 0, 4096 cells, -ub 512; layer 0 a sliding-window layer,
    whose 1024-cell inputs, 4 MiB, take no 5.625 MiB copy): SYCL_Host 87.14 MiB printed = the 19.64 MiB of inputs
    and embeddings' rows + 3 x 22.5 MiB. 0 where the build takes the block (or the experts' type is one SYCL
    multiplies: their ADD_IDs alone on the CPU, several splits a layer, not modelled)."""
    refused = sycl_refused_weights(spec, devices, s)
    if not refused:
        return 0
    layers = [la for la in spec.trunk_layers if la.ffn is not None and la.ffn.is_moe
              and la.index < len(placement.layer_device) and 0 <= placement.layer_device[la.index] < len(devices)
              and all(f"blk.{la.index}.ffn_{n}_exps.weight" in refused for n in ("up", "gate", "down"))]
    return _host_expert_block_bytes(spec, ctx, caches, layers, mask_elem=4)


def metal_repacked_moe_host(spec: ModelSpec, ctx: Context, caches: list[Cache], placement: Placement,
                            devices: tuple[Device, ...], s: LlamaCppSettings) -> int:
    """The CPU compute buffer beside a Metal device when the expert weights of offloaded MoE layers are kept on the
    CPU (--n-cpu-moe, --cpu-moe, -ot exps=CPU) in CPU_REPACK. Metal has no host buffer type, so the CPU layers'
    weights take the CPU's extra buffer types (repack.repack_applies); that buffer is not host memory, and
    ggml_backend_sched_backend_id_from_cur offers a weight's op to a higher backend only when
    `ggml_backend_buffer_is_host(src->buffer)` (ggml/src/ggml-backend.cpp), so ggml-metal's offload_op
    (ggml_backend_metal_device_offload_op: MUL_MAT / MUL_MAT_ID of 32 rows or more, read at b7140) never sees the
    experts' products: they stay on the CPU with the expert block between them, as sycl_refused_moe_host's SYCL
    build refuses it, and the CPU buffer holds that block above the graph inputs (_host_expert_block_bytes).
    ontouchstart/rabbit-holes' llama-server log at b8193 (gpt-oss-20b MXFP4 on an Apple M5, --n-cpu-moe 12
    --no-mmap, 4 slots in 32768 unified cells, -ub 512): CPU compute 144.77 MiB printed = the inputs' 77.27 +
    3 x 22.5 MiB (up, gate and the SWIGLU_OAI rows, 2880 x 4 a token); 77.27 without the block. 0 where no such
    layer is offloaded or the experts stay in a host buffer (not repacked: then Metal's offload_op takes them)."""
    if not devices or infer_backend(devices, s.backend).name != "metal" or not (
            s.override_tensor or s.cpu_moe or s.n_cpu_moe):
        return 0
    build = ctx.build
    if not repack_applies(devices, s.no_host, s.repack, s.backend, build):
        return 0
    isa = "neon" if s.cpu_isa == "avx2" else s.cpu_isa  # an Apple chip's CPU (backends.cpu_repack)
    on_cpu = {t.name: t for t in model_buffers(spec, devices, s, placement).cpu_tensors}

    def repacked(name: str) -> bool:
        t = on_cpu.get(name)
        return t is not None and repackable(t, isa, build)

    layers = [la for la in spec.trunk_layers if la.ffn is not None and la.ffn.is_moe
              and la.index < len(placement.layer_device) and 0 <= placement.layer_device[la.index] < len(devices)
              and all(repacked(f"blk.{la.index}.ffn_{n}_exps.weight") for n in ("up", "gate", "down"))]
    mask_elem = 2 if ctx.flash_attn and ERAS.reached(build, "kq_mask_f16") else 4
    return _host_expert_block_bytes(spec, ctx, caches, layers, mask_elem=mask_elem)


def _host_expert_block_bytes(spec: ModelSpec, ctx: Context, caches: list[Cache], layers: list[LayerSpec],
                             mask_elem: int) -> int:
    """The host buffer's peak when the expert block of offloaded MoE `layers` (separate up / gate / down experts)
    runs on the CPU, replayed through ggml-alloc as sycl_refused_moe_host describes; `mask_elem` the bytes of a KQ
    mask element as the host's graph input holds it. 0 without such a layer or attention."""
    T = min(ctx.n_ctx, ctx.n_ubatch)
    att = attention_layers(spec)
    if not layers or not att:
        return 0
    f = layers[0].ffn
    resid = spec.n_embd * T * 4
    wide = f.n_ff_expert * f.n_experts_used * T * 4
    v_trans = not ctx.flash_attn and not ctx.fa_auto_off  # llama_kv_cache::build_input_v_idxs
    n_embd_v = max(la.attention.n_kv_heads * la.attention.head_dim_v for la in att)
    first = att[0].index
    order = sorted((c for c in caches if c.layers), key=lambda c: first not in c.layers)
    g = compute_graphs._Graph()
    add = g.add
    tokens = add(T * 4)
    if ERAS.reached(ctx.build, "embd_input"):  # the unread embeddings input beside the token ids (PR #18898)
        add(resid)
    pos = add(T * 4)
    cache_inputs = [[add(T * 8), add((n_embd_v if v_trans else 1) * T * 8), add(c.cells * T * mask_elem)]
                    for c in order]
    out_ids = add(T * 4)
    n_inputs = len(g.nodes)
    embd = add(resid, tokens)  # GET_ROWS of the host's token embeddings
    for t in (embd, pos, *cache_inputs[0]):  # the first device split's input copies
        add(0, t)
    x = add(resid)  # the expert split's copies, in the order its first node reads them
    ids = add(((T - 1) * f.n_experts + f.n_experts_used) * 4)
    up = add(wide, add(wide, x, ids), ids, inplace=True)  # MUL_MAT_ID, then ADD_ID of the bias (a weight) in place
    gate = add(wide, add(wide, x, ids), ids, inplace=True)
    glu = add(wide, gate, up)  # GGML_GLU_OP_SWIGLU_OAI
    down = add(spec.n_embd * f.n_experts_used * T * 4, glu, ids)
    add(0, add(spec.n_embd * f.n_experts_used * T * 4, down, ids, inplace=True))  # copied back to the device
    for t in (*(i for c in cache_inputs[1:] for i in c), out_ids):  # read by later device splits
        add(0, t)
    return galloc.peak_bytes(n_inputs, g.nodes)


# the last answers of compute_by_device: a fit's dry run and the estimate that follows it weigh the same layout, and a
# plan weighs one layout for several of its options (the plan of Llama-3.1-405B on one RTX 4090: 876 calls, 379
# distinct). By the spec object and the other arguments' values: a cache by its fields, its per-layer dicts by their
# items (equal items, equal dicts; the same dicts in another order only miss)
_BY_DEVICE = ByObject[dict[int, int]](1024)
_CACHE_FIELDS = tuple(f.name for f in fields(Cache))


def _cache_value(c: Cache) -> Hashable:
    return tuple(tuple(v.items()) if isinstance(v, dict) else v for v in (getattr(c, n) for n in _CACHE_FIELDS))


def compute_by_device(spec: ModelSpec, ctx: Context, caches: list[Cache], placement: Placement,
                      devices: tuple[Device, ...], s: LlamaCppSettings, rough: bool = False) -> dict[int, int]:
    """_compute_by_device, kept by its arguments (_BY_DEVICE); a new dict each call (callers may change theirs)."""
    key = (ctx, tuple(map(_cache_value, caches)), placement, devices, s, rough)
    return dict(_BY_DEVICE.get(spec, key, lambda: _compute_by_device(spec, ctx, caches, placement, devices, s,
                                                                      rough)))


def _compute_by_device(spec: ModelSpec, ctx: Context, caches: list[Cache], placement: Placement,
                       devices: tuple[Device, ...], s: LlamaCppSettings, rough: bool = False) -> dict[int, int]:
    """Per backend (-1 = the CPU side): a device that runs layers needs the layer workspace, the one that
    holds the output layer the logits too; the CPU side of an offloaded graph keeps its input rows. A device
    whose layers have no attention (a hybrid's run of recurrent layers) takes no KQ mask: the scheduler copies
    to a device only the inputs its own nodes read (ggml_backend_sched_split_graph, pass 5).

    Pipeline parallelism (see pipeline_parallel) keeps SCHED_MAX_COPIES copies of each input, each marked input
    and output so that ggml-alloc never reuses it (ggml_backend_sched_split_graph): on the CPU the graph inputs
    (the KQ masks, token ids, positions), on each device its split inputs (the masks, the positions and the
    hidden state handed over from the device before, or the token embeddings on the first). Every device after
    the first then needs SCHED_MAX_COPIES hidden-state rows more than the first: measured with the pinned
    llama.cpp's own scheduler and ggml-alloc over several devices (tests/test_llamacpp_split.py: the split inputs
    it prints are the same on every device, so the extra rows are the workspace's placement beside the copies,
    not traced to a tensor): 64 MiB at -ub 1024 and 32 at 512 for n_embd 4096, at every context."""
    ctx = device_auto_fa_off(spec, ctx, placement, devices, s)  # -fa auto without a kernel for the heads: off
    p = compute_phases(spec, ctx, caches, reserved_outputs(ctx, s))
    if not devices:
        dense = dense_cpu_bytes(spec, ctx, caches, s)
        # the older graph's attention without flash attention (OLD_GRAPH_LAST_BUILD: K and V copied into the cache
        # before KQ) is summed from its tensors: the scores, the masks, Q, the KQV output and two rows, beside which
        # the small inputs ggml-alloc places first (ggml_gallocr_alloc_graph_impl: "allocate all graph inputs
        # first") stay below: the positions and out_ids are read to the last layer, the token ids' freed block stays
        # at the bottom (token_index_inputs). ollama/ollama#8164 (v0.5.1, llama3.2:3b on the CPU, 4 x 2048 cells):
        # CPU 424.01 MiB = the layer's 424.00 + 3 x 2 KiB. The later graphs' closed forms were fitted to prints that
        # hold them already (equal on the CPU grid without them)
        small = token_index_inputs(spec, ctx, caches, s) if ctx.build <= OLD_GRAPH_LAST_BUILD \
            and not ctx.flash_attn else 0
        return {-1: max(p.output, p.attention + small) if dense is None else dense}
    # a ggml-cuda device's layer workspace holds flash attention's F16 copies of K and V (fa_f16_bytes); not
    # modelled: an RPC device's (the remote server's buffer type) and absorbed-MLA layers (V a view of the latent K)
    fa16, deps = cuda_fa_f16_copies(ctx, devices, s), cuda_fusion_deps(ctx, devices, s)
    vk = vulkan_graph_optimize(ctx, devices, s)
    p_dev = compute_phases(spec, ctx, caches, reserved_outputs(ctx, s), fa_f16_copies=fa16, cuda_deps=deps,
                           vk_order=vk) if fa16 or deps or vk else p
    ph = {d: (p if d < 0 or d >= len(devices) or devices[d].id.startswith("RPC") else p_dev)
          for d in set(placement.layer_device) | {placement.output_device}}
    T = min(ctx.n_ctx, ctx.n_ubatch)
    resid = spec.n_embd * T * 4
    mask_in = p.inputs - resid  # the masks as the graph input (F32 before PR #23764 with flash attention)
    masks = mask_in // 2 if ctx.flash_attn and not ERAS.reached(ctx.build, "kq_mask_f16") else mask_in
    # the devices whose layers read the KQ mask; an encoder's layers too (NO_CACHE_GRAPHS: no cache, but the
    # softmax of build_attn_mha, or of build_bert's own attention before b4881, reads the T x T mask, so the split
    # copies it). ollama/ollama#9994 (bge-m3, b4779, CUDA): CUDA0 25.01 MiB with the 1 MiB mask
    att_layers = [layer for layer in spec.trunk_layers if layer.attention is not None] \
        if spec.architecture in NO_CACHE_GRAPHS else attention_layers(spec)
    attending = {placement.layer_device[layer.index] for layer in att_layers
                 if layer.index < len(placement.layer_device)}
    cast_on = mask_cast_device(spec, ctx, placement)
    pp = pipeline_parallel(spec, placement, devices, s)
    out: dict[int, int] = {}
    host_rows = device_host_rows(spec, ctx, infer_backend(devices, s.backend).name)
    # an attention-free graph (Mamba-2) keeps the second row on the device: the H200 measures 108.22 MiB on CUDA0
    # for mamba2-2.7b's 4-layer file fully offloaded, logits + two rows (tests/fixtures/llamacpp_cuda/h200_run1.json);
    # which tensor that row is there is not located
    embd_in = resid if ERAS.reached(ctx.build, "embd_input") and p.output and not spec.attention_free else 0
    fa_host = device_fa_on_host(spec, ctx, caches, placement, devices, s)
    kq_host = host_attention_without_offload(spec, ctx, caches, placement, s)
    for d in sorted(set(placement.layer_device) | {placement.output_device}):
        need = ph[d].attention - (0 if d in attending else masks) - (host_rows if d >= 0 else 0) \
            if d in placement.layer_device else 0
        split = mla_split_attention(spec, ctx, caches, placement, devices, s, d)
        if split:  # an absorbed-MLA layer's attention at the head of the device's split, replayed
            need = max(split, ph[d].ffn, 3 * resid)
        if d in fa_host[0]:  # its flash attention runs on the CPU: the workspace without it (nor the mask, nor copies)
            need = p.attention - masks
        if kq_host and d >= 0 and d in attending:  # the attention's scores on the host: the rest, as with flash attention
            # less every KQ mask (KQ_mask_swa too, kv.pre_iswa_swa_mask): the soft-max that reads them runs on the CPU
            need = kq_host_device_attention(spec, ctx, caches)
        if d >= 0 and d in attending and d == cast_on:
            # before PR #23764 the device's split input is the F32 mask, cast to F16 on the device at the first
            # attention layer (the F32 copy's only reader is the cast; the F16 mask serves every layer): both are
            # alive at the cast, beside the split's hidden-state rows; the F32 copy is freed after it, so the
            # layers' own peak is not raised. The b9026 RTX 3090 log of Qwen3.6-27B at 262144 x 4 unified, q4_0
            # cache: CUDA0 836 MiB = the 512 MiB F32 copy + the 256 MiB F16 mask + the rows
            # (tests/test_llamacpp_heldout_logs.py); a 32K MoE's peak stays its layer's (the b5380 ROCm log of
            # Qwen3-30B-A3B, tests/test_llamacpp_rpc_logs.py).
            # With pipeline parallelism the F32 copy is marked input and output (ggml_backend_sched_split_graph with
            # n_copies > 1), so ggml-alloc never frees it: it stays under the layers' peak too (the copies beyond
            # the first are added below). llama.cpp#11200 (b4462, -ts 10,6 over two RTX 3090 Ti, 256-token
            # ubatch at 32768 cells): CUDA0 233.00 MiB = the layers' 90 + four 32 MiB F32 masks + three more
            # 5 MiB row copies, where the freed copy gave 201
            held = mask_in if pp else 0
            need = max(need + held, mask_in + masks + 3 * resid)
        if d == placement.output_device:
            # a device's split leaves the unread embeddings input (ERAS embd_input) with the host's graph inputs
            need = max(need, (ph[d].split_output or ph[d].output - embd_in) if d >= 0 else ph[d].output)
        out[d] = need
    whole = {placement.output_device, *placement.layer_device}
    if p_dev.device and len(whole) == 1 and placement.output_device >= 0 and not pipeline_parallel(
            spec, placement, devices, s):
        # one device runs the whole graph: its split as the replay places it (ComputePhases.device)
        out[placement.output_device] = p_dev.device
    dense = dense_device_bytes(spec, ctx, caches, placement, devices, s, masks)
    if dense is None:
        dense = metal_dense_device_bytes(spec, ctx, caches, placement, devices, s, masks)
    if dense is not None:  # a dense graph replayed as the one device that runs it holds it
        out[placement.output_device] = dense
    off = output_offload_device(ctx, placement, devices, s)
    if off is not None and any(_blas_base(t, True) == "output" for t in blas_weights(spec, ctx, placement, devices, s)):
        off = None  # the logits' product stays with the BLAS backend (blas_compute_bytes)
    # Not located: llama.cpp's fit-params README (b6895, Qwen3-30B-A3B F16, the output layer on the CPU, its logits on
    # CUDA0) prints CUDA0 compute 898 (whole MiB) = logits 296.75 + the 593.50 weight copy + two 4 MiB rows; this
    # gives one row (894.25), as sched_replay.llama_graph(host_output=True) does for a dense graph
    if off is not None:  # the logits run on device `off`, beside a copy of the output weight
        out[-1] = ph[-1].attention - (0 if -1 in attending else masks) if -1 in placement.layer_device else 0
        out[off] = max(out.get(off, 0), ph.get(off, p_dev).output + output_weight_copy(spec, devices[off], s))
    copy = host_weight_copy(spec, ctx, placement, devices, s)
    experts = host_experts_split_bytes(spec, ctx, placement, devices, s) if copy is not None else None
    if experts is not None:  # host expert weights multiplied on device `d`, their splits replayed
        out[experts[0]] = max(out.get(experts[0], 0), experts[1])
    elif copy is not None:  # a host weight multiplied on device `d`, one copy at a time above the FFN's rows
        d, size = copy
        # -nkvo without flash attention: the masks stay on the CPU with the soft-max, no device copies them
        out[d] = max(out.get(d, 0), size + p.ffn - (masks if kq_host else 0))
    pp_dev = _offload_device(devices, s, T) if -1 in placement.layer_device else None
    if pp_dev is not None and ERAS.reached(ctx.build, "pp_offload"):
        # the layers left on the CPU: in the worst-case (pp) graph every op with a host weight goes to pp_dev (op
        # offload, above) and ggml_backend_sched_split_graph's expansion passes give it the ops between them, so
        # the host runs only the stores into its KV cache; the layers run on the CPU in the tg graph
        # (llama_context::sched_reserve reserves both; each buffer keeps its largest size), of n_seq_max tokens.
        # GGML_SCHED_DEBUG=2 dump of llama-3.1-8b, -ngl 2 (tests/fixtures/llamacpp_cuda): the pp graph's CPU
        # splits hold only embd (GET_ROWS) and the SET_ROWS of the CPU layers' K and V; CUDA_Host 20.01 MiB, as
        # fully offloaded
        tg = compute_phases(spec, replace(ctx, n_ubatch=max(1, ctx.n_seq_max)), caches, max(1, ctx.n_seq_max))
        out[-1] = tg.output if placement.output_device < 0 else tg.attention
        if pp_dev not in placement.layer_device:  # a device with layers of its own has that workspace already
            out[pp_dev] = max(out.get(pp_dev, 0), ph.get(pp_dev, p_dev).attention)
    # the host keeps the graph inputs; since PR #18898 (ERAS embd_input) among them the embeddings input row block
    # beside the token ids, unread with tokens given but allocated all the same. Without flash attention the V
    # index inputs (v_index_inputs); K and V rows stored into a KV cache on the host take the freed embeddings
    # block, and go above it when larger (host_cache_stores). The small inputs (token_index_inputs) are not added
    # above such a store: the H200's mamba2-2.7b -nkvo (15.56 MiB) and qwen3.5-27b -nkvo / -ngl 4 / 8 (34.13) equal
    # the inputs' rows and masks plus the store's excess alone (where in the block the small ones sit: not located)
    out[-1] = max(out.get(-1, 0), p.inputs + (resid if ERAS.reached(ctx.build, "embd_input") else 0)
                  + (per_layer_input_rows(spec, T) + position_rows(spec, T)
                     if any(d >= 0 for d in placement.layer_device) else 0)
                  + v_index_inputs(spec, ctx, caches)
                  + max(token_index_inputs(spec, ctx, caches, s), host_cache_stores(spec, ctx, placement, s)
                        + host_layer_fa_q(spec, ctx, placement, devices, s) - resid))
    out[-1] += kq_host  # -nkvo without flash attention: the scores on the host
    out[-1] = max(out.get(-1, 0), fa_host[1])  # flash attention's sources copied to the host
    out[-1] = max(out[-1], blas_host_attention(spec, ctx, caches, placement, devices, s))  # kept by BLAS
    if host_attention_kept(spec, placement):  # a CPU layer's attention core stays on the host (pp graph)
        out[-1] = max(out[-1], p.attention)
    out[-1] = max(out[-1], cuda_f32_down_exps_host(spec, ctx, placement, devices, s))  # a refused down product
    out[-1] = max(out[-1], opencl_refused_down_exps_host(spec, ctx, placement, devices, s, out[-1]))  # its host split
    out[-1] = max(out[-1], sycl_refused_moe_host(spec, ctx, caches, placement, devices, s))  # gpt-oss's FFN on the host
    out[-1] = max(out[-1], metal_repacked_moe_host(spec, ctx, caches, placement, devices, s))  # repacked experts
    m2 = mamba2_offload_device_bytes(spec, ctx, placement, devices, s)
    if m2 is not None:  # a partly offloaded Mamba-2 model's pp graph on the device, replayed
        out[placement.output_device] = m2
    q35 = qwen35_device_bytes(spec, ctx, caches, placement, devices, s, rough)
    if q35 is not None:  # Qwen3.5's pp graph on the device, scheduled and replayed
        out[placement.output_device] = q35
    ll = llama_device_bytes(spec, ctx, caches, placement, devices, s, rough)
    if ll is not None:  # a dense Llama's or Qwen3's pp graph on the device, scheduled and replayed
        out[placement.output_device] = ll
    g2 = iswa_device_bytes(spec, ctx, caches, placement, devices, s, rough)
    if g2 is not None:  # Gemma 2's, Gemma 3's or Llama 4's pp graph on the device, scheduled and replayed
        out[placement.output_device] = g2
    g3n = gemma3n_device_bytes(spec, ctx, caches, placement, devices, s, rough)
    if g3n is not None:  # Gemma 3n's pp graph on the device, scheduled and replayed
        out[placement.output_device] = g3n
    vq = vulkan_qwen35_device_bytes(spec, ctx, caches, placement, devices, s, rough)
    if vq is not None:  # Qwen3.5's whole pp graph on one Vulkan device, in its order, replayed
        out[placement.output_device] = vq
    kl = kimi_linear_device_bytes(spec, ctx, caches, placement, devices, s, rough)
    if kl is not None:  # Kimi-Linear's pp graph on the device, scheduled and replayed
        out[placement.output_device] = kl
    moe = moe_offload_device_bytes(spec, ctx, caches, placement, devices, s)
    if moe is not None:  # the pp graph of a partly offloaded MoE model (or -nkvo), all of it on the device, replayed
        out[moe[0]] = moe[1]
    ds2 = deepseek2_device_bytes(spec, ctx, caches, placement, devices, s)
    if ds2 is not None:  # DeepSeek-V2 / V3 on the one device, replayed (all of it, or the pp graph)
        out[ds2[0]] = ds2[1]
    lf = lfm2_device_bytes(spec, ctx, caches, placement, devices, s, rough)
    if lf is not None:  # LFM2's pp graph on the device, scheduled and replayed
        out[placement.output_device] = lf
    mla = mla_device_bytes(spec, ctx, caches, placement, devices, s, rough)
    if mla is not None:  # DeepSeek-V2 / V3's absorbed-MLA pp graph on the device, scheduled and replayed
        out[placement.output_device] = mla
    if not ctx.flash_attn and ctx.build >= VK_CHUNKS_BUILD and infer_backend(devices, s.backend).name == "vulkan":
        for d in out:
            if d >= 0 and not (vk and ple_replayed(spec, ctx) and d == placement.output_device
                               and out[d] == p_dev.device):  # Gemma 4's device split replayed in its chunks
                out[d] += vulkan_chunked_scores(spec, caches, placement, d, T, out[d])
    if pipeline_parallel(spec, placement, devices, s):
        extra = SCHED_MAX_COPIES - 1
        first = placement.layer_device[0] if placement.layer_device else -1
        for d in out:
            if d >= 0:
                # a device after the one that casts the F32 mask copies its F16 cast (mask_cast_device)
                copied = (mask_in if cast_on in (None, d) else masks) if d in attending else 0
                if d == placement.output_device and ph[d].split_output:
                    # each copy is marked input and output (ggml_backend_sched_split_graph with n_copies > 1,
                    # "prevent ggml-alloc from overwriting the tensor"), so the mask is not freed before a hybrid's
                    # logits as on a single device (ComputePhases.split_output): they sit above it
                    out[d] = max(out[d], ph[d].split_output + copied)
                # and, without flash attention, the V row indices of each cache its layers store into
                # (v_index_inputs), split inputs too since LLAMA_SET_ROWS (ERAS set_rows): GGML_SCHED_DEBUG at
                # llama.cpp@0c1e57098 lists both caches' attn_inp_v_idxs (8 MiB each) in each device's split
                mine = {il for il, dev in enumerate(placement.layer_device) if dev == d}
                out[d] += extra * (copied + resid + T * 4 + v_index_inputs(spec, ctx, caches, mine))
                if d != first and d in placement.layer_device:
                    out[d] += SCHED_MAX_COPIES * resid
        # the host's graph inputs, n_copies each (graph_inputs in ggml_backend_sched_split_graph): token ids,
        # positions, masks, every cache's V indices, and from SCHED_LEAF_INPUTS_BUILD the unread embeddings input.
        # The pinned build's Gemma-3-shaped split without flash attention: CPU 177.55 MiB = 4 x (19 + 16) + 2 x 7.5
        # + 3 x 7.5 (tests/test_llamacpp_heldout15_logs.py)
        leaf_embd = ERAS.reached(ctx.build, "embd_input") and ctx.build >= SCHED_LEAF_INPUTS_BUILD
        out[-1] += extra * (mask_in + 2 * T * 4 + v_index_inputs(spec, ctx, caches) + (resid if leaf_embd else 0))
        for d, kept in fa_host_split_copies(spec, ctx, caches, placement, devices, s).items():
            out[d] = out.get(d, 0) + kept  # flash attention on the host: every layer's split inputs kept
    vk_big = vulkan_refused_logits_bytes(spec, ctx, caches, placement, devices, s)
    if vk_big is not None:  # logits too large for the Vulkan device: on the CPU, replayed
        out[0], out[-1] = vk_big
    nosg = metal_no_simdgroup_bytes(spec, ctx, caches, placement, devices, s)
    if nosg is not None:  # a Metal device without simdgroup reduction: its products on the CPU, replayed
        out[0], out[-1] = nosg
    mean = mean_pooling_input(spec, ctx, s)
    if mean:  # --pooling mean before PR #14217: the T x T mean input held to the graph's end, the logits above it
        out[-1] += mean
        if len(whole) == 1 and placement.output_device >= 0 and placement.output_device in attending:
            d = placement.output_device
            out[d] = max(out[d], p.inputs + 2 * T * 4 + mean + spec.n_vocab * reserved_outputs(ctx, s) * 4)
    out.update(vulkan_pipeline_split(spec, ctx, caches, placement, devices, s))  # the devices' splits, replayed
    rp = repacked_layers_compute(spec, ctx, caches, placement, devices, s)
    if rp is not None:  # CPU layers in CPU_AARCH64 (before b4936): their products on the CPU, replayed
        out[0], out[-1] = rp[0], max(out.get(-1, 0), rp[-1])
    tok = sycl_offloaded_token_rows(spec, ctx, placement, devices, s)
    if tok is not None:  # the token embeddings gathered on a SYCL device (b4040-b4219): the table copied in
        d, table, rows = tok
        out[d] = out.get(d, 0) + table
        out[-1] = max(0, out.get(-1, 0) - rows)
    blas = blas_compute_bytes(spec, ctx, placement, devices, s)
    if blas:  # host weights' products on the BLAS backend, its own buffer (printed as CPU)
        out[BLAS_KEY] = blas
    return out


# the pre-refactor graph that sched_replay.llama_graph's kv_first replays (src/llama.cpp build_llama / llm_build_kv /
# llm_build_ffn, read at b4777, 401af80b); PR #12181 (e0dbec0b, b4881) moved it to llama-graph.cpp
KV_FIRST_GRAPH_UNTIL = 4881
# the offload_op of ggml-vulkan and ggml-cuda (ggml_backend_vk_device_offload_op: ne[1] >= 32, not GET_ROWS;
# ggml_backend_cuda_device_offload_op: get_op_batch_size >= 32): the least rows of an op a host weight's op offload takes
_OFFLOAD_BACKENDS = ("vulkan", "cuda", "rocm")


def repacked_layers_compute(spec: ModelSpec, ctx: Context, caches: list[Cache], placement: Placement,
                            devices: tuple[Device, ...], s) -> dict[int, int] | None:
    """The compute buffers (the device's and the host's, -1) of a partly offloaded load whose CPU layers' matrices
    sit in CPU_AARCH64 (repack_applies before b4936): that buffer type is not host memory (ggml-cpu-aarch64.cpp: its
    is_host is NULL), so ggml_backend_sched_backend_id_from_cur's op offload (ggml-backend.cpp, `src_backend_id ==
    n_backends - 1 && ggml_backend_buffer_is_host(src->buffer)`) passes over their products, which stay on the
    CPU ('1.wgt'), while the norms' MULs (F32 weights in a host buffer) go to the device ('1.off'). A split then
    starts at each offloaded norm (pass 5: a weight of another backend once the split has inputs), six a CPU layer,
    and the CPU runs each CPU layer's Q/K/V, the cache stores, KQ (n_kv x T x n_head F32), the softmax, KQV and wo,
    then the FFN: sched_replay.llama_graph (kv_first, the b4777 graph) scheduled and allocated for both buffers.
    llama.cpp#11204 (b4777, CodeLlama-13B Q4_0 on a Renoir iGPU through Vulkan, 27 of 40 layers, 4096 cells): 'graph
    splits = 82 (with bs=512)' as replayed, Vulkan_Host 358.01 and Vulkan0 368.00 MiB exact (28.00 before: op
    offload had every CPU-layer product on the device). Where it holds: one Vulkan or ggml-cuda device beside the
    CPU, a dense Llama without biases, one F16 cache on the layers' devices, no flash attention, one sequence, a
    ubatch of at least 32 tokens, no tensor overrides, b4282-b4880 (x86 Q4_0 repacking; the pre-refactor graph);
    None elsewhere."""
    build = ctx.build
    if not devices or build >= KV_FIRST_GRAPH_UNTIL or len(devices) != 1 or spec.architecture != "llama":
        return None
    if infer_backend(devices, s.backend).name not in _OFFLOAD_BACKENDS \
            or not repack_applies(devices, s.no_host, s.repack, s.backend, build):
        return None
    T = min(ctx.n_ctx, ctx.n_ubatch)
    host_layers = {i for i, d in enumerate(placement.layer_device) if d < 0}
    if not host_layers or not set(placement.layer_device) <= {-1, 0} or placement.output_device not in (-1, 0) \
            or T < 32 or ctx.flash_attn or s.no_kv_offload or len(caches) != 1 or caches[0].name == "SWA" \
            or max(1, ctx.n_seq_max, ctx.n_stream) != 1 or ctx.type_k.name != "f16" or ctx.type_v.name != "f16" \
            or s.override_tensor or s.cpu_moe or s.n_cpu_moe:
        return None
    ok, (_, biases) = _llama_names(spec, False)
    if not ok or biases:
        return None
    on_host = [t for t in spec.weights.tensors
               if t.layer in host_layers or t.layer is None and placement.output_device < 0
               and t.name.startswith(("output.", "output_norm."))]
    repacked = frozenset(t.name for t in on_host if repackable(t, s.cpu_isa, build))
    if not repacked:
        return None
    vk = infer_backend(devices, s.backend).name == "vulkan"  # ggml_nbytes in a Vulkan buffer (vulkan_unpadded)
    host = {t.name: t.nbytes if vk else gpu_alloc_size(t) for t in on_host if t.name not in repacked}
    n_outputs = reserved_outputs(ctx, s)

    def build_graph() -> sched_replay.Graph:
        return sched_replay.llama_graph(spec, T, n_outputs, caches[0].cells, host, host_layers, False,
                                        cpy_store=True, kv_first=True, repacked=repacked,
                                        host_output=placement.output_device < 0)

    host_bytes = galloc.peak_bytes(0, sched_replay.device_nodes(build_graph(), backend=sched_replay.HOST))
    device_bytes = galloc.peak_bytes(0, sched_replay.device_nodes(build_graph()), galloc.ALIGN if vk else 128)
    return {0: device_bytes, -1: host_bytes}
