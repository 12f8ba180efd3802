"""Exact weight bytes of a Hugging Face model from its safetensors headers (no weights read): a local directory
or a SafetensorsModel read from the hub."""

from __future__ import annotations

import re
from pathlib import Path

from .safetensors_header import SafetensorsModel, read_safetensors_model
from .spec import ModelSpec, TensorSpec, WeightInventory

_LAYER = re.compile(r"(?:^|\.)(?:layers|h|blocks|layer)\.(\d+)\.")
# Towers whose blocks are not the language model's layers (VLM/audio encoders, projectors).
_NOT_LM = re.compile(r"(^|\.)(vision|visual|vision_tower|vision_model|image_encoder|audio|audio_tower|"
                     r"audio_model|mm_projector|multi_modal_projector|encoder)(\.|_|$)")


def layer_index(name: str) -> int | None:
    """The decoder layer of an HF tensor name ("model.layers.12.mlp.up_proj.weight" -> 12); None for tensors
    outside the blocks and for vision/audio towers."""
    m = _LAYER.search(name)
    if m is None or _NOT_LM.search(name[: m.start() + 1]):
        return None
    return int(m.group(1))


def inventory_from_safetensors_model(model: SafetensorsModel) -> WeightInventory:
    """Every tensor with its stored dtype and bytes; shapes in GGUF order (ne0 first, like the rest of
    oomkit), so reversed from the stored PyTorch order."""
    tensors = tuple(TensorSpec(name=t.name, shape=tuple(reversed(t.shape)), dtype=t.dtype, nbytes=t.nbytes,
                               layer=layer_index(t.name)) for t in model.tensors)
    by_dtype: dict[str, int] = {}
    for t in tensors:
        by_dtype[t.dtype] = by_dtype.get(t.dtype, 0) + t.nbytes
    main = max(by_dtype, key=by_dtype.__getitem__) if by_dtype else "unknown"
    return WeightInventory(tensors=tensors, exact=True, format=f"safetensors {main}")


def inventory_from_safetensors(path: str | Path) -> WeightInventory:
    return inventory_from_safetensors_model(read_safetensors_model(path))


def incomplete(inventory: WeightInventory, spec: ModelSpec) -> str | None:
    """Why the safetensors next to a config.json are not the model's weights, or None: some of the layers the config
    declares have no tensor in them and they hold under half the bytes the config's shapes need (a shard renamed as
    the whole model, a file cut down by hand). A checkpoint whose names this reader does not place still holds its
    bytes and is taken as it is."""
    n = len(spec.layers) - spec.n_nextn_layers
    present = {t.layer for t in inventory.tensors if t.layer is not None}
    missing = [i for i in range(n) if i not in present]
    need = spec.weights.nbytes
    if not missing or inventory.nbytes * 2 >= need:
        return None
    return (f"the safetensors hold tensors of {n - len(missing)} of the {n} layers config.json declares "
            f"({inventory.nbytes:,} of about {need:,} bytes): weights computed from config.json instead of read from "
            "the files")
