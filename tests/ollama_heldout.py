"""What the Ollama held-out log tests share: their fixtures (tests/fixtures/engine_logs/ollama_heldoutN/) and the
reading of the figures and runner flags the logs print."""

from __future__ import annotations

import json
import re
from pathlib import Path

ENGINE_LOGS = Path(__file__).parent / "fixtures" / "engine_logs"


def loader(folder: str):
    """load(stem) -> one fixture of tests/fixtures/engine_logs/<folder>/."""
    return lambda stem: json.loads((ENGINE_LOGS / folder / f"{stem}.json").read_text())


def mib(printed: str) -> float:
    """'573.07 MiB' -> 573.07 (a figure printed in another unit is a fixture error)."""
    n, unit = printed.split()
    assert unit == "MiB", printed
    return float(n)


def flag(cmd: str, name: str) -> str | None:
    """The value after `name` in a runner's printed command line, None where it is not there."""
    words = cmd.split()
    return words[words.index(name) + 1] if name in words else None


def device_lines(log: str) -> dict[str, str]:
    """The Ollama engine's memory lines (ml/device.go: "model weights", "kv cache", "compute graph" by device and
    "total memory") keyed as the held-out fixtures' "printed" keys: 'msg="kv cache" device=CPU size=' -> '"1.5 GiB"'."""
    out = {}
    for line in log.splitlines():
        m = re.search(r'msg="(model weights|kv cache|compute graph)" device=(\S+) size=("[^"]+")', line)
        if m:
            out[f'msg="{m.group(1)}" device={m.group(2)} size='] = m.group(3)
        m = re.search(r'msg="total memory" size=("[^"]+")', line)
        if m:
            out['msg="total memory" size='] = m.group(1)
    return out
