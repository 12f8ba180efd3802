"""Held-out SGLang figures, nineteenth set (tests/fixtures/engine_logs/sglang/heldout19/): from a vendor guide, not an
issue thread (its URL grepped in tests/ first). MiniMax's SGLang deployment guide for MiniMax-M2 (the model's own
repository; the commands from docs.sglang.io) states the KV pool of its two recommended set-ups at v0.5.4.post1,
--mem-fraction-static 0.85. The figures were recorded before oomkit was run on them; none was used to fit a
constant, and no rule changed for this set.
Limit: the KV pool within 3 % of the GPU's memory (the tokens' difference at oomkit's bytes a token on a rank).

| set-up | figure | stated | oomkit | difference |
|---|---|---|---|---|
| 4x 96 GB (H20), TP 4 | KV tokens | 400K | 429,508 | +7.4 % of the tokens, +1.8 % of the GPU |
| 8x 144 GB (141 GB H200), TP 8, EP 8 | KV tokens | 3M | 3,053,157 | +1.8 % of the tokens, +1.1 % of the GPU |

2 of 2 agree. Not counted: "220 GB for weights" and "240 GB per 1M context tokens" (GB or GiB not said: oomkit's
214.9 GiB = 230.7 GB and 236.5 GiB = 253.9 GB fall on either side), and the stated figures are rounded.

Searched and not held (corpus "pages" and "docs"): CSDN / dtcms / adg.csdn tutorials of SGLang with Qwen3-32B and
Qwen2.5-VL-32B on H20 (the stored parts stop before the log), mynw.cn and soft186.com SGLang KV articles (no log
line), an r/LocalLLaMA RTX 5090 post running SGLang with --quantization moe_wna16 (throughput only), the
MiniMax-M2.1 / M2.5 copies of the same guide (the same figures, not counted twice).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from oomkit.engines import sglang as sg
from oomkit.model.resolve import resolve
from tests.sglang_heldout import load
from tests.startup_heldout import gpus

HERE = Path(__file__).parent / "fixtures" / "engine_logs" / "sglang" / "heldout19"
STEM = "minimax-m2-deploy-guide-4x96gb-8x141gb-mfs085-v0.5.4.post1"
KV_BAND = 0.03  # of the GPU's memory


def fixture() -> dict:
    return load(HERE, STEM)


def estimate(n: str, engine_version: str | None = None):
    fx = fixture()
    model, _, s = sg.parse_args(fx[f"argv_{n}"], {})
    s = replace(s, engine_version=engine_version or fx["engine_version"])
    g = fx[f"gpus_{n}"]
    return sg.ENGINE.estimate(resolve(model, tag_formats=False), gpus(g["name"], g["count"]), s)


def test_fixture_cites_the_guide():
    fx = fixture()
    assert fx["source"].startswith("https://huggingface.co/MiniMaxAI/MiniMax-M2/")
    assert fx["quoted"] and fx["printed"] and fx["assumed"]


def test_commands_read_as_the_guide():
    _, _, s4 = sg.parse_args(fixture()["argv_4"], {})
    assert (s4.tp_size, s4.mem_fraction_static) == (4, 0.85)
    _, _, s8 = sg.parse_args(fixture()["argv_8"], {})
    assert (s8.tp_size, s8.mem_fraction_static) == (8, 0.85)


@pytest.mark.parametrize(("n", "key", "recorded"), [("4", "kv_tokens_4x96gb", "+1.8 %"),
                                                     ("8", "kv_tokens_8x144gb", "+1.1 %")])
def test_kv_pool(n, key, recorded):
    est = estimate(n)
    view = est.engine_view
    assert not view.get("error")
    tokens = view["max_total_num_tokens"]
    pool = view["kv_pools"][0]
    per_token = (pool["k_bytes"] + pool["v_bytes"]) / pool["tokens"]  # one rank's bytes a token
    stated = fixture()["printed"][key]
    err = (tokens - stated) * per_token / est.devices[0].memory_bytes
    assert abs(err) < KV_BAND, f"{err:+.2%} of the GPU (recorded {recorded})"
    assert tokens > stated  # the guide rounds down: 429,508 and 3,053,157 recorded


def test_ep_size_leaves_the_pool():
    # the 8-GPU command is cut off in the stored page: the pool is the same with and without --ep-size 8
    fx = fixture()
    k = fx["argv_8"].index("--ep-size")
    argv = fx["argv_8"][:k] + fx["argv_8"][k + 2:]
    model, _, s = sg.parse_args(argv, {})
    s = replace(s, engine_version=fx["engine_version"])
    plain = sg.ENGINE.estimate(resolve(model, tag_formats=False), gpus("H200", 8), s)
    assert plain.engine_view["max_total_num_tokens"] == estimate("8").engine_view["max_total_num_tokens"]
