"""llama.cpp's compute buffer where the feed-forward block, not the logits or the attention scores, sets the peak:
dense gated FFNs wider than the logits (deci's per-layer sizes), MoE blocks whose used experts' rows outweigh the
logits (Qwen3.5-397B's gated-delta-net + MoE layers at -ub 1024), and MoE blocks with shared experts that lift the
logits above the weighted experts' rows (ernie4_5-moe, hunyuan-moe); and hybrids (Qwen3.5) whose logits sit above
the freed KQ-mask block or not (compute_phases).

Ground truth: synthetic GGUFs with the published checkpoints' per-layer shapes (tests/ggufs.py, and the
qwen35moe builder below), loaded by the llama.cpp llama-cpp-python 0.3.36 wraps (ggml-org/llama.cpp@0c1e57098)
on the CPU; its own "CPU compute buffer size" line is the expected figure (tests/groundtruth/llamacpp_run.py).
The rules oomkit mirrors are in src/oomkit/engines/llamacpp/compute.py (feed_forward_phases, compute_phases),
read off ggml-alloc's placement of each node of those graphs (node offsets in the CPU compute buffer, dumped
through the scheduler's eval callback on a real ubatch). Compute within 10% of llama.cpp's at every setting below.
"""

import pytest

from oomkit.model.gguf_file import read_gguf_spec
from tests import ggufs
from tests import gt_compare as g
from tests.groundtruth import synth
from tests.groundtruth.synth import _blk, _embeddings, _layers, _Meta

needs_llama_cpp = pytest.mark.skipif(not g.llamacpp_run.available(), reason="llama-cpp-python not installed")

BASE = next(g.settings_grid())  # -c 4096, f16 K/V, FA on, 1 sequence, -ub 512


def qwen35moe_397b(n_layers: int | None = None) -> synth.SynthModel:
    """Qwen3.5-397B-A17B (qwen35moe: gated delta net + full attention, MoE in every layer): hidden 4096, 60
    layers, full attention every 4th (32 heads / 2 KV heads of 256), linear attention 16 key heads / 64 value
    heads of 128, conv kernel 4, 512 experts (10 used, 1024 each) and one shared expert of 1024 with its sigmoid
    gate, vocab 248320 (the catalog entry qwen3.5-397b-a17b; the MTP layer left out). Tensor names as
    llama.cpp@0c1e57098 src/models/qwen35moe.cpp loads them (the GDN block as tests/groundtruth/synth.py
    qwen35_27b writes it)."""
    arch, n_embd, n_head, n_kv, hd, n_vocab = "qwen35moe", 4096, 32, 2, 256, 248320
    d_conv, k_heads, v_heads, k_dim, v_dim, interval = 4, 16, 64, 128, 128, 4
    n_exp, n_used, n_ff_exp, n_ff_sh = 512, 10, 1024, 1024
    nl = _layers(n_layers, 60)
    md = _Meta(arch).base(ctx=262144, n_embd=n_embd, n_layers=nl, n_ff=0, n_head=n_head, n_head_kv=n_kv,
                          rms_eps=1e-6, rope_base=10000000.0, n_vocab=n_vocab)
    synth._qwen35_meta(md, hd, d_conv, k_heads, v_heads, k_dim, v_dim, interval)
    md.u32("expert_count", n_exp).u32("expert_used_count", n_used).u32("expert_feed_forward_length", n_ff_exp)
    md.u32("expert_shared_feed_forward_length", n_ff_sh)
    ts = _embeddings(n_embd, n_vocab, tied=False)
    for i in range(nl):
        if (i + 1) % interval != 0:
            ts += synth._gdn_layer(i, n_embd, d_conv, k_heads, v_heads, k_dim, v_dim)
        else:
            ts += synth._attn_gqa(i, n_embd, 2 * n_head * hd, n_kv * hd, qk_norm_dim=hd, out_in=n_head * hd)
        ts += [_blk(i, "post_attention_norm.weight", n_embd)] + synth._ffn_moe(i, n_embd, n_ff_exp, n_exp)
        ts += [_blk(i, "ffn_gate_inp_shexp.weight", n_embd), _blk(i, "ffn_gate_shexp.weight", n_embd, n_ff_sh),
               _blk(i, "ffn_down_shexp.weight", n_ff_sh, n_embd), _blk(i, "ffn_up_shexp.weight", n_embd, n_ff_sh)]
    return synth.SynthModel("qwen3.5-397b-a17b", arch, "catalog qwen3.5-397b-a17b", n_vocab, nl, tuple(md.items),
                            tuple(ts), tied_embeddings=False)


def _within_ten_percent(label, path, spec, grid: list[dict]) -> None:
    """Every row of `grid` loads in llama.cpp, and oomkit's compute buffer is within 10% of the one it prints."""
    for s, m in zip(grid, g.llamacpp_run.measure_many(path, grid), strict=True):
        assert m["ok"], f"{label} {s}: {m['error']}"
        e, o = g.engine_figures(m), g.oomkit_figures(spec, s)
        ratio = o["compute_mib"] / e["compute_mib"]
        assert 0.9 <= ratio <= 1.1, f"{label} {s}: compute oomkit {o['compute_mib']:.2f} llama.cpp {e['compute_mib']:.2f}"


# dry runs (no_alloc: buffers sized, not allocated; the compute figure is the allocated one, tests/groundtruth)
DRY = dict(BASE, no_alloc=True, use_mmap=False)
GRID = [
    dict(DRY, n_ctx=4096),  # masks smaller than one hidden-state row block (ernie, hunyuan, glm4moe)
    dict(DRY, n_ctx=65536),
    dict(DRY, n_ctx=16384, n_ubatch=256),
    dict(DRY, n_ctx=16384, n_ubatch=1024),
    dict(DRY, n_ctx=16384, n_ubatch=2048),
    dict(DRY, n_ctx=16384, n_ubatch=1024, flash_attn="off"),
    dict(DRY, n_ctx=4096, flash_attn="off"),
    dict(DRY, n_ctx=32768, n_seq_max=2, kv_unified=True),
    dict(DRY, n_ctx=32768, n_seq_max=2),
    dict(DRY, n_ctx=65536, n_seq_max=8),  # 8 streams of 8192 cells, 64 tokens each
    dict(DRY, n_ctx=131072, n_ubatch=2048, n_seq_max=4, kv_unified=True),
]

# (builder, layers written); worst compute ratio measured over GRID noted per model
MODELS = {
    "ernie4_5-moe": (ggufs.ernie45_21b_a3b, 3),  # 0.965 (-fa off, -ub 1024); 1.000 with flash attention
    "hunyuan-moe": (ggufs.hunyuan_a13b, 2),  # 0.951 (-fa off); 1.000 with flash attention
    "deci": (ggufs.deci_variable, 4),  # 0.939 at -np 2 (two streams: closed form); replayed 0.958 to 1.060
    "glm4moe": (ggufs.glm45_air, 3),  # 0.991 (-fa off); 1.000 with flash attention
    "llama4": (ggufs.llama4_scout, 4),  # 0.903 (-c 65536: two masks, chunked and full), 1.047 high
}


@needs_llama_cpp
@pytest.mark.parametrize("arch", list(MODELS))
def test_compute_within_ten_percent(arch):
    build, n_layers = MODELS[arch]
    path = synth.synth_path(build(n_layers=n_layers), "q4_0")
    spec = read_gguf_spec(path)
    assert spec.architecture == arch
    _within_ten_percent(arch, path, spec, GRID)


def test_feed_forward_rows_as_ggml_alloc_places_them():
    """The phases themselves, against buffers llama.cpp printed for the same files (ernie4_5-moe 3 layers,
    deci 4 layers; -c 8192, -ub 512, FA on, f16 cache, one stream: 252.38 and 124.01 MiB). ERNIE: the logits
    (103424 x 512 floats, 202 MiB) sit above 4 + 6 rows of 2560 x 512 floats and the router's three 64-wide
    score tensors; deci: its last layer's 14336-wide gate, up and SwiGLU product above five 4096-wide rows."""
    from oomkit.engines.llamacpp.compute import feed_forward_phases

    mib = 1 << 20
    ernie = read_gguf_spec(synth.synth_path(ggufs.ernie45_21b_a3b(n_layers=3), "q4_0"))
    masks = 8192 * 512 * 2
    _, out = feed_forward_phases(ernie, 512, masks, 512, 9999)
    assert round(out / mib, 2) == 252.38
    deci = read_gguf_spec(synth.synth_path(ggufs.deci_variable(n_layers=4), "q4_0"))
    work, _ = feed_forward_phases(deci, 512, masks, 512, 9999)
    assert round(work / mib, 2) == 124.0  # llama.cpp: 124.01 (its alignment padding)
    # builds before the SWIGLU op: two 14336-wide tensors
    old, _ = feed_forward_phases(deci, 512, masks, 512, 5000)
    assert work - old == 14336 * 512 * 4


# Qwen3.5-397B-A17B (gated delta net + MoE with a shared expert): the per-device workspace of the 8 x RTX 3090
# log (tests/test_llamacpp_split.py) is the MoE block at -ub 1024: the 10 used experts' down-projection rows
# (10 x 4096 floats a token, 160 MiB) do not fit the freed gate and up block (2 x 10 x 1024) and go above the
# SwiGLU product. llama-server reserves one logits row there (n_outputs_max = n_seq_max, PR #23861), so the
# library is run with n_outputs_max = 1 below, as llama-server sets it.
_DRY_RUNNER = r'''
import ctypes, json, re, sys
from llama_cpp import llama_cpp as L
path, grid = sys.argv[1], json.loads(sys.argv[2])
lines = []
@L.llama_log_callback
def _log(level, text, ud):
    t = text.decode("utf-8", "replace")
    if "compute buffer size" in t:
        lines.append(t)
L.llama_log_set(_log, ctypes.c_void_p(0))
L.llama_backend_init()
mp = L.llama_model_default_params()
mp.n_gpu_layers, mp.use_extra_bufts, mp.no_alloc, mp.load_mode = 0, False, True, 0
model = L.llama_model_load_from_file(path.encode(), mp)
for s in grid:
    lines.clear()
    cp = L.llama_context_default_params()
    cp.n_ctx, cp.n_ubatch, cp.n_batch, cp.n_seq_max, cp.kv_unified = s["n_ctx"], s["n_ubatch"], 2048, s["np"], True
    cp.flash_attn_type, cp.type_k, cp.type_v = s["fa"], s["type"], s["type"]
    cp.n_outputs_max, cp.n_threads = s["n_outputs_max"], 1
    cp.swa_full = False  # common_params' default (the C API's is true)
    ctx = L.llama_init_from_model(model, cp)
    m = re.search(r"CPU compute buffer size = *([0-9.]+) MiB", "".join(lines))
    print("@@" + json.dumps(float(m.group(1)) if m else None), flush=True)
    if ctx:
        L.llama_free(ctx)
'''


def _dry_compute_mib(path, grid) -> list[float | None]:
    import json
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _DRY_RUNNER, str(path), json.dumps(grid)], capture_output=True,
                         timeout=600, stdin=subprocess.DEVNULL, text=True)
    return [json.loads(ln[2:]) for ln in out.stdout.splitlines() if ln.startswith("@@")]


# llama-server's few logits rows (n_outputs_max = n_seq_max): the feed-forward workspace is the peak for dense,
# MoE and sliding-window models alike. llama.cpp's dry runs (f16 cache, -ub 512, unified KV) print e.g. 148.01 MiB
# for Llama 3.1 8B at -c 32768 -np 4 (oomkit 148; the model before the feed-forward phases: 76), 250.02 for Gemma 3
# 12B and 221.14 for gpt-oss-20b at -c 131072 (oomkit 250.00 / 221.12: the attention output's block below the FFN
# input as wide as n_head x head_dim_v; 249.50 / 218.75 with one row); every row within 0.02 MiB (Qwen3-30B-A3B at
# -c 8192 was 0.958).
FEW_OUTPUTS = [dict(n_ctx=32768, n_outputs_max=4, fa=1, np=4), dict(n_ctx=8192, n_outputs_max=1, fa=1, np=1),
               dict(n_ctx=32768, n_outputs_max=4, fa=0, np=4), dict(n_ctx=131072, n_outputs_max=1, fa=1, np=1)]


def _few_outputs_within_ten_percent(path) -> None:
    """llama-server's few logits rows (FEW_OUTPUTS) on this file: oomkit's CPU compute buffer within 10% of llama.cpp's."""
    import oomkit

    spec = read_gguf_spec(path)
    grid = [dict(s, n_ubatch=512, type=1) for s in FEW_OUTPUTS]
    real = _dry_compute_mib(path, grid)
    assert len(real) == len(grid) and all(real), real
    for s, r in zip(FEW_OUTPUTS, real, strict=True):
        e = oomkit.estimate(spec, "llama.cpp", cpu_only=True, find_max_context=False, program="llama-server",
                            n_ctx=s["n_ctx"], n_batch=2048, n_ubatch=512, n_parallel=s["np"], kv_unified=True,
                            flash_attn="on" if s["fa"] else "off", mmap=False, repack=False, fit=False)
        got = e.engine_view["compute_buffer_bytes"]["CPU"] / (1 << 20)
        assert 0.9 <= got / r <= 1.1, (s, got, r)


@needs_llama_cpp
@pytest.mark.parametrize("key,n_layers", [("llama-3.1-8b", 4), ("qwen3-8b", 4), ("gemma-3-12b", 12),
                                          ("qwen3-30b-a3b", 4), ("gpt-oss-20b", 4)])
def test_few_logits_rows_leave_the_feed_forward_workspace(key, n_layers):
    _few_outputs_within_ten_percent(g.synth_file(key, n_layers))


QWEN35_SERVER = [  # (n_ctx, n_ubatch, n_outputs_max): 0 = the library default, every token an output
    (131072, 1024, 1), (32768, 1024, 1), (8192, 512, 1), (32768, 512, 1),
    (131072, 1024, 0), (32768, 512, 0), (8192, 512, 0),
]


@needs_llama_cpp
@pytest.mark.parametrize("n_layers", [4, None], ids=["4-layers", "full-depth"])
def test_qwen35moe_gdn_moe_workspace(n_layers):
    """llama.cpp's dry runs: 600.30 / 408.30 / 180.28 MiB with one logits row, and with every token an output the
    logits three rows up (1018.00 at -c 131072 -ub 1024: before the hybrid rule in compute_phases weighed the freed
    mask block oomkit added the 256 MiB masks whole, 1274, +25%). Replayed node by node (compute.gdn_cpu_bytes) oomkit
    gives every row to the 0.01 MiB (the closed forms: 600 / 408 / 180, 517.00 for 517.29)."""
    import oomkit

    path = synth.synth_path(qwen35moe_397b(n_layers=n_layers), "q4_0")  # 3 GDN : 1 full attention
    spec = read_gguf_spec(path)
    grid = [dict(n_ctx=c, n_ubatch=ub, n_outputs_max=o, fa=1, np=1, type=8) for c, ub, o in QWEN35_SERVER]  # q8_0
    real = _dry_compute_mib(path, grid)
    assert len(real) == len(grid) and all(real), real
    for (c, ub, o), r in zip(QWEN35_SERVER, real, strict=True):
        e = oomkit.estimate(spec, "llama.cpp", cpu_only=True, find_max_context=False,
                            program="llama-server" if o else "llama-cpp-python", n_ctx=c, n_batch=2048,
                            n_ubatch=ub, n_parallel=1, kv_unified=True, cache_type_k="q8_0", cache_type_v="q8_0",
                            flash_attn="on", mmap=False, repack=False, fit=False)
        got = e.engine_view["compute_buffer_bytes"]["CPU"] / (1 << 20)
        assert round(got, 2) == r, (c, ub, o, got, r)


# Qwen3.5-27B (hybrid, dense FFN) with every token an output, 16 layers (the placement is the same at 4, 8, 16
# and 64): llama.cpp prints 519.02 / 521.02 / 515.00 / 569.02 / 633.02 / 761.02 / 1138.04 MiB below; oomkit equal on
# every row (compute.gdn_cpu_bytes; the closed forms were 0.02 MiB under and 537 at -c 32768, +4.3%)
HYBRID_DENSE = [dict(DRY, n_ctx=c, n_ubatch=ub, kv_unified=True)
                for c, ub in ((4096, 512), (16384, 512), (32768, 512), (65536, 512), (131072, 512), (262144, 512),
                              (65536, 1024))]


@needs_llama_cpp
def test_qwen35_dense_hybrid_logits_above_the_mask_block():
    path = g.synth_file("qwen3.5-27b", 16)
    spec = read_gguf_spec(path)
    for s, m in zip(HYBRID_DENSE, g.llamacpp_run.measure_many(path, HYBRID_DENSE), strict=True):
        assert m["ok"], m["error"]
        e, o = g.engine_figures(m), g.oomkit_figures(spec, s)
        assert round(o["compute_mib"], 2) == e["compute_mib"], (s["n_ctx"], o["compute_mib"], e["compute_mib"])


# The graphs fixed by their own structure (compute.py: _dense_ffn_rows, NO_CACHE_GRAPHS, POST_NORM_ENCODERS,
# LM_HEAD_SCALED, chameleon's two copies of the logits and the shared expert's rows), held away from the -ub 512
# grid of tests/test_llamacpp_archs.py: -ub 1024 and 256, flash attention off at -ub 2048 (the encoders' T x T
# scores). Sweep shapes (tests/ggufs.py: hidden 4096, 32 heads, FFN 11008 or a fused 22016 gate-up; minicpm3's
# own). Measured worst: gpt2, starcoder and gptneox 0.908 at -ub 1024 (the logits three rows up, not two),
# qwen2moe 1.079, plamo3 1.076, bert and jina-bert-v2 1.054; the other encoders, llama-embed, dream, phi2, falcon,
# minicpm3 and chameleon exact.
UBATCH_GRID = [dict(BASE, n_ctx=4096, n_ubatch=1024, n_batch=1024),
               dict(BASE, n_ctx=4096, n_ubatch=2048, n_batch=2048, flash_attn="off"),
               dict(BASE, n_ctx=16384, n_ubatch=256, n_batch=256)]


@needs_llama_cpp
@pytest.mark.parametrize("arch", ["bert", "jina-bert-v2", "nomic-bert", "nomic-bert-moe", "modern-bert", "eurobert",
                                  "gemma-embedding", "llama-embed", "dream", "glm4", "chatglm", "phi2", "qwen2moe",
                                  "plamo3", "minicpm3", "chameleon", "falcon", "gpt2", "gptneox", "starcoder"])
def test_graph_families_within_ten_percent_at_other_ubatch_sizes(arch):
    path = synth.synth_path(ggufs.sweep_model(arch), "f16")
    spec = read_gguf_spec(path)
    assert spec.architecture == arch
    _within_ten_percent(arch, path, spec, UBATCH_GRID)


# Recurrent layers (compute.py recurrent_phase), beyond the five-row grid of tests/test_llamacpp_archs.py: ubatch
# sizes 256 to 2048 and 1 to 8 sequences (the reserve graph splits the ubatch into n_seq_max sequences, each with its
# gathered conv and SSM / WKV states). Measured today: 0.999-1.000 everywhere except rwkv7 at -ub 256 x 2 (76.06 vs
# 72.13 MiB, 1.055) and plamo2 at -ub 2048 x 8 (480.75 vs 512.80 MiB, 0.938: its scan output's placement beside
# the copied in-projection is modelled by size only).
RECURRENT_GRID = [dict(BASE, n_ctx=8192, n_ubatch=1024, n_batch=1024),
                  dict(BASE, n_ctx=8192, n_ubatch=256, n_batch=256, n_seq_max=2),
                  dict(BASE, n_ctx=16384, n_ubatch=2048, n_batch=2048, n_seq_max=8, kv_unified=True)]


@needs_llama_cpp
@pytest.mark.parametrize("arch", ["mamba", "jamba", "nemotron_h", "falcon-h1", "plamo2", "rwkv6", "rwkv6qwen2", "rwkv7",
                                  "arwkv7"])
def test_recurrent_layers_within_ten_percent_at_other_ubatch_sizes(arch):
    path = synth.synth_path(ggufs.ADDED_BUILDERS[arch](), "f16")
    spec = read_gguf_spec(path)
    assert spec.architecture == arch
    _within_ten_percent(arch, path, spec, RECURRENT_GRID)


def test_mamba_scan_live_set_as_ggml_alloc_places_it():
    """The Mamba-1 layer's peak, node by node as ggml-alloc placed it in llama.cpp's CPU buffer (the generic
    mamba file: n_embd 4096, d_inner 8192, d_state 16, d_conv 4; -c 8192, -ub 512, one sequence; llama.cpp prints
    104.69 MiB): three 8 MiB hidden-state row blocks and the gathered conv state (3 x 8192 floats), then the
    in-projection xz (32 MiB), the conv input concat (515 x 8192 floats, 16.09 MiB), the conv output (16 MiB) and
    the scan output (8192 x 512 + 16 x 8192 floats, 16.50 MiB) at the top."""
    from oomkit.engines.llamacpp.compute import recurrent_phase

    spec = read_gguf_spec(synth.synth_path(ggufs.ADDED_BUILDERS["mamba"](), "f16"))
    mib = 1 << 20
    assert round(recurrent_phase(spec, 512, 1, 0) / mib, 2) == 104.69
    # four sequences of 128 tokens: four gathered conv and SSM states, a 131-column concat per sequence (106.75 printed)
    assert round(recurrent_phase(spec, 512, 4, 0) / mib, 2) == 106.75


# MiniMax-M3's sparse attention with flash attention and one sequence (compute.py msa_phase): the generic file
# (tests/ggufs.py RECORDED["minimax-m3"], 8 KV heads = 8 index heads) and the same file with 4 and 16, from 4K to
# 32K cells, -ub 256 and 512, f16 and q8_0 caches. Measured today: 0.931 / 0.955 / 0.973 at 4K (4 / 8 / 16 heads: 116.00
# vs 124.54, 180.00 vs 188.54, 308.00 vs 316.54 MiB), 0.997-1.000 elsewhere. Split streams (-np 2, 4 without --kv-unified): tests/test_llamacpp_compute_offgrid.py.
MSA_GRID = [dict(BASE, n_ctx=4096), dict(BASE, n_ctx=8192), dict(BASE, n_ctx=32768),
            dict(BASE, n_ctx=8192, type_k="q8_0", type_v="q8_0"), dict(BASE, n_ctx=8192, n_ubatch=256, n_batch=256),
            dict(BASE, n_ctx=16384, n_seq_max=4, kv_unified=True)]


@needs_llama_cpp
@pytest.mark.parametrize("heads", [4, 8, 16])
def test_minimax_m3_sparse_attention_masks(heads, monkeypatch):
    arch, nl, md, patterns = ggufs.RECORDED["minimax-m3"]
    md = [(k, heads if k.endswith(("indexer.head_count", "attention.head_count_kv")) else v, t) for k, v, t in md]
    patterns = dict(patterns, **{"blk.{i}.indexer.q_proj.weight": (4096, heads * 64),
                                 "blk.{i}.attn_k.weight": (4096, heads * 128), "blk.{i}.attn_v.weight": (4096, heads * 128)})
    monkeypatch.setitem(ggufs.RECORDED, f"minimax-m3-{heads}kv", (arch, nl, md, patterns))
    path = synth.synth_path(ggufs.recorded_model(f"minimax-m3-{heads}kv"), "f16")
    spec = read_gguf_spec(path)
    assert spec.layers[0].attention.index_n_heads == heads
    _within_ten_percent(heads, path, spec, MSA_GRID)


# The recurrent layers as llama-server reserves them (n_outputs_max = n_seq_max: one to four logits rows), where
# the layer's state op, not the logits, is the peak. llama.cpp's dry runs (FEW_OUTPUTS) print e.g. 104.69 MiB for
# the mamba file and 69.78 for Mamba-2 2.7B's real dims (4 layers) at -c 8192 -np 1; oomkit 104.69 and 69.28.
# Measured today: 0.993-1.007 for every file but rwkv7 at -np 4 (152.12 vs 144.25 MiB, 1.055); before
# recurrent_phase 0.16-0.23 for the pure recurrent files (the two hidden-state rows of a one-row logits phase).
# The gated delta nets (Qwen3.5-27B's GDN dims with a small MoE, tests/ggufs.py qwen_hybrid_moe): 98.25 / 113.25 MiB
# printed for qwen35moe / qwen3next at -c 8192 -np 1, 152.52 / 152.51 at -np 4, 1670.04 there without flash
# attention, 218.25 / 233.25 at 128K: oomkit equal on all (compute.gdn_cpu_bytes; the closed forms 98.23 / 113.23,
# 146.94 at -np 4, 1658.00 without flash attention; 76.00 before recurrent_phase).
@needs_llama_cpp
@pytest.mark.parametrize("arch", ["mamba", "nemotron_h", "falcon-h1", "plamo2", "rwkv6", "rwkv7", "mamba2-2.7b",
                                  "qwen3next", "qwen35moe"])
def test_recurrent_layers_with_few_logits_rows(arch):
    path = g.synth_file(arch, 4) if arch in synth.MODELS else synth.synth_path(ggufs.ADDED_BUILDERS[arch](), "f16")
    _few_outputs_within_ten_percent(path)


# The newer layouts' own phases (compute.py dsa_score_phase, hc_gdn_conv_phase, hc_attention_phase) away from the
# -ub 512 grid of tests/test_llamacpp_archs.py: llama.cpp prints (MiB) for dots3note 162.08 at 21760 cells (the
# indexer's scores still in the block freed below Qcur), 205.58 at 22016 (above it), 375.58 at 64K, 631.58 at 128K,
# 123.70 at 32K -ub 256; qwen4exp 344.24 at 256K, 76.20 at 64K -ub 256, 1154.14 at 32K without flash attention;
# deepseek4 723.14 at 32K without flash attention, 160.33 at 8K -ub 256 without it, 185.84 at 64K. oomkit 0.95-1.01
# on every row (before these phases: dots3note 0.58-0.96, qwen4exp 1.02-1.57, deepseek4 0.33-1.01).
NEW_LAYOUT_ROWS = [
    ("dots3note", dict(n_ctx=21760)), ("dots3note", dict(n_ctx=22016)), ("dots3note", dict(n_ctx=65536)),
    ("dots3note", dict(n_ctx=131072)), ("dots3note", dict(n_ctx=32768, n_ubatch=256)),
    ("qwen4exp", dict(n_ctx=262144)), ("qwen4exp", dict(n_ctx=65536, n_ubatch=256)),
    ("qwen4exp", dict(n_ctx=32768, flash_attn="off")),
    ("deepseek4", dict(n_ctx=32768, flash_attn="off")), ("deepseek4", dict(n_ctx=8192, n_ubatch=256, flash_attn="off")),
    ("deepseek4", dict(n_ctx=65536)),
]


@needs_llama_cpp
@pytest.mark.parametrize("arch", ["dots3note", "qwen4exp", "deepseek4"])
def test_indexer_and_hyper_connection_layouts_within_ten_percent(arch):
    path = synth.synth_path(ggufs.ADDED_BUILDERS[arch](), ggufs.ADDED_QUANT.get(arch, "q4_0"))
    spec = read_gguf_spec(path)
    grid = [dict(BASE, **over) for a, over in NEW_LAYOUT_ROWS if a == arch]
    _within_ten_percent(arch, path, spec, grid)
