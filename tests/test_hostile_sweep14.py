"""Hostile input, fourteenth sweep: 74 malformed inputs in forms the earlier hostile tests do not try, across the
commands (estimate, check, fit, plan, table, diff, diagnose, watch, serve), the readers (GGUF and safetensors headers,
config.json and its neighbours), the environment (HF_HOME, HF_TOKEN_PATH, a closed stdin), the web API and the Python
API. Each must answer correctly or refuse in one line: exit 2 with one `oomkit: error:` line (CLI), a 4xx with
{"error": ...} (web API), an OomkitError (Python API), within seconds.

Measured (2026-12-07) before this sweep's changes: 33 of the 74 failed:
- a bug exit: `oomkit diagnose - <&-` (stdin closed: AttributeError on sys.stdin None);
- llama.cpp command lines llama-server refuses, answered: --override-kv without KEY=TYPE:VALUE, of an unknown type,
  bool:yes, or a str: value over 127 bytes (common.cpp string_parse_kv_override; arg.cpp throws "Invalid type for KV
  override"), -ot naming an unknown buffer type when its pattern matches no tensor (arg.cpp
  parse_tensor_buffer_overrides looks every one up), a llama GGUF whose rope.dimension_count is not its head size
  (llama-model.cpp: "invalid n_rot");
- a safetensors file with 4 KiB after its last tensor, answered (safetensors: MetadataIncompleteBuffer);
- vLLM's switches read otherwise than vllm/envs.py reads them: VLLM_USE_V1=true taken as on (vLLM stops: int()),
  VLLM_USE_V1=2 as off (on), VLLM_ALLOW_LONG_MAX_MODEL_LEN=yes as on (off);
- Ollama: `ollama run --keepalive forever` (or -1: Go's time.ParseDuration wants a unit), answered;
- an option silently dropped: plan --json --markdown (printed JSON), plan --all --markdown (printed text),
  estimate --explain --json (the per-layer view dropped);
- wrong or unclear messages: plan --concurrency 99999999999 refused as "-c '819199999991808'" and 4097 as "-np 4097"
  (flags plan writes, not the one typed), "https://huggingface.co/" (and "https://hf.co/?x=1") as "no model given
  before ':'", llama-server -hf URL as "unknown quant tag '//huggingface.co/...'", HF_HOME naming a file as "[Errno
  20] Not a directory: .../token", HF_TOKEN_PATH naming a folder as "[Errno 21] Is a directory", serve --host
  localhost:8000 (or [::1]:8000) as "a name that does not resolve", diff --change given twice as "--change: not a
  llama-server flag";
- the Python API refusing a pathlib.Path as "no model reference";
- a GGUF's general.name sent to the terminal raw: ANSI escapes (clearing the screen) and line breaks;
- table --kv-types f16 given 500 times: 500 searches (9.4 s); --sizes 24,24,24: three equal rows;
- the web API: the same URL and --override-kv inputs (a 400 for the wrong reason, a 200).
"""

from __future__ import annotations

import json
import os
import re
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import hostile as H
from tests.sweep_harness import offline, one_line_or_answer, run_cli  # noqa: F401 (autouse: no network)

L = H.Llama()
_LLAMA = ["--", "llama-server", "-m", "qwen3:8b"]
_VLLM = ["--", "vllm", "serve", "Qwen/Qwen3-8B"]
_SGLANG = ["--", "python", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B"]


def _gguf_meta(tmp: Path, meta, tensors=None, *, full: bool = True, extra: tuple[str, ...] = ()) -> list[str]:
    p = tmp / "m.gguf"
    H.write_gguf(p, meta, L.tensors() if tensors is None else tensors, full=full)
    return ["estimate", str(p), "--vram", "24GiB", *extra]


def _st_header(doc) -> bytes:
    raw = json.dumps(doc).encode()
    raw += b" " * (-len(raw) % 8)
    return struct.pack("<Q", len(raw)) + raw


def _st_header_text(text: str) -> bytes:
    raw = text.encode()
    raw += b" " * (-len(raw) % 8)
    return struct.pack("<Q", len(raw)) + raw


def _llama_st_doc() -> dict:
    """The small Llama's safetensors header, as tests/hostile.py safetensors_bytes writes it."""
    raw = H.safetensors_bytes(H.llama_safetensors(H.llama_config()))
    n = struct.unpack("<Q", raw[:8])[0]
    return json.loads(raw[8:8 + n])


def _llama_st_bytes() -> int:
    return max(v["data_offsets"][1] for k, v in _llama_st_doc().items() if k != "__metadata__")


def _st_dir(tmp: Path, files: dict[str, bytes | str]) -> list[str]:
    """A Llama checkpoint folder holding `files` beside its config.json."""
    H.write_config(tmp / "m", H.llama_config())
    for name, raw in files.items():
        (tmp / "m" / name).write_bytes(raw if isinstance(raw, bytes) else raw.encode())
    return ["estimate", str(tmp / "m"), "--engine", "vllm", "--vram", "80GiB"]


def _config(tmp: Path, cfg: dict | str) -> list[str]:
    H.write_config(tmp / "m", cfg if isinstance(cfg, str) else json.dumps(cfg))
    return ["estimate", str(tmp / "m"), "--engine", "vllm", "--vram", "80GiB"]


def _special(tmp: Path, make, name: str = "x") -> Path:
    p = tmp / name
    make(p)
    return p


# (id, argv from tmp_path, (what, words)): "refuses" -> exit 2 and the line matches `words` (a regex); "answers" ->
# exit 0 / 1 and stdout matches `words`
CASES = [
    # ---- llama.cpp command lines (common/arg.cpp, common/common.cpp) ----
    # was: answered (llama.cpp: string_parse_kv_override "malformed KV override", arg.cpp throws)
    ("llama-override-kv-no-equals", lambda t: ["estimate", "--vram", "24GiB", *_LLAMA, "--override-kv", "garbage"],
     ("refuses", r"--override-kv 'garbage': malformed")),
    ("llama-override-kv-bool-yes", lambda t: ["estimate", "--vram", "24GiB", *_LLAMA, "--override-kv",
                                              "tokenizer.ggml.add_bos_token=bool:yes"],
     ("refuses", r"a bool is true or false")),
    ("llama-override-kv-str-200", lambda t: ["estimate", "--vram", "24GiB", *_LLAMA, "--override-kv",
                                             "general.name=str:" + "a" * 200], ("refuses", r"at most 127 bytes")),
    ("llama-override-kv-type-unknown", lambda t: ["estimate", "--vram", "24GiB", *_LLAMA, "--override-kv",
                                                  "a=double:1"], ("refuses", r"int, float, bool or str")),
    # a well-formed one still answers, with the note that it is not counted
    ("llama-override-kv-ok", lambda t: ["estimate", "--vram", "24GiB", *_LLAMA, "--override-kv",
                                        "tokenizer.ggml.add_bos_token=bool:false"],
     ("answers", r"GGUF metadata replaced")),
    # was: answered (the pattern matches no tensor, so the buffer type was never looked up)
    ("llama-ot-unknown-buffer", lambda t: ["estimate", "--vram", "24GiB", *_LLAMA, "-ot", "nomatch=NOPE"],
     ("refuses", r"-ot: unknown buffer type 'NOPE'")),
    # was: "unknown quant tag '//huggingface.co/Qwen/Qwen3-8B-GGUF'"
    ("llama-hf-url", lambda t: ["estimate", "--vram", "24GiB", "--", "llama-server", "-hf",
                                "https://huggingface.co/Qwen/Qwen3-8B-GGUF"],
     ("refuses", r"llama\.cpp takes <user>/<model>\[:quant\], not a URL")),
    ("llama-ts-negative", lambda t: ["estimate", "--vram", "24GiB,24GiB", *_LLAMA, "--tensor-split", "-1,2"],
     ("refuses", r"tensor_split \(-ts\) -1: out of range")),
    ("llama-ub-negative", lambda t: ["estimate", "--vram", "24GiB", *_LLAMA, "-ub", "-5"],
     ("refuses", r"n_ubatch \(-ub\) -5: out of range")),
    ("llama-m-symlink-loop", lambda t: ["estimate", "--vram", "24GiB", "--", "llama-server", "-m",
                                        str(_special(t, lambda p: p.symlink_to(p)))], ("refuses", None)),
    ("llama-m-empty-gguf", lambda t: ["estimate", "--vram", "24GiB", "--", "llama-server", "-m",
                                      str(_special(t, lambda p: p.write_bytes(b""), "x.gguf"))],
     ("refuses", r"the magic needs 4 bytes but the file has 0")),
    # ---- Ollama (cmd/cmd.go RunHandler: time.ParseDuration(--keepalive)) ----
    # was: answered ("Error: time: invalid duration" stops ollama run)
    ("ollama-keepalive-not-a-duration", lambda t: ["estimate", "--vram", "24GiB", "--", "ollama", "run", "qwen3:8b",
                                                   "--keepalive", "forever"], ("refuses", r"not a Go duration")),
    ("ollama-keepalive-bare-number", lambda t: ["estimate", "--vram", "24GiB", "--", "ollama", "run", "qwen3:8b",
                                                "--keepalive", "-1"], ("refuses", r"--keepalive '-1'")),
    # a duration Go reads (fit_outcomes' deepseek-r1 thread types this one)
    ("ollama-keepalive-minus-1m", lambda t: ["estimate", "--vram", "24GiB", "--", "ollama", "run", "qwen3:8b",
                                             "--keepalive=-1m"], ("answers", r"engine ollama")),
    # ---- vLLM / SGLang ----
    ("vllm-gmu-1e30", lambda t: ["estimate", "--vram", "80GiB", *_VLLM, "--gpu-memory-utilization", "1e30"],
     ("refuses", r"out of range; vLLM takes \(0, 1\]")),
    ("vllm-hf-overrides-list", lambda t: ["estimate", "--vram", "80GiB", *_VLLM, "--hf-overrides", "[1]"],
     ("refuses", r"expected a JSON object")),
    ("vllm-kv-cache-memory-negative", lambda t: ["estimate", "--vram", "80GiB", *_VLLM, "--kv-cache-memory-bytes",
                                                 "-1"], ("refuses", r"out of range")),
    # vllm/envs.py: VLLM_USE_V1 is bool(int(...)), so "true" stops vLLM (ValueError) and "2" is on; was: "true" on,
    # "2" off. VLLM_ALLOW_LONG_MAX_MODEL_LEN is "1" or "true" only; was: "yes" on
    ("vllm-env-use-v1-true", lambda t: ["estimate", "qwen3:8b", "--engine", "vllm", "--env", "VLLM_USE_V1=true",
                                        "--vram", "80GiB"], ("refuses", r"VLLM_USE_V1='true': vLLM reads it with int\(\)")),
    ("vllm-env-use-v1-2", lambda t: ["estimate", "qwen3:8b", "--engine", "vllm", "--env", "VLLM_USE_V1=2", "--vram",
                                     "80GiB", "--json"], ("answers", r'"use_v1": true')),
    ("vllm-env-allow-long-yes", lambda t: ["estimate", "qwen3:8b", "--engine", "vllm", "--env",
                                           "VLLM_ALLOW_LONG_MAX_MODEL_LEN=yes", "--vram", "80GiB", "--json"],
     ("answers", r'"allow_long_max_model_len": false')),
    ("sglang-mem-fraction-nan", lambda t: ["estimate", "--vram", "80GiB", *_SGLANG, "--mem-fraction-static", "nan"],
     ("refuses", r"not a finite number")),
    ("sglang-page-size-0", lambda t: ["estimate", "--vram", "80GiB", *_SGLANG, "--page-size", "0"],
     ("refuses", r"page_size \(--page-size\) 0: out of range")),
    ("kv-memory-negative", lambda t: ["estimate", "qwen3:8b", "--engine", "vllm", "--kv-memory", "-1GiB", "--vram",
                                      "80GiB"], ("refuses", r"--kv-memory")),
    ("kv-memory-for-llama-cpp", lambda t: ["estimate", "qwen3:8b", "--kv-memory", "4GiB", "--vram", "80GiB"],
     ("refuses", r"--kv-memory applies to engines that size their KV cache")),
    # ---- oomkit's own options ----
    # was: JSON printed, --markdown dropped (table refuses the same pair)
    ("plan-json-and-markdown", lambda t: ["plan", "qwen3:8b", "--gpu", "RTX 4090", "--json", "--markdown"],
     ("refuses", r"give one output format, not --json and --markdown")),
    # was: the text list printed, --markdown dropped
    ("plan-all-markdown", lambda t: ["plan", "--all", "--gpu", "RTX 4090", "--markdown"],
     ("refuses", r"--all prints its list as text or --json")),
    # was: "-c '819199999991808': out of range" (the -c plan writes for 99999999999 sequences of 8192)
    ("plan-concurrency-huge", lambda t: ["plan", "qwen3:8b", "--gpu", "RTX 4090", "--concurrency", "99999999999"],
     ("refuses", r"^oomkit: error: --concurrency 99,999,999,999: out of range")),
    ("plan-concurrency-past-the-web-bound", lambda t: ["plan", "qwen3:8b", "--gpu", "RTX 4090", "--concurrency",
                                                     "4097"], ("refuses", r"oomkit takes 1 to 4,096")),
    ("plan-ram-bandwidth-nan", lambda t: ["plan", "qwen3:8b", "--gpu", "RTX 4090", "--ram-bandwidth", "nan"],
     ("refuses", r"--ram-bandwidth takes GB/s")),
    # was: the JSON printed, --explain dropped
    ("estimate-explain-json", lambda t: ["estimate", "qwen3:8b", "--vram", "24GiB", "--explain", "--json"],
     ("refuses", r"--explain \(the per-layer table\) or --json, not both")),
    ("fit-reserve-past-the-gpu", lambda t: ["fit", "--vram", "24GiB", "--reserve", "30GiB", *_LLAMA],
     ("refuses", r"leave nothing of CUDA0's 24\.00 GiB")),
    ("fit-unknown-program", lambda t: ["fit", "--vram", "24GiB", "--", "python3", "x.py"],
     ("refuses", r"unknown engine command 'python3'")),
    ("table-plot-a-directory", lambda t: ["table", "qwen3:8b", "--plot", str(_special(t, Path.mkdir))],
     ("refuses", r"exists and is not a regular file")),
    ("watch-interval-nan", lambda t: ["watch", "qwen3:8b", "--interval", "nan", "--iterations", "2"],
     ("refuses", r"--interval 'nan'")),
    ("diff-change-unclosed-quote", lambda t: ["diff", "qwen3:8b", "--vram", "24GiB", "--change", "-c '8192"],
     ("refuses", r"No closing quotation")),
    # was: "invalid argument: --change (not a llama-server flag; oomkit's own options go before the --)"
    ("diff-change-twice", lambda t: ["diff", "qwen3:8b", "--vram", "24GiB", "--change", "-c 4096", "--change",
                                     "-c 8192"], ("refuses", r"--change given twice")),
    ("diagnose-symlink-loop", lambda t: ["diagnose", str(_special(t, lambda p: p.symlink_to(p)))],
     ("refuses", r"Too many levels of symbolic links")),
    # was: "no model given before ':'" (the scheme's colon read as a quant suffix)
    ("hub-url-without-repo", lambda t: ["estimate", "https://huggingface.co/", "--vram", "24GiB"],
     ("refuses", r"https://huggingface\.co/ names no model")),
    ("vllm-serve-hub-url-without-repo", lambda t: ["estimate", "--vram", "80GiB", "--", "vllm", "serve",
                                                   "https://hf.co/?x=1"], ("refuses", r"names no model")),
    # ---- GGUF (gguf.cpp) ----
    ("gguf-duplicate-tensor", lambda t: _gguf_meta(t, L.meta(), L.tensors() + [L.tensors()[0]]),
     ("refuses", r"duplicate tensor name 'token_embd\.weight'")),
    ("gguf-key-not-utf8", lambda t: _gguf_meta(t, L.meta() + [(b"\xff\xfe", H.U32, 1)]),
     ("refuses", r"key b'\\xff\\xfe' is not valid UTF-8")),
    ("gguf-tensor-name-not-utf8", lambda t: _gguf_meta(t, L.meta(), L.tensors() + [(b"\xff.weight", (64,), H.F32_T)]),
     ("refuses", r"tensor name b'\\xff\.weight' is not valid UTF-8")),
    ("gguf-negative-dimension", lambda t: _gguf_meta(t, L.meta(), L.tensors()[1:] + [("token_embd.weight", (64, -256),
                                                                                    H.Q4_0_T)], full=False),
     ("refuses", r"has a negative dimension -256")),
    # was: answered (llama-model.cpp load_hparams: "invalid n_rot: 0, expected 16" for llama, deci, falcon)
    ("gguf-rope-dimension-not-the-head-size", lambda t: _gguf_meta(t, L.meta(**{"rope.dimension_count": (H.U32, 0)})),
     ("refuses", r"llama\.rope\.dimension_count = 0 is not the head size 16: llama\.cpp refuses the file")),
    # was: the escapes sent to the terminal (the screen cleared, the name red)
    ("gguf-name-ansi-escapes", lambda t: _gguf_meta(t, L.meta() + [("general.name", H.STR, "\x1b[2J\x1b[31mEVIL")]),
     ("answers", r"^\\x1b\[2J\\x1b\[31mEVIL · llama")),
    # was: the name's line breaks breaking the summary line
    ("gguf-name-line-breaks", lambda t: _gguf_meta(t, L.meta() + [("general.name", H.STR, "a\nb\nc")]),
     ("answers", r"^a\\nb\\nc · llama")),
    # ---- safetensors and the files beside config.json ----
    ("st-offsets-reversed", lambda t: _st_dir(t, {"model.safetensors": _st_header({"model.embed_tokens.weight": {
        "dtype": "BF16", "shape": [256, 64], "data_offsets": [32768, 0]}})}), ("refuses", r"data_offsets \[32768, 0\]")),
    ("st-header-a-list", lambda t: _st_dir(t, {"model.safetensors": _st_header([1, 2])}),
     ("refuses", r"JSON is not an object")),
    # was: answered (safetensors read_metadata: the data must end the file, else MetadataIncompleteBuffer)
    ("st-bytes-after-the-last-tensor", lambda t: _st_dir(t, {"model.safetensors": H.safetensors_bytes(
        H.llama_safetensors(H.llama_config())) + bytes(4096)}),
     ("refuses", r"4,096 past the end of its last tensor .* safetensors refuses it \(MetadataIncompleteBuffer\)")),
    # safetensors leaves its "starts with '{'" check commented out: a header led by a space loads
    ("st-header-led-by-a-space", lambda t: _st_dir(t, {"model.safetensors": _st_header_text(
        " " + json.dumps(_llama_st_doc())) + bytes(_llama_st_bytes())}), ("answers", r"weights safetensors BF16")),
    ("st-index-absolute-shard", lambda t: _st_dir(t, {"model.safetensors.index.json": json.dumps(
        {"weight_map": {"model.embed_tokens.weight": "/etc/passwd"}})}),
     ("refuses", r"shard path '/etc/passwd' leaves the model directory")),
    ("st-shard-a-directory", lambda t: (_st_dir(t, {}), (t / "m" / "model.safetensors").mkdir())[0],
     ("refuses", r"model\.safetensors: is a directory, not a regular file")),
    ("config-json-a-directory", lambda t: ((t / "m" / "config.json").mkdir(parents=True),
                                           ["estimate", str(t / "m"), "--vram", "24GiB"])[1],
     ("refuses", r"config\.json: is a directory, not a regular file")),
    ("config-dtype-a-list", lambda t: _config(t, H.llama_config(torch_dtype=["bfloat16"])),
     ("refuses", r"unknown weight dtype")),
    ("config-top-k-past-experts", lambda t: _config(t, H.llama_config(
        model_type="qwen3_moe", architectures=["Qwen3MoeForCausalLM"], num_experts=4, num_experts_per_tok=8,
        moe_intermediate_size=32)), ("refuses", r"num_experts_per_tok = 8 is more than num_experts = 4")),
    # JSON keeps the last of a repeated key (as json.loads and transformers do): that one is checked
    ("config-repeated-key", lambda t: _config(t, json.dumps(H.llama_config())[:-1] + ', "num_hidden_layers": -3}'),
     ("refuses", r"num_hidden_layers=-3 is not a non-negative integer")),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_a_malformed_input_answers_or_refuses_in_one_line(tmp_path, case):
    cid, make, (what, words) = case
    rc, out, err = run_cli(*make(tmp_path))
    one_line_or_answer(rc, err, cid)
    if what == "refuses":
        assert rc == 2, (cid, rc, out[:300])
        if words:
            assert re.search(words, err.strip()), (cid, err)
    else:
        assert rc in (0, 1), (cid, err)
        assert re.search(words, out, re.MULTILINE), (cid, out[:600])


def test_table_reads_each_kv_type_and_size_once():
    """was: --kv-types f16 x 500 ran 500 searches (9.4 s); --sizes 24,24,24 listed three equal rows"""
    t0 = time.monotonic()
    rc, out, err = run_cli("table", "qwen3:8b", "--kv-types", ",".join(["f16"] * 500), "--kind", "limits", "--json")
    assert rc == 0 and time.monotonic() - t0 < 5, err
    assert json.loads(out)["kv_types"] == ["f16"], out[:300]
    rc, out, err = run_cli("table", "qwen3:8b", "--sizes", "24,24,24", "--kind", "limits", "--json")
    assert rc == 0, err
    assert len(json.loads(out)["targets"]) == len(json.loads(out)["limits"]) == 1, out[:600]


# ---- in a child process: what the interpreter's own streams and the environment decide ----


def _child(*args: str, env: dict[str, str] | None = None, close_stdin: bool = False) -> tuple[int, str]:
    full = {**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})}
    full = {k: v for k, v in full.items() if v is not None}
    p = subprocess.run([sys.executable, "-m", "oomkit", *args], capture_output=True, text=True, timeout=30, env=full,
                       stdin=None if close_stdin else subprocess.DEVNULL,
                       preexec_fn=(lambda: os.close(0)) if close_stdin else None)
    return p.returncode, p.stderr


def test_diagnose_with_stdin_closed():
    """was: internal error (AttributeError: 'NoneType' object has no attribute 'isatty'), exit 3"""
    rc, err = _child("diagnose", "-", close_stdin=True)
    assert rc == 2 and err.strip().splitlines() == [
        "oomkit: error: standard input is closed: pipe the error message or the log into it, or give a FILE"], err


@pytest.mark.parametrize("var,make,words", [
    # was: "[Errno 20] Not a directory: '.../file/token'"
    ("HF_HOME", lambda p: p.write_text("x"), r"cannot read the saved Hugging Face token \(Not a directory: .*; check "
                                              r"HF_HOME and HF_TOKEN_PATH"),
    # was: "[Errno 21] Is a directory: '...'"
    ("HF_TOKEN_PATH", Path.mkdir, r"cannot read the saved Hugging Face token \(Is a directory: "),
])
def test_hub_settings_naming_the_wrong_kind_of_file(tmp_path, var, make, words):
    """huggingface_hub reads the saved token from HF_TOKEN_PATH, else HF_HOME/token, before any request (so nothing
    is sent: the endpoint is a closed port)"""
    p = tmp_path / "x"
    make(p)
    rc, err = _child("estimate", "someone/not-in-the-catalog", "--vram", "24GiB",
                     env={"HF_HUB_OFFLINE": "0", "HF_ENDPOINT": "http://127.0.0.1:9", "HF_TOKEN": None, var: str(p),
                          "OOMKIT_CACHE": str(tmp_path / "cache")})
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1 and re.search(words, lines[0]), err


@pytest.mark.parametrize("host,words", [
    # was: "--host 'localhost:8000' is not an address or a name that resolves (Name or service not known)"
    ("localhost:8000", r"holds a port: give the address alone and the port with --port \(--host localhost --port 8000\)"),
    ("[::1]:8000", r"\(--host ::1 --port 8000\)"),
])
def test_serve_host_with_a_port(host, words):
    rc, out, err = run_cli("serve", "--host", host, "--port", "8000")
    assert rc == 2 and re.search(words, err), err


# ---- the Python API ----


def test_python_api_takes_a_pathlib_path(tmp_path):
    """was: SettingsError "model: PosixPath('...') is no model reference" (a str of the same path was read)"""
    import oomkit

    p = L.write(tmp_path / "m.gguf")
    assert oomkit.estimate(p, vram="24GiB").to_dict() == oomkit.estimate(str(p), vram="24GiB").to_dict()
    with pytest.raises(oomkit.ModelError, match="no such file"):
        oomkit.estimate(tmp_path / "absent.gguf")
    with pytest.raises(oomkit.SettingsError, match="no model reference"):
        oomkit.estimate(b"qwen3:8b")


@pytest.mark.parametrize("kwargs,error,words", [
    ({"n_ctx": float("nan")}, "SettingsError", r"n_ctx \(-c\): nan is a float"),
    ({"tensor_split": (float("nan"), 1.0), "vram": "24GiB,24GiB"}, "SettingsError", r"not a finite number"),
    ({"vram": True}, "SettingsError", r"vram: True is a bool"),
    ({"find_max_context": "no"}, "SettingsError", r"find_max_context: 'no' is not True or False"),
])
def test_python_api_wrong_values(kwargs, error, words):
    import oomkit

    with pytest.raises(getattr(oomkit, error), match=words):
        oomkit.estimate("qwen3:8b", **kwargs)


# ---- the web API ----


@pytest.fixture(scope="module")
def client():
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from oomkit.web.app import create_app

    return TestClient(create_app(), raise_server_exceptions=False)


def _error(r, statuses=(400, 413, 422)) -> str:
    assert r.status_code in statuses, (r.status_code, r.text[:400])
    body = r.json()
    assert set(body) == {"error"} and "\n" not in body["error"], body
    return body["error"]


def test_web_bad_requests(client):
    assert "reads as a file path" in _error(client.get("/api/estimate", params={"model": "/proc/self/environ",
                                                                                 "vram": "24GiB"}))
    assert "ctx" in _error(client.post("/api/estimate", json={"model": "qwen3:8b", "ctx": True, "vram": "24GiB"}))
    assert "ctx takes an integer, got 'nan'" in _error(client.post(
        "/api/estimate", content=b'{"model": "qwen3:8b", "ctx": NaN}', headers={"content-type": "application/json"}))
    assert "env" in _error(client.post("/api/fit", json={"command": "llama-server -m qwen3:8b", "vram": "8GiB",
                                                          "env": ["X=1"]}))
    assert "names no model" in _error(client.get("/api/estimate", params={"model": "https://huggingface.co/"}))
    assert "--override-kv" in _error(client.get("/api/estimate", params={
        "command": "llama-server -m qwen3:8b --override-kv junk", "vram": "24GiB"}))


def test_the_sweep_counts():
    inputs = len(CASES) + 2 + 1 + 2 + 2 + 1 + 4 + 6  # table's two, stdin, hub files, hosts, Path, API, web
    assert len(CASES) == 56 and inputs == 74 and len({c[0] for c in CASES}) == len(CASES)


@pytest.mark.parametrize("vram,rc", [("24GiB,,24GiB", 2), (",24GiB", 2), ("24GiB,", 0)])
def test_vram_list_with_an_empty_entry(vram, rc):
    """was: "24GiB,,24GiB" silently planned two GPUs (the empty entry dropped); a device left out is refused in one
    line, a trailing comma names no device and is taken as written"""
    got, _, err = run_cli("check", "--vram", vram, "--json")
    assert got == rc, err
    if rc == 2:
        assert err.strip().splitlines() == [
            f"oomkit: error: --vram {vram!r}: an empty entry in the list; give one size per device"], err
