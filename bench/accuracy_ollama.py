"""Accuracy of Ollama's own memory.* figures against real Ollama logs (tests/fixtures/engine_logs/ollama): per
field the number of logs, the median and the worst error beyond the printed rounding. The same errors
tests/test_ollama.py asserts against its TOLERANCE. Then the Ollama engine's per-device lines ("model weights",
"kv cache", "compute graph", "total memory"), log by log, printed figure against oomkit's
(tests/test_ollama_new_engine.py).

    PYTHONPATH=. python bench/accuracy_ollama.py [--markdown]
"""

from __future__ import annotations

import argparse
import statistics

from tests.test_ollama import TOLERANCE, summary_rows
from tests.test_ollama_new_engine import device_rows

MiB = 1 << 20


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--markdown", action="store_true")
    md = ap.parse_args().markdown
    used, rows = summary_rows()
    if md:
        print("| field | logs | median | worst | tolerance |\n|---|---|---|---|---|")
        for field, errs in rows.items():
            print(f"| {field} | {len(errs)} | {statistics.median(errs):.2%} | {max(errs):.2%} | {TOLERANCE[field]:.1%} |")
        print("\n| log | line | device | printed | oomkit (MiB) | error |\n|---|---|---|---|---|---|")
        for stem, line, dev, printed, want, got in device_rows():
            err = (got - want) / want if want else 0.0
            print(f"| {stem} | {line} | {dev} | {printed} | {got / MiB:.1f} | {err:+.1%} |")
        return
    print(f"Ollama memory.* vs {len(used)} real logs (error beyond the printed rounding):")
    for field, errs in rows.items():
        print(f"  {field:30s} n={len(errs):2d} median {statistics.median(errs):.2%} worst {max(errs):.2%}")
    print("\nOllama engine, per device (printed vs oomkit, MiB; error against the printed figure):")
    for stem, line, dev, printed, want, got in device_rows():
        err = (got - want) / want if want else 0.0
        print(f"  {stem[:44]:44s} {line:13s} {dev:8s} {printed:>14s} {want / MiB:10.1f} {got / MiB:10.1f} {err:+7.1%}")


if __name__ == "__main__":
    main()
