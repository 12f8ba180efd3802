"""SGLang runs whose thread contradicted oomkit's verdict (held out: no figure here was used to fit a constant).
Fixtures: tests/fixtures/engine_logs/sglang/contradicted/, each with its URL, the release, the GPU, the command and
the thread's lines verbatim.

| thread | release | GPUs | the thread | oomkit before | after |
|---|---|---|---|---|---|
| sglang#6817 Llama 4 Scout, --tp 8 --context-length 1000000 --mem-fraction-static 0.8 | 0.4.6.post5 | 8x H200 | out of memory while launch_server starts ("the same OOM error as #5755") | fits, 0 MiB left (fraction 0.72, 10.41 GB left after the capture, largest context 1,427,456) | does not fit: CUDA graph capture needs 21,063 MiB with 20,426 left (fraction 0.80; largest context 974,336) |

What oomkit missed, read in the 0.4.6.post5 wheel:
- configs/model_config.py ModelConfig.__init__ turns multimodal off for Llama4ForConditionalGeneration unless
  --enable-multimodal is given (mm_disabled_models, from 0.4.5.post1), so ModelRunner.is_multimodal is False and
  model_runner.py model_specific_adjustment does not lower the given 0.8 by 0.90: the KV pool takes 80 % of the free
  memory before the weights, not 72 %, and 11.2 GiB less is left for the req_to_token table (2,049 rows x 1,000,004 x
  4 B = 7.63 GiB) and the capture (settings.py multimodal_off, runner_fraction).
- Llama 4 has no hybrid SWA pool before 0.5.8 (one MHATokenToKVPool of all 48 layers up to 0.4.8; opt-in
  --hybrid-kvcache-ratio from 0.4.9; is_hybrid_swa_model lists Llama4ForConditionalGeneration from 0.5.8): the pool
  holds 3.65 M tokens of 24,576 B (3.71 M before the vision-tower rule below), not 4.37 M "full" tokens, and
  max_running_requests stays 2,049 (settings.py ERAS llama4_swa_pool, kv.py _hybrid_swa_disabled).
- Llama 4's vision tower (models/mllama4.py): transformers' Llama4VisionModel, whole on every rank, up to 0.4.9
  (25.30 -> 26.72 GB of weights a rank here); none by default from 0.4.10 (built only with --enable-multimodal;
  weights.py tower_rank_bytes). It moves the pool, not the verdict: the fraction is of the memory free before the
  weights.

The thread does not say which phase died; oomkit's reading is the CUDA-graph capture (FA3, 35 sizes to 256: 16.9 GB of
per-size page-table copies at 1,000,000 tokens, 3.4 GB of per-graph logits). FA3's init_cuda_graph_state also keeps
page_table_draft_decode and encoder_page_table (max_bs x context_len int32 each, 1.02 GB apiece here) and, with
attention_chunk_size, a local_block_table of max_bs x ceil(context / 8,192) x 8,192 int32 (1.03 GB) that oomkit does
not count by name (the fitted rest per graph and layer covers the FA3 runs it was fitted on), which would only deepen
the shortfall.

sglang#5755, the run #6817 points to, fails on an 80.04 GiB allocation at the default 10,485,760 context: the
req_to_token table, 2,049 x 10,485,764 x 4 B.
"""

from __future__ import annotations

import json
from pathlib import Path

from oomkit.cli import main

FIXTURES = Path(__file__).parent / "fixtures" / "engine_logs" / "sglang" / "contradicted"
GiB = 1 << 30


def load(stem: str) -> dict:
    return json.loads((FIXTURES / f"{stem}.json").read_text(encoding="utf-8"))


def check(command: str, gpu: str, version: str, capsys) -> tuple[int, dict]:
    rc = main(["check", command, "--gpu", gpu, "--engine-version", version, "--json"])
    out, _ = capsys.readouterr()
    return rc, json.loads(out)


def test_fixture_is_the_thread():
    d = load("sglang-6817-llama4-scout-1m-8xh200")
    assert d["source"] == "https://github.com/sgl-project/sglang/issues/6817"
    assert "`sglang==0.4.6.post5`" in d["lines"][1]
    assert d["command"] in d["lines"][2]
    assert "8xH200" in d["lines"][0] and "OOM" in d["lines"][3]
    assert "Tried to allocate 80.04 GiB" in d["referenced"]["lines"][0]


def test_sglang_6817_llama4_scout_1m_dies_at_startup(capsys):
    """8x H200, 0.4.6.post5: the thread's launch runs out of memory while the server starts."""
    d = load("sglang-6817-llama4-scout-1m-8xh200")
    rc, r = check(d["command"], "H200", d["engine_version"], capsys)
    assert rc == 1 and r["fits"] is False
    view = r["estimate"]["engine_view"]
    failed = view["failed_phase"]
    assert failed is not None, "the thread dies during start-up, not at serving time"
    assert failed["phase"] in {p["phase"] for p in view["phases"]}
    # oomkit's reading of the phase (the thread does not name it): the capture, after the KV pool
    assert failed["phase"] == "CUDA graph capture" and failed["after_kv"] is True
    # the given 0.8 stands: Llama 4's multimodal path is off by default in this release
    assert view["mem_fraction_static"] == 0.8
    # --context-length 1000000: the req_to_token table is 2,049 rows of context_len + 4 int32 (model_runner.py
    # ReqToTokenPool(size=max_num_reqs + 1, max_context_len=context_len + 4)), the same rule as sglang#5755's 80.04 GiB
    assert view["max_running_requests"] == 2049
    assert view["req_to_token_bytes"] == 2049 * (1_000_000 + 4) * 4


def test_sglang_5755_req_to_token_is_the_80_04_gib_allocation(capsys):
    """sglang#5755, the error #6817 reports again: "Tried to allocate 80.04 GiB" at the default context. Its launch line
    as typed: --model is argparse's prefix of --model-path in 0.4.6 (--model itself from 0.4.9)."""
    d = load("sglang-6817-llama4-scout-1m-8xh200")["referenced"]
    rc, r = check(d["command"], "H100", "0.4.6", capsys)
    view = r["estimate"]["engine_view"]
    assert round(view["req_to_token_bytes"] / GiB, 2) == 80.04
    assert rc == 1 and r["fits"] is False


def test_llama4_vision_tower_whole_on_every_rank_up_to_0_4_9_none_from_0_4_10(capsys):
    """models/mllama4.py: transformers' Llama4VisionModel built unconditionally up to 0.4.9 (not sharded over TP);
    from 0.4.10 only with --enable-multimodal. The checkpoint's tower (vision_config) is the difference per rank."""
    from oomkit.model.resolve import resolve

    d = load("sglang-6817-llama4-scout-1m-8xh200")
    tower = sum(t.nbytes(2) for t in resolve(d["model"]).towers)  # bfloat16
    weights = {}
    for version in ("0.4.6.post5", "0.4.9", "0.4.10"):
        _, r = check(d["command"], "H200", version, capsys)
        weights[version] = r["estimate"]["engine_view"]["weights_bytes"]
    assert weights["0.4.6.post5"] == weights["0.4.9"]
    assert weights["0.4.9"] - weights["0.4.10"] == tower


def test_enable_multimodal_turns_llama4s_multimodal_path_back_on(capsys):
    """--enable-multimodal (0.4.6+): ModelRunner.is_multimodal is True again, so the given fraction is lowered by 0.90
    ("Automatically reduce --mem-fraction-static to 0.720 because this is a multimodal model" for 0.8), while chunked
    prefill stays on (is_multimodal_chunked_prefill_supported does not refuse Llama4ForConditionalGeneration,
    0.4.6.post5 read); from 0.4.10 it also builds the vision tower."""
    d = load("sglang-6817-llama4-scout-1m-8xh200")
    _, off = check(d["command"], "H200", "0.4.6.post5", capsys)
    _, on = check(d["command"] + " --enable-multimodal", "H200", "0.4.6.post5", capsys)
    assert off["estimate"]["engine_view"]["mem_fraction_static"] == 0.8
    assert round(on["estimate"]["engine_view"]["mem_fraction_static"], 3) == 0.720
    assert on["estimate"]["engine_view"]["chunked_prefill_size"] == 8192
    _, off10 = check(d["command"], "H200", "0.4.10", capsys)
    _, on10 = check(d["command"] + " --enable-multimodal", "H200", "0.4.10", capsys)
    assert on10["estimate"]["engine_view"]["weights_bytes"] > off10["estimate"]["engine_view"]["weights_bytes"]
