"""Accuracy against vLLM itself: every real start-up log under tests/fixtures/engine_logs/vllm/, each figure the
log carries against oomkit's prediction, then the median and worst error per figure (the table in the docs).

    PYTHONPATH=. python bench/accuracy_vllm.py [--cases]

Figures (see tests/test_vllm.py): tokens = "GPU KV cache size" from the printed KV budget (page/block
arithmetic; relative error), weights = "Model loading took" (relative error), available = "Available KV cache
memory" predicted from the GPU alone (error as a share of the GPU's memory), refusal = vLLM refused to start
exactly when oomkit says it would.
"""

from __future__ import annotations

import argparse
import statistics

from tests.test_vllm import LIMITS, Case, all_cases


def summary_table(cases: list[Case]) -> str:
    """Median and worst absolute error per figure over the fixtures that carry it (for the docs)."""
    lines = ["| figure | limit | cases | median | worst | worst case |", "|---|---|---|---|---|---|"]
    for fig, limit in LIMITS.items():
        errs = [(abs(c.errors[fig]), c.name) for c in cases if fig in c.errors]
        if not errs:
            lines.append(f"| {fig} | {limit:.1%} | 0 | - | - | - |")
            continue
        med = statistics.median(e for e, _ in errs)
        worst, who = max(errs)
        if fig == "refusal":
            lines.append(f"| refusal (agreement) | exact | {len(errs)} | {sum(e == 0 for e, _ in errs)}/{len(errs)} "
                         f"agree | - | {who if worst else '-'} |")
        else:
            lines.append(f"| {fig} | {limit:.1%} | {len(errs)} | {med:.2%} | {worst:.2%} | {who} |")
    skipped = sorted({f"{c.name}: {', '.join(sorted(c.skip))} ({next(iter(c.skip.values()))})"
                      for c in cases if c.skip})
    return "\n".join(lines) + ("\n\nnot checkable:\n  " + "\n  ".join(skipped) if skipped else "")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", action="store_true", help="one row per fixture as well")
    show_cases = ap.parse_args().cases
    cases = all_cases()
    if show_cases:
        print("| fixture | tokens | weights | available | refusal | version |")
        print("|---|---|---|---|---|---|")
        for c in cases:
            cells = []
            for fig in ("tokens", "weights", "available", "refusal"):
                if fig not in c.errors:
                    cells.append("-")
                elif fig == "refusal":
                    cells.append("agrees" if c.errors[fig] == 0 else "DISAGREES")
                else:
                    cells.append(f"{c.errors[fig]:+.2%}")
            version = c.settings.engine_version if c.settings else "-"
            print(f"| {c.name} | " + " | ".join(cells) + f" | {version} |")
        print()
    print(f"vLLM: {sum(1 for c in cases if c.errors)} of {len(cases)} start-up logs checkable")
    print("\nvLLM accuracy against real start-up logs\n" + summary_table(cases))


if __name__ == "__main__":
    main()
