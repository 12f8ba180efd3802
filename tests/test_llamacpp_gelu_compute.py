"""The ungated GELU MLPs (gpt2, starcoder, bloom, mpt) with llama-server's one logits row: oomkit's CPU compute
buffer against llama.cpp's own dry run on the generic sweep shape (tests/ggufs.py SWEEP, 2 layers, f16).

llama.cpp prints 57.51 MiB at -c 4096 and 61.51 at -c 8192 (-np 1, -ub 512, flash attention, unified KV) for each
of the four files: the first layer's FFN sits above the masks and four hidden-state rows (compute.py, the plain
MLP's first-layer rule). oomkit 57.50 / 61.50; 49.50 / 53.50 (0.861 / 0.870) before that rule. gptneox, whose
RoPE'd Q moves the flash-attention output up a block, stays at masks + 3 rows: 49.51 / 53.51 printed, oomkit
49.50 / 53.50 (PLAIN_FFN_THREE_ROWS; 1.161 / 1.149 without that exception). phi2's parallel block, whose attention output
projection runs before its FFN, sits a row higher: 65.51 / 69.51 printed, oomkit 65.50 / 69.50; 57.50 / 61.50
(0.878 / 0.885) before PARALLEL_ATTN_OUT_FIRST."""
import pytest

from oomkit.model.gguf_file import read_gguf_spec
from tests import ggufs
from tests import gt_compare as g
from tests.groundtruth import synth
from tests.test_llamacpp_compute import _dry_compute_mib

needs_llama_cpp = pytest.mark.skipif(not g.llamacpp_run.available(), reason="llama-cpp-python not installed")

ONE_ROW = [dict(n_ctx=4096, n_outputs_max=1, fa=1, np=1), dict(n_ctx=8192, n_outputs_max=1, fa=1, np=1)]


@needs_llama_cpp
@pytest.mark.parametrize("arch", ["gpt2", "starcoder", "bloom", "gptneox", "phi2"])
def test_gelu_mlp_with_one_logits_row(arch):
    import oomkit

    path = synth.synth_path(ggufs.sweep_model(arch), "f16")
    spec = read_gguf_spec(path)
    real = _dry_compute_mib(path, [dict(s, n_ubatch=512, type=1) for s in ONE_ROW])
    assert len(real) == len(ONE_ROW) and all(real), real
    for s, r in zip(ONE_ROW, real, strict=True):
        e = oomkit.estimate(spec, "llama.cpp", cpu_only=True, find_max_context=False, program="llama-server",
                            n_ctx=s["n_ctx"], n_batch=2048, n_ubatch=512, n_parallel=s["np"], kv_unified=True,
                            flash_attn="on", mmap=False, repack=False, fit=False)
        got = e.engine_view["compute_buffer_bytes"]["CPU"] / (1 << 20)
        assert 0.9 <= got / r <= 1.1, (arch, s, got, r)
