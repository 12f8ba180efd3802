"""T5's encoder and decoder blocks are llama.cpp layers: src/llama-model.cpp load_tensors creates each of
LLM_ARCH_T5ENCODER's (and LLM_ARCH_T5's) enc.blk.N / dec.blk.N tensors with tn(..., i), and create_tensor puts a
LLM_TENSOR_LAYER_REPEATING tensor in dev_layer.at(tn.bid)'s buffer list, layer i's device (read at
llama.cpp@62ede36c, b7140). Before they were read as layer N (model/gguf_file.py _BLK) they went with the
output layer: with -ngl 1 or 2 of t5encoder's 2 blocks nothing reached the GPU.

The expected bytes are the file's own (the sum of the named tensors' sizes in its header); the rule which tensors
go where is llama.cpp's above. -ngl before PR #18148 (b7467) counts the last repeating layers, the output layer
only past n_layer (weights.place_layers)."""

from __future__ import annotations

import pytest

import oomkit
from oomkit.model.gguf_file import read_gguf_spec
from tests import ggufs
from tests.groundtruth import synth

MiB = 1 << 20


@pytest.fixture(scope="module")
def t5encoder():
    return synth.synth_path(ggufs.recorded_model("t5encoder"), "f16")


def _bytes(spec, *prefixes: str) -> int:
    return sum(t.nbytes for t in spec.weights.tensors if t.name.startswith(prefixes))


def test_encoder_blocks_are_layers(t5encoder):
    spec = read_gguf_spec(t5encoder)
    enc = [t for t in spec.weights.tensors if t.name.startswith("enc.blk.")]
    assert enc and all(t.layer == int(t.name.split(".")[2]) for t in enc)
    assert next(t for t in spec.weights.tensors if t.name == "enc.output_norm.weight").layer is None  # output layer


@pytest.mark.parametrize("ngl, on_gpu", [(1, ("enc.blk.1.",)), (2, ("enc.blk.0.", "enc.blk.1."))])
def test_partial_offload_moves_the_encoder_blocks(t5encoder, ngl, on_gpu):
    """-ngl 1: the last block (enc.blk.1.*) on CUDA0; -ngl 2: both blocks, the output layer (enc.output_norm and the
    duplicated token_embd) left on the CPU. An F16 file: no row padding in the CUDA buffer."""
    spec = read_gguf_spec(t5encoder)
    est = oomkit.estimate(spec, "llama.cpp", vram="24GiB", find_max_context=False, fit=False, n_gpu_layers=ngl,
                          engine_version="b7000")
    assert est.engine_view["model_buffer_bytes"]["CUDA0"] == _bytes(spec, *on_gpu)
