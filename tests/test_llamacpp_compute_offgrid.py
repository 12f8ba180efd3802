"""llama.cpp's compute buffer off the five-row architecture grid (tests/test_llamacpp_archs.py ADDED_GRID), held to
llama.cpp itself: the synthetic GGUFs of tests/ggufs.py loaded by the llama.cpp llama-cpp-python 0.3.36 wraps
(ggml-org/llama.cpp@0c1e57098) on the CPU, its printed "compute buffer size" the expected figure
(tests/groundtruth/llamacpp_run.py), every other buffer compared too (tests/llamacpp_harness.py).

EXACT rows must equal llama.cpp's figure to the 0.01 MiB it prints; the other rows are held within 10%.
"""

import pytest

from oomkit.engines.llamacpp import galloc
from oomkit.model.gguf_file import read_gguf_spec
from tests import ggufs
from tests import gt_compare as g
from tests import llamacpp_harness as h
from tests.groundtruth import synth

needs_llama_cpp = pytest.mark.skipif(not g.llamacpp_run.available(), reason="llama-cpp-python not installed")

BASE = next(g.settings_grid())  # -c 4096, f16 K/V, FA on, 1 sequence, -ub 512
Q8 = dict(type_k="q8_0", type_v="q8_0")

# hy_v3 with flash attention, replayed through ggml-alloc (compute.py: compute_graphs.hy_v3_graph). Before, the
# closed forms of final_norm_kept_output gave 102.59 / 110.59 / 102.55 / 120.00 / 102.59 MiB for the q8_0 rows at
# 16K / 24K / 40K / 64K / 16K x 4 unified (0.93, 1.28, 0.93, 1.07, 0.93 of llama.cpp's 110.59 / 86.50 / 110.55 /
# 112.14 / 110.59)
EXACT = [
    ("hy_v3", dict(BASE, n_ctx=16384, **Q8)),
    ("hy_v3", dict(BASE, n_ctx=24576, **Q8)),
    ("hy_v3", dict(BASE, n_ctx=40960, **Q8)),
    ("hy_v3", dict(BASE, n_ctx=65536, **Q8)),
    ("hy_v3", dict(BASE, n_ctx=16384, n_seq_max=4, kv_unified=True, **Q8)),
    ("hy_v3", dict(BASE, n_ctx=16384, n_seq_max=4, **Q8)),
    ("hy_v3", dict(BASE, n_ctx=32768, n_ubatch=256, **Q8)),
    ("hy_v3", dict(BASE, n_ctx=32768, n_ubatch=1024, n_batch=2048)),
    # t5encoder at small ubatches: the relative-position bias rows (and their copy) in the block Q and K free, the
    # ReLU FFN's up rows the peak below -ub 256. Before: 44.38 / 44.50 MiB at -ub 256 x 2 with flash attention on /
    # off (1.22 of llama.cpp's 36.38 / 36.50), 16.09 at -ub 128 (1.19 of 13.47), 6.52 at -ub 64 (0.97 of 6.71)
    ("t5encoder", dict(BASE, n_ctx=8192, n_ubatch=256, n_seq_max=2)),
    ("t5encoder", dict(BASE, n_ctx=8192, n_ubatch=256, n_seq_max=2, flash_attn="off")),
    ("t5encoder", dict(BASE, n_ctx=4096, n_ubatch=128, n_seq_max=2)),
    ("t5encoder", dict(BASE, n_ctx=2048, n_ubatch=64)),
]

# DeepSeek-V4 at long context (compute.py hc_attention_phase: the lightning indexer's scores and the keys gathered
# per sequence). Run as llama.cpp's dry run (no_alloc: the compute buffer is sized, the KV cache not allocated).
# Before: 283.89 MiB at 256K x 2 (0.82 of llama.cpp's 347.84), 238.64 at 100K x 3 unified (0.73 of 328.59)
WITHIN_10 = [
    ("deepseek4", dict(BASE, n_ctx=262144, n_seq_max=2)),
    ("deepseek4", dict(BASE, n_ctx=100000, n_seq_max=3, kv_unified=True)),
    ("deepseek4", dict(BASE, n_ctx=200000, n_seq_max=3)),
    ("deepseek4", dict(BASE, n_ctx=163840, n_seq_max=5, kv_unified=True)),
    ("deepseek4", dict(BASE, n_ctx=131072)),
    ("deepseek4", dict(BASE, n_ctx=131072, n_seq_max=2)),
    ("deepseek4", dict(BASE, n_ctx=100000)),
    # MiniMax-M3 with split streams: the sparse mask built stream by stream (compute.py msa_phase). Before, the plain
    # path: 110.55 MiB at 8K / 16K / 32K x 2 (0.89, 0.55, 0.32 of llama.cpp's 124.56 / 200.59 / 344.65)
    ("minimax-m3", dict(BASE, n_ctx=8192, n_seq_max=2)),
    ("minimax-m3", dict(BASE, n_ctx=16384, n_seq_max=2)),
    ("minimax-m3", dict(BASE, n_ctx=32768, n_seq_max=2)),
    ("minimax-m3", dict(BASE, n_ctx=32768, n_seq_max=4)),
    ("minimax-m3", dict(BASE, n_ctx=16384, n_seq_max=2, n_ubatch=256)),
    # MiniCPM3 with a rotated q8_0 V cache: the FFN input one row lower (compute.py feed_forward_phases). Before:
    # 89.50 / 121.50 MiB at 32K / 64K (1.06, 1.04 of llama.cpp's 84.53 / 116.53)
    ("minicpm3", dict(BASE, n_ctx=32768, **Q8)),
    ("minicpm3", dict(BASE, n_ctx=65536, **Q8)),
    ("minicpm3", dict(BASE, n_ctx=32768, n_ubatch=256, **Q8)),
    ("minicpm3", dict(BASE, n_ctx=32768, n_seq_max=4, kv_unified=True, **Q8)),
    # the logits above the weighted experts though the masks are small (compute.py msa_streams): before, 86.50 MiB at
    # 4K x 2 (0.77 of 113.04)
    ("minimax-m3", dict(BASE, n_ctx=4096, n_seq_max=2)),
    ("minimax-m3", dict(BASE, n_ctx=4096, n_seq_max=4)),
    # with q8_0 K and V (the rotated query; the masks without the empty non-SWA cache). Before: 283.89 / 476.89 MiB
    # at 128K / 256K (1.12, 1.14 of llama.cpp's 253.34 / 416.74), 238.64 at 100K x 3 unified (0.90 of 264.02)
    ("deepseek4", dict(BASE, n_ctx=131072, **Q8)),
    ("deepseek4", dict(BASE, n_ctx=262144, **Q8)),
    ("deepseek4", dict(BASE, n_ctx=262144, n_seq_max=2, **Q8)),
    ("deepseek4", dict(BASE, n_ctx=100000, n_seq_max=3, kv_unified=True, **Q8)),
]


def _path(arch: str):
    build = ggufs.ADDED_BUILDERS.get(arch)
    quant = ggufs.ADDED_QUANT.get(arch, "q4_0" if build else "f16")
    return synth.synth_path(build() if build else ggufs.sweep_model(arch), quant)


def _ids(rows):
    return [f"{a}-{s['n_ctx']}-{s['type_k']}-x{s['n_seq_max']}{'u' if s['kv_unified'] else ''}-ub{s['n_ubatch']}"
            for a, s in rows]


@needs_llama_cpp
@pytest.mark.parametrize("arch,settings", EXACT, ids=_ids(EXACT))
def test_compute_equals_llama_cpp(arch, settings):
    path = _path(arch)
    rows = h.compare(arch, read_gguf_spec(path), [settings], [g.llamacpp_run.measure(path, **settings)],
                     failures="error")
    row = rows[0]
    assert round(row.got["compute_mib"], 2) == row.expected["compute_mib"], row.describe()


@needs_llama_cpp
@pytest.mark.parametrize("arch,settings", WITHIN_10, ids=_ids([p.values if hasattr(p, "values") else p
                                                              for p in WITHIN_10]))
def test_compute_within_10_percent_dry_run(arch, settings):
    s = dict(settings, no_alloc=True, use_mmap=False)
    path = _path(arch)
    rows = h.compare(arch, read_gguf_spec(path), [s], [g.llamacpp_run.measure(path, **s)], fields=h.DRY_RUN_FIELDS,
                     failures="error")
    h.assert_compute(arch, rows)


def test_allocator_best_fit_and_in_place():
    """ggml-alloc's rules on a small graph (sizes padded to 32 bytes): an in-place op takes its parent's block, a
    freed block is reused by a tensor that fits it, an output is never freed, and what fits no hole goes to the
    free tail."""
    n = galloc.Node
    nodes = [
        n(100),                        # 0 input: [0, 128)
        n(64, (0,)),                   # 1 at the tail, 128; frees the input once run: [0, 128) free
        n(64, (1,), inplace=True),     # 2 in place on 1 (its only consumer)
        n(32, (2,)),                   # 3 the freed input block: [0, 32)
        n(96, (3, 2), output=True),    # 4 fits [32, 128) exactly; frees 3 ([0, 32)) and 2 (merged into the tail)
        n(32, (4,)),                   # 5 best fit [0, 32); the output 4 stays
        n(64, (5,)),                   # 6 no hole left below: the tail at 128
    ]
    top, addr = galloc.placement(1, nodes)
    assert addr == [0, 128, 128, 0, 32, 0, 128]
    assert top == 192



def test_galloc_empty_tensor_keeps_free_ranges_apart():
    """ggml-alloc.c allocates and frees a tensor of no bytes (ggml_dyn_tallocr_alloc / _free_bytes, galloc's
    Node.empty): placed at the start of the best-fitting free block, which leaves the block as it is; once that block
    has merged into a larger one, freeing the empty tensor touches no block's ends and inserts an empty block after
    the one holding it, and the larger block then grows by later frees without ever merging with the tail (only list
    neighbours merge): a tensor after them goes above the tail."""
    from oomkit.engines.llamacpp.galloc import Node, peak_bytes

    def graph(empty: bool) -> list[Node]:
        return [Node(256), Node(256), Node(256),  # A [0, 256), B [256, 512), C [512, 768)
                Node(256, (1,)),  # X at 768; B freed: the block [256, 512)
                Node(0, empty=empty),  # E: at 256, the block left as it is
                Node(512, (0,)),  # Y at 1024; A freed: the block [0, 512), E's offset inside it
                Node(0, (4, 2, 3, 5)),  # E, C, X, Y freed: [0, 1536), beside the tail at 1536 or not
                Node(2048, (6,))]
    assert peak_bytes(0, graph(False)) == 2048  # the freed range merged with the tail: W at 0
    assert peak_bytes(0, graph(True)) == 1536 + 2048  # kept apart by E's empty block: W above 1536
