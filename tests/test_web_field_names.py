"""The web API's errors name the fields the caller sent (vram, gpu, sizes, model ...), not the CLI's options
(--vram, --gpu, --sizes, MODEL) that the same message names on the command line: one table (api.caller_words),
applied where the app turns an OomkitError into its JSON answer, and shared with the MCP server's tool errors."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("fastapi")

from fastapi.testclient import TestClient  # noqa: E402

from oomkit.errors import OomkitError  # noqa: E402
from oomkit.web import api  # noqa: E402
from oomkit.web.app import create_app  # noqa: E402

# oomkit's own options, as the CLI's messages write them (an engine's flags, e.g. llama.cpp's --fit, are not these)
CLI_OPTION = re.compile(r"(?<![\w-])--(vram|gpu|ram|cpu-only|engine-version|kv-types?|min-ctx|concurrency|quant|"
                        r"reserve|headroom|sizes|kind|nodes|limit)(?![\w-])|\bMODEL\b")
NO_MODEL = ("no model given: give model (a catalog name, an Ollama tag or an HF id, e.g. qwen3:8b) or command (a "
            "whole engine command line)")


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app())


def _error(resp) -> str:
    assert resp.status_code == 400, resp.text
    text = resp.json()["error"]
    assert not CLI_OPTION.search(text), text
    return text


GETS = [
    ("/api/estimate", {}, NO_MODEL),
    ("/api/estimate", {"model": "qwen3:8b", "vram": "24"}, "vram 24: 24 what? write 24GiB"),
    ("/api/estimate", {"model": "qwen3:8b", "gpu": "Foo 9000"}, 'If it is none of these, give its memory in vram '
                                                                '(e.g. "8GiB")'),
    ("/api/estimate", {"model": "qwen3:8b", "command": "llama-server -m qwen3:8b"},
     "give either model with options, or command, not both"),
    ("/api/check", {"model": "qwen3:8b", "vram": "24"}, "vram 24: 24 what?"),
    ("/api/check", {"model": "qwen3:8b", "cpu_only": "1", "gpu": "RTX 4090"}, "cpu_only and gpu RTX 4090 contradict"),
    ("/api/check", {"model": "qwen3:8b", "gpu": "Foo 9000"}, "give its memory in vram"),
    ("/api/table", {}, NO_MODEL),
    ("/api/table", {"model": "qwen3:8b", "sizes": "abc"}, "sizes: cannot read 'abc' as a size"),
    ("/api/table", {"model": "qwen3:8b", "kind": "zzz"}, "kind takes limits or context, not 'zzz'"),
]

POSTS = [
    ("/api/plan", {}, NO_MODEL),
    ("/api/plan", {"model": "qwen3:8b", "reserve": "2"}, "reserve 2: 2 what?"),
    ("/api/plan", {"model": "qwen3:8b", "headroom": "2"}, "headroom 2: 2 what?"),
    ("/api/plan", {"model": "qwen3:8b", "ram": "2"}, "ram 2: 2 what?"),
    ("/api/plan", {"model": "qwen3:8b", "vram": "24GiB", "gpu": "RTX 4090"},
     "vram 24GiB and gpu RTX 4090 both say the hardware"),
    ("/api/fit", {"command": "llama-server -m qwen3:8b", "vram": "24"}, "vram 24: 24 what?"),
    ("/api/fit", {"command": "llama-server -m qwen3:8b", "reserve": "2"}, "reserve 2: 2 what?"),
    ("/api/fit", {"command": "llama-server -m qwen3:8b", "gpu": "Foo 9000"}, "give its memory in vram"),
    ("/api/estimate", {"model": "qwen3:8b", "vram": "24"}, "vram 24: 24 what?"),
]


@pytest.mark.parametrize(("path", "query", "said"), GETS)
def test_get_errors_name_the_fields(client: TestClient, path: str, query: dict, said: str) -> None:
    assert said in _error(client.get(path, params=query))


@pytest.mark.parametrize(("path", "body", "said"), POSTS)
def test_post_errors_name_the_fields(client: TestClient, path: str, body: dict, said: str) -> None:
    assert said in _error(client.post(path, json=body))


def test_engine_flags_stay(client: TestClient) -> None:
    """An engine's own flag in a message stays (llama.cpp's --fit), and so does a flag the caller typed into a
    pasted command, quoted as typed."""
    text = _error(client.get("/api/estimate", params={"model": "qwen3:8b", "engine": "vllm", "ram": "16GiB"}))
    assert text.startswith("ram: the vllm engine does not size anything by the host's memory (llama.cpp's --fit")
    resp = client.get("/api/estimate", params={"command": "llama-server -m qwen3:8b --vram 24GiB"})
    assert resp.status_code == 400
    assert resp.json()["error"].startswith("invalid argument: --vram (not a llama-server flag; oomkit's own settings "
                                           "are fields of their own")


@pytest.mark.parametrize(("path", "name"), [("/api/gpus", "gpus"), ("/api/diagnose", "diagnose_text")])
def test_every_endpoint_goes_through_the_table(client: TestClient, monkeypatch: pytest.MonkeyPatch, path: str,
                                               name: str) -> None:
    """gpus and diagnose have no message that names an oomkit option today; their answers pass the same table."""
    def refuse(*args: object, **kwargs: object) -> api.Answer:
        raise OomkitError("--gpu Foo: give its memory with --vram SIZE")

    monkeypatch.setattr(api, name, refuse)
    resp = client.post(path, json={"text": "x"}) if path == "/api/diagnose" else client.get(path)
    assert _error(resp) == 'gpu Foo: give its memory in vram (e.g. "8GiB")'


def test_pages_keep_their_own_words(client: TestClient) -> None:
    """The pages name their fields by label (web/app.py _page_words), not by the API's names."""
    page = client.get("/", params={"model": "qwen3:8b", "vram": "24"}).text
    assert "VRAM per GPU 24: 24 what?" in page


def test_mcp_shares_the_table() -> None:
    pytest.importorskip("mcp")
    from oomkit.web import mcp_server  # lazy: the mcp extra may be absent

    text = "no MODEL given (try: oomkit plan qwen3:8b --gpu 'RTX 4090')"
    assert mcp_server.tool_words(text) == api.caller_words(text)
    assert mcp_server.tool_words(text, takes_command=False) == ("no model given: give model (a catalog name, an "
                                                                "Ollama tag or an HF id, e.g. qwen3:8b)")
