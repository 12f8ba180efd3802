"""ModelOpt MIXED_PRECISION checkpoints before vLLM 0.17: model_executor/layers/quantization/modelopt.py
ModelOptFp8Config.from_config (ModelOptQuantConfigBase.from_config from 0.12) refuses a quant_algo outside QUANT_ALGOS
before any weight is read; 0.17.0 adds "MIXED_PRECISION" to QUANT_ALGOS (ModelOptMixedPrecisionConfig). 0.6.1-0.7.3
take any quant_algo containing "FP8" instead. The lists below are written out from the 0.6.1, 0.7.0-0.7.3, 0.8.0,
0.13.0, 0.14.0, 0.15.1 (wheel) and 0.16.0 sources; the words are vLLM's."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

import oomkit
from oomkit.engines.vllm import ENGINE, VllmSettings
from oomkit.engines.vllm import quantization as vllm_quant
from oomkit.errors import OomkitError
from tests.startup_heldout import gpus
from tests.test_vllm_startup import spec_of

# a catalog variant with a verbatim config.json quantization_config: quant_method modelopt, quant_algo
# MIXED_PRECISION (FP8 Mamba-2 projections, W4A16_NVFP4 experts and lm_head)
MIXED = "nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4"
TAIL = " quantizations in vLLM. Please check the `hf_quant_config.json` file for your model's quant configuration."


def _estimate(version: str):
    return oomkit.estimate(MIXED, "vllm", gpu="H100 80GB", engine_version=version, max_model_len=4096,
                           find_max_context=False)


@pytest.mark.parametrize("version,algos", [
    ("0.10.2", "['FP8', 'NVFP4']"),  # QUANT_ALGOS 0.8.0 -> 0.13.x
    ("0.13.0", "['FP8', 'NVFP4']"),
    ("0.14.0", "['FP8', 'FP8_PER_CHANNEL_PER_TOKEN', 'FP8_PB_WO', 'NVFP4']"),  # 0.14.0 -> 0.15.1
    ("0.15.1", "['FP8', 'FP8_PER_CHANNEL_PER_TOKEN', 'FP8_PB_WO', 'NVFP4']"),
    ("0.16.0", "['FP8', 'FP8_PER_CHANNEL_PER_TOKEN', 'FP8_PB_WO', 'NVFP4', 'MXFP8']"),  # 0.16.x
])
def test_refused_before_017_with_vllms_words(version, algos):
    with pytest.raises(OomkitError) as e:
        _estimate(version)
    assert f"ValueError: ModelOpt currently only supports: {algos}{TAIL}" in str(e.value)


def test_loads_from_017():
    est = _estimate("0.17.0")
    assert est.devices[0].weights_bytes > 0


def test_cli_one_line_exit_2():
    p = subprocess.run([sys.executable, "-m", "oomkit", "check", "--gpu", "H100 80GB", "--engine-version", "0.16.0",
                        "--", "vllm", "serve", MIXED], capture_output=True, text=True, timeout=180)
    assert p.returncode == 2, p.stdout + p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "ModelOpt currently only supports" in lines[0] and "Traceback" not in p.stderr


# a nested hf_quant_config-style MIXED_PRECISION config on a model every release reads (one FP8 module)
NESTED = {"quant_method": "modelopt", "quantization": {
    "quant_algo": "MIXED_PRECISION", "quantized_layers": {"model.layers.0.mlp.down_proj": {"quant_algo": "FP8"}}}}


def _llama(version: str):
    return ENGINE.estimate(spec_of("meta-llama/Llama-3.1-8B-Instruct", NESTED), gpus("H100 80GB", 1),
                           VllmSettings(engine_version=version, max_model_len=4096))


def test_nested_config_refused_in_0_9_2():
    with pytest.raises(OomkitError, match=re.escape(f"ModelOpt currently only supports: ['FP8', 'NVFP4']{TAIL}")):
        _llama("0.9.2")


# 0.6.1-0.7.3 ModelOptFp8Config.from_config: is_checkpoint_fp8_serialized = ("FP8" in quant_algo), else this
# ValueError ("FP8quantization" is vLLM's spelling)
STATIC = ("ModelOpt currently only supports static FP8quantization in vLLM. Please check the `hf_quant_config.json` "
          "file for your model's quant configuration.")


@pytest.mark.parametrize("version", ["0.6.1", "0.7.0", "0.7.3"])
def test_refused_in_0_6_1_to_0_7_3(version):
    with pytest.raises(OomkitError) as e:
        _llama(version)
    assert f"ValueError: {STATIC}" in str(e.value)


def test_refused_before_modelopt():
    with pytest.raises(OomkitError, match="has no ModelOpt quantization"):
        _llama("0.6.0")


# a whole checkpoint in ModelOpt's block FP8 (top-level quant_algo FP8_PB_WO): "FP8" in it passes 0.6.1-0.7.3's
# test, QUANT_ALGOS refuses it in 0.8.0-0.13.x and lists it from 0.14.0
TOP_PBWO = {"quant_method": "modelopt", "quantization": {"quant_algo": "FP8_PB_WO"}}


def _llama_pbwo(version: str):
    return ENGINE.estimate(spec_of("meta-llama/Llama-3.1-8B-Instruct", TOP_PBWO), gpus("H100 80GB", 1),
                           VllmSettings(engine_version=version, max_model_len=4096))


def test_top_level_fp8_pb_wo_is_read_as_modelopt_block_fp8():
    spec = spec_of("meta-llama/Llama-3.1-8B-Instruct", TOP_PBWO)
    assert spec.weights.format == "modelopt-fp8-pb-wo"
    down = next(t for t in spec.weights.tensors if t.name.endswith("blk.0.ffn_down.weight")
                or t.name.endswith("layers.0.mlp.down_proj.weight"))
    n_in, n_out = down.shape  # 14336 -> 4096: one byte a weight, one fp32 scale a 128 x 128 block
    assert down.nbytes == 4096 * 14336 + (4096 // 128) * (14336 // 128) * 4
    assert vllm_quant.checkpoint_quantization(spec) == "modelopt"


@pytest.mark.parametrize("version", ["0.6.1", "0.7.3", "0.14.0", "0.20.0"])
def test_top_level_fp8_pb_wo_loads(version):
    assert _llama_pbwo(version).engine_view["num_gpu_blocks"] > 0


@pytest.mark.parametrize("version,algos", [("0.8.0", "['FP8', 'NVFP4']"), ("0.13.0", "['FP8', 'NVFP4']")])
def test_top_level_fp8_pb_wo_refused_0_8_to_0_13(version, algos):
    with pytest.raises(OomkitError) as e:
        _llama_pbwo(version)
    assert f"ValueError: ModelOpt currently only supports: {algos}{TAIL}" in str(e.value)


# ModelOpt's block FP8 (FP8_PB_WO modules of a MIXED_PRECISION checkpoint) under tensor parallelism. Qwen2.5-14B's
# MLPs in 128 x 128 blocks at TP 8: intermediate 13824 / 8 = 1728 = 13.5 blocks, so gate / up's output slice and
# down's input slice are partial. fp8.py's rule (DeepSeek-style block FP8) refuses the output slice; ModelOpt's:
# 0.17-0.28 build these modules unquantized (no check), 0.29 pads a partial output block and refuses the input
# slice ("ModelOpt FP8_PB_WO requires in_features divisible by 128, got 1728."), 0.30+ likewise in its own words
# ("FP8_PB_WO requires in divisible by 128, got 1728"); modelopt.py ModelOptMixedPrecisionConfig.get_quant_method,
# ModelOptFp8PbWoLinearMethod / KFp8Block128.create_weights.
PBWO = {"quant_method": "modelopt", "quantization": {"quant_algo": "MIXED_PRECISION", "quantized_layers": {
    f"model.layers.{i}.mlp": {"quant_algo": "FP8_PB_WO", "group_size": 128} for i in range(48)}}}


def _qwen14_tp8(version: str):
    return ENGINE.estimate(spec_of("Qwen/Qwen2.5-14B-Instruct", PBWO), gpus("H100 80GB", 8),
                           VllmSettings(engine_version=version, tensor_parallel_size=8, max_model_len=4096))


def test_modelopt_block_fp8_not_checked_before_029():
    est = _qwen14_tp8("0.20.0")
    assert est.engine_view["num_gpu_blocks"] > 0
    assert any("UnquantizedLinearMethod" in w for w in est.warnings)


@pytest.mark.parametrize("version,words", [
    ("0.29.0", "ModelOpt FP8_PB_WO requires in_features divisible by 128, got 1728."),
    ("0.30.0", "FP8_PB_WO requires in divisible by 128, got 1728"),
    ("0.34.0", "FP8_PB_WO requires in divisible by 128, got 1728"),
])
def test_modelopt_block_fp8_input_slice_refused_from_029(version, words):
    with pytest.raises(OomkitError) as e:
        _qwen14_tp8(version)
    assert f"ValueError: {words}" in str(e.value) and "output_partition_size" not in str(e.value)


def test_modelopt_block_fp8_is_ranked_as_fp8_by_plan():
    """plan/quality.py's format words: ModelOpt's top-level FP8_PB_WO checkpoint is an FP8 checkpoint to plan's
    quality ranking, as modelopt-fp8 is."""
    from oomkit.plan.quality import weight_quality

    assert weight_quality("modelopt-fp8-pb-wo") == weight_quality("modelopt-fp8") == weight_quality("fp8")
