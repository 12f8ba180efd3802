"""LM Studio's llama.cpp runtime versions as llama.cpp builds.

`lms load` runs LM Studio's own build of llama.cpp, its "llama.cpp runtime" ("CUDA 12 llama.cpp (Windows) v1.52.0",
"llama.cpp-win-x86_64-nvidia-cuda12-avx2@2.44.0" in `lms runtime ls` and LM Studio's logs). Its version is LM
Studio's, not llama.cpp's, so `--engine-version` takes it as `lmstudio-2.44.0` (or a bare `2.44.0` / `v2.44.0`
with an `lms load` command) and reads it as the llama.cpp build that runtime bundles, from
engines/data/lmstudio_runtimes.json: each row cites the public source that names the runtime's llama.cpp commit
(or its release tag, b10760 for 2.33.0).
A well-formed runtime version not in the table reads as the newest build oomkit models, with a warning
(settings.version_warning).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

from ...errors import OomkitError

_TABLE = Path(__file__).parent.parent / "data" / "lmstudio_runtimes.json"
# "lmstudio-2.44.0", "lm-studio-v1.52.0", "lms@2.44.0", "LMStudio 1.52.0": the prefix says it is LM Studio's
PREFIXED = re.compile(r"(?:lm-?studio|lms)[-@ ]?(.*)", re.IGNORECASE)
# a runtime's own version: LM Studio numbers them major.minor.patch (v1.39.0 ... v1.63.1, 2.x from 2026)
RUNTIME = re.compile(r"v?(\d{1,3})\.(\d{1,3})\.(\d{1,3})")


@lru_cache(maxsize=1)
def runtimes() -> dict[tuple[int, int, int], int]:
    """Runtime version -> the llama.cpp build it bundles (engines/data/lmstudio_runtimes.json)."""
    rows = json.loads(_TABLE.read_text(encoding="utf-8"))["runtimes"]
    return {_version(r["runtime"]): int(r["build"]) for r in rows}


def _version(text: str, typed: str | None = None) -> tuple[int, int, int]:
    m = RUNTIME.fullmatch(text.strip())
    if m is None:
        raise OomkitError(f"cannot read LM Studio llama.cpp runtime version {typed or text!r}: expected one such as "
                          "lmstudio-2.44.0 (the runtime's number in LM Studio's runtime list, `lms runtime ls`)")
    return (int(m[1]), int(m[2]), int(m[3]))


def runtime_version(text: str | None) -> tuple[int, int, int] | None:
    """`lmstudio-2.44.0` -> (2, 44, 0); None when the text names no LM Studio runtime; a malformed one after the
    prefix ("lmstudio-2.x") is an error."""
    if not text:
        return None
    m = PREFIXED.fullmatch(text.strip())
    return None if m is None else _version(m[1], text.strip())


def runtime_build(version: tuple[int, int, int]) -> int | None:
    """The llama.cpp build the runtime bundles, None when no public source in the table names it."""
    return runtimes().get(version)


def runtime_name(version: tuple[int, int, int]) -> str:
    return "v" + ".".join(map(str, version))


def known_range() -> str:
    known = sorted(runtimes())
    return f"{runtime_name(known[0])} to {runtime_name(known[-1])}"


def as_runtime(text: str) -> str | None:
    """A bare runtime version typed for `lms load` ("2.44.0", "v2.44.0") -> "lmstudio-2.44.0"; else None."""
    m = RUNTIME.fullmatch(text.strip())
    return None if m is None else f"lmstudio-{m[1]}.{m[2]}.{m[3]}"
