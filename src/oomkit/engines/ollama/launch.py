"""What Ollama launches: its defaults, the OLLAMA_* environment and the per-architecture rules resolved into the
settings its runner starts with (num_ctx, parallel slots, which runner, flash attention, KV cache type, batch),
as server/routes.go, server/sched.go and llm/server.go decide them at each release."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...errors import OomkitError
from ...memory import Device
from ...model.spec import ModelSpec
from ...units import GiB, MiB
from ..llamacpp.first_builds import first_build, gguf_architecture
from ..versions import Version, version_str
from .args import run_variables_warning
from .graph import _GPT_OSS
from .settings import (
    V_CONTEXT_LENGTH_ENV,
    V_CTX_4096,
    V_CTX_CLAMP_TRAIN,
    V_CTX_VRAM_TIER,
    V_EMBED_PARALLEL_ONE,
    V_ERA_D,
    V_GPTOSS_FA_BACK,
    V_GPTOSS_MIN_CTX,
    V_GPTOSS_MIN_CTX_LOWVRAM,
    V_GPTOSS_NO_FA,
    V_GPTOSS_NO_QKV,
    V_GPTOSS_QKV_BACK,
    V_GPU_OVERHEAD,
    V_KV_QUANT,
    V_NEW_ESTIMATES,
    V_NEW_ESTIMATES_OPTIN,
    V_PARALLEL_AUTO,
    V_PARALLEL_ONE,
    OllamaSettings,
    env_bool,
    env_uint,
    env_var,
    env_warnings,
    era,
    parse_version,
    release_candidate,
    releases,
    runner_build,
    union_until,
)
from .weights import GgufView, library_arch

# discover/types.go / ml/device.go DeviceInfo.MinimumMemory: 457 MiB (CUDA, ROCm, others), 512 MiB on Metal
MINIMUM_MEMORY = {"metal": 512 * MiB}
MINIMUM_MEMORY_DEFAULT = 457 * MiB

# fs/ggml/ggml.go FlashAttention(): architectures with flash attention on by default (OLLAMA_FLASH_ATTENTION
# unset), each row the first tag whose slices.Contains list has the name, read tag by tag v0.11.8-v0.24.0
# (`git show vX.Y.Z:fs/ggml/ggml.go`, func (f GGML) FlashAttention; the function first exists in v0.11.8)
_FA_DEFAULT = (
    ((0, 11, 8), {"gptoss", "gpt-oss"}),
    ((0, 12, 4), {"qwen3", "qwen3moe"}),
    ((0, 12, 6), {"gemma3"}),
    ((0, 12, 8), {"qwen3vl", "qwen3vlmoe"}),
    ((0, 13, 2), {"mistral3"}),
    ((0, 13, 4), {"olmo3"}),
    ((0, 13, 5), {"bert"}),
    ((0, 14, 3), {"glm4moelite", "lfm2"}),
    ((0, 15, 5), {"glmocr", "qwen3next"}),
    ((0, 17, 1), {"lfm2moe", "nemotron_h", "nemotron_h_moe", "qwen35", "qwen35moe"}),
    ((0, 20, 4), {"gemma4"}),
    ((0, 22, 0), {"nemotron_h_omni"}),
)
# fs/ggml/ggml.go KV.OllamaEngineRequired(): architectures that run on the Ollama engine by default (eras A-C;
# llm/server.go NewLlamaServer: `envconfig.NewEngine() || f.KV().OllamaEngineRequired()`, unchanged v0.6.0-v0.24.0).
# Each row is the first tag whose list has the name, read tag by tag (`git show vX.Y.Z:fs/ggml/ggml.go`, the
# slices.Contains list of OllamaEngineRequired, every tag v0.6.0-v0.24.0; the function first exists in v0.6.0):
_OLLAMA_ENGINE = (
    ((0, 6, 0), {"gemma3"}),
    ((0, 6, 5), {"mistral3"}),
    ((0, 6, 7), {"llama4"}),
    ((0, 7, 0), {"mllama", "qwen25vl"}),
    ((0, 9, 3), {"gemma3n"}),
    ((0, 11, 0), {"gptoss"}),  # Ollama's converter's name (convert/convert_gptoss.go), its library's GGUF
    ((0, 11, 5), {"gpt-oss"}),  # llama.cpp's name, added beside it
    ((0, 12, 0), {"qwen3"}),  # dropped in v0.12.5 only: _OLLAMA_ENGINE_DROPPED
    ((0, 12, 2), {"qwen3moe"}),
    ((0, 12, 7), {"qwen3vl", "qwen3vlmoe"}),
    ((0, 13, 0), {"deepseekocr", "deepseek2"}),
    ((0, 13, 1), {"nomic-bert"}),
    ((0, 13, 4), {"olmo3"}),
    ((0, 13, 5), {"bert"}),
    ((0, 14, 3), {"glm4moelite", "lfm2"}),
    ((0, 15, 5), {"glmocr", "qwen3next"}),
    # v0.17.1's list has them (v0.17.0's has none of them): the vendored llama.cpp of v0.13.5-v0.30 (b7437,
    # Makefile.sync ec98e2002) has no qwen35 (b7990), so only this engine runs Qwen3.5 there
    ((0, 17, 1), {"nemotron_h", "nemotron_h_moe", "qwen35", "qwen35moe", "lfm2moe"}),
    ((0, 20, 0), {"gemma4"}),
    ((0, 22, 0), {"laguna", "nemotron_h_omni"}),
)
# names a release's list lacks although an earlier one had them: v0.12.5 (3d32249c7, #12556 "use llama runner for
# qwen3") took qwen3 out, v0.12.6 put it back (18087f2ec, the revert); qwen3moe stayed on the Ollama engine
_OLLAMA_ENGINE_DROPPED = {(0, 12, 5): {"qwen3"}}
# the architecture name of the Ollama library's GGUF where oomkit's spec uses llama.cpp's (convert/convert_gptoss.go
# writes "gptoss"; OllamaEngineRequired knows "gpt-oss" only from v0.11.5)
_LIBRARY_ARCH = {"gpt-oss": "gptoss"}
# model/models/*: the architectures model.Register knows at each tag. With OLLAMA_NEW_ENGINE set (off by default in
# every release, envconfig.NewEngine) llm/server.go NewLlamaServer tries model.NewTextProcessor and falls back to
# the llama.cpp runner for any other architecture ("model not yet supported by Ollama engine"). Each row is the
# first tag whose model/models/models.go imports a package calling model.Register with the name, read tag by tag
# v0.5.12-v0.24.0 (the "_embed" pooling variants of v0.11.10+ left out: not architectures)
_REGISTERED = (
    ((0, 5, 12), {"llama", "mllama"}),
    ((0, 6, 0), {"gemma2", "gemma3"}),
    ((0, 6, 5), {"mistral3"}),
    ((0, 6, 7), {"llama4"}),
    ((0, 7, 0), {"qwen25vl"}),
    ((0, 7, 1), {"qwen2", "qwen3", "qwen3moe"}),
    ((0, 9, 3), {"gemma3n"}),
    ((0, 11, 0), {"gptoss"}),
    ((0, 11, 5), {"gpt-oss"}),
    ((0, 12, 0), {"bert"}),
    ((0, 12, 3), {"deepseek2"}),
    ((0, 12, 7), {"qwen3vl", "qwen3vlmoe"}),
    ((0, 13, 0), {"deepseekocr", "nomic-bert"}),
    ((0, 13, 3), {"nomic-bert-moe"}),
    ((0, 13, 4), {"olmo3"}),
    ((0, 14, 3), {"glm4moelite", "lfm2"}),
    ((0, 15, 5), {"glmocr", "qwen3next"}),
    ((0, 17, 1), {"lfm2moe", "nemotron_h", "nemotron_h_moe", "qwen35", "qwen35moe"}),
    ((0, 20, 0), {"gemma4"}),
    ((0, 22, 0), {"laguna", "nemotron_h_omni"}),
)
# bd6c1d6b4 "flash attn: add auto mode for llama engine" (#13052, first in v0.13.4): llm/server.go NewLlamaServer
# hands the llama.cpp runner ml.FlashAttentionAuto unless OLLAMA_FLASH_ATTENTION is set (faUserSet), and llama.cpp
# decides (llama_context resolves -fa auto); the Ollama engine keeps its own SupportsFlashAttention rule
V_FA_AUTO_LLAMA = (0, 13, 4)
V_MLLAMA = (0, 4, 0)  # mllama (Llama 3.2 Vision) on the llama runner with its projector GGUF
# server/sched.go load: architectures forced to one parallel slot ("not safe with num_parallel > 1", #4165), the
# first tag of each (`git show vX.Y.Z:server/sched.go`, every tag): mllama from v0.4.1 (checkMllamaModelFamily; at
# v0.4.0 its projector GGUF met v0.2.0's "multimodal models don't support parallel" rule), the slices.Contains
# list of ModelFamily from v0.12.7, unchanged since v0.22.0
_PARALLEL_ONE = (
    ((0, 4, 0), {"mllama"}),
    ((0, 12, 7), {"qwen3vl", "qwen3vlmoe"}),
    ((0, 15, 5), {"qwen3next", "lfm2", "lfm2moe"}),
    ((0, 17, 1), {"qwen35", "qwen35moe", "nemotron_h", "nemotron_h_moe"}),
    ((0, 22, 0), {"nemotron_h_omni"}),
)
# architecture names only Ollama's converters write, with the first release that loads them: llama.cpp names
# Qwen2.5-VL qwen2vl, Olmo 3 olmo2 and GLM-4.7-Flash deepseek2 (weights.library_arch), so no vendored llama.cpp
# runner loads these GGUFs; the Ollama engine does from the release that registered them (_OLLAMA_ENGINE), and
# era D's llama-server through llama/compat/llama-ollama-compat.cpp (handle_olmo3 -> olmo2, handle_glm4moelite ->
# deepseek2, both there from v0.30.0, 9db4bdbad)
_OLLAMA_ONLY = {"qwen25vl": (0, 7, 0), "olmo3": (0, 13, 4), "glm4moelite": (0, 14, 3)}


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
    rc: int | None = None  # the N of a -rcN release asked for (settings.before_candidate)


def _fa_default_archs(v: Version) -> set[str]:
    return union_until(_FA_DEFAULT, v)


def supports_flash_attention(spec: ModelSpec, g: GgufView, v: Version) -> bool:
    """fs/ggml/ggml.go SupportsFlashAttention: not an embedding model, not gemma2 (nor grok), K and V head sizes
    equal and non-zero; gpt-oss excluded in v0.11.2-v0.11.4; qwen35/qwen3next always supported."""
    arch = spec.architecture
    if g.is_embedding:
        return False
    if arch in ("qwen35", "qwen35moe", "qwen3next"):
        return True
    if arch in ("gemma2", "grok"):
        return False
    if arch in _GPT_OSS and V_GPTOSS_NO_FA <= v < V_GPTOSS_FA_BACK:
        return False
    return g.key_length != 0 and g.value_length != 0 and g.key_length == g.value_length


def total_vram(devices: tuple[Device, ...], overhead: int) -> int | None:
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
    total = total_vram(devices, overhead)
    if total is None:
        return 4096, "GPU memory unknown: Ollama's VRAM-tiered default context assumed 4096 (give --vram or --gpu)"
    if total >= 47 * GiB:
        return 262144, None
    if total >= 23 * GiB:
        return 32768, None
    return 4096, None


def resolve_launch(spec: ModelSpec, g: GgufView, devices: tuple[Device, ...], s: OllamaSettings) -> Launch:
    v = parse_version(s.engine_version)
    env = dict(s.env)
    warnings: list[str] = env_warnings(env)  # numeric variables Ollama cannot read: its default, and a warning
    warnings += filter(None, [run_variables_warning(s)])  # server variables given to `ollama run` (args.py)
    labels: list[str] = []
    the_era = era(v)
    library = _library(s, devices)
    minimum = MINIMUM_MEMORY.get(library, MINIMUM_MEMORY_DEFAULT) if devices else 0
    # OLLAMA_GPU_OVERHEAD (envconfig.GpuOverhead, v0.3.10+)
    overhead = s.gpu_overhead if s.gpu_overhead >= 0 else (env_uint(env, "OLLAMA_GPU_OVERHEAD") or 0)
    if v < V_GPU_OVERHEAD:
        overhead = 0
    num_ctx = _num_ctx(spec, devices, s, v, env, overhead, warnings, labels)
    num_parallel = _num_parallel(spec, g, s, v, env, warnings)
    runner = _runner(spec, v, the_era, env)
    check_architecture(spec, v, runner)
    new_estimates = runner == "ollama" and (
        v >= V_NEW_ESTIMATES or (v >= V_NEW_ESTIMATES_OPTIN and bool(env_bool(env, "OLLAMA_NEW_ESTIMATES"))))
    # flash attention and KV cache type
    fa_env = env_bool({"X": s.flash_attention} if s.flash_attention else env,
                      "X" if s.flash_attention else "OLLAMA_FLASH_ATTENTION")
    # --kv-type is OLLAMA_KV_CACHE_TYPE: trimmed of spaces and quotes as envconfig.Var trims the variable
    kv_requested = env_var({"X": s.kv_cache_type} if s.kv_cache_type else env,
                           "X" if s.kv_cache_type else "OLLAMA_KV_CACHE_TYPE").lower()
    if the_era == "D":
        fa, fa_mode, kvct = _attention_llama_server(spec, v, fa_env, kv_requested)
    else:
        fa, fa_mode, kvct = _attention_runner(spec, g, v, fa_env, kv_requested, warnings, runner)
    num_batch = s.num_batch if s.num_batch > 0 else 0
    if not num_batch:
        num_batch = 512  # api.DefaultOptions NumBatch (era D re-decides it below)
    if the_era == "C":
        num_batch = min(num_batch, num_ctx)  # llm/server.go NewLlamaServer: NumBatch = min(NumBatch, NumCtx)
    sched_spread = bool(env_bool(env, "OLLAMA_SCHED_SPREAD"))
    return Launch(version=v, era=the_era, runner=runner, num_ctx=num_ctx, num_parallel=num_parallel,
                  num_batch=num_batch, kv_requested=kv_requested, kv_cache_type=kvct, flash_attention=fa,
                  fa_mode=fa_mode, gpu_overhead=overhead, library=library, minimum=minimum,
                  new_estimates=new_estimates, sched_spread=sched_spread, warnings=warnings, labels=labels,
                  rc=release_candidate(s.engine_version))


# --backend's names (llama.cpp's) and the device ids oomkit gives (hardware/catalog.py) -> Ollama's library names
_BACKEND_LIBRARY = {"cuda": "cuda", "rocm": "rocm", "metal": "metal", "vulkan": "vulkan", "sycl": "oneapi",
                    "oneapi": "oneapi", "cpu": "cpu"}
_ID_LIBRARY = {"CUDA": "cuda", "ROCm": "rocm", "MTL": "metal", "Metal": "metal", "Vulkan": "vulkan", "SYCL": "oneapi"}


def _library(s: OllamaSettings, devices: tuple[Device, ...]) -> str:
    """The GPU library Ollama runs on: the one named (--backend), else the devices' own (an Apple chip is Metal,
    with its 512 MiB minimum; an AMD GPU ROCm), else CUDA; cpu without GPUs."""
    named = s.library.lower()
    if named and named not in _BACKEND_LIBRARY:
        raise OomkitError(f"unknown GPU library {s.library!r}: cuda, rocm, metal, vulkan, oneapi or cpu")
    head = devices[0].id.rstrip("0123456789") if devices else ""
    library = _BACKEND_LIBRARY.get(named) or _ID_LIBRARY.get(head, "cuda")
    return library if devices else "cpu"


def _num_ctx(spec: ModelSpec, devices: tuple[Device, ...], s: OllamaSettings, v: Version, env: dict[str, str],
             overhead: int, warnings: list[str], labels: list[str]) -> int:
    """num_ctx: request/Modelfile, else OLLAMA_CONTEXT_LENGTH (v0.5.13+), else the version's default; then
    gpt-oss's minimum and the clamp to the trained context."""
    num_ctx = s.num_ctx
    if num_ctx <= 0:
        env_ctx = env_uint(env, "OLLAMA_CONTEXT_LENGTH") if v >= V_CONTEXT_LENGTH_ENV else None
        if env_ctx:
            num_ctx = env_ctx
        else:
            num_ctx, note = default_num_ctx(v, devices, overhead)
            if note:
                labels.append(note)
    if spec.architecture in _GPT_OSS and V_GPTOSS_MIN_CTX <= v < V_CTX_VRAM_TIER:
        # server/routes.go scheduleRunner: "This model requires a minimum context" -> max(num_ctx, 8192); from
        # v0.11.4 only outside low-VRAM mode (total VRAM less OLLAMA_GPU_OVERHEAD under 20 GiB)
        total = total_vram(devices, overhead)
        low_vram = v >= V_GPTOSS_MIN_CTX_LOWVRAM and (total is not None and total < 20 * GiB)
        if not low_vram and num_ctx < 8192:
            warnings.append(f"Ollama raises num_ctx {num_ctx} to 8192 for gpt-oss (server/routes.go)")
            num_ctx = 8192
    num_ctx = max(num_ctx, 4)  # server/sched.go GetRunner: NumCtx < 4 -> 4
    train = spec.n_ctx_train
    if train and num_ctx > train and v >= V_CTX_CLAMP_TRAIN:
        # llm/server.go NewLlamaServer: "requested context size too large for model" -> n_ctx_train (v0.9.3+;
        # before, the runner got the context asked for: ollama/ollama#6448, nomic-embed-text at 8192 x 4, 0.3.6)
        warnings.append(f"num_ctx {num_ctx} > the model's trained context {train}: Ollama uses {train}")
        num_ctx = train
    return num_ctx


def _num_parallel(spec: ModelSpec, g: GgufView, s: OllamaSettings, v: Version, env: dict[str, str],
                  warnings: list[str]) -> int:
    """Parallel slots: the request, else OLLAMA_NUM_PARALLEL, else the version's default (0 = automatic)."""
    arch = spec.architecture
    if s.num_parallel > 0:
        num_parallel = s.num_parallel
    else:
        env_np = env_uint(env, "OLLAMA_NUM_PARALLEL")
        if env_np:
            num_parallel = env_np
        elif v >= V_PARALLEL_ONE or v < V_PARALLEL_AUTO:
            num_parallel = 1
        else:
            num_parallel = 0  # automatic: sched.go tries defaultParallel, then 1 (decided by fit below)
    if arch in union_until(_PARALLEL_ONE, v) and num_parallel != 1:
        warnings.append(f"Ollama runs {arch} with one parallel slot (server/sched.go: not safe with num_parallel > 1)")
        num_parallel = 1
    if g.is_embedding and v >= V_EMBED_PARALLEL_ONE and num_parallel != 1:
        num_parallel = 1  # server/sched.go load: embedding models always parallel 1
    return num_parallel


def _runner(spec: ModelSpec, v: Version, the_era: str, env: dict[str, str]) -> str:
    if spec.architecture == "mllama" and (the_era == "D" or v < V_MLLAMA):
        # mllama ran on Ollama's patched llama.cpp runner from v0.4.0 (llm/ggml.go GraphSize's mllama branch,
        # d07cf41a9), on its own engine from v0.7.0 (model/models/mllama, 23125648b); v0.30.0 (9db4bdbad, #16031:
        # "use llama-server exclusively for GGML models") deleted both, and mainline llama.cpp has no mllama
        why = ("predates Llama 3.2 Vision (mllama runs from Ollama 0.4.0)" if v < V_MLLAMA else
               "runs GGML models on llama-server only (v0.30.0 removed its own engine's model/models/mllama and the "
               "patched runner), and llama.cpp has no mllama architecture")
        last = max(r for r, _ in releases() if r < V_ERA_D)
        raise OomkitError(f"{spec.name}: Ollama {version_str(v)} {why}; use --engine-version "
                          f"{version_str(V_MLLAMA)} to {version_str(last)}")
    if the_era == "D":
        return "llama-server"
    arch = library_arch(spec)
    if _library_names(arch) & own_engine_archs(v):
        return "ollama"
    if env_bool(env, "OLLAMA_NEW_ENGINE") and arch in union_until(_REGISTERED, v):
        return "ollama"
    if arch in _OLLAMA_ONLY:
        # the library GGUF of an architecture only Ollama's converter writes: llama.cpp cannot load it
        raise OomkitError(f"{spec.name}: Ollama's library GGUF is its own conversion, architecture {arch}, which "
                          f"only the Ollama engine runs, from Ollama {version_str(_OLLAMA_ONLY[arch])}; "
                          f"{version_str(v)} cannot load it (use --engine-version {version_str(_OLLAMA_ONLY[arch])} "
                          "or newer)")
    return "llama"


def _runs_on_own_engine(spec: ModelSpec, v: Version) -> bool:
    """Whether Ollama `v` runs the model on its own engine by default (eras A-C, KV.OllamaEngineRequired)."""
    names = _library_names(library_arch(spec)) | _library_names(gguf_architecture(spec))
    return era(v) != "D" and bool(names & own_engine_archs(v))


def own_engine_archs(v: Version) -> set[str]:
    """fs/ggml/ggml.go KV.OllamaEngineRequired()'s list at release `v`."""
    return union_until(_OLLAMA_ENGINE, v) - _OLLAMA_ENGINE_DROPPED.get(v, set())


def _library_names(arch: str) -> set[str]:
    return {arch, _LIBRARY_ARCH.get(arch, arch)}


# Architectures Ollama's own patches add to the vendored llama.cpp's LLM_ARCH_NAMES before llama.cpp had them, from
# the first release carrying the patch: llm/patches/07-gemma.diff (v0.1.47), 0008-solar-pro.patch (v0.3.11),
# llama/patches/0010-add-mllama-support.patch (v0.4.0), 0021-gemma3-quantization.patch (v0.6.2),
# 0021-add-model-quantizations.patch (v0.6.5), 0032-llama-add-support-for-NVIDIA-Nemotron-Nano-3.patch (v0.13.4)
_PATCHED_ARCHS: dict[str, Version] = {"gemma2": (0, 1, 47), "solar": (0, 3, 11), "mllama": (0, 4, 0),
                                      "gemma3": (0, 6, 2), "mistral3": (0, 6, 5), "nemotron_h_moe": (0, 13, 4)}


def _runner_loads(arch: str, first: int, v: Version) -> bool:
    """Whether release `v`'s llama.cpp runner knows `arch` (first in llama.cpp build `first`): its build has it,
    or Ollama's patches add it (eras A-C: era D runs llama-server unpatched)."""
    patched = _PATCHED_ARCHS.get(arch)
    return runner_build(v) >= first or (patched is not None and v >= patched and era(v) != "D")


def check_architecture(spec: ModelSpec, v: Version, runner: str) -> None:
    """Refuse a release whose runner cannot load the model: the llama.cpp it runs (the vendored copy, eras A-C; its
    llama-server, era D) predates the architecture (llamacpp/first_builds.py) and its own engine does not run it.
    The answer names the first release that runs it, on either."""
    first = first_build(spec)
    if first is None or runner == "ollama" or _runner_loads(first[0], first[1], v):
        return
    arch, b, pr = first
    runs = [r for r, _ in releases() if r > v and (_runs_on_own_engine(spec, r) or _runner_loads(arch, b, r))]
    use = f"use --engine-version {version_str(min(runs))} or newer" if runs else "no Ollama release runs it yet"
    raise OomkitError(f"{spec.name}: Ollama {version_str(v)} runs llama.cpp b{runner_build(v)}, which has no {arch} "
                      f"architecture (added in b{b}, PR #{pr}), and its own engine does not run it; {use}")


def _attention_llama_server(spec: ModelSpec, v: Version, fa_env: bool | None,
                            kv_requested: str) -> tuple[bool, str, str]:
    """Era D -> (flash attention, its -fa mode, the KV cache type passed on)."""
    # llm/llama_server.go LlamaServerFlashAttention: on/off only when the user set it, else auto
    fa_mode = "auto" if fa_env is None else ("on" if fa_env else "off")
    kvct = kv_requested
    if kvct and spec.architecture in _GPT_OSS and kvct not in ("f16", "f32", "bf16"):
        # the guard in GGML.SupportsKVCacheType lost its callers; the type reaches llama-server unchecked
        raise OomkitError(f"gpt-oss with OLLAMA_KV_CACHE_TYPE={kvct}: Ollama {version_str(v)} passes "
                          f"--cache-type-k/v {kvct} to llama-server, which aborts (attention sinks do not "
                          "support a quantized KV cache; ollama#16946, fix proposed in ollama#16955). "
                          "Unset OLLAMA_KV_CACHE_TYPE for gpt-oss")
    return fa_mode != "off", fa_mode, kvct


def _attention_runner(spec: ModelSpec, g: GgufView, v: Version, fa_env: bool | None, kv_requested: str,
                      warnings: list[str], runner: str = "llama") -> tuple[bool, str, str]:
    """Eras A-C -> (flash attention as the estimate takes it, "on" | "off" | "auto", the KV cache type the runner
    gets: "" = f16)."""
    arch = spec.architecture
    if runner == "llama" and v >= V_FA_AUTO_LLAMA and fa_env is None:
        # llm/server.go NewLlamaServer (v0.13.4+, the llama runner, OLLAMA_FLASH_ATTENTION unset):
        # loadRequest.FlashAttention = ml.FlashAttentionAuto; fs/ggml GraphSize sizes the estimate's graph with
        # flash attention only for FlashAttentionEnabled, and a quantized OLLAMA_KV_CACHE_TYPE (KVCacheTypeIsQuantized:
        # not "", f16, f32, bf16) is dropped ("OLLAMA_FLASH_ATTENTION must be enabled to use a quantized
        # OLLAMA_KV_CACHE_TYPE"), an unquantized one kept only where SupportsKVCacheType (q8_0, q4_0) holds, i.e.
        # never; the runner's llama.cpp resolves auto itself (layout._runner_settings passes it on)
        if kv_requested in ("f32", "bf16"):
            warnings.append(f"OLLAMA_KV_CACHE_TYPE={kv_requested} not supported by Ollama (q8_0, q4_0): f16 used "
                            "(llm/server.go: unsupported OLLAMA_KV_CACHE_TYPE)")
        elif kv_requested and kv_requested != "f16":
            warnings.append(f"OLLAMA_KV_CACHE_TYPE={kv_requested} needs OLLAMA_FLASH_ATTENTION set to 1: the llama "
                            "runner's flash attention is on auto and the KV cache stays f16 (llm/server.go)")
        return False, "auto", ""
    default_on = library_arch(spec) in _fa_default_archs(v)
    wanted = default_on if fa_env is None else fa_env
    supported = supports_flash_attention(spec, g, v)
    # llm/server.go: envconfig.FlashAttention(f.FlashAttention()) && ml.FlashAttentionSupported(gpus) &&
    # f.SupportsFlashAttention(); every GPU library oomkit knows supports it (CUDA needs compute 7.0+)
    fa = bool(wanted) and supported
    if wanted and not supported:
        warnings.append("flash attention requested but not supported by this model (Ollama turns it off)")
    kvct = ""
    if v < V_KV_QUANT:
        if kv_requested and kv_requested != "f16":
            warnings.append(f"OLLAMA_KV_CACHE_TYPE={kv_requested} has no effect before Ollama 0.5.0")
    elif fa:
        supported = kv_requested in ("", "f16", "q8_0", "q4_0")
        if arch in _GPT_OSS and V_GPTOSS_NO_QKV <= v < V_GPTOSS_QKV_BACK and kv_requested not in ("", "f16"):
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
    return fa, "on" if fa else "off", kvct
