"""Gemma 2's and Llama 4's CUDA0 compute buffers from their pp graphs scheduled and replayed
(compute.iswa_device_bytes, sched_replay.gemma2_graph / llama4_graph: src/models/gemma2.cpp and llama4.cpp at
llama.cpp@0c1e57098), against llama.cpp's own figures on the H200 (tests/fixtures/llamacpp_cuda: the gemma-2-9b and
llama4-scout 4-layer synthetic files; the held-out run's rows fitted nothing, and all of Llama 4's are held out).

Gemma 2 with every repeating layer on the CPU (-ngl 1: the output layer only): the logits land above what the last
host layer's splits leave on the device, a q4_0 weight copy and the FFN's rows: 569.56 MiB measured, where the closed
forms gave 514.00 (0.902, the worst CUDA0 case of the band); fully offloaded 507.00 (514.00 before), -ub 2048 2028.00
(2056.00), a q4_0 cache at -c 65536 (held out: its rotations and ggml-cuda's F16 copies) 611.05 (625.50). Llama 4 (chunked attention with RoPE and weightless Q / K norms, a global NoPE layer with the temperature
input, a sigmoid top-1 router applied before the experts, a shared expert): -ngl 2 436.06 (474.00 before, 1.087),
-c 16384 -ub 1024 829.25 (889.38, 1.073), 440.65 (444.69), without flash attention 720.11 (730.00). The replay gives
every row it covers to the 0.01 MiB: fully and partly offloaded, with and without flash attention, F16, q8_0 and
q4_0 caches, -nkvo, four sequences on a unified cache."""

import pytest

from tests import test_llamacpp_cuda_measured as t


def _covered(r) -> bool:
    s = r["settings"]
    return r["key"] in ("gemma-2-9b", "llama4") and (s["n_seq_max"] == 1 or s["kv_unified"])


COVERED = [p for p in t.ROWS if _covered(p.values[0])]


def test_rows_covered():
    keys = [p.values[0]["key"] for p in COVERED]
    assert keys.count("gemma-2-9b") == 14 and keys.count("llama4") == 4
    assert any(p.values[0]["settings"]["n_gpu_layers"] == 1 for p in COVERED)


@pytest.mark.parametrize("r", COVERED)
def test_cuda0_equals_llama_cpp(r):
    got = t.oomkit_view(r)["compute_buffer_bytes"]["CUDA0"] / t.MiB
    assert got == pytest.approx(t.measured(r)["compute_buffer_mib"]["CUDA0"], abs=0.01)
