"""The command lines: mlx_lm.generate / mlx_lm.server / python -m mlx_lm generate|server ..., and the names
mlx-community conversions carry (bits, base model)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ...errors import OomkitError
from ...flags import flag_value
from ...model import catalog
from .settings import MlxSettings

# flag -> (field or None to ignore, takes a value, kind)
_GENERATE_FLAGS: dict[str, tuple[str | None, bool, str]] = {
    "--model": ("model", True, "str"), "--adapter-path": (None, True, ""), "--trust-remote-code": (None, False, ""),
    "--extra-eos-token": (None, True, ""), "--system-prompt": (None, True, ""), "--prompt": (None, True, ""),
    "-p": (None, True, ""), "--prefill-response": (None, True, ""), "--max-tokens": ("max_tokens", True, "int"),
    "-m": ("max_tokens", True, "int"), "--temp": (None, True, ""), "--top-p": (None, True, ""),
    "--min-p": (None, True, ""), "--top-k": (None, True, ""), "--xtc-probability": (None, True, ""),
    "--xtc-threshold": (None, True, ""), "--min-tokens-to-keep": (None, True, ""), "--seed": (None, True, ""),
    "--ignore-chat-template": (None, False, ""), "--use-default-chat-template": (None, False, ""),
    "--chat-template-config": (None, True, ""), "--verbose": (None, True, ""),
    "--max-kv-size": ("max_kv_size", True, "int"), "--prompt-cache-file": (None, True, ""),
    "--quantize-activations": (None, False, ""), "-qa": (None, False, ""), "--kv-bits": ("kv_bits", True, "int"),
    "--kv-group-size": ("kv_group_size", True, "int"), "--quantized-kv-start": ("quantized_kv_start", True, "int"),
    "--draft-model": (None, True, ""), "--num-draft-tokens": (None, True, ""),
}
_SERVER_FLAGS: dict[str, tuple[str | None, bool, str]] = {
    "--model": ("model", True, "str"), "--adapter-path": (None, True, ""), "--host": (None, True, ""),
    "--port": (None, True, ""), "--allowed-origins": (None, True, ""), "--draft-model": (None, True, ""),
    "--num-draft-tokens": (None, True, ""), "--trust-remote-code": (None, False, ""),
    "--log-level": (None, True, ""), "--chat-template": (None, True, ""),
    "--use-default-chat-template": (None, False, ""), "--temp": (None, True, ""), "--top-p": (None, True, ""),
    "--top-k": (None, True, ""), "--min-p": (None, True, ""), "--max-tokens": ("max_tokens", True, "int"),
    "--chat-template-args": (None, True, ""), "--decode-concurrency": (None, True, ""),
    "--prompt-concurrency": (None, True, ""), "--prefill-step-size": ("prefill_step_size", True, "int"),
    "--prompt-cache-size": (None, True, ""), "--prompt-cache-bytes": (None, True, ""),
    "--pipeline": (None, False, ""),
}
# oomkit's own (options form and after an engine command): what mlx_lm learns from the model or the machine
_OOMKIT_FLAGS: dict[str, tuple[str | None, bool, str]] = {
    "--prompt-tokens": ("prompt_tokens", True, "int"), "--batch": ("batch", True, "int"),
    "--q-bits": ("q_bits", True, "int"), "--q-group-size": ("q_group_size", True, "int"),
    "--wired-limit-mb": ("wired_limit_mb", True, "int"), "--max-buffer-length": ("max_buffer_length", True, "int"),
    "--prefill-step-size": ("prefill_step_size", True, "int"), "--program": ("program", True, "str"),
}
_SUBCOMMANDS = {"generate": "mlx_lm.generate", "server": "mlx_lm.server", "chat": "mlx_lm.generate"}


def _flags(program: str) -> dict[str, tuple[str | None, bool, str]]:
    base = _SERVER_FLAGS if program.endswith("server") else _GENERATE_FLAGS
    return {**_OOMKIT_FLAGS, **base}


def bits_from_name(model: str | None) -> int | None:
    """mlx-community names carry the bits of mlx_lm.convert -q: "...-4bit", "...-8bit" (a labelled guess)."""
    if not model:
        return None
    m = re.search(r"[-_](\d)-?bits?(?:$|[-_])", model, re.IGNORECASE)
    return int(m.group(1)) if m else None


_QUANT_SUFFIX = re.compile(r"[-_](?:\d-?bits?|bf16|fp16|mxfp4|nvfp4|mxfp8|dwq|awq|dq)(?:[-_].*)?$", re.IGNORECASE)
_ORGS = ("meta-llama", "Qwen", "google", "mistralai", "openai", "deepseek-ai", "microsoft", "ibm-granite",
         "HuggingFaceTB", "allenai", "nvidia", "zai-org", "moonshotai")


def base_model(model: str | None) -> str | None:
    """An mlx-community conversion ("mlx-community/Qwen3-8B-4bit") -> its base model in the catalog
    ("Qwen/Qwen3-8B"), so it resolves offline; the repo name is kept when the catalog does not know the base."""
    if not model or "/" not in model or Path(model).expanduser().exists():
        return model
    org, name = model.split("/", 1)
    if org.lower() != "mlx-community":
        return model
    base = _QUANT_SUFFIX.sub("", name)
    for cand in (base, *(f"{o}/{base}" for o in _ORGS)):
        entry = catalog.lookup(cand)
        if entry is not None:
            return entry.hf_id
    return model


def parse_args(argv: list[str], env: dict[str, str] | None = None, program: str | None = None
               ) -> tuple[str | None, str | None, MlxSettings]:
    args = list(argv)
    if program is None:
        program = "mlx_lm.generate"
        if args and args[0] in _SUBCOMMANDS:  # python -m mlx_lm generate ... / mlx_lm server ...
            program = _SUBCOMMANDS[args.pop(0)]
    flags = _flags(program)
    opts: dict[str, Any] = {"program": program}
    model = None
    i = 0
    while i < len(args):
        arg = args[i]
        name, eq, inline = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if name not in flags:
            raise OomkitError(f"{program}: error: unrecognized arguments: {arg}")
        fld, takes, kind = flags[name]
        value = None
        if takes:
            value, i = flag_value(args, i, inline if eq else None,
                                  f"{program}: error: argument {name}: expected one argument")
        i += 1
        if fld is None:
            continue
        if fld == "model":
            model = value
        elif kind == "int":
            try:
                opts[fld] = int(value)
            except ValueError:
                raise OomkitError(f"{program}: error: argument {name}: invalid int value: {value!r}") from None
        else:
            opts[fld] = value
    if "q_bits" not in opts:
        bits = bits_from_name(model)
        if bits:
            opts["q_bits"] = bits
    return base_model(model), None, MlxSettings(**opts)


def flag_takes_value(name: str, following: str | None) -> bool:
    spec = {**_GENERATE_FLAGS, **_SERVER_FLAGS, **_OOMKIT_FLAGS}.get(name.partition("=")[0])
    return bool(spec and spec[1])
