"""ik_llama.cpp's own GGUF quant types (IQ4_KSS, IQ2_K, IQ3_KT, IQ2_K_R4, Q8_0_R8 ...): sized exactly, and refused
in one line for upstream llama.cpp, which cannot load them.

Sources (ikawrakow/ik_llama.cpp@8337e4cd): ggml/include/ggml.h enum ggml_type (the ids), ggml/src/ggml-common.h
(the block structs, summed field by field below by hand, QK_K = 256, ggml_half = 2 bytes), ggml/src/ggml.c
type_traits (blck_size, type_size, row_meta_size) and ggml_row_size = row_meta_size + type_size * ne / blck_size,
ggml_nbytes = ggml_row_size(ne0) x rows. Upstream's refusal: llama.cpp@0c1e57098 ggml/src/gguf.cpp
gguf_init_from_file_impl, "tensor '%s' has invalid ggml type %d. should be in [0, %d)" with GGML_TYPE_COUNT 43.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from oomkit.cli import main
from oomkit.errors import OomkitError
from oomkit.model.gguf_file import read_gguf_spec
from oomkit.model.gguf_header import read_gguf_header
from oomkit.quant import ggml, gguf_recipes

QK_K = 256
HALF, U16, U32, F32 = 2, 2, 4, 4

# (type name, ggml.h id, elements a block, bytes a block summed from the ggml-common.h struct, row_meta_size)
HAND = [
    # block_iq2_k: ggml_half d; uint16_t extra; uint8_t scales[QK_K/32]; uint8_t qs[QK_K/4]
    ("iq2_k", 137, QK_K, HALF + U16 + QK_K // 32 + QK_K // 4, 0),
    # block_iq3_k: ggml_half d; uint16_t extra; uint16_t scales_h; uint8_t scales_l[QK_K/32]; qs[QK_K/4]; qh[QK_K/8]
    ("iq3_k", 138, QK_K, HALF + U16 + U16 + QK_K // 32 + QK_K // 4 + QK_K // 8, 0),
    # block_iq4_k: ggml_half d; uint16_t extra; uint8_t scales_h[QK_K/64]; scales_l[QK_K/32]; qs[QK_K/2]
    ("iq4_k", 139, QK_K, HALF + U16 + QK_K // 64 + QK_K // 32 + QK_K // 2, 0),
    # block_iq5_k: iq4_k's fields + uint8_t qh[QK_K/8]
    ("iq5_k", 140, QK_K, HALF + U16 + QK_K // 64 + QK_K // 32 + QK_K // 2 + QK_K // 8, 0),
    # block_iq6_k: ggml_half d; uint16_t extra; int8_t scales[QK_K/16]; uint8_t qs[QK_K/2]; uint8_t qh[QK_K/4]
    ("iq6_k", 141, QK_K, HALF + U16 + QK_K // 16 + QK_K // 2 + QK_K // 4, 0),
    # block_iq4_ks: uint8_t scales[QK_K/32]; uint8_t qs[QK_K/2]; type_traits row_meta_size 4
    ("iq4_ks", 144, QK_K, QK_K // 32 + QK_K // 2, 4),
    # block_iq2_ks: uint16_t extra; uint8_t scales[QK_K/64]; uint8_t qs[QK_K/4]; row_meta_size 2
    ("iq2_ks", 145, QK_K, U16 + QK_K // 64 + QK_K // 4, 2),
    # block_iq4_kss: uint32_t qs[QK_K/8]; row_meta_size 4
    ("iq4_kss", 146, QK_K, U32 * (QK_K // 8), 4),
    # block_iq5_ks: uint8_t scales[QK_K/32]; uint8_t qs[QK_K/2]; uint8_t qh[QK_K/8]; row_meta_size 4
    ("iq5_ks", 152, QK_K, QK_K // 32 + QK_K // 2 + QK_K // 8, 4),
    # block_iq2_kt: uint8_t scales[QK_K/64]; uint8_t ql[QK_K/4]; row_meta_size 4
    ("iq2_kt", 153, QK_K, QK_K // 64 + QK_K // 4, 4),
    # block_iq3_kt: uint8_t scales[QK_K/64]; uint8_t ql[QK_K/4]; uint8_t qh[QK_K/8]; row_meta_size 4
    ("iq3_kt", 154, QK_K, QK_K // 64 + QK_K // 4 + QK_K // 8, 4),
    # block_iq4_kt: uint32_t qs[QK_K/8]; row_meta_size 4
    ("iq4_kt", 155, QK_K, U32 * (QK_K // 8), 4),
    # block_iq3_ks: uint16_t extra; uint8_t scales[QK_K/64]; uint8_t qs[QK_K/4]; uint8_t qh[QK_K/8]; row meta 2
    ("iq3_ks", 156, QK_K, U16 + QK_K // 64 + QK_K // 4 + QK_K // 8, 2),
    # block_iq2_kl: uint16_t scales_h; uint8_t scales_l[QK_K/64]; qs[QK_K/4]; qh[QK_K/16]; row meta 2
    ("iq2_kl", 157, QK_K, U16 + QK_K // 64 + QK_K // 4 + QK_K // 16, 2),
    # block_iq1_kt: uint8_t sh[QK_K/32]; uint8_t ql[QK_K/8]; uint8_t qh[QK_K/16]; row_meta_size 4
    ("iq1_kt", 158, QK_K, QK_K // 32 + QK_K // 8 + QK_K // 16, 4),
    # block_q6_0 (QK6_0 32): ggml_half d; uint8_t qh[QK6_0/4]; uint8_t qs[QK6_0/2]
    ("q6_0", 133, 32, HALF + 32 // 4 + 32 // 2, 0),
    # block_iq1_bn (QK_IQ1BN 64): uint8_t ql[12]; uint8_t extra; row_meta_size 2
    ("iq1_bn", 134, 64, 12 + 1, 2),
    # block_iq2_bn (QK_IQ2BN 64): uint8_t qs[QK_IQ2BN/4]; row_meta_size 4
    ("iq2_bn", 135, 64, 64 // 4, 4),
    # the interleaved-row types: type_traits sizes a row with the plain struct
    ("iq2_k_r4", 337, QK_K, HALF + U16 + QK_K // 32 + QK_K // 4, 0),  # sizeof(block_iq2_k)
    ("iq4_ks_r4", 344, QK_K, QK_K // 32 + QK_K // 2, 4),  # sizeof(block_iq4_ks)
    ("q8_0_r8", 208, 32, HALF + 32, 0),  # sizeof(block_q8_0): ggml_half d; int8_t qs[QK8_0]
    ("q4_k_r4", 212, QK_K, 2 * HALF + 12 + QK_K // 2, 0),  # sizeof(block_q4_K): d, dmin, scales[12], qs[QK_K/2]
    ("q6_k_r4", 214, QK_K, QK_K // 2 + QK_K // 4 + QK_K // 16 + HALF, 0),  # block_q6_K: ql, qh, scales, d
    ("iq4_xs_r8", 223, QK_K, HALF + U16 + QK_K // 64 + QK_K // 2, 0),  # block_iq4_xs
    # blck_size 32, type_size sizeof(block_iq1_s_r4)/4: (uint8_t qs[16]; uint16_t qh[4]) / 4; row meta 2
    ("iq1_s_r4", 219, 32, (16 + U16 * 4) // 4, 2),
    # sizeof(block_iq1_m_r4)/4: (uint8_t qs[16]; uint8_t qh[8]; uint8_t scales[4]) / 4; row meta 2
    ("iq1_m_r4", 229, 32, (16 + 8 + 4) // 4, 2),
    # sizeof(block_q8_k_r8)/8: (ggml_half d[8]; int8_t qs[8*QK_K]) / 8
    ("q8_k_r8", 399, QK_K, (8 * HALF + 8 * QK_K) // 8, 0),
    ("mxfp4_r8", 353, 32, 1 + 32 // 2, 0),  # sizeof(block_mxfp4): uint8_t e; uint8_t qs[QK_MXFP4/2]
]


@pytest.mark.parametrize("name, type_id, block, size, meta", HAND, ids=[h[0] for h in HAND])
def test_block_bytes_from_the_struct(name, type_id, block, size, meta):
    t = ggml.ik_type_by_id(type_id)
    assert t is not None and t.fork == "ik_llama.cpp"
    assert (t.name, t.block_size, t.type_size, t.row_meta) == (name, block, size, meta)
    assert ggml.ik_type_by_name(name.upper()) is t
    # one 4096-wide row: row_meta_size + 4096 / blck_size blocks
    assert ggml.row_bytes(t, 4096) == meta + 4096 // block * size


def test_ik_ids_never_shadow_upstream():
    upstream = {t.id for t in ggml.TYPES} | set(ggml.REMOVED_IDS)
    ik = [t.id for t in ggml.IK_TYPES]
    assert len(set(ik)) == len(ik) and not upstream & set(ik)
    assert ggml.find_by_id(146) is None  # upstream's table stays upstream's
    with pytest.raises(OomkitError, match="ik_llama.cpp's"):
        ggml.type_by_name("IQ4_KSS")


# a few types for a whole file: (name, ggml.h id, block, hand bytes a block, row meta)
FILE_TYPES = [h for h in HAND if h[0] in ("iq4_kss", "iq2_ks", "iq2_k", "iq3_kt", "q8_0_r8", "iq1_s_r4")]

# Llama-3.1-8B's block shapes (hidden 4096, 8 KV heads x 128, FFN 14336), ne0 first
SHAPES = {"attn_q.weight": (4096, 4096), "attn_k.weight": (4096, 1024), "attn_v.weight": (4096, 1024),
          "attn_output.weight": (4096, 4096), "ffn_gate.weight": (4096, 14336), "ffn_up.weight": (4096, 14336),
          "ffn_down.weight": (14336, 4096)}
N_VOCAB = 256


def _hand_bytes(ne: tuple[int, ...], block: int, size: int, meta: int) -> int:
    rows = int(np.prod(ne[1:]))
    return rows * (meta + ne[0] // block * size)


def _write(path: Path, type_id: int, block: int, size: int, meta: int) -> dict[str, int]:
    """A 2-layer llama GGUF whose block matrices carry `type_id` (a raw id gguf-py does not know), embeddings and
    norms f32; its data a sparse hole of the hand-computed sizes. Returns each tensor's hand bytes."""
    gguf = pytest.importorskip("gguf")
    w = gguf.GGUFWriter(path, "llama")
    w.add_block_count(2)
    w.add_context_length(8192)
    w.add_embedding_length(4096)
    w.add_feed_forward_length(14336)
    w.add_head_count(32)
    w.add_head_count_kv(8)
    w.add_rope_dimension_count(128)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_vocab_size(N_VOCAB)
    tensors: list[tuple[str, tuple[int, ...], int, int]] = [
        ("token_embd.weight", (4096, N_VOCAB), 0, 4096 * N_VOCAB * F32),
        ("output_norm.weight", (4096,), 0, 4096 * F32),
        ("output.weight", (4096, N_VOCAB), 0, 4096 * N_VOCAB * F32)]
    for i in range(2):
        tensors += [(f"blk.{i}.attn_norm.weight", (4096,), 0, 4096 * F32),
                    (f"blk.{i}.ffn_norm.weight", (4096,), 0, 4096 * F32)]
        tensors += [(f"blk.{i}.{n}", ne, type_id, _hand_bytes(ne, block, size, meta)) for n, ne in SHAPES.items()]
    for name, ne, tid, nbytes in tensors:
        w.add_tensor_info(name, tuple(reversed(ne)), np.dtype(np.float32), nbytes, raw_dtype=tid)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    fout = w.fout[0]
    start = gguf.GGUFWriter.ggml_pad(fout.tell(), w.data_alignment)
    fout.truncate(start + sum(gguf.GGUFWriter.ggml_pad(t[3], w.data_alignment) for t in tensors))
    w.close()
    return {t[0]: t[3] for t in tensors}


@pytest.mark.parametrize("name, type_id, block, size, meta", FILE_TYPES, ids=[h[0] for h in FILE_TYPES])
def test_file_read_back_with_exact_weight_bytes(tmp_path, name, type_id, block, size, meta):
    path = tmp_path / f"llama-{name}.gguf"
    hand = _write(path, type_id, block, size, meta)
    header = read_gguf_header(path)
    assert not header.is_truncated  # the offsets written from the hand sizes are the ones oomkit expects
    assert {t.name: t.nbytes for t in header.tensors} == hand
    spec = read_gguf_spec(path, ik_types=True)
    assert {t.name: t.nbytes for t in spec.weights.tensors} == hand
    assert spec.weights.nbytes == sum(hand.values())
    assert {t.dtype for t in spec.weights.tensors if t.layer is not None and len(t.shape) == 2} == {name}


def test_iq4_kss_attn_q_by_hand(tmp_path):
    """A 4096 x 4096 IQ4_KSS matrix: 4096 rows of 4 bytes of row meta + 16 blocks of 128 bytes = 8,404,992."""
    _write(tmp_path / "kss.gguf", 146, QK_K, 128, 4)
    q = next(t for t in read_gguf_header(tmp_path / "kss.gguf").tensors if t.name == "blk.0.attn_q.weight")
    assert q.nbytes == 4096 * (4 + 16 * 128) == 8_404_992


@pytest.mark.parametrize("engine", ["llama.cpp", "ollama"])
def test_upstream_engines_refuse_in_one_line(tmp_path, capsys, engine):
    path = tmp_path / "kss.gguf"
    _write(path, 146, QK_K, 128, 4)
    assert main(["estimate", str(path), "--engine", engine]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert "14 tensors" in err and "ik_llama.cpp's quant types" in err and "IQ4_KSS (ggml type 146) x14" in err
    assert "upstream llama.cpp cannot load" in err
    assert "tensor 'blk.0.attn_q.weight' has invalid ggml type 146. should be in [0, 43)" in err


def test_cli_never_tracebacks(tmp_path):
    path = tmp_path / "iq2k.gguf"
    _write(path, 137, QK_K, 76, 0)
    r = subprocess.run([sys.executable, "-m", "oomkit", "estimate", str(path), "--engine", "llama.cpp"],
                       capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "IQ2_K (ggml type 137)" in r.stderr and len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("tag, words", [
    ("IQ4_KSS", "file type 148: ggml type iq4_kss, 4 bits per weight + 4 bytes a row"),
    ("iq2_k_r4", "file type 338: ggml type iq2_k_r4, 2.375 bits per weight"),
    ("IQ3_KL", "file type 146: a mix of that fork's ggml types"),
    ("Q8_0_R8", "file type 207: ggml type q8_0_r8, 8.5 bits per weight"),
])
def test_quant_tag_refusal(tag, words):
    """ik_llama.cpp@8337e4cd examples/quantize/quantize.cpp QUANT_OPTIONS -> include/llama.h LLAMA_FTYPE_MOSTLY_*."""
    msg = gguf_recipes.ik_quant_refusal(tag)
    assert msg is not None and "\n" not in msg
    assert words in msg and "is ik_llama.cpp's" in msg and "upstream llama.cpp cannot load it" in msg


def test_upstream_quant_names_are_not_ik():
    for name in (*gguf_recipes.known_quant_names(), "Q4_K", "MXFP4"):
        assert gguf_recipes.ik_quant_refusal(name) is None, name


def test_llamacpp_itself_refuses_the_file(tmp_path, capsys):
    """llama.cpp (llama-cpp-python 0.3.36's build, run on this CPU) stops at the tensor type with the very line
    oomkit's refusal quotes."""
    pytest.importorskip("llama_cpp")
    from tests.groundtruth import llamacpp_run

    path = tmp_path / "kss.gguf"
    _write(path, 146, QK_K, 128, 4)
    r = llamacpp_run.measure(path, cache=False, n_ctx=512)
    assert (r["ok"], r["stage"]) == (False, "model")
    assert r["error"] == "tensor 'blk.0.attn_q.weight' has invalid ggml type 146. should be in [0, 43)"
    assert main(["estimate", str(path), "--engine", "llama.cpp"]) == 2
    assert f'"{r["error"]}"' in capsys.readouterr().err


@pytest.mark.parametrize("type_id, words", [
    (36, "ggml type 36, which ik_llama.cpp reads as I2_S; upstream llama.cpp removed it (it was IQ4_NL_4_4)"),
    (31, "ggml type 31, which ik_llama.cpp reads as Q4_0_4_4; upstream llama.cpp removed it and cannot load"),
])
def test_ids_upstream_removed_and_ik_still_reads(tmp_path, capsys, type_id, words):
    """ik_llama.cpp@8337e4cd ggml.h: GGML_TYPE_Q4_0_4_4 = 31 ... and GGML_TYPE_I2_S = 36 (Microsoft BitNet's);
    llama.cpp@0c1e57098 ggml.c type_traits[31], [36]: "... REMOVED, use ... with runtime repacking"."""
    path = tmp_path / "old.gguf"
    _write(path, type_id, 32, 18, 0)
    assert main(["estimate", str(path), "--engine", "llama.cpp"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and words in err and "corrupt" not in err


@pytest.mark.parametrize("ref", ["llama-3.1-8b:IQ4_KSS", "llama3.1:8b-iq2_k_r4", "meta-llama/Llama-3.1-8B-Instruct:IQ3_KT"])
def test_model_names_with_ik_quants_are_refused_as_ik(capsys, ref):
    """A catalog name, an Ollama tag or an HF id with an ik-only quant names the fork, not "unknown quant tag"."""
    assert main(["estimate", ref]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "is ik_llama.cpp's" in err and "unknown quant tag" not in err
