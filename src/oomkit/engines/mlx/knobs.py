"""The knobs the planner may turn for MLX (mlx-lm): the weights as published or converted to 8 / 4 bits
(`mlx_lm.convert -q --q-bits N`, group 64: what the mlx-community repos publish), and the KV cache quantized with
`--kv-bits 8|4` (mlx_lm/models/cache.py QuantizedKVCache)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from ...memory import Device
from ...model.spec import ModelSpec
from ..base import Choice
from .settings import MlxSettings


def knobs(model: str, spec: ModelSpec, devices: tuple[Device, ...], base: MlxSettings, *, concurrency: int = 1,
          fixed_format: bool = False, reserve_bytes: int = 0, nodes: int = 1) -> Iterator[Choice]:
    # an lms load key names one download: another quantization is another key, which oomkit cannot name
    bits = (base.q_bits,) if fixed_format or base.program == "lmstudio" else (None, 8, 4)
    # mlx_lm.server has no --kv-bits (mlx_lm/server.py): a quantized cache is mlx_lm.generate's; nor has lms load
    # (lmstudio.ai/docs/cli/load)
    kv_bits = (None,) if base.program in ("mlx_lm.server", "lmstudio") else (None, 8, 4)
    for q in bits:
        for kv in kv_bits:
            s = replace(base, q_bits=q, kv_bits=kv, batch=max(base.batch, concurrency))
            w = "as published" if q is None else f"{q}-bit"
            yield Choice(s, f"{w} weights, " + ("model-dtype KV" if kv is None else f"{kv}-bit KV"),
                         weight_format=None if q is None else f"mlx-{q}bit")
