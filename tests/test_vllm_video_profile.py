"""The video item of V1's multimodal profile run for Qwen2-VL / Qwen2.5-VL and Qwen3-VL (engines/vllm/encoder.py
"Video").

profile_run profiles the modality with the most tokens per item (counted at max_model_len), and for Qwen2.5-VL at
its 128,000 tokens that is a video of the largest image: 16,384 tokens (a 3,584 x 3,584 image, 256 x 256 patches of
3 x 2 x 14 x 14 pixels, merged 2 x 2) per grid step of two frames. The expected figures below are that arithmetic,
written out from the source of each release (qwen2_vl.py get_num_frames_with_most_features, gpu_model_runner.py
profile_run / _get_mm_dummy_batch, multimodal/registry.py, encoder_budget.py), and one published start-up log
(QwenLM/Qwen3-VL#983, 0.8.1), kept as a fixture.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from oomkit.engines.shell_words import split_command
from oomkit.engines.vllm import ENGINE
from oomkit.engines.vllm.args import parse_args
from oomkit.engines.vllm.settings import VllmSettings
from tests.startup_heldout import gpus
from tests.test_vllm_startup import spec_of

FIXTURE = (Path(__file__).parent / "fixtures" / "engine_logs" / "vllm" / "video_profile"
           / "qwen2.5-vl-7b-fp8-v0.8.1-serve-defaults-qwen3vl983.json")
MODEL = "Qwen/Qwen2.5-VL-7B-Instruct"

# one grid step of the largest image (preprocessor_config.json max_pixels 12,845,056: 3,584^2), Qwen2.5-VL-7B
STEP_TOKENS = (3584 // 28) ** 2  # 16,384
STEP_PIXELS = STEP_TOKENS * 4 * 3 * 2 * 14 * 14  # 65,536 patches of 1,176 values
HIDDEN = 3584  # the text model's hidden size: the encoder outputs' width
STEP_HELD = (STEP_TOKENS * HIDDEN + STEP_PIXELS) * 2  # bf16 outputs and pixels of one step: 271,581,184 B


def _view(version: str, **kw):
    s = VllmSettings(engine_version=version, **kw)
    return ENGINE.estimate(spec_of(MODEL), gpus("H100 80GB", 1), s).engine_view


def _line(budget: int, items: int, modality: str) -> str:
    return (f"Encoder cache will be initialized with a budget of {budget} tokens, and profiled with {items} "
            f"{modality} items of the maximum feature size.")


def test_983_budget_line():
    """QwenLM/Qwen3-VL#983 (0.8.1 V1, `vllm serve ... --quantization fp8`, 128,000 tokens): "budget of 98304 tokens,
    and profiled with 1 video items". 0.8.1 counts the video beside its limit of images (1 before 0.8.4): the
    frames that fit 128,000 - 16,384 = 111,616 tokens are 12 (6 steps, 98,304; 14 frames would be 114,688), under
    the 16-frame cap; the budget grows from 8,192 batched tokens to the one video (was: 16,384 tokens, 1 image)."""
    fx = json.loads(FIXTURE.read_text(encoding="utf-8"))
    line = _line(98304, 1, "video")
    assert line in fx["quoted"]
    assert fx["printed"]["encoder_budget_tokens"] == 6 * STEP_TOKENS == 98304
    words = split_command(fx["command"])
    s = parse_args(["serve", MODEL, *words[3:]])[2]
    assert s.quantization == "fp8"
    view = ENGINE.estimate(spec_of(MODEL), gpus("H100 80GB", 1), replace(s, engine_version="0.8.1")).engine_view
    assert (view["encoder_budget_tokens"], view["encoder_profile_items"], view["encoder_profile_modality"]) == (
        98304, 1, "video")
    assert line in view["log"].splitlines()


@pytest.mark.parametrize("version, budget, steps", [
    # the dummy video is built at max_num_batched_tokens (8,192): one frame, one step, whatever the budget
    ("0.8.5", 6 * STEP_TOKENS, 1),
    ("0.9.2", 6 * STEP_TOKENS, 1),
    # 0.10.0 builds it at its own budgeted tokens: the 12 frames, 6 steps
    ("0.10.0", 6 * STEP_TOKENS, 6),
    # 0.10.2 stops subtracting the image: 14 frames fit 128,000 (7 steps, 114,688; 16 would be 131,072)
    ("0.10.2", 7 * STEP_TOKENS, 1),
    # 0.11.0 builds it at max_model_len, at most 14 frames: 7 steps
    ("0.11.0", 7 * STEP_TOKENS, 7),
    ("0.23.0", 7 * STEP_TOKENS, 7),
])
def test_video_budget_and_held_bytes_by_release(version, budget, steps):
    view = _view(version)
    assert (view["encoder_budget_tokens"], view["encoder_profile_items"], view["encoder_profile_modality"]) == (
        budget, 1, "video")
    # the dummy video's pixels (bf16, cast by call_hf_processor) and its encoder outputs, alive through the decoder's
    # dummy run
    assert view["encoder_profile_held_bytes"] == steps * STEP_HELD


@pytest.mark.parametrize("flag", ['{"video": 0}', "image=1,video=0"])
def test_limit_video_zero_leaves_the_image(flag):
    """--limit-mm-per-prompt video 0 (JSON, or the key=value spelling of 0.9 and before): one 16,384-token image."""
    s = parse_args(["serve", MODEL, "--limit-mm-per-prompt", flag])[2]
    for version in ("0.9.2", "0.11.0"):
        view = ENGINE.estimate(spec_of(MODEL), gpus("H100 80GB", 1), replace(s, engine_version=version)).engine_view
        assert (view["encoder_budget_tokens"], view["encoder_profile_modality"]) == (STEP_TOKENS, "image")
        assert view["encoder_profile_held_bytes"] == STEP_HELD


def test_image_zero_profiles_the_video():
    """With images limited to 0 the video is the only modality left, even where it is no larger than an image."""
    view = _view("0.11.0", limit_mm_per_prompt=(("image", 0),), max_model_len=16384)
    assert (view["encoder_budget_tokens"], view["encoder_profile_modality"]) == (STEP_TOKENS, "video")


def test_a_tie_goes_to_the_image_up_to_0_16():
    """At 16,384 tokens the video is one step (2 frames), as many tokens as the image: max(..., key=x[1]) keeps the
    first (the image) up to 0.16, key=(x[1], x[0]) takes the video from 0.17. Same bytes either way."""
    for version, modality in (("0.16.0", "image"), ("0.17.0", "video")):
        view = _view(version, max_model_len=16384)
        assert (view["encoder_budget_tokens"], view["encoder_profile_modality"]) == (STEP_TOKENS, modality)
        assert view["encoder_profile_held_bytes"] == STEP_HELD


def test_limits_as_counts_up_to_0_8_3():
    """Up to 0.8.3 the per-item counts are the limits themselves: the README's limit_mm_per_prompt {"image": 10,
    "video": 10} leaves 128,000 - 10 x 16,384 < 0 tokens for the video, so one frame, a tie, the image (the
    QwenLM/Qwen3-VL#1057 run, 0.8.2: 16,384 tokens, 1 image item); from 0.8.4 one of each is counted: 98,304."""
    readme = (("image", 10), ("video", 10))
    view = _view("0.8.2", limit_mm_per_prompt=readme, usage_context="llm")
    assert (view["encoder_budget_tokens"], view["encoder_profile_modality"]) == (STEP_TOKENS, "image")
    view = _view("0.8.4", limit_mm_per_prompt=readme, usage_context="llm")
    assert (view["encoder_budget_tokens"], view["encoder_profile_modality"]) == (6 * STEP_TOKENS, "video")


def test_video_count_splits_the_frames_up_to_0_8_3():
    """0.8.3 with --limit-mm-per-prompt video=4 (the image limit 1): 12 frames fit beside the image, 3 per video,
    padded to 4: two steps."""
    view = _view("0.8.3", limit_mm_per_prompt=(("video", 4),))
    assert (view["encoder_budget_tokens"], view["encoder_profile_modality"]) == (2 * STEP_TOKENS, "video")


def test_v0_is_unchanged():
    """V0 profiles its own dummy prompts (encoder.v0_profile): no encoder budget line."""
    view = _view("0.8.5", use_v1=False)
    assert "encoder_budget_tokens" not in view


def test_dummy_video_leaves_room_for_the_images_up_to_0_8_2():
    """At 65,536 batched tokens the dummy video is built at 65,536: up to 0.8.2 get_num_frames_with_most_features
    reads the image limit (1) from the config and leaves its 16,384 tokens, so 6 frames (3 steps); from 0.8.3 it
    is given {video: 1}: 8 frames (4 steps). The budget is the 98,304-token video in both."""
    for version, steps in (("0.8.2", 3), ("0.8.3", 4)):
        view = _view(version, max_num_batched_tokens=65536)
        assert (view["encoder_budget_tokens"], view["encoder_profile_modality"]) == (6 * STEP_TOKENS, "video")
        assert view["encoder_profile_held_bytes"] == steps * STEP_HELD


# ---------------------------------------------------------------------------------------------------------------
# Qwen3-VL (qwen3_vl.py Qwen3VLProcessingInfo, 0.11.0 -> 0.12.x): the video processor's own 25,165,824 pixels over
# all frames, from 2 frames up to 24,576, each soft token counted x 12.5 (its timestamp and separators). Two
# published Qwen3-VL-30B-A3B start-up logs on 0.11.0, kept as fixtures (tests/test_vllm_heldout5.py's):
# QwenLM/Qwen3-VL#1589 (TP4, --dtype half, the checkpoint's 262,144 tokens): "budget of 153600 tokens, and profiled
# with 1 video items"; QwenLM/Qwen3-VL#1622 (TP2, --max-model-len 10000): "budget of 151250 tokens ... 1 video items"
QWEN3VL = "Qwen/Qwen3-VL-30B-A3B-Instruct"
HELDOUT5 = Path(__file__).parent / "fixtures" / "engine_logs" / "vllm" / "heldout5"


def _qwen3vl_view(version: str, stem: str, **kw):
    fx = json.loads((HELDOUT5 / f"{stem}.json").read_text(encoding="utf-8"))
    settings = dict(fx["settings"], **kw)
    tp = settings["tensor_parallel_size"]
    return fx, ENGINE.estimate(spec_of(QWEN3VL), gpus("L40S", tp), VllmSettings(engine_version=version, **settings)
                               ).engine_view


@pytest.mark.parametrize("stem, budget", [
    # 24,576 frames fit 262,144 tokens: 32 x 32 frames (beta 128 from 4,096^2), 12,288 steps of 1 token: 12,288 x 12.5
    ("qwen3-vl-30b-a3b-tp4-v0.11.0-fp16-qwen3vl1589", 153600),
    # 3 frames would be 16,200 tokens (2 steps of 90^2) > 10,000: the 2 start frames stay, 3,520^2 -> 110^2 = 12,100
    ("qwen3-vl-30b-a3b-tp2-ep-encoder-data-v0.11.0-qwen3vl1622", 151250),
])
def test_qwen3_vl_video_budget_lines(stem, budget):
    """Was: the 16,384-token image (4,096^2 at the image processor's 16,777,216 pixels), 1 image item."""
    fx, view = _qwen3vl_view("0.11.0", stem)
    line = _line(budget, 1, "video")
    assert line.rstrip(".") in fx["quoted"]
    assert (view["encoder_budget_tokens"], view["encoder_profile_items"], view["encoder_profile_modality"]) == (
        budget, 1, "video")
    assert line in view["log"].splitlines()


def test_qwen3_vl_video_zero_leaves_the_image():
    """--limit-mm-per-prompt video 0: the 16,384-token image (4,096^2, 128^2 merged tokens)."""
    _, view = _qwen3vl_view("0.11.0", "qwen3-vl-30b-a3b-tp4-v0.11.0-fp16-qwen3vl1589",
                            limit_mm_per_prompt=(("video", 0),))
    assert (view["encoder_budget_tokens"], view["encoder_profile_modality"]) == (16384, "image")
