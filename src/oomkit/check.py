"""`check`: will this model, at this context, with this engine and settings, fit on this machine?

    check("llama3.1:8b", "llama.cpp", settings=...) -> CheckResult

The verdict is taken against the memory a new engine can really have: each detected GPU's FREE memory (what other
processes hold is reported beside it), or the planned hardware (--vram, --gpu), or, with no GPU at all, a
reference card (said so). It names the stage that fails first in the order an engine allocates (weights, then the
KV cache and recurrent state, then the compute buffers), the largest context that fits with the same settings
(and with each KV cache type), and, when nothing fits, the smallest requirement against the physical memory.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

from .engines.base import EngineModule, get_engine
from .errors import OomkitError
from .hardware.catalog import devices_for_names, lookup, size_notes
from .hardware.detect import Hardware, HostMemory, detect, host_memory
from .limits import STEP, context_limit, context_slack, device_slack, largest_context
from .memo import SEARCHING
from .memory import Device, MemoryEstimate, Usage
from .model.spec import ModelSpec
from .request import devices_from, ram_size, resolve_model, with_ram

# A reference card for a machine without a GPU: the most common 24 GB card people run local LLMs on.
REFERENCE_GPU = "RTX 4090"
STAGES = ("weights", "kv_cache", "compute")


# vLLM and SGLang allocate in their own order (weights, the profile run, then the KV cache from what is left, then
# CUDA graphs and warm-ups): where their start-up model names the phase that runs out, that phase is the stage
_PHASE_STAGE = {"weights": "weights", "KV cache": "kv_cache", "KV cache pool": "kv_cache"}


def engine_stage(view: dict[str, Any]) -> str | None:
    """The stage an engine's own start-up model says fails: the phase that runs out (vllm/layout.py and
    sglang/layout.py failed_phase), else its refusal at start, which for both engines is the KV cache check
    (vLLM kv_cache_utils.py check_enough_kv_cache_memory, SGLang model_runner.py init_memory_pool)."""
    failed = view.get("failed_phase")
    if failed:
        return _PHASE_STAGE.get(failed.get("phase"), "compute")
    return "kv_cache" if view.get("error") else None


@dataclass(frozen=True)
class DeviceCheck:
    usage: Usage  # the estimate's figures on this device; usage.memory_bytes is the budget
    total_bytes: int | None  # physical memory (None when unknown)
    used_by_others_bytes: int | None  # memory other processes hold now (detected devices only)

    @property
    def budget_bytes(self) -> int:
        return self.usage.memory_bytes or 0

    @property
    def left_bytes(self) -> int:
        return self.budget_bytes - self.usage.total_bytes

    @property
    def after_weights_bytes(self) -> int:
        """What is left for the KV cache, state and compute once weights and the runtime are in."""
        return self.budget_bytes - self.usage.weights_bytes - self.usage.overhead_bytes

    @property
    def stage(self) -> str | None:
        """The first allocation that does not fit: weights (with the runtime), then the KV cache and recurrent
        state, then the compute buffers. None when everything fits."""
        u, b = self.usage, self.budget_bytes
        if u.total_bytes <= b:
            return None
        if u.overhead_bytes + u.weights_bytes > b:
            return "weights"
        if u.overhead_bytes + u.weights_bytes + u.kv_cache_bytes + u.recurrent_state_bytes > b:
            return "kv_cache"
        return "compute"

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.usage.id, "name": self.usage.name, "total_bytes": self.total_bytes,
                "budget_bytes": self.budget_bytes, "used_by_others_bytes": self.used_by_others_bytes,
                "weights_bytes": self.usage.weights_bytes, "kv_cache_bytes": self.usage.kv_cache_bytes,
                "recurrent_state_bytes": self.usage.recurrent_state_bytes,
                "compute_bytes": self.usage.compute_bytes, "overhead_bytes": self.usage.overhead_bytes,
                "needed_bytes": self.usage.total_bytes, "left_bytes": self.left_bytes,
                "after_weights_bytes": self.after_weights_bytes, "stage": self.stage}


@dataclass(frozen=True)
class CheckResult:
    estimate: MemoryEstimate
    hardware: str  # detected | planned | reference | cpu
    devices: tuple[DeviceCheck, ...]
    max_context: int | None  # with these settings
    max_context_by_kv: dict[str, int | None]  # the same settings with each KV cache type of the engine
    n_ctx: int | None  # the context checked (after the engine's defaults and padding)
    rope_scaling_factor: float | None = None  # set when n_ctx is above the model's trained maximum
    min_required_bytes: int | None = None  # when nothing fits: the smallest requirement (tightest device)
    min_required_kv: str | None = None
    impossible: bool = False  # even the smallest context exceeds the PHYSICAL memory
    reference: str | None = None  # the reference card's name (hardware == "reference")
    hardware_notes: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())

    @property
    def model(self) -> ModelSpec:
        return self.estimate.model

    @property
    def engine_refuses(self) -> bool:
        """The devices have room, yet the engine itself would not start (or would split layers off the GPU)."""
        return self.hardware != "cpu" and self.estimate.fits is False and all(d.stage is None for d in self.devices)

    @property
    def fits(self) -> bool:
        return all(d.stage is None for d in self.devices) and not self.engine_refuses

    @property
    def margin_bytes(self) -> int:
        """Bytes left on the tightest device; negative: short by that much."""
        return min(d.left_bytes for d in self.devices)

    @property
    def failing(self) -> DeviceCheck | None:
        """The device whose allocation fails first (the earliest stage; then the largest shortfall)."""
        bad = [d for d in self.devices if d.stage is not None]
        if not bad:
            return None
        return min(bad, key=lambda d: (STAGES.index(d.stage), d.left_bytes))

    @property
    def stage(self) -> str | None:
        if self.engine_refuses:
            return "engine"
        f = self.failing
        if f is None:
            return None
        # the earlier of the engine's own stage and the devices' (weights past the memory come before either refusal)
        return min((st for st in (engine_stage(self.estimate.engine_view), f.stage) if st), key=STAGES.index)

    @property
    def engine_failure(self) -> str | None:
        """The engine's own words for the failure (its refusal, or the start-up phase that runs out), when the
        devices are short and the engine's start-up model names one."""
        if self.fits or self.engine_refuses:
            return None
        return self.estimate.engine_view.get("error")

    @property
    def refusal_kind(self) -> str | None:
        """How the engine stops a run the devices have room for, in the words of the text report and the JSON
        verdict alike: it splits the model with the CPU by itself (llama.cpp's --fit, Ollama), its pool is short of
        one full-length request (SGLang), a start-up phase runs out before or after the KV cache (vLLM, SGLang), or
        it refuses the settings. None when the engine does not refuse."""
        if not self.engine_refuses:
            return None
        est = self.estimate
        failed = est.engine_view.get("failed_phase")
        if getattr(est, "request_limit", None) is not None:
            return "starts, but"
        if failed:
            return "starts, then dies" if failed.get("after_kv") else "runs out of memory during start-up"
        if getattr(est, "split", False) or getattr(est, "full_offload", None) is False:
            return "runs these settings only split with the CPU"
        return "refuses these settings"

    @property
    def verdict(self) -> str:
        m = self.margin_bytes
        if self.fits:
            return f"fits with {m / (1 << 20):,.0f} MiB left"
        if self.engine_refuses:  # the memory holds it; the engine's own rule stops it (its error says which)
            kind = self.refusal_kind
            return f"does not fit: {self.estimate.engine} {kind}{',' if ' with ' in kind else ''} with " \
                   f"{m / (1 << 20):,.0f} MiB left"
        return f"does not fit by {-m / (1 << 20):,.0f} MiB"

    def to_dict(self) -> dict[str, Any]:
        est = self.estimate
        f = self.failing
        return {
            "fits": self.fits,
            "verdict": self.verdict,
            "margin_bytes": self.margin_bytes,
            "stage": self.stage,
            "failing_device": None if f is None else f.usage.id,
            "hardware": self.hardware,
            "reference": self.reference,
            "devices": [d.to_dict() for d in self.devices],
            "n_ctx": self.n_ctx,
            "n_ctx_train": self.model.n_ctx_train,
            "max_context": self.max_context,
            "max_context_by_kv": self.max_context_by_kv,
            "weights_bytes": sum(d.usage.weights_bytes for d in self.devices),
            "after_weights_bytes": sum(d.after_weights_bytes for d in self.devices),
            "kv_cache_bytes": est.kv_cache_bytes,
            "recurrent_state_bytes": est.recurrent_state_bytes,
            "kv_bytes_per_token": est.kv_bytes_per_token,
            "rope_scaling_factor": self.rope_scaling_factor,
            "min_required_bytes": self.min_required_bytes,
            "min_required_kv": self.min_required_kv,
            "impossible": self.impossible,
            "hardware_notes": list(self.hardware_notes),
            "notes": list(self.notes),
            "estimate": est.to_dict(),
        }


def check(model: str | ModelSpec, engine: str = "llama.cpp", *, quant: str | None = None, settings: Any = None,
          vram: str | None = None, gpu: str | None = None, cpu_only: bool = False, hardware: Hardware | None = None,
          ram: str | int | None = None, **options: Any) -> CheckResult:
    """Check `model` with `engine` and its settings against this machine (detected, or `hardware`, an
    oomkit.hardware.detect.Hardware), or the hardware planned with `vram` / `gpu`, or the host RAM (`cpu_only`)."""
    eng = get_engine(engine)
    settings = replace(settings, **options) if settings is not None else eng.settings(**options)
    spec = eng.model_for(resolve_model(eng, model, quant), settings)
    if ram is not None:  # the host's memory (--ram): the total llama.cpp's --fit weighs; with cpu_only, the host
        settings = with_ram(eng, settings, ram)
        if cpu_only:  # checked against a host of that size, all of it free
            size = ram_size(ram)
            hardware = Hardware(gpus=(), host=HostMemory(total_bytes=size, available_bytes=size, source="--ram"))
    target = hardware_target(vram, gpu, cpu_only, hardware)
    if ram is not None and cpu_only:
        target = replace(target, notes=(*target.notes, f"--ram: a host of {ram_size(ram) >> 20:,} MiB, all of it free"))
    for name in eng.neutral_fields("ram") if target.kind == "cpu" else ():  # the total llama.cpp's --fit weighs
        settings = replace(settings, **{name: getattr(settings, name) or target.physical["CPU"]})

    est = eng.estimate(spec, target.devices, settings)
    if target.kind != "cpu" and target.devices and not est.devices:
        # the command keeps every buffer off the GPUs (llama.cpp --device none, common/arg.cpp parse_device_list:
        # "none" is an empty device list): it runs in the host's RAM, so that is what the verdict weighs
        if ram is not None:
            size = ram_size(ram)
            hardware = Hardware(gpus=(), host=HostMemory(total_bytes=size, available_bytes=size, source="--ram"))
        target = hardware_target(cpu_only=True, hardware=hardware)
        target = replace(target, notes=(*target.notes, "the command places nothing on a GPU (every buffer on the "
                                        "CPU): checked against the host's RAM"))
        for name in eng.neutral_fields("ram"):
            settings = replace(settings, **{name: getattr(settings, name) or target.physical["CPU"]})
        est = eng.estimate(spec, target.devices, settings)
    if target.kind == "cpu":
        est = replace(est, host=replace(est.host, memory_bytes=target.host_budget))
    checks = _device_checks(est, target.kind, target.physical, target.others)
    n_ctx = eng.effective_context(est)
    best, by_kv = _largest_contexts(eng, spec, settings, target, n_ctx)

    rope, note = context_note(spec, n_ctx)
    notes: list[str] = [note] if note else []

    result = CheckResult(estimate=est, hardware=target.kind, devices=checks, max_context=best,
                         max_context_by_kv=by_kv, n_ctx=n_ctx, rope_scaling_factor=rope, reference=target.reference,
                         hardware_notes=target.notes, notes=tuple(notes))
    if best is None and not any(by_kv.values()):
        result = _smallest_requirement(result, eng, spec, target.devices, settings, target.kind, target.host_budget)
    return result


def context_note(spec: ModelSpec, n_ctx: int | None) -> tuple[float | None, str | None]:
    """A context above the model's trained maximum: (the RoPE factor it needs, the note that says so), else
    (None, None)."""
    if not (n_ctx and spec.n_ctx_train and n_ctx > spec.n_ctx_train):
        return None, None
    rope = math.ceil(n_ctx / spec.n_ctx_train * 100) / 100
    declared = spec.rope_scaling
    base = (declared.original_max_position_embeddings if declared is not None and declared.type == "yarn"
            else None) or spec.n_ctx_train
    if declared is not None and declared.factor and n_ctx == int(base * declared.factor):
        # the engine's own default (vLLM, SGLang: the trained maximum times the config's RoPE factor), with the
        # config's scaling already applied: more scaling is not the advice
        how = (f"the engine's default, {base} times the declared RoPE factor ({declared.type}, "
               f"{declared.factor:g})")
    else:
        how = (f"it needs RoPE scaling by a factor of {rope:.2f} (e.g. YaRN, factor {rope:.2f} over the "
               f"original {spec.n_ctx_train})")
    return rope, (f"context {n_ctx} is above {spec.name}'s trained maximum of {spec.n_ctx_train} tokens: {how}; "
                  "quality beyond the trained length is not guaranteed")


@dataclass(frozen=True)
class _Target:
    """What the verdict is taken against: the devices, their physical memory and what others hold on them."""

    kind: str  # detected | planned | reference | cpu
    devices: tuple[Device, ...]
    physical: dict[str, int | None]
    others: dict[str, int | None] = field(default_factory=dict)
    host_budget: int | None = None  # cpu: the RAM a new process can have
    reference: str | None = None
    notes: tuple[str, ...] = ()


def hardware_target(vram: str | None = None, gpu: str | None = None, cpu_only: bool = False,
                    hardware: Hardware | None = None) -> _Target:
    """The devices a verdict is taken against: planned (--vram, --gpu), this machine's RAM (cpu_only), the detected
    GPUs' free memory, or, with none, the reference card (said so in .reference)."""
    if vram is not None or gpu is not None:
        devs = devices_from(vram, gpu)
        return _Target("planned", devs, {d.id: d.memory_bytes for d in devs},
                       notes=size_notes(gpu) if gpu is not None else ())
    if cpu_only:
        host = hardware.host if hardware is not None else host_memory()
        if host is None:
            raise OomkitError("cannot read this machine's RAM: give --vram SIZE or --gpu NAME instead")
        return _Target("cpu", (), {"CPU": host.total_bytes}, {"CPU": host.total_bytes - host.available_bytes},
                       host_budget=host.available_bytes)
    hardware = hardware if hardware is not None else detect()
    if hardware.failed:
        raise OomkitError("could not read this machine's GPUs (" + "; ".join(hardware.errors)
                          + "): give --gpu NAME or --vram SIZE")
    notes = [*hardware.notes, *(f"detection failed: {e}" for e in hardware.errors)]
    usable = [g for g in hardware.gpus if g.budget_bytes is not None]
    notes += [f"{g.id} {g.name}: its driver reports no memory size; left out"
              for g in hardware.gpus if g.budget_bytes is None]
    if not usable:
        devs = devices_for_names(REFERENCE_GPU)
        return _Target("reference", devs, {d.id: d.memory_bytes for d in devs}, reference=lookup(REFERENCE_GPU).name,
                       notes=tuple(notes))
    notes += [f"{g.id}: {n}" for g in usable for n in g.notes]
    return _Target("detected", tuple(g.device() for g in usable), {g.id: g.total_bytes for g in usable},
                   {g.id: g.used_bytes for g in usable}, notes=tuple(notes))


def _largest_contexts(eng: EngineModule, spec: ModelSpec, settings: Any, target: _Target, asked: int | None = None
                      ) -> tuple[int | None, dict[str, int | None]]:
    """The largest context that fits with these settings, and with each KV cache type the engine offers (a type
    the engine refuses with these settings at every context is left out, not reported as "none"), up to the
    model's trained maximum or the context asked for, if that is above it (RoPE scaling the command sets)."""
    hi = max(context_limit(spec), asked or 0)

    def search(s: Any) -> tuple[int | None, bool]:
        """-> (the largest context, whether the engine accepted these settings at any context)."""
        answered = []

        def measure(e: MemoryEstimate) -> int | None:
            answered.append(True)
            return target.host_budget - e.host.total_bytes if target.kind == "cpu" else device_slack(e)
        return largest_context(context_slack(eng, spec, target.devices, s, measure), hi), bool(answered)

    best, _ = search(settings)
    by_kv: dict[str, int | None] = {}
    for kv in eng.kv_types_of(spec):
        try:
            s_kv = eng.with_kv_type(settings, kv)
        except OomkitError:
            continue
        if s_kv == settings:
            by_kv[kv] = best
            continue
        n, answered = search(s_kv)
        if answered:
            by_kv[kv] = n
    return best, by_kv


def _device_checks(est: MemoryEstimate, kind: str, physical: dict[str, int | None],
                   others: dict[str, int | None]) -> tuple[DeviceCheck, ...]:
    units = (est.host,) if kind == "cpu" else est.devices
    return tuple(DeviceCheck(usage=u, total_bytes=physical.get(u.id), used_by_others_bytes=others.get(u.id))
                 for u in units)


def _smallest_requirement(result: CheckResult, eng: EngineModule, spec: ModelSpec, devs: tuple[Device, ...],
                          settings: Any, kind: str, host_budget: int | None) -> CheckResult:
    """Nothing fits at any context with any KV type: the least it would take (the smallest context, the smallest
    KV type) on the tightest device, against that device's physical memory."""
    best: tuple[int, str, DeviceCheck] | None = None
    for kv in eng.kv_types_of(spec):
        token = SEARCHING.set("least")  # exact figures; an engine's own count of its tries is not read
        try:
            e = eng.estimate(spec, devs, eng.with_context(eng.with_kv_type(settings, kv), STEP))
        except OomkitError:
            continue
        finally:
            SEARCHING.reset(token)
        if kind == "cpu":
            e = replace(e, host=replace(e.host, memory_bytes=host_budget))
        checks = _device_checks(e, kind, {d.usage.id: d.total_bytes for d in result.devices},
                                {d.usage.id: d.used_by_others_bytes for d in result.devices})
        tight = min(checks, key=lambda d: d.left_bytes)
        if best is None or tight.usage.total_bytes < best[0]:
            best = (tight.usage.total_bytes, kv, tight)
    if best is None:
        return result
    need, kv, tight = best
    phys = tight.total_bytes if tight.total_bytes is not None else tight.budget_bytes
    return replace(result, min_required_bytes=need, min_required_kv=kv, impossible=need > phys)
