"""vLLM's start-up, phase by phase, on one GPU (rank): what each phase holds, whether vLLM's
gpu_memory_utilization budget counts it, and what is left after it. The budget (profile.py) sizes the KV cache;
two phases run after the KV cache is allocated (v1/worker/gpu_worker.py compile_or_warm_up_model): CUDA-graph
capture (capture_model) and the sampler warm-up (_dummy_sampler_run on min(max_num_seqs,
max_num_batched_tokens) dummy requests, "called after capture_model on purpose"). Before 0.20 neither is in the
budget: they live in the (1 - gpu_memory_utilization) headroom plus what the profile run's peak gave back, and a
run can allocate its KV cache and then die ("CUDA out of memory occurred when warming up sampler with 1024 dummy
requests. Please try lowering `max_num_seqs` or `gpu_memory_utilization`").

Budget membership by release (gpu_worker.py determine_available_memory, utils/mem_utils.py memory_profiling):
  CUDA context: before the baseline, outside (V1 before 0.9 counts all non-torch memory, the context too,
    inside); NCCL's communicators at TP/PP > 1: outside in V1 from 0.9, inside (non_torch) in V0 and V1 before 0.9;
  weights, profile-run peak, non-torch increase (custom all-reduce / NCCL buffers, cuBLAS workspaces): inside;
  KV cache: the budget's remainder;
  CUDA graphs: outside up to 0.19 (0.19 prints "Estimated CUDA graph memory" but does not subtract it, unless
    VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1); from 0.20 the estimate is inside and what capture takes beyond
    the estimate is outside; beyond two GPUs without NVLink NCCL up to 2.21 (vLLM up to 0.8.5) keeps memory for
    every all-reduce the graphs capture (nccl_graph_bytes), charged to the capture phase;
  sampler warm-up (V1): outside, transient (its blocks stay reserved in PyTorch's cache: the device total holds
    them, layout.py _usages). V0 has no separate warm-up (its profile run samples).
PyTorch's caching allocator rounds large blocks to 2 MiB and keeps freed blocks reserved; that fragmentation is
what the fitted warm-up factor below absorbs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ...model.spec import LayerKind, ModelSpec
from ...units import MiB
from .config import Resolved, pp_partition
from .profile import (
    RankMemory,
    b12x_moe,
    cudagraphs_in_budget,
    sampler_bytes,
    sort_sampler,
    triton_mxfp4_moe,
)
from .settings import VllmSettings

# CUDA-graph capture ("Graph capturing finished in N secs, took X GiB": gpu_model_runner.py capture_model, the drop
# in torch.cuda.mem_get_info() free memory across the capture, so the graph pool and the driver's memory for every
# instantiated graph alike). V0's rule (worker/model_runner.py capture_model, whole-model graphs): about 2.9 MiB
# plus 1.84 KiB per unit of hidden size per captured graph, times sqrt(largest captured size / 512); fitted on the
# llm-d v0.19.0 H100 logs below before V1's first-capture term was split off, kept for V0 (held out: vllm PR #11349,
# Llama-3.2-1B, 35 V0 graphs "took 0.21 GiB", GPU not named: this rule 0.16) and for SGLang's
# piecewise prefill graphs (engines/sglang/phases.py).
CG_GRAPH_BASE = 2.91 * 1024 * 1024
CG_GRAPH_PER_HIDDEN = 1.84 * 1024
# V1 (0.8 -> current), from what capture_model holds when it measures (gpu_model_runner.py capture_model: empty_cache,
# free memory, every warm-up and capture, free memory again, read in 0.19.0). Each capture enters torch.cuda.graph,
# whose __enter__ empties PyTorch's cache (torch/cuda/graphs.py graph.__enter__; vLLM's CUDAGraphWrapper patches that
# out only for a size's later pieces, compilation/cuda_graph.py gc_disable), so the eager warm-up runs before each
# capture leave nothing behind: "took" is the one global graph pool (current_platform.get_global_graph_pool(), FULL and
# PIECEWISE alike, captured largest size first so the smaller reuse it) and what the driver keeps for the graphs:
# - a one-off first capture (the largest graph's working set in the pool, and what the first capture allocates once);
# - FlashAttention 3's split buffers in the largest FULL graph (fa3_split_bytes, read from the source, no constant);
# - a share per captured graph and per decoder layer of the rank (CG_PER_GRAPH_LAYER, times sqrt(largest captured
#   size / 512)): a PIECEWISE size is one graph per piece between the attention ops (compilation/backends.py
#   split_graph, each piece its own CUDAGraphWrapper), a FULL size one graph of all the rank's layers, so what grows
#   with the graphs grows with the kernels captured, i.e. with the layers a rank holds (a pipeline stage builds only
#   its own, model_executor/models/utils.py make_layers / get_pp_indices), not with the hidden size; a MoE layer
#   counts 1 + CG_MOE_LAYER_EXTRA layers (routing, align, two grouped GEMMs, the expert sum: more kernels).
# Fitted (least squares on the relative error) on the seven llm-d v0.19.0 H100 logs the per-hidden rule before this
# was fitted on (gemma-2-2b/9b/27b, gemma-3-4b/12b/27b, Llama-3.3-70B FP8 TP2, 51 + 51 graphs to 512): a 152 MiB
# one-off and 144.1 KiB per graph and layer; CG_MOE_LAYER_EXTRA on gpt-oss-20b TP1 (0.19.0, 83 + 83 graphs to 1024,
# 1.84 GiB), where the MXFP4-only term was fitted before. Held out, against "took" (the per-hidden rule -> this):
# the other H100 0.19 logs within -21 % .. +14 % (gpt-oss-20b TP2 +19 -> +3 %, Llama-4-Scout TP4 +4 -> +13 %,
# Qwen1.5-MoE-A2.7B -37 -> -28 %), vllm#37972's PP 8 rank (7 of 60 layers) +128 -> +23 %, the GH200 0.10.1 PP 2
# PIECEWISE-only run -7 -> -22 %; see tests/test_vllm_cudagraph.py for the rest.
CG_ONE_OFF_HOPPER = 152 * MiB
CG_PER_GRAPH_LAYER = int(144.1 * 1024)
CG_MOE_LAYER_EXTRA = 0.55
# The one-off elsewhere, by the GPU's SM count (first_capture): a line through the DGX Spark's GB10 (48 SMs) and the
# RTX 5090 (170), the two logs the per-SM form was fitted on before. GB10 Qwen3.6-27B 0.23 (5 + 4 graphs, 0.62 GiB,
# its own estimate 0.61) less the FlashInfer workspace its FULL graphs allocate (FLASHINFER_WORKSPACE) and the
# per-graph share: 227 MiB; the RTX 5090 (gemma-4-26b-a4b NVFP4, 0.20.2, --max-num-seqs 2: 3 + 2 graphs to 4 tokens,
# TRITON_ATTN forced by its mixed head sizes, 0.40 GiB) takes the one-off alone: 410 MiB. 1.50 MiB per SM. The
# Hopper logs do not fall on it (152 MiB at 132 SMs where the line gives 353): what the one-off is, and why a
# GeForce part's is larger, is not found in vLLM's source (persistent kernels' per-SM buffers and the driver's
# local-memory reserve both grow with the SMs). Held out: the RTX 4090 0.24 log (-3 % -> -11 %), the RTX 3090 death's
# OOM-line bound (0.27 GiB against at most 0.34), the two GB10 MTP runs, djl-serving#3055's L4 (58 SMs).
CG_FIRST_SM_LOW, CG_FIRST_AT_LOW = 48, 227 * MiB
CG_FIRST_SM_HIGH, CG_FIRST_AT_HIGH = 170, 410 * MiB
CG_FIRST_PER_SM = (CG_FIRST_AT_HIGH - CG_FIRST_AT_LOW) // (CG_FIRST_SM_HIGH - CG_FIRST_SM_LOW)
# FlashAttention 3 (Hopper) under FULL graphs: the metadata builder sets num_splits to
# attention_config.flash_attn_max_num_splits_for_cuda_graph (32) for every batch up to the largest capture size
# "so that large enough intermediate buffers are pre-allocated during capture" (v1/attention/backends/flash_attn.py
# FlashAttentionMetadataBuilder.__init__ / build, read in 0.19.0), and FA3's forward then allocates
# out_accum [splits, heads, tokens, head_dim_v] and softmax_lse_accum [splits, heads, tokens] in fp32 per call
# (vllm-project/flash-attention hopper/flash_api.cpp mha_fwd, num_splits > 1), except past 992 requests
# (PREPARE_VARLEN_MAX_BATCHES_1CTA: "disable split for varlen and >992 batches"). Inside a FULL graph that comes from
# the pool, and the largest FULL graph sizes it; PIECEWISE dummy runs build no attention metadata. Once, not twice:
# the FULL warm-up's eager copy is emptied at the capture's torch.cuda.graph __enter__ (the TP pairs of the H100
# sweep hold it: Llama-3.3-70B TP 2 - TP 4 took 0.13 GiB, the buffers' difference 0.13; gpt-oss-20b TP 1 - TP 2
# 0.29, the buffers' 0.25; Mistral-Small-3.1 W8A8 0.19, the buffers' 0.13). The blocks are rounded to 2 MiB here;
# PyTorch's allocator may serve the smaller one from a 20 MiB segment shared with other blocks.
FA3_MAX_NUM_SPLITS = 32
FA3_SPLIT_MAX_BATCH = 992
# FlashInfer's attention workspace (v1/attention/backends/flashinfer.py FlashInferMetadataBuilder._get_workspace_buffer,
# envs.py VLLM_FLASHINFER_WORKSPACE_BUFFER_SIZE, 394 MiB in 0.21 -> 0.34): allocated lazily by each builder the first
# time it builds attention metadata. The builders that serve are made with the KV cache (initialize_attn_backend), so
# the first build is the warm-up's: model_executor/warmup/kernel_warmup.py runs a FlashInfer warm-up only when every
# attention group is FlashInfer (`and all(`, 0.21 -> 0.33; `any(` in 0.34), so on a hybrid model (Mamba / gated delta
# net groups beside the attention) the first build is in capture_model, in the warm-up _dummy_run of the first FULL
# graph (gpu_model_runner.py _warmup_and_capture: force_attention for FULL; PIECEWISE dummy runs build no metadata),
# and "took" counts it. Qwen3.6-27B on the GB10 (FlashInfer for its fp8 KV cache, 5 + 4 graphs): 0.62 GiB, where
# the MTP run of the same checkpoint (PIECEWISE only) took 0.23.
FLASHINFER_WORKSPACE = 394 * MiB
# GeForce parts take the one-off alone, whatever the number of graphs (geforce_capture): the RTX 5090 log above (5
# graphs) and the RTX 3090 0.17.1 run that died in the sampler warm-up (Llama-3.1-8B, 51 + 35 graphs), whose OOM line
# leaves the capture at most 0.84 GiB (84 MiB of graph pools, 45.61 MiB reserved-unallocated, 0.72 GiB outside
# PyTorch), 0.34 GiB once the 0.37 GiB context and 0.13 GiB non-torch memory are taken off, where the per-graph share
# would make it 0.65 and the one-off at its 82 SMs is 0.27 (tests/test_vllm_cudagraph.py). Held out: an RTX 4090 on
# 0.24 (Qwen2.5-0.5B, 51 + 35 graphs to 512) "took 0.38 GiB": 0.34 here (128 SMs). The one-off itself varies on
# GeForce parts: club-3090#178 (2 x RTX 3090, TP 2, five PIECEWISE graphs, model not in the stored excerpt) "took
# 0.10 GiB", 0.27 here; not a fixture, not modelled.
# vLLM's estimate where no FULL graph is captured (PIECEWISE only: spec decode on FlashInfer, -O1, an explicit
# cudagraph_mode), on an Ampere GeForce part. gpu_model_runner.py profile_cudagraph_memory (read in the 0.24.0 wheel;
# the same shape 0.19 -> 0.33) samples the two largest sizes of each mode and returns max(first samples) +
# (n - 1) x max(second, 1 MiB) per mode; _warmup_and_capture sets force_attention (and the FULL sample's
# profile_seq_lens) for FULL alone, so a PIECEWISE sample's dummy runs build no attention metadata and the attention
# and gated-delta-net cores (config/compilation.py _attention_ops, the splitting ops) run nothing: the sample is the
# pieces' graphs (compilation/backends.py split_graph, one CUDAGraphWrapper per piece, so one graph per decoder
# layer and one more) and their pool at the largest size. Without a FULL sample the FULL one-off (first_capture,
# fitted on "took" of FULL runs, 278 MiB at a 3090's 82 SMs) is not in it; each further size costs its pieces'
# graphs, about a fixed share per layer. Two constants, fitted on two RTX 3090 logs of Qwen3.6-27B (64 layers):
# club-3090 PR #44 (TP 4, PIECEWISE=7 to 32, "Estimated CUDA graph memory: 0.17 GiB") and club-3090#434 (TP 2 over
# NVLink, PIECEWISE=3 + FULL=2 to 8 without FlashInfer's workspace: 0.0040 of 23.54 GiB, 0.094 GiB, the FULL first
# sample taken as the PIECEWISE one and its further graph at vLLM's 1 MiB floor): 56 MiB first and 0.307 MiB per
# layer and further size. Held out: club-3090#104 turn 13 (TP 2, PIECEWISE=5 to 16: 0.13 printed, 0.13 here; 0.28
# before), club-3090#127 (TP 4, the PR #44 compose: 0.167 from its notice, 0.17 here). Not for other GPUs: the RTX
# 5090 PIECEWISE-only run (club-3090#617, 4 graphs, NVFP4) printed 0.08 where these give 0.11, and its budget
# matches only with the one-off (tests/test_startup_heldout9.py); the RTX 4090 and Blackwell logs keep their xfails.
CG_EST_PW_FIRST_AMPERE = 56 * MiB
CG_EST_PW_PER_LAYER_AMPERE = int(0.307 * MiB)
# The sampler warm-up needs this many times the sampler's own tensors (sampler_bytes) once the caching
# allocator's fragments are counted; more after a dummy forward through the MXFP4 Triton MoE kernels (gpt-oss on
# Hopper, profile.py triton_mxfp4_moe) than after any other model's:
# - MXFP4 MoE: gpt-oss-20b TP1 (0.19.0, util 0.95) died with 4.48 GiB free before the warm-up (2.19 GiB
#   allocated, 786 MiB requested, 1.78 GiB reserved but unusable): at least 1.57. 1.62.
# - others: Llama-4-Scout TP4 (MoE) started with 3.95 GiB free (at most 1.38), Llama-3.3-70B FP8 TP2 with 2.61
#   GiB (at most 1.43), the Gemma 2 / 3 runs with 5.88-6.67 GiB (at most 1.62). 1.35.
# Held out: gpt-oss-20b TP2 at 0.95 (dies) and 0.90 (starts), llm-d#787 Qwen3-32B TP2 on 0.11 (dies; starts here with
# 0.24 GiB left since FlashInfer's profile pass holds the 12 B its warm-up does, profile.py SAMPLER_BYTES_FLASHINFER).
# These runs all sample through the Triton / FlashInfer top-k/top-p (0.19, or FlashInfer on 0.11). Not the PyTorch
# sort (profile.py sort_sampler: V1 before 0.17 without FlashInfer's sampler), whose warm-up needs the sampler's
# allocated peak and no more (SAMPLER_WARMUP_FACTOR_SORT). Read in 0.11.0 (v1/worker/gpu_worker.py
# compile_or_warm_up_model, gpu_model_runner.py _dummy_sampler_run, v1/sample/sampler.py, ops/topk_topp_sampler.py):
# the warm-up calls the very _dummy_sampler_run the profile ran (the same top-k = vocabulary - 1, top-p 0.9), on
# min(max_num_seqs, max_num_batched_tokens) rows; the profile's cache was emptied (utils memory_profiling:
# empty_cache after profile_run), capture_model leaves only its dummy runs' small blocks. On the sort path the peak
# is inside logits.sort (the model-dtype logits, their float32 copy, the sorted values and int64 indices, and the
# sort's own int64 index input and cub's key / value double buffers, the last two freed when it returns: PyTorch
# aten/src/ATen/native/cuda/SortStable.cu segmented_sort_pairs, 128 rows or more; 2 + 4 + 4 + 8 + 8 + 12 B per
# element, the profile's fitted SAMPLER_BYTES_SORT + dtype); everything allocated after it (the top-k and top-p masks, probs_sort, the scattered
# logits, then the probabilities and random_sample's exponential noise) is at most what the sort freed and is cut
# from those cached blocks, so the caching allocator reserves the allocated peak and nothing beside it. gpt-oss-120b
# on one H100 (llm-d-benchmark, 0.11 image with triton_kernels, 1,024 x 201,088 logits): 7.36 GiB needed with
# 8.80 GiB left after the KV cache and the graphs, and the run started (1.62 x: 11.93 GiB, said to die).
SAMPLER_WARMUP_FACTOR = 1.62
SAMPLER_WARMUP_FACTOR_DENSE = 1.35
SAMPLER_WARMUP_FACTOR_SORT = 1.0
# Model runner V2 (gpu/warmup.py warmup_kernels -> sample/sampler.py): no V1 log fits it, and what its sampler holds
# at the peak is read, not fitted (profile.py v2_sampler_bytes: the logits, their float32 copy and, through
# FlashInfer, the masked logits and the probabilities, all alive together in top_k_top_p_sampling_from_logits):
# the allocated peak, no allocator factor. Held out: Qwen3.6-27B-FP8 TP4 on 4x H100 died in that warm-up
# (vllm#48601: 3.32 GiB needed, 3.23 left after the graphs; 4.48 with the V1 factor), Qwen3-1.7B on an RTX 4090 at
# 0.45 beside a second engine started (tests/test_vllm_more_logs.py: 0.508 GiB needed, 0.511 left; 0.685 with it).
SAMPLER_WARMUP_FACTOR_V2 = 1.0
# NCCL inside the captured graphs. Beyond two GPUs without NVLink vLLM's custom all-reduce is off
# (distributed/device_communicators/custom_all_reduce.py CustomAllreduce.__init__: "Custom allreduce is disabled
# because it's not supported on more than two PCIe-only GPUs", world_size > 2 and not fully_connected, 0.4 ->
# current), so every tensor-parallel all-reduce the graphs capture is a pynccl ncclAllReduce (parallel_state.py
# GroupCoordinator.all_reduce: custom all-reduce first, then pynccl; graph_capture enables pynccl on the capture
# stream). Each captured NCCL collective keeps device memory of NCCL's own for as long as the graph lives (the
# memory NVIDIA/nccl#1234 traces; vLLM sets NCCL_CUMEM_ENABLE=0 against the worst of it, vllm/__init__.py then
# env_override.py, up to 0.10.1.1: 0.10.2's and 0.11.0's env_override.py no longer set it, read in those sdists),
# outside PyTorch's pool. Per captured all-reduce, fitted on vllm#7553 (4 x RTX 4090, TP 4,
# V0 0.5.4, Yi-1.5-34B, driver 535.54.03 / CUDA 12.2): "23859 - 21395 = 2464 MiB is consumed by the cuda grapy"
# (nvidia-smi with graphs vs --enforce-eager: the same KV cache), less the pool cudagraph_actual_bytes gives for
# its 35 graphs (390.8 MiB), over 35 graphs x (2 x 60 layers + 1) all-reduces: 0.49 MiB each. Driver-dependent:
# vllm#5517 measured 3.81 GiB of graphs on A10G with CUDA 12.2 / 12.3 drivers and 1.14 GiB with 12.4 (the
# model and sizes of that run are not in the stored thread); the 12.2-era figure is the one held here. Held out:
# vllm#17469 (4 x A10, TP 4, V1 0.8.5: dies in capture_model, which the dense rule alone had start) and vllm#15598
# (L40S, TP 8 x PP 4, V0 0.7.3: dies capturing; it needs V0's graphs per virtual engine as well, graph_count).
# What the memory is, by NCCL release (NVIDIA/nccl source): up to 2.21 every collective captured into a graph is a
# persistent plan whose work is copied to a device buffer of its own, freed only with the graph (src/enqueue.cc
# uploadWork: ncclCudaMalloc(&plan->workHead, nWork), 2.20.5 / 2.21.5; reclaimPlan frees it); a cuMem allocation
# (NCCL_CUMEM_ENABLE, on by default from 2.19) is rounded up to the 2 MiB granule (include/alloc.h ncclCuMemAlloc),
# which is why vLLM turned cuMem off up to 0.10.1.1 (vllm#5091, merged 2024-05-28; vllm/__init__.py later: "it will cost 1~2 GiB GPU
# memory with cudagraph+allreduce"), leaving a cudaMalloc per captured collective whose cost is the driver's. From 2.22 (release
# note "Utilize the full amount of kernel argument space permitted (4k) before resorting to work fifo"; enqueue.cc
# finishPlan: ncclDevWorkStorageTypeArgs when the work fits) a captured all-reduce's work rides in the kernel
# arguments and nothing is allocated for it; where it does not fit, 2.23+ takes it from the communicator's pool
# (cudaMallocAsync(..., comm->memPool, ...)). vLLM pins torch, so the NCCL it loads (pynccl_wrapper.py
# find_nccl_library: torch's nvidia-nccl) is 2.20.5 / 2.21.5 up to 0.8.5 and 2.26.2+ from 0.9.0 (settings.py ERAS
# "nccl_work_in_args"), where the share is 0. vLLM's own PyNccl wrapper is what the graphs capture in both eras
# (pynccl.py PyNcclCommunicator.all_reduce; its out-of-place output, torch.empty_like, comes from the graph pool
# the pool rule above covers). Held out: djl-serving#3055 (4 x L4, TP 4, 0.22 / 0.23, NCCL 2.28.9): 0.60 GiB of
# capture logged for 86 graphs x 65 all-reduces, at most 0.11 MiB each (tests/test_vllm_more_logs.py). Not held:
# vllm#27782 (4 x RTX 4090, TP 4, 0.11.0: NCCL 2.27.3 with cuMem no longer off) took 1.88 GiB, 39.88 MiB of it in
# PyTorch's graph pools, where this gives 0.34; no per-collective constant fits it beside djl-serving#3055 and the
# 0.10.1.1 TP 2 runs (tests/test_vllm_heldout12.py, strict xfail).
NCCL_GRAPH_PER_ALLREDUCE = int(0.49 * MiB)


def capture_sizes(spec: ModelSpec, s: VllmSettings, r: Resolved) -> tuple[int, ...]:
    """The batch sizes vLLM captures CUDA graphs for (config/vllm.py _set_cudagraph_sizes; V0
    worker/model_runner.py _BATCH_SIZES_TO_CAPTURE). None with --enforce-eager."""
    if s.enforce_eager or _graph_mode(s, r, spec) == "NONE":
        return ()
    if s.cudagraph_capture_sizes:  # --cudagraph-capture-sizes: as given, within max_num_batched_tokens
        return tuple(x for x in s.cudagraph_capture_sizes if x <= r.max_num_batched_tokens)
    if not r.v1:  # V0: [1, 2, 4] + multiples of 8 up to 256, no larger than max_num_seqs
        sizes = [1, 2, 4] + list(range(8, 257, 8))
        return tuple(x for x in sizes if x <= max(r.max_num_seqs, 1))
    top = s.max_cudagraph_capture_size
    if top is None and r.version < (0, 10, 0):
        # 0.8.x config.py VllmConfig._set_cudagraph_sizes (V1): [1, 2, 4] + range(8, 513, 8), cut at
        # max_num_batched_tokens only; --max-num-seqs does not shorten the list (vllm#17469: out of memory in
        # capture_model "even i set ... max-num-seq =1"). 0.9.0-0.9.2 build the same list from
        # SchedulerConfig.cuda_graph_sizes, whose default is [512] (config.py, read in the three sdists; vllm#20420
        # captures 67 shapes at --max-num-seqs 2 on 0.9.2); 0.10.0 makes the default [min(max_num_seqs * 2, 512)]
        # (SchedulerConfig.__post_init__, read in 0.10.0-0.11.0)
        top = 512
    if top is None:  # max_cudagraph_capture_size default (cuda_graph_sizes before 0.12)
        top = min(r.max_num_seqs * _decode_query_len(s, r) * 2, 512)
        if spec.architecture == "gpt-oss" and r.version >= (0, 12, 0):
            top = 1024  # model_executor/models/config.py: "Overriding max cuda graph capture size to 1024"
    top = min(top, r.max_num_batched_tokens)
    if r.version >= (0, 12, 0):  # 1, 2, 4, steps of 8 to 248, steps of 16 from 256
        sizes = [1, 2, 4] + list(range(8, 256, 8)) + list(range(256, top + 1, 16))
    else:  # 1, 2, 4, then steps of 8
        sizes = [1, 2, 4] + list(range(8, top + 1, 8))
    return tuple(x for x in sizes if x <= top)


def graph_count(spec: ModelSpec, s: VllmSettings, r: Resolved) -> tuple[int, int]:
    """(PIECEWISE graphs, FULL graphs). config/compilation.py cudagraph_mode: PIECEWISE up to 0.10,
    FULL_AND_PIECEWISE from 0.11 (FULL graphs for uniform decode batches, at most max_num_seqs); V0 captures
    whole-model graphs (counted as FULL), one set per virtual engine: worker/model_runner.py capture_model loops
    `for virtual_engine in range(self.parallel_config.pipeline_parallel_size)` around the batch sizes, each graph
    reading that engine's KV cache (graph_runners[virtual_engine][batch_size])."""
    sizes = capture_sizes(spec, s, r)
    if not r.v1:
        return 0, len(sizes) * r.pp
    mode = _graph_mode(s, r, spec)
    q = _decode_query_len(s, r)  # v1/cudagraph_dispatcher.py: FULL decode sizes from q to q x max_num_seqs
    decode = sum(1 for x in sizes if q <= x <= q * r.max_num_seqs)
    if mode == "PIECEWISE":
        return len(sizes), 0
    if mode in ("FULL_DECODE_ONLY", "FULL"):
        return 0, decode if mode == "FULL_DECODE_ONLY" else len(sizes)
    return len(sizes), decode  # FULL_AND_PIECEWISE


def _decode_query_len(s: VllmSettings, r: Resolved) -> int:
    """Tokens a decoding request brings per step: 1 + num_speculative_tokens from 0.13 (config/vllm.py
    _set_cudagraph_sizes decode_query_len; 0.12 sized the graphs by max_num_seqs alone)."""
    return 1 + r.num_spec if r.version >= (0, 13, 0) else 1


def _graph_mode(s: VllmSettings, r: Resolved, spec: ModelSpec | None = None) -> str:
    """config/compilation.py cudagraph_mode: as given; -O0 compiles nothing and captures nothing (0.11+:
    optimization level 0 sets cudagraph_mode NONE); -O1 captures PIECEWISE graphs only (0.12+: config/vllm.py
    OPTIMIZATION_LEVEL_01, read in 0.12.0, 0.17.1 and 0.19.0); otherwise PIECEWISE up to 0.10, FULL_AND_PIECEWISE
    from 0.11 (-O2, the default, and -O3)."""
    if s.cudagraph_mode:
        return s.cudagraph_mode.upper()
    if s.optimization_level == 0 and r.version >= (0, 11, 0):
        return "NONE"
    if r.version < (0, 11, 0) or (s.optimization_level == 1 and r.version >= (0, 12, 0)):
        return "PIECEWISE"
    if _decode_query_len(s, r) > 1 and attention_backend(s, r, spec) == "FLASHINFER" and \
            (r.cc is None or r.cc[0] != 10):
        # v1/worker/gpu_model_runner.py _check_and_update_cudagraph_mode: FULL decode graphs with spec-decode need
        # UNIFORM_BATCH support, else "setting cudagraph_mode=PIECEWISE"; FlashInfer gives UNIFORM_BATCH only where
        # TRTLLM attention runs (v1/attention/backends/flashinfer.py get_cudagraph_support, SM 10.x)
        return "PIECEWISE"
    return "FULL_AND_PIECEWISE"


def attention_backend(s: VllmSettings, r: Resolved, spec: ModelSpec | None = None) -> str:
    """The attention backend vLLM runs: as named; else the first valid one of platforms/cuda.py
    _get_backend_priorities (FLASH_ATTN, FLASHINFER, TRITON_ATTN; FLASHINFER first on SM 10.x), checked by each
    backend's validate_configuration: FlashAttention holds an fp8 KV cache only as FA3 on SM 9.x
    (flash_attn.py supports_kv_cache_dtype, fa_utils.py flash_attn_supports_fp8) and head sizes that are multiples of
    8 up to 256 (up to 512 through FA4 on SM 9.x / 10.x / 11.x from 0.20, flash_attn.py supports_head_size);
    FlashInfer head sizes 64, 128 and 256, 512 from 0.22 (flashinfer.py get_supported_head_sizes). Head sizes are
    checked where the model is given (spec), for its attention layers. Read in the 0.19.0 and 0.20.0 wheels and for
    0.21 -> 0.34; "" before 0.19 (not read) and for MLA models (their own backends). 0.20 has no
    VLLM_ATTENTION_BACKEND (envs.py): the variable is ignored there, --attention-backend names it."""
    if s.attention_backend:
        return s.attention_backend.upper()
    if not r.v1 or r.version < (0, 19, 0) or r.cc is None:
        return ""
    # the 0.20+ packed caches: FlashInfer alone lists nvfp4, Triton attention alone the per-token-head types
    # (config.py nvfp4_kv_support has refused them where no backend takes them)
    if r.kv_dtype.startswith("nvfp4") and r.kv_dtype != "nvfp4_ds_mla":
        return "FLASHINFER"
    if r.kv_dtype.endswith("_per_token_head"):
        return "TRITON_ATTN"
    heads: set[int] = set()
    if spec is not None:
        if any(layer.kind is LayerKind.LATENT for layer in spec.trunk_layers):
            return ""
        heads = {d for layer in spec.trunk_layers if layer.attention is not None
                 and layer.kind in (LayerKind.FULL, LayerKind.SLIDING, LayerKind.CHUNKED)
                 for d in (layer.attention.head_dim_k, layer.attention.head_dim_v)}
    fa4 = r.version >= (0, 20, 0) and r.cc[0] in (9, 10, 11)
    # flash_attn.py supports_compute_capability: SM 8.0 and up (FA2 on SM 8.x and 12.x, fa_utils.py
    # get_flash_attn_version: FA3 on 9.x, FA4 on 10.x, else 2), so a T4 (7.5) has no FlashAttention
    fa = r.cc >= (8, 0) and all(d % 8 == 0 and d <= (512 if fa4 else 256) for d in heads) and \
        (not r.kv_dtype.startswith("fp8") or r.cc[0] == 9)
    # flashinfer.py: get_supported_head_sizes adds 512 from 0.22 (absent in 0.21.0); supports_compute_capability
    # raises its floor from 7.5 to 8.0 from 0.24 (FlashInfer "currently broken on SM75 (Turing)"; 7.5 in 0.23.0);
    # the top stays 12.1 (RTX PRO 6000 / RTX 50 are 12.0: FLASH_ATTN as FA2 for a 16-bit cache, FLASHINFER for
    # fp8, which FA2 does not hold)
    fi_heads = {64, 128, 256, 512} if r.version >= (0, 22, 0) else {64, 128, 256}
    flashinfer = heads <= fi_heads and ((8, 0) if r.version >= (0, 24, 0) else (7, 5)) <= r.cc <= (12, 1)
    order = (("FLASHINFER", flashinfer), ("FLASH_ATTN", fa)) if r.cc[0] == 10 else \
        (("FLASH_ATTN", fa), ("FLASHINFER", flashinfer))
    return next((name for name, ok in order if ok), "TRITON_ATTN")


def cudagraph_actual_bytes(spec: ModelSpec, s: VllmSettings, r: Resolved, n_layers: int | None = None,
                           draft_layers: int = 0) -> int:
    """What capture_model takes (the "took X GiB" of "Graph capturing finished") on a rank of n_layers decoder layers
    (the first pipeline stage's when not given): V1 the one-off first capture, FlashAttention 3's split buffers and a
    share per graph and layer; V0 a share per graph (see CG_ONE_OFF_HOPPER, CG_GRAPH_BASE). draft_layers: the EAGLE
    drafter's layers on this rank (drafter.py graph_layers), for model runner V2's draft-decode graphs."""
    pw, full = graph_count(spec, s, r)
    sizes = capture_sizes(spec, s, r)
    if not sizes or pw + full == 0:
        return 0
    if not r.v1:
        scale = math.sqrt(max(sizes) / 512)
        return int((CG_GRAPH_BASE + CG_GRAPH_PER_HIDDEN * spec.n_embd) * (pw + full) * scale)
    per_graph = per_graph_share(spec, r, sizes, n_layers)
    return int(first_capture(r) + fa3_split_bytes(spec, s, r) + per_graph * (pw + full)) + \
        flashinfer_workspace_in_capture(spec, s, r) + draft_decode_graph_bytes(spec, s, r, draft_layers)


# Model runner V2's draft-decode graphs (v1/worker/gpu/spec_decode/autoregressive/speculator.py 0.29 -> 0.31 and 0.34,
# target_dependent_ar/speculator.py 0.32 -> 0.33, read in those wheels): init_cudagraph_manager builds a second
# SpeculatorCudaGraphManager for the draft positions after the first, decode_query_len=1, FULL_DECODE_ONLY where the
# target's decode mode is FULL ("PIECEWISE cudagraphs are not supported for draft decodes"), else none; capture()
# captures it after the draft prefill when num_speculative_steps > 1. Its graphs are the capture sizes up to
# max_num_seqs (cudagraph_utils.py CudaGraphManager._init_candidates: uniform decode of one token a request, above
# max_num_reqs x 1 skipped). Each records _generate_fused_drafts (the k - 1 draft steps in one graph) where every
# attention group supports_draft_decode_metadata_update (FlashAttention without DCP, Triton attention; FlashInfer
# only with its TRTLLM-gen decode kernel in 0.34, not modelled), else _generate_draft (one step, replayed k - 1
# times). profile_cudagraph_memory (0.29+) measures the speculator's graphs in full, so they are in the estimate too.
# Before 0.29 (eagle_cudagraph.py EagleCudaGraphManager, decode graphs only under cudagraph_mode FULL) not read.
# Counted for a separate EAGLE head (drafter.py drafter_of); the MTP speculators' decode graphs (the checkpoint's own
# next-n layers, mtp/speculator.py on the same base class) are not.
DRAFT_DECODE_GRAPHS_FROM = (0, 29, 0)


def draft_decode_graphs(spec: ModelSpec, s: VllmSettings, r: Resolved, draft_layers: int) -> tuple[int, int, int]:
    """(graphs, drafter layers run in each, the largest graph's tokens) of model runner V2's draft-decode capture."""
    if not (draft_layers and r.runner_v2 and r.num_spec >= 2 and r.version >= DRAFT_DECODE_GRAPHS_FROM) or \
            s.enforce_eager or _graph_mode(s, r, spec) not in ("FULL_AND_PIECEWISE", "FULL", "FULL_DECODE_ONLY"):
        return 0, 0, 0
    sizes = [x for x in capture_sizes(spec, s, r) if x <= r.max_num_seqs]
    if not sizes:
        return 0, 0, 0
    fused = attention_backend(s, r, spec) in ("FLASH_ATTN", "TRITON_ATTN")  # decode context parallel: not modelled
    return len(sizes), draft_layers * (r.num_spec - 1 if fused else 1), max(sizes)


def draft_decode_graph_bytes(spec: ModelSpec, s: VllmSettings, r: Resolved, draft_layers: int) -> int:
    """The draft-decode graphs' pool: V1's share per graph and layer (CG_PER_GRAPH_LAYER, times sqrt(largest / 512),
    none on GeForce parts) for each of the drafter's layer runs in each graph; no one-off (the target's capture ran
    first)."""
    n, layers, top = draft_decode_graphs(spec, s, r, draft_layers)
    if not n or geforce_capture(r):
        return 0
    return int(CG_PER_GRAPH_LAYER * layers * math.sqrt(top / 512) * n)


def per_graph_share(spec: ModelSpec, r: Resolved, sizes: tuple[int, ...], n_layers: int | None = None) -> float:
    """V1's share per captured graph: CG_PER_GRAPH_LAYER per decoder layer of the rank (n_layers; the first stage's
    when not given), a MoE layer 1 + CG_MOE_LAYER_EXTRA, times sqrt(largest size / 512); none on GeForce parts."""
    if geforce_capture(r):
        return 0.0
    trunk = spec.n_trunk_layers
    layers = first_stage_layers(spec, r) if n_layers is None else n_layers
    moe = sum(1 for layer in spec.trunk_layers if layer.ffn.is_moe) * layers / max(trunk, 1)
    return CG_PER_GRAPH_LAYER * (layers + CG_MOE_LAYER_EXTRA * moe) * math.sqrt(max(sizes) / 512)


def first_stage_layers(spec: ModelSpec, r: Resolved) -> int:
    """The decoder layers of the first pipeline stage (config.py pp_partition, vLLM's get_pp_indices)."""
    first, last = pp_partition(spec.n_trunk_layers, r.pp, r.version, r.pp_layer_partition)[0]
    return last - first


def fa3_split_bytes(spec: ModelSpec, s: VllmSettings, r: Resolved) -> int:
    """FlashAttention 3's out_accum and softmax_lse_accum in the largest FULL graph that splits (FA3_MAX_NUM_SPLITS;
    none past FA3_SPLIT_MAX_BATCH requests): Hopper, the FlashAttention backend (whose metadata builder model runner
    V2 uses as well, v1/worker/gpu/attn_utils.py). Each buffer a block of the pool, rounded to 2 MiB."""
    if not r.v1 or r.cc is None or r.cc[0] != 9 or attention_backend(s, r, spec) not in ("", "FLASH_ATTN"):
        return 0
    if not graph_count(spec, s, r)[1]:
        return 0
    attention = [layer.attention for layer in spec.trunk_layers if layer.attention is not None
                 and layer.kind in (LayerKind.FULL, LayerKind.SLIDING, LayerKind.CHUNKED)]
    if not attention or any(layer.kind is LayerKind.LATENT for layer in spec.trunk_layers):
        return 0  # MLA runs its own backends
    q = _decode_query_len(s, r)
    split = [x for x in capture_sizes(spec, s, r) if q <= x <= q * r.max_num_seqs and x // q <= FA3_SPLIT_MAX_BATCH]
    if not split:
        return 0
    heads = max(max(a.n_heads for a in attention) // r.tp, 1)
    dv = max(a.head_dim_v for a in attention)
    tokens = max(split)

    def block(n: int) -> int:
        return -(-n // (2 * MiB)) * 2 * MiB

    return block(FA3_MAX_NUM_SPLITS * heads * tokens * dv * 4) + block(FA3_MAX_NUM_SPLITS * heads * tokens * 4)


def cudagraph_estimate_bytes(spec: ModelSpec, s: VllmSettings, r: Resolved, n_layers: int | None = None,
                             draft_layers: int = 0) -> int:
    """vLLM's own estimate ("Estimated CUDA graph memory: X GiB total"; in the budget from 0.20), from the capture's
    own terms (cudagraph_actual_bytes) in the shape of the runner's profile_cudagraph_memory, which captures into a
    throwaway pool before the KV cache exists:
    - V1 runner (v1/worker/gpu_model_runner.py, 0.18 with VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1, 0.19 -> 0.33;
      read in 0.18.0 and 0.19.0): the two largest graphs of each mode (get_capture_descs: PIECEWISE first, then
      FULL, largest first), each sample a torch.cuda.mem_get_info() difference around its warm-ups and capture,
      extrapolated: max over the modes of the first capture (FULL's with FlashAttention 3's split buffers, its
      seq_lens min(max_model_len, max_num_tokens // size)) + per mode max(second capture, 1 MiB) x (graphs - 1)
      ("Use at least 1 MiB per graph for driver overhead").
    - V2 runner (v1/worker/gpu/cudagraph_utils.py profile_cudagraph_memory, 0.29 -> 0.34; nothing before,
      profile.py cudagraphs_in_budget): capture_model itself, every PIECEWISE graph measured, FULL graphs from the
      two largest (_extrapolate_full_graph_memory: first + (n - 1) x max(second, 1 MiB)).
    On model runner V1 the first FULL capture carries FlashInfer's workspace for every model FlashInfer serves
    (flashinfer_workspace_in_estimate: the profiling builders are new). Before 0.19 (no estimate) it stands for
    the graphs a rank holds."""
    pw, full = graph_count(spec, s, r)
    sizes = capture_sizes(spec, s, r)
    if not sizes or pw + full == 0:
        return 0
    if piecewise_only_ampere_geforce(r, pw, full):
        layers = first_stage_layers(spec, r) if n_layers is None else n_layers
        return int(CG_EST_PW_FIRST_AMPERE + CG_EST_PW_PER_LAYER_AMPERE * layers * (pw - 1)) + \
            draft_decode_graph_bytes(spec, s, r, draft_layers)
    per_graph = per_graph_share(spec, r, sizes, n_layers)
    if r.runner_v2:
        fulls = per_graph + max(per_graph, MiB) * (full - 1) if full else 0
        extrapolated = per_graph * pw + fulls
    else:
        extrapolated = max(per_graph, MiB) * (max(pw - 1, 0) + max(full - 1, 0))
    return int(first_capture(r) + fa3_split_bytes(spec, s, r) + extrapolated) + \
        flashinfer_workspace_in_estimate(spec, s, r) + draft_decode_graph_bytes(spec, s, r, draft_layers)


def piecewise_only_ampere_geforce(r: Resolved, pw: int, full: int) -> bool:
    """vLLM's estimate of a run that captures PIECEWISE graphs alone, on model runner V1 from 0.19 (the first
    release with profile_cudagraph_memory) to 0.33, on an Ampere GeForce part (SM 8.6, the driver's name says
    GeForce): CG_EST_PW_FIRST_AMPERE and CG_EST_PW_PER_LAYER_AMPERE."""
    return pw > 0 and full == 0 and r.v1 and not r.runner_v2 and (0, 19, 0) <= r.version < (0, 34, 0) and \
        r.cc == (8, 6) and geforce_capture(r)


def flashinfer_workspace_in_estimate(spec: ModelSpec, s: VllmSettings, r: Resolved) -> int:
    """FLASHINFER_WORKSPACE inside vLLM's own estimate wherever FlashInfer attention runs FULL graphs on model runner
    V1 (0.19 -> 0.33), hybrid or not, where capture_model's "took" holds it only for the hybrids
    (flashinfer_workspace_in_capture). gpu_model_runner.py profile_cudagraph_memory (read in 0.19.0 and 0.20.0) first
    builds a minimal KV cache (_init_minimal_kv_cache_for_profiling -> initialize_kv_cache ->
    initialize_metadata_builders: new builders, FlashInferMetadataBuilder._workspace_buffer None), and nothing has
    run attention before it (profile_run's _dummy_run builds no attention metadata; FlashInferImpl.forward returns
    on attn_metadata None), so the first FULL warm-up (_warmup_and_capture: force_attention for FULL) allocates the
    workspace (_get_workspace_buffer, torch.zeros of VLLM_FLASHINFER_WORKSPACE_BUFFER_SIZE) between that sample's
    two torch.cuda.mem_get_info() readings; on SM 10.x the TRTLLM paths take the module's
    trtllm_gen_workspace_buffer instead (_get_trtllm_gen_workspace_buffer, the same size), first allocated there as
    well. The kernel warm-up that allocates it before capture_model runs only after the budget is set
    (gpu_worker.py compile_or_warm_up_model). Not for MLA models (attention_backend: their own backends)."""
    if not r.v1 or r.runner_v2 or not (0, 19, 0) <= r.version < (0, 34, 0) or \
            attention_backend(s, r, spec) != "FLASHINFER":
        return 0
    return FLASHINFER_WORKSPACE if graph_count(spec, s, r)[1] else 0


def first_capture(r: Resolved) -> int:
    """V1's one-off first capture: CG_ONE_OFF_HOPPER on Hopper parts, elsewhere by the GPU's SM count (the catalog's,
    on its Device) on the line through the GB10 and the RTX 5090; the H100's where the GPU is not known."""
    if r.cc is None or r.cc[0] == 9 or r.sm_count is None:
        return CG_ONE_OFF_HOPPER
    return CG_FIRST_AT_LOW + CG_FIRST_PER_SM * (r.sm_count - CG_FIRST_SM_LOW)


def flashinfer_workspace_in_capture(spec: ModelSpec, s: VllmSettings, r: Resolved) -> int:
    """FLASHINFER_WORKSPACE where capture_model is the first to build FlashInfer metadata: a hybrid model (recurrent
    layers beside attention), FlashInfer attention, FULL graphs, model runner V1, 0.21 -> 0.33."""
    if not r.v1 or r.runner_v2 or not (0, 21, 0) <= r.version < (0, 34, 0) or \
            attention_backend(s, r, spec) != "FLASHINFER":
        return 0
    kinds = {layer.kind for layer in spec.trunk_layers}
    if LayerKind.RECURRENT not in kinds or kinds <= {LayerKind.RECURRENT, LayerKind.NONE}:
        return 0
    return FLASHINFER_WORKSPACE if graph_count(spec, s, r)[1] else 0


def geforce_capture(r: Resolved) -> bool:
    """A GeForce part, whose V1 capture takes about the one-off alone (see CG_FIRST_PER_SM and the GeForce note
    beside FLASHINFER_WORKSPACE): the driver's name for the GPU says so ("NVIDIA GeForce RTX 3090")."""
    return r.geforce


def nccl_in_graphs(r: Resolved, s: VllmSettings | None = None) -> bool:
    """The TP all-reduces inside the graphs run through NCCL: more than two GPUs without NVLink (custom_all_reduce.py
    CustomAllreduce.__init__), a TP group across machines, where the custom all-reduce is off ("this process group
    spans across nodes", config.py tp_spans_nodes), or --disable-custom-all-reduce at any TP size (0.8.0
    v1/worker/gpu_worker.py and worker/worker.py init_worker_distributed_environment:
    set_custom_all_reduce(not parallel_config.disable_custom_all_reduce); cuda_communicator.py then makes no
    CustomAllreduce, so CudaCommunicator.all_reduce takes pynccl_comm.all_reduce, which graph_capture enables on the
    capture stream; 0.5.4's GroupCoordinator.all_reduce likewise).
    Two PCIe GPUs keep the custom all-reduce where P2P works, which the GPU's name does not say: not counted there."""
    return (r.tp > 2 and not r.nvlink) or (r.tp > 1 and (r.tp_spans_nodes or bool(s and s.disable_custom_all_reduce)))


def nccl_graph_bytes(spec: ModelSpec, s: VllmSettings, r: Resolved, n_layers: int, first_stage: bool = True) -> int:
    """NCCL's memory for the all-reduces the graphs of one rank capture (NCCL_GRAPH_PER_ALLREDUCE each): per layer the
    attention output (RowParallelLinear o_proj) and the MLP / MoE output (down_proj, or the MoE block's one
    tensor_model_parallel_all_reduce), plus VocabParallelEmbedding's on the first stage; per captured graph (FULL
    graphs capture them again beside the PIECEWISE ones). 0 from 0.9 (NCCL >= 2.22: the work in the kernel
    arguments)."""
    if s.enforce_eager or not nccl_in_graphs(r, s) or r.at_least("nccl_work_in_args"):
        return 0
    pw, full = graph_count(spec, s, r)
    return NCCL_GRAPH_PER_ALLREDUCE * (pw + full) * (2 * n_layers + (1 if first_stage else 0))


def sampler_warmup_bytes(spec: ModelSpec, s: VllmSettings, r: Resolved) -> int:
    """The peak the post-capture sampler warm-up needs (V1 from 0.8.0: gpu_worker.py compile_or_warm_up_model has
    no _dummy_sampler_run before, settings.ERAS v1_dummy_sampler; the last pipeline stage only)."""
    if not r.v1 or not r.at_least("v1_dummy_sampler"):
        return 0
    if r.runner_v2:
        factor = SAMPLER_WARMUP_FACTOR_V2
    elif sort_sampler(s, r):
        factor = SAMPLER_WARMUP_FACTOR_SORT
    else:
        factor = SAMPLER_WARMUP_FACTOR if triton_mxfp4_moe(spec, r) else SAMPLER_WARMUP_FACTOR_DENSE
    return int(factor * sampler_bytes(spec, s, r, warmup=True))


def capture_bytes(spec: ModelSpec, s: VllmSettings, r: Resolved, n_layers: int | None = None,
                  first_stage: bool = True, draft_layers: int = 0) -> int:
    """What one rank's CUDA-graph capture holds once it is done: the graph pool and the driver's share
    (cudagraph_actual_bytes) and, beyond two PCIe GPUs, NCCL's (nccl_graph_bytes); 0 under --enforce-eager."""
    cg = 0 if s.enforce_eager else cudagraph_actual_bytes(spec, s, r, n_layers, draft_layers)
    if cg:
        layers = spec.n_trunk_layers if n_layers is None else n_layers
        cg += nccl_graph_bytes(spec, s, r, layers, first_stage)
    return cg


@dataclass(frozen=True)
class Phase:
    """One start-up phase on one GPU: its bytes, whether the utilization budget counts them, whether they stay
    (transient: freed at the end of the phase) and the device memory free once the phase has run (at its peak
    for a transient phase); None when the GPU's memory is not known."""

    name: str
    bytes: int
    in_budget: bool
    transient: bool = False
    free_after: int | None = None

    def to_dict(self) -> dict:
        return {"phase": self.name, "bytes": self.bytes, "in_budget": self.in_budget, "transient": self.transient,
                "free_after_bytes": self.free_after}


@dataclass(frozen=True)
class Failure:
    """The first phase that runs past the device's memory: its name, what it needs, what was left."""

    phase: str
    needed: int
    left: int
    after_kv: bool


def kept_phase_name(spec: ModelSpec, s: VllmSettings, r: Resolved) -> str:
    """The phase of what the profile run builds and keeps (RankMemory.kept): the b12x MoE wrappers' workspaces
    (profile.py b12x_workspace_bytes) or DeepSeek-V4's workspace buffer (dsv4_workspace_bytes)."""
    if b12x_moe(spec, s, r):
        return "FlashInfer b12x MoE workspaces (built in the profile run, kept)"
    return "DeepSeek-V4 prefill / indexer workspace (reserved in the profile run, kept)"


def startup_phases(spec: ModelSpec, s: VllmSettings, r: Resolved, total: int | None, m: RankMemory, kv: int,
                   last_stage: bool, n_layers: int | None = None, first_stage: bool = True, draft_layers: int = 0
                   ) -> tuple[tuple[Phase, ...], Failure | None]:
    """The phases of one rank in vLLM's order, with the free memory after each, and the first that fails. n_layers:
    the rank's decoder layers (its pipeline stage), for NCCL's share of the capture (nccl_graph_bytes); draft_layers:
    the drafter's, for model runner V2's draft-decode graphs (draft_decode_graph_bytes)."""
    budget_cg = cudagraphs_in_budget(s, r)
    cg_actual = capture_bytes(spec, s, r, n_layers, first_stage, draft_layers)
    if budget_cg:
        cg_actual = max(cg_actual, m.cudagraph)
    warmup = sampler_warmup_bytes(spec, s, r) if last_stage else 0
    steps: list[tuple[str, int, bool, bool]] = [
        ("CUDA context", m.context, False, False),
        ("weights", m.weights, True, False),
        *([("Mamba state (V0 MambaCacheManager, built in the profile run)", m.state, True, False)] if m.state else []),
        *([(kept_phase_name(spec, s, r), m.kept, True, False)] if m.kept else []),
        ("profile run (activation peak)", m.activation - m.state - m.kept, True, True),
        ("non-torch memory (NCCL / custom all-reduce buffers, cuBLAS)", m.non_torch, True, False),
        ("KV cache", kv, True, False),
    ]
    if cg_actual:
        steps.append(("CUDA graph capture", cg_actual, budget_cg, False))
    if warmup:
        steps.append(("sampler warm-up", warmup, False, True))
    phases: list[Phase] = []
    failure: Failure | None = None
    free = total
    for name, n, inside, transient in steps:
        after = None if free is None else free - n
        phases.append(Phase(name, n, inside, transient, after))
        if after is not None and after < 0 and failure is None and name not in ("weights", "KV cache"):
            # the weights not fitting and the KV budget running out are vLLM's own refusals (profile.py, kv.py)
            failure = Failure(name, n, max(free, 0), after_kv=name in ("CUDA graph capture", "sampler warm-up"))
        if free is not None and not transient:
            free = after
    return tuple(phases), failure
