"""The CPU compute buffer of the graphs whose last layer is a sequential ungated MLP (build_ffn with ffn_up alone,
LLM_FFN_SEQ: GELU or ReLU^2), held to llama.cpp's printed figure on this machine (llama-cpp-python 0.3.36,
llama.cpp@0c1e57098; the 2-layer sweep files of tests/ggufs.py SWEEP, n_embd 4096, n_ff 11008, vocab 32000, -ub 512).

With flash attention their peak is the logits phase, and where the logits sit turns on the final norm and the cache
type (compute.plain_mlp_output_rows, read off ggml-alloc's placement of the reserve, tests/groundtruth/gallocr_dump.c):
a LayerNorm (ggml_norm, not in ggml_op_can_inplace) takes a block above the last layer's output with an F16 cache
(logits + 3 rows: 86.50 MiB) and drops into a freed block below it with a rotated q8_0 V cache and masks of a row or
more (logits + 2 rows: 78.50); an RMS norm runs in place, the other way round (78.50 / 86.50). Before, oomkit put the logits two rows up
everywhere and the first layer's FFN four rows up with a rotated V cache too: 78.50 / 85.50 MiB for all of them.
"""

from __future__ import annotations

import pytest

from oomkit.model.gguf_file import read_gguf_spec
from tests import ggufs
from tests import gt_compare as g
from tests import llamacpp_harness as h
from tests.groundtruth import synth
from tests.test_llamacpp_archs import BASE

needs_llama_cpp = pytest.mark.skipif(not g.llamacpp_run.available(), reason="llama-cpp-python not installed")

LAYER_NORM = ["bloom", "codeshell", "gpt2", "jais2", "mpt", "nemotron", "starcoder", "starcoder2"]
RMS_NORM = ["apertus", "arcee"]

Q8 = dict(type_k="q8_0", type_v="q8_0")
# flash attention on: the census and sweep grids' settings (8K; 32K q8_0; 16K x 4 unified) and more contexts
FA_GRID = [
    dict(BASE, n_ctx=4096), dict(BASE, n_ctx=8192), dict(BASE, n_ctx=32768),
    dict(BASE, n_ctx=4096, **Q8), dict(BASE, n_ctx=8192, **Q8), dict(BASE, n_ctx=16384, **Q8),
    dict(BASE, n_ctx=32768, **Q8), dict(BASE, n_ctx=16384, n_seq_max=4, kv_unified=True),
]
# the printed MiB at each FA_GRID setting
LAYER_NORM_MIB = [86.50, 86.50, 86.50, 86.50, 78.50, 78.50, 78.50, 86.50]
RMS_NORM_MIB = [78.50, 78.50, 85.51, 78.50, 86.50, 86.50, 86.50, 78.50]
# without flash attention (the census's 16K q4_0 K, the sweep's 8K x 2) and at 64K q8_0, where the first layer's FFN
# is the peak (masks + 3 rows + n_ff: the graph's small inputs, 0.09 MiB, not counted): within 2 %
NEAR_GRID = [dict(BASE, n_ctx=16384, type_k="q4_0", flash_attn="off"),
             dict(BASE, n_ctx=8192, flash_attn="off", n_seq_max=2), dict(BASE, n_ctx=65536, **Q8)]


def _rows(arch: str, grid: list[dict]) -> list[h.Row]:
    path = synth.synth_path(ggufs.sweep_model(arch), "f16")
    rows = h.compare(arch, read_gguf_spec(path), grid, g.llamacpp_run.measure_many(path, grid), failures="error")
    assert len(rows) == len(grid)
    return rows


@needs_llama_cpp
@pytest.mark.parametrize("arch", LAYER_NORM + RMS_NORM)
def test_flash_attention_compute_equals_llama_cpp(arch):
    rows = _rows(arch, FA_GRID)
    expected = LAYER_NORM_MIB if arch in LAYER_NORM else RMS_NORM_MIB
    assert [r.expected["compute_mib"] for r in rows] == expected
    # to the 0.01 MiB llama.cpp prints; where the first layer's FFN is the peak (the RMS graphs at 32K f16: masks + 4
    # rows + n_ff, 85.51) the graph's small inputs are not counted: 0.01 under
    misses = [r.describe() for r in rows if round(r.expected["compute_mib"] - r.got["compute_mib"], 2) not in (0, 0.01)]
    assert not misses, f"{arch}: {'; '.join(misses)}"


@needs_llama_cpp
@pytest.mark.parametrize("arch", LAYER_NORM + RMS_NORM)
def test_other_settings_within_two_percent(arch):
    h.assert_compute(arch, _rows(arch, NEAR_GRID), 0.98, 1.02)


@needs_llama_cpp
@pytest.mark.xfail(strict=True, reason="24K q8_0 with a final LayerNorm: llama.cpp 86.50 MiB (the norm finds no hole "
                                       "below the last layer's output there), oomkit 78.50")
def test_layer_norm_at_24k_q8_0():
    h.assert_compute_equal("nemotron", _rows("nemotron", [dict(BASE, n_ctx=24576, **Q8)]))


# gated FFNs (build_ffn, LLM_FFN_PAR) after a norm of their own: with a rotated V cache the attention output's
# un-rotation moves ffn_inp one row lower, so gate, up and the SwiGLU product sit above the masks and three rows
# (compute.feed_forward_phases). llama.cpp prints 120.59 MiB at 32K q8_0 on these sweep files (masks 32.09 with the
# graph's small inputs, which oomkit leaves out); oomkit gave 128.50 (four rows) before
GATED = ["ernie4_5", "exaone", "jais", "nanbeige", "refact", "xverse"]


@needs_llama_cpp
@pytest.mark.parametrize("arch", GATED)
def test_rotated_v_cache_gated_ffn_equals_llama_cpp(arch):
    (row,) = _rows(arch, [dict(BASE, n_ctx=32768, **Q8)])
    assert row.expected["compute_mib"] == 120.59
    assert 0 <= row.expected["compute_mib"] - row.got["compute_mib"] <= 0.1, row.describe()
