"""The third tier: nothing fits this hardware, so which hardware does it fit? The smallest GPU, or number of GPUs,
from the GPU catalog that runs the model with the engine at the asked context (the weights as asked, the engine's
default KV type), with its launch command.

Candidates are the cards people buy or rent for this (GPU catalog names), 1, 2, 4 or 8 of them in one machine,
tried from the least total memory up; the first that fits wins (fewer cards first at equal memory).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..engines.base import EngineModule
from ..errors import OomkitError
from ..hardware.catalog import devices_for_names, lookup
from ..memory import Device
from ..model.names import OLLAMA_MLX_FORMAT
from ..units import GiB
from .options import evaluate

# Cards people run local models on or rent by the hour, by catalog name.
CANDIDATES = {
    "gpu": ("RTX 3060 12GB", "RTX 4060 Ti 16GB", "RTX 3090", "RTX 4090", "RTX 5090", "L40S", "RTX A6000",
            "A100 80GB PCIe", "H100 SXM", "RTX PRO 6000", "H200", "B200"),
    "apple": ("M4 Pro 48GB", "M4 Max 64GB", "M4 Max 128GB", "M3 Ultra 256GB", "M3 Ultra 512GB"),
}
COUNTS = (1, 2, 4, 8)


@dataclass(frozen=True)
class Hardware:
    gpu: str
    count: int
    devices: tuple[Device, ...]
    option: Any  # search.Option on that hardware
    needed_bytes: int  # what the option uses on all its GPUs together

    def to_dict(self) -> dict[str, Any]:
        return {"gpu": self.gpu, "count": self.count, "memory_bytes": sum(d.memory_bytes or 0 for d in self.devices),
                "needed_bytes": self.needed_bytes, "command": self.option.command, "tier": 3,
                "context": self.option.context, "estimate": self.option.estimate.to_dict()}


def candidates(eng: EngineModule, weights_format: str = "") -> list[tuple[int, int, str]]:
    """(total memory, count, catalog name) for each candidate machine, smallest first: Apple machines for MLX
    weights (mlx-lm, an Ollama MLX build), GPU machines for the rest."""
    apple = eng.name == "mlx" or weights_format.startswith(OLLAMA_MLX_FORMAT)
    names = CANDIDATES["apple"] if apple else CANDIDATES["gpu"]
    out = []
    for name in names:
        spec = lookup(name)
        if spec is None:
            continue
        for n in (1,) if spec.unified_memory else COUNTS:
            out.append((spec.memory_bytes * n, n, spec.name))
    return sorted(out)


def smallest_hardware(eng: EngineModule, models: Any, ref: str, base: Any, goals: Any, fixed_format: bool,
                      quant: str | None) -> Hardware | None:
    """The first candidate machine on which the model, as asked, fits entirely on the GPUs at the asked context."""
    spec = models.spec(None, quant)
    for _, count, name in candidates(eng, spec.weights.format):
        devices = devices_for_names(f"{count}x {name}")
        try:
            choice = eng.knobs(ref, spec, devices, base, concurrency=goals.concurrency, fixed_format=True,
                               reserve_bytes=0)[0]
            option = evaluate(eng, spec, choice, ref, devices, _no_reserve(goals), goals.context_for(spec),
                              offload=False)
        except OomkitError:
            continue
        if option is not None and len(option.estimate.devices) > count:
            continue  # the settings take more GPUs than this machine has (-tp 2 on one card): not this machine
        if option is not None and option.tier == 1:
            used = sum(u.total_bytes for u in option.estimate.devices)
            return Hardware(gpu=name, count=count, devices=devices, option=option, needed_bytes=used)
    return None


def _no_reserve(goals: Any) -> Any:
    return replace(goals, reserve_bytes=0, held=(), headroom_bytes=min(goals.headroom_bytes, 1 * GiB))
