"""Vision towers counted from vision_config (model/towers.py), held against transformers' own modules built on the
meta device, and against the published totals of the catalog's VLMs (decoder + tower): Gemma 3 (SigLIP), Qwen2.5-VL,
Qwen3-VL, Qwen3.5."""

from __future__ import annotations

import pytest

from oomkit.model import catalog
from oomkit.model.resolve import explain, resolve
from oomkit.model.towers import vision_tower

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

COUNTED = ["qwen2.5-vl-3b-instruct", "gemma-3-27b-it", "gemma-3-4b-it", "qwen3-vl-2b-instruct", "qwen3-vl-8b-instruct", "qwen3.5-0.8b",
           "qwen3-vl-32b-instruct",
           "qwen3-vl-30b-a3b-instruct", "qwen3.5-27b", "qwen3.5-35b-a3b"]


def _n(module) -> int:
    return sum(p.numel() for p in module.parameters())


def _transformers_count(config: dict) -> int:
    vc = dict(config["vision_config"])
    with torch.device("meta"):
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


@pytest.mark.parametrize("slug", ["qwen2.5-vl-3b-instruct", "gemma-3-4b-it", "qwen3-vl-2b-instruct", "qwen3-vl-4b-instruct",
                                  "qwen3-vl-8b-instruct", "qwen3-vl-30b-a3b-instruct"])
def test_published_total_is_decoder_plus_tower(slug):
    e = catalog.lookup(slug)
    assert e.params_published == e.params_decoder + vision_tower(e.config).params


def test_spec_carries_the_tower_outside_its_weights():
    spec = resolve("google/gemma-3-27b-it", "bf16")
    assert len(spec.towers) == 1 and spec.towers[0].family == "siglip_vision_model"
    assert not any(t.name.startswith(("v.", "mm.")) for t in spec.weights.tensors)
    rows = dict(explain("gemma3:27b"))
    assert rows["vision tower"].startswith("0.42 B parameters") and "mmproj" in rows["vision tower"]
    assert resolve("Qwen/Qwen3-8B").towers == ()
