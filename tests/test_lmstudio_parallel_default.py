"""`lms load` without --parallel: LM Studio 0.4 runs 4 concurrent predictions in one unified KV cache
(engines/llamacpp/lmstudio.py parallel_default, programs.py lms_slots).

LM Studio's load config schema (lmstudio-ai/lmstudio-js packages/lms-kv-config/src/schema.ts) sets
numParallelSessions ("Max Concurrent Predictions", `lms load --parallel`) to 4 (c9cf2974, 2026-01-23) and
useUnifiedKvCache to true (50b927d5, 2026-01-23); LM Studio 0.4.0 (2026-01-28) shipped it for llama.cpp runtimes
v2.0.0 on (lmstudio.ai/docs/app/advanced/parallel-requests). Older runtimes (1.x, LM Studio 0.3) load one sequence.

Logs (tests/fixtures/engine_logs/lmstudio/):
- lmstudio-bug-tracker#1862 (LM Studio 0.4.12, metal runtime v2.14.0, Qwen3.6-27B at 262144, the default
  predictions): `llama_kv_cache: size = 16384.00 MiB (262144 cells, 16 layers, 4/1 seqs)` and
  `llama_memory_recurrent: size = 598.50 MiB (4 cells, 64 layers, 4 seqs)`: 4 sequences in one stream of n_ctx
  cells (unified: the KV cache is the one-sequence size), and a recurrent state per sequence (4 x the one-sequence
  size). The thread's log gives no compute or output buffers, so none is checked against it here.
- lmstudio-bug-tracker#2262 (LM Studio 0.4.20, CUDA runtime 2.25.2, Max Concurrent Predictions 1):
  `LlamaV4::load config: n_parallel=1 n_ctx=262144 kv_unified=true`: a typed one prediction, still unified.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from oomkit.diagnose import diagnose
from oomkit.engines.cmdline import parse_command

FIXTURES = Path(__file__).parent / "fixtures" / "engine_logs" / "lmstudio"
MiB = 2**20


def _cli(*argv: str) -> tuple[int, str, str]:
    from oomkit.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(list(argv))
    return rc, out.getvalue(), err.getvalue()


def _estimate(*lms: str, version: str | None = "2.14.0", gpu: str = "M4 Max 128GB") -> dict:
    ev = ("--engine-version", version) if version else ()
    rc, out, err = _cli("estimate", "--json", "--gpu", gpu, *ev, "--", "lms", "load", *lms)
    assert rc == 0, err
    return json.loads(out)


def _fixture(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text())


QWEN_1862 = "qwen3.6-27b-262144-parallel-default-metal-2.14.0.json"


def test_default_predictions_kv_and_recurrent_state_as_logged():
    """#1862: KV 16384.00 MiB over 262144 cells (unified, not 4 x 262144), recurrent state 598.50 MiB (4 cells).
    Before this rule oomkit ran one sequence: the KV the same, the recurrent state 149.63 MiB (a quarter)."""
    fx = _fixture(QWEN_1862)
    est = _estimate("qwen/qwen3.6-27b", "-c", "262144", "--gpu", "max", version="2.14.0")
    v = est["engine_view"]
    assert (v["n_seq_max"], v["kv_unified"], v["n_ctx"], v["n_ctx_seq"]) == (4, True, 262144, 262144)
    assert v["k_bytes"] + v["v_bytes"] == fx["printed"]["kv_cache_bytes"]  # 16384.00 MiB
    assert v["recurrent_state_bytes"] == fx["printed"]["recurrent_bytes"]  # 598.50 MiB
    assert any("Max Concurrent Predictions" in w for w in est["warnings"]), est["warnings"]
    # --parallel 1: the same KV cache, one recurrent state (the log's 4 cells / 4)
    one = _estimate("qwen/qwen3.6-27b", "-c", "262144", "--gpu", "max", "--parallel", "1")["engine_view"]
    assert one["n_seq_max"] == 1
    assert one["k_bytes"] + one["v_bytes"] == fx["printed"]["kv_cache_bytes"]
    assert one["recurrent_state_bytes"] * 4 == fx["printed"]["recurrent_bytes"]


def test_typed_parallel_stays_as_typed_in_the_unified_cache():
    """A typed --parallel N is N, in LM Studio 0.4's unified cache: --parallel 4 is the default's own layout,
    compute and output buffers included, and #2262's `n_parallel=1 ... kv_unified=true` for --parallel 1."""
    base = ("qwen/qwen3.6-27b", "-c", "262144", "--gpu", "max")
    default, four = _estimate(*base), _estimate(*base, "--parallel", "4")
    for key in ("n_seq_max", "kv_unified", "k_bytes", "v_bytes", "recurrent_state_bytes", "output_buffer_bytes"):
        assert default["engine_view"][key] == four["engine_view"][key], key
    assert default["total_bytes"] == four["total_bytes"]
    assert not any("Max Concurrent Predictions" in w for w in four["warnings"])
    line = json.loads((FIXTURES / "load_config" / "gemma-4-31b-262144-parallel-1-cuda-2.25.2.json").read_text())
    pc = parse_command(["lms", "load", "google/gemma-4-31b", "-c", "262144", "--parallel", "1"], env={})
    assert pc.settings.n_parallel == line["printed"]["n_parallel"] == 1
    est = _estimate("google/gemma-4-31b", "-c", "262144", "--parallel", "1", version="2.25.2", gpu="RTX 5090")
    assert est["engine_view"]["kv_unified"] is line["printed"]["kv_unified"] is True
    assert est["engine_view"]["n_ctx"] == line["printed"]["n_ctx"]
    three = _estimate(*base, "--parallel", "3")["engine_view"]
    assert (three["n_seq_max"], three["kv_unified"], three["n_ctx_seq"]) == (3, True, 262144)


def test_old_runtimes_keep_one_sequence():
    """Runtime 1.x (LM Studio 0.3, before parallel requests): one sequence, no note."""
    est = _estimate("Qwen/Qwen3-8B", "-c", "8192", "--gpu", "max", version="1.63.1", gpu="RTX 4090")
    assert est["engine_view"]["n_seq_max"] == 1
    assert not any("Max Concurrent Predictions" in w for w in est["warnings"])
    new = _estimate("Qwen/Qwen3-8B", "-c", "8192", "--gpu", "max", version="2.44.0", gpu="RTX 4090")
    assert new["engine_view"]["n_seq_max"] == 4 and new["engine_view"]["kv_unified"] is True
    # the unified cache: the same KV cache at 4 sequences as at 1, the output buffer 4 rows of n_vocab floats
    assert new["engine_view"]["k_bytes"] == est["engine_view"]["k_bytes"]
    assert new["engine_view"]["output_buffer_bytes"] == 4 * est["engine_view"]["output_buffer_bytes"]


def test_unnamed_runtime_reads_as_lm_studio_0_4_and_says_so():
    est = _estimate("qwen/qwen3.6-27b", "-c", "262144", "--gpu", "max", version=None)
    assert est["engine_view"]["n_seq_max"] == 4
    note = next(w for w in est["warnings"] if "Max Concurrent Predictions" in w)
    assert "--engine-version names none" in note and "--parallel 1" in note


@pytest.mark.parametrize("bad", ["0", "-1", "x"])
def test_bad_parallel_is_one_line(bad):
    rc, out, err = _cli("estimate", "--vram", "24GiB", "--", "lms", "load", "Qwen/Qwen3-8B", "--parallel", bad)
    assert rc == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err


def test_diagnose_parallel_fix_follows_the_command():
    """An rs-cache failure under `lms load` (lmstudio-bug-tracker#2321's dialog): without --parallel the command
    ran LM Studio 0.4's 4 predictions, so the fix is the user's line with --parallel 1; with --parallel 1 already
    typed, that fix would change nothing and is not offered."""
    text = "Failed to load model.\n\nFailed to initialize the context: failed to allocate buffer for rs cache"
    d = diagnose(text, command=["lms", "load", "qwen/qwen3.8-27b"])
    assert d.fixes[0].command == "lms load qwen/qwen3.8-27b --parallel 1"
    d = diagnose(text, command=["lms", "load", "qwen/qwen3.8-27b", "--parallel", "1"])
    assert not any(f.command and "--parallel 1" in f.command for f in d.fixes), [f.summary for f in d.fixes]
    assert d.fixes, "a fix remains (free memory, a smaller model)"
