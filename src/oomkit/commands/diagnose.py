"""oomkit diagnose: read an out-of-memory error or a whole engine log (a file, or stdin); print the program, the
stage that ran out, its numbers and the fix, computed."""

from __future__ import annotations

import codecs
import json
import os
import re
import subprocess
import sys

from ..diagnose import diagnose
from ..diagnose.text import render
from ..errors import OomkitError
from ..model._bytes import open_for_header

HELP = """\
usage: oomkit diagnose [FILE|-|"MESSAGE"] [--json]
       oomkit diagnose [--json] -- ENGINE-COMMAND ...
       oomkit diagnose FILE [--json] -- ENGINE-COMMAND ...

Paste the error or the whole log (stdin by default, or a file): which program failed (PyTorch, CUDA, vLLM, SGLang,
llama.cpp, Ollama, LM Studio, MLX, TGI, ExLlama, TensorRT-LLM, transformers), the stage that ran out (weights,
kv_cache, compute, fragmentation, other_process, host_ram, buffer_limit) or that it is not an out-of-memory at
all (not_oom), the numbers it carries in bytes, the settings a start-up log shows, and the fix: the exact flags
or variables for that engine, with the memory each saves. The first out-of-memory in a log is the cause.

With -- ENGINE-COMMAND, runs the command, shows its output, and diagnoses it when it fails. With a FILE as well,
the FILE is that command's log: nothing is run, and the fixes rewrite that command.

options:
  --json    the Diagnose JSON (engine, engine_version, confidence, stage, numbers, settings, causes, fixes)

exit status: 0 the text was placed (including not_oom), 1 nothing in it could be placed, 2 unreadable input
(no file, empty, or not text).

examples:
  oomkit diagnose server.log
  oomkit diagnose "CUDA out of memory. Tried to allocate 20.00 MiB"
  journalctl -u ollama --no-pager | oomkit diagnose
  oomkit diagnose --json < error.txt
  oomkit diagnose -- llama-server -m model.gguf -c 131072
"""


def run(argv: list[str]) -> int:
    head = argv[: argv.index("--")] if "--" in argv else argv
    if "-h" in head or "--help" in head:
        print(HELP)
        return 0
    as_json = "--json" in head
    rest = [a for a in head if a != "--json"]
    for a in rest:
        if a.startswith("-") and a != "-":
            raise OomkitError(f"unknown option {a!r} for diagnose (see oomkit diagnose --help)")
    command = None
    if "--" in argv and rest:  # a saved log and the command that wrote it: read, not run
        if len(rest) > 1:
            raise OomkitError("diagnose reads one FILE (or - for stdin) before the -- ENGINE-COMMAND")
        command = argv[argv.index("--") + 1:]
        if not command:
            raise OomkitError("nothing after --: give the engine command that wrote the log")
        text = _read(rest[0])
    elif "--" in argv:
        command = argv[argv.index("--") + 1:]
        text, code = _run_command(command)
        if code == 0:
            print("oomkit: the command exited normally (0); diagnosing its output anyway", file=sys.stderr)
    elif rest and _message_typed(rest):  # the error pasted as the argument(s), not a file name
        text = " ".join(rest)
        print("oomkit: no file of that name: diagnosing the argument as the error text", file=sys.stderr)
    else:
        if len(rest) > 1:
            raise OomkitError("diagnose reads one FILE (or - for stdin)")
        text = _read(rest[0] if rest else "-")
    d = diagnose(text, command=command)
    if d.stage == "unknown" and not d.recognised and command is None and _not_text(text):
        where = "stdin" if not rest or rest[0] == "-" else rest[0]
        raise OomkitError(f"{where}: not text (binary or garbled data): give the engine's error message or its log "
                          "as text")
    print(json.dumps(d.to_dict(), indent=1) if as_json else render(d))
    return 1 if d.stage == "unknown" else 0


def _message_typed(args: list[str]) -> bool:
    """The error message itself given as the argument (`oomkit diagnose "CUDA out of memory. Tried to allocate
    20.00 MiB"`, or unquoted, word by word): no argument is an existing path or reads as a file name (a path
    separator, a log's extension), and the text has words (whitespace between them)."""
    text = " ".join(args)
    if any(a == "-" or os.path.lexists(a) for a in args):
        return False
    if not any(c.isspace() for c in text):  # one word: an error's own name (hipErrorOutOfMemory), else a file name
        return bool(_ERROR_WORDS.search(text)) and not _FILE_NAME.search(text)
    # no file has a line break or a path part over NAME_MAX (255 bytes) in its name, and a name with an engine's
    # out-of-memory words that is no file is that message (a path inside it, 'models/x.gguf', notwithstanding)
    if "\n" in text or any(len(p.encode("utf-8", "surrogateescape")) > 255 for p in re.split(r"[/\\]", text)):
        return True
    if _ERROR_WORDS.search(text):
        return True
    return not any(_FILE_NAME.search(a) for a in args)


_FILE_NAME = re.compile(r"[/\\]|\.(?:log|txt|out|err|json)$", re.IGNORECASE)  # a path part or a log's extension
_ERROR_WORDS = re.compile(r"out of memory|OutOf\w*Memory|ErrorMemoryAllocation|failed to allocate|cudaMalloc failed|"
                          r"Tried to allocate|requires more system memory|not enough memory", re.IGNORECASE)


def _not_text(text: str) -> bool:
    """Mostly undecodable bytes or control characters (tabs, line ends, ANSI colour escapes and backspaces aside):
    a binary file or a garbled paste, which no log reader can place."""
    bad = sum(1 for c in text if c == "\ufffd" or (c < " " and c not in "\t\n\r\x1b\x08\x0c"))
    return bad > len(text) // 10


# The most of a log read: a day of a busy server's log is a few MB; a file or stream past this is refused at once
# (reading, decoding and scanning gigabytes would hold the terminal for minutes)
MAX_LOG_BYTES = 64 << 20


def _read(path: str) -> str:
    if path == "-":
        if sys.stdin is None:  # started with stdin closed (`<&-`): Python leaves sys.stdin None
            raise OomkitError("standard input is closed: pipe the error message or the log into it, or give a FILE")
        if sys.stdin.isatty():
            print("oomkit: reading the error or log from stdin; paste it, then Ctrl-D (Ctrl-Z Enter on Windows)",
                  file=sys.stderr)
        data = sys.stdin.buffer.read(MAX_LOG_BYTES + 1)
    else:
        with open_for_header(path) as f:  # the one-line errors of a missing file, a directory, no permission
            data = f.read(MAX_LOG_BYTES + 1) if os.fstat(f.fileno()).st_size <= MAX_LOG_BYTES else None
    if data is None or len(data) > MAX_LOG_BYTES:
        raise OomkitError(f"{'stdin' if path == '-' else path}: larger than the {MAX_LOG_BYTES >> 20} MiB oomkit "
                          "reads: give the part around the first error (e.g. tail -c 20M of the log)")
    if not data.strip():
        raise OomkitError(f"{'stdin' if path == '-' else path}: empty: nothing to diagnose (give the error message "
                          "or the whole log)")
    return _decode(data)


def _decode(data: bytes) -> str:
    """The text of a log as shells write it: UTF-8 (with or without a BOM), or UTF-16 with its BOM (PowerShell 5's
    `>` and Out-File); anything else UTF-8 with the undecodable bytes replaced."""
    if data.startswith(codecs.BOM_UTF8):
        return data[len(codecs.BOM_UTF8):].decode("utf-8", errors="replace")
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", errors="replace")
    if len(data) >= 4 and data.count(0) * 3 > len(data):  # UTF-16 without its BOM: ASCII text is half NUL bytes
        zero_odd = data[1::2].count(0) > data[0::2].count(0)
        try:
            return data.decode("utf-16-le" if zero_odd else "utf-16-be")
        except UnicodeDecodeError:
            pass
    return data.decode("utf-8", errors="replace")


def _run_command(cmd: list[str]) -> tuple[str, int]:
    if not cmd:
        raise OomkitError("empty command after --")
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    except OSError as e:
        raise OomkitError(f"cannot run {cmd[0]!r}: {e.strerror or e}") from None
    chunks: list[bytes] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        chunks.append(line)
        sys.stderr.buffer.write(line)
    code = proc.wait()
    return b"".join(chunks).decode("utf-8", errors="replace"), code
