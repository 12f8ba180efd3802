"""Accuracy against SGLang's own start-up logs (tests/fixtures/engine_logs/sglang): per figure the number of
cases, the median and the worst |error| relative to the printed value, then every row. The same rows
tests/test_sglang.py asserts; which log is ground truth for which figure is explained in tests/sglang_cases.py.

    PYTHONPATH=. python bench/accuracy_sglang.py [--markdown]
"""

from __future__ import annotations

import argparse

from tests import sglang_cases as cases


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--markdown", action="store_true")
    md = ap.parse_args().markdown
    rows = cases.all_rows()
    if not md:
        print("SGLang accuracy (median / worst |error| per figure):")
    print(cases.table(rows, markdown=md))
    bad = [r for r in rows if not r.ok]
    if bad:
        print(f"\n{len(bad)} row(s) outside tolerance")


if __name__ == "__main__":
    main()
