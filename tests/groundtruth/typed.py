"""Synthetic GGUFs (synth.py's models) with every quantizable matrix in one ggml type: the files the CPU
backend's repacking (CPU_REPACK) is measured on. Tensors llama-quantize never quantizes stay F32 (synth's
rule); a matrix whose row is not a multiple of the type's block falls back to F16, as llama-quantize does."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import gguf
import numpy as np

from tests.groundtruth import synth

Q = gguf.GGMLQuantizationType
VT = gguf.GGUFValueType


def tensor_type(t: synth.Tensor, qtype: int) -> int:
    if synth._kept_f32(t):
        return int(Q.F32)
    if t.ne[0] % gguf.GGML_QUANT_SIZES[Q(qtype)][0]:
        return int(Q.F16)
    return int(qtype)


def write_typed(model: synth.SynthModel, path: str | os.PathLike[str], qtype: int) -> Path:
    """`model`'s GGUF header with every quantizable matrix in `qtype`, the data a sparse hole (synth.write_gguf
    with another type rule)."""
    path = Path(path)
    w = gguf.GGUFWriter(path, model.arch)
    w.add_name(f"{model.key} (synthetic, {model.n_layers} layers, all {Q(qtype).name})")
    w.add_quantization_version(gguf.GGML_QUANT_VERSION)
    synth.add_metadata(w, model.metadata, model.n_vocab)
    w.add_key_value("tokenizer.ggml.bos_token_id", 1, VT.UINT32)
    w.add_key_value("tokenizer.ggml.eos_token_id", 2, VT.UINT32)
    w.add_key_value("tokenizer.ggml.unknown_token_id", 0, VT.UINT32)
    sizes = []
    for t in model.tensors:
        qt = tensor_type(t, qtype)
        n = synth.tensor_nbytes(t.ne, qt)
        sizes.append(n)
        w.add_tensor_info(t.name, tuple(reversed(t.ne)), np.dtype(np.float32), n, raw_dtype=Q(qt))
    synth.finish_sparse(w, sizes)
    return path


def typed_path(model: synth.SynthModel, qtype: int) -> Path:
    """The file for (model, qtype), written once into the ground-truth cache directory."""
    d = synth.default_cache_dir() / "gguf"
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"{model.key}-{model.n_layers}L-all-{Q(qtype).name}-{model.fingerprint('q4_0')[:12]}.gguf"
    if not path.exists():
        fd, tmp = tempfile.mkstemp(dir=d, suffix=".gguf.tmp")
        os.close(fd)
        try:
            write_typed(model, tmp, qtype)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    return path
