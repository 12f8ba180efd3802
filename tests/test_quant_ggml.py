"""The hand-written ggml type table against the gguf package and llama.cpp's own sizes."""

import pytest

from oomkit.errors import OomkitError
from oomkit.quant import ggml


def test_table_matches_gguf_package():
    gguf = pytest.importorskip("gguf")
    from gguf.constants import GGML_QUANT_SIZES

    checked = 0
    for qt in gguf.GGMLQuantizationType:
        t = ggml.type_by_id(qt.value)
        assert t.name.lower() == qt.name.lower()
        if qt.name == "Q8_1":
            # gguf-py still lists the old q8_1 block (two fp32: 40 bytes); ggml's block_q8_1 is two halves
            # + 32 int8 = 36 (llama.cpp@0c1e57098 ggml/src/ggml-common.h static_assert). Never stored in files.
            assert GGML_QUANT_SIZES[qt] == (32, 40) and (t.block_size, t.type_size) == (32, 36)
            continue
        assert (t.block_size, t.type_size) == GGML_QUANT_SIZES[qt], qt.name
        checked += 1
    assert checked >= 33


@pytest.mark.parametrize(
    "name,block,size",
    [("q4_0", 32, 18), ("q8_0", 32, 34), ("q4_K", 256, 144), ("q6_K", 256, 210), ("iq4_xs", 256, 136),
     ("mxfp4", 32, 17), ("nvfp4", 64, 36), ("q1_0", 128, 18), ("q2_0", 64, 18), ("bf16", 1, 2)],
)
def test_known_blocks(name, block, size):
    t = ggml.type_by_name(name)
    assert (t.block_size, t.type_size) == (block, size)


def test_lookup_is_case_insensitive():
    assert ggml.type_by_name("Q4_K") is ggml.type_by_name("q4_k") is ggml.type_by_id(12)
    assert ggml.type_by_name("F16").id == 1
    assert ggml.type_by_name("BF16").bits_per_weight == 16


def test_unknown_names_list_valid_ones():
    with pytest.raises(OomkitError) as e:
        ggml.type_by_name("q4_z")
    msg = str(e.value)
    assert "\n" not in msg and "q4_K" in msg and "iq4_xs" in msg
    with pytest.raises(OomkitError):
        ggml.type_by_id(31)  # Q4_0_4_4, removed from files


def test_row_and_tensor_bytes():
    assert ggml.row_bytes("q4_K", 4096) == 16 * 144
    assert ggml.row_bytes("f16", 4096) == 8192
    assert ggml.tensor_bytes("q8_0", (4096, 4096)) == 4096 * 128 * 34
    assert ggml.tensor_bytes("q6_K", (4096, 128256)) == 128256 * 16 * 210
    assert ggml.tensor_bytes("mxfp4", (2880, 2880, 32)) == 2880 * 32 * 90 * 17
    assert ggml.tensor_bytes("f32", (4096,)) == 16384
    with pytest.raises(OomkitError):
        ggml.row_bytes("q4_K", 4000)


def test_kv_cache_types():
    assert ggml.KV_CACHE_TYPES == ("f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1")
    assert ggml.kv_cache_type("Q8_0").name == "q8_0"
    with pytest.raises(OomkitError):
        ggml.kv_cache_type("q4_K")
