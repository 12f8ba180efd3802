"""Ground truth for galloc.chunk_sizes: ggml-alloc's graph allocation split into chunks when the buffer type has a
maximum size (ggml_backend_buft_get_max_size; Vulkan's suballocation block, 1 GiB by default, from llama.cpp PR #15815,
in ggml b6646 and Ollama v0.12.4).

The binding runs only the CPU backend, whose buffer type has no maximum. ggml_gallocr_new_n takes any buffer type,
so these tests hand it a copy of the CPU buffer type whose get_max_size returns the limit under test, build
attention graphs with the binding's ggml (KQ scores without flash attention, softmax in place, a SwiGLU FFN, the
logits as the last node), and size them with ggml_gallocr_reserve_n_size (no memory is allocated). The same graph,
read back node by node (sizes, sources, views, in-place ops, outputs), is replayed by galloc.

Two allocators:
- the binding's ggml (llama.cpp@0c1e57098): the last-block choice of PR #16788 (prefer the chunk whose freed space
  the tensor reuses), galloc's prefer_reuse=True;
- Ollama v0.12.4-v0.13.1 (the chunks of PR #15815 before #16788: the first chunk whose free tail fits),
  prefer_reuse=False: OLLAMA_0129 holds the totals ggml-alloc reserves for the same graphs when ggml-base is built
  from Ollama v0.12.9's vendored source (ml/backend/ggml/ggml/src: ggml.c, ggml-alloc.c, ggml-backend.cpp, ...,
  gcc -O1) and the graphs are reserved through ggml_gallocr_reserve with the same max-size buffer type.

The Ollama engine's gpt-oss graph on Vulkan (graph.py gptoss_vulkan_gpu_graph) is held to Ollama's own scheduler
and ggml-alloc (OLLAMA_GPTOSS_PARTIAL, OLLAMA_GPTOSS_FULL: ggml-base of v0.12.9 and v0.13.2 built from source, the
graph rebuilt node for node beside a stand-in Vulkan0; tests/groundtruth/ollama_vulkan_reserve.c), and through it
to ollama/ollama#12913's printed total (tests/test_ollama_new_engine.py). The llama.cpp engine's Vulkan rule
(compute.vulkan_chunked_scores) is held to llama.cpp's own gpt-oss graph in the binding, its "compute buffer size"
printed with ggml-alloc given a 1 GiB buffer limit (LLAMACPP_GPTOSS; tests/groundtruth/max_buffer_size.c).
"""

from __future__ import annotations

import ctypes as C

import pytest

from oomkit.engines import llamacpp as lc
from oomkit.engines import ollama as ol
from oomkit.engines.llamacpp import galloc
from oomkit.engines.ollama.graph import gptoss_vulkan_gpu_graph
from oomkit.memory import Device
from oomkit.model.resolve import resolve
from tests.test_ollama_graph_ggml import _LIB, T_F16, T_F32, T_I32, _Ggml, _Params

needs_ggml = pytest.mark.skipif(_LIB is None or not (_LIB / "libggml-base.so").exists(),
                                reason="llama-cpp-python's ggml libraries not installed")

P, I64, F = C.c_void_p, C.c_int64, C.c_float
MiB, KiB = 1 << 20, 1 << 10
_MAX_SIZE = C.CFUNCTYPE(C.c_size_t, P)

# (tokens, cells, heads, kv heads, head dim, n_embd, layers): "kq" has 64 MiB of KQ scores beside a 2.75 MiB rest,
# "wide" 32 MiB of scores and 15.6 MiB of logits, "small" logits (7.8 MiB) above its 4 MiB of scores
GRAPHS = {"kq": dict(T=64, cells=16384, H=16, KV=2, D=64, E=512, L=4), "small": dict(),
          "wide": dict(T=128, cells=4096, H=16, E=1024, L=4), "long": dict(T=32, cells=8192, H=4, KV=4, D=128, E=512, L=2)}
MAXES = (None, 32 * MiB, 8 * MiB, 4 * MiB, 2 * MiB, MiB, 512 * KiB)

# Ollama v0.12.9's ggml-alloc (built from its vendored source, see above) on these graphs, bytes
OLLAMA_0129 = {
    ("kq", None): 69992704, ("kq", 32 * MiB): 75431936, ("kq", 8 * MiB): 75431936, ("kq", 4 * MiB): 70254848,
    ("kq", 2 * MiB): 70254848, ("kq", MiB): 70254592, ("kq", 512 * KiB): 70123776,
    ("small", None): 8323072, ("small", 32 * MiB): 8323072, ("small", 8 * MiB): 8323072,
    ("small", 4 * MiB): 13697280, ("small", 2 * MiB): 13697280, ("small", MiB): 13434880,
    ("small", 512 * KiB): 13304064,
    ("wide", None): 36700672, ("wide", 32 * MiB): 50462720, ("wide", 8 * MiB): 37224960,
    ("wide", 4 * MiB): 37224960, ("wide", 2 * MiB): 37486592, ("wide", MiB): 37486592,
    ("wide", 512 * KiB): 37224448,
    ("long", None): 4980864, ("long", 32 * MiB): 4980864, ("long", 8 * MiB): 4980864, ("long", 4 * MiB): 8355840,
    ("long", 2 * MiB): 5243008, ("long", MiB): 5046400, ("long", 512 * KiB): 5242880,
}


class _LimitedBuft:
    """A copy of the CPU buffer type (struct ggml_backend_buffer_type: six interface pointers, the device, the
    context) whose get_max_size returns max_size."""

    def __init__(self, g: _Ggml, max_size: int):
        self._cb = _MAX_SIZE(lambda _buft: max_size)
        self.struct = (P * 8)(*(P * 8).from_address(g.backend_cpu_buffer_type()))
        self.struct[3] = C.cast(self._cb, P)
        self.ptr = C.addressof(self.struct)


def _fn(g: _Ggml, name: str, res, *args):
    f = getattr(g.base, name)
    f.restype, f.argtypes = res, list(args)
    return f


def _binding_reserve(g: _Ggml, gf: int, max_size: int | None) -> int:
    """What the binding's ggml-alloc reserves for the graph in buffers of at most max_size bytes."""
    buft = _LimitedBuft(g, max_size or (1 << 64) - 1)
    new_n = _fn(g, "ggml_gallocr_new_n", P, P, C.c_int)
    size_n = _fn(g, "ggml_gallocr_reserve_n_size", None, P, P, P, P, C.POINTER(C.c_size_t))
    ga = new_n((P * 1)(buft.ptr), 1)
    sizes = (C.c_size_t * 1)()
    try:
        size_n(ga, gf, None, None, sizes)
    finally:
        g.gallocr_free(ga)
    return sizes[0]


def _attn_graph(g: _Ggml, T=64, cells=2048, H=8, KV=2, D=64, E=512, FF=1536, L=3, V=32000):
    """A llama-style graph without flash attention: per layer RMS norm, Q/K/V, RoPE, the cache writes, KQ =
    K x Q over every cell (F32), softmax with the mask in place, KQV, the output projection, the residual, a SwiGLU
    FFN; the final norm and the logits. Weights and the cache sit in a buffer of their own."""
    soft_max_ext = _fn(g, "ggml_soft_max_ext", P, P, P, P, F, F)
    cont_2d = _fn(g, "ggml_cont_2d", P, P, P, I64, I64)
    silu = _fn(g, "ggml_silu", P, P, P)
    W, G = (g.init(_Params(n * C.sizeof(C.c_void_p) * 64, None, True)) for n in (400, 20000))
    w: dict = {}

    def wt(name, *shape):
        if name not in w:
            typ = T_F32 if len(shape) == 1 else T_F16
            w[name] = (g.new_tensor_1d, g.new_tensor_2d)[len(shape) - 1](W, typ, *shape)
        return w[name]

    ck, cv = g.new_tensor_3d(W, T_F16, D, KV, cells), g.new_tensor_3d(W, T_F16, cells, D, KV)
    x, pos, mask = g.new_tensor_2d(G, T_F32, E, T), g.new_tensor_1d(G, T_I32, T), g.new_tensor_2d(G, T_F16, cells, T)
    gf = g.new_graph_custom(G, 8192, False)
    fwd = lambda *ts: [g.build_forward_expand(gf, t) for t in ts]  # noqa: E731
    for _ in range(L):
        res = x
        n = g.mul(G, g.rms_norm(G, x, 1e-6), wt("an", E))
        q = g.reshape_3d(G, g.mul_mat(G, wt("q", E, H * D), n), D, H, T)
        k = g.reshape_3d(G, g.mul_mat(G, wt("k", E, KV * D), n), D, KV, T)
        v = g.mul_mat(G, wt("v", E, KV * D), n)
        q = g.rope_ext(G, q, pos, None, D, 2, 4096, 1e4, 1., 0., 1., 32., 1.)
        k = g.rope_ext(G, k, pos, None, D, 2, 4096, 1e4, 1., 0., 1., 32., 1.)
        fwd(q)
        fwd(k, v)
        fwd(g.cpy(G, k, g.view_1d(G, ck, D * KV * T, 0)))
        fwd(g.cpy(G, v, g.view_1d(G, cv, D * KV * T, 0)))
        kk = g.view_3d(G, ck, D, cells, KV, g.nb(ck, 2), g.nb(ck, 1), 0)
        vv = g.view_3d(G, cv, cells, D, KV, g.nb(cv, 1), g.nb(cv, 2), 0)
        kq = soft_max_ext(G, g.mul_mat(G, kk, g.permute(G, q, 0, 2, 1, 3)), mask, D ** -0.5, 0.)  # [cells, T, H]
        o = cont_2d(G, g.permute(G, g.mul_mat(G, vv, kq), 0, 2, 1, 3), H * D, T)
        x = g.add(G, g.mul_mat(G, wt("ao", H * D, E), o), res)
        res = x
        n = g.mul(G, g.rms_norm(G, x, 1e-6), wt("fn", E))
        a = g.mul(G, silu(G, g.mul_mat(G, wt("g", E, FF), n)), g.mul_mat(G, wt("u", E, FF), n))
        x = g.add(G, g.mul_mat(G, wt("d", FF, E), a), res)
    logits = g.mul_mat(G, wt("out", E, V), g.mul(G, g.rms_norm(G, x, 1e-6), wt("on", E)))
    assert g.backend_alloc_ctx_tensors_from_buft(W, g.backend_cpu_buffer_type())
    fwd(logits)
    return gf, (W, G)


def _nodes(g: _Ggml, gf: int) -> tuple[int, list[galloc.Node]]:
    """The graph as galloc reads it: the leafs ggml-alloc places (no buffer, no data, not views), then the nodes
    in order. struct ggml_tensor: buffer at 8, ne at 16, nb at 48, op at 80, flags at 148, src at 152, view_src at
    232, data at 248; struct ggml_cgraph: n_nodes at 4, n_leafs at 8, nodes at 16, leafs at 40."""
    nbytes = _fn(g, "ggml_nbytes", C.c_size_t, P)
    can_inplace = _fn(g, "ggml_op_can_inplace", C.c_bool, C.c_int)

    def at(t, off, typ):
        return typ.from_address(t + off).value

    def external(t):
        return bool(at(t, 8, P) or at(t, 248, P))

    def layout(t):
        return at(t, 0, C.c_int), [at(t, 16 + 8 * i, C.c_int64) for i in range(4)], [at(t, 48 + 8 * i, C.c_size_t) for i in range(4)]

    def root(t):
        while at(t, 232, P):
            t = at(t, 232, P)
        return t

    n_nodes, n_leafs = (C.c_int * 3).from_address(gf)[1:3]
    nodes = C.cast(at(gf, 16, P), C.POINTER(P))
    leafs = C.cast(at(gf, 40, P), C.POINTER(P))
    idx: dict[int, int] = {}
    out: list[galloc.Node] = []
    for t in (leafs[i] for i in range(n_leafs)):
        if not external(t) and not at(t, 232, P):
            idx[t] = len(out)
            out.append(galloc.Node(nbytes(t)))
    n_inputs = len(out)
    for t in (nodes[i] for i in range(n_nodes)):
        srcs = [s for s in (at(t, 152 + 8 * i, P) for i in range(10)) if s in idx]
        view = -1
        if at(t, 232, P):
            if root(t) not in idx:  # a view of the cache or a weight: nothing of this buffer
                idx[t] = len(out)
                out.append(galloc.Node(0, tuple(idx[s] for s in srcs)))
                continue
            view = idx[root(t)]
        inplace = can_inplace(at(t, 80, C.c_int)) and any(layout(s) == layout(t) for s in srcs)
        idx[t] = len(out)
        out.append(galloc.Node(0 if external(t) else nbytes(t), tuple(idx[s] for s in srcs), bool(inplace), view,
                               bool(at(t, 148, C.c_int) & 2)))  # GGML_TENSOR_FLAG_OUTPUT
    return n_inputs, out


@pytest.fixture(scope="module")
def graphs():
    g = _Ggml()
    built = {name: _attn_graph(g, **kw) for name, kw in GRAPHS.items()}
    yield g, {name: (gf, _nodes(g, gf)) for name, (gf, _) in built.items()}
    for _, ctxs in built.values():
        for ctx in ctxs:
            g.free(ctx)


@pytest.mark.parametrize("name", list(GRAPHS))
@needs_ggml
def test_one_buffer_without_a_maximum(graphs, name):
    """No maximum: one chunk, the flat replay (peak_bytes) and the binding agree to the byte."""
    g, built = graphs
    gf, (n_in, nodes) = built[name]
    flat = _binding_reserve(g, gf, None)
    assert galloc.chunk_sizes(n_in, nodes, None) == (flat,)
    assert galloc.peak_bytes(n_in, nodes) == flat == OLLAMA_0129[(name, None)]


@pytest.mark.parametrize("max_size", MAXES[1:])
@pytest.mark.parametrize("name", list(GRAPHS))
@needs_ggml
def test_chunks_as_the_binding_reserves_them(graphs, name, max_size):
    """PR #16788's allocator (the binding's ggml): the chunks' total equals ggml_gallocr_reserve_n_size's."""
    g, built = graphs
    gf, (n_in, nodes) = built[name]
    assert sum(galloc.chunk_sizes(n_in, nodes, max_size, prefer_reuse=True)) == _binding_reserve(g, gf, max_size)


@pytest.mark.parametrize("max_size", MAXES[1:])
@pytest.mark.parametrize("name", list(GRAPHS))
@needs_ggml
def test_chunks_as_ollama_0_12_9_reserves_them(graphs, name, max_size):
    """PR #15815's allocator before #16788 (Ollama v0.12.4-v0.13.1): the first chunk whose free tail fits."""
    _, built = graphs
    _, (n_in, nodes) = built[name]
    assert sum(galloc.chunk_sizes(n_in, nodes, max_size, prefer_reuse=False)) == OLLAMA_0129[(name, max_size)]


@needs_ggml
def test_scores_above_the_maximum_get_a_chunk_of_their_own(graphs):
    """The 64 MiB KQ scores of the "kq" graph exceed every maximum tried: ggml_dyn_tallocr_new_chunk gives them a
    chunk of exactly their size, reused by the next layer's scores once freed. In one buffer the rest of the graph
    sits below the scores (67108864 + 2883840 B); in chunks the rest's own high-water mark adds to them instead: with
    Ollama v0.12.9's allocator 262144 B more at a 4 MiB maximum, and 5439232 B more at 32 MiB, where the 7.8 MiB
    logits no longer land in the freed scores (the first chunk's tail fits them) but above the rest."""
    _, built = graphs
    _, (n_in, nodes) = built["kq"]
    scores = 16384 * 64 * 16 * 4
    for max_size in (32 * MiB, 4 * MiB):
        old = galloc.chunk_sizes(n_in, nodes, max_size, prefer_reuse=False)
        assert old.count(scores) == 1 and len(old) == 2
    flat = OLLAMA_0129[("kq", None)]
    assert OLLAMA_0129[("kq", 4 * MiB)] - flat == 262144
    assert OLLAMA_0129[("kq", 32 * MiB)] - flat == 5439232


# Ollama's gpt-oss worst-case graph without flash attention (model/models/gptoss/model.go with separate q/k/v and
# gate/up experts, as oomkit's gpt-oss:20b and the 1445 nodes ollama/ollama#12913 prints; kvcache/causal.go with
# PermutedV and the f32 masks as inputs; 24 blocks, the last ones on the GPU) reserved by Ollama's own
# ggml_backend_sched and ggml-alloc, ggml-base built from Ollama v0.12.9's and v0.13.2's vendored source (the same
# bytes with both), beside a stand-in Vulkan0 device (ggml-vulkan's offload_op: ne[1] >= 32, or ne[2] for
# MUL_MAT_ID; its buffer type's max size 1 GiB or none) and a CPU device; ggml_backend_sched_get_attempted_buffer_size
# of Vulkan0, bytes (tests/groundtruth/ollama_vulkan_reserve.c). (tokens, full cells, sliding-window cells) ->
# bytes in one buffer with blocks 0-13 on the CPU (the same with 1, 12, 20 or 23 blocks there); at 512 tokens the
# same in 1 GiB chunks with both releases' allocators; at 1024 tokens in chunks v0.12.9 reserves 36430118912 /
# 5895585792 / 36361961472 / 5827428352 B and v0.13.2 35631661056 / 5566889984 / 35564552192 / 5499781120 B for the
# four keys below in order (the sliding-window scores, 1152 MiB, in chunks of their own). The CPU buffer is 47251360 B
# (45.06 MiB) with v0.12.9, as ollama/ollama#12913 prints, 47194112 B with v0.13.2.
OLLAMA_GPTOSS_PARTIAL = {
    (512, 131072, 4608): 17813489664, (512, 65536, 4608): 9223555072, (512, 32768, 4608): 4928587776,
    (512, 8192, 4608): 1707362304, (512, 16384, 4608): 2781104128, (512, 131072, 4352): 17779410944,
    (512, 16384, 4352): 2747025408, (1024, 131072, 4608): 35626962944, (1024, 16384, 4608): 5562191872,
    (1024, 131072, 4352): 35558805504, (1024, 16384, 4352): 5494034432,
}
# every block on Vulkan0, 512 tokens, 4608 sliding-window cells: full cells -> (one buffer, 1 GiB chunks)
OLLAMA_GPTOSS_FULL = {131072: (17486317600, 18090297376), 32768: (4400089120, 5004068896),
                      8192: (1128532000, 1732511776)}


@pytest.mark.parametrize("key", list(OLLAMA_GPTOSS_PARTIAL))
def test_gptoss_blocks_on_the_cpu_put_block_0s_scores_below(key):
    """Block 0 runs on Vulkan0 by op_offload: its sliding-window KQ scores, then its copied mask above them, so each
    full layer's scores sit above both; the same in chunks while those scores fit one (Ollama's scheduler, above)."""
    T, full, swa = key
    spec = resolve("gpt-oss:20b", "MXFP4_MOE")
    assert gptoss_vulkan_gpu_graph(spec, T, full, swa, 0, 0, chunked=False)[0] == OLLAMA_GPTOSS_PARTIAL[key]
    chunks = gptoss_vulkan_gpu_graph(spec, T, full, swa, 0, 0, chunked=True)
    if T == 512:
        assert chunks[0] == OLLAMA_GPTOSS_PARTIAL[key]
    else:  # 1152 MiB of sliding-window scores in chunks: not modelled
        assert chunks is None


@pytest.mark.parametrize("full", list(OLLAMA_GPTOSS_FULL))
def test_gptoss_every_block_on_vulkan_in_chunks(full):
    """Every block on Vulkan0: the full layers' scores (1 GiB or more) take a chunk of their own and the
    sliding-window layers' 576 MiB of scores, which reused their space in one buffer, add to the first chunk:
    + 603979776 B at 131072, 32768 and 8192 cells."""
    spec = resolve("gpt-oss:20b", "MXFP4_MOE")
    flat, chunks = OLLAMA_GPTOSS_FULL[full]
    assert gptoss_vulkan_gpu_graph(spec, 512, full, 4608, 0, flat, chunked=True)[1] == chunks
    assert gptoss_vulkan_gpu_graph(spec, 512, full, 4608, 0, flat, chunked=False)[1] == flat


def test_gptoss_fewer_tokens_keep_the_closed_forms():
    """At 256 tokens Ollama's scheduler gives 8873198592 B (131072 / 4608 cells), 32 MiB below the rule: the freed
    blocks take the mask; below 512 tokens the rule is not applied."""
    spec = resolve("gpt-oss:20b", "MXFP4_MOE")
    assert gptoss_vulkan_gpu_graph(spec, 256, 131072, 4608, 0, 0, chunked=True) is None


@pytest.mark.parametrize("num_gpu,full", [(10, 131072), (10, 32768), (25, 131072), (25, 32768)])
def test_ollama_engine_gptoss_on_vulkan(num_gpu, full):
    """The Ollama engine at v0.12.9 (gpt-oss:20b, flash attention off, Vulkan): blocks left on the CPU give the
    measured figure exactly; with every block on the GPU the closed forms' one-buffer graph plus the chunked
    sliding-window scores: 9.63 MiB above the measured chunks (the closed forms' one-buffer excess: 16685.88 MiB for
    the measured 16676.25 at 131072 cells), +0.06% at 131072 and +0.20% at 32768 cells; held within 1%."""
    dev = Device(id="Vulkan0", name="GPU", memory_bytes=80 * 2**30, free_bytes=80 * 2**30)
    est = ol.ENGINE.estimate(resolve("gpt-oss:20b", "MXFP4_MOE"), (dev,),
                             ol.OllamaSettings(num_ctx=full, num_parallel=1, num_gpu=num_gpu, flash_attention="0",
                                               library="vulkan", engine_version="0.12.9"))
    got = est.engine_view["ollama_memory"]["compute graph"]["Vulkan0"]
    if num_gpu < 25:
        assert got == OLLAMA_GPTOSS_PARTIAL[(512, full, 4608)]
    else:
        want = OLLAMA_GPTOSS_FULL[full][1]
        assert abs(got - want) / want < 0.01, (got, want)


# llama.cpp's own gpt-oss-20b graph (the pinned binding, the 24-layer MXFP4 file, -ub 512 -np 1 -fa off, every layer
# on one device) as its log prints "CPU compute buffer size", MiB: in one buffer, and with ggml-alloc given a 1 GiB
# buffer limit (ggml_backend_buft_get_max_size interposed by an LD_PRELOAD library, as Vulkan's suballocation block
# would set it; tests/groundtruth/max_buffer_size.c). n_ctx -> (one buffer, chunks)
LLAMACPP_GPTOSS = {131072: (16678.39, 16774.39), 65536: (8358.39, 8454.39), 32768: (4198.39, 4294.39),
                   16384: (2118.39, 2214.39), 8192: (1078.39, 1174.39)}


def _llamacpp_gptoss(n_ctx: int, backend: str, **kw) -> float:
    devs = (Device(id="Vulkan0", name="GPU", memory_bytes=80 * 2**30, free_bytes=80 * 2**30),) if backend != "cpu" else ()
    backend = "" if backend == "inferred" else backend
    s = lc.LlamaCppSettings(n_ctx=n_ctx, n_ubatch=512, n_parallel=1, n_gpu_layers=99, backend=backend,
                            **{"flash_attn": "off", **kw})
    b = lc.ENGINE.estimate(resolve("gpt-oss:20b", "MXFP4_MOE"), devs, s).engine_view["compute_buffer_bytes"]
    return b["CPU" if not devs else "Vulkan0"] / MiB


@pytest.mark.parametrize("n_ctx", list(LLAMACPP_GPTOSS))
def test_llamacpp_vulkan_chunks_add_the_sliding_window_scores(n_ctx):
    """The full layers' scores (n_ctx x 512 x 64 heads x 4 B, 1 GiB or more) take a chunk of their own; the
    sliding-window layers' 96 MiB of scores (768 cells), which reused their space in one buffer, add to the first
    chunk: llama.cpp's buffer grows by 96 MiB at every context measured. compute.vulkan_chunked_scores adds them
    on a Vulkan device (builds from b6646); the CPU keeps one buffer. Both within 0.02 MiB of the printed figures,
    the device's less the embeddings input row the host keeps (compute.vulkan_host_rows: 2880 x 512 x 4 B)."""
    flat, chunks = LLAMACPP_GPTOSS[n_ctx]
    cpu, vk = _llamacpp_gptoss(n_ctx, "cpu"), _llamacpp_gptoss(n_ctx, "vulkan")
    row = 2880 * 512 * 4 / MiB
    assert round(cpu, 2) == flat and abs(vk + row - chunks) < 0.02, (cpu, vk)
    # the CPU figure is the node-by-node replay (compute.gpt_oss_cpu_bytes), the device's the phases: 0.02 MiB apart
    assert chunks - flat == 96 and abs(vk + row - cpu - 96) < 0.02
    assert _llamacpp_gptoss(n_ctx, "inferred") == vk  # the Vulkan0 device id alone says Vulkan


@pytest.mark.parametrize("kw,flat,chunks,extra", [
    (dict(n_ubatch=1024), 16718.78, 17038.78, 320),  # 1280 sliding-window cells x 1024 tokens
    (dict(n_parallel=4, kv_unified=True), 8358.89, 8486.89, 128),  # 4 slots: 1024 cells x 512 tokens
])
def test_llamacpp_vulkan_chunks_other_batches_and_slots(kw, flat, chunks, extra):
    """The same rule at -c 65536 with -ub 1024, and with -np 4 -kvu (the binding's printed MiB, one buffer and 1 GiB
    chunks): the sliding-window scores of that batch and cache add to the chunked buffer."""
    def est(backend):
        devs = (Device(id="Vulkan0", name="GPU", memory_bytes=80 * 2**30, free_bytes=80 * 2**30),) if backend else ()
        s = lc.LlamaCppSettings(**{"n_ctx": 65536, "n_ubatch": 512, "n_batch": 2048, "n_parallel": 1,
                                   "flash_attn": "off", "n_gpu_layers": 99, "backend": backend or "cpu", **kw})
        b = lc.ENGINE.estimate(resolve("gpt-oss:20b", "MXFP4_MOE"), devs, s).engine_view["compute_buffer_bytes"]
        return b["Vulkan0" if devs else "CPU"] / MiB

    cpu, vk = est(""), est("vulkan")
    row = 2880 * kw.get("n_ubatch", 512) * 4 / MiB  # the embeddings input row the host keeps (vulkan_host_rows)
    assert abs(cpu - flat) < 0.04 and abs(vk + row - chunks) < 0.04, (cpu, vk)
    # the CPU figure is the node-by-node replay (compute.gpt_oss_cpu_bytes), the device's the phases: each within
    # 0.04 MiB of its printed figure
    assert abs(vk + row - cpu - extra) < 0.04


def test_llamacpp_vulkan_one_buffer_before_chunks_and_with_flash_attention():
    """Builds before the chunks (b6646 here) and flash attention (no KQ scores) keep one buffer's figure (less,
    from PR #18550, the embeddings input row the host keeps: compute.vulkan_host_rows)."""
    assert _llamacpp_gptoss(131072, "vulkan", engine_version="b6500") == _llamacpp_gptoss(131072, "cpu",
                                                                                          engine_version="b6500")
    # the CPU figure is the node-by-node replay (compute.gpt_oss_cpu_bytes), the device's the phases: 0.02 MiB apart
    assert abs(_llamacpp_gptoss(131072, "vulkan", flash_attn="on") - _llamacpp_gptoss(131072, "cpu", flash_attn="on")
               + 2880 * 512 * 4 / MiB) < 0.02
