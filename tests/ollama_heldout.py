"""What the Ollama held-out log tests share: their fixtures (tests/fixtures/engine_logs/ollama_heldoutN/) and the
reading of the figures and runner flags the logs print."""

from __future__ import annotations

import json
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
