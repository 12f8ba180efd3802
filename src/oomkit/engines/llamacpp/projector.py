"""The multimodal projector (--mmproj): what the mmproj GGUF that llama.cpp loads beside the model takes
(tools/mtmd/clip.cpp): its weights and the compute buffer clip reserves for its warmup image. The estimate adds
both (programs.with_projector) and --fit reserves both (fit.mmproj_margin), as llama-server does.

What llama.cpp counts: mtmd_get_memory_usage (PR #21489, b8720 on) builds the projector's context with no_alloc and
sums clip_get_mem_usage per device: the weight buffer (clip_model_loader::load_tensors) plus the scheduler's
compute buffer, reserved by clip_model_loader::warmup for an image of hparams.warmup_image_size (the projector's
image_size for the fixed-size towers) with flash attention tried first when -fa is auto
(reserve_compute_meta). The same two buffers stay allocated while the server runs.

The compute buffer is ggml-alloc's peak over the encoder graph; oomkit models it for the graphs measured here and
leaves it out (said so) for the others:
- gemma3 (tools/mtmd/models/siglip.cpp build_siglip -> build_vit, then the 4x4 average pool and
  mm.input_projection): held against mtmd_get_memory_usage of the llama-cpp-python 0.3.36 build on this CPU for
  SigLIP-shaped files (P = (image_size / patch_size)^2 patches, E = embedding_length, F = feed_forward_length,
  H = head_count; F32 activations):
    flash attention on:  4 P (F + 3E)                     (the FFN: its up projection and three rows of E)
    flash attention off: max(that, 4 P (P H + 6E))       (the P x P x H F32 attention scores beside six rows)
  Gemma 3's own tower (896 px, patch 14, E 1152, F 4304, H 16): 121.25 MiB on, 1132.00 MiB off, the figures
  gpustack/gguf-parser-go#44 quotes from CUDA logs (121 / 1132 MiB). The weight buffer is the file's tensor data
  (each tensor padded to the GGUF's alignment), the header not counted. Below P = 4096 (images under 896 px,
  which no Gemma 3 mmproj has) the peak moves to the graph's end and these formulas fall short (P = 1024:
  44.9-57.3 MiB measured against 30.3).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import SettingsError
from .settings import LlamaCppSettings

MiB = 1 << 20


@dataclass(frozen=True)
class ProjectorMemory:
    """What the --mmproj projector takes on its device: weights and compute buffer (None: not modelled)."""

    weights: int
    compute: int | None
    source: str

    @property
    def total(self) -> int:
        return self.weights + (self.compute or 0)


def clip_compute_bytes(meta: dict, flash_attn: bool) -> int | None:
    """The compute buffer clip reserves for its warmup image (see the module's note); None for a projector type
    whose graph is not modelled."""
    if _kind(meta) != "gemma3" or not meta.get("clip.has_vision_encoder", True):
        return None
    try:
        image, patch = int(meta["clip.vision.image_size"]), int(meta["clip.vision.patch_size"])
        e, f = int(meta["clip.vision.embedding_length"]), int(meta["clip.vision.feed_forward_length"])
        h = int(meta["clip.vision.attention.head_count"])
    except (KeyError, TypeError, ValueError):
        return None
    p = (image // patch) ** 2
    ffn = 4 * p * (f + 3 * e)
    return ffn if flash_attn else max(ffn, 4 * p * (p * h + 6 * e))


def _kind(meta: dict) -> str | None:
    """The vision projector's type: clip.vision.projector_type (files with a vision and an audio tower), else
    clip.projector_type (clip_model_loader reads the same two keys)."""
    kind = meta.get("clip.vision.projector_type") or meta.get("clip.projector_type")
    return kind if isinstance(kind, str) else None


def clip_flash_attn(s: LlamaCppSettings) -> bool:
    """llama-server hands -fa to the projector (mparams.flash_attn_type = params_base.flash_attn_type); auto means
    clip tries it first and keeps it where the backend supports it (CPU, CUDA, Metal, Vulkan do)."""
    return s.flash_attn != "off"


def projector_memory(spec, s: LlamaCppSettings) -> ProjectorMemory | None:
    """What the --mmproj file llama.cpp loads takes; None without one. A GGUF that exists: its tensor data and, for
    a modelled graph, the compute buffer; a file oomkit cannot read as GGUF counts its size. A name oomkit cannot
    open counts the model's vision tower (model/towers.py) in F16, the type convert_hf_to_gguf.py --mmproj writes by
    default, with no compute buffer."""
    import os  # lazy: only a --mmproj needs the file system

    from ...errors import OomkitError  # lazy: the header reader only for a --mmproj
    from ...model.gguf_header import read_gguf_header  # lazy: only a --mmproj is read

    if not s.mmproj or s.no_mmproj:
        return None
    if os.path.isfile(s.mmproj):
        try:
            header = read_gguf_header(s.mmproj)
        except (OomkitError, OSError, ValueError):
            return ProjectorMemory(os.path.getsize(s.mmproj), None, f"the size of {s.mmproj}")
        meta = dict(header.metadata)
        compute = clip_compute_bytes(meta, clip_flash_attn(s))
        kind = _kind(meta) or "?"
        if compute is None:
            return ProjectorMemory(header.data_size, None, f"the tensor data of {s.mmproj} ({kind} projector)")
        fa = "on" if clip_flash_attn(s) else "off"
        return ProjectorMemory(header.data_size, compute,
                               f"the tensor data of {s.mmproj} ({kind} projector) and its warmup compute buffer "
                               f"({compute / MiB:.2f} MiB, flash attention {fa})")
    towers = [t for t in getattr(spec, "towers", ()) if t.kind == "vision"]
    if not towers:
        raise SettingsError(f"--mmproj {s.mmproj}: no such file, and {spec.name} has no vision tower oomkit counts")
    t = towers[0]
    return ProjectorMemory(t.nbytes(2), None, f"{spec.name}'s {t.family} tower in F16 ({t.params:,} parameters)")


def projector_bytes(spec, s: LlamaCppSettings) -> tuple[int, str] | None:
    """(bytes, where the figure comes from) of the --mmproj projector: weights plus the compute buffer where it is
    modelled (projector_memory); None without one."""
    m = projector_memory(spec, s)
    return None if m is None else (m.total, m.source)
