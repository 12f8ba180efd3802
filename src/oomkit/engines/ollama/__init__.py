"""Ollama: what its runner really allocates, and what Ollama itself estimates, side by side.

Ollama's runner IS llama.cpp (its Go runner linking a vendored llama.cpp until v0.29, upstream `llama-server`
from v0.30), or for some architectures its own Go engine with its own KV cache (kvcache/causal.go). So the
devices/host of the estimate come from oomkit.engines.llamacpp with the settings Ollama launches its runner
with, plus Ollama's per-GPU reserve; `engine_view["ollama_memory"]` holds the figures Ollama computes and logs
itself (memory.py), and `engine_view["ollama_vs_runner"]` the difference.

Eras (each changes what Ollama logs and who decides the layer split), ollama/ollama sources cited per rule:

- A (<= v0.11.4): llm/memory.go estimateGPULayers decides the layers; logs `msg=offload ... memory.*`.
- B (v0.11.5 - v0.12.10): the same for the llama runner; Ollama-engine models are laid out from their real
  allocations (opt-in OLLAMA_NEW_ESTIMATES=1 in v0.11.x, default from v0.12.0) and log "model weights",
  "kv cache", "compute graph", "total memory" per device.
- C (v0.12.11 - v0.24): memory.go removed; both engines use llm/server.go createLayout; the llama engine
  still sizes KV and graph with GraphSize and logs the per-device lines.
- D (v0.30+, 9db4bdbad): GGUF models run on upstream llama-server (`-c num_ctx*np -np np`, no -ngl so its
  --fit decides); Ollama only predicts coarsely (PredictServerVRAM) for eviction.

settings.py  OllamaSettings, the OLLAMA_* environment, releases and the versions whose rules changed, eras
args.py      the command line (`ollama run TAG`, `ollama serve`, oomkit's --num-ctx ...)
launch.py    what Ollama launches: num_ctx, parallel slots, runner, flash attention, KV type, batch
weights.py   the GGUF Ollama runs and its reader's view of it (layer sizes, KV accessors)
kv.py        the Ollama engine's own KV cache (kvcache/causal.go)
memory.py    Ollama's own estimate: GraphSize, estimateGPULayers, the era C layout, PredictServerVRAM
layout.py    the runner laid out on the devices, with Ollama's figures next to it (engine_view)
"""

from __future__ import annotations

from ..base import EngineModule
from ..llamacpp import default_weight_format
from ..versions import version_str
from .args import (
    effective,
    flag_takes_value,
    format_command,
    modelfile,
    modelfile_hint,
    parse_args,
    rewrite_command,
    run_variables_warning,
    serve_note,
)

# ollama.com library tags without a quant are the GGUFs llama.cpp users get too: Q4_K_M (gpt-oss: MXFP4)
from .knobs import fit_offload, knobs
from .kv import CausalCache, causal_cache
from .launch import (
    MINIMUM_MEMORY,
    MINIMUM_MEMORY_DEFAULT,
    Launch,
    default_num_ctx,
    resolve_launch,
    supports_flash_attention,
    total_vram,
)
from .layout import FIT_TARGET, OllamaEstimate, estimate
from .memory import (
    EraCLayout,
    Graph,
    LayerEstimate,
    OGpu,
    assign_layers,
    automatic_generation_batch,
    estimate_gpu_layers,
    find_best_fit,
    generation_batch_surcharge,
    graph_size,
    greedy_fit,
    human_bytes2,
    kv_bytes_per_element,
    layout_era_c,
    predict_server_vram,
)
from .mlx_runner import kv_types_for
from .settings import (
    DEFAULT_GGUF_TYPE,
    NEUTRAL,
    NEWEST,
    OllamaSettings,
    environment,
    era,
    parse_version,
    releases,
    runner_build,
    version_at,
)
from .weights import GgufView, gguf_view, library_context, ollama_gguf, per_layer_weights

ENGINE = EngineModule(
    "ollama", OllamaSettings, estimate, parse_args, flag_takes_value,
    headline=("num_ctx", "num_parallel", "kv_cache_type"),
    context_field="num_ctx", neutral=NEUTRAL,
    kv_types=("f16", "q8_0", "q4_0"), kv_fields=("kv_cache_type",),  # OLLAMA_KV_CACHE_TYPE (docs/faq.md)
    kv_types_fn=kv_types_for,  # an MLX build's runner reads no KV type (mlx_runner.KV_TYPES_ACCEPTED)
    programs={"ollama": None}, subcommands=("run", "serve"),
    newest=NEWEST, default_format_fn=default_weight_format, loads_gguf=True,
    effective_context_fn=lambda est: est.engine_view.get("n_ctx"),
    model_fn=lambda spec, s: library_context(spec),  # the trained context the library GGUF carries
    knobs_fn=knobs, fit_offload_fn=fit_offload, extras_fn=lambda tag, s: {"modelfile": modelfile(tag, s)}, format_command_fn=format_command, rewrite_command_fn=rewrite_command,
    command_notes_fn=lambda s: tuple(filter(None, [run_variables_warning(s), serve_note(s)])),
    file_hint_fn=modelfile_hint,  # a Modelfile pasted as MODEL
)

__all__ = ["DEFAULT_GGUF_TYPE", "ENGINE", "FIT_TARGET", "MINIMUM_MEMORY", "MINIMUM_MEMORY_DEFAULT", "NEUTRAL",
           "NEWEST", "CausalCache", "EraCLayout", "GgufView", "Graph", "LayerEstimate", "Launch", "OGpu",
           "OllamaEstimate", "OllamaSettings", "assign_layers", "automatic_generation_batch", "causal_cache",
           "default_num_ctx", "effective", "environment", "era", "estimate", "estimate_gpu_layers", "find_best_fit",
           "flag_takes_value", "format_command", "modelfile", "rewrite_command", "generation_batch_surcharge", "gguf_view", "graph_size", "greedy_fit",
           "human_bytes2", "kv_bytes_per_element", "layout_era_c", "ollama_gguf", "parse_args", "parse_version",
           "per_layer_weights", "predict_server_vram", "releases", "resolve_launch", "runner_build",
           "supports_flash_attention", "total_vram", "version_at", "version_str"]
