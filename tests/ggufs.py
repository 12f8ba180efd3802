"""Small real-shaped GGUFs for tests that need a file (header written with `gguf`, data a sparse hole)."""

from pathlib import Path

from tests.groundtruth import synth


def write_llama_gguf(path: Path, n_layers: int = 2, recipe: str = "q4_0") -> Path:
    """A Llama-3-8B-shaped GGUF with `n_layers` blocks."""
    return synth.write_gguf(synth.llama3_8b(n_layers=n_layers), path, recipe)
