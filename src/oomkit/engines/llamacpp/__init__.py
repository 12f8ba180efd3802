"""llama.cpp (llama-server, llama-cli, llama-cpp-python, LM Studio's runtime): the engine record and the names
Ollama, tests and tools use. Each rule mirrors ggml-org/llama.cpp@0c1e57098 (the copy vendored by
llama-cpp-python 0.3.36), cited as `file:function`.

settings.py  LlamaCppSettings, the builds whose rules changed (ERAS, NEWEST), build tags
args.py      the command line, read with llama.cpp's own flag table
kv.py        the context llama.cpp settles on, its KV caches (iSWA pairs, MLA) and recurrent state
weights.py   the layer split over devices, -ot / --cpu-moe, the model buffer of each backend
compute.py   the compute buffers (worst-case graph peak per backend) and the output buffer
fit.py       --fit (on by default): the context, layers and expert tensors llama.cpp fits to the free memory
layout.py    the estimate per device (the layout --fit loads; typed_* the command as typed) and the start-up
             figures llama.cpp prints (engine_view)
"""

from __future__ import annotations

from dataclasses import replace

from ..base import EngineModule
from . import programs
from .args import (
    env_flags,
    flag_takes_value,
    flags_table,
    format_command,
    parse_args,
    preset_hint,
    rewrite_command,
)
from .cluster import node_commands
from .compute import (
    ComputePhases,
    compute_buffer_bytes,
    compute_by_device,
    compute_phases,
    output_buffer_bytes,
)
from .first_builds import check_model_build
from .knobs import knobs, relief
from .kv import (
    SWA_ARCHS,
    Cache,
    Context,
    attention_layers,
    cache_head_k,
    cache_head_v,
    cache_kv_heads,
    k_row,
    kv_bytes_per_token,
    kv_caches,
    recurrent_bytes_by_layer,
    recurrent_rows,
    resolve_context,
    swa_honoured,
    v_row,
)
from .layout import GPU_RUNTIME_RESERVE, engine_view, estimate, fitted_settings
from .settings import DEFAULT_GGUF_TYPE, ERAS, NEWEST, LlamaCppSettings, build_number
from .weights import (
    CPU_ALIGNMENT,
    CUDA_ALIGNMENT,
    CUDA_MATRIX_ROW_PADDING,
    ModelBuffers,
    Placement,
    converter_context,
    default_weight_format,
    gpu_alloc_size,
    mapped_range,
    model_buffers,
    override_patterns,
    place_layers,
    published_split,
    tensor_device,
)


def _parse_args(argv: list[str], env: dict[str, str] | None = None, program: str | None = None):
    program = program or "llama-server"
    # common/arg.cpp common_params_parse_ex: the LLAMA_ARG_* variables first, the arguments over them
    # (llama-bench and lms have parsers of their own that read none)
    return programs.parse(argv if program in ("llama-bench", "lms", "llama_cpp.server") else [*env_flags(env), *argv],
                          program)


def _estimate(spec, devices, s: LlamaCppSettings):
    """programs.estimate of the model as published: a computed GGUF over 50 GB in gguf-split parts
    (weights.published_split; Ollama's blobs, one file each, go to layout.estimate directly)."""
    # a build that predates the model's architecture refuses the file (first_builds.py: LLM_ARCH_NAMES by build);
    # here, not in layout.estimate, which Ollama's own engine reuses at its vendored build
    check_model_build(spec, build_number(s.engine_version), int(NEWEST[1:]))
    return programs.estimate(published_split(spec), devices, s)


def _extras(model: str, s: LlamaCppSettings) -> dict[str, str]:
    """The Python binding's Llama(...) call for the same settings."""
    return {"snippet": programs.binding_snippet(model, s)}


ENGINE = EngineModule(
    "llama.cpp", LlamaCppSettings, _estimate, _parse_args, flag_takes_value,
    headline=("n_ctx", "n_parallel", "cache_type_k", "cache_type_v", "flash_attn", "n_gpu_layers"),
    context_field="n_ctx",
    neutral={"ctx": "n_ctx", "parallel": "n_parallel", "kv_type": ("cache_type_k", "cache_type_v"),
             "engine_version": "engine_version", "backend": "backend",
             "ram": "host_memory"},
    # -ctk/-ctv: the types llama.cpp's docs name for the KV cache (tools/server/README.md)
    kv_types=("f16", "q8_0", "q4_0"), kv_fields=("cache_type_k", "cache_type_v"),
    aliases=("llamacpp", "llama-cpp", "llama_cpp", "llama-server", "llama-cli", "lmstudio", "lm-studio"),
    # the programs' own names, each read with its own defaults (programs.py)
    programs=programs.PROGRAMS, extras_fn=_extras,
    file_hint_fn=preset_hint,  # a llama-server --models-preset INI pasted as MODEL
    # llama-cpp-python's server: its Llama(...) fields as flags (programs.py parse_binding_server)
    python_modules={"llama_cpp.server": "llama_cpp.server"},
    newest=NEWEST, eras=ERAS, default_format_fn=default_weight_format, loads_gguf=True,
    effective_context_fn=lambda est: est.engine_view.get("n_ctx"),
    model_fn=lambda spec, s: converter_context(spec),  # the trained context the GGUF carries
    typed_layout_fn=lambda s: replace(s, fit=False),  # -fit off
    knobs_fn=knobs, relief_fn=relief, cluster_fn=node_commands, format_command_fn=format_command, rewrite_command_fn=rewrite_command,
)

__all__ = ["CPU_ALIGNMENT", "CUDA_ALIGNMENT", "CUDA_MATRIX_ROW_PADDING", "DEFAULT_GGUF_TYPE", "ENGINE", "ERAS",
           "GPU_RUNTIME_RESERVE", "NEWEST", "SWA_ARCHS", "Cache", "ComputePhases", "Context", "LlamaCppSettings",
           "ModelBuffers", "Placement", "attention_layers", "cache_head_k", "cache_head_v", "cache_kv_heads", "build_number", "compute_buffer_bytes",
           "compute_by_device", "compute_phases", "default_weight_format", "engine_view", "estimate", "fitted_settings",
           "flag_takes_value", "flags_table", "format_command", "gpu_alloc_size", "k_row", "kv_bytes_per_token", "kv_caches",
           "mapped_range", "model_buffers", "output_buffer_bytes", "override_patterns", "parse_args",
           "place_layers", "recurrent_bytes_by_layer", "recurrent_rows", "resolve_context", "rewrite_command",
           "swa_honoured",
           "tensor_device", "v_row"]
