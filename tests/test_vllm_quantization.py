"""`--quantization` as vLLM checks it (config/model.py ModelConfig._verify_quantization, model_loader/weight_utils.py
get_quant_config) and the in-flight bitsandbytes layout (model_loader/bitsandbytes_loader.py: quantize_4bit with
compress_statistics=True, quant_type="nf4", the layout unsloth's double-quant nf4 checkpoints store)."""

from __future__ import annotations

import re

import pytest

import oomkit
from oomkit.errors import OomkitError
from oomkit.plan.fit import fit
from oomkit.request import devices_from
from oomkit.units import GiB

# https://github.com/oumi-ai/oumi/pull/1223 (2025-01-24, vLLM 0.6.x V0), the pre-quantized checkpoint
# unsloth/Llama-3.2-1B-Instruct-bnb-4bit, verbatim:
#   INFO 01-24 00:39:50 loader.py:1051] Loading weights with BitsAndBytes quantization.  May take a while ...
#   INFO 01-24 00:39:51 model_runner.py:1067] Loading model weights took 0.9786 GB
OUMI_BNB4_GB = 0.9786  # vLLM's "GB" here is GiB (model_runner.py: consumed_memory / float(2**30))


def _weights(model: str, version: str = "0.6.6", **kw) -> int:
    est = oomkit.estimate(model, "vllm", gpu="A100 80GB", engine_version=version, max_model_len=4096,
                          find_max_context=False, **kw)
    return est.devices[0].weights_bytes


def test_prequantized_nf4_checkpoint_matches_the_log():
    got = _weights("unsloth/Llama-3.2-1B-Instruct-bnb-4bit") / GiB
    assert got == pytest.approx(OUMI_BNB4_GB, rel=0.01)


def test_inflight_bitsandbytes_takes_the_prequantized_layout():
    # the same nf4 + nested absmax layout, quantized from the bf16 checkpoint while loading
    inflight = _weights("meta-llama/Llama-3.2-1B-Instruct", quantization="bitsandbytes") / GiB
    assert inflight == pytest.approx(OUMI_BNB4_GB, rel=0.01)
    assert _weights("meta-llama/Llama-3.2-1B-Instruct") / GiB > 2.2  # bf16 as published: 2.3185 GB in the PR


@pytest.mark.parametrize("model, q, words", [
    ("meta-llama/Llama-3.2-1B-Instruct", "awq", "Cannot find the config file for awq"),
    ("meta-llama/Llama-3.2-1B-Instruct", "gptq_marlin", "Cannot find the config file for gptq_marlin"),
    ("Qwen/Qwen3-32B-AWQ", "gptq", "Quantization method specified in the model config (awq) does not match"),
    ("Qwen/Qwen3-32B-AWQ", "fp8", "does not match the quantization method specified in the `quantization` argument"),
    ("Qwen/Qwen3-32B-AWQ", "bogus", "Unknown quantization method: bogus"),
])
def test_vllm_refuses_a_quantization_the_checkpoint_cannot_take(model, q, words):
    with pytest.raises(OomkitError, match=re.escape(words)):
        _weights(model, quantization=q)


@pytest.mark.parametrize("q", ["awq_marlin", "AWQ", "moe_wna16"])
def test_kernels_that_override_the_checkpoint_method_load_it_as_stored(q):
    # override_quantization_method: awq -> awq_marlin (and moe_wna16); ModelConfig lowers the name
    assert _weights("Qwen/Qwen3-32B-AWQ", quantization=q) == _weights("Qwen/Qwen3-32B-AWQ")


def test_online_fp8_shorthands_store_one_byte_per_linear_weight():
    # 0.27's shorthands (vllm/config/quantization.py) beside the original online fp8
    fp8 = _weights("meta-llama/Llama-3.2-1B-Instruct", "0.27.1", quantization="fp8")
    assert _weights("meta-llama/Llama-3.2-1B-Instruct", "0.27.1", quantization="fp8_per_block") == fp8
    assert fp8 < _weights("meta-llama/Llama-3.2-1B-Instruct", "0.27.1") * 0.75


def test_fit_turns_to_inflight_nf4_only_when_nothing_else_stays_on_the_gpu():
    # Qwen3-14B at 40960 on 24 GiB: an fp8 conversion (with an fp8 cache) keeps it on the GPU, the faster fix
    f = fit(["vllm", "serve", "Qwen/Qwen3-14B", "--max-model-len", "40960"], devices_from("24GiB"))
    assert "--quantization fp8" in " ".join(f.command)
    # Qwen3-32B: 61 GiB in bf16, 32 in fp8; only the in-flight nf4 (about 18 GiB) stays on a 24 GiB card
    f = fit(["vllm", "serve", "Qwen/Qwen3-32B", "--max-model-len", "8192"], devices_from("24GiB"))
    assert f.tier == 1 and "offload" not in f.knobs
    assert "--quantization bitsandbytes" in " ".join(f.command)
