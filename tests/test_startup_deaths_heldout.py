"""Runs that allocate their KV cache and then die (or barely live): held-out public logs, second set
(tests/fixtures/engine_logs/vllm/deaths/heldout/, eight logs, each with its URL, the lines kept, the version, the GPU and the
command). None of these figures was used to fit a constant; each is held against oomkit's start-up verdict
(engine_view["failed_phase"]: the phase that dies after the KV cache, or none), the figures the log prints (weights,
KV budget, tokens, the sampler warm-up's rows), and the fix oomkit proposes (a flag the engine's own error names).

| log | version | GPUs | the log | oomkit before | after |
|---|---|---|---|---|---|
| vllm#15105 QwQ-32B-AWQ TP2, 0.95, --disable-custom-all-reduce | 0.8.0 | 2x 24 GB | dies in the sampler warm-up, 1,024 rows | starts; 256 warm-up rows | dies in the sampler warm-up (5.51 GiB needed, 1.83 left after 4.87 GiB of capture, 4.14 of it NCCL's: the log's OOM line allows at most about 1.1) |
| vllm#24436 Qwen3-4B-2507-FP8 | 0.10.1.1 | 1x 24 GB | dies in the sampler warm-up, 256 rows | starts (1.39 GiB left) | same: strict xfail |
| | | | weights + KV cache from the OOM line (20.32 GiB allocated less the 66 MiB pool and the sampler's 0.36 GiB before the sort's indices): 19.89 GiB | not held | 19.65 (-1.0 % of the GPU) |
| vllm#51590 gpt-oss-120b TP8, 0.95 | 0.28.0 | 8x RTX PRO 4500 | dies after the capture | dies in the sampler warm-up | same |
| vllm#48601 Qwen3.6-27B-FP8 TP4, runner V2 | main 2026-07-14 | 4x H100 | dies in the kernel warm-up | starts (1.31 GiB left) | dies in the sampler warm-up (3.32 GiB needed, 3.23 left) |
| vllm#7593 Gemma 2 9B TP8 | 0.5.4 | 8x L4 | dies capturing | starts (2.26 GiB left, 1.65 needed) | same: strict xfail |
| vllm#14452 a Qwen2.5-32B, TP8 | 0.8.0 | 8x RTX 5080 | dies in the sampler warm-up, 1,024 rows | dies in the capture (4.41 GiB of NCCL graphs); 256 rows | refused at the KV cache (0.02 GiB; the 1,024-row sort profile 5.52 GiB, which the log's own OOM bounds from below): strict xfail |
| vllm#15617 R1-Distill-Llama-70B TP8, 0.95, 116,160 | 0.8.2 | 8x RTX 4090 | refused at the KV cache (3.48 GiB) | refused (3.98 GiB) | refused (4.32 GiB: the docker image's FlashInfer sampler at the fitted 4 B, +3.5 % of the GPU); 3.34 GiB (-0.6 %) at the 12 B read in the source |
| vllm#57926 Qwen2.5-0.5B, 0.98, runner V2 | main 54020c3c3 | 1x L4 | 1,733,440 KV tokens (verdict not stated) | 1,718,384 (-0.87 %) | same |

The rules this set led to, read in the wheels:
- engines/vllm/config.py _batch_defaults: V1 up to 0.8.3 takes 1,024 sequences on every GPU ("256 if not
  envs.VLLM_USE_V1 else 1024" in 0.7.3's EngineArgs.__post_init__; "default_max_num_seqs = 1024" in 0.8.0-0.8.3's
  _set_default_args_v1), 0.8.4 by GPU name (1,024 on H100/H200, else 256), where oomkit took 256 below 0.8.5. The
  0.8.0 log's failing allocation is the proof: 1.74 GiB = 1,024 rows x 152,064 logits x 12 B (the PyTorch sort's
  float32 values and int64 indices).
- engines/vllm/profile.py v2_sampler_bytes / v2_flashinfer_sampler: from 0.23 model runner V2 samples top-k / top-p
  rows through FlashInfer (VLLM_USE_FLASHINFER_SAMPLER on by default), whose top_k_top_p_sampling_from_logits holds
  the masked logits and the probabilities beside the float32 copy (8 B more per element); the V2 warm-up needs that
  allocated peak with no V1 allocator factor (phases.py SAMPLER_WARMUP_FACTOR_V2). vllm#48601 dies as logged; the
  RTX 4090 0.27.1 run beside a second engine (tests/test_vllm_more_logs.py) still starts.
- engines/vllm/profile.py SAMPLER_BYTES_FLASHINFER: the 12 B the source holds, no longer the fitted 4 B (0.8.2's
  forward_cuda: the float32 copy, softmax's probabilities and FlashInfer 0.2.1.post2's top_k_renorm_probs output).
  vllm#15617 ran the docker image's FlashInfer sampler: 3.34 GiB for the printed 3.48 (-0.6 % of the GPU; +3.5 %
  before).
- engines/vllm/phases.py nccl_in_graphs: --disable-custom-all-reduce (settings disable_custom_all_reduce) puts the
  TP all-reduces of the captured graphs in NCCL at any TP size, as more than two PCIe GPUs do (0.8.0
  init_worker_distributed_environment: set_custom_all_reduce(not parallel_config.disable_custom_all_reduce);
  CudaCommunicator.all_reduce then takes pynccl). vllm#15105 ran with the flag and now dies in the warm-up as logged,
  with too much margin: its 67 graphs x 129 all-reduces at NCCL_GRAPH_PER_ALLREDUCE (0.49 MiB, fitted on vllm#7553's
  0.5.4 with a CUDA 12.2 driver) make 4.14 GiB, where the OOM line (22.97 GiB in use, 20.21 allocated, 0.19 cached)
  leaves 2.57 GiB outside PyTorch in all, about 1.1 for NCCL in the graphs once oomkit's 0.89 GiB non-torch memory
  and the capture's pool are taken off (0.13 MiB per all-reduce): 3.95 GiB short here, 1.15 in the log.

What remains (strict xfails, with the measured gap):
- the death after the KV cache at the default 0.9 on a 24 GB card (vllm#24436) leaves 3.14 GiB of non-PyTorch memory
  in the process at the OOM (23.53 GiB in use, 20.32 allocated by PyTorch, 0.07 cached), where oomkit counts 1.18 GiB
  (context, non-torch, the graphs less their pool); its budget is held (weights + KV from the OOM line, -1.0 % of the
  GPU) and the warm-up repeats the profile's own sampler pass, so the gap is outside the budget. The same gap shows in
  vllm#51590 (1.37 GiB over the budget, 62 MiB of it the graph pool). No source rule for the rest was found; it is
  not fitted.
- V1 0.8.x on its 1,024 default rows. vllm#14452 is refused at the KV cache where the log allocated one; the sort's
  38 B an element (profile.py SAMPLER_BYTES_SORT, read from the source) is bounded from below by the log's own OOM,
  so the gap is its unknown command (max_model_len, utilization) or the non-PyTorch memory.
- Gemma 2 9B TP8 on V0 0.5.4 (vllm#7593) captures more than the V0 rule gives (2.9+ GiB against 1.65).
- No SGLang log with the figures a held-out check needs (launch line, GPU, the failing phase) was found in the stored
  threads this round (sglang#1479, #1751, #4489, #5285 and #7227 lack the error or the command); SGLang's start-up
  deaths stay covered by tests/test_sglang_more_logs.py.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from oomkit.engines.vllm import CUDA_DRIVER_RESERVED, ENGINE, VllmSettings
from oomkit.hardware.catalog import lookup as gpu_lookup
from oomkit.hardware.catalog import with_facts
from oomkit.memory import Device
from oomkit.units import GiB, MiB
from tests.test_vllm_startup import spec_of

HERE = Path(__file__).parent / "fixtures" / "engine_logs" / "vllm" / "deaths" / "heldout"
LIMIT = 0.03  # of the GPU's memory, as in tests/test_startup_deaths.py

QWQ_AWQ = "qwq-32b-awq-2x24gb-tp2-v0.8.0-util095-sampler-oom-issue15105"
QWEN3_4B = "qwen3-4b-instruct-2507-fp8-24gb-v0.10.1.1-sampler-oom-issue24436"
GPT_OSS = "gpt-oss-120b-8xrtxpro4500-tp8-v0.28.0-util095-after-capture-oom-pr51590"
QWEN36 = "qwen3.6-27b-fp8-4xh100-tp4-runner-v2-warmup-oom-pr48601"
GEMMA2 = "gemma-2-9b-8xl4-tp8-v0.5.4-capture-oom-issue7593"
QWEN05 = "qwen2.5-0.5b-l4-util098-runner-v2-starts-pr57926"
QWEN32 = "qwen2.5-32b-arch-8xrtx5080-tp8-v0.8.0-sampler-oom-issue14452"
R1_70B = "deepseek-r1-distill-llama-70b-8x4090-tp8-v0.8.2-util095-kv-refused-issue15617"


def fixture(stem: str) -> dict:
    return json.loads((HERE / f"{stem}.json").read_text(encoding="utf-8"))


# the AWQ checkpoint's quantization_config (Qwen's AWQ releases: 4 bits, group 128, zero point, GEMM kernels)
AWQ = {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True, "version": "gemm"}

# stem -> (spec, GPU name, world size, settings, the log's verdict: "starts" or the phase it dies in)
CASES = {
    QWQ_AWQ: (lambda: spec_of("Qwen/QwQ-32B", AWQ), "24 GB GPU", 2,
              VllmSettings(engine_version="0.8.0", tensor_parallel_size=2, gpu_memory_utilization=0.95,
                           max_model_len=30000, block_size=32, disable_custom_all_reduce=True), "sampler warm-up"),
    QWEN3_4B: (lambda: spec_of("Qwen/Qwen3-4B-FP8"), "24 GB GPU", 1,
               VllmSettings(engine_version="0.10.1.1", max_model_len=32768), "sampler warm-up"),
    GPT_OSS: (lambda: spec_of("openai/gpt-oss-120b"), "NVIDIA RTX PRO 4500 Blackwell Server Edition", 8,
              VllmSettings(engine_version="0.28.0", tensor_parallel_size=8, max_num_seqs=256,
                           gpu_memory_utilization=0.95), "sampler warm-up"),
    # the release before the build (main of 2026-07-14); the FP8 checkpoint's weights as online fp8
    QWEN36: (lambda: spec_of("Qwen/Qwen3.6-27B"), "NVIDIA H100 80GB HBM3", 4,
             VllmSettings(engine_version="0.25.0", tensor_parallel_size=4, quantization="fp8",
                          use_v2_model_runner=True), "sampler warm-up"),
    GEMMA2: (lambda: spec_of("google/gemma-2-9b-it"), "NVIDIA L4", 8,
             VllmSettings(engine_version="0.5.4", tensor_parallel_size=8), "CUDA graph capture"),
    QWEN32: (lambda: spec_of("Qwen/Qwen2.5-32B-Instruct"), "NVIDIA GeForce RTX 5080", 8,
             VllmSettings(engine_version="0.8.0", tensor_parallel_size=8), "sampler warm-up"),
    # run in docker: the vllm/vllm-openai image installs FlashInfer 0.2.1.post2 on x86_64, and 0.8.x's
    # v1/sample/ops/topk_topp_sampler.py TopKTopPSampler samples top-k / top-p through it (forward_cuda) when the
    # installed FlashInfer is older than "0.2.3" and VLLM_USE_FLASHINFER_SAMPLER is unset (as for vllm#17469 in
    # tests/test_vllm_startup.py)
    R1_70B: (lambda: spec_of("deepseek-ai/DeepSeek-R1-Distill-Llama-70B"), "NVIDIA GeForce RTX 4090", 8,
             VllmSettings(engine_version="0.8.2", tensor_parallel_size=8, gpu_memory_utilization=0.95,
                          max_model_len=116160, use_flashinfer_sampler=True), "refused at the KV cache"),
    QWEN05: (lambda: spec_of("Qwen/Qwen2.5-0.5B-Instruct"), "NVIDIA L4", 1,
             VllmSettings(engine_version="0.29.1", max_num_seqs=256, max_model_len=2048,
                          gpu_memory_utilization=0.98, use_v2_model_runner=True), None),
}


def estimate(stem: str):
    make_spec, gpu, world, settings, _ = CASES[stem]
    printed = fixture(stem)["printed"]
    if "total_gpu_memory_bytes" in printed:  # what torch / vLLM print, plus the driver's reserve
        total = printed["total_gpu_memory_bytes"] + CUDA_DRIVER_RESERVED
    else:
        total = gpu_lookup(gpu).memory_bytes
    devices = tuple(with_facts(Device(f"CUDA{i}", gpu, total)) for i in range(world))
    return ENGINE.estimate(make_spec(), devices, settings)


def verdict(est) -> str:
    failed = est.engine_view.get("failed_phase")
    if failed:
        return failed["phase"] if failed["after_kv"] else f"dies before the KV cache ({failed['phase']})"
    if est.engine_view.get("error"):
        if "KV cache is needed" in est.engine_view["error"]:  # kv_cache_utils.py check_enough_kv_cache_memory
            return "refused at the KV cache"
        return "refused: " + est.engine_view["error"][:80]
    return "starts"


def _xfail(reason: str):
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=reason)


@pytest.mark.parametrize("stem", [
    QWQ_AWQ,
    pytest.param(QWEN3_4B, marks=_xfail(
        "starts with 1.39 GiB left after the 256-row warm-up (1.38 GiB needed); the log died with 98 MiB free. Not "
        "the budget (test_qwen3_4b_budget_from_the_oom_line: weights + KV 19.65 GiB against the 19.89 the OOM line "
        "leaves, -1.0 % of the GPU) and not the warm-up's size: 0.10's compile_or_warm_up_model runs the very "
        "_dummy_sampler_run the profile ran (min(max_num_seqs, max_num_batched_tokens) = 256 rows both; the same "
        "top-k / top-p sort), so the budget held its peak and the death is in the 2.37 GiB (0.1 x 23.65) outside it. "
        "There the process held 3.14 GiB outside PyTorch (23.53 in use, 20.32 allocated, 0.07 cached) where oomkit "
        "counts 1.18 (context 0.51, non-torch 0.25, the capture's 0.48 less its 66 MiB pool): 1.96 GiB of "
        "non-PyTorch growth after the profile, not found in the source (read in the 0.9.2 wheel: gpu_worker.py "
        "compile_or_warm_up_model, gpu_model_runner.py profile_run / _dummy_sampler_run, v1/sample/sampler.py). "
        "Ruled out: cuBLAS / cuBLASLt workspaces (ATen CublasHandlePool.cpp allocates them through the caching "
        "allocator: inside the 20.32 GiB), NCCL (a TP1 GroupCoordinator makes no communicator), the graph pool (66 "
        "MiB, inside PyTorch's figure). Left: the CUDA driver's own growth (lazily loaded modules, the executables of "
        "67 x 37 PIECEWISE graphs, local memory kept for kernels with large stacks), which no vLLM source sizes; the "
        "GPU model is not in the kept lines")),
    GPT_OSS,
    QWEN36,
    pytest.param(GEMMA2, marks=_xfail(
        "starts: the V0 capture rule (phases.py CG_GRAPH_BASE, fitted on other models) gives 1.65 GiB with 2.26 GiB "
        "left, where the log died capturing; its budget is 0.65 GiB under oomkit's (22,982 blocks printed, 23,998 "
        "oomkit: +2.9 % of the GPU), so the capture took more than 2.9 GiB. The cause (Gemma 2's attention backend in 0.5.4, NCCL in "
        "the graphs of 8 PCIe L4s) was not isolated")),
    pytest.param(QWEN32, marks=_xfail(
        "refused: -0.03 GiB of budget, no memory for the cache blocks (0.02 GiB, under the 1 GiB the default "
        "32,768 tokens need, before the weights' allocator tails: weights.py segment_tail), where the "
        "log allocated its KV cache and died in the warm-up's sort. The sampler is not the gap: the profile ran the "
        "very _dummy_sampler_run the warm-up died in (0.8.0 profile_run / compile_or_warm_up_model, 1,024 rows "
        "both), and the warm-up failed allocating cub's 12 B buffers (1.74 GiB) with the logits, their float32 copy, "
        "the sorted values and indices and the reverse indices (26 B, 3.77 GiB) allocated, so the profile's peak "
        "was at least the 38 B an element oomkit counts (5.51 GiB). The OOM line (12.19 GiB allocated: 7.64 "
        "weights, 0.08 graph pools, 3.77 sampler) leaves a KV cache of about 0.70 GiB, under the 1 GiB a "
        "32,768-token request needs: the thread's command (max_model_len, utilization) is not known. oomkit also "
        "puts 4.41 GiB of NCCL into the graphs of 8 PCIe GPUs (phases.py nccl_graph_bytes) where the log held "
        "1.97 GiB outside PyTorch in all")),
    R1_70B,
    QWEN05,
])
def test_start_up_verdict(stem):
    expected = CASES[stem][4]
    if expected is None:
        pytest.skip("the thread prints the KV cache size, not whether the run then started")
    est = estimate(stem)
    assert verdict(est) == expected, (stem, verdict(est), est.engine_view.get("error"))


@pytest.mark.parametrize("stem", [GPT_OSS, QWEN36])
def test_the_fix_is_one_the_engine_names(stem):
    # the V1 sampler warm-up's own error (v1/worker/gpu_model_runner.py _dummy_sampler_run): "Please try lowering
    # `max_num_seqs` or `gpu_memory_utilization` when initializing the engine"; V2's warm-up runs
    # min(max_num_seqs, max_num_batched_tokens // 2) requests (gpu/warmup.py), and vllm#48601's fix makes the
    # budget leave room for it, which a lower utilization does by hand
    est = estimate(stem)
    s = CASES[stem][3]
    util_given = s.gpu_memory_utilization or 0.92
    seqs_given = est.engine_view["sampler_warmup_requests"]
    fixes = est.engine_view["fixes"]
    util = [float(f.rsplit(" ", 1)[1]) for f in fixes if "--gpu-memory-utilization" in f]
    seqs = [int(f.rsplit(" ", 1)[1]) for f in fixes if "--max-num-seqs" in f]
    assert util and util[0] < util_given
    assert seqs and seqs[0] < seqs_given
    failed = est.engine_view["failed_phase"]
    assert failed["after_kv"] and failed["short_bytes"] > 0
    # the proposed sequences fit the warm-up into what the graphs left
    assert failed["needed_bytes"] * seqs[0] / seqs_given <= failed["left_bytes"]


def test_v1_before_085_warms_the_sampler_up_on_1024_rows():
    # 0.8.0's _set_default_args_v1: default_max_num_seqs = 1024 on every GPU (max_num_batched_tokens 2048 for
    # `vllm serve` off H100/H200), so the warm-up runs min(1024, 2048) rows; the log's failing allocation is the
    # sort's float32 values and int64 indices of those rows: 1,024 x 152,064 x 12 B = 1.74 GiB
    est = estimate(QWQ_AWQ)
    rows = est.engine_view["sampler_warmup_requests"]
    assert rows == 1024
    vocab = CASES[QWQ_AWQ][0]().n_vocab
    assert f"{rows * vocab * 12 / GiB:.2f}" == f"{fixture(QWQ_AWQ)['printed']['oom_tried_gib']:.2f}"


def test_the_5080_log_warms_up_the_rows_it_prints():
    # "CUDA out of memory occurred when warming up sampler with 1024 dummy requests" (0.8.0, 8 x RTX 5080)
    est = estimate(QWEN32)
    assert est.engine_view["sampler_warmup_requests"] == fixture(QWEN32)["printed"]["sampler_warmup_requests"]
    vocab = CASES[QWEN32][0]().n_vocab
    assert f"{1024 * vocab * 12 / GiB:.2f}" == f"{fixture(QWEN32)['printed']['oom_tried_gib']:.2f}"


def test_v1_from_085_keeps_256_rows_below_70_gib():
    # 0.8.5's _set_default_args_v1: 1,024 only from 70 GiB of device memory (engines/vllm/settings.py batch_by_memory)
    est = estimate(QWEN3_4B)
    rows = est.engine_view["sampler_warmup_requests"]
    assert rows == 256
    # the log's failing allocation: the sort's int64 indices of 256 x 151,936 logits, in 2 MiB blocks
    vocab = CASES[QWEN3_4B][0]().n_vocab
    assert math.ceil(rows * vocab * 8 / (2 * MiB)) * 2 == fixture(QWEN3_4B)["printed"]["oom_tried_mib"]


def test_qwen3_4b_budget_from_the_oom_line():
    # vllm#24436 prints no budget, but its OOM line bounds what the budget gave the weights and the KV cache: of the
    # 20.32 GiB PyTorch had allocated, 66 MiB are the graphs' private pools and the rest beside them are the warm-up
    # sampler's tensors allocated before the failing request, the model-dtype logits, their float32 copy
    # (v1/sample/sampler.py Sampler.forward "logits = logits.to(torch.float32)") and the sort's float32 values,
    # allocated before its int64 indices (the 298 MiB asked for): 256 x 151,936 x (2 + 4 + 4) B. Read in the 0.9.2
    # wheel; the traceback's frames (forward_native, apply_top_k_top_p's logits.sort) are the same in 0.10.1.1.
    # 19.65 GiB here (4.12 of weights, 7,067 blocks of 36 x 64 KiB) against the 19.89 left: -1.0 % of the GPU
    printed = fixture(QWEN3_4B)["printed"]
    est = estimate(QWEN3_4B)
    v = est.engine_view
    sampler = v["sampler_warmup_requests"] * CASES[QWEN3_4B][0]().n_vocab * (2 + 4 + 4)
    logged = printed["pytorch_allocated_gib"] * GiB - printed["private_pools_mib"] * MiB - sampler
    ours = v["model_loading_bytes"]["CUDA0"] + v["num_gpu_blocks"] * v["kv_block_bytes"]
    assert abs(_share(est, ours, logged)) < LIMIT, (ours / GiB, logged / GiB)


def _share(est, got: int, logged: int) -> float:
    return (got - logged) / est.devices[0].memory_bytes


def test_kv_budgets_and_weights_the_logs_print():
    # gpt-oss-120b TP8: "estimated KV cache budget 19.0 GiB"
    est = estimate(GPT_OSS)
    logged = fixture(GPT_OSS)["printed"]["available_kv_cache_bytes"]
    assert abs(_share(est, est.engine_view["available_kv_cache_bytes"]["CUDA0"], logged)) < LIMIT
    # Qwen3.6-27B TP4: "Current kv cache memory in use is 63.25 GiB", "7.39 GiB for weight"
    est = estimate(QWEN36)
    printed = fixture(QWEN36)["printed"]
    assert abs(_share(est, est.engine_view["available_kv_cache_bytes"]["CUDA0"],
                      printed["available_kv_cache_bytes"])) < LIMIT
    weights = est.engine_view["model_loading_bytes"]["CUDA0"]
    assert abs(weights - printed["weights_gib"] * GiB) / (printed["weights_gib"] * GiB) < LIMIT
    # Gemma 2 9B TP8: "Loading model weights took 2.3463 GB", 22,982 blocks of 16 tokens
    est = estimate(GEMMA2)
    printed = fixture(GEMMA2)["printed"]
    weights = est.engine_view["model_loading_bytes"]["CUDA0"]
    assert abs(weights - printed["model_loading_bytes"]) / printed["model_loading_bytes"] < LIMIT
    block = est.engine_view["kv_block_bytes"]  # 16 tokens x 43,008 B a rank
    assert abs(_share(est, est.engine_view["num_gpu_blocks"] * block, printed["num_gpu_blocks"] * block)) < LIMIT


def test_the_refused_70b_run_needs_what_it_printed():
    # "(4.43 GB KV cache is needed ...": 116,160 tokens x 40,960 B a rank
    est = estimate(R1_70B)
    need = est.engine_view["kv_needed_one_request_bytes"]["CUDA0"]
    assert f"{need / GiB:.2f}" == fixture(R1_70B)["printed"]["kv_needed_gib"]


# the docker image's FlashInfer sampler at the source's 12 B (profile.py SAMPLER_BYTES_FLASHINFER): 3.34 GiB for the
# printed 3.48 (-0.6 % of the GPU); at the 4 B fitted before, 4.32 (+3.5 %); on the PyTorch sort 0.39 (-12.9 %)
def test_the_refused_70b_run_budget():
    est = estimate(R1_70B)
    logged = fixture(R1_70B)["printed"]["available_kv_cache_bytes"]
    assert abs(_share(est, est.engine_view["available_kv_cache_bytes"]["CUDA0"], logged)) < LIMIT


def test_the_098_run_on_an_l4_sizes_its_kv_cache_as_printed():
    est = estimate(QWEN05)
    logged = fixture(QWEN05)["printed"]["kv_cache_tokens"]
    assert abs(est.engine_view["kv_cache_tokens"] - logged) / logged < LIMIT  # 1,718,384 vs 1,733,440


def test_fixtures_are_cited():
    for stem in CASES:
        fx = fixture(stem)
        assert fx["source"].startswith("https://github.com/"), stem
        assert fx["quoted"] and fx["command"] and fx["gpus"], stem
