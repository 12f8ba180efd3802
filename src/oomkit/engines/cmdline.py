"""A real engine command line -> (engine, model argument, quant, Settings).

Recognises the program (llama-server, vllm serve, python -m sglang.launch_server, ollama run, mlx_lm.*) by the
engine records' own `programs` and `python_modules`, and hands the rest to that engine's parser.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any

from ..errors import OomkitError
from .base import engine_for_program


@dataclass(frozen=True)
class ParsedCommand:
    engine: str
    model: str | None
    settings: Any
    quant: str | None = None


def program_name(argv0: str) -> str:
    return os.path.basename(argv0).removesuffix(".exe")


def parse_command(argv: list[str], env: dict[str, str] | None = None) -> ParsedCommand:
    # `OLLAMA_CONTEXT_LENGTH=8192 ollama serve`, `env K=V ollama run ...`: leading assignments join the env
    argv = list(argv)
    if argv and argv[0] == "env":
        argv = argv[1:]
    while argv and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", argv[0]):
        key, _, value = argv.pop(0).partition("=")
        env = dict(os.environ if env is None else env)
        env[key] = value
    if not argv:
        raise OomkitError("empty engine command after --")
    prog = program_name(argv[0])
    args = argv[1:]
    if prog.startswith("python") and len(args) >= 2 and args[0] == "-m":
        found = engine_for_program(prog, module=args[1])
        if found is None:
            raise OomkitError(f"unknown engine module 'python -m {args[1]}'")
        args = args[2:]
    else:
        found = engine_for_program(prog)
        if found is None:
            raise OomkitError(f"unknown engine command {argv[0]!r}: oomkit reads llama-server, llama-cli, vllm "
                              "serve, python -m sglang.launch_server, ollama run and mlx_lm command lines")
    eng, program = found
    model, quant, settings = eng.parse_args(args, env, program)
    return ParsedCommand(eng.name, model, settings, quant)


def is_engine_command(argv: list[str]) -> bool:
    """Whether a process's command line is one oomkit can read (a running engine)."""
    if not argv:
        return False
    prog = program_name(argv[0])
    if prog.startswith("python") and len(argv) > 2 and argv[1] == "-m":
        found = engine_for_program(prog, module=argv[2])
    else:
        found = engine_for_program(prog)
    if found is None:
        return False
    eng = found[0]
    return not eng.subcommands or (len(argv) > 1 and argv[1] in eng.subcommands)
