"""Held-out vLLM start-up logs, fifth set (tests/fixtures/engine_logs/vllm/heldout5/): multimodal and quantized
checkpoints on 0.11-0.20 releases, from public issues none of the earlier sets cite. No constant in oomkit was fitted
on any of them; each figure was measured at dfcc1f4, before this file; the one rule they led to (below) left them
where they were; the Qwen3-VL rows are as measured after the catalog's Qwen3-VL configs gained their rope_scaling
and the deepstack buffers were counted (below).
Limits: weights per rank 3 % of the printed load, the KV budget 3 % of the GPU's memory, tokens 3 %.

| log | release | GPUs | model | figure | printed | oomkit | error |
|---|---|---|---|---|---|---|---|
| QwenLM/Qwen3-VL#1589 | 0.11.0 | 4 GPUs (not named), TP4 | Qwen3-VL-30B-A3B, --dtype half | weights per rank | 14.7711 GiB | 14.7598 | -0.08 % |
| QwenLM/Qwen3-VL#1622 | 0.11.0 | 2 GPUs (48 GB), TP2 + EP, --mm-encoder-tp-mode data | Qwen3-VL-30B-A3B | weights per rank | 29.7350 GiB | 29.7239 | -0.04 % |
| vllm#30855 | 0.12.0 | GB10 (Dell Pro Max), 0.70 | RedHatAI Qwen3-30B-A3B-NVFP4 (compressed-tensors) | weights | 16.8589 GiB | 16.8550 | -0.02 % |
| vllm#41789 | 0.20.2rc1.dev49 | L40S, 0.92, 32,768, fp8 KV | RedHatAI Gemma-4-26B-A4B-it-FP8-Dynamic + MTP drafter | available KV | 11.67 GiB | 13.74 | +4.61 % of the GPU: strict xfail (12.44, +1.70 %, before --language-model-only was modelled) |
| | | | | KV tokens | 193,624 | 228,109 | +17.8 % (the budget's +2.07 GiB) |
| | | | | KV tokens from the printed budget | 193,624 | 193,700 | +0.04 % |
| | | | | estimated CUDA graphs | 0.27 GiB | 0.45 | +0.39 % of the GPU |
| | | | | verdict | starts | starts | agrees |

The two Qwen3-VL runs missed by the same 0.222 GiB per rank at TP4 and at TP2: a term that does not shrink with TP,
not a share of a sharded or replicated tensor (which would differ by TP), so the encoder's mode is not what is
missing. Without --mm-encoder-tp-mode data the TP2 load would be 29.01 GiB (-2.43 %): the data mode (weights.py
ENCODER_TP_DATA, PR #23190) is what brings it to -0.75 %. Read in the 0.11.0 wheel, two load-time tensors hold
it: (1) rotary_embedding/mrope.py MRotaryEmbedding.__init__ caches cos/sin for max_position_embeddings * 4
positions ("In Qwen2.5-VL, the maximum index value is related to the duration of the input video"), 262,144 x 4 x
128 x 2 B = 0.25 GiB where oomkit counted one position factor (0.0625 GiB): 0.1875 GiB; (2) models/qwen3_vl.py
__init__ allocates the deepstack buffers, 3 x max_num_batched_tokens x 2,048 x 2 B (0.023 GiB at 2,048 tokens).
The rule that came of it: weights.py _rope_cache_bytes counts an M-RoPE model's cache as max_position x 4 x
rotary_dim (head_dim x partial_rotary_factor) from 0.8.0 (settings.ERAS mrope_cache_x4; read in the 0.8.0-0.31.0
wheels, not in 0.5.4), and from 0.32 (ERAS mrope_factor_per_model) x 1 for Qwen3-VL, Qwen3-VL-MoE and Qwen3.5,
whose decoder layers pass models/qwen3_vl.py mrope_positions_factor (1 without video pruning). It left these two
logs where they were at first: the catalog's Qwen3-VL-30B-A3B config (aiconfigurator's copy) carried no rope_scaling,
so oomkit did not see M-RoPE there; with the checkpoint's rope_scaling (mrope_section [24, 20, 20], interleaved, read
from a verbatim copy of its config.json) added to the catalog entry they move from -1.50 % to -0.24 % (TP4) and from
-0.75 % to -0.12 % (TP2); the 0.035 GiB per rank left at both is of the order of the
deepstack buffers ((2) above), still the same at TP4 and TP2. It moves vllm#16570 (Qwen2.5-VL-72B, TP4, 0.8.3,
tests/test_startup_heldout3.py) from -0.63 % to -0.37 %; Qwen3.5 and 3.6 (partial_rotary_factor 0.25, head_dim 256)
keep 0.125 GiB up to 0.31 and drop to 0.03 GiB from 0.32.

The deepstack buffers ((2) above), read in every wheel from 0.11.0 (Qwen3-VL's first) to 0.34.0: models/qwen3_vl.py
and qwen3_vl_moe.py __init__ (qwen3_omni_moe_thinker.py from 0.11.1) keep one torch.zeros(max_num_batched_tokens,
text hidden_size) per deepstack_visual_indexes entry, built under the loader's default dtype and device
(model_loader/base_loader.py set_default_torch_dtype, `with target_device`) inside gpu_model_runner.load_model's
DeviceMemoryProfiler: part of "Model loading took", the same on every TP rank. They are still there in 0.34.0 (moved
out of _mark_tower_model's context in 0.28, allocated only where the tower is built). weights.py _deepstack_bytes
counts them (settings.ERAS deepstack_buffers, tower_marked, tower_first_stage_v2, tower_first_stage). Their size
follows max_num_batched_tokens, so the GPU now matters: vllm serve's 0.11 default is 2,048 tokens on a GPU under 70
GiB (or an A100) and 8,192 above (engine/arg_utils.py _set_default_args). #1622's author describes 48 GB GPUs
(QwenLM/Qwen3-VL#1796): an L40S stands in, 2,048 tokens, +0.0234 GiB: -0.12 % -> -0.04 %. #1589 names none; its
--dtype half points to a part without bf16 (V100 class, under 70 GiB), which stands in: -0.24 % -> -0.08 %; on an
80 GB part other than an A100 (8,192 tokens, +0.094 GiB) it would read +0.40 %, inside the limit too and tested as
such. 0.011 GiB per rank is left at both, the same at TP4 and TP2. The sharded-encoder TP2 load is 29.22 GiB (-1.72 %).

vllm#41789: the command carries --language-model-only and a separate drafter. The first is modelled (args.py:
config/multimodal.py get_limit_per_prompt answers 0 for every modality from 0.17, read in 0.17.0, 0.20.0 and 0.21.0,
so _mark_tower_model leaves the vision tower out of the load); the drafter's weights are not (named in the
estimate's warnings, args.py _unmodelled: google/gemma-4-26B-A4B-it-assistant's config is not in the catalog and its
class is in no released vLLM source read here), which leaves the budget 2.07 GiB above the printed one (+4.61 % of
the GPU, a strict xfail); with the tower counted the two errors had offset (+0.77 GiB, +1.70 %). The full-run token count follows
the budget (+6.6 %), so the count is held from the printed budget (--kv-cache-memory-bytes set to it), which tests
the KV layout alone: Gemma 4's sliding-window and full-attention groups at fp8, +76 tokens.

Not held: vllm#26612 (Qwen3-VL-30B-A3B on one A800-SXM4-80GB, 0.11.0, "Available KV cache memory: 13.69 GiB" and a
refusal) prints neither the command nor the utilization; vllm#43308 (Gemma 4 31B AWQ on an A100, 0.20.0 vs 0.21.0)
gives only rounded figures ("~55k", "~525k" tokens, "~50 GB") without the command's max_model_len, which a
sliding-window model's token count depends on.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from oomkit.engines.vllm import ENGINE, VllmSettings
from oomkit.engines.vllm.args import parse_args
from oomkit.engines.vllm.config import resolve
from oomkit.engines.vllm.weights import _deepstack_bytes as deepstack_bytes
from oomkit.engines.vllm.weights import tower_built, tower_on_stage
from oomkit.units import GiB
from tests.startup_heldout import first, fixture_loader, gpus
from tests.test_vllm_startup import spec_of

HERE = Path(__file__).parent / "fixtures" / "engine_logs" / "vllm" / "heldout5"
fixture = fixture_loader(HERE)
WEIGHTS_LIMIT = 0.03  # of the printed load
KV_LIMIT = 0.03  # of the GPU's memory
TOKENS_LIMIT = 0.03

QWEN3VL_TP4 = "qwen3-vl-30b-a3b-tp4-v0.11.0-fp16-qwen3vl1589"
QWEN3VL_TP2_EP = "qwen3-vl-30b-a3b-tp2-ep-encoder-data-v0.11.0-qwen3vl1622"
QWEN3_NVFP4_GB10 = "qwen3-30b-a3b-nvfp4-gb10-v0.12.0-util070-issue30855"
GEMMA4_L40S = "gemma-4-26b-a4b-fp8-dynamic-l40s-mtp-v0.20.2-util092-32768-issue41789"

# RedHatAI/Qwen3-30B-A3B-NVFP4: llm-compressor's NVFP4 scheme (FP4 weights and activations in 16-value groups, FP8
# group scales) on every Linear; lm_head and the MoE router gates in bf16 (an assumption: the issue prints no
# quantization_config; the gates' fallback is the log's "non-quantized schemes" warning)
NVFP4_CT = {"quant_method": "compressed-tensors", "format": "nvfp4-pack-quantized",
            "config_groups": {"group_0": {"targets": ["Linear"],
                                          "weights": {"num_bits": 4, "type": "float", "group_size": 16,
                                                      "strategy": "tensor_group", "symmetric": True},
                                          "input_activations": {"num_bits": 4, "type": "float", "group_size": 16,
                                                                "strategy": "tensor_group", "dynamic": "local"}}},
            "ignore": ["lm_head"] + [f"model.layers.{i}.mlp.gate" for i in range(48)]}

# RedHatAI/gemma-4-26B-A4B-it-FP8-Dynamic: llm-compressor's FP8-Dynamic scheme (FP8 weights per output channel,
# dynamic per-token FP8 activations) on every Linear, lm_head in bf16 (an assumption: not printed)
FP8_DYNAMIC_CT = {"quant_method": "compressed-tensors", "format": "float-quantized",
                  "config_groups": {"group_0": {"targets": ["Linear"],
                                                "weights": {"num_bits": 8, "type": "float", "strategy": "channel",
                                                            "symmetric": True, "dynamic": False},
                                                "input_activations": {"num_bits": 8, "type": "float",
                                                                      "strategy": "token", "dynamic": True,
                                                                      "symmetric": True}}},
                  "ignore": ["lm_head"]}


def weights_error(stem: str, est) -> float:
    printed = fixture(stem)["printed"]["model_loading_gib"] * GiB
    return (first(est.engine_view, "model_loading_bytes") - printed) / printed


# ---------------------------------------------------------------------------------------------------------------
# Qwen3-VL-30B-A3B, vLLM 0.11.0: TP4 (QwenLM/Qwen3-VL#1589) and TP2 with expert parallel and a data-parallel
# encoder (QwenLM/Qwen3-VL#1622). The GPUs are not named; the load depends on them through max_num_batched_tokens
# (the deepstack buffers): #1622's author describes 48 GB GPUs (an L40S stands in); #1589 serves --dtype half, which
# points to a GPU without bf16 under 70 GiB (a V100 32GB stands in); both take vllm serve's 2,048 tokens
TP4_GPU, TP2_GPU = "V100 32GB", "L40S"


def _qwen3vl(gpu: str | None = None, **kw):
    tp = kw["tensor_parallel_size"]
    return ENGINE.estimate(spec_of("Qwen/Qwen3-VL-30B-A3B-Instruct"), gpus(gpu or (TP4_GPU if tp == 4 else TP2_GPU), tp),
                           VllmSettings(engine_version="0.11.0", **kw))


def test_qwen3_vl_30b_a3b_tp4_weights_per_rank():
    err = weights_error(QWEN3VL_TP4, _qwen3vl(tensor_parallel_size=4, dtype="float16", gpu_memory_utilization=0.9))
    assert abs(err) < WEIGHTS_LIMIT, f"{err:+.2%}"  # -0.08 % (-0.24 % before the deepstack buffers, -1.50 % before M-RoPE)
    # on an 80 GB GPU other than an A100 vllm serve batches 8,192 tokens: buffers of 0.094 GiB, +0.40 %
    big = _qwen3vl("A800 80GB", tensor_parallel_size=4, dtype="float16", gpu_memory_utilization=0.9)
    err = weights_error(QWEN3VL_TP4, big)
    assert abs(err) < WEIGHTS_LIMIT, f"{err:+.2%}"


def test_qwen3_vl_30b_a3b_tp2_ep_data_encoder_weights_per_rank():
    est = _qwen3vl(tensor_parallel_size=2, enable_expert_parallel=True, mm_encoder_tp_mode="data",
                   max_model_len=10000)
    err = weights_error(QWEN3VL_TP2_EP, est)
    assert abs(err) < WEIGHTS_LIMIT, f"{err:+.2%}"  # -0.04 % (-0.12 % before the deepstack buffers, -0.75 % before M-RoPE)
    # the whole vision encoder on each rank (--mm-encoder-tp-mode data): sharded it would be 29.22 GiB (-1.72 %)
    sharded = _qwen3vl(tensor_parallel_size=2, enable_expert_parallel=True, max_model_len=10000)
    assert first(sharded.engine_view, "model_loading_bytes") < first(est.engine_view, "model_loading_bytes")
    assert abs(err) < abs(weights_error(QWEN3VL_TP2_EP, sharded))


def test_qwen3_vl_miss_does_not_scale_with_tp():
    # the same 0.222 GiB short at TP4 and TP2 before the M-RoPE cache (0.035 GiB after it, 0.011 GiB after the
    # deepstack buffers): a per-rank term, not a TP share
    tp4 = fixture(QWEN3VL_TP4)["printed"]["model_loading_gib"] * GiB - first(
        _qwen3vl(tensor_parallel_size=4, dtype="float16").engine_view, "model_loading_bytes")
    tp2 = fixture(QWEN3VL_TP2_EP)["printed"]["model_loading_gib"] * GiB - first(
        _qwen3vl(tensor_parallel_size=2, enable_expert_parallel=True, mm_encoder_tp_mode="data",
                 max_model_len=10000).engine_view, "model_loading_bytes")
    assert abs(tp4 - tp2) < 0.01 * GiB, (tp4 / GiB, tp2 / GiB)


# ---------------------------------------------------------------------------------------------------------------
# vllm#30855: RedHatAI/Qwen3-30B-A3B-NVFP4 on one GB10, vLLM 0.12.0 (the run dies later on a missing kernel image)


def test_qwen3_30b_a3b_nvfp4_gb10_weights():
    est = ENGINE.estimate(spec_of("Qwen/Qwen3-30B-A3B", NVFP4_CT), gpus("NVIDIA GB10", 1),
                          VllmSettings(engine_version="0.12.0", gpu_memory_utilization=0.7))
    err = weights_error(QWEN3_NVFP4_GB10, est)
    assert abs(err) < WEIGHTS_LIMIT, f"{err:+.2%}"  # -0.02 %


# ---------------------------------------------------------------------------------------------------------------
# vllm#41789: RedHatAI/gemma-4-26B-A4B-it-FP8-Dynamic on one L40S with Gemma 4's MTP drafter, 0.20.2rc1.dev49


def _gemma4(**kw):
    _, _, settings = parse_args(list(fixture(GEMMA4_L40S)["argv"]), env={})
    settings = dataclasses.replace(settings, engine_version="0.20.2", **kw)
    return ENGINE.estimate(spec_of("google/gemma-4-26B-A4B-it", FP8_DYNAMIC_CT), gpus("NVIDIA L40S", 1), settings)


@pytest.mark.xfail(strict=True, reason="available KV 13.74 GiB against the printed 11.67 (+4.61 % of the GPU): "
                   "the separate drafter google/gemma-4-26B-A4B-it-assistant's weights are not counted (its config is "
                   "not in the catalog, its class not in a released vLLM source read here); before --language-model-only "
                   "dropped the vision tower the two errors offset (12.44 GiB, +1.70 %)")
def test_gemma4_26b_fp8_l40s_available_kv():
    est = _gemma4()
    printed = fixture(GEMMA4_L40S)["printed"]
    kv = (first(est.engine_view, "available_kv_cache_bytes") - printed["available_kv_cache_gib"] * GiB) \
        / est.devices[0].memory_bytes
    assert abs(kv) < KV_LIMIT, f"available KV {kv:+.2%} of the GPU"  # +4.61 %


def test_gemma4_26b_fp8_l40s_graphs_and_verdict():
    est = _gemma4()
    printed = fixture(GEMMA4_L40S)["printed"]
    v = est.engine_view
    graphs = (first(v, "cudagraph_bytes") - printed["estimated_cudagraph_gib"] * GiB) / est.devices[0].memory_bytes
    assert abs(graphs) < KV_LIMIT, f"CUDA graphs {graphs:+.2%} of the GPU"  # 0.45 GiB against 0.27: +0.39 %
    assert est.fits is True and not v.get("failed_phase"), (v.get("error"), v.get("failed_phase"))
    # --language-model-only is modelled (every modality 0: the tower left out); the drafter is said, not dropped
    said = " ".join(est.warnings)
    assert "--language-model-only" not in said and "google/gemma-4-26B-A4B-it-assistant" in said, said
    _, _, s = parse_args(list(fixture(GEMMA4_L40S)["argv"]), env={})
    s = dataclasses.replace(s, engine_version="0.20.2")
    spec = spec_of("google/gemma-4-26B-A4B-it", FP8_DYNAMIC_CT)
    assert spec.towers and not any(tower_built(t, s, resolve(spec, gpus("NVIDIA L40S", 1), s)) for t in spec.towers)


def test_gemma4_26b_fp8_l40s_tokens_from_the_printed_budget():
    printed = fixture(GEMMA4_L40S)["printed"]
    v = _gemma4(kv_cache_memory_bytes=round(printed["available_kv_cache_gib"] * GiB)).engine_view
    err = (v["kv_cache_tokens"] - printed["kv_cache_tokens"]) / printed["kv_cache_tokens"]
    assert abs(err) < TOKENS_LIMIT, (v["kv_cache_tokens"], printed["kv_cache_tokens"])  # 193,700: +0.04 %


# ---------------------------------------------------------------------------------------------------------------
# M-RoPE's cos/sin cache (rotary_embedding/mrope.py MRotaryEmbedding; settings.ERAS mrope_cache_x4,
# mrope_factor_per_model)


def _load(model: str, version: str) -> int:
    est = ENGINE.estimate(spec_of(model), gpus("H100", 1), VllmSettings(engine_version=version, max_model_len=4096))
    return first(est.engine_view, "model_loading_bytes")


def test_mrope_is_read_from_the_rope_dict():
    q25 = spec_of("Qwen/Qwen2.5-VL-7B-Instruct").rope_scaling  # "type": "mrope", "mrope_section": [16, 24, 24]
    assert q25.mrope and q25.partial_rotary_factor is None
    q35 = spec_of("Qwen/Qwen3.5-27B").rope_scaling  # rope_parameters with mrope_section, partial_rotary_factor 0.25
    assert q35.mrope and q35.partial_rotary_factor == 0.25
    assert not spec_of("Qwen/Qwen3-8B").rope_scaling or not spec_of("Qwen/Qwen3-8B").rope_scaling.mrope


def test_mrope_cache_spans_four_times_the_positions_from_0_8():
    # Qwen2.5-VL-7B: 128,000 positions x 128 x 2 B, x 4 from 0.8.0 (not read before; 0.5.4 has x 1); the caching
    # allocator holds the 31.25 MiB cache as its 32 MiB segment and the 125 MiB one as 126 MiB (tails of 1 MiB or
    # less are not split off): 0.25 MiB more between the two
    assert _load("Qwen/Qwen2.5-VL-7B-Instruct", "0.8.0") - _load("Qwen/Qwen2.5-VL-7B-Instruct", "0.7.3") \
        == 3 * 128000 * 128 * 2 + (1 << 20) - (768 << 10)
    # ... and keeps x 4 from 0.32 (get_rope's default mrope_positions_factor)
    assert _load("Qwen/Qwen2.5-VL-7B-Instruct", "0.32.0") == _load("Qwen/Qwen2.5-VL-7B-Instruct", "0.31.0")


def test_qwen3_vl_and_qwen35_pass_factor_one_from_0_32():
    # models/qwen3_vl.py mrope_positions_factor: 1 without video pruning. Qwen3-VL-32B: 262,144 x 128 x 2 B;
    # Qwen3.5-27B rotates 64 of its 256 head dims (partial_rotary_factor 0.25)
    assert _load("Qwen/Qwen3-VL-32B-Instruct", "0.31.0") - _load("Qwen/Qwen3-VL-32B-Instruct", "0.32.0") \
        == 3 * 262144 * 128 * 2
    assert _load("Qwen/Qwen3.5-27B", "0.31.0") - _load("Qwen/Qwen3.5-27B", "0.32.0") == 3 * 262144 * 64 * 2


# ---------------------------------------------------------------------------------------------------------------
# Deepstack input buffers (models/qwen3_vl.py, qwen3_vl_moe.py, qwen3_omni_moe_thinker.py __init__; settings.ERAS
# deepstack_buffers, tower_marked, tower_first_stage_v2, tower_first_stage)

NO_MM = (("image", 0), ("video", 0))


def _loads(model: str, version: str, **kw) -> tuple[int, ...]:
    est = ENGINE.estimate(spec_of(model), gpus("H100", kw.get("pipeline_parallel_size", 1)),
                          VllmSettings(engine_version=version, max_model_len=4096, max_num_batched_tokens=4096, **kw))
    return tuple(est.engine_view["model_loading_bytes"].values())


def _deepstack(model: str, version: str, **kw) -> tuple[int, ...]:
    """What the tower's absence (image and video limited to 0) takes off each rank's load, less its weights
    (weights.tower_built, tower_on_stage): the buffers alone."""
    spec, pp = spec_of(model), kw.get("pipeline_parallel_size", 1)

    def towers(limits) -> int:
        s = VllmSettings(engine_version=version, max_model_len=4096, max_num_batched_tokens=4096,
                         limit_mm_per_prompt=limits, **kw)
        r = resolve(spec, gpus("H100", pp), s)
        return sum(t.nbytes(r.dtype_bytes) for t in spec.towers if tower_built(t, s, r))

    r = resolve(spec, gpus("H100", pp), VllmSettings(engine_version=version, max_model_len=4096, **kw))
    weights = towers(None) - towers(NO_MM)
    return tuple(a - b - (weights if tower_on_stage(r, stage == 0) else 0)
                 for stage, (a, b) in enumerate(zip(_loads(model, version, **kw),
                                                    _loads(model, version, limit_mm_per_prompt=NO_MM, **kw),
                                                    strict=True)))


@pytest.mark.parametrize("version", ["0.11.0", "0.15.1", "0.27.0", "0.34.0"])
def test_deepstack_buffers_levels_x_batched_tokens_x_hidden(version):
    # Qwen3-VL-8B: deepstack_visual_indexes [8, 16, 24], text hidden_size 4096, bf16: 3 x 4,096 x 4,096 x 2 B
    assert _deepstack("Qwen/Qwen3-VL-8B-Instruct", version) == (3 * 4096 * 4096 * 2,)
    # none before Qwen3-VL's first release
    assert _deepstack("Qwen/Qwen3-VL-8B-Instruct", "0.10.2") == (0,)


def test_deepstack_buffers_follow_max_num_batched_tokens_not_tp():
    def load(tp: int, tokens: int) -> int:
        est = ENGINE.estimate(spec_of("Qwen/Qwen3-VL-30B-A3B-Instruct"), gpus("H100", tp),
                              VllmSettings(engine_version="0.11.0", tensor_parallel_size=tp, max_model_len=4096,
                                           max_num_batched_tokens=tokens))
        return first(est.engine_view, "model_loading_bytes")
    # 3 levels x 2,048 hidden x 2 B per token, the same on every TP rank
    assert load(1, 8192) - load(1, 2048) == 3 * 6144 * 2048 * 2
    assert load(4, 8192) - load(4, 2048) == 3 * 6144 * 2048 * 2


def test_qwen35_has_no_deepstack_levels():
    # Qwen3.5 / 3.6 inherit Qwen3VLForConditionalGeneration with deepstack_visual_indexes []: an empty list
    assert _deepstack("Qwen/Qwen3.5-27B", "0.27.0") == (0,)


def test_deepstack_buffers_under_pipeline_parallel_by_release():
    # the tower (and its buffers) on every stage up to 0.32; models/interfaces.py _mark_tower_model skips the stages
    # after the first with model runner V2 in 0.33 (Qwen3-VL runs V2 there) and with every runner from 0.34
    one = 3 * 4096 * 4096 * 2
    assert _deepstack("Qwen/Qwen3-VL-8B-Instruct", "0.32.0", pipeline_parallel_size=2) == (one, one)
    assert _deepstack("Qwen/Qwen3-VL-8B-Instruct", "0.33.0", pipeline_parallel_size=2) == (one, 0)
    assert _deepstack("Qwen/Qwen3-VL-8B-Instruct", "0.34.0", pipeline_parallel_size=2) == (one, 0)


def test_qwen3_omni_thinker_builds_its_buffers_whatever_the_limits_before_0_15():
    # qwen3_omni_moe_thinker.py 0.11.1-0.14: the tower and the buffers unconditionally; from 0.15 inside
    # _mark_tower_model. Thinker text hidden_size 2048, [8, 16, 24]
    one = 3 * 4096 * 2048 * 2
    assert _deepstack("Qwen/Qwen3-Omni-30B-A3B-Instruct", "0.14.0") == (0,)
    assert _deepstack("Qwen/Qwen3-Omni-30B-A3B-Instruct", "0.15.1") == (one,)
    spec = spec_of("Qwen/Qwen3-Omni-30B-A3B-Instruct")
    for version in ("0.14.0", "0.15.1"):
        s = VllmSettings(engine_version=version, max_model_len=4096, max_num_batched_tokens=4096,
                         limit_mm_per_prompt=NO_MM)
        held = deepstack_bytes(spec, s, resolve(spec, gpus("H100", 1), s), True)
        assert held == (one if version == "0.14.0" else 0), version


# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", sorted(HERE.glob("*.json")), ids=lambda p: p.stem)
def test_fixtures_are_cited(path):
    fx = json.loads(path.read_text(encoding="utf-8"))
    assert fx["source"].startswith("https://github.com/"), path.name
    assert fx["quoted"] and fx["command"] and fx["gpus"] and fx["engine_version"] and fx["printed"], path.name
    for value in fx["printed"].values():  # every printed figure is in the quoted lines
        shown = f"{value:,}" if isinstance(value, int) else f"{value}"
        assert shown in fx["quoted"] or shown.rstrip("0") in fx["quoted"], (path.name, value)
