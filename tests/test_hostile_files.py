"""Hostile files given as the model (issue 12, the FILES family): FIFOs, devices and directories where a file
belongs, files too large to be what they claim, GGUF headers whose counts cannot fit in the file, JSON with NaN /
Infinity / 1e400, nesting 100,000 deep or the wrong top level, over-long path parts, a GGUF piped on /dev/stdin.

Each case runs `python -m oomkit estimate <file>` in a child process under a time limit and holds it to the
promise: exit 2, one line on stderr, no traceback, under 3 s in all (interpreter start included) and 200 MB."""

from __future__ import annotations

import json
import os
import struct
from collections.abc import Callable
from pathlib import Path

import pytest

from tests import hostile as H
from tests.hostile import Llama, assert_refused, run_oomkit

CFG = H.llama_config()


def _fifo(p: Path) -> Path:
    p.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(p)
    return p


def _link(p: Path, target: str | Path) -> Path:
    p.parent.mkdir(parents=True, exist_ok=True)
    p.symlink_to(target)
    return p


def _model_dir(d: Path, cfg: dict | None = None) -> Path:
    H.write_config(d, cfg or CFG)
    return d


def _gguf(d: Path, name: str = "m.gguf", **kw) -> Path:
    return Llama().write(d / name, **kw)


def _raw(d: Path, name: str, data: bytes) -> Path:
    p = d / name
    p.write_bytes(data)
    return p


def _sparse(d: Path, name: str, size: int, head: bytes = b"") -> Path:
    p = d / name
    with open(p, "wb") as f:
        f.write(head)
        f.truncate(size)
    return p


def _gguf_prefix(n_tensors: int, n_kv: int) -> bytes:
    return b"GGUF" + struct.pack("<Iqq", 3, n_tensors, n_kv)


# (id, builder(tmp) -> the model argument, a pattern the one line must hold)
SPECIAL: list[tuple[str, Callable[[Path], Path], str]] = [
    ("fifo.gguf", lambda d: _fifo(d / "x.gguf"), r"FIFO"),
    ("fifo config.json", lambda d: _fifo(d / "config.json"), r"FIFO"),
    ("fifo config.json in a dir", lambda d: (_fifo(d / "m" / "config.json"), d / "m")[1], r"FIFO"),
    ("fifo model.safetensors beside config", lambda d: (_model_dir(d / "m"), _fifo(d / "m" / "model.safetensors"))[0],
     r"FIFO"),
    ("fifo index.json beside config", lambda d: (_model_dir(d / "m"),
                                                 _fifo(d / "m" / "model.safetensors.index.json"))[0], r"FIFO"),
    ("symlink .gguf -> fifo", lambda d: _link(d / "x.gguf", _fifo(d / "pipe")), r"FIFO"),
    ("symlink config.json -> fifo", lambda d: (_link(d / "m" / "config.json", _fifo(d / "pipe")), d / "m")[1],
     r"FIFO"),
    ("config.json -> /dev/zero", lambda d: _link(d / "config.json", "/dev/zero"), r"character device"),
    ("dir/config.json -> /dev/zero", lambda d: (_link(d / "m" / "config.json", "/dev/zero"), d / "m")[1],
     r"character device"),
    ("x.gguf -> /dev/zero", lambda d: _link(d / "x.gguf", "/dev/zero"), r"character device"),
    ("x.gguf -> /dev/urandom", lambda d: _link(d / "x.gguf", "/dev/urandom"), r"character device"),
    ("x.gguf -> /dev/null", lambda d: _link(d / "x.gguf", "/dev/null"), r"character device"),
    ("x.json -> /dev/zero", lambda d: _link(d / "x.json", "/dev/zero"), r"character device"),
    ("model.safetensors -> /dev/zero", lambda d: (_model_dir(d / "m"),
                                                  _link(d / "m" / "model.safetensors", "/dev/zero"))[0],
     r"character device"),
    ("shard -> /dev/zero", lambda d: (_model_dir(d / "m"),
                                      _link(d / "m" / "model-00001-of-00001.safetensors", "/dev/zero"))[0],
     r"character device"),
    ("config.json is a directory", lambda d: ((d / "m" / "config.json").mkdir(parents=True), d / "m")[1],
     r"directory"),
    ("x.gguf is a directory holding nothing", lambda d: ((d / "x.gguf").mkdir(), d / "x.gguf")[1], r"no config"),
    ("config.json is a dangling link", lambda d: (_link(d / "m" / "config.json", d / "nowhere"), d / "m")[1],
     r"no config\.json"),
    ("path part of 300 bytes", lambda d: d / ("a" * 300 + ".gguf"), r"255"),
    ("dir part of 300 bytes", lambda d: d / ("b" * 300) / "config.json", r"255"),
]

CAPS: list[tuple[str, Callable[[Path], Path], str]] = [
    ("config.json of 64 MiB", lambda d: _sparse(d, "config.json", 64 << 20, b'{"model_type": "llama", "x": "'),
     r"MiB"),
    ("config.json of 64 MiB in a dir", lambda d: (_sparse(d / "m" if (d / "m").mkdir() is None else d, "config.json",
                                                          64 << 20, b"{"), d / "m")[1], r"MiB"),
    ("index.json of 200 MiB", lambda d: (_model_dir(d / "m"), _sparse(d / "m", "model.safetensors.index.json",
                                                                      200 << 20, b"{"))[0], r"MiB|larger"),
    ("empty .gguf", lambda d: _raw(d, "x.gguf", b""), r"GGUF|empty"),
    ("3-byte .gguf", lambda d: _raw(d, "x.gguf", b"GGU"), r"GGUF"),
    ("gguf n_kv 2^30 in 24 bytes", lambda d: _raw(d, "x.gguf", _gguf_prefix(0, 1 << 30)), r"bytes"),
    ("gguf n_kv 2^62", lambda d: _raw(d, "x.gguf", _gguf_prefix(0, 1 << 62)), r"key-value count|corrupt"),
    ("gguf n_tensors 2^30", lambda d: _raw(d, "x.gguf", _gguf_prefix(1 << 30, 0)), r"bytes|tensor"),
    ("gguf n_tensors -1", lambda d: _raw(d, "x.gguf", _gguf_prefix(-1, 0)), r"tensor count"),
    ("gguf n_kv 10 million, 1 MiB file", lambda d: _sparse(d, "x.gguf", 1 << 20, _gguf_prefix(0, 10_000_000)),
     r"bytes|keys"),
    ("gguf string of 2^40 bytes", lambda d: _raw(d, "x.gguf", _gguf_prefix(0, 1) + struct.pack("<Q", 1 << 40)),
     r"string|bytes"),
    ("gguf array of 2^29 u32", lambda d: _raw(d, "x.gguf", _gguf_prefix(0, 1) + H._str("a.b")
                                                + struct.pack("<IIQ", H.ARR, H.U32, 1 << 29)), r"bytes"),
    ("gguf array of 2^29 strings", lambda d: _raw(d, "x.gguf", _gguf_prefix(0, 1) + H._str("tokenizer.ggml.tokens")
                                                    + struct.pack("<IIQ", H.ARR, H.STR, 1 << 29)), r"bytes"),
    ("gguf 70,000 keys", lambda d: H.write_gguf(d / "x.gguf", [(f"k.{i}", H.U8, 0) for i in range(70_000)]),
     r"keys|key-value"),
    ("safetensors header length 2^63", lambda d: _raw(d, "model.safetensors", struct.pack("<Q", 1 << 63)),
     r"safetensors"),
    ("safetensors header 90 MB in 1 KiB", lambda d: _raw(d, "model.safetensors", struct.pack("<Q", 90_000_000)
                                                         + b"{" * 1000), r"safetensors"),
]


def _json_case(text: str) -> Callable[[Path], Path]:
    return lambda d: H.write_config(d / "m", text)


_BASE = json.dumps(CFG)[:-1]
JSON: list[tuple[str, Callable[[Path], Path], str]] = [
    *((f"{field}: {bad}", _json_case(_BASE + f', "{field}": {bad}}}'), rf"{field}")
      for field in ("rope_theta", "num_hidden_layers", "hidden_size")
      for bad in ("NaN", "Infinity", "-Infinity", "1e400", "-1e400")),
    ("nested NaN", _json_case(_BASE + ', "rope_scaling": {"factor": NaN}}'), r"rope_scaling\.factor"),
    ("NaN in a list", _json_case(_BASE + ', "layer_types": [1, NaN]}'), r"layer_types"),
    ("nested 100,000 deep", _json_case(H.deep_json(100_000)), r"nest"),
    ("nested 1,000 deep", _json_case(H.deep_json(1_000)), r"nest"),
    ("nested objects 50,000 deep", _json_case('{"a":' * 50_000 + "1" + "}" * 50_000), r"nest"),
    *((f"top level {t}", _json_case(t), r"JSON object") for t in ("[]", "[1, 2]", "1", '"llama"', "null", "true")),
    ("empty", _json_case(""), r"JSON"),
    ("not UTF-8", lambda d: _raw(d, "config.json", b'{"model_type": "\xff\xfe"}'), r"UTF-8"),
    ("binary", lambda d: _raw(d, "config.json", bytes(range(256)) * 4), r"JSON|UTF-8"),
    ("duplicate keys, the last 10^6 layers", _json_case(_BASE + ', "num_hidden_layers": 1000000}'),
     r"num_hidden_layers"),
    ("truncated", _json_case(_BASE), r"JSON"),
    ("huge integer", _json_case(_BASE + ', "num_hidden_layers": ' + "9" * 5000 + "}"), r"num_hidden_layers|digits"),
    ("string of 1 MiB digits", _json_case(_BASE + ', "vocab_size": "' + "9" * (1 << 20) + '"}'), r"vocab_size"),
]

FILES = [*SPECIAL, *CAPS, *JSON]


# Cases whose hostile file is a weight file beside config.json: an engine that loads the checkpoint as published
# (vLLM) reads the safetensors headers; llama.cpp's default GGUF format never opens them.
_CHECKPOINT = ("safetensors", "index.json", "shard")


@pytest.mark.parametrize("case", FILES, ids=[c[0] for c in FILES])
def test_hostile_file_is_refused_in_one_line(case, tmp_path):
    cid, build, pattern = case
    arg = build(tmp_path)
    engine = ["--engine", "vllm"] if any(w in cid for w in _CHECKPOINT) else []
    assert_refused(run_oomkit("estimate", str(arg), *engine, timeout=10), pattern)


def test_valid_gguf_on_stdin_is_read_from_the_pipe(tmp_path):
    p = _gguf(tmp_path)
    ref = run_oomkit("estimate", str(p), "--json", timeout=10)
    assert ref.rc == 0, ref.describe()
    with open(p, "rb") as f:
        piped = run_oomkit("estimate", "/dev/stdin", "--json", stdin=f, timeout=10)
    # the data as a sparse hole: `cat x.gguf |` would send the zeros; a file on stdin is read as the same GGUF
    assert piped.rc == 0, piped.describe()
    a, b = json.loads(ref.stdout), json.loads(piped.stdout)
    assert a["weights_bytes"] == b["weights_bytes"] and a["kv_cache_bytes"] == b["kv_cache_bytes"]


def test_valid_gguf_through_a_pipe(tmp_path):
    import subprocess

    p = _gguf(tmp_path)
    ref = json.loads(run_oomkit("estimate", str(p), "--json").stdout)
    cat = subprocess.Popen(["cat", str(p)], stdout=subprocess.PIPE)
    try:
        piped = run_oomkit("estimate", "/dev/stdin", "--json", stdin=cat.stdout, timeout=10)
    finally:
        cat.stdout.close()
        cat.wait()
    assert piped.rc == 0, piped.describe()
    d = json.loads(piped.stdout)
    assert d["weights_bytes"] == ref["weights_bytes"] and d["kv_cache_bytes"] == ref["kv_cache_bytes"]
    assert {k: v for k, v in d["model"].items() if k not in ("name", "source")} == \
        {k: v for k, v in ref["model"].items() if k not in ("name", "source")}


def test_not_a_gguf_on_stdin_is_one_line(tmp_path):
    p = _raw(tmp_path, "junk", b"not a model at all\n" * 10)
    with open(p, "rb") as f:
        assert_refused(run_oomkit("estimate", "/dev/stdin", stdin=f, timeout=10), r"GGUF|config")


def test_config_json_on_stdin_is_read(tmp_path):
    p = H.write_config(tmp_path, CFG)
    ref = json.loads(run_oomkit("estimate", str(p), "--json").stdout)
    import subprocess

    cat = subprocess.Popen(["cat", str(p)], stdout=subprocess.PIPE)
    try:
        piped = run_oomkit("estimate", "/dev/stdin", "--json", stdin=cat.stdout, timeout=10)
    finally:
        cat.stdout.close()
        cat.wait()
    assert piped.rc == 0, piped.describe()
    assert json.loads(piped.stdout)["weights_bytes"] == ref["weights_bytes"]


def test_counts():
    """How many hostile inputs this file tries (the FILES family), for the record."""
    print(f"\nFILES family: {len(SPECIAL)} special files and paths, {len(CAPS)} over-size / impossible-count files, "
          f"{len(JSON)} hostile JSON texts, 4 stdin cases")
    assert len(FILES) >= 60
