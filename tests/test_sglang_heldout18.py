"""Held-out SGLang set 18: SGLang inside other programs (tests/fixtures/engine_logs/sglang/heldout18/, each with its
URL and the lines kept verbatim). No constant in oomkit was fitted on them; the verdicts and figures were recorded in
the fixtures before oomkit was run. "before" is oomkit before this set was read, "after" with its commit.

What the RL frameworks' and servers' threads held that no earlier set does is not a start-up memory line but the
check SGLang runs before the weights (model_runner.py init_torch_distributed, "Check memory for tensor
parallelism", every release 0.4.0-0.5.18 read; distributed/bootstrap.py from 0.5.18): with --tp-size over 1, a rank
whose free memory x 0.9 exceeds the least free memory of the ranks stops the start-up, "The memory capacity is
unbalanced. Some GPUs may be occupied by other processes." Colocated RL sets it off (verl's WorkerDict actors and
Ray's head hold different amounts on the rollout's GPUs), and so do two GPUs of different sizes in one TP group.

| source | setup | figure | printed | before | after |
|---|---|---|---|---|---|
| sglang#1533 (azidanit) | RTX A4000 + RTX 3090, TP 2, read as 0.4.6 | verdict | does not start | starts (220,620 tokens) | does not start |
| sglang#1533 (NeoChen1024) | Tesla T10 16 GiB + RTX 3060, TP 2, 0.4.4.post1 | verdict | does not start | starts | does not start |
| sglang PR #5416 | the check's own figures (8.88 / 11.90 GB) | stops; threshold 10.71 GB | yes; 10.7114 | no check | yes; 10.71 |
| verl PR #1105 | verl's SGLang rollout, colocated | the variable that lifts it | SGL_DISABLE_TP_MEMORY_INBALANCE_CHECK | none | the same |

Count: 0 of 5 figures before, 5 of 5 after (the two verdicts, PR #5416's decision and threshold, verl's variable).

The rule changed (engines/sglang/layout.py): free_before_load takes each rank's free memory where the device gives
it (Device.free_bytes: memory a colocated trainer or another server holds is not free), as
init_torch_distributed's get_available_gpu_memory (torch.cuda.mem_get_info) does, and profile_max_num_token's
total_gpu_memory is that free memory, the least over the ranks; before, SGLang's pool was sized against the whole
card whatever other processes held (the free memory an API caller or the planner's reserve / --also gives a device,
below its size, was ignored for SGLang). tp_memory_balance is the check itself, with the variable each release reads to make it a warning
(settings.py ERAS tp_balance_env_disable / tp_balance_env_enable). No constant was fitted.

Searched and not held (corpora issues / pages / code, file search, and the repositories of THUDM/slime,
verl-project/verl, inclusionAI/AReaL, alibaba/ROLL, NVIDIA-NeMo/RL, sgl-project/SpecForge and sgl-project/ome grepped
for SGLang's start-up lines, none in their files): threads with memory lines that an earlier set holds (QwQ-32B on
4 x L4 in didier-durand/llms-in-clouds, kvcached#101 / #198, ktransformers#1870, gpustack#3831, InferenceX#2128,
sglang#12421 (a SpecForge EAGLE-3 run), #7873 (tested with slime), #36583, #39713 (sgl-router's e2e workers), #22537,
llm-d's Qwen3-32B GKE snapshot); RL threads whose stored text holds tracebacks or the trainer's own memory lines but no
SGLang start-up figure (slime#1022 / #1177 Qwen3-8B EAGLE-3 on H200, slime#953, #638, #1136, verl#647, #1208 GH200,
Awesome-ML-SYS-Tutorial#106, SkyRL#84, NeMo-RL#1674, sglang#7009's stage totals without the stages named); a fork or
plugin (ROCm/ATOM#1959, the KT fork's Qwen3-30B-A3B); a model oomkit cannot resolve (MinerU#3375,
Mineru2QwenForCausalLM); logs whose repository the index does not name (a Qwen3.5-9B TP 2 walk-through on 24 GB
cards, an LFM2-700M bench_one_batch, a Llama-3.1-8B EAGLE-3 note with edited lines).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from oomkit.engines import sglang as sg
from oomkit.engines.sglang.layout import PRE_LOAD_OVERHEAD, free_before_load, tp_memory_balance
from oomkit.engines.sglang.settings import parse_version
from oomkit.hardware.catalog import devices_for_names
from oomkit.memory import Device
from oomkit.model.resolve import resolve
from oomkit.units import GiB
from tests.sglang_heldout import assert_every_fixture_cites_its_thread, load

HERE = Path(__file__).parent / "fixtures" / "engine_logs" / "sglang" / "heldout18"
A4000_3090 = "a4000-3090-tp2-unbalanced-issue1533"
T10_3060 = "t10-3060-tp2-unbalanced-issue1533"
NEXTN = "deepseek-nextn-draft-unbalanced-pr5416"
VERL = "verl-rollout-unbalanced-pr1105"
UNBALANCED = "The memory capacity is unbalanced. Some GPUs may be occupied by other processes."
# the comments name no model: the check runs before any weight loads, so a model that fits either pair serves
MODEL = "Qwen/Qwen2.5-7B-Instruct"


def fixture(stem: str) -> dict:
    return load(HERE, stem)


def _gpus(*devices: Device) -> tuple[Device, ...]:
    return tuple(replace(d, id=f"CUDA{i}") for i, d in enumerate(devices))


def _estimate(devices: tuple[Device, ...], version: str, tp: int = 2):
    return sg.ENGINE.estimate(resolve(MODEL, tag_formats=False), devices,
                              sg.SGLangSettings(tp_size=tp, engine_version=version))


def test_every_fixture_cites_its_thread():
    assert_every_fixture_cites_its_thread(HERE)


def test_a4000_with_3090_does_not_start():
    # A4000 16 GB beside a 3090 24 GB in one TP group: 15.06 GiB free against 0.9 x 23.07 = 20.76 (before: started)
    assert fixture(A4000_3090)["printed"]["verdict"] == "does not start"
    a4000, rtx3090 = devices_for_names("RTX A4000")[0], devices_for_names("RTX 3090")[0]
    view = _estimate(_gpus(a4000, rtx3090), "0.4.6").engine_view
    assert view["error"].startswith(UNBALANCED)
    assert view["max_total_num_tokens"] == 0


def test_t10_with_3060_does_not_start():
    # the Tesla T10 is not in the GPU catalog: its 16 GiB given, as --vram would
    assert fixture(T10_3060)["printed"]["verdict"] == "does not start"
    t10 = Device(id="CUDA0", name="Tesla T10", memory_bytes=16 * GiB)
    view = _estimate(_gpus(t10, devices_for_names("RTX 3060")[0]), "0.4.4.post1").engine_view
    assert view["error"].startswith(UNBALANCED)


def test_two_of_one_size_start():
    # the same check passes two GPUs of one size (the rule is the balance, not the size)
    rtx3090 = devices_for_names("RTX 3090")[0]
    view = _estimate(_gpus(rtx3090, rtx3090), "0.4.6").engine_view
    assert not view.get("error") and view["max_total_num_tokens"] > 0


def test_the_checks_own_figures():
    # PR #5416's ValueError: min_per_gpu_memory=8.884..., local_gpu_memory=11.901..., local_gpu_memory * 0.9=10.711...
    p = fixture(NEXTN)["printed"]
    ranks = [round(p["min_per_gpu_memory_gb"] * GiB), round(p["local_gpu_memory_gb"] * GiB)]
    s = sg.SGLangSettings(tp_size=2)
    message = tp_memory_balance(ranks, s, parse_version("0.4.5"))
    assert message is not None and message.startswith(UNBALANCED)
    assert f"local_gpu_memory * 0.9={p['threshold_gb']:.2f} GB" in message
    assert f"min_per_gpu_memory={p['min_per_gpu_memory_gb']:.2f} GB" in message
    # just above the threshold the ranks count as balanced; one GPU (no TP group) is never checked
    assert tp_memory_balance([round(10.72 * GiB), ranks[1]], s, parse_version("0.4.5")) is None
    assert tp_memory_balance(ranks, sg.SGLangSettings(tp_size=1), parse_version("0.4.5")) is None


@pytest.mark.parametrize("version, switch", [
    ("0.4.5", None),  # raises with no switch (0.4.5.post1 read)
    ("0.4.6", "SGL_DISABLE_TP_MEMORY_INBALANCE_CHECK=1"),  # verl PR #1105's variable (0.4.6.post5-0.5.6 read)
    ("0.5.7", "SGLANG_ENABLE_TP_MEMORY_INBALANCE_CHECK=0"),  # environ.py EnvBool(True), 0.5.7-0.5.18 read
])
def test_the_variable_each_release_reads(version, switch):
    message = tp_memory_balance([10 * GiB, 20 * GiB], sg.SGLangSettings(tp_size=2), parse_version(version))
    assert message is not None
    if switch is None:
        assert "no switch" in message
    else:
        assert switch in message
    if version == "0.4.6":
        assert fixture(VERL)["printed"]["variable"] in message


def test_colocated_process_beside_the_rollout():
    # verl's rollout on two H100s with a colocated actor holding 10 GiB of one of them: the TP group stops (67.15
    # against 77.15 GiB free after the context and NCCL's buffers, 0.87 of it); 5 GiB held (0.94) passes the check,
    # and the pool is sized from the free memory
    h100 = devices_for_names("H100 SXM")[0]
    held10 = _gpus(h100, replace(h100, free_bytes=h100.memory_bytes - 10 * GiB))
    assert _estimate(held10, "0.4.6").engine_view["error"].startswith(UNBALANCED)
    idle = _estimate(_gpus(h100, h100), "0.4.6").engine_view
    held5 = _estimate(_gpus(h100, replace(h100, free_bytes=h100.memory_bytes - 5 * GiB)), "0.4.6").engine_view
    assert not held5.get("error")
    assert held5["max_total_num_tokens"] < idle["max_total_num_tokens"]


def test_free_memory_is_what_the_pool_is_sized_from():
    # one H100 with 40 GiB held by another process: "Load weight begin. avail mem" is the free memory less the CUDA
    # context (PRE_LOAD_OVERHEAD), the (1 - mem_fraction_static) reserve is taken from it, and server_args.py's
    # GPU-size default of the fraction still reads the card (0.83 for an 80 GB card from 0.5.x, as sgl-router's e2e
    # worker printed in PR #39713)
    h100 = devices_for_names("H100 SXM")[0]
    busy = replace(h100, free_bytes=h100.memory_bytes - 40 * GiB)
    est = sg.ENGINE.estimate(resolve("Qwen/Qwen3-0.6B", tag_formats=False), (busy,),
                             sg.SGLangSettings(engine_version="0.5.18"))
    begin = next(x for x in est.engine_view["log"].split("\n") if x.startswith("Load weight begin."))
    assert begin == f"Load weight begin. avail mem={free_before_load(busy, PRE_LOAD_OVERHEAD) / GiB:.2f} GB"
    assert est.engine_view["mem_fraction_static"] == 0.83
