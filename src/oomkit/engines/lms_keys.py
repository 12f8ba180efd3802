"""Which `lms load` models LM Studio runs on its MLX engine rather than llama.cpp: read by both engines' readers of
the command (engines/cmdline.py, llamacpp/programs.py, mlx/args.py), so that reading a GGUF's `lms load` does not load
the MLX engine.

An LM Studio key or path that names MLX (mlx-community/..., lmstudio-community/...-MLX-4bit,
~/.lmstudio/models/mlx-community/..., prism-ml/...-mlx-2bit) or LM Studio's MLX variant suffix `@4bit`
(qwen/qwen3.6-27b@4bit; a GGUF variant is named by its quant type, @q4_k_m) is MLX; a .gguf file never. A bare catalog
key (qwen/qwen3-8b) does not say which format was downloaded: it stays llama.cpp's.
"""

from __future__ import annotations

import re

LMS_MLX = re.compile(r"(?:^|[-_/.@\s])mlx(?:$|[-_/.@\s])", re.IGNORECASE)
LMS_MLX_VARIANT = re.compile(r"@(\d)-?bits?$", re.IGNORECASE)


def lms_names_mlx(model: str | None) -> bool:
    """Whether an `lms load` model key or path names an MLX model (above), which LM Studio runs on mlx-engine."""
    if not model or model.lower().endswith(".gguf"):
        return False
    return bool(LMS_MLX.search(model) or LMS_MLX_VARIANT.search(model))
