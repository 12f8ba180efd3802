"""Held-out vLLM start-up logs, sixteenth set (tests/fixtures/engine_logs/vllm/heldout16/): figures printed at and
after the KV cache by three sources no test cited before (each URL and number grepped in tests/ first): a GPTQ
Mistral-7B forced onto the gptq kernel on a DGX Spark (NVIDIA's 25.11 container, vLLM 0.11.0; the Arm learning path
dgx_spark_voicechatbot), Granite-4.0-micro quantized to FP8 on load by the Python LLM class on an L40S (0.11.0; IBM's
Code Engine serverless-fleets tutorial), and vllm#49476's RTX PRO 6000 comparison (0.25.1, Qwen3.6-35B-A3B NVFP4 with
an FP8 KV cache at 180,224 tokens, the same command on the Marlin and the FlashInfer b12x MoE backends). The printed
figures were recorded before oomkit was run on them; none was used to fit a constant. "Before" is oomkit at cff55828.
Limits: weights 3 % of the printed load; the KV budget and the graph capture 3 % of the GPU's memory; tokens,
concurrency and blocks 3 %.

| source | release | GPU, model, flags | figure | printed | before | after |
|---|---|---|---|---|---|---|
| arm-learning-paths 4_vllm.md | 0.11.0 (nv25.11) | DGX Spark, Mistral-7B GPTQ, --quantization gptq, fp16 | weights | 3.8844 GiB | 3.8782 (-0.16 %) | same |
| | | | available KV | 102.56 GiB | 100.56 (-1.64 % of the GPU) | same |
| | | | KV tokens | 840,160 | 823,808 (-1.95 %) | same |
| | | | concurrency at 32,768 | 25.64x | 25.14x | same |
| | | | blocks | 52,510 | 51,488 | same |
| | | | graph capture | -0.03 GiB (67 + 35) | 0.67 (+0.57 % of the GPU; 67 + 35) | same |
| | | | verdict | starts | starts | same |
| IBM/CodeEngine inferencing README | 0.11.0 | L40S, granite-4.0-micro, LLM(quantization='fp8') | weights | 3.4244 GiB | 3.4242 (-0.01 %) | same |
| | | | available KV | 35.34 GiB | 35.45 (+0.25 % of the GPU) | same |
| | | | KV tokens | 463,136 | 464,688 (+0.34 %) | same |
| | | | concurrency at 131,072 | 3.53x | 3.55x | same |
| | | | graph capture | 0.72 GiB (67 + 35) | 0.92 (+0.44 % of the GPU; 67 + 35) | same |
| | | | verdict | starts | starts | same |
| vllm#49476, --moe-backend=marlin | 0.25.1 | RTX PRO 6000, Qwen3.6-35B-A3B NVFP4, fp8 KV | available KV | 64.36 GiB | 64.41 (+0.05 %) | same |
| | | | KV tokens | 6,518,438 | 6,524,513 (+0.09 %) | same |
| | | | concurrency at 180,224 | 36.17x | 36.20x | same |
| | | | verdict | starts | starts | same |
| vllm#49476, --moe-backend=flashinfer_b12x | 0.25.1 | same | available KV | 52.89 GiB | 64.41 (+12.05 %) | 52.92 (+0.03 %) |
| | | | KV tokens | 5,358,120 | 6,524,513 (+21.8 %) | 5,360,145 (+0.04 %) |
| | | | concurrency at 180,224 | 29.73x | 36.20x | 29.74x |
| | | | verdict | starts | starts | same |

18 of 21 printed figures agree before, 21 after. The three that did not were one cause: oomkit read --moe-backend
into nothing (engines/vllm/args.py kept the flag for the command it writes but never set the setting), and no rule
knew FlashInfer's b12x MoE. Both are fixed from the sources: the flag now sets moe_backend (which also makes the
--moe-backend cutlass rule reachable from the command line), and profile.py b12x_workspace_bytes keeps, in 0.25.0 to
0.28.x, every MoE layer's B12xMoEWrapper workspaces from the profile run on (vLLM 0.25.1 / 0.27.0
experts/flashinfer_b12x_moe.py _ensure_wrapper, built in the profile run with use_cuda_graph=True and max_num_tokens
= max_num_batched_tokens; FlashInfer 0.6.13 b12x_moe.py _allocate_buffers and blackwell_sm12x/moe_dispatch.py, the
same allocations in 0.6.14 and 0.6.16.post3: a static workspace of 640 rows a expert, a dynamic one of
ceil(R / 128) + E - 1 tiles of 128 rows and the (tokens, hidden) output), 40 layers x 322 MiB for this model at
8,192 batched tokens, in place of the modular kernel's one-layer Triton workspace, and kept through the phases after
the KV cache. The difference the comment measures between the two backends, 11.47 GiB, is 11.49 here.

Read but not modelled: the DGX Spark's budget sits 1.64 % of the GPU low because its unified memory makes the
profile's non-torch figure whatever the host took meanwhile (profile.py NON_TORCH_UMA, 4.60 GiB fitted on a 0.22
log; this 0.11.0 container run leaves about 2.6 GiB), and the same free-memory reading gives the graph capture its
negative -0.03 GiB (oomkit's 0.67 is the discrete-GPU capture; both inside the limit). 0.24.0 runs b12x through the
functional flashinfer_b12x_fused_moe, whose module-level workspace cache one shape shares across layers, and 0.29+
pin FlashInfer 0.6.18 and later, whose dynamic workspace takes a per-shape tile height: neither modelled (no log).

Searched and not held (corpus "issues", "pages" and "code"): blog.huikang.dev's gpt-oss-120b walk-through and
www.robotmunki.com (already listed as not held by tests/test_vllm_heldout14.py), a Qwen3-235B-A22B-FP8 8 x L40S TP 8
+ EP log on 0.10.2 and a VIGA dev log (2 x H100, Qwen2-VL-72B sampler warm-up OOM on 0.11.0) whose repositories the
index does not name, a Qwen3-4B RTX 5090 benchmark README (release not given), a Gemma-4 E2B w4a16 T4 article (a
locally patched 0.29.0), a zh-TW L40S Gemma-4 26B FP8 article (repository not named), llm-d-planner's v0.19.0
FAILED logs (every uncited one dies before loading: hub access, a busy GPU, a Transformers version, TP 5).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from oomkit.engines.vllm import ENGINE
from oomkit.engines.vllm.args import parse_args
from oomkit.engines.vllm.config import resolve as resolve_settings
from oomkit.engines.vllm.profile import B12X_STATIC_CUTOVER, B12X_TILE, b12x_workspace_bytes
from oomkit.request import resolve_model
from oomkit.units import GiB, MiB
from tests.startup_heldout import died, first, fixture_loader, gpus
from tests.sweep_harness import offline, run_cli  # noqa: F401  (offline: autouse, no hub)

HERE = Path(__file__).parent / "fixtures" / "engine_logs" / "vllm" / "heldout16"
fixture = fixture_loader(HERE)
WEIGHTS_LIMIT = 0.03  # of the printed load
KV_LIMIT = 0.03  # of the GPU's memory
TOKENS_LIMIT = 0.03

SPARK = "mistral-7b-instruct-v0.2-gptq-dgx-spark-v0.11.0-nv25.11-armlp"
GRANITE = "granite-4.0-micro-fp8-l40s-v0.11.0-llm-class-131072-ibm-codeengine"
MARLIN = "qwen3.6-35b-a3b-nvfp4-rtx-pro-6000-v0.25.1-fp8kv-180224-marlin-issue49476"
B12X = "qwen3.6-35b-a3b-nvfp4-rtx-pro-6000-v0.25.1-fp8kv-180224-flashinfer-b12x-issue49476"
ALL = [SPARK, GRANITE, MARLIN, B12X]
WITH_LOAD = [SPARK, GRANITE]
# stem -> (the checkpoint, the GPU as the catalog names it)
RUNS = {SPARK: ("TheBloke/Mistral-7B-Instruct-v0.2-GPTQ", "DGX Spark"),
        GRANITE: ("ibm-granite/granite-4.0-micro", "L40S"),
        MARLIN: ("nvidia/Qwen3.6-35B-A3B-NVFP4", "RTX PRO 6000"),
        B12X: ("nvidia/Qwen3.6-35B-A3B-NVFP4", "RTX PRO 6000")}


def settings(stem: str, **changes):
    """The log's command as oomkit reads it, at the log's release (the Python LLM class where the source runs it),
    with the FlashInfer sampler where the log prints it."""
    fx = fixture(stem)
    _, _, s = parse_args(fx["argv"])
    s = replace(s, engine_version=fx["engine_version"], usage_context=fx.get("usage_context", "serve"))
    if "Using FlashInfer for top-p & top-k sampling" in fx["quoted"]:
        s = replace(s, use_flashinfer_sampler=True)
    return replace(s, **changes)


def estimate(stem: str, gpu: str | None = None, **changes):
    model, name = RUNS[stem]
    return ENGINE.estimate(resolve_model(ENGINE, model), gpus(gpu or name, 1), settings(stem, **changes))


@pytest.mark.parametrize("stem", ALL)
def test_command_reads_as_the_log(stem):
    fx = fixture(stem)
    _, _, s = parse_args(fx["argv"])
    for key, value in fx["settings"].items():
        assert getattr(s, key) == value, key


@pytest.mark.parametrize("stem", WITH_LOAD)
def test_weights(stem):
    est = estimate(stem)
    printed = fixture(stem)["printed"]["model_loading_gib"] * GiB
    err = (first(est.engine_view, "model_loading_bytes") - printed) / printed
    assert abs(err) < WEIGHTS_LIMIT, f"{err:+.2%}"  # Spark -0.16 %, Granite -0.01 %


@pytest.mark.parametrize("stem", ALL)
def test_available_kv(stem):
    est = estimate(stem)
    printed = fixture(stem)["printed"]["available_kv_cache_gib"] * GiB
    err = (first(est.engine_view, "available_kv_cache_bytes") - printed) / est.devices[0].memory_bytes
    assert abs(err) < KV_LIMIT, f"available KV {err:+.2%} of the GPU"  # -1.64, +0.25, +0.05, +0.03 %


@pytest.mark.parametrize("stem", ALL)
def test_kv_tokens_and_concurrency(stem):
    v = estimate(stem).engine_view
    p = fixture(stem)["printed"]
    assert abs(v["kv_cache_tokens"] / p["kv_cache_tokens"] - 1) < TOKENS_LIMIT, v["kv_cache_tokens"]
    assert abs(v["max_concurrency"] / p["max_concurrency"] - 1) < TOKENS_LIMIT, v["max_concurrency"]
    assert v["max_model_len"] == p["max_model_len"]


def test_spark_blocks():
    v = estimate(SPARK).engine_view
    printed = fixture(SPARK)["printed"]["num_gpu_blocks"]
    assert abs(v["num_gpu_blocks"] / printed - 1) < TOKENS_LIMIT, v["num_gpu_blocks"]  # 51,488 for 52,510


@pytest.mark.parametrize("stem", WITH_LOAD)
def test_graph_capture(stem):
    """The shapes captured (67 PIECEWISE + 35 FULL in both logs) and what the capture took, within the limit."""
    est = estimate(stem)
    v = est.engine_view
    p = fixture(stem)["printed"]
    assert (v["cudagraph_piecewise_graphs"], v["cudagraph_full_graphs"]) == (p["cudagraph_piecewise"],
                                                                             p["cudagraph_full"])
    err = (v["cudagraph_actual_bytes"] - p["cudagraph_gib"] * GiB) / est.devices[0].memory_bytes
    assert abs(err) < KV_LIMIT, f"capture {err:+.2%} of the GPU"  # Spark +0.57 % (its -0.03 GiB), Granite +0.44 %


@pytest.mark.parametrize("stem", ALL)
def test_starts(stem):
    est = estimate(stem)
    assert died(est) is None and not est.engine_view.get("error")


def test_b12x_costs_what_the_comment_measured():
    """The two backends differ by the b12x wrappers alone: 11.47 GiB of KV budget printed, 11.49 here."""
    gap = (first(estimate(MARLIN).engine_view, "available_kv_cache_bytes")
           - first(estimate(B12X).engine_view, "available_kv_cache_bytes"))
    printed = (fixture(MARLIN)["printed"]["available_kv_cache_gib"]
               - fixture(B12X)["printed"]["available_kv_cache_gib"]) * GiB
    assert abs(gap - printed) < 0.01 * gpus("RTX PRO 6000", 1)[0].memory_bytes, gap / GiB


def test_b12x_workspaces_stay_after_the_kv_cache():
    """The wrappers keep their buffers after the profile run: a start-up phase of their own, not freed with the
    profile's peak, so what the KV cache leaves is 12.57 GiB smaller than on Marlin's run (which frees its one-layer
    workspace), not only the budget."""
    phases = {p["phase"]: p for p in estimate(B12X).engine_view["phases"]}
    kept = phases["FlashInfer b12x MoE workspaces (built in the profile run, kept)"]
    assert kept["in_budget"] and not kept["transient"]
    assert abs(kept["bytes"] - 12.57 * GiB) < 0.01 * GiB
    assert "FlashInfer b12x MoE workspaces (built in the profile run, kept)" not in {
        p["phase"] for p in estimate(MARLIN).engine_view["phases"]}


def test_b12x_workspace_by_hand():
    """One layer's wrappers for Qwen3.6-35B-A3B (256 experts, top 8, hidden 2,048) at 8,192 batched tokens: 65,536
    routed rows, past the 640-row cutover, so a static workspace of 640 rows a expert and a dynamic one of 512 + 255
    tiles of 128 rows, 1,024 + 128 + 4 + 4 bytes a row (packed FP4, FP8 block scales, token_map, token_weights),
    and the 32 MiB bf16 output; 40 such layers."""
    spec = resolve_model(ENGINE, "nvidia/Qwen3.6-35B-A3B-NVFP4")
    s = settings(B12X)
    r = resolve_settings(spec, gpus("RTX PRO 6000", 1), s)
    per_row = 1024 + 128 + 8
    layer = 256 * B12X_STATIC_CUTOVER * per_row + (512 + 255) * B12X_TILE * per_row + 8192 * 2048 * 2
    assert b12x_workspace_bytes(spec, s, r) == 40 * layer
    assert 321 * MiB < layer < 322 * MiB  # 321.9 MiB


@pytest.mark.parametrize("changes,gpu", [
    ({"engine_version": "0.24.0"}, None),  # the functional path: one shared workspace cache (not modelled)
    ({"engine_version": "0.29.0"}, None),  # FlashInfer 0.6.18's per-shape tile height (not modelled)
    ({"moe_backend": None}, None),  # vLLM never picks b12x itself (oracle/nvfp4.py)
    ({"moe_backend": "marlin"}, None),
    ({}, "H100"),  # SM120 family only (_supports_current_device)
])
def test_b12x_only_where_vllm_builds_the_wrappers(changes, gpu):
    spec = resolve_model(ENGINE, "nvidia/Qwen3.6-35B-A3B-NVFP4")
    s = settings(B12X, **changes)
    r = resolve_settings(spec, gpus(gpu or "RTX PRO 6000", 1), s)
    assert b12x_workspace_bytes(spec, s, r) == 0


def test_the_command_line_reads_the_moe_backend():
    """`oomkit estimate -- vllm serve ... --moe-backend=flashinfer_b12x` prints the b12x budget (the flag was read
    into nothing before: 64.41 GiB, the Marlin figure)."""
    fx = fixture(B12X)
    rc, out, err = run_cli("estimate", "--gpu", "RTX PRO 6000", "--engine-version", "0.25.1", "--", "vllm",
                           *fx["argv"])
    assert rc == 0, err
    assert "Available KV cache memory: 52.92 GiB" in out
    assert "GPU KV cache size: 5,360,145 tokens" in out
