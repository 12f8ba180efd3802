"""vLLM (`vllm serve`, the OpenAI API server, the `LLM` class): what it really allocates on each GPU.

Each rule mirrors vLLM's source, read in the released wheels 0.6.4.post1, 0.6.6.post1, 0.7.3, 0.8.5, 0.9.2,
0.10.2, 0.11.0, 0.12.0, 0.15.1, 0.17.1, 0.19.1, 0.21.0, 0.33.0 and 0.34.0 (the newest), cited as `file:function`; model
runner V2 (v1/worker/gpu/, config.py runner_v2) in every wheel from 0.21.0 to 0.34.0, where the V1 runner is gone.
Behaviour that changed between releases follows `engine_version` (default the newest), see settings.ERAS.

The chain, per GPU (rank):

    requested  = total_memory * gpu_memory_utilization        (v1/worker/gpu_worker.py; ceil from 0.20)
    available  = requested - weights - activation peak - non-torch increase [- CUDA graphs, from 0.20]
    num_blocks = available // (page_bytes * layers per pool)   (v1/core/kv_cache_utils.py)
    -> "GPU KV cache size: N tokens", "Maximum concurrency for L tokens per request: Cx"

The page arithmetic (block sizes, groups of hybrid models, MLA, Mamba pages, TP head split) is exact; the
weights are exact up to the few small buffers vLLM also allocates while loading (the rotary cos/sin cache is
counted). The activation peak and the non-torch memory are measured by vLLM at start-up; they are modelled
here from the dummy batch vLLM profiles (max_num_batched_tokens tokens, max_num_seqs sampled rows) and fitted
to published start-up logs (tests/fixtures/engine_logs/vllm/), so they carry the residual error.

    settings.py  VllmSettings, NEUTRAL, NEWEST, ERAS, version parsing
    args.py      the command line (vllm serve, the API server module) -> VllmSettings
    config.py    the configuration vLLM settles on (vllm/config/: dtypes, context, batch sizes)
    kv.py        KV cache specs per layer, their groups, blocks, the request-fits check (kv_cache_utils.py)
    weights.py   the weight bytes each rank loads
    profile.py   the budget: determine_available_memory (profile run, non-torch, CUDA graphs)
    layout.py    the MemoryEstimate per GPU and engine_view (what vLLM prints at start-up)
"""

from __future__ import annotations

from ..base import EngineModule
from .args import config_hint, flag_takes_value, format_command, parse_args, rewrite_command

# vLLM loads the checkpoint as published (its config's dtype / quantization_config): the default format hook.
from .cluster import node_commands
from .config import CUDA_DRIVER_RESERVED, Resolved, cuda_total, pp_partition, resolve, with_hf_overrides
from .knobs import knobs, relief, settle
from .kv import KvPlan, KvSpec, block_size_for, estimate_max_model_len, kv_plan
from .layout import VllmEstimate, estimate
from .settings import ERAS, NEUTRAL, NEWEST, VllmSettings, parse_version

ENGINE = EngineModule(
    "vllm", VllmSettings, estimate, parse_args, flag_takes_value,
    headline=("max_model_len", "max_num_seqs", "kv_cache_dtype", "tensor_parallel_size", "gpu_memory_utilization"),
    context_field="max_model_len", neutral=NEUTRAL,
    kv_types=("auto", "fp8"), kv_fields=("kv_cache_dtype",),  # --kv-cache-dtype (cache_dtype choices)
    programs={"vllm": None},
    python_modules={"vllm.entrypoints.openai.api_server": None, "vllm.entrypoints.api_server": None},
    newest=NEWEST, eras=ERAS,
    model_fn=lambda spec, s: with_hf_overrides(spec, s.hf_overrides)[0],
    knobs_fn=knobs, relief_fn=relief, settle_fn=settle, cluster_fn=node_commands, format_command_fn=format_command, rewrite_command_fn=rewrite_command,
    file_hint_fn=config_hint,  # a `vllm serve --config` YAML pasted as MODEL
)

__all__ = ["CUDA_DRIVER_RESERVED", "ENGINE", "ERAS", "NEUTRAL", "NEWEST", "KvPlan", "KvSpec", "Resolved",
           "VllmEstimate", "VllmSettings", "block_size_for", "cuda_total", "estimate", "estimate_max_model_len",
           "flag_takes_value", "format_command", "kv_plan", "parse_args", "parse_version", "pp_partition", "resolve",
           "rewrite_command"]
