"""The options form: `oomkit estimate MODEL --engine transformers [these flags]` (transformers has no command line
of its own; each flag is a `from_pretrained` / `generate` argument by its own name)."""

from __future__ import annotations

import json
from typing import Any

from ...errors import OomkitError
from ...flags import check_settings, flag_value
from ...units import GiB, MiB, parse_size
from ..command import Opt, Syntax, defaults, format_flags, rewrite, values_of
from .settings import TransformersSettings, parse_version

# flag -> (field, kind); kind: "int", "str", "bool", "dtype", "memory"
FLAGS: dict[str, tuple[str, str]] = {
    "--max-new-tokens": ("max_new_tokens", "int"),
    "--max-length": ("max_length", "int"),
    "--prompt-tokens": ("prompt_tokens", "int"),
    "--batch-size": ("batch_size", "int"),
    "--num-beams": ("num_beams", "int"),
    "--num-return-sequences": ("num_return_sequences", "int"),
    "--dtype": ("torch_dtype", "str"),
    "--torch-dtype": ("torch_dtype", "str"),
    "--cache-implementation": ("cache_implementation", "str"),
    "--max-cache-len": ("max_cache_len", "int"),
    "--cache-backend": ("cache_backend", "str"),
    "--cache-nbits": ("cache_nbits", "int"),
    "--q-group-size": ("q_group_size", "int"),
    "--residual-length": ("residual_length", "int"),
    "--logits-to-keep": ("logits_to_keep", "int"),
    "--kv-type": ("kv_cache_dtype", "str"),  # as format_command writes the cache dtype (OPTIONS below)
    "--attn-implementation": ("attn_implementation", "str"),
    "--prefill-chunk-size": ("prefill_chunk_size", "int"),
    "--device-map": ("device_map", "str"),
    "--max-memory": ("max_memory", "memory"),
    "--load-in-4bit": ("load_in_4bit", "bool"),
    "--load-in-8bit": ("load_in_8bit", "bool"),
    "--bnb-4bit-quant-type": ("bnb_4bit_quant_type", "str"),
    "--bnb-4bit-use-double-quant": ("bnb_4bit_use_double_quant", "bool"),
    "--expandable-segments": ("expandable_segments", "bool"),
    "--exllama-version": ("exllama_version", "int"),
    "--stored-tied-head": ("stored_tied_head", "bool"),
}


def _norm_flag(name: str) -> str:
    return name.replace("_", "-") if name.startswith("--") else name


def parse_max_memory(text: str) -> tuple[tuple[str, int], ...]:
    """"0=20GiB,1=20GiB,cpu=64GiB" (from_pretrained's max_memory dict) -> (("0", bytes), ...)."""
    out = []
    for part in (p.strip() for p in str(text).split(",") if p.strip()):
        key, eq, value = part.partition("=")
        if not eq:
            key, eq, value = part.partition(":")
        if not eq:
            raise OomkitError(f"--max-memory takes DEVICE=SIZE pairs (0=20GiB,cpu=64GiB), got {part!r}")
        key = key.strip().lower().removeprefix("cuda:")
        if key != "cpu" and not key.isdigit():
            raise OomkitError(f"--max-memory: device {key!r} is not a GPU index or 'cpu'")
        out.append((key, parse_size(value.strip())))
    return tuple(out)


def parse_args(argv: list[str], env: dict[str, str] | None = None) -> tuple[str | None, str | None,
                                                                             TransformersSettings]:
    opts: dict[str, Any] = {}
    i = 0
    while i < len(argv):
        arg = argv[i]
        name, eq, inline = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        name = _norm_flag(name)
        if name not in FLAGS:
            raise OomkitError(f"unknown transformers option {arg!r}; known: {', '.join(sorted(FLAGS))}")
        fld, kind = FLAGS[name]
        if kind == "bool":
            if eq:
                low = inline.lower()
                if low not in ("true", "false", "1", "0", "yes", "no"):
                    raise OomkitError(f"{name} takes true or false, got {inline!r}")
                opts[fld] = low in ("true", "1", "yes")
            else:
                opts[fld] = True
            i += 1
            continue
        value, i = flag_value(argv, i, inline if eq else None, f"{name} expects a value")
        if kind == "int":
            try:
                opts[fld] = int(value)
            except ValueError:
                raise OomkitError(f"{name} takes an integer, got {value!r}") from None
        elif kind == "memory":
            opts[fld] = parse_max_memory(value)
        else:
            opts[fld] = value
        i += 1
    return None, None, check_settings(TransformersSettings(**opts))


def flag_takes_value(name: str, following: str | None) -> bool:
    name = _norm_flag(name.partition("=")[0])
    spec = FLAGS.get(name)
    return spec is not None and spec[1] != "bool"


# ---------------------------------------------------------------------------------------------------------
# The options form as typed. transformers has no command line of its own, so its "command" is what follows
# `oomkit estimate` (or `oomkit plan`): `MODEL --engine transformers --max-length N ...`, the FLAGS above for the
# fields that differ from the defaults and the engine-neutral --kv-type for kv_cache_dtype. No program is put in
# front: the caller names the oomkit command. engine_version is not written (--engine-version belongs to
# oomkit's options, like --vram). `from_pretrained_snippet` gives the same settings as the Python a user runs.

OPTIONS = (
    Opt("max_length", "--max-length", aliases=("--ctx",)),
    Opt("max_new_tokens", "--max-new-tokens"),
    Opt("prompt_tokens", "--prompt-tokens"),
    Opt("batch_size", "--batch-size", aliases=("--parallel",)),
    Opt("num_beams", "--num-beams"),
    Opt("num_return_sequences", "--num-return-sequences"),
    Opt("torch_dtype", "--dtype", aliases=("--torch-dtype",)),
    Opt("cache_implementation", "--cache-implementation"),
    Opt("max_cache_len", "--max-cache-len"),
    Opt("cache_backend", "--cache-backend"),
    Opt("cache_nbits", "--cache-nbits"),
    Opt("q_group_size", "--q-group-size"),
    Opt("residual_length", "--residual-length"),
    Opt("kv_cache_dtype", "--kv-type"),
    Opt("logits_to_keep", "--logits-to-keep"),
    Opt("attn_implementation", "--attn-implementation"),
    Opt("prefill_chunk_size", "--prefill-chunk-size"),
    Opt("device_map", "--device-map"),
    Opt("max_memory", "--max-memory", lambda v: ",".join(f"{k}={_size(n)}" for k, n in v) or None),
    Opt("load_in_4bit", "--load-in-4bit", switch=("--load-in-4bit", None)),
    Opt("load_in_8bit", "--load-in-8bit", switch=("--load-in-8bit", None)),
    Opt("bnb_4bit_quant_type", "--bnb-4bit-quant-type"),
    Opt("bnb_4bit_use_double_quant", "--bnb-4bit-use-double-quant", switch=("--bnb-4bit-use-double-quant", None)),
    Opt("expandable_segments", "--expandable-segments", switch=("--expandable-segments", None)),
    Opt("exllama_version", "--exllama-version"),
    Opt("stored_tied_head", "--stored-tied-head", switch=("--stored-tied-head", None)),
)
_DEFAULTS = defaults(TransformersSettings)
# oomkit's own options of the options form that take a value (commands/_model_args.py OPTIONS), so that walking a
# user's options form does not read their values as flags
_OOMKIT_VALUED = {"--engine", "--ctx", "--quant", "--kv-type", "--parallel", "--vram", "--gpu", "--engine-version",
                  "--kv-memory", "--env"}


def _size(n: int) -> str:
    for unit, size in (("GiB", GiB), ("MiB", MiB)):
        if n and n % size == 0:
            return f"{n // size}{unit}"
    return str(n)


def _takes_value(name: str, following: str | None) -> bool:
    return name in _OOMKIT_VALUED or flag_takes_value(name, following)


SYNTAX = Syntax(lambda argv: 0, _takes_value, _norm_flag)


def format_command(model: str, settings: TransformersSettings, quant: str | None = None) -> list[str]:
    """The options form `MODEL --engine transformers [flags]` (what follows `oomkit estimate`): only the fields
    that differ from the defaults; a weight format (quant) as the model's `:QUANT` suffix."""
    _, flags = format_flags(OPTIONS, values_of(settings), _DEFAULTS)
    return [f"{model}:{quant}" if quant else model, "--engine", "transformers", *flags]


def rewrite_command(argv: list[str], old: TransformersSettings, new: TransformersSettings) -> list[str]:
    """The user's options form with only the flags of the changed fields changed (oomkit's options kept)."""
    return rewrite(argv, values_of(old), values_of(new), OPTIONS, SYNTAX)


def _py(value: Any) -> str:
    """A Python literal as written by hand: strings in double quotes."""
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_py(k)}: {_py(v)}" for k, v in value.items()) + "}"
    return repr(value)


def from_pretrained_snippet(model: str, settings: TransformersSettings) -> str:
    """The Python that loads `model` and generates with `settings`: from_pretrained's arguments (dtype,
    device_map, max_memory, attn_implementation, a BitsAndBytesConfig) and generate's (max_new_tokens, beams,
    the cache)."""
    s = settings
    load: list[str] = [_py(model)]
    if s.torch_dtype is not None:
        # from_pretrained takes `dtype` from 4.56 (`torch_dtype` before, still read)
        key = "dtype" if parse_version(s.engine_version) >= (4, 56, 0) else "torch_dtype"
        load.append(f"{key}={_py(s.torch_dtype)}")
    if s.device_map is not None:
        load.append(f"device_map={_py(s.device_map)}")
    if s.max_memory:
        load.append(f"max_memory={_py({k if k == 'cpu' else int(k): _size(n) for k, n in s.max_memory})}")
    if s.attn_implementation != _DEFAULTS["attn_implementation"]:
        load.append(f"attn_implementation={_py(s.attn_implementation)}")
    imports = ["AutoModelForCausalLM"]
    if s.load_in_4bit or s.load_in_8bit:
        imports.append("BitsAndBytesConfig")
        bnb = ["load_in_4bit=True"] if s.load_in_4bit else ["load_in_8bit=True"]
        if s.load_in_4bit:
            bnb.append(f"bnb_4bit_quant_type={_py(s.bnb_4bit_quant_type)}")
            if s.bnb_4bit_use_double_quant:
                bnb.append("bnb_4bit_use_double_quant=True")
        load.append(f"quantization_config=BitsAndBytesConfig({', '.join(bnb)})")
    elif s.exllama_version is not None:
        imports.append("GPTQConfig")
        gptq = "use_exllama=False" if s.exllama_version == 0 else (
            f"exllama_config={_py({'version': s.exllama_version})}")
        load.append(f"quantization_config=GPTQConfig(bits=4, {gptq})")

    gen: list[str] = ["input_ids"]
    # settings.py _resolve_lengths: with a prompt and a max_length, the new tokens are what is left
    new = s.max_length - s.prompt_tokens if s.prompt_tokens is not None and s.max_length is not None else (
        s.max_new_tokens)
    gen.append(f"max_new_tokens={new}")
    for fld in ("num_beams", "num_return_sequences", "max_cache_len", "prefill_chunk_size", "logits_to_keep"):
        value = getattr(s, fld)
        if value != _DEFAULTS[fld]:
            gen.append(f"{fld}={_py(value)}")
    impl, backend, nbits = s.cache_implementation, s.cache_backend, s.cache_nbits
    kvd = (s.kv_cache_dtype or "auto").lower()
    if kvd in ("fp8", "int4", "int2"):  # settings.py _resolve_cache: --kv-type as a quantized cache
        impl, backend, nbits = "quantized", ("fp8" if kvd == "fp8" else "quanto"), (8 if kvd == "fp8" else int(kvd[3:]))
    if impl != _DEFAULTS["cache_implementation"]:
        gen.append(f"cache_implementation={_py(impl)}")
    if impl == "quantized":
        cfg = {"backend": backend, "nbits": nbits or 4}
        if s.q_group_size != _DEFAULTS["q_group_size"]:
            cfg["q_group_size"] = s.q_group_size
        if s.residual_length != _DEFAULTS["residual_length"]:
            cfg["residual_length"] = s.residual_length
        gen.append(f"cache_config={_py(cfg)}")

    if s.prompt_tokens is not None:
        prompt = f"{s.prompt_tokens} tokens"
    elif s.max_length is not None:
        prompt = f"{s.max_length - s.max_new_tokens} tokens (max_length {s.max_length} - max_new_tokens)"
    else:
        prompt = "the trained context - max_new_tokens"
    lines = []
    if s.expandable_segments:
        lines += ["import os", "", 'os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"  # before torch',
                  ""]
    lines += [f"from transformers import {', '.join(imports)}", "",
              "model = AutoModelForCausalLM.from_pretrained(", *(f"    {a}," for a in load), ")",
              f"# input_ids: {s.batch_size} x {prompt}",
              "output = model.generate(", *(f"    {a}," for a in gen), ")"]
    return "\n".join(lines) + "\n"
