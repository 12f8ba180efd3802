"""SGLang's start-up, phase by phase, on one GPU, and the lines it prints for each (model_executor/model_runner.py
load_model / init_memory_pool, cuda_graph_runner.py CudaGraphRunner, managers/scheduler.py).

mem_fraction_static is a fraction of the memory free before the weights ("Load weight begin. avail mem"): the
weights and the KV (and state) pool live inside it; the req_to_token table, the attention backend's own buffers
(init_attention_backend, between "Memory pool end" and "Capture cuda graph begin"), CUDA-graph capture, the
--enable-symm-mem pool preallocated after it (0.5.9+) and the run-time activations (one --chunked-prefill-size
chunk) come out of the (1 - mem_fraction_static) rest. The CUDA context and the distributed init are in use before
the first measurement (outside). SGLang prints "GB" for GiB.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ...units import GiB, MiB
from ..versions import Version
from ..vllm.phases import CG_GRAPH_BASE, CG_GRAPH_PER_HIDDEN
from .settings import SGLangSettings, prefill_graph_sizes, reached

# CUDA-graph capture ("Capture cuda graph end. ... mem usage=X GB": free memory before CudaGraphRunner minus free
# memory after it, model_runner.py init_device_graphs), in three parts.
#
# 1. The logits the decode graphs return. logits_processor.py _get_logits ends in logits[:, :vocab_size].float(): a
#    float32 row of the full vocabulary per request (all-gathered under TP). Up to PR #8579 (merged 2025-07-30; 0.4.10
#    is the first release after it, approximate) every captured graph kept its own output in the shared graph pool,
#    so the capture held sum(capture_bs) rows; from then cuda_graph_runner.py allocates one next_token_logits_buffer
#    (max_bs, vocab_size) float32 that every graph writes into (the PR: GLM-4.5-Air TP4, 5.16 -> 2.89 GB).
# 2. The attention backend's CUDA-graph state, init_cuda_graph_state: an int32 index table of max_bs rows, of
#    ceil(context_len / page_size) pages for fa3 and trtllm_mha (decode_cuda_graph_metadata["page_table"]), of
#    context_len tokens for flashinfer whatever the page size (cuda_graph_kv_indices; triton's: see TRITON_KV_SPLITS).
#    FA3 up to PR #8567 (merged 2025-07-30, same release) also kept page_table[req_pool_indices, :], a copy, for every
#    captured size (the PR: 5.16 -> 3.22 GB on the same run).
#    FlashInfer also builds num_wrappers new BatchDecodeWithPagedKVCacheWrapper(use_cuda_graph=True) for every captured
#    size (flashinfer_backend.py init_forward_metadata_capture_cuda_graph, decode_cuda_graph_metadata[bs]); each
#    allocates an 8 MiB int workspace on the GPU (flashinfer decode.py __init__). num_wrappers is 2 for sliding-window
#    models (and cross attention), else 1; its index table is kept once per wrapper. FlashInfer, triton and aiter
#    (not fa3, not trtllm_mha, which overrides init_cuda_graph_state) also allocate, for the main model's backend
#    (skip_prefill False), a uint8 cuda_graph_custom_mask of max_bs x context_len, once (flashinfer_backend.py,
#    triton_backend.py, aiter_backend.py init_cuda_graph_state; 0.4.3.post4, 0.5.5, 0.5.10 and 0.5.23 read).
# 3. The rest: per captured graph and decoder layer on the rank. "mem usage" is the free memory before CudaGraphRunner
#    minus the free memory after it, both read by utils get_available_gpu_memory with empty_cache=True (0.4.3.post4,
#    0.5.5, 0.5.10 read), so the eager warm-up runs before each capture (capture_one_batch_size: two run_once calls
#    outside the graph) leave nothing behind in PyTorch's cache: what stays is the shared graph pool (the largest
#    graph's activations, captured first, reversed(capture_bs); the smaller graphs reuse it), the tensors above, and
#    what lives outside PyTorch's allocator: each instantiated graph's executable, whose kernel nodes grow with the
#    layers it runs. Over the logs the rest per graph and layer runs 0.33-0.48 MiB (QwQ-32B's 0.65 is 0.41 once its
#    smallest-first capture is charged, capture_order_extra below; per graph alone 11-33 MiB, as a
#    constant 0.37-1.17 GiB), so it is costed per graph and layer: CG_PER_GRAPH_LAYER, fitted (least squares of the
#    relative error of the printed totals) on the five runs whose other parts are all source-derived, each named with
#    its own rest per graph and layer: sglang#11830 (a Qwen2-7B layout on a B200, 52 sizes to 512, 28 layers, 1.44 GB;
#    tests/fixtures/engine_logs/sglang/unnamed-qwen2-7b-b200-capture-pr11830.json; FlashInfer: its pool has pages of 1,
#    so not trtllm_mha, FA3 is Hopper-only, and FlashInfer is the else branch of _get_default_attn_backend for an MHA
#    model, so its 52 decode wrappers' 8 MiB workspaces and its 16 MiB custom mask are the backend's) 0.468 MiB;
#    GLM-4.5-Air TP4 with both PRs (FA3, 35 sizes to 256, 46 layers, 0.95 GB; glm-4.5-air-tp4-capture-prs8579-8567.json)
#    0.433; Qwen3-0.6B on an MI300X (gpustack#4424, 0.5.8, aiter, 52 sizes, 28 layers, 0.96 GB) 0.416; Llama-3.1-70B
#    at TP8 across two GH200 nodes (fa3, 36 sizes, 80 layers, 1.32 GB) 0.415; Llama-3.1-70B at TP8 on H200s
#    (sglang#11716, fa3, 52 sizes to 512, 80 layers, context 131,072, 1.98 GB) 0.366. The fit is 0.408 MiB; the five
#    come to -5.9, -4.1, -1.2, -1.4 and +8.7%, and to -6.4, -5.1, -1.5, -2.1 and +12.1% each left out of the fit in
#    turn. (0.4505, the mean of the first two alone, put sglang#11716 at +17%.)
#    Tried on the same five, each left out in turn (least squares of the bytes), and not kept (worst held-out error;
#    the rest alone: 12.3%): the graph pool's share of the largest graph's logits temporaries (its bf16 rows, gathered
#    and copied under TP: logits_processor.py _get_logits, parallel_state.py all_gather) beside the per-graph-and-layer
#    rest, 17.6%; a constant per graph beside it, 10.3% (but Apertus +22%); a share per captured request, 12.0%. So the
#    rest stays one figure. sglang#11716's progress lines (free memory read without emptying the cache) show about 15 MiB a graph
#    between sizes 216 and 168, under the 33 MiB the rule gives a graph of 80 layers: the first (largest) graph holds
#    more than its share, the smaller ones less; that split is not modelled.
#    Held out and held: Qwen2.5-7B with FlashInfer on an A100-40GB (sglang#9616, 0.5.1, 23 sizes to 160, 28 layers)
#    0.56 -> 0.55 (-1.6%; 0.42 MiB a graph and layer); QwQ-32B at TP4 on 4x L4 (0.4.3.post4, flashinfer, 13 sizes to
#    80, 64 layers) 0.93 -> 0.925 (-0.6%), 0.73 (-21%) before its smallest-first capture order was charged
#    (capture_order_extra below: 194 MiB).
#    Misses, strict xfails: Apertus-8B at TP4 on one GH200 node (fa3, 36 sizes, 32 layers) 0.53 -> 0.62 (+16%; 0.33
#    MiB a graph and layer, against 0.415 on the two-node Llama run of the same harness and release);
#    Olmo 3 32B on a B200 (trtllm_mha, 52 sizes, 64 layers) 8.60 -> 1.52 (-82%; 2.6 MiB); Qwen2.5-VL-7B at TP2 PP2
#    (sglang#13075, flashinfer, 36 sizes, 14 layers a stage, PP1's figure) 1.06 -> 0.78 (-26%; 0.98 MiB);
#    Qwen3-30B-A3B-FP8 at TP2 (sglang#12978, fa3, 36 sizes, 48 layers, the same author's card and build of the day
#    before) 1.00 -> 0.87 (-13%; 0.48 MiB, at the fitted runs' edge: Qwen2.5-VL's excess is its run's, not the card's).
#    Held out since, no refit (tests/test_sglang_heldout9.py): two TP2 runs with custom all-reduce, Qwen3-32B-FP8 on
#    two 48 GB RTX 4090s (sglang#16920, 0.5.7 era, flashinfer, 8 sizes, 64 layers) 0.27 -> 0.29 (+7.8%; 0.37 MiB a graph
#    and layer) and Llama-3-8B on two H200s (sglang PR #7873, fa3, 35 sizes, 32 layers) 0.6 -> 0.58 (about 0.43 MiB):
#    no per-graph share for TP2's all-reduce, whose registered inputs go to the rank_data buffer (see below).
#    Read for them and ruled out (0.5.5 and 0.5.6, the flashinfer 0.5.0 and 0.5.3 they pin): Olmo 3's backend keeps one
#    (max_bs, pages) page table whose per-size metadata are slices (trtllm_mha_backend.py init_cuda_graph_state /
#    init_forward_metadata_capture_cuda_graph); flashinfer decode.py trtllm_batch_decode_with_kv_cache allocates only
#    its output per call, its scratch being the backend's 512 MiB workspace; olmo2.py's q/k norms
#    (RMSNorm.forward_native over the whole q and k) make float32 temporaries freed inside the graph, and its logits go
#    to the shared buffer (its 37.99 s of capture is no clue: a cold start's JIT took 25 s against 3.5 s warm at the
#    same 0.56 GB in sglang#9616). Qwen2.5-VL's gap is 7.9 MiB a graph, one more
#    8 MiB buffer per captured size, which nothing read allocates: the decode wrapper with tensor cores (GQA 7 at TP2,
#    flashinfer_backend.py should_use_tensor_core) takes its 8 MiB int workspace and a (bs + 1) qo_indptr only
#    (decode.py BatchDecodeWithPagedKVCacheWrapper.__init__), and plan() runs the fa2 prefill module on the buffers it
#    is given. Its PP is the PR's own (0.5.5's Qwen2_5_VLForConditionalGeneration.forward takes no pp_proxy_tensors;
#    0.5.6 read): PP1 runs Qwen2Model's 14 layers (make_layers by pipeline rank) and the logits, and the proxies
#    run_once clones are 3.5 MiB at 256 requests. Its rotary embedding (MRotaryEmbedding, rotary_embedding.py 0.5.5)
#    runs _forward_triton under torch.compile(dynamic=True), the Triton kernel behind @torch._dynamo.disable (two
#    inductor graphs and an eager kernel a layer, nothing kept), and _match_cos_sin_cache_dtype swaps the float32
#    cache (128,000 x 128) for a bf16 copy at the first forward, inside this window: 31 MiB less, not more. Were
#    PP1's graphs to run all 28 layers its rest would be 0.49 MiB, the same author's Qwen3-30B figure; but the stage
#    loads 14 (the printed token count, a 28-layer pool beside 14 layers' weights) and 0.5.6's Qwen2Model runs
#    start_layer..end_layer only. Olmo 3: the PR's last progress line (bs=1 avail_mem=25.10 GB, read without emptying the cache, which
#    torch.cuda.graph empties on entering each capture) sits 0.01 GiB above the end figure, so the 8.60 GiB is held
#    by the larger 51 graphs or by one-off costs of the first, not left cached. Apertus-8B runs more kernels a layer
#    than Llama (XIELU, activation.py 0.5.10: a dozen elementwise ops in the torch fallback, and q/k norms) yet
#    leaves less a graph and layer, so the kernel count is no proxy for the rest either.
#    NCCL: the two-node run has custom all-reduce off (distributed/device_communicators/custom_all_reduce_utils.py
#    0.5.10: "disabled because this process group spans across nodes"), so its graphs capture 161 NCCL all-reduces
#    each, and QwQ-32B's (4 PCIe GPUs, "not supported on more than two PCIe-only GPUs") 129; yet the two-node run's
#    rest per graph and layer (0.415 MiB) is the one-node TP1 runs' (0.42-0.47), and QwQ-32B's is too once its
#    capture order is charged, so no NCCL share is added. That is
#    NCCL's own rule from 2.22 on: a captured collective's work travels in the kernel arguments, or from the
#    communicator's pool, not in an allocation of its own (src/enqueue.cc finishPlan / uploadWork; vLLM's
#    NCCL_GRAPH_PER_ALLREDUCE charges it up to 0.8.5, whose torch ships NCCL 2.21, and would add 2.77 GiB here: 4.07
#    vs 1.32 printed). Up to 2.21 a collective captured into a graph is a persistent plan whose work NCCL copies into a
#    cudaMalloc of its own, kept as long as the graph (enqueue.cc uploadWork: ncclCudaMalloc(&plan->workHead, nWork),
#    2.21.5: nWork 512-byte ncclWork, a few KiB; SGLang sets NCCL_CUMEM_ENABLE=0, entrypoints/engine.py, so a
#    cudaMalloc). QwQ-32B's build prints "sglang is using nccl==2.21.5" (torch 2.5.1's): its 13 graphs hold
#    13 x (2 x 64 + 1) all-reduces and 13 logits all-gathers, and with its capture order charged the log leaves no
#    measurable share for them (vLLM's NCCL_GRAPH_PER_ALLREDUCE, 0.49 MiB on a 535 driver, would put QwQ-32B at
#    1.73 GiB, +86%), so none is modelled.
#    Custom all-reduce registers each graph's all-reduce inputs after the capture ("Registering 2340 cuda graph
#    addresses" on the Apertus run: 36 graphs x 65; 8372 = 52 x 161 on sglang#11716) into the rank_data buffer
#    CustomAllreduce.__init__ allocates once, before the capture (custom_all_reduce.py 0.5.10), so no share. None
#    of these runs set --enable-torch-compile (graphs of torch_compile_max_bs and below run compiled code; not
#    modelled) or the memory saver (_capture_graph takes torch_memory_saver's cuda_graph only with
#    --enable-memory-saver and SGLANG_MEMORY_SAVER_CUDA_GRAPH).
CG_PER_GRAPH_LAYER = int(0.408 * MiB)
# From 0.5.11 (torch 2.11 and CUDA 13 wheels; settings.py ERAS graph_rest_torch211) the rest is split by what the
# capture holds: the graph pool, once, and each graph's kept share. The pool holds the largest graph's freed
# temporaries (captured first, reversed(capture_bs), the smaller graphs reuse its blocks: cuda_graph_runner.py
# capture, one global pool, 0.5.12 wheel): the lm_head's logits in the model dtype, bs x vocab x 2 B
# (logits_processor.py _get_logits, copied into next_token_logits_buffer by _copy_logits_to_buffer, then freed; 0.5.12
# and 0.5.18 wheels), rounded as PyTorch's caching allocator takes segments (_pool_bytes), then what the source does
# not size: the body's activations of the largest graph and the kernels' workspaces taken during its capture,
# CG_POOL_T211.
# Each graph then keeps what lives outside PyTorch's allocator (its executable, whose kernel nodes grow with the
# layers it runs), CG_KEPT_T211 a graph and layer: read off the progress lines of the one log that prints them
# (tests/test_sglang_heldout13.py, Qwen3-30B-A3B-FP8 on an H100, 0.5.18, 48 layers: 10.64 GB free before the second
# graph, 10.55 before the last, so 0.09 GB for the 34 graphs between, each reusing the largest's pool; the largest
# took 0.13). CG_POOL_T211 is fitted (the smallest worst relative error) on the logs that print this capture on a
# discrete GPU: Qwen3-8B, 0.5.12, trtllm_mha on SM100, 52 graphs of 36 layers, 0.60 GB (tests/test_sglang_heldout14.py
# D); Qwen3-30B-A3B-FP8, 0.5.18, triton, 36 of 48, 0.34 GB; Qwen3.8-27B-FP8, 0.5.18, fa3, 8 of 64, 0.10 GB
# (tests/test_sglang_heldout12.py; the last two after the prefill capture, on a stream of their own, so with their
# own pool): 0.580, 0.328 and 0.103 GiB (-3.4, -3.5, +3.4 %; the worst is Qwen3-30B's). Qwen3-32B at 0.5.19 (36 of
# 64, 0.13 GB: its decode graphs' activations come out of the prefill pool, after_prefill_capture) is not fitted:
# the kept share and its index tables give 0.135 GiB (+3.8 %). Against the 0.408 MiB a graph and layer of the torch
# 2.9 releases, these logs left 0.09-0.17 MiB. The Qwen2.5-1.5B logs on a GB10 (tests/test_sglang_heldout14.py A-C,
# 0.5.11: 2.23-3.12 GB printed, their first graph alone 1.30-2.17 GB, the host's allocations counted on unified
# memory) are not fitted. All these logs run CUDA (ROCm keeps CG_PER_GRAPH_LAYER: its wheels are not these) on one
# GPU; a rank whose graphs capture collectives (--tp-size > 1) keeps CG_PER_GRAPH_LAYER (and after_prefill_capture's
# CG_KEPT_PER_GRAPH_LAYER, read off a TP8 run): no 0.5.11+ log at TP > 1 prints its capture, and the two 0.5.11+ TP outcomes in tests put more in use than the one-GPU rule leaves
# (GLM-5.2 FP8 at TP8, 0.5.13.post1: free at the end 12.25 GiB against 8.69 printed, 12.91 with the one-GPU rule,
# tests/test_sglang_heldout13.py; NVIDIA/srt-slurm#172, DeepSeek-R1 FP4 at TP4 on GB200 with --enable-symm-mem, out
# of memory at the 4 GiB symmetric pool with 2.21 GiB free, which the one-GPU rule would leave fitting by 0.7 GiB,
# tests/test_fit_outcomes2.py). What the captured collectives hold (NCCL's registration of graph buffers, the
# symmetric-memory pool's allocations during capture: distributed/device_communicators/pynccl_allocator.py
# SymmetricMemoryContext, 0.5.11 wheel) is not sized from the source read.
CG_KEPT_T211 = int(0.09 * GiB / 34 / 48)
CG_POOL_T211 = 40 * MiB
LOGITS_BYTES = 4  # float32
FLASHINFER_INT_WORKSPACE = 8 * MiB
CUSTOM_MASK_BACKENDS = frozenset({"flashinfer", "triton", "aiter"})
DSA_BACKENDS = frozenset({"nsa", "dsa"})  # DeepseekSparseAttnBackend (0.5.13.post1 prints "dsa", "nsa" an alias)
# triton_backend.py init_cuda_graph_state (0.4.3.post4, 0.4.4, 0.4.6.post5, 0.4.9, 0.5.5, 0.5.10 read) also keeps the
# split-K decode partials for max_bs requests: float32 (max_bs, heads, max_kv_splits, v_head_dim) and their
# (max_bs, heads, max_kv_splits) log-sum-exp (up to 0.4.4 one buffer of v_head_dim + 1: the same bytes), heads and
# v_head_dim the rank's (the latent's width under MLA); max_kv_splits is --triton-attention-num-kv-splits, 8 in every
# release read (not taken by oomkit). Its index table is by token, not page: max_bs x context_len, int64 from 0.5.1
# (the sliding-window one beside it, max_bs x window, not counted).
TRITON_KV_SPLITS = 8


def _default_list(v: Version, s: SGLangSettings, max_bs: int, gpu_mib: int | None, hip: bool) -> list[int]:
    """The list get_batch_sizes_to_capture starts from (0.5.3+: server_args.py _generate_cuda_graph_batch_sizes),
    before the pool, the alignment and cuda_graph_max_bs (settings.py ERAS capture_*)."""
    spec = bool(s.speculative_algorithm)
    if reached(v, "capture_list_by_max_bs"):
        if s.disable_cuda_graph_padding:
            sizes = list(range(1, max_bs + 1))
        elif not spec:
            sizes = [1, 2, 4, 8, 12] + list(range(16, 257, 8)) + list(range(272, 512, 16)) + list(
                range(512, max_bs + 1, 32))
        else:  # 40..64 step 4 (0.5.5; 0.5.3-0.5.4 stop at 60)
            sizes = (list(range(1, 9)) + list(range(10, 33, 2))
                     + list(range(40, 65 if reached(v, "capture_spec_64") else 64, 4)) + list(range(72, 257, 8))
                     + list(range(272, max_bs + 1, 16)))
        sizes = [x for x in sizes if x <= max_bs]
        if reached(v, "capture_adds_max_bs") and max_bs not in sizes:
            sizes.append(max_bs)
        return sizes
    if spec and reached(v, "capture_spec_list"):
        if reached(v, "capture_spec_list_0_4_7"):
            sizes = list(range(1, 9)) + list(range(10, 33, 2)) + list(range(40, 64, 8)) + list(range(80, 161, 16))
        elif reached(v, "capture_spec_list_0_4_5"):
            sizes = list(range(1, 9)) + list(range(10, 33, 2)) + list(range(40, 161, 16))
        else:
            sizes = list(range(1, 33))
    elif s.disable_cuda_graph_padding:
        sizes = list(range(1, 32 if v < (0, 4, 1) else 33)) + (
            list(range(48, 161, 16)) if reached(v, "capture_spec_list_0_4_7") else
            list(range(40, 161, 16)) if reached(v, "capture_spec_list_0_4_5") else
            [64, 96, 128, 160] if reached(v, "capture_spec_list") else [64, 128])
    else:
        sizes = [1, 2, 4] + list(range(8, 161, 8))
    if reached(v, "capture_by_gpu_mem"):
        if gpu_mib is not None:
            line = (90 * 1024 if reached(v, "capture_90gib") else 96 * 1024 if reached(v, "capture_96gib")
                    else 81920)
            dp_ok = s.dp_size == 1 or not reached(v, "capture_dp1_only") or reached(v, "capture_96gib")
            if gpu_mib > line and dp_ok:
                sizes += list(range(160, 257, 8))
            if reached(v, "capture_512") and gpu_mib > (160_000 if reached(v, "capture_90gib") else 180_000):
                sizes += list(range(256, 513, 16))
    elif hip and reached(v, "capture_hip_256"):
        sizes += list(range(168, 257, 8))
    return sizes


def _gathered_buffer(s: SGLangSettings) -> bool:
    """utils.py require_gathered_buffer (0.4.10+): require_mlp_tp_gather or require_attn_tp_gather."""
    a2a = s.enable_deepep_moe or (s.moe_a2a_backend or "none") != "none"
    if s.enable_dp_attention and s.dp_size > 1:
        mlp = (s.moe_dense_tp_size is None or not s.enable_dp_lm_head or not a2a
               or s.moe_dense_tp_size > s.tp_size // s.dp_size)
        if mlp:
            return True
    if a2a or s.moe_dense_tp_size == 1:
        return s.dp_size < s.tp_size if s.enable_dp_attention else True
    return False


def capture_alignment(s: SGLangSettings, v: Version) -> int:
    """mul_base (0.4.10+; get_cuda_graph_batch_size_alignment from 0.5.18): 2 with two-batch overlap, times the
    attention-TP size (tp_size / dp_size under --enable-dp-attention) where a gathered buffer is needed."""
    if not reached(v, "capture_align_attn_tp"):
        return 1
    base = 2 if s.enable_two_batch_overlap else 1
    if _gathered_buffer(s):
        base *= max(1, s.tp_size // (s.dp_size if s.enable_dp_attention else 1))
    return base


def capture_bs(max_bs: int, v: Version, pool_size: int | None = None, *, s: SGLangSettings | None = None,
               gpu_mib: int | None = None, hip: bool = False) -> tuple[int, ...]:
    """The decode batch sizes SGLang captures (cuda_graph_runner.py get_batch_sizes_to_capture; settings.py ERAS
    capture_*, every rule with the release that brought it): the list (given with --cuda-graph-bs, else by release,
    speculative decoding, --disable-cuda-graph-padding and GPU memory: gpu_mib, as get_device_memory_capacity reads
    it, None: unknown; hip: ROCm), the req_to_token pool's size (pool_size; None: not known) joining it where the
    list runs past it, the alignment (two-batch overlap, the attention-TP size under DP attention), cuda_graph_max_bs
    (max_bs: a filter, and up to 0.5.2 an extension by 16 past the list's end; from 0.5.3 the list is built from it),
    and the pool's size as the last cap. Up to 0.4.6.post3 a CUDA GPU's list ends at 160 (256 above 81,920 MiB from
    0.4.5.post3) whatever max_bs says."""
    s = s or SGLangSettings()
    if max_bs <= 0:
        return ()
    given = list(s.cuda_graph_bs) if s.cuda_graph_bs and reached(v, "capture_bs_flag") else None
    if given is not None:
        sizes = given + (list(range(168, 257, 8)) if hip and reached(v, "capture_hip_256")
                         and not reached(v, "capture_spec_list_0_4_5") else [])
    else:
        sizes = _default_list(v, s, max_bs, gpu_mib, hip)
    mul = capture_alignment(s, v)
    tokens = (s.speculative_num_draft_tokens or 1) if s.speculative_algorithm else 1
    if s.enable_two_batch_overlap or not reached(v, "capture_align_tokens"):
        tokens = 1  # "tbo not test, set num_tokens_per_bs to 1"
    pool = pool_size if pool_size is not None and pool_size > 0 else None
    if pool is not None:
        if reached(v, "capture_pool_aligned"):
            pool = -(-pool // mul) * mul  # "pad num_max_requests to avoid being filtered out"
        if sizes and max(sizes) > pool and reached(v, "capture_adds_pool_size"):
            sizes += [pool] if reached(v, "capture_adds_size_only") else [pool - 1, pool]
    if s.enable_two_batch_overlap and not reached(v, "capture_align_attn_tp"):
        if reached(v, "capture_tbo_even"):
            sizes = [x for x in sizes if x % 2 == 0]
        elif reached(v, "capture_tbo_ge2"):
            sizes = [x for x in sizes if x >= 2]
    sizes = [x for x in sizes if x * tokens % mul == 0]
    if not reached(v, "capture_list_by_max_bs"):
        sizes = [x for x in sizes if x <= max_bs]
        if sizes and reached(v, "capture_extends_to_max_bs") and max(sizes) < max_bs:
            sizes += list(range(max(sizes), max_bs + 1, 16))
    if pool is not None:
        sizes = [x for x in sizes if x <= pool]
    return tuple(sorted({x for x in sizes if x > 0}))


# The capture order. From 0.4.4 cuda_graph_runner.py capture() walks reversed(capture_bs), the largest graph first
# ("Reverse the order to enable better memory sharing across cuda graphs"); up to 0.4.3.post4 it walks capture_bs
# upwards (both wheels read; settings.py ERAS capture_largest_first). The graphs share one private pool
# (torch.cuda.graph(pool=graph.pool())) whose segments PyTorch keeps while the graphs live, so what one graph frees
# serves a later capture only where it fits, by PyTorch's caching allocator (c10/cuda/CUDACachingAllocator.cpp,
# torch 2.5-2.9: sizes rounded up to 512 B; up to 1 MiB from 2 MiB segments, up to 10 MiB from 20 MiB ones, larger
# ones a segment of their own rounded up to 2 MiB; the smallest free block that fits, split when more than 1 MiB, or
# 512 B in the small pool, is left; a freed block merges with free neighbours in its segment). Largest first, each
# later graph's temporaries fit in what the first one freed: the pool holds the largest graph's, inside the rest per
# graph and layer fitted on such runs. Smallest first, the logits' big temporaries (_get_logits' bf16 logits and,
# under TP, parallel_state.py all_gather's output and its reshaped copy, 0.4.3.post4) outgrow every block freed
# before them, so each graph leaves its own segments behind. capture_order_extra runs the allocator over that path
# in both orders and charges the difference: QwQ-32B at TP4, 13 sizes to 80 (0.4.3.post4), 194 MiB.
SMALL_ALLOC, SMALL_SEGMENT, LARGE_SEGMENT, OWN_SEGMENT, SEGMENT_ROUND = MiB, 2 * MiB, 20 * MiB, 10 * MiB, 2 * MiB


def _pool_bytes(events: list[tuple[str, int]]) -> int:
    """The segments PyTorch's caching allocator takes from CUDA for a sequence of ("name", bytes) allocations and
    ("name", 0) frees in one pool (see above)."""
    segments: list[tuple[bool, list[list[int]]]] = []  # (small, blocks of [offset, size, free])
    live: dict[str, tuple[list[list[int]], int]] = {}
    total = 0
    for name, size in events:
        if size == 0:
            blocks, offset = live.pop(name)
            i = next(k for k, b in enumerate(blocks) if b[0] == offset)
            blocks[i][2] = True
            for j in (i, i - 1):  # merge with the free neighbours
                if 0 <= j < len(blocks) - 1 and blocks[j][2] and blocks[j + 1][2]:
                    blocks[j][1] += blocks.pop(j + 1)[1]
            continue
        n = max(512, -(-size // 512) * 512)
        small = n <= SMALL_ALLOC
        fits = [(b[1], blocks, b) for sm, blocks in segments if sm == small for b in blocks if b[2] and b[1] >= n]
        if fits:
            _, blocks, block = min(fits, key=lambda f: f[0])
        else:
            seg = SMALL_SEGMENT if small else LARGE_SEGMENT if n < OWN_SEGMENT else -(-n // SEGMENT_ROUND) * SEGMENT_ROUND
            blocks = [[0, seg, True]]
            segments.append((small, blocks))
            total += seg
            block = blocks[0]
        left = block[1] - n
        if left >= 512 if small else left > SMALL_ALLOC:
            at = next(k for k, b in enumerate(blocks) if b is block)
            blocks.insert(at + 1, [block[0] + n, left, True])
            block[1] = n
        block[2] = False
        live[name] = (blocks, block[0])
    return total


def _logits_events(sizes: list[int], vocab: int, tp: int, rows: int) -> list[tuple[str, int]]:
    """The logits path of each graph up to 0.4.9 (no shared buffer): the bf16 logits of the rank's vocabulary slice,
    under TP the all-gather's output and its reshaped copy, then the float32 rows each graph keeps (the lm_head's
    vocabulary padding and DP attention's gathered_buffer path are not modelled)."""
    out: list[tuple[str, int]] = []
    for bs in sizes:
        n = bs * rows
        local = n * -(-vocab // tp) * 2
        if tp > 1:
            out += [(f"l{bs}", local), (f"g{bs}", n * vocab * 2), (f"c{bs}", n * vocab * 2), (f"g{bs}", 0),
                    (f"l{bs}", 0), (f"o{bs}", n * vocab * LOGITS_BYTES), (f"c{bs}", 0)]
        else:
            out += [(f"l{bs}", local), (f"o{bs}", n * vocab * LOGITS_BYTES), (f"l{bs}", 0)]
    return out


def capture_order_extra(sizes: tuple[int, ...], v: Version, vocab: int, tp: int, rows: int = 1) -> int:
    """What capturing smallest first (up to 0.4.3.post4) leaves in the pool beyond largest first (see above)."""
    if not sizes or reached(v, "capture_largest_first") or reached(v, "graph_logits_buffer"):
        return 0
    up = _pool_bytes(_logits_events(sorted(sizes), vocab, tp, rows))
    down = _pool_bytes(_logits_events(sorted(sizes, reverse=True), vocab, tp, rows))
    return max(0, up - down)


@dataclass(frozen=True)
class GraphMemory:
    logits: int
    index_tables: int
    rest: int
    dsa_scores: int = 0  # DeepSeek sparse attention: the indexer's scores of the largest graph (dsa_graph_state)

    @property
    def total(self) -> int:
        return self.logits + self.index_tables + self.rest + self.dsa_scores


# DeepSeek sparse attention (the nsa / dsa backend, CUDA; layers/attention/nsa_backend.py 0.5.3 and 0.5.10,
# dsa_backend.py 0.5.13.post1 and 0.5.18 read) keeps, for the graphs of each DeepseekSparseAttnBackend, token-wide
# tables where the paged backends keep a page a row:
# - init_cuda_graph_state: decode_cuda_graph_metadata["page_table"], int32, max_num_tokens rows (max_bs x
#   num_tokens_per_bs: the draft tokens a request for the target-verify graphs, eagle_topk for the draft's) of
#   context_len + speculative_num_draft_tokens columns ("fake page_table for sparse_prefill"; ERAS
#   dsa_table_per_token_row: max_bs rows of context_len in 0.5.3; dsa_wide_table_spec_only: left out from 0.5.18
#   without speculative decoding);
# - _build_forward_metadata_cuda_graph, once per captured size, kept in decode_cuda_graph_metadata[bs]:
#   real_page_table = _transform_table_1_to_real(page_table_1) = page_table_1[:, ::page_size] // page_size, a new
#   int32 tensor of the size's rows and ceil(columns / page_size) pages;
# - the indexer's scores in each captured forward (nsa/dsa_indexer.py _get_topk_paged: deep_gemm.fp8_paged_mqa_logits,
#   float32, rows x max_seq_len = block_tables.shape[1] x page_size), freed inside the graph: the largest graph's
#   stay in the graph pool every graph shares (captured largest first; the draft's runner captures into the same
#   global pool, cuda_graph_runner.py get_global_graph_memory_pool, so its smaller scores reuse them).
def dsa_graph_state(v: Version, sizes: tuple[int, ...] | list[int], tokens_per_bs: int, context_len: int,
                    draft_tokens: int, page_size: int, *, speculative: bool, backends: int = 1) -> tuple[int, int]:
    """(the tables, the indexer's scores) one DSA graph runner holds over `backends` attention backends (the
    draft's multi-step backend builds speculative_num_steps - 1; see above)."""
    if not sizes:
        return 0, 0
    top, page = max(sizes), max(page_size, 1)
    if reached(v, "dsa_table_per_token_row"):
        rows, cols = top * tokens_per_bs, max(context_len, 1) + (draft_tokens if speculative else 0)
    else:
        rows, cols = top, max(context_len, 1)
    wide = 4 * rows * cols if speculative or not reached(v, "dsa_wide_table_spec_only") else 0
    pages = -(-cols // page)
    compact = 4 * pages * sum(bs * tokens_per_bs for bs in sizes) if page > 1 else 0
    scores = LOGITS_BYTES * top * tokens_per_bs * pages * page
    return backends * (wide + compact), scores


def cuda_graph_parts(max_bs: int, s: SGLangSettings, v: Version, vocab: int, context_len: int, page_size: int,
                     sliding: bool = False, pool_size: int | None = None, *, layers: int, gpu_mib: int | None = None,
                     hip: bool = False, heads_per_rank: int = 0, v_head_dim: int = 0, dsa: bool = False) -> GraphMemory:
    """The decode capture's memory on one rank; layers: the decoder layers that rank runs (its pipeline stage's);
    heads_per_rank, v_head_dim: the triton backend's split-K partials (0: not counted); dsa: DeepSeek sparse
    attention's layers (dsa_graph_state, with the nsa / dsa backend on CUDA)."""
    sizes = capture_bs(max_bs, v, pool_size, s=s, gpu_mib=gpu_mib, hip=hip)
    if s.disable_cuda_graph or not sizes:
        return GraphMemory(0, 0, 0)
    top = max(sizes)
    shared_logits = reached(v, "graph_logits_buffer")
    # speculative decoding captures target-verify graphs of num_tokens_per_bs (speculative_num_draft_tokens) rows a
    # request: the shared buffer is (max_bs x num_tokens_per_bs, vocab) (cuda_graph_runner.py max_num_token, 0.4.10 /
    # 0.5.10 read); None here: 1 (SGLang picks a default per model, not modelled)
    rows = (s.speculative_num_draft_tokens or 1) if s.speculative_algorithm else 1
    logits = LOGITS_BYTES * vocab * rows * (top if shared_logits else sum(sizes))
    logits += capture_order_extra(sizes, v, vocab, max(1, s.tp_size), rows)
    # a row of the index table: a page for fa3, trtllm_mha and aiter (page_table), a token for flashinfer whatever the
    # page size (flashinfer_backend.py init_cuda_graph_state: max_num_tokens x max_context_len, 0.4.3.post4 / 0.5.10)
    pages = -(-max(context_len, 1) // max(page_size, 1))
    if (s.attention_backend or "") == "flashinfer":
        pages = max(context_len, 1)
    fa3_copies = (s.attention_backend or "") == "fa3" and not shared_logits
    tables = 4 * pages * (top + (sum(sizes) if fa3_copies else 0))
    if (s.attention_backend or "") == "triton":
        index = 8 if reached(v, "triton_kv_indices_int64") else 4
        tables = index * max(context_len, 1) * top + 4 * top * heads_per_rank * TRITON_KV_SPLITS * (v_head_dim + 1)
    if (s.attention_backend or "") == "flashinfer":
        wrappers = 2 if sliding else 1
        tables = wrappers * (tables + FLASHINFER_INT_WORKSPACE * len(sizes))
    if (s.attention_backend or "") in CUSTOM_MASK_BACKENDS:
        tables += top * max(context_len, 1)  # cuda_graph_custom_mask, uint8, once
    scores = 0
    if dsa and (s.attention_backend or "") in DSA_BACKENDS and not hip:
        tokens = (s.speculative_num_draft_tokens or 1) if s.speculative_algorithm else 1
        if s.enable_two_batch_overlap or not reached(v, "capture_align_tokens"):
            tokens = 1  # capture_bs's num_tokens_per_bs
        tables, scores = dsa_graph_state(v, sizes, tokens, context_len, s.speculative_num_draft_tokens or 0,
                                         page_size, speculative=bool(s.speculative_algorithm))
    if torch211_rest(v, s.tp_size) and not hip:
        rest = (_pool_bytes([("logits", top * rows * vocab * 2)]) + CG_POOL_T211
                + CG_KEPT_T211 * len(sizes) * max(layers, 1))
    else:
        rest = CG_PER_GRAPH_LAYER * len(sizes) * max(layers, 1)
    return GraphMemory(logits, tables, rest, scores)


def torch211_rest(v: Version, tp: int) -> bool:
    """Whether the decode capture's rest is costed by CG_POOL_T211 and CG_KEPT_T211 (0.5.11+, one GPU a model
    replica, CUDA: see CG_KEPT_T211), not by the torch 2.9 releases' CG_PER_GRAPH_LAYER."""
    return reached(v, "graph_rest_torch211") and max(1, tp) == 1


def cuda_graph_bytes(max_bs: int, s: SGLangSettings, v: Version, vocab: int, context_len: int, page_size: int = 1,
                     sliding: bool = False, pool_size: int | None = None, *, layers: int, gpu_mib: int | None = None,
                     hip: bool = False, heads_per_rank: int = 0, v_head_dim: int = 0) -> int:
    return cuda_graph_parts(max_bs, s, v, vocab, context_len, page_size, sliding, pool_size, layers=layers,
                            gpu_mib=gpu_mib, hip=hip, heads_per_rank=heads_per_rank, v_head_dim=v_head_dim).total


# The attention backend's own buffers, allocated by model_runner.py init_attention_backend after "Memory pool end" and
# before "Capture cuda graph begin" (the two free-memory figures SGLang prints around it), outside mem_fraction_static:
# - FlashInfer (flashinfer_backend.py FlashInferAttnBackend.__init__; trtllm_mha's backend subclasses it): one global
#   workspace of SGLANG_FLASHINFER_WORKSPACE_SIZE (environ.py, 384 MiB; 0.4.x global_config.py
#   flashinfer_workspace_size, the same), 512 MiB for Qwen2ForCausalLM (0.4.5 read) and Qwen3ForCausalLM /
#   MiMoForCausalLM (0.4.6.post5 read); and one 8 MiB int workspace in each wrapper it builds: the ragged prefill wrapper
#   and, per num_wrappers (2 with sliding windows), a paged prefill, a verify prefill and a decode wrapper.
# - trtllm_mha (trtllm_mha_backend.py): a zero-filled DEFAULT_WORKSPACE_SIZE_MB = 512 MiB workspace besides.
# - aiter (aiter_backend.py AiterAttnBackend.__init__, not for MLA): a float32 split-K workspace of
#   max_bs x heads x ceil(context_len / 256) x (head_dim + 2) values, max_bs the req_to_token pool's size.
# Not modelled: cuBLAS workspaces (init_cublas), FA3's and triton's small buffers, the MLA backends. Against the logs
# that print both figures (none fitted): Qwen2-7B flashinfer on a B200 0.531 GiB vs 0.55 printed (sglang#11830),
# Olmo 3 32B trtllm_mha on a B200 0.93 vs 1.14 (sglang#13666; Olmo 3's sliding windows make 2 wrappers), Qwen3-0.6B
# aiter on an MI300X with 4,096 requests 5.08 vs 5.36 (gpustack#4424).
FLASHINFER_WORKSPACE = 384 * MiB
FLASHINFER_WORKSPACE_QWEN = 512 * MiB
TRTLLM_MHA_WORKSPACE = 512 * MiB
AITER_PARTITION = 256


def backend_init_bytes(backend: str | None, v: Version, *, architecture: str, sliding: bool, mla: bool,
                       max_running: int, heads_per_rank: int, head_dim: int, context_len: int) -> int:
    """Bytes init_attention_backend allocates on each GPU (see above); 0 for a backend not modelled."""
    if backend in ("flashinfer", "trtllm_mha"):
        qwen = {"qwen2"} | ({"qwen3"} if reached(v, "flashinfer_ws_qwen3") else set())
        workspace = FLASHINFER_WORKSPACE_QWEN if architecture in qwen else FLASHINFER_WORKSPACE
        wrappers = 0 if mla else 1 + 3 * (2 if sliding else 1)
        return workspace + wrappers * FLASHINFER_INT_WORKSPACE + (TRTLLM_MHA_WORKSPACE if backend == "trtllm_mha"
                                                                   else 0)
    if backend == "aiter" and not mla:
        parts = -(-max(context_len, 1) // AITER_PARTITION)
        return max_running * heads_per_rank * parts * (head_dim + 2) * 4
    return 0


# The EagerRunner (0.5.14+: model_runner_components/cuda_graph_setup.py capture_cuda_graphs builds it after the
# attention backend and before the graph runners, so the first capture's "begin ... avail mem" is read after it; it is
# built whether or not graphs are captured). Its input registry (cuda_graph_buffer_registry.py build_eager_registry ->
# build_decode_registry, torch.zeros at registration) holds, on the token axis, input_ids, positions and out_cache_loc
# (int64 each) and mrope_positions (3 x int64), 48 B a token, and on the request axis req_pool_indices and seq_lens
# (int64 each; seq_lens_cpu is on the host), 16 B a request. The token axis is max(prefill ceiling, max_running x
# tokens a request): the ceiling is chunked_prefill_size in 0.5.14 (max_total_num_tokens with chunking off) and
# max(max_total_num_tokens, chunked_prefill_size) from 0.5.15 (runner/eager_runner.py EagerRunner.__init__, wheels
# 0.5.14-0.5.18 and 0.5.23 read), so from 0.5.15 it grows with the KV pool: 18 MiB for 392,920 tokens, 128 MiB for 2.8
# million. Not counted: the mamba tracking slots (9 B a request with the extra-buffer strategy) and the warm-up's
# workspaces (flashinfer autotune, cuBLAS).
EAGER_TOKEN_BYTES = 48
EAGER_REQUEST_BYTES = 16


def eager_registry_bytes(v: Version, *, max_total_tokens: int, chunked_prefill_size: int, max_running: int,
                         tokens_per_request: int = 1) -> int:
    """The EagerRunner's input registry on each GPU (see above); 0 before 0.5.14."""
    if not reached(v, "eager_registry"):
        return 0
    chunk = max(chunked_prefill_size, 0)
    if reached(v, "eager_registry_pool_tokens"):
        ceiling = max(max_total_tokens, chunk)
    else:
        ceiling = chunk if chunk > 0 else max_total_tokens
    tokens = max(ceiling, max_running * max(tokens_per_request, 1))
    return tokens * EAGER_TOKEN_BYTES + max_running * EAGER_REQUEST_BYTES


# Prefill ("piecewise") CUDA graphs: model_runner.py init_piecewise_cuda_graphs runs after the decode capture
# ("Capture piecewise CUDA graph begin/end ... mem usage=X GB", free memory before minus after
# PiecewiseCudaGraphRunner, model_runner.py 0.5.10), outside mem_fraction_static. On by default from 0.5.10
# (server_args.py disable_piecewise_cuda_graph = False; up to 0.5.9 opt-in with --enable-piecewise-cuda-graph, which
# oomkit does not take). _handle_piecewise_cuda_graph (0.5.10) turns it off for speculative decoding, DP attention,
# --enable-torch-compile, pp > 1, non-CUDA platforms (ROCm), multimodal models, GGUF, LoRA, PD disaggregation and
# the architectures of configs/model_config.py piecewise_cuda_graph_disabled_model_archs (DeepseekV32, Qwen3Next,
# GlmMoeDsa, BailingMoeV2_5, LLaDA) and DeepSeek sparse attention (is_deepseek_nsa); --disable-cuda-graph does not
# (0.5.10 model_runner.py init_piecewise_cuda_graphs checks only the piecewise switch). The sizes are
# _generate_piecewise_cuda_graph_tokens (4 .. piecewise_cuda_graph_max_tokens, 58 to 8,192), the largest
# chunked_prefill_size (see prefill_graph_tokens for MLA, --max-total-tokens and Llama 2).
# What it holds: the static input buffers (input_ids, out_cache_loc, positions: 24 B a token, negligible), the
# private graph pool of the pieces (the largest size first, the smaller reuse it; every piece's output is a weak
# reference, compilation/cuda_piecewise_backend.py), and each graph's own memory outside PyTorch (the "non-Torch"
# memory sglang#15927 measured; its reserve counts 8 MiB per size). Both readings empty PyTorch's cache first
# (get_available_gpu_memory, empty_cache=True), and the pieces run without inductor (piecewise_cuda_graph_compiler
# 'eager', the 0.5.10 default, printed by both logs below). SGLang's piecewise backend is vLLM's
# (cuda_piecewise_backend.py: "Adapted from vllm v0.10.0 compilation/cuda_piecewise_backend.py"), so the graph set
# keeps the shape of vLLM's piecewise rule (engines/vllm/phases.py cudagraph_actual_bytes: per captured size, a share
# of the hidden size, x sqrt(largest size / 512)), but not its coefficients: vLLM's (CG_GRAPH_BASE 2.91 MiB +
# CG_GRAPH_PER_HIDDEN 1.84 KiB x hidden, fitted on vLLM 0.19 logs to 512-1,024 tokens) put Apertus-8B at +19%. The two
# SGLang logs take 8.70 and 8.65 KiB per hidden unit and captured size at 8,192 tokens (69.6 and 34.6 MiB a size at
# hidden 8,192 and 4,096), so no per-size base: PREFILL_GRAPH_PER_HIDDEN is fitted on Llama-3.1-70B TP8 across two
# nodes (58 sizes to 8,192, 80 layers, NCCL all-reduces in the graphs, 3.94 GB printed) and holds Apertus-8B TP4 on one
# GH200 node (the same 58 sizes, 32 layers, custom all-reduce, 1.96 GB printed) to 1.97 GiB (+0.5%; vLLM's
# coefficients: 3.99, +1.4%, and 2.33, +19%). Per size and layer the two differ (0.87 and 1.08 MiB), per hidden unit
# they do not. Both logs reach 8,192 tokens: the sqrt scaling to other largest sizes is vLLM's, not checked on SGLang.
# From 0.5.15 the prefill graphs on CUDA are "breakable" (model_executor/cuda_graph_config.py default_prefill_backend,
# 0.5.15-0.5.19 wheels; runner_backend/breakable_cuda_graph_backend.py, read in the 0.5.18 wheel): no torch.compile;
# each size is captured as a sequence of torch.cuda.CUDAGraph segments split at eager break points (the attention
# and Mamba layers' eager_on_graph), so as many graph executables per size as the piecewise split (executable dedup,
# SGLANG_ENABLE_CUDA_GRAPH_DEDUP, is off by default); the segments' activations live in the global graph pool the
# decode graphs share (runner_utils/pool.py get_or_create_global_graph_memory_pool), and only the transformer body
# is captured (prefill_cuda_graph_runner.py _run_forward: layer_model.forward; the logits tail runs eagerly). Besides,
# capture_one allocates one shared output buffer of the largest size's rows (_alloc_full_buffer: num_tokens x hidden
# in the model dtype) outside the pool, once. The segments keep vLLM's piecewise coefficients (the refit above is of
# the torch.compile pieces of 0.5.10, not of this backend) and that buffer is added (prefill_output_row_bytes). The
# one 0.5.18+ log, sglang#39713 (Qwen3-0.6B on an H100, out of memory at the 26th of 58 sizes after about 11.5 GB),
# holds about 10x that: a strict xfail in tests/test_sglang_more_logs.py; a 0.5.19 log of Qwen3-32B on an H100
# (tests/test_sglang_heldout12.py: 58 sizes to 8,192, hidden 5,120, 2.84 GB printed) holds it to 2.82 GiB without
# the decode graphs' logits buffer, 2.97 with it (see after_prefill_capture). Not modelled:
# 0.5.16-0.5.17's gate that skips an auto-selected prefill capture with under 4 GiB free (cuda_graph_setup.py
# _MIN_AUTO_PREFILL_CUDA_GRAPH_FREE_MEMORY_GB, absent from the 0.5.18 and 0.5.19 wheels).
# A multimodal model's prefill graphs are off (server_args.py "multimodal model" rules), but from 0.5.16 the breakable
# backend keeps them for configs/model_config.py multimodal_breakable_cuda_graph_supported_model_archs, whose
# language-model prefill is captured and whose batches carrying image embeddings run eagerly: Qwen3_5 /
# Qwen3_5MoeForConditionalGeneration in 0.5.16-0.5.19 (Kimi K2.5 / K3, InternS2Mobius, MuseGlimmer joined in 0.5.18,
# Cohere2Vision and PaddleOCR-VL in 0.5.19; Kimi K2.5 shares its GGUF name deepseek2 with Kimi-VL, which is not
# listed, and the others are not in oomkit's catalog, so only the Qwen3.5 names are held here)
PREFILL_GRAPH_REF_TOKENS = 512
PREFILL_GRAPH_PER_HIDDEN = 2226  # bytes per hidden unit and captured size at 512 tokens (x sqrt(largest / 512))
PREFILL_GRAPH_OFF_ARCHS = frozenset({"deepseek32", "qwen3next", "glm-dsa", "bailingmoe2.5", "llada"})
PREFILL_GRAPH_MM_ARCHS = frozenset({"qwen35", "qwen35moe"})  # GGUF names of the breakable allowlist (see above)


def multimodal_prefill_graphs(architecture: str, v: Version, hip: bool) -> bool:
    """Whether a multimodal model keeps its prefill graphs: the breakable allowlist on CUDA (see above)."""
    return not hip and reached(v, "prefill_breakable_mm") and architecture in PREFILL_GRAPH_MM_ARCHS


def prefill_graph_tokens(s: SGLangSettings, v: Version, *, chunked_prefill_size: int, mla: bool, multimodal: bool,
                         hip: bool, disabled_arch: bool) -> tuple[int, ...]:
    """The token counts PiecewiseCudaGraphRunner captures; () when SGLang captures none (see above)."""
    off = (not reached(v, "prefill_graph_default") or s.disable_piecewise_cuda_graph or s.speculative_algorithm
           or s.enable_dp_attention or s.pp_size > 1 or hip or multimodal or disabled_arch)
    if off:
        return ()
    # the largest size: chunked_prefill_size; with an MLA backend 2,048 (0.5.10-0.5.18), min(8,192, chunk) from 0.5.23
    # (arg_groups/memory_hook.py: "cap MLA capture at 8192 tokens"); capped by --max-total-tokens, and at 4,096 for a
    # model path naming llama-2 (server_args.py 0.5.10+: "For Llama2 series models, the max tokens is limited to 4096")
    if mla:
        top = min(8192, chunked_prefill_size) if reached(v, "prefill_mla_8192") else 2048
    else:
        top = chunked_prefill_size
    if s.max_total_tokens is not None:
        top = min(top, s.max_total_tokens)
    if "llama-2" in (s.model_path or "").lower():
        top = min(top, 4096)
    return tuple(prefill_graph_sizes(top))


def prefill_output_row_bytes(v: Version, hidden: int, model_dtype: str) -> int:
    """A row of the breakable backend's shared output buffer (0.5.15+, see above); 0 before."""
    if not reached(v, "prefill_breakable"):
        return 0
    return hidden * (4 if model_dtype == "float32" else 2)


def prefill_graph_bytes(sizes: tuple[int, ...], hidden: int, output_row_bytes: int = 0, *,
                        breakable: bool = False) -> int:
    """The prefill capture's memory: the torch.compile pieces (0.5.10-0.5.14) by PREFILL_GRAPH_PER_HIDDEN, the
    breakable segments (0.5.15+, settings.py ERAS prefill_breakable) by vLLM's coefficients (see above)."""
    if not sizes:
        return 0
    per_graph = CG_GRAPH_BASE + CG_GRAPH_PER_HIDDEN * hidden if breakable else PREFILL_GRAPH_PER_HIDDEN * hidden
    graphs = int(per_graph * len(sizes) * math.sqrt(max(sizes) / PREFILL_GRAPH_REF_TOKENS))
    return graphs + max(sizes) * output_row_bytes


# The decode capture after the prefill one (0.5.14+, settings.py ERAS prefill_graph_first: an EagerRunner, then
# capture_prefill_graph, then capture_decode_graph, model_runner_components/cuda_graph_setup.py capture_cuda_graphs
# 0.5.16-0.5.23; model_runner.py 0.5.14-0.5.15), where the prefill graphs were captured at all (prefill_graph_tokens
# not empty: CUDA, not disabled, no speculative decoding, a multimodal model only on the breakable allowlist, ...):
# 1. From 0.5.15 the decode graphs' logits buffer is allocated inside the prefill window: graph_shared_output.py
#    GraphSharedOutput.get_logits_buffer makes the (max decode rows, vocab) float32 buffer on first request, and the
#    first to ask is prefill_cuda_graph_runner.py capture_prepare (next_token_logits_buffer=
#    self._next_token_logits_buffer(bs), the whole max_rows buffer for any bs <= max_rows; 0.5.15-0.5.23 wheels).
#    capture_decode_graph's DecodeCudaGraphRunner gets the same tensor back. In 0.5.14 the prefill runner passes
#    next_token_logits_buffer=None and runner_utils/buffers.py DecodeInputBuffers.create allocates it: decode window.
# 2. From 0.5.15 both captures use one private pool (runner_utils/pool.py get_or_create_global_graph_memory_pool:
#    "sharing one pool reserves only the larger phase's capture footprint"; 0.5.14's backends each call
#    graph_pool_handle()). PyTorch's caching allocator hands a free block only to an allocation on the stream it was
#    made on (CUDACachingAllocator.cpp get_free_block: the block's stream must equal the request's), and up to 0.5.18
#    each graph_capture() opens its own stream (distributed/parallel_state.py GroupCoordinator.graph_capture), so the
#    decode graphs cannot take the blocks the prefill graphs freed. From 0.5.19 both pass
#    stream=get_or_create_global_graph_capture_stream() ("Serial capture passes also share one stream to reuse
#    allocator scratch", 0.5.19-0.5.23): the decode graphs' activations, far smaller than a prefill size's, come out
#    of the prefill graphs' freed blocks, and what each decode graph still adds is what a graph adds whose
#    activations fit the pool already held: its executable and the tensors it keeps. CG_KEPT_PER_GRAPH_LAYER is that
#    figure read off sglang#11716's progress lines (tests/fixtures/engine_logs/sglang/llama-3.1-70b-tp8-h200-pr11716.
#    json, read without emptying the cache): 10.30 GB free before bs=216, 9.86 before bs=1, 30 graphs of 80 layers
#    between (smaller graphs reusing the largest's pool): 0.44 GiB / 30 / 80 = 0.188 MiB a graph and layer, a TP8
#    rank on the torch 2.9 stack; on one GPU from 0.5.11 the kept share is CG_KEPT_T211 (see above). Against the logs
#    with both captures (tests/test_sglang_heldout12.py): Qwen3-32B, 0.5.19, H100, 36 decode graphs of 64 layers,
#    0.13 GB printed: 1.07 -> 0.43 GiB with the shared stream, 0.135 with CG_KEPT_T211 (+3.8 %); Qwen3.8-27B-FP8,
#    0.5.18, its own stream, 0.10 GB printed: 0.25 -> 0.23 GiB (the logits buffer moved only), 0.103 with the
#    0.5.11+ pool and kept share.
CG_KEPT_PER_GRAPH_LAYER = int(0.44 * GiB / 30 / 80)


def after_prefill_capture(parts: GraphMemory, v: Version, *, prefill_captured: bool, graphs: int,
                          layers: int, tp: int = 1) -> tuple[GraphMemory, int]:
    """The decode capture's parts when the prefill graphs were captured before it (see above), and the bytes that
    move into the prefill capture's window (the logits buffer)."""
    if not prefill_captured or not reached(v, "prefill_graph_first"):
        return parts, 0
    moved = 0
    if reached(v, "graph_logits_in_prefill"):
        moved, parts = parts.logits, replace(parts, logits=0)
    if reached(v, "graph_capture_stream_shared"):
        kept = CG_KEPT_T211 if torch211_rest(v, tp) else CG_KEPT_PER_GRAPH_LAYER
        parts = replace(parts, rest=min(parts.rest, kept * graphs * max(layers, 1)))
    return parts, moved


@dataclass(frozen=True)
class Phase:
    name: str
    bytes: int
    in_budget: bool  # inside mem_fraction_static
    free_after: int | None

    def to_dict(self) -> dict:
        return {"phase": self.name, "bytes": self.bytes, "in_budget": self.in_budget,
                "free_after_bytes": self.free_after}


def startup_phases(total: int | None, overhead: int, weights: int, pool: int, req_to_token: int, cuda_graphs: int,
                   backend_init: int = 0, prefill_graphs: int = 0, prefill_first: bool = False,
                   symm_mem: int = 0, draft_graphs: int = 0) -> tuple[Phase, ...]:
    """The phases in SGLang's order: the prefill graphs after the decode graphs up to 0.5.10, before them from 0.5.14
    (settings.py ERAS prefill_graph_first); --enable-symm-mem's preallocated pool after both captures (settings.py
    symm_mem_prealloc_bytes); the draft worker's graphs last (draft.py graph_bytes)."""
    steps = [("CUDA context and distributed init", overhead, False), ("weights", weights, True),
             ("KV cache pool", pool, True), ("req_to_token pool", req_to_token, False),
             ("attention backend init", backend_init, False), ("CUDA graph capture", cuda_graphs, False)]
    if prefill_graphs:
        steps.insert(len(steps) - 1 if prefill_first else len(steps),
                     ("prefill CUDA graph capture", prefill_graphs, False))
    if symm_mem:
        steps.append(("symmetric memory pool", symm_mem, False))
    if draft_graphs:
        steps.append(("draft CUDA graph capture", draft_graphs, False))
    out, free = [], total
    for name, n, inside in steps:
        free = None if free is None else free - n
        out.append(Phase(name, n, inside, free))
    return tuple(out)


def gb(n: int | float) -> str:
    """SGLang's "%.2f GB" of bytes / 2**30."""
    return f"{n / GiB:.2f}"


# FlashInfer all-reduce fusion (TRT-LLM backend): model_runner.py _pre_initialize_flashinfer_allreduce_workspace runs
# after the pools, the attention backend and the kernel warm-up and before the graph capture (0.5.13.post1;
# runner/base_runner.py from 0.5.14, 0.5.14-0.5.18 read; 0.5.10 enables the fusion but creates no workspace there),
# and layers/flashinfer_comm_fusion.py
# pre_initialize_workspaces builds two workspaces, the MoE group's (its EP group when ep_size > 1, else its TP group)
# and the attention-TP group's, each of FUSE_ALLREDUCE_MAX_BATCH_SIZE = 2,048 tokens (layers/communicator.py) x the
# model's hidden size, none for a group of one rank. Each is three SymmDeviceMemory buffers, whose local sizes
# SGLang's own preflight mirrors (_flashinfer_trtllm_workspace_allocation_sizes, 0.5.13.post1-0.5.23 read):
# world x tokens x hidden x 2 B; world x 256 x 4 B of flags; 3 x min(world x tokens x hidden x the element size,
# 2 GiB less 2 MiB) of Lamport buffers; each rounded to 2 MiB, plus a 2,048 B signal pad, rounded to the allocation
# and the multicast granularity (taken as 2 MiB, cuMemGetAllocationGranularity's on these GPUs; not read here).
# When it is on, server_args.py _handle_model_specific_adjustments: 0.5.13.post1 turns
# --enable-flashinfer-allreduce-fusion on for FUSION_ARCHS_0513 on SM90 / SM10X at tp_size > 1 without DP attention,
# on one node, with moe_a2a_backend "none"; 0.5.14 sets --flashinfer-allreduce-fusion-backend auto likewise (its list
# adds Qwen3-VL-MoE and Nemotron-H; SM10X on several nodes too) and auto is trtllm on SM90, mnnvl on SM10X (whose
# workspace is not modelled; flashinfer_comm_fusion.py _resolve_backend), the same rule to 0.5.18
# (arg_groups/overrides.py _flashinfer_allreduce_fusion_auto_enable from 0.5.15; 0.5.18 adds DeepseekV4ForCausalLM,
# which oomkit does not describe); --enforce-disable-flashinfer-allreduce-fusion turns it off. The auto-enable rule
# changes in 0.5.19 (not modelled: not charged).
FUSION_WORKSPACE_TOKENS = 2048
FUSION_SIGNAL_PAD = 2048
FUSION_MAX_COMM = 2147483647 & ~((1 << 21) - 1)
# the architectures of 0.5.13.post1's list as config.json model_type (the text config's for a nested one);
# MistralLarge3ForCausalLM and InternS2PreviewForConditionalGeneration are not described by oomkit
FUSION_ARCHS_0513 = frozenset({
    "deepseek_v3", "deepseek_v32", "gpt_oss", "glm_moe_dsa", "glm4_moe", "glm4_moe_lite", "qwen3_moe", "qwen3_next",
    "kimi_k25", "qwen3_5_moe", "qwen3_5_moe_text", "qwen3_5", "qwen3_5_text"})
FUSION_ARCHS_0514 = FUSION_ARCHS_0513 | {"qwen3_vl_moe", "qwen3_vl_moe_text", "nemotron_h"}


def _ceil(n: int, to: int) -> int:
    return -(-n // to) * to


def fusion_workspace_bytes(world: int, hidden: int, elem: int = 2, tokens: int = FUSION_WORKSPACE_TOKENS) -> int:
    """One TRT-LLM all-reduce fusion workspace on each rank of a group of `world` (see above); 0 for one rank."""
    if world <= 1:
        return 0
    g = 2 * MiB
    buffers = (world * tokens * hidden * 2, world * 256 * 4, 3 * min(world * tokens * hidden * elem, FUSION_MAX_COMM))
    return sum(_ceil(_ceil(b, g) + FUSION_SIGNAL_PAD, g) for b in buffers)


def fusion_backend(v: Version, s: SGLangSettings, *, model_type: str, platform: str) -> str | None:
    """The all-reduce fusion backend the release runs ("trtllm" / "mnnvl"), None where it is off or not read."""
    if s.enforce_disable_flashinfer_allreduce_fusion or not reached(v, "flashinfer_fusion_workspace"):
        return None
    if platform not in ("sm90", "sm100"):
        return None
    a2a = "deepep" if s.enable_deepep_moe else (s.moe_a2a_backend or "none")
    auto = s.tp_size > 1 and not s.enable_dp_attention and a2a == "none"
    if not reached(v, "flashinfer_fusion_backend_flag"):
        on = s.enable_flashinfer_allreduce_fusion or (auto and s.nnodes == 1 and model_type in FUSION_ARCHS_0513)
        return "trtllm" if on else None
    if reached(v, "flashinfer_fusion_unread"):
        return None
    backend = s.flashinfer_allreduce_fusion_backend or ("auto" if s.enable_flashinfer_allreduce_fusion else None)
    if backend is None and auto and (s.nnodes == 1 or platform == "sm100") and model_type in FUSION_ARCHS_0514:
        backend = "auto"
    if backend == "auto":
        backend = "trtllm" if platform == "sm90" else "mnnvl"
    return backend


def flashinfer_fusion_bytes(v: Version, s: SGLangSettings, *, model_type: str, platform: str, hidden: int,
                            elem: int = 2) -> int:
    """Both workspaces on each rank (attention TP, MoE EP or TP), allocated after the pools and before the capture;
    0 where the fusion is off, or on its mnnvl backend (not modelled)."""
    if fusion_backend(v, s, model_type=model_type, platform=platform) != "trtllm":
        return 0
    attn_world = s.tp_size // (s.dp_size if s.enable_dp_attention else 1)
    ep = s.tp_size if (s.enable_ep_moe or s.enable_deepep_moe) else s.ep_size
    moe_world = ep if ep > 1 else s.tp_size
    return fusion_workspace_bytes(attn_world, hidden, elem) + fusion_workspace_bytes(moe_world, hidden, elem)
