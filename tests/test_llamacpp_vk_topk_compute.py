"""ggml-vulkan's graph_optimize keeps the topk-MoE router runs whole (ggml/src/ggml-vulkan/ggml-vulkan.cpp
ggml_vk_graph_optimize: keep_pattern / match_pattern of topk_moe_early_softmax_norm and its kin, as at b8770), which
compute_graphs.vk_graph_optimize replays: on Qwen3.5-35B-A3B's graph (the pinned binding, llama.cpp@0c1e57098, through
the stand-in Vulkan device of tests/groundtruth/vk_standin_device.c with the keep patterns ported, -c 32768 -ub 512
-np 1, every logit row) Vulkan0 prints 530.02 MiB with them and 531.02 without, as the replay gives."""

from oomkit.engines.llamacpp.compute_graphs import vk_graph_optimize
from oomkit.engines.llamacpp.galloc import Node

ROUTER = ["SOFT_MAX", "RESHAPE", "ARGSORT", "VIEW", "GET_ROWS", "RESHAPE", "SUM_ROWS", "CLAMP", "DIV", "RESHAPE"]


def _router_graph() -> tuple[list[Node], list[str]]:
    """x (a split input); L = the router logits; Z reads L, Y reads Z; then the router run (topk_moe_early_softmax_norm's
    ops, each reading the one its pattern edges name)."""
    nodes, ops = [Node(4, layout=0)], ["NONE"]

    def add(op: str, *srcs: int, view: int = -1) -> int:  # layout: the node's own index, kept by the reorder
        nodes.append(Node(0 if view >= 0 else 4, srcs, view=view, layout=len(nodes)))
        ops.append(op)
        return len(nodes) - 1

    logits = add("MUL_MAT", 0)
    add("UNARY", add("UNARY", logits))
    sm = add("SOFT_MAX", logits)
    rs = add("RESHAPE", sm, view=sm)
    am = add("ARGSORT", sm)
    top = add("VIEW", am, view=am)
    gr = add("GET_ROWS", rs, top)
    w = add("RESHAPE", gr, view=gr)
    sr = add("SUM_ROWS", w)
    cl = add("CLAMP", sr)
    dv = add("DIV", w, cl)
    add("RESHAPE", dv, view=dv)
    return nodes, ops


def test_router_run_is_kept_whole():
    """Without the keep patterns SOFT_MAX (its logits done) is pulled up beside Z and ARGSORT beside Y, splitting the
    run; with them Z and Y go first and the run follows whole, in graph order."""
    nodes, ops = _router_graph()
    out = [ops[n.layout] for n in vk_graph_optimize(1, nodes, ops, {})]
    assert out == ["NONE", "MUL_MAT", "UNARY", "UNARY"] + ROUTER
