"""oomkit mcp: estimate, check, fit, plan, diagnose and models as an MCP server over stdio (the `mcp` extra)."""

from __future__ import annotations

import sys

from ..errors import OomkitError

HELP = """\
usage: oomkit mcp

Serves oomkit's operations to a coding agent over the Model Context Protocol (stdio): estimate, check, fit, plan,
diagnose and models, each a tool with a JSON schema whose answer is the CLI's --json for the same input. Needs the
mcp extra: pip install 'oomkit[mcp]'.

Register it with an agent, e.g.:  {"mcpServers": {"oomkit": {"command": "oomkit", "args": ["mcp"]}}}
"""

MISSING = "oomkit mcp needs the mcp extra: pip install 'oomkit[mcp]'"


def run(argv: list[str]) -> int:
    if "-h" in argv or "--help" in argv:
        print(HELP)
        return 0
    if argv:
        raise OomkitError(f"unexpected argument {argv[0]!r} (oomkit mcp takes none)")
    try:
        from ..web.mcp_server import build_server  # lazy: the mcp package, only for this command
    except ImportError:
        print(MISSING, file=sys.stderr)
        return 2
    build_server().run("stdio")
    return 0
