"""A fourth held-out set of Ollama logs (tests/fixtures/engine_logs/ollama_heldout4/, each with its issue URL, the
model, the GPU and the release the source lines pin down), read through oomkit with nothing tuned on them: Metal, ROCm
and Vulkan, vision models with their projector.weights / projector.graph, embedding models, and llama-server (v0.30+)
on integrated GPUs. Measured before -> after (oomkit - log; "exact" = within the printed rounding, or to the MiB):

- ollama/ollama#11975, qwen3:4b (2507) on a Radeon RX 7900 XTX (ROCm), llama runner, v0.11.6, 4096 cells: every
  field of the msg=offload line exact before and after (kv 576.0 MiB, graph 384.0 / 384.0 MiB, weights 2.3 GiB /
  2.0 GiB / 304.3 MiB, required 3.8 / 3.8 GiB, 37/37 layers).
- ollama/ollama#10395, gemma3:12b on an Apple M2 Max (Metal, 21.3 GiB), Ollama engine, v0.7.0, 2 slots x 4096:
  every field exact before and after, the projector included (795.9 MiB / 1.0 GiB, required 11.7 GiB).
- ollama/ollama#9791, gemma-3-12b-it on one CUDA GPU, v0.6.2, 4 automatic slots x 2048: kv 3.0 GiB (every layer
  global before f66216e39, v0.6.3), graph 519.5 MiB / 1.3 GiB and weights exact before and after. The model is a
  GGUF repo's (the runner's blob: 626 tensors, the text alone, named "Gemma 3 12b It" by llama.cpp's converter),
  its tower the repo's F16 mmproj: projector.graph "0 B" and projector.weights "814.6 MiB" are llm/memory.go
  projectorMemoryRequirements of that file (v0.6.x). Read as the library tag: 1.0 GiB and 795.9 MiB, required
  12.7 GiB against 11.7; as bartowski's (or unsloth's) repo: the whole line exact (projector.py
  llamacpp_mmproj_projector, test_gemma3_0_6_2_projector_of_the_repos_mmproj).
- ollama/ollama#9311, llama3.2-vision:11b on one CUDA GPU, llama runner with --mmproj, v0.5.11: kv 1.2 GiB
  (+87%), graph 853.3 MiB (+230% / +27%), weights.total 6.1 GiB (+11%), no projector, required 8.0 GiB (-29%)
  before (mllama read as a plain llama); after, the mllama GraphSize branch and projectorMemoryRequirements of
  the --mmproj file: the msg="offload to cuda" line identical to the log's (projector 1.8 / 2.8 GiB, kv 656.2 MiB,
  graph 258.5 / 669.5 MiB, required 11.3 GiB).
- ollama/ollama#7255, nemotron (Llama-3.1-Nemotron-70B) on a 16 GiB Mac (Metal), llama runner, v0.3.14, 2048 cells:
  18/81 layers and every figure exact before and after; the line itself was printed as msg=offload library=metal
  before and is msg="offload to metal" after (llm/memory.go MemoryEstimate.log of v0.1.45-v0.5.11), identical to
  the log's to the character.
- ollama/ollama#7443, qwen2.5:72b (the log's qwen2 GGUF; the issue names nemotron) over three CUDA GPUs, llama runner,
  v0.3.14, 4 slots x 2048: layers.split=27,27,27 and every figure exact before and after; the per-GPU allocations
  [18.7 17.0 17.3] -> [18.6 17.1 17.3] GiB, as printed (the blob's ffn_down types in llama-quantize's pre-#9935 file
  order: test_three_gpu_allocations_of_0_3_14).
- ollama/ollama#8509, qwen2.5-coder:7b on a 6 GiB CUDA GPU (Windows), llama runner, v0.5.7, flash attention on,
  12288 cells: 28/29 layers and the whole msg="offload to cuda" line identical to the log's (no code change; the
  line's name was msg=offload library=cuda before d0fa603).
- ollama/ollama#7622, llama3.1:8b (the library's first blob, 87048bcd: Q4_0, its config blob says) on a CUDA GPU
  with 20.0 GiB free, llama runner, v0.4.1, 4 automatic slots x 2048: every figure exact and the line identical to
  the log's; read as today's Q4_K_M blob it would be weights 4.9 / 4.5 GiB, required 6.5 GiB (+3.3%).
- ollama/ollama#16482, llama3.2:3b on a Radeon Vega 6 iGPU (Vulkan), llama-server, v0.30.3, 2 slots, q4_0 KV, flash
  attention on: the --fit dry run's table exact before and after (Vulkan0 1918 / 252 / 128 MiB, Host 308 / 0 / 32).
- ollama/ollama#16447, qwen3-embedding:8b on an Intel Arc iGPU (Vulkan), llama-server, v0.30.0, 32768 cells: the KV
  cache 4608 MiB exact before and after; the batch 1024 -> 2048 (llm/llama_server.go appendBatchArgs: an embedding
  model, one whose GGUF carries <arch>.pooling_type, gets --embedding -b/-ub DefaultEmbeddingNumBatch; oomkit knew
  only the BERT-family encoders as embedding models: weights.py _pooled_decoder); the compute buffers stay off,
  Vulkan0 625 -> 1251 MiB against 480.05 and Vulkan_Host 96 -> 192 MiB against 1830.92 (then a strict xfail);
  the logits refused by ggml-vulkan for their size and run on the CPU (compute.py vulkan_refused_logits_bytes):
  Vulkan0 1251 -> 480.05 (exact), Vulkan_Host 192 -> 1734.88 (-5.2%), see test_arc_qwen3_embedding_compute.
- ollama/ollama#12247, embeddinggemma on an 8 GiB CUDA GPU, Ollama engine, v0.11.10: the CPU compute graph 6.0 MiB
  is the input layer's get_rows of a 2048-token batch; the GPU compute graph 33.5 MiB (-69%, the causal gemma3
  decoder's graph) -> 108.02 MiB against 108.0 and the total 1.0 -> 1.1 GiB (exact): Ollama's gemma3_embed graph
  replayed (graph.py gemma3_embed_graph_bytes: every position an output, the SWA and global caches' F32 masks
  copied in, kq of 2560 cells x 2048 tokens x 3 heads in F32), see test_embeddinggemma_gpu_graph.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oomkit.engines import ollama as ol
from oomkit.memory import Device
from oomkit.model.hf_config import spec_from_config
from oomkit.model.resolve import resolve
from tests import test_ollama as tl
from tests.test_ollama import _no_ollama_env  # noqa: F401  (autouse: no OLLAMA_* from the environment)
from tests.test_ollama_heldout3_logs import _table

MiB, GiB = 1 << 20, 1 << 30
FIXTURES = Path(__file__).parent / "fixtures" / "engine_logs" / "ollama_heldout4"


def _load(stem: str) -> dict:
    fx = json.loads((FIXTURES / f"{stem}.json").read_text())
    fx["_stem"] = stem
    return fx


def _offload_errors(stem: str) -> tuple[object, dict[str, float]]:
    """The msg=offload line's fields through tests/test_ollama.py's comparison (errors beyond the printed rounding)."""
    return tl._best_run(_load(stem))


# ---------------------------------------------------------------------------------------------------------------
# msg=offload lines (llm/memory.go estimateGPULayers): ROCm, Metal, CUDA with a vision projector

_QWEN3_ROCM = "qwen3-4b-2507-rocm-7900xtx-ctx4096-0.11.6"
_GEMMA3_METAL = "gemma3-12b-metal-m2max-np2-ctx8192-0.7.0"
_GEMMA3_062 = "gemma3-12b-cuda-15gb-np4-ctx8192-0.6.2"
_MLLAMA = "llama3.2-vision-11b-cuda-24gb-ctx2048-0.5.11"
_NEMOTRON_METAL = "nemotron-70b-metal-16gib-partial-0.3.14"
_QWEN25_3GPU = "qwen2.5-72b-3gpu-split-np4-0.3.14"
_CODER_FA = "qwen2.5-coder-7b-cuda-6gib-fa-ctx12288-0.5.7"
_LLAMA31_041 = "llama3.1-8b-cuda-20gib-np4-0.4.1"


@pytest.mark.parametrize("stem", [_QWEN3_ROCM, _GEMMA3_METAL, _NEMOTRON_METAL, _QWEN25_3GPU, _CODER_FA,
                                  _LLAMA31_041])
def test_offload_line_every_field(stem):
    """Every memory.* / projector.* field within its printed rounding, and the layers offloaded."""
    est, err = _offload_errors(stem)
    fx = _load(stem)
    assert set(err) >= {"memory.required.kv", "memory.graph.full", "memory.weights.total", "memory.required.full"}
    assert all(e == 0 for e in err.values()), err
    assert tl._logged_offload(est) == fx["printed"]["layers.offload"]


def test_gemma3_metal_projector_with_the_output_layer():
    """v0.7.0 on Metal: the Ollama engine's projector (gemma3's SigLIP, fs/ggml VisionGraphSize: 795.9 MiB of v.*
    tensors, a 1.0 GiB graph) counted once in required.full = required.partial = 11.7 GiB, library=metal."""
    est, _ = _offload_errors(_GEMMA3_METAL)
    log = est.engine_view["ollama_log"]
    assert 'projector.weights="795.9 MiB" projector.graph="1.0 GiB"' in log and "library=metal" in log


def test_offload_to_metal_line_of_0_3_14():
    """v0.3.14 on a 16 GiB Mac, nemotron (Llama-3.1-Nemotron-70B) at 2048 cells: 18 of 81 layers on Metal and the
    whole line as Ollama printed it, to the character: llm/memory.go MemoryEstimate.log() of v0.1.45-v0.5.11 logs
    msg="offload to metal" with no library= field (7784ca33c), memory.gpu_overhead from v0.3.10 (b05c9e83d); v0.5.12
    (58245413f) moved to msg=offload library=... Before: every figure as printed, under msg=offload library=metal."""
    est, _ = _offload_errors(_NEMOTRON_METAL)
    line = _load(_NEMOTRON_METAL)["quoted"].splitlines()[1]
    assert est.engine_view["ollama_log"].splitlines()[0] == line[line.index("msg="):]


@pytest.mark.parametrize("stem", [_CODER_FA, _LLAMA31_041])
def test_offload_to_cuda_line_to_the_character(stem):
    """The msg="offload to cuda" line as Ollama printed it, to the character. v0.5.7 on a 6 GiB GPU, qwen2.5-coder:7b
    at 12288 cells with OLLAMA_FLASH_ATTENTION=1 and no KV type (llm/memory.go EstimateGPULayers passes kvct "" to
    GraphSize: an f16 cache): 28 of 29 layers, graph.partial 878.0 MiB from qwen2's partial-offload branch of
    llm/ggml.go. v0.4.1 on 20 GiB, the first llama3.1:8b blob (Q4_0 with a Q6_K output) in 4 automatic slots x 2048:
    33 of 33 layers, weights.total 4.7 GiB = the 32 blocks plus kv / block_count each (v0.4.1 memory.go: layerSize
    += kv / BlockCount, memoryWeights += layerSize) and repeating 4.3 GiB = total less the output layer."""
    est, _ = _offload_errors(stem)
    line = _load(stem)["quoted"].splitlines()[1]
    assert est.engine_view["ollama_log"].splitlines()[0] == line[line.index("msg="):]


def test_three_gpu_split_of_0_3_14():
    """qwen2.5:72b Q4_K_M over three CUDA GPUs of 39.1 GiB, 4 automatic slots x 2048: llm/memory.go v0.3.14 deals
    the 80 blocks round-robin over the GPUs with space (layer i on gpusWithSpace[i % 3]) and the output layer to
    the next, so layers.split=27,27,27; kv 2.5 GiB, graph 1.3 GiB on every GPU (graphFullOffload = graphPartialOffload
    with several GPUs), required 53.0 GiB: the line's figures as printed before and after."""
    est, _ = _offload_errors(_QWEN25_3GPU)
    line = est.engine_view["ollama_log"].splitlines()[0]
    assert 'layers.split=27,27,27 memory.available="[39.1 GiB 39.1 GiB 39.1 GiB]"' in line
    total = sum(est.engine_view["ollama_memory"]["memory.required.allocations"].values())
    assert ol.human_bytes2(total) == _load(_QWEN25_3GPU)["printed"]["memory.required.full"]


def test_three_gpu_allocations_of_0_3_14():
    """The per-GPU share of the heavier blocks. The library's qwen2.5:72b (2024-09) was quantized by a llama-quantize
    from before llama.cpp PR #9935, whose use_more_bits counters walk the file's order: the converter's, shard by
    shard of the 37-file checkpoint, each shard's tensors sorted by name, so block 10's ffn_down (shard 6, with
    block 9's) is the 10th and takes the Q8_0 of the first eighth, block 9's the 11th and Q5_0
    (engines/ollama/weights.py _file_order_quantizer). v0.3.14 deals block i to GPU i % 3: one 86.6 MiB heavier
    block moves from GPU 0 to GPU 1. Before (blocks typed in block order): [18.7 17.0 17.3] GiB."""
    est, _ = _offload_errors(_QWEN25_3GPU)
    assert 'memory.required.allocations="[18.6 GiB 17.1 GiB 17.3 GiB]"' in est.engine_view["ollama_log"]
    mine = est.engine_view["ollama_memory"]["memory.required.allocations"]
    assert [ol.human_bytes2(mine[g]) for g in ("GPU0", "GPU1", "GPU2")] == \
        _load(_QWEN25_3GPU)["printed"]["memory.required.allocations"]


def test_gemma3_0_6_2_kv_graph_and_weights():
    """v0.6.2, 4 automatic slots of 2048: kv 3.0 GiB (every layer charged the full 8192 cells: per-layer SWA sizes
    came with f66216e39 in v0.6.3), graph 519.5 MiB / 1.3 GiB, weights.total = repeating = 6.0 GiB (before 033cec232
    moved the output into the total), nonrepeating 787.5 MiB: exact."""
    _, err = _offload_errors(_GEMMA3_062)
    for field in ("memory.required.kv", "memory.graph.full", "memory.graph.partial", "memory.weights.total",
                  "memory.weights.repeating", "memory.weights.nonrepeating"):
        assert err[field] == 0, (field, err[field])


def test_gemma3_0_6_2_projector_of_the_repos_mmproj():
    """llm/memory.go EstimateGPULayers (v0.6.0-v0.6.x) sums the projector files' figures first and reads
    VisionGraphSize only when both are 0: a GGUF repo's gemma3 runs with the repo's mmproj as a projector layer,
    whose projectorMemoryRequirements is every tensor of the file and no graph (its "clip" architecture is not
    mllama). llama.cpp's gemma3 mmproj at F16 (gemma3_convert_encoder_to_gguf.py: the ".embeddings." tensors and
    the 1-D ones F32, every other matrix F16, mm.input_projection included): 854,175,168 B = 814.6 MiB.
    Before (read as the library tag, VisionGraphSize of its tower): projector.graph 1.0 GiB (+100%),
    projector.weights 795.9 MiB (-2.3%), required.full/partial 12.7 GiB against 11.7 (+8.4%)."""
    est, err = _offload_errors(_GEMMA3_062)
    assert err and all(e == 0 for e in err.values()), err
    assert est.engine_view["ollama_memory"]["projector.weights"] == 854_175_168
    line = _load(_GEMMA3_062)["quoted"].split("\n")[-1]
    assert est.engine_view["ollama_log"] == line[line.index("msg="):]


def _mllama():
    fx = _load(_MLLAMA)
    spec = spec_from_config(fx["config"], name="llama3.2-vision", weight_format="Q4_K_M")
    free = fx["printed"]["memory.available_bytes"][0]
    est = ol.ENGINE.estimate(spec, (Device(id="GPU0", name="GPU", memory_bytes=free, free_bytes=free),),
                             ol.OllamaSettings(num_ctx=2048, library="cuda", engine_version=fx["engine_version"]))
    return fx, est


def test_llama32_vision_mllama():
    """v0.5.11's llm/ggml.go GraphSize mllama branch charges the 32 self-attention layers 2048 cells F16 and the 8
    cross-attention layers 1601 x 4 tiles F32 (656.2 MiB), full = max(4b(2+3e+ehk h+ctx(1+h)), 4b(e+V)) = 258.5
    MiB, partial 669.5 MiB, and llm/memory.go projectorMemoryRequirements the --mmproj file's tensors (1.8 GiB)
    and its mllama graph (2.8 GiB). Before: kv 1.2 GiB (+87%), graph 853.3 MiB (+230% / +27%), weights.total 6.1
    GiB (+11%), no projector, required 8.0 GiB (-29%). After: the whole line as Ollama printed it."""
    fx, est = _mllama()
    mine, p = est.engine_view["ollama_memory"], fx["printed"]
    for field in ("memory.graph.full", "memory.graph.partial", "projector.graph", "projector.weights",
                  "memory.required.full", "memory.weights.total"):
        assert field in mine and abs(mine[field] - p[field + "_bytes"]) <= tl._unit(p[field]), field
    # headsKV x (K + V) x (2 x 32 self-attention layers x 2048 + 4 x 8 cross-attention layers x 1601 x 4): 656.25
    # MiB, which Go's %.1f prints as the even 656.2
    assert mine["memory.required.kv"] == 8 * (128 + 128) * (2 * 32 * 2048 + 4 * 8 * 1601 * 4) == 688_128_000
    line = fx["quoted"].split("\n")[0]
    assert est.engine_view["ollama_log"] == line[line.index("msg="):]


# ---------------------------------------------------------------------------------------------------------------
# llama-server (v0.30+): the --fit dry run's table, the scheduler's reserve

_VEGA6 = "llama3.2-3b-vulkan-vega6-np2-q4kv-0.30.3-llama-server"
_ARC_EMBED = "qwen3-embedding-8b-vulkan-arc-ctx32768-0.30.0-llama-server"


def test_vega6_llama32_breakdown():
    """OLLAMA_CONTEXT_LENGTH=4096, OLLAMA_NUM_PARALLEL=2, OLLAMA_KV_CACHE_TYPE=q4_0, OLLAMA_FLASH_ATTENTION=true on
    a Vulkan iGPU: -c 8192 -np 2 --cache-type-k/v q4_0 --flash-attn on; the breakdown table to the MiB: context 252 =
    28 layers x 8192 cells x 2 x 1024 x 18/32 B."""
    fx = _load(_VEGA6)
    p, s = fx["printed"], fx["settings"]
    gpu = Device(id="Vulkan0", name="AMD Radeon(TM) Vega 6 Graphics", memory_bytes=p["total_mib"] * MiB,
                 free_bytes=p["free_mib"] * MiB, integrated=True)
    est = ol.ENGINE.estimate(resolve("llama3.2:3b", s["weights_quant"]), (gpu,),
                             ol.OllamaSettings(num_ctx=s["num_ctx"], num_parallel=s["num_parallel"],
                                               flash_attention=s["flash_attention"], kv_cache_type=s["kv_cache_type"],
                                               library=s["library"], engine_version=fx["engine_version"]))
    launch = est.engine_view["ollama_launch"].split()
    assert launch[launch.index("-c") + 1] == "8192" and launch[launch.index("-np") + 1] == "2"
    got = {("Vulkan0" if k.startswith("Vulkan0") else k): v for k, v in _table(est.engine_view["memory_breakdown"]).items()}
    assert got == p["breakdown_mib"]


def _arc_embed():
    fx = _load(_ARC_EMBED)
    p, s = fx["printed"], fx["settings"]
    gpu = Device(id="Vulkan0", name="Intel(R) Arc(TM) Graphics", memory_bytes=p["total_mib"] * MiB,
                 free_bytes=p["free_mib"] * MiB, integrated=True)
    est = ol.ENGINE.estimate(resolve("qwen3-embedding:8b", s["weights_quant"]), (gpu,),
                             ol.OllamaSettings(num_ctx=s["num_ctx"], library=s["library"],
                                               engine_version=fx["engine_version"]))
    got = {("Vulkan0" if k.startswith("Vulkan0") else k): v for k, v in _table(est.engine_view["memory_breakdown"]).items()}
    return fx, est, got


def test_arc_qwen3_embedding_kv_cache():
    """llama_kv_cache: 4608.00 MiB = 36 layers x 32768 cells x 2 x 1024 x 2 B, on the iGPU."""
    fx, _, got = _arc_embed()
    assert got["Vulkan0"]["context"] == fx["printed"]["kv_mib"]


def test_arc_qwen3_embedding_batch():
    """An embedding model (its GGUF carries qwen3.pooling_type: Ollama serves it as one, server/images.go
    CapabilityEmbedding) gets --embedding -b 2048 -ub 2048 (llm/llama_server.go appendBatchArgs with
    DefaultEmbeddingNumBatch, v0.30.0+): the log's 'graph splits = 4 (with bs=2048)'. Before: -b 1024 -ub 1024
    (the automatic generation batch) and no --embedding."""
    fx, est, _ = _arc_embed()
    launch = est.engine_view["ollama_launch"].split()
    assert "--embedding" in launch
    assert launch[launch.index("-ub") + 1] == str(fx["printed"]["n_ubatch"])


def test_arc_qwen3_embedding_compute():
    """Vulkan0 480.05 / Vulkan_Host 1830.92 MiB printed (4 graph splits at bs=2048). The lm_head's 2048 x 151665 F32
    logits (1184.9 MiB) exceed the device's maxStorageBufferRange (Intel's Windows driver on Arc: 1073741820,
    KhronosGroup/Vulkan-Profiles#621), so ggml-vulkan's supports_op refuses the product (tensor_size_supported) and
    the scheduler runs it on the CPU with the output weight (Q6_K, 486.0 MiB) and the normed rows copied in
    (compute.py vulkan_refused_logits_bytes, the scheduler replayed). Before: Vulkan0 1251 MiB (+161%), Host 192
    (-90%), the logits on the device; now Vulkan0 480.05 (exact: the split without the logits in
    ggml_vk_graph_optimize's order) and Host 1734.88 (-5.2%: the log's sum also holds the 128 MiB F16 mask, which
    the replay frees after its copy to the device; not traced)."""
    fx, _, got = _arc_embed()
    want = fx["printed"]["compute_mib"]
    assert abs(got["Vulkan0"]["compute"] - want["Vulkan0"]) <= 0.10 * want["Vulkan0"]
    assert abs(got["Host"]["compute"] - want["Vulkan_Host"]) <= 0.10 * want["Vulkan_Host"]


# ---------------------------------------------------------------------------------------------------------------
# embeddinggemma on the Ollama engine (v0.11.10): the per-device lines


_EMBEDDINGGEMMA = "embeddinggemma-300m-cuda-8gib-0.11.10"


def _embeddinggemma():
    fx = _load(_EMBEDDINGGEMMA)
    spec = spec_from_config(fx["config"], name="embeddinggemma", weight_format="BF16")
    gpu = Device(id="CUDA0", name="NVIDIA GPU", memory_bytes=8 * GiB, free_bytes=int(7.5 * GiB))
    # the per-device lines are the new estimates' (OLLAMA_NEW_ESTIMATES=1 before v0.12.0); the CPU compute graph,
    # the input layer's get_rows output (batch x 768 x 4 B = 6.0 MiB), is that of a 2048-token batch (BatchSize)
    est = ol.ENGINE.estimate(spec, (gpu,), ol.OllamaSettings(num_batch=2048, library="cuda",
                                                             env=(("OLLAMA_NEW_ESTIMATES", "1"),),
                                                             engine_version=fx["engine_version"]))
    return fx, est, est.engine_view["ollama_memory"]


def _within(got: int, printed: str) -> bool:
    """format.HumanBytes2: one decimal; within half of the last digit."""
    n, unit = printed.split()
    return abs(got - float(n) * {"GiB": GiB, "MiB": MiB}[unit]) <= tl._unit(printed)


def test_embeddinggemma_cpu_graph():
    fx, _, mine = _embeddinggemma()
    assert _within(mine["compute graph"]["CPU"], fx["printed"]["compute graph"]["CPU"])


def test_embeddinggemma_gpu_graph():
    """CUDA0 "compute graph" 108.0 MiB: Ollama's gemma3_embed graph of v0.11.10 (model/models/gemma3/embed.go:
    batch.Outputs = every position, mean pooling, the dense projections; the causal masks of v0.11.x, made
    bidirectional only in v0.12.7) without flash attention, replayed through ggml-alloc (graph.py
    gemma3_embed_graph_bytes, held to ggml_gallocr_reserve in tests/test_ollama_graph_ggml.py): 113,262,592 B. Its
    peak is a sliding block's attention: the F32 scores of 2560 cells x 2048 tokens x 3 heads (60 MiB, soft_max in
    place) beside the two F32 masks the scheduler copies in (20 + 16 MiB) and the token rows. Before: 33.5 MiB,
    the causal decoder's graph with one output row (-69%), and "total memory" 1.0 GiB against 1.1."""
    fx, _, mine = _embeddinggemma()
    assert _within(mine["compute graph"]["CUDA0"], fx["printed"]["compute graph"]["CUDA0"])
    assert _within(mine["total memory"], fx["printed"]["total memory"])


def test_held_out_logs_are_cited_and_verbatim():
    for path in sorted(FIXTURES.glob("*.json")):
        fx = json.loads(path.read_text())
        assert fx["source"].startswith("https://github.com/ollama/ollama/issues/"), path.name
        p, q = fx["printed"], fx["quoted"]
        for key, value in p.items():
            if key.startswith(("memory.", "projector.")) and isinstance(value, str):
                assert f'{key}="{value}"' in q, (path.name, key)
        for line, devs in ((k, v) for k, v in p.items() if k in ("compute graph",)):
            for dev, printed in devs.items():
                assert f'msg="{line}" device={dev} size="{printed}"' in q, (path.name, line, dev)
        if "breakdown_mib" in p:
            got = {("Vulkan0" if k.startswith("Vulkan0") else k): v for k, v in _table(q).items()}
            assert got == p["breakdown_mib"], path.name
        if "kv_mib" in p:
            assert f"size = {p['kv_mib']:.2f} MiB ( {p['kv_cells']} cells" in q, path.name
            for dev, mib in p["compute_mib"].items():
                assert f"{dev} compute buffer size = {mib:.2f} MiB" in " ".join(q.split()), (path.name, dev)
            assert f"(with bs={p['n_ubatch']})" in q, path.name
