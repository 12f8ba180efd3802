"""sched_replay's scheduler (ggml_backend_sched_split_graph's passes) and graph_copy against llama.cpp's own: the
GGML_SCHED_DEBUG=2 dump of mamba2-2.7b's 4-layer file at -ngl 2 on the H200 (tests/fixtures/llamacpp_cuda/
h200_sched_debug.json.gz) gives every op's backend and every split's inputs; the same graph, rebuilt here from
src/models/mamba-base.cpp build_mamba2_layer and src/llama-graph.cpp build_rs, must be scheduled the same way, and
its CUDA0 buffer must be the one measured at -ngl 1 to 4 and fully offloaded (run 1 and the held-out run 2)."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

from oomkit.engines.llamacpp import sched_replay as sr

FIXTURES = Path(__file__).parent / "fixtures" / "llamacpp_cuda"
MiB = 1 << 20
F32 = 4
# mamba2-2.7b's 4-layer synthetic file: n_embd 2560, d_inner 5120, d_state 128, one group, 80 heads, d_conv 4
N_EMBD, N_VOCAB, D_INNER, D_STATE, N_GROUP, N_HEAD, D_CONV = 2560, 50288, 5120, 128, 1, 80, 4
SSM_IN, SSM_OUT = 15229440, 7372800  # the host layers' Q4_0 projections, as copied to the device


def mamba2_graph(host_layers: set[int], n_layer: int = 4, T: int = 512) -> sr.Graph:
    g = sr.Graph()
    head_dim, conv_dim = D_INNER // N_HEAD, D_INNER + 2 * N_GROUP * D_STATE
    d_in_proj = 2 * D_INNER + 2 * N_GROUP * D_STATE + N_HEAD
    n_r, n_s = (D_CONV - 1) * conv_dim, D_STATE * D_INNER

    def w(ne, il, size=-1):
        return g.weight(ne, sr.HOST if il in host_layers else sr.DEVICE, size if il in host_layers else -1)

    embd = g.expand(g.op("GET_ROWS", (N_EMBD, T), g.weight((N_EMBD, N_VOCAB), sr.HOST), g.input((T,))))
    s_copy = g.input((1,))
    s_main, s_extra = g.view(s_copy, (1,)), g.view(s_copy, (0,))
    out_ids = g.input((T,))
    inp = embd
    for il in range(n_layer):
        dev = sr.HOST if il in host_layers else sr.DEVICE
        cur = g.op("RMS_NORM", inp.ne, inp)
        cur = g.op("MUL", cur.ne, cur, w((N_EMBD,), il))
        r_l, s_l = g.cache((n_r,), dev, F32), g.cache((n_s,), dev, F32)

        def build_rs(s, size, rows_of):
            states = g.reshape(s, (size, 1))
            zero = g.view(states, (0,))
            g.expand(g.into("SCALE", zero, zero))
            rows = g.expand(rows_of(states))
            extra = g.op("GET_ROWS", (size, 0), states, s_extra)
            dst = g.view(s, (size, 0))
            g.expand(g.into("CPY", dst, extra, dst))
            return rows

        conv = g.reshape(build_rs(r_l, n_r, lambda st: g.op("GET_ROWS", (n_r, 1), st, s_main)),
                         (D_CONV - 1, conv_dim, 1))
        zx = g.reshape(g.op("MUL_MAT", (d_in_proj, T), w((N_EMBD, d_in_proj), il, SSM_IN), cur), (d_in_proj, T, 1))
        z = g.view(zx, (head_dim, N_HEAD, T, 1), (F32, head_dim * F32, zx.nb[1], zx.nb[2]))
        xbc = g.view(zx, (conv_dim, T, 1), (F32, zx.nb[1], zx.nb[2]))
        dt = g.view(zx, (N_HEAD, T, 1), (F32, zx.nb[1], zx.nb[2]))
        cx = g.op("CONCAT", (D_CONV - 1 + T, conv_dim, 1), conv, g.transpose(xbc))
        dst = g.view(r_l, (n_r, 1))
        g.expand(g.into("CPY", dst, g.view(cx, (D_CONV - 1, conv_dim, 1), (F32, cx.nb[1], cx.nb[2])), dst))
        xbc = g.op("SSM_CONV", (conv_dim, T, 1), cx, w((D_CONV, conv_dim), il))
        xbc = g.op("UNARY", xbc.ne, g.op("ADD", xbc.ne, xbc, w((conv_dim,), il)))
        nb = (F32, head_dim * F32, xbc.nb[1], xbc.nb[2])
        x = g.view(xbc, (head_dim, N_HEAD, T, 1), nb)
        b = g.view(xbc, (D_STATE, N_GROUP, T, 1), (F32, D_STATE * F32, xbc.nb[1], xbc.nb[2]))
        c = g.view(xbc, (D_STATE, N_GROUP, T, 1), (F32, D_STATE * F32, xbc.nb[1], xbc.nb[2]))
        dt = g.op("ADD", (N_HEAD, T, 1), g.op("CONT", (N_HEAD, T, 1), dt), w((N_HEAD,), il))
        a = w((1, N_HEAD), il)
        y_ssm = build_rs(s_l, n_s, lambda st, x=x, dt=dt, a=a, b=b, c=c: g.op(
            "SSM_SCAN", (D_INNER * T + n_s,), g.reshape(st, (D_STATE, head_dim, N_HEAD, 1)), x, dt, a, b, c, s_main))
        dst = g.view(s_l, (n_s, 1, 1))
        g.expand(g.into("CPY", dst, g.view(y_ssm, (n_s, 1, 1)), dst))
        y = g.view(y_ssm, (head_dim, N_HEAD, T, 1))
        y = g.op("ADD", y.ne, y, g.op("MUL", y.ne, x, w((1, N_HEAD), il)))
        y = g.op("GLU", y.ne, g.op("CONT", y.ne, z), y)
        y = g.reshape(y, (D_INNER // N_GROUP, N_GROUP, T, 1))
        y = g.op("MUL", y.ne, g.op("RMS_NORM", y.ne, y), w((D_INNER // N_GROUP, N_GROUP), il))
        cur = g.op("MUL_MAT", (N_EMBD, T), w((D_INNER, N_EMBD), il, SSM_OUT), g.reshape(y, (D_INNER, T)))
        if il == n_layer - 1:
            cur, inp = g.op("GET_ROWS", (N_EMBD, T), cur, out_ids), g.op("GET_ROWS", (N_EMBD, T), inp, out_ids)
        inp = g.op("ADD", cur.ne, cur, inp)
    h = g.op("RMS_NORM", inp.ne, inp)
    h = g.op("MUL", h.ne, h, g.weight((N_EMBD,), sr.DEVICE))
    h.output = True
    logits = g.op("MUL_MAT", (N_VOCAB, T), g.weight((N_EMBD, N_VOCAB), sr.DEVICE), h)
    logits.output = True
    g.expand(logits)
    return g


def _dump() -> str:
    d = json.load(gzip.open(FIXTURES / "h200_sched_debug.json.gz"))
    log = next(x for x in d["dumps"] if x["key"] == "mamba2-2.7b")["log"]
    return "\n".join(log) if isinstance(log, list) else log


def test_mamba2_assignment_equals_the_dump():
    """Every op of the pp graph on the backend the dump prints (views are not printed), and the splits (their first
    printed node, backend and number of inputs) the same."""
    pp = _dump().split("graph_reserve: reserving a graph for ubatch with n_tokens =  512")[-1]
    backends, splits = {}, []
    for line in pp.splitlines():
        m = re.match(r"## SPLIT #\d+: (\S+) # (\d+) inputs", line)
        if m:
            splits.append([m.group(1), int(m.group(2)), None])
        m = re.match(r"node #\s*(\d+) \(\s*(\S+)\): .{20} \(\s*\S+\) \[\s*(\S+)", line)
        if m:
            backends[int(m.group(1))] = m.group(3)
            if splits and splits[-1][2] is None:
                splits[-1][2] = int(m.group(1))
    g = mamba2_graph({0, 1, 2})
    got_splits, _ = sr.split_graph(g)
    names = {sr.DEVICE: "CUDA0", sr.HOST: "CPU"}
    assert {i: names[t.backend] for i, t in enumerate(g.nodes) if t.op not in sr.VIEW_OPS} == backends
    first = [next(i for i in range(st, len(g.nodes)) if g.nodes[i].op not in sr.VIEW_OPS) for _, _, st in got_splits]
    assert [[names[b], len(inputs), f] for (b, inputs, _), f in zip(got_splits, first, strict=True)] == splits
    assert len(splits) == 33

def test_mamba2_device_buffer_equals_the_measured():
    """CUDA0 at -ngl 1 / 2 / 3 / 4 / 99 (103.22 / 164.37 / 119.43 / 113.28 / 108.22 MiB measured; -ngl 1 and 3 held
    out): the host layers are the first 4 + 1 - ngl."""
    for ngl, mib in ((1, 103.22), (2, 164.37), (3, 119.43), (4, 113.28), (99, 108.22)):
        g = mamba2_graph(set(range(max(0, 4 + 1 - ngl))))
        assert round(sr.device_peak(g, 128) / MiB, 2) == mib, ngl


def test_lowering_kept_by_shape_equals_the_direct_replay():
    """sched_replay.device_peak_by_kv (one lowering per shape, every node's bytes affine in the cache's n_kv and the
    host weights' copies given by name) gives the replay of the graph built at each n_kv and weight size: qwen3.5-27b's
    8-layer file with flash attention and a q8_0 cache (its F16 copies and rotations), without flash attention, and
    with -ngl 4 (host layers) at two quantizations of their weights."""
    from oomkit.model.gguf_file import read_gguf_spec
    from tests import gt_compare

    spec = read_gguf_spec(gt_compare.synth_file("qwen3.5-27b", 8))
    host_layers = {0, 1, 2, 3, 4}
    names = [f"blk.{il}.{n}.weight" for il in host_layers for n in (
        "attn_qkv", "attn_gate", "ssm_beta", "ssm_alpha", "ssm_out", "attn_q", "attn_k", "attn_v", "attn_output",
        "ffn_up", "ffn_gate", "ffn_down")]
    cases = [
        (set(), {}, dict(flash_attn=True, k_type=(34, 32), v_type=(34, 32), k_rot=256, v_rot=64, fa_extra=-1)),
        (set(), {}, dict(flash_attn=False)),
        (host_layers, {n: 1 << 20 for n in names}, dict(flash_attn=True)),
        (host_layers, {n: 3 << 19 for n in names}, dict(flash_attn=True)),
    ]
    for k, (hl, host, kw) in enumerate(cases):
        def build(n_kv, hl=hl, host=host, kw=kw):
            args = dict(kw)
            if args.get("fa_extra") == -1:  # K and V in F16, n_kv x 4 heads x 256, each 128-aligned
                args["fa_extra"] = 2 * n_kv * 4 * 256 * 2
            return sr.qwen35_graph(spec, 512, 1, n_kv, host, hl, **args)
        key = ("test", min(k, 2))  # the last two share one lowering: their weights' bytes are given by name
        for n_kv in (4096, 8192, 33024, 4096):
            assert sr.device_peak_by_kv(key, build, n_kv, 128, host) == sr.device_peak(build(n_kv), 128), (k, n_kv)


def _kimi_linear_spec():
    from oomkit.model.gguf_file import read_gguf_spec
    from tests import ggufs
    from tests.groundtruth import synth

    return read_gguf_spec(synth.synth_path(ggufs.kimi_linear(), "q4_0"))


def test_kimi_linear_graph_equals_llama_cpp_s():
    """sched_replay.kimi_linear_graph, rebuilt from src/models/kimi-linear.cpp, is llama.cpp's pp graph node for node:
    every op the GGML_SCHED_DEBUG=2 dumps of the CPU ground truth print (tests/fixtures/llamacpp_cuda/
    kimi_linear_cpu_pp_nodes.json: the 4-layer file, 3 KDA layers and an absorbed-MLA one, -c 8192 -ub 512) at the
    same index in the graph, with the same size, with flash attention and without (views, which they do not print,
    at the indices between); at -np 1, and at -np 4 in one unified stream or four (the cache's cells a stream) the
    graphs of 4 sequences and of 1 (the other 3 states copied through build_rs)."""
    fx = json.loads((FIXTURES / "kimi_linear_cpu_pp_nodes.json").read_text())
    spec = _kimi_linear_spec()
    alias = {"SIGMOID": "UNARY", "SILU": "UNARY", "SOFTPLUS": "UNARY", "SWIGLU": "GLU", "FLASH_ATTN": "FLASH_ATTN_EXT",
             "GATED_DELT": "GATED_DELTA_NET"}
    assert len(fx["nodes"]) == 10
    for key, rows in fx["nodes"].items():
        fa = key.startswith("faon")
        n_stream = 4 if "streams" in key else 1
        n_seqs = 4 if key.endswith("seqs4") else 1
        g = sr.kimi_linear_graph(spec, 512, 512, 8192 // n_stream, {}, set(), fa, n_seqs=n_seqs, n_stream=n_stream,
                                 n_rs=1 if key.endswith("np1") else 4)
        mine = [[i, t.op] for i, t in enumerate(g.nodes) if t.op not in sr.VIEW_OPS]
        assert mine == [[i, alias.get(op, op)] for i, op, _ in rows], key
        for i, _, size in rows:  # printed as whole KiB or MiB
            unit = 1 << (10 if size.endswith("K") else 20)
            assert abs(g.nodes[i].nbytes / unit - int(size[:-1])) < 1, (key, i, size)


def test_kimi_linear_device_buffer_equals_the_measured():
    """The CUDA0 buffer of the kimi-linear 4-layer file on the H200 (held out, h200_run2_heldout.json: not fitted),
    the graph scheduled with the host layers' weights copied in and ggml-cuda's fusion dependencies: -ngl 2 at 8K
    99.06 MiB, and fully offloaded 110.58 / 630.58 MiB at 8K with / without flash attention, 237.16 at 16K -ub 1024."""
    from oomkit.engines.llamacpp.weights import gpu_alloc_size

    spec = _kimi_linear_spec()
    host_layers = {0, 1, 2}
    host = {t.name: gpu_alloc_size(t) for t in spec.weights.tensors
            if t.name.startswith(tuple(f"blk.{il}." for il in host_layers))}
    cases = ((host_layers, host, 512, 8192, True, 99.06), (set(), {}, 512, 8192, True, 110.58),
             (set(), {}, 512, 8192, False, 630.58), (set(), {}, 1024, 16384, True, 237.16))
    for hl, h, T, n_kv, fa, mib in cases:
        g = sr.kimi_linear_graph(spec, T, T, n_kv, h, hl, fa)
        assert round(sr.device_peak(g, 128) / MiB, 2) == mib, (hl, T, fa)
    # without the allocation dependencies (another backend's, or an older build's graph_optimize) the buffer differs
    assert round(sr.device_peak(sr.kimi_linear_graph(spec, 512, 512, 8192, host, host_layers, True, False), 128)
                 / MiB, 2) != 99.06


def test_kimi_linear_lowering_kept_by_shape_equals_the_direct_replay():
    """device_peak_by_kv on Kimi-Linear's graph (every node's bytes affine in n_kv: the mask, the latent cache's views,
    KQ and V's contiguous copy without flash attention) gives the direct replay at each n_kv, fully offloaded and
    with host layers, one stream or four."""
    from oomkit.engines.llamacpp.weights import gpu_alloc_size

    spec = _kimi_linear_spec()
    sizes = {t.name: gpu_alloc_size(t) for t in spec.weights.tensors}
    cases = [(set(), True, 1, 1), ({0, 1, 2}, True, 1, 1), ({0, 1, 2}, False, 1, 1), ({0}, True, 4, 4),
             ({0, 1}, False, 1, 4)]
    for k, (hl, fa, ns, nst) in enumerate(cases):
        host = {n: v for n, v in sizes.items() if n.startswith(tuple(f"blk.{il}." for il in hl))}

        def build(n_kv, hl=hl, host=host, fa=fa, ns=ns, nst=nst):
            return sr.kimi_linear_graph(spec, 512, 512, n_kv, host, hl, fa, n_seqs=ns, n_stream=nst,
                                        n_rs=4 if nst > 1 else ns)
        for n_kv in (4096, 8192, 33024, 4096, 1024):
            assert sr.device_peak_by_kv(("kimi-test", k), build, n_kv, 128, host) == sr.device_peak(build(n_kv), 128)
