"""LM Studio's MLX runtime fits the context to the memory (lmstudio-ai/mlx-engine
mlx_engine/model_kit/batched_vision/context_fit.py calculate_context_fit, mlx-engine#345): an `lms load` that
mlx-engine loads with BatchedVisionModelKit gets the fitted context, not -c. The figures are the runtime's own log
lines, kept as fixtures (tests/fixtures/engine_logs/verdicts/mlx_transformers/).

    thread                                   Mac, model, asked           logged           oomkit
    lmstudio-bug-tracker#2191 (log figures)  36.00 GiB, 35B-A3B UD      152,576          152,576 from the log's terms
    lmstudio-bug-tracker#2250 (comment)      M1 Max 64GB (51.84 GiB     208,384          208,384; every term of the
                                             set), Qwen3.8-27B 4-bit,                    line within 0.01 GiB
                                             16,384
    mlx-engine#366                           M4 24GB, Qwen3.8-27B 4-bit, 4,096 (minimum)  4,096
                                             24,576
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oomkit.engines import mlx
from oomkit.engines.mlx.context_fit import calculate_context_fit
from oomkit.engines.mlx.layout import lms_context_fit
from oomkit.engines.shell_words import split_command
from oomkit.memory import Device
from oomkit.model import catalog
from oomkit.model.hf_config import spec_from_config
from tests.sweep_harness import offline, run_cli  # noqa: F401 (the autouse fixture: no network, a fresh cache)

GiB = 1 << 30
FIXTURES = Path(__file__).parent / "fixtures" / "engine_logs" / "verdicts" / "mlx_transformers"


def _fixture(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.json").read_text())


def _logged(line: str, key: str) -> str:
    return line.split(f"{key}=", 1)[1].split()[0]


def _gib(text: str) -> float:
    return float(text.removesuffix("GiB"))


def _per_token(text: str) -> int:
    return int(text.removesuffix("B/token"))


@pytest.mark.parametrize("baseline,ssm", [(20.145, 0.06), (20.15, 0.06), (20.15, 0.055), (20.15, 0.0649)])
def test_2191_the_rule_gives_the_logged_context_from_the_logged_terms(baseline, ssm):
    # the log prints its terms to 0.01 GiB: anywhere in that band the rule lands on the logged 152,576
    line = _fixture("lmstudio-2191-qwen3.6-35b-a3b-context-auto-fit")["lines"][-1]
    context, reserve = calculate_context_fit(
        working_set=int(_gib(_logged(line, "working_set")) * GiB), baseline=int(baseline * GiB),
        full_kv=_per_token(_logged(line, "full_kv")), prompt_inputs=_per_token(_logged(line, "prompt_inputs")),
        attention=_per_token(_logged(line, "attention")), rotating_peak=0, fixed_ssm=int(ssm * GiB),
        max_context=int(_logged(line, "max").replace(",", "")))
    assert context == int(_logged(line, "fitted").replace(",", ""))
    assert reserve / GiB == _gib(_logged(line, "reserve"))


def test_2250_qwen3_8_27b_on_an_m1_max_64gb_loads_at_the_logged_fit():
    fx = _fixture("lmstudio-2250-qwen3.8-27b-m1-max-64-context-auto-fit")
    log = " ".join(fx["lines"][3:7])
    spec = spec_from_config(dict(catalog.lookup("qwen3.8-27b").config), name="q")
    # the log's working set (51.84 GiB) as a wired limit; the per-model default context 16,384 as -c
    s = mlx.MlxSettings(program="lmstudio", context_length=16_384, q_bits=4,
                        wired_limit_mb=round(_gib(_logged(log, "working_set")) * 1024))
    mac = (Device("MTL0", "Apple M1 Max 64GB", 64 * GiB),)
    fit = lms_context_fit(spec, mac, s)
    assert fit is not None
    assert abs(fit.baseline / GiB - _gib(_logged(log, "baseline"))) < 0.005
    assert fit.full_kv == _per_token(_logged(log, "full_kv"))
    assert fit.prompt_inputs == _per_token(_logged(log, "prompt_inputs"))
    assert fit.attention == _per_token(_logged(log, "attention"))
    assert abs(fit.estimated_peak / GiB - _gib(_logged(log, "estimated_peak"))) < 0.005
    fitted = int(_logged(log, "fitted").replace(",", ""))
    assert fit.context_length == fitted
    est = mlx.ENGINE.estimate(spec, mac, s)
    assert est.settings["context_length"] == fitted
    assert any(f"LM Studio's MLX runtime fits the context to {fitted:,} tokens" in w for w in est.warnings)


def test_366_qwen3_8_27b_on_an_m4_24gb_gets_the_4096_minimum():
    fx = _fixture("mlx-engine-366-qwen3.8-27b-m4-24-context-minimum")
    assert "`lms ps` shows a context of 4096." in fx["lines"]
    rc, out, err = run_cli("check", "--json", "--gpu", "Apple M4 24GB", "--",
                           *split_command("lms load lmstudio-community/Qwen3.8-27B-MLX-4bit --context-length 24576"))
    assert rc in (0, 1), err
    assert json.loads(out)["n_ctx"] == 4096


def test_a_text_model_keeps_its_context_at_one_prediction_and_is_fitted_when_batched():
    # generate.py load_model: a text model at --parallel 1 loads ModelKit (-c is its context); from --parallel 2 a
    # batchable one loads BatchedVisionModelKit (mlx-engine#352), whose fit replaces -c
    argv = ["lms", "load", "lmstudio-community/Qwen3-8B-MLX-8bit", "-c", "8192"]
    rc, out, _ = run_cli("check", "--json", "--gpu", "M4 Max 128GB", "--", *argv)
    assert json.loads(out)["n_ctx"] == 8192
    rc, out, _ = run_cli("check", "--json", "--gpu", "M4 Max 128GB", "--", *argv, "--parallel", "2")
    d = json.loads(out)
    assert d["n_ctx"] != 8192
    assert any("LM Studio's MLX runtime fits the context to" in w for w in d["estimate"]["warnings"])


def test_366_largest_context_and_plan_stop_at_the_fitted_context():
    """The runtime loads its own fitted context whatever --context-length asks (mlx-engine#366: 24,576 asked, 4,096
    loaded on a 24 GB M4): check's largest context is that one, and plan offers no larger one (it used to write
    --context-length 262144, which the runtime would load at 4,096)."""
    argv = split_command("lms load lmstudio-community/Qwen3.8-27B-MLX-4bit --context-length 24576")
    rc, out, err = run_cli("check", "--json", "--gpu", "Apple M4 24GB", "--", *argv)
    assert rc in (0, 1), err
    assert json.loads(out)["max_context"] == 4096
    bare = split_command("lms load lmstudio-community/Qwen3.8-27B-MLX-4bit")
    rc, out, err = run_cli("plan", "--json", "--gpu", "Apple M4 24GB", "--min-ctx", "4096", "--", *bare)
    assert rc == 0, err
    options = json.loads(out)["plan"]["options"]
    assert options and all(o["context"] <= 4096 for o in options)
    rc, out, _ = run_cli("plan", "--json", "--gpu", "Apple M4 24GB", "--", *argv)
    assert not [o for o in json.loads(out)["plan"]["options"] if o["tier"] == 1]  # 24,576 is not to be had on this Mac
