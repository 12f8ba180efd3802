"""vLLM's model runner V2 (v1/worker/gpu/model_runner.py) against the source's own arithmetic and one public A/B.

Which models run it, read in the wheels 0.21.0-0.34.0 (config/vllm.py VllmConfig.use_v2_model_runner,
_is_default_v2_model_runner_model, DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES), and what it holds that the V1 runner does
not (sample/penalties.py, structured_outputs.py, sample/sampler.py, gpu/warmup.py, gpu/mm/encoder_runner.py,
profile_cudagraph_memory). No start-up log of a V2-runner run is among tests/fixtures/engine_logs/vllm (the 0.22-0.24
logs there are Qwen3.5 / 3.6 hybrids, which those releases keep on V1), so the expected figures below are worked by
hand from the source's formulas; the one public figure is the V1-vs-V2 difference of vllm#50159.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from oomkit.engines.vllm import ENGINE, VllmSettings
from oomkit.engines.vllm.args import parse_args
from oomkit.engines.vllm.config import resolve
from oomkit.engines.vllm.encoder import encoder_profile
from oomkit.engines.vllm.phases import sampler_warmup_bytes
from oomkit.engines.vllm.profile import cudagraphs_in_budget, runner_state_bytes, sampler_bytes
from oomkit.errors import SettingsError
from oomkit.hardware.catalog import with_facts
from oomkit.memory import Device
from oomkit.model.catalog import lookup
from oomkit.model.hf_config import spec_from_config
from oomkit.units import GiB, MiB

H100 = (with_facts(Device("CUDA0", "NVIDIA H100 80GB HBM3", 81559 * MiB)),)


def _spec(name: str):
    entry = lookup(name)
    return spec_from_config(entry.config, name=entry.name)


def _v2(name: str, version: str, **kw) -> bool:
    return resolve(_spec(name), H100, VllmSettings(engine_version=version, **kw)).runner_v2


@pytest.mark.parametrize("model, version, kw, expected", [
    ("qwen3-8b", "0.21.0", {}, False),  # opt-in only (envs.py VLLM_USE_V2_MODEL_RUNNER default "0")
    ("qwen3-8b", "0.21.0", {"use_v2_model_runner": True}, True),
    ("qwen3-8b", "0.22.0", {}, True),  # DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES = {"Qwen3ForCausalLM"}
    ("qwen3-8b", "0.22.0", {"quantization": "fp8"}, False),  # "not model_config.is_quantized" (0.22-0.23)
    ("qwen3-8b", "0.24.0", {"quantization": "fp8"}, True),  # 0.24: the list alone
    ("qwen3-8b", "0.25.0", {"use_v2_model_runner": False}, False),
    ("llama-3.1-8b-instruct", "0.22.0", {}, False),
    ("llama-3.1-8b-instruct", "0.23.0", {}, True),  # LlamaForCausalLM joins
    ("mixtral-8x7b-instruct-v0.1", "0.24.0", {}, False),  # MixtralForCausalLM: not listed, MoE
    ("mixtral-8x7b-instruct-v0.1", "0.29.0", {}, True),  # 0.29: every model
    ("gemma-2-2b-it", "0.24.0", {}, False),
    ("gemma-2-2b-it", "0.25.0", {}, True),  # 0.25: "... or not model_config.is_moe"
    ("gemma-3-4b-it", "0.25.0", {}, True),
    ("qwen3-30b-a3b", "0.28.0", {}, False),  # Qwen3MoeForCausalLM never listed
    ("qwen3-30b-a3b", "0.29.0", {}, True),
    ("qwen1.5-moe-a2.7b-chat", "0.23.0", {}, False),
    ("qwen1.5-moe-a2.7b-chat", "0.24.0", {}, True),  # Qwen2MoeForCausalLM listed from 0.24
    ("deepseek-v2-lite-chat", "0.24.0", {}, True),  # DeepseekV2ForCausalLM listed from 0.24
    ("qwen3-next-80b-a3b-instruct", "0.27.0", {}, False),  # hybrid, not listed ("is_hybrid" check)
    ("qwen3-next-80b-a3b-instruct", "0.29.0", {}, True),
    ("bge-m3", "0.29.0", {}, False),  # a pooling model: runner_type "generate" only
    ("qwen3-8b", "0.19.0", {"use_v2_model_runner": True}, False),  # not modelled before 0.21: V1 rules, a warning
])
def test_default_runner_by_release(model, version, kw, expected):
    assert _v2(model, version, **kw) is expected


def test_v1_runner_removed_in_0_34():
    """platforms/interface.py validate_environ (0.34.0): VLLM_USE_V2_MODEL_RUNNER=0 is an error, unset means V2."""
    assert _v2("qwen3-30b-a3b", "0.34.0")
    with pytest.raises(SettingsError, match="Model Runner V1 has been removed"):
        _v2("qwen3-8b", "0.34.0", use_v2_model_runner=False)


def test_env_var_parses():
    s = parse_args(["serve", "Qwen/Qwen3-8B"], env={"VLLM_USE_V2_MODEL_RUNNER": "0"})[2]
    assert s.use_v2_model_runner is False


def test_sampler_state_by_hand():
    """Qwen3-8B, 1024 sequences: output_bin_counts 1024 x 151,936 int32 = 622,329,856 B; prompt_bin_mask and the
    grammar bitmask 1024 x ceil(151,936 / 32) = 4,748 int32 words each = 19,447,808 B apiece: 661,225,472 B.
    One speculative token adds a second bitmask row per request (max_num_reqs x decode_query_len)."""
    spec = _spec("qwen3-8b")
    s = VllmSettings(engine_version="0.29.0", max_num_seqs=1024)
    assert runner_state_bytes(spec, resolve(spec, H100, s)) == 661_225_472
    r = resolve(spec, H100, replace(s, num_speculative_tokens=1))
    assert runner_state_bytes(spec, r) == 661_225_472 + 19_447_808
    assert runner_state_bytes(spec, resolve(spec, H100, replace(s, use_v2_model_runner=False))) == 0
    assert runner_state_bytes(spec, resolve(spec, H100, s), last_stage=False) == 0


def _view(model: str, version: str, **kw) -> dict:
    spec = _spec(model)
    return ENGINE.estimate(spec, H100, VllmSettings(engine_version=version, **kw)).engine_view


def test_sampler_state_leaves_the_budget_before_0_27():
    """utils/mem_utils.py memory_profiling: 0.26 charges weights + torch peak increase + non-torch increase (the
    state, built before the profile run, is none of them); 0.27 charges the free memory lost since the worker-init
    snapshot, the state included. Eager, so that V2's missing CUDA-graph estimate (before 0.29) plays no part."""
    kw = dict(max_num_seqs=1024, max_num_batched_tokens=16384, enforce_eager=True)
    for version, inside in (("0.26.0", False), ("0.27.0", True)):
        v1 = _view("qwen3-8b", version, use_v2_model_runner=False, **kw)
        v2 = _view("qwen3-8b", version, **kw)
        grew = v2["non_torch_bytes"]["CUDA0"] - v1["non_torch_bytes"]["CUDA0"]
        assert grew == (661_225_472 if inside else 0)


def test_v2_sampler_profile_and_warmup_by_hand():
    """sample/sampler.py: the model-dtype logits, plus their float32 copy once a request asks for processing, plus
    (0.23 on, FlashInfer's sampler where the GPU takes it) top_k_top_p_sampling_from_logits' masked logits and
    probabilities, two more float32 copies. Qwen3-8B bf16 on an H100, 1024 sequences, 16,384 batched tokens: the 0.32
    profile pass holds 1024 x 151,936 x 2 = 311,164,928 B; 0.33's warm-up-params pass 1024 x 151,936 x 14 =
    2,178,154,496 B; the post-KV warm-up (gpu/warmup.py: min(1024, 16384 // 2) requests) the same, the allocated peak
    (phases.py SAMPLER_WARMUP_FACTOR_V2). With VLLM_USE_FLASHINFER_SAMPLER=0, or on 0.22, the copy alone (6 B).
    V1's Triton sampler holds (12.85 + 2) B per element instead."""
    spec = _spec("qwen3-8b")
    s = VllmSettings(max_num_seqs=1024, max_num_batched_tokens=16384)
    r32 = resolve(spec, H100, replace(s, engine_version="0.32.0"))
    r33 = resolve(spec, H100, replace(s, engine_version="0.33.0"))
    assert sampler_bytes(spec, s, r32) == 311_164_928
    assert sampler_bytes(spec, s, r33) == 2_178_154_496
    assert sampler_warmup_bytes(spec, s, r32) == 2_178_154_496
    off = replace(s, use_flashinfer_sampler=False)
    assert sampler_bytes(spec, off, resolve(spec, H100, replace(off, engine_version="0.33.0"))) == 933_494_784
    r22 = resolve(spec, H100, replace(s, engine_version="0.22.0", use_v2_model_runner=True))
    assert sampler_warmup_bytes(spec, s, r22) == 933_494_784
    # 1,024 batched tokens: the warm-up's 2-token prompts leave room for 512 requests
    r = resolve(spec, H100, replace(s, engine_version="0.33.0", max_num_batched_tokens=1024))
    assert sampler_warmup_bytes(spec, s, r) == 512 * 151_936 * 14


def test_v2_encoder_profile():
    """Gemma 3 4B at 8192 batched tokens (32 dummy 896 x 896 images, encoder.py): V2 has no encoder pass before
    0.27 (nothing under v1/worker/gpu/ builds dummy multimodal inputs); from 0.27 only the outputs stay, the
    32 x 3 x 896 x 896 bf16 pixels (154,140,672 B) die with execute_mm_encoder."""
    spec = _spec("gemma-3-4b-it")
    s = VllmSettings(max_num_seqs=256, max_num_batched_tokens=8192)
    assert encoder_profile(spec, s, resolve(spec, H100, replace(s, engine_version="0.26.0"))) == (0, 0)
    held_v1, pass_v1 = encoder_profile(spec, s, resolve(spec, H100, replace(s, engine_version="0.27.0",
                                                                            use_v2_model_runner=False)))
    held_v2, pass_v2 = encoder_profile(spec, s, resolve(spec, H100, replace(s, engine_version="0.27.0")))
    assert held_v1 - held_v2 == 32 * 3 * 896 * 896 * 2
    assert pass_v1 == pass_v2 > 0


def test_v2_cudagraph_estimate_from_0_29():
    """v1/worker/gpu/model_runner.py profile_cudagraph_memory returns 0 up to 0.28 (vllm#49224); from 0.29
    cudagraph_utils.py measures it. The V1 runner's estimate is in the budget from 0.21."""
    spec = _spec("qwen3-8b")
    for version, v2_inside in (("0.28.0", False), ("0.29.0", True)):
        s = VllmSettings(engine_version=version)
        assert cudagraphs_in_budget(s, resolve(spec, H100, s)) is v2_inside
        s1 = replace(s, use_v2_model_runner=False)
        assert cudagraphs_in_budget(s1, resolve(spec, H100, s1)) is True
    view = _view("qwen3-8b", "0.28.0")
    assert "Estimated CUDA graph memory" not in view["log"]
    assert "Estimated CUDA graph memory" in _view("qwen3-8b", "0.28.0", use_v2_model_runner=False)["log"]


def test_gemma4_tp2_3090_runner_difference_vllm_50159():
    """vllm#50159 (MDEVOSTATOR, 2026-07-28; https://github.com/vllm-project/vllm/issues/50159): vLLM v0.26.0,
    2 x RTX 3090, TP=2, cyankiwi/gemma-4-31B-it-AWQ-4bit, --gpu-memory-utilization 0.94, --max-num-seqs 48, chunked
    prefill on; "MRv1 (`VLLM_USE_V2_MODEL_RUNNER=0`) | 10.54 GiB | 95,792 tokens" against "MRv2 (auto) | 11.43 GiB
    (+0.89) | 103,812 tokens (+8.4%)". Only the runner differs, so the weights cancel: the difference is checked
    on the catalog's bf16 Gemma 4 31B (what differs, the CUDA-graph estimate V2 leaves out before 0.29 and the
    sampler, does not depend on the weights' format). oomkit: +0.31 GiB, V1's CUDA-graph estimate on this GeForce
    part (phases.py cudagraph_estimate_bytes: the first capture at 82 SMs and vLLM's 1 MiB a further graph); 0.58
    GiB below the log, 2.4 % of the GPU (limit 3 %; +1.32 with the per-layer estimate it replaced, 1.8 % above)."""
    spec = _spec("gemma-4-31b-it")
    gpus = tuple(with_facts(Device(f"CUDA{i}", "NVIDIA GeForce RTX 3090", 24576 * MiB)) for i in range(2))
    s = VllmSettings(engine_version="0.26.0", tensor_parallel_size=2, gpu_memory_utilization=0.94, max_num_seqs=48)
    v1 = ENGINE.estimate(spec, gpus, replace(s, use_v2_model_runner=False)).engine_view
    v2 = ENGINE.estimate(spec, gpus, s).engine_view
    got = (v2["available_kv_cache_bytes"]["CUDA0"] - v1["available_kv_cache_bytes"]["CUDA0"]) / GiB
    assert abs(got - 0.89) <= 0.03 * 24576 / 1024, f"{got:+.2f} GiB vs +0.89 logged"


@pytest.mark.parametrize("usage, eager, logged", [
    ("llm", True, 6_908_880), ("serve", True, 6_908_880), ("llm", False, 6_900_336), ("serve", False, 6_900_336),
])
def test_qwen2_5_0_5b_v2_capacity_vllm_50159(usage, eager, logged):
    """vllm#50159, comment by manunicholasjacob (2026-08-01): "Qwen/Qwen2.5-0.5B-Instruct, vLLM 0.26.0,
    gpu_memory_utilization=0.85, fresh process per engine, max_model_len 2k and 8k (identical results), RTX PRO
    6000 Blackwell SE"; MRv2 KV tokens 6,908,880 eager and 6,900,336 with CUDA graphs (MRv1: 6,908,880 and
    6,891,296). Whether the runs used the LLM class or `vllm serve` (16,384 or 8,192 batched tokens) and which
    --max-num-seqs is not stated: V2's profile there is the decoder's forward at any max_num_seqs from 256 to 1024
    (its sampler pass holds only the bf16 logits), so both batch defaults are held to 3 % of the GPU. oomkit: +0.06
    % (LLM) / +0.33 % (serve) eager, +0.17 % / +0.44 % with graphs (V2 estimates no graphs in 0.26; the 8,544
    tokens the log loses with them are not modelled). The V1 runner's figure depends on the unknown max_num_seqs
    (its sampler pass outweighs the forward above about 256 sequences) and is not checked here."""
    spec = _spec("qwen2.5-0.5b-instruct")
    gpu = (with_facts(Device("CUDA0", "NVIDIA RTX PRO 6000 Blackwell Server Edition", 97887 * MiB)),)
    s = VllmSettings(engine_version="0.26.0", gpu_memory_utilization=0.85, max_model_len=2048, enforce_eager=eager,
                     usage_context=usage)
    assert resolve(spec, gpu, s).runner_v2
    got = ENGINE.estimate(spec, gpu, s).engine_view["kv_cache_tokens"]
    per_token = 24 * 2 * 2 * 64 * 2  # 24 layers x K and V x 2 KV heads x head_dim 64 x bf16
    assert abs(got - logged) * per_token <= 0.03 * 97887 * MiB, f"{(got - logged) * per_token / GiB:+.2f} GiB"
