"""The start-up held-out sets' shared helpers (tests/test_startup_heldout4.py, tests/test_vllm_heldout5.py,
tests/test_startup_heldout6.py): a set's fixture by its stem, n GPUs of a catalog name (at its catalog memory or a given total), and the
first rank's figure of a per-rank engine_view entry, the phase a run dies in."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from oomkit.hardware.catalog import lookup as gpu_lookup
from oomkit.hardware.catalog import with_facts
from oomkit.memory import Device


def fixture_loader(here: Path) -> Callable[[str], dict]:
    """The reader of a set's fixtures: stem -> the JSON of here/stem.json."""
    def fixture(stem: str) -> dict:
        return json.loads((here / f"{stem}.json").read_text(encoding="utf-8"))
    return fixture


def gpus(name: str, n: int, total: int | None = None) -> tuple[Device, ...]:
    """n GPUs of a catalog name, of its catalog memory or `total` bytes."""
    part = gpu_lookup(name)
    return tuple(with_facts(Device(f"CUDA{i}", part.name, total or part.memory_bytes)) for i in range(n))


def died(est) -> str | None:
    """The phase a run dies in, as the start-up sets name it (the phase after the KV cache, "dies before the KV
    cache (phase)" before it), or None where no phase fails."""
    failed = est.engine_view.get("failed_phase")
    if not failed:
        return None
    return failed["phase"] if failed["after_kv"] else f"dies before the KV cache ({failed['phase']})"


def first(view: dict, key: str) -> int:
    return next(iter(view[key].values()))
