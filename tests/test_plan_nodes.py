"""The planner across machines for SGLang: a plan whose GPUs span several nodes carries `--nnodes` in its own command
(SGLang's --tp spans every node's GPUs: docs/references/multi_node_deployment.md), each machine's launch adds its
`--node-rank` and the head's `--dist-init-addr`, and every figure is what that command estimates again."""

from __future__ import annotations

import shlex

import pytest

from oomkit.engines.base import get_engine
from oomkit.engines.cmdline import parse_command
from oomkit.plan.options import Goals, budgets, device_limits
from oomkit.plan.search import plan
from oomkit.request import devices_from, resolve_model


@pytest.fixture(scope="module")
def two_nodes():
    devices = devices_from(gpu="16x H100")
    return devices, plan("deepseek-v3", "sglang", devices=devices, goals=Goals(min_ctx=32768, nodes=2))


def test_the_command_names_the_nodes(two_nodes):
    _, p = two_nodes
    assert p.tier == 1
    argv = shlex.split(p.best.command)
    assert argv[argv.index("--nnodes") + 1] == "2" and argv[argv.index("--tp-size") + 1] == "16"
    # the estimate names each rank by its machine and sums each machine's GPUs
    ids = [u.id for u in p.best.estimate.devices]
    assert ids[0] == "node0/GPU0 (rank 0)" and ids[15] == "node1/GPU7 (rank 15)"
    per_node = p.best.estimate.engine_view["node_memory_bytes"]
    assert sorted(per_node) == ["node0", "node1"]
    assert sum(per_node.values()) == sum(u.total_bytes for u in p.best.estimate.devices)


def test_each_machine_gets_its_rank_and_the_head_address(two_nodes):
    _, p = two_nodes
    (head, (head_line,)), (worker, (worker_line,)) = p.node_commands
    assert head.startswith("node 0") and worker == "node 1"
    for rank, line in ((0, head_line), (1, worker_line)):
        argv = shlex.split(line)
        assert argv.count("--nnodes") == 1  # the option's own --nnodes, not a second one
        assert argv[argv.index("--node-rank") + 1] == str(rank)
        assert argv[argv.index("--dist-init-addr") + 1] == "HEAD_IP:5000"
    assert [n["node"] for n in p.to_dict()["plan"]["nodes"]] == ["node 0 (head)", "node 1"]


def test_every_line_estimates_again_to_the_same_figures(two_nodes):
    devices, p = two_nodes
    eng = get_engine("sglang")
    for _, (line,) in p.node_commands:
        parsed = parse_command(shlex.split(line))
        assert parsed.settings.nnodes == 2
        again = eng.estimate(resolve_model(eng, parsed.model), devices, parsed.settings)
        assert again.total_bytes == p.best.estimate.total_bytes
        # the renamed ranks are held against the GPUs' budgets by position: all 16 fit
        limits = budgets(devices, p.goals)
        pairs = device_limits(again, limits)
        assert len(pairs) == 16 and all(lim is not None and u.total_bytes <= lim for u, lim in pairs)


def test_one_node_keeps_no_nnodes():
    p = plan("qwen3-32b", "sglang", devices=devices_from(gpu="2x H100"), goals=Goals(min_ctx=32768))
    assert "--nnodes" not in p.best.command and p.node_commands == ()
