"""SGLang's --enable-symm-mem pool: the SGLANG_SYMM_MEM_PREALLOC_GB_SIZE GiB every TP rank preallocates once the CUDA
graphs are captured (engines/sglang/settings.py symm_mem_prealloc_bytes: model_runner.py
prealloc_symmetric_memory_pool 0.5.9-0.5.15, pynccl_allocator.py 0.5.16-0.5.23), outside mem_fraction_static.

The real figure: NVIDIA/srt-slurm#172 (SGLang decode workers, DeepSeek-R1 FP4 TP4 on GB200, mem-fraction-static 0.95,
enable-symm-mem true, SGLANG_SYMM_MEM_PREALLOC_GB_SIZE not set) died with "torch.OutOfMemoryError: CUDA out of memory.
Tried to allocate 4.00 GiB. GPU 3 has a total capacity of 184.00 GiB of which 2.21 GiB is free." in
prealloc_symmetric_memory_pool (tests/fixtures/diagnose/heldout12.jsonl). The whole case is in
tests/test_fit_outcomes2.py (R172)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from oomkit.engines import sglang as sg
from oomkit.engines.sglang.args import format_command
from oomkit.engines.sglang.settings import symm_mem_prealloc_bytes
from oomkit.errors import OomkitError
from oomkit.hardware.catalog import with_facts
from oomkit.memory import Device
from oomkit.model.resolve import resolve
from tests.sweep_harness import offline, run_cli  # noqa: F401 (the autouse fixture: no network, a fresh cache)

GiB = 1 << 30
MiB = 1 << 20
H100 = 81559  # MiB, nvidia-smi memory.total of an H100 80GB HBM3

_FIXTURE = Path(__file__).parent / "fixtures" / "diagnose" / "heldout12.jsonl"


def _srt_slurm_172() -> dict:
    for line in _FIXTURE.read_text(encoding="utf-8").splitlines():
        case = json.loads(line)
        if case["source"] == "https://github.com/NVIDIA/srt-slurm/issues/172":
            return case
    raise AssertionError("srt-slurm#172 is not in heldout12.jsonl")


def _gpus(n: int) -> tuple[Device, ...]:
    return tuple(with_facts(Device(f"CUDA{i}", "H100", H100 * MiB)) for i in range(n))


def test_the_default_pool_is_the_4_gib_the_log_tried_to_allocate():
    case = _srt_slurm_172()
    assert "Tried to allocate 4.00 GiB" in case["text"] and "prealloc_symmetric_memory_pool" in case["text"]
    s = sg.parse_args(["--model-path", "m", "--tp", "4", "--mem-fraction-static", "0.95", "--enable-symm-mem"], {})[2]
    # the log's request, as diagnose reads it ("4.00 GiB"), and the release's default when the variable is unset
    assert symm_mem_prealloc_bytes(s, sg.parse_version("0.5.11")) == case["expected"]["numbers"]["requested_bytes"]
    assert case["expected"]["numbers"]["requested_bytes"] == 4 * GiB


@pytest.mark.parametrize(("version", "env", "flag", "gib"), [
    ("0.5.8", {}, True, 0),  # the flag exists (0.4.10.post2+), the preallocation does not (0.5.8 wheel)
    ("0.5.9", {}, True, 4),  # server_args.py: unset -> 4 with --enable-symm-mem
    ("0.5.23", {}, True, 4),  # arg_groups/memory_hook.py handle_gpu_memory_settings
    ("0.5.14", {"SGLANG_SYMM_MEM_PREALLOC_GB_SIZE": "8"}, True, 8),
    ("0.5.14", {"SGLANG_SYMM_MEM_PREALLOC_GB_SIZE": "0"}, True, 0),  # "<= 0": returns before allocating
    ("0.5.14", {"SGLANG_SYMM_MEM_PREALLOC_GB_SIZE": "-1"}, True, 0),
    ("0.5.14", {"SGLANG_SYMM_MEM_PREALLOC_GB_SIZE": "8"}, False, 0),  # without the flag nothing is preallocated
    ("0.5.14", {}, False, 0),
])
def test_pool_size_by_release_flag_and_variable(version, env, flag, gib):
    argv = ["--model-path", "m", *(["--enable-symm-mem"] if flag else [])]
    s = sg.parse_args(argv, env)[2]
    assert symm_mem_prealloc_bytes(s, sg.parse_version(version)) == gib * GiB


def test_a_non_integer_size_is_one_line_refused():
    with pytest.raises(OomkitError, match="SGLANG_SYMM_MEM_PREALLOC_GB_SIZE='4.5'"):
        sg.parse_args(["--model-path", "m", "--enable-symm-mem"], {"SGLANG_SYMM_MEM_PREALLOC_GB_SIZE": "4.5"})
    rc, out, err = run_cli("check", "--gpu", "H100", "--engine-version", "0.5.14", "--", "env",
                           "SGLANG_SYMM_MEM_PREALLOC_GB_SIZE=4.5", "python", "-m", "sglang.launch_server",
                           "--model-path", "Qwen/Qwen3-8B", "--enable-symm-mem")
    assert rc == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize("tp", [1, 2, 4])
def test_the_pool_is_its_own_last_phase_outside_the_budget_whatever_the_tp(tp):
    spec = resolve("Qwen/Qwen3-8B")
    s = replace(sg.SGLangSettings(tp_size=tp, enable_symm_mem=True), engine_version="0.5.14")
    v = sg.estimate(spec, _gpus(tp), s).engine_view
    names = [p["phase"] for p in v["phases"]]
    assert names[-1] == "symmetric memory pool"
    assert names.index("CUDA graph capture") < names.index("symmetric memory pool")
    last, before = v["phases"][-1], v["phases"][-2]
    assert last["bytes"] == 4 * GiB and last["in_budget"] is False  # torch.empty(4 * 1024**3 uint8) on every rank
    assert last["free_after_bytes"] == before["free_after_bytes"] - 4 * GiB
    assert "Pre-allocating symmetric memory pool with 4 GiB" in v["log"]
    assert v["symm_mem_prealloc_bytes"] == 4 * GiB


def test_without_the_flag_the_start_up_is_unchanged():
    spec = resolve("Qwen/Qwen3-8B")
    plain = sg.estimate(spec, _gpus(1), replace(sg.SGLangSettings(), engine_version="0.5.14")).engine_view
    symm = sg.estimate(spec, _gpus(1), replace(sg.SGLangSettings(enable_symm_mem=True),
                                               engine_version="0.5.14")).engine_view
    assert "symmetric memory pool" not in [p["phase"] for p in plain["phases"]]
    assert plain["symm_mem_prealloc_bytes"] == 0
    assert symm["phases"][:-1] == plain["phases"]  # the pool sizes nothing before it: KV pool and captures alike
    assert symm["available_gpu_mem_bytes"] == plain["available_gpu_mem_bytes"] - 4 * GiB  # the scheduler's line


def test_a_pool_that_does_not_fit_is_the_phase_that_dies():
    # an H100 at 0.95 leaves about 4 GiB past the weights' and pool's share; with the captures the 4 GiB pool
    # cannot fit: start-up dies there (the failure srt-slurm#172 shows), a smaller variable lets it through
    spec = resolve("Qwen/Qwen3-8B")
    s = replace(sg.SGLangSettings(enable_symm_mem=True, mem_fraction_static=0.95), engine_version="0.5.14")
    e = sg.estimate(spec, _gpus(1), s)
    f = e.engine_view["failed_phase"]
    assert f["phase"] == "symmetric memory pool" and f["needed_bytes"] == 4 * GiB and f["after_kv"] is True
    assert any("symmetric memory pool" in w and "SGLANG_SYMM_MEM_PREALLOC_GB_SIZE" in w for w in e.warnings)
    ok = sg.estimate(spec, _gpus(1), replace(s, symm_mem_prealloc_gb=0))
    assert not ok.engine_view.get("cuda_graph_short_bytes")


def test_the_command_keeps_the_flag_and_the_variable():
    s = sg.parse_args(["--model-path", "m", "--enable-symm-mem"], {"SGLANG_SYMM_MEM_PREALLOC_GB_SIZE": "2"})[2]
    argv = format_command("m", replace(s, engine_version="0.5.14"))
    assert "--enable-symm-mem" in argv and "SGLANG_SYMM_MEM_PREALLOC_GB_SIZE=2" in argv
