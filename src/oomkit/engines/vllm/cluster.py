"""vLLM across machines (docs/serving/parallelism_scaling.md, "multi-node"): a Ray cluster, `ray start --head` on
the first node and `ray start --address` on the others, then `vllm serve` on the head with -tp inside a node and -pp
across nodes over the Ray executor (`--distributed-executor-backend ray`)."""

from __future__ import annotations

from ...errors import SettingsError

RAY_PORT = 6379  # ray start's default GCS port


def node_commands(argv: list[str], nodes: int) -> tuple[tuple[str, tuple[str, ...]], ...]:
    head = ("ray", "start", "--head", f"--port={RAY_PORT}")
    serve = (*argv, "--distributed-executor-backend", "ray")
    out = [("node 0 (head)", (" ".join(head), " ".join(serve)))]
    for i in range(1, nodes):
        out.append((f"node {i}", (f"ray start --address=HEAD_IP:{RAY_PORT}",)))
    return tuple(out)


def rank_name(g: int, world: int, nnodes: int) -> str:
    """A global rank named by its machine and local GPU, "node1/GPU3 (rank 11)": ranks fill the nodes in order
    (Ray's placement group and `--nnodes` with the mp executor both put world / nnodes consecutive ranks on each
    node, TP innermost: distributed/parallel_state.py initialize_model_parallel orders ranks (dp, pp, tp))."""
    if nnodes < 1 or world % nnodes:
        raise SettingsError(f"--nnodes {nnodes} does not divide the {world} GPUs (TP x PP x DP) evenly")
    per = world // nnodes
    return f"node{g // per}/GPU{g % per} (rank {g})"


def node_totals(usages: list, nnodes: int) -> dict[str, int]:
    """Bytes each machine's GPUs hold (its world / nnodes consecutive ranks, as rank_name places them)."""
    per = len(usages) // nnodes
    return {f"node{k}": sum(u.total_bytes for u in usages[k * per:(k + 1) * per]) for k in range(nnodes)}
