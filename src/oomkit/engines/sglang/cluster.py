"""SGLang across machines (docs/references/multi_node_deployment.md): the same launch_server command on every node
with `--nnodes N --node-rank R --dist-init-addr HEAD_IP:PORT`; --tp spans all the nodes' GPUs."""

from __future__ import annotations

INIT_PORT = 5000  # the port the docs' examples use for --dist-init-addr


def node_commands(argv: list[str], nodes: int) -> tuple[tuple[str, tuple[str, ...]], ...]:
    return tuple((f"node {r}" + (" (head)" if r == 0 else ""),
                  (" ".join((*argv, "--nnodes", str(nodes), "--node-rank", str(r), "--dist-init-addr",
                             f"HEAD_IP:{INIT_PORT}")),))
                 for r in range(nodes))
