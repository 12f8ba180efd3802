"""Held-out SGLang start-up logs, eighth set (tests/fixtures/engine_logs/sglang/heldout8/, each with its URL, the
lines kept verbatim and the release read from the log or its date): a worker of a prefill/decode-disaggregated
deployment with the hierarchical cache, and an MTP (NEXTN) speculative run over two nodes. No constant in oomkit was
fitted on either; the printed figures were recorded before oomkit was run, and the figures below are the logs', never
oomkit's.

| log | release | GPUs | model | figure | printed | oomkit |
|---|---|---|---|---|---|---|
| sglang#21395 | main of 2026-03-25 (0.5.9 era) | one 48 GB-class GPU (inferred) | Qwen3-4B (inferred), PD worker with HiCache | weights | 7.56 GB | 7.57 GiB (+0.1 %) |
| | | | | free after the weights | 36.61 GB | 36.62 GiB |
| | | | | K / V at 105,600 tokens, page 64 | 7.26 / 7.26 GB | 7.26 / 7.26 GiB |
| | | | | tokens at the inferred --mem-fraction-static 0.5 | 105,600 | 105,728 (+0.1 %) |
| | | | | free after the pool / at the end | 21.66 / 21.09 GB | 21.78 / 21.25 GiB |
| | | | | max_running_requests | 2,048 | 2,048 |
| sglang#3633 | main of 2025-02-17 (0.4.3.post1 read) | 2 x 8 H20, TP16 | DeepSeek-R1 + NEXTN (2 steps, top-k 4, 4 draft tokens), --mem-fraction-static 0.9 | starts | yes (dies 30 min later at run time) | no, CUDA graph capture 0.58 GiB short -> yes |

One rule came from sglang#3633, read in the wheels (no constant fitted):
- layout.py: before cuda_graph_runner.py had a speculative list (0.4.3.post4), server_args.py sets
  disable_cuda_graph_padding (and chunked_prefill_size -1) for EAGLE and, from 0.4.3.post1, NEXTN, so the target's
  verify graphs are captured for 1..32, 64 and 128 (34 sizes, 720 rows), not the padded 1, 2, 4, 8..160 (23 sizes,
  1,687 rows): the capture estimate 7.20 -> 3.14 GiB against 6.62 GiB left after the pools, and the run starts.

Searched and not held (corpus "issues": DP attention with DeepSeek V3/R1, Qwen3-235B and Kimi K2; ModelOpt FP4 /
NVFP4 on B200, GB200 and RTX 50xx; --disaggregation-mode workers; EAGLE / MTP captures; srt-slurm, dynamo, llm-d,
InferenceX): the threads the search returns are held already (sglang#6017, #7055, #16143, #24453, #17392, #11716,
#11830, #22537, #15464, #12978, #27537, club-3090#1261, InferenceX#2128, srt-slurm#172, vllm#21348) or carry no
figure in the stored excerpt (sglang#23769 DeepSeek-V4-Pro-FP8 DP16: the command only; sglang PR #26083 DeepSeek
V3.2 DP8 with online NVFP4: distributed-init lines only; sglang PR #5390: loading lines only; sglang#10560 /
Mooncake#851 Qwen3-235B PD: cut at 'Load weight end'; sglang#14885 Qwen3-4B prefill with HiCache: the command only),
name no model (sglang#10088's EAGLE capture on FA3: 0.54 GB target and 0.21 GB draft, model not given; sglang#6320's
NIXL PD run: a LlamaForCausalLM at 19.22 GB per TP2 rank), or are a model oomkit has no pool for (DeepSeek-V4 on
sglang: sglang#32830, PR #23933; on Ascend NPUs). sglang PR #3582's NEXTN comments die in 0.4.3.post1's draft-worker
'memory capacity is unbalanced' check (model_runner.py init_torch_distributed), a per-rank imbalance, not a shortage.
"""

from __future__ import annotations

from pathlib import Path

from oomkit.engines import sglang as sg
from oomkit.hardware.catalog import devices_for_names
from tests.sglang_heldout import assert_avail_mem, assert_every_fixture_cites_its_thread, assert_weights, load
from tests.test_sglang_heldout4 import pool_at, two
from tests.test_vllm_startup import spec_of

HERE = Path(__file__).parent / "fixtures" / "engine_logs" / "sglang" / "heldout8"


def fixture(stem: str) -> dict:
    return load(HERE, stem)


def test_every_fixture_cites_its_thread():
    assert_every_fixture_cites_its_thread(HERE)


# ---------------------------------------------------------------------------------------------------------
# sglang#21395: Qwen3-4B (inferred) on a 48 GB-class GPU, a PD worker with the hierarchical cache (2026-03-25)

PD = "qwen3-4b-48gb-pd-hicache-mfs05-issue21395"
# the log's own evidence (fixture notes): no decode graph captured, a 64-token page, 0.5 of the memory kept
PD_SETTINGS = dict(engine_version="0.5.9", disable_cuda_graph=True, page_size=64)


def _pd(**kw):
    return sg.ENGINE.estimate(spec_of("qwen3-4b"), devices_for_names("L40S"),
                              sg.SGLangSettings(**PD_SETTINGS, **kw))


def test_pd_worker_weights():
    # 36 layers, tied embeddings, bf16: 7.57 GiB against 7.56
    assert_weights(_pd(), fixture(PD)["printed"]["weights_mem_usage_gb"])


def test_pd_worker_free_memory_after_the_weights():
    # the 48 GB-class card (46,068 MiB) less oomkit's pre-load overhead and the weights: 36.62 GiB against 36.61
    assert_avail_mem(_pd(), "Load weight end.", fixture(PD)["printed"]["weights_avail_after_gb"])


def test_pd_worker_pool_at_the_printed_tokens():
    # 36 layers x 8 KV heads x 128 x 2 B = 73,728 B a token for K, the same for V, over 105,600 tokens and a 64-token
    # padding page (memory_pool.py MHATokenToKVPool: size + page_size rows): 7.26 GiB each, 7.25 without the page
    p = fixture(PD)["printed"]
    pool = pool_at("qwen3-4b", p["kv_cache_tokens"], page_size=64, engine_version="0.5.9")
    assert (two(pool.k_bytes), two(pool.v_bytes)) == (p["k_size_gb"], p["v_size_gb"])


def test_pd_worker_pool_from_the_free_memory_at_the_inferred_fraction():
    # the printed pool is what a static fraction of 0.50 leaves (fixture notes; the command is not in the excerpt):
    # 105,728 tokens against 105,600 (+0.1 %), and max_running_requests 0.5.9's floor of 2,048
    p = fixture(PD)["printed"]
    ev = _pd(mem_fraction_static=0.5).engine_view
    got = ev["max_total_num_tokens"]
    assert abs(got - p["max_total_num_tokens"]) / p["max_total_num_tokens"] < 0.03, got
    assert ev["max_running_requests"] == p["max_running_requests"]
    assert ev["chunked_prefill_size"] == p["chunked_prefill_size"]


def test_pd_worker_free_memory_after_the_pool():
    # 21.78 GiB against 21.66 after the pool, 21.25 against 21.09 at the max_total_num_tokens line
    est = _pd(mem_fraction_static=0.5)
    p = fixture(PD)["printed"]
    for prefix, key, printed in (("Memory pool end.", "avail mem=", p["memory_pool_end_avail_gb"]),
                                 ("max_total_num_tokens=", "available_gpu_mem=", p["available_gpu_mem_gb"])):
        assert_avail_mem(est, prefix, printed, key)


# ---------------------------------------------------------------------------------------------------------
# sglang#3633: DeepSeek-R1 with its NextN draft on 2 x 8 H20, TP16 (main of 2025-02-17, 0.4.3.post1 read)

MTP = "deepseek-r1-2x8xh20-tp16-nextn-issue3633"


def _mtp():
    fx = fixture(MTP)
    return sg.ENGINE.estimate(spec_of("deepseek-r1"), devices_for_names("H20") * 16,
                              sg.SGLangSettings(**fx["settings"], engine_version="0.4.3.post1"))


def test_nextn_run_starts():
    # the server served for about 30 minutes before a run-time OOM (not estimated here). 0.4.3.post1's
    # server_args.py turns CUDA-graph padding off for NEXTN, so the verify graphs are 1..32, 64 and 128: 3.14 GiB of
    # capture in the 6.62 GiB the pools leave (the padded list, 1, 2, 4, 8..160, gave 7.20 GiB and a refusal)
    est = _mtp()
    assert est.fits and est.engine_view.get("failed_phase") is None, est.engine_view.get("error")


def test_nextn_run_captures_the_unpadded_list():
    ev = _mtp().engine_view
    assert ev["cuda_graph_bs"] == list(range(1, 33)) + [64, 128]
    assert ev["chunked_prefill_size"] == -1  # server_args.py: "chunked prefill ... disabled because of using NEXTN"
