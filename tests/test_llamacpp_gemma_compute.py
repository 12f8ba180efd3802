"""Gemma 2 / Gemma 3's compute buffer as llama-server reserves it: interleaved sliding-window layers (the SWA cache
of n_swa + n_ubatch cells a stream, --swa-full off), the post-attention and post-FFN norms, the GELU-gated FFN and
the last layer's FFN on the output rows only (n_outputs_max = n_parallel, src/models/gemma2-iswa.cpp /
gemma3.cpp: `il == n_layer - 1 && inp_out_ids`).

Ground truth: llama-cpp-python 0.3.36 creates each context as llama-server would (swa_full false as
common_params, n_outputs_max = n_parallel as server_output_limits without speculation; 0 = every token of the
ubatch for the binding's own default) on the CPU, no_alloc dry run, and prints the compute buffer. The files: Gemma
2 9B with 2 and 4 layers (sliding and full in turn: the last layer full), Gemma 3 12B with 2 layers (both sliding:
no full cache) and 6 layers (5 sliding, then a full one). 1 slot, 4 slots unified and 4 split streams; flash
attention on and off; -ub 512 and 64; 4K and 32K contexts.
"""

from __future__ import annotations

import pytest

import oomkit
from tests.groundtruth import llamacpp_run, synth

MiB = 1 << 20

_WORKER = llamacpp_run.binding_script(r'''
for i, c in enumerate(contexts):
    os.write(2, f"@@CTX {i}\n".encode())
    cp = llama_cpp.llama_context_default_params()
    cp.n_ctx, cp.n_batch, cp.n_ubatch, cp.n_seq_max = c["n_ctx"], 2048, c["n_ubatch"], c["n_seq"]
    cp.n_threads = cp.n_threads_batch = 1
    cp.flash_attn_type = c["fa"]
    cp.kv_unified = c["unified"]
    cp.swa_full = False
    cp.n_outputs_max = cp.n_outputs_max_per_seq = c["outputs"]
    ctx = llama_cpp.llama_init_from_model(model, cp)
    os.write(2, f"@@END {i} {bool(ctx)}\n".encode())
    llama_cpp.llama_free(ctx)
''', {'no_alloc': 'True', 'load_mode': '0', 'lazy_mode': '0'})

MODELS = {"gemma2-9b-2L": lambda: synth.gemma2_9b(2), "gemma2-9b-4L": lambda: synth.gemma2_9b(4),
          "gemma3-12b-2L": lambda: synth.gemma3_12b(2), "gemma3-12b-6L": lambda: synth.gemma3_12b(6)}
# llama-server's rows (outputs = n_parallel) at every setting; the binding's default (0: every token) at one slot
GRID = [dict(n_ctx=n_ctx, n_ubatch=ub, n_seq=np_, unified=uni, fa=fa, outputs=np_ if server else 0)
        for n_ctx in (4096, 32768) for ub in (512, 64) for fa in (1, 0)
        for np_, uni, server in ((1, True, True), (4, True, True), (4, False, True), (1, True, False))]
# (model, grid index) -> measured oomkit / llama.cpp compute where not within 10%
COMPUTE_MISSES: dict[tuple[str, int], float] = {}


def measure(path, grid: list[dict]) -> list[float]:
    return llamacpp_run.compute_mib(_WORKER, path, grid)


def predicted(path, c: dict) -> float:
    kw = dict(devices=(), find_max_context=False, fit=False, n_ctx=c["n_ctx"], n_parallel=c["n_seq"],
              kv_unified=c["unified"], flash_attn="on" if c["fa"] else "off", n_ubatch=c["n_ubatch"],
              program="llama-server" if c["outputs"] else "llama-cpp-python")
    v = oomkit.estimate(str(path), "llama.cpp", **kw).engine_view
    return sum(v["compute_buffer_bytes"].values()) / MiB


@pytest.fixture(scope="module", params=sorted(MODELS))
def gemma_measured(request):
    if not llamacpp_run.available():
        pytest.skip("llama-cpp-python is not installed")
    path = synth.synth_path(MODELS[request.param](), "q4_0")
    return request.param, path, measure(path, GRID)


def test_gemma_compute_within_ten_percent(gemma_measured):
    """Each setting within 10% of llama.cpp's CPU compute buffer unless listed in COMPUTE_MISSES."""
    name, path, rows = gemma_measured
    for i, (c, m) in enumerate(zip(GRID, rows, strict=True)):
        ratio = predicted(path, c) / m
        if (name, i) in COMPUTE_MISSES:
            assert ratio == pytest.approx(COMPUTE_MISSES[name, i], abs=0.005), (name, c, ratio)
            continue
        assert 0.9 <= ratio <= 1.1, (name, i, c, ratio, m)


def test_freed_sliding_mask_holds_the_ffn_rows():
    """The last sliding layer's FFN while a full layer still attends (Gemma 2's 2-layer file, 4 slots unified, flash
    attention, -ub 512): the SWA cache's freed f16 mask (min(n_ctx, 4 x 4096 + 512) cells) takes the attention
    output's residual where it holds one row block (8 / 12 MiB at 8K / 12K: 114.02 / 122.02 MiB measured), the FFN
    norm too where it holds two (16.50 MiB at 32K: 139.52); at 4K (4 MiB) neither (121.02, the
    rows of feed_forward_phases' plain rule: within 1%)."""
    if not llamacpp_run.available():
        pytest.skip("llama-cpp-python is not installed")
    path = synth.synth_path(MODELS["gemma2-9b-2L"](), "q4_0")
    grid = [dict(n_ctx=n, n_ubatch=512, n_seq=4, unified=True, fa=1, outputs=4) for n in (4096, 8192, 12288, 32768)]
    measured = measure(path, grid)
    assert measured == [121.02, 114.02, 122.02, 139.52]
    for c, m in zip(grid[1:], measured[1:], strict=True):
        assert predicted(path, c) == pytest.approx(m, abs=0.05), c
    assert predicted(path, grid[0]) / measured[0] == pytest.approx(1, abs=0.01)
