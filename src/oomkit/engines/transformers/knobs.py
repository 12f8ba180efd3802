"""The knobs the planner may turn for transformers: the checkpoint in its dtype, or loaded 8-bit / 4-bit (nf4) with
bitsandbytes (BitsAndBytesConfig), the batch for the concurrency asked, and, for the second tier,
device_map="auto" with layers in CPU memory (accelerate's dispatch)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from ...memory import Device
from ...model.spec import ModelSpec
from ..base import Choice
from .settings import TransformersSettings


def knobs(model: str, spec: ModelSpec, devices: tuple[Device, ...], base: TransformersSettings, *,
          concurrency: int = 1, fixed_format: bool = False, reserve_bytes: int = 0, nodes: int = 1
          ) -> Iterator[Choice]:
    loads = ((False, False),) if fixed_format else ((False, False), (True, False), (False, True))
    for in8, in4 in loads:
        s = replace(base, load_in_8bit=in8, load_in_4bit=in4, batch_size=max(base.batch_size, concurrency))
        if in4:
            s = replace(s, bnb_4bit_quant_type="nf4")
        w = "8-bit (bitsandbytes)" if in8 else "nf4 (bitsandbytes)" if in4 else f"{spec.weights.format}"
        yield Choice(s, f"{w} weights, model-dtype KV",
                     weight_format="bnb-int8" if in8 else "nf4" if in4 else None)
