"""Read safetensors headers (one file or a sharded model) without reading any tensor data.

File layout (huggingface/safetensors, docs and safetensors/src/tensor.rs `SafeTensors::read_metadata`):
u64 little-endian N | N bytes of UTF-8 JSON | tensor data. The JSON maps each tensor name to
{"dtype", "shape", "data_offsets": [begin, end]} (offsets into the data section) plus an optional
"__metadata__" string->string map. A sharded model adds `model.safetensors.index.json`, whose "weight_map"
names the shard file of every tensor. Validation mirrors `Metadata::validate`: offsets sorted are contiguous
from 0, and each tensor's byte span equals elements x dtype bits / 8.
"""

from __future__ import annotations

import json
import os
import re
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from oomkit.errors import ModelError
from oomkit.model._bytes import NeedMoreBytes, open_for_header, printable, read_capped, remaining_size

__all__ = [
    "DTYPE_BITS",
    "NeedMoreBytes",
    "SafetensorsHeader",
    "SafetensorsModel",
    "SafetensorsTensor",
    "parse_safetensors_header",
    "read_safetensors_header",
    "read_safetensors_model",
]

MAX_HEADER_SIZE = 100_000_000  # tensor.rs MAX_HEADER_SIZE
MAX_INDEX_SIZE = 64 << 20  # our own bound for model.safetensors.index.json (the largest are ~10 MB)
INDEX_NAME = "model.safetensors.index.json"
# Bits per element, safetensors/src/tensor.rs `Dtype::bitsize`.
DTYPE_BITS: dict[str, int] = {
    "BOOL": 8, "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6, "U8": 8, "I8": 8, "F8_E5M2": 8, "F8_E4M3": 8,
    "F8_E8M0": 8, "I16": 16, "U16": 16, "F16": 16, "BF16": 16, "I32": 32, "U32": 32, "F32": 32,
    "C64": 64, "F64": 64, "I64": 64, "U64": 64,
}
_U64 = struct.Struct("<Q")


@dataclass(frozen=True)
class SafetensorsTensor:
    name: str
    dtype: str  # as stored: "BF16", "F8_E4M3", ...
    shape: tuple[int, ...]  # PyTorch order
    nbytes: int


@dataclass(frozen=True)
class SafetensorsHeader:
    tensors: tuple[SafetensorsTensor, ...]  # in data order
    metadata: dict[str, str]  # "__metadata__" ({} when absent)
    header_bytes: int  # 8 + JSON length: where the data section starts
    data_bytes: int  # size of the data section
    file_size: int | None = None  # when known; smaller than header_bytes + data_bytes = cut-off file

    @property
    def nbytes(self) -> int:
        return self.data_bytes

    @property
    def is_truncated(self) -> bool:
        return self.file_size is not None and self.file_size < self.header_bytes + self.data_bytes


@dataclass(frozen=True)
class SafetensorsModel:
    """All shards of a model: (file name relative to the model directory, its header), in name order."""

    files: tuple[tuple[str, SafetensorsHeader], ...]
    index_metadata: dict[str, Any]  # the index's "metadata" (e.g. total_size); {} without an index

    @property
    def tensors(self) -> tuple[SafetensorsTensor, ...]:
        return tuple(t for _, h in self.files for t in h.tensors)

    @property
    def nbytes(self) -> int:
        return sum(h.data_bytes for _, h in self.files)


def _fail(name: str, problem: str) -> ModelError:
    return ModelError(f"{name}: {problem}")


def _no_duplicates(name: str):
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        d: dict[str, Any] = {}
        for k, v in pairs:
            if k in d:
                raise _fail(name, f"corrupt safetensors header: duplicate key '{printable(k)}'")
            d[k] = v
        return d

    return hook


def _load_json(raw: bytes, name: str, what: str) -> Any:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _fail(name, f"corrupt {what}: not valid UTF-8") from None
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates(name))
    except (ValueError, RecursionError) as e:
        if isinstance(e, ModelError):
            raise
        # int() refuses more than 4300 digits with a plain ValueError: say so, not "nested too deeply"
        msg = (e.msg if isinstance(e, json.JSONDecodeError) else "nested too deeply" if isinstance(e, RecursionError)
               else _digits(e))
        raise _fail(name, f"corrupt {what}: invalid JSON ({msg})") from None


def _digits(e: ValueError) -> str:
    m = re.search(r"value has (\d+) digits", str(e))
    return f"an integer of {m.group(1)} digits" if m else printable(str(e), 80)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _tensor(name: str, key: str, info: Any) -> tuple[int, int, SafetensorsTensor]:
    label = f"tensor '{printable(key)}'"
    if not isinstance(info, dict):
        raise _fail(name, f"corrupt safetensors header: {label} is not an object")
    for field in ("dtype", "shape", "data_offsets"):
        if field not in info:
            raise _fail(name, f"corrupt safetensors header: {label} has no '{field}'")
    dtype, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
    if not isinstance(dtype, str) or dtype not in DTYPE_BITS:
        raise _fail(name, f"unsupported safetensors dtype {str(dtype)[:40]!r} for {label}")
    if not isinstance(shape, list) or not all(_is_int(d) and d >= 0 for d in shape):
        raise _fail(name, f"corrupt safetensors header: {label} has shape {str(shape)[:80]}")
    if (not isinstance(offsets, list) or len(offsets) != 2 or not all(_is_int(o) for o in offsets)
            or not 0 <= offsets[0] <= offsets[1]):
        raise _fail(name, f"corrupt safetensors header: {label} has data_offsets {str(offsets)[:80]}")
    nelements = 1
    for d in shape:
        nelements *= d
    nbits = nelements * DTYPE_BITS[dtype]
    begin, end = offsets
    if nbits % 8 or nbits // 8 != end - begin:
        raise _fail(name, f"corrupt safetensors header: {label} is {dtype} {shape} = {nbits / 8:g} bytes "
                          f"but its data_offsets span {end - begin}")
    return begin, end, SafetensorsTensor(key, dtype, tuple(shape), end - begin)


def parse_safetensors_header(buf: bytes | bytearray | memoryview, *, file_size: int | None = None,
                             name: str = "safetensors buffer") -> SafetensorsHeader:
    """Parse the header at the start of a safetensors file; NeedMoreBytes (with `.needed`) when `buf` is
    shorter than the header. `file_size`, when known, is recorded and bounds the header length."""
    buf = bytes(buf) if isinstance(buf, memoryview) else buf
    if len(buf) < 8:
        if file_size is not None and file_size < 8:
            raise _fail(name, f"not a safetensors file: {file_size} bytes")
        raise NeedMoreBytes(f"{name}: truncated safetensors header: need 8 bytes, have {len(buf)}", 8, len(buf))
    (n,) = _U64.unpack_from(buf, 0)
    if n > MAX_HEADER_SIZE and bytes(buf[:8]) == b"version ":  # "version https://git-lfs.github.com/spec/v1"
        raise _fail(name, "not a safetensors file but a Git LFS pointer: the repo was cloned without git-lfs; run "
                          "`git lfs pull` or download the file")
    if n > MAX_HEADER_SIZE:
        raise _fail(name, f"not a safetensors file (header length {n} > {MAX_HEADER_SIZE}; "
                          f"starts with {bytes(buf[:8])!r})")
    end = 8 + n
    if file_size is not None and end > file_size:
        raise _fail(name, f"truncated safetensors header: needs {end} bytes but the file has {file_size}")
    if len(buf) < end:
        raise NeedMoreBytes(f"{name}: truncated safetensors header: need {end} bytes, have {len(buf)}",
                            end, len(buf))
    doc = _load_json(bytes(buf[8:end]), name, "safetensors header")
    if not isinstance(doc, dict):
        raise _fail(name, "corrupt safetensors header: JSON is not an object")
    metadata = doc.pop("__metadata__", None) or {}
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        raise _fail(name, "corrupt safetensors header: __metadata__ must map strings to strings")
    spans = sorted((_tensor(name, k, v) for k, v in doc.items()), key=lambda s: (s[0], s[1]))
    pos = 0
    for begin, stop, t in spans:  # tensor.rs Metadata::validate: contiguous from 0, no gaps or overlaps
        if begin != pos:
            raise _fail(name, f"corrupt safetensors header: tensor '{printable(t.name)}' starts at data offset "
                              f"{begin}, expected {pos}")
        pos = stop
    return SafetensorsHeader(tuple(t for _, _, t in spans), dict(metadata), end, pos, file_size)


def read_safetensors_header(source: str | os.PathLike[str] | BinaryIO) -> SafetensorsHeader:
    """Read one safetensors file's header (8 + N bytes) from a path or a binary file object."""
    if isinstance(source, (str, os.PathLike)):
        with open_for_header(source) as f:
            return _read_file(f, os.fspath(source))
    return _read_file(source, str(getattr(source, "name", "safetensors file")))


def _read_exact(f: BinaryIO, n: int, name: str) -> bytes:
    chunks, got = [], 0
    try:
        while got < n:
            b = f.read(n - got)
            if not b:
                break
            chunks.append(b)
            got += len(b)
    except OSError as e:
        raise _fail(name, f"cannot read ({e.strerror or e})") from None
    return b"".join(chunks)


def _read_file(f: BinaryIO, name: str) -> SafetensorsHeader:
    size = remaining_size(f)
    head = _read_exact(f, 8, name)
    try:
        return parse_safetensors_header(head, file_size=size, name=name)
    except NeedMoreBytes as e:
        buf = head + _read_exact(f, e.needed - len(head), name)
    try:
        return parse_safetensors_header(buf, file_size=size, name=name)
    except NeedMoreBytes as e:  # the file ended early and its size was unknown
        raise _fail(name, f"truncated safetensors header: needs {e.needed} bytes but the file ends at "
                          f"{len(buf)}") from None


def _read_index(path: Path) -> tuple[dict[str, str], dict[str, Any]]:
    name = str(path)
    raw = read_capped(path, MAX_INDEX_SIZE, "safetensors index")
    doc = _load_json(raw, name, "safetensors index")
    if not isinstance(doc, dict):
        raise _fail(name, "corrupt safetensors index: JSON is not an object")
    weight_map, metadata = doc.get("weight_map"), doc.get("metadata") or {}
    if not isinstance(weight_map, dict) or not weight_map:
        raise _fail(name, "corrupt safetensors index: no 'weight_map' object")
    if not isinstance(metadata, dict):
        raise _fail(name, "corrupt safetensors index: 'metadata' is not an object")
    for tensor, shard in weight_map.items():
        if not isinstance(shard, str) or not shard:
            raise _fail(name, f"corrupt safetensors index: tensor '{printable(tensor)}' maps to {shard!r}")
        p = Path(shard)
        if p.is_absolute() or ".." in p.parts:  # shards live inside the model directory
            raise _fail(name, f"corrupt safetensors index: shard path '{printable(shard)}' leaves the model directory")
    return weight_map, metadata


def read_safetensors_model(path: str | os.PathLike[str]) -> SafetensorsModel:
    """Read the headers of a model given as one .safetensors file, a *.safetensors.index.json, or a
    directory (its index if there is one, else every *.safetensors file in it). Reads headers only.
    A model whose headers declare no tensor bytes at all is refused: there is nothing to load."""
    model = _read_model(Path(path))
    if model.nbytes == 0:
        raise _fail(str(path), "the safetensors headers declare no tensor data (0 bytes of weights)")
    check_complete(model, str(path))
    return model


def check_complete(model: SafetensorsModel, name: str) -> None:
    """Refuse a shard shorter than its header says (an interrupted download), when its size is known, or longer:
    safetensors' read_metadata (src/tensor.rs) wants the data to end the file exactly ("buffer_end + N_LEN + n !=
    buffer_len": MetadataIncompleteBuffer), so bytes after the last tensor stop the load too."""
    for shard, h in model.files:
        if h.is_truncated:
            raise _fail(name, f"truncated safetensors file {printable(shard)}: {h.file_size:,} bytes, header says at "
                              f"least {h.header_bytes + h.data_bytes:,} (an interrupted download?)")
        if h.file_size is not None and h.file_size > h.header_bytes + h.data_bytes:
            raise _fail(name, f"safetensors file {printable(shard)}: {h.file_size:,} bytes, "
                              f"{h.file_size - h.header_bytes - h.data_bytes:,} past the end of its last tensor "
                              f"({h.header_bytes + h.data_bytes:,}); safetensors refuses it (MetadataIncompleteBuffer)")


def _read_model(p: Path) -> SafetensorsModel:
    if p.is_dir():
        indexes = [p / INDEX_NAME] if (p / INDEX_NAME).is_file() else sorted(p.glob("*.safetensors.index.json"))
        if len(indexes) == 1:
            return _read_sharded(indexes[0])
        if len(indexes) > 1:
            raise _fail(str(p), f"several safetensors indexes ({', '.join(i.name for i in indexes)}); pass one")
        files = sorted(p.glob("*.safetensors"))
        if not files:
            raise _fail(str(p), "no .safetensors files in this directory")
        missing = missing_shards(p)
        if missing:
            raise _fail(str(p), missing_text(missing))
        headers = tuple((f.name, read_safetensors_header(f)) for f in files)
        _check_unique(str(p), headers)
        return SafetensorsModel(headers, {})
    if p.name.endswith(".json"):
        return _read_sharded(p)
    return SafetensorsModel(((p.name, read_safetensors_header(p)),), {})


# transformers' shard names (modeling_utils.py / huggingface_hub split_torch_state_dict_into_shards):
# "model-00001-of-00030.safetensors"
_SHARD = re.compile(r"^(?P<stem>.+)-(?P<no>\d{5})-of-(?P<count>\d{5})\.safetensors$")


def missing_shards(directory: str | os.PathLike[str]) -> list[str]:
    """Shard files the model in `directory` needs and lacks: those its safetensors index names, or, with no
    index, the numbers absent from an "-0000k-of-0000N" series (one shard of 30 is not a model)."""
    d = Path(directory)
    index = d / INDEX_NAME
    if index.is_file():
        weight_map, _ = _read_index(index)
        return sorted(s for s in set(weight_map.values()) if not (d / s).is_file())
    return missing_in_series(f.name for f in d.glob("*.safetensors"))


def missing_in_series(names: Iterable[str]) -> list[str]:
    """The numbers absent from each "<stem>-0000k-of-0000N.safetensors" series among `names` (file names)."""
    series: dict[tuple[str, int], set[int]] = {}
    for name in names:
        m = _SHARD.match(name)
        if m:
            series.setdefault((m.group("stem"), int(m.group("count"))), set()).add(int(m.group("no")))
    out = []
    for (stem, count), have in sorted(series.items()):
        if count > 100_000:
            continue
        out += [f"{stem}-{k:05d}-of-{count:05d}.safetensors" for k in range(1, count + 1) if k not in have]
    return out


def missing_text(missing: Sequence[str]) -> str:
    """ "29 safetensors shards are missing (model-00002-of-00030.safetensors, ... )" for a message."""
    shown = ", ".join(printable(m) for m in missing[:3]) + (", ..." if len(missing) > 3 else "")
    return f"{len(missing)} safetensors shard{'s are' if len(missing) > 1 else ' is'} missing ({shown})"


def _read_sharded(index: Path) -> SafetensorsModel:
    weight_map, metadata = _read_index(index)
    headers = []
    for shard in sorted(set(weight_map.values())):
        f = index.parent / shard
        if not f.is_file():
            raise _fail(str(index), f"shard '{printable(shard)}' listed in weight_map is missing from {index.parent}")
        headers.append((shard, read_safetensors_header(f)))
    _check_unique(str(index), headers)
    present = {t.name: shard for shard, h in headers for t in h.tensors}
    for tensor, shard in weight_map.items():
        if present.get(tensor) != shard:
            raise _fail(str(index), f"weight_map puts tensor '{printable(tensor)}' in '{printable(shard)}' but that shard's "
                                    "header has no such tensor")
    return SafetensorsModel(tuple(headers), dict(metadata))


def _check_unique(name: str, headers: Sequence[tuple[str, SafetensorsHeader]]) -> None:
    seen: dict[str, str] = {}
    for shard, h in headers:
        for t in h.tensors:
            if t.name in seen:
                raise _fail(name, f"tensor '{printable(t.name)}' appears in both '{printable(seen[t.name])}' and '{printable(shard)}'")
            seen[t.name] = shard
