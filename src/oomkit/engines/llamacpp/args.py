"""llama.cpp's command-line flags -> LlamaCppSettings.

Read with llama.cpp's own flag table (engines/data/llamacpp_flags.json, generated from common/arg.cpp of
llama.cpp@0c1e57098: every common_arg's flags and whether its handler takes a value): every flag llama.cpp
knows is accepted, the ones that change memory are applied, and an unknown flag is an error, as llama.cpp
itself would say.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from ...errors import OomkitError
from ...flags import flag_value
from .settings import LlamaCppSettings

_FLAGS_JSON = Path(__file__).parent.parent / "data" / "llamacpp_flags.json"

# Flags older builds had that the current table lacks (still seen in scripts and issues).
_LEGACY_FLAGS = {"--no-mmap": False, "--mlock": False, "--mmap": False, "-fa": True, "--flash-attn": True,
                 "-dkvc": False, "--dump-kv-cache": False, "--no-kv-offload": False, "-nkvo": False,
                 "--defrag-thold": True, "-dt": True, "--log-disable": False}


@lru_cache(maxsize=1)
def flags_table() -> dict[str, bool]:
    flags = dict(json.loads(_FLAGS_JSON.read_text(encoding="utf-8"))["flags"])
    for k, v in _LEGACY_FLAGS.items():
        flags.setdefault(k, v)
    return flags


def _int(flag: str, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise OomkitError(f"{flag} takes an integer, got {value!r}") from None


_BOOL_VALUES = {"on": "on", "off": "off", "auto": "auto", "1": "on", "0": "off", "true": "on", "false": "off",
                "enabled": "on", "disabled": "off"}


def _text(flag: str, value: str) -> str:
    return value


def _by_flag(table: dict[tuple[str, ...], Any]) -> dict[str, Any]:
    return {flag: entry for flags, entry in table.items() for flag in flags}


# Flags that set one LlamaCppSettings field from their value, and switches that set a fixed one.
_VALUED = _by_flag({
    ("-c", "--ctx-size"): ("n_ctx", _int), ("-b", "--batch-size"): ("n_batch", _int),
    ("-ub", "--ubatch-size"): ("n_ubatch", _int), ("-np", "--parallel"): ("n_parallel", _int),
    ("-mg", "--main-gpu"): ("main_gpu", _int), ("-ncmoe", "--n-cpu-moe"): ("n_cpu_moe", _int),
    ("-ctk", "--cache-type-k"): ("cache_type_k", _text), ("-ctv", "--cache-type-v"): ("cache_type_v", _text),
    ("-sm", "--split-mode"): ("split_mode", _text),
})
_SWITCHES = _by_flag({
    ("-kvu", "--kv-unified"): ("kv_unified", True), ("-no-kvu", "--no-kv-unified"): ("kv_unified", False),
    ("--swa-full",): ("swa_full", True), ("-nkvo", "--no-kv-offload"): ("no_kv_offload", True),
    ("-kvo", "--kv-offload"): ("no_kv_offload", False), ("-cmoe", "--cpu-moe"): ("cpu_moe", True),
    ("--no-mmap",): ("mmap", False), ("--embedding", "--embeddings"): ("embeddings", True),
})


def parse_args(args: list[str], program: str = "llama-server") -> tuple[str | None, str | None, Any]:
    """llama.cpp flags -> (model path or HF repo, quant from -hf repo:QUANT, LlamaCppSettings)."""
    flags = flags_table()
    opts: dict[str, Any] = {"program": program}
    model: str | None = None
    quant: str | None = None
    overrides: list[tuple[str, str]] = []
    i = 0
    while i < len(args):
        arg = args[i]
        name, eq, inline = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if name not in flags:
            raise OomkitError(f"error: invalid argument: {arg} (not a {program} flag)")
        value = None
        if name in ("-fa", "--flash-attn"):
            # -fa [on|off|auto]; older builds had a bare -fa
            if eq:
                value = inline
            elif i + 1 < len(args) and args[i + 1].lower() in _BOOL_VALUES:
                value = args[i + 1]
                i += 1
            else:
                value = "on"
        elif flags[name]:
            value, i = flag_value(args, i, inline if eq else None, f"error: {name} expects a value")
        i += 1
        if name in _VALUED:
            field, convert = _VALUED[name]
            opts[field] = convert(name, value)
        elif name in _SWITCHES:
            field, setting = _SWITCHES[name]
            opts[field] = setting
        elif name in ("-m", "--model"):
            model = value
        elif name in ("-hf", "-hfr", "--hf-repo"):
            repo, _, q = value.partition(":")
            model, quant = repo, (q or None)
        elif name in ("-fa", "--flash-attn"):
            mode = _BOOL_VALUES.get(value.lower())
            if mode is None:
                raise OomkitError(f"error: unknown value for --flash-attn: '{value}'")
            opts["flash_attn"] = mode
        elif name in ("-ngl", "--gpu-layers", "--n-gpu-layers"):
            opts["n_gpu_layers"] = {"auto": -1, "all": 10**6}.get(value) or _int(name, value)
        elif name in ("-ts", "--tensor-split"):
            try:
                opts["tensor_split"] = tuple(float(x) for x in value.replace("/", ",").split(",") if x)
            except ValueError:
                raise OomkitError(f"error: invalid --tensor-split {value!r}") from None
        elif name in ("-ot", "--override-tensor"):
            for part in value.split(","):
                pat, sep, buft = part.rpartition("=")
                if not sep or not pat:
                    raise OomkitError(f"error: invalid --override-tensor {part!r}: expected PATTERN=BUFFER_TYPE")
                overrides.append((pat, buft))
        elif name in ("-lm", "--load-mode"):
            opts["mmap"] = "mmap" in value or value == "auto"
    if overrides:
        opts["override_tensor"] = tuple(overrides)
    return model, quant, LlamaCppSettings(**opts)


def flag_takes_value(name: str, following: str | None) -> bool:
    """Whether `name` consumes the next argument (for splitting a mixed oomkit + llama.cpp option list)."""
    if name in ("-fa", "--flash-attn"):
        return following is not None and following.lower() in _BOOL_VALUES
    return flags_table().get(name, False)
