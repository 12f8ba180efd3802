"""Ollama's options by its own names, the OLLAMA_* environment it reads, and its releases: the versions at which
its defaults, launch rules and memory arithmetic changed (first release carrying each change; ollama/ollama
commits cited), the llama.cpp build each release runs, and the era each release belongs to."""

from __future__ import annotations

import difflib
import json
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ...errors import OomkitError, SettingsError
from ...flags import INT32_MAX, Limit, go_uint
from ..versions import Version, parse_release, version_str

NEWEST = "0.32.15"
DEFAULT_GGUF_TYPE = "Q4_K_M"  # the ollama.com library's default quant for a bare tag (gpt-oss: MXFP4)
MAX_PARALLEL = 1024  # oomkit's ceiling on parallel sequences (llama.cpp's runner holds 256)
_RELEASES_JSON = Path(__file__).parent.parent / "data" / "ollama_releases.json"

# --- versions at which Ollama's defaults and launch rules changed (first release carrying the change) ---
V_POOLED_ESTIMATE_BUFFER = (0, 1, 38)  # llm/memory.go EstimateGPULayers: blk.0 as a buffer, num_gpu honoured
V_PER_GPU_ESTIMATE = (0, 1, 45)  # 6f351bf58..8e0641a9b: estimateGPULayers places layers GPU by GPU
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
V_BACKEND_LIBRARY_NAMES = (0, 12, 4)  # bc8909fb3 "Use runners for GPU discovery": library=CUDA/ROCm/Metal
V_ERA_C = (0, 12, 11)  # f560bd077: llm/memory.go removed
V_ERA_D = (0, 30, 0)  # 9db4bdbad: CGO runners removed, llama-server for every GGUF model
V_CTX_CLAMP_TRAIN = (0, 9, 3)  # 10a8e04a8 "avoid context overflow": num_ctx above n_ctx_train -> n_ctx_train
V_EMBED_PARALLEL_ONE = (0, 3, 7)  # 90ca84172 "Fix embeddings memory corruption" (#6467): server/sched.go
# processPending, "Embedding models should always be loaded with parallel=1" (a GGUF with <arch>.pooling_type lacks
# the completion capability), in every release from v0.3.7 (was 0.12.0): llama.cpp#9636 (0.3.6, nomic-embed-text
# at parallel=4, kv 96.0 MiB) before it, MemTensor/MemOS#103 (0.9.3-0.9.6, parallel=1, kv 6.0 MiB) after
V_GO_RUNNER = (0, 4, 0)  # b5d1677a4 "Remove llama.cpp submodule and shift new build to top": the Go runner
# (llama/runner/runner.go NewContextParams(kvSize, s.batchSize*s.parallel, ...)) replaces llm/ext_server, so
# n_batch = num_batch * parallel (ollama/ollama#8164, v0.4.0-v0.5.1 on 4 slots: n_batch = 2048)
V_GPTOSS_MIN_CTX = (0, 11, 0)  # fa7776fd2: gpt-oss num_ctx at least 8192 ...
V_GPTOSS_MIN_CTX_LOWVRAM = (0, 11, 4)  # ... except in low-VRAM mode (< 20 GiB), until 0334ffa62 (v0.15.5)

# --- versions at which Ollama's own arithmetic changed (first release that has the change; git tag --contains) ---
V_ASYM_KV = (0, 1, 45)  # 8e0641a9b "handle asymmetric embedding KVs": KV from key_length / value_length (before:
# n_embd / n_head for K and V alike, llm/memory.go EstimateGPULayers)
V_DEEPSEEK2_GRAPH = (0, 1, 45)  # e873841cb "deepseek v2 graph": GraphSize's deepseek2 branch (before: none)
# GraphSize branches that came after their architecture could run: before them the model takes estimateGPULayers'
# default graph, partial = full = GQA() x KV / 6 (llm/memory.go)
V_STABLELM_GRAPH = (0, 1, 33)  # 3cf483fe4 "add stablelm graph calculation"
V_GEMMA2_GRAPH = (0, 1, 48)  # de2163daf "gemma2 graph": `case "gemma", "gemma2"` (before: "gemma" only)
V_CHATGLM_GRAPH = (0, 2, 2)  # 5a739ff4c "chatglm graph" (llama.cpp's chatglm from b3333, in Ollama's v0.2.0/v0.2.1)
V_LLAMA_VOCAB_GRAPH = (0, 3, 10)  # 2003d6015 "llama3.1 memory": llama full graph gains max(.., 4b(e+V))
V_GPU_OVERHEAD = (0, 3, 10)  # b05c9e83d: OLLAMA_GPU_OVERHEAD
V_PROJECTOR_LOGGED = (0, 4, 0)  # c7cb0f060: llm/memory.go log() prints projector.weights / projector.graph
V_OFFLOAD_LOGVALUE = (0, 5, 12)  # 58245413f: slog.Info("offload", "", estimate) with MemoryEstimate.LogValue
# (library= first, projector.* last); v0.1.45-v0.5.11 printed msg="offload to <library>" (7784ca33c), the
# projector group first
V_KV_REFACTOR = (0, 4, 0)  # d07cf41a9: GraphSize returns kv (with mllama cross-attention)
# d07cf41a9 and 8c238e70a ("mllama cross attention", GraphSize's mllama branch) were first tagged in v0.4.0-rc7:
# v0.4.0-rc0 to -rc6 size mllama with the generic llm/memory.go KV (2 B x context x block_count x (K + V) x
# headsKV, the cross-attention layers as self-attention ones) and no graph formula (h/hkv x kv / 6)
RC_MLLAMA_GRAPH = (V_KV_REFACTOR, 7)
V_KV_QUANT = (0, 5, 0)  # 1bdab9fdb: OLLAMA_KV_CACHE_TYPE, kvCacheBytesPerElement
V_VISION_GRAPH = (0, 6, 0)  # gemma3 support: fs/ggml VisionGraphSize, the projector inside the model GGUF
V_WEIGHTS_NO_KV = (0, 6, 1)  # 033cec232: memory.weights.* stop counting each layer's KV
V_PER_LAYER_KV = (0, 6, 3)  # f66216e39: per-layer KV (gemma3 sliding window), weights.total gains the output
V_MAX_LAYER_BUFFER = (0, 7, 0)  # 0478d440f: buffer = largest layer, layers placed last to first
V_UNASSIGNED_TRACKED = (0, 7, 1)  # a2cc8571c: a projector no GPU holds counts in the total (overflow)
V_PROJECTOR_LAST_LAYER = (0, 7, 1)  # d75557747: the Ollama-engine projector goes with the output layer
V_BLK0_BUFFER_AGAIN = (0, 7, 1)  # 3fe74fba4: buffer back to blk.0 (placement order stays reversed)
V_GEMMA3N_X4 = (0, 9, 3)  # ba0490267: gemma3n graph x4
V_GPTOSS = (0, 11, 0)  # fa7776fd2 gpt-oss: its own KV (4096-token SWA memory) and graph
V_GPTOSS_PARTIAL_EQ_FULL = (0, 11, 3)  # fcec04bf4 "gptoss: fix memory calc"
V_GPTOSS_PARTIAL_ONLY = (0, 11, 5)  # 1a19df1f3: partial = 2 h/hkv kvTotal/6, full = partial
V_GPTOSS_FA_GRAPH = (0, 11, 8)  # 85ccf7354: with flash attention (4 np + ctx>>10 + 110) MiB
V_RECURRENT = (0, 11, 11)  # 7b91c9ce5 "Hybrid and recurrent memory estimates" (PR #12186)
V_CTX_INSIDE_GRAPHSIZE = (0, 10, 0)  # context *= numParallel moved into GraphSize; batch = min(num_ctx, num_batch)
# Ollama engine KV cache (kvcache/causal.go)
V_CAUSAL_SWA = (0, 6, 3)  # per-sequence capacity, sliding-window layers sized np*window + batch
V_SWA_MEM = (0, 11, 0)  # 4183bb057: SWA memory size (NewSWAMemCache), "> capacity" -> full
V_SWA_EXTRA_TOKEN = (0, 12, 4)  # 1fc35f126: +1 token with parallel sequences, ">= capacity" -> full
V_CACHE_PAD_256 = (0, 13, 2)  # 7837a5bc7 "ggml: Always set cache padding to 256" (32 without FA before)

# The llama.cpp build each Ollama release runs. Eras A-C: the vendored copy, Makefile.sync FETCH_HEAD of the tag,
# whose build number is that commit's count on llama.cpp's master (git rev-list --count): v0.5.8 46e3556e0 = 4419,
# v0.5.13 d7cfe1ffe = 4779, v0.6.6 71e90e881 = 5125, v0.6.7 2016f07bd = 5162, v0.6.8 e1e8e0991 = 5237, v0.7.0
# de4c07f93 = 5359, v0.11.5 e54d41bef = 6121, v0.12.4 364a7a6d4 = 6646, v0.12.6 7049736b2 = 6752, v0.12.11
# 3cfa9c3f1 = 6840, v0.13.2 7f8ef50cc = 7209, v0.13.3 17f7f4baa = 7345, v0.13.5 ec98e2002 = 7437 (to v0.30). Before
# v0.4.0 the git submodule's commit (`git ls-tree vX llm/llama.cpp`, llm/llama.cpp/gguf before v0.1.18): v0.0.19
# 53885d725 = 1115, v0.0.20 bc9d3e397 = 1267, v0.1.4 9e70cc032 = 1412, v0.1.12 9656026b5 = 1568, v0.1.14 23b5e12eb =
# 1610, v0.1.16 948ff137e = 1634, v0.1.17 a7aee47b9 = 1661, v0.1.18 328b83de2 = 1662, v0.1.21 cd4fddb29 = 1964,
# v0.1.23 d2f650cb5 = 1999, v0.1.24 f57fadc00 = 2081, v0.1.25 6c00a0669 = 2145, v0.1.26 c14f72db9 = 2225, v0.1.27
# 96633eeca = 2248, v0.1.28 c29af7e22 = 2308, v0.1.29 ceca1aef0 = 2356, v0.1.30 ad3a0505e = 2527, v0.1.32 7593639ce
# = 2679, v0.1.33 952d03dbe = 2770, v0.1.39 74f33adf5 = 2986, v0.1.40 5921b8f08 = 3051, v0.1.45 7c26775ad = 3171,
# v0.2.0 a8db2a9ce = 3337, v0.2.8 d94c6e0cc = 3440, v0.3.1 6eeaeba12 = 3485, v0.3.4 1e6f6554a = 3535, v0.3.10
# 8962422b1 = 3661, v0.3.14 3f1ae2e32 = 3862; from v0.4.0 llama/vendoring's (llama/Makefile's) LLAMACPP_BASE_COMMIT:
# v0.4.0 3f1ae2e32 = 3862, v0.5.2 40c6d79fb = 4260, v0.5.3 ba1cb19cd = 4327, v0.5.5 46e3556e0 = 4419. Era D:
# LLAMA_CPP_VERSION of each tag.
_RUNNER_BUILD = (
    ((0, 0, 0), 1115), ((0, 0, 20), 1267), ((0, 1, 4), 1412), ((0, 1, 12), 1568), ((0, 1, 14), 1610),
    ((0, 1, 16), 1634), ((0, 1, 17), 1661), ((0, 1, 18), 1662), ((0, 1, 21), 1964), ((0, 1, 23), 1999),
    ((0, 1, 24), 2081), ((0, 1, 25), 2145), ((0, 1, 26), 2225), ((0, 1, 27), 2248), ((0, 1, 28), 2308),
    ((0, 1, 29), 2356), ((0, 1, 30), 2527), ((0, 1, 32), 2679), ((0, 1, 33), 2770), ((0, 1, 39), 2986),
    ((0, 1, 40), 3051), ((0, 1, 45), 3171), ((0, 2, 0), 3337), ((0, 2, 8), 3440), ((0, 3, 1), 3485),
    ((0, 3, 4), 3535), ((0, 3, 10), 3661), ((0, 3, 14), 3862), ((0, 5, 2), 4260), ((0, 5, 3), 4327),
    ((0, 5, 5), 4419), ((0, 5, 13), 4779), ((0, 6, 6), 5125), ((0, 6, 7), 5162),
    ((0, 6, 8), 5237), ((0, 7, 0), 5359), ((0, 11, 5), 6121), ((0, 12, 4), 6646), ((0, 12, 6), 6752),
    ((0, 12, 11), 6840), ((0, 13, 2), 7209), ((0, 13, 3), 7345), ((0, 13, 5), 7437),
    ((0, 30, 0), 9452), ((0, 30, 1), 9479), ((0, 30, 4), 9493), ((0, 30, 5), 9509), ((0, 30, 9), 9626),
    ((0, 30, 10), 9672), ((0, 30, 11), 9781), ((0, 31, 0), 9840), ((0, 31, 2), 9888), ((0, 32, 2), 10069),
    ((0, 32, 3), 10091), ((0, 32, 6), 10242), ((0, 32, 8), 10353), ((0, 32, 10), 10380), ((0, 32, 14), 10434),
    ((0, 32, 15), 10488),
)


def parse_version(v: str | None) -> Version:
    """"0.12.10", "v0.30.1", "0.6.0-rc1" -> (major, minor, patch); None / newest / latest -> NEWEST."""
    return parse_release(v, NEWEST, "Ollama", "a release such as 0.12.10 or 0.30.1", tail=r"(?:-[\w.]+)?")


def release_candidate(v: str | None) -> int | None:
    """"0.4.0-rc6" -> 6; None for a final release (or none named)."""
    m = re.search(r"-rc(\d+)$", str(v or "").strip())
    return int(m.group(1)) if m else None


def before_candidate(v: Version, rc: int | None, first: tuple[Version, int]) -> bool:
    """True for a release candidate of first[0] older than -rc{first[1]}, the first tag with a change that landed
    during that release's candidates (parse_version reads every -rcN as its release)."""
    return rc is not None and v == first[0] and rc < first[1]


@lru_cache(maxsize=1)
def releases() -> tuple[tuple[Version, str], ...]:
    """(version, tag date) of every Ollama release (engines/data/ollama_releases.json, from the git tags)."""
    data = json.loads(_RELEASES_JSON.read_text(encoding="utf-8"))
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


def by_version(table, v: Version):
    """The value of the last (since, value) row `v` has reached."""
    out = None
    for since, value in table:
        if v >= since:
            out = value
    return out


def union_until(table, v: Version) -> set[str]:
    """Every name of the (since, names) rows `v` has reached."""
    out: set[str] = set()
    for since, names in table:
        if v >= since:
            out |= names
    return out


def runner_build(v: Version) -> int:
    return by_version(_RUNNER_BUILD, v)


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
NEUTRAL = {"ctx": "num_ctx", "parallel": "num_parallel", "kv_type": "kv_cache_type", "engine_version": "engine_version",
           "backend": "library"}


@dataclass(frozen=True)
class OllamaSettings:
    """Ollama's options by its own names. 0 / "" / -1 mean "not set": the OLLAMA_* environment in `env`, then
    the default of `engine_version`, applies (resolved in `estimate`, where the GPUs are known)."""

    PROGRAM = "Ollama"  # class attributes, not fields (no annotation)
    # What Ollama accepts, held by flags.check_settings (flags and API arguments alike): Modelfile parameters are
    # Go ints (api.FormatParams: strconv.ParseInt), the server variables uints (envconfig.Uint); a negative
    # count is no option of Ollama's. Upper bounds where Ollama has none: oomkit's (1,024 parallel sequences).
    LIMITS = {
        "num_ctx": Limit(0, INT32_MAX, "--num-ctx", allowed=f"0 (not set) or a positive count up to {INT32_MAX:,}"),
        "num_parallel": Limit(0, MAX_PARALLEL, "--num-parallel", allowed="0 (not set) or 1 to 1024"),
        "gpu_overhead": Limit(0, (1 << 64) - 1, "--gpu-overhead", special=(-1,), allowed="bytes from 0 up"),
        "num_gpu": Limit(0, INT32_MAX, "--num-gpu", special=(-1,), allowed="-1 (Ollama decides) or 0 layers and up"),
        "num_batch": Limit(0, INT32_MAX, "--num-batch", allowed="0 (the default) or a positive count"),
    }

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


def env_var(env: dict[str, str], key: str) -> str:
    """envconfig.Var: the value stripped of surrounding spaces and quotes."""
    return env.get(key, "").strip().strip("\"'")


def env_bool(env: dict[str, str], key: str) -> bool | None:
    """envconfig.BoolWithDefault: unset -> None; strconv.ParseBool, and any unparsable value means true."""
    s = env_var(env, key)
    if not s:
        return None
    low = s.lower()
    if s in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if s in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    return low not in ("false", "0")


def env_uint(env: dict[str, str], key: str) -> int | None:
    """envconfig.Uint / Uint64: strconv.ParseUint(s, 10, 64) (ASCII digits only: "²", "-1", "1e99", "nan" fail),
    else the default (None here); Ollama logs "invalid environment variable, using default" (env_warnings)."""
    s = env_var(env, key)
    if not s:
        return None
    return go_uint(s)


UINT_VARIABLES = ("OLLAMA_CONTEXT_LENGTH", "OLLAMA_NUM_PARALLEL", "OLLAMA_GPU_OVERHEAD")


# Every OLLAMA_* variable an Ollama release reads: envconfig/config.go through its history (v0.1 to v0.33) and the
# other packages' os.Getenv calls. One outside it (OLLAMA_FLASH_ATTN, OLLAMA_NUM_GPU, OLLAMA_NUM_CTX: a Modelfile
# parameter's name, not a variable) changes nothing, which the estimate says rather than the user believing it.
_OLLAMA_VARIABLES = frozenset({
    "OLLAMA_AUTH", "OLLAMA_CONTEXT_LENGTH", "OLLAMA_DEBUG", "OLLAMA_DEBUG_LOG_REQUESTS", "OLLAMA_EDITOR",
    "OLLAMA_FLASH_ATTENTION", "OLLAMA_GO_TEMPLATE", "OLLAMA_GPU_OVERHEAD", "OLLAMA_HOST", "OLLAMA_IGPU_ENABLE",
    "OLLAMA_INTEL_GPU", "OLLAMA_KEEP_ALIVE", "OLLAMA_KV_CACHE_TYPE", "OLLAMA_LLM_LIBRARY", "OLLAMA_LOAD_TIMEOUT",
    "OLLAMA_MAX_LOADED_MODELS", "OLLAMA_MAX_QUEUE", "OLLAMA_MAX_TRANSFER_STREAMS", "OLLAMA_MAX_VRAM", "OLLAMA_MODELS",
    "OLLAMA_MULTIUSER_CACHE", "OLLAMA_NEW_ENGINE", "OLLAMA_NEW_ESTIMATES", "OLLAMA_NOHISTORY", "OLLAMA_NOPRUNE",
    "OLLAMA_NO_CLOUD", "OLLAMA_NUM_PARALLEL", "OLLAMA_ORIGINS", "OLLAMA_REMOTES", "OLLAMA_RUNNERS_DIR",
    "OLLAMA_SCHED_SPREAD", "OLLAMA_TMPDIR", "OLLAMA_VULKAN", "OLLAMA_API_KEY", "OLLAMA_LIBRARY_PATH",
    "OLLAMA_LLAMA_CPP_COMPAT", "OLLAMA_EXPERIMENT", "OLLAMA_CLOUD_BASE_URL", "OLLAMA_DOT_COM_URL", "OLLAMA_CORS",
    "OLLAMA_APP_DB_PATH", "OLLAMA_BIN", "OLLAMA_PLATFORM", "OLLAMA_SKILLS", "OLLAMA_WEBSEARCH",
    "OLLAMA_AGENT_DISABLE_SHELL", "OLLAMA_AGENT_DISABLE_WEBSEARCH",
})


def unread_variable_warnings(env: dict[str, str]) -> list[str]:
    """The OLLAMA_* variables no Ollama release reads (a typo, a Modelfile parameter's name): they change nothing,
    and the estimate says so; and OLLAMA_LLM_LIBRARY, which bypasses the GPU detection (envconfig.LLMLibrary) in a
    way oomkit does not model."""
    out = []
    for key in sorted(env):
        if key.startswith("OLLAMA_") and key not in _OLLAMA_VARIABLES:
            param = key[len("OLLAMA_"):].lower()
            if param in ("num_ctx", "num_gpu", "num_batch", "num_thread", "num_predict", "num_keep"):
                said = f" ({param} is a model parameter: PARAMETER {param} in a Modelfile, or options.{param} in a request)"
            else:
                near = difflib.get_close_matches(key, sorted(_OLLAMA_VARIABLES), 1, 0.8)
                said = f" (did you mean {near[0]}?)" if near else ""
            out.append(f"{key}: no Ollama release reads this variable, so it changes nothing{said}")
    if library := env_var(env, "OLLAMA_LLM_LIBRARY"):
        out.append(f"not counted in this estimate, although it changes memory: OLLAMA_LLM_LIBRARY={library[:30]} "
                   "(the runner library Ollama is forced to, bypassing its GPU detection)")
    return out


def env_warnings(env: dict[str, str]) -> list[str]:
    """What Ollama's log says of the numeric variables it cannot read: it carries on with the default, so the
    estimate does too, and says so; and the variables it does not read at all."""
    out = unread_variable_warnings(env)
    parallel = go_uint(env_var(env, "OLLAMA_NUM_PARALLEL"))
    if parallel is not None and parallel > MAX_PARALLEL:
        # Go's int(uint) wraps values from 2^63 to negative ones, and no runner holds this many sequences
        # (llama.cpp: LLAMA_MAX_SEQ 256): no estimate to give
        raise SettingsError(f"OLLAMA_NUM_PARALLEL={parallel}: out of range; oomkit takes 0 (not set) to {MAX_PARALLEL}")
    for key in UINT_VARIABLES:
        s = env_var(env, key)
        if s and go_uint(s) is None:
            shown = s if len(s) <= 30 else s[:27] + "..."
            out.append(f"{key}={shown!r} is not an unsigned integer: Ollama logs \"invalid environment variable, "
                       "using default\" and uses its default (envconfig.Uint)")
    return out
