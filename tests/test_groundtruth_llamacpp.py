"""oomkit against llama.cpp itself: for real models' per-layer shapes (synthetic GGUFs written with `gguf`, the
tensor data a sparse hole), llama.cpp is run on the CPU through llama-cpp-python and its own log lines are
the expected figures. KV cache (per cache: cells, layers, K, V), recurrent state (R, S), model, output and
KV buffers must equal llama.cpp's to the 0.01 MiB it prints; the compute buffer within 10%, and equal to the
0.01 MiB for the models of COMPUTE_EQUAL (their CPU graph replayed node by node through ggml-alloc).
Where llama.cpp refuses the settings (a quantized V cache without flash attention), oomkit must refuse too.
"""

import pytest

from tests import gt_compare as g
from tests import llamacpp_harness as h

llama_cpp = pytest.importorskip("llama_cpp")


def grid():
    base = list(g.settings_grid())
    extra = [
        # llama-server's default: 4 slots sharing one unified cache (SWA and recurrent sizes scale with it)
        dict(base[0], n_seq_max=4, kv_unified=True),
        dict(base[0], n_seq_max=4, kv_unified=True, n_ctx=32768),
        dict(base[0], n_ubatch=2048),
        dict(base[0], swa_full=True, n_seq_max=2),
        dict(base[0], n_ctx=5000, n_seq_max=3),  # padding: PAD(5000/3, 256) per sequence
        dict(base[0], type_k="q8_0", type_v="f16", flash_attn="off"),  # quantized K alone works without FA
    ]
    return base + extra


GRID = grid()
# the models whose compute buffer equals llama.cpp's on every setting of GRID (and at full depth), their CPU graph
# replayed node by node through ggml-alloc (where the closed-form phases gave, in MiB):
# - mamba2-2.7b (compute_graphs.mamba2_graph): 113.22 at -ub 512 (108.22), 452.89 at -ub 2048 (432.88);
# - gpt-oss-20b (compute_graphs.gpt_oss_graph): 414.40 at -c 4096 (404.00), 434.01 at -np 4 without flash attention
#   (404.00), 1731.09 at -ub 2048 (1616.00), 412.17 at -c 5000 -np 3 (404.00);
# - deepseek-v3 and deepseek-v3-legacy (compute.deepseek2_cpu_bytes): 412.01 / 300.01 at -c 4096 (418.00 / 294.50),
#   409.01 / 297.01 at -np 4, 1186.03 for the legacy heads with a q8_0 K cache without flash attention (1250.00);
# - llama-3.1-8b, qwen3-8b (compute_graphs.deci_graph): 274.50 / 320.75 at 16K with a q8_0 cache (266.50 / 312.75),
#   300.07 for llama with a q8_0 K cache without flash attention (308.00), 266.52 at -c 5000 -np 3 (266.50);
# - qwen3-30b-a3b (compute_graphs.qwen3moe_graph): 1086.01 at 16K without flash attention (1086.00);
# - gemma-3-12b, gemma-2-9b (compute_graphs.gemma_graph): 534.50 / 521.00 without flash attention (527.00 / 514.00);
# - qwen3.5-27b (compute.gdn_cpu_bytes).
COMPUTE_EQUAL = frozenset({"mamba2-2.7b", "gpt-oss-20b", "deepseek-v3", "deepseek-v3-legacy", "llama-3.1-8b",
                           "qwen3-8b", "qwen3-30b-a3b", "gemma-3-12b", "gemma-2-9b", "qwen3.5-27b"})


@pytest.fixture(scope="module", params=g.MODELS, ids=[k for k, _ in g.MODELS])
def measured(request):
    key, n_layers = request.param
    path, spec, results = g.measure_grid(key, n_layers, GRID)
    return key, spec, results


def test_figures_equal_llama_cpp(measured):
    key, spec, results = measured
    rows = h.compare(key, spec, GRID, results)
    h.assert_compute(key, rows)
    if key in COMPUTE_EQUAL:
        h.assert_compute_equal(key, rows)
    assert len(rows) >= len(GRID) // 2  # most settings are valid; an engine-side breakage must not pass silently


# Whole models at their full depth and long contexts, sized by llama.cpp's own dry run (no_alloc: the buffers
# are sized, not allocated, so contexts beyond this machine's RAM work). The model/KV *buffer* lines read 0
# in that mode; the cache, state, output and compute figures are real.
FULL_DEPTH = [
    ("llama-3.1-8b", dict(n_ctx=131072)),
    ("qwen3-30b-a3b", dict(n_ctx=40960, type_k="q8_0", type_v="q8_0")),
    ("gemma-3-12b", dict(n_ctx=131072, n_seq_max=4, kv_unified=True)),
    ("gpt-oss-20b", dict(n_ctx=131072, n_seq_max=4, kv_unified=True)),
    ("deepseek-v3", dict(n_ctx=163840)),
    ("qwen3.5-27b", dict(n_ctx=262144, n_seq_max=4, kv_unified=True)),
    ("mamba2-2.7b", dict(n_ctx=1048576, n_seq_max=8)),
]


@pytest.mark.parametrize("key,over", FULL_DEPTH, ids=[k for k, _ in FULL_DEPTH])
def test_full_depth_long_context_dry_run(key, over):
    s = dict(next(g.settings_grid()), no_alloc=True, use_mmap=False, **over)
    path = g.synth_file(key, None)
    from oomkit.model.gguf_file import read_gguf_spec

    spec = read_gguf_spec(path)
    rows = h.compare(key, spec, [s], [g.llamacpp_run.measure(path, **s)], fields=h.DRY_RUN_FIELDS, failures="error")
    h.assert_compute(key, rows)
    if key in COMPUTE_EQUAL:
        h.assert_compute_equal(key, rows)


def test_deepseek_v3_expert_groups_compute_equal():
    """DeepSeek-V3's GGUFs carry expert_group_count 8 / expert_group_used_count 4 (the synthetic file has none): the
    CPU compute buffer llama.cpp prints for the grouped file is still the replay's, at -c 4096 (412.01 MiB), without
    flash attention (1440.01), at 16K x 4 (412.01) and -ub 2048 (1648.04)."""
    import dataclasses

    from oomkit.model.gguf_file import read_gguf_spec
    from tests.groundtruth import synth

    m = synth.deepseek_v3(4)
    md = m.metadata + (("deepseek2.expert_group_count", 8, synth.VT.UINT32),
                       ("deepseek2.expert_group_used_count", 4, synth.VT.UINT32))
    path = synth.synth_path(dataclasses.replace(m, key="deepseek-v3-grouped", metadata=md), "q4_0")
    grid = g.small_grid({}, {"flash_attn": "off"}, {"n_ctx": 16384, "n_seq_max": 4}, {"n_ubatch": 2048})
    spec = read_gguf_spec(path)
    rows = h.compare("deepseek-v3-grouped", spec, grid, g.llamacpp_run.measure_many(path, grid))
    assert [r.expected["compute_mib"] for r in rows] == [412.01, 1440.01, 412.01, 1648.04]
    h.assert_compute_equal("deepseek-v3-grouped", rows)
