"""The command lines: mlx_lm.generate / mlx_lm.server / python -m mlx_lm generate|server ..., and the names
mlx-community conversions carry (bits, base model)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from ...errors import OomkitError, SettingsError
from ...flags import check_settings, flag_value
from ...model import catalog
from ..command import Opt, Syntax, defaults, format_flags, python_module, rewrite, values_of
from ..lms_keys import LMS_MLX_VARIANT, lms_names_mlx
from .settings import GENERATE_MAX_TOKENS, LMS_PROGRAM, SERVER_MAX_TOKENS, MlxSettings

# flag -> (field or None to ignore, takes a value, kind)
_GENERATE_FLAGS: dict[str, tuple[str | None, bool, str]] = {
    "--model": ("model", True, "str"), "--adapter-path": (None, True, ""), "--trust-remote-code": (None, False, ""),
    "--extra-eos-token": (None, True, ""), "--system-prompt": (None, True, ""), "--prompt": (None, True, ""),
    "-p": (None, True, ""), "--prefill-response": (None, True, ""), "--max-tokens": ("max_tokens", True, "int"),
    "-m": ("max_tokens", True, "int"), "--temp": (None, True, ""), "--top-p": (None, True, ""),
    "--min-p": (None, True, ""), "--top-k": (None, True, ""), "--xtc-probability": (None, True, ""),
    "--xtc-threshold": (None, True, ""), "--min-tokens-to-keep": (None, True, ""), "--seed": (None, True, ""),
    "--ignore-chat-template": (None, False, ""), "--use-default-chat-template": (None, False, ""),
    "--chat-template-config": (None, True, ""), "--verbose": (None, True, ""),
    "--max-kv-size": ("max_kv_size", True, "int"), "--prompt-cache-file": (None, True, ""),
    "--quantize-activations": (None, False, ""), "-qa": (None, False, ""), "--kv-bits": ("kv_bits", True, "int"),
    "--kv-group-size": ("kv_group_size", True, "int"), "--quantized-kv-start": ("quantized_kv_start", True, "int"),
    "--draft-model": (None, True, ""), "--num-draft-tokens": (None, True, ""),
}
_SERVER_FLAGS: dict[str, tuple[str | None, bool, str]] = {
    "--model": ("model", True, "str"), "--adapter-path": (None, True, ""), "--host": (None, True, ""),
    "--port": (None, True, ""), "--allowed-origins": (None, True, ""), "--draft-model": (None, True, ""),
    "--num-draft-tokens": (None, True, ""), "--trust-remote-code": (None, False, ""),
    "--log-level": (None, True, ""), "--chat-template": (None, True, ""),
    "--use-default-chat-template": (None, False, ""), "--temp": (None, True, ""), "--top-p": (None, True, ""),
    "--top-k": (None, True, ""), "--min-p": (None, True, ""), "--max-tokens": ("max_tokens", True, "int"),
    "--chat-template-args": (None, True, ""), "--decode-concurrency": (None, True, ""),
    "--prompt-concurrency": (None, True, ""), "--prefill-step-size": ("prefill_step_size", True, "int"),
    "--prompt-cache-size": (None, True, ""), "--prompt-cache-bytes": (None, True, ""),
    "--pipeline": (None, False, ""),
}
# oomkit's own (options form and after an engine command): what mlx_lm learns from the model or the machine
_OOMKIT_FLAGS: dict[str, tuple[str | None, bool, str]] = {
    "--prompt-tokens": ("prompt_tokens", True, "int"), "--batch": ("batch", True, "int"),
    "--q-bits": ("q_bits", True, "int"), "--q-group-size": ("q_group_size", True, "int"),
    "--wired-limit-mb": ("wired_limit_mb", True, "int"), "--max-buffer-length": ("max_buffer_length", True, "int"),
    "--prefill-step-size": ("prefill_step_size", True, "int"), "--program": ("program", True, "str"),
}
_SUBCOMMANDS = {"generate": "mlx_lm.generate", "server": "mlx_lm.server", "chat": "mlx_lm.generate"}

# Flags mlx_lm reads that change memory in a way oomkit does not count (the estimate says so, engines/base.py
# unmodelled_note): a draft model (generate.py / server.py --draft-model: its weights and cache), an adapter's
# weights, the server's prompt cache (server.py LRUPromptCache: up to --prompt-cache-size prompts and
# --prompt-cache-bytes of their KV kept between requests) and its batch (--decode-concurrency sequences decoded
# together; oomkit's --batch sets the sequences estimated).
_UNMODELLED = {
    "--draft-model": "the draft model's weights and cache", "--adapter-path": "the adapter's weights",
    "--prompt-cache-size": "prompts' KV kept between requests", "--prompt-cache-bytes": "prompts' KV kept between "
    "requests", "--decode-concurrency": "sequences decoded together (oomkit estimates --batch of them)",
}


def _program_flags(program: str) -> dict[str, tuple[str | None, bool, str]]:
    """The program's own options (mlx_lm.server's or mlx_lm.generate's), without oomkit's."""
    return _SERVER_FLAGS if program.endswith("server") else _GENERATE_FLAGS


def _flags(program: str) -> dict[str, tuple[str | None, bool, str]]:
    return {**_OOMKIT_FLAGS, **_program_flags(program)}


def bits_from_name(model: str | None) -> int | None:
    """mlx-community names carry the bits of mlx_lm.convert -q: "...-4bit", "...-8bit" (a labelled guess); after an
    MXFP4 checkpoint's name, "-MXFP4-Q8" (gpt-oss-20b-MXFP4-Q8): the MXFP4 model converted with -q --q-bits 8, its
    float tensors at 8 bits and its experts in MXFP4 as stored (weights.tensor_bytes)."""
    if not model:
        return None
    m = (re.search(r"[-_](\d)-?bits?(?:$|[-_])", model, re.IGNORECASE)
         or re.search(r"[-_]mxfp4[-_]q([2-8])(?:$|[-_])", model, re.IGNORECASE))
    return int(m.group(1)) if m else None


_QUANT_SUFFIX = re.compile(r"[-_](?:\d-?bits?|bf16|fp16|mxfp4|nvfp4|mxfp8|dwq|awq|dq)(?:[-_].*)?$", re.IGNORECASE)
_ORGS = ("meta-llama", "Qwen", "google", "mistralai", "openai", "deepseek-ai", "microsoft", "ibm-granite",
         "HuggingFaceTB", "allenai", "nvidia", "zai-org", "moonshotai")


def base_model(model: str | None) -> str | None:
    """An mlx-community conversion ("mlx-community/Qwen3-8B-4bit") -> its base model in the catalog
    ("Qwen/Qwen3-8B"), so it resolves offline; the repo name is kept when the catalog does not know the base."""
    if not model or "/" not in model or Path(os.path.expanduser(model)).exists():
        return model
    org, name = model.split("/", 1)
    if org.lower() != "mlx-community":
        return model
    base = _QUANT_SUFFIX.sub("", name)
    if not base.strip("/ "):  # "mlx-community/": no model named, nothing to look up ("Qwen/" is Ollama's qwen tag)
        return model
    for cand in (base, *(f"{o}/{base}" for o in _ORGS)):
        entry = catalog.lookup(cand)
        if entry is not None:
            return entry.hf_id
    return model


# ---------------------------------------------------------------------------------------------------------
# LM Studio: `lms load MODEL` of an MLX model. LM Studio runs MLX models with its MLX engine (lmstudio-ai/mlx-engine,
# "the LM Studio implementation of the MLX runtime", built on mlx-lm), GGUF models with llama.cpp; the lms CLI passes
# the same load options to either (lmstudio.ai/docs/cli/load: --context-length, --gpu, ...). mlx-engine
# server/__main__.py: `--context-length` -> load_model(max_kv_size=args.context_length) (generate.py load_model:
# max_kv_size defaults to 4096, LM Studio's default context too); a text model loaded for one sequence gets
# ModelKit, whose cache is mlx-lm's make_prompt_cache(model, max_kv_size) (cache_wrapper.py CacheWrapper._make_cache;
# prompt chunks of PROMPT_PROCESSING_CHUNK_SIZE 2048, mlx-lm's own prefill step). GPU offload has no meaning there:
# the weights and cache live in unified memory on the Metal device, so --gpu is read and changes nothing.
#
# Which models are MLX: engines/lms_keys.py (lms_names_mlx, LMS_MLX_VARIANT), shared with the llama.cpp reading of
# `lms load`, which must not load this engine.


def from_lms(model: str, context: int, parallel: int = 1, unmodelled: tuple[str, ...] = ()
             ) -> tuple[str | None, str | None, MlxSettings]:
    """`lms load MODEL [-c N] [--parallel N]` of an MLX model -> its mlx-engine load: a context of N tokens, the cache
    capped at it (kv.layer_caches), N parallel predictions decoded together. Where mlx-engine loads the model with
    BatchedVisionModelKit (generate.py load_model: a vision model at any --parallel, a batchable text model from
    --parallel 2), its auto_fit_context replaces -c by the context that fits the memory (lmstudio-bug-tracker#2191,
    #2250, #2318): the estimate sizes that one (layout.lms_context_fit, context_fit.py)."""
    name = model
    opts: dict[str, Any] = {"program": LMS_PROGRAM, "context_length": context, "batch": parallel}
    if (m := LMS_MLX_VARIANT.search(model)) is not None:  # LM Studio's variant: qwen/qwen3.6-27b@4bit
        name, opts["q_bits"] = model[:m.start()], int(m.group(1))
    elif (bits := bits_from_name(model)) is not None:
        opts["q_bits"] = bits
    notes = list(unmodelled)
    if parallel > 1:
        notes.append(f"--parallel {parallel} (the prompt states LM Studio's MLX engine keeps between batched "
                     "predictions, mlx-engine BatchedVisionModelKit's prompt cache; the context it loads at is "
                     "auto_fit_context's, counted: context_fit.py)")
    opts["unmodelled"] = tuple(notes)
    # the key as typed (less LM Studio's variant): what lms load is given back when a plan writes the command
    return name, None, check_settings(MlxSettings(**opts))


_LMS_OPTIONS = (Opt("context_length", "--context-length", aliases=("-c",)), Opt("batch", "--parallel"))


def _lms_changes(old: MlxSettings, new: MlxSettings) -> tuple[dict[str, Any], dict[str, Any]]:
    """The fields lms load carries (context, parallel predictions); any other change has no lms flag: refused, so
    that a fit picks a change the command can carry. The cache cap follows the context (from_lms)."""
    a, b = values_of(old), values_of(new)
    changed = sorted(f for f in b if a.get(f) != b[f] and f not in ("prompt_tokens", "max_tokens"))
    foreign = [f for f in changed if f not in ("context_length", "batch")]
    if foreign:
        raise SettingsError(f"lms load has no flag for {', '.join(foreign)} (LM Studio's MLX engine)")
    return a, b


def _abbreviation(program: str, name: str) -> str:
    """mlx_lm's server.py and generate.py build a plain argparse.ArgumentParser (allow_abbrev on): a unique prefix
    of one of its long options names it (`--max-tok`), two or more is "ambiguous option". oomkit's own options
    take no part."""
    hits = sorted(f for f in _program_flags(program) if f.startswith(name))
    if len(hits) > 1:
        raise OomkitError(f"{program}: error: ambiguous option: {name} could match {', '.join(hits)}")
    return hits[0] if hits else name


# mlx_lm/generate.py and chat.py DEFAULT_MODEL, loaded when --model is left out (`model_path or DEFAULT_MODEL` in
# generate's main, chat's --model default), from mlx-lm 0.21.0 to 0.32.2 at least; before it load(None) failed.
# mlx_lm.server has none: it loads the model a request names.
_GENERATE_DEFAULT_MODEL = "mlx-community/Llama-3.2-3B-Instruct-4bit"


# mlx_lm.generate's chat template (generate.py main: tokenizer.apply_chat_template of the system prompt, the user's
# --prompt and any --prefill-response, add_generation_prompt) adds the template's own tokens to the prompt's; they
# are not known without the tokenizer, taken as at most this many (a Qwen3 user turn adds 9, gpt-oss's harmony
# system block about 70)
CHAT_TEMPLATE_TOKENS = 256


def prompt_bound(texts: dict[str, str]) -> tuple[int, str]:
    """The prompt tokens of mlx_lm.generate's --prompt (with --system-prompt and --prefill-response) as typed, at
    most: generate.py main reads --prompt with "\\n" and "\\t" unescaped and encodes it with the model's tokenizer,
    which is not read offline; a byte-level BPE or byte-fallback tokenizer makes at most one token of each UTF-8
    byte, and the chat template's tokens are taken as CHAT_TEMPLATE_TOKENS. -> (tokens, the assumption in words)."""
    text = {k: v.replace("\\n", "\n").replace("\\t", "\t") if k == "--prompt" else v for k, v in texts.items()}
    n_bytes = sum(len(v.encode("utf-8", "surrogatepass")) for v in text.values())
    tokens = n_bytes + CHAT_TEMPLATE_TOKENS
    given = " and ".join(text)
    return tokens, (f"{given} sized at {tokens:,} prompt tokens at most: one token per UTF-8 byte ({n_bytes:,}) plus "
                    f"{CHAT_TEMPLATE_TOKENS} for the chat template (the model's tokenizer is not read; give "
                    "--prompt-tokens N for the exact count)")


def parse_args(argv: list[str], env: dict[str, str] | None = None, program: str | None = None
               ) -> tuple[str | None, str | None, MlxSettings]:
    args = list(argv)
    typed_program = program is not None or bool(args and args[0] in _SUBCOMMANDS)  # a command, not oomkit's flags
    if program is None:
        program = "mlx_lm.generate"
        if args and args[0] in _SUBCOMMANDS:  # python -m mlx_lm generate ... / mlx_lm server ...
            program = _SUBCOMMANDS[args.pop(0)]
    flags = _flags(program)
    opts: dict[str, Any] = {"program": program}
    model = None
    prompts: dict[str, str] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        name, eq, inline = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if name not in flags and name.startswith("--") and len(name) > 2:
            name = _abbreviation(program, name)
        if name not in flags:
            raise OomkitError(f"{program}: error: unrecognized arguments: {arg}")
        fld, takes, kind = flags[name]
        value = None
        if takes:
            value, i = flag_value(args, i, inline if eq else None,
                                  f"{program}: error: argument {name}: expected one argument")
        i += 1
        if name in ("--prompt", "-p", "--system-prompt", "--prefill-response") and program == "mlx_lm.generate":
            prompts["--prompt" if name == "-p" else name] = value
        if name in _UNMODELLED and (program.endswith("server") or name in ("--draft-model", "--adapter-path")):
            opts["unmodelled"] = (*opts.get("unmodelled", ()), f"{name} {value} ({_UNMODELLED[name]})")
        if fld is None:
            continue
        if fld == "model":
            model = value
        elif kind == "int":
            try:
                opts[fld] = int(value)
            except ValueError:
                raise OomkitError(f"{program}: error: argument {name}: invalid int value: {value!r}") from None
        else:
            opts[fld] = value
    if prompts.get("--prompt", "-") != "-" and "prompt_tokens" not in opts:
        # a prompt typed on the command line ('-' is read from stdin when it runs): the cache grows to its tokens
        # and --max-tokens (generate_step), not to the trained context
        opts["prompt_tokens"], opts["prompt_note"] = prompt_bound(prompts)
    if model is None and typed_program and program == "mlx_lm.generate":
        model = _GENERATE_DEFAULT_MODEL
    if "q_bits" not in opts:
        bits = bits_from_name(model)
        if bits:
            opts["q_bits"] = bits
    if "q_bits" not in opts and _is_conversion(model):
        opts["converted_repo"] = model
    return base_model(model), None, check_settings(MlxSettings(**opts))


def _is_conversion(model: str | None) -> bool:
    """An mlx-community repo (every one is an mlx_lm.convert output) that base_model reads as its base model."""
    return bool(model) and model.split("/", 1)[0].lower() == "mlx-community" and base_model(model) != model


def flag_takes_value(name: str, following: str | None) -> bool:
    spec = {**_GENERATE_FLAGS, **_SERVER_FLAGS, **_OOMKIT_FLAGS}.get(name.partition("=")[0])
    return bool(spec and spec[1])


# ---------------------------------------------------------------------------------------------------------
# The command line as typed: MlxSettings -> `mlx_lm.generate|mlx_lm.server --model MODEL` with the flags that
# differ from the defaults, only flags mlx_lm's own parser takes, so that the command runs as written. What mlx_lm
# learns from the prompt, the model or the machine (the prompt's length, the sequences in flight, the machine's
# wired limit and buffer length) has no mlx_lm flag: oomkit reads it by its own spellings after an mlx_lm command
# (--prompt-tokens, --batch, --wired-limit-mb, --max-buffer-length; --prefill-step-size after mlx_lm.generate),
# and a written command leaves it out, given apart (sizing_flags) for `oomkit estimate -- COMMAND FLAGS`.
# Weights quantized at load are no mlx_lm.generate / mlx_lm.server flag either: mlx_lm loads a converted model
# (convert.py: mlx_lm.convert --hf-path M -q --q-bits B --q-group-size G --mlx-path DIR), so the bits are written
# as the --model that holds them (quantized_repo). context_length (prompt + generated tokens) is the prompt and
# generated tokens that make it up (--prompt-tokens, --max-tokens). engine_version is not on the command line.

_GENERATE_ONLY = ("max_kv_size", "kv_bits", "kv_group_size", "quantized_kv_start")
# The fields each program's own parser carries (mlx_lm/generate.py and mlx_lm/server.py setup_arg_parser, read at
# v0.31.3 and at main d78bf58e: generate takes --max-tokens/-m, --max-kv-size, --kv-bits, --kv-group-size,
# --quantized-kv-start; server takes --max-tokens and --prefill-step-size). Any other field of OPTIONS is oomkit's:
# argparse refuses it ("unrecognized arguments"), so a command written to run leaves it out.
_RUNS = {"mlx_lm.generate": frozenset({"max_tokens", "max_kv_size", "kv_bits", "kv_group_size", "quantized_kv_start"}),
         "mlx_lm.server": frozenset({"max_tokens", "prefill_step_size"})}
# carried by the --model the command names (quantized_repo), never as flags of a written command
_BY_NAME = ("q_bits", "q_group_size")
# mlx_lm.convert --q-group-size default (convert.py), the group every mlx-community "-Nbit" conversion uses
_CONVERT_GROUP = 64
OPTIONS = (
    Opt("max_tokens", "--max-tokens", aliases=("-m",)),
    Opt("prompt_tokens", "--prompt-tokens"),
    Opt("max_kv_size", "--max-kv-size"),
    Opt("kv_bits", "--kv-bits"),
    Opt("kv_group_size", "--kv-group-size"),
    Opt("quantized_kv_start", "--quantized-kv-start"),
    Opt("prefill_step_size", "--prefill-step-size"),
    Opt("batch", "--batch"),
    Opt("q_bits", "--q-bits"),
    Opt("q_group_size", "--q-group-size"),
    Opt("wired_limit_mb", "--wired-limit-mb"),
    Opt("max_buffer_length", "--max-buffer-length"),
)
_DEFAULTS = defaults(MlxSettings)


def typed(settings: MlxSettings) -> dict[str, Any]:
    """The settings as the command line carries them: a context_length becomes the prompt and generated tokens
    that make it up (settings.py resolve), the rest as it is."""
    out = values_of(settings)
    total = settings.context_length
    if total is None:
        return out
    out["context_length"] = None
    if settings.prompt_tokens is not None:
        out["max_tokens"] = total - settings.prompt_tokens
        return out
    max_tokens = settings.max_tokens
    if max_tokens is None:
        max_tokens = SERVER_MAX_TOKENS if settings.program.endswith("server") else GENERATE_MAX_TOKENS
    if total <= max_tokens:  # resolve: the prompt keeps one token
        max_tokens = max(total - 1, 0)
        out["max_tokens"] = max_tokens
    out["prompt_tokens"] = total - max_tokens
    return out


def _check_program(program: str, values: dict[str, Any]) -> None:
    if program.endswith("server"):
        for fld in _GENERATE_ONLY:
            if values.get(fld) != _DEFAULTS[fld]:
                flag = next(o.flag for o in OPTIONS if o.field == fld)
                raise OomkitError(f"mlx_lm.server has no {flag}: {fld}={values[fld]} runs only with mlx_lm.generate")


def quantized_repo(model: str, bits: int | None, group: int = _CONVERT_GROUP) -> str | None:
    """The --model that loads `model` at `bits`: the name itself where it already says them (or no bits are asked),
    else the mlx-community conversion of its base ("Qwen/Qwen3-8B", 8 -> "mlx-community/Qwen3-8B-8bit";
    "mlx-community/Qwen3-8B-4bit", 8 -> "mlx-community/Qwen3-8B-8bit"): mlx_lm.convert -q --q-bits N at convert.py's
    default group of 64, the naming bits_from_name reads back. None: no name carries them (a local path, a group
    other than 64): the model has to be converted first (mlx_lm.convert ... --mlx-path DIR, then --model DIR)."""
    if bits is None or (bits_from_name(model) == bits and group == _CONVERT_GROUP):
        return model
    if group != _CONVERT_GROUP or "/" not in model or Path(os.path.expanduser(model)).exists():
        return None
    return f"mlx-community/{_QUANT_SUFFIX.sub('', model.split('/', 1)[1])}-{bits}bit"


def _program_name(settings: MlxSettings) -> str:
    return "mlx_lm.server" if settings.program.endswith("server") else "mlx_lm.generate"


def format_command(model: str, settings: MlxSettings, quant: str | None = None) -> list[str]:
    """`mlx_lm.generate --model MODEL [flags]` (or mlx_lm.server): only what differs from the defaults, and only
    flags that program's parser takes (_RUNS); weights at other bits as the repo that holds them (quantized_repo),
    not by quant. What else sizes the run is sizing_flags'."""
    if settings.program == LMS_PROGRAM:
        _lms_changes(MlxSettings(program=LMS_PROGRAM, context_length=settings.context_length,
                                 batch=settings.batch, q_bits=settings.q_bits,
                                 engine_version=settings.engine_version, unmodelled=settings.unmodelled), settings)
        _, flags = format_flags(_LMS_OPTIONS, values_of(settings), {"context_length": None, "batch": 1})
        if settings.q_bits is not None and not lms_names_mlx(model):
            model = f"{model}@{settings.q_bits}bit"  # LM Studio's MLX variant (from_lms read it off)
        return ["lms", "load", model, *flags]
    program = _program_name(settings)
    values = typed(settings)
    _check_program(program, values)
    repo = quantized_repo(model, settings.q_bits, settings.q_group_size)
    if settings.q_bits is None and settings.converted_repo:
        repo = settings.converted_repo  # the conversion named, not its base model
    if repo is None:
        raise OomkitError(f"{program} loads {model} as stored: for {settings.q_bits}-bit weights (group "
                          f"{settings.q_group_size}) convert it first (mlx_lm.convert --hf-path {model} -q --q-bits "
                          f"{settings.q_bits} --q-group-size {settings.q_group_size} --mlx-path DIR) and give "
                          "--model DIR")
    _, flags = format_flags([o for o in OPTIONS if o.field in _RUNS[program]], values, _DEFAULTS)
    return [program, "--model", repo, *flags]


def _names(argv: list[str], opt: Opt) -> bool:
    """Whether argv carries the option (by its flag or an alias, `--flag value` or `--flag=value`)."""
    spellings = (opt.flag, *opt.aliases)
    return any(a in spellings or a.partition("=")[0] in spellings for a in argv)


def sizing_flags(settings: MlxSettings, argv: list[str] | tuple[str, ...] = ()) -> list[str]:
    """oomkit's own flags that size the run and that no flag of the mlx_lm program carries (the prompt's length,
    the sequences in flight, the machine's wired limit and buffer length), by the spellings oomkit reads after an
    mlx_lm command: `oomkit estimate -- COMMAND FLAGS` gives back the estimate. Those argv already names (oomkit's
    flags the user typed, rewritten in place) are left out. An lms load carries all it takes: none."""
    if settings.program == LMS_PROGRAM:
        return []
    program = _program_name(settings)
    table = [o for o in OPTIONS if o.field not in _RUNS[program] and o.field not in _BY_NAME
             and not _names(list(argv), o)]
    _, flags = format_flags(table, typed(settings), _DEFAULTS)
    return flags


def _program_len(argv: list[str]) -> int:
    if (module := python_module(argv)) is not None:  # python [-u] -m mlx_lm[.server] [server]
        name, end = module
        return end + 1 if name == "mlx_lm" and len(argv) > end and argv[end] in _SUBCOMMANDS else end
    return 2 if len(argv) > 1 and argv[1] in _SUBCOMMANDS else 1


SYNTAX = Syntax(_program_len, flag_takes_value)


def rewrite_command(argv: list[str], old: MlxSettings, new: MlxSettings) -> list[str]:
    """The user's mlx_lm command with only the flags of the changed fields changed (an `lms load` of an MLX model:
    its -c and --parallel)."""
    if old.program == LMS_PROGRAM:
        # lms load's own option syntax (imported here: llamacpp's programs import this module)
        from ..llamacpp.args import _LMS_SYNTAX

        a, b = _lms_changes(old, new)
        return rewrite(argv, a, b, _LMS_OPTIONS, _LMS_SYNTAX)
    values = typed(new)
    _check_program(old.program, values)
    # mlx_lm's own flags, and oomkit's that the user typed (kept, rewritten); other oomkit fields are sizing_flags'.
    # Other bits are another --model (quantized_repo), unless the user gave oomkit's --q-bits themselves.
    program = _program_name(old)
    table = [o for o in OPTIONS if o.field in _RUNS[program] or _names(argv, o)]
    out = rewrite(argv, typed(old), values, table, SYNTAX)
    if (new.q_bits, new.q_group_size) != (old.q_bits, old.q_group_size) and \
            not any(_names(argv, o) for o in OPTIONS if o.field in _BY_NAME):
        out = _renamed(out, new)
    return out


def _renamed(argv: list[str], new: MlxSettings) -> list[str]:
    """argv with its --model (or --model=) naming the repo that holds the new bits (quantized_repo)."""
    out = list(argv)
    for i, a in enumerate(out):
        name, eq, value = a.partition("=")
        if name != "--model":
            continue
        if not eq and i + 1 < len(out):
            i, value = i + 1, out[i + 1]
        repo = quantized_repo(value, new.q_bits, new.q_group_size)
        if repo is None:
            raise SettingsError(f"no --model loads {value} at {new.q_bits} bits without mlx_lm.convert")
        out[i] = f"--model={repo}" if eq else repo
        return out
    raise SettingsError("the command names no --model to carry other bits")
