"""docs/web.md's endpoint and tool tables against the code: every /api route with the fields it takes (the app's
OpenAPI schema: a GET's query parameters, a POST's body), every MCP tool with its arguments (its input schema), and
which are required, so the reference cannot drift from what the server answers."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

pytest.importorskip("fastapi")

from oomkit.web.app import create_app  # noqa: E402

DOC = Path(__file__).resolve().parent.parent / "docs" / "web.md"


def _section(title: str) -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else None]


def _table(title: str) -> dict[str, tuple[set[str], set[str]]]:
    """The section's table rows: first cell -> (the names in the second, those marked required)."""
    rows: dict[str, tuple[set[str], set[str]]] = {}
    for line in _section(title).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not cells[0].startswith("`"):
            continue
        names = set(re.findall(r"`([a-z_]+)`", cells[1]))
        required = set(re.findall(r"`([a-z_]+)` \(required\)", cells[1]))
        rows[cells[0].strip("`")] = (names, required)
    return rows


def _routes() -> dict[str, tuple[set[str], set[str]]]:
    schema = create_app().openapi()
    out: dict[str, tuple[set[str], set[str]]] = {}
    for path, ops in schema["paths"].items():
        if not path.startswith("/api/"):
            continue
        for method, op in ops.items():
            params = {p["name"]: p.get("required", False) for p in op.get("parameters", [])}
            ref = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema", {})
            if "$ref" in ref:
                body = schema["components"]["schemas"][ref["$ref"].rsplit("/", 1)[-1]]
                params |= {k: k in body.get("required", ()) for k in body["properties"]}
            out[f"{method.upper()} {path}"] = (set(params), {k for k, r in params.items() if r})
    return out


def test_the_api_table_is_the_apps_routes() -> None:
    documented, routes = _table("API"), _routes()
    assert sorted(documented) == sorted(routes)
    for route, (fields, required) in routes.items():
        assert documented[route] == (fields, required), route


def test_the_mcp_table_is_the_servers_tools() -> None:
    pytest.importorskip("mcp")
    from oomkit.web.mcp_server import build_server  # lazy: the mcp extra may be absent

    tools = asyncio.run(build_server().list_tools())
    # the input schema: mcp 2's `input_schema`, mcp 1's `inputSchema`
    schemas = {t.name: getattr(t, "input_schema", None) or t.inputSchema for t in tools}
    served = {name: (set(s.get("properties", {})), set(s.get("required", []))) for name, s in schemas.items()}
    documented = _table("MCP")
    assert sorted(documented) == sorted(served)
    for name, (args, required) in served.items():
        assert documented[name] == (args, required), name
