"""The knobs the planner may turn for vLLM, by vLLM's own options (vllm/engine/arg_utils.py EngineArgs):
the checkpoint and its quantized repos or `--quantization fp8`, `--kv-cache-dtype auto|fp8`, `--max-num-seqs` for
the concurrency asked, `-tp` over the GPUs of one machine (and `-pp` across machines), `--gpu-memory-utilization`
lowered to what other programs leave free (vLLM refuses to start when free memory is below total x utilization:
v1/worker/gpu_worker.py init_device), and, for the second tier, `--cpu-offload-gb` (GiB of weights per GPU kept in
host memory and streamed in for each forward pass)."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from ...errors import OomkitError
from ...memory import Device, MemoryEstimate
from ...model.archs import DSV4_ARCHS
from ...model.spec import ModelSpec
from .._hf_knobs import hf_weight_choices
from ..base import Choice
from ..release_flags import known_in
from .config import FLAGS_FILE, auto_kv_dtype, default_utilization, fp8_kv_name
from .quantization import check_fp8_block_tp, offered_at
from .settings import VllmSettings, parse_version

KV_TYPES = ("auto", "fp8")
OFFLOAD_GB = (0, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256)


def utilization_for(devices: tuple[Device, ...], reserve_bytes: int) -> float | None:
    """The largest --gpu-memory-utilization (two decimals, as people type it) that other programs' memory leaves."""
    sizes = [d.memory_bytes for d in devices if d.memory_bytes]
    if not reserve_bytes or not sizes:
        return None
    return math.floor((min(sizes) - reserve_bytes) / min(sizes) * 100) / 100


def knobs(model: str, spec: ModelSpec, devices: tuple[Device, ...], base: VllmSettings, *, concurrency: int = 1,
          fixed_format: bool = False, reserve_bytes: int = 0, nodes: int = 1) -> Iterator[Choice]:
    n = max(len(devices), 1)
    per_node = n // nodes if nodes > 1 else n
    parallel = dict(tensor_parallel_size=per_node, pipeline_parallel_size=nodes) if n > 1 else {}
    if n > 1 and not _block_fp8_accepts(spec, per_node, False):
        parallel.update(_block_fp8_layout(spec, per_node, nodes))
    util = utilization_for(devices, reserve_bytes)
    # DeepSeek-V4 keeps an fp8 cache only (config.py dsv4_kv_dtype): "auto" is refused before 0.30 and is the same
    # fp8_ds_mla cache from 0.30, so it is offered as fp8 alone, not as a model-dtype cache
    kv_types = ("fp8",) if spec.architecture in DSV4_ARCHS else KV_TYPES
    # the release's spelling of an 8-bit cache (config.fp8_kv_name): fp8_e5m2 in 0.3.0-0.4.0.post1, none before 0.3.0
    fp8 = fp8_kv_name(parse_version(base.engine_version))
    kv_types = tuple(kv if kv != "fp8" else fp8 for kv in kv_types if kv != "fp8" or fp8)
    version = parse_version(base.engine_version)
    # --cpu-offload-gb is first in 0.5.3 (vllm_flags.json's spans): older releases have no second tier
    offload = ("cpu_offload_gb", OFFLOAD_GB) if known_in(FLAGS_FILE, "--cpu-offload-gb", version) is not False else None
    for arg, quantization, wlabel in hf_weight_choices(model, spec, fixed_format, inflight_nf4=True):
        # only a method the release's parser lists (quantization.offered_at: no fp8 before 0.4.1, no bitsandbytes
        # before 0.5.0 nor where it needs --load-format bitsandbytes beside it, 0.5.0-0.5.5)
        if quantization and not offered_at(quantization, version):
            continue
        for kv in kv_types:
            s = replace(base, kv_cache_dtype=kv, **parallel)
            if quantization:
                s = replace(s, quantization=quantization)
            if concurrency > 1:
                s = replace(s, max_num_seqs=concurrency)
                if concurrency > BATCH_TOKENS_FLOOR and (s.max_num_batched_tokens or 0) < concurrency:
                    # SchedulerConfig refuses max_num_batched_tokens < max_num_seqs (config.resolve): the budget a
                    # smaller GPU defaults to (2048) is raised to the requests asked for
                    s = replace(s, max_num_batched_tokens=concurrency)
            # other programs' memory lowers the fraction from the user's (or the release's default), never raises it:
            # a reserve must not plan more than none
            current = base.gpu_memory_utilization
            if util is not None and (current if current is not None else default_utilization(version)) > util:
                s = replace(s, gpu_memory_utilization=util)
            # "auto" is the checkpoint's own KV quantization where the release takes it (config.auto_kv_dtype)
            auto = auto_kv_dtype(spec, version)[0]
            auto_label = f"{auto} KV (the checkpoint's, auto)" if auto else "model-dtype KV"
            label = f"{wlabel}, {auto_label if kv == 'auto' else kv + ' KV'}"
            yield Choice(s, label, model=arg, weight_format=quantization, offload=offload)


# the smallest max_num_batched_tokens vLLM defaults to (V1's 2048 for the API server on GPUs below the large tiers,
# arg_utils.py get_batch_defaults): above it a plan's --max-num-seqs may need the token budget raised beside it
BATCH_TOKENS_FLOOR = 2048


def _block_fp8_accepts(spec: ModelSpec, tp: int, expert_parallel: bool) -> bool:
    try:
        check_fp8_block_tp(spec, tp, 1, expert_parallel)
    except OomkitError:
        return False
    return True


def _block_fp8_layout(spec: ModelSpec, per_node: int, nodes: int) -> dict[str, Any]:
    """A layout vLLM builds for a block-FP8 checkpoint whose slices at -tp per_node are not whole blocks
    (quantization.check_fp8_block_tp): the same TP with --enable-expert-parallel (the experts whole on each rank,
    as vllm-project/recipes#12 turned to it), else the largest TP that divides into whole blocks with the GPUs left
    as pipeline stages; unchanged where none does (the engine's refusal then says why)."""
    if _block_fp8_accepts(spec, per_node, True):
        return dict(enable_expert_parallel=True)
    tp = per_node // 2
    while tp >= 1:
        if per_node % tp == 0 and _block_fp8_accepts(spec, tp, False):
            return dict(tensor_parallel_size=tp, pipeline_parallel_size=nodes * (per_node // tp))
        tp //= 2
    return {}


_MAMBA_BLOCKS = re.compile(r"max_num_seqs \((\d+)\) exceeds available Mamba cache blocks \((\d+)\)")


def settle(s: VllmSettings, est: MemoryEstimate) -> VllmSettings | None:
    """The fix vLLM's own refusal names, where it names one. A model with Mamba-style state refuses max_num_seqs
    above the KV cache's blocks, one block per decode sequence ("Please lower max_num_seqs to at most N",
    config/compilation.py resolve_cudagraph_mode_and_sizes, 0.20+: layout.mamba_blocks_error); the default of 1024
    (arg_utils.py _set_default_args on large GPUs) is a cap on the batch, not a need, so the planner writes the
    largest power of two within the blocks (the halving relief turns), as vllm-project/recipes#551 wrote 512 for
    856 blocks. None: no such refusal."""
    for line in est.warnings:
        m = _MAMBA_BLOCKS.search(line)
        if m and int(m.group(1)) > int(m.group(2)) >= 1:
            return replace(s, max_num_seqs=1 << (int(m.group(2)).bit_length() - 1))
    # A phase after the KV cache that runs short (the CUDA graph capture, the sampler warm-up: allocated outside the
    # budget) names its fix too: "consider decreasing `gpu_memory_utilization` or switching to eager mode" (0.8
    # worker/model_runner.py capture_model; v1 gpu_model_runner.py _dummy_sampler_run: "try lowering max_num_seqs or
    # gpu_memory_utilization"). The utilization that leaves the phase its room keeps the CUDA graphs.
    failed = est.engine_view.get("failed_phase")
    util = est.settings.get("gpu_memory_utilization")
    if isinstance(failed, dict) and failed.get("after_kv") and isinstance(util, float):
        total = next((d.memory_bytes for d in est.devices if d.id == failed.get("device") and d.memory_bytes), None)
        if total:
            lower = math.floor((util * total - failed["short_bytes"]) / total * 100) / 100
            if 0.5 <= lower < util:
                return replace(s, gpu_memory_utilization=lower)
    return None


def relief(s: VllmSettings, effective: dict[str, Any] | None = None) -> Iterator[tuple[str, Any, str]]:
    """Moves that cost no context, the cheapest first: a utilization up to 0.95 gives the KV cache more of the GPU;
    a utilization a little lower leaves the phases after the KV cache (CUDA graph capture, the sampler warm-up,
    both outside the budget) the room they need, for a few per cent of the KV cache, the fix vLLM's own warm-up
    error names (gpu_model_runner.py _dummy_sampler_run: "try lowering `max_num_seqs` or `gpu_memory_utilization`");
    no async scheduling reserves fewer sliding-window blocks per request (0.26+); fewer concurrent sequences shrink
    the sampler and activation profile (--max-num-seqs, halved); without CUDA
    graphs vLLM keeps no graph memory (--enforce-eager, slower decode; from 0.20 the estimate is taken from the KV
    budget: gpu_worker.py)."""
    util = s.gpu_memory_utilization
    if util is None or util < 0.95:
        yield "gpu_memory_utilization", 0.95, "vLLM may use 95 % of the GPU (nothing else runs on it)"
    for lower in (0.01, 0.02, 0.03, 0.05):
        if util is not None and util - lower >= 0.5:
            yield ("gpu_memory_utilization", round(util - lower, 2),
                   "a little less of the GPU for the KV cache leaves the CUDA graphs and the sampler warm-up, which "
                   "vLLM allocates after it, the room they need")
    # async scheduling keeps more than one batch in flight (max_concurrent_batches), and from 0.26 every sliding-window
    # or chunked-local group reserves the window plus those batches' tokens for a request
    # (v1/core/kv_cache_utils.py max_admission_blocks_per_request, VllmConfig.max_in_flight_tokens): without it a
    # request needs fewer blocks, for some scheduling overlap (config/scheduler.py SchedulerConfig.async_scheduling)
    if s.async_scheduling is not False:
        yield ("async_scheduling", False,
               "no async scheduling: one batch in flight, so a request reserves fewer sliding-window blocks "
               "(the CPU's scheduling no longer overlaps the GPU's step)")
    # halved from the user's value, else from the default vLLM settles on for these GPUs (arg_utils.py
    # _set_default_args: 1024 on large GPUs from 0.10, 256 before and on smaller ones; 512 where it is not known):
    # a value at or above the one in force only adds memory
    seqs = s.max_num_seqs or (effective or {}).get("max_num_seqs")
    n = seqs // 2 if isinstance(seqs, int) and seqs > 0 else 512
    while n >= 32:
        yield "max_num_seqs", n, "fewer concurrent sequences: a smaller sampler and activation profile"
        n //= 2
    if not s.enforce_eager:
        yield "enforce_eager", True, "no CUDA graphs: their memory goes to the KV cache (slower decode)"
