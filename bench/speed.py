"""Cold-process speed of every oomkit command, against a bare `python -c pass` and the peers' equivalent commands
in the same run, interleaved (the machine is shared and noisy: the ratio to `python -c pass` is what to compare).

    python bench/speed.py [--runs 7] [--log-runs 3] [--peers /tmp/peers-venv] [--markdown]

Each case is a whole process, as a user types it, with HF_HUB_OFFLINE=1 (no network; the catalog, the file or
oomkit's cache answers). The package loads as installed (byte-compiled): PYTHONDONTWRITEBYTECODE is cleared.
Inputs written once to a temporary directory: Llama-3.1-8B's full GGUF header (32 layers, every real tensor name,
shape and type; the data a sparse hole; the test suite's synthetic model) and a 50 MB vLLM serving log with the OOM
at its end (tests/test_diagnose_fuzz.py). --peers: a virtual environment holding `llmfit` and `hf-mem` (pip
install llmfit hf-mem); their commands join the run where they are installed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "bench"))
from peers import HFMEM_DRIVER  # noqa: E402

OOMKIT = [sys.executable, "-m", "oomkit"]
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {"HF_HUB_OFFLINE": "1"}
V1_KV = ("ValueError: To serve at least one request with the models's max seq len (131072), (16.00 GiB KV cache is "
         "needed, which is larger than the available KV cache memory (0.71 GiB). Based on the available memory, the "
         "estimated maximum model length is 5632. Try increasing `gpu_memory_utilization` or decreasing "
         "`max_model_len` when initializing the engine.\n")


def inputs(tmp: Path) -> tuple[Path, Path]:
    from tests.groundtruth import synth
    from tests.test_diagnose_fuzz import synthetic_log

    gguf = synth.synth_path(synth.MODELS["llama-3.1-8b"](n_layers=None), "q4_0", cache_dir=tmp)
    log = tmp / "vllm-50mb.log"
    log.write_text(synthetic_log(), encoding="utf-8", newline="")
    return gguf, log


def cases(gguf: Path, log: Path, peers: Path | None) -> dict[str, tuple[list[str], str | None, bool]]:
    """name -> (argv, stdin text, slow: timed --log-runs times only)."""
    c: dict[str, tuple[list[str], str | None, bool]] = {
        "python -c pass": ([sys.executable, "-c", "pass"], None, False),
        "oomkit --help": ([*OOMKIT, "--help"], None, False),
        "oomkit estimate llama3.1:8b --json (catalog name)": ([*OOMKIT, "estimate", "llama3.1:8b", "--json"], None,
                                                              False),
        "oomkit estimate llama3.1:8b --vram 24GiB (table, largest context)": (
            [*OOMKIT, "estimate", "llama3.1:8b", "--vram", "24GiB"], None, False),
        "oomkit estimate Llama-3.1-8B.gguf --json (GGUF header, 32 layers)": (
            [*OOMKIT, "estimate", str(gguf), "--json"], None, False),
        "oomkit estimate bartowski/Qwen_Qwen3-30B-A3B-GGUF:Q4_K_M --json (derivative name)": (
            [*OOMKIT, "estimate", "bartowski/Qwen_Qwen3-30B-A3B-GGUF:Q4_K_M", "--json"], None, False),
        "oomkit check qwen3:32b --ctx 32768": ([*OOMKIT, "check", "qwen3:32b", "--ctx", "32768"], None, False),
        "oomkit table llama3.1:8b": ([*OOMKIT, "table", "llama3.1:8b"], None, False),
        "oomkit plan qwen3:8b --vram 8GiB --min-ctx 32768": (
            [*OOMKIT, "plan", "qwen3:8b", "--vram", "8GiB", "--min-ctx", "32768", "--json"], None, False),
        "oomkit plan qwen3:30b-a3b --gpu 'RTX 4090' (MoE: the CUDA graph replayed)": (
            [*OOMKIT, "plan", "qwen3:30b-a3b", "--gpu", "RTX 4090", "--json"], None, False),
        "oomkit plan qwen3.5:27b --gpu 'RTX 4090' (hybrid: the scheduler replayed)": (
            [*OOMKIT, "plan", "qwen3.5:27b", "--gpu", "RTX 4090", "--json"], None, False),
        "oomkit fit --vram 8GiB -- llama-server -m qwen3:8b -c 65536": (
            [*OOMKIT, "fit", "--vram", "8GiB", "--json", "--", "llama-server", "-m", "qwen3:8b", "-c", "65536"],
            None, False),
        "oomkit diagnose - (one vLLM message)": ([*OOMKIT, "diagnose", "-"], V1_KV, False),
        "oomkit diagnose vllm-50mb.log (50 MB log)": ([*OOMKIT, "diagnose", str(log)], None, True),
        "oomkit models (the whole catalog)": ([*OOMKIT, "models"], None, False),
        "oomkit plan --all --vram 24GiB (whole-catalog sweep)": (
            [*OOMKIT, "plan", "--all", "--vram", "24GiB", "--json"], None, True),
    }
    if peers is not None:
        llmfit, hfmem = peers / "bin" / "llmfit", peers / "bin" / "hf-mem"
        if llmfit.exists():
            c["llmfit --help (peer)"] = ([str(llmfit), "--help"], None, False)
            c["llmfit plan Qwen/Qwen3-8B --context 32768 --quant Q4_K_M --json (peer)"] = (
                [str(llmfit), "plan", "Qwen/Qwen3-8B", "--context", "32768", "--quant", "Q4_K_M", "--json"], None,
                False)
            c["llmfit list (peer: its whole catalog)"] = ([str(llmfit), "list"], None, False)
        if hfmem.exists():
            c["hf-mem --help (peer)"] = ([str(hfmem), "--help"], None, False)
            # hf-mem reads https://huggingface.co only: the same GGUF through bench/peers.py's local stand-in
            driver = gguf.parent / "hfmem_driver.py"
            driver.write_text(HFMEM_DRIVER, encoding="utf-8")
            c["hf-mem --gguf-file Llama-3.1-8B.gguf --experimental (peer, local hub stand-in)"] = (
                [str(peers / "bin" / "python"), str(driver), str(gguf), "131072", "1", "F16"], None, False)
    return c


def time_once(argv: list[str], stdin: str | None) -> float:
    t = time.perf_counter()
    subprocess.run(argv, input=stdin, text=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV,
                   cwd=ROOT, check=False)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--log-runs", type=int, default=3, help="runs of the slow cases (50 MB log, catalog sweep)")
    ap.add_argument("--peers", type=Path, help="a venv with llmfit / hf-mem installed")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        gguf, log = inputs(Path(d))
        cs = cases(gguf, log, args.peers)
        for argv, stdin, _ in cs.values():  # warm the page cache and the .pyc files
            time_once(argv, stdin)
        samples: dict[str, list[float]] = {n: [] for n in cs}
        for i in range(args.runs):  # interleaved: load on the machine hits every case alike
            for name, (argv, stdin, slow) in cs.items():
                if not slow or i < args.log_runs:
                    samples[name].append(time_once(argv, stdin))
    base = statistics.median(samples["python -c pass"])
    if args.markdown:
        print("| command | runs | median | vs `python -c pass` |\n|---|---|---|---|")
    for name, xs in samples.items():
        med = statistics.median(xs)
        if args.markdown:
            print(f"| `{name}` | {len(xs)} | {med * 1000:,.0f} ms | {med / base:.1f}x |")
        else:
            print(f"{name:80s} {len(xs):3d} {med * 1000:9.1f} ms {med / base:7.1f}x")


if __name__ == "__main__":
    main()
