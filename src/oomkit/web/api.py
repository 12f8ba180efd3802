"""The web hub's operations: request fields -> the same objects and the same JSON as the CLI's `--json`.

Each operation turns its fields into the command line the CLI would have been given and hands it to the CLI's own
parsers (commands/_model_args.py, commands/_plan_args.py), then calls the same functions the command calls and the
same report/ JSON writer; `table` and `models`, whose steps live in their run(), are run as the commands themselves.
The API's answer is the CLI's output, byte for byte. What is added here is only what a
server needs and a terminal does not: range checks on every field, and the refusal of anything that would make the
server open a file of its own (a request names models, never paths).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shlex
import threading
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..commands import _plan_args
from ..commands import check as check_command
from ..commands import models as models_command
from ..commands import table as table_command
from ..commands._model_args import OPTIONS as MODEL_OPTIONS
from ..commands._model_args import ModelRequest, gpus_started, parse_model_request
from ..commands.diagnose import _not_text as not_text
from ..diagnose import diagnose, errors_index
from ..diagnose.result import Diagnosis
from ..engines.base import get_engine
from ..engines.cmdline import parse_command, split_command
from ..errors import OomkitError
from ..estimate import estimate as estimate_model
from ..hardware.detect import Hardware, detect
from ..hardware.visible import engine_sees, shown, visible_variables
from ..memory import MemoryEstimate
from ..model import names
from ..plan.fit import Fit, fit
from ..plan.search import Plan, plan
from ..report import check as check_report
from ..report import hardware as hardware_report
from ..report import plan as plan_report
from ..report import render
from ..units import parse_size

# Limits on what a request may carry (the issue's: a pasted log <= 20 MB, an upload <= 1 MB, numbers in sane ranges).
MAX_LOG_BYTES = 20 * 1000 * 1000
MAX_UPLOAD_BYTES = 1000 * 1000
MAX_FIELD_CHARS = 4096  # a model name, a GPU list, engine flags
MAX_COMMAND_CHARS = 16384  # a whole engine command line
MAX_CTX = 1 << 27  # 128 Mi tokens: beyond every trained context (Llama 4 Scout's 10 M) with room to spare
MAX_PARALLEL = 4096
MAX_DEVICES = 256
MAX_DEVICE_BYTES = 64 << 40  # 64 TiB for one device: beyond any GPU or unified-memory machine sold
MAX_LIMIT = 200

# The fields of an estimate request (GET query or POST body), as DESIGN.md's "Web API" names them; `flags` adds
# the engine's own options (-fa on -ngl 99) as typed.
ESTIMATE_FIELDS = ("model", "engine", "ctx", "quant", "kv_type", "parallel", "vram", "gpu", "engine_version",
                   "command", "flags", "cpu_only", "ram")
_YES, _NO = ("1", "true", "on", "yes"), ("0", "false", "off", "no")
# `oomkit table`'s own options (commands/table.py) and `oomkit models --kind`'s choices
TABLE_OPTIONS = {"--kind": True, "--markdown": False, "--csv": False, "--plot": True, "--sizes": True,
                 "--kv-types": True}
MODEL_KINDS = ("full", "sliding", "chunked", "latent", "recurrent", "moe")


# The CLI's messages name its options and its MODEL argument ("--vram 24: 24 what?", "give its memory with --vram
# SIZE", "no MODEL given (try: oomkit estimate ...)"); an API caller sends fields and an MCP caller passes a tool's
# arguments, under the same names (vram, gpu, min_ctx ...), so the message they get names those (caller_words).
# Only oomkit's own options: an engine's flags in a message (--max-model-len, llama-server's --parallel, llama.cpp's
# --fit) stay, and so does a flag the caller typed into a pasted command (the one "invalid argument" quotes).
_CLI_PHRASES = (("give its memory with --vram SIZE", 'give its memory in vram (e.g. "8GiB")'),
                ("give either MODEL with options, or an engine command after --, not both",
                 "give either model with options, or command, not both"),
                ("oomkit's own options go before the --", "oomkit's own settings are fields of their own (vram, gpu "
                                                          "...), not flags of the command"))
_NO_MODEL = re.compile(r"no MODEL given \(try: oomkit \w+ [^)]*\)")
_CLI_OPTION = re.compile(r"(?<![\w-])--(vram|gpu|ram|cpu-only|engine-version|kv-types|kv-type|min-ctx|concurrency|quant|"
                         r"reserve|headroom|sizes|kind|nodes|limit|family)(?![\w-])")
_INVALID_ARG = re.compile(r"^invalid argument: \S+ ")  # engines/llamacpp/args.py: the flag as the caller typed it


def caller_words(text: str, takes_command: bool = True) -> str:
    """A CLI message in the words of an API request's fields or an MCP tool's arguments (the same names), in one
    line. takes_command: the operation also takes `command` (a whole engine command line)."""
    text = " ".join(str(text).split())
    for cli, own in _CLI_PHRASES:
        text = text.replace(cli, own)
    text = _NO_MODEL.sub("no model given: give model (a catalog name, an Ollama tag or an HF id, e.g. qwen3:8b)"
                         + (" or command (a whole engine command line)" if takes_command else ""), text)
    if _INVALID_ARG.match(text):  # the option named is the caller's own flag, quoted as typed
        return text
    return _CLI_OPTION.sub(lambda m: m.group(1).replace("-", "_"), text)


class InputError(OomkitError):
    """A request field out of its range or too large: answered with this HTTP status and the one-line message."""

    def __init__(self, message: str, status: int = 422) -> None:
        super().__init__(message)
        self.status = status


# ---------------------------------------------------------------------------------------------------------
# Fields -> the CLI's arguments, checked


def _field(p: Mapping[str, Any], name: str, limit: int = MAX_FIELD_CHARS) -> str | None:
    v = p.get(name)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (str, int, float)):
        raise InputError(f"{name} takes a string or a number")
    text = str(v).strip()
    if len(text) > limit:
        raise InputError(f"{name} is longer than {limit} characters", 413)
    if "\x00" in text:
        raise InputError(f"{name} holds a NUL character")
    return text or None


def _int_field(p: Mapping[str, Any], name: str, lo: int, hi: int) -> int | None:
    text = _field(p, name, 64)
    if text is None:
        return None
    t = text.lower()
    mult = 1024 if t.endswith("k") else 1024 * 1024 if t.endswith("m") else 1  # "32k", "1M" (as the CLI)
    digits = t.removesuffix("k") if mult == 1024 else t.removesuffix("m")
    # ASCII digits only, as the CLI's --ctx: int() would also read "8_192" and full-width or Arabic-Indic digits
    if not re.fullmatch(r"[+-]?[0-9]+", digits):
        raise InputError(f"{name} takes an integer, got {text!r}")
    n = int(digits) * mult
    if not lo <= n <= hi:
        raise InputError(f"{name} must be between {lo} and {hi}, got {n}")
    return n


def _size_field(p: Mapping[str, Any], name: str, many: bool = False) -> str | None:
    """A memory size (or a comma list of them), checked here so that a request cannot ask for absurd hardware."""
    text = _field(p, name)
    if text is None:
        return None
    parts = [x for x in text.split(",") if x.strip()] if many else [text]
    if len(parts) > MAX_DEVICES:
        raise InputError(f"{name}: at most {MAX_DEVICES} devices")
    for x in parts:
        t = x.strip()
        n = int(t) if t.isascii() and t.isdigit() else parse_size(t, name)  # '²'.isdigit() is True, int('²') fails
        if not 0 <= n <= MAX_DEVICE_BYTES:
            raise InputError(f"{name}: {x.strip()!r} is out of range (0 to 64 TiB)")
    return text


def _bool_field(p: Mapping[str, Any], name: str) -> bool:
    """A yes/no field: JSON true/false, or a query or form value (1/0, true/false, on/off, yes/no); absent: no."""
    v = p.get(name)
    if v is None or isinstance(v, bool):
        return bool(v)
    text = str(v).strip().lower() if isinstance(v, (str, int)) else None
    if text in _YES or text in _NO:
        return text in _YES
    raise InputError(f"{name} takes true or false, got {str(v)[:40]!r}", 400)


def _gpu_field(p: Mapping[str, Any]) -> str | None:
    text = _field(p, "gpu")
    if text is not None and text.count(",") >= MAX_DEVICES:
        raise InputError(f"gpu: at most {MAX_DEVICES} devices")
    return text


def _split(text: str, name: str) -> list[str]:
    try:
        return split_command(text)  # a pasted multi-line command's backslash-newlines join its lines, as in bash
    except ValueError as e:
        raise InputError(f"{name}: cannot split it into arguments ({e})", 400) from None


def refuse_path(ref: str | None) -> None:
    """A request names a model, never a file of the server: refuse what reads as a path or is one here."""
    if ref is None:
        return
    r = ref.strip()
    low = r.lower()
    looks = (r.startswith(("/", "~", ".", "\\")) or "\\" in r or "/../" in f"/{r}/" or "/./" in f"/{r}/"
             or low.endswith((".gguf", ".json", ".safetensors", ".bin")) or low.startswith("file:")
             or (len(r) > 1 and r[1] == ":"))
    longest = max(len(part.encode("utf-8", "surrogateescape")) for part in r.split("/"))
    if longest > _NAME_PART_MAX:
        # no name has a part this long (a Hugging Face repo name is at most 96 characters); the CLI would read it as
        # a path and say the OS's file-name limit, which a page's model field has nothing to do with
        raise InputError(f"model {r[:60]!r}...: a name with a part of {longest} characters is no catalog "
                         "name, Ollama tag or Hugging Face id", 400)
    if looks or _lexists(r):
        named = _named_by_file(r)
        said = (f"; its name says {named}: give that to estimate it without the file" if named else
                "; give a catalog name, an Ollama tag or a Hugging Face id (or upload a config.json)")
        raise InputError(f"{ref!r} reads as a file path: the web hub opens no file of the server{said}", 400)


_NAME_PART_MAX = 255  # NAME_MAX: a longer part is no file's name either (model/_bytes.py check_path)


def _lexists(path: str) -> bool:
    try:
        return os.path.lexists(path)
    except (OSError, ValueError):  # a NUL byte
        return False


def _named_by_file(path: str) -> str | None:
    """The catalog model and file type a GGUF file's path says, as the CLI says it of a missing file
    (model/resolve.py): the hub cache's or LM Studio's folders, else the publishers' "<model>-<QUANT>.gguf" name."""
    if not path.lower().endswith(".gguf"):
        return None
    return names.hub_cache_gguf(path) or names.gguf_file_model(path)


# Engine flags whose value names a file the engine opens: -md, --mmproj and vLLM's --config are read by oomkit too
# (the draft's and the projector's headers, the YAML's flags), the rest would be; a request names none of the server's
_FILE_FLAGS = {"-md", "--model-draft", "--spec-draft-model", "-mm", "--mmproj", "--lora", "--lora-scaled",
               "--control-vector", "--control-vector-scaled", "--config", "--hf-config-path", "--tokenizer",
               "--speculative-model", "--speculative-draft-model-path", "--lora-paths", "--draft-model",
               "--adapter-path"}
_JSON_FILE_FLAGS = {"--speculative-config", "-sc"}  # vLLM: {"model": PATH, ...}, the drafter's config read from PATH


def refuse_file_flags(argv: list[str]) -> None:
    """refuse_path for the value of every engine flag in argv that names a file (before the command is parsed: vLLM's
    --config file is read while it is)."""
    for i, arg in enumerate(argv):
        flag, eq, value = arg.partition("=")
        if flag not in _FILE_FLAGS and flag not in _JSON_FILE_FLAGS:
            continue
        value = value if eq else argv[i + 1] if i + 1 < len(argv) else ""
        if flag in _JSON_FILE_FLAGS:
            try:
                doc = json.loads(value)
            except (ValueError, RecursionError):
                continue  # the engine's own parser refuses it
            value = doc.get("model") if isinstance(doc, dict) else None
        if isinstance(value, str) and value.strip():
            refuse_path(value)


_STDOUT = threading.Lock()


def run_json(module: Any, argv: list[str]) -> str:
    """A command's --json output, run in process on argv (for the commands whose steps live in their run():
    table, models). One at a time: the command prints to sys.stdout, which is redirected for the call."""
    if "--json" not in argv:
        k = argv.index("--") if "--" in argv else len(argv)
        argv = [*argv[:k], "--json", *argv[k:]]
    buf = io.StringIO()
    with _STDOUT, contextlib.redirect_stdout(buf):
        try:
            module.run(argv)
        except SystemExit as e:  # argparse's own refusal (its message went to stderr)
            raise InputError(f"{module.__name__.rsplit('.', 1)[-1]}: the arguments were refused", 400) from e
    return buf.getvalue()


def _own_options() -> set[str]:
    return {*MODEL_OPTIONS, *TABLE_OPTIONS, *_plan_args.OPTIONS, "--all", "--debug"}


def _engine_flags(text: str) -> list[str]:
    """Engine flags as typed; an oomkit option among them (--json, --plot FILE, --env ...) is refused: the fields
    are the only way to set those, and some would write or read files of the server. Split as the shell splits the
    CLI's own arguments (shlex), not as a pasted command line, whose reader drops a leading `NAME=value` as an
    environment assignment: an Ollama user's `num_ctx=32768` was dropped without a word where the CLI refuses it."""
    try:
        argv = shlex.split(text.replace("\r\n", "\n"))
    except ValueError as e:
        raise InputError(f"flags: cannot split it into arguments ({e})", 400) from None
    if argv and not argv[0].startswith("-"):  # the CLI's parser would blame the option before it
        raise InputError(f"flags: {argv[0][:60]!r} is not an engine flag: flags start with '-' (e.g. -fa on); the "
                         "context goes in the context field", 400)
    own = _own_options()
    for a in argv:
        if a == "--" or a.partition("=")[0] in own:
            raise InputError(f"flags: {a.partition('=')[0]!r} is not an engine flag (oomkit's own options are "
                             "fields of the request)", 400)
    return argv


def model_argv(p: Mapping[str, Any], extra: tuple[str, ...] = (), host: bool = False) -> list[str]:
    """The estimate fields as the CLI's arguments: MODEL --engine=E --ctx=N ... [engine flags] [-- COMMAND].
    host: the request may say the host (cpu_only -> --cpu-only, ram -> --ram, as estimate and check take them)."""
    argv: list[str] = []
    model = _field(p, "model")
    if model is not None:
        if model.startswith("-"):
            raise InputError(f"model {model!r} starts with '-': give a model name", 400)
        argv.append(model)
    for name in ("engine", "quant", "kv_type", "engine_version", *extra):
        v = _field(p, name)
        if v is not None:
            argv.append(f"--{name.replace('_', '-')}={v}")
    ctx = _int_field(p, "ctx", 1, MAX_CTX)
    if ctx is not None:
        argv.append(f"--ctx={ctx}")
    par = _int_field(p, "parallel", 1, MAX_PARALLEL)
    if par is not None:
        argv.append(f"--parallel={par}")
    vram = _size_field(p, "vram", many=True)
    if vram is not None:
        argv.append(f"--vram={vram}")
    gpu = _gpu_field(p)
    if gpu is not None:
        argv.append(f"--gpu={gpu}")
    if host and _bool_field(p, "cpu_only"):
        argv.append("--cpu-only")
    ram = _size_field(p, "ram") if host else None
    if ram is not None:
        argv.append(f"--ram={ram}")
    flags = _field(p, "flags")
    if flags is not None:
        argv += _engine_flags(flags)
    command = _field(p, "command", MAX_COMMAND_CHARS)
    if command is not None:
        argv += ["--", *_split(command, "command")]
    return argv


def _request(p: Mapping[str, Any], extra_options: dict[str, bool] | None = None, extra: tuple[str, ...] = (),
             default_model: str | None = None, local: bool = False, host: bool = False) -> ModelRequest:
    """local: the caller is the machine's own user (the MCP server over stdio), who may name files as on the CLI.
    host: the request may say the host (model_argv)."""
    argv = model_argv(p, extra, host)
    if not local:
        refuse_path(_field(p, "model"))
        refuse_file_flags(argv)
    req = parse_model_request(argv, extra_options=extra_options, default_model=default_model)
    if not local:
        refuse_path(req.model)
    return req


def command_request(command: str) -> ModelRequest:
    """A pasted engine command alone, read as the CLI reads `-- COMMAND` (paths refused), without estimating it."""
    return _request({"command": command})


def normal(name: str, value: Any) -> str | None:
    """A form field's value as a comparable text: a count with its k/M suffix read (ctx, parallel), else stripped."""
    if value is None or not str(value).strip():
        return None
    if name in ("ctx", "parallel"):
        try:
            return str(_int_field({name: value}, name, -(1 << 62), 1 << 62))
        except InputError:
            return str(value).strip()
    return str(value).strip()


# ---------------------------------------------------------------------------------------------------------
# The operations: each returns (the object, for the pages) and its JSON text (for the API), as the CLI writes it


@dataclass(frozen=True)
class Answer:
    obj: Any
    json: str
    request: ModelRequest | None = None

    def data(self) -> Any:
        return json.loads(self.json)


def estimate(p: Mapping[str, Any], local: bool = False) -> Answer:
    """`oomkit estimate ... --json`; with `config` (an uploaded config.json's object), that model, as the CLI reads
    the file."""
    if p.get("config") is not None:
        if p.get("model"):
            raise InputError("give either config or a model, not both", 400)
        # with a pasted command, the uploaded model in the place of the one it names (uploaded_command): its flags
        command = _field(p, "command", MAX_COMMAND_CHARS)
        argv = model_argv({**p, "command": uploaded_command(command)} if command else {**p, "model": "uploaded"},
                          host=True)
        refuse_file_flags(argv)
        req = parse_model_request(argv)
        spec = config_spec(p["config"], _field(p, "name", 200), req.engine, req.quant)
        est = estimate_model(spec, req.engine, settings=req.settings, vram=req.opts.get("--vram"),
                             gpu=req.opts.get("--gpu"), cpu_only=bool(req.opts.get("--cpu-only")))
        return Answer(est, render.to_json(est), None)
    req = _request(p, local=local, host=True)
    est: MemoryEstimate = req.estimate()
    return Answer(est, render.to_json(est), req)


def uploaded_command(command: str) -> str:
    """A pasted engine command with "uploaded" in the place of the model it names (`vllm serve ./my-finetune
    --max-model-len 8192` beside an uploaded config.json: that model with the command's flags), or an InputError."""
    argv = _split(command, "command")
    model = parse_command(argv, None).model if argv else None
    for i, arg in enumerate(argv):
        if model and (arg == model or arg.startswith(model + ":") or arg.endswith("=" + model)):
            argv[i] = arg.replace(model, "uploaded", 1) if not arg.endswith("=" + model) else \
                arg[: -len(model)] + "uploaded"
            return shlex.join(argv)
    raise InputError("the pasted command names no model for the uploaded config.json to stand for: clear the "
                     "command box to estimate the upload from the fields", 400)


def check_fit(p: Mapping[str, Any], local: bool = False) -> Answer:
    """`oomkit check ... --json` (against the given hardware, else this machine's GPUs, else the reference card)."""
    req = _request(p, default_model="llama3.1:8b", local=local, host=True)
    result = check_command.checked(req)  # CUDA_VISIBLE_DEVICES and the like in the pasted command, as the CLI's
    return Answer(result, check_report.to_json(result), req)


def table(p: Mapping[str, Any]) -> Answer:
    """`oomkit table ... --json`: the command itself, run on the argv the fields make (its steps are its own)."""
    fields = {**p}
    sizes = _field(p, "sizes")
    if sizes is not None and sizes.count(",") >= 64:
        raise InputError("sizes: at most 64 sizes")
    _request(fields, extra_options=TABLE_OPTIONS, extra=("kind", "sizes", "kv_types"))  # checks and path refusal
    argv = model_argv(fields, ("kind", "sizes", "kv_types"))
    text = run_json(table_command, argv)
    return Answer(json.loads(text), text)


_PLAN_OPTIONS = {**_plan_args.OPTIONS}


def _plan_opts(p: Mapping[str, Any]) -> tuple[str, ...]:
    for name in ("reserve", "headroom", "ram"):
        _size_field(p, name)
    for name, hi in (("min_ctx", MAX_CTX), ("concurrency", MAX_PARALLEL), ("nodes", 64), ("limit", MAX_LIMIT)):
        _int_field(p, name, 1, hi)
    return ("min_ctx", "concurrency", "reserve", "headroom", "nodes", "ram", "limit")


def plan_options(p: Mapping[str, Any], local: bool = False) -> Answer:
    """`oomkit plan MODEL ... --json`."""
    extra = _plan_opts(p)
    req = _request(p, extra_options=_PLAN_OPTIONS, extra=extra, local=local)
    held: list[str] = []  # the hardware notes (the size a GPU name was taken as, the reference card): in the answer
    if (hidden := req.hides_every_gpu(detected=True)) is not None:  # as commands/plan.py refuses it
        raise OomkitError(f"{hidden}; plan lays a model out on GPUs: name a GPU in the variable, or size the CPU run "
                          "with the calculator's \"no GPU: everything on the CPU\" (cpu_only)")
    with req.devices_seen() as seen:  # the GPUs the engine's command sees (CUDA_VISIBLE_DEVICES and the like)
        devices = _plan_args.devices(req.opts, held)
    held += seen
    goals = _plan_args.typed_goals(_plan_args.goals(req.opts), req.opts, req.engine, req.settings)
    result: Plan = plan(req.model, req.engine, devices=devices, goals=goals, settings=req.settings, quant=req.quant,
                        limit=_plan_args.limit(req.opts), kv_type=req.opts.get("--kv-type"))
    result = replace(result, notes=(*_said(held), *result.notes))
    return Answer(result, plan_report.to_json(result), req)


def _said(notes: list[str]) -> tuple[str, ...]:
    """The notes the CLI prints on stderr ("oomkit: note: ..."), as the JSON answer's notes."""
    return tuple(n.removeprefix("oomkit: ").removeprefix("note: ") for n in notes)


def fit_command(p: Mapping[str, Any], local: bool = False) -> Answer:
    """`oomkit fit --vram ... --json -- COMMAND`."""
    command = _field(p, "command", MAX_COMMAND_CHARS)
    if command is None:
        raise OomkitError("give the engine command, e.g. llama-server -m qwen3:8b -c 32768")
    argv = _split(command, "command")
    if not argv:
        raise OomkitError("give the engine command, e.g. llama-server -m qwen3:8b -c 32768")
    if not local:
        refuse_file_flags(argv)
    parsed = parse_command(argv, None)
    if not local:
        refuse_path(parsed.model)
    opts: dict[str, Any] = {}
    for name in ("vram", "reserve", "headroom"):
        v = _size_field(p, name, many=name == "vram")
        if v is not None:
            opts[f"--{name}"] = v
    gpu = _gpu_field(p)
    if gpu is not None:
        opts["--gpu"] = gpu
    n = _int_field(p, "min_ctx", 1, MAX_CTX)
    if n is not None:
        opts["--min-ctx"] = str(n)
    held: list[str] = []
    # CUDA_VISIBLE_DEVICES and the like written in the command: the GPUs the engine sees, as commands/fit.py reads them
    visible = visible_variables(dict(parsed.env))
    with engine_sees(visible, parsed.engine, gpus_started(parsed.settings)) as seen:
        devices = _plan_args.devices(opts, held)
    if visible and not devices:
        raise OomkitError(f"{shown(visible)} leaves no GPU visible: {parsed.engine} runs on the CPU (the GPU backend "
                          "finds no device); fit lays a model out on GPUs: name a GPU in the variable, or size the "
                          "CPU run with the calculator's \"no GPU: everything on the CPU\" (cpu_only)")
    held += seen
    result: Fit = fit(argv, devices, _plan_args.goals(opts), env=None)
    result = replace(result, notes=(*_said(held), *result.notes))
    return Answer(result, plan_report.to_json(result))


def diagnose_text(p: Mapping[str, Any]) -> Answer:
    """`oomkit diagnose - --json` with the text as stdin."""
    text = p.get("text")
    if not isinstance(text, str) or not text.strip():
        raise OomkitError("give the error message or the log as text")
    if len(text) > MAX_LOG_BYTES or len(text.encode("utf-8", errors="replace")) > MAX_LOG_BYTES:
        raise InputError("the log is larger than 20 MB: paste the part around the first error", 413)
    if not_text(text):  # as `oomkit diagnose` refuses it
        raise InputError("not text (binary or garbled data): give the engine's error message or its log as text", 400)
    d: Diagnosis = diagnose(text)
    return Answer(d, json.dumps(d.to_dict(), indent=1))


def models(p: Mapping[str, Any]) -> Answer:
    """`oomkit models [QUERY] [--family F] [--kind K] --json`: the command itself (its search is its own)."""
    argv = ["--json"]
    family, kind, q = _field(p, "family", 100), _field(p, "kind", 20), _field(p, "q", 200)
    if kind is not None and kind not in MODEL_KINDS:
        raise InputError(f"kind takes one of {', '.join(MODEL_KINDS)}, not {kind!r}", 400)
    argv += [f"--family={family}"] if family else []
    argv += [f"--kind={kind}"] if kind else []
    argv += ["--", q] if q else []
    text = run_json(models_command, argv)
    return Answer(json.loads(text), text)


def gpus(processes: bool = False) -> Answer:
    """`oomkit gpus --json` (with the processes holding memory when asked, for the machine page)."""
    hw: Hardware = detect(processes=processes)
    if hw.failed:
        raise OomkitError("could not read this machine's GPUs: " + "; ".join(hw.errors))
    return Answer(hw, hardware_report.to_json(hw))


def errors(p: Mapping[str, Any]) -> Answer:
    """`oomkit errors [QUERY] --json`."""
    rows = errors_index(_field(p, "q", 500))
    return Answer(rows, json.dumps(rows, indent=1))


def config_spec(config: Any, name: str | None, engine: str | None, quant: str | None) -> Any:
    """An uploaded config.json (its parsed object) -> the ModelSpec the CLI reads from that file."""
    from ..model.hf_config import spec_from_config  # lazy: only for an uploaded config
    from ..model.jsonfile import loads_object  # lazy: as above

    if not isinstance(config, dict):
        raise InputError("config must be the object of a config.json", 400)
    text = json.dumps(config)
    if len(text) > MAX_UPLOAD_BYTES:
        raise InputError("the config is larger than 1 MB", 413)
    # the body's JSON reader took NaN, Infinity (1e400) and 5,000-digit integers: bounded as a config.json file is
    config = loads_object(text, "uploaded config.json", "config")
    eng = get_engine(engine or "llama.cpp")
    fmt = quant or eng.default_weight_format(config)
    return spec_from_config(config, name=name or "uploaded config.json", source="uploaded config.json",
                            weight_format=fmt)
