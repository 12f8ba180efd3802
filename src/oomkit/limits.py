"""The two tables users look for, for any model, engine and KV cache type:

- hard limits: the largest context that fits, by VRAM size (and the detected devices), for each KV cache type;
- context impact: the KV cache (and the whole GPU total) by context length, 2K ... 1M up to the model's own
  maximum, for each KV cache type, with the smallest listed VRAM size that still holds it.

Both call the engine directly (`eng.estimate(spec, devices, eng.with_context(settings, n))`) on a model resolved
once. The largest context is searched by interpolation on the engine's own figures (`largest_context`): memory
grows almost linearly with the context, so a handful of estimates find the exact answer a bisection finds in
~10-17 (tests hold it to one: tests/oracles.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .engines.base import EngineModule
from .errors import OomkitError, SettingsError
from .memo import SEARCHING
from .memory import Device, MemoryEstimate
from .model.spec import ModelSpec
from .units import GiB

VRAM_SIZES_GB = (8, 12, 16, 24, 32, 48, 80, 96, 141, 192)
CONTEXTS = tuple(2048 << i for i in range(10))  # 2K ... 1M
STEP = 256  # contexts searched in multiples of 256 (llama.cpp pads n_ctx to 256 cells)

# ---------------------------------------------------------------------------------------------------------
# The largest context that fits


def largest_context(slack: Callable[[int], int | None], hi: int, step: int = STEP) -> int | None:
    """The largest multiple of `step` in [step, hi] whose slack (bytes left on the tightest device; negative:
    short) is >= 0, for a slack that shrinks as the context grows. None when even `step` does not fit.
    slack(n) None means the engine refused n (counts as not fitting).

    Regula falsi on the grid: for a linear slack the first interpolated guess is the answer and one more
    estimate proves it. A guess that did not halve the interval is followed by a bisection, so that every two
    estimates at least halve it (a slack with a jump, such as a cache that changes size, otherwise drags one side
    a step at a time). A refusal's slack (-1, or None) is bisected at once.
    """
    token = SEARCHING.set("fit")
    try:
        return _largest_context(slack, hi, step)
    finally:
        SEARCHING.reset(token)


def _largest_context(slack: Callable[[int], int | None], hi: int, step: int) -> int | None:
    hi -= hi % step
    if hi < step:
        return None

    def s(k: int) -> float:
        v = slack(k * step)
        return float("-inf") if v is None else v

    lo_k, hi_k = 1, hi // step
    s_lo = s(lo_k)
    if s_lo < 0:
        return None
    s_hi = s(hi_k)
    if s_hi >= 0:
        return hi_k * step
    bisect = False
    while hi_k - lo_k > 1:
        width = hi_k - lo_k
        # -1: what device_slack and the plan's slack give a load the engine refuses that fits in memory (est.fits
        # False: llama.cpp's --fit found no layout, a pool too small): no bytes to interpolate on, and the guess
        # would land a step below hi, costing an estimate per halving
        if bisect or s_hi == float("-inf") or s_hi == -1:
            guess = (lo_k + hi_k) // 2
        else:
            guess = lo_k + int((hi_k - lo_k) * s_lo / (s_lo - s_hi))
        guess = min(max(guess, lo_k + 1), hi_k - 1)
        v = s(guess)
        if v >= 0:
            lo_k, s_lo = guess, v
        else:
            hi_k, s_hi = guess, v
        bisect = not bisect and 2 * (hi_k - lo_k) > width
    return lo_k * step


def device_slack(est: MemoryEstimate) -> int | None:
    """Bytes left on the tightest device of an estimate (negative: short); None when no size is known.
    An engine that refuses what would fit in memory (vLLM: no KV room for one max-length request; Ollama:
    layers split with the CPU) says so in est.fits: that counts as just short."""
    left = [u.memory_bytes - u.total_bytes for u in est.devices if u.memory_bytes is not None]
    if not left:
        return None
    return min(left) if est.fits is not False else min(min(left), -1)


def beyond_runtime_fit(est: MemoryEstimate, n: int) -> bool:
    """A runtime that fits the context itself (LM Studio's MLX runtime: engine_view runtime_fitted_context) loads its
    own whatever is asked: a context above it is not to be had (one below it gets the fitted one)."""
    fitted = est.engine_view.get("runtime_fitted_context")
    return fitted is not None and fitted < n


def context_slack(eng: EngineModule, spec: ModelSpec, devices: tuple[Device, ...], settings: Any,
                  measure: Callable[[MemoryEstimate], int | None] = device_slack) -> Callable[[int], int | None]:
    """slack(n) for `largest_context`: `measure` of the estimate at context n (default: the bytes left on the
    tightest device); None when the engine refuses n."""
    def slack(n: int) -> int | None:
        try:
            est = eng.estimate(spec, devices, eng.with_context(settings, n))
        except OomkitError:
            return None
        return None if beyond_runtime_fit(est, n) else measure(est)

    return slack


def context_limit(spec: ModelSpec) -> int:
    """The top of the search: the model's trained context (1M when it declares none)."""
    return spec.n_ctx_train or (1 << 20)


def max_context(eng: EngineModule, spec: ModelSpec, devices: tuple[Device, ...], settings: Any, step: int = STEP
                ) -> int | None:
    """The largest multiple of `step` up to the trained context that fits on every device (the estimate's
    max_context)."""
    return largest_context(context_slack(eng, spec, devices, settings), context_limit(spec), step)


# ---------------------------------------------------------------------------------------------------------
# The tables


@dataclass(frozen=True)
class Target:
    """A VRAM size of the table (one GPU of that size), or the detected / planned devices."""

    label: str
    devices: tuple[Device, ...]
    kind: str = "size"  # size | detected | planned

    @property
    def memory_bytes(self) -> int:
        return sum(d.memory_bytes or 0 for d in self.devices)


def size_targets(sizes_gb: tuple[float, ...] = VRAM_SIZES_GB) -> tuple[Target, ...]:
    """One GPU of each size. Sizes are nominal, n x 1024 MiB as the catalog's nominal entries; a real card reports
    a little less (an RTX 4090 24564 MiB of 24576)."""
    return tuple(Target(f"{g:g} GB", (Device(id="CUDA0", name=f"{g:g} GB GPU", memory_bytes=int(g * GiB)),))
                 for g in sizes_gb)


@dataclass(frozen=True)
class KvColumn:
    kv: str
    error: str | None = None  # the engine refuses this type with these settings (e.g. quantized V without FA)


@dataclass(frozen=True)
class ContextRow:
    n_ctx: int
    kv_cache_bytes: dict[str, int]  # per KV type: the whole KV cache (all devices and host)
    total_bytes: dict[str, int]  # per KV type: everything on the GPU for one GPU of any size
    fits: dict[str, dict[str, bool]]  # per KV type: target label -> fits


@dataclass(frozen=True)
class Tables:
    model: ModelSpec
    engine: str
    settings: dict[str, Any]
    kv: tuple[KvColumn, ...]
    targets: tuple[Target, ...]
    limits: dict[str, dict[str, int | None]]  # target label -> KV type -> largest context
    rows: tuple[ContextRow, ...]
    weights_bytes: int
    kv_bytes_per_token: dict[str, int | None]
    notes: tuple[str, ...] = field(default=())

    @property
    def kv_types(self) -> tuple[str, ...]:
        return tuple(c.kv for c in self.kv if c.error is None)

    def smallest_fitting(self, row: ContextRow, kv: str) -> str | None:
        """The smallest listed VRAM size (sizes only, not the detected devices) that holds this row."""
        sized = [t for t in self.targets if t.kind == "size" and row.fits[kv].get(t.label)]
        return min(sized, key=lambda t: t.memory_bytes).label if sized else None

    def to_dict(self) -> dict[str, Any]:
        m = self.model
        return {
            "model": {"name": m.name, "architecture": m.architecture, "n_ctx_train": m.n_ctx_train,
                      "weights_format": m.weights.format},
            "engine": self.engine,
            "settings": self.settings,
            "weights_bytes": self.weights_bytes,
            "kv_types": [c.kv for c in self.kv],
            "kv_errors": {c.kv: c.error for c in self.kv if c.error},
            "kv_bytes_per_token": self.kv_bytes_per_token,
            "targets": [{"label": t.label, "kind": t.kind, "memory_bytes": t.memory_bytes,
                         "devices": [{"id": d.id, "name": d.name, "memory_bytes": d.memory_bytes}
                                     for d in t.devices]} for t in self.targets],
            "limits": [{"target": t.label, "memory_bytes": t.memory_bytes,
                        "max_context": self.limits[t.label]} for t in self.targets],
            "context": [{"n_ctx": r.n_ctx,
                         "kv": {kv: {"kv_cache_bytes": r.kv_cache_bytes[kv], "total_bytes": r.total_bytes[kv],
                                     "fits": r.fits[kv], "smallest_size": self.smallest_fitting(r, kv)}
                                for kv in self.kv_types}}
                        for r in self.rows],
            "notes": list(self.notes),
        }


def contexts_for(n_ctx_train: int, contexts: tuple[int, ...] = CONTEXTS) -> tuple[int, ...]:
    """2K, 4K, ... up to the model's own maximum (which closes the list when it is not a power of two)."""
    top = n_ctx_train or contexts[-1]
    rows = [n for n in contexts if n <= top]
    if top not in rows and top <= contexts[-1]:
        rows.append(top)
    return tuple(rows)


def build_tables(eng: EngineModule, spec: ModelSpec, settings: Any, targets: tuple[Target, ...],
                 kv_types: tuple[str, ...] | None = None, contexts: tuple[int, ...] | None = None) -> Tables:
    kv_types = kv_types or eng.kv_types_of(spec)
    contexts = contexts or contexts_for(spec.n_ctx_train)
    settings = eng.typed_layout(settings)  # what each context needs as typed, not llama.cpp's --fit moving layers
    probe_dev = (Device(id="CUDA0", name="GPU"),)  # one GPU of unknown size: what the model needs on one GPU
    columns: list[KvColumn] = []
    limits: dict[str, dict[str, int | None]] = {t.label: {} for t in targets}
    per_token: dict[str, int | None] = {}
    rows_kv: dict[int, dict[str, int]] = {n: {} for n in contexts}
    rows_total: dict[int, dict[str, int]] = {n: {} for n in contexts}
    weights = 0
    eng_settings: dict[str, Any] = {}
    # A single GPU whose usage does not depend on its size (llama.cpp: yes; vLLM sizes its KV pool from the
    # memory) shares one curve across every size: estimate once per context, compare with each size.
    independent = _size_independent(eng, spec, settings)
    for kv in kv_types:
        s = eng.with_kv_type(settings, kv)
        try:
            first = eng.estimate(spec, probe_dev, eng.with_context(s, STEP))
        except OomkitError as e:
            columns.append(KvColumn(kv, error=str(e)))
            for t in targets:
                limits[t.label][kv] = None
            continue
        columns.append(KvColumn(kv))
        weights = first.devices[0].weights_bytes + first.host.weights_bytes
        eng_settings = eng_settings or first.settings
        per_token[kv] = first.kv_bytes_per_token
        cache: dict[tuple[str, int], Any] = {}

        def est(devs: tuple[Device, ...], n: int, key: str, s=s, cache=cache) -> Any:
            if (key, n) not in cache:
                try:
                    cache[(key, n)] = eng.estimate(spec, devs, eng.with_context(s, n))
                except OomkitError:
                    cache[(key, n)] = None
            return cache[(key, n)]

        for t in targets:
            if independent and len(t.devices) == 1:
                mem = t.devices[0].memory_bytes

                def slack(n: int, mem=mem) -> int | None:
                    e = est(probe_dev, n, "one")
                    return None if e is None else mem - e.devices[0].total_bytes
            else:
                def slack(n: int, t=t) -> int | None:
                    e = est(t.devices, n, t.label)
                    return None if e is None else device_slack(e)
            limits[t.label][kv] = largest_context(slack, context_limit(spec))
        for n in contexts:
            e = est(probe_dev, n, "one")
            if e is None:
                rows_kv[n][kv] = rows_total[n][kv] = None
                continue
            rows_kv[n][kv] = e.kv_cache_bytes
            rows_total[n][kv] = e.devices[0].total_bytes
    ok = [c.kv for c in columns if c.error is None]
    rows = tuple(ContextRow(n_ctx=n, kv_cache_bytes=rows_kv[n], total_bytes=rows_total[n],
                            fits={kv: {t.label: (limits[t.label][kv] or 0) >= n for t in targets} for kv in ok})
                 for n in contexts)
    notes = []
    if spec.n_ctx_train and spec.n_ctx_train > CONTEXTS[-1]:
        notes.append(f"rows stop at {CONTEXTS[-1]} tokens; the model's maximum is {spec.n_ctx_train}")
    if any(t.kind == "size" for t in targets):
        notes.append("VRAM sizes are nominal (n × 1024 MiB); a real card reports a little less "
                     "(RTX 4090: 24564 MiB of 24576)")
    return Tables(model=spec, engine=eng.name, settings=eng_settings, kv=tuple(columns),
                  targets=targets, limits=limits, rows=rows, weights_bytes=weights, kv_bytes_per_token=per_token,
                  notes=tuple(notes))


def _size_independent(eng: EngineModule, spec: ModelSpec, settings: Any) -> bool:
    """Whether one GPU's usage is the same whatever its size (then one estimate serves every size)."""
    try:
        a, b = (eng.estimate(spec, (Device(id="CUDA0", name="GPU", memory_bytes=g * GiB),),
                             eng.with_context(settings, STEP)) for g in (8, 192))
    except OomkitError:
        return False
    if not a.devices:  # the settings keep every buffer off the GPU (llama.cpp -dev none): no VRAM size matters
        raise SettingsError(f"these {eng.name} settings place nothing on a GPU (every buffer on the CPU): a table "
                            "by VRAM size has nothing to show; check the RAM with oomkit check --cpu-only")
    strip = ("memory_bytes",)
    da = {k: v for k, v in a.devices[0].to_dict().items() if k not in strip}
    db = {k: v for k, v in b.devices[0].to_dict().items() if k not in strip}
    return da == db
