"""Engine releases and the eras between them: one reader for `--engine-version`, one table type for the releases
at which an engine's allocation rules changed.

Every engine names its eras after what changed, each with the first release that has the change and the source
that says so (the PR, the commit, the release note), e.g. vLLM's `Eras({"v1_default": (0, 8, 0), ...})`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ..errors import OomkitError

Version = tuple[int, ...]
_RELEASE = r"v?(\d+)\.(\d+)(?:\.(\d+))?"
NEWEST_WORDS = ("newest", "latest")


def parse_release(text: str | None, newest: str, what: str, example: str, tail: str = r"(?:[.+-].*)?") -> Version:
    """A dotted release ("0.10.2", "v0.5.13") -> (major, minor, patch[, the numbers `tail` captures]).
    None, "newest" and "latest" mean `newest`; `tail` is the regex of what may follow (a suffix such as
    "-rc1", SGLang's ".post5"); `what` and `example` word the error ("cannot read vLLM version ...")."""
    if text is None or not str(text).strip() or str(text).strip().lower() in NEWEST_WORDS:
        text = newest
    m = re.fullmatch(_RELEASE + tail, str(text).strip())
    if not m:
        raise OomkitError(f"cannot read {what} version {text!r}: expected {example}")
    return tuple(int(g or 0) for g in m.groups())


def version_str(v: Version) -> str:
    return ".".join(map(str, v))


class Eras(Mapping[str, "Version | int"]):
    """Era name -> the first release (a version tuple, or a llama.cpp build number) that follows the new rule."""

    def __init__(self, firsts: Mapping[str, Version | int]):
        self._firsts = dict(firsts)

    def __getitem__(self, name: str) -> Version | int:
        return self._firsts[name]

    def __iter__(self):
        return iter(self._firsts)

    def __len__(self) -> int:
        return len(self._firsts)

    def reached(self, version: Version | int, name: str) -> bool:
        """Whether `version` has era `name`'s rule (a longer version compares on the era's own length)."""
        first = self._firsts[name]
        if isinstance(first, int):
            return version >= first
        return tuple(version)[: len(first)] >= first
