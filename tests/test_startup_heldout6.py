"""Start-up held out, sixth set (tests/fixtures/engine_logs/startup_heldout6/): vLLM and SGLang start-up logs from public
threads none of the earlier sets cite, each fixture with its URL, the lines kept verbatim, the release and the command
the thread gives. None of these figures was used to fit a constant. Limits as before: weights per rank 3 % of the
printed load, the KV budget and free memory 3 % of the GPU's memory, tokens 3 %, the verdict equal to the log's.
"before" is oomkit at 7f9fd7a, before this file; no engine rule changed with it.

| log | release | GPUs | figure | printed | oomkit | error |
|---|---|---|---|---|---|---|
| DeepSeek-V3#205 | 0.6.6 (V0), Ray | 4 nodes x 8 RTX 4090, PP4 x TP8, 0.98, 128, eager | weights, first stage rank 0 | 16.9583 GiB | 16.7220 | -1.39 % |
| | | | verdict | dies (OOM on the sampler's rank) | dies (no KV blocks on rank 24, the last stage's driver) | agrees |
| | | | torch peak on the sampler's rank | >= 23.20 GiB (22.83 allocated + 0.37 asked) | 22.91 (21.90 weights + 1.01 profile) | -1.2 % of the GPU |
| sglang#3416 | 0.4.2 series | 8 x H200, TP8, 0.81 | free after the weights (TP7) | 58.12 GB | 58.47 GiB | +0.25 % of the GPU |
| vllm recipes PR #273 | 0.17.1 ROCm | 2 x MI300X, TP2, defaults | KV tokens | 497,600 | 503,408 | +1.17 % |
| vllm#53961 | nightly 2026-08-26 | 8 x MI300X, TP8, fp8 KV, 1M | KV needed by one request | 23.32 GiB | 14.88 | -36 % (strict xfail) |
| | | | available KV | 13.41 GiB | 66.17 | +27.5 % of the GPU (strict xfail) |
| | | | verdict | dies (refused at the KV cache) | starts | strict xfail |

DeepSeek-V3#205. vLLM 0.6.6 splits DeepSeek-V3's 61 layers 15/15/15/16 over the four stages (distributed/utils.py
get_pp_indices before PR #13839: the last stage takes the remainder; settings.ERAS pp_remainder_spread), the first
stage holding the three dense layers and the embedding: the smallest load, the one the driver printed. The other
workers' 16.9687 lines are de-duplicated by Ray across the cluster and name no stage, so they are not held. The run
dies on a worker of another node (ip=10.96.62.52) in logits.sort, the V0 profile run's top-p/top-k sort of 256 rows x
129,280 logits (12 B an element: 378.7 MiB, the "380.00 MiB" asked), before any KV block exists. oomkit puts the
sampler on the last stage's first rank (rank 24), whose 21.90 GiB of weights and 1.01 GiB profile peak leave no KV
budget (-0.10 GiB): it refuses the start there ("No available memory for the cache blocks") where the log runs out of
memory one step earlier in the same profile pass. Both are deaths on the same rank before the KV cache; oomkit's
profile peak is within 0.3 GiB of the floor the OOM line sets.

sglang#3416 crashed at start with a fatal-signal dump, not an out-of-memory error, so its verdict is not held; the
server_args excerpt stops before tp_size, and the eight H200 of the title are the only TP size that holds DeepSeek-V3's
fp8 weights (TP4 would need 160 GB a rank). The release is not printed: oomkit gives one figure over the 0.4.2 series.

vllm recipes PR #273 tested the recipe's TP2 AMD command (MiniMax-M2.5 in the recipe; M2, M2.1 and M2.5 share one
config) and reported the KV pool; its "109 GB VRAM" names neither unit nor scope and is not held.

vllm#53961 (DeepSeek-V4-Pro, ROCm): both figures miss and no source rule for them was found. The one-request need
(23.32 GiB at 1,048,576 tokens, fp8 KV, no prefix caching) is a KV-layout figure independent of the budget: oomkit's
CUDA layout of DeepSeek V4's sparse-MLA, SWA and compressed caches gives 14.88 GiB, 36 % short; the ROCm backend
(vllm/models/deepseek_v4/amd/rocm.py DeepseekV4ROCMAiterMLASparseBackend) subclasses the CUDA FlashMLA-sparse one,
so the difference is not in that class and the whole vLLM tree (1.1 GB) could not be brought here to read the ROCm
cache-spec path. The budget is 52.8 GiB lower than oomkit's (13.41 against 66.17): oomkit loads 101.17 GiB a rank
(MXFP4 routed experts), 4.63 GiB of profile peak at the 16,384-token batch the issue reports (the >= 160 GiB tier,
settings.ERAS batch_160gib) and 1.95 GiB of graphs; a load near 150 GiB a rank would explain the log, which the
dummy-weight run does not print. Both stay strict xfails with these figures.

Searched and not held (corpus "issues", "code", and find_string over stored repositories): sglang#4161 (DeepSeek-R1
on 2 x 8 H800: 36.51 GB free after the weights, 22.03 after the pool, but no command in the stored thread),
sglang#4017 (DeepSeek-R1 TP16 on 2 x 8 H100, 0.4.3.post2: command, no memory line), sglang#14426 / #14495 (DeepSeek
V3.2 TP8 EP8 / PP2 DP8: crash after serving, no start-up figures), vllm#14286 (Llama-3.1-8B W8A16 compressed-tensors
on V1: config and traceback, no memory lines in the stored excerpt), vllm#44022 (Nemotron-3-Nano NVFP4, ModelOpt, on
an RTX 5090: command only), vllm#30637 (DeepSeek-V3.2 sampler warm-up OOM: environment only), vllm#20783 (compressed-
tensors FP8 on 8 H100: environment only), vllm#19101 (DeepSeek-R1 DEP16: environment only), QwenLM/Qwen3-VL#1684
(Qwen3-VL-235B FP8 TP8+EP on A100s: "CUDA error: out of memory" without figures), vllm#6746 (Llama-3.1-405B FP8 on
8 H100: 57.7520 GB a rank, but the command in the thread is another user's), the club-3090 bench reports not yet
held (drafter models and patched images; their non-default args are cut in the stored excerpts).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oomkit.engines import sglang as sg
from oomkit.engines.vllm import ENGINE, VllmSettings
from oomkit.hardware.catalog import lookup as gpu_lookup
from oomkit.hardware.catalog import with_facts
from oomkit.memory import Device
from oomkit.units import GiB, MiB
from tests.test_vllm_startup import spec_of

HERE = Path(__file__).parent / "fixtures" / "engine_logs" / "startup_heldout6"
WEIGHTS_LIMIT = 0.03  # of the printed load
KV_LIMIT = 0.03  # of the GPU's memory
TOKENS_LIMIT = 0.03

DSV3_4090 = "deepseek-v3-4x8-rtx4090-pp4-tp8-ray-v0.6.6-util098-128-deepseekv3-205"
DSV3_H200 = "deepseek-v3-8xh200-tp8-sglang-0.4.2-mfs081-issue3416"
MINIMAX_MI300X = "minimax-m2-2x-mi300x-tp2-v0.17.1-rocm-recipes-pr273"
DSV4_MI300X = "deepseek-v4-pro-8x-mi300x-tp8-fp8kv-nightly-2026-08-26-issue53961"


def fixture(stem: str) -> dict:
    return json.loads((HERE / f"{stem}.json").read_text(encoding="utf-8"))


def gpus(name: str, n: int) -> tuple[Device, ...]:
    part = gpu_lookup(name)
    return tuple(with_facts(Device(f"CUDA{i}", part.name, part.memory_bytes)) for i in range(n))


def _first(view: dict, key: str) -> int:
    return next(iter(view[key].values()))


# ---------------------------------------------------------------------------------------------------------------
# DeepSeek-V3#205: DeepSeek-V3 fp8 over 4 Ray nodes of 8 RTX 4090, PP4 x TP8, vLLM 0.6.6


def _dsv3_4090():
    s = VllmSettings(engine_version="0.6.6", **fixture(DSV3_4090)["settings"])
    return ENGINE.estimate(spec_of("deepseek-ai/DeepSeek-V3"), gpus("RTX 4090", 32), s)


def test_dsv3_pp4_first_stage_weights():
    printed = fixture(DSV3_4090)["printed"]["model_loading_gib_rank0"] * GiB  # 0.6.6's "GB" is GiB
    got = _first(_dsv3_4090().engine_view, "model_loading_bytes")  # rank 0: the first stage's driver
    err = (got - printed) / printed
    assert abs(err) < WEIGHTS_LIMIT, f"{got / GiB:.4f} vs {printed / GiB:.4f} GiB ({err:+.2%})"


def test_dsv3_pp4_dies_on_the_samplers_rank():
    # the log: OOM in the profile run's sort on a worker of another node; oomkit: no KV blocks on rank 24, the last
    # stage's first rank, which runs the sampler. Both die there before any KV block exists
    est = _dsv3_4090()
    v = est.engine_view
    assert v.get("error") or v.get("failed_phase"), "oomkit lets the run start"
    budgets = v["available_kv_cache_bytes"]
    worst = min(budgets, key=budgets.get)
    assert "rank 24" in worst and budgets[worst] <= 0, (worst, budgets[worst] / GiB)
    assert v["kv_cache_tokens"] == 0


def test_dsv3_pp4_samplers_rank_peak_against_the_oom_line():
    # the failing sort asked for 380 MiB with 22.83 GiB already allocated by PyTorch: the pass needed at least 23.20
    # GiB of torch memory on that rank; oomkit's weights plus profile peak there, within 3 % of the GPU
    est = _dsv3_4090()
    v, printed = est.engine_view, fixture(DSV3_4090)["printed"]
    rank = next(k for k in v["model_loading_bytes"] if "rank 24" in k)
    peak = v["model_loading_bytes"][rank] + v["activation_peak_bytes"][rank]
    floor = printed["oom_allocated_by_pytorch_gib"] * GiB + printed["oom_tried_to_allocate_mib"] * MiB
    err = (peak - floor) / est.devices[24].memory_bytes
    assert abs(err) < KV_LIMIT, f"{peak / GiB:.2f} vs >= {floor / GiB:.2f} GiB ({err:+.2%} of the GPU)"


# ---------------------------------------------------------------------------------------------------------------
# sglang#3416: DeepSeek-V3 on 8 x H200, TP8, --mem-fraction-static 0.81 (0.4.2 series)


@pytest.mark.parametrize("version", ["0.4.2", "0.4.2.post3", "0.4.2.post4"])
def test_dsv3_h200_free_after_the_weights(version):
    fx = fixture(DSV3_H200)
    est = sg.ENGINE.estimate(spec_of("deepseek-v3"), gpus("H200", 8),
                             sg.SGLangSettings(**fx["settings"], engine_version=version))
    line = next(x for x in est.engine_view["log"].split("\n") if x.startswith("Load weight end."))
    after = float(line.split("avail mem=")[1].split(" GB")[0]) * GiB
    printed = float(fx["printed"]["weights_avail_after_gb_tp7"]) * GiB  # SGLang's "GB" is GiB
    err = (after - printed) / est.devices[0].memory_bytes
    assert abs(err) < KV_LIMIT, f"{after / GiB:.2f} vs {printed / GiB:.2f} ({err:+.2%} of the GPU)"


# ---------------------------------------------------------------------------------------------------------------
# vllm recipes PR #273: MiniMax-M2 series, TP2 on 2 x MI300X, vLLM 0.17.1 ROCm wheel, defaults


def test_minimax_m2_mi300x_tp2_kv_tokens():
    fx = fixture(MINIMAX_MI300X)
    est = ENGINE.estimate(spec_of("MiniMaxAI/MiniMax-M2.5"), gpus("MI300X", 2),
                          VllmSettings(engine_version="0.17.1", **fx["settings"]))
    v, printed = est.engine_view, fx["printed"]["kv_cache_tokens"]
    err = (v["kv_cache_tokens"] - printed) / printed
    assert abs(err) < TOKENS_LIMIT, (v["kv_cache_tokens"], printed, f"{err:+.2%}")
    assert not v.get("error") and not v.get("failed_phase")


def test_minimax_m2_series_share_the_estimate():
    # the PR names the series; the recipe's command serves M2.5: M2 gives the same pool
    s = VllmSettings(engine_version="0.17.1", **fixture(MINIMAX_MI300X)["settings"])
    tokens = {m: ENGINE.estimate(spec_of(m), gpus("MI300X", 2), s).engine_view["kv_cache_tokens"]
              for m in ("MiniMaxAI/MiniMax-M2", "MiniMaxAI/MiniMax-M2.5")}
    assert len(set(tokens.values())) == 1, tokens


# ---------------------------------------------------------------------------------------------------------------
# vllm#53961: DeepSeek-V4-Pro on 8 x MI300X, TP8, fp8 KV, 1M tokens (nightly of 2026-08-26)


def _dsv4_mi300x(**kw):
    s = VllmSettings(engine_version="0.28.0", **fixture(DSV4_MI300X)["settings"], **kw)
    return ENGINE.estimate(spec_of("deepseek-ai/DeepSeek-V4-Pro"), gpus("MI300X", 8), s)


def test_dsv4_mi300x_takes_the_160gib_batch_tier():
    # the subject: MI300X's 191.98 GiB falls in the >= 160 GiB tier, 16,384 batched tokens
    assert _dsv4_mi300x().engine_view["max_num_batched_tokens"] == \
        fixture(DSV4_MI300X)["printed"]["max_num_batched_tokens_default"]


@pytest.mark.xfail(strict=True, reason="one 1M request needs 14.88 GiB in oomkit against the printed 23.32 (-36 %): "
                                       "the ROCm DeepSeek V4 cache layout is not modelled")
def test_dsv4_mi300x_kv_needed_for_one_request():
    printed = fixture(DSV4_MI300X)["printed"]
    # the budget pinned to the printed one, so the refusal (and its need) is computed from the layout alone
    v = _dsv4_mi300x(kv_cache_memory_bytes=int(printed["available_kv_cache_gib"] * GiB)).engine_view
    need = _first(v, "kv_needed_one_request_bytes")
    err = (need - printed["kv_needed_one_request_gib"] * GiB) / (printed["kv_needed_one_request_gib"] * GiB)
    assert abs(err) < TOKENS_LIMIT, f"{need / GiB:.2f} GiB ({err:+.2%})"


@pytest.mark.xfail(strict=True, reason="available KV 66.17 GiB in oomkit against the printed 13.41 (+27.5 % of the "
                                       "GPU); the dummy-weight run prints no load figure")
def test_dsv4_mi300x_available_kv():
    est = _dsv4_mi300x()
    got = _first(est.engine_view, "available_kv_cache_bytes")
    printed = fixture(DSV4_MI300X)["printed"]["available_kv_cache_gib"] * GiB
    err = (got - printed) / est.devices[0].memory_bytes
    assert abs(err) < KV_LIMIT, f"{got / GiB:.2f} vs {printed / GiB:.2f} GiB ({err:+.2%} of the GPU)"


@pytest.mark.xfail(strict=True, reason="oomkit starts the run the log refuses at the KV cache (the two misses above)")
def test_dsv4_mi300x_refused_at_the_kv_cache():
    v = _dsv4_mi300x().engine_view
    assert v.get("error"), "oomkit lets the run start"


# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", sorted(HERE.glob("*.json")), ids=lambda p: p.stem)
def test_fixtures_are_cited(path):
    fx = json.loads(path.read_text(encoding="utf-8"))
    assert fx["source"].startswith("https://"), path.name
    assert fx["quoted"] and fx["command"] and fx["gpus"] and fx["engine_version"], path.name
    if "command_from" in fx:
        assert fx["command_from"].startswith("https://github.com/") and "/blob/" in fx["command_from"], path.name
