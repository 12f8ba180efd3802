"""Gemma 2's CUDA0 compute buffer from its pp graph scheduled and replayed (compute.gemma2_device_bytes,
sched_replay.gemma2_graph: src/models/gemma2.cpp at llama.cpp@0c1e57098), against llama.cpp's own figures on the
H200 (tests/fixtures/llamacpp_cuda, the gemma-2-9b 4-layer synthetic file; the held-out run's rows fitted nothing).
With every repeating layer on the CPU (-ngl 1: the output layer only) the logits land above what the last host
layer's splits leave on the device, a q4_0 weight copy and the FFN's rows: 569.56 MiB measured, where the closed
forms gave 514.00 (0.902, the worst CUDA0 case of the band); the replay gives every row it covers to the 0.01 MiB,
fully offloaded (507.00 where the closed forms gave 514.00), partly, without flash attention, -nkvo, four sequences on
a unified cache, -ub 2048."""

import pytest

from tests import test_llamacpp_cuda_measured as t

COVERED = [p for p in t.ROWS if p.values[0]["key"] == "gemma-2-9b"
           and p.values[0]["settings"]["type_k"] == "f16" and p.values[0]["settings"]["type_v"] == "f16"
           and (p.values[0]["settings"]["n_seq_max"] == 1 or p.values[0]["settings"]["kv_unified"])]


def test_rows_covered():
    assert len(COVERED) == 12
    assert any(p.values[0]["settings"]["n_gpu_layers"] == 1 for p in COVERED)


@pytest.mark.parametrize("r", COVERED)
def test_gemma2_cuda0_equals_llama_cpp(r):
    got = t.oomkit_view(r)["compute_buffer_bytes"]["CUDA0"] / t.MiB
    assert got == pytest.approx(t.measured(r)["compute_buffer_mib"]["CUDA0"], abs=0.01)
