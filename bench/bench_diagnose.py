"""Timings of `oomkit diagnose` (the issue's budgets: one message 0.3 s cold, a 50 MB log 5 s), against a bare
`python -c pass` measured in the same run, interleaved; the machine is noisy, so the ratio is what to compare.

Cases, each a whole cold process:
- one vLLM KV-cache message on stdin (`oomkit diagnose -`), and the same with --json;
- one PyTorch OOM from a file;
- a 50 MB vLLM serving log (ANSI colours, progress bars with \\r, CRLF, worker prefixes) with the OOM at the end,
  from a file (written once to a temporary directory; the same generator as the test suite's).

    python bench/bench_diagnose.py [--runs 7] [--log-runs 3] [--against TREE]
    python bench/bench_diagnose.py --accuracy     (the corpus's per-field shares)

--against TREE: another oomkit tree (a checkout of an earlier commit: `git worktree add /tmp/old HEAD~1`) whose
src/ is timed on the 50 MB log in the same run, interleaved, with the CPU time each process used (less noisy than
the wall time on a shared machine) and the ratio of the medians.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.test_diagnose_fuzz import synthetic_log  # noqa: E402

OOMKIT = [sys.executable, "-m", "oomkit"]
V1_KV = ("ValueError: To serve at least one request with the models's max seq len (131072), (16.00 GiB KV cache is "
         "needed, which is larger than the available KV cache memory (0.71 GiB). Based on the available memory, the "
         "estimated maximum model length is 5632. Try increasing `gpu_memory_utilization` or decreasing "
         "`max_model_len` when initializing the engine.\n")
TORCH = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 "
         "GiB of which 1.20 GiB is free. Including non-PyTorch memory, this process has 22.43 GiB memory in use. Of "
         "the allocated memory 17.10 GiB is allocated by PyTorch, and 4.83 GiB is reserved by PyTorch but "
         "unallocated.\n")


def env(src: Path = ROOT / "src") -> dict[str, str]:
    e = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # as installed: .pyc files
    e["PYTHONPATH"] = os.pathsep.join([str(src), e.get("PYTHONPATH", "")])
    return e


CPU: dict[str, list[float]] = {}  # CPU seconds (user + system) of each timed process, by case


def time_once(cmd: list[str], stdin: bytes | None, src: Path = ROOT / "src", name: str = "") -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    r = subprocess.run(cmd, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT, env=env(src))
    wall = time.perf_counter() - t
    if r.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} exited with {r.returncode}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.setdefault(name, []).append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return wall


def accuracy() -> None:
    """Share of the corpus (tests/fixtures/diagnose/corpus.jsonl) read correctly, per field: the program, the stage,
    the numbers (a text counts when every number it carries is read exactly; each number also counted alone)."""
    import json

    from oomkit.diagnose import diagnose

    cases = [json.loads(x) for x in (ROOT / "tests/fixtures/diagnose/corpus.jsonl").read_text().splitlines() if x]
    eng = stage = nums_ok = nums_cases = n_total = n_ok = 0
    misses = []
    for c in cases:
        d, exp = diagnose(c["text"]), c["expected"]
        eng += d.engine == exp["engine"]
        stage += d.stage == exp["stage"]
        if exp["numbers"]:
            nums_cases += 1
            good = [d.numbers.get(k) == v for k, v in exp["numbers"].items()]
            nums_ok += all(good)
            n_total += len(good)
            n_ok += sum(good)
        if (d.engine, d.stage) != (exp["engine"], exp["stage"]):
            misses.append(f"  {c['id']}: read {d.engine}/{d.stage}, expected {exp['engine']}/{exp['stage']}"
                          + (f" ({c['known_miss']})" if c.get("known_miss") else ""))
    n = len(cases)
    print(f"corpus: {n} texts")
    print(f"engine:  {eng}/{n} = {eng / n:.1%}")
    print(f"stage:   {stage}/{n} = {stage / n:.1%}")
    print(f"numbers: {nums_ok}/{nums_cases} texts with numbers read completely = {nums_ok / nums_cases:.1%}; "
          f"{n_ok}/{n_total} numbers = {n_ok / n_total:.1%}")
    print("not placed as expected:" if misses else "every text placed as expected")
    print("\n".join(misses))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--log-runs", type=int, default=3)
    ap.add_argument("--accuracy", action="store_true", help="the corpus's per-field shares instead of timings")
    ap.add_argument("--against", type=Path, help="another oomkit tree whose src/ is timed on the 50 MB log too")
    args = ap.parse_args()
    if args.accuracy:
        sys.path.insert(0, str(ROOT / "src"))
        accuracy()
        return
    tmp = Path(tempfile.mkdtemp())
    torch_file = tmp / "torch.txt"
    torch_file.write_text(TORCH)
    log = tmp / "serve-50mb.log"
    log.write_bytes(synthetic_log().encode("utf-8"))
    size_mb = log.stat().st_size / 1e6
    log_name = f"diagnose FILE ({size_mb:.1f} MB vLLM log)"
    cases: dict[str, tuple[list[str], bytes | None, float, Path]] = {
        "python -c pass": ([sys.executable, "-c", "pass"], None, 0.0, ROOT / "src"),
        "diagnose - (vLLM KV message, stdin)": ([*OOMKIT, "diagnose", "-"], V1_KV.encode(), 0.3, ROOT / "src"),
        "diagnose - --json (vLLM KV message)": ([*OOMKIT, "diagnose", "-", "--json"], V1_KV.encode(), 0.3,
                                                ROOT / "src"),
        "diagnose FILE (PyTorch OOM)": ([*OOMKIT, "diagnose", str(torch_file)], None, 0.3, ROOT / "src"),
        log_name: ([*OOMKIT, "diagnose", str(log)], None, 5.0, ROOT / "src"),
    }
    if args.against:
        cases[f"{log_name}, {args.against}"] = ([*OOMKIT, "diagnose", str(log)], None, 5.0, args.against / "src")
    for cmd, stdin, _, src in cases.values():  # warm the page cache and the .pyc files
        time_once(cmd, stdin, src)
    CPU.clear()
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for i in range(args.runs):  # interleaved, so load on the machine hits every case alike
        for name, (cmd, stdin, budget, src) in cases.items():
            if budget >= 5.0 and i >= args.log_runs:
                continue
            samples[name].append(time_once(cmd, stdin, src, name))
    base = statistics.median(samples["python -c pass"])
    print(f"{'command':44s} {'runs':>4s} {'median':>9s} {'max':>9s} {'vs python':>10s} {'budget':>8s}")
    for name, xs in samples.items():
        budget = cases[name][2]
        med = statistics.median(xs)
        ok = "" if not budget else ("within" if med <= budget else "OVER")
        print(f"{name:44s} {len(xs):4d} {med:8.3f}s {max(xs):8.3f}s {med / base:9.1f}x "
              f"{(f'{budget:g} s ' + ok) if budget else '':>8s}")
    if args.against:
        other = f"{log_name}, {args.against}"
        wall = statistics.median(samples[other]) / statistics.median(samples[log_name])
        cpu = statistics.median(CPU[other]) / statistics.median(CPU[log_name])
        print(f"50 MB log, CPU median: this tree {statistics.median(CPU[log_name]):.3f} s, {args.against} "
              f"{statistics.median(CPU[other]):.3f} s; {args.against} / this tree: {wall:.2f}x wall, {cpu:.2f}x CPU")


if __name__ == "__main__":
    main()
