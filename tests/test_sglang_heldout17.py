"""Held-out SGLang start-up log, seventeenth set (tests/fixtures/engine_logs/sglang/heldout17/, with its URL, the lines
kept verbatim and the release it names). No constant in oomkit was fitted on it; the printed figures were recorded in
the fixture before oomkit was run, and the figures below are the log's, never oomkit's. "before" is oomkit before this
set was read, "after" with this set's commits (no rule changed: same).

E: the reference start-up log of an earlier revision of SGLang's own .claude/skills/clean-startup-log/SKILL.md (commit
31a40974, main of 2026-04-27): Qwen/Qwen3-8B, every flag at its default, on one SM100 card with 177.57 GiB free at
start (a B200; the file names no GPU). PyPI's newest release then was 0.5.10.post1 (0.5.11, the first to pin torch
2.11, came 2026-05-07, and the torch 2.11 upgrade, sglang#21247, was still re-running CI on 2026-05-02): read as 0.5.10,
the torch 2.9.1 stack. Run as a user would: `--engine sglang --engine-version 0.5.10`, the catalog's B200.

| figure | printed | before | after |
|---|---|---|---|
| attention backend, page size | trtllm_mha, 64 | same | same |
| chunked_prefill_size | 16,384 | same | same |
| decode graphs (to 512), prefill sizes (to 16,384) | 52, 74 | same | same |
| weights | 15.28 GB | 15.28 GiB | same |
| max_total_num_tokens | 992,896 | 997,248 (+0.44 %) | same |
| K size of the printed pool (size + one page) | 68.18 GB | 68.18 GiB | same |
| free at 'Load weight begin' | 177.57 GB | 178.26 GiB (+0.39 % of the card) | same |
| free after the weights / the pools / before the decode graphs | 162.30 / 25.26 / 24.14 GB | 162.98 / 25.40 / 24.37 GiB | same |
| decode graphs | 0.60 GB | 1.04 GiB (+73 %, strict xfail) | same |
| free after the decode graphs | 23.54 GB | 23.33 GiB (-0.1 % of the card) | same |
| prefill (piecewise) graphs | 2.32 GB | 3.55 GiB (+53 %, strict xfail) | same |
| free at the end | 21.22 GB | 19.77 GiB (-0.8 % of the card) | same |

Count, figure by figure (a row of several figures counts each): 14 of 16 before, 14 of 16 after.

What the log adds to tests/test_sglang_heldout14.py D (the same command on 2026-05-24, a B300-class card, read as
0.5.12): the decode capture prints 0.60 GB in both, on the torch 2.9.1 stack here and on torch 2.11 there. oomkit
prices the torch 2.9 releases' decode rest at CG_PER_GRAPH_LAYER (0.408 MiB a graph and layer, engines/sglang/phases.py,
read off TP > 1 and other one-GPU logs of the 0.5.x releases) and the 0.5.11+ one-GPU rest at
CG_POOL_T211 + CG_KEPT_T211 (fitted on D among three logs): read as 0.5.11, E's decode graphs are 0.58 GiB (-3.3 %) and
its end 20.23 GiB. So the smaller rest of D is not the torch 2.11 stack's alone: trtllm_mha on SM100 leaves it under
torch 2.9 too. No rule is changed on one log: whether the attention backend or the card makes the difference is not
told apart by the logs held, and a backend- or card-keyed constant would be fitted, not read from the source. The
prefill graphs repeat D's +53 %: PREFILL_GRAPH_PER_HIDDEN's sqrt(largest / 512) growth past 8,192 tokens (vLLM's)
over-prices SGLang's 74 sizes to 16,384 on both cards.

Searched and not held (corpora issues / pages / docs / code, file search for "Load weight end. elapsed=", "Capture
target decode CUDA graph end", "Capture piecewise CUDA graph end", "Mamba Cache is allocated. max_mamba_cache_size",
"Memory pool end. avail mem=", "KV Cache is allocated. #tokens:", "max_total_num_tokens="; queries on TP >= 2 at
0.5.11+, DP attention, DeepSeek V3.2 / GLM-5 indexers, Qwen3-Next / Qwen3.5 / Nemotron-H pools, MXFP4 / ModelOpt /
w8a8, MI300 / MI355, Blackwell): held by an earlier set (sglang#11716, #11830, #15909, #18263, #27537, #29853, #13023,
#24453, #17157, #10622, #30609, #36583, #40558, #6001, #8538, #2384 and #7691 in the diagnose corpus, ktransformers
#1757 / #1804 / #1870 / #1969, kvcached#101, vllm#21348, InferenceX#2128, the ajith-sirra-amd GLM-5 file, whose 23
revisions hold no run beyond the two held, llm-d's Qwen3-32B GKE snapshot, datawhalechina/self-llm's Qwen3.5-4B);
unified memory (Ling-3.0-tiny and DeepSeek-V4 DSpark on DGX Spark, Qwen3.8-27B NVFP4 on GB10, Nemotron-3 Nano Omni on
four GB10 nodes); a model outside oomkit's catalog or a checkpoint not named (granite-4.0-h-micro, GLM-5.3-Flash on
AMD cards, a Qwen3.8-27B AWQ checkpoint on an RTX 4090D); a fork or runtime patch (a TP3 Qwen3.6-27B-FP8 capture in a
"planner" fork of SGLang, a pdmux fork's Qwen3.x hybrid log, kvcached's elastic pools, EschaLabs' INT2 KV runtime);
a figure with no model or GPU named (the compute-mamba-ratio skill's TP8 B300 hybrid); no memory figure in the stored
text (sglang PR #40526's Qwen3-8B TP2 and gpt-oss-20b reference logs: no revision of SKILL.md after it can be
read from the index; servekit's PP runs); a log whose repository the index does not name (a Gemma-4-26B-A4B FP8
conversion on an RTX 5090; a Grok-2 FP8 TP8 start-up on 8 x H100 under lmsysorg/sglang:v0.5.2rc2, a blog post stored
as a repository file; Qwen3-14B at TP4 on 4 x RTX 4090 from a checkout of 2026-06-14 on torch 2.9.1, a Chinese
baseline report; Qwen3-0.6B on an RTX 5080 in a MinerU image README: each would hold a TP >= 2 or Blackwell figure,
none can be cited); a patched image (GLM-5-NVFP4-MTP on 8 x RTX PRO 6000
in Visual-Synthesizer/rtx6kpro, three runtime patches and an edited log).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from oomkit.engines import sglang as sg
from oomkit.hardware.catalog import devices_for_names
from oomkit.model.resolve import resolve
from oomkit.units import GiB
from tests.sglang_heldout import (
    assert_avail_mem,
    assert_every_fixture_cites_its_thread,
    assert_weights,
    line_value,
    load,
)

HERE = Path(__file__).parent / "fixtures" / "engine_logs" / "sglang" / "heldout17"
E = "qwen3-8b-b200-defaults-main-2026-04-27-sglang-skill"
Q8_K_CELL = 36 * 8 * 128 * 2  # K of a token: 36 layers x 8 KV heads x 128 x 2 B
TOKENS_LIMIT = 0.03


def fixture(stem: str) -> dict:
    return load(HERE, stem)


def _e():
    """As a user runs it: the catalog's B200, every flag at its default, the release of the log's date."""
    return sg.ENGINE.estimate(resolve("Qwen/Qwen3-8B", tag_formats=False), devices_for_names("B200"),
                              sg.SGLangSettings(engine_version="0.5.10"))


def test_every_fixture_cites_its_thread():
    assert_every_fixture_cites_its_thread(HERE)


def test_e_defaults():
    # trtllm_mha with 64-token pages on SM100, 16,384-token chunks, 52 decode graphs (to 512) and 74 prefill sizes (to
    # 16,384)
    p = fixture(E)["printed"]
    ev = _e().engine_view
    assert (ev["attention_backend"], ev["page_size"]) == (p["attention_backend"], p["page_size"])
    assert ev["chunked_prefill_size"] == p["chunked_prefill_size"]
    log = ev["log"].split("\n")
    bs = next(x for x in log if x.startswith("Capture cuda graph bs "))
    tokens = next(x for x in log if x.startswith("Capture cuda graph num tokens "))
    assert bs.count(",") + 1 == p["decode_graphs"] and tokens.count(",") + 1 == p["prefill_graphs"]


def test_e_weights_and_pool():
    # 15.28 GiB of weights against 15.28; 997,248 tokens against 992,896 (+0.44 %)
    p = fixture(E)["printed"]
    est = _e()
    assert_weights(est, p["weights_mem_gb"])
    got = est.engine_view["max_total_num_tokens"]
    assert abs(got - p["max_total_num_tokens"]) / p["max_total_num_tokens"] < TOKENS_LIMIT


def test_e_k_size_of_the_printed_pool():
    # the K buffer holds size + page_size tokens (memory_pool.py MHATokenToKVPool._create_buffers, 0.5.10 sdist):
    # (992,896 + 64) x 73,728 B = 68.18 GiB
    p = fixture(E)["printed"]
    assert f"{(p['kv_cache_tokens'] + p['page_size']) * Q8_K_CELL / GiB:.2f}" == p["k_size_gb"]


@pytest.mark.parametrize("prefix, key", [
    ("Load weight begin.", "load_begin_avail_gb"),  # 178.26 / 177.57
    ("Load weight end.", "weights_avail_after_gb"),  # 162.98 / 162.30
    ("Memory pool end.", "pool_end_avail_gb"),  # 25.40 / 25.26
    ("Capture cuda graph begin.", "capture_begin_avail_gb"),  # 24.37 / 24.14
    ("Capture cuda graph end.", "decode_capture_avail_after_gb"),  # 23.33 / 23.54
    ("Capture piecewise CUDA graph end.", "prefill_capture_avail_after_gb"),  # 19.77 / 21.22 (-0.8 % of the card)
])
def test_e_free_memory(prefix, key):
    assert_avail_mem(_e(), prefix, fixture(E)["printed"][key])


@pytest.mark.parametrize("prefix, key", [
    pytest.param("Capture cuda graph end.", "decode_capture_mem_usage_gb", marks=pytest.mark.xfail(
        strict=True, reason="Qwen3-8B's 52 decode graphs print 0.60 GB on the torch 2.9.1 stack (main of 2026-04-27, "
        "trtllm_mha on a B200); oomkit's torch 2.9 releases' rest, 0.408 MiB a graph and layer, gives 1.04 GiB (+73 %); "
        "read as 0.5.11 (CG_POOL_T211 / CG_KEPT_T211, fitted on tests/test_sglang_heldout14.py D, the same command a "
        "month later) it gives 0.58 GiB")),
    pytest.param("Capture piecewise CUDA graph end.", "prefill_capture_mem_usage_gb", marks=pytest.mark.xfail(
        strict=True, reason="Qwen3-8B's 74 piecewise prefill sizes (to 16,384) print 2.32 GB, as on the B300 of "
        "tests/test_sglang_heldout14.py D; oomkit gives 3.55 GiB (+53 %): PREFILL_GRAPH_PER_HIDDEN's sqrt(largest / "
        "512) growth past 8,192 tokens is vLLM's")),
])
def test_e_graphs(prefix, key):
    got = line_value(_e(), prefix, "mem usage=")
    want = float(fixture(E)["printed"][key])
    assert abs(got - want) / want < 0.05


def test_e_verdict():
    # the run starts ('The server is fired up and ready to roll!'); so does oomkit's estimate
    assert _e().engine_view["max_total_num_tokens"] > 0
