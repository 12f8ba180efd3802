"""Ollama's command line: `ollama run TAG [PROMPT]`, `ollama serve`, and oomkit's spelling of Ollama's Modelfile
parameters and server variables (--num-ctx, --kv-cache-type, ...)."""

from __future__ import annotations

import re
import shlex
from dataclasses import replace
from pathlib import Path
from typing import Any

from ...errors import OomkitError, SettingsError
from ...flags import check_settings, flag_value, go_int, go_uint
from ...model.resolve import split_quant
from ...units import parse_size
from ..command import (
    COMMAND_BREAK,
    Opt,
    Syntax,
    format_flags,
    leading_assignments,
    rewrite,
    unwrap,
)
from .settings import V_CONTEXT_LENGTH_ENV, OllamaSettings, env_uint, env_var, environment, parse_version

# cmd/cmd.go: flags of `ollama run` (name -> takes a value)
_RUN_FLAGS = {"--verbose": False, "--insecure": False, "--nowordwrap": False, "--format": True, "--keepalive": True,
              "--think": False, "--hidethinking": False, "--dimensions": True, "--truncate": False,
              "--experimental": False, "--experimental-yolo": False, "-h": False, "--help": False}
# oomkit's options for Ollama's Modelfile parameters and server variables (field, kind)
_PARAM_FLAGS = {
    "--num-ctx": ("num_ctx", int), "--num_ctx": ("num_ctx", int),
    "--num-parallel": ("num_parallel", int), "--num_parallel": ("num_parallel", int),
    "--num-gpu": ("num_gpu", int), "--num_gpu": ("num_gpu", int),
    "--num-batch": ("num_batch", int), "--num_batch": ("num_batch", int),
    "--kv-cache-type": ("kv_cache_type", str), "--flash-attention": ("flash_attention", str),
    "--gpu-overhead": ("gpu_overhead", "size"), "--library": ("library", str),
}


def parse_args(argv: list[str], env: dict[str, str] | None = None) -> tuple[str | None, str | None, OllamaSettings]:
    args = list(argv)
    opts: dict[str, Any] = {"env": environment(env)}
    model: str | None = None
    if args and args[0] != args[0].rstrip(";&") and args[0].rstrip(";&") in ("serve", "start"):
        args[:1] = [args[0].rstrip(";&"), ";"]  # `ollama serve; ollama run ...` as the shell splits it
    # the subcommands of `ollama --help` that load no model (ps, list, stop, rm, cp, push, signin, ...)
    if args and args[0] in ("run", "serve", "start", "show", "pull", "create", "launch", "ps", "list", "ls", "stop",
                            "rm", "cp", "push", "signin", "signout", "help"):
        sub = args.pop(0)
        opts["program"] = f"ollama {sub}"
        if sub not in ("run", "serve", "start"):
            raise OomkitError(f"'ollama {sub}' loads no model: give 'ollama run MODEL' or 'ollama serve'")
        if sub != "run":
            args = _then_run(args)  # `VAR=v ollama serve`, then `ollama run TAG ...`: the run's model and options
    elif args and args[0] == "runner":
        # the process the server starts for a model (llm/server.go: `ollama runner [--ollama-engine] --model BLOB
        # --ctx-size N ...`, printed in its "starting llama server" log line): its --ctx-size is num_ctx x parallel
        raise OomkitError("'ollama runner' is the process the Ollama server starts itself, on a model blob: give "
                          "'ollama run MODEL' with the server's variables (its --ctx-size is num_ctx times --parallel)")
    repl = dict(_repl_parameters(args))
    i = 0
    while i < len(args):
        a = args[i]
        name, eq, inline = a.partition("=") if a.startswith("--") else (a, "", "")
        if i in repl:  # a REPL line after the model: /set parameter NAME VALUE
            fld = _REPL_FIELDS.get(repl[i])
            if fld is not None:
                n = go_int(args[i + 3])
                if n is None:
                    raise SettingsError(f"/set parameter {repl[i]} {args[i + 3]!r}: Couldn't set parameter (Ollama "
                                        "reads it with strconv.ParseInt: ASCII digits and an optional sign)")
                opts[fld] = n
            i += 4
            continue
        if name in _PARAM_FLAGS:
            fld, kind = _PARAM_FLAGS[name]
            value, i = flag_value(args, i, inline if eq else None, f"{name} expects a value")
            if kind is int:
                # a Modelfile PARAMETER as Ollama reads it (api/types.go FormatParams: strconv.ParseInt(v, 10, 64))
                n = go_int(value)
                if n is None:
                    raise SettingsError(f"{name} {value!r}: invalid int value (Ollama reads it with strconv.ParseInt: "
                                        "ASCII digits and an optional sign)")
                opts[fld] = n
            elif kind == "size":
                n = go_uint(value)
                opts[fld] = n if n is not None else parse_size(value)
            else:
                opts[fld] = value
        elif name in _RUN_FLAGS:
            if _RUN_FLAGS[name] and not eq:
                i += 1
            if name == "--keepalive" and (eq or i < len(args)):
                _duration(name, inline if eq else args[i])
        elif a.startswith("-") and len(a) > 1:
            raise OomkitError(f"unknown flag: {a} (ollama run takes --verbose, --format, --keepalive, --think, "
                              "...; oomkit takes --num-ctx, --num-gpu, --num-batch, --num-parallel, "
                              "--kv-cache-type, --flash-attention, --gpu-overhead, --library)")
        elif model is None:
            model = a
        # further words are the prompt
        i += 1
    return model, None, check_settings(OllamaSettings(**opts))


# Go's time.ParseDuration, which cmd/cmd.go RunHandler applies to --keepalive (a bad one: "Error: time: invalid
# duration", the run stops): "0", or signed decimal numbers each with a unit ns, us, µs, ms, s, m, h ("5m", "-1m",
# "1h30m"); a bare number other than 0 is "missing unit"
_GO_DURATION = re.compile(r"[-+]?(?:0|(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:ns|us|\u00b5s|\u03bcs|ms|s|m|h))+)")


def _duration(flag: str, text: str) -> None:
    if text and not _GO_DURATION.fullmatch(text):
        raise SettingsError(f"{flag} {text[:40]!r}: not a Go duration such as 5m, 1h or -1m (ollama run stops: "
                            "time: invalid duration)")


# The interactive prompt of `ollama run` (cmd/interactive.go): a line `/set parameter NAME VALUE` sets the request's
# option NAME for the rest of the session (api.FormatParams, the Modelfile's parsing; a bad value is "Couldn't set
# parameter" and keeps the old one), so a session pasted after `ollama run TAG` sets num_ctx, num_gpu and num_batch
# as a Modelfile would. Other parameters (temperature, ...) change no memory.
_REPL_FIELDS = {"num_ctx": "num_ctx", "num_gpu": "num_gpu", "num_batch": "num_batch"}


def _repl_parameters(args: list[str]) -> list[tuple[int, str]]:
    """[(index of its `/set`, NAME)] for each `/set parameter NAME VALUE` after the first word that is no flag."""
    found, seen_model = [], False
    i = 0
    while i < len(args):
        if seen_model and args[i:i + 2] == ["/set", "parameter"] and i + 3 < len(args):
            found.append((i, args[i + 2]))
            i += 4
            continue
        seen_model = seen_model or not args[i].startswith("-")
        i += 1
    return found


# An Ollama Modelfile (docs/modelfile.md; parser/parser.go: one instruction a line, its name in any case, `#`
# comments): FROM names the model (a library tag, a .gguf file or a safetensors folder), PARAMETER NAME VALUE the
# request options, of which num_ctx, num_gpu and num_batch change memory; ADAPTER adds a LoRA's weights.
_MODELFILE_LINE = re.compile(r"\s*(FROM|PARAMETER|TEMPLATE|SYSTEM|ADAPTER|LICENSE|MESSAGE|REQUIRES)\s+(.*)",
                             re.IGNORECASE)


def modelfile_hint(text: str) -> str | None:
    """When `text` is a Modelfile pasted as MODEL, the one-line refusal naming the oomkit form that reads the same
    model and parameters; None otherwise."""
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    found = [m for ln in lines if (m := _MODELFILE_LINE.match(ln))]
    froms = [m.group(2).strip() for m in found if m.group(1).upper() == "FROM"]
    if len(lines) < 2 or len(found) < 2 or not froms:
        return None
    opts = []
    for m in found:
        name, _, value = m.group(2).strip().partition(" ")
        if m.group(1).upper() == "PARAMETER" and name.lower() in _REPL_FIELDS:
            opts += [f"--{name.lower().replace('_', '-')}", value.strip()]
    adapter = " (its ADAPTER's weights are not counted)" if any(m.group(1).upper() == "ADAPTER" for m in found) else ""
    projectors = [f for f in froms if _projector_from(f)]
    models = [f for f in froms if f not in projectors]
    form = " ".join(["oomkit check", shlex.quote(models[0] if models else froms[-1]), "--engine ollama", *opts])
    tower = (f" (its projector FROM {', '.join(projectors)} adds the vision tower's weights, which this form does "
             "not count)") if projectors and models else ""
    return f"this is an Ollama Modelfile, not a model name: give `{form}`{adapter}{tower}"


def _projector_from(ref: str) -> bool:
    """Whether a Modelfile's FROM names a projector GGUF, which Ollama adds to the model as its projector layer
    ("application/vnd.ollama.image.projector"), not as the model: each FROM file is a layer (parser/parser.go
    CreateRequest merges every FROM path into Files), and server/create.go ggufLayers makes a GGUF the projector
    when general.type is "projector" (or "mmproj", isProjectorGGUF of v0.30+) or it has <arch>.vision.block_count
    and no <arch>.block_count (v0.5.x-v0.13.x; llama.cpp's mmproj: general.architecture "clip",
    clip.vision.block_count), read from the header of a file on this machine. A file not here is taken by its name:
    "mmproj" in it, as llama.cpp's converter names the projector (convert_hf_to_gguf.py --mmproj: mmproj-*.gguf)
    and llama.cpp's cached-model listing (common/) tells the projector from the model."""
    path = Path(ref.strip().strip("'\"")).expanduser()
    try:
        if path.is_file():
            from ...model.gguf_header import read_gguf_header  # lazy: only a Modelfile's local FROM is read

            md = read_gguf_header(path).metadata
            arch = md.get("general.architecture")
            vision = md.get(f"{arch}.vision.block_count")
            return (md.get("general.type") in ("projector", "mmproj") or arch == "clip"
                    or (not md.get(f"{arch}.block_count") and isinstance(vision, int) and vision > 0))
    except (OSError, ValueError, OomkitError):
        pass
    return "mmproj" in path.name.lower()


# what may stand between `ollama serve` and the `ollama run` after it: a line break, or a shell's list operator
_BETWEEN = (COMMAND_BREAK, "&", ";", "&&")


def _then_run(args: list[str]) -> list[str]:
    """The arguments of an `ollama run` that follows `ollama serve` (its variables are the client's own, OLLAMA_HOST:
    no memory meaning), else `args` as they are."""
    i = 1 if args[:1] and args[0] in _BETWEEN else 0
    i += leading_assignments(args[i:])[1]
    return args[i + 2:] if args[i:i + 2] == ["ollama", "run"] else args


def flag_takes_value(name: str, following: str | None) -> bool:
    if name in _PARAM_FLAGS:
        return True
    return _RUN_FLAGS.get(name, False)


# ---------------------------------------------------------------------------------------------------------
# The command line as typed. Ollama reads its server options from the environment of the server (envconfig:
# OLLAMA_*, read by `ollama serve`); `ollama run` is a client that reads only OLLAMA_HOST and OLLAMA_NOHISTORY
# (cmd/cmd.go NewCLI: the run command's envVars) and sends its request to a server that is already running, so a
# variable in front of `ollama run` never reaches it (ollama#14191). A command that sets server variables is
# therefore two: `OLLAMA_CONTEXT_LENGTH=32768 OLLAMA_KV_CACHE_TYPE=q8_0 ollama serve`, then `ollama run qwen3:8b`
# (in another terminal; a server already running is stopped first), one line each (command.COMMAND_BREAK). A field
# that is set wins over its variable in the estimate (launch.py, as the request's num_ctx wins over
# OLLAMA_CONTEXT_LENGTH in Ollama), so the variable form gives the same launch. The request options without a
# variable (num_gpu, num_batch) are written as the session's `/set parameter` lines (as_session), or a Modelfile
# (see `modelfile`); oomkit's `library` keeps its own spelling (--library). Not on the command line: engine_version (which release
# runs) and program.

# variables the `ollama run` client reads itself (cmd/cmd.go); OLLAMA_HOST is also where the server listens
CLIENT_VARIABLES = ("OLLAMA_HOST", "OLLAMA_NOHISTORY")

# field -> the variable that sets it when the field is unset (settings.py OllamaSettings)
FIELD_VARIABLES = {"num_ctx": "OLLAMA_CONTEXT_LENGTH", "num_parallel": "OLLAMA_NUM_PARALLEL",
                   "kv_cache_type": "OLLAMA_KV_CACHE_TYPE", "flash_attention": "OLLAMA_FLASH_ATTENTION",
                   "gpu_overhead": "OLLAMA_GPU_OVERHEAD"}
# other variables that change what Ollama launches (launch.py, layout.py), carried from `env` as they are
MEMORY_VARIABLES = ("OLLAMA_SCHED_SPREAD", "OLLAMA_NEW_ENGINE", "OLLAMA_NEW_ESTIMATES", "LLAMA_ARG_FIT",
                    "LLAMA_ARG_FIT_TARGET")

OPTIONS = (
    Opt("num_ctx", "OLLAMA_CONTEXT_LENGTH", env=True, aliases=("--num-ctx", "--num_ctx")),
    Opt("num_parallel", "OLLAMA_NUM_PARALLEL", env=True, aliases=("--num-parallel", "--num_parallel")),
    Opt("kv_cache_type", "OLLAMA_KV_CACHE_TYPE", env=True, aliases=("--kv-cache-type",)),
    Opt("flash_attention", "OLLAMA_FLASH_ATTENTION", env=True, aliases=("--flash-attention",)),
    Opt("gpu_overhead", "OLLAMA_GPU_OVERHEAD", env=True, aliases=("--gpu-overhead",)),
    *(Opt(f"env:{var}", var, str, env=True) for var in MEMORY_VARIABLES),
    Opt("num_gpu", "--num-gpu", aliases=("--num_gpu",)),
    Opt("num_batch", "--num-batch", aliases=("--num_batch",)),
    Opt("library", "--library", lambda v: v or None),
)
# Ollama releases before 0.5.13 have no OLLAMA_CONTEXT_LENGTH: num_ctx goes as oomkit's --num-ctx
_NUM_CTX_FLAG = Opt("num_ctx", "--num-ctx", aliases=("--num_ctx",))


def _program_len(argv: list[str]) -> int:
    return 2 if len(argv) > 1 and argv[1] in ("run", "serve", "start") else 1


SYNTAX = Syntax(_program_len, flag_takes_value)


def typed(settings: OllamaSettings) -> dict[str, Any]:
    """The options as a command line carries them: each field's value, or when unset the value of its variable
    (as launch.py reads it); the other memory variables of `env` under "env:NAME"."""
    env = dict(settings.env)
    out: dict[str, Any] = {"num_gpu": settings.num_gpu, "num_batch": settings.num_batch, "library": settings.library}
    for fld in ("num_ctx", "num_parallel"):
        value = getattr(settings, fld)
        out[fld] = value if value > 0 else (env_uint(env, FIELD_VARIABLES[fld]) or 0)
    out["kv_cache_type"] = settings.kv_cache_type or env_var(env, "OLLAMA_KV_CACHE_TYPE")
    out["flash_attention"] = settings.flash_attention or env_var(env, "OLLAMA_FLASH_ATTENTION")
    overhead = env_uint(env, "OLLAMA_GPU_OVERHEAD")
    out["gpu_overhead"] = settings.gpu_overhead if settings.gpu_overhead >= 0 else (
        -1 if overhead is None else overhead)
    for var in MEMORY_VARIABLES:
        out[f"env:{var}"] = env.get(var)
    return out


def effective(settings: OllamaSettings) -> OllamaSettings:
    """The same settings with each field that its variable sets filled from `env`, and only the memory
    variables left in `env`: two settings that launch alike compare equal (a command's variables parse into
    `env`, while the planner sets the fields)."""
    t = typed(settings)
    env = tuple((k, v) for k, v in settings.env if k in MEMORY_VARIABLES)
    return replace(settings, num_ctx=t["num_ctx"], num_parallel=t["num_parallel"],
                   kv_cache_type=t["kv_cache_type"], flash_attention=t["flash_attention"],
                   gpu_overhead=t["gpu_overhead"], env=env)


def _table(settings: OllamaSettings) -> tuple[Opt, ...]:
    if parse_version(settings.engine_version) < V_CONTEXT_LENGTH_ENV:
        return tuple(_NUM_CTX_FLAG if o.field == "num_ctx" else o for o in OPTIONS)
    return OPTIONS


def model_tag(tag: str, quant: str | None) -> str:
    """The tag with a weight format: `qwen3:8b` + q8_0 -> `qwen3:8b-q8_0` (the library's spelling)."""
    if not quant:
        return tag
    name, suffix = split_quant(tag)
    if suffix is not None and suffix.lower() == quant.lower():
        return tag
    return f"{name}-{quant}" if ":" in name else f"{name}:{quant}"


def format_command(model: str, settings: OllamaSettings, quant: str | None = None) -> list[str]:
    """`ollama run TAG`, after `VAR=value ... ollama serve` when the fields (and memory variables of `env`) set
    server variables that differ from Ollama's defaults, and followed by the session's `/set parameter` lines for
    the request options without a variable (as_session)."""
    env, flags = format_flags(_table(settings), typed(settings), typed(OllamaSettings()))
    run = as_session(["ollama", "run", model_tag(model, quant), *flags])
    return [*env, "ollama", "serve", COMMAND_BREAK, *run] if env else run


# oomkit's flags for request options `ollama run` has no flag for (cmd/cmd.go RunHandler takes only --format,
# --keepalive, --verbose, --insecure, --nowordwrap, --think, --hidethinking, --width, --dimensions; num_ctx too
# before OLLAMA_CONTEXT_LENGTH): in an
# interactive session they are `/set parameter NAME VALUE` lines (cmd/interactive.go generateInteractive, "/set
# parameter ... Set a parameter"), which this module reads back (_repl_parameters)
_SESSION_PARAMETERS = {"--num-gpu": "num_gpu", "--num_gpu": "num_gpu", "--num-batch": "num_batch",
                       "--num_batch": "num_batch", "--num-ctx": "num_ctx", "--num_ctx": "num_ctx"}


def as_session(argv: list[str]) -> list[str]:
    """`ollama run TAG --num-gpu N` -> `ollama run TAG`, then a `/set parameter num_gpu N` line, so the command is
    typed as Ollama takes it. Left as it is where a prompt follows the tag (a one-shot run reads no session lines:
    the JSON's modelfile carries the parameters then) or `ollama run` is not there."""
    start = next((k for k, a in enumerate(argv) if a == "run" and k and argv[k - 1] == "ollama"), None)
    if start is None:
        return list(argv)
    head, moved, k, seen_model = list(argv[:start + 1]), [], start + 1, False
    while k < len(argv):
        a = argv[k]
        if a == COMMAND_BREAK or a.startswith("/"):
            break
        name, eq, inline = a.partition("=")
        if name in _SESSION_PARAMETERS and (eq or k + 1 < len(argv)):
            moved.append((_SESSION_PARAMETERS[name], inline if eq else argv[k + 1]))
            k += 1 if eq else 2
            continue
        if not a.startswith("-"):
            if seen_model:  # a prompt
                return list(argv)
            seen_model = True
        head.append(a)
        k += 1
    if not moved:
        return list(argv)
    lines = [t for param, value in moved for t in (COMMAND_BREAK, "/set", "parameter", param, value)]
    return [*head, *lines, *argv[k:]]


def rewrite_command(argv: list[str], old: OllamaSettings, new: OllamaSettings) -> list[str]:
    """The user's Ollama command with only the options that differ changed: a variable set in front is rewritten
    there, a new one joins the assignments in front; the prompt words stay. Server variables in front of
    `ollama run` move to an `ollama serve` before it (serve_first)."""
    argv, old = _rewrite_repl(argv, old, new)
    return as_session(serve_first(rewrite(argv, typed(old), typed(new), _table(new), SYNTAX)))


def _rewrite_repl(argv: list[str], old: OllamaSettings, new: OllamaSettings) -> tuple[list[str], OllamaSettings]:
    """A `/set parameter NAME VALUE` line of the session that sets a field the new settings change gets the new
    value in place (it wins over the command's options and variables, as the request's option wins in Ollama)."""
    argv = list(argv)
    start = next((k for k, a in enumerate(argv) if a == "run" and k and argv[k - 1] == "ollama"), None)
    if start is None:
        return argv, old
    for at, param in _repl_parameters(argv[start + 1:]):
        fld = _REPL_FIELDS.get(param)
        if fld is not None and getattr(new, fld) != getattr(old, fld):
            argv[start + 1 + at + 3] = str(getattr(new, fld))
            old = replace(old, **{fld: getattr(new, fld)})
    return argv, old


def serve_first(argv: list[str]) -> list[str]:
    """`[env] VARS ollama run ...` with server variables among VARS -> `[env] VARS ollama serve`, then
    `[OLLAMA_HOST=...] ollama run ...` (the client's own variables stay with it). Left as typed: a command without
    server variables in front of `ollama run`, `ollama serve` already, and a command behind a wrapper (a container
    runs `ollama serve` with its -e variables; sudo and the like are the user's to arrange)."""
    wrapped = unwrap(argv)
    if wrapped.prefix or wrapped.entrypoint:
        return list(argv)
    start, end = leading_assignments(argv)
    assigned = list(argv[start:end])
    if argv[end:end + 2] != ["ollama", "run"] or all(_name(a) in CLIENT_VARIABLES for a in assigned):
        return list(argv)
    server = [a for a in assigned if _name(a) != "OLLAMA_NOHISTORY"]
    client = [a for a in assigned if _name(a) in CLIENT_VARIABLES]
    return [*argv[:start], *server, "ollama", "serve", COMMAND_BREAK, *client, *argv[end:]]


def _name(assignment: str) -> str:
    return assignment.partition("=")[0]


def server_variables_on_run(settings: OllamaSettings) -> list[str]:
    """The server variables that change memory (as VAR=value) in the environment of an `ollama run`: they reach
    the server only when it is started with them."""
    if settings.program != "ollama run":
        return []
    env = dict(settings.env)
    return [f"{k}={env[k]}" for k in (*FIELD_VARIABLES.values(), *MEMORY_VARIABLES) if env.get(k)]


def serve_note(settings: OllamaSettings) -> str | None:
    """How to run a command that starts the server with its variables (format_command, serve_first), else None."""
    if settings.program not in ("ollama serve", "ollama start") or not dict(settings.env):
        return None
    return ("Ollama: `ollama serve` with its variables (re)starts the server: stop one already running first "
            "(systemctl stop ollama, or quit the app), then run `ollama run` in another terminal")


def run_variables_warning(settings: OllamaSettings) -> str | None:
    """One line when server variables come with `ollama run` (ollama#14191), else None."""
    found = server_variables_on_run(settings)
    if not found:
        return None
    them = "it" if len(found) == 1 else "them"
    return (f"{' '.join(found)} given to `ollama run` take{'s' * (len(found) == 1)} effect only when `ollama serve` "
            f"is (re)started with {them}: the server reads {them}, and one already running keeps its own (ollama#14191)")


def modelfile(tag: str, settings: OllamaSettings) -> str:
    """A Modelfile (docs/modelfile.md) for `tag` with the non-default parameters (num_ctx, num_gpu, num_batch),
    and the server variables as comments: they belong to the environment of `ollama serve`, not the model."""
    t = typed(settings)
    lines = [f"FROM {tag}"]
    for param, default in (("num_ctx", 0), ("num_gpu", -1), ("num_batch", 0)):
        if t[param] != default:
            lines.append(f"PARAMETER {param} {t[param]}")
    env, _ = format_flags(OPTIONS, {**t, "num_ctx": 0}, typed(OllamaSettings()))
    if env:
        lines.append("# server variables (the environment of `ollama serve`):")
        lines.extend(f"#   {a}" for a in env)
    return "\n".join(lines) + "\n"
