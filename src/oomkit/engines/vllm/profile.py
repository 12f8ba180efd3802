"""vLLM's memory budget per GPU (v1/worker/gpu_worker.py determine_available_memory): what it requests, the
activation peak of its profile run, the non-torch memory, CUDA graphs and what is left for the KV cache. vLLM
measures these at start-up; the measured terms are modelled here and fitted to published start-up logs."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ...memo import ByObject
from ...memory import Device
from ...model.archs import DSV4_ARCHS
from ...model.spec import LayerKind, ModelSpec
from ...units import GiB
from .allocator import (
    DenseForward,
    MlaMoeForward,
    v0_forward_mla_moe,
    v0_reserved_forward,
    v0_reserved_forward_glm,
)
from .config import Resolved, cuda_total, dsv4_indexer_mxfp4
from .drafter import drafter_of
from .drafter import profile_bytes as drafter_profile_bytes
from .encoder import encoder_profile, v0_profile
from .kv import MLA_HEAD_PADDED_BEFORE, MLA_PADDED_HEAD
from .settings import VllmSettings, format_gib, gib_str

# Memory in use before vLLM's worker-init snapshot (outside its budget): CUDA context and cuBLAS 0.51 GiB at
# TP=1 on an H100; with TP/PP > 1 NCCL is initialised first (1.51 GiB TP, 1.43 GiB PP, so NCCL's 1.00 GiB on top of
# the context). llm-d v0.19.0 and vllm-eng v0.19.0 H100 logs ("worker init memory snapshot").
CONTEXT_TP1 = int(0.51 * GiB)
CONTEXT_MULTI = int(1.51 * GiB)
# The CUDA context by GPU (cuda_context): the driver reserves local memory for every thread an SM can hold
# (cudaLimitStackSize, 1 KiB a thread by default, x the resident threads per SM of the compute capability, CUDA C
# Programming Guide "Technical Specifications per Compute Capability", x the SM count); the rest (the kernels loaded
# lazily, CUDA_MODULE_LOADING=LAZY, PyTorch's default since 1.13 and so in every vLLM release; the printf and
# malloc heaps; cuBLAS handles) does not depend on the GPU's size. That rest is fitted on the H100 SXM's 0.51 GiB
# (132 SMs x 2048 threads = 264 MiB of stacks): 0.2522 GiB. Held out, the non-PyTorch memory of a TP=1 process
# before anything else outside PyTorch is allocated:
# - H20-3e (78 SMs), vLLM 0.13, PyTorch 2.9 (vllm#31273, OOM while loading weights: 139.65 GiB in use, 139.21 GiB
#   allocated, 12.81 MiB reserved-unallocated): 0.43 GiB; here 0.40 (-0.02 GiB).
# - RTX 3090 (82 SMs), vLLM 0.6.4 (vllm#10517, non_torch_memory=0.35GiB, context included): here 0.37 (+0.02 GiB).
# - L40S (142 SMs), vLLM 0.10.1 V0 (vllm#23230, OOM in the profile run a second after loading: 17.52 GiB in use,
#   17.03 GiB allocated, 6.95 MiB reserved-unallocated): 0.48 GiB with the profile's first kernels; here 0.46.
# - RTX 5090 (170 SMs), vLLM ~0.19, PyTorch 2.10 (vllm#40291, OOM in create_weights: 30.33 GiB in use, 29.39 GiB
#   allocated, 309.08 MiB reserved-unallocated): 0.64 GiB; here 0.50 (-0.14 GiB, 0.44 % of its 31.35 GiB: Blackwell
#   takes more than its stacks explain, not modelled).
# Without lazy loading (CUDA < 11.7) the context was larger (pytorch#86509: 636 MiB eager vs 274 MiB lazy); no
# vLLM release runs that way. The SM count is the GPU catalog's (hardware/gpus.json sm_count, on the Device); a GPU
# without one keeps the H100 figure (CONTEXT_TP1).
CONTEXT_FIXED = int(0.51 * GiB) - 132 * 2048 * 1024
STACK_PER_THREAD = 1024
# resident threads per SM by compute capability (CUDA C Programming Guide); 2048 where not listed
THREADS_PER_SM = {(7, 5): 1024, (8, 6): 1536, (8, 9): 1536, (12, 0): 1536, (12, 1): 1536}
# "non-torch forward increase memory" during the profile run: TP=1 0.25 GiB (0.13 in 0.15-0.17), TP>=2 about
# 2.07 GiB (NCCL and custom all-reduce buffers), PP>=2 0.07 GiB (llm-d v0.19.0 and version-sweep logs).
NON_TORCH_TP1 = int(0.25 * GiB)
NON_TORCH_TP1_OLD = int(0.13 * GiB)
NON_TORCH_TP = int(2.07 * GiB)
NON_TORCH_PP = int(0.07 * GiB)
# V0 from 0.6.5: non_torch_increase of 0.03 GiB at TP=1 (vllm#13882), taken for what appears after the baseline up
# to 0.6.3 as well (not fitted there); 0.6.4 alone the whole non-torch memory, CUDA context included: the context
# by GPU (cuda_context; 0.35 GiB on an RTX 3090 in vllm#10517, 0.37 there).
NON_TORCH_V0 = int(0.03 * GiB)
# Communicator memory at TP/PP > 1 where the profile counts it (V0 throughout: worker/worker.py init_device reads
# init_gpu_memory before init_worker_distributed_environment, so the NCCL communicators, their buffers and the
# custom all-reduce IPC buffers all fall in non_torch; V1 up to 0.8.x: non-torch is absolute). Its size is
# NCCL's, not vLLM's: NCCL sizes its buffers by the channels its topology search picks (few over PCIe, many over
# NVLink / NVSwitch); custom all-reduce adds only its 8 MiB IPC buffer (distributed/device_communicators/
# custom_all_reduce.py max_size), and only with P2P (it is off across PCIe beyond two GPUs).
# - PCIe: 0.25 GiB, fitted on 2 x RTX 4090, TP2, V0 0.7.x (vllm#13061). Held out: 2 x L40S TP2 0.30 GiB
#   (vllm#15815), 32 x L40S TP8 x PP4 0.28 (vllm#15598), two 16 GB parts TP2 0.39 (vllm#11251).
# - NVLink: not fitted; the V1 H100 figure below (NON_TORCH_TP, 2.28 GiB at TP8). Held out: TP8 on 80 GB parts,
#   V0 0.8.5, 1.82 and 2.10 GiB on two workers (vllm#18446).
COMM_PCIE = int(0.25 * GiB)
# Unified-memory parts (Orin 8.7, Thor 11.0, GB10 12.1): utils/mem_utils.py MemorySnapshot.measure takes free
# memory there from psutil.virtual_memory().available, so the "non-torch increase" between the worker-init snapshot
# and the end of the profile run is whatever the whole host took meanwhile (the engine's CPU heap after loading,
# torch.compile / Triton compilation, other processes), not a GPU figure. Environment-dependent (vllm#46307,
# eugr/spark-vllm-docker#286: compiler heaps up to tens of GiB; a warm compile cache takes less). Fitted on one
# DGX Spark log, Qwen3.6-35B-A3B NVFP4 on 0.22 at 8,192 batched tokens (all it loses beside the weights and the
# discrete-GPU terms: 4.60 GiB, its CUDA-graph estimate 0.04 GiB above the printed 0.19 included (phases.py
# cudagraph_estimate_bytes; 3.85 while a per-layer estimate put it 0.79 above); 4.62 -> 3.85 when the encoder's
# dummy pass went from a 0.28 GiB constant to encoder.py's 1.52 GiB pass over one 16,384-token image); held out: the
# two Qwen3.6-27B NVFP4 logs on 0.23 at 65,536 tokens (without and with MTP), +1.41 % and +0.53 % of the GPU.
UMA_CC = ((8, 7), (11, 0), (12, 1))
NON_TORCH_UMA = int(4.60 * GiB)
# Activation peak of the profile run. The dense forward holds about T x dtype x (3 ff + 4.25 hidden) (V1,
# CodeLlama-7b, Granite-3.1-8b; fitted on the v0.19.0 H100 logs' "torch peak memory increase") and
# T x dtype x (3 ff + 3 hidden) in V0 (vllm#10517: 2.07 GiB at 20000 tokens).
# Model runner V1's sampler pass (v1/worker/gpu_model_runner.py _dummy_sampler_run, the profile's and the
# post-capture warm-up's alike from 0.8.0 to 0.20: top_k = vocabulary - 1, top_p = 0.9, temperature 0.5, on
# min(max_num_seqs, max_num_batched_tokens) rows) holds, per (row x vocabulary) element, the model-dtype logits
# _dummy_sampler_run keeps (b) and v1/sample/sampler.py Sampler.forward's float32 copy ("logits =
# logits.to(torch.float32)", 4) beside what the top-k/top-p path adds at its peak, read per path:
# - the PyTorch sort (ops/topk_topp_sampler.py apply_top_k_top_p, "logits_sort, logits_idx = logits.sort(...)";
#   0.8.0 -> 0.16 without FlashInfer's sampler): the sorted float32 values (4) and int64 indices (8), and inside
#   the sort PyTorch's own temporaries (aten/src/ATen/native/cuda/SortStable.cu segmented_sort_pairs, 128 rows or
#   more: the int64 reverse indices, 8, then cub::DeviceSegmentedRadixSort::SortPairs' alternate key and value
#   buffers, 4 + 8): with the copy 4 + 4 + 8 + 8 + 12 = 36 B beside the logits. What follows the sort (the
#   masks, probs_sort, the scattered logits, softmax, random_sample's exponential noise) reuses what the sort
#   freed. The 0.8.0 logs that died in this pass failed allocating exactly the cub buffers (vllm#15105, #14452:
#   1.74 GiB = 1,024 x 152,064 x 12 B) with the 26 B before them allocated. Was fitted as 36.4 on the 0.15/0.16
#   Qwen3-14B H100 log (5.64 GiB profiled; 5.58 here, 0.17's 2.23 GiB 2.18);
# - the Triton kernel (ops/topk_topp_triton.py apply_top_k_top_p_triton, from 0.17, 8 rows or more): it masks the
#   float32 copy in place through a cached scratch of min(next_power_of_2(min(SMs, rows)), SMs) rows of the
#   vocabulary (float32, TRITON_SCRATCH_SMS SMs where the GPU's count is unknown), then softmax's float32 probabilities
#   and random_sample's float32 noise (q = torch.empty_like(probs)): 4 + 4 + 4 = 12 B beside the logits
#   (SAMPLER_BYTES, was fitted as 12.85 with the scratch inside it on the 0.19 H100 logs; gpt-oss-20b's 2.87 GiB
#   is 2.83 here); below 8 rows it sorts (apply_top_k_top_p_pytorch);
# - FlashInfer's sampler: 12 B beside the logits as well (SAMPLER_BYTES_FLASHINFER, read per release below).
SAMPLER_BYTES = 12
SAMPLER_BYTES_SORT = 36
TRITON_SCRATCH_SMS = 132
TRITON_MIN_ROWS = 8
PROFILE_HIDDEN_KEPT_FROM = (0, 9, 2)
# v1/worker/gpu_model_runner.py _dummy_run (model runner V1; read in the 0.9.2 and 0.24.0 wheels, absent in 0.8.5):
# with an EAGLE-type drafter (SpeculativeConfig.use_eagle: "mtp" among its methods) the profile run calls
# self.drafter.dummy_run(num_tokens) right after the target's forward, while its output `hidden_states` is alive
PROFILE_DRAFTER_FROM = (0, 9, 2)
# V0's sampler (model_executor/layers/sampler.py Sampler.forward and _apply_top_k_top_p, 0.4 -> 0.8.x) on profile_run's
# SamplingParams(top_p=0.99, top_k=vocab - 1): its peak is the re-sort at the end of _apply_top_k_top_p, with alive,
# per (row x vocabulary) element, the model-dtype logits the runner holds (b), the sorted logits, the int64 sort
# indices (8), the top-k mask (1), probs_sort, probs_sum, the top-p mask (1) and the re-sorted logits; up to 0.6.1
# the re-sort also makes int64 inverse indices (8) and gathers (logits_idx_inv), from 0.6.2 it scatters. Read from the
# code, not fitted:
# - up to 0.5.4 the top-k/top-p pass runs in the model dtype: 5 b + 18 (b = 2: 28 B);
# - 0.5.5 -> 0.6.1 on float32 logits (logits.to(torch.float) before the temperature): b + 38;
# - 0.6.2 -> 0.8.x: b + 30 (32 B in bf16). Held out: vllm#15815 (0.7.x, Qwen2.5-32B TP2, 256 x 152,064 at 10,000
#   tokens) prints 1.26 GiB on the driver, which samples, as on the worker, which does not: this gives the driver
#   1.26 GiB (sampler 1.16 + the runner's 10,000 x 5,120 hidden states); vllm#13061 (0.7.x, 2048 tokens) has the
#   driver's KV budget 1.22 GiB below the worker's printed one (81,536 tokens = 7.47 GiB vs 8.69): 1.04 GiB here.
SAMPLER_V0_FLOAT32_FROM = (0, 5, 5)
# envs.py VLLM_FUSED_MOE_CHUNK_SIZE default (16 x 1024), the modular kernel's chunk up to 0.17 (ERAS moe_unchunked)
MOE_CHUNK = 16 * 1024
# ... and before the modular kernel: "32768" (envs.py, read in the 0.6.0-0.8.5 sdists and the 0.9.2 wheel), the chunk
# fused_moe.py fused_experts sizes its intermediate caches for (M = min(num_tokens, CHUNK_SIZE)); "65536" in 0.5.1
# -> 0.5.5 (FUSED_MOE_CHUNK_OLD); no chunks before 0.5.1, M = num_tokens (0.4.1-0.5.0 sdists)
FUSED_MOE_CHUNK = 32 * 1024
FUSED_MOE_CHUNK_OLD = 64 * 1024
FUSED_MOE_CHUNKED_FROM = (0, 5, 1)
FUSED_MOE_CHUNK_32K_FROM = (0, 6, 0)
# fused_experts' intermediate_cache1 (M, top_k, N) and intermediate_cache3 (M, top_k, K) share one cache13 buffer
# from 0.8.0; up to 0.7.3 they are three separate torch.empty (read in the 0.4.1-0.8.5 sdists)
FUSED_MOE_SHARED_CACHE_FROM = (0, 8, 0)
SAMPLER_V0_SCATTER_FROM = (0, 6, 2)
# FlashInfer's top-k/top-p sampler (V1, VLLM_USE_FLASHINFER_SAMPLER; sampler_bytes), read per release and FlashInfer
# build, not fitted: beside the model-dtype logits _dummy_sampler_run holds and Sampler.forward's float32 copy (4),
# two float32 tensors of the copy's shape are alive at the pass's peak (4 + 4):
# - 0.8.x (v1/sample/ops/topk_topp_sampler.py forward_cuda, FlashInfer below 0.2.3, the docker image's 0.2.1.post2):
#   "probs = logits.softmax(dim=-1, dtype=torch.float32)", then flashinfer_sample(probs, ...) ->
#   top_k_top_p_sampling_from_probs, whose default filter_apply_order "top_k_first" makes
#   top_k_renorm_probs(probs, top_k) (torch.empty_like(probs)) before top_p_sampling_from_probs (its fallback when
#   a row's rejection sampling fails, "if not success.all()": top_k_renorm_prob / top_p_renorm_prob, not counted);
# - 0.9 -> 0.11 (FlashInfer 0.2.3+: 0.2.5, 0.2.6.post1, 0.2.8, 0.2.11, 0.3.0, 0.3.1 read): flashinfer_sample(logits, ...)
#   -> top_k_top_p_sampling_from_logits, "top_k_first": masked_logits = top_k_mask_logits(logits, top_k)
#   (torch.empty_like) and probs = torch.softmax(masked_logits) before top_p_sampling_from_probs.
# The warm-up after the graphs runs the same _dummy_sampler_run, so the profile and the warm-up hold the same 12 B.
# Was fitted as 4 B; against the logs (at 12 B): vllm#15617 (0.8.2 docker, 1,024 rows, held out) 3.34 GiB for the
# printed 3.48 (-0.6 % of the GPU; +3.5 % at 4 B); vllm#22177 (0.10.0, 256 rows) 11.93 for 12.22 (-1.2 %; +0.05 %
# at 4 B); vllm#17469 (0.8.5, 256 rows, utilization and non-torch memory not printed) 186,416 KV tokens for 198,784
# (-1.3 % of the GPU; within 0.5 % of the tokens at 4 B). llm-d#787 (0.11, 1,024 rows, GPU not named) read 0.77 GiB
# of profile peak only beside oomkit's 2.07 GiB TP2 non-torch increase; with the 0.54-0.55 GiB the 0.11 TP2 H100 logs
# print (tests/test_vllm_heldout2.py) its printed budget leaves 2.29 GiB, where the 12 B pass holds 2.03 (4 B: 0.87).
SAMPLER_BYTES_FLASHINFER = 12
# The vllm/vllm-openai image of 0.8.0 -> 0.8.5 installs FlashInfer 0.2.1.post2 (the Dockerfile's vllm-base stage:
# flashinfer_python-0.2.1.post2+cu124torch2.6 on x86_64, built from the v0.2.1.post2 tag on arm64), below the "0.2.3"
# under which 0.8.x's v1/sample/ops/topk_topp_sampler.py TopKTopPSampler.__init__ takes forward_cuda with
# VLLM_USE_FLASHINFER_SAMPLER unset ("In V1, None means True"): a V1 run in that image samples through FlashInfer
# (flashinfer_sampler). Held out: vllm#15617 (0.8.2 image, 8 x RTX 4090) and vllm#17469 (0.8.5 compose file, 4 x
# A10) print the FlashInfer path's budget; the 0.8.0 runs that died in the sort (vllm#15105, #14452) were pip and
# source installs without FlashInfer. The images of 0.9 on were not read.
IMAGE_FLASHINFER_SAMPLER = ((0, 8, 0), (0, 9, 0))
FORWARD_HIDDEN = 4.25
FORWARD_HIDDEN_V0 = 3.0
# CUDA graph memory (estimate printed by 0.19+, "Estimated CUDA graph memory"): phases.py cudagraph_estimate_bytes,
# vLLM's two-size extrapolation over the capture's own terms.
# Multimodal models: the encoder's dummy pass and what it leaves alive through the decoder's dummy run (pixel
# inputs, encoder outputs) are encoder.py's, read from the source per tower (no fitted constant).
# Model runner V2's float32 copy of the logits per (row x vocabulary) element (v2_sampler_bytes), read from
# sample/sampler.py apply_sampling_params, not fitted (no V2 log is among the fixtures).
V2_SAMPLER_FP32 = 4
# ... and, where the V2 sampler draws through FlashInfer (v2_flashinfer_sampler), top_k_top_p_sampling_from_logits'
# two float32 tensors of the copy's shape: top_k_mask_logits' output and the softmax probabilities
# (flashinfer/sampling.py, filter_apply_order "top_k_first"), read, not fitted.
V2_SAMPLER_FLASHINFER = 8


def activation_bytes(spec: ModelSpec, s: VllmSettings, r: Resolved, last_stage: bool = True,
                     driver: bool = True, kept: int = 0) -> int:
    """torch peak increase of profile_run (v1/worker/gpu_model_runner.py): _dummy_run of max_num_batched_tokens
    tokens, then _dummy_sampler_run on min(max_num_seqs, tokens) rows of full-vocabulary logits with top-k and
    top-p; MoE layers keep the fused-MoE workspace (T x top_k x (max(2N, H) + N)) alive. driver: in V0 the rank
    that samples (tensor-parallel rank 0 of the last stage; v0_activation). kept: what the model's forward builds
    and keeps from then on (the b12x wrappers, b12x_workspace_bytes; DeepSeek-V4's workspace, dsv4_workspace_bytes),
    beside the forward and the sampler pass but
    not the multimodal encoder's earlier pass."""
    v0 = v0_profile(spec, s, r)  # V0: a multimodal dummy prompt runs whole past its share (encoder.py)
    T = v0.tokens
    b = r.dtype_bytes
    h = spec.n_embd
    trunk = spec.trunk_layers
    ff = max((layer.ffn.n_ff or layer.ffn.n_ff_shared for layer in trunk), default=0)
    ff_rank = ff / r.tp
    k_hidden = FORWARD_HIDDEN if r.v1 else FORWARD_HIDDEN_V0
    forward = T * b * (3 * ff_rank + k_hidden * h)
    moe = [layer.ffn for layer in trunk if layer.ffn.is_moe]
    ws = 0.0
    block = 2 * ff_rank  # the largest single tensor of the forward per token (gate_up), for V0's reserved profile
    if moe and not triton_mxfp4_moe(spec, r):
        f = max(moe, key=lambda x: x.n_ff_expert * x.n_experts_used)
        n_rank = f.n_ff_expert if s.enable_expert_parallel else f.n_ff_expert / r.tp
        if b12x_moe(spec, s, r):
            # FlashInferB12xExperts.workspace_shapes: (1,) and (0,), the (M, K) output beside them; the wrappers'
            # own buffers, allocated in this run and kept, the caller adds by stage (b12x_workspace_bytes)
            ws = T * h * b
        elif r.at_least("moe_modular") and not vllm_cutlass_fp4_moe(spec, s):
            # the modular kernel's TritonExperts.workspace_shapes (settings.ERAS moe_modular): workspace13
            # (M, top_k, max(N/2, K)), which the output reuses, and workspace2 (M, top_k, max(N, K)), N = 2 n; M is
            # the whole batch from 0.18 (moe_unchunked), at most VLLM_FUSED_MOE_CHUNK_SIZE before
            m = T if r.at_least("moe_unchunked") else min(T, MOE_CHUNK)
            ws = m * f.n_experts_used * (max(n_rank, h) + max(2 * n_rank, h)) * b
        else:
            # fused_experts: intermediate_cache1 / 3 share one buffer, intermediate_cache2 (M x top_k, N/2); the
            # same sizes as CutlassExpertsFp4.workspace_shapes ((M x top_k, max(2 N', K)) and (M x top_k, N'),
            # N' = intermediate; experts/cutlass_moe.py, 0.20.0). fused_moe.py fused_experts_impl sizes both for
            # M = min(num_tokens, VLLM_FUSED_MOE_CHUNK_SIZE) and loops over the chunks (FUSED_MOE_CHUNK)
            m = T if vllm_cutlass_fp4_moe(spec, s) else fused_moe_rows(r, T)
            if r.version >= FUSED_MOE_SHARED_CACHE_FROM or vllm_cutlass_fp4_moe(spec, s):
                ws = m * f.n_experts_used * (max(2 * n_rank, h) + n_rank) * b
            else:
                ws = m * f.n_experts_used * (2 * n_rank + h + n_rank) * b
        block = max(block, f.n_experts_used * max(2 * n_rank, h))
        if vllm_cutlass_fp4_moe(spec, s):
            # beside workspace13 and workspace2, run_cutlass_moe_fp4 holds three (T x top_k, hidden) tensors at its
            # end: the rows shuffled in (ops.shuffle_rows(a, a_map)), the rows shuffled out (shuffle_rows(c3, c_map))
            # and the router-weighted product summed into the output
            ws += 3 * T * f.n_experts_used * h * b
    if not r.v1:
        walked = v0_mla_moe_forward(spec, s, r, T)
        if walked is not None:
            return v0_activation(spec, s, r, walked + v0.held, walked, last_stage and driver)
        if not moe and not r.at_least("profile_absolute"):
            forward = max(forward, v0_cached_forward(spec, r, ff_rank))
        mm = mllama_v0_profile(spec, s, r)
        if mm is None:
            return v0_activation(spec, s, r, forward + ws + v0.held, T * b * block, last_stage and driver)
        # the sampler runs after the forward returned (the pixels and cross-attention states freed), in the blocks
        # the vision pass left cached (the mask's product the largest)
        sampled = v0_activation(spec, s, r, forward + ws, max(T * b * block, mm.mask), last_stage and driver)
        return max(sampled, mm.vision_peak, mm.decoder_held + max(forward + ws, mm.cross))
    # the encoder pass runs first (its own peak), then its inputs and outputs stay alive through the rest
    encoder, encoder_pass = encoder_profile(spec, s, r)
    ws += kept
    if not last_stage:
        return int(max(dsv4_mhc_forward(spec, s, r, forward, T) + ws + encoder, encoder_pass))
    if not r.at_least("v1_dummy_sampler"):
        # no sampler pass before 0.8.0 (settings.ERAS v1_dummy_sampler): compute_logits' full-vocabulary logits
        # (gathered to every rank) in the model dtype beside the hidden states they come from, over all T rows up
        # to 0.7.2, over min(max_num_seqs, T) from 0.7.3 (v1_profile_logit_rows)
        rows = min(r.max_num_seqs, T) if r.at_least("v1_profile_logit_rows") else T
        logits = rows * (spec.n_vocab * b + h * b)
        return int(max(max(forward, logits) + ws + encoder, encoder_pass))
    # beside the sampler, the dummy run's hidden states: up to 0.9.1 only the sampled rows (gpu_model_runner.py
    # _dummy_run "return hidden_states[logit_indices]", the full output freed on return), from 0.9.2 the whole
    # T-row output too (profile_run keeps "hidden_states, last_hidden_states = self._dummy_run(...)")
    rows = T if r.version >= PROFILE_HIDDEN_KEPT_FROM else min(r.max_num_seqs, T)
    sampler = sampler_bytes(spec, s, r) + rows * h * b
    forward += mtp_drafter_profile_bytes(spec, s, r)
    forward += dsv4_indexer_logits_bytes(spec, s, r)  # DeepSeek-V4's indexer: a dummy at the peak
    if last_stage and r.version >= PROFILE_DRAFTER_FROM and (d := drafter_of(s, r)) is not None:
        forward += drafter_profile_bytes(d, spec, r)
    forward = dsv4_mhc_forward(spec, s, r, forward, T)  # DeepSeek-V4's hyper-connection residual streams
    return int(max(max(forward, sampler) + ws + encoder, encoder_pass, cold_compile_bytes(spec, s, r)))


# V0's profile run of Llama 3.2 Vision (mllama), vLLM 0.6.2 -> 0.6.3: worker/enc_dec_model_runner.py
# EncoderDecoderModelRunner.profile_run builds max_num_seqs dummy sequences, each with the encoder dummy data of
# models/mllama.py dummy_encoder_data_for_mllama (limit_mm_per_prompt images, 1 by default: multimodal/registry.py
# init_mm_limits_per_prompt; each a 1024 x 1024 image, which the HF processor packs into max_num_tiles tiles of
# image_size^2), and runs them in one forward: the vision tower over every tile of every dummy image at once.
# models/mllama.py is byte-identical in the 0.6.2 and 0.6.3 wheels; 0.6.4 reworks
# MllamaForConditionalGeneration.forward (get_cross_attention_states, a cross-attention mask, the projector a
# ColumnParallelLinear) and was not read for its peak, so the rule stops there. mllama arrived in 0.6.2 (PR #8811).
MLLAMA_V0_PROFILE = ((0, 6, 2), (0, 6, 4))


@dataclass(frozen=True)
class MllamaProfile:
    """What V0's mllama profile run holds at each step (per rank, bytes), read from models/mllama.py of 0.6.2 / 0.6.3
    (MllamaForConditionalGeneration.forward, _parse_and_validate_image_input, MllamaVisionModel.forward,
    MllamaVisionEncoder / MllamaVisionEncoderLayer.forward, _prepare_aspect_ratio_attention_mask,
    MllamaTextCrossAttention.forward). Names: B dummy images (max_num_seqs x images per prompt), each of `tiles`
    tiles of 3 x image_size^2 pixels (PX elements in all); P32 = 4 PX; E the patch embedding's output (B tiles x
    patches x width / TP); H one vision hidden state (B tiles x patches + 1 padded to 8 x width, full width on every
    rank: all_gather after the patch embedding); M the attention mask (B x (tiles x padded)^2); C the projected
    cross-attention states (B tiles x (patches + 1) x text hidden); K the intermediate layers kept.
    - pixels: 2 P32 through the whole forward: the float32 batch execute_model moves to the GPU (the keyword
      arguments built from MultiModalInputs.as_kwargs stay referenced by the callers' frames while the model runs)
      and _parse_and_validate_image_input's float32 out_images (torch.zeros ..., dtype=torch.float32) it copies into;
    - patch: + the model-dtype cast and its unfold (PX each) + E (ColumnParallelConv2dPatch);
    - mask: + E (patch_embeds stays a local) + H + 2 M (`attention_mask @ attention_mask.transpose(-1, -2) *
      finfo.min`: the product and its scaled copy);
    - local / global: + E + M + the transformer's input H + the layer's peak (residual, its norm, then either the MLP's
      fc1 output and GELU output (2 ff / TP each) or attention's qkv (3 / TP), SDPA output and contiguous copy
      (1 / TP each) and o_proj's output, in place all-reduced); the 32 layers keep K inputs (output_hidden_states);
      the 8 gated layers run after torch.stack made K more, while `output` still holds the K and the local output;
    - tail: the reshapes and the torch.cat of the hidden state and the K intermediates (3 K + 3 H beside M and E);
    - project: (K + 1) H of cat output, then C (nn.Linear), then flat_encoder_result's copy (2 C);
    - decoder: the pixels and C held through the text model; a cross-attention layer adds its qkv_proj over C's
      tokens ((heads + 2 KV heads) x head dim / TP) and k_norm's float32 copy and product (8 B a K element).
    Vision attention is F.scaled_dot_product_attention with a float mask: PyTorch 2.4 (0.6.2 / 0.6.3's pin) runs it
    on the memory-efficient kernel, which keeps no (tokens x tokens) scores. Held out: vllm#10034 (0.6.2, 2 x A10,
    TP2, 256 sequences) ran out allocating 1.95 GiB (E at TP2: 256 x 4 x 1600 x 640 x 2 B) in patch_embedding with
    20.90 GiB allocated, 10.83 beside its 10.07 GiB of weights, where this reads 10.77 (2 P32 + 2 PX x 2 B)."""

    pixels: int
    patch_embeds: int
    patch: int
    mask: int
    mask_stage: int
    local: int
    global_layers: int
    tail: int
    project: int
    decoder_held: int
    cross: int

    @property
    def vision_peak(self) -> int:
        return max(self.patch, self.mask_stage, self.local, self.global_layers, self.tail, self.project)


def mllama_v0_profile(spec: ModelSpec, s: VllmSettings, r: Resolved) -> MllamaProfile | None:
    """V0's mllama profile-run terms (MllamaProfile) for 0.6.2 -> 0.6.3 (MLLAMA_V0_PROFILE); None for another
    model or release, or when images are limited to 0 per prompt."""
    low, high = MLLAMA_V0_PROFILE
    if r.v1 or spec.architecture != "mllama" or not low <= r.version < high:
        return None
    tower = next((t for t in spec.towers if t.kind == "vision"), None)
    vc = (tower.config.get("vision_config") if tower else None) or {}
    try:
        side, patch = int(vc["image_size"]), int(vc["patch_size"])
        tiles, width, ff = int(vc["max_num_tiles"]), int(vc["hidden_size"]), int(vc["intermediate_size"])
        channels = int(vc.get("num_channels", 3))
        kept = len(vc.get("intermediate_layers_indices") or ())
    except (KeyError, TypeError, ValueError):
        return None
    images = r.max_num_seqs * dict(s.limit_mm_per_prompt or ()).get("image", 1)
    if images <= 0 or patch <= 0:
        return None
    cross = next((la.attention for la in spec.layers if la.cross_attention and la.attention), None)
    b, tp = r.dtype_bytes, r.tp
    patches = (side // patch) ** 2
    padded = -(-(patches + 1) // 8) * 8  # MllamaVisionModel.forward: F.pad to a multiple of 8
    px = images * tiles * channels * side * side
    pixels = 2 * 4 * px
    emb = images * tiles * patches * width // tp * b
    hidden = images * tiles * padded * width * b
    mask = images * (tiles * padded) ** 2 * b
    layer = max(3 + 4 / tp, 2 + 2 * ff / (width * tp), 4) * hidden
    tokens = images * tiles * (patches + 1)
    states = tokens * spec.n_embd * b
    qkv = kv = 0
    if cross is not None:
        qkv = tokens * (cross.n_heads + 2 * cross.n_kv_heads) * cross.head_dim_k // tp * b
        kv = tokens * cross.n_kv_heads * cross.head_dim_k // tp
    unpadded = images * tiles * (patches + 1) * width * b
    return MllamaProfile(
        pixels=pixels,
        patch_embeds=emb,
        patch=pixels + 2 * px * b + emb,
        mask=mask,
        mask_stage=pixels + emb + hidden + 2 * mask,
        local=int(pixels + emb + mask + (1 + kept) * hidden + layer),
        global_layers=int(pixels + emb + mask + (2 + 2 * kept) * hidden + layer),
        tail=pixels + emb + mask + (3 * kept + 3) * hidden,
        project=pixels + max((kept + 1) * unpadded + states, 2 * states),
        decoder_held=pixels + states,
        cross=qkv + 8 * kv,
    )


def mtp_drafter_profile_bytes(spec: ModelSpec, s: VllmSettings, r: Resolved) -> int:
    """What the profile run's drafter pass holds above the target's forward peak, for the checkpoint's own MTP layers
    as the drafter (PROFILE_DRAFTER_FROM; model runners V1 and V2): _dummy_run calls drafter.dummy_run(num_tokens) with the
    target's T-row output hidden_states still referenced, and the drafter runs eager passes (num_speculative_tokens
    of them in 0.24.0) of its MTP decoder layer (e.g. qwen3_5_mtp.py Qwen3_5MultiTokenPredictor.forward: pre_fc
    norms, cat, fc, then one layer of the trunk's widths, so its own peak is the target's per-layer peak). The
    difference is that kept output, T x hidden in the model dtype (TP-replicated). External EAGLE drafters (own
    widths) are drafter.py's profile_bytes. Model runner V2 the same: v1/worker/gpu/model_runner.py _dummy_run keeps
    the target's hidden_states while speculator.propose runs (MTPSpeculator: spec_decode/mtp/speculator.py on the
    AutoRegressiveSpeculator / TargetDependentARSpeculator path shared with EAGLE, read in 0.29.0, 0.30.0 and
    0.34.0; its input is last_hidden_states itself, no new tensor)."""
    if not r.v1 or r.version < PROFILE_DRAFTER_FROM or not r.num_spec:
        return 0
    method = s.speculative_method
    if method is not None and method != "mtp" and not method.endswith("_mtp"):
        return 0
    if len(spec.layers) <= spec.n_trunk_layers:
        return 0  # no MTP layers in the checkpoint: not the checkpoint's own drafter
    return r.max_num_batched_tokens * spec.n_embd * r.dtype_bytes


def cold_compile_bytes(spec: ModelSpec, s: VllmSettings, r: Resolved) -> int:
    """The compiler's own peak when the profile run compiles the model (s.cold_compile: no torch.compile cache yet,
    or VLLM_DISABLE_COMPILE_CACHE=1), model runner V2 only.

    The first model call compiles inside memory_profiling (v1/worker/gpu_worker.py determine_available_memory ->
    v1/worker/gpu/model_runner.py profile_run -> compilation/decorators.py __call__: aot_compile, then the call; a
    warm start loads the artifact instead, "Directly load AOT compilation"), so whatever the compiler allocates on the
    GPU counts as peak activation. vLLM turns on Inductor's combo kernels with benchmarking (config/compilation.py
    CompilationConfig.__post_init__: combo_kernels and benchmark_combo_kernel for torch >= 2.9; 0.12 -> 0.34), and
    Inductor benchmarks each candidate group and its subkernels "on randomly generated inputs" (torch/_inductor/
    scheduler.py speedup_by_combo_kernel -> benchmark_fused_nodes, torch 2.13 for vLLM 0.27): a fresh tensor for every
    argument of the kernel. The term is the arguments of the token embedding's gather fused with the first RMSNorm:
    the whole (vocabulary / TP, hidden) table and its two (T, hidden) outputs. That this kernel is the one benchmarked
    is a reading of the only evidence, two cold / warm pairs of the same settings on an RTX 4090 (0.27.1,
    alexostapiuk11/coldstart-recon-worker), not a measurement: the cold peak is the same share of the embedding table
    in both (Qwen3-8B 1.18 GiB printed, 1.19 here, warm 0.19; Qwen3-1.7B 0.59, 0.60 here, warm 0.09; widths 4096 and
    2048 over one 151,936-token vocabulary), and it replaces the forward's peak rather than adding to it (the compile
    runs before the forward). No constant fitted. The 1.7B cold start also shows +0.56 GiB outside PyTorch, which the
    8B one does not (not modelled: +2.0 % of the GPU left on that log). V1's activation terms were read off logs that
    do not say whether they compiled, so the term is not added there (the 0.24 RTX 4090 Qwen2.5-0.5B log, V1 and
    cold, is already -1.1 % of the GPU without it). Under pipeline parallelism only the first stage holds the gather;
    the term is charged to every stage (no V2 log with PP)."""
    if not (s.cold_compile and r.runner_v2) or s.enforce_eager or s.optimization_level == 0:
        return 0
    b = r.dtype_bytes
    return int((spec.n_vocab / r.tp + 2 * r.max_num_batched_tokens) * spec.n_embd * b)


def v0_activation(spec: ModelSpec, s: VllmSettings, r: Resolved, forward: float, block: float, samples: bool
                  ) -> int:
    """V0's profile peak (worker/model_runner.py profile_run -> execute_model, 0.4 -> 0.8.x): the forward over
    max_num_batched_tokens, then on the rank that samples only the sampler over max_num_seqs rows, beside the
    hidden states the runner still holds. Only the driver samples: the logits are gathered to tensor-parallel rank 0
    (logits_processor.py _get_logits, tensor_model_parallel_gather) and execute_model returns after compute_logits on
    every other rank ("if not self.is_driver_worker: return []"); the executor then takes the smallest block count
    over the workers, the driver's. Up to 0.6.3 the profile is what the caching allocator still holds afterwards
    (worker.py determine_num_available_blocks: init_gpu_memory - mem_get_info() after profile_run, the cache not
    emptied): where the sampler's int64 (row x vocabulary) indices are larger than the largest block the forward
    left cached (block: its gate_up or fused-MoE cache), they take segments of their own and the two are added
    (vllm#7553, 0.5.4: 256 x 64,000 rows against 4096 tokens); otherwise they fit in the forward's blocks and the
    larger counts. From 0.6.4 it is the allocated peak (torch.cuda.memory_stats): the larger of the two."""
    if not samples:
        return int(forward)
    sampler = sampler_bytes(spec, s, r) + r.max_num_batched_tokens * spec.n_embd * r.dtype_bytes
    rows = min(r.max_num_seqs, r.max_num_batched_tokens) * spec.n_vocab
    if not r.at_least("profile_absolute") and 8 * rows > block:
        return int(forward + sampler)
    return int(max(forward, sampler))


def fused_moe_rows(r: Resolved, tokens: int) -> int:
    """The rows fused_experts sizes its intermediate caches for (FUSED_MOE_CHUNK*)."""
    if r.version < FUSED_MOE_CHUNKED_FROM:
        return tokens
    return min(tokens, FUSED_MOE_CHUNK if r.version >= FUSED_MOE_CHUNK_32K_FROM else FUSED_MOE_CHUNK_OLD)


# MLA turned off in 0.7.1-0.7.2 (Resolved.mla_off) runs the same DeepseekV2Attention as 0.7.0 (the class unchanged
# in the 0.7.1 and 0.7.2 sdists; 0.7.3 drops its rope reshapes, not walked)
MLA_OFF_WALKED_BEFORE = (0, 7, 3)


def v0_mla_moe_forward(spec: ModelSpec, s: VllmSettings, r: Resolved, tokens: int) -> int | None:
    """V0's profile forward of a DeepSeek-V2 / V3 model before vLLM cached the latent (0.5.1 -> 0.7.0; kv.py
    MLA_HEAD_PADDED_BEFORE): allocator.py v0_forward_mla_moe's walk, the segments it leaves cached up to 0.6.3 (the
    profile is init_gpu_memory less the free memory after profile_run), its allocated peak from 0.6.4
    (profile_absolute); also 0.7.1-0.7.2 with MLA off (MLA_OFF_WALKED_BEFORE). None for other models and releases."""
    trunk = spec.trunk_layers
    walked = not r.at_least("mla_latent") or (r.mla_off and r.version < MLA_OFF_WALKED_BEFORE)
    if not walked or not trunk or any(la.kind is not LayerKind.LATENT for la in trunk):
        return None
    moe = [la.ffn for la in trunk if la.ffn.is_moe]
    a = trunk[0].attention
    if not moe or a is None:
        return None
    tp, b, h = r.tp, r.dtype_bytes, spec.n_embd
    heads = max(1, a.n_heads // tp)
    qk = a.qk_nope_head_dim + a.qk_rope_head_dim
    padded = heads * max(qk, MLA_PADDED_HEAD) if r.version < MLA_HEAD_PADDED_BEFORE else 0
    f = moe[0]
    n = f.n_ff_expert if s.enable_expert_parallel else f.n_ff_expert / tp
    m = fused_moe_rows(r, tokens)
    caches = (int(m * f.n_experts_used * 2 * n * b), int(m * f.n_experts_used * n * b), m * f.n_experts_used * h * b)
    n_dense = next((i for i, la in enumerate(trunk) if la.ffn.is_moe), len(trunk))
    widths = MlaMoeForward(
        hidden=h, q_lora=a.q_lora_rank, q=heads * qk, latent=a.kv_lora_rank + a.qk_rope_head_dim,
        kv_lora=a.kv_lora_rank, kv=heads * (a.qk_nope_head_dim + a.v_head_dim), rope_q=heads * a.qk_rope_head_dim,
        rope_k=a.qk_rope_head_dim, padded=padded, v_padded=padded or heads * qk, v_out=heads * a.v_head_dim,
        ff_dense=int(max((la.ffn.n_ff for la in trunk[:n_dense]), default=0) / tp),
        ff_shared=int(f.n_ff_shared / tp), experts=f.n_experts, top_k=f.n_experts_used, moe_caches=caches)
    reserved, peak = v0_forward_mla_moe(tokens, b, widths, n_dense, len(trunk))
    return peak if r.at_least("profile_absolute") else reserved


def v0_cached_forward(spec: ModelSpec, r: Resolved, ff_rank: float) -> int:
    """V0 up to 0.6.3: what the caching allocator holds after the profile's dense forward (allocator.py
    v0_reserved_forward), the segments its tensors could not share as well as the peak alive at once. The profile
    is init_gpu_memory less the free memory after profile_run with the cache not emptied (worker.py
    determine_num_available_blocks, 0.4 -> 0.6.3). Dense models with standard attention only (0: not walked).
    vllm#5248 (0.4.2, deepseek-coder-6.7b at TP 2 over 65,536 tokens): 4.09 GiB cached against 3.52 GiB allocated,
    the KV budget +3.2 % of the GPU from the log's 507 blocks instead of +7.1 % (not fitted: read from the source)."""
    attn = next((layer.attention for layer in spec.trunk_layers if layer.attention is not None), None)
    if attn is None or attn.kv_lora_rank or not ff_rank:
        return 0
    heads = attn.n_heads / r.tp
    kv_heads = max(attn.n_kv_heads / r.tp, 1)  # replicated below one head a rank
    qkv = heads * attn.head_dim_k + kv_heads * (attn.head_dim_k + attn.head_dim_v)
    widths = DenseForward(hidden=spec.n_embd, qkv=int(qkv), attn=int(heads * attn.head_dim_v), ff=int(ff_rank))
    # ChatGLM's unfused residuals keep more hidden-width tensors alive (allocator.v0_reserved_forward_glm)
    walk = v0_reserved_forward_glm if spec.architecture == "chatglm" else v0_reserved_forward
    return walk(r.max_num_batched_tokens, r.dtype_bytes, widths, spec.n_trunk_layers)


def vllm_cutlass_fp4_moe(spec: ModelSpec, s: VllmSettings) -> bool:
    """NVFP4 experts on vLLM's own CUTLASS kernel: --moe-backend cutlass maps to NvFp4MoeBackend.VLLM_CUTLASS
    (fused_moe/oracle/nvfp4.py map_nvfp4_backend, 0.20+), which runs fused_moe/cutlass_moe.py run_cutlass_moe_fp4
    (the same allocations from 0.10 to 0.2x). vLLM's own pick without the flag depends on the FlashInfer build
    and the GPU (select_nvfp4_moe_backend) and is not modelled."""
    return (s.moe_backend or "").lower() == "cutlass" and any(
        "nvfp4" in t.dtype.lower() and "_exps" in t.name for t in spec.weights.tensors)


# FlashInfer's b12x fused MoE for SM12x (--moe-backend flashinfer_b12x; fused_moe/oracle/nvfp4.py keeps it out of
# vLLM's own pick, "intentionally excluded from auto-selection", so only the flag selects it). From 0.25 each MoE
# layer's FlashInferB12xExperts builds its own flashinfer.fused_moe.B12xMoEWrapper on its first apply(), in the
# profile run (experts/flashinfer_b12x_moe.py _ensure_wrapper: use_cuda_graph=True, max_num_tokens =
# FusedMoEConfig.max_num_tokens = max_num_batched_tokens, fused_moe/layer.py; read in 0.25.0, 0.25.1, 0.27.0, 0.29.0
# and 0.34.0; 0.24.0 calls the functional flashinfer_b12x_fused_moe, whose module-level workspace cache one shape
# shares across the layers: not modelled). The wrapper pre-allocates and keeps, per layer (FlashInfer 0.6.13, the
# pin of 0.25.x, and the same allocations in 0.6.14 and 0.6.16.post3, those of 0.26.0 and 0.27.0-0.28.0:
# fused_moe/cute_dsl/b12x_moe.py B12xMoEWrapper._allocate_buffers, blackwell_sm12x/moe_dispatch.py), for
# R = max_num_tokens x top_k routed rows over E local experts of hidden K: a static workspace of
# min(R, B12X_STATIC_CUTOVER) rows a expert where R is past the cutover (allocate_sm120_static_workspace: the packed
# FP4 input E x rows x K/2, its FP8 block scales E x rows (to 128) x K/16 (to 4), token_map and token_weights,
# 4 B each), a dynamic one beside it (allocate_sm120_dynamic_workspace: ceil(R / 128) + min(E, R) - 1 tiles of
# 128 rows, _dynamic_task_geometry, with the same per-row input, scales and maps) and the bf16 output
# (max_num_tokens, K). The modular kernel's own workspaces are (1,) and (0,) (workspace_shapes), only its (M, K)
# output beside them. vllm#49476 (RTX PRO 6000, 0.25.1, Qwen3.6-35B-A3B NVFP4 at 8,192 batched tokens): 52.89 GiB of
# KV with b12x against 64.36 with Marlin; 40 layers x 322 MiB here. Not carried: 0.29's pin, FlashInfer 0.6.18,
# picks the dynamic tile height per shape (moe_dispatch.py _select_dynamic_tile_m) and adds the direct-micro planes,
# and 0.34's 0.7.3 was not read, so the rule stops at B12X_UNTIL; vllm PR #48698 (one workspace shared across the
# layers) is not in the 0.34.0 tree.
B12X_WRAPPER_FROM = (0, 25, 0)
B12X_UNTIL = (0, 29, 0)
B12X_TILE = 128  # moe_dispatch.py _LEVEL_TILE_M
B12X_STATIC_CUTOVER = 640  # moe_dispatch.py _STATIC_COMPACT_CUTOVER_PAIRS_DEFAULT (routed rows)


def b12x_moe(spec: ModelSpec, s: VllmSettings, r: Resolved) -> bool:
    """NVFP4 experts on FlashInfer's b12x kernel with its per-layer wrapper, in the releases whose FlashInfer pin was
    read (B12X_WRAPPER_FROM to B12X_UNTIL): the flag, an SM12x GPU (FlashInferB12xExperts._supports_current_device),
    no expert parallelism (_supports_parallel_config)."""
    return ((s.moe_backend or "").lower() == "flashinfer_b12x" and B12X_WRAPPER_FROM <= r.version < B12X_UNTIL
            and (r.cc or (0, 0))[0] == 12 and not s.enable_expert_parallel
            and any("nvfp4" in t.dtype.lower() and "_exps" in t.name for t in spec.weights.tensors))


def b12x_workspace_bytes(spec: ModelSpec, s: VllmSettings, r: Resolved,
                         layer_range: tuple[int, int] | None = None) -> int:
    """What the b12x wrappers keep on a rank from the profile run on (the comment above B12X_WRAPPER_FROM): every MoE
    layer's (of layer_range, the rank's pipeline stage; None: all) static and dynamic workspaces and output buffer;
    0 off that path. Built in the profile run, so inside its peak, and kept after it (layout.py RankMemory.kept)."""
    if not b12x_moe(spec, s, r):
        return 0
    lo, hi = layer_range if layer_range is not None else (0, spec.n_trunk_layers)
    m = r.max_num_batched_tokens
    k = spec.n_embd
    scale_cols = -(-(k // 16) // 4) * 4  # FP8 block scales a row: K / 16, aligned to 4
    per_row = k // 2 + scale_cols + 4 + 4  # packed FP4 input, its scales, token_map, token_weights
    total = 0
    for layer in spec.trunk_layers:
        f = layer.ffn
        if not f.is_moe or not lo <= layer.index < hi:
            continue
        e = f.n_experts
        routed = m * f.n_experts_used
        dynamic = routed > B12X_STATIC_CUTOVER
        static_rows = min(routed, B12X_STATIC_CUTOVER) if dynamic else routed
        total += e * static_rows * per_row
        if dynamic:
            tiles = -(-routed // B12X_TILE) + min(e, routed) - 1
            total += tiles * B12X_TILE * per_row
        total += m * k * 2  # the bf16 output (max_num_tokens, K)
    return total



# DeepSeek-V4's reservations in the profile run on the FlashMLA path (SM 9.x / 10.x, config.py dsv4_kv_dtype), read
# in the 0.24.0 and 0.25.1 wheels (the same code in both; 0.27.0 adds a combined top-k buffer to the FlashMLA one and
# 0.34.0 sizes the indexer's prefill buffer otherwise, neither carried; 0.20-0.23 not read):
# - models/deepseek_v4/nvidia/flashmla.py DeepseekV4FlashMLAAttention.forward_mqa, the dummy run (no metadata):
#   current_workspace_manager().get_simultaneous(((PREFILL_CHUNK_SIZE = 4, M, head_dim), bfloat16)) with
#   M = ceil(max_model_len / ratio) + sliding window + max_num_batched_tokens (the ratio-1 layers: N = 0);
# - model_executor/layers/sparse_attn_indexer.py sparse_attn_indexer, its profiling branch (the ratio-4 layers'
#   indexers): the K-gather workspace, (T, index_head_dim) fp8 + (T, 4) uint8 scales (MXFP4 keys: (T, dim / 2) +
#   (T, dim / 32)) + RADIX_TOPK_WORKSPACE_SIZE (1 MiB), T = the indexer's max_total_seq_len =
#   get_max_prefill_buffer_size (v1/attention/backends/mla/indexer.py: 40 x max_model_len) // ratio
#   (models/deepseek_v4/attention.py DeepseekV4Indexer), then torch.empty(VLLM_SPARSE_INDEXER_MAX_LOGITS_MB = 512
#   MiB, uint8) "to simulate for peak logits tensor memory", freed on return.
# v1/worker/workspace.py WorkspaceManager keeps one buffer (a micro-batch), grown to the largest request (each piece
# rounded up to 256 B): the larger reservation stays from the profile run on (RankMemory.kept); the logits dummy
# adds to the forward's peak. DeepSeek-V4-Flash at 400k and 32,768 batched tokens: 4 x 132,896 x 512 x 2 B =
# 0.51 GiB kept and 0.5 GiB at the peak (tests/test_vllm_heldout17.py).
DSV4_WORKSPACE = ((0, 24, 0), (0, 26, 0))
DSV4_PREFILL_CHUNK = 4
DSV4_PREFILL_BUFFER_PER_LEN = 40
DSV4_INDEXER_LOGITS = 512 * 1024 * 1024
DSV4_RADIX_TOPK = 1024 * 1024
DSV4_WORKSPACE_ALIGN = 256


def dsv4_flashmla_profile(spec: ModelSpec, s: VllmSettings, r: Resolved) -> bool:
    """DeepSeek-V4 on the FlashMLA path in a release whose profile-run reservations were read (DSV4_WORKSPACE)."""
    lo, hi = DSV4_WORKSPACE
    return (spec.architecture in DSV4_ARCHS and r.v1 and lo <= r.version < hi and r.cc is not None
            and r.cc[0] in (9, 10) and (s.attention_backend or "").upper() != "FLASHINFER_MLA_SPARSE_DSV4")


def _dsv4_layers(spec: ModelSpec, layer_range: tuple[int, int] | None):
    lo, hi = layer_range if layer_range is not None else (0, spec.n_trunk_layers)
    return [layer for layer in spec.trunk_layers if lo <= layer.index < hi]


def dsv4_workspace_bytes(spec: ModelSpec, s: VllmSettings, r: Resolved,
                         layer_range: tuple[int, int] | None = None) -> int:
    """The WorkspaceManager buffer DeepSeek-V4's profile run leaves on a rank (the comment above DSV4_WORKSPACE): the
    largest of its layers' FlashMLA prefill-gather and indexer K-gather reservations; 0 off that path."""
    if not dsv4_flashmla_profile(spec, s, r):
        return 0

    def up(n: int) -> int:
        return -(-n // DSV4_WORKSPACE_ALIGN) * DSV4_WORKSPACE_ALIGN

    fp4 = dsv4_indexer_mxfp4(s, r.version, r.cc)
    need = 0
    for layer in _dsv4_layers(spec, layer_range):
        a = layer.attention
        ratio = max(1, a.compress_ratio or 1)
        n = 0 if ratio <= 1 else -(-r.max_model_len // ratio)
        m = n + (a.window or 128) + r.max_num_batched_tokens
        need = max(need, up(DSV4_PREFILL_CHUNK * m * a.head_dim_k * 2))
        if ratio == 4 and a.index_head_dim:
            rows = DSV4_PREFILL_BUFFER_PER_LEN * r.max_model_len // ratio
            d = a.index_head_dim
            values, scales = (rows * d // 2, rows * d // 32) if fp4 else (rows * d, rows * 4)
            need = max(need, up(values) + up(scales) + DSV4_RADIX_TOPK)
    return need


def dsv4_indexer_logits_bytes(spec: ModelSpec, s: VllmSettings, r: Resolved,
                              layer_range: tuple[int, int] | None = None) -> int:
    """The indexer's 512 MiB logits dummy at the profile run's peak, where the rank holds a ratio-4 layer."""
    if not dsv4_flashmla_profile(spec, s, r):
        return 0
    if not any((layer.attention.compress_ratio or 1) == 4 and layer.attention.index_head_dim
               for layer in _dsv4_layers(spec, layer_range)):
        return 0
    return DSV4_INDEXER_LOGITS

# DeepSeek-V4's hyper-connection (mHC) residual streams in the forward, read in the 0.24.0 and 0.25.1 sdists (the same
# code in both; other releases not read, so the rule keeps to DSV4_WORKSPACE's range). models/deepseek_v4/nvidia/
# model.py (amd/model.py alike) DeepseekV4Model.forward repeats the embedding into hc_mult streams,
# hidden_states.unsqueeze(-2).repeat(1, hc_mult, 1): a bf16 (T, hc_mult, hidden) residual, hc_mult x T x hidden x 2 B
# (1 GiB for DeepSeek-V4-Flash at 32,768 tokens, TP-independent: every rank holds the whole stream). Each
# DeepseekV4DecoderLayer.forward calls model_executor/kernels/mhc/tilelang.py mhc_fused_post_pre_tilelang twice (before
# the attention and before the MoE), and each returns a new stream, residual_cur = torch.empty_like(residual_flat),
# beside the one it reads, while the model's loop (`hidden_states, residual, post_mix, res_mix = layer(...)`) still
# holds the previous layer's stream and its output. So a layer's MoE runs beside two streams (the caller's and its
# own), where the model-agnostic forward (FORWARD_HIDDEN) counts one hidden-sized residual: (2 hc_mult - 1) x T x
# hidden x 2 B more; and the second fused call holds three streams (the caller's, the attention side's and its new
# one) with three hidden-sized tensors (the caller's hidden_states, the attention output, layer_input_cur):
# (3 hc_mult + 3) x T x hidden x 2 B. The mixes (post_mix, comb_mix, the prenorm GEMM's outputs: T x 24 float32 a
# split) are small and not counted. On the FlashMLA path (dsv4_flashmla_profile) the attention adds a third moment:
# models/deepseek_v4/attention.py DeepseekV4Attention.forward allocates o_padded, (T, padded_heads, head_dim) in the
# model dtype, padded_heads = nvidia/flashmla.py get_padded_num_q_heads (64 up to 64 local heads, else 128: "FP8
# decode kernel only supports h_q = 64 or 128"), and in the profile run (no metadata) _fused_qnorm_rope_kv_insert
# returns F.pad(q, ...) of wq_b's (T, local heads, head_dim) q to the same padded shape, both alive at once inside the
# pad; beside them the two streams (the caller's and the first fused call's) and two hidden states (the caller's
# hidden_states and the layer input): (2 hc_mult + 2) x T x hidden x 2 B + T x (2 padded + local) x head_dim x 2 B
# (qr, kv and the compressor / indexer scores, under 0.1 GiB at 32,768 tokens, not counted). DeepSeek-V4-Flash at
# 32,768 tokens: 2.5 GiB + 4.5 GiB at TP4 (16 local heads padded to 64), + 5.0 at TP2. The peak is the largest.
def dsv4_hc_mult(spec: ModelSpec) -> int:
    """hc_mult, the length of the head's mHC base (output_hc_base: (hc_mult,), model/hf_config.py); 0 without it."""
    for t in spec.weights.tensors:
        if t.name == "output_hc_base.weight":
            return int(t.shape[0])
    return 0


def dsv4_mhc_forward(spec: ModelSpec, s: VllmSettings, r: Resolved, forward: float, tokens: int) -> float:
    """The profile forward's peak with DeepSeek-V4's mHC residual streams (the comment above): forward itself off
    the read releases or without hyper-connections."""
    lo, hi = DSV4_WORKSPACE
    if spec.architecture not in DSV4_ARCHS or not r.v1 or not lo <= r.version < hi:
        return forward
    hc = dsv4_hc_mult(spec)
    if hc <= 1:
        return forward
    row = tokens * spec.n_embd * 2  # one bf16 hidden state (mhc_pre_tilelang asserts residual.dtype bfloat16)
    peak = max(forward + (2 * hc - 1) * row, (3 * hc + 3) * row)
    if dsv4_flashmla_profile(spec, s, r):
        b = r.dtype_bytes
        attention = 0
        for layer in spec.trunk_layers:
            a = layer.attention
            local = -(-a.n_heads // r.tp)
            padded = 64 if local <= 64 else 128
            attention = max(attention, tokens * (2 * padded + local) * a.head_dim_k * b)
        peak = max(peak, (2 * hc + 2) * row + attention)
    return peak


# The first release whose install carries triton_kernels. From 0.10.2 the Triton MXFP4 MoE is vLLM's pick on Hopper
# only when that package imports (quantization/mxfp4.py get_mxfp4_backend: has_triton_kernels()), else Marlin; no
# wheel depended on it: "users have to install triton_kernels manually" (vllm#27370, 2025-10-22, whose pip
# requirement #27659 reverted because PyPI refuses URL dependencies), a pip-installed 0.11.0 cannot import it
# (vllm#26582). #28788 vendors it as vllm/third_party/triton_kernels; approved on 2025-11-18, the day 0.11.1 was
# released (0.11.2 was that branch's patch), so 0.12.0 is the first release with it (a later-built "0.11.1" from
# 2025-12-09 loads it from there, stepfun-ai/Step3-VL-10B#10). An install with triton_kernels added by hand takes
# the Triton path earlier; not modelled.
TRITON_KERNELS_FROM = (0, 12, 0)


def triton_mxfp4_moe(spec: ModelSpec, r: Resolved) -> bool:
    """MXFP4 experts on Hopper run through triton_kernels' matmul_ogs (fused_moe/oracle/mxfp4.py) from the release
    that ships triton_kernels (TRITON_KERNELS_FROM), which keeps no fused-MoE workspace beside the sampler: the
    profiled peak of gpt-oss-20b is the sampler's alone (2.87 GiB at TP1 and TP2, llm-d v0.19.0 H100 logs)."""
    cc = r.cc or (9, 0)
    return cc[0] == 9 and r.version >= TRITON_KERNELS_FROM and _mxfp4_experts(spec)


_MXFP4_EXPERTS = ByObject[bool](64)


def _mxfp4_experts(spec: ModelSpec) -> bool:
    """Whether the checkpoint's experts are MXFP4, by the spec object (asked once per phase of every estimate)."""
    return _MXFP4_EXPERTS.get(spec, None, lambda: any("_exps" in t.name and t.dtype.lower() == "mxfp4"
                                                      for t in spec.weights.tensors))


def sampler_bytes(spec: ModelSpec, s: VllmSettings, r: Resolved, warmup: bool = False) -> int:
    """What the sampler holds on min(max_num_seqs, max_num_batched_tokens) rows of full-vocabulary logits
    (v1/worker/gpu_model_runner.py _dummy_sampler_run; v1/sample/ops/topk_topp_sampler.py): the logits in the
    model dtype, their float32 copy, the top-k/top-p temporaries, the probabilities and the exponential noise
    of random_sample, per (row x vocabulary) element. warmup: the post-capture warm-up's own pass."""
    if r.runner_v2:
        return v2_sampler_bytes(spec, r, warmup, s)
    S = min(r.max_num_seqs, r.max_num_batched_tokens)
    b = r.dtype_bytes
    if not r.v1:
        if r.version < SAMPLER_V0_FLOAT32_FROM:
            per_elem = 5 * b + 18
        else:
            per_elem = b + (38 if r.version < SAMPLER_V0_SCATTER_FROM else 30)
    elif flashinfer_sampler(s, r):
        # FlashInfer's top-k/top-p sampling (VLLM_USE_FLASHINFER_SAMPLER=1; by default where FlashInfer imports:
        # below "0.2.3" in 0.8.x, from 0.2.3 in 0.9 -> 0.11; opt-in from 0.12), no sort buffers: the float32 copy
        # and FlashInfer's two float32 tensors (SAMPLER_BYTES_FLASHINFER), in the profile and the warm-up alike
        per_elem = SAMPLER_BYTES_FLASHINFER + b
    elif not sort_sampler(s, r):
        if S >= TRITON_MIN_ROWS:
            # the Triton kernel: the float32 copy, softmax's probabilities and random_sample's noise (SAMPLER_BYTES)
            # and its scratch rows
            per_elem = SAMPLER_BYTES + b
            return int(S * spec.n_vocab * per_elem) + 4 * triton_scratch_rows(r, S) * spec.n_vocab
        else:
            per_elem = SAMPLER_BYTES_SORT + b  # apply_top_k_top_p: "Use pytorch sort implementation for small batch"
    else:
        # the PyTorch sort path; before 0.12 FlashInfer's sampler replaced it when FlashInfer was installed
        # (VLLM_USE_FLASHINFER_SAMPLER unset), which depends on the installation: the heavier path is assumed
        # (gpt-oss-120b on 0.10.1 needs it to reproduce its -2.14 GiB; vllm#23278). A log whose environment shows
        # FlashInfer >= 0.2.3 installed is held with use_flashinfer_sampler (vllm#22177: 0.10.0, flashinfer-python
        # 0.2.6.post1 in its collect_env, prints the FlashInfer path's budget, +0.05 % of the GPU; -4.8 % on the sort)
        per_elem = SAMPLER_BYTES_SORT + b
    return int(S * spec.n_vocab * per_elem)


def triton_scratch_rows(r: Resolved, rows: int) -> int:
    """The rows of apply_top_k_top_p_triton's cached float32 scratch (v1/sample/ops/topk_topp_triton.py, 0.17 ->
    0.20 read: NUM_PROGRAMS = min(num_sm, batch_size), min(next_power_of_2(NUM_PROGRAMS), num_sm) rows of the
    vocabulary in _TRITON_BUFFER_CACHE)."""
    sms = r.sm_count or TRITON_SCRATCH_SMS
    n = min(sms, rows)
    return min(1 << max(n - 1, 0).bit_length(), sms)


def sort_sampler(s: VllmSettings, r: Resolved) -> bool:
    """V1's top-k/top-p through the PyTorch sort (v1/sample/ops/topk_topp_sampler.py apply_top_k_top_p: the
    forward_native path): model runner V1 before the Triton kernel (settings.ERAS sampler_triton, 0.17) without
    FlashInfer's sampler (VLLM_USE_FLASHINFER_SAMPLER; before 0.12 its use depends on the installation, and the
    sort is assumed, see sampler_bytes)."""
    return r.v1 and not r.runner_v2 and not r.at_least("sampler_triton") and not flashinfer_sampler(s, r)


def flashinfer_sampler(s: VllmSettings, r: Resolved) -> bool:
    """Whether model runner V1 samples top-k / top-p through FlashInfer: as VLLM_USE_FLASHINFER_SAMPLER says
    (use_flashinfer_sampler), else where the run's container image installs a FlashInfer its release samples with
    by default (IMAGE_FLASHINFER_SAMPLER: the vllm/vllm-openai image of 0.8.x); a pip install is taken without."""
    if s.use_flashinfer_sampler is not None:
        return s.use_flashinfer_sampler
    repo = (s.container_image or "").partition("@")[0]
    if ":" in repo.rpartition("/")[2]:
        repo = repo.rpartition(":")[0]  # the tag off: vllm/vllm-openai:v0.8.3 (a mirror's copy is the same image)
    low, high = IMAGE_FLASHINFER_SAMPLER
    return repo.lower().endswith("vllm-openai") and r.v1 and low <= r.version < high


def v2_sampler_bytes(spec: ModelSpec, r: Resolved, warmup: bool = False, s: VllmSettings | None = None) -> int:
    """Model runner V2's sampler (v1/worker/gpu/sample/sampler.py Sampler, 0.21-0.34 read): the logits in the model
    dtype (compute_logits) and, once any request asks for processing, their float32 copy (apply_sampling_params:
    "Copy logits to a new FP32 tensor"), V2_SAMPLER_FP32 bytes per (row x vocabulary) element. Without FlashInfer's
    sampler nothing else is of vocabulary width per row: top-k / top-p mask the copy in place
    (v1/sample/ops/topk_topp_triton.py apply_top_k_top_p_triton: one scratch row per SM), gumbel_sample keeps
    per-block maxima (sample/gumbel.py), the logprobs gather top-k columns (sample/logprob.py compute_topk_scores).
    From 0.23 (v2_flashinfer_sampler) the sampler draws rows with top-k / top-p through FlashInfer where
    flashinfer_sampler_supported() (VLLM_USE_FLASHINFER_SAMPLER, default on from 0.22; a compute capability
    FlashInfer's attention backend takes): flashinfer_sample -> top_k_top_p_sampling_from_logits holds two more
    float32 copies (V2_SAMPLER_FLASHINFER), for every processed pass (the warm-up's top_k=50 / top_p=0.9 and no
    seed make it eligible: sampler.py sample).
    - profile (model_runner.py _dummy_sampler_run on min(max_num_seqs, max_num_batched_tokens) rows): up to 0.32 one
      pass on the dummy batch's defaults, which process nothing (the logits alone); from 0.33 a second pass with
      SamplingParams.for_sampler_warmup() ("the profiled peak must too"): the processed pipeline;
    - warm-up (gpu/warmup.py _warmup_kernels, after the KV cache, every V2 release): for_sampler_warmup() on
      min(max_num_seqs, max_num_batched_tokens // (2 + speculative tokens)) requests of that many prompt tokens.
    Not counted: the prompt-logprobs pass of the warm-up (prompt_logprobs=1) and the per-SM scratch rows."""
    b = r.dtype_bytes
    processed = V2_SAMPLER_FP32 + (V2_SAMPLER_FLASHINFER if v2_flashinfer_sampler(r, s) else 0)
    if warmup:
        rows = min(r.max_num_seqs, r.max_num_batched_tokens // (2 + r.num_spec))
        return int(rows * spec.n_vocab * (b + processed))
    rows = min(r.max_num_seqs, r.max_num_batched_tokens)
    per_elem = b + (processed if r.at_least("v2_profile_warmup_params") else 0)
    return int(rows * spec.n_vocab * per_elem)


def v2_flashinfer_sampler(r: Resolved, s: VllmSettings | None = None) -> bool:
    """Model runner V2 samples top-k / top-p rows through FlashInfer (sample/sampler.py Sampler.use_flashinfer =
    flashinfer_sampler_supported(), ops/topk_topp_sampler.py): from 0.23 (0.22's V2 sampler has no FlashInfer
    path), unless VLLM_USE_FLASHINFER_SAMPLER=0, on a CUDA GPU whose compute capability FlashInfer's attention
    backend supports (v1/attention/backends/flashinfer.py supports_compute_capability: 7.5 -> 12.1 in 0.23, 8.0 ->
    12.1 from 0.24, "broken on SM75 (Turing)"); a GPU not known is taken as supported."""
    if not r.runner_v2 or not r.at_least("v2_flashinfer_sampler"):
        return False
    if s is not None and s.use_flashinfer_sampler is False:
        return False
    low = (8, 0) if r.version >= (0, 24, 0) else (7, 5)
    return r.cc is None or low <= r.cc <= (12, 1)


def runner_state_bytes(spec: ModelSpec, r: Resolved, last_stage: bool = True) -> int:
    """What model runner V2 keeps for the sampler from load_model on (model_runner.py load_model builds the Sampler
    after DeviceMemoryProfiler has measured the weights), on the last pipeline stage: sample/penalties.py
    PenaltiesState output_bin_counts (max_num_reqs x vocabulary, int32; "can be very large, taking up GBs of GPU
    memory") and prompt_bin_mask (max_num_reqs x vocabulary / 32 words), structured_outputs.py
    StructuredOutputsWorker grammar_bitmask (max_num_reqs x (1 + speculative tokens) rows of vocabulary / 32 words).
    Every V2 release read (0.21-0.34). The V1 runner keeps none of vocabulary width (0). In the budget from 0.27
    (runner_state_in_budget), outside it before."""
    if not r.runner_v2 or not last_stage:
        return 0
    words = -(-spec.n_vocab // 32)
    return 4 * r.max_num_seqs * (spec.n_vocab + words * (2 + r.num_spec))


def runner_state_in_budget(r: Resolved) -> bool:
    """utils/mem_utils.py memory_profiling from 0.27 (settings.ERAS profile_total_consumed): the free memory lost since
    the worker-init snapshot counts, tensors built after the weights were measured included; up to 0.26 only the
    weights, the torch peak increase of the profile run and the non-torch increase: V2's sampler state
    (runner_state_bytes) then lives outside the budget, in the (1 - gpu_memory_utilization) headroom."""
    return r.at_least("profile_total_consumed")


def non_torch_bytes(r: Resolved) -> int:
    """The non-torch memory the profile counts against the budget: communicator buffers (comm_bytes), cuBLAS
    workspaces, and where vLLM takes it absolute (V0 before 0.6.5, V1 before 0.9) the CUDA context too. On
    unified-memory parts (V1 from 0.9) the host's growth as well (NON_TORCH_UMA)."""
    multi = r.tp * r.pp > 1
    if not r.v1:
        if r.at_least("profile_absolute") and not r.at_least("profile_increase"):
            # 0.6.4: every byte in use that torch did not allocate, the CUDA context included (vllm#10517)
            return cuda_context(r) + (comm_bytes(r) if multi else 0)
        # up to 0.6.3 and from 0.6.5: what appeared after the baseline (the communicators, cuBLAS)
        return comm_bytes(r) if multi else NON_TORCH_V0
    if not r.at_least("v1_profile_increase"):
        # absolute: the context, what the profile's forward adds outside PyTorch (the kernels loaded lazily; V1's
        # "non-torch forward increase" of 0.15-0.17, NON_TORCH_TP1_OLD) and the communicators. vllm#17469 (4 x A10,
        # TP4, 0.8.5): 0.36 + 0.13 + 0.25 GiB gives the logged 198,784 tokens (the H100 context alone, 0.51 + 0.25:
        # 197,808, -0.49 %)
        return cuda_context(r) + NON_TORCH_TP1_OLD + (comm_bytes(r) if multi else 0)
    host = NON_TORCH_UMA if r.cc in UMA_CC else 0
    if r.tp > 1 and not r.nvlink:
        # NON_TORCH_TP is the H100 (NVLink) forward increase; across PCIe the communicators hold COMM_PCIE
        # (comm_bytes), as before 0.9: 4 x L4 at TP4 on 0.22 / 0.23 (djl-serving#3055, 15.41 / 16.19 GiB of KV
        # from a 20.28 GiB budget, tests/test_vllm_more_logs.py) leave 0.2-0.3 GiB for it, not 2 GiB
        return host + comm_bytes(r)
    if r.tp > 1:
        return host + NON_TORCH_TP + int(0.035 * GiB) * (min(r.tp, 8) - 2)
    if r.pp > 1:
        return host + NON_TORCH_PP
    if r.at_least("sampler_flashinfer_opt_in") and not r.at_least("non_torch_025"):
        return host + NON_TORCH_TP1_OLD
    return host + NON_TORCH_TP1


def comm_bytes(r: Resolved) -> int:
    """NCCL's (and custom all-reduce's) memory at TP/PP > 1 where the profile sees all of it: over PCIe the
    fitted COMM_PCIE, over NVLink the V1 H100 increase (NON_TORCH_TP); pipeline stages alone (point-to-point
    sends) NON_TORCH_PP."""
    if r.tp == 1:
        return NON_TORCH_PP
    if not r.nvlink:
        return COMM_PCIE
    return NON_TORCH_TP + int(0.035 * GiB) * (min(r.tp, 8) - 2)


def cuda_context(r: Resolved) -> int:
    """The CUDA context of one worker on its GPU: CONTEXT_FIXED plus the per-SM local-memory reserve; the H100
    figure (CONTEXT_TP1) where the GPU's SM count (the catalog's, on its Device: config.py Resolved) is not known."""
    sms = r.sm_count
    if sms is None or r.cc is None:
        return CONTEXT_TP1
    return CONTEXT_FIXED + STACK_PER_THREAD * THREADS_PER_SM.get(r.cc, 2048) * sms


def context_bytes(r: Resolved) -> int:
    """Memory in use before the budget's baseline, outside it. V0 (worker.py init_device) and V1 before 0.9 read
    their baseline before init_worker_distributed_environment: the CUDA context alone (the communicators are in
    non_torch); where non-torch is absolute (V0 0.6.4, V1 before 0.9) the context is in it, nothing is outside. V1 from
    0.9 (llm-d 0.19 logs): CONTEXT_MULTI at TP/PP > 1, NCCL initialised before the snapshot (v1/worker/gpu_worker.py
    init_device: init_worker_distributed_environment, then MemorySnapshot, read in 0.11.0); tensor parallelism
    across GeForce parts over PCIe: the context and COMM_PCIE."""
    if r.v1 and not r.at_least("v1_profile_increase"):
        return 0
    if not r.v1:
        # V0 0.6.4 counts the context in its absolute non-torch figure (non_torch_bytes); before and after, the
        # baseline is read after the context and before the communicators (worker.py init_device)
        return 0 if r.at_least("profile_absolute") and not r.at_least("profile_increase") else cuda_context(r)
    if r.tp > 1 and not r.nvlink and r.geforce:
        # GeForce parts over PCIe: no peer access (cudaDeviceCanAccessPeer 0), so NCCL's P2P transport refuses them
        # (transport/p2p.cc p2pCanConnect) and its SHM transport puts the connection buffers in host memory
        # (transport/shm.cc shmSendSetup / shmRecvSetup, read in NCCL 2.27.3): the communicators hold what the same
        # cards' V0 runs measured for them (COMM_PCIE, 2 x RTX 4090), not the 1.00 GiB of H100 NVLink runs
        # (CONTEXT_MULTI) nor the 0.8-0.9 GiB the L4s of djl-serving#3055 (P2P transport, device buffers) leave.
        # vllm#27782 (4 x RTX 4090, TP 4, 0.11.0) bounds it: 2.45 GiB outside PyTorch at its OOM (23.50 GiB in
        # use, 21.00 allocated, 54.91 MiB reserved-unallocated), less the capture's 1.88 GiB beyond its 94.79 MiB of
        # graph pools, leaves 0.66 GiB for the context, the communicators and the non-torch increase: 0.94 here
        # (the context at 128 SMs 0.44, COMM_PCIE twice), 1.69 with the NVLink share (tests/test_vllm_heldout12.py)
        return cuda_context(r) + COMM_PCIE
    return cuda_context(r) + (CONTEXT_MULTI - CONTEXT_TP1 if r.tp * r.pp > 1 else 0)


def cudagraphs_in_budget(s: VllmSettings, r: Resolved) -> bool:
    """gpu_worker.py determine_available_memory: the CUDA graph estimate is subtracted when
    VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS is set (default from 0.20; opt-in in 0.18 and 0.19, settings.ERAS
    cudagraph_estimate) and graphs are on;
    model runner V2 estimates nothing before 0.29 (settings.ERAS v2_cudagraph_estimate)."""
    if not r.v1 or s.enforce_eager:
        return False
    if r.runner_v2 and not r.at_least("v2_cudagraph_estimate"):
        return False  # V2's profile_cudagraph_memory returns 0 up to 0.28 (vllm#49224), whatever the variable says
    if s.estimate_cudagraphs is not None:
        return s.estimate_cudagraphs and r.at_least("cudagraph_estimate")
    return r.at_least("cudagraph_budget")


@dataclass(frozen=True)
class RankMemory:
    """What one worker holds outside the KV cache: weights and the profiled / estimated terms."""

    weights: int
    activation: int
    non_torch: int
    cudagraph: int
    context: int
    # V0's MambaCacheManager (kv.v0_mamba_cache_bytes): built in the profile run, so inside `activation`, and kept
    state: int = 0
    # buffers the profile run builds and keeps that are no recurrent state (the b12x MoE wrappers' workspaces,
    # b12x_workspace_bytes): inside `activation` too
    kept: int = 0


@dataclass(frozen=True)
class Budget:
    """determine_available_memory's figures for one GPU (None where the GPU's memory is not known) and the error
    the worker raises first (loading out of memory, too little free memory), if any."""

    total: int | None = None
    requested: int | None = None
    available: int | None = None
    error: str | None = None


def absolute_profile(r: Resolved) -> bool:
    """The budget's non-torch term is absolute (every byte in use on the GPU that torch did not allocate) rather
    than the increase over the worker's start-up snapshot: V1 before 0.9.1 (settings.ERAS v1_profile_increase) and
    V0 0.6.4 (profile_absolute, not yet profile_increase)."""
    if r.v1:
        return not r.at_least("v1_profile_increase")
    return r.at_least("profile_absolute") and not r.at_least("profile_increase")


def determine_available_memory(device: Device, m: RankMemory, s: VllmSettings, r: Resolved) -> Budget:
    """v1/worker/gpu_worker.py determine_available_memory (V0: worker/worker.py determine_num_available_blocks):
    requested = total x gpu_memory_utilization (ceil from 0.20), less weights, the profile's activation peak and
    non-torch increase, and from 0.20 the CUDA graph estimate."""
    total = cuda_total(device)
    if s.kv_cache_memory_bytes is not None:
        return Budget(total=total, available=s.kv_cache_memory_bytes)  # gpu_worker.py: "skipped memory profiling"
    if total is None:
        return Budget()
    requested = math.ceil(total * r.util) if r.at_least("cudagraph_budget") else int(total * r.util)
    error = None
    if m.weights + m.context > total:
        # the weights alone do not fit: PyTorch runs out of memory while loading, before any profiling
        error = (f"CUDA out of memory while loading the model: {gib_str(m.weights)} of weights per GPU "
                 f"({device.id}) on a GPU with {gib_str(total)} ({gib_str(total - m.context)} free after the "
                 "CUDA context). Use more GPUs (--tensor-parallel-size / --pipeline-parallel-size), a quantized "
                 "checkpoint, or --cpu-offload-gb")
    others = 0
    if device.free_bytes is not None:  # gpu_worker.py init_device: the snapshot's free memory
        free = device.free_bytes
        if absolute_profile(r):
            # the absolute profile takes mem_get_info's used memory (total - free) less what torch holds as the
            # non-torch memory: another process's memory on the GPU counts against the budget (V1 up to 0.9.0,
            # gpu_worker.py determine_available_memory "total_allocated_bytes = torch.cuda.mem_get_info()[1] -
            # torch.cuda.mem_get_info()[0]", read in the 0.8.0 and 0.9.0 wheels; V0 0.6.4 worker.py alike), and
            # nothing checks the free memory at start-up
            others = max(0, total - free)
        elif free < requested and r.v1:
            error = error or (f"Free memory on device ({format_gib(free, r.version)}/{format_gib(total, r.version)} "
                              f"GiB) on startup is less than desired GPU memory utilization ({r.util}, "
                              f"{format_gib(requested, r.version)} GiB). Decrease GPU memory utilization or reduce "
                              "GPU memory used by other processes.")
    # one formula for every generation; what the terms hold differs: up to 0.6.3 everything in use after the
    # baseline (weights, the activation peak, the communicators); 0.6.4 the absolute torch peak plus all non-torch
    # memory (CUDA context too: cuda_context); from 0.6.5 only what the profile added; from 0.20 the CUDA
    # graph estimate as well
    avail = requested - m.weights - m.activation - m.non_torch - others
    if cudagraphs_in_budget(s, r):
        avail -= m.cudagraph
    return Budget(total=total, requested=requested, available=int(avail), error=error)
