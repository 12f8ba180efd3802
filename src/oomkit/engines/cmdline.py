"""A real engine command line -> (engine, model argument, quant, Settings).

Recognises the program (llama-server, vllm serve, python -m sglang.launch_server, ollama run, mlx_lm.*) and
hands the rest to that engine's own parser (its module's `parse_args`), which knows the engine's flags.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import OomkitError

LLAMACPP_PROGRAMS = {"llama-server": "llama-server", "llama-cli": "llama-cli", "llama-completion": "llama-cli",
                     "llama-run": "llama-cli", "server": "llama-server", "main": "llama-cli"}
# python -m MODULE -> engine
PYTHON_MODULES = {"vllm.entrypoints.openai.api_server": "vllm", "vllm.entrypoints.api_server": "vllm",
                  "sglang.launch_server": "sglang", "mlx_lm.server": "mlx", "mlx_lm.generate": "mlx",
                  "mlx_lm": "mlx"}
PROGRAMS = {"vllm": "vllm", "sglang": "sglang", "ollama": "ollama", "mlx_lm.server": "mlx",
            "mlx_lm.generate": "mlx", "mlx_lm": "mlx"}


@dataclass(frozen=True)
class ParsedCommand:
    engine: str
    model: str | None
    settings: Any
    quant: str | None = None


def parse_command(argv: list[str], env: dict[str, str] | None = None) -> ParsedCommand:
    from .base import get_engine

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
    prog = Path(argv[0]).name.removesuffix(".exe")
    args = argv[1:]
    if prog in LLAMACPP_PROGRAMS:
        from .llamacpp_args import parse_args

        model, quant, settings = parse_args(args, program=LLAMACPP_PROGRAMS[prog])
        return ParsedCommand("llama.cpp", model, settings, quant)
    if prog.startswith("python") and len(args) >= 2 and args[0] == "-m":
        engine = PYTHON_MODULES.get(args[1])
        if engine is None:
            raise OomkitError(f"unknown engine module 'python -m {args[1]}'")
        prog = args[1]
        args = args[2:]
    elif prog in PROGRAMS:
        engine = PROGRAMS[prog]
    else:
        raise OomkitError(f"unknown engine command {argv[0]!r}: oomkit reads llama-server, llama-cli, vllm serve, "
                          "python -m sglang.launch_server, ollama run and mlx_lm command lines")
    if engine == "mlx" and prog in ("mlx_lm.server", "mlx_lm.generate"):
        # mlx_lm.server and mlx_lm.generate take different flags and defaults (--max-tokens 512 vs 100);
        # `mlx_lm generate|server ...` names the program in its first argument
        from .mlx import parse_args as mlx_parse_args

        model, quant, settings = mlx_parse_args(args, env, program=prog)
        return ParsedCommand(engine, model, settings, quant)
    model, quant, settings = get_engine(engine).parse_args(args, env)
    return ParsedCommand(engine, model, settings, quant)
