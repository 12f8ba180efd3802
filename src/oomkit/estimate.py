"""MemoryEstimate: what one engine allocates for one model and settings, per device and on the host.

`estimate(...)` is the Python API the CLI and the web app call: resolve the model, pick the engine, lay it
out on the devices, and find the largest context that fits.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any

from .model.spec import ModelSpec


@dataclass(frozen=True)
class Usage:
    """Bytes one place (a GPU, or the host) holds, by component."""

    id: str
    name: str = ""
    memory_bytes: int | None = None
    weights_bytes: int = 0
    kv_cache_bytes: int = 0
    recurrent_state_bytes: int = 0
    compute_bytes: int = 0
    overhead_bytes: int = 0

    @property
    def total_bytes(self) -> int:
        return (self.weights_bytes + self.kv_cache_bytes + self.recurrent_state_bytes + self.compute_bytes
                + self.overhead_bytes)

    @property
    def fits(self) -> bool | None:
        return None if self.memory_bytes is None else self.total_bytes <= self.memory_bytes

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["total_bytes"] = self.total_bytes
        return d


@dataclass(frozen=True)
class LayerUse:
    """Where one layer lives and what it costs there (for --explain)."""

    index: int
    kind: str
    device: str
    weights_bytes: int
    kv_bytes: int
    recurrent_bytes: int
    cells: int | None = None  # KV cells this layer's cache holds (per stream)


@dataclass(frozen=True)
class MemoryEstimate:
    model: ModelSpec
    engine: str
    settings: dict[str, Any]
    devices: tuple[Usage, ...]
    host: Usage
    engine_view: dict[str, Any]
    kv_bytes_per_token: int | None
    layers: tuple[LayerUse, ...] = ()
    warnings: tuple[str, ...] = ()
    max_context: int | None = None
    notes: tuple[str, ...] = field(default=())

    def _total(self, attr: str) -> int:
        return sum(getattr(u, attr) for u in (*self.devices, self.host))

    @property
    def weights_bytes(self) -> int:
        return self._total("weights_bytes")

    @property
    def kv_cache_bytes(self) -> int:
        return self._total("kv_cache_bytes")

    @property
    def recurrent_state_bytes(self) -> int:
        return self._total("recurrent_state_bytes")

    @property
    def compute_bytes(self) -> int:
        return self._total("compute_bytes")

    @property
    def overhead_bytes(self) -> int:
        return self._total("overhead_bytes")

    @property
    def total_bytes(self) -> int:
        return self._total("total_bytes")

    @property
    def fits(self) -> bool | None:
        """All devices within their memory; None when no device has a known size."""
        verdicts = [u.fits for u in self.devices if u.fits is not None]
        if not verdicts:
            return None
        return all(verdicts)

    def with_max_context(self, n: int | None) -> MemoryEstimate:
        return replace(self, max_context=n)

    def to_dict(self) -> dict[str, Any]:
        m = self.model
        return {
            "model": {
                "name": m.name, "architecture": m.architecture, "n_layers": m.n_layers,
                "params_total": m.params_total, "params_active": m.params_active,
                "weights_format": m.weights.format, "weights_exact": m.weights.exact,
                "layer_kinds": m.kinds(), "n_ctx_train": m.n_ctx_train, "source": m.source,
            },
            "engine": self.engine,
            "settings": self.settings,
            "weights_bytes": self.weights_bytes,
            "kv_cache_bytes": self.kv_cache_bytes,
            "recurrent_state_bytes": self.recurrent_state_bytes,
            "compute_bytes": self.compute_bytes,
            "overhead_bytes": self.overhead_bytes,
            "total_bytes": self.total_bytes,
            "kv_bytes_per_token": self.kv_bytes_per_token,
            "devices": [u.to_dict() for u in self.devices],
            "host": {k: v for k, v in self.host.to_dict().items() if k not in ("memory_bytes",)},
            "engine_view": self.engine_view,
            "fits": self.fits,
            "max_context": self.max_context,
            "warnings": list(self.warnings) + list(m.labels),
        }


# ---------------------------------------------------------------------------------------------------------
# The Python API


def estimate(
    model: str | ModelSpec,
    engine: str = "llama.cpp",
    *,
    quant: str | None = None,
    vram: str | int | tuple[int, ...] | list[int] | None = None,
    gpu: str | None = None,
    devices: tuple[Any, ...] | None = None,
    cpu_only: bool = False,
    settings: Any = None,
    find_max_context: bool = True,
    **options: Any,
) -> MemoryEstimate:
    """How much memory `model` takes with `engine` and its options (the engine's own option names, e.g.
    n_ctx=32768, cache_type_k="q8_0", flash_attn="on", n_parallel=1 for llama.cpp).

    vram: one size per GPU ("24GiB", "24GiB,24GiB", or bytes); devices: explicit oomkit.engines.base.Device
    tuple; cpu_only: no GPU at all. With no memory given, one GPU of unknown size is assumed.
    settings: a ready engine Settings object (as parsed from a command line); options then override it.
    """
    from .engines.base import get_engine

    eng = get_engine(engine)
    settings = replace(settings, **options) if settings is not None else eng.settings(**options)
    spec = model if isinstance(model, ModelSpec) else _resolve_for_engine(eng, model, quant)
    devs = _devices(vram, gpu, devices, cpu_only)
    est = eng.estimate(spec, devs, settings)
    if find_max_context and est.fits is not None:
        from .limits import max_context

        est = est.with_max_context(max_context(eng, spec, devs, settings))
    return est


def _resolve_for_engine(eng: Any, ref: str, quant: str | None) -> ModelSpec:
    from .model.resolve import resolve

    return resolve(ref, quant, default_format=getattr(eng, "default_weight_format", None))


def _devices(vram: Any, gpu: str | None, devices: tuple[Any, ...] | None, cpu_only: bool) -> tuple[Any, ...]:
    from .engines.base import Device
    from .units import parse_sizes

    if cpu_only:
        return ()
    if devices is not None:
        return tuple(devices)
    if vram is not None:
        sizes = (vram,) if isinstance(vram, int) else tuple(vram) if isinstance(vram, (tuple, list)) \
            else parse_sizes(vram)
        return tuple(Device(id=f"CUDA{i}", name="GPU", memory_bytes=int(s)) for i, s in enumerate(sizes))
    if gpu is not None:
        from .hardware.catalog import devices_for_names

        return devices_for_names(gpu)
    return (Device(id="CUDA0", name="GPU (size unknown)"),)
