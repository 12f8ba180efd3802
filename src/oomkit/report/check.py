"""CheckResult -> the verdict a person reads, or JSON."""

from __future__ import annotations

import json

from ..accuracy import error_band
from ..check import CheckResult
from ..engines.base import get_engine
from ..memory import MemoryEstimate
from ..units import MiB


def mib(n: int | None) -> str:
    return "-" if n is None else f"{n / MiB:,.0f} MiB"


def to_json(r: CheckResult) -> str:
    return json.dumps(r.to_dict(), indent=2)


_STAGE_TEXT = {
    "weights": "the weights: they do not fit even before the KV cache",
    "kv_cache": "the KV cache: the weights fit, the KV cache for this context does not",
    "compute": "the compute buffer: weights and KV cache fit, the compute buffer does not",
}
_STAGE_NAME = {"weights": "the weights", "kv_cache": "the KV cache", "compute": "the compute buffer"}
_HARDWARE = {"detected": "detected", "planned": "planned (--vram/--gpu)", "cpu": "CPU only: this machine's RAM"}


# the runtime each backend's device names stand for (llama.cpp's buffer names: CUDA0, ROCm0, MTL0, Vulkan0, SYCL0)
_RUNTIME = {"CUDA": "CUDA context", "ROCm": "HIP (ROCm) context", "MTL": "Metal runtime", "Metal": "Metal runtime",
            "Vulkan": "Vulkan driver", "SYCL": "SYCL context"}


def _runtime_label(r: CheckResult) -> str:
    kinds = {_RUNTIME.get(d.usage.id.rstrip("0123456789"), "driver context") for d in r.devices}
    return f"{kinds.pop() if len(kinds) == 1 else 'driver context'} and workspace"


def refusal(est: MemoryEstimate, otherwise: str) -> str:
    """Why an engine refuses settings that fit in memory: its own error, else its first warning."""
    return est.engine_view.get("error") or next(iter(est.warnings), otherwise)


def text(r: CheckResult) -> str:
    est, m = r.estimate, r.model
    s = est.settings
    lines = []
    ctx_note = ""
    if r.n_ctx and m.n_ctx_train:
        if r.n_ctx == m.n_ctx_train:
            ctx_note = " (the model's maximum)"
        elif r.n_ctx > m.n_ctx_train:
            ctx_note = f" (above the model's maximum of {m.n_ctx_train})"
    eng = get_engine(est.engine)
    kv = [str(s[f]) for f in eng.kv_fields if s.get(f)]
    kv_text = f" · KV {'/'.join(kv)}" if kv else ""
    par = next((s.get(f) for f in eng.neutral_fields("parallel")), None)
    par_text = f" · {par} sequence{'s' if par != 1 else ''}" if isinstance(par, int) else ""
    lines.append(f"{m.name} · {m.weights.format} · {est.engine} · context {r.n_ctx}{ctx_note}{kv_text}{par_text}")
    if r.hardware == "reference":
        lines.append(f"no GPU found on this machine: checking against the reference card {r.reference}; "
                     "give --gpu NAME or --vram SIZE for yours, or --cpu-only for this machine's RAM")
    else:
        planned_host = r.hardware == "cpu" and any(n.startswith("--ram:") for n in r.hardware_notes)
        lines.append(f"hardware: {'CPU only: a planned host (--ram)' if planned_host else _HARDWARE[r.hardware]}")
    for d in r.devices:
        u = d.usage
        parts = [f"  {u.id:6s} {u.name}"]
        if r.hardware == "detected":
            parts.append(f"{mib(d.total_bytes)} total, {mib(d.budget_bytes)} free")
            if d.used_by_others_bytes is not None:
                parts.append(f"{mib(d.used_by_others_bytes)} used by other processes")
        elif r.hardware == "cpu":
            parts.append(f"{mib(d.total_bytes)} RAM, {mib(d.budget_bytes)} available")
        else:
            parts.append(mib(d.budget_bytes))
        lines.append(" · ".join(parts))
    for n in r.hardware_notes:
        lines.append(f"  note: {n}")

    f = r.failing
    if r.fits:
        lines.append(f"verdict: FITS with {mib(r.margin_bytes)} left")
    elif r.engine_refuses:
        est = r.estimate
        why = refusal(est, "see its notes below")
        kind = r.refusal_kind
        if kind == "starts, but":  # SGLang: its pool is short of one full-length request
            lines.append(f"verdict: DOES NOT FIT — {est.engine} starts, but {why}")
        elif est.engine_view.get("failed_phase"):  # vLLM, SGLang: a start-up phase needs more than is left
            lines.append(f"verdict: DOES NOT FIT — {est.engine} {kind}: {why}")
        else:  # an engine that splits the model with the CPU by itself (llama.cpp's --fit, Ollama) runs it, slower
            lines.append(f"verdict: DOES NOT FIT — {est.engine} {kind} although {mib(r.margin_bytes)} is left: {why}")
    else:
        where = f" on {f.usage.id}" if len(r.devices) > 1 or r.hardware != "cpu" else ""
        lines.append(f"verdict: DOES NOT FIT — short by {mib(-r.margin_bytes)}{where}")
        why = r.engine_failure
        if why and r.estimate.engine_view.get("failed_phase"):  # vLLM, SGLang: the start-up phase that runs out
            lines.append(f"  fails first during {r.estimate.engine}'s start-up: {why}")
        elif why:  # their refusal at start: the weights past the memory, or the KV cache check
            lines.append(f"  fails first at {_STAGE_NAME[r.stage]}: {r.estimate.engine} refuses to start: {why}")
        else:
            lines.append(f"  fails first at {_STAGE_TEXT[f.stage]}")
    w = sum(d.usage.weights_bytes for d in r.devices)
    rt = sum(d.usage.overhead_bytes for d in r.devices)
    budget = sum(d.budget_bytes for d in r.devices)
    kv_total = sum(d.usage.kv_cache_bytes for d in r.devices)
    rs = sum(d.usage.recurrent_state_bytes for d in r.devices)
    comp = sum(d.usage.compute_bytes for d in r.devices)
    rows = [
        ("memory available", mib(budget), "free memory now" if r.hardware == "detected" else ""),
        ("weights", mib(w), ""),
        ("runtime", mib(rt), _runtime_label(r) if r.hardware != "cpu" else "output buffer"),
        # a deficit is no memory left: 0, with the weights' overshoot beside it (not a negative amount left)
        ("memory after weights", mib(max(budget - w - rt, 0)),
         "what is left for the KV cache and compute" if budget >= w + rt
         else f"none: the weights and runtime alone are {mib(w + rt - budget)} over"),
        _kv_row(r, est, kv_total),
    ]
    if rs:
        rows.append(("recurrent state", mib(rs), "fixed per sequence"))
    rows.append(("compute buffers", mib(comp), ""))
    rows.append(("needed in all", mib(w + rt + kv_total + rs + comp), ""))
    width = max(len(a) for a, _, _ in rows)
    for a, b, c in rows:
        lines.append(f"  {a:<{width}}  {b:>12}" + (f"   {c}" if c else ""))
    if r.max_context is not None:
        top = " (the model's maximum)" if r.max_context == m.n_ctx_train else ""
        lines.append(f"largest context that fits with these settings: {r.max_context}{top}")
    else:
        lines.append("largest context that fits with these settings: none — not even 256 tokens")
    if r.max_context_by_kv:
        lines.append("  by KV cache type: " + " · ".join(
            f"{k} {v if v is not None else 'none'}" for k, v in r.max_context_by_kv.items()))
    if r.min_required_bytes is not None:
        d = min(r.devices, key=lambda x: x.left_bytes)
        phys = d.total_bytes if d.total_bytes is not None else d.budget_bytes
        if r.impossible:
            lines.append(f"no setting fits: even 256 tokens with the {r.min_required_kv} KV cache type need "
                         f"{mib(r.min_required_bytes)} on {d.usage.id}, which has {mib(phys)} of physical memory "
                         f"— a smaller quant, more GPUs or offloading layers to the CPU is needed")
        elif r.min_required_bytes <= d.budget_bytes:
            lines.append(f"a shorter context does not help: {est.engine} fails at every context with these settings "
                         "(the verdict says what to change)")
        else:
            lines.append(f"it would fit on an idle card: the smallest setting needs {mib(r.min_required_bytes)} on "
                         f"{d.usage.id} ({mib(phys)} physical), but only {mib(d.budget_bytes)} is free now")
    lines.append(f"error band: {error_band(est)['summary']}")
    for n in (*r.notes, *est.warnings, *m.labels):
        lines.append(f"note: {n}")
    return "\n".join(lines)


def _kv_row(r, est, kv_total: int) -> tuple[str, str, str]:
    """The KV cache's row. llama.cpp and Ollama size it for the context; vLLM and SGLang allocate a pool from what
    the budget leaves, whatever the context, so their row names the pool and, where vLLM refuses the context, what
    one request of it needs (kv_cache_utils.py _check_enough_kv_cache_memory), not a figure that reads as its size."""
    per_token = f"{est.kv_bytes_per_token / 1024:,.0f} KiB per token" if est.kv_bytes_per_token else ""
    view = est.engine_view
    if getattr(est, "request_limit", None) is not None:  # SGLang
        return f"KV cache pool ({view['max_total_num_tokens']} tokens)", mib(kv_total), per_token
    if "available_kv_cache_bytes" not in view:
        return f"KV cache for {r.n_ctx} tokens", mib(kv_total), per_token
    label = f"KV cache pool ({view['kv_cache_tokens']} tokens)" if view.get("kv_cache_tokens") else "KV cache pool"
    one = view.get("kv_needed_one_request_bytes") or {}
    if view.get("error") and one:
        return label, mib(kv_total), f"one {view['max_model_len']}-token request needs {mib(max(one.values()))}"
    return label, mib(kv_total), per_token
