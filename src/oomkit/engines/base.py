"""The engine record: everything the rest of oomkit may ask of an engine, in one place per engine.

Each engine package (`engines/<engine>/`) exposes one `ENGINE = EngineModule(...)`: its name and the spellings
users type for it, the programs and `python -m` modules whose command lines it reads, its Settings (a frozen
dataclass whose fields use the engine's own option names and defaults), which settings field holds the context
and which the KV cache type, the KV types it accepts, the engine-neutral options (`--ctx`, `--kv-type`, ...)
mapped onto its fields, its release eras, and the pure functions that parse its command line and lay a model
out on devices. Nothing outside `engines/` names an engine or guesses at its fields.

The command line goes both ways. `command(model, settings, quant)` writes the argv a user types (the program, the
model in the engine's own way, then only the flags of the fields that differ from the Settings defaults, each by
its canonical spelling; the environment the engine reads as leading `VAR=value` assignments), and parse_command of
it gives back the same settings. `rewrite_command(argv, old, new)` edits the user's own argv: the flags of the
fields that differ between old and new change in place, in the spelling the user typed; others are appended; every
other token stays. Fields that are no option of the engine (engine_version, oomkit's own budgets and counts) are
left out; each engine's args.py names them. The walking and editing is shared (engines/command.py), each engine
gives one table of its options.

The registry below imports an engine package only when it is asked for by name, program or module (each costs
milliseconds to tens of them; a command needs one), from small static tables of those names.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import OomkitError
from ..memory import Device, MemoryEstimate
from ..model.spec import ModelSpec

# (argv without the program, env or None for os.environ[, the program variant]) -> (model, quant, Settings); the
# variant is passed only when the engine's `programs` name one (llama-cli vs llama-server, mlx_lm.generate vs server)
ParseArgs = Callable[..., "tuple[str | None, str | None, Any]"]


def _as_published(config: dict[str, Any]) -> str | None:
    return None


def unmodelled_note(settings: Any) -> str | None:
    """The warning for the command's flags that change memory in a way oomkit does not count (a Settings'
    `unmodelled`, filled by its parser): the estimate is without them, and says so."""
    flags = getattr(settings, "unmodelled", ())
    if not flags:
        return None
    return (f"not counted in this estimate, although {'they change' if len(flags) > 1 else 'it changes'} memory: "
            f"{'; '.join(flags)}")


@dataclass(frozen=True)
class Choice:
    """One setting of an engine's knob space, as the planner tries it: the settings (their context is searched
    by the planner), the weight format to load and the model argument that names it, and, for the second tier,
    the field that moves part of the model to system RAM with its values from most-on-GPU to least."""

    settings: Any
    label: str  # "Q4_K_M weights, q8_0 KV, flash attention on"
    quant: str | None = None  # the weight format to resolve the model with; None: as the model is named
    model: str | None = None  # the model argument of the command when it differs from the one asked (a variant repo)
    offload: tuple[str, tuple[Any, ...]] | None = None  # (settings field, values: most on the GPU first)
    context_factor: int = 1  # the context field holds this many sequences' contexts (llama.cpp -np N: n_ctx = N x ctx)
    weight_format: str | None = None  # the format the weights run in when settings convert them at load (fp8)
    # the offload moves only MoE expert tensors to system RAM, the attention and dense weights staying on the GPU
    # (llama.cpp --n-cpu-moe): the model the user named, at a decode cost, rather than another weight format
    offload_experts: bool = False


@dataclass(frozen=True)
class EngineModule:
    """One engine, as the rest of oomkit sees it."""

    name: str  # "llama.cpp", "vllm", ...
    Settings: type
    estimate_fn: Callable[..., MemoryEstimate]  # (spec, devices, settings) -> MemoryEstimate
    parse_args_fn: ParseArgs
    flag_takes_value_fn: Callable[[str, str | None], bool]
    context_field: str  # the Settings field holding the context length (n_ctx, max_model_len, ...)
    # engine-neutral option (ctx, parallel, kv_type, engine_version, kv_memory) -> the Settings field(s) it sets
    neutral: Mapping[str, str | tuple[str, ...]] = field(default_factory=dict)
    kv_types: tuple[str, ...] = ("default",)  # the KV cache types tables and the planner offer, by the engine's names
    kv_fields: tuple[str, ...] = ()  # the Settings fields one KV type sets (llama.cpp: -ctk and -ctv)
    headline: tuple[str, ...] = ()  # the effective settings worth a glance in a report, by the engine's names
    aliases: tuple[str, ...] = ()  # other spellings of the name (--engine lmstudio)
    # executable name -> the program variant its parser is told (llama-cli and llama-server differ in defaults)
    programs: Mapping[str, str | None] = field(default_factory=dict)
    python_modules: Mapping[str, str | None] = field(default_factory=dict)  # `python -m X` -> program variant
    subcommands: tuple[str, ...] = ()  # when set, a program is this engine only with one of these (ollama run)
    newest: str = ""  # the newest release whose rules are modelled (the --engine-version default)
    eras: Mapping[str, Any] = field(default_factory=dict)
    default_format_fn: Callable[[dict[str, Any]], str | None] = _as_published  # None: the checkpoint as published
    loads_gguf: bool = False  # a model named by an Ollama tag or GGUF repo runs as that GGUF
    # MLX conversions (mlx_lm.convert -q: packed uint32 weights with scales and biases, config.json "quantization")
    # load in mlx-lm only; another engine that loads checkpoints refuses them
    loads_mlx: bool = False
    with_context_fn: Callable[[Any, int], Any] | None = None  # None: set context_field
    # settings -> the same with the engine's own fitting to memory off (llama.cpp -fit off): the layout as typed,
    # for the questions asked of it (the VRAM tables, the KV headroom); None: the engine does not refit
    typed_layout_fn: Callable[[Any], Any] | None = None
    # spec -> the KV cache types the engine offers for that model, where it depends on the model (Ollama's MLX
    # runner has one); None: kv_types
    kv_types_fn: Callable[[ModelSpec], tuple[str, ...]] | None = None
    # the context the engine settled on, from its estimate (None: the estimate's settings[context_field])
    effective_context_fn: Callable[[MemoryEstimate], int | None] | None = None
    # (model argument, settings, quant or None) -> the command line as typed (argv, leading VAR=value for the
    # environment the engine reads); parse_args of it gives back the same settings. None: no command line.
    format_command_fn: Callable[[str, Any, str | None], list[str]] | None = None
    # (the user's argv, the settings it parsed to, the new settings) -> the same argv with only the flags of the
    # changed fields replaced, added or removed
    rewrite_command_fn: Callable[[list[str], Any, Any], list[str]] | None = None
    # (spec, devices, base settings, goals) -> the settings the planner tries (engines/<engine>/knobs.py)
    knobs_fn: Callable[..., Any] | None = None
    # (argv, nodes) -> ((node label, the lines to run there), ...): the launch across machines (engines/<e>/cluster.py)
    # settings -> ((field, value, why), ...): single moves that cost memory back without changing what the user
    # asked for (llama.cpp: --swa-full off, a smaller -ub; vLLM: CUDA graphs off, a higher utilization); fit tries them
    relief_fn: Callable[[Any, dict[str, Any]], Iterable[tuple[str, Any, str]]] | None = None
    # (spec, devices, the user's settings) -> (field, values, most on the GPU first): the layer count fit may write
    # for an engine that splits layers with the CPU by itself, where its own split does not fit (Ollama num_gpu);
    # the planner keeps the engine's own split. None: the knobs' offload only
    fit_offload_fn: Callable[[Any, tuple[Device, ...], Any], tuple[str, tuple[Any, ...]] | None] | None = None
    # (settings, their estimate) -> the settings with the change the engine's own refusal names as its fix (vLLM:
    # "Please lower max_num_seqs to at most N"), which the planner writes rather than give the option up; None: none
    settle_fn: Callable[[Any, MemoryEstimate], Any | None] | None = None
    # (model argument, settings) -> {name: text}: other forms of the launch (an Ollama Modelfile, a Python snippet)
    extras_fn: Callable[[str, Any], dict[str, str]] | None = None
    cluster_fn: Callable[[list[str], int], tuple[tuple[str, tuple[str, ...]], ...]] | None = None
    # (settings, argv) -> oomkit's own flags that size the run and that no flag of the engine's program carries (MLX:
    # the prompt's length, mlx_lm reads the prompt as text), for `oomkit estimate -- ARGV FLAGS`; none that argv
    # already names. None: the command carries all it runs with.
    sizing_flags_fn: Callable[[Any, Sequence[str]], list[str]] | None = None
    # settings -> one-line notes on how the command as typed reaches the engine (Ollama: server variables given to
    # `ollama run`, which the running server never sees); None: nothing to say
    command_notes_fn: Callable[[Any], tuple[str, ...]] | None = None
    # (spec, settings) -> the model as the settings change its config (vLLM --hf-overrides); None: as resolved
    model_fn: Callable[[Any, Any], Any] | None = None
    # text given as MODEL -> the refusal naming the oomkit form, when it is the engine's own configuration file (an
    # Ollama Modelfile, a vLLM --config YAML; several lines each); None: not one (pasted.pasted_file_hint)
    file_hint_fn: Callable[[str], str | None] | None = None

    def settings(self, **options: Any) -> Any:
        return self.Settings(**options)

    def estimate(self, spec: Any, devices: tuple[Device, ...], settings: Any) -> MemoryEstimate:
        est = self.estimate_fn(spec, devices, settings)
        notes = [n for n in (self._newer_than_modelled(settings), unmodelled_note(settings))
                 if n is not None and n not in est.warnings]
        return replace(est, warnings=(*est.warnings, *notes)) if notes else est

    def _newer_than_modelled(self, settings: Any) -> str | None:
        """A release newer than the newest whose rules are modelled runs under the newest rules: said, not silent
        (llama.cpp's build tags say it in their own words, engines/llamacpp/settings.py)."""
        name = self.neutral.get("engine_version")
        given = getattr(settings, name, None) if isinstance(name, str) else None
        mine, newest = _release(given), _release(self.newest)
        if mine is None or newest is None or mine <= newest:
            return None
        return (f"{self.name} {given.strip()} is newer than the newest release oomkit models ({self.newest}): its "
                "newest rules apply")

    def model_for(self, spec: Any, settings: Any) -> Any:
        """The model as these settings load it (model_fn): what the largest-context search and the notes weigh."""
        return spec if self.model_fn is None else self.model_fn(spec, settings)

    def settle(self, settings: Any, est: MemoryEstimate) -> Any | None:
        """The settings with the fix the engine's own refusal of them names (settle_fn), or None."""
        return None if self.settle_fn is None else self.settle_fn(settings, est)

    def sizing_flags(self, settings: Any, argv: Sequence[str] = ()) -> list[str]:
        """oomkit's flags beyond the written command that reproduce its estimate (sizing_flags_fn), or none."""
        return [] if self.sizing_flags_fn is None else list(self.sizing_flags_fn(settings, tuple(argv)))

    def command_notes(self, settings: Any) -> tuple[str, ...]:
        """What to tell the user about their command as typed (command_notes_fn)."""
        return () if self.command_notes_fn is None else tuple(self.command_notes_fn(settings))

    def with_context(self, settings: Any, n_ctx: int) -> Any:
        """The same settings at another context length (the largest-context search turns this knob)."""
        if self.with_context_fn is not None:
            return self.with_context_fn(settings, n_ctx)
        return replace(settings, **{self.context_field: n_ctx})

    def typed_layout(self, settings: Any) -> Any:
        """The settings loaded as typed, without the engine fitting them to the memory first."""
        return settings if self.typed_layout_fn is None else self.typed_layout_fn(settings)

    def kv_types_of(self, spec: ModelSpec) -> tuple[str, ...]:
        """The KV cache types tables, checks and plans offer for `spec`."""
        return self.kv_types if self.kv_types_fn is None else self.kv_types_fn(spec)

    def with_kv_type(self, settings: Any, kv: str) -> Any:
        """The same settings with KV cache type `kv` (one of kv_types, or another the engine accepts)."""
        if self.kv_fields:
            return replace(settings, **{f: kv for f in self.kv_fields})
        if kv == "default":
            return settings
        raise OomkitError(f"the {self.name} engine has no KV cache type setting")

    def effective_context(self, est: MemoryEstimate) -> int | None:
        """The context length the engine runs with, after its defaults and padding."""
        if self.effective_context_fn is not None:
            return self.effective_context_fn(est)
        return est.settings.get(self.context_field)

    def parse_args(self, argv: list[str], env: dict[str, str] | None = None, program: str | None = None
                   ) -> tuple[str | None, str | None, Any]:
        """The engine's own flags (no program name) -> (model argument, quant or None, Settings).
        env: the engine's environment variables (OLLAMA_*), None for os.environ."""
        return self.parse_args_fn(argv, env) if program is None else self.parse_args_fn(argv, env, program)

    def knobs(self, model: str, spec: Any, devices: tuple[Device, ...], base: Any, *, concurrency: int = 1,
              fixed_format: bool = False, reserve_bytes: int = 0, nodes: int = 1) -> tuple[Choice, ...]:
        """The settings the planner tries for `model` on `devices`, starting from the user's `base` settings.
        fixed_format: the weights cannot change (a local file); reserve_bytes: per device, held by other programs;
        nodes: the devices are spread evenly over this many machines."""
        if self.knobs_fn is None:
            return (Choice(base, "as given"),)
        return tuple(self.knobs_fn(model, spec, devices, base, concurrency=concurrency, fixed_format=fixed_format,
                                   reserve_bytes=reserve_bytes, nodes=nodes))

    def relief(self, settings: Any, effective: dict[str, Any] | None = None) -> tuple[tuple[str, Any, str], ...]:
        """Moves that give memory back without changing the model, context or concurrency asked for; `effective`:
        the settings as the engine settles them for these devices (an estimate's settings), where a move starts
        from a default the engine picks itself."""
        return () if self.relief_fn is None else tuple(self.relief_fn(settings, effective or {}))

    def fit_offload(self, spec: Any, devices: tuple[Device, ...], settings: Any) -> tuple[str, tuple[Any, ...]] | None:
        """The layer count fit may turn for an engine that splits by itself (fit_offload_fn), or None."""
        return None if self.fit_offload_fn is None else self.fit_offload_fn(spec, devices, settings)

    def extras(self, model: str, settings: Any) -> dict[str, str]:
        """Other forms of the launch than the command line, by name ("modelfile", "snippet")."""
        return {} if self.extras_fn is None else self.extras_fn(model, settings)

    def command(self, model: str, settings: Any, quant: str | None = None) -> list[str]:
        """The command line (argv) that runs `model` with `settings`, as a user types it."""
        if self.format_command_fn is None:
            raise OomkitError(f"the {self.name} engine has no command line")
        return self.format_command_fn(model, settings, quant)

    def rewrite_command(self, argv: list[str], old: Any, new: Any) -> list[str]:
        """The user's own command line with only the flags of the fields that differ between old and new changed."""
        if self.rewrite_command_fn is None:
            raise OomkitError(f"the {self.name} engine has no command line")
        return self.rewrite_command_fn(argv, old, new)

    def flag_takes_value(self, name: str, following: str | None) -> bool:
        """Whether flag `name` consumes the next argument."""
        return self.flag_takes_value_fn(name, following)

    def default_weight_format(self, config: dict[str, Any]) -> str | None:
        """The weight format the engine loads for a model named without one (None: the checkpoint's own)."""
        return self.default_format_fn(config)

    def neutral_fields(self, option: str) -> tuple[str, ...]:
        """The Settings fields an engine-neutral option sets (none when the engine has no such knob)."""
        target = self.neutral.get(option)
        if target is None:
            return ()
        return target if isinstance(target, tuple) else (target,)


# ---------------------------------------------------------------------------------------------------------
# The registry: engine name -> its package under oomkit.engines, imported on first use by name (importlib; each
# package costs milliseconds to tens of them, and a command needs one engine). The names that pick an engine before
# its package is loaded (the spellings users type, the programs and `python -m` modules whose command lines it
# reads) are kept here as small static tables; each engine record still owns what it does with them (the program
# variant its parser is told), and tests/test_engine_registry.py checks the tables against the records.

_PACKAGES = {"llama.cpp": "llamacpp", "ollama": "ollama", "vllm": "vllm", "sglang": "sglang",
             "transformers": "transformers", "mlx": "mlx"}
# --engine names for LM Studio: its llama.cpp runtime's, but an MLX model's are its MLX engine's (lms_keys.py,
# commands/_model_args.py reads MODEL as `lms load MODEL` does)
LM_STUDIO_NAMES = ("lmstudio", "lm-studio")
# other spellings of an engine's name -> the engine (each record's `aliases`)
_ALIASES = {**dict.fromkeys(("llamacpp", "llama-cpp", "llama_cpp", "llama-server", "llama-cli", *LM_STUDIO_NAMES),
                            "llama.cpp"),
            **dict.fromkeys(("mlx-lm", "mlx_lm"), "mlx")}
# executable name -> the engine whose command line it starts (each record's `programs`)
_PROGRAMS = {**dict.fromkeys(("llama-server", "server", "llama-cli", "llama-completion", "llama-run", "main",
                              "llama-mtmd-cli", "llama-llava-cli", "llama-gemma3-cli", "llama-qwen2vl-cli",
                              "llama-perplexity", "perplexity", "llama-imatrix", "imatrix", "llama-embedding",
                              "embedding", "llama-fit-params", "llama-bench", "lms"), "llama.cpp"),
             "ollama": "ollama", "vllm": "vllm", "sglang": "sglang",
             **dict.fromkeys(("mlx_lm.server", "mlx_lm.generate", "mlx_lm.chat", "mlx_lm"), "mlx")}
# `python -m MODULE` -> the engine (each record's `python_modules`)
_MODULES = {"llama_cpp.server": "llama.cpp", "vllm.entrypoints.openai.api_server": "vllm",
            "vllm.entrypoints.api_server": "vllm", "sglang.launch_server": "sglang",
            **dict.fromkeys(("mlx_lm.server", "mlx_lm.generate", "mlx_lm.chat", "mlx_lm"), "mlx")}


def _load(name: str) -> EngineModule:
    return importlib.import_module(f"oomkit.engines.{_PACKAGES[name]}").ENGINE


def all_engines() -> tuple[EngineModule, ...]:
    """Every engine record (loads every engine package: for listings and searches over all of them)."""
    return tuple(_load(name) for name in _PACKAGES)


def get_engine(name: str) -> EngineModule:
    key = str(name).strip().lower()
    key = _ALIASES.get(key, key)
    if key in _PACKAGES:
        return _load(key)
    raise OomkitError(f"unknown engine {name!r}: known engines are {', '.join(sorted(_PACKAGES))}")


def engine_for_program(program: str, module: str | None = None) -> tuple[EngineModule, str | None] | None:
    """The engine whose command line starts with `program` (an executable name, or `python -m module`), and the
    program variant its parser is told; None when no engine runs as that program."""
    table, key = (_MODULES, module) if module is not None else (_PROGRAMS, program)
    if key not in table:
        return None
    eng = _load(table[key])
    variants = eng.python_modules if module is not None else eng.programs
    return eng, variants[key]


def _release(version: Any) -> tuple[int, int, int] | None:
    """"0.10.2", "v0.8", "0.11.0rc2" -> (0, 10, 2); a build tag, a date or anything else -> None."""
    m = re.match(r"\s*v?(\d{1,6})\.(\d{1,6})(?:\.(\d{1,6}))?(?![\d-])", version) if isinstance(version, str) else None
    return None if m is None else (int(m[1]), int(m[2]), int(m[3] or 0))
