"""The multimodal encoder's dummy pass in vLLM's profile run (V1), and what it leaves alive for the rest of it.

v1/worker/gpu_model_runner.py profile_run (0.8 -> 0.2x; the same shape in every release read): unless
--skip-mm-profiling, it asks MultiModalBudget (multimodal/encoder_budget.py, formerly v1/worker/utils.py) for the
modality with the most tokens per item, builds `max_items_per_batch` dummy items of the largest size
(_get_mm_dummy_batch: the processor's own dummy image / video, processed once and repeated), runs
embed_multimodal on them and stores every output in self.encoder_cache. Then, with the dummy inputs still bound to
a local of profile_run and the outputs in the cache, it runs the decoder's _dummy_run and the sampler; only at the
end does it clear the cache. So the torch peak holds, beside the decoder's own, the pixel inputs (floating inputs
cast to the model dtype by InputProcessingContext.call_hf_processor, "this mimics the behavior of
transformers.BatchFeature") and the encoder outputs (items x tokens x the text hidden size, model dtype; x 4 for
Qwen3-VL, whose tower returns its three deepstack levels beside the merger's output: output_levels).

How many items (MultiModalBudget._get_max_items, compute_mm_encoder_budget in v1/core/encoder_cache_manager.py):
    budget = max(max_num_batched_tokens, tokens per item)  (encoder compute budget = encoder cache size)
    items = max(1, min(budget // tokens per item, max_num_seqs x max(1, min(limit, max_model_len // tokens))))
with the limit per prompt 999 unless --limit-mm-per-prompt says otherwise (config/multimodal.py
get_limit_per_prompt; 1 up to 0.8.3: _default_limit), and the V1 scheduler's chunked prefill (so max_num_seqs is not
cut by the batch).

The dummy item, per tower (each the processor's get_image_size_with_most_features / get_mm_max_tokens_per_item):
- Gemma 3 (gemma3_mm.py): one 896 x 896 crop (pan-and-scan off by default), mm_tokens_per_image (256) tokens.
- Llama 4 (mllama4.py): an image of max_patches (16) tiles in a column plus the global tile, 17 chunks of
  image_size^2; (image_size / patch)^2 x pixel_shuffle_ratio^2 (144) tokens per chunk.
- Mistral 3 / Pixtral-HF (mistral3.py, pixtral.py PixtralHFEncoderInfo): one image_size^2 image (1540),
  (image_size / (patch x spatial_merge_size))^2 tokens.
- Gemma 4 (gemma4_mm.py): a video of 32 frames at 70 soft tokens (78 budgeted per frame with the separators and
  timestamps) outweighs an image (default_output_length, 280); the 224 x 224 dummy frames give 64 soft tokens
  each, padded to 70 x pooling_kernel^2 patches of 3 x patch^2 pixels, with int64 (x, y) position ids.
- Qwen2-VL / Qwen2.5-VL / Qwen3-VL (qwen2_vl.py, qwen3_vl.py): the image of max_pixels (12,845,056 for the released
  Qwen2 / 2.5-VL, 16,777,216 for Qwen3-VL: their preprocessor_config.json, not in config.json), one token per
  merge^2 patches of in_channels x temporal_patch_size x patch^2; --mm-processor-kwargs' max_pixels (or
  size.longest_edge) replaces the checkpoint's, through smart_resize (qwen_side: 1,280 gives one 28 x 28 image,
  1 token). Their video is the same image repeated over grid steps of temporal_patch_size frames: see "Video" below.
- LLaVA-1.5 (llava.py, CLIP): one image_size^2 image, (image_size / patch)^2 tokens.
A tower not tabled here holds the outputs of one full budget (max_num_batched_tokens tokens) and no pixels.

By release: the V1 engine has profiled the encoder this way since vllm#11210 (0.7); V0's profile batch is
v0_profile below. Gemma 3 in 0.8.x counted an image's whole token sequence
(its begin / end tokens too, about 260) where later releases count its 256 embeddings (one item fewer at 8192
tokens: not modelled). Gemma 4 before vllm#43169 (after 0.20.2) ran the tower one image / frame at a time, and
after it in chunks sized by free memory (_encoder_chunk); either way the tower's own pass stays below the
decoder's peak, so its `patches` are left at 0.

Model runner V2 (v1/worker/gpu/model_runner.py; which models run it by release: config.py _runner_v2): up to 0.26
its profile_run has no encoder pass at all (0.22.0, 0.25.0, 0.26.0 read: nothing under v1/worker/gpu/ builds dummy
multimodal inputs). From 0.27 profile_run sizes the batch the same way (MultiModalBudget,
get_dummy_encoder_profile_inputs) and runs gpu/mm/encoder_runner.py EncoderRunner.profile_encoder_cache, which
moves the items to the GPU inside execute_mm_encoder (group_mm_kwargs_by_modality(..., device=self.device)): the
dummy inputs profile_run still holds are host tensors, so only the outputs stay (in its encoder cache, reset at the
end of profile_run). The pass's own peak is the V1 runner's.

Video (Qwen2-VL / Qwen2.5-VL, qwen2_vl.py Qwen2VLProcessingInfo, which qwen2_5_vl.py subclasses): a video of F frames
of the largest image is max((F + F % temporal_patch_size) // temporal_patch_size, 1) grid steps
(_get_vision_info: "Frames are padded to be divisible by temporal_patch_size"), each the image's tokens and pixels.
profile_run profiles the modality whose per-item tokens, counted at seq_len = max_model_len, are largest; the
video's frames are get_num_frames_with_most_features: the most frames whose tokens fit seq_len (less
max_image_tokens x the image count up to 0.10.1.1, not from 0.10.2), divided by the video count, at most
_MAX_FRAMES_PER_VIDEO (16 up to 0.10.x, 14 from 0.11.0) and at least 1. By release:
- the counts (multimodal/registry.py get_max_tokens_per_item_by_modality): the limits per prompt themselves up to
  0.8.3 (so the README's limit_mm_per_prompt {"image": 10, "video": 10} leaves 128,000 - 10 x 16,384 < 0: one
  frame), one of each allowed modality from 0.8.4; up to 0.8.2 the frame count reads limit_per_prompt itself
  (for the dummy video too), from 0.8.3 the counts it is given;
- a tie (a one-step video equals the image): max(..., key=x[1]) keeps the first, the image, up to 0.16;
  key=(x[1], x[0]) picks the video from 0.17 (multimodal/encoder_budget.py get_modality_with_max_tokens);
- the dummy video profile_run builds (mm_counts {video: 1}) is counted at another seq_len than its budget: the
  runner's max_num_tokens (max_num_batched_tokens) in 0.8.0-0.9.2 and 0.10.1-0.10.2 (so with the default budget it
  is one frame, one grid step: the image's memory under the video's name and budget), max_tokens_per_mm_item in
  0.10.0, max_model_len from 0.11.0 (gpu_model_runner.py _get_mm_dummy_batch, then registry / processor
  get_dummy_mm_inputs; model runner V2's encoder_budget.py get_dummy_encoder_profile_inputs the same).
So Qwen2.5-VL-7B at its 128,000 tokens on 0.11+ profiles one 14-frame video: 7 steps, 114,688 tokens, 7 x the
image's pixels and outputs. --limit-mm-per-prompt '{"video": 0}' (video=0 up to 0.9) leaves the image.

Video (Qwen3-VL, qwen3_vl.py Qwen3VLProcessingInfo, 0.11.0 -> 0.12.0 read): the video processor resizes all the
frames together (transformers' qwen3_vl video smart_resize: t_bar x h x w at most its size.longest_edge, 25,165,824,
beta from the frame count), _get_max_video_frames starts at 2 frames, _MAX_FRAMES_PER_VIDEO is 24,576, and
get_max_video_tokens counts each soft token x 12.5 (its "<{timestamp} seconds>" and separators): at 262,144 tokens
24,576 frames of 32 x 32 (12,288 soft tokens, budget 153,600), at 10,000 the 2 start frames of 3,520^2 (12,100,
151,250), either way above the 16,384-token image, so 0.11-0.12 profile one video (qwen3_v1_video; the encoder
outputs are the soft tokens). 0.13.0 drops the 12.5 and 0.17.0 counts 2 frames at half the video pixels: neither
outweighs the image at the checkpoint's sizes, so the image stays there.

Not in the GPU profile: --mm-processor-cache-gb (the processor cache lives in host memory); --mm-encoder-tp-mode
data splits the encoder's work across the TP ranks but all-gathers the outputs, so each rank still holds them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...model.spec import ModelSpec
from .config import Resolved
from .settings import VllmSettings

# config/multimodal.py MultiModalConfig.get_limit_per_prompt: 999 per modality when --limit-mm-per-prompt is silent
# (V1 from 0.8.4; 1 before, and in V0: _default_limit)
DEFAULT_LIMIT = 999
# gemma4_mm.py: _VIDEO_MAX_FRAMES, _VIDEO_MAX_SOFT_TOKENS and the 2 + 6 separator / timestamp tokens per frame
# budgeted in get_mm_max_tokens_per_item; Gemma4DummyInputsBuilder's 224 x 224 dummy frames (size None -> 224)
GEMMA4_VIDEO_FRAMES = 32
GEMMA4_VIDEO_SOFT = 70
GEMMA4_FRAME_EXTRA = 8
GEMMA4_DUMMY_SIDE = 224
# Llama4ImageProcessor max_patches (tiles per image) of the released checkpoints' preprocessor_config.json
LLAMA4_MAX_TILES = 16
# Qwen2-VL / Qwen2.5-VL preprocessor_config.json max_pixels; Qwen3-VL size.longest_edge (pixels)
QWEN2_MAX_PIXELS = 12845056
QWEN3_MAX_PIXELS = 16777216
# --mm-processor-kwargs keys that size Qwen-VL's dummy image. vLLM hands the object to the HF processor (0.7.x-0.9:
# qwen2_vl.py _get_image_processor_kwargs, kwargs.update(mm_processor_kwargs); 0.10 on: inputs/registry.py
# InputProcessingContext.get_hf_processor, {**mm_config.mm_processor_kwargs, **kwargs}), whose image processor
# takes max_pixels over size["longest_edge"] (Qwen2VLImageProcessor's "backward compatibility" override).
# min_pixels is read too but never binds: the 9,999,999-pixel square asked about is always past max_pixels.
MM_SIZE_KWARGS = ("max_pixels", "min_pixels", "size")
# get_image_size_with_most_features: the side of the square image smart_resize is asked to fit
_HUGE_SIDE = 9999999


@dataclass(frozen=True)
class DummyItem:
    """One dummy item of the profiled modality: the tokens the budget counts for it, the embeddings the encoder
    returns for it, its floating pixel values (elements, cast to the model dtype) and its integer side inputs."""

    modality: str
    budget_tokens: int
    output_tokens: int
    pixel_elems: int
    int_bytes: int = 0
    patches: int = 0  # patches the tower runs over per item (its own forward), 0 where not modelled


def _gemma4_soft_tokens(side: int, max_soft: int, patch: int, k: int) -> int:
    """gemma4_mm.py Gemma4ProcessingInfo._compute_num_soft_tokens for a side x side image."""
    unit = patch * k
    scale = math.sqrt(max_soft * k * k / ((side / patch) ** 2))
    target = max(unit, int(math.floor(side * scale / unit)) * unit)
    return min((target // patch) ** 2 // (k * k), max_soft)


def processor_max_pixels(kwargs: str | None) -> int | None:
    """The max_pixels --mm-processor-kwargs gives the Qwen-VL image processor (max_pixels, else size.longest_edge),
    or None where it gives none. args.py has checked the values are positive integers."""
    cfg = json.loads(kwargs) if kwargs else {}
    size = cfg.get("size")
    n = cfg.get("max_pixels", size.get("longest_edge") if isinstance(size, dict) else None)
    return int(n) if n is not None else None


def qwen_side(max_pixels: int, factor: int) -> int:
    """transformers' smart_resize of the 9,999,999-pixel square (qwen2_vl.py _get_vision_info, do_resize): past
    max_pixels each side is floor(side / beta / factor) x factor, beta = sqrt(side^2 / max_pixels), at least one
    factor (patch x merge). The float steps are kept: 12,845,056 gives 3,584 (16,384 tokens), 1,280 gives 28."""
    beta = math.sqrt(_HUGE_SIDE * _HUGE_SIDE / max_pixels)
    return max(factor, math.floor(_HUGE_SIDE / beta / factor) * factor)


def dummy_item(config: Mapping[str, Any], limits: Mapping[str, int],
               max_pixels: int | None = None) -> DummyItem | None:
    """The profiled dummy item of a checkpoint's vision tower (the module's table), or None where not tabled;
    max_pixels: --mm-processor-kwargs' (Qwen-VL), None for the checkpoint's own."""
    vc = config.get("vision_config") or {}
    mt, vt = str(config.get("model_type", "")), str(vc.get("model_type", ""))
    try:
        if mt == "gemma3" and vt == "siglip_vision_model":
            n = int(config.get("mm_tokens_per_image", 256))
            image, patch = int(vc["image_size"]), int(vc["patch_size"])
            return DummyItem("image", n, n, 3 * image * image, patches=(image // patch) ** 2)
        if vt == "llama4_vision_model":
            image, patch = int(vc["image_size"]), int(vc["patch_size"])
            chunks = LLAMA4_MAX_TILES + 1
            n = chunks * round((image // patch) ** 2 * float(vc.get("pixel_shuffle_ratio", 0.5)) ** 2)
            return DummyItem("image", n, n, chunks * 3 * image * image, patches=chunks * ((image // patch) ** 2 + 1))
        if vt == "pixtral":
            image, patch = int(vc["image_size"]), int(vc["patch_size"])
            merge = int(config.get("spatial_merge_size", 1))
            n = (image // (patch * merge)) ** 2
            return DummyItem("image", n, n, 3 * image * image, patches=(image // patch) ** 2)
        if vt == "gemma4_vision":
            patch, k = int(vc["patch_size"]), int(vc.get("pooling_kernel_size", 3))
            image_tokens = int(vc.get("default_output_length", 280))
            video_tokens = GEMMA4_VIDEO_FRAMES * (GEMMA4_VIDEO_SOFT + GEMMA4_FRAME_EXTRA)
            if limits.get("video", DEFAULT_LIMIT) > 0 and video_tokens >= image_tokens:
                frames, soft, budget, modality = GEMMA4_VIDEO_FRAMES, GEMMA4_VIDEO_SOFT, video_tokens, "video"
            else:
                frames, soft, budget, modality = 1, image_tokens, image_tokens, "image"
            max_patches = soft * k * k  # the processor pads every frame / image to this many patches
            out = _gemma4_soft_tokens(GEMMA4_DUMMY_SIDE, soft, patch, k)
            return DummyItem(modality, budget, frames * out, frames * max_patches * 3 * patch * patch,
                             int_bytes=frames * max_patches * 2 * 8)
        if mt in ("qwen2_vl", "qwen2_5_vl") or vt.startswith(("qwen3_vl", "qwen3_5")):
            patch = int(vc.get("patch_size", 14))
            merge, tp = int(vc.get("spatial_merge_size", 2)), int(vc.get("temporal_patch_size", 2))
            ch = int(vc.get("in_channels", vc.get("in_chans", 3)))
            if max_pixels is None:
                max_pixels = QWEN3_MAX_PIXELS if vt.startswith(("qwen3_vl", "qwen3_5")) else QWEN2_MAX_PIXELS
            n = (qwen_side(max_pixels, patch * merge) // (patch * merge)) ** 2
            return DummyItem("image", n, n, n * merge * merge * ch * tp * patch * patch, patches=n * merge * merge)
        if mt == "llava" and vt == "clip_vision_model":
            image, patch = int(vc["image_size"]), int(vc["patch_size"])
            n = (image // patch) ** 2
            return DummyItem("image", n, n, 3 * image * image, patches=n + 1)
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return None  # a vision_config without the fields its family needs (or zero sizes): not tabled
    return None


def output_levels(config: Mapping[str, Any]) -> int:
    """Embeddings the tower returns per token, in units of the text hidden size. Qwen3-VL's deepstack
    (qwen3_vl.py Qwen3_VisionTransformer.forward, from its addition in 0.11.0 on): the merger's output concatenated
    with one deepstack merger's per entry of vision_config.deepstack_visual_indexes ("[seq_len, hidden_size * (1 +
    depth_of_deepstack)]"; out_hidden_size "enlarged due to deepstack"), and that is what profile_run stores in the
    encoder cache. Qwen3-VL's three levels ([8, 16, 24]) make it 4; Qwen3.5 / 3.6 list none. 1 elsewhere."""
    vc = config.get("vision_config") or {}
    levels = vc.get("deepstack_visual_indexes")
    return 1 + len(levels) if isinstance(levels, (list, tuple)) else 1


def dummy_items(item: DummyItem, s: VllmSettings, r: Resolved, limit: int) -> int:
    """MultiModalBudget._get_max_items: items per batch of the profiled modality."""
    budget = max(r.max_num_batched_tokens, item.budget_tokens)  # compute_mm_encoder_budget
    per_prompt = max(1, min(limit, r.max_model_len // item.budget_tokens))
    reqs = r.max_num_seqs if r.chunked_prefill else min(r.max_num_seqs, r.max_num_batched_tokens // item.budget_tokens)
    return max(1, min(budget // item.budget_tokens, reqs * per_prompt))


def _limits(s: VllmSettings) -> dict[str, int]:
    return dict(s.limit_mm_per_prompt or ())


def _default_limit(r: Resolved) -> int:
    """V1's items per prompt of a modality --limit-mm-per-prompt leaves out (settings.ERAS v1_mm_limit_999)."""
    return DEFAULT_LIMIT if r.at_least("v1_mm_limit_999") else V0_LIMIT


def _profiled(s: VllmSettings, r: Resolved) -> bool:
    """profile_run runs the encoder's dummy pass: V1 engine, not --skip-mm-profiling, and with model runner V2 from
    0.27 only (settings.ERAS v2_encoder_profile)."""
    if not r.v1 or s.skip_mm_profiling:
        return False
    return not r.runner_v2 or r.at_least("v2_encoder_profile")


def encoder_profile(spec: ModelSpec, s: VllmSettings, r: Resolved) -> tuple[int, int]:
    """(held, pass): what the dummy pass leaves alive through the decoder's dummy run and the sampler (pixel
    inputs and encoder outputs), and the peak of the pass itself (the pixel inputs and the tower's widest
    activations: the MLP's input and output over every patch, beside the residual stream). (0, 0) where there is
    no tower, in V0 (its profile_run differs), with --skip-mm-profiling, or when every modality is limited to 0."""
    tower = next((t for t in spec.towers if t.kind == "vision"), None)
    if tower is None or not _profiled(s, r):
        return 0, 0
    limits = _limits(s)
    item = profiled_item(tower.config, s, r)
    if item is not None and item.budget_tokens <= 0:
        item = None
    modality = item.modality if item else "image"
    limit = limits.get(modality, _default_limit(r))
    if limit == 0 and not any(v > 0 for v in limits.values()):
        return 0, 0  # "All non-text modalities ... explicitly disabled via limit_mm_per_prompt"
    b = r.dtype_bytes
    if item is None:
        # a tower not tabled: one full budget of outputs, the pixels unknown
        return r.max_num_batched_tokens * spec.n_embd * b, 0
    n = dummy_items(item, s, r, limit)
    pixels = n * (item.pixel_elems * b + item.int_bytes)
    outputs = n * item.output_tokens * spec.n_embd * b * output_levels(tower.config)
    held = outputs if r.runner_v2 else pixels + outputs  # V2: the GPU copy of the inputs dies with the pass
    vc = tower.config.get("vision_config") or {}
    # Qwen2-VL names the tower's width embed_dim (its hidden_size is the merger's output)
    width, ff = int(vc.get("embed_dim") or tower.config_hidden or 0), int(vc.get("intermediate_size") or 0)
    # the towers vLLM builds itself shard their MLPs over the tensor-parallel ranks (ColumnParallelLinear /
    # RowParallelLinear in siglip.py, mllama4.py, pixtral.py, qwen2_5_vl.py ...; --mm-encoder-tp-mode data gives each
    # rank whole weights and a share of the items instead: about the same per rank)
    forward = n * item.patches * (2 * ff / r.tp + 2 * width) * b
    return held, int(pixels + forward)


def encoder_view(spec: ModelSpec, s: VllmSettings, r: Resolved) -> tuple[dict[str, Any], str | None]:
    """The encoder figures by vLLM's names and profile_run's log line ("Encoder cache will be initialized with a
    budget of N tokens, and profiled with K image items of the maximum feature size."), where the tower's dummy
    item is tabled; ({}, None) where the encoder is not profiled or its item is not known."""
    tower = next((t for t in spec.towers if t.kind == "vision"), None)
    if tower is None or not _profiled(s, r):
        return {}, None
    limits = _limits(s)
    item = profiled_item(tower.config, s, r)
    if item is None or item.budget_tokens <= 0:
        return {}, None
    limit = limits.get(item.modality, _default_limit(r))
    if limit == 0 and not any(v > 0 for v in limits.values()):
        return {}, None
    budget = max(r.max_num_batched_tokens, item.budget_tokens)
    n = dummy_items(item, s, r, limit)
    held, _ = encoder_profile(spec, s, r)
    figures = {"encoder_budget_tokens": budget, "encoder_profile_items": n, "encoder_profile_modality": item.modality,
               "encoder_profile_held_bytes": held}
    return figures, (f"Encoder cache will be initialized with a budget of {budget} tokens, and profiled with {n} "
                     f"{item.modality} items of the maximum feature size.")



# V0's profile run, 0.7.0 -> 0.9.2 read (worker/model_runner.py _dummy_run, multimodal/profiling.py
# MultiModalProfiler.get_decoder_dummy_data): max_num_seqs is cut to max_num_batched_tokens // max_mm_tokens (the
# dummy items' tokens at max_model_len, at least 1 sequence), and sequence i's dummy prompt, of seq_len = its share
# of max_num_batched_tokens, carries limit_mm_per_prompt items of every modality: 1 each in V0 (config.py
# MultiModalConfig.get_limit_per_prompt, "999 if envs.VLLM_USE_V1 else 1"), padded to seq_len. A prompt longer than
# seq_len ("V0 does not support chunked prefill"): up to 0.8.2 replaced by a text-only prompt of seq_len tokens
# (SequenceData.from_prompt_token_counts((0, seq_len)), multi_modal_data None); from 0.8.3 only warned about and run
# whole. The items' pixel inputs (execute_model's multi_modal_kwargs, on the GPU) stay alive through the decoder's
# forward, in float32 as the HF processor returns them up to 0.9.0 and in the model dtype from 0.9.1
# (inputs/registry.py call_hf_processor maybe_cast_dtype, "mimics the behavior of transformers.BatchFeature"; 0.8.4,
# 0.8.5, 0.9.0 have no cast).
V0_MM_PROMPT_FROM = (0, 7, 0)
V0_LONG_PROMPT_FROM = (0, 8, 3)
V0_LIMIT = 1
PIXELS_CAST_FROM = (0, 9, 1)
# qwen2_vl.py _MAX_FRAMES_PER_VIDEO, 0.7.0 -> 0.10.x (14 from 0.11.0, which has no V0)
QWEN_VIDEO_FRAMES = 16
QWEN_VIDEO_FRAMES_V11 = 14
QWEN_FRAMES_14_FROM = (0, 11, 0)
# V1's Qwen-VL video by release (the module's docstring, "Video"): the per-item token counts take the limits as
# counts up to 0.8.3; get_num_frames_with_most_features subtracts the images' tokens up to 0.10.1.1; the dummy video
# is built at max_num_batched_tokens (0.8-0.9, 0.10.1-0.10.2), at its own budgeted tokens (0.10.0) or at
# max_model_len (0.11.0 on); a tie goes to the video from 0.17.0
QWEN_COUNTS_ONE_FROM = (0, 8, 4)
QWEN_DUMMY_COUNTS_FROM = (0, 8, 3)
QWEN_VIDEO_NO_IMAGES_FROM = (0, 10, 2)
QWEN_DUMMY_AT_ITEM = ((0, 10, 0), (0, 10, 1))
QWEN_DUMMY_AT_MODEL_LEN_FROM = (0, 11, 0)
VIDEO_WINS_TIES_FROM = (0, 17, 0)
# Qwen2-VL / Qwen2.5-VL's V0 forward (qwen2_vl.py, qwen2_5_vl.py Qwen2*VLForConditionalGeneration.forward, 0.7.0 ->
# 0.10.1.1 read) parses its pixel keyword arguments into image_input / video_input, locals alive through the language
# model's forward, and _validate_and_reshape_mm_tensor turns the batched (seqs, patches, elems) tensor execute_model
# moved to the GPU into torch.concat(list(mm_input)): a second copy of every pixel beside the batch's
QWEN_V0_PIXEL_COPIES = 2


@dataclass(frozen=True)
class V0Profile:
    """V0's multimodal profile batch: decoder tokens and the GPU bytes of pixel inputs held through its forward."""

    tokens: int
    held: int


def _qwen_steps(item: DummyItem, tp: int, seq_len: int, images: int, videos: int,
                max_frames: int = QWEN_VIDEO_FRAMES) -> int:
    """Grid steps of Qwen2-VL's dummy video: qwen2_vl.py get_num_frames_with_most_features, the frames of the largest
    image that fit seq_len beside the images (_get_max_video_frames), split over the videos, at most
    _MAX_FRAMES_PER_VIDEO and at least 1, padded to temporal_patch_size ("num_frames + num_frames %
    temporal_patch_size"): one grid step is the image's tokens and pixels."""
    per_step = item.budget_tokens
    room = seq_len - item.budget_tokens * images
    total = 0
    cap = max_frames * max(videos, 1)  # past it the split over the videos is capped anyway
    while total < cap and max((total + 1 + (total + 1) % tp) // tp, 1) * per_step <= room:
        total += 1
    frames = max(min(total // max(videos, 1), max_frames), 1)
    return max((frames + frames % tp) // tp, 1)


def _qwen_video(item: DummyItem, tp: int, seq_len: int, images: int, videos: int) -> tuple[int, int]:
    """(tokens, pixel elements) of Qwen2-VL's dummy video in V0 (_qwen_steps)."""
    steps = _qwen_steps(item, tp, seq_len, images, videos)
    return steps * item.budget_tokens, steps * item.pixel_elems


def qwen_v1_video(config: Mapping[str, Any], image: DummyItem, limits: Mapping[str, int],
                  r: Resolved) -> DummyItem | None:
    """V1's dummy video of Qwen2-VL / Qwen2.5-VL where profile_run profiles it rather than the image (the module's
    "Video"), else None: its budgeted tokens at max_model_len, and the tokens, pixels and patches of the video
    _get_mm_dummy_batch builds."""
    if str(config.get("model_type", "")) not in ("qwen2_vl", "qwen2_5_vl") or image.budget_tokens <= 0:
        return None
    default = _default_limit(r)
    n_images, n_videos = limits.get("image", default), limits.get("video", default)
    if n_videos <= 0:
        return None
    if r.version >= QWEN_COUNTS_ONE_FROM:
        n_images, n_videos = min(n_images, 1), 1
    tp = int((config.get("vision_config") or {}).get("temporal_patch_size", 2)) or 2
    cap = QWEN_VIDEO_FRAMES_V11 if r.version >= QWEN_FRAMES_14_FROM else QWEN_VIDEO_FRAMES
    images_before = 0 if r.version >= QWEN_VIDEO_NO_IMAGES_FROM else max(n_images, 0)
    budget = _qwen_steps(image, tp, r.max_model_len, images_before, n_videos, cap) * image.budget_tokens
    if n_images > 0 and (budget < image.budget_tokens
                         or budget == image.budget_tokens and r.version < VIDEO_WINS_TIES_FROM):
        return None
    if r.version >= QWEN_DUMMY_AT_MODEL_LEN_FROM:
        seq_len = r.max_model_len
    elif QWEN_DUMMY_AT_ITEM[0] <= r.version < QWEN_DUMMY_AT_ITEM[1]:
        seq_len = budget
    else:
        seq_len = r.max_num_batched_tokens
    # up to 0.8.2 get_num_frames_with_most_features reads the counts from limit_per_prompt, so the dummy video
    # leaves room for the images there too; from 0.8.3 it takes mm_counts ({video: 1})
    images_dummy = max(n_images, 0) if r.version < QWEN_DUMMY_COUNTS_FROM else 0
    steps = _qwen_steps(image, tp, seq_len, images_dummy, n_videos if r.version < QWEN_DUMMY_COUNTS_FROM else 1, cap)
    return DummyItem("video", budget, steps * image.output_tokens, steps * image.pixel_elems,
                     steps * image.int_bytes, steps * image.patches)


# Qwen3-VL's video (qwen3_vl.py Qwen3VLProcessingInfo, 0.11.0 -> 0.12.0 read; 0.13.0 drops the 12.5): the video
# processor's own size (video_preprocessor_config.json longest_edge 25,165,824 = 768 x 32^2 over all frames,
# shortest_edge 4,096), _MAX_FRAMES_PER_VIDEO 24,576, _get_max_video_frames from 2 frames, and get_max_video_tokens
# counting each soft token x 12.5 ("<{timestamp} seconds>" + vision_start + video + vision_end)
QWEN3_VIDEO_MAX_PIXELS = 25165824
QWEN3_VIDEO_MIN_PIXELS = 4096
QWEN3_VIDEO_FRAMES = 24576
QWEN3_VIDEO_START_FRAMES = 2
QWEN3_VIDEO_TOKEN_FACTOR = 12.5
QWEN3_VIDEO_FROM, QWEN3_VIDEO_BEFORE = (0, 11, 0), (0, 13, 0)


def _qwen3_video_grid(side: int, frames: int, patch: int, merge: int, tp: int) -> tuple[int, int]:
    """(soft tokens, patches) of a video of `frames` square frames of `side` (the largest image): transformers'
    qwen3_vl video_processing smart_resize (max_pixels / min_pixels over t_bar x h x w, beta from num_frames), then
    qwen3_vl.py Qwen3VLProcessingInfo._get_vision_info (grid_t = max((F + F % tp) // tp, 1))."""
    factor = patch * merge
    h = round(side / factor) * factor
    t_bar = round(frames / tp) * tp
    if t_bar * h * h > QWEN3_VIDEO_MAX_PIXELS:
        beta = math.sqrt(frames * side * side / QWEN3_VIDEO_MAX_PIXELS)
        h = max(factor, math.floor(side / beta / factor) * factor)
    elif t_bar * h * h < QWEN3_VIDEO_MIN_PIXELS:
        beta = math.sqrt(QWEN3_VIDEO_MIN_PIXELS / (frames * side * side))
        h = math.ceil(side * beta / factor) * factor
    patches = max((frames + frames % tp) // tp, 1) * (h // patch) ** 2
    return patches // (merge * merge), patches


def qwen3_v1_video(config: Mapping[str, Any], image: DummyItem, limits: Mapping[str, int],
                   r: Resolved) -> DummyItem | None:
    """V1's dummy video of Qwen3-VL (0.11.0 -> 0.12.x) where profile_run profiles it rather than the image, else
    None. qwen3_vl.py get_num_frames_with_most_features: from 2 frames, the most whose soft tokens fit seq_len
    (max_model_len; mm_counts one video), at most 24,576; get_max_video_tokens: int(soft tokens x 12.5), the budget.
    The dummy video (get_dummy_mm_data at max_model_len, "do_sample_frames": False) is those frames resized by the
    video processor: its soft tokens are the encoder's outputs."""
    vc = config.get("vision_config") or {}
    if (not str(vc.get("model_type", "")).startswith("qwen3_vl") or image.budget_tokens <= 0
            or not QWEN3_VIDEO_FROM <= r.version < QWEN3_VIDEO_BEFORE):
        return None
    default = _default_limit(r)
    if limits.get("video", default) <= 0:
        return None
    patch, merge = int(vc.get("patch_size", 16)), int(vc.get("spatial_merge_size", 2))
    tp = int(vc.get("temporal_patch_size", 2)) or 2
    ch = int(vc.get("in_channels", vc.get("in_chans", 3)))
    side = math.isqrt(image.patches) * patch  # get_image_size_with_most_features
    frames = QWEN3_VIDEO_START_FRAMES
    while frames < QWEN3_VIDEO_FRAMES and _qwen3_video_grid(side, frames + 1, patch, merge, tp)[0] <= r.max_model_len:
        frames += 1
    tokens, patches = _qwen3_video_grid(side, frames, patch, merge, tp)
    budget = int(tokens * QWEN3_VIDEO_TOKEN_FACTOR)
    if limits.get("image", default) > 0 and budget <= image.budget_tokens:
        return None
    return DummyItem("video", budget, tokens, patches * ch * tp * patch * patch, patches=patches)


def profiled_item(config: Mapping[str, Any], s: VllmSettings, r: Resolved) -> DummyItem | None:
    """The item V1's profile_run profiles: dummy_item's, or the Qwen-VL video where it outweighs the image."""
    limits = _limits(s)
    item = dummy_item(config, limits, processor_max_pixels(s.mm_processor_kwargs))
    if item is None or item.modality != "image":
        return item
    return qwen_v1_video(config, item, limits, r) or qwen3_v1_video(config, item, limits, r) or item


def v0_profile(spec: ModelSpec, s: VllmSettings, r: Resolved) -> V0Profile:
    """V0's profile batch: max_num_batched_tokens and nothing held, or more tokens where the dummy multimodal
    prompts are longer than their share (0.8.3 on), with the pixels of the prompts that keep their items. Qwen2-VL /
    Qwen2.5-VL list a video beside the image (qwen2_vl.py get_dummy_processor_inputs)."""
    T = r.max_num_batched_tokens
    plain = V0Profile(T, 0)
    tower = next((t for t in spec.towers if t.kind == "vision"), None)
    if r.v1 or tower is None or r.version < V0_MM_PROMPT_FROM:
        return plain
    limits = _limits(s)
    item = dummy_item(tower.config, limits, processor_max_pixels(s.mm_processor_kwargs))
    if item is None or item.budget_tokens <= 0:
        return plain
    images = max(0, limits.get("image", V0_LIMIT))
    videos, copies = 0, 1
    if str(tower.config.get("model_type", "")) in ("qwen2_vl", "qwen2_5_vl"):
        videos, copies = max(0, limits.get("video", V0_LIMIT)), QWEN_V0_PIXEL_COPIES
    tp = int((tower.config.get("vision_config") or {}).get("temporal_patch_size", 2)) or 2

    def prompt(seq_len: int) -> tuple[int, int]:
        """(tokens, pixel elements) of one dummy prompt's items at seq_len."""
        v_tokens, v_pixels = _qwen_video(item, tp, seq_len, images, videos) if videos else (0, 0)
        return images * item.budget_tokens + videos * v_tokens, images * item.pixel_elems + videos * v_pixels

    mm_tokens, _ = prompt(r.max_model_len)  # get_max_multimodal_tokens
    if images + videos == 0 or mm_tokens <= 0:
        return plain
    seqs = max(1, min(r.max_num_seqs, T // mm_tokens))
    pixel_bytes = r.dtype_bytes if r.version >= PIXELS_CAST_FROM else 4
    tokens = held = 0
    for seq_len, count in ((T // seqs + 1, T % seqs), (T // seqs, seqs - T % seqs)):
        if count <= 0:
            continue
        length, pixels = prompt(seq_len)
        if length > seq_len and r.version < V0_LONG_PROMPT_FROM:
            length, pixels = seq_len, 0  # the text-only prompt
        tokens += count * max(seq_len, length)
        held += count * (copies * pixels * pixel_bytes + (images * item.int_bytes if pixels else 0))
    return V0Profile(max(T, tokens), held)
