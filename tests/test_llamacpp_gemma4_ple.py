"""Gemma 4 E2B's compute buffer with its per-layer embeddings (PLE), held to llama.cpp on the CPU.

The per-layer path of src/models/gemma4.cpp (b9849; the same graph in the binding's llama.cpp@0c1e57098):
build_inp_per_layer gathers n_embd_per_layer x n_layer floats a token (8960 for E2B: 70 MiB at -ub 2048) and
scales them into a new block; project_per_layer_inputs, pulled in by the first layer's per-layer gate, multiplies
the scaled embeddings by per_layer_model_proj, norms a reshaped view (a new block), adds the selected rows and
copies the permuted sum (CONT), which every layer reads a slice of, so it lives to the last layer. The blocks it
leaves decide where the KV-shared layers' double-wide FFN lands: oomkit replays the whole graph through ggml-alloc
(compute_graphs.gemma4_ple_graph) where the closed-form phases gave 348.00 MiB against 480.09.

Ground truth: llama-cpp-python 0.3.36 on the CPU, a synthetic GGUF with Gemma 4 E2B's 35 layers (google/gemma-4-E2B-it
text_config: hidden 1536, 8 heads / 1 KV head, sliding heads of 256 and full heads of 512, every 5th layer full,
window 512, the last 20 layers sharing KV with a double-wide FFN of 12288, per-layer inputs of 256, vocab 262144,
soft-capping 30; the file's tensor census equals the real Q4_0 file's: 275 q4_0 + 263 f32). Each context is created
as llama-server creates it (swa_full off, n_outputs_max = n_parallel) or as the binding does (every token an
output), no_alloc dry run. At HilbertraumAI's b9849 CPU setting (-c 8192 -ub 2048 -np 1) the binding prints the
480.09 MiB the log does.

A fully offloaded Vulkan device: the same replay as the device's split (the host's two GET_ROWS results as copies)
in ggml-vulkan's node order (compute_graphs.vk_graph_optimize), held to the pinned binding with a stand-in Vulkan
device (tests/groundtruth/vk_standin_device.c) and to HilbertraumAI's b9849 Vulkan logs of E2B and E4B.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import oomkit
from oomkit.memory import Device
from tests.ggufs import _model
from tests.groundtruth import llamacpp_run, synth
from tests.groundtruth.synth import VT, Tensor, _blk, _ffn_dense, _layers, _Meta
from tests.test_llamacpp_heldout_logs import held_out_estimate

MiB = 1 << 20


def gemma4_e2b(n_layers: int | None = None) -> synth.SynthModel:
    """Gemma 4 E2B as its GGUF holds it (src/models/gemma4.cpp load_arch_tensors at b9849): no output.weight (tied),
    attn_k / attn_v / attn_k_norm only in the layers that own a cache (the last attention.shared_kv_layers read an
    earlier layer's), feed_forward_length per layer (use_double_wide_mlp: the shared layers' FFN twice as wide),
    layer_output_scale, the per-layer gate / projection / post-norm in every block and one rope_freqs."""
    return _gemma4_ple("gemma4-e2b", "google/gemma-4-E2B-it text_config", n_layers, 35, n_embd=1536, n_kv=1,
                       n_ff=6144, shared=20, period=5, double_wide=True)


def gemma4_e4b(n_layers: int | None = None) -> synth.SynthModel:
    """Gemma 4 E4B (google/gemma-4-E4B-it text_config: hidden 2560, 8 heads / 2 KV heads, 42 layers, every 6th
    full, the last 18 sharing KV, intermediate 10240 in every layer: use_double_wide_mlp false), as gemma4_e2b."""
    return _gemma4_ple("gemma4-e4b", "google/gemma-4-E4B-it text_config", n_layers, 42, n_embd=2560, n_kv=2,
                       n_ff=10240, shared=18, period=6, double_wide=False)


def gemma4_12b(n_layers: int | None = 12) -> synth.SynthModel:
    """Gemma 4 12B without per-layer embeddings (google/gemma-4-12B-it text_config: hidden 3840, 16 heads, the
    sliding layers 8 KV heads of 256, every 6th layer full with one KV head of 512 whose V is its K, attention_k_eq_v:
    no attn_v there; intermediate 15360, window 1024), 12 of its 48 layers (two full): the per-layer workspace is
    the same in every layer of a kind."""
    arch, n_embd, n_head, n_vocab, n_ff = "gemma4", 3840, 16, 262144, 15360
    hd_swa, hd_full, n_swa = 256, 512, 1024
    nl = _layers(n_layers, 48)
    swa = [i % 6 != 5 for i in range(nl)]
    kvh = [8 if w else 1 for w in swa]
    md = _Meta(arch).base(ctx=262144, n_embd=n_embd, n_layers=nl, n_ff=n_ff, n_head=n_head, n_head_kv=8,
                          rms_eps=1e-6, rope_base=1000000.0, n_vocab=n_vocab)
    md.items = [it for it in md.items if not it[0].endswith(".attention.head_count_kv")]
    md.items.append((f"{arch}.attention.head_count_kv", kvh, (VT.ARRAY, VT.INT32)))
    md.u32("attention.key_length", hd_full).u32("attention.value_length", hd_full)
    md.u32("attention.key_length_swa", hd_swa).u32("attention.value_length_swa", hd_swa)
    md.u32("rope.dimension_count", hd_full).u32("rope.dimension_count_swa", hd_swa).f32("rope.freq_base_swa", 1e4)
    md.u32("attention.sliding_window", n_swa).u32("embedding_length_per_layer_input", 0)
    md.f32("final_logit_softcapping", 30.0)
    md.items.append((f"{arch}.attention.sliding_window_pattern", swa, (VT.ARRAY, VT.BOOL)))
    ts = [Tensor("token_embd.weight", (n_embd, n_vocab)), Tensor("output_norm.weight", (n_embd,)),
          Tensor("rope_freqs.weight", (hd_full // 2,))]
    for i in range(nl):
        hd = hd_swa if swa[i] else hd_full
        ts += [_blk(i, "attn_norm.weight", n_embd), _blk(i, "attn_q.weight", n_embd, n_head * hd),
               _blk(i, "attn_output.weight", n_head * hd, n_embd), _blk(i, "attn_q_norm.weight", hd),
               _blk(i, "attn_k.weight", n_embd, kvh[i] * hd), _blk(i, "attn_k_norm.weight", hd)]
        if swa[i]:
            ts += [_blk(i, "attn_v.weight", n_embd, kvh[i] * hd)]
        ts += [_blk(i, "post_attention_norm.weight", n_embd), _blk(i, "layer_output_scale.weight", 1)]
        ts += _ffn_dense(i, n_embd, n_ff) + [_blk(i, "post_ffw_norm.weight", n_embd)]
    return _model("gemma4-12b", arch, "google/gemma-4-12B-it text_config", n_vocab, nl, md, ts, True, n_swa=n_swa)


def _gemma4_ple(key: str, source: str, n_layers: int | None, n_layers_real: int, n_embd: int, n_kv: int, n_ff: int,
                shared: int, period: int, double_wide: bool) -> synth.SynthModel:
    arch, n_head, n_vocab = "gemma4", 8, 262144
    hd_swa, hd_full, ple, n_swa = 256, 512, 256, 512
    nl = _layers(n_layers, n_layers_real)
    swa = [i % period != period - 1 for i in range(nl)]
    start = nl - shared if nl > shared else nl
    ffs = [n_ff if i < start or not double_wide else 2 * n_ff for i in range(nl)]
    md = _Meta(arch).base(ctx=131072, n_embd=n_embd, n_layers=nl, n_ff=n_ff, n_head=n_head, n_head_kv=n_kv,
                          rms_eps=1e-6, rope_base=1000000.0, n_vocab=n_vocab)
    md.items = [it for it in md.items if not it[0].endswith(".feed_forward_length")]
    md.items.append((f"{arch}.feed_forward_length", ffs, (VT.ARRAY, VT.INT32)))
    md.u32("attention.key_length", hd_full).u32("attention.value_length", hd_full)
    md.u32("attention.key_length_swa", hd_swa).u32("attention.value_length_swa", hd_swa)
    md.u32("rope.dimension_count", hd_full).u32("rope.dimension_count_swa", hd_swa).f32("rope.freq_base_swa", 1e4)
    md.u32("attention.sliding_window", n_swa).u32("embedding_length_per_layer_input", ple)
    md.u32("attention.shared_kv_layers", nl - start).f32("final_logit_softcapping", 30.0)
    md.items.append((f"{arch}.attention.sliding_window_pattern", swa, (VT.ARRAY, VT.BOOL)))
    ts = [Tensor("token_embd.weight", (n_embd, n_vocab)), Tensor("output_norm.weight", (n_embd,)),
          Tensor("per_layer_token_embd.weight", (ple * nl, n_vocab)),
          Tensor("per_layer_model_proj.weight", (n_embd, ple * nl)),
          Tensor("per_layer_proj_norm.weight", (ple,)), Tensor("rope_freqs.weight", (hd_full // 2,))]
    for i in range(nl):
        hd = hd_swa if swa[i] else hd_full
        ts += [_blk(i, "attn_norm.weight", n_embd), _blk(i, "attn_q.weight", n_embd, n_head * hd),
               _blk(i, "attn_output.weight", n_head * hd, n_embd), _blk(i, "attn_q_norm.weight", hd)]
        if i < start:
            ts += [_blk(i, "attn_k.weight", n_embd, n_kv * hd), _blk(i, "attn_v.weight", n_embd, n_kv * hd),
                   _blk(i, "attn_k_norm.weight", hd)]
        ts += [_blk(i, "post_attention_norm.weight", n_embd), _blk(i, "layer_output_scale.weight", 1)]
        ts += _ffn_dense(i, n_embd, ffs[i])
        ts += [_blk(i, "post_ffw_norm.weight", n_embd), _blk(i, "inp_gate.weight", n_embd, ple),
               _blk(i, "proj.weight", ple, n_embd), _blk(i, "post_norm.weight", n_embd)]
    return _model(key, arch, source, n_vocab, nl, md, ts, True, n_swa=n_swa)


_WORKER = llamacpp_run.binding_script(r'''
for i, c in enumerate(contexts):
    os.write(2, f"@@CTX {i}\n".encode())
    cp = llama_cpp.llama_context_default_params()
    cp.n_ctx, cp.n_batch, cp.n_ubatch, cp.n_seq_max = c["n_ctx"], max(2048, c["n_ubatch"]), c["n_ubatch"], c["n_seq"]
    cp.n_threads = cp.n_threads_batch = 1
    cp.flash_attn_type = c["fa"]
    cp.type_k, cp.type_v = c["type_k"], c["type_v"]
    cp.kv_unified = c["unified"]
    cp.swa_full = False
    cp.n_outputs_max = cp.n_outputs_max_per_seq = c["outputs"]
    ctx = llama_cpp.llama_init_from_model(model, cp)
    os.write(2, f"@@END {i} {bool(ctx)}\n".encode())
    llama_cpp.llama_free(ctx)
''', {'no_alloc': 'True', 'load_mode': '0', 'lazy_mode': '0'})


TYPES = {"f16": 1, "q8_0": 8, "q4_0": 2}  # ggml_type ids


def _c(n_ctx: int, ub: int, n_seq: int = 1, unified: bool = True, fa: int = 1, outputs: int = 1, k: str = "f16",
       v: str = "f16") -> dict:
    return dict(n_ctx=n_ctx, n_ubatch=ub, n_seq=n_seq, unified=unified, fa=fa, outputs=outputs, type_k=TYPES[k],
                type_v=TYPES[v], k=k, v=v)


# llama-server's rows (outputs = n_parallel) and the binding's own (0: every token of the ubatch)
GRID = [_c(8192, 2048), _c(8192, 512), _c(32768, 512, outputs=0), _c(32768, 2048, outputs=0), _c(4096, 1024),
        _c(16384, 512, 4, True, outputs=4), _c(16384, 512, 4, False, outputs=4),
        _c(8192, 512, fa=0), _c(8192, 2048, fa=0), _c(16384, 512, 4, True, fa=0, outputs=4),
        _c(16384, 512, 4, False, fa=0, outputs=4), _c(32768, 512, fa=0, outputs=0),
        _c(8192, 512, k="q8_0", v="q8_0"), _c(32768, 2048, k="q4_0", v="q4_0", outputs=0),
        _c(16384, 512, 4, False, k="q8_0", v="f16", outputs=4), _c(8192, 1024, fa=0, k="q8_0")]


def measure(path, grid: list[dict]) -> list[float]:
    return llamacpp_run.compute_mib(_WORKER, path, grid)


def predicted(path, c: dict) -> float:
    kw = dict(devices=(), find_max_context=False, fit=False, n_ctx=c["n_ctx"], n_parallel=c["n_seq"],
              cache_type_k=c["k"], cache_type_v=c["v"],
              kv_unified=c["unified"], flash_attn="on" if c["fa"] else "off", n_ubatch=c["n_ubatch"],
              n_batch=max(2048, c["n_ubatch"]), program="llama-server" if c["outputs"] else "llama-cpp-python")
    v = oomkit.estimate(str(path), "llama.cpp", **kw).engine_view
    return sum(v["compute_buffer_bytes"].values()) / MiB


@pytest.fixture(scope="module")
def e2b():
    if not llamacpp_run.available():
        pytest.skip("llama-cpp-python is not installed")
    path = synth.synth_path(gemma4_e2b(), "q4_0")
    return path, measure(path, GRID)


def test_the_binding_prints_the_b9849_cpu_log(e2b):
    """HilbertraumAI's b9849 CPU log (tests/fixtures/engine_logs/llamacpp_heldout2/gemma-4-e2b-q4_0-cpu-avx2-repack-
    device-none-8192-b9849.json): CPU compute buffer 480.09 MiB at -c 8192 -ub 2048 -np 1, flash attention auto
    (on), n_outputs_max = 1. The binding's graph on the synthetic file prints the same: the per-layer path's graph
    has not changed between the two builds."""
    assert e2b[1][0] == 480.09


def test_compute_equals_llama_cpp(e2b):
    """The replay lands every tensor where llama.cpp's ggml-alloc does: equal to the 0.01 MiB printed at every
    setting (flash attention on and off, one to four slots, unified or split, one output row or every token, F16
    and quantized caches with their Hadamard rotations)."""
    path, measured = e2b
    for i, (c, m) in enumerate(zip(GRID, measured, strict=True)):
        assert predicted(path, c) == pytest.approx(m, abs=0.01), (i, c, m)


def test_vulkan_device_compute_is_exact():
    """The fully offloaded device's buffer from the same replay, the host's GET_ROWS results as split inputs and the
    split in ggml-vulkan's order (compute_graphs.gemma4_ple_graph device=True, vk_order=True), against
    HilbertraumAI's b9849 Vulkan logs: E2B on the RTX 3090 and the UHD 620 (554.07 MiB) and at -np auto on the
    RTX 3060 Laptop GPU (560.07), E4B on the RTX 3090 (530.07). Before the split was replayed in ggml-vulkan's order
    (and with its input copies in first-use order): E2B 564.07 / 570.07, E4B 470.07 (0.887)."""
    logs = {"llamacpp_heldout2": ("gemma-4-e2b-q4_0-rtx3090-vulkan-8192-ub2048-b9849",
                                  "gemma-4-e2b-q4_0-uhd620-igpu-vulkan-8192-ub2048-b9849",
                                  "gemma-4-e2b-q4_0-rtx3060-laptop-plus-igpu-vulkan-np-auto-b9849"),
            "llamacpp_heldout5": ("gemma-4-e4b-q4_0-rtx3090-vulkan-8192-ub2048-b9849",)}
    for folder, names in logs.items():
        for name in names:
            root = Path(__file__).parent / "fixtures" / "engine_logs" / folder
            fx = json.loads((root / f"{name}.json").read_text())
            got = held_out_estimate(fx).engine_view["compute_buffer_bytes"]
            for dev, mib in fx["printed"]["buffers"]["compute_mib"].items():
                if dev != "Vulkan_Host":
                    assert got[dev] / MiB == pytest.approx(mib, abs=0.01), (name, dev, got[dev] / MiB, mib)


# The pinned binding with a stand-in Vulkan0 device registered beside the CPU (tests/groundtruth/vk_standin_device.c:
# ggml-vulkan's offload_op, graph_optimize and 1 GiB maximum buffer, VK_MAX_SIZE=1073741824; dummy buffers, no_alloc
# dry run, every layer offloaded) on the synthetic E2B, E4B and 12B files: its "Vulkan0 compute buffer size" (MiB) at
# the VK_GRID settings. At -c 8192 -ub 2048 -np 1 it prints the logs' own figures for E2B and E4B (554.07 / CPU
# 136.09, 530.07 / 166.09) and 528.07 for the 12B (529.07 printed); with graph_optimize switched off E2B 496.07 and
# E4B 446.07, which the replay without vk_order gives too.
VK_GRID = [_c(8192, 2048), _c(8192, 512), _c(32768, 512, outputs=0), _c(32768, 2048, outputs=0), _c(4096, 1024),
           _c(16384, 512, 4, True, outputs=4), _c(16384, 512, 4, False, outputs=4), _c(8192, 512, fa=0),
           _c(8192, 2048, fa=0), _c(8192, 512, k="q8_0", v="q8_0"), _c(32768, 2048, k="q4_0", v="q4_0", outputs=0)]
VK_STANDIN_MIB = {"e2b": [554.07, 137.02, 563.00, 2698.08, 267.04, 146.52, 133.02, 191.51, 778.04, 138.30, 2699.36],
                  "e4b": [530.07, 131.02, 522.00, 2674.08, 255.04, 140.52, 127.02, 205.01, 832.04, 132.30, 2675.36],
                  "12b": [528.07, 130.52, 527.00, 2672.08, 254.04, 141.52, 126.52, 339.01, 1716.04, 131.80, 2673.36]}
MODELS = {"e2b": gemma4_e2b, "e4b": gemma4_e4b, "12b": gemma4_12b}


def predicted_vulkan(path, c: dict) -> float:
    kw = dict(devices=(Device(id="Vulkan0", name="RTX 3090", memory_bytes=24 << 30, free_bytes=23 << 30),),
              backend="vulkan", find_max_context=False, fit=False, n_ctx=c["n_ctx"], n_parallel=c["n_seq"],
              cache_type_k=c["k"], cache_type_v=c["v"], kv_unified=c["unified"],
              flash_attn="on" if c["fa"] else "off", n_ubatch=c["n_ubatch"], n_batch=max(2048, c["n_ubatch"]),
              program="llama-server" if c["outputs"] else "llama-cpp-python")
    return oomkit.estimate(str(path), "llama.cpp", **kw).engine_view["compute_buffer_bytes"]["Vulkan0"] / MiB


@pytest.mark.parametrize("model", sorted(VK_STANDIN_MIB))
def test_vulkan_device_equals_the_standin_device(model):
    """oomkit's Vulkan0 buffer equals the stand-in device's at every setting: flash attention on and off, one to
    four slots, one output row or every token, F16 and quantized caches (with their Hadamard rotations), the
    largest in ggml-vulkan's 1 GiB chunks."""
    path = synth.synth_path(MODELS[model](), "q4_0")
    for c, want in zip(VK_GRID, VK_STANDIN_MIB[model], strict=True):
        assert predicted_vulkan(path, c) == pytest.approx(want, abs=0.01), (c, want)


# Gemma 3n E2B / E4B (AltUp, LAuReL and the same per-layer rows): tests/test_llamacpp_gemma3n_compute.py


# The same stand-in with graph_optimize switched off (fakevk_register(0)) and no maximum buffer size: the split as
# a ggml-cuda device holds it (ggml-cuda.cu: the same offload_op, get_op_batch_size >= 32 with no GET_ROWS;
# ggml_backend_cuda_graph_optimize keeps the nodes in order and adds allocation deps for MoE fusions only; one
# buffer). F16 caches: ggml-cuda's F16 copies of a quantized K / V (compute.fa_f16_bytes) are not in the stand-in.
CUDA_LIKE_MIB = {"e2b": [496.07, 122.52, 568.52, 2280.08, 238.04, 132.02, 118.52, 194.01, 788.04],
                 "e4b": [446.07, 110.02, 581.02, 2330.08, 213.04, 119.52, 106.02, 206.51, 838.04],
                 "12b": [528.07, 130.52, 527.00, 2108.00, 254.04, 141.52, 126.52, 338.01, 1364.04]}


@pytest.mark.parametrize("model", sorted(CUDA_LIKE_MIB))
def test_cuda_device_equals_the_standin_split_in_graph_order(model):
    """oomkit's CUDA0 buffer for the fully offloaded graph (the replay's device split, ggml's order, one buffer)
    equals the stand-in's at the F16 settings of VK_GRID."""
    path = synth.synth_path(MODELS[model](), "q4_0")
    dev = (Device(id="CUDA0", name="RTX 3090", memory_bytes=24 << 30, free_bytes=23 << 30),)
    for c, want in zip(VK_GRID[:9], CUDA_LIKE_MIB[model], strict=True):
        kw = dict(devices=dev, backend="cuda", find_max_context=False, fit=False, n_ctx=c["n_ctx"],
                  n_parallel=c["n_seq"], kv_unified=c["unified"], flash_attn="on" if c["fa"] else "off",
                  n_ubatch=c["n_ubatch"], n_batch=max(2048, c["n_ubatch"]),
                  program="llama-server" if c["outputs"] else "llama-cpp-python")
        got = oomkit.estimate(str(path), "llama.cpp", **kw).engine_view["compute_buffer_bytes"]["CUDA0"] / MiB
        assert got == pytest.approx(want, abs=0.01), (c, want)


@pytest.fixture(scope="module")
def dense_12b():
    if not llamacpp_run.available():
        pytest.skip("llama-cpp-python is not installed")
    path = synth.synth_path(gemma4_12b(), "q4_0")
    return path, measure(path, VK_GRID)


def test_dense_gemma4_compute_equals_llama_cpp(dense_12b):
    """Gemma 4 without per-layer embeddings (the 12B's shapes) through the same replay on the CPU: equal to the
    binding's buffer at every setting (558.08 MiB at -c 8192 -ub 2048 -np 1; the closed-form phases gave 526.00)."""
    path, measured = dense_12b
    for c, m in zip(VK_GRID, measured, strict=True):
        assert predicted(path, c) == pytest.approx(m, abs=0.01), (c, m)


def test_cuda_flash_attention_f16_copies_sit_behind_each_output_by_layer():
    """A quantized K / V cache on ggml-cuda with flash attention: from b9489 (PR #23907) the buffer type sizes each
    FLASH_ATTN_EXT node with room for F16 copies of its K and V views behind the output (ggml-cuda.cu
    ggml_backend_cuda_buffer_type_get_alloc_size -> fattn.cu ggml_cuda_flash_attn_ext_get_alloc_size), in the
    compute buffer, not ggml_cuda_pool; the MMA / tile kernels take every batch of more than two tokens. Gemma 4's
    replayed device split (compute_graphs.gemma4_ple_graph) widens each layer's output by its own copies: the
    sliding layers' 16 heads of 256 over the SWA cells, the full layers' 4 heads of 512 over every cell (31B's
    shapes). An F16 cache, and a Vulkan device, take none."""
    from oomkit.engines.llamacpp import compute_graphs, galloc
    from oomkit.engines.llamacpp.compute import _ple_caches, fa_f16_bytes
    from oomkit.engines.llamacpp.kv import kv_caches, resolve_context
    from oomkit.engines.llamacpp.settings import LlamaCppSettings
    from oomkit.model.resolve import resolve

    spec = resolve("google/gemma-4-31b", "Q4_0")
    kw = dict(gpu="RTX 4090", n_ctx=32768, flash_attn="on", n_gpu_layers=99, find_max_context=False)
    mib = {kv: oomkit.estimate(spec, "llama.cpp", cache_type_k=kv, cache_type_v=kv, **kw)
           .engine_view["compute_buffer_bytes"]["CUDA0"] / (1 << 20) for kv in ("f16", "q8_0")}
    s = LlamaCppSettings(n_ctx=32768, cache_type_k="q8_0", cache_type_v="q8_0", flash_attn="on")
    ctx = resolve_context(spec, s)
    caches = kv_caches(spec, ctx, False)
    cells = {il: c.cells for c in caches for il in c.layers}
    T = min(ctx.n_ctx, ctx.n_ubatch)
    extra = {la.index: fa_f16_bytes(la.attention, cells[la.index], T, ctx) for la in spec.trunk_layers}
    o = lambda a: a.n_heads * a.head_dim_v * T * 4  # noqa: E731
    swa, full = spec.trunk_layers[0].attention, spec.trunk_layers[5].attention
    assert (swa.n_kv_heads, swa.head_dim_k, full.n_kv_heads, full.head_dim_k) == (16, 256, 4, 512)
    assert extra[0] == -o(swa) + -(-o(swa) // 128) * 128 + 2 * cells[0] * 16 * 256 * 2
    assert extra[5] == 2 * 32768 * 4 * 512 * 2  # 256 MiB: K's and V's F16 copies behind a 128-aligned output
    args = (spec, T, 1, _ple_caches(caches, T, True), True)
    rot = dict(device=True, k_rot=True, v_rot=True)
    widened = galloc.peak_bytes(*compute_graphs.gemma4_ple_graph(*args, **rot, fa_extra=extra))
    plain = galloc.peak_bytes(*compute_graphs.gemma4_ple_graph(*args, **rot))
    assert round(mib["q8_0"], 2) == round(widened / (1 << 20), 2) == 378.80  # 216.80 before: the replay without the copies
    assert (widened - plain) / (1 << 20) == pytest.approx(162.0) and mib["f16"] < plain / (1 << 20)
    vk = oomkit.estimate(spec, "llama.cpp", cache_type_k="q8_0", cache_type_v="q8_0", backend="vulkan", **kw)
    assert vk.engine_view["compute_buffer_bytes"]["Vulkan0"] < mib["q8_0"] * (1 << 20)
