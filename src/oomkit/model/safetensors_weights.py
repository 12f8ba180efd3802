"""Exact weight bytes of a Hugging Face model directory from its safetensors headers (no weights read)."""

from __future__ import annotations

import re
from pathlib import Path

from .safetensors_header import read_safetensors_model
from .spec import TensorSpec, WeightInventory

_LAYER = re.compile(r"(?:^|\.)layers\.(\d+)\.")


def inventory_from_safetensors(path: str | Path) -> WeightInventory:
    """Every tensor with its stored dtype and bytes; `layer` from the `layers.N.` part of its name."""
    model = read_safetensors_model(path)
    tensors = []
    dtypes: dict[str, int] = {}
    for t in model.tensors:
        m = _LAYER.search(t.name)
        tensors.append(TensorSpec(name=t.name, shape=tuple(t.shape), dtype=t.dtype, nbytes=t.nbytes,
                                  layer=int(m.group(1)) if m else None))
        dtypes[t.dtype] = dtypes.get(t.dtype, 0) + t.nbytes
    main = max(dtypes, key=dtypes.get) if dtypes else "unknown"
    return WeightInventory(tensors=tuple(tensors), exact=True, format=f"safetensors {main}")
