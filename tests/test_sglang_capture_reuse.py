"""The decode capture after the prefill one (SGLang 0.5.14+, engines/sglang/phases.py after_prefill_capture): the
decode graphs' logits buffer is allocated in the prefill window from 0.5.15 (prefill_cuda_graph_runner.py
capture_prepare asks graph_shared_output.py for it first), and from 0.5.19 the two captures share one stream as well
as one pool (runner_utils/pool.py get_or_create_global_graph_capture_stream), so the decode graphs' activations come
out of the blocks the prefill graphs freed and each decode graph adds only its kept share (on one GPU from 0.5.11
CG_KEPT_T211, read off the Qwen3-30B-A3B-FP8 log's progress lines; under TP CG_KEPT_PER_GRAPH_LAYER, read off
sglang#11716's).

Against the two logs that print both captures (tests/test_sglang_heldout12.py, figures there): Qwen3-32B at 0.5.19,
decode 0.13 GB printed, oomkit 1.07 -> 0.43 -> 0.135 GiB, prefill 2.84 printed, 2.82 -> 2.97 (strict xfail: +4.6 %);
Qwen3.8-27B-FP8 at 0.5.18 (its own capture stream), decode 0.10 GB printed, 0.25 -> 0.23 -> 0.103 GiB, free after the
decode graphs 8.83 GiB against 8.90, then 8.94.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from oomkit.engines.sglang.phases import (
    CG_KEPT_PER_GRAPH_LAYER,
    CG_KEPT_T211,
    CG_PER_GRAPH_LAYER,
    CG_POOL_T211,
    GraphMemory,
    after_prefill_capture,
    capture_bs,
    cuda_graph_parts,
)
from oomkit.engines.sglang.settings import SGLangSettings, parse_version
from oomkit.units import GiB, MiB
from tests.test_sglang_heldout12 import _qwen32, _qwen38

Q30 = (Path(__file__).parent / "fixtures" / "engine_logs" / "sglang" / "heldout13"
       / "qwen3-30b-a3b-fp8-h100-prefill-decode-graphs-0.5.18-vllm-hybrid.json")

PR11716 = Path(__file__).parent / "fixtures" / "engine_logs" / "sglang" / "llama-3.1-70b-tp8-h200-pr11716.json"
PARTS = GraphMemory(logits=100 * MiB, index_tables=8 * MiB, rest=900 * MiB)


def test_kept_share_is_read_off_the_progress_lines():
    # sglang#11716 (Llama-3.1-70B, 80 layers a rank): 10.30 GB free before bs=216 and 9.86 before bs=1, 52 sizes
    # largest first, so the 30 graphs 216 .. 2 lie between the two readings
    quoted = json.loads(PR11716.read_text(encoding="utf-8"))["quoted"]
    avail = {int(bs): float(gbs) for bs, gbs in re.findall(r"bs=(\d+) avail_mem=([\d.]+) GB", quoted)}
    sizes = json.loads(re.search(r"Capture cuda graph bs (\[[\d, ]+\])", quoted).group(1))
    assert len(sizes) == 52
    graphs = sum(1 for bs in sizes if 1 < bs <= 216)
    assert graphs == 30
    per = (avail[216] - avail[1]) * GiB / graphs / 80
    assert abs(CG_KEPT_PER_GRAPH_LAYER - per) < 1024


def test_one_gpu_kept_share_is_read_off_the_qwen3_30b_progress_lines():
    # Qwen3-30B-A3B-FP8 on one H100, 0.5.18, 48 layers, 36 decode sizes largest first: 10.64 GB free before the second
    # graph, 10.55 before the last, so the 34 graphs between take 0.09 GB (0.0565 MiB a graph and layer)
    p = json.loads(Q30.read_text(encoding="utf-8"))["printed"]
    drop = float(p["decode_second_graph_avail_before_gb"]) - float(p["decode_last_graph_avail_before_gb"])
    per = drop * GiB / 34 / 48
    assert abs(CG_KEPT_T211 - per) < 1024
    assert CG_KEPT_T211 < CG_KEPT_PER_GRAPH_LAYER / 3


def test_rule_by_release():
    # 0.5.14: separate pools, the logits buffer in the decode window
    assert after_prefill_capture(PARTS, parse_version("0.5.14"), prefill_captured=True, graphs=36, layers=64) == (
        PARTS, 0)
    # 0.5.15-0.5.18: the logits buffer moves to the prefill window; a fresh capture stream keeps the rest
    for v in ("0.5.15", "0.5.18"):
        parts, moved = after_prefill_capture(PARTS, parse_version(v), prefill_captured=True, graphs=36, layers=64)
        assert moved == 100 * MiB and parts.logits == 0 and parts.rest == PARTS.rest
    # 0.5.19+: one stream, the decode graphs' activations from the prefill pool: the kept share only (one GPU's from
    # 0.5.11, a TP rank's read off sglang#11716)
    for v in ("0.5.19", "0.5.23"):
        parts, moved = after_prefill_capture(PARTS, parse_version(v), prefill_captured=True, graphs=36, layers=64)
        assert moved == 100 * MiB and parts.index_tables == 8 * MiB
        assert parts.rest == CG_KEPT_T211 * 36 * 64
        parts, _ = after_prefill_capture(PARTS, parse_version(v), prefill_captured=True, graphs=36, layers=64, tp=2)
        assert parts.rest == CG_KEPT_PER_GRAPH_LAYER * 36 * 64
    # no prefill graphs (disabled, speculative, a multimodal model off the allowlist): the decode capture alone
    assert after_prefill_capture(PARTS, parse_version("0.5.19"), prefill_captured=False, graphs=36, layers=64) == (
        PARTS, 0)


def test_qwen32_logits_buffer_in_the_prefill_window():
    # 0.5.19: the (256 decode rows, 151,936) float32 buffer is in "Capture target prefill CUDA graph ... mem usage",
    # not in the decode line
    est = _qwen32()
    ev = est.engine_view
    assert ev["cuda_graph_parts_bytes"]["logits"] == 0
    rows = max(ev["cuda_graph_bs"])
    assert rows * 151936 * 4 == 155582464
    decode = ev["cuda_graph_parts_bytes"]
    assert decode["rest"] == CG_KEPT_T211 * len(ev["cuda_graph_bs"]) * 64


def test_qwen38_own_stream_keeps_the_decode_rest():
    # 0.5.18: the decode capture's own stream takes no prefill block; only the logits buffer moves
    ev = _qwen38().engine_view
    assert ev["cuda_graph_parts_bytes"]["logits"] == 0
    assert ev["cuda_graph_parts_bytes"]["rest"] > CG_KEPT_T211 * len(ev["cuda_graph_bs"]) * 64


def test_decode_rest_by_release_tp_and_platform():
    # engines/sglang/phases.py: from 0.5.11 (torch 2.11 / CUDA 13 wheels) one CUDA GPU's rest is the largest graph's
    # bf16 logits rows and CG_POOL_T211, once, plus CG_KEPT_T211 a graph and layer; 0.5.10, a TP rank or ROCm keep
    # CG_PER_GRAPH_LAYER a graph and layer
    def rest(v: str, tp: int = 1, hip: bool = False) -> tuple[int, int]:
        s = SGLangSettings(tp_size=tp, attention_backend="fa3")
        sizes = capture_bs(256, parse_version(v), s=s, gpu_mib=81559, hip=hip)
        parts = cuda_graph_parts(256, s, parse_version(v), 151936, 40960, 1, layers=36, gpu_mib=81559, hip=hip)
        return parts.rest, len(sizes)

    got, n = rest("0.5.11")
    logits = -(-256 * 151936 * 2 // (2 * MiB)) * 2 * MiB  # its own segment, rounded to 2 MiB
    assert got == logits + CG_POOL_T211 + CG_KEPT_T211 * n * 36
    for v, tp, hip in (("0.5.10", 1, False), ("0.5.11", 2, False), ("0.5.19", 4, False), ("0.5.12", 1, True)):
        got, n = rest(v, tp, hip)
        assert got == CG_PER_GRAPH_LAYER * n * 36, (v, tp, hip)
