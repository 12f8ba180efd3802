"""GLM-4.5-Air and GLM-4.5 (glm4moe: dense leading layers, then MoE layers with one shared expert, and a next-n
block appended) held to llama.cpp itself: synthetic GGUFs with the published checkpoints' shapes (tests/ggufs.py
glm45_air: 2 and 3 trunk layers and the full 46; glm45 below: 4 and 5 trunk layers, 3 of them dense; each + the MTP
block) loaded by the llama.cpp llama-cpp-python 0.3.36 wraps (ggml-org/llama.cpp@0c1e57098) on the CPU.

- Model buffers exact, with and without the next-n block (load_mtp, oomkit's --spec-type draft-mtp) and with and
  without the repacked CPU buffer (use_extra_bufts, oomkit's repack): with repacking the mapped buffer is smaller
  (2197.95 MiB against 2207.23 without on the 2-trunk file, the repacked expert and attention tensors leaving the
  mapping's ends), so the two are compared under the same setting.
- The compute buffer within 10% as llama-server reserves it (n_outputs_max = n_seq_max, one logits row per
  slot) and with every token an output. The last layer's FFN runs on the output rows alone (the graph gathers
  them before it, src/models/glm4-moe.cpp), so on the 2-trunk file the MoE block is no peak: llama.cpp prints
  94.76 MiB at -c 4096 with one row (the dense first layer's FFN, its gate in the attention output's freed block:
  compute.GATE_IN_ATTN_OUT), where oomkit said 170.00 (1.79) before. With flash attention the whole graph is
  replayed through ggml-alloc (compute_graphs.glm4moe_graph): llama.cpp's printed MiB on every row.
- The MTP context's compute buffer within 10% (compute.mtp_moe_block).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

import oomkit
from oomkit.model.gguf_file import read_gguf_spec
from tests import ggufs
from tests.groundtruth import llamacpp_run, synth
from tests.groundtruth.synth import (
    SynthModel,
    _attn_gqa,
    _blk,
    _embeddings,
    _ffn_dense,
    _ffn_moe,
    _layers,
    _Meta,
)
from tests.test_llamacpp_compute import _dry_compute_mib
from tests.test_llamacpp_mtp_draft import measure_mtp, predicted

MiB = 1 << 20


def glm45(n_layers: int | None = None) -> SynthModel:
    """GLM-4.5 (355B-A32B): the catalog's zai-org/GLM-4.5 config (hidden 5120, 92 layers + 1 MTP layer, 96 heads / 8
    KV heads of 128, intermediate 12288, 160 routed experts of 1536, 8 used, 1 shared, first_k_dense_replace 3, vocab
    151552) with GLM-4.5's q/k norms (llama.cpp's optional attn_q_norm / attn_k_norm for the 355B variant); written as
    tests/ggufs.py glm45_air writes GLM-4.5-Air. `n_layers` counts the trunk; the MTP block is appended."""
    arch, n_embd, n_head, n_kv, hd, n_vocab = "glm4moe", 5120, 96, 8, 128, 151552
    n_exp, n_used, n_ff_exp, n_ff, n_dense = 160, 8, 1536, 12288, 3
    nl = _layers(n_layers, 92) + 1
    md = _Meta(arch).base(ctx=131072, n_embd=n_embd, n_layers=nl, n_ff=n_ff, n_head=n_head, n_head_kv=n_kv,
                          rms_eps=1e-5, rope_base=1000000.0, n_vocab=n_vocab)
    md.u32("rope.dimension_count", hd // 2).u32("attention.key_length", hd).u32("attention.value_length", hd)
    md.u32("expert_count", n_exp).u32("expert_used_count", n_used).u32("expert_feed_forward_length", n_ff_exp)
    md.u32("expert_shared_count", 1).u32("leading_dense_block_count", n_dense).f32("expert_weights_scale", 2.5)
    md.bool("expert_weights_norm", True).u32("expert_gating_func", 2).u32("nextn_predict_layers", 1)
    ts = _embeddings(n_embd, n_vocab, tied=False)
    for i in range(nl):
        ts += _attn_gqa(i, n_embd, n_head * hd, n_kv * hd, bias=True, qk_norm_dim=hd)
        ts += [_blk(i, "post_attention_norm.weight", n_embd)]
        if i < n_dense:
            ts += _ffn_dense(i, n_embd, n_ff, norm=False)
        else:
            ts += _ffn_moe(i, n_embd, n_ff_exp, n_exp) + [_blk(i, "exp_probs_b.bias", n_exp)]
            ts += [_blk(i, "ffn_gate_shexp.weight", n_embd, n_ff_exp),
                   _blk(i, "ffn_down_shexp.weight", n_ff_exp, n_embd), _blk(i, "ffn_up_shexp.weight", n_embd, n_ff_exp)]
        if i == nl - 1:
            ts += [_blk(i, "nextn.eh_proj.weight", 2 * n_embd, n_embd), _blk(i, "nextn.enorm.weight", n_embd),
                   _blk(i, "nextn.hnorm.weight", n_embd), _blk(i, "nextn.shared_head_norm.weight", n_embd)]
    return SynthModel("glm-4.5", arch, "catalog glm-4.5 (zai-org/GLM-4.5)", n_vocab, nl, tuple(md.items), tuple(ts),
                      tied_embeddings=False)

needs_llama_cpp = pytest.mark.skipif(not llamacpp_run.available(), reason="llama-cpp-python not installed")

_LOADER = r'''
import ctypes, json, os, sys
import llama_cpp
path, runs = sys.argv[1], json.loads(sys.argv[2])
@llama_cpp.llama_log_callback
def _log(level, text, ud):
    if b"model buffer size" in text:
        os.write(2, text)
llama_cpp.llama_log_set(_log, ctypes.c_void_p(0))
llama_cpp.llama_backend_init()
for i, (mtp, extra) in enumerate(runs):
    os.write(2, f"@@RUN {i}\n".encode())
    mp = llama_cpp.llama_model_default_params()
    mp.n_gpu_layers, mp.use_extra_bufts, mp.load_mtp = 0, extra, mtp
    model = llama_cpp.llama_model_load_from_file(path.encode(), mp)
    assert model
    llama_cpp.llama_model_free(model)
'''
RUNS = [(False, False), (True, False), (False, True), (True, True)]  # (load_mtp, use_extra_bufts)


def _model_buffers(path) -> list[dict[str, float]]:
    """llama.cpp's model buffer lines (MiB as printed) per RUNS entry."""
    proc = subprocess.run([sys.executable, "-c", _LOADER, str(path), json.dumps(RUNS)], capture_output=True, text=True,
                          timeout=600, stdin=subprocess.DEVNULL)
    parts = proc.stderr.split("@@RUN ")[1:]
    assert len(parts) == len(RUNS), proc.stderr[-2000:]
    return [{name: float(v) for name, v in re.findall(r"(\S+) model buffer size\s*=\s*([0-9.]+) MiB", p)}
            for p in parts]


@needs_llama_cpp
@pytest.mark.parametrize("trunk", [2, 3])
def test_model_buffers_equal_llama_cpps(trunk):
    path = synth.synth_path(ggufs.glm45_air(trunk), "q4_0")
    kw = dict(devices=(), find_max_context=False, fit=False, n_ctx=4096, n_parallel=1)
    for (mtp, extra), real in zip(RUNS, _model_buffers(path), strict=True):
        est = oomkit.estimate(str(path), "llama.cpp", spec_type=("draft-mtp",) if mtp else (), repack=extra, **kw)
        got = {k: round(v / MiB, 2) for k, v in est.engine_view["model_buffer_bytes"].items()}
        assert got == real, (trunk, mtp, extra, got, real)


# (n_ctx, n_parallel, flash attention, n_ubatch, K and V type, n_outputs_max): n_outputs_max = n_parallel is
# llama-server's (reserved_outputs), 0 the library default (every token an output)
GRID = [(4096, 1, 1, 512, "f16", 1), (8192, 1, 1, 512, "f16", 1), (32768, 1, 1, 512, "f16", 1),
        (32768, 4, 1, 512, "f16", 4), (32768, 4, 0, 512, "f16", 4), (131072, 1, 1, 512, "f16", 1),
        (16384, 2, 1, 512, "q8_0", 2), (32768, 1, 1, 1024, "f16", 1),
        (8192, 1, 1, 512, "f16", 0), (32768, 1, 1, 512, "f16", 0), (4096, 1, 1, 512, "f16", 0),
        (131072, 1, 1, 512, "f16", 0), (32768, 4, 1, 512, "f16", 0), (16384, 1, 1, 512, "q8_0", 0),
        (32768, 1, 1, 1024, "f16", 0), (65536, 1, 1, 256, "f16", 0)]
_TYPE_IDS = {"f16": 1, "q8_0": 8}


FILES = {"air-2": lambda: ggufs.glm45_air(2), "air-3": lambda: ggufs.glm45_air(3), "air-full": ggufs.glm45_air,
         "glm45-4": lambda: glm45(4), "glm45-5": lambda: glm45(5)}


def _ratios(key, grid) -> list[tuple[float, float]]:
    """(oomkit, llama.cpp) compute MiB per row of `grid` on FILES[key]."""
    path = synth.synth_path(FILES[key](), "q4_0")
    spec = read_gguf_spec(path)
    real = _dry_compute_mib(path, [dict(n_ctx=c, np=np_, fa=fa, n_ubatch=ub, type=_TYPE_IDS[t], n_outputs_max=o)
                                   for c, np_, fa, ub, t, o in grid])
    assert len(real) == len(grid) and all(real), real
    out = []
    for (c, np_, fa, ub, t, o), r in zip(grid, real, strict=True):
        e = oomkit.estimate(spec, "llama.cpp", cpu_only=True, find_max_context=False,
                            program="llama-server" if o else "llama-cpp-python", n_ctx=c, n_batch=2048, n_ubatch=ub,
                            n_parallel=np_, kv_unified=True, cache_type_k=t, cache_type_v=t,
                            flash_attn="on" if fa else "off", mmap=False, repack=False, fit=False)
        out.append((e.engine_view["compute_buffer_bytes"]["CPU"] / MiB, r))
    return out


@needs_llama_cpp
@pytest.mark.parametrize("key", sorted(FILES))
def test_compute_within_ten_percent(key):
    """llama.cpp's dry runs (unified cache). With flash attention oomkit replays the whole graph through ggml-alloc
    (compute_graphs.glm4moe_graph) and prints llama.cpp's MiB on every row. With one logits row per slot on
    GLM-4.5-Air's 2-trunk file: 94.76 / 98.76 / 122.76 / 218.76 MiB at 4K / 8K / 32K / 128K (170.00 / 170.00 / 170.00
    / 224.12 before the dense layer's FFN was placed); GLM-4.5's 4-trunk file 106.01 / 134.01 at 4K / 32K. Every
    token an output: the 2-trunk file's logits sit above wherever its MoE layer's residual lands, 384.01 / 450.75 MiB
    at 32K / 128K and 768.03 at 32K -ub 1024 (the closed form's logits + 4 rows: 328.00 / 328.00 / 656.00, 0.854 /
    0.728 / 0.854); GLM-4.5's 4-trunk file 344.01 / 340.01 at 8K / 4K (326.00, 0.948 / 0.959) and 326.00 at 32K
    (336.00, 1.031); GLM-4.5-Air at full depth 196.01 at 64K -ub 256 (164.00, 0.837). Without flash attention the
    closed forms hold (within 10%)."""
    for row, (got, r) in zip(GRID, _ratios(key, GRID), strict=True):
        assert 0.9 <= got / r <= 1.1, (key, row, round(got, 2), r)
        if row[2]:
            # to the printed MiB (two decimals)
            assert abs(got - r) <= 0.005, (key, row, round(got, 3), r)


# The MTP context (--spec-type draft-mtp: the next-n block alone at the target's n_ctx, one output row per sequence,
# as tests/test_llamacpp_mtp_draft.py creates it). Measured on the 2-trunk file: 148.01 / 146.76 / 148.01 / 158.01 /
# 200.01 MiB at 2K / 8K / 32K / 64K / 128K (oomkit 148.00 / 146.75 / 148.00 / 158.00 / 204.00, the last the attention
# phase); 170.00 / 170.00 / 170.00 / 202.00 / 204.00 before compute.mtp_moe_block
MTP_GRID = [dict(n_ctx=2048, n_seq=1, kvu=True, fa=1, type="f16"), dict(n_ctx=8192, n_seq=1, kvu=True, fa=1, type="f16"),
            dict(n_ctx=32768, n_seq=1, kvu=True, fa=1, type="f16"), dict(n_ctx=65536, n_seq=1, kvu=True, fa=1, type="f16"),
            dict(n_ctx=131072, n_seq=1, kvu=True, fa=1, type="f16"),
            dict(n_ctx=32768, n_seq=4, kvu=True, fa=1, type="q8_0"), dict(n_ctx=16384, n_seq=4, kvu=False, fa=1, type="f16")]


@needs_llama_cpp
def test_mtp_context_compute_within_ten_percent():
    path = synth.synth_path(ggufs.glm45_air(2), "q4_0")
    _, rows = measure_mtp(path, MTP_GRID)
    for c, m in zip(MTP_GRID, rows, strict=True):
        got = predicted(path, c)["compute"]
        assert 0.9 <= got / m["compute"] <= 1.1, (c, round(got, 2), m["compute"])
