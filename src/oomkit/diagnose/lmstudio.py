"""The fix in LM Studio's words: a llama.cpp failure read from an LM Studio log (its llama.cpp runtime, `lms`, the
app's log or dialog) gets its fixes as LM Studio offers them, never as llama-server flags its users cannot type.

What LM Studio offers (checked against its own sources):
- `lms load <model>` takes `--gpu <offload-ratio>` ("off", "max" or a fraction 0-1 of the layers),
  `-c, --context-length <length>` and `--parallel <count>` (lmstudio-ai/lms src/subcommands/load.ts, commander
  options, 07b7252 2026-08; --parallel from 2026-01, -c from 2025-11), and `--estimate-only` (its memory estimate
  without loading). It has no flag for the KV cache type, flash attention, the batch or the KV cache's placement.
- the app's load settings, by the titles of lmstudio-ai/localization en/config.json (a15da90, 2026-07):
  llm.load.contextLength "Context Length", llm.load.llama.acceleration.offloadRatio "GPU Offload" (layers on the
  GPU), llm.load.llama.flashAttention "Flash Attention", llm.load.llama.kCacheQuantizationType / vCacheQuantizationType
  "K Cache Quantization Type" / "V Cache Quantization Type" (V needs Flash Attention), llm.load.offloadKVCacheToGpu
  "Offload KV Cache to GPU Memory", llm.load.numParallelSessions "Max Concurrent Predictions",
  llm.load.llama.evalBatchSize "Evaluation Batch Size", llm.load.numCpuExpertLayersRatio "Number of layers for which
  to force MoE weights onto CPU", llm.load.llama.autoFit "Automatic Optimize Based on Hardware" (llama.cpp's fit),
  llm.load.splitStrategy / mainGpu "Split Strategy" / "Main GPU", llm.load.llama.tryMmap "Try mmap()".
"""

from __future__ import annotations

import math
import re
from typing import Any

from .result import Diagnosis, Fix

CTX, GPU, FA = "Context Length", "GPU Offload", "Flash Attention"
KQ, VQ = "K Cache Quantization Type", "V Cache Quantization Type"
KV_GPU, PAR, BATCH = "Offload KV Cache to GPU Memory", "Max Concurrent Predictions", "Evaluation Batch Size"
MOE, FIT = "Number of layers for which to force MoE weights onto CPU", "Automatic Optimize Based on Hardware"

# llama.cpp's flags in a fix's words -> LM Studio's settings, in order (the longer forms first)
_WORDS: tuple[tuple[str, str], ...] = (
    (r"-ctk (\S+) -ctv (\S+) -fa on", rf"{KQ} \1 and {VQ} \2 with {FA} on"),
    (r"-ctk (\S+) -ctv (\S+)", rf"{KQ} \1 and {VQ} \2"),
    (r"\(or --fit on\)", f"(or {FIT})"),
    (r"; or --fit on to let llama\.cpp choose", f"; or {FIT} to let llama.cpp choose"),
    (r"--fit on", f"{FIT} on"),
    (r"--n-cpu-moe N / --cpu-moe", MOE),
    (r"--n-cpu-moe|--cpu-moe", MOE),
    (r"rebalance -ts", "Split Strategy / Main GPU"),
    (r"-ts\b", "Split Strategy"),
    (r"-sm row", "Split Strategy"),
    (r"--no-mmap / --mmap|--mmap / --no-mmap|--no-mmap|--mmap", "Try mmap()"),
    (r"\(llama\.cpp -ub / -b\)|\(llama\.cpp -[a-z]{1,4}\)", ""),
    (r"-ub / -b|-b / -ub", BATCH),
    (r"-u?b (\d+)", rf"{BATCH} \1"),
    (r"-u?b\b", BATCH),
    (r"-c (\d+)", rf"{CTX} \1"),
    (r"-c\b", CTX),
    (r"-np (\d+)", rf"{PAR} \1"),
    (r"-np\b", PAR),
    (r"-ngl (\d+)", rf"{GPU} \1 layers"),
    (r"-ngl\b", GPU),
    (r"-fa on", f"{FA} on"),
    (r"-nkvo\b", f"{KV_GPU} off"),
)
_WORD_RES = tuple((re.compile(r"(?<![\w-])" + pat), rep) for pat, rep in _WORDS)
# a flag left after the translation is one LM Studio has no setting for (--cache-ram, -ot, --no-mmproj-offload ...)
_LEFT = re.compile(r"(?<![\w./<-])--?[a-z][a-z0-9-]*")
# the flags oomkit's llama.cpp fixes carry, read as values
_VALUED = {"-c": "ctx", "-np": "parallel", "-ngl": "ngl", "-ctk": "k", "-ctv": "v", "-fa": "fa", "-ub": "batch",
           "-b": "batch", "--n-cpu-moe": "moe"}
_SWITCHES = {"-nkvo": "nkvo", "--cpu-moe": "moe"}


def words(text: str) -> str:
    """A fix's llama.cpp flags in LM Studio's setting names."""
    for rx, rep in _WORD_RES:
        text = rx.sub(rep, text)
    return re.sub(r"  +", " ", text).strip()


def model_key(d: Diagnosis) -> str:
    """What `lms load` takes for the model the log names (a path under LM Studio's models folder, matched fuzzily),
    else a placeholder."""
    path = str(d.settings.get("model_path") or "")
    m = re.search(r"\.lmstudio[/\\]models[/\\](.+)$", path) or re.search(r"([^/\\]+\.gguf)$", path)
    if m:
        return m.group(1).replace("\\", "/")
    key = str(d.settings.get("model") or "")  # the `lms load` command's own model argument (reader.diagnose)
    return key if key and not re.search(r"[\s'\"]", key) else "<model>"


def gpu_ratio(layers: int, total: Any) -> str | None:
    """`lms load --gpu` for a number of layers on the GPU: off, max, or the share of the model's layers (floored to
    two places, so it never offloads more than asked); None without the model's layer count."""
    if layers <= 0:
        return "off"
    if not isinstance(total, int) or total <= 0:
        return None
    if layers >= total:
        return "max"
    return f"{math.floor(100 * layers / total) / 100:.2f}"


def _values(flags: tuple[str, ...]) -> dict[str, str] | None:
    out: dict[str, str] = {}
    i = 0
    while i < len(flags):
        f = flags[i]
        if f in _VALUED and i + 1 < len(flags):
            out[_VALUED[f]] = flags[i + 1]
            i += 2
        elif f in _SWITCHES:
            out[_SWITCHES[f]] = "on"
            i += 1
        else:
            return None  # a flag LM Studio has no setting for
    return out


def as_lmstudio(d: Diagnosis, fixes: list[Fix]) -> list[Fix]:
    """The fixes of a llama.cpp failure under LM Studio in LM Studio's words: the settings by their names in the app,
    `lms load` with the flags it has where one applies; a fix that needs a flag LM Studio lacks is left out."""
    key = model_key(d)
    out: list[Fix] = []
    seen: set[str] = set()
    for f in fixes:
        fx = _one(d, f, key)
        if fx is not None and fx.summary not in seen:
            seen.add(fx.summary)
            out.append(fx)
    return out


def _one(d: Diagnosis, f: Fix, key: str) -> Fix | None:
    if f.command and f.command.startswith("lms "):
        return f  # already LM Studio's (defaults, the wrapper's own rules)
    if f.env:
        return None  # another program's variables (Ollama's, PyTorch's)
    summary = words(f.summary)
    if _LEFT.search(summary):
        return None
    lms: list[str] = []
    app_only: list[str] = []
    if f.flags:
        v = _values(f.flags)
        if v is None:
            return None
        if "ctx" in v:
            lms += ["--context-length", v["ctx"]]
        if "parallel" in v:
            lms += ["--parallel", v["parallel"]]
        if "ngl" in v:
            ratio = gpu_ratio(int(v["ngl"]), d.settings.get("n_layers_total"))
            if ratio is None:  # the model's layer count is not in the text: the slider's layers, not a share
                summary += f" (the {GPU} slider; lms load --gpu takes a share of the layers, 0-1)"
            else:
                lms += ["--gpu", ratio]
        app_only += [name for k, name in (("k", KQ), ("v", VQ), ("fa", FA), ("batch", BATCH), ("nkvo", KV_GPU),
                                          ("moe", MOE)) if k in v]
    elif summary.startswith(f"{CTX} smaller") and d.numbers.get("n_ctx"):
        half = max(256, int(d.numbers["n_ctx"]) // 2 // 256 * 256)
        lms += ["--context-length", str(half)]
    command = f"lms load {key} {' '.join(lms)}" if lms else None
    if command:
        summary += f"; `{command}`"
    if app_only:
        summary += " (in the app's load settings: lms load has no flag for " \
                   + ("them)" if len(set(app_only)) > 1 else "it)")
    return Fix(summary=summary, flags=tuple(lms), command=command, saves_bytes=f.saves_bytes)


def defaults(d: Diagnosis) -> list[Fix]:
    """LM Studio's own settings for a stage, where llama.cpp's rules computed nothing: the names its app gives them and
    `lms load` where a flag exists."""
    key = model_key(d)
    n_ctx = d.numbers.get("n_ctx") or d.settings.get("n_ctx")
    ctx = f"{CTX} smaller (the KV cache is linear in it)"
    ctx_cmd = None
    if n_ctx:
        half = max(256, int(n_ctx) // 2 // 256 * 256)
        ctx = f"{CTX} {half} (from {n_ctx}): the KV cache is linear in it"
        ctx_cmd = f"lms load {key} --context-length {half}"
    by_stage: dict[str, list[Fix]] = {
        "weights": [Fix(summary=f"{GPU} lower (fewer layers on the GPU), or {FIT} on; `lms load {key} --gpu 0.5` "
                                "offloads half the layers", flags=("--gpu", "0.5"), command=f"lms load {key} --gpu 0.5"),
                    Fix(summary="a smaller quant of the model")],
        "kv_cache": [Fix(summary=ctx + (f"; `{ctx_cmd}`" if ctx_cmd else ""), command=ctx_cmd,
                         flags=("--context-length", ctx_cmd.rsplit(" ", 1)[1]) if ctx_cmd else ()),
                     Fix(summary=f"{KQ} and {VQ} q8_0 with {FA} on (the model's load settings in the app: lms load "
                                 "has no flag for them)"),
                     Fix(summary=f"{KV_GPU} off: the KV cache in RAM, not on the GPU")],
        "compute": [Fix(summary=f"{BATCH} 256 (from 512): the compute buffer scales with it"),
                    Fix(summary=f"{FA} on: no attention matrix in the compute buffer"),
                    Fix(summary=ctx + (f"; `{ctx_cmd}`" if ctx_cmd else ""), command=ctx_cmd)],
    }
    return by_stage.get(d.stage, [])
