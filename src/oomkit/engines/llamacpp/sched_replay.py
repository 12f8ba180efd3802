"""A partly offloaded graph as ggml_backend_sched hands it to ggml-alloc, replayed tensor by tensor for one ggml-cuda
device beside the CPU: the graph is built in ggml_build_forward_expand's order (every tensor with its shape,
strides, sources and view source), its nodes are given a backend by ggml_backend_sched_split_graph's passes 1-4, cut
into splits with the copies of their inputs (pass 5), laid out as the scheduler's graph_copy (each split's inputs,
as a dependency on the source and the copy, at the split's start) and allocated by ggml-alloc (galloc.py) in the
device's buffer. Mirrors ggml/src/ggml-backend.cpp at llama.cpp@0c1e57098:
- pass 1 (ggml_backend_sched_backend_id_from_cur): a tensor in a buffer, or a view of one, runs on that buffer's
  backend; a graph input on the CPU; an op reading a weight (not ROPE, not FLASH_ATTN_EXT) runs where the weight
  is, but for a weight in host memory that ggml-cuda's offload_op takes (get_op_batch_size, rows of the op: the
  result's ne[1] for MUL_MAT, ne[2] for ROPE, none for GET_ROWS, ggml_nrows otherwise, at least 32);
- pass 2: the device's assignments expanded down then up over unassigned ops (the CPU's breaks the run), then
  every backend's down then up; pass 3: an op still unassigned goes where most of its sources are; pass 4: views
  take their source's backend;
- pass 5: a new split where the backend changes, or where an op reads a weight of another backend once the split
  has inputs; a source of another backend that the split's backend cannot read is copied, once per backend for the
  whole graph (tensor_id_copy), as an input of the split that first reads it;
- graph_copy: for each input a view of the source (GGML_OP_NONE: a child of the source, not counted as a view by
  ggml-alloc) on the source's backend, then the copy, then the split's nodes, each followed by the allocation
  dependencies ggml-cuda's graph_optimize added for it (alloc_deps: the MoE fusions, matched split by split).
Checked against the H200's CUDA0 buffers of qwen3.5-27b's 8-layer file (test_llamacpp_cuda_measured, to the 0.01
MiB: -ngl 1, 4, 5, 8 and 99, with and without flash attention, F16 / q8_0 / q4_0 caches, -nkvo, -np 2 and 4), and, written for a rebuild of mamba2-2.7b's graph, against that model's GGML_SCHED_DEBUG=2
dump at -ngl 2 (tests/fixtures/llamacpp_cuda: each op's backend and each split's inputs) and its CUDA0 buffers at
-ngl 1-4 and 99; kimi-linear's 4-layer file (kimi_linear_graph, node for node llama.cpp's CPU graph) against its
CUDA0 buffers at -ngl 2 and 99 (held out)."""

from __future__ import annotations

import gc
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import NamedTuple

from .compute_graphs import vk_graph_optimize
from .galloc import Node, Replay, peak_bytes

F16 = (2, 1)  # a cache type's bytes a block and elements a block
DEVICE, HOST = 0, 1  # ggml_backend_sched's backend ids: the device first (highest priority), the CPU last
VIEW_OPS = frozenset({"VIEW", "RESHAPE", "TRANSPOSE", "PERMUTE"})
# ggml-alloc.c ggml_op_can_inplace (UNARY: ggml_silu, ggml_sigmoid, ggml_softplus)
INPLACE = frozenset({"FILL", "SCALE", "ADD", "ADD_ID", "ADD1", "SUB", "MUL", "DIV", "SQR", "SQRT", "LOG", "UNARY",
                     "ROPE", "RMS_NORM", "CLAMP", "SOFT_MAX"})
OP_OFFLOAD_MIN_BATCH = 32  # ggml-cuda.cu op_offload_min_batch_size


@dataclass(eq=False, slots=True)
class T:
    """A ggml tensor: op, shape and strides (4 each), element size, sources, the view's root (ggml_new_tensor_impl
    collapses views of views), flags; buf: the buffer it lives in when allocated before the graph (a weight, a
    cache: (backend, is a weight)); size: bytes when not ggml_nbytes (a quantized weight)."""

    op: str
    ne: tuple[int, int, int, int]
    nb: tuple[int, int, int, int]
    es: int
    srcs: list[T] = field(default_factory=list)
    view_src: T | None = None
    inp: bool = False
    output: bool = False
    buf: tuple[int, bool] | None = None
    size: int = -1
    backend: int = -1
    blck: int = 1  # elements per block of its type (es: bytes per block)
    extra: int = 0  # bytes the device's buffer type allocates beyond ggml_nbytes (ggml_backend_buft_get_alloc_size)
    name: str = ""  # a host weight's name (and its copy's), whose bytes the caller gives
    # a CPU weight in the CPU's extra buffer type (CPU_AARCH64, ggml-cpu-aarch64.cpp, b4081-b4935 beside a GPU):
    # that buffer type's is_host is NULL, so ggml_backend_buffer_is_host is false and op offload never takes its op
    repacked: bool = False

    @property
    def nbytes(self) -> int:  # ggml.c ggml_nbytes
        if self.size >= 0:
            return self.size
        (n0, n1, n2, n3), (b0, b1, b2, b3) = self.ne, self.nb
        if n0 <= 0 or n1 <= 0 or n2 <= 0 or n3 <= 0:
            return 0
        rest = (n1 - 1) * b1 + (n2 - 1) * b2 + (n3 - 1) * b3
        if self.blck > 1:
            return n0 * b0 // self.blck + rest
        return self.es + (n0 - 1) * b0 + rest

    @property
    def leaf(self) -> bool:
        return self.op == "NONE"


def _contiguous(ne: tuple[int, ...], es: int, blck: int = 1) -> tuple[int, int, int, int]:
    nb1 = es * ne[0] // blck
    nb2 = nb1 * ne[1]
    return es, nb1, nb2, nb2 * ne[2]


def _ne4(ne: tuple[int, ...]) -> tuple[int, int, int, int]:
    return ne if len(ne) == 4 else tuple(ne) + (1,) * (4 - len(ne))  # type: ignore[return-value]


class Graph:
    """The graph under construction: tensors made by the ops below, nodes and leafs in ggml_build_forward_expand's
    order (ggml_visit_parents: sources first, in order)."""

    def __init__(self) -> None:
        self.nodes: list[T] = []
        self.leafs: list[T] = []
        self._seen: set[int] = set()
        # the fusions ggml-cuda's graph_optimize keeps alive (alloc_deps): each top-k router group (its nodes in graph
        # order) and each weighted expert sum (its MUL of the experts' rows by the router weights, its last ADD)
        self.topk: list[list[T]] = []
        self.reductions: list[tuple[T, T]] = []
        # the ops the device's supports_op refuses (they run on the CPU: ggml_backend_sched_backend_from_buffer and
        # ggml_backend_sched_set_if_supported skip a backend that does not support the op), and whether the CPU
        # reads the device's buffers in place (ggml_backend_cpu_device_supports_buft takes any host buffer type:
        # Metal's, unified memory), so a CPU split copies none of the device's tensors in
        self.refused: frozenset[str] = frozenset()
        self.host_reads_device = False
        # the largest tensor the device's supports_op takes as an op's result or source (0: no limit; ggml-vulkan.cpp
        # ggml_backend_vk_device_supports_op tensor_size_supported: maxStorageBufferRange without 64-bit indexing)
        self.max_tensor = 0

    def refuses(self, t: T) -> bool:
        """Whether the device's supports_op refuses t's op (a view op is never asked: the scheduler skips them)."""
        if t.op in self.refused:
            return True
        m = self.max_tensor  # a device weight of no given size (size -1: the replays size the host's) is not asked
        return bool(m) and (t.nbytes > m or any(s.nbytes > m for s in t.srcs if not (s.buf and s.size < 0)))

    def expand(self, t: T) -> T:
        seen = self._seen
        if id(t) in seen:
            return t
        seen.add(id(t))
        leafs, nodes = self.leafs, self.nodes
        stack = [(t, iter(t.srcs))]  # each tensor under visit with its sources still to visit
        while stack:
            x, rest = stack[-1]
            for s in rest:
                if id(s) not in seen:
                    seen.add(id(s))
                    if s.srcs:
                        stack.append((s, iter(s.srcs)))
                        break
                    (leafs if s.op == "NONE" else nodes).append(s)  # no sources: visited at once, in the same order
            else:  # its sources all visited
                stack.pop()
                (leafs if x.op == "NONE" else nodes).append(x)
        return t

    # leafs
    @staticmethod
    def weight(ne: tuple[int, ...], backend: int, size: int = -1, es: int = 4, name: str = "") -> T:
        ne4 = _ne4(ne)
        return T("NONE", ne4, _contiguous(ne4, es), es, buf=(backend, True), size=size, name=name)

    @staticmethod
    def cache(ne: tuple[int, ...], backend: int, es: int, blck: int = 1) -> T:
        ne4 = _ne4(ne)
        return T("NONE", ne4, _contiguous(ne4, es, blck), es, buf=(backend, False), blck=blck)

    @staticmethod
    def input(ne: tuple[int, ...], es: int = 4) -> T:
        ne4 = _ne4(ne)
        return T("NONE", ne4, _contiguous(ne4, es), es, inp=True)

    # ops
    @staticmethod
    def op(op: str, ne: tuple[int, ...], *srcs: T, es: int = 4) -> T:
        ne4 = _ne4(ne)
        return T(op, ne4, _contiguous(ne4, es), es, list(srcs))

    @staticmethod
    def view(src: T, ne: tuple[int, ...], nb: tuple[int, ...] | None = None, op: str = "VIEW") -> T:
        ne4 = _ne4(ne)
        nb4 = tuple(nb) if nb is not None and len(nb) == 4 else _contiguous(ne4, src.es, src.blck)
        if nb is not None and len(nb) < 4:
            nb4 = tuple(nb) + nb4[len(nb):]
        return T(op, ne4, (nb4[0], nb4[1], nb4[2], nb4[3]), src.es, [src], src.view_src or src, blck=src.blck)

    def reshape(self, src: T, ne: tuple[int, ...]) -> T:
        return self.view(src, ne, op="RESHAPE")

    def hadamard(self, cur: T, rot: T) -> T:
        """src/llama-impl.h llama_mul_mat_hadamard: cur (contiguous here) in rows of the rotation's width, times
        the rotation, back in cur's shape (a quantized cache's rotations of Q, K, V and the attention output)."""
        n = rot.ne[0]
        flat = self.reshape(cur, (n, cur.ne[0] * cur.ne[1] * cur.ne[2] * cur.ne[3] // n))
        return self.reshape(self.op("MUL_MAT", flat.ne, rot, flat), cur.ne)

    def store_kv(self, kc: T, vc: T, k_idxs: T, v_idxs: T, n_kv: int, backend: int, flash_attn: bool,
                 n_stream: int = 1, k_type: tuple[int, int] = F16, v_type: tuple[int, int] = F16,
                 cpy_store: bool = False) -> tuple[T, T]:
        """A layer's K and V caches (k_type / v_type: bytes a block, elements a block) and the stores of kc
        (hd, nkv, T) and vc (hdv, nkv, T) into them (llama_kv_cache::cpy_k / cpy_v, a stream's cells after the
        other's); without flash attention V is transposed: one row per element (v_trans). cpy_store: the stores
        before ggml_set_rows (ERAS set_rows; llama_kv_cache_unified::cpy_k / cpy_v of b5920: ggml_cpy into a view
        of the cells, no index inputs), one stream. -> (K cache, V cache)"""
        hd, nkv, T_, hdv = kc.ne[0], kc.ne[1], kc.ne[2], vc.ne[0]
        kc_ = self.cache((hd * nkv, n_kv, n_stream), backend, *k_type)
        if cpy_store:
            vv = self.cache((hdv * nkv, n_kv, n_stream), backend, *v_type)
            self.expand(self.into("CPY", self.view(kc_, (hd * nkv * T_,)), kc))
            v2 = self.reshape(vc, (hdv * nkv, T_))
            if flash_attn:
                self.expand(self.into("CPY", self.view(vv, (hdv * nkv * T_,)), v2))
            else:
                self.expand(self.into("CPY", self.view(vv, (T_, hdv * nkv), (vv.es, n_kv * vv.es)),
                                      self.transpose(v2)))
            return kc_, vv
        kst = self.reshape(kc_, (hd * nkv, n_kv * n_stream)) if n_stream > 1 else kc_
        self.expand(self.into("SET_ROWS", kst, self.view(kc, (hd * nkv, T_)), k_idxs, kst))
        vv = self.cache((hdv * nkv, n_kv, n_stream), backend, *v_type)
        if flash_attn:
            vst = self.reshape(vv, (hdv * nkv, n_kv * n_stream)) if n_stream > 1 else vv
            self.expand(self.into("SET_ROWS", vst, self.view(vc, (hdv * nkv, T_)), v_idxs, vst))
        else:
            flat = self.reshape(vv, (1, hdv * nkv * n_kv * n_stream))
            self.expand(self.into("SET_ROWS", flat, self.reshape(self.reshape(vc, (hdv * nkv, T_)),
                                                                 (1, hdv * nkv * T_)), v_idxs, flat))
        return kc_, vv

    def attend(self, q: T, kc_: T, vv: T, mask: T, flash_attn: bool, fa_extra: int = 0, soft_cap: bool = False,
               k_type: tuple[int, int] = F16, v_type: tuple[int, int] = F16) -> T:
        """build_attn_mha over store_kv's caches for q (hd, nh, T), its rows split over the caches' streams:
        FLASH_ATTN_EXT on the caches' views (fa_extra: the bytes ggml-cuda allocates behind it, its F16 copies of K
        and V), or KQ, Gemma 2's soft-capping (soft_cap), SOFT_MAX, KQV on the transposed V and its CONT.
        -> the attention's output (hdv * nh, T)"""
        hd, nh, T_ = q.ne[0], q.ne[1], q.ne[2]
        n_kv, n_stream = kc_.ne[1], kc_.ne[2]
        nkv = kc_.ne[0] // hd
        hdv, nq = vv.ne[0] // nkv, T_ // n_stream
        (kb, kbl), (vb, vbl) = k_type, v_type
        k = self.permute(self.view(kc_, (hd, nkv, n_kv, n_stream), (kb, hd * kb // kbl, hd * nkv * kb // kbl,
                                                                    hd * nkv * n_kv * kb // kbl)), (0, 2, 1, 3))
        qq = self.permute(self.view(q, (hd, nh, nq, n_stream)), (0, 2, 1, 3))
        if flash_attn:
            v = self.permute(self.view(vv, (hdv, nkv, n_kv, n_stream), (vb, hdv * vb // vbl, hdv * nkv * vb // vbl,
                                                                       hdv * nkv * n_kv * vb // vbl)), (0, 2, 1, 3))
            fa = self.op("FLASH_ATTN_EXT", (hdv, nh, nq, n_stream), qq, k, v, mask)
            fa.extra = fa_extra
            return self.reshape(fa, (hdv * nh, T_))
        v = self.permute(self.view(vv, (n_kv, nkv, hdv, n_stream), (vb, n_kv * hdv * vb, n_kv * vb,
                                                                    n_kv * hdv * nkv * vb)), (0, 2, 1, 3))
        kq = self.op("MUL_MAT", (n_kv, nq, nh, n_stream), k, qq)
        if soft_cap:  # hparams.attn_soft_cap
            kq = self.op("SCALE", kq.ne, self.op("UNARY", kq.ne, self.op("SCALE", kq.ne, kq)))
        kq = self.op("SOFT_MAX", kq.ne, kq, mask)
        kqv = self.op("MUL_MAT", (hdv, nq, nh, n_stream), v, kq)
        return self.op("CONT", (hdv * nh, T_), self.permute(kqv, (0, 2, 1, 3)))

    def permute(self, src: T, axes: tuple[int, int, int, int]) -> T:
        ne, nb = [0] * 4, [0] * 4
        for i, a in enumerate(axes):
            ne[a], nb[a] = src.ne[i], src.nb[i]
        return self.view(src, tuple(ne), tuple(nb), op="PERMUTE")

    def transpose(self, src: T) -> T:
        return self.permute(src, (1, 0, 2, 3))

    @staticmethod
    def into(op: str, dst: T, *srcs: T) -> T:
        """An op writing into dst (ggml_cpy, ggml_set_rows, a *_inplace op): its result is a view of dst."""
        return T(op, dst.ne, dst.nb, dst.es, list(srcs), dst.view_src or dst, blck=dst.blck)


def _from_buffer(t: T) -> int:
    root = t.view_src or t
    return root.buf[0] if root.buf else -1


def _op_rows(t: T) -> int:  # ggml-cuda.cu get_op_batch_size
    if t.op == "GET_ROWS":
        return 0
    if t.op == "MUL_MAT":
        return t.ne[1]
    if t.op in ("MUL_MAT_ID", "ROPE"):
        return t.ne[2]
    return t.ne[1] * t.ne[2] * t.ne[3]


def _backend_from_cur(t: T, g: Graph | None = None) -> int:
    """ggml_backend_sched_backend_id_from_cur. An op the device refuses (g.refuses): the tensor in (or a view of) a
    device buffer goes to the CPU where it reads the device's buffers (Metal's), the op reading a device weight
    to the next backend that takes that buffer and the op (ggml_backend_sched_backend_from_buffer): the CPU where it
    reads them, else none (-1: the expansions and pass 3 place it)."""
    refused = g is not None and t.op not in VIEW_OPS and g.refuses(t)
    b = _from_buffer(t)
    if b >= 0:
        return HOST if b == DEVICE and refused else b
    if t.inp:
        return HOST
    if t.op not in ("ROPE", "FLASH_ATTN_EXT"):
        for s in t.srcs:
            if s.buf and s.buf[1]:
                if s.buf[0] == HOST and not s.repacked and _op_rows(t) >= OP_OFFLOAD_MIN_BATCH and not refused:
                    return DEVICE
                if s.buf[0] == DEVICE and refused:
                    return HOST if g.host_reads_device else -1
                return s.buf[0]
    return -1


def _buffer_supported(t: T, b: int, host_reads_device: bool = False) -> bool:
    """ggml_backend_sched_buffer_supported: two backends of their own bufts, or (host_reads_device) a CPU that
    takes the device's host-memory buffer type as well."""
    own = _from_buffer(t)
    if own < 0:
        own = t.backend if t.backend >= 0 or t.view_src is None else t.view_src.backend
    return own == b or host_reads_device and b == HOST and own >= 0


def assign(g: Graph) -> None:
    """Passes 1-4 of ggml_backend_sched_split_graph; an op the device refuses (g.refused) is left to the CPU by the
    expansions (ggml_backend_sched_set_if_supported) and by pass 3 (only backends that support it)."""
    hrd = g.host_reads_device
    # a device that refuses no op (most): pass 1 asks it nothing (_backend_from_cur without the graph is the same)
    asks = g if g.refused or g.max_tensor else None
    for t in g.leafs + g.nodes:
        t.backend = _backend_from_cur(t, asks)
    ops = [t for t in g.nodes if t.op not in VIEW_OPS]
    refused = {id(t) for t in ops if g.refuses(t)} if asks is not None else set()
    for order, device_only in ((ops, True), (ops[::-1], True), (ops, False), (ops[::-1], False)):
        cur = -1
        for t in order:
            if t.backend >= 0:
                cur = -1 if device_only and t.backend == HOST else t.backend
            elif cur >= 0 and not (cur == DEVICE and id(t) in refused):
                t.backend = cur
    for t in ops:
        if t.backend < 0:
            best = -1
            for b in (DEVICE, HOST):
                if b == DEVICE and id(t) in refused:
                    continue
                n = sum(1 for s in t.srcs if (s.backend >= 0 or (s.view_src is not None and s.view_src.backend >= 0))
                        and _buffer_supported(s, b, hrd))
                if n > best:
                    best, t.backend = n, b
    for t in g.nodes:
        if t.view_src is not None and t.backend < 0:
            t.backend = t.view_src.backend
        for s in t.srcs:
            if s.backend < 0:
                s.backend = s.view_src.backend if s.view_src is not None else t.backend


def split_graph(g: Graph) -> tuple[list[tuple[int, list[T], int]], dict[int, T]]:
    """Passes 1-5: the splits (backend, the tensors copied in as inputs, the index of the first node) and the
    copies by (source, backend); the ops' sources read from another backend are replaced by their copies."""
    assign(g)
    hrd = g.host_reads_device
    copies: dict[int, T] = {}
    splits: list[tuple[int, list[T], int]] = []  # (backend, inputs, first node); the first split starts at 0
    for i, t in enumerate(g.nodes):
        if t.op in VIEW_OPS:
            continue
        if not splits:
            splits.append((t.backend, [], 0))
        b, inputs, _ = splits[-1]
        new = t.backend != b
        if not new and inputs:
            for s in t.srcs:
                if s.buf and s.buf[1] and s.backend != b and not _buffer_supported(s, b, hrd):
                    new = True
                    break
        if new:
            splits.append((t.backend, [], i))
            b, inputs, _ = splits[-1]
        for j, s in enumerate(t.srcs):
            if s.backend != b and not _buffer_supported(s, b, hrd):
                key = id(s) * 2 + b
                if key not in copies:
                    copies[key] = T("NONE", s.ne, s.nb, s.es, size=s.nbytes, backend=b, name=s.name)
                    inputs.append(s)
                t.srcs[j] = copies[key]
    return splits, copies


def alloc_deps(g: Graph, splits: list[tuple[int, list[T], int]]) -> dict[int, list[list[T]]]:
    """The allocation dependencies ggml-cuda's graph_optimize adds (ggml-cuda.cu ggml_backend_cuda_graph_optimize,
    which ggml_backend_sched_split_graph calls on each split's view of the graph, its sources already the split's
    copies): a top-k router group whose nodes all lie in one split (ggml_cuda_topk_moe_fusion over consecutive nodes
    of the split's graph) keeps each of its nodes and their sources until the node after it (add_alloc_deps); a
    weighted expert sum in one split (ggml_cuda_match_moe_weighted_reduction: the MUL, the views, the adds) keeps the
    experts' rows and the router weights until its last add. graph_copy puts GGML_OP_NONE nodes reading them,
    GGML_MAX_SRC (10) at a time, right after that node. By the node they follow (its id)."""
    if not g.topk and not g.reductions:
        return {}
    pos = {id(t): i for i, t in enumerate(g.nodes)}
    starts = [st for _, _, st in splits[1:]]

    def one_split(a: int, b: int) -> bool:
        return not any(a < st <= b for st in starts)

    keep: dict[int, list[T]] = {}

    def dep(t: T, until: T) -> None:
        kept = keep.setdefault(id(until), [])
        if all(x is not t for x in kept):
            kept.append(t)

    for group in g.topk:
        a, b = pos[id(group[0])], pos[id(group[-1])]
        if b - a + 1 != len(group) or not one_split(a, b) or b + 1 >= len(g.nodes):
            continue
        for t in group:
            dep(t, g.nodes[b + 1])
            for src in t.srcs:
                dep(src, g.nodes[b + 1])
    for mul, dst in g.reductions:
        if one_split(pos[id(mul)], pos[id(dst)]):
            dep(mul.srcs[0], dst)
            dep(mul.srcs[1], dst)
    return {k: [v[i:i + 10] for i in range(0, len(v), 10)] for k, v in keep.items()}


def _positions(order: list[T], deps: set[int]) -> dict[int, int]:
    """Each tensor's first place in order (the inputs' dependency entries at deps are no place of theirs)."""
    at: dict[int, int] = {}
    for i, t in enumerate(order):
        if i not in deps:
            at.setdefault(id(t), i)
    return at


def _lowered(t: T, at: dict[int, int], copied: set[int], layouts: dict[Hashable, Hashable] | None = None,
             backend: int = DEVICE) -> tuple[Node, bool]:
    """One tensor as ggml-alloc's node for the device's buffer (backend HOST: the CPU's): it allocates its bytes
    when that backend computes it (or it is an input's copy there, or, on the CPU, a graph input) and it is no view;
    a view names its source's place. layouts: the layouts made so far, each equal one shared (_interned's).
    -> (node, allocates)"""
    root = t.view_src
    mine = t.backend == backend and root is None and (t.op != "NONE" or id(t) in copied
                                                      or backend == HOST and t.inp)
    size = t.nbytes + t.extra if mine else 0
    layout = (t.es, t.ne, t.nb)
    if layouts is not None:
        layout = layouts.setdefault(layout, layout)
    return Node(size, tuple([at[id(s)] for s in t.srcs]), mine and t.op in INPLACE,
                at.get(id(root), -1) if root is not None else -1, t.output, layout, mine and size == 0), mine


def device_nodes(g: Graph, names: list[str] | None = None, backend: int = DEVICE) -> list[Node]:
    """Pass 5 and graph_copy, lowered to galloc's nodes for the device's buffer (the host's tensors take none there
    but their reading of device tensors still counts; backend HOST: the CPU's buffer, the device's tensors none);
    names, when given, gets each node's host weight name (the copies of named host weights; "" for the rest)."""
    splits, copies = split_graph(g)
    nodes = g.nodes
    copied = {id(c) for c in copies.values()}
    kept = alloc_deps(g, splits)
    order: list[T] = list(g.leafs)
    deps: set[int] = set()  # the positions of the inputs' dependencies
    for k, (b, inputs, st) in enumerate(splits):
        for s in inputs:
            deps.add(len(order))
            order.append(s)
            order.append(copies[id(s) * 2 + b])
        for t in nodes[st:splits[k + 1][2] if k + 1 < len(splits) else len(nodes)]:
            order.append(t)
            for chunk in kept.get(id(t), ()):
                order.append(T("DEP", (0, 0, 0, 0), (0, 0, 0, 0), 0, chunk))
    at = _positions(order, deps)
    out: list[Node] = []
    named: list[str] = []
    layouts: dict[Hashable, Hashable] = {}
    # _lowered's rule, written out in the loop: a lowering is tens of thousands of tensors, a fit or a plan lowers
    # dozens of graphs, and the call per tensor cost a quarter of the loop
    new_node, add, add_name, layout_of, at_get = Node, out.append, named.append, layouts.setdefault, at.get
    host = backend == HOST
    for i, t in enumerate(order):
        if i in deps:  # the input's dependency: reads it, allocates nothing, is no view for ggml-alloc
            add(new_node(0, (at[id(t)],)))
            add_name("")
            continue
        op = t.op
        if op == "DEP":  # an allocation dependency: reads the kept tensors, allocates nothing
            add(new_node(0, tuple([at[id(s)] for s in t.srcs])))
            add_name("")
            continue
        root = t.view_src
        mine = t.backend == backend and root is None and (op != "NONE" or id(t) in copied or host and t.inp)
        size = t.nbytes + t.extra if mine else 0
        layout = (t.es, t.ne, t.nb)
        add(new_node(size, tuple([at[id(s)] for s in t.srcs]), mine and op in INPLACE,
                     at_get(id(root), -1) if root is not None else -1, t.output, layout_of(layout, layout),
                     mine and size == 0))
        add_name(t.name if mine else "")
    if names is not None:
        names.extend(named)
    return out


def vk_device_nodes(g: Graph) -> tuple[int, list[Node]]:
    """device_nodes for a graph whose device split is its last, with that split in ggml-vulkan's order: each split's
    nodes go to its backend's graph_optimize before the split's input copies are put at its head and ggml-alloc
    places them (ggml_backend_sched_split_graph), so the device split's nodes are reordered by
    compute_graphs.vk_graph_optimize behind everything before them (the leafs, the host's splits, the copies).
    -> (the nodes before the reordered split, all the nodes). No allocation dependencies (alloc_deps: ggml-cuda's)."""
    splits, copies = split_graph(g)
    if splits[-1][0] != DEVICE or any(b == DEVICE for b, _, _ in splits[:-1]):
        raise ValueError("the device split is not the graph's one last split")
    order: list[T] = list(g.leafs)
    deps: set[int] = set()
    for k, (b, inputs, st) in enumerate(splits):
        for t in inputs:
            deps.add(len(order))
            order.append(t)
            order.append(copies[id(t) * 2 + b])
        head = len(order)
        order += g.nodes[st:splits[k + 1][2] if k + 1 < len(splits) else len(g.nodes)]
    copied = {id(c) for c in copies.values()}
    at = _positions(order, deps)
    out: list[Node] = []
    ops: list[str] = []
    roots: dict[int, Hashable] = {}
    for i, t in enumerate(order):
        if i in deps:  # the input's dependency: reads it, allocates nothing, is no view for ggml-alloc
            out.append(Node(0, (at[id(t)],)))
            ops.append("NONE")
            continue
        node, _ = _lowered(t, at, copied)
        out.append(node)
        ops.append(t.op)
        root = t.view_src
        if root is not None and root.buf is not None:  # a view of a KV / recurrent cache: depends on its writes
            roots[i] = ("cache", id(root))
    return head, vk_graph_optimize(head, out, ops, roots)


def vk_lowering(g: Graph, names: list[str]) -> list[Node]:
    """vk_device_nodes' nodes, for device_peak_by_kv (no host weight is copied in: names all empty)."""
    nodes = vk_device_nodes(g)[1]
    names.extend([""] * len(nodes))
    return nodes


def device_peak(g: Graph, align: int) -> int:
    """The device's compute buffer for graph g (its leafs placed by nobody: weights, caches and host inputs)."""
    return peak_bytes(0, device_nodes(g), align)


KV_STEP = 256  # the second lowering's extra cells (llama_kv_cache::get_n_kv pads n_kv to 256)


class _Lowering(NamedTuple):
    """A key's kept lowering: the first lowering's n_kv, its nodes (with their layouts at both lowerings once the
    second is made), the sizes' slopes in n_kv (None: not yet), each node's host weight name, the answers given
    from these nodes (by n_kv, alignment and the host weights' bytes, the last interned per key in _SIZES), the
    nodes' replay (galloc.Replay: ggml-alloc's walk kept per size decisions), their sizes at n0 and the places of
    the named nodes."""
    n0: int
    nodes: list[Node]
    slopes: tuple[int, ...] | None
    names: list[str]
    peaks: dict[Hashable, int]
    replay: Replay
    base: list[int]
    named: tuple[tuple[int, str], ...]


def _lowering(n0: int, nodes: list[Node], slopes: tuple[int, ...] | None, names: list[str]) -> _Lowering:
    return _Lowering(n0, nodes, slopes, names, {}, Replay(0, nodes), [x.size for x in nodes],
                     tuple((i, nm) for i, nm in enumerate(names) if nm))


# per key its _Lowering, least recently used first
_LOWERED: dict[Hashable, _Lowering] = {}
_SIZES: dict[Hashable, dict[tuple[tuple[str, int], ...], int]] = {}
# the lowerings kept, bounded by their nodes: a fit of Llama-3.3-70B (80 layers, ~3,900 nodes a lowering) looks at
# ~170 layer splits and cache types, Llama-3.1-8B's ~70; each node ~0.2 KB once its layouts are interned (_interned)
_LOWERED_MAX = 1024  # keys
_LOWERED_NODES = 1_000_000  # nodes, all keys together (~0.2 GB: the 70B fit keeps ~900k)
_LOWERED_COUNT = [0]  # the graphs lowered (built, scheduled and put in ggml-alloc's order) since start


def _interned(nodes: list[Node]) -> list[Node]:
    """The nodes with each layout replaced by one shared object per distinct layout: ggml-alloc compares layouts for
    equality only (ggml_are_same_layout), and a lowering's tens of thousands of (type, shape, strides) tuples are
    a few hundred distinct ones."""
    seen: dict[Hashable, Hashable] = {}
    # a lowering that interned its layouts already (device_nodes) gives them back as they are: no node is rebuilt
    return [x if x.layout is None or seen.setdefault(x.layout, x.layout) is x.layout
            else x._replace(layout=seen[x.layout]) for x in nodes]


def _kept_nodes() -> int:
    return sum(len(v.nodes) for v in _LOWERED.values())


def _keep(key: Hashable, entry: _Lowering) -> None:
    """Keeps a lowering as the most recently used, dropping the least recently used beyond the bounds."""
    _LOWERED.pop(key, None)
    _LOWERED[key] = entry
    total = _kept_nodes()
    while len(_LOWERED) > 1 and (len(_LOWERED) > _LOWERED_MAX or total > _LOWERED_NODES):
        old = next(iter(_LOWERED))
        total -= len(_LOWERED.pop(old).nodes)
        _SIZES.pop(old, None)


def device_peak_by_kv(key: Hashable, build: Callable[[int], Graph], n_kv: int, align: int,
                      sizes: dict[str, int] | None = None,
                      lower: Callable[[Graph, list[str]], list[Node]] | None = None) -> int:
    """device_peak(build(n_kv), align), the lowering kept by shape (key: everything build depends on but n_kv and
    the host weights' bytes, sizes): the graph's structure, its schedule and its nodes' order depend on neither;
    the copies of the host weights take their bytes (given by name), and every other node's bytes are affine in
    n_kv (one dimension of the mask, of the cache's views and their copies, of KQ, and of flash attention's F16
    copies), so the lowerings at n_kv and n_kv + KV_STEP give any other n_kv's node list and only ggml-alloc is
    replayed again; two nodes count as the same layout where they are at both lowerings. Each answer is kept with
    the lowering it came from (a question asked again replays nothing). The collector is paused meanwhile: the
    graph's tens of thousands of tensors and nodes would trigger collections that walk everything alive and find
    nothing (the graph has no cycle; reference counting frees it). lower: the graph's lowering to ggml-alloc's nodes
    (device_nodes; vk_lowering for a Vulkan device's reordered split, whose order depends on no size either).
    The lowerings are kept least recently used first, within _LOWERED_MAX keys and _LOWERED_NODES nodes."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _device_peak_by_kv(key, build, n_kv, align, sizes, lower or device_nodes)
    finally:
        if enabled:
            gc.enable()


def _device_peak_by_kv(key: Hashable, build: Callable[[int], Graph], n_kv: int, align: int,
                       sizes: dict[str, int] | None, lower: Callable[[Graph, list[str]], list[Node]]) -> int:
    sizes = sizes or {}
    by_sizes = _SIZES.setdefault(key, {})
    asked = (n_kv, align, by_sizes.setdefault(tuple(sorted(sizes.items())), len(by_sizes)))

    def lowered(n: int, names: list[str]) -> list[Node]:
        _LOWERED_COUNT[0] += 1
        nodes = lower(build(n), names)
        return nodes if lower is device_nodes else _interned(nodes)  # device_nodes interns its layouts itself

    def peak(entry: _Lowering, at: list[int]) -> int:  # the nodes' sizes at, the host weights' copies by name
        for i, nm in entry.named:
            at[i] = sizes[nm]
        entry.peaks[asked] = entry.replay.peak(at, align)
        return entry.peaks[asked]

    entry = _LOWERED.get(key)
    if entry is None:
        # one lowering answers this n_kv; the second, which gives every other n_kv, waits until one is asked
        # (a plan's offload search asks each layer split at one context only)
        names: list[str] = []
        entry = _lowering(n_kv, lowered(n_kv, names), None, names)
        _keep(key, entry)
        return peak(entry, list(entry.base))
    _keep(key, entry)  # the most recently used now
    if asked in entry.peaks:
        return entry.peaks[asked]
    if entry.slopes is None:
        if n_kv == entry.n0:
            return peak(entry, list(entry.base))
        nodes = entry.nodes
        b = lowered(entry.n0 + KV_STEP, [])
        slopes = tuple((y.size - x.size) // KV_STEP for x, y in zip(nodes, b, strict=True))
        pairs: dict[Hashable, Hashable] = {}
        nodes = [x._replace(layout=pairs.setdefault((x.layout, y.layout), (x.layout, y.layout)))
                 for x, y in zip(nodes, b, strict=True)]
        entry = _lowering(entry.n0, nodes, slopes, entry.names)  # the answers of the first lowering alone stay with it
        _keep(key, entry)
    d = n_kv - entry.n0
    return peak(entry, [x + k * d for x, k in zip(entry.base, entry.slopes, strict=True)])


def _pp_graph_start(spec, T_: int, host: dict[str, int], host_layers: set[int]
                    ) -> tuple[Graph, Callable[[str, tuple[int, ...], int | None], T], T]:
    """A pp graph's start: the graph, its weight maker (a weight of a layer in host_layers stays on the CPU and, when
    host names its bytes, is copied to the device where read) and build_inp_embd's GET_ROWS of the token embeddings,
    which stay on the host."""
    g = Graph()

    def w(name: str, ne: tuple[int, ...], il: int | None) -> T:
        on_host = il is not None and il in host_layers
        return g.weight(ne, HOST if on_host else DEVICE, host.get(name, -1) if on_host else -1,
                        name=name if on_host and name in host else "")

    tok = g.weight((spec.n_embd, spec.n_vocab), HOST)
    return g, w, g.expand(g.op("GET_ROWS", (spec.n_embd, T_), tok, g.input((T_,))))


def build_ffn(g: Graph, w: Callable[[str, tuple[int, ...], int | None], T], x: T, n_ff: int, il: int,
              sfx: str = "") -> T:
    """src/llama-graph.cpp build_ffn with LLM_FFN_PAR on x's rows: the up and gate products (ffn_up{sfx},
    ffn_gate{sfx}), their GLU (SWIGLU; Gemma 2's GEGLU, the same tensors) and the down product."""
    n_embd, rows = x.ne[0], x.ne[1]
    up = g.op("MUL_MAT", (n_ff, rows), w(f"blk.{il}.ffn_up{sfx}.weight", (n_embd, n_ff), il), x)
    gate = g.op("MUL_MAT", (n_ff, rows), w(f"blk.{il}.ffn_gate{sfx}.weight", (n_embd, n_ff), il), x)
    return g.op("MUL_MAT", (n_embd, rows), w(f"blk.{il}.ffn_down{sfx}.weight", (n_ff, n_embd), il),
                g.op("GLU", (n_ff, rows), gate, up))


def ffn_input(g: Graph, w: Callable[[str, tuple[int, ...], int | None], T], cur: T, res: T, last: bool, out_ids: T,
              il: int, norm: str = "ffn_norm") -> tuple[T, T]:
    """A layer's attention output cur joined to its input res (in the last layer out_ids' rows of both) and that sum
    RMS-normed by blk.{il}.{norm}.weight. -> (ffn_inp, the FFN's input)"""
    if last:
        cur = g.op("GET_ROWS", (cur.ne[0], out_ids.ne[0]), cur, out_ids)
        res = g.op("GET_ROWS", (res.ne[0], out_ids.ne[0]), res, out_ids)
    ffn_inp = g.op("ADD", cur.ne, cur, res)
    return ffn_inp, g.op("MUL", ffn_inp.ne, g.op("RMS_NORM", ffn_inp.ne, ffn_inp),
                         w(f"blk.{il}.{norm}.weight", (ffn_inp.ne[0],), il))


def output_head(g: Graph, w: Callable[[str, tuple[int, ...], int | None], T], spec, inp: T) -> Graph:
    """A pp graph's end: the output norm of the last layer's rows (result_norm / t_embd, an output) and the logits
    (an output), expanded. -> the graph"""
    h = g.op("RMS_NORM", inp.ne, inp)
    h = g.op("MUL", h.ne, h, w("output_norm.weight", (spec.n_embd,), None))
    h.output = True
    logits = g.op("MUL_MAT", (spec.n_vocab, h.ne[1]), w("output.weight", (spec.n_embd, spec.n_vocab), None), h)
    logits.output = True
    g.expand(logits)
    return g


def qwen35_graph(spec, T_: int, n_outputs: int, n_kv: int, host: dict[str, int], host_layers: set[int],
                 flash_attn: bool = True, k_type: tuple[int, int] = (2, 1), v_type: tuple[int, int] = (2, 1),
                 k_rot: int = 0, v_rot: int = 0, host_caches: bool = False, fa_extra: int = 0, n_seqs: int = 1,
                 n_stream: int = 1, last_layer_rows: bool = False, mask_cast: bool = False) -> Graph:
    """Qwen3.5's pp graph (src/models/qwen35.cpp, n_seqs sequences of T_ / n_seqs tokens in n_stream KV streams;
    qwen35moe.cpp's and qwen3next.cpp's the same with build_layer_ffn's experts (_qwen_moe_ffn) where the layer has
    them, and for qwen3next its one ssm_ba projection (b and a views of it, each made contiguous: a's CONT feeds the
    gate, b's the sigmoid), q and k repeated to the value heads (REPEAT of their reshapes) and one position a token;
    the gated delta net fused:
    src/models/delta-net-base.cpp build_conv_state, build_recurrent_attn / build_delta_net_fused, cparams.fused_gdn_*
    on, which llama_context never probes; the attention layers through llm_graph_context::build_attn, K and V stored
    with SET_ROWS (V transposed, one row per element, without flash attention: llama_kv_cache::cpy_v), then
    ggml_flash_attn_ext reading the cache's views and the F16 mask, or build_attn_mha's KQ, soft_max with the F32
    mask and KQV; build_ffn's SILU-gated FFN; h_nextn kept as an output and gathered by out_ids into result_norm), in
    graph order. The layers in host_layers keep their weights (and their caches) on the CPU; host: those weights'
    bytes, copied when read on the device. The output layer is on the device. k_type / v_type: the cache's (bytes,
    elements) per block; k_rot / v_rot: a quantized cache's rotation sizes (llama_kv_cache::build_input_k_rot /
    build_input_v_rot; 0: none), applied by llama_mul_mat_hadamard to Q, K, V and the attention's output
    (llm_graph_context::build_attn); host_caches (-nkvo): every cache on the CPU; fa_extra: the bytes ggml-cuda
    allocates behind each FLASH_ATTN_EXT (its F16 copies of K and V). The recurrent caches hold n_seqs states
    (mem_size = n_seq_max, the worst case's n_seqs), the KV caches n_kv cells a stream.
    last_layer_rows: the graph before PR #22673 ("llama + spec: MTP Support", ERAS spec_mtp, b9180), which brought
    t_h_nextn: the last layer takes out_ids' rows of its attention output and of its input (two GET_ROWS) before
    the residual, its FFN runs on those rows and the final norm is result_norm itself (t_embd, an output), with no
    GET_ROWS after it (qwen35moe.cpp llm_build_qwen35moe, `if (il == n_layer - 1 && inp_out_ids)`, as forks of
    that time keep it). Those builds also normalise q and k with ggml_l2_norm (one L2_NORM, a new tensor, where
    build_gdn_l2_norm makes an RMS_NORM and a SCALE in place on it: the same bytes, not replayed).
    mask_cast: the mask as llama-graph builds it for flash attention before PR #23764 (ERAS kq_mask_f16;
    build_attn_inp_kv_impl at b9010: an F32 input, `self_kq_mask_cnv = ggml_cast(self_kq_mask, GGML_TYPE_F16)`), so the
    device's split copies in the F32 mask (n_kv x T_ floats, an input at the split's head) and its CPY to F16 runs
    where the first attention layer's FLASH_ATTN_EXT first reads it (ggml_visit_parents); without it the mask is
    one F16 input (as from that PR; the CUDA replays keep it at every build)."""
    g, w, embd = _pp_graph_start(spec, T_, host, host_layers)
    f32 = 4
    n_embd = spec.n_embd
    next3 = spec.architecture == "qwen3next"
    ns, nst, nq = n_seqs, T_ // n_seqs, T_ // n_stream  # sequences, tokens a sequence, tokens a stream
    s_copy = g.input((ns,))
    s_main, s_extra = g.view(s_copy, (ns,)), g.view(s_copy, (0,))  # build_rs_inp_impl: n_rs - n_seqs = 0 extra rows
    inp_pos = g.input((T_ if next3 else 4 * T_,))  # M-RoPE: four positions per token (qwen3next: rope_ext, one)
    out_ids = g.input((n_outputs,))
    hd_v = next(la.attention.head_dim_v * la.attention.n_kv_heads for la in spec.trunk_layers if la.attention)
    k_idxs, v_idxs = g.input((T_,), 8), g.input((T_ if flash_attn else T_ * hd_v,), 8)
    mask = g.input((n_kv, nq, 1, n_stream), 2 if flash_attn and not mask_cast else 4)  # build_attn_inp_kq_mask
    if flash_attn and mask_cast:  # build_attn_inp_kv_impl: self_kq_mask_cnv, ggml_cast to F16 (a CPY node)
        mask = g.op("CPY", mask.ne, mask, es=2)
    k_rot = g.input((k_rot, k_rot)) if k_rot else None
    v_rot = g.input((v_rot, v_rot)) if v_rot else None

    hadamard = g.hadamard

    inp = embd
    for la in spec.trunk_layers:
        il = la.index
        dev = HOST if il in host_layers else DEVICE
        cdev = HOST if host_caches else dev  # -nkvo: every cache on the host (llama_kv_cache / llama_memory_recurrent)
        res = inp
        cur = g.op("RMS_NORM", inp.ne, inp)
        cur = g.expand(g.op("MUL", cur.ne, cur, w(f"blk.{il}.attn_norm.weight", (n_embd,), il)))
        if la.recurrent is not None:
            r = la.recurrent
            S, Hk, Hv = r.d_state, r.n_group, r.n_heads
            Sv = r.d_inner // Hv
            ch = r.d_inner + 2 * Hk * S
            n_r, n_s = (r.d_conv - 1) * ch, Sv * Sv * Hv
            x = cur
            qkv = g.op("MUL_MAT", (ch, T_), w(f"blk.{il}.attn_qkv.weight", (n_embd, ch), il), x)
            qkv = g.reshape(qkv, (ch, nst, ns))
            z = g.op("MUL_MAT", (r.d_inner, T_), w(f"blk.{il}.attn_gate.weight", (n_embd, r.d_inner), il), x)
            if next3:  # qwen3next.cpp: one ssm_ba projection, b and a views of it per key head, each made contiguous
                rf = Hv // Hk
                ba = g.reshape(g.op("MUL_MAT", (2 * Hv, T_), w(f"blk.{il}.ssm_ba.weight", (n_embd, 2 * Hv), il), x),
                               (2 * rf, Hk, nst, ns))
                b = g.op("CONT", (rf, Hk, nst, ns), g.view(ba, (rf, Hk, nst, ns), ba.nb))
                beta = g.reshape(g.op("UNARY", b.ne, b), (1, Hv, nst, ns))  # sigmoid
                alpha = g.op("CONT", (Hv, nst, ns), g.view(ba, (rf, Hk, nst, ns), ba.nb))
            else:
                beta = g.op("MUL_MAT", (Hv, T_), w(f"blk.{il}.ssm_beta.weight", (n_embd, Hv), il), x)
                beta = g.op("UNARY", (1, Hv, nst, ns), g.reshape(beta, (1, Hv, nst, ns)))  # sigmoid
                alpha = g.reshape(g.op("MUL_MAT", (Hv, T_), w(f"blk.{il}.ssm_alpha.weight", (n_embd, Hv), il), x),
                                  (Hv, nst, ns))
            a = g.op("ADD", alpha.ne, alpha, w(f"blk.{il}.ssm_dt.bias", (Hv,), il))
            a = g.op("UNARY", a.ne, a)  # softplus
            gate = g.reshape(g.op("MUL", a.ne, a, w(f"blk.{il}.ssm_a", (Hv,), il)), (1, Hv, nst, ns))
            r_l, s_l = g.cache((n_r, ns), cdev, f32), g.cache((n_s, ns), cdev, f32)  # mem_size = n_seq_max

            def build_rs(s: T, size: int) -> T:  # src/llama-graph.cpp build_rs
                states = g.reshape(s, (size, ns))
                zero = g.view(states, (0,))
                g.expand(g.into("SCALE", zero, zero))
                rows = g.expand(g.op("GET_ROWS", (size, ns), states, s_main))
                extra = g.op("GET_ROWS", (size, 0), states, s_extra)
                g.expand(g.into("CPY", g.view(s, (size, 0)), extra, g.view(s, (size, 0))))
                return rows

            conv = g.reshape(build_rs(r_l, n_r), (r.d_conv - 1, ch, ns))
            ci = g.op("CONCAT", (r.d_conv - 1 + nst, ch, ns), conv, g.transpose(qkv))
            last = g.view(ci, (r.d_conv - 1, ch, ns), (f32, ci.nb[1], ci.nb[2]))
            dst = g.view(r_l, (n_r, ns))
            g.expand(g.into("CPY", dst, last, dst))
            state = g.reshape(build_rs(s_l, n_s), (Sv, Sv, Hv, ns))
            co = g.op("SSM_CONV", (ch, nst, ns), ci, w(f"blk.{il}.ssm_conv1d.weight", (r.d_conv, ch), il))
            co = g.op("UNARY", co.ne, co)  # silu
            nb = (f32, S * f32, ch * f32, ch * f32 * nst)
            qn = (S, Hk, nst, ns)
            q = g.op("SCALE", qn, g.op("RMS_NORM", qn, g.view(co, qn, nb)))
            k = g.op("SCALE", qn, g.op("RMS_NORM", qn, g.view(co, qn, nb)))
            v = g.view(co, (Sv, Hv, nst, ns), (f32, Sv * f32, ch * f32, ch * f32 * nst))
            if next3 and Hk != Hv:  # qwen3next.cpp: q and k repeated to the value heads before the delta net
                q = g.reshape(g.op("REPEAT", (S, Hv // Hk, Hk, T_), g.reshape(q, (S, 1, Hk, T_))), (S, Hv, nst, ns))
                k = g.reshape(g.op("REPEAT", (S, Hv // Hk, Hk, T_), g.reshape(k, (S, 1, Hk, T_))), (S, Hv, nst, ns))
            # ggml.c ggml_gated_delta_net: the outputs, then the final states (K = 1 snapshot)
            gdn = g.op("GATED_DELTA_NET", (Sv * Hv, T_ + Sv * ns), q, k, v, gate, beta, state)
            dst = g.view(s_l, (n_s, ns))
            g.expand(g.into("CPY", dst, g.view(gdn, (Sv, Sv, Hv, ns)), dst))
            y = g.op("RMS_NORM", (Sv, Hv, nst, ns), g.view(gdn, (Sv, Hv, nst, ns)))
            y = g.op("MUL", y.ne, y, w(f"blk.{il}.ssm_norm.weight", (Sv,), il))
            y = g.op("MUL", y.ne, y, g.op("UNARY", (Sv, Hv, nst, ns), g.reshape(z, (Sv, Hv, nst, ns))))
            cur = g.op("MUL_MAT", (n_embd, T_, 1), w(f"blk.{il}.ssm_out.weight", (r.d_inner, n_embd), il),
                       g.reshape(y, (r.d_inner, T_, 1)))
            cur = g.reshape(cur, (n_embd, T_))
        else:
            a = la.attention
            hd, nh, nkv = a.head_dim_k, a.n_heads, a.n_kv_heads
            x = cur
            qf = g.op("MUL_MAT", (2 * hd * nh, T_), w(f"blk.{il}.attn_q.weight", (n_embd, 2 * hd * nh), il), x)
            kc = g.op("MUL_MAT", (hd * nkv, T_), w(f"blk.{il}.attn_k.weight", (n_embd, hd * nkv), il), x)
            vc = g.op("MUL_MAT", (hd * nkv, T_), w(f"blk.{il}.attn_v.weight", (n_embd, hd * nkv), il), x)
            qf_ = g.reshape(qf, (2 * hd, nh, T_, 1)) if next3 else qf  # qwen3next.cpp: Q's views of its reshape
            q = g.op("RMS_NORM", (hd, nh, T_), g.view(qf_, (hd, nh, T_), (f32, 2 * hd * f32, 2 * hd * nh * f32)))
            q = g.op("MUL", q.ne, q, w(f"blk.{il}.attn_q_norm.weight", (hd,), il))
            kc = g.op("RMS_NORM", (hd, nkv, T_), g.reshape(kc, (hd, nkv, T_)))
            kc = g.op("MUL", kc.ne, kc, w(f"blk.{il}.attn_k_norm.weight", (hd,), il))
            gt = g.op("CONT", (hd * nh, T_),
                      g.view(qf_, (hd, nh, T_), (f32, 2 * hd * f32, 2 * hd * nh * f32)))  # the gate half
            vc = g.reshape(vc, (hd, nkv, T_))
            q, kc = g.op("ROPE", q.ne, q, inp_pos), g.op("ROPE", kc.ne, kc, inp_pos)
            if k_rot is not None:  # build_attn: the quantized cache's rotations (llama_mul_mat_hadamard)
                q, kc = hadamard(q, k_rot), hadamard(kc, k_rot)
            if v_rot is not None:
                vc = hadamard(vc, v_rot)
            g.expand(q)
            g.expand(vc)
            g.expand(kc)  # build_attn: q, v, then k (rope fusion into the cache)
            kc_ = g.cache((hd * nkv, n_kv, n_stream), cdev, k_type[0], k_type[1])
            kst = g.reshape(kc_, (hd * nkv, n_kv * n_stream)) if n_stream > 1 else kc_  # llama_kv_cache::cpy_k
            g.expand(g.into("SET_ROWS", kst, g.view(kc, (hd * nkv, T_)), k_idxs, kst))
            vv = g.cache((hd * nkv, n_kv, n_stream), cdev, v_type[0], v_type[1])
            if flash_attn:  # llama_kv_cache::cpy_v, the V cache not transposed
                vst = g.reshape(vv, (hd * nkv, n_kv * n_stream)) if n_stream > 1 else vv
                g.expand(g.into("SET_ROWS", vst, g.view(vc, (hd * nkv, T_)), v_idxs, vst))
            else:  # v_trans: one row per element of V, its indices n_embd_v_gqa per token
                flat = g.reshape(vv, (1, hd * nkv * n_kv * n_stream))
                g.expand(g.into("SET_ROWS", flat, g.reshape(g.reshape(vc, (hd * nkv, T_)), (1, hd * nkv * T_)),
                                v_idxs, flat))
            row = (hd * k_type[0] // k_type[1], hd * nkv * k_type[0] // k_type[1])
            k = g.permute(g.view(kc_, (hd, nkv, n_kv, n_stream), (k_type[0], row[0], row[1], row[1] * n_kv)),
                          (0, 2, 1, 3))
            qq = g.permute(g.view(q, (hd, nh, nq, n_stream)), (0, 2, 1, 3))  # build_attn_mha: the streams
            if flash_attn:
                v = g.permute(g.view(vv, (hd, nkv, n_kv, n_stream), (v_type[0], hd * v_type[0] // v_type[1],
                                                               hd * nkv * v_type[0] // v_type[1],
                                                               hd * nkv * n_kv * v_type[0] // v_type[1])),
                              (0, 2, 1, 3))
                fa = g.op("FLASH_ATTN_EXT", (hd, nh, nq, n_stream), qq, k, v, mask)
                fa.extra = fa_extra  # ggml-cuda.cu ggml_backend_cuda_buffer_type_get_alloc_size: K / V's F16 copies
                att = g.reshape(fa, (hd * nh, T_))
            else:  # llm_graph_context::build_attn_mha without flash attention
                v = g.permute(g.view(vv, (n_kv, nkv, hd, n_stream), (v_type[0], n_kv * hd * v_type[0],
                                                                      n_kv * v_type[0], n_kv * hd * nkv * v_type[0])),
                              (0, 2, 1, 3))
                kq = g.op("MUL_MAT", (n_kv, nq, nh, n_stream), k, qq)
                kq = g.op("SOFT_MAX", kq.ne, kq, mask)
                kqv = g.op("MUL_MAT", (hd, nq, nh, n_stream), v, kq)
                att = g.op("CONT", (hd * nh, T_), g.permute(kqv, (0, 2, 1, 3)))
            if v_rot is not None:
                att = hadamard(att, v_rot)
            cur = g.op("MUL", att.ne, att, g.op("UNARY", gt.ne, gt))  # sigmoid of the gate
            cur = g.op("MUL_MAT", (n_embd, T_), w(f"blk.{il}.attn_output.weight", (hd * nh, n_embd), il), cur)
        R = T_  # the rows the layer's FFN runs on
        if last_layer_rows and la is spec.trunk_layers[-1]:  # out_ids' rows of the attention output and its input
            R = n_outputs
            cur = g.op("GET_ROWS", (n_embd, R), cur, out_ids)
            res = g.op("GET_ROWS", (n_embd, R), res, out_ids)
        cur = g.op("ADD", cur.ne, cur, res)
        ffn_res = cur
        pn = g.op("RMS_NORM", cur.ne, cur)
        pn = g.op("MUL", pn.ne, pn, w(f"blk.{il}.post_attention_norm.weight", (n_embd,), il))
        f = la.ffn
        if f.n_experts:
            inp = g.op("ADD", (n_embd, R), _qwen_moe_ffn(g, w, f, il, pn, n_embd, R), ffn_res)
            continue
        down = build_ffn(g, w, pn, f.n_ff, il)
        inp = g.op("ADD", down.ne, down, ffn_res)
    h = g.op("RMS_NORM", inp.ne, inp)
    h = g.op("MUL", h.ne, h, w("output_norm.weight", (n_embd,), None))
    h.output = True  # t_h_nextn (last_layer_rows: result_norm, t_embd, already the out_ids rows)
    rows = h if last_layer_rows else g.op("GET_ROWS", (n_embd, n_outputs), h, out_ids)
    rows.output = True
    logits = g.op("MUL_MAT", (spec.n_vocab, n_outputs), w("output.weight", (n_embd, spec.n_vocab), None), rows)
    logits.output = True
    g.expand(logits)
    return g


def _qwen_moe_ffn(g: Graph, w: Callable[[str, tuple[int, ...], int | None], T], f, il: int, x: T, n_embd: int,
                  R: int) -> T:
    """qwen35moe.cpp / qwen3next.cpp build_layer_ffn: llm_graph_context::build_moe_ffn (softmax router, ARGSORT's
    top-k view, the chosen probabilities normalised: SUM_ROWS, CLAMP, DIV of the reshaped weights, expanded early;
    gate / up MUL_MAT_ID, SWIGLU, down, weighted; each expert's view expanded, then their ADDs (a CONT for one
    expert), expanded), then the shared expert (build_ffn's gate, up, SWIGLU, down) times the sigmoid of its gate
    (ffn_gate_inp_shexp), added to the experts' sum."""
    n_exp, n_used, ff = f.n_experts, f.n_experts_used, f.n_ff_expert or f.n_ff
    probs = g.op("MUL_MAT", (n_exp, R), w(f"blk.{il}.ffn_gate_inp.weight", (n_embd, n_exp), il), x)
    probs = g.op("SOFT_MAX", probs.ne, probs)
    topk = g.view(g.op("ARGSORT", probs.ne, probs), (n_used, R))
    wts = g.op("GET_ROWS", (1, n_used, R), g.reshape(probs, (1, n_exp, R)), topk)
    w2 = g.reshape(wts, (n_used, R))
    s = g.op("CLAMP", (1, R), g.op("SUM_ROWS", (1, R), w2))
    wts = g.expand(g.reshape(g.op("DIV", w2.ne, w2, s), (1, n_used, R)))
    xr = g.reshape(x, (n_embd, 1, R))
    up = g.op("MUL_MAT_ID", (ff, n_used, R), w(f"blk.{il}.ffn_up_exps.weight", (n_embd, ff, n_exp), il), xr, topk)
    gate = g.op("MUL_MAT_ID", (ff, n_used, R), w(f"blk.{il}.ffn_gate_exps.weight", (n_embd, ff, n_exp), il), xr,
                topk)
    down = g.op("MUL_MAT_ID", (n_embd, n_used, R), w(f"blk.{il}.ffn_down_exps.weight", (ff, n_embd, n_exp), il),
                g.op("GLU", (ff, n_used, R), gate, up), topk)
    ex = g.op("MUL", down.ne, down, wts)
    views = [g.expand(g.view(ex, (n_embd, R), (4, ex.nb[2]))) for _ in range(n_used)]  # each expanded
    moe = views[0]
    for v in views[1:]:
        moe = g.op("ADD", (n_embd, R), moe, v)
    if n_used == 1:
        moe = g.op("CONT", (n_embd, R), moe)
    g.expand(moe)
    if not f.n_ff_shared:
        return moe
    down = build_ffn(g, w, x, f.n_ff_shared, il, "_shexp")
    sg = g.op("MUL_MAT", (1, R), w(f"blk.{il}.ffn_gate_inp_shexp.weight", (n_embd,), il), x)
    down = g.op("MUL", down.ne, down, g.op("UNARY", sg.ne, sg))
    return g.op("ADD", moe.ne, moe, down)


def gemma2_graph(spec, T_: int, n_outputs: int, caches: list[tuple[tuple[int, ...], int]], host: dict[str, int],
                 host_layers: set[int], flash_attn: bool = True, host_caches: bool = False,
                 k_type: tuple[int, int] = (2, 1), v_type: tuple[int, int] = (2, 1), k_rot: int = 0, v_rot: int = 0,
                 fa_extra: dict[int, int] | None = None, gemma3: bool = False, n_stream: int = 1) -> Graph:
    """Gemma 2's pp graph (src/models/gemma2.cpp at llama.cpp@0c1e57098, one sequence a KV stream, an F16 cache), in
    graph order: the token rows scaled by sqrt(n_embd) (inp_scaled); per layer the attention norm; build_qkv's
    Q, K and V products and their reshapes; Q and K roped, Q scaled (f_attention_scale); the iSWA build_attn
    expanding q, k, then v, the K and V stores into the layer's cache (its SWA or base cache: caches, (layers,
    cells) each), FLASH_ATTN_EXT (the soft-capping its parameter) on the cache's views with the cache's F16 mask, or
    build_attn_mha's KQ soft-capped (SCALE, TANH, SCALE), SOFT_MAX with the F32 mask, KQV on the transposed V cache
    and the CONT of its permutation; wo; in the last layer out_ids' rows of it and of the layer input (GET_ROWS);
    the post-attention norm, sa_out, the FFN norm, build_ffn's up, gate, GEGLU and down, the post-FFW norm and the
    residual; the output norm (result_norm, t_embd, an output), the logits and their soft-capping (SCALE, TANH,
    SCALE in place, the last an output). The layers in host_layers keep their weights and their cache on the CPU;
    host: those weights' bytes, copied when read on the device; host_caches (-nkvo): every cache on the CPU.
    k_type / v_type, k_rot / v_rot: a quantized cache's blocks and rotations (llama_graph's; the iSWA build_attn
    rotates with the matrices of the layer's own cache, each cache its own inputs); fa_extra: by layer, ggml-cuda's
    F16 copies behind its FLASH_ATTN_EXT (over its own cache's cells).
    gemma3: Gemma 3's graph (src/models/gemma3.cpp llama_model_gemma3::graph<iswa>, same commit): Q and K each
    RMS-normed by attn_q_norm / attn_k_norm (RMS_NORM, MUL) before their RoPE, no attention soft-capping
    (hparams.attn_soft_cap false: build_attn_mha's KQ goes straight to SOFT_MAX) and no logits soft-capping
    (f_final_logit_softcapping 0: convert_hf_to_gguf's Gemma3Model writes none). n_stream: KV streams (one a
    sequence without a unified cache), each cache with its cells a stream, its T_ / n_stream tokens' mask rows and
    attention (as llama_graph)."""
    g, w, embd = _pp_graph_start(spec, T_, host, host_layers)
    n_embd = spec.n_embd
    inp = g.op("SCALE", embd.ne, embd)  # inp_scaled
    inp_pos = g.input((T_,))
    trunk = spec.trunk_layers
    by_layer: dict[int, tuple[T, T, T, int, T | None, T | None]] = {}
    for layers, cells in caches:  # build_attn_inp_kv_iswa: each cache's K / V row indices, its mask, its rotations
        a = spec.trunk_layers[layers[0]].attention
        k_idxs = g.input((T_,), 8)
        v_idxs = g.input((T_ if flash_attn else T_ * a.n_kv_heads * a.head_dim_v,), 8)
        mask = g.input((cells, T_ // n_stream, 1, n_stream), 2 if flash_attn else 4)
        kr = g.input((k_rot, k_rot)) if k_rot else None
        vr = g.input((v_rot, v_rot)) if v_rot else None
        by_layer.update({il: (k_idxs, v_idxs, mask, cells, kr, vr) for il in layers})
    out_ids = g.input((n_outputs,))

    hadamard = g.hadamard

    for la in trunk:
        il, a = la.index, la.attention
        dev = HOST if il in host_layers or host_caches else DEVICE  # the layer's cache
        k_idxs, v_idxs, mask, n_kv, kr, vr = by_layer[il]
        hd, hdv, nh, nkv = a.head_dim_k, a.head_dim_v, a.n_heads, a.n_kv_heads
        cur = g.op("RMS_NORM", inp.ne, inp)
        cur = g.op("MUL", cur.ne, cur, w(f"blk.{il}.attn_norm.weight", (n_embd,), il))
        q = g.op("MUL_MAT", (hd * nh, T_), w(f"blk.{il}.attn_q.weight", (n_embd, hd * nh), il), cur)
        kc = g.op("MUL_MAT", (hd * nkv, T_), w(f"blk.{il}.attn_k.weight", (n_embd, hd * nkv), il), cur)
        vc = g.op("MUL_MAT", (hdv * nkv, T_), w(f"blk.{il}.attn_v.weight", (n_embd, hdv * nkv), il), cur)
        q, kc, vc = g.reshape(q, (hd, nh, T_)), g.reshape(kc, (hd, nkv, T_)), g.reshape(vc, (hdv, nkv, T_))
        if gemma3:  # gemma3.cpp: Qcur_normed, Kcur_normed before their RoPE
            q = g.op("MUL", q.ne, g.op("RMS_NORM", q.ne, q), w(f"blk.{il}.attn_q_norm.weight", (hd,), il))
            kc = g.op("MUL", kc.ne, g.op("RMS_NORM", kc.ne, kc), w(f"blk.{il}.attn_k_norm.weight", (hd,), il))
        q, kc = g.op("ROPE", q.ne, q, inp_pos), g.op("ROPE", kc.ne, kc, inp_pos)
        q = g.op("SCALE", q.ne, q)
        if kr is not None:  # the iSWA build_attn: Q and K rotated, then V
            q, kc = hadamard(q, kr), hadamard(kc, kr)
        if vr is not None:
            vc = hadamard(vc, vr)
        g.expand(q)
        g.expand(kc)
        g.expand(vc)  # the iSWA build_attn: q, k, then v
        kc_, vv = g.store_kv(kc, vc, k_idxs, v_idxs, n_kv, dev, flash_attn, n_stream, k_type, v_type)
        att = g.attend(q, kc_, vv, mask, flash_attn, (fa_extra or {}).get(il, 0), not gemma3, k_type, v_type)
        if vr is not None:
            att = hadamard(att, vr)
        cur = g.op("MUL_MAT", (n_embd, T_), w(f"blk.{il}.attn_output.weight", (hdv * nh, n_embd), il), att)
        R = T_
        if la is trunk[-1]:  # out_ids' rows of the attention output and of the layer input
            R = n_outputs
            cur = g.op("GET_ROWS", (n_embd, R), cur, out_ids)
            inp = g.op("GET_ROWS", (n_embd, R), inp, out_ids)
        cur = g.op("RMS_NORM", cur.ne, cur)
        cur = g.op("MUL", cur.ne, cur, w(f"blk.{il}.post_attention_norm.weight", (n_embd,), il))
        sa = g.op("ADD", cur.ne, cur, inp)
        cur = g.op("RMS_NORM", sa.ne, sa)
        cur = g.op("MUL", cur.ne, cur, w(f"blk.{il}.ffn_norm.weight", (n_embd,), il))
        down = build_ffn(g, w, cur, la.ffn.n_ff, il)  # GEGLU
        cur = g.op("RMS_NORM", down.ne, down)
        cur = g.op("MUL", cur.ne, cur, w(f"blk.{il}.post_ffw_norm.weight", (n_embd,), il))
        inp = g.op("ADD", cur.ne, cur, sa)
    h = g.op("RMS_NORM", inp.ne, inp)
    h = g.op("MUL", h.ne, h, w("output_norm.weight", (n_embd,), None))
    h.output = True  # result_norm (t_embd)
    logits = g.op("MUL_MAT", (spec.n_vocab, h.ne[1]), w("output.weight", (n_embd, spec.n_vocab), None), h)
    if not gemma3:  # f_final_logit_softcapping
        logits = g.op("SCALE", logits.ne, g.op("UNARY", logits.ne, g.op("SCALE", logits.ne, logits)))
    logits.output = True
    g.expand(logits)
    return g


def gemma3n_graph(spec, T_: int, n_outputs: int, caches: list[tuple[tuple[int, ...], int]], host: dict[str, int],
                  host_layers: set[int], flash_attn: bool = True, host_caches: bool = False,
                  fa_extra: dict[int, int] | None = None) -> Graph:
    """Gemma 3n's pp graph (src/models/gemma3n.cpp llama_model_gemma3n::graph at llama.cpp@0c1e57098, one sequence
    a KV stream, an F16 cache), in graph order: the token rows (build_inp_embd) and build_inp_per_layer's GET_ROWS of
    per_layer_token_embd, reshaped and scaled, expanded first; inp_scaled; project_per_layer_inputs (per_layer_model_proj,
    SCALE, the RMS norm of its reshape and per_layer_proj_norm, + the selected rows, SCALE, the CONT of the permuted
    [n_embd_altup, n_tokens, n_layer]); the AltUp stack (calc_magnitude: SQR, SUM_ROWS, SQRT; REPEAT, altup_proj,
    MUL, DIV, CONCAT). Per layer altup_predict (altup_compute_router_modalities: the norm, SCALE, altup_router, TANH;
    altup_predict_coef, the CONT of the permuted streams, their product, the CONT of its permutation, + the streams),
    the attention norm, laurel (laurel_l, laurel_r, the norm, + its input); with a cache of its own (has_kv) Q, K and
    V (Q and K RMS-normed by their weights and roped, V RMS-normed without one) expanded q, k, v by the iSWA
    build_attn, the stores, FLASH_ATTN_EXT on the cache's views, or KQ, SOFT_MAX (no soft-capping), KQV and its CONT;
    a KV-shared layer Q alone on its source layer's cache (kv_source); wo, attn_post_norm, attn_gated, attn_laurel
    (ADD, SCALE); the FFN (up, gate, gaussian_topk in the first n_layer_sparsity layers: MEAN, SUB, SQR, SUM_ROWS,
    SCALE, SQRT, SCALE, ADD, SUB, RELU; GELU, MUL, down) and its post-norm, + attn_laurel; altup_correct (the router
    again, the innovation SUB, altup_correct_coef, SCALE (scale_bias), the CONT of its transpose, REPEAT, MUL, ADD);
    the first prediction times altup_correct_scale, inp_gate, GELU, times the layer's slice of the per-layer inputs,
    proj and post_norm, added to the other streams, CONCAT behind the first. The AltUp merge (altup_unembd_proj on
    the other streams, rescaled, summed onto the first, SCALE), out_ids' rows, result_norm (an output), the logits
    and their soft-capping (an output). Placement: token_embd and per_layer_token_embd on the host (the input layer),
    per_layer_model_proj / per_layer_proj_norm with layer 0 (weights.LAYER0_TENSORS), altup_proj / altup_unembd_proj
    and the output with the output layer; host_layers keep their weights and caches on the CPU (host: the weights'
    bytes, copied when read on the device); host_caches (-nkvo): every cache on the CPU; fa_extra: by layer,
    ggml-cuda's F16 copies behind its FLASH_ATTN_EXT."""
    g, w_new, embd = _pp_graph_start(spec, T_, host, host_layers)
    made: dict[str, T] = {}

    def w(name: str, ne: tuple[int, ...], il: int | None) -> T:  # one tensor a weight: altup_correct reads the
        if name not in made:  # router's weights again, read from their one copy (no new split input)
            made[name] = w_new(name, ne, il)
        return made[name]

    E, L = spec.n_embd, len(spec.trunk_layers)
    shapes = {t.name: t.shape for t in spec.weights.tensors}
    P = shapes["per_layer_token_embd.weight"][0] // L
    A = shapes["altup_proj.weight"][2] + 1
    f32 = 4
    inp = g.op("SCALE", embd.ne, embd)  # inp_scaled
    inp_pos = g.input((T_,))
    trunk = spec.trunk_layers
    by_cache: dict[int, tuple[T, T, T, int]] = {}
    for layers, cells in caches:  # build_attn_inp_kv_iswa
        a = trunk[layers[0]].attention
        k_idxs = g.input((T_,), 8)
        v_idxs = g.input((T_ if flash_attn else T_ * a.n_kv_heads * a.head_dim_v,), 8)
        mask = g.input((cells, T_, 1, 1), 2 if flash_attn else 4)
        by_cache.update({il: (k_idxs, v_idxs, mask, cells) for il in layers})
    # build_inp_per_layer: its own token ids, GET_ROWS of the host's per_layer_token_embd, reshaped, SCALE; expanded
    tok_pl = g.weight((P * L, spec.n_vocab), HOST)
    rows = g.op("GET_ROWS", (P * L, T_), tok_pl, g.input((T_,)))
    selected = g.expand(g.op("SCALE", (P, L, T_), g.reshape(rows, (P, L, T_))))
    # project_per_layer_inputs
    pp = g.op("MUL_MAT", (P * L, T_), w("per_layer_model_proj.weight", (E, P * L), 0), inp)
    pp = g.reshape(g.op("SCALE", pp.ne, pp), (P, L, T_))
    pp = g.op("MUL", pp.ne, g.op("RMS_NORM", pp.ne, pp), w("per_layer_proj_norm.weight", (P,), 0))
    pp = g.op("SCALE", pp.ne, g.op("ADD", pp.ne, pp, selected))
    per_layer = g.op("CONT", (P, T_, L), g.permute(pp, (0, 2, 1, 3)))

    def magnitude(x: T) -> T:  # calc_magnitude
        ne = (1,) + x.ne[1:]
        return g.op("UNARY", ne, g.op("SUM_ROWS", ne, g.op("SQR", x.ne, x)))  # SQRT

    def sl(x: T, i: int) -> T:  # gemma3n_view_2d_slice
        return g.view(x, (x.ne[0], x.ne[1]), (f32, x.ne[0] * f32))

    def rest(x: T) -> T:  # the view of streams 1..n_altup - 1
        return g.view(x, (E, T_, A - 1), (f32, E * f32, E * T_ * f32))

    def norm(x: T, name: str, il: int | None) -> T:  # build_norm, LLM_NORM_RMS
        return g.op("MUL", x.ne, g.op("RMS_NORM", x.ne, x), w(name, (x.ne[0],), il))

    def router(x: T, il: int) -> T:  # altup_compute_router_modalities
        r = g.op("SCALE", x.ne, norm(x, f"blk.{il}.altup_router_norm.weight", il))
        return g.op("UNARY", (A, T_), g.op("MUL_MAT", (A, T_), w(f"blk.{il}.altup_router.weight", (E, A), il), r))

    target = magnitude(inp)
    added = g.op("MUL_MAT", (E, T_, A - 1), w("altup_proj.weight", (E, E, A - 1), None),
                 g.op("REPEAT", (E, T_, A - 1), inp))
    added = g.op("DIV", added.ne, g.op("MUL", added.ne, added, target), magnitude(added))
    cur = g.op("CONCAT", (E, T_, A), inp, added)  # inp_stacked
    own: dict[int, tuple[T, T]] = {}  # the caches by the layer that stores them
    for la in trunk:
        il, a = la.index, la.attention
        dev = HOST if il in host_layers or host_caches else DEVICE
        src = il if la.kv_source is None else la.kv_source
        k_idxs, v_idxs, mask, n_kv = by_cache[src]
        hd, hdv, nh, nkv = a.head_dim_k, a.head_dim_v, a.n_heads, a.n_kv_heads
        # altup_predict
        coefs = g.reshape(g.op("MUL_MAT", (A * A, T_), w(f"blk.{il}.altup_predict_coef.weight", (A, A * A), il),
                               router(sl(cur, 0), il)), (A, A, T_))
        perm = g.op("CONT", (A, E, T_), g.permute(cur, (1, 2, 0, 3)))
        pred = g.op("MUL_MAT", (E, A, T_), perm, coefs)
        pred = g.op("ADD", (E, T_, A), g.op("CONT", (E, T_, A), g.permute(pred, (0, 2, 1, 3))), cur)
        active = sl(pred, 0)
        x = norm(active, f"blk.{il}.attn_norm.weight", il)
        rank = shapes[f"blk.{il}.laurel_l.weight"][1]
        lo = g.op("MUL_MAT", (E, T_), w(f"blk.{il}.laurel_r.weight", (rank, E), il),
                  g.op("MUL_MAT", (rank, T_), w(f"blk.{il}.laurel_l.weight", (E, rank), il), x))
        lo = g.op("ADD", lo.ne, norm(lo, f"blk.{il}.laurel_post_norm.weight", il), x)  # laurel_out
        q = g.reshape(g.op("MUL_MAT", (hd * nh, T_), w(f"blk.{il}.attn_q.weight", (E, hd * nh), il), x), (hd, nh, T_))
        q = g.op("ROPE", q.ne, norm(q, f"blk.{il}.attn_q_norm.weight", il), inp_pos)
        g.expand(q)
        if la.kv_source is None:  # has_kv: K and V, stored
            kc = g.reshape(g.op("MUL_MAT", (hd * nkv, T_), w(f"blk.{il}.attn_k.weight", (E, hd * nkv), il), x),
                           (hd, nkv, T_))
            vc = g.reshape(g.op("MUL_MAT", (hdv * nkv, T_), w(f"blk.{il}.attn_v.weight", (E, hdv * nkv), il), x),
                           (hdv, nkv, T_))
            kc = g.op("ROPE", kc.ne, norm(kc, f"blk.{il}.attn_k_norm.weight", il), inp_pos)
            vc = g.op("RMS_NORM", vc.ne, vc)
            g.expand(kc)
            g.expand(vc)  # the iSWA build_attn: q, k, then v
            own[il] = g.store_kv(kc, vc, k_idxs, v_idxs, n_kv, dev, flash_attn)
        kc_, vv = own[src]
        att = g.attend(q, kc_, vv, mask, flash_attn, (fa_extra or {}).get(il, 0))
        o = g.op("MUL_MAT", (E, T_), w(f"blk.{il}.attn_output.weight", (hdv * nh, E), il), att)
        o = g.op("ADD", o.ne, norm(o, f"blk.{il}.post_attention_norm.weight", il), active)  # attn_gated
        al = g.op("SCALE", o.ne, g.op("ADD", o.ne, o, lo))  # attn_laurel
        n = norm(al, f"blk.{il}.ffn_norm.weight", il)
        F = la.ffn.n_ff
        up = g.op("MUL_MAT", (F, T_), w(f"blk.{il}.ffn_up.weight", (E, F), il), n)
        gate = g.op("MUL_MAT", (F, T_), w(f"blk.{il}.ffn_gate.weight", (E, F), il), n)
        if il < GEMMA3N_SPARSE_LAYERS:  # gaussian_topk
            mean = g.op("MEAN", (1, T_), gate)
            sd = g.op("SUM_ROWS", (1, T_), g.op("SQR", gate.ne, g.op("SUB", gate.ne, gate, mean)))
            sd = g.op("SCALE", sd.ne, g.op("UNARY", sd.ne, g.op("SCALE", sd.ne, sd)))  # SCALE, SQRT, SCALE
            gate = g.op("UNARY", gate.ne, g.op("SUB", gate.ne, gate, g.op("ADD", (1, T_), mean, sd)))  # RELU
        h = g.op("MUL", up.ne, up, g.op("UNARY", gate.ne, gate))  # GELU
        h = g.op("MUL_MAT", (E, T_), w(f"blk.{il}.ffn_down.weight", (F, E), il), h)
        gated = g.op("ADD", h.ne, norm(h, f"blk.{il}.post_ffw_norm.weight", il), al)  # attn_ffw_laurel_gated
        # altup_correct
        mod = router(gated, il)
        innov = g.op("SUB", gated.ne, gated, sl(pred, 0))
        c = g.op("MUL_MAT", (A, T_), w(f"blk.{il}.altup_correct_coef.weight", (A, A), il), mod)
        c = g.op("CONT", (1, T_, A), g.transpose(g.op("SCALE", c.ne, c)))
        corr = g.op("MUL", (E, T_, A), g.op("REPEAT", (E, T_, A), innov), c)
        corr = g.op("ADD", corr.ne, corr, pred)
        fp = g.op("MUL", (E, T_), sl(corr, 0), w(f"blk.{il}.altup_correct_scale.weight", (E,), il))
        fp = g.op("MUL_MAT", (P, T_), w(f"blk.{il}.inp_gate.weight", (E, P), il), fp)
        fp = g.op("MUL", (P, T_), g.op("UNARY", fp.ne, fp), g.view(per_layer, (P, T_), (f32, P * f32)))
        fp = g.op("MUL_MAT", (E, T_), w(f"blk.{il}.proj.weight", (P, E), il), fp)
        fp = norm(fp, f"blk.{il}.post_norm.weight", il)
        cur = g.op("CONCAT", (E, T_, A), sl(corr, 0), g.op("ADD", (E, T_, A - 1), rest(corr), fp))  # l_out
    # the AltUp merge
    target = magnitude(sl(cur, 0))
    un = g.op("MUL_MAT", (E, T_, A - 1), w("altup_unembd_proj.weight", (E, E, A - 1), None), rest(cur))
    un = g.op("DIV", un.ne, g.op("MUL", un.ne, un, target), magnitude(un))
    h = sl(cur, 0)
    for i in range(A - 1):
        h = g.op("ADD", (E, T_), h, sl(un, i))
    h = g.op("SCALE", h.ne, h)  # unembd_merged
    h = g.op("GET_ROWS", (E, n_outputs), h, g.input((n_outputs,)))
    h = norm(h, "output_norm.weight", None)
    h.output = True  # result_norm (t_embd)
    logits = g.op("MUL_MAT", (spec.n_vocab, n_outputs), w("output.weight", (E, spec.n_vocab), None), h)
    logits = g.op("SCALE", logits.ne, g.op("UNARY", logits.ne, g.op("SCALE", logits.ne, logits)))
    logits.output = True
    g.expand(logits)
    return g


# src/models/models.h llama_model_gemma3n::graph n_layer_sparsity: the first 10 layers' gaussian top-k
GEMMA3N_SPARSE_LAYERS = 10


def llama4_graph(spec, T_: int, n_outputs: int, caches: list[tuple[tuple[int, ...], int]], host: dict[str, int],
                 host_layers: set[int], flash_attn: bool = True, host_caches: bool = False) -> Graph:
    """Llama 4's pp graph (src/models/llama4.cpp at llama.cpp@0c1e57098, the iSWA variant: chunked layers with RoPE,
    every n_no_rope_layer_step-th (4th) layer global without it; one sequence a KV stream, an F16 cache), in graph
    order: the token rows; per layer the attention norm, build_qkv's Q, K and V products and reshapes; a RoPE layer
    ropes Q and K and RMS-normalises them without weight (use_kq_norm: Llama4TextL2Norm), a global layer multiplies Q
    by the temperature-tuning input (build_inp_attn_scale, 1 x 1 x T); the iSWA build_attn (q, k, v expanded, the
    stores into the layer's cache: caches, (layers, cells) each, then FLASH_ATTN_EXT on its views and F16 mask, or
    KQ, SOFT_MAX with the F32 mask, KQV and its CONT) and wo; in the last layer out_ids' rows of it and of the layer
    input; ffn_inp; the FFN norm; build_moe_ffn with weight_before_ffn (LLM_ARCH_LLAMA4): the router's logits, their
    SIGMOID, ARGSORT of the logits themselves and its top-k view, GET_ROWS of the reshaped probabilities (expanded
    early), the input REPEATed to the used experts and multiplied by the weights, the gate / up MUL_MAT_ID, SWIGLU,
    down, each expert's view expanded, their ADDs (a CONT for one expert); the shared expert (build_ffn: up, gate,
    SWIGLU, down) added, then the residual; the output norm (result_norm, an output) and the logits. ggml-cuda's
    top-k fusion does not match this router (ggml_cuda_topk_moe_fusion wants ARGSORT to read the sigmoid's output),
    so no allocation dependency is added. The layers in host_layers keep their weights and their cache on the CPU;
    host: those weights' bytes, copied when read on the device; host_caches (-nkvo): every cache on the CPU."""
    g, w, inp = _pp_graph_start(spec, T_, host, host_layers)
    n_embd = spec.n_embd
    inp_pos = g.input((T_,))
    attn_scale = g.input((1, 1, T_))
    trunk = spec.trunk_layers
    by_layer: dict[int, tuple[T, T, T, int]] = {}
    for layers, cells in caches:  # build_attn_inp_kv_iswa
        a = trunk[layers[0]].attention
        k_idxs = g.input((T_,), 8)
        v_idxs = g.input((T_ if flash_attn else T_ * a.n_kv_heads * a.head_dim_v,), 8)
        mask = g.input((cells, T_, 1, 1), 2 if flash_attn else 4)
        by_layer.update({il: (k_idxs, v_idxs, mask, cells) for il in layers})
    out_ids = g.input((n_outputs,))
    for la in trunk:
        il, a, f = la.index, la.attention, la.ffn
        dev = HOST if il in host_layers or host_caches else DEVICE  # the layer's cache
        k_idxs, v_idxs, mask, n_kv = by_layer[il]
        hd, hdv, nh, nkv = a.head_dim_k, a.head_dim_v, a.n_heads, a.n_kv_heads
        res = inp
        cur = g.op("RMS_NORM", inp.ne, inp)
        cur = g.op("MUL", cur.ne, cur, w(f"blk.{il}.attn_norm.weight", (n_embd,), il))
        q = g.op("MUL_MAT", (hd * nh, T_), w(f"blk.{il}.attn_q.weight", (n_embd, hd * nh), il), cur)
        kc = g.op("MUL_MAT", (hd * nkv, T_), w(f"blk.{il}.attn_k.weight", (n_embd, hd * nkv), il), cur)
        vc = g.op("MUL_MAT", (hdv * nkv, T_), w(f"blk.{il}.attn_v.weight", (n_embd, hdv * nkv), il), cur)
        q, kc, vc = g.reshape(q, (hd, nh, T_)), g.reshape(kc, (hd, nkv, T_)), g.reshape(vc, (hdv, nkv, T_))
        if a.window:  # use_rope (a chunked layer), then use_kq_norm's weightless RMS norms
            q, kc = g.op("ROPE", q.ne, q, inp_pos), g.op("ROPE", kc.ne, kc, inp_pos)
            q, kc = g.op("RMS_NORM", q.ne, q), g.op("RMS_NORM", kc.ne, kc)
        else:
            q = g.op("MUL", q.ne, q, attn_scale)
        g.expand(q)
        g.expand(kc)
        g.expand(vc)
        kc_, vv = g.store_kv(kc, vc, k_idxs, v_idxs, n_kv, dev, flash_attn)
        att = g.attend(q, kc_, vv, mask, flash_attn)
        cur = g.op("MUL_MAT", (n_embd, T_), w(f"blk.{il}.attn_output.weight", (hdv * nh, n_embd), il), att)
        ffn_inp, x = ffn_input(g, w, cur, res, la is trunk[-1], out_ids, il)
        R = x.ne[1]
        n_exp, n_used, ff = f.n_experts, f.n_experts_used, f.n_ff_expert
        logits = g.op("MUL_MAT", (n_exp, R), w(f"blk.{il}.ffn_gate_inp.weight", (n_embd, n_exp), il), x)
        probs = g.op("UNARY", logits.ne, logits)  # sigmoid
        topk = g.view(g.op("ARGSORT", logits.ne, logits), (n_used, R))  # selection_probs = logits (llama4)
        wts = g.expand(g.op("GET_ROWS", (1, n_used, R), g.reshape(probs, (1, n_exp, R)), topk))
        xr = g.op("MUL", (n_embd, n_used, R), g.op("REPEAT", (n_embd, n_used, R), g.reshape(x, (n_embd, 1, R))), wts)
        up = g.op("MUL_MAT_ID", (ff, n_used, R), w(f"blk.{il}.ffn_up_exps.weight", (n_embd, ff, n_exp), il), xr, topk)
        gate = g.op("MUL_MAT_ID", (ff, n_used, R), w(f"blk.{il}.ffn_gate_exps.weight", (n_embd, ff, n_exp), il), xr,
                    topk)
        ex = g.expand(g.op("MUL_MAT_ID", (n_embd, n_used, R),
                           w(f"blk.{il}.ffn_down_exps.weight", (ff, n_embd, n_exp), il),
                           g.op("GLU", (ff, n_used, R), gate, up), topk))
        views = [g.expand(g.view(ex, (n_embd, R), (4, ex.nb[2]))) for _ in range(n_used)]
        moe = views[0]
        for v_ in views[1:]:
            moe = g.expand(g.op("ADD", (n_embd, R), moe, v_))
        if n_used == 1:
            moe = g.op("CONT", (n_embd, R), moe)
        cur = g.op("ADD", moe.ne, moe, build_ffn(g, w, x, f.n_ff_shared, il, "_shexp"))
        inp = g.op("ADD", cur.ne, cur, ffn_inp)
    return output_head(g, w, spec, inp)


def llama_graph(spec, T_: int, n_outputs: int, n_kv: int, host: dict[str, int], host_layers: set[int],
                flash_attn: bool = True, host_caches: bool = False, qk_norm: bool | str = False,
                k_type: tuple[int, int] = (2, 1), v_type: tuple[int, int] = (2, 1), k_rot: int = 0, v_rot: int = 0,
                fa_extra: int = 0, n_stream: int = 1, ffn_norm: str = "ffn_norm", fusion_deps: bool = False,
                cpy_store: bool = False, kv_first: bool = False, repacked: frozenset[str] = frozenset(),
                host_output: bool = False) -> Graph:
    """A dense Llama's pp graph (src/models/llama.cpp at llama.cpp@0c1e57098; qk_norm: qwen3.cpp's, Q and K
    RMS-normed by attn_q_norm / attn_k_norm before RoPE), one sequence a KV stream of n_kv cells, an F16 cache, in
    graph order: the token rows; per layer the attention norm, build_qkv's Q, K and V products and reshapes, RoPE
    (with rope_freqs, the llama3 factors, where the file has them), build_attn expanding q, v, then k, the stores, then
    FLASH_ATTN_EXT on the cache's views and F16 mask, or KQ, SOFT_MAX with the F32 mask, KQV on the transposed V
    cache and the CONT of its permutation; wo; in the last layer out_ids' rows of it and of the layer input; ffn_inp,
    the FFN norm, build_ffn's up, gate, SWIGLU and down, the residual; the output norm (result_norm, an output) and
    the logits. The layers in host_layers keep their weights and their cache on the CPU; host: those weights' bytes,
    copied when read on the device; host_caches (-nkvo): every cache on the CPU. k_type / v_type: the cache's
    (bytes, elements) per block; k_rot / v_rot: a quantized cache's rotation sizes (llama_kv_cache::build_input_k_rot
    / build_input_v_rot; 0: none), applied by llama_mul_mat_hadamard to Q and K after RoPE, V, and the attention's
    output (llm_graph_context::build_attn); fa_extra: the bytes ggml-cuda allocates behind each FLASH_ATTN_EXT (its
    F16 copies of K and V, compute.fa_f16_bytes). n_stream: KV streams (one a sequence without a unified cache), each
    with its n_kv cells, its T_ / n_stream tokens' mask rows and attention (build_attn_mha's streams). Q, K and V
    biases where the file has them (llama_model_base::create_tensor_qkv loads them for every architecture, build_qkv
    adds each to its product before the reshape); ffn_norm: the FFN norm's tensor (seed-oss.cpp: attn_post_norm,
    post_attention_norm.weight, the same RMS_NORM, MUL of ffn_inp). qk_norm "rows": minimax-m2.cpp's Q and K
    RMS-normed over all their heads (build_qkv without the reshape, RMS_NORM and MUL by attn_q_norm / attn_k_norm of
    n_head x head_dim), then reshaped and roped. A layer whose FFN has experts: build_moe_ffn with SIGMOID gating and
    exp_probs_b (sigmoid_moe; minimax-m2.cpp: no shared expert), fusion_deps its ggml-cuda allocation dependencies.
    kv_first: src/llama.cpp's graph of b4777 (401af80b) and its era, llm_build_kv expanding q_cur, k_cur and v_cur
    (Q, K, V products in that order), then llm_build_kv_store's ggml_cpy stores (with cpy_store), then llm_build_kqv;
    llm_build_ffn's up, gate, SILU and MUL (LLM_FFN_SILU, LLM_FFN_PAR), no fused GLU. repacked: the host weights in
    the CPU's extra buffer type (T.repacked: no op offload); host_output: the output norm and weight on the CPU."""
    g, w_, inp = _pp_graph_start(spec, T_, host, host_layers)

    def w(name: str, ne: tuple[int, ...], il: int | None) -> T:
        if host_output and il is None:
            t = g.weight(ne, HOST, host.get(name, -1), name=name if name in host else "")
        else:
            t = w_(name, ne, il)
        t.repacked = name in repacked
        return t

    n_embd = spec.n_embd
    inp_pos = g.input((T_,))
    trunk = spec.trunk_layers
    a0 = trunk[0].attention
    k_idxs = g.input((T_,), 8)
    v_idxs = g.input((T_ if flash_attn else T_ * a0.n_kv_heads * a0.head_dim_v,), 8)
    nq = T_ // n_stream
    mask = g.input((n_kv, nq, 1, n_stream), 2 if flash_attn else 4)
    kr = g.input((k_rot, k_rot)) if k_rot else None
    vr = g.input((v_rot, v_rot)) if v_rot else None
    out_ids = g.input((n_outputs,))

    hadamard = g.hadamard

    names = {t.name for t in spec.weights.tensors}

    def biased(x: T, name: str, il: int) -> T:  # a bias the file has, added to the product
        return g.op("ADD", x.ne, x, w(name, (x.ne[0],), il)) if name in names else x

    for la in trunk:
        il, a = la.index, la.attention
        dev = HOST if il in host_layers or host_caches else DEVICE  # the layer's cache
        hd, hdv, nh, nkv = a.head_dim_k, a.head_dim_v, a.n_heads, a.n_kv_heads
        res = inp
        cur = g.op("RMS_NORM", inp.ne, inp)
        cur = g.op("MUL", cur.ne, cur, w(f"blk.{il}.attn_norm.weight", (n_embd,), il))
        q = biased(g.op("MUL_MAT", (hd * nh, T_), w(f"blk.{il}.attn_q.weight", (n_embd, hd * nh), il), cur),
                   f"blk.{il}.attn_q.bias", il)
        kc = biased(g.op("MUL_MAT", (hd * nkv, T_), w(f"blk.{il}.attn_k.weight", (n_embd, hd * nkv), il), cur),
                    f"blk.{il}.attn_k.bias", il)
        vc = biased(g.op("MUL_MAT", (hdv * nkv, T_), w(f"blk.{il}.attn_v.weight", (n_embd, hdv * nkv), il), cur),
                    f"blk.{il}.attn_v.bias", il)
        if qk_norm == "rows":  # minimax-m2.cpp: build_qkv without the reshape, the norms over all heads
            q = g.op("MUL", q.ne, g.op("RMS_NORM", q.ne, q), w(f"blk.{il}.attn_q_norm.weight", (hd * nh,), il))
            kc = g.op("MUL", kc.ne, g.op("RMS_NORM", kc.ne, kc), w(f"blk.{il}.attn_k_norm.weight", (hd * nkv,), il))
        q, kc, vc = g.reshape(q, (hd, nh, T_)), g.reshape(kc, (hd, nkv, T_)), g.reshape(vc, (hdv, nkv, T_))
        rope = (w("rope_freqs.weight", (hd // 2,), il),) if "rope_freqs.weight" in names else ()
        if qk_norm and qk_norm != "rows":
            q = g.op("MUL", q.ne, g.op("RMS_NORM", q.ne, q), w(f"blk.{il}.attn_q_norm.weight", (hd,), il))
        q = g.op("ROPE", q.ne, q, inp_pos, *rope)
        if qk_norm and qk_norm != "rows":
            kc = g.op("MUL", kc.ne, g.op("RMS_NORM", kc.ne, kc), w(f"blk.{il}.attn_k_norm.weight", (hd,), il))
        kc = g.op("ROPE", kc.ne, kc, inp_pos, *rope)
        if kr is not None:
            q, kc = hadamard(q, kr), hadamard(kc, kr)
        if vr is not None:
            vc = hadamard(vc, vr)
        if kv_first:  # llm_build_kv: q_cur, k_cur, v_cur, then the stores
            g.expand(q)
            g.expand(kc)
            g.expand(vc)
        elif not cpy_store:  # b5920's build_attn expands the K store, the V store, then the attention (Q last)
            g.expand(q)
            g.expand(vc)
            g.expand(kc)  # build_attn: q, v, then k
        kc_, vv = g.store_kv(kc, vc, k_idxs, v_idxs, n_kv, dev, flash_attn, n_stream, k_type, v_type, cpy_store)
        att = g.attend(q, kc_, vv, mask, flash_attn, fa_extra, k_type=k_type, v_type=v_type)
        if vr is not None:
            att = hadamard(att, vr)
        cur = g.op("MUL_MAT", (n_embd, T_), w(f"blk.{il}.attn_output.weight", (hdv * nh, n_embd), il), att)
        ffn_inp, x = ffn_input(g, w, cur, res, la is trunk[-1], out_ids, il, ffn_norm)
        if la.ffn.n_experts:
            moe = sigmoid_moe(g, w, la.ffn, il, x, n_embd, x.ne[1], fusion_deps)
            inp = g.op("ADD", moe.ne, moe, ffn_inp)
            continue
        if kv_first:  # llm_build_ffn: up, gate, SILU, MUL, down
            n_ff = la.ffn.n_ff
            up = g.op("MUL_MAT", (n_ff, x.ne[1]), w(f"blk.{il}.ffn_up.weight", (n_embd, n_ff), il), x)
            gate = g.op("MUL_MAT", (n_ff, x.ne[1]), w(f"blk.{il}.ffn_gate.weight", (n_embd, n_ff), il), x)
            act = g.op("MUL", gate.ne, g.op("UNARY", gate.ne, gate), up)
            down = g.op("MUL_MAT", (n_embd, x.ne[1]), w(f"blk.{il}.ffn_down.weight", (n_ff, n_embd), il), act)
        else:
            down = build_ffn(g, w, x, la.ffn.n_ff, il)
        inp = g.op("ADD", down.ne, down, ffn_inp)
    return output_head(g, w, spec, inp)


def host_nodes(g: Graph, n_embd: int, T_: int) -> tuple[int, list[Node]]:
    """The graph as the CPU backend alone hands it to ggml-alloc (no splits, no copies): its leafs first, in
    ggml_build_forward_expand's order, build_inp_embd's embeddings input (flagged an input, never read) after the
    tokens' ids, then the nodes; the weights and caches take no bytes here -> (the leafs' count, the nodes)."""
    order = list(g.leafs)
    k = next(i for i, t in enumerate(order) if t.inp)
    order.insert(k + 1, g.input((n_embd, T_)))
    n_inputs = len(order)
    order += g.nodes
    at = {id(t): i for i, t in enumerate(order)}
    out = []
    for t in order:
        root = t.view_src
        mine = root is None and t.buf is None
        out.append(Node(t.nbytes if mine else 0, tuple(at[id(s)] for s in t.srcs), mine and t.op in INPLACE,
                        at.get(id(root), -1) if root is not None else -1, t.output, (t.es, t.ne, t.nb),
                        mine and t.nbytes == 0))
    return n_inputs, out


def sigmoid_moe(g: Graph, w: Callable[[str, tuple[int, ...], int | None], T], f, il: int, x: T, n_embd: int,
                rows: int, fusion_deps: bool, w_scale: bool = False, probs_b: bool = True) -> T:
    """src/llama-graph.cpp build_moe_ffn with SIGMOID gating and exp_probs_b (LLAMA_EXPERT_GATING_FUNC_TYPE_SIGMOID,
    norm_w, no groups, no shared expert): the router's logits, SIGMOID, the biased selection (ADD), ARGSORT's top-k
    view, GET_ROWS of the reshaped probabilities, SUM_ROWS, CLAMP, DIV (SCALE where w_scale: expert_weights_scale
    set), expanded early; gate / up MUL_MAT_ID, SWIGLU, down, weighted (MUL) and expanded, each expert's view
    expanded, their ADDs expanded. fusion_deps: ggml-cuda's graph_optimize keeps the router group and the weighted
    sum alive (alloc_deps); probs_b: the file has exp_probs_b (else the top-k reads the probabilities). -> the
    experts' sum."""
    f32 = 4
    ne_, nu = f.n_experts, f.n_experts_used
    logits = g.op("MUL_MAT", (ne_, rows), w(f"blk.{il}.ffn_gate_inp.weight", (n_embd, ne_), il), x)
    probs = g.op("UNARY", logits.ne, logits)  # sigmoid
    sel = g.op("ADD", probs.ne, probs, w(f"blk.{il}.exp_probs_b.bias", (ne_,), il)) if probs_b else probs
    topk = g.view(g.op("ARGSORT", sel.ne, sel), (nu, rows))  # ggml_argsort_top_k
    wts = g.op("GET_ROWS", (1, nu, rows), g.reshape(probs, (1, ne_, rows)), topk)
    wts = g.reshape(wts, (nu, rows))
    total = g.op("CLAMP", (1, rows), g.op("SUM_ROWS", (1, rows), wts))
    wts = g.reshape(g.op("DIV", wts.ne, wts, total), (1, nu, rows))
    if w_scale:
        wts = g.op("SCALE", wts.ne, wts)
    g.expand(wts)
    if fusion_deps:
        first = next(i for i in range(len(g.nodes) - 1, -1, -1) if g.nodes[i] is probs)
        g.topk.append(g.nodes[first:])
    x3 = g.reshape(x, (n_embd, 1, rows))
    up = g.op("MUL_MAT_ID", (f.n_ff_expert, nu, rows), w(f"blk.{il}.ffn_up_exps.weight",
                                                          (n_embd, f.n_ff_expert, ne_), il), x3, topk)
    gate = g.op("MUL_MAT_ID", (f.n_ff_expert, nu, rows), w(f"blk.{il}.ffn_gate_exps.weight",
                                                            (n_embd, f.n_ff_expert, ne_), il), x3, topk)
    down = g.op("MUL_MAT_ID", (n_embd, nu, rows), w(f"blk.{il}.ffn_down_exps.weight",
                                                     (f.n_ff_expert, n_embd, ne_), il),
                g.op("GLU", gate.ne, gate, up), topk)
    weighted = g.expand(g.op("MUL", down.ne, down, wts))
    parts = [g.expand(g.view(weighted, (n_embd, rows), (f32, weighted.nb[2]))) for _ in range(nu)]
    out = parts[0]
    for p in parts[1:]:
        out = g.expand(g.op("ADD", out.ne, out, p))
    if fusion_deps and 2 <= nu <= 15:  # ggml_cuda_match_moe_weighted_reduction
        g.reductions.append((weighted, out))
    return out


def _decompressed_attention(g: Graph, w: Callable[[str, tuple[int, ...], int | None], T], il: int, a, q: T, cmpr: T,
                            k_pe: T, dev: int, n_kv: int, n_stream: int, k_idxs: T, v_idxs: T, mask: T, inp_pos: T,
                            v_trans: bool) -> T:
    """deepseek2.cpp's attention without is_mla, from q (reshaped), the normed kv_cmpr and the roped k_pe, through
    build_attn (llm_graph_input_attn_kv) and build_attn_mha without flash attention, to the CONT before wo."""
    f32, f16 = 4, 2
    H, r, rope, nope = a.n_heads, a.kv_lora_rank, a.qk_rope_head_dim, a.qk_nope_head_dim
    dk, dv = nope + rope, a.v_head_dim or a.head_dim_v
    T_ = q.ne[2]
    nq = T_ // n_stream
    kv = g.op("MUL_MAT", (H * (nope + dv), T_), w(f"blk.{il}.attn_kv_b.weight", (r, H * (nope + dv)), il), cmpr)
    row = (nope + dv) * f32
    k_nope = g.view(kv, (nope, H, T_), (f32, row, row * H))
    vc = g.op("CONT", (dv, H, T_), g.view(kv, (dv, H, T_), (f32, row, row * H)))
    qc = g.op("ROPE", q.ne, q, inp_pos)  # the trailing rope dims (ggml_rope_set_offset)
    kc = g.op("CONCAT", (dk, H, T_), k_nope, g.op("REPEAT", (rope, H, T_), k_pe))
    g.expand(qc)
    g.expand(vc)
    g.expand(kc)  # build_attn: q, v, then k
    kc_ = g.cache((dk * H, n_kv, n_stream), dev, f16)
    kst = g.reshape(kc_, (dk * H, n_kv * n_stream)) if n_stream > 1 else kc_  # llama_kv_cache::cpy_k
    g.expand(g.into("SET_ROWS", kst, g.view(kc, (dk * H, T_)), k_idxs, kst))
    vv = g.cache((dv * H, n_kv, n_stream), dev, f16)
    if v_trans:  # one row per element of V
        flat = g.reshape(vv, (1, dv * H * n_kv * n_stream))
        g.expand(g.into("SET_ROWS", flat, g.reshape(g.reshape(vc, (dv * H, T_)), (1, dv * H * T_)), v_idxs, flat))
        v = g.permute(g.view(vv, (n_kv, H, dv, n_stream), (f16, n_kv * dv * f16, n_kv * f16, n_kv * dv * H * f16)),
                      (0, 2, 1, 3))
    else:
        vst = g.reshape(vv, (dv * H, n_kv * n_stream)) if n_stream > 1 else vv
        g.expand(g.into("SET_ROWS", vst, g.view(vc, (dv * H, T_)), v_idxs, vst))
        v = g.permute(g.view(vv, (dv, H, n_kv, n_stream), (f16, dv * f16, dv * H * f16, dv * H * n_kv * f16)),
                      (0, 2, 1, 3))
        v = g.op("CONT", (n_kv, dv, H, n_stream), g.transpose(v), es=f16)  # build_attn_mha: "avoid this branch"
    k = g.permute(g.view(kc_, (dk, H, n_kv, n_stream), (f16, dk * f16, dk * H * f16, dk * H * n_kv * f16)),
                  (0, 2, 1, 3))
    qq = g.permute(g.view(qc, (dk, H, nq, n_stream)), (0, 2, 1, 3))
    kq = g.op("SOFT_MAX", (n_kv, nq, H, n_stream), g.op("MUL_MAT", (n_kv, nq, H, n_stream), k, qq), mask)
    kqv = g.op("MUL_MAT", (dv, nq, H, n_stream), v, kq)
    return g.op("CONT", (dv * H, T_), g.permute(kqv, (0, 2, 1, 3)))


def sigmoid_moe_layer_end(g: Graph, w: Callable[[str, tuple[int, ...], int | None], T], la, cur: T, res: T,
                          last: bool, out_ids: T, fusion_deps: bool, w_scale: bool, probs_b: bool = True) -> T:
    """A DeepSeek-V2-style layer after its attention (or Kimi-Linear's KDA) output cur, res the layer's input
    (src/models/deepseek2.cpp, kimi-linear.cpp): in the last layer out_ids' rows of both; ffn_inp, the FFN norm, the
    leading dense layers' build_ffn, the others' sigmoid_moe beside the shared expert (build_ffn, _shexp); the
    residual. -> the layer's output"""
    il, n_embd, f = la.index, cur.ne[0], la.ffn
    ffn_inp, x = ffn_input(g, w, cur, res, last, out_ids, il)
    if not f.n_experts:
        out = build_ffn(g, w, x, f.n_ff, il)
    else:  # build_moe_ffn
        out = sigmoid_moe(g, w, f, il, x, n_embd, x.ne[1], fusion_deps, w_scale, probs_b)
        out = g.op("ADD", out.ne, out, build_ffn(g, w, x, f.n_ff_shared, il, "_shexp"))
    return g.op("ADD", out.ne, out, ffn_inp)


def deepseek2_graph(spec, T_: int, n_outputs: int, n_kv: int, host: dict[str, int], host_layers: set[int],
                    flash_attn: bool = True, host_caches: bool = False, fusion_deps: bool = True, n_stream: int = 1,
                    v_trans: bool = True) -> Graph:
    """DeepSeek-V2 / V3's pp graph with the absorbed MLA (latent) cache (src/models/deepseek2.cpp
    llama_model_deepseek2::graph at llama.cpp@0c1e57098, is_mla; mistral4.cpp builds the same graph), one sequence a
    KV stream, an F16 cache, in graph order (the order of the GGML_SCHED_DEBUG=2 dump of the deepseek-v3 file,
    tests/fixtures/llamacpp_cuda/h200_sched_debug.json.gz): per layer the attention norm; Q LoRA'd (q_a, its RMS
    norm, q_b; wq for the lite models) and reshaped; the K-only build_attn (llm_graph_input_attn_k) expanding Qcur
    (q_nope's permuted view absorbed by wk_b, q_pe's view roped, their CONCAT), Vcur (kv_cmpr_pe's latent view
    RMS-normed) and Kcur (its CONCAT with k_pe's roped view), the store, then build_attn_mha: FLASH_ATTN_EXT on the
    cache's views (V a view of K) and wv_b's product of its permutation, CONT; or KQ, SOFT_MAX with the F32 mask,
    V's contiguous transpose (F16), KQV, wv_b's product and the CONT of its permutation; wo; in the last layer out_ids'
    rows of it and of the layer input; ffn_inp, the FFN norm; the leading dense layers' build_ffn, the others'
    sigmoid_moe (scaled: expert_weights_scale, as compute_graphs.deepseek2_device_graph has it) beside the shared
    expert (build_ffn); the residual; the output norm (t_embd, an output) and the logits. The layers in host_layers
    keep their weights (and caches) on the CPU (host: the weights' bytes, copied when read on the device);
    host_caches (-nkvo): every cache on the CPU; fusion_deps: ggml-cuda's MoE allocation dependencies.
    A file without the split wk_b / wv_b (converted before PR #12801: attn_kv_b, head_count_kv = n_head) takes the
    decompressed heads (not is_mla): wkv_b's product of kv_cmpr, k_nope's view, V's CONT, Q roped whole, Kcur the
    CONCAT of k_nope and k_pe REPEATed to the heads; build_attn with K and V caches (q, v, then k expanded), here
    without flash attention (ggml-cuda has no kernel for its 192 / 128 heads), in n_stream KV streams (one a
    sequence), V transposed in its cache where v_trans (flash attention off when the cache was made; with -fa auto
    turned off afterwards the cache keeps V's rows and build_attn_mha makes V's transpose contiguous)."""
    g, w, inp = _pp_graph_start(spec, T_, host, host_layers)
    f32, f16 = 4, 2
    n_embd = spec.n_embd
    inp_pos = g.input((T_,))
    mla = all(la.attention.latent_cache for la in spec.trunk_layers)
    a0 = spec.trunk_layers[0].attention
    nq = T_ // n_stream
    k_idxs = g.input((T_,), 8)
    v_idxs = None if mla else g.input((T_ * a0.n_heads * (a0.v_head_dim or a0.head_dim_v) if v_trans else T_,), 8)
    mask = g.input((n_kv, nq, 1, n_stream), f16 if flash_attn else f32)  # build_attn_inp_k / build_attn_inp_kv
    out_ids = g.input((n_outputs,))
    names = {t.name for t in spec.weights.tensors}

    for la in spec.trunk_layers:
        il, a = la.index, la.attention
        dev = HOST if il in host_layers or host_caches else DEVICE
        res = inp
        cur = g.op("MUL", inp.ne, g.op("RMS_NORM", inp.ne, inp), w(f"blk.{il}.attn_norm.weight", (n_embd,), il))
        H, r, rope, nope = a.n_heads, a.kv_lora_rank, a.qk_rope_head_dim, a.qk_nope_head_dim
        dk, dv = nope + rope, a.v_head_dim or a.head_dim_v
        if a.q_lora_rank:
            ql = a.q_lora_rank
            q = g.op("MUL_MAT", (ql, T_), w(f"blk.{il}.attn_q_a.weight", (n_embd, ql), il), cur)
            q = g.op("MUL", q.ne, g.op("RMS_NORM", q.ne, q), w(f"blk.{il}.attn_q_a_norm.weight", (ql,), il))
            q = g.op("MUL_MAT", (H * dk, T_), w(f"blk.{il}.attn_q_b.weight", (ql, H * dk), il), q)
        else:
            q = g.op("MUL_MAT", (H * dk, T_), w(f"blk.{il}.attn_q.weight", (n_embd, H * dk), il), cur)
        q = g.reshape(q, (dk, H, T_))
        kvp = g.op("MUL_MAT", (r + rope, T_), w(f"blk.{il}.attn_kv_a_mqa.weight", (n_embd, r + rope), il), cur)
        cmpr = g.view(kvp, (r, T_), (f32, (r + rope) * f32))
        k_pe = g.view(kvp, (rope, 1, T_), (f32, (r + rope) * f32, (r + rope) * f32))
        k_pe = g.op("ROPE", k_pe.ne, k_pe, inp_pos)
        cmpr = g.op("MUL", cmpr.ne, g.op("RMS_NORM", cmpr.ne, cmpr), w(f"blk.{il}.attn_kv_a_norm.weight", (r,), il))
        if not mla:  # the decompressed heads
            att = _decompressed_attention(g, w, il, a, q, cmpr, k_pe, dev, n_kv, n_stream, k_idxs, v_idxs, mask,
                                          inp_pos, v_trans)
        else:  # is_mla: the absorbed heads on the latent cache
            q_nope = g.view(q, (nope, H, T_), (f32, dk * f32, dk * H * f32))
            q_pe = g.view(q, (rope, H, T_), (f32, dk * f32, dk * H * f32))
            q_pe = g.op("ROPE", q_pe.ne, q_pe, inp_pos)
            absorbed = g.op("MUL_MAT", (r, T_, H), w(f"blk.{il}.attn_k_b.weight", (nope, r, H), il),
                            g.permute(q_nope, (0, 2, 1, 3)))
            qcur = g.op("CONCAT", (r + rope, H, T_), g.permute(absorbed, (0, 2, 1, 3)), q_pe)
            vcur = g.reshape(cmpr, (r, 1, T_))
            kcur = g.op("CONCAT", (r + rope, 1, T_), vcur, k_pe)
            g.expand(qcur)
            g.expand(vcur)
            g.expand(kcur)  # build_attn: q, v, then k
            kc = g.cache((r + rope, n_kv), dev, f16)
            g.expand(g.into("SET_ROWS", kc, g.view(kcur, (r + rope, T_)), k_idxs, kc))
            row = (r + rope) * f16
            kv = g.view(kc, (r + rope, 1, n_kv, 1), (f16, row, row, row * n_kv))  # get_k
            vv = g.view(kv, (r, 1, n_kv, 1), (f16, row, row, row * n_kv))
            qq = g.permute(qcur, (0, 2, 1, 3))
            kk, vp = g.permute(kv, (0, 2, 1, 3)), g.permute(vv, (0, 2, 1, 3))
            if flash_attn:
                fa = g.op("FLASH_ATTN_EXT", (r, H, T_, 1), qq, kk, vp, mask)
                o = g.op("MUL_MAT", (dv, T_, H, 1), w(f"blk.{il}.attn_v_b.weight", (r, dv, H), il),
                         g.permute(fa, (0, 2, 1, 3)))
                att = g.reshape(g.op("CONT", (dv, H, T_, 1), g.permute(o, (0, 2, 1, 3))), (dv * H, T_))
            else:  # build_attn_mha without flash attention: V not transposed in the cache, so made contiguous
                kq = g.op("MUL_MAT", (n_kv, T_, H, 1), kk, qq)
                kq = g.op("SOFT_MAX", kq.ne, kq, mask)
                vt = g.op("CONT", (n_kv, r, 1, 1), g.transpose(vp), es=f16)
                kqv = g.op("MUL_MAT", (r, T_, H, 1), vt, kq)
                o = g.op("MUL_MAT", (dv, T_, H, 1), w(f"blk.{il}.attn_v_b.weight", (r, dv, H), il), kqv)
                att = g.op("CONT", (dv * H, T_), g.permute(o, (0, 2, 1, 3)))
        cur = g.op("MUL_MAT", (n_embd, T_), w(f"blk.{il}.attn_output.weight", (H * dv, n_embd), il), att)
        inp = sigmoid_moe_layer_end(g, w, la, cur, res, la is spec.trunk_layers[-1], out_ids, fusion_deps, True,
                                    f"blk.{il}.exp_probs_b.bias" in names)
    return output_head(g, w, spec, inp)


def lfm2_graph(spec, T_: int, n_outputs: int, n_kv: int, host: dict[str, int], host_layers: set[int],
               flash_attn: bool = True, host_caches: bool = False, norm_host: int = -1) -> Graph:
    """LFM2's pp graph (src/models/lfm2.cpp llama_model_lfm2::graph<false> at llama.cpp@0c1e57098: one sequence, an
    F16 cache, dense FFNs), in graph order: the token rows, expanded; per layer the attention norm, then a short-conv
    layer (build_shortconv_block: in_proj, its B / C / x views, B * x transposed; build_rs of the conv state (the
    SCALE of the row to clear, GET_ROWS of the sequence's row, the extra rows' GET_ROWS and CPY); the CONCAT of the
    state and B * x, the store of its last d_conv columns (CPY), SSM_CONV, C times it, out_proj) or an attention
    layer (Q, K, V, Q and K RMS-normed by their weights, roped; build_attn expanding q, v, then k, the stores,
    FLASH_ATTN_EXT or KQ, SOFT_MAX, KQV and its CONT; wo); in the last layer out_ids' rows of it and of the layer
    input; the residual, the FFN norm, build_ffn's SwiGLU, the residual; the output norm (token_embd_norm: an output
    layer tensor, weights.embd_norm_device; norm_host: its bytes when it stays on the CPU, copied in) and the logits.
    host_layers keep their weights and their caches / states on the CPU (host: the weights' bytes); host_caches
    (-nkvo): the KV caches on the CPU."""
    g, w, cur = _pp_graph_start(spec, T_, host, host_layers)
    f32 = 4
    E = spec.n_embd
    s_copy = g.input((1,))
    s_main, s_extra = g.view(s_copy, (1,)), g.view(s_copy, (0,))  # build_rs_inp_impl: one sequence
    a0 = next(la.attention for la in spec.trunk_layers if la.attention)
    k_idxs = g.input((T_,), 8)
    v_idxs = g.input((T_ if flash_attn else T_ * a0.n_kv_heads * a0.head_dim_v,), 8)
    mask = g.input((n_kv, T_, 1, 1), 2 if flash_attn else 4)
    inp_pos = g.input((T_,))
    out_ids = g.input((n_outputs,))
    trunk = spec.trunk_layers
    for la in trunk:
        il = la.index
        dev = HOST if il in host_layers else DEVICE
        prev = cur
        cur = g.op("MUL", cur.ne, g.op("RMS_NORM", cur.ne, cur), w(f"blk.{il}.attn_norm.weight", (E,), il))
        if la.recurrent is not None:  # build_shortconv_block
            dc = la.recurrent.d_conv - 1  # n_shortconv_l_cache - 1
            bcx = g.op("MUL_MAT", (3 * E, T_, 1), w(f"blk.{il}.shortconv.in_proj.weight", (E, 3 * E), il),
                       g.reshape(cur, (E, T_, 1)))
            nb = (f32, bcx.nb[1], bcx.nb[2])
            b, c, x = (g.view(bcx, (E, T_, 1), nb) for _ in range(3))
            bx = g.transpose(g.op("MUL", (E, T_, 1), b, x))
            r_l = g.cache((dc * E, 1), dev, f32)
            states = g.reshape(r_l, (dc * E, 1))  # build_rs
            zero = g.view(states, (dc * E,))
            g.expand(g.into("SCALE", zero, zero))
            rows = g.expand(g.op("GET_ROWS", (dc * E, 1), states, s_main))
            extra = g.op("GET_ROWS", (dc * E, 0), states, s_extra)
            g.expand(g.into("CPY", g.view(r_l, (dc * E, 0)), extra, g.view(r_l, (dc * E, 0))))
            bx = g.op("CONCAT", (dc + T_, E, 1), g.reshape(rows, (dc, E, 1)), bx)
            snap = g.view(bx, (dc, E, 1), (f32, bx.nb[1], bx.nb[2]))
            dst = g.view(r_l, (dc * E, 1))
            g.expand(g.into("CPY", dst, snap, dst))
            co = g.op("SSM_CONV", (E, T_, 1), bx, w(f"blk.{il}.shortconv.conv.weight", (dc + 1, E), il))
            y = g.op("MUL", (E, T_, 1), c, co)
            y = g.op("MUL_MAT", (E, T_, 1), w(f"blk.{il}.shortconv.out_proj.weight", (E, E), il), y)
            cur = g.reshape(y, (E, T_))
        else:
            a = la.attention
            hd, hdv, nh, nkv = a.head_dim_k, a.head_dim_v, a.n_heads, a.n_kv_heads
            cdev = HOST if il in host_layers or host_caches else DEVICE
            q = g.reshape(g.op("MUL_MAT", (hd * nh, T_), w(f"blk.{il}.attn_q.weight", (E, hd * nh), il), cur),
                          (hd, nh, T_))
            kc = g.reshape(g.op("MUL_MAT", (hd * nkv, T_), w(f"blk.{il}.attn_k.weight", (E, hd * nkv), il), cur),
                           (hd, nkv, T_))
            vc = g.reshape(g.op("MUL_MAT", (hdv * nkv, T_), w(f"blk.{il}.attn_v.weight", (E, hdv * nkv), il), cur),
                           (hdv, nkv, T_))
            q = g.op("MUL", q.ne, g.op("RMS_NORM", q.ne, q), w(f"blk.{il}.attn_q_norm.weight", (hd,), il))
            kc = g.op("MUL", kc.ne, g.op("RMS_NORM", kc.ne, kc), w(f"blk.{il}.attn_k_norm.weight", (hd,), il))
            q, kc = g.op("ROPE", q.ne, q, inp_pos), g.op("ROPE", kc.ne, kc, inp_pos)
            g.expand(q)
            g.expand(vc)
            g.expand(kc)  # build_attn: q, v, then k
            kc_, vv = g.store_kv(kc, vc, k_idxs, v_idxs, n_kv, cdev, flash_attn)
            att = g.attend(q, kc_, vv, mask, flash_attn)
            cur = g.op("MUL_MAT", (E, T_), w(f"blk.{il}.attn_output.weight", (hdv * nh, E), il), att)
        R = T_
        if la is trunk[-1]:  # out_ids' rows of the block's output and of the layer input
            R = n_outputs
            cur = g.op("GET_ROWS", (E, R), cur, out_ids)
            prev = g.op("GET_ROWS", (E, R), prev, out_ids)
        cur = g.op("ADD", (E, R), prev, cur)
        x = g.op("MUL", cur.ne, g.op("RMS_NORM", cur.ne, cur), w(f"blk.{il}.ffn_norm.weight", (E,), il))
        cur = g.op("ADD", (E, R), cur, build_ffn(g, w, x, la.ffn.n_ff, il))
    norm = g.weight((E,), HOST, norm_host, name="token_embd_norm.weight") if norm_host >= 0 else \
        g.weight((E,), DEVICE)
    h = g.op("MUL", cur.ne, g.op("RMS_NORM", cur.ne, cur), norm)
    h.output = True  # t_embd
    logits = g.op("MUL_MAT", (spec.n_vocab, n_outputs), w("output.weight", (E, spec.n_vocab), None), h)
    logits.output = True
    g.expand(logits)
    return g


def kimi_linear_graph(spec, T_: int, n_outputs: int, n_kv: int, host: dict[str, int], host_layers: set[int],
                      flash_attn: bool = True, fusion_deps: bool = True, w_scale: bool = False, n_seqs: int = 1,
                      n_stream: int = 1, n_rs: int = 0) -> Graph:
    """Kimi-Linear's pp graph (src/models/kimi-linear.cpp llama_model_kimi_linear::graph, n_seqs sequences of T_ / n_seqs
    tokens in n_stream KV streams),
    in graph order. A KDA layer: build_rs of the layer's conv states (Q, K and V's side by side), then for each of
    q, k, v causal_conv1d (its projection, the CONCAT of its conv state's view and the transposed rows, the store of
    the last d_conv - 1 columns; SSM_CONV on the weight's 2-D reshape and SILU, expanded later through the delta
    net); the gate g1 (f_a, f_b, + dt_bias, SOFTPLUS, x A: a reshape of ssm_a), beta (its projection, SIGMOID),
    build_rs of the recurrent state, build_gdn_l2_norm of q and k (src/models/models.h: RMS_NORM, SCALE), the fused
    gated delta net (src/models/delta-net-base.cpp build_delta_net_fused, cparams.fused_gdn_ch), the store of the
    new state, the CONT of the output, its RMS_NORM x o_norm gated by SIGMOID(g_b(g_a(x))), the CONT and wo. An MLA
    layer with the latent cache (wk_b / wv_b): wq, wk_b's product with q_nope's permuted view, the CONCAT Qcur with
    q_pe (no RoPE in this model), kv_a_mqa, the norm of the latent's view, Kcur the CONCAT of it and k_pe, its store
    into the K-only cache (llm_graph_context::build_attn with llm_graph_input_attn_k: V a view of K), then
    build_attn_mha: FLASH_ATTN_EXT and wv_b's product, or KQ, SOFT_MAX, V's contiguous transpose (F16), KQV and wv_b's
    product; the CONT of the permuted heads and wo. In the last layer out_ids' rows of the output and the layer's
    input; the FFN norm; layer 0's SwiGLU FFN, the others' build_moe_ffn (src/llama-graph.cpp: SIGMOID gating,
    exp_probs_b for the selection, the weights normalised, scaled where w_scale: expert_weights_scale set) beside the
    shared expert (build_ffn); the residual; the output norm (t_embd, an output) and the logits. The layers in
    host_layers keep their weights and recurrent states on the CPU (host: the weights' bytes, copied when read on the
    device); the output layer and the other layers are on the device. fusion_deps: ggml-cuda's graph_optimize keeps
    the router groups and weighted sums alive (alloc_deps)."""
    g, w, embd = _pp_graph_start(spec, T_, host, host_layers)
    f32, f16 = 4, 2
    n_embd = spec.n_embd
    ns, nst, nq = n_seqs, T_ // n_seqs, T_ // n_stream  # sequences, tokens a sequence, tokens a stream
    n_rs = max(n_rs, ns)
    s_copy = g.input((n_rs,))
    s_main, s_extra = g.view(s_copy, (ns,)), g.view(s_copy, (n_rs - ns,))  # build_rs_inp_impl
    k_idxs = g.input((T_,), 8)
    mask = g.input((n_kv, nq, 1, n_stream), f16 if flash_attn else f32)  # build_attn_inp_kq_mask
    out_ids = g.input((n_outputs,))

    def build_rs(s: T, size: int) -> T:  # src/llama-graph.cpp build_rs
        states = g.reshape(s, (size, n_rs))
        zero = g.view(states, (size,))
        g.expand(g.into("SCALE", zero, zero))
        rows = g.expand(g.op("GET_ROWS", (size, ns), states, s_main))
        extra = g.op("GET_ROWS", (size, n_rs - ns), states, s_extra)  # the states of the other sequences
        g.expand(g.into("CPY", g.view(s, (size, n_rs - ns)), extra, g.view(s, (size, n_rs - ns))))
        return rows

    inp = embd
    for la in spec.trunk_layers:
        il = la.index
        dev = HOST if il in host_layers else DEVICE
        res = inp
        cur = g.op("RMS_NORM", inp.ne, inp)
        cur = g.expand(g.op("MUL", cur.ne, cur, w(f"blk.{il}.attn_norm.weight", (n_embd,), il)))
        if la.recurrent is not None:
            r = la.recurrent
            hd, nh, dc = r.d_state, r.n_heads, r.d_conv
            di = hd * nh
            css = (dc - 1) * di  # one of Q, K, V's conv states
            r_l, s_l = g.cache((3 * css, n_rs), dev, f32), g.cache((hd * hd * nh, n_rs), dev, f32)  # n_seq_max
            conv_all = build_rs(r_l, 3 * css)
            xs = []
            for x in "qkv":  # causal_conv1d
                cs = g.view(conv_all, (dc - 1, di, ns), (f32, (dc - 1) * f32, 3 * css * f32))
                proj = g.op("MUL_MAT", (di, T_), w(f"blk.{il}.attn_{x}.weight", (n_embd, di), il), cur)
                cx = g.op("CONCAT", (dc - 1 + nst, di, ns), cs, g.transpose(g.reshape(proj, (di, nst, ns))))
                last = g.view(cx, (dc - 1, di, ns), (f32, cx.nb[1], cx.nb[2]))
                dst = g.view(r_l, (dc - 1, di, ns), (f32, (dc - 1) * f32, 3 * css * f32))
                g.expand(g.into("CPY", dst, last, dst))
                cw = g.reshape(w(f"blk.{il}.ssm_conv1d_{x}.weight", (dc, 1, di), il), (dc, di))
                xc = g.reshape(g.op("SSM_CONV", (di, nst, ns), cx, cw), (di, T_))
                xs.append(g.reshape(g.op("UNARY", xc.ne, xc), (hd, nh, nst, ns)))  # silu
            g1 = g.op("MUL_MAT", (di, T_), w(f"blk.{il}.ssm_f_b.weight", (hd, di), il),
                      g.op("MUL_MAT", (hd, T_), w(f"blk.{il}.ssm_f_a.weight", (n_embd, hd), il), cur))
            g1 = g.op("UNARY", g1.ne, g.op("ADD", g1.ne, g1, w(f"blk.{il}.ssm_dt.bias", (di,), il)))  # softplus
            g1 = g.reshape(g1, (hd, nh, T_))
            g1 = g.op("MUL", g1.ne, g1, g.reshape(w(f"blk.{il}.ssm_a", (1, nh), il), (1, nh, 1)))
            g1 = g.reshape(g1, (hd, nh, nst, ns))
            beta = g.op("MUL_MAT", (nh, T_), w(f"blk.{il}.ssm_beta.weight", (n_embd, nh), il), cur)
            beta = g.op("UNARY", (1, nh, nst, ns), g.reshape(beta, (1, nh, nst, ns)))  # sigmoid
            cur3 = g.reshape(cur, (n_embd, nst, ns))
            state = g.reshape(build_rs(s_l, hd * hd * nh), (hd, hd, nh, ns))
            q = g.op("SCALE", xs[0].ne, g.op("RMS_NORM", xs[0].ne, xs[0]))  # build_gdn_l2_norm
            k = g.op("SCALE", xs[1].ne, g.op("RMS_NORM", xs[1].ne, xs[1]))
            # ggml.c ggml_gated_delta_net: the outputs, then the final state (K = 1)
            gdn = g.op("GATED_DELTA_NET", (hd * nh, T_ + hd * ns), q, k, xs[2], g1, beta, state)
            out = g.op("CONT", (hd, nh, nst, ns), g.view(gdn, (hd, nh, nst, ns)))
            dst = g.view(s_l, (hd * hd * nh * ns,))
            g.expand(g.into("CPY", dst, g.view(gdn, (hd, hd, nh, ns)), dst))
            ga = g.op("MUL_MAT", (hd, T_), w(f"blk.{il}.ssm_g_a.weight", (n_embd, hd), il), g.reshape(cur3, (n_embd, T_)))
            g2 = g.reshape(g.op("MUL_MAT", (di, T_), w(f"blk.{il}.ssm_g_b.weight", (hd, di), il), ga), (hd, nh, T_))
            y = g.reshape(out, (hd, nh, T_))
            y = g.op("MUL", y.ne, g.op("RMS_NORM", y.ne, y), w(f"blk.{il}.ssm_norm.weight", (hd,), il))
            y = g.op("MUL", y.ne, y, g.op("UNARY", g2.ne, g2))  # sigmoid gate
            cur = g.op("MUL_MAT", (n_embd, T_), w(f"blk.{il}.attn_output.weight", (di, n_embd), il),
                       g.op("CONT", (di, T_), y))
        else:
            a = la.attention
            H, r, rope, nope = a.n_heads, a.kv_lora_rank, a.qk_rope_head_dim, a.qk_nope_head_dim
            dk, dv = nope + rope, a.v_head_dim or a.head_dim_v
            q = g.op("MUL_MAT", (H * dk, T_), w(f"blk.{il}.attn_q.weight", (n_embd, H * dk), il), cur)
            kvp = g.op("MUL_MAT", (r + rope, T_), w(f"blk.{il}.attn_kv_a_mqa.weight", (n_embd, r + rope), il), cur)
            cmpr = g.view(kvp, (r, T_), (f32, (r + rope) * f32))
            k_pe = g.view(kvp, (rope, 1, T_), (f32, (r + rope) * f32, (r + rope) * f32))
            cmpr = g.op("MUL", cmpr.ne, g.op("RMS_NORM", cmpr.ne, cmpr), w(f"blk.{il}.attn_kv_a_norm.weight", (r,), il))
            q_nope = g.view(q, (nope, H, T_), (f32, dk * f32, dk * H * f32))
            q_pe = g.view(q, (rope, H, T_), (f32, dk * f32, dk * H * f32))
            absorbed = g.op("MUL_MAT", (r, T_, H), w(f"blk.{il}.attn_k_b.weight", (nope, r, H), il),
                            g.permute(q_nope, (0, 2, 1, 3)))
            qcur = g.op("CONCAT", (r + rope, H, T_), g.permute(absorbed, (0, 2, 1, 3)), q_pe)
            kcur = g.op("CONCAT", (r + rope, 1, T_), g.reshape(cmpr, (r, 1, T_)), k_pe)
            g.expand(qcur)
            g.expand(kcur)  # build_attn: q, v (kv_cmpr, already in), then k
            kc = g.cache((r + rope, n_kv, n_stream), dev, f16)
            kst = g.reshape(kc, (r + rope, n_kv * n_stream)) if n_stream > 1 else kc  # llama_kv_cache::cpy_k
            g.expand(g.into("SET_ROWS", kst, g.view(kcur, (r + rope, T_)), k_idxs, kst))
            row = (r + rope) * f16
            kv = g.view(kc, (r + rope, 1, n_kv, n_stream), (f16, row, row, row * n_kv))  # get_k
            vv = g.view(kv, (r, 1, n_kv, n_stream), (f16, row, row, row * n_kv))
            qq = g.permute(g.view(qcur, (r + rope, H, nq, n_stream)), (0, 2, 1, 3))  # build_attn_mha: the streams
            kk, vp = g.permute(kv, (0, 2, 1, 3)), g.permute(vv, (0, 2, 1, 3))
            if flash_attn:
                fa = g.op("FLASH_ATTN_EXT", (r, H, nq, n_stream), qq, kk, vp, mask)
                o = g.op("MUL_MAT", (dv, nq, H, n_stream), w(f"blk.{il}.attn_v_b.weight", (r, dv, H), il),
                         g.permute(fa, (0, 2, 1, 3)))
                att = g.reshape(g.op("CONT", (dv, H, nq, n_stream), g.permute(o, (0, 2, 1, 3))), (dv * H, T_))
            else:  # build_attn_mha without flash attention: V not transposed in the cache, so made contiguous
                kq = g.op("MUL_MAT", (n_kv, nq, H, n_stream), kk, qq)
                kq = g.op("SOFT_MAX", kq.ne, kq, mask)
                vt = g.op("CONT", (n_kv, r, 1, n_stream), g.transpose(vp), es=f16)
                kqv = g.op("MUL_MAT", (r, nq, H, n_stream), vt, kq)
                o = g.op("MUL_MAT", (dv, nq, H, n_stream), w(f"blk.{il}.attn_v_b.weight", (r, dv, H), il), kqv)
                att = g.op("CONT", (dv * H, T_), g.permute(o, (0, 2, 1, 3)))
            cur = g.op("MUL_MAT", (n_embd, T_), w(f"blk.{il}.attn_output.weight", (H * dv, n_embd), il), att)
        inp = sigmoid_moe_layer_end(g, w, la, cur, res, la is spec.trunk_layers[-1], out_ids, fusion_deps, w_scale)
    return output_head(g, w, spec, inp)


def rs_head(g: Graph, s: T, size: int) -> T:
    """src/llama-graph.cpp build_rs up to get_state_rows: the states' 2D view and the SCALE of the row to clear (one row
    in the worst-case graph: llama_memory_recurrent_context::get_rs_z is 0 for init_full's context)."""
    states = g.reshape(s, (size, s.ne[1]))
    zero = g.view(states, (size,))
    g.expand(g.into("SCALE", zero, zero))
    return states


def rs_tail(g: Graph, s: T, states: T, size: int, s_extra: T) -> None:
    """build_rs after get_state_rows: GET_ROWS of the extra states (none with one sequence) and their CPY back."""
    extra = g.op("GET_ROWS", (size, 0), states, s_extra)
    dst = g.view(s, (size, 0))
    g.expand(g.into("CPY", dst, extra, dst))


def mamba2_graph(spec, T_: int, n_outputs: int, host: dict[str, int], host_layers: set[int],
                 host_caches: bool = False) -> Graph:
    """Mamba-2's pp graph, one sequence (src/models/mamba.cpp llama_model_mamba::graph and mamba-base.cpp
    build_mamba2_layer at llama.cpp@0c1e57098, K = 1: n_rs_seq 0), in ggml_build_forward_expand's order: the token
    rows; per layer the norm, build_rs of the conv states (src/llama-graph.cpp build_rs: the SCALE of the row to clear,
    GET_ROWS by s_copy_main, the GET_ROWS of the extra rows, none with one sequence, and their CPY), the
    in-projection, CONCAT with the transposed xBC view, the store of the last d_conv - 1 columns (CPY into the
    conv-state cache), then build_rs of the SSM states whose get_state_rows is SSM_SCAN itself on the whole state
    tensor (after SSM_CONV, its bias, SILU, the CONT of dt and its bias), the store of the scan's final state, y + x * D,
    SWIGLU of CONT(z), the grouped RMS norm, the out-projection; in the last layer out_ids' rows of it and of the layer
    input, the residual; the output norm (result_norm) and the logits. host_caches (-nkvo): the conv and SSM states
    on the CPU (llama_memory_recurrent, offload false): the stores and the state row gathers between them run on
    the host, and SSM_SCAN (on the device, by ssm_a) reads the host's whole state tensor, copied in as its split's
    input. The layers in host_layers keep their weights and states on the CPU; host: those weights' bytes."""
    g, w, inp = _pp_graph_start(spec, T_, host, host_layers)
    f32 = 4
    n_embd = spec.n_embd
    s_copy = g.input((1,))  # build_rs_inp_impl: n_rs = 1
    s_main, s_extra = g.view(s_copy, (1,)), g.view(s_copy, (0,))
    out_ids = g.input((n_outputs,))
    trunk = spec.trunk_layers
    for la in trunk:
        il, r = la.index, la.recurrent
        cdev = HOST if host_caches or il in host_layers else DEVICE
        hdim, nh, ng, ds = r.d_inner // r.n_heads, r.n_heads, r.n_group, r.d_state
        ch = r.d_inner + 2 * ng * ds
        n_r, n_s = (r.d_conv - 1) * ch, ds * r.d_inner
        d_in = 2 * r.d_inner + 2 * ng * ds + nh
        r_l, s_l = g.cache((n_r, 1), cdev, f32), g.cache((n_s, 1), cdev, f32)

        res = inp
        cur = g.op("RMS_NORM", inp.ne, inp)
        cur = g.op("MUL", cur.ne, cur, w(f"blk.{il}.attn_norm.weight", (n_embd,), il))
        states = rs_head(g, r_l, n_r)
        conv = g.reshape(g.expand(g.op("GET_ROWS", (n_r, 1), states, s_main)), (r.d_conv - 1, ch, 1))
        rs_tail(g, r_l, states, n_r, s_extra)
        zx = g.op("MUL_MAT", (d_in, T_), w(f"blk.{il}.ssm_in.weight", (n_embd, d_in), il), cur)
        zx = g.reshape(zx, (d_in, T_, 1))
        z = g.view(zx, (hdim, nh, T_, 1), (f32, hdim * f32, zx.nb[1], zx.nb[2]))
        xbc = g.view(zx, (ch, T_, 1), (f32, zx.nb[1], zx.nb[2]))
        dt = g.view(zx, (nh, T_, 1), (f32, zx.nb[1], zx.nb[2]))
        cx = g.op("CONCAT", (r.d_conv - 1 + T_, ch, 1), conv, g.transpose(xbc))
        last = g.view(cx, (r.d_conv - 1, ch, 1), (f32, cx.nb[1], cx.nb[2]))
        dst = g.view(r_l, (n_r, 1))
        g.expand(g.into("CPY", dst, last, dst))
        xc = g.op("SSM_CONV", (ch, T_, 1), cx, w(f"blk.{il}.ssm_conv1d.weight", (r.d_conv, ch), il))
        xc = g.op("ADD", xc.ne, xc, w(f"blk.{il}.ssm_conv1d.bias", (ch,), il))
        xc = g.op("UNARY", xc.ne, xc)  # silu
        x = g.view(xc, (hdim, nh, T_, 1), (f32, hdim * f32, xc.nb[1], xc.nb[2]))
        B = g.view(xc, (ds, ng, T_, 1), (f32, ds * f32, xc.nb[1], xc.nb[2]))
        C = g.view(xc, (ds, ng, T_, 1), (f32, ds * f32, xc.nb[1], xc.nb[2]))
        dtc = g.op("ADD", (nh, T_, 1), g.op("CONT", (nh, T_, 1), dt), w(f"blk.{il}.ssm_dt.bias", (nh,), il))
        A = w(f"blk.{il}.ssm_a", (1, nh), il)
        states = rs_head(g, s_l, n_s)  # get_ssm_rows: SSM_SCAN of the whole state tensor (ggml.c ggml_ssm_scan: y, then
        # the final state)
        y_ssm = g.expand(g.op("SSM_SCAN", (r.d_inner * T_ + n_s,), g.reshape(states, (ds, hdim, nh, 1)), x, dtc, A, B, C,
                              s_main))
        rs_tail(g, s_l, states, n_s, s_extra)
        dst = g.view(s_l, (n_s, 1, 1))
        g.expand(g.into("CPY", dst, g.view(y_ssm, (n_s, 1, 1), (f32, n_s * f32, n_s * f32)), dst))
        y = g.view(y_ssm, (hdim, nh, T_, 1), (f32, hdim * f32, r.d_inner * f32, r.d_inner * T_ * f32))
        y = g.op("ADD", y.ne, y, g.op("MUL", x.ne, x, w(f"blk.{il}.ssm_d", (1, nh), il)))
        y = g.op("GLU", y.ne, g.op("CONT", z.ne, z), y)  # ggml_swiglu_split(cont(z), y)
        y = g.reshape(y, (r.d_inner // ng, ng, T_, 1))
        y = g.op("RMS_NORM", y.ne, y)
        y = g.op("MUL", y.ne, y, w(f"blk.{il}.ssm_norm.weight", (r.d_inner // ng, ng), il))
        cur = g.op("MUL_MAT", (n_embd, T_), w(f"blk.{il}.ssm_out.weight", (r.d_inner, n_embd), il),
                   g.reshape(y, (r.d_inner, T_)))
        if la is trunk[-1]:  # out_ids' rows of the layer output and of its input
            cur = g.op("GET_ROWS", (n_embd, n_outputs), cur, out_ids)
            res = g.op("GET_ROWS", (n_embd, n_outputs), res, out_ids)
        inp = g.op("ADD", cur.ne, cur, res)
    return output_head(g, w, spec, inp)
