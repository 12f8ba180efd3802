"""Held-out SGLang start-up logs, tenth set (tests/fixtures/engine_logs/sglang/heldout10/, each with its URL, the
lines kept verbatim and the release read from the log or its date). No constant in oomkit was fitted on it; the
printed figures were recorded in the fixture before oomkit was run, and the figures below are the log's, never
oomkit's. No rule changed for this set: the "oomkit" column is the figure recorded before, and after, this round.

| log | release | GPUs | model | figure | printed | oomkit |
|---|---|---|---|---|---|---|
| sglang#40558 | build of 2026-09-21 (0.5.23 read) | 4x RTX PRO 6000 Blackwell (inferred), TP4, FP8 KV, EAGLE | GLM-5.3-Flash (FP8) | free before the weights | 94.01 GB | 93.09 GiB (-0.96 % of the GPU) |
| | | | | target weights per rank (94.01 - 16.20 - 2.39) | 75.42 GB | 73.55 GiB (-2.5 %), no vision tower |
| | | | | NextN draft weights per rank | 2.39 GB | not sized (strict xfail) |
| | | | | where it dies | FlashInfer autotune, after the pools: an unsupported-architecture kernel, not memory | no phase out of memory |

What the log fixes beyond its flags (fixture notes): the target's own "Load weight end" line is not in the stored
text, but from 0.5.14 the NextN draft is loaded right after the target and before the pools are profiled (draft.py),
so TP1's target load is its "Load weight begin" figure less the draft's end figure and usage. Of the 1.87 GiB oomkit
leaves out, SGLang's Glm5NextForConditionalGeneration builds a vision tower (models/glm5_next.py
Glm5NextVisionModel, 0.5.23 read) that the catalog's text-only config does not describe: 24 blocks of 1,024 with a
4,096 SwiGLU MLP and a merger to 4,096 through 10,240 (vision_config as published), about 0.56 B parameters, 1.05 GiB
in bf16, split over TP4 by its Column / RowParallelLinear layers unless --mm-enable-dp-encoder (glm4v.py
Glm4vVisionMLP / Glm4vPatchMerger): about 0.27 GiB a rank. The other 1.6 GiB a rank is not located.
The draft is not sized because draft.py leaves out the draft of a DSA model: 0.5.23's pool_configurator.py sizes
its cell with the k-pooled indexer row of the draft's layers (_compute_dsa_indexer_cell_size with
allocate_all_layers, and get_glm_dsa_layer_split_effective_num_layers for the latent), which oomkit's draft pool does
not follow; its weights alone, the next-n layer with the draft's own embedding and lm_head still held (draft.py
copies_bytes), would be 2.35 GiB against 2.39.

Searched and not held (corpus "issues": "Load weight end ... mem usage", "KV Cache is allocated. #tokens", "Capture
cuda graph end ... mem usage", "max_total_num_tokens=", "Init torch distributed ends", with model families (Qwen2 /
Qwen3 / Qwen2.5-VL / Llama / Mixtral / gemma / GLM / MiniMax / DeepSeek / gpt-oss), GPUs (RTX 3090 / 4090 / A6000 /
L20 / L40S / A100 / H20 / H800 / MI300X / V100), rollouts (verl, slime, OpenRLHF, xinference) and ktransformers):
already held or refused by an earlier set (sglang#1869, #29512, #4895, #7691, #9706, #11716, #11830, #12978,
#15909, #17392, #21348, #23265, #28506, #28876, #29575, #36583, #4048, #4826, #8538, PR #18039, ktransformers#1757 / #1870 / #1969,
xorbitsai/inference#3481, kvcached#198, club-3090#1261, InferenceX#2128); no figure in the stored excerpt (sglang#1828,
#10053, #14282, #17402, #29562, PR #3888, PR #13023); a figure whose model cannot be pinned (sglang#30609:
GLM-5.2 NextN 'mem usage=1.00 GB' at TP8 EP8, below the 1.13 GiB of GLM-5.2-FP8's routed experts alone at EP8); a
model oomkit refuses for SGLang (DeepSeek-V4-Flash, sglang PR #28620); another engine behind SGLang's log format
(ktransformers#1928 with --kt-num-gpu-experts). Only one log was found that no earlier set holds: the set is
smaller than the four to six asked for.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from oomkit.engines import sglang as sg
from oomkit.hardware.catalog import devices_for_names
from oomkit.model.resolve import resolve
from tests.sglang_heldout import (
    WEIGHTS_LIMIT,
    assert_avail_mem,
    assert_every_fixture_cites_its_thread,
    gb,
    load,
)

HERE = Path(__file__).parent / "fixtures" / "engine_logs" / "sglang" / "heldout10"


def fixture(stem: str) -> dict:
    return load(HERE, stem)


def test_every_fixture_cites_its_thread():
    assert_every_fixture_cites_its_thread(HERE)


# ---------------------------------------------------------------------------------------------------------
# sglang#40558: GLM-5.3-Flash (FP8) at TP4 on four SM120 cards, FP8 KV, EAGLE with the NextN layer (2026-09-21)

GLM = "glm-5.3-flash-fp8-tp4-sm120-eagle-issue40558"


def _glm():
    s = sg.SGLangSettings(**fixture(GLM)["settings"], engine_version="0.5.23")
    return sg.ENGINE.estimate(resolve("zai-org/GLM-5.3-Flash"), devices_for_names("RTX PRO 6000") * 4, s)


def test_glm53_free_memory_before_the_weights():
    # 93.09 GiB against 94.01 (-0.96 % of the 95.59 GiB card): the CUDA context and the 0.39 GiB distributed init
    assert_avail_mem(_glm(), "Load weight begin.", fixture(GLM)["printed"]["weights_begin_avail_gb"])


def test_glm53_target_weights_per_rank():
    # TP1: 94.01 free before the target, 16.20 free after the draft that loads next, 2.39 of it the draft's:
    # 75.42 GiB for the target; oomkit 73.55 (-2.5 %), without the vision tower the catalog's config leaves out
    p = fixture(GLM)["printed"]
    printed = gb(p["weights_begin_avail_gb"]) - gb(p["draft_weights_avail_after_tp1_gb"]) \
        - gb(p["draft_weights_mem_usage_gb"])
    err = (_glm().devices[0].weights_bytes - printed) / printed
    assert abs(err) < WEIGHTS_LIMIT, f"{err:+.2%}"


def test_glm53_no_phase_runs_out_of_memory():
    # the log reaches the KV / Mamba pools and dies in FlashInfer's autotune on an unsupported-architecture kernel:
    # no memory phase fails (fits is False here only because the pool is shorter than the 1,048,576-token context)
    assert "Mamba Cache is allocated." in fixture(GLM)["quoted"]
    assert _glm().engine_view.get("failed_phase") is None


@pytest.mark.xfail(strict=True, reason="sglang#40558 (held out): the NextN draft of GLM-5.3-Flash prints 'mem usage=2.39 GB' "
                                       "at TP4; oomkit does not size the draft of a DSA model (draft.py), whose pool "
                                       "0.5.23 sizes with the k-pooled indexer rows of the draft's layers "
                                       "(pool_configurator.py _compute_dsa_indexer_cell_size, allocate_all_layers); the "
                                       "draft's weights alone (the next-n layer, its own embedding and lm_head held "
                                       "until init_lm_head) would be 2.35 GiB, -1.7 %")
def test_glm53_draft_weights():
    printed = gb(fixture(GLM)["printed"]["draft_weights_mem_usage_gb"])
    got = _glm().engine_view.get("draft_weights_bytes", 0)
    assert abs(got - printed) / printed < WEIGHTS_LIMIT
