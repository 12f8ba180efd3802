"""llama.cpp's command-line flags -> LlamaCppSettings.

Read with llama.cpp's own flag table (engines/data/llamacpp_flags.json, generated from common/arg.cpp of
llama.cpp@0c1e57098: every common_arg's flags and whether its handler takes a value): every flag llama.cpp
knows is accepted, the ones that change memory are applied, and an unknown flag is an error, as llama.cpp
itself would say.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from ...errors import OomkitError, SettingsError
from ...flags import check_settings, flag_value, stof, stoi
from ...model import catalog, names
from ...model.resolve import split_quant
from ...quant.ggml import KV_CACHE_TYPES
from ..command import (
    LLAMA_APP_COMMANDS,
    Opt,
    Syntax,
    clip_repr,
    clip_word,
    defaults,
    format_flags,
    join_command,
    number,
    program_name,
    python_module,
    rewrite,
    values_of,
)
from .knobs import gguf_repo
from .settings import (
    DEFAULT_GGUF_TYPE,
    ERAS,
    SPEC_TYPE_OLD_NAMES,
    SPEC_TYPES,
    LlamaCppSettings,
    build_number,
    flash_attn_mode,
    misspelt_cache_type,
)

_FLAGS_JSON = Path(__file__).parent.parent / "data" / "llamacpp_flags.json"

# Flags older builds had that the current table lacks (still seen in scripts and issues).
_LEGACY_FLAGS = {"--no-mmap": False, "--mlock": False, "--mmap": False, "-fa": True, "--flash-attn": True,
                 "-dkvc": False, "--dump-kv-cache": False, "--no-kv-offload": False, "-nkvo": False,
                 "--defrag-thold": True, "-dt": True, "--log-disable": False,
                 # the draft context's size until PR #22838 (b9109; settings.check_build refuses it from there)
                 "-cd": True, "--ctx-size-draft": True, "--spec-draft-ctx-size": True,
                 # DirectIO loading (common/arg.cpp `{"-dio", "--direct-io"}, {"-ndio", "--no-direct-io"}`, env
                 # LLAMA_ARG_DIO), which --load-mode superseded: how the file is read, not what the devices hold
                 "-dio": False, "--direct-io": False, "-ndio": False, "--no-direct-io": False}


@lru_cache(maxsize=1)
def flags_table() -> dict[str, bool]:
    flags = dict(json.loads(_FLAGS_JSON.read_text(encoding="utf-8"))["flags"])
    for k, v in _LEGACY_FLAGS.items():
        flags.setdefault(k, v)
    return flags


def canonical_flag(arg: str) -> str:
    """common/arg.cpp common_params_parse_ex: a `--` argument has its underscores read as dashes (`--n_predict` is
    --n-predict; since gguf's common.cpp of 2023-08, 6381d4e11), the whole argument looked up as typed."""
    return arg.replace("_", "-") if arg.startswith("--") else arg


def _int(flag: str, value: str) -> int:
    """common/arg.cpp: an int option's value goes through std::stoi (flags.stoi: what it accepts, refused where
    it would read less than was typed)."""
    return stoi(flag, value)


MAX_SPLIT_DEVICES = 16  # llama.h LLAMA_MAX_DEVICES / ggml-cuda GGML_CUDA_MAX_DEVICES: what -ts may name

_BOOL_VALUES = {"on": "on", "off": "off", "auto": "auto", "1": "on", "0": "off", "true": "on", "false": "off",
                "enabled": "on", "disabled": "off"}


def _text(flag: str, value: str) -> str:
    return value


def _cache_type(flag: str, value: str) -> str:
    """common/arg.cpp kv_cache_type_from_str (from PR #10806, b4317; common.cpp's of the same name before, from
    PR #4309, b1619): the value is compared with ggml_type_name(type) (b4317 on) or the lower-case names (before)
    exactly, so `Q8_0` is no cache type in any build: "Unsupported cache type: Q8_0" (b1619's "Invalid cache type").
    Nor is " q8_0" or "q8_0\\t": the value is not trimmed."""
    if misspelt_cache_type(value, padded=True):
        # a name no type has (a fork's turbo4) is refused with the cache's size (kv.py), after the model is found
        raise OomkitError(f'error while handling argument "{flag}": Unsupported cache type: {value} (llama.cpp '
                          f"matches ggml's type names exactly: {', '.join(KV_CACHE_TYPES)}; give {value.strip().lower()})")
    return value


_SPLIT_MODES = ("none", "layer", "row", "tensor")


def _split_mode(flag: str, value: str) -> str:
    """common/arg.cpp -sm / --split-mode: none, layer, row (and tensor in the builds that have
    LLAMA_SPLIT_MODE_TENSOR); anything else throws std::invalid_argument("invalid value"), which
    common_params_parse_ex prints as `error while handling argument "-sm": invalid value` and exits."""
    if value not in _SPLIT_MODES:
        raise OomkitError(f"{flag} {value}: llama.cpp takes none, layer, row or tensor (it stops: error while "
                          f'handling argument "{flag}": invalid value)')
    return value


_POOLINGS = ("none", "mean", "cls", "last", "rank")


def _pooling(flag: str, value: str) -> str:
    """common/arg.cpp --pooling {none,mean,cls,last,rank}; anything else throws std::invalid_argument("invalid
    value"), which common_params_parse_ex prints as `error while handling argument "--pooling": invalid value`."""
    if value not in _POOLINGS:
        raise OomkitError(f"{flag} {value}: llama.cpp takes none, mean, cls, last or rank (it stops: error while "
                          f'handling argument "{flag}": invalid value)')
    return value


def _by_flag(table: dict[tuple[str, ...], Any]) -> dict[str, Any]:
    return {flag: entry for flags, entry in table.items() for flag in flags}


# Flags that set one LlamaCppSettings field from their value, and switches that set a fixed one.
_VALUED = _by_flag({
    ("-c", "--ctx-size"): ("n_ctx", _int), ("-b", "--batch-size"): ("n_batch", _int),
    ("-ub", "--ubatch-size"): ("n_ubatch", _int), ("-np", "--parallel"): ("n_parallel", _int),
    ("-mg", "--main-gpu"): ("main_gpu", _int), ("-ncmoe", "--n-cpu-moe"): ("n_cpu_moe", _int),
    # the draft model's own expert placement (common/arg.cpp: into params.speculative.draft.tensor_buft_overrides)
    ("-ncmoed", "--n-cpu-moe-draft", "--spec-draft-n-cpu-moe", "--spec-draft-ncmoe"): ("n_cpu_moe_draft", _int),
    ("-ctk", "--cache-type-k"): ("cache_type_k", _cache_type), ("-ctv", "--cache-type-v"): ("cache_type_v", _cache_type),
    ("-sm", "--split-mode"): ("split_mode", _split_mode),
    ("--pooling",): ("pooling", _pooling),
    # the draft model (common/arg.cpp; the --spec-draft-* names of 2026 builds alias the older ones)
    ("-md", "--model-draft", "--spec-draft-model"): ("model_draft", _text),
    ("-ctkd", "--cache-type-k-draft", "--spec-draft-type-k"): ("cache_type_k_draft", _cache_type),
    ("-ctvd", "--cache-type-v-draft", "--spec-draft-type-v"): ("cache_type_v_draft", _cache_type),
    # the longest draft (common_params_speculative_draft.n_max); --draft-max / --draft / --draft-n before the
    # --spec-draft-* names (the newest builds refuse them, pointing at --spec-draft-n-max)
    ("--spec-draft-n-max", "--draft-max", "--draft", "--draft-n"): ("spec_draft_n_max", _int),
    ("-cd", "--ctx-size-draft", "--spec-draft-ctx-size"): ("n_ctx_draft", _int),
})
_SWITCHES = _by_flag({
    ("-kvu", "--kv-unified"): ("kv_unified", True), ("-no-kvu", "--no-kv-unified"): ("kv_unified", False),
    ("--swa-full",): ("swa_full", True), ("-nkvo", "--no-kv-offload"): ("no_kv_offload", True),
    ("-kvo", "--kv-offload"): ("no_kv_offload", False), ("-cmoe", "--cpu-moe"): ("cpu_moe", True),
    ("-cmoed", "--cpu-moe-draft", "--spec-draft-cpu-moe"): ("cpu_moe_draft", True),
    ("--no-mmap",): ("mmap", False), ("--embedding", "--embeddings"): ("embeddings", True),
    ("-nr", "--no-repack"): ("repack", False), ("--repack",): ("repack", True), ("--no-host",): ("no_host", True),
    ("--no-mmproj",): ("no_mmproj", True), ("--no-mmproj-offload",): ("mmproj_offload", False),
    ("--mmproj-offload",): ("mmproj_offload", True),
})


# Flags llama.cpp reads that change memory in a way oomkit does not count (the estimate says so, engines/base.py
# unmodelled_note): adapters loaded beside the model (common.cpp common_init_from_params: llama_adapter_lora_init,
# control vectors), metadata overrides (llama-model-loader.cpp: --override-kv replaces any GGUF key, the context
# length and expert counts included), the host-side prompt cache and context checkpoints of llama-server
# (tools/server: --cache-ram MiB, --ctx-checkpoints per slot), FFN weights kept on the CPU, and --no-op-offload,
# which keeps the ops of host-resident weights on the CPU (ggml-backend.cpp ggml_backend_sched op_offload) and so
# places compute buffers otherwise.
# Options that change no memory and that llama.cpp still reads as numbers before it starts: common/arg.cpp gives each
# an int handler (common_params_parse_ex calls it with std::stoi(value)) or reads it with std::stof / std::stoul in
# its own handler (at b7140, 62ede36c), so `-t x` or `--temp warm` stops llama-server ("error while handling
# argument") and is refused here as it would be, with what std::stoi / std::stof would have read
_STOI_ONLY = frozenset({
    "-t", "--threads", "-tb", "--threads-batch", "-n", "--predict", "--n-predict", "--keep", "--top-k",
    "--repeat-last-n", "--port", "-to", "--timeout", "--threads-http", "--cache-reuse", "-td", "--threads-draft",
    "-tbd", "--threads-batch-draft", "-ns", "--sequences", "--reasoning-budget",
})
_PLACEHOLDER = re.compile(r"^\s*(\$\w+|\$\{[^}]*\}|\$\(.*\)|`[^`]*`|\[[^\]]*\]|<[^>]*>|\{[^}]*\}|%\w+%)\s*$")
_STOF_ONLY = frozenset({
    "--temp", "--top-p", "--min-p", "--typical", "--repeat-penalty", "--presence-penalty", "--frequency-penalty",
})

_UNMODELLED = {
    "--lora": "LoRA adapter weights", "--lora-scaled": "LoRA adapter weights",
    "--control-vector": "control vector tensors", "--control-vector-scaled": "control vector tensors",
    "--override-kv": "GGUF metadata replaced",
    "-cram": "host memory for the prompt cache", "--cache-ram": "host memory for the prompt cache",
    "-ctxcp": "context checkpoints in host memory", "--ctx-checkpoints": "context checkpoints in host memory",
    "--swa-checkpoints": "context checkpoints in host memory",
    "--n-cpu-ffn": "FFN weights kept on the CPU",
    "--no-op-offload": "compute buffers placed otherwise (ops of host weights stay on the CPU)",
}


def _kv_override(value: str) -> None:
    """--override-kv KEY=TYPE:VALUE as common/common.cpp string_parse_kv_override reads it (llama.cpp@96ac5a23): a
    key under 128 bytes before the first '=', then int: / float: (atol / atof: any text), bool: true or false, or
    str: of at most 127 bytes; anything else and arg.cpp throws "Invalid type for KV override" (llama-server stops)."""
    key, sep, rest = value.partition("=")
    kind, colon, val = rest.partition(":")
    if not sep or len(key.encode()) >= 128:
        why = "malformed (KEY=TYPE:VALUE, a key under 128 bytes)"
    elif not colon or kind not in ("int", "float", "bool", "str"):
        why = "the type must be int, float, bool or str"
    elif kind == "bool" and val not in ("true", "false"):
        why = "a bool is true or false"
    elif kind == "str" and len(val.encode()) > 127:
        why = "a str value is at most 127 bytes"
    else:
        return
    raise SettingsError(f"--override-kv {clip_repr(value)}: {why}; llama.cpp stops (Invalid type for KV override)")


# ik_llama.cpp (ikawrakow/ik_llama.cpp), the fork whose llama-server many run MoE models with, takes flags mainline
# lacks: its flag table (engines/data/ik_llamacpp_flags.json, tools/build_ik_llamacpp_flags.py, read from
# common/common.cpp gpt_params_find_arg). oomkit sizes mainline llama.cpp's allocations; an ik_llama.cpp flag is
# read where it changes nothing oomkit models differently, said in the estimate's warnings, and refused otherwise.
_IK_FLAGS_JSON = Path(__file__).parent.parent / "data" / "ik_llamacpp_flags.json"
_IK = "ik_llama.cpp's"
# gpt_params_find_arg, each flag's branch: compute and loading options, the KV cache and weights as mainline sizes
# them. -fmoe (fused_moe_up_gate, PR #229; the default from PR #863, then -no-fmoe), -ger, -no-fug, -no-mmad: how
# the FFN ops are fused; -amb N (attn_max_batch: attention computed in chunks of N, without flash attention): the
# compute buffer; -ser N,M (min_experts, thresh_experts): experts skipped at run time; -gr / -no-gr (graph_reuse),
# -sas (scheduler_async), -smgs (split_mode_graph_scheduling), -cuda (cuda_params), -no-ooae: scheduling; -mqkv
# (merge_qkv), -muge (merge_up_gate_exps): Q, K, V (up, gate) made one tensor at load; -rtr (repack_tensors,
# use_mmap = false): weights repacked to row-interleaved types in host memory at load; -khad / -vhad
# (k/v_cache_hadamard): a Hadamard transform of the cache, of the same type and size; -thp, -vq: loading.
_IK_NOT_COUNTED = _by_flag({
    ("-fmoe", "--fused-moe", "-no-fmoe", "--no-fused-moe"): "fused MoE up/gate",
    ("-ger", "--grouped-expert-routing"): "grouped expert routing",
    ("-no-fug", "--no-fused-up-gate", "-no-mmad", "--no-fused-mul-multiadd"): "op fusion",
    ("-amb", "--attention-max-batch"): "attention computed in chunks: the compute buffer",
    ("-ser", "--smart-expert-reduction"): "experts skipped at run time",
    ("-gr", "--graph-reuse", "-no-gr", "--no-graph-reuse"): "compute graph reuse",
    ("-sas", "--scheduler-async", "-smgs", "--split-mode-graph-scheduling"): "graph scheduling",
    ("-cuda", "--cuda-params"): "CUDA kernel parameters",
    ("-no-ooae", "--no-offload-only-active-experts"): "expert upload to the GPU",
    ("-mqkv", "--merge-qkv", "-muge", "--merge-up-gate-experts"): "tensors merged at load",
    ("-rtr", "--run-time-repack"): "weights repacked in host memory at load, without mmap",
    ("-khad", "--k-cache-hadamard", "-vhad", "--v-cache-hadamard"): "Hadamard-transformed cache, same size",
    ("-thp", "--transparent-huge-pages", "-vq", "--validate-quants"): "loading",
})
# ggml.h of ik_llama.cpp: cache types mainline has not (common.cpp kv_cache_type_from_str: q6_0, q8_KV)
_IK_CACHE_TYPES = ("q6_0", "q8_KV")
# -sm graph / attn (llama.h LLAMA_SPLIT_MODE_GRAPH / _ATTN: tensor parallel over the GPUs, the cache split by heads)
_IK_SPLIT_MODES = ("graph", "attn")


@lru_cache(maxsize=1)
def ik_flags_table() -> dict[str, bool]:
    return dict(json.loads(_IK_FLAGS_JSON.read_text(encoding="utf-8"))["flags"])


def _ik_refusal(what: str) -> OomkitError:
    return OomkitError(f"{what}: oomkit sizes mainline llama.cpp's allocations, not ik_llama.cpp's")


def _ik_flag(name: str, value: str | None, opts: dict[str, Any]) -> None:
    """An ik_llama.cpp flag mainline lacks: read (its effect said, not counted), or refused in one line."""
    typed = name if value is None else f"{name} {value}"
    if name in ("-mla", "--mla-use"):
        # llama.cpp (ik) llama_kv_cache_init: with mla_attn > 0 an MLA model's cache is one latent tensor of
        # kv_lora_rank + n_rot per cell, as mainline's (PR #19067); -mla 1 adds a kv_lora_rank V^T cache without
        # flash attention, -mla 0 the decompressed per-head K and V. A model without MLA ignores it (mla_attn = 0).
        # Checked against flash attention once the whole command is read (_ik_mla_check).
        mla = _int(name, value or "")
        if mla not in (1, 2, 3):
            raise _ik_refusal(f"{typed} is {_IK} MLA mode "
                              + ("0, the decompressed per-head K and V cache" if mla == 0 else "unknown to it"))
        opts["_ik_mla"] = (typed, mla)
        note = f"{typed} ({_IK} MLA mode {mla}: the latent K cache, as mainline holds it)"
    elif name in ("-no-fa", "--no-flash-attn"):
        opts["flash_attn"] = "off"  # common.cpp: params.flash_attn = false, mainline's -fa off
        return
    elif name in _IK_NOT_COUNTED:
        if name in ("-rtr", "--run-time-repack"):
            opts["mmap"] = False  # common.cpp -rtr: repack_tensors = true, use_mmap = false
        note = f"{typed} ({_IK} {_IK_NOT_COUNTED[name]})"
    else:
        raise _ik_refusal(f"{typed} is {_IK} flag (common/common.cpp gpt_params_find_arg), not mainline llama.cpp's")
    opts["unmodelled"] = (*opts.get("unmodelled", ()), note)


def _ik_mla_check(opts: dict[str, Any]) -> None:
    """-mla N against the flash attention and cache types of the whole command: llama_kv_cache_init (ik) keeps a
    V^T cache beside the latent one for -mla 1 without flash attention (needs_v_cache), and without flash
    attention holds the latent cache of -mla 2 / 3 in the -ctv type (primary_kv_type), mainline in -ctk's."""
    typed, mla = opts.pop("_ik_mla")
    fa = opts.get("flash_attn")
    if mla == 1 and fa != "on":
        raise _ik_refusal(f"{typed} is {_IK} MLA mode 1, a V^T cache beside the latent K unless flash attention is "
                          "on (-fa on)")
    if fa == "off" and opts.get("cache_type_k", "f16") != opts.get("cache_type_v", "f16"):
        raise _ik_refusal(f"{typed} without flash attention keeps {_IK} latent cache in the -ctv type "
                          f"({opts.get('cache_type_v', 'f16')}), mainline's in -ctk's")


def _ik_value(name: str, value: str) -> None:
    """A mainline flag given a value only ik_llama.cpp takes: refused in one line."""
    if name in ("-ctk", "--cache-type-k", "-ctv", "--cache-type-v", "-ctkd", "--cache-type-k-draft",
                "-ctvd", "--cache-type-v-draft") and value in _IK_CACHE_TYPES:
        raise _ik_refusal(f"{name} {value} is {_IK} cache type, whose size oomkit does not model")
    if name in ("-sm", "--split-mode") and value in _IK_SPLIT_MODES:
        raise _ik_refusal(f"{name} {value} is {_IK} split mode (the layers' tensors split over the GPUs)")


def second_command(arg: str) -> str | None:
    """A llama.cpp program's name where its flags go: the next command of a paste that holds two (one a line,
    the second a variant of the first, as issues show them) -> the refusal that says so; else None."""
    name = re.split(r"[\\/]", arg)[-1].removesuffix(".exe")
    if re.fullmatch(r"llama-[a-z][a-z-]*", name):
        return (f"a second command ({arg} ...) follows the first: oomkit reads one engine command at a time; give "
                "them one by one")
    return None


def parse_args(args: list[str], program: str = "llama-server", defaults: dict[str, Any] | None = None
               ) -> tuple[str | None, str | None, Any]:
    """llama.cpp flags -> (model path or HF repo, quant from -hf repo:QUANT, LlamaCppSettings).
    defaults: the program's own defaults where they differ from llama-server's (programs.py), under the flags."""
    flags = flags_table()
    opts: dict[str, Any] = {"program": program, **(defaults or {})}
    model: str | None = None
    quant: str | None = None
    hf_file: str | None = None
    model_url: str | None = None
    overrides: list[tuple[str, str]] = []
    overrides_draft: list[tuple[str, str]] = []
    i = 0
    while i < len(args):
        arg = args[i]
        name = canonical_flag(arg)
        if name not in flags and name in ik_flags_table():
            value = None
            if ik_flags_table()[name]:
                value, i = flag_value(args, i, None, f"llama.cpp stops: {name} expects a value")
            _ik_flag(name, value, opts)
            i += 1
            continue
        if name not in flags:
            flag, has, _ = name.partition("=")
            if has and flag in flags:
                # common/arg.cpp common_params_parse_ex looks the whole argument up: no `--flag=value` form
                raise OomkitError(f"invalid argument: {arg} ({program} takes no --flag=value form: give the value "
                                  f"as the next argument, {flag} {arg.partition('=')[2]})")
            if (second := second_command(arg)) is not None:
                raise OomkitError(second)
            raise OomkitError(f"invalid argument: {arg} (not a {program} flag; oomkit's own options go before the --)")
        value = None
        if name in ("-fa", "--flash-attn"):
            # -fa on|off|auto from PR #15434 (b6325); older builds had a bare -fa switch. The form is kept for
            # settings.check_build (a bare -fa refused from b6325) and fa_form_note (a value noted before it); the legacy
            # 1 / 0 / true / false stay unmarked
            following = args[i + 1] if i + 1 < len(args) else None
            if following is not None and (following in _BOOL_VALUES or following == "-1"):
                value = following
                i += 1
            elif following is not None and not following.startswith("-"):
                # common/arg.cpp -fa from PR #15434 (b6325): on / enabled, off / disabled, auto (and 1, 0, -1 from
                # PR #15792, b6393: is_truthy / is_falsey / is_autoy; true / false too in common_arg_utils after
                # b7140), each compared as typed, anything else thrown in these words (the
                # typo is llama.cpp's); the bare -fa of older builds leaves the word as an argument of its own,
                # which common_params_parse_ex refuses (invalid argument). Refused either way.
                shown = clip_word(following)
                raise OomkitError(f"{name} {shown}: llama.cpp stops: unkown value for --flash-attn: '{shown}' (from "
                                  "b6325 it takes on, off or auto; older builds take a bare -fa and stop at the word: "
                                  f"invalid argument: {shown})")
            else:
                value = None
            opts["flash_attn_form"] = ("switch" if value is None else
                                       "value" if value.lower() in ("on", "off", "auto", "enabled", "disabled")
                                       else "")
            value = "on" if value is None else value
        elif flags[name]:
            value, i = flag_value(args, i, None, f"llama.cpp stops: {name} expects a value")
        i += 1
        if value is not None:
            _ik_value(name, value)
        if name == "--override-kv" and value is not None:
            _kv_override(value)
        # a pasted `--port ${PORT}` (llama-swap's macro, a shell variable), `-t $(nproc)` (the shell's command
        # substitution, llama.cpp PR #26185's command) or a value the user blanked out before
        # posting (`--port [port]`, llama.cpp#13329; `<port>`, `%PORT%`) is filled in before llama.cpp reads it:
        # unknown here, and no memory depends on it
        if value is not None and not _PLACEHOLDER.search(value) and name in _STOI_ONLY:
            stoi(name, value)
        elif value is not None and not _PLACEHOLDER.search(value) and name in _STOF_ONLY:
            stof(name, value)
        if name in _UNMODELLED and (value is None or value.strip() != "0"):
            typed = "" if value is None else f" {value}"
            opts["unmodelled"] = (*opts.get("unmodelled", ()), f"{name}{typed} ({_UNMODELLED[name]})")
        if name in _VALUED:
            field, convert = _VALUED[name]
            opts[field] = convert(name, value)
            if field == "n_ctx":
                opts["n_ctx_typed"] = True
        elif name in _SWITCHES:
            field, setting = _SWITCHES[name]
            opts[field] = setting
        elif name in ("-m", "--model"):
            model = value
        elif name in ("-mu", "--model-url"):
            # common/arg.cpp: "model download url"; -m, when given, is where the download is kept
            model_url = value
        elif name in ("-hf", "-hfr", "--hf-repo"):
            if "://" in value:  # common/download.cpp common_get_hf_file splits at ':' and wants <user>/<model> before it
                raise SettingsError(f"{name} {clip_repr(value)}: llama.cpp takes <user>/<model>[:quant], not a URL (it "
                                    "stops: invalid HF repo format)")
            repo, _, q = value.partition(":")
            model, quant = repo, (q or None)
        elif name in ("-hff", "--hf-file"):
            hf_file = value  # common/arg.cpp: "If specified, it will override the quant in --hf-repo"
        elif name in ("-fa", "--flash-attn"):
            mode = "auto" if value == "-1" else _BOOL_VALUES.get(value)
            if mode is None:
                shown = clip_word(value)
                raise OomkitError(f"{name} {shown}: llama.cpp stops: unkown value for --flash-attn: '{shown}'")
            opts["flash_attn"] = mode
        elif name in ("-ngl", "--gpu-layers", "--n-gpu-layers"):
            opts["n_gpu_layers"] = {"auto": -1, "all": 10**6}.get(value) or _int(name, value)
        elif name in ("-ngld", "--gpu-layers-draft", "--n-gpu-layers-draft", "--spec-draft-ngl"):
            opts["n_gpu_layers_draft"] = {"auto": -1, "all": 10**6}.get(value) or _int(name, value)
        elif name == "--spec-type":
            given = tuple(x.strip() for x in value.split(",") if x.strip())
            # common/arg.cpp --spec-type: common_speculative_type_from_name for each name, an unknown one refused;
            # the names before PR #22964 (b9131) are read as they were renamed, and refused from that build on
            # (settings.check_build)
            if bad := [x for x in given if x not in SPEC_TYPES and x not in SPEC_TYPE_OLD_NAMES]:
                raise OomkitError(f"llama.cpp stops: unknown speculative decoding type: {bad[0]} (one of {', '.join(SPEC_TYPES)})")
            opts["spec_type"] = tuple(SPEC_TYPE_OLD_NAMES.get(x, x) for x in given)
            opts["spec_type_old_names"] = tuple(x for x in given if x in SPEC_TYPE_OLD_NAMES)
        elif name in ("-ts", "--tensor-split"):
            # common/arg.cpp --tensor-split: std::sregex_token_iterator over "[,/]+" (a run of separators is one;
            # an empty text before the first is a part, an empty one after the last is not), each part std::stof,
            # so ",,," or ",3,1" is an error; more parts than devices is an error (llama_max_devices(), 16 in CUDA
            # builds)
            parts = re.split(r"[,/]+", value)
            if len(parts) > 1 and not parts[-1]:
                parts.pop()
            if len(parts) > MAX_SPLIT_DEVICES:
                raise SettingsError(f"{name} {value!r}: {len(parts)} parts; llama.cpp takes at most "
                                    f"{MAX_SPLIT_DEVICES} (one per device)")
            opts["tensor_split"] = tuple(stof(name, x) for x in parts)
        elif name in ("-ot", "--override-tensor", "-otd", "--override-tensor-draft", "--spec-draft-override-tensor"):
            for part in value.split(","):
                pat, sep, buft = part.partition("=")  # common/arg.cpp: split at the first '='
                if not sep or not pat:
                    raise OomkitError(f"llama.cpp stops: invalid {name} {part!r}: expected PATTERN=BUFFER_TYPE")
                (overrides if name in ("-ot", "--override-tensor") else overrides_draft).append((pat, buft))
        elif name in ("-mm", "--mmproj"):
            opts["mmproj"] = value
        elif name in ("-lm", "--load-mode"):
            opts["mmap"] = "mmap" in value or value == "auto"
        elif name in ("-fit", "--fit"):
            mode = _BOOL_VALUES.get(value.lower())
            if mode not in ("on", "off"):
                raise OomkitError(f"llama.cpp stops: unknown value for --fit: '{value}'")
            opts["fit"] = mode == "on"
        elif name in ("-fitt", "--fit-target"):
            # common/arg.cpp --fit-target: MiB per device, comma-separated; one value serves every device
            opts["fit_target"] = tuple(_int(name, x) for x in value.split(","))
            if any(t < 0 for t in opts["fit_target"]):
                raise OomkitError(f"llama.cpp stops: {name} takes MiB of free memory per device (0 or more), got {value!r}")
        elif name in ("-fitc", "--fit-ctx"):
            opts["fit_ctx"] = _int(name, value)
            if opts["fit_ctx"] < 0:
                raise OomkitError(f"llama.cpp stops: {name} takes a context size (0 or more), got {value!r}")
        elif name in ("--rpc",):
            opts["rpc"] = tuple(x.strip() for x in value.split(",") if x.strip())
            for ep in opts["rpc"]:  # ggml-rpc.cpp parse_endpoint: host:port
                host, colon, port = ep.rpartition(":")
                if not colon or not host or not port.isdigit():
                    raise OomkitError(f"llama.cpp stops: --rpc {ep!r}: expected host:port")
        elif name in ("-dev", "--device"):
            opts["device"] = tuple(x.strip() for x in value.split(",") if x.strip())
        elif name in ("-hfd", "-hfrd", "--hf-repo-draft", "--spec-draft-hf"):
            opts["hf_repo_draft"] = value  # "Same as --hf-repo, but for the draft model": REPO[:QUANT]
        elif name in ("-devd", "--device-draft", "--spec-draft-device"):
            # common/arg.cpp: parse_device_list, as -dev, into params.speculative.devices
            opts["device_draft"] = tuple(x.strip() for x in value.split(",") if x.strip())
    if "_ik_mla" in opts:
        _ik_mla_check(opts)
    if overrides:
        opts["override_tensor"] = tuple(overrides)
    if overrides_draft:
        opts["override_tensor_draft"] = tuple(overrides_draft)
    if model_url and (model is None or not Path(os.path.expanduser(model)).exists()):
        model = model_url  # the file not downloaded yet: the URL names it (a hub URL reads as its repo:QUANT)
    if hf_file:
        file_quant = names.gguf_file_quant(hf_file)
        if file_quant is None:
            raise OomkitError(f"--hf-file {hf_file!r}: no GGUF file type (Q4_K_M, Q8_0, ...) in the file name to "
                              "read its size by; give -m with the downloaded file instead")
        quant = file_quant
    return model, quant, check_settings(LlamaCppSettings(**opts))


# common/arg.cpp: the LLAMA_ARG_* variables of the options that change memory (set_env), read before the command
# line, which overrides them. (variable, flag, kind): "int" through std::stoi, "text" as given, "void" a switch
# on when is_truthy, "bool" a pair (flag on, flag off) read with parse_bool_value, LLAMA_ARG_NO_* meaning off.
ENV_FLAGS: tuple[tuple[str, Any, str], ...] = (
    ("LLAMA_ARG_MODEL", "-m", "text"), ("LLAMA_ARG_HF_REPO", "-hf", "text"),
    ("LLAMA_ARG_CTX_SIZE", "-c", "int"), ("LLAMA_ARG_BATCH", "-b", "int"), ("LLAMA_ARG_UBATCH", "-ub", "int"),
    ("LLAMA_ARG_N_PARALLEL", "-np", "int"), ("LLAMA_ARG_N_GPU_LAYERS", "-ngl", "text"),
    ("LLAMA_ARG_CACHE_TYPE_K", "-ctk", "text"), ("LLAMA_ARG_CACHE_TYPE_V", "-ctv", "text"),
    ("LLAMA_ARG_FLASH_ATTN", "-fa", "text"), ("LLAMA_ARG_N_CPU_MOE", "-ncmoe", "int"),
    ("LLAMA_ARG_CPU_MOE", "-cmoe", "void"), ("LLAMA_ARG_TENSOR_SPLIT", "-ts", "text"),
    ("LLAMA_ARG_MAIN_GPU", "-mg", "int"), ("LLAMA_ARG_SPLIT_MODE", "-sm", "text"),
    ("LLAMA_ARG_OVERRIDE_TENSOR", "-ot", "text"), ("LLAMA_ARG_SWA_FULL", "--swa-full", "void"),
    ("LLAMA_ARG_EMBEDDINGS", "--embeddings", "void"), ("LLAMA_ARG_FIT", "-fit", "text"),
    ("LLAMA_ARG_FIT_TARGET", "-fitt", "text"), ("LLAMA_ARG_FIT_CTX", "-fitc", "int"),
    ("LLAMA_ARG_KV_OFFLOAD", ("-kvo", "-nkvo"), "bool"), ("LLAMA_ARG_KV_UNIFIED", ("-kvu", "-no-kvu"), "bool"),
    ("LLAMA_ARG_MMAP", ("--mmap", "--no-mmap"), "bool"),
)
_TRUTHY, _FALSEY = ("on", "enabled", "true", "1"), ("off", "disabled", "false", "0")  # common.cpp is_truthy/falsey


def env_flags(env: dict[str, str] | None) -> list[str]:
    """The LLAMA_ARG_* variables of `env` (None: os.environ) as the flags llama.cpp takes them for, to go before
    the command's own (common_params_parse_ex: variables first, then the arguments). A value llama.cpp cannot
    read stops it ("error while handling environment variable"): refused here, naming the variable."""
    src = os.environ if env is None else env
    if not any(k.startswith("LLAMA_ARG_") for k in src):
        return []
    known = flags_table()
    out: list[str] = []
    for var, flag, kind in ENV_FLAGS:
        if (flag if isinstance(flag, str) else flag[0]) not in known:
            continue
        neg = var.replace("LLAMA_ARG_", "LLAMA_ARG_NO_")
        if kind == "bool" and neg in src:
            out.append(flag[1])
            continue
        if var not in src:
            continue
        value = src[var]
        if kind == "int":
            stoi(var, value, "llama-server")
            out += [flag, value.strip()]
        elif kind == "text":
            out += [flag, value]
        elif kind == "void":
            if value in _TRUTHY:
                out.append(flag)
        elif value in _TRUTHY + _FALSEY:
            out.append(flag[0] if value in _TRUTHY else flag[1])
        else:
            raise SettingsError(f"{var}={value[:30]!r}: llama-server takes one of {', '.join(_TRUTHY + _FALSEY)} "
                                "(parse_bool_value)")
    return out


def flag_takes_value(name: str, following: str | None) -> bool:
    """Whether `name` consumes the next argument (for splitting a mixed oomkit + llama.cpp option list)."""
    name = canonical_flag(name)
    if name in ("-fa", "--flash-attn"):
        return following is not None and following.lower() in _BOOL_VALUES
    return flags_table().get(name, ik_flags_table().get(name, False))


# ---------------------------------------------------------------------------------------------------------
# The command line as typed: LlamaCppSettings -> llama-server flags, and a user's command edited in place.
# Each field by its short spelling (tools/server/README.md); the long ones are the aliases a user may have typed.
# Not flags: program (the program name), engine_version (which build runs, not an option), n_rs_seq (oomkit's
# count of recurrent-state snapshots per sequence; llama.cpp decides it from the model), backend and cpu_isa (the
# hardware the build runs on: oomkit's --backend and the CPU's ISA, no llama.cpp flag), host_memory (oomkit's --ram:
# the host's memory, which --fit reads from the machine), flash_attn_form (how -fa was typed: its flag is flash_attn's),
# async_events (what the build's backends report, which decides pipeline parallelism: a build option, no flag),
# blas (a build with the BLAS backend: a build option, no flag).


def _tensor_split(value: tuple[float, ...]) -> str | None:
    return ",".join(number(x) for x in value) or None


def _overrides(value: tuple[tuple[str, str], ...]) -> str | None:
    return ",".join(f"{p}={b}" for p, b in value) or None


def _text_or_none(value: str | None) -> str | None:
    return value


def _layers(value: int) -> str:
    return "all" if value == 10**6 else str(value)


OPTIONS = (
    Opt("n_ctx", "-c", aliases=("--ctx-size",)),
    Opt("n_batch", "-b", aliases=("--batch-size",)),
    Opt("n_ubatch", "-ub", aliases=("--ubatch-size",)),
    Opt("n_parallel", "-np", aliases=("--parallel",)),
    Opt("kv_unified", "-kvu", switch=("-kvu", "-no-kvu"), aliases=("--kv-unified", "--no-kv-unified")),
    Opt("cache_type_k", "-ctk", aliases=("--cache-type-k",)),
    Opt("cache_type_v", "-ctv", aliases=("--cache-type-v",)),
    Opt("flash_attn", "-fa", aliases=("--flash-attn",)),
    Opt("swa_full", "--swa-full", switch=("--swa-full", None)),
    Opt("n_gpu_layers", "-ngl", _layers, aliases=("--gpu-layers", "--n-gpu-layers")),
    Opt("split_mode", "-sm", aliases=("--split-mode",)),
    Opt("tensor_split", "-ts", _tensor_split, aliases=("--tensor-split",)),
    Opt("main_gpu", "-mg", aliases=("--main-gpu",)),
    Opt("no_kv_offload", "-nkvo", switch=("-nkvo", "-kvo"), aliases=("--no-kv-offload", "--kv-offload")),
    Opt("override_tensor", "-ot", _overrides, aliases=("--override-tensor",)),
    Opt("n_cpu_moe", "--n-cpu-moe", aliases=("-ncmoe",)),
    Opt("cpu_moe", "--cpu-moe", switch=("--cpu-moe", None), aliases=("-cmoe",)),
    Opt("override_tensor_draft", "-otd", _overrides, aliases=("--override-tensor-draft", "--spec-draft-override-tensor")),
    Opt("n_cpu_moe_draft", "--n-cpu-moe-draft", aliases=("-ncmoed", "--spec-draft-n-cpu-moe", "--spec-draft-ncmoe")),
    Opt("cpu_moe_draft", "--cpu-moe-draft", switch=("--cpu-moe-draft", None),
        aliases=("-cmoed", "--spec-draft-cpu-moe")),
    Opt("mmap", "--no-mmap", switch=("--mmap", "--no-mmap"), foreign=("-lm", "--load-mode")),
    Opt("embeddings", "--embeddings", switch=("--embeddings", None), aliases=("--embedding",)),
    Opt("pooling", "--pooling", lambda v: v or None),
    Opt("repack", "--no-repack", switch=("--repack", "--no-repack"), aliases=("-nr",)),
    Opt("no_host", "--no-host", switch=("--no-host", None)),
    Opt("mmproj", "--mmproj", _text_or_none, aliases=("-mm",)),
    Opt("no_mmproj", "--no-mmproj", switch=("--no-mmproj", None)),
    Opt("mmproj_offload", "--no-mmproj-offload", switch=("--mmproj-offload", "--no-mmproj-offload")),
    Opt("model_draft", "-md", _text_or_none, aliases=("--model-draft", "--spec-draft-model")),
    Opt("hf_repo_draft", "-hfd", _text_or_none, aliases=("-hfrd", "--hf-repo-draft", "--spec-draft-hf")),
    Opt("device_draft", "-devd", lambda v: ",".join(v) or None, aliases=("--device-draft", "--spec-draft-device")),
    Opt("n_gpu_layers_draft", "-ngld", _layers, aliases=("--gpu-layers-draft", "--n-gpu-layers-draft",
                                                         "--spec-draft-ngl")),
    Opt("cache_type_k_draft", "-ctkd", aliases=("--cache-type-k-draft", "--spec-draft-type-k")),
    Opt("cache_type_v_draft", "-ctvd", aliases=("--cache-type-v-draft", "--spec-draft-type-v")),
    Opt("n_ctx_draft", "-cd", aliases=("--ctx-size-draft", "--spec-draft-ctx-size")),
    Opt("spec_type", "--spec-type", lambda v: ",".join(v) or None),
    Opt("spec_draft_n_max", "--spec-draft-n-max", lambda v: None if v is None else str(v),
        aliases=("--draft-max", "--draft", "--draft-n")),
    Opt("fit", "-fit", lambda v: "on" if v else "off", aliases=("--fit",)),
    Opt("fit_target", "-fitt", lambda v: ",".join(map(str, v)), aliases=("--fit-target",)),
    Opt("fit_ctx", "-fitc", aliases=("--fit-ctx",)),
    Opt("rpc", "--rpc", lambda v: ",".join(v) or None),
    Opt("device", "-dev", lambda v: ",".join(v) or None, aliases=("--device",)),
)
_DEFAULTS = defaults(LlamaCppSettings)


def _program_len(argv: list[str]) -> int:
    return 2 if argv and program_name(argv[0]) == "llama" and len(argv) > 1 and argv[1] in LLAMA_APP_COMMANDS else 1


SYNTAX = Syntax(_program_len, flag_takes_value)


# the -hff a command for a build without REPO:QUANT names where the repo's file for the quant is not known offline:
# the user fills in the name (plan says so); the quant in it is how this module's -hff parser reads the format
HF_FILE_PLACEHOLDER = "FILE-{}.gguf"


# Where a command for a build without -hfr puts the file it downloads: llama.cpp's own models/ folder (the -m default
# in those builds' common/common.h gpt_params, "models/7B/ggml-model-f16.gguf").
LOCAL_DIR = "models"


def local_download(repo: str, quant: str, hf_file: str | None = None) -> tuple[str, str]:
    """(PATH, the command that downloads the file to PATH) for `repo`'s GGUF of `quant`, for a build that loads a
    local file only (before PR #6192, f482bb2e, 2024-03-23, b2514: ERAS hf_repo_flag, the server's parser took no
    -hfr / -hff, and main none before PR #6234, b2503).

    PATH is models/<owner>_<repo>_<file>, the name llama.cpp's own cache later gave its downloads (common/arg.cpp at
    b4470: hf_repo + "_" + hf_file, "/" written "_"), which oomkit reads back as the repo and file type without the
    file (names.hub_cache_gguf), so `oomkit check` takes the command as written before the download. The download is
    the URL common.cpp fetched for -hfr/-hff from PR #6234 (llama_load_model_from_hf: "https://huggingface.co/" + repo
    + "/resolve/main/" + file); the file is `hf_file` (the repo's for the quant, published_file), else FILE-QUANT.gguf
    (HF_FILE_PLACEHOLDER) for the user to fill in, in both places."""
    file = hf_file or HF_FILE_PLACEHOLDER.format(quant.upper())
    owner, name = repo.split("/")
    path = f"{LOCAL_DIR}/{owner}_{name}_{file}"
    return path, f"curl -L --create-dirs -o {path} https://huggingface.co/{repo}/resolve/main/{file}"


def _hub_repo(model: str, quant: str | None) -> tuple[str, str | None] | None:
    """(repo, quant) where `model` names a Hugging Face repo (not a file here, not a catalog name or Ollama tag)."""
    if Path(os.path.expanduser(model)).exists():
        return None
    name, suffix = split_quant(model)
    return (name, quant or suffix) if "/" in name and ":" not in name else None


def _local_only(repo: str, quant: str | None, build: int | None) -> bool:
    """Whether the build loads the repo's file from a local path only: before -hfr (ERAS hf_repo_flag), for a repo
    and file type the file can be named by (with neither the command names the repo as given)."""
    return build is not None and not ERAS.reached(build, "hf_repo_flag") and bool(quant) and repo.count("/") == 1


# the -m a command names for a model llama.cpp has no name for (neither a file here nor a repo oomkit knows a GGUF
# repo of): a path the user fills in, the model's name and quant in the file's name
MODEL_PATH_PLACEHOLDER = "/path/to/{}.gguf"


def runnable_model(model: str, quant: str | None = None) -> tuple[str, str | None]:
    """(model, quant) as llama.cpp can load it. llama.cpp takes a file (-m) or a Hugging Face repo of GGUF files (-hf,
    common/arg.cpp); a catalog name or Ollama tag (qwen3:8b) is neither, nor is a checkpoint repo (Qwen/Qwen3-8B,
    safetensors only). For a model the catalog knows: the GGUF repo plan names (knobs.gguf_repo, unsloth's
    conversion), the quant upper case as its files spell it. Else, for a name that is no repo, the file placeholder
    (MODEL_PATH_PLACEHOLDER). A file here, a GGUF repo, and a repo the catalog does not know are left as given."""
    if Path(os.path.expanduser(model)).exists() or model.lower().endswith(".gguf"):
        return model, quant
    name, suffix = split_quant(model)
    q = quant or suffix
    if name.lower().endswith(("-gguf", "_gguf")):
        return model, quant
    if catalog.base_hf_id(name) is not None:
        return gguf_repo(name), q.upper() if q else None
    if "/" in name and ":" not in name:
        return model, quant
    return MODEL_PATH_PLACEHOLDER.format("-".join(p for p in (name.replace(":", "-").replace("/", "-"), q) if p)), None


def _hub_target(model: str, quant: str | None, build: int | None) -> tuple[str, str | None] | None:
    """(repo, quant) of the repo runnable_model names. For a catalog name without a quant, in a build before
    REPO:QUANT (ERAS hf_tag), where the command names a file: DEFAULT_GGUF_TYPE, the file `-hf REPO` downloads in
    later builds (common/arg.cpp's tag "latest", which the hub answers with the Q4_K_M file). A repo the user named
    is left as named."""
    runnable, quant = runnable_model(model, quant)
    if runnable.lower().endswith(".gguf"):
        return None
    hub = _hub_repo(runnable, quant)
    if hub is not None and runnable != model and not hub[1] and build is not None and \
            not ERAS.reached(build, "hf_tag"):
        return hub[0], DEFAULT_GGUF_TYPE
    return hub


def model_args(model: str, quant: str | None, build: int | None = None, hf_file: str | None = None) -> list[str]:
    """The model as llama.cpp takes it: `-m PATH` for a file, `-hf REPO:QUANT` for a Hugging Face repo (a catalog
    name or Ollama tag as its GGUF repo, else a `-m` path to fill in: runnable_model). A repo for a build from -hfr
    (ERAS hf_repo_flag) to before REPO:QUANT (ERAS hf_tag): `-hfr REPO -hff FILE`, the repo's file for the quant
    (`hf_file`), else `FILE-QUANT.gguf` (HF_FILE_PLACEHOLDER) for the user to fill; without a quant, the file
    `-hf REPO` downloads in later builds (_hub_target). Before -hfr the build loads a local file only: `-m PATH`,
    where local_download puts the repo's file (download_command)."""
    hub = _hub_target(model, quant, build)
    model, quant = runnable_model(model, quant)
    if Path(os.path.expanduser(model)).exists() or model.lower().endswith(".gguf"):
        return ["-m", model]
    if hub is not None:
        name, q = hub
        if q and _local_only(name, q, build):
            return ["-m", local_download(name, q, hf_file)[0]]
        if build is not None and q and ERAS.reached(build, "hf_repo_flag") and not ERAS.reached(build, "hf_tag"):
            return ["-hfr", name, "-hff", hf_file or HF_FILE_PLACEHOLDER.format(q.upper())]
        return ["-hf", f"{name}:{q}" if q else name]
    name, suffix = split_quant(model)
    q = quant or suffix
    return ["-m", f"{name}:{q}" if q else name]


def download_command(model: str, quant: str | None, settings: LlamaCppSettings) -> str | None:
    """The command that downloads the file format_command's `-m PATH` names for a repo in a build before -hfr
    (local_download), None where the command names the model otherwise."""
    build = build_number(settings.engine_version)
    hub = _hub_target(model, quant, build)
    if hub is None or not hub[1] or not _local_only(hub[0], hub[1], build):
        return None
    repo, q = hub
    return local_download(repo, q, published_file(repo, q))[1]


def published_file(repo: str, quant: str | None) -> str | None:
    """The file name of `repo`'s GGUF for `quant` from oomkit's hub cache (never the network), as `-hff` names it;
    None when the listing is not cached, the quant is not there, or it is split in parts."""
    if not quant:
        return None
    from ...model import hub  # lazy: the cached listing, read only for a build without -hf REPO:QUANT

    try:
        files = hub.gguf_quants(hub.HubClient(offline=True).repo_info(repo).files)
    except OomkitError:
        return None
    q = quant.upper()
    found = [f.paths for f in files if f.quant == q or f.quant.removeprefix("UD-") == q]
    return found[0][0] if len(found) == 1 and len(found[0]) == 1 else None


def format_command(model: str, settings: LlamaCppSettings, quant: str | None = None) -> list[str]:
    """The llama-server (or llama-cli) command that runs `model` with `settings`: only the flags of the fields
    that differ from llama.cpp's defaults. llama-cpp-python (a library, no command of its own) is written as
    llama-server, whose defaults it shares."""
    program = settings.program if settings.program in ("llama-server", "llama-cli") else "llama-server"
    build = build_number(settings.engine_version)
    if not ERAS.reached(build, "binaries_renamed"):
        program = _OLD_NAMES[program]
    _, flags = format_flags(OPTIONS, values_of(settings), _DEFAULTS)
    # -hff (or the local path) names a file only where the build has no REPO:QUANT
    hub = _hub_target(model, quant, build) if not ERAS.reached(build, "hf_tag") else None
    hf_file = published_file(*hub) if hub is not None else None
    return _fa_as_the_build_takes_it([program, *model_args(model, quant, build, hf_file), *flags], settings)


# the programs' names before ERAS binaries_renamed (PR #7809)
_OLD_NAMES = {"llama-server": "server", "llama-cli": "main"}


def rewrite_command(argv: list[str], old: LlamaCppSettings, new: LlamaCppSettings) -> list[str]:
    """The user's llama.cpp command with only the flags of the fields that differ between old and new changed."""
    if old.program == "lmstudio":
        return _rewrite_lms(argv, old, new)
    if old.program == "llama-cpp-python":
        return _rewrite_binding_server(argv, old, new)
    return _fa_as_the_build_takes_it(rewrite(argv, values_of(old), values_of(new), OPTIONS, SYNTAX), new)


def _lms_gpu(layers: int) -> str | None:
    """`lms load --gpu` as oomkit reads it (programs.py parse_lms): max (-1, every layer) or off (0)."""
    return "max" if layers == -1 else "off" if layers == 0 else None


# lms load's own flags (lmstudio.ai/docs/cli/load, programs.py parse_lms): the context, the parallel predictions
# and the GPU share; nothing else of llama.cpp's
_LMS_OPTIONS = (Opt("n_ctx", "--context-length", aliases=("-c",)), Opt("n_parallel", "--parallel"),
                Opt("n_gpu_layers", "--gpu", _lms_gpu))


# lms load's options that take a value (lmstudio-ai/lms src/subcommands/load.ts: commander options; -c from 2025-11,
# --parallel and the --speculative-draft-* options from 2026-01; --host / --port (createClient.ts) and --log-level on
# every subcommand)
LMS_VALUED = ("-c", "--context-length", "--parallel", "--gpu", "--ttl", "--identifier", "--host", "--port",
              "--log-level", "--speculative-draft-model", "--speculative-draft-max-tokens",
              "--speculative-draft-min-tokens", "--speculative-draft-min-continue-probability")


def _lms_takes_value(name: str, following: str | None) -> bool:
    return name.partition("=")[0] in LMS_VALUED


_LMS_SYNTAX = Syntax(lambda argv: 2 if len(argv) > 1 and argv[1] == "load" else 1, _lms_takes_value)


def _rewrite_lms(argv: list[str], old: LlamaCppSettings, new: LlamaCppSettings) -> list[str]:
    """An `lms load` command with a changed context or GPU share; a change lms load has no flag for (the KV cache
    type, a partial -ngl, -ot) is refused, so that a fit picks a change the command can carry."""
    a, b = values_of(old), values_of(new)
    changed = sorted(f for f in b if a.get(f) != b[f])
    foreign = [f for f in changed if f not in ("n_ctx", "n_parallel", "n_gpu_layers")]
    if foreign or ("n_gpu_layers" in changed and _lms_gpu(b["n_gpu_layers"]) is None):
        raise SettingsError(f"lms load has no flag for {', '.join(foreign) or 'n_gpu_layers ' + str(b['n_gpu_layers'])}")
    return rewrite(argv, a, b, _LMS_OPTIONS, _LMS_SYNTAX)


# ggml.h enum ggml_type: the cache types the binding's type_k / type_v take as integers
GGML_TYPE_IDS = {"f32": 0, "f16": 1, "q4_0": 2, "q4_1": 3, "q5_0": 6, "q5_1": 7, "q8_0": 8, "iq4_nl": 20, "bf16": 30}


def _type_id(value: str) -> str | None:
    n = GGML_TYPE_IDS.get(value.lower())
    return None if n is None else str(n)


# `python -m llama_cpp.server`'s own flags (programs.py parse_binding_server): its Llama(...) fields by name
_BINDING_SERVER_OPTIONS = (
    Opt("n_ctx", "--n_ctx"), Opt("n_batch", "--n_batch"), Opt("n_ubatch", "--n_ubatch"),
    Opt("n_gpu_layers", "--n_gpu_layers", lambda v: "-1" if v < 0 or v >= 10**6 else str(v)),
    Opt("flash_attn", "--flash_attn", lambda v: "true" if v == "on" else "false"),
    Opt("no_kv_offload", "--offload_kqv", lambda v: "false" if v else "true"),
    Opt("cache_type_k", "--type_k", _type_id), Opt("cache_type_v", "--type_v", _type_id),
)


# llama_cpp.server's list-valued fields (server/settings.py: tensor_split, kv_overrides take several words)
SERVER_LISTS = frozenset({"tensor_split", "kv_overrides"})


def _binding_server_takes_value(name: str, following: str | None) -> bool:
    return name.startswith("--") and "=" not in name and name[2:] not in SERVER_LISTS


def _rewrite_binding_server(argv: list[str], old: LlamaCppSettings, new: LlamaCppSettings) -> list[str]:
    """A `python -m llama_cpp.server` command with its own flags changed; a change it has no flag for is refused,
    so that a fit picks one the command can carry."""
    a, b = values_of(old), values_of(new)
    known = {o.field for o in _BINDING_SERVER_OPTIONS}
    foreign = sorted(f for f in b if a.get(f) != b[f] and f not in known)
    if foreign:
        raise SettingsError(f"llama_cpp.server has no flag for {', '.join(foreign)}")
    syntax = Syntax(lambda args: (python_module(args) or ("", 1))[1], _binding_server_takes_value)
    return rewrite(argv, a, b, _BINDING_SERVER_OPTIONS, syntax)


_FA_VALUES = frozenset({"on", "off", "auto", "enabled", "disabled"})


def _fa_as_the_build_takes_it(argv: list[str], s: LlamaCppSettings) -> list[str]:
    """Before PR #15434 (ERAS fa_auto, b6325) -fa is a bare switch and a value after it is refused (common/arg.cpp
    of those builds): -fa <value> is written as -fa where flash attention is on, and left out where it is off."""
    build = build_number(s.engine_version)
    if ERAS.reached(build, "fa_auto"):
        return argv
    out: list[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("-fa", "--flash-attn") and i + 1 < len(argv) and argv[i + 1].lower() in _FA_VALUES:
            if flash_attn_mode(replace(s, flash_attn=argv[i + 1]), build) not in ("off", "disabled"):
                out.append(a)
            i += 2
            continue
        out.append(a)
        i += 1
    return out


# A llama-server models preset (`--models-preset FILE`, router mode) pasted as MODEL. common/preset.cpp
# parse_ini_from_file: `[name]` sections of `key = value` lines (`;` or `#` starts a comment), `[*]` the options every
# preset inherits (common_preset::merge: a preset's own win), `version` skipped; load_from_ini: a key is a flag
# without its dashes (long or short: `ctx-size`, `c`) or its environment variable, any other key refused ("option
# '%s' not recognized in preset '%s'"); common_preset::to_args: a switch given a true value is the flag, a false one
# its negative form (or nothing), a value flag the flag and the value.
_INI_SECTION = re.compile(r"\s*\[\s*([^\]]*?)\s*\]\s*(?:[;#].*)?")
_INI_KEY = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*([^;#]*?)\s*(?:[;#].*)?")
_PRESET_MODEL_KEYS = frozenset({"m", "model", "hf", "hfr", "hf-repo", "mu", "model-url", "LLAMA_ARG_MODEL",
                                "LLAMA_ARG_HF_REPO", "LLAMA_ARG_MODEL_URL"})


def _preset_words(key: str, value: str, preset: str) -> list[str]:
    known = flags_table()
    env = {var: (flag if isinstance(flag, str) else flag[0]) for var, flag, _ in ENV_FLAGS}
    flag = f"--{key}" if f"--{key}" in known else f"-{key}" if f"-{key}" in known else env.get(key)
    if flag is None:
        raise OomkitError(f"this is a llama-server models preset (--models-preset), not a model name, and llama-server "
                          f"refuses it: option '{key}' not recognized in preset '{preset}' (common/preset.cpp)")
    if known.get(flag, True):
        return [flag, value]
    truthy = value.lower() in _TRUTHY
    if truthy:
        return [flag]
    bare = flag.lstrip("-")
    if bare.startswith("no-") and f"--{bare[3:]}" in known:
        return [f"--{bare[3:]}"]  # `no-mmap = false`: the positive form
    return [f"--no-{bare}"] if f"--no-{bare}" in known else []


def preset_hint(text: str) -> str | None:
    """A llama-server models preset pasted as MODEL -> the one-line refusal naming the llama-server command its
    first model preset runs as; None for text that is no preset."""
    sections: dict[str, list[tuple[str, str]]] = {}
    current = ""
    for line in text.splitlines():
        if not line.strip() or line.lstrip()[:1] in (";", "#"):
            continue
        if m := _INI_SECTION.fullmatch(line):
            current = m.group(1)
            sections.setdefault(current, [])
        elif m := _INI_KEY.fullmatch(line):
            sections.setdefault(current, []).append((m.group(1), m.group(2)))
        else:
            return None
    models = [name for name, kv in sections.items() if name not in ("", "*")
              and any(k in _PRESET_MODEL_KEYS for k, _ in kv)]
    named = [name for name, kv in sections.items() if name not in ("", "*") and kv]
    if not models and named:
        # a section with no model key: the router (tools/server/server-models.cpp) runs it on the model of that
        # name in its cache or --models-dir, which the text does not hold
        return (f"this is a llama-server models preset (--models-preset), not a model name: its [{named[0]}] names "
                "no model file (m, hf-repo, ...), which the router finds by that name in its cache: give the "
                "llama-server command with -m FILE or -hf REPO")
    if not models:
        return None
    name = models[0]
    words: list[str] = []
    for key, value in [*sections.get("*", []), *sections[name]]:
        if key != "version":
            words += _preset_words(key, value, name)
    more = f" ({len(models) - 1} more presets: {', '.join(models[1:4])})" if len(models) > 1 else ""
    return (f"this is a llama-server models preset (--models-preset), not a model name: its [{name}] runs as "
            f"`oomkit check -- llama-server {join_command(words)}`{more}")
