"""The fix in the words of vLLM's Python API: a vLLM failure read from a script that builds `LLM(...)` gets the
keyword arguments that call takes, not `vllm serve`'s flags.

vllm/entrypoints/llm.py LLM.__init__(model, ..., **kwargs) builds EngineArgs(model=model, ..., **kwargs)
(vllm/engine/arg_utils.py), and EngineArgs.add_cli_args names each field's flag after it, its underscores dashed
(`max_model_len` is `--max-model-len`; a boolean switch `--enforce-eager` is `enforce_eager=True`, its negation
`--no-enable-chunked-prefill` `enable_chunked_prefill=False`), from vLLM 0.2 on. So `--max-model-len 13528` is
`max_model_len=13528` in the call."""

from __future__ import annotations

import dataclasses
import re

from .result import Fix

# a flag with its value as the fixes write them (a number, the placeholder N, a dtype word); a flag without one
# keeps its words ("--gpu-memory-utilization higher than 0.95")
_VALUE = r"[0-9][\w.]*|N\b|fp8\w*|auto|bfloat16|float16"
_FLAG = re.compile(rf"--([a-z][a-z0-9]*(?:-[a-z0-9]+)+)(?: ({_VALUE}))?")
# EngineArgs' boolean fields the fixes offer as bare switches
_SWITCHES = ("enforce-eager", "enable-chunked-prefill", "enable-prefix-caching")


def _kw(flag: str, value: str | None) -> str:
    if value is not None:
        return f"{flag.replace('-', '_')}={value}"
    if flag.startswith("no-") and flag[3:] in _SWITCHES:
        return f"{flag[3:].replace('-', '_')}=False"
    if flag in _SWITCHES:
        return f"{flag.replace('-', '_')}=True"
    return flag.replace("-", "_")


def _words(s: str) -> str:
    return _FLAG.sub(lambda m: _kw(m.group(1), m.group(2)), s)


def _flags(flags: tuple[str, ...]) -> tuple[str, ...]:
    out: list[str] = []
    i = 0
    while i < len(flags):
        f = flags[i]
        val = flags[i + 1] if i + 1 < len(flags) else None
        if f.startswith("--") and val is not None and not val.startswith("-"):
            out.append(_kw(f[2:], val))
            i += 2
        elif f.startswith("--"):
            out.append(_kw(f[2:], None))
            i += 1
        else:
            out.append(f)
            i += 1
    return tuple(out)


def as_vllm_python(fixes: list[Fix]) -> list[Fix]:
    """The fixes of a vLLM failure in a script using `LLM(...)` with that call's keyword arguments; a fix with no
    vLLM flag is kept as it is."""
    out: list[Fix] = []
    seen: set[str] = set()
    for f in fixes:
        fx = dataclasses.replace(f, summary=_words(f.summary), flags=_flags(f.flags))
        if fx.summary not in seen:
            seen.add(fx.summary)
            out.append(fx)
    return out
