"""Reading command-line flags the way the engines' own parsers do (shared by oomkit's and each engine's)."""

from __future__ import annotations

from .errors import OomkitError


def flag_value(args: list[str], i: int, inline: str | None, missing: str) -> tuple[str, int]:
    """The value of the flag at args[i]: its `--flag=value` part (`inline`) or the next argument.
    -> (value, index of the last argument it used); `missing` is the error when there is none."""
    if inline is not None:
        return inline, i
    if i + 1 < len(args):
        return args[i + 1], i + 1
    raise OomkitError(missing)
