"""Print the JSON of several hundred oomkit commands (every catalog model with every engine, engine command
lines, tables, checks), one record per line, so two trees can be compared byte for byte:

    python tools/snapshot_estimates.py > before.jsonl   (then, after a change)
    python tools/snapshot_estimates.py > after.jsonl && diff before.jsonl after.jsonl

`--engine E` keeps the commands of one engine (its name or its program in the command line).
"""

from __future__ import annotations

import contextlib
import io
import json
import sys

from oomkit.cli import main
from oomkit.model import catalog

ENGINES = ("llama.cpp", "ollama", "vllm", "sglang", "transformers", "mlx")
PROGRAMS = {"llama.cpp": ("llama.cpp", "llama-server"), "mlx": ("mlx", "mlx_lm.server")}
COMMANDS = [
    ["estimate", "--vram", "80GiB,80GiB", "--json", "--", "vllm", "serve", "Qwen/Qwen3-32B", "-tp", "2",
     "--max-model-len", "32768"],
    ["estimate", "--vram", "80GiB", "--json", "--", "vllm", "serve", "Qwen/Qwen3-14B", "--max-model-len", "32768",
     "--gpu-memory-utilization", "0.9", "--kv-cache-dtype", "fp8"],
    ["estimate", "--gpu", "H100", "--json", "--", "python", "-m", "sglang.launch_server", "--model-path",
     "Qwen/Qwen3-8B", "--context-length", "32768"],
    ["estimate", "--gpu", "RTX 4090", "--json", "--", "llama-server", "-m", "qwen3:8b", "-c", "16384", "-ngl", "20",
     "-fa", "on", "-ctk", "q8_0", "-ctv", "q8_0", "-np", "4"],
    ["estimate", "--vram", "24GiB", "--json", "--env", "OLLAMA_CONTEXT_LENGTH=8192", "--", "ollama", "run",
     "qwen2.5:32b"],
    ["estimate", "--vram", "24GiB", "--json", "--", "mlx_lm.server", "--model", "mlx-community/Qwen3-8B-4bit"],
    ["estimate", "qwen3:8b", "--engine", "vllm", "--json"],
    ["estimate", "qwen3:8b", "--engine", "sglang", "--kv-memory", "10GiB", "--json"],
    ["estimate", "deepseek-v3", "--engine", "llama.cpp", "--engine-version", "b5000", "--vram", "80GiB", "--json"],
    ["estimate", "llama3.1:8b", "--ctx", "131072", "--kv-type", "q8_0", "-fa", "on", "--parallel", "2", "--json"],
]
TABLES = ["llama3.1:8b", "qwen3:8b", "gemma-3-27b-it", "gpt-oss-20b", "deepseek-v3", "qwen3.5-27b"]
CHECKS = ["llama3.1:8b", "qwen3:32b", "gpt-oss-120b", "deepseek-v3"]


def run(argv: list[str]) -> dict:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(argv)
        except SystemExit as e:
            rc = e.code
    return {"argv": argv, "rc": rc, "stdout": out.getvalue(), "stderr": err.getvalue()}


def cases():
    names = [e["slug"] for e in catalog.entries()]
    for name in names:
        for engine in ENGINES:
            yield ["estimate", name, "--engine", engine, "--vram", "24GiB", "--json"]
    yield from COMMANDS
    for name in TABLES:
        for engine in ENGINES:
            yield ["table", name, "--engine", engine, "--json"]
    for name in CHECKS:
        for engine in ENGINES:
            yield ["check", name, "--engine", engine, "--vram", "48GiB", "--json"]


if __name__ == "__main__":
    only = sys.argv[sys.argv.index("--engine") + 1] if "--engine" in sys.argv else None
    words = PROGRAMS.get(only, (only,))
    for argv in cases():
        if only is not None and not any(w in argv for w in words):
            continue
        sys.stdout.write(json.dumps(run(argv), sort_keys=True) + "\n")
