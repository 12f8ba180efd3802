"""vLLM's command line (`vllm serve MODEL ...`, `python -m vllm.entrypoints.openai.api_server --model X ...`)
-> VllmSettings.

Flags are checked against vLLM's own flag table (engines/data/vllm_flags.json, tools/build_vllm_flags.py: every
flag of the EngineArgs, AsyncEngineArgs and frontend argument parsers of the releases 0.5.4 to 0.34.0 read from
their wheels, with the releases that have each), so a flag no release knows is refused here the way argparse
refuses it ("vllm serve: error: unrecognized arguments: --foo"), the ones that change memory are applied, and one
that only some releases have is held against the release chosen in config.resolve (engines/release_flags.py).
Parsing follows vllm/utils/argparse_utils.py FlexibleArgumentParser: `--max_model_len` equals
`--max-model-len`, `--flag=value` works, BooleanOptionalAction switches have a `--no-` form, and integer
options take vLLM's human-readable forms ("32k" = 32000, "32K" = 32768; engine/arg_utils.py
human_readable_int).
"""

from __future__ import annotations

import json
import os
import re
import shlex
from functools import lru_cache
from pathlib import Path
from typing import Any

from ...errors import OomkitError, SettingsError
from ...flags import check_settings
from ...model._bytes import read_capped
from ..command import (
    Opt,
    Syntax,
    defaults,
    flag_bool,
    for_release,
    format_flags,
    python_module,
    rewrite,
    values_of,
)
from ..release_flags import at_release_read, known_in, release_key, unique_readings, varies, why_not
from .config import CACHE_DTYPES, SERVE_CLI_FIRST
from .drafter import config_known
from .encoder import MM_SIZE_KWARGS
from .settings import VllmSettings, parse_version

PROG = "vllm serve"

# --kv-cache-dtype choices by release (vllm/config/cache.py CacheDType); the union is accepted here and the
# engine refuses a type the chosen release or model cannot use.
KV_CACHE_DTYPES = tuple(name for name, _ in CACHE_DTYPES)
# --dtype choices (vllm/config/model.py ModelDType)
DTYPES = ("auto", "half", "float16", "bfloat16", "float", "float32")

# Environment variables that change memory (vllm/envs.py).
ENV_VARS = ("VLLM_ALLOW_LONG_MAX_MODEL_LEN", "VLLM_USE_V1", "VLLM_ATTENTION_BACKEND",
            "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS", "VLLM_USE_FLASHINFER_SAMPLER", "VLLM_USE_V2_MODEL_RUNNER",
            "VLLM_PP_LAYER_PARTITION", "VLLM_DISABLE_COMPILE_CACHE", "VLLM_MLA_DISABLE")


FLAGS_FILE = "vllm_flags.json"  # tools/build_vllm_flags.py: kinds, and the releases read that have each flag


@lru_cache(maxsize=1)
def flags_table() -> dict[str, str]:
    """flag -> kind: "bool" (switch), "value" (one argument), "list" (one or more), "optional" (zero or one)."""
    path = Path(__file__).parent.parent / "data" / FLAGS_FILE
    return dict(json.loads(path.read_text(encoding="utf-8"))["flags"])


def _canonical(name: str) -> str:
    """FlexibleArgumentParser.parse_args: underscores in long option names become dashes."""
    if name.startswith("--"):
        return "--" + name[2:].replace("_", "-")
    return name


def _lookup(name: str) -> tuple[str, str | None, bool]:
    """-> (canonical flag, kind or None when unknown, negated)."""
    flags = flags_table()
    name = _canonical(name)
    if name in flags:
        return name, flags[name], False
    if name.startswith("--no-") and flags.get("--" + name[5:]) in ("bool", "optional"):
        return "--" + name[5:], "bool", True
    if re.fullmatch(r"-O\d", name) or name.startswith("-O."):  # -O3, -O.level=3 (compilation config)
        return "-O", "attached", False
    hits = _abbreviated(name)
    if len(hits) == 1:
        return _lookup(hits[0])
    if hits:
        raise _ambiguous(name, hits)
    return name, None, False


def _abbreviated(name: str) -> list[str]:
    """argparse's allow_abbrev, which FlexibleArgumentParser keeps (vllm/utils/argparse_utils.py passes no
    allow_abbrev): the long options `name` (not a flag itself) is a prefix of (`--gpu-memory-util`,
    `--enable-expert-paralle`), --no-X spellings of the switches included, over every release's flags; one names
    it, two or more is argparse's "ambiguous option" unless they read alike (parse_args keeps those for the release
    chosen, which config.resolve matches them against, as that release's parser alone does)."""
    flags = flags_table()
    name = _canonical(name)
    if not name.startswith("--") or len(name) <= 2 or name in flags:
        return []
    if name.startswith("--no-") and flags.get("--" + name[5:]) in ("bool", "optional"):
        return []
    hits = sorted({f for f in flags if f.startswith(name)}
                  | {"--no-" + f[2:] for f, k in flags.items() if k in ("bool", "optional")
                     and ("--no-" + f[2:]).startswith(name)})
    return at_release_read(FLAGS_FILE, name, hits, PROG)  # the release being read, where it is known already


def _ambiguous(name: str, hits: list[str]) -> OomkitError:
    """argparse's refusal over the union; where one release's parser reads it as one flag, that is said (the full
    flag is what oomkit can read whatever the release)."""
    where = unique_readings(FLAGS_FILE, hits)
    hint = f" ({where}; its candidates set different things: give the full flag)" if where else ""
    return OomkitError(f"{PROG}: error: ambiguous option: {name} could match {', '.join(hits[:6])}{hint}")


def _one_reading(name: str, hits: list[str], value: Any) -> bool:
    """Whether the flags an abbreviation may name (two or more) read alike: the same kind of value taken, and the
    same settings and notes from `value` (_apply), so that whichever one the release's parser picks, the tokens
    read and the estimate are the same."""
    readings = {_lookup(h)[1:] for h in hits}
    if len(readings) != 1:
        return False
    effects = []
    for h in hits:
        out: dict[str, Any] = {}
        try:
            _apply(_lookup(h)[0], value, out)
        except OomkitError as e:
            out = {"error": str(e)}
        effects.append(repr(sorted(out.items())))
    return len(set(effects)) == 1


_BOOL_WORDS = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}


def human_readable_int(flag: str, value: str) -> int:
    """engine/arg_utils.py human_readable_int: '25.6k' = 25600 (decimal k/m/g/t), '1K' = 1024 (binary K/M/G/T)."""
    v = value.strip()
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([kKmMgGtT])", v)
    if m:
        number, suffix = m.groups()
        if suffix.islower():
            return int(float(number) * {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}[suffix])
        if "." in number:
            raise OomkitError(f"{PROG}: error: argument {flag}: Decimals are not allowed with binary suffixes like "
                              f"{suffix}. Did you mean to use {number}{suffix.lower()} instead?")
        return int(number) * {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}[suffix]
    try:
        return int(v)
    except ValueError:
        raise OomkitError(f"{PROG}: error: argument {flag}: invalid human_readable_int value: {value!r}") from None


def _int(flag: str, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise OomkitError(f"{PROG}: error: argument {flag}: invalid int value: {value!r}") from None


def _capture_size(flag: str, value: str) -> int:
    """A CUDA graph capture size: a batch of that many tokens is captured, so it is at least 1."""
    n = _int(flag, value)
    if n < 1:
        raise OomkitError(f"{PROG}: argument {flag}: capture size {n} is not a positive batch size")
    return n


def _float(flag: str, value: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise OomkitError(f"{PROG}: error: argument {flag}: invalid float value: {value!r}") from None


def _choice(flag: str, value: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        listed = ", ".join(repr(c) for c in choices)
        raise OomkitError(f"{PROG}: error: argument {flag}: invalid choice: {value!r} (choose from {listed})")
    return value


def _env_bool(env: dict[str, str], key: str) -> bool | None:
    """A VLLM_* switch as vllm/envs.py reads it: VLLM_ALLOW_LONG_MAX_MODEL_LEN is true for "1" or "true" (any case,
    stripped) and false for anything else; the others are bool(int(value)) (0.9.2 to 0.34.0; maybe_convert_bool for
    VLLM_USE_V2_MODEL_RUNNER), so "2" is true and "true", "yes" or "" stop vLLM at start-up (ValueError)."""
    if key not in env:
        return None
    if key == "VLLM_ALLOW_LONG_MAX_MODEL_LEN":
        return env[key].strip().lower() in ("1", "true")
    try:
        return bool(int(env[key]))
    except ValueError:
        raise SettingsError(f"{key}={env[key][:40]!r}: vLLM reads it with int() (vllm/envs.py) and stops at "
                            "start-up; give 0 or 1") from None


# a hub repo id of GGUF files, no file named ("bartowski/Mistral-Large-Instruct-2407-GGUF", "x/Y-Q4_K_M-GGUF")
_GGUF_REPO = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]*?(?:^|[-_.])gguf(?:[-_.][\w.-]*)?", re.IGNORECASE)


def parse_args(argv: list[str], env: dict[str, str] | None = None) -> tuple[str | None, None, VllmSettings]:
    """vLLM's flags (no program name; `serve` and the model may lead) -> (model, None, VllmSettings).

    env: the VLLM_* variables in force (None: os.environ)."""
    env = dict(os.environ) if env is None else dict(env)
    args = list(argv)
    if args and args[0] == "serve":  # "vllm serve ..." reaches here as ["serve", ...] when the program was "vllm"
        args = args[1:]
    if "--config" in args:
        args = _with_config_file(args)
    args = _dotted(args)
    opts: dict[str, Any] = {}
    model: str | None = None
    model_flag: str | None = None  # the --model value
    positional = False  # whether `model` is the positional model_tag
    unknown: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if not arg.startswith("-") or arg == "-" or re.fullmatch(r"-\d+(\.\d+)?", arg):
            if not positional:
                model, positional = arg, True  # the positional model_tag of `vllm serve`
            else:
                unknown.append(arg)
            continue
        name, eq, inline = _split_inline(arg)
        hits = _abbreviated(name)
        flag, kind, negated = _lookup(hits[0]) if len(hits) > 1 and len({_lookup(h)[1:] for h in hits}) == 1 \
            else _lookup(name)
        if kind is None:
            unknown.append(arg)
            # an unknown flag's value (if it has one) is unknown too; argparse reports both
            if not eq and i < len(args) and not args[i].startswith("-"):
                unknown.append(args[i])
                i += 1
            continue
        if kind == "attached":
            # -O0 .. -O3, -O.level=3 / -O.mode=3 (FlexibleArgumentParser: the level, or its dotted config key)
            m = re.fullmatch(r"-O(\d)", name) or re.fullmatch(r"-O\.(?:level|mode)=(\d)", arg)
            if m:
                opts["optimization_level"] = int(m.group(1))
            continue
        value, i = _take_value(args, i, flag, kind, negated, inline if eq else None)
        if len(hits) > 1:
            # an abbreviation of flags of different releases: argparse matches it against the chosen release's
            # parser only, so it is kept with its candidates for config.resolve when they read alike; otherwise the
            # union's ambiguity is refused here
            if not _one_reading(name, hits, value):
                raise _ambiguous(_canonical(name), hits)
            opts["abbreviations"] = (*opts.get("abbreviations", ()), (_canonical(name), " ".join(hits)))
        elif varies(FLAGS_FILE, flag):  # held against the release chosen in config.resolve
            opts["release_flags"] = (*opts.get("release_flags", ()), flag)
        _apply(flag, value, opts)
        if flag == "--model":
            model_flag = value  # beside a positional model (`vllm serve A --model B`): config.resolve decides
            model = model if positional else value
    if unknown:
        raise OomkitError(f"{PROG}: error: unrecognized arguments: {' '.join(unknown)}")
    if positional and model_flag is not None:
        opts["model_flag_beside_tag"] = model_flag
    if model is not None and _GGUF_REPO.fullmatch(model) and not model.lower().endswith(".gguf") \
            and not os.path.exists(model):
        # vLLM reads a GGUF from a .gguf file (model_loader's GGUF loader: "... is not a file"), not from a hub repo
        # of them named without one (vllm-project/vllm#17661, 0.8.4: "pass the local path of the GGUF checkpoint")
        raise OomkitError(f"{model} is a hub repo of GGUF files, and vLLM loads a GGUF from a .gguf file, not from a "
                          "repo of them: download the file and give its path")
    if opts.pop("language_model_only", False):
        # config/multimodal.py MultiModalConfig.get_limit_per_prompt (read in 0.17.0, 0.20.0, 0.21.0; the flag is
        # 0.17.0's): language_model_only answers 0 for every modality before --limit-mm-per-prompt is read, so
        # models/interfaces.py _mark_tower_model skips every tower (meta device) and profile_run skips the encoder
        opts["limit_mm_per_prompt"] = tuple((m, 0) for m in LANGUAGE_MODEL_ONLY_MODALITIES)
    if opts.get("unmodelled"):
        opts["unmodelled"] = tuple(dict.fromkeys(opts["unmodelled"]))
    _apply_env(env, opts)
    return model, None, check_settings(VllmSettings(**opts))


def _with_config_file(args: list[str]) -> list[str]:
    """`--config FILE` (FlexibleArgumentParser.parse_args -> _pull_args_from_config and load_config_file,
    vllm/utils/argparse_utils.py; vllm/utils/__init__.py before 0.10, from 0.6.0): the YAML file's keys become flags
    put where `--config FILE` stood, after the model (the command line's own flags after them win): `true` a bare
    switch, `false` left out, a list `--key a b`, any other value `--key value`. vLLM opens the file, so one that is
    not on this machine cannot be read: its settings are refused rather than left out."""
    if args.count("--config") > 1:
        raise OomkitError(f"{PROG}: More than one config file specified!")
    k = args.index("--config")
    if k == len(args) - 1:
        raise OomkitError(f"{PROG}: No config file specified! Please check your command-line arguments.")
    path = args[k + 1]
    if path.rsplit(".", 1)[-1] not in ("yaml", "yml"):
        raise OomkitError(f"{PROG}: Config file must be of a yaml/yml type. {path} supplied")
    if not Path(path).expanduser().exists():
        raise OomkitError(f"no such file: {path} (vllm serve --config: the settings it holds are part of the "
                          "command; give them as flags)")
    # a regular file under a cap: a FIFO with no writer or a link to /dev/zero is refused, not read without end
    text = read_capped(Path(path).expanduser(), 1 << 20, "vllm serve --config file")
    try:
        import yaml  # PyYAML, which huggingface_hub installs

        config = yaml.safe_load(text.decode("utf-8"))
    except Exception as e:  # not YAML, unreadable
        raise OomkitError(f"{PROG}: cannot read the config file {path}: {e}") from None
    words: list[str] = []
    for key, value in (config or {}).items() if isinstance(config, dict) else ():
        if isinstance(value, bool):
            words += [f"--{key}"] if value else []
        elif isinstance(value, list):
            words += [f"--{key}", *map(str, value)] if value else []
        else:
            words += [f"--{key}", str(value)]
    head = 1 if args[0] != "--config" and not args[0].startswith("-") else 0  # the positional model stays first
    return [*args[:head], *words, *args[head:k], *args[k + 2:]]


_CONFIG_LINE = re.compile(r"\s*([A-Za-z][\w.-]*)\s*:\s*(.*?)\s*")


def config_hint(text: str) -> str | None:
    """A `vllm serve --config` YAML pasted as MODEL (one `key: value` a line, `model:` among them) -> the one-line
    refusal naming the command it stands for; None for other text. FlexibleArgumentParser._pull_args_from_config
    turns each key into its flag: `true` a bare switch, `false` left out, a value `--key value`, `model` the
    positional model of `vllm serve`."""
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    pairs = [m.groups() for ln in lines if (m := _CONFIG_LINE.fullmatch(ln))]
    if len(lines) < 2 or len(pairs) != len(lines) or "model" not in dict(pairs):
        return None
    model, words = "", []
    for key, value in pairs:
        value = value.strip("'\"")
        if key == "model":
            model = value
        elif value.lower() == "true":
            words.append(f"--{key}")
        elif value.lower() != "false":
            words += [f"--{key}", shlex.quote(value)]
    form = " ".join(["oomkit check -- vllm serve", shlex.quote(model), *words])
    return f"this is a vLLM config file (vllm serve --config), not a model name: give `{form}`"


def _dotted_name(arg: str) -> bool:
    name = arg.partition("=")[0]
    if not arg.startswith("-") or "." not in name or name.startswith("-O") or re.fullmatch(r"-\d+(\.\d+)?", name):
        return False
    return arg.startswith("--") or name.partition(".")[0] in flags_table()


def _dotted(args: list[str]) -> list[str]:
    """FlexibleArgumentParser.parse_args (vllm/utils/argparse_utils.py): a JSON option given key by key,
    `--speculative_config.method mtp --speculative-config.num_speculative_tokens=5`, is the JSON object of its keys
    (`--speculative-config '{"method": "mtp", "num_speculative_tokens": 5}'`), appended after the other arguments;
    a value is read as JSON, else as a human-readable int, else as a string; `key+ a,b` is a list. The part before
    the first dot is a flag name (underscores become dashes); a short alias takes keys too (`-cc.pass_config.x=False`,
    `-ac.backend=...`: processed_arg.startswith("-") there), but `-O.level=3` keeps _lookup's own reading and a
    negative number is a value."""
    if not any(_dotted_name(a) for a in args):
        return args
    out: list[str] = []
    merged: dict[str, dict[str, Any]] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        name, eq, inline = arg.partition("=")
        if not _dotted_name(arg):
            out.append(arg)
            i += 1
            continue
        if eq:
            text, i = inline, i + 1
        elif i + 1 < len(args):
            text, i = args[i + 1], i + 2
        else:
            raise OomkitError(f"{PROG}: error: argument {name}: expected one argument")
        if name.endswith("+"):
            name, text = name[:-1], json.dumps(text.split(","))
        key, *keys = name.split(".")
        try:
            value: Any = json.loads(text)
        except ValueError:
            try:
                value = human_readable_int(key, text)
            except OomkitError:
                value = text
        node = merged.setdefault(_canonical(key), {})
        for k in keys[:-1]:
            if not isinstance(node.get(k), dict):
                node[k] = {}
            node = node[k]
        if isinstance(value, list) and isinstance(node.get(keys[-1]), list):
            node[keys[-1]] += value
        else:
            node[keys[-1]] = value
    for key, value in merged.items():
        out += [key, json.dumps(value)]
    return out


def _split_inline(arg: str) -> tuple[str, str, str]:
    """argparse _parse_optional: `--flag=value`, and `-tp=4` too (a short option whose part before '=' is one);
    `-O.level=3` stays whole for the -O handling."""
    if arg.startswith("--"):
        return arg.partition("=")
    name, eq, inline = arg.partition("=")
    if eq and not name.startswith("-O") and name in flags_table():
        return name, eq, inline
    return arg, "", ""


def _take_value(args: list[str], i: int, flag: str, kind: str, negated: bool, inline: str | None
                ) -> tuple[Any, int]:
    """The value of flag (of `kind`) whose next argument is args[i]; inline: its `--flag=value` part
    -> (value, index of the next argument)."""
    if kind == "bool":
        if inline is not None:
            raise OomkitError(f"{PROG}: error: argument {flag}: ignored explicit argument {inline!r}")
        return not negated, i
    if kind == "optional":  # StoreBoolean with nargs="?" in old releases: --enable-chunked-prefill [True]
        value: Any
        if negated:
            value = False
        elif inline is not None:
            value = inline
        elif i < len(args) and args[i].lower() in _BOOL_WORDS:
            value = args[i]
            i += 1
        else:
            value = True
        if isinstance(value, str):
            value = _BOOL_WORDS.get(value.lower(), value)
        return value, i
    if kind == "list":
        values = [inline] if inline is not None else []
        while i < len(args) and not args[i].startswith("-"):
            values.append(args[i])
            i += 1
        if not values:
            raise OomkitError(f"{PROG}: error: argument {flag}: expected at least one argument")
        return values, i
    if inline is not None:
        return inline, i
    if i < len(args):
        return args[i], i + 1
    raise OomkitError(f"{PROG}: error: argument {flag}: expected one argument")


# VLLM_* switches -> the VllmSettings field each sets (vllm/envs.py)
_ENV_SWITCHES = (("VLLM_ALLOW_LONG_MAX_MODEL_LEN", "allow_long_max_model_len"), ("VLLM_USE_V1", "use_v1"),
                 ("VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS", "estimate_cudagraphs"),
                 ("VLLM_USE_FLASHINFER_SAMPLER", "use_flashinfer_sampler"),
                 ("VLLM_USE_V2_MODEL_RUNNER", "use_v2_model_runner"),
                 ("VLLM_DISABLE_COMPILE_CACHE", "cold_compile"), ("VLLM_MLA_DISABLE", "mla_disable"))


def _apply_env(env: dict[str, str], opts: dict[str, Any]) -> None:
    """The VLLM_* variables that change memory (vllm/envs.py)."""
    for var, field in _ENV_SWITCHES:
        value = _env_bool(env, var)
        if value is not None:
            opts[field] = value
    if env.get("VLLM_ATTENTION_BACKEND") and "attention_backend" not in opts:
        opts["attention_backend"] = env["VLLM_ATTENTION_BACKEND"].strip().upper()
    if env.get("VLLM_PP_LAYER_PARTITION"):
        opts["pp_layer_partition"] = env["VLLM_PP_LAYER_PARTITION"].strip()


def _apply_compilation_config(flag: str, value: Any, opts: dict[str, Any]) -> None:
    """--compilation-config '{...}' (config/compilation.py CompilationConfig): the fields that change CUDA-graph
    memory; a bare number is the level (-O)."""
    text = str(value).strip()
    if re.fullmatch(r"\d", text):
        opts["optimization_level"] = int(text)
        return
    try:
        cfg = json.loads(text)
    except ValueError as e:
        raise OomkitError(f"{PROG}: error: argument {flag}: invalid loads value: {text!r}") from e
    if not isinstance(cfg, dict):
        raise OomkitError(f"{PROG}: error: argument {flag}: expected a JSON object, got {text!r}")
    if cfg.get("cudagraph_mode") is not None:
        opts["cudagraph_mode"] = str(cfg["cudagraph_mode"]).upper()
    sizes = cfg.get("cudagraph_capture_sizes")
    if isinstance(sizes, list) and sizes:
        opts["cudagraph_capture_sizes"] = tuple(sorted({_capture_size(flag, v) for v in sizes}))
    if cfg.get("max_cudagraph_capture_size") is not None:
        opts["max_cudagraph_capture_size"] = _int(flag, cfg["max_cudagraph_capture_size"])
    level = cfg.get("level", cfg.get("mode"))
    if isinstance(level, int):
        opts["optimization_level"] = level


def _apply(flag: str, value: Any, opts: dict[str, Any]) -> None:
    """The flags that change memory, by vLLM's own names (engine/arg_utils.py EngineArgs)."""
    if flag == "--max-model-len":
        opts["max_model_len"] = -1 if str(value).strip() in ("-1", "auto") else human_readable_int(flag, value)
    elif flag == "--gpu-memory-utilization":
        opts["gpu_memory_utilization"] = _float(flag, value)
    elif flag in ("--tensor-parallel-size", "-tp"):
        opts["tensor_parallel_size"] = _int(flag, value)
    elif flag in ("--pipeline-parallel-size", "-pp"):
        opts["pipeline_parallel_size"] = _int(flag, value)
    elif flag in ("--data-parallel-size", "-dp"):
        opts["data_parallel_size"] = _int(flag, value)
    elif flag == "--nnodes":
        opts["nnodes"] = _int(flag, value)
    elif flag == "--distributed-executor-backend":
        opts["distributed_executor_backend"] = str(value).strip().lower()
    elif flag in ("--enable-expert-parallel", "-ep"):
        opts["enable_expert_parallel"] = bool(value)
    elif flag == "--dtype":
        opts["dtype"] = _choice(flag, value, DTYPES)
    elif flag == "--kv-cache-dtype":
        opts["kv_cache_dtype"] = _choice(flag, value, KV_CACHE_DTYPES)
    elif flag == "--block-size":
        opts["block_size"] = _int(flag, value)
    elif flag == "--max-num-seqs":
        opts["max_num_seqs"] = _int(flag, value)
    elif flag == "--max-num-batched-tokens":
        opts["max_num_batched_tokens"] = human_readable_int(flag, value)
    elif flag == "--enable-chunked-prefill":
        opts["enable_chunked_prefill"] = value if isinstance(value, bool) else _BOOL_WORDS.get(str(value).lower(), True)
    elif flag == "--enable-prefix-caching":
        opts["enable_prefix_caching"] = bool(value)
    elif flag == "--enforce-eager":
        opts["enforce_eager"] = bool(value)
    elif flag == "--cpu-offload-gb":
        opts["cpu_offload_gb"] = _float(flag, value)
    elif flag == "--swap-space":
        opts["swap_space"] = _float(flag, value)
    elif flag in ("--kv-cache-memory-bytes", "--kv-cache-memory"):
        opts["kv_cache_memory_bytes"] = human_readable_int(flag, value)
    elif flag == "--num-gpu-blocks-override":
        opts["num_gpu_blocks_override"] = _int(flag, value)
    elif flag in ("--quantization", "-q"):
        opts["quantization"] = str(value)
    elif flag == "--max-cudagraph-capture-size":
        opts["max_cudagraph_capture_size"] = _int(flag, value)
    elif flag in ("--cudagraph-capture-sizes", "--cuda-graph-sizes"):
        opts["cudagraph_capture_sizes"] = tuple(sorted({_capture_size(flag, v) for v in value}))
    elif flag in ("--compilation-config", "-cc", "-O"):  # -O 3 / -O '{...}' / -cc '{...}': short forms (arg_utils.py)
        _apply_compilation_config(flag, value, opts)
    elif flag == "--disable-hybrid-kv-cache-manager":
        opts["disable_hybrid_kv_cache_manager"] = bool(value)
    elif flag == "--disable-custom-all-reduce":
        opts["disable_custom_all_reduce"] = bool(value)
    elif flag == "--attention-backend":
        opts["attention_backend"] = str(value).upper()
    elif flag == "--moe-backend":
        # KernelConfig.moe_backend (engine/arg_utils.py): read by profile.py's cutlass and flashinfer_b12x rules
        opts["moe_backend"] = str(value).strip().lower()
    elif flag in ("--attention-config", "-ac"):
        _apply_attention_config(flag, value, opts)
    elif flag == "--mamba-cache-dtype":
        opts["mamba_cache_dtype"] = str(value)
    elif flag == "--mamba-ssm-cache-dtype":
        opts["mamba_ssm_cache_dtype"] = str(value)
    elif flag == "--mamba-cache-mode":
        opts["mamba_cache_mode"] = str(value)
    elif flag == "--limit-mm-per-prompt":
        opts["limit_mm_per_prompt"] = _mm_limits(flag, value)
    elif flag == "--language-model-only":
        opts["language_model_only"] = value is not False
    elif flag == "--mm-processor-kwargs":
        cfg = _json_object(flag, value)
        _mm_sizes(flag, cfg)
        opts["mm_processor_kwargs"] = json.dumps(cfg, sort_keys=True)
        if other := sorted(k for k in cfg if k not in MM_SIZE_KWARGS):
            _unmodelled(opts, f"{flag} {', '.join(other)} (the multimodal processor's other arguments, which may "
                              "size the encoder's profiling input)")
    elif flag == "--skip-mm-profiling":
        opts["skip_mm_profiling"] = bool(value)
    elif flag == "--mm-encoder-tp-mode":
        opts["mm_encoder_tp_mode"] = _choice(flag, value, ("weights", "data"))
    elif flag in ("--hf-overrides", "--rope-scaling"):
        _apply_hf_overrides(flag, value, opts)
    elif flag == "--async-scheduling":  # BooleanOptionalAction: --no-async-scheduling gives False
        opts["async_scheduling"] = bool(value)
    elif flag in _LORA_FLAGS:
        _apply_lora(flag, value, opts)
    elif flag in ("--speculative-config", "-sc"):
        cfg = _json_object(flag, value)
        if cfg.get("num_speculative_tokens") is not None:
            opts["num_speculative_tokens"] = _speculative_count(flag, cfg["num_speculative_tokens"])
        if cfg.get("method") is not None:
            opts["speculative_method"] = str(cfg["method"])
        if cfg.get("disable_padded_drafter_batch") is not None:
            opts["disable_padded_drafter_batch"] = cfg["disable_padded_drafter_batch"] is True
        if (drafter := _separate_drafter(cfg)) is not None:
            if _eagle_head(cfg) and config_known(str(cfg["model"])):
                opts["speculative_model"] = str(cfg["model"])  # counted in drafter.py
            else:
                _unmodelled(opts, f"{flag} {drafter} (the drafter model's weights and KV cache)")
    elif flag in _UNMODELLED:
        if flag in ("--task", "--runner", "--convert") and _pooling(value) is not None:
            opts["pooling_runner"] = True  # runner_type "pooling": async scheduling off by default
        if flag in _JSON_FLAGS:
            _json_object(flag, value)
        if (what := _UNMODELLED[flag](value)) is not None:
            typed = "" if isinstance(value, bool) or flag in _JSON_FLAGS else \
                " " + (" ".join(value) if isinstance(value, list) else str(value))
            _unmodelled(opts, f"{flag}{typed} ({what})")


# LoRAConfig's flags (engine/arg_utils.py; the adapter slots they size: lora.py). --max-lora-rank: config/lora.py
# MaxLoRARanks (0.11+; 1 added there) and LoRAConfig.__post_init__'s possible_max_ranks before (0.6.5, 0.8.2).
_LORA_FLAGS = ("--enable-lora", "--max-loras", "--max-lora-rank", "--lora-dtype", "--fully-sharded-loras",
               "--enable-lora-bias")
LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)


def _apply_lora(flag: str, value: Any, opts: dict[str, Any]) -> None:
    if flag == "--enable-lora":
        opts["enable_lora"] = bool(value)
    elif flag == "--max-loras":
        opts["max_loras"] = _int(flag, value)
    elif flag == "--max-lora-rank":
        rank = _int(flag, value)
        if rank not in LORA_RANKS:
            raise SettingsError(f"{PROG}: error: argument {flag}: max_lora_rank ({rank}) must be one of "
                                f"{LORA_RANKS}")
        opts["max_lora_rank"] = rank
    elif flag == "--lora-dtype":
        opts["lora_dtype"] = _choice(flag, value, ("auto", "float16", "bfloat16", "float32"))
    elif flag == "--fully-sharded-loras":
        opts["fully_sharded_loras"] = bool(value)
    else:
        opts["enable_lora_bias"] = bool(value)


def _apply_attention_config(flag: str, value: Any, opts: dict[str, Any]) -> None:
    """--attention-config '{...}' (config/attention.py AttentionConfig, built from the JSON object): its backend (the
    --attention-backend it stands for; the flag given beside it wins), indexer_kv_dtype and the older
    use_fp4_indexer_cache; its other fields are not read."""
    cfg = _json_object(flag, value)
    if cfg.get("backend") and "attention_backend" not in opts:
        opts["attention_backend"] = str(cfg["backend"]).upper()
    if "indexer_kv_dtype" in cfg:
        opts["indexer_kv_dtype"] = str(cfg["indexer_kv_dtype"])
    if cfg.get("use_fp4_indexer_cache") is not None:
        opts["use_fp4_indexer_cache"] = bool(cfg["use_fp4_indexer_cache"])


def _unmodelled(opts: dict[str, Any], text: str) -> None:
    opts["unmodelled"] = [*opts.get("unmodelled", ()), text]


def _json_object(flag: str, value: Any) -> dict[str, Any]:
    """A JSON-object option (engine/arg_utils.py: json.loads, then the config class built from the dict): a
    value that is no JSON, or JSON that is no object, is vLLM's argument error, not an option to drop."""
    try:
        cfg = json.loads(value) if isinstance(value, str) else value
    except ValueError:
        raise OomkitError(f"{PROG}: error: argument {flag}: invalid loads value: {str(value)[:40]!r}") from None
    if not isinstance(cfg, dict):
        raise SettingsError(f"{PROG}: error: argument {flag}: expected a JSON object, got {str(value)[:40]!r}")
    return cfg


def _separate_drafter(cfg: dict[str, Any]) -> str | None:
    """The draft model a --speculative-config loads besides the target (config/speculative.py: `model` with a
    method of draft_model, eagle, eagle3, medusa, mlp_speculator, or none given), as `method=model`; None when the
    drafter is the checkpoint's own MTP layers (a method naming mtp, or no model: counted in weights.py) or a
    proposer without weights (ngram, suffix)."""
    model, method = cfg.get("model"), str(cfg.get("method") or "")
    if not model or "mtp" in method.lower() or method in ("ngram", "ngram_gpu", "suffix"):
        return None
    return f"{method or 'model'}={model}"


def _eagle_head(cfg: dict[str, Any]) -> bool:
    """An EAGLE / EAGLE-3 head (method given, or inferred from the model's name as config/speculative.py does)."""
    method = str(cfg.get("method") or "")
    name = str(cfg.get("model") or "").lower()
    return method in ("eagle", "eagle3") or (not method and "eagle" in name)


def _pooling(value: Any) -> str | None:
    return "a pooling model: no generation, its own cache" if str(value) in (
        "embed", "embedding", "classify", "score", "reward", "pooling") else None


def _above(least: int, what: str):
    def check(value: Any) -> str | None:
        try:
            return what if int(value) > least else None
        except (TypeError, ValueError):
            raise OomkitError(f"{PROG}: error: invalid int value: {value!r}") from None
    return check


def _always(what: str):
    return lambda value: what if value is not False else None


# Flags vLLM reads that change memory in a way oomkit does not count (the estimate says so, unmodelled_note): a
# separate draft model (0.6-0.9's
# --speculative-model; config/speculative.py), KV connectors and offloading (distributed/kv_transfer, v1/kv_offload),
# pooling runners (config/pooler.py), the multimodal processor's limits that size the encoder's dummy input beyond the
# Qwen-VL sizes encoder.py reads (mm_processor_kwargs num_crops ...), EPLB's redundant experts (distributed/eplb),
# context parallelism (decode/prefill_context_parallel_size: the KV cache split over ranks), sliding windows turned
# off, per-layer KV dtypes, the weight offloader (model_executor/offloader), and loading the language model or the
# encoder alone.
_UNMODELLED = {
    "--speculative-model": _always("the draft model's weights and KV cache"),
    "--spec-model": _always("the draft model's weights and KV cache"),
    "--kv-transfer-config": _always("the KV connector's buffers"),
    "--kv-offloading-size": _always("the offloaded KV blocks"),
    "--task": _pooling, "--runner": _pooling, "--convert": _pooling,
    "--enable-eplb": _always("EPLB's redundant experts"),
    "--num-redundant-experts": _above(0, "redundant experts' weights"),
    "--eplb-config": _always("EPLB's redundant experts"),
    "--decode-context-parallel-size": _above(1, "the KV cache split over decode context-parallel ranks"),
    "-dcp": _above(1, "the KV cache split over decode context-parallel ranks"),
    "--prefill-context-parallel-size": _above(1, "the KV cache split over prefill context-parallel ranks"),
    "-pcp": _above(1, "the KV cache split over prefill context-parallel ranks"),
    "--disable-sliding-window": _always("sliding-window layers caching the whole context"),
    "--kv-cache-dtype-skip-layers": _always("layers keeping a KV cache in the model dtype"),
    "--cpu-offload-params": _always("weights moved to the host by the offloader"),
    "--offload-backend": _always("weights moved to the host by the offloader"),
    "--offload-group-size": _always("weights moved to the host by the offloader"),
    "--offload-num-in-group": _always("weights moved to the host by the offloader"),
    "--offload-params": _always("weights moved to the host by the offloader"),
    "--mm-encoder-only": _always("only the multimodal encoder loaded"),
}
_JSON_FLAGS = ("--kv-transfer-config", "--eplb-config")


def _apply_hf_overrides(flag: str, value: Any, opts: dict[str, Any]) -> None:
    """--hf-overrides: a JSON object merged into the model's config (engine/arg_utils.py: json.loads, then
    ModelConfig.hf_overrides); --rope-scaling (up to 0.9) is its {"rope_scaling": ...}. Several add up."""
    try:
        cfg = json.loads(value) if isinstance(value, str) else value
    except ValueError:
        raise OomkitError(f"{PROG}: error: argument {flag}: invalid loads value: {value!r}") from None
    if not isinstance(cfg, dict):
        raise OomkitError(f"{PROG}: error: argument {flag}: expected a JSON object, got {value!r}")
    if flag == "--rope-scaling":
        cfg = {"rope_scaling": cfg}
    merged = {**json.loads(opts.get("hf_overrides") or "{}"), **cfg}
    opts["hf_overrides"] = json.dumps(merged, sort_keys=True)


# the modalities vLLM's multimodal classes name (image, video, audio; kimi_k25's vision_chunk): every one of them 0
LANGUAGE_MODEL_ONLY_MODALITIES = ("audio", "image", "video", "vision_chunk")


def _mm_limits(flag: str, value: Any) -> tuple[tuple[str, int], ...]:
    """--limit-mm-per-prompt's JSON: a count per modality, or {"count": N, ...} dummy options (0.11+); the older
    image=2,video=1 spelling as well (engine/arg_utils.py nullable_kvs, up to 0.9)."""
    try:
        cfg = json.loads(value) if isinstance(value, str) else value
    except ValueError:
        pairs = [p.partition("=") for p in str(value).split(",") if p.strip()]
        if not pairs or any(not eq or not n.strip().isdigit() for _, eq, n in pairs):
            raise OomkitError(f"{PROG}: error: argument {flag}: invalid loads value: {value!r}") from None
        cfg = {k.strip(): int(n) for k, _, n in pairs}
    if not isinstance(cfg, dict):
        raise SettingsError(f"{PROG}: error: argument {flag}: expected a JSON object, got {str(value)[:40]!r}")
    out = []
    for k, v in cfg.items():
        n = v.get("count", 999) if isinstance(v, dict) else v
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise SettingsError(f"{PROG}: error: argument {flag}: the limit for {k!r} must be a count, got {n!r}")
        out.append((str(k), n))
    return tuple(sorted(out))


def _mm_sizes(flag: str, cfg: dict[str, Any]) -> None:
    """The pixel counts --mm-processor-kwargs gives (max_pixels, min_pixels, size's edges) must be positive
    integers: anything else fails in the HF image processor's smart_resize when vLLM builds its dummy image."""
    size = cfg.get("size", {})
    if not isinstance(size, dict):
        raise SettingsError(f"{PROG}: error: argument {flag}: size must be a JSON object, got {json.dumps(size)[:40]}")
    values = {k: cfg[k] for k in ("max_pixels", "min_pixels") if k in cfg}
    values.update({f"size.{k}": v for k, v in size.items() if k in ("longest_edge", "shortest_edge")})
    for k, n in values.items():
        if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
            raise SettingsError(f"{PROG}: error: argument {flag}: {k} must be a positive integer, got "
                                f"{json.dumps(n)[:40]}")


def _speculative_count(flag: str, n: Any) -> int:
    """num_speculative_tokens as vLLM's SpeculativeConfig (pydantic, lax mode) takes it: an integer, a float
    with no fraction, or a string of one; anything else is vLLM's validation error."""
    if isinstance(n, bool) or not isinstance(n, (int, float, str)):
        raise SettingsError(f"{PROG}: error: argument {flag}: num_speculative_tokens must be an integer, got "
                            f"{json.dumps(n)[:40]}")
    try:
        value = float(n) if isinstance(n, float) else int(str(n).strip())
    except ValueError:
        raise SettingsError(f"{PROG}: error: argument {flag}: num_speculative_tokens must be an integer, got "
                            f"{json.dumps(n)[:40]}") from None
    if isinstance(value, float):
        if not value.is_integer():
            raise SettingsError(f"{PROG}: error: argument {flag}: num_speculative_tokens must be an integer, got {n}")
        value = int(value)
    return value


def flag_takes_value(name: str, following: str | None) -> bool:
    """Whether `name` consumes the next argument (for splitting a mixed oomkit + vLLM option list)."""
    try:
        flag, kind, negated = _lookup(name.partition("=")[0])
    except OomkitError:  # an ambiguous abbreviation: vLLM's parser reports it
        return False
    if kind in ("value", "list"):
        return True
    if kind == "optional" and not negated:
        return following is not None and following.lower() in _BOOL_WORDS
    return False


# ---------------------------------------------------------------------------------------------------------
# The command line as typed: VllmSettings -> `vllm serve MODEL` with the flags that differ from the defaults
# (long spellings, which every release reads), the VLLM_* switches as leading assignments. Not on the command
# line: engine_version (which release runs) and usage_context ("llm" is the Python LLM class, not a command).


def _speculative(value: int) -> str:
    return json.dumps({"num_speculative_tokens": value}, separators=(",", ":"))


def _edit_speculative(text: str, value: int) -> str:
    """The user's --speculative-config JSON with only num_speculative_tokens changed (its method, model ... kept)."""
    try:
        cfg = json.loads(text)
    except ValueError:
        return _speculative(value)
    if not isinstance(cfg, dict):
        return _speculative(value)
    return json.dumps({**cfg, "num_speculative_tokens": value}, separators=(",", ":"))


def _max_model_len(value: int) -> str:
    return "auto" if value == -1 else str(value)


OPTIONS = (
    *(Opt(fld, var, flag_bool, env=True) for var, fld in _ENV_SWITCHES),
    Opt("pp_layer_partition", "VLLM_PP_LAYER_PARTITION", lambda v: v or None, env=True),
    Opt("max_model_len", "--max-model-len", _max_model_len),
    Opt("gpu_memory_utilization", "--gpu-memory-utilization"),
    Opt("tensor_parallel_size", "--tensor-parallel-size", aliases=("-tp",)),
    Opt("pipeline_parallel_size", "--pipeline-parallel-size", aliases=("-pp",)),
    Opt("data_parallel_size", "--data-parallel-size", aliases=("-dp",)),
    Opt("nnodes", "--nnodes"),
    Opt("distributed_executor_backend", "--distributed-executor-backend"),
    Opt("enable_expert_parallel", "--enable-expert-parallel", switch=("--enable-expert-parallel", None),
        aliases=("-ep", "--no-enable-expert-parallel")),
    Opt("dtype", "--dtype"),
    Opt("kv_cache_dtype", "--kv-cache-dtype"),
    Opt("block_size", "--block-size"),
    Opt("max_num_seqs", "--max-num-seqs"),
    Opt("max_num_batched_tokens", "--max-num-batched-tokens"),
    Opt("enable_chunked_prefill", "--enable-chunked-prefill",
        switch=("--enable-chunked-prefill", "--no-enable-chunked-prefill"),
        renamed=("--enable-chunked-prefill=false",)),  # the --no- form's stand-in before 0.8.5 (_NEGATED_FROM)
    Opt("enable_prefix_caching", "--enable-prefix-caching",
        switch=("--enable-prefix-caching", "--no-enable-prefix-caching")),
    Opt("enforce_eager", "--enforce-eager", switch=("--enforce-eager", None), aliases=("--no-enforce-eager",)),
    Opt("cpu_offload_gb", "--cpu-offload-gb"),
    Opt("swap_space", "--swap-space"),
    Opt("kv_cache_memory_bytes", "--kv-cache-memory-bytes", aliases=("--kv-cache-memory",)),
    Opt("num_gpu_blocks_override", "--num-gpu-blocks-override"),
    Opt("quantization", "--quantization", aliases=("-q",)),
    Opt("max_cudagraph_capture_size", "--max-cudagraph-capture-size"),
    Opt("disable_hybrid_kv_cache_manager", "--disable-hybrid-kv-cache-manager",
        switch=("--disable-hybrid-kv-cache-manager", None), aliases=("--no-disable-hybrid-kv-cache-manager",)),
    Opt("disable_custom_all_reduce", "--disable-custom-all-reduce", switch=("--disable-custom-all-reduce", None),
        aliases=("--no-disable-custom-all-reduce",)),
    Opt("attention_backend", "--attention-backend", env_aliases=("VLLM_ATTENTION_BACKEND",)),
    Opt("moe_backend", "--moe-backend"),
    Opt("mamba_cache_dtype", "--mamba-cache-dtype"),
    Opt("mamba_ssm_cache_dtype", "--mamba-ssm-cache-dtype"),
    Opt("mamba_cache_mode", "--mamba-cache-mode"),
    Opt("limit_mm_per_prompt", "--limit-mm-per-prompt", lambda v: json.dumps(dict(v), separators=(",", ":"))),
    Opt("skip_mm_profiling", "--skip-mm-profiling", switch=("--skip-mm-profiling", None),
        aliases=("--no-skip-mm-profiling",)),
    Opt("mm_encoder_tp_mode", "--mm-encoder-tp-mode"),
    Opt("hf_overrides", "--hf-overrides", aliases=("--rope-scaling",)),
    Opt("num_speculative_tokens", "--speculative-config", _speculative, aliases=("-sc",), edit=_edit_speculative),
    Opt("async_scheduling", "--async-scheduling", switch=("--async-scheduling", "--no-async-scheduling")),
    Opt("enable_lora", "--enable-lora", switch=("--enable-lora", None), aliases=("--no-enable-lora",)),
    Opt("max_loras", "--max-loras"),
    Opt("max_lora_rank", "--max-lora-rank"),
    Opt("lora_dtype", "--lora-dtype"),
    Opt("fully_sharded_loras", "--fully-sharded-loras", switch=("--fully-sharded-loras", None),
        aliases=("--no-fully-sharded-loras",)),
)
_DEFAULTS = defaults(VllmSettings)

_TABLE_FILE = "vllm_flags.json"
# The --no- spellings the flag data does not list (it names each flag once): a switch has one only where its action
# is argparse.BooleanOptionalAction. engine/arg_utils.py: --enable-chunked-prefill is StoreBoolean (nargs="?",
# `--enable-chunked-prefill=false`) up to 0.8.4, get_kwargs' BooleanOptionalAction from 0.8.5; --enable-prefix-caching
# store_true up to 0.6.4.post1 (off by default there, with no spelling for off), BooleanOptionalAction in 0.6.6.post1
# (0.6.5 not read: taken as the first).
_NEGATED_FROM = {"--no-enable-chunked-prefill": (0, 8, 5, 0), "--no-enable-prefix-caching": (0, 6, 5, 0)}


@lru_cache(maxsize=16)
def options_for(release: str) -> tuple[Opt, ...]:
    """OPTIONS as the parser of `release` reads them (command.for_release, engines/data/vllm_flags.json): a flag
    it lacks in its later spelling, or refused (a command that needs it cannot be typed for that release)."""
    version = release_key(str(release))

    def why(flag: str) -> str:
        if flag in _NEGATED_FROM:
            first = ".".join(map(str, _NEGATED_FROM[flag][:3]))
            return f"vLLM {release} has no {flag} (a store_true switch there, with no off spelling, before {first})"
        return f"vLLM {release} has no {flag} ({why_not(_TABLE_FILE, flag, version)})"

    def accepts(flag: str) -> bool | None:
        if flag in _NEGATED_FROM:
            return version >= _NEGATED_FROM[flag]
        return known_in(_TABLE_FILE, flag, version)

    return for_release(OPTIONS, accepts, why)


def _resolve(name: str) -> str:
    flag, kind, negated = _lookup(name)
    return "--no-" + flag[2:] if negated and flag.startswith("--") else flag


def _program_len(argv: list[str]) -> int:
    if (module := python_module(argv)) is not None:  # python [-u] -m vllm.entrypoints.openai.api_server
        return module[1]
    return 2 if len(argv) > 1 and argv[1] == "serve" else 1


SYNTAX = Syntax(_program_len, flag_takes_value, _resolve)


def server_program(release: str, model: str) -> list[str]:
    """The program and model as the release runs them: `vllm serve MODEL` from 0.5.2, else the api_server module
    (config.SERVE_CLI_FIRST)."""
    if parse_version(release) < SERVE_CLI_FIRST:
        return ["python", "-m", "vllm.entrypoints.openai.api_server", "--model", model]
    return ["vllm", "serve", model]


def format_command(model: str, settings: VllmSettings, quant: str | None = None) -> list[str]:
    """`[VLLM_*=1 ...] vllm serve MODEL [flags]` (`python -m vllm.entrypoints.openai.api_server --model MODEL` before
    0.5.2: server_program): only what differs from vLLM's defaults. A weight format (quant) joins the model as
    oomkit's `:QUANT` suffix; vLLM itself is given the repo of that format."""
    env, flags = format_flags(options_for(settings.engine_version), values_of(settings), _DEFAULTS)
    return [*env, *server_program(settings.engine_version, f"{model}:{quant}" if quant else model), *flags]


def rewrite_command(argv: list[str], old: VllmSettings, new: VllmSettings) -> list[str]:
    """The user's vLLM command with only the flags (or VLLM_* assignments) of the changed fields changed."""
    return rewrite(argv, values_of(old), values_of(new), options_for(new.engine_version), SYNTAX)
