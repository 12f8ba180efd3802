"""Held-out vLLM start-up logs, nineteenth set (tests/fixtures/engine_logs/vllm/heldout19/): vLLM inside other
programs, from threads no test cited before (each repository and issue grepped in tests/ first): lighteval's vLLM
backend running open-r1's evaluation (huggingface/open-r1#551), the vLLM engines of the Open-Reasoner-Zero PPO trainer
(Open-Reasoner-Zero/Open-Reasoner-Zero#23) and the vLLM server a LLaMA-Factory user runs beside
`llamafactory-cli api` with a LoRA adapter (hiyouga/LlamaFactory#7658). Each release is read off the log's own source
lines against the sdists (fixture "assumed"). The printed figures were recorded before oomkit was run on them; none
was used to fit a constant. "before" is oomkit before the LoRA rule below, "after" with it.
Limits: weights 3 % of the printed load; the KV budget 3 % of the GPU's memory (the catalog's 79.65 GiB H100,
23.99 GiB RTX 4090; vLLM's total in oomkit: 79.19 and 23.53 GiB).

| thread | release | GPUs, flags | figure | printed | before | after |
|---|---|---|---|---|---|---|
| open-r1#551 (lighteval) | 0.7.2 | 1x H100, R1-Distill-Qwen-1.5B, 32,768, util 0.8 | budget of the printed 66.08x (135,322-135,342 blocks) | 57.82 GiB | 58.06 (+0.30 %) | same |
| | | | verdict | starts | starts | same |
| Open-Reasoner-Zero#23 | 0.6.5 | 4x H100, Qwen2.5-32B, TP 4, util 0.95 | weights a rank | 15.41 GiB | 15.42 (+0.01 %) | same |
| | | | KV budget (75.15 - 15.41 - 5.24 - 0.80) | 53.70 GiB | 56.44 (+3.43 %) | same: strict xfail |
| | | | verdict | starts | starts | same |
| LlamaFactory#7658 | 0.8.2 | 2x 24 GB, R1-Distill-Qwen-32B-AWQ, TP 2, --enable-lora, util 0.7, 3,000 | engine | V0 | V1 | V0 |
| | | | weights a rank | 9.28 GiB | 9.03 (-2.66 %) | same; 9.19 (-0.95 %) with the adapter slots |
| | | | KV budget | 6.66 GiB | 6.38 (-1.18 %) | 6.87 (+0.88 %); 6.71 (+0.21 %) with the slots |
| | | | verdict | starts | starts | same |

7 of 9 figures agree before, 8 after (the non-torch term of the LoRA run, not counted: printed 0.24 GiB, V1's
0.82 before, V0's 0.25 after). The rule (engines/vllm/config.py V1_LORA_DEFAULT), read in the 0.8.0-0.8.4 sdists:
engine/arg_utils.py EngineArgs._is_v1_supported_oracle of 0.8.0, 0.8.1 and 0.8.2 sends --enable-lora to V0 unless
VLLM_USE_V1=1 is set (`if self.enable_lora and _warn_or_fallback("LORA")`, "LoRA is supported on V1, but off by
default for now"); 0.8.3 dropped it. oomkit ran those starts on V1.

What is left, and why it stays: the Open-Reasoner-Zero engines print 5.24 GiB of non-torch memory where oomkit has
2.14 GiB: those 3.10 GiB, less the 0.44 GiB by which oomkit's activation peak (1.24) sits above the printed 0.80,
plus 0.08 GiB more requested (79.19 against 79.11 GiB of CUDA total, x 0.95), are the +2.74 GiB budget gap.
0.6.5's memory_profiling (utils.py) takes as non-torch every byte the device gains between the worker's init
snapshot (worker.py init_device, self.init_gpu_memory) and the profile's end, less the weights and torch's own:
memory that the trainer's other actors on the same GPUs allocate in that window counts, and the log does not say
what they held; no rule is written. The LoRA run's weights sit 0.25 GiB below
the printed load, about the adapter slots vLLM allocates inside load_model (lora/layers.py create_lora_weights: rank
16 A and B matrices of every adapted projection). Counted since (engines/vllm/lora.py): 64 layers x 1,335,296
float16 elements, 0.159 GiB a rank, the load 9.19 GiB against the printed 9.28 (-0.95 %), the budget 6.71 against
6.66 (+0.21 % of the GPU). The 0.09 GiB left is not placed (the punica index buffers are under 1 MiB here).

Searched and not held (corpus "issues", uncited): verl-project/verl#2245 (Qwen2.5-7B at util 0.4, TP 2: "No
available memory for the cache blocks" without the GPU or a memory line in the excerpt), huggingface/trl#3128 (V0
initialize_cache OOM: no model size, GPU or memory line), runpod-workers/worker-vllm#276 (gpt-oss-120b: the worker
dies at start, no memory line in the excerpt), huggingface/open-r1#466 and huggingface/lighteval PR #588 (0.7.3
start-ups whose excerpts stop before the KV cache), kserve/kserve PRs #4368 and #4470 (0.8.1 / 0.8.5 V1 start-ups
whose excerpts stop at the engine config), livepeer/ai-runner PR #230 (Llama-3.1-8B TP 2, release 'dev', no memory
line in the excerpt), unslothai/unsloth PR #2039 (Unsloth's own KV estimate, not vLLM's). No uncited verl, OpenRLHF,
NeMo-RL, ROLL, AReaL, dynamo, llm-d or ray serve.llm thread was found whose excerpt holds a memory line with its model,
GPU and release.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest

from oomkit.engines.vllm import ENGINE
from oomkit.engines.vllm.args import parse_args
from oomkit.request import resolve_model
from oomkit.units import GiB
from tests.startup_heldout import died, first, fixture_loader, gpus
from tests.sweep_harness import offline  # noqa: F401  (offline: autouse, no hub)

HERE = Path(__file__).parent / "fixtures" / "engine_logs" / "vllm" / "heldout19"
fixture = fixture_loader(HERE)
WEIGHTS_LIMIT = 0.03  # of the printed load
KV_LIMIT = 0.03  # of the GPU's memory

LIGHTEVAL = "deepseek-r1-distill-qwen-1.5b-1xh100-v0.7.2-lighteval-open-r1"
ORZ = "qwen2.5-32b-4xh100-tp4-v0.6.5-open-reasoner-zero"
LORA = "deepseek-r1-distill-qwen-32b-awq-lora-2x4090-tp2-v0.8.2-llamafactory"
ALL = [LIGHTEVAL, ORZ, LORA]


def settings(stem: str, **changes):
    """The thread's command as oomkit reads it, at the log's release."""
    fx = fixture(stem)
    _, _, s = parse_args(fx["argv"])
    return replace(s, **{"engine_version": fx["engine_version"], **changes})


def estimate(stem: str, **changes):
    fx = fixture(stem)
    g = fx["gpus"][0]
    return ENGINE.estimate(resolve_model(ENGINE, fx["model"]), gpus(g["name"], g["count"]), settings(stem, **changes))


def budget_error(stem: str, printed_bytes: float) -> float:
    est = estimate(stem)
    return (first(est.engine_view, "available_kv_cache_bytes") - printed_bytes) / est.devices[0].memory_bytes


@pytest.mark.parametrize("stem", ALL)
def test_command_reads_as_the_thread(stem):
    _, _, s = parse_args(fixture(stem)["argv"])
    for key, value in fixture(stem)["settings"].items():
        assert getattr(s, key) == value, key


@pytest.mark.parametrize("stem", ALL)
def test_starts(stem):
    est = estimate(stem)
    assert fixture(stem)["printed"]["starts"]
    assert died(est) is None and not est.engine_view.get("error")


def test_lighteval_budget_of_the_printed_concurrency():
    """66.08x at 32,768 tokens a request is 135,322 to 135,342 blocks of 16 (V0 executor_base.py:
    num_gpu_blocks * block_size / max_model_len, two decimals); at oomkit's bytes a block (28 layers, 2 KV heads of
    128, bf16) that is 57.82 GiB, oomkit's budget +0.29 to +0.30 % of the GPU."""
    est = estimate(LIGHTEVAL)
    v = est.engine_view
    shown = fixture(LIGHTEVAL)["printed"]["max_concurrency_at_32768"]
    blocks = (math.ceil((shown - 0.005) * 32768 / 16), math.floor((shown + 0.005) * 32768 / 16))
    assert blocks == (135322, 135342)
    for b in blocks:
        err = budget_error(LIGHTEVAL, b * v["kv_block_bytes"])
        assert abs(err) < KV_LIMIT, f"{err:+.2%}"  # recorded +0.29 / +0.30 %


@pytest.mark.parametrize(("stem", "recorded"), [(ORZ, "+0.01 %"), (LORA, "-0.95 %")])
def test_weights(stem, recorded):
    est = estimate(stem)
    printed = fixture(stem)["printed"]["model_loading_gib"] * GiB
    err = (first(est.engine_view, "model_loading_bytes") - printed) / printed
    assert abs(err) < WEIGHTS_LIMIT, f"{err:+.2%} (recorded {recorded})"


@pytest.mark.xfail(strict=True, reason="Open-Reasoner-Zero's 32B engines on 0.6.5 (TP 4, H100, util 0.95): printed "
                   "budget 75.15 - 15.41 - 5.24 - 0.80 = 53.70 GiB, oomkit 56.44 (+3.43 % of the GPU); the printed "
                   "non-torch 5.24 GiB against oomkit's 2.14: 0.6.5 counts every byte the device gains after the "
                   "worker's init snapshot, the trainer's too (module docstring)")
def test_orz_budget():
    err = budget_error(ORZ, fixture(ORZ)["printed"]["available_kv_cache_gib_from_printed_terms"] * GiB)
    assert abs(err) < KV_LIMIT, f"{err:+.2%}"


def test_lora_runs_on_v0_in_0_8_2():
    """engine/arg_utils.py _is_v1_supported_oracle (0.8.0-0.8.2): --enable-lora falls back to V0 unless VLLM_USE_V1=1;
    the thread's log is V0's (model_runner.py, worker.py). 0.8.3 runs it on V1; VLLM_USE_V1=1 keeps V1."""
    est = estimate(LORA)
    assert est.engine_view["engine"] == fixture(LORA)["printed"]["engine"] == "V0"
    assert any("Falling back to V0 Engine" in w for w in est.warnings)
    assert estimate(LORA, engine_version="0.8.3").engine_view["engine"] == "V1"
    assert estimate(LORA, use_v1=True).engine_view["engine"] == "V1"
    assert estimate(LORA, engine_version="0.8.0").engine_view["engine"] == "V0"


def test_lora_budget():
    """The V0 budget: 23.53 x 0.7 less 9.19 GiB of weights and adapter slots, V0's non-torch and activation peak,
    6.71 GiB against the printed 6.66 (+0.21 % of the GPU; 6.87, +0.88 %, without the slots; V1's was 6.38)."""
    err = budget_error(LORA, fixture(LORA)["printed"]["available_kv_cache_gib"] * GiB)
    assert abs(err) < KV_LIMIT, f"{err:+.2%}"  # recorded +0.21 %


def test_lora_load():
    """"Model loading took 9.2795 GB" (hiyouga/LlamaFactory#7658, 0.8.2, TP 2): the AWQ weights and the --enable-lora
    slots (max_loras 1, rank 16, float16: 170,917,888 bytes a rank, tests/test_vllm_lora.py), 9.19 GiB, -0.95 %;
    without the slots 9.03 GiB, -2.66 %."""
    printed = fixture(LORA)["printed"]["model_loading_gib"] * GiB
    with_slots = first(estimate(LORA).engine_view, "model_loading_bytes")
    without = first(estimate(LORA, enable_lora=False).engine_view, "model_loading_bytes")
    assert with_slots - without == 170_917_888
    assert abs(with_slots - printed) / printed < 0.01, f"{(with_slots - printed) / printed:+.2%}"  # recorded -0.95 %
