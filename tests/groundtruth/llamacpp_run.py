"""Run llama.cpp (through llama-cpp-python) on one GGUF in a subprocess and read the buffer sizes it logs.

    measure(gguf_path, n_ctx=4096, type_k="q8_0", type_v="q8_0", flash_attn="on", n_seq_max=4) -> dict
    measure_many(gguf_path, [settings, ...]) -> [dict, ...]     (one model load for many contexts)

The model is loaded CPU-only (n_gpu_layers 0) with llama-cpp-python's low-level API
(`llama_model_load_from_file` + `llama_init_from_model`); every log line llama.cpp prints at INFO level or
above is captured, and the figures are parsed from llama.cpp's own lines (MiB, as printed, 2 decimals):

    load_tensors:   CPU_Mapped model buffer size =  4403.49 MiB
    llama_kv_cache:        CPU KV buffer size =   512.00 MiB
    llama_kv_cache: size =  512.00 MiB (  4096 cells,  32 layers,  1/1 seqs), K (f16):  256.00 MiB, V (f16): ...
    llama_kv_cache_iswa: creating     SWA KV cache, size = 768 cells
    llama_memory_recurrent:        CPU RS buffer size =    ... MiB
    llama_memory_recurrent: size = ... MiB (1 cells, 64 layers, 1 seqs 0 rs_seq), R (f32): ..., S (f32): ...
    llama_context:        CPU  output buffer size =     0.49 MiB
    sched_reserve:        CPU compute buffer size =   258.50 MiB

`no_alloc=True` is llama.cpp's dry run (the machinery behind `--fit`): the weights are neither read nor
allocated and the KV/compute buffers are only sized. In that mode llama.cpp prints the model and KV *buffer*
lines as 0.00 MiB (dummy buffers), while the KV cache's `size = ...` line(s), the recurrent state (allocated
anyway, it is small), the output and the compute buffer lines carry the same figures as a real allocation
(checked on 864 settings x 9 models, see test_harness.py); it needs `use_mmap=False` (forced here). Use it
for contexts larger than this machine's RAM and for large (sparse) model files.

Cost: a worker process (interpreter + llama-cpp-python + model load) takes ~0.5-1.4 s with no_alloc; every
further context of the same model in `measure_many` ~0.02-0.1 s. A real (mmap) load first faults the
whole file into the page cache (llama.cpp maps it with MAP_POPULATE): ~2.4 s per GiB of (sparse) file the
first time, ~0 while the pages stay cached. A real allocation also zero-fills the KV buffer.

Failures come back as data, never as an exception in the caller: ``ok`` False, ``stage`` ("model",
"context", "crash" or "timeout") and ``error`` (llama.cpp's own error line, e.g. "quantized V cache requires
flash_attn to be enabled").

Results are cached on disk, keyed by the GGUF header's content (not the sparse data), the file size, the
settings and the llama-cpp-python version, under ``$OOMKIT_GT_CACHE`` (default: <tmp>/oomkit-groundtruth).

Debug from the command line (from the repository root):

    python -m tests.groundtruth.llamacpp_run MODEL.gguf --n-ctx 8192 -ctk q8_0 -ctv q8_0 -fa on --json
    python tests/groundtruth/llamacpp_run.py synth:gemma-3-12b:6:q4_0 --n-ctx 4096

This file is also the worker: it re-executes itself as a script (``--worker``), so it imports nothing from
the test package at module level.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HARNESS_VERSION = 1
RESULT_MARK = "@@OOMKIT_LLAMACPP_RESULT@@"
CTX_MARK = "@@OOMKIT_LLAMACPP_CONTEXT@@"

# ggml type ids (ggml.h enum ggml_type) for the cache types llama.cpp accepts (-ctk / -ctv)
GGML_TYPES = {
    "f32": 0, "f16": 1, "q4_0": 2, "q4_1": 3, "q5_0": 6, "q5_1": 7, "q8_0": 8, "iq4_nl": 20, "bf16": 30,
}
GGML_TYPE_NAMES = {v: k for k, v in GGML_TYPES.items()}
# llama.h enum llama_flash_attn_type
FLASH_ATTN = {"auto": -1, "off": 0, "disabled": 0, "on": 1, "enabled": 1}

# the knobs measure() takes, with the defaults used when a caller leaves one out. llama.cpp's own defaults
# (`llama_context_default_params`, `common_params`) where they exist; swa_full follows common_params (false),
# not the C API (true); n_gpu_layers 0 and use_extra_bufts False keep everything in one plain CPU buffer.
DEFAULTS: dict[str, Any] = {
    "n_ctx": 4096,
    "n_batch": 2048,
    "n_ubatch": 512,
    "n_seq_max": 1,
    "kv_unified": False,
    "type_k": "f16",
    "type_v": "f16",
    "flash_attn": "auto",
    "swa_full": False,
    "offload_kqv": True,
    "use_mmap": True,
    "use_extra_bufts": False,
    "n_gpu_layers": 0,
    "no_alloc": False,
    "n_threads": 1,
}


# ----------------------------------------------------------------------------------------------------------
# settings
# ----------------------------------------------------------------------------------------------------------


def _type_id(v: Any) -> int:
    if isinstance(v, int):
        return v
    name = str(v).lower()
    if name not in GGML_TYPES:
        raise ValueError(f"unknown cache type {v!r}; one of {sorted(GGML_TYPES)}")
    return GGML_TYPES[name]


def _fa(v: Any) -> int:
    if v is True:
        return 1
    if v is False:
        return 0
    if isinstance(v, int):
        return v
    key = str(v).lower()
    if key not in FLASH_ATTN:
        raise ValueError(f"flash_attn must be on/off/auto, not {v!r}")
    return FLASH_ATTN[key]


def normalize_settings(**settings: Any) -> dict[str, Any]:
    unknown = set(settings) - set(DEFAULTS)
    if unknown:
        raise TypeError(f"unknown llama.cpp settings: {sorted(unknown)}; known: {sorted(DEFAULTS)}")
    s = {**DEFAULTS, **{k: v for k, v in settings.items() if v is not None}}
    s["type_k"] = _type_id(s["type_k"])
    s["type_v"] = _type_id(s["type_v"])
    s["flash_attn"] = _fa(s["flash_attn"])
    for k in ("n_ctx", "n_batch", "n_ubatch", "n_seq_max", "n_gpu_layers", "n_threads"):
        s[k] = int(s[k])
    for k in ("kv_unified", "swa_full", "offload_kqv", "use_mmap", "use_extra_bufts", "no_alloc"):
        s[k] = bool(s[k])
    if s["no_alloc"]:
        s["use_mmap"] = False  # llama_model_base::load_tensors asserts !no_alloc on the mmap path
    return s


# ----------------------------------------------------------------------------------------------------------
# the worker (runs in the subprocess)
# ----------------------------------------------------------------------------------------------------------


MODEL_KEYS = ("use_mmap", "use_extra_bufts", "n_gpu_layers", "no_alloc")


def _worker(path: str, ms: dict[str, Any], contexts: list[dict[str, Any]]) -> int:
    """Load the model once, then create (and free) one context per entry of `contexts`.

    stderr: llama.cpp's log (INFO and above), with a CTX_MARK line before each context.
    stdout: one RESULT_MARK json line for the model, then one per context."""
    import ctypes

    import llama_cpp

    errors: list[str] = []
    state = {"skip": False}

    @llama_cpp.llama_log_callback
    def _log(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
        # ggml.h enum ggml_log_level: 1 DEBUG, 2 INFO, 3 WARN, 4 ERROR, 5 CONT (continues the previous line)
        if level != 5:
            state["skip"] = level == 1
        if state["skip"]:
            return
        if level == 4:
            errors.append(text.decode("utf-8", "replace").strip())
        os.write(2, text)  # unbuffered: survives an abort

    def emit(obj: dict[str, Any]) -> None:
        print(RESULT_MARK + json.dumps(obj), flush=True)

    llama_cpp.llama_log_set(_log, ctypes.c_void_p(0))
    llama_cpp.llama_backend_init()

    t0 = time.perf_counter()
    mp = llama_cpp.llama_model_default_params()
    mp.n_gpu_layers = ms["n_gpu_layers"]
    mp.load_mode = 1 if ms["use_mmap"] else 0  # llama.h enum llama_load_mode: NONE = 0, MMAP = 1
    mp.lazy_mode = 0  # LLAMA_LAZY_MODE_OFF
    mp.use_extra_bufts = ms["use_extra_bufts"]
    mp.no_alloc = ms["no_alloc"]
    mp.check_tensors = False
    model = llama_cpp.llama_model_load_from_file(path.encode(), mp)
    t_model = time.perf_counter() - t0
    if not model:
        emit({"kind": "model", "ok": False, "errors": list(errors), "t_model": t_model})
        return 0
    api: dict[str, Any] = {
        "model_size": llama_cpp.llama_model_size(model),
        "model_n_params": llama_cpp.llama_model_n_params(model),
        "n_layer": llama_cpp.llama_model_n_layer(model),
        "n_embd": llama_cpp.llama_model_n_embd(model),
        "n_head": llama_cpp.llama_model_n_head(model),
        "n_head_kv": llama_cpp.llama_model_n_head_kv(model),
        "n_swa": llama_cpp.llama_model_n_swa(model),
        "n_ctx_train": llama_cpp.llama_model_n_ctx_train(model),
        "n_vocab": llama_cpp.llama_vocab_n_tokens(llama_cpp.llama_model_get_vocab(model)),
    }
    emit({"kind": "model", "ok": True, "errors": list(errors), "t_model": t_model, "api": api})

    for i, s in enumerate(contexts):
        os.write(2, f"{CTX_MARK}{i}\n".encode())
        errors.clear()
        cp = llama_cpp.llama_context_default_params()
        cp.n_ctx = s["n_ctx"]
        cp.n_batch = s["n_batch"]
        cp.n_ubatch = s["n_ubatch"]
        cp.n_seq_max = s["n_seq_max"]
        cp.n_threads = s["n_threads"]
        cp.n_threads_batch = s["n_threads"]
        cp.type_k = s["type_k"]
        cp.type_v = s["type_v"]
        cp.flash_attn_type = s["flash_attn"]
        cp.swa_full = s["swa_full"]
        cp.kv_unified = s["kv_unified"]
        cp.offload_kqv = s["offload_kqv"]
        cp.embeddings = False
        t1 = time.perf_counter()
        ctx = llama_cpp.llama_init_from_model(model, cp)
        t_ctx = time.perf_counter() - t1
        if not ctx:
            emit({"kind": "context", "i": i, "ok": False, "errors": list(errors), "t_context": t_ctx})
            continue
        capi = {
            "n_ctx": llama_cpp.llama_n_ctx(ctx),
            "n_ctx_seq": llama_cpp.llama_n_ctx_seq(ctx),
            "n_seq_max": llama_cpp.llama_n_seq_max(ctx),
            "n_batch": llama_cpp.llama_n_batch(ctx),
            "n_ubatch": llama_cpp.llama_n_ubatch(ctx),
        }
        llama_cpp.llama_free(ctx)
        emit({"kind": "context", "i": i, "ok": True, "errors": list(errors), "t_context": t_ctx, "api": capi})
    llama_cpp.llama_model_free(model)
    return 0


# ----------------------------------------------------------------------------------------------------------
# log parsing
# ----------------------------------------------------------------------------------------------------------

_NUM = r"([0-9]+(?:\.[0-9]+)?)"
RE = {
    "n_ctx": re.compile(r"llama_context: n_ctx\s+= (\d+)"),
    "n_ctx_seq": re.compile(r"llama_context: n_ctx_seq\s+= (\d+)"),
    "n_seq_max": re.compile(r"llama_context: n_seq_max\s+= (\d+)"),
    "n_batch": re.compile(r"llama_context: n_batch\s+= (\d+)"),
    "n_ubatch": re.compile(r"llama_context: n_ubatch\s+= (\d+)"),
    "flash_attn_param": re.compile(r"llama_context: flash_attn\s+= (\w+)"),
    "kv_unified": re.compile(r"llama_context: kv_unified\s+= (true|false)"),
    "fa_resolved": re.compile(r"Flash Attention (enabled|not supported, set to disabled)"),
    "arch": re.compile(r"print_info: arch\s+= (\S+)"),
    "n_layer": re.compile(r"print_info: n_layer\s+= (\d+)"),
    "n_vocab": re.compile(r"print_info: n_vocab\s+= (\d+)"),
    "file_type": re.compile(r"print_info: file type\s+= (.+)"),
    "model_buffer": re.compile(r"(\S+) model buffer size =\s*" + _NUM + " MiB"),
    "kv_buffer": re.compile(r"llama_kv_cache:\s+(\S+) KV buffer size =\s*" + _NUM + " MiB"),
    "kv_size": re.compile(
        r"llama_kv_cache: size =\s*" + _NUM + r" MiB \(\s*(\d+) cells,\s*(\d+) layers,\s*(\d+)/(\d+) seqs\), "
        r"K \((\w+)\):\s*" + _NUM + r" MiB, V \((\w+)\):\s*" + _NUM + " MiB"),
    "iswa": re.compile(r"creating\s+(non-SWA|SWA) KV cache, size = (\d+) cells"),
    "rs_buffer": re.compile(r"llama_memory_recurrent:\s+(\S+) RS buffer size =\s*" + _NUM + " MiB"),
    "rs_size": re.compile(
        r"llama_memory_recurrent: size =\s*" + _NUM + r" MiB \(\s*(\d+) cells,\s*(\d+) layers,\s*(\d+) seqs"
        r"(?:\s+(\d+) rs_seq)?\), R \((\w+)\):\s*" + _NUM + r" MiB, S \((\w+)\):\s*" + _NUM + " MiB"
        r"(?:, P \((\w+)\):\s*" + _NUM + " MiB)?"),
    "output_buffer": re.compile(r"(\S+)\s+output buffer size =\s*" + _NUM + " MiB"),
    "compute_buffer": re.compile(r"(\S+) compute buffer size =\s*" + _NUM + " MiB"),
}


def _add(d: dict[str, float], k: str, v: float) -> None:
    d[k] = round(d.get(k, 0.0) + v, 2)


def parse_log(log: str) -> dict[str, Any]:
    """llama.cpp's start-up lines -> figures (MiB as printed, ints). Missing lines are left out / empty."""
    out: dict[str, Any] = {}
    for key in ("n_ctx", "n_ctx_seq", "n_seq_max", "n_batch", "n_ubatch", "n_layer", "n_vocab"):
        m = RE[key].search(log)
        if m:
            out[key] = int(m.group(1))
    for key in ("arch", "file_type", "flash_attn_param"):
        m = RE[key].search(log)
        if m:
            out[key] = m.group(1).strip()
    m = RE["kv_unified"].search(log)
    if m:
        out["kv_unified"] = m.group(1) == "true"
    m = RE["fa_resolved"].search(log)
    fa = out.get("flash_attn_param")
    if m:
        out["flash_attn"] = "enabled" if m.group(1) == "enabled" else "disabled"
    elif fa in ("enabled", "disabled"):
        out["flash_attn"] = fa

    model_buf: dict[str, float] = {}
    kv_buf: dict[str, float] = {}
    rs_buf: dict[str, float] = {}
    out_buf: dict[str, float] = {}
    comp_buf: dict[str, float] = {}
    caches: list[dict[str, Any]] = []
    recurrent: dict[str, Any] | None = None
    kind = "full"
    pending_bufs: dict[str, float] = {}
    for line in log.splitlines():
        if "model buffer size" in line and (m := RE["model_buffer"].search(line)):
            _add(model_buf, m.group(1), float(m.group(2)))
        elif m := RE["iswa"].search(line):
            kind = m.group(1)
        elif m := RE["kv_buffer"].search(line):
            _add(kv_buf, m.group(1), float(m.group(2)))
            _add(pending_bufs, m.group(1), float(m.group(2)))
        elif m := RE["kv_size"].search(line):
            g = m.groups()
            caches.append({
                "kind": kind, "size_mib": float(g[0]), "cells": int(g[1]), "layers": int(g[2]),
                "seqs": int(g[3]), "streams": int(g[4]), "type_k": g[5], "k_mib": float(g[6]),
                "type_v": g[7], "v_mib": float(g[8]), "buffer_mib": pending_bufs,
            })
            pending_bufs = {}
        elif m := RE["rs_buffer"].search(line):
            _add(rs_buf, m.group(1), float(m.group(2)))
        elif m := RE["rs_size"].search(line):
            g = m.groups()
            recurrent = {
                "size_mib": float(g[0]), "cells": int(g[1]), "layers": int(g[2]), "seqs": int(g[3]),
                "rs_seq": int(g[4]) if g[4] is not None else None, "type_r": g[5], "r_mib": float(g[6]),
                "type_s": g[7], "s_mib": float(g[8]), "type_p": g[9],
                "p_mib": float(g[10]) if g[10] is not None else None,
            }
        elif "output buffer size" in line and (m := RE["output_buffer"].search(line)):
            _add(out_buf, m.group(1), float(m.group(2)))
        elif "compute buffer size" in line and (m := RE["compute_buffer"].search(line)):
            _add(comp_buf, m.group(1), float(m.group(2)))
    out.update(
        model_buffer_mib=model_buf,
        kv_buffer_mib=kv_buf,
        kv_caches=caches,
        kv_size_mib=round(sum(c["size_mib"] for c in caches), 2),
        k_mib=round(sum(c["k_mib"] for c in caches), 2),
        v_mib=round(sum(c["v_mib"] for c in caches), 2),
        rs_buffer_mib=rs_buf,
        recurrent=recurrent,
        output_buffer_mib=out_buf,
        compute_buffer_mib=comp_buf,
    )
    return out


# ----------------------------------------------------------------------------------------------------------
# the parent side
# ----------------------------------------------------------------------------------------------------------

_GGUF_SCALAR = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}


def gguf_header(path: str | os.PathLike[str]) -> bytes:
    """The bytes of a GGUF file up to the end of its tensor infos (metadata + tensor table, no data)."""
    with open(path, "rb") as f:
        chunk = 1 << 20
        buf = bytearray(f.read(chunk))
        pos = 0

        def need(n: int) -> None:
            while pos + n > len(buf):
                more = f.read(max(chunk, n))
                if not more:
                    raise ValueError(f"{path}: truncated GGUF header")
                buf.extend(more)

        def u32() -> int:
            nonlocal pos
            need(4)
            v = struct.unpack_from("<I", buf, pos)[0]
            pos += 4
            return v

        def u64() -> int:
            nonlocal pos
            need(8)
            v = struct.unpack_from("<Q", buf, pos)[0]
            pos += 8
            return v

        def skip(n: int) -> None:
            nonlocal pos
            need(n)
            pos += n

        def value(t: int) -> None:
            if t in _GGUF_SCALAR:
                skip(_GGUF_SCALAR[t])
            elif t == 8:
                skip(u64())
            elif t == 9:
                et, n = u32(), u64()
                if et in _GGUF_SCALAR:
                    skip(_GGUF_SCALAR[et] * n)
                else:
                    for _ in range(n):
                        value(et)
            else:
                raise ValueError(f"{path}: bad GGUF value type {t}")

        need(24)
        if bytes(buf[:4]) != b"GGUF":
            raise ValueError(f"{path}: not a GGUF file")
        pos = 8
        n_tensors, n_kv = u64(), u64()
        for _ in range(n_kv):
            skip(u64())  # key
            value(u32())
        for _ in range(n_tensors):
            skip(u64())  # name
            skip(8 * u32())  # dims
            skip(4 + 8)  # type, offset
        return bytes(buf[:pos])


_header_digest_memo: dict[tuple[str, int, int], str] = {}


def file_key(path: str | os.PathLike[str]) -> str:
    """Content key of a GGUF: hash of its header (metadata + tensor table) and its size."""
    st = os.stat(path)
    memo_key = (str(Path(path).resolve()), st.st_size, st.st_mtime_ns)
    if memo_key not in _header_digest_memo:
        h = hashlib.blake2b(gguf_header(path), digest_size=20)
        h.update(str(st.st_size).encode())
        _header_digest_memo[memo_key] = h.hexdigest()
    return _header_digest_memo[memo_key]


def _llama_cpp_version() -> str | None:
    try:
        from importlib.metadata import version

        return version("llama_cpp_python")
    except Exception:
        return None


def available() -> bool:
    """True when llama-cpp-python is installed (the ground truth can run)."""
    import importlib.util

    return importlib.util.find_spec("llama_cpp") is not None


# A `python -c` script for settings the harness above does not take (n_rs_seq, n_outputs_max, an MTP context): argv[1]
# the GGUF, argv[2] the contexts as JSON, argv[3] "1" to load the next-n block; llama.cpp's log on stderr (debug lines
# left out unless asked); the model loaded on the CPU with the given fields set, then the caller's body, which makes
# its contexts from `model` and `contexts` and marks each one's lines with "@@CTX i" ... "@@END i".
_SCRIPT_HEAD = r'''
import ctypes, json, os, sys
import llama_cpp
path, contexts = sys.argv[1], json.loads(sys.argv[2])
load_mtp = len(sys.argv) > 3 and sys.argv[3] == "1"
@llama_cpp.llama_log_callback
def _log(level, text, ud):
    if level != 1 or DEBUG_LOG:
        os.write(2, text)
llama_cpp.llama_log_set(_log, ctypes.c_void_p(0))
llama_cpp.llama_backend_init()
mp = llama_cpp.llama_model_default_params()
mp.n_gpu_layers = 0
mp.use_extra_bufts = False
'''


def binding_script(body: str, model_fields: dict[str, str] | None = None, *, debug_log: bool = False) -> str:
    """The script: its head, `mp.<name> = <expression>` for each model field, the model load, then body."""
    fields = "".join(f"mp.{k} = {v}\n" for k, v in (model_fields or {}).items())
    load = "model = llama_cpp.llama_model_load_from_file(path.encode(), mp)\nassert model\n"
    return f"DEBUG_LOG = {debug_log}\n" + _SCRIPT_HEAD + fields + load + body


def run_binding_script(script: str, path: Any, contexts: list[dict[str, Any]], load_mtp: bool | None = None,
                       timeout: int = 600) -> str:
    """Run the script on one GGUF and return llama.cpp's log (stderr)."""
    extra = [] if load_mtp is None else ["1" if load_mtp else "0"]
    return subprocess.run([sys.executable, "-c", script, str(path), json.dumps(contexts), *extra],
                          capture_output=True, text=True, timeout=timeout).stderr


def context_log(log: str, i: int, start: str = "@@CTX") -> str:
    """The lines llama.cpp printed for context i (between the script's start mark and "@@END i")."""
    return log.split(f"{start} {i}\n", 1)[1].split(f"@@END {i}", 1)[0]


def compute_mib(script: str, path: Any, contexts: list[dict[str, Any]], timeout: int = 900) -> list[float]:
    """The first "compute buffer size" (MiB) llama.cpp prints for each context the script creates."""
    log = run_binding_script(script, path, contexts, timeout=timeout)
    return [float(re.findall(r"compute buffer size =\s*([0-9.]+) MiB", context_log(log, i))[0])
            for i in range(len(contexts))]


def cache_dir() -> Path:
    d = Path(os.environ.get("OOMKIT_GT_CACHE", Path(tempfile.gettempdir()) / "oomkit-groundtruth")) / "measure"
    d.mkdir(parents=True, exist_ok=True)
    return d


def _run_batch(path: str, ms: dict[str, Any], contexts: list[dict[str, Any]], timeout: float) -> list[dict[str, Any]]:
    """Run one worker for `contexts` (same model settings); one raw result per context.

    A context whose worker died (abort, segfault) gets stage "crash"; the ones after it run again in a fresh
    worker, so one bad setting does not take the others down."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", path, json.dumps(ms), json.dumps(contexts)]
    t0 = time.perf_counter()
    timed_out = False
    try:
        proc = subprocess.run(cmd, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)
        stdout, stderr, rc = proc.stdout, proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as e:
        stdout, stderr, rc, timed_out = e.stdout or b"", e.stderr or b"", None, True
    seconds = time.perf_counter() - t0
    log = stderr.decode("utf-8", "replace")
    parts = re.split(re.escape(CTX_MARK) + r"(\d+)\n", log)
    model_log, ctx_logs = parts[0], {int(parts[j]): parts[j + 1] for j in range(1, len(parts) - 1, 2)}
    model_res: dict[str, Any] | None = None
    ctx_res: dict[int, dict[str, Any]] = {}
    for line in stdout.decode("utf-8", "replace").splitlines():
        if line.startswith(RESULT_MARK):
            obj = json.loads(line[len(RESULT_MARK):])
            if obj["kind"] == "model":
                model_res = obj
            else:
                ctx_res[obj["i"]] = obj
    per_ctx_seconds = round(seconds / max(1, len(contexts)), 3)

    def failure(stage: str, error: str, ctx_log: str) -> dict[str, Any]:
        return {"ok": False, "stage": stage, "error": error, "log": model_log + ctx_log, "returncode": rc,
                "seconds": per_ctx_seconds, "t_model": model_res and round(model_res["t_model"], 3),
                "api": (model_res or {}).get("api", {})}

    if model_res is None or not model_res["ok"]:
        if model_res is None:
            stage = "timeout" if timed_out else "crash"
            err = f"no result after {timeout:.0f} s" if timed_out else _tail(model_log, rc)
        else:
            stage, err = "model", _error_message(model_res["errors"], model_log)
        return [failure(stage, err, "") for _ in contexts]

    out: list[dict[str, Any]] = []
    for i in range(len(contexts)):
        ctx_log = ctx_logs.get(i, "")
        r = ctx_res.get(i)
        if r is None:
            if timed_out:
                err = f"no result after {timeout:.0f} s"
                out += [failure("timeout", err, ctx_logs.get(j, "")) for j in range(i, len(contexts))]
            elif i in ctx_logs or i == 0:
                # the worker died in this context: report it, run the rest in a fresh worker
                out.append(failure("crash", _tail(ctx_log or model_log, rc), ctx_log))
                if i + 1 < len(contexts):
                    out += _run_batch(path, ms, contexts[i + 1:], timeout)
            else:
                # it died after finishing the previous context (while freeing it): run the rest again
                out += _run_batch(path, ms, contexts[i:], timeout)
            return out
        res = {
            "ok": r["ok"], "stage": None if r["ok"] else "context",
            "error": None if r["ok"] else _error_message(r["errors"], ctx_log),
            "log": model_log + ctx_log, "returncode": rc, "seconds": per_ctx_seconds,
            "t_model": round(model_res["t_model"], 3), "t_context": round(r["t_context"], 3),
            "api": {**model_res.get("api", {}), **r.get("api", {})},
        }
        out.append(res)
    return out


def _tail(log: str, rc: int | None) -> str:
    tail = [ln for ln in log.strip().splitlines() if ln.strip()][-5:]
    return "\n".join(tail) or f"worker exited with {rc}"


def _error_message(errors: list[str], log: str) -> str:
    """llama.cpp's own reason, without the `function: ` prefix, skipping the generic follow-up lines."""
    lines = errors or [ln for ln in log.splitlines() if "error" in ln.lower() or "failed" in ln.lower()]
    msgs = [re.sub(r"^\w+: ", "", ln.strip()) for ln in lines if ln.strip()]
    generic = ("failed to load model", "failed to create context", "failed to initialize the context")
    for msg in msgs:
        if not msg.startswith(generic):
            return msg
    return msgs[0] if msgs else "llama.cpp failed without an error line"


def _settings_view(s: dict[str, Any]) -> dict[str, Any]:
    return {**s, "type_k": GGML_TYPE_NAMES.get(s["type_k"], s["type_k"]),
            "type_v": GGML_TYPE_NAMES.get(s["type_v"], s["type_v"]),
            "flash_attn": {-1: "auto", 0: "off", 1: "on"}.get(s["flash_attn"], s["flash_attn"])}


def _cache_file(path: str, s: dict[str, Any]) -> Path:
    key_src = json.dumps({"file": file_key(path), "settings": s, "llama_cpp": _llama_cpp_version(),
                          "harness": HARNESS_VERSION}, sort_keys=True)
    return cache_dir() / (hashlib.blake2b(key_src.encode(), digest_size=20).hexdigest() + ".json")


def measure_many(gguf_path: str | os.PathLike[str], settings_list: list[dict[str, Any]], *, cache: bool = True,
                 timeout: float = 600.0) -> list[dict[str, Any]]:
    """`measure` for many settings on one GGUF: the model is loaded once per group of model-level settings
    (use_mmap, use_extra_bufts, n_gpu_layers, no_alloc) and every context is created in that one process.
    Returns one result per entry of `settings_list`, in order."""
    path = str(Path(gguf_path).resolve())
    norm = [normalize_settings(**st) for st in settings_list]
    results: list[dict[str, Any] | None] = [None] * len(norm)
    todo: dict[tuple, list[int]] = {}
    for i, s in enumerate(norm):
        if cache:
            cf = _cache_file(path, s)
            if cf.exists():
                try:
                    res = json.loads(cf.read_text())
                    res.update(cached=True, path=path)
                    results[i] = res
                    continue
                except (OSError, ValueError):
                    pass
        todo.setdefault(tuple(s[k] for k in MODEL_KEYS), []).append(i)
    for idxs in todo.values():
        ms = {k: norm[idxs[0]][k] for k in MODEL_KEYS}
        ctxs = [{k: v for k, v in norm[i].items() if k not in MODEL_KEYS} for i in idxs]
        raws = _run_batch(path, ms, ctxs, timeout)
        for i, raw in zip(idxs, raws, strict=True):
            s = norm[i]
            res = {
                "ok": raw["ok"], "stage": raw.get("stage"), "error": raw.get("error"), "path": path,
                "settings": _settings_view(s), "no_alloc": s["no_alloc"],
                **parse_log(raw["log"]),
                "api": raw.get("api", {}), "returncode": raw.get("returncode"), "seconds": raw.get("seconds"),
                "t_model": raw.get("t_model"), "t_context": raw.get("t_context"), "log": raw["log"],
                "cached": False,
            }
            if cache and res["stage"] not in ("timeout", "crash"):
                cf = _cache_file(path, s)
                tmp = cf.with_suffix(f".{os.getpid()}.tmp")
                tmp.write_text(json.dumps(res))
                os.replace(tmp, cf)
            results[i] = res
    return results  # type: ignore[return-value]


def measure(gguf_path: str | os.PathLike[str], *, cache: bool = True, timeout: float = 600.0,
            **settings: Any) -> dict[str, Any]:
    """Load `gguf_path` in llama.cpp (CPU, in a subprocess) with `settings` and return what it logged.

    Settings (llama.cpp's own names; defaults in DEFAULTS): n_ctx, n_batch, n_ubatch, n_seq_max, kv_unified,
    type_k, type_v (ggml type id or name: "f16", "q8_0", "q4_0", ...), flash_attn ("on"/"off"/"auto" or
    bool), swa_full, offload_kqv, use_mmap, use_extra_bufts, n_gpu_layers, no_alloc, n_threads.
    """
    return measure_many(gguf_path, [settings], cache=cache, timeout=timeout)[0]


# ----------------------------------------------------------------------------------------------------------
# command line
# ----------------------------------------------------------------------------------------------------------


def _resolve_model_arg(arg: str) -> str:
    """A path, or synth:KEY[:N_LAYERS[:RECIPE]] to write one of synth.py's models first."""
    if not arg.startswith("synth:"):
        return arg
    parts = arg.split(":")[1:]
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from groundtruth import synth  # type: ignore[import-not-found]

    build = synth.MODELS[parts[0]]
    n_layers = int(parts[1]) if len(parts) > 1 and parts[1] else None
    recipe = parts[2] if len(parts) > 2 else "q4_0"
    return str(synth.synth_path(build(n_layers=n_layers), recipe))


def main(argv: list[str] | None = None) -> int:
    import argparse

    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--worker":
        return _worker(argv[1], json.loads(argv[2]), json.loads(argv[3]))

    p = argparse.ArgumentParser(prog="llamacpp_run", description="llama.cpp's buffer sizes for a GGUF")
    p.add_argument("model", help="GGUF path, or synth:KEY[:N_LAYERS[:RECIPE]]")
    p.add_argument("-c", "--n-ctx", type=int)
    p.add_argument("-b", "--n-batch", type=int)
    p.add_argument("-ub", "--n-ubatch", type=int)
    p.add_argument("-np", "--n-seq-max", type=int)
    p.add_argument("-kvu", "--kv-unified", action="store_true", default=None)
    p.add_argument("-ctk", "--type-k")
    p.add_argument("-ctv", "--type-v")
    p.add_argument("-fa", "--flash-attn", choices=["on", "off", "auto"])
    p.add_argument("--swa-full", action="store_true", default=None)
    p.add_argument("-nkvo", "--no-kv-offload", action="store_true")
    p.add_argument("--no-mmap", action="store_true")
    p.add_argument("--extra-bufts", action="store_true", help="allow repacked CPU buffers")
    p.add_argument("--no-alloc", action="store_true", help="llama.cpp's dry run (sizes only)")
    p.add_argument("--no-cache", action="store_true")
    p.add_argument("--json", action="store_true", help="print the whole result as JSON")
    p.add_argument("--log", action="store_true", help="print llama.cpp's log")
    a = p.parse_args(argv)
    res = measure(
        _resolve_model_arg(a.model), cache=not a.no_cache, n_ctx=a.n_ctx, n_batch=a.n_batch, n_ubatch=a.n_ubatch,
        n_seq_max=a.n_seq_max, kv_unified=a.kv_unified, type_k=a.type_k, type_v=a.type_v,
        flash_attn=a.flash_attn, swa_full=a.swa_full, offload_kqv=False if a.no_kv_offload else None,
        use_mmap=False if a.no_mmap else None, use_extra_bufts=True if a.extra_bufts else None,
        no_alloc=True if a.no_alloc else None,
    )
    if a.log:
        print(res["log"])
    if a.json:
        print(json.dumps(res if a.log else {k: v for k, v in res.items() if k != "log"}, indent=2))
    else:
        skip = {"log", "api", "settings", "path"}
        for k, v in res.items():
            if k not in skip:
                print(f"{k:18} {v}")
    return 0 if res["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
