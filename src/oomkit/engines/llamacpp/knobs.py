"""The knobs the planner may turn for llama.cpp, by llama.cpp's own options.

- weights: the GGUF file types the common GGUF repos publish (unsloth, bartowski, ggml-org), best first;
- KV cache: -ctk/-ctv f16, q8_0, q4_0; a quantized V cache needs flash attention (llama-context.cpp: "V cache
  quantization requires flash_attn"), so the quantized types come with -fa on. A quantized K cache alone does not
  (K_CACHE_FLAG: -ctk q8_0 / q4_0 with an f16 V), so where flash attention is off (before -fa existed, typed -fa
  off, or off by default before PR #15434) -ctk alone comes first: one flag, the V cache and attention path as run;
- parallel slots: -np N for N concurrent sequences, n_ctx = N x the context of one (each stream gets n_ctx / N
  cells: llama-kv-cache.cpp, per-sequence streams since b5913);
- several GPUs: --tensor-split in proportion to each GPU's memory when they differ (llama.cpp's default split
  follows the free memory of each device: llama-model.cpp load_tensors);
- the second tier: MoE expert tensors to the CPU first (--n-cpu-moe N, what llama.cpp's --fit moves first), else
  fewer layers on the GPU (-ngl N).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from ...memory import Device
from ...model import catalog, names
from ...model.archs import FLASH_ATTN_FORCED_OFF
from ...model.spec import LayerKind, ModelSpec
from ...quant import ggml
from ..base import Choice
from .kv import cache_head_k
from .settings import ERAS, LlamaCppSettings, build_number, flash_attn_mode

# The file types GGUF repos publish for most models, best quality first (llama-quantize's names).
GGUF_LADDER = ("BF16", "Q8_0", "Q6_K", "Q5_K_M", "Q4_K_M", "IQ4_XS", "Q3_K_M", "IQ3_XXS", "Q2_K", "IQ2_XXS")
KV_TYPES = ("f16", "q8_0", "q4_0")

# The first build whose program takes -ctk (the K cache type alone, V left f16), by LlamaCppSettings.program. PR #4309
# "per-layer KV cache + quantum K cache" (bcc0eb45, 2023-12-07, b1619) added -ctk / -ctv to common.cpp
# gpt_params_parse (main, llama-bench) with the f32 -> q8_0 / q4_0 / q4_1 copy kernels of the CPU, CUDA and Metal
# backends: K is stored row by row and read by ggml_mul_mat, so it runs without flash attention (only the V cache is
# stored transposed: b3062's llama_new_context_with_model, PR #7527, refuses a quantized V without -fa, and it still
# does in llama-context.cpp llama_init_from_model; a quantized K alone is never refused). The server kept its own
# parser, which exits on an unknown argument, until PR #5684 "server : add KV cache quantization options" (fd43d66f,
# 2024-02-23, b2251); llama-cpp-python's Llama(type_k=, type_v=) came with its 0.2.58 (PR #1307, 2024-04-01),
# which vendors llama.cpp ba0c7c70 (b2578).
K_CACHE_FLAG = {"llama-server": 2251, "llama-cpp-python": 2578}
K_CACHE_FLAG_DEFAULT = 1619


def is_moe(spec: ModelSpec) -> bool:
    return any(t.is_expert for t in spec.weights.tensors)


def tensor_split(devices: tuple[Device, ...]) -> tuple[float, ...]:
    """--tensor-split proportions for GPUs of unequal memory (empty: equal GPUs, llama.cpp's default split)."""
    sizes = [d.memory_bytes for d in devices]
    if len(devices) < 2 or None in sizes or len(set(sizes)) == 1:
        return ()
    return tuple(round(s / (1 << 30)) or 1 for s in sizes)  # whole GiB: readable, and proportions are all it uses


def knobs(model: str, spec: ModelSpec, devices: tuple[Device, ...], base: LlamaCppSettings, *, concurrency: int = 1,
          fixed_format: bool = False, reserve_bytes: int = 0, nodes: int = 1) -> Iterator[Choice]:
    local = Path(model).expanduser().exists()
    formats = (spec.weights.format,) if fixed_format or local else _formats(spec)
    repo = None if local else gguf_repo(model)
    split = tensor_split(devices)
    build = build_number(base.engine_version)
    offload = _offload(spec, build)
    caches = _caches(spec, base, build)
    for fmt in formats:
        for kv_k, kv_v in caches:
            s = replace(base, cache_type_k=kv_k, cache_type_v=kv_v, n_parallel=concurrency,
                        kv_unified=base.kv_unified if concurrency > 1 else False)
            if kv_v != "f16":
                s = replace(s, flash_attn="on")
            if split and not base.tensor_split:
                s = replace(s, tensor_split=split)
            if base.n_gpu_layers == -1 and devices:
                # every layer on the GPUs, typed: with -c typed too, --fit (on by default) changes nothing
                # (common_params_fit_impl: "n_gpu_layers already set by user"), so the command loads as planned
                s = replace(s, n_gpu_layers=spec.n_trunk_layers + 1)
            kv = kv_k if kv_k == kv_v else f"{kv_k} K / {kv_v} V"
            label = f"{fmt} weights, {kv} KV" + (", flash attention on" if s.flash_attn == "on" else "")
            yield Choice(s, label, quant=None if local else fmt, model=repo, offload=offload,
                         context_factor=concurrency, offload_experts=offload[0] == "n_cpu_moe")


def _caches(spec: ModelSpec, base: LlamaCppSettings, build: int) -> tuple[tuple[str, str], ...]:
    """(-ctk, -ctv) pairs, least changed first: f16; where flash attention is off, a quantized K alone (one flag, the
    V cache and attention path as the command runs them); then K and V quantized with -fa on (a quantized V cache
    needs flash attention: none before the build has -fa)."""
    out = [("f16", "f16")]
    fa_off = not ERAS.reached(build, "flag_flash_attn") or spec.architecture in FLASH_ATTN_FORCED_OFF or \
        flash_attn_mode(base, build) in ("off", "0", "false", "disabled")
    if fa_off and _k_alone_runs(spec, base, build):
        out += [(t, "f16") for t in KV_TYPES[1:]]
    if ERAS.reached(build, "flag_flash_attn"):
        out += [(t, t) for t in KV_TYPES[1:]]
    return tuple(out)


def _k_alone_runs(spec: ModelSpec, base: LlamaCppSettings, build: int) -> bool:
    """Whether the program takes -ctk at this build and the model's K cache may differ from its V cache."""
    if build < K_CACHE_FLAG.get(base.program, K_CACHE_FLAG_DEFAULT):
        return False
    # an MLA GGUF's latent cache is one tensor for K and V (ERAS mla_latent; kv.py refuses different types), as are
    # K-only caches; K rows are cut per head, which a quantized block must divide (b1619's GGML_ASSERT on
    # n_embd_head % ggml_blck_size(type_k); llama-context.cpp llama_init_from_model checks it under -fa auto)
    blocks = {ggml.type_by_name(t).block_size for t in KV_TYPES[1:]}
    for layer in spec.trunk_layers:
        a = layer.attention
        if a is None:
            continue
        if ((layer.kind is LayerKind.LATENT and a.latent_cache) or a.k_only) and ERAS.reached(build, "mla_latent"):
            return False
        if any(cache_head_k(a) % b for b in blocks):
            return False
    return True


def gguf_repo(model: str) -> str:
    """The GGUF repo a -hf flag names for `model`: the one the user named, else unsloth's conversion of the published
    checkpoint (`unsloth/<name>-GGUF`, which carries every type of GGUF_LADDER for the models it converts)."""
    if model.lower().endswith(("-gguf", "_gguf")) and "/" in model:
        return model
    hf_id = catalog.base_hf_id(model)
    if hf_id is None:  # a derivative names its base: Qwen/Qwen3-8B-AWQ -> Qwen/Qwen3-8B
        derived = names.derive(model)
        hf_id = derived.base_hf_id if derived else model
    return f"unsloth/{hf_id.rsplit('/', 1)[-1]}-GGUF"


def _formats(spec: ModelSpec) -> tuple[str, ...]:
    """The ladder, from the model's own unquantized type down (a model published in F16 starts at F16)."""
    top = "F16" if spec.weights.format.upper() == "F16" else "BF16"
    return (top, *GGUF_LADDER[1:])


def _offload(spec: ModelSpec, build: int) -> tuple[str, tuple[Any, ...]]:
    n = spec.n_trunk_layers
    if is_moe(spec) and ERAS.reached(build, "flag_n_cpu_moe"):
        # --n-cpu-moe N: the expert tensors of the first N layers stay in system RAM
        return "n_cpu_moe", tuple(range(0, n + 1))
    return "n_gpu_layers", tuple(range(n + 1, -1, -1))  # -ngl N: N layers on the GPU (the output layer first)


def relief(s: LlamaCppSettings, effective: dict[str, Any] | None = None) -> Iterator[tuple[str, Any, str]]:
    """Moves that cost no context: --swa-full keeps a full-context cache for sliding-window layers
    (llama-kv-cache-iswa.cpp: the SWA cache is sized n_ctx instead of the window); a -ub above the default 512
    grows every compute buffer (llama-context.cpp graph_reserve at n_ubatch tokens)."""
    if s.swa_full:
        yield "swa_full", False, "sliding-window layers keep only their window (no --swa-full)"
    if s.n_ubatch > 512:
        yield "n_ubatch", 512, "a smaller compute buffer (-ub 512, llama.cpp's default)"
