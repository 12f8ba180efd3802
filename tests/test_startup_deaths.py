"""Runs that start, then die: public start-up logs where the engine got past (or stopped at) its KV cache, each a
fixture under tests/fixtures/engine_logs/ with its URL. The figures are the logs', never oomkit's.

What is held against each log: the weights one rank loads (within 3 %), the KV budget one rank gets (within 3 % of
the GPU's memory), and the start-up verdict (engine_view["failed_phase"] and the refusal): the run starts, is
refused at the KV cache, or dies in the phase the log names (CUDA graph capture, sampler warm-up). None of these
logs was used to fit a constant (engines/vllm/phases.py and profile.py name theirs): every figure here is held out.

vLLM 0.17.1 on one RTX 3090 (TheBuccaneer/vllm-offload-profiles, curated excerpts of a study's server logs):
Llama-3.1-8B-Instruct and Qwen2.5-7B-Instruct at --max-model-len 8192 and gpu_memory_utilization 0.6 to 0.9: seven
starts (two with --cpu-offload-gb 12), three refusals at the KV cache, and one run that allocated its KV cache and
died in the sampler warm-up (the same settings as a run that started three months earlier, with other processes on
the card: its OOM line gives the card's free memory before the run, which its estimate starts from). That run was in
view when the V1 capture rule dropped its per-graph share on GeForce parts (engines/vllm/phases.py geforce_capture:
no constant fitted to it; the RTX 4090 0.24 log in tests/test_vllm_cudagraph.py is that rule's held-out check).

Where oomkit misses, the case is a strict xfail with the measured error and the cause found.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from oomkit.engines.vllm import ENGINE, VllmSettings
from oomkit.units import GiB, MiB
from tests.test_vllm import free_before_the_run
from tests.test_vllm_startup import check_known, check_share, devices, fixture, known_params, spec_of

RTX3090 = "NVIDIA GeForce RTX 3090"


def _v0171(util: float, offload: float = 0.0) -> VllmSettings:
    # the logged non-default args: model and max_model_len 8192 (and the utilization where it is not 0.9, the
    # weights kept in host memory where --cpu-offload-gb is given)
    return VllmSettings(engine_version="0.17.1", max_model_len=8192, gpu_memory_utilization=util,
                        cpu_offload_gb=offload)


# stem -> (catalog model, GPU for the devices, the settings the log shows)
VLLM_LOGS = {
    "llama-3.1-8b-3090-v0.17.1-util090-sampler-fail": ("llama-3.1-8b-instruct", RTX3090, _v0171(0.9)),
    "llama-3.1-8b-3090-v0.17.1-util090": ("llama-3.1-8b-instruct", RTX3090, _v0171(0.9)),
    "llama-3.1-8b-3090-v0.17.1-util086": ("llama-3.1-8b-instruct", RTX3090, _v0171(0.86)),
    "llama-3.1-8b-3090-v0.17.1-util086-offload12": ("llama-3.1-8b-instruct", RTX3090, _v0171(0.86, 12.0)),
    "llama-3.1-8b-3090-v0.17.1-util075": ("llama-3.1-8b-instruct", RTX3090, _v0171(0.75)),
    "llama-3.1-8b-3090-v0.17.1-util070-kv-refused": ("llama-3.1-8b-instruct", RTX3090, _v0171(0.7)),
    "qwen2.5-7b-3090-v0.17.1-util090": ("qwen2.5-7b-instruct", RTX3090, _v0171(0.9)),
    "qwen2.5-7b-3090-v0.17.1-util086": ("qwen2.5-7b-instruct", RTX3090, _v0171(0.86)),
    "qwen2.5-7b-3090-v0.17.1-util086-offload12": ("qwen2.5-7b-instruct", RTX3090, _v0171(0.86, 12.0)),
    "qwen2.5-7b-3090-v0.17.1-util065": ("qwen2.5-7b-instruct", RTX3090, _v0171(0.65)),
    "qwen2.5-7b-3090-v0.17.1-util065-kv-refused": ("qwen2.5-7b-instruct", RTX3090, _v0171(0.65)),
    "qwen2.5-7b-3090-v0.17.1-util060-kv-negative": ("qwen2.5-7b-instruct", RTX3090, _v0171(0.6)),
}


KNOWN: dict[tuple[str, str], str] = {
    ("qwen2.5-7b-3090-v0.17.1-util065", "verdict"):
        "a boundary case: one 8,192-token request needs 0.4375 GiB (57,344 B a token); this run got 0.49 GiB and "
        "started, the same settings four minutes later got 0.41 GiB and were refused "
        "(qwen2.5-7b-3090-v0.17.1-util065-kv-refused). oomkit gives 0.43 GiB (-0.27 % of the GPU against this run, "
        "+0.07 % against the other): below the line, so it says refused. The 0.08 GiB between the two runs is the "
        "engine's run-to-run variation in its profile, which no deterministic estimate reproduces",
    ("qwen2.5-7b-3090-v0.17.1-util065", "lines"):
        "follows from the verdict miss of this boundary run: oomkit refuses at the KV cache, so it prints no 'GPU KV "
        "cache size' line where the log (0.49 GiB, started) does",
}


def _check(stem: str, figure: str, ok: bool, message: str) -> None:
    check_known(KNOWN, stem, figure, ok, message)


def _params(logs: dict, figure: str) -> list:
    return known_params(KNOWN, logs, figure)


def vllm_estimate(stem: str):
    model, gpu, s = VLLM_LOGS[stem]
    fx = fixture(stem)
    devs = devices(fx, gpu, s.tensor_parallel_size * s.pipeline_parallel_size)
    if len(devs) == 1 and (free := free_before_the_run(fx)) is not None:
        devs = (replace(devs[0], free_bytes=free),)
    return fx, ENGINE.estimate(spec_of(model), devs, s)


@pytest.mark.parametrize("stem", _params(VLLM_LOGS, "weights"))
def test_vllm_weights_per_rank(stem):
    fx, est = vllm_estimate(stem)
    logged = fx["printed"]["model_loading_bytes"]
    got = est.engine_view["model_loading_bytes"][est.devices[0].id]
    check_share(_check, stem, "weights", got, logged, logged, "weights")


@pytest.mark.parametrize("stem", _params(VLLM_LOGS, "available"))
def test_vllm_kv_budget_per_rank(stem):
    fx, est = vllm_estimate(stem)
    logged = fx["printed"]["available_kv_cache_bytes"]
    got = est.engine_view["available_kv_cache_bytes"][est.devices[0].id]
    check_share(_check, stem, "available", got, logged, est.devices[0].memory_bytes, "available KV")


def test_other_processes_leave_less_after_the_kv_cache():
    # the July run with the card's free memory before vLLM started, read off its OOM line: 139.75 MiB free while this
    # process held 21.72 GiB, so 21.86 GiB of the card's 23.54. vLLM's own check passes (21.86 GiB free >= 0.9 x 23.54
    # = 21.19 GiB requested) and the budget is the same as in April; the 1.68 GiB held by others comes off the
    # headroom after the KV cache. oomkit: context 0.37 + non-torch 0.13 + capture 0.27 GiB (a GeForce part: the
    # one-off alone, at its 82 SMs) leave 0.50 GiB after the graphs, where the warm-up needs 0.61 (256 x 128,256
    # rows at 14.85 B, x 1.35); the log died there on a 126 MiB float32 copy of the logits with 139.75 MiB free
    stem = "llama-3.1-8b-3090-v0.17.1-util090-sampler-fail"
    fx, est = vllm_estimate(stem)
    assert free_before_the_run(fx) == round(139.75 * MiB + 21.72 * GiB)
    # not refused at start: the free memory covers the requested budget (gpu_worker.py init_device)
    assert "Free memory on device" not in (est.engine_view.get("error") or "")
    failed = est.engine_view["failed_phase"]
    assert failed["after_kv"] and failed["phase"] == "sampler warm-up"
    phases = {x["phase"]: x for x in est.engine_view["phases"] if x["device"] == "CUDA0"}
    assert phases["CUDA graph capture"]["free_after_bytes"] > 0  # the graphs were captured, as the log's were
    # the run the study started next at 0.86 on the same card: the fix oomkit names is at or above it
    fix = next(f for f in est.engine_view["fixes"] if "gpu-memory-utilization" in f)
    assert 0.86 <= float(fix.rsplit(" ", 1)[1]) < 0.9


def test_the_same_settings_start_on_an_empty_card():
    # April: the same settings, nothing else on the card (no OOM line): started with 5.68 GiB of KV cache
    fx, est = vllm_estimate("llama-3.1-8b-3090-v0.17.1-util090")
    assert free_before_the_run(fx) is None and est.fits is True


def _verdict(fx: dict, est) -> tuple[str, str]:
    """(the log's verdict, oomkit's): 'starts', 'refused at the KV cache' or 'dies in <phase>'."""
    printed = fx["printed"]
    if printed.get("failed_phase"):
        logged = f"dies in {printed['failed_phase']}"
    elif printed.get("refused_at"):
        logged = f"refused at the {printed['refused_at']}"
    else:
        logged = "starts"
    v = est.engine_view
    phase = (v.get("failed_phase") or {}).get("phase")
    if phase:
        got = f"dies in {phase}"
    elif v.get("error"):
        got = "refused at the KV cache" if est.fits is False else f"error: {v['error']}"
    else:
        got = "starts" if est.fits is not False else "does not fit"
    return logged, got


@pytest.mark.parametrize("stem", _params(VLLM_LOGS, "verdict"))
def test_vllm_start_up_verdict_agrees_with_the_log(stem):
    fx, est = vllm_estimate(stem)
    logged, got = _verdict(fx, est)
    _check(stem, "verdict", got == logged, f"{stem}: the log {logged}, oomkit: {got}")


# the lines vLLM 0.17.1 prints for these phases (gpu_model_runner.py load_model, gpu_worker.py
# determine_available_memory, kv_cache_utils.py _report_kv_cache_config): oomkit's engine_view renders the same shapes
LINE_SHAPES = (r"Model loading took \d+\.\d+ GiB memory", r"Available KV cache memory: -?\d+(\.\d+)? GiB",
               r"GPU KV cache size: [\d,]+ tokens")


@pytest.mark.parametrize("stem", _params(VLLM_LOGS, "lines"))
def test_vllm_lines_have_the_logs_shape(stem):
    import re

    fx, est = vllm_estimate(stem)
    ours = est.engine_view["log"].split("\n")
    differ = [f"{shape!r}: in the log {bool(re.search(shape, fx['quoted']))}, oomkit {mine}" for shape in LINE_SHAPES
              if bool(re.search(shape, fx["quoted"])) != bool(mine := [x for x in ours if re.fullmatch(shape, x)])]
    _check(stem, "lines", not differ, f"{stem}: " + "; ".join(differ))
    # a refusal names the same check as the engine's ValueError
    logged_error = fx["printed"].get("error", "")
    if logged_error.startswith("ValueError: "):
        head = logged_error.removeprefix("ValueError: ").split(" (")[0].split(". ")[0]
        assert est.engine_view["error"].startswith(head), (head, est.engine_view["error"])


def test_sampler_warm_up_runs_the_logged_number_of_requests():
    # "warming up sampler with 256 dummy requests": vllm serve's max_num_seqs default below 70 GiB of GPU memory
    # (engine/arg_utils.py, UsageContext.OPENAI_API_SERVER), capped by max_num_batched_tokens
    import re

    stem = "llama-3.1-8b-3090-v0.17.1-util090-sampler-fail"
    fx, est = vllm_estimate(stem)
    logged = int(re.search(r"warming up sampler with (\d+) dummy requests", fx["printed"]["error"]).group(1))
    assert est.engine_view["sampler_warmup_requests"] == logged == 256
