"""Read a GGUF header (metadata + tensor-info table) by hand, never touching the tensor data.

Only the header is read, so a file cut off after its header works, and so does the first few megabytes of
a 400 GB remote file (`parse_gguf_header` raises `NeedMoreBytes` saying how much to fetch). No model
semantics here: `gguf_file.py` maps the result to a ModelSpec.

Layout, all little-endian (llama.cpp ggml/src/gguf.cpp `gguf_init_from_reader`, reached from
`gguf_init_from_file_impl`; gguf-py/gguf/gguf_reader.py `GGUFReader.__init__`):

    "GGUF" | u32 version | i64 n_tensors | i64 n_kv
    n_kv      x (string key | u32 value type | value)
                 value = scalar | string | (u32 element type | u64 n | n values)      string = u64 len + bytes
    n_tensors x (string name | u32 n_dims | n_dims x i64 ne (ne0 first) | i32 ggml type | u64 offset)
    zero padding to `general.alignment` (default 32) | tensor data

Validation follows gguf.cpp's checks so a file llama.cpp rejects is rejected here with a one-line reason.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import BinaryIO

from oomkit.errors import ModelError
from oomkit.model._bytes import NeedMoreBytes, open_for_header, printable, remaining_size
from oomkit.quant import ggml

__all__ = [
    "ArrayInfo",
    "GGUFHeader",
    "GGUFTensorInfo",
    "MetaValue",
    "NeedMoreBytes",
    "parse_gguf_header",
    "read_gguf_header",
]

GGUF_MAGIC = b"GGUF"
SUPPORTED_VERSIONS = (2, 3)  # v1 (u32 counts) was dropped by llama.cpp; v3 only added big-endian files
GGUF_DEFAULT_ALIGNMENT = 32  # ggml/include/gguf.h
GGML_MAX_DIMS = 4  # ggml/include/ggml.h
GGML_MAX_NAME = 64  # ggml/include/ggml.h: names are char[64] incl. the NUL, so at most 63 bytes
GGUF_MAX_STRING_LENGTH = 1 << 30  # gguf.cpp GGUF_MAX_STRING_LENGTH
GGUF_MAX_ARRAY_ELEMENTS = 1 << 30  # gguf.cpp GGUF_MAX_ARRAY_ELEMENTS
# Our own sanity bound, not llama.cpp's: real headers are < 50 MB (a 256k-token vocabulary is ~10 MB), so
# anything claiming more is corrupt, and no corrupt count can make us buffer gigabytes.
MAX_HEADER_BYTES = 256 << 20
# Also ours: real GGUFs carry a few dozen keys and at most a few thousand tensors (experts are fused into one
# tensor per layer), so a count past these is refused before a loop runs that many times.
MAX_KV = 1 << 16
MAX_TENSORS = 1 << 18
# Layers oomkit models (model/checks.py MAX_LAYERS): checked as soon as the metadata is read, so a header
# declaring 60,000 blocks is refused before its tensor table is walked.
MAX_BLOCKS = 4096
_INT64_MAX = (1 << 63) - 1
_TOKENIZER_PREFIX = "tokenizer.ggml."  # huge vocab arrays: keep only their length
_FIRST_READ = 1 << 20  # read_gguf_header: first read, then at least this much per further read

# GGUF value types (ggml/include/gguf.h enum gguf_type).
GGUF_TYPE_BOOL = 7
GGUF_TYPE_STRING = 8
GGUF_TYPE_ARRAY = 9
_SCALAR_CODES = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "b", 10: "Q", 11: "q", 12: "d"}
_SCALARS = {t: struct.Struct("<" + c) for t, c in _SCALAR_CODES.items()}
_TYPE_NAMES = {0: "u8", 1: "i8", 2: "u16", 3: "i16", 4: "u32", 5: "i32", 6: "f32", 7: "bool", 8: "str",
               9: "array", 10: "u64", 11: "i64", 12: "f64"}  # gguf.cpp GGUF_TYPE_NAME

_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
_I32 = struct.Struct("<i")
_I64 = struct.Struct("<q")
_MIN_KV_BYTES = 8 + 1 + 4 + 1  # key length, a 1-byte key, value type, a 1-byte value
_MIN_TENSOR_BYTES = 8 + 4 + 4 + 8  # name length, n_dims, type, offset (empty name, 0 dims)


@dataclass(frozen=True)
class ArrayInfo:
    """An array that was skipped rather than decoded (the `tokenizer.ggml.*` vocab arrays): type and length."""

    type: int  # GGUF value type of the elements (8 = string, 6 = f32, 5 = i32, ...)
    length: int


MetaValue = int | float | bool | str | tuple | ArrayInfo


@dataclass(frozen=True)
class GGUFTensorInfo:
    name: str
    shape: tuple[int, ...]  # ne0 first, as stored (the reverse of the PyTorch order)
    ggml_type: int
    offset: int  # from the start of the data section (GGUFHeader.data_offset)
    nbytes: int  # ggml_nbytes: elements / block size x block bytes
    part: int = 0  # the split part holding it (split.no), 0 in a one-file GGUF: `offset` is within that part

    @property
    def type_name(self) -> str:
        t = ggml.any_type_by_id(self.ggml_type)
        return t.name if t is not None else ggml.type_by_id(self.ggml_type).name


@dataclass(frozen=True)
class GGUFHeader:
    version: int
    metadata: dict[str, MetaValue]  # tokenizer.ggml.* arrays as ArrayInfo, other arrays as tuples
    tensors: tuple[GGUFTensorInfo, ...]
    alignment: int
    data_offset: int  # where tensor data starts: header end padded to `alignment`
    header_bytes: int  # end of the tensor-info table (before the padding)
    data_size: int  # bytes of tensor data, each tensor padded to `alignment` (gguf.cpp ctx->size)
    file_size: int | None = None  # real size when known; smaller than expected_file_size = cut-off file

    @property
    def expected_file_size(self) -> int:
        return self.data_offset + self.data_size

    @property
    def is_truncated(self) -> bool:
        """True when the file is known to be shorter than its tensor data needs (a cut-off download)."""
        return self.file_size is not None and self.file_size < self.expected_file_size


class _Reader:
    """A cursor over a growing buffer. `fill(end)` appends file bytes; without it, running out means
    NeedMoreBytes. `what` names the item being read, for error messages."""

    __slots__ = ("buf", "pos", "name", "limit", "fill", "what")

    def __init__(self, buf: bytes | bytearray, name: str, limit: int | None,
                 fill: Callable[[int], None] | None) -> None:
        self.buf = buf
        self.pos = 0
        self.name = name
        self.limit = limit  # total size of the source when known
        self.fill = fill
        self.what = "the header"

    def fail(self, problem: str) -> ModelError:
        return ModelError(f"{self.name}: {problem}")

    def bound(self, end: int) -> None:
        """Reject a position the header claims to reach that cannot exist, before fetching anything."""
        if end > MAX_HEADER_BYTES:
            raise self.fail(f"corrupt GGUF: {self.what} would make the header {end} bytes "
                            f"(more than the {MAX_HEADER_BYTES >> 20} MiB any real GGUF header needs)")
        if self.limit is not None and end > self.limit:
            raise self.fail(f"truncated GGUF header: {self.what} needs {end} bytes but the file has {self.limit}")

    def reach(self, end: int) -> None:
        """Make the buffer hold bytes [0, end)."""
        if end <= len(self.buf):
            return
        self.bound(end)
        if self.fill is None:
            raise NeedMoreBytes(f"{self.name}: truncated GGUF header: {self.what} needs {end} bytes, "
                                f"have {len(self.buf)}", end, len(self.buf))
        self.fill(end)
        if end > len(self.buf):
            raise self.fail(f"truncated GGUF header: {self.what} needs {end} bytes but the file ends at "
                            f"{len(self.buf)}")

    def expect(self, n: int) -> None:
        """Plausibility check that n more bytes exist; fetches nothing from a file."""
        self.bound(self.pos + n)
        if self.fill is None:
            self.reach(self.pos + n)

    def scalar(self, st: struct.Struct) -> int | float:
        self.reach(self.pos + st.size)
        (v,) = st.unpack_from(self.buf, self.pos)
        self.pos += st.size
        return v

    def raw_string(self) -> bytes:
        n = self.scalar(_U64)
        if n > GGUF_MAX_STRING_LENGTH:
            raise self.fail(f"corrupt GGUF: {self.what} has a string of {n} bytes (limit {GGUF_MAX_STRING_LENGTH})")
        self.reach(self.pos + n)
        s = bytes(self.buf[self.pos:self.pos + n])
        self.pos += n
        return s

    def skip_strings(self, n: int) -> None:
        """Walk n strings without decoding them: the hot loop for 150k-entry vocabularies."""
        buf, pos, end = self.buf, self.pos, len(self.buf)
        unpack = _U64.unpack_from
        for _ in range(n):
            if pos + 8 > end:
                self.pos = pos
                self.reach(pos + 8)
                buf, end = self.buf, len(self.buf)
            (ln,) = unpack(buf, pos)
            if ln > GGUF_MAX_STRING_LENGTH:
                self.pos = pos
                raise self.fail(f"corrupt GGUF: {self.what} has a string of {ln} bytes")
            pos += 8 + ln
        self.pos = pos
        self.reach(pos)


def _decode_name(r: _Reader, raw: bytes, kind: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise r.fail(f"corrupt GGUF: {kind} {raw[:40]!r} is not valid UTF-8") from None


def _read_value(r: _Reader, vtype: int, key: str) -> MetaValue:
    # `key` is only for messages (already printable()); the caller stores the value under the real key.
    if vtype == GGUF_TYPE_STRING:
        # Values are free text (chat templates...): replace bad bytes rather than reject a file llama.cpp loads.
        return r.raw_string().decode("utf-8", "replace")
    st = _SCALARS.get(vtype)
    if st is None:
        raise r.fail(f"corrupt GGUF: key '{key}' has invalid value type {vtype}")
    v = r.scalar(st)
    return v != 0 if vtype == GGUF_TYPE_BOOL else v


def _read_array(r: _Reader, key: str, skip: bool) -> MetaValue:
    """An array value; `skip` keeps only the type and length (huge tokenizer arrays)."""
    etype = r.scalar(_U32)
    n = r.scalar(_U64)
    if etype == GGUF_TYPE_ARRAY:
        raise r.fail(f"corrupt GGUF: key '{key}' is an array of arrays, which llama.cpp rejects")
    if etype != GGUF_TYPE_STRING and etype not in _SCALARS:
        raise r.fail(f"corrupt GGUF: key '{key}' is an array of invalid type {etype}")
    if n > GGUF_MAX_ARRAY_ELEMENTS:
        raise r.fail(f"corrupt GGUF: key '{key}' claims {n} array elements (limit {GGUF_MAX_ARRAY_ELEMENTS})")
    if etype == GGUF_TYPE_STRING:
        r.expect(8 * n)  # every string has at least its u64 length
        if skip:
            r.skip_strings(n)
            return ArrayInfo(etype, n)
        return tuple(r.raw_string().decode("utf-8", "replace") for _ in range(n))
    size = _SCALARS[etype].size * n
    r.expect(size)
    r.reach(r.pos + size)
    if skip:
        r.pos += size
        return ArrayInfo(etype, n)
    vals = struct.unpack_from(f"<{n}{_SCALAR_CODES[etype]}", r.buf, r.pos)
    r.pos += size
    return tuple(v != 0 for v in vals) if etype == GGUF_TYPE_BOOL else vals


def _what_instead(head: bytes) -> str:
    """What a file named .gguf holds instead, from its first bytes: the downloads that go wrong leave a Git LFS
    pointer (a clone without git-lfs), an HTML or JSON error page (a gated repo, a wrong URL); else the magic."""
    low = head.lstrip().lower()
    if low.startswith(b"version https://git-lfs"):
        return "a Git LFS pointer: the repo was cloned without git-lfs; run `git lfs pull` or download the file"
    if low.startswith((b"<!doctype html", b"<html", b"<?xml", b"<head")):
        return "an HTML page: the download saved an error or login page, from a gated repo or a wrong URL?"
    if low.startswith(b"{") and (b'"error"' in low or b'"message"' in low):
        return "a JSON error message from the download: " + printable(head.decode("utf-8", "replace"), 80)
    return f"magic {head[:4]!r}"


def _read_version(r: _Reader) -> int:
    r.what = "the magic"
    r.reach(4)
    magic = bytes(r.buf[:4])
    if magic != GGUF_MAGIC:
        raise r.fail(f"not a GGUF file ({_what_instead(bytes(r.buf[:256]))})")
    r.pos = 4
    r.what = "the version"
    version = r.scalar(_U32)
    if version == 0:
        raise r.fail("corrupt GGUF: version 0")
    # gguf.cpp: a file written in the other byte order reads as e.g. 0x03000000 (low 16 bits zero).
    if version & 0xFFFF == 0:
        swapped = int.from_bytes(version.to_bytes(4, "little"), "big")
        raise r.fail(f"big-endian GGUF (version {swapped}): llama.cpp loads only files in the host's byte order "
                     "and oomkit reads little-endian GGUF; convert it with gguf-py's gguf_convert_endian.py")
    if version == 1:
        raise r.fail("GGUF version 1 is no longer supported by llama.cpp; re-convert the model")
    if version not in SUPPORTED_VERSIONS:
        raise r.fail(f"GGUF version {version} is newer than this oomkit reads (2-3)")
    return version


def _read_tensor(r: _Reader, i: int, seen: set[str], alignment: int, expected_offset: int) -> GGUFTensorInfo:
    r.what = f"tensor {i}"
    raw = r.raw_string()
    name = _decode_name(r, raw, "tensor name")
    show = printable(name)
    if len(raw) >= GGML_MAX_NAME:
        raise r.fail(f"corrupt GGUF: tensor name '{show}' is {len(raw)} bytes (ggml allows {GGML_MAX_NAME - 1})")
    if name in seen:
        raise r.fail(f"corrupt GGUF: duplicate tensor name '{show}'")
    seen.add(name)
    r.what = f"tensor '{show}'"
    n_dims = r.scalar(_U32)
    if n_dims > GGML_MAX_DIMS:
        raise r.fail(f"corrupt GGUF: tensor '{show}' has {n_dims} dims (GGML_MAX_DIMS is {GGML_MAX_DIMS})")
    r.reach(r.pos + 8 * n_dims + 4 + 8)
    shape = struct.unpack_from(f"<{n_dims}q", r.buf, r.pos)
    r.pos += 8 * n_dims
    nelements = 1
    for ne in shape:
        if ne < 0:
            raise r.fail(f"corrupt GGUF: tensor '{show}' has a negative dimension {ne}")
        nelements *= ne
    if nelements > _INT64_MAX:
        raise r.fail(f"corrupt GGUF: tensor '{show}' shape {shape} overflows int64 elements")
    ggml_type = r.scalar(_I32)
    # ik_llama.cpp's own ids (IQ4_KSS, IQ2_K_R4 ...) are read and sized too; spec_from_gguf refuses them
    traits = ggml.any_type_by_id(ggml_type)
    if traits is None and ggml_type in ggml.IK_READS_REMOVED:
        ik, was = ggml.IK_READS_REMOVED[ggml_type], ggml.REMOVED_IDS[ggml_type]
        raise r.fail(f"tensor '{show}' has ggml type {ggml_type}, which ik_llama.cpp reads as {ik}; upstream "
                     f"llama.cpp removed it{f' (it was {was})' if was != ik else ''} and cannot load the file; "
                     "oomkit sizes upstream llama.cpp")
    if traits is None:
        why = (f"removed type {ggml.REMOVED_IDS[ggml_type]}" if ggml_type in ggml.REMOVED_IDS
               else "unknown to this oomkit")
        raise r.fail(f"corrupt GGUF: tensor '{show}' has ggml type {ggml_type} ({why})")
    type_name, blck = traits.name.upper(), traits.block_size
    ne0 = shape[0] if shape else 1
    if ne0 % blck:
        raise r.fail(f"corrupt GGUF: tensor '{show}' has {ne0} elements per row, not a multiple of "
                     f"{type_name}'s block of {blck}")
    # ggml_nbytes: whole rows (ik_llama.cpp's row_meta_size is per row; 0 for upstream types)
    nbytes = nelements // ne0 * ggml.row_bytes(traits, ne0) if ne0 else 0
    offset = r.scalar(_U64)
    # gguf.cpp requires each tensor to start exactly where the previous one ends, padded to the alignment.
    if offset != expected_offset:
        raise r.fail(f"corrupt GGUF: tensor '{show}' has data offset {offset}, expected {expected_offset} "
                     f"(tensor data must follow the table order, each padded to {alignment} bytes)")
    return GGUFTensorInfo(name, shape, ggml_type, offset, nbytes)


def _parse(r: _Reader) -> GGUFHeader:
    version = _read_version(r)
    r.what = "the tensor count"
    n_tensors = r.scalar(_I64)
    r.what = "the key-value count"
    n_kv = r.scalar(_I64)
    for count, label in ((n_tensors, "tensor count"), (n_kv, "key-value count")):
        if not 0 <= count <= GGUF_MAX_ARRAY_ELEMENTS:
            raise r.fail(f"corrupt GGUF: {label} is {count}")
    r.what = f"{n_kv} key-value pairs and {n_tensors} tensor infos"
    r.expect(n_kv * _MIN_KV_BYTES + n_tensors * _MIN_TENSOR_BYTES)
    for count, label, cap in ((n_tensors, "tensor count", MAX_TENSORS), (n_kv, "key-value count", MAX_KV)):
        if count > cap:
            raise r.fail(f"corrupt GGUF: {label} is {count:,}, more than the {cap:,} oomkit reads (real GGUFs "
                         "hold a few dozen keys and a few thousand tensors)")

    metadata: dict[str, MetaValue] = {}
    alignment_type = None
    for i in range(n_kv):
        r.what = f"key-value pair {i}"
        key = _decode_name(r, r.raw_string(), "key")
        if not key:
            raise r.fail(f"corrupt GGUF: key {i} is empty")
        if key in metadata:
            raise r.fail(f"corrupt GGUF: duplicate key '{printable(key)}'")
        r.what = f"key '{printable(key)}'"
        vtype = r.scalar(_U32)
        shown = printable(key)
        if vtype == GGUF_TYPE_ARRAY:
            metadata[key] = _read_array(r, shown, key.startswith(_TOKENIZER_PREFIX))
        else:
            metadata[key] = _read_value(r, vtype, shown)
        if key == "general.alignment":
            alignment_type = vtype

    arch = metadata.get("general.architecture")
    blocks = metadata.get(f"{arch}.block_count") if isinstance(arch, str) else None
    if isinstance(blocks, (int, float)) and not isinstance(blocks, bool) and blocks > MAX_BLOCKS:
        raise r.fail(f"{printable(arch, 60)}.block_count = {blocks:,} is more than the {MAX_BLOCKS:,} layers oomkit models; the file "
                     "is damaged or not a real model")

    alignment = GGUF_DEFAULT_ALIGNMENT
    if alignment_type is not None:
        if alignment_type != 4:  # gguf.cpp: general.alignment must be u32
            raise r.fail(f"corrupt GGUF: general.alignment must be u32, not {_TYPE_NAMES.get(alignment_type)}")
        alignment = int(metadata["general.alignment"])
        if alignment == 0 or alignment & (alignment - 1):
            raise r.fail(f"corrupt GGUF: general.alignment {alignment} is not a power of 2")

    tensors: list[GGUFTensorInfo] = []
    seen: set[str] = set()
    data_size = 0
    for i in range(n_tensors):
        t = _read_tensor(r, i, seen, alignment, data_size)
        tensors.append(t)
        data_size += -(-t.nbytes // alignment) * alignment

    header_bytes = r.pos
    # gguf.cpp pads to the alignment only when there are tensors. The padding itself need not be present,
    # so a file cut right after the table still parses.
    data_offset = -(-header_bytes // alignment) * alignment if n_tensors else header_bytes
    if data_offset + data_size > _INT64_MAX:
        raise r.fail(f"corrupt GGUF: tensor data of {data_size} bytes overflows a file offset")
    return GGUFHeader(version, metadata, tuple(tensors), alignment, data_offset, header_bytes, data_size,
                      r.limit)


def parse_gguf_header(buf: bytes | bytearray | memoryview, *, file_size: int | None = None,
                      name: str = "GGUF buffer") -> GGUFHeader:
    """Parse a GGUF header from the first bytes of a file.

    Raises NeedMoreBytes (an ModelError) with `.needed` when `buf` ends before the header does. Pass
    `file_size` when the whole file's size is known: counts that cannot fit in it are then reported as
    corrupt instead of asking for more bytes, and it is recorded in the result.
    """
    if isinstance(buf, memoryview):
        buf = buf.tobytes()
    if file_size is not None and len(buf) > file_size:
        raise ModelError(f"{name}: buffer of {len(buf)} bytes is longer than file_size {file_size}")
    return _parse(_Reader(buf, name, file_size, None))


def read_gguf_header(source: str | os.PathLike[str] | BinaryIO) -> GGUFHeader:
    """Read a GGUF file's header from a path or a binary file object (from its current position), reading
    about the header's size (1 MiB, then what the parser needs), never the tensor data."""
    if isinstance(source, (str, os.PathLike)):
        with open_for_header(source) as f:
            return _read_file(f, os.fspath(source))
    return _read_file(source, str(getattr(source, "name", "GGUF file")))


def _read_file(f: BinaryIO, name: str) -> GGUFHeader:
    buf = bytearray()

    def fill(end: int) -> None:
        want = max(end - len(buf), _FIRST_READ)
        try:
            while want > 0:
                chunk = f.read(want)
                if not chunk:
                    return
                buf.extend(chunk)
                want -= len(chunk)
        except OSError as e:
            raise ModelError(f"{name}: cannot read ({e.strerror or e})") from None

    return _parse(_Reader(buf, name, remaining_size(f), fill))
