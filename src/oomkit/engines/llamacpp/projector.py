"""The multimodal projector (--mmproj): the bytes of the mmproj GGUF llama.cpp loads beside the model
(tools/mtmd/clip.cpp), which the estimate adds (programs.with_projector) and --fit reserves (fit.mmproj_margin)."""

from __future__ import annotations

from ...errors import SettingsError
from .settings import LlamaCppSettings


def projector_bytes(spec, s: LlamaCppSettings) -> tuple[int, str] | None:
    """(bytes, where the figure comes from) of the --mmproj file llama.cpp loads; None without one. A file that
    exists counts its size; a name oomkit cannot open counts the model's vision tower (model/towers.py) in F16,
    the type convert_hf_to_gguf.py --mmproj writes by default."""
    import os  # lazy: only a --mmproj needs the file system

    if not s.mmproj or s.no_mmproj:
        return None
    if os.path.isfile(s.mmproj):
        return os.path.getsize(s.mmproj), f"the size of {s.mmproj}"
    towers = [t for t in getattr(spec, "towers", ()) if t.kind == "vision"]
    if not towers:
        raise SettingsError(f"--mmproj {s.mmproj}: no such file, and {spec.name} has no vision tower oomkit counts")
    t = towers[0]
    return t.nbytes(2), f"{spec.name}'s {t.family} tower in F16 ({t.params:,} parameters)"
