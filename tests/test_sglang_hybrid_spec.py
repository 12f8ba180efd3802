"""SGLang: speculative decoding (NEXTN / EAGLE over the checkpoint's MTP head) on hybrid GDN models (Qwen3.5 / 3.6 /
3.8), the way their model cards run them (`--speculative-algorithm NEXTN --speculative-num-steps 3
--speculative-eagle-topk 1 --speculative-num-draft-tokens 4`).

The rule (kv.py _handle_max_mamba_cache_spec) mirrors kv_cache_configurator.py _handle_max_mamba_cache (0.5.16-
0.5.23 read; model_runner_kv_cache_mixin.py handle_max_mamba_cache in 0.5.14-0.5.15): the state pool's K slots and
the verify pass's intermediate states, (min(max_running_requests, K // r) + 1) x D x mamba_cache_per_req, share the
mamba_full_memory_ratio / (1 + ratio) budget, K = (budget - per_req x (1 + D)) // (per_req x (1 + D / r)) from
0.5.17 (0.5.14-0.5.16: budget // (per_req x (1 + D / r)), no padding slot); r, the state slots a running request
holds (_calculate_mamba_ratio), is 3 + 2 for Qwen3.5 / Qwen3-Next / Nemotron-H from 0.5.14, where
--mamba-radix-cache-strategy auto becomes extra_buffer with the overlap scheduler on. The expected figures below are worked
from those source lines and Qwen3.5-27B's config by hand, not read from oomkit.

Public logs (see "not held" in each test):
- club-3090's Qwen3.8-27B AutoRound int4 MTP compose (2x RTX 3090, TP2, EAGLE over the MTP head with the draft path
  given, 4 steps, fp8 KV), whose measured boot table holds sglang#32468's stock-0.5.19 pair (409,552 tokens, K 55):
  at the printed tokens oomkit's K is the printed one on all three auto-fit rows (26 / 55 / 63), and end to end the
  pools come within +1.85 % of the GPU on all four rows (issue 14's bar: 3 %).
- club-3090#1261 (2x RTX 5090, TP2, fp8 KV): the draft's pool is 1.08 GiB of K at 454,112 tokens, five times the
  0.22 GiB of one full-attention layer; 0.5.19's _build_hybrid_linear_kv_pool gives an MTP draft worker one layer
  (full_attention_layer_ids=[0] "if draft worker, we only need 1 attention layer's kv pool"), so that draft is a
  separate five-layer model (its config is not in the excerpt), not the checkpoint's MTP head.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oomkit.engines import sglang as sg
from oomkit.errors import OomkitError
from oomkit.units import GiB, MiB
from tests.test_sglang_heldout4 import gpus
from tests.test_sglang_heldout_set3 import AUTOROUND_INT4, RTX3090
from tests.test_vllm_startup import spec_of

FIXTURES = Path(__file__).parent / "fixtures" / "engine_logs" / "sglang"
H100 = ("NVIDIA H100 80GB HBM3", 81559 * MiB)

# Qwen3.5-27B's text_config: 48 GDN layers (16 key heads x 128, 48 value heads x 128, conv kernel 4) and 16 full-
# attention layers (4 KV heads x 256); mamba_ssm_dtype "float32", conv states in bf16. One rank of TP2:
CONV_TP2 = (16 * 128 * 2 + 48 * 128) // 2 * (4 - 1) * 2  # 30,720 B a layer
SSM_TP2 = 48 // 2 * 128 * 128 * 4  # 1,572,864 B a layer
PER_REQ_TP2 = 48 * (CONV_TP2 + SSM_TP2)  # 76,972,032 B
CELL_TP2_FP8 = 16 * (4 // 2) * 256 * 2 * 1  # K + V of 16 layers, fp8: 16,384 B a token


# _calculate_mamba_ratio for Qwen3.5 from 0.5.14: 3 + 2, --mamba-radix-cache-strategy auto resolving to extra_buffer
# with the overlap scheduler on (server_args.py _handle_mamba_radix_cache; arg_groups/overrides.py from 0.5.15)
RATIO = 5


def expected(rest: int, d: int, running: int, padded: bool) -> tuple[int, int]:
    """(max_mamba_cache_size, max_total_num_tokens) by _handle_max_mamba_cache's lines, then rest // cell."""
    p, pad = PER_REQ_TP2, int(padded)
    budget = rest / GiB * 0.9 / 1.9 * GiB
    k = int((budget - pad * p * (1 + d)) // (p * (1 + d / RATIO)))
    capped = min(running, k // RATIO)
    left = rest / GiB - p * (capped + pad) * d / GiB - (k + pad) * p / GiB
    return k, int(int(left * GiB) // CELL_TP2_FP8)


@pytest.mark.parametrize("version,padded", [("0.5.19", True), ("0.5.23", True), ("0.5.17", True),
                                            ("0.5.16", False), ("0.5.14", False)])
def test_joint_solve_of_state_slots_and_intermediate_states(version, padded):
    s = sg.SGLangSettings(tp_size=2, kv_cache_dtype="fp8_e4m3", speculative_algorithm="NEXTN",
                          speculative_num_steps=3, speculative_eagle_topk=1, speculative_num_draft_tokens=4,
                          max_running_requests=48, engine_version=version)
    rest = 10 * GiB
    pool = sg.size_pool(spec_of("qwen3.5-27b", {}), s, kv_budget=rest)
    k, tokens = expected(rest, 4, 48, padded)
    assert (pool.max_mamba_cache_size, pool.max_total_num_tokens) == (k, tokens)
    capped = min(48, k // RATIO)
    assert pool.spec_state_bytes == (capped + int(padded)) * 4 * PER_REQ_TP2


def test_a_small_running_cap_holds_fewer_intermediate_states():
    # capped = min(max_running_requests, K // 5): with 4 requests the verify buffers hold 5 x D states
    s = sg.SGLangSettings(tp_size=2, kv_cache_dtype="fp8_e4m3", speculative_algorithm="NEXTN",
                          speculative_num_draft_tokens=4, max_running_requests=4, engine_version="0.5.19")
    pool = sg.size_pool(spec_of("qwen3.5-27b", {}), s, kv_budget=10 * GiB)
    assert (pool.max_mamba_cache_size, pool.max_total_num_tokens) == expected(10 * GiB, 4, 4, True)
    assert pool.spec_state_bytes == 5 * 4 * PER_REQ_TP2


def test_before_the_joint_solve_is_refused_not_guessed():
    s = sg.SGLangSettings(tp_size=2, speculative_algorithm="NEXTN", speculative_num_draft_tokens=4,
                          max_running_requests=48, engine_version="0.5.10")
    with pytest.raises(OomkitError, match="from 0.5.14 only"):
        sg.size_pool(spec_of("qwen3.5-27b", {}), s, kv_budget=10 * GiB)


def test_model_card_command_starts_with_a_one_layer_draft_pool():
    # Qwen3.6-27B's card: NEXTN, 3 steps, top-k 1, 4 draft tokens, on one H100 at 0.5.19: the run is sized (no
    # refusal), the draft's pool is one full-attention layer at the target's tokens (0.5.19
    # _build_hybrid_linear_kv_pool: full_attention_layer_ids=[0] for a draft worker), and the state pool carries the
    # verify buffers for min(48, K // 5) + 1 requests
    s = sg.SGLangSettings(speculative_algorithm="NEXTN", speculative_num_steps=3, speculative_eagle_topk=1,
                          speculative_num_draft_tokens=4, engine_version="0.5.19")
    est = sg.ENGINE.estimate(spec_of("qwen3.6-27b", {}), gpus(H100, 1), s)
    ev = est.engine_view
    tokens, k = ev["max_total_num_tokens"], ev["max_mamba_cache_size"]
    assert tokens > 0 and k > 0
    per_req = 48 * ((16 * 128 * 2 + 48 * 128) * 3 * 2 + 48 * 128 * 128 * 4)
    assert ev["intermediate_state_bytes"] == (min(48, k // RATIO) + 1) * 4 * per_req
    # one bf16 layer of 4 KV heads x 256, K and V, (tokens + 1 page) rows
    assert ev["draft_k_bytes"] == (tokens + 1) * 4 * 256 * 2


# ---------------------------------------------------------------------------------------------------------
# club-3090's Qwen3.8-27B AutoRound int4 MTP compose on 2x RTX 3090, TP2 (its measured boot-line table; the
# fixture keeps the lines and the command). Row 2's pair is the one sglang#32468's comment prints as stock 0.5.19.

COMPOSE = json.loads((FIXTURES / "hybrid_spec" / "qwen3.8-27b-autoround-int4-2x3090-tp2-mtp-compose-club3090.json")
                     .read_text(encoding="utf-8"))
CHECKPOINT = "/models/qwen3.8-27b-autoround-int4"
# the draft's one full-attention layer joins the target's cell, the path being given (pool_configurator.py
# DefaultPoolConfigurator: cell x (1 + 1 / 16)): 16 layers x 2 KV heads x 256 x (K + V) x 1 B, x 17 / 16
CELL_WITH_DRAFT = CELL_TP2_FP8 * 17 // 16
GPU_BYTES = RTX3090[1]
SSM_BYTES = {"float32": 4, "bfloat16": 2}


def per_req(dtype: str) -> int:
    return 48 * (CONV_TP2 + SSM_TP2 // 4 * SSM_BYTES[dtype])


def compose_settings(row: dict) -> sg.SGLangSettings:
    return sg.SGLangSettings(
        tp_size=2, kv_cache_dtype="fp8_e4m3", speculative_algorithm="EAGLE", speculative_num_steps=4,
        speculative_eagle_topk=1, speculative_num_draft_tokens=5, model_path=CHECKPOINT,
        speculative_draft_model_path=CHECKPOINT, chunked_prefill_size=2048, attention_backend="flashinfer",
        context_length=262144, mem_fraction_static=row["mem_fraction_static"],
        max_running_requests=row["max_running_requests"], mamba_ssm_dtype=row["mamba_ssm_dtype"],
        max_mamba_cache_size=row.get("max_mamba_cache_size_flag"), engine_version=row["engine_version"])


def row_id(row: dict) -> str:
    return f"{row['engine_version']}-mfs{row['mem_fraction_static']}-mrr{row['max_running_requests']}-" \
           f"{row['mamba_ssm_dtype']}" + (f"-K{row['max_mamba_cache_size_flag']}" if "max_mamba_cache_size_flag" in row
                                         else "")


@pytest.mark.parametrize("row", [r for r in COMPOSE["rows"] if "max_mamba_cache_size_flag" not in r], ids=row_id)
def test_compose_state_slots_at_the_printed_tokens(row):
    # the auto-fit pair, independent of the free memory: at the smallest budget that gives the printed
    # max_total_num_tokens, oomkit's max_mamba_cache_size is the printed one (26 / 55 / 63)
    spec = spec_of("qwen3.8-27b", AUTOROUND_INT4)
    s = compose_settings(row)
    lo, hi = 1 * GiB, 60 * GiB
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if sg.size_pool(spec, s, kv_budget=mid, draft_layers=1).max_total_num_tokens < row["max_total_num_tokens"]:
            lo = mid
        else:
            hi = mid
    pool = sg.size_pool(spec, s, kv_budget=hi, draft_layers=1)
    assert pool.cell_bytes == CELL_WITH_DRAFT
    assert (pool.max_total_num_tokens, pool.max_mamba_cache_size) == (row["max_total_num_tokens"],
                                                                      row["max_mamba_cache_size"])


@pytest.mark.parametrize("row", COMPOSE["rows"], ids=row_id)
def test_compose_end_to_end_within_issue_14_bar(row):
    # the whole estimate from the command on 2x RTX 3090: the memory the pools take (KV tokens x the cell with the
    # draft's layer, plus the state slots) within 3 % of the GPU's memory of what the boot printed. Measured: +0.35
    # GiB (+1.45 % of 24 GiB) on every row (oomkit's tokens 407,232 / 426,460 / 468,318 / 569,711 against 394,661 /
    # 409,552 / 451,633 / 548,520, K 28 / 57 / 65 / 20 against 26 / 55 / 63 / 20); +0.44 GiB before the multimodal
    # model's 100 MiB reservation (kv.py MM_KV_RESERVATION_MIB, 0.5.18+). The same 0.35 GiB whatever the fraction,
    # the SSM dtype or the release, so something outside the pools that oomkit leaves out (the draft's load is
    # printed 0.06 GiB above oomkit's, sglang#32468; the target's load is not printed); no constant was added for it
    est = sg.ENGINE.estimate(spec_of("qwen3.8-27b", AUTOROUND_INT4), gpus(RTX3090, 2), compose_settings(row))
    ev = est.engine_view
    d_tokens = ev["max_total_num_tokens"] - row["max_total_num_tokens"]
    d_slots = ev["max_mamba_cache_size"] - row["max_mamba_cache_size"]
    delta = d_tokens * CELL_WITH_DRAFT + d_slots * per_req(row["mamba_ssm_dtype"])
    assert abs(delta) / GPU_BYTES < 0.03, (f"{d_tokens:+,} tokens, {d_slots:+} slots: {delta / GiB:+.2f} GiB, "
                                           f"{delta / GPU_BYTES:+.2%} of the GPU")


@pytest.mark.parametrize("row", [r for r in COMPOSE["rows"] if "ssm_state_gb" in r], ids=row_id)
def test_compose_state_buffers_as_printed(row):
    # "Mamba Cache is allocated": conv_state and ssm_state hold K + 1 slots (the padding slot), the verify pass's
    # intermediate_ssm_state_cache + intermediate_conv_window_cache (min(1, K // 5) + 1) x 5 draft tokens; at the
    # printed K, to the print's two decimals (the conv window allocated deduplicated, a few MiB under the
    # configurator's dense charge that oomkit counts)
    est = sg.ENGINE.estimate(spec_of("qwen3.8-27b", AUTOROUND_INT4), gpus(RTX3090, 2), compose_settings(row))
    ev = est.engine_view
    slots = ev["max_mamba_cache_size"] + 1
    k = row["max_mamba_cache_size"] + 1
    assert round(ev["conv_state_bytes"] / slots * k / GiB, 2) == float(row["conv_state_gb"])
    assert round(ev["ssm_state_bytes"] / slots * k / GiB, 2) == float(row["ssm_state_gb"])
    printed = float(row["intermediate_ssm_state_cache_gb"]) + float(row["intermediate_conv_window_cache_gb"])
    assert abs(ev["intermediate_state_bytes"] / GiB - printed) <= 0.01 + 0.005


@pytest.mark.parametrize("row", [r for r in COMPOSE["rows"] if "memory_pool_end_avail_gb" in r], ids=row_id)
def test_compose_memory_pool_end_avail(row):
    # 0.5.19 at 0.90 / 1: 'Memory pool end' prints 2.38 GB (fp32) / 2.42 GB (bf16) free. The draft worker prints it
    # from its alloc_memory_pool (kv_cache_configurator.py configure) before eagle_worker_v2.py calls init_lm_head,
    # whose set_embed_and_head frees the draft's own embed_tokens + lm_head (2.37 GiB a rank): they are still held at
    # the line. oomkit: 2.31 / 2.31 GiB (-0.3 / -0.5 % of the GPU); 4.67 GiB (+9.4 %) while it took them as freed
    est = sg.ENGINE.estimate(spec_of("qwen3.8-27b", AUTOROUND_INT4), gpus(RTX3090, 2), compose_settings(row))
    got = est.engine_view["memory_pool_end_avail_bytes"] / GiB
    assert abs(got - float(row["memory_pool_end_avail_gb"])) < 0.03 * GPU_BYTES / GiB
    assert f"Memory pool end. avail mem={got:.2f} GB" in est.engine_view["log"]
    # freed before init_attention_backends: the capture starts with them back
    ev = est.engine_view
    back = ev["capture_begin_avail_bytes"] + ev["attention_backend_init_bytes"] - ev["memory_pool_end_avail_bytes"]
    assert back == 2 * 248320 * 5120 * 2 // 2  # embed_tokens + lm_head, vocab-parallel over TP2, bf16


@pytest.mark.xfail(strict=True, reason="club-3090#1261: the draft's pool prints K 1.08 GiB at 454,112 tokens, five "
                   "full-attention layers' worth (0.22 GiB each at TP2, fp8); an MTP draft worker on 0.5.19 gets one "
                   "layer, so the run's draft is a separate five-layer model whose config is not in the excerpt")
def test_club3090_1261_draft_pool_is_not_an_mtp_head():
    fx = json.loads((FIXTURES / "hybrid-gdn-27b-nvfp4-2x5090-tp2-fp8kv-mtp.json").read_text(encoding="utf-8"))
    p = fx["printed"]
    one_layer = (p["kv_cache_tokens"] + 1) * (4 // 2) * 256 * 1  # K of one layer, fp8, TP2
    assert round(one_layer / GiB, 2) == 0.22
    assert round(p["draft_k_size_bytes"] / one_layer) == 5
    assert abs(one_layer - p["draft_k_size_bytes"]) / p["draft_k_size_bytes"] < 0.03


def test_multimodal_pool_budget_leaves_the_vlm_cache_from_0_5_18():
    # kv_cache_configurator.py _profile_available_bytes (0.5.18-0.5.23): rest_memory -= mm_runtime_reservation_gb,
    # SGLANG_VLM_CACHE_SIZE_MB (100) for a model_config.is_multimodal model, nothing for a text model; 0.5.17 has none
    def rest(name: str, version: str) -> int:
        s = sg.SGLangSettings(mem_fraction_static=0.9, engine_version=version)
        return sg.size_pool(spec_of(name, {}), s, avail_after_load=20 * GiB, pre_load_free=23 * GiB).rest_bytes

    assert rest("qwen3.8-27b", "0.5.17") - rest("qwen3.8-27b", "0.5.18") == 100 * MiB
    assert rest("qwen3.8-27b", "0.5.23") == rest("qwen3.8-27b", "0.5.18")
    assert rest("qwen3-4b", "0.5.17") == rest("qwen3-4b", "0.5.18")
