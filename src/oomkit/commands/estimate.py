"""oomkit estimate: memory of a model with an engine and settings, per device."""

from __future__ import annotations

from ..errors import OomkitError
from ..report import render
from ._model_args import parse_model_request

HELP = """\
usage: oomkit estimate MODEL [options] [engine flags]
       oomkit estimate [options] -- ENGINE-COMMAND ...

How much memory MODEL takes with an engine and its settings, per device.

MODEL is a catalog name or alias (llama3.1:8b, Qwen/Qwen3-32B), a .gguf file, a config.json or a model
directory; a :QUANT suffix picks the weight format (Qwen/Qwen3-32B:Q4_K_M).

options:
  --engine E            llama.cpp (default)
  --ctx N               context length (engine-neutral; llama.cpp: -c)
  --quant Q             weight format (GGUF file type such as Q4_K_M, or bf16/fp8/...)
  --kv-type T           KV cache type for K and V (llama.cpp: -ctk/-ctv)
  --parallel N          parallel sequences (llama.cpp: -np)
  --vram SIZE[,SIZE]    memory of each GPU (24GiB, 24GB, 24576MiB)
  --gpu NAME[,NAME]     GPUs from the catalog ("RTX 4090"; a Mac with its macOS release: "M4 Max 128GB (macOS 15)")
  --cpu-only            no GPU: everything on the CPU
  --ram SIZE            the host's memory (64GiB, 64GB); llama.cpp's --fit fits the context to it without a GPU
                        (default with --cpu-only: this machine's total memory)
  --engine-version V    engine release whose rules to apply (llama.cpp build tag b6500, a date 2025-06-01 or an
                        LM Studio runtime lmstudio-1.63.1; Ollama 0.12.10)
  --backend B           llama.cpp / Ollama GPU backend: cuda, rocm, metal, vulkan, sycl, opencl, cpu (default:
                        from the GPUs: an Apple chip is Metal, AMD ROCm, Intel SYCL)
  --env KEY=VALUE       the engine's environment, repeatable (OLLAMA_CONTEXT_LENGTH=8192); default os.environ
  --kv-memory SIZE      vLLM/SGLang: the memory the KV cache has; report its token capacity
  --json                JSON output (bytes as integers)
  --explain             per-layer view: kind, device, weights, KV, state
  engine flags          the engine's own options, e.g. -c 32768 -ctk q8_0 -ctv q8_0 -fa on -ngl 99 -np 1

examples:
  oomkit estimate llama3.1:8b -c 32768 -ctk q8_0 -ctv q8_0 -fa on --vram 24GiB
  oomkit estimate --gpu "RTX 4090" -- llama-server -m ./model.gguf -c 16384 -ngl 99 -fa on
  oomkit estimate --vram 24GiB --env OLLAMA_CONTEXT_LENGTH=8192 -- ollama run qwen2.5:32b
  oomkit estimate --gpu "M3 Max" -- llama-bench -m Qwen/Qwen3-8B:Q4_K_M -p 512 -n 128
"""


def run(argv: list[str]) -> int:
    if "-h" in argv[: argv.index("--") if "--" in argv else len(argv)] or "--help" in argv:
        print(HELP)
        return 0
    req = parse_model_request(argv)
    if req.opts.get("--json") and req.opts.get("--explain"):  # the per-layer view is a table: JSON has no place for it
        raise OomkitError("give one output: --explain (the per-layer table) or --json, not both")
    est = req.estimate()
    print(render.to_json(est) if req.opts.get("--json") else render.table(est, explain=bool(req.opts.get("--explain"))))
    return 0
