"""The third tier's hardware search and a family's member pick take only an option all on the GPUs, so they skip the
search for the least offload (evaluate(offload=False)): every answer of that search is a second-tier option, which
both callers drop. The same plan and fit output with and without the skip, on inputs that reach the third tier (a
405B and a 70B model beside one 24 GiB card, a 32B model on vLLM), a family's pick, and ones that stop at the first
or second tier."""

from __future__ import annotations

import shlex
from functools import wraps

import pytest

from oomkit.cli import main
from oomkit.engines import base
from oomkit.plan import family, hardware

INPUTS = [
    'plan meta-llama/Llama-3.1-405B-Instruct --gpu "RTX 4090" --json',
    'plan llama3.3:70b --gpu "RTX 4090" --min-ctx 16384 --json',
    "plan qwen3:8b --vram 8GiB --min-ctx 32768 --json",
    "plan Qwen/Qwen3-8B --engine vllm --vram 24GiB --json",
    "plan qwen3 --vram 12GiB --json",
    "plan llama3.3:70b --engine ollama --vram 24GiB --json",
    "plan Qwen/Qwen3-32B --engine vllm --vram 24GiB --json",
    'plan "llama 3.1" --vram 6GiB --json',
    "fit --vram 24GiB --json -- llama-server -hf unsloth/Llama-3.3-70B-Instruct-GGUF:Q4_K_M -c 8192",
    "fit --vram 16GiB --json -- vllm serve Qwen/Qwen2.5-7B-Instruct -tp 2",
]


def _run(argv: list[str], capsys) -> tuple[int, str, int]:
    """Exit code, stdout, and how many estimates the command made."""
    count = 0
    estimate = base.EngineModule.estimate

    def counted(self, *args, **kwargs):
        nonlocal count
        count += 1
        return estimate(self, *args, **kwargs)

    base.EngineModule.estimate = counted
    try:
        rc = main(argv)
    except SystemExit as e:  # argparse's exits
        rc = e.code
    finally:
        base.EngineModule.estimate = estimate
    return rc, capsys.readouterr().out, count


def _with_offload_search(evaluate):
    """evaluate as these callers ran it before: the least-offload search run whatever the caller takes."""
    @wraps(evaluate)
    def full(*args, **kwargs):
        kwargs.pop("offload", None)
        return evaluate(*args, **kwargs)
    return full


@pytest.mark.parametrize("line", INPUTS)
def test_plan_and_fit_output_unchanged_without_the_offload_search(line, capsys, monkeypatch):
    argv = shlex.split(line)
    rc_new, out_new, n_new = _run(argv, capsys)
    monkeypatch.setattr(hardware, "evaluate", _with_offload_search(hardware.evaluate))
    monkeypatch.setattr(family, "evaluate", _with_offload_search(family.evaluate))
    rc_old, out_old, n_old = _run(argv, capsys)
    assert (rc_new, out_new) == (rc_old, out_old)
    assert out_new.strip()
    assert n_new <= n_old
    if "405B" in line:
        # Llama 3.1 405B beside one RTX 4090: 34 candidate machines are tried before 8 x RTX 5090 fits; with the
        # offload search each took ~12 estimates, without it ~3 (833 -> 503 estimates in all)
        assert '"count": 8' in out_new
        assert n_old - n_new > 250

