"""oomkit fit -- <engine command>: the command, changed as little as possible so that it fits."""

from __future__ import annotations

from ..errors import OomkitError
from ..hardware.visible import engine_sees, shown, visible_variables
from ..plan.fit import fit, read_command
from ..report import plan as report
from . import _plan_args
from ._model_args import engine_env, env_visible, estimate_option, gpus_started, split_args

HELP = """\
usage: oomkit fit [--gpu NAME|--vram SIZE] [--reserve SIZE] [--json] -- ENGINE-COMMAND ...

Reads your engine command (llama-server, llama-cli, vllm serve, python -m sglang.launch_server, ollama run with its
OLLAMA_* variables, mlx_lm.server), keeps every flag that still fits, and changes the fewest knobs to make it fit
the detected GPUs (or --gpu / --vram): the KV cache type, the context, the weight format, part of the model in
system RAM. Prints the rewritten command, what changed and why, and the memory before and after.

options:
  --gpu NAME[,NAME]     GPUs from the catalog
  --vram SIZE[,SIZE]    memory of each GPU
  --reserve SIZE        memory other programs hold on each GPU
  --headroom SIZE       memory to keep free on each GPU
  --min-ctx N           do not shorten the context below N
  --env KEY=VALUE       the engine's environment (repeatable)
  --engine-version V    engine release whose rules to apply (vLLM/SGLang release, llama.cpp build b6500 or date)
  --json                JSON output

exit status: 0 a command that fits (unchanged when it already does), 1 nothing fits (the next tier shown),
2 bad input.

examples:
  oomkit fit --gpu "RTX 4060" -- llama-server -hf unsloth/Qwen3-8B-GGUF:Q4_K_M -c 65536
  oomkit fit --vram 24GiB -- vllm serve Qwen/Qwen3-14B --max-model-len 40960
"""

_PLAN_ONLY = ("--markdown", "--limit", "--also")
_OPTIONS = {**_plan_args.OPTIONS, "--env": True, "--engine-version": True, "-h": False, "--help": False}


def run(argv: list[str]) -> int:
    head = argv[: argv.index("--")] if "--" in argv else argv
    if "-h" in head or "--help" in head or not argv:
        print(HELP)
        return 0
    opts, model, engine_args, command = split_args(argv, _OPTIONS)
    if command is None or not command:
        raise OomkitError("give the engine command after --, e.g. oomkit fit --vram 24GiB -- llama-server -m "
                          "model.gguf -c 32768")
    if model is not None or engine_args:
        # `fit --ctx 8192 -- ...`: the option of estimate and check is said as such, not as a stray argument
        other = next((said for a in engine_args if (said := estimate_option(a.partition("=")[0], _OPTIONS))), None)
        raise OomkitError(other or f"unexpected argument before --: {(model or engine_args[0])!r}")
    for name in _PLAN_ONLY:  # plan's options fit shares the reader of, but not the use: said, not dropped
        if opts.get(name):
            raise OomkitError(f"{name} is an option of oomkit plan, not of fit (fit prints its one command as text "
                              "or --json)")
    notes: list[str] = []  # said once the fit stands, so that a bad input's error stays one line
    env = engine_env(opts.get("--env"))
    # read once, at the release --engine-version names: the visible devices below and the fit read the same
    parsed = read_command(list(command), env, opts.get("--engine-version"))
    # CUDA_VISIBLE_DEVICES and the like, from --env and the command itself: the GPUs the engine sees
    visible = {**env_visible(opts.get("--env")), **visible_variables(dict(parsed.env))}
    with engine_sees(visible, parsed.engine, gpus_started(parsed.settings)) as seen:
        devices = _plan_args.devices(opts, notes)
    if visible and not devices:
        said = shown(visible)
        raise OomkitError(f"{said} leaves no GPU visible: {parsed.engine} runs on the CPU (the GPU backend finds no "
                          "device); fit lays a model out on GPUs: name a GPU in the variable, or size the CPU run "
                          "with `oomkit check --cpu-only`")
    notes += [f"oomkit: note: {n}" for n in seen]
    result = fit(command, devices, _plan_args.goals(opts), env=env, engine_version=opts.get("--engine-version"),
                 parsed=parsed)
    _plan_args.say_notes(notes)
    print(report.to_json(result) if opts.get("--json") else report.fit_text(result))
    return 0 if result.fits else 1
