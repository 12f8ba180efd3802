"""Held-out vLLM start-up logs, thirteenth set (tests/fixtures/engine_logs/vllm/heldout13/): multimodal checkpoints at
TP 1 and TP 4 on 0.8.0-0.8.2 (Qwen2.5-VL-7B, Gemma 3 27B), and a hybrid block-FP8 MoE with its MTP drafter at TP 2 on
0.11.0 (Qwen3-Next-80B-A3B-Thinking-FP8), from public threads no earlier set cites (each URL and number grepped in
tests/ first). The printed figures were recorded before oomkit was run on them; none was used to fit a constant.
"Before" is oomkit at 177ad085, before this file.
Limits: weights per rank 3 % of the printed load, the KV budget 3 % of the GPU's memory, tokens 3 %.

| thread | release | GPUs, model, flags | figure | printed | before | after |
|---|---|---|---|---|---|---|
| QwenLM/Qwen3-VL#1057 | 0.8.2 | H100 SXM, Qwen2.5-VL-7B, LLM() defaults | weights | 15.6271 GiB | 15.6241 (-0.02 %) | same |
| | | | KV tokens | 905,648 | 921,904 (+1.8 %) | same |
| | | | KV budget (tokens x 57,344 B) | 48.37 GiB | 49.24 (+1.09 % of the GPU) | same |
| | | | CUDA graph capture | 0.63 GiB | 0.41 (-0.28 % of the GPU) | same |
| | | | verdict | starts | starts | agrees |
| vllm#15136 | 0.8.0 | 4 GPUs (not named), TP 4, Qwen2.5-VL-7B | weights per rank | 3.9972 GiB | 3.9849 (-0.31 %) | same |
| vllm#16378 | 0.8.0 | 4 GPUs (not named), TP 4, gemma-3-27b-it | weights per rank | 13.1664 GiB | 13.1709 (+0.03 %) | same |
| | | | engine | V0 (VllmWorkerProcess, worker/model_runner.py) | V1 | V0 |
| ragflow#11166 | 0.11.0 | 2 x 48 GB (RTX A6000 stands in), TP 2, Qwen3-Next-80B-A3B-Thinking-FP8, MTP 2, 131,072 | available KV, rank 0 | 2.94 GiB | 2.11 (-1.73 % of the GPU) | same |
| | | | verdict | starts | starts | agrees |

Every figure was inside its limit before this file; the one miss was the engine of vllm#16378, which moves the rule
below. Rule changed: config.py V0_ONLY_CLASSES. engine/arg_utils.py EngineArgs._is_v1_supported_oracle (0.8.0-0.10.2)
sends a model whose class is SupportsV0Only (registry.py is_v1_compatible) to V0 when VLLM_USE_V1 is unset ("...
is not supported by the V1 Engine. Falling back to V0.") and refuses it when VLLM_USE_V1=1; 0.8.0's
models/gemma3_mm.py marks Gemma3ForConditionalGeneration so (0.8.1 dropped the marker; read in the 0.8.0-0.8.3
sdists). vllm#16378's V0 worker lines with 0.8.0-0.8.1's loader.py:429 are that fallback; oomkit had it on V1. Its
load is the same either way, so the weights row does not move; the V0 estimate's capture is 0.30 GiB where V1's was
0.88. The hybrids the same marker sends to V0 in 0.8-0.10 (Jamba and Mamba to 0.10.0; Mamba2, FalconH1,
GraniteMoeHybrid, NemotronH to 0.9.1) run on V0 too, with V0's Mamba state outside the KV blocks
(tests/test_vllm_v0_hybrids.py); Bamba and Zamba2 are not read by oomkit.

ragflow#11166: the GPUs are not named in the excerpt; the author is ragflow#9856's (tests/test_vllm_heldout12.py),
whose 48 GB cards before SM90 an RTX A6000 stands in for, as there. The budget is 0.83 GiB under the printed one, about
the MTP drafter's weights (0.78 GiB a rank: Qwen3-Next's one MTP layer, its 512 experts in block FP8); counted without
the drafter it would be 2.89 (-0.10 %). That the drafter is cheaper than counted is the lead, not held: neither the
'Model loading took' line nor the checkpoint's own quantization_config is in the excerpt.

Searched and not held (corpus "issues", uncited): vllm#26788 (RedHatAI Qwen3-30B-A3B-NVFP4 with
VLLM_USE_FLASHINFER_MOE_FP4=1, 25.9087 GiB: a main build just after #26669, a bug later fixed, not a release);
vllm#23256 (Qwen2.5-VL GPTQ of unknown bits at TP 2, 53.67 GiB: the checkpoint not named); hiyouga/LlamaFactory#7234
(4 x RTX 4090, 0.7.3, 78,336 tokens < 128,000: the model not in the excerpt); vllm#38820 (12.66 GiB at TP 2: the
model not named); gpustack/gpustack#1916 (31.2795 GiB a rank: screenshots, no model); NVIDIA/nccl#1645 (the
vllm#15105 log, already held); vllm#18107 (the Transformers fallback backend, not modelled).

ModelOpt and DeepSeek's MLA in 0.7.1-0.7.2 (the last section): ModelConfig.use_mla turns MLA off for every
quantization name but fp8 and compressed-tensors ("MLA is not supported with %s quantization. Disabling MLA."), and a
ModelOpt checkpoint's name is "modelopt" whatever its quant_algo: quantization.py checkpoint_quantization now decides
by that name, not by how the weights are stored, so a ModelOpt block-FP8 checkpoint (the bytes of fp8.py's DeepSeek
block FP8) cannot keep the latent cache. oomkit's weight format of a ModelOpt checkpoint is "modelopt-*"
(quant/hf_formats.py: a top-level FP8_PB_WO is "modelopt-fp8-pb-wo"), so the figures were already vLLM's; the tests
hold them. The block-FP8 rows use the top-level FP8_PB_WO config, which 0.6.1-0.7.3 accept ("FP8" in the quant_algo);
a MIXED_PRECISION checkpoint is refused there ("ModelOpt currently only supports static FP8quantization",
tests/test_vllm_modelopt_mixed.py). One figure did move with the method: a
checkpoint read from its own safetensors headers (format "safetensors BF16") was taken for a quantized one and cached
per head at 0.7.1-0.7.2; a float main dtype now reads as no quantization, the latent kept as vLLM keeps it.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from oomkit.engines.vllm import ENGINE, VllmSettings
from oomkit.engines.vllm import quantization as vllm_quant
from oomkit.errors import OomkitError
from oomkit.model.catalog import lookup
from oomkit.units import GiB
from tests.startup_heldout import died, first, fixture_loader, gpus
from tests.test_vllm_startup import spec_of

HERE = Path(__file__).parent / "fixtures" / "engine_logs" / "vllm" / "heldout13"
fixture = fixture_loader(HERE)
WEIGHTS_LIMIT = 0.03  # of the printed load
KV_LIMIT = 0.03  # of the GPU's memory
TOKENS_LIMIT = 0.03

QWEN25VL_H100 = "qwen2.5-vl-7b-h100-sxm-v0.8.2-llm-defaults-qwen3vl1057"
QWEN25VL_TP4 = "qwen2.5-vl-7b-4gpu-tp4-v0.8.0-weights-issue15136"
GEMMA3_TP4 = "gemma-3-27b-it-tp4-v0.8.0-v0-weights-issue16378"
QWEN3_NEXT_TP2 = "qwen3-next-80b-a3b-thinking-fp8-mtp2-2x48gb-tp2-v0.11.0-131072-ragflow11166"

# Qwen2.5-VL-7B's KV bytes a token: 28 layers x 4 KV heads x 128 x (K + V) x 2 B
QWEN25VL_KV_BYTES = 28 * 4 * 128 * 2 * 2

# Qwen's block-FP8 checkpoints (fp8 e4m3, dynamic activations, 128 x 128 weight blocks; the 48 layers' norms and MoE
# gates in bf16), as the catalog's Qwen3-30B-A3B-FP8 carries it: an assumption for Qwen3-Next-80B-A3B-Thinking-FP8,
# whose quantization_config the thread does not print (48 layers too)
QWEN_FP8_BLOCK = dict(lookup("Qwen/Qwen3-30B-A3B-FP8").config["quantization_config"])


def weights_error(stem: str, est) -> float:
    printed = fixture(stem)["printed"]["model_loading_gb"] * GiB  # vLLM's "GB" here divides by 2**30
    return (first(est.engine_view, "model_loading_bytes") - printed) / printed


def starts(est) -> bool:
    return died(est) is None and not est.engine_view.get("error")


# ---------------------------------------------------------------------------------------------------------------
# QwenLM/Qwen3-VL#1057: Qwen2.5-VL-7B-Instruct on one H100 SXM, 0.8.2 V1, the LLM class with the README's arguments


def _qwen25vl_h100():
    # the README's LLM(model=MODEL_PATH, limit_mm_per_prompt={"image": 10, "video": 10}) (QwenLM/Qwen2.5-VL
    # README.md, "Inference Locally"): 0.8.2 counts the video beside 10 images of 16,384 tokens, which leave it no
    # room past one frame, so the image is profiled (with vLLM's default limits the video would be: 98,304 tokens)
    return ENGINE.estimate(spec_of("Qwen/Qwen2.5-VL-7B-Instruct"), gpus("H100 80GB", 1),
                           VllmSettings(engine_version="0.8.2", usage_context="llm",
                                        limit_mm_per_prompt=(("image", 10), ("video", 10))))


def test_qwen25vl_h100_weights():
    err = weights_error(QWEN25VL_H100, _qwen25vl_h100())
    assert abs(err) < WEIGHTS_LIMIT, f"{err:+.2%}"  # -0.02 %


def test_qwen25vl_h100_encoder_profile_and_context():
    v, fx = _qwen25vl_h100().engine_view, fixture(QWEN25VL_H100)["printed"]
    # "Encoder cache will be initialized with a budget of 16384 tokens, and profiled with 1 image items"
    assert (v["encoder_budget_tokens"], v["encoder_profile_items"]) == (fx["encoder_budget_tokens"], 1)
    assert v["max_model_len"] == fx["max_model_len"]


def test_qwen25vl_h100_kv_tokens_and_budget():
    est = _qwen25vl_h100()
    fx = fixture(QWEN25VL_H100)["printed"]
    got = est.engine_view["kv_cache_tokens"]
    assert abs(got - fx["kv_cache_tokens"]) / fx["kv_cache_tokens"] < TOKENS_LIMIT, got  # 921,904: +1.8 %
    # 0.8.2's V1 worker prints no budget: the printed tokens at 57,344 B each are 48.37 GiB
    printed_budget = fx["kv_cache_tokens"] * QWEN25VL_KV_BYTES
    err = (first(est.engine_view, "available_kv_cache_bytes") - printed_budget) / est.devices[0].memory_bytes
    assert abs(err) < KV_LIMIT, f"available KV {err:+.2%} of the GPU"  # +1.09 %


def test_qwen25vl_h100_capture_and_verdict():
    est = _qwen25vl_h100()
    printed = fixture(QWEN25VL_H100)["printed"]["cudagraph_actual_gib"] * GiB
    err = (est.engine_view["cudagraph_actual_bytes"] - printed) / est.devices[0].memory_bytes
    assert abs(err) < KV_LIMIT, f"capture {err:+.2%} of the GPU"  # -0.28 %
    assert starts(est), (est.engine_view.get("error"), died(est))


# ---------------------------------------------------------------------------------------------------------------
# vllm#15136: Qwen2.5-VL-7B-Instruct at TP 4, 0.8.0 V1 (four VllmWorker ranks, gpu_model_runner.py)


def test_qwen25vl_tp4_weights_per_rank():
    est = ENGINE.estimate(spec_of("Qwen/Qwen2.5-VL-7B-Instruct"), gpus("H100 80GB", 4),
                          VllmSettings(engine_version="0.8.0", tensor_parallel_size=4))
    assert est.engine_view["engine"] == "V1"
    err = weights_error(QWEN25VL_TP4, est)
    assert abs(err) < WEIGHTS_LIMIT, f"{err:+.2%}"  # -0.31 %


# ---------------------------------------------------------------------------------------------------------------
# vllm#16378: gemma-3-27b-it at TP 4 on the V0 engine: 0.8.0 marks Gemma3ForConditionalGeneration SupportsV0Only


def _gemma3(version: str = "0.8.0", **kw):
    return ENGINE.estimate(spec_of("google/gemma-3-27b-it"), gpus("A100 80GB", 4),
                           VllmSettings(engine_version=version, tensor_parallel_size=4, **kw))


def test_gemma3_tp4_weights_per_rank():
    err = weights_error(GEMMA3_TP4, _gemma3())
    assert abs(err) < WEIGHTS_LIMIT, f"{err:+.2%}"  # +0.03 %


def test_gemma3_multimodal_runs_on_v0_in_0_8_0():
    est = _gemma3()
    assert est.engine_view["engine"] == fixture(GEMMA3_TP4)["printed"]["engine"]  # V0 (was V1)
    assert any("SupportsV0Only" in w and "Falling back to V0" in w for w in est.warnings), est.warnings
    # 0.8.1 dropped the marker (models/gemma3_mm.py): V1 again, and text-only Gemma 3 never carried it
    assert _gemma3("0.8.1").engine_view["engine"] == "V1"
    text_only = ENGINE.estimate(spec_of("google/gemma-3-1b-it"), gpus("A100 80GB", 1),
                                VllmSettings(engine_version="0.8.0"))
    assert text_only.engine_view["engine"] == "V1"


def test_gemma3_multimodal_with_vllm_use_v1_is_refused_in_0_8_0():
    # _raise_or_fallback with VLLM_USE_V1=1 set raises instead of falling back
    with pytest.raises(OomkitError, match=r"VLLM_USE_V1=1 is not supported with \['Gemma3ForConditionalGeneration'\]"):
        _gemma3(use_v1=True)


# ---------------------------------------------------------------------------------------------------------------
# ragflow#11166: Qwen3-Next-80B-A3B-Thinking-FP8 at TP 2 with its MTP head drafting 2 tokens, 131,072, 0.11.0


def _qwen3_next():
    return ENGINE.estimate(spec_of("Qwen/Qwen3-Next-80B-A3B-Thinking", QWEN_FP8_BLOCK), gpus("RTX A6000", 2),
                           VllmSettings(engine_version="0.11.0", tensor_parallel_size=2, max_model_len=131072,
                                        speculative_method="qwen3_next_mtp", num_speculative_tokens=2))


def test_qwen3_next_fp8_mtp_tp2_budget():
    est = _qwen3_next()
    printed = fixture(QWEN3_NEXT_TP2)["printed"]["available_kv_cache_gib_rank0"] * GiB
    err = (first(est.engine_view, "available_kv_cache_bytes") - printed) / est.devices[0].memory_bytes
    assert abs(err) < KV_LIMIT, f"available KV {err:+.2%} of the GPU"  # -1.73 %


def test_qwen3_next_fp8_mtp_tp2_starts():
    est = _qwen3_next()
    assert starts(est), (est.engine_view.get("error"), died(est))
    assert est.engine_view["max_model_len"] == 131072


# ---------------------------------------------------------------------------------------------------------------
# ModelOpt checkpoints and DeepSeek's MLA in 0.7.1-0.7.2 (config.py ModelConfig.use_mla): off for "modelopt" whatever
# its quant_algo, kept for fp8.py's own block FP8. DeepSeek-Coder-V2-Instruct at TP 4 (1,536 / 4 = 3 x 128: whole
# weight blocks); the figures are the sdists' arithmetic, summed over the 4 ranks as kv_bytes_per_token is

DSV2 = "deepseek-ai/DeepSeek-Coder-V2-Instruct"
HEADS = 4 * 60 * 32 * 192 * 2 * 2  # 4 ranks x 60 layers x 32 heads a rank x (K + V at qk_nope + qk_rope) x 2 B
LATENT = 4 * 60 * (512 + 64) * 2  # the latent row on each of the 4 ranks
MODELOPT_FP8 = {"quant_method": "modelopt", "quantization": {"quant_algo": "FP8"}}
# the whole checkpoint in ModelOpt's per-block FP8 (top-level quant_algo FP8_PB_WO, 128 x 128 blocks), the form
# 0.7.2-0.7.3 accept (modelopt.py ModelOptFp8Config.from_config: "FP8" in quant_algo; MIXED_PRECISION is refused)
MODELOPT_BLOCK_FP8 = {"quant_method": "modelopt", "quantization": {"quant_algo": "FP8_PB_WO"}}
DEEPSEEK_BLOCK_FP8 = {"quant_method": "fp8", "activation_scheme": "dynamic", "weight_block_size": [128, 128]}


def _kv_per_token(qcfg: dict, version: str) -> int:
    est = ENGINE.estimate(spec_of(DSV2, qcfg), gpus("H100 80GB", 4),
                          VllmSettings(engine_version=version, tensor_parallel_size=4, max_model_len=64000,
                                       enforce_eager=True))
    return est.kv_bytes_per_token


@pytest.mark.parametrize("qcfg, version, expected", [
    (MODELOPT_FP8, "0.7.1", HEADS),
    (MODELOPT_FP8, "0.7.2", HEADS),
    (MODELOPT_BLOCK_FP8, "0.7.2", HEADS),
    (DEEPSEEK_BLOCK_FP8, "0.7.2", LATENT),
    (MODELOPT_FP8, "0.7.3", LATENT),
    (MODELOPT_BLOCK_FP8, "0.7.3", LATENT),
])
def test_modelopt_turns_mla_off_in_0_7_1_and_0_7_2(qcfg, version, expected):
    assert _kv_per_token(qcfg, version) == expected


def test_the_mla_check_reads_the_method_not_the_layout():
    block_modules = spec_of(DSV2, MODELOPT_BLOCK_FP8)
    # the bytes of fp8.py's block FP8 (one a weight, an fp32 scale a 128 x 128 block), read as ModelOpt's method
    fp8_block = spec_of(DSV2, DEEPSEEK_BLOCK_FP8)
    assert {t.dtype for t in block_modules.weights.tensors} >= {"modelopt-fp8-pb-wo"}
    assert sum(t.nbytes for t in block_modules.weights.tensors) == sum(t.nbytes for t in fp8_block.weights.tensors)
    assert vllm_quant.checkpoint_quantization(block_modules) == "modelopt"
    assert vllm_quant.checkpoint_quantization(spec_of(DSV2, DEEPSEEK_BLOCK_FP8)) == "fp8"
    assert vllm_quant.checkpoint_quantization(spec_of(DSV2)) is None
    # a checkpoint read from its own safetensors headers is named by its main dtype: a float one has no method
    plain = spec_of(DSV2)
    headers = dataclasses.replace(plain, weights=dataclasses.replace(plain.weights, format="safetensors BF16"))
    assert vllm_quant.checkpoint_quantization(headers) is None
    assert vllm_quant.mla_latent_kept(headers, None, False, (0, 7, 2))
    # --quantization names the method when given (ModelConfig.quantization, lowered)
    assert not vllm_quant.mla_latent_kept(spec_of(DSV2), "AWQ", False, (0, 7, 2))
    assert vllm_quant.mla_latent_kept(spec_of(DSV2), "FP8", False, (0, 7, 2))
