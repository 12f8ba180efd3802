"""Start-up held out, fourth set (tests/fixtures/engine_logs/startup_heldout4/): vLLM and SGLang start-up lines found in
files committed to public repositories, each fixture with its URL (repository, path and commit where the lines live in
a repository), the lines kept verbatim, the release and the command. None of these figures was used to fit a constant.
Each is held against oomkit's weights per rank (3 % of the printed load), KV budget (3 % of the GPU's memory), KV
tokens and start-up verdict. "before" is oomkit at 26ce13d, before this file; one rule came of it (below).

| log | release | GPUs | figure | printed | before | after (where it differs) |
|---|---|---|---|---|---|---|
| kthxo/distserving STEPS_RESULTS Qwen3-8B | 0.24.0 | RTX 5090 (32,607 MiB), 0.92, 32,768 | weights | 15.27 GiB | 15.27 (-0.0 %) |
| | | | KV tokens, a later launch (compile cache warm) | 95,936 | 95,744 (-0.2 %) |
| | | | KV tokens, the first launch (cold caches) | 89,040 | 95,744 (+7.5 %, +0.92 GiB: 2.9 % of the GPU) |
| | | | verdict | starts | starts |
| kthxo/distserving TP2_RESULTS Qwen3-32B | 0.24.0 | 2 x RTX PRO 6000 96 GB, TP2, no NVLink, 0.92, 32,768 | KV blocks | 28,559 | 28,586 (+0.1 %) |
| | | | CUDA graphs | 0.81 GiB | 1.32 (+0.5 % of the GPU) |
| kthxo/distserving EARLYCUTOFF Qwen3-8B | 0.24.0 | 2 x RTX PRO 6000 96 GB, TP2, 0.92, 40,960, 2048/256 | weights per rank | 7.64 GiB | 7.64 (-0.0 %) |
| | | | available KV | 78.97 GiB | 79.50 (+0.6 % of the GPU) |
| | | | KV tokens | 1,150,112 | 1,157,760 (+0.7 %) |
| kagaho Llama-3-70B-Instruct AWQ | 0.16.0 | 2 x L40S, TP2, defaults | weights per rank | 18.55 GiB | 18.52 (-0.2 %) |
| | | | available KV | 20.16 GiB | 20.11 (-0.1 % of the GPU) |
| | | | KV tokens | 132,128 | 131,792 (-0.3 %) |
| | | | CUDA graphs | 1.22 GiB | 1.28 (+0.1 % of the GPU) |
| kthxo/distserving serve script, Qwen3-8B | SGLang 0.5.10 | 2 x RTX 5090, TP2, no P2P, 0.85, 71,680 | native max_total_num_tokens | 265,651 | 271,571 (+2.2 %, 0.41 GiB: 1.3 % of the GPU) |
| kthxo/distserving H200 gate F1b, Qwen2.5-7B | SGLang 0.5.10 | H200 (143,771 MiB), TP1, 0.90, pool capped 262,246 | max_running_requests | 2,048 | 2,048 |
| | | | available_gpu_mem after the graphs | 108.23 GB | 108.41 GiB (+0.1 % of the GPU) |
| kthxo/distserving RAWLOG, Qwen2.5-7B | SGLang 0.5.10 | RTX PRO 6000 Max-Q, TP1, 0.90, natural pool; a 48 GB RTX PRO 5000 elsewhere in the machine | max_total_num_tokens | 1,320,086 | 1,331,847 (+0.9 %) |
| | | | weights | 14.32 GiB | 14.19 (-0.9 %) |
| | | | free before the weights | 94.25 GB | 94.79 GiB (+0.6 % of the GPU) |
| | | | chunked_prefill_size / capture list | 4,096 / [1 .. 32] | 8,192 / [1 .. 256] | 4,096 / [1 .. 32] |
| sglang#9162 DeepSeek-R1 NVFP4 | main 2025-08-13 (0.5.0rc0 era) | 4 x B200, TP4 | weights per rank | 94.50 GB | 94.13 GiB (-0.4 %) |
| | | | free before the weights | 175.34 GB | 176.56 GiB (+0.7 % of the GPU) |

The first Qwen3-8B launch: the author's own note puts the 6,896 tokens (0.95 GiB) between the two launches of one
command on the caches ("CUDA graph 캐시 여부에 따른 overhead 변동"); oomkit models a warm start, so the later launch
is the tight check and the first is held only to the KV band (as a share of the GPU's memory, where it is inside).

The DeepSeek-R1 NVFP4 weights depend on the checkpoint's exclude_modules, which the PR does not print: with the
attention projections left in bf16 (as ModelOpt's DeepSeek NVFP4 exports list them, "model.layers.N.self_attn*") the
load is 94.13 GiB; with only lm_head excluded it would be 89.39 (-5.4 %). The assumption is stated in NVFP4_DS below.
The Llama 3 70B AWQ checkpoint's quantization_config is not printed either: AutoAWQ's usual group size 128 (AWQ_G128).

The rule read in the wheel: SGLang's GPU-class defaults (server_args.py _handle_gpu_memory_settings: chunked_prefill_size,
cuda_graph_max_bs, hence the capture list, and the default mem_fraction_static) take gpu_mem from utils
get_device_memory_capacity -> get_nvgpu_memory_capacity, which runs `nvidia-smi --query-gpu=memory.total` without -i
and returns min() over every line (sglang 0.5.10 wheel, utils/common.py), so a smaller GPU elsewhere on the machine
sets them although CUDA_VISIBLE_DEVICES hides it. SGLangSettings.machine_gpu_mib gives that card (layout.py
capacity_mib); None keeps the GPUs given as the whole machine. The RAWLOG run printed 4,096-token chunks and captures
to 32 on a 96 GB card because the host's GPU0 is a 48 GB RTX PRO 5000.

No other figure missed the band on the first run and nothing is xfailed here. Not held: the RAWLOG run that started
while the previous server still held 18.3 GB (avail 75.91 GB, 1,009,662 tokens): oomkit's SGLang estimate does not take
memory held by another process.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oomkit.engines import sglang as sg
from oomkit.engines.vllm import ENGINE, VllmSettings
from oomkit.units import GiB, MiB
from tests.startup_heldout import first, fixture_loader, gpus
from tests.test_vllm_startup import spec_of

HERE = Path(__file__).parent / "fixtures" / "engine_logs" / "startup_heldout4"
fixture = fixture_loader(HERE)
WEIGHTS_LIMIT = 0.03  # of the printed load
KV_LIMIT = 0.03  # of the GPU's memory
TOKENS_LIMIT = 0.03

QWEN8_5090 = "qwen3-8b-rtx5090-v0.24.0-util092-32768-distserving"
DSR1_FP4 = "deepseek-r1-fp4-4x-b200-tp4-sglang-pr9162"
LLAMA70_AWQ = "llama-3-70b-instruct-awq-2x-l40s-tp2-v0.16.0-kagaho"
QWEN32_PRO = "qwen3-32b-2x-rtx-pro-6000-tp2-v0.24.0-util092-32768-distserving"
QWEN8_PRO = "qwen3-8b-2x-rtx-pro-6000-tp2-v0.24.0-util092-40960-distserving"
QWEN7_SGL_H200 = "qwen2.5-7b-h200-sglang-0.5.10-mem090-maxtok262246-distserving"
QWEN7_SGL_PRO = "qwen2.5-7b-rtx-pro-6000-maxq-sglang-0.5.10-mem090-natural-pool-distserving"
QWEN8_SGL_5090 = "qwen3-8b-2x-rtx5090-tp2-sglang-0.5.10-mem085-71680-distserving"

# ModelOpt NVFP4 (16-value blocks, FP8 scales) on the routed and shared experts and the dense MLPs; the attention
# projections and lm_head in bf16 (an assumption: the PR prints no hf_quant_config)
NVFP4_DS = {"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16, "kv_cache_quant_algo": "FP8",
            "exclude_modules": ["lm_head"] + [f"model.layers.{i}.self_attn*" for i in range(61)]}


# TechxGenus/Meta-Llama-3-70B-Instruct-AWQ: AutoAWQ's usual layout (an assumption: the README prints no
# quantization_config); vLLM 0.16.0 converts it to awq_marlin at load ("The model is convertible to awq_marlin")
AWQ_G128 = {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True, "version": "gemm"}


# ---------------------------------------------------------------------------------------------------------------
# kthxo/distserving: Qwen3-8B on one RTX 5090, vLLM 0.24.0


def _qwen8():
    fx = fixture(QWEN8_5090)
    s = VllmSettings(engine_version="0.24.0", max_model_len=32768, gpu_memory_utilization=0.92,
                     attention_backend="FLASH_ATTN", use_flashinfer_sampler=False)
    return ENGINE.estimate(spec_of("Qwen/Qwen3-8B"), gpus("RTX 5090", 1, fx["gpus"][0]["memory_mib"] * MiB), s)


def test_qwen3_8b_5090_weights():
    printed = fixture(QWEN8_5090)["printed"]["model_loading_gib"] * GiB
    got = first(_qwen8().engine_view, "model_loading_bytes")
    err = (got - printed) / printed
    assert abs(err) < WEIGHTS_LIMIT, f"{got / GiB:.2f} vs {printed / GiB:.2f} GiB ({err:+.2%})"


def test_qwen3_8b_5090_tokens_warm_launch():
    v = _qwen8().engine_view
    printed = fixture(QWEN8_5090)["printed"]
    assert v["block_size"] == printed["block_size"]
    err = (v["kv_cache_tokens"] - printed["kv_cache_tokens_later_launch"]) / printed["kv_cache_tokens_later_launch"]
    assert abs(err) < TOKENS_LIMIT, (v["kv_cache_tokens"], printed["kv_cache_tokens_later_launch"])


def test_qwen3_8b_5090_first_launch_inside_the_kv_band():
    # the cold first launch printed 6,896 tokens fewer: held as bytes over the GPU's memory
    est = _qwen8()
    v = est.engine_view
    per_token = v["kv_block_bytes"] // v["block_size"]
    err = (v["kv_cache_tokens"] - fixture(QWEN8_5090)["printed"]["kv_cache_tokens_first_launch"]) * per_token
    assert abs(err / est.devices[0].memory_bytes) < KV_LIMIT, (v["kv_cache_tokens"], err / GiB)


def test_qwen3_8b_5090_starts():
    v = _qwen8().engine_view
    assert not v.get("error") and not v.get("failed_phase"), (v.get("error"), v.get("failed_phase"))


def test_qwen3_32b_pro6000_tp2_blocks_and_graphs():
    # the same study's TP2 deployment on two 96 GB RTX PRO 6000 without NVLink: 28,559 blocks from cache_config_info
    fx = fixture(QWEN32_PRO)
    s = VllmSettings(engine_version="0.24.0", tensor_parallel_size=2, max_model_len=32768,
                     gpu_memory_utilization=0.92, use_flashinfer_sampler=False)
    est = ENGINE.estimate(spec_of("Qwen/Qwen3-32B"), gpus("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", 2), s)
    v, printed = est.engine_view, fx["printed"]
    assert v["block_size"] == printed["block_size"]
    err = (v["num_gpu_blocks"] - printed["num_gpu_blocks"]) / printed["num_gpu_blocks"]
    assert abs(err) < TOKENS_LIMIT, (v["num_gpu_blocks"], printed["num_gpu_blocks"])
    graphs = (first(v, "cudagraph_bytes") - printed["cudagraph_gib"] * GiB) / est.devices[0].memory_bytes
    assert abs(graphs) < KV_LIMIT, f"{graphs:+.2%} of the GPU"


def test_qwen3_8b_pro6000_tp2_weights_kv_tokens():
    # the study's early-cutoff deployment: Qwen3-8B TP2 on the same two RTX PRO 6000, batch knobs pinned 2048/256
    fx = fixture(QWEN8_PRO)
    s = VllmSettings(engine_version="0.24.0", tensor_parallel_size=2, max_model_len=40960, gpu_memory_utilization=0.92,
                     max_num_batched_tokens=2048, max_num_seqs=256, attention_backend="FLASH_ATTN",
                     use_flashinfer_sampler=False)
    est = ENGINE.estimate(spec_of("Qwen/Qwen3-8B"), gpus("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", 2), s)
    v, printed = est.engine_view, fx["printed"]
    w = first(v, "model_loading_bytes") / (printed["model_loading_gib"] * GiB) - 1
    assert abs(w) < WEIGHTS_LIMIT, f"weights {w:+.2%}"
    kv = (first(v, "available_kv_cache_bytes") - printed["available_kv_cache_gib"] * GiB) / est.devices[0].memory_bytes
    assert abs(kv) < KV_LIMIT, f"available KV {kv:+.2%} of the GPU"
    t = (v["kv_cache_tokens"] - printed["kv_cache_tokens"]) / printed["kv_cache_tokens"]
    assert abs(t) < TOKENS_LIMIT, (v["kv_cache_tokens"], printed["kv_cache_tokens"])


# ---------------------------------------------------------------------------------------------------------------
# kagaho: Llama 3 70B Instruct AWQ, TP2 on two L40S, vLLM 0.16.0 defaults


def _llama70():
    return ENGINE.estimate(spec_of("meta-llama/Meta-Llama-3-70B-Instruct", AWQ_G128), gpus("L40S", 2),
                           VllmSettings(engine_version="0.16.0", tensor_parallel_size=2))


def test_llama70_awq_weights_per_rank():
    printed = fixture(LLAMA70_AWQ)["printed"]["model_loading_gib"] * GiB
    got = first(_llama70().engine_view, "model_loading_bytes")
    err = (got - printed) / printed
    assert abs(err) < WEIGHTS_LIMIT, f"{got / GiB:.2f} vs {printed / GiB:.2f} GiB ({err:+.2%})"


def test_llama70_awq_available_kv():
    est = _llama70()
    printed = fixture(LLAMA70_AWQ)["printed"]["available_kv_cache_gib"] * GiB
    got = first(est.engine_view, "available_kv_cache_bytes")
    err = (got - printed) / est.devices[0].memory_bytes
    assert abs(err) < KV_LIMIT, f"{got / GiB:.2f} vs {printed / GiB:.2f} GiB ({err:+.2%} of the GPU)"


def test_llama70_awq_tokens_and_graphs():
    est = _llama70()
    v, printed = est.engine_view, fixture(LLAMA70_AWQ)["printed"]
    err = (v["kv_cache_tokens"] - printed["kv_cache_tokens"]) / printed["kv_cache_tokens"]
    assert abs(err) < TOKENS_LIMIT, (v["kv_cache_tokens"], printed["kv_cache_tokens"])
    graphs = (first(v, "cudagraph_bytes") - printed["cudagraph_gib"] * GiB) / est.devices[0].memory_bytes
    assert abs(graphs) < KV_LIMIT, f"{graphs:+.2%} of the GPU"
    assert not v.get("error") and not v.get("failed_phase")


# ---------------------------------------------------------------------------------------------------------------
# kthxo/distserving: Qwen3-8B, SGLang 0.5.10, TP2 on two RTX 5090 (the pool before --max-total-tokens pins it)


def test_qwen3_8b_sglang_5090_tp2_native_pool():
    est = sg.ENGINE.estimate(spec_of("Qwen/Qwen3-8B"), gpus("RTX 5090", 2), sg.SGLangSettings(
        tp_size=2, engine_version="0.5.10", mem_fraction_static=0.85, context_length=71680,
        attention_backend="triton", allow_overwrite_longer_context_len=True))
    printed = fixture(QWEN8_SGL_5090)["printed"]["native_max_total_num_tokens"]
    got = est.engine_view["max_total_num_tokens"]
    assert abs(got - printed) / printed < TOKENS_LIMIT, (got, printed)
    assert not est.engine_view.get("error")


def test_qwen25_7b_sglang_h200_capped_pool_free_memory():
    # the H200 gate run: the pool capped at 262,246 tokens, "available_gpu_mem=108.23 GB" after the graphs
    fx = fixture(QWEN7_SGL_H200)
    est = sg.ENGINE.estimate(spec_of("Qwen/Qwen2.5-7B-Instruct"), gpus("H200", 1, fx["gpus"][0]["memory_mib"] * MiB),
                             sg.SGLangSettings(engine_version="0.5.10", mem_fraction_static=0.90, context_length=71680,
                                               max_total_tokens=262246, attention_backend="triton",
                                               allow_overwrite_longer_context_len=True))
    v, printed = est.engine_view, fx["printed"]
    assert v["max_total_num_tokens"] == printed["max_total_num_tokens"]
    assert v["max_running_requests"] == printed["max_running_requests"]
    err = (v["available_gpu_mem_bytes"] - float(printed["available_gpu_mem_gb"]) * GiB) / est.devices[0].memory_bytes
    assert abs(err) < KV_LIMIT, f"{err:+.2%} of the GPU"


def _qwen7_pro(**kw):
    fx = fixture(QWEN7_SGL_PRO)
    return sg.ENGINE.estimate(spec_of("Qwen/Qwen2.5-7B-Instruct"), gpus(fx["gpus"][0]["name"], 1), sg.SGLangSettings(
        engine_version="0.5.10", mem_fraction_static=0.90, context_length=71680, max_running_requests=1024,
        attention_backend="triton", allow_overwrite_longer_context_len=True, **kw))


def test_qwen25_7b_sglang_pro6000_natural_pool():
    est, printed = _qwen7_pro(), fixture(QWEN7_SGL_PRO)["printed"]
    v = est.engine_view
    assert abs(v["max_total_num_tokens"] - printed["max_total_num_tokens"]) / printed["max_total_num_tokens"] \
        < TOKENS_LIMIT, (v["max_total_num_tokens"], printed["max_total_num_tokens"])
    w = est.devices[0].weights_bytes / (printed["weights_gib"] * GiB) - 1
    assert abs(w) < WEIGHTS_LIMIT, f"weights {w:+.2%}"
    begin = (v["load_weight_begin_avail_bytes"] - float(printed["load_weight_begin_avail_gb"]) * GiB) \
        / est.devices[0].memory_bytes
    assert abs(begin) < KV_LIMIT, f"free before the weights {begin:+.2%} of the GPU"


def test_sglang_defaults_follow_the_smallest_gpu_on_the_machine():
    # utils get_nvgpu_memory_capacity: min() over every GPU nvidia-smi lists, CUDA_VISIBLE_DEVICES notwithstanding
    # (0.5.10 wheel). The 96 GB card alone gives the 90-160 GiB class (8,192-token chunks, captures to 256); the
    # machine's 48 GB RTX PRO 5000 puts it in the 35-60 GiB class, as printed (any 35-60 GiB memory.total alike)
    printed = fixture(QWEN7_SGL_PRO)["printed"]
    alone = _qwen7_pro().engine_view
    assert (alone["chunked_prefill_size"], alone["cuda_graph_max_bs"]) == (8192, 256)
    v = _qwen7_pro(machine_gpu_mib=48 * 1024).engine_view
    assert v["chunked_prefill_size"] == printed["chunked_prefill_size"]
    assert v["max_prefill_tokens"] == printed["max_prefill_tokens"]
    assert v["cuda_graph_bs"] == printed["cuda_graph_bs"]
    # the pool does not move: with --mem-fraction-static given, neither default enters profile_max_num_token
    assert v["max_total_num_tokens"] == alone["max_total_num_tokens"]


# ---------------------------------------------------------------------------------------------------------------
# sglang#9162: DeepSeek-R1 NVFP4, TP4 on B200


def _dsr1():
    return sg.ENGINE.estimate(spec_of("deepseek-ai/DeepSeek-R1", NVFP4_DS), gpus("B200", 4),
                              sg.SGLangSettings(tp_size=4, engine_version="0.5.0rc0", quantization="modelopt_fp4"))


def test_deepseek_r1_nvfp4_weights_per_rank():
    printed = float(fixture(DSR1_FP4)["printed"]["weights_mem_gb"]) * GiB  # SGLang's "GB" is GiB
    got = _dsr1().devices[0].weights_bytes
    err = (got - printed) / printed
    assert abs(err) < WEIGHTS_LIMIT, f"{got / GiB:.2f} vs {printed / GiB:.2f} GiB ({err:+.2%})"


def test_deepseek_r1_nvfp4_free_before_the_weights():
    est = _dsr1()
    printed = float(fixture(DSR1_FP4)["printed"]["load_weight_begin_avail_gb"]) * GiB
    err = (est.engine_view["load_weight_begin_avail_bytes"] - printed) / est.devices[0].memory_bytes
    assert abs(err) < KV_LIMIT, f"{err:+.2%} of the GPU"


# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", sorted(HERE.glob("*.json")), ids=lambda p: p.stem)
def test_fixtures_are_cited(path):
    fx = json.loads(path.read_text(encoding="utf-8"))
    assert fx["source"].startswith("https://"), path.name
    assert fx["quoted"] and fx["command"] and fx["gpus"] and fx["engine_version"], path.name
    if "repo" in fx:
        assert len(fx["commit"]) == 40 and fx["path"] in fx["source"], path.name
