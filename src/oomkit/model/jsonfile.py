"""Bounded JSON reading for model files (config.json, safetensors indexes, the hub's answers).

Python's `json` (which transformers and vLLM use to read a config) accepts what no model file holds and some
inputs it cannot survive: NaN / Infinity (and 1e400, read as inf) become floats that poison every product,
a 5,000-digit integer raises a ValueError from `int()`, nesting 100,000 deep a RecursionError. Here the
file must be a regular file under a size cap, nesting is bounded before parsing, and a non-finite number or
an oversized integer is refused naming the field where it sits. Duplicate keys keep the last value, as
`json.loads` does for the engines that read the same file.
"""

from __future__ import annotations

import json
import math
import os
import re
from typing import Any

from ..errors import ModelError
from ._bytes import printable, read_capped

MAX_CONFIG_BYTES = 8 << 20  # real config.json files are < 200 KB (those with id2label tables included)
MAX_INDEX_BYTES = 64 << 20  # a safetensors index lists every tensor: ~90k entries (~10 MB) for the largest MoEs
MAX_DEPTH = 64  # real configs nest 3-4 levels (text_config.rope_scaling.factor); json recursion ends near 1000
MAX_INT_DIGITS = 40  # far beyond any count or size, far below int()'s 4300-digit limit

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")


class _Bad:
    """A value JSON allows Python to read but no model file holds; found with its path after parsing."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def _number(text: str) -> Any:
    v = float(text)
    return v if math.isfinite(v) else _Bad(text)


def _integer(text: str) -> Any:
    digits = len(text.lstrip("-"))
    return _Bad(f"an integer of {digits} digits") if digits > MAX_INT_DIGITS else int(text)


def _depth_ok(text: str, max_depth: int) -> bool:
    depth = 0
    for m in _BRACKET.finditer(_STRING.sub("", text)):
        if m.group() in "[{":
            depth += 1
            if depth > max_depth:
                return False
        else:
            depth -= 1
    return True


def _find_bad(value: Any, path: str) -> tuple[str, str] | None:
    """(path, text) of the first _Bad in a parsed document (nesting is already bounded)."""
    if isinstance(value, _Bad):
        return path or "(top level)", value.text
    if isinstance(value, dict):
        for k, v in value.items():
            found = _find_bad(v, f"{path}.{k}" if path else str(k))
            if found:
                return found
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found = _find_bad(v, f"{path}[{i}]")
            if found:
                return found
    return None


def loads(raw: bytes | str, name: str, what: str = "JSON", *, max_depth: int = MAX_DEPTH) -> Any:
    """Parse JSON text, refusing bad UTF-8, nesting deeper than `max_depth`, NaN / Infinity / out-of-range
    numbers and integers of more than MAX_INT_DIGITS digits, each with a one-line ModelError naming `name`
    (and the field)."""
    if isinstance(raw, (bytes, bytearray)):
        try:
            text = bytes(raw).decode("utf-8")
        except UnicodeDecodeError as e:
            raise ModelError(f"{name}: {what} is not valid UTF-8 (byte {e.start})") from None
    else:
        text = raw
    if not _depth_ok(text, max_depth):
        raise ModelError(f"{name}: {what} is nested more than {max_depth} levels deep")
    try:
        doc = json.loads(text, parse_constant=_Bad, parse_float=_number, parse_int=_integer)
    except RecursionError:  # _depth_ok missed a form of nesting: still one line
        raise ModelError(f"{name}: {what} is nested too deeply") from None
    except ValueError as e:
        detail = f"{e.msg} at line {e.lineno} column {e.colno}" if isinstance(e, json.JSONDecodeError) else str(e)
        raise ModelError(f"{name}: {what} is not valid JSON ({printable(detail, 120)})") from None
    bad = _find_bad(doc, "")
    if bad is not None:
        field, value = bad
        raise ModelError(f"{name}: {what} field '{printable(field, 80)}' is {printable(value, 40)}, not a finite number "
                         "a model file can hold")
    return doc


def kind_of(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number",
            float: "a number", type(None): "null"}.get(type(value), type(value).__name__)


def loads_object(raw: bytes | str, name: str, what: str = "JSON") -> dict[str, Any]:
    doc = loads(raw, name, what)
    if not isinstance(doc, dict):
        raise ModelError(f"{name}: {what} must hold a JSON object, not {kind_of(doc)}")
    return doc


def read_object(path: str | os.PathLike[str], what: str = "config.json", cap: int = MAX_CONFIG_BYTES) -> dict[str, Any]:
    """A JSON object from a regular file of at most `cap` bytes (see loads)."""
    name = os.fspath(path)
    return loads_object(read_capped(name, cap, what), name, what)
