"""Start-up held out, third set (tests/fixtures/engine_logs/vllm/heldout_startup3/, eleven public vLLM logs, each with its
URL, the lines kept verbatim, the release and the command): TP spread over nodes (Ray, one GPU a node), TP2 without
P2P, MXFP4 on Marlin, AWQ and multimodal checkpoints, MLA on B300, and hybrid (Gated DeltaNet) models whose start-up
stops after the KV pool is sized. None of these figures was used to fit a constant. Each is held against oomkit's
weights per rank (3 % of the printed load), KV budget (3 % of the GPU's memory), KV tokens and start-up verdict.
"before" is oomkit at the commit before the three rules below, "after" with them.

| log | release | GPUs | figure | printed | before | after |
|---|---|---|---|---|---|---|
| dennislee22 gpt-oss-120b | 0.10.1.1 | 4 x A100 80GB, TP4 over 4 nodes | weights | 17.22 GiB | 16.51 (-4.1 %) | 17.18 (-0.2 %) |
| | | | available KV | 45.32 GiB | 44.63 (-0.9 % of the GPU) | 45.85 (+0.7 %) |
| | | | tokens from the printed budget | 2,640,144 | 2,640,144 | 2,640,080 |
| dennislee22 Qwen2-7B | 0.10.1.1 | 2 x A100 40GB, TP2 over 2 nodes | weights | 7.12 GiB | 7.10 (-0.3 %) | same |
| | | | available KV | 11.03 GiB | 9.21 (-4.6 % of the GPU) | 11.03 (-0.0 %) |
| | | | tokens from the printed budget | 412,944 | 413,056 | same |
| dennislee22 Qwen2-7B | 0.10.1.1 | 2 x A100 80GB, TP2, no P2P | available KV (GPUs read without NVLink) | 31.83 GiB | 32.19 (+0.5 %) | same |
| vllm#16199 Gemma 3 27B AWQ | 0.8.3 V0 | 24 GB (21.99 GiB) | weights (group size 32 assumed) | 17.61 GiB | 17.23 (-2.2 %) | same |
| | | | KV tokens at 4,096 / 0.98 | 3,584 | 4,752 (+2.5 % of the GPU) | same |
| | | | verdict at 4,096 | refused at the KV check | starts | same: strict xfail |
| | | | verdict at 128 | dies capturing | starts | same: strict xfail |
| vllm#16570 Qwen2.5-VL-72B | 0.8.3 | 4 x A100-PCIE-40GB, TP4 | weights | 34.43 GiB | 34.22 (-0.6 %) | same |
| recipes#551 Qwen3.6-27B-FP8 | 0.22 | H100, 0.95 | Mamba blocks | 856 | 863 (+0.8 %) | same |
| | | | verdict | refused (1,024 > 856) | starts | refused, "at most 863" |
| vllm#49064 Qwen3.8-27B | 0.28.0 | H100, 0.90, 132,000 | verdict | refused (969 blocks) | starts (306) | refused |
| ... its second reproduction | 0.23.1 (ROCm) | 2 x RX 7900 XT, TP 2, 3.86 GiB printed | blocks / tokens / maximum length from the budget | 161 / 123,399 / 123,872 | not held | 161 / 123,399 / 123,872 (exact) |
| kaito#2319 Qwen3.6-27B | 0.25.1 | H100 | verdict | refused (614 blocks) | starts (339) | refused |
| recipes#831 Qwen3.8-27B BF16 at 0.95 | 0.27 range | RTX PRO 6000 Max-Q | verdict | refused (556) | starts (706) | refused |
| ... FP8 / NVFP4, defaults | | | verdict | refused (939 / 1,011) | starts (1,121 / 1,328) | same: strict xfail |
| myoceane.fr gpt-oss-20b | 0.19.0 | A100 80GB, 0.65, 131,072 | weights | 13.72 GiB | 13.68 (-0.3 %) | same |
| | | | available KV | 36.56 GiB | 36.87 (+0.4 % of the GPU) | same |
| Kimi-K2.5#34 | 0.18 (dev) | 8 x B300, TP8 | weights | 72.14 GiB | 70.87 (-1.8 %) | same |
| | | | KV tokens, end to end | 2,499,584 | 2,504,864 (+0.2 %) | same |

The rules, read in the wheels:
- weights.py _mxfp4_expert_bytes: Marlin pads each rank's slice of the experts' intermediate size to 128, not the
  whole (0.10.1 quantization/mxfp4.py Mxfp4MoEMethod.create_weights "round_up(intermediate_size_per_partition, 128)";
  0.19.0 fused_moe/oracle/mxfp4.py mxfp4_round_up_hidden_size_and_intermediate_size, MARLIN branch, on the
  per-partition size): gpt-oss-120b's 2,880 is 720 a rank at TP4, stored as 768.
- config.py tp_spans_nodes: a TP group with ranks on two machines has its custom all-reduce off ("Custom allreduce is
  disabled because this process group spans across nodes", custom_all_reduce.py 0.5.4-0.26; from 0.27 only
  multi-node NVLink keeps it) and NCCL's transport between the machines is the network one: the communicators are
  not NVLink's (profile.py NON_TORCH_TP) but the few-channel COMM_PCIE, and NCCL runs inside the graphs.
- layout.py mamba_blocks_error (settings.ERAS mamba_blocks_check, 0.20+): config/compilation.py
  resolve_cudagraph_mode_and_sizes refuses max_num_seqs above the KV cache's blocks for a model with Mamba layers
  and FULL graphs, after the KV cache is sized and reported, before its tensors are allocated; 0.19.0 caps the
  capture sizes instead (gpu_model_runner.py adjust_cudagraph_sizes_for_mamba_cache).

What stays wrong (strict xfails): the Gemma 3 AWQ V0 verdicts flip on 0.55 GiB (2.5 % of the GPU): the budget is
inside the band, the weights 0.38 GiB under the printed load (the checkpoint's quantization_config is not in the
thread), and the capture that died at 128 tokens needed more than the 2.1 GiB oomkit leaves after the KV cache, which
V0's capture rule (0.30 GiB) does not explain (as Gemma 2 on V0, vllm#7593 in test_startup_deaths_heldout.py). The
RTX PRO 6000 FP8 / NVFP4 block counts are 19 / 31 % above the printed ones with the recipe's command not reproduced
in the PR (Inferact's NVFP4 build loads 24.6 GiB by the recipe, 18.5 here as a uniform NVFP4). vllm#49064 and
kaito#2319 name no checkpoint precision: their verdicts hold, their block counts are not checked.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from oomkit.engines.vllm import CUDA_DRIVER_RESERVED, ENGINE, VllmSettings
from oomkit.hardware.catalog import lookup as gpu_lookup
from oomkit.hardware.catalog import with_facts
from oomkit.memory import Device
from oomkit.units import GiB
from tests.startup_heldout import died
from tests.test_vllm_startup import spec_of

HERE = Path(__file__).parent / "fixtures" / "engine_logs" / "vllm" / "heldout_startup3"
WEIGHTS_LIMIT = 0.03  # of the printed load
KV_LIMIT = 0.03  # of the GPU's memory
TOKENS_LIMIT = 0.03

GPTOSS = "gpt-oss-120b-4x-a100-80gb-tp4-4nodes-ray-v0.10.1.1-dennislee22"
QWEN7_NODES = "qwen2-7b-2x-a100-40gb-tp2-2nodes-ray-v0.10.1.1-dennislee22"
QWEN7_NOP2P = "qwen2-7b-2x-a100-80gb-tp2-one-node-no-p2p-v0.10.1.1-dennislee22"
GEMMA3_AWQ = "gemma-3-27b-it-int4-awq-24gb-v0.8.3-v0-kv-refused-then-capture-oom-issue16199"
QWEN25VL = "qwen2.5-vl-72b-4x-a100-pcie-40gb-tp4-v0.8.3-issue16570"
QWEN36_FP8 = "qwen3.6-27b-fp8-h100-util095-mamba-blocks-refused-recipes551"
QWEN38_H100 = "qwen3.8-27b-h100-v0.28.0-132000-util090-mamba-blocks-refused-issue49064"
QWEN36_KAITO = "qwen3.6-27b-h100-v0.25.1-default-mamba-blocks-refused-kaito2319"
QWEN38_PRO = "qwen3.8-27b-rtx-pro-6000-maxq-fp8-nvfp4-bf16-mamba-blocks-refused-recipes831"
KIMI = "kimi-k2.5-int4-8x-b300-tp8-v0.18-flashinfer-mla-kimik2.5-issue34"
GPTOSS20 = "gpt-oss-20b-a100-80gb-v0.19.0-util065-131072-myoceane"

A100_80 = "NVIDIA A100-SXM4-80GB"  # the form factor is not printed: both A100 80GB parts are NVLink parts in the catalog
A100_40 = "NVIDIA A100-PCIE-40GB"
H100 = "NVIDIA H100 80GB HBM3"
PRO6000 = "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition"

# block FP8 as Qwen's -FP8 checkpoints store it (config.json quantization_config)
FP8_BLOCK = {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic", "weight_block_size": [128, 128]}
# gaunernst/gemma-3-27b-it-int4-awq: AWQ int4 converted from Google's Q4_0 QAT checkpoint, whose blocks are 32 weights
# (an assumption: the thread prints no quantization_config)
AWQ_G32 = {"quant_method": "awq", "bits": 4, "group_size": 32, "zero_point": True, "version": "gemm"}
# ModelOpt NVFP4 (16-value blocks), lm_head and the vision tower left in bf16
NVFP4 = {"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16,
         "exclude_modules": ["lm_head", "model.visual*", "visual*"]}


def fixture(stem: str) -> dict:
    return json.loads((HERE / f"{stem}.json").read_text(encoding="utf-8"))


def gpus(name: str, n: int, total: int | None = None, nvlink: bool | None = None) -> tuple[Device, ...]:
    total = total or gpu_lookup(name).memory_bytes
    devs = tuple(with_facts(Device(f"CUDA{i}", name, total)) for i in range(n))
    return tuple(replace(d, nvlink=nvlink) for d in devs) if nvlink is not None else devs


def _first(view: dict, key: str) -> int:
    return next(iter(view[key].values()))


# stem -> (model, quantization_config, devices, settings)
def case(stem: str, **kw):
    if stem == GPTOSS:
        return spec_of("openai/gpt-oss-120b"), gpus(A100_80, 4), VllmSettings(
            engine_version="0.10.1.1", tensor_parallel_size=4, nnodes=4, gpu_memory_utilization=0.8,
            max_model_len=16384, use_flashinfer_sampler=True, **kw)
    if stem == QWEN7_NODES:
        return spec_of("Qwen/Qwen2-7B-Instruct"), gpus(A100_40, 2), VllmSettings(
            engine_version="0.10.1.1", tensor_parallel_size=2, nnodes=2, gpu_memory_utilization=0.5,
            max_model_len=16384, **kw)
    if stem == QWEN7_NOP2P:
        # two GPU pods on one node: "Custom allreduce is disabled because your platform lacks GPU P2P capability or
        # P2P test failed", so NCCL cannot take NVLink between them either (its P2P transport needs the same peer
        # access the test probes): the GPUs are given without NVLink
        return spec_of("Qwen/Qwen2-7B-Instruct"), gpus(A100_80, 2, nvlink=False), VllmSettings(
            engine_version="0.10.1.1", tensor_parallel_size=2, gpu_memory_utilization=0.5, max_model_len=16384,
            use_flashinfer_sampler=True, **kw)
    if stem == GEMMA3_AWQ:
        total = fixture(stem)["printed"]["total_gpu_memory_bytes"] + CUDA_DRIVER_RESERVED
        kw.setdefault("max_model_len", 4096)
        return spec_of("google/gemma-3-27b-it", AWQ_G32), gpus("NVIDIA A10", 1, total), VllmSettings(
            engine_version="0.8.3", use_v1=False, gpu_memory_utilization=0.98, dtype="float16", **kw)
    if stem == QWEN25VL:
        return spec_of("Qwen/Qwen2.5-VL-72B-Instruct"), gpus(A100_40, 4), VllmSettings(
            engine_version="0.8.3", tensor_parallel_size=4, gpu_memory_utilization=0.95, max_num_seqs=2,
            max_model_len=8192, **kw)
    if stem == QWEN36_FP8:
        return spec_of("Qwen/Qwen3.6-27B", FP8_BLOCK), gpus(H100, 1), VllmSettings(
            engine_version="0.22.0", gpu_memory_utilization=0.95, **kw)
    if stem == QWEN38_H100:
        return spec_of("Qwen/Qwen3.8-27B"), gpus(H100, 1), VllmSettings(
            engine_version="0.28.0", max_model_len=132000, gpu_memory_utilization=0.90, **kw)
    if stem == QWEN36_KAITO:
        return spec_of("Qwen/Qwen3.6-27B"), gpus(H100, 1), VllmSettings(engine_version="0.25.1", **kw)
    if stem == GPTOSS20:
        return spec_of("openai/gpt-oss-20b"), gpus(A100_80, 1), VllmSettings(
            engine_version="0.19.0", max_model_len=131072, gpu_memory_utilization=0.65, **kw)
    if stem == KIMI:
        return spec_of("moonshotai/Kimi-K2.5"), gpus("NVIDIA B300", 8), VllmSettings(
            engine_version="0.18.0", tensor_parallel_size=8, **kw)
    raise KeyError(stem)


def estimate(stem: str, **kw):
    model, devices, settings = case(stem, **kw)
    return ENGINE.estimate(model, devices, settings)


def verdict(est) -> str:
    if phase := died(est):
        return phase
    error = est.engine_view.get("error") or ""
    if "exceeds available Mamba cache blocks" in error:  # config/compilation.py resolve_cudagraph_mode_and_sizes
        return "refused before the capture (Mamba blocks)"
    if "KV cache is needed" in error or "maximum number of tokens that can be stored in KV cache" in error:
        return "refused at the KV cache"
    if error:
        return "refused: " + error[:80]
    return "starts"


# ---------------------------------------------------------------------------------------------------------------
# weights per rank


@pytest.mark.parametrize("stem", [GPTOSS, QWEN7_NODES, QWEN7_NOP2P, GEMMA3_AWQ, QWEN25VL, KIMI, GPTOSS20])
def test_weights_per_rank(stem):
    printed = fixture(stem)["printed"]["model_loading_bytes"]
    got = _first(estimate(stem).engine_view, "model_loading_bytes")
    err = (got - printed) / printed
    assert abs(err) < WEIGHTS_LIMIT, f"{got / GiB:.2f} vs {printed / GiB:.2f} GiB ({err:+.2%})"


# ---------------------------------------------------------------------------------------------------------------
# the KV budget, as a share of the GPU's memory, and the tokens the printed budget holds


@pytest.mark.parametrize("stem", [GPTOSS, QWEN7_NODES, QWEN7_NOP2P, GPTOSS20])
def test_available_kv(stem):
    printed = fixture(stem)["printed"]["available_kv_cache_bytes"]
    est = estimate(stem)
    got = _first(est.engine_view, "available_kv_cache_bytes")
    err = (got - printed) / est.devices[0].memory_bytes
    assert abs(err) < KV_LIMIT, f"{got / GiB:.2f} vs {printed / GiB:.2f} GiB ({err:+.2%} of the GPU)"


@pytest.mark.parametrize("stem", [GPTOSS, QWEN7_NODES, QWEN7_NOP2P])
def test_tokens_from_the_printed_budget(stem):
    printed = fixture(stem)["printed"]
    v = estimate(stem, kv_cache_memory_bytes=printed["available_kv_cache_bytes"]).engine_view
    err = (v["kv_cache_tokens"] - printed["kv_cache_tokens"]) / printed["kv_cache_tokens"]
    assert abs(err) < TOKENS_LIMIT, (v["kv_cache_tokens"], printed["kv_cache_tokens"])


def test_kimi_tokens_end_to_end():
    # FLASHINFER_MLA's 32-token blocks on SM 10.x; the budget is oomkit's own (the excerpt prints no budget)
    printed = fixture(KIMI)["printed"]
    v = estimate(KIMI).engine_view
    assert v["block_size"] == printed["block_size"]
    err = (v["kv_cache_tokens"] - printed["kv_cache_tokens"]) / printed["kv_cache_tokens"]
    assert abs(err) < TOKENS_LIMIT, (v["kv_cache_tokens"], printed["kv_cache_tokens"])


# ---------------------------------------------------------------------------------------------------------------
# start-up verdicts


@pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
    "starts: 4,752 tokens (297 blocks) against the 3,584 printed, 0.55 GiB (2.5 % of the 21.99 GiB GPU) above the "
    "printed budget, inside the band; 0.38 GiB of it is the weights (17.23 GiB as AWQ int4 with group size 32, 17.61 "
    "printed: the checkpoint's quantization_config is not in the thread), the rest V0's profile peak"))
def test_gemma3_awq_4096_is_refused_at_the_kv_check():
    run = fixture(GEMMA3_AWQ)["runs"]["4096"]
    est = estimate(GEMMA3_AWQ, max_model_len=run["max_model_len"])
    assert verdict(est) == run["verdict"], (verdict(est), est.engine_view.get("kv_cache_tokens"))


def test_gemma3_awq_kv_tokens_at_4096():
    # V0's "maximum number of tokens that can be stored in KV cache (3584)": as a share of the GPU's memory
    est = estimate(GEMMA3_AWQ)
    v = est.engine_view
    per_token = v["kv_block_bytes"] // v["block_size"]
    err = (v["kv_cache_tokens"] - fixture(GEMMA3_AWQ)["printed"]["kv_cache_tokens"]) * per_token
    assert abs(err / est.devices[0].memory_bytes) < KV_LIMIT, (v["kv_cache_tokens"], err / GiB)


@pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
    "starts: V0 0.8.3's profile peak (2.0 GiB, mostly the 256-row sampler pass on a 262,208-token vocabulary) is "
    "freed before the capture, leaving 2.1 GiB after the KV cache for a 0.30 GiB V0 capture; the log died in "
    "torch.cuda.graphs capture_end with 'CUDA error: out of memory'. Not explained by a source rule (as Gemma 2 on "
    "V0, vllm#7593)"))
def test_gemma3_awq_128_dies_capturing():
    run = fixture(GEMMA3_AWQ)["runs"]["128"]
    est = estimate(GEMMA3_AWQ, max_model_len=run["max_model_len"])
    assert verdict(est) == run["verdict"], (verdict(est), est.engine_view.get("phases"))


@pytest.mark.parametrize("stem", [QWEN36_FP8, QWEN38_H100, QWEN36_KAITO])
def test_hybrid_models_refused_for_mamba_blocks(stem):
    est = estimate(stem)
    assert verdict(est) == fixture(stem)["printed"]["verdict"], (verdict(est), est.engine_view.get("num_gpu_blocks"))


def test_mamba_blocks_as_printed():
    # the blocks the budget holds, one Mamba state each: 856 printed
    printed = fixture(QWEN36_FP8)["printed"]["mamba_blocks"]
    got = estimate(QWEN36_FP8).engine_view["num_gpu_blocks"]
    assert abs(got - printed) / printed < TOKENS_LIMIT, (got, printed)


@pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
    "vllm#49064 names no checkpoint precision: 306 blocks here with the catalog's BF16 Qwen3.8-27B (51.08 GiB of "
    "weights, 14.67 GiB of budget), 969 printed (-68 %). The page and the blocks are not the gap: the thread's second "
    "reproduction (2 x RX 7900 XT, 0.23.1, TP 2) prints 161 blocks, 123,399 tokens and an estimated maximum length "
    "of 123,872 from its 3.86 GiB, and oomkit gives all three exactly (test_qwen38_second_reproduction_from_its_"
    "budget: 784-token blocks, one Gated DeltaNet state a block, conv 10,240 x 3 x 2 B + float32 temporal 48 x 128 x "
    "128 x 4 B, model_executor/layers/mamba/mamba_utils.py gated_delta_net_state_shape / _mamba_state_dtype, the "
    "float32 from models/config.py update_mamba_ssm_cache_dtype; 16 layers a block, v1/core/kv_cache_utils.py "
    "_get_kv_cache_groups_uniform_page_size / get_num_blocks, read in 0.28.0). So 969 blocks need 46.37-46.42 GiB of "
    "budget, 19-20 GiB of weights beside oomkit's 3.86 GiB profile peak (8,192 tokens; 1,024 sampler rows of "
    "248,320) and 1.40 GiB graph estimate: the block-FP8 checkpoint gives 780 (28.41 GiB, -19.5 %), a uniform NVFP4 "
    "one 987 (18.48 GiB, +1.9 %), a uniform AWQ / GPTQ int4 (group 128) one 1,008 (17.51 GiB, +4.0 %); an NVFP4 "
    "Qwen3.8-27B build that printed 'Model loading took 19.75 GiB' (noonghunna/club-3090#1047, A6000) would give 961 "
    "(-0.8 %). The second reproduction rules out BF16 (25.7 GiB a rank does not load on 20 GB) and FP8 (14.2 GiB a "
    "rank leaves no 3.86 GiB at 0.85), and NVFP4 does not run on gfx1100: as AWQ int4 oomkit gives 218 blocks and "
    "5.23 GiB there. vLLM's recipe (vllm-project/recipes models/Qwen/Qwen3.8-27B.yaml) lists for Hopper BF16, the "
    "block-FP8 build and RedHatAI/Qwen3.8-27B-INT4 (compressed-tensors W4A16, 19.5 GB on disk with its MTP head), "
    "its NVFP4 builds for Blackwell only, so the INT4 build is the likely one (+4.0 % as a uniform int4, with 1.37 "
    "GiB a rank more non-KV memory than oomkit counts on the ROCm pair); which export ran is not named, so nothing "
    "is fitted"))
def test_qwen38_h100_mamba_blocks_as_printed():
    printed = fixture(QWEN38_H100)["printed"]["mamba_blocks"]
    got = estimate(QWEN38_H100).engine_view["num_gpu_blocks"]
    assert abs(got - printed) / printed < TOKENS_LIMIT, (got, printed)


@pytest.mark.parametrize("max_model_len", ["132000", "122633"])
def test_qwen38_second_reproduction_from_its_budget(max_model_len):
    # vllm#49064's second reproduction (2 x RX 7900 XT, ROCm, 0.23.1, TP 2, default max_num_seqs): from the printed
    # 3.86 GiB (any budget that rounds to it), the KV spec alone gives the engine's figures: at 132,000 tokens the
    # one-request check refuses with "estimated maximum model length is 123872" (158 attention blocks of 784 tokens
    # and one block for each of the three Gated DeltaNet groups, kv_cache_utils.py _max_memory_usage_bytes_from_groups
    # / estimate_max_model_len); at 122,633 it sizes 161 blocks of 16 x 1,605,632 B (the TP 2 page), reports
    # 161 / 160 x 122,633 = 123,399 tokens (get_kv_cache_capacity) and refuses 256 sequences for 161 Mamba blocks
    fx = fixture(QWEN38_H100)["second_reproduction"]
    run = fx["printed"]["runs"][max_model_len]
    for gib in (3.855, 3.86, 3.8649):
        s = VllmSettings(engine_version=fx["engine_version"], tensor_parallel_size=2, gpu_memory_utilization=0.85,
                         max_model_len=int(max_model_len), kv_cache_memory_bytes=int(gib * GiB))
        est = ENGINE.estimate(spec_of("Qwen/Qwen3.8-27B"), gpus("AMD Radeon RX 7900 XT", 2), s)
        v = est.engine_view
        assert verdict(est) == run["verdict"], (gib, verdict(est), v.get("error"))
        if "estimated_max_model_len" in run:
            assert f"estimated maximum model length is {run['estimated_max_model_len']}." in v["error"], v["error"]
        else:
            assert v["num_gpu_blocks"] == run["mamba_blocks"], (gib, v["num_gpu_blocks"])
            assert v["kv_cache_tokens"] == run["kv_cache_tokens"], (gib, v["kv_cache_tokens"])
            assert f"max_num_seqs ({run['max_num_seqs']}) exceeds available Mamba cache blocks " \
                   f"({run['mamba_blocks']})" in v["error"]


@pytest.mark.parametrize("variant", [
    pytest.param("fp8", marks=pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
        "starts: 1,121 blocks here, 939 printed (+19 %, 9.4 GiB of budget): the recipe's command for the run is not "
        "in the PR (MTP, encoder and KV-dtype options not known); the FP8 weights match the recipe's 28.7 GiB. The "
        "recipe's launch lines add --kv-cache-dtype fp8 (vllm-project/recipes models/Qwen/Qwen3.8-27B.yaml): 1,113 "
        "with it (1,568-token blocks, the same 3,211,264 B page, FlashInfer's workspace in the graph estimate)"))),
    pytest.param("nvfp4", marks=pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
        "starts: 1,328 blocks here, 1,011 printed (+31 %): Inferact's NVFP4 build loads 24.6 GiB by the recipe, "
        "18.5 here as a uniform NVFP4 checkpoint (its excluded layers are not known), and the command is not in the "
        "PR; 1,320 with the recipe's --kv-cache-dtype fp8"))),
    "bf16_095"])
def test_rtx_pro_6000_variants_refused(variant):
    run = fixture(QWEN38_PRO)["runs"][variant]
    qc = {"fp8": FP8_BLOCK, "nvfp4": NVFP4, "bf16_095": None}[variant]
    s = VllmSettings(engine_version="0.27.1", gpu_memory_utilization=run.get("gpu_memory_utilization"))
    est = ENGINE.estimate(spec_of("Qwen/Qwen3.8-27B", qc), gpus(PRO6000, 1), s)
    assert verdict(est) == fixture(QWEN38_PRO)["printed"]["verdict"], (verdict(est),
                                                                        est.engine_view.get("num_gpu_blocks"))


def test_the_prs_fix_starts_and_the_check_is_020s():
    # recipes#551's fix, --max-num-seqs 512, starts; the refusal names the blocks as vLLM does
    est = estimate(QWEN36_FP8)
    assert est.engine_view["fixes"] == [f"lower --max-num-seqs to {est.engine_view['num_gpu_blocks']}"]
    assert "CUDA graph capture cannot proceed" in est.engine_view["log"]
    assert verdict(estimate(QWEN36_FP8, max_num_seqs=512)) == "starts"
    # no FULL graphs, no check (compilation.py: cudagraph_mode.has_full_cudagraphs())
    assert verdict(estimate(QWEN36_FP8, enforce_eager=True)) == "starts"
    assert verdict(estimate(QWEN36_FP8, cudagraph_mode="PIECEWISE")) == "starts"
    # 0.19.0 caps the capture sizes at the blocks instead of refusing
    model, devices, settings = case(QWEN36_FP8)
    assert verdict(ENGINE.estimate(model, devices, replace(settings, engine_version="0.19.0"))) == "starts"


def test_tp_across_nodes_takes_no_nvlink_communicators():
    # the same two A100s on one machine keep NVLink's communicators; over two machines the network's
    model, devices, settings = case(QWEN7_NODES)
    one = ENGINE.estimate(model, devices, replace(settings, nnodes=1)).engine_view
    two = ENGINE.estimate(model, devices, settings).engine_view
    assert _first(two, "non_torch_bytes") < _first(one, "non_torch_bytes")
    # a machine holding whole TP groups (TP2 x PP2 over two machines) keeps them
    s = VllmSettings(engine_version="0.10.1.1", tensor_parallel_size=2, pipeline_parallel_size=2, nnodes=2,
                     gpu_memory_utilization=0.5, max_model_len=16384)
    pp = ENGINE.estimate(model, gpus(A100_40, 4), s).engine_view
    assert _first(pp, "non_torch_bytes") > _first(two, "non_torch_bytes")


def test_fixtures_are_cited():
    for path in HERE.glob("*.json"):
        fx = json.loads(path.read_text(encoding="utf-8"))
        assert fx["source"].startswith("https://"), path.name
        assert fx["quoted"] and fx["command"] and fx["gpus"] and fx["engine_version"], path.name
