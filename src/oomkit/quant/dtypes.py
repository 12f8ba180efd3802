"""Plain (unquantized) element types: the one table of torch dtype names, their spellings and their bytes.

Names are torch's (`config.json` `torch_dtype`, vLLM/SGLang `--dtype`, transformers `dtype=`); the spellings users
and tools type for them ("bf16", "half", "fp32") are folded onto those names here and nowhere else.
"""

from __future__ import annotations

from collections.abc import Iterable

# torch dtype -> bytes per element (torch.finfo(dtype).bits / 8)
FLOAT_BYTES: dict[str, int] = {"float32": 4, "float16": 2, "bfloat16": 2}
FP8_BYTES: dict[str, int] = {"float8_e4m3fn": 1, "float8_e5m2": 1}

# Spellings of the same dtypes: torch's own aliases (torch.half, torch.float) and the short names of
# llama.cpp (f16, f32), safetensors (BF16, F16, F32, lower-cased) and the engines' CLIs (fp16, bf16, fp32).
ALIASES: dict[str, str] = {"half": "float16", "fp16": "float16", "f16": "float16", "float": "float32",
                           "fp32": "float32", "f32": "float32", "bf16": "bfloat16"}


def canonical(name: str) -> str:
    """torch's name for a dtype spelling ("BF16" -> "bfloat16"); other names come back lower-cased as they are."""
    low = name.lower()
    return ALIASES.get(low, low)


def float_bytes(name: str) -> int | None:
    """Bytes per element of a plain float dtype in any spelling; None for anything else."""
    return FLOAT_BYTES.get(canonical(name))


def unquantized_dtype(weights_format: str, tensor_dtypes: Iterable[tuple[str, str]],
                      accept: Iterable[str] = tuple(FLOAT_BYTES)) -> str:
    """The dtype a checkpoint's unquantized tensors carry (its config torch_dtype): the format itself when it
    is a plain dtype, else the dtype of its norm weights (a quantized checkpoint keeps those in the config's
    dtype), else bfloat16. tensor_dtypes: (tensor name, dtype) pairs; accept: the dtypes that may answer."""
    accepted = set(accept)
    fmt = canonical(weights_format)
    if fmt in FLOAT_BYTES:
        return fmt
    for name, dtype in tensor_dtypes:
        d = canonical(dtype)
        if name.endswith("norm.weight") and d in accepted:
            return d
    return "bfloat16"
