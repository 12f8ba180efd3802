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

oomkit's CPU_REPACK estimate matches all 26 (backends.cpu_repack adds the copy only where
weights.duplicates_embd_as_output says so; before, every file without output.weight got one). bert's file also
carries a Q4_0 position_embd of 4096 x 8192 that the repack buffer type refuses (read by GET_ROWS): its CPU_REPACK
and CPU_Mapped (168.75 / 436.91 MiB) match with the table in CPU_Mapped (repack.GET_ROWS_TENSORS).
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


def _estimated_mib(path: Path) -> dict[str, float]:
    """oomkit's model buffers for `path` as _repack_mib's llama.cpp loads it (CPU only, mmap, repack on)."""
    est = oomkit.estimate(read_gguf_spec(path), "llama.cpp", cpu_only=True, find_max_context=False,
                          program="llama-cpp-python", n_ctx=512, n_parallel=1, repack=True, mmap=True)
    return {k: round(v / MiB, 2) for k, v in est.engine_view["model_buffer_bytes"].items()}


@pytest.mark.parametrize("emb_type", (Q.Q4_0, Q.F16), ids=("embd-q4_0", "embd-f16"))
@pytest.mark.parametrize("arch", DUPLICATING + NO_OUTPUT)
def test_cpu_repack_estimate(avx2, arch, emb_type):
    """backends.cpu_repack against the measured CPU_REPACK buffer (the module's table): a repacked output copy only
    where weights.duplicates_embd_as_output says the loader makes one (eurobert's Q4_0 file: 260.44 -> 190.12 MiB,
    measured 190.12; bert's 257.06 -> 168.75, nomic-bert-moe's 577.69 -> 507.38 ...)."""
    path = _path(_untied(arch), emb_type)
    assert _estimated_mib(path).get("CPU_REPACK", 0.0) == _repack_mib(path)


def test_position_table_is_not_repacked(avx2):
    """BERT's position table, position_embd.weight (llama-arch.cpp LLM_TENSOR_POS_EMBD), is read by GET_ROWS
    (LLM_TENSOR_INFOS), which the CPU's repack buffer type does not take (ggml-cpu/repack.cpp
    extra_buffer_type::supports_op: MUL_MAT / MUL_MAT_ID only), so a Q4_0 table of 4096 x 8192 stays in CPU_Mapped
    with token_embd. Measured: CPU_REPACK 168.75 MiB (the two blocks' matrices), CPU_Mapped 436.91; oomkit gave 186.75
    with the 18.00 MiB table repacked (repack.GET_ROWS_TENSORS spelt it pos_embd.)."""
    path = _path(_untied("bert"), Q.F16)
    spec = read_gguf_spec(path)
    pos = next(t for t in spec.weights.tensors if t.name == "position_embd.weight")
    assert pos.dtype.lower() == "q4_0" and pos.shape[1] % 8 == 0  # a Q4_0 matrix that would repack under MUL_MAT
    m = llamacpp_run.measure(path, n_ctx=512, n_seq_max=1, use_mmap=True, use_extra_bufts=True, n_gpu_layers=0)
    assert m["ok"], m["error"]
    got = _estimated_mib(path)
    assert (got["CPU_REPACK"], got["CPU_Mapped"]) == (m["model_buffer_mib"]["CPU_REPACK"],
                                                       m["model_buffer_mib"]["CPU_Mapped"])


# tests/ggufs.py's t5encoder file ends with enc.blk.0.attn_rel_b.weight, a 32 x 32 Q4_0 table that
# llm_graph_context::build_pos_bias reads with GET_ROWS (src/llama-arch.cpp LLM_TENSOR_INFOS: LLM_TENSOR_ENC_ATTN_REL_B
# {LLM_TENSOR_LAYER_REPEATING, GGML_OP_GET_ROWS}), so the repack buffer type refuses it and it stays mapped: CPU_Mapped
# then spans the whole file (get_mapping_range), the repacked blocks between token_embd and it included. Measured
# with llama.cpp@0c1e57098 (CPU_Mapped, CPU_REPACK in MiB); oomkit repacked the table and ended the range at
# enc.blk.1.ffn_norm: 174.62 / 142.39 / 322.08 CPU_Mapped for the first three
T5_MEASURED = {
    ("recorded", "q4_0"): (271.37, 168.75),  # token_embd Q6_K (llama-quantize's choice for Q4_0)
    ("no-output", Q.Q4_0): (239.14, 239.06),  # the output copy of token_embd repacked
    ("no-output", Q.F16): (418.83, 168.75),
    ("recorded", "f16"): (850.08, 0.0),  # every matrix F16: nothing repacks, the whole file mapped
}


@pytest.mark.parametrize("key", list(T5_MEASURED), ids=lambda k: f"{k[0]}-{getattr(k[1], 'name', k[1])}")
def test_t5_relative_bias_stays_mapped(avx2, key):
    m = ggufs.recorded_model("t5encoder")
    path = synth.synth_path(m, key[1]) if key[0] == "recorded" else _path(_untied("t5encoder"), key[1])
    got = llamacpp_run.measure(path, n_ctx=512, n_seq_max=1, use_mmap=True, use_extra_bufts=True, n_gpu_layers=0)
    assert got["ok"], got["error"]
    mb = got["model_buffer_mib"]
    assert (mb["CPU_Mapped"], mb.get("CPU_REPACK", 0.0)) == T5_MEASURED[key]
    est = _estimated_mib(path)
    assert (est["CPU_Mapped"], est.get("CPU_REPACK", 0.0)) == T5_MEASURED[key]
