"""ggml tensor types: enum id, block size and bytes per block.

Hand-written so the CLI need not import `gguf` (and numpy) at start-up; tests/test_quant_ggml.py checks it
against `gguf.constants.GGML_QUANT_SIZES`. Sources:
  ids:          llama.cpp@0c1e57098 ggml/include/ggml.h:enum ggml_type
  block/bytes:  llama.cpp@0c1e57098 ggml/src/ggml.c:type_traits (blck_size, type_size = sizeof(block_*)),
                struct sizes from the static_asserts in ggml/src/ggml-common.h
The ik_llama.cpp fork's own types (IK_TYPES, ids upstream lacks) from ikawrakow/ik_llama.cpp@8337e4cd:
ggml/include/ggml.h enum ggml_type, ggml/src/ggml-common.h block structs, ggml/src/ggml.c type_traits
(blck_size, type_size, row_meta_size).
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
    # ik_llama.cpp type_traits.row_meta_size: bytes each row carries before its blocks (a row scale);
    # ik ggml.c ggml_row_size = row_meta_size + type_size * ne / blck_size. 0 for every upstream type.
    row_meta: int = 0
    fork: str = ""  # "ik_llama.cpp" for a type only that fork has (upstream llama.cpp cannot load it)

    @property
    def bits_per_weight(self) -> float:
        return 8.0 * self.type_size / self.block_size


def _t(name: str, id_: int, block: int, size: int, quantized: bool = True) -> GgmlType:
    return GgmlType(name, id_, block, size, quantized)


def _ik(name: str, id_: int, block: int, size: int, row_meta: int = 0, quantized: bool = True) -> GgmlType:
    return GgmlType(name, id_, block, size, quantized, row_meta, IK)


IK = "ik_llama.cpp"


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

# ik_llama.cpp@8337e4cd's types beyond upstream's: (type_name, GGML_TYPE_* id, blck_size, type_size, row_meta_size)
# as ggml/src/ggml.c type_traits gives them; type_size is sizeof(block_*) from ggml-common.h (fields summed here,
# QK_K = 256, half = 2 bytes). The _R4/_R8/_R16 kinds interleave 4/8/16 rows but type_traits sizes them per row
# with the plain block (sizeof(block_q2_K) for q2_k_r4 ...), so a row costs what the plain type's does.
IK_TYPES: tuple[GgmlType, ...] = (
    # activation (vec_dot) types: never written by llama-quantize, listed so an id is never "unknown"
    _ik("q8_0_x4", 97, 32, 34),  # block_q8_0
    _ik("q8_1_x4", 98, 32, 36),  # block_q8_1
    _ik("q8_2_x4", 99, 32, 36),  # block_q8_2: half d + int16 s + 32 int8
    _ik("q6_0", 133, 32, 26),  # block_q6_0: half d + qh[8] + qs[16]
    _ik("iq1_bn", 134, 64, 13, 2),  # block_iq1_bn: ql[12] + extra; QK_IQ1BN 64
    _ik("iq2_bn", 135, 64, 16, 4),  # block_iq2_bn: qs[64/4]
    _ik("q8_K64", 136, 64, 68),  # block_q8_K64: float d + 64 int8 (activation)
    _ik("iq2_k", 137, _QK_K, 76),  # block_iq2_k: half d + u16 extra + scales[8] + qs[64]
    _ik("iq3_k", 138, _QK_K, 110),  # block_iq3_k: half d + u16 extra + u16 scales_h + scales_l[8] + qs[64] + qh[32]
    _ik("iq4_k", 139, _QK_K, 144),  # block_iq4_k: half d + u16 extra + scales_h[4] + scales_l[8] + qs[128]
    _ik("iq5_k", 140, _QK_K, 176),  # block_iq5_k: iq4_k's 144 + qh[32]
    _ik("iq6_k", 141, _QK_K, 212),  # block_iq6_k: half d + u16 extra + scales[16] + qs[128] + qh[64]
    # 142 IQ2_TN, 143 IQ1_TN: deprecated in ggml.h (no type_traits entry)
    _ik("iq4_ks", 144, _QK_K, 136, 4),  # block_iq4_ks: scales[8] + qs[128]; row_meta_size 4
    _ik("iq2_ks", 145, _QK_K, 70, 2),  # block_iq2_ks: u16 extra + scales[4] + qs[64]; row meta 2
    _ik("iq4_kss", 146, _QK_K, 128, 4),  # block_iq4_kss: u32 qs[32]
    _ik("q8_K16", 147, 64, 64, 20),  # activation
    _ik("q8_K32", 148, _QK_K, 296),  # block_q8_K (ik: 2 floats + 256 int8 + 16 int16), activation
    _ik("q8_KR8", 149, _QK_K, 296),  # block_q8_K, activation
    _ik("q8_K128", 150, 128, 140),  # block_q8_K128: float d + 4 int16 + 128 int8, activation
    _ik("q8_KV", 151, 32, 32, 8),  # type_traits: blck_size 32, type_size 32, row_meta_size 8
    _ik("iq5_ks", 152, _QK_K, 168, 4),  # block_iq5_ks: scales[8] + qs[128] + qh[32]
    _ik("iq2_kt", 153, _QK_K, 68, 4),  # block_iq2_kt: scales[4] + ql[64]
    _ik("iq3_kt", 154, _QK_K, 100, 4),  # block_iq3_kt: scales[4] + ql[64] + qh[32]
    _ik("iq4_kt", 155, _QK_K, 128, 4),  # block_iq4_kt: u32 qs[32]
    _ik("iq3_ks", 156, _QK_K, 102, 2),  # block_iq3_ks: u16 extra + scales[4] + qs[64] + qh[32]
    _ik("iq2_kl", 157, _QK_K, 86, 2),  # block_iq2_kl: u16 scales_h + scales_l[4] + qs[64] + qh[16]
    _ik("iq1_kt", 158, _QK_K, 56, 4),  # block_iq1_kt: sh[8] + ql[32] + qh[16]
    _ik("q4_0_r8", 202, 32, 18),  # type_traits: QK4_NL, sizeof(block_iq4_nl)
    _ik("q5_0_r4", 206, 32, 22),  # block_q5_0
    _ik("q8_0_r8", 208, 32, 34),  # block_q8_0
    _ik("q2_k_r4", 210, _QK_K, 84),  # block_q2_K
    _ik("q3_k_r4", 211, _QK_K, 110),  # block_q3_K
    _ik("q4_k_r4", 212, _QK_K, 144),  # block_q4_K
    _ik("q5_k_r4", 213, _QK_K, 176),  # block_q5_K
    _ik("q6_k_r4", 214, _QK_K, 210),  # block_q6_K
    _ik("iq2_xxs_r4", 216, _QK_K, 66),  # block_iq2_xxs
    _ik("iq2_xs_r4", 217, _QK_K, 74),  # block_iq2_xs
    _ik("iq3_xxs_r4", 218, _QK_K, 98),  # block_iq3_xxs
    _ik("iq1_s_r4", 219, 32, 6, 2),  # sizeof(block_iq1_s_r4) / 4: (qs[16] + u16 qh[4]) / 4
    _ik("iq4_nl_r4", 220, 32, 18),  # block_iq4_nl
    _ik("iq3_s_r4", 221, _QK_K, 110),  # block_iq3_s
    _ik("iq2_s_r4", 222, _QK_K, 82),  # block_iq2_s
    _ik("iq4_xs_r8", 223, _QK_K, 136),  # block_iq4_xs
    _ik("iq1_m_r4", 229, 32, 7, 2),  # sizeof(block_iq1_m_r4) / 4: (qs[16] + qh[8] + scales[4]) / 4
    _ik("bf16_r16", 230, 1, 2, quantized=False),
    _ik("q6_0_r4", 233, 32, 26),  # block_q6_0
    _ik("iq2_bn_r4", 335, 64, 16, 4),  # block_iq2_bn
    _ik("iq2_k_r4", 337, _QK_K, 76),  # block_iq2_k
    _ik("iq3_k_r4", 338, _QK_K, 110),  # block_iq3_k
    _ik("iq4_k_r4", 339, _QK_K, 144),  # block_iq4_k
    _ik("iq5_k_r4", 340, _QK_K, 176),  # block_iq5_k
    _ik("iq4_ks_r4", 344, _QK_K, 136, 4),  # block_iq4_ks
    _ik("iq5_ks_r4", 352, _QK_K, 168, 4),  # block_iq5_ks
    _ik("mxfp4_r8", 353, 32, 17),  # block_mxfp4
    _ik("q8_k_r16", 397, _QK_K, 258),  # sizeof(block_q8_k_r16) / 16: (16 halves + 16 x 256 int8) / 16
    _ik("q8_KV_r8", 398, 32, 32, 4),
    _ik("q8_k_r8", 399, _QK_K, 258),  # sizeof(block_q8_k_r8) / 8: (8 halves + 8 x 256 int8) / 8
)
# ik's ids that upstream also has keep upstream's sizes (q1_0 = ik's q1_0_g128 at 41: 128 elements, 18 bytes).
# Ids upstream removed that ik_llama.cpp@8337e4cd's ggml.h still defines (36: Microsoft BitNet's I2_S, whose
# ggml_nbytes is a special case): refused as REMOVED_IDS, the message naming what ik reads there.
IK_READS_REMOVED = {31: "Q4_0_4_4", 32: "Q4_0_4_8", 33: "Q4_0_8_8", 36: "I2_S"}

_BY_NAME = {t.name.lower(): t for t in TYPES}
_BY_ID = {t.id: t for t in TYPES}
_IK_BY_ID = {t.id: t for t in IK_TYPES}
_IK_BY_NAME = {t.name.lower(): t for t in IK_TYPES}
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
    if t is None and (ik := _IK_BY_NAME.get(str(name).strip().lower())) is not None:
        raise OomkitError(f"ggml type {name!r} is ik_llama.cpp's ({ik.name}, id {ik.id}); upstream llama.cpp has no "
                          "such type")
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


def ik_type_by_id(type_id: int) -> GgmlType | None:
    """An ik_llama.cpp type id upstream ggml lacks (IQ4_KSS, IQ2_K_R4, Q8_0_R8 ...), or None."""
    return _IK_BY_ID.get(int(type_id))


def ik_type_by_name(name: str) -> GgmlType | None:
    return _IK_BY_NAME.get(str(name).strip().lower())


def any_type_by_id(type_id: int) -> GgmlType | None:
    """Upstream's type for the id, else ik_llama.cpp's (their ids do not overlap: IK_TYPES holds only ik's own)."""
    return _BY_ID.get(int(type_id)) or _IK_BY_ID.get(int(type_id))


def kv_cache_type(name: str) -> GgmlType:
    """A -ctk/-ctv value; llama.cpp matches ggml_type_name() exactly, we forgive the case."""
    t = type_by_name(name)
    if t.name not in KV_CACHE_TYPES:
        raise OomkitError(f"unsupported KV cache type {name!r}; valid: {', '.join(KV_CACHE_TYPES)}")
    return t


def row_bytes(type_: str | GgmlType, n_elements: int) -> int:
    """llama.cpp@0c1e57098 ggml/src/ggml.c:ggml_row_size — type_size * ne / blck_size, ne a whole number of blocks;
    ik_llama.cpp@8337e4cd's ggml_row_size adds the type's row_meta_size (a GgmlType from IK_TYPES)."""
    t = type_by_name(type_)
    if n_elements % t.block_size:
        raise OomkitError(f"{n_elements} elements is not a whole number of {t.name} blocks of {t.block_size}")
    return t.row_meta + n_elements // t.block_size * t.type_size


def tensor_bytes(type_: str | GgmlType, shape: Iterable[int]) -> int:
    """ggml_nbytes of a contiguous tensor; shape in GGUF order (ne0, the row, first). ik_llama.cpp's ggml_nbytes:
    ggml_row_size(ne0) (its row meta included) times the rows, as here."""
    dims = tuple(int(d) for d in shape) or (1,)  # a 0-d tensor holds one element
    n = row_bytes(type_, dims[0])
    for d in dims[1:]:
        n *= d
    return n
