"""SGLang's server arguments (server_args.py ServerArgs) by their own names, the releases whose rules oomkit
models, and the defaults SGLang picks by GPU (server_args.py `_handle_gpu_memory_settings`; 0.5.20+:
`arg_groups/memory_hook.py`)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any

from ...errors import OomkitError
from ...flags import INT32_MAX, Limit
from ...model.spec import ModelSpec
from ...quant.dtypes import canonical
from ...units import GiB
from ..versions import Eras, Version, parse_release

NEWEST = "0.5.23"
OLDEST = (0, 4, 0)

ERAS = Eras({
    # model_runner.py init_torch_distributed (distributed/bootstrap.py _check_tp_memory_balance in 0.5.18): the TP
    # memory-balance check raises in every release read (0.4.0-0.5.18); the variable that turns it into a warning is
    # SGL_DISABLE_TP_MEMORY_INBALANCE_CHECK=1 from 0.4.6 (sglang PR #5426, merged 2025-04-15: in 0.4.6.post5, absent
    # from 0.4.5.post1), SGLANG_ENABLE_TP_MEMORY_INBALANCE_CHECK=0 from 0.5.7 (environ.py, EnvBool(True); 0.5.6 reads
    # the old name): see layout.py tp_memory_balance
    "tp_balance_env_disable": (0, 4, 6),
    "tp_balance_env_enable": (0, 5, 7),
    # layers/rotary_embedding.py RotaryEmbedding.__init__: "cache needs to be in FP32 for numerical stability" (the
    # cos_sin_cache left float32 on CUDA, `if not _is_cuda: cache = cache.to(dtype)`): from 0.4.3 (0.4.2's own
    # RotaryEmbedding, the first SGLang release with one, casts it to the model dtype), read to 0.5.23
    # (rotary_embedding/base.py)
    "rope_cache_fp32": (0, 4, 3),
    # models/gemma3_causal.py: Gemma 3's attention builds its rotary embedding with get_rope (a cos_sin_cache) from
    # 0.5.10; before, transformers-style Gemma3RotaryEmbedding modules (inv_freq only): see weights.py rope_cache_bytes
    "gemma3_get_rope": (0, 5, 10),
    # 0.4.x: on GPUs above 96 GiB the by-tp fraction is raised, min(mfs + 48 GiB x (1 - mfs) / gpu, (gpu - 18 GiB) /
    # gpu): absent from 0.4.6.post1 and before, present in 0.4.6.post2 (both wheels read)
    "big_gpu_raise": (0, 4, 6, 2),
    # cuda_graph_runner.py next_token_logits_buffer (PR #8579) and FA3's page_table views (PR #8567), both merged
    # 2025-07-30; 0.4.10 is the first release after them (approximate): see phases.py
    "graph_logits_buffer": (0, 4, 10),
    # the wheels pin torch==2.11.0 and cuda-python>=13.0 from 0.5.11 (0.5.11, 0.5.12, 0.5.13.post1, 0.5.14 and 0.5.16
    # METADATA; torch==2.13.0 in 0.5.18 and 0.5.19), torch==2.9.1 (CUDA 12) in 0.5.9 and 0.5.10 (pyproject.toml): the
    # decode capture's rest is costed apart from here, see phases.py CG_KEPT_T211
    "graph_rest_torch211": (0, 5, 11),
    # cuda_graph_runner.py capture(): the graphs are captured largest first (reversed(capture_bs)) from 0.4.4; up to
    # 0.4.3.post4 smallest first (both wheels read): see phases.py capture_order_extra
    "capture_largest_first": (0, 4, 4),
    # triton_backend.py init_cuda_graph_state: cuda_graph_kv_indices int64 (0.4.10.post2 int32, 0.5.1 int64; the
    # 0.5.0 release candidates not read): see phases.py cuda_graph_parts
    "triton_kv_indices_int64": (0, 5, 1),
    # server_args.py __post_init__: mem_fraction_static = (gpu_mem - reserved_mem) / gpu_mem, reserved by GPU
    # class (2.8/9.5/12 GiB + tp*pp/10 or /2, 32 GiB above 160 GiB). Before: 0.88/0.87/0.85/0.81/0.79 by tp*pp.
    # In the 0.4.7.post1 wheel (built 2025-06-16), not in 0.4.7: the docs CI of 2025-06-17 prints 0.874 on an H100
    "reserve_by_gpu_class": (0, 4, 7, 1),
    # model_runner.py init_memory_pool: ReqToTokenPool(size=max_num_reqs) from 0.4.7 (0.4.7, 0.4.7.post1 read),
    # size=max_num_reqs + 1 before (0.4.6.post5 read)
    "req_to_token_unpadded": (0, 4, 7),
    # distributed/utils.py get_pp_indices: PR #13282 (merged 2025-11-17; 0.5.6 is the first release after it,
    # approximate) gives the last `remainder` stages one layer more; before, the last stage took every leftover
    # layer (DeepSeek's 61 layers at --pp-size 8: 7 x 7 + 12)
    "pp_remainder_spread": (0, 5, 6),
    # _handle_gpu_memory_settings: reserved_mem = 512 MiB + max(chunked_prefill_size, 2048) * 1.5 MiB
    # + cuda_graph_max_bs * 2 MiB + tp*pp/8 GiB, at least 10 GiB above 60 GiB; six GPU classes pick
    # chunked_prefill_size and cuda_graph_max_bs.
    "reserve_by_activation": (0, 5, 3),
    # RTX 4090/5090 class (< 35 GiB): cuda_graph_max_bs 24 (16 before) for tp < 4.
    "max_bs_24": (0, 5, 5),
    # hybrid Mamba/GDN: the state pool and the KV pool split the rest by mamba_full_memory_ratio (0.9).
    "mamba_ratio": (0, 5, 4),
    # cell = kv_heads * (head_dim + v_head_dim) * layers (before: head_dim * 2).
    "cell_k_plus_v": (0, 5, 7),
    # PR #18039: sliding-window pools split by bytes (full and SWA layers priced with their own heads/dims);
    # before: tokens of an all-full-layer cell spread over num_hidden_layers.
    "swa_split_by_bytes": (0, 5, 9),
    # Piecewise (prefill) CUDA graphs on by default; their reserve (8 MiB per captured size, 1.5 GiB with MLA)
    # joins reserved_mem.
    "prefill_graph_default": (0, 5, 10),
    # Speculative decoding no longer adds 2/6 GiB to reserved_mem (draft weights are measured instead).
    "no_spec_reserve": (0, 5, 14),
    # The EAGLE-family draft worker (speculative/eagle_worker*.py with model_runner.py init_memory_pool; draft.py):
    # - the draft's pool is draft_runner_cache_size tokens, the target's max_total_num_tokens plus a headroom for the
    #   draft and verify tokens in flight (max_num_reqs x (num_steps x eagle_topk + num_draft_tokens) + 100), and the
    #   target's pool is raised to it too ("Target worker and draft worker shares the same indices"), before the
    #   --max-total-tokens cap (0.4.3.post4, 0.4.4.post1, 0.4.5, 0.4.7.post1, 0.4.10, 0.5.3, 0.5.6 read; 0.4.2: the
    #   draft's alone, + max_num_reqs x num_steps + 100; 0.4.3 not read)
    "spec_pool_headroom": (0, 4, 3, 4),
    # - from 0.5.7 the draft takes the target's token count as it is (model_runner_kv_cache_mixin.py: 0.5.7, 0.5.8,
    #   0.5.9, 0.5.10 read)
    "spec_pool_same": (0, 5, 7),
    # - the draft's MHA pool covers only the next-n layers from 0.4.10 (model_runner.py model_num_layers =
    #   num_nextn_predict_layers for a draft worker of an MTP model; sglang PR #8482, merged 2025-07-29); 0.4.7.post1
    #   allocates it for num_effective_layers, every layer of the model (its MLA pool already took the next-n ones)
    "spec_draft_pool_nextn": (0, 4, 10),
    # - from 0.5.14 the scheduler loads the draft's weights before either pool is profiled (init_model_worker:
    #   maybe_init_draft_worker, then init_memory_pools; "Loaded weights (target + draft)") and the target's cell
    #   takes the draft's layers at the target's per-layer size (pool_configurator.py DefaultPoolConfigurator:
    #   cell += int(cell x eagle_draft_num_layers / num_layers)); before, both came out of the (1 - mfs) headroom
    #   after the target's pool (0.5.13 and 0.5.14 read)
    "spec_draft_profiled": (0, 5, 14),
    # - a path-less MTP draft (NEXTN on an architecture outside the list that sets speculative_draft_model_path to
    #   the model) also sizes the target's cell from 0.5.22 (spec_aux_hidden_state.py; 0.5.14-0.5.20 need a path)
    "spec_pathless_cell": (0, 5, 22),
    # - server_args.py: the EAGLE family sets max_running_requests to 48 when not given ("Max running requests is
    #   reset to 48 for speculative decoding"), after the GPU-memory defaults (0.5.4 first read; 0.5.3 none)
    "spec_running_48": (0, 5, 4),
    "spec_running_48_ngram": (0, 5, 5),  # NGRAM too (0.5.5 read)
    # - auto_choose_speculative_params (num_steps, eagle_topk, num_draft_tokens) when --speculative-num-steps is
    #   not given: (3, 1, 4) for DeepSeek V2/V3 from 0.4.7.post1 (0.4.5: (5, 4, 8)), GLM-4.5 from 0.5.7, every other
    #   model but Llama and Grok from 0.5.8; fixed defaults (5, 4, 8) in 0.4.3.post4 (0.4.2: (5, 8, 64))
    "spec_auto_params": (0, 4, 5),
    "spec_auto_deepseek_314": (0, 4, 7, 1),
    "spec_auto_glm_314": (0, 5, 7),
    "spec_auto_other_314": (0, 5, 8),
    "spec_defaults_548": (0, 4, 3, 4),
    # The Mamba pool's padding slot is budgeted: size = (budget - per_req) // per_req, state = (size + 1) * per_req.
    "mamba_padding_slot": (0, 5, 18),
    # A multimodal model's pool budget leaves SGLANG_VLM_CACHE_SIZE_MB (100) for the embedding cache allocated after
    # the pool is sized (kv_cache_configurator.py mm_runtime_reservation_gb; 0.5.17 has none, 0.5.18-0.5.23 read).
    "mm_kv_reservation": (0, 5, 18),
    # Speculative decoding on a hybrid Mamba/GDN model: handle_max_mamba_cache solves the state pool jointly with the
    # per-draft-token intermediate states, K x per_req x (1 + D / 3) within the ratio's budget (0.5.14 read; 0.5.10:
    # max_running_requests x D x per_req off the rest first, not modelled; 0.5.11-0.5.13 not read); the padding slot
    # joins both terms from 0.5.17 (kv_cache_configurator.py _handle_max_mamba_cache; 0.5.16 without, 0.5.17 with).
    "mamba_spec_joint": (0, 5, 14),
    # --mamba-radix-cache-strategy auto -> extra_buffer with the overlap scheduler on supporting hybrid archs
    # (server_args.py _handle_mamba_radix_cache, 0.5.14; 0.5.10: auto -> no_buffer; kv.py mamba_running_ratio)
    "mamba_extra_buffer_auto": (0, 5, 14),
    "mamba_spec_padding": (0, 5, 17),
    # rest <= 0 raises "Loaded weights leave no GPU memory for the KV cache ..." with the minimum viable fraction
    # (0.5.11-0.5.13 not read; before: "Not enough memory. Please try to increase --mem-fraction-static.").
    "no_memory_message": (0, 5, 14),
    # < 35 GiB GPUs: chunked_prefill_size 4096 and cuda_graph_max_bs 48 (160 at tp >= 4); no GPU: mfs 0.95.
    "small_gpu_4096": (0, 5, 20),
    # A default decode cuda_graph_max_bs is capped at --max-running-requests.
    "decode_bs_capped": (0, 5, 23),
    # GLM-5.2's IndexShare schedule (index_topk_freq 4, index_skip_topk_offset 3; its indexer_types list is read from
    # 0.5.20, with the same result): models/deepseek_v2.py DeepseekV2AttentionMLA reads index_skip_topk_offset from
    # 0.5.13 (0.5.12 derives skip_topk as max(layer_id - 1, 0) % index_topk_freq, which puts the indexers on layers
    # 0, 1, 5, 9, ... while the checkpoint has them on 0, 1, 2, 6, 10, ...). Wheels 0.5.12-0.5.23 read.
    "glm_dsa_index_share": (0, 5, 13),
    # mem_cache/memory_pool.py DSATokenToKVPool(skip_topk_layers) with mem_cache/index_key_cache.py IndexKeyCache
    # _layer_num_pages (0 rows for a layer that reuses the previous layer's top-k) and model_executor/
    # pool_configurator.py _compute_dsa_indexer_cell_size (num_indexer_layers: the layers where
    # dsa_layer_skips_topk is False): the index keys of shared-indexer layers are no longer allocated nor priced
    # (0.5.17 keeps them on every layer; 0.5.18 is the first wheel with skip_topk_layers)
    "dsa_shared_index_k_elided": (0, 5, 18),
    # server_args.py _set_default_nsa_backends (0.5.10 sdist; arg_groups/overrides.py from 0.5.13, "Blackwell FP8
    # defaults to trtllm"): an fp8_e4m3 DSA cache on compute capability major >= 10 gets the trtllm prefill and
    # decode backends (0.5.9: flashmla_auto / flashmla_kv), and on ROCm the tilelang ones, whose latent row
    # calculate_mla_kv_cache_dim leaves at kv_lora_rank + qk_rope_head_dim (576 B, rope in fp8), not the scaled
    # 656 B row of the flashmla kernels (model_runner_kv_cache_mixin.py 0.5.10, kv_cache_configurator.py 0.5.17)
    "dsa_raw_latent_default": (0, 5, 10),
    # arg_groups/overrides.py is_glm_sm12_fp8 (first in the 0.5.17 wheel): GlmMoeDsaForCausalLM with an fp8_e4m3
    # cache on compute capability 12.x gets flashinfer_sparse_mla for both, the scaled row again
    "glm_dsa_sm12_flashinfer": (0, 5, 17),
    # DeepSeek sparse attention's decode-graph page table (nsa_backend.py / dsa_backend.py init_cuda_graph_state,
    # decode_cuda_graph_metadata["page_table"], int32, a column per token): max_bs rows of context_len in 0.5.3,
    # max_num_tokens rows (max_bs x num_tokens_per_bs) of context_len + speculative_num_draft_tokens in 0.5.10 and
    # 0.5.13.post1 (0.5.4-0.5.9 not read; the first of them is taken)
    "dsa_table_per_token_row": (0, 5, 4),
    # dsa_backend.py init_cuda_graph_state (0.5.18 read; 0.5.14-0.5.17 not): dsa_drop_wide_page_table, the wide
    # table left out on CUDA with pages over 1 when the fused top-k v2 kernel serves the decode (SGLANG_DSA_FUSE_TOPK,
    # SGLANG_OPT_USE_TOPK_V2 and --dsa-topk-backend sgl-kernel, the defaults) and no speculative decoding
    "dsa_wide_table_spec_only": (0, 5, 18),
    # A prompt as long as max_req_input_len = min(context_len - 1, max_total_num_tokens - 1) - 5 is aborted
    # (managers/utils.py validate_input_length: "Input length (N tokens) exceeds the maximum allowed length (M tokens)",
    # truncated instead with --allow-auto-truncate; 0.4.3.post4 is the first release read with it). 0.4.0's scheduler
    # handle_generate_request truncates it with a warning.
    "abort_long_request": (0, 4, 3, 4),
    # The decode CUDA-graph sizes (phases.py capture_bs), cuda_graph_runner.py get_batch_sizes_to_capture (0.4.0:
    # CudaGraphRunner.__init__; 0.5.14+ model_executor/runner/base_cuda_graph_runner.py) with the list built in
    # server_args.py from 0.5.3. Every wheel from 0.4.0 to 0.5.10 read, and 0.5.14, 0.5.18, 0.5.23:
    # - the sizes stop at req_to_token_pool.size; when the list runs past it, it adds size - 1 and size (0.4.1-0.4.6.post5;
    #   0.4.0 adds none), from 0.4.7 size alone, from 0.5.10 size rounded up to the alignment below
    "capture_adds_pool_size": (0, 4, 1),
    "capture_adds_size_only": (0, 4, 7),
    "capture_pool_aligned": (0, 5, 10),
    # - --cuda-graph-bs, an explicit list (0.4.2; 0.4.1 none); from 0.5.3 cuda_graph_max_bs = max(cuda_graph_bs)
    "capture_bs_flag": (0, 4, 2),
    # - speculative decoding's shorter list (0.4.3.post4: 1..32; 0.4.5: 1..8, 10..32 step 2, 40..152 step 16; 0.4.7:
    #   40..56 step 8, 80..160 step 16; 0.4.2 none)
    "capture_spec_list": (0, 4, 3, 4),
    "capture_spec_list_0_4_5": (0, 4, 5),
    "capture_spec_list_0_4_7": (0, 4, 7),
    "capture_spec_64": (0, 5, 5),
    # - past 160: ROCm adds 168..256 step 8 (0.4.3.post4-0.4.5, to an explicit list too up to 0.4.4.post1); then by GPU
    #   memory (get_device_memory_capacity, MiB): above 81,920 MiB 160..256 step 8 (0.4.5.post3; 0.4.6-0.4.6.post1
    #   only at dp_size 1), above 96 GiB (0.4.6.post2), above 90 GiB (0.4.8); and 256..512 step 16 above 180,000 MiB
    #   (0.4.7), above 160,000 MiB (0.4.8). CUDA GPUs below those stop at 160 whatever --cuda-graph-max-bs says, up to
    #   0.4.6.post3
    "capture_hip_256": (0, 4, 3, 4),
    "capture_by_gpu_mem": (0, 4, 5, 3),
    "capture_dp1_only": (0, 4, 6),
    "capture_96gib": (0, 4, 6, 2),
    "capture_512": (0, 4, 7),
    "capture_90gib": (0, 4, 8),
    # - a --cuda-graph-max-bs past the list's end adds max(list)..max_bs step 16 (0.4.6.post5; 0.4.6.post3 none)
    "capture_extends_to_max_bs": (0, 4, 6, 5),
    # - the list built by server_args.py _generate_cuda_graph_batch_sizes from cuda_graph_max_bs (0.5.3; 0.5.2 in the
    #   runner): 1, 2, 4, 8, 12, 16..256 step 8, 272..496 step 16, 512.. step 32; max_bs itself appended (0.5.10)
    "capture_list_by_max_bs": (0, 5, 3),
    "capture_adds_max_bs": (0, 5, 10),
    # - --enable-two-batch-overlap keeps sizes >= 2 (0.4.7), even sizes (0.4.9); from 0.4.10 the sizes are multiples
    #   of mul_base = 2 (two-batch overlap) x the attention-TP size where a gathered buffer is needed
    #   (require_gathered_buffer: DP attention, or a DeepEP/a2a MoE); from 0.5.8 bs x num_tokens_per_bs (speculative
    #   decoding's draft tokens in the target-verify graphs) must be the multiple
    "capture_tbo_ge2": (0, 4, 7),
    "capture_tbo_even": (0, 4, 9),
    "capture_align_attn_tp": (0, 4, 10),
    "capture_align_tokens": (0, 5, 8),
    # server_args.py __post_init__ up to 0.5.2: cuda_graph_max_bs 160 on GPUs from 25,000 MiB (0.4.0-0.4.5); left None
    # there from 0.4.5.post3 (the list then runs to its end, by GPU memory as above); the small-GPU line (8, 80 at tp
    # >= 4; chunked_prefill_size 2,048) moves from 25,000 MiB to 35 GiB in 0.4.8; chunked_prefill_size 16,384 above
    # 180,000 MiB (0.4.7), from 160 GiB (0.4.8). 0.4.0 caps cuda_graph_max_bs at 96 under --enable-dp-attention.
    "max_bs_left_none": (0, 4, 5, 3),
    "small_gpu_35gib": (0, 4, 8),
    "chunked_16k_180000": (0, 4, 7),
    "chunked_16k_160gib": (0, 4, 8),
    "dp_attention_bs_96_gone": (0, 4, 1),
    # server_args.py __post_init__ with --enable-dp-attention: chunked_prefill_size // 2 (0.4.0-0.4.4, dp_size set to
    # tp_size there), // dp_size from 0.4.4.post1 (both read): see dp_attention_chunk
    "dp_attention_chunk_by_dp": (0, 4, 4, 1),
    # models/deepseek_v2.py determine_n_share_experts_fusion: DeepSeek V3/R1 (DeepseekV3ForCausalLM, 256 routed experts,
    # no DeepEP) on a device reporting capability >= (9, 0) fuses tp_size replicas of the shared expert into the
    # routed experts (0.4.5.post2; 0.4.5.post1 and before only with --n-share-experts-fusion); from 0.4.6.post4 only
    # on CUDA (_is_cuda); from 0.4.7 one replica (num_fused_shared_experts = n_shared_experts). Wheels 0.4.4.post4 to
    # 0.4.10 read: see weights.py shared_experts_replicated
    "shared_fusion_tp_replicas": (0, 4, 5, 2),
    "shared_fusion_cuda_only": (0, 4, 6, 4),
    "shared_fusion_one_replica": (0, 4, 7),
    # load_weights keeps every routed-expert tensor in routed_experts_weights_of_layer before the quantization pass
    # (qwen3_moe.py 0.4.6.post5-0.5.8, deepseek_v2.py 0.4.6.post5; LazyValue after): see weights.py
    # experts_held_before_quantization. Wheels 0.4.6 to 0.4.6.post5, 0.4.7 to 0.5.10 read
    "experts_dict_eager": (0, 4, 6, 5),
    # mem_fraction_static x 0.85 with the aiter attention backend and context_len > 8192: see aiter_fraction
    "aiter_fraction_cut": (0, 4, 7),
    # layers/quantization/unquant.py UnquantizedFusedMoEMethod.process_weights_after_loading: on ROCm with
    # SGLANG_USE_AITER (set by the ROCm images, docker/Dockerfile.rocm ENV SGLANG_USE_AITER=1) w13 / w2 are replaced
    # by aiter shuffle_weight copies (0.5.3-0.5.9 read; 0.4.6.post5 gates it on SGLANG_AITER_MOE instead, releases
    # between not read): see weights.py aiter_shuffled_experts_held
    "aiter_moe_shuffle": (0, 5, 3),
    # layers/quantization/compressed_tensors/compressed_tensors.py get_moe_scheme: a weight-only int MoE
    # (_is_wNa16_group_channel) on ROCm gets CompressedTensorsWNA16TritonMoE, whose process_weights_after_loading
    # keeps the g_idx / sort-index parameters create_weights made (0.5.9, 0.5.10, 0.5.14, 0.5.17, 0.5.22 read; 0.5.8
    # has no ROCm path): see weights.py wna16_rocm_index_bytes
    "wna16_rocm_triton_moe": (0, 5, 9),
    "experts_dict_lazy_deepseek": (0, 4, 7),
    "experts_dict_lazy_qwen3": (0, 5, 9),
    "tp4_small_80": (0, 4, 1),
    # model_runner.py init_cuda_graphs (0.5.14; model_runner_components/cuda_graph_setup.py capture_cuda_graphs from
    # 0.5.18): an EagerRunner, then the prefill graphs, then the decode graphs ("prefill before decode, so both
    # coalesce onto the eager buffer"); before (0.5.10 read), init_device_graphs then init_piecewise_cuda_graphs.
    # Their lines became "Capture target prefill CUDA graph begin/end ..." and "Capture target decode CUDA graph
    # begin/end ..."; the prefill backend printed is tc_piecewise (0.5.14), breakable on CUDA from 0.5.15
    # (cuda_graph_config.py default_prefill_backend; 0.5.14 PhaseConfig(backend=Backend.TC_PIECEWISE)); the decode
    # line says num_tokens_per_bs (0.5.14-0.5.15 model_runner.py), num_tokens_per_req from 0.5.16
    # (model_runner_components/cuda_graph_setup.py capture_decode_graph), and from 0.5.23 prints its bs list in the
    # end line, not the begin line
    "prefill_graph_first": (0, 5, 14),
    # runner/eager_runner.py EagerRunner, built before the graph runners (0.5.14+ wheels read: 0.5.14-0.5.18, 0.5.23):
    # its input registry is sized to the prefill ceiling, chunked_prefill_size in 0.5.14 (max_total_num_tokens with
    # chunking off), max(max_total_num_tokens, chunked_prefill_size) from 0.5.15: see phases.py eager_registry_bytes
    "eager_registry": (0, 5, 14),
    "eager_registry_pool_tokens": (0, 5, 15),
    # --enable-symm-mem's symmetric-memory pool, preallocated once start-up has captured its CUDA graphs
    # (model_runner.py ModelRunner.prealloc_symmetric_memory_pool 0.5.9-0.5.15, pynccl_allocator.py
    # prealloc_symmetric_memory_pool 0.5.16-0.5.23): absent from the 0.5.8 wheel, present from 0.5.9 (see
    # symm_mem_prealloc_bytes)
    "symm_mem_prealloc": (0, 5, 9),
    # model_runner.py init_cuda_graphs: "Capture cuda graph begin/end" print their free memory from 0.4.3.post4 (0.4.2
    # none), "avail mem=X GB. mem usage=Y GB." up to 0.4.6, "mem usage=Y GB. avail mem=X GB." from 0.4.6.post1;
    # cuda_graph_runner.py prints "Capture cuda graph bs [...]" from 0.4.6.post2 (0.4.6.post1 none)
    "capture_mem_line": (0, 4, 3, 4),
    "capture_usage_first": (0, 4, 6, 1),
    "capture_bs_line": (0, 4, 6, 2),
    "graph_lines_per_req": (0, 5, 16),
    # the breakable prefill graphs (phases.py prefill_graph_bytes): the CUDA default from 0.5.15 (0.5.15-0.5.19 wheels
    # read); 0.5.15's BreakableCudaGraphBackend keeps the largest size's own output as the shared buffer
    # (_shared_output_buffer = out), 0.5.16+ allocates it apart (_alloc_full_buffer): the same rows x hidden either way
    "prefill_breakable": (0, 5, 15),
    # the decode graphs' shared logits buffer (graph_shared_output.py GraphSharedOutput, (max decode capture rows,
    # vocab) float32, allocated lazily by get_logits_buffer) is first asked for by the prefill capture:
    # prefill_cuda_graph_runner.py capture_prepare passes _next_token_logits_buffer(bs) (0.5.15-0.5.23 wheels; 0.5.14's
    # prefill runner passes None and its DecodeInputBuffers.create allocates the buffer): see phases.py
    # after_prefill_capture
    "graph_logits_in_prefill": (0, 5, 15),
    # the prefill and decode captures share one capture stream (runner_utils/pool.py
    # get_or_create_global_graph_capture_stream, "Serial capture passes also share one stream to reuse allocator
    # scratch", 0.5.19-0.5.23 wheels); 0.5.15-0.5.18 share the pool handle but each graph_capture() opens a fresh
    # stream (distributed/parallel_state.py GroupCoordinator.graph_capture: stream = device_module.Stream()): see
    # phases.py after_prefill_capture
    "graph_capture_stream_shared": (0, 5, 19),
    # a multimodal model keeps its breakable prefill graphs when its architecture is in configs/model_config.py
    # multimodal_breakable_cuda_graph_supported_model_archs (server_args.py _disable_breakable_cudagraph_if_incompatible
    # "multimodal model" rule; 0.5.15 disables every multimodal model, the list is in 0.5.16-0.5.19): see
    # phases.py PREFILL_GRAPH_MM_ARCHS
    "prefill_breakable_mm": (0, 5, 16),
    # the largest prefill graph with an MLA backend: 2,048 tokens (0.5.10-0.5.18 read), min(8,192, chunked_prefill_size)
    # in 0.5.23 (0.5.19-0.5.22 not read)
    "prefill_mla_8192": (0, 5, 23),
    "decode_bs_at_end": (0, 5, 23),
    # tp_worker.py get_worker_info warns at start-up when the pool holds fewer tokens than --context-length
    # ("KV pool holds %d tokens, fewer than --context-length %d. ..."): in 0.5.23, not in 0.5.18 (both read).
    "pool_short_warning": (0, 5, 23),
    # A multimodal model's default mem_fraction_static is lowered in server_args.py: x 0.90 (0.4.9), then by the ViT's
    # size (0.4.10+); up to 0.4.8 ModelRunner lowered any fraction, given or default, by 0.90
    "vlm_fraction": (0, 4, 9),
    # ModelRunner's multimodal cut: x 0.95 (0.4.3.post4, 0.4.4.post1 read), x 0.90 from 0.4.5
    "vlm_runner_090": (0, 4, 5),
    "vlm_by_vit": (0, 4, 10),
    # Chunked prefill turned off (chunked_prefill_size = -1) after mem_fraction_static is set: for every multimodal
    # model up to 0.4.6.post4 (model_runner.py model_specific_adjustment, 0.4.0 / 0.4.5.post3 / 0.4.6 / 0.4.6.post1-post4
    # read), from 0.4.6.post5 only for the classes configs/model_config.py is_multimodal_chunked_prefill_supported
    # refuses (0.4.6.post5, 0.4.7, 0.5.0rc2, 0.5.10 read; 0.5.23 arg_groups/model_hook.py
    # handle_model_capability_adjustments). Multimodal is off by default
    # (model_config.py enable_multimodal None -> False) for Llama4ForConditionalGeneration from 0.4.5.post1
    # (--enable-llama4-multimodal in its server_args.py; 0.4.5 has none; 0.4.5.post3 model_config.py read) and for
    # Gemma3ForConditionalGeneration from 0.4.6 (0.4.5.post3 lists Llama 4 only)
    "mm_chunked_prefill_list": (0, 4, 6, 5),
    # scheduler.py's start-up line "max_total_num_tokens=..., max_prefill_tokens=..., max_running_requests=...,
    # context_len=...": ", chunked_prefill_size=..." (server_args', after ModelRunner's adjustments) from 0.4.2 (0.4.0,
    # 0.4.1 none), ", available_gpu_mem=X GB" at its end from 0.4.7 (0.4.6.post5 none)
    "sched_line_chunk": (0, 4, 2),
    "sched_line_avail": (0, 4, 7),
    "mm_off_llama4": (0, 4, 5, 1),
    "mm_off_gemma3": (0, 4, 6),
    # layers/quantization/mxfp4.py Mxfp4MoEMethod.create_weights on SM100 with FlashInfer's MXFP4 MoE (the default
    # for gpt-oss there): intermediate and hidden padded to 256 (0.5.2-0.5.10 read), to 128 in 0.5.18 (first read)
    "mxfp4_sm100_pad_128": (0, 5, 18),
    # The default attention backend (see default_attention_backend): FA3 on Hopper for the architectures of
    # utils.py is_fa3_default_architecture (0.4.6 read, 0.4.5 has no FA3; Qwen3 listed from 0.4.6.post5, GLM-4.5 from
    # 0.4.10, Olmo 2/3 from 0.5.4), for every MHA model from 0.5.8 (0.5.7 still asks the list); MLA: FA3 on Hopper
    # (0.4.6), FlashInfer on SM100 (0.4.7), aiter on ROCm (0.4.7; MHA from 0.4.6.post5, 0.4.6 has none); TRT-LLM MHA on
    # SM100 (0.5.7; 0.5.6 none); FlashInfer refused for attention sinks (0.5.14; 0.5.10 none), FA4 for unequal K/V
    # head dims on SM100 (0.5.18; 0.5.14 none). Model overrides (server_args.py _handle_model_specific_adjustments):
    # gpt-oss (0.5.1 read), DeepSeek V3/R1 on SM100 trtllm_mla (0.5.4; 0.5.3 none), DeepSeek V3.2 nsa (0.5.3), Llama 4
    # on SM100 trtllm_mha (0.5.4 read; 0.5.3 asserts fa3/aiter/triton) and by platform (0.5.6), Olmo 2/3 (0.5.4),
    # Qwen3-Next / Qwen3.5 on SM100 triton (0.5.6)
    "fa3_default": (0, 4, 6),
    # flashinfer_backend.py: Qwen3ForCausalLM and MiMoForCausalLM join Qwen2's 512 MiB workspace (0.4.6.post5 read;
    # 0.4.5 Qwen2 only)
    "flashinfer_ws_qwen3": (0, 4, 6, 5),
    "fa3_qwen3": (0, 4, 6, 5),
    "aiter_mha": (0, 4, 6, 5),
    "mla_sm100_flashinfer": (0, 4, 7),
    "fa3_glm4moe": (0, 4, 10),
    "gpt_oss_backend": (0, 5, 1),
    "nsa_backend": (0, 5, 3),
    "olmo2_backend": (0, 5, 4),
    "deepseek_trtllm_mla": (0, 5, 4),
    "llama4_sm100_trtllm": (0, 5, 4),
    "llama4_by_platform": (0, 5, 6),
    "qwen3next_sm100_triton": (0, 5, 6),
    "trtllm_mha_default": (0, 5, 7),
    "fa3_every_mha": (0, 5, 8),
    "gpt_oss_aiter": (0, 5, 10),
    "sinks_not_flashinfer": (0, 5, 14),
    "fa4_asymmetric_kv": (0, 5, 18),
    # gpt-oss's sliding layers get their own pool: not before 0.5.8 (disable_hybrid_swa_memory = True), 0.5.8-0.5.9
    # unless trtllm_mha or speculative decoding, always from 0.5.10
    "gpt_oss_swa_pool": (0, 5, 8),
    "gpt_oss_swa_always": (0, 5, 10),
    # Llama 4's chunked-attention layers get their own pool by default from 0.5.8 (configs/model_config.py
    # is_hybrid_swa_model lists Llama4ForConditionalGeneration, 0.5.8 / 0.5.10 read). Before: no hybrid pool at all
    # up to 0.4.8 (0.4.6.post5, 0.4.7, 0.4.8 read: one MHATokenToKVPool of every layer); 0.4.9-0.5.7 only with
    # --hybrid-kvcache-ratio (is_hybrid_model returns None when it is not given, and model_runner.py leaves
    # architectures naming Llama4 out of the sliding-window switch: 0.4.9, 0.4.10, 0.5.0rc2-0.5.7 read)
    "llama4_swa_pool": (0, 5, 8),
    # Llama 4's vision tower: whole on every rank up to 0.4.9 (transformers' modules, built unconditionally), built
    # only with --enable-multimodal from 0.4.10 (models/mllama4.py has_vision; weights.py tower_rank_bytes)
    "llama4_vision_gated": (0, 4, 10),
    # FP4 KV caches (kv.py fp4_kv_layout, check_fp4_kv; every wheel from 0.5.3 to 0.5.23 read): --kv-cache-dtype
    # fp4_e2m1 from 0.5.5 (sglang#10078: MLATokenToKVPool's FP4 latent), the MHA pool from 0.5.6
    # (MHATokenToKVPoolFP4, sglang#12612); server_args.py _handle_kv4_compatibility's backend check from 0.5.7, run
    # after _handle_attention_backend_compatibility has picked the default; the nvfp4 and
    # fp4_mx_block16 recipes from 0.5.16, when fp4_e2m1 turns into a ValueError (mem_cache/kv_cache_dtype.py) and
    # the MHA cell takes a shared FP8 dequant workspace (pool_configurator.py); MLA's list drops flashmla at 0.5.16
    # and cutlass_mla at 0.5.20; fp4_e2m1 leaves the choices at 0.5.21, when the MHA cell becomes the recipe's
    # compute_cell_size (layers/quantization/fp4_kv_cache_quant_method.py)
    "kv4_mla": (0, 5, 5),
    "kv4_mha": (0, 5, 6),
    "kv4_backend_check": (0, 5, 7),
    "kv4_recipes": (0, 5, 16),
    "kv4_mla_no_cutlass": (0, 5, 20),
    "kv4_e2m1_dropped": (0, 5, 21),
    # --kv-cache-dtype auto and the checkpoint's KV quantization (checkpoint_kv.py): model_runner.py init_memory_pool
    # takes quant_config.kv_cache_quant_algo "FP8" as float8_e4m3fn from 0.5.3 (0.5.3rc2; absent in 0.4.6.post5,
    # 0.4.7-0.4.10, 0.5.0rc0, 0.5.1, 0.5.2 and 0.5.3rc0); ModelOptFp8Config keeps the value as kv_cache_quant_method
    # in 0.5.3 and passes it to ModelOptQuantConfig's kv_cache_quant_algo from 0.5.4
    "kv_auto_checkpoint": (0, 5, 3),
    "kv_modelopt_fp8_attr": (0, 5, 4),
    # ModelOptFp4Config.from_config's flat layout reads a bare kv_cache_quant_algo before kv_cache_scheme in
    # 0.5.3-0.5.8, kv_cache_scheme only in 0.5.9-0.5.14 (0.5.9, 0.5.10, 0.5.14 read), both again from 0.5.15 (the
    # scheme when it is a dict, else kv_cache_quant_algo) for the FP8, FP4 and mixed-precision configs alike
    "kv_modelopt_fp4_flat_algo_dropped": (0, 5, 9),
    "kv_modelopt_flat_algo": (0, 5, 15),
    # MIXED_PRECISION is ModelOptMixedPrecisionConfig (a kv_cache_quant_algo) from 0.5.10; w4afp8 (none) before.
    # configs/model_config.py _parse_modelopt_quant_config picks it for a Nemotron-H model only in 0.5.10-0.5.14
    # (model_type nemotron_h or an architecture starting NemotronH; 0.5.10 sdist, 0.5.14 wheel read), from 0.5.15 for
    # a checkpoint whose quantized_layers hold an NVFP4 or W4A16_NVFP4 layer (0.5.15-0.5.23 wheels read); w4afp8
    # otherwise
    "kv_modelopt_mixed": (0, 5, 10),
    "kv_modelopt_mixed_by_layers": (0, 5, 15),
    # model_loader/weight_utils.py get_quant_config: a modelopt_mixed config.json quantization_config without
    # quantized_layers or without kv_cache_quant_algo / kv_cache_scheme is "incomplete"
    # (modelopt_mixed_config_incomplete, first in the 0.5.15 wheel, absent from 0.5.14's, kept to 0.5.23), and
    # hf_quant_config.json is read instead: ModelOptMixedPrecisionConfig.from_config takes its nested
    # quantization.kv_cache_quant_algo
    "kv_modelopt_mixed_incomplete": (0, 5, 15),
    # FlashInfer all-reduce fusion workspaces before the capture (phases.py flashinfer_fusion_bytes): model_runner.py
    # _pre_initialize_flashinfer_allreduce_workspace in 0.5.13.post1 (not in 0.5.10; 0.5.11-0.5.13 not read);
    # --flashinfer-allreduce-fusion-backend from 0.5.14 (the same auto-enable rule in 0.5.14-0.5.18: server_args.py,
    # then arg_groups/overrides.py _flashinfer_allreduce_fusion_auto_enable); the rule changes in 0.5.19, not
    # modelled (not charged)
    "flashinfer_fusion_workspace": (0, 5, 13, 1),
    "flashinfer_fusion_backend_flag": (0, 5, 14),
    "flashinfer_fusion_unread": (0, 5, 19),
    # fp8.py Fp8Config.from_config reads kv_cache_quant_algo from 0.5.18 (not 0.5.17)
    "kv_fp8_config_algo": (0, 5, 18),
    # compressed_tensors.py CompressedTensorsConfig.kv_cache_quant_algo, "FP8" for a static per-tensor 8-bit float
    # kv_cache_scheme, from 0.5.19 (not 0.5.18)
    "kv_compressed_tensors_scheme": (0, 5, 19),
})

# --kv-cache-dtype choices (0.5.23 arg_groups/fields/model.py, and 0.5.5-0.5.20's fp4_e2m1) -> bytes per element.
# SGLang's own names (fp8 spelled with its format, FP4 kinds), not torch dtypes, so not oomkit.quant.dtypes; None:
# auto. The FP4 kinds pack two values a byte (uint8 (size, heads, head_dim // 2)) beside one uint8 scale per 16
# values (kv.py elem_bytes); which releases take which: ERAS kv4_*.
KV_CACHE_DTYPES = {
    "auto": None, "fp8_e5m2": 1, "fp8_e4m3": 1, "mxfp8": 1, "bf16": 2, "bfloat16": 2,
    "nvfp4": 0.5, "fp4_mx_block16": 0.5, "fp4_e2m1": 0.5,
}
FP4_KV_DTYPES = frozenset({"nvfp4", "fp4_mx_block16", "fp4_e2m1"})
FP4_SCALE_BLOCK = 16  # scale_block_size / SCALE_BLOCK_SIZE: one uint8 scale per 16 FP4 values
DTYPE_CHOICES = ("auto", "half", "float16", "bfloat16", "float", "float32")  # --dtype choices, in argparse order
# --prefill-kv-cache-dequant-dtype choices (0.5.21-0.5.23 arg_groups/fields/exec_.py), in argparse order
PREFILL_KV_DEQUANT_CHOICES = ("auto", "nvfp4", "fp8_e4m3")
# --quantization choices (server_args.py QUANTIZATION_CHOICES, main of late 2026, in its order), and "qoq", which the
# 0.4-0.5 releases listed too: argparse refuses any other name
QUANTIZATION_CHOICES = (
    "awq", "fp8", "mxfp8", "gptq", "marlin", "gptq_marlin", "awq_marlin", "bitsandbytes", "gguf", "modelopt",
    "modelopt_fp8", "modelopt_fp4", "nvfp4_online", "modelopt_mixed", "petit_nvfp4", "w8a8_int8", "w8a8_fp8",
    "moe_wna16", "w4afp8", "mxfp4", "auto-round", "auto-round-int8", "compressed-tensors", "modelslim", "mxfp_w4a8",
    "quark", "quark_int4fp8_moe", "quark_mxfp4", "mlx_q4", "mlx_q8", "unquant", "humming", "qoq",
)

# oomkit's engine-neutral options (--ctx, --parallel, --kv-type, --engine-version, --kv-memory) -> these settings
# (commands/_model_args.py neutral_options reads a module's NEUTRAL)
NEUTRAL = {"ctx": "context_length", "parallel": "max_running_requests", "kv_type": "kv_cache_dtype",
           "engine_version": "engine_version", "kv_memory": "kv_cache_memory_bytes"}


@dataclass(frozen=True)
class SGLangSettings:
    """SGLang's server arguments by their own names (server_args.py ServerArgs; None = SGLang's default)."""

    PROGRAM = "SGLang"  # class attributes, not fields (no annotation)
    # What SGLang accepts, held by flags.check_settings (flags and API arguments alike): counts and sizes from 1
    # (--chunked-prefill-size -1 turns chunking off), fractions and ratios above 0; where SGLang has no upper
    # bound, oomkit's: 1,024 GPUs, 2^31 - 1 tokens.
    LIMITS = {
        "tp_size": Limit(1, 1024, "--tp-size"),
        "dp_size": Limit(1, 1024, "--dp-size"),
        "pp_size": Limit(1, 1024, "--pp-size"),
        "ep_size": Limit(1, 1024, "--ep-size"),
        "nnodes": Limit(1, 1024, "--nnodes"),
        "ep_num_redundant_experts": Limit(0, 1 << 16, "--ep-num-redundant-experts"),
        "mem_fraction_static": Limit(0, 1, "--mem-fraction-static", open_lo=True),
        "max_loras_per_batch": Limit(1, 1 << 16, "--max-loras-per-batch"),  # server_args.py: "must be positive"
        "context_length": Limit(1, INT32_MAX, "--context-length"),
        # oomkit's ceiling: SGLang captures a prefill CUDA graph every 512 tokens up to it (prefill_graph_sizes)
        "chunked_prefill_size": Limit(1, 1 << 20, "--chunked-prefill-size", special=(-1,)),
        "max_prefill_tokens": Limit(1, INT32_MAX, "--max-prefill-tokens"),
        "max_running_requests": Limit(1, 1 << 20, "--max-running-requests"),
        "max_total_tokens": Limit(1, INT32_MAX, "--max-total-tokens"),
        "page_size": Limit(1, 1 << 16, "--page-size"),
        "cuda_graph_max_bs": Limit(0, 1 << 20, "--cuda-graph-max-bs"),
        "cuda_graph_bs": Limit(1, 1 << 20, "--cuda-graph-bs"),
        "speculative_num_draft_tokens": Limit(1, 1 << 16, "--speculative-num-draft-tokens"),
        "speculative_num_steps": Limit(1, 1 << 16, "--speculative-num-steps"),
        "speculative_eagle_topk": Limit(1, 1 << 16, "--speculative-eagle-topk"),
        "swa_full_tokens_ratio": Limit(0, 1e6, "--swa-full-tokens-ratio", open_lo=True),
        "mamba_full_memory_ratio": Limit(0, 1e6, "--mamba-full-memory-ratio", open_lo=True),
        "max_mamba_cache_size": Limit(1, INT32_MAX, "--max-mamba-cache-size"),
        "kv_cache_memory_bytes": Limit(1, 1 << 60, "--kv-memory"),
    }

    model_path: str | None = None  # --model-path / --model
    tp_size: int = 1  # --tp-size / --tensor-parallel-size / --tp
    dp_size: int = 1  # --dp-size
    pp_size: int = 1  # --pp-size
    enable_dp_attention: bool = False  # --enable-dp-attention
    enable_dp_lm_head: bool = False  # --enable-dp-lm-head: the lm_head split over the attention-TP group
    ep_size: int = 1  # --ep-size / --expert-parallel-size
    enable_ep_moe: bool = False  # --enable-ep-moe (0.4.x): ep_size = tp_size
    enable_deepep_moe: bool = False  # --enable-deepep-moe (0.4.x): moe_a2a_backend deepep before that flag existed
    moe_a2a_backend: str | None = None  # --moe-a2a-backend: deepep / mooncake / flashinfer set ep_size = tp_size
    # FlashInfer all-reduce fusion (phases.py fusion_backend): --enable-flashinfer-allreduce-fusion (up to 0.5.13.post1;
    # 0.5.14: --flashinfer-allreduce-fusion-backend auto), --flashinfer-allreduce-fusion-backend auto / trtllm / mnnvl
    # (0.5.14+), --enforce-disable-flashinfer-allreduce-fusion
    enable_flashinfer_allreduce_fusion: bool = False
    flashinfer_allreduce_fusion_backend: str | None = None
    enforce_disable_flashinfer_allreduce_fusion: bool = False
    ep_num_redundant_experts: int = 0  # --ep-num-redundant-experts: extra physical expert slots over the EP group
    moe_dense_tp_size: int | None = None  # --moe-dense-tp-size: TP of the dense MLP layers (None: tp_size)
    nnodes: int = 1  # --nnodes: names each rank's node
    mem_fraction_static: float | None = None  # None: by GPU memory and TP (see default_mem_fraction_static)
    context_length: int | None = None  # None: the model's derived context length
    kv_cache_dtype: str = "auto"
    chunked_prefill_size: int | None = None  # None: by GPU memory
    max_prefill_tokens: int = 16384
    max_running_requests: int | None = None
    max_total_tokens: int | None = None
    page_size: int | None = None  # None: 1, or what the attention backend forces
    attention_backend: str | None = None
    # --prefill-attention-backend / --decode-attention-backend (0.4.10+): one phase's backend, the other falling back
    # to attention_backend (0.5.23 arg_groups/model_override_base.py attention_backends_of). Taken for the NVFP4 KV
    # recipe (0.5.21+), which resolves the pair itself (kv.resolve_nvfp4_backends) and sizes its cell by both phases
    prefill_attention_backend: str | None = None
    decode_attention_backend: str | None = None
    # --prefill-kv-cache-dequant-dtype (0.5.21+: auto, fp8_e4m3, nvfp4): what an NVFP4 cache's prefill reads
    prefill_kv_cache_dequant_dtype: str = "auto"
    dtype: str = "auto"
    quantization: str | None = None
    cuda_graph_max_bs: int | None = None
    disable_cuda_graph: bool = False
    disable_piecewise_cuda_graph: bool = False
    swa_full_tokens_ratio: float = 0.8
    mamba_full_memory_ratio: float = 0.9
    max_mamba_cache_size: int | None = None
    mamba_ssm_dtype: str = "float32"
    speculative_algorithm: str | None = None
    speculative_num_draft_tokens: int | None = None  # the target-verify graphs' tokens per request (None: 1 here)
    speculative_num_steps: int | None = None  # --speculative-num-steps (None: auto_choose_speculative_params)
    speculative_eagle_topk: int | None = None  # --speculative-eagle-topk
    speculative_draft_model_path: str | None = None  # --speculative-draft-model-path (None: the MTP layers, if any)
    cuda_graph_bs: tuple[int, ...] | None = None  # --cuda-graph-bs: the decode sizes to capture, given
    disable_cuda_graph_padding: bool = False  # --disable-cuda-graph-padding: every size 1..max_bs (0.5.3+)
    enable_two_batch_overlap: bool = False  # --enable-two-batch-overlap: sizes aligned to 2
    mm_enable_dp_encoder: bool = False  # --mm-enable-dp-encoder: the vision encoder whole on every rank
    # --enable-multimodal (0.4.6+; --enable-llama4-multimodal 0.4.5.post1-0.4.5.post3): Llama 4 / Gemma 3's multimodal
    # path on where SGLang turns it off by default (multimodal_off)
    enable_multimodal: bool = False
    # --disable-hybrid-swa-memory (0.5.3-0.5.23 server_args.py / 0.5.23 arg_groups/fields/schedule.py): no SWAKVPool,
    # every layer in the full pool (configs/model_config.py _derive_hybrid_model: is_hybrid_swa = ... and not it)
    disable_hybrid_swa_memory: bool = False
    language_only: bool = False  # --language-only: the language model without its multimodal encoder
    allow_overwrite_longer_context_len: bool = False  # env SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1
    enable_symm_mem: bool = False  # --enable-symm-mem: NCCL symmetric memory (0.4.10.post2+), its pool (0.5.9+)
    symm_mem_prealloc_gb: int | None = None  # env SGLANG_SYMM_MEM_PREALLOC_GB_SIZE (None: not set)
    allow_auto_truncate: bool = False  # --allow-auto-truncate: a prompt longer than the pool allows is cut, not aborted
    engine_version: str = NEWEST
    kv_cache_memory_bytes: int | None = None  # oomkit --kv-memory: size the pool from this budget
    # set by the estimate from the GPU, not typed: SGLang's get_platform().is_sm100 (compute capability major 10,
    # utils/common.py is_sm100_supported), which picks the NVFP4 recipe's scale layout (kv.fp4_kv_layout)
    platform_sm100: bool = field(default=False, compare=False)
    # set by the estimate from the GPU, not typed: the DSA backends SGLang picks store an fp8 latent row unscaled
    # (trtllm, tilelang: kv.dsa_raw_latent), 576 B instead of 656
    dsa_raw_latent: bool = field(default=False, compare=False)
    # the smallest memory.total (MiB) nvidia-smi lists on the machine, GPUs outside CUDA_VISIBLE_DEVICES included:
    # SGLang sizes its GPU-class defaults (chunked_prefill_size, cuda_graph_max_bs, the capture list, the default
    # mem_fraction_static) from utils get_device_memory_capacity -> get_nvgpu_memory_capacity, which runs
    # `nvidia-smi --query-gpu=memory.total` with no -i and returns min() over every line (the 0.4.3.post4,
    # 0.5.2 and 0.5.10 wheels read: srt/utils.py, later srt/utils/common.py). None: the machine holds only the GPUs given (their smallest is used, as before)
    machine_gpu_mib: int | None = None
    # LoRA (server_args.py; the pool: lora.py): --enable-lora or --lora-paths, --max-loras-per-batch (8),
    # --max-lora-rank and --lora-target-modules (None / (): the adapters' own, from their adapter_config.json)
    enable_lora: bool = False
    max_loras_per_batch: int = 8
    max_lora_rank: int | None = None
    lora_target_modules: tuple[str, ...] = ()
    # flags of the command that change memory in a way oomkit does not count, each with what it changes: said in
    # the estimate's warnings (engines/base.py unmodelled_note), never dropped
    unmodelled: tuple[str, ...] = ()
    # the flags typed that only some releases' parsers take (engines/data/sglang_flags.json spans, read from the
    # wheels): kv.check_release_flags refuses one the chosen release does not have, as its parser does
    release_flags: tuple[str, ...] = field(default=(), compare=False)  # how it was typed, not a setting
    # abbreviations that name flags of different releases and read alike (args.parse_args): (as typed, its candidate
    # flags joined by spaces), matched against the chosen release's parser by kv.check_release_flags
    abbreviations: tuple[tuple[str, str], ...] = field(default=(), compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


# ---------------------------------------------------------------------------------------------------------
# Versions


def parse_version(version: str | None) -> Version:
    """"0.5.2", "v0.4.6.post5", "0.5.0rc1" -> (major, minor, patch, post)."""
    v = parse_release(version, NEWEST, "SGLang", "e.g. 0.5.2 or 0.4.6.post5",
                      tail=r"(?:\.?post(\d+))?(?:rc\d+|\.dev\d+.*)?")
    if v[:3] < OLDEST:
        raise OomkitError(f"SGLang {version}: oomkit models SGLang 0.4.0 and newer")
    return v


def reached(v: Version, era: str) -> bool:
    return ERAS.reached(v, era)


def symm_mem_prealloc_bytes(s: SGLangSettings, v: Version) -> int:
    """The symmetric-memory pool every TP rank allocates at the end of start-up, after the CUDA graphs: torch.empty of
    SGLANG_SYMM_MEM_PREALLOC_GB_SIZE x 2**30 uint8 inside use_symmetric_memory(get_tp_group()) (NCCL's ncclMemAlloc
    behind a pluggable allocator), skipped for the draft worker, without --enable-symm-mem, or when the size is <= 0
    ("Pre-allocating symmetric memory pool with N GiB"; model_runner.py ModelRunner.prealloc_symmetric_memory_pool
    0.5.9-0.5.15, called last in initialize (0.5.9, 0.5.10) / init_cuda_graphs (0.5.14, 0.5.15), after the decode and
    prefill captures; pynccl_allocator.py prealloc_symmetric_memory_pool 0.5.16-0.5.23, called at the end of
    model_runner_components/cuda_graph_setup.py capture_cuda_graphs, finalize_cuda_graph_capture in 0.5.23). The size
    is the same on every rank, whatever the TP size. The variable defaults to -1 (environ.py), and --enable-symm-mem
    with it unset sets it to 4, whether or not --mem-fraction-static is given (server_args.py
    _handle_gpu_memory_settings 0.5.9-0.5.18, outside its `if self.mem_fraction_static is None` block;
    arg_groups/memory_hook.py handle_gpu_memory_settings 0.5.19-0.5.23: "Symmetric memory is enabled, setting
    symmetric memory prealloc size to 4GB as default."). Nothing is preallocated before 0.5.9 (0.5.8 wheel read).
    Outside mem_fraction_static's budget: it comes out of what the KV pool and the captures left. Not modelled: 0.5.19+
    arg_groups/model_overrides/kimi_k3.py turning --enable-symm-mem off for Kimi K3 with CUDA graphs on."""
    if not s.enable_symm_mem or not reached(v, "symm_mem_prealloc"):
        return 0
    gb = 4 if s.symm_mem_prealloc_gb is None else s.symm_mem_prealloc_gb
    return max(0, gb) * GiB


def model_dtype(spec: ModelSpec, s: SGLangSettings) -> str:
    """configs/model_config.py _get_and_verify_dtype: auto = the config's dtype, float32 -> float16 (Gemma:
    bfloat16)."""
    if s.dtype not in DTYPE_CHOICES:
        raise OomkitError(f"launch_server.py: error: argument --dtype: invalid choice: {s.dtype!r} (choose from "
                          + ", ".join(repr(k) for k in DTYPE_CHOICES) + ")")
    if s.dtype != "auto":
        return canonical(s.dtype)
    fmt = canonical(spec.weights.format)
    if fmt == "float32":
        return "bfloat16" if spec.architecture.startswith("gemma") else "float16"
    if fmt == "float16":
        return "float16"
    return "bfloat16"


# ---------------------------------------------------------------------------------------------------------
# Defaults that depend on the GPU (server_args.py _handle_gpu_memory_settings)


@dataclass(frozen=True)
class Defaults:
    mem_fraction_static: float
    chunked_prefill_size: int
    cuda_graph_max_bs: int
    reserved_mib: float | None  # what mem_fraction_static keeps back (None for the 0.4.x table)
    prefill_graph_sizes: int  # captured prefill (piecewise) CUDA graph sizes counted in the reserve


def capacity_defaults(gpu_mib: int | None, s: SGLangSettings, v: Version) -> tuple[int, int]:
    """chunked_prefill_size and cuda_graph_max_bs SGLang picks for this GPU."""
    tp = s.tp_size
    if gpu_mib is None:
        cps, bs = 4096, 160
    elif not reached(v, "reserve_by_activation"):
        # 0.4.0-0.5.2 __post_init__ (ERAS small_gpu_35gib, chunked_16k_*, max_bs_left_none): chunked 2048 on small
        # GPUs, 16384 on the largest, else 8192; cuda_graph_max_bs 8 (80 at tp >= 4 from 0.4.1) on small GPUs, else
        # 160 up to 0.4.5, then left None: the capture list runs to its own end for this GPU (default_capture_top)
        small = gpu_mib < (35 * 1024 if reached(v, "small_gpu_35gib") else 25_000)
        big = (gpu_mib >= 160 * 1024 if reached(v, "chunked_16k_160gib") else
               gpu_mib > 180_000 and reached(v, "chunked_16k_180000"))
        cps = 2048 if small else 16384 if big else 8192
        if small:
            bs = 8 if tp < 4 or not reached(v, "tp4_small_80") else 80
        else:
            bs = default_capture_top(gpu_mib, s, v) if reached(v, "max_bs_left_none") else 160
    elif gpu_mib < 20 * 1024:  # T4, 4080
        cps, bs = 2048, 8
    elif gpu_mib < 35 * 1024:  # A10, 4090, 5090
        if reached(v, "small_gpu_4096"):
            cps, bs = 4096, (48 if tp < 4 else 160)
        else:
            cps, bs = 2048, ((24 if reached(v, "max_bs_24") else 16) if tp < 4 else 80)
    elif gpu_mib < 60 * 1024:  # A100 40GB, L40
        cps, bs = 4096, (32 if tp < 4 else 160)
    elif gpu_mib < 160 * 1024:  # H100, A100 80GB, H20, H200
        cps, bs = 8192, (256 if tp < 4 else 512)
    else:  # B200, MI300
        cps, bs = 16384, 512
    if s.chunked_prefill_size is not None:
        cps = s.chunked_prefill_size
    if s.cuda_graph_max_bs is not None:
        bs = s.cuda_graph_max_bs
    elif reached(v, "decode_bs_capped") and s.max_running_requests is not None:
        bs = min(bs, s.max_running_requests)
    if s.cuda_graph_bs and reached(v, "capture_list_by_max_bs"):
        bs = max(s.cuda_graph_bs)  # server_args.py: "else: self.cuda_graph_max_bs = max(self.cuda_graph_bs)"
    if s.enable_dp_attention and not reached(v, "dp_attention_bs_96_gone"):
        bs = min(bs, 96)  # 0.4.0 __post_init__: "The CUDA graph max batch size is adjusted to ..."
    return cps, bs


def default_capture_top(gpu_mib: int, s: SGLangSettings, v: Version) -> int:
    """0.4.5.post3-0.5.2: the end of get_batch_sizes_to_capture's default list on this GPU (cuda_graph_max_bs left
    None: ERAS capture_by_gpu_mem .. capture_90gib), or of a --cuda-graph-bs list."""
    if s.cuda_graph_bs:
        return max(s.cuda_graph_bs)
    top = 160
    line = 90 * 1024 if reached(v, "capture_90gib") else 96 * 1024 if reached(v, "capture_96gib") else 81920
    if gpu_mib > line and (s.dp_size == 1 or not reached(v, "capture_dp1_only") or reached(v, "capture_96gib")):
        top = 256
    if reached(v, "capture_512") and gpu_mib > (160_000 if reached(v, "capture_90gib") else 180_000):
        top = 512
    return top


def prefill_graph_sizes(max_tokens: int) -> list[int]:
    """arg_groups/cuda_graph_hook.py generate_prefill_cuda_graph_batch_sizes (0.5.8+
    _generate_piecewise_cuda_graph_tokens): the token counts captured for prefill."""
    sizes = (list(range(4, 33, 4)) + list(range(48, 257, 16)) + list(range(288, 513, 32))
             + list(range(576, 1025, 64)) + list(range(1280, 4097, 256)) + list(range(4608, max_tokens + 1, 512)))
    return [x for x in sizes if x <= max_tokens]


def _mfs_by_tp(gpu_mib: int | None, tp_pp: int, v: Version = (0, 4, 6, 5)) -> float:
    """0.4.x server_args.py __post_init__: a fixed fraction by tp*pp, raised on GPUs above 96 GiB from 0.4.6.post2."""
    if gpu_mib is not None and gpu_mib <= 81920:
        mfs = 0.79 if tp_pp >= 16 else 0.81 if tp_pp >= 8 else 0.85 if tp_pp >= 4 else 0.87 if tp_pp >= 2 else 0.88
    else:
        mfs = 0.88
    if gpu_mib is not None and gpu_mib > 96 * 1024 and reached(v, "big_gpu_raise"):
        mfs = min(mfs + 48 * 1024 * (1 - mfs) / gpu_mib, (gpu_mib - 1024 * 18) / gpu_mib)
    return mfs


def _reserved_by_gpu_class(gpu_mib: int, s: SGLangSettings, tp_pp: int, spec: str | None) -> float:
    """0.4.8-0.5.2: the MiB mem_fraction_static keeps back, by GPU class."""
    if gpu_mib < 35 * 1024:
        reserved = (2.8 + tp_pp / 10) * 1024
    elif gpu_mib < 90 * 1024:
        reserved = (9.5 + tp_pp / 2) * 1024
    elif gpu_mib < 160 * 1024:
        reserved = (12 + tp_pp / 2) * 1024
    else:
        reserved = 32 * 1024
    if spec:
        reserved += (6 if spec == "STANDALONE" else 2) * 1024
    if s.enable_dp_attention:
        reserved += 4 * 1024
    return reserved


def _reserved_by_activation(gpu_mib: int, s: SGLangSettings, v: Version, cps: int, bs: int, tp_pp: int,
                            spec: str | None, mla: bool) -> tuple[float, int]:
    """0.5.3+: the MiB kept back for the activations of one prefill chunk + CUDA graphs + parallel slack, and the
    number of prefill CUDA graph sizes counted in it."""
    reserved = 512 + max(cps if cps > 0 else s.max_prefill_tokens, 2048) * 1.5 + tp_pp / 8 * 1024
    if not s.disable_cuda_graph:
        reserved += bs * 2
    dp = s.dp_size if s.enable_dp_attention else 1
    if s.enable_dp_attention:
        reserved += bs * dp * 3 + (bs * dp * 1.5 if bs > 300 else 0)
    n_graphs = 0
    prefill_graph = (reached(v, "prefill_graph_default") and not s.disable_cuda_graph
                     and not s.disable_piecewise_cuda_graph and s.pp_size == 1 and not s.enable_dp_attention
                     and not spec)
    if prefill_graph:
        if mla:
            reserved += 1.5 * 1024  # "MLA backend overhead is much higher than expected with fa3"
        else:
            max_tokens = cps if s.max_total_tokens is None else min(cps, s.max_total_tokens)
            if "llama-2" in (s.model_path or "").lower():
                max_tokens = min(max_tokens, 4096)  # phases.py prefill_graph_tokens: Llama 2's 4,096 cap
            n_graphs = len(prefill_graph_sizes(max_tokens))
            reserved += n_graphs * 8
    if gpu_mib > 60 * 1024:
        reserved = max(reserved, 10 * 1024)
    if spec and not reached(v, "no_spec_reserve"):
        reserved += (6 if spec == "STANDALONE" else 0 if spec == "NGRAM" else
                     4 if reached(v, "prefill_graph_default") else 2) * 1024
    return reserved, n_graphs


def default_mem_fraction_static(gpu_mib: int | None, s: SGLangSettings, *, mla: bool = False,
                                version: str | None = None, vit: tuple[int | None, int | None] | None = None,
                                mm_off: bool = False) -> Defaults:
    """mem_fraction_static SGLang picks when it is not given, with the chunked prefill and CUDA graph sizes it
    is derived from. gpu_mib: the smallest GPU's memory.total as nvidia-smi prints it (utils
    get_nvgpu_memory_capacity), None when unknown. vit: a multimodal model's vision_config (num_hidden_layers,
    hidden_size), None for a text model; mm_off: its multimodal path off by default (see multimodal_off)."""
    d = _default_mfs(gpu_mib, s, mla, version)
    v = parse_version(version or s.engine_version)
    if vit is None or s.language_only:
        return d
    if not reached(v, "vlm_fraction"):
        return replace(d, mem_fraction_static=runner_fraction(d.mem_fraction_static, vit, v, mm_off=mm_off))
    return replace(d, mem_fraction_static=vlm_fraction(d.mem_fraction_static, vit, v))


def multimodal_off(architecture: str, v: Version) -> bool:
    """configs/model_config.py ModelConfig.__init__: `if enable_multimodal is None:` ... `mm_disabled_models`
    ("Multimodal is disabled for <model_type>. To enable it, set --enable-multimodal.", 0.4.6.post5 read):
    Llama4ForConditionalGeneration from 0.4.5.post1, Gemma3ForConditionalGeneration from 0.4.6 (ERAS mm_off_llama4,
    mm_off_gemma3). model_config.is_multimodal is then False, so ModelRunner.is_multimodal is too: neither its
    fraction cut (runner_fraction) nor its chunked-prefill switch (layout.py chunked_prefill_off) applies, though the
    vision tower is built and loaded up to 0.4.9 (models/mllama4.py Llama4ForConditionalGeneration.__init__; weights.py
    tower_rank_bytes). --enable-multimodal (settings enable_multimodal) turns it back on (kv.py cache_layout)."""
    if architecture == "llama4":
        return reached(v, "mm_off_llama4")
    if architecture == "gemma3":
        return reached(v, "mm_off_gemma3")
    return False


def runner_fraction(mfs: float, vit: tuple[int | None, int | None] | None, v: Version, *,
                    mm_off: bool = False) -> float:
    """Up to 0.4.8 ModelRunner.__init__ lowers whatever fraction is in force, given or default, for a multimodal model:
    `if self.is_multimodal: self.mem_fraction_static *= 0.90` (0.95 before 0.4.5; "Automatically reduce
    --mem-fraction-static to ... because this is a multimodal model."); from 0.4.9 only the default is lowered
    (server_args.py). mm_off: a checkpoint with a vision tower whose multimodal path SGLang turns off by default
    (multimodal_off): ModelRunner.is_multimodal is False, no cut (0.4.6.post5 model_runner.py
    model_specific_adjustment read)."""
    if vit is None or mm_off or reached(v, "vlm_fraction"):
        return mfs
    return mfs * (0.90 if reached(v, "vlm_runner_090") else 0.95)  # 0.4.3-0.4.4 read: x 0.95


AITER_FRACTION_CUT = 0.85


def aiter_fraction(mfs: float, backend: str | None, context_len: int, v: Version) -> float:
    """ROCm's aiter attention backend lowers whatever fraction is in force, given or default: `if attention_backend
    == "aiter": if model_config.context_len > 8192: mem_fraction_static *= 0.85` (0.4.7-0.5.4 model_runner.py
    ModelRunner.model_specific_adjustment; 0.5.5-0.5.22 server_args.py _handle_attention_backend_compatibility;
    0.5.23 arg_groups/attention_hook.py, which keeps a given fraction only with SGLANG_AITER_HONOR_EXPLICIT_MEM_FRACTION,
    off by default; 0.4.6.post5 has no such cut; wheels 0.4.7-0.4.10, 0.5.2-0.5.10, 0.5.14, 0.5.18, 0.5.23 read). It
    reserves room for the backend's own buffers (aiter_backend.py), which SGLang PR #18263 calls a longstanding
    hotfix. sglang#18262 (MI355X, 0.5.7 image, 262,144-token context): 0.911 x 0.85 = 0.774 reproduces its pool."""
    if backend == "aiter" and context_len > 8192 and reached(v, "aiter_fraction_cut"):
        return mfs * AITER_FRACTION_CUT
    return mfs


def vlm_fraction(mfs: float, vit: tuple[int | None, int | None], v: Version) -> float:
    """A multimodal model's default fraction, lowered "for the image processing": server_args.py 0.4.9
    `mem_fraction_static *= 0.90`; 0.4.10+ adjust_mem_fraction_for_vlm (0.5.20+ arg_groups/memory_hook.py): 0.95 x
    a factor of the ViT's size against ViT-L/14 (24 layers x 1024^2), 10 % less per 100 % more, within [0.8, 1.05];
    getattr defaults 24 layers and hidden 1024 where the vision_config lacks them."""
    if not reached(v, "vlm_by_vit"):
        return mfs * 0.90
    layers, hidden = vit[0] or 24, vit[1] or 1024
    ratio = layers * hidden ** 2 / (24 * 1024 ** 2)
    factor = max(0.8, min(1.05, 1.0 - 0.1 * (ratio - 1.0)))
    return mfs * 0.95 * factor


def dp_attention_chunk(cps: int, s: SGLangSettings, v: Version) -> int:
    """The chunked prefill size the scheduler runs with under DP attention: server_args.py divides it after the memory
    defaults are set from the undivided size ("DP attention is enabled. The chunked prefill size is adjusted to N to
    avoid MoE kernel issues."): `// 2` in 0.4.0-0.4.4 __post_init__ (dp_size is forced to tp_size there), `// dp_size`
    from 0.4.4.post1 (__post_init__ to 0.5.2, _handle_data_parallelism 0.5.3-0.5.19 after _handle_gpu_memory_settings;
    0.5.23 arg_groups/parallel_hook.py `// attn_dp_size`; 0.4.0, 0.4.3, 0.4.4, 0.4.4.post1, 0.4.5, 0.4.6.post5,
    0.5.3rc0, 0.5.3, 0.5.10, 0.5.23 read). A given --chunked-prefill-size is divided too; -1 stays -1."""
    if not s.enable_dp_attention or cps <= 0:
        return cps
    return cps // (s.dp_size if reached(v, "dp_attention_chunk_by_dp") else 2)


def _default_mfs(gpu_mib: int | None, s: SGLangSettings, mla: bool, version: str | None) -> Defaults:
    v = parse_version(version or s.engine_version)
    cps, bs = capacity_defaults(gpu_mib, s, v)
    tp_pp = s.tp_size * s.pp_size
    if not reached(v, "reserve_by_gpu_class"):
        return Defaults(_mfs_by_tp(gpu_mib, tp_pp, v), cps, bs, None, 0)
    if gpu_mib is None:
        return Defaults(0.95 if reached(v, "small_gpu_4096") else 0.88, cps, bs, None, 0)
    spec = (s.speculative_algorithm or "").upper() or None
    if not reached(v, "reserve_by_activation"):
        reserved = _reserved_by_gpu_class(gpu_mib, s, tp_pp, spec)
        return Defaults(round((gpu_mib - reserved) / gpu_mib, 3), cps, bs, reserved, 0)
    reserved, n_graphs = _reserved_by_activation(gpu_mib, s, v, cps, bs, tp_pp, spec, mla)
    return Defaults(round((gpu_mib - reserved) / gpu_mib, 3), cps, bs, reserved, n_graphs)


# ---------------------------------------------------------------------------------------------------------
# The attention backend SGLang picks when --attention-backend is not given


# utils.py is_fa3_default_architecture: the HF classes FA3 is the Hopper default for (0.4.6-0.5.7), by oomkit's
# architecture name -> the release that listed it. "llama" stands for LlamaForCausalLM (MistralForCausalLM, which
# oomkit also reads as "llama", was listed in 0.4.6 only); Gemma 3 only as Gemma3ForConditionalGeneration (the
# multimodal checkpoints), not the text-only Gemma3ForCausalLM.
FA3_DEFAULT_ARCHS = {"qwen2": "fa3_default", "llama4": "fa3_default", "llama": "fa3_default",
                     "gemma2": "fa3_default", "gemma3": "fa3_default", "qwen3": "fa3_qwen3",
                     "qwen3moe": "fa3_qwen3", "glm4moe": "fa3_glm4moe", "olmo2": "olmo2_backend"}


@dataclass(frozen=True)
class BackendModel:
    """What of the model SGLang's backend choice reads (configs/model_config.py, server_args.py)."""

    architecture: str  # oomkit's (llama.cpp) architecture name
    mla: bool  # model_config.attention_arch == MLA (use_mla_backend)
    nsa: bool = False  # DeepSeek V3.2 sparse attention (is_deepseek_nsa)
    deepseek_v3: bool = False  # DeepseekV3ForCausalLM (V3, R1, Kimi K2), not V2
    mla_heads_per_rank: int = 0  # model_config.get_num_kv_heads(tp) of an MLA model (aiter takes 16 or 128)
    multimodal: bool = False  # Gemma 3's ConditionalGeneration class (listed) vs the text-only CausalLM
    asymmetric_kv: bool = False  # model_config.has_asymmetric_kv: K and V heads of different widths (non-MLA)
    sinks: bool = False  # model_config.has_attention_sinks (gpt-oss)


@dataclass(frozen=True)
class BackendChoice:
    backend: str
    reason: str  # the rule, with the GPU it was read for


def gpu_platform(cc: tuple[int, int] | None, hip: bool) -> str:
    """hip | sm90 (Hopper) | sm100 (B200/B300/GB200: major 10) | sm<major><minor> | unknown."""
    if hip:
        return "hip"
    if cc is None:
        return "unknown"
    return "sm90" if cc[0] == 9 else "sm100" if cc[0] == 10 else f"sm{cc[0]}{cc[1]}"


def default_attention_backend(v: Version, cc: tuple[int, int] | None, hip: bool, m: BackendModel,
                              s: SGLangSettings) -> BackendChoice:
    """The backend SGLang runs when --attention-backend is not given: the model overrides of server_args.py
    _handle_model_specific_adjustments (0.5.20+: arg_groups/model_overrides/*.py), then the default of
    model_runner.py model_specific_adjustment (0.4.x-0.5.2), server_args.py _handle_attention_backend_compatibility
    (0.5.3-0.5.7), _get_default_attn_backend (0.5.8-0.5.18), arg_groups/model_override_base.py
    get_default_attn_backend (0.5.20+); FA3 falls back to triton with an fp8_e5m2 KV cache (0.4.6+). cc: the GPU's
    compute capability (None: unknown, taken as a CUDA GPU that is neither Hopper nor Blackwell); the CUDA toolkit is
    taken to be new enough (12.3 for Hopper, 12.8 for SM100)."""
    plat = gpu_platform(cc, hip)
    sm90, sm100 = plat == "sm90", plat == "sm100"
    spec = bool(s.speculative_algorithm)
    arch = m.architecture
    on = f"on {plat}" if plat != "unknown" else "(GPU unknown: taken as neither Hopper nor Blackwell)"

    def pick(backend: str, rule: str) -> BackendChoice:
        if backend == "fa3" and s.kv_cache_dtype == "fp8_e5m2" and reached(v, "fa3_default"):
            return BackendChoice("triton", f"{rule} {on}; FA3 takes no fp8_e5m2 KV cache -> triton")
        return BackendChoice(backend, f"{rule} {on}")

    # model overrides
    if m.nsa and reached(v, "nsa_backend"):
        return pick("nsa", "DeepSeek V3.2 (sparse attention): nsa")
    if m.deepseek_v3 and not m.nsa and sm100 and reached(v, "deepseek_trtllm_mla"):
        return pick("trtllm_mla", "DeepseekV3ForCausalLM: trtllm_mla on SM100")
    if arch == "gpt-oss" and reached(v, "gpt_oss_backend"):
        if sm100:
            return pick("trtllm_mha", "GptOssForCausalLM: trtllm_mha on SM100")
        if sm90:
            return pick("fa3", "GptOssForCausalLM: fa3 on Hopper")
        if hip and reached(v, "gpt_oss_aiter"):
            return pick("aiter", "GptOssForCausalLM: aiter on ROCm")
        return pick("triton", "GptOssForCausalLM: triton off Hopper and SM100")
    if arch == "llama4":
        if sm100 and reached(v, "llama4_sm100_trtllm"):
            return pick("trtllm_mha", "Llama 4: trtllm_mha on SM100")
        if reached(v, "llama4_by_platform"):
            return pick("fa3" if sm90 else "aiter" if hip else "triton", "Llama 4: by platform")
    if arch == "olmo2" and reached(v, "olmo2_backend"):
        if sm100:
            return pick("trtllm_mha", "Olmo2ForCausalLM: trtllm_mha on SM100")
        if not hip and (cc is None or cc >= (8, 0)):
            return pick("fa3", "Olmo2ForCausalLM: fa3 from SM80")
        return pick("triton", "Olmo2ForCausalLM: triton below SM80")
    if arch in ("qwen3next", "qwen35", "qwen35moe") and sm100 and reached(v, "qwen3next_sm100_triton"):
        return pick("triton", "Qwen3-Next / Qwen3.5 hybrid: triton on SM100")
    # the default
    if not reached(v, "fa3_default"):
        if m.mla:
            return pick("triton", "MLA before 0.4.6: triton")
        return pick("triton" if hip else "flashinfer", "MHA before 0.4.6: flashinfer where available (CUDA)")
    if m.mla:
        if sm90:
            return pick("fa3", "MLA: fa3 on Hopper")
        if sm100 and reached(v, "mla_sm100_flashinfer"):
            return pick("flashinfer", "MLA: flashinfer on SM100")
        if hip and reached(v, "mla_sm100_flashinfer"):
            aiter = m.mla_heads_per_rank in (16, 128)
            return pick("aiter" if aiter else "triton", f"MLA on ROCm: aiter for 16 or 128 heads a rank "
                                                        f"({m.mla_heads_per_rank})")
        return pick("triton", "MLA: triton off Hopper and SM100")
    listed = FA3_DEFAULT_ARCHS.get(arch)
    if arch == "gemma3" and not m.multimodal:
        listed = None  # Gemma3ForCausalLM
    if sm90 and (reached(v, "fa3_every_mha") or (listed is not None and reached(v, listed))):
        return pick("fa3", "MHA: fa3 on Hopper" + ("" if reached(v, "fa3_every_mha") else
                                                   " (is_fa3_default_architecture)"))
    if sm100 and reached(v, "trtllm_mha_default") and not spec:
        if m.asymmetric_kv and reached(v, "fa4_asymmetric_kv"):
            return pick("fa4", "MHA with unequal K/V head dims: fa4 on SM100")
        return pick("trtllm_mha", "MHA: trtllm_mha on SM100")
    if hip:
        return pick("aiter" if reached(v, "aiter_mha") else "triton", "MHA on ROCm")
    if m.sinks and reached(v, "sinks_not_flashinfer"):
        return pick("triton", "MHA with attention sinks: triton (FlashInfer takes none)")
    return pick("flashinfer", "MHA: flashinfer")


# ---- speculative decoding's parameters (server_args.py), read by the draft worker and the hybrid state pool ----

EAGLE_FAMILY = ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE")


def algorithm(s: SGLangSettings) -> str | None:
    return (s.speculative_algorithm or "").upper() or None


def speculative_params(spec: ModelSpec, s: SGLangSettings, v: Version) -> tuple[int, int, int]:
    """(num_steps, eagle_topk, num_draft_tokens) as server_args.py resolves them: the flags, else
    auto_choose_speculative_params by architecture (ERAS spec_auto_*), else the release's fixed defaults; with
    eagle_topk 1, num_draft_tokens = num_steps + 1."""
    steps, topk, tokens = s.speculative_num_steps, s.speculative_eagle_topk, s.speculative_num_draft_tokens
    if steps is None:
        if not reached(v, "spec_defaults_548"):
            auto = (5, 8, 64)
        elif not reached(v, "spec_auto_params") or spec.architecture in ("llama", "grok"):
            auto = (5, 4, 8)
        elif algorithm(s) == "STANDALONE":
            auto = (3, 1, 4)
        elif spec.architecture in ("deepseek2", "deepseek_v32"):
            auto = (3, 1, 4) if reached(v, "spec_auto_deepseek_314") else (5, 4, 8)
        elif spec.architecture == "glm4moe":
            auto = (3, 1, 4) if reached(v, "spec_auto_glm_314") else (5, 4, 8)
        else:
            auto = (3, 1, 4) if reached(v, "spec_auto_other_314") else (5, 4, 8)
        steps, topk, tokens = auto[0], topk or auto[1], tokens or auto[2]
    topk = topk or 1
    tokens = tokens or steps + 1
    if topk == 1 and reached(v, "spec_auto_params"):
        tokens = steps + 1  # "speculative_num_draft_tokens is adjusted to speculative_num_steps + 1"
    return steps, topk, tokens
