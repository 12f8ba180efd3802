"""One MemoryEstimate from vLLM's steps, per GPU (rank): the ranks and their layers, each one's budget
(profile.py), the blocks and the request-fits check (kv.py), then what vLLM prints at start-up (engine_view)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ...errors import OomkitError
from ...memory import Device, LayerUse, MemoryEstimate, Usage
from ...model.spec import ModelSpec
from ...model.weights import per_layer_sum
from ...units import GiB, MiB
from ..versions import version_str
from .cluster import node_totals, rank_name
from .config import Resolved, driver_reserved, pp_partition, resolve, with_hf_overrides
from .drafter import drafter_of
from .drafter import graph_layers as drafter_graph_layers
from .drafter import weight_bytes as drafter_weight_bytes
from .encoder import encoder_view
from .kv import (
    KvCheck,
    KvPlan,
    check_enough_kv_cache_memory,
    get_num_blocks,
    kv_plan,
    kv_tokens_in_flight,
    raise_if_cache_size_invalid,
    v0_mamba_cache_bytes,
)
from .lora import outside_budget_note as lora_outside_note
from .lora import slot_bytes as lora_slot_bytes
from .lora import where as lora_where
from .phases import (
    Failure,
    capture_bytes,
    capture_sizes,
    cudagraph_actual_bytes,
    cudagraph_estimate_bytes,
    draft_decode_graphs,
    graph_count,
    nccl_graph_bytes,
    sampler_warmup_bytes,
    startup_phases,
)
from .profile import (
    RankMemory,
    activation_bytes,
    b12x_workspace_bytes,
    context_bytes,
    cudagraphs_in_budget,
    determine_available_memory,
    dsv4_workspace_bytes,
    non_torch_bytes,
    runner_state_bytes,
    runner_state_in_budget,
)
from .settings import ERAS, VllmSettings, format_gib, gib_str, parse_version
from .weights import ep_rank_of, ep_size, offload_ignored, offloaded_bytes, weights_by_global_rank


@dataclass(frozen=True)
class VllmEstimate(MemoryEstimate):
    """A MemoryEstimate that also knows when vLLM would refuse to start (then it does not fit)."""

    error: str | None = None

    @property
    def fits(self) -> bool | None:
        if self.error is not None:
            return False
        return super().fits


@dataclass(frozen=True)
class _Rank:
    index: int  # global rank
    device: Device
    stage: int
    layers: tuple[int, int]
    plan: KvPlan
    memory: RankMemory
    host_weights: int = 0
    total: int | None = None
    requested: int | None = None
    available: int | None = None
    num_blocks: int | None = None

    @property
    def weights(self) -> int:
        return self.memory.weights


# ---------------------------------------------------------------------------------------------------------
# The ranks


def _rank_devices(devices: tuple[Device, ...], r: Resolved, warnings: list[str], nnodes: int = 1) -> list[Device]:
    """One device per rank (world = TP x PP x DP); one size given stands for every GPU."""
    world = r.tp * r.pp * r.dp
    if nnodes > 1 and 1 < len(devices) < world and len(devices) * nnodes == world:
        # one machine's GPUs with --nnodes N: each node's (plan --nodes N takes --gpu per node too)
        warnings.append(f"--nnodes {nnodes}: the {len(devices)} GPUs given taken as each node's ({world} in all)")
        devices = tuple(replace(d, id=f"CUDA{k * len(devices) + i}") for k in range(nnodes)
                        for i, d in enumerate(devices))
    if len(devices) < world and any(d.memory_bytes is not None for d in devices):
        if len(devices) == 1:
            warnings.append(f"{world} GPUs in use (TP {r.tp} x PP {r.pp} x DP {r.dp}); one size given, assumed "
                            "for every GPU")
        else:
            raise OomkitError(f"tensor x pipeline x data parallel = {world} GPUs, but {len(devices)} were given")
    if len(devices) > world and nnodes == 1:  # vLLM takes the first world_size GPUs it sees; the rest stay idle
        warnings.append(f"vLLM uses {world} of the {len(devices)} GPUs given (TP {r.tp} x PP {r.pp} x DP {r.dp}); "
                        "--tensor-parallel-size or --pipeline-parallel-size spreads the model over more")
    devs = [devices[i] if i < len(devices) else replace(devices[0], id=f"CUDA{i}") for i in range(world)]
    if len({d.id for d in devs}) < len(devs):  # one GPU listed several times: one id per rank
        devs = [replace(d, id=f"CUDA{i}") for i, d in enumerate(devs)]
    devs = [replace(d, id=rank_name(i, world, nnodes)) for i, d in enumerate(devs)] if nnodes > 1 else devs
    if r.cc_guessed and devices[0].gfx_target:  # a catalogued AMD part: no CUDA capability to read
        warnings.append(f"{devices[0].name} ({devices[0].gfx_target}): vLLM's ROCm attention backends are not "
                        "modelled; the attention backend (MLA block size, bfloat16 support) is taken to be a Hopper's")
    elif r.cc_guessed:
        warnings.append(f"GPU model {devices[0].name!r} is not in the GPU catalog: its attention backend (MLA block "
                        "size, bfloat16 support) is taken to be a Hopper's")
    return devs


def _ranks(spec: ModelSpec, s: VllmSettings, r: Resolved, devs: list[Device]) -> list[_Rank]:
    """Each rank's stage, layers (get_pp_indices), KV plan and the memory it holds outside the KV cache;
    --cpu-offload-gb moves that much of each rank's weights to the host."""
    parts = pp_partition(spec.n_trunk_layers, r.pp, r.version, r.pp_layer_partition)
    weights_rank = weights_by_global_rank(spec, s, r)
    # a separate EAGLE head loads beside the last stage (drafter.py: EagleProposer.load_model, inside "Model loading
    # took")
    drafter = drafter_of(s, r)
    if drafter is not None:
        extra = drafter_weight_bytes(drafter, spec, r)
        weights_rank = [w + extra if (g // r.tp) % r.pp == r.pp - 1 else w for g, w in enumerate(weights_rank)]
    # the adapter slots of --enable-lora (lora.py): in the weights from 0.8.0, in the profile's absolute peak up to
    # 0.6.4, outside the budget between (a warning, _estimate)
    slots = [lora_slot_bytes(spec, s, r, part, ep_size(s, r)) for part in parts]
    if lora_where(r) == "weights":
        weights_rank = [w + slots[(g // r.tp) % r.pp] for g, w in enumerate(weights_rank)]
    peak_slots = slots if lora_where(r) == "peak" else [0] * len(parts)
    offload = int(s.cpu_offload_gb * GiB)
    ranks = []
    for g, dev in enumerate(devs):
        stage = (g // r.tp) % r.pp
        moved = min(offloaded_bytes(spec, s, r, parts[stage], offload, ep_rank_of(g, r)), weights_rank[g]) \
            if offload else 0
        # model runner V2's sampler state: in the budget from 0.27, before it outside, beside the CUDA context
        state = runner_state_bytes(spec, r, last_stage=stage == r.pp - 1)
        inside = state if runner_state_in_budget(r) else 0
        mamba = v0_mamba_cache_bytes(spec, s, r, parts[stage])  # V0: built in the profile run, kept
        kept = b12x_workspace_bytes(spec, s, r, parts[stage])  # the b12x MoE wrappers: likewise
        kept += dsv4_workspace_bytes(spec, s, r, parts[stage])  # DeepSeek-V4's WorkspaceManager buffer
        memory = RankMemory(weights=weights_rank[g] - moved,
                            activation=activation_bytes(spec, s, r, last_stage=stage == r.pp - 1,
                                                        driver=g % r.tp == 0, kept=kept) + mamba
                            + peak_slots[stage],
                            non_torch=non_torch_bytes(r) + inside,
                            cudagraph=_graph_pool(spec, s, r, parts[stage][1] - parts[stage][0]
                                                  + drafter_graph_layers(s, r, stage == r.pp - 1), stage == 0,
                                                  drafter_graph_layers(s, r, stage == r.pp - 1)),
                            context=context_bytes(r) + state - inside, state=mamba, kept=kept)
        ranks.append(_Rank(index=g, device=dev, stage=stage, layers=parts[stage],
                           plan=kv_plan(spec, s, r, parts[stage]), memory=memory, host_weights=moved))
    return ranks


def _graph_pool(spec: ModelSpec, s: VllmSettings, r: Resolved, n_layers: int, first_stage: bool = True,
                draft_layers: int = 0) -> int:
    """The CUDA-graph memory a rank holds: V1's estimate (phases.py cudagraph_estimate_bytes, what 0.20+ budgets); V0
    prints no estimate and captures whole-model graphs (worker/model_runner.py capture_model): what the phases
    charge the capture (phases.py cudagraph_actual_bytes and nccl_graph_bytes)."""
    if r.v1:
        # the share per graph follows the stage's layers; draft_layers for V2's draft-decode graphs
        return cudagraph_estimate_bytes(spec, s, r, n_layers, draft_layers)
    if s.enforce_eager:
        return 0
    return cudagraph_actual_bytes(spec, s, r) + nccl_graph_bytes(spec, s, r, n_layers, first_stage)


def _with_blocks(ranks: list[_Rank], s: VllmSettings, r: Resolved) -> list[_Rank]:
    """Blocks per rank (kv.get_num_blocks), or --num-gpu-blocks-override on every rank (may_override_num_blocks);
    the engine then takes the minimum over ranks (get_kv_cache_configs)."""
    ranks = [replace(rk, num_blocks=get_num_blocks(rk.plan, rk.available, r)) if rk.plan.layers else rk
             for rk in ranks]
    if s.num_gpu_blocks_override is not None:
        ranks = [replace(rk, num_blocks=s.num_gpu_blocks_override) for rk in ranks]
    return ranks


def estimate(spec: ModelSpec, devices: tuple[Device, ...], s: VllmSettings) -> VllmEstimate:
    spec, override_warnings = with_hf_overrides(spec, s.hf_overrides)
    s, platform_warnings = _platform_overrides(s)
    override_warnings = [*platform_warnings, *override_warnings]
    est = _estimate(spec, devices, s)
    if override_warnings:
        est = replace(est, warnings=(*est.warnings, *override_warnings))
    failure = est.engine_view.get("failed_phase")
    if failure is None or not failure.get("after_kv"):
        return est
    # the run allocates its KV cache, then a later phase runs out: say which setting avoids it
    fixes = _post_kv_fixes(spec, devices, s, est)
    message = est.error + (": " + _join_fixes(fixes) if fixes else "")
    view = dict(est.engine_view, error=message, fixes=fixes)
    warnings = tuple(w if not w.startswith("vLLM starts, then dies") else f"vLLM starts, then dies: {message}"
                     for w in est.warnings)
    return replace(est, error=message, engine_view=view, warnings=warnings)


def _platform_overrides(s: VllmSettings) -> tuple[VllmSettings, list[str]]:
    """What CudaPlatform.check_and_update_config changes in the configuration before the engine starts (settings.py
    ERAS dp_forces_eager / dp_graphs): with data parallelism 0.8.0-0.9.0 turn CUDA graphs off (vllm#18567: "Data
    Parallel: Forcing enforce eager to be True", and enforce_eager=True in the engine's config line)."""
    if s.data_parallel_size <= 1 or s.enforce_eager:
        return s, []
    version = parse_version(s.engine_version)
    if not ERAS.reached(version, "dp_forces_eager") or ERAS.reached(version, "dp_graphs"):
        return s, []
    return replace(s, enforce_eager=True), [
        f"vLLM {s.engine_version} runs data parallelism without CUDA graphs (platforms/cuda.py: \"Data Parallel: "
        "Forcing enforce eager to be True since DP is currently not supported with CUDA Graphs.\"); 0.9.1 "
        "captures them"]


def _post_kv_fixes(spec: ModelSpec, devices: tuple[Device, ...], s: VllmSettings, est: VllmEstimate) -> list[str]:
    """The largest --max-num-seqs (halving) and --gpu-memory-utilization (in 0.01 steps) with which every phase
    fits, each alone; --enforce-eager when the capture is what runs out."""
    out = []
    seqs = est.settings["max_num_seqs"]
    n = seqs // 2
    while n >= 1:
        trial = _estimate(spec, devices, replace(s, max_num_seqs=n))
        if trial.error is None:
            out.append(f"lower --max-num-seqs to {n}")
            break
        n //= 2
    util = est.settings["gpu_memory_utilization"]
    u = round(util - 0.01, 2)
    while u >= 0.5:
        trial = _estimate(spec, devices, replace(s, gpu_memory_utilization=u))
        if trial.error is None:
            out.append(f"lower --gpu-memory-utilization to {u:.2f}")
            break
        if trial.engine_view.get("failed_phase") is None:  # the KV cache no longer holds one request
            break
        u = round(u - 0.01, 2)
    if est.engine_view["failed_phase"]["phase"] == "CUDA graph capture" and not s.enforce_eager:
        out.append("add --enforce-eager (no CUDA graphs)")
    return out


def merged_pp_check(r: Resolved) -> bool:
    """vLLM 0.14-0.16 under pipeline parallelism: kv_cache_utils.py get_kv_cache_configs checks one request against
    the whole model's KV cache groups (settings.py ERAS pp_check_merged / pp_check_per_worker)."""
    return r.v1 and r.pp > 1 and r.at_least("pp_check_merged") and not r.at_least("pp_check_per_worker")


def _join_fixes(fixes: list[str]) -> str:
    """"lower --max-num-seqs to 256 or --gpu-memory-utilization to 0.92"."""
    words = [fixes[0]]
    for f in fixes[1:]:
        words.append(f.removeprefix("lower ") if f.startswith("lower ") and words[0].startswith("lower ") else f)
    return " or ".join(words)


def _estimate(spec: ModelSpec, devices: tuple[Device, ...], s: VllmSettings) -> VllmEstimate:
    if not devices:
        raise OomkitError("vLLM needs a GPU: give --vram or --gpu (vLLM's CPU backend is not modelled)")
    r = resolve(spec, devices, s)
    warnings: list[str] = list(r.warnings)
    if s.cpu_offload_gb and offload_ignored(r):
        warnings.append(f"vLLM {version_str(r.version)} runs this model on model runner V2, which installs no weight "
                        "offloader before 0.28 (vllm#51396): --cpu-offload-gb is ignored and every weight loads on "
                        "the GPU; VLLM_USE_V2_MODEL_RUNNER=0 keeps the V1 runner, which offloads")
    ranks = _ranks(spec, s, r, _rank_devices(devices, r, warnings, s.nnodes))
    if s.enable_lora and lora_where(r) == "outside":
        warnings.append(lora_outside_note(r, lora_slot_bytes(spec, s, r, ranks[0].layers, ep_size(s, r))))
    known = all(rk.device.memory_bytes is not None for rk in ranks)
    error: str | None = None
    budgeted = []
    for rk in ranks:
        b = determine_available_memory(rk.device, rk.memory, s, r)
        error = error or b.error  # the first worker to fail
        budgeted.append(replace(rk, total=b.total, requested=b.requested, available=b.available))
    ranks = budgeted
    check = KvCheck(error, None, r.max_model_len)
    if all(rk.available is not None for rk in ranks) and ranks[0].plan.layers:
        ranks = _with_blocks(ranks, s, r)
        if error is None and r.v1:
            pools = [(rk.plan, rk.available) for rk in ranks]
            if merged_pp_check(r):
                # 0.14-0.16: the whole model's layers against the smallest worker's budget (settings.py ERAS)
                pools = [(kv_plan(spec, s, r), min(rk.available for rk in ranks))]
            check = check_enough_kv_cache_memory(pools, s, r)
        elif error is None:
            check = raise_if_cache_size_invalid([(rk.num_blocks, rk.plan) for rk in ranks], r.max_model_len, r.pp)
    warnings.extend(check.warnings)
    return _assemble(spec, s, r, ranks, warnings, check, known)


# ---------------------------------------------------------------------------------------------------------
# What vLLM prints, and the estimate


def _engine_view(r: Resolved, ranks: list[_Rank], plan0: KvPlan, max_len: int) -> dict[str, Any]:
    """The configuration and the per-GPU terms of the budget, by vLLM's names."""
    view: dict[str, Any] = {
        "engine_version": version_str(r.version),
        "engine": "V1" if r.v1 else "V0",
        "max_model_len": max_len,
        "max_num_seqs": r.max_num_seqs,
        "max_num_batched_tokens": r.max_num_batched_tokens,
        "gpu_memory_utilization": r.util,
        "dtype": r.dtype,
        "kv_cache_dtype": r.kv_dtype,
        # where the checkpoint declares a KV-cache quantization: what auto took and why (config.auto_kv_dtype)
        **({"kv_cache_dtype_reason": r.kv_dtype_reason} if r.kv_dtype_reason else {}),
        "block_size": plan0.block_size,
        "block_size_reason": plan0.label,
        "kv_cache_groups": [{"kind": sp.kind, "layers": len(idx), "block_size": sp.block_size,
                             "page_bytes": sp.page_bytes} for sp, idx in plan0.groups],
        "kv_block_bytes": plan0.bytes_per_block,
        "model_loading_bytes": {rk.device.id: rk.weights for rk in ranks},
        "activation_peak_bytes": {rk.device.id: rk.memory.activation for rk in ranks},
        "non_torch_bytes": {rk.device.id: rk.memory.non_torch for rk in ranks},
        "cudagraph_bytes": {rk.device.id: rk.memory.cudagraph for rk in ranks},
    }
    if any(rk.total is not None for rk in ranks):
        view["total_memory_bytes"] = {rk.device.id: rk.total for rk in ranks}
    if any(rk.requested is not None for rk in ranks):
        view["requested_memory_bytes"] = {rk.device.id: rk.requested for rk in ranks}
    if any(rk.available is not None for rk in ranks):
        view["available_kv_cache_bytes"] = {rk.device.id: rk.available for rk in ranks}
    return view


def _post_kv_lines(s: VllmSettings, r: Resolved, view: dict[str, Any]) -> list[str]:
    """What vLLM prints after the KV cache: gpu_model_runner.py capture_model's "Graph capturing finished in N
    secs, took X GiB" (the seconds are not modelled) and, when the warm-up runs out, _dummy_sampler_run's
    RuntimeError (0.8.0+, PR #14728)."""
    out = []
    failed = view.get("failed_phase") or {}
    cg = view.get("cudagraph_actual_bytes") or 0
    if cg and failed.get("phase") != "CUDA graph capture":
        took = f"{format_gib(cg, r.version)} GiB" if r.v1 else f"{cg / GiB:.2f} GiB"
        out.append(f"Graph capturing finished in N secs, took {took}")
    if failed.get("phase") == "sampler warm-up":
        out.append(f"RuntimeError: CUDA out of memory occurred when warming up sampler with "
                   f"{view['sampler_warmup_requests']} dummy requests. Please try lowering `max_num_seqs` or "
                   "`gpu_memory_utilization` when initializing the engine.")
    elif failed.get("phase") == "CUDA graph capture":
        out.append("torch.OutOfMemoryError: CUDA out of memory (during CUDA graph capture)")
    return out


def _kv_allocated(rk: _Rank, num_blocks: int | None, r: Resolved) -> int:
    """The KV cache one rank allocates: num_blocks (the minimum over ranks) of its pool (V1 initialize_kv_cache;
    V0 CacheEngine)."""
    if num_blocks is None or not rk.plan.layers:
        return 0
    if r.v1:
        return num_blocks * rk.plan.bytes_per_block
    return num_blocks * rk.plan.block_size * sum(sp.bytes_per_token for sp in rk.plan.layers.values())


def _phases(spec: ModelSpec, s: VllmSettings, r: Resolved, ranks: list[_Rank], num_blocks: int | None,
            error: str | None) -> tuple[dict[str, tuple], tuple[_Rank, Failure] | None]:
    """Each rank's start-up phases (phases.py) and the first rank / phase that runs past the device's memory.
    Nothing after a refusal: vLLM stops there."""
    out: dict[str, tuple] = {}
    failure = None
    # a refusal of the KV check comes after the profile run: a profile run that runs out of memory still comes first
    # (worker.py determine_num_available_blocks / gpu_worker.py determine_available_memory run profile_run before the
    # budget exists); one at loading or at the free-memory check (determine_available_memory's error) comes before it
    # (and without --kv-cache-memory, which skips the profile: "skipped memory profiling")
    early = error is not None and (s.kv_cache_memory_bytes is not None or any(
        determine_available_memory(rk.device, rk.memory, s, r).error for rk in ranks))
    for rk in ranks:
        kv = _kv_allocated(rk, num_blocks, r) if error is None else 0
        # the phases run on what other processes leave free (the device's free memory when it is known)
        free = rk.total if rk.total is None or rk.device.free_bytes is None else min(rk.total, rk.device.free_bytes)
        ph, f = startup_phases(spec, s, r, free, rk.memory, kv, last_stage=rk.stage == r.pp - 1,
                               n_layers=rk.layers[1] - rk.layers[0] + drafter_graph_layers(s, r, rk.stage == r.pp - 1),
                               first_stage=rk.stage == 0, draft_layers=drafter_graph_layers(s, r, rk.stage == r.pp - 1))
        out[rk.device.id] = ph
        if f is not None and failure is None and (error is None or not early and f.phase.startswith("profile run")):
            failure = (rk, f)
    return out, failure


def mamba_blocks_error(spec: ModelSpec, s: VllmSettings, r: Resolved, num_blocks: int | None) -> str | None:
    """config/compilation.py resolve_cudagraph_mode_and_sizes (settings.ERAS mamba_blocks_check, 0.20+): with Mamba
    layers in the KV cache and FULL graphs to capture, every decode sequence needs one of the cache's blocks, so
    max_num_seqs above them is refused, the message vLLM raises. Held out: Qwen3.6-27B-FP8 on one H100 at 0.95
    (vllm-project/recipes#551: 856 blocks printed, 863 here)."""
    if num_blocks is None or not r.v1 or not r.at_least("mamba_blocks_check") or s.enforce_eager:
        return None
    if not any(layer.recurrent is not None for layer in spec.trunk_layers) or not graph_count(spec, s, r)[1]:
        return None
    if r.max_num_seqs <= num_blocks:
        return None
    return (f"max_num_seqs ({r.max_num_seqs}) exceeds available Mamba cache blocks ({num_blocks}). Each decode "
            "sequence requires one Mamba cache block, so CUDA graph capture cannot proceed. Please lower max_num_seqs "
            f"to at most {num_blocks} or increase gpu_memory_utilization.")


def _stage_layers(spec: ModelSpec, r: Resolved, stage: int) -> int:
    first, last = pp_partition(spec.n_trunk_layers, r.pp, r.version, r.pp_layer_partition)[stage]
    return last - first


def _phase_view(spec: ModelSpec, s: VllmSettings, r: Resolved, phases: dict[str, tuple],
                failure: tuple[_Rank, Failure] | None) -> dict[str, Any]:
    pw, full = graph_count(spec, s, r)
    first_draft = drafter_graph_layers(s, r, r.pp == 1)
    first_layers = _stage_layers(spec, r, 0) + first_draft
    view: dict[str, Any] = {
        "phases": [dict(device=dev, **p.to_dict()) for dev, ph in phases.items() for p in ph],
        "cudagraph_capture_sizes": list(capture_sizes(spec, s, r)),
        "cudagraph_piecewise_graphs": pw,
        "cudagraph_full_graphs": full,
        # the first stage's capture: the pool and, beyond two PCIe GPUs, NCCL's share (phases.py nccl_graph_bytes)
        "cudagraph_actual_bytes": 0 if s.enforce_eager else cudagraph_actual_bytes(
            spec, s, r, first_layers, first_draft) + nccl_graph_bytes(spec, s, r, first_layers),
        # model runner V2's draft-decode FULL graphs (0.29+, phases.py draft_decode_graphs)
        "cudagraph_draft_decode_graphs": draft_decode_graphs(spec, s, r, first_draft)[0],
        "sampler_warmup_requests": (min(r.max_num_seqs, r.max_num_batched_tokens)
                                    if r.v1 and r.at_least("v1_dummy_sampler") else None),
        "sampler_warmup_bytes": sampler_warmup_bytes(spec, s, r),
        "failed_phase": None,
    }
    if failure is not None:
        rk, f = failure
        view["failed_phase"] = {"device": rk.device.id, "phase": f.phase, "needed_bytes": f.needed,
                                "left_bytes": f.left, "short_bytes": f.needed - f.left, "after_kv": f.after_kv}
    return view


def _report_kv_cache_config(s: VllmSettings, r: Resolved, plan0: KvPlan, num_blocks: int, max_len: int
                            ) -> tuple[list[str], dict[str, Any]]:
    """kv_cache_utils.py _report_kv_cache_config (V1: "GPU KV cache size", "Maximum concurrency"; V0 executor:
    "# GPU blocks") -> (the lines, the figures for engine_view)."""
    bpr = plan0.blocks_per_request(max_len, kv_tokens_in_flight(r))
    if r.v1:
        concurrency = num_blocks / bpr if bpr else None
        if r.at_least("tokens_from_concurrency"):  # int(max_concurrency * max_model_len)
            tokens = int((concurrency or 0) * max_len)
        else:  # num_blocks // number of groups * block size
            tokens = num_blocks // plan0.n_groups * plan0.block_size
    else:
        tokens = num_blocks * plan0.block_size
        concurrency = tokens / max_len
    figures = dict(num_gpu_blocks=num_blocks, kv_cache_tokens=tokens,
                   max_concurrency=round(concurrency, 2) if concurrency is not None else None)
    if r.v1:
        ml = f"{max_len:,}"
        if r.at_least("null_block"):
            return [f"GPU KV cache size: {tokens:,} tokens, Maximum concurrency for {ml} tokens per request: "
                    f"{concurrency:.2f}x"], figures
        return [f"GPU KV cache size: {tokens:,} tokens",
                f"Maximum concurrency for {ml} tokens per request: {concurrency:.2f}x"], figures
    cpu_blocks = int(s.swap_space * GiB // (plan0.block_size * sum(
        sp.bytes_per_token for sp in plan0.layers.values()))) if plan0.layers else 0
    label = "# GPU blocks" if r.version < (0, 7, 0) else "# cuda blocks"
    return [f"{label}: {num_blocks}, # CPU blocks: {cpu_blocks}",
            f"Maximum concurrency for {max_len} tokens per request: {concurrency:.2f}x"], figures


def _usages(spec: ModelSpec, s: VllmSettings, r: Resolved, ranks: list[_Rank], num_blocks: int | None,
            error: str | None, need_one: dict[str, int]) -> tuple[list[Usage], list[str]]:
    """Each GPU's bytes by kind once vLLM has started, and a warning where a batch as large as the profile run's,
    run eager later, may not find the profile's peak again (or, V1 before 0.20, the graphs their room)."""
    budget_cudagraphs = cudagraphs_in_budget(s, r)
    usages, warnings = [], []
    short: list[tuple[int, str, int, int]] = []
    for rk in ranks:
        m = rk.memory
        last = rk.stage == r.pp - 1
        if rk.num_blocks is not None and num_blocks is not None and rk.plan.layers:
            kv = _kv_allocated(rk, num_blocks, r)
        elif error is not None or rk.available is None:
            kv = need_one[rk.device.id]
        else:
            kv = 0
        allocated = error is None and rk.available is not None and rk.num_blocks is not None
        # What start-up leaves on the card, phase by phase (phases.py startup_phases). The profile run's peak is freed
        # before the KV cache is allocated (0.4-0.6.3 worker.py determine_num_available_blocks ends in gc.collect();
        # torch.cuda.empty_cache(); from 0.6.4 utils.py memory_profiling does so on exit, V1's gpu_worker.py
        # determine_available_memory alike, read in 0.8.0 and 0.29.0): the KV cache and the CUDA graphs are then
        # allocated into that memory, so the peak adds to what start-up holds only where it is larger than both
        # (vllm#7553: 0.5.4's driver starts with its 782 MiB peak beside 4.1 GiB of KV cache and 2.4 GiB of graphs,
        # which a sum puts 0.5 GiB past the 24,564 MiB card). V1 likewise (vllm#34076, 0.15.2, RTX 5070 Ti: the peak
        # and the 0.34 GiB estimate in the sum put it 148 MiB past the card where its phases leave 98 MiB): the
        # graphs hold what capture_model takes ("took", phases.py capture_bytes), not the estimate
        # (gpu_model_runner.py profile_cudagraph_memory, 0.19+, captured into a throwaway pool; from 0.20 it only
        # sizes the budget), and the last stage keeps the sampler warm-up's blocks reserved in PyTorch's cache
        # (gpu_worker.py compile_or_warm_up_model, 0.8.0 -> 0.34: _dummy_sampler_run "called after capture_model
        # on purpose to prevent memory buffers from being cleared", 0.34 "keep its max-batch buffers ... cached";
        # no empty_cache after it, nor in model runner V2's gpu/warmup.py warmup_kernels, 0.29). Where vLLM refuses, or the GPU's memory is not known, the KV cache shown is what
        # one request needs, beside the peak and the estimate, as the budget counts them. A batch as large as the
        # profile's, run eager later, needs the peak again: warned below, not counted.
        if allocated:
            n_layers = rk.layers[1] - rk.layers[0] + drafter_graph_layers(s, r, last)
            graphs = capture_bytes(spec, s, r, n_layers, rk.stage == 0, drafter_graph_layers(s, r, last)) \
                if r.v1 else m.cudagraph
            held = sampler_warmup_bytes(spec, s, r) if last else 0
            compute = max(m.activation - m.state - m.kept - kv - graphs, held) + m.kept
        else:
            graphs, compute = m.cudagraph, m.activation - m.state
        overhead = m.context + m.non_torch + graphs
        usage = Usage(id=rk.device.id, name=rk.device.name, memory_bytes=rk.device.memory_bytes,
                      weights_bytes=rk.weights, kv_cache_bytes=kv, recurrent_state_bytes=m.state, compute_bytes=compute,
                      overhead_bytes=overhead + (driver_reserved(rk.device) if rk.device.memory_bytes else 0))
        usages.append(usage)
        left = None if usage.memory_bytes is None else usage.memory_bytes - usage.total_bytes
        if allocated and left is not None and m.activation - m.state - compute > left:
            short.append((left - (m.activation - m.state - compute), rk.device.id, m.activation - m.state, left))
        if rk.total is not None and rk.requested is not None and not budget_cudagraphs and m.cudagraph and r.v1:
            # V1 before 0.20 captures outside the budget, into the headroom and what the profile's peak gave back
            headroom = rk.total - rk.requested - m.context + m.activation
            if m.cudagraph > headroom:
                warnings.append(f"{rk.device.id}: CUDA graphs (about {gib_str(m.cudagraph)}) are captured after the "
                                f"KV cache, outside the {r.util} budget, and the {gib_str(max(headroom, 0))} left may "
                                "not hold them: lower --gpu-memory-utilization or use --enforce-eager")
    if short:
        # a batch as large as the profile's runs eager (past the largest captured size), beside the graphs
        _, dev, act, left = min(short)
        warnings.append(f"{dev}: vLLM starts, but a batch of {r.max_num_batched_tokens:,} tokens needs the profile "
                        f"run's {gib_str(act)} again beside the CUDA graphs, with {gib_str(max(left, 0))} left: "
                        "lower --gpu-memory-utilization or use --enforce-eager")
    return usages, warnings


def _assemble(spec: ModelSpec, s: VllmSettings, r: Resolved, ranks: list[_Rank], warnings: list[str],
              check: KvCheck, known: bool) -> VllmEstimate:
    batched = kv_tokens_in_flight(r)  # what the KV need reads
    error, max_len = check.error, check.max_len
    num_blocks = min((rk.num_blocks for rk in ranks if rk.num_blocks is not None and rk.plan.layers), default=None)
    plan0 = next((rk.plan for rk in ranks if rk.plan.layers), ranks[0].plan)
    view = _engine_view(r, ranks, plan0, max_len)
    mamba = mamba_blocks_error(spec, s, r, num_blocks) if error is None else None
    phases, failure = _phases(spec, s, r, ranks, num_blocks, error or mamba)
    view.update(_phase_view(spec, s, r, phases, failure))
    reported_error = error  # vLLM reports the KV cache before the phases that run after it
    if failure is not None and not failure[1].after_kv and (error is not None or mamba is not None):
        # the profile run ran out of memory before the KV check could refuse (_phases): vLLM never reaches it
        error = reported_error = mamba = None
    if mamba is not None:
        # raised after the KV cache is sized and reported, before its tensors are allocated
        error = mamba
        view["fixes"] = [f"lower --max-num-seqs to {num_blocks}"]
        warnings.append(f"vLLM refuses to start after sizing the KV cache: {mamba}")
    elif failure is not None and error is None:
        rk, f = failure
        what = ("KV cache allocated, then " if f.after_kv else "") + f"the {f.phase} needs {f.needed / MiB:,.0f} MiB " \
            f"with {f.left / MiB:,.0f} MiB left on {rk.device.id}"
        error = what
        warnings.append(f"vLLM starts, then dies: {what}" if f.after_kv else f"vLLM runs out of memory: {what}")
    lines = [f"Model loading took {_loading_str(ranks[0].weights, r)}"]
    mm_figures, mm_line = encoder_view(spec, s, r)  # profile_run's encoder dummy pass (encoder.py)
    view.update(mm_figures)
    lines += [mm_line] if mm_line else []
    if r.v1 and not r.runner_v2 and r.at_least("cudagraph_estimate") and not s.enforce_eager and \
            ranks[0].memory.cudagraph:
        # gpu_model_runner.py profile_cudagraph_memory (0.18+): printed, subtracted from 0.20 (opt-in before); runner
        # V2 prints none
        lines.append(f"Estimated CUDA graph memory: {format_gib(ranks[0].memory.cudagraph, r.version)} GiB total")
    if ranks[0].available is not None and r.v1:
        lines.append(f"Available KV cache memory: {format_gib(ranks[0].available, r.version)} GiB")
    # V1 raises before it reports the cache (kv_cache_utils.py check_enough_kv_cache_memory runs first); V0
    # prints its block counts and then refuses
    if num_blocks is not None and (reported_error is None or not r.v1):
        report, figures = _report_kv_cache_config(s, r, plan0, num_blocks, max_len)
        view.update(figures)
        lines += report
        lines += _post_kv_lines(s, r, view) if mamba is None else [f"ValueError: {mamba}"]
    # one request at max_model_len, and max_num_seqs of them: what the KV cache must hold at least. One request is
    # what check_enough_kv_cache_memory holds each worker to: its own stage's layers, or in 0.14-0.16 under
    # pipeline parallelism the whole model's (merged_pp_check; the figure vllm#34076's refusal prints)
    whole = kv_plan(spec, s, r).needed(max_len, batched) if merged_pp_check(r) else None
    need_one = {rk.device.id: rk.plan.needed(max_len, batched) if whole is None else whole for rk in ranks}
    need_many = {rk.device.id: _needed_many(rk.plan, max_len, batched, r) for rk in ranks}
    if error is not None or not known:
        view["kv_needed_one_request_bytes"] = need_one
    if not known and s.kv_cache_memory_bytes is None:
        view["kv_needed_max_num_seqs_bytes"] = need_many
    if error is not None:
        view["error"] = error
        if check.estimated_len is not None:
            view["estimated_max_model_len"] = check.estimated_len
        if reported_error is not None:
            warnings.append(f"vLLM refuses to start: {error}")
    if not known and s.kv_cache_memory_bytes is None:
        warnings.append("no GPU memory given: the KV cache shown is what one max_model_len request needs "
                        f"({max_len} tokens); {r.max_num_seqs} such requests need "
                        f"{gib_str(sum(need_many.values()))} in all. vLLM itself sizes "
                        "the cache from gpu_memory_utilization x the GPU's memory")
    usages, cg_warnings = _usages(spec, s, r, ranks, num_blocks, error, need_one)
    warnings.extend(cg_warnings)
    if s.nnodes > 1:
        view["node_memory_bytes"] = node_totals(usages, s.nnodes)  # per machine: each node's GPUs together
    host = Usage(id="CPU", name="host", weights_bytes=sum(rk.host_weights for rk in ranks),
                 kv_cache_bytes=int(s.swap_space * GiB) * len(ranks) if not r.v1 else 0)
    view["log"] = "\n".join(lines)  # the start-up lines as this release prints them
    settings = s.to_dict()
    settings.update(max_model_len=max_len, gpu_memory_utilization=r.util, max_num_seqs=r.max_num_seqs,
                    max_num_batched_tokens=r.max_num_batched_tokens, enable_chunked_prefill=r.chunked_prefill,
                    enable_prefix_caching=r.prefix_caching, block_size=plan0.block_size, dtype=r.dtype,
                    engine_version=version_str(r.version))
    return VllmEstimate(model=spec, engine="vllm", settings=settings, devices=tuple(usages), host=host,
                        engine_view=view, kv_bytes_per_token=_kv_bytes_per_token(ranks, r, max_len),
                        kv_bytes_per_token_marginal=_kv_bytes_per_token_marginal(ranks, r),
                        layers=_layer_uses(spec, ranks, num_blocks), warnings=tuple(warnings), error=error)


def _needed_many(plan: KvPlan, max_len: int, batched: int, r: Resolved) -> int:
    """KV for max_num_seqs requests of max_model_len each (whole blocks per request)."""
    if not plan.layers:
        return 0
    return plan.needed(max_len, batched) * r.max_num_seqs


def _loading_str(weights: int, r: Resolved) -> str:
    if not r.v1:
        return f"{weights / GiB:.4f} GB"  # V0 model_runner.py: "Loading model weights took %.4f GB"
    if r.runner_v2 and r.version < (0, 28):
        # model runner V2 up to 0.27 (v1/worker/gpu/model_runner.py load_model): "Model loading took %s GiB and"
        return f"{round(weights / GiB, 2)} GiB"
    if r.at_least("format_gib"):
        return f"{round(weights / GiB, 2)} GiB memory"
    return f"{weights / GiB:.4f} GiB"


def _replica(ranks: list[_Rank], r: Resolved) -> list[_Rank]:
    """The TP x PP ranks of one data-parallel replica: a request's KV lives in one replica only."""
    return ranks[: r.tp * r.pp]


def _charge_per_token(plan: KvPlan, r: Resolved, max_len: int) -> float:
    """Bytes of this rank's KV budget one token of the engine's printed capacity ("GPU KV cache size") takes.

    V0 (worker/cache_engine.py get_cache_block_size): every layer, block_size x per-token bytes per block.
    V1 up to 0.20.1 (v1/core/kv_cache_utils.py _report_kv_cache_config): tokens = num_blocks // n_groups x
    block_size, num_blocks = available // (page x layers per group) (get_num_blocks), so a token costs
    page x layers per group x groups / block_size: on a hybrid model every group pays, sliding ones included
    (gemma-3-27b: 7 groups of 10 layers, i.e. 70 layers' worth for 62 layers, 10 of them full attention).
    0.20.2+ (settings.ERAS tokens_from_concurrency): tokens = int(max_concurrency x max_model_len) with
    max_concurrency = num_blocks / the blocks one
    max_model_len request draws (get_max_concurrency_for_kv_cache_config), so the charge depends on
    max_model_len (sliding groups stop growing past window + max_num_batched_tokens)."""
    if not plan.layers:
        return 0.0
    if not r.v1:
        return float(sum(sp.bytes_per_token for sp in plan.layers.values()))
    if r.at_least("tokens_from_concurrency"):
        bpr = plan.blocks_per_request(max_len, kv_tokens_in_flight(r))
        return plan.bytes_per_block * bpr / max_len if max_len else 0.0
    return plan.bytes_per_block * plan.n_groups / plan.block_size


def _kv_bytes_per_token(ranks: list[_Rank], r: Resolved, max_len: int) -> int | None:
    """What one token of vLLM's own capacity costs, over the ranks of one replica: a KV budget divided by it
    gives the "GPU KV cache size" vLLM prints (to the block)."""
    total = sum(_charge_per_token(rk.plan, r, max_len) for rk in _replica(ranks, r))
    return round(total) if total else None


def _kv_bytes_per_token_marginal(ranks: list[_Rank], r: Resolved) -> int | None:
    """Bytes one more token of one sequence physically adds, over the ranks of one replica (full-attention and
    MLA layers; sliding, chunked and Mamba layers are bounded). Equal to the charge on uniform models."""
    total = 0
    linear = False
    for rk in _replica(ranks, r):
        for sp in rk.plan.layers.values():
            if sp.kind in ("full", "mla"):
                total += sp.bytes_per_token
                linear = True
    return total if linear else None


def _layer_uses(spec: ModelSpec, ranks: list[_Rank], num_blocks: int | None) -> tuple[LayerUse, ...]:
    first_by_stage = {}
    for rk in ranks:
        first_by_stage.setdefault(rk.stage, rk)
    out = []
    w_by_layer = per_layer_sum((t.layer, t.nbytes) for t in spec.weights.tensors)
    for layer in spec.layers:
        rk = next((x for x in first_by_stage.values() if x.layers[0] <= layer.index < x.layers[1]), None)
        if rk is None:
            out.append(LayerUse(index=layer.index, kind=layer.kind.value, device="-", weights_bytes=0, kv_bytes=0,
                                recurrent_bytes=0))
            continue
        sp = rk.plan.layers.get(layer.index)
        kv = sp.page_bytes * num_blocks if sp is not None and num_blocks is not None else 0
        w = w_by_layer.get(layer.index, 0)
        is_state = sp is not None and sp.kind == "mamba"
        out.append(LayerUse(index=layer.index, kind=layer.kind.value, device=rk.device.id, weights_bytes=w,
                            kv_bytes=0 if is_state else kv, recurrent_bytes=kv if is_state else 0,
                            cells=(num_blocks * sp.block_size if sp is not None and num_blocks and not is_state
                                   else None)))
    return tuple(out)
