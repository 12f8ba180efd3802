"""Ollama's runner laid out on the devices: the llama.cpp (or llama-server) estimate of the settings Ollama starts
it with, the Ollama engine's own KV cache where that engine runs, Ollama's per-GPU reserve, and Ollama's own
figures (memory.py) next to them in engine_view["ollama_memory"] and ["ollama_vs_runner"]."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from ...flags import Limit, in_range, stoi
from ...memo import ByObject
from ...memory import Device, MemoryEstimate, Usage
from ...model.archs import NO_CACHE_ARCHS
from ...model.spec import ModelSpec
from ...quant import ggml
from ...units import GiB, MiB
from ..llamacpp import ERAS, LlamaCppSettings, compute_phases, kv_caches, resolve_context
from ..llamacpp import estimate as llamacpp_estimate
from ..llamacpp.backends import metal_devices
from ..llamacpp.compute import OP_OFFLOAD_MIN_BATCH, pooling_type
from ..llamacpp.fit import params_fit
from ..llamacpp.kv import Cache
from ..llamacpp.settings import version_warning
from ..llamacpp.weights import gpu_alloc_size
from ..versions import version_str
from .cuda_pool import (
    V_CUDA_POOL_IN_GRAPH,
    V_HIP_CUBLAS_POOL,
    V_HIP_CUBLAS_POOL_END,
    V_HIP_RDNA3_CUBLAS_LAST,
    V_HIP_TILE_RDNA,
    cuda_pool_bytes,
    hip_cublas_pool_bytes,
    hip_gptoss_pool_bytes,
    hip_rdna_dense_pool_bytes,
)
from .graph import (
    GEMMA3_GLOBAL_EVERY,
    gemma3_embed_graph_replayed,
    gemma4_gpu_graph_replayed,
    gemma4_reserve_side,
    glm4moelite_gpu_graph_replayed,
    gptoss_cpu_graph,
    gptoss_graph_replayed,
    gptoss_vulkan_cpu_split,
    gptoss_vulkan_gpu_graph,
    nomicbert_graph_replayed,
    qwen3_gpu_graph_replayed,
)
from .kv import CausalCache, causal_cache, mllama_encoder_cache, recurrent_cache
from .launch import Launch, resolve_launch
from .memory import (
    EraCLayout,
    LayerEstimate,
    OGpu,
    automatic_generation_batch,
    estimate_gpu_layers,
    generation_batch_surcharge,
    graph_size,
    human_bytes2,
    layout_era_c,
    predict_server_vram,
)
from .mlx_runner import estimate_mlx, format_quantization
from .projector import (
    Projector,
    catalog_vision_config,
    llamacpp_mmproj_projector,
    mllama_runner_scores,
    mmproj_projector,
    own_pixtral_graph,
    own_siglip_graph,
    own_vision_graph,
    reserve_image_tokens,
)
from .projector import projector as vision_projector
from .settings import (
    RC_MLLAMA_GRAPH,
    V_BACKEND_LIBRARY_NAMES,
    V_ERA_D,
    V_GO_RUNNER,
    V_GPU_OVERHEAD,
    V_NEW_ESTIMATES,
    V_NEW_ESTIMATES_OPTIN,
    V_OFFLOAD_LOGVALUE,
    V_PARALLEL_AUTO_2,
    V_PER_GPU_ESTIMATE,
    V_PROJECTOR_LAST_LAYER,
    V_PROJECTOR_LOGGED,
    V_VISION_GRAPH,
    V_WEIGHTS_NO_KV,
    OllamaSettings,
    before_candidate,
    runner_build,
)
from .weights import (
    GgufView,
    gguf_view,
    glm4moelite_per_head,
    library_arch,
    llama_server_gguf,
    ollama_gguf,
    per_layer_weights,
    publishers_gguf,
    runner_input_weights,
    runner_largest_tensors,
    runner_layer_weights,
)

V_GPTOSS_GRAPH = (0, 11, 5)  # model/models/gptoss/model.go's blocks as graph.py mirrors them (v0.11.0-4: others)
V_MASK_IN_GRAPH = (0, 12, 7)  # 1c093e97a: the reserve mask cast in the graph again (an F16 input from v0.8.0)
V_MASK_PAD_LAST = (0, 13, 4)  # the last release whose vendored ggml pads the mask batch to 64
V_QWEN3_GRAPH_LAST = (0, 24, 0)  # the last Ollama-engine release checked to build qwen3's graph as v0.13.5 does
V_GLM4MOELITE_MLA = (0, 15, 0)  # 64737330a (#13870): glm4moelite's K/V cached as the MLA latent (weights.py)
V_QWEN25VL_OWN_VISION = (0, 13, 4)  # 971d62595: 2 MP images, the encoder rewritten (graph.py replays it)
V_QWEN25VL_ROTATE_HALF = (0, 13, 0)  # 333203d87: rotateHalf with Slice; v0.13.0-v0.13.3's encoder as graph.py replays it
V_MM_WORST_CASE = (0, 7, 1)  # fe623c2cf: reserveWorstCaseGraph encodes a 2048 x 2048 image into the text batch
V_PIXTRAL_OWN = (0, 13, 0)  # model/models/mistral3 model_vision.go as graph.py replays it (333203d87: Slice)
V_VISION_SDPA = (0, 13, 2)  # 1108d8b34: nn.Attention without a cache goes through ScaledDotProductAttention
V_SIGLIP_OWN = (0, 12, 3)  # model/models/gemma3 model_vision.go as graph.py replays it (ollama/ollama#12303)
V_CONV2D_BIAS = (0, 12, 7)  # 0d140bd1a: nn.Conv2D adds its bias
V_MLLAMA_OLLAMA_ENGINE = (0, 7, 0)  # 23125648b: mllama on the Ollama engine, its encoder inside the model GGUF
# 3475d915c (#13429, v0.13.3 until the runner's removal in v0.30): runner/ollamarunner/runner.go allocModel gives a
# model whose Config().Cache is nil (bert, nomic-bert: no kvcache in model/models) a batch of the whole context
V_NOCACHE_CTX_BATCH = (0, 13, 3)
V_SET_ROWS = (0, 13, 0)  # 53985b3c4: kvcache/causal.go Put writes the cache with SetRows at an I32 cell index input
V_GEMMA3_EMBED = (0, 11, 10)  # 5994e8e8f (#12181): model/models/gemma3/embed.go, gemma3 GGUFs with pooling_type
V_GEMMA3_EMBED_LAST = (0, 11, 11)  # v0.12.0: GELU takes the up rows (ad95d5b30), the outputs a tensor (6f7117145)
FIT_TARGET = 1024 * MiB  # llama.cpp --fit default margin per device (common/fit.cpp); Ollama leaves it unless mmproj
# Architectures Ollama ships with a vision projector it adds to its estimate (projector.weights/graph)
_VISION_ARCHS = {"gemma3", "mistral3", "llama4", "mllama", "qwen25vl", "qwen2vl", "qwen3vl", "qwen3vlmoe", "gemma4"}


@dataclass(frozen=True)
class OllamaEstimate(MemoryEstimate):
    """A MemoryEstimate that also knows whether Ollama put every layer on the GPUs: a model Ollama splits with
    the CPU runs, but does not "fit" (`ollama ps` shows a CPU/GPU split)."""

    full_offload: bool | None = None

    @property
    def fits(self) -> bool | None:
        base = MemoryEstimate.fits.fget(self)
        if base is None:
            return None
        return base and self.full_offload is not False


def _free(d: Device) -> int | None:
    return d.free_bytes if d.free_bytes is not None else d.memory_bytes


_UNKNOWN_FREE = 1 << 50
_CUDA_LIBS = ("cuda", "rocm")  # the GPUs whose buffers ggml-cuda's buffer type allocates (HIP builds the same code)
# the library a device reports from v0.12.4: its ggml backend's registered name
_BACKEND_NAMES = {"cuda": "CUDA", "rocm": "ROCm", "metal": "Metal", "vulkan": "Vulkan", "oneapi": "SYCL"}


def _ogpus(devices: tuple[Device, ...], launch: Launch) -> list[OGpu]:
    # SMs and compute capability: the GPU catalog's, on each Device (hardware/gpus.json); a Radeon's compute units
    # where the Device gives them (sm_count: the HIP pool's model is RDNA's, not an Instinct's CDNA); none for others
    def units(d: Device) -> int:
        if launch.library == "cuda" or launch.library == "rocm" and not _CDNA.search(d.name or ""):
            return d.sm_count or 0
        return 0

    return [OGpu(id=d.id, free=_free(d) if _free(d) is not None else _UNKNOWN_FREE, minimum=launch.minimum,
                 library=launch.library, sms=units(d), cc=d.compute_capability, gfx=d.gfx_target,
                 max_buffer=_vulkan_max_buffer(d) if launch.library == "vulkan" else None)
            for d in devices]


# Mesa's RADV (src/amd/vulkan/radv_physical_device.c: .maxBufferSize = RADV_MAX_MEMORY_ALLOCATION_SIZE, which
# radv_constants.h sets to 0xFFFFFFFC, "our buffer size fields allow only 2**32 - 1"); ggml-vulkan.cpp takes
# max_buffer_size from maxBufferSize (VK_KHR_maintenance4) and refuses a larger buffer in ggml_vk_create_buffer.
# Other drivers' limits are not read here.
RADV_MAX_BUFFER = 0xFFFFFFFC


def _vulkan_max_buffer(d: Device) -> int | None:
    return RADV_MAX_BUFFER if "RADV" in (d.name or "") else None


def _vulkan_buffer_backoff(spec: ModelSpec, g: GgufView, gpus: list[OGpu], lay: EraCLayout, relayout) -> EraCLayout:
    """A layer holding a tensor over a Vulkan GPU's maxBufferSize cannot be allocated there: ggml-alloc gives the
    tensor a buffer of its own (runner_largest_tensors), ggml-vulkan refuses it, ml/backend/ggml New panics with
    ErrNoMem, and llm/server.go ollamaServer.Load (v0.11.5+) answers the failed alloc with a growing backoff
    (backoff += 0.1, each GPU's free memory reserved by that share in buildLayout) until a layout allocates:
    assignLayers drops the output layer first ("prefer offloading layers other than the output layer"), so the
    layer with the big tensor ends on the CPU with whatever else that backoff leaves there. ollama/ollama#15261:
    gemma4:e4b on a Renoir iGPU through RADV, 30.5 GiB available, "offloaded 42/43 layers to GPU" (its 5376 MiB
    per_layer_token_embd on the output layer). Past a backoff of 1 Ollama gives up ("memory layout cannot be
    allocated"); the last layout is kept."""
    if not any(o.max_buffer for o in gpus):
        return lay
    big = runner_largest_tensors(spec, g)

    def refused(lay: EraCLayout) -> bool:
        return any(big[i] > o.max_buffer for o, ls in zip(gpus, lay.per_gpu, strict=True) if o.max_buffer
                   for i in ls if i < len(big))

    backoff = 0.0
    while refused(lay) and backoff <= 1:
        backoff = round(backoff + 0.1, 1)
        lay = relayout(backoff)
    return lay


_CDNA = re.compile(r"instinct|\bmi\d{2,3}", re.IGNORECASE)


def _cuda_pool(spec: ModelSpec, launch: Launch, gpus: list[OGpu], cache: CausalCache, num_parallel: int = 1) -> int:
    """The CUDA pool Ollama counts in each GPU's compute graph from v0.12.4 (cuda_pool.py), for the GPUs whose SMs
    and compute capability are known (0 for the others); on ROCm the HIP build's legacy pool for the gpt-oss graph
    replayed on the GPU (v0.12.6-v0.12.11, flash attention), and for the dense qwen3 graph on an RDNA3 / RDNA4 GPU
    (v0.12.6-v0.13.2, flash attention, the GPU's LLVM target known), for the GPUs whose compute units are known."""
    n_tokens = min(launch.num_batch, launch.num_ctx)
    if launch.library == "rocm" and launch.flash_attention and launch.version >= V_HIP_TILE_RDNA and gpus:
        full = max(cache.cells_by_layer.values(), default=0)
        swa = min(cache.cells_by_layer.values(), default=0)
        if launch.version < V_SET_ROWS:
            pool = max((hip_gptoss_pool_bytes(spec, n_tokens, num_parallel, full, swa, o.sms) or 0
                        for o in gpus if o.sms), default=0)
            if pool:
                return pool
        if (launch.version <= V_HIP_RDNA3_CUBLAS_LAST and launch.runner == "ollama"
                and library_arch(spec) == "qwen3"):
            rdna = [(o, re.fullmatch(r"gfx(1[12])[0-9a-f]{2}", o.gfx or "")) for o in gpus if o.sms]
            return max((hip_rdna_dense_pool_bytes(spec, n_tokens, num_parallel, full, o.sms, m.group(1) == "12")
                        or 0 for o, m in rdna if m), default=0)
        return 0
    if launch.library != "cuda" or launch.version < V_CUDA_POOL_IN_GRAPH:
        return 0
    cells = max(cache.cells_by_layer.values(), default=0)
    mla = _glm4moelite_mla(spec, launch)
    return max((cuda_pool_bytes(spec, n_tokens, launch.flash_attention, o.sms, o.cc, cells, launch.kv_cache_type, mla)
                for o in gpus if o.sms and o.cc), default=0)


# the last release whose vendored ggml-backend.cpp, ggml-alloc.c and ggml-cuda fattn kernels, ml/nn/attention.go,
# kvcache/causal.go and model/models/glm4moelite are v0.15.0's as graph.py glm4moelite_sched_graph and
# cuda_pool.py fattn_mla_meta_bytes read them (v0.20.4 changes fattn.cu and fattn-mma-f16.cuh)
V_GLM4MOELITE_GRAPH_LAST = (0, 20, 3)


def _glm4moelite_mla(spec: ModelSpec, launch: Launch) -> bool:
    """Ollama's own glm4moelite with MLA absorbed and flash attention, in the releases graph.py mirrors."""
    return (launch.runner == "ollama" and launch.flash_attention and library_arch(spec) == "glm4moelite"
            and V_GLM4MOELITE_MLA <= launch.version <= V_GLM4MOELITE_GRAPH_LAST)


def _glm4moelite_graph(spec: ModelSpec, launch: Launch, cache: CausalCache, gpus: list[OGpu], num_parallel: int,
                       on_gpu: set[int] | None = None) -> tuple[int, int] | None:
    """(partial, full) ggml-alloc buffers of one ggml-cuda GPU for Ollama's glm4moelite graph (graph.py
    glm4moelite_gpu_graph_replayed, the scheduler replayed: with blocks left on the CPU their weights are copied in
    one at a time and their cache views read from the GPU), None elsewhere. on_gpu: the layers the layout put on the
    GPU (the output layer is index block_count); None: every block but the last and the output on the CPU, which
    keeps the sparse blocks' expert copies the peak (ollama/ollama#14273: 210.0 MiB with blocks 0-22 and the output
    on the CPU, the largest copy the 157.5 MiB q6_K ffn_down_exps)."""
    if not _glm4moelite_mla(spec, launch) or len(gpus) != 1 or gpus[0].library not in _CUDA_LIBS:
        return None
    n_tokens = min(launch.num_batch, launch.num_ctx)
    cells = max(cache.cells_by_layer.values(), default=0)
    n = spec.n_trunk_layers
    if on_gpu is None:
        host, out_host = frozenset(range(n - 1)), True
    else:
        host, out_host = frozenset(i for i in range(n) if i not in on_gpu), n not in on_gpu
    full = glm4moelite_gpu_graph_replayed(spec, n_tokens, cells, num_parallel, frozenset(), False)
    partial = glm4moelite_gpu_graph_replayed(spec, n_tokens, cells, num_parallel, host, out_host)
    if full is None or partial is None:
        return None
    return partial, full


# The CPU backend's repacking buffer type as Ollama builds ggml: only the cgo builds of v0.5.2-v0.5.7 define
# GGML_USE_CPU_AARCH64 (llama/llama.go CFLAGS, from 527cc9789 "update vendored code to commit 40c6d79f"); the CMake
# build of v0.5.8 on (dcfb7a105) adds ml/backend/ggml/ggml/src without ggml's top-level CMakeLists.txt, so the
# GGML_CPU_AARCH64 / GGML_CPU_REPACK option that ggml-cpu/CMakeLists.txt tests is never set and
# ggml_backend_cpu_get_extra_buffers_type lists no repacking type (the AMX one needs an __AMX_INT8__ build).
# ollama/ollama#11628 (v0.10.x, llama3:8b Q4_0 on the CPU): "CPU_Mapped model buffer size = 4437.80 MiB" and no
# repacked buffer.
V_CPU_REPACK, V_CPU_REPACK_END = (0, 5, 2), (0, 5, 8)
# llm/server.go NewLlamaServer appends --n-gpu-layers only for opts.NumGPU >= 0 from v0.1.32 (the runner command of
# llm/ext_server) until d5a0d8d90 (v0.11.5) moved the layers into the load request
V_NGL_FLAG = (0, 1, 32)
# "For CPU loads we want the memory to be allocated, not FS cache": a load whose GPU list is the CPU, with no
# use_mmap option, gets --no-mmap (v0.11.5+: loadRequest.UseMmap = false), from 17b7186cd ("Enable concurrency by
# default", first in v0.1.49) until the llama runner's removal (9db4bdbad, v0.30.0: llama-server): llm/server.go
# NewLlamaServer `gpus[0].Library == "cpu"` (v0.1.49-v0.11.4), llamaServer.Load the same (v0.11.5-v0.12.6), then
# `len(gpus) == 0` (v0.12.7+). Modelled here: a machine without GPUs. The weights then sit in an allocated "CPU"
# buffer, not the file mapping's "CPU_Mapped". didier-durand/llms-in-clouds docs/openmanus-smollm.md (v0.6.0,
# smollm2:1.7b without a GPU): "--no-mmap", "CPU model buffer size = 1734.38 MiB". A GPU the scheduler lists keeps
# the mapping even where the runner then runs on the CPU (ollama/ollama#7323, #11628: CPU_Mapped). Not modelled:
# the list also becomes the CPU for num_gpu 0 (NewLlamaServer's reset, from v0.11.5 server/sched.go) and, to
# v0.12.10, for an estimate that puts no layer on a GPU other than Metal ("Don't bother loading into the GPU if no
# layers can fit"), where Ollama to v0.5.x starts its CPU-only runner build, a runner this layout does not take
# apart from the GPUs; nor Windows with CUDA, Linux with less free RAM than the estimate, Vulkan (v0.12.6+), a
# partial offload on Metal (v0.1.40+), which need the OS, the free RAM or the final layer count.
V_CPU_NO_MMAP = (0, 1, 49)


def _runner_settings(spec: ModelSpec, launch: Launch, num_parallel: int, n_gpu_layers: int,
                     split: tuple[float, ...]) -> LlamaCppSettings:
    """How Ollama starts its llama.cpp runner before v0.30 (llm/server.go NewLlamaServer -> runner): --ctx-size
    num_ctx*np, --parallel np, --batch-size num_batch, --n-gpu-layers (its own estimate), --tensor-split,
    --flash-attn (from v0.13.4 the load request's auto unless OLLAMA_FLASH_ATTENTION is set: llama.cpp decides),
    --kv-cache-type. The Go runner (llama/llama.go NewContextParams) sets n_batch = batch*parallel,
    n_seq_max = parallel, embeddings = true, and leaves n_ubatch and kv_unified at llama.cpp's defaults. The CPU
    backend repacks weights only in the builds that turn its repacking buffer type on (V_CPU_REPACK)."""
    build = runner_build(launch.version)
    n_batch = launch.num_batch * num_parallel if launch.version >= V_GO_RUNNER else launch.num_batch
    kv = launch.kv_cache_type or "f16"
    return LlamaCppSettings(
        program="llama-server", n_ctx=launch.num_ctx * num_parallel, n_batch=n_batch, n_ubatch=512,
        n_parallel=num_parallel, kv_unified=build < ERAS["kv_streams"],
        cache_type_k=kv, cache_type_v=kv,
        flash_attn="auto" if launch.fa_mode == "auto" else ("on" if launch.flash_attention else "off"),
        n_gpu_layers=n_gpu_layers, tensor_split=split,
        embeddings=True, repack=V_CPU_REPACK <= launch.version < V_CPU_REPACK_END,
        mmap=not (launch.library == "cpu" and V_CPU_NO_MMAP <= launch.version < V_ERA_D),
        engine_version=f"b{build}", fit=False,  # the runner loads as told: no common fit
        server_extra_seq=False,  # its server.cpp copy (llm/ext_server, v0.1.32) loads --parallel sequences, no more
        # Ollama's engine builds its own graph: a mask per cache of its own (kvcache/causal.go buildMask; v0.7.1's
        # SWA cache holds maxSequences x window + maxBatch cells), not the vendored llama.cpp's KQ_mask_swa pair
        llama_graph_masks=launch.runner != "ollama")


# The llama runner's output buffer keeps the logits with embeddings on: the vendored llama.cpp's own rule from
# v0.1.32 (submodule 7593639ce, after PR #6122 de7b41ef9 "greatly reduce output buffer memory usage":
# llama_output_reserve has_logits = cparams.causal_attn), then, once PR #7477 (a895a1b78, "allow pooled embeddings
# on any model": has_logits = !cparams.embeddings) was vendored, Ollama's embeddings patch restoring it
# (llm/patches/07-embeddings.diff from 8f8e736b1, first in v0.1.49; llama/patches/0003-embeddings.patch, deleted by
# 1a19df1f3 in v0.11.5, when the vendored llama.cpp had PR #14208's output_reserve)
V_EMBD_LOGITS, V_EMBD_LOGITS_END = (0, 1, 32), (0, 11, 5)


def _patched_output_buffer(spec: ModelSpec, launch: Launch, ls: LlamaCppSettings,
                           runner: MemoryEstimate) -> MemoryEstimate:
    """The llama runner's output buffer from v0.1.32 to v0.11.4: has_logits = cparams.causal_attn, not upstream's
    !cparams.embeddings of PR #7477 to b5679, so the runner (embeddings on: the --embedding flag, later
    llama/llama.go NewContextParams) reserves the logits and, with no pooling, the embeddings rows too:
    (n_vocab + n_embd) x n_seq_max floats, in the GPU backend's host buffer. likelovewant/ollama-for-amd#63
    (Ollama 0.5.13's code, llama3.1:8b at 4 x 2048): ROCm_Host output buffer 2.02 MiB = (128256 + 4096) x 4 x 4 B;
    run-llama/llama_index#13139 (Ollama 0.1.32 on an M1, llama3:8b): CPU output buffer 0.50 MiB (0.06 /
    0.02 before: the embeddings rows alone)."""
    if not (V_EMBD_LOGITS <= launch.version < V_EMBD_LOGITS_END) or ERAS.reached(runner_build(launch.version),
                                                                              "embd_rework") \
            or pooling_type(spec, ls) != "none" or "output_buffer_bytes" not in runner.engine_view:
        return runner
    size = (spec.n_vocab + spec.n_embd) * max(1, ls.n_parallel) * 4
    delta = size - runner.engine_view["output_buffer_bytes"]
    view = dict(runner.engine_view, output_buffer_bytes=size)
    host = replace(runner.host, overhead_bytes=runner.host.overhead_bytes + delta)
    return replace(runner, host=host, engine_view=view)


def _hip_cublas_pool(spec: ModelSpec, launch: Launch, ls: LlamaCppSettings, runner: MemoryEstimate,
                     devs: tuple[Device, ...]) -> MemoryEstimate:
    """The llama runner's ROCm pool on an RDNA3+ GPU, v0.1.29-v0.1.48 (cuda_pool.py hip_cublas_pool_bytes): what
    the prompt's batches hipMalloc beside the reserved compute buffer, added to each such GPU's compute. A prompt of
    n_ubatch tokens is assumed (the most a batch holds). ollama/ollama#3765 (0.1.32, llama3:70b-instruct-q2_K on
    an RX 7900 XT, 61/81 layers): the run died in "ggml-cuda.cu:233 alloc ... hipMalloc(... look_ahead_size)"."""
    if launch.library != "rocm" or not (V_HIP_CUBLAS_POOL <= launch.version < V_HIP_CUBLAS_POOL_END):
        return runner
    n_tokens = min(ls.n_ubatch, ls.n_batch)
    pools: dict[str, int] = {}
    for d in devs:
        gfx = re.fullmatch(r"gfx(\d+?)(\d[0-9a-f])", d.gfx_target or "")
        if gfx is None or int(gfx.group(1)) < 11:  # cc >= CC_RDNA3 (1100): gfx11xx and later
            continue
        layers = [lu.index for lu in runner.layers if lu.device == d.id and lu.index < len(spec.layers)]
        size = hip_cublas_pool_bytes(spec, sorted(layers), n_tokens, ls.n_ctx)
        if size:
            pools[d.id] = size
    if not pools:
        return runner
    devices = tuple(replace(u, compute_bytes=u.compute_bytes + pools.get(u.id, 0)) for u in runner.devices)
    view = dict(runner.engine_view, hip_pool_bytes=pools)
    return replace(runner, devices=devices, engine_view=view)


# llama/patches/0010-add-mllama-support.patch (v0.4.0-v0.6.8, the llama runner's mllama): llama_kv_cache_init gives
# each cross-attention layer, on its layer's device, an F32 K and V of n_embd_head x 6404 x n_head_kv: the vision
# encoder's 1601 tokens x 4 tiles (+ 4 padding rows), whatever the context or cache type
MLLAMA_CROSS_CELLS = 6404


def _mllama_cross_cache(spec: ModelSpec, runner: MemoryEstimate) -> MemoryEstimate:
    """The llama runner's cross-attention cache of mllama (the self-attention layers' cache is llama.cpp's).
    ollama/ollama#7440 (0.4.0-rc6, x/llama3.2-vision:11b-instruct, 2048 cells): "KV self size = 656.25 MiB" =
    32 x 8 MiB + 8 cross-attention layers x 2 x 128 x 6404 x 8 x 4 B."""
    if spec.architecture != "mllama":
        return runner
    where = {lu.index: lu.device for lu in runner.layers}
    extra: dict[str, int] = {}
    for il, la in enumerate(spec.layers):
        if la.cross_attention and la.attention is not None:
            at = la.attention
            size = (at.head_dim_k + at.head_dim_v) * MLLAMA_CROSS_CELLS * at.n_kv_heads * 4
            dev = where.get(il, runner.host.id)
            extra[dev] = extra.get(dev, 0) + size
    if not extra:
        return runner
    devices = tuple(replace(u, kv_cache_bytes=u.kv_cache_bytes + extra.get(u.id, 0)) for u in runner.devices)
    host = replace(runner.host, kv_cache_bytes=runner.host.kv_cache_bytes + extra.get(runner.host.id, 0))
    kv = dict(runner.engine_view.get("kv_buffer_bytes") or {})
    for dev, size in extra.items():
        name = "CPU" if dev == runner.host.id else dev
        kv[name] = kv.get(name, 0) + size
    return replace(runner, devices=devices, host=host, engine_view=dict(runner.engine_view, kv_buffer_bytes=kv))


def _mllama_projector(spec: ModelSpec, launch: Launch, runner: MemoryEstimate,
                      devs: tuple[Device, ...]) -> MemoryEstimate:
    """The llama runner's mllama projector (--mmproj, v0.4.0-v0.6.x): llama/mllama.cpp mllama_model_load (v0.4.0-rc6
    read) takes ggml_backend_cuda_init(0) (Metal, CANN, Vulkan alike; the CPU only without a GPU backend),
    allocates every tensor of the projector file there (ggml_backend_alloc_ctx_tensors: the file's weights,
    projector.weights in Ollama's log) and reserves the vision graph on it (ggml_gallocr_reserve of
    mllama_image_build_graph, at least a global layer's KQ: projector.mllama_runner_scores). Device 0 is the first
    GPU the runner sees (Ollama's CUDA_VISIBLE_DEVICES lists the GPUs it placed layers on); none without layers
    on a GPU. ollama/ollama#7440: 31/41 layers and the 1.8 GiB projector, CUDA OOM on the 12 GiB card."""
    if spec.architecture != "mllama" or not devs or not runner.devices:
        return runner
    proj = _projector(spec, launch.version)
    if proj is None:
        return runner
    graph = mllama_runner_scores(spec)
    dev = devs[0].id
    usage = tuple(replace(u, weights_bytes=u.weights_bytes + proj.weights, compute_bytes=u.compute_bytes + graph)
                  if u.id == dev else u for u in runner.devices)
    view = dict(runner.engine_view, mllama_projector={"device": dev, "weights": proj.weights, "graph": graph})
    return replace(runner, devices=usage, engine_view=view)


def _host_weight_copy(spec: ModelSpec, gpus: list[OGpu], num_batch: int) -> int:
    """The largest block matrix the runner would copy into a GPU's compute buffer for a block left on the CPU
    (op offload, ggml-backend.cpp ggml_backend_sched_backend_id_from_cur): CUDA, ROCm and Vulkan offload an op of at
    least OP_OFFLOAD_MIN_BATCH rows (Metal only its matrix products, not counted); sized as ggml-cuda allocates it
    (weights.gpu_alloc_size) on CUDA / ROCm. 0 without such a GPU or below the batch."""
    if not gpus or num_batch < OP_OFFLOAD_MIN_BATCH or any(o.library not in (*_CUDA_LIBS, "vulkan") for o in gpus):
        return 0
    cuda = all(o.library in _CUDA_LIBS for o in gpus)
    sizes = [gpu_alloc_size(t) if cuda else t.nbytes for t in spec.weights.tensors
             if t.layer is not None and len(t.shape) >= 2]
    return max(sizes, default=0)


def _split(counts: list[int]) -> tuple[float, ...]:
    return tuple(float(c) for c in counts) if len(counts) > 1 and sum(counts) else ()


def _ollama_engine_kv(spec: ModelSpec, launch: Launch, num_parallel: int) -> CausalCache:
    cache = causal_cache(spec, launch.version, launch.num_ctx, num_parallel, min(launch.num_batch, launch.num_ctx),
                         launch.kv_cache_type or "f16", launch.flash_attention)
    encoder = mllama_encoder_cache(spec)  # the cross-attention layers' encoder cache (kv.py), in each layer's Cache
    if encoder:
        cache = CausalCache({**cache.bytes_by_layer, **encoder}, cache.cells_by_layer)
    state = recurrent_cache(spec, launch.version, num_parallel)  # the recurrent layers' states (kv.py)
    if state:
        cache = CausalCache({**cache.bytes_by_layer, **state}, cache.cells_by_layer)
    return cache


def _replace_kv(est: MemoryEstimate, cache: CausalCache, devices: tuple[Device, ...]) -> MemoryEstimate:
    """Swap llama.cpp's KV for the Ollama engine's own (kvcache/causal.go), layer by layer on the same device; a
    recurrent layer's entry is its states with their checkpoints (kv.py recurrent_cache), which replace llama.cpp's
    recurrent state."""
    by_dev: dict[str, int] = {}
    rs_dev: dict[str, int] = {}
    layers = []
    state_layers = {lu.index for lu in est.layers if lu.recurrent_bytes} & set(cache.bytes_by_layer)
    for lu in est.layers:
        b = cache.bytes_by_layer.get(lu.index, 0)
        if lu.index in state_layers:
            rs_dev[lu.device] = rs_dev.get(lu.device, 0) + b
            layers.append(replace(lu, kv_bytes=0, recurrent_bytes=b))
            continue
        by_dev[lu.device] = by_dev.get(lu.device, 0) + b
        layers.append(replace(lu, kv_bytes=b, cells=cache.cells_by_layer.get(lu.index, lu.cells)))
    devs = tuple(replace(u, kv_cache_bytes=by_dev.get(u.id, 0),
                         **({"recurrent_state_bytes": rs_dev.get(u.id, 0)} if state_layers else {}))
                 for u in est.devices)
    host = replace(est.host, kv_cache_bytes=by_dev.get("CPU", 0),
                   **({"recurrent_state_bytes": rs_dev.get("CPU", 0)} if state_layers else {}))
    view = dict(est.engine_view)
    view["kv_buffer_bytes"] = {k: v for k, v in by_dev.items() if v}
    if state_layers:
        view["rs_buffer_bytes"] = {k: v for k, v in rs_dev.items() if v}
    total = sum(b for i, b in cache.bytes_by_layer.items() if i not in state_layers)
    view["k_bytes"] = view["v_bytes"] = None
    view["kv_bytes_total"] = total
    cells = sorted(set(cache.cells_by_layer.values()))
    view["kv_caches"] = [{"name": "causal", "cells": c,
                          "layers": sum(1 for x in cache.cells_by_layer.values() if x == c),
                          "bytes": sum(cache.bytes_by_layer[i] for i, x in cache.cells_by_layer.items() if x == c)}
                         for c in cells]
    view["swa_kv_bytes"] = sum(b for i, b in cache.bytes_by_layer.items()
                               if cache.cells_by_layer.get(i, max(cells, default=0)) != max(cells, default=0))
    return replace(est, devices=devs, host=host, layers=tuple(layers), engine_view=view)


# the fits decided so far, by the spec object (kept, so that its id is not reused) and the other arguments: a plan
# estimates one command on one machine several times (the option, its own command, the largest context's tries)
_FITS = ByObject[tuple[LlamaCppSettings, bool]](1024)


def _fit_llama_server(spec: ModelSpec, devs: tuple[Device, ...], ls: LlamaCppSettings,
                      margin: int) -> tuple[LlamaCppSettings, bool]:
    """_fit_llama_server_once, memoised (the arguments are frozen)."""
    return _FITS.get(spec, (devs, ls, margin), lambda: _fit_llama_server_once(spec, devs, ls, margin))


def _fit_llama_server_once(spec: ModelSpec, devs: tuple[Device, ...], ls: LlamaCppSettings,
                           margin: int) -> tuple[LlamaCppSettings, bool]:
    """llama-server --fit with no -ngl: llama.cpp's own fit (llamacpp/fit.py params_fit, common/fit.cpp
    common_params_fit_impl) on the command startLlamaServer builds. -c is typed, so the fit keeps the context
    and moves MoE expert tensors, then whole layers, to the CPU until every device keeps `margin` free.
    -> (the settings it loads, with the fit off; whether everything stayed on the GPUs)."""
    if not devs or any(d.memory_bytes is None for d in devs):
        return ls, True
    r = params_fit(spec, devs, replace(ls, fit=True, fit_target=(margin // MiB,)))
    if r.status != "fitted":  # unchanged, or refused: loaded as built
        return ls, True
    return replace(r.settings, fit=False), False


def estimate(spec: ModelSpec, devices: tuple[Device, ...], s: OllamaSettings) -> MemoryEstimate:
    if (mlx_quant := format_quantization(spec.weights.format)) is not None:
        # an MLX library tag ("-nvfp4", "-mxfp8"): server/sched.go starts x/mlxrunner, not a GGUF runner
        return estimate_mlx(spec, devices, s, mlx_quant)
    spec = ollama_gguf(spec)
    g = gguf_view(spec)
    # discover/gpu_darwin.go: an Apple GPU's memory is Metal's recommendedMaxWorkingSetSize, not the RAM
    devices = metal_devices(devices)
    launch = resolve_launch(spec, g, devices, s)
    if library_arch(spec) == "glm4moelite" and launch.version < V_GLM4MOELITE_MLA:
        spec = glm4moelite_per_head(spec)
        g = gguf_view(spec)
    if launch.era == "D":
        spec = llama_server_gguf(spec)
        return _estimate_llama_server(spec, gguf_view(spec), devices, s, launch)
    return _estimate_eras_abc(spec, g, devices, s, launch)


def _estimate_eras_abc(spec: ModelSpec, g: GgufView, devices: tuple[Device, ...], s: OllamaSettings,
                       launch: Launch) -> MemoryEstimate:
    v = launch.version
    gpus = _ogpus(devices, launch)
    num_gpu = s.num_gpu
    unknown = any(d.memory_bytes is None for d in devices)
    if unknown and devices:
        launch.labels.append("GPU memory unknown: Ollama's own layout assumed to offload every layer")
    # parallel slots and the GPUs used: server/sched.go pickBestFullFitByLibrary (before v0.12.11; the era C
    # layout packs onto as few GPUs as possible by itself): a single GPU first, largest free memory first,
    # unless OLLAMA_SCHED_SPREAD; then all; automatic parallel tries defaultParallel, then 1.
    default_parallel = 2 if v >= V_PARALLEL_AUTO_2 else 4
    tries = [launch.num_parallel] if launch.num_parallel > 0 else [default_parallel, 1]
    order = sorted(range(len(gpus)), key=lambda i: -gpus[i].free)

    def full_fit(idx: list[int], p: int) -> bool:
        est = _own_estimate(spec, g, launch, [gpus[i] for i in idx], p, num_gpu)
        want = g.block_count + 1 if num_gpu < 0 else num_gpu
        return est["layers"] > 0 and est["layers"] >= want

    chosen: tuple[list[int], int] | None = None
    singles = [[i] for i in order] if launch.era != "C" and not launch.sched_spread and len(order) > 1 else []
    for p in tries:
        for idx in singles:
            if full_fit(idx, p):
                chosen = (idx, p)
                break
        if chosen:
            break
    if chosen is None and gpus:
        for p in tries:
            if full_fit(order, p):
                chosen = (order, p)
                break
    if chosen is None:
        # no full fit anywhere: pickBestPartialFitByLibrary sets parallel 1 (CPU only: defaultParallel) and keeps
        # the GPUs in their discovery order
        p = tries[-1] if gpus else tries[0]
        chosen = (list(range(len(gpus))), p)
    used_idx, num_parallel = chosen
    used_gpus = [gpus[i] for i in used_idx]
    own = _own_estimate(spec, g, launch, used_gpus, num_parallel, num_gpu)

    # the runner, with the layers Ollama decided (a GPU that got no layer holds nothing)
    if gpus and own["layers"] and len(used_idx) > 1 and own["split"]:  # none before v0.1.45: llama.cpp's own split
        kept = [(i, c) for i, c in zip(used_idx, own["split"], strict=True) if c > 0]
        used_idx, own["split"] = [i for i, _ in kept], [c for _, c in kept]
    used_devs = tuple(devices[i] for i in used_idx)
    counts = own["split"]
    own["runner_layers"] = _runner_layers(own, g, num_gpu)
    if launch.runner == "ollama" and not launch.new_estimates:
        own["fields"]["model weights"] = _engine_weights(spec, g, launch, used_devs,
                                                         own["runner_layers"] if used_devs else 0, counts)
    ls = _runner_settings(spec, launch, num_parallel, own["runner_layers"] if used_devs else 0, _split(counts))
    runner = llamacpp_estimate(spec, used_devs, ls)
    if launch.runner == "ollama":
        runner = _replace_kv(runner, _ollama_engine_kv(spec, launch, num_parallel), used_devs)
        runner = _siglip_reserve(spec, launch, runner, used_devs, own["runner_layers"], g.block_count)
        runner = _engine_host_graph(spec, launch, runner, used_devs, own["runner_layers"], g)
        runner = _encoder_graph(spec, _reserve_batch(spec, launch), runner, used_devs, own["runner_layers"],
                                g.block_count)
    elif launch.runner == "llama":
        runner = _patched_output_buffer(spec, launch, ls, runner)
        runner = _hip_cublas_pool(spec, launch, ls, runner, used_devs)
        runner = _mllama_cross_cache(spec, runner)
        runner = _mllama_projector(spec, launch, runner, used_devs)
    return _finish(spec, g, devices, used_idx, s, launch, num_parallel, runner, own, ls)


def _siglip_reserve(spec: ModelSpec, launch: Launch, runner: MemoryEstimate, devs: tuple[Device, ...],
                    n_gpu_layers: int, blocks: int) -> MemoryEstimate:
    """The runner's graph on the GPU that holds gemma3's vision tower (v0.7.1 on).
    runner/ollamarunner/runner.go reserveWorstCaseGraph (fe623c2cf, v0.7.1) encodes a 2048 x 2048 image:
    mmStore.getMultimodal(..., reserve=true) reserves the SigLIP encoder's graph on the same scheduler before the
    text batch's, and ggml-alloc keeps the larger buffer. The tower goes with the output layer (ml/backend/ggml
    New), so with every layer offloaded the last GPU's buffer is the larger of the two; model/models/gemma3
    model_vision.go and ml/nn/attention.go's cache-less branch are v0.12.3's (graph.py siglip_vision_graph) from
    v0.7.1 but for the order of two Forward calls, the conv bias from v0.12.7 and the flash branch from v0.13.2.
    take0a/mcp docs/ollama.md (v0.9.6, gemma3:27b on a Radeon 780M): "compute graph" backend=ROCm0 1.1 GiB, the
    text batch's 565.0 MiB (memory.graph.full) below it."""
    if launch.version < V_MM_WORST_CASE or not devs or n_gpu_layers < blocks + 1 \
            or "compute_buffer_bytes" not in runner.engine_view:
        return runner
    v = launch.version
    vision = own_siglip_graph(spec, True, launch.flash_attention and v >= V_VISION_SDPA, v >= V_CONV2D_BIAS)
    dev = devs[-1].id
    compute = dict(runner.engine_view["compute_buffer_bytes"])
    if vision is None or vision <= compute.get(dev, 0):
        return runner
    delta = vision - compute.get(dev, 0)
    compute[dev] = vision
    usage = tuple(replace(u, compute_bytes=u.compute_bytes + delta) if u.id == dev else u for u in runner.devices)
    return replace(runner, devices=usage, engine_view=dict(runner.engine_view, compute_buffer_bytes=compute))


def _encoder_graph(spec: ModelSpec, launch: Launch, runner: MemoryEstimate, devs: tuple[Device, ...],
                   n_gpu_layers: int, blocks: int) -> MemoryEstimate:
    """The runner's compute buffer for a cache-less encoder the Ollama engine replays (graph.py
    nomicbert_graph_bytes, v0.13.2+): on the CPU without GPUs, else on the GPU holding every layer; its batch is
    the whole context from v0.13.3 (_reserve_batch), which llama.cpp's graph at n_ubatch does not see."""
    if launch.runner != "ollama" or launch.version < V_VISION_SDPA or "compute_buffer_bytes" not in runner.engine_view:
        return runner
    if devs and n_gpu_layers < blocks + 1:
        return runner
    own = nomicbert_graph_replayed(spec, min(launch.num_batch, launch.num_ctx), on_cpu=not devs)
    if own is None:
        return runner
    compute = dict(runner.engine_view["compute_buffer_bytes"])
    view = dict(runner.engine_view, compute_buffer_bytes=compute)
    if not devs:
        compute["CPU"] = own
        host = replace(runner.host, compute_bytes=runner.host.compute_bytes - runner.engine_view[
            "compute_buffer_bytes"].get("CPU", 0) + own)
        return replace(runner, host=host, engine_view=view)
    dev = devs[-1].id
    delta = own - compute.get(dev, 0)
    compute[dev] = own
    usage = tuple(replace(u, compute_bytes=u.compute_bytes + delta) if u.id == dev else u for u in runner.devices)
    return replace(runner, devices=usage, engine_view=view)


def _engine_host_graph(spec: ModelSpec, launch: Launch, runner: MemoryEstimate, devs: tuple[Device, ...],
                       n_gpu_layers: int, g: GgufView) -> MemoryEstimate:
    """The Ollama engine's CPU compute buffer with every layer on the GPUs, where the scheduler's old estimate
    decided (v0.7.1 until the measured layout): ml/backend/ggml New (v0.7.1-v0.11.5 at least) gives the scheduler
    the CPU backend with the CPU's own buffer type and no op offload (ggml_backend_sched_new(..., op_offload false)), so the CPU computes only the
    input layer's token_embd get_rows, num_batch x n_embd F32 (the scale after it in place), and there is no
    llama.cpp <GPU>_Host compute buffer. take0a/mcp docs/ollama.md (v0.9.6, gemma3:27b on a Radeon 780M):
    "compute graph" backend=CPU buffer_type=CPU 10.5 MiB = 512 x 5376 x 4 (it was llama.cpp's ROCm_Host 26.51 MiB);
    the same rule as _add_input_layer's for the measured layout."""
    if launch.new_estimates or launch.version < V_MM_WORST_CASE or not devs or n_gpu_layers < g.block_count + 1 \
            or "compute_buffer_bytes" not in runner.engine_view:
        return runner
    compute = dict(runner.engine_view["compute_buffer_bytes"])
    removed = sum(compute.pop(k) for k in [k for k in compute if k == "CPU" or k.endswith("_Host")])
    rows = _reserve_batch(spec, launch).num_batch * g.embedding * 4
    compute["CPU"] = rows
    host = replace(runner.host, compute_bytes=max(0, runner.host.compute_bytes - removed) + rows)
    return replace(runner, host=host, engine_view=dict(runner.engine_view, compute_buffer_bytes=compute))


# 1a19df1f3 (v0.11.5, the ggml update that brought add_id): ml/backend/ggml New creates BF16 `*_exps.bias` as F32
V_F32_EXPS_BIAS = (0, 11, 5)


def _engine_weights(spec: ModelSpec, g: GgufView, launch: Launch, devs: tuple[Device, ...], n_gpu_layers: int,
                    counts: list[int]) -> dict[str, int]:
    """The Ollama engine's "model weights" buffers where the scheduler's old estimate decided (v0.6.0 to its
    measured layout): ml/backend/ggml/ggml.go New (v0.7.1) creates the inputs (token_embd, position_embd) in the
    CPU's buffer type, gives the GPUs the last --n-gpu-layers of blocks 0..N (gpuRangeStart = blocks - NumGPULayers;
    the output layer is N) in --tensor-split's proportions (assignLayer), the CPU the rest, and the vision tower's
    v.* and mm.* to the output layer's device; it maps no file, so the CPU buffer holds only those.
    ollama/ollama#10833 (v0.7.1, mistral-small3.1:24b, 40 of 41 layers): "model weights" buffer=CUDA0 12.7 GiB,
    buffer=CPU 1.7 GiB (token_embd, output and the vision tower)."""
    blocks = g.block_count
    proj = _projector(spec, launch.version)
    f32_bias = launch.version >= V_F32_EXPS_BIAS
    cpu_w = runner_layer_weights(spec, g, f32_exps_bias=f32_bias)
    gpu_w = runner_layer_weights(spec, g, cuda=True, f32_exps_bias=f32_bias) if launch.library in _CUDA_LIBS \
        else cpu_w
    if proj is not None:
        cpu_w[-1] += proj.allocated
        gpu_w[-1] += proj.allocated_on(cuda=launch.library in _CUDA_LIBS)
    out = {"CPU": sum(g.groups.get(k, 0) for k in _INPUT_GROUPS)
           + (proj.input_weights if proj is not None else runner_input_weights(spec))}
    start = max(0, blocks - n_gpu_layers)
    stop = min(start + n_gpu_layers, blocks + 1)
    shares = counts if len(devs) > 1 and sum(counts) else [1] * len(devs)
    bounds = [sum(shares[:j + 1]) / sum(shares) for j in range(len(shares))] if devs else []
    for i in range(blocks + 1):
        j = next((j for j, b in enumerate(bounds) if (i - start) / max(1, stop - start) < b), None) \
            if start <= i < stop else None
        dev = "CPU" if j is None else devs[j].id
        out[dev] = out.get(dev, 0) + (cpu_w[i] if j is None else gpu_w[i])
    return {d: b for d, b in out.items() if b}


def _runner_layers(own: dict[str, Any], g: GgufView, num_gpu: int) -> int:
    """The layers the runner is told to offload. Where llm/memory.go EstimateGPULayers decided (to v0.12.10; the
    llama.cpp runner's estimate in v0.11.5-v0.12.10) Ollama replaces num_gpu by its estimate's count only when it
    is -1: llm/server.go NewLlamaServer (v0.9.3: `case opts.NumGPU < 0 && estimate.Layers > 0 ...: opts.NumGPU =
    estimate.Layers`; llamaServer.Load from v0.11.5, the same switch) passes an explicit N as given (--n-gpu-layers
    N, or createGPULayers(estimate, ..., NumGPU) from v0.11.5) with the estimate's own layer counts as the tensor
    split, so the runner puts min(N, block_count + 1) layers on the GPUs in those proportions (llama.cpp's
    tensor_split; ml/backend/ggml New and createGPULayers: gpuRangeStop = min(start + N, blocks + 1)) even where
    the estimate stopped short of N. Where createLayout decided (the Ollama engine from v0.11.5 with its new
    estimates, every runner from v0.12.11) assignLayers already lays out N, forced past the free memory
    (findBestFit: "pretend we have almost infinite VRAM"). No layer when Ollama's estimate fits none: it then
    starts the runner on the CPU (`estimate.Layers == 0`: gpus = discover.GetCPUInfo())."""
    layers = own["layers"]
    if "requested" in own and num_gpu > 0 and layers:
        return min(num_gpu, g.block_count + 1)
    return layers


def _reserve_batch(spec: ModelSpec, launch: Launch) -> Launch:
    """The launch with the text batch the runner reserves its graph on. runner/ollamarunner/runner.go
    reserveWorstCaseGraph (v0.7.1+, fe623c2cf) puts the 2048 x 2048 image's inputs in the batch, and where an
    input's 1 + SameBatch exceeds the batch size it keeps `inputs[i:min(i+minBatch, len(inputs))]`: a batch
    larger than num_batch. Qwen2.5-VL's image token carries SameBatch = tokensPerGrid (model/models/qwen25vl
    PostTokenize, v0.7.1+), so the reserve batch is tokensPerGrid + 1 (the image token, its placeholders and the
    vision end token): 1226 tokens at v0.7.1-v0.13.3, 2602 from v0.13.4. Its graph, the CPU's token rows and the
    CUDA pool's attention scratch are sized on it; the cache (kvcache Init's maxBatch) keeps num_batch.
    gemma3 (256 + 4) and mistral3 (one row of patches) stay under 512; qwen3vl is not modelled here.
    A model without a cache (an encoder: the architectures in NO_CACHE_ARCHS) has its batch raised to the
    context from v0.13.3 (allocModel: `if s.batchSize < kvSize { s.batchSize = kvSize }`, "setting batch size
    to context length"), so its graph is reserved on num_ctx tokens while the load request still says 512."""
    if launch.runner != "ollama" or launch.version < V_MM_WORST_CASE:
        return launch
    if launch.version >= V_NOCACHE_CTX_BATCH and spec.architecture in NO_CACHE_ARCHS:
        kv_size = launch.num_ctx * max(launch.num_parallel, 1)
        return replace(launch, num_batch=kv_size) if launch.num_batch < kv_size else launch
    tokens = reserve_image_tokens(spec, launch.version < V_QWEN25VL_OWN_VISION)
    if tokens is None or tokens + 1 <= launch.num_batch:
        return launch
    return replace(launch, num_batch=tokens + 1)


def _own_estimate(spec: ModelSpec, g: GgufView, launch: Launch, gpus: list[OGpu], num_parallel: int,
                  num_gpu: int) -> dict[str, Any]:
    """Ollama's own figures for one candidate placement -> {layers, split (per GPU), fields (its log), vram,
    total, kv, weights, graph}."""
    v = launch.version
    kvct = launch.kv_cache_type
    if launch.runner == "ollama" and launch.new_estimates:
        # eras B/C, Ollama engine: laid out from the runner's real allocations. llm/server.go ollamaServer.Load
        # (v0.11.5+, opt-in OLLAMA_NEW_ESTIMATES until v0.12.0) sends a fit request, reads back the runner's
        # BackendMemory (per-layer weights and cache, the graph per device: ml/backend/ggml Context.Reserve) and
        # reruns createLayout on it, retrying with fewer layers (and a growing backoff after a failed alloc)
        # until the layout stops changing; the layout here is that fixed point, computed once from the sizes
        # the runner would report: per-layer weights + its KV cache (kvcache/causal.go), the graph below
        cache = _ollama_engine_kv(spec, launch, num_parallel)
        sized = launch  # the scheduler's own estimate (era B) and the cache keep the runner's batch size
        launch = _reserve_batch(spec, launch)
        layer_w = runner_layer_weights(spec, g)
        # a CUDA or ROCm GPU's blocks as ggml-cuda's buffer type sizes them (quantized rows padded), the CPU's plain
        gpu_w = runner_layer_weights(spec, g, cuda=True) if any(o.library in _CUDA_LIBS for o in gpus) else None
        proj = _projector(spec, v)
        if proj is not None:
            # ml/backend/ggml/ggml.go New: the vision tower's v.* and mm.* tensors are created on the output layer's
            # device (ollama/ollama#11090: mistral3 Q8_0 "model weights" 11.5 + 11.9 GiB on the GPUs = the text
            # layers' 22.7 GiB + the 769.3 MiB encoder + the 68.0 MiB projector)
            layer_w[-1] += proj.allocated
            if gpu_w is not None:
                gpu_w[-1] += proj.allocated_on(cuda=True)
        layer_c = [cache.bytes_by_layer.get(i, 0) for i in range(g.block_count)] + [0]
        ls = _runner_settings(spec, launch, num_parallel, -1, ())
        ctx = resolve_context(spec, ls)
        # runner/ollamarunner/runner.go reserveWorstCaseGraph (v0.7.0+): a full batch of num_batch tokens with
        # batch.Outputs = `parallel` rows, so the logits are parallel x n_vocab, not one row a token; the masks
        # span the engine's own cache cells (kvcache/causal.go: the SWA layers keep their SWA memory size)
        if launch.num_batch > sized.num_batch:  # the reserve's text batch (_reserve_batch) in the graph
            ctx = replace(ctx, n_ubatch=launch.num_batch, n_batch=max(ctx.n_batch, launch.num_batch))
        phases = compute_phases(spec, ctx, _engine_caches(kv_caches(spec, ctx, False), cache),
                                n_outputs=num_parallel)
        graph = max(phases.attention, phases.output)
        own = _own_graph(spec, launch, cache, gpus, num_parallel)
        if own is not None:
            graph = own
        # With layers left on the CPU the scheduler offloads their ops to the GPU (op_offload, _add_input_layer)
        # and copies what they read from CPU buffers into the GPU's compute buffer: beside the worst layer's
        # attention that is its K and V cache views (ggml_backend_sched split inputs; the cache buffers are not
        # weights, so the attention itself is not pinned to the CPU). ollama/ollama#12913 (gpt-oss:20b, 14 of 24
        # blocks on the CPU, 131072 cells): Vulkan0 "16.6 GiB" = the 16 GiB of KQ scores and the rest of the batch
        # + 2 x 128 MiB of one full layer's K and V (16941.88 MiB); gpt-oss on Vulkan is sized as Ollama's own
        # scheduler places it (_vulkan_gptoss: block 0's scores under the full layers', 16988.27 MiB)
        partial = graph + max(layer_c, default=0)
        copy = _host_weight_copy(spec, gpus, launch.num_batch)
        if copy:
            # ml/backend/ggml/ggml.go New: ggml_backend_sched_new_ext(..., parallel false, op_offload true, ...)
            # (v0.23.2 read): a block left on the CPU has its matrix products run on the GPU once the batch reaches
            # 32 rows (ggml-cuda / Vulkan offload_op), its weight copied into the GPU's compute buffer as a split
            # input, one weight a split (llamacpp compute.host_weight_copy); the copy sits beside the FFN's
            # workspace, after the attention's buffers are freed
            partial = max(partial, phases.ffn + copy)
        vk = _vulkan_gptoss(spec, launch, cache, gpus, partial, graph)
        if vk is not None:
            partial, graph = vk
        glm = _glm4moelite_graph(spec, launch, cache, gpus, num_parallel)
        if glm is not None:
            partial, graph = glm
        cpu_graph = graph
        if proj is not None:
            # runner/ollamarunner multimodal.go getTensor: the vision encoder's graph for a 2048 x 2048 image is
            # reserved on the same scheduler (computeCtx.Reserve) before the text batch, and ggml-alloc keeps the
            # larger buffer; VisionGraphSize (fs/ggml) stands in for that graph, Ollama's own Qwen2.5-VL encoder
            # is replayed from v0.13.4 (its inputs copied into a GPU's buffer, in buffers of their own on the CPU),
            # v0.13.0-v0.13.3's rotate-half encoder on the 1 MP image (graph.py
            # qwen25vl_rotate_half_vision_graph_bytes), and gemma4's (v0.20.0+, with flash attention; graph.py gemma4_vision_graph_bytes)
            # Pixtral's (mistral3, v0.13.0+): nn.Attention computes its scores by hand before v0.13.2; from it
            # (1108d8b34) cache-less attention goes through ScaledDotProductAttention, its flash branch with
            # flash attention on (no scores), the same scores by hand without
            fa = launch.flash_attention
            old_vl = V_QWEN25VL_ROTATE_HALF <= v < V_QWEN25VL_OWN_VISION
            own_gpu = own_vision_graph(spec, True, fa, old_vl) if v >= V_QWEN25VL_ROTATE_HALF else None
            own_cpu = own_vision_graph(spec, False, fa, old_vl) if own_gpu is not None else None
            own_partial = None
            if own_gpu is None and v >= V_PIXTRAL_OWN:
                flash = fa and v >= V_VISION_SDPA
                own_gpu = own_pixtral_graph(spec, True, flash)
                own_cpu = own_pixtral_graph(spec, False, flash) if own_gpu is not None else None
                # a partial offload leaves the output layer, and with it the tower (ml/backend/ggml New), on the
                # CPU: the encoder's host weights are copied into the GPU's buffer split by split (#13303's
                # alloc with Layers 37(3..39) of 41: 9668469760 B, projector.py own_pixtral_graph)
                own_partial = own_pixtral_graph(spec, True, flash, weights_on_host=True) if own_gpu else None
            # gemma3's SigLIP encoder (v0.12.3+; its patch convolution's bias from v0.12.7, 0d140bd1a), the same
            # cache-less attention as Pixtral's
            if own_gpu is None and v >= V_SIGLIP_OWN:
                flash, bias = fa and v >= V_VISION_SDPA, v >= V_CONV2D_BIAS
                own_gpu = own_siglip_graph(spec, True, flash, bias)
                own_cpu = own_siglip_graph(spec, False, flash, bias) if own_gpu is not None else None
            vis_gpu = proj.graph if own_gpu is None else own_gpu
            vis_cpu = proj.graph if own_gpu is None else own_cpu or 0
            vis_partial = max(vis_gpu, own_partial or 0)
            graph, partial, cpu_graph = max(graph, vis_gpu), max(partial, vis_partial), max(graph, vis_cpu)
        # a CUDA GPU's graph also holds its backend's scratch pool (v0.12.4+, cuda_pool.py); the CPU's does not
        pool = _cuda_pool(spec, launch, gpus, cache, num_parallel)
        lay = layout_era_c(gpu_w or layer_w, layer_c, gpus, partial + pool, graph + pool, launch.gpu_overhead,
                           num_gpu, cpu_weights=layer_w)
        for _ in range(3 if glm is not None else 0):
            # llm/server.go createLayout reruns on the graph the runner reserved for the layout it was sent: the
            # host blocks' copies are the graph's, so it is sized again for the blocks this layout leaves on the CPU
            on_gpu = {i for ls in lay.per_gpu for i in ls}
            if not on_gpu or len(on_gpu) >= g.block_count + 1:
                break
            actual = _glm4moelite_graph(spec, launch, cache, gpus, num_parallel, on_gpu)
            if actual is None or actual[0] == partial:
                break
            partial = actual[0]
            lay = layout_era_c(gpu_w or layer_w, layer_c, gpus, partial + pool, graph + pool, launch.gpu_overhead,
                               num_gpu, cpu_weights=layer_w)
        lay = _vulkan_buffer_backoff(
            spec, g, gpus, lay, lambda b: layout_era_c(gpu_w or layer_w, layer_c, gpus, partial + pool, graph + pool,
                                                       launch.gpu_overhead, num_gpu, cpu_weights=layer_w, backoff=b))
        cpu_split = max(_cpu_split(spec, launch, lay, gpus, g.block_count),
                        _cpu_flash_attention(spec, launch, cache, gpus),
                        _cpu_per_layer_rows(spec, launch, lay, g.block_count))
        _add_input_layer(lay, g, launch.num_batch, cpu_graph, cpu_split,
                         proj.input_weights if proj is not None else runner_input_weights(spec))
        out = _era_c_result(lay, gpus, g, measured=True)
        out["vision_counted"] = proj is not None
        if launch.era == "B":
            # the scheduler still sizes the load with llm/memory.go (server/sched.go PredictServerFit) and logs
            # its msg=offload line next to the runner's measured figures
            old = _era_a_result(g, sized, gpus, num_parallel, num_gpu, _projector(spec, v))
            out["fields"] = {**old["fields"], **out["fields"]}
            out["log"] = old["log"] + "\n" + out["log"]
        return out
    gr_kw = dict(num_ctx=launch.num_ctx, num_batch=launch.num_batch, num_parallel=num_parallel, kvct=kvct,
                 flash_attention=launch.flash_attention)
    if launch.era == "C":
        gr = graph_size(g, v, **gr_kw)
        layer_w = per_layer_weights(g)
        layer_c = [*gr.kv, 0]
        partial, full = gr.partial, gr.full
        if gpus and gpus[0].library == "metal":
            partial = full
        buffer = (g.blk_sizes[0] if g.blk_sizes else 0) + (gr.kv[0] if gr.kv else 0)
        lay = layout_era_c(layer_w, layer_c, gpus, partial, full, launch.gpu_overhead, num_gpu, buffer=buffer)
        lay.gr = gr
        return _era_c_result(lay, gpus, g, measured=False)
    return _era_a_result(g, launch, gpus, num_parallel, num_gpu, _projector(spec, v))


def _own_graph(spec: ModelSpec, launch: Launch, cache: CausalCache, gpus: list[OGpu], num_parallel: int = 1
               ) -> int | None:
    """The Ollama engine's own graph (graph.py) where it is mirrored: gpt-oss with flash attention, the whole
    graph on the CPU (no GPU), v0.11.5-v0.13.4 (the block code of v0.11.5-v0.13.2 and the 64-row mask padding),
    and on a GPU v0.11.5-v0.12.11 (replayed, the split inputs copied in; the blocks and cache writes change in
    v0.13.0);
    dense qwen3 with flash attention on a GPU, v0.12.4-v0.13.4 (model/models/qwen3 alike but for its RoPE
    helper; the reserve mask an F16 input before v0.12.7, an f32 input cast in the graph after; the cache
    written with SetRows from v0.13.0), and without flash attention v0.12.0-v0.12.6 on the GPU or the CPU (held
    to ollama/ollama#13343's and #13085's printed graphs), replayed through ggml-alloc; None elsewhere (the
    llama.cpp graph with Ollama's output rows and cells stands in). EmbeddingGemma without flash attention,
    v0.11.10-v0.11.11, on the GPU or the CPU (held to ollama/ollama#12247's printed CUDA0 graph)."""
    if not launch.flash_attention and V_GEMMA3_EMBED <= launch.version <= V_GEMMA3_EMBED_LAST:
        # EmbeddingGemma without flash attention, v0.11.10-v0.11.11: every position an output, the SWA and global
        # caches' F32 masks, mean pooling and the dense projections (graph.py gemma3_embed_graph_bytes)
        cells = cache.cells_by_layer
        own = gemma3_embed_graph_replayed(spec, min(launch.num_batch, launch.num_ctx), cells.get(0, 0),
                                          cells.get(GEMMA3_GLOBAL_EVERY - 1, 0), on_cpu=not gpus)
        if own is not None:
            return own
    if launch.version >= V_VISION_SDPA:
        # nomic-bert (v0.13.2+: cache-less attention through ScaledDotProductAttention), its batch the whole
        # context from v0.13.3 (_reserve_batch): graph.py nomicbert_graph_bytes
        own = nomicbert_graph_replayed(spec, min(launch.num_batch, launch.num_ctx), on_cpu=not gpus)
        if own is not None:
            return own
    if not launch.flash_attention and V_NEW_ESTIMATES <= launch.version < V_MASK_IN_GRAPH:
        # dense qwen3 without flash attention, v0.12.0 (Ollama-engine default) to v0.12.6: ml/backend/ggml
        # ScaledDotProductAttention's mul_mat / soft_max_ext / mul_mat branch over the PermutedV cache and the F32
        # mask input of its own (CacheConfig{CachePadding: 32, PermutedV: true}; kvcache/causal.go buildMask),
        # on the one GPU or, with no GPU, on the CPU
        own = qwen3_gpu_graph_replayed(spec, min(launch.num_batch, launch.num_ctx),
                                       max(cache.cells_by_layer.values(), default=0), num_parallel, mask_cast=False,
                                       set_rows=False, flash_attention=False, on_cpu=not gpus)
        if own is not None:
            return own
    cells = cache.cells_by_layer
    full = max(cells.values(), default=0)
    swa = min(cells.values(), default=0)
    own = _gemma4_graph(spec, launch, gpus, full, swa, num_parallel)
    if own is not None:
        return own
    if gpus and launch.flash_attention and V_GPTOSS_GRAPH <= launch.version < V_SET_ROWS:
        # gpt-oss with flash attention on a GPU, v0.11.5-v0.12.11 (the blocks and the cache writes graph.py
        # mirrors): the token rows, positions, masks and output index copied into the GPU's buffer
        own = gptoss_graph_replayed(spec, min(launch.num_batch, launch.num_ctx), full, swa, num_parallel,
                                    mask_cast=launch.version >= V_MASK_IN_GRAPH)
        if own is not None:
            return own
    if gpus and launch.flash_attention and V_CUDA_POOL_IN_GRAPH <= launch.version <= V_MASK_PAD_LAST:
        return qwen3_gpu_graph_replayed(spec, min(launch.num_batch, launch.num_ctx),
                                        max(cache.cells_by_layer.values(), default=0), num_parallel,
                                        mask_cast=launch.version >= V_MASK_IN_GRAPH,
                                        set_rows=launch.version >= V_SET_ROWS)
    if not gpus and launch.flash_attention and V_CUDA_POOL_IN_GRAPH <= launch.version <= V_MASK_PAD_LAST:
        # the same dense qwen3 replay with every block on the CPU (its inputs in buffers of their own, 32 B
        # alignment): Peuqui/AIfred-Intelligence's qwen3:1.7b at v0.12.6, 4096 cells, "compute graph" CPU 48.0 MiB
        own = qwen3_gpu_graph_replayed(spec, min(launch.num_batch, launch.num_ctx),
                                       max(cache.cells_by_layer.values(), default=0), num_parallel,
                                       mask_cast=launch.version >= V_MASK_IN_GRAPH,
                                       set_rows=launch.version >= V_SET_ROWS, on_cpu=True)
        if own is not None:
            return own
    if not gpus and launch.flash_attention and V_MASK_PAD_LAST < launch.version <= V_QWEN3_GRAPH_LAST:
        # v0.13.5-v0.24.0, every block on the CPU: model/models/qwen3 (dense and sparse alike), kvcache/causal.go,
        # ml/nn/attention.go, ScaledDotProductAttention and the vendored ggml-alloc.c unchanged, TopK still
        # ggml_argsort_top_k; the mask's batch no longer padded (49a9c9ba6, the GGML update to ec98e2002).
        # josheeg/Game-Note-'s Qwen3-Coder-30B-A3B (qwen3moe) on a Raspberry Pi 5 at v0.16.1: "compute graph" CPU
        # 96.0 / 88.0 MiB at 16384 / 4096 cells
        own = qwen3_gpu_graph_replayed(spec, min(launch.num_batch, launch.num_ctx),
                                       max(cache.cells_by_layer.values(), default=0), num_parallel,
                                       mask_cast=True, set_rows=True, on_cpu=True, mask_pad=1, moe=True)
        if own is not None:
            return own
    if gpus or not launch.flash_attention or not (V_GPTOSS_GRAPH <= launch.version <= V_MASK_PAD_LAST):
        return None
    return gptoss_cpu_graph(spec, min(launch.num_batch, launch.num_ctx), full, swa if swa != full else 0,
                            masks=launch.version >= V_MASK_IN_GRAPH)


V_GEMMA4 = (0, 20, 0)  # gemma4 joins the Ollama engine (model/models/gemma4)


def _gemma4_graph(spec: ModelSpec, launch: Launch, gpus: list[OGpu], full_cells: int, swa_cells: int,
                  n_outputs: int) -> int | None:
    """Ollama's own gemma4 text graph on a ggml-cuda GPU with flash attention, v0.20.0-v0.20.3 (the model code and
    the global blocks' attention on the CPU that graph.py gemma4_text_graph_bytes replays; e823bff87 in v0.20.4
    moves it to the GPU), every block on the GPU; None elsewhere. The reserve batch carries the reserve image's
    embeddings (runner.go reserveWorstCaseGraph, EncodeMultimodal + PostTokenize: (side / patch / pooling)^2 rows
    between the image's begin and end tokens) where the model has its vision tower; None when that image would not
    fit the batch (the batch then grows past num_batch)."""
    if (spec.architecture != "gemma4" or not gpus or not launch.flash_attention
            or not V_GEMMA4 <= launch.version < V_CUDA_FA_D512 or any(o.library not in _CUDA_LIBS for o in gpus)):
        return None
    n_tokens = min(launch.num_batch, launch.num_ctx)
    n_image = 0
    if _projector(spec, launch.version) is not None:
        vc = catalog_vision_config(spec)
        patch, merge = int(vc.get("patch_size", 16)), int(vc.get("pooling_kernel_size", 3))
        n_image = (gemma4_reserve_side(patch, merge) // (patch * merge)) ** 2
        if n_image + 2 > n_tokens:
            return None
    return gemma4_gpu_graph_replayed(spec, n_tokens, swa_cells, full_cells, n_outputs, n_image, fa_on_cpu=True)


def _projector(spec: ModelSpec, v) -> Projector | None:
    """fs/ggml/ggml.go VisionGraphSize (v0.6.0+) for a model whose GGUF carries its vision encoder; before it, llm/
    memory.go projectorMemoryRequirements of the --mmproj file the llama runner loads (v0.4.0+: mllama)."""
    if V_PROJECTOR_LOGGED <= v < V_MLLAMA_OLLAMA_ENGINE:
        # llm/memory.go EstimateGPULayers: the projectors' figures first, VisionGraphSize only when they are zero
        # (v0.6.0+); llama3.2-vision's library model shipped its projector as a second blob until the Ollama engine
        # ran mllama (23125648b, v0.7.0: convert_mllama.go writes the encoder into the model GGUF)
        mmproj = mmproj_projector(spec)
        if mmproj is None and v >= V_VISION_GRAPH and publishers_gguf(spec):
            # a GGUF repo's gemma3 (llama.cpp's converter): its tower is the repo's mmproj, a projector layer
            mmproj = llamacpp_mmproj_projector(spec)
        if mmproj is not None:
            return mmproj
    return vision_projector(spec) if v >= V_VISION_GRAPH else None


def _era_a_result(g: GgufView, launch: Launch, gpus: list[OGpu], num_parallel: int,
                  num_gpu: int, proj: Projector | None = None) -> dict[str, Any]:
    v = launch.version
    # llm/memory.go: gpuZeroOverhead = projectorWeights + projectorGraph, on the first GPU with space; from
    # v0.7.1 (d75557747) the Ollama engine's projector (VisionGraphSize) goes with the output layer instead
    vision = proj.weights + proj.graph if proj else 0
    zero, last = (0, vision) if v >= V_PROJECTOR_LAST_LAYER else (vision, 0)
    est = estimate_gpu_layers(g, v, gpus, launch.num_ctx, launch.num_batch, num_parallel, launch.kv_cache_type,
                                 launch.flash_attention, num_gpu, launch.gpu_overhead, projector_weights=zero,
                                 projector_last=last,
                                 mllama_branch=not before_candidate(v, launch.rc, RC_MLLAMA_GRAPH))
    if not gpus and v >= V_PER_GPU_ESTIMATE:
        # CPU only (library=cpu): Ollama counts the system RAM as one device that holds the one-layer buffer
        # (blk.0 and its KV) and the full graph beside everything that overflows, as both CPU logs show to the
        # printed digit: gemma2:9b at 0.3.11 (ollama/ollama#1495: 7.7 + 0.2 + 0.5 = 8.4 GiB) and gemma3:12b
        # (atineiatte/deep-research-at-home#14, June 2025: 10.5 GiB with its projector). The graph is added only
        # when that device got layers (llm/memory.go: layerCounts[i] > 0), full when all of them: num_gpu 0
        # sends every layer to the overflow and adds no graph (ollama/ollama#10986, 0.9.0: 4.4 GiB, no graph)
        buffer = (g.blk_sizes[0] if g.blk_sizes else 0) + (est.graph.kv[0] if est.graph.kv else 0)
        if num_gpu == 0:
            graph = 0
        elif 0 < num_gpu < g.block_count + 1:
            graph = est.graph_partial
        else:
            graph = est.graph_full
        # its allocation is the one device's: everything when layers go to it (RAM is not checked here), only the
        # one-layer buffer with num_gpu 0 (#10986: memory.required.allocations="[62.8 MiB]", full 4.4 GiB)
        total = est.total + buffer + graph
        est = replace(est, total=total, gpu_sizes=[buffer if num_gpu == 0 else total])
    logged = est.log_fields(num_gpu, launch.gpu_overhead, g.block_count)
    fields = {k: v for k, v in logged.items() if k.startswith("memory.")}
    if proj is not None:
        fields["projector.weights"] = logged["projector.weights"] = proj.weights
        fields["projector.graph"] = logged["projector.graph"] = proj.graph
    fields["memory.available"] = {gp.id: gp.free for gp in gpus if gp.free != _UNKNOWN_FREE}
    if gpus and len(est.gpu_sizes) == 1 < len(gpus):
        # before the per-GPU estimate (v0.1.45) the GPUs' free memory is pooled and the line prints one figure for
        # all of them (llm/memory.go EstimateGPULayers of v0.1.33-v0.1.44: "available", memoryAvailable summed)
        fields["memory.required.allocations"] = {",".join(gp.id for gp in gpus): est.gpu_sizes[0]}
    else:
        fields["memory.required.allocations"] = ({gp.id: a for gp, a in zip(gpus, est.gpu_sizes, strict=True)}
                                                 if gpus else dict(zip(["CPU"], est.gpu_sizes, strict=False)))
    return {"layers": est.layers, "split": list(est.tensor_split), "fields": fields, "vram": est.vram,
            "requested": num_gpu,
            "total": est.total, "kv": est.graph.kv_total, "weights": est.memory_weights + est.output_bytes
            if v >= V_WEIGHTS_NO_KV else est.memory_weights - est.graph.kv_total + est.output_bytes,
            "graph": est.graph_full if est.fully_loaded else est.graph_partial, "log": _offload_line(est, logged),
            "labels": list(est.graph.labels), "fully_loaded": est.fully_loaded}


# ml/backend/ggml/ggml.go New (v0.12.x): the groups the Ollama engine creates in the input buffer type, always the
# CPU's (requiredMemory.InputWeights); a tied token_embd is created a second time as output.weight on the output
# layer's device, which per_layer_weights already counts. per_layer_token_embd is not one of them: from 73b642e6f
# (v0.9.3) New creates it on the output layer's device, beside per_layer_model_proj / per_layer_proj_norm
# (weights.py runner_layer_weights; ollama/ollama#15749, gemma4:e4b on ROCm at v0.21.0, the output layer on the
# CPU: "model weights" CPU 6.6 GiB, its 5376 MiB BF16 table in it)
_INPUT_GROUPS = ("token_embd", "position_embd", "token_types")


def _engine_caches(caches: list[Cache], cache: CausalCache) -> list[Cache]:
    """llama.cpp's caches with the Ollama engine's cell counts (its SWA layers hold np x SWA memory + batch
    cells, llama.cpp's np x window + ubatch): the masks of the worst-case graph span these."""
    return [replace(c, cells=max(cache.cells_by_layer.get(il, c.cells) for il in c.layers)) if c.layers else c
            for c in caches]


def _vulkan_gptoss(spec: ModelSpec, launch: Launch, cache: CausalCache, gpus: list[OGpu], partial: int,
                   full: int) -> tuple[int, int] | None:
    """graph.gptoss_vulkan_gpu_graph where it was measured: gpt-oss without flash attention on Vulkan, the f32 masks
    copied in (v0.12.7) to the last release with the 64-row mask padding (v0.13.4); ggml-alloc's chunks are in every
    one of them (from v0.12.4). One GPU: with several, which one takes block 0's offloaded ops was not measured."""
    if len(gpus) != 1 or gpus[0].library != "vulkan" or launch.flash_attention \
            or not (V_MASK_IN_GRAPH <= launch.version <= V_MASK_PAD_LAST):
        return None
    cells = cache.cells_by_layer
    full_cells, swa_cells = max(cells.values(), default=0), min(cells.values(), default=0)
    return gptoss_vulkan_gpu_graph(spec, min(launch.num_batch, launch.num_ctx), full_cells, swa_cells, partial, full,
                                   chunked=True)


V_CUDA_FA_D512 = (0, 20, 4)  # e823bff87 "gemma4: enable flash attention": ggml-cuda's FA takes head dim 512


def _cpu_flash_attention(spec: ModelSpec, launch: Launch, cache: CausalCache, gpus: list[OGpu]) -> int:
    """What the CPU holds when ggml-cuda cannot run a layer's flash attention: before v0.20.4 (e823bff87) the
    vendored fattn.cu ggml_cuda_get_best_fattn_kernel knew no head dim 512, so ggml_backend_supports_op says no
    for gemma4's global layers and the scheduler runs their FLASH_ATTN_EXT on the CPU; its compute buffer then
    holds the op's split inputs copied from the GPU (Q F32, the layer's K and V cache views, the F16 mask) and its
    F32 output, one layer at a time. gemma4:26b at 32768 cells and a 512 batch: 16 + 64 + 64 + 32 + 16 MiB =
    201326592 B, required.CPU.Graph of ollama/ollama#15388 and "compute graph" device=CPU 192.0 MiB of #15634.
    0 where every layer's attention runs on the GPU."""
    if (spec.architecture != "gemma4" or not launch.flash_attention or launch.version >= V_CUDA_FA_D512
            or not gpus or any(o.library not in _CUDA_LIBS for o in gpus)):
        return 0
    n_tokens = min(launch.num_batch, launch.num_ctx)
    kv = ggml.type_by_name(launch.kv_cache_type or "f16")
    worst = 0
    for i, la in enumerate(spec.layers):
        a = la.attention
        if a is None or a.head_dim_k in (40, 64, 72, 80, 96, 112, 128, 256) and a.head_dim_k == a.head_dim_v:
            continue
        cells = cache.cells_by_layer.get(i, 0)
        q = a.head_dim_k * n_tokens * a.n_heads * 4
        k = ggml.tensor_bytes(kv, (a.head_dim_k, cells, a.n_kv_heads))
        v = ggml.tensor_bytes(kv, (a.head_dim_v, cells, a.n_kv_heads))
        mask = cells * n_tokens * 2
        out = a.head_dim_v * a.n_heads * n_tokens * 4
        worst = max(worst, q + k + v + mask + out)
    return worst


def _cpu_split(spec: ModelSpec, launch: Launch, lay: EraCLayout, gpus: list[OGpu], n_blocks: int) -> int:
    """What the CPU computes of the blocks left on it beside a GPU that takes the rest by op_offload (graph.py):
    gpt-oss's expert-bias add_id beside a Vulkan GPU, v0.11.5-v0.13.4; 0 where not mirrored."""
    on_gpu = {i for layers in lay.per_gpu for i in layers}
    if (not gpus or all(i in on_gpu for i in range(n_blocks)) or gpus[0].library != "vulkan"
            or not (V_GPTOSS_GRAPH <= launch.version <= V_MASK_PAD_LAST)):
        return 0
    return gptoss_vulkan_cpu_split(spec, min(launch.num_batch, launch.num_ctx)) or 0


def _cpu_per_layer_rows(spec: ModelSpec, launch: Launch, lay: EraCLayout, n_blocks: int) -> int:
    """The per-layer embeddings' rows when their table stays on the CPU: gemma3n's and gemma4's
    per_layer_token_embd rides on the output layer (weights.py placement), and its GET_ROWS runs where the weight
    is (no backend's offload_op takes GET_ROWS: ggml-vulkan's and ggml-cuda's skip it), so with the output layer
    left on the CPU the CPU's compute buffer holds the batch's F32 rows, num_batch x (n_layer x per-layer width)
    x 4 B (gemma4 model_text.go PerLayerProjector.Forward, v0.20.0+; gemma3n's, v0.9.3+). ollama/ollama#15261:
    gemma4:e4b at 42/43, 512 x 10752 x 4 B = "compute graph" device=CPU "21.0 MiB"."""
    if any(n_blocks in layers for layers in lay.per_gpu):
        return 0
    for t in spec.weights.tensors:
        if t.layer is None and t.name == "per_layer_token_embd.weight" and t.shape:
            return launch.num_batch * t.shape[0] * 4
    return 0


def _add_input_layer(lay: EraCLayout, g: GgufView, num_batch: int, graph: int, cpu_split: int = 0,
                     vision_input: int = 0) -> None:
    """The Ollama engine's CPU share beside the layers: the input weights and the CPU compute buffer. With every
    layer on a GPU that buffer holds only the get_rows output of the input layer (num_batch x n_embd F32):
    ollama/ollama#13372 (qwen3:32b, OLLAMA_DEBUG) required.InputWeights=437575680 (the Q4_K token_embd) and
    required.CPU.Graph=10485760 = 512 x 5120 x 4, both inside its "total memory" of 23.1 GiB; ollama/ollama#12027
    (v0.11.x, every layer's cache on a 2080 Ti) "compute graph" device=CPU "8.0 MiB" = 512 x 4096 x 4. With layers left
    on the CPU the GPU still runs them: ml/backend/ggml New creates the scheduler with op_offload
    (ggml_backend_sched_new_ext(..., parallel false, op_offload true, ...)), so every op of a CPU layer whose
    batch is large is offloaded to the GPU and the CPU buffer stays small (ollama/ollama#12913, v0.12.8-v0.12.9,
    gpt-oss:20b with 10 of 24 blocks on Vulkan0: CPU "45.1 MiB" beside Vulkan0 "16.6 GiB", the expert-bias add_id
    that Vulkan's offload_op leaves on the CPU: cpu_split, graph.py). With no GPU at all the CPU computes the whole worst-case graph
    (ollama/ollama#13320, gpt-oss:20b 0/25 layers: "compute graph" device=CPU "139.5 MiB"), and so it does where
    GPUs are present but the layout gives them no layer: ml/backend/ggml New (v0.11.5+, d5a0d8d90) puts in the
    scheduler only "the devices where we assigned layers" and the CPU (ollama/ollama#13687, qwen2.5vl:3b at
    v0.13.4 on an 8 GB GPU, 0 layers: "~6.7 GiB", its encoder's CPU graph)."""
    emb = sum(g.groups.get(k, 0) for k in _INPUT_GROUPS) + vision_input  # the encoder's v.position_embd too
    rows = num_batch * g.embedding * 4
    # per_gpu: one entry per GPU, empty where it has no layer
    cpu_graph = max(rows, cpu_split) if any(lay.per_gpu) else max(graph, rows)
    if emb:
        lay.weights["CPU"] = lay.weights.get("CPU", 0) + emb
    lay.graphs["CPU"] = lay.graphs.get("CPU", 0) + cpu_graph
    lay.total += emb + cpu_graph


def _era_c_result(lay: EraCLayout, gpus: list[OGpu], g: GgufView, measured: bool) -> dict[str, Any]:
    split = [len(x) for x in lay.per_gpu]
    fields = {"model weights": dict(lay.weights), "kv cache": dict(lay.cache), "compute graph": dict(lay.graphs),
              "total memory": lay.total}
    vram = sum(v for k, v in lay.weights.items() if k != "CPU") + sum(v for k, v in lay.cache.items() if k != "CPU") \
        + sum(v for k, v in lay.graphs.items() if k != "CPU")
    n_used = sum(1 for x in lay.per_gpu if x)
    lines = [f'msg="{k}" device={dev} size="{human_bytes2(b)}"'
             for k in ("model weights", "kv cache", "compute graph") for dev, b in fields[k].items()]
    lines.append(f'msg="total memory" size="{human_bytes2(lay.total)}"')
    # llm/server.go VRAMSize/TotalSize (what `ollama ps` shows): the GPUs' weights, cache and graph; all of it
    return {"layers": lay.n_layers, "split": split, "fields": fields, "vram": vram, "total": lay.total,
            "kv": sum(lay.cache.values()),
            "weights": sum(lay.weights.values()), "graph": lay.graph, "log": "\n".join(lines),
            "labels": list(lay.gr.labels) if lay.gr else [], "measured": measured, "n_gpus_used": n_used,
            "fully_loaded": lay.n_layers >= g.block_count + 1}


def _offload_line(est: LayerEstimate, f: dict[str, Any]) -> str:
    """The `msg=offload` (`msg="offload to cuda"` before v0.5.12) line as llm/memory.go LogValue prints it."""
    hb = human_bytes2
    if est.version < V_PER_GPU_ESTIMATE:
        # v0.1.33-v0.1.44: msg="offload to gpu", the pooled free memory, layers.real
        return (f'msg="offload to gpu" layers.requested={f["layers.requested"]} layers.real={f["layers.offload"]} '
                f'memory.available="{hb(sum(gp.free for gp in est.gpus))}" '
                f'memory.required.full="{hb(est.total)}" memory.required.partial="{hb(f["memory.required.partial"])}" '
                f'memory.required.kv="{hb(f["memory.required.kv"])}" '
                f'memory.weights.total="{hb(f["memory.weights.total"])}" '
                f'memory.weights.repeating="{hb(f["memory.weights.repeating"])}" '
                f'memory.weights.nonrepeating="{hb(f["memory.weights.nonrepeating"])}" '
                f'memory.graph.full="{hb(f["memory.graph.full"])}" memory.graph.partial="{hb(f["memory.graph.partial"])}"')
    lib = est.gpus[0].library if est.gpus else "cpu"
    if est.version >= V_BACKEND_LIBRARY_NAMES:
        lib = _BACKEND_NAMES.get(lib, lib)  # the ggml backend's own name (ollama/ollama#12912: library=Metal)
    avail = " ".join(hb(gp.free) for gp in est.gpus if gp.free != _UNKNOWN_FREE)
    alloc = " ".join(hb(a) for a in est.gpu_sizes)
    # llm/memory.go estimateGPULayers (v0.1.45-v0.12.10): with layerCount == 0 it returns ("insufficient VRAM to
    # load any model layers") before estimate.TensorSplit is set, so the split prints empty whatever the GPU count
    # (ollama/ollama#12305, v0.11.11: layers.offload=0 layers.split=[])
    placed = est.tensor_split if est.layers > 0 else []
    if est.version >= V_NEW_ESTIMATES_OPTIN:
        # d5a0d8d90 (v0.11.5): TensorSplit []int, printed by slog as a Go slice whatever the GPU count (nil: [])
        split = "[" + " ".join(map(str, placed)) + "]"
    else:
        # a string, set only with several GPUs; slog quotes it only when empty
        split = (",".join(map(str, f["layers.split"])) if est.layers > 0 else "") or '""'
    proj = (f'projector.weights="{hb(f["projector.weights"])}" projector.graph="{hb(f["projector.graph"])}"'
            if "projector.weights" in f else "")
    body = (f'layers.requested={f["layers.requested"]} layers.model={f["layers.model"]} '
            f'layers.offload={f["layers.offload"]} layers.split={split} memory.available="[{avail}]" '
            + (f'memory.gpu_overhead="{hb(f["memory.gpu_overhead"])}" ' if est.version >= V_GPU_OVERHEAD else "")
            + f'memory.required.full="{hb(est.total)}" '
            f'memory.required.partial="{hb(est.vram)}" memory.required.kv="{hb(f["memory.required.kv"])}" '
            f'memory.required.allocations="[{alloc}]" memory.weights.total="{hb(f["memory.weights.total"])}" '
            f'memory.weights.repeating="{hb(f["memory.weights.repeating"])}" '
            f'memory.weights.nonrepeating="{hb(f["memory.weights.nonrepeating"])}" '
            f'memory.graph.full="{hb(f["memory.graph.full"])}" memory.graph.partial="{hb(f["memory.graph.partial"])}"')
    if est.version < V_OFFLOAD_LOGVALUE:
        # llm/memory.go MemoryEstimate.log(), v0.1.45-v0.5.11: slog.Info("offload to "+inferenceLibrary, the layers
        # and memory groups), the projector group (v0.4.0+, c7cb0f060) added first through slog.With when non-zero;
        # gpu_overhead from v0.3.10 (b05c9e83d)
        proj = proj if est.version >= V_PROJECTOR_LOGGED and f.get("projector.weights") else ""
        return f'msg="offload to {lib}" ' + (proj + " " if proj else "") + body
    return f"msg=offload library={lib} " + body + (" " + proj if proj else "")


def _estimate_llama_server(spec: ModelSpec, g: GgufView, devices: tuple[Device, ...], s: OllamaSettings,
                           launch: Launch) -> MemoryEstimate:
    """Era D: llm/llama_server.go startLlamaServer and server/sched.go load (fb3076099)."""
    np_ = max(launch.num_parallel, 1)
    ctx_total = launch.num_ctx * np_  # effectiveLlamaServerContext
    file_bytes = spec.weights.nbytes
    predicted = predict_server_vram(spec, g, file_bytes, ctx_total)
    idx = _llama_server_gpus(devices, s, launch, predicted)
    used = tuple(devices[i] for i in idx)
    batch = _llama_server_batch(g, s, launch, used, ctx_total, predicted)
    surcharge = 0 if g.is_embedding else generation_batch_surcharge(batch)
    ls = _llama_server_settings(spec, g, used, s, launch, np_, ctx_total, batch)
    launch.num_batch = batch
    runner = llamacpp_estimate(spec, used, ls)
    own = {"layers": None, "split": [], "vram": predicted + surcharge, "total": predicted + surcharge, "kv": None,
           "weights": file_bytes, "graph": None, "labels": [], "fully_loaded": None,
           "fields": {"predicted": predicted, "predicted_for_load": predicted + surcharge,
                      "batch_surcharge": surcharge, "file_size": file_bytes},
           "log": f'msg="llama-server model fits alongside existing models" predicted="{human_bytes2(predicted + surcharge)}" '
                  f'predicted_num_ctx={ctx_total} num_batch={batch}'}
    return _finish(spec, g, devices, idx, s, launch, np_, runner, own, ls)


def _llama_server_gpus(devices: tuple[Device, ...], s: OllamaSettings, launch: Launch, predicted: int) -> list[int]:
    """selectLlamaServerPlacement: one GPU when the prediction is within 80% of its available memory."""
    idx = list(range(len(devices)))
    if len(devices) > 1 and s.num_gpu != 0 and not launch.sched_spread:
        known = [(i, _free(d)) for i, d in enumerate(devices) if _free(d) is not None]
        fit1 = [(i, f) for i, f in known if predicted <= f * 80 // 100]
        if fit1:
            idx = [max(fit1, key=lambda x: x[1])[0]]
    return idx


def _llama_server_batch(g: GgufView, s: OllamaSettings, launch: Launch, used: tuple[Device, ...], ctx_total: int,
                        predicted: int) -> int:
    """num_batch: the request, else embeddingBatchSize, else automaticGenerationBatch (server/sched.go)."""
    if s.num_batch > 0:
        return s.num_batch
    if g.is_embedding:
        return min(2048, ctx_total)  # DefaultEmbeddingNumBatch, capped by the context (embeddingBatchSize)
    available = sum(_free(d) or 0 for d in used)
    small = any((_free(d) or 0) and (_free(d) or 0) <= 8 * GiB for d in used)
    return automatic_generation_batch(ctx_total, predicted, available, launch.fa_mode == "off",
                                      launch.library == "cuda" and bool(used), small)


def _llama_server_settings(spec: ModelSpec, g: GgufView, used: tuple[Device, ...], s: OllamaSettings,
                           launch: Launch, np_: int, ctx_total: int, batch: int) -> LlamaCppSettings:
    """The llama-server command line startLlamaServer builds (-c num_ctx*np -np np, -ngl only when num_gpu is
    set, else --fit decides)."""
    build = runner_build(launch.version)
    kv = launch.kv_cache_type or "f16"
    if s.num_gpu > 0:
        ngl = s.num_gpu
    elif s.num_gpu == 0:
        ngl = 0
    else:
        ngl = -1
    ls = LlamaCppSettings(program="llama-server", n_ctx=ctx_total, n_batch=batch, n_ubatch=batch, n_parallel=np_,
                          kv_unified=False, cache_type_k=kv, cache_type_v=kv, flash_attn=launch.fa_mode,
                          n_gpu_layers=ngl, embeddings=g.is_embedding, engine_version=f"b{build}",
                          fit=False)  # the layout below plays --fit (_fit_llama_server); estimated as decided
    if ngl != -1:
        return ls
    env = dict(s.env)
    margin = FIT_TARGET
    if "LLAMA_ARG_FIT_TARGET" in env:  # set, even empty: std::stoi("") stops llama-server as well
        # llama-server reads its LLAMA_ARG_* variables with std::stoi and will not start on one it cannot read
        # (common/arg.cpp: "error while handling environment variable"); -fitt is MiB per device, comma-separated
        parts = [stoi("LLAMA_ARG_FIT_TARGET", x, "llama-server") for x in env["LLAMA_ARG_FIT_TARGET"].split(",")]
        margin = max(in_range("LLAMA_ARG_FIT_TARGET", p, Limit(0, None), "llama-server") for p in parts) * MiB
    ls, full = _fit_llama_server(spec, used, ls, margin)
    if not full:
        moved = (f"; the expert tensors of {len(ls.override_tensor)} of them stay on the CPU (-ot)"
                 if ls.override_tensor else "")
        launch.warnings.append(f"Ollama's llama-server (--fit) offloads {ls.n_gpu_layers} of {spec.n_layers + 1} "
                               "layers to the GPU; the rest run on the CPU (`ollama ps` shows a CPU/GPU split)"
                               + moved)
    return ls


def _launch_command(launch: Launch, np_: int, ls: LlamaCppSettings, num_gpu: int) -> str:
    """The runner command Ollama logs ("starting llama server"). Before v0.11.5 llm/server.go NewLlamaServer
    passes opts.NumGPU as --n-gpu-layers and replaces it by its estimate's layers only when it is -1 (v0.9.2:
    `case opts.NumGPU < 0 && estimate.Layers > 0 ...: opts.NumGPU = estimate.Layers`, then
    `params = append(params, "--n-gpu-layers", strconv.Itoa(opts.NumGPU))`): an explicit num_gpu above the
    layer count is printed as given (ollama/ollama#11162: layers.requested=256), the runner taking at most
    block_count + 1 of them."""
    kv = f" --cache-type-k {ls.cache_type_k} --cache-type-v {ls.cache_type_v}" if launch.kv_cache_type else ""
    if launch.era == "D":
        ngl = f" -ngl {ls.n_gpu_layers}" if ls.n_gpu_layers >= 0 else ""
        # llm/llama_server.go appendBatchArgs: an embedding model gets --embedding before its -b / -ub
        emb = " --embedding" if ls.embeddings else ""
        return (f"llama-server -c {ls.n_ctx} -np {np_}{kv} --flash-attn {ls.flash_attn}{emb} -b {ls.n_batch} "
                f"-ub {ls.n_ubatch}{ngl}")
    fa = " --flash-attn" if launch.flash_attention else ""
    engine = " --ollama-engine" if launch.runner == "ollama" else ""
    split = " --tensor-split " + ",".join(str(int(x)) for x in ls.tensor_split) if ls.tensor_split else ""
    kvt = f" --kv-cache-type {launch.kv_cache_type}" if launch.kv_cache_type else ""
    ngl = num_gpu if launch.era == "A" and num_gpu > 0 and ls.n_gpu_layers > 0 else max(ls.n_gpu_layers, 0)
    # v0.1.32-v0.11.4 NewLlamaServer: `if opts.NumGPU >= 0 { params = append(params, "--n-gpu-layers", ...) }`,
    # and opts.NumGPU (-1 unless the user set it) becomes the estimate's layers only when there are some on a
    # GPU (`case opts.NumGPU < 0 && estimate.Layers > 0 && gpus[0].Library != "cpu"`): a load without GPUs or
    # with no layer on them prints no --n-gpu-layers (didier-durand/llms-in-clouds docs/openmanus-smollm.md,
    # v0.6.0 on the CPU: "--ctx-size 8192 --batch-size 512 --threads 12 --no-mmap --parallel 4")
    no_ngl = V_NGL_FLAG <= launch.version < V_NEW_ESTIMATES_OPTIN and num_gpu < 0 and ls.n_gpu_layers <= 0
    ngl_flag = "" if no_ngl else f" --n-gpu-layers {ngl}"
    mmap = "" if ls.mmap else " --no-mmap"  # V_CPU_NO_MMAP: appended after --threads, before --parallel
    return (f"ollama runner{engine} --ctx-size {ls.n_ctx} --batch-size {launch.num_batch}{ngl_flag}"
            f"{fa}{kvt}{mmap} --parallel {np_}{split}")


def _finish(spec: ModelSpec, g: GgufView, devices: tuple[Device, ...], used_idx: list[int], s: OllamaSettings,
            launch: Launch, num_parallel: int, runner: MemoryEstimate, own: dict[str, Any],
            ls: LlamaCppSettings) -> MemoryEstimate:
    """Lay the runner's figures on all GPUs (unused ones empty), add Ollama's per-GPU reserve, and put Ollama's
    own figures next to them."""
    devs = _on_all_gpus(devices, runner, launch.minimum + launch.gpu_overhead)
    # Ollama's own decisions (its fit's CPU split first) before the runner's: the verdict quotes the first warning
    # the runner's build is Ollama's choice, not the user's: its note says which release brought it
    plain = version_warning(ls.engine_version)
    ours = version_warning(ls.engine_version, runner=f"Ollama {version_str(launch.version)}")
    warnings = launch.warnings + [ours if w == plain else w for w in runner.warnings]
    labels = list(launch.labels) + list(g.labels) + own.get("labels", [])
    if spec.architecture in _VISION_ARCHS and launch.era != "D" and "projector.weights" not in own["fields"] \
            and not own.get("vision_counted"):
        if any(t.name.startswith("v.") for t in spec.weights.tensors):
            # weights.py _gemma4_e_library_file: the towers' tensors carried in the library file's inventory
            labels.append("the vision and audio towers' weights are counted as the library file carries them; "
                          "their encoders' compute graphs are not")
        else:
            labels.append("Ollama also counts the vision projector (projector.weights/graph) of this model family; "
                          "oomkit has no vision tower for this model to count it with")
    if spec.architecture == "mllama" and launch.runner == "ollama":
        # model/models/mllama (v0.7.0+): kvcache.NewWrapperCache(NewEncoderCache(), NewCausalCache): the causal
        # cache of the self-attention layers, the encoder cache (kvcache/encoder.go) the cross-attention layers' K
        # and V, created by reserveWorstCaseGraph's image (kv.py mllama_encoder_cache)
        labels.append("the Ollama engine's mllama encoder cache (the cross-attention layers' K and V of an image's "
                      "1601 x 4 tokens in F32, kvcache/encoder.go) is created by the reserve's image and counted in "
                      "each cross-attention layer's KV cache")
    compare = _ollama_vs_runner(devices, devs, runner, own, launch, warnings)
    full_offload = _full_offload(spec, devices, launch, own, ls, warnings)
    view = dict(runner.engine_view)
    view.update({
        "ollama_version": version_str(launch.version),
        "ollama_era": launch.era,
        "ollama_runner": {"llama": "llama.cpp runner", "ollama": "Ollama engine",
                          "llama-server": "llama-server"}[launch.runner],
        "ollama_launch": _launch_command(launch, num_parallel, ls, s.num_gpu),
        "ollama_layers": (f"{own['layers']}/{spec.n_layers + 1}" if own["layers"] is not None else None),
        "ollama_layers_split": ",".join(map(str, own["split"])) if len(own["split"]) > 1 else None,
        "ollama_memory": own["fields"],
        "ollama_vs_runner": compare,
        "ollama_log": own.get("log"),
    })
    eff = {
        "num_ctx": launch.num_ctx, "num_parallel": num_parallel, "kv_cache_type": launch.kv_cache_type or "f16",
        "kv_cache_type_requested": launch.kv_requested or None, "flash_attention": launch.fa_mode,
        "gpu_overhead": launch.gpu_overhead,
        "num_gpu": own.get("runner_layers", own["layers"]) if launch.era != "D" else s.num_gpu,
        "num_batch": launch.num_batch, "library": launch.library, "engine_version": version_str(launch.version),
        "era": launch.era, "runner": launch.runner, "env": dict(s.env), "program": s.program,
        "n_ctx": ls.n_ctx, "n_parallel": num_parallel,
    }
    return OllamaEstimate(model=spec, engine="ollama", settings=eff, devices=devs, host=replace(runner.host),
                          engine_view=view, kv_bytes_per_token=runner.kv_bytes_per_token, layers=runner.layers,
                          warnings=tuple(dict.fromkeys(warnings + labels)), full_offload=full_offload)


def _on_all_gpus(devices: tuple[Device, ...], runner: MemoryEstimate, reserve: int) -> tuple[Usage, ...]:
    """Every GPU, the runner's figures on those it used (each with Ollama's reserve), the others empty."""
    by_id = {u.id: u for u in runner.devices}
    usages = []
    for d in devices:
        u = by_id.get(d.id)
        if u is None:
            usages.append(Usage(id=d.id, name=d.name, memory_bytes=d.memory_bytes))
        else:
            usages.append(replace(u, memory_bytes=d.memory_bytes, overhead_bytes=reserve))
    return tuple(usages)


def _ollama_vs_runner(devices: tuple[Device, ...], devs: tuple[Usage, ...], runner: MemoryEstimate,
                      own: dict[str, Any], launch: Launch, warnings: list[str]) -> dict[str, Any]:
    """Ollama's own figures against what its runner allocates; a warning beyond 10%."""
    runner_vram = sum(u.total_bytes for u in devs)
    runner_total = runner_vram + runner.host.total_bytes
    ollama_vram = own["vram"]
    ollama_total = own["total"]
    kv_runner = runner.kv_cache_bytes + runner.recurrent_state_bytes
    compare: dict[str, Any] = {
        "ollama_vram_bytes": ollama_vram, "runner_vram_bytes": runner_vram,
        "vram_difference_bytes": None if ollama_vram is None else ollama_vram - runner_vram,
        "ollama_total_bytes": ollama_total, "runner_total_bytes": runner_total,
        "ollama_kv_bytes": own["kv"], "runner_kv_bytes": kv_runner,
        "ollama_weights_bytes": own["weights"], "runner_weights_bytes": runner.weights_bytes,
        "ollama_graph_bytes": own["graph"], "runner_compute_bytes": runner.compute_bytes,
    }
    ref_o, ref_r, what = (ollama_vram, runner_vram, "VRAM") if devices and runner_vram else \
        (ollama_total, runner_total, "memory")
    if ref_o is not None and ref_r:
        ratio = ref_o / ref_r
        compare["ratio"] = round(ratio, 4)
        if abs(ratio - 1) > 0.10:
            more = "more" if ratio > 1 else "less"
            warnings.append(
                f"Ollama's own estimate ({'what `ollama ps` shows' if launch.era != 'D' else 'its eviction prediction'})"
                f" is {ref_o / GiB:.2f} GiB of {what}, {abs(ratio - 1) * 100:.0f}% {more} than the "
                f"{ref_r / GiB:.2f} GiB its runner really allocates")
    return compare


def _full_offload(spec: ModelSpec, devices: tuple[Device, ...], launch: Launch, own: dict[str, Any],
                  ls: LlamaCppSettings, warnings: list[str]) -> bool | None:
    """Whether every layer is on the GPUs (None without GPUs); a CPU/GPU split is warned about."""
    if not devices:
        return None
    if launch.era == "D":
        # every layer, and no expert tensor the fit moved to the CPU (-ot)
        return (ls.n_gpu_layers < 0 or ls.n_gpu_layers > spec.n_layers) and not ls.override_tensor
    layers = own.get("runner_layers", own["layers"])  # an explicit num_gpu as the runner takes it
    full_offload = bool(layers and layers >= spec.n_layers + 1)
    if not full_offload:
        warnings.insert(0, f"Ollama offloads {layers}/{spec.n_layers + 1} layers to the GPU; the rest run "
                        "on the CPU (`ollama ps` shows a CPU/GPU split)")
    return full_offload
