"""Cold-process start-up: `oomkit --help` and `oomkit estimate <catalog model> --json`, against a bare
`python -c pass` measured in the same run (the machine is noisy; the ratio is what to compare).

    python bench/bench_startup.py [--runs 21] [--against OTHER/src]

--against times the same oomkit commands from another source tree too (e.g. a `git worktree` of an earlier
commit), interleaved in the same run, so a change's cost reads as a ratio.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

OOMKIT = [sys.executable, "-m", "oomkit"]
CASES = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "oomkit --help": [*OOMKIT, "--help"],
    "oomkit estimate llama3.1:8b --json": [*OOMKIT, "estimate", "llama3.1:8b", "--json"],
    "oomkit estimate qwen3:30b-a3b --vram 24GiB --json": [*OOMKIT, "estimate", "qwen3:30b-a3b", "--vram", "24GiB",
                                                          "--json"],
}


# As installed for users: `pip install` byte-compiles the package, so a cold process loads .pyc files. An
# environment with PYTHONDONTWRITEBYTECODE (this sandbox sets it) would recompile every module on each run.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def time_once(cmd: list[str], src: str | None = None) -> float:
    env = ENV if src is None else {**ENV, "PYTHONPATH": src}
    t = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env,
                   cwd=Path(__file__).resolve().parent.parent)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--against", help="another tree's src/ to time the same commands from")
    args = ap.parse_args()
    cases = {name: (cmd, None) for name, cmd in CASES.items()}
    if args.against:
        cases.update({f"{name} ({args.against})": (cmd, args.against) for name, cmd in CASES.items()
                      if name.startswith("oomkit")})
    for cmd, src in cases.values():  # warm the page cache and the .pyc files
        time_once(cmd, src)
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(args.runs):  # interleaved, so load on the machine hits every case alike
        for name, (cmd, src) in cases.items():
            samples[name].append(time_once(cmd, src))
    base = statistics.median(samples["python -c pass"])
    print(f"{'command':72s} {'median':>9s} {'p90':>9s} {'vs python':>10s}")
    for name, xs in samples.items():
        xs.sort()
        med, p90 = statistics.median(xs), xs[int(0.9 * (len(xs) - 1))]
        print(f"{name:72s} {med * 1000:7.1f}ms {p90 * 1000:7.1f}ms {med / base:9.2f}x")


if __name__ == "__main__":
    main()
