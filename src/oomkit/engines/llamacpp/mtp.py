"""--spec-type draft-mtp: the model's own next-n (MTP) block drafts, in a second context on the same weights.

Mirrors ggml-org/llama.cpp at the newest read (common/speculative.cpp common_speculative_init_result and
common_base_params_to_speculative, common/common.cpp common_model_params_to_llama and the fit's
common_fit_extra_model, tools/server/server-context.cpp load_model), measured on llama-cpp-python 0.3.36's build:

- weights: the main model loads the next-n block (mparams.load_mtp; without it the loaders mark it TENSOR_SKIP),
  placed as the layer it is (weights.loaded_tensors);
- the MTP context (cparams.ctx_type = LLAMA_CONTEXT_TYPE_MTP, ctx_other = the target): the main context's n_ctx
  (llama_n_ctx(ctx_tgt)) and sequences, -ctkd / -ctvd for its cache, n_rs_seq 0, n_outputs_max = n_parallel.
  llama_model::create_memory gives it a KV cache of the next-n layers alone (a plain attention cache on the
  hybrid Qwen3.5 / 3.6 / Next, no recurrent state), each on its layer's device;
- its compute buffer: the MTP graph, one decoder block fed the target's hidden state (enorm / hnorm, the 2 x n_embd
  concat and eh_proj), sized by the same worst-case ubatch; its output buffer as the main one's. Modelled as the
  main graph's phases over the next-n block (measured: 0.90-1.06 of llama.cpp's on Qwen3.5-MoE and DeepSeek-V4
  shapes, 1.10-1.16 on GLM-4.5-Air's MoE block with flash attention, tests/test_llamacpp_mtp_draft.py);
- by build: the type is refused before b9180 (PR #22673); the cache held every layer on some architectures until
  they were filtered (MTP_ERAS); --fit counts the context from b9304 (fit.FIT_ERAS).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ...errors import SettingsError
from ...memory import Device
from ...model.archs import DSV4_ARCHS
from ...model.spec import ModelSpec
from ...quant import ggml
from ..versions import Eras
from .compute import BLAS_KEY, compute_by_device, output_buffer_bytes
from .kv import Cache, Context, kv_caches, resolve_context
from .settings import ERAS, MTP_SPEC_TYPES, LlamaCppSettings, build_number, loads_mtp
from .weights import Placement, place_layers

# The MTP context's cache held every layer (trunk and next-n) on architectures create_memory did not filter yet:
# PR #24125 "fix: step35 MTP does not allocate KV cache for all layers" (merged as 0dbfa66a1 on 2026-06-04: b9512;
# its log: 12 + 36 layers before, 0 + 3 after); PR #28630 "model : fix MTP context kv cache allocation for
# deepseek2, glm4moe, c..." (issue #28626 at b10820, 2026-09-09: "allocating 93x the space" on GLM-4.6; its table:
# glm4moe 786432 B at a 2-layer trunk, 2359296 B at 8, 262144 B after) is past the builds oomkit dates by number,
# so the newest source's rule at settings.NEWEST (settings.NEWEST_PLACED)
MTP_ERAS = Eras({"step35_nextn_kv": 9512, "nextn_kv": 9999})
_UNFILTERED_UNTIL = {"step35": "step35_nextn_kv", "deepseek2": "nextn_kv", "glm4moe": "nextn_kv",
                     "cohere2moe": "nextn_kv"}

# Architectures with an MTP graph (src/models/<arch>.cpp graph_mtp, llama-cpp-python 0.3.36's build: step35, qwen35,
# qwen35moe, qwen3next, nemotron_h_moe, mimo2, hy_v3, glm_dsa, glm4_moe, cohere2moe, deepseek2, deepseek32, deepseek4,
# bailingmoe3; glm5-next's is "not implemented yet"), by their GGUF names
MTP_ARCHS = frozenset({"step35", "qwen35", "qwen35moe", "qwen3next", "nemotron_h_moe", "mimo2", "hy_v3", "glm-dsa",
                       "glm4moe", "cohere2moe", "deepseek2", "deepseek32", "deepseek4", "bailingmoe3"})


def mtp_context_on(s: LlamaCppSettings) -> bool:
    """Whether llama-server (or llama-cli, on the server context) creates the MTP context: a draft-mtp type and no
    -md / -hfd draft model (common_speculative_init_result: a draft model is loaded instead)."""
    return (loads_mtp(s) and not (s.model_draft or s.hf_repo_draft)
            and s.program in ("llama-server", "llama-cli"))


def check(spec: ModelSpec, s: LlamaCppSettings) -> None:
    """What llama.cpp refuses: the type before its build, a model without next-n layers or without an MTP graph."""
    if not loads_mtp(s):
        return
    build = build_number(s.engine_version)
    kind = next(t for t in s.spec_type if t.startswith("draft-mtp"))
    if not ERAS.reached(build, "spec_mtp"):
        raise SettingsError(f"--spec-type {kind}: llama.cpp builds before b{ERAS['spec_mtp']} (PR #22673) have no "
                            "MTP drafting")
    if not mtp_context_on(s):
        return
    if not spec.n_nextn_layers:
        raise SettingsError(f"--spec-type {kind}: {spec.name} has no next-n (MTP) layers (nextn_predict_layers 0); "
                            "llama.cpp fails to create the MTP context")
    if spec.architecture not in MTP_ARCHS:
        raise SettingsError(f"--spec-type {kind}: llama.cpp has no MTP graph for {spec.architecture}")


def nextn_view(spec: ModelSpec) -> ModelSpec:
    """The model as the MTP context sees it: its next-n layers alone (their own indices), no layer behind them."""
    return replace(spec, layers=spec.layers[spec.n_trunk_layers:], n_nextn_layers=0)


def _dsv4_caches(view: ModelSpec, ctx: Context) -> list[Cache]:
    """DeepSeek-V4's MTP context (measured on llama-cpp-python 0.3.36's build: "0 layers" then "1 layers" at n_ctx
    cells, K 4.00 / V 4.00 MiB at 4096 cells f16): an empty non-SWA cache and one holding the next-n layer's K and
    V rows (head_dim each) at every cell of every stream, none of the main context's windows or compressed caches."""
    cells = ctx.n_ctx if ctx.kv_unified else ctx.n_ctx_seq
    kb = {la.index: ggml.row_bytes(ctx.type_k, la.attention.head_dim_k) * cells * ctx.n_stream
          for la in view.layers if la.attention is not None}
    vb = {la.index: ggml.row_bytes(ctx.type_v, la.attention.head_dim_v) * cells * ctx.n_stream
          for la in view.layers if la.attention is not None}
    return [Cache("non-SWA", cells, (), 0, 0), Cache("SWA", cells, tuple(sorted(kb)), sum(kb.values()),
                                                     sum(vb.values()), kb, vb)]


def mtp_settings(s: LlamaCppSettings, n_ctx_main: int) -> LlamaCppSettings:
    """common_base_params_to_speculative + common_speculative_init_result: the command's parameters with the draft's
    cache types, the target's n_ctx, n_rs_seq 0, and n_outputs_max = n_parallel (result.n_outputs_max =
    params.n_parallel; compute.reserved_outputs reads it as a server context with no draft length: its MTP types
    kept, n_max 0; chained MTP's n_parallel x n_max rows, LLAMA_SPEC_CHAIN, are not modelled)."""
    return replace(s, n_ctx=n_ctx_main, cache_type_k=s.cache_type_k_draft, cache_type_v=s.cache_type_v_draft,
                   n_rs_seq=0, embeddings=False, spec_type=tuple(t for t in s.spec_type if t in MTP_SPEC_TYPES),
                   spec_draft_n_max=0)


@dataclass(frozen=True)
class MtpContext:
    """The MTP context's buffers: KV per device (-1 = the CPU), compute per device, output (host)."""

    ctx: Context
    caches: tuple[Cache, ...]
    kv: dict[int, int]
    compute: dict[int, int]
    output: int

    def breakdown(self, n_devices: int) -> tuple[tuple[int, int], ...]:
        """(context, compute) per device, then the host: the rows common_get_device_memory_data measures for it."""
        host = sum(b for d, b in self.compute.items() if d < 0)  # the CPU backend's and BLAS's (BLAS_KEY)
        return (*((self.kv.get(i, 0), self.compute.get(i, 0)) for i in range(n_devices)), (self.kv.get(-1, 0), host))


def mtp_context(spec: ModelSpec, devices: tuple[Device, ...], s: LlamaCppSettings, n_ctx_main: int,
                placement: Placement) -> MtpContext | None:
    """The MTP context llama.cpp creates beside the main one, or None without it."""
    check(spec, s)
    if not mtp_context_on(s):
        return None
    view = nextn_view(spec)
    ms = mtp_settings(s, n_ctx_main)
    ctx = resolve_context(view, ms)
    caches = _dsv4_caches(view, ctx) if spec.architecture in DSV4_ARCHS else kv_caches(view, ctx, ms.swa_full)
    era = _UNFILTERED_UNTIL.get(spec.architecture)
    # the cache as allocated (every layer before the filter); the graph attends over the next-n layer's own
    held = (kv_caches(replace(spec, n_nextn_layers=0), ctx, ms.swa_full)
            if era and not MTP_ERAS.reached(ctx.build, era) else caches)
    kv: dict[int, int] = {}
    for c in held:
        for il in c.layers:
            d = -1 if s.no_kv_offload else placement.layer_device[il]
            kv[d] = kv.get(d, 0) + c.k_bytes_by_layer[il] + c.v_bytes_by_layer[il]
    # the graph runs where its layer is: the next-n layers' devices, the logits on the output layer's; pipeline
    # parallelism as the main context's (the same model: every layer offloaded, llama_context's condition)
    full = placement.n_gpu_layers > spec.n_layers
    here = Placement(tuple(placement.layer_device[la.index] for la in view.layers), placement.output_device,
                     view.n_layers + 1 if full else 0)
    compute = compute_by_device(view, ctx, caches, here, devices, ms)
    return MtpContext(ctx, tuple(held), kv, compute, output_buffer_bytes(spec, ctx, ms))


def engine_view(m: MtpContext, devices: tuple[Device, ...]) -> dict[str, Any]:
    """The MTP context's start-up lines (llama_context / llama_kv_cache / sched_reserve of the second context)."""
    def name(d: int) -> str:
        return "CPU" if d < 0 else devices[d].id

    host = "CPU" if not devices else f"{devices[0].id}_Host"
    return {
        "mtp_n_ctx": m.ctx.n_ctx,
        "mtp_type_k": m.ctx.type_k.name,
        "mtp_type_v": m.ctx.type_v.name,
        "mtp_kv_buffer_bytes": {name(d): b for d, b in sorted(m.kv.items())},
        "mtp_kv_caches": [{"name": c.name, "cells": c.cells, "layers": len(c.layers), "k_bytes": c.k_bytes,
                           "v_bytes": c.v_bytes} for c in m.caches],
        "mtp_compute_buffer_bytes": {("CPU" if d == BLAS_KEY else host if d < 0 else name(d)): b
                                     for d, b in sorted(m.compute.items())},
        "mtp_output_buffer_bytes": m.output,
    }


def mtp_dry_run(spec: ModelSpec, devices: tuple[Device, ...], s: LlamaCppSettings,
                n_ctx: int) -> tuple[tuple[int, int], ...]:
    """The fit's dry run of the MTP context at a context (common_fit_extra_model: the extra's own parameters, the
    command's -ngl / -ts as typed, at the candidate n_ctx): (context, compute) per device, then the host."""
    m = mtp_context(spec, devices, replace(s, n_ctx=n_ctx), n_ctx, place_layers(spec, devices, s))
    return m.breakdown(len(devices)) if m is not None else tuple((0, 0) for _ in range(len(devices) + 1))
