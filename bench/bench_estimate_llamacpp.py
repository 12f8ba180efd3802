"""Full (not rough) llama.cpp estimates, whose time is mostly the compute-buffer simulation (the scheduler replays of
sched_replay, compute_graphs' ggml-alloc replays): `oomkit plan` of Llama-3.1-405B on one RTX 4090 (hundreds of
estimates over weight formats, cache types and -ngl) and `oomkit estimate` of three catalog models, each a cold
process, offline, against the built-in catalog.

    python bench/bench_estimate_llamacpp.py [--runs 5] [--against OTHER/src]

--against times the same commands from another source tree too (e.g. a `git worktree` of an earlier commit),
interleaved in the same run so load on the machine hits both alike, prints the medians of the processes' CPU time
(user + system), their ratio (other / this), and checks that both trees print the same output (no figure changed).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

OOMKIT = [sys.executable, "-m", "oomkit"]
CASES = {
    "plan Llama-3.1-405B-Instruct --gpu 'RTX 4090'": [*OOMKIT, "plan", "meta-llama/Llama-3.1-405B-Instruct", "--gpu",
                                                      "RTX 4090"],
    "estimate Llama-3.1-405B-Instruct --gpu 'RTX 4090'": [*OOMKIT, "estimate", "meta-llama/Llama-3.1-405B-Instruct",
                                                          "--gpu", "RTX 4090", "--json"],
    "estimate qwen3:235b-a22b --gpu 'RTX 4090'": [*OOMKIT, "estimate", "qwen3:235b-a22b", "--gpu", "RTX 4090",
                                                  "--json"],
    "estimate llama3.3:70b --gpu 'RTX 4090' -ngl 40": [*OOMKIT, "estimate", "llama3.3:70b", "--gpu", "RTX 4090",
                                                       "-ngl", "40", "--json"],
}
ROOT = Path(__file__).resolve().parent.parent
# offline: the built-in catalog only (no hub); the .pyc files written as an installed package has them
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {"HF_HUB_OFFLINE": "1"}


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_once(cmd: list[str], src: str) -> tuple[float, bytes]:
    """The command's CPU time (user + system: a loaded machine stretches the wall clock more) and its output."""
    t = _cpu()
    out = subprocess.run(cmd, capture_output=True, check=False, env={**ENV, "PYTHONPATH": src}, cwd=ROOT).stdout
    return _cpu() - t, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--against", help="another tree's src/ to time the same commands from")
    args = ap.parse_args()
    trees = [str(ROOT / "src")] + ([args.against] if args.against else [])
    samples = {(name, src): [] for name in CASES for src in trees}
    outputs: dict[tuple[str, str], bytes] = {}
    for name, cmd in CASES.items():  # warm the page cache and the .pyc files; keep each tree's output
        for src in trees:
            outputs[name, src] = run_once(cmd, src)[1]
    for _ in range(args.runs):  # interleaved
        for name, cmd in CASES.items():
            for src in trees:
                samples[name, src].append(run_once(cmd, src)[0])
    print(f"{'command':52s} {'this':>9s}" + (f" {'other':>9s} {'other/this':>10s} {'output':>8s}" if args.against
                                                 else ""))
    for name in CASES:
        this = statistics.median(samples[name, trees[0]])
        line = f"{name:52s} {this:8.2f}s"
        if args.against:
            other = statistics.median(samples[name, trees[1]])
            same = "same" if outputs[name, trees[0]] == outputs[name, trees[1]] else "DIFFERS"
            line += f" {other:8.2f}s {other / this:9.2f}x {same:>8s}"
        print(line)


if __name__ == "__main__":
    main()
