"""Shared by the ground-truth test and bench/accuracy: oomkit's llama.cpp figures next to llama.cpp's own.

Every expected figure comes from llama.cpp's log (tests/groundtruth/llamacpp_run.py parses it); oomkit reads
the same GGUF's header and predicts the same figures, rounded to MiB with two decimals as llama.cpp prints.
"""

from __future__ import annotations

from typing import Any

import oomkit
from oomkit.model.gguf_file import read_gguf_spec
from tests.groundtruth import llamacpp_run, synth  # noqa: F401  (llamacpp_run re-exported)

MiB = 1 << 20

# (synth model key, layers written): every model carries its real per-layer dims; layer counts are reduced
# where the full depth adds nothing but time (the layer pattern is kept whole).
MODELS = [("llama-3.1-8b", 4), ("qwen3-8b", 4), ("qwen3-30b-a3b", 4), ("gemma-3-12b", 12), ("gemma-2-9b", 4),
          ("gpt-oss-20b", 4), ("deepseek-v3", 4), ("deepseek-v3-legacy", 4), ("mamba2-2.7b", 4), ("qwen3.5-27b", 8)]


def synth_file(key: str, n_layers: int | None, recipe: str | None = None):
    model = synth.MODELS[key](n_layers=n_layers)
    recipe = recipe or ("mxfp4_moe" if key == "gpt-oss-20b" else "q4_0")
    return synth.synth_path(model, recipe)


def oomkit_figures(spec, s: dict[str, Any]) -> dict[str, Any]:
    """oomkit's estimate for llama.cpp run as the harness runs it (CPU only, these context params)."""
    est = oomkit.estimate(
        spec, "llama.cpp", cpu_only=True, find_max_context=False, program="llama-cpp-python",
        n_ctx=s["n_ctx"], n_batch=s["n_batch"], n_ubatch=s["n_ubatch"], n_parallel=s["n_seq_max"],
        kv_unified=s["kv_unified"], cache_type_k=s["type_k"], cache_type_v=s["type_v"],
        flash_attn=s["flash_attn"], swa_full=s["swa_full"], mmap=s["use_mmap"],
        repack=s.get("use_extra_bufts", False),  # the harness loads without CPU_REPACK unless asked
    )
    v = est.engine_view
    # llama.cpp prints DeepSeek-V4's compressor state ("... state") apart from its KV cache lines
    states = [c for c in v["kv_caches"] if c["name"].endswith(" state")]
    v = dict(v, kv_caches=[c for c in v["kv_caches"] if not c["name"].endswith(" state")])
    return {
        "states": [(c["name"], c["cells"], c["layers"], round((c["k_bytes"] + c["v_bytes"]) / MiB, 2)) for c in states],
        "n_ctx": v["n_ctx"],
        "model_mib": round(v["model_buffer_bytes"].get("CPU_Mapped", 0) / MiB, 2),
        "caches": [(c["cells"], c["layers"], round(c["k_bytes"] / MiB, 2), round(c["v_bytes"] / MiB, 2))
                   for c in v["kv_caches"]],
        # llama.cpp prints one KV buffer line per cache, each rounded to 0.01 MiB, and engine_figures sums those
        "kv_mib": round(sum(round((c["k_bytes"] + c["v_bytes"]) / MiB, 2) for c in v["kv_caches"]), 2)
        if v["kv_caches"] else round(sum(v["kv_buffer_bytes"].values()) / MiB, 2),
        "r_mib": round(v["r_bytes"] / MiB, 2), "s_mib": round(v["s_bytes"] / MiB, 2),
        "output_mib": round(v["output_buffer_bytes"] / MiB, 2),
        "compute_mib": v["compute_buffer_bytes"]["CPU"] / MiB,
    }


def engine_figures(m: dict[str, Any]) -> dict[str, Any]:
    """The same figures from llama.cpp's parsed log."""
    caches = sorted(m["kv_caches"], key=lambda c: c["kind"] == "swa")
    rec = m.get("recurrent") or {}
    return {
        "n_ctx": m["n_ctx"],
        "model_mib": m["model_buffer_mib"].get("CPU_Mapped", 0.0),
        "caches": [(c["cells"], c["layers"], c["k_mib"], c["v_mib"]) for c in caches],
        "kv_mib": round(sum(m["kv_buffer_mib"].values()), 2),
        "r_mib": rec.get("r_mib", 0.0), "s_mib": rec.get("s_mib", 0.0),
        "output_mib": round(sum(m["output_buffer_mib"].values()), 2),
        "compute_mib": sum(m["compute_buffer_mib"].values()),
    }


def settings_grid(ctxs=(4096, 16384), types=("f16", "q8_0", "q4_0"), fas=("on", "off"), seqs=(1, 4)):
    for n_ctx in ctxs:
        for t in types:
            for fa in fas:
                for n_seq in seqs:
                    yield {"n_ctx": n_ctx, "type_k": t, "type_v": t, "flash_attn": fa, "n_seq_max": n_seq,
                           "kv_unified": False, "n_batch": 2048, "n_ubatch": 512, "swa_full": False,
                           "use_mmap": True}


def measure_grid(key: str, n_layers: int, grid: list[dict[str, Any]]):
    path = synth_file(key, n_layers)
    spec = read_gguf_spec(path)
    return path, spec, llamacpp_run.measure_many(path, grid)


CACHE_FIELDS = ("n_ctx", "caches", "kv_mib", "r_mib", "s_mib")  # exact on every file llama.cpp loads


def small_grid(*variants: dict[str, Any]) -> list[dict[str, Any]]:
    """The harness's first setting with each variant's changes: a short grid for a catalog entry's file."""
    return [dict(next(settings_grid()), **v) for v in variants]


def assert_equals_llama_cpp(spec, path, grid: list[dict[str, Any]], label: str = "", fields=CACHE_FIELDS,
                            compute_band: tuple[float, float] | None = None) -> None:
    """llama.cpp loads `path` at each setting of `grid`: `fields` of oomkit's figures for `spec` equal its own, and
    the compute buffer is within `compute_band` (a ratio) where one is given."""
    for s, m in zip(grid, llamacpp_run.measure_many(path, grid), strict=True):
        assert m["ok"], m["error"]
        expected, got = engine_figures(m), oomkit_figures(spec, s)
        for f in fields:
            assert got[f] == expected[f], f"{label} {s}: {f} oomkit {got[f]} llama.cpp {expected[f]}"
        if compute_band is not None:
            lo, hi = compute_band
            assert lo <= got["compute_mib"] / expected["compute_mib"] <= hi, (label, s, got["compute_mib"],
                                                                              expected["compute_mib"])
