"""Three plan defects: a memory fraction that overshoots --headroom at every context, the second tier on an Apple
GPU's unified memory, and the planner run's repeated estimates (kept once per run, the answers unchanged).

1. vLLM keeps its --gpu-memory-utilization share of each GPU whatever the context (config/cache.py CacheConfig), so
   where the engine's own warm-up fix (0.99 -> 0.98: "try lowering `max_num_seqs` or `gpu_memory_utilization`",
   v1/worker/gpu_model_runner.py _dummy_sampler_run) leaves less than the --headroom asked, a lower fraction is the
   only move that brings the run within it; plan dropped every option instead.
2. An Apple GPU's memory is the Mac's RAM: layers kept on the CPU fill the same RAM. Ollama counts an integrated
   GPU's free memory as no more than the system's (server/sched.go availableMemoryForGPU, v0.33.0) and takes Metal
   on darwin/arm64 as integrated (discover/llama_server.go isIntegratedLlamaServerDevice), while on macOS it checks
   no system memory for the CPU's part (discover/gpu_darwin.go: "FreeSwap omitted as Darwin uses dynamic paging").
   plan offered `/set parameter num_gpu 0` for a model larger than the whole RAM.
"""

from __future__ import annotations

import pytest

from oomkit.cli import main
from oomkit.plan import search
from oomkit.plan.options import UNIFIED, Goals, budgets
from oomkit.request import devices_from

MiB, GiB = 1 << 20, 1 << 30
LLAMA_70B = "meta-llama/Llama-3.1-70B-Instruct"


def _fraction(argv: tuple[str, ...]) -> float | None:
    return float(argv[argv.index("--gpu-memory-utilization") + 1]) if "--gpu-memory-utilization" in argv else None


def test_headroom_beside_a_reserve_keeps_the_options_at_a_lower_fraction():
    """2 x H100 SXM, Llama 3.1 70B: --reserve 128MiB alone planned options at --gpu-memory-utilization 0.98 leaving
    under 128 MiB; with --headroom 128MiB too, every option was dropped. Each option now keeps the headroom asked, at
    a fraction no higher than vLLM's default (a reserve lowers the fraction, never raises it: knobs.py), and the
    same weight formats are planned."""
    devs = devices_from(gpu="2x H100 SXM")
    reserve = Goals(reserve_bytes=128 * MiB, ram_bytes=2 * GiB)
    both = Goals(reserve_bytes=128 * MiB, headroom_bytes=128 * MiB, ram_bytes=2 * GiB)
    alone = search.plan(LLAMA_70B, "vllm", devices=devs, goals=reserve)
    kept = search.plan(LLAMA_70B, "vllm", devices=devs, goals=both)
    assert alone.options and kept.options
    assert len(kept.options) == len(alone.options)
    for o in kept.options:
        assert o.tier == 1 and o.headroom_bytes >= 0  # the headroom asked is already off each GPU's budget
        assert (_fraction(o.argv) or 0.92) <= 0.92  # 0.92: the newest releases' default (config.default_utilization)
    assert {o.weight_format for o in kept.options} == {o.weight_format for o in alone.options}
    assert kept.smallest_hardware is None


def test_headroom_beside_a_reserve_exit_status_from_the_cli(capsys):
    argv = ["plan", LLAMA_70B, "--engine", "vllm", "--gpu", "2x H100 SXM", "--ram", "2GiB", "--reserve", "128MiB",
            "--headroom", "128MiB", "--json"]
    assert main(argv) == 0
    assert '"tier": 1' in capsys.readouterr().out


def test_a_reserve_never_plans_more_than_none():
    """A reserve raised --gpu-memory-utilization from vLLM's default 0.9 to 0.99 (then 0.98 by the warm-up fix):
    bf16 weights with a model-dtype KV cache planned 38,656 tokens at --reserve 128MiB and none without it."""
    devs = devices_from(gpu="2x H100 SXM")
    free = search.plan(LLAMA_70B, "vllm", devices=devs, goals=Goals(ram_bytes=2 * GiB))
    held = search.plan(LLAMA_70B, "vllm", devices=devs, goals=Goals(reserve_bytes=128 * MiB, ram_bytes=2 * GiB))
    assert len(held.options) <= len(free.options)
    assert max(o.context for o in held.options) <= max(o.context for o in free.options)


def test_an_apple_gpus_budgets_hold_its_unified_ram():
    devs = devices_from(gpu="M2 Pro 16GB")
    assert budgets(devs, Goals())[UNIFIED] == 16 * GiB
    assert budgets(devs, Goals(reserve_bytes=1 * GiB, headroom_bytes=1 * GiB))[UNIFIED] == 14 * GiB
    assert UNIFIED not in budgets(devices_from(gpu="RTX 4090"), Goals())  # a discrete GPU has its own memory


def test_ollama_on_a_16gb_mac_plans_no_cpu_split_of_a_model_larger_than_its_ram():
    """qwen3:30b (Q4_K_M, 18.6 GB) on a 16 GB M2 Pro: plan offered num_gpu 0 (all on the CPU), 18.1 GiB of it in
    'system RAM', which is the same 16 GiB. Nothing fits; the note says why and what does."""
    devs = devices_from(gpu="M2 Pro 16GB")
    p = search.plan("qwen3:30b", "ollama", devices=devs)
    assert not p.options
    assert not any("num_gpu 0" in line for o in p.options for line in o.argv)
    note = next(n for n in p.notes if "unified memory" in n)
    assert "16.0 GiB of unified memory" in note and "a lower-bit quantization" in note


def test_ollama_on_a_16gb_mac_still_plans_a_model_that_fits():
    p = search.plan("qwen3:8b", "ollama", devices=devices_from(gpu="M2 Pro 16GB"))
    assert p.options and p.options[0].tier == 1
    assert not any("unified memory" in n for n in p.notes)


CASES = [
    ("qwen3:32b", "llama.cpp", {"vram": "8GiB"}, Goals()),
    ("qwen3:8b", "llama.cpp", {"vram": "8GiB"}, Goals(min_ctx=32768)),
    ("Qwen/Qwen3-8B", "vllm", {"vram": "24GiB"}, Goals()),
    (LLAMA_70B, "vllm", {"gpu": "2x H100 SXM"}, Goals(reserve_bytes=128 * MiB, headroom_bytes=128 * MiB)),
    ("qwen3:14b", "ollama", {"gpu": "M2 Pro 16GB"}, Goals()),
    ("qwen3:30b", "ollama", {"gpu": "RTX 4060"}, Goals()),
]


@pytest.mark.parametrize(("model", "engine", "gpu", "goals"), CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_kept_estimates_change_no_answer(model, engine, gpu, goals):
    """plan answers a repeated question from its first answer (options.estimates_kept): the whole plan is the same
    as the same search asking the engine every time (search._plan outside estimates_kept)."""
    devs = devices_from(**gpu)
    kept = search.plan(model, engine, devices=devs, goals=goals).to_dict()
    asked = search._plan(model, engine, devices=devs, goals=goals, settings=None, quant=None, fixed_format=None,
                         limit=12, also=(), kv_type=None).to_dict()
    assert kept == asked
