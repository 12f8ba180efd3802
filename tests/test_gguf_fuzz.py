"""Fuzz the GGUF header reader: random bytes and mutated real headers may only ever raise OomkitError,
quickly and without allocating what a corrupt count asks for."""

from __future__ import annotations

import struct
import time
import tracemalloc

import gguf
import numpy as np
import pytest
from gguf import GGMLQuantizationType as Q
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oomkit.errors import OomkitError
from oomkit.model.gguf_header import parse_gguf_header, read_gguf_header

MAX_SECONDS = 2.0  # a hang guard (a huge count must not loop); the speed itself is measured in bench/
MAX_PEAK_BYTES = 32 << 20
TENSOR_NAMES = ["token_embd.weight", "blk.0.attn_norm.weight", "blk.0.attn_q.weight", "output.weight"]


def _build_base(path) -> bytes:
    w = gguf.GGUFWriter(path, "llama")
    w.add_uint32("llama.block_count", 1)
    w.add_float32("llama.attention.layer_norm_rms_epsilon", 1e-5)
    w.add_bool("llama.use_parallel_residual", True)
    w.add_string("tokenizer.chat_template", "{{ messages }}")
    w.add_key_value("llama.attention.head_count_kv", [8, 4], gguf.GGUFValueType.ARRAY,
                    sub_type=gguf.GGUFValueType.UINT32)
    w.add_key_value("general.tags", ["a", "bc"], gguf.GGUFValueType.ARRAY, sub_type=gguf.GGUFValueType.STRING)
    w.add_token_list([f"t{i}" for i in range(120)])
    w.add_token_scores([0.0] * 120)
    w.add_token_merges([f"t {i}" for i in range(60)])
    w.add_tensor(TENSOR_NAMES[0], np.zeros((120, 144), dtype=np.uint8), raw_dtype=Q.Q4_K)
    w.add_tensor(TENSOR_NAMES[1], np.zeros(256, dtype=np.float32))
    w.add_tensor(TENSOR_NAMES[2], np.zeros((256, 272), dtype=np.uint8), raw_dtype=Q.Q8_0)
    w.add_tensor(TENSOR_NAMES[3], np.zeros((120, 210), dtype=np.uint8), raw_dtype=Q.Q6_K)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    data = open(path, "rb").read()
    h = parse_gguf_header(data)
    return data[: h.data_offset + 64]  # the header plus a little data: what a ranged read would see


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    d = tmp_path_factory.mktemp("fuzz")
    data = _build_base(d / "base.gguf")
    hot = [8, 16]  # n_tensors, n_kv
    for n in (120, 60, 2):  # array counts sit right after their element type
        for et in (8, 6, 4):
            i = data.find(struct.pack("<IQ", et, n))
            if i >= 0:
                hot.append(i + 4)
    for name in TENSOR_NAMES:  # n_dims, first dim, and (for 1-D) type/offset of each tensor info
        i = data.find(name.encode()) + len(name)
        hot += [i, i + 4, i + 12, i - len(name) - 8]
    return data, sorted(set(hot)), d / "case.gguf"


HUGE = [2**60, 2**63 - 1, 2**64 - 1, 2**32, 2**31, 2**30 + 1, 2**28, 0xFFFFFFFF, 5, 0]


def _check(data: bytes, path) -> None:
    """Both entry points either parse or raise OomkitError, fast and small."""
    path.write_bytes(data)
    for fn, arg in ((parse_gguf_header, data), (read_gguf_header, path)):
        tracemalloc.start()
        t0 = time.perf_counter()
        try:
            fn(arg)
        except OomkitError as e:
            assert "\n" not in str(e)
        finally:
            elapsed = time.perf_counter() - t0
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        assert elapsed < MAX_SECONDS, f"{fn.__name__} took {elapsed:.3f}s"
        assert peak < MAX_PEAK_BYTES, f"{fn.__name__} peaked at {peak} bytes"


def _mutate(data: bytes, hot: list[int], ops) -> bytes:
    buf = bytearray(data)
    for kind, a, b, extra in ops:
        if not buf:
            break
        pos = (hot[a % len(hot)] if kind.endswith("_hot") else a) % len(buf)
        if kind == "flip":
            buf[pos] ^= 1 << (b % 8)
        elif kind == "set":
            buf[pos] = b % 256
        elif kind == "truncate":
            del buf[pos:]
        elif kind == "insert":
            buf[pos:pos] = extra
        elif kind == "delete":
            del buf[pos:pos + 1 + b % 16]
        elif kind.startswith("u64"):
            buf[pos:pos + 8] = struct.pack("<Q", HUGE[b % len(HUGE)])
        elif kind.startswith("u32"):
            buf[pos:pos + 4] = struct.pack("<I", HUGE[b % len(HUGE)] & 0xFFFFFFFF)
    return bytes(buf)


OPS = st.lists(
    st.tuples(
        st.sampled_from(["flip", "set", "truncate", "insert", "delete", "u64", "u32", "u64_hot", "u32_hot"]),
        st.integers(0, 1 << 16),
        st.integers(0, 255),
        st.binary(min_size=1, max_size=12),
    ),
    min_size=1,
    max_size=4,
)
SETTINGS = settings(max_examples=700, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@SETTINGS
@given(st.binary(max_size=600))
def test_random_bytes(base, data):
    _check(data, base[2])


@SETTINGS
@given(st.integers(2, 3), st.integers(0, 2**64 - 1), st.integers(0, 2**64 - 1), st.binary(max_size=400))
def test_random_after_valid_preamble(base, version, n_tensors, n_kv, rest):
    _check(b"GGUF" + struct.pack("<IQQ", version, n_tensors, n_kv) + rest, base[2])


@SETTINGS
@given(OPS)
def test_mutated_real_header(base, ops):
    data, hot, path = base
    _check(_mutate(data, hot, ops), path)


def test_base_parses(base):
    h = parse_gguf_header(base[0])
    assert [t.name for t in h.tensors] == TENSOR_NAMES
