"""vLLM across machines (docs/serving/parallelism_scaling.md, "multi-node"): a Ray cluster, `ray start --head` on
the first node and `ray start --address` on the others, then `vllm serve` on the head with -tp inside a node and -pp
across nodes over the Ray executor (`--distributed-executor-backend ray`).

Where the ranks land (v1/executor/ray_utils.py initialize_ray_cluster, read at vLLM 0057add): one {GPU: 1} bundle
per rank in a PACK placement group whose first bundle is pinned to the node running `vllm serve`
(`placement_group_specs[0][f"node:{current_ip}"] = 0.001`; "Current node has no GPU available ... vLLM engine
cannot start" otherwise); the executor then sorts the workers driver node first, then by how few workers a node
holds, then by IP (ray_distributed_executor.py sort_by_driver_then_worker_ip), so the head node's GPUs take the
lowest ranks and, with one stage per node, the first pipeline stage.

What the head node runs beside its GPU workers: the Ray head (GCS server, raylet, dashboard), the API server and the
EngineCore process (V1), all in host memory. In V1 every rank is a Ray actor (use_ray_spmd_worker: the EngineCore
holds no GPU bundle and does no model work); in V0 the driver process itself is rank 0 (the "driver dummy worker"
holds its GPU). Neither the API server nor the EngineCore allocates GPU memory that the KV budget sees: in the
Qwen3-30B-A3B-2507 -pp 2 -tp 4 log over two GH200 nodes on 0.10.1 (rwood-97/multi_node_inference) the four GPUs of
the head node, GPU 0 included, print the same KV cache (6,654,432 tokens each)."""

from __future__ import annotations

from ...errors import SettingsError

RAY_PORT = 6379  # ray start's default GCS port

# What runs on the head node beside the GPU workers (host memory only; not estimated), V1 engine
HEAD_NODE_PROCESSES = (
    "Ray head: GCS server, raylet, dashboard (ray start --head)",
    "vLLM API server (vllm serve: HTTP, tokenizer, multimodal preprocessing)",
    "vLLM EngineCore (scheduler, KV block manager; holds no GPU bundle under the Ray executor)",
)


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
    node, TP innermost: distributed/parallel_state.py initialize_model_parallel orders ranks (dp, pp, tp)); node0
    is the head, where `vllm serve` runs (the placement group's first bundle, the driver node sorted first)."""
    if nnodes < 1 or world % nnodes:
        raise SettingsError(f"--nnodes {nnodes} does not divide the {world} GPUs (TP x PP x DP) evenly")
    per = world // nnodes
    return f"node{g // per}/GPU{g % per} (rank {g})"


def node_totals(usages: list, nnodes: int) -> dict[str, int]:
    """Bytes each machine's GPUs hold (its world / nnodes consecutive ranks, as rank_name places them)."""
    per = len(usages) // nnodes
    return {f"node{k}": sum(u.total_bytes for u in usages[k * per:(k + 1) * per]) for k in range(nnodes)}
