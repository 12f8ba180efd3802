"""The fix in LLaMA-Factory's words: a vLLM failure read from a LLaMA-Factory run (`llamafactory-cli api|chat|webchat
--infer_backend vllm`, its YAML config, its modules in a traceback) gets the arguments LLaMA-Factory takes, not
`vllm serve`'s flags, which its CLI refuses.

What LLaMA-Factory passes to vLLM (chat/vllm_engine.py VllmEngine.__init__, v0.9.1 to v0.9.4): max_model_len =
--vllm_maxlen (default 4096), gpu_memory_utilization = --vllm_gpu_util (default 0.9 to v0.9.2, 0.7 from v0.9.3),
enforce_eager = --vllm_enforce_eager, tensor_parallel_size = the number of visible GPUs (get_device_count()), then
every key of --vllm_config (a JSON object of vLLM's EngineArgs names, v0.9.1+) over them. A model's config.json
max_position_embeddings does not change the length: --vllm_maxlen is passed as max_model_len whatever it says."""

from __future__ import annotations

import dataclasses
import re

from .result import Fix

# vLLM's flags -> LLaMA-Factory's own arguments for them
_FLAGS = {"--max-model-len": "--vllm_maxlen", "--gpu-memory-utilization": "--vllm_gpu_util",
          "--enforce-eager": "--vllm_enforce_eager"}
# vLLM flags LLaMA-Factory has no argument of its own for: --vllm_config takes EngineArgs' names as JSON
_CONFIG_KEYS = ("kv-cache-dtype", "max-num-seqs", "max-num-batched-tokens", "cpu-offload-gb")
_TP_N = re.compile(r"--tensor-parallel-size (\d+)")
_TP = re.compile(r"--tensor-parallel-size N\b|--tensor-parallel-size\b")
_WORDS = tuple((re.compile(re.escape(flag) + r"\b"), word) for flag, word in _FLAGS.items())
_CONFIG_N = re.compile(rf"--({'|'.join(_CONFIG_KEYS)}) ([\w.]+)")
_CONFIG = re.compile(rf"--({'|'.join(_CONFIG_KEYS)})\b")


def _json_value(v: str) -> str:
    return v if re.fullmatch(r"[0-9.]+", v) else f'"{v}"'


def _gpus(n: int) -> str:
    return ",".join(str(i) for i in range(n))


def _words(s: str) -> str:
    s = _TP_N.sub(lambda m: f"CUDA_VISIBLE_DEVICES={_gpus(int(m.group(1)))} ({m.group(1)} GPUs: LLaMA-Factory runs "
                            "vLLM with tensor_parallel_size = the visible GPU count)", s)
    s = _TP.sub("more GPUs in CUDA_VISIBLE_DEVICES (LLaMA-Factory's tensor_parallel_size is the visible GPU count)", s)
    for rx, word in _WORDS:
        s = rx.sub(word, s)
    s = _CONFIG_N.sub(lambda m: f"--vllm_config '{{\"{m.group(1).replace('-', '_')}\": "
                                f"{_json_value(m.group(2))}}}'", s)
    return _CONFIG.sub(lambda m: f"--vllm_config '{{\"{m.group(1).replace('-', '_')}\": ...}}'", s)


def _flags(flags: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    out: list[str] = []
    env: list[tuple[str, str]] = []
    config: dict[str, str] = {}
    i = 0
    while i < len(flags):
        f = flags[i]
        val = flags[i + 1] if i + 1 < len(flags) else None
        if f == "--tensor-parallel-size" and val and val.isdigit():
            env.append(("CUDA_VISIBLE_DEVICES", _gpus(int(val))))
            i += 2
        elif f in _FLAGS:
            out.append(_FLAGS[f])
            i += 1
        elif f.lstrip("-") in _CONFIG_KEYS and val:
            config[f.lstrip("-").replace("-", "_")] = _json_value(val)
            i += 2
        else:
            out.append(f)
            i += 1
    if config:
        out += ["--vllm_config", "{" + ", ".join(f'"{k}": {v}' for k, v in config.items()) + "}"]
    return tuple(out), tuple(env)


def as_llamafactory(fixes: list[Fix]) -> list[Fix]:
    """The fixes of a vLLM failure under LLaMA-Factory with LLaMA-Factory's arguments; a fix with no vLLM flag is
    kept as it is."""
    out: list[Fix] = []
    seen: set[str] = set()
    for f in fixes:
        flags, env = _flags(f.flags)
        fx = dataclasses.replace(f, summary=_words(f.summary), flags=flags, env=(*f.env, *env))
        if fx.summary not in seen:
            seen.add(fx.summary)
            out.append(fx)
    return out
