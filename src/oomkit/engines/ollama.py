"""Ollama: what its runner really allocates, and what Ollama itself estimates, side by side.

Ollama's runner IS llama.cpp (its Go runner linking a vendored llama.cpp until v0.29, upstream `llama-server`
from v0.30), or for some architectures its own Go engine with its own KV cache (kvcache/causal.go). So the
devices/host of the estimate come from oomkit.engines.llamacpp with the settings Ollama launches its runner
with, plus Ollama's per-GPU reserve; `engine_view["ollama_memory"]` holds the figures Ollama computes and logs
itself (oomkit.engines.ollama_memory), and `engine_view["ollama_vs_runner"]` the difference.

Eras (each changes what Ollama logs and who decides the layer split), ollama/ollama sources cited per rule:

- A (<= v0.11.4): llm/memory.go estimateGPULayers decides the layers; logs `msg=offload ... memory.*`.
- B (v0.11.5 - v0.12.10): the same for the llama runner; Ollama-engine models are laid out from their real
  allocations (opt-in OLLAMA_NEW_ESTIMATES=1 in v0.11.x, default from v0.12.0) and log "model weights",
  "kv cache", "compute graph", "total memory" per device.
- C (v0.12.11 - v0.24): memory.go removed; both engines use llm/server.go createLayout; the llama engine
  still sizes KV and graph with GraphSize and logs the per-device lines.
- D (v0.30+, 9db4bdbad): GGUF models run on upstream llama-server (`-c num_ctx*np -np np`, no -ngl so its
  --fit decides); Ollama only predicts coarsely (PredictServerVRAM) for eviction.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..errors import OomkitError
from ..flags import flag_value
from ..memory import Device, MemoryEstimate, Usage
from ..model.spec import ModelSpec, WeightInventory
from ..units import GiB, MiB
from . import llamacpp as lc
from . import ollama_memory as om
from .base import EngineModule

NEWEST = "0.32.15"
DEFAULT_GGUF_TYPE = "Q4_K_M"  # the ollama.com library's default quant for a bare tag (gpt-oss: MXFP4)
FIT_TARGET = 1024 * MiB  # llama.cpp --fit default margin per device (common/fit.cpp); Ollama leaves it unless mmproj

# discover/types.go / ml/device.go DeviceInfo.MinimumMemory: 457 MiB (CUDA, ROCm, others), 512 MiB on Metal
MINIMUM_MEMORY = {"metal": 512 * MiB}
MINIMUM_MEMORY_DEFAULT = 457 * MiB

Version = tuple[int, int, int]

# --- versions at which Ollama's defaults and launch rules changed (first release carrying the change) ---
V_PARALLEL_AUTO = (0, 2, 0)  # 17b7186cd "Enable concurrency by default": try 4 slots, fall back to 1
V_PARALLEL_AUTO_2 = (0, 6, 7)  # server/sched.go defaultParallel = 2
V_PARALLEL_ONE = (0, 9, 7)  # 20c3266e9 "Reduce default parallelism to 1" (#11330)
V_CONTEXT_LENGTH_ENV = (0, 5, 13)  # envconfig OLLAMA_CONTEXT_LENGTH (default 2048)
V_CTX_4096 = (0, 6, 7)  # envconfig ContextLength default 4096
V_CTX_VRAM_TIER = (0, 15, 5)  # server/routes.go: >= 47 GiB -> 262144, >= 23 GiB -> 32768, else 4096
V_GPTOSS_NO_FA = (0, 11, 2)  # 8253ad4d2: SupportsFlashAttention false for gptoss ...
V_GPTOSS_FA_BACK = (0, 11, 5)  # ... until the ggml update 1a19df1f3
V_GPTOSS_NO_QKV = (0, 11, 5)  # df335aac0 "gpt-oss: disable quantized kv cache" (#11929) ...
V_GPTOSS_QKV_BACK = (0, 12, 4)  # ... until 19e6796ea "Support KV cache quantization with gpt-oss" (#12494)
V_NEW_ESTIMATES_OPTIN = (0, 11, 5)  # d5a0d8d90 "New memory management": OLLAMA_NEW_ESTIMATES=1
V_NEW_ESTIMATES = (0, 12, 0)  # default for Ollama-engine models
V_ERA_C = (0, 12, 11)  # f560bd077: llm/memory.go removed
V_ERA_D = (0, 30, 0)  # 9db4bdbad: CGO runners removed, llama-server for every GGUF model
V_EMBED_PARALLEL_ONE = (0, 12, 0)  # server/sched.go load: embedding models always parallel 1
V_GO_RUNNER = (0, 5, 8)
V_GPTOSS_MIN_CTX = (0, 11, 0)  # fa7776fd2: gpt-oss num_ctx at least 8192 ...
V_GPTOSS_MIN_CTX_LOWVRAM = (0, 11, 4)  # ... except in low-VRAM mode (< 20 GiB), until 0334ffa62 (v0.15.5)  # dcfb7a105 "next build": runner/llamarunner, n_batch = num_batch * parallel

# fs/ggml/ggml.go FlashAttention(): architectures with flash attention on by default (OLLAMA_FLASH_ATTENTION
# unset), as the list stood at each release (85ccf7354, 0bda72892, c3c85aa06, 75e75d9af and later)
_FA_DEFAULT = (
    ((0, 11, 8), {"gptoss", "gpt-oss"}),
    ((0, 12, 4), {"qwen3", "qwen3moe"}),
    ((0, 12, 6), {"gemma3"}),
    ((0, 12, 8), {"qwen3vl", "qwen3vlmoe"}),
    ((0, 14, 0), {"bert", "mistral3", "olmo3"}),
    ((0, 15, 0), {"glm4moelite", "lfm2"}),
    ((0, 15, 5), {"glmocr", "qwen3next"}),
    ((0, 18, 0), {"lfm2moe", "nemotron_h", "nemotron_h_moe", "qwen35", "qwen35moe"}),
    ((0, 20, 4), {"gemma4"}),
    ((0, 23, 0), {"nemotron_h_omni"}),
)
# fs/ggml/ggml.go KV.OllamaEngineRequired(): architectures that run on the Ollama engine (eras A-C)
_OLLAMA_ENGINE = (
    ((0, 6, 0), {"gemma3"}),
    ((0, 6, 5), {"mistral3"}),
    ((0, 7, 0), {"llama4", "mllama", "qwen25vl"}),
    ((0, 9, 3), {"gemma3n"}),
    ((0, 11, 0), {"gptoss", "gpt-oss"}),
    ((0, 12, 0), {"qwen3"}),
    ((0, 12, 6), {"qwen3moe"}),
    ((0, 12, 8), {"qwen3vl", "qwen3vlmoe"}),
    ((0, 13, 0), {"deepseekocr", "deepseek2"}),
    ((0, 14, 0), {"bert", "nomic-bert", "olmo3"}),
    ((0, 16, 0), {"qwen3next", "glm4moelite", "glmocr", "lfm2"}),
    ((0, 20, 0), {"gemma4", "nemotron_h", "nemotron_h_moe", "qwen35", "qwen35moe", "lfm2moe"}),
    ((0, 23, 0), {"laguna", "nemotron_h_omni"}),
)
# server/sched.go load: architectures forced to one parallel slot ("not safe with num_parallel > 1", #4165)
_PARALLEL_ONE_ARCHS = {"mllama", "qwen3vl", "qwen3vlmoe", "qwen35", "qwen35moe", "qwen3next", "lfm2", "lfm2moe",
                       "nemotron_h", "nemotron_h_moe", "nemotron_h_omni"}
# Architectures Ollama ships with a vision projector it adds to its estimate (projector.weights/graph)
_VISION_ARCHS = {"gemma3", "mistral3", "llama4", "mllama", "qwen25vl", "qwen2vl", "qwen3vl", "qwen3vlmoe", "gemma4"}

# The llama.cpp build each Ollama release runs. Eras A-C: the vendored copy (Makefile.sync FETCH_HEAD; build
# numbers placed by date where Ollama's commit does not name one). Era D: LLAMA_CPP_VERSION of each tag.
_RUNNER_BUILD = (
    ((0, 0, 0), 4400), ((0, 5, 8), 4560), ((0, 5, 13), 4780), ((0, 6, 6), 5130), ((0, 6, 7), 5180),
    ((0, 6, 8), 5250), ((0, 7, 0), 5350), ((0, 11, 5), 6150), ((0, 12, 4), 6646), ((0, 12, 6), 6750),
    ((0, 12, 11), 6840), ((0, 13, 2), 7108), ((0, 13, 3), 7160), ((0, 13, 5), 7210),
    ((0, 30, 0), 9452), ((0, 30, 1), 9479), ((0, 30, 4), 9493), ((0, 30, 5), 9509), ((0, 30, 9), 9626),
    ((0, 30, 10), 9672), ((0, 30, 11), 9781), ((0, 31, 0), 9840), ((0, 31, 2), 9888), ((0, 32, 2), 10069),
    ((0, 32, 3), 10091), ((0, 32, 6), 10242), ((0, 32, 8), 10353), ((0, 32, 10), 10380), ((0, 32, 14), 10434),
    ((0, 32, 15), 10488),
)


def parse_version(v: str | None) -> Version:
    if not v or str(v).strip().lower() in ("newest", "latest"):
        v = NEWEST
    m = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.(\d+))?(?:-[\w.]+)?", str(v).strip())
    if not m:
        raise OomkitError(f"cannot read Ollama version {v!r}: expected a release such as 0.12.10 or 0.30.1")
    return int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)


def version_str(v: Version) -> str:
    return ".".join(map(str, v))


@lru_cache(maxsize=1)
def releases() -> tuple[tuple[Version, str], ...]:
    """(version, tag date) of every Ollama release (engines/data/ollama_releases.json, from the git tags)."""
    data = json.loads((Path(__file__).with_name("data") / "ollama_releases.json").read_text(encoding="utf-8"))
    return tuple((parse_version(v), d) for v, d in data["releases"])


def version_at(date: str) -> str:
    """The newest Ollama release tagged on or before `date` (YYYY-MM-DD): for logs that print no version."""
    best = None
    for v, d in releases():
        if d <= date[:10] and (best is None or v > best):
            best = v
    if best is None:
        raise OomkitError(f"no Ollama release before {date}")
    return version_str(best)


def _by_version(table, v: Version):
    out = None
    for since, value in table:
        if v >= since:
            out = value
    return out


def _union_until(table, v: Version) -> set[str]:
    out: set[str] = set()
    for since, names in table:
        if v >= since:
            out |= names
    return out


def runner_build(v: Version) -> int:
    return _by_version(_RUNNER_BUILD, v)


def era(v: Version) -> str:
    if v >= V_ERA_D:
        return "D"
    if v >= V_ERA_C:
        return "C"
    if v >= V_NEW_ESTIMATES_OPTIN:
        return "B"
    return "A"


# ---------------------------------------------------------------------------------------------------------
# Settings

# oomkit's engine-neutral options (--ctx, --parallel, --kv-type, --engine-version) -> OllamaSettings fields
# (read by commands/_model_args.py)
NEUTRAL = {"ctx": "num_ctx", "parallel": "num_parallel", "kv_type": "kv_cache_type", "engine_version": "engine_version"}


@dataclass(frozen=True)
class OllamaSettings:
    """Ollama's options by its own names. 0 / "" / -1 mean "not set": the OLLAMA_* environment in `env`, then
    the default of `engine_version`, applies (resolved in `estimate`, where the GPUs are known)."""

    num_ctx: int = 0  # Modelfile/API num_ctx; else OLLAMA_CONTEXT_LENGTH; else by version and VRAM tier
    num_parallel: int = 0  # OLLAMA_NUM_PARALLEL; else by version (auto 4/2 before v0.9.7, then 1)
    kv_cache_type: str = ""  # OLLAMA_KV_CACHE_TYPE: f16 | q8_0 | q4_0 (with flash attention only)
    flash_attention: str = ""  # OLLAMA_FLASH_ATTENTION: 1/0/true/false; else the per-architecture default
    gpu_overhead: int = -1  # OLLAMA_GPU_OVERHEAD in bytes (reserved per GPU)
    num_gpu: int = -1  # Modelfile/API num_gpu: layers to offload; -1 = Ollama decides
    num_batch: int = 0  # Modelfile/API num_batch; 0 = default (512; v0.30+: by context and headroom)
    library: str = ""  # cuda | rocm | metal | vulkan | cpu; "" = cuda (cpu without GPUs)
    engine_version: str = NEWEST
    env: tuple[tuple[str, str], ...] = ()  # the OLLAMA_* environment the server runs with
    program: str = "ollama"

    def to_dict(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        d["env"] = dict(self.env)
        return d


def environment(env: dict[str, str] | None) -> tuple[tuple[str, str], ...]:
    """The variables Ollama (and the llama-server it starts) reads: OLLAMA_*, LLAMA_ARG_FIT*."""
    src = os.environ if env is None else env
    keep = {k: str(v) for k, v in src.items() if k.startswith("OLLAMA_") or k.startswith("LLAMA_ARG_FIT")}
    return tuple(sorted(keep.items()))


def _env_var(env: dict[str, str], key: str) -> str:
    """envconfig.Var: the value stripped of surrounding spaces and quotes."""
    return env.get(key, "").strip().strip("\"'")


def _env_bool(env: dict[str, str], key: str) -> bool | None:
    """envconfig.BoolWithDefault: unset -> None; strconv.ParseBool, and any unparsable value means true."""
    s = _env_var(env, key)
    if not s:
        return None
    low = s.lower()
    if s in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if s in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    return low not in ("false", "0")


def _env_uint(env: dict[str, str], key: str) -> int | None:
    """envconfig.Uint / Uint64: a non-negative integer, else the default (None here) with a warning."""
    s = _env_var(env, key)
    if not s:
        return None
    if not s.isdigit():
        return None
    return int(s)


# ---------------------------------------------------------------------------------------------------------
# What Ollama launches


@dataclass
class Launch:
    version: Version
    era: str
    runner: str  # "llama" (llama.cpp runner), "ollama" (Ollama's Go engine), "llama-server"
    num_ctx: int  # per sequence, after defaults and the clamp to the trained context
    num_parallel: int  # 0 = automatic (decided by fit, eras before v0.9.7)
    num_batch: int
    kv_requested: str
    kv_cache_type: str  # what the runner gets ("" = f16)
    flash_attention: bool
    fa_mode: str  # on | off | auto (era D)
    gpu_overhead: int
    library: str
    minimum: int
    new_estimates: bool
    sched_spread: bool
    warnings: list[str] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)


def _fa_default_archs(v: Version) -> set[str]:
    return _union_until(_FA_DEFAULT, v)


def supports_flash_attention(spec: ModelSpec, g: om.GgufView, v: Version) -> bool:
    """fs/ggml/ggml.go SupportsFlashAttention: not an embedding model, not gemma2 (nor grok), K and V head sizes
    equal and non-zero; gpt-oss excluded in v0.11.2-v0.11.4; qwen35/qwen3next always supported."""
    arch = spec.architecture
    if g.is_embedding:
        return False
    if arch in ("qwen35", "qwen35moe", "qwen3next"):
        return True
    if arch in ("gemma2", "grok"):
        return False
    if arch in ("gptoss", "gpt-oss") and V_GPTOSS_NO_FA <= v < V_GPTOSS_FA_BACK:
        return False
    return g.key_length != 0 and g.value_length != 0 and g.key_length == g.value_length


def _total_vram(devices: tuple[Device, ...], overhead: int) -> int | None:
    if any(d.memory_bytes is None for d in devices):
        return None
    return sum(max(d.memory_bytes - overhead, 0) for d in devices)


def default_num_ctx(v: Version, devices: tuple[Device, ...], overhead: int) -> tuple[int, str | None]:
    """api.DefaultOptions NumCtx / envconfig.ContextLength default, and from v0.15.5 the VRAM tier of
    server/routes.go Serve: total VRAM (less OLLAMA_GPU_OVERHEAD per GPU) >= 47 GiB -> 262144, >= 23 GiB ->
    32768, else 4096."""
    if v < V_CTX_4096:
        return 2048, None
    if v < V_CTX_VRAM_TIER:
        return 4096, None
    total = _total_vram(devices, overhead)
    if total is None:
        return 4096, "GPU memory unknown: Ollama's VRAM-tiered default context assumed 4096 (give --vram or --gpu)"
    if total >= 47 * GiB:
        return 262144, None
    if total >= 23 * GiB:
        return 32768, None
    return 4096, None


def resolve_launch(spec: ModelSpec, g: om.GgufView, devices: tuple[Device, ...], s: OllamaSettings) -> Launch:
    v = parse_version(s.engine_version)
    env = dict(s.env)
    warnings: list[str] = []
    labels: list[str] = []
    the_era = era(v)
    arch = spec.architecture
    library = (s.library or ("cuda" if devices else "cpu")).lower()
    if library not in ("cuda", "rocm", "metal", "vulkan", "cpu", "oneapi"):
        raise OomkitError(f"unknown GPU library {s.library!r}: cuda, rocm, metal, vulkan or cpu")
    if not devices:
        library = "cpu"
    minimum = MINIMUM_MEMORY.get(library, MINIMUM_MEMORY_DEFAULT) if devices else 0

    # OLLAMA_GPU_OVERHEAD (envconfig.GpuOverhead, v0.3.10+)
    overhead = s.gpu_overhead if s.gpu_overhead >= 0 else (_env_uint(env, "OLLAMA_GPU_OVERHEAD") or 0)
    if v < om.V_GPU_OVERHEAD:
        overhead = 0

    # num_ctx: request/Modelfile, else OLLAMA_CONTEXT_LENGTH (v0.5.13+), else the version's default
    num_ctx = s.num_ctx
    if num_ctx <= 0:
        env_ctx = _env_uint(env, "OLLAMA_CONTEXT_LENGTH") if v >= V_CONTEXT_LENGTH_ENV else None
        if env_ctx:
            num_ctx = env_ctx
        else:
            num_ctx, note = default_num_ctx(v, devices, overhead)
            if note:
                labels.append(note)
    if arch in ("gptoss", "gpt-oss") and V_GPTOSS_MIN_CTX <= v < V_CTX_VRAM_TIER:
        # server/routes.go scheduleRunner: "This model requires a minimum context" -> max(num_ctx, 8192); from
        # v0.11.4 only outside low-VRAM mode (total VRAM less OLLAMA_GPU_OVERHEAD under 20 GiB)
        total = _total_vram(devices, overhead)
        low_vram = v >= V_GPTOSS_MIN_CTX_LOWVRAM and (total is not None and total < 20 * GiB)
        if not low_vram and num_ctx < 8192:
            warnings.append(f"Ollama raises num_ctx {num_ctx} to 8192 for gpt-oss (server/routes.go)")
            num_ctx = 8192
    num_ctx = max(num_ctx, 4)  # server/sched.go GetRunner: NumCtx < 4 -> 4
    train = spec.n_ctx_train
    if train and num_ctx > train:
        # llm/server.go NewLlamaServer: "requested context size too large for model" -> n_ctx_train
        warnings.append(f"num_ctx {num_ctx} > the model's trained context {train}: Ollama uses {train}")
        num_ctx = train

    # parallel slots
    if s.num_parallel > 0:
        num_parallel = s.num_parallel
    else:
        env_np = _env_uint(env, "OLLAMA_NUM_PARALLEL")
        if env_np:
            num_parallel = env_np
        elif v >= V_PARALLEL_ONE or v < V_PARALLEL_AUTO:
            num_parallel = 1
        else:
            num_parallel = 0  # automatic: sched.go tries defaultParallel, then 1 (decided by fit below)
    if arch in _PARALLEL_ONE_ARCHS and num_parallel != 1:
        warnings.append(f"Ollama runs {arch} with one parallel slot (server/sched.go: not safe with num_parallel > 1)")
        num_parallel = 1
    if g.is_embedding and v >= V_EMBED_PARALLEL_ONE and num_parallel != 1:
        num_parallel = 1  # server/sched.go load: embedding models always parallel 1

    # runner
    if the_era == "D":
        runner = "llama-server"
    elif arch in _union_until(_OLLAMA_ENGINE, v) or (_env_bool(env, "OLLAMA_NEW_ENGINE") and v >= (0, 5, 12)):
        runner = "ollama"
    else:
        runner = "llama"
    new_estimates = runner == "ollama" and (
        v >= V_NEW_ESTIMATES or (v >= V_NEW_ESTIMATES_OPTIN and bool(_env_bool(env, "OLLAMA_NEW_ESTIMATES"))))

    # flash attention and KV cache type
    fa_env = _env_bool({"X": s.flash_attention} if s.flash_attention else env,
                       "X" if s.flash_attention else "OLLAMA_FLASH_ATTENTION")
    kv_requested = (s.kv_cache_type or _env_var(env, "OLLAMA_KV_CACHE_TYPE")).lower()
    if the_era == "D":
        # llm/llama_server.go LlamaServerFlashAttention: on/off only when the user set it, else auto
        fa_mode = "auto" if fa_env is None else ("on" if fa_env else "off")
        fa = fa_mode != "off"
        kvct = kv_requested
        if kvct and arch in ("gptoss", "gpt-oss") and kvct not in ("f16", "f32", "bf16"):
            # the guard in GGML.SupportsKVCacheType lost its callers; the type reaches llama-server unchecked
            raise OomkitError(f"gpt-oss with OLLAMA_KV_CACHE_TYPE={kvct}: Ollama {version_str(v)} passes "
                              f"--cache-type-k/v {kvct} to llama-server, which aborts (attention sinks do not "
                              "support a quantized KV cache; ollama#16946, fix proposed in ollama#16955). "
                              "Unset OLLAMA_KV_CACHE_TYPE for gpt-oss")
    else:
        default_on = arch in _fa_default_archs(v)
        wanted = default_on if fa_env is None else fa_env
        supported = supports_flash_attention(spec, g, v)
        # llm/server.go: envconfig.FlashAttention(f.FlashAttention()) && ml.FlashAttentionSupported(gpus) &&
        # f.SupportsFlashAttention(); every GPU library oomkit knows supports it (CUDA needs compute 7.0+)
        fa = bool(wanted) and supported
        if wanted and not supported:
            warnings.append("flash attention requested but not supported by this model (Ollama turns it off)")
        fa_mode = "on" if fa else "off"
        kvct = ""
        if v < om.V_KV_QUANT:
            if kv_requested and kv_requested != "f16":
                warnings.append(f"OLLAMA_KV_CACHE_TYPE={kv_requested} has no effect before Ollama 0.5.0")
        elif fa:
            supported = kv_requested in ("", "f16", "q8_0", "q4_0")
            if arch in ("gptoss", "gpt-oss") and V_GPTOSS_NO_QKV <= v < V_GPTOSS_QKV_BACK and kv_requested not in (
                    "", "f16"):
                supported = False
                warnings.append(f"gpt-oss rejects a quantized KV cache in Ollama {version_str(v)} (attention sinks; "
                                f"fs/ggml SupportsKVCacheType): OLLAMA_KV_CACHE_TYPE={kv_requested} ignored, f16 used")
            elif not supported:
                warnings.append(f"kv cache type {kv_requested!r} not supported by Ollama (f16, q8_0, q4_0): f16 used")
            if supported:
                kvct = kv_requested
        elif kv_requested and kv_requested != "f16":
            warnings.append(f"OLLAMA_KV_CACHE_TYPE={kv_requested} needs flash attention, which is off: the KV cache "
                            "stays f16 (llm/server.go: quantized kv cache requested but flash attention disabled)")

    num_batch = s.num_batch if s.num_batch > 0 else 0
    if not num_batch:
        num_batch = 512  # api.DefaultOptions NumBatch (era D re-decides it below)
    if the_era == "C":
        num_batch = min(num_batch, num_ctx)  # llm/server.go NewLlamaServer: NumBatch = min(NumBatch, NumCtx)
    sched_spread = bool(_env_bool(env, "OLLAMA_SCHED_SPREAD"))
    return Launch(version=v, era=the_era, runner=runner, num_ctx=num_ctx, num_parallel=num_parallel,
                  num_batch=num_batch, kv_requested=kv_requested, kv_cache_type=kvct, flash_attention=fa,
                  fa_mode=fa_mode, gpu_overhead=overhead, library=library, minimum=minimum,
                  new_estimates=new_estimates, sched_spread=sched_spread, warnings=warnings, labels=labels)


# ---------------------------------------------------------------------------------------------------------
# The model file Ollama pulls


_PLAIN_DTYPES = {"float16": "F16", "bfloat16": "BF16", "float32": "F32"}


def ollama_gguf(spec: ModelSpec) -> ModelSpec:
    """The GGUF Ollama runs for a computed (not read) inventory.

    - `-fp16` / `-bf16` tags are GGUF files of that type (norms F32 as the converter writes them), not
      safetensors dtypes;
    - Ollama's library gpt-oss GGUF is its own conversion (convert/convert_gptoss.go): the MoE experts MXFP4,
      every other tensor as in the checkpoint (BF16, norms F32), not llama-quantize's MXFP4_MOE mix (Q8_0)."""
    if spec.architecture == "llama" and re.search(r"mistral[-_ ]?small[-_ ]?3\.[12]", spec.name, re.IGNORECASE):
        # Ollama converts Mistral3ForConditionalGeneration itself (convert/convert_mistral.go) as "mistral3", an
        # Ollama-engine model with no GraphSize formula of its own; llama.cpp's converter writes the text as "llama"
        spec = replace(spec, architecture="mistral3", labels=spec.labels + (
            "architecture as Ollama's library GGUF names it: mistral3 (llama.cpp: llama)",))
    if not spec.weights.exact and spec.weights.format.lower() in _PLAIN_DTYPES:
        from ..model.tensors import TensorShape
        from ..model.weights import gguf_inventory

        shapes = [TensorShape(t.name, t.shape, t.layer) for t in spec.weights.tensors]
        w = gguf_inventory(shapes, arch=spec.architecture, ftype=_PLAIN_DTYPES[spec.weights.format.lower()])
        spec = replace(spec, weights=w)
    if not spec.weights.exact and any(la.attention is not None and la.attention.kv_lora_rank
                                      and la.attention.latent_cache for la in spec.layers):
        # the library's DeepSeek V2/V3/R1 GGUFs were converted before llama.cpp's MLA layout (PR #12801, April
        # 2025): no key_length_mla, 128 K/V heads of 192/128 (their digests predate it; ollama#8597, #8667)
        layers = tuple(replace(la, attention=replace(la.attention, latent_cache=False))
                       if la.attention is not None and la.attention.kv_lora_rank else la for la in spec.layers)
        spec = replace(spec, layers=layers, labels=spec.labels + (
            "DeepSeek GGUF as in Ollama's library: converted before llama.cpp's MLA layout, so K/V are cached "
            "per head (128 x 192 / 128), not as the 576-wide latent",))
    if (spec.architecture in ("gpt-oss", "gptoss") and not spec.weights.exact
            and spec.weights.format.upper() in ("MXFP4_MOE", "MXFP4")):
        from ..quant import ggml

        ts = []
        for t in spec.weights.tensors:
            # convert/reader.go tensorBase.Kind: ffn_gate_inp.weight and 1-D tensors F32, the rest 16-bit;
            # the expert blocks/scales become one MXFP4 tensor (convert_gptoss.go Tensors)
            if t.name.endswith("_exps.weight") and len(t.shape) == 3:
                dtype = "mxfp4"
            elif t.name.endswith(".ffn_gate_inp.weight") or len(t.shape) < 2:
                dtype = "f32"
            else:
                dtype = "bf16"
            if dtype != t.dtype:
                t = replace(t, dtype=dtype, nbytes=ggml.tensor_bytes(dtype, t.shape))
            ts.append(t)
        w = WeightInventory(tensors=tuple(ts), exact=False, format=spec.weights.format)
        return replace(spec, weights=w, labels=spec.labels + (
            "weights as in Ollama's gpt-oss GGUF: MXFP4 experts, 16-bit elsewhere, norms and router F32 "
            "(convert/convert_gptoss.go, convert/reader.go)",))
    return spec


# ---------------------------------------------------------------------------------------------------------
# The estimate


@dataclass(frozen=True)
class OllamaEstimate(MemoryEstimate):
    """A MemoryEstimate that also knows whether Ollama put every layer on the GPUs: a model Ollama splits with
    the CPU runs, but does not "fit" (`ollama ps` shows a CPU/GPU split)."""

    full_offload: bool | None = None

    @property
    def fits(self) -> bool | None:
        base = MemoryEstimate.fits.fget(self)
        if base is None:
            return None
        return base and self.full_offload is not False


def _free(d: Device) -> int | None:
    return d.free_bytes if d.free_bytes is not None else d.memory_bytes


_UNKNOWN_FREE = 1 << 50


def _ogpus(devices: tuple[Device, ...], launch: Launch) -> list[om.OGpu]:
    return [om.OGpu(id=d.id, free=_free(d) if _free(d) is not None else _UNKNOWN_FREE, minimum=launch.minimum,
                    library=launch.library) for d in devices]


def _runner_settings(spec: ModelSpec, launch: Launch, num_parallel: int, n_gpu_layers: int,
                     split: tuple[float, ...]) -> lc.LlamaCppSettings:
    """How Ollama starts its llama.cpp runner before v0.30 (llm/server.go NewLlamaServer -> runner): --ctx-size
    num_ctx*np, --parallel np, --batch-size num_batch, --n-gpu-layers (its own estimate), --tensor-split,
    --flash-attn, --kv-cache-type. The Go runner (llama/llama.go NewContextParams) sets n_batch = batch*parallel,
    n_seq_max = parallel, embeddings = true, and leaves n_ubatch and kv_unified at llama.cpp's defaults."""
    build = runner_build(launch.version)
    n_batch = launch.num_batch * num_parallel if launch.version >= V_GO_RUNNER else launch.num_batch
    kv = launch.kv_cache_type or "f16"
    return lc.LlamaCppSettings(
        program="llama-server", n_ctx=launch.num_ctx * num_parallel, n_batch=n_batch, n_ubatch=512,
        n_parallel=num_parallel, kv_unified=build < lc.ERAS["kv_streams"],
        cache_type_k=kv, cache_type_v=kv,
        flash_attn="on" if launch.flash_attention else "off", n_gpu_layers=n_gpu_layers, tensor_split=split,
        embeddings=True, engine_version=f"b{build}")


def _split(counts: list[int]) -> tuple[float, ...]:
    return tuple(float(c) for c in counts) if len(counts) > 1 and sum(counts) else ()


def _ollama_engine_kv(spec: ModelSpec, launch: Launch, num_parallel: int) -> om.CausalCache:
    return om.causal_cache(spec, launch.version, launch.num_ctx, num_parallel, min(launch.num_batch, launch.num_ctx),
                           launch.kv_cache_type or "f16", launch.flash_attention)


def _replace_kv(est: MemoryEstimate, cache: om.CausalCache, devices: tuple[Device, ...]) -> MemoryEstimate:
    """Swap llama.cpp's KV for the Ollama engine's own (kvcache/causal.go), layer by layer on the same device."""
    by_dev: dict[str, int] = {}
    layers = []
    for lu in est.layers:
        b = cache.bytes_by_layer.get(lu.index, 0)
        by_dev[lu.device] = by_dev.get(lu.device, 0) + b
        layers.append(replace(lu, kv_bytes=b, cells=cache.cells_by_layer.get(lu.index, lu.cells)))
    devs = tuple(replace(u, kv_cache_bytes=by_dev.get(u.id, 0)) for u in est.devices)
    host = replace(est.host, kv_cache_bytes=by_dev.get("CPU", 0))
    view = dict(est.engine_view)
    view["kv_buffer_bytes"] = {k: v for k, v in by_dev.items() if v}
    total = sum(cache.bytes_by_layer.values())
    view["k_bytes"] = view["v_bytes"] = None
    view["kv_bytes_total"] = total
    cells = sorted(set(cache.cells_by_layer.values()))
    view["kv_caches"] = [{"name": "causal", "cells": c,
                          "layers": sum(1 for x in cache.cells_by_layer.values() if x == c),
                          "bytes": sum(cache.bytes_by_layer[i] for i, x in cache.cells_by_layer.items() if x == c)}
                         for c in cells]
    view["swa_kv_bytes"] = sum(b for i, b in cache.bytes_by_layer.items()
                               if cache.cells_by_layer[i] != max(cells, default=0))
    return replace(est, devices=devs, host=host, layers=tuple(layers), engine_view=view)


def _per_layer_weights(spec: ModelSpec, g: om.GgufView) -> list[int]:
    """Ollama's layer list: blk.0..blk.N-1, then the output layer (output_norm + output, or token_embd)."""
    return [*g.blk_sizes, g.output_bytes]


def _fit_llama_server(spec: ModelSpec, devs: tuple[Device, ...], ls: lc.LlamaCppSettings,
                      margin: int) -> tuple[lc.LlamaCppSettings, bool]:
    """llama-server --fit with no -ngl (common/fit.cpp): the most layers that leave `margin` free on every
    device. Simplified: layers only (fit also moves MoE expert tensors to the CPU first)."""
    if not devs or any(d.memory_bytes is None for d in devs):
        return ls, True

    def ok(ngl: int) -> bool:
        est = lc.estimate(spec, devs, replace(ls, n_gpu_layers=ngl))
        return all(u.total_bytes - u.overhead_bytes <= (_free(d) or 0) - margin for u, d in zip(est.devices, devs, strict=True))

    n_all = spec.n_layers + 1
    if ok(-1):
        return ls, True
    lo, hi = 0, n_all
    if not ok(0):
        return replace(ls, n_gpu_layers=0), False
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            lo = mid
        else:
            hi = mid
    return replace(ls, n_gpu_layers=lo), False


def estimate(spec: ModelSpec, devices: tuple[Device, ...], s: OllamaSettings) -> MemoryEstimate:
    spec = ollama_gguf(spec)
    g = om.gguf_view(spec)
    launch = resolve_launch(spec, g, devices, s)
    if launch.era == "D":
        return _estimate_llama_server(spec, g, devices, s, launch)
    return _estimate_eras_abc(spec, g, devices, s, launch)


def _estimate_eras_abc(spec: ModelSpec, g: om.GgufView, devices: tuple[Device, ...], s: OllamaSettings,
                       launch: Launch) -> MemoryEstimate:
    v = launch.version
    gpus = _ogpus(devices, launch)
    num_gpu = s.num_gpu
    unknown = any(d.memory_bytes is None for d in devices)
    if unknown and devices:
        launch.labels.append("GPU memory unknown: Ollama's own layout assumed to offload every layer")
    # parallel slots and the GPUs used: server/sched.go pickBestFullFitByLibrary (before v0.12.11; the era C
    # layout packs onto as few GPUs as possible by itself): a single GPU first, largest free memory first,
    # unless OLLAMA_SCHED_SPREAD; then all; automatic parallel tries defaultParallel, then 1.
    default_parallel = 2 if v >= V_PARALLEL_AUTO_2 else 4
    tries = [launch.num_parallel] if launch.num_parallel > 0 else [default_parallel, 1]
    order = sorted(range(len(gpus)), key=lambda i: -gpus[i].free)

    def full_fit(idx: list[int], p: int) -> bool:
        est = _own_estimate(spec, g, launch, [gpus[i] for i in idx], p, num_gpu)
        want = g.block_count + 1 if num_gpu < 0 else num_gpu
        return est["layers"] > 0 and est["layers"] >= want

    chosen: tuple[list[int], int] | None = None
    singles = [[i] for i in order] if launch.era != "C" and not launch.sched_spread and len(order) > 1 else []
    for p in tries:
        for idx in singles:
            if full_fit(idx, p):
                chosen = (idx, p)
                break
        if chosen:
            break
    if chosen is None and gpus:
        for p in tries:
            if full_fit(order, p):
                chosen = (order, p)
                break
    if chosen is None:
        # no full fit anywhere: pickBestPartialFitByLibrary sets parallel 1 (CPU only: defaultParallel) and keeps
        # the GPUs in their discovery order
        p = tries[-1] if gpus else tries[0]
        chosen = (list(range(len(gpus))), p)
    used_idx, num_parallel = chosen
    used_gpus = [gpus[i] for i in used_idx]
    own = _own_estimate(spec, g, launch, used_gpus, num_parallel, num_gpu)

    # the runner, with the layers Ollama decided (a GPU that got no layer holds nothing)
    if gpus and own["layers"] and len(used_idx) > 1:
        kept = [(i, c) for i, c in zip(used_idx, own["split"], strict=True) if c > 0]
        used_idx, own["split"] = [i for i, _ in kept], [c for _, c in kept]
    used_devs = tuple(devices[i] for i in used_idx)
    counts = own["split"]
    ls = _runner_settings(spec, launch, num_parallel, own["layers"] if used_devs else 0, _split(counts))
    runner = lc.estimate(spec, used_devs, ls)
    if launch.runner == "ollama":
        runner = _replace_kv(runner, _ollama_engine_kv(spec, launch, num_parallel), used_devs)
    return _finish(spec, g, devices, used_idx, s, launch, num_parallel, runner, own, ls)


def _own_estimate(spec: ModelSpec, g: om.GgufView, launch: Launch, gpus: list[om.OGpu], num_parallel: int,
                  num_gpu: int) -> dict[str, Any]:
    """Ollama's own figures for one candidate placement -> {layers, split (per GPU), fields (its log), vram,
    total, kv, weights, graph}."""
    v = launch.version
    kvct = launch.kv_cache_type
    if launch.runner == "ollama" and launch.new_estimates:
        # eras B/C, Ollama engine: laid out from the runner's real allocations (ml/backend/ggml Reserve ...);
        # the per-layer sizes are the runner's (weights + its KV cache), the graph its compute buffer
        cache = _ollama_engine_kv(spec, launch, num_parallel)
        layer_w = _per_layer_weights(spec, g)
        layer_c = [cache.bytes_by_layer.get(i, 0) for i in range(g.block_count)] + [0]
        ls = _runner_settings(spec, launch, num_parallel, -1, ())
        ctx = lc.resolve_context(spec, ls)
        phases = lc.compute_phases(spec, ctx, lc.kv_caches(spec, ctx, False))
        graph = max(phases.attention, phases.output)
        lay = om.layout_era_c(layer_w, layer_c, gpus, graph, graph, launch.gpu_overhead, num_gpu)
        out = _era_c_result(lay, gpus, g, measured=True)
        if launch.era == "B":
            # the scheduler still sizes the load with llm/memory.go (server/sched.go PredictServerFit) and logs
            # its msg=offload line next to the runner's measured figures
            old = _era_a_result(g, launch, gpus, num_parallel, num_gpu)
            out["fields"] = {**old["fields"], **out["fields"]}
            out["log"] = old["log"] + "\n" + out["log"]
        return out
    gr_kw = dict(num_ctx=launch.num_ctx, num_batch=launch.num_batch, num_parallel=num_parallel, kvct=kvct,
                 flash_attention=launch.flash_attention)
    if launch.era == "C":
        gr = om.graph_size(g, v, **gr_kw)
        layer_w = _per_layer_weights(spec, g)
        layer_c = [*gr.kv, 0]
        partial, full = gr.partial, gr.full
        if gpus and gpus[0].library == "metal":
            partial = full
        buffer = (g.blk_sizes[0] if g.blk_sizes else 0) + (gr.kv[0] if gr.kv else 0)
        lay = om.layout_era_c(layer_w, layer_c, gpus, partial, full, launch.gpu_overhead, num_gpu, buffer=buffer)
        lay.gr = gr
        return _era_c_result(lay, gpus, g, measured=False)
    return _era_a_result(g, launch, gpus, num_parallel, num_gpu)


def _era_a_result(g: om.GgufView, launch: Launch, gpus: list[om.OGpu], num_parallel: int,
                  num_gpu: int) -> dict[str, Any]:
    v = launch.version
    est = om.estimate_gpu_layers(g, v, gpus, launch.num_ctx, launch.num_batch, num_parallel, launch.kv_cache_type,
                                 launch.flash_attention, num_gpu, launch.gpu_overhead)
    logged = est.log_fields(num_gpu, launch.gpu_overhead, g.block_count)
    fields = {k: v for k, v in logged.items() if k.startswith("memory.")}
    fields["memory.available"] = {gp.id: gp.free for gp in gpus if gp.free != _UNKNOWN_FREE}
    fields["memory.required.allocations"] = {gp.id: a for gp, a in zip(gpus, est.gpu_sizes, strict=True)}
    return {"layers": est.layers, "split": list(est.tensor_split), "fields": fields, "vram": est.vram,
            "requested": num_gpu,
            "total": est.total, "kv": est.graph.kv_total, "weights": est.memory_weights + est.output_bytes
            if v >= om.V_WEIGHTS_NO_KV else est.memory_weights - est.graph.kv_total + est.output_bytes,
            "graph": est.graph_full if est.fully_loaded else est.graph_partial, "log": _offload_line(est, logged),
            "labels": list(est.graph.labels), "fully_loaded": est.fully_loaded}


def _era_c_result(lay: om.EraCLayout, gpus: list[om.OGpu], g: om.GgufView, measured: bool) -> dict[str, Any]:
    split = [len(x) for x in lay.per_gpu]
    fields = {"model weights": dict(lay.weights), "kv cache": dict(lay.cache), "compute graph": dict(lay.graphs),
              "total memory": lay.total}
    vram = sum(v for k, v in lay.weights.items() if k != "CPU") + sum(v for k, v in lay.cache.items() if k != "CPU") \
        + sum(lay.graphs.values())
    n_used = sum(1 for x in lay.per_gpu if x)
    lines = [f'msg="{k}" device={dev} size="{om.human_bytes2(b)}"'
             for k in ("model weights", "kv cache", "compute graph") for dev, b in fields[k].items()]
    lines.append(f'msg="total memory" size="{om.human_bytes2(lay.total)}"')
    # llm/server.go VRAMSize/TotalSize (what `ollama ps` shows): the GPUs' weights, cache and graph; all of it
    return {"layers": lay.n_layers, "split": split, "fields": fields, "vram": vram, "total": lay.total,
            "kv": sum(lay.cache.values()),
            "weights": sum(lay.weights.values()), "graph": lay.graph, "log": "\n".join(lines),
            "labels": list(lay.gr.labels) if lay.gr else [], "measured": measured, "n_gpus_used": n_used,
            "fully_loaded": lay.n_layers >= g.block_count + 1}


def _offload_line(est: om.LayerEstimate, f: dict[str, Any]) -> str:
    """The `msg=offload` (`msg="offload to cuda"` before v0.5.12) line as llm/memory.go LogValue prints it."""
    hb = om.human_bytes2
    lib = est.gpus[0].library if est.gpus else "cpu"
    avail = " ".join(hb(gp.free) for gp in est.gpus if gp.free != _UNKNOWN_FREE)
    alloc = " ".join(hb(a) for a in est.gpu_sizes)
    split = ",".join(map(str, f["layers.split"]))
    return (f'msg=offload library={lib} layers.requested={f["layers.requested"]} layers.model={f["layers.model"]} '
            f'layers.offload={f["layers.offload"]} layers.split="{split}" memory.available="[{avail}]" '
            f'memory.gpu_overhead="{hb(f["memory.gpu_overhead"])}" memory.required.full="{hb(est.total)}" '
            f'memory.required.partial="{hb(est.vram)}" memory.required.kv="{hb(f["memory.required.kv"])}" '
            f'memory.required.allocations="[{alloc}]" memory.weights.total="{hb(f["memory.weights.total"])}" '
            f'memory.weights.repeating="{hb(f["memory.weights.repeating"])}" '
            f'memory.weights.nonrepeating="{hb(f["memory.weights.nonrepeating"])}" '
            f'memory.graph.full="{hb(f["memory.graph.full"])}" memory.graph.partial="{hb(f["memory.graph.partial"])}"')


def _estimate_llama_server(spec: ModelSpec, g: om.GgufView, devices: tuple[Device, ...], s: OllamaSettings,
                           launch: Launch) -> MemoryEstimate:
    """Era D: llm/llama_server.go startLlamaServer and server/sched.go load (fb3076099)."""
    np_ = max(launch.num_parallel, 1)
    ctx_total = launch.num_ctx * np_  # effectiveLlamaServerContext
    file_bytes = spec.weights.nbytes
    predicted = om.predict_server_vram(spec, g, file_bytes, ctx_total)
    # selectLlamaServerPlacement: one GPU when the prediction is within 80% of its available memory
    idx = list(range(len(devices)))
    if len(devices) > 1 and s.num_gpu != 0 and not launch.sched_spread:
        known = [(i, _free(d)) for i, d in enumerate(devices) if _free(d) is not None]
        fit1 = [(i, f) for i, f in known if predicted <= f * 80 // 100]
        if fit1:
            idx = [max(fit1, key=lambda x: x[1])[0]]
    used = tuple(devices[i] for i in idx)
    available = sum(_free(d) or 0 for d in used)
    if s.num_batch > 0:
        batch = s.num_batch
    elif g.is_embedding:
        batch = min(2048, ctx_total)  # DefaultEmbeddingNumBatch, capped by the context (embeddingBatchSize)
    else:
        small = any((_free(d) or 0) and (_free(d) or 0) <= 8 * GiB for d in used)
        batch = om.automatic_generation_batch(ctx_total, predicted, available, launch.fa_mode == "off",
                                              launch.library == "cuda" and bool(used), small)
    surcharge = 0 if g.is_embedding else om.generation_batch_surcharge(batch)
    build = runner_build(launch.version)
    kv = launch.kv_cache_type or "f16"
    if s.num_gpu > 0:
        ngl = s.num_gpu
    elif s.num_gpu == 0:
        ngl = 0
    else:
        ngl = -1
    ls = lc.LlamaCppSettings(program="llama-server", n_ctx=ctx_total, n_batch=batch, n_ubatch=batch, n_parallel=np_,
                             kv_unified=False, cache_type_k=kv, cache_type_v=kv, flash_attn=launch.fa_mode,
                             n_gpu_layers=ngl, embeddings=g.is_embedding, engine_version=f"b{build}")
    full = True
    if ngl == -1:
        env = dict(s.env)
        margin = FIT_TARGET
        if env.get("LLAMA_ARG_FIT_TARGET", "").strip().isdigit():
            margin = int(env["LLAMA_ARG_FIT_TARGET"].strip()) * MiB
        ls, full = _fit_llama_server(spec, used, ls, margin)
        if not full:
            launch.warnings.append(f"llama-server --fit offloads {ls.n_gpu_layers} of {spec.n_layers + 1} layers "
                                   "(layers only: --fit also moves MoE expert tensors to the CPU first, not "
                                   "modelled)")
    launch.num_batch = batch
    runner = lc.estimate(spec, used, ls)
    own = {"layers": None, "split": [], "vram": predicted + surcharge, "total": predicted + surcharge, "kv": None,
           "weights": file_bytes, "graph": None, "labels": [], "fully_loaded": None,
           "fields": {"predicted": predicted, "predicted_for_load": predicted + surcharge,
                      "batch_surcharge": surcharge, "file_size": file_bytes},
           "log": f'msg="llama-server model fits alongside existing models" predicted="{om.human_bytes2(predicted + surcharge)}" '
                  f'predicted_num_ctx={ctx_total} num_batch={batch}'}
    return _finish(spec, g, devices, idx, s, launch, np_, runner, own, ls)


def _launch_command(launch: Launch, np_: int, ls: lc.LlamaCppSettings) -> str:
    kv = f" --cache-type-k {ls.cache_type_k} --cache-type-v {ls.cache_type_v}" if launch.kv_cache_type else ""
    if launch.era == "D":
        ngl = f" -ngl {ls.n_gpu_layers}" if ls.n_gpu_layers >= 0 else ""
        return (f"llama-server -c {ls.n_ctx} -np {np_}{kv} --flash-attn {ls.flash_attn} -b {ls.n_batch} "
                f"-ub {ls.n_ubatch}{ngl}")
    fa = " --flash-attn" if launch.flash_attention else ""
    engine = " --ollama-engine" if launch.runner == "ollama" else ""
    split = " --tensor-split " + ",".join(str(int(x)) for x in ls.tensor_split) if ls.tensor_split else ""
    kvt = f" --kv-cache-type {launch.kv_cache_type}" if launch.kv_cache_type else ""
    return (f"ollama runner{engine} --ctx-size {ls.n_ctx} --batch-size {launch.num_batch} --n-gpu-layers "
            f"{max(ls.n_gpu_layers, 0)}{fa}{kvt} --parallel {np_}{split}")


def _finish(spec: ModelSpec, g: om.GgufView, devices: tuple[Device, ...], used_idx: list[int], s: OllamaSettings,
            launch: Launch, num_parallel: int, runner: MemoryEstimate, own: dict[str, Any],
            ls: lc.LlamaCppSettings) -> MemoryEstimate:
    """Lay the runner's figures on all GPUs (unused ones empty), add Ollama's per-GPU reserve, and put Ollama's
    own figures next to them."""
    reserve = launch.minimum + launch.gpu_overhead
    by_id = {u.id: u for u in runner.devices}
    usages = []
    for d in devices:
        u = by_id.get(d.id)
        if u is None:
            usages.append(Usage(id=d.id, name=d.name, memory_bytes=d.memory_bytes))
        else:
            usages.append(replace(u, memory_bytes=d.memory_bytes, overhead_bytes=reserve))
    devs = tuple(usages)
    runner_vram = sum(u.total_bytes for u in devs)
    runner_total = runner_vram + runner.host.total_bytes
    warnings = list(runner.warnings) + launch.warnings
    labels = list(launch.labels) + list(g.labels) + own.get("labels", [])
    if spec.architecture in _VISION_ARCHS and launch.era != "D":
        labels.append("Ollama also counts the vision projector (projector.weights/graph) of this model family; "
                      "oomkit does not model the projector")

    ollama_vram = own["vram"]
    ollama_total = own["total"]
    kv_runner = runner.kv_cache_bytes + runner.recurrent_state_bytes
    compare: dict[str, Any] = {
        "ollama_vram_bytes": ollama_vram, "runner_vram_bytes": runner_vram,
        "vram_difference_bytes": None if ollama_vram is None else ollama_vram - runner_vram,
        "ollama_total_bytes": ollama_total, "runner_total_bytes": runner_total,
        "ollama_kv_bytes": own["kv"], "runner_kv_bytes": kv_runner,
        "ollama_weights_bytes": own["weights"], "runner_weights_bytes": runner.weights_bytes,
        "ollama_graph_bytes": own["graph"], "runner_compute_bytes": runner.compute_bytes,
    }
    ref_o, ref_r, what = (ollama_vram, runner_vram, "VRAM") if devices and runner_vram else \
        (ollama_total, runner_total, "memory")
    ratio = None
    if ref_o is not None and ref_r:
        ratio = ref_o / ref_r
        compare["ratio"] = round(ratio, 4)
        if abs(ratio - 1) > 0.10:
            more = "more" if ratio > 1 else "less"
            warnings.append(
                f"Ollama's own estimate ({'what `ollama ps` shows' if launch.era != 'D' else 'its eviction prediction'})"
                f" is {ref_o / GiB:.2f} GiB of {what}, {abs(ratio - 1) * 100:.0f}% {more} than the "
                f"{ref_r / GiB:.2f} GiB its runner really allocates")

    full_offload = None
    if devices:
        if launch.era == "D":
            full_offload = ls.n_gpu_layers < 0 or ls.n_gpu_layers > spec.n_layers
        else:
            full_offload = bool(own["layers"] and own["layers"] >= spec.n_layers + 1)
            if not full_offload:
                warnings.append(f"Ollama offloads {own['layers']}/{spec.n_layers + 1} layers to the GPU; the rest run "
                                "on the CPU (`ollama ps` shows a CPU/GPU split)")

    view = dict(runner.engine_view)
    view.update({
        "ollama_version": version_str(launch.version),
        "ollama_era": launch.era,
        "ollama_runner": {"llama": "llama.cpp runner", "ollama": "Ollama engine",
                          "llama-server": "llama-server"}[launch.runner],
        "ollama_launch": _launch_command(launch, num_parallel, ls),
        "ollama_layers": (f"{own['layers']}/{spec.n_layers + 1}" if own["layers"] is not None else None),
        "ollama_layers_split": ",".join(map(str, own["split"])) if len(own["split"]) > 1 else None,
        "ollama_memory": own["fields"],
        "ollama_vs_runner": compare,
        "ollama_log": own.get("log"),
    })
    eff = {
        "num_ctx": launch.num_ctx, "num_parallel": num_parallel, "kv_cache_type": launch.kv_cache_type or "f16",
        "kv_cache_type_requested": launch.kv_requested or None, "flash_attention": launch.fa_mode,
        "gpu_overhead": launch.gpu_overhead, "num_gpu": own["layers"] if launch.era != "D" else s.num_gpu,
        "num_batch": launch.num_batch, "library": launch.library, "engine_version": version_str(launch.version),
        "era": launch.era, "runner": launch.runner, "env": dict(s.env), "program": s.program,
        "n_ctx": ls.n_ctx, "n_parallel": num_parallel,
    }
    host = replace(runner.host)
    layers = runner.layers
    return OllamaEstimate(model=spec, engine="ollama", settings=eff, devices=devs, host=host, engine_view=view,
                          kv_bytes_per_token=runner.kv_bytes_per_token, layers=layers,
                          warnings=tuple(dict.fromkeys(warnings + labels)), full_offload=full_offload)


# ---------------------------------------------------------------------------------------------------------
# Command line: `ollama run TAG [PROMPT]`, `ollama serve`, and oomkit's spelling of Ollama's parameters

# cmd/cmd.go: flags of `ollama run` (name -> takes a value)
_RUN_FLAGS = {"--verbose": False, "--insecure": False, "--nowordwrap": False, "--format": True, "--keepalive": True,
              "--think": False, "--hidethinking": False, "--dimensions": True, "--truncate": False,
              "--experimental": False, "--experimental-yolo": False, "-h": False, "--help": False}
# oomkit's options for Ollama's Modelfile parameters and server variables (field, kind)
_PARAM_FLAGS = {
    "--num-ctx": ("num_ctx", int), "--num_ctx": ("num_ctx", int),
    "--num-parallel": ("num_parallel", int), "--num_parallel": ("num_parallel", int),
    "--num-gpu": ("num_gpu", int), "--num_gpu": ("num_gpu", int),
    "--num-batch": ("num_batch", int), "--num_batch": ("num_batch", int),
    "--kv-cache-type": ("kv_cache_type", str), "--flash-attention": ("flash_attention", str),
    "--gpu-overhead": ("gpu_overhead", "size"), "--library": ("library", str),
}


def parse_args(argv: list[str], env: dict[str, str] | None = None) -> tuple[str | None, str | None, OllamaSettings]:
    args = list(argv)
    opts: dict[str, Any] = {"env": environment(env)}
    model: str | None = None
    if args and args[0] in ("run", "serve", "start", "show", "pull", "create", "launch"):
        sub = args.pop(0)
        opts["program"] = f"ollama {sub}"
        if sub not in ("run", "serve", "start"):
            raise OomkitError(f"'ollama {sub}' loads no model: give 'ollama run MODEL' or 'ollama serve'")
    i = 0
    while i < len(args):
        a = args[i]
        name, eq, inline = a.partition("=") if a.startswith("--") else (a, "", "")
        if name in _PARAM_FLAGS:
            fld, kind = _PARAM_FLAGS[name]
            value, i = flag_value(args, i, inline if eq else None, f"{name} expects a value")
            if kind is int:
                try:
                    opts[fld] = int(value)
                except ValueError:
                    raise OomkitError(f"{name} takes an integer, got {value!r}") from None
            elif kind == "size":
                from ..units import parse_size

                opts[fld] = int(value) if value.isdigit() else parse_size(value)
            else:
                opts[fld] = value
        elif name in _RUN_FLAGS:
            if _RUN_FLAGS[name] and not eq:
                i += 1
        elif a.startswith("-") and len(a) > 1:
            raise OomkitError(f"unknown flag: {a} (ollama run takes --verbose, --format, --keepalive, --think, "
                              "...; oomkit takes --num-ctx, --num-gpu, --num-batch, --num-parallel, "
                              "--kv-cache-type, --flash-attention, --gpu-overhead, --library)")
        elif model is None:
            model = a
        # further words are the prompt
        i += 1
    return model, None, OllamaSettings(**opts)


def flag_takes_value(name: str, following: str | None) -> bool:
    if name in _PARAM_FLAGS:
        return True
    return _RUN_FLAGS.get(name, False)


# ollama.com library tags without a quant are the GGUFs llama.cpp users get too: Q4_K_M (gpt-oss: MXFP4)
def _parse_args(argv: list[str], env: dict[str, str] | None = None, program: str | None = None):
    return parse_args(argv, env)


ENGINE = EngineModule(
    "ollama", OllamaSettings, estimate, _parse_args, flag_takes_value,
    context_field="num_ctx", neutral=NEUTRAL,
    kv_types=("f16", "q8_0", "q4_0"), kv_fields=("kv_cache_type",),  # OLLAMA_KV_CACHE_TYPE (docs/faq.md)
    programs={"ollama": None}, subcommands=("run", "serve"),
    newest=NEWEST, default_format_fn=lc.default_weight_format, loads_gguf=True,
    effective_context_fn=lambda est: est.engine_view.get("n_ctx"),
)
