"""Ground truth for engines/ollama/graph.py: Ollama's gpt-oss worst-case graph (model/models/gptoss/model.go
v0.11.5-v0.13.2, runner/ollamarunner reserveWorstCaseGraph, kvcache/causal.go masks) built node for node with the
real ggml of the pinned llama-cpp-python binding and sized by ggml_gallocr_reserve, the allocator Ollama's
Context.Reserve reads back (ggml_backend_sched on one CPU backend allocates through it).

What the Go code creates, in its order (ctx.Forward calls expand the graph the way ggml_build_forward_expand does):
token_embd get_rows; per block attn_norm (rms_norm x w), attn_qkv (+bias), q/k/v views of it, RoPE (NeoX) of q and
k, Forward(q), Forward(k, v), the cache copies (Put), the cache views (Get), flash_attn_ext with the sinks on the
F16 cast of the layer type's mask, attn_out (+bias) + residual; on the last block Rows(outputs); ffn_norm, the
router (+bias), TopK (argsort + view), Rows of the routing weights, softmax, gate_up mul_mat_id + add_id, the
gate and up halves made contiguous, swiglu_oai, down mul_mat_id + add_id, x routing weights, the k expert views
summed, + residual; output_norm and the output rows. Inputs (ids, positions, outputs, the f32 masks) have buffers
of their own (ml/backend/ggml Context.newTensor), so they are leaves outside the compute buffer.

Check against a public log: ollama/ollama#13320 (CPU only, 16128 / 4608 cells, 512 tokens) printed 139.5 MiB;
this graph sizes to 146276352 B = 139.50 MiB (tests/test_ollama_new_engine.py holds oomkit to it)."""

from __future__ import annotations

import ctypes as C
import importlib.util
import pathlib
from types import SimpleNamespace

import pytest

from oomkit.engines.ollama.graph import (
    gemma3_embed_graph_bytes,
    gemma3_embed_graph_replayed,
    gptoss_cpu_graph,
    pixtral_vision_graph_bytes,
    qwen3_dense_graph_bytes,
    qwen3_gpu_graph,
    qwen3_gpu_graph_replayed,
    qwen25vl_reserve_grid,
    qwen25vl_rotate_half_vision_graph_bytes,
    qwen25vl_vision_graph_bytes,
    siglip_vision_graph_bytes,
)
from oomkit.model.resolve import resolve

_spec = importlib.util.find_spec("llama_cpp")
_LIB = pathlib.Path(_spec.origin).parent / "lib" if _spec and _spec.origin else None
pytestmark = pytest.mark.skipif(_LIB is None or not (_LIB / "libggml-base.so").exists(),
                                reason="llama-cpp-python's ggml libraries not installed")

P, I64, F, INT = C.c_void_p, C.c_int64, C.c_float, C.c_int
T_F32, T_F16, T_I32, T_BF16, T_MXFP4 = 0, 1, 26, 30, 39


class _Params(C.Structure):
    _fields_ = [("mem_size", C.c_size_t), ("mem_buffer", P), ("no_alloc", C.c_bool)]


class _Ggml:
    def __init__(self):
        self.base = C.CDLL(str(_LIB / "libggml-base.so"), mode=C.RTLD_GLOBAL)
        C.CDLL(str(_LIB / "libggml-cpu.so"), mode=C.RTLD_GLOBAL)
        sig = {"ggml_init": (P, _Params), "ggml_new_tensor_1d": (P, P, INT, I64), "ggml_new_tensor_2d": (P, P, INT, I64, I64),
               "ggml_new_tensor_3d": (P, P, INT, I64, I64, I64), "ggml_get_rows": (P, P, P, P),
               "ggml_rms_norm": (P, P, P, F), "ggml_mul": (P, P, P, P), "ggml_add": (P, P, P, P),
               "ggml_mul_mat": (P, P, P, P), "ggml_mul_mat_id": (P, P, P, P, P), "ggml_add_id": (P, P, P, P, P),
               "ggml_reshape_2d": (P, P, P, I64, I64), "ggml_reshape_3d": (P, P, P, I64, I64, I64),
               "ggml_reshape_4d": (P, P, P, I64, I64, I64, I64),
               "ggml_view_1d": (P, P, P, I64, C.c_size_t), "ggml_view_2d": (P, P, P, I64, I64, C.c_size_t, C.c_size_t),
               "ggml_view_3d": (P, P, P, I64, I64, I64, C.c_size_t, C.c_size_t, C.c_size_t),
               "ggml_view_4d": (P, P, P, I64, I64, I64, I64, C.c_size_t, C.c_size_t, C.c_size_t, C.c_size_t),
               "ggml_cont_3d": (P, P, P, I64, I64, I64), "ggml_permute": (P, P, P, INT, INT, INT, INT),
               "ggml_rope_ext": (P, P, P, P, P, INT, INT, INT, F, F, F, F, F, F), "ggml_cpy": (P, P, P, P),
               "ggml_set_rows": (P, P, P, P, P), "ggml_set_input": (None, P), "ggml_scale": (P, P, P, F),
               "ggml_conv_2d": (P, P, P, P, INT, INT, INT, INT, INT, INT), "ggml_gelu": (P, P, P), "ggml_cont": (P, P, P),
               "ggml_new_tensor_4d": (P, P, INT, I64, I64, I64, I64),
               "ggml_rope_multi": (P, P, P, P, P, INT, C.POINTER(C.c_int), INT, INT, F, F, F, F, F, F),
               "ggml_flash_attn_ext": (P, P, P, P, P, P, F, F, F), "ggml_flash_attn_ext_add_sinks": (None, P, P),
               "ggml_flash_attn_ext_set_prec": (None, P, INT), "ggml_soft_max": (P, P, P), "ggml_cast": (P, P, P, INT),
               "ggml_argsort": (P, P, P, INT), "ggml_cos": (P, P, P), "ggml_sin": (P, P, P),
               "ggml_sum_rows": (P, P, P), "ggml_div": (P, P, P, P),
               "ggml_concat": (P, P, P, P, INT), "ggml_reshape_1d": (P, P, P, I64), "ggml_swiglu_oai": (P, P, P, P, F, F), "ggml_swiglu_split": (P, P, P, P),
               "ggml_new_graph_custom": (P, P, C.c_size_t, C.c_bool), "ggml_build_forward_expand": (None, P, P),
               "ggml_backend_cpu_buffer_type": (P,), "ggml_backend_alloc_ctx_tensors_from_buft": (P, P, P),
               "ggml_gallocr_new": (P, P), "ggml_gallocr_reserve": (C.c_bool, P, P),
               "ggml_gallocr_get_buffer_size": (C.c_size_t, P, INT), "ggml_gallocr_free": (None, P),
               "ggml_free": (None, P)}
        for name, (res, *args) in sig.items():
            f = getattr(self.base, name)
            f.restype, f.argtypes = res, args
            setattr(self, name[5:], f)

    @staticmethod
    def ne(t: int, i: int) -> int:  # struct ggml_tensor: type, buffer, ne[4] at 16, nb[4] at 48
        return C.cast(t + 16 + 8 * i, C.POINTER(C.c_int64))[0]

    @staticmethod
    def nb(t: int, i: int) -> int:
        return C.cast(t + 48 + 8 * i, C.POINTER(C.c_size_t))[0]


def _reserved_bytes(g, gf, buft, contexts) -> int:
    """What ggml-alloc reserves for the graph in one buffer of this type; the contexts are freed after."""
    ga = g.gallocr_new(buft)
    try:
        assert g.gallocr_reserve(ga, gf)
        return g.gallocr_get_buffer_size(ga, 0)
    finally:
        g.gallocr_free(ga)
        for ctx in contexts:
            g.free(ctx)


def gptoss_graph_bytes(T: int, full: int, swa: int, n_out: int = 1, n_layer: int = 24, E: int = 2880,
                       H: int = 64, KV: int = 8, D: int = 64, NE: int = 32, K: int = 4, V: int = 201088,
                       mask_cast: bool = True, gpu_inputs: bool = False) -> int:
    """mask_cast: v0.12.7+ builds the reserve mask as an f32 input cast to F16 in the graph; v0.8.0-v0.12.6
    (kvcache/causal.go buildMask, curReserve) made it an F16 input of its own (no graph tensor).
    gpu_inputs: every block on a GPU: the token rows (token_embd's get_rows stays on the CPU), the positions, the
    masks and the output index are the split's inputs, which the scheduler copies into the GPU's buffer: leafs of
    the graph without a buffer, placed by ggml-alloc first, in the order the graph meets them."""
    g = _Ggml()
    W, IN, G = (g.init(_Params(n * C.sizeof(C.c_void_p) * 64, None, True)) for n in (4000, 400, 200000))
    if gpu_inputs:
        IN = G
    w: dict = {}

    def wt(name, typ, *shape):
        if name not in w:
            w[name] = (g.new_tensor_1d, g.new_tensor_2d, g.new_tensor_3d)[len(shape) - 1](W, typ, *shape)
        return w[name]

    cache = {kind: (g.new_tensor_3d(W, T_F16, D, KV, cells), g.new_tensor_3d(W, T_F16, D, KV, cells))
             for kind, cells in (("full", full), ("swa", swa))}
    pad = (T + 63) // 64 * 64  # GGML_KQ_MASK_PAD
    inp, pos, outs = g.new_tensor_1d(IN, T_I32, T), g.new_tensor_1d(IN, T_I32, T), g.new_tensor_1d(IN, T_I32, n_out)
    masks = {kind: g.cast(G, g.new_tensor_2d(IN, T_F32, cells, pad), T_F16) if mask_cast
             else g.new_tensor_2d(IN, T_F16, cells, pad) for kind, cells in (("swa", swa), ("full", full))}
    gf = g.new_graph_custom(G, 65536, False)
    fwd = lambda *ts: [g.build_forward_expand(gf, t) for t in ts]  # noqa: E731
    x = g.new_tensor_2d(G, T_F32, E, T) if gpu_inputs else g.get_rows(G, wt("tok", T_BF16, E, V), inp)
    for il in range(n_layer):
        kind = "swa" if il % 2 == 0 else "full"  # gptoss Forward: even layers slide
        res = x
        n = g.mul(G, g.rms_norm(G, x, 1e-5), wt("an", T_F32, E))
        qkv = g.add(G, g.mul_mat(G, wt("qkv", T_BF16, E, (H + 2 * KV) * D), n), wt("qkvb", T_F32, (H + 2 * KV) * D))
        s0, s1 = g.nb(qkv, 0), g.nb(qkv, 1)
        q = g.view_3d(G, qkv, D, H, T, s0 * D, s1, 0)
        k = g.view_3d(G, qkv, D, KV, T, s0 * D, s1, s0 * D * H)
        v = g.view_3d(G, qkv, D, KV, T, s0 * D, s1, s0 * D * (H + KV))
        q = g.rope_ext(G, q, pos, None, D, 2, 4096, 150000., 1 / 32., 1., 1., 32., 1.)
        k = g.rope_ext(G, k, pos, None, D, 2, 4096, 150000., 1 / 32., 1., 1., 32., 1.)
        fwd(q)
        fwd(k, v)
        ck, cv = cache[kind]
        fwd(g.cpy(G, k, g.view_1d(G, ck, D * KV * T, 0)))
        fwd(g.cpy(G, v, g.view_1d(G, cv, D * KV * T, 0)))
        cells = g.ne(ck, 2)
        kk = g.view_3d(G, ck, D, KV, cells, g.nb(ck, 1), g.nb(ck, 2), 0)
        vv = g.view_3d(G, cv, D, KV, cells, g.nb(cv, 1), g.nb(cv, 2), 0)
        o = g.flash_attn_ext(G, g.permute(G, q, 0, 2, 1, 3), g.permute(G, kk, 0, 2, 1, 3),
                             g.permute(G, vv, 0, 2, 1, 3), masks[kind], 0.125, 0., 0.)
        g.flash_attn_ext_add_sinks(o, wt("sinks", T_F32, H))
        g.flash_attn_ext_set_prec(o, 10)
        o = g.reshape_2d(G, o, H * D, T)
        x = g.add(G, g.add(G, g.mul_mat(G, wt("ao", T_BF16, H * D, E), o), wt("aob", T_F32, E)), res)
        if il == n_layer - 1:
            x = g.get_rows(G, x, outs)
        t = g.ne(x, 1)
        res = x
        n = g.reshape_2d(G, g.mul(G, g.rms_norm(G, x, 1e-5), wt("fn", T_F32, E)), E, t)
        rw = g.add(G, g.mul_mat(G, wt("r", T_F32, E, NE), n), wt("rb", T_F32, NE))
        srt = g.argsort(G, rw, 1)
        sel = g.view_2d(G, srt, K, t, g.nb(srt, 1), 0)
        rw = g.get_rows(G, g.reshape_3d(G, rw, 1, NE, t), sel)
        rw = g.reshape_3d(G, g.soft_max(G, g.reshape_2d(G, rw, K, t)), 1, K, t)
        n = g.reshape_3d(G, n, E, 1, t)
        gu = g.add_id(G, g.mul_mat_id(G, wt("gu", T_MXFP4, E, 2 * E, NE), n, sel), wt("gub", T_F32, 2 * E, NE), sel)
        gu = g.reshape_4d(G, gu, 2, g.ne(gu, 0) // 2, g.ne(gu, 1), g.ne(gu, 2))
        d = (1, g.ne(gu, 1), g.ne(gu, 2), g.ne(gu, 3))
        halves = [g.cont_3d(G, g.view_4d(G, gu, *d, g.nb(gu, 1), g.nb(gu, 2), g.nb(gu, 3), off), d[1], d[2], d[3])
                  for off in (0, g.nb(gu, 0))]
        a = g.swiglu_oai(G, halves[0], halves[1], 1.702, 7.)
        ex = g.add_id(G, g.mul_mat_id(G, wt("dn", T_MXFP4, E, E, NE), a, sel), wt("db", T_F32, E, NE), sel)
        ex = g.mul(G, ex, rw)
        nxt = g.view_2d(G, ex, E, g.ne(ex, 2), g.nb(ex, 2), 0)
        for i in range(1, K):
            nxt = g.add(G, nxt, g.view_2d(G, ex, E, g.ne(ex, 2), g.nb(ex, 2), i * g.nb(ex, 1)))
        x = g.add(G, nxt, res)
    x = g.mul(G, g.rms_norm(G, x, 1e-5), wt("on", T_F32, E))
    logits = g.mul_mat(G, wt("out", T_BF16, E, V), x)
    buft = g.backend_cpu_buffer_type()
    bufs = [g.backend_alloc_ctx_tensors_from_buft(ctx, buft) for ctx in ((W,) if gpu_inputs else (W, IN))]
    assert all(bufs)  # the inputs: buffers of their own (ctx.Input()), or split inputs ggml-alloc places
    fwd(logits)
    return _reserved_bytes(g, gf, buft, (W, G) if gpu_inputs else (W, IN, G))


def test_the_graph_sizes_to_the_printed_figure():
    """ollama/ollama#13320: "compute graph" device=CPU size="139.5 MiB" (16128 / 4608 cells, 512 tokens)."""
    assert gptoss_graph_bytes(512, 16128, 4608) == 146276352


@pytest.mark.parametrize("T,full,swa", [(512, 16128, 4608), (512, 8192, 4608), (512, 15872, 4608),
                                        (512, 131072, 4608), (1024, 16128, 5120), (100, 4096, 4196),
                                        (300, 20000, 4396), (2048, 32768, 6144)])
def test_graph_formula_equals_ggml_alloc(T, full, swa):
    spec = resolve("gpt-oss:20b", "MXFP4_MOE")
    assert gptoss_cpu_graph(spec, T, full, swa) == gptoss_graph_bytes(T, full, swa)


def test_before_the_mask_cast_the_graph_is_the_moe_rows():
    """v0.11.5-v0.12.6: no mask in the buffer. ollama/ollama#12147 (gpt-oss:20b CPU only, 8192 / 4608 cells,
    512 tokens) printed "compute graph" device=CPU size="109.2 MiB": 512 x 55936 x 4 B = 109.25 MiB."""
    assert gptoss_graph_bytes(512, 8192, 4608, mask_cast=False) == 512 * 55936 * 4
    assert gptoss_graph_bytes(512, 131072, 4608, mask_cast=False) == 512 * 55936 * 4
    spec = resolve("gpt-oss:20b", "MXFP4_MOE")
    assert gptoss_cpu_graph(spec, 512, 8192, 4608, masks=False) == 512 * 55936 * 4


def qwen3_qkv(g, G, wt, x, pos, E: int, H: int, KV: int, D: int, T: int):
    """A qwen3 block's attention inputs as Ollama's model/models/qwen3 builds them: attn_norm, the Q / K / V
    projections, the Q and K norms and NeoX rope. wt(name, type, *shape): the block's (shared) weights."""
    n = g.mul(G, g.rms_norm(G, x, 1e-6), wt("an", T_F32, E))
    q = g.reshape_3d(G, g.mul_mat(G, wt("q", T_F16, E, H * D), n), D, H, T)
    k = g.reshape_3d(G, g.mul_mat(G, wt("k", T_F16, E, KV * D), n), D, KV, T)
    v = g.reshape_3d(G, g.mul_mat(G, wt("v", T_F16, E, KV * D), n), D, KV, T)
    q = g.mul(G, g.rms_norm(G, q, 1e-6), wt("qn", T_F32, D))
    k = g.mul(G, g.rms_norm(G, k, 1e-6), wt("kn", T_F32, D))
    q = g.rope_ext(G, q, pos, None, D, 2, 131072, 1e6, 1., 0., 1., 32., 1.)
    k = g.rope_ext(G, k, pos, None, D, 2, 131072, 1e6, 1., 0., 1., 32., 1.)
    return q, k, v


def qwen3_gpu_graph_bytes(T: int = 512, cells: int = 16384, n_layer: int = 64, E: int = 5120, H: int = 64,
                          KV: int = 8, D: int = 128, FF: int = 25600, V: int = 151936, mask_input: bool = False,
                          split_inputs: bool = False, set_rows: bool = False) -> int:
    """Ollama's qwen3 dense graph (model/models/qwen3 v0.12.4-v0.13.2, flash attention) with every block on one GPU:
    the token rows come from the CPU (token_embd stays there, ml/backend/ggml New InputWeights) and, with the f32
    mask (v0.12.7+) and the positions, are copied into the GPU's buffer by the scheduler (split inputs, allocated at
    the split's start: plain leaves here). mask_input: v0.12.4-v0.12.6, whose kvcache/causal.go buildMask returns
    an F16 input of its own while reserving (ctx.Input().Empty(MaskDType, ...)), copied in as it is.
    split_inputs: the inputs flagged as the scheduler flags its split-input copies (ggml_backend_sched_split_graph:
    ggml_set_input), so ggml-alloc places them before the first node (ggml_gallocr_alloc_graph_impl) and frees each
    after its last reader. set_rows: v0.13.0+ (53985b3c4), kvcache/causal.go Put stores K and V with SetRows at the
    batch's cell indices, an I32 input of T entries (c.curLoc) copied in beside the positions."""
    g = _Ggml()
    W, G = (g.init(_Params(n * C.sizeof(C.c_void_p) * 64, None, True)) for n in (400, 300000))
    w: dict = {}

    def wt(name, typ, *shape):
        if name not in w:
            w[name] = (g.new_tensor_1d, g.new_tensor_2d, g.new_tensor_3d)[len(shape) - 1](W, typ, *shape)
        return w[name]

    ck, cv = g.new_tensor_3d(W, T_F16, D, KV, cells), g.new_tensor_3d(W, T_F16, D, KV, cells)
    x = g.new_tensor_2d(G, T_F32, E, T)
    pos, outs = g.new_tensor_1d(G, T_I32, T), g.new_tensor_1d(G, T_I32, 1)
    locs = g.new_tensor_1d(G, T_I32, T) if set_rows else None
    raw_mask = g.new_tensor_2d(G, T_F16 if mask_input else T_F32, cells, (T + 63) // 64 * 64)
    if split_inputs:
        for t in (x, pos, outs, raw_mask, locs):
            if t is not None:
                g.set_input(t)
    mask = raw_mask if mask_input else g.cast(G, raw_mask, T_F16)
    gf = g.new_graph_custom(G, 65536, False)
    fwd = lambda *ts: [g.build_forward_expand(gf, t) for t in ts]  # noqa: E731
    for il in range(n_layer):
        res = x
        q, k, v = qwen3_qkv(g, G, wt, x, pos, E, H, KV, D, T)
        fwd(q)
        fwd(k, v)
        if set_rows:
            for src, dst in ((k, ck), (v, cv)):
                fwd(g.set_rows(G, g.reshape_2d(G, dst, D * KV, cells), g.reshape_2d(G, src, D * KV, T), locs))
        else:
            fwd(g.cpy(G, k, g.view_1d(G, ck, D * KV * T, 0)))
            fwd(g.cpy(G, v, g.view_1d(G, cv, D * KV * T, 0)))
        kk = g.view_3d(G, ck, D, KV, cells, g.nb(ck, 1), g.nb(ck, 2), 0)
        vv = g.view_3d(G, cv, D, KV, cells, g.nb(cv, 1), g.nb(cv, 2), 0)
        o = g.flash_attn_ext(G, g.permute(G, q, 0, 2, 1, 3), g.permute(G, kk, 0, 2, 1, 3),
                             g.permute(G, vv, 0, 2, 1, 3), mask, D ** -0.5, 0., 0.)
        g.flash_attn_ext_set_prec(o, 10)
        x = g.mul_mat(G, wt("ao", T_F16, H * D, E), g.reshape_2d(G, o, H * D, T))
        if il == n_layer - 1:
            x, res = g.get_rows(G, x, outs), g.get_rows(G, res, outs)
        x = g.add(G, x, res)
        res = x
        n = g.mul(G, g.rms_norm(G, x, 1e-6), wt("fn", T_F32, E))
        a = g.swiglu_split(G, g.mul_mat(G, wt("g", T_F16, E, FF), n), g.mul_mat(G, wt("u", T_F16, E, FF), n))
        x = g.add(G, g.mul_mat(G, wt("d", T_F16, FF, E), a), res)
    logits = g.mul_mat(G, wt("out", T_F16, E, V), g.mul(G, g.rms_norm(G, x, 1e-6), wt("on", T_F32, E)))
    buft = g.backend_cpu_buffer_type()
    assert g.backend_alloc_ctx_tensors_from_buft(W, buft)
    fwd(logits)
    return _reserved_bytes(g, gf, buft, (W, G))


def test_qwen3_32b_graph_stays_below_what_the_total_implies():
    """ollama/ollama#13372's total leaves 237.5-339.9 MiB for CUDA2's graph; Ollama's own qwen3:32b graph sizes to
    208.0 MiB under ggml-alloc; the CUDA pool makes up the rest (test_ollama_new_engine.py
    test_qwen3_32b_graph_from_the_total)."""
    got = qwen3_gpu_graph_bytes()
    assert got == 218105888
    assert got < 237.4 * 2**20


_SHAPES = [dict(), dict(cells=131072), dict(FF=51200), dict(T=1024), dict(T=128), dict(E=8192, FF=28672),
           dict(E=4096, FF=12288, H=32, cells=8192), dict(E=1024, FF=3072, H=16, cells=40960)]


@pytest.mark.parametrize("shape", _SHAPES, ids=[",".join(f"{k}={v}" for k, v in s.items()) or "qwen3-32b"
                                                 for s in _SHAPES])
def test_qwen3_graph_with_the_mask_an_input_is_the_closed_form(shape):
    """v0.12.4-v0.12.6 (the F16 reserve mask an input): ggml-alloc's peak is the MLP's gate, up and SwiGLU rows,
    the residual and normed rows, the attention output's hole and the mask (graph.py qwen3_gpu_graph); the
    harness's output index sits in a 32 B CPU slot, the model's in a 128 B CUDA one (96 B apart)."""
    a = dict(T=512, cells=16384, E=5120, H=64, KV=8, D=128, FF=25600)
    a.update(shape)
    got = qwen3_gpu_graph_bytes(n_layer=4, mask_input=True, **a)
    block = SimpleNamespace(attention=SimpleNamespace(n_heads=a["H"], head_dim_v=a["D"]),
                            ffn=SimpleNamespace(n_ff=a["FF"], is_moe=False))
    spec = SimpleNamespace(architecture="qwen3", n_embd=a["E"], layers=[block])
    assert qwen3_gpu_graph(spec, a["T"], a["cells"]) == got + 96


def test_qwen3_32b_graph_is_the_catalog_models():
    """The same figure from the catalog's qwen3:32b (64 blocks in the harness): 211,814,528 B = 202.0 MiB."""
    spec = resolve("qwen3:32b", "Q4_K_M")
    assert qwen3_gpu_graph(spec, 512, 16384) == qwen3_gpu_graph_bytes(mask_input=True) + 96 == 211814528
    assert qwen3_gpu_graph(resolve("qwen3:30b-a3b", "Q4_K_M"), 512, 16384) is None  # MoE: not this graph


_ERAS = {"0.12.4-0.12.6": dict(mask_input=True), "0.12.7-0.12.11": dict(), "0.13.0-0.13.4": dict(set_rows=True)}
_REPLAY_SHAPES = _SHAPES + [dict(cells=4096), dict(cells=24576), dict(cells=65536), dict(cells=81920),
                            dict(T=100, cells=4096), dict(T=300, cells=20000, FF=17408, E=4096, H=32)]


@pytest.mark.parametrize("era", list(_ERAS))
@pytest.mark.parametrize("shape", _REPLAY_SHAPES, ids=[",".join(f"{k}={v}" for k, v in s.items()) or "qwen3-32b"
                                                        for s in _REPLAY_SHAPES])
def test_qwen3_graph_replay_is_ggml_alloc(era, shape):
    """graph.py qwen3_dense_graph_bytes (ggml-alloc replayed in Python, galloc.py) against ggml_gallocr_reserve on
    the graph built with ggml, in each era of the reserve: the F16 mask input (v0.12.4-v0.12.6), the f32 mask
    cast in the graph (v0.12.7+), the cache written with SetRows at an I32 index input (v0.13.0+). From v0.12.7
    the freed f32 mask leaves a hole the rows fill by best fit, so the growth over the F16-input graph is not
    monotone in the cells (qwen3:32b's shapes, 512 tokens: +8, 0, +6, +22, +44, +26 MiB at 4096, 8192, 16384,
    24576, 65536, 81920 cells)."""
    a = dict(T=512, cells=16384, E=5120, H=64, KV=8, D=128, FF=25600)
    a.update(shape)
    kw = _ERAS[era]
    got = qwen3_gpu_graph_bytes(n_layer=4, V=1000, **a, **kw)
    assert qwen3_dense_graph_bytes(a["E"], a["H"], a["KV"], a["D"], a["FF"], 4, 1000, a["T"], a["cells"],
                                   mask_cast=not kw.get("mask_input"), set_rows=kw.get("set_rows", False),
                                   alignment=32) == got


def test_qwen3_32b_replay_for_the_catalog_model():
    """The catalog's qwen3:32b, 64 blocks, 16384 cells, 512 tokens, one output row: the replay at the CPU's
    32 B alignment equals ggml-alloc on the 64-block graph in each era; at CUDA's 128 B it equals the v0.12.4-v0.12.6
    closed form (qwen3_gpu_graph) and grows by the f32 mask's hole from v0.12.7 (208.0 MiB: 6 MiB more) and by the
    cell index from v0.13.0 (2 KiB more)."""
    spec = resolve("qwen3:32b", "Q4_K_M")
    for kw, mask_cast, set_rows in ((dict(mask_input=True), False, False), (dict(), True, False),
                                    (dict(set_rows=True), True, True)):
        want = qwen3_gpu_graph_bytes(**kw)
        assert qwen3_dense_graph_bytes(5120, 64, 8, 128, 25600, 64, 151936, 512, 16384, 1, mask_cast, set_rows,
                                       alignment=32) == want
    assert qwen3_gpu_graph_replayed(spec, 512, 16384, 1, False, False) == qwen3_gpu_graph(spec, 512, 16384)
    assert qwen3_gpu_graph_replayed(spec, 512, 16384, 1, True, False) == qwen3_gpu_graph(spec, 512, 16384) + 6 * 2**20
    assert qwen3_gpu_graph_replayed(spec, 512, 16384, 1, True, True) == qwen3_gpu_graph(spec, 512, 16384) + 6 * 2**20 + 2048


def qwen3moe_cpu_graph_bytes(T: int = 512, cells: int = 16384, n_layer: int = 4, E: int = 2048, H: int = 32,
                             KV: int = 4, D: int = 128, FF: int = 768, NE: int = 128, K: int = 8, V: int = 1000,
                             n_out: int = 1, norm_top_k: bool = True, mask_pad: int = 1) -> int:
    """Ollama's qwen3moe graph (model/models/qwen3 with its sparse MLP, v0.13.5-v0.24.0, flash attention) with
    every block on the CPU: token_embd's get_rows in the buffer, the inputs (token ids, positions, the cells the
    batch writes, the f32 mask, the output rows) in buffers of their own (ctx.Input()), the mask cast to F16 in the
    graph (kvcache/causal.go buildMask, its batch unpadded from v0.13.5: mask_pad 1; 64 before), K and V written
    with SetRows. The sparse MLP as sparse.Forward builds it: the router's softmax, TopK (ggml_argsort_top_k: an
    argsort and a view of its first k), Rows of the routing weights, their SumRows and Div (norm_top_k_prob), the
    gate and up mul_mat_id, swiglu_split, down's mul_mat_id times the weights and the k expert views summed."""
    g = _Ggml()
    W, IN, G = (g.init(_Params(n * C.sizeof(C.c_void_p) * 64, None, True)) for n in (400, 400, 300000))
    w: dict = {}

    def wt(name, typ, *shape):
        if name not in w:
            w[name] = (g.new_tensor_1d, g.new_tensor_2d, g.new_tensor_3d)[len(shape) - 1](W, typ, *shape)
        return w[name]

    ck, cv = g.new_tensor_3d(W, T_F16, D, KV, cells), g.new_tensor_3d(W, T_F16, D, KV, cells)
    ids, pos = g.new_tensor_1d(IN, T_I32, T), g.new_tensor_1d(IN, T_I32, T)
    locs, outs = g.new_tensor_1d(IN, T_I32, T), g.new_tensor_1d(IN, T_I32, n_out)
    mask = g.cast(G, g.new_tensor_2d(IN, T_F32, cells, (T + mask_pad - 1) // mask_pad * mask_pad), T_F16)
    gf = g.new_graph_custom(G, 65536, False)
    fwd = lambda *ts: [g.build_forward_expand(gf, t) for t in ts]  # noqa: E731
    x = g.get_rows(G, wt("tok", T_F16, E, V), ids)
    for il in range(n_layer):
        res = x
        q, k, v = qwen3_qkv(g, G, wt, x, pos, E, H, KV, D, T)
        fwd(q)
        fwd(k, v)
        for src, dst in ((k, ck), (v, cv)):
            fwd(g.set_rows(G, g.reshape_2d(G, dst, D * KV, cells), g.reshape_2d(G, src, D * KV, T), locs))
        kk = g.view_3d(G, ck, D, KV, cells, g.nb(ck, 1), g.nb(ck, 2), 0)
        vv = g.view_3d(G, cv, D, KV, cells, g.nb(cv, 1), g.nb(cv, 2), 0)
        o = g.flash_attn_ext(G, g.permute(G, q, 0, 2, 1, 3), g.permute(G, kk, 0, 2, 1, 3),
                             g.permute(G, vv, 0, 2, 1, 3), mask, D ** -0.5, 0., 0.)
        g.flash_attn_ext_set_prec(o, 10)
        x = g.mul_mat(G, wt("ao", T_F16, H * D, E), g.reshape_2d(G, o, H * D, T))
        if il == n_layer - 1:
            x, res = g.get_rows(G, x, outs), g.get_rows(G, res, outs)
        x = g.add(G, x, res)
        t = g.ne(x, 1)
        res = x
        n = g.mul(G, g.rms_norm(G, x, 1e-6), wt("fn", T_F32, E))
        flat = g.reshape_2d(G, n, E, t)
        probs = g.soft_max(G, g.mul_mat(G, wt("r", T_F32, E, NE), flat))
        srt = g.argsort(G, probs, 1)
        sel = g.view_4d(G, srt, K, t, 1, 1, g.nb(srt, 1), g.nb(srt, 2), g.nb(srt, 3), 0)
        rw = g.get_rows(G, g.reshape_3d(G, probs, 1, NE, t), sel)
        if norm_top_k:
            rw = g.reshape_2d(G, rw, K, t)
            rw = g.div(G, rw, g.sum_rows(G, rw))
            rw = g.reshape_3d(G, rw, 1, K, t)
        h = g.reshape_3d(G, flat, E, 1, t)
        a = g.swiglu_split(G, g.mul_mat_id(G, wt("g", T_F16, E, FF, NE), h, sel),
                           g.mul_mat_id(G, wt("u", T_F16, E, FF, NE), h, sel))
        ex = g.mul(G, g.mul_mat_id(G, wt("d", T_F16, FF, E, NE), a, sel), rw)
        nxt = g.view_2d(G, ex, E, g.ne(ex, 2), g.nb(ex, 2), 0)
        for i in range(1, K):
            nxt = g.add(G, nxt, g.view_2d(G, ex, E, g.ne(ex, 2), g.nb(ex, 2), i * g.nb(ex, 1)))
        x = g.add(G, nxt, res)
    logits = g.mul_mat(G, wt("out", T_F16, E, V), g.mul(G, g.rms_norm(G, x, 1e-6), wt("on", T_F32, E)))
    buft = g.backend_cpu_buffer_type()
    assert all(g.backend_alloc_ctx_tensors_from_buft(ctx, buft) for ctx in (W, IN))
    fwd(logits)
    return _reserved_bytes(g, gf, buft, (W, IN, G))


_MOE_SHAPES = [dict(), dict(cells=4096), dict(cells=65536), dict(T=100, cells=4096), dict(T=300, cells=20000),
               dict(n_out=4, cells=8192), dict(E=4096, H=64, FF=1536, NE=128, K=8, cells=32768),
               dict(NE=64, K=4, FF=1408, cells=8192), dict(norm_top_k=False), dict(mask_pad=64, T=100, cells=4096)]


@pytest.mark.parametrize("shape", _MOE_SHAPES, ids=[",".join(f"{k}={v}" for k, v in s.items()) or "qwen3-30b-a3b"
                                                     for s in _MOE_SHAPES])
def test_qwen3moe_cpu_replay_is_ggml_alloc(shape):
    """graph.py qwen3_dense_graph_bytes with the sparse MLP (n_expert > 0) against ggml_gallocr_reserve on the
    qwen3moe graph built with ggml, every block on the CPU (32 B alignment)."""
    a = dict(T=512, cells=16384, E=2048, H=32, KV=4, D=128, FF=768, NE=128, K=8, n_out=1, norm_top_k=True,
             mask_pad=1)
    a.update(shape)
    want = qwen3moe_cpu_graph_bytes(n_layer=4, V=1000, **a)
    assert qwen3_dense_graph_bytes(a["E"], a["H"], a["KV"], a["D"], a["FF"], 4, 1000, a["T"], a["cells"],
                                   a["n_out"], True, True, 32, True, True, a["mask_pad"], a["NE"], a["K"],
                                   a["norm_top_k"]) == want


def test_qwen3_coder_30b_cpu_graph_is_the_printed_one():
    """josheeg/Game-Note- (Qwen3-Coder-30B-A3B on a Raspberry Pi 5, v0.16.1): "compute graph" device=CPU 96.0 MiB
    at 16384 cells and 88.0 MiB at 4096; ggml_gallocr_reserve on the 48-block graph with the catalog model's
    shapes gives exactly 96 and 88 MiB, and so does the replay."""
    spec = resolve("Qwen/Qwen3-Coder-30B-A3B-Instruct", "IQ3_S")
    for cells, mib in ((16384, 96), (4096, 88)):
        want = qwen3moe_cpu_graph_bytes(cells=cells, n_layer=48, V=151936)
        assert want == mib * 2**20
        assert qwen3_gpu_graph_replayed(spec, 512, cells, 1, True, True, on_cpu=True, mask_pad=1, moe=True) == want


def qwen25vl_vision_bytes(gh: int, gw: int, E: int = 1280, H: int = 16, FF: int = 3420, OUT: int = 2048,
                          n_layer: int = 32, full: tuple = (7, 15, 23, 31), gpu: bool = False) -> int:
    """Ollama's Qwen2.5-VL vision encoder (model/models/qwen25vl/model_vision.go v0.13.4+, 971d62595) on one image of
    gh x gw patches, built with ggml as its Go code builds it: PatchEmbedding (the pixel rows reshaped, permuted and
    made contiguous, the two temporal halves copied out and convolved with ggml_conv_2d, added), the window order
    (argsort + get_rows on 4-patch rows), per block RMSNorm, q/k/v with biases, the vision RoPE (ggml_rope_multi,
    mode 24, four sections of head_dim / 4), q and k permuted, v permuted and copied, kq = k x q scaled, plus the
    mask on the window blocks, softmaxed, kqv permuted back and copied, the output, the residual, RMSNorm, the
    SwiGLU MLP with biases; then the merger (RMSNorm, 4 patches a row, GELU between two linears) and get_rows back
    in order. The inputs (pixels, window index, positions, mask: ctx.Input()) are in a buffer of their own on the
    CPU; gpu: leaves in the compute buffer, as the scheduler copies them into a GPU's."""
    g = _Ggml()
    n, D = gh * gw, E // H
    W, IN, G = (g.init(_Params(k * C.sizeof(C.c_void_p) * 64, None, True)) for k in (4000, 400, 200000))
    w: dict = {}

    def wt(name, typ, *shape):
        if name not in w:
            w[name] = (g.new_tensor_1d, g.new_tensor_2d, g.new_tensor_3d, g.new_tensor_4d)[len(shape) - 1](W, typ, *shape)
        return w[name]

    def lin(name, x, i, o):
        return g.add(G, g.mul_mat(G, wt(name, T_F16, i, o), x), wt(name + "b", T_F32, o))

    ctx_in = G if gpu else IN
    pix, widx = g.new_tensor_2d(ctx_in, T_F32, 1176, n), g.new_tensor_1d(ctx_in, T_I32, n // 4)
    pos, mask = g.new_tensor_1d(ctx_in, T_I32, 4 * n), g.new_tensor_2d(ctx_in, T_F32, n, n)
    sections = (C.c_int * 4)(D // 4, D // 4, D // 4, D // 4)
    gf = g.new_graph_custom(G, 65536, False)
    pv = g.cont(G, g.permute(G, g.reshape_4d(G, pix, 196, 2, 3, n), 1, 0, 2, 3))
    convs = []
    for i, off in enumerate((0, g.nb(pv, 0))):
        half = g.view_4d(G, pv, 1, g.ne(pv, 1), g.ne(pv, 2), g.ne(pv, 3), g.nb(pv, 1), g.nb(pv, 2), g.nb(pv, 3), off)
        half = g.reshape_4d(G, g.cont(G, half), 14, 14, 3, n)
        convs.append(g.conv_2d(G, wt(f"patch_embd_{i}", T_F16, 14, 14, 3, E), half, 14, 14, 0, 0, 1, 1))
    h = g.reshape_2d(G, g.reshape_2d(G, g.add(G, convs[0], convs[1]), E, n), E * 4, n // 4)
    h = g.reshape_2d(G, g.get_rows(G, h, g.argsort(G, widx, 0)), E, n)
    for il in range(n_layer):
        res = h
        x = g.mul(G, g.rms_norm(G, h, 1e-6), wt("ln1", T_F32, E))
        q, k, v = (g.reshape_3d(G, lin(name, x, E, E), D, H, n) for name in ("q", "k", "v"))
        q = g.permute(G, g.rope_multi(G, q, pos, None, D // 2, sections, 24, 0, 10000., 1., 0., 1., 0., 0.), 0, 2, 1, 3)
        k = g.permute(G, g.rope_multi(G, k, pos, None, D // 2, sections, 24, 0, 10000., 1., 0., 1., 0., 0.), 0, 2, 1, 3)
        v = g.cont(G, g.permute(G, v, 1, 2, 0, 3))
        kq = g.scale(G, g.mul_mat(G, k, q), D ** -0.5)
        if il not in full:
            kq = g.add(G, kq, mask)
        kqv = g.mul_mat(G, v, g.soft_max(G, kq))
        a = g.reshape_2d(G, g.cont(G, g.permute(G, kqv, 0, 2, 1, 3)), E, n)
        h = g.add(G, lin("o", a, E, E), res)
        res = h
        x = g.mul(G, g.rms_norm(G, h, 1e-6), wt("ln2", T_F32, E))
        x = g.swiglu_split(G, lin("gate", x, E, FF), lin("up", x, E, FF))
        h = g.add(G, lin("down", x, FF, E), res)
    x = g.reshape_2d(G, g.mul(G, g.rms_norm(G, h, 1e-6), wt("lnq", T_F32, E)), E * 4, n // 4)
    x = g.get_rows(G, lin("mlp2", g.gelu(G, lin("mlp0", x, E * 4, E * 4)), E * 4, OUT), widx)
    buft = g.backend_cpu_buffer_type()
    assert all(g.backend_alloc_ctx_tensors_from_buft(ctx, buft) for ctx in ((W,) if gpu else (W, IN)))
    g.build_forward_expand(gf, x)
    return _reserved_bytes(g, gf, buft, (W, IN, G))


def test_qwen25vl_reserve_image_grid():
    """process_image.go SmartResize of the 2048 x 2048 reserve image: 28 x 28 x 1280 pixels (v0.7.0-v0.13.3) give
    980 x 980 (70 x 70 patches); 2 << 20 (v0.13.4+, 971d62595 "qwen25vl: bump max pixels") 1428 x 1428 (102 x 102),
    2.12x the patches and 4.5x the n^2 attention scores."""
    assert qwen25vl_reserve_grid(28 * 28 * 1280) == (70, 70)
    assert qwen25vl_reserve_grid(2 << 20) == (102, 102)


@pytest.mark.parametrize("gh,gw,n_layer", [(102, 102, 32), (70, 70, 9), (20, 20, 9), (36, 52, 4), (8, 12, 3)])
@pytest.mark.parametrize("gpu", [False, True], ids=["cpu", "gpu-inputs"])
def test_qwen25vl_vision_replay_is_ggml_alloc(gh, gw, n_layer, gpu):
    """graph.py qwen25vl_vision_graph_bytes (the replay) against ggml_gallocr_reserve on the encoder built with
    ggml. qwen2.5vl:3b's reserve (102 x 102 patches, 16 heads): 7,193,918,656 B = 6.70 GiB on the CPU (the scores
    6.45 GiB + five 1280-wide rows), 7.15 GiB with the inputs in the buffer (the 10404^2 f32 mask, 413 MiB)."""
    want = qwen25vl_vision_bytes(gh, gw, n_layer=n_layer, gpu=gpu)
    assert qwen25vl_vision_graph_bytes(gh, gw, 1280, 16, 3420, 2048, n_layer, (7, 15, 23, 31), gpu,
                                       alignment=32) == want
    if (gh, n_layer, gpu) == (102, 32, False):
        assert want == 7193918656


def qwen25vl_rotate_half_vision_bytes(gh: int, gw: int, E: int = 1280, H: int = 16, FF: int = 3420, OUT: int = 2048,
                                      n_layer: int = 32, full: tuple = (7, 15, 23, 31), gpu: bool = False,
                                      merge: int = 2) -> int:
    """Ollama's Qwen2.5-VL vision encoder as model/models/qwen25vl/model_vision.go builds it in v0.13.0-v0.13.3
    (before 971d62595), built with ggml in its Go code's order: PatchEmbedding as in v0.13.4; PositionalEmbedding
    (the (y, x) ids [2, w, h] reshaped to the merge order, permuted and copied twice, the frequency table's rows
    taken by them and reshaped to [head_dim / 2, n]); the patch rows and the position rows taken by the window index
    (4-patch rows), the position rows concatenated with themselves, Cos and Sin; the n x n mask input reshaped to
    [n, n, 1]; per block RMSNorm, q/k/v with biases reshaped [D, H, n, 1], rotateHalf RoPE on q and k
    (x x cos + concat(scale(cont(x2), -1), x1) x sin, x1 / x2 the Slice views of the two halves), q and k permuted,
    v permuted and copied, kq = k x q scaled (+ mask on the window blocks), softmaxed, kqv permuted back and
    copied, reshaped [E, n, 1], the output, the residual, RMSNorm, the SwiGLU MLP with biases; the merger
    (RMSNorm, [4E, n/4, 1], GELU between two linears) and get_rows by the window index's argsort."""
    g = _Ggml()
    n, D = gh * gw, E // H
    freq = D // 4
    W, IN, G = (g.init(_Params(k * C.sizeof(C.c_void_p) * 64, None, True)) for k in (4000, 400, 200000))
    w: dict = {}

    def wt(name, typ, *shape):
        if name not in w:
            w[name] = (g.new_tensor_1d, g.new_tensor_2d, g.new_tensor_3d, g.new_tensor_4d)[len(shape) - 1](W, typ, *shape)
        return w[name]

    def lin(name, x, i, o):
        return g.add(G, g.mul_mat(G, wt(name, T_F16, i, o), x), wt(name + "b", T_F32, o))

    ci = G if gpu else IN
    pix, freqs = g.new_tensor_2d(ci, T_F32, 1176, n), g.new_tensor_2d(ci, T_F32, freq, max(gh, gw))
    coords, widx = g.new_tensor_3d(ci, T_I32, 2, gw, gh), g.new_tensor_1d(ci, T_I32, n // 4)
    mask = g.new_tensor_2d(ci, T_F32, n, n)
    gf = g.new_graph_custom(G, 65536, False)
    pv = g.cont(G, g.permute(G, g.reshape_4d(G, pix, 196, 2, 3, n), 1, 0, 2, 3))
    convs = []
    for i, off in enumerate((0, g.nb(pv, 0))):
        half = g.view_4d(G, pv, 1, g.ne(pv, 1), g.ne(pv, 2), g.ne(pv, 3), g.nb(pv, 1), g.nb(pv, 2), g.nb(pv, 3), off)
        half = g.reshape_4d(G, g.cont(G, half), 14, 14, 3, n)
        convs.append(g.conv_2d(G, wt(f"patch_embd_{i}", T_F16, 14, 14, 3, E), half, 14, 14, 0, 0, 1, 1))
    h = g.reshape_2d(G, g.add(G, convs[0], convs[1]), E, n)
    pos = g.cont(G, g.permute(G, g.reshape_4d(G, coords, 2, gw, merge, gh // merge), 0, 2, 1, 3))
    pos = g.cont(G, g.permute(G, g.reshape_4d(G, pos, 2, merge, merge, n // (merge * merge)), 0, 2, 1, 3))
    pe = g.reshape_2d(G, g.get_rows(G, freqs, g.reshape_1d(G, pos, 2 * n)), 2 * freq, n)
    h = g.reshape_2d(G, g.get_rows(G, g.reshape_2d(G, h, 4 * E, n // 4), widx), E, n)
    pe = g.reshape_2d(G, g.get_rows(G, g.reshape_2d(G, pe, 8 * freq, n // 4), widx), 2 * freq, n)
    pe = g.concat(G, pe, pe, 0)
    cos, sin = g.reshape_3d(G, g.cos(G, pe), D, 1, n), g.reshape_3d(G, g.sin(G, pe), D, 1, n)
    m3 = g.reshape_3d(G, mask, n, n, 1)

    def rope(x):
        x1 = g.view_4d(G, x, D // 2, H, n, 1, g.nb(x, 1), g.nb(x, 2), g.nb(x, 3), 0)
        x2 = g.cont(G, g.view_4d(G, x, D // 2, H, n, 1, g.nb(x, 1), g.nb(x, 2), g.nb(x, 3), D // 2 * g.nb(x, 0)))
        return g.add(G, g.mul(G, x, cos), g.mul(G, g.concat(G, g.scale(G, x2, -1.), x1, 0), sin))

    for il in range(n_layer):
        res = h
        x = g.mul(G, g.rms_norm(G, h, 1e-6), wt("ln1", T_F32, E))
        q, k, v = (g.reshape_4d(G, lin(name, x, E, E), D, H, n, 1) for name in ("q", "k", "v"))
        q, k = g.permute(G, rope(q), 0, 2, 1, 3), g.permute(G, rope(k), 0, 2, 1, 3)
        v = g.cont(G, g.permute(G, v, 1, 2, 0, 3))
        kq = g.scale(G, g.mul_mat(G, k, q), D ** -0.5)
        if il not in full:
            kq = g.add(G, kq, m3)
        kqv = g.mul_mat(G, v, g.soft_max(G, kq))
        a = g.reshape_3d(G, g.cont(G, g.permute(G, kqv, 0, 2, 1, 3)), E, n, 1)
        h = g.add(G, lin("o", a, E, E), res)
        res = h
        x = g.mul(G, g.rms_norm(G, h, 1e-6), wt("ln2", T_F32, E))
        x = g.swiglu_split(G, lin("gate", x, E, FF), lin("up", x, E, FF))
        h = g.add(G, lin("down", x, FF, E), res)
    x = g.reshape_3d(G, g.mul(G, g.rms_norm(G, h, 1e-6), wt("lnq", T_F32, E)), E * 4, n // 4, 1)
    x = g.get_rows(G, lin("mlp2", g.gelu(G, lin("mlp0", x, E * 4, E * 4)), E * 4, OUT), g.argsort(G, widx, 0))
    buft = g.backend_cpu_buffer_type()
    assert all(g.backend_alloc_ctx_tensors_from_buft(ctx, buft) for ctx in ((W,) if gpu else (W, IN)))
    g.build_forward_expand(gf, x)
    return _reserved_bytes(g, gf, buft, (W, IN, G))


@pytest.mark.parametrize("gh,gw,n_layer", [(70, 70, 32), (70, 70, 9), (20, 20, 9), (36, 52, 4), (8, 12, 3)])
@pytest.mark.parametrize("gpu", [False, True], ids=["cpu", "gpu-inputs"])
def test_qwen25vl_rotate_half_vision_replay_is_ggml_alloc(gh, gw, n_layer, gpu):
    """graph.py qwen25vl_rotate_half_vision_graph_bytes (v0.13.0-v0.13.3's encoder) against ggml_gallocr_reserve on
    the encoder built with ggml. qwen2.5vl:3b's 0.13.3 reserve (the 2048 x 2048 image at 28 x 28 x 1280 pixels: 70
    x 70 patches, 16 heads): 1,691,950,400 B on the CPU, 1,781,219,328 B with the inputs in the buffer (32-byte
    alignment; the 4900^2 x 16 f32 scores are 1.43 GiB of it)."""
    want = qwen25vl_rotate_half_vision_bytes(gh, gw, n_layer=n_layer, gpu=gpu)
    assert qwen25vl_rotate_half_vision_graph_bytes(gh, gw, 1280, 16, 3420, 2048, n_layer, (7, 15, 23, 31), gpu,
                                                   alignment=32) == want
    if (gh, n_layer) == (70, 32):
        assert want == (1781219328 if gpu else 1691950400)


_GPTOSS_SHAPES = [dict(T=512, full=32768, swa=16896, n_out=4, n_layer=6, NE=128), dict(T=512, full=16128, swa=4608),
                  dict(T=512, full=8192, swa=4608), dict(T=512, full=131072, swa=4608),
                  dict(T=1024, full=16128, swa=5120, n_out=2), dict(T=100, full=4096, swa=4196),
                  dict(T=300, full=20000, swa=4396, n_out=3), dict(T=2048, full=32768, swa=6144),
                  dict(T=128, full=2048, swa=2048)]


@pytest.mark.parametrize("mask_cast", [False, True], ids=["f16-mask-input", "mask-cast"])
@pytest.mark.parametrize("on_cpu", [True, False], ids=["cpu", "gpu-inputs"])
@pytest.mark.parametrize("shape", _GPTOSS_SHAPES, ids=[",".join(f"{k}={v}" for k, v in s.items())
                                                       for s in _GPTOSS_SHAPES])
def test_gptoss_replay_is_ggml_alloc(shape, on_cpu, mask_cast):
    """graph.py gptoss_graph_bytes (ggml-alloc replayed in Python) against ggml_gallocr_reserve on the gpt-oss graph
    built with ggml: on the CPU (the rows a get_rows node, the inputs in buffers of their own) and with every block
    on a GPU (the token rows, positions, masks and output index split inputs in the buffer), with the F16 reserve
    mask an input (v0.11.5-v0.12.6) or the f32 mask cast in the graph (v0.12.7+). gpt-oss:120b's shapes at 4 x 8192
    cells, 4 output rows (ollama/ollama#12752): 157.75 MiB on a GPU, the MoE rows' 109.25 MiB and both F16 masks
    (16.5 + 32 MiB) beside them."""
    from oomkit.engines.ollama.graph import gptoss_graph_bytes as replay

    a = dict(n_out=1, n_layer=4, NE=32)
    a.update(shape)
    want = gptoss_graph_bytes(a["T"], a["full"], a["swa"], n_out=a["n_out"], n_layer=a["n_layer"], NE=a["NE"],
                              V=1000, mask_cast=mask_cast, gpu_inputs=not on_cpu)
    assert replay(2880, 64, 8, 64, 2880, a["NE"], 4, a["n_layer"], 1000, a["T"], a["full"], a["swa"], a["n_out"],
                  mask_cast, on_cpu, alignment=32) == want


def test_gptoss_120b_gpu_replay_for_the_catalog_model():
    """The catalog's gpt-oss:120b (36 blocks, 128 experts), 512 tokens, 32768 / 16896 cells, 4 output rows, the F16
    masks inputs (v0.12.6): ggml-alloc on the 36-block graph, and the replay at CUDA's 128 B alignment."""
    from oomkit.engines.ollama.graph import gptoss_graph_replayed
    from oomkit.engines.ollama.weights import ollama_gguf

    spec = ollama_gguf(resolve("gpt-oss:120b", "MXFP4_MOE"))
    want = gptoss_graph_bytes(512, 32768, 16896, n_out=4, n_layer=36, NE=128, mask_cast=False, gpu_inputs=True)
    assert gptoss_graph_replayed(spec, 512, 32768, 16896, 4, False) == want + 96 == 165415040


def gemma3_embed_graph_ggml(T: int = 2048, swa: int = 2560, full: int = 2048, n_layer: int = 24, E: int = 768,
                            H: int = 3, KV: int = 1, D: int = 256, FF: int = 1152, V: int = 1000,
                            dense: tuple[int, ...] = (3072, 768), on_cpu: bool = False) -> int:
    """Ollama's EmbeddingGemma graph (model/models/gemma3/embed.go and model_text.go, v0.11.10-v0.11.11) without
    flash attention, built with ggml as the Go code builds it: the token rows scaled; per block attn_norm, Q / K / V,
    the Q and K norms, NeoX RoPE, Q scaled; the cache writes forwarded where nn.Attention calls Put (K's copy, V
    permuted into the PermutedV cache); the whole cache read back (the reserve's cell range), kq = K x Q in F32,
    soft_max_ext with the layer type's F32 mask, V x kq, a contiguous copy of its permutation; attn_output and
    post_attention_norm; on the last block the rows at every position (get_rows of the hidden state and the
    residual); ffn_norm, GELU in place on the gate, x up, ffn_down, post_ffw_norm; output_norm, mean pooling and
    the two dense projections. Every 6th block uses the global cache (full cells), the others the SWA cache.
    on_cpu=False: every block on a GPU, the token rows, masks, positions and output index the split's inputs (plain
    leafs of the buffer); on_cpu=True: get_rows of the CPU's token_embd in the buffer, the inputs in buffers of
    their own."""
    g = _Ggml()
    for name, (res, *args) in {"ggml_soft_max_ext": (P, P, P, P, F, F), "ggml_mean": (P, P, P),
                               "ggml_gelu_inplace": (P, P, P)}.items():
        f = getattr(g.base, name)
        f.restype, f.argtypes = res, args
        setattr(g, name[5:], f)
    W, G = (g.init(_Params(n * C.sizeof(C.c_void_p) * 64, None, True)) for n in (2000, 300000))
    w: dict = {}

    def wt(name, typ, *shape):
        if name not in w:
            w[name] = (g.new_tensor_1d, g.new_tensor_2d, g.new_tensor_3d)[len(shape) - 1](W, typ, *shape)
        return w[name]

    def norm(t, name, n):
        return g.mul(G, g.rms_norm(G, t, 1e-6), wt(name, T_F32, n))

    inputs = W if on_cpu else G
    caches = {il: (g.new_tensor_3d(W, T_F16, D, KV, full if (il + 1) % 6 == 0 else swa),
                   g.new_tensor_3d(W, T_F16, full if (il + 1) % 6 == 0 else swa, D, KV)) for il in range(n_layer)}
    if on_cpu:
        x = g.get_rows(G, wt("tok", T_BF16, E, V), g.new_tensor_1d(W, T_I32, T))
    else:
        x = g.new_tensor_2d(G, T_F32, E, T)
    masks = {False: g.new_tensor_2d(inputs, T_F32, swa, T), True: g.new_tensor_2d(inputs, T_F32, full, T)}
    pos, outs = g.new_tensor_1d(inputs, T_I32, T), g.new_tensor_1d(inputs, T_I32, T)
    gf = g.new_graph_custom(G, 65536, False)
    fwd = lambda *ts: [g.build_forward_expand(gf, t) for t in ts]  # noqa: E731
    x = g.scale(G, x, E ** 0.5)
    for il in range(n_layer):
        glob = (il + 1) % 6 == 0
        cells = full if glob else swa
        ck, cv = caches[il]
        res = x
        n = norm(x, "an", E)
        q = norm(g.reshape_3d(G, g.mul_mat(G, wt("q", T_BF16, E, H * D), n), D, H, T), "qn", D)
        q = g.scale(G, g.rope_ext(G, q, pos, None, D, 2, 2048, 1e4, 1., 0., 1., 32., 1.), D ** -0.5)
        k = norm(g.reshape_3d(G, g.mul_mat(G, wt("k", T_BF16, E, KV * D), n), D, KV, T), "kn", D)
        k = g.rope_ext(G, k, pos, None, D, 2, 2048, 1e4, 1., 0., 1., 32., 1.)
        v = g.reshape_3d(G, g.mul_mat(G, wt("v", T_BF16, E, KV * D), n), D, KV, T)
        fwd(g.cpy(G, k, g.view_1d(G, ck, D * KV * T, 0)))
        fwd(g.cpy(G, g.permute(G, v, 1, 2, 0, 3), g.view_3d(G, cv, T, D, KV, g.nb(cv, 1), g.nb(cv, 2), 0)))
        kk = g.view_3d(G, ck, D, KV, cells, g.nb(ck, 1), g.nb(ck, 2), 0)
        vv = g.view_3d(G, cv, cells, D, KV, g.nb(cv, 1), g.nb(cv, 2), 0)
        kq = g.soft_max_ext(G, g.mul_mat(G, g.permute(G, kk, 0, 2, 1, 3), g.permute(G, q, 0, 2, 1, 3)),
                            masks[glob], 1.0, 0.0)
        o = g.cont(G, g.permute(G, g.mul_mat(G, vv, kq), 0, 2, 1, 3))
        x = norm(g.mul_mat(G, wt("ao", T_BF16, H * D, E), g.reshape_2d(G, o, H * D, T)), "pan", E)
        if il == n_layer - 1:
            x, res = g.get_rows(G, x, outs), g.get_rows(G, res, outs)
        x = g.add(G, x, res)
        res = x
        n = norm(x, "fn", E)
        a = g.mul(G, g.gelu_inplace(G, g.mul_mat(G, wt("g", T_BF16, E, FF), n)),
                  g.mul_mat(G, wt("u", T_BF16, E, FF), n))
        x = g.add(G, norm(g.mul_mat(G, wt("d", T_BF16, FF, E), a), "pfn", E), res)
    x = g.cont(G, g.permute(G, norm(x, "on", E), 1, 0, 2, 3))
    x = g.cont(G, g.permute(G, g.mean(G, x), 1, 0, 2, 3))
    width = E
    for i, d in enumerate(dense):
        x, width = g.mul_mat(G, wt(f"dense{i}", T_BF16, width, d), x), d
    buft = g.backend_cpu_buffer_type()
    assert g.backend_alloc_ctx_tensors_from_buft(W, buft)
    fwd(x)
    return _reserved_bytes(g, gf, buft, (W, G))


_GEMMA3_EMBED_SHAPES = [dict(), dict(on_cpu=True), dict(T=512, swa=1024, full=4096),
                        dict(T=512, swa=1024, full=8192, on_cpu=True), dict(T=1000, swa=1512, full=1024),
                        dict(n_layer=6)]


@pytest.mark.parametrize("shape", _GEMMA3_EMBED_SHAPES, ids=[",".join(f"{k}={v}" for k, v in s.items()) or
                                                            "embeddinggemma-2048" for s in _GEMMA3_EMBED_SHAPES])
def test_gemma3_embed_replay_is_ggml_alloc(shape):
    """graph.py gemma3_embed_graph_bytes against ggml_gallocr_reserve on the graph built with ggml (32 B CPU
    alignment): EmbeddingGemma's widths (768, 3 heads of 256, 1 KV head, n_ff 1152), 24 blocks unless given."""
    a = dict(T=2048, swa=2560, full=2048, n_layer=24, on_cpu=False)
    a.update(shape)
    got = gemma3_embed_graph_ggml(**a)
    assert gemma3_embed_graph_bytes(768, 3, 1, 256, 1152, a["n_layer"], 1000, a["T"], a["swa"], a["full"],
                                    (3072, 768), a["on_cpu"], 32) == got


def test_gemma3_embed_replay_for_the_catalog_model():
    """EmbeddingGemma from the catalog as Ollama's GGUF names it (gemma3 with pooling): a 2048-token batch over
    the SWA cache (512 + 2048 cells) and the global one (2048): 113,262,592 B at CUDA's 128 B alignment, the
    108.0 MiB ollama/ollama#12247 prints for CUDA0; the causal gemma3 decoder is not this graph."""
    from oomkit.engines.ollama.weights import ollama_gguf

    spec = ollama_gguf(resolve("embeddinggemma", "BF16"))
    assert spec.architecture == "gemma3"
    assert gemma3_embed_graph_replayed(spec, 2048, 2560, 2048) == 113262592
    assert gemma3_embed_graph_replayed(ollama_gguf(resolve("gemma3:1b", "Q4_K_M")), 2048, 2560, 2048) is None


def pixtral_vision_bytes(px: int, n_layer: int, E: int = 1024, H: int = 16, FF: int = 4096, TH: int = 3072,
                         patch: int = 14, merge: int = 2, flash: bool = False) -> int:
    """Ollama's Pixtral encoder (model/models/mistral3 model_vision.go and model.go v0.13.1) on a px x px patch
    image, built with ggml as its Go code builds it: ggml_conv_2d, Reshape / Permute / Contiguous, the encoder
    RMSNorm; positionalEmbedding (the two frequency tables permuted and copied, Repeat against a template, the
    Concats, Rows at the position ids, Cos, Sin); per block RMSNorm, q/k/v, rotate-half RoPE (t x cos + concat(
    -contiguous(second half), first half) x sin), q and k permuted, v permuted and copied, kq = k x q scaled and
    softmaxed, kqv permuted back and copied, the output, the residual, RMSNorm, the SwiGLU MLP; then the projector
    (RMSNorm, the copy to [patches, hidden], IM2Col on the merge kernel, merging_layer, linear_1, GELU in place,
    linear_2) and a row view. The inputs (pixels, tables, ids, kernel) are leaves in the compute buffer, as the
    scheduler copies them into a GPU's at the split's start. flash: v0.13.2+ with flash attention (1108d8b34,
    ScaledDotProductAttention's flash branch): q, k and v permuted into ggml_flash_attn_ext, its output reshaped."""
    g = _Ggml()
    extra = {"ggml_concat": (P, P, P, P, INT), "ggml_cos": (P, P, P), "ggml_sin": (P, P, P),
             "ggml_repeat": (P, P, P, P), "ggml_gelu_inplace": (P, P, P),
             "ggml_im2col": (P, P, P, P, INT, INT, INT, INT, INT, INT, C.c_bool, INT)}
    for name, (res, *args) in extra.items():
        f = getattr(g.base, name)
        f.restype, f.argtypes = res, args
        setattr(g, name[5:], f)
    side, n, D = px * patch, px * px, E // H
    fq = D // 4
    W, G = (g.init(_Params(k * C.sizeof(C.c_void_p) * 64, None, True)) for k in (4000, 200000))
    w: dict = {}

    def wt(name, typ, *shape):
        if name not in w:
            w[name] = (g.new_tensor_1d, g.new_tensor_2d, g.new_tensor_3d, g.new_tensor_4d)[len(shape) - 1](W, typ, *shape)
        return w[name]

    def lin(name, x, i, o):
        return g.mul_mat(G, wt(name, T_F16, i, o), x)

    def norm(name, x):
        return g.mul(G, g.rms_norm(G, x, 1e-5), wt(name, T_F32, E))

    pix, f_h, f_w = g.new_tensor_3d(G, T_F32, side, side, 3), g.new_tensor_2d(G, T_F32, px, fq), \
        g.new_tensor_2d(G, T_F32, px, fq)
    ids, kernel = g.new_tensor_1d(G, T_I32, n), g.new_tensor_3d(G, T_F32, merge, merge, E)
    gf = g.new_graph_custom(G, 65536, False)
    h = g.conv_2d(G, wt("patch", T_F16, patch, patch, 3, E), pix, patch, patch, 0, 0, 1, 1)
    h = norm("ln_pre", g.cont(G, g.permute(G, g.reshape_2d(G, h, n, E), 1, 0, 2, 3)))
    hh = g.repeat(G, g.cont(G, g.permute(G, f_h, 1, 0, 2, 3)), g.new_tensor_2d(G, T_F32, fq, n))
    hh = g.cont(G, g.permute(G, g.reshape_3d(G, hh, fq, px, px), 0, 2, 1, 3))
    ww = g.repeat(G, g.cont(G, g.permute(G, f_w, 1, 0, 2, 3)), g.new_tensor_3d(G, T_F32, fq, px, px))
    freqs = g.reshape_2d(G, g.concat(G, hh, ww, 0), 2 * fq, n)
    pe = g.get_rows(G, g.concat(G, freqs, freqs, 0), ids)
    cos, sin = g.reshape_3d(G, g.cos(G, pe), D, 1, n), g.reshape_3d(G, g.sin(G, pe), D, 1, n)

    def rope(t):
        x1 = g.view_4d(G, t, D // 2, H, n, 1, g.nb(t, 1), g.nb(t, 2), g.nb(t, 3), 0)
        x2 = g.cont(G, g.view_4d(G, t, D // 2, H, n, 1, g.nb(t, 1), g.nb(t, 2), g.nb(t, 3), D // 2 * 4))
        return g.add(G, g.mul(G, t, cos), g.mul(G, g.concat(G, g.scale(G, x2, -1.0), x1, 0), sin))

    for _ in range(n_layer):
        res = h
        x = norm("ln1", h)
        q, k, v = (g.reshape_4d(G, lin(name, x, E, E), D, H, n, 1) for name in ("q", "k", "v"))
        q, k = g.permute(G, rope(q), 0, 2, 1, 3), g.permute(G, rope(k), 0, 2, 1, 3)
        if flash:
            a = g.flash_attn_ext(G, q, k, g.permute(G, v, 0, 2, 1, 3), None, D ** -0.5, 0.0, 0.0)
            a = g.reshape_3d(G, a, E, n, 1)
        else:
            v = g.cont(G, g.permute(G, v, 1, 2, 0, 3))
            kqv = g.mul_mat(G, v, g.soft_max(G, g.scale(G, g.mul_mat(G, k, q), D ** -0.5)))
            a = g.reshape_3d(G, g.cont(G, g.permute(G, kqv, 0, 2, 1, 3)), E, n, 1)
        h = g.add(G, lin("o", a, E, E), res)
        res = h
        x = norm("ln2", h)
        h = g.add(G, lin("down", g.swiglu_split(G, lin("gate", x, E, FF), lin("up", x, E, FF)), FF, E), res)
    m = px // merge
    h = g.reshape_3d(G, g.cont(G, g.permute(G, norm("mm_norm", h), 1, 0, 2, 3)), px, px, E)
    x = g.reshape_2d(G, g.im2col(G, kernel, h, merge, merge, 0, 0, 1, 1, True, T_F32), merge * merge * E, m * m)
    x = lin("l2", g.gelu_inplace(G, lin("l1", lin("merge", x, merge * merge * E, E), E, TH)), TH, TH)
    x = g.view_4d(G, x, TH, m, 1, 1, g.nb(x, 1), g.nb(x, 1) * m, g.nb(x, 1) * m, 0)
    buft = g.backend_cpu_buffer_type()
    assert g.backend_alloc_ctx_tensors_from_buft(W, buft)
    g.build_forward_expand(gf, x)
    return _reserved_bytes(g, gf, buft, (W, G))


@pytest.mark.parametrize("flash", [False, True], ids=["by-hand", "flash"])
@pytest.mark.parametrize("px,n_layer", [(20, 2), (36, 3), (110, 1)])
def test_pixtral_vision_replay_is_ggml_alloc(px, n_layer, flash):
    """graph.py pixtral_vision_graph_bytes (the replay) against ggml_gallocr_reserve on the encoder built with ggml,
    the inputs in the buffer: equal. At 110 x 110 patches (the 2048 x 2048 reserve image at Pixtral's 1540 / 14) the
    peak is the first block's scores, so one block sizes the whole encoder: 9,646,586,080 B at the CPU's 32 B
    alignment (9,646,586,240 at CUDA's 128), 21.9 MB under the 9,668,469,760 B ollama/ollama#13303 and #13312 print
    (tests/test_verdicts_llamacpp_ollama.py): the difference is not ggml-alloc's placement of this node list. With
    flash attention (v0.13.2+) no scores: 771,962,080 B, the SwiGLU rows (gate, up and their product, 4096 wide)
    above the residual."""
    want = pixtral_vision_bytes(px, n_layer, flash=flash)
    assert pixtral_vision_graph_bytes(px * 14, 14, 1024, 16, 4096, n_layer, 2, 3072, True, alignment=32,
                                      flash_attention=flash) == want
    if px == 110:
        assert want == (771962080 if flash else 9646586080)


def siglip_vision_bytes(px: int, n_layer: int, E: int = 1152, H: int = 16, FF: int = 4304, TH: int = 2560,
                        patch: int = 14, tokens: int = 256, flash: bool = False, conv_bias: bool = False) -> int:
    """Ollama's gemma3 vision encoder (SigLIP) and projector (model/models/gemma3 model_vision.go and model.go
    v0.12.3+) on a px x px patch image on the CPU, built with ggml as its Go code builds it: the final Mulmat's
    transposed projection weight copy, ggml_conv_2d (+ the bias from v0.12.7), Reshape / Permute / Contiguous, the
    position embedding's get_rows at the I32 ids, added; per block LayerNorm (norm, weight, bias), q/k/v with
    biases, the scores by hand (k x q scaled, softmaxed; V permuted and copied; kqv permuted back and copied) or
    (flash) ggml_flash_attn_ext on the permuted q, k, v, the output with its bias, the residual, LayerNorm, fc1 +
    bias, GELU in place, fc2 + bias, the residual; the post LayerNorm; the projector's Permute / Contiguous,
    average pooling to the tokens, Permute / Contiguous, RMSNorm, the Mulmat. The inputs (pixels, ids) have
    buffers of their own."""
    g = _Ggml()
    extra = {"ggml_norm": (P, P, P, F), "ggml_gelu_inplace": (P, P, P),
             "ggml_pool_2d": (P, P, P, INT, INT, INT, INT, INT, F, F)}
    for name, (res, *args) in extra.items():
        f = getattr(g.base, name)
        f.restype, f.argtypes = res, args
        setattr(g, name[5:], f)
    side, n, D, m = px * patch, px * px, E // H, int(round(tokens ** 0.5))
    W, IN, G = (g.init(_Params(k * C.sizeof(C.c_void_p) * 64, None, True)) for k in (4000, 400, 200000))
    w: dict = {}

    def wt(name, typ, *shape):
        if name not in w:
            w[name] = (g.new_tensor_1d, g.new_tensor_2d, g.new_tensor_3d, g.new_tensor_4d)[len(shape) - 1](W, typ, *shape)
        return w[name]

    def lin(name, x, i, o):
        return g.add(G, g.mul_mat(G, wt(name, T_F16, i, o), x), wt(name + "b", T_F32, o))

    def layer_norm(name, x):
        return g.add(G, g.mul(G, g.norm(G, x, 1e-6), wt(name, T_F32, E)), wt(name + "b", T_F32, E))

    pix, ids = g.new_tensor_3d(IN, T_F32, side, side, 3), g.new_tensor_1d(IN, T_I32, n)
    gf = g.new_graph_custom(G, 65536, False)
    proj = g.cont(G, g.permute(G, wt("mm_input_projection", T_F16, TH, E), 1, 0, 2, 3))
    h = g.conv_2d(G, wt("patch", T_F16, patch, patch, 3, E), pix, patch, patch, 0, 0, 1, 1)
    if conv_bias:
        h = g.add(G, h, g.reshape_3d(G, wt("patchb", T_F32, E), 1, 1, E))
    h = g.cont(G, g.permute(G, g.reshape_2d(G, h, n, E), 1, 0, 2, 3))
    h = g.add(G, h, g.get_rows(G, wt("position_embd", T_F32, E, n), ids))
    for _ in range(n_layer):
        res = h
        x = layer_norm("ln1", h)
        q, k, v = (g.reshape_4d(G, lin(name, x, E, E), D, H, n, 1) for name in ("q", "k", "v"))
        q, k = g.permute(G, q, 0, 2, 1, 3), g.permute(G, k, 0, 2, 1, 3)
        if flash:
            a = g.flash_attn_ext(G, q, k, g.permute(G, v, 0, 2, 1, 3), None, D ** -0.5, 0.0, 0.0)
        else:
            v = g.cont(G, g.permute(G, v, 1, 2, 0, 3))
            kqv = g.mul_mat(G, v, g.soft_max(G, g.scale(G, g.mul_mat(G, k, q), D ** -0.5)))
            a = g.cont(G, g.permute(G, kqv, 0, 2, 1, 3))
        h = g.add(G, lin("o", g.reshape_3d(G, a, E, n, 1), E, E), res)
        res = h
        h = g.add(G, lin("fc2", g.gelu_inplace(G, lin("fc1", layer_norm("ln2", h), E, FF)), FF, E), res)
    h = layer_norm("post", h)
    h = g.reshape_3d(G, g.cont(G, g.permute(G, h, 1, 0, 2, 3)), px, px, E)
    h = g.pool_2d(G, h, 1, px // m, px // m, px // m, px // m, 0.0, 0.0)  # GGML_OP_POOL_AVG
    h = g.cont(G, g.permute(G, g.reshape_2d(G, h, m * m, E), 1, 0, 2, 3))
    h = g.mul(G, g.rms_norm(G, h, 1e-6), wt("soft_emb_norm", T_F32, E))
    x = g.mul_mat(G, proj, h)
    buft = g.backend_cpu_buffer_type()
    assert all(g.backend_alloc_ctx_tensors_from_buft(ctx, buft) for ctx in (W, IN))
    g.build_forward_expand(gf, x)
    return _reserved_bytes(g, gf, buft, (W, IN, G))


@pytest.mark.parametrize("flash", [False, True], ids=["by-hand", "flash"])
@pytest.mark.parametrize("px,n_layer,conv_bias", [(16, 2, True), (32, 3, False), (64, 27, False), (64, 2, True)])
def test_siglip_vision_replay_is_ggml_alloc(px, n_layer, conv_bias, flash):
    """graph.py siglip_vision_graph_bytes (the replay) against ggml_gallocr_reserve on the gemma3 encoder built
    with ggml, on the CPU: equal. gemma3:4b's reserve (896 / 14 = 64 x 64 patches, 27 blocks, no conv bias as in
    v0.12.3): 1,174,011,904 B, the "1.1 GiB" ollama/ollama#12303 prints (tests/test_ollama_new_engine.py)."""
    want = siglip_vision_bytes(px, n_layer, flash=flash, conv_bias=conv_bias)
    assert siglip_vision_graph_bytes(px * 14, 14, 1152, 16, 4304, n_layer, 256, 2560, False, alignment=32,
                                     flash_attention=flash, conv_bias=conv_bias) == want
    if (px, n_layer, flash) == (64, 27, False):
        assert want == 1174011904
