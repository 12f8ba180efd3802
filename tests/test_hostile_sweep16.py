"""Hostile input, sixteenth sweep: 68 malformed inputs in forms the earlier hostile tests do not try, across the
commands (estimate, check, fit, plan, table, models, diagnose, errors, serve), the readers (GGUF headers, config.json),
llama.cpp's numeric flags that change no memory, the web API's query strings and JSON bodies (FastAPI's TestClient),
the MCP server's tools and the Python API. Each must answer correctly or refuse in one line: exit 2 with one `oomkit:
error:` line (CLI), a 4xx with {"error": ...} (web API), a one-line tool error (MCP), an OomkitError (Python API),
within seconds.

Measured (2026-12-07) before this sweep's changes: 31 of the 68 broke the contract (no traceback, no hang):
- options given twice, the last taken silently: `models --kind moe --kind full` (and --family; argparse keeps the
  last), `--env K=2 --env K=4` (estimate, fit), `serve --port 8001 --port 8002` and --host twice (the server started
  on the last); in the web API a query key given twice (`vram=24GiB&vram=48GiB`, model, ctx: FastAPI keeps the last)
  and a JSON body naming a field twice (json.loads keeps the last); all now refused naming both values;
- fields or options dropped without a word: an unknown query key (`/api/estimate?ctxx=8192`, `/api/models?query=`,
  `/api/table?size=`: FastAPI ignores it, where the POST bodies refuse an extra field), `fit --markdown`, `--limit`,
  `--also` (plan's options, read by fit's parser and ignored);
- llama-server command lines llama.cpp refuses, answered: `-t x`, `--port http`, `--temp warm`, `--cache-reuse 1_0`,
  `--top-k 4O` (common/arg.cpp reads these with std::stoi / std::stof; a `--port ${PORT}` macro is still taken);
- the web API reading what the CLI refuses: `ctx=8_192` and full-width digits (int() takes both; --ctx does not);
- unclear messages: a bad ram / reserve / headroom in the web API named "size:" rather than the field;
  `oomkit errors <100,000 characters>` echoed the whole query (now clipped, its length said);
- four in other modules: a GGUF path with a trailing slash read as the file (open() fails: Not a directory; now
  refused, model/resolve.py); the Python API's two Devices with one id (CUDA0 twice; now refused, request.py);
  `vllm serve A --model B` estimated B, where vLLM's serve takes the positional A from 0.8.3 and refuses both
  before (now as vLLM does, engines/vllm/args.py and config.py); `diagnose` of "Tried to allocate
  99999999999999999999999.00 GiB" explained as "2^64 - -107,...: a negative size printed unsigned" (diagnose/reader.py
  took every size >= 2^63 for a wrapped size_t; now 2^63 to 2^64 only, and a larger one is a size computed wrongly).
After: 31 of the 31 right.
"""

from __future__ import annotations

import asyncio
import json
import re
import struct
import time
from pathlib import Path

import pytest

from oomkit.engines.command import QUOTE_LIMIT, clip_word
from tests import hostile as H
from tests.sweep_harness import offline, one_line_or_answer, run_cli  # noqa: F401 (autouse: no network)

L = H.Llama()
_LLAMA = ["--", "llama-server", "-m", "qwen3:8b"]
_VLLM = ["--", "vllm", "serve", "Qwen/Qwen3-8B"]
_SGLANG = ["--", "python", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B"]
_OLLAMA_ENV = ["estimate", "qwen3:8b", "--engine", "ollama", "--vram", "24GiB", "--env"]


def _gguf(tmp: Path, meta=None, tensors=None, **kw) -> list[str]:
    p = tmp / "m.gguf"
    H.write_gguf(p, L.meta() if meta is None else meta, L.tensors() if tensors is None else tensors, **kw)
    return ["estimate", str(p), "--vram", "24GiB"]


def _gguf_bytes(tmp: Path, raw: bytes, size: int | None = None) -> list[str]:
    p = tmp / "m.gguf"
    p.write_bytes(raw)
    if size is not None:
        with open(p, "r+b") as f:
            f.truncate(size)
    return ["estimate", str(p), "--vram", "24GiB"]


def _long_string(tmp: Path) -> list[str]:
    """The first key's length field says 2^60 bytes."""
    head, _ = H.gguf_header(L.meta())
    return _gguf_bytes(tmp, head[:24] + struct.pack("<Q", 2**60) + head[32:])


def _offset_3(tmp: Path) -> list[str]:
    """token_embd.weight's data offset 3 (gguf.cpp: each tensor's offset is the running, aligned sum)."""
    head, data = H.gguf_header(L.meta(), L.tensors())
    at = head.index(b"token_embd.weight") + len(b"token_embd.weight") + 4 + 16 + 4  # name, n_dims, 2 dims, type
    raw = bytearray(head)
    raw[at:at + 8] = struct.pack("<Q", 3)
    return _gguf_bytes(tmp, bytes(raw), len(head) + data)


def _config(tmp: Path, text: str | None) -> list[str]:
    d = tmp / "m"
    if text is None:  # config.json a directory
        (d / "config.json").mkdir(parents=True)
    else:
        H.write_config(d, text)
    return ["estimate", str(d), "--engine", "vllm", "--vram", "80GiB"]


def _file(tmp: Path, name: str, text: str) -> str:
    (tmp / name).write_text(text)
    return str(tmp / name)


# (id, argv from tmp_path, (what, words)): "refuses" -> exit 2 and the line matches `words` (a regex); "answers" ->
# exit 0 / 1 and stdout matches `words`
CASES = [
    # ---- an option given twice with two values (was: the last taken, silently) ----
    ("models-kind-twice", lambda t: ["models", "--kind", "moe", "--kind", "full"],
     ("refuses", r"--kind given twice, as 'moe' and 'full': give it once")),
    ("models-family-twice", lambda t: ["models", "--family", "qwen", "--family", "llama"],
     ("refuses", r"--family given twice, as 'qwen' and 'llama'")),
    ("models-kind-twice-same", lambda t: ["models", "--kind", "moe", "--kind=moe", "--json"],
     ("answers", r'"slug"')),
    ("env-key-twice", lambda t: [*_OLLAMA_ENV, "OLLAMA_NUM_PARALLEL=2", "--env", "OLLAMA_NUM_PARALLEL=4"],
     ("refuses", r"--env OLLAMA_NUM_PARALLEL given twice, as '2' and '4': give it once")),
    ("env-key-twice-fit", lambda t: ["fit", "--vram", "8GiB", "--env", "OLLAMA_CONTEXT_LENGTH=8192", "--env",
                                     "OLLAMA_CONTEXT_LENGTH=4096", "--", "ollama", "run", "qwen3:8b"],
     ("refuses", r"--env OLLAMA_CONTEXT_LENGTH given twice")),
    ("env-key-twice-same", lambda t: [*_OLLAMA_ENV, "OLLAMA_NUM_PARALLEL=2", "--env", "OLLAMA_NUM_PARALLEL=2",
                                      "--json"], ("answers", r'"num_parallel": 2,')),
    # refused while the options are read, before anything listens
    ("serve-port-twice", lambda t: ["serve", "--port", "8001", "--port", "8002"],
     ("refuses", r"--port given twice, as '8001' and '8002': give it once")),
    ("serve-host-twice", lambda t: ["serve", "--host", "127.0.0.1", "--host=0.0.0.0"],
     ("refuses", r"--host given twice, as '127\.0\.0\.1' and '0\.0\.0\.0'")),
    # ---- plan's options given to fit (was: read and ignored) ----
    ("fit-json-markdown", lambda t: ["fit", "--vram", "8GiB", "--json", "--markdown", *_LLAMA],
     ("refuses", r"--markdown is an option of oomkit plan, not of fit")),
    ("fit-limit", lambda t: ["fit", "--vram", "8GiB", "--limit", "3", *_LLAMA], ("refuses", r"--limit is an option")),
    ("fit-also", lambda t: ["fit", "--vram", "8GiB", "--also", "q8_0", *_LLAMA], ("refuses", r"--also is an option")),
    # ---- llama.cpp flags of no memory that common/arg.cpp reads with std::stoi / std::stof (was: answered) ----
    ("llama-threads-a-word", lambda t: ["estimate", "--vram", "24GiB", *_LLAMA, "-t", "x"],
     ("refuses", r"-t 'x': not an integer \(llama\.cpp reads it with std::stoi\)")),
    ("llama-port-a-word", lambda t: ["estimate", "--vram", "24GiB", *_LLAMA, "--port", "http"],
     ("refuses", r"--port 'http': not an integer")),
    ("llama-temp-a-word", lambda t: ["estimate", "--vram", "24GiB", *_LLAMA, "--temp", "warm"],
     ("refuses", r"--temp 'warm': not a number \(llama\.cpp reads it with std::stof\)")),
    ("llama-cache-reuse-underscore", lambda t: ["estimate", "--vram", "24GiB", *_LLAMA, "--cache-reuse", "1_0"],
     ("refuses", r"llama\.cpp would read this as 1 \(std::stoi stops at '_'\)")),
    ("llama-top-k-letter-o", lambda t: ["estimate", "--vram", "24GiB", *_LLAMA, "--top-k", "4O"],
     ("refuses", r"would read this as 4 ")),
    # llama-swap fills in ${PORT} before llama-server reads it: taken
    ("llama-port-macro", lambda t: ["estimate", "--vram", "24GiB", *_LLAMA, "--port", "${PORT}", "-t", "8",
                                    "--temp", "0.6"], ("answers", r"Qwen3 8B")),
    # ---- oomkit's own options, new forms (right before) ----
    ("ctx-hex", lambda t: ["estimate", "qwen3:8b", "--vram", "24GiB", "--ctx", "0x1000"],
     ("refuses", r"--ctx takes an integer, got '0x1000'")),
    ("ctx-k-fraction", lambda t: ["estimate", "qwen3:8b", "--vram", "24GiB", "--ctx", "1.5k"],
     ("refuses", r"--ctx takes an integer, got '1\.5k'")),
    ("parallel-twice", lambda t: ["estimate", "qwen3:8b", "--vram", "24GiB", "--parallel", "2", "--parallel", "4"],
     ("refuses", r"--parallel given twice")),
    ("quant-twice", lambda t: ["estimate", "qwen3:8b", "--vram", "24GiB", "--quant", "Q4_K_M", "--quant", "Q8_0"],
     ("refuses", r"--quant given twice")),
    ("kv-type-twice", lambda t: ["estimate", "qwen3:8b", "--vram", "24GiB", "--kv-type", "q8_0", "--kv-type", "f16"],
     ("refuses", r"--kv-type given twice")),
    ("engine-version-twice", lambda t: ["estimate", "qwen3:8b", "--vram", "24GiB", "--engine-version", "b6000",
                                        "--engine-version", "b7000"], ("refuses", r"--engine-version given twice")),
    ("engine-version-negative-build", lambda t: ["estimate", "qwen3:8b", "--vram", "24GiB", "--engine-version", "b-5"],
     ("refuses", r"cannot read llama\.cpp version 'b-5'")),
    ("model-dev-null", lambda t: ["estimate", "/dev/null", "--vram", "24GiB"],
     ("refuses", r"/dev/null: is a character device, not a regular file")),
    ("model-folder-named-gguf", lambda t: ((t / "a.gguf").mkdir(), ["estimate", str(t / "a.gguf"), "--vram",
                                                                    "24GiB"])[1],
     ("refuses", r"a\.gguf: no config\.json and no \.gguf file")),
    ("plan-headroom-over-the-card", lambda t: ["plan", "qwen3:8b", "--vram", "24GiB", "--headroom", "48GiB"],
     ("refuses", r"leave nothing of CUDA0's 24\.00 GiB")),
    ("plan-limit-twice", lambda t: ["plan", "qwen3:8b", "--vram", "24GiB", "--limit", "3", "--limit", "5"],
     ("refuses", r"--limit given twice")),
    ("table-plot-no-folder", lambda t: ["table", "qwen3:8b", "--plot", str(t / "nope" / "x.svg")],
     ("refuses", r"there is no folder")),
    ("table-plot-docx", lambda t: ["table", "qwen3:8b", "--plot", str(t / "x.docx")],
     ("refuses", r"give a \.png or \.svg file name")),
    ("table-sizes-only-commas", lambda t: ["table", "qwen3:8b", "--sizes", ",,,"],
     ("refuses", r"--sizes takes a comma list of sizes")),
    ("diagnose-two-files", lambda t: ["diagnose", _file(t, "a.log", "x"), _file(t, "b.log", "y")],
     ("refuses", r"diagnose reads one FILE")),
    ("diagnose-blanks-only", lambda t: ["diagnose", _file(t, "ws.log", "   \n\t\n")],
     ("refuses", r"empty: nothing to diagnose")),
    ("fit-sh-c-unbalanced", lambda t: ["fit", "--vram", "8GiB", "--", "sh", "-c", "llama-server -m 'qwen3:8b"],
     ("refuses", r"sh -c: cannot split the command string \(No closing quotation\)")),
    ("fit-docker-without-image", lambda t: ["fit", "--vram", "8GiB", "--", "docker", "run", "--gpus", "all"],
     ("refuses", r"docker run: no image given")),
    ("llama-ts-only-a-comma", lambda t: ["estimate", "--vram", "24GiB,24GiB", *_LLAMA, "-ts", ","],
     ("refuses", r"-ts '': not a number")),
    ("vllm-max-model-len-inf", lambda t: ["estimate", "--vram", "80GiB", *_VLLM, "--max-model-len", "inf"],
     ("refuses", r"invalid human_readable_int value: 'inf'")),
    ("sglang-page-size-0", lambda t: ["estimate", "--vram", "80GiB", *_SGLANG, "--page-size", "0"],
     ("refuses", r"page_size \(--page-size\) 0: out of range")),
    # ---- GGUF headers ----
    ("gguf-kv-count-2-62", lambda t: _gguf(t, n_kv=2**62), ("refuses", r"key-value count is 4611686018427387904")),
    ("gguf-string-of-2-60-bytes", _long_string, ("refuses", r"a string of 1152921504606846976 bytes")),
    ("gguf-duplicate-key", lambda t: _gguf(t, L.meta() + [("llama.block_count", H.U32, 40)]),
     ("refuses", r"duplicate key 'llama\.block_count'")),
    ("gguf-tensor-offset-3", _offset_3, ("refuses", r"'token_embd\.weight' has data offset 3, expected 0")),
    ("gguf-head-count-kv-array-of-5", lambda t: _gguf(t, L.meta(**{
        "attention.head_count_kv": (H.ARR, (H.U32, [2] * 5))})), ("refuses", r"must hold 2 non-negative integers")),
    # ---- config.json ----
    # transformers reads config.json with json.load (utf-8): a byte-order mark stops it too
    ("cfg-byte-order-mark", lambda t: _config(t, "\ufeff" + json.dumps(H.llama_config())),
     ("refuses", r"Unexpected UTF-8 BOM")),
    ("cfg-config-json-a-folder", lambda t: _config(t, None), ("refuses", r"is a directory, not a regular file")),
]

# known gaps, in code this sweep does not own
STILL: dict[str, str] = {}


@pytest.mark.parametrize("case", [pytest.param(c, id=c[0], marks=pytest.mark.xfail(strict=True, reason=STILL[c[0]]))
                                  if c[0] in STILL else pytest.param(c, id=c[0]) for c in CASES])
def test_a_malformed_input_answers_or_refuses_in_one_line(tmp_path, case):
    cid, make, (what, words) = case
    t0 = time.monotonic()
    rc, out, err = run_cli(*make(tmp_path))
    assert time.monotonic() - t0 < 5, (cid, "took", time.monotonic() - t0)
    one_line_or_answer(rc, err, cid)
    if what == "refuses":
        assert rc == 2, (cid, rc, out[:300])
        assert re.search(words, err.strip()), (cid, err[:600])
    else:
        assert rc in (0, 1), (cid, err)
        assert re.search(words, out, re.MULTILINE), (cid, out[:600])


def test_errors_clips_a_long_query_in_its_answer():
    """was: `oomkit errors <100,000 characters>` printed all of them back"""
    rc, out, err = run_cli("errors", "x" * 100_000)
    assert rc == 1 and not err, err
    assert out.strip() == f"no known message matches '{'x' * QUOTE_LIMIT}...' (100,000 characters)", out[:300]


# ---- known gaps in code this sweep does not own ----


def test_vllm_positional_model_wins_over_the_model_flag():
    rc, out, err = run_cli("estimate", "--vram", "80GiB", "--json", *_VLLM, "--model", "Qwen/Qwen3-4B")
    assert rc in (0, 2), err
    assert rc == 0 and json.loads(out)["model"]["name"] == "Qwen3 8B", out[:300]
    # 0.6.x-0.8.2 refuse the pair (scripts.py serve / cli/serve.py ServeSubcommand.cmd: ValueError)
    rc, _, err = run_cli("estimate", "--vram", "80GiB", "--engine-version", "0.8.2", *_VLLM, "--model", "Qwen/Qwen3-4B")
    assert rc == 2 and "positional argument instead of via the `--model` option" in err, err


def test_a_gguf_path_with_a_trailing_slash(tmp_path):
    L.write(tmp_path / "m.gguf")
    rc, _, err = run_cli("estimate", str(tmp_path / "m.gguf") + "/", "--vram", "24GiB")
    one_line_or_answer(rc, err, "trailing slash")
    assert rc == 2, err


def test_diagnose_a_size_beyond_size_t():
    text = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 99999999999999999999999.00 GiB. GPU 0 has a "
            "total capacity of 23.65 GiB of which 1.00 GiB is free.")
    rc, out, err = run_cli("diagnose", "-", stdin=text)
    one_line_or_answer(rc, err, "diagnose 1e23 GiB")
    assert "2^64 - -" not in out, out[:600]


def test_python_api_devices_of_one_id():
    import oomkit
    from oomkit.memory import Device

    with pytest.raises(oomkit.OomkitError, match=r"CUDA0"):
        oomkit.estimate("qwen3:8b", devices=(Device(id="CUDA0", name="x", memory_bytes=24 << 30),
                                             Device(id="CUDA0", name="y", memory_bytes=8 << 30)))


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


_Q8 = [("model", "qwen3:8b"), ("vram", "24GiB")]


@pytest.mark.parametrize("path,params,words", [
    # a key given twice (was: FastAPI kept the last)
    ("/api/estimate", [("model", "qwen3:8b"), ("vram", "24GiB"), ("vram", "48GiB")],
     r"^vram given twice, as '24GiB' and '48GiB': give it once$"),
    ("/api/estimate", [("model", "qwen3:8b"), ("model", "llama3.1:8b"), ("vram", "24GiB")], r"^model given twice"),
    ("/api/check", [*_Q8, ("ctx", "4096"), ("ctx", "8192")], r"^ctx given twice"),
    # an unknown key (was: ignored; the POST bodies refuse an extra field)
    ("/api/estimate", [*_Q8, ("ctxx", "8192")], r"^unknown field 'ctxx' in the query string; /api/estimate takes "),
    ("/api/models", [("query", "qwen")], r"^unknown field 'query'.*takes q, family, kind"),
    ("/api/table", [("model", "qwen3:8b"), ("size", "8")], r"^unknown field 'size'"),
    # what the CLI's --ctx refuses (was: int() read both)
    ("/api/estimate", [*_Q8, ("ctx", "8_192")], r"^ctx takes an integer, got '8_192'$"),
    ("/api/estimate", [*_Q8, ("ctx", "８１９２")], r"^ctx takes an integer"),
    # the field named (was: "size: cannot read size ...")
    ("/api/estimate", [("model", "qwen3:8b"), ("cpu_only", "1"), ("ram", "lots")], r"^ram: cannot read size 'lots'"),
])
def test_web_query_strings(client, path, params, words):
    assert re.search(words, _error(client.get(path, params=params))), params


def test_web_query_key_given_twice_with_one_value_is_taken(client):
    r = client.get("/api/estimate", params=[*_Q8, ("vram", "24GiB")])
    assert r.status_code == 200 and r.json()["devices"][0]["memory_bytes"] == 24 << 30


@pytest.mark.parametrize("path,body,words", [
    ("/api/plan", {"model": "qwen3:8b", "vram": "24GiB", "reserve": "lots"}, r"^reserve: cannot read size 'lots'"),
    ("/api/plan", {"model": "qwen3:8b", "vram": "24GiB", "headroom": "-1GiB"}, r"^headroom: cannot read size"),
    # new forms, right before
    ("/api/fit", {"command": "llama-server -m qwen3:8b", "vram": "8GiB", "ctx": 4096},
     r"^ctx: Extra inputs are not permitted$"),
    ("/api/estimate", {"model": "qwen3:8b", "vram": "24GiB", "ctx": 4096.5}, r"^ctx takes an integer, got '4096\.5'"),
])
def test_web_bodies(client, path, body, words):
    assert re.search(words, _error(client.post(path, json=body))), body


def test_web_body_naming_a_field_twice(client):
    """was: json.loads kept the last"""
    raw = b'{"model": "qwen3:8b", "vram": "24GiB", "vram": "48GiB"}'
    r = client.post("/api/estimate", content=raw, headers={"content-type": "application/json"})
    assert _error(r, (400,)) == "vram given twice, as '24GiB' and '48GiB': give it once"


# ---- the MCP server's tools (new forms, right before) ----


def _tool(name: str, args) -> tuple[bool, str]:
    pytest.importorskip("mcp")
    from oomkit.web.mcp_server import build_server

    async def go():
        return await build_server().call_tool(name, args)

    try:
        return False, str(asyncio.run(go()))
    except Exception as e:  # noqa: BLE001 - the tool error, whatever the mcp release names it
        return True, str(e)


@pytest.mark.parametrize("name,args,words", [
    ("estimate", {"model": "qwen3:8b", "ctx": 10**30, "vram": "24GiB"}, r"ctx must be between 1 and 134217728"),
    ("plan", {"model": "qwen3:8b", "vram": "24GiB", "concurrency": 10**12}, r"concurrency must be between 1 and 4096"),
    ("estimate", {"model": "qwen3:8b", "cpu_only": 2}, r"^estimate: cpu_only: Input should be a valid boolean"),
])
def test_mcp_bad_arguments_are_one_line(name, args, words):
    failed, text = _tool(name, args)
    assert failed and "\n" not in text.strip(), text
    assert re.search(words, text.removeprefix(f"Error executing tool {name}: ")), text


# ---- an over-long argument in llama.cpp's -fa refusal gets the shared clip (its length said) ----

@pytest.mark.parametrize("flag", ["-fa", "--flash-attn"])
def test_an_over_long_fa_value_is_clipped_with_its_length(flag):
    word = "y" * 9000
    rc, _, err = run_cli("estimate", "--vram", "24GiB", *_LLAMA, flag, word)
    one_line_or_answer(rc, err, flag)
    assert rc == 2, err[:300]
    shown = clip_word(word)
    assert shown == "y" * QUOTE_LIMIT + "... (9,000 characters)"
    assert f"{flag} {shown}: llama.cpp stops: unkown value for --flash-attn: '{shown}'" in err, err[:600]
    assert "y" * (QUOTE_LIMIT + 1) not in err and len(err) < 600, err[:600]


@pytest.mark.parametrize("argv,words", [
    (["-m", "qwen3:8b", "--override-kv", "a=q:" + "y" * 9000],
     r"--override-kv 'a=q:y{76}\.\.\.' \(9,004 characters\): the type must"),
    (["-hf", "https://" + "y" * 9000], r"-hf 'https://y{72}\.\.\.' \(9,008 characters\): llama\.cpp takes"),
])
def test_other_quoted_llama_refusals_say_the_length(argv, words):
    rc, _, err = run_cli("estimate", "--vram", "24GiB", "--", "llama-server", *argv)
    one_line_or_answer(rc, err, argv[0])
    assert rc == 2 and re.search(words, err), err[:600]


def test_the_sweep_counts():
    # CLI cases, errors, the four in other modules, web queries (9 + 1), bodies (4 + 1), MCP (3)
    inputs = len(CASES) + 1 + 4 + 10 + 5 + 3
    assert len(CASES) == 45 and inputs == 68 and len({c[0] for c in CASES}) == len(CASES)
    assert set(STILL) <= {c[0] for c in CASES}


def test_python_api_cache_type_in_upper_case_refused_as_the_command_is():
    """`-ctk Q8_0` is refused (llama.cpp's kv_cache_type_from_str matches ggml_type_name exactly); the API's
    cache_type_k="Q8_0" was answered as q8_0."""
    import oomkit

    with pytest.raises(oomkit.OomkitError, match=r"cache_type_k='Q8_0'.*give 'q8_0'"):
        oomkit.estimate("qwen3:8b", engine="llama.cpp", vram="24GiB", cache_type_k="Q8_0")
    assert oomkit.estimate("qwen3:8b", engine="llama.cpp", vram="24GiB", cache_type_v="q8_0", cache_type_k="q8_0")


@pytest.mark.parametrize("blanked", ["[port]", "<port>", "%PORT%", "${PORT}", "{port}", "$(get_port)", "`get_port`"])
def test_a_blanked_out_number_in_a_pasted_command_is_taken(blanked):
    """Users blank a value out before posting (llama.cpp#13329: `--port [port]`): filled in before llama.cpp reads
    it, no memory depends on it; a plain word is still refused as std::stoi refuses it."""
    rc, out, err = run_cli("estimate", "--vram", "24GiB", *_LLAMA, "--port", blanked)
    assert rc == 0, err
    rc, _, err = run_cli("estimate", "--vram", "24GiB", *_LLAMA, "--port", "http")
    assert rc == 2 and "std::stoi" in err, err


@pytest.mark.parametrize("value", ["abc$", "8$0", "$$"])
def test_a_dollar_inside_a_word_is_no_placeholder(value):
    """Only a whole macro (`$PORT`, `${PORT}`, `${PORT:-8080}`) is a value filled in later; `abc$` is a word
    std::stoi refuses."""
    rc, _, err = run_cli("estimate", "--vram", "24GiB", *_LLAMA, "-t", value)
    assert rc == 2 and "std::stoi" in err, err
    rc, _, err = run_cli("estimate", "--vram", "24GiB", *_LLAMA, "--port", "${PORT:-8080}")
    assert rc == 0, err


@pytest.mark.parametrize(("extra", "said"), [
    (["--engine=ollama", "num_ctx=32768"], "Ollama's num_ctx is the context length: give --ctx 32768"),
    (["--engine=ollama", "OLLAMA_CONTEXT_LENGTH=8192"], "given as --env OLLAMA_CONTEXT_LENGTH=8192"),
    (["--engine=ollama", "foo"], "(one MODEL only)"),
])
def test_a_second_argument_after_an_inline_option_is_not_blamed_on_it(extra, said):
    """`--engine=ollama num_ctx=32768` said "--engine takes no value": the option had its value inline."""
    rc, _, err = run_cli("estimate", "llama3.1:8b", *extra, "--vram", "24GiB")
    assert rc == 2 and said in err and "takes no value" not in err, err


@pytest.mark.parametrize("argv", [
    ["estimate", "mlx-community/", "--engine", "mlx"], ["estimate", "mlx-community/", "--engine", "lmstudio"],
    ["estimate", "--", "lms", "load", "mlx-community/"],
    ["estimate", "--", "mlx_lm.generate", "--model", "mlx-community/"],
])
def test_a_repo_id_cut_after_its_owner_is_refused(argv):
    """`mlx-community/` was estimated as Qwen1.5 4B Chat (mlx's base lookup tried "Qwen/" + "", which normalizes to
    Ollama's `qwen` tag), exit 0."""
    rc, _, err = run_cli(*argv[:1], "--vram", "24GiB", *argv[1:])
    one_line_or_answer(rc, err, argv)
    assert rc == 2 and "as a repo id it names only its owner" in err, err
