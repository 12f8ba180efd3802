"""The model-and-engine part of a command line, shared by estimate, check and table:
MODEL [oomkit options] [engine flags]  or  [oomkit options] -- ENGINE-COMMAND ...
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

from ..engines.base import LM_STUDIO_NAMES, EngineModule, get_engine
from ..engines.cmdline import (
    names_a_command,
    parse_command,
    python_call_hint,
    read_as_model_flag,
    split_command,
)
from ..engines.command import clip_repr, given_twice, leading_assignments, unwrap
from ..engines.pasted import compose_hint, pasted_file_hint
from ..engines.release_flags import reading_release
from ..errors import OomkitError, SettingsError
from ..estimate import estimate, lm_studio_load, lm_studio_note
from ..flags import check_settings, flag_value
from ..hardware.visible import engine_sees, hid_every_gpu, shown, visible_variables
from ..memory import MemoryEstimate
from ..request import check_quant_agrees, devices_from, with_ram
from ..units import parse_size

# oomkit's own estimate options: name -> takes a value
OPTIONS = {"--engine": True, "--ctx": True, "--quant": True, "--kv-type": True, "--parallel": True,
            "--vram": True, "--gpu": True, "--cpu-only": False, "--ram": True, "--engine-version": True,
            "--json": False,
            "--explain": False, "--kv-memory": True, "--backend": True, "--env": True, "-h": False, "--help": False}
# options that may be given more than once (collected into a list)
REPEATABLE = {"--env", "--also"}


@dataclass(frozen=True)
class ModelRequest:
    """What the user asked for: the model, the engine and its settings, the hardware."""

    model: str
    engine: str
    settings: Any
    quant: str | None
    opts: dict[str, Any]
    notes: tuple[str, ...] = ()  # which runtime LM Studio runs (estimate.lm_studio_note; the estimate says it first)
    # CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES as the engine command or --env sets them
    visible: tuple[tuple[str, str], ...] = ()
    visible_notes: tuple[str, ...] = ()  # where they were given: in front of `ollama run`, the client's

    def estimate(self, **kw: Any) -> MemoryEstimate:
        with self.devices_seen() as seen:
            est = estimate(self.model, self.engine, quant=self.quant, vram=self.opts.get("--vram"),
                           gpu=self.opts.get("--gpu"), cpu_only=bool(self.opts.get("--cpu-only")),
                           settings=self.settings, **kw)
        hidden = self.hides_every_gpu()  # llama.cpp and Ollama then run on the CPU, as the estimate does
        seen = [*self.visible_notes, hidden] if hidden is not None else seen
        return replace(est, warnings=(*seen, *est.warnings)) if seen else est

    @contextmanager
    def devices_seen(self) -> Iterator[list[str]]:
        """Within: the planned devices (--vram, --gpu) and the detected ones are those the visible-devices
        variables leave to the engine (hardware/visible.py engine_sees); yields the warnings of applying them."""
        with engine_sees(dict(self.visible), self.engine, gpus_started(self.settings)) as seen:
            seen[:0] = [n for n in self.visible_notes if n not in seen]
            yield seen

    def hides_every_gpu(self, detected: bool = False) -> str | None:
        """The planned GPUs (--vram, --gpu), or with `detected` and neither given this machine's (where it has none:
        the reference card check falls back to, hidden as estimate's assumed GPU is), all hidden by the
        visible-devices variables, for an engine that then runs on the CPU (llama.cpp, Ollama): the note that says
        so; else None (vLLM and SGLang refuse it)."""
        planned = self.opts.get("--vram") is not None or self.opts.get("--gpu") is not None
        if not self.visible or self.opts.get("--cpu-only"):
            return None
        found = True
        with self.devices_seen():
            if detected and not planned:
                from ..hardware.detect import detect  # lazy: this machine's GPUs, only where asked for

                found = bool(detect().gpus) or hid_every_gpu()  # GPUs there, whether or not the variables hid them
            if planned or not detected or not found:  # estimate's one GPU of unknown size where nothing is given
                # (check's reference card where this machine has none)
                devices_from(self.opts.get("--vram"), self.opts.get("--gpu"))
            if not hid_every_gpu():
                return None
        said = shown(dict(self.visible))
        where = "planned" if planned else "detected" if detected and found else "assumed"
        return (f"{said} leaves none of the {where} GPUs visible: {self.engine} runs "
                "on the CPU (the GPU backend finds no device)")


def gpus_started(settings: Any) -> int:
    """The GPUs vLLM's or SGLang's parallel settings start workers on, on this node: vLLM TP x PP x DP (its
    world_size times the data-parallel ranks); SGLang TP x PP, times DP where DP attention does not share the TP
    GPUs; 0 for other engines or several nodes (each node's share is not the planned list's)."""
    get = getattr
    if get(settings, "nnodes", 1) != 1:
        return 0
    if hasattr(settings, "tensor_parallel_size"):
        return (settings.tensor_parallel_size * get(settings, "pipeline_parallel_size", 1)
                * get(settings, "data_parallel_size", 1))
    if hasattr(settings, "tp_size"):
        dp = 1 if get(settings, "enable_dp_attention", False) else get(settings, "dp_size", 1)
        return settings.tp_size * get(settings, "pp_size", 1) * dp
    return 0


def parse_model_request(argv: list[str], extra_options: dict[str, bool] | None = None,
                        default_model: str | None = None, later_wins: bool = False) -> ModelRequest:
    """argv after the command name -> ModelRequest. extra_options: the command's own options (name -> takes a
    value), returned in .opts like the common ones. later_wins: an option given again replaces the first (diff's
    --change appends its options to the launch's); else two different values of one option are refused."""
    options = {**OPTIONS, **(extra_options or {})}
    opts, model, engine_args, command = split_args(argv, options, later_wins)
    quant = opts.get("--quant")
    env = engine_env(opts.get("--env"))
    visible = env_visible(opts.get("--env"))
    visible_notes: list[str] = []
    program_default = None  # the settings a program starts from where they are not the engine's (lms load)
    if command is not None:
        if engine_args:
            raise OomkitError("give either MODEL with options, or an engine command after --, not both")
        with reading_release(opts.get("--engine-version")):  # its abbreviations matched against that parser's flags
            parsed = parse_command(command, env)
        if parsed.model is not None and model is not None:
            raise OomkitError("give either MODEL with options, or an engine command after --, not both")
        if parsed.model is None and model is None and (router := _router_source(command)) is not None:
            # llama-server with no model and --models-preset / --models-dir runs as a router (tools/server
            # server-models.cpp): each model loads, as its own llama-server, when a request names it
            preset = router[0] == "--models-preset"
            # (server-models.cpp: the router's own flags are each model's defaults, a preset's keys override them)
            raise OomkitError(f"the {_program_typed(command)} command names no model: with {router[0]} {router[1]} "
                              f"it runs the router, which starts a llama-server for each "
                              f"{'model of' if preset else 'GGUF in'} {router[1]} a request names: give MODEL before "
                              "the -- (the router's flags are that model's defaults)"
                              + (f", or paste {router[1]}'s text as MODEL for a preset's own settings" if preset else ""))
        if parsed.model is None and model is None:  # `ollama serve` names none: MODEL may come before --
            raise OomkitError(f"the {_program_typed(command)} command names no model: give MODEL before the --")
        engine_name, model, settings = parsed.engine, parsed.model or model, parsed.settings
        typed = visible_variables(dict(parsed.env))
        visible.update(typed)  # the command's own assignment wins, as in its env
        if typed and getattr(parsed.settings, "program", None) == "ollama run":
            # Ollama picks its GPUs in the server (docs/gpu.mdx "GPU Selection": set on the Ollama server), and a
            # variable in front of `ollama run` reaches the client only (engines/ollama/args.py, ollama#14191)
            said = shown(typed)
            visible_notes.append(f"{said} given to `ollama run` takes effect only when `ollama serve` is (re)started "
                                 "with it: the server picks its GPUs, and one already running keeps its own "
                                 "(ollama#14191)")
        if opts.get("--engine") is not None and get_engine(opts["--engine"]).name != engine_name:
            raise OomkitError(f"--engine {opts['--engine']} and the {_program_typed(command)} command ({engine_name}) "
                              "both say the engine: give one")
        if quant and parsed.quant:
            check_quant_agrees(f"{parsed.model or model}:{parsed.quant}", quant)
        quant = quant or parsed.quant
    else:
        if model is not None and not model.strip():
            raise OomkitError("MODEL is empty (an unset shell variable?): name a model, e.g. llama3.1:8b")
        engine_name = get_engine(opts.get("--engine", "llama.cpp")).name
        with reading_release(opts.get("--engine-version")):
            parsed = lm_studio_load(opts.get("--engine"), model, engine_args, env)
        if parsed is not None:
            # LM Studio runs an MLX model on its MLX engine, not its llama.cpp runtime: MODEL and its flags read
            # as `lms load MODEL ...` reads them (estimate.lm_studio_load, as the Python API reads it)
            # lms load's own default context (4096) is no flag the user typed: --ctx replaces it
            program_default = lm_studio_load(opts.get("--engine"), model, (), env).settings
            engine_name, model, settings = parsed.engine, parsed.model or model, parsed.settings
            quant = quant or parsed.quant
        else:
            with reading_release(opts.get("--engine-version")):
                flag_model, flag_quant, settings = get_engine(engine_name).parse_args(engine_args, env)
            if flag_model is not None:  # the engine's own model flag (-m, -hf, --model): the model, given once
                if model is not None and model != flag_model:
                    raise OomkitError(f"the model is named twice, as MODEL {model!r} and by the {engine_name} flags "
                                      f"({flag_model!r}): give one")
                model = flag_model
                if quant and flag_quant:
                    check_quant_agrees(f"{model}:{flag_quant}", quant)
                quant = quant or flag_quant
            elif model is not None and get_engine(engine_name).loads_mlx:
                model, settings = _as_mlx_model_flag(get_engine(engine_name), model, engine_args, env, settings)
        model = default_model if model is None else model
        if model is None:
            raise OomkitError("no MODEL given (try: oomkit estimate llama3.1:8b)")
    eng = get_engine(engine_name)
    neutral = neutral_options(opts, eng, settings)
    default = eng.settings() if program_default is None else program_default
    for name, value in neutral.items():  # an option and the engine's own flag that set one field two ways
        typed = getattr(settings, name)
        if typed != value and typed != getattr(default, name):
            option = next((o for o in ("--ctx", "--kv-type", "--parallel", "--engine-version", "--kv-memory",
                                       "--backend") if o in opts and name in eng.neutral_fields(o[2:].replace("-", "_"))),
                          "an option")
            raise SettingsError(f"{option} {opts.get(option, '')} and the command's {name} {typed} (as typed, or "
                                f"its program's default) both set {name}: give one")
    settings = replace(settings, **neutral)
    if "--ram" not in (extra_options or {}) or eng.neutral_fields("ram"):  # plan's own --ram: any engine
        settings = host_ram(opts, eng, settings)
    settings = check_settings(settings)
    _check_agreement(opts, model, quant)
    return ModelRequest(model=model, engine=engine_name, settings=settings, quant=quant, opts=opts,
                        notes=lm_studio_note(engine_name, settings), visible=tuple(visible.items()),
                        visible_notes=tuple(visible_notes))


def _as_mlx_model_flag(eng: EngineModule, model: str, engine_args: list[str], env: dict[str, str],
                       settings: Any) -> tuple[str, Any]:
    """MODEL for mlx-lm that neither the catalog nor the name rules read, read as mlx_lm's own --model reads it,
    as the command form and the Python API do (engines/cmdline.py read_as_model_flag); else kept as typed."""
    read = read_as_model_flag(eng, model, engine_args, env)
    return read if read is not None else (model, settings)


def _program_typed(command: list[str]) -> str:
    """The engine program of a command, past its wrapper and leading VAR=value assignments (`ollama serve`)."""
    argv = unwrap(command).engine_argv
    start, end = leading_assignments(argv)
    words = argv[end:end + 2]
    return " ".join(words) if len(words) == 2 and not words[1].startswith("-") else (words[0] if words else "engine")


def host_ram(opts: dict[str, Any], eng: EngineModule, settings: Any) -> Any:
    """--ram SIZE: the host's memory, which llama.cpp's --fit weighs without a GPU; with --cpu-only and no --ram,
    this machine's total memory (psutil), for an engine that has a use for it. An engine with none refuses --ram
    (plan and fit read their own --ram, the RAM a split may use, before this)."""
    if opts.get("--ram") is not None:
        return with_ram(eng, settings, opts["--ram"])
    if not opts.get("--cpu-only") or not eng.neutral_fields("ram"):
        return settings
    from ..hardware.detect import host_memory  # lazy: psutil only when the host is this machine

    host = host_memory()
    return settings if host is None else with_ram(eng, settings, host.total_bytes)


def _check_agreement(opts: dict[str, Any], model: str, quant: str | None) -> None:
    """Options that say the same thing two ways and disagree: refused, naming both (exit 2)."""
    if opts.get("--cpu-only"):
        for other in ("--vram", "--gpu"):
            if opts.get(other) is not None:
                raise SettingsError(f"--cpu-only and {other} {opts[other]} contradict each other: give one")
    if opts.get("--vram") is not None and opts.get("--gpu") is not None:
        raise SettingsError(f"--vram {opts['--vram']} and --gpu {opts['--gpu']} both say the hardware: give one")
    check_quant_agrees(model, quant)


def engine_env(pairs: list[str] | None) -> dict[str, str] | None:
    """--env K=V (repeatable): the engine's environment (OLLAMA_* for Ollama) on top of os.environ; None (no
    --env) lets the engine read os.environ itself."""
    if not pairs:
        return None
    env = dict(os.environ)
    given: dict[str, str] = {}
    for pair in pairs:
        key, eq, value = pair.partition("=")
        if not eq or not key:
            raise OomkitError(f"--env takes KEY=VALUE, got {pair!r}")
        if key in given and given[key] != value:  # a variable has one value: which one was meant?
            raise OomkitError(given_twice(f"--env {key}", given[key], value))
        given[key] = value
        env[key] = value
    return env


def env_visible(pairs: list[str] | None) -> dict[str, str]:
    """The visible-devices variables --env K=V gives (hardware/visible.py), without os.environ's: this shell's are
    not surely the engine's."""
    return visible_variables(dict(p.partition("=")[::2] for p in pairs or ()))


def split_args(argv: list[str], options: dict[str, bool], later_wins: bool = False
               ) -> tuple[dict[str, Any], str | None, list[str], list[str] | None]:
    """-> (oomkit options, MODEL, engine flags, engine command after --). An option of oomkit's own given twice with
    two values (`--vram 24GiB --vram 48GiB`) is refused, naming both, unless `later_wins`; --env and the other
    REPEATABLE ones collect every value."""
    opts: dict[str, Any] = {}
    model: str | None = None
    engine_args: list[str] = []
    command: list[str] | None = None
    model_after: str | None = None  # the token before MODEL
    if "--" in argv:
        k = argv.index("--")
        argv, command = argv[:k], argv[k + 1:]
        if len(command) == 1 and any(c.isspace() for c in command[0]):
            command = _pasted(command[0])  # the whole command quoted as one argument: split as bash would
    engine = _peek_engine(argv)
    arity = _engine_flag_arity(engine)
    i = 0
    while i < len(argv):
        a = argv[i]
        name, eq, inline = a.partition("=") if a.startswith("--") else (a, "", "")
        if name in options:
            if options[name]:
                value, i = flag_value(argv, i, inline if eq else None, f"{name} expects a value")
                if not value.strip():  # `--engine-version "$VER"` with VER unset read as the default before
                    raise OomkitError(f"{name} is empty (an unset shell variable?): give a value or leave {name} out")
                if name in REPEATABLE:
                    opts.setdefault(name, []).append(value)
                else:
                    if not later_wins and opts.get(name, value) != value:  # which one was meant is not ours to pick
                        several = (f"; for several devices give one {name}, comma-separated: "
                                   f"{name} {clip_repr(f'{opts[name]},{value}')}") if name in ("--gpu", "--vram") else ""
                        raise OomkitError(given_twice(name, opts[name], value) + several)
                    opts[name] = value
            else:
                opts[name] = True
        elif a.startswith("-") and len(a) > 1 and not _is_number(a):
            engine_args.append(a)
            takes = arity(name, argv[i + 1] if i + 1 < len(argv) else None)
            if takes and not eq and i + 1 < len(argv):
                engine_args.append(argv[i + 1])
                i += 1
        elif model is None:
            model = a
            model_after = argv[i - 1] if i else None
        elif _is_number(model) and model_after and model_after.startswith("-") and not _is_number(model_after):
            # `check --max-model-len 8192 qwen3:8b` with llama.cpp: the number was that flag's value, and the flag
            # is none of this engine's
            raise OomkitError(_unexpected(model, model_after, engine, options)
                              + "; for another engine's flags give --engine (vllm, sglang, ollama, mlx, transformers)")
        else:
            raise OomkitError(_unexpected(a, argv[i - 1] if i else None, engine, options))
        i += 1
    if command is None and model is not None and "\n" in model and (hint := compose_hint(model)) is not None:
        raise OomkitError(hint)  # a Docker Compose service pasted as MODEL: its command, not the YAML around it
    if command is None and model is not None and "\n" in model and (hint := python_call_hint(model)) is not None:
        # a Python script pasted as MODEL, before it is taken for a command (unslothai/unsloth#1238: a comment's
        # URL reads as a model named by a transport, and the shell's split loses the call's quotes)
        raise OomkitError(hint)
    if command is None and model is not None and names_a_command(model):
        model, command = None, _pasted(model)  # `oomkit check "vllm serve X ..."`: the command quoted as MODEL
    if command is None and model is not None and (hint := python_call_hint(model)) is not None:
        raise OomkitError(hint)  # a from_pretrained / LLM(...) / Llama(...) line pasted as MODEL
    if command is None and model is not None and (hint := pasted_file_hint(model)) is not None:
        raise OomkitError(hint)  # an Ollama Modelfile or a vLLM config file pasted as MODEL
    return opts, model, engine_args, command


def _router_source(command: list[str]) -> tuple[str, str] | None:
    """(flag, value) of llama-server's --models-preset / --models-dir in an engine command, if it has one."""
    for k, a in enumerate(command):
        flag, eq, value = a.partition("=")
        if flag in ("--models-preset", "--models-dir"):
            if eq:
                return flag, value
            if k + 1 < len(command):
                return flag, command[k + 1]
    return None


def _pasted(text: str) -> list[str]:
    try:
        return split_command(text)
    except ValueError as e:  # unbalanced quotes
        raise OomkitError(f"cannot split the command after --: {e}") from None


# options users carry over from other tools; oomkit names GPUs and their count in one --gpu
_GPU_COUNT_OPTIONS = {"--num-gpus", "--n-gpus", "--gpus", "--gpu-count", "--num-gpu"}


# options of oomkit fit and plan (commands/_plan_args.py OPTIONS) that estimate and check do not take
_FIT_PLAN_ONLY = ("--reserve", "--headroom", "--min-ctx", "--concurrency", "--limit", "--also", "--nodes",
                  "--ram-bandwidth")


def estimate_option(flag: str, options: dict[str, bool] | None) -> str | None:
    """For an option of estimate and check that takes a value (--ctx, --engine, --quant ...) given to a command whose
    `options` lack it (`fit --ctx 8192`), what to say instead of calling it unknown; None for any other flag."""
    if not OPTIONS.get(flag) or options is None or flag in options:
        return None
    # fit reads the engine and its settings from the engine command after -- (commands/fit.py)
    said = (": fit reads the engine and its settings from the engine command after -- (e.g. oomkit fit --vram 24GiB "
            "-- vllm serve Qwen/Qwen3-8B --max-model-len 8192)" if "--engine" not in options else "")
    return f"{flag} is an option of oomkit estimate and check, not of this command{said}"


def _unexpected(arg: str, before: str | None, engine: str, options: dict[str, bool] | None = None) -> str:
    """The error for a second positional argument: usually the value of an option oomkit does not know."""
    key, eq, value = arg.partition("=")
    if eq and key.lower() == "num_ctx":  # Ollama's option (Modelfile PARAMETER, API options) for the context
        return f"unexpected argument {arg!r}: Ollama's num_ctx is the context length: give --ctx {value}"
    if eq and re.fullmatch(r"[A-Z][A-Z0-9_]*", key):  # an environment variable typed before the model's command
        return f"unexpected argument {arg!r}: the engine's environment is given as --env {arg}"
    if before and before.startswith("-") and "=" not in before and not _is_number(before):
        flag = before.partition("=")[0]
        if flag in _FIT_PLAN_ONLY and options is not None and flag not in options:
            # `estimate --reserve 16GiB`: the option of another oomkit command, not an unknown one
            held = (" (its memory is the whole GPU: give a smaller --vram for what other programs hold)"
                    if flag in ("--reserve", "--headroom") else "")
            return f"unexpected argument {arg!r}: {flag} is an option of oomkit fit and plan, not of this command{held}"
        if (other := estimate_option(flag, options)) is not None:
            return f"unexpected argument {arg!r}: {other}"
        hint = ' (oomkit names the GPUs and their count in one option: --gpu "8x H100")' \
            if flag in _GPU_COUNT_OPTIONS else ""
        return (f"unexpected argument {arg!r}: {flag} takes no value (it is not an oomkit option, nor a {engine} "
                f"flag with a value){hint}")
    return f"unexpected argument {arg!r} (one MODEL only)"


def _is_number(s: str) -> bool:
    try:
        float(s)
        return True
    except ValueError:
        return False


def _peek_engine(argv: list[str]) -> str:
    for i, a in enumerate(argv):
        if a == "--engine" and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith("--engine="):
            return a.split("=", 1)[1]
    return "llama.cpp"


def _engine_flag_arity(engine: str):
    takes = get_engine(engine).flag_takes_value
    if engine.strip().lower() not in LM_STUDIO_NAMES:
        return takes
    # an MLX model's flags are lms load's (estimate.lm_studio_load): its --context-length N besides llama.cpp's -c, --parallel
    return lambda name, following: name == "--context-length" or takes(name, following)


def neutral_options(opts: dict[str, Any], eng: EngineModule, settings: Any) -> dict[str, Any]:
    """Engine-neutral options mapped onto the engine's own settings fields (the record's `neutral` map)."""
    out: dict[str, Any] = {}
    fields = settings.__dataclass_fields__

    def put(key: str, value: Any) -> None:
        for name in eng.neutral_fields(key):
            out[name] = value

    if "--ctx" in opts:
        n_ctx = _int_opt("--ctx", opts["--ctx"], thousands=True)
        if n_ctx <= 0:
            raise OomkitError(f"--ctx must be a positive number of tokens, got {opts['--ctx']}")
        put("ctx", n_ctx)
    if "--parallel" in opts:
        put("parallel", _int_opt("--parallel", opts["--parallel"]))
    if "--kv-type" in opts:
        if not eng.neutral_fields("kv_type"):  # was read as nothing at all
            raise OomkitError(f"--kv-type: the {eng.name} engine has no KV cache type setting; give the engine's own "
                              "flag for a quantized KV cache (mlx_lm: --kv-bits N)")
        put("kv_type", opts["--kv-type"])
    if "--engine-version" in opts:
        put("engine_version", opts["--engine-version"])
    if "--backend" in opts:
        if not eng.neutral_fields("backend"):
            raise OomkitError("--backend applies to llama.cpp and Ollama (cuda, rocm, metal, vulkan, sycl, opencl, "
                              "cpu)")
        put("backend", str(opts["--backend"]).lower())
    if "--kv-memory" in opts:
        if not eng.neutral_fields("kv_memory"):
            raise OomkitError("--kv-memory applies to engines that size their KV cache from a memory budget "
                              "(vLLM, SGLang)")
        put("kv_memory", parse_size(opts["--kv-memory"], "--kv-memory"))
    return {k: v for k, v in out.items() if k in fields}


def _int_opt(name: str, value: str, thousands: bool = False) -> int:
    """oomkit's own integer options: an optional sign and ASCII digits (no `1_024`, no other scripts' digits,
    which Python's int() would take and no engine's parser does), at most 18 of them. thousands: a context as
    people say it, "32k" = 32768 tokens, "1M" = 1,048,576 (the binary multiples the engines' own "128k" contexts
    are), as plan's --min-ctx and the web API's ctx read it."""
    text = str(value).strip()
    if thousands and re.fullmatch(r"[0-9]{1,9}[kKmM]", text):
        return int(text[:-1]) * (1024 if text[-1] in "kK" else 1024 * 1024)
    if not re.fullmatch(r"[+-]?[0-9]{1,18}", text):
        raise SettingsError(f"{name} takes an integer, got {value!r}")
    return int(text)
