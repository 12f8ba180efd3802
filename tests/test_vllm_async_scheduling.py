"""vLLM's async scheduling and the batches it keeps in flight, read in the 0.22.0-0.34.0 wheels.

config/vllm.py VllmConfig.max_in_flight_tokens (0.26.0+) = max_concurrent_batches x max_num_batched_tokens, what a
sliding-window or chunked-local layer reserves beyond its window for one request (v1/kv_cache_interface.py
SlidingWindowSpec.max_admission_blocks_per_request: cdiv(min(window - 1 + in-flight, max_model_len), block) + 1).
max_concurrent_batches, 0.23.0-0.33.0 (config/vllm.py, e.g. 0.28.0 lines 550-561):

    pp_size = self.parallel_config.pipeline_parallel_size
    if self.scheduler_config.async_scheduling:
        if self.use_v2_model_runner:
            return pp_size + 1
        # V1 Model Runner does not fully support async scheduling with PP.
        if pp_size <= 1:
            return 2
    return pp_size

and 0.34.0 (lines 560-566, no V1 runner left): pp_size + 1 with async scheduling, pp_size without.
SchedulerConfig.async_scheduling is None by default in every wheel read (config/scheduler.py), and
VllmConfig.__post_init__ settles it (0.28.0 lines 1145-1234): --async-scheduling / --no-async-scheduling as given,
else on unless the runner is "pooling", the speculation method is not EAGLE / MTP / DFlash / ngram_gpu / DSpark
(draft_model from 0.28.0: `and self.speculative_config.method != "draft_model"`, 0.28.0 line 1201, absent in
0.26.0-0.27.0), disable_padded_drafter_batch is set, the executor lacks it or ROCm runs DeepEP HT DBO; from 0.31.0
(line 1630) pipeline parallelism on the V1 runner turns it off too; 0.33.0 (lines 1642-1719) keeps the speculation
and PP rules for the V1 runner only and makes them a ValueError under an explicit --async-scheduling; 0.34.0 drops
them. The figures below are worked from these lines by hand.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from oomkit.engines.vllm import ENGINE, VllmSettings
from oomkit.engines.vllm.args import format_command, parse_args, rewrite_command
from oomkit.engines.vllm.config import resolve
from oomkit.engines.vllm.kv import kv_tokens_in_flight
from oomkit.errors import OomkitError
from oomkit.hardware.catalog import with_facts
from oomkit.memory import Device
from oomkit.units import MiB
from tests.test_vllm_startup import spec_of

H100 = (with_facts(Device("CUDA0", "NVIDIA H100 80GB HBM3", 81559 * MiB)),)
H100x2 = tuple(with_facts(Device(f"CUDA{i}", "NVIDIA H100 80GB HBM3", 81559 * MiB)) for i in range(2))
GEMMA3 = "google/gemma-3-27b-it"  # 52 sliding-window layers (window 1024), 10 full


def _settings(version: str, *argv: str, env: dict[str, str] | None = None) -> VllmSettings:
    _, _, s = parse_args(["serve", GEMMA3, *argv], env=env or {})
    return replace(s, engine_version=version)


def _batches(version: str, *argv: str, env: dict[str, str] | None = None) -> tuple[int, bool]:
    s = _settings(version, *argv, env=env)
    r = resolve(spec_of(GEMMA3), H100x2 if s.pipeline_parallel_size > 1 else H100, s)
    tokens = kv_tokens_in_flight(r)
    assert tokens % r.max_num_batched_tokens == 0
    return tokens // r.max_num_batched_tokens, r.async_scheduling


# --------------------------------------------------------------------------------------------------------------
# the command line: parsed, refused where the release's parser lacks it, written back


def test_parsed_both_ways():
    assert _settings("0.28.0").async_scheduling is None
    assert _settings("0.28.0", "--async-scheduling").async_scheduling is True
    assert _settings("0.28.0", "--no-async-scheduling").async_scheduling is False
    assert _settings("0.28.0", "--no_async_scheduling").async_scheduling is False  # FlexibleArgumentParser


def test_switch_takes_no_value():
    # argparse BooleanOptionalAction: "ignored explicit argument"
    with pytest.raises(OomkitError, match="ignored explicit argument"):
        parse_args(["serve", GEMMA3, "--async-scheduling=true"], env={})


@pytest.mark.parametrize("flag", ["--async-scheduling", "--no-async-scheduling"])
def test_refused_before_0_10(flag):
    # engines/data/vllm_flags.json: --async-scheduling first in 0.10.0 (engine/arg_utils.py, SchedulerConfig field)
    s = _settings("0.9.2", flag)
    with pytest.raises(OomkitError, match="unrecognized arguments"):
        resolve(spec_of(GEMMA3), H100, s)


def test_written_back():
    s = _settings("0.28.0", "--no-async-scheduling")
    assert format_command(GEMMA3, s)[-1] == "--no-async-scheduling"
    argv = ["vllm", "serve", GEMMA3, "--no-async-scheduling"]
    assert rewrite_command(argv, s, replace(s, async_scheduling=True)) == ["vllm", "serve", GEMMA3,
                                                                           "--async-scheduling"]
    assert rewrite_command(argv, s, replace(s, async_scheduling=None)) == ["vllm", "serve", GEMMA3]
    assert "--async-scheduling" not in " ".join(format_command(GEMMA3, _settings("0.28.0")))


# --------------------------------------------------------------------------------------------------------------
# max_concurrent_batches by release


@pytest.mark.parametrize("version, argv, env, expected", [
    # 0.25.0: the sliding spec reads max_num_batched_tokens (no max_in_flight_tokens in config/vllm.py)
    ("0.25.0", (), None, (1, True)),
    ("0.26.0", (), None, (2, True)),
    ("0.26.0", ("--no-async-scheduling",), None, (1, False)),
    ("0.28.0", ("--no-async-scheduling",), None, (1, False)),
    ("0.28.0", ("--async-scheduling",), None, (2, True)),
    # PP on the V2 runner: pp + 1; without async scheduling pp
    ("0.28.0", ("-pp", "2"), None, (3, True)),
    ("0.28.0", ("-pp", "2", "--no-async-scheduling"), None, (2, False)),
    # PP on the V1 runner: pp with async scheduling on (0.28.0) or turned off (0.31.0: "the V1 model runner does
    # not support it with pipeline parallelism")
    ("0.28.0", ("-pp", "2"), {"VLLM_USE_V2_MODEL_RUNNER": "0"}, (2, True)),
    ("0.31.0", ("-pp", "2"), {"VLLM_USE_V2_MODEL_RUNNER": "0"}, (2, False)),
    ("0.31.0", ("-pp", "2", "--async-scheduling"), {"VLLM_USE_V2_MODEL_RUNNER": "0"}, (2, True)),
    # 0.34.0: pp + 1 whatever the runner
    ("0.34.0", ("-pp", "2"), None, (3, True)),
    ("0.34.0", ("-pp", "2", "--no-async-scheduling"), None, (2, False)),
    # pooling runner: off by default
    ("0.28.0", ("--runner", "pooling"), None, (1, False)),
])
def test_concurrent_batches(version, argv, env, expected):
    assert _batches(version, *argv, env=env) == expected


@pytest.mark.parametrize("version, method, expected", [
    ("0.27.0", "ngram", 1),
    ("0.27.0", "suffix", 1),
    ("0.27.0", "medusa", 1),
    ("0.27.0", "draft_model", 1),  # off by default before 0.28.0
    ("0.28.0", "draft_model", 2),
    ("0.28.0", "eagle3", 2),
    ("0.28.0", "mtp", 2),
    ("0.28.0", "ngram_gpu", 2),
    ("0.32.0", "ngram", 1),
    ("0.34.0", "ngram", 2),  # 0.34.0: no speculation rule left
])
def test_speculation_methods(version, method, expected):
    cfg = json.dumps({"method": method, "num_speculative_tokens": 3, "model": "x/y"})
    assert _batches(version, "--speculative-config", cfg)[0] == expected


def test_disable_padded_drafter_batch():
    cfg = '{"method": "eagle3", "num_speculative_tokens": 3, "model": "x/y", "disable_padded_drafter_batch": true}'
    assert _batches("0.28.0", "--speculative-config", cfg) == (1, False)


def test_unknown_method_is_a_note():
    s = _settings("0.28.0", "--speculative-config", '{"model": "x/y", "num_speculative_tokens": 3}')
    r = resolve(spec_of(GEMMA3), H100, s)
    assert r.async_scheduling
    assert any("names no method" in w for w in r.warnings)


@pytest.mark.parametrize("version, argv, env, message", [
    ("0.28.0", ("--async-scheduling", "--speculative-config", '{"method": "ngram", "num_speculative_tokens": 3}'),
     None, "Currently, async scheduling is only supported with EAGLE/MTP/Draft Model/NGram GPU/DSpark kind of "
           "speculative decoding"),
    ("0.32.0", ("--async-scheduling", "--speculative-config", '{"method": "suffix", "num_speculative_tokens": 3}'),
     None, "Currently, async scheduling is only supported with EAGLE/MTP/Draft Model/NGram GPU/DSpark/DFlash kind "
           "of speculative decoding"),
    ("0.33.0", ("--async-scheduling", "-pp", "2"), {"VLLM_USE_V2_MODEL_RUNNER": "0"},
     "Async scheduling is not supported by the V1 model runner with pipeline parallelism."),
])
def test_explicit_incompatible_is_vllms_error(version, argv, env, message):
    with pytest.raises(OomkitError) as e:
        _batches(version, *argv, env=env)
    assert message in str(e.value)


def test_explicit_draft_model_accepted_before_0_28():
    # the explicit branch's `and self.speculative_config.method != "draft_model"` is in 0.26.0 (line 1042)
    cfg = '{"method": "draft_model", "num_speculative_tokens": 3, "model": "x/y"}'
    assert _batches("0.27.0", "--async-scheduling", "--speculative-config", cfg) == (2, True)


# --------------------------------------------------------------------------------------------------------------
# Gemma 3 27B on one H100 at 0.28.0, 131,072 tokens, 8,192 batched (engine/arg_utils.py get_batch_defaults):
# get_max_concurrency_for_kv_cache_config = num_blocks / (blocks of the full group + blocks of each of the 6 sliding
# groups); a full group 131,072 / 16 = 8,192 blocks, a sliding one cdiv(1023 + in-flight, 16) + 1: 1,089 with two
# batches in flight (16,384 tokens), 577 with one (8,192)


@pytest.mark.parametrize("flag, per_sliding_group", [(None, 1089), ("--no-async-scheduling", 577)])
def test_gemma3_concurrency(flag, per_sliding_group):
    s = _settings("0.28.0", *([flag] if flag else []))
    v = ENGINE.estimate(spec_of(GEMMA3), H100, s).engine_view
    kinds = [g["kind"] for g in v["kv_cache_groups"]]
    assert kinds.count("sliding") == 6 and kinds.count("full") == 1
    assert v["max_concurrency"] == round(v["num_gpu_blocks"] / (8192 + 6 * per_sliding_group), 2)


def test_fit_offers_no_async_scheduling():
    """fit turns async scheduling off where that is what a sliding-window model's first request lacks: Gemma 3 12B on
    an RTX 5090 at 0.28.0 with --max-model-len 69632 at 0.95 is refused (one request reserves the window plus two
    batches in flight per sliding-window layer), and fits with one batch in flight. Before 0.26 there is no such
    reservation, and fit does not offer it."""
    import shlex

    from oomkit.cli import main

    def run(*argv):
        import contextlib
        import io
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = main(list(argv))
        return rc, json.loads(out.getvalue())

    cmd = "vllm serve google/gemma-3-12b-it --max-model-len 69632 --gpu-memory-utilization 0.95"
    rc, before = run("check", "--gpu", "RTX 5090", "--engine-version", "0.28.0", "--json", "--", *shlex.split(cmd))
    assert before["fits"] is False
    rc, fit = run("fit", "--gpu", "RTX 5090", "--engine-version", "0.28.0", "--json", "--", *shlex.split(cmd))
    fit = fit["fit"]
    assert fit["command"] == f"{cmd} --no-async-scheduling"
    assert [c["flag"] for c in fit["changes"]] == ["async_scheduling"]
    rc, after = run("check", "--gpu", "RTX 5090", "--engine-version", "0.28.0", "--json", "--",
                    *shlex.split(fit["command"]))
    assert after["fits"] is True
    rc, old = run("fit", "--gpu", "RTX 5090", "--engine-version", "0.20.0", "--json", "--", *shlex.split(cmd))
    assert "--no-async-scheduling" not in old["fit"]["command"]
