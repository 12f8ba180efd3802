"""SGLang (`python -m sglang.launch_server`, `sglang serve`): what it really allocates, per GPU.

SGLang loads the weights, then gives the KV cache everything that is free except a slice of the memory that was
free *before* the weights loaded:

    rest = free_after_weights - free_before_weights * (1 - mem_fraction_static)
    max_total_num_tokens = int(rest // cell_size) // page_size * page_size

Each rule below was read in SGLang's own source, in the PyPI wheels of 0.4.6.post5, 0.4.7, 0.4.8, 0.4.10,
0.5.1-0.5.10, 0.5.14, 0.5.18, 0.5.20 and 0.5.23 (the newest), and is cited as `file:function`. The file moved
over time: 0.4.x-0.5.2 `model_executor/model_runner.py:ModelRunner.profile_max_num_token/init_memory_pool`;
0.5.3-0.5.13 `model_executor/model_runner_kv_cache_mixin.py`; 0.5.14+ `model_executor/pool_configurator.py` and
`mem_cache/kv_cache_configurator.py:KVCacheConfigurator._profile_available_bytes`. Defaults live in
`server_args.py:ServerArgs._handle_gpu_memory_settings` (0.5.20+: `arg_groups/memory_hook.py`).
Behaviour that changed is keyed on `engine_version` (default the newest), see ERAS; a boundary is the first
release read that has the new rule.

SGLang prints "GB" but divides by 2**30 (`get_available_gpu_memory` returns free / (1 << 30); `GB = 1 << 30` in
`mem_cache/memory_pool.py`), so every printed size here is GiB.

The estimate runs SGLang's start-up in its order: _derive_context_length, get_pp_indices, load_model (weights per
pipeline stage), init_memory_pool (a pool per stage, cut to the smallest), then what each GPU holds, the figures
SGLang prints (engine_view) and the settings in force.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from ...errors import OomkitError
from ...memory import Device, LayerUse, MemoryEstimate, Usage
from ...model.spec import LayerSpec, ModelSpec
from ...quant.dtypes import FLOAT_BYTES
from ...units import GiB, MiB
from .. import _tp
from ..versions import Version
from .args import flag_of
from .cluster import node_totals, rank_name
from .draft import Draft, draft_worker
from .draft import graph_bytes as draft_graph_bytes
from .draft import pool_bytes as draft_pool_bytes
from .draft import pool_tokens as draft_pool_tokens
from .kv import (
    CacheLayout,
    NotEnoughMemory,
    Pool,
    cache_layout,
    cell_size,
    check_fp4_kv,
    dsa_raw_latent,
    elem_bytes,
    kv_pools,
    kv_row,
    mamba_cache_per_req,
    max_running_requests,
    resize_pool,
    resolve_nvfp4_backends,
    row_bytes,
    size_pool,
    swa_window,
    token_charge_swa,
)
from .lora import pool_bytes as lora_pool_bytes
from .lora import sized as lora_sized
from .phases import (
    PREFILL_GRAPH_OFF_ARCHS,
    after_prefill_capture,
    backend_init_bytes,
    capture_bs,
    cuda_graph_parts,
    eager_registry_bytes,
    flashinfer_fusion_bytes,
    gb,
    multimodal_prefill_graphs,
    prefill_graph_bytes,
    prefill_graph_tokens,
    prefill_output_row_bytes,
    startup_phases,
)
from .settings import (
    EAGLE_FAMILY,
    BackendChoice,
    BackendModel,
    Defaults,
    SGLangSettings,
    aiter_fraction,
    default_attention_backend,
    default_mem_fraction_static,
    dp_attention_chunk,
    gpu_platform,
    multimodal_off,
    parse_version,
    reached,
    runner_fraction,
    speculative_params,
    symm_mem_prealloc_bytes,
)
from .settings import algorithm as spec_algorithm
from .weights import (
    layer_rank_bytes,
    rank_weights,
    rope_cache_bytes,
    shared_experts_replicated,
    stage_tensors,
)

# Not printed by SGLang: memory already in use when it measures "free before the weights" (the "Load weight begin.
# avail mem" line; bootstrap.py measure_pre_model_load_memory). Labelled estimates, not engine rules:
# - every GPU: the driver's reserve that nvidia-smi counts in memory.total (H100: 81,559 MiB vs cudaMemGetInfo's
#   79.19 GiB, 0.46 GiB) plus the CUDA context (0.3 GiB, pytorch#107667; 0.51 GiB with torch 2.10, vLLM's
#   worker-init snapshot): 0.8 GiB;
# - tp*pp > 1, PCIe cards: the distributed init, "Init torch distributed ends. mem usage=0.13 GB" (QwQ-32B, 4x L4);
# - tp*pp > 1, NVLink data-centre GPUs: NCCL's NVLS/NVLink buffers, 1.7 GiB (DeepSeek-V4 on 8x H200: 140.40 GiB
#   total - 137.90 GiB free before load - 0.8; vLLM's TP2 H100 snapshot shows cuda_memory 2.01 GiB incl. context).
PRE_LOAD_OVERHEAD = int(0.8 * GiB)
DIST_INIT_OVERHEAD_PCIE = int(0.13 * GiB)
DIST_INIT_OVERHEAD_NVLINK = int(1.7 * GiB)


def pre_load_overhead(devices: tuple[Device, ...], world: int) -> int:
    """Bytes in use on each GPU before the weights load (see PRE_LOAD_OVERHEAD)."""
    if world <= 1:
        return PRE_LOAD_OVERHEAD
    # NVLink as the GPU catalog knows it; a GPU of 70 GiB or more without a name is taken for a data-centre part
    nvlink = all(d.nvlink or (d.memory_bytes or 0) >= 70 * GiB for d in devices)
    return PRE_LOAD_OVERHEAD + (DIST_INIT_OVERHEAD_NVLINK if nvlink else DIST_INIT_OVERHEAD_PCIE)


def free_before_load(d: Device, overhead: int) -> int | None:
    """What one rank finds free before the weights ("Load weight begin. avail mem"): model_runner.py
    init_torch_distributed takes it from get_available_gpu_memory, torch.cuda.mem_get_info's free bytes after the
    CUDA context and the distributed init (min_per_gpu_memory 0.4.0-0.5.6, pre_model_load_memory 0.5.7-0.5.10;
    distributed/bootstrap.py measure_pre_model_load_memory 0.5.18), and profile_max_num_token takes that free memory
    as its total_gpu_memory, the least over the ranks (distributed=True all-reduces a MIN). Memory another process
    holds on the GPU when SGLang starts (a trainer colocated with the rollout engine, another server: the device's
    free_bytes below its memory_bytes) is not in it, so it shrinks the pool and its (1 - mem_fraction_static)
    reserve alike; server_args.py's GPU-size defaults read the card's capacity instead (capacity_mib)."""
    if d.memory_bytes is None:
        return None
    free = d.memory_bytes if d.free_bytes is None else min(d.free_bytes, d.memory_bytes)
    return free - overhead


def tp_memory_balance(frees: list[int | None], s: SGLangSettings, v: Version) -> str | None:
    """model_runner.py init_torch_distributed, "Check memory for tensor parallelism" (0.4.0-0.5.10; distributed/
    bootstrap.py _check_tp_memory_balance in 0.5.18): with --tp-size over 1, a rank whose own free memory times 0.9
    exceeds the least free memory of the ranks (min_per_gpu_memory < local_gpu_memory * 0.9) stops the start-up
    before the weights load: "The memory capacity is unbalanced. Some GPUs may be occupied by other processes."
    (ValueError to 0.5.6, RuntimeError from 0.5.7). GPUs of different sizes in one TP group, or another process on
    some of them (a colocated trainer's share, a Ray head), set it off. Each data-parallel replica checks its own
    tp x pp ranks (the draft worker is exempt from 0.5.x, not modelled here). The error, None when balanced.
    The environment variable that turns it into a warning: SGL_DISABLE_TP_MEMORY_INBALANCE_CHECK=1 (0.4.6-0.5.6),
    SGLANG_ENABLE_TP_MEMORY_INBALANCE_CHECK=0 (0.5.7+); none before 0.4.6 (settings.py ERAS)."""
    if s.tp_size <= 1:
        return None
    group = s.tp_size * s.pp_size
    for start in range(0, len(frees), group):
        ranks = [f for f in frees[start:start + group] if f is not None]
        if not ranks:
            continue
        least, local = min(ranks), max(ranks)
        if least < local * 0.9:
            if reached(v, "tp_balance_env_enable"):
                escape = "SGLANG_ENABLE_TP_MEMORY_INBALANCE_CHECK=0 makes it a warning"
            elif reached(v, "tp_balance_env_disable"):
                escape = "SGL_DISABLE_TP_MEMORY_INBALANCE_CHECK=1 makes it a warning"
            else:
                escape = "this release has no switch for it (0.4.6+ read one from the environment)"
            return ("The memory capacity is unbalanced. Some GPUs may be occupied by other processes. "
                          f"min_per_gpu_memory={least / GiB:.2f} GB, local_gpu_memory={local / GiB:.2f} GB, "
                          f"local_gpu_memory * 0.9={local * 0.9 / GiB:.2f} GB (model_runner.py "
                          f"init_torch_distributed; {escape}; free the memory other processes hold, or use GPUs "
                          "of one size)")
    return None


# ---------------------------------------------------------------------------------------------------------
# Before the weights: settings, context length, pipeline stages, GPUs


def _check_settings(s: SGLangSettings) -> None:
    if s.tp_size < 1 or s.dp_size < 1 or s.pp_size < 1:
        raise OomkitError("--tp-size, --dp-size and --pp-size must be at least 1")
    if s.mem_fraction_static is not None and not 0 < s.mem_fraction_static <= 1:
        raise OomkitError(f"--mem-fraction-static must be in (0, 1], got {s.mem_fraction_static}")
    if s.max_running_requests is not None and s.max_running_requests < 1:
        raise OomkitError(f"--max-running-requests must be at least 1, got {s.max_running_requests}")


def model_context_length(spec: ModelSpec, v: Version) -> int:
    """hf_transformers_utils.py get_context_length (the same in every release 0.4.0-0.5.23 read; utils/hf_transformers/
    common.py from 0.5.14): the model's length times config.rope_scaling's "factor", except where that dict carries
    original_max_position_embeddings (YaRN, Llama 3) or rope_type "llama3"; a dict without a factor counts 1. Unlike
    vLLM, no Gemma 3 exception (SGLang PR #20387, closed unmerged): 8 x 131,072 under transformers 4.x.
    From 0.5.10 SGLang pins transformers 5 (5.3.0), where config.rope_scaling is rope_parameters
    (configuration_utils.py): standardize_rope_params (modeling_rope_utils.py) puts original_max_position_embeddings
    into every llama3 / yarn / longrope dict, and a dict per layer type (Gemma3TextConfig moves rope_scaling under
    "full_attention") has no "factor" of its own, so both count 1."""
    rope = spec.rope_scaling
    factor = 1.0
    if rope is not None and rope.original_max_position_embeddings is None and rope.type != "llama3":
        factor = rope.factor or 1.0
        if rope.per_layer_type or (v >= (0, 5, 10) and (rope.type in ("yarn", "longrope")
                                                        or spec.architecture == "gemma3")):
            factor = 1.0  # (transformers 4.x reads no rope_parameters: no factor either)
    return int(factor * config_context_length(spec))


# hf_transformers_utils.py CONTEXT_LENGTH_KEYS ("The ordering here is important. Some models have two of these and we
# have a preference for which value gets used"): the same list in every release read from 0.3.6 to 0.5.23
# (utils/hf_transformers/common.py from 0.5.14); 0.3.4.post1 put max_position_embeddings third
CONTEXT_LENGTH_KEYS = ("max_sequence_length", "seq_length", "max_seq_len", "model_max_length", "max_position_embeddings")


def config_context_length(spec: ModelSpec) -> int:
    """get_context_length before the rope factor: the first of CONTEXT_LENGTH_KEYS the text config gives, 2048 where
    it gives none of them; a spec read from no config.json (a GGUF) has its n_ctx_train only. Unlike vLLM no minimum:
    Mistral Large 3's max_seq_len 262,144 is taken before its max_position_embeddings 294,912, a Command-R's
    model_max_length before its max_position_embeddings, and RoBERTa / XLM-R keep their padding rows (514, 8194)."""
    if not spec.config_lengths:
        return spec.n_ctx_train
    given = dict(spec.config_lengths)
    return next((given[k] for k in CONTEXT_LENGTH_KEYS if k in given), 2048)


def derive_context_length(spec: ModelSpec, s: SGLangSettings) -> int:
    """configs/model_config.py _derive_context_length."""
    derived = model_context_length(spec, parse_version(s.engine_version))
    if s.context_length is None:
        if not derived:
            raise OomkitError(f"{spec.name}: the model declares no context length; give --context-length")
        return derived
    if s.context_length <= 0:
        raise OomkitError(f"--context-length must be positive, got {s.context_length}")
    if derived and s.context_length > derived and not s.allow_overwrite_longer_context_len:
        raise OomkitError(
            f"ValueError: Warning: User-specified context_length ({s.context_length}) is greater than the derived "
            f"context_length ({derived}). This may lead to incorrect model outputs or CUDA errors. Note that the "
            "derived context_length may differ from max_position_embeddings in the model's config. To allow "
            "overriding this maximum, set the env var SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1")
    return s.context_length


def get_pp_indices(spec: ModelSpec, pp: int, v: Version | None = None) -> list[tuple[LayerSpec, ...]]:
    """distributed/utils.py get_pp_indices: layers split evenly, the last `remainder` stages one layer more (the
    last stage all of the remainder before PR #13282, ERAS pp_remainder_spread)."""
    trunk = spec.trunk_layers
    n = len(trunk)
    if pp < 1 or pp > n:
        raise OomkitError(f"--pp-size {pp}: must be between 1 and the {n} layers")
    base, rem = divmod(n, pp)
    if v is not None and not reached(v, "pp_remainder_spread"):
        sizes = [base] * (pp - 1) + [base + rem]
    else:
        sizes = [base + (1 if i >= pp - rem else 0) for i in range(pp)]
    out, start = [], 0
    for k in sizes:
        out.append(trunk[start:start + k])
        start += k
    return out


def _expand_devices(devices: tuple[Device, ...], n_gpus: int, nnodes: int = 1) -> tuple[Device, ...]:
    """One device per rank. With --nnodes N, the GPUs of one machine given (N x as many as that are needed) stand for
    each node's: --tp spans the machines' GPUs (cluster.py), as `plan --nodes N` takes --gpu per node."""
    if not devices:
        raise OomkitError("SGLang runs on GPUs: --cpu-only is not an SGLang configuration")
    if len(devices) == n_gpus:
        return devices
    if nnodes > 1 and len(devices) > 1 and len(devices) * nnodes == n_gpus:
        return tuple(replace(d, id=f"CUDA{k * len(devices) + i}") for k in range(nnodes) for i, d in enumerate(devices))
    if len(devices) == 1:
        d = devices[0]
        return tuple(replace(d, id=f"CUDA{i}") for i in range(n_gpus))
    if len(devices) < n_gpus:
        raise OomkitError(f"SGLang needs {n_gpus} GPUs for this --tp-size/--dp-size/--pp-size; {len(devices)} given")
    return devices[:n_gpus]


def backend_model(spec: ModelSpec, s: SGLangSettings) -> BackendModel:
    """What SGLang's default attention backend depends on in this model (settings.py default_attention_backend)."""
    attn = [la.attention for la in spec.trunk_layers if la.attention is not None]
    latent = [a for a in attn if a.kv_lora_rank]
    experts = max((la.ffn.n_experts for la in spec.trunk_layers if la.ffn is not None), default=0)
    heads = latent[0].n_heads // s.tp_size if latent else 0
    return BackendModel(
        architecture=spec.architecture, mla=bool(latent), nsa=any(a.index_head_dim for a in attn),
        # DeepseekV3ForCausalLM (V3, R1, Kimi K2: 256+ routed experts) against DeepseekV2ForCausalLM (160 or 64)
        deepseek_v3=spec.architecture == "deepseek2" and experts >= 256,
        mla_heads_per_rank=max(1, heads) if latent else 0,
        multimodal=any(t.kind == "vision" for t in spec.towers),
        asymmetric_kv=not latent and any(a.head_dim_k != a.head_dim_v for a in attn),
        sinks=spec.architecture == "gpt-oss")


def attention_backend(spec: ModelSpec, s: SGLangSettings, devs: tuple[Device, ...], v: Version) -> BackendChoice:
    """The backend in force: --attention-backend as given, else SGLang's default for the first GPU."""
    if s.attention_backend:
        return BackendChoice(s.attention_backend, "given (--attention-backend)")
    return default_attention_backend(v, devs[0].compute_capability, _is_hip(devs[0]), backend_model(spec, s), s)


def _is_hip(d: Device) -> bool:
    return d.id.startswith("ROCm") or any(w in (d.name or "") for w in ("AMD", "Instinct", "Radeon"))


# ---------------------------------------------------------------------------------------------------------
# Weights, then pools, per pipeline stage


@dataclass(frozen=True)
class Stage:
    """One pipeline stage: its layers, how they are cached, the weights one of its ranks loads; pool_lay: the
    layers its KV pool is sized and allocated for (see WHOLE_MODEL_POOL_ARCHS)."""

    layers: tuple[LayerSpec, ...]
    lay: CacheLayout
    weights_bytes: int
    labels: tuple[str, ...]
    pool_lay: CacheLayout


# The layers a pipeline stage's KV pool covers: model_runner.py takes them from the top-level model object,
# start_layer = getattr(self.model, "start_layer", 0), end_layer = getattr(self.model, "end_layer",
# model_num_layers) (0.5.6-0.5.14 model_runner.py __init__; 0.5.23 model_runner_components/layer_setup.py
# _resolve_pp_layer_range), and profile_max_num_token's cell and the pool (layer_num=num_effective_layers) use
# end - start. A class whose inner model splits its layers by stage (make_layers) but that does not expose them
# itself sizes and allocates the whole model's layers on every stage, while each stage loads and runs only its own:
# Qwen2_5_VLForConditionalGeneration (models/qwen2_5_vl.py, PP from 0.5.6 (PR #13075), no start_layer through
# 0.5.23; Qwen2-VL's qwen2_vl.py neither) and MiniMaxM2ForCausalLM (models/minimax_m2.py, 0.5.6-0.5.23). The other
# PP-capable text classes (llama.py, qwen2.py, qwen3.py, qwen3_moe.py, deepseek_v2.py, ...) define the properties.
# sglang#13075 (Qwen2.5-VL-7B, --tp 2 --pp-size 2) prints max_total_num_tokens=2524524 on both stages: a 28-layer
# cell; a 14-layer one gave 4,759,831 here (+89%).
WHOLE_MODEL_POOL_ARCHS = frozenset({"qwen2vl", "minimax_m2"})

# The multimodal encoder on every pipeline stage, not the first only: Qwen2VLForConditionalGeneration and
# Qwen2_5_VLForConditionalGeneration build self.visual in __init__ with no pipeline-rank test (qwen2_vl.py,
# qwen2_5_vl.py: 0.5.5, 0.5.6 (PP from PR #13075), 0.5.10, 0.5.14, 0.5.19 and 0.5.23 read), and load_weights
# fills it on every stage (its "visual.blocks.N" names carry no "layers.N" id for the stage's layer filter).
# sglang#13075 (Qwen2.5-VL-7B, --tp 2 --pp-size 2) ends with available_gpu_mem 17.90 GB on PP0 and 17.83 on PP1,
# the same pool on both: the two stages hold the same weights (the ViT, 0.63 GiB a rank, on both), not PP0 0.63
# GiB more. Encoders built on the first stage only elsewhere (bailing_mm.py, gemma4_mm.py, dots_vlm.py 0.5.23
# _build_mm_encoders / is_first_rank) keep the default.
ENCODER_EVERY_STAGE_ARCHS = frozenset({"qwen2vl"})


def load_model(spec: ModelSpec, s: SGLangSettings, stages: list[tuple[LayerSpec, ...]],
               cc: tuple[int, int] | None = None, hip: bool = False) -> tuple[Stage, ...]:
    """model_runner.py load_model, per pipeline stage: what one rank of the stage loads."""
    out = []
    whole = cache_layout(spec, s) if len(stages) > 1 and spec.architecture in WHOLE_MODEL_POOL_ARCHS else None
    shared_whole = shared_experts_replicated(spec, s, cc, hip)
    for i, layers in enumerate(stages):
        lay = cache_layout(spec, s, layers)
        rope = rope_cache_bytes(spec, s, layers, FLOAT_BYTES[lay.model_dtype], hip)
        towers = i == 0 or spec.architecture in ENCODER_EVERY_STAGE_ARCHS
        w, labels = rank_weights(spec, s, lay, stage_tensors(spec, layers, i == 0, i == len(stages) - 1),
                                 towers=towers, cc=cc, shared_whole=shared_whole, rope=rope, hip=hip)
        out.append(Stage(layers, lay, w, tuple(labels), whole or lay))
    return tuple(out)


def init_memory_pool(spec: ModelSpec, s: SGLangSettings, stages: tuple[Stage, ...], pre_free: int | None,
                     gpu_mib: int | None, draft: Draft | None = None) -> tuple[list[Pool | None], str | None]:
    """model_runner.py init_memory_pool on every stage: (a pool per stage, SGLang's refusal or None). Pools are
    None when the GPU memory is unknown and no --kv-memory budget is given. draft: the EAGLE draft worker, whose
    weights and layers the profile counts from 0.5.14 (draft.py)."""
    error: str | None = None
    pools: list[Pool | None] = []
    # 0.5.14+: the draft's weights, its own embedding and lm_head not yet freed (draft.py), before the profile
    draft_w = draft.weights_bytes + draft.copies_bytes if draft is not None and draft.profiled else 0
    draft_layers = draft.n_layers if draft is not None and draft.cell_in_profile else 0
    for st in stages:
        if pre_free is not None and st.weights_bytes + draft_w > pre_free:
            # model_runner.py load_model -> loader.py _initialize_model creates the parameters on the GPU (0.4.x-0.5.x):
            # weights larger than the memory free before them die there with a CUDA OOM, before any pool is sized or
            # profile_max_num_token can refuse (sglang#5576: gemma-3-12b-it on a 16 GB card, the traceback through
            # gemma3_mm.py __init__)
            error = (f"torch.OutOfMemoryError: CUDA out of memory while loading the weights (model_runner.py "
                     f"load_model): {(st.weights_bytes + draft_w) / GiB:.2f} GiB a rank"
                     + (" with the draft's" if draft_w else "") + f", {max(pre_free, 0) / GiB:.2f} GiB free before them")
            pools.append(None)
            continue
        try:
            if s.kv_cache_memory_bytes is not None:
                p = size_pool(spec, s, kv_budget=s.kv_cache_memory_bytes, gpu_mib=gpu_mib, lay=st.pool_lay,
                              draft_layers=draft_layers)
            elif pre_free is not None:
                # the LoRA pool (lora.py): allocated between load_model and the profile, off the free memory
                lora = lora_pool_bytes(spec, s.max_loras_per_batch, s.max_lora_rank, s.lora_target_modules,
                                       s.tp_size, st.pool_lay.model_dtype) if s.enable_lora else 0
                p = size_pool(spec, s, avail_after_load=pre_free - st.weights_bytes - draft_w - lora,
                              pre_load_free=pre_free,
                              gpu_mib=gpu_mib, lay=st.pool_lay, draft_layers=draft_layers,
                              context_len=derive_context_length(spec, s))
            else:
                p = None
        except NotEnoughMemory as e:
            p, error = None, str(e)
        pools.append(p)
    if error is None and all(p is not None for p in pools):
        # init_memory_pool: different PP ranks may hold different layer counts -> the minimum token count
        tokens = min(p.max_total_num_tokens for p in pools)
        pools = [p if p.max_total_num_tokens == tokens else resize_pool(p, s, st.pool_lay, tokens)
                 for p, st in zip(pools, stages, strict=True)]
    return pools, error


def _one_request(s: SGLangSettings, spec: ModelSpec, stages: tuple[Stage, ...], context_len: int
                 ) -> list[tuple[int, int]]:
    """(KV, state) bytes per stage for one request of context_len: what a pool must at least hold."""
    out = []
    for st in stages:
        lay = st.pool_lay
        swa = min(context_len, swa_window(lay) + s.max_prefill_tokens) if lay.swa_layers else None
        kv = sum(p.k_bytes + p.v_bytes for p in kv_pools(lay, s, context_len, swa))
        state = sum(mamba_cache_per_req(lay, s, spec)) * 2 if lay.mamba_layers else 0  # one slot + padding slot
        out.append((kv, state))
    return out


# ---------------------------------------------------------------------------------------------------------
# The estimate


@dataclass(frozen=True)
class SGLangEstimate(MemoryEstimate):
    """A MemoryEstimate that also knows when SGLang starts but cannot serve one request of context_length: its KV
    pool holds fewer tokens, so the scheduler turns long prompts away (request_limit: the prompt length from which
    it does). Such settings do not fit that context, as vLLM's refusal at start-up when max_model_len is beyond its
    KV capacity does not; the devices show what SGLang really allocates."""

    request_limit: int | None = None

    @property
    def fits(self) -> bool | None:
        if self.request_limit is not None:
            return False
        return super().fits


def request_limits(pool_tokens: int, context_len: int) -> tuple[int, int]:
    """(max_req_len, max_req_input_len): tp_worker.py TpModelWorker.__init__ (get_worker_info from 0.5.14),
    min(context_len - 1, max_total_num_tokens - 1) and 5 fewer for the prompt, every release 0.4.0-0.5.23 read.
    The scheduler caps max_new_tokens at max_req_len - prompt - 1 (init_req_max_new_tokens)."""
    max_req_len = min(context_len - 1, pool_tokens - 1)
    return max_req_len, max_req_len - 5


@dataclass(frozen=True)
class _PoolFixes:
    """Settings that give one full-length request room, each checked by a new estimate."""

    context_length: int | None = None
    mem_fraction_static: float | None = None
    kv_cache_dtype: str | None = None
    kv_mem_fraction_static: float | None = None  # the fraction the FP8 cache needs with it (None: as in force)


def _pool_fixes(spec: ModelSpec, devices: tuple[Device, ...], s: SGLangSettings, run: _Run) -> _PoolFixes:
    """The largest --context-length the pool holds, the --mem-fraction-static that sizes the pool for context_length
    without leaving CUDA graph capture short, and an FP8 KV cache (with the fraction it needs). s: the settings as
    given, so that SGLang picks the attention backend again for each."""
    def serves(trial: MemoryEstimate) -> bool:
        v = trial.engine_view
        return (getattr(trial, "request_limit", 1) is None and v.get("max_total_num_tokens") is not None
                and not v.get("cuda_graph_short_bytes") and not v.get("error"))

    def trial(**changes: Any) -> MemoryEstimate | None:
        try:
            return estimate(spec, devices, replace(s, **changes), fixes=False)
        except OomkitError:
            return None

    ctx = None
    tokens = run.pool.max_total_num_tokens
    for _ in range(3):  # a shorter context shrinks the req_to_token table, the pool stays (or grows)
        t = trial(context_length=tokens)
        if t is None:
            break
        if serves(t):
            ctx = tokens
            break
        tokens = t.engine_view["max_total_num_tokens"] or 0
        if tokens <= 0:
            break
    def fraction(**changes: Any) -> float | None:
        """The smallest --mem-fraction-static (in hundredths) whose pool holds context_length, or None when
        that pool leaves CUDA graph capture short or the fraction passes 1."""
        if not run.pre_free or s.kv_cache_memory_bytes is not None:
            return None
        if changes:
            base = trial(**changes)
            if base is None or base.engine_view.get("max_total_num_tokens") is None:
                return None
            tokens, cell = base.engine_view["max_total_num_tokens"], base.engine_view["cell_size_bytes"]
        else:
            tokens, cell = run.pool.max_total_num_tokens, run.pool.cell_bytes
        given = s.mem_fraction_static if s.mem_fraction_static is not None else run.mfs
        m = math.ceil((given + (run.context_len - tokens + run.lay_all.page_size) * cell / run.pre_free) * 100) / 100
        for _ in range(5):  # the estimate is linear in the fraction: the first guess holds, or one step more
            if m > 1:
                return None
            t = trial(mem_fraction_static=m, **changes)
            if t is None or t.engine_view.get("cuda_graph_short_bytes"):
                return None
            if serves(t):
                return m
            m = round(m + 0.01, 2)
        return None

    mfs = fraction()
    kvd = kv_mfs = None
    if s.kv_cache_dtype in ("auto", "bf16", "bfloat16") and run.lay_all.kv_dtype in ("bfloat16", "float16"):
        t = trial(kv_cache_dtype="fp8_e4m3")
        if t is not None and serves(t):
            kvd = "fp8_e4m3"
        elif (m := fraction(kv_cache_dtype="fp8_e4m3")) is not None:
            kvd, kv_mfs = "fp8_e4m3", m
    return _PoolFixes(ctx, mfs, kvd, kv_mfs)


def _pool_short_message(s: SGLangSettings, run: _Run, fixes: _PoolFixes | None) -> str:
    """What SGLang does with a pool shorter than context_length: it starts, then its scheduler aborts (or with
    --allow-auto-truncate, and in 0.4.0, truncates) a prompt of max_req_input_len tokens or more
    (managers/utils.py validate_input_length, scheduler.py handle_generate_request)."""
    tokens, ctx = run.pool.max_total_num_tokens, run.context_len
    max_req_len, max_input = request_limits(tokens, ctx)
    head = f"the KV pool holds {tokens:,} tokens (max_total_num_tokens), fewer than context_length {ctx:,}: "
    if not reached(run.v, "abort_long_request"):
        what = (f"a prompt longer than {max_input:,} tokens is cut to {max_input:,} (\"Request length is longer than "
                "the KV cache pool size or the max context length. Truncated!!!\")")
    elif s.allow_auto_truncate:
        what = f"a prompt of {max_input:,} tokens or more is cut to {max_input:,} (--allow-auto-truncate)"
    else:
        what = (f"a prompt of {max_input:,} tokens or more is aborted (\"Input length (N tokens) exceeds the maximum "
                f"allowed length ({max_input} tokens). Use a shorter input or enable --allow-auto-truncate.\")")
    text = head + what + f", and prompt plus output stop at {max_req_len:,} tokens"
    if fixes is None:
        return text
    ways = []
    if fixes.context_length:
        ways.append(f"lower --context-length to {fixes.context_length}")
    if fixes.mem_fraction_static:
        ways.append(f"raise --mem-fraction-static to {fixes.mem_fraction_static:.2f}")
    if fixes.kv_cache_dtype:
        ways.append(f"use --kv-cache-dtype {fixes.kv_cache_dtype}" + (
            f" with --mem-fraction-static {fixes.kv_mem_fraction_static:.2f}" if fixes.kv_mem_fraction_static else ""))
    if s.max_total_tokens is not None and tokens >= s.max_total_tokens:
        ways.append(f"raise --max-total-tokens ({s.max_total_tokens} caps the pool)")
    if ways:
        text += "; to serve full-length requests " + (", ".join(ways[:-1]) + ", or " + ways[-1] if len(ways) > 1
                                                       else ways[0])
    return text


@dataclass(frozen=True)
class _Run:
    """What the steps after init_memory_pool share."""

    v: Version
    context_len: int
    lay_all: CacheLayout  # the whole trunk on one rank (engine_view, per-layer figures)
    devs: tuple[Device, ...]
    layer_stages: list[tuple[LayerSpec, ...]]
    stages: tuple[Stage, ...]
    defaults: Defaults
    mfs: float
    overhead: int
    pre_free: int | None  # "Load weight begin. avail mem" (None: GPU memory unknown)
    pools: list[Pool | None]
    pool: Pool | None  # the first stage's, when every stage has one
    error: str | None
    draft: Draft | None = None  # the EAGLE draft worker (draft.py), pp_size 1
    draft_tokens: int = 0  # its pool's tokens (0: not allocated)
    draft_k: int = 0
    draft_v: int = 0

    @property
    def draft_weights(self) -> int:
        return self.draft.weights_bytes if self.draft is not None else 0

    @property
    def draft_kv(self) -> int:
        return self.draft_k + self.draft_v

    @property
    def draft_copies(self) -> int:
        """The draft's own embedding + lm_head still held at "Memory pool end" (0.5.14+, profiled drafts): the draft
        worker's alloc_memory_pool prints that line (mem_cache/kv_cache_configurator.py configure; 0.5.14-0.5.15
        model_runner_kv_cache_mixin.py) and only then does eagle_worker_v2.py EagleDraftWorker.alloc_memory_pool call
        init_lm_head, whose set_embed_and_head frees them with torch.cuda.empty_cache() (qwen3_5_mtp.py, 0.5.19), before
        init_attention_backends and the captures (scheduler.py; 0.5.14-0.5.23 read)."""
        return self.draft.copies_bytes if self.draft is not None and self.draft.profiled else 0

    @property
    def headroom(self) -> int:
        """The (1 - mem_fraction_static) slice of the memory free before the weights."""
        return int(self.pre_free * (1 - self.mfs)) if self.pre_free is not None else 0


def _device_usages(spec: ModelSpec, s: SGLangSettings, run: _Run) -> list[Usage]:
    usages: list[Usage] = []
    need_one = _one_request(s, spec, run.stages, run.context_len)
    for i, d in enumerate(run.devs):
        stage_idx = (i // s.tp_size) % s.pp_size
        w = run.stages[stage_idx].weights_bytes + run.draft_weights
        p = run.pools[stage_idx] if run.pools else None
        compute = run.headroom
        if p is not None:
            # the pool as allocated, even when it holds fewer tokens than one full-length request: SGLang starts
            # and turns long prompts away (request_limit), it never allocates more KV than the pool
            kv, state = p.kv_bytes + run.draft_kv, p.state_bytes
            if run.pre_free is not None and s.kv_cache_memory_bytes is None:
                # what the pool leaves is the headroom activations and CUDA graphs get (the pool's page_size
                # padding rows and the req_to_token table come out of the (1 - mem_fraction_static) slice)
                compute = max(0, run.pre_free - w - kv - state)
        else:
            kv, state = need_one[stage_idx]
            if run.error:
                kv = state = 0
        usages.append(Usage(id=d.id, name=d.name, memory_bytes=d.memory_bytes, weights_bytes=w, kv_cache_bytes=kv,
                            recurrent_state_bytes=state, compute_bytes=compute, overhead_bytes=run.overhead))
    return usages


def _engine_view(s: SGLangSettings, run: _Run, running: int | None, req_bytes: int | None) -> dict[str, Any]:
    """The figures SGLang prints at start-up, by its own names."""
    pool, lay_all, pre_free = run.pool, run.lay_all, run.pre_free
    w0 = run.stages[0].weights_bytes
    view: dict[str, Any] = {
        "mem_fraction_static": run.mfs,
        "chunked_prefill_size": run.defaults.chunked_prefill_size,
        "cuda_graph_max_bs": run.defaults.cuda_graph_max_bs,
        "page_size": lay_all.page_size,
        "kv_cache_dtype": lay_all.kv_dtype,
        **({"kv_cache_dtype_reason": lay_all.kv_dtype_reason} if lay_all.kv_dtype_reason else {}),
        "cell_size_bytes": int(pool.cell_bytes) if pool else int(cell_size(lay_all, s, run.v, lay_all.full_layers)),
        "weights_bytes": w0,  # "Load weight end. ... mem usage" of one rank
        "load_weight_begin_avail_bytes": pre_free,
        "load_weight_end_avail_bytes": pre_free - w0 if pre_free is not None else None,
        "max_total_num_tokens": pool.max_total_num_tokens if pool else (0 if run.error else None),
        "k_bytes": pool.k_bytes if pool else None,
        "v_bytes": pool.v_bytes if pool else None,
        "kv_pools": [{"pool": p.name, "tokens": p.tokens, "layers": p.n_layers, "k_bytes": p.k_bytes,
                      "v_bytes": p.v_bytes} for p in pool.pools] if pool else [],
    }
    if pool is not None and pool.swa_tokens is not None:
        view["full_layer_tokens"], view["swa_layer_tokens"] = pool.full_tokens, pool.swa_tokens
    if pool is not None and pool.max_mamba_cache_size is not None:
        view["max_mamba_cache_size"] = pool.max_mamba_cache_size
        view["conv_state_bytes"], view["ssm_state_bytes"] = pool.conv_state_bytes, pool.ssm_state_bytes
        if pool.spec_state_bytes:  # kv.py _handle_max_mamba_cache_spec: the per-draft-token intermediate states
            view["intermediate_state_bytes"] = pool.spec_state_bytes
    end_avail = None
    if pool is not None and pre_free is not None and s.kv_cache_memory_bytes is None:
        end_avail = (pre_free - w0 - run.draft_weights - run.draft_copies - pool.kv_bytes - run.draft_kv
                     - pool.state_bytes - (req_bytes or 0))
    view.update({
        "memory_pool_end_avail_bytes": end_avail,
        # the scheduler's line prints free memory after CUDA graph capture: set from the phases (estimate) where known
        "available_gpu_mem_bytes": end_avail,
        "req_to_token_bytes": req_bytes,
        "max_prefill_tokens": s.max_prefill_tokens,
        "max_running_requests": running,
        "context_len": run.context_len,
    })
    if run.draft is not None:
        d = run.draft
        view.update({"draft_layers": d.n_layers, "draft_weights_bytes": d.weights_bytes,
                     "draft_max_total_num_tokens": run.draft_tokens or None, "draft_k_bytes": run.draft_k,
                     "draft_v_bytes": run.draft_v, "speculative_num_steps": d.num_steps,
                     "speculative_eagle_topk": d.eagle_topk, "speculative_num_draft_tokens": d.num_draft_tokens,
                     "draft_counted_in_profile": d.profiled})
    if run.error:
        view["error"] = run.error
    return view


def capacity_mib(s: SGLangSettings, sizes: list[int | None]) -> int | None:
    """The GPU memory SGLang's GPU-class defaults are read from: utils get_nvgpu_memory_capacity takes min() over
    every memory.total `nvidia-smi --query-gpu=memory.total` prints, CUDA_VISIBLE_DEVICES notwithstanding (0.4.3.post4,
    0.5.2 and 0.5.10 wheels read), so a smaller card elsewhere on the machine (s.machine_gpu_mib) sets them too. None when
    a size is unknown."""
    if None in sizes:
        return None
    mib = min(sizes) // MiB  # type: ignore[type-var]
    return mib if s.machine_gpu_mib is None else min(mib, s.machine_gpu_mib)


def _phase_view(spec: ModelSpec, s: SGLangSettings, run: _Run, req_bytes: int | None, running: int | None,
                pool_short: bool = False, rows: int | None = None) -> dict[str, Any]:
    """The start-up phases of the first GPU (phases.py) and the lines SGLang prints for them, in its order:
    model_runner.py load_model ("Load weight begin/end"), init_memory_pool ("KV Cache is allocated", "Memory pool
    end"), cuda_graph_runner.py ("Capture cuda graph begin/end"), scheduler.py ("max_total_num_tokens=...")."""
    pool, pre_free = run.pool, run.pre_free
    w0 = run.stages[0].weights_bytes
    max_bs = run.defaults.cuda_graph_max_bs
    sliding = any(la.attention is not None and la.attention.window for la in spec.layers)
    # the captured sizes stop at the req_to_token pool's rows (rows; None when the pool is not sized)
    gpu_mib = capacity_mib(s, [d.memory_bytes for d in run.devs])  # get_device_memory_capacity: the smallest GPU
    hip = _is_hip(run.devs[0])
    attn = next((la.attention for la in spec.trunk_layers if la.attention is not None), None)
    dsa = any(la.attention is not None and la.attention.index_head_dim for la in spec.trunk_layers)
    parts = cuda_graph_parts(max_bs, s, run.v, spec.n_vocab, run.context_len, run.lay_all.page_size, sliding, rows,
                             layers=len(run.layer_stages[0]), gpu_mib=gpu_mib, hip=hip,
                             heads_per_rank=(attn.n_heads // run.lay_all.attn_tp) if attn else 0,
                             v_head_dim=(attn.kv_lora_rank if run.lay_all.mla else attn.head_dim_v) if attn else 0,
                             dsa=dsa)
    sizes = list(capture_bs(max_bs, run.v, rows, s=s, gpu_mib=gpu_mib, hip=hip))
    # the draft worker's decode graphs, after the target's captures (draft.py graph_bytes)
    dcg = draft_graph_bytes(run.draft, s, run.v, sizes, run.context_len, run.lay_all.page_size, dsa, hip) \
        if run.draft is not None and pool is not None else 0
    kv = (pool.kv_bytes + pool.state_bytes + run.draft_kv) if pool is not None else 0
    w0 += run.draft_weights  # the draft's weights are resident beside the target's from here on (draft.py)
    total = run.devs[0].memory_bytes
    init = backend_init_bytes(
        s.attention_backend, run.v, architecture=spec.architecture, sliding=sliding, mla=run.lay_all.mla,
        max_running=running or 0, heads_per_rank=(attn.n_heads // run.lay_all.attn_tp) if attn else 0,
        head_dim=attn.head_dim_k if attn else 0, context_len=run.context_len)
    # the EagerRunner's input registry, after the backend and before the first capture (0.5.14+, phases.py)
    init += eager_registry_bytes(run.v, max_total_tokens=pool.max_total_num_tokens if pool is not None else 0,
                                 chunked_prefill_size=run.defaults.chunked_prefill_size, max_running=running or 0,
                                 tokens_per_request=(s.speculative_num_draft_tokens or 1)
                                 if spec_algorithm(s) in EAGLE_FAMILY else 1)
    # FlashInfer's all-reduce fusion workspaces, after the warm-up and before the first capture (phases.py)
    fusion = flashinfer_fusion_bytes(run.v, s, model_type=spec.hf_model_type,
                                     platform=gpu_platform(run.devs[0].compute_capability, hip), hidden=spec.n_embd,
                                     elem=4 if run.lay_all.model_dtype == "float32" else 2)
    init += fusion
    pcg_sizes = prefill_graph_tokens(
        s, run.v, chunked_prefill_size=run.defaults.chunked_prefill_size, mla=run.lay_all.mla,
        multimodal=any(t.kind == "vision" for t in spec.towers)
        and not multimodal_prefill_graphs(spec.architecture, run.v, _is_hip(run.devs[0])), hip=_is_hip(run.devs[0]),
        disabled_arch=spec.architecture in PREFILL_GRAPH_OFF_ARCHS
        or any(la.attention is not None and la.attention.index_head_dim for la in spec.trunk_layers))
    pcg = prefill_graph_bytes(pcg_sizes, spec.n_embd,
                              prefill_output_row_bytes(run.v, spec.n_embd, run.lay_all.model_dtype),
                              breakable=reached(run.v, "prefill_breakable"))
    # the decode graphs after the prefill ones: the logits buffer in the prefill window, the pool shared (phases.py)
    parts, moved = after_prefill_capture(parts, run.v, prefill_captured=bool(pcg), graphs=len(sizes),
                                         layers=len(run.layer_stages[0]), tp=s.tp_size)
    cg, pcg = parts.total, pcg + moved
    prefill_first = reached(run.v, "prefill_graph_first")
    symm = symm_mem_prealloc_bytes(s, run.v)  # --enable-symm-mem: after both captures, the target's ranks only
    phases = startup_phases(total, run.overhead, w0, kv, req_bytes or 0, cg, init, pcg, prefill_first, symm, dcg)
    lines = []
    w_target, dw = run.stages[0].weights_bytes, run.draft_weights
    draft_load = []
    if pre_free is not None:
        lines.append(f"Load weight begin. avail mem={gb(pre_free)} GB")
        lines.append(f"Load weight end. type={spec.architecture} (GGUF name), dtype=torch.{run.lay_all.model_dtype}, "
                     f"avail mem={gb(pre_free - w_target)} GB, mem usage={gb(w_target)} GB.")
        if run.draft is not None:
            # the draft worker's load: before the pools from 0.5.14, after the target's pool before
            after = pre_free - w_target - dw - (0 if run.draft.profiled or pool is None else pool.kv_bytes)
            draft_load = [f"Load weight end. type={spec.architecture} next-n draft (GGUF name), "
                          f"dtype=torch.{run.lay_all.model_dtype}, avail mem={gb(after)} GB, mem usage={gb(dw)} GB."]
            if run.draft.profiled:
                lines += draft_load
    if pool is not None:
        if run.lay_all.mla:
            lines.append(f"KV Cache is allocated. #tokens: {pool.max_total_num_tokens}, KV size: {gb(pool.k_bytes)} GB")
        else:
            lines.append(f"KV Cache is allocated. #tokens: {pool.max_total_num_tokens}, K size: {gb(pool.k_bytes)} "
                         f"GB, V size: {gb(pool.v_bytes)} GB")
        if run.draft is not None and run.draft_tokens:
            if not run.draft.profiled:
                lines += draft_load
            if run.lay_all.mla:
                lines.append(f"KV Cache is allocated. #tokens: {run.draft_tokens}, KV size: {gb(run.draft_k)} GB")
            else:
                lines.append(f"KV Cache is allocated. #tokens: {run.draft_tokens}, K size: {gb(run.draft_k)} GB, "
                             f"V size: {gb(run.draft_v)} GB")
    short, begin, end = 0, None, None
    if pool is not None and pre_free is not None and s.kv_cache_memory_bytes is None:
        end = pre_free - w0 - kv - (req_bytes or 0)
        begin = end - init  # "Capture cuda graph begin. ... avail mem": after init_attention_backend
        # the draft's own embedding + lm_head are freed just after the line (draft_copies)
        lines.append(f"Memory pool end. avail mem={gb(end - run.draft_copies)} GB")
        lines += _capture_lines(run.v, begin, cg, pcg, sizes, list(pcg_sizes))
        if symm:
            lines.append(f"Pre-allocating symmetric memory pool with {symm // GiB} GiB")
        if dcg:  # eagle_worker_v2.py EagleDraftWorker.init_cuda_graphs
            left = begin - cg - pcg - symm
            lines += [f"Capture draft cuda graph begin. This can take up to several minutes. avail mem={gb(left)} GB",
                      f"Capture draft cuda graph end. Time elapsed: N s. mem usage={gb(dcg)} GB. avail mem="
                      f"{gb(left - dcg)} GB."]
        short = max(0, init + cg + pcg + symm + dcg - end)
        if pool_short and reached(run.v, "pool_short_warning"):
            lines.append(f"KV pool holds {pool.max_total_num_tokens} tokens, fewer than --context-length "
                         f"{run.context_len}. One full-length request cannot fit, so long requests will be refused "
                         "or truncated at serving time. Lower --context-length, raise --mem-fraction-static, or free "
                         "memory taken before the pool is sized.")
        chunk = (f"chunked_prefill_size={run.defaults.chunked_prefill_size}, "
                 if reached(run.v, "sched_line_chunk") else "")
        avail = f", available_gpu_mem={gb(begin - cg - pcg - symm - dcg)} GB" if reached(run.v, "sched_line_avail") else ""
        lines.append(f"max_total_num_tokens={pool.max_total_num_tokens}, {chunk}max_prefill_tokens="
                     f"{s.max_prefill_tokens}, max_running_requests={running}, context_len={run.context_len}{avail}")
    return {"phases": [p.to_dict() for p in phases], "cuda_graph_bs": sizes if cg else [],
            "attention_backend_init_bytes": init, "flashinfer_fusion_bytes": fusion, "capture_begin_avail_bytes": begin,
            "cuda_graph_bytes": cg, "cuda_graph_parts_bytes": {"logits": parts.logits, "index_tables":
                                                                 parts.index_tables, "rest": parts.rest,
                                                                 "dsa_scores": parts.dsa_scores},
            "draft_cuda_graph_bytes": dcg,
            "prefill_cuda_graph_tokens": list(pcg_sizes), "prefill_cuda_graph_bytes": pcg,
            "symm_mem_prealloc_bytes": symm, "cuda_graph_short_bytes": short, "log": "\n".join(lines)}


def _capture_lines(v: Version, begin: int, cg: int, pcg: int, bs: list[int], tokens: list[int]) -> list[str]:
    """The capture lines in the release's order and words (settings.py ERAS prefill_graph_first, graph_lines_per_req,
    decode_bs_at_end): 0.5.10 model_runner.py init_device_graphs / init_piecewise_cuda_graphs; 0.5.14 model_runner.py
    init_prefill_cuda_graph / init_decode_cuda_graph; 0.5.18+ cuda_graph_setup.py capture_prefill_graph /
    capture_decode_graph."""
    if not reached(v, "prefill_graph_first"):
        out = []
        if cg:  # the memory figures from 0.4.3.post4, the bs line from 0.4.6.post2 (ERAS capture_*_line)
            mem = reached(v, "capture_mem_line")
            usage, avail = f"mem usage={gb(cg)} GB.", f"avail mem={gb(begin - cg)} GB."
            out += ["Capture cuda graph begin. This can take up to several minutes."
                    + (f" avail mem={gb(begin)} GB" if mem else "")]
            out += [f"Capture cuda graph bs {bs}"] if reached(v, "capture_bs_line") else []
            out += ["Capture cuda graph end. Time elapsed: N s" + (
                "" if not mem else f". {usage} {avail}" if reached(v, "capture_usage_first") else f". {avail} {usage}")]
        if pcg:
            out += [f"Capture piecewise CUDA graph begin. avail mem={gb(begin - cg)} GB",
                    f"Capture cuda graph num tokens {tokens}",
                    f"Capture piecewise CUDA graph end. Time elapsed: N s. mem usage={gb(pcg)} GB. avail mem="
                    f"{gb(begin - cg - pcg)} GB."]
        return out
    out = []
    if pcg:
        backend = "breakable" if reached(v, "prefill_breakable") else "tc_piecewise"
        out += [f"Capture target prefill CUDA graph begin. backend={backend}, num_tokens={tokens}, avail mem="
                f"{gb(begin)} GB",
                f"Capture target prefill CUDA graph end. elapsed=N s, mem usage={gb(pcg)} GB, avail mem="
                f"{gb(begin - pcg)} GB."]
    if cg:
        per = "num_tokens_per_req" if reached(v, "graph_lines_per_req") else "num_tokens_per_bs"
        at_end = reached(v, "decode_bs_at_end")
        out += [f"Capture target decode CUDA graph begin. backend=full, {per}=1, " + ("" if at_end else f"bs={bs}, ")
                + f"avail mem={gb(begin - pcg)} GB",
                "Capture target decode CUDA graph end. " + (f"bs={bs}, " if at_end else "")
                + f"elapsed=N s, mem usage={gb(cg)} GB, avail mem={gb(begin - pcg - cg)} GB."]
    return out


def _layer_uses(spec: ModelSpec, s: SGLangSettings, run: _Run) -> tuple[LayerUse, ...]:
    """Each trunk layer's weights and KV on one rank; stage k's layers are shown on device k."""
    pool, lay_all, devs = run.pool, run.lay_all, run.devs
    ccs = [d.compute_capability for d in devs]
    shared_whole = shared_experts_replicated(spec, s, min(ccs) if ccs and None not in ccs else None, _is_hip(devs[0]))
    layer_kv: dict[int, int] = {}
    for la in lay_all.full_layers + lay_all.swa_layers:
        ke, ve = kv_row(la, lay_all)
        n = (pool.swa_tokens if pool and la in lay_all.swa_layers else pool.max_total_num_tokens) if pool else 0
        layer_kv[la.index] = int(elem_bytes((n + lay_all.page_size) * (ke + ve), lay_all, s)) if pool else 0
    return tuple(
        LayerUse(index=la.index, kind=la.kind.value, device=devs[min(k, len(devs) - 1)].id,
                 weights_bytes=layer_rank_bytes(spec, la.index, s, lay_all.attn_tp, lay_all, shared_whole),
                 kv_bytes=layer_kv.get(la.index, 0), recurrent_bytes=0,
                 cells=(pool.swa_tokens if la in lay_all.swa_layers else pool.max_total_num_tokens) if pool else None)
        for k, stage in enumerate(run.layer_stages) for la in stage
    )


def _effective_settings(s: SGLangSettings, run: _Run, running: int | None) -> dict[str, Any]:
    """The settings in force after SGLang's defaults (ServerArgs after __post_init__)."""
    eff = s.to_dict()
    eff.update(n_ctx=run.context_len, mem_fraction_static=run.mfs, context_length=run.context_len,
               chunked_prefill_size=run.defaults.chunked_prefill_size, page_size=run.lay_all.page_size,
               cuda_graph_max_bs=run.defaults.cuda_graph_max_bs,
               max_running_requests=running if s.max_running_requests is None else s.max_running_requests)
    return eff


# configs/model_config.py is_multimodal_chunked_prefill_supported's `unsupported` list (0.4.7, 0.5.0rc2, 0.5.10:
# Grok1VForCausalLM, Grok1AForCausalLM, LlavaLlamaForCausalLM, MllamaForConditionalGeneration, CLIPModel; 0.5.23 adds
# MossVLForConditionalGeneration), by the GGUF architecture oomkit reads: only Mllama has one of its own here (Grok-1V/1A
# and the original LLaVA's LlavaLlamaForCausalLM are not told apart from Grok-1 / LlavaForConditionalGeneration, CLIPModel
# is an embedding model, Moss-VL has no reader)
CHUNKED_PREFILL_UNSUPPORTED_ARCHS = frozenset({"mllama"})


def chunked_prefill_off(spec: ModelSpec, vit: tuple[int | None, int | None] | None, v: Version, *,
                        enable_multimodal: bool = False) -> bool:
    """Whether SGLang sets chunked_prefill_size = -1 for this model (ERAS mm_chunked_prefill_list): `if
    self.is_multimodal:` ... `server_args.chunked_prefill_size = -1` in model_runner.py model_specific_adjustment for
    every multimodal model up to 0.4.6.post4 ("Automatically turn off --chunked-prefill-size for multimodal model(s).", 0.4.0
    / 0.4.6), then only where `not self.is_multimodal_chunked_prefill_supported` (0.4.6.post5-0.5.x; 0.5.23 arg_groups/
    model_hook.py handle_model_capability_adjustments: "Automatically turn off --chunked-prefill-size as it is not
    supported for <model_type>"). It runs after mem_fraction_static is chosen (handle_gpu_memory_settings reads the
    GPU-class chunk), and the scheduler prints the -1 ("chunked_prefill_size=-1") and prefills whole requests.
    is_multimodal: a vision tower (vit), less Llama 4 / Gemma 3's ConditionalGeneration class where multimodal is off
    by default (model_config.py mm_disabled_models; settings.py multimodal_off) unless --enable-multimodal."""
    if vit is None:
        return False
    if not enable_multimodal and multimodal_off(spec.architecture, v):
        return False
    if not reached(v, "mm_chunked_prefill_list"):
        return True
    return spec.architecture in CHUNKED_PREFILL_UNSUPPORTED_ARCHS


def estimate(spec: ModelSpec, devices: tuple[Device, ...], s: SGLangSettings, fixes: bool = True
             ) -> MemoryEstimate:
    """fixes: when the pool is shorter than context_length, try the settings that would serve it (new estimates)."""
    v = parse_version(s.engine_version)
    given = s  # as given: the settings the fixes are tried on (SGLang picks the backend again for each)
    _check_settings(s)
    context_len = derive_context_length(spec, s)
    n_gpus = s.tp_size * s.pp_size * (1 if s.enable_dp_attention else s.dp_size)
    devs = _expand_devices(devices, n_gpus, s.nnodes)
    # server_args.py picks the backend before the page size and the pools: the settings carry it from here on
    backend = attention_backend(spec, s, devs, v)
    s = replace(s, attention_backend=backend.backend)
    cc = devs[0].compute_capability
    # the DSA backends' latent row (kv.py dsa_raw_latent), picked from the GPU as server_args.py does
    s = replace(s, dsa_raw_latent=dsa_raw_latent(v, cc, _is_hip(devs[0]), spec.architecture))
    nvfp4_pair = resolve_nvfp4_backends(s, v, given.attention_backend, cc)
    if nvfp4_pair is not None:
        # the NVFP4 recipe's (prefill, decode) pair (kv.py resolve_nvfp4_backends): model_runner builds both
        # (attention_backend_setup.py _build_resolved_backend: a HybridAttnBackend when they differ), the decode one
        # (trtllm_mha) holds the CUDA-graph state (hybrid_attn_backend.py init_cuda_graph_state) and forces pages of
        # 64 (overrides.py _page_size_default), so it is the backend whose buffers are sized here (a FlashInfer
        # prefill backend's own wrappers beside it, 8 MiB int workspaces, are not counted)
        s = replace(s, prefill_attention_backend=nvfp4_pair[0], decode_attention_backend=nvfp4_pair[1],
                    platform_sm100=cc is not None and cc[0] == 10)
    lay_all = cache_layout(spec, s)
    check_fp4_kv(lay_all, s, backend.backend, cc, _is_hip(devs[0]))
    if nvfp4_pair is not None:
        s = replace(s, attention_backend=nvfp4_pair[1])
        lay_all = cache_layout(spec, s)
        if nvfp4_pair[0] != nvfp4_pair[1]:
            backend = replace(backend, backend=nvfp4_pair[1], reason=f"--kv-cache-dtype nvfp4: {nvfp4_pair[0]} "
                              f"prefill, {nvfp4_pair[1]} decode (kv_cache_hook.py)")
    _tp.check_tp(spec, lay_all.attn_tp)
    warnings: list[str] = list(lay_all.labels)
    if "GPU unknown" in backend.reason:
        warnings.append(f"attention backend assumed {backend.backend}: SGLang picks it by GPU (give --gpu, or "
                        "--attention-backend); the page size and the CUDA-graph buffers follow it")
    if s.nnodes > 1:
        devs = tuple(replace(d, id=rank_name(i, n_gpus, s.nnodes)) for i, d in enumerate(devs))
    if len(devices) == 1 and n_gpus > 1:
        warnings.append(f"one memory size given: used for each of the {n_gpus} GPUs")
    elif 1 < len(devices) < n_gpus:
        warnings.append(f"--nnodes {s.nnodes}: the {len(devices)} GPUs given taken as each node's ({n_gpus} in all)")
    layer_stages = get_pp_indices(spec, s.pp_size, v)
    sizes = [d.memory_bytes for d in devs]
    known = all(x is not None for x in sizes)
    gpu_mib = capacity_mib(s, sizes)
    defaults = default_mem_fraction_static(gpu_mib, s, mla=lay_all.mla, vit=lay_all.vit, mm_off=lay_all.mm_off)
    mfs = (runner_fraction(s.mem_fraction_static, lay_all.vit, v, mm_off=lay_all.mm_off)
           if s.mem_fraction_static is not None
           else defaults.mem_fraction_static)
    mfs = aiter_fraction(mfs, s.attention_backend, context_len, v)  # the fraction in force (kv.py uses the same)
    # after the fraction is set from the undivided size (settings.dp_attention_chunk)
    defaults = replace(defaults, chunked_prefill_size=dp_attention_chunk(defaults.chunked_prefill_size, s, v))
    if chunked_prefill_off(spec, lay_all.vit, v, enable_multimodal=s.enable_multimodal):
        # after mem_fraction_static is set from it (see chunked_prefill_off); a given --chunked-prefill-size too
        defaults = replace(defaults, chunked_prefill_size=-1)
        # the scheduler then sets rem_chunk_tokens None: schedule_policy.py PrefillAdder.add_one_req ("Non-chunked
        # prefill", 0.5.10 read) admits a batch's first request whole, max_prefill_tokens notwithstanding
        warnings.append(f"SGLang turns chunked prefill off for {spec.architecture} in {s.engine_version} "
                        f"(chunked_prefill_size=-1): a prompt is prefilled in one forward, up to context_len "
                        f"({context_len:,} tokens) past max_prefill_tokens ({s.max_prefill_tokens:,}); its activations "
                        "are not bounded by the chunk the memory left outside the pool was sized for, and are not "
                        "estimated here")
    algo = spec_algorithm(s)
    if algo in EAGLE_FAMILY and not reached(v, "capture_spec_list"):
        # server_args.py __post_init__ before cuda_graph_runner.py had a speculative list (0.4.3 and 0.4.3.post1 read:
        # "EAGLE", and "NEXTN" from 0.4.3.post1): disable_cuda_graph_padding = True and chunked_prefill_size = -1, so
        # get_batch_sizes_to_capture takes list(range(1, 33)) + [64, 128] (phases.py _default_list) for the target's
        # verify graphs, not the padded [1, 2, 4, 8..160]
        s = replace(s, disable_cuda_graph_padding=True)
        defaults = replace(defaults, chunked_prefill_size=-1)
    if s.max_running_requests is None and (
            (algo in EAGLE_FAMILY and reached(v, "spec_running_48"))
            or (algo == "NGRAM" and reached(v, "spec_running_48_ngram"))):
        # server_args.py, after the GPU-memory defaults above: "Max running requests is reset to 48 for speculative
        # decoding. You can override this by explicitly setting --max-running-requests."
        s = replace(s, max_running_requests=48)
    if algo in EAGLE_FAMILY and s.speculative_num_draft_tokens is None:
        # server_args.py auto_choose_speculative_params (draft.py speculative_params): the target-verify graphs'
        # tokens per request when --speculative-num-draft-tokens is not given
        s = replace(s, speculative_num_draft_tokens=speculative_params(spec, s, v)[2])
    world = s.tp_size * s.pp_size
    overhead = pre_load_overhead(devs, world)
    frees = [free_before_load(d, overhead) for d in devs]
    pre_free = min(frees) if known else None

    ccs = [d.compute_capability for d in devs]
    stages = load_model(spec, s, layer_stages, min(ccs) if ccs and None not in ccs else None, _is_hip(devs[0]))
    for st in stages:
        warnings += [x for x in st.labels if x not in warnings]
    draft = draft_worker(spec, s, v) if algo else None
    if algo and draft is None and spec.n_nextn_layers > 0 and s.speculative_draft_model_path in (None, s.model_path):
        warnings.append("the next-n draft worker is not sized for this model or layout (sliding-window or hybrid "
                        "layers, or pipeline parallelism): its weights and KV pool are not counted")
    if s.enable_lora and s.max_lora_rank and s.lora_target_modules and not lora_sized(
            spec, s.max_lora_rank, s.lora_target_modules):
        warnings.append("the LoRA memory pool is not sized for this model (MoE or MLA layers) or these "
                        "--lora-target-modules: its buffers are not counted")
    unbalanced = tp_memory_balance(frees, s, v) if known else None
    if unbalanced is not None:  # SGLang stops at the distributed init, before the weights
        pools, error = [None] * len(stages), unbalanced
    else:
        pools, error = init_memory_pool(spec, s, stages, pre_free, gpu_mib, draft)
    pool = pools[0] if error is None and all(p is not None for p in pools) else None
    draft_tokens = draft_k = draft_v = 0
    if draft is not None and pool is not None:
        rows = max_running_requests(pool, s, context_len, v)[1]
        max_num_reqs = rows - (0 if reached(v, "req_to_token_unpadded") else 1)
        target_tokens, draft_tokens = draft_pool_tokens(draft, pool.max_total_num_tokens, max_num_reqs, s, v,
                                                        stages[0].pool_lay.page_size)
        if target_tokens != pool.max_total_num_tokens:  # the target's pool raised to draft_runner_cache_size
            pool = resize_pool(pool, s, stages[0].pool_lay, target_tokens)
            pools = [pool]
        draft_k, draft_v = draft_pool_bytes(draft, s, draft_tokens)
        warnings.append(f"speculative decoding ({algo}): the next-n draft worker counted ({draft.n_layers} layer(s), "
                        f"{draft.weights_bytes / GiB:.2f} GiB of weights, a {draft_tokens:,}-token pool of "
                        f"{(draft_k + draft_v) / GiB:.2f} GiB"
                        + ("; both counted before the target's pool is sized" if draft.profiled else
                           "; both taken from the (1 - mem_fraction_static) share after the target's pool")
                        + ("); of its CUDA graphs only the sparse-attention backends' tables"
                           if any(la.attention is not None and la.attention.index_head_dim for la in spec.trunk_layers)
                           else "); its CUDA graphs are not"))
    if error:
        warnings.append(f"SGLang would not start: {error}")
    if not known and s.kv_cache_memory_bytes is None:
        warnings.append("GPU memory unknown: SGLang sizes its KV pool from free memory (give --vram or --gpu); "
                        "the KV shown is one request of context_length")
    run = _Run(v=v, context_len=context_len, lay_all=lay_all, devs=devs, layer_stages=layer_stages, stages=stages,
               defaults=defaults, mfs=mfs, overhead=overhead, pre_free=pre_free, pools=pools, pool=pool,
               error=error, draft=draft, draft_tokens=draft_tokens, draft_k=draft_k, draft_v=draft_v)

    usages = _device_usages(spec, s, run)
    running = req_bytes = rows = None
    if pool is not None:
        running, rows = max_running_requests(pool, s, context_len, v)
        req_bytes = rows * (context_len + 4) * 4  # ReqToTokenPool: int32 (rows, context_len + 4)
        if pre_free is not None and req_bytes > run.headroom:
            warnings.append(f"req_to_token table ({req_bytes / GiB:.2f} GiB) exceeds the {(1 - mfs):.3f} headroom "
                            f"({run.headroom / GiB:.2f} GiB): lower --context-length or --max-running-requests")
    view = _engine_view(s, run, running, req_bytes)
    if error and error.startswith("torch.OutOfMemoryError") and pre_free is not None:
        # the weights load itself runs out (init_memory_pool above): nothing after "Load weight begin" happens
        w = max(st.weights_bytes for st in stages)
        view["failed_phase"] = {"phase": "weights", "needed_bytes": w, "left_bytes": pre_free,
                                "short_bytes": w - pre_free, "after_kv": False}
    # "Attention backend not specified. Use X backend by default." (or the model override's line)
    view["attention_backend"], view["attention_backend_reason"] = backend.backend, backend.reason
    if nvfp4_pair is not None:
        view["prefill_attention_backend"], view["decode_attention_backend"] = nvfp4_pair
    pool_short = pool is not None and pool.max_total_num_tokens < context_len
    if pool is not None:
        view["max_req_len"], view["max_req_input_len"] = request_limits(pool.max_total_num_tokens, context_len)
    view.update(_phase_view(spec, s, run, req_bytes, running, pool_short, rows))
    if view["capture_begin_avail_bytes"] is not None:
        view["available_gpu_mem_bytes"] = (view["capture_begin_avail_bytes"] - view["cuda_graph_bytes"]
                                           - view["prefill_cuda_graph_bytes"] - view["symm_mem_prealloc_bytes"]
                                           - view["draft_cuda_graph_bytes"])
    short = view.get("cuda_graph_short_bytes") or 0
    if short:
        # init_attention_backend, then cuda_graph_runner.py's capture, run on what the pool left: past it, SGLang stops
        # with a CUDA OOM ("Capture cuda graph failed: CUDA out of memory"). The GPUs then hold the missing bytes beyond
        # their memory (fits is false)
        init, pcg = view["attention_backend_init_bytes"], view["prefill_cuda_graph_bytes"]
        cg = view["cuda_graph_bytes"] + view["draft_cuda_graph_bytes"]  # the draft's graphs named with the target's
        # --enable-symm-mem's pool comes last (settings.py symm_mem_prealloc_bytes): what the phases before it lacked
        symm = view["symm_mem_prealloc_bytes"]
        rest = short - symm
        # the phase that runs past what the pool left: init_attention_backend, then the two captures in the
        # release's order (decode then prefill up to 0.5.10, prefill then decode from 0.5.14: ERAS prefill_graph_first)
        first, last = (("prefill CUDA graph capture", pcg), ("CUDA graph capture", cg))
        if not reached(v, "prefill_graph_first"):
            first, last = last, first
        if rest <= 0:
            phase, needed, left = "symmetric memory pool", symm, symm - short
        else:
            if rest > cg + pcg:
                phase, needed = "attention backend init", init
            elif rest > last[1]:
                phase, needed = first
            else:
                phase, needed = last
            left = needed - rest
        after_kv = True
        # the flag's value: aiter cuts a given fraction too (settings.py aiter_fraction), so it is asked for uncut
        cut = aiter_fraction(1.0, s.attention_backend, context_len, v)
        fix = round((mfs - short / pre_free) / cut - 0.005, 2) if pre_free else None
        what = (f"KV pool allocated, then {phase} needs {needed / MiB:,.0f} MiB with {max(left, 0) / MiB:,.0f} MiB "
                f"left (an estimate): lower --mem-fraction-static to {fix:.2f}"
                + {"CUDA graph capture": f", lower {flag_of('cuda_graph_max_bs', s.engine_version)}, or add "
                                         "--disable-cuda-graph",
                   "prefill CUDA graph capture": ", lower --chunked-prefill-size (the largest prefill graph), or add "
                                                 + flag_of("disable_piecewise_cuda_graph", s.engine_version),
                   "symmetric memory pool": ", or set SGLANG_SYMM_MEM_PREALLOC_GB_SIZE lower (0 skips the "
                                            "preallocation)",
                   }.get(phase, " or --max-running-requests"))
        free = view.get("load_weight_end_avail_bytes")
        if (view.get("memory_pool_end_avail_bytes") or 0) < 0 and free is not None:
            # init_memory_pool itself runs out (model_runner.py, model_runner_kv_cache_mixin.py _init_pools from 0.5.x):
            # the req_to_token table, sized by rows x (context_len + 4) outside the profiled budget, is allocated
            # first, then the token-to-KV pool
            if req_bytes > free:
                phase, needed, left = "req_to_token pool", req_bytes, free
                what = (f"the req_to_token table ({req_bytes / GiB:.2f} GiB: {rows} rows x {context_len + 4:,} int32) "
                        f"does not fit in the {max(free, 0) / GiB:.2f} GiB left after the weights: lower "
                        "--context-length or --max-running-requests")
            else:
                kv = pool.kv_bytes + pool.state_bytes
                phase, needed, left = "KV cache pool", kv, free - req_bytes
                what = (f"the KV pool ({kv / GiB:.2f} GiB) does not fit in the {max(left, 0) / GiB:.2f} GiB left after "
                        f"the weights and the req_to_token table: lower --mem-fraction-static, --context-length or "
                        "--max-running-requests")
            after_kv = False
        view["error"] = view.get("error") or what
        view["failed_phase"] = {"phase": phase, "needed_bytes": needed, "left_bytes": left, "short_bytes": short,
                                "after_kv": after_kv}
        warnings.append(f"SGLang starts, then dies: {what}" if after_kv else
                        f"SGLang runs out of memory allocating its pools (init_memory_pool): {what}")
        usages = [replace(u, overhead_bytes=u.overhead_bytes + short) for u in usages]
    limit = None
    if pool_short:
        # SGLang starts (it only warns, 0.5.23+) and serves prompts below max_req_input_len: past a CUDA graph
        # capture that runs out, the start-up death is the verdict, the short pool a note
        message = _pool_short_message(s, run, _pool_fixes(spec, devices, given, run) if fixes and not short else None)
        if short:
            warnings.append(f"were it to start: {message}")
        else:
            limit = view["max_req_input_len"]
            view["error"] = view.get("error") or message
            warnings.append(f"SGLang starts, but {message}")
    if s.nnodes > 1:
        view["node_memory_bytes"] = node_totals(usages, s.nnodes)  # per machine: each node's GPUs together
    return SGLangEstimate(model=spec, engine="sglang", settings=_effective_settings(s, run, running),
                          devices=tuple(usages), host=Usage(id="CPU", name="host"), engine_view=view,
                          kv_bytes_per_token=_kv_bytes_per_token(s, run),
                          kv_bytes_per_token_marginal=_kv_bytes_per_token_marginal(s, run),
                          layers=_layer_uses(spec, s, run), warnings=tuple(warnings), request_limit=limit)


def _kv_bytes_per_token(s: SGLangSettings, run: _Run) -> int:
    """What one token of max_total_num_tokens costs, over the ranks that hold it (each stage's attention-TP
    ranks): profile_max_num_token divides the rest by cell_size, so a KV budget divided by this gives SGLang's
    token count. Hybrid sliding-window pools charge full + swa_full_tokens_ratio x sliding layers
    (pool_configurator.py HybridSWAPoolConfigurator; before 0.5.8 every layer priced as a full one)."""
    total = 0.0
    for st in run.stages:
        lay = st.pool_lay
        if lay.swa_layers:
            total += token_charge_swa(lay, s, run.v)
        else:
            total += cell_size(lay, s, run.v, lay.full_layers) + lay.token_extra  # kv.py fp4_kv_layout
    return round(total * run.lay_all.attn_tp)


def _kv_bytes_per_token_marginal(s: SGLangSettings, run: _Run) -> int:
    """Bytes one more token of one sequence physically adds: the full pool's layers (K and V as allocated;
    sliding-window pools are bounded), over the ranks that hold it."""
    total = sum(row_bytes(la, st.pool_lay, s) for st in run.stages for la in st.pool_lay.full_layers)
    return int(total) * run.lay_all.attn_tp
