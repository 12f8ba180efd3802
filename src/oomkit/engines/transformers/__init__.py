"""Hugging Face transformers (`model.generate(...)` on one GPU or with `device_map="auto"`): what it allocates.

Each rule mirrors transformers' source, read in the released wheels 4.55.4, 4.57.6, 5.0.0, 5.10.0, 5.14.0, 5.15.0,
5.16.0, 5.17.0, 5.18.0 and 5.24.0 (the newest), cited as `file:function`; behaviour that changed between releases
follows `engine_version` (default the newest), see settings.ERAS. transformers has no command line of its own: its
options are given as `oomkit estimate MODEL --engine transformers --ctx 8192 --cache-implementation static ...`.

What is exact, and checked against transformers itself on the CPU (tests/test_transformers_engine.py builds tiny
random-weight models with real layer shapes and sums the bytes of the cache tensors after a real `generate`):
the cache of every layer kind: DynamicCache (full, sliding and chunked layers), StaticCache, the fp8
QuantizedCache, MLA latents, linear-attention / Mamba conv and recurrent states, and the storage a sliding
DynamicCache layer really holds (a view on the last `torch.cat`).

What is modelled and labelled: the prefill activation and logits peak, the CUDA context, PyTorch's
reserved-vs-allocated rounding, the quanto/HQQ cache layouts, offloaded caches and `device_map="auto"` placement.

    settings.py    TransformersSettings, NEUTRAL, NEWEST, ERAS, version parsing; resolve (what generate settles on)
    args.py        the options form (--max-new-tokens, --cache-implementation, --max-memory, ...)
    kv.py          the cache-layer class and bytes of each layer
    weights.py     the bytes each weight takes once loaded
    transients.py  the working set of one forward, the CUDA context, the caching allocator's rounding
    layout.py      device_map placement and the estimate per device
"""

from __future__ import annotations

from ..base import EngineModule
from .args import (
    FLAGS,
    flag_takes_value,
    format_command,
    from_pretrained_snippet,
    parse_args,
    parse_max_memory,
    rewrite_command,
)

# transformers loads the checkpoint as published (its config's dtype / quantization_config).
from .knobs import knobs
from .kv import LayerCache, cache_tensors, kv_per_token, layer_caches
from .layout import Placement, estimate, place
from .settings import (
    CACHE_IMPLEMENTATIONS,
    DEPRECATED_STATIC,
    ERAS,
    NEUTRAL,
    NEWEST,
    QUANT_BACKENDS,
    Resolved,
    TransformersSettings,
    checkpoint_dtype,
    is_gguf,
    parse_version,
    resolve,
    with_context,
)
from .transients import CUDA_CONTEXT, Transients, allocation_size, reserved_for, transients
from .weights import tensor_bytes

ENGINE = EngineModule(
    "transformers", TransformersSettings, estimate, parse_args, flag_takes_value,
    headline=("max_length", "kv_cache_dtype"),
    context_field="max_length", neutral=NEUTRAL,
    kv_types=("auto", "fp8"), kv_fields=("kv_cache_dtype",),  # the model dtype, or the quantized cache (fp8)
    newest=NEWEST, eras=ERAS, with_context_fn=with_context,
    knobs_fn=knobs, extras_fn=lambda model, s: {"snippet": from_pretrained_snippet(model, s)}, format_command_fn=format_command, rewrite_command_fn=rewrite_command,
)

__all__ = ["CACHE_IMPLEMENTATIONS", "CUDA_CONTEXT", "DEPRECATED_STATIC", "ENGINE", "ERAS", "FLAGS", "NEUTRAL",
           "NEWEST", "QUANT_BACKENDS", "LayerCache", "Placement", "Resolved", "Transients", "TransformersSettings",
           "allocation_size", "cache_tensors", "checkpoint_dtype", "estimate", "flag_takes_value", "format_command", "from_pretrained_snippet", "is_gguf",
           "kv_per_token", "layer_caches", "parse_args", "parse_max_memory", "parse_version", "place",
           "reserved_for", "resolve", "rewrite_command", "tensor_bytes", "transients", "with_context"]
