"""The one run-and-compare harness of the llama.cpp ground-truth tests (tests/test_llamacpp_archs.py,
tests/test_groundtruth_llamacpp.py): llama.cpp's own figures for a GGUF at each setting (llamacpp_run.measure_many,
parsed from its log) against oomkit's prediction for the same setting (gt_compare.oomkit_figures).

- buffers: n_ctx, model, every KV cache (cells, layers, K, V), KV buffer, recurrent R and S, output: equal to the
  0.01 MiB llama.cpp prints. A setting llama.cpp refuses while creating the context (a quantized V cache without
  flash attention, MLA's K and V types apart) must be refused by oomkit too (an OomkitError).
- compute: the ratio oomkit / llama.cpp per compared setting, held to a band by the caller.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from oomkit.errors import OomkitError
from tests import gt_compare as g

FIELDS = ("n_ctx", "model_mib", "caches", "kv_mib", "r_mib", "s_mib", "output_mib")
# llama.cpp's dry run (no_alloc) prints the model and KV *buffer* lines as 0; the rest are real figures
DRY_RUN_FIELDS = ("n_ctx", "caches", "r_mib", "s_mib", "output_mib")


@dataclass(frozen=True)
class Row:
    """One compared setting: llama.cpp's figures and oomkit's."""

    settings: dict[str, Any]
    expected: dict[str, Any]
    got: dict[str, Any]

    @property
    def ratio(self) -> float:
        return self.got["compute_mib"] / self.expected["compute_mib"]

    def describe(self) -> str:
        s = self.settings
        return (f"{s['n_ctx']} {s['type_k']} fa {s['flash_attn']} x{s['n_seq_max']}: oomkit "
                f"{self.got['compute_mib']:.2f} llama.cpp {self.expected['compute_mib']:.2f} MiB ({self.ratio:.2f})")


def compare(label: str, spec, grid: list[dict[str, Any]], results: list[dict[str, Any]], *,
            fields: tuple[str, ...] = FIELDS, failures: str = "refused", from_log: bool = False) -> list[Row]:
    """Assert the given buffer fields of every setting equal llama.cpp's; return the compared rows.

    failures: "refused" (a setting llama.cpp refuses at context creation must be refused by oomkit; any other
    failure fails), "error" (every setting must run) or "skip" (settings that did not run are left out).
    from_log: compare what the log printed before the run ended (architectures whose graph reservation aborts
    after the caches are made: llama.cpp must have printed a KV cache)."""
    rows = []
    for s, m in zip(grid, results, strict=True):
        where = f"{label} {s}"
        if from_log:
            parsed = g.llamacpp_run.parse_log(m.get("log") or "")
            assert parsed["kv_caches"], f"{where}: llama.cpp printed no KV cache ({m['stage']}: {m['error']})"
            m = parsed
        elif not m["ok"]:
            if failures == "skip":
                continue
            assert failures == "refused", f"{where}: {m['error']}"
            assert m["stage"] == "context", f"{where}: llama.cpp failed at {m['stage']}: {m['error']}"
            with pytest.raises(OomkitError):
                g.oomkit_figures(spec, s)
            continue
        expected, got = g.engine_figures(m), g.oomkit_figures(spec, s)
        for field in fields:
            assert got[field] == expected[field], f"{where}: {field} oomkit {got[field]} llama.cpp {expected[field]}"
        rows.append(Row(s, expected, got))
    return rows


def compute_misses(rows: list[Row], low: float = 0.9, high: float = 1.1) -> list[str]:
    """The compared settings whose compute ratio leaves [low, high], described."""
    return [r.describe() for r in rows if not low <= r.ratio <= high]


def assert_compute(label: str, rows: list[Row], low: float = 0.9, high: float = 1.1) -> None:
    misses = compute_misses(rows, low, high)
    assert not misses, f"{label}: compute outside {low}-{high} of llama.cpp's: {'; '.join(misses)}"


def assert_compute_equal(label: str, rows: list[Row]) -> None:
    """oomkit's compute buffer equal to llama.cpp's at every compared setting, to the 0.01 MiB it prints."""
    misses = [r.describe() for r in rows if round(r.got["compute_mib"], 2) != r.expected["compute_mib"]]
    assert not misses, f"{label}: compute not llama.cpp's: {'; '.join(misses)}"
