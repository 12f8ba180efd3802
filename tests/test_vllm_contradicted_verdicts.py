"""Public vLLM runs whose outcome contradicts oomkit's verdict on the same command, each held out (no constant in
engines/vllm/ was fitted to it) with the thread's URL and its log lines verbatim. The verdict and the phase the thread
shows are asserted; where oomkit still disagrees and the cause is not pinned in vLLM's source, the assertion is a
strict xfail carrying the measured figures and the best reading of the miss.

QwenLM/Qwen3-VL#1684 (whwangovo, 2025-10-23): "Vllm v0.11.0, Qwen3-VL-235B(-FP8) deployed on 8 A100s OOM".
The issue quotes the model card's command (Qwen/Qwen3-VL-235B-A22B-Instruct, --max-model-len 128000); the log it
attaches ran the FP8 checkpoint at 100000 (its "non-default args" and "max_seq_len=100000"; the "Using max model len
128000" line in between is as the stored copy has it). The GPU size is not printed: 80 GB, since one rank's 35.68 GiB
of KV cache beside about 28 GiB of FP8 weights cannot be held by a 40 GB A100. vLLM sized the KV cache, captured all
67 PIECEWISE graphs and died in the FULL decode graphs (3 of 35 captured); the OOM line itself is not in the stored
copy of the thread.
"""

from __future__ import annotations

import json

import pytest

from oomkit.cli import main
from oomkit.units import GiB

URL_1684 = "https://github.com/QwenLM/Qwen3-VL/issues/1684"

# verbatim from the description (the stored copy elides repeated worker lines with "[... ...]")
COMMAND_1684 = """vllm serve Qwen/Qwen3-VL-235B-A22B-Instruct \\
  --tensor-parallel-size 8 \\
  --max-model-len 128000 \\
  --async-scheduling \\
  --enable-expert-parallel"""

LOG_1684 = """\
(APIServer pid=7101) INFO 10-23 07:59:11 [api_server.py:1839] vLLM API server version 0.11.0
(APIServer pid=7101) INFO 10-23 07:59:11 [utils.py:233] non-default args: {'model_tag': 'checkpoints/Qwen/Qwen3-VL-235B-A22B-Instruct-FP8', 'model': 'checkpoints/Qwen/Qwen3-VL-235B-A22B-Instruct-FP8', 'max_model_len': 100000, 'tensor_parallel_size': 8, 'enable_expert_parallel': True, 'async_scheduling': True}
(APIServer pid=7101) INFO 10-23 07:59:11 [model.py:547] Resolved architecture: Qwen3VLMoeForConditionalGeneration
(APIServer pid=7101) INFO 10-23 07:59:11 [model.py:1510] Using max model len 128000
(EngineCore_DP0 pid=7291) INFO 10-23 07:59:18 [core.py:77] Initializing a V1 LLM engine (v0.11.0) with config: model='checkpoints/Qwen/Qwen3-VL-235B-A22B-Instruct-FP8', ..., dtype=torch.bfloat16, max_seq_len=100000, tensor_parallel_size=8, ... quantization=fp8, ...
(Worker_TP7_EP7 pid=7475) INFO 10-23 08:04:01 [gpu_worker.py:298] Available KV cache memory: 35.68 GiB
(EngineCore_DP0 pid=7291) INFO 10-23 08:04:02 [kv_cache_utils.py:1087] GPU KV cache size: 796,000 tokens
(EngineCore_DP0 pid=7291) INFO 10-23 08:04:02 [kv_cache_utils.py:1091] Maximum concurrency for 100,000 tokens per request: 7.96x
Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): 100%|...| 67/67 [01:08<00:00,  1.02s/it]
Capturing CUDA graphs (decode, FULL):   0%|...| 0/35 [00:00<?, ?it/s]
(Worker_TP3_EP3 pid=7471) INFO 10-23 08:05:11 [custom_all_reduce.py:203] Registering 13348 cuda graph addresses
Capturing CUDA graphs (decode, FULL):   9%|...| 3/35 [00:00<00:09,  3.30it/s]

(Worker_TP7_EP7 pid=7475) ERROR 10-23 08:05:13 [multiproc_"""

# the run the log shows: the FP8 checkpoint by its published name (the log's local path), the log's arguments
RUN_1684 = ("vllm serve Qwen/Qwen3-VL-235B-A22B-Instruct-FP8 --tensor-parallel-size 8 --max-model-len 100000 "
            "--async-scheduling --enable-expert-parallel")
GPU_1684 = "8x A100 80GB"
# torch's total for an A100-SXM4-80GB ("GPU N has a total capacity of 79.15 GiB" in vLLM's A100 OOM lines)
A100_TOTAL = 79.15 * GiB


def _logged(pattern: str) -> str:
    line = next(x for x in LOG_1684.splitlines() if pattern in x)
    return line.split(pattern, 1)[1]


def _check(command: str, capsys) -> tuple[int, dict]:
    rc = main(["check", "--json", "--gpu", GPU_1684, "--engine-version", "0.11.0", "--", *command.split()])
    return rc, json.loads(capsys.readouterr().out)


@pytest.fixture()
def q1684(capsys):
    return _check(RUN_1684, capsys)


def test_1684_log_figures():
    # the fixture's own figures, read back from the verbatim lines
    assert _logged("non-default args: ").count("'max_model_len': 100000") == 1
    assert _logged("Available KV cache memory: ") == "35.68 GiB"
    assert _logged("GPU KV cache size: ") == "796,000 tokens"
    assert "3/35" in LOG_1684.rsplit("Capturing CUDA graphs (decode, FULL):", 1)[1]
    assert "--max-model-len 128000" in COMMAND_1684


def test_1684_kv_layout_and_graph_sets_as_logged(q1684):
    # what oomkit gets right on this run: 4 KV heads on 8 ranks (one head a rank, replicated), 94 layers, bf16: the
    # logged 796,000 tokens fill the logged 35.68 GiB; and the graph sets are the progress bars' 67 + 35
    _, out = q1684
    view = out["estimate"]["engine_view"]
    per_rank_token = out["kv_bytes_per_token"] // 8
    assert abs(796_000 * per_rank_token - 35.68 * GiB) < 0.01 * GiB
    assert (view["cudagraph_piecewise_graphs"], view["cudagraph_full_graphs"]) == (67, 35)
    assert view["max_num_seqs"] == 256 and view["gpu_memory_utilization"] == 0.9


@pytest.mark.xfail(strict=True, reason=(
    "QwenLM/Qwen3-VL#1684, vLLM 0.11.0, Qwen3-VL-235B-A22B-Instruct-FP8 TP 8 + EP on 8 x A100 80 GB, "
    "--max-model-len 100000: the run allocated 35.68 GiB of KV cache per rank and died in CUDA-graph capture "
    "(decode, FULL, 3 of 35 after 67 PIECEWISE). oomkit: fits with 4,280 MiB left per rank (capture 2.35 GiB, "
    "sampler warm-up 1.38 GiB, nothing fails). From 0.11.0's gpu_worker.py determine_available_memory the capture "
    "starts with about 0.1 x 79.15 GiB - the CUDA context + the profile peak free, so it needed at least ~6.4 GiB "
    "(more with the peak given back): 2.7 x oomkit's 2.35 GiB or more. Not pinned in the source read "
    "(capture_model / CUDAGraphWrapper: one global pool, largest size first; fused_marlin_moe, the FP8 path on "
    "Ampere, allocates its caches per call and passes the layer's workspace; kernel_warmup does nothing on SM 8.0); "
    "best reading: the per-graph capture share, fitted on Hopper BF16 / native-FP8 logs, is short for a 94-layer "
    "MoE run through Marlin FP8 kernels on Ampere. The log's OOM line is not in the stored thread"))
def test_1684_verdict_is_death_in_capture(q1684):
    rc, out = q1684
    failed = out["estimate"]["engine_view"].get("failed_phase") or {}
    assert rc == 1 and out["fits"] is False
    assert failed.get("phase") == "CUDA graph capture" and failed.get("after_kv")


@pytest.mark.xfail(strict=True, reason=(
    "QwenLM/Qwen3-VL#1684: available KV 38.72 GiB per rank against the logged 35.68 (+3.04 GiB, +3.8 % of the "
    "GPU; the band is 3 %; 38.55 while oomkit profiled the 16,384-token image rather than 0.11.0's 12,288-token "
    "dummy video, 38.93 before the encoder outputs carried Qwen3-VL's deepstack levels). The log's 'Model loading "
    "took' line is not in the stored thread, so the non-KV memory oomkit still misses inside the budget cannot be "
    "split between weights (Marlin's repacked FP8 with bf16 group scales on Ampere), the profile peak and "
    "non-torch memory"))
def test_1684_available_kv_within_the_band(q1684):
    _, out = q1684
    got = out["estimate"]["engine_view"]["available_kv_cache_bytes"]["CUDA0"]
    err = (got - 35.68 * GiB) / A100_TOTAL
    assert abs(err) < 0.03, f"{got / GiB:.2f} vs 35.68 GiB ({err:+.1%} of the GPU)"


def test_1684_quoted_command_gets_the_same_answer(capsys):
    # the command as quoted (BF16 repo name, 128000): oomkit reads it and gives the same answer as for the
    # logged run, since the KV cache fills the budget either way and what follows it is the same; a fix moves both
    logged_rc, _ = _check(RUN_1684, capsys)
    rc, out = _check(" ".join(COMMAND_1684.replace("\\\n", " ").split()), capsys)
    assert out["estimate"]["settings"]["max_model_len"] == 128000
    assert out["estimate"]["settings"]["enable_expert_parallel"] is True
    assert rc == logged_rc


def test_qwen3_vl_encoder_outputs_carry_the_deepstack_levels(q1684):
    # qwen3_vl.py (0.11.0) Qwen3_VisionTransformer.forward returns torch.cat([merger output] + the deepstack mergers'
    # outputs, dim=1), "[seq_len, hidden_size * (1 + depth_of_deepstack)]", and profile_run keeps it in the encoder
    # cache through the decoder's dummy run. Qwen3-VL-235B: deepstack_visual_indexes [8, 16, 24], out_hidden_size
    # 4096; at 100,000 tokens 0.11.0 profiles one dummy video (qwen3_vl.py get_max_video_tokens: 12,288 soft tokens
    # x 12.5 = 153,600 > the 16,384-token image): 24,576 frames resized by the video processor (25,165,824 pixels
    # over all frames) to 32 x 32, 12,288 steps of 2 x 2 patches of 3 x 2 x 16 x 16, merged 2 x 2; all bf16
    _, out = q1684
    view = out["estimate"]["engine_view"]
    assert (view["encoder_profile_modality"], view["encoder_profile_items"]) == ("video", 1)
    assert view["encoder_budget_tokens"] == 153600
    outputs = 12288 * 4096 * (1 + 3) * 2
    pixels = 12288 * 4 * 3 * 2 * 16 * 16 * 2
    assert view["encoder_profile_held_bytes"] == outputs + pixels
