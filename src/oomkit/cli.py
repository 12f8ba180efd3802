"""The command line: parse, call the Python API, hand the result to report/. No logic of its own.

argparse (stdlib) rather than a framework: `oomkit --help` must answer in well under 100 ms.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .errors import OomkitError

EXAMPLE_MODEL = "llama3.1:8b"

_ESTIMATE_HELP = """\
usage: oomkit estimate MODEL [options] [engine flags]
       oomkit estimate [options] -- ENGINE-COMMAND ...

How much memory MODEL takes with an engine and its settings, per device.

MODEL is a catalog name or alias (llama3.1:8b, Qwen/Qwen3-32B), a .gguf file, a config.json or a model
directory; a :QUANT suffix picks the weight format (Qwen/Qwen3-32B:Q4_K_M).

options:
  --engine E            llama.cpp (default)
  --ctx N               context length (engine-neutral; llama.cpp: -c)
  --quant Q             weight format (GGUF file type such as Q4_K_M, or bf16/fp8/...)
  --kv-type T           KV cache type for K and V (llama.cpp: -ctk/-ctv)
  --parallel N          parallel sequences (llama.cpp: -np)
  --vram SIZE[,SIZE]    memory of each GPU (24GiB, 24GB, 24576MiB)
  --gpu NAME[,NAME]     GPUs from the catalog ("RTX 4090")
  --cpu-only            no GPU: everything on the CPU
  --engine-version V    engine release whose rules to apply (llama.cpp build tag, e.g. b6500)
  --json                JSON output (bytes as integers)
  --explain             per-layer view: kind, device, weights, KV, state
  engine flags          the engine's own options, e.g. -c 32768 -ctk q8_0 -ctv q8_0 -fa on -ngl 99 -np 1

examples:
  oomkit estimate llama3.1:8b -c 32768 -ctk q8_0 -ctv q8_0 -fa on --vram 24GiB
  oomkit estimate --gpu "RTX 4090" -- llama-server -m ./model.gguf -c 16384 -ngl 99 -fa on
"""

# oomkit's own estimate options: name -> takes a value
_OPTIONS = {"--engine": True, "--ctx": True, "--quant": True, "--kv-type": True, "--parallel": True,
            "--vram": True, "--gpu": True, "--cpu-only": False, "--engine-version": True, "--json": False,
            "--explain": False, "--kv-memory": True, "-h": False, "--help": False}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return _dispatch(argv)
    except OomkitError as e:
        print(f"oomkit: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


def _dispatch(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="oomkit", allow_abbrev=False,
        description="Exactly how much GPU memory an LLM takes with your engine and settings.",
        epilog="Run `oomkit estimate --help` for the estimate options.",
    )
    parser.add_argument("--version", action="store_true", help="print the version")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.add_parser("estimate", help="memory of a model with an engine and settings, per device", add_help=False)
    if not argv:
        parser.print_help()
        return 0
    if argv[0] == "--version":
        from importlib.metadata import version

        print(f"oomkit {version('oomkit')}")
        return 0
    if argv[0] == "estimate":
        return cmd_estimate(argv[1:])
    parser.parse_args(argv[:1])  # prints help or the argparse error (exit 2)
    return 2


def _split_estimate_args(argv: list[str]) -> tuple[dict[str, Any], str | None, list[str], list[str] | None]:
    """-> (oomkit options, MODEL, engine flags, engine command after --)."""
    opts: dict[str, Any] = {}
    model: str | None = None
    engine_args: list[str] = []
    command: list[str] | None = None
    if "--" in argv:
        k = argv.index("--")
        argv, command = argv[:k], argv[k + 1:]
    engine = _peek_engine(argv)
    arity = _engine_flag_arity(engine)
    i = 0
    while i < len(argv):
        a = argv[i]
        name, eq, inline = a.partition("=") if a.startswith("--") else (a, "", "")
        if name in _OPTIONS:
            if _OPTIONS[name]:
                if eq:
                    opts[name] = inline
                elif i + 1 < len(argv):
                    opts[name] = argv[i + 1]
                    i += 1
                else:
                    raise OomkitError(f"{name} expects a value")
            else:
                opts[name] = True
        elif a.startswith("-") and len(a) > 1 and not _is_number(a):
            engine_args.append(a)
            takes = arity(name, argv[i + 1] if i + 1 < len(argv) else None)
            if takes and not eq and i + 1 < len(argv):
                engine_args.append(argv[i + 1])
                i += 1
        elif model is None:
            model = a
        else:
            raise OomkitError(f"unexpected argument {a!r} (one MODEL only)")
        i += 1
    return opts, model, engine_args, command


def _is_number(s: str) -> bool:
    try:
        float(s)
        return True
    except ValueError:
        return False


def _peek_engine(argv: list[str]) -> str:
    for i, a in enumerate(argv):
        if a == "--engine" and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith("--engine="):
            return a.split("=", 1)[1]
    return "llama.cpp"


def _engine_flag_arity(engine: str):
    from .engines.base import get_engine

    return get_engine(engine).flag_takes_value


def cmd_estimate(argv: list[str]) -> int:
    if "-h" in argv[: argv.index("--") if "--" in argv else len(argv)] or "--help" in argv:
        print(_ESTIMATE_HELP)
        return 0
    opts, model, engine_args, command = _split_estimate_args(argv)
    from dataclasses import replace

    from .engines.base import get_engine
    from .estimate import estimate

    quant = opts.get("--quant")
    if command is not None:
        if model is not None or engine_args:
            raise OomkitError("give either MODEL with options, or an engine command after --, not both")
        from .engines.cmdline import parse_command

        parsed = parse_command(command)
        if parsed.model is None:
            raise OomkitError(f"the {command[0]} command names no model (-m / -hf)")
        engine_name, model, settings = parsed.engine, parsed.model, parsed.settings
        quant = quant or parsed.quant
    else:
        if model is None:
            raise OomkitError("no MODEL given (try: oomkit estimate llama3.1:8b)")
        engine_name = opts.get("--engine", "llama.cpp")
        _, _, settings = get_engine(engine_name).parse_args(engine_args)
    settings = replace(settings, **_neutral_options(opts, settings))
    est = estimate(model, engine_name, quant=quant, vram=opts.get("--vram"), gpu=opts.get("--gpu"),
                   cpu_only=bool(opts.get("--cpu-only")), settings=settings)
    from .report import render

    if opts.get("--json"):
        print(render.to_json(est))
    else:
        print(render.table(est, explain=bool(opts.get("--explain"))))
    return 0


def _neutral_options(opts: dict[str, Any], settings: Any) -> dict[str, Any]:
    """Engine-neutral options mapped onto the engine's own settings fields."""
    out: dict[str, Any] = {}
    fields = settings.__dataclass_fields__
    if "--ctx" in opts:
        out["n_ctx"] = _int_opt("--ctx", opts["--ctx"])
        if out["n_ctx"] <= 0:
            raise OomkitError(f"--ctx must be a positive number of tokens, got {opts['--ctx']}")
    if "--parallel" in opts:
        out["n_parallel"] = _int_opt("--parallel", opts["--parallel"])
    if "--kv-type" in opts:
        out["cache_type_k"] = out["cache_type_v"] = opts["--kv-type"]
    if "--engine-version" in opts:
        out["engine_version"] = opts["--engine-version"]
    return {k: v for k, v in out.items() if k in fields}


def _int_opt(name: str, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise OomkitError(f"{name} takes an integer, got {value!r}") from None


if __name__ == "__main__":
    sys.exit(main())
