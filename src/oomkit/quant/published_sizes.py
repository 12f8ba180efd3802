"""Publishers' own listed sizes of GGUF files whose per-tensor types oomkit cannot read from the quant's name.

unsloth chooses every tensor's type of its Dynamic 2.0 files ("UD-Q4_K_XL", ...) per model and does not publish the
choice (quant/gguf_recipes.NamedMix), nor that of its imatrix files under plain names (unsloth's Q4_K_M); a file's
size, though, is on its repo's listing. quant/data/published_sizes.json holds those sizes, each with the page it is
read from; model/weights.sized_to_published scales a stand-in's repeating layers to the listed total.
"""

from __future__ import annotations

import functools
import json
import math
import re
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from oomkit.errors import OomkitError
from oomkit.quant import gguf_recipes

_DATA = Path(__file__).parent / "data" / "published_sizes.json"
_UNITS = {"KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12}  # the Hugging Face listing's decimal units
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(KB|MB|GB|TB)\s*$")


@dataclass(frozen=True)
class PublishedSize:
    """One published GGUF file (its gguf-split shards summed): `listed` as the page at `url` writes each shard."""

    repo: str  # "unsloth/Qwen3.5-9B-GGUF"
    base: str  # the model it quantizes, "Qwen/Qwen3.5-9B"
    quant: str  # "UD-Q4_K_XL", "Q4_K_M"
    listed: tuple[str, ...]  # ("49.8 GB", "50 GB", "15.6 GB")
    rounding: str  # "hf": three significant figures; "written": half a unit of the last digit written
    url: str
    file_nextn: bool | None  # whether the file holds the next-n (MTP) block; None: as oomkit's tensor list has it

    @property
    def nbytes(self) -> int:
        """The file's size, shards summed."""
        return sum(_parse(s)[0] for s in self.listed)

    @property
    def error_bytes(self) -> int:
        """How far the real size can be from `nbytes` by the listing's rounding alone."""
        return sum(_parse(s, self.rounding)[1] for s in self.listed)

    @property
    def shown(self) -> str:
        """The listed size as a note quotes it: "6.0 GB", or "49.8 + 50 + 15.6 GB (115.4 GB)"."""
        if len(self.listed) == 1:
            return self.listed[0]
        total = sum(Decimal(_SIZE.match(s).group(1)) * _UNITS[_SIZE.match(s).group(2)] for s in self.listed) / 10**9
        return " + ".join(self.listed) + f" = {total:.2f} GB".replace(".00 GB", " GB")


def _parse(text: str, rounding: str = "written") -> tuple[int, int]:
    """(bytes, half the rounding step in bytes) of "49.8 GB" / "559 MB"."""
    m = _SIZE.match(text)
    if m is None:
        raise OomkitError(f"published_sizes.json: unreadable size {text!r}")
    digits, unit = m.group(1), _UNITS[m.group(2)]
    value = Decimal(digits) * unit
    if rounding == "hf":  # three significant figures ("50 GB" is 50.0)
        step = Decimal(10) ** (math.floor(math.log10(float(digits))) - 2) * unit
    else:
        decimals = len(digits.split(".")[1]) if "." in digits else 0
        step = Decimal(10) ** -decimals * unit
    return int(value), int(step / 2)


@functools.cache
def records() -> tuple[PublishedSize, ...]:
    data = json.loads(_DATA.read_text())
    return tuple(PublishedSize(repo=f["repo"], base=f["base"], quant=f["quant"], listed=tuple(f["listed"]),
                               rounding=f["rounding"], url=f["url"], file_nextn=f.get("file_nextn"))
                 for f in data["files"])


def lookup(quant: str, *, repo: str | None = None, base: str | None = None) -> PublishedSize | None:
    """The published size of the file `quant` names: of `repo` ("unsloth/Qwen3.5-9B-GGUF") when a GGUF repo is named,
    else, for a name only one publisher uses ("UD-Q4_K_XL": unsloth's), of the one repo listed for `base` ("Qwen/
    Qwen3.5-9B"). A plain file type ("Q4_K_M") is matched only with its repo: other publishers' files of it differ."""
    mix = gguf_recipes.named_mix(quant)
    if mix is not None:
        key = mix.name
    else:
        try:
            key = gguf_recipes.ftype_by_name(quant).name
        except OomkitError:
            return None
    if repo:
        return next((r for r in records() if r.repo.lower() == repo.strip().lower() and r.quant == key), None)
    if mix is None or not mix.name.startswith("UD-") or not base:
        return None
    found = [r for r in records() if r.base.lower() == base.strip().lower() and r.quant == key]
    return found[0] if len(found) == 1 else None


def header_bytes(n_vocab: int, n_tensors: int) -> int:
    """An estimate of a GGUF's bytes before its tensor data (gguf.h: the key-value metadata, then one tensor-info
    record per tensor, then padding to the 32-byte alignment). The metadata is dominated by the tokenizer's arrays:
    per token a length-prefixed string (8 + ~7 bytes), a token type (4) and a score or a merge (4 to ~20): taken as
    40 bytes a token; a tensor-info record is its length-prefixed name (8 + ~30), n_dims (4), the dims (8 each, ~3),
    the type (4) and the offset (8), ~80 bytes, and the data's 32-byte padding adds 16 on average; 64 KiB more for
    the chat template and the other keys. For a 248k-token vocabulary this is ~10 MB, under 0.2% of a 6 GB file."""
    return n_vocab * 40 + n_tensors * 96 + 64 * 1024
