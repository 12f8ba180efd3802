"""Bad input found by fuzzing the CLI (mutated engine commands, config.json fields, GGUF headers, logs and flags):
each case is a class of crash that was fixed, held to the promise of DESIGN.md: exit 2 with one line on stderr,
naming the bad value, never a traceback (or a valid answer, in time)."""

from __future__ import annotations

import pytest

from tests.hardware_fakes import oomkit_env, run_oomkit


def one_line_error(r, *words: str) -> None:
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("oomkit: error: "), r.stderr
    for w in words:
        assert w in lines[0], (w, lines[0])


# ---------------------------------------------------------------------------------------------------------
# plan / fit on a machine without a GPU: the reference-card note was printed before the options and the model
# were read, so a bad value's error came out as a second line after it.

@pytest.mark.parametrize("args, words", [
    (("plan", "qwen3:8b", "--min-ctx", "-1"), ("--min-ctx", "'-1'")),
    (("plan", "qwen3:8b", "--headroom", "1,024"), ("--headroom", "'1,024'")),
    (("plan", "Qwen/Qwen3-8B:Q9_K"), ("Q9_K",)),
    (("plan", "--all", "--concurrency", "NaN"), ("--concurrency", "'NaN'")),
    (("fit", "--reserve", "NaN", "--", "llama-server", "-m", "qwen3:8b"), ("--reserve", "'NaN'")),
])
def test_plan_and_fit_errors_stay_one_line_without_a_gpu(tmp_path, args, words):
    env = oomkit_env(tmp_path)
    env["HF_HUB_OFFLINE"] = "1"
    one_line_error(run_oomkit(*args, env=env), *words)


# ---------------------------------------------------------------------------------------------------------
# Settings that take more GPUs than a tier-3 candidate machine has: vLLM -tp 2 spreads one --vram over two ranks,
# and the smallest machine was named "1 x RTX 4090 ... using 47.09 GiB", twice its memory.

def test_tier3_machine_has_the_gpus_the_settings_take(tmp_path):
    import json

    env = oomkit_env(tmp_path)
    env["HF_HUB_OFFLINE"] = "1"
    r = run_oomkit("plan", "Qwen/Qwen3-8B", "--engine", "vllm", "--vram", "4GiB", "--tensor-parallel-size", "2",
                   "--limit", "1", "--json", env=env)
    assert r.returncode == 1, r.stderr
    hw = json.loads(r.stdout)["plan"]["smallest_hardware"]
    assert hw["count"] == len(hw["estimate"]["devices"]) == 2
    assert hw["needed_bytes"] <= hw["memory_bytes"]


# ---------------------------------------------------------------------------------------------------------
# --engine-version newer than the newest release modelled: the newest rules applied without a word (llama.cpp's
# build tags said so; vLLM, SGLang, Ollama, MLX, transformers releases did not). Releases within the range stay
# silent.

def _estimate_warnings(*args: str) -> list[str]:
    import contextlib
    import io
    import json

    from oomkit.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["estimate", "Qwen/Qwen3-8B", "--vram", "24GiB", "--json", *args])
    assert rc == 0, err.getvalue()
    return json.loads(out.getvalue())["warnings"]


@pytest.mark.parametrize("engine, version, newest", [
    ("vllm", "99.99.99", "0.33.0"), ("vllm", "v1.0", "0.33.0"), ("sglang", "0.6.0rc1", "0.5.23"),
    ("transformers", "6.0.0", "5.24.0"),
])
def test_engine_version_past_the_newest_is_said(monkeypatch, engine, version, newest):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    words = f"{engine} {version} is newer than the newest release oomkit models ({newest}): its newest rules apply"
    assert words in _estimate_warnings("--engine", engine, "--engine-version", version)
    assert not any("newer than the newest release" in w
                   for w in _estimate_warnings("--engine", engine, "--engine-version", newest))
