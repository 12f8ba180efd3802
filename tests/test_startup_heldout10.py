"""Start-up held out, tenth set (tests/fixtures/engine_logs/startup_heldout10/): vLLM start-up threads no earlier set
cites (each number grepped in tests/ first), each fixture with its URL, the lines or sentences kept verbatim, the
release and the command the thread gives. The printed figures were recorded before oomkit was run on them; none was
used to fit a constant. Limits as sets 7-9: weights per rank 3 % of the printed load, the KV budget 3 % of the GPU's
memory, the verdict equal to the thread's. "before" is oomkit at 6b4c20fc, before this file; no rule was changed
for this set (see "Not fixed"), so "after" equals "before".

| thread | release | GPUs, model, flags | figure | printed | oomkit |
|---|---|---|---|---|---|
| vllm PR #14447 (turns 38, 42) | 0.8.3rc2 dev, V0 | 16 x RTX 3090, TP16, DeepSeek-V3-0324 AWQ, 8,192, 0.99, 8 seqs | weights per rank | 21.21 GiB | 21.86 (+3.1 %; 21.09, -0.6 %, with group 128) |
| | | | activation peak | 0.37 GiB | 1.27 |
| | | | non-torch | 0.20 GiB | 0.25 |
| | | | available KV | 1.57 GiB | -0.50 (-8.6 % of the GPU): refused, "No available memory for the cache blocks" |
| vllm#10569 | 0.6.3, V0 | 1 x L20, Llama-3.2-11B-Vision, LLM() defaults | weights | 19.9073 GiB | 19.906 (-0.01 %) |
| | | | verdict, phase | dies in the profile run (256 images) | refused at the KV check (131,072 > 27,120 tokens): does not start, a phase later |
| vllm#9445 | 0.6.3, V0 | 1 x A100 80GB, Llama-3.2-11B-Vision, --max-model-len 1024 | verdict | dies (OOM) | starts (50.41 GiB of KV, 330,336 tokens) |
| | | the same with max_num_seqs 32, eager | verdict | starts | starts (51.40 GiB) |
| vllm#8826 | 0.6.2, V0 | 4 x H100, TP4, Llama-3.2-90B-Vision, 81,920, eager, 8 seqs, 0.99 | verdict | starts | starts (weights 41.29 GiB a rank, 26.76 GiB of KV) |

Not fixed (strict xfails below, figures in their reasons):
- V0's multimodal profile run for mllama (enc_dec_model_runner.py EncoderDecoderModelRunner.profile_run, 0.6.x):
  max_num_seqs dummy sequences each carry an image of max_num_tiles (4) tiles of 560 x 560, and the vision tower
  (models/mllama.py MllamaVisionModel, 1,601 patches a tile, 1,280 wide, 32 + 8 layers) runs over all of them in one
  batch: at the default 256 sequences that is 1,024 tiles, 1.64 M patch tokens, gigabytes per hidden-state tensor.
  oomkit's encoder.py does not model this V0 pass (set 7 notes it too), so #9445 starts in oomkit at 1,024 tokens on
  80 GB where vLLM ran out of memory, and #10569's death is placed at the KV check instead of the profile run. A
  rule needs the vision tower's per-layer working set at that batch read from 0.6.3's mllama.py (its attention path
  and what the profile's torch.cuda peak holds); not done in this set's time.
- The DeepSeek-V3 AWQ TP16 run: oomkit's V0 activation peak (1.27 GiB at 8,192 tokens) is 0.90 GiB above the printed
  0.37 and the load 0.65 GiB above the printed 21.21 with the assumed group-64 checkpoint; the checkpoint's
  quantization_config is not in the thread, so neither is attributed.

Side item (weights.py _weights_by_global_rank): `oomkit check --engine vllm --gpu H100 --pipeline-parallel-size 1000`
on Llama-3.1-8B took 49 s here (cProfile: weights_by_rank, which walks every stage's tensors, was called once per
stage, quadratic in the stage count); one walk per expert share now, 2.7 s, figures unchanged. No refusal was added:
vLLM's distributed/utils.py get_pp_indices gives the surplus stages empty layer ranges rather than refusing more
stages than layers; no refusal of the value was found in the time given (only get_pp_indices and its test were read).

Searched and not held (corpus "issues"): already cited in tests/ (vllm#6689, #18446, #24436, #14452, #2856, #8731,
#6746, #10034, #15815, #16380, #16570, #8879, #10511, #13882, #15228, #17327, #17469, #21348, #23278, #25350, #26612,
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
        "vllm PR #14447, DeepSeek-V3-0324 AWQ TP16: oomkit 21.86 GiB a rank against the printed 21.21 (+3.1 %) with "
        "the assumed group-64, gate-unquantized config; 21.09 (-0.6 %) with group 128. The checkpoint's config is "
        "not in the thread, so the miss is not attributed"))),
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
    "vllm PR #14447, DeepSeek-V3-0324 AWQ TP16 on RTX 3090s, V0 at 0.99: oomkit -0.50 GiB (refused, no cache "
    "blocks) against the printed 1.57 (-8.6 % of the GPU): its activation peak 1.27 GiB against 0.37 printed, "
    "non-torch 0.25 against 0.20, weights 21.86 against 21.21 (assumed config)"))
def test_deepseek_awq_budget():
    est = estimate(DEEPSEEK_AWQ)
    printed = fixture(DEEPSEEK_AWQ)["printed"]["available_kv_cache_gib"] * GiB
    got = first(est.engine_view, "available_kv_cache_bytes")
    err = (got - printed) / est.devices[0].memory_bytes
    assert abs(err) < KV_LIMIT, f"{got / GiB:.2f} vs {printed / GiB:.2f} GiB ({err:+.2%} of the GPU)"


# ---------------------------------------------------------------------------------------------------------------
# verdicts: Llama 3.2 Vision on V0


def test_l20_does_not_start():
    # vllm#10569 dies in the profile run; oomkit refuses the default 131,072-token length at the KV check
    assert not starts(estimate(MLLAMA_L20))


@pytest.mark.xfail(strict=True, reason=(
    "vllm#10569: the log dies in the profile run (256 dummy images through the vision tower, "
    "enc_dec_model_runner.py profile_run); oomkit passes the profile (its encoder.py has no V0 mllama pass) and "
    "refuses later, at the KV check (131,072 tokens > 27,120)"))
def test_l20_dies_in_the_profile_run():
    assert died(estimate(MLLAMA_L20)) == fixture(MLLAMA_L20)["printed"]["verdict"]


@pytest.mark.xfail(strict=True, reason=(
    "vllm#9445, A100 80GB, --max-model-len 1024, default 256 sequences: vLLM ran out of memory; oomkit starts it "
    "with 50.41 GiB of KV (330,336 tokens): V0's mllama profile run over max_num_seqs images of 4 tiles is not "
    "modelled"))
def test_a100_maxlen1024_dies():
    assert not starts(estimate(MLLAMA_A100))


def test_a100_fixed_settings_start():
    # the thread's fix: max_num_seqs 32 and eager mode
    assert starts(estimate(MLLAMA_A100, fixture(MLLAMA_A100)["settings_fixed"]))


def test_90b_tp4_starts():
    est = estimate(MLLAMA90_H100)
    assert starts(est), est.engine_view.get("error")


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
