"""Held-out vLLM start-up logs, second set (tests/fixtures/engine_logs/vllm/heldout2/): vLLM 0.11 on H100 from
llm-d-benchmark's profiling notes, 0.15 pipeline-parallel refusals (vllm#32105, vllm#34076) and a 0.29 TP2 run
across two DGX Sparks (eugr/spark-vllm-docker#396). No constant in oomkit was fitted on any of them. Each figure was
measured before any change; the one rule they led to is named below. Errors: weights per rank relative to the
printed figure, the KV budget as a share of the GPU's memory, tokens / lengths relative to the printed count.

| log | version | GPUs | model | figure | printed | before | after |
|---|---|---|---|---|---|---|---|
| llm-d-benchmark | 0.11.0 | H100, TP1 | Qwen3-32B | weights / available KV | 61.03 / 4.45 GiB | +0.01 % / -0.14 % | same |
| | | | | verdict at 16,000 / 32,000 | starts / no KV room | starts / refused | same |
| llm-d-benchmark | 0.11.0 | 2x H100, TP2 | Qwen3-32B | weights / available KV | 30.59 / 34.49 GiB | -0.22 % / -1.84 % | same |
| llm-d-benchmark | 0.11.0 | H100, TP1 | Llama-3.3-70B FP8 | weights / available KV | 67.72 / -1.44 GiB | -0.03 % / -0.08 % | same |
| | | | | verdict | no KV room | refused | same |
| llm-d-benchmark | 0.11.0 | 2x H100, TP2 | Llama-3.3-70B FP8 | weights / available KV | 33.88 / 32.0 GiB | -0.04 % / -1.88 % | same |
| llm-d-benchmark | 0.11.0 | H100, TP1 | gpt-oss-120b (MXFP4) | weights / available KV | 64.38 / 3.33 GiB | +2.35 % / -2.75 % | same |
| | | | | verdict | starts | starts | same |
| | | | | verdict on the image's Triton layout | starts | dies in the sampler warm-up (12,216 MiB, 9,013 left) | starts (7,541 MiB) |
| llm-d-benchmark | 0.11.0 | H100, TP1 | Mistral-Small-3.2-24B (vision) | weights | 44.76 GiB | -0.01 % | same |
| | | | | available KV | 28.20 GiB | -3.69 %: strict xfail | same |
| | | | | tokens / blocks / concurrency from the printed budget | 184,832 / 1,444 / 11.55x | -0.07 % / -1 block / 11.54x | same |
| vllm#34076 | 0.15.2rc1 | 5070 Ti + 5090 D, PP2 | Qwen3-Coder-30B-A3B FP8 | one request's KV / estimated length | 24.0 GiB / 34,736 | 12.0 GiB / 69,456 | 24.0 GiB / 34,720 |
| | | | | kv_needed_one_request_bytes per stage | 24.0 GiB | 12.0 GiB | 24.0 GiB |
| vllm#32105 | 0.15.0rc1 | 8 GPUs, PP8 | GLM-4.7 FP8 | verdict | refused | starts | refused |
| | | | | one request's KV / estimated length | 71.16 GiB / 81,392 | 9.28 GiB (a stage's) / - | 71.16 GiB / 81,392 |
| | | | | kv_needed_one_request_bytes per stage | 71.16 GiB | 8.5-9.3 GiB (each stage's) | 71.16 GiB |
| spark#396 | 0.29.1rc1 | 2x DGX Spark, TP2 | MiniMax-M2.7 AWQ | one request's KV / estimated length | 23.25 GiB / 190,272 | 23.25 GiB / 190,256 | same |
| | | | | tokens / concurrency from the printed 28.74 GiB | 240,816 / 1.22x | +0.92 % / 1.24x | same |

The rule (engines/vllm/settings.py ERAS pp_check_merged / pp_check_per_worker, applied in layout.py): from 0.14.0
(PR #29431) to 0.16.x, v1/core/kv_cache_utils.py get_kv_cache_configs checks one max_model_len request against the
KV cache groups of the whole model (every stage's layers merged) and min(available_memory), so a pipeline stage is
held to all the model's layers; 0.17.0 (PR #33698) checks each worker's projected groups against its own budget
again. Read in the 0.13.0, 0.14.0, 0.15.1, 0.16.0, 0.17.0, 0.18.0 and 0.19.0 wheels. No constant was fitted.
A second rule, read in the 0.11.0 wheel: the sampler warm-up on the PyTorch sort path needs the sampler's allocated
peak, as in the profile it repeats (phases.py SAMPLER_WARMUP_FACTOR_SORT, 1.0; no constant fitted).

What remains, measured: the 0.11 TP2 non-torch increase is 0.54-0.55 GiB in these logs where oomkit carries the 0.19
H100 figure (2.07 GiB, profile.py NON_TORCH_TP): -1.84 / -1.88 % of the GPU, inside the 3 % limit; gpt-oss-120b's
64.38 GiB is the Triton MXFP4 layout of the vllm/vllm-openai image, which carries triton_kernels, while oomkit gives
0.11 the PyPI wheel's Marlin layout (vllm#27508); Mistral's 2.12 GiB profile peak is what FlashInfer's sampler gives,
not the PyTorch sort at 1,024 sequences oomkit takes for 0.11: 0.11.0 picks FlashInfer whenever it is installed
(v1/sample/ops/topk_topp_sampler.py), and the document's text-only runs peak on the sort, so that run's installation
differed; 1,024 sequences is engine/arg_utils.py's default beside the printed 8,192 batched tokens (a >= 70 GiB GPU).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oomkit.engines.vllm import CUDA_DRIVER_RESERVED, ENGINE, VllmSettings
from oomkit.hardware.catalog import with_facts
from oomkit.memory import Device
from oomkit.units import GiB
from tests.test_vllm import LIMITS, RANK_MINIMUM_LIMIT
from tests.test_vllm_startup import spec_of

HERE = Path(__file__).parent / "fixtures" / "engine_logs" / "vllm" / "heldout2"
H100 = "NVIDIA H100 80GB HBM3"
# the limits the vLLM fixtures are held to (tests/test_vllm.py): weights per rank relative to the printed load, the
# KV budget as a share of the GPU; the smallest worker's budget over the engine's count
W_LIMIT, A_LIMIT = LIMITS["weights"], LIMITS["available"]


def fixture(stem: str) -> dict:
    return json.loads((HERE / f"{stem}.json").read_text(encoding="utf-8"))


def gpus(name: str, n: int, total_gib: str | None = None) -> tuple[Device, ...]:
    """n GPUs of a name; total_gib: vLLM's printed total (torch.cuda.mem_get_info), the driver's reserve added back."""
    memory = round(float(total_gib) * GiB) + CUDA_DRIVER_RESERVED if total_gib else None
    return tuple(with_facts(Device(f"CUDA{i}", name, memory)) for i in range(n))


def estimate(model: str, devices: tuple[Device, ...], **kw):
    return ENGINE.estimate(spec_of(model), devices, VllmSettings(**kw))


def h100_011(stem: str, model: str, **kw):
    """An llm-d-benchmark run: vLLM 0.11.0 on H100s (79.18 GiB printed), --block-size 128, 16,000 tokens."""
    fx = fixture(stem)
    st = fx["settings"]
    kw.setdefault("max_model_len", st["max_model_len"])
    est = estimate(model, gpus(H100, st["tensor_parallel_size"], fx["printed"]["total_gpu_memory_gib"]),
                   engine_version="0.11.0", tensor_parallel_size=st["tensor_parallel_size"],
                   gpu_memory_utilization=st["gpu_memory_utilization"], block_size=128, **kw)
    return fx["printed"], est


def errors(printed: dict, est) -> tuple[float, float]:
    """(weights relative to the printed load, available KV as a share of the GPU's memory) for the first rank."""
    v = est.engine_view
    w = (v["model_loading_bytes"]["CUDA0"] - printed["model_loading_bytes"]) / printed["model_loading_bytes"]
    a = (v["available_kv_cache_bytes"]["CUDA0"] - printed["available_kv_cache_bytes"]) / est.devices[0].memory_bytes
    return w, a


# ---------------------------------------------------------------------------------------------------------
# vLLM 0.11.0 on H100 (llm-d-benchmark config_explorer/empirical-vllm-memory-results.md)


def test_qwen3_32b_one_h100_budget_and_the_32000_token_refusal():
    printed, est = h100_011("qwen3-32b-h100-v0.11-tp1-16000-llmdbench", "Qwen/Qwen3-32B")
    w, a = errors(printed, est)
    assert abs(w) < 0.001 and abs(a) < 0.005, (w, a)  # +0.01 %, -0.14 % of the GPU
    assert est.fits is True
    # at 32,000 tokens the same budget (the activation does not grow with max_model_len) misses one request's 7.81 GiB
    _, longer = h100_011("qwen3-32b-h100-v0.11-tp1-16000-llmdbench", "Qwen/Qwen3-32B", max_model_len=32000)
    assert longer.fits is False
    assert longer.engine_view["kv_needed_one_request_bytes"]["CUDA0"] == 250 * 128 * 64 * 8 * 128 * 2 * 2


def test_qwen3_32b_tp2_budget():
    # -1.84 % of the GPU: the profile's non-torch increase is 0.54 GiB in this 0.11 log, 2.07 GiB in 0.19's (NON_TORCH_TP)
    printed, est = h100_011("qwen3-32b-h100-v0.11-tp2-16000-llmdbench", "Qwen/Qwen3-32B")
    w, a = errors(printed, est)
    assert abs(w) < W_LIMIT and abs(a) < A_LIMIT, (w, a)
    assert -0.02 < a < -0.015 and est.fits is True


def test_llama_33_70b_fp8_on_one_h100_has_no_kv_room():
    # 67.72 GiB of FP8 weights: -1.44 GiB left ("No available memory for the cache blocks"); FP8-dynamic read as
    # online fp8 of the bf16 checkpoint (tests/test_vllm_phases.py does the same)
    printed, est = h100_011("llama-3.3-70b-fp8-h100-v0.11-tp1-no-kv-room-llmdbench", "llama-3.3-70b-instruct",
                            quantization="fp8")
    w, a = errors(printed, est)
    assert abs(w) < 0.001 and abs(a) < 0.002, (w, a)  # -0.03 %, -0.08 % of the GPU
    assert est.fits is False and est.engine_view["error"].startswith("No available memory for the cache blocks")


def test_llama_33_70b_fp8_tp2_budget():
    printed, est = h100_011("llama-3.3-70b-fp8-h100-v0.11-tp2-llmdbench", "llama-3.3-70b-instruct",
                            quantization="fp8")
    w, a = errors(printed, est)
    assert abs(w) < 0.001 and abs(a) < A_LIMIT, (w, a)  # -0.04 %, -1.88 % (the TP2 non-torch term, as above)
    assert est.fits is True


def test_gpt_oss_120b_on_one_h100_starts():
    # 0.95 (the document's terms add up only there, see the fixture's notes). oomkit takes 0.11's PyPI wheel: no
    # triton_kernels, Marlin's padded MXFP4 layout, 65.89 GiB (+2.35 %); the budget -2.75 % of the GPU
    printed, est = h100_011("gpt-oss-120b-h100-v0.11-tp1-16000-llmdbench", "openai/gpt-oss-120b")
    w, a = errors(printed, est)
    assert abs(w) < W_LIMIT and abs(a) < A_LIMIT, (w, a)
    assert est.fits is True


def test_gpt_oss_120b_with_the_images_triton_layout():
    # the vllm/vllm-openai image installs triton_kernels: the Triton layout (profile.py TRITON_KERNELS_FROM, the 0.12
    # path) gives 64.55 GiB (+0.26 %) and 3.14 GiB of KV cache (-0.24 % of the GPU)
    fx = fixture("gpt-oss-120b-h100-v0.11-tp1-16000-llmdbench")
    printed = fx["printed"]
    est = estimate("openai/gpt-oss-120b", gpus(H100, 1, printed["total_gpu_memory_gib"]), engine_version="0.12.0",
                   max_model_len=16000, gpu_memory_utilization=0.95, block_size=128)
    w, a = errors(printed, est)
    assert abs(w) < 0.005 and abs(a) < 0.005, (w, a)


def test_gpt_oss_120b_triton_path_verdict():
    # the log started (SUCCESS), its profile peak 7.38 GiB with the sampler pass (oomkit: 7.41). The warm-up repeats
    # that sampler pass on the PyTorch sort path, which needs its allocated peak and no fragment beside it
    # (phases.py SAMPLER_WARMUP_FACTOR_SORT): 1,024 x 201,088 x 38 B = 7,462 MiB with 9,013 MiB left after the KV
    # cache and the graphs. Before: x 1.62, 12,216 MiB, said to die
    fx = fixture("gpt-oss-120b-h100-v0.11-tp1-16000-llmdbench")
    est = estimate("openai/gpt-oss-120b", gpus(H100, 1, fx["printed"]["total_gpu_memory_gib"]),
                   engine_version="0.12.0", max_model_len=16000, gpu_memory_utilization=0.95, block_size=128)
    assert est.fits is True, est.error
    v = est.engine_view
    assert v["failed_phase"] is None
    assert v["sampler_warmup_bytes"] == 1024 * 201088 * 38


MISTRAL = "mistral-small-3.2-24b-h100-v0.11-util095-multimodal-llmdbench"
MISTRAL_KW = dict(dtype="bfloat16", max_num_batched_tokens=8192)


def test_mistral_small_32_weights_and_tokens_from_the_printed_budget():
    printed, est = h100_011(MISTRAL, "mistralai/Mistral-Small-3.2-24B-Instruct-2506", **MISTRAL_KW)
    w, _ = errors(printed, est)
    assert abs(w) < 0.001, w  # 44.7559 vs 44.76 GiB: the language model and the Pixtral tower in bf16
    # 40 layers x 8 KV heads x 128 x K,V x 2 B = 163,840 B per token; 128-token blocks of 20 MiB
    _, from_budget = h100_011(MISTRAL, "mistralai/Mistral-Small-3.2-24B-Instruct-2506",
                              kv_cache_memory_bytes=printed["available_kv_cache_bytes"], **MISTRAL_KW)
    v = from_budget.engine_view
    # 28.20 GiB is printed to 0.01 GiB (half a 20 MiB block either way): 1,443 blocks here, 1,444 printed
    assert abs(v["num_gpu_blocks"] - printed["num_gpu_blocks"]) <= 1
    assert abs(v["kv_cache_tokens"] - printed["kv_cache_tokens"]) <= 128
    assert round(abs(v["max_concurrency"] - printed["max_concurrency"]), 2) <= 0.01  # 11.54x (one block fewer)


@pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
    "-3.69 % of the GPU (25.26 vs 28.20 GiB): oomkit's 0.11 profile takes the PyTorch sort for the sampler's dummy "
    "pass over 1,024 x 131,072 logits (4.96 GiB peak) where the log prints 2.12 GiB. FlashInfer's top-k/top-p gives "
    "28.31 GiB (+0.14 %). 0.11.0's v1/sample/ops/topk_topp_sampler.py takes FlashInfer whenever flashinfer >= 0.2.3 "
    "imports (VLLM_USE_FLASHINFER_SAMPLER unset), so the choice is the installation's: the same document's text-only "
    "0.11 runs peak on the sort (Qwen3-0.6B 5.56 GiB = 1,024 x 151,936 x 38.4 B), this one does not. 256 sequences "
    "would need a flag the section does not list: the printed max_num_batched_tokens 8192 is engine/arg_utils.py's "
    "default for a >= 70 GiB GPU, the branch that also sets max_num_seqs 1,024"))
def test_mistral_small_32_budget():
    printed, est = h100_011(MISTRAL, "mistralai/Mistral-Small-3.2-24B-Instruct-2506", **MISTRAL_KW)
    _, a = errors(printed, est)
    assert abs(a) < A_LIMIT, f"{a:+.2%} of the GPU"


def test_mistral_small_32_budget_with_flashinfers_sampler():
    # the alternative the strict xfail names, measured
    printed, est = h100_011(MISTRAL, "mistralai/Mistral-Small-3.2-24B-Instruct-2506", use_flashinfer_sampler=True,
                            **MISTRAL_KW)
    _, a = errors(printed, est)
    assert abs(a) < 0.003, a


# ---------------------------------------------------------------------------------------------------------
# 0.14-0.16 under pipeline parallelism: the whole model against the smallest worker's budget


GLM = "glm-4.7-fp8-pp8-v0.15.0rc1-util0925-kv-refused-issue32105"


def _glm(version: str):
    printed = fixture(GLM)["printed"]
    # GLM-4.7's KV layout (the FP8 checkpoint's is the same: 92 layers x 8 KV heads x 128); the GPUs are not named,
    # so the printed budget is given to every stage
    return printed, estimate("zai-org/GLM-4.7", gpus(H100, 8), engine_version=version, pipeline_parallel_size=8,
                             max_model_len=202752, max_num_seqs=128,
                             kv_cache_memory_bytes=printed["available_kv_cache_bytes"])


def test_glm_47_pp8_refused_as_015_refuses():
    printed, est = _glm("0.15.0")
    assert est.fits is False
    assert est.engine_view["error"].startswith(printed["error"])  # 71.16 GiB and 81,392, as printed
    assert est.engine_view["estimated_max_model_len"] == printed["estimated_max_model_len"]
    # the one-request figure is the rule's, on every stage: the whole model's 92 layers (71.16 GiB as printed)
    need = est.engine_view["kv_needed_one_request_bytes"]
    assert len(need) == 8 and set(need.values()) == {202752 * 92 * 8 * 128 * 2 * 2}
    assert f"{202752 * 92 * 8 * 128 * 2 * 2 / GiB:.2f}" == "71.16"


@pytest.mark.parametrize("version", ["0.13.0", "0.17.0"])
def test_glm_47_pp8_starts_where_each_stage_holds_its_own_layers(version):
    # before 0.14 and from 0.17 each stage's 11-12 layers need about 9 GiB for one request: it starts
    est = _glm(version)[1]
    assert est.error is None and "error" not in est.engine_view
    assert max(est.engine_view["kv_needed_one_request_bytes"].values()) < 10 * GiB


def test_qwen3_coder_pp2_refusal_counts_all_48_layers():
    fx = fixture("qwen3-coder-30b-a3b-fp8-5070ti-5090d-pp2-v0.15.2-kv-refused-issue34076")
    printed = fx["printed"]
    # VLLM_PP_LAYER_PARTITION=16,32 (not modelled) does not matter here: the check takes every layer
    est = estimate("Qwen/Qwen3-Coder-30B-A3B-Instruct", gpus("NVIDIA GeForce RTX 5090", 2), engine_version="0.15.2",
                   pipeline_parallel_size=2, max_model_len=262144,
                   kv_cache_memory_bytes=printed["available_kv_cache_bytes"])
    v = est.engine_view
    assert est.fits is False
    assert "(24.0 GiB KV cache is needed, which is larger than the available KV cache memory (3.18 GiB)" in v["error"]
    # and the figure says what the refusal says, for each stage (a stage's own 24 layers: 12.0 GiB before)
    assert v["kv_needed_one_request_bytes"] == {"CUDA0": 24 * GiB, "CUDA1": 24 * GiB}
    # 3.18 GiB is printed to 0.01 GiB, 109 tokens at 98,304 B per token: held to one 16-token block
    assert abs(v["estimated_max_model_len"] - printed["estimated_max_model_len"]) <= 16


# ---------------------------------------------------------------------------------------------------------
# 0.29.1rc1, TP2 across two DGX Sparks (eugr/spark-vllm-docker#396)


SPARK = "minimax-m2.7-awq-2x-dgx-spark-tp2-v0.29.1-kv-refused-then-085-spark396"


def _minimax(budget: int):
    # MiniMax-M2.7's KV layout (the AWQ checkpoint's is the same: 62 layers x 8 KV heads x 128); the weights (AWQ
    # 4-bit) are not printed, so only the figures that follow from the printed budgets are held
    return estimate("MiniMaxAI/MiniMax-M2.7", gpus("NVIDIA GB10", 2), engine_version="0.29.1",
                    tensor_parallel_size=2, max_model_len=196608, kv_cache_memory_bytes=budget)


def test_minimax_m27_refused_at_080():
    printed = fixture(SPARK)["printed"]
    est = _minimax(printed["available_kv_cache_bytes"])
    v = est.engine_view
    assert est.fits is False
    assert "(23.25 GiB KV cache is needed, which is larger than the available KV cache memory (22.5 GiB)" in v["error"]
    assert v["kv_needed_one_request_bytes"]["CUDA0"] == 196608 * 62 * 4 * 128 * 2 * 2
    # 22.5 GiB is printed to 0.01 GiB (81 tokens): 190,256 here, 190,272 printed, one block
    assert abs(v["estimated_max_model_len"] - printed["estimated_max_model_len"]) <= 16


def test_minimax_m27_tokens_at_085():
    # 28.74 GiB is one worker's budget; the engine sizes the cache by the smaller Spark's (unified memory, each host
    # its own): from the printed one the count can only come out high, here by 0.92 % (243,024 vs 240,816)
    printed = fixture(SPARK)["printed"]
    v = _minimax(printed["available_kv_cache_085_bytes"]).engine_view
    err = (v["kv_cache_tokens"] - printed["kv_cache_tokens_085"]) / printed["kv_cache_tokens_085"]
    assert 0 < err <= RANK_MINIMUM_LIMIT, err
    assert v["max_concurrency"] >= printed["max_concurrency_085"]
