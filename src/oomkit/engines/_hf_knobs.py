"""Weight choices for the engines that load HF checkpoints (vLLM, SGLang): the checkpoint as published, the same
checkpoint quantized to fp8 at load time (`--quantization fp8`: vLLM fp8.py Fp8LinearMethod, SGLang the same
method; weight-only fp8 Marlin on GPUs without fp8 cores), and the quantized official repos the catalog lists."""

from __future__ import annotations

from ..model import catalog
from ..model.spec import ModelSpec

_SIXTEEN_BIT = ("bf16", "bfloat16", "f16", "fp16", "float16", "f32", "float32")


def hf_weight_choices(model: str, spec: ModelSpec, fixed_format: bool,
                      inflight_nf4: bool = False) -> list[tuple[str, str | None, str]]:
    """-> [(model argument, --quantization value or None, label)], the checkpoint as published first.
    inflight_nf4: the engine quantizes a 16-bit checkpoint to 4-bit nf4 while loading (vLLM's in-flight
    bitsandbytes, model_loader/weight_utils.py get_quant_config "Inflight BNB quantization"), a GPU-only choice
    where no 4-bit repo of the model is known."""
    base = catalog.base_hf_id(model) or model
    published = spec.weights.format
    out = [(base if catalog.lookup(model) is not None and "/" not in model else model, None,
            f"{published} weights (as published)")]
    if fixed_format:
        return out
    if published.lower() in _SIXTEEN_BIT:
        out.append((out[0][0], "fp8", "fp8 weights (quantized at load, --quantization fp8)"))
        if inflight_nf4:
            out.append((out[0][0], "bitsandbytes", "nf4 weights (quantized at load, --quantization bitsandbytes)"))
    for repo in catalog.variant_ids(model):
        if repo.lower() != model.lower():
            out.append((repo, None, f"{repo.split('/')[-1]} weights"))
    return out
