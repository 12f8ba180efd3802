"""MLX on Apple silicon (`mlx_lm.generate`, `mlx_lm.server`, `python -m mlx_lm ...`): what it allocates.

Each rule mirrors the source of mlx-lm 0.32.0 (ml-explore/mlx-lm, mlx_lm/models/cache.py, generate.py, utils.py,
the models' make_cache) and mlx 0.32.2 (mlx/backend/metal/allocator.cpp), cited as `file:function`. MLX does not
run here: the tests check figures worked by hand from those lines.

Memory is unified: one Metal device whose budget is the GPU working set macOS allows (Metal's
recommendedMaxWorkingSetSize, raised by `sudo sysctl iogpu.wired_limit_mb=N`). mlx_lm wires up to that much while
it generates (generate.py wired_limit); a single Metal buffer may not exceed maxBufferLength
(allocator.cpp MetalAllocator::malloc: "[metal::malloc] Attempting to allocate ... greater than the maximum
allowed buffer size").

    settings.py  MlxSettings, NEUTRAL, NEWEST, the generate/server defaults; resolve (prompt, tokens, dtype)
    args.py      the command lines, and what mlx-community repo names say (bits, base model)
    quantize.py  mx.quantize's affine layout (quantized weights and KV cache)
    kv.py        the cache simulations (KVCache, RotatingKVCache, QuantizedKVCache) and the cache per layer
    weights.py   the bytes each weight takes
    layout.py    the Metal device's limits, the working set of a forward, the estimate
"""

from __future__ import annotations

from ..base import EngineModule
from .args import (
    base_model,
    bits_from_name,
    flag_takes_value,
    format_command,
    parse_args,
    quantized_repo,
    rewrite_command,
    sizing_flags,
)

# mlx-lm loads MLX safetensors as published (float weights as the config says; an MLX-quantized model's bits
# come from --q-bits or the repo name): no default weight format.
from .knobs import knobs
from .kv import (
    MAKE_CACHE_ARCHS,
    ROTATING_ARCHS,
    STEP,
    LayerCache,
    Sim,
    kv_dims,
    layer_caches,
    simulate_kv,
    simulate_rotating,
)
from .layout import VM_PAGE, compute_bytes, default_max_buffer, default_working_set, estimate, metal_device
from .quantize import quant_row
from .settings import (
    DEFAULT_QUANTIZED_KV_START,
    GENERATE_MAX_TOKENS,
    NEUTRAL,
    NEWEST,
    SERVER_MAX_TOKENS,
    MlxSettings,
    Resolved,
    checkpoint_dtype,
    resolve,
    updates_for,
    with_context,
)
from .weights import tensor_bytes

ENGINE = EngineModule(
    "mlx", MlxSettings, estimate, parse_args, flag_takes_value,
    headline=("context_length",),
    context_field="context_length", neutral=NEUTRAL,
    aliases=("mlx-lm", "mlx_lm"),
    # mlx_lm.chat (its console script, as `mlx_lm chat`): generate's cache and flags
    programs={"mlx_lm.server": "mlx_lm.server", "mlx_lm.generate": "mlx_lm.generate", "mlx_lm.chat": "mlx_lm.generate",
              "mlx_lm": None},
    python_modules={"mlx_lm.server": "mlx_lm.server", "mlx_lm.generate": "mlx_lm.generate",
                    "mlx_lm.chat": "mlx_lm.generate", "mlx_lm": None},
    newest=NEWEST, with_context_fn=with_context, loads_mlx=True,
    knobs_fn=knobs, format_command_fn=format_command, rewrite_command_fn=rewrite_command,
    sizing_flags_fn=sizing_flags,
)

__all__ = ["DEFAULT_QUANTIZED_KV_START", "ENGINE", "GENERATE_MAX_TOKENS", "MAKE_CACHE_ARCHS", "NEUTRAL", "NEWEST",
           "ROTATING_ARCHS", "SERVER_MAX_TOKENS", "STEP", "VM_PAGE", "LayerCache", "MlxSettings", "Resolved", "Sim",
           "base_model", "bits_from_name", "checkpoint_dtype", "compute_bytes", "default_max_buffer",
           "default_working_set", "estimate", "flag_takes_value", "format_command", "kv_dims", "layer_caches", "metal_device",
           "parse_args", "quant_row", "quantized_repo", "resolve", "rewrite_command", "sizing_flags", "simulate_kv", "simulate_rotating", "tensor_bytes",
           "updates_for", "with_context"]
