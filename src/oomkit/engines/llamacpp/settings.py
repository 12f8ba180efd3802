"""llama.cpp's options by their own names, and the builds at which its allocation rules changed.

The reference tree is ggml-org/llama.cpp@0c1e57098 (the copy vendored by llama-cpp-python 0.3.36), cited as
`file:function`. Behaviour that changed between releases is selected by `engine_version` (a build tag such as
"b6500"; default the newest), see ERAS.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ...errors import OomkitError, SettingsError
from ...flags import INT32_MAX, Limit
from ...quant.ggml import KV_CACHE_TYPES
from ..versions import NEWEST_WORDS, Eras, llamacpp_build_on
from .lmstudio import as_runtime, known_range, runtime_build, runtime_name, runtime_version

# Build tags at which behaviour changed: the first build with each PR's merge commit. llama.cpp's build number is the
# commit's count on master (`git rev-list --count <commit>`; issue #23527 prints "version: 9272 (1d7ab2b94)" and
# 1d7ab2b94 is master's 9272nd commit), so each era is exact: "(commit, date, bNNNN)" names the merge commit as read
# in master's history (the ngxson/llama.cpp fork's copy of it, to b10587).
ERAS = Eras({
    # Flags plan and fit may write for a build (common/common.cpp gpt_params_parse of those builds, later
    # common/arg.cpp), each from the PR that added it (merge commit, date, its count on master):
    # PR #5021 "ggml : add Flash Attention" (9c67c277, 2024-04-30, b2771): -fa, which a quantized V cache needs
    # (-ctk / -ctv came earlier, PR #4309, b1619);
    # PR #15077 "llama : add --n-cpu-moe option" (ec428b02, 2025-08-05, b6089): --n-cpu-moe / --cpu-moe
    "flag_flash_attn": 2771,
    "flag_n_cpu_moe": 6089,
    # PR #7809 "build: rename main -> llama-cli, server -> llama-server" (1c641e6a, 2024-06-13, b3142): the
    # programs' names plan writes; before it `server` and `main`
    "binaries_renamed": 3142,
    # The model argument plan writes for a Hugging Face repo. PR #6234 "common : add HF arg helpers" (80bd33bc,
    # 2024-03-22, b2503) gave main -hfr / --hf-repo REPO with -hff / --hf-file FILE, the file required ("--hf-repo
    # requires either --hf-file or --model"); the server's own parser took them from PR #6192 (f482bb2e, 2024-03-23,
    # b2514), the era kept for both. PR #11195 "common : support tag-based --hf-repo like on ollama" (00b4c3da,
    # 2025-01-13, b4470) added the -hf alias and REPO:QUANT, the file picked by its quant; before b2514, -m FILE only
    "hf_repo_flag": 2514,
    "hf_tag": 4470,
    # PR #12801 "llama : DeepSeek V2/V3 MLA implementation" (daa422881, 2025-04-15, b5137): MLA GGUFs cache the
    # latent (K = kv_lora_rank + rope, V = kv_lora_rank)
    "mla_latent": 5137,
    # PR #13108 "context : allow cache-less context for embeddings" (6562e5a4d, 2025-05-08, b5312): encoders
    # (BERT-like embedding models) get no KV cache; before it every layer had one of n_ctx cells
    "encoder_no_kv": 5312,
    # PR #14363 "llama : add high-throughput mode" (225e7a143, 2025-07-16, b5913; issue #14847 bisects to b5912 ->
    # b5913): per-sequence KV streams. Before it every sequence shared one unified cache of n_ctx cells.
    "kv_streams": 5913,
    # PR #13194 "kv-cache : add SWA support" (e298d2fbd, 2025-05-20, b5429): sliding-window layers get their own
    # small cache (before: n_ctx everywhere)
    "iswa": 5429,
    # PR #13833 "llama : use n_swa + n_ubatch cells for SWA cache" (3600cc288, 2025-05-31, b5554): from PR #13194 to
    # it llama_kv_cache_unified_iswa sized the sliding-window cache n_swa*n_seq_max + n_batch (the logical batch)
    "swa_cells_ubatch": 5554,
    # PR #13676 "model : disable SWA for Phi models" (b44890df2, 2025-05-21, b5440): Phi-3 caches every layer in
    # full again; its windowed cache lived only in b5429-b5439
    "phi3_swa_off": 5440,
    # PR #15434 "llama: use FA + max. GPU layers by default" (e81b8e4b7, 2025-08-30, b6325): -fa takes on|off|auto,
    # default auto (llama_context: on where the device supports it); before it a bare -fa switch, default off
    # (common_params.flash_attn = false). The same PR offloads every layer by default: before it -ngl -1 left
    # llama_model_default_params' n_gpu_layers, 0 (999 in Metal builds) (weights.place_layers)
    "fa_auto": 6325,
    # PR #17046 "kv-cache : pad the cache size to 256 for performance" (16bcc1259, 2025-11-07, b6975): n_ctx always
    # padded to 256 (before: 256 with flash attention, 32 without)
    "pad_256_always": 6975,
    # PR #18148 "llama: offload output layer to GPU first" (57c1e0564, 2025-12-18, b7467): -ngl counts the output
    # layer first (before: the last ngl repeating layers)
    "ngl_output_first": 7467,
    # PR #19067 "kv-cache : support V-less cache" (d9c6ce46f, 2026-01-25, b7832): MLA caches K only, V = 0
    "mla_k_only": 7832,
    # PR #16736 "server : support unified cache across slots" (cd5e3b575, 2025-11-02, b6925): llama-server turns
    # its default one slot into 4 sharing one unified cache (tools/server/server.cpp main: "setting n_parallel = 4
    # and kv_unified = true" whenever -np was 1 without -kvu). Issue #17300 shows b7079 starting 4 slots unasked.
    # Until PR #17997 (7b1db3d3b, 2025-12-16, b7433: -np -1 "auto" the default, only it becomes 4 slots) a typed
    # -np 1 without -kvu was turned into the 4 slots too (programs.server_slots; Ollama's runner, which does not
    # run server.cpp main, loads one slot)
    "np_auto": 6925,
    # llama-context.cpp: "n_seq_max must be <= " LLAMA_MAX_SEQ (src/llama-cparams.h): 64 from PR #13706 (de2ef53a,
    # b5485, then LLAMA_MAX_PARALLEL_SEQUENCES), 256 from PR #15916 "bump max seq limit from 64 to 256" (e58174ce,
    # b6507); before b5485 no such check
    "max_seq_64": 5485,
    "max_seq_256": 6507,
    # PR #17017 "server : do not default to multiple slots with speculative decoding" (13b339bcd, 2025-11-05,
    # b6958): with a draft model (-md / -hfd: common_params::has_speculative) the one slot stays one
    "np_auto_no_draft": 6958,
    # PR #17997 "arg: clarify auto kvu/np being set on server" (7b1db3d3b, 2025-12-16, b7433): only -np -1, the new
    # default, becomes 4 unified slots; a typed -np 1 is one slot, with or without a draft
    "np_auto_asked": 7433,
    # PR #23861 "llama: limit max outputs of `llama_context`" (de6f727aa, 2026-06-01, b9460): the worst-case graph
    # reserves n_outputs_max logits rows (tools/server/server-context.cpp server_n_outputs_max: n_parallel x the
    # draft's rows) instead of the whole ubatch. PR #23988 (5dcb71166, b9464) only moved the count to
    # common_speculative_n_max and added the "n_outputs_max = N" log line; -md's draft-simple, auto-enabled until
    # it, was enabled after the count (common_speculative_init), so the rows are the same from b9460
    "outputs_max": 9460,
    # PR #23764 "llama: use f16 mask for FA to save VRAM" (031ddb2e0, 2026-05-29, b9410): with flash attention the
    # KQ mask input is F16 (before: F32 on the host, cast to F16 for the device)
    "kq_mask_f16": 9410,
    # PR #6083 "backend : offload large batches to GPU" (merged 2024-03-13; dated here by llamacpp_build_on):
    # ggml_backend_sched runs an op whose weight is in a host buffer on the first backend whose offload_op wants it
    # (ggml-cuda: a batch of at least 32), so the layers -ngl leaves on the CPU run on the GPU in the worst-case
    # ubatch graph (compute.compute_by_device)
    "pp_offload": llamacpp_build_on("2024-03-13"),
    # PR #14959 "llama : enable LLAMA_SET_ROWS=1 by default" (a4569c41f, 2025-08-02, b6071): the KV cache is stored
    # through ggml_set_rows with index inputs (llama_kv_cache::build_input_k_idxs / build_input_v_idxs); a transposed
    # V (no flash attention) takes n_embd_v_gqa x n_tokens int64 indices, a graph input on the host. Before it, a
    # ggml_cpy into views of the cache, no index inputs. NeoZhangJianyu/ci_log's SYCL CI (llama-2-7b Q4_0, 512-token
    # ubatch, no flash attention): SYCL_Host 16.01 MiB at b6070, 32.01 (the 16 MiB V indices) from b6093
    "set_rows": 6071,
    # PR #18898 "graph : utilize `ggml_build_forward_select()` to avoid reallocations" (557515be1, 2026-01-23, b7819),
    # on the select op of PR #18550 (365a3e8c3, b7774, which left build_inp_embd as it was): build_inp_embd makes
    # both inputs, the token ids and an n_embd_inp x n_tokens F32 embeddings input the token path never reads, and
    # picks one (src/llama-graph.cpp); the unread input is still a graph input, allocated on the host.
    # NeoZhangJianyu/ci_log's SYCL CI (llama-2-7b Q4_0, 512-token ubatch): SYCL_Host 16.01 MiB to b7818, 24.01 (the
    # 8 MiB row block more) from b7862
    "embd_input": 7819,
    # PR #6122 "llama : greatly reduce output buffer memory usage" (557410b8, 2024-03-26, b2540): build_inp_out_ids,
    # an n_outputs int32 graph input the last layer gathers its rows by (llama.cpp llm_build_context, later
    # src/llama-graph.cpp; built even when every token is an output from PR #14275, 812939a9, b5714, as before it)
    "out_ids": 2540,
    # GGML_KQ_MASK_PAD (ggml/include/ggml.h, ggml.h before the ggml/ split), the batch padding of the KQ mask, and
    # llama_context's rule that n_batch is at least that padding (src/llama-context.cpp llama_context::
    # llama_context, llama.cpp llama_new_context_with_model before it: "n_batch is less than GGML_KQ_MASK_PAD -
    # increasing to %d"; n_ubatch = min(n_batch, n_ubatch) after it): 32 from PR #5021 "ggml : add Flash
    # Attention" (9c67c277, 2024-04-30, b2771), 64 from PR #11583 "CUDA: use mma PTX instructions for
    # FlashAttention" (864a0b67, 2025-02-02, b4617), 1 from PR #17505 "CUDA: generalized (mma) FA" (2e1c9cd81,
    # 2025-12-03, b7256); PR #17910 "ggml : remove GGML_KQ_MASK_PAD constant" (4dff236a5, 2025-12-10, b7350) then
    # dropped the rule with the constant (kv.kq_mask_pad)
    "kq_mask_pad_32": 2771,
    "kq_mask_pad_64": 4617,
    "kq_mask_pad_1": 7256,
    # Before the iSWA caches (ERAS iswa) a model with sliding and full layers kept one cache and two KQ masks of
    # n_kv x GGML_PAD(n_tokens, GGML_KQ_MASK_PAD), KQ_mask and KQ_mask_swa (kv.pre_iswa_swa_mask): Gemma 2 from PR
    # #8227 "gemma2: add sliding window mask" (49122a87, 2024-07-01, b3274; llama.cpp build_gemma2 calls
    # build_inp_KQ_mask_swa beside build_inp_KQ_mask, phi3 only the windowed one), every such model from PR #12181
    # "llama : refactor llama_context, llama_kv_cache, llm_build_context" (e0dbec0b, 2025-03-13, b4881;
    # src/llama-graph.cpp build_attn_inp_kv_unified: self_kq_mask_swa when hparams.n_swa_pattern > 1)
    "gemma2_swa_mask": 3274,
    "swa_mask_pattern": 4881,
    # PR #21038 "llama : rotate activations for better quantization" (744c0c73, merged 2026-04-01; dated here by
    # llamacpp_build_on): a quantized K / V cache's Hadamard matrices, graph inputs (llama_kv_cache::
    # build_input_k_rot / build_input_v_rot)
    "attn_rot": llamacpp_build_on("2026-04-01"),
    # PR #16653 "llama: automatically set parameters not set by the user ..." (b1f3a6e5d, 2025-12-15, b7407; b7437
    # runs llama-fit-params, issue #18097): --fit, on by default in llama-server and llama-cli (common_fit_params);
    # before it the command's -c / -ngl are taken as given
    "params_fit": 7407,
    # PR #17548 "models : fix LFM2 tensors" (merged 2025-11-27, placed by its date): token_embd_norm is created as a
    # repeating-layer tensor of layer 0 and LFM2's final norm (named token_embd_norm in the file) as an output-layer
    # one (weights.embd_norm_device); before it both were input-layer tensors, on the CPU
    "embd_norm_layer0": llamacpp_build_on("2025-11-27"),
    # PR #22838 "spec : parallel drafting support" (68e7ea3ea, 2026-05-11, b9109): one draft context for all slots;
    # -cd / --ctx-size-draft / --spec-draft-ctx-size (the draft context's n_ctx, 0 = the main context's per-slot
    # size) removed from common/arg.cpp, so llama.cpp refuses it as an invalid argument from b9109
    "no_ctx_size_draft": 9109,
    # PR #22673 "llama + spec: MTP Support" (review 2026-05-13; "mainlined ... releases/tag/b9180", Anbeeld/beellama.cpp
    # issue #20, 2026-05-19): --spec-type draft-mtp runs the model's own next-n block as the draft; before it the
    # speculative type is unknown and the command is refused (common/arg.cpp common_speculative_type_from_name)
    "spec_mtp": 9180,
    # PR #23269 "llama : MTP clean-up" (ggml-org/llama.cpp@d14ce3dab, merged 2026-05-19; b9235 = its commit count,
    # the build number): --spec-draft-n-max's default 16 -> 3, and common_init_result no longer zeroes n_rs_seq on
    # a recurrent / hybrid model when --spec-type lists anything but draft-mtp ([TAG_RS_STATE_ROLLBACK_SUPPORT],
    # "recurrent state rollback is not compatible with '...' - disabling rollback support", PR #22673)
    "spec_mtp_cleanup": 9235,
    # PR #24593 "spec: support eagle3 for qwen3.5 & 3.6" (b14e3fb90, 2026-06-19, b9723): need_n_rs_seq counts
    # draft-eagle3 beside draft-mtp
    "rs_seq_eagle3": 9723,
    # PR #18950 "metal : enable FA for MLA heads" (271191906, b7781, the first release that carries it): ggml-metal's
    # supports_op takes FLASH_ATTN_EXT with a K head of 576, the MLA latent (before: "DeepSeek sizes // TODO:
    # disabled for now, until optmized", refused; compute.metal_fa_supported)
    "metal_fa_mla": 7781,
    # PR #20549 "metal : add FA specialization for HSK = 320, HSV = 256" (b8351, the first release
    # that carries it): ggml-metal's supports_op lists head size 320 for FLASH_ATTN_EXT (before: refused, the
    # op on the CPU; compute.metal_fa_supported)
    "metal_fa_hs320": 8351,
    # PR #22105 "spec : add DFlash support" (d1b34251b, 2026-06-28, b9831): brings draft-dflash, counted by
    # need_n_rs_seq from the start
    "rs_seq_dflash": 9831,
    # PR #24216 "CUDA: remove -sm row, refactor cuBLAS" (74976e1ae, 2026-07-06, b9890; issue #25594 prints "build
    # 9890 (74976e1ae)"): ggml-cuda (also HIP and MUSA, built from it) no longer exports
    # ggml_backend_split_buffer_type, and src/llama-model.cpp make_gpu_buft_list throws "device %s does not support
    # split buffers" for a -sm row device whose backend lacks it (before: its default buffer type, no error). SYCL
    # keeps its split buffer type (ggml-sycl.cpp ggml_backend_sycl_reg_get_proc_address); split.row_split_refusal
    "sm_row_split_buffers_required": 9890,
    # PR #14208 "llama : rework embeddings logic" (d3e64b9f, 2025-06-16, b5680): logits and embeddings together.
    # Before it src/llama-context.cpp llama_context::output_reserve kept no logits with --embeddings (has_logits =
    # !cparams.embeddings) and embedding rows only without pooling (has_embd = embeddings && pooling_type == NONE);
    # from it has_logits = true and has_embd = cparams.embeddings (b5920, llama.cpp#14829: 0.59 MiB, n_vocab +
    # n_embd floats, with --embedding)
    "embd_rework": 5680,
    # PR #7477 "llama : allow pooled embeddings on any model" (80ea089d, 2024-06-21, b3194): from it llama.cpp
    # llama_output_reserve keeps no logits with --embeddings (has_logits = !cparams.embeddings); before it
    # has_logits = cparams.causal_attn and has_embd = embeddings && (hparams.causal_attn || pooling NONE), so a
    # causal model with --embedding reserves both (ollama/ollama#3796, b2679: 0.50 MiB = (128256 + 4096) x 4 B)
    "pooled_embd_any_model": 3194,
    # PR #10026 "llama : refactor model loader with backend registry" (c5b0f4b5, 2024-10-30, b3990):
    # ggml-backend.cpp gives the mmap'd weights' buffer (ggml_backend_cpu_buffer_from_ptr) its own buffer type,
    # named "CPU_Mapped"; before it the buffer took ggml_backend_cpu_buffer_type()'s name, "CPU"
    # (llm_load_tensors: "CPU buffer size", ollama/ollama#3158 at b2356, #3796 at b2679)
    "cpu_mapped_name": 3990,
    # PR #4766 "llama : ggml-backend integration" (e7e4df03, 2024-01-12, b1843): -sm none|layer|row, default layer
    # (layers and their KV cache dealt out over the GPUs). Before it a CUDA / ROCm build cut every offloaded
    # matrix by rows over all GPUs (llama.cpp llm_load_tensors: GGML_BACKEND_GPU_SPLIT) and kept the rest of the
    # offloaded weights, the KV cache and the compute scratch on the main GPU (split.row_split_era)
    "split_layer": 1843,
    # PR #14217 "ubatch : new splitting logic" (4c9fdfbe, 2025-06-20, b5713): src/llama-graph.cpp build_inp_mean
    # makes the mean-pooling input n_tokens x ubatch.n_seqs_unq (before: n_tokens x n_tokens)
    "mean_by_seq": 5713,
    # PR #5328 "llama : support Mamba Selective State Space Models" (c2101a2e, 2024-03-08, b2366) to PR #10187
    # "server : remove hack for extra parallel slot" (b11f9ba9, 2024-11-06, b4038): examples/server/server.cpp
    # load_model "params.n_parallel += 1" before llama_init_from_gpt_params ("dedicate one sequence to the system
    # prompt", then "reserve one extra sequence (seq_id == 0)"), so the context holds -np + 1 sequences: one more
    # output row (llama_output_reserve(n_seq_max)) and one more recurrent-state cell (#9530, b3779, Qwen2.5-7B,
    # one slot: "CUDA_Host output buffer size = 1.16 MiB", two rows of 152064 logits)
    "server_extra_seq": 2366,
    "server_extra_seq_gone": 4038,
})
NEWEST = "b9999"
DEFAULT_GGUF_TYPE = "Q4_K_M"
FLT_PROPORTION = 1e30  # a -ts part: any finite float32 proportion (their sum must stay finite)


def misspelt_cache_type(value: str, padded: bool = False) -> bool:
    """A cache type written in another case (Q8_0): llama.cpp matches ggml's type names exactly (common/arg.cpp
    kv_cache_type_from_str: `if (ggml_type_name(type) == s)`), so it is no cache type to it. With padded, also one
    with white space around it (-ctk " q8_0", "q8_0\\t"): kv_cache_type_from_str does not trim either. Settings
    are held to the case alone: Ollama's runner settings carry OLLAMA_KV_CACHE_TYPE, which its envconfig trims."""
    if padded:
        return value not in KV_CACHE_TYPES and value.strip().lower() in KV_CACHE_TYPES
    return value not in KV_CACHE_TYPES and value.lower() in KV_CACHE_TYPES


@dataclass(frozen=True)
class LlamaCppSettings:
    """llama.cpp's options by their own names (common/common.h defaults; tools/server/server.cpp for -np)."""

    PROGRAM = "llama.cpp"  # class attributes, not fields (no annotation)
    # What llama.cpp accepts, held by flags.check_settings (flags and API arguments alike). int options are int32
    # (std::stoi); the context, batch and sequence counts are uint32 in llama_context_params, so negative ones wrap
    # to billions and fail there.
    LIMITS = {
        "n_ctx": Limit(0, INT32_MAX, "-c", allowed=f"0 (the model's trained context) or a positive count up to {INT32_MAX:,}"),
        "n_batch": Limit(1, INT32_MAX, "-b"),
        "n_ubatch": Limit(1, INT32_MAX, "-ub"),
        # llama-context.cpp: n_seq_max <= LLAMA_MAX_SEQ (256, the newest builds'; max_seq_limit by build); -1: the
        # server's auto (4)
        "n_parallel": Limit(1, 256, "-np", special=(-1,), allowed="-1 (auto) or 1 to 256 (LLAMA_MAX_SEQ)"),
        # -1: with -sm none, no GPU (src/llama.cpp llama_model_load clears the devices for main_gpu < 0)
        "main_gpu": Limit(0, 1023, "-mg", special=(-1,), allowed="-1 (with -sm none: no GPU) or 0 to 1023"),
        # common/arg.cpp --n-cpu-moe: "if (value < 0) throw std::invalid_argument"
        "n_cpu_moe": Limit(0, INT32_MAX, "-ncmoe"),
        "n_cpu_moe_draft": Limit(0, INT32_MAX, "-ncmoed"),
        "n_gpu_layers": Limit(0, 10**6, "-ngl", special=(-1,), allowed="-1 (auto), 'all', or 0 and up"),
        "n_gpu_layers_draft": Limit(0, 10**6, "-ngld", special=(-1,), allowed="-1 (auto), 'all', or 0 and up"),
        # -ts: proportions; std::stof takes nan, inf and negatives, which load_tensors turns into nonsense splits
        "tensor_split": Limit(0, FLT_PROPORTION, "-ts", allowed="proportions from 0 up (all 0: the default split)"),
        "fit_target": Limit(0, INT32_MAX, "-fitt"),
        "fit_ctx": Limit(0, 2**32 - 1, "-fitc"),
        "n_rs_seq": Limit(0, 256, ""),
        "n_ctx_draft": Limit(0, INT32_MAX, "-cd"),
        "host_memory": Limit(1 << 20, 1 << 60, "--ram", allowed="1 MiB to 1 EiB"),
    }

    program: str = "llama-server"  # llama-server | llama-cli | llama-cpp-python
    n_ctx: int = 0  # -c; 0 = the model's trained context
    # whether -c was typed (args.py): a typed -c 0 is the trained context in every build, where the builds between
    # PR #10136 and PR #16653 default to 4096 (programs.with_build_ctx). Not compared, as flash_attn_form
    n_ctx_typed: bool = field(default=False, compare=False)
    # -c left out under the old main / server names, whose 512 (programs._DEFAULTS) holds before PR #7675 only
    # (programs.with_build_ctx). Not compared, as n_ctx_typed
    n_ctx_old_name: bool = field(default=False, compare=False)
    n_batch: int = 2048  # -b
    n_ubatch: int = 512  # -ub
    n_parallel: int = -1  # -np; -1 = auto (llama-server: 4 slots, unified KV)
    # llama-server of ERAS server_extra_seq loads -np + 1 sequences; Ollama's runner (its own server.cpp copy, then
    # its Go runner) loads -np
    server_extra_seq: bool = True
    # the graph's KQ masks as llama.cpp makes them (False: Ollama's own engine, runner/ollamarunner, whose caches
    # each build their own mask, kvcache/causal.go buildMask: no KQ_mask_swa over a shared cache, kv.Context)
    llama_graph_masks: bool = True
    kv_unified: bool = False  # -kvu
    cache_type_k: str = "f16"  # -ctk
    cache_type_v: str = "f16"  # -ctv
    flash_attn: str = "auto"  # -fa on|off|auto; "auto" before ERAS fa_auto is that era's default, off
    # how -fa was typed on the command line (args.py): "switch" a bare -fa (builds before ERAS fa_auto), "value"
    # -fa on|off|auto (from it), "" not typed or given through the API; check_build refuses the switch from that
    # era, fa_form_note notes a value before it.
    # Not compared: the same settings typed either way are equal
    flash_attn_form: str = field(default="", compare=False)
    swa_full: bool = False  # --swa-full
    n_gpu_layers: int = -1  # -ngl; -1 = default (all layers and the output layer)
    split_mode: str = "layer"  # -sm
    tensor_split: tuple[float, ...] = ()  # -ts
    main_gpu: int = 0  # -mg
    no_kv_offload: bool = False  # -nkvo
    override_tensor: tuple[tuple[str, str], ...] = ()  # -ot PATTERN=BUFT
    n_cpu_moe: int = 0  # --n-cpu-moe N
    cpu_moe: bool = False  # --cpu-moe
    mmap: bool = True  # --no-mmap
    n_rs_seq: int = 0  # recurrent-state snapshots per sequence (MTP rollback)
    embeddings: bool = False  # --embeddings
    # --pooling none|mean|cls|last|rank; "" = unspecified, the GGUF's <arch>.pooling_type (llama_context: cparams.
    # pooling_type = hparams.pooling_type when LLAMA_POOLING_TYPE_UNSPECIFIED; none for a model without the key)
    pooling: str = ""
    backend: str = ""  # oomkit --backend cuda|rocm|metal|vulkan|sycl|opencl|cpu; "" = from the devices (backends.py)
    repack: bool = True  # --repack / -nr --no-repack: the CPU backend's extra buffer types (CPU_REPACK)
    no_host: bool = False  # --no-host: CPU weights skip the GPU's pinned host buffer (and may be repacked)
    cpu_isa: str = "avx2"  # the CPU's vector ISA, which decides the repacked types (repack.REPACK_TYPES)
    # whether every non-CPU backend of the build reports async compute and events (ggml_backend_dev_props caps),
    # which pipeline parallelism needs (compute.pipeline_parallel): False for a ggml-cuda (CUDA / HIP) build with
    # -DGGML_CUDA_NO_PEER_COPY=ON, or a build with an ACCEL backend such as BLAS (-DGGML_BLAS=ON). No llama.cpp flag
    async_events: bool = True
    # a build with the BLAS backend (-DGGML_BLAS=ON), an ACCEL device in every context: its products of host weights
    # and its own compute buffer, printed as CPU (compute.blas_compute_bytes); it reports no events (no pipeline
    # parallelism). No llama.cpp flag
    blas: bool = False
    mmproj: str | None = None  # --mmproj FILE: the multimodal projector (vision tower) llama-server loads
    no_mmproj: bool = False  # --no-mmproj: no projector even when -hf names a repo that has one
    mmproj_offload: bool = True  # --no-mmproj-offload: the projector on the CPU (mtmd_context_params.use_gpu false)
    # speculative decoding (common/common.h common_params_speculative): -md FILE, the draft model's -ngld and
    # -ctkd / -ctvd (F16 by default); --spec-type, e.g. draft-mtp (the target's own MTP layers). --fit counts them
    # from b9304 (fit.FIT_ERAS draft_margin).
    model_draft: str | None = None  # -md / --model-draft / --spec-draft-model
    hf_repo_draft: str | None = None  # -hfd / -hfrd / --hf-repo-draft / --spec-draft-hf REPO[:QUANT], like -hf
    device_draft: tuple[str, ...] = ()  # -devd / --device-draft / --spec-draft-device: the draft's devices (none = all)
    n_gpu_layers_draft: int = -1  # -ngld / --spec-draft-ngl; -1 = default (all)
    cache_type_k_draft: str = "f16"  # -ctkd / --spec-draft-type-k
    cache_type_v_draft: str = "f16"  # -ctvd / --spec-draft-type-v
    # -cd / --ctx-size-draft / --spec-draft-ctx-size N (builds before ERAS no_ctx_size_draft): the draft context's
    # n_ctx (common_params_speculative.n_ctx); 0 = the build's default
    n_ctx_draft: int = 0
    spec_type: tuple[str, ...] = ()  # --spec-type, comma-separated (the old names as they were renamed)
    spec_type_old_names: tuple[str, ...] = ()  # the names given in the spelling before b9131 (SPEC_TYPE_OLD_NAMES)
    # --spec-draft-n-max (older: --draft-max / --draft / --draft-n): the draft types' longest draft; None = the
    # build's default (SPEC_DRAFT_N_MAX). It sets the main context's logits rows (compute.reserved_outputs)
    spec_draft_n_max: int | None = None
    # the draft's own tensor overrides (common_params_speculative_draft.tensor_buft_overrides): -otd PATTERN=BUFT,
    # -cmoed / --cpu-moe-draft, -ncmoed N / --n-cpu-moe-draft N; the main command's -ot / -cmoe / -ncmoe are not its
    override_tensor_draft: tuple[tuple[str, str], ...] = ()
    cpu_moe_draft: bool = False
    n_cpu_moe_draft: int = 0
    bench_tests: tuple[tuple[str, int], ...] = ()  # llama-bench: (test name, n_ctx) per row (programs.py)
    fit: bool = True  # -fit on|off (common/common.h fit_params)
    fit_target: tuple[int, ...] = (1024,)  # -fitt MiB kept free per device, one value or one per device
    fit_ctx: int = 4096  # -fitc: the least context fit reduces to (a typed -c 0 means never reduce: not modelled)
    rpc: tuple[str, ...] = ()  # --rpc host:port,...: devices of rpc-server hosts, after the local ones
    device: tuple[str, ...] = ()  # -dev: the devices used, by name (none = all)
    # oomkit --ram: the host's total memory (ggml_backend_dev_memory of the CPU device), which --fit holds the host
    # buffers against when there is no GPU (common/fit.cpp, PR #21568); None: not known, no host fit
    host_memory: int | None = None
    engine_version: str = NEWEST
    # flags of the command that change memory in a way oomkit does not count, each with what it changes: said in
    # the estimate's warnings (engines/base.py unmodelled_note), never dropped
    unmodelled: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in ("cache_type_k", "cache_type_v", "cache_type_k_draft", "cache_type_v_draft"):
            value = getattr(self, name)
            # as -ctk Q8_0 is refused (args.py _cache_type): llama.cpp matches ggml's type names exactly
            if isinstance(value, str) and misspelt_cache_type(value):
                raise SettingsError(f"{name}={value!r}: llama.cpp matches ggml's cache type names exactly "
                                    f"(Unsupported cache type: {value}); give {value.lower()!r}")
        # `lms load` with --engine-version 2.44.0 / v2.44.0: LM Studio's llama.cpp runtime, not a llama.cpp build
        # (lmstudio.py); other programs take it only as lmstudio-2.44.0
        if self.program == "lmstudio" and isinstance(self.engine_version, str) and \
                (runtime := as_runtime(self.engine_version)) is not None:
            object.__setattr__(self, "engine_version", runtime)

    def to_dict(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        d["tensor_split"] = list(self.tensor_split)
        d["override_tensor"] = [f"{p}={b}" for p, b in self.override_tensor]
        d["override_tensor_draft"] = [f"{p}={b}" for p, b in self.override_tensor_draft]
        d["fit_target"], d["rpc"], d["device"] = list(self.fit_target), list(self.rpc), list(self.device)
        d["device_draft"] = list(self.device_draft)
        d["spec_type"] = list(self.spec_type)
        return d


# common/speculative.cpp common_speculative_type_from_name_map: the types that draft with the model's own next-n
# (MTP) layers; common_model_params_to_llama sets mparams.load_mtp when one is asked for (common/common.cpp)
MTP_SPEC_TYPES = ("draft-mtp", "draft-mtp-adaptive")
# every name that map takes (--spec-type, comma-separated); others are refused at parse
SPEC_TYPES = ("none", "draft-simple", "draft-eagle3", *MTP_SPEC_TYPES, "draft-dflash", "draft-dspark", "ngram-simple",
              "ngram-map-k", "ngram-map-k4v", "ngram-mod", "ngram-cache")


# common/common.h common_params_speculative_draft.n_max: 3 in ggml-org/llama.cpp@001d906a6 and at 88a3927 (PR #24508,
# 2026-06-12: "the default --spec-draft-n-max 3"); 16 at b9204 (unslothai/unsloth PR #5582, 2026-05-18: "--spec-draft-
# n-max N (default: 16)"). The change is PR #23269 (ERAS spec_mtp_cleanup, b9235: "args : update draft.n_max == 3"),
# before outputs_max, the first build that reads it for memory, so 3 stands for all of those
SPEC_DRAFT_N_MAX = 3
# common_speculative_n_max's other terms (common/common.h defaults): ngram-simple / -map-k / -map-k4v size_m 48,
# ngram-mod n_max 64, ngram-cache a fixed 8
SPEC_NGRAM_N_MAX = {"ngram-simple": 48, "ngram-map-k": 48, "ngram-map-k4v": 48, "ngram-mod": 64, "ngram-cache": 8}


def speculative_n_max(s: LlamaCppSettings) -> int:
    """common/speculative.cpp common_speculative_n_max (ggml-org/llama.cpp@001d906a6; added by PR #23988, merged
    2026-06-01): the longest draft over the --spec-type list, 0 without one. -md alone names no type since PR #23988
    ("remove the auto-enable of draft-simple"); the newest builds infer one from the draft file's metadata
    (common_speculative_types_from_gguf: a dflash file, or a next-n block = draft-mtp), which is not read here."""
    draft = max(0, SPEC_DRAFT_N_MAX if s.spec_draft_n_max is None else s.spec_draft_n_max)
    return max((draft if t.startswith("draft-") else SPEC_NGRAM_N_MAX.get(t, 0) for t in s.spec_type), default=0)


# common/common.h common_params_speculative::need_n_rs_seq: the draft types that verify by rolling the target's
# recurrent state back, so common_context_params_to_llama (common/common.cpp) sets cparams.n_rs_seq to the draft's
# n_max for them, by the build each joined (git log -L need_n_rs_seq of ggml-org/llama.cpp's master; the build
# number is the commit's count, e.g. 255582687 -> b9180): draft-mtp with the function itself (PR #22673, b9180),
# draft-eagle3 (PR #24593, b9723), draft-dflash (PR #22105, b9831), draft-dspark (PR #25173, 84075273c, merged
# 2026-07-28, b10163: after NEWEST, so placed there, NEWEST_PLACED). draft-mtp-adaptive is in the newest source's
# list but in no upstream build to b10587 (2026-08-22): placed at NEWEST. n-gram types and draft-simple: never.
RS_SEQ_SPEC_FIRST = {"draft-mtp": 9180, "draft-eagle3": 9723, "draft-dflash": 9831, "draft-dspark": int(NEWEST[1:]),
                     "draft-mtp-adaptive": int(NEWEST[1:])}
RS_SEQ_SPEC_TYPES = tuple(RS_SEQ_SPEC_FIRST)
# src/llama-arch.cpp llm_arch_supports_rs_rollback: the architectures whose recurrent state keeps n_rs_seq snapshots
# (llama_context::llama_context clamps any other's n_rs_seq to 0, "model does not support recurrent partial
# rollback; clamping to 0"), by the build each joined (git log -L of the function on master): qwen35 / qwen35moe with
# it (PR #22673, b9180). The others came after the builds oomkit dates by number and sit at NEWEST
# (NEWEST_PLACED): deepseek4 PR #25784 "DeepseekV4 MTP + DSpark" (596a5795b, 2026-08-02, b10228), nemotron_h /
# nemotron_h_moe PR #26623 (1692f9e50, 2026-08-14, b10431), lfm2 / lfm2moe PR #27383 (07822bddf, 2026-08-20,
# b10540), bailingmoe3 PR #27508 (2115b73d8, 2026-08-22, b10581), qwen4exp PR #28123 (0eadefeb, 2026-09-01, per
# issue #28019), kimi-k3 PR #28466 (opened 2026-09-06). All measured in llama-cpp-python 0.3.36's build
# (llama.cpp@0c1e57098: n_rs_seq kept); qwen3next, granitehybrid, falcon-h1, jamba, plamo2, kimi-linear and mamba
# are clamped to 0 there.
RS_ROLLBACK_FIRST = {"qwen35": 9180, "qwen35moe": 9180, "deepseek4": 9999, "nemotron_h": 9999, "nemotron_h_moe": 9999,
                     "qwen4exp": 9999, "kimi-k3": 9999, "lfm2": 9999, "lfm2moe": 9999, "bailingmoe3": 9999}
# --spec-draft-n-max's default (common_params_speculative_draft.n_max): 16 when PR #22673 brought n_rs_seq, 3 from
# PR #23269 (ERAS spec_mtp_cleanup, b9235; unslothai/unsloth PR #5582 shows 16 at b9204)
SPEC_DRAFT_N_MAX_OLD = 16


# The first build whose common_speculative_type_from_name_map knows each --spec-type name (read at each PR's merge
# commit on master): --spec-type itself came with PR #18471 (72d3b1898, 2026-01-28, b7864) under other names ("draft",
# "eagle3", "ngram_simple", ...); "draft-simple" and "draft-eagle3" from PR #22964 "spec : update CLI arguments for
# better consistency" (634275fbb, 2026-05-13, b9131); draft-mtp PR #22673 (255582687, b9180); draft-dflash PR #22105
# "spec : add DFlash support" (d1b34251b, 2026-06-28, b9831); draft-dspark PR #25173 (84075273c, 2026-07-28, b10163),
# after NEWEST and so accepted from NEWEST like its other rules (NEWEST_PLACED); draft-mtp-adaptive is in no upstream
# build to b10587, placed at NEWEST. An older build refuses a name it lacks ("unknown speculative decoding type").
SPEC_TYPE_FIRST = {"draft-simple": 9131, "draft-eagle3": 9131, "draft-mtp": 9180, "draft-dflash": 9831,
                   "draft-dspark": 10163, "draft-mtp-adaptive": int(NEWEST[1:])}
# The names PR #18471's common_speculative_type_from_name_map took until PR #22964 renamed them (b9131), as the
# names they became: {"none", "draft", "eagle3", "ngram_simple", "ngram_map_k", "ngram_map_k4v", "ngram_mod",
# "ngram_cache"} (common/speculative.cpp of those builds). ggml-org/llama.cpp PR #22546 (b9036, NVIDIA L4) ran
# `--spec-type ngram_cache,ngram_simple,ngram_map_k,ngram_map_k4v,ngram_mod`; from b9131 they are unknown names
SPEC_TYPE_OLD_NAMES = {"draft": "draft-simple", "eagle3": "draft-eagle3", "ngram_simple": "ngram-simple",
                       "ngram_map_k": "ngram-map-k", "ngram_map_k4v": "ngram-map-k4v", "ngram_mod": "ngram-mod",
                       "ngram_cache": "ngram-cache"}
SPEC_TYPE_RENAMED = 9131


def flash_attn_mode(s: LlamaCppSettings, build: int) -> str:
    """-fa as the build reads it: before ERAS fa_auto (PR #15434) there was no auto, flash attention was off unless
    the -fa switch was given (common_params.flash_attn = false), so oomkit's "auto" default means off there."""
    mode = s.flash_attn.lower()
    return "off" if mode == "auto" and not ERAS.reached(build, "fa_auto") else mode


def check_build(s: LlamaCppSettings) -> None:
    """What the build's command line refuses (common/arg.cpp of that build), in one line naming the build that
    changed it: a bare -fa from PR #15434 (its value is required: the next argument, or none), -cd from PR #22838,
    a --spec-type name before its build. -fa on|off|auto before PR #15434 is read by its meaning, with a note
    (fa_form_note): oomkit writes every build's commands that way."""
    build = build_number(s.engine_version)
    if s.flash_attn_form == "switch" and ERAS.reached(build, "fa_auto"):
        raise SettingsError(f"-fa: from b{ERAS['fa_auto']} (PR #15434) llama.cpp's -fa takes a value (on, off or "
                            "auto); a bare -fa is the switch of older builds")
    if s.n_ctx_draft and ERAS.reached(build, "no_ctx_size_draft"):
        raise SettingsError(f"-cd / --ctx-size-draft: removed in b{ERAS['no_ctx_size_draft']} (PR #22838); the "
                            "draft context takes the main context's size")
    for t in s.spec_type_old_names:
        if build >= SPEC_TYPE_RENAMED:
            raise SettingsError(f"--spec-type {t}: renamed {SPEC_TYPE_OLD_NAMES[t]} in b{SPEC_TYPE_RENAMED} (PR #22964); "
                                "later builds do not know it (unknown speculative decoding type)")
    for t in s.spec_type:
        if t in s.spec_type_old_names:
            continue
        if build < min(SPEC_TYPE_FIRST.get(t, 0), int(NEWEST[1:])):
            raise SettingsError(f"--spec-type {t}: llama.cpp builds before b{SPEC_TYPE_FIRST[t]} do not know it "
                                "(unknown speculative decoding type)")


def fa_form_note(s: LlamaCppSettings) -> str | None:
    """-fa with a value at a build that has only the bare switch: read by its meaning, said in a warning."""
    build = build_number(s.engine_version)
    if s.flash_attn_form == "value" and not ERAS.reached(build, "fa_auto"):
        on = flash_attn_mode(s, build) not in ("off", "disabled")
        return (f"-fa {s.flash_attn}: llama.cpp builds before b{ERAS['fa_auto']} (PR #15434) take a bare -fa "
                f"(flash attention on; off without it) and refuse a value; read as {'-fa' if on else 'no -fa'}")
    return None


def need_n_rs_seq(s: LlamaCppSettings, build: int) -> int:
    """What llama-server / llama-cli ask for as cparams.n_rs_seq (common_params_speculative::need_n_rs_seq): the
    draft's n_max when a --spec-type rolls the recurrent state back in that build (RS_SEQ_SPEC_FIRST), else 0; no
    such parameter before ERAS spec_mtp. Until ERAS spec_mtp_cleanup common_init_result zeroed it again when the
    list held any type but draft-mtp (on a recurrent or hybrid model, the only ones that keep snapshots)."""
    if not ERAS.reached(build, "spec_mtp") or not any(build >= RS_SEQ_SPEC_FIRST.get(t, build + 1)
                                                     for t in s.spec_type):
        return 0
    if not ERAS.reached(build, "spec_mtp_cleanup") and any(t not in ("none", "draft-mtp") for t in s.spec_type):
        return 0
    if s.spec_draft_n_max is not None:
        return max(0, s.spec_draft_n_max)
    return SPEC_DRAFT_N_MAX if ERAS.reached(build, "spec_mtp_cleanup") else SPEC_DRAFT_N_MAX_OLD


def n_rs_seq(architecture: str, s: LlamaCppSettings, build: int) -> int:
    """cparams.n_rs_seq as the context settles it (src/llama-context.cpp llama_context::llama_context): the
    binding's own n_rs_seq when given, else the server's need_n_rs_seq; 0 where the architecture cannot roll back."""
    first = RS_ROLLBACK_FIRST.get(architecture)
    if first is None or build < first:
        return 0
    return s.n_rs_seq or need_n_rs_seq(s, build)


def loads_mtp(s: LlamaCppSettings) -> bool:
    """Whether the main model loads its next-n (MTP) block: --spec-type draft-mtp (llama_model_params.load_mtp; without
    it the loaders mark the block TENSOR_SKIP). With -md too the block is loaded, though the draft model drafts."""
    return any(t in MTP_SPEC_TYPES for t in s.spec_type)


def max_seq_limit(build: int) -> int | None:
    """LLAMA_MAX_SEQ at this build (ERAS max_seq_64 / max_seq_256); None before llama.cpp checked it."""
    if ERAS.reached(build, "max_seq_256"):
        return 256
    return 64 if ERAS.reached(build, "max_seq_64") else None


def build_number(version: str | None) -> int:
    """A build tag ("b6500", "6500") -> its number. llama.cpp names builds, not dotted releases, so this is not
    versions.parse_release; "newest" and "latest" (as typed, lower case) mean NEWEST."""
    if not version or version in NEWEST_WORDS:
        return int(NEWEST[1:])
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", version.strip()):
        return llamacpp_build_on(version.strip())  # a date: the build released that day
    m = re.fullmatch(r"b?(\d{3,5})", version.strip())
    if not m:
        # LM Studio's llama.cpp runtime ("lmstudio-2.44.0"): the build it bundles (lmstudio.py); one no public
        # source dates reads as the newest, said by version_warning
        if (runtime := runtime_version(version)) is not None:
            return runtime_build(runtime) or int(NEWEST[1:])
        raise OomkitError(f"cannot read llama.cpp version {version!r}: expected a build tag such as b6500, a "
                          "date such as 2025-06-01 or an LM Studio llama.cpp runtime such as lmstudio-2.44.0")
    return int(m.group(1))


# Rules of the newest source that are placed at NEWEST because they came after the builds oomkit dates by number
# (fit.FIT_ERAS "fit_streams", "draft_joint"): the build each is first known in, and what it does. A build between
# NEWEST and that one gets the rule though it may predate it, so the warning names them.
NEWEST_PLACED = (
    (10584, "the fit counts every parallel stream's context (PR #27496, 2fb989b9e, b10584)"),
    (10636, "a draft model is fitted together with the main model at the same context (common_fit_extra_model, "
            "present by b10636)"),
    (10830, "the draft-mtp context caches only the next-n layers on deepseek2 / glm4moe / cohere2moe (PR #28630, "
            "opened 2026-09-09 against b10820)"),
    (10163, "--spec-type draft-dspark and its recurrent-state snapshots (PR #25173, b10163)"),
    (10212, "Qwen3.5 / 3.6's next-n (MTP) block left out of the model buffer unless draft-mtp loads it (PR #26296, "
            "b10212)"),
    (10228, "recurrent-state snapshots (n_rs_seq) on deepseek4 (PR #25784, b10228)"),
    (10431, "recurrent-state snapshots on nemotron_h (PR #26623, b10431)"),
    (10540, "recurrent-state snapshots on lfm2 (PR #27383, b10540)"),
    (10581, "recurrent-state snapshots on bailingmoe3 (PR #27508, b10581)"),
    (10830, "recurrent-state snapshots on qwen4exp (PR #28123, 2026-09-01, about b10729) and kimi-k3 (PR #28466, "
            "opened 2026-09-06)"),
    (10729, "ggml-cuda's allocation dependencies for the MoE fusions, a larger compute buffer for MoE models "
            "(PR #27301, PR #25952, reviewed to 2026-09-01, about b10729)"),
    (10872, "ggml-cuda's flash attention for K and V caches of different types and for q4_1 / q5_0 / q5_1 caches "
            "in default builds, so -fa auto keeps it on there (PR #28079, in review to 2026-09-09, about b10872)"),
)


def version_warning(version: str | None, runner: str | None = None) -> str | None:
    """A build newer than the newest whose rules are modelled runs under the newest rules, and says which of them
    it may predate. runner: the program that chose the build ("Ollama 0.32.15"), named as the one that runs it."""
    n = build_number(version)
    if (runtime := runtime_version(version)) is not None:
        if runtime_build(runtime) is None:
            return (f"LM Studio's llama.cpp runtime {runtime_name(runtime)} is not in oomkit's table of LM Studio "
                    f"runtimes ({known_range()}, engines/data/lmstudio_runtimes.json): the newest rules apply "
                    f"(llama.cpp {NEWEST})")
        runner = runner or f"LM Studio's llama.cpp runtime {runtime_name(runtime)}"
    if n > int(NEWEST[1:]):
        early = [what for first, what in NEWEST_PLACED if n < first]
        tail = (f"; assumed though b{n} may predate them: " + "; ".join(early)) if early else ""
        build = f"{runner} runs llama.cpp build b{n}, newer" if runner else f"llama.cpp build b{n} is newer"
        return f"{build} than the newest build oomkit models (up to {NEWEST}): its newest rules apply{tail}"
    return None
