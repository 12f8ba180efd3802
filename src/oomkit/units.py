"""Sizes: parse "24GB", "23.5 GiB", "4096 MiB", "24G"; format bytes. GB (10^9) and GiB (2^30) are kept apart.

A bare "G"/"M" suffix follows llama.cpp/nvidia-smi practice and means GiB/MiB, as users type it there.
"""

from __future__ import annotations

import re

from .errors import OomkitError

KiB, MiB, GiB, TiB = 1 << 10, 1 << 20, 1 << 30, 1 << 40

_UNITS = {
    "": 1, "b": 1,
    "k": KiB, "kib": KiB, "kb": 1000,
    "m": MiB, "mib": MiB, "mb": 1000**2,
    "g": GiB, "gib": GiB, "gb": 1000**3,
    "t": TiB, "tib": TiB, "tb": 1000**4,
}
_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*([a-zA-Z]*)\s*$")


def parse_size(text: str | int | float) -> int:
    """Bytes in `text`. A bare number is bytes; "24GB" is 24e9; "24GiB" and "24G" are 24·2^30."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        if text < 0:
            raise OomkitError(f"size must not be negative: {text}")
        return int(text)
    m = _SIZE.match(str(text))
    if not m or m.group(2).lower() not in _UNITS:
        raise OomkitError(f"cannot read size {text!r}: expected e.g. 24GiB, 24GB, 23.5 GiB or 4096MiB")
    return int(round(float(m.group(1)) * _UNITS[m.group(2).lower()]))


def parse_sizes(text: str) -> tuple[int, ...]:
    """A comma list of sizes, one per device: "24GiB,24GiB"."""
    parts = [p for p in str(text).split(",") if p.strip()]
    if not parts:
        raise OomkitError(f"cannot read sizes {text!r}")
    return tuple(parse_size(p) for p in parts)


def cdiv(a: int, b: int) -> int:
    """a / b rounded up (vLLM's cdiv, ggml's integer ceil)."""
    return -(-a // b)


def round_up(x: int, n: int) -> int:
    """x padded to a multiple of n (ggml's GGML_PAD, Ollama's roundUp, vLLM's round_up)."""
    return -(-x // n) * n


def mib(n: int | float) -> float:
    return n / MiB


def fmt_bytes(n: int | float | None, decimals: int = 2) -> str:
    """Human form in binary units, as engines print them (MiB/GiB)."""
    if n is None:
        return "-"
    a = abs(n)
    for unit, size in (("GiB", GiB), ("MiB", MiB), ("KiB", KiB)):
        if a >= size:
            return f"{n / size:.{decimals}f} {unit}"
    return f"{int(n)} B"


def fmt_mib(n: int | float | None) -> str:
    return "-" if n is None else f"{n / MiB:,.2f} MiB"
