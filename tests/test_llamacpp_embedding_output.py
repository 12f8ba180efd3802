"""Which architectures load token_embd a second time as the output matrix, against llama.cpp itself.

A GGUF without output.weight gets an output tensor only if its architecture's loader creates one: the decoders
fall back to token_embd with TENSOR_DUPLICATED (llama_model::load_tensors), the BERT family and the other encoders
ending at their last block create none, and bitnet multiplies by tok_embd itself (weights.NO_OUTPUT_TENSOR_ARCHS).
The duplicate only costs memory where the output layer's buffer type differs from the input layer's: on a GPU
(ollama/ollama#9994, bge-m3 at Ollama 0.6.1: CUDA0 577.22 MiB, no copy of its 488.29 MiB token_embd; oomkit
gave 1097.52), and on this machine's CPU when the copy is repacked (CPU_REPACK) while token_embd stays mapped.

Ground truth: llama.cpp (llama-cpp-python 0.3.36's build, llama.cpp@0c1e57098, on an x86 CPU with AVX2 / AVX512, mmap
and extra buffer types on, -ngl 0) loads two synthetic files per architecture (tests/ggufs.py's shapes, n_embd
4096, n_vocab 32000, 2 blocks, output.weight left out): every matrix Q4_0, and the same with token_embd in F16.
A Q4_0 output copy repacks into CPU_REPACK; an F16 one does not and is handed back token_embd itself ("if
duplicated, check if the original tensor was allocated in the same buffer type context"). So the two files'
CPU_REPACK buffers differ by the copy's 70.31 MiB (4096 x 32000 Q4_0) exactly when the loader duplicates. Measured:

    architecture     CPU_REPACK, token_embd Q4_0 / F16 (MiB)
    exaone           260.44 / 190.12   (a decoder: the copy)
    t5encoder        239.06 / 168.75   (duplicates too, src/llama-model.cpp LLM_ARCH_T5ENCODER)
    gemma-embedding  260.44 / 190.12
    llama-embed      260.44 / 190.12
    bert             168.75 / 168.75   (no output tensor)
    eurobert         190.12 / 190.12
    modern-bert      217.12 / 217.12
    neo-bert         190.12 / 190.12
    bitnet           190.12 / 190.12
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from pathlib import Path

import gguf
import numpy as np
import pytest

import oomkit
from oomkit.engines.llamacpp.weights import NO_OUTPUT_TENSOR_ARCHS, duplicates_embd_as_output
from oomkit.model.gguf_file import read_gguf_spec
from tests import ggufs
from tests.groundtruth import llamacpp_run, synth

MiB = 1 << 20
Q = gguf.GGMLQuantizationType

DUPLICATING = ("exaone", "t5encoder", "gemma-embedding", "llama-embed")
NO_OUTPUT = ("bert", "nomic-bert", "nomic-bert-moe", "jina-bert-v2", "jina-bert-v3", "neo-bert", "eurobert",
             "modern-bert", "bitnet")


def _cpu_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    line = next((ln for ln in text.splitlines() if ln.startswith("flags")), "")
    return set(line.partition(":")[2].split())


def _untied(arch: str) -> synth.SynthModel:
    """tests/ggufs.py's file for `arch` without output.weight."""
    m = ggufs.recorded_model(arch) if arch in ggufs.RECORDED else ggufs.sweep_model(arch)
    return dataclasses.replace(m, key=f"{m.key}-no-output", tied_embeddings=True,
                               tensors=tuple(t for t in m.tensors if t.name != "output.weight"))


def _path(m: synth.SynthModel, emb_type: int) -> Path:
    """`m` with every quantizable matrix Q4_0 and token_embd in `emb_type` (F32 / F16 as llama-quantize leaves
    them), the data a sparse hole; written once into the ground-truth cache."""
    d = synth.default_cache_dir() / "gguf"
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"{m.key}-{m.n_layers}L-q4_0-embd-{Q(emb_type).name}-{m.fingerprint('q4_0')[:12]}.gguf"
    if path.exists():
        return path
    fd, tmp = tempfile.mkstemp(dir=d, suffix=".gguf.tmp")
    os.close(fd)
    try:
        w = gguf.GGUFWriter(tmp, m.arch)
        w.add_name(f"{m.key} (synthetic)")
        w.add_quantization_version(gguf.GGML_QUANT_VERSION)
        synth.add_metadata(w, m.metadata, m.n_vocab)
        for key, v in (("bos", 1), ("eos", 2), ("unknown", 0)):
            w.add_key_value(f"tokenizer.ggml.{key}_token_id", v, synth.VT.UINT32)
        sizes = []
        for t in m.tensors:
            qt = Q.F32 if synth._kept_f32(t) else Q.Q4_0 if t.ne[0] % 32 == 0 else Q.F16
            if t.name == "token_embd.weight":
                qt = Q(emb_type)
            sizes.append(synth.tensor_nbytes(t.ne, qt))
            w.add_tensor_info(t.name, tuple(reversed(t.ne)), np.dtype(np.float32), sizes[-1], raw_dtype=qt)
        synth.finish_sparse(w, sizes)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


def _repack_mib(path: Path) -> float:
    m = llamacpp_run.measure(path, n_ctx=512, n_seq_max=1, use_mmap=True, use_extra_bufts=True, n_gpu_layers=0)
    assert m["ok"], m["error"]
    return m["model_buffer_mib"].get("CPU_REPACK", 0.0)


def _spec_of(m: synth.SynthModel):
    """oomkit's reading of `m`'s file (token_embd F16)."""
    return read_gguf_spec(_path(m, Q.F16))


@pytest.fixture(scope="module")
def avx2():
    pytest.importorskip("llama_cpp")
    if "avx2" not in _cpu_flags():  # Q4_0 repacks on AVX2 and AVX512 alike, F16 on neither (repack.REPACK_TYPES)
        pytest.skip("the repack ground truth is for an x86 CPU with AVX2")


@pytest.mark.parametrize("arch", DUPLICATING + NO_OUTPUT)
def test_output_copy_as_llama_cpp_loads_it(avx2, arch):
    m = _untied(arch)
    q4, f16 = _path(m, Q.Q4_0), _path(m, Q.F16)
    copy = round(_repack_mib(q4) - _repack_mib(f16), 2)
    emb = next(t for t in m.tensors if t.name == "token_embd.weight")
    spec = read_gguf_spec(q4)
    assert spec.tied_embeddings and spec.architecture == arch
    assert duplicates_embd_as_output(spec) == (arch not in NO_OUTPUT_TENSOR_ARCHS)
    # the measured copy: token_embd's Q4_0 bytes (70.31 MiB, +-0.01 for the two lines' rounding) or none
    want = synth.tensor_nbytes(emb.ne, Q.Q4_0) / MiB if duplicates_embd_as_output(spec) else 0.0
    assert abs(copy - want) <= 0.011, (arch, copy, want)


def test_no_output_archs_are_the_measured_ones():
    assert set(NO_OUTPUT) == NO_OUTPUT_TENSOR_ARCHS
    assert not set(DUPLICATING) & NO_OUTPUT_TENSOR_ARCHS


def test_lfm2_before_pr_15476_had_no_output_tensor():
    """PR #14620 (b5873) loaded LFM2 without an output tensor (the graph multiplied by tok_embd); PR #15476 (b6242)
    added output with the TENSOR_DUPLICATED fallback."""
    m = _untied("bert")
    spec = dataclasses.replace(_spec_of(m), architecture="lfm2")
    assert [duplicates_embd_as_output(spec, b) for b in (5872, 5873, 6241, 6242, None)] == \
        [True, False, False, True, True]


@pytest.mark.xfail(strict=True, reason="CPU_REPACK 190.12 MiB measured for the tied eurobert file, oomkit 260.44: "
                   "backends.cpu_repack adds a repacked output copy of token_embd for every file without "
                   "output.weight (spec.tied_embeddings), not weights.duplicates_embd_as_output")
def test_cpu_repack_estimate_of_an_encoder(avx2):
    path = _path(_untied("eurobert"), Q.Q4_0)
    est = oomkit.estimate(read_gguf_spec(path), "llama.cpp", cpu_only=True, find_max_context=False,
                          program="llama-cpp-python", n_ctx=512, n_parallel=1, repack=True, mmap=True)
    assert round(est.engine_view["model_buffer_bytes"]["CPU_REPACK"] / MiB, 2) == _repack_mib(path)
