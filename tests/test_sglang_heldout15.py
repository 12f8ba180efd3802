"""Held-out SGLang start-up figures, fifteenth set (tests/fixtures/engine_logs/sglang/heldout15/, each with its URL, the
lines kept verbatim and the release it names). No constant in oomkit was fitted on them; the printed figures were
recorded in the fixtures before oomkit was run, and the figures below are the logs', never oomkit's. "before" is
oomkit before this set was read, "after" with this set's commits.

A, B: nvidia/GLM-5.2-NVFP4 on 4 x GB300 (SM 10.3), TP4, --quantization modelopt_fp4, EAGLE (MTP) 5 / 1 / 6, the
checkpoint's fp8 KV cache: the A/B table of sgl-project/sglang#30531 ("[DSA] Skip indexer KV cache for skip-topk
layers", 2026-08-14), main at b95a746 (read as 0.5.17, its last release) against the PR's branch (read as 0.5.18, the
first wheel that skips both the index keys and the Indexer modules of GLM-5.2's 57 shared-indexer layers).

| log | figure | printed | before | after |
|---|---|---|---|---|
| A: main (0.5.17) | weights per rank | 107.74 GB | 106.41 GiB (-1.2 %) | 107.40 GiB (-0.3 %) |
| | target pool bytes a token (pool / tokens) | 55,225 | 61,465 (+11.3 %) | 55,225 |
| | target pool at the printed 2,574,848 tokens | 132.43 GB | 147.40 GiB | 132.43 GiB |
| | draft (EAGLE) pool at the printed tokens | 1.70 GB | 1.89 GiB | 1.70 GiB |
| | max_total_num_tokens on the catalog's GB300 | 2,574,848 | 2,835,904 (+10.1 %) | 2,816,832 (+9.4 %, strict xfail) |
| B: skip-topk (0.5.18) | weights per rank | 106.76 GB | 106.41 GiB (-0.3 %) | same |
| | target pool bytes a token | 47,702 | 53,941 (+13.1 %) | 47,701 |
| | target pool at the printed 3,002,752 tokens | 133.40 GB | 150.85 GiB | 133.40 GiB |
| | draft pool at the printed tokens | 1.98 GB | 2.20 GiB | 1.98 GiB |
| | max_total_num_tokens on the catalog's GB300 | 3,002,752 | 3,283,264 (+9.3 %) | same (strict xfail) |

Count, figure by figure: 2 of 10 before, 8 of 10 after.

The rules (engines/sglang/kv.py dsa_raw_latent, weights.py _shared_indexers): from 0.5.10 an fp8 DSA cache on compute
capability 10+ gets the trtllm prefill and decode backends, whose latent row calculate_mla_kv_cache_dim leaves at
kv_lora_rank + qk_rope_head_dim (576 B), not the 656 B scaled row of the flashmla kernels: 78 x (576 + 132) = 55,224 B
a token with every layer's index key (0.5.17), 78 x 576 + 21 x 132 = 47,700 without the shared layers' (0.5.18); and
up to 0.5.17 every attention layer builds an Indexer (57 unloaded bf16 indexers, 0.99 GiB a rank).

The end-to-end token counts stay apart because the catalog's GB300 is its nominal 288 GiB (294,912 MiB); nvidia-smi
on GB300 NVL72 nodes prints 284,208 MiB (277.55 GiB): on such a GPU oomkit gives 2,613,056 (+1.5 %) and 3,047,424
(+1.5 %) tokens. The hardware catalog is not this set's to change.

No constant was fitted on these figures: both rules are read from the wheels (0.5.9, 0.5.10 sdists; 0.5.15-0.5.19
wheels) and priced from the model's config.

Searched and not held: sglang#30310 (the same GLM-5.2-NVFP4 TP4 command on main of 2026-07-07, 2,430,528 -> 2,813,952
tokens, no GPU named); a GLM-5-FP8 TP8 log on MI355X under ROCm dev images of 0.5.8.post1 and a DeepSeek-V4 DP4 log
on MI300X that stops at an assertion in DeepSeekV4TokenToKVPool (the index names neither repository); Nemotron-H on
Intel XPUs (not CUDA); a Qwen3-8B SM100 log of the clean-startup-log skill's earlier revision (no commit to cite);
sglang#10622, #11716, #11830, #12978, #15909, #24453 (held by earlier sets).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from oomkit.engines import sglang as sg
from oomkit.hardware.catalog import devices_for_names
from oomkit.model.resolve import resolve
from oomkit.units import GiB
from tests.sglang_heldout import WEIGHTS_LIMIT, assert_every_fixture_cites_its_thread, gb, load

HERE = Path(__file__).parent / "fixtures" / "engine_logs" / "sglang" / "heldout15"
A = "glm-5.2-nvfp4-4xgb300-tp4-eagle-main-0.5.17-pr30531"
B = "glm-5.2-nvfp4-4xgb300-tp4-eagle-skip-topk-0.5.18-pr30531"
RELEASE = {A: "0.5.17", B: "0.5.18"}
# the profile's cell of one token on one rank: the target's layers, and from 0.5.14 the draft's next-n layer as
# cell x draft_layers / num_layers (engines/sglang/draft.py): 78 x (576 + 132) at 0.5.17, 78 x 576 + 21 x 132 at 0.5.18
TARGET_CELL = {A: 78 * (576 + 132), B: 78 * 576 + 21 * 132}
CELL = {k: c + c // 78 for k, c in TARGET_CELL.items()}


def fixture(stem: str) -> dict:
    return load(HERE, stem)


def _estimate(stem: str, **kw):
    spec = resolve("nvidia/GLM-5.2-NVFP4", tag_formats=False)
    s = sg.SGLangSettings(**fixture(stem)["settings"], engine_version=RELEASE[stem], **kw)
    return sg.ENGINE.estimate(spec, devices_for_names("4x GB300"), s)


def _at_printed_tokens(stem: str):
    """The estimate with the KV budget that holds the printed token count (oomkit --kv-memory)."""
    n = fixture(stem)["printed"]["max_total_num_tokens"]
    est = _estimate(stem, kv_cache_memory_bytes=n * CELL[stem])
    assert est.engine_view["max_total_num_tokens"] == n
    return est


def test_every_fixture_cites_its_thread():
    assert_every_fixture_cites_its_thread(HERE)


@pytest.mark.parametrize("stem", [A, B])
def test_weights_per_rank(stem):
    # the target's "Load weight end" (the draft's weights load after it): A: 107.40 GiB against 107.74 (-0.3 %; 106.41
    # before, without the 57 unloaded Indexers of 0.5.17); B: 106.41 against 106.76 (-0.3 %)
    want = gb(fixture(stem)["printed"]["weights_gb"])
    assert abs(_estimate(stem).engine_view["weights_bytes"] - want) / want < WEIGHTS_LIMIT


@pytest.mark.parametrize("stem", [A, B])
def test_target_pool_bytes_a_token(stem):
    # the trtllm DSA backends' 576 B latent row: 55,225 and 47,701 against 55,225 and 47,702 (61,465 and 53,941
    # with the scaled 656 B row)
    ev = _at_printed_tokens(stem).engine_view
    want = fixture(stem)["printed"]["bytes_per_token"]
    assert abs(ev["k_bytes"] / ev["max_total_num_tokens"] - want) <= 2


@pytest.mark.parametrize("stem", [A, B])
def test_target_and_draft_pools_at_the_printed_tokens(stem):
    # (tokens + 64) rows: 132.43 / 1.70 GiB and 133.40 / 1.98 GiB as printed (147.40 / 1.89 and 150.85 / 2.20
    # before); the draft's next-n layer keeps its index key (576 + 132 B)
    p = fixture(stem)["printed"]
    ev = _at_printed_tokens(stem).engine_view
    assert f"{ev['k_bytes'] / GiB:.2f}" == p["target_kv_pool_gb"]
    assert f"{ev['draft_k_bytes'] / GiB:.2f}" == p["draft_kv_pool_gb"]


# the catalog's GB300 is the 284,208 MiB nvidia-smi prints on NVL72 trays (it was the nominal 294,912: +9.4 / +9.3 %
# then); 2,613,056 and 3,047,424 tokens against 2,574,848 and 3,002,752 printed (+1.5 %)
@pytest.mark.parametrize("stem", [A, B])
def test_tokens_on_the_catalogs_gb300(stem):
    want = fixture(stem)["printed"]["max_total_num_tokens"]
    got = _estimate(stem).engine_view["max_total_num_tokens"]
    assert abs(got - want) / want < 0.03


def test_skip_topk_gain():
    # the PR's +16.62 %: with the same free memory the cells differ by 13.6 % (55,932 -> 48,311 with the draft's row)
    # and 0.5.18 frees 0.99 GiB of Indexers; on the catalog's GB300 oomkit gives +16.6 %
    a, b = (_estimate(x).engine_view["max_total_num_tokens"] for x in (A, B))
    pa, pb = (fixture(x)["printed"]["max_total_num_tokens"] for x in (A, B))
    assert abs(b / a - pb / pa) < 0.01
