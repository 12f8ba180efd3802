"""vLLM's options by its own names (VllmSettings), the newest release modelled, the release eras, version parsing
and the two ways figures are worded in GiB."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ...errors import OomkitError
from ...flags import INT32_MAX, Limit
from ...units import GiB
from ..versions import Eras, Version, parse_release

NEWEST = "0.34.0"

# Release boundaries (the first release with the new rule). Placed by reading the wheels listed in __init__.py;
# where a change landed between two wheels read, the later one is named and the rule is labelled approximate.
ERAS = Eras({
    # worker/worker.py determine_num_available_blocks. Up to 0.6.3: peak_memory = init_gpu_memory (free memory read
    # in init_device after the CUDA context, before init_worker_distributed_environment) - free memory after the
    # profile run: weights, activation peak and the communicators, the context outside. 0.6.4 (PR #9352,
    # vllm#10451): the absolute torch peak plus all non-torch memory, CUDA context included. PR #10511 (0.6.5):
    # only what the profile run added.
    "profile_absolute": (0, 6, 4),
    # engine/arg_utils.py create_engine_config (V0): chunked prefill on by default above a 32K max_model_len, PR
    # #6666 (merged 2024-07-23): in the 0.5.3 wheel, not in 0.5.0.post1 (nor 0.5.2, released before the merge)
    "v0_long_context_chunked": (0, 5, 3),
    "profile_increase": (0, 6, 5),
    # distributed/utils.py get_pp_indices: PR #13839 (merged 2025-02-26, first in 0.8.0) spreads the layers left
    # over by pp across the stages before the last; from PR #6115 (0.5.1) to 0.7.x the last stage took them all
    "pp_remainder_spread": (0, 8, 0),
    # fused_moe/layer.py determine_expert_map: PR #21497 (merged 2025-07-24; 0.10.1 is the first release after
    # it, approximate) spreads the experts left over by ep_size over the first ranks; before, the last rank
    "ep_balanced": (0, 10, 1),
    # quantization/mxfp4.py Mxfp4MoEMethod.create_weights: the Marlin backend for MXFP4 experts on GPUs before Hopper
    # ("round_up(intermediate_size_per_partition, 128)", hidden size to 256), read in 0.10.1's mxfp4.py (weights.py
    # _mxfp4_expert_bytes). The gpt-oss launch build before it (vllm#22259's branch: the vllm/vllm-openai:gptoss image,
    # the 0.10.1+gptoss wheel; parse_version reads it as 0.10.0) ran every CUDA GPU on triton_kernels, the
    # intermediate padded to 64 only ("pad the intermediate size to be a multiple of 2 * mxfp4_block")
    "mxfp4_marlin": (0, 10, 1),
    "v1_default": (0, 8, 0),  # VLLM_USE_V1 defaults to 1
    # entrypoints/cli/serve.py ServeSubcommand.cmd: "If model is specified in CLI (as positional arg), it takes
    # precedence" (0.8.3 on, read in 0.8.3, 0.9.0, 0.11.0, 0.34.0); before (scripts.py serve 0.6.x, cli/serve.py
    # 0.7.3-0.8.2) a --model beside the positional model_tag is a ValueError
    "serve_tag_over_model_flag": (0, 8, 3),
    # model_executor/models/deepseek_v2.py: the latent cache of MLA (DeepseekV2MLAAttention: kv_lora_rank +
    # qk_rope_head_dim, one head), announced with 0.7.1 ("MLA" for DeepSeek V2/V3 in its release notes). Before,
    # DeepseekV2Attention caches K and V of every head: Attention(num_local_heads, qk_head_dim,
    # num_kv_heads=num_local_heads), V padded to qk_head_dim in forward (vllm#4650's 8 x H100 at 64,000 tokens: "not
    # enough memory for cache blocks")
    "mla_latent": (0, 7, 1),
    # engine/arg_utils.py: --rope-scaling and --rope-theta, deprecated since PR #5836, removed by PR #28006 (merged
    # 2025-11-04; 0.11.1 the first release after it): their parser answers "unrecognized arguments" (gpustack#4236,
    # 0.13.0) and the same JSON goes in --hf-overrides '{"rope_scaling": ...}'
    "rope_flags_removed": (0, 11, 1),
    # v1/worker/gpu_worker.py determine_available_memory: up to 0.8.x the budget subtracts the torch peak
    # (allocated_bytes.all.peak, weights included) plus all non-torch memory left after the profile run
    # (mem_get_info used - torch allocated: CUDA context, NCCL, cuBLAS); from 0.9 the memory_profiling
    # increases over the worker-init snapshot, as V0 from 0.6.5: 0.9.1 (read in the wheels: 0.9.0's
    # determine_available_memory still takes mem_get_info's used memory; 0.9.1's Worker.init_device takes a
    # MemorySnapshot, refuses "Free memory on device ... on startup is less than desired GPU memory utilization" and
    # profiles with memory_profiling(self.init_snapshot, ...))
    "v1_profile_increase": (0, 9, 1),
    # v1/worker/gpu_model_runner.py profile_run: before 0.8.0 no sampler pass ("TODO(woosuk): Consider the memory
    # usage of the sampler."): 0.7.0 -> 0.7.2 compute_logits over the dummy run's whole hidden states
    # (max_num_batched_tokens rows, "logits = logits[:self.max_num_tokens]"), 0.7.3 over the sampled rows only
    # ("hidden_states = hidden_states[logit_indices]", min(max_num_seqs, tokens) rows); 0.8.0 adds
    # _dummy_sampler_run to the profile and to gpu_worker.py compile_or_warm_up_model (read in the 0.7.1, 0.7.2,
    # 0.7.3 and 0.8.0 wheels)
    "v1_profile_logit_rows": (0, 7, 3),
    "v1_dummy_sampler": (0, 8, 0),
    # NCCL inside captured graphs: vLLM 0.5.4 pins torch 2.4.0 (nvidia-nccl-cu12 2.20.5), 0.7.3 / 0.8.5 torch 2.5.1 /
    # 2.6.0 (NCCL 2.21.5), 0.9.0 torch 2.7.0 (NCCL 2.26.2), 0.11 torch 2.8 (2.27.3), 0.19 torch 2.10 (2.27.5), 0.22 /
    # 0.23 torch 2.11 (nvidia-nccl-cu13 2.28.9). Up to NCCL 2.21 every captured collective is a persistent plan with
    # its own device allocation (src/enqueue.cc uploadWork: ncclCudaMalloc(&plan->workHead, nWork)); from 2.22
    # (NCCL's "Utilize the full amount of kernel argument space permitted (4k) before resorting to work fifo",
    # enqueue.cc finishPlan: ncclDevWorkStorageTypeArgs) an all-reduce's work rides in the kernel arguments
    "nccl_work_in_args": (0, 9, 0),
    "v1_only": (0, 11, 0),  # the V0 engine is gone
    # platforms/cuda.py CudaPlatform.check_and_update_config: from 0.8.0 to 0.9.0 a data_parallel_size > 1 with CUDA
    # graphs on sets enforce_eager ("Data Parallel: Forcing enforce eager to be True since DP is currently not
    # supported with CUDA Graphs."); 0.9.1 does so only with VLLM_ALL2ALL_BACKEND=deepep_high_throughput (read in
    # the 0.7.3, 0.8.0-0.8.5, 0.9.0, 0.9.1, 0.9.2 and 0.10.0 sdists; 0.7.3 has no such line)
    "dp_forces_eager": (0, 8, 0),
    "dp_graphs": (0, 9, 1),
    # engine/arg_utils.py get_batch_defaults: >= 70 GiB and not A100 -> 16384/8192 tokens, 1024 seqs
    "batch_by_memory": (0, 8, 5),
    # V1's default max_num_seqs: 1,024 on every GPU up to 0.8.3 (0.7.3 EngineArgs.__post_init__, 0.8.0-0.8.3
    # _set_default_args_v1 "default_max_num_seqs = 1024"), from 0.8.4 256 off H100/H200 (read in the wheels)
    "v1_seqs_by_gpu": (0, 8, 4),
    # ... and >= 160 GiB -> 16384 tokens for `vllm serve` too (engine/arg_utils.py EngineArgs.get_batch_defaults, PR
    # #51726: in 0.28.0, absent in 0.25.0-0.27.0; read in those wheels). It gates on capacity alone, so MI300X's
    # 191.98 GiB takes it as B200 does (vllm#53961)
    "batch_160gib": (0, 28, 0),
    # config/vllm.py VllmConfig.max_in_flight_tokens: sliding-window / chunked-local specs reserve
    # max_concurrent_batches x max_num_batched_tokens beyond the window (kv.py kv_tokens_in_flight; 0.26.0, absent in
    # 0.25.0)
    "in_flight_tokens": (0, 26, 0),
    # config/vllm.py VllmConfig.__post_init__, async scheduling left to vLLM (SchedulerConfig.async_scheduling None,
    # the default in every wheel read, 0.22.0-0.34.0): "draft_model" speculation keeps it on from 0.28.0 (off in
    # 0.26.0-0.27.0); from 0.31.0 pipeline parallelism on the V1 model runner turns it off ("the V1 model runner
    # does not support it with pipeline parallelism"), and from 0.33.0 an explicit --async-scheduling there is a
    # ValueError, speculation included; 0.34.0 has no V1 runner: max_concurrent_batches is pp + 1 with it
    "async_draft_model": (0, 28, 0),
    "async_pp_v1_off": (0, 31, 0),
    "async_v1_refused": (0, 33, 0),
    "async_v1_gone": (0, 34, 0),
    # v1/core/kv_cache_utils.py _get_kv_cache_config_uniform_page_size: hybrid allocator (sliding/chunked
    # layers get their own groups). 0.8.5 converts every sliding layer to full attention.
    "hybrid_allocator": (0, 9, 1),
    # envs.VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE default 0 -> 1 (0 in 0.12.0, 1 in 0.15.1)
    "chunked_hybrid": (0, 13, 0),
    # v1/core/kv_cache_utils.py get_kv_cache_configs: from 0.14.0 (PR #29431) the one-request check takes the KV cache
    # groups of the whole model (every stage's layers merged) against min(available_memory), so under pipeline
    # parallelism each stage is held to all the model's layers (vllm#32105, vllm#34076); 0.17.0 (PR #33698) checks each
    # worker's projected groups against its own budget again. Read in the 0.13.0-0.19.0 wheels
    "pp_check_merged": (0, 14, 0),
    "pp_check_per_worker": (0, 17, 0),
    # v1/sample/ops/topk_topp_sampler.py: up to 0.11 FlashInfer's top-k/top-p sampler is used when FlashInfer
    # is installed, else a PyTorch sort (heavy); from 0.12 FlashInfer is opt-in (VLLM_USE_FLASHINFER_SAMPLER=1);
    # 0.17 adds a Triton top-k/top-p kernel for batches >= 8 (light again)
    "sampler_flashinfer_opt_in": (0, 12, 0),
    "sampler_triton": (0, 17, 0),
    # platforms/cuda.py: MLA block size forced by the backend (FlashMLA 64 on Hopper, CUTLASS 128 on
    # Blackwell) up to 0.11; from 0.12 the backend's preferred size (FLASH_ATTN_MLA: 16 on Hopper)
    "mla_preferred_block": (0, 12, 0),
    # non-torch increase at TP=1: 0.13 GiB measured on 0.15-0.17, 0.25 GiB from 0.18 (llm-d version sweep)
    "non_torch_025": (0, 18, 0),
    # v1/worker/gpu_worker.py: CUDA graph memory estimated before the KV cache is sized and subtracted
    # (envs.py VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS defaults to "1"), default utilization 0.92 (config/cache.py).
    # Both read in the 0.20.0 wheel (0.19.0: "0" and 0.9), whose own log line says "default since v0.21.0"; a
    # 0.20.0 run subtracts its estimate (kaitakuai/experiments qwen3-235b-vllm020-240k: "CUDA-graph reserve ...
    # default-on", 1.10 GiB)
    "cudagraph_budget": (0, 20, 0),
    # v1/worker/gpu_model_runner.py profile_cudagraph_memory and gpu_worker.py determine_available_memory's opt-in
    # subtraction (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS, envs.py default "0"): first in the 0.18.0 wheel ("This
    # will become the default in v0.19"), absent from 0.17.0's envs.py, gpu_worker.py and gpu_model_runner.py
    "cudagraph_estimate": (0, 18, 0),
    # model_executor/layers/rotary_embedding (mrope.py from 0.10.1) MRotaryEmbedding.__init__: the cos/sin cache of an
    # M-RoPE model spans max_position_embeddings * 4 positions ("In Qwen2.5-VL, the maximum index value is related to
    # the duration of the input video"), read in the 0.8.0-0.31.0 wheels; not in 0.5.4 (0.6-0.7 not read:
    # approximate). From 0.32 the factor is get_rope's mrope_positions_factor: Qwen3-VL, Qwen3-VL-MoE and Qwen3.5 pass
    # models/qwen3_vl.py mrope_positions_factor (1 unless video pruning is on), the other M-RoPE models keep 4
    "mrope_cache_x4": (0, 8, 0),
    "mrope_factor_per_model": (0, 32, 0),
    # models/qwen3_vl.py, qwen3_vl_moe.py (and qwen3_omni_moe_thinker.py from 0.11.1) __init__: the deepstack input
    # buffers, one torch.zeros(max_num_batched_tokens, text hidden_size) per deepstack_visual_indexes entry, built under
    # the loader's default dtype and device, so inside "Model loading took"; read in every wheel 0.11.0-0.34.0 (Qwen3-VL
    # is new in 0.11.0). A tower that is not built holds none: image and video limited to 0 (self.visual None up to
    # 0.14, _mark_tower_model's meta device from 0.15 (tower_marked; Qwen3-Omni's thinker builds its tower whatever
    # the limits before it), StageMissingLayer from 0.28); under pipeline parallel the tower is built on every stage,
    # its weights loaded there (weights.tower_on_stage: no model class guards it by the stage, the loader skips only
    # PPMissingLayer / StageMissingLayer), until _mark_tower_model skips the stages after the first: 0.33 with model
    # runner V2, every runner from 0.34 (models/interfaces.py)
    "deepstack_buffers": (0, 11, 0),
    # models/qwen2_vl.py, qwen2_5_vl.py, mllama4.py, llava.py, mistral3.py __init__: the tower is left out (None) when
    # the limits of all its modalities are 0, from the 0.10.1 wheel (not in 0.10.0); gemma3_mm.py, internvl.py,
    # kimi_vl.py, glm4_1v.py build it whatever the limits until _mark_tower_model (weights.tower_built)
    "tower_limits_guard": (0, 10, 1),
    "tower_marked": (0, 15, 0),
    "tower_first_stage_v2": (0, 33, 0),
    "tower_first_stage": (0, 34, 0),
    # config/compilation.py CompilationConfig.resolve_cudagraph_mode_and_sizes: a model with Mamba-style state and
    # FULL graphs refuses max_num_seqs above the KV cache's blocks, one state block per decode sequence ("max_num_seqs
    # (N) exceeds available Mamba cache blocks (M)", PR #38270), called by both model runners after the KV cache is
    # sized (gpu_model_runner.py initialize_attn_backend, v1/worker/gpu/model_runner.py). Read in the 0.20.0 -> 0.34.0
    # wheels; 0.19.0 caps the capture sizes at the blocks instead (adjust_cudagraph_sizes_for_mamba_cache)
    "mamba_blocks_check": (0, 20, 0),
    # fused_moe: the MoE layers run through the modular kernel (modular_kernel.py FusedMoEModularKernel, unquantized
    # method's TritonExperts from 0.14.0; 0.13.0 calls fused_experts directly): its workspaces come from
    # TritonExperts.workspace_shapes, (M, top_k, max(N/2, K)) and (M, top_k, max(N, K)) with N = 2 x intermediate,
    # held by the workspace manager (read in the 0.13.0, 0.14.0, 0.15.1, 0.17.0, 0.19.0 and 0.20.0 wheels)
    "moe_modular": (0, 14, 0),
    # modular_kernel.py _chunk_info: M cut into VLLM_FUSED_MOE_CHUNK_SIZE (16,384) chunks up to 0.17.0; gone in the
    # 0.18.0 and 0.19.0 wheels (PR #34086)
    "moe_unchunked": (0, 18, 0),
    # quantization/fp8.py: on a GPU without FP8 (compute capability below 8.9) block-quantized FP8 weights run on
    # Marlin, which turns each [N/128, K/128] fp32 block scale into [K/128, N] group scales in the model dtype
    # (utils/marlin_utils_fp8.py prepare_fp8_layer_for_marlin / prepare_*fp8_moe_layer_for_marlin: "block-wise
    # quantization -> group-wise quantization", repeat_interleave over block_n); 0.8.5 turns Marlin off for
    # block-wise FP8 ("Marlin doesn't support block-wise fp8"). Read in the 0.8.5, 0.9.0, 0.10.0, 0.11.0 and
    # 0.20.0 wheels
    "fp8_block_marlin": (0, 9, 0),
    # models/deepseek_v4/quant_config.py DeepseekV4FP8Config: a quantization_config with moe_quant_algo "NVFP4" runs
    # the routed experts through ModelOptNvFp4FusedMoE (group 16; weights.py dsv4_moe_nvfp4): in the 0.22.0,
    # 0.23.0, 0.24.0, 0.25.1 and 0.27.0 sdists, not in 0.21.0's (Mxfp4MoEMethod for every fp4 expert)
    "dsv4_moe_nvfp4": (0, 22, 0),
    # kv_cache_utils.py _report_kv_cache_config: "GPU KV cache size" = int(max_concurrency * max_model_len)
    # instead of num_blocks // groups * min block size (vllm#40691, vllm#38364). The old figure: llm-d v0.19.0
    # gpt-oss TP2 logs, and gemma-4-31B AWQ on 0.20.0 ~55k tokens of ~50 GB vs ~525k on 0.21.0 (vllm#43308); the
    # new: the 0.20.2 Gemma 4 26B log (99sono/DockerBuildFiles, 286,007 tokens). Placed at 0.20.2 (0.20.1 not seen)
    "tokens_from_concurrency": (0, 20, 2),
    # v1/core/kv_cache_planning.py get_kv_cache_configs: one block held back (null block) in the checks;
    # "GPU KV cache size: N tokens, Maximum concurrency ..." on one line (in 0.33.0, not in 0.21.0; approximate)
    "null_block": (0, 30, 0),
    # format_gib(): "58.11 GiB" printed as round(x, 2) instead of "%.2f" (0.12.0 -> 0.15.1)
    "format_gib": (0, 15, 0),
    # "the model's max seq len" (typo "models's" fixed) and the CPU-backend note (v1/core/kv_cache_utils.py
    # check_enough_kv_cache_memory: in the 0.22.0-0.29.0 wheels, not in 0.21.0)
    "msg_fixed": (0, 22, 0),
    # Model runner V2 (v1/worker/gpu/model_runner.py) by default: config/vllm.py VllmConfig.use_v2_model_runner and
    # _is_default_v2_model_runner_model, read in every wheel 0.21.0-0.34.0 (0.21: opt-in, VLLM_USE_V2_MODEL_RUNNER=1).
    # 0.22: Qwen3ForCausalLM, dense and unquantized; 0.23: + Llama / Mistral; 0.24: the list alone (DeepseekV2,
    # Qwen2Moe, GraniteMoe join; quantized allowed); 0.25: every generate model that is neither MoE (unless listed),
    # hybrid nor attention-free; 0.27: listed hybrids too; 0.29: every model; 0.34: the V1 runner is removed
    "runner_v2_qwen3": (0, 22, 0),
    "runner_v2_llama": (0, 23, 0),
    "runner_v2_listed": (0, 24, 0),
    "runner_v2_dense": (0, 25, 0),
    "runner_v2_all": (0, 29, 0),
    "runner_v1_removed": (0, 34, 0),
    # model runner V2 installs the weight offloader (v1/worker/gpu/model_runner.py load_model:
    # set_offloader(create_offloader(...)), read in the 0.28.0 wheel; absent from 0.21.0-0.27.0, where only the V1
    # runner sets it and --cpu-offload-gb is a silent no-op under V2: vllm#51396, PR #48468)
    "runner_v2_offload": (0, 28, 0),
    # utils/mem_utils.py memory_profiling: non_kv_cache_memory = total_consumed (mem_get_info's drop since the
    # worker-init snapshot) + the transient peak headroom, so tensors a runner allocates after loading and before the
    # profile run count against the budget; before (0.26 read), weights + torch peak increase + non-torch increase
    "profile_total_consumed": (0, 27, 0),
    # config.py MultiModalConfig.get_limit_per_prompt: "999 if envs.VLLM_USE_V1 else 1" per modality the user does not
    # limit; 1 for V1 too up to 0.8.3 (limit_per_prompt.get(modality, 1)), so its encoder profile ran max_num_seqs
    # items at most (vllm#16570, 0.8.3: "profiled with 2 image items" at 2 sequences)
    "v1_mm_limit_999": (0, 8, 4),
    # v1/worker/gpu/model_runner.py profile_run: the encoder's dummy pass (EncoderRunner.profile_encoder_cache);
    # 0.26 has none under v1/worker/gpu/
    "v2_encoder_profile": (0, 27, 0),
    # v1/worker/gpu/model_runner.py profile_cudagraph_memory: "return 0" up to 0.28 ("It is TBD whether we keep this
    # API or not"; vllm#49224), so V2's graphs stay outside the budget there; from 0.29 cudagraph_utils.py
    # profile_cudagraph_memory captures into a throwaway pool and extrapolates the FULL graphs
    "v2_cudagraph_estimate": (0, 29, 0),
    # v1/worker/gpu/model_runner.py _dummy_sampler_run: a second pass with SamplingParams.for_sampler_warmup()
    # ("warmup_kernels ... pays for the fp32 logits pipeline, so the profiled peak must too"); 0.32 has one pass
    "v2_profile_warmup_params": (0, 33, 0),
    # v1/worker/gpu/sample/sampler.py: the V2 sampler draws top-k / top-p through FlashInfer (flashinfer_sample;
    # absent from 0.22.0's, present in 0.23.0's, 0.24.0's, 0.25.0's, 0.27.1's and 0.33.0's, read in the wheels)
    "v2_flashinfer_sampler": (0, 23, 0),
})

_VERSION_EXAMPLE = "a release such as 0.10.2"


def parse_version(version: str | None) -> Version:
    """"0.10.2", "v0.8", "0.10.1.post1", "0.11.0rc2" -> (0, 10, 2); None, "", "newest", "latest" -> NEWEST."""
    if version and not version.strip():  # blank but not empty: refused, as vLLM's version reader always did
        raise OomkitError(f"cannot read vLLM version {version!r}: expected {_VERSION_EXAMPLE}")
    if version and _GPTOSS_BUILD.search(version.strip()):
        return GPTOSS_BUILD_VERSION
    # what follows the release numbers is a version's own suffix (rc2, .post1, .dev5+g1234abcd, +cu126, a docker
    # tag's -cu130): letters, digits and . + - _, no space or shell text ("v0.8.5; rm -rf /" is no version)
    return parse_release(version, NEWEST, "vLLM", _VERSION_EXAMPLE, tail=r"[\w.+\-]*")


# The gpt-oss launch build (vllm#22259's branch, 2025-08-05): the vllm/vllm-openai:gptoss image and the 0.10.1+gptoss
# wheel, whose own version reads "0.10.2.dev2+gf5635d62e.d20250807" (vllm#22793's log of that image). It predates the
# 0.10.1 release (2025-08-18) and its MXFP4 Marlin backend (ERAS mxfp4_marlin): read as 0.10.0, the release before.
_GPTOSS_BUILD = re.compile(r"(?i)^(?:v?[0-9.]+\+)?gptoss$|\+gf5635d62e\b")
GPTOSS_BUILD_VERSION: Version = (0, 10, 0)


@dataclass(frozen=True)
class VllmSettings:
    """vLLM's options by their own names (engine/arg_utils.py EngineArgs; None = the release's default)."""

    PROGRAM = "vLLM"  # class attributes, not fields (no annotation)
    # What vLLM accepts, held by flags.check_settings (flags and API arguments alike): the pydantic bounds of
    # vllm/config (CacheConfig gpu_memory_utilization gt=0 le=1, cpu_offload_gb / swap_space ge=0,
    # SchedulerConfig max_num_seqs / max_num_batched_tokens ge=1, ParallelConfig sizes >= 1). Where vLLM has no
    # upper bound, oomkit's: 1,024 GPUs, a context of 2^31 - 1 tokens.
    LIMITS = {
        "max_model_len": Limit(1, INT32_MAX, "--max-model-len", special=(-1,)),
        "gpu_memory_utilization": Limit(0, 1, "--gpu-memory-utilization", open_lo=True),
        "tensor_parallel_size": Limit(1, 1024, "-tp"),
        "pipeline_parallel_size": Limit(1, 1024, "-pp"),
        "data_parallel_size": Limit(1, 1024, "-dp"),
        "nnodes": Limit(1, 1024, "--nnodes"),
        "block_size": Limit(1, 1 << 16, "--block-size"),
        "max_num_seqs": Limit(1, 1 << 20, "--max-num-seqs"),
        "max_num_batched_tokens": Limit(1, INT32_MAX, "--max-num-batched-tokens"),
        "cpu_offload_gb": Limit(0, 1 << 20, "--cpu-offload-gb"),
        "swap_space": Limit(0, 1 << 20, "--swap-space"),
        "kv_cache_memory_bytes": Limit(1, 1 << 60, "--kv-cache-memory-bytes"),
        "num_gpu_blocks_override": Limit(1, INT32_MAX, "--num-gpu-blocks-override"),
        "max_cudagraph_capture_size": Limit(0, 1 << 20, "--max-cudagraph-capture-size"),
        "num_speculative_tokens": Limit(0, 1024, "--speculative-config num_speculative_tokens"),
        "optimization_level": Limit(0, 3, "-O"),  # config/vllm.py OptimizationLevel O0..O3
        "max_loras": Limit(1, 1 << 16, "--max-loras"),  # config/lora.py max_loras: Field(ge=1)
    }

    max_model_len: int | None = None  # --max-model-len; None: the model's; -1: auto-fit (0.19+)
    gpu_memory_utilization: float | None = None  # None: 0.9 (0.92 from 0.20)
    tensor_parallel_size: int = 1  # -tp
    pipeline_parallel_size: int = 1  # -pp
    data_parallel_size: int = 1  # -dp
    enable_expert_parallel: bool = False  # -ep
    nnodes: int = 1  # --nnodes (mp executor, 0.11+) or the Ray cluster's machines: names each rank's node
    # --distributed-executor-backend (ray, mp, uni, external_launcher); None: vLLM's choice. 0.8.5-0.9.0 run pipeline
    # parallelism on V1 only with ray (config.py _v1_oracle_falls_back)
    distributed_executor_backend: str | None = None
    dtype: str = "auto"  # --dtype
    kv_cache_dtype: str = "auto"  # --kv-cache-dtype
    block_size: int | None = None  # --block-size; None: 16 or the attention backend's
    max_num_seqs: int | None = None  # --max-num-seqs
    max_num_batched_tokens: int | None = None  # --max-num-batched-tokens
    enable_chunked_prefill: bool | None = None
    enable_prefix_caching: bool | None = None
    enforce_eager: bool = False  # no CUDA graphs
    cpu_offload_gb: float = 0.0  # GiB of weights per GPU kept in host memory
    swap_space: float = 4.0  # GiB of host memory per GPU for swapped blocks (V0)
    kv_cache_memory_bytes: int | None = None  # --kv-cache-memory-bytes: skip the budget, use this much
    num_gpu_blocks_override: int | None = None
    quantization: str | None = None  # -q: online quantization (fp8) or the checkpoint's method
    max_cudagraph_capture_size: int | None = None
    cudagraph_capture_sizes: tuple[int, ...] | None = None  # --cudagraph-capture-sizes / --cuda-graph-sizes
    cudagraph_mode: str | None = None  # compilation_config cudagraph_mode (NONE, PIECEWISE, FULL, ...)
    optimization_level: int | None = None  # -O0 .. -O3
    disable_hybrid_kv_cache_manager: bool = False
    disable_custom_all_reduce: bool = False  # --disable-custom-all-reduce: TP all-reduces through NCCL only
    attention_backend: str | None = None  # --attention-backend / VLLM_ATTENTION_BACKEND
    # --attention-config '{"indexer_kv_dtype": ...}' (config/attention.py AttentionConfig, 0.24+) and its older
    # '{"use_fp4_indexer_cache": true}' (0.20-0.29): the sparse-attention indexer's key cache
    indexer_kv_dtype: str = "auto"
    use_fp4_indexer_cache: bool | None = None
    moe_backend: str | None = None  # --moe-backend (cutlass, marlin, flashinfer_cutlass, ...); None: vLLM's pick
    mamba_cache_dtype: str = "auto"
    mamba_ssm_cache_dtype: str = "auto"
    mamba_cache_mode: str | None = None  # None: "align" with prefix caching on a hybrid model (0.15+), else "none"
    num_speculative_tokens: int = 0  # --speculative-config {"num_speculative_tokens": N}: extra Mamba state slots
    # --speculative-config's "method" (None: not given, vLLM infers it from the drafter) and
    # "disable_padded_drafter_batch": both decide async scheduling (config.py _async_scheduling)
    speculative_method: str | None = None
    disable_padded_drafter_batch: bool = False
    # --speculative-config's "model" for a separate EAGLE / EAGLE-3 head: a local checkpoint folder, its config.json
    # or a catalog name (drafter.py)
    speculative_model: str | None = None
    # --async-scheduling / --no-async-scheduling (config/scheduler.py SchedulerConfig.async_scheduling, a
    # BooleanOptionalAction); None: vLLM's own choice (VllmConfig.__post_init__)
    async_scheduling: bool | None = None
    # --enable-lora and the LoRAConfig it builds (config/lora.py; lora.py counts the adapter slots): --max-loras,
    # --max-lora-rank (one of 1 (0.11+), 8, 16, 32, 64, 128, 256, 320, 512), --lora-dtype (auto: the model's),
    # --fully-sharded-loras, --enable-lora-bias (0.6.4.post1-0.11.0)
    enable_lora: bool = False
    max_loras: int = 1
    max_lora_rank: int = 16
    lora_dtype: str = "auto"
    fully_sharded_loras: bool = False
    enable_lora_bias: bool = False
    pooling_runner: bool = False  # --runner pooling, --convert embed/classify/..., --task embed/...
    # --limit-mm-per-prompt '{"image": 0, "video": 1}' as (modality, count) pairs; None: 999 each (encoder.py)
    limit_mm_per_prompt: tuple[tuple[str, int], ...] | None = None
    # --mm-processor-kwargs '{"max_pixels": N, ...}' as sorted JSON: the HF processor's arguments, which size the
    # profiled dummy image (encoder.py reads the Qwen-VL size keys)
    mm_processor_kwargs: str | None = None
    # --hf-overrides '{...}' (and 0.6-0.9's --rope-scaling '{...}'), as sorted JSON: config.json fields replaced
    hf_overrides: str | None = None
    skip_mm_profiling: bool = False  # --skip-mm-profiling: no encoder dummy pass in the profile run
    mm_encoder_tp_mode: str = "weights"  # --mm-encoder-tp-mode: "data" keeps the whole encoder on every TP rank
    usage_context: str = "serve"  # "serve" (OpenAI server) or "llm" (the LLM class): different batch defaults
    allow_long_max_model_len: bool = False  # VLLM_ALLOW_LONG_MAX_MODEL_LEN=1
    use_v1: bool | None = None  # VLLM_USE_V1
    mla_disable: bool = False  # VLLM_MLA_DISABLE (quantization.py mla_latent_kept)
    estimate_cudagraphs: bool | None = None  # VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS
    use_flashinfer_sampler: bool | None = None  # VLLM_USE_FLASHINFER_SAMPLER
    # the container image the command runs in (`docker run ... vllm/vllm-openai:v0.8.3`; None: not in a container):
    # what the image installs beside vLLM (profile.py flashinfer_sampler)
    container_image: str | None = None
    use_v2_model_runner: bool | None = None  # VLLM_USE_V2_MODEL_RUNNER (config.py runner_v2)
    # a start that compiles the model (no torch.compile cache yet, or VLLM_DISABLE_COMPILE_CACHE=1): the compiler's
    # benchmarks fall in the profile run (profile.py cold_compile_bytes)
    cold_compile: bool = False
    # VLLM_PP_LAYER_PARTITION ("16,32"): the decoder layers of each pipeline stage (config.py pp_partition); "" = even
    pp_layer_partition: str = ""
    engine_version: str = NEWEST
    # the flags typed that only some releases' parsers take (engines/data/vllm_flags.json spans, read from the
    # wheels; --rope-scaling up to 0.11.0, --async-scheduling from 0.10.0): config.resolve refuses one the chosen
    # release does not have, as its parser does
    release_flags: tuple[str, ...] = field(default=(), compare=False)  # how it was typed, not a setting
    # abbreviations that name flags of different releases and read alike (args.parse_args): (as typed, its candidate
    # flags joined by spaces), matched against the chosen release's parser in config.resolve
    abbreviations: tuple[tuple[str, str], ...] = field(default=(), compare=False)
    # `vllm serve A --model B`: the --model value typed beside the positional model (config.resolve: refused up to
    # 0.8.2, ignored for the positional from 0.8.3)
    model_flag_beside_tag: str = field(default="", compare=False)
    # flags of the command that change memory in a way oomkit does not count, each with what it changes
    # ("--enable-lora (LoRA adapter slots)"): said in the estimate's warnings (EngineModule.estimate), never dropped
    unmodelled: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


# The engine-neutral CLI options (--ctx, --kv-type, --parallel, ...) -> these fields (commands/_model_args.py).
NEUTRAL = {"ctx": "max_model_len", "kv_type": "kv_cache_dtype", "parallel": "max_num_seqs",
           "engine_version": "engine_version", "kv_memory": "kv_cache_memory_bytes"}


def format_gib(x: float, version: Version) -> str:
    """utils/mem_utils.py format_gib as the release prints it: round(x, 2) from 0.15, "%.2f" before."""
    v = x / GiB
    if ERAS.reached(version, "format_gib"):
        return f"{round(v, 2)}"
    return f"{v:.2f}"


def gib_str(n: int) -> str:
    """oomkit's own wording of a size in the messages it adds ("12.34 GiB", never MiB)."""
    return f"{n / GiB:.2f} GiB"
