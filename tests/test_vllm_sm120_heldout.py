"""HELD OUT (nothing fitted to it): vllm-project/recipes#810, Qwen3.8-27B on 2 x RTX 5090 (SM 12.0), TP2, 262,144
tokens, vLLM 0.26.1rc1.dev608 (sized as 0.26.0), fixture in tests/fixtures/engine_logs/vllm/heldout_sm120/.

What the printed KV token counts say about the layout on SM 12.0: "GPU KV cache size" is int(max_concurrency x
max_model_len), max_concurrency = num_blocks / the blocks one request takes (kv_cache_utils.py
get_kv_cache_capacity). Each row has one whole-number solution: FP8 491 / 341, Inferact NVFP4 580 / 341, unsloth NVFP4
611 / 174. 341 = cdiv(262,144, 784) + 3 Gated DeltaNet groups x 2 (align mode): 784-token blocks, the block a 16-bit
cache needs for one Mamba state (platforms/interface.py _align_hybrid_block_size); 174 = cdiv(262,144, 1,568) + 6:
1,568-token blocks, the fp8 cache of the recipe's printed command (--kv-cache-dtype fp8, FLASHINFER on SM 12.0 since
FA2 holds no fp8 cache). So the FP8 and Inferact rows ran a 16-bit cache (their commands are not printed), and none
ran speculative blocks. Both take two blocks in each Gated DeltaNet group (mamba_cache_mode "align", prefix caching
on: vLLM's default for hybrid models from 0.28, config.py HYBRID_PREFIX_DEFAULT); before this rule oomkit gave one
(338 / 171 blocks a request) at 0.28+.

| row | figure | printed | oomkit |
|---|---|---|---|
| FP8, 16-bit cache | weights per GPU | 14.28 GiB | 14.27 (-0.1 %) |
| | blocks (page 16 x 1,605,632 B) | 491 | 523 (+6.5 %: 0.82 GB, 2.4 % of the GPU) |
| | KV tokens | 377,456 | 402,056 (+6.5 %) |
| | blocks a request takes | 341 | 341 |
| unsloth NVFP4, fp8 cache | block size / blocks a request takes | 1,568 / 174 | 1,568 / 174 |

The NVFP4 weights are not checked: the Inferact build loads 12.02 GiB a GPU where a uniform NVFP4 checkpoint is
9.3 (its unquantized layers are not known), unsloth's is mixed with FP8 channel-wise layers.
"""

from __future__ import annotations

import json
from pathlib import Path

from oomkit.engines.vllm import ENGINE, VllmSettings
from oomkit.engines.vllm.config import resolve
from oomkit.engines.vllm.kv import kv_plan
from oomkit.units import GiB
from tests.test_startup_heldout3 import FP8_BLOCK, NVFP4, gpus
from tests.test_vllm_startup import spec_of

FIXTURE = Path(__file__).parent / "fixtures" / "engine_logs" / "vllm" / "heldout_sm120" / \
    "qwen3.8-27b-fp8-nvfp4-2x-rtx5090-tp2-262144-recipes810.json"
RTX5090 = "NVIDIA GeForce RTX 5090"
MAX_LEN = 262_144
WEIGHTS_LIMIT = 0.03  # of the printed load
KV_LIMIT = 0.03  # of the GPU's memory


def _printed() -> dict:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))["printed"]


def _run(qc: dict, kv: str):
    spec = spec_of("Qwen/Qwen3.8-27B", qc)
    devices = gpus(RTX5090, 2)
    # the printed counts take two blocks in each Gated DeltaNet group: mamba_cache_mode "align", prefix caching on
    # (the default from 0.28; the dev build's own default or the runs' flag, not printed)
    s = VllmSettings(engine_version="0.26.0", tensor_parallel_size=2, max_model_len=MAX_LEN, kv_cache_dtype=kv,
                     enable_prefix_caching=True)
    est = ENGINE.estimate(spec, devices, s)
    plan = kv_plan(spec, s, resolve(spec, devices, s))
    return est.engine_view, plan, devices


def test_fp8_checkpoint_weights_blocks_and_tokens():
    printed = _printed()["fp8"]
    view, plan, devices = _run(FP8_BLOCK, "auto")
    weights = next(iter(view["model_loading_bytes"].values())) / GiB
    assert abs(weights - printed["weights_gib"]) / printed["weights_gib"] < WEIGHTS_LIMIT, weights
    assert view["block_size"] == 784
    assert plan.blocks_per_request(MAX_LEN, view["max_num_batched_tokens"]) == 341
    blocks = view["num_gpu_blocks"]
    assert abs(blocks - 491) * plan.bytes_per_block / devices[0].memory_bytes < KV_LIMIT, blocks


def test_fp8_cache_doubles_the_block_on_sm120():
    # the unsloth row's printed command: --kv-cache-dtype fp8 -> 1,568-token blocks, 174 blocks a request
    _, plan, _ = _run(NVFP4, "fp8")
    assert plan.block_size == 1568 and plan.blocks_per_request(MAX_LEN, 2048) == 174
