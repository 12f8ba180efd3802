"""LM Studio's llama.cpp runtime versions as llama.cpp builds.

`lms load` runs LM Studio's own build of llama.cpp, its "llama.cpp runtime" ("CUDA 12 llama.cpp (Windows) v1.52.0",
"llama.cpp-win-x86_64-nvidia-cuda12-avx2@2.44.0" in `lms runtime ls` and LM Studio's logs). Its version is LM
Studio's, not llama.cpp's, so `--engine-version` takes it as `lmstudio-2.44.0` (or a bare `2.44.0` / `v2.44.0`
with an `lms load` command) and reads it as the llama.cpp build that runtime bundles, from
engines/data/lmstudio_runtimes.json: each row cites the public source that names the runtime's llama.cpp commit
(or its release tag, b10760 for 2.33.0).
A well-formed runtime version not in the table reads as the newest build oomkit models, with a warning
(settings.version_warning).

The runtime's major version also says how many predictions `lms load` runs at once (parallel_default): LM Studio
0.4 (2026-01-28) added parallel requests for runtimes from v2.0.0 on, 4 by default in one unified KV cache.
LM Studio's other load defaults that move memory: a 4096-token context (DEFAULT_CONTEXT) and GPU offload "max" as
llama.cpp gets it (offload_layers).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

from ...errors import OomkitError

_TABLE = Path(__file__).parent.parent / "data" / "lmstudio_runtimes.json"
# "lmstudio-2.44.0", "lm-studio-v1.52.0", "lms@2.44.0", "LMStudio 1.52.0": the prefix says it is LM Studio's
PREFIXED = re.compile(r"(?:lm-?studio|lms)[-@ ]?(.*)", re.IGNORECASE)
# a runtime's own version: LM Studio numbers them major.minor.patch (v1.39.0 ... v1.63.1, 2.x from 2026)
RUNTIME = re.compile(r"v?(\d{1,3})\.(\d{1,3})\.(\d{1,3})")


@lru_cache(maxsize=1)
def runtimes() -> dict[tuple[int, int, int], int]:
    """Runtime version -> the llama.cpp build it bundles (engines/data/lmstudio_runtimes.json)."""
    rows = json.loads(_TABLE.read_text(encoding="utf-8"))["runtimes"]
    return {_version(r["runtime"]): int(r["build"]) for r in rows}


def _version(text: str, typed: str | None = None) -> tuple[int, int, int]:
    m = RUNTIME.fullmatch(text.strip())
    if m is None:
        raise OomkitError(f"cannot read LM Studio llama.cpp runtime version {typed or text!r}: expected one such as "
                          "lmstudio-2.44.0 (the runtime's number in LM Studio's runtime list, `lms runtime ls`)")
    return (int(m[1]), int(m[2]), int(m[3]))


def runtime_version(text: str | None) -> tuple[int, int, int] | None:
    """`lmstudio-2.44.0` -> (2, 44, 0); None when the text names no LM Studio runtime; a malformed one after the
    prefix ("lmstudio-2.x") is an error."""
    if not text:
        return None
    m = PREFIXED.fullmatch(text.strip())
    return None if m is None else _version(m[1], text.strip())


def runtime_build(version: tuple[int, int, int]) -> int | None:
    """The llama.cpp build the runtime bundles, None when no public source in the table names it."""
    return runtimes().get(version)


def runtime_name(version: tuple[int, int, int]) -> str:
    return "v" + ".".join(map(str, version))


def known_range() -> str:
    known = sorted(runtimes())
    return f"{runtime_name(known[0])} to {runtime_name(known[-1])}"


# LM Studio 0.4's load defaults (lmstudio-ai/lmstudio-js packages/lms-kv-config/src/schema.ts llm.load):
# numParallelSessions ("Max Concurrent Predictions", `lms load --parallel`) 4 from c9cf2974 "Default 4 parallel"
# (2026-01-23; 1 when added in c6fab6ec, 2026-01-20) and useUnifiedKvCache true from 50b927d5 "Unified KV shall
# default to true" (2026-01-23), which lms load has no flag for; lmstudio.ai/docs/app/advanced/parallel-requests:
# "Please make sure your GGUF runtime is upgraded to llama.cpp v2.0.0 ... By default, Max Concurrent Predictions is
# set to 4". The runtime's log: "LlamaV4::load config: n_parallel=1 n_ctx=262144 kv_unified=true" (runtime 2.25.2,
# --parallel 1, lmstudio-bug-tracker#2262); by default "llama_kv_cache: size = 16384.00 MiB (262144 cells, 16 layers,
# 4/1 seqs)" and "llama_memory_recurrent: size = 598.50 MiB (4 cells, 64 layers, 4 seqs)" (Qwen3.6-27B at 262144,
# metal runtime v2.14.0, lmstudio-bug-tracker#1862): 4 sequences in 1 stream of n_ctx cells, a recurrent state each.
PARALLEL_FROM = (2, 0, 0)
PARALLEL_DEFAULT = 4


def parallel_default(engine_version: str | None) -> tuple[int, bool, bool]:
    """(predictions, unified KV cache, runtime named) that `lms load` runs without --parallel: 4 in one unified
    cache from runtime v2.0.0 (LM Studio 0.4), one before; the newest when the version names no LM Studio runtime
    (runtime named False, said as a note)."""
    runtime = runtime_version(engine_version) if engine_version else None
    if runtime is not None and runtime < PARALLEL_FROM:
        return 1, False, True
    return PARALLEL_DEFAULT, True, runtime is not None


# LM Studio's context when a load names none (`lms load` without -c/--context-length, the app's "Context Length" left
# at its default): 4096 tokens. LM Studio 0.3.2 (2024-09-02) "Reduced default context size from 8K to 4K tokens"
# (release notes, quoted in NixOS/nixpkgs#338943); LM Studio 0.4.19 (2026-07-18): "if I click Reset to Default, it
# resets to 4096" (lmstudio-bug-tracker#2174). lmstudio-ai/lms src/subcommands/load.ts (8bf2337, 2025-11-23) says
# only "If not provided, the default value will be used"; the SDK schema's own fallback (lmstudio-js
# packages/lms-kv-config/src/schema.ts llm.load contextLength, 2048, machineDependent) is replaced by the app's.
DEFAULT_CONTEXT = 4096

# GPU offload "max" (lms load --gpu max; llm.load.llama.acceleration.offloadRatio, "max" by default in lmstudio-js
# schema.ts) reaches llama.cpp as n_gpu_layers = 999999, a count set by the caller, so common_fit_params leaves the
# load alone: "common_fit_params: failed to fit params to free device memory: n_gpu_layers already set by user to
# 999999, abort" (LM Studio 0.4.18, gemma4-12b on an RX 9060 XT 16 GB, lmstudio-bug-tracker#2138, 2026-07-03).
# LM Studio's "Automatic Optimize Based on Hardware" (llm.load.llama.autoFit: "Let llama.cpp choose context and GPU
# placement at load time based on available memory", lmstudio-ai/localization en/config.json 840f3d4) came later:
# lmstudio-js 8c07c941 (#612, 2026-07-06) added the key, c5d591de (#614, the same day) turned it on by default, and
# LM Studio 0.4.21 loads 54 of 65 layers with GPU Offload at Max (lmstudio-bug-tracker#2312, 2026-08-22). A runtime
# before v2.0.0 belongs to LM Studio 0.3 / 0.4.0 (lmstudio-bug-tracker#1454: CUDA 12 runtime 1.104.2 under 0.4.0),
# long before AutoFit: its "max" is the fixed count. A 2.x runtime's number does not say whether the app around it
# has AutoFit (0.4.21 also runs v2.13.0, #2312), so from v2.0.0 (and when no runtime is named) llama.cpp keeps its
# own -ngl default and fits, as AutoFit lets it.
OFFLOAD_MAX_LAYERS = 999999
FIXED_OFFLOAD_BEFORE = (2, 0, 0)


# LM Studio's other llama.cpp load defaults (lmstudio-js packages/lms-kv-config/src/schema.ts llm.load.llama.*), kept
# as llama.cpp's own where no log shows the runtime doing otherwise: flashAttention false (since the schema's first
# commit 2b329f64, 2024-06-05; no longer "experimental" from f96a76f4, 2025-11-03), yet the app's Flash Attention on
# reaches llama.cpp as "flash_attn = auto" (lmstudio-bug-tracker#1454) and no stored log shows a load left at the
# default, so oomkit keeps llama.cpp's auto; K / V cache f16 (kCacheQuantizationType unchecked, f16: "K (f16) ...
# V (f16)" in #1454, 4096 bytes a cell in #1862); tryMmap true; offloadKVCacheToGpu true (05df1a22, 2025-05-05);
# physicalBatchSize 512 (eb417224, 2026-05-22; "n_ubatch = 512" in #1454 before it); evalBatchSize 512, 2048 from
# 625538a6 (2026-05-22); contextCheckpoints 32 (26177851, 2026-07-10: host memory oomkit does not count);
# autoFitMinContextLength 0 (c06098e4, 2026-07-15). AutoFit's own choice of context is in no stored GGUF log: a load
# keeps the context it names (DEFAULT_CONTEXT without -c).


def offload_layers(engine_version: str | None, n_gpu_layers: int) -> int:
    """The n_gpu_layers LM Studio hands llama.cpp for a load oomkit read as -1 (`--gpu max`, or no --gpu: the app's
    "max"): 999999 from a runtime before v2.0.0 (LM Studio before AutoFit: llama.cpp's fit aborts and every layer
    goes to the GPU), -1 from v2.0.0 or with no runtime named (llama.cpp places the layers, as AutoFit lets it).
    Any other count (--gpu off: 0) stays."""
    runtime = runtime_version(engine_version) if engine_version else None
    if n_gpu_layers == -1 and runtime is not None and runtime < FIXED_OFFLOAD_BEFORE:
        return OFFLOAD_MAX_LAYERS
    return n_gpu_layers


def as_runtime(text: str) -> str | None:
    """A bare runtime version typed for `lms load` ("2.44.0", "v2.44.0") -> "lmstudio-2.44.0"; else None."""
    m = RUNTIME.fullmatch(text.strip())
    return None if m is None else f"lmstudio-{m[1]}.{m[2]}.{m[3]}"
