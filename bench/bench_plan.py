"""Cold-process plan and fit, against a bare `python -c pass` in the same run (the machine is noisy; the ratio is
what to compare). Each case is one whole `oomkit` process, as a user runs it.

    python bench/bench_plan.py [--runs 5] [--only TEXT ...] [--against OTHER/src]

--against runs the same oomkit cases from another source tree too (e.g. `git archive <commit> src | tar -x -C
/tmp/old`), interleaved in the same run, so a change reads as a ratio; the cpu column is the process's user + system
time, steadier than the wall clock on a loaded machine; "x against" is this tree's cpu time over the other's.
"""

from __future__ import annotations

import argparse
import os
import resource
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
    # far too large: no weight format fits one 24 GiB card, so every option keeps layers in system RAM and the third
    # tier tries the GPU catalog's machines up to 8 x RTX 5090. `--runs 3 --only qwen3:8b --only llama3.3:70b
    # --only 405B --against` the tree before (9bd6cc7c): small fits, large needs offload, far too large
    "plan meta-llama/Llama-3.1-405B-Instruct --gpu 'RTX 4090' (far too large)": [
        *OOMKIT, "plan", "meta-llama/Llama-3.1-405B-Instruct", "--gpu", "RTX 4090", "--json"],
    # a dense 32B on an 8 GiB laptop GPU: no weight format fits, every option a layer split, tier 3 through the catalog
    "plan qwen3:32b --gpu 'RTX 4070 Laptop' (8 GiB: layer splits)": [*OOMKIT, "plan", "qwen3:32b", "--gpu",
                                                                      "RTX 4070 Laptop", "--json"],
    "plan --all --vram 12GiB (the whole catalog at 8K)": [*OOMKIT, "plan", "--all", "--vram", "12GiB", "--json"],
    "fit -- llama-server ... -c 65536 (8 GiB)": [*OOMKIT, "fit", "--vram", "8GiB", "--json", "--", "llama-server",
                                                  "-hf", "unsloth/Qwen3-8B-GGUF:Q4_K_M", "-c", "65536"],
    "fit -- vllm serve Qwen/Qwen3-14B (24 GiB)": [*OOMKIT, "fit", "--vram", "24GiB", "--json", "--", "vllm", "serve",
                                                   "Qwen/Qwen3-14B", "--max-model-len", "40960"],
    "fit -- vllm serve Qwen2.5-7B -tp 2 (2 x 16 GiB: no fit)": [*OOMKIT, "fit", "--vram", "16GiB", "--json", "--",
                                                                 "vllm", "serve", "Qwen/Qwen2.5-7B-Instruct", "-tp",
                                                                 "2"],
    # Ollama's llama-server runner plays llama.cpp's --fit on a 671B MoE: dozens of dry runs per estimate, and tier 3
    # looks through the GPU catalog
    "plan deepseek-r1:671b --engine ollama --gpu 'RTX 4090'": [*OOMKIT, "plan", "deepseek-r1:671b", "--engine",
                                                               "ollama", "--gpu", "RTX 4090", "--json"],
    "fit -- ollama run deepseek-r1:671b (24 GiB: no fit)": [*OOMKIT, "fit", "--vram", "24GiB", "--json", "--",
                                                             "ollama", "run", "deepseek-r1:671b"],
    # llama.cpp's CUDA compute buffer replayed through ggml's scheduler (sched_replay) at every context and layer
    # split the fit weighs: the lowerings kept by shape (device_peak_by_kv), Gemma 3's over its base cache's cells.
    # `--runs 1 --only llama-server --against` the tree before (e9803cf1), on the shared 2-core machine, wall (cpu) s
    # before -> after: gemma-3-12b / rtx3060 76.1 (57.3) -> 6.3 (4.3), Llama-3.3-70B / rtx4090 86.8 (64.5) -> 34.8
    # (22.7), Llama-3.1-8B / rtx4090 24.1 (17.7) -> 10.5 (7.2), qwen3-8b -c 65536 5.0 (3.5) -> 4.1 (2.6).
    # Then each kept lowering re-placed by galloc.Replay (ggml-alloc's walk kept per size decisions, the allocator
    # alone run on a size vector; 15215ccb): `PYTHONPATH=. python bench/bench_plan.py --runs 3 --only llama-server
    # --against` the tree before (f1578a90), median cpu s before -> after: Llama-3.3-70B / rtx4090 25.5 -> 16.1,
    # Llama-3.1-8B / rtx4090 7.9 -> 5.8, gemma-3-12b / rtx3060 4.5 -> 4.5, qwen3-8b -c 65536 2.7 -> 2.7
    "fit -- llama-server gemma-3-12b -c 999999 (rtx3060: iSWA replay)": [
        *OOMKIT, "fit", "--gpu", "rtx3060", "--", "llama-server", "-hf", "unsloth/gemma-3-12b-it-GGUF:Q4_K_M",
        "-c", "999999"],
    "fit -- llama-server Llama-3.3-70B -c 9999999 (rtx4090)": [
        *OOMKIT, "fit", "--gpu", "rtx4090", "--", "llama-server", "-hf", "unsloth/Llama-3.3-70B-Instruct-GGUF:Q4_K_M",
        "-c", "9999999"],
    "fit -- llama-server Llama-3.1-8B -c 999999999 (rtx4090)": [
        *OOMKIT, "fit", "--gpu", "rtx4090", "--", "llama-server", "-hf", "unsloth/Llama-3.1-8B-Instruct-GGUF:Q4_K_M",
        "-c", "999999999"],
}


# as installed: byte-compiled (an environment with PYTHONDONTWRITEBYTECODE recompiles every module on each run)
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--only", action="append", help="the cases whose name holds this text (and python -c pass); "
                    "given more than once, those that hold any")
    ap.add_argument("--against", help="another tree's src/ to run the same oomkit cases from, interleaved")
    args = ap.parse_args()
    cases = {k: (v, None) for k, v in CASES.items() if args.only is None or any(o in k for o in args.only) or k == "python -c pass"}
    if args.against:
        cases.update({f"{k} [{args.against}]": (cmd, args.against) for k, (cmd, _) in list(cases.items())
                      if k != "python -c pass"})
    times: dict[str, list[float]] = {k: [] for k in cases}
    cpu: dict[str, list[float]] = {k: [] for k in cases}
    for _ in range(args.runs):  # interleaved: each round runs every case once
        for name, (cmd, src) in cases.items():
            env = ENV if src is None else {**ENV, "PYTHONPATH": src}
            t, c = time.perf_counter(), _cpu_seconds()
            subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
            times[name].append(time.perf_counter() - t)
            cpu[name].append(_cpu_seconds() - c)
    base = statistics.median(times["python -c pass"])
    print(f"{'case':<58} {'median s':>9} {'x python':>9} {'cpu s':>7} {'x against':>10}")
    for name, ts in times.items():
        m = statistics.median(ts)
        other = f"{name} [{args.against}]"  # this tree's cpu time over the other tree's, for the same case
        vs = (f"{statistics.median(cpu[name]) / statistics.median(cpu[other]):>10.2f}" if other in cpu
              and statistics.median(cpu[other]) > 0 else "")
        print(f"{name:<58} {m:>9.3f} {m / base:>9.1f} {statistics.median(cpu[name]):>7.2f} {vs}")


if __name__ == "__main__":
    main()
