"""safetensors header reader: files written by hand (struct + json), a 2-shard index, and bad input."""

from __future__ import annotations

import io
import json
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oomkit.errors import OomkitError
from oomkit.model.safetensors_header import (
    NeedMoreBytes,
    SafetensorsTensor,
    parse_safetensors_header,
    read_safetensors_header,
    read_safetensors_model,
)

BITS = {"F32": 32, "BF16": 16, "F16": 16, "I64": 64, "U8": 8, "BOOL": 8, "F8_E4M3": 8, "F8_E8M0": 8,
        "F4": 4, "F64": 64, "I32": 32, "I16": 16, "I8": 8, "F8_E5M2": 8}


def st_bytes(tensors: dict[str, tuple[str, list[int]]], metadata: dict | None = None, *, data: bool = True,
             order=sorted) -> bytes:
    """A safetensors file as the reference writer lays it out: offsets in name order, JSON padded to 8."""
    header: dict = {} if metadata is None else {"__metadata__": metadata}
    pos = 0
    for name in order(tensors):
        dtype, shape = tensors[name]
        n = 1
        for d in shape:
            n *= d
        nb = n * BITS[dtype] // 8
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [pos, pos + nb]}
        pos += nb
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    return struct.pack("<Q", len(raw)) + raw + (bytes(pos) if data else b"")


def raw_file(header: dict | bytes, data: bytes = b"") -> bytes:
    raw = header if isinstance(header, bytes) else json.dumps(header).encode()
    return struct.pack("<Q", len(raw)) + raw + data


TENSORS = {
    "model.embed_tokens.weight": ("BF16", [1000, 64]),
    "model.layers.0.self_attn.q_proj.weight": ("F8_E4M3", [64, 64]),
    "model.layers.0.self_attn.q_proj.weight_scale": ("F32", [1]),
    "model.layers.0.mlp.experts.gate_up_proj": ("F4", [2, 128, 33]),  # sub-byte: 8448 elements -> 4224 bytes
    "model.layers.0.mlp.experts.scales": ("F8_E8M0", [2, 128, 2]),
    "model.norm.weight": ("F32", [64]),
    "model.mask": ("BOOL", [3]),
    "model.pos": ("I64", [5]),
    "model.empty": ("F16", [0, 64]),
    "lm_head.weight": ("F16", [1000, 64]),
}


def expected_nbytes(dtype: str, shape: list[int]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n * BITS[dtype] // 8


def test_single_file_round_trip(tmp_path):
    data = st_bytes(TENSORS, {"format": "pt"})
    p = tmp_path / "model.safetensors"
    p.write_bytes(data)
    h = read_safetensors_header(p)
    assert h.metadata == {"format": "pt"}
    assert {t.name: t for t in h.tensors} == {
        name: SafetensorsTensor(name, dt, tuple(shape), expected_nbytes(dt, shape)) for name, (dt, shape) in TENSORS.items()
    }
    assert h.tensors[0].name == sorted(TENSORS)[0]  # data order
    assert h.header_bytes % 8 == 0 and h.header_bytes + h.data_bytes == len(data) == h.file_size
    assert h.nbytes == sum(expected_nbytes(*v) for v in TENSORS.values())
    assert not h.is_truncated
    assert h == parse_safetensors_header(data, file_size=len(data))
    assert read_safetensors_header(io.BytesIO(data)) == h
    m = read_safetensors_model(p)
    assert m.files == (("model.safetensors", h),) and m.tensors == h.tensors and m.nbytes == h.nbytes


def test_header_only_file_is_truncated_but_readable(tmp_path):
    data = st_bytes(TENSORS, data=False)
    p = tmp_path / "cut.safetensors"
    p.write_bytes(data)
    h = read_safetensors_header(p)
    assert h.file_size == len(data) == h.header_bytes and h.is_truncated and len(h.tensors) == len(TENSORS)


def test_offsets_in_any_json_order(tmp_path):
    # Older writers emit JSON keys in any order; the data order is what the offsets say.
    data = st_bytes({"b": ("F32", [2]), "a": ("U8", [3])}, order=lambda d: list(d))
    h = parse_safetensors_header(data)
    assert [t.name for t in h.tensors] == ["b", "a"] and h.data_bytes == 11


def test_short_buffer_need_more_bytes():
    data = st_bytes(TENSORS)
    full = parse_safetensors_header(data)
    with pytest.raises(NeedMoreBytes) as e:
        parse_safetensors_header(data[:5])
    assert e.value.needed == 8 and e.value.have == 5
    with pytest.raises(NeedMoreBytes) as e:
        parse_safetensors_header(data[:100])
    assert e.value.needed == full.header_bytes
    assert parse_safetensors_header(data[: e.value.needed]).tensors == full.tensors


def write_sharded(d, *, drop_shard: str | None = None) -> None:
    shard1 = {k: v for k, v in TENSORS.items() if "layers" not in k}
    shard2 = {k: v for k, v in TENSORS.items() if "layers" in k}
    names = {"model-00001-of-00002.safetensors": shard1, "model-00002-of-00002.safetensors": shard2}
    weight_map = {}
    for fname, tensors in names.items():
        weight_map.update(dict.fromkeys(tensors, fname))
        if fname != drop_shard:
            (d / fname).write_bytes(st_bytes(tensors, {"format": "pt"}))
    total = sum(expected_nbytes(*v) for v in TENSORS.values())
    (d / "model.safetensors.index.json").write_text(json.dumps({"metadata": {"total_size": total}, "weight_map": weight_map}))


def test_two_shard_index(tmp_path):
    write_sharded(tmp_path)
    for target in (tmp_path, tmp_path / "model.safetensors.index.json"):
        m = read_safetensors_model(target)
        assert [f for f, _ in m.files] == ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]
        assert sorted(t.name for t in m.tensors) == sorted(TENSORS)
        assert m.nbytes == m.index_metadata["total_size"] == sum(expected_nbytes(*v) for v in TENSORS.values())
        assert all(h.metadata == {"format": "pt"} for _, h in m.files)


def test_missing_shard_named(tmp_path):
    write_sharded(tmp_path, drop_shard="model-00002-of-00002.safetensors")
    with pytest.raises(OomkitError, match="shard 'model-00002-of-00002.safetensors' listed in weight_map is missing"):
        read_safetensors_model(tmp_path)


def test_index_names_tensor_absent_from_shard(tmp_path):
    write_sharded(tmp_path)
    idx = tmp_path / "model.safetensors.index.json"
    doc = json.loads(idx.read_text())
    doc["weight_map"]["ghost.weight"] = "model-00001-of-00002.safetensors"
    idx.write_text(json.dumps(doc))
    with pytest.raises(OomkitError, match="puts tensor 'ghost.weight' in 'model-00001-of-00002.safetensors'"):
        read_safetensors_model(tmp_path)


def test_duplicate_across_shards(tmp_path):
    (tmp_path / "a.safetensors").write_bytes(st_bytes({"x": ("F32", [1])}))
    (tmp_path / "b.safetensors").write_bytes(st_bytes({"x": ("F32", [1])}))
    with pytest.raises(OomkitError, match="'x' appears in both 'a.safetensors' and 'b.safetensors'"):
        read_safetensors_model(tmp_path)


def test_directory_without_index(tmp_path):
    (tmp_path / "a.safetensors").write_bytes(st_bytes({"x": ("F32", [1])}))
    (tmp_path / "b.safetensors").write_bytes(st_bytes({"y": ("BF16", [4])}))
    m = read_safetensors_model(tmp_path)
    assert [t.name for t in m.tensors] == ["x", "y"] and m.nbytes == 12 and m.index_metadata == {}


def test_index_path_escape_and_bad_index(tmp_path):
    idx = tmp_path / "model.safetensors.index.json"
    idx.write_text(json.dumps({"weight_map": {"x": "../evil.safetensors"}}))
    with pytest.raises(OomkitError, match="leaves the model directory"):
        read_safetensors_model(tmp_path)
    idx.write_text(json.dumps({"weight_map": {}}))
    with pytest.raises(OomkitError, match="no 'weight_map'"):
        read_safetensors_model(idx)
    idx.write_text("{not json")
    with pytest.raises(OomkitError, match="corrupt safetensors index: invalid JSON"):
        read_safetensors_model(idx)


def test_empty_directory_and_missing_file(tmp_path):
    with pytest.raises(OomkitError, match="no .safetensors files"):
        read_safetensors_model(tmp_path)
    with pytest.raises(OomkitError, match="no such file"):
        read_safetensors_model(tmp_path / "nope.safetensors")


T = {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}
BAD = {
    "gguf": (b"GGUF\x03\x00\x00\x00" + bytes(32), "not a safetensors file \\(header length"),
    "too_big": (struct.pack("<Q", 100_000_001), "header length 100000001 > 100000000"),
    "not_json": (raw_file(b"{oops"), "invalid JSON"),
    "not_utf8": (raw_file(b'{"\xff": 1}'), "not valid UTF-8"),
    "not_object": (raw_file(b"[1, 2]"), "JSON is not an object"),
    "deep": (raw_file(b"[" * 100_000 + b"]" * 100_000), "invalid JSON"),
    "dup_key": (raw_file(b'{"a": {}, "a": {}}'), "duplicate key 'a'"),
    "dtype": (raw_file({"x": {**T, "dtype": "F12"}}), "unsupported safetensors dtype 'F12' for tensor 'x'"),
    "no_shape": (raw_file({"x": {"dtype": "F32", "data_offsets": [0, 8]}}), "tensor 'x' has no 'shape'"),
    "neg_shape": (raw_file({"x": {**T, "shape": [-2]}}), "tensor 'x' has shape"),
    "bool_shape": (raw_file({"x": {**T, "shape": [True]}}), "tensor 'x' has shape"),
    "float_shape": (raw_file({"x": {**T, "shape": [2.0]}}), "tensor 'x' has shape"),
    "offsets": (raw_file({"x": {**T, "data_offsets": [8, 0]}}), "data_offsets \\[8, 0\\]"),
    "offsets_len": (raw_file({"x": {**T, "data_offsets": [0]}}), "data_offsets \\[0\\]"),
    "size": (raw_file({"x": {**T, "data_offsets": [0, 9]}}), "is F32 \\[2\\] = 8 bytes but its data_offsets span 9"),
    "sub_byte": (raw_file({"x": {"dtype": "F4", "shape": [3], "data_offsets": [0, 1]}}), "= 1.5 bytes"),
    "gap": (raw_file({"x": T, "y": {**T, "data_offsets": [9, 17]}}), "tensor 'y' starts at data offset 9, expected 8"),
    "overlap": (raw_file({"x": T, "y": {**T, "data_offsets": [4, 12]}}), "starts at data offset 4, expected 8"),
    "not_from_0": (raw_file({"x": {**T, "data_offsets": [8, 16]}}), "starts at data offset 8, expected 0"),
    "meta": (raw_file({"__metadata__": {"a": 1}}), "__metadata__ must map strings to strings"),
    "info": (raw_file({"x": [1]}), "tensor 'x' is not an object"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_input(case, tmp_path):
    data, pattern = BAD[case]
    with pytest.raises(OomkitError, match=pattern) as e:
        parse_safetensors_header(data, name="x.safetensors")
    assert not isinstance(e.value, NeedMoreBytes)
    assert "\n" not in str(e.value) and str(e.value).startswith("x.safetensors: ")
    p = tmp_path / "bad.safetensors"
    p.write_bytes(data)
    with pytest.raises(OomkitError) as e:
        read_safetensors_header(p)
    assert str(e.value).startswith(f"{p}: ") and not isinstance(e.value, NeedMoreBytes)


def test_file_shorter_than_header_length(tmp_path):
    p = tmp_path / "short.safetensors"
    p.write_bytes(st_bytes(TENSORS)[:50])
    with pytest.raises(OomkitError, match="truncated safetensors header: needs \\d+ bytes but the file has 50"):
        read_safetensors_header(p)
    p.write_bytes(b"\x01\x02")
    with pytest.raises(OomkitError, match="not a safetensors file: 2 bytes"):
        read_safetensors_header(p)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=300), st.integers(0, 300), st.integers(0, 255))
def test_fuzz_only_oomkit_errors(data, pos, byte):
    base = bytearray(st_bytes(TENSORS))
    base[pos % len(base)] = byte
    for buf in (data, bytes(base), bytes(base[: pos + 8])):
        try:
            parse_safetensors_header(buf)
        except OomkitError as e:
            assert "\n" not in str(e)


def test_names_with_newlines_stay_one_line():
    with pytest.raises(OomkitError) as e:
        parse_safetensors_header(raw_file({"a\nb": {**T, "dtype": "X"}}))
    assert "\n" not in str(e.value) and "'a\\nb'" in str(e.value)
