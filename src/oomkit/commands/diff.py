"""oomkit diff: what changes in memory, per component and device, when settings change."""

from __future__ import annotations

import json
import shlex

from ..errors import OomkitError
from ..report import plan as report
from ._model_args import parse_model_request

HELP = """\
usage: oomkit diff MODEL [options] [engine flags] --change "FLAGS"
       oomkit diff [options] --change "FLAGS" -- ENGINE-COMMAND ...

The memory of the launch before and after FLAGS (the engine's own flags, as you would add them to the command),
per component (weights, KV cache, state, compute, overhead) and per device.

examples:
  oomkit diff gemma3:12b -c 32768 --change "--swa-full" --vram 24GiB
  oomkit diff --change "-ctk q8_0 -ctv q8_0 -fa on" -- llama-server -hf unsloth/Qwen3-8B-GGUF:Q4_K_M -c 32768
  oomkit diff --change "--max-num-seqs 1" -- vllm serve Qwen/Qwen3-8B
"""


def run(argv: list[str]) -> int:
    head = argv[: argv.index("--")] if "--" in argv else argv
    if "-h" in head or "--help" in head or not argv:
        print(HELP)
        return 0
    if "--change" not in head:
        raise OomkitError('give the flags to compare with --change "FLAGS"')
    if head.count("--change") > 1:  # the second was read as an engine flag ("not a llama-server flag")
        raise OomkitError('--change given twice: put all the flags in one, e.g. --change "-c 8192 -ctk q8_0"')
    k = head.index("--change")
    if k + 1 >= len(head):
        raise OomkitError('--change expects the flags, e.g. --change "-ctk q8_0 -ctv q8_0 -fa on"')
    try:
        change = shlex.split(head[k + 1])
    except ValueError as e:
        raise OomkitError(f"cannot read --change {head[k + 1]!r}: {e}") from None
    if not change:  # `--change "$FLAGS"` with FLAGS unset compared the launch with itself
        raise OomkitError('--change is empty: give the flags to compare, e.g. --change "-ctk q8_0 -ctv q8_0 -fa on"')
    rest = argv[:k] + argv[k + 2:]
    before = parse_model_request(rest)
    if "--" in rest:  # the engine command with the flags added at the end: later flags win, as in the engine
        after_argv = rest + change
    else:
        after_argv = rest[:0] + rest + change
    after = parse_model_request(after_argv, later_wins=True)  # --change's options replace the launch's
    a = before.estimate(find_max_context=False)
    b = after.estimate(find_max_context=False)
    if before.opts.get("--json"):
        print(json.dumps(report.diff_dict(a, b), indent=2))
    else:
        print(report.diff_text(a, b))
    return 0
