"""SGLang across machines (docs/references/multi_node_deployment.md): the same launch_server command on every node
with `--nnodes N --node-rank R --dist-init-addr HEAD_IP:PORT`; --tp spans all the nodes' GPUs."""

from __future__ import annotations

from ...errors import SettingsError

INIT_PORT = 5000  # the port the docs' examples use for --dist-init-addr


def node_commands(argv: list[str], nodes: int) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The launch on each machine: the command (with --nnodes, added when it lacks it) plus this node's
    --node-rank and the head's --dist-init-addr (server_args.py: node 0 hosts the torch.distributed store)."""
    base = list(argv) if "--nnodes" in argv else [*argv, "--nnodes", str(nodes)]
    return tuple((f"node {r}" + (" (head)" if r == 0 else ""),
                  (" ".join((*base, "--node-rank", str(r), "--dist-init-addr", f"HEAD_IP:{INIT_PORT}")),))
                 for r in range(nodes))


def rank_name(g: int, world: int, nnodes: int) -> str:
    """A rank named by its machine and local GPU, "node1/GPU3 (rank 11)": each node runs world / nnodes
    consecutive ranks (scheduler processes: entrypoints/engine.py _launch_subprocesses starts tp_size_per_node =
    tp_size // nnodes ranks from tp_rank_range(node_rank))."""
    if nnodes < 1 or world % nnodes:
        raise SettingsError(f"--nnodes {nnodes} does not divide the {world} GPUs (TP x PP) evenly")
    per = world // nnodes
    return f"node{g // per}/GPU{g % per} (rank {g})"


def node_totals(usages: list, nnodes: int) -> dict[str, int]:
    """Bytes each machine's GPUs hold (its world / nnodes consecutive ranks, as rank_name places them)."""
    per = len(usages) // nnodes
    return {f"node{k}": sum(u.total_bytes for u in usages[k * per:(k + 1) * per]) for k in range(nnodes)}
