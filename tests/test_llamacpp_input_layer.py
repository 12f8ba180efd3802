"""The input layer's tensors load on the CPU whatever -ngl says (llama_model::load_tensors: "very little benefit to
offloading the input layer"): src/llama-arch.cpp LLM_TENSOR_INFOS marks LLM_TENSOR_CONV1D, WavTokenizer's first
convolution ("conv1d" of wavtokenizer-dec), {LLM_TENSOR_LAYER_INPUT, GGML_OP_IM2COL} from PR #10784 (0bf2d10c,
2024-12-18, b4357) to b7140 (2025-11-23, read at both), beside TOKEN_EMBD, POS_EMBD and TOKEN_TYPES. oomkit sent
conv1d to the output layer's device (weights.INPUT_LAYER_TENSORS lacked it). No GPU run of a WavTokenizer file is at
hand; the check is the loader's rule, on tests/ggufs.py's file."""

from __future__ import annotations

import oomkit
from oomkit.model.gguf_file import read_gguf_spec
from tests import ggufs
from tests.groundtruth import synth


def test_wavtokenizer_conv1d_stays_on_the_cpu():
    """Fully offloaded (-ngl 999, one GPU), the F16 file's CPU_Mapped buffer is the file range of the input layer:
    token_embd (4.00 MiB) and conv1d.weight / conv1d.bias (5.25 MiB), laid out first, 9.25 MiB (the range's end,
    read off the file; oomkit gave 4.00 with conv1d in CUDA0)."""
    spec = read_gguf_spec(synth.synth_path(ggufs.recorded_model("wavtokenizer-dec"), "f16"))
    by_name = {t.name: t for t in spec.weights.tensors}
    first = [t.name for t in sorted(spec.weights.tensors, key=lambda t: t.offset)][:3]
    assert first == ["token_embd.weight", "conv1d.weight", "conv1d.bias"]
    end = by_name["conv1d.bias"].offset + by_name["conv1d.bias"].nbytes
    est = oomkit.estimate(spec, "llama.cpp", gpu="H100", find_max_context=False, n_ctx=512, n_gpu_layers=-1)
    mb = est.engine_view["model_buffer_bytes"]
    assert mb["CPU_Mapped"] == end
    total = sum(t.nbytes for t in spec.weights.tensors)
    assert 0 < total - end <= mb["CUDA0"]  # the rest (posnet, convnext, the head) on the GPU
