"""Multimodal towers: the vision encoder and its projector that a VLM checkpoint carries beside its decoder.

Counted from config.json's ``vision_config`` module by module, as transformers builds them (the file and class
are named at each family). vLLM, SGLang and transformers load the tower with the checkpoint; llama.cpp and Ollama
load it from a separate mmproj GGUF (``--mmproj``; Ollama's ``projector.*`` fields). A family whose modules are not
tabled here gives None: the caller says the tower is not counted, never a guess.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Tower:
    """One encoder (with its projector): its parameters, the bytes at a dtype and the family it was read as."""

    kind: str  # "vision"
    family: str  # the vision_config model_type read ("siglip_vision_model", "qwen3_vl", ...)
    params: int
    encoder_params: int
    projector_params: int
    source: str  # the transformers modules it mirrors

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


_FAMILIES = {"siglip_vision_model": _gemma3, "qwen3_vl": _qwen3_vl, "qwen3_5": _qwen3_vl, "qwen3_5_moe": _qwen3_vl,
             "qwen3_vl_moe": _qwen3_vl}
# vision_configs that name no model_type of their own (Qwen2.5-VL's), by the checkpoint's model_type
_BY_MODEL_TYPE = {"qwen2_5_vl": _qwen2_5_vl}


def vision_tower(config: Mapping[str, Any]) -> Tower | None:
    """The vision tower a config.json describes, or None (no vision_config, or a family not tabled here)."""
    vc = config.get("vision_config")
    if not isinstance(vc, Mapping):
        return None
    fn = _FAMILIES.get(str(vc.get("model_type", ""))) or _BY_MODEL_TYPE.get(str(config.get("model_type", "")))
    if fn is None:
        return None
    tc = config.get("text_config") if isinstance(config.get("text_config"), Mapping) else config
    try:
        return fn(config, vc, int(tc["hidden_size"]))
    except (KeyError, TypeError, ValueError):
        return None  # a vision_config without the fields its family needs: not counted
