"""ggml tensor types: enum id, block size and bytes per block.

Hand-written so the CLI need not import `gguf` (and numpy) at start-up; tests/test_quant_ggml.py checks it
against `gguf.constants.GGML_QUANT_SIZES`. Sources:
  ids:          llama.cpp@0c1e57098 ggml/include/ggml.h:enum ggml_type
  block/bytes:  llama.cpp@0c1e57098 ggml/src/ggml.c:type_traits (blck_size, type_size = sizeof(block_*)),
                struct sizes from the static_asserts in ggml/src/ggml-common.h
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from oomkit.errors import OomkitError


@dataclass(frozen=True)
class GgmlType:
    name: str  # ggml_type_name(): lower case, K-quants keep their capital K ("q4_K")
    id: int  # GGML_TYPE_* (what a GGUF tensor info stores)
    block_size: int  # elements per block
    type_size: int  # bytes per block
    quantized: bool

    @property
    def bits_per_weight(self) -> float:
        return 8.0 * self.type_size / self.block_size


def _t(name: str, id_: int, block: int, size: int, quantized: bool = True) -> GgmlType:
    return GgmlType(name, id_, block, size, quantized)


_QK_K = 256  # ggml-common.h: QK_K

# (name, id, block elements, block bytes); sizes are sizeof(block_*) per ggml-common.h's static_asserts.
TYPES: tuple[GgmlType, ...] = (
    _t("f32", 0, 1, 4, False),
    _t("f16", 1, 1, 2, False),
    _t("q4_0", 2, 32, 18),  # half d + 16 nibble bytes
    _t("q4_1", 3, 32, 20),  # half d, m + 16
    _t("q5_0", 6, 32, 22),  # half d + u32 high bits + 16
    _t("q5_1", 7, 32, 24),
    _t("q8_0", 8, 32, 34),  # half d + 32 int8
    _t("q8_1", 9, 32, 36),  # half d, s + 32 int8 (activation-only type)
    _t("q2_K", 10, _QK_K, 84),
    _t("q3_K", 11, _QK_K, 110),
    _t("q4_K", 12, _QK_K, 144),
    _t("q5_K", 13, _QK_K, 176),
    _t("q6_K", 14, _QK_K, 210),
    _t("q8_K", 15, _QK_K, 292),  # float d + 256 int8 + 16 int16 bsums (activation-only type)
    _t("iq2_xxs", 16, _QK_K, 66),
    _t("iq2_xs", 17, _QK_K, 74),
    _t("iq3_xxs", 18, _QK_K, 98),
    _t("iq1_s", 19, _QK_K, 50),
    _t("iq4_nl", 20, 32, 18),
    _t("iq3_s", 21, _QK_K, 110),
    _t("iq2_s", 22, _QK_K, 82),
    _t("iq4_xs", 23, _QK_K, 136),
    _t("i8", 24, 1, 1, False),
    _t("i16", 25, 1, 2, False),
    _t("i32", 26, 1, 4, False),
    _t("i64", 27, 1, 8, False),
    _t("f64", 28, 1, 8, False),
    _t("iq1_m", 29, _QK_K, 56),
    _t("bf16", 30, 1, 2, False),
    # 31-33 (Q4_0_4_4 ...) and 36-38 (IQ4_NL_4_4 ...) were removed from GGUF files: runtime repacking now.
    _t("tq1_0", 34, _QK_K, 54),
    _t("tq2_0", 35, _QK_K, 66),
    _t("mxfp4", 39, 32, 17),  # e8m0 scale byte + 16 bytes of fp4
    _t("nvfp4", 40, 64, 36),  # 4 e4m3 scales (one per 16) + 32 bytes of fp4
    _t("q1_0", 41, 128, 18),  # half d + 16 bytes of 1-bit
    _t("q2_0", 42, 64, 18),  # half d + 16 bytes of 2-bit
)

_BY_NAME = {t.name.lower(): t for t in TYPES}
_BY_ID = {t.id: t for t in TYPES}
# ids ggml retired; a GGUF that carries one is named as such in the error
REMOVED_IDS = {4: "Q4_2", 5: "Q4_3", 31: "Q4_0_4_4", 32: "Q4_0_4_8", 33: "Q4_0_8_8", 36: "IQ4_NL_4_4",
               37: "IQ4_NL_4_8", 38: "IQ4_NL_8_8"}

# llama.cpp@0c1e57098 common/arg.cpp:kv_cache_types — the values -ctk / -ctv accept.
KV_CACHE_TYPES: tuple[str, ...] = ("f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1")


def names() -> tuple[str, ...]:
    return tuple(t.name for t in TYPES)


def type_by_name(name: str | GgmlType) -> GgmlType:
    """Case-insensitive ("Q4_K", "q4_k", "F16", "bf16"); also accepts a GgmlType unchanged."""
    if isinstance(name, GgmlType):
        return name
    t = _BY_NAME.get(str(name).strip().lower())
    if t is None:
        raise OomkitError(f"unknown ggml type {name!r}; valid: {', '.join(names())}")
    return t


def find_by_id(type_id: int) -> GgmlType | None:
    return _BY_ID.get(int(type_id))


def type_by_id(type_id: int) -> GgmlType:
    t = _BY_ID.get(int(type_id))
    if t is None:
        raise OomkitError(f"unknown ggml type id {type_id}; valid: {', '.join(str(i) for i in sorted(_BY_ID))}")
    return t


def kv_cache_type(name: str) -> GgmlType:
    """A -ctk/-ctv value; llama.cpp matches ggml_type_name() exactly, we forgive the case."""
    t = type_by_name(name)
    if t.name not in KV_CACHE_TYPES:
        raise OomkitError(f"unsupported KV cache type {name!r}; valid: {', '.join(KV_CACHE_TYPES)}")
    return t


def row_bytes(type_: str | GgmlType, n_elements: int) -> int:
    """llama.cpp@0c1e57098 ggml/src/ggml.c:ggml_row_size — type_size * ne / blck_size, ne a whole number of blocks."""
    t = type_by_name(type_)
    if n_elements % t.block_size:
        raise OomkitError(f"{n_elements} elements is not a whole number of {t.name} blocks of {t.block_size}")
    return n_elements // t.block_size * t.type_size


def tensor_bytes(type_: str | GgmlType, shape: Iterable[int]) -> int:
    """ggml_nbytes of a contiguous tensor; shape in GGUF order (ne0, the row, first)."""
    dims = tuple(int(d) for d in shape) or (1,)  # a 0-d tensor holds one element
    n = row_bytes(type_, dims[0])
    for d in dims[1:]:
        n *= d
    return n
