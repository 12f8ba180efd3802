"""The web hub's JSON API and pages (FastAPI's TestClient, in process).

The API's answer for a request must be the CLI's `--json` for the same input: each endpoint is held against the
command function run in process on the equivalent argv. Bad input is a 4xx with {"error": "<one line>"}, never a
500 (hypothesis over the API's fields); nothing from a request is opened on the server; everything shown is escaped.
"""

from __future__ import annotations

import io
import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from oomkit.commands import check as check_cmd  # noqa: E402
from oomkit.commands import diagnose as diagnose_cmd  # noqa: E402
from oomkit.commands import errors as errors_cmd  # noqa: E402
from oomkit.commands import estimate as estimate_cmd  # noqa: E402
from oomkit.commands import fit as fit_cmd  # noqa: E402
from oomkit.commands import gpus as gpus_cmd  # noqa: E402
from oomkit.commands import models as models_cmd  # noqa: E402
from oomkit.commands import plan as plan_cmd  # noqa: E402
from oomkit.commands import table as table_cmd  # noqa: E402
from oomkit.web.app import create_app  # noqa: E402

CORPUS = Path(__file__).parent / "fixtures" / "diagnose" / "corpus.jsonl"


@pytest.fixture(scope="module")
def client():
    mp = pytest.MonkeyPatch()
    mp.setenv("HF_HUB_OFFLINE", "1")  # create_app sets it too; the patch restores the test process afterwards
    with TestClient(create_app()) as c:
        yield c
    mp.undo()


def cli_json(capsys, module, argv: list[str]):
    """The command's stdout for argv, read as JSON (--json goes before an engine command's --)."""
    if "--json" not in argv:
        k = argv.index("--") if "--" in argv else len(argv)
        argv = [*argv[:k], "--json", *argv[k:]]
    capsys.readouterr()
    module.run(argv)
    return json.loads(capsys.readouterr().out)


# ---------------------------------------------------------------------------------------------------------
# The same JSON as the CLI


ESTIMATES = [
    ({"model": "llama3.1:8b", "ctx": "8192", "vram": "24GiB"}, ["llama3.1:8b", "--ctx", "8192", "--vram", "24GiB"]),
    ({"model": "qwen3:32b", "ctx": "32768", "kv_type": "q8_0", "flags": "-fa on", "gpu": "2x RTX 3090"},
     ["qwen3:32b", "--ctx", "32768", "--kv-type", "q8_0", "-fa", "on", "--gpu", "2x RTX 3090"]),
    ({"model": "Qwen/Qwen3-14B", "engine": "vllm", "ctx": "16384", "vram": "80GiB"},
     ["Qwen/Qwen3-14B", "--engine", "vllm", "--ctx", "16384", "--vram", "80GiB"]),
    ({"command": "llama-server -m gemma-3-27b-it:Q4_K_M -c 65536 -np 2 -fa on", "vram": "24GiB,24GiB"},
     ["--vram", "24GiB,24GiB", "--", "llama-server", "-m", "gemma-3-27b-it:Q4_K_M", "-c", "65536", "-np", "2", "-fa",
      "on"]),
    ({"model": "deepseek-r1:671b", "quant": "Q2_K", "ctx": "32768", "parallel": "1", "engine_version": "b6500",
      "gpu": "8x H100"},
     ["deepseek-r1:671b", "--quant", "Q2_K", "--ctx", "32768", "--parallel", "1", "--engine-version", "b6500",
      "--gpu", "8x H100"]),
    # no GPU: llama.cpp's --fit fits the context to the host's memory (a planned 16 GiB; this machine's total)
    ({"model": "llama3.1:8b", "cpu_only": "1", "ram": "16GiB", "parallel": "1"},
     ["llama3.1:8b", "--cpu-only", "--ram", "16GiB", "--parallel", "1"]),
    ({"model": "qwen3:8b", "cpu_only": "true"}, ["qwen3:8b", "--cpu-only"]),
    ({"command": "llama-server -m llama3.1:8b -c 65536", "cpu_only": "on", "ram": "12GB"},
     ["--cpu-only", "--ram", "12GB", "--", "llama-server", "-m", "llama3.1:8b", "-c", "65536"]),
]


@pytest.mark.parametrize(("params", "argv"), ESTIMATES)
def test_estimate_is_the_cli_json(client, capsys, params, argv):
    want = cli_json(capsys, estimate_cmd, argv)
    got = client.get("/api/estimate", params=params)
    assert got.status_code == 200, got.text
    assert got.json() == want
    posted = client.post("/api/estimate", json=params)
    assert posted.status_code == 200 and posted.json() == want


def test_estimate_real_numbers(client):
    """Llama 3.1 8B's published config: 32 layers, 8 KV heads of 128; f16 K and V at 8192 cells (llama.cpp)."""
    d = client.get("/api/estimate", params={"model": "llama3.1:8b", "ctx": "8192", "vram": "24GiB"}).json()
    assert d["kv_cache_bytes"] == 32 * 8 * 128 * 2 * 2 * 8192
    assert d["kv_bytes_per_token"] == 32 * 8 * 128 * 2 * 2
    assert d["engine_view"]["n_ctx"] == 8192 and d["fits"] is True


def test_check_is_the_cli_json(client, capsys):
    want = cli_json(capsys, check_cmd, ["qwen3:8b", "--ctx", "40960", "--gpu", "RTX 4060", "--json"])
    got = client.get("/api/check", params={"model": "qwen3:8b", "ctx": "40960", "gpu": "RTX 4060"})
    assert got.status_code == 200 and got.json() == want


def test_cpu_only_check_and_estimate_are_the_cli_json(client, capsys):
    """cpu_only and ram in the API are --cpu-only and --ram: on a planned 16 GiB host, llama.cpp's fit picks 109056
    cells for llama3.1:8b (docs/commands/estimate.md), 128 KiB of f16 KV each (32 layers x 2 x 1024 x 2 bytes)."""
    argv = ["llama3.1:8b", "--cpu-only", "--ram", "16GiB", "-np", "1", "--json"]
    q = {"model": "llama3.1:8b", "cpu_only": "1", "ram": "16GiB", "flags": "-np 1"}
    want = cli_json(capsys, check_cmd, argv)
    got = client.get("/api/check", params=q)
    assert got.status_code == 200 and got.json() == want and want["fits"] is False
    est = client.post("/api/estimate", json={**q, "cpu_only": True})
    assert est.status_code == 200 and est.json() == cli_json(capsys, estimate_cmd, argv)
    d = est.json()
    assert d["engine_view"]["n_ctx"] == 109056 and d["kv_cache_bytes"] == 109056 * 32 * 2 * 1024 * 2
    assert -want["margin_bytes"] == d["total_bytes"] - (16 << 30)
    # the calculator says the same against the host's memory
    page = client.get("/", params=q)
    assert page.status_code == 200 and "Does not fit in the host" in page.text
    assert f'data-bytes="{d["total_bytes"] - (16 << 30)}"' in page.text and 'name="cpu_only" value="1" checked' in page.text


def test_table_is_the_cli_json(client, capsys):
    want = cli_json(capsys, table_cmd, ["gemma-3-27b-it", "--vram", "48GiB", "--sizes", "16,24,48", "--json"])
    got = client.get("/api/table", params={"model": "gemma-3-27b-it", "vram": "48GiB", "sizes": "16,24,48"})
    assert got.status_code == 200 and got.json() == want
    want = cli_json(capsys, table_cmd, ["llama3.1:8b", "--kind", "limits", "--kv-types", "f16,q8_0", "--json"])
    got = client.get("/api/table", params={"model": "llama3.1:8b", "kind": "limits", "kv_types": "f16,q8_0"})
    assert got.status_code == 200 and got.json() == want


def test_models_gpus_errors_are_the_cli_json(client, capsys, monkeypatch):
    from oomkit.hardware import detect as detect_module

    assert client.get("/api/models", params={"q": "qwen3"}).json() == cli_json(capsys, models_cmd, ["qwen3", "--json"])
    assert client.get("/api/models", params={"kind": "latent"}).json() == cli_json(
        capsys, models_cmd, ["--kind", "latent", "--json"])
    # the host's free memory moves between two readings: both sides read one frozen reading
    host = detect_module.host_memory()
    monkeypatch.setattr(detect_module, "host_memory", lambda probe=None: host)
    assert client.get("/api/gpus").json() == cli_json(capsys, gpus_cmd, ["--json"])
    assert client.get("/api/errors", params={"q": "vllm kv"}).json() == cli_json(
        capsys, errors_cmd, ["vllm", "kv", "--json"])
    assert client.get("/api/errors").json() == cli_json(capsys, errors_cmd, ["--json"])


def test_plan_is_the_cli_json(client, capsys):
    want = cli_json(capsys, plan_cmd, ["qwen3:8b", "--gpu", "RTX 4060", "--min-ctx", "16384", "--json"])
    got = client.post("/api/plan", json={"model": "qwen3:8b", "gpu": "RTX 4060", "min_ctx": 16384})
    assert got.status_code == 200 and got.json() == want
    assert want["plan"]["options"], "the plan has options to compare"


def test_fit_is_the_cli_json(client, capsys):
    command = "llama-server -m qwen3:8b -c 131072 -fa on"
    want = cli_json(capsys, fit_cmd, ["--vram", "12GiB", "--json", "--", *command.split()])
    got = client.post("/api/fit", json={"command": command, "vram": "12GiB"})
    assert got.status_code == 200 and got.json() == want
    assert want["fit"]["command_in"] == command


def test_diagnose_is_the_cli_json(client, capsys, monkeypatch):
    rows = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
    for row in rows[:12]:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(row["text"].encode("utf-8"))))
        want = cli_json(capsys, diagnose_cmd, ["--json"])
        got = client.post("/api/diagnose", json={"text": row["text"]})
        assert got.status_code == 200 and got.json() == want, row["id"]
        assert got.json()["stage"] == row["expected"]["stage"], row["id"]


def test_diagnose_page_for_every_corpus_log(client):
    """Every public log of the diagnose corpus renders on the page with the stage the API gives it."""
    rows = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
    for row in rows:
        stage = client.post("/api/diagnose", json={"text": row["text"]}).json()["stage"]
        page = client.post("/diagnose", data={"text": row["text"]})
        assert page.status_code == 200 and f'<b id="stage">{stage}</b>' in page.text, row["id"]


def test_diagnose_page_shows_what_a_short_paste_cannot_tell(client):
    """A one-line paste's "ran out", "unknown" and "paste" lines (diagnose's Diagnosis.short) are on the page too."""
    page = client.post("/diagnose", data={"text": "hipErrorOutOfMemory"}).text
    said = client.post("/api/diagnose", json={"text": "hipErrorOutOfMemory"}).json()["short"]
    assert said and "what the lines cannot tell" in page and "to tell more, paste" in page and "ran out" in page
    assert "rocm-smi" in page


def test_openapi_lists_every_endpoint(client):
    paths = client.get("/openapi.json").json()["paths"]
    for p in ("/api/estimate", "/api/check", "/api/table", "/api/models", "/api/gpus", "/api/plan", "/api/fit",
              "/api/diagnose"):
        assert p in paths
    assert "post" in paths["/api/estimate"] and "get" in paths["/api/estimate"]


def test_uploaded_config_estimates_as_the_file_does(client, capsys, tmp_path):
    from oomkit.model import catalog

    config = dict(catalog.lookup("qwen3:8b").config)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    want = cli_json(capsys, estimate_cmd, [str(path), "--ctx", "8192", "--vram", "24GiB", "--json"])
    got = client.post("/api/estimate", json={"config": config, "ctx": 8192, "vram": "24GiB"})
    assert got.status_code == 200, got.text
    g = got.json()
    for key in ("weights_bytes", "kv_cache_bytes", "compute_bytes", "total_bytes", "engine_view", "settings"):
        assert g[key] == want[key], key


# ---------------------------------------------------------------------------------------------------------
# Bad input: 4xx with one line, never a 500; no file of the server opened


def _error(r, status: int) -> str:
    assert r.status_code == status, (r.status_code, r.text)
    body = r.json()
    assert set(body) == {"error"} and "\n" not in body["error"] and body["error"]
    return body["error"]


@pytest.mark.parametrize("model", ["/etc/passwd", "./model.gguf", "../x", "~/.ssh/id_rsa", "config.json",
                                   "tests", "C:\\models\\x.gguf", "file:///etc/passwd"])
def test_paths_are_refused(client, model):
    assert "file path" in _error(client.get("/api/estimate", params={"model": model}), 400)
    assert "file path" in _error(client.post("/api/plan", json={"model": model}), 400)


def test_paths_inside_commands_are_refused(client):
    r = client.get("/api/estimate", params={"command": "llama-server -m /etc/passwd -c 4096"})
    assert "file path" in _error(r, 400)
    r = client.post("/api/fit", json={"command": "llama-server -m ./tests -c 4096", "vram": "8GiB"})
    assert "file path" in _error(r, 400)
    r = client.get("/?command=llama-server+-m+/etc/passwd")
    assert r.status_code == 400 and "file path" in r.text


def test_bad_input_answers(client):
    assert "unknown model" in _error(client.get("/api/estimate", params={"model": "no-such-model-xyz"}), 400)
    _error(client.get("/api/estimate", params={"model": "llama3.1:8b", "ctx": "0"}), 422)
    _error(client.get("/api/estimate", params={"model": "llama3.1:8b", "ctx": str(1 << 40)}), 422)
    _error(client.get("/api/estimate", params={"model": "llama3.1:8b", "parallel": "abc"}), 422)
    _error(client.get("/api/estimate", params={"model": "llama3.1:8b", "vram": "999TiB"}), 422)
    _error(client.get("/api/estimate", params={"model": "llama3.1:8b", "vram": "lots"}), 400)
    for bad in ({"cpu_only": "maybe"}, {"cpu_only": "1", "vram": "24GiB"}, {"cpu_only": "1", "ram": "lots"},
                {"cpu_only": "1", "ram": "16"}, {"cpu_only": "1", "ram": "16GiB,16GiB"},
                {"cpu_only": "1", "engine": "ollama", "ram": "16GiB"}):
        for path in ("/api/estimate", "/api/check"):
            _error(client.get(path, params={"model": "llama3.1:8b", **bad}), 400)
    _error(client.post("/api/estimate", json={"model": "llama3.1:8b", "cpu_only": 2}), 400)
    _error(client.get("/api/estimate", params={"model": "llama3.1:8b", "cpu_only": "1", "ram": "999TiB"}), 422)
    _error(client.get("/api/table", params={"model": "llama3.1:8b", "vram": "²"}), 400)  # a digit to isdigit()
    _error(client.post("/api/plan", json={"model": "llama3.1:8b", "reserve": "²"}), 400)
    _error(client.get("/api/estimate", params={"command": "llama-server -m 'qwen3:8b"}), 400)
    _error(client.get("/api/estimate", params={"model": "x" * 5000}), 413)
    _error(client.get("/api/estimate"), 400)
    _error(client.post("/api/estimate", json={"model": "llama3.1:8b", "nope": 1}), 422)
    _error(client.post("/api/estimate", content=b"{not json", headers={"content-type": "application/json"}), 422)
    _error(client.post("/api/fit", json={"vram": "8GiB"}), 422)
    _error(client.post("/api/diagnose", json={"text": ""}), 400)
    _error(client.post("/api/diagnose", json={"text": "x" * (20 * 1000 * 1000 + 10)}), 413)
    _error(client.get("/api/nothing-here"), 404)


def test_oomkit_options_are_not_engine_flags(client, tmp_path):
    """`--plot FILE` would write a file of the server, `--env` set its environment: only fields set oomkit's options."""
    target = tmp_path / "x.svg"
    for flags in (f"--plot {target}", f"--plot={target}", "--json", "--env OLLAMA_NUM_PARALLEL=4", "-- vllm"):
        r = client.get("/api/table", params={"model": "llama3.1:8b", "flags": flags})
        assert "not an engine flag" in _error(r, 400), flags
    assert not target.exists()
    assert client.get("/api/estimate", params={"model": "llama3.1:8b", "flags": "-fa on -ngl 99"}).status_code == 200


def test_models_query_is_text(client, capsys):
    assert client.get("/api/models", params={"q": "--json"}).json() == []
    _error(client.get("/api/models", params={"kind": "nope"}), 400)


def test_body_over_the_limit_is_413_before_it_is_read(client):
    r = client.post("/api/diagnose", content=b"x" * (22 * 1000 * 1000), headers={"content-type": "application/json"})
    assert r.status_code == 413 and "20 MB" in r.json()["error"]


def test_off_the_hub_by_default(client, monkeypatch):
    """A name the catalog does not know is not looked up on the hub: no connection is even attempted."""
    def refuse(*args, **kwargs):
        raise AssertionError("the server tried to open a connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    r = client.get("/api/estimate", params={"model": "some-org/some-model-not-in-the-catalog"})
    assert "--hub" in _error(r, 400)
    assert client.get("/api/estimate", params={"model": "Qwen/Qwen3-8B"}).status_code == 200


# ---------------------------------------------------------------------------------------------------------
# No 500 for any input (hypothesis over the API's fields)

_text = st.one_of(st.none(), st.text(max_size=40), st.sampled_from(
    ["llama3.1:8b", "qwen3:8b", "gemma-3-27b-it", "deepseek-v2:16b", "granite4:tiny-h", "vllm", "sglang", "ollama",
     "mlx", "transformers", "llama.cpp", "24GiB", "0", "-1", "1e9", "q8_0", "q4_0", "f16", "fp8", "Q4_K_M", "RTX 4090",
     "2x H100", "-fa on", "-c", "--", "b6500", "0.12.10", "32k", "99999999999", "NaN", "a,b", "24GiB,", ","]))
_ints = st.one_of(_text, st.integers(min_value=-(1 << 62), max_value=1 << 62))
_commands = st.one_of(st.none(), st.sampled_from([
    "llama-server -m qwen3:8b -c 32768", "vllm serve Qwen/Qwen3-8B --max-model-len 9999999999", "ollama run qwen3:8b",
    "python -m sglang.launch_server --model-path Qwen/Qwen3-8B --mem-fraction-static 2", "llama-server -c -5",
    "llama-server", "vllm", "mlx_lm.server --model mlx-community/Qwen3-8B-4bit", "rm -rf /", "llama-server -m",
    "vllm serve Qwen/Qwen3-8B --tensor-parallel-size 0", "llama-server -m qwen3:8b -ngl -1 -np 0"]), st.text(max_size=60))


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(model=_text, engine=_text, ctx=_ints, quant=_text, kv_type=_text, parallel=_ints, vram=_text, gpu=_text,
       command=_commands, flags=_text, engine_version=_text,
       cpu_only=st.one_of(st.none(), st.booleans(), _ints), ram=st.one_of(_ints, st.sampled_from(["16GiB", "1MiB"])))
def test_estimate_never_500(client, model, engine, ctx, quant, kv_type, parallel, vram, gpu, command, flags,
                            engine_version, cpu_only, ram):
    body = {k: v for k, v in dict(model=model, engine=engine, ctx=ctx, quant=quant, kv_type=kv_type,
                                  parallel=parallel, vram=vram, gpu=gpu, command=command, flags=flags,
                                  engine_version=engine_version, cpu_only=cpu_only, ram=ram).items() if v is not None}
    r = client.post("/api/estimate", json=body)
    assert r.status_code < 500, (body, r.text)
    if r.status_code >= 400:
        assert "\n" not in r.json()["error"]
    q = {k: str(v) for k, v in body.items() if "\x00" not in str(v)}
    assert client.get("/api/estimate", params=q).status_code < 500, q


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(command=_commands, vram=_text, gpu=_text, min_ctx=_ints)
def test_fit_never_500(client, command, vram, gpu, min_ctx):
    body = {k: v for k, v in dict(command=command or "", vram=vram, gpu=gpu, min_ctx=min_ctx).items() if v is not None}
    r = client.post("/api/fit", json=body)
    assert r.status_code < 500, (body, r.text)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=st.text(max_size=400), model=_text, ctx=_ints)
def test_diagnose_and_check_never_500(client, text, model, ctx):
    assert client.post("/api/diagnose", json={"text": text}).status_code < 500
    q = {k: str(v) for k, v in dict(model=model, ctx=ctx).items() if v is not None and "\x00" not in str(v)}
    assert client.get("/api/check", params={**q, "vram": "24GiB"}).status_code < 500


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(model=_text, engine=_text, gpu=_text, vram=_text, min_ctx=_ints, concurrency=_ints, limit=_ints, quant=_text)
def test_plan_never_500(client, model, engine, gpu, vram, min_ctx, concurrency, limit, quant):
    body = {k: v for k, v in dict(model=model or "qwen3:0.6b", engine=engine, gpu=gpu, vram=vram, min_ctx=min_ctx,
                                  concurrency=concurrency, limit=limit, quant=quant).items() if v is not None}
    r = client.post("/api/plan", json=body)
    assert r.status_code < 500, (body, r.text)


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(model=_text, kind=_text, sizes=_text, kv_types=_text, vram=_text, flags=_text)
def test_table_never_500(client, model, kind, sizes, kv_types, vram, flags):
    q = {k: str(v) for k, v in dict(model=model or "qwen3:0.6b", kind=kind, sizes=sizes, kv_types=kv_types,
                                     vram=vram, flags=flags).items() if v is not None and "\x00" not in str(v)}
    r = client.get("/api/table", params=q)
    assert r.status_code < 500, (q, r.text)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(path=st.sampled_from(["/", "/kv", "/limits"]), model=_text, engine=_text, ctx=_ints, kv_type=_text,
       vram=_text, gpu=_text, command=_commands, flags=_text, here=st.sampled_from([None, "1"]))
def test_pages_never_500(client, path, model, engine, ctx, kv_type, vram, gpu, command, flags, here):
    q = {k: str(v) for k, v in dict(model=model, engine=engine, ctx=ctx, kv_type=kv_type, vram=vram, gpu=gpu,
                                     command=command, flags=flags, here=here).items()
         if v is not None and "\x00" not in str(v)}
    r = client.get(path, params=q)
    assert r.status_code in (200, 400), (path, q, r.text[:300])
    assert r.text.startswith("<!doctype html>")


# ---------------------------------------------------------------------------------------------------------
# Pages: every one renders; everything shown is escaped; the inputs live in the URL


PAGES = ["/", "/calculator", "/?model=llama3.1%3A8b&ctx=32768&vram=24GiB", "/limits", "/limits?model=qwen3%3A8b",
         "/plan", "/plan?model=qwen3%3A8b&gpu=RTX+4060&min_ctx=16384",
         "/plan?fit_command=llama-server+-m+qwen3%3A8b+-c+131072&fit_vram=12GiB", "/diagnose", "/errors",
         "/errors?q=vllm", "/kv", "/kv?model=deepseek-r1%3A671b&ctx=32768", "/kv?model=granite4%3Atiny-h",
         "/machine", "/static/app.js"]


@pytest.mark.parametrize("url", PAGES)
def test_pages_render(client, url):
    r = client.get(url)
    assert r.status_code == 200, r.text[:500]
    if not url.endswith(".js"):
        assert r.text.startswith("<!doctype html>") and "Cannot answer" not in r.text


def test_plan_page_tiers(client):
    """Nothing fits an 8 GB card entirely: the offloaded tier with its commands, and the smallest hardware."""
    q = {"model": "qwen3:32b", "gpu": "RTX 4060", "min_ctx": "8192"}
    d = client.post("/api/plan", json=q).json()["plan"]
    html = client.get("/plan", params=q).text
    assert d["smallest_hardware"] and 'id="tier3"' in html
    assert f'data-bytes="{d["smallest_hardware"]["needed_bytes"]}"' in html
    for o in d["options"]:
        assert f'>{o["command"].replace("&", "&amp;")}</pre>' in html


def test_every_error_has_a_page(client):
    rows = client.get("/api/errors").json()
    assert len(rows) > 20
    for r in rows:
        page = client.get(f"/errors/{r['id']}")
        assert page.status_code == 200 and r["id"] in page.text
    assert client.get("/errors/no-such-message").status_code == 404


def test_calculator_shows_the_api_numbers(client):
    q = {"model": "qwen3:14b", "ctx": "32768", "vram": "24GiB", "kv_type": "q8_0", "flags": "-fa on"}
    api = client.get("/api/estimate", params=q).json()
    html = client.get("/", params=q).text
    for ident, key in (("stat-total", "total_bytes"), ("stat-weights", "weights_bytes"), ("stat-kv", "kv_cache_bytes")):
        assert f'<div class="stat" id="{ident}"><b><span data-bytes="{api[key]}"' in html
    assert f'data-value="{api["max_context"]}"' in html
    assert "llama-server" in html and "copy</button>" in html


def test_a_pasted_command_fills_the_form(client):
    html = client.get("/", params={"command": "llama-server -m qwen3:8b -c 16384 -ctk q8_0 -ctv q8_0 -fa on"}).text
    assert 'name="model" type="text" value="qwen3:8b"' in html
    assert 'name="ctx" type="text" value="16384"' in html
    assert 'name="kv_type" type="text" value="q8_0"' in html


def test_script_in_a_model_name_is_text(client):
    evil = '<script>alert("x")</script>'
    for url, params in (("/", {"model": evil}), ("/limits", {"model": evil}), ("/kv", {"model": evil}),
                        ("/plan", {"model": evil}), ("/errors", {"q": evil})):
        r = client.get(url, params=params)
        assert r.status_code < 500
        assert evil not in r.text and "&lt;script&gt;" in r.text, url


def test_script_in_a_log_is_text(client):
    log = ('<script>alert(1)</script>\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. '
           'GPU 0 has a total capacity of 23.65 GiB of which 1.20 GiB is free. <img src=x onerror=alert(2)>')
    r = client.post("/diagnose", data={"text": log})
    assert r.status_code == 200
    assert "<script>alert(1)" not in r.text and "<img src=x" not in r.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in r.text and 'id="stage"' in r.text


def test_the_machine_page_with_gpus(client, monkeypatch):
    """Two GPUs as NVML reports them (an RTX 4090 shows 24,564 MiB of its 24,576), one holding a process whose
    name would be markup."""
    from oomkit.hardware.detect import Gpu, GpuProcess, Hardware, HostMemory
    from oomkit.web import api

    MiB = 1 << 20
    proc = GpuProcess(pid=4242, name="<script>alert(1)</script>", used_bytes=3000 * MiB, gpu_index=0)
    gpus = (Gpu(0, "NVIDIA GeForce RTX 4090", "nvidia", 24564 * MiB, 21000 * MiB, 3000 * MiB, "nvml",
                processes=(proc,)),
            Gpu(1, "NVIDIA GeForce RTX 4090", "nvidia", 24564 * MiB, 24000 * MiB, 0, "nvml"))
    hw = Hardware(gpus=gpus, host=HostMemory(total_bytes=64 << 30, available_bytes=50 << 30))
    monkeypatch.setattr(api, "detect", lambda processes=False: hw)
    html = client.get("/machine").text
    assert f'<td id="free-0"><span data-bytes="{21000 * MiB}"' in html
    assert f'data-bytes="{(24564 - 21000 - 3000) * MiB}"' in html  # the driver's reserve: total - used - free
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script>alert(1)" not in html
    assert client.get("/api/gpus", params={"processes": "1"}).json()["gpus"][0]["processes"][0]["pid"] == 4242
    assert client.get("/api/gpus").json() == json.loads(json.dumps(hw.to_dict()))


def test_the_calculator_checks_this_machine(client):
    html = client.get("/", params={"model": "qwen3:8b", "ctx": "32768", "here": "1"}).text
    assert '<pre id="check">' in html and "verdict:" in html


def test_the_calculator_takes_an_uploaded_config(client):
    from oomkit.model import catalog

    config = catalog.lookup("qwen3:8b").config
    want = client.post("/api/estimate", json={"config": config, "ctx": 8192, "vram": "24GiB"}).json()
    html = client.post("/", data={"config": json.dumps(config), "ctx": "8192", "vram": "24GiB"}).text
    assert f'<div class="stat" id="stat-total"><b><span data-bytes="{want["total_bytes"]}"' in html
    r = client.post("/", data={"config": "{not json", "ctx": "8192"})
    assert r.status_code == 400 and "not JSON" in r.text
    r = client.post("/", data={"config": "x" * 1_000_001})
    assert r.status_code == 400 and "larger than 1 MB" in r.text


def test_the_kv_page_worked_example_uses_the_estimate(client):
    """Llama 3.1 8B at 32768: the textbook 2 x 32 x 4096 x 32768 x 2 bytes against the real 32 x 8 x 128 x 2 x 2."""
    html = client.get("/kv", params={"model": "llama3.1:8b", "ctx": "32768", "parallel": "1"}).text
    assert f'data-bytes="{2 * 32 * 4096 * 32768 * 2}"' in html
    assert f'data-bytes="{32 * 8 * 128 * 2 * 2 * 32768}"' in html
    assert '<b id="ratio">4.0×</b>' in html
    assert f'id="textbook-token" data-bytes="{2 * 32 * 4096 * 2}"' in html
    assert f'id="real-token" data-bytes="{32 * 8 * 128 * 2 * 2}"' in html


def test_the_kv_page_on_mla_and_hybrid(client):
    """DeepSeek R1 (config: 61 layers, hidden 7168, kv_lora_rank 512 + rope 64; llama.cpp keeps K only, f16):
    1,748,992 textbook bytes per token against 61 x 576 x 2 = 70,272. Granite 4.0 H-Tiny: only its 4 attention
    layers of 40 grow with the context (4 KV heads of 128, K and V, f16: 8,192 bytes per token)."""
    html = client.get("/kv", params={"model": "deepseek-r1:671b", "ctx": "32768"}).text
    assert f'id="real-token" data-bytes="{61 * 576 * 2}"' in html and '<b id="ratio">24.9×</b>' in html
    html = client.get("/kv", params={"model": "granite4:tiny-h", "ctx": "32768"}).text
    assert f'id="real-token" data-bytes="{4 * 4 * 128 * 2 * 2}"' in html and '<b id="ratio">30.0×</b>' in html


# ---------------------------------------------------------------------------------------------------------
# The command: the extra missing, a non-loopback host, the core not importing fastapi


def test_loopback_answers_only_its_own_names(monkeypatch):
    """A page on another site that rebinds its name to 127.0.0.1 reaches the server with its own Host header."""
    from oomkit.web.app import LOOPBACK_NAMES

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    app = create_app(hosts=LOOPBACK_NAMES)
    for base in ("http://127.0.0.1:8000", "http://localhost:8000", "http://[::1]:8000"):
        assert TestClient(app, base_url=base).get("/api/gpus").status_code == 200, base
    r = TestClient(app, base_url="http://evil.example:8000").get("/api/gpus")
    assert r.status_code == 421 and set(r.json()) == {"error"}


def test_serve_without_the_extra(monkeypatch, capsys):
    from oomkit.commands import serve

    monkeypatch.setitem(sys.modules, "uvicorn", None)
    assert serve.run([]) == 2
    assert capsys.readouterr().err.strip() == "oomkit serve needs the web extra: pip install 'oomkit[web]'"


def test_serve_warns_off_loopback(monkeypatch, capsys):
    import uvicorn

    from oomkit.commands import serve

    seen = {}
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # create_app sets it for the process; the patch restores it after
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: seen.update(kw, app=app))
    assert serve.run(["--host", "0.0.0.0", "--port", "8123"]) == 0
    assert {k: v for k, v in seen.items() if k != "app"} == {"host": "0.0.0.0", "port": 8123, "log_level": "warning"}
    assert "warning: listening on 0.0.0.0" in capsys.readouterr().err
    assert serve.run(["--port", "8124"]) == 0
    assert "warning" not in capsys.readouterr().err


def test_core_does_not_import_fastapi():
    code = ("import sys, oomkit, oomkit.cli, oomkit.estimate, oomkit.commands.serve, oomkit.commands.mcp;"
            "print(sorted(m for m in ('fastapi', 'uvicorn', 'starlette', 'mcp') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
