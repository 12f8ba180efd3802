"""Start-up held out, eleventh set (tests/fixtures/engine_logs/startup_heldout11/): vLLM start-up threads no earlier
set cites (each number grepped in tests/ first), each fixture with its URL, the lines kept verbatim, the release and
the command the thread gives. The printed figures were recorded before oomkit was run on them; none was used to fit a
constant. Limits as sets 7-10: weights per rank 3 % of the printed load, the KV budget 3 % of the GPU's memory, the
verdict equal to the thread's. "before" is oomkit at 6472be8b, before this file; "after" is with the 0.18 era of
vLLM's CUDA graph estimate (settings.py ERAS cudagraph_estimate) and Gemma 3's rotary caches (weights.py
_rope_cache_bytes), both below. PR #21489 was added after the first rule; its 0.51 GiB weights gap is what the
second was looked for from (the sizes come from the source, no constant fitted).

| thread | release | GPUs, model, flags | figure | printed | oomkit before | oomkit after |
|---|---|---|---|---|---|---|
| vllm PR #12126 | 0.7.0 dev, V0 | 1 x H100 80GB, Llama-3.2-11B-Vision, dummy load, 65,536, 128 seqs, eager | weights | 19.86 GiB | 19.906 (+0.2 %) | = |
| | | | activation peak | 36.63 GiB | 6.75 | = (strict xfail) |
| | | | available KV | 14.65 GiB (6001 blocks) | 44.58 (18,261 blocks; +37.8 % of the GPU) | = (strict xfail) |
| | | | verdict | starts | starts | = |
| vllm#16712 | master of 2025-04-16 (0.8.4), V1 | 2 x H100 NVL, TP2, Llama-4-Scout-17B-16E bf16, 0.99, 1,000, fp8 KV | verdict | out of memory, 90.63 GiB allocated + 1.25 asked of 93.02 | dies loading the weights (103.78 GiB a rank) | = |
| vllm#9163 | 0.6.2, V0 | 1 GPU (24-80 GB, not named), Llama-3.2-11B-Vision, LLM() defaults | verdict | dies in the vision tower (profile run) | dies in the profile run (117.18 GiB peak) on every card of 24-80 GB | = |
| vllm PR #37296 | 0.18 dev (main of 2026-03-17), V1 | 2 x 48 GB (44.47 GiB from the notice; L40S), TP2, Nemotron-3-Nano-30B-A3B NVFP4 on Marlin, ESTIMATE_CUDAGRAPHS=1 | CUDA graph estimate | 4.38 GiB (TP0) | not printed (0.19+ only) | 1.11 (strict xfail) |
| | | | available KV | 25.46 GiB | 30.13 (+10.5 % of the GPU: the estimate not subtracted) | 29.02 (+8.0 %, strict xfail) |
| | | | verdict | starts memory-wise | starts | = |
| vllm PR #21489 | 0.10.0, V1 | 1 x B200 (178.36 GiB), gemma-3-4b-it, vllm bench latency (LLM defaults) | weights | 8.58 GiB | 8.072 (-5.9 %) | 8.572 (-0.1 %) |
| | | | activation peak | 9.96 GiB | 9.946 | = |
| | | | CUDA graphs | 0.65 GiB | 0.68 | = |
| | | | available KV (160.53 - 8.58 - 9.96 - 0.07) | 141.92 GiB | 142.26 (+0.2 % of the GPU) | 141.76 (-0.1 %) |

Rule (settings.py ERAS cudagraph_estimate, profile.py cudagraphs_in_budget, layout.py's "Estimated CUDA graph memory"
line): vLLM 0.18.0's v1/worker/gpu_model_runner.py already has profile_cudagraph_memory, and its gpu_worker.py
determine_available_memory subtracts the estimate from the KV budget when VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1
(envs.py default "0"; the notice "This will become the default in v0.19"); 0.17.0's envs.py, gpu_worker.py and
gpu_model_runner.py have none of it. oomkit took 0.19 as the first release with the estimate, so a 0.18 run with the
variable set kept the estimate in the budget. Read in the 0.17.0 and 0.18.0 wheels; no constant.

Rule (weights.py _rope_cache_bytes, LOCAL_ROPE_ARCHS): the rotary cos/sin cache of a linear-scaled rope has
max_position_embeddings x factor rows (rotary_embedding.py LinearScalingRotaryEmbedding._compute_cos_sin_cache,
"max_len = self.max_position_embeddings * scaling_factor", 0.10.0; linear_scaling_rope.py the same in 0.18.0), and
Gemma 3's sliding layers build a rope of their own (models/gemma3.py Gemma3Attention: rope_local_base_freq and
rope_scaling {"rope_type": "default"} when is_sliding, 0.10.0 and 0.18.0), another get_rope key and cache. For
gemma-3-4b-it: 131,072 x 8 x 256 and 131,072 x 256 bf16 values, 576 MiB where one 64 MiB cache was counted. The
constructed fit scenario of tests/test_vllm_async_scheduling.py (Gemma 3 12B, RTX 5090, 0.28.0, 0.95) keeps its
point at --max-model-len 69632 instead of 73728: its budget is 0.5 GiB smaller by the same caches.

Not fixed (strict xfails below, figures in their reasons):
- PR #12126's activation peak, 36.63 GiB for 128 dummy sequences of one 4-tile image each. The profile-run rule of
  set 10 (profile.py mllama_v0_profile) stops at 0.6.3; models/mllama.py's vision forward in the 0.7.0 wheel
  (MllamaVisionModel.forward, _parse_and_validate_image_input's float32 out_images, the aspect-ratio mask) reads as
  it did in 0.6.3, and that rule over 128 images gives 58.6 GiB (oomkit with 0.6.3 named: pixels 3.59, patch
  embedding 1.95, mask 9.86, 12 vision hidden states of 1.96 and the layer's working set), 22 GiB above the printed
  peak, so extending it would refuse a run that started. What 0.6.4 -> 0.7.0 changed below that forward (PyTorch
  2.5's SDPA with a float mask, the allocator's reuse across the 32 layers) was not found in the time given.
- PR #37296's CUDA graph estimate: vLLM printed 4.38 GiB (TP0) and 4.30 (TP1) for the hybrid Mamba-2 / MoE model on
  a 48 GB pre-Blackwell card, oomkit's phases.py cudagraph_estimate_bytes gives 1.11; with vLLM's own estimate the
  budget here would be 25.75 GiB (+0.7 % of the GPU), so the estimate is the whole gap. Read in the 0.18.0 sdist
  (v1/worker/gpu_model_runner.py profile_cudagraph_memory, _warmup_and_capture, _dummy_run;
  v1/cudagraph_dispatcher.py get_capture_descs): two samples per mode, PIECEWISE first, then FULL, each a
  torch.cuda.mem_get_info() difference around the size's warm-ups and capture, the total max(first samples) + per
  mode max(second, 1 MiB) x (graphs - 1), the shape phases.py already follows. The log's "Registering 212 cuda
  graph addresses" is 4 captures x 53 all-reduces (52 layers and the embedding), so the four samples are the ones
  oomkit counts (PIECEWISE 51 sizes to 512, FULL 35 to 256). Not the cause: the minimal KV cache (512 blocks) and
  the Mamba builders' decode buffers (mamba_attn.py BaseMambaAttentionMetadataBuilder.__init__) are allocated
  before the first reading; the MoE workspace (v1/worker/workspace.py WorkspaceManager) is grown by the profile run's
  max_num_batched_tokens forward; FlashInfer's workspace (394 MiB) is not this run's backend. Which sample holds the other 3.3 GiB (a
  first FULL warm-up that runs the Mamba decode and Marlin FP4 kernels for the first time, or about 50 MiB a
  further graph) needs vLLM's debug line "Estimated FULL CUDA graph memory: first-capture + (n-1) x per-graph", which
  the log does not show.

Searched and not held (corpus "issues"): already cited in tests/ (vllm#57475, #11251, #15598, #14728, #48601,
#57926, #30637, #29049, #14286, #36861, #23066, #12529, #1120 (EuroEval), #16570, #23278, #33155, #12604, #15676,
#13124, #31273, #17431, #18124, #16128, #15105, #26278, #10569, #10034, #9445, #9630, #8879; llm-d#787); vllm#14184
(Qwen2-VL-7B INT8 on V0: no memory line or GPU in the excerpts), vllm#16662 and #20581 (Llama 4 OOM: no load or
budget line in the excerpts), vllm PR #20495 (Gemma3n TP4: a shape error, the model variant and GPU not named),
vllm#26884 (Qwen3-VL-8B on an A800: no figures in the excerpt), vllm#28292 (Llama-3.2-11B-Vision: release not
named), gpustack#364 (InternVL2-4B on 0.6.1.dev: GPU not named), QwenLM/Qwen3-VL#1493 (Transformers backend),
chatdoc-com/OCRFlux#64 (the excerpt stops before the figures). Fewer than the six to eight logs asked for were found
with version, model, GPU and figures all given.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oomkit.engines.vllm import CUDA_DRIVER_RESERVED, ENGINE, VllmSettings
from oomkit.model.resolve import resolve
from oomkit.units import GiB
from tests.startup_heldout import died, first, fixture_loader, gpus
from tests.test_vllm_startup import spec_of

HERE = Path(__file__).parent / "fixtures" / "engine_logs" / "startup_heldout11"
fixture = fixture_loader(HERE)
WEIGHTS_LIMIT = 0.03  # of the printed load
KV_LIMIT = 0.03  # of the GPU's memory

MLLAMA_H100 = "llama-3.2-11b-vision-h100-v0.7.0dev-dummy-65536-seqs128-eager-pr12126"
SCOUT_NVL = "llama-4-scout-2xh100nvl-tp2-util099-fp8kv-maxlen1000-weights-oom-issue16712"
MLLAMA_LLM = "llama-3.2-11b-vision-llm-defaults-v0.6.2-profile-oom-issue9163"
NEMOTRON_NVFP4 = "nemotron-3-nano-30b-a3b-nvfp4-2x48gb-tp2-marlin-0.18dev-cudagraph-estimate-pr37296"
GEMMA3_B200 = "gemma-3-4b-it-b200-bench-latency-v0.10-pr21489"
NEMOTRON_NAME = "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-NVFP4"  # the hub checkpoint (hf_quant_config read by resolve)

# stem -> (catalog model, GPU, count, the release oomkit reads)
RUNS = {
    MLLAMA_H100: ("meta-llama/Llama-3.2-11B-Vision", "H100 80GB", 1, "0.7.0"),
    SCOUT_NVL: ("meta-llama/Llama-4-Scout-17B-16E-Instruct", "H100 NVL", 2, "0.8.4"),
    MLLAMA_LLM: ("meta-llama/Llama-3.2-11B-Vision-Instruct", "A10G", 1, "0.6.2"),
    # the GPU from the notice: 4.38 GiB / (0.9000 - 0.8015) = 44.47 GiB, a 48 GB card; the L40S's 44.53 GiB
    NEMOTRON_NVFP4: (NEMOTRON_NAME, "L40S", 2, "0.18.0"),
    GEMMA3_B200: ("google/gemma-3-4b-it", "B200", 1, "0.10.0"),
}


def estimate(stem: str, gpu: str | None = None, **extra):
    model, card, n, version = RUNS[stem]
    spec = resolve(model, tag_formats=False) if model == NEMOTRON_NAME else spec_of(model)
    # the GPU's total as the log prints it (torch's total_memory) plus the driver's reserve, where it is printed
    shown = fixture(stem)["printed"].get("total_gpu_memory_gib")
    total = int(shown * GiB) + CUDA_DRIVER_RESERVED if shown and gpu is None else None
    return ENGINE.estimate(spec, gpus(gpu or card, n, total),
                           VllmSettings(engine_version=version, **{**fixture(stem)["settings"], **extra}))


def starts(est) -> bool:
    return died(est) is None and not est.engine_view.get("error")


def printed(stem: str, key: str) -> float:
    return fixture(stem)["printed"][key] * GiB


# ---------------------------------------------------------------------------------------------------------------
# weights


def test_mllama_weights():
    # vllm PR #12126: "model weights take 19.86GiB"
    got = first(estimate(MLLAMA_H100).engine_view, "model_loading_bytes")
    want = printed(MLLAMA_H100, "model_weights_gib")
    assert abs(got - want) / want < WEIGHTS_LIMIT, f"{got / GiB:.3f} vs {want / GiB:.2f} GiB"


def test_scout_bf16_tp2_dies_loading_the_weights():
    """vllm#16712: 90.63 GiB allocated when 1.25 GiB more was asked of a 93.02 GiB H100 NVL; the bf16 checkpoint over
    two ranks cannot be held, so the run dies in the load whatever else it was doing."""
    est = estimate(SCOUT_NVL)
    assert not starts(est)
    assert "loading the model" in est.engine_view.get("error", ""), est.engine_view.get("error")
    fx = fixture(SCOUT_NVL)["printed"]
    held = (fx["oom_allocated_by_pytorch_gib"] + fx["oom_tried_to_allocate_gib"]) * GiB
    assert first(est.engine_view, "model_loading_bytes") > held


def test_gemma3_weights():
    """vllm PR #21489: "8.58 GiB for weight" for gemma-3-4b-it, whose decoder and tower are 8.01 GiB of bf16: the
    rest is the two rotary caches (weights.py _rope_cache_bytes): the full layers' linear-scaled rope of 131,072 x 8
    rows x 256 and the sliding layers' own rope of 131,072 rows, 576 MiB in bf16."""
    got = first(estimate(GEMMA3_B200).engine_view, "model_loading_bytes")
    want = printed(GEMMA3_B200, "model_weights_gib")
    assert abs(got - want) / want < WEIGHTS_LIMIT, f"{got / GiB:.3f} vs {want / GiB:.2f} GiB"


def test_gemma3_budget_and_phases():
    """The same line: peak activation 9.96 GiB (the encoder cache's 64 dummy images and the decoder's pass), 0.65 GiB
    of CUDA graphs, and a KV budget of 160.53 - 8.58 - 9.96 - 0.07 = 141.92 GiB (0.10 takes no graph estimate)."""
    est = estimate(GEMMA3_B200)
    assert starts(est), est.engine_view.get("error")
    view, fx = est.engine_view, fixture(GEMMA3_B200)["printed"]
    gpu = est.devices[0].memory_bytes
    budget = (fx["requested_gib"] - fx["model_weights_gib"] - fx["activation_peak_gib"] - fx["non_torch_gib"]) * GiB
    for got, want in ((first(view, "available_kv_cache_bytes"), budget),
                      (first(view, "activation_peak_bytes"), fx["activation_peak_gib"] * GiB),
                      (view["cudagraph_actual_bytes"], fx["cudagraph_gib"] * GiB)):
        assert abs(got - want) / gpu < KV_LIMIT, f"{got / GiB:.2f} vs {want / GiB:.2f} GiB"


# ---------------------------------------------------------------------------------------------------------------
# Llama 3.2 Vision on V0


@pytest.mark.parametrize("gpu", ["A10G", "L4", "L40S", "A100 80GB", "H100 80GB"])
def test_llm_defaults_die_in_the_profile_run(gpu):
    # vllm#9163 (0.6.2): the out-of-memory is raised in MllamaVisionModel.forward; the card is not named, so every one
    # of 24-80 GB is tried (profile.py mllama_v0_profile, set 10's rule, held out here)
    assert fixture(MLLAMA_LLM)["printed"]["verdict"].startswith("dies before the KV cache (profile run")
    assert (died(estimate(MLLAMA_LLM, gpu)) or "").startswith("dies before the KV cache (profile run"), gpu


def test_mllama_128_seqs_starts():
    est = estimate(MLLAMA_H100)
    assert starts(est), est.engine_view.get("error")


@pytest.mark.xfail(strict=True, reason=(
    "vllm PR #12126 (0.7.0 dev, H100 80GB, 128 sequences, 65,536, eager): printed available KV 14.65 GiB (6001 "
    "blocks) after a 36.63 GiB activation peak; oomkit 44.58 GiB (18,261 blocks, +37.8 % of the GPU) with a 6.75 GiB "
    "peak: mllama_v0_profile stops at 0.6.3, and its 0.6.3 reading over 128 images (58.6 GiB) would refuse the "
    "run; see the module docstring"))
def test_mllama_128_seqs_budget():
    est = estimate(MLLAMA_H100)
    got = first(est.engine_view, "available_kv_cache_bytes")
    want = printed(MLLAMA_H100, "available_kv_cache_gib")
    err = (got - want) / est.devices[0].memory_bytes
    assert abs(err) < KV_LIMIT, f"{got / GiB:.2f} vs {want / GiB:.2f} GiB ({err:+.2%} of the GPU)"


# ---------------------------------------------------------------------------------------------------------------
# Nemotron-3-Nano NVFP4 on 0.18 with VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1


def _log_lines(est, word: str) -> list[str]:
    return [line for line in est.engine_view["log"].splitlines() if word in line]


def test_018_subtracts_the_estimate_when_asked():
    """vllm PR #37296 printed "Estimated CUDA graph memory: 4.38 GiB total" and, with the variable set, a budget that
    is the utilization's less that estimate (0.9000 -> 0.8015 equivalent): 0.18.0's gpu_worker.py subtracts it."""
    on = estimate(NEMOTRON_NVFP4)
    off = estimate(NEMOTRON_NVFP4, estimate_cudagraphs=False)
    assert _log_lines(on, "Estimated CUDA graph memory") and _log_lines(off, "Estimated CUDA graph memory")
    graphs = first(on.engine_view, "cudagraph_bytes")
    diff = first(off.engine_view, "available_kv_cache_bytes") - first(on.engine_view, "available_kv_cache_bytes")
    assert abs(diff - graphs) < 2**20, (diff, graphs)
    # 0.17.0 has no profile_cudagraph_memory: no estimate printed, nothing subtracted
    old = ENGINE.estimate(resolve(NEMOTRON_NAME, tag_formats=False), gpus("L40S", 2),
                          VllmSettings(engine_version="0.17.0", **fixture(NEMOTRON_NVFP4)["settings"]))
    assert not _log_lines(old, "Estimated CUDA graph memory")


def test_nemotron_nvfp4_starts():
    est = estimate(NEMOTRON_NVFP4)
    assert starts(est), est.engine_view.get("error")


@pytest.mark.xfail(strict=True, reason=(
    "vllm PR #37296 (0.18 dev, 2 x 48 GB, TP2, Nemotron-3-Nano-30B-A3B NVFP4 on Marlin): vLLM's CUDA graph estimate "
    "4.38 GiB (TP0), oomkit's 1.11 (the 0.18.0 profile_cudagraph_memory shape, 2 samples x 2 modes as the log's 212 "
    "graph addresses confirm; which sample holds the other 3.3 GiB is not in the log); available KV printed 25.46 GiB, "
    "oomkit 29.02 (+8.0 % of the GPU; 25.75, +0.7 %, with vLLM's estimate in its place)"))
def test_nemotron_nvfp4_budget():
    est = estimate(NEMOTRON_NVFP4)
    got = first(est.engine_view, "available_kv_cache_bytes")
    want = printed(NEMOTRON_NVFP4, "available_kv_cache_gib_tp0")
    err = (got - want) / est.devices[0].memory_bytes
    assert abs(err) < KV_LIMIT, f"{got / GiB:.2f} vs {want / GiB:.2f} GiB ({err:+.2%} of the GPU)"


# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", sorted(HERE.glob("*.json")), ids=lambda p: p.stem)
def test_fixtures_are_cited(path):
    fx = json.loads(path.read_text(encoding="utf-8"))
    assert fx["source"].startswith("https://"), path.name
    assert fx["quoted"] and fx["command"] and fx["gpus"] and fx["engine_version"], path.name
    assert path.stem in RUNS, path.name
