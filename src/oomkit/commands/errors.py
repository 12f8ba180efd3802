"""oomkit errors [QUERY]: the index of known out-of-memory messages and their look-alikes, searchable."""

from __future__ import annotations

import json

from ..diagnose import errors_index
from ..diagnose.text import render_index
from ..engines.command import clip_repr
from ..errors import OomkitError

HELP = """\
usage: oomkit errors [QUERY] [--json]

Every message oomkit recognises: the program that prints it, the versions that print it that way, the stage it
means, its causes and fixes. QUERY keeps the entries holding every word of it (any field, any case).

examples:
  oomkit errors
  oomkit errors vllm kv
  oomkit errors "cudaMalloc failed"
  oomkit errors not_oom --json
"""


def run(argv: list[str]) -> int:
    if "-h" in argv or "--help" in argv:
        print(HELP)
        return 0
    as_json = "--json" in argv
    words = [a for a in argv if a != "--json"]
    for a in words:
        if a.startswith("--"):
            raise OomkitError(f"unknown option {a!r} for errors (see oomkit errors --help)")
    rows = errors_index(" ".join(words) or None)
    if as_json:
        print(json.dumps(rows, indent=1))
        return 0
    if not rows:
        print(f"no known message matches {clip_repr(' '.join(words))}")
        return 1
    print(render_index(rows))
    return 0
