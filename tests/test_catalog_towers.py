"""Vision towers counted from vision_config (model/towers.py), held against transformers' own modules built on the
meta device, and against the published totals of the catalog's VLMs (decoder + tower): Gemma 3 (SigLIP), Qwen2.5-VL,
Qwen2-VL, Qwen3-VL, Qwen3.5, Llama 4, Mistral Small 3.1 (Pixtral), LLaVA (CLIP), InternVL2 (InternViT), Kimi-VL / Kimi-K2.5
(MoonViT); and the transformers engine loading them with the checkpoint."""

from __future__ import annotations

import copy

import pytest

from oomkit.model import catalog
from oomkit.model.resolve import explain, resolve
from oomkit.model.towers import vision_tower

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

COUNTED = ["qwen2.5-vl-3b-instruct", "qwen2.5-vl-7b-instruct", "gemma-3-12b-it", "gemma-3-27b-it", "gemma-3-4b-it", "qwen3-vl-2b-instruct", "qwen3-vl-8b-instruct", "qwen3.5-0.8b",
           "qwen3-vl-32b-instruct",
           "qwen3-vl-30b-a3b-instruct", "qwen3.5-27b", "qwen3.5-35b-a3b", "llama-4-scout-17b-16e-instruct",
           "mistral-small-3.1-24b-instruct-2503", "llava-1.5-7b-hf", "internvl2-2b", "internvl2-4b", "kimi-k2.5",
           "kimi-vl-a3b-instruct", "ministral-3-3b-instruct-2512", "qwen2.5-vl-72b-instruct", "qwen2.5-vl-32b-instruct",
           "qwen2-vl-2b-instruct", "qwen2-vl-7b-instruct", "qwen2-vl-72b-instruct",
           "qwen3.6-27b", "qwen3.6-35b-a3b", "llama-3.2-11b-vision-instruct", "llama-3.2-90b-vision-instruct"]


def _n(module) -> int:
    return sum(p.numel() for p in module.parameters())


def _transformers_count(config: dict) -> int:
    config = copy.deepcopy(config)  # transformers' configs write into the dicts they are given (rope_scaling gains
    # rope_theta), and the catalog's entries are shared between lookups
    vc = dict(config["vision_config"])
    with torch.device("meta"):
        if vc.get("model_type") == "mllama_vision_model":
            from transformers.models.mllama.modeling_mllama import MllamaVisionModel

            c = transformers.MllamaConfig(text_config=config["text_config"], vision_config=vc)
            projector = torch.nn.Linear(c.vision_config.vision_output_dim, c.text_config.hidden_size, bias=True)
            return _n(MllamaVisionModel(c.vision_config)) + _n(projector)  # MllamaModel.multi_modal_projector
        if vc.get("model_type") == "llama4_vision_model":
            from transformers.models.llama4.modeling_llama4 import (
                Llama4MultiModalProjector,
                Llama4VisionModel,
            )

            c = transformers.Llama4Config(text_config=config["text_config"], vision_config=vc)
            return _n(Llama4VisionModel(c.vision_config)) + _n(Llama4MultiModalProjector(c))
        if vc.get("model_type") == "pixtral":
            from transformers.models.mistral3.modeling_mistral3 import Mistral3MultiModalProjector

            c = transformers.Mistral3Config(text_config=config["text_config"], vision_config=vc,
                                            spatial_merge_size=config["spatial_merge_size"],
                                            multimodal_projector_bias=config["multimodal_projector_bias"])
            return _n(transformers.PixtralVisionModel(c.vision_config)) + _n(Mistral3MultiModalProjector(c))
        if vc.get("model_type") == "clip_vision_model":
            from transformers.models.llava.modeling_llava import LlavaMultiModalProjector

            c = transformers.LlavaConfig(text_config=config["text_config"], vision_config=vc,
                                         vision_feature_layer=config["vision_feature_layer"])
            return _n(transformers.CLIPVisionModel(c.vision_config)) + _n(LlavaMultiModalProjector(c))
        if vc.get("model_type") == "intern_vit_6b":
            # the remote-code InternVisionModel's fields under transformers' native InternVL names
            from transformers.models.internvl.modeling_internvl import (
                InternVLMultiModalProjector,
                InternVLVisionModel,
            )

            hv = {"hidden_size": vc["hidden_size"], "intermediate_size": vc["intermediate_size"],
                  "num_hidden_layers": vc["num_hidden_layers"], "num_attention_heads": vc["num_attention_heads"],
                  "patch_size": [vc["patch_size"]] * 2, "image_size": [vc["image_size"]] * 2,
                  "attention_bias": vc["qkv_bias"], "use_qk_norm": vc["qk_normalization"], "norm_type": vc["norm_type"]}
            c = transformers.InternVLConfig(text_config={"model_type": "qwen2",
                                                                         "hidden_size": config["llm_config"]["hidden_size"]},
                                            vision_config=hv, downsample_ratio=config["downsample_ratio"])
            return _n(InternVLVisionModel(c.vision_config)) + _n(InternVLMultiModalProjector(c))
        if config.get("model_type") in ("kimi_k25", "kimi_vl"):
            # Kimi-VL's MoonViT (remote code) is the module transformers builds for Kimi-K2.5 (vt_* field names)
            from transformers.models.kimi_k25 import modeling_kimi_k25 as mk

            if vc.get("model_type") == "moonvit":
                vc = {"vt_hidden_size": vc["hidden_size"], "vt_intermediate_size": vc["intermediate_size"],
                      "vt_num_hidden_layers": vc["num_hidden_layers"],
                      "vt_num_attention_heads": vc["num_attention_heads"], "patch_size": vc["patch_size"],
                      "merge_kernel_size": vc["merge_kernel_size"], "mm_hidden_size": vc["hidden_size"],
                      "init_pos_emb_height": vc["init_pos_emb_height"], "init_pos_emb_width": vc["init_pos_emb_width"]}
            c = transformers.AutoConfig.for_model("kimi_k25", text_config=config["text_config"], vision_config=vc)
            return _n(mk.Kimi_K25VisionModel(c.vision_config)) + _n(mk.Kimi_K25MultimodalProjection(c))
        if vc.get("model_type") == "siglip_vision_model":
            from transformers.models.gemma3.modeling_gemma3 import Gemma3MultiModalProjector

            # Gemma 3's config.json: vision_use_head false (its copies here leave the key out)
            c = transformers.Gemma3Config(text_config=config["text_config"], vision_config={**vc,
                                                                                           "vision_use_head": False})
            return _n(transformers.SiglipVisionModel(c.vision_config)) + _n(Gemma3MultiModalProjector(c))
        kw = {k: v for k, v in vc.items() if k != "model_type"}
        if config.get("model_type") == "qwen2_5_vl":
            from transformers.models.qwen2_5_vl.configuration_qwen2_5_vl import Qwen2_5_VLVisionConfig
            from transformers.models.qwen2_5_vl.modeling_qwen2_5_vl import (
                Qwen2_5_VisionTransformerPretrainedModel,
            )

            kw["in_channels"] = kw.pop("in_chans")
            return _n(Qwen2_5_VisionTransformerPretrainedModel(Qwen2_5_VLVisionConfig(**kw)))
        if config.get("model_type") == "qwen2_vl":
            from transformers.models.qwen2_vl.configuration_qwen2_vl import Qwen2VLVisionConfig
            from transformers.models.qwen2_vl.modeling_qwen2_vl import Qwen2VisionTransformerPretrainedModel

            return _n(Qwen2VisionTransformerPretrainedModel(Qwen2VLVisionConfig(**kw)))
        if vc["model_type"] in ("qwen3_vl", "qwen3_vl_moe"):
            from transformers.models.qwen3_vl.configuration_qwen3_vl import Qwen3VLVisionConfig
            from transformers.models.qwen3_vl.modeling_qwen3_vl import Qwen3VLVisionModel

            return _n(Qwen3VLVisionModel(Qwen3VLVisionConfig(**kw)))
        from transformers.models.qwen3_5.configuration_qwen3_5 import Qwen3_5VisionConfig
        from transformers.models.qwen3_5.modeling_qwen3_5 import Qwen3_5VisionModel

        return _n(Qwen3_5VisionModel(Qwen3_5VisionConfig(**kw)))


@pytest.mark.parametrize("slug", COUNTED)
def test_tower_equals_transformers_modules(slug):
    config = catalog.lookup(slug).config
    tower = vision_tower(config)
    assert tower is not None and tower.params == tower.encoder_params + tower.projector_params
    assert tower.params == _transformers_count(config)


@pytest.mark.parametrize("slug", ["qwen2.5-vl-3b-instruct", "gemma-3-4b-it", "gemma-3-12b-it", "qwen3-vl-2b-instruct",
                                  "qwen3-vl-4b-instruct",
                                  "qwen3-vl-8b-instruct", "qwen3-vl-30b-a3b-instruct",
                                  # HF safetensors totals, exact: 108,641,793,536 / 401,583,781,376 / 24,011,361,280
                                  "llama-4-scout-17b-16e-instruct", "llama-4-maverick-17b-128e-instruct",
                                  "mistral-small-3.1-24b-instruct-2503",
                                  # HF safetensors total 2,208,985,600 (Qwen2-VL's LayerNorm / QuickGELU-MLP tower)
                                  "qwen2-vl-2b-instruct",
                                  # HF safetensors total 10,670,220,835 (mllama: MllamaVisionModel + projector)
                                  "llama-3.2-11b-vision-instruct"])
def test_published_total_is_decoder_plus_tower(slug):
    e = catalog.lookup(slug)
    assert e.params_published == e.params_decoder + vision_tower(e.config).params


@pytest.mark.parametrize("slug,published", [("qwen2.5-vl-72b-instruct", "73.4"), ("qwen2.5-vl-7b-instruct", "8.29"),
                                            ("qwen2-vl-7b-instruct", "8.29"), ("qwen2-vl-72b-instruct", "73.4"),
                                            ("llama-3.2-90b-vision-instruct", "88.6")])
def test_rounded_published_total_is_decoder_plus_tower(slug, published):
    # totals published only rounded (the HF model page's "73.4B" / "8.29B"): decoder + tower rounds to them
    e = catalog.lookup(slug)
    digits = len(published.split(".")[1])
    assert f"{(e.params_decoder + vision_tower(e.config).params) / 1e9:.{digits}f}" == published


def test_spec_carries_the_tower_outside_its_weights():
    spec = resolve("google/gemma-3-27b-it", "bf16")
    assert len(spec.towers) == 1 and spec.towers[0].family == "siglip_vision_model"
    assert not any(t.name.startswith(("v.", "mm.")) for t in spec.weights.tensors)
    rows = dict(explain("gemma3:27b"))
    assert rows["vision tower"].startswith("0.42 B parameters") and "mmproj" in rows["vision tower"]
    assert resolve("Qwen/Qwen3-8B").towers == ()


# --- the transformers engine loads the tower with the checkpoint -------------------------------------------------


@pytest.mark.parametrize("repo,auto", [("google/gemma-3-4b-it", "Gemma3ForConditionalGeneration"),
                                       ("llava-hf/llava-1.5-7b-hf", "LlavaForConditionalGeneration"),
                                       ("mistralai/Mistral-Small-3.1-24B-Instruct-2503",
                                        "Mistral3ForConditionalGeneration")])
def test_transformers_weights_are_the_whole_vlm(repo, auto):
    # transformers' own *ForConditionalGeneration built on the meta device from the same config: every parameter
    # in bf16 (tied embeddings once) is what from_pretrained holds
    from oomkit import estimate

    config = catalog.lookup(repo).config
    cls = getattr(transformers, auto)
    cfg_cls = getattr(transformers, auto.replace("ForConditionalGeneration", "Config"))
    kw = {k: v for k, v in config.items() if k not in ("architectures", "model_type")}
    kw["tie_word_embeddings"] = config["text_config"].get("tie_word_embeddings", False)  # the decoder's, as loaded
    if kw["vision_config"].get("model_type") == "siglip_vision_model":
        kw["vision_config"] = {**kw["vision_config"], "vision_use_head": False}  # Gemma 3's config.json says so
    with torch.device("meta"):
        model = cls(cfg_cls(**kw))
    want = 2 * sum(p.numel() for p in model.parameters())
    e = estimate(repo, engine="transformers")
    assert e.to_dict()["weights_bytes"] == want
    assert any("vision tower" in w for w in e.warnings)
