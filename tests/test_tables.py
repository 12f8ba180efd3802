"""The hard-limits and context-impact tables: figures worked by hand from the model's dimensions, the largest
context searched exactly (against a plain bisection, tests/oracles.py and a brute force), and the output formats."""

import csv
import io
import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from oomkit import limits
from oomkit.engines.base import get_engine
from oomkit.memory import Device
from oomkit.request import resolve_model
from tests.hardware_fakes import GiB, MiB, oomkit_env, rtx4090, run_oomkit
from tests.oracles import bisect_max_context

ENG = get_engine("llama.cpp")
KiB = 1024


def model(name):
    return resolve_model(ENG, name)


@pytest.fixture(scope="module")
def llama8_tables():
    return limits.build_tables(ENG, model("llama3.1:8b"), ENG.settings(n_parallel=1), limits.size_targets())


# ---------------------------------------------------------------------------------------------------------
# Figures by hand


def test_kv_per_token_by_hand(llama8_tables):
    # Llama-3.1-8B: 32 layers, 8 KV heads of 128: K and V are 1024 values a layer and token
    per_value = {"f16": 2, "q8_0": 34 / 32, "q4_0": 18 / 32}  # ggml block sizes: 32 values in 34 / 18 bytes
    for kv, b in per_value.items():
        assert llama8_tables.kv_bytes_per_token[kv] == 32 * 2 * 1024 * b
    assert llama8_tables.kv_bytes_per_token["f16"] == 128 * KiB


def test_context_rows_by_hand(llama8_tables):
    rows = {r.n_ctx: r for r in llama8_tables.rows}
    assert sorted(rows) == [2048 << i for i in range(7)]  # 2K ... 128K, the model's maximum
    assert rows[32768].kv_cache_bytes["f16"] == 4 * GiB  # 32768 x 128 KiB
    assert rows[32768].kv_cache_bytes["q8_0"] == 32768 * 32 * 2 * 1024 * 34 // 32  # 2.125 GiB
    assert rows[131072].kv_cache_bytes["q4_0"] == 131072 * 32 * 2 * 1024 * 18 // 32  # 4.5 GiB
    gaps = {}
    for r in rows.values():
        # the same compute for both types, but for a q4_0 cache's extras: its 128 x 128 F32 rotation matrices
        # (llama_kv_cache::build_input_k_rot / v_rot, applied by llama_mul_mat_hadamard), the same at every context,
        # and flash attention's F16 copies of K and V, which ggml-cuda sizes beside its output from b9489
        # (n_ctx x 8 heads x 128 x 2 B each, one layer's): they fit below the feed-forward peak up to 16K
        gaps[r.n_ctx] = (r.kv_cache_bytes["f16"] - r.kv_cache_bytes["q4_0"]) - (r.total_bytes["f16"]
                                                                                 - r.total_bytes["q4_0"])
        assert 0 <= gaps[r.n_ctx] <= 2 * 128 * 128 * 4 + r.n_ctx * 8 * 128 * 2 * 2
    small = {gaps[n] for n in gaps if n <= 16384}
    assert len(small) == 1 and 0 < small.pop() <= 2 * 128 * 128 * 4
    assert all(gaps[n] > 2 * 128 * 128 * 4 for n in gaps if n > 16384)


def test_hard_limits_by_hand_and_against_bisection(llama8_tables):
    spec = model("llama3.1:8b")
    s = ENG.settings(n_parallel=1, fit=False)  # the tables hold the layout as typed, not llama.cpp's --fit
    for target in llama8_tables.targets:
        for kv in ("f16", "q8_0", "q4_0"):
            sk = ENG.with_kv_type(s, kv)
            assert llama8_tables.limits[target.label][kv] == bisect_max_context(ENG, spec, target.devices, sk)
    # 8 GB, f16: weights + 457 MiB runtime + compute + n x 128 KiB <= 8 GiB, and n + 256 does not fit
    n = llama8_tables.limits["8 GB"]["f16"]
    at = ENG.estimate(spec, (Device("CUDA0", "GPU"),), ENG.with_context(s, n)).devices[0]
    assert at.weights_bytes + 457 * MiB + at.compute_bytes + n * 128 * KiB == at.total_bytes <= 8 * GiB
    assert at.total_bytes + 256 * 128 * KiB > 8 * GiB
    assert llama8_tables.limits["24 GB"]["f16"] == 131072  # the model's maximum fits


def test_fits_marks_where_each_size_runs_out(llama8_tables):
    t = llama8_tables
    for r in t.rows:
        for kv in t.kv_types:
            for g in t.targets:
                assert r.fits[kv][g.label] == (r.total_bytes[kv] <= g.memory_bytes)
            smallest = t.smallest_fitting(r, kv)
            fitting = [g.memory_bytes for g in t.targets if r.total_bytes[kv] <= g.memory_bytes]
            assert smallest is None if not fitting else t.limits[smallest][kv] >= r.n_ctx


def test_rows_end_at_the_models_own_maximum():
    assert limits.contexts_for(40960) == (2048, 4096, 8192, 16384, 32768, 40960)
    assert limits.contexts_for(131072)[-1] == 131072
    assert limits.contexts_for(10 << 20)[-1] == 1 << 20  # 1M at most


def test_engine_kv_types_and_refused_types():
    assert ENG.kv_types == ("f16", "q8_0", "q4_0")
    t = limits.build_tables(ENG, model("qwen3-0.6b"), ENG.settings(flash_attn="off"), limits.size_targets((8,)))
    assert t.kv_types == ("f16",)
    assert {c.kv for c in t.kv if c.error} == {"q8_0", "q4_0"}


def test_detected_and_planned_targets_use_their_devices():
    devs = (Device("CUDA0", "RTX 3090", 23 * GiB, 23 * GiB), Device("CUDA1", "RTX 3090", 10 * GiB, 10 * GiB))
    spec = model("qwen2.5:32b")
    t = limits.build_tables(ENG, spec, ENG.settings(n_parallel=1),
                            (*limits.size_targets((24, 48)), limits.Target("this machine", devs, "detected")))
    s = ENG.settings(n_parallel=1)
    assert t.limits["this machine"]["f16"] == bisect_max_context(ENG, spec, devs, s)


# ---------------------------------------------------------------------------------------------------------
# The search


@settings(max_examples=200, deadline=None)
@given(base=st.integers(-10**9, 10**10), slope=st.integers(0, 10**6), curve=st.integers(0, 50),
       jump_at=st.integers(0, 5000), jump=st.integers(0, 10**9), hi_steps=st.integers(1, 4096))
# a jump far larger than the curve left the high side stuck while interpolation crept up the low side: 28 estimates
@example(base=533151, slope=0, curve=49, jump_at=49, jump=31775451, hi_steps=1217)
def test_largest_context_equals_brute_force(base, slope, curve, jump_at, jump, hi_steps):
    calls = []

    def slack(n):
        calls.append(n)
        k = n // 256
        return base - slope * n - curve * k * k - (jump if k >= jump_at else 0)

    hi = hi_steps * 256
    want = max((k * 256 for k in range(1, hi_steps + 1) if slack(k * 256) >= 0), default=None)
    calls.clear()
    assert limits.largest_context(slack, hi) == want
    assert len(calls) <= 2 + 2 * hi_steps.bit_length() + 2


def test_largest_context_is_quick_on_linear_memory():
    calls = []

    def slack(n):
        calls.append(n)
        return 20 * GiB - 5 * GiB - n * 128 * KiB

    assert limits.largest_context(slack, 131072) == 15 * GiB // (128 * KiB) // 256 * 256
    assert len(calls) <= 4


def test_largest_context_refused_contexts_count_as_not_fitting():
    assert limits.largest_context(lambda n: None if n > 4096 else 1, 131072) == 4096
    assert limits.largest_context(lambda n: None, 131072) is None


# ---------------------------------------------------------------------------------------------------------
# The command and its formats


def test_table_json(tmp_path):
    r = run_oomkit("table", "llama3.1:8b", "-np", "1", "--json", env=oomkit_env(tmp_path))
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["kv_types"] == ["f16", "q8_0", "q4_0"] and d["kv_bytes_per_token"]["f16"] == 128 * KiB
    assert [x["target"] for x in d["limits"]] == [f"{g} GB" for g in limits.VRAM_SIZES_GB]
    row = next(x for x in d["context"] if x["n_ctx"] == 32768)
    assert row["kv"]["f16"]["kv_cache_bytes"] == 4 * GiB and row["kv"]["f16"]["smallest_size"] == "12 GB"


def test_table_includes_the_detected_gpu(tmp_path):
    env = oomkit_env(tmp_path, {"gpus": [rtx4090(free=20000 * MiB, used=4000 * MiB)]})
    d = json.loads(run_oomkit("table", "llama3.1:8b", "--kind", "limits", "--json", env=env).stdout)
    last = d["limits"][-1]
    assert last["target"] == "this machine: NVIDIA GeForce RTX 4090" and last["memory_bytes"] == 20000 * MiB
    assert "context" not in d


def test_table_markdown_and_csv(tmp_path):
    env = oomkit_env(tmp_path)
    md = run_oomkit("table", "qwen3-0.6b", "--kind", "limits", "--markdown", env=env).stdout
    assert "| VRAM | f16 | q8_0 | q4_0 |" in md and "| 8 GB | 40960 (max) |" in md
    out = run_oomkit("table", "llama3.1:8b", "-np", "1", "--kind", "context", "--csv", env=env).stdout
    rows = list(csv.DictReader(io.StringIO(out)))
    r32 = next(r for r in rows if r["n_ctx"] == "32768")
    assert int(r32["kv_cache_bytes_f16"]) == 4 * GiB and r32["smallest_size_f16"] == "12 GB"
    both = run_oomkit("table", "llama3.1:8b", "--csv", "--sizes", "16,24", env=env).stdout
    limits_part, context_part = both.split("\n\n")
    assert limits_part.splitlines()[0] == "target,memory_bytes,max_context_f16,max_context_q8_0,max_context_q4_0"
    assert context_part.startswith("n_ctx,")


def test_table_terminal(tmp_path):
    r = run_oomkit("table", "llama3.1:8b", "-np", "1", env=oomkit_env(tmp_path))
    assert r.returncode == 0
    assert "hard limits" in r.stdout and "context impact" in r.stdout and "4.00 GiB" in r.stdout


def test_table_plot_png_and_svg(tmp_path):
    pytest.importorskip("matplotlib")
    env = oomkit_env(tmp_path)
    for name in ("c.png", "c.svg"):
        r = run_oomkit("table", "gemma-3-27b-it", "--kind", "context", "--plot", str(tmp_path / name), env=env)
        assert r.returncode == 0, r.stderr
    assert (tmp_path / "c.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert b"<svg" in (tmp_path / "c.svg").read_bytes()[:500]


@pytest.mark.parametrize("args,words", [
    (["--kind", "both"], "--kind takes limits or context"),
    (["--plot", "chart.pdf"], "give a .png or .svg"),
    (["--sizes", "24,lots"], "--sizes: cannot read 'lots'"),
    (["--json", "--csv"], "give one output format"),
    (["--gpu", "RTX 4900"], "did you mean RTX 4090"),
])
def test_table_bad_input(tmp_path, args, words):
    r = run_oomkit("table", "llama3.1:8b", *args, env=oomkit_env(tmp_path))
    assert r.returncode == 2 and words in r.stderr and r.stderr.count("\n") == 1
