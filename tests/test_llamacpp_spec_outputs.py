"""The logits rows llama-server's main context reserves with speculative decoding on.

Source (ggml-org/llama.cpp@001d906a6): tools/server/server-context.cpp server_output_limits passes n_batch, n_parallel
and common_speculative_n_max (the longest draft over the --spec-type list: draft-* types --spec-draft-n-max, default
3; ngram-simple / -map-k / -map-k4v size_m 48; ngram-mod n_max 64; ngram-cache 8) to
common_speculative_get_output_limits: total = min(n_batch, n_parallel x (1 + n_draft)), per_seq = min(n_batch,
1 + n_draft), each at least 1, into llama_context_params.n_outputs_max / n_outputs_max_per_seq. src/llama-context.cpp
sched_reserve then reserves the worst-case graph with n_outputs_pp = min(n_tokens, n_outputs_max) logits rows, while
the output buffer stays output_reserve(n_seq_max) at load (it grows at the first batch with more outputs). Both came
with PR #23861 / #23988 (merged 2026-06-01, ERAS "outputs_max"); before, every token of the ubatch is an output row.

Ground truth: llama-cpp-python 0.3.36 exposes n_outputs_max and n_outputs_max_per_seq in llama_context_params, so the
worker below creates the main context as server_output_limits would for each setting (the limits computed here from
the source's arithmetic, independently of oomkit) and reads the output and compute buffers llama.cpp prints (CPU,
no_alloc dry run: the same output / compute lines as a real allocation, tests/groundtruth/llamacpp_run.py).
"""

from __future__ import annotations

import re

import pytest

import oomkit
from oomkit.engines.llamacpp import LlamaCppSettings, parse_args
from oomkit.engines.llamacpp.compute import reserved_outputs
from oomkit.engines.llamacpp.kv import resolve_context
from oomkit.model.gguf_file import read_gguf_spec
from tests import ggufs
from tests.groundtruth import llamacpp_run, synth

MiB = 1 << 20

_WORKER = llamacpp_run.binding_script(r'''
for i, c in enumerate(contexts):
    os.write(2, f"@@CTX {i}\n".encode())
    cp = llama_cpp.llama_context_default_params()
    cp.n_ctx, cp.n_batch, cp.n_ubatch, cp.n_seq_max = c["n_ctx"], 2048, c["n_ubatch"], c["n_seq"]
    cp.n_threads = cp.n_threads_batch = 1
    cp.flash_attn_type = c["fa"]
    cp.kv_unified = True
    cp.swa_full = False
    cp.n_outputs_max, cp.n_outputs_max_per_seq = c["total"], c["per_seq"]
    ctx = llama_cpp.llama_init_from_model(model, cp)
    os.write(2, f"@@END {i} {bool(ctx)}\n".encode())
    llama_cpp.llama_free(ctx)
''', {'load_mode': '0', 'lazy_mode': '0', 'no_alloc': 'True', 'load_mtp': 'load_mtp'})

N_BATCH = 2048
# common_speculative_n_max per --spec-type at the defaults (common/common.h), read off the source by hand
N_DRAFT = {"ngram-mod": 64, "ngram-simple": 48, "ngram-cache": 8}


def output_limits(n_parallel: int, n_draft: int) -> tuple[int, int]:
    """server_output_limits -> common_speculative_get_output_limits (ggml-org/llama.cpp@001d906a6)."""
    per_seq = 1 + max(0, n_draft)
    return max(1, min(N_BATCH, n_parallel * per_seq)), max(1, min(N_BATCH, per_seq))


def _setting(fa: int, ub: int, np_: int, spec: str | None, n_max: int | None) -> dict:
    n_draft = 0 if spec is None else N_DRAFT.get(spec, n_max if n_max is not None else 3)
    total, per_seq = output_limits(np_, n_draft)
    return dict(n_ctx=4096, n_ubatch=ub, n_seq=np_, fa=fa, spec=spec, n_max=n_max, total=total, per_seq=per_seq)


# 1 / 4 slots x draft n_max 3 / 16 (draft-simple) and ngram-mod's 64, beside no speculation, at -ub 512 and 64 with
# flash attention on and off
GRID = [_setting(fa, ub, np_, spec, n_max) for fa in (1, 0) for ub in (512, 64) for np_ in (1, 4)
        for spec, n_max in ((None, None), ("draft-simple", 3), ("draft-simple", 16), ("ngram-mod", None))]
MODELS = {"qwen3-4b": lambda: synth.qwen3_4b(2), "gemma3-12b": lambda: synth.gemma3_12b(2)}
# (model, grid index) -> measured oomkit / llama.cpp compute where not within 10% (none now). The worker sets
# swa_full = false as llama-server does (common_params.swa_full, --swa-full off); the C API's default (true) gave
# Gemma-3's sliding-window layers the whole context (182.51 / 22.81 MiB at -ub 512 / 64 with one slot), which oomkit,
# predicting llama-server, does not
COMPUTE_MISSES: dict[tuple[str, int], float] = {}


def measure(path, grid: list[dict], load_mtp: bool = False) -> list[dict]:
    log = llamacpp_run.run_binding_script(_WORKER, path, grid, load_mtp)
    out = []
    for i in range(len(grid)):
        part = llamacpp_run.context_log(log, i)
        mib = {k: float(re.findall(k + r" buffer size =\s*([0-9.]+) MiB", part)[0]) for k in ("output", "compute")}
        n_out = int(re.findall(r"n_outputs_max\s*=\s*(\d+)", part)[0])
        out.append({**mib, "n_outputs_max": n_out})
    return out


def predicted(path, c: dict) -> dict:
    kw = dict(devices=(), find_max_context=False, fit=False, n_ctx=c["n_ctx"], n_parallel=c["n_seq"], kv_unified=True,
              flash_attn="on" if c["fa"] else "off", n_ubatch=c["n_ubatch"])
    if c["spec"]:
        kw["spec_type"] = (c["spec"],)
    if c["n_max"] is not None:
        kw["spec_draft_n_max"] = c["n_max"]
    v = oomkit.estimate(str(path), "llama.cpp", **kw).engine_view
    return {"output": round(v["output_buffer_bytes"] / MiB, 2),
            "compute": sum(v["compute_buffer_bytes"].values()) / MiB}


@pytest.fixture(scope="module", params=sorted(MODELS))
def spec_measured(request):
    if not llamacpp_run.available():
        pytest.skip("llama-cpp-python is not installed")
    path = synth.synth_path(MODELS[request.param](), "q4_0")
    return request.param, path, measure(path, GRID)


def test_output_buffer_stays_one_row_per_slot(spec_measured):
    """output_reserve(n_seq_max) at load whatever n_outputs_max: 0.58 / 2.32 MiB (Qwen3-4B, 151936 rows of floats)
    and 1.00 / 4.00 MiB (Gemma-3, 262144) at 1 / 4 slots, with 4, 16, 17, 65, 68 or 260 outputs allowed."""
    name, path, rows = spec_measured
    for c, m in zip(GRID, rows, strict=True):
        assert m["n_outputs_max"] == c["total"]  # llama.cpp took the limit as given (it logs it, PR #23988)
        assert predicted(path, c)["output"] == m["output"], (name, c)


def test_compute_follows_the_reserved_logits_rows(spec_measured):
    """The graph's logits rows rise with n_parallel x (1 + n_max) up to the ubatch: measured on Qwen3-4B with flash
    attention at -ub 64 and 4 slots, 10.50 MiB without speculation or with 16 rows, 38.34 MiB with 68 or 260 (the
    whole ubatch); at -ub 512, 84.01 MiB up to 68 rows and 160.77 with ngram-mod's 260. Each setting within 10%
    unless listed in COMPUTE_MISSES with its measured ratio."""
    name, path, rows = spec_measured
    for i, (c, m) in enumerate(zip(GRID, rows, strict=True)):
        ratio = predicted(path, c)["compute"] / m["compute"]
        if (name, i) in COMPUTE_MISSES:
            assert ratio == pytest.approx(COMPUTE_MISSES[name, i], abs=0.005), (name, c, ratio)
            continue
        assert 0.9 <= ratio <= 1.1, (name, c, ratio, m["compute"])
    if name == "qwen3-4b":
        by = {(c["fa"], c["n_ubatch"], c["n_seq"], c["spec"], c["n_max"]): m["compute"] for c, m in zip(GRID, rows, strict=True)}
        assert by[1, 64, 4, None, None] == by[1, 64, 4, "draft-simple", 3] == 10.50
        assert by[1, 64, 4, "draft-simple", 16] == by[1, 64, 4, "ngram-mod", None] == 38.34
        assert by[1, 512, 4, "draft-simple", 16] == 84.01 and by[1, 512, 4, "ngram-mod", None] == 160.77


# --spec-type draft-mtp on GLM-4.5-Air (2 trunk layers and its next-n block, loaded: load_mtp): the main context
# reserves the same n_parallel x (1 + n_max) rows; 1 / 4 slots x n_max 3 / 16 at -ub 512 / 64, flash attention on
# and off (the MTP context beside it: tests/test_llamacpp_mtp_draft.py)
MTP_GRID = [_setting(fa, ub, np_, "draft-mtp", n_max) for fa in (1, 0) for ub in (512, 64) for np_ in (1, 4)
            for n_max in (3, 16)]


def test_mtp_main_context_outputs():
    """Measured: output buffer 0.58 / 2.31 MiB at 1 / 4 slots whatever n_max; compute 94.76 MiB at -ub 512 with
    flash attention (oomkit 100.12, +5.7 %, the same at every row count up to 68), 11.85 at -ub 64 up to 17 rows and
    40.00 with 68 (the whole ubatch), 852.01 / 106.50 without flash attention."""
    if not llamacpp_run.available():
        pytest.skip("llama-cpp-python is not installed")
    path = synth.synth_path(ggufs.glm45_air(2), "q4_0")
    rows = measure(path, MTP_GRID, load_mtp=True)
    for c, m in zip(MTP_GRID, rows, strict=True):
        p = predicted(path, c)
        assert m["n_outputs_max"] == c["total"] and p["output"] == m["output"], (c, p, m)
        assert 0.9 <= p["compute"] / m["compute"] <= 1.1, (c, p, m)
    by = {(c["fa"], c["n_ubatch"], c["n_seq"], c["n_max"]): m["compute"] for c, m in zip(MTP_GRID, rows, strict=True)}
    assert by[1, 64, 4, 3] == 11.85 and by[1, 64, 4, 16] == 40.00


def _rows(version: str = "b9999", program: str = "llama-server", **kw) -> int:
    spec = read_gguf_spec(str(synth.synth_path(synth.qwen3_4b(2), "q4_0")))
    s = LlamaCppSettings(program=program, engine_version=version, n_ctx=4096, **kw)
    return reserved_outputs(resolve_context(spec, s), s)


def test_reserved_rows_by_build_and_program():
    """server_output_limits' arithmetic at -ub 512 / 64 (the graph takes min(n_tokens, n_outputs_max)); before
    outputs_max (PR #23861, 2026-06-01) every token of the ubatch, speculation or not; the Python binding and the
    other programs keep the library default (0 = n_batch); -md alone names no speculative type since PR #23988."""
    for np_ in (1, 4):
        assert _rows(n_parallel=np_) == np_
        for n_max in (3, 16):
            assert _rows(n_parallel=np_, spec_type=("draft-simple",), spec_draft_n_max=n_max) == np_ * (1 + n_max)
            assert _rows(n_parallel=np_, spec_type=("draft-mtp",), spec_draft_n_max=n_max, n_ubatch=64) == \
                min(64, np_ * (1 + n_max))
        assert _rows(n_parallel=np_, spec_type=("draft-mtp",)) == np_ * 4  # the default n_max, 3
        assert _rows(n_parallel=np_, spec_type=("ngram-mod",)) == min(512, np_ * 65)
        assert _rows(n_parallel=np_, spec_type=("ngram-cache", "draft-simple")) == np_ * 9  # the longest: 8
        assert _rows(n_parallel=np_, spec_type=("ngram-simple",)) == np_ * 49
        assert _rows(n_parallel=np_, model_draft="draft.gguf") == np_
        assert _rows("b9400", n_parallel=np_, spec_type=("draft-simple",), spec_draft_n_max=16) == 512
        assert _rows(program="llama-cpp-python", n_parallel=np_, spec_type=("draft-simple",)) == 512
    assert _rows(program="llama-cli", n_parallel=1, spec_type=("draft-simple",), spec_draft_n_max=16) == 17
    assert _rows(n_parallel=4, spec_type=("draft-simple",), spec_draft_n_max=-5) == 4  # std::max(0, n_max)


def test_draft_length_flags():
    """--spec-draft-n-max and the older --draft-max / --draft / --draft-n set the same n_max (common/arg.cpp)."""
    for flag in ("--spec-draft-n-max", "--draft-max", "--draft", "--draft-n"):
        _, _, s = parse_args(["-m", "x.gguf", "--spec-type", "draft-mtp", flag, "16"])
        assert s.spec_draft_n_max == 16
    assert parse_args(["-m", "x.gguf"])[2].spec_draft_n_max is None
