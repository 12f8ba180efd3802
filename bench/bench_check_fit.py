"""Cold-process timings of `oomkit check` where llama.cpp's --fit walks down the layers (a card too small for the
model: every dry run a layer split of its own, each a scheduler replay), against a baseline of the same tree with
the given files as they are at a revision, measured in the same run, alternating; each case's --json output is
compared between the two, so a speed-up that changes a figure shows.

    python bench/bench_check_fit.py [--runs 5] [--rev HEAD~1] [--files src/oomkit/check.py ...]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES = {
    "check --vram 0.5GB": ["check", "--vram", "0.5GB"],
    "check --vram 1GB": ["check", "--vram", "1GB"],
    "check llama3.1:70b --gpu 4090": ["check", "llama3.1:70b", "--gpu", "4090"],
    "check qwen3:32b --ctx 32768 --vram 8GB": ["check", "qwen3:32b", "--ctx", "32768", "--vram", "8GB"],
}
FILES = ("src/oomkit/check.py", "src/oomkit/memo.py", "src/oomkit/engines/llamacpp/fit.py",
         "src/oomkit/engines/llamacpp/layout.py", "src/oomkit/engines/llamacpp/sched_replay.py")


def baseline_tree(rev: str, files: list[str]) -> Path:
    """This tree's src/ with `files` as they are at `rev`."""
    base = Path(tempfile.mkdtemp(prefix="oomkit-base-"))
    shutil.copytree(ROOT / "src", base / "src", ignore=shutil.ignore_patterns("__pycache__"))
    for f in files:
        text = subprocess.run(["git", "show", f"{rev}:{f}"], cwd=ROOT, capture_output=True, check=True).stdout
        (base / f).write_bytes(text)
    return base / "src"


def run(src: Path, args: list[str]) -> tuple[float, bytes]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "oomkit", *args], cwd=ROOT, env=env, capture_output=True)
    dt = time.perf_counter() - t
    if r.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(args)} exited with {r.returncode}: {r.stderr.decode()[-500:]}")
    return dt, r.stdout


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--rev", default="HEAD")
    ap.add_argument("--files", nargs="*", default=list(FILES))
    a = ap.parse_args()
    trees = {"before": baseline_tree(a.rev, a.files), "after": ROOT / "src"}
    print(f"before: {', '.join(a.files)} at {a.rev}; after: this tree; median of {a.runs} cold runs each")
    same = True
    for name, args in CASES.items():
        times: dict[str, list[float]] = {k: [] for k in trees}
        outs = {k: run(src, [*args, "--json"])[1] for k, src in trees.items()}
        for _ in range(a.runs):
            for k, src in trees.items():
                times[k].append(run(src, args)[0])
        b, f = statistics.median(times["before"]), statistics.median(times["after"])
        eq = outs["before"] == outs["after"]
        same &= eq
        print(f"{name:42s} before {b:6.2f} s  after {f:6.2f} s  x{b / f:5.2f}  "
              f"--json {'identical' if eq else 'DIFFERS'}")
    shutil.rmtree(trees["before"].parent, ignore_errors=True)
    if not same:
        raise SystemExit("a figure changed")


if __name__ == "__main__":
    main()
