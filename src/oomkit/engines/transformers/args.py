"""The options form: `oomkit estimate MODEL --engine transformers [these flags]` (transformers has no command line
of its own; each flag is a `from_pretrained` / `generate` argument by its own name)."""

from __future__ import annotations

from typing import Any

from ...errors import OomkitError
from ...flags import flag_value
from ...units import parse_size
from .settings import TransformersSettings

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
    "--attn-implementation": ("attn_implementation", "str"),
    "--prefill-chunk-size": ("prefill_chunk_size", "int"),
    "--device-map": ("device_map", "str"),
    "--max-memory": ("max_memory", "memory"),
    "--load-in-4bit": ("load_in_4bit", "bool"),
    "--load-in-8bit": ("load_in_8bit", "bool"),
    "--bnb-4bit-quant-type": ("bnb_4bit_quant_type", "str"),
    "--bnb-4bit-use-double-quant": ("bnb_4bit_use_double_quant", "bool"),
    "--expandable-segments": ("expandable_segments", "bool"),
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
    return None, None, TransformersSettings(**opts)


def flag_takes_value(name: str, following: str | None) -> bool:
    name = _norm_flag(name.partition("=")[0])
    spec = FLAGS.get(name)
    return spec is not None and spec[1] != "bool"
