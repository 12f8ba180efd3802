"""--concurrency past what the engine serves at once is refused in the user's terms (exit 2, one line), naming the
engine's ceiling, not a flag the user never typed.

llama.cpp: llama_context refuses n_seq_max > LLAMA_MAX_SEQ (src/llama-context.cpp: "n_seq_max must be <= "), 64 from
PR #13706 (de2ef53a, b5485) and 256 from PR #15916 "llama : bump max seq limit from 64 to 256" (e58174ce, b6507);
src/llama-cparams.h at those commits. vLLM's --max-num-seqs and SGLang's --max-running-requests have no such
ceiling, so a plan for 4096 sequences runs and reports that nothing fits (exit 1), not a refusal.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from oomkit.cli import main
from oomkit.engines.base import get_engine
from oomkit.plan.options import most_at_once


@pytest.mark.parametrize(("extra", "most"), [([], 256), (["--engine-version", "b6507"], 256),
                                             (["--engine-version", "b6506"], 64), (["--engine-version", "b5485"], 64)])
def test_llamacpp_refuses_more_at_once_than_llama_max_seq(extra, most, capsys):
    assert main(["plan", "llama3.1:8b", "--concurrency", str(most + 1), "--gpu", "4090", *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err
    assert err.startswith(f"oomkit: error: --concurrency {most + 1:,}: llama.cpp serves at most {most:,} requests "
                          "at once (LLAMA_MAX_SEQ")
    assert "-np" not in err and "n_parallel" not in err


def test_the_question_as_asked_4096_on_a_4090(capsys):
    assert main(["plan", "llama3.1:8b", "--concurrency", "4096", "--gpu", "4090"]) == 2
    err = capsys.readouterr().err
    assert "serves at most 256 requests at once" in err and "-np" not in err


@pytest.mark.parametrize(("version", "most"), [("b9999", 256), ("b6507", 256), ("b6506", 64), ("b5485", 64)])
def test_llamacpp_ceiling_by_build(version, most):
    eng = get_engine("llama.cpp")
    assert most_at_once(eng, replace(eng.settings(), engine_version=version))[0] == most


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_vllm_and_sglang_have_no_ceiling_under_what_plan_takes(engine):
    eng = get_engine(engine)
    bound = most_at_once(eng, eng.settings())
    assert bound is None or bound[0] >= 4096  # --concurrency itself stops at 4096 (commands/_plan_args.py)


def test_ollama_says_the_bound_is_oomkits(capsys):
    assert main(["plan", "llama3.1:8b", "--engine", "ollama", "--concurrency", "2048", "--gpu", "4090"]) == 2
    err = capsys.readouterr().err.strip()
    assert "oomkit plans at most 1,024 requests at once with ollama" in err and "\n" not in err


@pytest.mark.parametrize("build,np_,refused", [("b5484", 100, False), ("b5485", 65, True), ("b5485", 64, False),
                                                ("b6506", 65, True), ("b6507", 256, False)])
def test_check_refuses_more_sequences_than_the_build_takes(build, np_, refused):
    """llama_init_from_model's "n_seq_max must be <= LLAMA_MAX_SEQ": 64 from PR #13706 (b5485), 256 from PR #15916
    (b6507), no check before; check refuses what that build refuses (was answered at every build up to 256)."""
    from tests.sweep_harness import run_cli  # the CLI in-process

    rc, _, err = run_cli("check", "llama3.1:8b", "--gpu", "H100", "-c", "65536", "-np", str(np_),
                         "--engine-version", build, "--json")
    if refused:
        assert rc == 2 and f"n_seq_max must be <= {64 if build < 'b6507' else 256}" in err, err
    else:
        assert rc in (0, 1), err


def test_vllm_refuses_more_sequences_than_batched_tokens():
    """SchedulerConfig: "max_num_batched_tokens (2048) must be greater than or equal to max_num_seqs (4096)"
    (vllm/config/scheduler.py, 0.11.0; config.py _verify_args in 0.2.7): a 4090's default budget of 2048 with
    --max-num-seqs 4096 is refused (was answered as fitting); raising the budget beside it starts."""
    from tests.sweep_harness import run_cli  # the CLI in-process

    base = ("check", "Qwen/Qwen3-0.6B", "--engine", "vllm", "--gpu", "RTX 4090", "--engine-version", "0.11.0",
            "--max-num-seqs", "4096", "--max-model-len", "4096")
    rc, _, err = run_cli(*base)
    assert rc == 2 and "max_num_batched_tokens (2048) must be greater than or equal to max_num_seqs (4096)" in err
    rc, _, err = run_cli(*base, "--max-num-batched-tokens", "4096")
    assert rc in (0, 1), err


def test_vllm_plan_raises_the_token_budget_beside_many_sequences():
    """plan for 2,500 requests on an L40S (vLLM 0.11's default budget there: 2048 tokens) writes
    --max-num-batched-tokens 2500 beside --max-num-seqs 2500, which vLLM accepts."""
    from tests.sweep_harness import run_cli  # the CLI in-process

    rc, out, err = run_cli("plan", "Qwen/Qwen3-0.6B", "--engine", "vllm", "--gpu", "L40S", "--engine-version", "0.11.0",
                           "--concurrency", "2500", "--ctx", "128")
    commands = [ln for ln in out.splitlines() if "vllm serve" in ln]
    assert rc == 0 and commands, out + err
    assert all("--max-num-seqs 2500 --max-num-batched-tokens 2500" in c for c in commands), commands
