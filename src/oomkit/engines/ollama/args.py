"""Ollama's command line: `ollama run TAG [PROMPT]`, `ollama serve`, and oomkit's spelling of Ollama's Modelfile
parameters and server variables (--num-ctx, --kv-cache-type, ...)."""

from __future__ import annotations

from typing import Any

from ...errors import OomkitError
from ...flags import flag_value
from ...units import parse_size
from .settings import OllamaSettings, environment

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
