"""Gemma 3n's compute buffer, held to llama.cpp on the CPU.

src/models/gemma3n.cpp (the same graph from PR #23764 to llama.cpp@3f545becc, and in the binding's build) keeps
n_altup (4) copies of the residual stream through every layer: AltUp's predictions, the corrected streams, their
permuted copies for the next layer's prediction, beside LAuReL, the gaussian top-k of the first 10 layers' FFN gate
and the per-layer inputs (n_embd_altup x n_layer floats a token, the permuted copy living to the last layer). The
closed-form phases gave 298.00 MiB against llama.cpp's 450.09 at 8K -ub 2048 with llama-server's one output row
(0.662); oomkit replays the whole graph through ggml-alloc (compute_graphs.gemma3n_graph), every tensor at the
offset llama.cpp's own reserve puts it (checked on the ggml_gallocr_reserve_n dump of the binding).

Ground truth: llama-cpp-python 0.3.36 on the CPU, synthetic GGUFs with Gemma 3n E2B's 30 layers (tests/ggufs.py
gemma3n_e2b) and E4B's 35 (google/gemma-3n-E4B-it text_config as the catalog holds it: hidden 2048, intermediate
16384, 8 heads / 2 KV heads of 256, per-layer inputs of 256, 15 KV-shared layers, window 512), each context created
as llama-server creates it (swa_full off, n_outputs_max = n_parallel) or as the binding does (every token an output),
no_alloc dry run.
"""

from __future__ import annotations

import pytest

from tests.ggufs import gemma3n_e2b, gemma3n_e4b
from tests.groundtruth import llamacpp_run, synth
from tests.test_llamacpp_gemma4_ple import _c, measure, predicted

# -c 4K-32K, -ub 512 / 2048, 1 and 4 slots (unified or not), flash attention on and off, f16 / q8_0 / q4_0 caches
# (their Hadamard rotations), llama-server's rows (outputs = n_parallel) and the binding's own (0: every token)
GRID = [_c(8192, 2048), _c(8192, 512), _c(8192, 512, fa=0), _c(4096, 512), _c(4096, 2048, fa=0),
        _c(32768, 512, outputs=0), _c(32768, 2048, outputs=0), _c(32768, 512, fa=0, outputs=0),
        _c(16384, 512, 4, True, outputs=4), _c(16384, 512, 4, False, outputs=4),
        _c(16384, 512, 4, False, fa=0, outputs=4), _c(16384, 2048, 4, True, fa=0, outputs=4),
        _c(8192, 512, k="q8_0", v="q8_0"), _c(32768, 2048, k="q4_0", v="q4_0", outputs=0),
        _c(16384, 512, 4, False, k="q8_0", v="f16", outputs=4), _c(8192, 1024, fa=0, k="q8_0")]
E4B_GRID = [_c(8192, 2048), _c(8192, 512), _c(8192, 512, fa=0), _c(4096, 2048, fa=0), _c(32768, 512, outputs=0),
            _c(32768, 2048, k="q8_0", v="q8_0", outputs=0), _c(16384, 512, 4, True, outputs=4),
            _c(16384, 512, 4, False, k="q8_0", v="q8_0", outputs=4), _c(16384, 512, 4, False, fa=0, outputs=4),
            _c(8192, 1024, fa=0, k="q8_0")]


@pytest.fixture(scope="module")
def e2b():
    if not llamacpp_run.available():
        pytest.skip("llama-cpp-python is not installed")
    path = synth.synth_path(gemma3n_e2b(), "q4_0")
    return path, measure(path, GRID)


def test_the_figures_the_xfail_recorded(e2b):
    """The binding's buffers at the settings the old strict xfail named (CPU, one output row / every token)."""
    measured = e2b[1]
    assert (measured[0], measured[1], measured[2], measured[5]) == (450.09, 111.02, 219.01, 540.00)


def test_e2b_compute_equals_llama_cpp(e2b):
    """E2B at full depth (30 layers: 10 KV-shared, 10 with activation sparsity): equal to the 0.01 MiB printed at
    every setting of the grid (was 0.662 / 0.658 / 0.776 of it with one output row, 0.963 with every token)."""
    path, measured = e2b
    for i, (c, m) in enumerate(zip(GRID, measured, strict=True)):
        assert predicted(path, c) == pytest.approx(m, abs=0.01), (i, c, m)


def test_e4b_compute_equals_llama_cpp():
    """E4B (35 layers, 15 KV-shared, FFN 16384): equal to the 0.01 MiB printed at every setting."""
    if not llamacpp_run.available():
        pytest.skip("llama-cpp-python is not installed")
    path = synth.synth_path(gemma3n_e4b(), "q4_0")
    for i, (c, m) in enumerate(zip(E4B_GRID, measure(path, E4B_GRID), strict=True)):
        assert predicted(path, c) == pytest.approx(m, abs=0.01), (i, c, m)
