"""Sizes: parse "24GB", "23.5 GiB", "4096 MiB", "24G"; format bytes. GB (10^9) and GiB (2^30) are kept apart,
everywhere: `--vram 24GB`, `table --sizes 24GB` and `oomkit.estimate(vram="24GB")` are all 24 x 10^9 bytes.

A bare "G"/"M" suffix follows llama.cpp/nvidia-smi practice and means GiB/MiB, as users type it there.
A bare number is bytes, and one from 1 to 1 MiB - 1 is refused: no memory size is that small, so "--vram 24" is
a forgotten unit, and guessing GB or GiB would be wrong half the time (0 stays: --reserve 0).
"""

from __future__ import annotations

import math
import re

from .errors import SettingsError

KiB, MiB, GiB, TiB = 1 << 10, 1 << 20, 1 << 30, 1 << 40

_UNITS = {
    "": 1, "b": 1,
    "k": KiB, "kib": KiB, "kb": 1000,
    "m": MiB, "mib": MiB, "mb": 1000**2,
    "g": GiB, "gib": GiB, "gb": 1000**3,
    "t": TiB, "tib": TiB, "tb": 1000**4,
}
_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*([a-zA-Z]*)\s*$")


SMALLEST_BARE = MiB  # a bare number below this (and above 0) is a forgotten unit


def parse_size(text: str | int | float, name: str = "size") -> int:
    """Bytes in `text`. A bare number is bytes; "24GB" is 24e9; "24GiB" and "24G" are 24·2^30. `name`: the
    option or argument, for the error ("--vram")."""
    if isinstance(text, bool):
        raise SettingsError(f"{name}: {text!r} is no size; give bytes or a size such as 24GiB")
    if isinstance(text, (int, float)):
        if isinstance(text, float) and not math.isfinite(text):
            raise SettingsError(f"{name}: {text} is no size")
        if text < 0:
            raise SettingsError(f"{name} must not be negative: {text}")
        return int(text)
    m = _SIZE.match(str(text)) if len(str(text)) <= 64 else None
    if not m or m.group(2).lower() not in _UNITS:
        shown = repr(text) if len(str(text)) <= 40 else repr(str(text)[:36]) + "..."
        raise SettingsError(f"{name}: cannot read size {shown}: expected e.g. 24GiB, 24GB, 23.5 GiB or 4096MiB")
    number, unit = float(m.group(1)), m.group(2).lower()
    if unit in ("", "b") and 0 < number < SMALLEST_BARE:
        n = m.group(1)
        raise SettingsError(f"{name} {str(text).strip()}: {n} what? write {n}GiB (2^30 bytes) or {n}GB (10^9 bytes); "
                            "a number without a unit is bytes")
    return int(round(number * _UNITS[unit]))


_THOUSANDS = re.compile(r"^\s*\d{1,3}(?:,\d{3})+(?:\.\d+)?\s*[A-Za-z]+\s*$")


# a count with a size, as --gpu takes one with a name: "2x 24GB", "2x24GB", "24GB x2", "2*24GiB"
# (the size a number with its unit: "24XB" is no count of "B")
_SIZE_COUNT = (re.compile(r"^\s*(?P<n>\d{1,9})\s*[x×*]\s*(?P<size>\d.*)$", re.IGNORECASE),
               re.compile(r"^(?P<size>\s*\d.*[a-z])\s*[x×*]\s*(?P<n>\d{1,9})\s*$", re.IGNORECASE))


def parse_sizes(text: str, name: str = "size", most: int | None = None) -> tuple[int, ...]:
    """A comma list of sizes, one per device: "24GiB,24GiB" (also "24GB + 12GB", and a count: "2x 24GB"). most: the
    longest list taken (counted before any is read)."""
    raw = [p.strip() for p in re.split(r",|\s\+\s|\+", str(text))]
    while raw and not raw[-1]:  # a trailing comma names no device
        raw.pop()
    if "" in raw:  # "24GiB,,24GiB" or ",24GiB": a device left out, or a typo; either way not two devices
        raise SettingsError(f"{name} {str(text).strip()[:60]!r}: an empty entry in the list; give one size per "
                            "device")
    parts = [p for p in raw if p]
    if not parts:
        raise SettingsError(f"{name}: cannot read sizes {str(text)[:40]!r}")
    if _THOUSANDS.match(str(text)):  # "24,576 MiB": one size with a thousands separator, not 24 bytes and 576 MiB
        raise SettingsError(f"{name} {str(text).strip()!r}: a comma separates devices; write the size without "
                            f"thousands separators ({str(text).replace(',', '').strip()})")
    counted: list[tuple[int, str]] = []
    for p in parts:
        m = next((m for m in (c.match(p) for c in _SIZE_COUNT) if m), None)
        counted.append((int(m.group("n")), m.group("size")) if m else (1, p))
    total = sum(n for n, _ in counted)
    if most is not None and total > most:
        raise SettingsError(f"{name}: {total:,} sizes; oomkit takes at most {most:,} devices")
    if any(n < 1 for n, _ in counted):
        raise SettingsError(f"{name} {str(text).strip()!r}: a count of devices must be at least 1")
    return tuple(size for n, p in counted for size in [parse_size(p, name)] * n)


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
