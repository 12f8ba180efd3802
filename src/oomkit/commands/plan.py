"""oomkit plan: the settings that fit, best first, as a decision matrix with each option's launch command."""

from __future__ import annotations

import json

from ..errors import OomkitError
from ..plan.search import plan
from ..report import plan as report
from . import _plan_args
from ._model_args import OPTIONS, parse_model_request

HELP = """\
usage: oomkit plan MODEL [--engine E] [--min-ctx N] [--concurrency N] [--gpu NAME|--vram SIZE] [options]
       oomkit plan --all [--engine E] [--min-ctx N] [--gpu NAME|--vram SIZE]

The settings of the engine that run MODEL on these GPUs, best first: the Pareto front of context, quality and
decode speed. Each option shows its memory per GPU, the headroom left, the decode tokens/s bound, the published
quality cost of its weights and KV cache, and the launch command exactly as typed. Three tiers, in this order:
all on the GPU(s); part of the model in system RAM (MoE experts first, then layers); and, when nothing fits, the
smallest GPU (or number of GPUs) from the catalog that runs it. MODEL may be a family ("qwen3", "llama 3.1"):
the largest member that fits with the engine's default weights is planned. --all: every catalog model that fits
entirely on these GPUs at the context asked (default 8192), with the engine's default weights and the first KV
type that fits, and its command.

options:
  --engine E            llama.cpp (default), ollama, vllm, sglang, transformers, mlx
  --min-ctx N           context each sequence needs (default 8192, or the model's maximum if smaller)
  --concurrency N       sequences served at once (llama.cpp -np, vLLM --max-num-seqs, ...)
  --gpu NAME[,NAME]     GPUs from the catalog ("RTX 4090", "2x RTX 3090", "8x H100")
  --vram SIZE[,SIZE]    memory of each GPU
  --nodes N             that many machines of those GPUs (vLLM -pp across nodes, SGLang --nnodes)
  --reserve SIZE        memory other programs hold on each GPU
  --headroom SIZE       memory to keep free on each GPU beyond the estimate
  --ram SIZE            system RAM the offloaded tier may fill (default: this machine's available RAM when
                        planning for its own GPUs; unchecked with --gpu / --vram unless given)
  --ram-bandwidth GB/S  system RAM bandwidth for the offloaded tier (default: stated in the output)
  --also MODEL|COMMAND  another model on the same GPUs, planned together (repeatable): a draft model for
                        speculative decoding, an embedding server ("llama-server -m bge-m3.gguf -c 8192")
  --quant Q             keep this weight format (else the planner tries the formats the engine loads)
  --limit N             options shown (default 12)
  --all                 every catalog model: which fit, and with what
  --json | --markdown   the matrix as JSON or a Markdown table
  engine flags          starting settings, e.g. -ub 1024 -np 2 (the planner keeps what it does not turn)

exit status: 0 an option fits on these GPUs, 1 nothing does (tier 3 shown), 2 bad input.

examples:
  oomkit plan qwen3:8b --gpu "RTX 4060" --min-ctx 32768
  oomkit plan llama3.3:70b --vram 24GiB --min-ctx 16384
  oomkit plan deepseek-v3 --engine vllm --gpu "8x H100" --nodes 2
"""


def run(argv: list[str]) -> int:
    if "-h" in argv or "--help" in argv:
        print(HELP)
        return 0
    if "--all" in argv:
        return _all(argv)
    req = parse_model_request(argv, extra_options={**_plan_args.OPTIONS, **{k: v for k, v in OPTIONS.items()
                                                                             if k not in _plan_args.OPTIONS}})
    if req.opts.get("--json") and req.opts.get("--markdown"):  # as table: one format, not the first of two
        raise OomkitError("give one output format, not --json and --markdown")
    notes: list[str] = []  # said once the plan stands, so that a bad input's error stays one line
    if (hidden := req.hides_every_gpu(detected=True)) is not None:
        raise OomkitError(f"{hidden}; plan lays a model out on GPUs: name a GPU in the variable, or size the CPU run "
                          "with `oomkit check --cpu-only`")
    with req.devices_seen() as seen:  # CUDA_VISIBLE_DEVICES and the like: the GPUs the engine's command sees
        devices = _plan_args.devices(req.opts, notes)
    notes += [f"oomkit: note: {n}" for n in seen]
    goals = _plan_args.typed_goals(_plan_args.goals(req.opts), req.opts, req.engine, req.settings)
    limit = _plan_args.limit(req.opts)
    result = plan(req.model, req.engine, devices=devices, goals=goals, settings=req.settings, quant=req.quant,
                  limit=limit, also=tuple(req.opts.get("--also") or ()), kv_type=req.opts.get("--kv-type"))
    _plan_args.say_notes(notes)
    if req.opts.get("--json"):
        print(report.to_json(result))
    elif req.opts.get("--markdown"):
        print(report.markdown(result))
    else:
        print(report.text(result))
    return 0 if result.options else 1


def _all(argv: list[str]) -> int:
    from ..model import catalog  # lazy: the catalog's index, only for --all
    from ..plan.family import survey
    from ._model_args import split_args

    opts, model, engine_args, _ = split_args([a for a in argv if a != "--all"], {**_plan_args.OPTIONS,
                                                                                 "--engine": True})
    if model is not None or engine_args:
        raise OomkitError("--all plans every catalog model: give no MODEL or engine flags")
    if opts.get("--markdown"):  # the survey is a text list or JSON; --markdown was printed as the text
        raise OomkitError("--all prints its list as text or --json, not --markdown")
    goals = _plan_args.goals(opts)
    rows = [r for r in catalog.entries() if r["family"] != "embedding"]
    notes: list[str] = []
    found = survey(sorted(rows, key=lambda r: -(r.get("params") or 0)), opts.get("--engine", "llama.cpp"),
                   _plan_args.devices(opts, notes), goals)
    _plan_args.say_notes(notes)
    fitting = [f for f in found if f.option is not None]
    if opts.get("--json"):
        print(json.dumps({"models": [f.to_dict() for f in found]}, indent=2))
    else:
        print(report.survey_text(fitting, len(found)))
    return 0 if fitting else 1
