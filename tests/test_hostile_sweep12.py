"""Hostile input, twelfth sweep: 30 malformed inputs none of the earlier hostile tests tries in this form.
GGUF headers whose metadata has the wrong type for what llama.cpp reads (a string or a bool layer count, a NaN
float context, a negative int64 width, an empty per-layer array, an architecture that is a number, a type id gguf.h
does not have, arrays of arrays), a tensor of 9 dimensions or of ggml type 255, a version-4 header; config.json with
NaN / Infinity / 1e30 / negative / string / bool values in the fields memory comes from, a float128 dtype, a
negative YaRN factor, 3 KV heads for 4 query heads; a model name with a NUL, a GPU name with a right-to-left override,
an em dash where a flag's "--" goes, -c 0, --max-model-len -1, a tensor-parallel size of 3 on two GPUs, -ngl abc,
--gpu-memory-utilization 1.5; binary garbage, nothing and a 4 MiB single line to diagnose. Each must answer
correctly or exit 2 with one `oomkit: error:` line, never a traceback.

Measured (2026-12-06), before this sweep's change: no traceback, and 27 of the 30 right. Three were wrong: a GPU name
with a right-to-left override ("H<U+202E>100", shown as "H001") was read as an H100 (rc 0; hardware/catalog.py drops
format characters, now refuses bidirectional controls as it refuses control characters); a GGUF whose
embedding_length is an int64 -64 was refused for a field derived from it ("rope.dimension_count = 16 is more than
attention.key_length = -16"), and one whose general.architecture is a u32 as lacking the key: both now name the
damaged key and its value (model/checks.py, model/gguf_file.py).
"""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path

import pytest

from tests import hostile as H
from tests.sweep_harness import offline, one_line_or_answer, run_cli  # noqa: F401 (autouse: no network)

L = H.Llama()


def _gguf(tmp: Path, **override) -> list[str]:
    return ["estimate", str(L.write(tmp / "m.gguf", **override)), "--vram", "24GiB"]


def _gguf_raw(tmp: Path, raw: bytes) -> list[str]:
    p = tmp / "m.gguf"
    p.write_bytes(raw)
    return ["estimate", str(p), "--vram", "24GiB"]


def _with_kv(key: str, vtype: int, payload: bytes) -> bytes:
    """A header of the small Llama's metadata, then one more key of type `vtype` with `payload` as its value."""
    meta = L.meta()
    head = [b"GGUF", struct.pack("<IqQ", 3, 0, len(meta) + 1)]
    for k, t, v in meta:
        head.append(H._str(k) + struct.pack("<I", t) + H._value(t, v))
    head.append(H._str(key) + struct.pack("<I", vtype) + payload)
    return b"".join(head)


def _odd_tensor(tmp: Path, ne: tuple[int, ...], gtype: int) -> list[str]:
    """The small Llama's tensors with one more at the end of the table (so every offset before it is right): `ne`
    of ggml type `gtype`."""
    tensors = L.tensors()
    out, off = [b"GGUF", struct.pack("<IqQ", 3, len(tensors) + 1, len(L.meta()))], 0
    for k, t, v in L.meta():
        out.append(H._str(k) + struct.pack("<I", t) + H._value(t, v))
    for name, shape, gt in [*tensors, ("blk.0.odd.weight", ne, gtype)]:
        out.append(H._str(name) + struct.pack("<I", len(shape)) + struct.pack(f"<{len(shape)}q", *shape)
                   + struct.pack("<iQ", gt, off))
        if gt in H._GGML:
            off += -(-H.tensor_nbytes(shape, gt) // H.ALIGN) * H.ALIGN
    raw = b"".join(out)
    raw += bytes(-len(raw) % H.ALIGN)
    p = tmp / "m.gguf"
    with open(p, "wb") as f:
        f.write(raw)
        f.truncate(len(raw) + off + 4096)
    return ["estimate", str(p), "--vram", "24GiB"]


def _config(tmp: Path, **override) -> list[str]:
    H.write_config(tmp / "m", json.dumps(H.llama_config(**override)))
    return ["estimate", str(tmp / "m"), "--engine", "vllm", "--vram", "80GiB"]


def _config_text(tmp: Path, text: str) -> list[str]:
    H.write_config(tmp / "m", text)
    return ["estimate", str(tmp / "m"), "--engine", "vllm", "--vram", "80GiB"]


_BASE = json.dumps(H.llama_config())[:-1]

# (id, argv from tmp_path, stdin or None, (what, words)): "refuses" -> exit 2 and the line matches `words`
# (a regex); "answers" -> exit 0 / 1 and the output matches `words`
CASES = [
    # ---- GGUF metadata of a type llama.cpp does not read the field as (llama-model-loader.cpp get_key /
    # get_arr_n: GGUFMeta::GKV<T>::validate_type throws "key %s has wrong type %s but expected type %s") ----
    ("gguf-block-count-str", lambda t: _gguf(t, block_count=(H.STR, "2")), None,
     ("refuses", r"llama\.block_count = '2' is not a non-negative integer")),
    ("gguf-ctx-f32-nan", lambda t: _gguf(t, context_length=(H.F32, float("nan"))), None,
     ("refuses", r"llama\.context_length = nan is not a non-negative integer")),
    # was: "llama.rope.dimension_count = 16 is more than attention.key_length = -16" (a field derived from it)
    ("gguf-embd-i64-neg", lambda t: _gguf(t, embedding_length=(H.I64, -64)), None,
     ("refuses", r"llama\.embedding_length = -64 is not a non-negative integer")),
    ("gguf-head-count-empty-arr", lambda t: _gguf(t, **{"attention.head_count": (H.ARR, (H.U32, []))}), None,
     ("refuses", r"llama\.attention\.head_count must hold 2 non-negative integers")),
    # was: "GGUF lacks general.architecture" (it is there, a u32)
    ("gguf-arch-u32", lambda t: _gguf_raw(t, H.gguf_header([("general.architecture", H.U32, 7),
                                                              *L.meta()[1:]])[0]), None,
     ("refuses", r"general\.architecture = 7 is not a string")),
    ("gguf-type-99", lambda t: _gguf_raw(t, _with_kv("general.odd", 99, b"\x00" * 8)), None,
     ("refuses", r"key 'general\.odd' has invalid value type 99")),
    ("gguf-array-of-arrays", lambda t: _gguf_raw(t, _with_kv("general.nested", H.ARR, struct.pack("<IQ", H.ARR, 1)
                                                             + struct.pack("<IQ", H.U32, 1) + struct.pack("<I", 7))),
     None, ("refuses", r"key 'general\.nested' is an array of arrays")),
    ("gguf-tensor-9-dims", lambda t: _odd_tensor(t, (64, 1, 1, 1, 1, 1, 1, 1, 1), H.F32_T), None,
     ("refuses", r"tensor 'blk\.0\.odd\.weight' has 9 dims \(GGML_MAX_DIMS is 4\)")),
    ("gguf-tensor-type-255", lambda t: _odd_tensor(t, (64,), 255), None,
     ("refuses", r"tensor 'blk\.0\.odd\.weight' has ggml type 255")),
    ("gguf-version-4", lambda t: _gguf_raw(t, H.gguf_header(L.meta(), L.tensors(), version=4)[0]), None,
     ("refuses", r"GGUF version 4 is newer")),
    # ---- config.json values in memory's fields ----
    ("cfg-kv-heads-nan", lambda t: _config_text(t, _BASE + ', "num_key_value_heads": NaN}'), None,
     ("refuses", r"'num_key_value_heads' is NaN")),
    ("cfg-head-dim-inf", lambda t: _config_text(t, _BASE + ', "head_dim": Infinity}'), None,
     ("refuses", r"'head_dim' is Infinity")),
    ("cfg-heads-str", lambda t: _config(t, num_attention_heads="4"), None,
     ("refuses", r"num_attention_heads='4' is not a non-negative integer")),
    ("cfg-vocab-1e30", lambda t: _config_text(t, _BASE + ', "vocab_size": 1e30}'), None,
     ("refuses", r"vocab_size = 1e\+30 is more than")),
    ("cfg-kv-heads-neg", lambda t: _config(t, num_key_value_heads=-2), None,
     ("refuses", r"num_key_value_heads=-2 is not a non-negative integer")),
    ("cfg-max-pos-bool", lambda t: _config(t, max_position_embeddings=True), None,
     ("refuses", r"max_position_embeddings=True is not a non-negative integer")),
    ("cfg-dtype-float128", lambda t: _config(t, torch_dtype="float128"), None,
     ("refuses", r"unknown weight dtype 'float128'")),
    ("cfg-yarn-factor-neg", lambda t: _config(t, rope_scaling={"rope_type": "yarn", "factor": -4.0,
                                                               "original_max_position_embeddings": 4096}), None,
     ("refuses", r"rope_scaling\.factor=-4\.0 is not a positive number")),
    ("cfg-kv-heads-3-of-4", lambda t: _config(t, num_key_value_heads=3), None,
     ("refuses", r"num_key_value_heads=3 does not divide num_attention_heads=4")),
    # ---- names and flags ----
    ("name-nul", lambda t: ["check", "Qwen/Qwen3-8B\x00", "--vram", "24GiB"], None,
     ("refuses", r"unknown model 'Qwen/Qwen3-8B\\x00'")),
    # "H<RLO>100" shows as "H001"; was: read as an H100, rc 0
    ("gpu-rtl-override", lambda t: ["check", "Qwen/Qwen3-8B", "--gpu", "H\u202e100"], None,
     ("refuses", r"bidirectional control")),
    ("flag-em-dash", lambda t: ["check", "--vram", "24GiB", "--", "llama-server", "-hf", "Qwen/Qwen3-8B-GGUF:Q4_K_M",
                                "\u2014ctx-size", "4096"], None, ("refuses", "invalid argument: \u2014ctx-size")),
    # -c 0: the trained context (common/arg.cpp "0 = loaded from model"), Qwen3-8B's 40,960
    ("llama-c-0", lambda t: ["check", "--vram", "24GiB", "--json", "--", "llama-server", "-hf",
                             "Qwen/Qwen3-8B-GGUF:Q4_K_M", "-c", "0"], None, ("answers", r'"n_ctx": 40960')),
    # vLLM PR #29431: --max-model-len -1 (or auto) is the longest context that fits; Qwen3-8B's whole 40,960 does on
    # an H100
    ("vllm-max-model-len-neg1", lambda t: ["check", "--gpu", "H100", "--", "vllm", "serve", "Qwen/Qwen3-8B",
                                           "--max-model-len", "-1"], None,
     ("answers", r"context 40960 \(the model's maximum\)")),
    ("vllm-tp3-on-2", lambda t: ["check", "--gpu", "2x H100", "--", "vllm", "serve", "Qwen/Qwen3-8B",
                                 "--tensor-parallel-size", "3"], None,
     ("refuses", r"attention heads \(32\) must be divisible by tensor parallel size \(3\)")),
    ("llama-ngl-abc", lambda t: ["check", "--vram", "24GiB", "--", "llama-server", "-hf", "Qwen/Qwen3-8B-GGUF:Q4_K_M",
                                 "-ngl", "abc"], None, ("refuses", r"-ngl 'abc': not an integer")),
    ("vllm-gmu-1.5", lambda t: ["check", "--gpu", "H100", "--", "vllm", "serve", "Qwen/Qwen3-8B",
                                "--gpu-memory-utilization", "1.5"], None,
     ("refuses", r"1\.5: out of range; vLLM takes \(0, 1\]")),
    # ---- diagnose ----
    ("diag-binary", lambda t: ["diagnose", "-"], bytes((i * 97 + 13) % 256 for i in range(65536)).decode("latin-1"),
     ("refuses", r"stdin: not text")),
    ("diag-empty", lambda t: ["diagnose", "-"], "", ("refuses", r"stdin: empty: nothing to diagnose")),
    ("diag-huge-line", lambda t: ["diagnose", "-"], "x" * (4 << 20), ("answers", None)),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_a_malformed_input_answers_or_refuses_in_one_line(tmp_path, case):
    cid, make, stdin, (what, words) = case
    rc, out, err = run_cli(*make(tmp_path), stdin=stdin)
    one_line_or_answer(rc, err, cid)
    if what == "refuses":
        assert rc == 2, (cid, rc, out[:300])
        if words:
            assert re.search(words, err), (cid, err)
    else:
        assert rc in (0, 1), (cid, err)
        if words:
            assert re.search(words, out), (cid, out[:600])


def test_the_sweep_counts():
    assert len(CASES) == 30 and len({c[0] for c in CASES}) == 30
