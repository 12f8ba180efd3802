"""The fix in KoboldCpp's words: a llama.cpp failure read from a KoboldCpp log (gpttype_load_model, its banner) gets
the flags KoboldCpp takes, which are mostly llama.cpp's spellings as aliases.

What KoboldCpp takes (koboldcpp.py argparse, 1.10x): -c / --contextsize, -ngl / --gpulayers, -ts / --tensor_split,
-nkvo / --lowvram, --n-cpu-moe / --moecpu, -ot / --overridetensors, --no-mmproj-offload / --mmprojcpu as llama.cpp
spells them; `--batchsize / -b` with choices -1, 16, 32 ... 4096 and no micro-batch of its own
(gpttype_adapter.cpp gpttype_load_model: kcpp_data->n_ubatch = kcpp_data->n_batch); `--quantkv` with one level for
both K and V (type=int, choices 0 = f16, 1 = q8, 2 = q4; 1.102); `--flashattention` (also spelled -fa, a switch
that takes no value). No -ub or -ctk / -ctv. To 1.7x the batch flag is `--blasbatchsize` alone (koboldcpp.py v1.36:
choices -1, 32 ... 1024; v1.76: ... 2048), a name 1.10x keeps as an alias of --batchsize: a log that spells it
(its command line, or the Namespace it prints) gets that name."""

from __future__ import annotations

import dataclasses
import re

from .result import Fix

_BATCHES = (16, 32, 64, 128, 256, 512, 1024, 2048, 4096)
_UB_N = re.compile(r"(?<![\w-])-ub (\d+)( \(from (\d+)\))?")
_UB = re.compile(r"(?<![\w-])-ub smaller \(and -b\)|(?<![\w-])-ub / -b|(?<![\w-])-b / -ub|(?<![\w-])-ub\b")
_KV = re.compile(r"(?<![\w-])-ctk (\S+) -ctv \S+")
# --quantkv's levels (koboldcpp.py argparse: 0=f16, 1=q8, 2=q4): an 8-bit type is level 1, any smaller one level 2.
_LEVELS = {"f16": "0", "bf16": "0", "f32": "0", "q8_0": "1"}
_FA = re.compile(r"(?<![\w-])-fa on")


def _batch(n: int) -> int:
    """The largest batch KoboldCpp's --batchsize choices allow at or under n."""
    return max([b for b in _BATCHES if b <= n] or [_BATCHES[0]])


def _level(kv_type: str) -> str:
    return _LEVELS.get(kv_type, "2")


# koboldcpp.py v1.36 argparse: --blasbatchsize, --contextsize, --gpulayers, --tensor_split, no short aliases
_LEGACY = {"-b": "--blasbatchsize", "-c": "--contextsize", "-ngl": "--gpulayers", "-ts": "--tensor_split"}
_SHORT = re.compile(r"(?<![\w-])(-b|-c|-ngl|-ts)(?= (?:\d|smaller|fewer)| / |$)")


def _words(s: str, legacy: bool = False) -> str:
    s = _UB_N.sub(lambda m: f"-b {_batch(int(m.group(1)))}" + (f" (from {m.group(3)})" if m.group(3) else ""), s)
    s = _UB.sub("-b smaller (KoboldCpp sets the micro-batch to the batch)", s)
    s = _KV.sub(lambda m: f"--quantkv {_level(m.group(1))}", s)
    if legacy:
        s = _SHORT.sub(lambda m: _LEGACY[m.group(1)], s)
    return _FA.sub("--flashattention", s)


def _flags(flags: tuple[str, ...], legacy: bool = False) -> tuple[str, ...]:
    out = _flags_new(flags)
    return tuple(_LEGACY.get(f, f) for f in out) if legacy else out


def _flags_new(flags: tuple[str, ...]) -> tuple[str, ...]:
    out: list[str] = []
    i = 0
    while i < len(flags):
        f = flags[i]
        if f == "-ub" and i + 1 < len(flags) and flags[i + 1].isdigit():
            out += ["-b", str(_batch(int(flags[i + 1])))]
            i += 2
        elif f == "-ctk" and i + 1 < len(flags):
            out += ["--quantkv", _level(flags[i + 1])]
            i += 4 if i + 2 < len(flags) and flags[i + 2] == "-ctv" else 2
        elif f == "-fa" and i + 1 < len(flags) and flags[i + 1] == "on":
            out.append("--flashattention")
            i += 2
        else:
            out.append(f)
            i += 1
    return tuple(out)


def as_koboldcpp(fixes: list[Fix], legacy: bool = False) -> list[Fix]:
    """The fixes of a llama.cpp failure under KoboldCpp with KoboldCpp's flags (`legacy`: the batch as
    --blasbatchsize); a fix for another program (an environment variable) is kept as it is."""
    out: list[Fix] = []
    seen: set[str] = set()
    for f in fixes:
        fx = dataclasses.replace(f, summary=_words(f.summary, legacy), flags=_flags(f.flags, legacy))
        if fx.summary not in seen:
            seen.add(fx.summary)
            out.append(fx)
    return out
