"""Multimodal towers: the vision encoder and its projector that a VLM checkpoint carries beside its decoder.

Counted from config.json's ``vision_config`` module by module, as transformers builds them (the file and class
are named at each family). vLLM, SGLang and transformers load the tower with the checkpoint; llama.cpp and Ollama
load it from a separate mmproj GGUF (``--mmproj``; Ollama's ``projector.*`` fields). A family whose modules are not
tabled here gives None: the caller says the tower is not counted, never a guess.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import ModelError


@dataclass(frozen=True)
class Tower:
    """One encoder (with its projector): its parameters, the bytes at a dtype and the family it was read as."""

    kind: str  # "vision"
    family: str  # the vision_config model_type read ("siglip_vision_model", "qwen3_vl", ...)
    params: int
    encoder_params: int
    projector_params: int
    source: str  # the transformers modules it mirrors
    # the tower's block count (num_hidden_layers, or Qwen's `depth`) and hidden_size, None where absent; SGLang's
    # adjust_mem_fraction_for_vlm reads num_hidden_layers only (engines/sglang/kv.py _vit_dims)
    config_layers: int | None = None
    config_hidden: int | None = None
    # the checkpoint's config.json it was read from (vision_config and the top-level multimodal keys): the geometry
    # of the engines' dummy inputs (engines/vllm/encoder.py)
    config: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def nbytes(self, dtype_bytes: int = 2) -> int:
        return self.params * dtype_bytes


def _linear(i: int, o: int, bias: bool = True) -> int:
    return i * o + (o if bias else 0)


def _layernorm(n: int) -> int:
    return 2 * n  # weight + bias


def _siglip(vc: Mapping[str, Any]) -> int:
    # transformers models/siglip/modeling_siglip.py SiglipVisionTransformer; the pooling head only when the config
    # asks for it (Gemma 3's config.json sets vision_use_head false, and its copies here leave the key out)
    h, ff, n = int(vc["hidden_size"]), int(vc["intermediate_size"]), int(vc["num_hidden_layers"])
    patch, image, ch = int(vc["patch_size"]), int(vc["image_size"]), int(vc.get("num_channels", 3))
    embeddings = ch * patch * patch * h + h + (image // patch) ** 2 * h  # patch_embedding Conv2d + position_embedding
    layer = 2 * _layernorm(h) + 4 * _linear(h, h) + _linear(h, ff) + _linear(ff, h)  # q, k, v, out_proj; fc1, fc2
    total = embeddings + n * layer + _layernorm(h)  # post_layernorm
    if vc.get("vision_use_head") is True:
        # SiglipMultiheadAttentionPoolingHead: probe, nn.MultiheadAttention (in_proj 3h x h, out_proj), LayerNorm, MLP
        total += h + _linear(h, 3 * h) + _linear(h, h) + _layernorm(h) + _linear(h, ff) + _linear(ff, h)
    return total


def _gemma3(cfg: Mapping[str, Any], vc: Mapping[str, Any], text_hidden: int) -> Tower:
    enc = _siglip(vc)
    # models/gemma3/modeling_gemma3.py Gemma3MultiModalProjector: mm_input_projection_weight [vision, text], RMSNorm
    h = int(vc["hidden_size"])
    proj = h * text_hidden + h
    return Tower("vision", "siglip_vision_model", enc + proj, enc, proj,
                 "transformers SiglipVisionTransformer + Gemma3MultiModalProjector")


def _mllama(cfg: Mapping[str, Any], vc: Mapping[str, Any], text_hidden: int) -> Tower:
    # transformers models/mllama/modeling_mllama.py MllamaVisionModel: patch_embedding Conv2d without bias,
    # class_embedding, gated_positional_embedding (MllamaPrecomputedPositionEmbedding: gate, embedding [patches, h],
    # tile_embedding [max_aspect_ratio_id + 1, tiles x patches x h]), pre/post_tile_positional_embedding
    # (MllamaPrecomputedAspectRatioEmbedding: embedding [max_aspect_ratio_id + 1, tiles x h], gate), layernorm_pre /
    # layernorm_post, `transformer` (num_hidden_layers MllamaVisionEncoderLayer: q/k/v/o without bias, fc1 / fc2
    # with bias, two LayerNorms) and `global_transformer` (num_global_layers gated layers: + gate_attn, gate_ffn);
    # MllamaForConditionalGeneration.multi_modal_projector: Linear(vision_output_dim, text hidden) with bias.
    # max_aspect_ratio_id = len(supported_aspect_ratios) (MllamaVisionConfig)
    h, ff = int(vc["hidden_size"]), int(vc["intermediate_size"])
    n, g = int(vc["num_hidden_layers"]), int(vc["num_global_layers"])
    p, image, ch = int(vc["patch_size"]), int(vc["image_size"]), int(vc.get("num_channels", 3))
    tiles, ratios = int(vc["max_num_tiles"]), len(vc["supported_aspect_ratios"])
    patches = (image // p) ** 2 + 1
    embeddings = (ch * p * p * h + h + 1 + patches * h + (ratios + 1) * tiles * patches * h
                  + 2 * ((ratios + 1) * tiles * h + 1) + 2 * _layernorm(h))
    layer = 4 * _linear(h, h, bias=False) + _linear(h, ff) + _linear(ff, h) + 2 * _layernorm(h)
    enc = embeddings + n * layer + g * (layer + 2)
    proj = _linear(int(vc["vision_output_dim"]), text_hidden)
    return Tower("vision", "mllama_vision_model", enc + proj, enc, proj,
                 "transformers MllamaVisionModel + MllamaForConditionalGeneration.multi_modal_projector")


def _qwen3_vl(cfg: Mapping[str, Any], vc: Mapping[str, Any], text_hidden: int) -> Tower:
    # transformers models/qwen3_vl/modeling_qwen3_vl.py Qwen3VLVisionModel (Qwen3.5 / 3.6 use the same tower)
    h, ff, depth = int(vc["hidden_size"]), int(vc["intermediate_size"]), int(vc["depth"])
    p, tp, ch = int(vc["patch_size"]), int(vc.get("temporal_patch_size", 2)), int(vc.get("in_channels", 3))
    merge, out = int(vc.get("spatial_merge_size", 2)), int(vc["out_hidden_size"])
    patch_embed = ch * tp * p * p * h + h  # Qwen3VLVisionPatchEmbed: Conv3d with bias
    pos_embed = int(vc["num_position_embeddings"]) * h
    block = 2 * _layernorm(h) + _linear(h, 3 * h) + _linear(h, h) + _linear(h, ff) + _linear(ff, h)
    enc = patch_embed + pos_embed + depth * block
    m = h * merge * merge  # Qwen3VLVisionPatchMerger: the merged patch width

    def merger(postshuffle: bool) -> int:
        return _layernorm(m if postshuffle else h) + _linear(m, m) + _linear(m, out)

    proj = merger(False) + len(vc.get("deepstack_visual_indexes") or ()) * merger(True)
    return Tower("vision", str(vc.get("model_type", "qwen3_vl")), enc + proj, enc, proj,
                 "transformers Qwen3VLVisionModel (patch_embed, pos_embed, blocks, merger, deepstack mergers)")


def _rmsnorm(n: int) -> int:
    return n  # weight only


def _qwen2_5_vl(cfg: Mapping[str, Any], vc: Mapping[str, Any], text_hidden: int) -> Tower:
    # transformers models/qwen2_5_vl/modeling_qwen2_5_vl.py Qwen2_5_VisionTransformerPretrainedModel: patch_embed
    # Conv3d without bias, blocks of RMSNorm + qkv/proj with bias + gated MLP with bias, Qwen2_5_VLPatchMerger (no
    # position table: rotary)
    h, ff, depth = int(vc["hidden_size"]), int(vc["intermediate_size"]), int(vc["depth"])
    p, tp = int(vc["patch_size"]), int(vc.get("temporal_patch_size", 2))
    ch = int(vc.get("in_channels", vc.get("in_chans", 3)))
    merge, out = int(vc.get("spatial_merge_size", 2)), int(vc["out_hidden_size"])
    block = 2 * _rmsnorm(h) + _linear(h, 3 * h) + _linear(h, h) + 2 * _linear(h, ff) + _linear(ff, h)
    enc = ch * tp * p * p * h + depth * block
    m = h * merge * merge
    proj = _rmsnorm(h) + _linear(m, m) + _linear(m, out)
    return Tower("vision", "qwen2_5_vl", enc + proj, enc, proj,
                 "transformers Qwen2_5_VisionTransformerPretrainedModel (patch_embed, blocks, merger)")


def _qwen2_vl(cfg: Mapping[str, Any], vc: Mapping[str, Any], text_hidden: int) -> Tower:
    # transformers models/qwen2_vl/modeling_qwen2_vl.py Qwen2VisionTransformerPretrainedModel: PatchEmbed Conv3d
    # without bias, Qwen2VLVisionBlock of two LayerNorms + qkv/proj with bias + VisionMlp fc1/fc2 with bias (width
    # embed_dim x mlp_ratio, QuickGELU), PatchMerger (LayerNorm over embed_dim, Linear m -> m, Linear m -> hidden_size);
    # no position table (rotary), no window attention. A key the config leaves out takes configuration_qwen2_vl.py
    # Qwen2VLVisionConfig's default (depth 32, embed_dim 1280, mlp_ratio 4, patch 14, temporal 2, merge 2, 3
    # channels), as transformers builds it; vision_config's hidden_size is the merger's output width (the LM's)
    e, depth = int(vc.get("embed_dim", 1280)), int(vc.get("depth", 32))
    ff = int(e * float(vc.get("mlp_ratio", 4)))
    # (the older in_chans / spatial_patch_size keys are not read by transformers: its defaults stand)
    p, tp, ch = int(vc.get("patch_size", 14)), int(vc.get("temporal_patch_size", 2)), int(vc.get("in_channels", 3))
    merge, out = int(vc.get("spatial_merge_size", 2)), int(vc.get("hidden_size", 3584))
    block = 2 * _layernorm(e) + _linear(e, 3 * e) + _linear(e, e) + _linear(e, ff) + _linear(ff, e)
    enc = ch * tp * p * p * e + depth * block
    m = e * merge * merge
    proj = _layernorm(e) + _linear(m, m) + _linear(m, out)
    return Tower("vision", "qwen2_vl", enc + proj, enc, proj,
                 "transformers Qwen2VisionTransformerPretrainedModel (patch_embed, blocks, merger)", config_layers=depth)


def _llama4(cfg: Mapping[str, Any], vc: Mapping[str, Any], text_hidden: int) -> Tower:
    # transformers models/llama4/modeling_llama4.py Llama4VisionModel: Llama4UnfoldConvolution (a Linear over the
    # unfolded patch, no bias), class_embedding, positional_embedding_vlm (patches + 1 rows), layernorm_pre/post,
    # encoder layers (q/k/v/o with bias, fc1/fc2 with bias, two LayerNorms), the vision_adapter
    # Llama4VisionPixelShuffleMLP (fc1 intermediate -> projector_input_dim, fc2 projector_output_dim square, no
    # biases); Llama4MultiModalProjector linear_1 vision_output_dim -> text hidden, no bias
    h, ff, n = int(vc["hidden_size"]), int(vc["intermediate_size"]), int(vc["num_hidden_layers"])
    p, image, ch = int(vc["patch_size"]), int(vc["image_size"]), int(vc.get("num_channels", 3))
    pin, pout = int(vc["projector_input_dim"]), int(vc["projector_output_dim"])
    embeddings = ch * p * p * h + h + ((image // p) ** 2 + 1) * h
    layer = 4 * _linear(h, h) + _linear(h, ff) + _linear(ff, h) + 2 * _layernorm(h)
    adapter = ff * pin + pout * pout
    enc = embeddings + 2 * _layernorm(h) + n * layer + adapter
    proj = int(vc["vision_output_dim"]) * text_hidden
    return Tower("vision", "llama4_vision_model", enc + proj, enc, proj,
                 "transformers Llama4VisionModel (with its pixel-shuffle adapter) + Llama4MultiModalProjector")


def _pixtral(cfg: Mapping[str, Any], vc: Mapping[str, Any], text_hidden: int) -> Tower:
    # transformers models/pixtral/modeling_pixtral.py PixtralVisionModel: patch_conv without bias, ln_pre RMSNorm,
    # layers of attention_norm + q/k/v/o (no bias) + ffn_norm + gated MLP (no bias); rotary positions, no table.
    # models/mistral3/modeling_mistral3.py Mistral3MultiModalProjector: RMSNorm, Mistral3PatchMerger (merging_layer
    # h*s^2 -> h, no bias), linear_1 h -> text, linear_2 text -> text (bias = multimodal_projector_bias)
    h, ff, n = int(vc["hidden_size"]), int(vc["intermediate_size"]), int(vc["num_hidden_layers"])
    p, ch = int(vc["patch_size"]), int(vc.get("num_channels", 3))
    layer = 2 * _rmsnorm(h) + 4 * h * h + 3 * h * ff
    enc = ch * p * p * h + _rmsnorm(h) + n * layer
    merge = int(cfg.get("spatial_merge_size", 2))
    bias = bool(cfg.get("multimodal_projector_bias", False))
    proj = _rmsnorm(h) + h * merge * merge * h + _linear(h, text_hidden, bias) + _linear(text_hidden, text_hidden, bias)
    return Tower("vision", "pixtral", enc + proj, enc, proj,
                 "transformers PixtralVisionModel + Mistral3MultiModalProjector (patch merger)")


def _clip(vc: Mapping[str, Any]) -> int:
    # transformers models/clip/modeling_clip.py CLIPVisionTransformer: class_embedding, patch Conv2d without bias,
    # position_embedding (patches + 1), pre_layrnorm, layers (q/k/v/out_proj, fc1/fc2 with bias, two LayerNorms),
    # post_layernorm
    h, ff, n = int(vc["hidden_size"]), int(vc["intermediate_size"]), int(vc["num_hidden_layers"])
    p, image, ch = int(vc["patch_size"]), int(vc["image_size"]), int(vc.get("num_channels", 3))
    embeddings = h + ch * p * p * h + ((image // p) ** 2 + 1) * h
    layer = 4 * _linear(h, h) + _linear(h, ff) + _linear(ff, h) + 2 * _layernorm(h)
    return embeddings + 2 * _layernorm(h) + n * layer


def _llava(cfg: Mapping[str, Any], vc: Mapping[str, Any], text_hidden: int) -> Tower:
    # transformers models/llava/modeling_llava.py: the whole CLIP vision tower is built (vision_feature_layer only
    # picks which hidden state feeds the projector); LlavaMultiModalProjector linear_1 vision -> text, GELU,
    # linear_2 text -> text (bias = multimodal_projector_bias, default true)
    enc = _clip(vc)
    h = int(vc["hidden_size"])
    n_feat = len(cfg["vision_feature_layer"]) if isinstance(cfg.get("vision_feature_layer"), list) else 1
    bias = bool(cfg.get("multimodal_projector_bias", True))
    proj = _linear(h * n_feat, text_hidden, bias) + _linear(text_hidden, text_hidden, bias)
    return Tower("vision", "clip_vision_model", enc + proj, enc, proj,
                 "transformers CLIPVisionModel + LlavaMultiModalProjector")


def _internvl(cfg: Mapping[str, Any], vc: Mapping[str, Any], text_hidden: int) -> Tower:
    # InternViT as transformers models/internvl/modeling_internvl.py InternVLVisionModel builds it (the remote-code
    # InternVisionModel of OpenGVLab/InternVL2-* holds the same tensors: fused qkv = q/k/v): cls token, patch Conv2d
    # with bias, position table (patches + 1), layers of q/k/v (bias = qkv_bias / attention_bias), projection with
    # bias, optional q/k RMSNorm over the full width, fc1/fc2 with bias, two norms, two layer-scale vectors; no
    # final norm (use_mean_pooling). InternVLMultiModalProjector (the remote code's mlp1): LayerNorm over the pixel-
    # shuffled width, linear_1 -> text, linear_2 text -> text
    h, ff, n = int(vc["hidden_size"]), int(vc["intermediate_size"]), int(vc["num_hidden_layers"])
    p = vc["patch_size"][0] if isinstance(vc["patch_size"], list) else vc["patch_size"]
    image = vc["image_size"][0] if isinstance(vc["image_size"], list) else vc["image_size"]
    p, image, ch = int(p), int(image), int(vc.get("num_channels", 3))
    bias = bool(vc.get("qkv_bias", vc.get("attention_bias", True)))
    qk_norm = bool(vc.get("qk_normalization", vc.get("use_qk_norm", False)))
    norm = _rmsnorm(h) if vc.get("norm_type") == "rms_norm" else _layernorm(h)
    layer = 3 * _linear(h, h, bias) + _linear(h, h) + (2 * h if qk_norm else 0) + _linear(h, ff) + _linear(ff, h)
    layer += 2 * norm + 2 * h
    enc = h + ch * p * p * h + h + ((image // p) ** 2 + 1) * h + n * layer
    ratio = float(cfg.get("downsample_ratio", 0.5))
    if not 0 < ratio <= 1:  # pixel_shuffle(scale_factor=downsample_ratio) folds 1/ratio x 1/ratio patches into one
        raise ModelError(f"config field downsample_ratio = {ratio:g} must be in (0, 1] (InternVL's pixel shuffle)")
    m = h * round(1 / ratio) ** 2
    proj = _layernorm(m) + _linear(m, text_hidden) + _linear(text_hidden, text_hidden)
    return Tower("vision", "internvl_vision", enc + proj, enc, proj,
                 "transformers InternVLVisionModel (= remote-code InternVisionModel) + InternVLMultiModalProjector")


def _moonvit(cfg: Mapping[str, Any], vc: Mapping[str, Any], text_hidden: int) -> Tower:
    # MoonViT, as transformers models/kimi_k25/modeling_kimi_k25.py builds it (Kimi-VL's remote-code
    # MoonVitPretrainedModel holds the same tensors, wqkv fused): patch Conv2d with bias, a learned pos_h x pos_w
    # position grid, layers of q/k/v/proj and fc1/fc2 with bias and two LayerNorms, final_layernorm; the projector
    # (Kimi_K25MultimodalProjection, Kimi-VL's KimiVLMultiModalProjector): LayerNorm(h), a square Linear over the
    # merged width, a Linear to the text width, both with bias. Kimi-K2.5 writes the fields as vt_*.
    h = int(vc.get("vt_hidden_size", vc.get("hidden_size")))
    ff = int(vc.get("vt_intermediate_size", vc.get("intermediate_size")))
    n = int(vc.get("vt_num_hidden_layers", vc.get("num_hidden_layers")))
    p = int(vc["patch_size"])
    grid = int(vc.get("init_pos_emb_height", 64)) * int(vc.get("init_pos_emb_width", 64))
    layer = 4 * _linear(h, h) + _linear(h, ff) + _linear(ff, h) + 2 * _layernorm(h)
    enc = 3 * p * p * h + h + grid * h + n * layer + _layernorm(h)
    kh, kw = vc.get("merge_kernel_size", [2, 2])
    m = h * int(kh) * int(kw)
    proj = _layernorm(int(vc.get("mm_hidden_size", h))) + _linear(m, m) + _linear(m, text_hidden)
    return Tower("vision", "moonvit", enc + proj, enc, proj,
                 "transformers Kimi_K25VisionModel + Kimi_K25MultimodalProjection (MoonViT, as Kimi-VL's)")


def _gemma4(cfg: Mapping[str, Any], vc: Mapping[str, Any], text_hidden: int) -> Tower:
    # transformers models/gemma4/modeling_gemma4.py Gemma4VisionModel: Gemma4VisionPatchEmbedder (input_proj
    # Linear(3 p^2 -> h) without bias, position_embedding_table [2, position_embedding_size, h]); per layer q/k/v/o
    # without bias, q_norm/k_norm over head_dim (v_norm has no weight), four RMSNorms and a gated MLP (gate, up,
    # down) without bias; with use_clipped_linears each of the seven linears keeps input/output min/max scalars;
    # with standardize the std_bias / std_scale vectors. The 27-layer, 1152-wide tower of the 26B-A4B and 31B counts
    # 569,550,384 this way (rnagabh/gemma4-vision-encoder config.json: "_verified_total_params": 569550384).
    # Projector: Gemma4MultimodalEmbedder, embedding_projection Linear(h -> text hidden) without bias after a
    # weightless RMSNorm (Ollama's gemma4:26b projector: mm.input_projection.weight [1152, 2816]).
    h, ff, n = int(vc["hidden_size"]), int(vc["intermediate_size"]), int(vc["num_hidden_layers"])
    heads, hd = int(vc["num_attention_heads"]), int(vc["head_dim"])
    kv = int(vc.get("num_key_value_heads", heads))
    p, pos = int(vc["patch_size"]), int(vc["position_embedding_size"])
    layer = 2 * h * heads * hd + 2 * h * kv * hd + 2 * hd + 4 * h + 3 * h * ff
    if vc.get("use_clipped_linears"):
        layer += 7 * 4
    enc = 3 * p * p * h + 2 * pos * h + n * layer + (2 * h if vc.get("standardize") else 0)
    proj = h * text_hidden
    return Tower("vision", "gemma4_vision", enc + proj, enc, proj,
                 "transformers Gemma4VisionModel + Gemma4MultimodalEmbedder")


def _glm4v(cfg: Mapping[str, Any], vc: Mapping[str, Any], text_hidden: int) -> Tower:
    # transformers models/glm4v(_moe)/modeling_glm4v(_moe).py Glm4vVisionModel, module by module as transformers
    # 5.7.0 prints it for zai-org/GLM-4.5V (with the checkpoint's tensor list: code search id 62538297598):
    # patch_embed Conv3d(3, h, (2, p, p)) with bias, embeddings.position_embedding ((image_size / p)^2 x h), blocks of
    # two RMSNorms + attn.qkv / attn.proj without bias (attention_bias false) + a gated MLP h -> out_hidden_size -> h
    # without bias, post_conv_layernorm and post_layernorm (RMSNorm); projector: downsample Conv2d(h, out, merge x
    # merge) with bias, then the merger (proj out -> out, post_projection_norm LayerNorm, gate/up out ->
    # intermediate_size, down back, all without bias)
    h, depth, out = int(vc["hidden_size"]), int(vc["depth"]), int(vc["out_hidden_size"])
    ff = int(vc["intermediate_size"])
    p, tp, ch = int(vc["patch_size"]), int(vc.get("temporal_patch_size", 2)), int(vc.get("in_channels", 3))
    merge, image = int(vc.get("spatial_merge_size", 2)), int(vc["image_size"])
    bias = bool(vc.get("attention_bias", False))
    block = 2 * _rmsnorm(h) + _linear(h, 3 * h, bias) + _linear(h, h, bias) + 3 * h * out
    enc = ch * tp * p * p * h + h + (image // p) ** 2 * h + depth * block + 2 * _rmsnorm(h)
    proj = h * out * merge * merge + out + out * out + _layernorm(out) + 3 * out * ff
    return Tower("vision", str(vc.get("model_type", "glm4v")), enc + proj, enc, proj,
                 "transformers Glm4vVisionModel (patch_embed, embeddings, blocks, downsample, merger)")


_FAMILIES = {"siglip_vision_model": _gemma3, "qwen3_vl": _qwen3_vl, "qwen3_5": _qwen3_vl, "qwen3_5_moe": _qwen3_vl,
             "qwen3_vl_moe": _qwen3_vl, "llama4_vision_model": _llama4, "pixtral": _pixtral,
             "clip_vision_model": _llava, "intern_vit_6b": _internvl, "internvl_vision": _internvl,
             "moonvit": _moonvit, "gemma4_vision": _gemma4, "mllama_vision_model": _mllama,
             # transformers 5.x's names for the Qwen3.5 towers' configs (Qwen3_5VisionConfig, Qwen3_5MoeVisionConfig)
             "qwen3_5_vision": _qwen3_vl, "qwen3_5_moe_vision": _qwen3_vl,
             # GLM-4.5V's tower (vision_config model_type glm4v_moe_vision; glm4v_moe in configs written before
             # transformers 5, as public loaders quote GLM-4.5V's: code search id 54648530246)
             "glm4v_moe_vision": _glm4v, "glm4v_moe": _glm4v,
             # GLM-4.1V-Thinking / GLM-4.6V-Flash's tower (transformers configuration_glm4v.py Glm4vVisionConfig:
             # model_type glm4v_vision; glm4v in configs written before transformers 5)
             "glm4v_vision": _glm4v, "glm4v": _glm4v,
             # Qwen3-Omni's thinker tower: transformers modeling_qwen3_omni_moe.py Qwen3OmniMoeVisionEncoder, module for
             # module Qwen3-VL's (patch_embed, pos_embed, blocks, merger, deepstack mergers; 538,631,408 parameters for
             # Qwen3-Omni-30B-A3B's values, equal to transformers 5.24's count)
             "qwen3_omni_moe_vision_encoder": _qwen3_vl}
# vision_configs that name no model_type of their own (Qwen2.5-VL's, Kimi-K2.5's) or the checkpoint's (Qwen2-VL's),
# by the checkpoint's model_type
_BY_MODEL_TYPE = {"qwen2_5_vl": _qwen2_5_vl, "qwen2_vl": _qwen2_vl, "kimi_k25": _moonvit}


def vision_tower(config: Mapping[str, Any]) -> Tower | None:
    """The vision tower a config.json describes, or None (no vision_config, or a family not tabled here). An omni
    model's is the thinker's (Qwen3-Omni: thinker_config.vision_config beside thinker_config.text_config)."""
    thinker = config.get("thinker_config")
    if isinstance(thinker, Mapping) and isinstance(thinker.get("vision_config"), Mapping):
        return vision_tower(thinker)
    vc = config.get("vision_config")
    if not isinstance(vc, Mapping):
        return None
    fn = _FAMILIES.get(str(vc.get("model_type", ""))) or _BY_MODEL_TYPE.get(str(config.get("model_type", "")))
    if fn is None:
        return None
    tc = next((config[k] for k in ("text_config", "llm_config") if isinstance(config.get(k), Mapping)), config)
    try:
        tower = fn(config, vc, int(tc["hidden_size"]))
    except ModelError:  # a value the family cannot have (an OomkitError is a ValueError too): said, not skipped
        raise
    except (ZeroDivisionError, IndexError, OverflowError):  # a size of 0 (patch_size 0) or an empty list: no tower
        raise ModelError(f"config field {_no_size(vc)}: the vision tower cannot be sized from it") from None
    except (KeyError, TypeError, ValueError):
        return None  # a vision_config without the fields its family needs: not counted
    layers = vc.get("num_hidden_layers", vc.get("depth", vc.get("vt_num_hidden_layers")))
    hidden = vc.get("hidden_size", vc.get("vt_hidden_size"))
    # a depth the config leaves to its family's default (Qwen2-VL's) stays as the family function read it
    return replace(tower, config_layers=int(layers) if isinstance(layers, int) else tower.config_layers,
                   config_hidden=int(hidden) if isinstance(hidden, int) else None, config=config)


def _no_size(vc: Mapping[str, Any]) -> str:
    """The vision_config field a tower could not be sized from: the first size of 0 or less, or empty list."""
    for k, v in vc.items():
        if (isinstance(v, (int, float)) and not isinstance(v, bool) and v <= 0 and not k.endswith(("dropout", "_eps",
                "epsilon", "range", "_rate"))) or (isinstance(v, list) and (not v or any(
                isinstance(x, (int, float)) and not isinstance(x, bool) and x <= 0 for x in v))):
            return f"vision_config.{k} = {v!r}"
    return "vision_config (a size of 0 or out of range)"
