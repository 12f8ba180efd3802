"""vLLM's default batch on a DGX Spark (GB10, SM 12.1): the small tier, 256 sequences and 2,048 batched tokens under
`vllm serve`, although the part has about 120 GiB (engine/arg_utils.py get_batch_defaults; config.py _batch_defaults).

Up to 0.32 get_batch_defaults reads the memory through NVML (platforms/cuda.py NvmlCudaPlatform.get_device_total_memory,
nvmlDeviceGetMemoryInfo), which the GB10 does not implement (NVML_ERROR_NOT_SUPPORTED; nvidia-smi prints "Not
Supported"): its except sets device_memory = 0. From 0.33 the query falls back to torch's total_memory and the function
keeps the part off the large tiers itself (is_gb10 = current_platform.is_device_capability((12, 1))). Real log:
vllm#30855 (https://github.com/vllm-project/vllm/issues/30855), vLLM 0.12.0 on one GB10, `vllm serve
RedHatAI/Qwen3-30B-A3B-NVFP4 --port 8002 --gpu-memory-utilization 0.7`, prints "Chunked prefill is enabled with
max_num_batched_tokens=2048" (tests/fixtures/engine_logs/vllm/heldout5/qwen3-30b-a3b-nvfp4-gb10-v0.12.0-util070-
issue30855.json); the same branch sets max_num_seqs 256. oomkit took the >= 70 GiB tier (1,024 and 8,192) before.
"""

from __future__ import annotations

import re
import shlex

import pytest

from oomkit.engines.vllm import ENGINE, VllmSettings
from oomkit.engines.vllm.args import parse_args
from tests.startup_heldout import gpus
from tests.test_vllm_heldout5 import NVFP4_CT, QWEN3_NVFP4_GB10, fixture
from tests.test_vllm_startup import spec_of


def _printed_batched_tokens(fx: dict) -> int:
    m = re.search(r"Chunked prefill is enabled with max_num_batched_tokens=(\d+)", fx["quoted"])
    assert m, "the log's scheduler line"
    return int(m.group(1))


def _gb10_run(version: str, gpu: str = "NVIDIA GB10", **kw):
    fx = fixture(QWEN3_NVFP4_GB10)
    _, _, settings = parse_args(shlex.split(fx["command"])[1:], env={})
    settings = VllmSettings(**{**settings.to_dict(), "engine_version": version, **kw})
    return ENGINE.estimate(spec_of("Qwen/Qwen3-30B-A3B", NVFP4_CT), gpus(gpu, 1), settings).settings


def test_gb10_serve_defaults_as_printed_by_0_12():
    fx = fixture(QWEN3_NVFP4_GB10)
    got = _gb10_run("0.12.0")
    assert got["max_num_batched_tokens"] == _printed_batched_tokens(fx) == 2048
    assert got["max_num_seqs"] == 256  # the same branch of get_batch_defaults (was 1,024)


@pytest.mark.parametrize("version", ["0.27.1", "0.32.0", "0.33.0", "0.34.0"])
def test_gb10_stays_on_the_small_tier(version):
    got = _gb10_run(version)
    assert (got["max_num_seqs"], got["max_num_batched_tokens"]) == (256, 2048)


def test_gb10_llm_class_defaults():
    got = _gb10_run("0.27.1", usage_context="llm")
    assert (got["max_num_seqs"], got["max_num_batched_tokens"]) == (256, 8192)


@pytest.mark.parametrize("gpu, version, expected", [
    ("H100", "0.12.0", (1024, 8192)),  # >= 70 GiB and not an A100
    ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "0.27.1", (1024, 8192)),
    ("NVIDIA B200", "0.28.0", (1024, 16384)),  # >= 160 GiB from 0.28
])
def test_discrete_parts_keep_their_tiers(gpu, version, expected):
    got = _gb10_run(version, gpu=gpu)
    assert (got["max_num_seqs"], got["max_num_batched_tokens"]) == expected
