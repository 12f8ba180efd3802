"""Accuracy of Ollama's own memory.* figures against real Ollama logs (tests/fixtures/engine_logs/ollama): per
field the number of logs, the median and the worst error beyond the printed rounding. The same errors
tests/test_ollama.py asserts against its TOLERANCE.

    PYTHONPATH=. python bench/accuracy_ollama.py [--markdown]
"""

from __future__ import annotations

import argparse
import statistics

from tests.test_ollama import TOLERANCE, summary_rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--markdown", action="store_true")
    md = ap.parse_args().markdown
    used, rows = summary_rows()
    if md:
        print("| field | logs | median | worst | tolerance |\n|---|---|---|---|---|")
        for field, errs in rows.items():
            print(f"| {field} | {len(errs)} | {statistics.median(errs):.2%} | {max(errs):.2%} | {TOLERANCE[field]:.1%} |")
        return
    print(f"Ollama memory.* vs {len(used)} real logs (error beyond the printed rounding):")
    for field, errs in rows.items():
        print(f"  {field:30s} n={len(errs):2d} median {statistics.median(errs):.2%} worst {max(errs):.2%}")


if __name__ == "__main__":
    main()
