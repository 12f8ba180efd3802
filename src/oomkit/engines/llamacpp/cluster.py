"""llama.cpp across machines over RPC (tools/rpc/README.md): `rpc-server` on every other host exposes its GPU(s) as
backend devices; llama-server on the main host names them with `--rpc host:port,...` and splits layers over all
devices as over local ones."""

from __future__ import annotations

RPC_PORT = 50052  # rpc-server's default port


def node_commands(argv: list[str], nodes: int) -> tuple[tuple[str, tuple[str, ...]], ...]:
    hosts = ",".join(f"HOST{i}:{RPC_PORT}" for i in range(1, nodes))
    out = [("node 0 (main)", (" ".join((*argv, "--rpc", hosts)),))]
    for i in range(1, nodes):
        out.append((f"node {i} (HOST{i})", (f"rpc-server --host 0.0.0.0 --port {RPC_PORT}",)))
    return tuple(out)
