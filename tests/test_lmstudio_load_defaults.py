"""What `lms load` loads when the command leaves a setting to LM Studio (engines/llamacpp/lmstudio.py DEFAULT_CONTEXT,
offload_layers; programs.py parse_lms, lms_slots), against LM Studio's own words and its runtime's logs
(tests/fixtures/engine_logs/lmstudio/load_defaults/):

- the context: 4096 tokens since LM Studio 0.3.2 ("Reduced default context size from 8K to 4K tokens", release
  notes quoted in NixOS/nixpkgs#338943), still 4096 in 0.4.19 ("Reset to Default ... resets to 4096",
  lmstudio-bug-tracker#2174);
- GPU offload "max": LM Studio hands llama.cpp n_gpu_layers = 999999, so the runtime's fit gives up instead of moving
  layers to the CPU ("common_fit_params: failed to fit params to free device memory: n_gpu_layers already set by user
  to 999999, abort", LM Studio 0.4.18, lmstudio-bug-tracker#2138). AutoFit ("Let llama.cpp choose context and GPU
  placement", lmstudio-js c5d591de, 2026-07-06, on by default) came after; oomkit applies the fixed count to
  runtimes before v2.0.0 only, since a 2.x runtime's number does not say whether its app has AutoFit;
- LM Studio's guardrail weighs a single GPU at 8192 tokens but hands the runtime the context as set, f16 KV cache
  (lmstudio-bug-tracker#1454, LM Studio 0.4.0).
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from oomkit.engines.llamacpp.lmstudio import DEFAULT_CONTEXT, OFFLOAD_MAX_LAYERS, offload_layers
from oomkit.engines.llamacpp.programs import parse_lms

FIXTURES = Path(__file__).parent / "fixtures" / "engine_logs" / "lmstudio" / "load_defaults"


def _fixture(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def _estimate(*lms: str, version: str, gpu: str) -> dict:
    from oomkit.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["estimate", "--json", "--gpu", gpu, "--engine-version", version, "--", "lms", "load", *lms])
    assert rc == 0, err.getvalue()
    return json.loads(out.getvalue())


FIT_ABORT = "gemma-4-12b-offload-max-fit-abort-0.4.18.json"
GEMMA_12B = "google/gemma-4-12B-it"  # 48 blocks (the UI's "48 GPU layers" in #2138) and the output layer


def test_default_context_is_lm_studios_4096():
    """No -c: 4096 tokens, the app's default (0.3.2's release notes, 0.4.19's Reset to Default)."""
    fx = _fixture("default-context-4096.json")
    assert DEFAULT_CONTEXT == fx["printed"]["default_context_tokens"] == 4096
    _, _, s = parse_lms(["load", "qwen/qwen3-8b"])
    assert s.n_ctx == fx["printed"]["default_context_tokens"]
    _, _, typed = parse_lms(["load", "qwen/qwen3-8b", "-c", "16384"])
    assert typed.n_ctx == 16384


def test_offload_max_is_a_fixed_count_before_runtime_2():
    """#2138: "max" reaches llama.cpp as 999999 layers. A runtime before v2.0.0 (LM Studio 0.3 / 0.4.0, before
    AutoFit) gets that count; from v2.0.0, and with no runtime named, llama.cpp keeps its -1 and fits."""
    fx = _fixture(FIT_ABORT)
    assert OFFLOAD_MAX_LAYERS == fx["printed"]["n_gpu_layers"] == 999999
    assert offload_layers("lmstudio-1.104.2", -1) == 999999
    assert offload_layers("lmstudio-1.63.1", -1) == 999999
    assert offload_layers("lmstudio-2.14.0", -1) == -1
    assert offload_layers(None, -1) == -1
    assert offload_layers("lmstudio-1.104.2", 0) == 0  # --gpu off stays off


def test_fit_gives_up_on_lm_studios_max_as_logged():
    """#2138's sentence, word for word, where the load does not fit: LM Studio's 999999 layers make llama.cpp's fit
    abort, so every layer stays on the GPU (49/49: 48 blocks and the output). Runtime 1.104.2 is one LM Studio 0.4.0
    ran (#1454); it is not in oomkit's runtime table, so the newest llama.cpp rules apply. The thread gives neither
    its context nor its runtime, and its 16 GB card holds Gemma 4 12B at 4096 by oomkit's count, so the 8 GB model of
    the same card (RX 9060 XT 8GB) is where the fit has something to refuse. Before this rule oomkit fitted it to
    39/49 layers (-ngl 39) as llama-server would."""
    fx = _fixture(FIT_ABORT)
    est = _estimate(GEMMA_12B, version="1.104.2", gpu="RX 9060 XT 8GB")
    v = est["engine_view"]
    assert v["fit"] == fx["printed"]["fit_status"]
    assert v["fit_log"].splitlines()[-1] == fx["fit_line"]
    assert v["offloaded_layers"] == f"{fx['printed']['ui_gpu_layers'] + 1}/49"
    assert v["n_ctx"] == DEFAULT_CONTEXT


@pytest.mark.xfail(strict=True, reason=(
    "#2138 is LM Studio 0.4.18 on a 2.x runtime the thread does not name: it gave up the fit (999999 layers). "
    "A 2.x runtime also runs under 0.4.21, whose AutoFit lets llama.cpp place the layers (#2312: 54 of 65 on GPU "
    "with Max), and --engine-version names the runtime, not the app: oomkit keeps fitting from v2.0.0 (35/49 "
    "layers here, against #2138's every layer)"))
def test_fit_gives_up_on_max_under_a_2x_runtime_before_autofit():
    fx = _fixture(FIT_ABORT)
    v = _estimate(GEMMA_12B, version="2.14.0", gpu="RX 9060 XT 8GB")["engine_view"]
    assert v["fit_log"].splitlines()[-1] == fx["fit_line"]


def test_guardrail_estimate_does_not_change_the_context_handed_to_the_runtime():
    """#1454 (LM Studio 0.4.0): the guardrail weighs 8192 tokens on one GPU, the runtime gets n_ctx=16384 with one
    prediction and an f16 cache; oomkit loads the context as typed, at one prediction, f16."""
    fx = _fixture("deepseek-r1-16384-guardrail-0.4.0.json")
    p = fx["printed"]
    assert p["estimate_context"] == 8192 and p["n_ctx"] == 16384
    _, _, s = parse_lms(["load", "deepseek-ai/DeepSeek-R1", "-c", str(p["n_ctx"]), "--parallel", str(p["n_parallel"])])
    assert (s.n_ctx, s.n_parallel) == (p["n_ctx"], p["n_parallel"])
    assert (s.cache_type_k, s.cache_type_v) == (p["type_k"], p["type_v"])


def test_physical_batch_is_512_as_logged():
    """#1454 (LM Studio 0.4.0, before the app had a Physical Batch Size setting): `llama_context: n_ubatch = 512`,
    the step the compute buffers are sized for; oomkit's lms load runs the same."""
    fx = _fixture("deepseek-r1-16384-guardrail-0.4.0.json")
    v = _estimate("qwen/qwen3-8b", "-c", "16384", "--parallel", "1", version="2.25.2", gpu="RTX 3080 20GB")["engine_view"]
    assert v["n_ubatch"] == fx["printed"]["n_ubatch"] == 512
