"""Held-out SGLang start-up logs, thirteenth set (tests/fixtures/engine_logs/sglang/heldout13/, each with its URL, the
lines kept verbatim and the release its date points to). No constant in oomkit was fitted on them; the printed figures
were recorded in the fixtures before oomkit was run, and the figures below are the logs', never oomkit's. "before" is
oomkit before this set's rule change, "after" with it.

| log | release | GPU | model | figure | printed | before | after |
|---|---|---|---|---|---|---|---|
| mystous/vllm_hybrid TSK_043 raw data, t1 GPU-only | 0.5.18 | 1x H100 80GB | Qwen3-30B-A3B-FP8, --attention-backend triton | mem_fraction_static (default) | 0.83 | 0.83 | same |
| | | | | weights | 29.15 GB | 29.04 GiB (-0.4 %) | same |
| | | | | free before / after the weights | 78.48 / 49.33 GB | 78.85 / 49.81 GiB (+0.5 / +0.6 % of the GPU) | same |
| | | | | KV tokens, end to end | 392,920 | 397,607 (+1.19 %) | same |
| | | | | KV tokens from the printed free memory | 392,920 | 393,089 (+0.04 %) | same |
| | | | | free after the pools | 12.70 GB | 12.78 GiB (+0.1 % of the GPU) | same |
| | | | | free before the prefill capture | 12.59 GB | 12.78 GiB (+0.24 % of the GPU) | 12.76 GiB (+0.21 %) |
| | | | | prefill graphs (breakable, 58 sizes to 8,192) | 1.71 GB | 1.67 GiB (-2.4 %) | same |
| | | | | free after the prefill graphs | 10.88 GB | 11.11 GiB (+0.3 % of the GPU) | same |
| | | | | decode graphs (36 sizes to 256) | 0.34 GB | 0.81 GiB (+138 %, strict xfail) | same; 0.328 (-3.5 %, engines/sglang/phases.py CG_KEPT_T211) |
| | | | | free after the decode graphs | 10.54 GB | 10.30 GiB (-0.3 % of the GPU) | same; 10.76 (+0.3 %) |
| | | | | starts (verdict) | yes | yes | same |
| sglang#11208 | 0.5.3rc0 era | 4x GB200 | GLM-4.5-Air-FP8, TP4, DP2 with DP attention, EP4 | chunked_prefill_size | 2,032 | 4,064 | 2,032 |
| | | | | K size of the printed pool (4 KV heads a rank) | 58.76 GB | 58.76 GiB | same |
| | | | | max_running_requests, context_len | 4,096, 131,072 | same | same |
| sglang-performance-test 项目A-v2-服务基线 | 0.5.13 (source) | 4x RTX 4090 | Qwen3-14B, TP4, --mem-fraction-static 0.80 | weights a rank | 7.08 GB | 7.08 GiB | same |
| | | | | free after the weights | 16.00 GB | 15.98 GiB (-0.1 % of the GPU) | same |
| | | | | KV tokens from the printed free memory | 298,447 | 298,424 (-0.01 %) | same |
| | | | | max_running_requests from the printed pool | 3,730 | 3,730 | same |
| | | | | KV tokens, end to end; chunked prefill, context | 298,447; 2,048, 40,960 | 298,069 (-0.13 %); same | same |
| | | | | free after start-up (available_gpu_mem) | 2.82 GB | 2.23 GiB (-2.4 % of the GPU) | same |
| | | | | starts (verdict) | yes | yes | same |
| Obsidian-Notebook 'SGLang PR - LFM2' | LFM2 branch (read as 0.5.9) | a 16 GB card | LFM2-700M (conv / attention hybrid), bench_one_batch | KV tokens from the printed free memory | 473,854 | 474,382 (+0.11 %) | same |
| | | | | conv-state slots (max_mamba_cache_size) from it | 85,292 | 85,387 (+0.11 %) | same |
| | | | | conv-state size (no SSM state) | 4.88 GB | 4.89 GiB | same |
| | | | | weights | 1.52 GB | 1.51 GiB (-0.6 %) | same |
| | | | | free before / after the weights / after the pools | 15.33 / 13.81 / 2.43 GB | 15.19 / 13.68 / 2.49 GiB (RTX 4080 taken) | same |
| | | | | KV tokens, end to end | 473,854 | 469,903 (-0.83 %) | same |
| dw-flyingw/GLM-SGLANG RESULTS-kv-tiering, baseline | 0.5.13.post1 | 8x H200 | GLM-5.2-FP8 (DSA sparse attention, MTP / EAGLE on), TP8, fp8_e4m3 KV | KV tokens, end to end | 540,800 | 554,496 (+2.5 %) | same |
| | | | | chunked prefill, max_running_requests, context_len | 8,192, 128, 524,288 | same | same |
| | | | | free after start-up (available_gpu_mem) | 8.69 GB | 15.90 GiB (+5.2 % of the GPU, strict xfail) | 12.25 GiB (+2.5 %); 10.73 (+1.1 %, FlashInfer all-reduce fusion workspaces) |

Count, the rows above: 28 of 31 before, 30 of 31 after (the Qwen3-30B decode graphs stayed a strict xfail); 31 of 31 with
the 0.5.11+ one-GPU decode rest (CG_POOL_T211 / CG_KEPT_T211).

The rules changed. 1. engines/sglang/settings.py dp_attention_chunk, applied in layout.py after the fraction: with
--enable-dp-attention SGLang divides chunked_prefill_size by dp_size (by 2 in 0.4.0-0.4.4) after the memory defaults
are set from the undivided size (server_args.py __post_init__ to 0.5.2, _handle_data_parallelism 0.5.3-0.5.19,
arg_groups/parallel_hook.py 0.5.23: "DP attention is enabled. The chunked prefill size is adjusted to ..."); oomkit
printed and ran the undivided size. sglang#11208 prints 2,032 with DP2, half of a given 4,064 (no GPU class defaults
to 4,064). The fraction oomkit derives is unchanged (it reads the undivided size, as SGLang does).
2. engines/sglang/phases.py eager_registry_bytes (ERAS eager_registry, eager_registry_pool_tokens): from 0.5.14 the
EagerRunner, built after the attention backend and before the first capture (model_runner_components/
cuda_graph_setup.py capture_cuda_graphs), allocates an input registry of 48 B a token (input_ids, positions,
out_cache_loc, 3 mrope rows, int64) and 16 B a request over max(max_total_num_tokens, chunked_prefill_size) tokens from
0.5.15 (runner/eager_runner.py; chunked_prefill_size alone in 0.5.14): 18 MiB of the 0.11 GiB the t1 log loses
between the pools and the prefill capture (12.70 -> 12.59); the rest (the runner's warm-up) is not traced.

Not held, and why: sglang#11208's pool end to end (its flags are not in the excerpt: with 0.5.3rc0's GPU-class default,
0.806 on a 186 GiB card with DP attention, oomkit gives 1,375,038 tokens, +2.7 %, and 33.60 GiB free after the pools
against 34.30; oomkit reads 0.5.3rc0 as 0.5.3, whose activation reserve gives 0.933 and 1,640,653 tokens: release
candidates are taken as their release); its capture (34.30 -> 33.74 GB, 0.56 GiB, at a cuda_graph_max_bs not in the
excerpt). The TSK_043 file's other SGLang runs load experts with kt-kernel (--kt-method AMXINT4, refused since set 10),
and its DeepSeek-R1-0528 GPU-only OOM is a vLLM 0.28.0 run. Between the pools and the prefill capture the t1 log loses
0.11 GiB (12.70 -> 12.59), of which oomkit now charges the EagerRunner's registry (18 MiB, rule 2 above).
3. engines/sglang/draft.py and phases.py dsa_graph_state: the next-n draft of a DeepSeek-sparse-attention model is
sized as SGLang 0.5.13.post1 builds it (configs/model_config.py _config_draft_model: DeepseekV3ForCausalLMNextN, still
DSA by is_deepseek_dsa): its layer's weights with eh_proj whole on every rank (models/deepseek_nextn.py: nn.Linear),
1.32 GiB a rank; a DSATokenToKVPool of that one layer over the target's tokens (model_runner_kv_cache_mixin.py
_init_pools, memory_pool_config shared), 656 + 132 B a token, 0.41 GiB; and, for every DeepseekSparseAttnBackend's
graphs, the token-wide state of dsa_backend.py: init_cuda_graph_state's int32 page_table of max_num_tokens rows x
(context_len + draft tokens) columns (384 x 524,291 for the target-verify graphs: 0.75 GiB, where oomkit priced a
page a row, 4 MiB; 128 rows for the draft's one step backend: 0.25 GiB), the compact page table each captured size
keeps (_transform_table_1_to_real: 0.13 + 0.04 GiB) and the indexer's float32 scores of the largest graph in the
shared graph pool (dsa_indexer.py fp8_paged_mqa_logits, 384 x 524,352: 0.75 GiB). Before the pools were sized
0.5.14 took nothing of the draft into the profile, so all of it comes out of the (1 - 0.85) rest: 15.90 -> 12.25 GiB
free at the scheduler's line against 8.69 (+2.5 % of the card, inside the band). 4. phases.py
flashinfer_fusion_bytes: 0.5.13.post1 turns FlashInfer's all-reduce fusion on for GlmMoeDsaForCausalLM on SM90 at
TP8 on one node (server_args.py _handle_model_specific_adjustments), and model_runner.py
_pre_initialize_flashinfer_allreduce_workspace builds two TRT-LLM workspaces (attention TP, MoE TP) after the pools
and before the capture, each 194 + 4 + 578 MiB by SGLang's own size mirror (flashinfer_comm_fusion.py
_flashinfer_trtllm_workspace_allocation_sizes: 2,048 tokens x hidden 6,144 x 8 ranks, bf16): 1.52 GiB a rank,
12.25 -> 10.73 GiB free against 8.69 (+1.1 % of the card). The 2.04 GiB left are not traced:
the scheduler reads that figure with empty_cache=False (managers/scheduler.py init_model_worker), so what PyTorch
caches after the eager warm-ups of both workers counts as used there; the per-graph rest of the draft's graphs is
not counted either.

Searched and not held (corpus "issues": DP attention, Qwen3-Next / Nemotron-H Mamba pools, DeepSeek-V3.2 NSA, gpt-oss
MXFP4, Qwen2.5-VL / Qwen3-VL, capture OOMs ("Capture cuda graph failed"); file search: "Mamba Cache is allocated.
max_mamba_cache_size", "KV Cache is allocated. dtype: torch.float8", "Capture target decode CUDA graph end", "Capture
target prefill CUDA graph end", "SWAKVPool mem usage", "quant=fp8, fmt=e4m3, avail mem="): held by an earlier set
(sglang#11716, #11830, #12978, #15909, #17392, #18263, #21348, #6027, #8538, #10088, #14365, #24453, OTel's Qwen3.8 and
Kimi files, xorbitsai#3481); no start-up figure in the stored text (sglang#8513's GLM-4.5-Air-FP8 at TP4 on 48 GB PCIe
cards is cut after 'Load weight begin. avail mem=46.21 GB'; sglang#16143; NVIDIA-NeMo/Nemotron's SGLang cookbooks, whose
outputs are stripped); not a CUDA GPU (Nemotron-3-Nano on Intel XPU, Ascend runs); a model oomkit does not describe
(Ling-3 / BailingMoeV3 on DGX Spark, GLM-5-Next on SM120, DeepSeek-V4 Pro on 8x H200); files that name no repository
or release (a DGX Spark Gemma-4-26B-A4B and Qwen3.8-27B-NVFP4 journal on a dev build '0.0.0.dev1+g5f55db35e', a
Nemotron-3-Nano-Omni NVFP4 test log on 4x GB10 under a custom image, an RTX PRO 6000 Qwen3-Coder-30B-AWQ benchmark
without its release or checkpoint). Five logs. None of them died after its KV allocation: the deaths found unheld are
GLM-5.2-FP8's 'Profile B' launches in the same RESULTS-kv-tiering.md (--enable-hisparse --disable-radix-cache at a
1,048,576-token context, CUDA-graph capture OOM at mem-fraction 0.88 and 0.86, then in the HiSparse indexer's graph
capture with --cuda-graph-max-bs 128), and HiSparse is not modelled; none is multimodal or FP4 (the NVFP4 logs found
name no release).
"""

from __future__ import annotations

from pathlib import Path

from oomkit.engines import sglang as sg
from oomkit.hardware.catalog import devices_for_names
from oomkit.model.resolve import resolve
from oomkit.units import GiB, MiB
from tests.sglang_heldout import (
    assert_avail_mem,
    assert_every_fixture_cites_its_thread,
    assert_weights,
    gb,
    line_value,
    load,
)
from tests.test_sglang_heldout_set3 import FP8_BLOCK
from tests.test_vllm_startup import spec_of

HERE = Path(__file__).parent / "fixtures" / "engine_logs" / "sglang" / "heldout13"
TOKENS_LIMIT = 0.03  # KV tokens, relative to the printed count (the earlier sets' band)
H100_MIB = 81559  # nvidia-smi memory.total of an H100 80GB HBM3


def fixture(stem: str) -> dict:
    return load(HERE, stem)


def test_every_fixture_cites_its_thread():
    assert_every_fixture_cites_its_thread(HERE)


# ---------------------------------------------------------------------------------------------------------
# mystous/vllm_hybrid TSK_043, t1 GPU-only: Qwen3-30B-A3B-FP8 on one H100, 0.5.18, prefill and decode graphs

Q30 = "qwen3-30b-a3b-fp8-h100-prefill-decode-graphs-0.5.18-vllm-hybrid"


def _q30_settings() -> sg.SGLangSettings:
    return sg.SGLangSettings(**fixture(Q30)["settings"], engine_version="0.5.18")


def _q30():
    return sg.ENGINE.estimate(spec_of("qwen3-30b-a3b", FP8_BLOCK), devices_for_names("H100"), _q30_settings())


def test_q30_defaults_match_the_printed_server_args():
    # 0.5.18 on an H100 at TP1: mem_fraction_static 0.83, chunked_prefill_size 8,192, decode graphs to 256; the
    # scheduler's max_running_requests 4,096 and the model's 40,960-token context
    p = fixture(Q30)["printed"]
    ev = _q30().engine_view
    assert f"{ev['mem_fraction_static']:.2f}" == p["mem_fraction_static"]
    assert ev["chunked_prefill_size"] == p["chunked_prefill_size"]
    assert ev["cuda_graph_max_bs"] == p["cuda_graph_max_bs"]
    assert ev["max_running_requests"] == p["max_running_requests"]
    assert ev["context_len"] == p["context_len"]


def test_q30_weights_and_free_memory_around_them():
    # block-FP8 experts and attention, bf16 embeddings and lm_head: 29.04 GiB against 29.15; free 78.85 / 49.81 GiB
    # before / after against 78.48 / 49.33
    p = fixture(Q30)["printed"]
    est = _q30()
    assert_weights(est, p["weights_mem_gb"])
    assert_avail_mem(est, "Load weight begin.", p["load_begin_avail_gb"])
    assert_avail_mem(est, "Load weight end.", p["weights_avail_after_gb"])


def test_q30_pool_from_the_printed_free_memory():
    # rest = 49.33 - 78.48 x 0.17: 393,089 tokens against 392,920 (+0.04 %); 48 layers x 4 KV heads x 128 x 2 B of K
    p = fixture(Q30)["printed"]
    after = gb(p["weights_avail_after_gb"])
    pool = sg.size_pool(spec_of("qwen3-30b-a3b", FP8_BLOCK), _q30_settings(), avail_after_load=after,
                        pre_load_free=gb(p["load_begin_avail_gb"]), gpu_mib=H100_MIB)
    assert abs(pool.max_total_num_tokens - p["kv_cache_tokens"]) / p["kv_cache_tokens"] < 0.002
    assert f"{p['kv_cache_tokens'] * 48 * 4 * 128 * 2 / GiB:.2f}" == p["k_size_gb"]


def test_q30_pool_end_to_end():
    # 397,607 tokens against 392,920 (+1.19 %); 12.78 GiB free after the pools against 12.70
    p = fixture(Q30)["printed"]
    est = _q30()
    got = est.engine_view["max_total_num_tokens"]
    assert abs(got - p["kv_cache_tokens"]) / p["kv_cache_tokens"] < TOKENS_LIMIT
    assert_avail_mem(est, "Memory pool end.", p["pool_end_avail_gb"])


def test_q30_prefill_graphs():
    # 58 breakable sizes to 8,192 at hidden 2,048 (0.5.15+ default on CUDA), with the decode graphs' logits buffer
    # (256 x 151,936 float32) allocated in this window: 1.67 GiB against 1.71 GB (-2.4 %); 11.11 GiB free after
    # against 10.88
    p = fixture(Q30)["printed"]
    est = _q30()
    assert "backend=breakable" in next(x for x in est.engine_view["log"].split("\n")
                                       if x.startswith("Capture target prefill CUDA graph begin."))
    got = line_value(est, "Capture target prefill CUDA graph end.", "mem usage=")
    assert abs(got - float(p["prefill_capture_mem_usage_gb"])) / float(p["prefill_capture_mem_usage_gb"]) < 0.05
    assert_avail_mem(est, "Capture target prefill CUDA graph end.", p["prefill_capture_avail_after_gb"])


def test_q30_free_memory_after_the_decode_graphs_and_the_verdict():
    # 10.76 GiB free after both captures against 10.54 (+0.3 % of the card; 10.30, -0.3 %, with the decode rest of the
    # torch 2.9 releases); the run starts, and so does oomkit's
    p = fixture(Q30)["printed"]
    est = _q30()
    assert_avail_mem(est, "Capture target decode CUDA graph end.", p["decode_capture_avail_after_gb"])
    assert est.fits


def test_q30_decode_graphs_after_the_prefill_ones():
    # 0.34 GB printed: 0.328 GiB (-3.5 %; was 0.81, +138 %, at the 0.408 MiB a graph and layer of the torch 2.9
    # releases). The progress lines put 0.11 GiB before the first graph (oomkit's index tables: 0.12), 0.13 GiB on the
    # largest (bs 256: its pool, 74 MiB of bf16 logits and CG_POOL_T211) and 0.09 GiB on the 34 graphs after it, read
    # as the kept share a graph and layer (engines/sglang/phases.py CG_KEPT_T211; the pool's constant is fitted on
    # this log among three)
    p = fixture(Q30)["printed"]
    got = line_value(_q30(), "Capture target decode CUDA graph end.", "mem usage=")
    assert abs(got - float(p["decode_capture_mem_usage_gb"])) / float(p["decode_capture_mem_usage_gb"]) < 0.05


# ---------------------------------------------------------------------------------------------------------
# sglang#11208: GLM-4.5-Air-FP8 on four GB200s, TP4 with DP attention over 2 groups and EP4

GLM = "glm-4.5-air-fp8-4xgb200-tp4-dp2-dp-attention-issue11208"


def _glm():
    s = sg.SGLangSettings(**fixture(GLM)["settings"], chunked_prefill_size=4064, engine_version="0.5.3rc0")
    return sg.ENGINE.estimate(spec_of("glm-4.5-air", FP8_BLOCK), devices_for_names("GB200") * 4, s)


def test_glm_chunked_prefill_size_divided_by_the_dp_groups():
    # server_args.py _handle_data_parallelism (0.5.3rc0): chunked_prefill_size // dp_size under DP attention, after
    # the memory defaults: a given 4,064 prints 2,032 (was 4,064)
    p = fixture(GLM)["printed"]
    ev = _glm().engine_view
    assert ev["chunked_prefill_size"] == p["chunked_prefill_size"]
    line = next(x for x in ev["log"].split("\n") if x.startswith("max_total_num_tokens="))
    assert f"chunked_prefill_size={p['chunked_prefill_size']}," in line


def test_glm_kv_cell_under_dp_attention():
    # each DP-attention rank holds the KV heads of the attention-TP group of 4 / 2 = 2 ranks: 8 / 2 = 4 heads, 46
    # layers, 128 wide, bf16: 47,104 B of K a token, 58.76 GiB for the printed 1,339,395 tokens
    p = fixture(GLM)["printed"]
    ev = _glm().engine_view
    assert f"{p['kv_cache_tokens'] * ev['cell_size_bytes'] / 2 / GiB:.2f}" == p["k_size_gb"] == p["v_size_gb"]
    assert ev["max_running_requests"] == p["max_running_requests"]
    assert ev["context_len"] == p["context_len"]


def test_dp_attention_chunk_by_release():
    # 0.4.0-0.4.4 halve it (dp_size forced to tp_size there), 0.4.4.post1+ divide by dp_size; -1 (chunking off) stays
    from oomkit.engines.sglang.settings import (  # test-local: the rule under test
        dp_attention_chunk,
        parse_version,
    )

    dp8 = sg.SGLangSettings(tp_size=8, dp_size=8, enable_dp_attention=True)
    assert dp_attention_chunk(16384, dp8, parse_version("0.4.6.post5")) == 2048
    assert dp_attention_chunk(8192, dp8, parse_version("0.4.3")) == 4096
    assert dp_attention_chunk(-1, dp8, parse_version("0.5.10")) == -1
    assert dp_attention_chunk(8192, sg.SGLangSettings(tp_size=8, dp_size=8), parse_version("0.5.10")) == 8192


# ---------------------------------------------------------------------------------------------------------
# sglang-performance-test: Qwen3-14B at TP4 on four RTX 4090s, --mem-fraction-static 0.80, 0.5.13

Q14 = "qwen3-14b-4xrtx4090-tp4-mfs080-sglang-performance-test"
RTX4090_MIB = 24564  # the file's nvidia-smi total a card


def _q14_settings() -> sg.SGLangSettings:
    return sg.SGLangSettings(**fixture(Q14)["settings"], engine_version="0.5.13")


def _q14():
    return sg.ENGINE.estimate(resolve("Qwen/Qwen3-14B"), devices_for_names("RTX 4090") * 4, _q14_settings())


def test_q14_weights_per_rank_and_free_memory_after_them():
    # a quarter of the layers' matrices, embeddings and lm_head split by vocabulary: 7.08 GiB as printed; 15.98 GiB
    # free after them against 16.00
    p = fixture(Q14)["printed"]
    est = _q14()
    assert_weights(est, p["weights_mem_gb"])
    assert_avail_mem(est, "Load weight end.", p["weights_avail_after_gb"])


def test_q14_pool_from_the_printed_free_memory():
    # rest = 16.00 - 23.08 x 0.20 (free before the weights = after + the printed load): 298,424 tokens against
    # 298,447 (-0.01 %); 2 KV heads a rank; max_running_requests = int(298,447 / 40,960 x 512) = 3,730
    p = fixture(Q14)["printed"]
    after = gb(p["weights_avail_after_gb"])
    s = _q14_settings()
    pool = sg.size_pool(resolve("Qwen/Qwen3-14B"), s, avail_after_load=after,
                        pre_load_free=after + gb(p["weights_mem_gb"]), gpu_mib=RTX4090_MIB)
    assert abs(pool.max_total_num_tokens - p["kv_cache_tokens"]) / p["kv_cache_tokens"] < 0.002
    assert f"{p['kv_cache_tokens'] * 40 * 2 * 128 * 2 / GiB:.2f}" == p["k_size_gb"]
    printed_pool = sg.size_pool(resolve("Qwen/Qwen3-14B"), s, kv_budget=p["kv_cache_tokens"] * pool.cell_bytes)
    running, _ = sg.max_running_requests(printed_pool, s, p["context_len"], sg.parse_version(s.engine_version))
    assert running == p["max_running_requests"]


def test_q14_end_to_end():
    # 298,069 tokens against 298,447 (-0.13 %); chunked prefill 2,048 (a 24 GiB card), context 40,960; 2.23 GiB free
    # after start-up against 2.82 (-2.4 % of the card: oomkit's 0.5.13 graphs, 0.39 decode + 0.89 piecewise, and the
    # backend's 0.53 come to 1.81 GiB where the log leaves 1.23); it starts, as the run did
    p = fixture(Q14)["printed"]
    est = _q14()
    ev = est.engine_view
    assert abs(ev["max_total_num_tokens"] - p["kv_cache_tokens"]) / p["kv_cache_tokens"] < TOKENS_LIMIT
    assert ev["chunked_prefill_size"] == p["chunked_prefill_size"]
    assert ev["context_len"] == p["context_len"]
    assert_avail_mem(est, "max_total_num_tokens=", p["available_gpu_mem_gb"], key="available_gpu_mem=")
    assert est.fits


# ---------------------------------------------------------------------------------------------------------
# LFM2-700M (short-convolution / attention hybrid) on a 16 GB card, bench_one_batch, the LFM2 branch (read as 0.5.9)

LFM2 = "lfm2-700m-16gb-hybrid-conv-pool-bench-one-batch-obsidian"
CARD16_MIB = 16376  # a 16 GB GeForce's nvidia-smi total (the log names no card)


def _lfm2_settings() -> sg.SGLangSettings:
    return sg.SGLangSettings(**fixture(LFM2)["settings"], engine_version="0.5.9")


def test_lfm2_pools_from_the_printed_free_memory():
    # the 0.5.3+ activation reserve on a 16 GiB card: 0.772; the rest split 0.9 : 1 between the conv states
    # (10 layers x 1,536 x 2 x 2 B = 61,440 B a slot) and the KV pool (6 attention layers x 8 heads x 64): 474,382
    # tokens against 473,854 (+0.11 %), 85,387 slots against 85,292 (+0.11 %), 4.89 GiB of conv state against 4.88
    p = fixture(LFM2)["printed"]
    spec = resolve("LiquidAI/LFM2-700M")
    pool = sg.size_pool(spec, _lfm2_settings(), avail_after_load=gb(p["weights_avail_after_gb"]),
                        pre_load_free=gb(p["load_begin_avail_gb"]), gpu_mib=CARD16_MIB)
    assert abs(pool.max_total_num_tokens - p["kv_cache_tokens"]) / p["kv_cache_tokens"] < 0.005
    assert abs(pool.max_mamba_cache_size - p["max_mamba_cache_size"]) / p["max_mamba_cache_size"] < 0.005
    assert abs(pool.conv_state_bytes - gb(p["conv_state_gb"])) / gb(p["conv_state_gb"]) < 0.005
    assert pool.ssm_state_bytes == 0
    assert f"{p['kv_cache_tokens'] * 6 * 8 * 64 * 2 / GiB:.2f}" == p["k_size_gb"]
    assert f"{p['max_mamba_cache_size'] * 61440 / GiB:.2f}" == p["conv_state_gb"]


def test_lfm2_end_to_end_on_a_16_gb_card():
    # on an RTX 4080 (16,376 MiB, the card class the free memory points to): weights 1.51 GiB against 1.52; free
    # 15.19 / 13.68 / 2.49 GiB before the weights / after them / after the pools against 15.33 / 13.81 / 2.43; 469,903
    # tokens against 473,854 (-0.83 %)
    p = fixture(LFM2)["printed"]
    est = sg.ENGINE.estimate(resolve("LiquidAI/LFM2-700M"), devices_for_names("RTX 4080"), _lfm2_settings())
    assert_weights(est, p["weights_mem_gb"])
    assert_avail_mem(est, "Load weight begin.", p["load_begin_avail_gb"])
    assert_avail_mem(est, "Load weight end.", p["weights_avail_after_gb"])
    assert_avail_mem(est, "Memory pool end.", p["pool_end_avail_gb"])
    got = est.engine_view["max_total_num_tokens"]
    assert abs(got - p["kv_cache_tokens"]) / p["kv_cache_tokens"] < TOKENS_LIMIT


# ---------------------------------------------------------------------------------------------------------
# dw-flyingw/GLM-SGLANG: GLM-5.2-FP8 (DSA sparse attention, MTP on) at TP8 on one 8x H200 node, 0.5.13.post1

G52 = "glm-5.2-fp8-8xh200-tp8-dsa-mtp-0.5.13.post1-glm-sglang"


def _g52():
    s = sg.SGLangSettings(**fixture(G52)["settings"], engine_version="0.5.13.post1")
    return sg.ENGINE.estimate(resolve("zai-org/GLM-5.2-FP8"), devices_for_names("H200") * 8, s)


def test_g52_pool_and_scheduler_figures():
    # the MLA latent + the DSA indexer's keys in fp8, pages of 64, at 0.85 of an H200 after 88.70 GiB of weights a
    # rank: 554,496 tokens against 540,800 (+2.5 %; the MTP draft's weights and pool are not the cause: 0.5.13.post1
    # loads them after the target's pool, out of the rest); TP attention (chunked prefill 8,192 undivided), 128
    # requests, 524,288
    p = fixture(G52)["printed"]
    ev = _g52().engine_view
    assert abs(ev["max_total_num_tokens"] - p["kv_cache_tokens"]) / p["kv_cache_tokens"] < TOKENS_LIMIT
    assert ev["max_total_num_tokens"] % 64 == 0 and p["kv_cache_tokens"] % 64 == 0
    assert ev["chunked_prefill_size"] == p["chunked_prefill_size"]
    assert ev["max_running_requests"] == p["max_running_requests"]
    assert ev["context_len"] == p["context_len"]


def test_g52_free_memory_after_start_up():
    # the next-n draft's weights (1.32 GiB), its one-layer DSA pool (0.41 GiB) and the DSA backends' token-wide graph
    # state (target 0.88 GiB of tables + 0.75 GiB of indexer scores, draft 0.29 GiB): 12.25 GiB free (was 15.90,
    # +5.2 %); FlashInfer's two all-reduce fusion workspaces (1.52 GiB a rank, below): 10.73 GiB against 8.69 (+1.1 %
    # of the card; 2.04 GiB not traced, see the module's note 4)
    p = fixture(G52)["printed"]
    est = _g52()
    assert_avail_mem(est, "max_total_num_tokens=", p["available_gpu_mem_gb"], key="available_gpu_mem=")
    ev = est.engine_view
    assert ev["flashinfer_fusion_bytes"] == 2 * (194 + 4 + 578) * MiB
    assert ev["draft_layers"] == 1
    # DSATokenToKVPool(layer_num=1): 512 fp8 + 512 / 128 x 4 B of scales + 64 bf16 rope, and the 128 + 4 B index key,
    # over size + page_size rows (mem_cache/memory_pool.py: the padding page)
    assert ev["draft_k_bytes"] == (ev["draft_max_total_num_tokens"] + 64) * (656 + 132)


def test_dsa_graph_state_by_release():
    # dsa_backend.py init_cuda_graph_state's page_table (int32, max_num_tokens x (context_len + draft tokens)), the
    # per-size compact tables (rows x ceil(columns / 64)) and the indexer's float32 scores of the largest graph
    from oomkit.engines.sglang.phases import dsa_graph_state  # test-local: the rule under test

    v = sg.parse_version
    sizes = (1, 2, 4, 8)
    pages = -(-(4096 + 3) // 64)
    tables, scores = dsa_graph_state(v("0.5.13.post1"), sizes, 3, 4096, 3, 64, speculative=True)
    assert tables == 4 * 8 * 3 * (4096 + 3) + 4 * pages * 15 * 3
    assert scores == 4 * 8 * 3 * pages * 64
    # 0.5.3: max_bs rows of context_len; 0.5.18 without speculative decoding: no wide table
    assert dsa_graph_state(v("0.5.3"), sizes, 1, 4096, 0, 64, speculative=False)[0] == 4 * 8 * 4096 + 4 * 64 * 15
    assert dsa_graph_state(v("0.5.18"), sizes, 1, 4096, 0, 64, speculative=False)[0] == 4 * 64 * 15
    assert dsa_graph_state(v("0.5.18"), sizes, 1, 4096, 3, 64, speculative=True, backends=2)[0] == \
        2 * (4 * 8 * (4096 + 3) + 4 * pages * 15)


def test_q30_free_memory_before_the_prefill_capture():
    # the EagerRunner's registry, 392,920 tokens x 48 B + 4,096 requests x 16 B = 18.0 MiB, between the pools and the
    # first capture: 12.76 GiB free against 12.59 (was 12.78)
    p = fixture(Q30)["printed"]
    est = _q30()
    assert_avail_mem(est, "Capture target prefill CUDA graph begin.", p["prefill_capture_begin_avail_gb"])
    # triton's backend init allocates nothing oomkit counts; the registry spans oomkit's own pool (397,607 tokens)
    ev = est.engine_view
    assert ev["attention_backend_init_bytes"] == ev["max_total_num_tokens"] * 48 + ev["max_running_requests"] * 16


def test_eager_registry_by_release():
    # 0.5.13: no EagerRunner; 0.5.14: the chunk (or the pool with chunking off); 0.5.15+: the larger of the two
    from oomkit.engines.sglang.phases import eager_registry_bytes  # test-local: the rule under test
    from oomkit.engines.sglang.settings import parse_version  # test-local: the rule under test

    kw = dict(max_total_tokens=392_920, chunked_prefill_size=8192, max_running=4096)
    assert eager_registry_bytes(parse_version("0.5.13"), **kw) == 0
    assert eager_registry_bytes(parse_version("0.5.14"), **kw) == 8192 * 48 + 4096 * 16
    assert eager_registry_bytes(parse_version("0.5.14"), **dict(kw, chunked_prefill_size=-1)) == 392_920 * 48 + 4096 * 16
    assert eager_registry_bytes(parse_version("0.5.18"), **kw) == 392_920 * 48 + 4096 * 16
    assert eager_registry_bytes(parse_version("0.5.18"), **dict(kw, max_total_tokens=1000)) == 8192 * 48 + 4096 * 16


def test_flashinfer_fusion_workspaces_by_rule():
    # flashinfer_comm_fusion.py _flashinfer_trtllm_workspace_allocation_sizes worked by hand for 8 ranks, 2,048 tokens
    # and GLM-5.2's hidden 6,144 in bf16: 8 x 2,048 x 6,144 x 2 B = 192 MiB -> 194 MiB with the 2,048 B pad on 2 MiB;
    # 8 x 256 x 4 B of flags -> 2 MiB -> 4 MiB; 3 x 192 MiB of Lamport buffers -> 578 MiB
    from oomkit.engines.sglang.phases import (  # test-local: the rule
        flashinfer_fusion_bytes,
        fusion_workspace_bytes,
    )

    assert fusion_workspace_bytes(8, 6144) == (194 + 4 + 578) * MiB
    assert fusion_workspace_bytes(1, 6144) == 0
    v = sg.parse_version
    glm = dict(model_type="glm_moe_dsa", hidden=6144)
    tp8 = sg.SGLangSettings(tp_size=8)
    both = 2 * (194 + 4 + 578) * MiB
    # 0.5.13.post1: on by default for the listed architectures on SM90 / SM10X, TP > 1, no DP attention, one node
    assert flashinfer_fusion_bytes(v("0.5.13.post1"), tp8, platform="sm90", **glm) == both
    assert flashinfer_fusion_bytes(v("0.5.13.post1"), tp8, platform="sm100", **glm) == both
    assert flashinfer_fusion_bytes(v("0.5.13"), tp8, platform="sm90", **glm) == 0  # not read before .post1
    assert flashinfer_fusion_bytes(v("0.5.13.post1"), tp8, platform="sm89", **glm) == 0
    assert flashinfer_fusion_bytes(v("0.5.13.post1"), sg.SGLangSettings(tp_size=1), platform="sm90", **glm) == 0
    assert flashinfer_fusion_bytes(v("0.5.13.post1"), sg.SGLangSettings(tp_size=8, nnodes=2), platform="sm90",
                                   **glm) == 0
    assert flashinfer_fusion_bytes(v("0.5.13.post1"), sg.SGLangSettings(tp_size=8, enable_dp_attention=True,
                                                                        dp_size=8), platform="sm90", **glm) == 0
    assert flashinfer_fusion_bytes(v("0.5.13.post1"), sg.SGLangSettings(
        tp_size=8, enforce_disable_flashinfer_allreduce_fusion=True), platform="sm90", **glm) == 0
    # an architecture off the list: only with --enable-flashinfer-allreduce-fusion
    assert flashinfer_fusion_bytes(v("0.5.13.post1"), tp8, platform="sm90", model_type="llama", hidden=6144) == 0
    assert flashinfer_fusion_bytes(v("0.5.13.post1"), sg.SGLangSettings(
        tp_size=8, enable_flashinfer_allreduce_fusion=True), platform="sm90", model_type="llama", hidden=6144) == both
    # 0.5.14-0.5.18: backend auto is trtllm on SM90 and mnnvl on SM10X (not modelled); 0.5.19+ not modelled
    assert flashinfer_fusion_bytes(v("0.5.14"), tp8, platform="sm90", **glm) == both
    assert flashinfer_fusion_bytes(v("0.5.14"), tp8, platform="sm100", **glm) == 0
    assert flashinfer_fusion_bytes(v("0.5.14"), sg.SGLangSettings(
        tp_size=8, flashinfer_allreduce_fusion_backend="trtllm"), platform="sm100", **glm) == both
    assert flashinfer_fusion_bytes(v("0.5.18"), tp8, platform="sm90", **glm) == both
    assert flashinfer_fusion_bytes(v("0.5.19"), tp8, platform="sm90", **glm) == 0
