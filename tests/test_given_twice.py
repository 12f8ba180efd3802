"""One refusal for an option, variable or field given twice with two values (engines/command.py given_twice): the
CLI's options and --env, `serve --port`, `models --kind`, the web API's query keys and JSON body fields. Each value
is clipped as every one-line refusal clips an argument (clip_repr: QUOTE_LIMIT characters, an ellipsis, the length),
where the web clipped a key at 40 and a value at 60 characters and the CLI not at all."""

from __future__ import annotations

import contextlib
import io

import pytest

from oomkit.cli import main
from oomkit.engines.command import QUOTE_LIMIT, clip_repr, given_twice

LONG = "x" * 500


def _cli(*args: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(list(args))
        except SystemExit as e:
            rc = e.code if isinstance(e.code, int) else 2
    return rc, err.getvalue()


def test_the_wording():
    assert given_twice("--vram", "24GiB", "48GiB") == "--vram given twice, as '24GiB' and '48GiB': give it once"
    assert given_twice("ctx", 8192, 4096) == "ctx given twice, as '8192' and '4096': give it once"
    long = given_twice(LONG, LONG, "2")
    assert long == (f"{'x' * QUOTE_LIMIT}... (500 characters) given twice, as {clip_repr(LONG)} and '2': "
                    "give it once")
    assert "(500 characters)" in clip_repr(LONG) and len(long) < 3 * QUOTE_LIMIT + 100


@pytest.mark.parametrize("argv,name", [
    (("estimate", "qwen3:8b", "--engine-version", LONG, "--engine-version", "b5000"), "--engine-version"),
    (("estimate", "qwen3:8b", "--env", f"OLLAMA_NUM_PARALLEL={LONG}", "--env", "OLLAMA_NUM_PARALLEL=2"),
     "--env OLLAMA_NUM_PARALLEL"),
    (("serve", "--host", LONG, "--host", "0.0.0.0"), "--host"),
    (("models", "--family", LONG, "--family", "qwen"), "--family"),
])
def test_each_command_clips_the_values(argv, name):
    rc, err = _cli(*argv)
    assert rc == 2 and err.strip() == f"oomkit: error: {given_twice(name, LONG, argv[-1].split('=')[-1])}", err
    assert len(err) < 400


def test_the_web_clips_a_query_key_and_value_alike():
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from oomkit.web.app import create_app

    client = TestClient(create_app(), raise_server_exceptions=False)
    r = client.get("/api/estimate", params=[("model", "qwen3:8b"), ("vram", LONG), ("vram", "48GiB")])
    assert r.status_code == 400 and r.json() == {"error": given_twice("vram", LONG, "48GiB")}, r.text[:300]
    raw = b'{"model": "qwen3:8b", "vram": "24GiB", "vram": "%s"}' % LONG.encode()
    r = client.post("/api/estimate", content=raw, headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json() == {"error": given_twice("vram", "24GiB", LONG)}, r.text[:300]
