"""Generators of hostile model files for the hostile-input tests: GGUF headers written byte by byte (so a count
may say anything), safetensors files, config.json texts, special files (FIFOs, device links), and a runner that
holds `python -m oomkit` to the one-line / exit-2 / time / memory promise.

The GGUF layout is gguf.cpp's (see src/oomkit/model/gguf_header.py); values are given as (type, value) pairs
so a test can write a field in any type, and a count (n_kv, n_tensors, a string or array length) can be
overridden to lie about what follows.
"""

from __future__ import annotations

import json
import os
import resource
import struct
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

# GGUF value types (ggml/include/gguf.h enum gguf_type)
U8, I8, U16, I16, U32, I32, F32, BOOL, STR, ARR, U64, I64, F64 = range(13)
_FMT = {U8: "<B", I8: "<b", U16: "<H", I16: "<h", U32: "<I", I32: "<i", F32: "<f", BOOL: "<?", U64: "<Q",
        I64: "<q", F64: "<d"}
# ggml types: id -> (block elements, block bytes) (ggml.c type_traits)
F32_T, F16_T, Q4_0_T, Q8_0_T = 0, 1, 2, 8
_GGML = {F32_T: (1, 4), F16_T: (1, 2), Q4_0_T: (32, 18), Q8_0_T: (32, 34)}
ALIGN = 32

Meta = Sequence[tuple[str, int, object]]  # (key, GGUF type, value); arrays: (key, ARR, (element type, values))
Tensors = Sequence[tuple[str, tuple[int, ...], int]]  # (name, ne (ne0 first), ggml type)


def _str(s: str | bytes) -> bytes:
    b = s.encode() if isinstance(s, str) else s
    return struct.pack("<Q", len(b)) + b


def _value(vtype: int, value) -> bytes:
    if vtype == STR:
        return _str(value)
    if vtype == ARR:
        etype, items = value
        items = list(items)
        body = b"".join(_value(etype, x) for x in items)
        return struct.pack("<IQ", etype, len(items)) + body
    return struct.pack(_FMT[vtype], value)


def tensor_nbytes(ne: Sequence[int], ggml_type: int) -> int:
    block, size = _GGML.get(ggml_type, (1, 0))  # a type id no ggml has: no data
    n = 1
    for d in ne:
        n *= d
    return n // block * size


def gguf_header(meta: Meta, tensors: Tensors = (), *, n_kv: int | None = None, n_tensors: int | None = None,
                version: int = 3) -> tuple[bytes, int]:
    """(the header bytes padded to the data section, the data section's size)."""
    out = [b"GGUF", struct.pack("<IqQ", version, len(tensors) if n_tensors is None else n_tensors,
                                len(meta) if n_kv is None else n_kv)]
    for key, vtype, value in meta:
        out.append(_str(key) + struct.pack("<I", vtype) + _value(vtype, value))
    offset = 0
    for name, ne, gtype in tensors:
        out.append(_str(name) + struct.pack("<I", len(ne)) + struct.pack(f"<{len(ne)}q", *ne)
                   + struct.pack("<iQ", gtype, offset))
        offset += -(-tensor_nbytes(ne, gtype) // ALIGN) * ALIGN
    head = b"".join(out)
    if tensors:
        head += bytes(-len(head) % ALIGN)
    return head, offset


def write_gguf(path: Path, meta: Meta, tensors: Tensors = (), *, full: bool = True, cut: int | None = None,
               **kw) -> Path:
    """The header, then the data as a sparse hole (`full`), or the file cut to `cut` bytes."""
    head, data = gguf_header(meta, tensors, **kw)
    with open(path, "wb") as f:
        f.write(head)
        if full:
            f.truncate(len(head) + data)
    if cut is not None:
        os.truncate(path, cut)
    return path


@dataclass(frozen=True)
class Llama:
    """A tiny Llama-shaped model: the fields and tensors llama.cpp's llama loader reads."""

    n_layers: int = 2
    n_embd: int = 64
    n_head: int = 4
    n_head_kv: int = 2
    n_ff: int = 128
    n_vocab: int = 256
    arch: str = "llama"

    def meta(self, **override) -> list[tuple[str, int, object]]:
        a = self.arch
        fields = {f"{a}.block_count": (U32, self.n_layers), f"{a}.embedding_length": (U32, self.n_embd),
                  f"{a}.feed_forward_length": (U32, self.n_ff), f"{a}.attention.head_count": (U32, self.n_head),
                  f"{a}.attention.head_count_kv": (U32, self.n_head_kv), f"{a}.context_length": (U32, 4096),
                  f"{a}.rope.dimension_count": (U32, self.n_embd // self.n_head),
                  f"{a}.attention.layer_norm_rms_epsilon": (F32, 1e-5), "general.file_type": (U32, 2)}
        for k, v in override.items():
            key = k if "." in k and k.split(".")[0] in ("general", "tokenizer", "split", a) else f"{a}.{k}"
            if v is None:
                fields.pop(key, None)
            else:
                fields[key] = v
        return [("general.architecture", STR, a), *((k, t, v) for k, (t, v) in fields.items())]

    def tensors(self, n_layers: int | None = None) -> list[tuple[str, tuple[int, ...], int]]:
        e, ff, hd = self.n_embd, self.n_ff, self.n_embd // self.n_head
        out = [("token_embd.weight", (e, self.n_vocab), Q4_0_T)]
        for i in range(self.n_layers if n_layers is None else n_layers):
            out += [(f"blk.{i}.attn_norm.weight", (e,), F32_T), (f"blk.{i}.attn_q.weight", (e, e), Q4_0_T),
                    (f"blk.{i}.attn_k.weight", (e, self.n_head_kv * hd), Q4_0_T),
                    (f"blk.{i}.attn_v.weight", (e, self.n_head_kv * hd), Q4_0_T),
                    (f"blk.{i}.attn_output.weight", (e, e), Q4_0_T), (f"blk.{i}.ffn_norm.weight", (e,), F32_T),
                    (f"blk.{i}.ffn_gate.weight", (e, ff), Q4_0_T), (f"blk.{i}.ffn_up.weight", (e, ff), Q4_0_T),
                    (f"blk.{i}.ffn_down.weight", (ff, e), Q4_0_T)]
        return out + [("output_norm.weight", (e,), F32_T), ("output.weight", (e, self.n_vocab), Q8_0_T)]

    def write(self, path: Path, *, tensors: Tensors | None = None, **override) -> Path:
        return write_gguf(path, self.meta(**override), self.tensors() if tensors is None else tensors)


# ----------------------------------------------------------------------------------------------------------
# config.json and safetensors


def llama_config(**override) -> dict:
    """A small Llama config.json (transformers LlamaConfig field names)."""
    cfg = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 64,
           "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
           "vocab_size": 256, "max_position_embeddings": 4096, "torch_dtype": "bfloat16",
           "tie_word_embeddings": False}
    for k, v in override.items():
        if v is None:
            cfg.pop(k, None)
        else:
            cfg[k] = v
    return cfg


def write_config(directory: Path, cfg: dict | str, name: str = "config.json") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    p = directory / name
    p.write_text(cfg if isinstance(cfg, str) else json.dumps(cfg))
    return p


def safetensors_bytes(tensors: Iterable[tuple[str, list[int]]], dtype: str = "BF16", size: int = 2,
                      header: dict | None = None) -> bytes:
    """A safetensors file: u64 header length, the JSON header (`header` given as is), the data as zeros."""
    doc, off = {"__metadata__": {"format": "pt"}}, 0
    for name, shape in tensors:
        n = size
        for d in shape:
            n *= d
        doc[name] = {"dtype": dtype, "shape": shape, "data_offsets": [off, off + n]}
        off += n
    raw = json.dumps(doc if header is None else header).encode()
    raw += b" " * (-len(raw) % 8)
    return struct.pack("<Q", len(raw)) + raw + bytes(off)


def write_safetensors(path: Path, tensors: Iterable[tuple[str, list[int]]], dtype: str = "BF16", size: int = 2,
                      header: dict | None = None) -> Path:
    """A safetensors file with its data as a sparse hole (a 70B shard costs no disk)."""
    doc, off = {"__metadata__": {"format": "pt"}}, 0
    for name, shape in tensors:
        n = size
        for d in shape:
            n *= d
        doc[name] = {"dtype": dtype, "shape": shape, "data_offsets": [off, off + n]}
        off += n
    raw = json.dumps(doc if header is None else header).encode()
    raw += b" " * (-len(raw) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)) + raw)
        f.truncate(8 + len(raw) + off)
    return path


LLAMA_70B = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 8192,
             "intermediate_size": 28672, "num_hidden_layers": 80, "num_attention_heads": 64, "num_key_value_heads": 8,
             "vocab_size": 128256, "max_position_embeddings": 131072, "torch_dtype": "bfloat16",
             "tie_word_embeddings": False, "rope_theta": 500000.0, "rms_norm_eps": 1e-05}
"""Llama 3.1 70B's config.json fields (meta-llama/Llama-3.1-70B-Instruct, as the catalog holds it)."""


def llama_safetensors(cfg: dict, layers: Iterable[int] | None = None) -> list[tuple[str, list[int]]]:
    """transformers' Llama tensor names and shapes for `layers` (all by default)."""
    h, ff, v = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    kv = cfg["num_key_value_heads"] * h // cfg["num_attention_heads"]
    out = [("model.embed_tokens.weight", [v, h])]
    for i in (range(cfg["num_hidden_layers"]) if layers is None else layers):
        p = f"model.layers.{i}."
        out += [(p + "input_layernorm.weight", [h]), (p + "self_attn.q_proj.weight", [h, h]),
                (p + "self_attn.k_proj.weight", [kv, h]), (p + "self_attn.v_proj.weight", [kv, h]),
                (p + "self_attn.o_proj.weight", [h, h]), (p + "post_attention_layernorm.weight", [h]),
                (p + "mlp.gate_proj.weight", [ff, h]), (p + "mlp.up_proj.weight", [ff, h]),
                (p + "mlp.down_proj.weight", [h, ff])]
    return out + [("model.norm.weight", [h]), ("lm_head.weight", [v, h])]


def deep_json(depth: int) -> str:
    return '{"model_type": "llama", "x": ' + "[" * depth + "]" * depth + "}"


# ----------------------------------------------------------------------------------------------------------
# running the CLI


@dataclass(frozen=True)
class Run:
    args: tuple[str, ...]
    rc: int
    stdout: str
    stderr: str
    seconds: float
    max_rss_mb: float

    def describe(self) -> str:
        return (f"oomkit {' '.join(self.args)[:200]}: rc={self.rc} in {self.seconds:.2f} s, {self.max_rss_mb:.0f} MB; "
                f"stderr={self.stderr[-600:]!r}")


def run_oomkit(*args: str, timeout: float = 10.0, stdin=None, env: dict | None = None, cwd=None) -> Run:
    """`python -m oomkit ARGS` in a child process, with its wall time and peak memory (VmHWM of its own
    address space, read by a wrapper: ru_maxrss would carry the parent's peak across a vfork + exec). A run past `timeout` is killed and reported as rc -9."""
    wrapper = ("import resource, runpy, sys\n"
               "sys.argv = ['oomkit', *sys.argv[1:]]\n"
               "try:\n"
               "    runpy.run_module('oomkit', run_name='__main__')\n"
               "finally:\n"
               "    sys.stderr.flush()\n"
               "    import os\n"
               "    hwm = [l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM:')]\n"
               "    os.write(2, b'\\n@@maxrss ' + (hwm[0] if hwm else str(resource.getrusage(resource.RUSAGE_SELF)"
               ".ru_maxrss)).encode() + b'\\n')\n")
    full_env = {**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})}
    t0 = time.monotonic()
    try:
        p = subprocess.run([sys.executable, "-c", wrapper, *args], capture_output=True, text=True, timeout=timeout,
                           stdin=stdin, env=full_env, cwd=cwd)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc, out = -9, (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        err = (e.stderr or b"").decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
    seconds = time.monotonic() - t0
    rss = 0.0
    if "\n@@maxrss " in err:
        err, _, tail = err.rpartition("\n@@maxrss ")
        rss = int(tail.split()[0]) / 1024  # Linux reports KiB
        err = err.rstrip("\n") + ("\n" if err.strip() else "")
    else:
        rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return Run(tuple(args), rc, out, err, seconds, rss)


MAX_SECONDS = 3.0  # interpreter start (~0.5 s on a loaded 2-core machine) plus well under a second of work
MAX_RSS_MB = 200


def assert_refused(r: Run, pattern: str | None = None, *, seconds: float = MAX_SECONDS, rc: int = 2) -> str:
    """Exit `rc` with exactly one line on stderr, no traceback, within the time and memory bounds; returns it."""
    import re

    assert r.rc == rc, r.describe()
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.describe()
    assert r.seconds < seconds, r.describe()
    assert r.max_rss_mb < MAX_RSS_MB, r.describe()
    if pattern is not None:
        assert re.search(pattern, lines[0]), f"{pattern!r} not in {lines[0]!r}"
    return lines[0]
