"""Cold-process timings of `oomkit check` and `oomkit table` (the issue's budget: 0.5 s each), against a bare
`python -c pass` measured in the same run; the machine is noisy, so the ratio is what to compare.

`check` runs twice: with NVML present (tests/fixtures/hardware/fake_nvml first on PYTHONPATH: the fake pynvml
reports one RTX 4090 with 20 GB free) and on the no-GPU path (NVML reports no driver, no nvidia-smi on PATH: the
reference card). The real nvidia-ml-py import is timed on its own, since the fake one costs nothing to import.

    python bench/bench_check.py [--runs 15]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FAKE_NVML = ROOT / "tests" / "fixtures" / "hardware" / "fake_nvml"
MiB = 1 << 20
OOMKIT = [sys.executable, "-m", "oomkit"]
ONE_4090 = {"gpus": [{"name": "NVIDIA GeForce RTX 4090", "total": 24564 * MiB, "free": 20000 * MiB,
                      "used": 4000 * MiB, "processes": [{"pid": 1, "used": 3800 * MiB}]}]}


def env_for(nvml: dict, path: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # as installed: .pyc files
    env["PYTHONPATH"] = os.pathsep.join([str(FAKE_NVML), str(ROOT / "src"), env.get("PYTHONPATH", "")])
    env["OOMKIT_FAKE_NVML"] = json.dumps(nvml)
    env["PATH"] = path
    return env


def time_once(cmd: list[str], env: dict[str, str] | None) -> float:
    t = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT, env=env)
    if r.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} exited with {r.returncode}")
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    runs = ap.parse_args().runs
    empty = tempfile.mkdtemp()  # a PATH without nvidia-smi or rocm-smi
    gpu_env, no_gpu_env = env_for(ONE_4090, empty), env_for({"init_error": 12}, empty)
    cases = {
        "python -c pass": ([sys.executable, "-c", "pass"], None),
        "python -c 'import pynvml' (real nvidia-ml-py)": ([sys.executable, "-c", "import pynvml"], None),
        "oomkit check (NVML: one RTX 4090)": ([*OOMKIT, "check"], gpu_env),
        "oomkit check (no GPU: reference card)": ([*OOMKIT, "check"], no_gpu_env),
        "oomkit check qwen3:32b --ctx 32768 (NVML)": ([*OOMKIT, "check", "qwen3:32b", "--ctx", "32768"], gpu_env),
        "oomkit table llama3.1:8b (NVML)": ([*OOMKIT, "table", "llama3.1:8b"], gpu_env),
        "oomkit table gemma-3-27b-it --json (NVML)": ([*OOMKIT, "table", "gemma-3-27b-it", "--json"], gpu_env),
    }
    for cmd, env in cases.values():  # warm the page cache and the .pyc files
        time_once(cmd, env)
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(runs):  # interleaved, so load on the machine hits every case alike
        for name, (cmd, env) in cases.items():
            samples[name].append(time_once(cmd, env))
    base = statistics.median(samples["python -c pass"])
    print(f"{'command':48s} {'median':>9s} {'p90':>9s} {'vs python':>10s} {'budget 0.5 s':>13s}")
    for name, xs in samples.items():
        xs.sort()
        med, p90 = statistics.median(xs), xs[int(0.9 * (len(xs) - 1))]
        ok = "" if not name.startswith("oomkit") else ("within" if med <= 0.5 else "OVER")
        print(f"{name:48s} {med * 1000:7.1f}ms {p90 * 1000:7.1f}ms {med / base:9.2f}x {ok:>13s}")


if __name__ == "__main__":
    main()
