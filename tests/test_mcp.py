"""`oomkit mcp`: the MCP server over stdio, driven by the mcp package's own client. Each tool's answer is the CLI's
--json for the same input; bad input is a tool error with the CLI's one-line message."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest

pytest.importorskip("mcp")

from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from oomkit.commands import check as check_cmd  # noqa: E402
from oomkit.commands import diagnose as diagnose_cmd  # noqa: E402
from oomkit.commands import estimate as estimate_cmd  # noqa: E402
from oomkit.commands import fit as fit_cmd  # noqa: E402
from oomkit.commands import models as models_cmd  # noqa: E402
from oomkit.commands import plan as plan_cmd  # noqa: E402

LOG = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
       "23.65 GiB of which 1.20 GiB is free. Including non-PyTorch memory, this process has 22.40 GiB memory in use.")

CALLS = [
    ("estimate", {"model": "llama3.1:8b", "ctx": 8192, "vram": "24GiB"}, estimate_cmd,
     ["llama3.1:8b", "--ctx", "8192", "--vram", "24GiB", "--json"]),
    ("estimate", {"command": "vllm serve Qwen/Qwen3-8B --max-model-len 32768", "vram": "80GiB"}, estimate_cmd,
     ["--vram", "80GiB", "--json", "--", "vllm", "serve", "Qwen/Qwen3-8B", "--max-model-len", "32768"]),
    ("check", {"model": "qwen3:8b", "gpu": "RTX 4060", "ctx": 40960}, check_cmd,
     ["qwen3:8b", "--gpu", "RTX 4060", "--ctx", "40960", "--json"]),
    ("estimate", {"model": "llama3.1:8b", "cpu_only": True, "ram": "16GiB", "parallel": 1}, estimate_cmd,
     ["llama3.1:8b", "--cpu-only", "--ram", "16GiB", "--parallel", "1", "--json"]),
    ("check", {"model": "llama3.1:8b", "cpu_only": True, "ram": "16GiB", "parallel": 1}, check_cmd,
     ["llama3.1:8b", "--cpu-only", "--ram", "16GiB", "--parallel", "1", "--json"]),
    ("fit", {"command": "llama-server -m qwen3:8b -c 131072", "vram": "12GiB"}, fit_cmd,
     ["--vram", "12GiB", "--json", "--", "llama-server", "-m", "qwen3:8b", "-c", "131072"]),
    ("plan", {"model": "qwen3:8b", "gpu": "RTX 4060", "min_ctx": 16384}, plan_cmd,
     ["qwen3:8b", "--gpu", "RTX 4060", "--min-ctx", "16384", "--json"]),
    ("models", {"q": "gemma"}, models_cmd, ["gemma", "--json"]),
]


def _session_run(fn):
    async def main():
        params = StdioServerParameters(command=sys.executable, args=["-m", "oomkit", "mcp"],
                                       env={"HF_HUB_OFFLINE": "1"})
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return await fn(session)

    return asyncio.run(main())


def _text(result) -> str:
    return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def _is_error(result) -> bool:
    return bool(getattr(result, "isError", None) or getattr(result, "is_error", None))


@pytest.fixture(scope="module")
def answers():
    """One server for the module: the tool list and every call's result."""
    async def go(session):
        tools = await session.list_tools()
        out = {"tools": {t.name: getattr(t, "inputSchema", None) or getattr(t, "input_schema", None)
                         for t in tools.tools}, "calls": []}
        for name, args, _, _ in CALLS:
            r = await session.call_tool(name, args)
            out["calls"].append((_is_error(r), _text(r)))
        r = await session.call_tool("diagnose", {"text": LOG})
        out["diagnose"] = (_is_error(r), _text(r))
        r = await session.call_tool("estimate", {"model": "no-such-model-xyz"})
        out["bad"] = (_is_error(r), _text(r))
        r = await session.call_tool("check", {"model": "qwen3:8b", "gpu": "RTX 4060", "context": 40960})
        out["unknown"] = (_is_error(r), _text(r))
        out["words"] = []
        for name, args, _ in WORDS:
            r = await session.call_tool(name, args)
            out["words"].append((_is_error(r), _text(r)))
        return out

    return _session_run(go)


def test_tools_with_schemas(answers):
    tools = answers["tools"]
    assert set(tools) == {"estimate", "check", "fit", "plan", "diagnose", "models"}
    assert tools["fit"]["required"] == ["command"]
    assert tools["diagnose"]["required"] == ["text"]
    assert "ctx" in tools["estimate"]["properties"] and "command" in tools["estimate"]["properties"]


@pytest.mark.parametrize("i", range(len(CALLS)))
def test_each_tool_answers_the_cli_json(answers, capsys, monkeypatch, i):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    name, _, module, argv = CALLS[i]
    is_error, text = answers["calls"][i]
    assert not is_error, text
    capsys.readouterr()
    module.run(argv)
    assert json.loads(text) == json.loads(capsys.readouterr().out), name


def test_diagnose_tool(answers, capsys, monkeypatch):
    import io

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(LOG.encode())))
    capsys.readouterr()
    diagnose_cmd.run(["--json"])
    want = json.loads(capsys.readouterr().out)
    is_error, text = answers["diagnose"]
    assert not is_error and json.loads(text) == want
    assert want["engine"] == "pytorch" and want["numbers"]["requested_bytes"] == 2 * 1024**3


# the CLI's message in the words of the tool's arguments (web/api.py caller_words, the web API's table)
WORDS = [
    ("plan", {"model": "qwen3:8b", "gpu": "RTX 4060", "reserve": "2"}, "reserve 2: 2 what? write 2GiB"),
    ("fit", {"command": "llama-server -m qwen3:8b", "vram": "24GiB", "gpu": "RTX 4090"},
     "vram 24GiB and gpu RTX 4090 both say the hardware"),
    ("check", {"gpu": "RTX 4060"}, "no model given: give model (a catalog name, an Ollama tag or an HF id, e.g. "
                                   "qwen3:8b) or command (a whole engine command line)"),
    ("estimate", {"model": "qwen3:8b", "gpu": "Foo 9000"}, 'give its memory in vram (e.g. "8GiB")'),
]


@pytest.mark.parametrize("i", range(len(WORDS)))
def test_errors_name_the_tools_arguments(answers, i):
    is_error, text = answers["words"][i]
    assert is_error and WORDS[i][2] in text and "--" not in text, text


def test_bad_input_is_a_tool_error_in_one_line(answers):
    is_error, text = answers["bad"]
    assert is_error and "unknown model 'no-such-model-xyz'" in text and "\n" not in text


def test_an_argument_the_tool_does_not_take_is_refused_not_ignored(answers):
    is_error, text = answers["unknown"]
    assert is_error and "check: unknown argument context; it takes" in text and "ctx" in text


def test_mcp_without_the_extra(monkeypatch, capsys):
    from oomkit.commands import mcp as mcp_cmd

    for name in [m for m in sys.modules if m == "mcp" or m.startswith("mcp.")] or ["mcp"]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.delitem(sys.modules, "oomkit.web.mcp_server", raising=False)
    assert mcp_cmd.run([]) == 2
    assert capsys.readouterr().err.strip() == "oomkit mcp needs the mcp extra: pip install 'oomkit[mcp]'"
