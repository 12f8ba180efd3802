"""vLLM's own CUDA graph estimate ("Estimated CUDA graph memory: X GiB total") for runs that capture PIECEWISE graphs
alone, on RTX 3090s (engines/vllm/phases.py piecewise_only_ampere_geforce, CG_EST_PW_FIRST_AMPERE and
CG_EST_PW_PER_LAYER_AMPERE). Public club-3090 logs of Qwen3.6-27B-class models (64 decoder layers), kept under
tests/fixtures/engine_logs/vllm/piecewise_estimate/ with their URLs and lines:

| log | role | GPUs | graphs | printed | oomkit (before -> after) |
|---|---|---|---|---|---|
| club-3090 PR #44 | fit | 4 x 3090, TP 4 | PIECEWISE=7 to 32 | 0.17 GiB | 0.28 -> 0.17 |
| club-3090#434 | fit | 2 x 3090 NVLink, TP 2 | PIECEWISE=3 + FULL=2 | 0.094 (notice) | not a PIECEWISE-only run: its FULL first sample is taken for the PIECEWISE one |
| club-3090#104 turn 13 | held out (tests/test_startup_heldout9.py) | 2 x 3090, TP 2 | PIECEWISE=5 to 16 | 0.13 | 0.28 -> 0.13 |
| club-3090#127 | held out | 4 x 3090 of 6, TP 4 | 7 to 32 (PR #44's compose, assumed) | 0.167 (notice) | 0.28 -> 0.17 |
| club-3090#758 | held out | 2 x 3090, TP 2 | PIECEWISE=15 to 96 | 0.40 | 0.29 -> 0.32 (-19 %) |

What the source says (gpu_model_runner.py profile_cudagraph_memory and _warmup_and_capture, read in the 0.24.0
wheel): the two largest sizes of each mode are captured into a throwaway pool and measured by free memory; the
estimate is max(first samples) + (n - 1) x max(second sample, 1 MiB) per mode; force_attention and profile_seq_lens
are set for FULL only, so a PIECEWISE sample runs no attention and no gated-delta-net core (they are the splitting
ops, config/compilation.py _attention_ops) and holds the pieces' graphs (one per layer and one more) and their pool.
The largest graphs (#758, 96 tokens) cost more than the line through the small ones gives: the pool grows with the
size, which the two constants do not follow.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oomkit.engines.vllm import ENGINE, VllmSettings
from oomkit.engines.vllm.phases import (
    CG_EST_PW_FIRST_AMPERE,
    CG_EST_PW_PER_LAYER_AMPERE,
    piecewise_only_ampere_geforce,
)
from oomkit.units import GiB, MiB
from tests.startup_heldout import first, gpus
from tests.test_sglang_heldout_set3 import AUTOROUND_INT4
from tests.test_vllm_startup import spec_of

HERE = Path(__file__).parent / "fixtures" / "engine_logs" / "vllm" / "piecewise_estimate"
LOGS = json.loads((HERE / "club3090-piecewise-estimates.json").read_text(encoding="utf-8"))
BAND = 0.25  # tests/test_vllm_cudagraph.py's band for vLLM's own estimate


def estimate(stem: str, gpu: str = "NVIDIA GeForce RTX 3090", version: str = "0.21.0"):
    fx = LOGS[stem]
    s = VllmSettings(engine_version=version, tensor_parallel_size=fx["tensor_parallel_size"],
                     cudagraph_mode="PIECEWISE", cudagraph_capture_sizes=fx["capture_sizes"], max_model_len=65536,
                     kv_cache_dtype="fp8_e5m2", max_num_seqs=4)
    return ENGINE.estimate(spec_of("Qwen/Qwen3.6-27B", AUTOROUND_INT4), gpus(gpu, fx["tensor_parallel_size"]), s)


@pytest.mark.parametrize("stem", ["club3090-pr44-4x3090-tp4-piecewise7", "club3090-issue127-6x3090-tp4",
                                  "club3090-issue758-2x3090-tp2-piecewise15"])
def test_piecewise_only_estimate_on_rtx_3090s(stem):
    est = estimate(stem)
    assert est.engine_view["cudagraph_piecewise_graphs"] == len(LOGS[stem]["capture_sizes"])
    assert est.engine_view["cudagraph_full_graphs"] == 0
    ours = first(est.engine_view, "cudagraph_bytes") / GiB
    printed = LOGS[stem]["estimate_gib"]
    assert abs(ours - printed) / printed < BAND, f"{ours:.3f} vs {printed:.2f} GiB"


def test_the_two_constants_reproduce_the_fit_logs():
    # fitted by hand on two logs: PR #44 (7 graphs, 0.17 GiB) and #434 (3 + 2 graphs, 0.0040 x 23.54 GiB = 0.094
    # GiB, its FULL further graph at vLLM's 1 MiB floor): first + 6 x share = 0.17 GiB, first + 2 x share + 1 MiB =
    # 0.094 GiB, share = 64 layers x CG_EST_PW_PER_LAYER_AMPERE
    share = 64 * CG_EST_PW_PER_LAYER_AMPERE
    assert abs((CG_EST_PW_FIRST_AMPERE + 6 * share) / GiB - 0.17) < 0.005
    notice = (0.9200 - 0.9160) * 23.54
    assert abs((CG_EST_PW_FIRST_AMPERE + 2 * share + MiB) / GiB - notice) < 0.005


def test_the_rule_keeps_to_the_gpus_it_was_read_on():
    # the same PIECEWISE-only run on an RTX 4090 (SM 8.9) and an RTX 5090 (SM 12.0) keeps the one-off by SM count
    # (phases.py first_capture); only the Ampere GeForce part takes the rule
    r3090 = estimate("club3090-pr44-4x3090-tp4-piecewise7")
    for gpu in ("NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 5090"):
        other = estimate("club3090-pr44-4x3090-tp4-piecewise7", gpu=gpu)
        assert first(other.engine_view, "cudagraph_bytes") > first(r3090.engine_view, "cudagraph_bytes") + 100 * MiB
    # and FULL graphs beside the PIECEWISE ones take the FULL one-off as before
    from oomkit.engines.vllm.config import resolve

    spec = spec_of("Qwen/Qwen3.6-27B", AUTOROUND_INT4)
    s = VllmSettings(engine_version="0.21.0", tensor_parallel_size=2)
    r = resolve(spec, gpus("NVIDIA GeForce RTX 3090", 2), s)
    assert not piecewise_only_ampere_geforce(r, 3, 2)
    assert piecewise_only_ampere_geforce(r, 5, 0)


def test_fixtures_are_cited():
    for stem, fx in LOGS.items():
        assert fx["source"].startswith("https://github.com/noonghunna/club-3090/"), stem
        assert fx["quoted"] and fx["role"] in ("fit", "held out") and fx["estimate_gib"] > 0, stem
