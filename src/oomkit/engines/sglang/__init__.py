"""SGLang (`python -m sglang.launch_server`, `sglang serve`): the engine record and the names tests and tools use.

settings.py  SGLangSettings, versions (NEWEST, ERAS), the defaults SGLang picks by GPU (mem_fraction_static, ...)
args.py      the command line
kv.py        the token pools: cell size, sliding-window split, Mamba state pool, max_total_num_tokens
weights.py   the weight bytes each rank loads
layout.py    the estimate, in SGLang's start-up order (see its docstring)
"""

from __future__ import annotations

from ..base import EngineModule
from .args import flag_takes_value, format_command, parse_args, rewrite_command

# SGLang loads the checkpoint as published (its own dtype / quantization_config): the default format hook.
from .cluster import node_commands
from .knobs import knobs, relief
from .kv import (
    HYBRID_SWA_ARCHS,
    CacheLayout,
    NotEnoughMemory,
    Pool,
    SubPool,
    cache_layout,
    cell_row,
    cell_size,
    kv_pools,
    kv_row,
    mamba_cache_per_req,
    max_running_requests,
    size_pool,
)
from .layout import estimate, pre_load_overhead
from .settings import (
    ERAS,
    KV_CACHE_DTYPES,
    NEUTRAL,
    NEWEST,
    Defaults,
    SGLangSettings,
    default_mem_fraction_static,
    parse_version,
    prefill_graph_sizes,
)
from .weights import rank_weights

ENGINE = EngineModule(
    "sglang", SGLangSettings, estimate, parse_args, flag_takes_value,
    headline=("n_ctx", "max_running_requests", "kv_cache_dtype", "tp_size", "mem_fraction_static"),
    context_field="context_length", neutral=NEUTRAL,
    # --kv-cache-dtype choices (KV_CACHE_DTYPES): SGLang spells fp8 with its format and refuses a bare "fp8"
    kv_types=("auto", "fp8_e4m3"), kv_fields=("kv_cache_dtype",),
    programs={"sglang": None}, python_modules={"sglang.launch_server": None},
    newest=NEWEST, eras=ERAS,
    knobs_fn=knobs, relief_fn=relief, cluster_fn=node_commands, format_command_fn=format_command, rewrite_command_fn=rewrite_command,
)

__all__ = ["ENGINE", "ERAS", "HYBRID_SWA_ARCHS", "KV_CACHE_DTYPES", "NEUTRAL", "NEWEST", "CacheLayout", "Defaults",
           "NotEnoughMemory", "Pool", "SGLangSettings", "SubPool", "cache_layout", "cell_row", "cell_size",
           "default_mem_fraction_static", "estimate", "flag_takes_value", "format_command", "kv_pools", "kv_row",
           "mamba_cache_per_req", "max_running_requests", "parse_args", "parse_version", "pre_load_overhead",
           "prefill_graph_sizes", "rank_weights", "rewrite_command", "size_pool"]
