"""A second held-out set of Ollama logs, releases 0.12.0 to 0.14.2 (tests/fixtures/engine_logs/ollama_heldout2/, each
with its issue URL, the model, the GPU and the release the source lines pin down): the per-device "model weights" /
"kv cache" / "compute graph" / "total memory" lines of the Ollama engine's measured layout (runner/ollamarunner,
ml/backend/ggml) and of the llama runner's era C layout (llm/server.go createLayout), the layers offloaded and the
context. None of these logs was used to build or tune the estimate; the figures each test names were measured with
oomkit as it stood before anything was changed for them, then after the two source-cited changes below.

Per log, oomkit before -> after (printed figure in brackets; "exact" = equal to the byte where the log gives bytes,
else within the printed rounding):

- ollama/ollama#13085, qwen3:4b F16 on a Radeon AI PRO R9700 (ROCm), 4096 cells, flash attention off, 0.12.0-0.12.3:
  weights ROCm0 7.5 GiB and CPU 741.9 MiB, kv 576.0 MiB, 37/37 layers exact before and after; compute graph ROCm0
  299.0 MiB (+3.1%) -> 290.0 MiB [290.0 MiB].
- ollama/ollama#13343, qwen3:8b Q4_K_M, no layer on the (CUDA) GPU, all on the CPU, 4096 cells, 0.12.0-0.12.3, DEBUG
  bytes: weights 5219418112 B and kv 36 x 16777216 B exact before and after; CPU graph 322961408 B (+6.9%) ->
  301989888 B [301989888]; total 5.7 GiB [runner.size 5.7 GiB] before and after.
- ollama/ollama#12752, gpt-oss:120b on a Ryzen AI Max+ 395 (gfx1151, ROCm), 4 slots x 8192, 0.12.6, DEBUG bytes:
  ROCm0 weights 64118101248 B, "59.7 GiB" (-0.12%) -> 64197727488 B, "59.8 GiB" -> 64197736704 B [64197736704 B]
  with ggml-cuda's row padding of the two fused MXFP4 expert tensors; InputWeights 1158266880 B, kv 1830813696 B and CPU graph 5898240 B exact before and
  after; ROCm0 graph 140.9 MiB [182.8 MiB] (-22.9%) -> 157.8 MiB with Ollama's own gpt-oss graph replayed on the GPU
  -> 182.8 MiB (182.755) with the HIP build's legacy pool at the GPU's 40 compute units; total 62.6 -> 62.7 -> 62.8
  GiB [62.8 GiB].
- ollama/ollama#13763, llama3.2:3b on an Intel Arc A750 (Vulkan), llama runner, 4096 cells, 0.13.4-0.14.2: weights
  1.9 GiB, kv 448.0 MiB, graph 256.5 MiB, total 2.6 GiB, all on Vulkan0: exact before and after.
- ollama/ollama#13338, dolphin3 (Llama 3.1 8B Q4_K_M) on the CPU (an RTX 5090 reported with 0 B), llama runner,
  131072 cells, 0.12.11-0.13.2: weights 4.3 GiB, kv 16.0 GiB, no compute graph line, total 20.3 GiB: exact before
  and after.

The changes (engines/ollama, each citing the ollama/ollama source of the release):
- weights.py runner_layer_weights: ml/backend/ggml/ggml.go New creates a BF16 `*_exps.bias` tensor as F32 (from
  1a19df1f3, v0.11.5); the runner's BackendMemory counts it so (gpt-oss's expert biases: +2211840 B a block);
- graph.py qwen3_dense_graph_bytes(flash_attention=False, on_cpu=...) through layout._own_graph: dense qwen3 without
  flash attention, v0.12.0-v0.12.6, replayed node for node through ggml-alloc: ScaledDotProductAttention's
  mul_mat / soft_max_ext / mul_mat branch over the PermutedV cache (CacheConfig{CachePadding: 32, PermutedV: true}),
  the F32 mask an input of its own (kvcache/causal.go buildMask), on the one GPU or, with no GPU, on the CPU;
- graph.py gptoss_graph_bytes through layout._own_graph: gpt-oss with flash attention on a GPU, v0.11.5-v0.12.11,
  replayed node for node with the split inputs (token rows, positions, F16 masks, output index) in the buffer;
- weights.py runner_layer_weights(cuda=True): on a CUDA or ROCm GPU each tensor is ggml-cuda's get_alloc_size
  (quantized rows padded to MATRIX_ROW_PADDING) padded to 128 B, the library gpt-oss blob's gate and up experts
  one fused tensor;
- cuda_pool.py hip_gptoss_pool_bytes: the ROCm pool patch 0022 counts in the graph (ggml_cuda_pool_leg, as Ollama
  builds ggml-hip with GGML_HIP_NO_VMM): the BF16 attention products' conversions and the flash-attention tile
  kernel's parallel-block scratch, for a GPU whose compute units are given.

Not covered by these logs: Metal and a CUDA GPU holding layers (none of the 0.12+ logs found in the issue threads
with per-device lines held one whose model could be named), and the --fit-like layout of a partial offload (every
log here has all layers on one device)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oomkit.engines import ollama as ol
from oomkit.engines.ollama.weights import gguf_view, ollama_gguf, runner_layer_weights
from oomkit.memory import Device
from oomkit.model.resolve import resolve
from tests.test_ollama import _no_ollama_env  # noqa: F401  (autouse: no OLLAMA_* from the environment)

MiB, GiB = 1 << 20, 1 << 30
FIXTURES = Path(__file__).parent / "fixtures" / "engine_logs" / "ollama_heldout2"


def _load(stem: str) -> dict:
    return json.loads((FIXTURES / f"{stem}.json").read_text())


def _unit(printed: str) -> int:
    """Half of the last printed digit (format.HumanBytes2: one decimal)."""
    return {"GiB": GiB, "MiB": MiB}[printed.split()[-1]] // 20


def _printed_lines(quoted: str) -> dict[str, dict[str, str]]:
    """The per-device lines of a quoted log: {"model weights": {"ROCm0": "7.5 GiB", ...}, ..., "total memory":
    {"": "2.6 GiB"}}, read from the text itself."""
    import re

    out: dict[str, dict[str, str]] = {}
    for m in re.finditer(r'msg="(model weights|kv cache|compute graph|total memory)"(?: device=(\S+))? size="([^"]+)"',
                         quoted):
        out.setdefault(m.group(1), {})[m.group(2) or ""] = m.group(3)
    return out


def _view(tag: str, quant: str, devices: tuple, **kw):
    est = ol.ENGINE.estimate(resolve(tag, quant), devices, ol.OllamaSettings(**kw))
    return est, est.engine_view["ollama_memory"]


def _within(got: int, printed: str) -> bool:
    n, u = printed.split()
    return abs(got - float(n) * {"GiB": GiB, "MiB": MiB}[u]) <= _unit(printed)


# ---------------------------------------------------------------------------------------------------------------
# ollama/ollama#13085: qwen3:4b F16, every layer on a Radeon AI PRO R9700 (ROCm), v0.12.0-v0.12.3


def _r9700(version: str = "0.12.3"):
    fx = _load("qwen3-4b-fp16-rocm-r9700-ctx4096-0.12.3")
    # the free memory is not in the excerpt; every layer was placed on the 32 GB card (GPULayers:37)
    gpu = Device(id="ROCm0", name="AMD Radeon AI PRO R9700", memory_bytes=32 * GiB, free_bytes=31 * GiB)
    s = fx["settings"]
    est, mine = _view("qwen3:4b", "F16", (gpu,), num_ctx=s["num_ctx"], num_parallel=s["num_parallel"],
                      library="rocm", engine_version=version)
    return fx, est, mine


@pytest.mark.parametrize("version", ["0.12.0", "0.12.3"])
def test_r9700_qwen3_4b_weights_kv_layers(version):
    """OLLAMA_FLASH_ATTENTION=false and qwen3 not yet flash-attention by default (fs/ggml FlashAttention(): gpt-oss
    only before v0.12.4): "model weights" ROCm0 7.5 GiB (the F16 blocks and the tied output) and CPU 741.9 MiB (the
    input token_embd, 151936 x 2560 x 2 B), "kv cache" 576.0 MiB, 37/37 layers at 4096 cells; as printed before
    any change."""
    fx, est, mine = _r9700(version)
    lines = _printed_lines(fx["quoted"])
    assert est.settings["flash_attention"] == "off"
    assert est.engine_view["ollama_layers"] == "37/37" and est.engine_view["n_ctx"] == 4096
    for line in ("model weights", "kv cache"):
        for dev, printed in lines[line].items():
            assert _within(mine[line][dev], printed), (line, dev, mine[line][dev] / MiB)
    assert mine["model weights"]["CPU"] == 151936 * 2560 * 2
    assert mine["kv cache"] == {"ROCm0": 36 * 4096 * 8 * 128 * 2 * 2}


def test_r9700_qwen3_4b_graph_without_flash_attention():
    """ROCm0 "compute graph" 290.0 MiB: the 32 heads' F32 KQ scores (4096 x 512 x 32 x 4 B = 256 MiB), softmaxed in
    place, beside what ggml-alloc keeps of the block and the split inputs the scheduler copies in (the token rows,
    the positions, the F32 mask of 4096 x 512, the output index): graph.py's replay, 290.002 MiB. It was 299.0 MiB
    (+3.1%) with the llama.cpp graph standing in."""
    _, _, mine = _r9700()
    assert ol.human_bytes2(mine["compute graph"]["ROCm0"]) == "290.0 MiB"


# ---------------------------------------------------------------------------------------------------------------
# ollama/ollama#13343: qwen3:8b Q4_K_M, no layer on the GPU (CPU), v0.12.0-v0.12.3, OLLAMA_DEBUG bytes


def _qwen3_8b_cpu(version: str = "0.12.3"):
    fx = _load("qwen3-8b-q4km-cpu-no-layers-ctx4096-0.12.3-debug")
    s = fx["settings"]
    # "insufficient VRAM to load any model layers": the layout gives the GPU nothing, so the runner has the CPU only
    est, mine = _view("qwen3:8b", "Q4_K_M", (), num_ctx=s["num_ctx"], num_parallel=s["num_parallel"],
                      engine_version=version)
    return fx, est, mine


@pytest.mark.parametrize("version", ["0.12.0", "0.12.3"])
def test_qwen3_8b_cpu_weights_to_the_byte(version):
    """required.InputWeights 350060544 (token_embd Q4_K) and required.CPU.Weights, block by block and the output
    layer, equal to the byte; "kv cache" 36 x 16777216 B (4096 cells x 4096 B); 0/37 layers."""
    fx, est, mine = _qwen3_8b_cpu(version)
    p = fx["printed"]
    spec = ollama_gguf(resolve("qwen3:8b", "Q4_K_M"))
    assert runner_layer_weights(spec, gguf_view(spec)) == p["required.CPU.Weights"]
    assert mine["model weights"] == {"CPU": p["required.InputWeights"] + p["required.CPU.Weights_sum"]}
    assert mine["kv cache"] == {"CPU": p["required.CPU.Cache_layers"] * p["required.CPU.Cache_per_layer"]}
    assert est.engine_view["ollama_layers"] == "0/37" and est.engine_view["n_ctx"] == p["runner.num_ctx"]


def test_qwen3_8b_cpu_graph_to_the_byte():
    """required.CPU.Graph=301989888 (288.00 MiB): the whole graph on the CPU, the inputs in buffers of their own; the
    KQ scores (256 MiB) and what the block keeps beside them, replayed (graph.py). 322961408 B (+6.9%) before."""
    fx, _, mine = _qwen3_8b_cpu()
    assert mine["compute graph"] == {"CPU": fx["printed"]["required.CPU.Graph"]}


def test_qwen3_8b_cpu_total_is_runner_size():
    """sched.go "finished setting up" runner.size="5.7 GiB" runner.vram="0 B": weights + cache + graph."""
    fx, _, mine = _qwen3_8b_cpu()
    assert ol.human_bytes2(mine["total memory"]) == fx["printed"]["runner.size"]


# ---------------------------------------------------------------------------------------------------------------
# ollama/ollama#12752: gpt-oss:120b, 4 slots x 8192, every layer on a Ryzen AI Max+ 395 (ROCm), v0.12.6


def _strix_halo(cus: int | None = 40):
    fx = _load("gpt-oss-120b-rocm-strix-halo-np4-ctx8192-0.12.6-debug")
    s = fx["settings"]
    # the Radeon 8060S of the Ryzen AI Max+ 395 has 40 compute units (AMD's specification), the count HIP reports
    gpu = Device(id="ROCm0", name="AMD Radeon Graphics", memory_bytes=96 * GiB, free_bytes=int(95.8 * GiB),
                 sm_count=cus)
    est, mine = _view("gpt-oss:120b", "MXFP4_MOE", (gpu,), num_ctx=s["num_ctx"], num_parallel=s["num_parallel"],
                      library="rocm", engine_version="0.12.6")
    return fx, est, mine


def test_gpt_oss_120b_layers_kv_and_input_weights():
    """37/37 layers; required.InputWeights 1158266880 (token_embd) and the output layer's 1158278400 to the byte;
    "kv cache" 1.7 GiB = 18 full layers x 32768 cells (67108864 B, the first two entries printed are a sliding and a
    full layer) + 18 sliding-window layers x (4 x 4096 + 512) cells (34603008 B)."""
    fx, est, mine = _strix_halo()
    p = fx["printed"]
    assert est.engine_view["ollama_layers"] == "37/37" and est.engine_view["n_ctx"] == 32768
    assert mine["model weights"]["CPU"] == p["required.InputWeights"]
    spec = ollama_gguf(resolve("gpt-oss:120b", "MXFP4_MOE"))
    assert runner_layer_weights(spec, gguf_view(spec))[-1] == p["required.ROCm0.Weights"][-1]
    assert mine["kv cache"] == {"ROCm0": 18 * sum(p["required.ROCm0.Cache_first"])}
    assert _within(mine["kv cache"]["ROCm0"], p["kv cache"]["ROCm0"])
    assert mine["compute graph"]["CPU"] == p["required.CPU.Graph"]  # 512 x 2880 x 4: the input rows alone


def test_gpt_oss_120b_block_weights_with_f32_expert_biases():
    """required.ROCm0.Weights 1751096064 B a block: the library blob's BF16 expert biases (3 x 2880 x 128 x 2 B) are
    created F32 by the runner (ml/backend/ggml/ggml.go New, v0.11.5+: "add_ids only supports fp32 tensors"), so
    the block is the file's 1748883968 B + 2211840 B. "model weights" ROCm0 "59.8 GiB" (59.7 before, -0.12%)."""
    fx, _, mine = _strix_halo()
    p = fx["printed"]
    spec = ollama_gguf(resolve("gpt-oss:120b", "MXFP4_MOE"))
    blocks = runner_layer_weights(spec, gguf_view(spec))[:-1]
    assert all(abs(b - p["required.ROCm0.Weights"][0]) <= 256 for b in blocks)
    assert ol.human_bytes2(mine["model weights"]["ROCm0"]) == p["model weights"]["ROCm0"]


def test_gpt_oss_120b_block_weights_to_the_byte():
    """required.ROCm0.Weights to the byte: ml/backend/ggml New sums pad(ggml_backend_buft_get_alloc_size, alignment)
    a tensor, and ggml-cuda's buffer type (HIP builds the same) pads a quantized tensor's rows to MATRIX_ROW_PADDING
    (512): the library blob's two MXFP4 expert tensors (the fused ffn_gate_up_exps and ffn_down_exps, rows of 2880)
    take 102 B more each, 128 once aligned: 1751095808 + 256 B. Before: 256 B a block short (9216 B over the 36
    blocks); the computed inventory's separate gate and up would give 384."""
    fx, _, mine = _strix_halo()
    spec = ollama_gguf(resolve("gpt-oss:120b", "MXFP4_MOE"))
    printed = fx["printed"]["required.ROCm0.Weights"]
    assert runner_layer_weights(spec, gguf_view(spec), cuda=True) == printed
    assert runner_layer_weights(spec, gguf_view(spec))[0] == printed[0] - 256  # a CPU buffer pads no row
    assert mine["model weights"]["ROCm0"] == sum(printed) == 64197736704


def test_gpt_oss_120b_gpu_graph():
    """ROCm0 "compute graph" 182.8 MiB: Ollama's own gpt-oss graph replayed on the GPU (graph.py, equal to
    ggml-alloc: the MoE rows beside the F16 masks of 32768 and 16896 cells x 512 and the token rows the scheduler
    copies in, 165415040 B = 157.75 MiB) plus the HIP build's legacy pool that patch 0022 adds (cuda_pool.py
    hip_gptoss_pool_bytes): the BF16 qkv product's two conversions (1.05 x 2.8125 and 1.05 x 5 MiB, reused by
    attn_out and the output rows) and the flash-attention tile kernel's dst_tmp at two parallel blocks (1.05 x 16
    MiB; its meta reuses a freed buffer): 26217728 B, 182.755 MiB in all. It was 140.9 MiB with the llama.cpp graph
    standing in (-22.9%), 157.8 MiB with the graph alone. Two parallel blocks: two tile blocks a compute unit (the
    kernel's 25 KiB of shared memory against 64 KiB), 512 tiles over 80 a wave at 98%; the compute units unknown,
    no pool is counted."""
    fx, _, mine = _strix_halo()
    assert mine["compute graph"]["ROCm0"] == 165415040 + 26217728
    assert ol.human_bytes2(mine["compute graph"]["ROCm0"]) == fx["printed"]["compute graph"]["ROCm0"]
    _, _, plain = _strix_halo(cus=None)
    assert plain["compute graph"]["ROCm0"] == 165415040


def test_gpt_oss_120b_total():
    """"total memory" 62.8 GiB: the weights, cache and both graphs (62.7 GiB before the pool was counted)."""
    fx, _, mine = _strix_halo()
    assert ol.human_bytes2(mine["total memory"]) == fx["printed"]["total memory"]


# ---------------------------------------------------------------------------------------------------------------
# ollama/ollama#13763: llama3.2:3b on an Intel Arc A750 (Vulkan), llama runner, v0.13.4-v0.14.2


@pytest.mark.parametrize("version", ["0.13.4", "0.14.2"])
def test_arc_a750_llama32_3b_every_line(version):
    """Era C (llm/server.go createLayout): the llama engine's layers and KV from the GGUF, the graph GraphSize's
    (llama: max(4B x 512 x (1 + 4E + ctx(1 + H)), 4B x 512 x (E + V)) = 256.5 MiB), logged per device; every line of
    the log, 29/29 layers at 4096 cells."""
    fx = _load("llama3.2-3b-vulkan-arc-a750-ctx4096-0.14")
    gpu = Device(id="Vulkan0", name="Intel Arc A750", memory_bytes=8 * GiB, free_bytes=int(7.9 * GiB))
    est, mine = _view("llama3.2:3b", "Q4_K_M", (gpu,), num_ctx=fx["settings"]["num_ctx"], library="vulkan",
                      engine_version=version)
    assert est.engine_view["ollama_runner"] == "llama.cpp runner"
    assert est.engine_view["ollama_layers"] == "29/29" and est.engine_view["n_ctx"] == 4096
    lines = _printed_lines(fx["quoted"])
    for line in ("model weights", "kv cache", "compute graph"):
        assert {d: ol.human_bytes2(b) for d, b in mine[line].items()} == lines[line], line
    assert ol.human_bytes2(mine["total memory"]) == lines["total memory"][""]


# ---------------------------------------------------------------------------------------------------------------
# ollama/ollama#13338: dolphin3 (Llama 3.1 8B Q4_K_M) on the CPU at 131072, llama runner, v0.12.11-v0.13.2


@pytest.mark.parametrize("version", ["0.12.11", "0.13.2"])
def test_dolphin3_cpu_131072_every_line(version):
    """GPULayers:[] (the RTX 5090 reported 0 B): "model weights" CPU 4.3 GiB (the blocks and the output layer, not
    token_embd: fs/ggml GroupLayers), "kv cache" CPU 16.0 GiB, no "compute graph" line (buildLayout adds GraphSize's
    graph to the GPUs only) and "total memory" 20.3 GiB; 0/33 layers at 131072 cells."""
    fx = _load("llama3.1-8b-dolphin3-cpu-ctx131072-0.13")
    est, mine = _view("llama3.1:8b", "Q4_K_M", (), num_ctx=fx["settings"]["num_ctx"], flash_attention="0",
                      engine_version=version)
    assert est.engine_view["ollama_runner"] == "llama.cpp runner"
    assert est.engine_view["ollama_layers"] == "0/33" and est.engine_view["n_ctx"] == 131072
    lines = _printed_lines(fx["quoted"])
    assert "compute graph" not in lines and not mine["compute graph"]
    for line in ("model weights", "kv cache"):
        assert {d: ol.human_bytes2(b) for d, b in mine[line].items()} == lines[line], line
    assert ol.human_bytes2(mine["total memory"]) == lines["total memory"][""]


def test_fixtures_cite_their_issue():
    stems = sorted(p.stem for p in FIXTURES.glob("*.json"))
    assert len(stems) == 5
    for stem in stems:
        fx = _load(stem)
        assert fx["source"].startswith("https://github.com/ollama/ollama/issues/"), stem
        assert fx["model"] and fx["gpus"] and fx["engine_version"] and fx["quoted"], stem


# ---------------------------------------------------------------------------------------------------------------
# The replay without flash attention against ggml_gallocr_reserve on the same graph built with ggml (the ggml of
# the pinned llama-cpp-python binding, as tests/test_ollama_graph_ggml.py does for the flash-attention graph)


def _qwen3_no_fa_ggml_bytes(T: int, cells: int, n_layer: int, E: int, H: int, KV: int, D: int, FF: int, V: int,
                            on_cpu: bool) -> int:
    """ml/backend/ggml Tensor.ScaledDotProductAttention without flash attention (v0.12.0-v0.12.6) in Ollama's qwen3
    blocks: kq = mul_mat(K, Q) (F32), soft_max_ext with the F32 mask and the scale, kqv = mul_mat(V, kq) over the
    PermutedV cache view (cells x head_dim x KV heads), its permutation made contiguous. on_cpu: the token rows are
    get_rows of token_embd and the inputs sit in an allocated context of their own (ctx.Input()), as on the CPU
    backend; else the rows, positions, mask and output index are plain leaves, as the GPU's split copies."""
    import ctypes as C

    from tests.test_ollama_graph_ggml import T_F16, T_F32, T_I32, _Ggml, _Params, _reserved_bytes, qwen3_qkv

    g = _Ggml()
    sm = g.base.ggml_soft_max_ext
    sm.restype, sm.argtypes = C.c_void_p, [C.c_void_p, C.c_void_p, C.c_void_p, C.c_float, C.c_float]
    W, G = (g.init(_Params(n * C.sizeof(C.c_void_p) * 64, None, True)) for n in (400, 300000))
    w: dict = {}

    def wt(name, typ, *shape):
        if name not in w:
            w[name] = (g.new_tensor_1d, g.new_tensor_2d, g.new_tensor_3d)[len(shape) - 1](W, typ, *shape)
        return w[name]

    ck, cv = g.new_tensor_3d(W, T_F16, D, KV, cells), g.new_tensor_3d(W, T_F16, cells, D, KV)
    src = W if on_cpu else G
    pos, outs = g.new_tensor_1d(src, T_I32, T), g.new_tensor_1d(src, T_I32, 1)
    mask = g.new_tensor_2d(src, T_F32, cells, T)
    if on_cpu:
        x = g.get_rows(G, wt("tok", T_F16, E, V), g.new_tensor_1d(W, T_I32, T))
    else:
        x = g.new_tensor_2d(G, T_F32, E, T)
    gf = g.new_graph_custom(G, 65536, False)
    fwd = lambda *ts: [g.build_forward_expand(gf, t) for t in ts]  # noqa: E731
    for il in range(n_layer):
        res = x
        q, k, v = qwen3_qkv(g, G, wt, x, pos, E, H, KV, D, T)
        fwd(q)
        fwd(k, v)
        fwd(g.cpy(G, k, g.view_1d(G, ck, D * KV * T, 0)))
        fwd(g.cpy(G, g.permute(G, v, 1, 2, 0, 3), g.view_3d(G, cv, T, D, KV, g.nb(cv, 1), g.nb(cv, 2), 0)))
        kk = g.view_3d(G, ck, D, KV, cells, g.nb(ck, 1), g.nb(ck, 2), 0)
        vv = g.view_3d(G, cv, cells, D, KV, g.nb(cv, 1), g.nb(cv, 2), 0)
        kq = g.mul_mat(G, g.permute(G, kk, 0, 2, 1, 3), g.permute(G, q, 0, 2, 1, 3))
        kq = sm(G, kq, mask, D ** -0.5, 0.)
        o = g.cont(G, g.permute(G, g.mul_mat(G, vv, kq), 0, 2, 1, 3))
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


_NO_FA_SHAPES = [dict(), dict(cells=8192), dict(cells=16384), dict(T=128), dict(T=300, cells=2048),
                 dict(E=2560, FF=9728), dict(E=5120, FF=25600, H=64), dict(cells=40960, E=1024, FF=3072, H=16)]


@pytest.mark.parametrize("on_cpu", [True, False], ids=["cpu", "gpu"])
@pytest.mark.parametrize("shape", _NO_FA_SHAPES, ids=[",".join(f"{k}={v}" for k, v in s.items()) or "qwen3-8b-4096"
                                                       for s in _NO_FA_SHAPES])
def test_qwen3_no_fa_replay_is_ggml_alloc(shape, on_cpu):
    import importlib.util

    spec = importlib.util.find_spec("llama_cpp")
    lib = Path(spec.origin).parent / "lib" if spec and spec.origin else None
    if lib is None or not (lib / "libggml-base.so").exists():
        pytest.skip("llama-cpp-python's ggml libraries not installed")
    from oomkit.engines.ollama.graph import qwen3_dense_graph_bytes

    a = dict(T=512, cells=4096, E=4096, H=32, KV=8, D=128, FF=12288)
    a.update(shape)
    got = _qwen3_no_fa_ggml_bytes(n_layer=4, V=1000, on_cpu=on_cpu, **a)
    assert qwen3_dense_graph_bytes(a["E"], a["H"], a["KV"], a["D"], a["FF"], 4, 1000, a["T"], a["cells"],
                                   mask_cast=False, set_rows=False, alignment=32, flash_attention=False,
                                   on_cpu=on_cpu) == got
