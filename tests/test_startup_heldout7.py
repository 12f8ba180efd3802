"""Start-up held out, seventh set (tests/fixtures/engine_logs/startup_heldout7/): vLLM and SGLang start-up logs from
public threads none of the earlier sets cite, each fixture with its URL, the lines kept verbatim, the release and the command
the thread gives. None of these figures was used to fit a constant. Limits as before: weights per rank 3 % of the
printed load, the KV budget 3 % of the GPU's memory, the verdict equal to the log's. "before" is oomkit at 7e612f6,
before this file; "after" with the two rules below.

| log | release | GPUs | figure | printed | before | after |
|---|---|---|---|---|---|---|
| vllm PR #10511 | 0.6.5 (PR branch, V0) | 1 x H100 80GB, defaults | weights | 14.96 GiB | 14.9595 (-0.00 %) | same |
| | | | available KV | 53.29 GiB | 55.27 (+2.5 % of the GPU) | same |
| | | 2 x H100, TP2 | weights | 7.48 GiB | 7.4810 (+0.01 %) | same |
| vllm#17431 | 0.8.5 | 1 x A800 80GB, 0.4 | verdict, V0 | starts | starts | starts |
| | | | verdict, V1 | refused (no KV blocks) | starts (10.44 GiB) | starts on an idle GPU (strict xfail); refused beside another process of 10.5-47 GiB, where V0 still starts |
| vllm#18124 | 0.8.5 | 1 x A100 80GB, 0.3 | verdict | refused (no KV blocks) | starts (14.57 GiB) | starts on an idle GPU (strict xfail); refused beside another process of 15+ GiB |
| vllm#17238 | 0.8.1 | 2 x RTX 3090, TP2, W8A16, 0.9, 4096, eager | verdict, defaults | refused (no KV blocks) | refused (-1.08 GiB) | same |
| | | | verdict, max_num_seqs 8 / 4 | starts | starts (4.20 GiB) | same |
| vllm PR #12569 | 0.7.1 (V1) | 1 x H100 80GB (assumed), W8A8, 0.98, 2048 | weights | 67.7229 GiB | 67.7103 (-0.02 %) | same |
| | | | available KV (1,381 blocks) | 6.74 GiB | 4.59 (-2.7 % of the GPU) | 7.17 (+0.5 %) |
| | | | tokens | 22,096 | 15,040 (-32 %) | 23,488 (+6.3 %) |
| sglang#9506 | 0.5.x | 1 x RTX 4090, GPTQ-Int4 MoE, 0.6 | verdict | does not start | does not start | same |
| | | | phase | out of memory while loading | refused after the load (weights 15.74 GiB, 'Not enough memory') | same (strict xfail) |

The rules (src/oomkit/engines/vllm):
- V1's profile before 0.8.0 has no sampler pass (settings.ERAS v1_dummy_sampler; profile.py activation_bytes, phases.py
  sampler_warmup_bytes). v1/worker/gpu_model_runner.py profile_run of 0.7.1 and 0.7.2 runs compute_logits over the dummy
  run's whole hidden states ("logits = logits[:self.max_num_tokens]", "TODO(woosuk): Consider the memory usage of the
  sampler."), 0.7.3 over the sampled rows only ("hidden_states = hidden_states[logit_indices]",
  v1_profile_logit_rows); 0.8.0 adds _dummy_sampler_run to profile_run and to gpu_worker.py compile_or_warm_up_model
  (read in the 0.7.1, 0.7.2, 0.7.3 and 0.8.0 wheels). oomkit charged 0.7.x the 0.8 sampler (1,024 rows x 128,256 x
  38 B, 4.66 GiB); the logits of 8,192 rows in bf16 and their hidden states are 2.08 GiB (PR #12569).
- V1 up to 0.9.0 takes its non-torch memory absolute (gpu_worker.py determine_available_memory: "total_allocated_bytes
  = torch.cuda.mem_get_info()[1] - torch.cuda.mem_get_info()[0]", less what torch holds; 0.8.0, 0.8.5 and 0.9.0 read),
  so another process's memory on the GPU counts against the budget, and nothing checks the free memory at start;
  0.9.1 is the first release with Worker.init_device's MemorySnapshot, its "Free memory on device ... on startup is less
  than desired GPU memory utilization" and memory_profiling over the snapshot (ERAS v1_profile_increase: was 0.9.0,
  approximate; now 0.9.1, read in the 0.9.0 and 0.9.1 wheels). profile.py determine_available_memory subtracts the
  others' memory (the device's total less its free memory) there, as for V0 0.6.4, and keeps the free-memory refusal
  for V1 from 0.9.1. V0 from 0.6.5 profiles over its own snapshot: the others' memory is outside its budget.

vllm#17431 and vllm#18124 use 0.4 and 0.3 of an 80 GB card, the settings of a shared GPU, and neither thread says what
else ran on it. On an idle GPU oomkit starts both V1 runs (10.44 and 14.57 GiB of KV): those are the strict xfails.
With the absolute non-torch rule the V1 refusal with the printed message ("No available memory for the cache
blocks": the budget at or below zero) follows from another process holding more than those figures, and #17431's V0
run still starts up to 47 GiB of it (0.4 x 79.15 GiB beside it). Before the rule oomkit started V1 whatever the others
held, as long as the free memory covered the 31.7 GiB requested (and refused with 0.9.1's message beyond, which 0.8.5
does not have).

PR #10511 is the profiling overhaul itself, two days before 0.6.5: its 1.79 GiB (TP1) and 3.58 GiB (TP2) of
non-torch memory are above what oomkit counts for 0.6.5 (0.03 and 2.07 GiB; the TP1 budget is still within the limit,
+1.98 GiB) and may be the branch's state rather than the release's; the TP2 budget is cut from the stored excerpt.
PR #12569 names no GPU; an 80 GB H100 is assumed (the only single GPU of V1's >= H100 batch tier, 8,192 tokens, that
holds 67.7 GiB of weights at 0.98 with the printed 6.74 GiB of KV). The remaining +0.43 GiB (+0.5 % of the GPU, +6.3 %
of the tokens) is not explained: the profile's peak there is the logits (2.08 GiB), W8A8's per-token activation
quantization adds int8 copies of the forward's inputs (below it), and the torch.compile / non-torch terms of 0.7.1 are
not printed.

sglang#9506 (Qwen3-30B-A3B GPTQ-Int4 on an RTX 4090 at --mem-fraction-static 0.6) dies in either reading; the log
puts it inside the load, which its author attributes to the GPTQ MoE repack. SGLang 0.5.1's
GPTQMarlinMoEMethod.process_weights_after_loading repacks one layer at a time (gptq_marlin_moe_repack, then
replace_parameter frees the packed original): a transient of about one layer's experts (0.1 GiB), which does not
explain running out with 7.4 GiB left after the weights; the thread prints no failing allocation. The phase stays a
strict xfail.

Searched and not held (corpus "issues", find_string over stored repositories): every other SGLang thread found with
start-up lines is already held by an earlier set (sglang PR #11716, #11830, #15909, #17392, #18039, #18263, #27537,
#4826, #5576, #4708, #3416; kvcached#198; InferenceX#2128; club-3090#1261); sglang#12496 (Gemma 3 12B on 2 x RTX 4090,
CUDA OOM: the stored excerpt cuts the server_args before tp_size and shows no phase); sglang#29575 (no model named);
sglang PR #10622 (Qwen3-Next FP8, DP4/EP4: no KV line in the stored excerpt); gpustack#1800 (Qwen2.5-VL-7B on an
RTX 3090, V0: 2,400 tokens against oomkit's 81,904 at 0.9, but GPUStack sets the utilization itself and the excerpt
does not print it; V0's multimodal profile, which runs the vision tower inside the dummy forward, is not modelled:
encoder.py); vllm#27499 / #27706 (Qwen VL on an RX 7800 XT: weights and budget printed, model and command not in
the stored excerpt); vllm#20726 (Qwen2.5-7B on an RTX 5060 Ti: traceback only); vllm PR #23066 (GPTQ TP2, 11.08 GiB:
model not named); EuroEval#1120 (gpt-oss-120b TP2: no figure in the excerpt); syv-ai/qwen38-27b-rtx3090#39 (a patched
vLLM: KV-sharing and quantized-KV patches); vllm#16128 (Mistral Small 3.1 AWQ with the base model's config: no error
line in the excerpt); vllm#13882, #15676, #16199, #16570, #26612, #43308, #51590, #57475, spark-vllm-docker#396 and the
club-3090 bench reports #294/#295/#612 (held or examined by earlier sets).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from oomkit.engines.vllm import ENGINE, VllmSettings
from oomkit.engines.vllm.config import CUDA_DRIVER_RESERVED
from oomkit.units import GiB
from tests.startup_heldout import died, first, fixture_loader, gpus
from tests.test_vllm_startup import spec_of

HERE = Path(__file__).parent / "fixtures" / "engine_logs" / "startup_heldout7"
fixture = fixture_loader(HERE)
WEIGHTS_LIMIT = 0.03  # of the printed load
KV_LIMIT = 0.03  # of the GPU's memory

LLAMA3_H100 = "llama-3-8b-h100-tp1-tp2-v0.6.5-pr10511-profile-overhaul"
QWEN3_A800 = "qwen3-8b-a800-80gb-util04-v0.8.5-v1-refused-v0-starts-issue17431"
QWEN25VL_A100 = "qwen2.5-vl-3b-a100-80gb-util03-v0.8.5-refused-issue18124"
QWEN25_W8A16 = "qwen2.5-32b-w8a16-2x3090-tp2-v0.8.1-refused-then-max-num-seqs-issue17238"
LLAMA70_W8A8 = "llama-3.1-70b-w8a8-h100-v1-v0.7.1-util098-2048-pr12569"
QWEN3_MOE_GPTQ = "qwen3-30b-a3b-gptq-int4-rtx4090-sglang-0.5-mfs06-load-oom-issue9506"

NO_BLOCKS = "No available memory for the cache blocks"

# the checkpoints' quantization_config as their exporters write them (compressed-tensors; the threads print none)
W8A8_INT8 = {"quant_method": "compressed-tensors", "format": "int-quantized", "ignore": ["lm_head"],
             "config_groups": {"group_0": {"targets": ["Linear"],
                                           "weights": {"num_bits": 8, "type": "int", "symmetric": True,
                                                       "strategy": "channel", "dynamic": False},
                                           "input_activations": {"num_bits": 8, "type": "int", "symmetric": True,
                                                                 "strategy": "token", "dynamic": True}}}}
GPTQ_INT4 = {"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": False, "sym": True}
W8A16_INT8 = {"quant_method": "compressed-tensors", "format": "pack-quantized", "ignore": ["lm_head"],
              "config_groups": {"group_0": {"targets": ["Linear"], "input_activations": None,
                                            "weights": {"num_bits": 8, "type": "int", "symmetric": True,
                                                        "strategy": "channel", "dynamic": False}}}}


def verdict(est) -> str:
    if phase := died(est):
        return phase
    error = est.engine_view.get("error") or ""
    if error.startswith(NO_BLOCKS):
        return "refused: " + NO_BLOCKS
    return ("refused: " + error[:80]) if error else "starts"


def beside(devices, others_gib: float):
    """The same GPUs with another process holding others_gib of each (the device's free memory less it)."""
    return tuple(replace(d, free_bytes=d.memory_bytes - round(others_gib * GiB)) for d in devices)


# ---------------------------------------------------------------------------------------------------------------
# vllm PR #10511: Llama-3-8B on H100 80GB, TP1 and TP2, V0 (0.6.5's profiling, the PR's branch)


def _llama3(tp: int):
    total = fixture(LLAMA3_H100)["printed"]["total_gpu_memory_bytes"] + CUDA_DRIVER_RESERVED
    return ENGINE.estimate(spec_of("meta-llama/Meta-Llama-3-8B"), gpus("H100 SXM", tp, total),
                           VllmSettings(engine_version="0.6.5", tensor_parallel_size=tp))


@pytest.mark.parametrize("tp", [1, 2])
def test_llama3_h100_weights_per_rank(tp):
    printed = fixture(LLAMA3_H100)["printed"][f"tp{tp}"]["model_loading_bytes"]
    got = first(_llama3(tp).engine_view, "model_loading_bytes")
    err = (got - printed) / printed
    assert abs(err) < WEIGHTS_LIMIT, f"{got / GiB:.4f} vs {printed / GiB:.2f} GiB ({err:+.2%})"


def test_llama3_h100_tp1_available_kv():
    est = _llama3(1)
    printed = fixture(LLAMA3_H100)["printed"]["tp1"]["available_kv_cache_bytes"]
    got = first(est.engine_view, "available_kv_cache_bytes")
    err = (got - printed) / est.devices[0].memory_bytes
    assert abs(err) < KV_LIMIT, f"{got / GiB:.2f} vs {printed / GiB:.2f} GiB ({err:+.2%} of the GPU)"
    assert verdict(est) == "starts"


# ---------------------------------------------------------------------------------------------------------------
# vllm#17431: Qwen3-8B on an A800 80GB at 0.4, 0.8.5: V1 refused, V0 starts


def _qwen3(use_v1: bool, others_gib: float = 0.0):
    devices = gpus("A800 80GB", 1)
    if others_gib:
        devices = beside(devices, others_gib)
    return ENGINE.estimate(spec_of("Qwen/Qwen3-8B"), devices,
                           VllmSettings(engine_version="0.8.5", use_v1=use_v1, **fixture(QWEN3_A800)["settings"]))


def test_qwen3_a800_v0_starts():
    assert verdict(_qwen3(use_v1=False)) == fixture(QWEN3_A800)["runs"]["v0"]["verdict"]


@pytest.mark.xfail(strict=True, reason="on an idle A800 oomkit's V1 budget is 11.21 GiB and the run starts; the log "
                                       "refuses: the thread does not say what else held the GPU (V1 0.8.x counts it)")
def test_qwen3_a800_v1_refused_on_an_idle_gpu():
    assert verdict(_qwen3(use_v1=True)) == fixture(QWEN3_A800)["runs"]["v1"]["verdict"]


@pytest.mark.parametrize("others_gib", [12, 20, 40])
def test_qwen3_a800_another_process_splits_v0_and_v1(others_gib):
    # V1 0.8.5's absolute non-torch memory counts the other process, V0's snapshot does not: the log's pair of verdicts
    runs = fixture(QWEN3_A800)["runs"]
    assert verdict(_qwen3(use_v1=True, others_gib=others_gib)) == runs["v1"]["verdict"]
    assert verdict(_qwen3(use_v1=False, others_gib=others_gib)) == runs["v0"]["verdict"]


# ---------------------------------------------------------------------------------------------------------------
# vllm#18124: Qwen2.5-VL-3B on an A100 80GB at 0.3, 0.8.5 (V1): refused


def _qwen25vl(others_gib: float = 0.0):
    devices = gpus("A100 80GB", 1)
    if others_gib:
        devices = beside(devices, others_gib)
    return ENGINE.estimate(spec_of("Qwen/Qwen2.5-VL-3B-Instruct"), devices,
                           VllmSettings(engine_version="0.8.5", **fixture(QWEN25VL_A100)["settings"]))


@pytest.mark.xfail(strict=True, reason="on an idle A100 oomkit's budget is 15.61 GiB and the run starts; the log "
                                       "refuses: the thread does not say what else held the GPU (V1 0.8.x counts it)")
def test_qwen25vl_a100_refused_on_an_idle_gpu():
    assert verdict(_qwen25vl()) == "refused: " + NO_BLOCKS


def test_qwen25vl_a100_refused_beside_another_process():
    assert verdict(_qwen25vl(others_gib=20)) == "refused: " + NO_BLOCKS


# ---------------------------------------------------------------------------------------------------------------
# vllm#17238: Qwen2.5-32B W8A16 on 2 x RTX 3090, TP2, 0.8.1: refused at the defaults, starts with max_num_seqs 8 / 4


@pytest.mark.parametrize("run", ["default", "max_num_seqs_8", "max_num_seqs_4"])
def test_qwen25_32b_w8a16_verdicts(run):
    fx = fixture(QWEN25_W8A16)
    r = fx["runs"][run]
    est = ENGINE.estimate(spec_of("Qwen/Qwen2.5-32B-Instruct", W8A16_INT8), gpus("RTX 3090", 2),
                          VllmSettings(engine_version="0.8.1", max_num_seqs=r.get("max_num_seqs"), **fx["settings"]))
    assert verdict(est) == r["verdict"]


# ---------------------------------------------------------------------------------------------------------------
# vllm PR #12569: Llama-3.1-70B W8A8 on one H100 (assumed), V1 0.7.1, 0.98, 2,048 tokens


def _llama70(**kw):
    return ENGINE.estimate(spec_of("meta-llama/Llama-3.1-70B-Instruct", W8A8_INT8), gpus("H100 SXM", 1),
                           VllmSettings(engine_version="0.7.1", **fixture(LLAMA70_W8A8)["settings"], **kw))


def test_llama70_w8a8_weights():
    printed = fixture(LLAMA70_W8A8)["printed"]["model_loading_bytes"]
    got = first(_llama70().engine_view, "model_loading_bytes")
    err = (got - printed) / printed
    assert abs(err) < WEIGHTS_LIMIT, f"{got / GiB:.4f} vs {printed / GiB:.4f} GiB ({err:+.2%})"


def test_llama70_w8a8_available_kv_from_the_printed_blocks():
    # 0.7.x's profile has no sampler pass: the logits of the 8,192 dummy tokens, not 1,024 sampled rows at 38 B
    est = _llama70()
    v, printed = est.engine_view, fixture(LLAMA70_W8A8)["printed"]
    budget = printed["num_gpu_blocks"] * v["kv_block_bytes"]
    got = first(v, "available_kv_cache_bytes")
    err = (got - budget) / est.devices[0].memory_bytes
    assert abs(err) < KV_LIMIT, f"{got / GiB:.2f} vs {budget / GiB:.2f} GiB ({err:+.2%} of the GPU)"
    # no _dummy_sampler_run in 0.7.1's compile_or_warm_up_model either
    assert v["sampler_warmup_bytes"] == 0 and v["sampler_warmup_requests"] is None


def test_llama70_w8a8_concurrency_of_the_printed_blocks():
    v = _llama70(num_gpu_blocks_override=fixture(LLAMA70_W8A8)["printed"]["num_gpu_blocks"]).engine_view
    assert round(v["max_concurrency"], 2) == fixture(LLAMA70_W8A8)["printed"]["max_concurrency_2048"]


# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", sorted(HERE.glob("*.json")), ids=lambda p: p.stem)
def test_fixtures_are_cited(path):
    fx = json.loads(path.read_text(encoding="utf-8"))
    assert fx["source"].startswith("https://"), path.name
    assert fx["quoted"] and fx["command"] and fx["gpus"] and fx["engine_version"], path.name


# ---------------------------------------------------------------------------------------------------------------
# sglang#9506: Qwen3-30B-A3B GPTQ-Int4 on one RTX 4090, SGLang 0.5.x, --mem-fraction-static 0.6: out of memory while
# loading


def _qwen3_moe_gptq():
    from oomkit.engines import sglang as sg

    fx = fixture(QWEN3_MOE_GPTQ)
    return sg.ENGINE.estimate(spec_of("Qwen/Qwen3-30B-A3B", GPTQ_INT4), gpus("RTX 4090", 1),
                              sg.SGLangSettings(engine_version="0.5.1", **fx["settings"])).engine_view


def test_qwen3_moe_gptq_4090_does_not_start():
    v = _qwen3_moe_gptq()
    assert v.get("error") or v.get("failed_phase"), "oomkit lets the server start"


@pytest.mark.xfail(strict=True, reason="oomkit loads the 15.76 GiB of weights (7.42 GiB left) and refuses after the "
                                       "load ('Not enough memory', 0.6 x 23.5 GiB below the weights); the log runs out "
                                       "of memory while loading. GPTQMarlinMoEMethod.process_weights_after_loading "
                                       "(0.5.1 gptq.py) repacks one layer at a time (replace_parameter), about 0.1 GiB "
                                       "transient: the stored thread prints no failing allocation to explain it")
def test_qwen3_moe_gptq_4090_dies_while_loading():
    v = _qwen3_moe_gptq()
    assert (v.get("failed_phase") or {}).get("phase") == "weights" or "while loading" in (v.get("error") or "")
