"""The command line: parse, call the Python API, hand the result to report/. No logic of its own.

argparse (stdlib) rather than a framework: `oomkit --help` must answer in well under 100 ms. Each command
lives in oomkit/commands/<name>.py with run(argv) -> exit code, imported only when called.
"""

from __future__ import annotations

import importlib
import sys

from .errors import OomkitError

COMMANDS = {
    "estimate": "memory of a model with an engine and settings, per device",
    "check": "will it fit on this machine? verdict, headroom, largest context (exit 1 if not)",
    "table": "hard limits (max context per VRAM size) and context impact (KV memory per context length)",
    "models": "list and search the built-in model catalog",
    "gpus": "the GPUs and memory of this machine",
    "watch": "live GPU memory per device and process, with the headroom left for a model's KV cache",
    "plan": "the settings that fit, best first: context, quality and speed per option, with the launch command",
    "fit": "rewrite an engine command so that it fits: fit -- <engine command> (exit 1 if nothing does)",
    "diff": "what changes in memory, per component and device, when settings change",
    "diagnose": "read an out-of-memory error or a whole log: the stage that ran out and the fix",
    "errors": "the index of known out-of-memory messages, searchable",
    "serve": "the web hub in a browser: calculator, tables, plan and fit, diagnose, error index (oomkit[web])",
    "mcp": "the same operations as an MCP server over stdio, for coding agents (oomkit[mcp])",
}


BUG_EXIT = 3  # an exception oomkit did not expect: a bug in oomkit, not bad input (that is 2)
ISSUES_URL = "https://github.com/oomkit/oomkit/issues"


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv[: argv.index("--")] if "--" in argv else "--debug" in argv
    if debug:
        argv.remove("--debug")
    _tolerant_streams()
    try:
        return _dispatch(argv)
    except OomkitError as e:
        _say(f"oomkit: error: {_one_line(str(e))}")
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        _quiet_stdout()
        return 0
    except RecursionError:  # a structure nested past Python's limit: bad input, whatever parser met it
        _say("oomkit: error: the input is nested too deeply to read")
        return 2
    except OSError as e:  # stdout on a full disk or closed: nothing more can be written there
        if debug:
            raise
        _say(f"oomkit: error: {_one_line(str(e))}")
        return 2
    except Exception as e:  # noqa: BLE001 - anything else is a bug: one line, its own exit code
        if debug:
            raise
        _say(f"oomkit: internal error ({type(e).__name__}: {_one_line(str(e))}); this is a bug in oomkit, "
             f"please report it at {ISSUES_URL} (run again with --debug for the traceback)")
        return BUG_EXIT


# the characters str.splitlines() breaks a line at (a terminal too, for most): \n \r \v \f, the file, group and record
# separators, NEL, and the Unicode line and paragraph separators
_LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")


def _one_line(text: str) -> str:
    """The message on one line, as the terminal shows it: a line break in text it quotes (a flag's value, a family
    name) becomes a space; another control character (an ANSI escape's ESC, a NUL) or a bidirectional control (which
    shows the rest of the line in another order) is written escaped, as Python writes it ("\\x1b", "\\u202e")."""
    if any(c in _LINE_BREAKS for c in text):
        text = " ".join("".join(" " if c in _LINE_BREAKS else c for c in text).split())
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c == "\t" else c.encode("unicode_escape").decode("ascii") for c in text)


def _say(line: str) -> None:
    try:
        print(line, file=sys.stderr)
    except (OSError, ValueError):  # stderr closed too: the exit code still speaks
        pass


def _tolerant_streams() -> None:
    """Never fail on the terminal's encoding: a character it cannot show is written as a replacement."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="replace")  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):  # not a text stream we may reconfigure (tests, pipes closed)
            pass


def _quiet_stdout() -> None:
    """After a broken pipe, point stdout at /dev/null so the interpreter's final flush cannot fail again."""
    import os  # lazy: only after a broken pipe

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def _dispatch(argv: list[str]) -> int:
    if argv and argv[0] in COMMANDS:  # the common path builds no parser (argparse's help machinery is slow)
        return _run_command(argv[0], argv[1:])
    import argparse  # lazy: only for --help and mistakes (its help machinery is slow to build)

    parser = argparse.ArgumentParser(
        prog="oomkit", allow_abbrev=False,
        description="Exactly how much GPU memory an LLM takes with your engine and settings.",
        epilog="Run `oomkit COMMAND --help` for a command's options.",
    )
    parser.add_argument("--version", action="store_true", help="print the version")
    parser.add_argument("--debug", action="store_true", help="on an internal error, print the traceback")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, text in COMMANDS.items():
        sub.add_parser(name, help=text, add_help=False)
    if not argv:
        parser.print_help()
        return 0
    if argv[0] == "--version":
        from importlib.metadata import version  # lazy: only for --version

        print(f"oomkit {version('oomkit')}")
        return 0
    if argv[0] in ("-h", "--help"):
        parser.print_help()
        return 0
    raise OomkitError(f"unknown command {argv[0]!r}: choose from {', '.join(COMMANDS)} (see oomkit --help)")


def _run_command(name: str, argv: list[str]) -> int:
    try:
        module = importlib.import_module(f"oomkit.commands.{name}")
    except ModuleNotFoundError as e:
        if e.name == f"oomkit.commands.{name}":
            raise OomkitError(f"`oomkit {name}` is not available in this version") from None
        raise
    return module.run(argv)


if __name__ == "__main__":
    sys.exit(main())
