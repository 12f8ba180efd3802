"""Cold-process plan and fit, against a bare `python -c pass` in the same run (the machine is noisy; the ratio is
what to compare). Each case is one whole `oomkit` process, as a user runs it.

    python bench/bench_plan.py [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

OOMKIT = [sys.executable, "-m", "oomkit"]
CASES = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "plan qwen3:8b --vram 8GiB --min-ctx 32768 (llama.cpp)": [*OOMKIT, "plan", "qwen3:8b", "--vram", "8GiB",
                                                               "--min-ctx", "32768", "--json"],
    "plan llama3.3:70b --gpu 'RTX 4090' (tiers 2 and 3)": [*OOMKIT, "plan", "llama3.3:70b", "--gpu", "RTX 4090",
                                                            "--min-ctx", "16384", "--json"],
    "plan Qwen/Qwen3-8B --engine vllm --vram 24GiB": [*OOMKIT, "plan", "Qwen/Qwen3-8B", "--engine", "vllm",
                                                       "--vram", "24GiB", "--json"],
    "plan --all --vram 12GiB (the whole catalog at 8K)": [*OOMKIT, "plan", "--all", "--vram", "12GiB", "--json"],
    "fit -- llama-server ... -c 65536 (8 GiB)": [*OOMKIT, "fit", "--vram", "8GiB", "--json", "--", "llama-server",
                                                  "-hf", "unsloth/Qwen3-8B-GGUF:Q4_K_M", "-c", "65536"],
    "fit -- vllm serve Qwen/Qwen3-14B (24 GiB)": [*OOMKIT, "fit", "--vram", "24GiB", "--json", "--", "vllm", "serve",
                                                   "Qwen/Qwen3-14B", "--max-model-len", "40960"],
    "fit -- vllm serve Qwen2.5-7B -tp 2 (2 x 16 GiB: no fit)": [*OOMKIT, "fit", "--vram", "16GiB", "--json", "--",
                                                                 "vllm", "serve", "Qwen/Qwen2.5-7B-Instruct", "-tp",
                                                                 "2"],
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    times: dict[str, list[float]] = {k: [] for k in CASES}
    for _ in range(args.runs):  # interleaved: each round runs every case once
        for name, cmd in CASES.items():
            t = time.perf_counter()
            subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            times[name].append(time.perf_counter() - t)
    base = statistics.median(times["python -c pass"])
    print(f"{'case':<58} {'median s':>9} {'x python':>9}")
    for name, ts in times.items():
        m = statistics.median(ts)
        print(f"{name:<58} {m:>9.3f} {m / base:>9.1f}")


if __name__ == "__main__":
    main()
