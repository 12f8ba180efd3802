"""The buffers llama.cpp sizes by running a graph: the compute buffers (graph_reserve of a worst-case ubatch,
ggml-alloc's peak per backend) and the output buffer (logits)."""

from __future__ import annotations

from dataclasses import dataclass

from ...memory import Device
from ...model.spec import ModelSpec
from .kv import Cache, Context, attention_layers
from .settings import ERAS, LlamaCppSettings, build_number
from .weights import Placement


def output_buffer_bytes(spec: ModelSpec, ctx: Context, s: LlamaCppSettings) -> int:
    # llama_context::output_reserve(n_seq_max): (n_vocab [+ n_embd with embeddings]) * n_seq_max floats
    per_output = spec.n_vocab + (spec.n_embd if s.embeddings else 0)
    return per_output * max(1, ctx.n_seq_max) * 4


# ---------------------------------------------------------------------------------------------------------
# Compute buffers (measured by llama.cpp: graph_reserve of a worst-case ubatch, ggml-alloc peak per backend)


@dataclass(frozen=True)
class ComputePhases:
    """The two candidate peaks of the worst-case graph (see compute_phases)."""

    output: int  # logits of every token, plus the hidden-state rows around them
    attention: int  # the largest layer workspace, masks included
    inputs: int  # what the CPU side keeps for a fully offloaded graph: the input rows and the masks


def reserved_outputs(ctx: Context, s: LlamaCppSettings) -> int:
    """The logits rows the worst-case graph reserves. Before PR #23861 ("llama: limit max outputs of
    llama_context", merged 2026-06-01) every token of the ubatch; since, at most n_outputs_max, which
    llama-server and llama-cli (built on the server context since late 2025) set to n_seq_max, the logs printing
    `llama_context: n_outputs_max = 1`; the library default (0 = n_batch) keeps every token for the other
    programs and the Python binding."""
    T = min(ctx.n_ctx, ctx.n_ubatch)
    if ERAS.reached(ctx.build, "outputs_max") and s.program in ("llama-server", "llama-cli") and not s.embeddings:
        return min(T, max(1, ctx.n_seq_max))
    return T


def compute_phases(spec: ModelSpec, ctx: Context, caches: list[Cache], n_outputs: int | None = None
                   ) -> ComputePhases:
    """Peak of the worst-case ubatch graph: llama_context::graph_reserve builds it with
    n_tokens = min(n_ctx, n_ubatch) and every token an output, and ggml-alloc sizes each backend's buffer to the
    most tensors alive at once. The live set is modelled at its two candidate peaks, fitted to llama.cpp's own
    "compute buffer size" lines (tests/test_groundtruth_llamacpp.py; within a few percent):

    - output: the logits of every token (n_vocab x T floats) and two hidden-state rows;
    - attention: without flash attention the KQ scores (n_kv x T x n_head floats, softmax in place) and the
      f32 masks; with it, f16 masks only; plus Q, K, V, the attention output and three hidden-state rows.
      The reserve sizes n_kv to the whole cache (llama_kv_cache::init_full), so this grows with n_ctx.
      MLA (absorbed, src/models/deepseek2.cpp) holds the absorbed query and the latent output per head.
    """
    T = min(ctx.n_ctx, ctx.n_ubatch)
    f32 = 4
    resid = spec.n_embd * T * f32
    # the logits rows (reserved_outputs: every token of the ubatch unless the build reserves fewer)
    out_phase = spec.n_vocab * (T if n_outputs is None else n_outputs) * f32 + 2 * resid
    cells = {il: c.cells for c in caches for il in c.layers}
    masks = sum(c.cells * T * (2 if ctx.flash_attn else 4) for c in caches)  # one KQ mask per cache
    attn_phase = 0
    for layer in attention_layers(spec):
        a = layer.attention
        n_kv = cells.get(layer.index, 0)
        kq = 0 if ctx.flash_attn else n_kv * T * a.n_heads * f32
        if a.kv_lora_rank and a.latent_cache and ERAS.reached(ctx.build, "mla_latent"):
            inner = a.n_heads * T * f32 * (3 * a.kv_lora_rank + a.qk_rope_head_dim) + resid
        else:
            q = a.n_heads * a.head_dim_k
            inner = T * f32 * (q + 2 * a.n_kv_heads * a.head_dim_k + a.n_heads * a.head_dim_v) + 3 * resid
            if a.kv_lora_rank and ctx.flash_attn:
                # MLA without the latent cache: wkv_b's decompressed K_nope and V per head are still alive when
                # flash attention runs (fitted to the legacy-GGUF ground truth; without FA they are not)
                inner += a.n_heads * (a.qk_nope_head_dim + a.v_head_dim) * T * f32
        attn_phase = max(attn_phase, kq + inner)
    if attn_phase:
        attn_phase += masks
        if any(layer.recurrent is not None and layer.recurrent.kind != "short_conv" for layer in spec.layers):
            # hybrids: the recurrent layers' inputs are allocated after the masks and live to the end, so the
            # freed mask block cannot merge with the free tail and the logits go above it. Not LFM2's short
            # convolutions: its CPU figure is the plain logits phase at every context (tests/test_llamacpp_archs.py)
            out_phase += masks + resid
    if n_outputs is not None and n_outputs < T:
        # with few logits rows the feed-forward block's live set can be the peak: the gate and up projections
        # (every used expert's for MoE, the router's scores) and two hidden-state rows. Where every token is an
        # output the logits always exceed it (the CPU ground truth), so it is only weighed here.
        for layer in spec.trunk_layers:
            f = layer.ffn
            width = 2 * f.n_ff_expert * f.n_experts_used + f.n_experts + 2 * f.n_ff_shared if f.is_moe else 2 * f.n_ff
            attn_phase = max(attn_phase, width * T * f32 + 2 * resid)
    # the CPU side of an offloaded graph holds the graph inputs: the token embeddings and the KQ masks. The masks
    # are filled on the host as F32 and cast to F16 for flash attention on the device, until PR #23764 ("use f16
    # mask for FA to save VRAM", merged 2026-05-28) made the input itself F16 (ERAS kq_mask_f16)
    mask_in = masks if not ctx.flash_attn or ERAS.reached(ctx.build, "kq_mask_f16") else 2 * masks
    return ComputePhases(output=out_phase, attention=max(attn_phase, 3 * resid), inputs=resid + mask_in)


def compute_buffer_bytes(spec: ModelSpec, ctx: Context, caches: list[Cache]) -> int:
    """The compute buffer of a graph that runs on one backend (CPU only, or everything on one GPU)."""
    p = compute_phases(spec, ctx, caches)
    return max(p.output, p.attention)


# ggml-backend.cpp: GGML_SCHED_MAX_COPIES (default 4, a compile-time define) copies of every graph input and every
# split input when the scheduler runs pipeline-parallel (sched->n_copies = parallel ? GGML_SCHED_MAX_COPIES : 1)
SCHED_MAX_COPIES = 4
# PR #6017 "llama : add pipeline parallelism support" (merged 2024-03-13, about b2410)
PIPELINE_PARALLEL_BUILD = 2410
# backends whose devices report async compute and events (ggml_backend_dev_props caps): CUDA, its HIP build, and
# Vulkan / SYCL; the RPC backend reports neither (ggml-rpc.cpp ggml_backend_rpc_device_get_props)
_ASYNC_EVENTS = ("CUDA", "ROCm", "HIP", "Vulkan", "SYCL")


def pipeline_parallel(spec: ModelSpec, placement: Placement, devices: tuple[Device, ...],
                      s: LlamaCppSettings) -> bool:
    """llama_context::llama_context (llama-context.cpp, since PR #6017): pipeline parallelism when the model
    spans more than one device, every layer and the output layer are offloaded, -sm layer, the KV cache is
    offloaded, no tensor is overridden (-ot, --cpu-moe, --n-cpu-moe, and the overrides --fit writes), and every
    device supports async compute and events."""
    if build_number(s.engine_version) < PIPELINE_PARALLEL_BUILD:
        return False
    if len(devices) < 2 or placement.n_gpu_layers <= spec.n_layers or s.split_mode != "layer" or s.no_kv_offload:
        return False
    if s.override_tensor or s.cpu_moe or s.n_cpu_moe:
        return False
    return all(d.id.startswith(_ASYNC_EVENTS) for d in devices)


def compute_by_device(spec: ModelSpec, ctx: Context, caches: list[Cache], placement: Placement,
                      devices: tuple[Device, ...], s: LlamaCppSettings) -> dict[int, int]:
    """Per backend (-1 = the CPU side): a device that runs layers needs the layer workspace, the one that
    holds the output layer the logits too; the CPU side of an offloaded graph keeps its input rows.

    Pipeline parallelism (see pipeline_parallel) keeps SCHED_MAX_COPIES copies of each input, each marked input
    and output so that ggml-alloc never reuses it (ggml_backend_sched_split_graph): on the CPU the graph inputs
    (the KQ masks, token ids, positions), on each device its split inputs (the masks, the positions and the
    hidden state handed over from the device before, or the token embeddings on the first)."""
    p = compute_phases(spec, ctx, caches, reserved_outputs(ctx, s))
    if not devices:
        return {-1: max(p.output, p.attention)}
    out: dict[int, int] = {}
    for d in sorted(set(placement.layer_device) | {placement.output_device}):
        need = p.attention if d in placement.layer_device else 0
        if d == placement.output_device:
            need = max(need, p.output)
        out[d] = need
    out[-1] = max(out.get(-1, 0), p.inputs)
    if pipeline_parallel(spec, placement, devices, s):
        T = min(ctx.n_ctx, ctx.n_ubatch)
        masks = p.inputs - spec.n_embd * T * 4
        extra = SCHED_MAX_COPIES - 1
        for d in out:
            if d >= 0:
                out[d] += extra * (masks + spec.n_embd * T * 4 + T * 4)
        out[-1] += extra * (masks + 2 * T * 4)
    return out
