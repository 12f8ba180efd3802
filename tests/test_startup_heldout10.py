"""Start-up held out, tenth set (tests/fixtures/engine_logs/startup_heldout10/): vLLM start-up threads no earlier set
cites (each number grepped in tests/ first), each fixture with its URL, the lines or sentences kept verbatim, the
release and the command the thread gives. The printed figures were recorded before oomkit was run on them; none was
used to fit a constant. Limits as sets 7-9: weights per rank 3 % of the printed load, the KV budget 3 % of the GPU's
memory, the verdict equal to the thread's. "before" is oomkit at 6b4c20fc, before this file; "after" is with V0's
mllama profile run (profile.py mllama_v0_profile, 0.6.2 -> 0.6.3) and a profile-run failure placed before the KV
check's refusal (layout.py _phases); the last two rows were added with that rule and held out from it.

| thread | release | GPUs, model, flags | figure | printed | oomkit before | oomkit after |
|---|---|---|---|---|---|---|
| vllm PR #14447 (turns 38, 42) | 0.8.3rc2 dev, V0 | 16 x RTX 3090, TP16, DeepSeek-V3-0324 AWQ, 8,192, 0.99, 8 seqs | weights per rank | 21.21 GiB | 21.86 (+3.1 %; 21.09, -0.6 %, with group 128) | = |
| | | | activation peak | 0.37 GiB | 1.27 | = |
| | | | non-torch | 0.20 GiB | 0.25 | = |
| | | | available KV | 1.57 GiB | -0.50 (-8.6 % of the GPU): refused, "No available memory for the cache blocks" | = |
| vllm#10569 | 0.6.3, V0 | 1 x L20, Llama-3.2-11B-Vision, LLM() defaults | weights | 19.9073 GiB | 19.906 (-0.01 %) | = |
| | | | verdict, phase | dies in the profile run (256 images) | refused at the KV check (131,072 > 27,120 tokens) | dies in the profile run (117.18 GiB peak, 24.2 GiB left) |
| vllm#9445 | 0.6.3, V0 | 1 x A100 80GB, Llama-3.2-11B-Vision, --max-model-len 1024 | verdict | dies (OOM) | starts (50.41 GiB of KV, 330,336 tokens) | dies in the profile run (117.18 GiB, 59.2 left) |
| | | the same with max_num_seqs 32, eager | verdict | starts | starts (51.40 GiB) | starts (37.00 GiB; peak 14.65) |
| vllm#8826 | 0.6.2, V0 | 4 x H100, TP4, Llama-3.2-90B-Vision, 81,920, eager, 8 seqs, 0.99 | verdict | starts | starts (41.29 GiB weights a rank, 26.76 GiB of KV) | starts (25.76 GiB of KV) |
| vllm#10034 | 0.6.2, V0 | 2 x A10, TP2, Llama-3.2-11B-Vision, 32 tokens, 0.7, 256 seqs | OOM allocation | 1.95 GiB in patch_embedding | - (starts, 4.05 GiB of KV) | 1.95 GiB, the patch embedding's output |
| | | | allocated at the OOM | 20.90 GiB | - | 20.84 (10.07 printed weights + 10.77) |
| vllm#9630 | 0.6.3, V0 | 1 x "96GB H100" (H100 NVL assumed), 512 tokens, 128 seqs, 0.9 | GPU blocks | 2252 (5.50 GiB) | 25,854 (+62.7 % of the GPU) | 2165 (-0.2 %; GH200: 2900, +1.7 %) |

Rule (profile.py mllama_v0_profile, MllamaProfile): V0's encoder-decoder profile run (enc_dec_model_runner.py
EncoderDecoderModelRunner.profile_run, 0.6.2 / 0.6.3) gives each of max_num_seqs dummy sequences
dummy_encoder_data_for_mllama's images (one a prompt by default, 1024 x 1024, packed into max_num_tiles = 4 tiles of
560 x 560), and models/mllama.py runs the vision tower over all of them at once: two float32 copies of the pixels,
the patch embedding, a (tiles x 1608)^2 attention mask per image (19.73 GiB at 256 images), K = 5 kept intermediate
states and their stacked copy beside the 8 gated layers' working set (22 hidden states of 3.93 GiB at TP1), then the
projected cross-attention states. Read from the 0.6.3 wheel (0.6.2's mllama.py is identical); 0.6.4 reworks the
forward and is not modelled.

Not fixed (strict xfails below, figures in their reasons):
- The DeepSeek-V3 AWQ TP16 run: oomkit's V0 activation peak (1.27 GiB at 8,192 tokens) is 0.90 GiB above the printed
  0.37 and the load 0.65 GiB above the printed 21.21 with the assumed group-64 checkpoint; the checkpoint's
  quantization_config is not in the thread, so neither is attributed.

Side item (weights.py _weights_by_global_rank): `oomkit check --engine vllm --gpu H100 --pipeline-parallel-size 1000`
on Llama-3.1-8B took 49 s here (cProfile: weights_by_rank, which walks every stage's tensors, was called once per
stage, quadratic in the stage count); one walk per expert share now, 2.7 s, figures unchanged. No refusal was added:
vLLM's distributed/utils.py get_pp_indices gives the surplus stages empty layer ranges rather than refusing more
stages than layers; no refusal of the value was found in the time given (only get_pp_indices and its test were read).

vllm#10034 (cited by the diagnose set 13 for its log text) is held here for its allocation figures. Searched and
not held (corpus "issues"): already cited in tests/ (vllm#6689, #18446, #24436, #14452, #2856, #8731,
#6746, #15815, #16380, #16570, #8879, #10511, #13882, #15228, #17327, #17469, #21348, #23278, #25350, #26612,
#27508, #28228, #33155, #51590, #57475; QwenLM/Qwen3-VL#1684; QwenLM/Qwen3#16; spark-vllm-docker#396; club-3090#612,
#652); vllm#16378 (the same log as the cited #16380); vllm#35720 (V100, fp8 KV on 0.16.0: the excerpt is the crash,
no memory line); vllm#13147 (W7900, fp8 KV: the model is not in the excerpt); vllm#12529 (V1 memory thread: the
1.5B model of turn 16 is not named); QwenLM/Qwen3-VL#1224 (Qwen2.5-VL-7B-AWQ on a 24 GB GPU shared with five other
processes: the KV allocation fails for memory others hold); generative-computing/mellea PR #416 (no model named in
the excerpt); vllm PR #12604 (Qwen2.5-VL-7B TP2: no memory line in the excerpt); guqiong96/Lvllm#35 (a patched
vLLM); vllm PR #10909 (Bamba: the TP size is not in the excerpt). Fewer than the eight logs asked for were found
with version, model, GPU and command all given.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oomkit.engines.vllm import ENGINE, VllmSettings
from oomkit.units import GiB
from tests.startup_heldout import died, first, fixture_loader, gpus
from tests.test_vllm_startup import spec_of

HERE = Path(__file__).parent / "fixtures" / "engine_logs" / "startup_heldout10"
fixture = fixture_loader(HERE)
WEIGHTS_LIMIT = 0.03  # of the printed load
KV_LIMIT = 0.03  # of the GPU's memory

DEEPSEEK_AWQ = "deepseek-v3-0324-awq-16x3090-tp16-v0-0.8.3rc2-pr14447"
MLLAMA_L20 = "llama-3.2-11b-vision-l20-v0.6.3-profile-oom-issue10569"
MLLAMA_A100 = "llama-3.2-11b-vision-a100-80gb-v0.6.3-maxlen1024-oom-issue9445"
MLLAMA90_H100 = "llama-3.2-90b-vision-4xh100-tp4-v0.6.2-eager-seqs8-issue8826"
MLLAMA_A10 = "llama-3.2-11b-vision-2xa10-tp2-v0.6.2-profile-oom-issue10034"
MLLAMA_H100_96 = "llama-3.2-11b-vision-h100-96gb-v0.6.3-seqs128-issue9630"

# the cognitivecomputations DeepSeek-V3 AWQ checkpoints' config (an assumption: the thread does not quote it)
DEEPSEEK_AWQ_CONFIG = {"quant_method": "awq", "bits": 4, "group_size": 64, "version": "gemm", "zero_point": True,
                       "modules_to_not_convert": ["gate"]}

# stem -> (catalog model, checkpoint quantization_config or None, GPU, count, the release oomkit reads, extra settings)
RUNS = {
    DEEPSEEK_AWQ: ("deepseek-ai/DeepSeek-V3-0324", DEEPSEEK_AWQ_CONFIG, "RTX 3090", 16, "0.8.3", {}),
    MLLAMA_L20: ("meta-llama/Llama-3.2-11B-Vision-Instruct", None, "L20", 1, "0.6.3", {}),
    MLLAMA_A100: ("meta-llama/Llama-3.2-11B-Vision-Instruct", None, "A100 80GB", 1, "0.6.3", {}),
    MLLAMA90_H100: ("meta-llama/Llama-3.2-90B-Vision-Instruct", None, "H100 80GB", 4, "0.6.2",
                    {"limit_mm_per_prompt": (("image", 1),)}),
    MLLAMA_A10: ("meta-llama/Llama-3.2-11B-Vision-Instruct", None, "A10", 2, "0.6.2", {}),
    # "96GB H100": an H100 NVL assumed (a GH200 gives +1.7 % of the GPU instead of -0.2 %, see the test)
    MLLAMA_H100_96: ("meta-llama/Llama-3.2-11B-Vision-Instruct", None, "H100 NVL", 1, "0.6.3", {}),
}


def estimate(stem: str, settings: dict | None = None):
    model, quant, gpu, n, version, extra = RUNS[stem]
    chosen = fixture(stem)["settings"] if settings is None else settings
    return ENGINE.estimate(spec_of(model, quant), gpus(gpu, n),
                           VllmSettings(engine_version=version, **{**chosen, **extra}))


def starts(est) -> bool:
    return died(est) is None and not est.engine_view.get("error")


# ---------------------------------------------------------------------------------------------------------------
# weights per rank


@pytest.mark.parametrize("stem", [
    MLLAMA_L20,
    pytest.param(DEEPSEEK_AWQ, marks=pytest.mark.xfail(strict=True, reason=(
        "vllm PR #14447, DeepSeek-V3-0324 AWQ TP16: oomkit 21.98 GiB a rank against the printed 21.21 (+3.6 %) with "
        "the assumed group-64, gate-unquantized config (0.12 GiB of it MLA's 16-bit kv_b_proj copy, weights.py "
        "mla_dequant_bytes); 21.21 (0.0 %) with group 128. The checkpoint's config is not in the thread, so the "
        "group size is not changed on this one log"))),
])
def test_weights_per_rank(stem):
    printed_key = "model_loading_gib" if "model_loading_gib" in fixture(stem)["printed"] else "model_weights_gib"
    printed = fixture(stem)["printed"][printed_key] * GiB
    got = first(estimate(stem).engine_view, "model_loading_bytes")
    err = (got - printed) / printed
    assert abs(err) < WEIGHTS_LIMIT, f"{got / GiB:.4f} vs {printed / GiB:.4f} GiB ({err:+.2%})"


# ---------------------------------------------------------------------------------------------------------------
# the KV budget


@pytest.mark.xfail(strict=True, reason=(
    "vllm PR #14447, DeepSeek-V3-0324 AWQ TP16 on RTX 3090s, V0 at 0.99: oomkit -0.20 GiB (refused, no cache "
    "blocks) against the printed 1.57 (-7.4 % of the GPU): weights 21.98 against 21.21 (assumed group 64; 21.21 "
    "with group 128), non-torch 0.25 against 0.20, activation peak 1.27 GiB against 0.37. Of the 1.27, 0.89 is the "
    "fused-MoE cache at 8,192 tokens: fused_marlin_moe's intermediate_cache13, M x top_k x max(2N, K) bf16 = 8192 x "
    "8 x 7168 x 2 B = 0.875 GiB on its own (0.8.5, the merged PR; fused_experts_impl's cache13 the same in 0.8.3), "
    "more than the whole printed peak, so the profiled run cannot have run 8,192 tokens through the experts; at "
    "2,048 tokens (--max-num-batched-tokens 2048) the same rules give 0.32 GiB. The quoted engine config (05:10) "
    "and profile line (08:21) are three hours apart, possibly two launches; the profiled one's settings are not "
    "quoted, so the fixture's are not changed"))
def test_deepseek_awq_budget():
    est = estimate(DEEPSEEK_AWQ)
    printed = fixture(DEEPSEEK_AWQ)["printed"]["available_kv_cache_gib"] * GiB
    got = first(est.engine_view, "available_kv_cache_bytes")
    err = (got - printed) / est.devices[0].memory_bytes
    assert abs(err) < KV_LIMIT, f"{got / GiB:.2f} vs {printed / GiB:.2f} GiB ({err:+.2%} of the GPU)"


# ---------------------------------------------------------------------------------------------------------------
# verdicts: Llama 3.2 Vision on V0


def test_l20_does_not_start():
    assert not starts(estimate(MLLAMA_L20))


PROFILE_RUN = "dies before the KV cache (profile run"


def test_l20_dies_in_the_profile_run():
    # vllm#10569: 256 dummy images through the vision tower (profile.py mllama_v0_profile)
    assert fixture(MLLAMA_L20)["printed"]["verdict"].startswith(PROFILE_RUN)
    assert (died(estimate(MLLAMA_L20)) or "").startswith(PROFILE_RUN)


def test_a100_maxlen1024_dies():
    # vllm#9445: out of memory at --max-model-len 1024 with the default 256 sequences; the thread gives no phase,
    # oomkit places it in the profile run (global vision layers 117.18 GiB beside 19.91 GiB of weights)
    assert (died(estimate(MLLAMA_A100)) or "").startswith(PROFILE_RUN)


def test_a100_fixed_settings_start():
    # the thread's fix: max_num_seqs 32 and eager mode
    assert starts(estimate(MLLAMA_A100, fixture(MLLAMA_A100)["settings_fixed"]))


def test_90b_tp4_starts():
    est = estimate(MLLAMA90_H100)
    assert starts(est), est.engine_view.get("error")


def test_a10_tp2_dies_in_the_patch_embedding():
    """vllm#10034 (0.6.2, TP2 on 2 x A10, 256 sequences): the worker runs out allocating 1.95 GiB in
    patch_embedding with 20.90 GiB allocated by PyTorch. What the rule holds there: the weights (the printed
    10.0714 GiB) beside the pixels (two float32 copies) and the model-dtype cast and its unfold, and the allocation
    that fails is the patch embedding's output (E at TP2). Held out: neither figure was used to write the rule."""
    from oomkit.engines.vllm.config import resolve
    from oomkit.engines.vllm.profile import mllama_v0_profile

    model, quant, gpu, n, version, extra = RUNS[MLLAMA_A10]
    s = VllmSettings(engine_version=version, **fixture(MLLAMA_A10)["settings"])
    spec = spec_of(model, quant)
    mm = mllama_v0_profile(spec, s, resolve(spec, gpus(gpu, n), s))
    printed = fixture(MLLAMA_A10)["printed"]
    assert round(mm.patch_embeds / GiB, 2) == printed["oom_tried_to_allocate_gib"]
    before = printed["model_loading_gib"] + (mm.patch - mm.patch_embeds) / GiB
    assert abs(before - printed["oom_allocated_by_pytorch_gib"]) < 0.1, f"{before:.2f} GiB"
    assert (died(estimate(MLLAMA_A10)) or "").startswith(PROFILE_RUN)


def test_h100_96gb_128_seqs_budget():
    """vllm#9630 (0.6.3, 128 sequences, 512 tokens): 2252 blocks of 2.5 MiB (5.50 GiB) printed; oomkit 2165 (5.29
    GiB, -0.2 % of the GPU) on an H100 NVL, 2900 (7.08 GiB, +1.7 %) on a GH200: either within the limit."""
    est = estimate(MLLAMA_H100_96)
    assert starts(est), est.engine_view.get("error")
    blocks = est.engine_view["num_gpu_blocks"]
    printed = fixture(MLLAMA_H100_96)["printed"]["num_gpu_blocks"]
    err = (blocks - printed) * est.engine_view["kv_block_bytes"] / est.devices[0].memory_bytes
    assert abs(err) < KV_LIMIT, f"{blocks} vs {printed} blocks ({err:+.2%} of the GPU)"


# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", sorted(HERE.glob("*.json")), ids=lambda p: p.stem)
def test_fixtures_are_cited(path):
    fx = json.loads(path.read_text(encoding="utf-8"))
    assert fx["source"].startswith("https://"), path.name
    assert fx["quoted"] and fx["command"] and fx["gpus"] and fx["engine_version"], path.name
    assert path.stem in RUNS, path.name


# ---------------------------------------------------------------------------------------------------------------
# side item: -pp N walked the checkpoint once per stage (weights.py _weights_by_global_rank), quadratic in N


def test_pipeline_stages_walk_the_weights_once(monkeypatch):
    from oomkit.engines.vllm import weights

    calls = []
    real = weights.weights_by_rank

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(weights, "weights_by_rank", counted)
    est = ENGINE.estimate(spec_of("meta-llama/Llama-3.1-8B-Instruct"), gpus("H100 80GB", 64),
                          VllmSettings(engine_version="0.11.0", pipeline_parallel_size=64))
    assert len(calls) <= 1, len(calls)  # 0 where the memo already holds this layout
    # 32 layers over 64 stages: the stages vLLM's get_pp_indices leaves empty load no decoder layer
    loads = sorted(set(est.engine_view["model_loading_bytes"].values()))
    assert len(loads) >= 2, loads
