"""The knobs the planner may turn for MLX (mlx-lm): the weights as published or converted to 8 / 4 bits
(`mlx_lm.convert -q --q-bits N`, group 64: what the mlx-community repos publish), and the KV cache quantized with
`--kv-bits 8|4` (mlx_lm/models/cache.py QuantizedKVCache)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from ...memory import Device
from ...model import catalog
from ...model.resolve import split_quant
from ...model.spec import ModelSpec
from ..base import Choice
from .args import quantized_repo
from .settings import MlxSettings


def knobs(model: str, spec: ModelSpec, devices: tuple[Device, ...], base: MlxSettings, *, concurrency: int = 1,
          fixed_format: bool = False, reserve_bytes: int = 0, nodes: int = 1) -> Iterator[Choice]:
    # an lms load key names one download: another quantization is another key, which oomkit cannot name
    # (a conversion at the bits the model already has is the model as published: not tried twice)
    bits = (base.q_bits,) if fixed_format or base.program == "lmstudio" else \
        (None, *(b for b in (8, 4) if b != base.q_bits))
    # mlx_lm.server has no --kv-bits (mlx_lm/server.py): a quantized cache is mlx_lm.generate's; nor has lms load
    # (lmstudio.ai/docs/cli/load)
    kv_bits = (None,) if base.program in ("mlx_lm.server", "lmstudio") else (None, 8, 4)
    # mlx_lm loads a Hugging Face repo or a local path (utils.py load -> _download / hf_repo), not an Ollama tag or
    # a catalog short name: those are written as the repo they stand for, as vLLM and SGLang write them
    # (_hf_knobs.py hf_weight_choices); an lms load key stays as LM Studio names it
    arg = model if base.program == "lmstudio" else mlx_model_arg(model)
    for q in bits:
        for kv in kv_bits:
            s = replace(base, q_bits=q, kv_bits=kv, batch=max(base.batch, concurrency))
            w = "as published" if q is None else f"{q}-bit"
            # mlx_lm.generate / mlx_lm.server load weights as stored: other bits are another --model, the
            # mlx-community conversion that holds them (args.quantized_repo), whose weights the estimate reads
            repo = arg if base.program == "lmstudio" else (quantized_repo(arg, q) or arg)
            yield Choice(s, f"{w} weights, " + ("model-dtype KV" if kv is None else f"{kv}-bit KV"),
                         weight_format=None if q is None else f"mlx-{q}bit", model=repo)


def mlx_model_arg(model: str) -> str:
    """The --model word mlx_lm takes for `model`: the Hugging Face repo a catalog name or Ollama tag stands for
    ("qwen3:8b" -> Qwen/Qwen3-8B, the checkpoint the estimate reads: model/resolve.py takes the catalog entry's
    hf_id as published); a repo, a path, or a name with a weight format (":Q8_0") as given."""
    name, suffix = split_quant(model)
    entry = None if "/" in model or suffix else catalog.lookup(name)
    return entry.hf_id if entry is not None and entry.hf_id else model
