"""GGUF header reader: round-trips against gguf-py's writer and reader, cut-off files, and bad input."""

from __future__ import annotations

import io
import os
import struct

import gguf
import numpy as np
import pytest
from gguf import GGMLQuantizationType as Q
from gguf import GGUFValueType as V

from oomkit.errors import OomkitError
from oomkit.model.gguf_header import (
    ArrayInfo,
    GGUFHeader,
    NeedMoreBytes,
    parse_gguf_header,
    read_gguf_header,
)

# --- files written by gguf-py ------------------------------------------------------------------------

SCALARS = {  # key -> (value, GGUF type, expected Python value)
    "t.u8": (200, V.UINT8, 200),
    "t.i8": (-100, V.INT8, -100),
    "t.u16": (60000, V.UINT16, 60000),
    "t.i16": (-30000, V.INT16, -30000),
    "t.u32": (4_000_000_000, V.UINT32, 4_000_000_000),
    "t.i32": (-2_000_000_000, V.INT32, -2_000_000_000),
    "t.f32": (1e-5, V.FLOAT32, struct.unpack("<f", struct.pack("<f", 1e-5))[0]),
    "t.bool_t": (True, V.BOOL, True),
    "t.bool_f": (False, V.BOOL, False),
    "t.str": ("héllo wörld ✓", V.STRING, "héllo wörld ✓"),
    "t.u64": (2**63 + 5, V.UINT64, 2**63 + 5),
    "t.i64": (-(2**62), V.INT64, -(2**62)),
    "t.f64": (0.1, V.FLOAT64, 0.1),
}
ARRAYS = {  # key -> (values, element type)
    "t.arr_i32": ([1, -2, 3], V.INT32),
    "t.arr_u8": ([0, 255, 7], V.UINT8),
    "t.arr_i64": ([2**40, -1], V.INT64),
    "t.arr_f32": ([0.5, -1.25], V.FLOAT32),
    "t.arr_f64": ([0.1, 0.2], V.FLOAT64),
    "t.arr_bool": ([True, False, True], V.BOOL),
    "t.arr_str": (["a", "", "ünï"], V.STRING),
    "llama.attention.head_count_kv": ([8, 8, 0, 8], V.UINT32),  # per-layer arrays stay decoded
}
TOKENS = [f"tok{i}" for i in range(300)] + ["", "Ġthe", "✓"]
MERGES = [f"t o{i}" for i in range(250)]
# name -> (shape as numpy (row-major) order, ggml type)
TENSORS = {
    "token_embd.weight": ((303, 256), Q.Q4_K),
    "blk.0.attn_norm.weight": ((256,), Q.F32),
    "blk.0.attn_q.weight": ((256, 256), Q.Q8_0),
    "blk.0.attn_v.weight": ((64, 256), Q.Q6_K),
    "blk.0.ffn_down.weight": ((256, 512), Q.Q4_0),
    "blk.0.ffn_gate_exps.weight": ((4, 512, 256), Q.Q5_K),  # 3-D MoE expert stack
    "blk.0.ffn_up.weight": ((512, 256), Q.F16),
    "blk.0.bf16.weight": ((3, 64), Q.BF16),
    "blk.0.i32.weight": ((5,), Q.I32),
    "blk.0.iq4.weight": ((2, 256), Q.IQ4_XS),
    "output.weight": ((303, 256), Q.Q6_K),
}


def _nbytes(shape: tuple[int, ...], qtype: Q) -> int:
    blck, size = gguf.GGML_QUANT_SIZES[qtype]
    n = int(np.prod(shape))
    return n // blck * size


def write_gguf(path, *, alignment: int | None = None, with_tensors=True, tensors=TENSORS) -> str:
    w = gguf.GGUFWriter(path, "llama")
    if alignment is not None:
        w.add_custom_alignment(alignment)
    for key, (val, vtype, _) in SCALARS.items():
        w.add_key_value(key, val, vtype)
    for key, (vals, etype) in ARRAYS.items():
        w.add_key_value(key, vals, V.ARRAY, sub_type=etype)
    w.add_token_list(TOKENS)
    w.add_token_types([1] * len(TOKENS))
    w.add_token_scores([float(-i) for i in range(len(TOKENS))])
    w.add_token_merges(MERGES)
    if with_tensors:
        for name, (shape, qtype) in tensors.items():
            nb = _nbytes(shape, qtype)
            raw = np.full(nb, 7, dtype=np.uint8)
            if qtype in (Q.F32, Q.F16, Q.I32, Q.BF16):
                dt = {Q.F32: np.float32, Q.F16: np.float16, Q.I32: np.int32, Q.BF16: np.uint16}[qtype]
                arr = np.zeros(shape, dtype=dt)
                w.add_tensor(name, arr, raw_dtype=Q.BF16 if qtype == Q.BF16 else None)
            else:
                w.add_tensor(name, raw.reshape(shape[:-1] + (-1,)), raw_dtype=qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return str(path)


@pytest.fixture(scope="module")
def real_gguf(tmp_path_factory) -> str:
    return write_gguf(tmp_path_factory.mktemp("gguf") / "model.gguf")


def test_round_trip_every_field(real_gguf):
    h = read_gguf_header(real_gguf)
    assert isinstance(h, GGUFHeader)
    assert h.version == 3
    assert h.alignment == 32
    md = h.metadata
    assert md["general.architecture"] == "llama"
    for key, (_, _, expected) in SCALARS.items():
        assert md[key] == expected and type(md[key]) is type(expected), key
    for key, (vals, etype) in ARRAYS.items():
        if etype == V.FLOAT32:
            vals = [struct.unpack("<f", struct.pack("<f", v))[0] for v in vals]
        assert md[key] == tuple(vals), key
    assert md["tokenizer.ggml.tokens"] == ArrayInfo(V.STRING, len(TOKENS))
    assert md["tokenizer.ggml.merges"] == ArrayInfo(V.STRING, len(MERGES))
    assert md["tokenizer.ggml.token_type"] == ArrayInfo(V.INT32, len(TOKENS))
    assert md["tokenizer.ggml.scores"] == ArrayInfo(V.FLOAT32, len(TOKENS))

    assert [t.name for t in h.tensors] == list(TENSORS)
    offset = 0
    for t in h.tensors:
        shape, qtype = TENSORS[t.name]
        assert t.shape == tuple(reversed(shape))  # ne0 first
        assert t.ggml_type == int(qtype)
        assert t.type_name.upper() == qtype.name.upper()
        assert t.nbytes == _nbytes(shape, qtype)
        assert t.offset == offset and t.offset % 32 == 0
        offset += -(-t.nbytes // 32) * 32
    assert h.data_size == offset
    assert h.header_bytes <= h.data_offset < h.header_bytes + 32 and h.data_offset % 32 == 0
    assert h.file_size == os.path.getsize(real_gguf) == h.expected_file_size
    assert not h.is_truncated


def test_matches_gguf_reader(real_gguf):
    h = read_gguf_header(real_gguf)
    r = gguf.GGUFReader(real_gguf)
    assert list(h.metadata) == [k for k in r.fields if not k.startswith("GGUF.")]
    assert h.version == int(r.fields["GGUF.version"].parts[0][0])
    assert h.data_offset == r.data_offset and h.alignment == r.alignment
    for key, field in r.fields.items():
        if key.startswith("GGUF.") or isinstance(h.metadata[key], ArrayInfo):
            continue
        ours = h.metadata[key]
        theirs = field.contents()
        assert (list(ours) if isinstance(ours, tuple) else ours) == theirs, key
    assert len(r.tensors) == len(h.tensors)
    for ours, theirs in zip(h.tensors, r.tensors, strict=True):
        assert ours.name == theirs.name
        assert ours.shape == tuple(int(x) for x in theirs.shape)
        assert ours.ggml_type == int(theirs.tensor_type)
        assert h.data_offset + ours.offset == theirs.data_offset
        assert ours.nbytes == theirs.n_bytes


def test_tokenizer_lengths_match_reader(real_gguf):
    h = read_gguf_header(real_gguf)
    r = gguf.GGUFReader(real_gguf)
    for key in ("tokenizer.ggml.tokens", "tokenizer.ggml.merges", "tokenizer.ggml.scores", "tokenizer.ggml.token_type"):
        assert h.metadata[key].length == len(r.fields[key].data)


def test_custom_alignment(tmp_path):
    p = write_gguf(tmp_path / "a.gguf", alignment=256)
    h = read_gguf_header(p)
    assert h.alignment == 256 and h.metadata["general.alignment"] == 256
    assert h.data_offset % 256 == 0 and all(t.offset % 256 == 0 for t in h.tensors)
    assert h.data_offset == gguf.GGUFReader(p).data_offset


def test_no_tensors_no_padding(tmp_path):
    p = write_gguf(tmp_path / "kv.gguf", with_tensors=False)
    h = read_gguf_header(p)
    assert h.tensors == () and h.data_size == 0
    # gguf.cpp pads only when there are tensors (GGUFWriter pads anyway; the padding is just unused)
    assert h.data_offset == h.header_bytes <= os.path.getsize(p) < h.header_bytes + 32


def test_version_2(real_gguf, tmp_path):
    data = bytearray(open(real_gguf, "rb").read())
    data[4:8] = struct.pack("<I", 2)  # v2 and v3 share the layout
    h = parse_gguf_header(bytes(data))
    assert h.version == 2 and len(h.tensors) == len(TENSORS)


def test_file_object_and_buffer_agree(real_gguf):
    data = open(real_gguf, "rb").read()
    from_buf = parse_gguf_header(data, file_size=len(data))
    assert from_buf == read_gguf_header(io.BytesIO(data)) == read_gguf_header(real_gguf)
    assert parse_gguf_header(data).file_size is None
    assert parse_gguf_header(memoryview(data)).tensors == from_buf.tensors


# --- cut-off files and short buffers -------------------------------------------------------------------


@pytest.mark.parametrize("cut", ["header", "aligned"])
def test_file_cut_after_header_works(real_gguf, tmp_path, cut):
    full = read_gguf_header(real_gguf)
    end = full.header_bytes if cut == "header" else full.data_offset
    p = tmp_path / "cut.gguf"
    p.write_bytes(open(real_gguf, "rb").read()[:end])
    h = read_gguf_header(p)
    assert h.tensors == full.tensors and h.metadata == full.metadata and h.data_offset == full.data_offset
    assert h.file_size == end and h.is_truncated


def test_sparse_file_reads_only_the_header(tmp_path):
    p = write_gguf(tmp_path / "big.gguf", with_tensors=False)
    os.truncate(p, 3 << 30)  # 3 GiB sparse hole after the header

    class Counting(io.FileIO):
        nread = 0

        def read(self, n=-1):
            b = super().read(n)
            Counting.nread += len(b)
            return b

    with Counting(p, "rb") as f:
        h = read_gguf_header(f)
    assert h.file_size == 3 << 30
    assert Counting.nread <= max(h.header_bytes, 1 << 20) + (1 << 20)


def test_short_buffer_raises_need_more_bytes_and_converges(real_gguf):
    data = open(real_gguf, "rb").read()
    full = parse_gguf_header(data)
    for n in (0, 3, 4, 10, 23, 24, 100, full.header_bytes // 2, full.header_bytes - 1):
        with pytest.raises(NeedMoreBytes) as e:
            parse_gguf_header(data[:n])
        assert n < e.value.needed <= full.header_bytes and e.value.have == n
        assert "truncated GGUF header" in str(e.value)
    # A remote reader's loop: fetch what it asks for (or double) until it parses.
    for grow in (lambda n, need: need, lambda n, need: max(need, 2 * n)):
        n, rounds = 16, 0
        while True:
            rounds += 1
            try:
                h = parse_gguf_header(data[:n])
                break
            except NeedMoreBytes as e:
                assert e.needed > n
                n = grow(n, e.needed)
        assert h == full and rounds < 1000
    assert rounds < 15


def test_truncated_file_header_is_an_error(real_gguf, tmp_path):
    p = tmp_path / "short.gguf"
    p.write_bytes(open(real_gguf, "rb").read()[:700])
    with pytest.raises(OomkitError, match=r"short\.gguf: truncated GGUF header: .* file"):
        read_gguf_header(p)


# --- hand-built bad headers --------------------------------------------------------------------------


def s(b: bytes | str) -> bytes:
    b = b.encode() if isinstance(b, str) else b
    return struct.pack("<Q", len(b)) + b


def kv(key: bytes | str, vtype: int, payload: bytes) -> bytes:
    return s(key) + struct.pack("<I", vtype) + payload


def ti(name: str, dims: tuple[int, ...], gtype: int, offset: int) -> bytes:
    return (s(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<q", d) for d in dims)
            + struct.pack("<iQ", gtype, offset))


def gguf_bytes(kvs=(), tensors=(), *, version=3, n_tensors=None, n_kv=None) -> bytes:
    head = b"GGUF" + struct.pack("<Iqq", version, len(tensors) if n_tensors is None else n_tensors,
                                 len(kvs) if n_kv is None else n_kv)
    return head + b"".join(kvs) + b"".join(tensors)


U32, STR, ARR = 4, 8, 9


def test_hand_built_minimal():
    data = gguf_bytes([kv("a", U32, struct.pack("<I", 5))], [ti("x", (32, 2), 0, 0), ti("y", (256,), 12, 256)])
    h = parse_gguf_header(data)
    assert h.metadata == {"a": 5}
    assert [(t.name, t.shape, t.nbytes) for t in h.tensors] == [("x", (32, 2), 256), ("y", (256,), 144)]
    assert h.data_size == 256 + 160


BAD = {
    "magic": (b"PK\x03\x04" + bytes(40), r"not a GGUF file \(magic b'PK\\x03\\x04'\)"),
    "big_endian": (b"GGUF" + struct.pack(">Iqq", 3, 0, 0), r"big-endian GGUF \(version 3\)"),
    "v0": (gguf_bytes(version=0), "version 0"),
    "v1": (gguf_bytes(version=1), "version 1 is no longer supported"),
    "v4": (gguf_bytes(version=4), "version 4 is newer"),
    "neg_count": (gguf_bytes(n_tensors=-1), "tensor count is -1"),
    "huge_kv": (gguf_bytes(n_kv=2**60), "key-value count is 1152921504606846976"),
    "big_kv": (gguf_bytes(n_kv=2**28), r"corrupt GGUF: .* would make the header"),
    "empty_key": (gguf_bytes([kv("", U32, bytes(4))]), "key 0 is empty"),
    "dup_key": (gguf_bytes([kv("a", U32, bytes(4)), kv("a", U32, bytes(4))]), "duplicate key 'a'"),
    "bad_vtype": (gguf_bytes([kv("a", 13, bytes(4))]), "key 'a' has invalid value type 13"),
    "nested": (gguf_bytes([kv("a", ARR, struct.pack("<IQ", ARR, 1))]), "array of arrays"),
    "bad_etype": (gguf_bytes([kv("a", ARR, struct.pack("<IQ", 99, 1))]), "array of invalid type 99"),
    "huge_array": (gguf_bytes([kv("a", ARR, struct.pack("<IQ", U32, 2**60))]), "claims 1152921504606846976 array"),
    "huge_tok": (gguf_bytes([kv("tokenizer.ggml.tokens", ARR, struct.pack("<IQ", STR, 2**29))]),
                 "would make the header"),
    "huge_string": (gguf_bytes([kv("a", STR, struct.pack("<Q", 2**40))]), "string of 1099511627776 bytes"),
    "bad_utf8_key": (gguf_bytes([kv(b"\xff\xfe", U32, bytes(4))]), "key b'\\\\xff\\\\xfe' is not valid UTF-8"),
    "align_type": (gguf_bytes([kv("general.alignment", 10, struct.pack("<Q", 32))]), "must be u32, not u64"),
    "align_pow2": (gguf_bytes([kv("general.alignment", U32, struct.pack("<I", 48))]), "48 is not a power of 2"),
    "align_zero": (gguf_bytes([kv("general.alignment", U32, struct.pack("<I", 0))]), "0 is not a power of 2"),
    "dims": (gguf_bytes([], [ti("x", (1, 1, 1, 1, 1, 1, 1), 0, 0)]), "tensor 'x' has 7 dims"),
    "neg_dim": (gguf_bytes([], [ti("x", (4, -1), 0, 0)]), "negative dimension -1"),
    "overflow": (gguf_bytes([], [ti("x", (2**62, 2**62), 0, 0)]), "overflows int64"),
    "gtype": (gguf_bytes([], [ti("x", (4,), 77, 0)]), "ggml type 77 \\(unknown"),
    "gtype_removed": (gguf_bytes([], [ti("x", (32,), 4, 0)]), "ggml type 4 \\(removed type Q4_2\\)"),
    "block": (gguf_bytes([], [ti("x", (100,), 12, 0)]), "100 elements per row, not a multiple of Q4_K's block of 256"),
    "dup_tensor": (gguf_bytes([], [ti("x", (8,), 0, 0), ti("x", (8,), 0, 32)]), "duplicate tensor name 'x'"),
    "long_name": (gguf_bytes([], [ti("n" * 64, (8,), 0, 0)]), "is 64 bytes \\(ggml allows 63\\)"),
    "misaligned": (gguf_bytes([], [ti("x", (8,), 0, 0), ti("y", (8,), 0, 33)]),
                   "tensor 'y' has data offset 33, expected 32"),
    "gap": (gguf_bytes([], [ti("x", (8,), 0, 0), ti("y", (8,), 0, 64)]), "offset 64, expected 32"),
    "first_offset": (gguf_bytes([], [ti("x", (8,), 0, 32)]), "offset 32, expected 0"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_input(case, tmp_path):
    data, pattern = BAD[case]
    with pytest.raises(OomkitError, match=pattern) as e:
        parse_gguf_header(data, name="x.gguf")
    assert not isinstance(e.value, NeedMoreBytes) or case == "big_kv"
    assert "\n" not in str(e.value) and str(e.value).startswith("x.gguf: ")
    p = tmp_path / "bad.gguf"
    p.write_bytes(data)
    with pytest.raises(OomkitError) as e:
        read_gguf_header(p)
    assert str(e.value).startswith(f"{p}: ") and not isinstance(e.value, NeedMoreBytes)


def test_huge_count_with_known_file_size_is_corrupt_not_need_more():
    data = gguf_bytes(n_kv=1000)
    with pytest.raises(OomkitError, match="truncated GGUF header: 1000 key-value pairs") as e:
        parse_gguf_header(data, file_size=len(data))
    assert not isinstance(e.value, NeedMoreBytes)


def test_bad_utf8_value_is_replaced():
    h = parse_gguf_header(gguf_bytes([kv("a", STR, s(b"ok\xff"))]))
    assert h.metadata["a"] == "ok\ufffd"


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(OomkitError, match="no such file"):
        read_gguf_header(tmp_path / "nope.gguf")
    with pytest.raises(OomkitError, match="is a directory"):
        read_gguf_header(tmp_path)


def test_need_more_bytes_pickles():
    import pickle

    e = pickle.loads(pickle.dumps(NeedMoreBytes("m", 10, 3)))
    assert (str(e), e.needed, e.have) == ("m", 10, 3) and isinstance(e, OomkitError)


def test_big_endian_file_from_gguf_writer(tmp_path):
    p = tmp_path / "be.gguf"
    w = gguf.GGUFWriter(p, "llama", endianess=gguf.GGUFEndian.BIG)
    w.add_uint32("a", 1)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    with pytest.raises(OomkitError, match=r"be\.gguf: big-endian GGUF \(version 3\)"):
        read_gguf_header(p)


def test_names_with_newlines_stay_one_line():
    data = gguf_bytes([kv("a\nb", 13, bytes(4))])
    with pytest.raises(OomkitError, match=r"key 'a\\nb' has invalid value type") as e:
        parse_gguf_header(data)
    assert "\n" not in str(e.value)
    with pytest.raises(OomkitError) as e:
        parse_gguf_header(gguf_bytes([], [ti("x\ny", (7,), 77, 0)]))
    assert "\n" not in str(e.value) and "'x\\ny'" in str(e.value)


def test_pipe_without_size():
    r, w = os.pipe()
    os.write(w, gguf_bytes([kv("a", U32, struct.pack("<I", 9))]))
    os.close(w)
    with os.fdopen(r, "rb") as f:
        h = read_gguf_header(f)
    assert h.metadata == {"a": 9} and h.file_size is None


def test_big_vocabulary_is_fast():
    import time

    tokens = b"".join(s(f"tok{i}") for i in range(152_000))
    merges = b"".join(s(f"a{i} b{i}") for i in range(300_000))
    data = gguf_bytes([
        kv("tokenizer.ggml.tokens", ARR, struct.pack("<IQ", STR, 152_000) + tokens),
        kv("tokenizer.ggml.token_type", ARR, struct.pack("<IQ", 5, 152_000) + bytes(4 * 152_000)),
        kv("tokenizer.ggml.merges", ARR, struct.pack("<IQ", STR, 300_000) + merges),
    ])
    t0 = time.perf_counter()
    h = parse_gguf_header(data)
    assert time.perf_counter() - t0 < 5  # a hang guard; bench/bench_gguf_header.py measures the speed
    assert h.metadata["tokenizer.ggml.merges"] == ArrayInfo(STR, 300_000) and h.header_bytes == len(data)


