"""fit on an Ollama MLX build (engines/ollama/mlx_runner.py): the context knob it turns is the one plan finds.

`ollama run qwen3.8:27b-nvfp4` on an M4 Max 64GB runs at Ollama's VRAM-tiered default context (server/routes.go from
v0.15.5: 262144 from 47 GiB of GPU memory) and does not fit there. fit searched for a shorter context below the
context the command would have on a GPU of unknown memory (4096), so it found none and answered tier 3; it now
searches below the context the command has on the GPUs given, as check and plan size it. Both figures are oomkit's:
the test asserts that fit and plan agree and that check passes the command fit writes.
"""

from __future__ import annotations

import shlex

from tests.sweep_harness import offline, run_cli  # noqa: F401 (the autouse fixture: no network, a fresh cache)
from tests.test_fit_outcomes2 import _changes, _check, _fit
from tests.test_fit_outcomes6 import _plan

GPU = ["--gpu", "M4 Max 64GB"]
TAG = "qwen3.8:27b-nvfp4"


def test_fit_offers_the_context_plan_finds_and_check_passes_it():
    before = _check(GPU, None, f"ollama run {TAG}")
    assert before["fits"] is False  # 262144 tokens do not fit
    f = _fit(GPU, None, f"ollama run {TAG}")
    assert f["tier"] == 1 and f["knobs"] == ["context"]
    frm, to = _changes(f)["num_ctx"]
    assert frm == 262144
    p = _plan(TAG, "ollama", GPU, None)
    assert p["options"][0]["context"] == to
    assert to < frm
    # the command fit writes (the server's variables, then the model) fits as check sizes it
    serve, run = f["command"].split("\n")
    env = [w for w in shlex.split(serve) if "=" in w]
    assert env == [f"OLLAMA_CONTEXT_LENGTH={to}"]
    after = _check(GPU, None, " ".join([*env, run]))
    assert after["fits"] is True


def test_tier_three_names_an_apple_machine_for_an_mlx_build():
    """On a 16 GB M4 nothing fits: the machine tier 3 names runs the MLX build (plan/hardware.py candidates: Apple
    machines for MLX weights), not an NVIDIA card (it named an H100)."""
    f = _fit(["--gpu", "M4 16GB"], None, f"ollama run {TAG}")
    assert f["tier"] == 3
    hw = f["smallest_hardware"]
    assert hw["gpu"].startswith("Apple") and hw["command"].endswith(f"ollama run {TAG}"), hw
