"""oomkit check: will it fit on this machine? The verdict, the headroom, the largest context (exit 1 if not)."""

from __future__ import annotations

import sys
from dataclasses import replace

from ..check import CheckResult, check
from ..report import check as report
from ..report import render
from ._model_args import OPTIONS, ModelRequest, parse_model_request, split_args

EXAMPLE_MODEL = "llama3.1:8b"  # the built-in example `oomkit check` runs with no MODEL

HELP = """\
usage: oomkit check [MODEL] [options] [engine flags]
       oomkit check [options] -- ENGINE-COMMAND ...

Will MODEL, at this context, with this engine and settings, fit on this machine? Checked against the FREE
memory of the detected GPUs (NVIDIA, AMD, Apple silicon), or the hardware given with --vram / --gpu, or, on a
machine without a GPU, a reference card (RTX 4090, said so). Without MODEL: the built-in example (%(example)s).

Prints the verdict (fits with N MiB left / does not fit by N MiB), the memory after the weights, the KV cache the
context needs, the largest context that fits with these settings (and with each KV cache type), and the stage that
fails first (weights, kv_cache, compute).

options:
  --engine E            llama.cpp (default)
  --ctx N               context length (default: the engine's; llama.cpp: the model's trained maximum)
  --quant Q             weight format (GGUF file type such as Q4_K_M, or bf16/fp8/...)
  --kv-type T           KV cache type for K and V (llama.cpp: -ctk/-ctv)
  --parallel N          parallel sequences (llama.cpp: -np)
  --vram SIZE[,SIZE]    plan for GPUs of these sizes instead of the detected ones
  --gpu NAME[,NAME]     plan for GPUs from the catalog ("RTX 4090", "2x H100 SXM")
  --cpu-only            check against this machine's RAM (no GPU)
  --ram SIZE            with --cpu-only: check against a host of this much memory, all of it free (the total
                        llama.cpp's --fit weighs; default: this machine's)
  --engine-version V    engine release whose rules to apply
  --json                JSON output (bytes as integers)
  engine flags          the engine's own options, e.g. -c 32768 -ctk q8_0 -ctv q8_0 -fa on -np 1

exit status: 0 it fits, 1 it does not fit, 2 bad input or unreadable hardware.

examples:
  oomkit check
  oomkit check qwen3:32b --ctx 32768 -ctk q8_0 -ctv q8_0
  oomkit check llama3.1:70b --gpu "2x RTX 3090" --ctx 16384
  oomkit check -- llama-server -m ./model.gguf -c 65536 -ngl 99 -fa on
"""


def checked(req: ModelRequest) -> CheckResult:
    """The check of a parsed request, on the GPUs its engine command sees (the CLI's and the web API's)."""
    vram, gpu, cpu_only = req.opts.get("--vram"), req.opts.get("--gpu"), bool(req.opts.get("--cpu-only"))
    if (hidden := req.hides_every_gpu(detected=True)) is not None:  # CUDA_VISIBLE_DEVICES=-1 llama-server ...: the CPU's turn
        vram, gpu, cpu_only = None, None, True
    with req.devices_seen() as seen:  # CUDA_VISIBLE_DEVICES and the like: the planned GPUs the engine sees
        result = check(req.model, req.engine, quant=req.quant, settings=req.settings, vram=vram, gpu=gpu,
                       cpu_only=cpu_only, ram=req.opts.get("--ram"))
    if hidden is not None:
        seen = [*req.visible_notes, f"{hidden}, so this is checked against this machine's RAM"]
    return replace(result, hardware_notes=(*seen, *result.hardware_notes)) if seen else result


def run(argv: list[str]) -> int:
    if "-h" in argv[: argv.index("--") if "--" in argv else len(argv)] or "--help" in argv:
        print(HELP % {"example": EXAMPLE_MODEL})
        return 0
    req = parse_model_request(argv, default_model=EXAMPLE_MODEL)
    result = checked(req)
    if result.rope_scaling_factor is not None:
        print(f"oomkit: warning: {result.notes[0]}", file=sys.stderr)
    if req.opts.get("--json"):
        print(report.to_json(result))
    else:
        out = report.text(result)
        if req.model == EXAMPLE_MODEL and not _gave_model(argv):
            out = f"(the built-in example, {EXAMPLE_MODEL}; give MODEL to check yours)\n" + out
        print(out)
        if req.opts.get("--explain"):
            print(render.table(result.estimate, explain=True))
    return 0 if result.fits else 1


def _gave_model(argv: list[str]) -> bool:
    if "--" in argv:
        return True
    _, model, _, _ = split_args(argv, OPTIONS)
    return model is not None
