"""`fit`: the user's own engine command, changed as little as possible so that it fits.

    fit(["llama-server", "-hf", "unsloth/Qwen3-8B-GGUF:Q4_K_M", "-c", "65536"], devices) -> Fit

The command is parsed the way the engine parses it; if it fits it comes back unchanged. Otherwise the planner's
knob space for that engine is turned one knob at a time, then two, then three — the KV cache type (with what it
needs, e.g. flash attention), the weight format, the context, part of the model in system RAM — each applied to the
user's own settings, and the fix that turns the fewest knobs wins. A knob the user typed costs more to turn than
one left at the engine's default, and a context the user typed costs most: it is what they asked for (a context
nobody asked for goes first, as llama.cpp's own --fit does). Among
equal turns: the more bits (quality), then the longer context, then the faster. The rewritten command keeps every
other token of the user's as typed (the engine record's rewrite_command).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, fields, replace
from typing import Any

from ..engines.base import Choice, EngineModule, get_engine
from ..engines.cmdline import parse_command
from ..engines.command import COMMAND_BREAK, leading_assignments, unwrap
from ..engines.llamacpp.args import HF_FILE_PLACEHOLDER, published_file
from ..engines.release_flags import reading_release
from ..errors import OomkitError
from ..limits import STEP, context_limit
from ..memory import Device, MemoryEstimate
from ..model.spec import ModelSpec
from ..request import resolve_model
from . import published, rating
from .options import (
    DEFAULT_MIN_CTX,
    Goals,
    budgets,
    engine_devices,
    first_ok,
    kv_type_of,
    largest_fitting,
    pool_ok,
    slack,
)


@dataclass(frozen=True)
class Change:
    flag: str  # the settings field, by the engine's own name
    before: Any
    after: Any
    why: str
    saves_bytes: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"flag": self.flag, "from": self.before, "to": self.after, "why": self.why,
                "saves_bytes": self.saves_bytes}


@dataclass(frozen=True)
class Fit:
    command_in: tuple[str, ...]
    command: tuple[str, ...] | None  # None: nothing fits this hardware
    changes: tuple[Change, ...]
    before: MemoryEstimate
    after: MemoryEstimate | None
    tier: int  # 1 all on the GPU(s), 2 part in system RAM, 3 nothing fits
    knobs: tuple[str, ...] = ()  # the knobs turned: context, kv, weights, offload, ...
    rating: rating.Rating | None = None
    plan: Any = None  # when nothing fits: the plan with its smallest hardware (tier 3)
    notes: tuple[str, ...] = ()
    # oomkit's flags beyond `command` that size it (engine.sizing_flags: MLX's prompt length, which mlx_lm takes as
    # text): `oomkit estimate -- COMMAND SIZING` gives back `after`; the command runs without them
    sizing: tuple[str, ...] = ()

    @property
    def fits(self) -> bool:
        return self.command is not None

    def to_dict(self) -> dict[str, Any]:
        return {"fit": {
            "command_in": rating.shell_join(self.command_in),
            "command": None if self.command is None else rating.shell_join(self.command),
            "changes": [c.to_dict() for c in self.changes], "knobs": list(self.knobs), "tier": self.tier,
            "before": self.before.to_dict(), "after": None if self.after is None else self.after.to_dict(),
            "speed": None if self.rating is None else self.rating.to_dict(),
            "smallest_hardware": None if self.plan is None or self.plan.smallest_hardware is None
            else self.plan.smallest_hardware.to_dict(),
            "notes": list(self.notes), "sizing": list(self.sizing)}}


@dataclass(frozen=True)
class _Candidate:
    settings: Any
    spec: ModelSpec
    quant: str | None
    model: str | None
    knobs: frozenset[str]
    user_knobs: int  # knobs turned that the user had set
    context: int | None  # per sequence
    tier: int
    estimate: MemoryEstimate
    offload: tuple[str, Any] | None = None
    weight_fields: frozenset[str] = frozenset()  # settings fields the weight choice set (an fp8 conversion at load)
    relief: tuple[str, str] | None = None  # (field, why) of a move that costs no context (engine.relief)
    relief_rank: int = 0  # the engine's order of those moves: the first costs least


def read_command(argv: list[str], env: dict[str, str] | None, engine_version: str | None) -> Any:
    """The engine command's settings, at the engine release whose rules apply (--engine-version: a vLLM or SGLang
    release, a llama.cpp build; no engine takes it on its own command line). `oomkit fit` reads the command once with
    it and hands the reading to fit (parsed=)."""
    with reading_release(engine_version):  # its abbreviations matched against that release's parser
        parsed = parse_command(list(argv), env)
    if engine_version is None:
        return parsed
    names = get_engine(parsed.engine).neutral_fields("engine_version")
    if not names:
        raise OomkitError(f"--engine-version does not apply to {parsed.engine}")
    return replace(parsed, settings=replace(parsed.settings, **{n: engine_version for n in names}))


def _program(argv: list[str]) -> str:
    """The engine program as typed, past a wrapper (docker run, sudo) and leading VAR=value assignments: `ollama
    serve`, not `OLLAMA_CONTEXT_LENGTH=131072`."""
    words = unwrap(argv).engine_argv
    words = words[leading_assignments(words)[1]:][:2]
    return " ".join(words) if len(words) == 2 and not words[1].startswith("-") else (words[0] if words else "engine")


def fit(argv: list[str], devices: tuple[Device, ...], goals: Goals | None = None,
        env: dict[str, str] | None = None, engine_version: str | None = None, parsed: Any = None) -> Fit:
    """`parsed`: read_command(argv, env, engine_version) where the caller has read it already (oomkit fit reads
    the command's visible-devices variables before the GPUs are known)."""
    goals = goals or Goals()
    parsed = parsed if parsed is not None else read_command(argv, env, engine_version)
    if parsed.model is None:
        raise OomkitError(f"the {_program(argv)} command names no model: give the command that loads one "
                          "(ollama run MODEL, with the server's variables before it)"
                          if parsed.engine == "ollama" else f"the {_program(argv)} command names no model")
    eng = get_engine(parsed.engine)
    user = parsed.settings
    spec = eng.model_for(resolve_model(eng, parsed.model, parsed.quant), user)
    devs = engine_devices(devices, goals)
    limits = budgets(devices, goals)
    if any(limits[d.id] is None for d in devices) or not devices:
        raise OomkitError("fit needs the memory of every GPU: give --gpu NAME or --vram SIZE")
    before = eng.estimate(spec, devs, user)
    typed = eng.command_notes(user)  # how the command as typed reaches the engine (Ollama: server variables)
    if slack(before, limits, split_ok=False) >= 0:
        return Fit(tuple(argv), tuple(argv), (), before, before, 1,
                   rating=_rate(eng, before, user, spec, goals), notes=(*typed, *_past_training(eng, spec, before)))
    best, new_argv, reparsed, sizing = None, None, None, []
    for cand in _search(eng, parsed, spec, devs, limits, goals, dict(before.settings),
                        tuple(before.engine_view.get("fixes") or ())):
        try:  # the best change the command can carry (lms load has flags for the context and --gpu only)
            new_argv = _rename_model(eng.rewrite_command(list(argv), user, cand.settings), parsed.model, cand.model,
                                     parsed.quant, cand.quant)
            # what the engine's program has no flag for rides on oomkit's own flags, outside the command (MLX)
            sizing = eng.sizing_flags(cand.settings, new_argv)
            reparsed = read_command([*new_argv, *sizing], env, engine_version)
        except OomkitError:
            continue
        best = cand
        break
    if best is None or new_argv is None or reparsed is None:
        from .search import plan  # lazy: the tier-3 answer only when nothing fits

        p = plan(parsed.model, eng.name, devices=devices, goals=_goals_at(goals, eng, before), settings=user,
                 quant=parsed.quant, limit=3)
        return Fit(tuple(argv), None, (), before, None, 3, plan=p,
                   notes=("nothing fits on these GPUs with any knob of this command", *typed))
    after = eng.estimate(best.spec, devs, reparsed.settings)
    changes = _changes(eng, user, best.settings, before, after, parsed.model, parsed.quant, best)
    two_lines = COMMAND_BREAK in new_argv  # how to run the engine's two commands (Ollama's server, then the model)
    sized = (f"the command runs as written; its figures hold for {' '.join(sizing)} (oomkit's flags for what it "
             "carries no flag of: --prompt-tokens is the prompt's length in tokens, sent with --prompt or - on "
             "stdin): add them to the command given to `oomkit estimate --` to check it",) if sizing else ()
    unnamed = [a for a in new_argv if best.quant and a == HF_FILE_PLACEHOLDER.format(best.quant.upper())]
    if unnamed:
        typed = (*typed, f"{unnamed[0]} is a placeholder: oomkit does not know the name of {best.model or parsed.model}'s "
                 f"{best.quant.upper()} file; put it in place of {unnamed[0]}")
    notes = tuple(dict.fromkeys((*typed, *(eng.command_notes(reparsed.settings) if two_lines else ()),
                                 *_past_training(eng, best.spec, after), *sized)))
    return Fit(tuple(argv), tuple(new_argv), changes, before, after, best.tier, knobs=tuple(sorted(best.knobs)),
               rating=_rate(eng, after, reparsed.settings, best.spec, goals), notes=notes, sizing=tuple(sizing))


def _past_training(eng: EngineModule, spec: ModelSpec, est: MemoryEstimate) -> tuple[str, ...]:
    """The note a context above the model's trained maximum takes (as check gives it), or none."""
    from ..check import context_note  # lazy: check's hardware targets are not fit's

    return tuple(n for n in (context_note(spec, eng.effective_context(est))[1],) if n)


def _goals_at(goals: Goals, eng: EngineModule, est: MemoryEstimate) -> Goals:
    n = eng.effective_context(est)
    return goals if goals.min_ctx else replace(goals, min_ctx=n)


def _rate(eng: EngineModule, est: MemoryEstimate, settings: Any, spec: ModelSpec, goals: Goals) -> rating.Rating:
    ctx = eng.effective_context(est) or STEP
    return rating.rate(est, spec.weights.format, kv_type_of(eng, est), ctx, goals.ram_bandwidth_gbs)


# ---------------------------------------------------------------------------------------------------------
# The search over knob turns


@dataclass(frozen=True)
class _Weights:
    """One weight choice: the format to resolve, the model argument naming it, the settings fields it sets."""

    quant: str | None
    model: str | None
    fmt: str | None
    fields: tuple[tuple[str, Any], ...]


def _search(eng: EngineModule, parsed: Any, spec: ModelSpec, devs: tuple[Device, ...],
            limits: dict[str, int | None], goals: Goals, effective: dict[str, Any],
            named_fixes: tuple[str, ...] = ()) -> Iterator[_Candidate]:
    """Knob turns level by level (one knob, then two, then three), all on the GPUs before part in system RAM.
    Within a tier a fix that leaves every flag the user typed wins over one with fewer knobs that changes one.
    The fixes best first (lazily: the ones with part in system RAM are searched only when the caller asks past
    those on the GPUs)."""
    turns = _Turns(eng, parsed, spec, devs, limits, goals, effective, named_fixes)
    for allow_offload in (False, True):
        found: list[_Candidate] = []
        for level in (1, 2, 3):
            found += turns.level(level, allow_offload)
            if any(c.user_knobs == 0 and not _last_resort(c) for c in found):
                break
        if not allow_offload and turns.offload_experts and not any(c.user_knobs == 0 for c in found):
            # Every all-GPU fix turns a knob the user typed (the weights they named, the context they asked). A MoE
            # model's experts in system RAM (llama.cpp --n-cpu-moe N, common/arg.cpp: the expert tensors of the first
            # N layers on the CPU, attention and dense weights on the GPU; what llama.cpp's own --fit moves first,
            # common/fit.cpp) keep what they typed, at a decode cost: that one knob nobody typed goes first.
            yield from sorted((c for c in turns.level(1, True) if c.knobs == {"offload"} and c.user_knobs == 0),
                              key=lambda c: c.offload[1] if c.offload else 0)
        yield from sorted(found, key=lambda c: (_last_resort(c), c.user_knobs, len(c.knobs), c.tier,
                                                *_quality_key(eng, c), -(c.context or 0), c.relief_rank))


# Weight conversions at load that the engine itself calls slow: vLLM's in-flight bitsandbytes ("bitsandbytes
# quantization is not fully optimized yet. The speed can be slower than non-quantized models", 0.6's config.py
# warning) is chosen only when no other fix keeps the model on the GPUs.
_LAST_RESORT_QUANTIZATION = frozenset({"bitsandbytes"})


def _last_resort(c: _Candidate) -> bool:
    return getattr(c.settings, "quantization", None) in _LAST_RESORT_QUANTIZATION and "quantization" in c.weight_fields


class _Turns:
    """The knobs of one user's command: KV variants, weight variants, the engine's relief moves, the context and
    the offload field, each applied to the user's own settings."""

    def __init__(self, eng: EngineModule, parsed: Any, spec: ModelSpec, devs: tuple[Device, ...],
                 limits: dict[str, int | None], goals: Goals, effective: dict[str, Any] | None = None,
                 named_fixes: tuple[str, ...] = ()):
        self.eng, self.parsed, self.spec, self.devs, self.limits, self.goals = eng, parsed, spec, devs, limits, goals
        self.named_first = _named_field(named_fixes[0]) if named_fixes else None
        self.user = parsed.settings
        self.defaults = eng.settings()
        choices = eng.knobs(parsed.model, spec, devs, self.user, concurrency=1, reserve_bytes=goals.most_held,
                            nodes=goals.nodes)
        kv_group = _kv_fields(choices)
        self.kv_variants = _distinct({f: getattr(c.settings, f) for f in kv_group
                                      if getattr(c.settings, f) != getattr(self.user, f)} for c in choices)
        # only formats the named GGUF repo publishes, where its listing is known (published.py)
        self.weights = [w for w in _weight_variants(choices, kv_group, self.user, spec)
                        if published.published(w.model or parsed.model, w.quant) is not False]
        # the GPUs' layout alone (vLLM -tp 2 with the checkpoint's own weights), one knob beside the weight formats
        # that carry it: before, -tp came only with a weight change (Qwen2.5-14B BF16 on 2x RTX 4090 got fp8 too)
        layout = _layout(choices, self.user)
        if layout:
            self.weights.insert(0, _Weights(None, None, None, layout))
        self.offload = next((c.offload for c in choices if c.offload is not None), None)
        # else the layer count of an engine that splits by itself (Ollama num_gpu), fit's alone: a short list, each
        # value tried in turn, since the engine's scheduler may place fewer layers worse (Ollama at num_gpu N looks
        # for one GPU that holds the N layers before spreading them: server/sched.go pickBestFullFitByLibrary)
        self.offload_scan = self.offload is None
        self.offload = self.offload or eng.fit_offload(spec, devs, self.user)
        self.offload_experts = any(c.offload_experts for c in choices if c.offload is not None)
        self.reliefs = eng.relief(self.user, effective)
        self.user_ctx = _context(eng, self.user, spec, devs)
        ctx = eng.context_field
        self.ctx_set = getattr(self.user, ctx) != getattr(self.defaults, ctx)
        self.specs: dict[tuple[str | None, str | None], ModelSpec | None] = {}

    def spec_for(self, w: _Weights | None) -> ModelSpec | None:
        if w is None:
            return self.spec
        key = (w.model, w.quant)
        if key not in self.specs:
            try:
                self.specs[key] = resolve_model(self.eng, w.model or self.parsed.model, w.quant) \
                    if w.quant or w.model else self.spec
            except OomkitError:
                self.specs[key] = None
        return self.specs[key]

    def _set_by_user(self, name: str) -> bool:
        return getattr(self.user, name) != getattr(self.defaults, name)

    def level(self, level: int, allow_offload: bool) -> list[_Candidate]:
        """Every combination of exactly `level` knobs (the last one may be the context or the offload)."""
        out = []
        for w in (None, *self.weights):
            for kv in ({}, *self.kv_variants):
                for rank, r in enumerate((None, *self.reliefs)):
                    turned = (w is not None) + bool(kv) + (r is not None)
                    extra = level - turned
                    if extra < 0 or extra > 1:
                        continue
                    cspec = self.spec_for(w)
                    if cspec is None:
                        continue
                    out += self._tries(cspec, w, kv, r, rank, extra, allow_offload)
        return out

    def _tries(self, cspec: ModelSpec, w: _Weights | None, kv: dict[str, Any], r: tuple[str, Any, str] | None,
               rank: int, extra: int, allow_offload: bool) -> list[_Candidate]:
        settings = replace(self.user, **kv, **dict(w.fields if w else ()), **({r[0]: r[1]} if r else {}))
        turned = "weights" if w and (w.quant or w.model or w.fmt) else "layout"
        knobs = ({"kv"} if kv else set()) | ({turned} if w else set()) | ({r[0]} if r else set())
        user_set = sum(1 for f in kv if self._set_by_user(f)) + (1 if w and self.parsed.quant else 0) + \
            (1 if r and self._set_by_user(r[0]) and not _within_typed_budget(self.user, r, self.named_first) else 0)
        e, args = self.eng, (self.devs, self.limits, self.goals, self.user_ctx)
        tries = [""] if extra == 0 else ["context", "offload"] if allow_offload else ["context"]
        if extra == 1 and not allow_offload and self.offload_scan and self.offload \
                and not self._set_by_user(self.offload[0]):
            tries.append("layers")
        out = []
        for what in tries:
            if what == "":
                cand = _try(e, cspec, settings, *args)
            elif what == "context":
                cand = _shorter(e, cspec, settings, *args)
            elif what == "layers":
                cand = _all_layers(e, cspec, settings, self.offload[0], *args)
            else:
                cand = _offloaded(e, cspec, settings, self.offload, *args, scan=self.offload_scan)
            if cand is not None:
                out.append(replace(cand, quant=w.quant if w else None, model=w.model if w else None,
                                   knobs=frozenset(knobs | ({what} if what else set())),
                                   user_knobs=user_set + (2 if what == "context" and self.ctx_set else 0),
                                   weight_fields=frozenset(dict(w.fields)) if w else frozenset(),
                                   relief=None if r is None else (r[0], r[2]), relief_rank=rank))
        return out


# The share of each GPU the engine may claim for weights and its KV pool (vLLM --gpu-memory-utilization,
# config/cache.py CacheConfig: "the fraction of GPU memory to be used for the model executor"; SGLang
# --mem-fraction-static, server_args.py: "the fraction of the memory used for static allocation (model weights and
# KV cache memory pool)"). A value the user typed is a ceiling they set, not a result they asked for: a lower one
# stays within it and costs only KV pool tokens, and it is the first fix the engine's own error names for a phase
# allocated after the pool (SGLang cuda_graph_runner.py: "1. set --mem-fraction-static to a smaller value"; vLLM
# gpu_model_runner.py _dummy_sampler_run: "try lowering `max_num_seqs` or `gpu_memory_utilization`"). So lowering
# it counts as no typed knob turned (NVIDIA/srt-slurm#172: the reporter lowered 0.95), while raising it past the
# typed ceiling still does. Where the engine's own words for the failure name another knob first (the estimate's
# engine_view["fixes"], in the engine's order: vLLM's sampler warm-up "lower --max-num-seqs to N" before the
# utilization), the typed fraction is kept and that knob turned, as vLLM's message puts it.
_BUDGET_FRACTIONS = frozenset({"gpu_memory_utilization", "mem_fraction_static"})


def _within_typed_budget(user: Any, r: tuple[str, Any, str], named_first: str | None = None) -> bool:
    typed = getattr(user, r[0], None)
    return (r[0] in _BUDGET_FRACTIONS and isinstance(typed, float) and isinstance(r[1], float) and r[1] < typed
            and named_first in (None, r[0]))


def _named_field(fix: str) -> str | None:
    """The settings field a fix in the engine's words names: "lower --max-num-seqs to 512" -> max_num_seqs."""
    m = re.search(r"--([a-z0-9][a-z0-9-]*)", fix)
    return m.group(1).replace("-", "_") if m else None


def _distinct(dicts: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for d in dicts:
        if d and d not in out:
            out.append(d)
    return out


def _quality_key(eng: EngineModule, c: _Candidate) -> tuple[float, tuple[float, ...]]:
    bits = c.estimate.weights_bytes * 8 / max(c.estimate.model.params_total, 1)
    kv = rating.kv_order(kv_type_of(eng, c.estimate))  # the weaker half first, then K (rating.kv_order)
    return (-round(bits, 2), tuple(-b for b in kv))


def _kv_fields(choices: tuple[Choice, ...]) -> tuple[str, ...]:
    """The fields that vary between choices of one weight format: the KV knob with what it needs (flash
    attention for a quantized V cache in llama.cpp)."""
    by_format: dict[tuple[Any, Any, Any], list[Any]] = {}
    for c in choices:
        by_format.setdefault((c.quant, c.model, c.weight_format), []).append(c.settings)
    out: list[str] = []
    for group in by_format.values():
        for f in fields(group[0]):
            values = {repr(getattr(s, f.name)) for s in group}
            if len(values) > 1 and f.name not in out:
                out.append(f.name)
    return tuple(out)


def _weight_variants(choices: tuple[Choice, ...], kv_group: tuple[str, ...], user: Any,
                     spec: ModelSpec) -> list[_Weights]:
    """The weight choices other than the user's own: a GGUF type, a variant repo, an fp8 conversion at load."""
    out: list[_Weights] = []
    for c in choices:
        moved = tuple((f.name, getattr(c.settings, f.name)) for f in fields(c.settings)
                      if f.name not in kv_group and c.weight_format and getattr(c.settings, f.name) != getattr(user, f.name)
                      and f.name != "env")
        same = (c.quant is None or c.quant.upper() == spec.weights.format.upper()) and not c.weight_format
        if same and (c.model is None or c.quant is not None):
            continue
        w = _Weights(c.quant, c.model, c.weight_format, moved)
        if w not in out:
            out.append(w)
    return out


# The fields that lay the model out over the GPUs (vLLM EngineArgs, SGLang ServerArgs): what every choice of the
# engine's knobs sets alike for these devices, whatever the weights
_LAYOUT_FIELDS = ("tensor_parallel_size", "pipeline_parallel_size", "enable_expert_parallel", "tp_size", "nnodes")


def _layout(choices: tuple[Choice, ...], user: Any) -> tuple[tuple[str, Any], ...]:
    """The layout fields every choice sets to one value other than the user's, as (field, value) pairs."""
    out = []
    for name in _LAYOUT_FIELDS:
        values = {repr(getattr(c.settings, name, None)) for c in choices}
        if choices and len(values) == 1 and hasattr(user, name) \
                and getattr(choices[0].settings, name) != getattr(user, name):
            out.append((name, getattr(choices[0].settings, name)))
    return tuple(out)


def _context(eng: EngineModule, settings: Any, spec: ModelSpec, devs: tuple[Device, ...]) -> int:
    """The context the user's command runs with on these GPUs (the engine's own default when none is given: Ollama's
    depends on their memory, server/routes.go from v0.15.5: 262144 from 47 GiB, 32768 from 23 GiB, else 4096)."""
    try:
        est = eng.estimate(spec, devs, settings)
    except OomkitError:
        return context_limit(spec)
    return eng.effective_context(est) or context_limit(spec)


def _at(eng: EngineModule, spec: ModelSpec, settings: Any, devs: tuple[Device, ...], limits: dict[str, int | None],
        goals: Goals, ctx: int | None, split_ok: bool = False) -> MemoryEstimate | None:
    s = settings if ctx is None else eng.with_context(settings, ctx)
    try:
        est = eng.estimate(spec, devs, s)
    except OomkitError:
        return None
    if ctx is not None and not pool_ok(est, ctx, goals.concurrency):
        return None
    return est if slack(est, limits, split_ok) >= 0 else None


def _try(eng: EngineModule, spec: ModelSpec, settings: Any, devs: tuple[Device, ...],
         limits: dict[str, int | None], goals: Goals, ctx: int) -> _Candidate | None:
    est = _at(eng, spec, settings, devs, limits, goals, None)
    if est is None:
        return None
    return _Candidate(settings, spec, None, None, frozenset(), 0, ctx, 1, est)


def _shorter(eng: EngineModule, spec: ModelSpec, settings: Any, devs: tuple[Device, ...],
             limits: dict[str, int | None], goals: Goals, ctx: int) -> _Candidate | None:
    """The largest context below the user's that fits, and not below a usable one: the asked minimum (--min-ctx),
    else the plan's DEFAULT_MIN_CTX or the user's own context where that is smaller. A context cut to a few hundred
    tokens is no fix: another knob, or part of the model in system RAM, is."""
    def at(n: int) -> int | None:
        # the bytes to spare, not just yes or no: largest_context interpolates on them
        try:
            est = eng.estimate(spec, devs, eng.with_context(settings, n))
        except OomkitError:
            return None
        return slack(est, limits) if pool_ok(est, n, goals.concurrency) else -1

    floor = goals.min_ctx or min(DEFAULT_MIN_CTX, ctx)
    n = largest_fitting(at, ctx - 1, STEP)
    if n is None or n < floor:
        return None
    s = eng.with_context(settings, n)
    return _Candidate(s, spec, None, None, frozenset(), 0, n, 1, eng.estimate(spec, devs, s))


def _all_layers(eng: EngineModule, spec: ModelSpec, settings: Any, name: str, devs: tuple[Device, ...],
                limits: dict[str, int | None], goals: Goals, ctx: int) -> _Candidate | None:
    """Every layer on the GPUs, typed, for an engine that splits layers off by itself (Ollama's num_gpu). Where
    llm/memory.go EstimateGPULayers decides (to v0.12.10) Ollama replaces num_gpu by its estimate's count only when
    it is -1 (llm/server.go NewLlamaServer, v0.9.3: `case opts.NumGPU < 0 && estimate.Layers > 0`; llamaServer.Load
    from v0.11.5, the same switch) and passes an explicit count to the runner as given; from v0.11.5's new
    estimates and v0.12.11 createLayout lays out the count it is given (findBestFit: "pretend we have almost
    infinite VRAM"). So where Ollama's estimate is above what the runner allocates, num_gpu = all the layers keeps
    the whole model on the GPUs at the context asked: a fix on the GPUs, as users make it (a Modelfile's PARAMETER
    num_gpu, Open WebUI's num_gpu). The estimate (engines/ollama layout) tells whether the runner's allocation at
    that count fits the GPUs; none where it does not."""
    s = replace(settings, **{name: spec.n_trunk_layers + 1})  # the repeating layers and the output layer
    est = _at(eng, spec, s, devs, limits, goals, None)  # fits as check has it: the layers all on the GPUs
    if est is None:
        return None
    return _Candidate(s, spec, None, None, frozenset(), 0, ctx, 1, est, offload=(name, spec.n_trunk_layers + 1))


def _offloaded(eng: EngineModule, spec: ModelSpec, settings: Any, offload: tuple[str, tuple[Any, ...]] | None,
               devs: tuple[Device, ...], limits: dict[str, int | None], goals: Goals, ctx: int,
               scan: bool = False) -> _Candidate | None:
    """The least offload (most on the GPU) that fits at the user's context: the GPUs within their memory, the rest
    in system RAM (a split the command asks for, which Ollama's estimate counts as no fit of its own). The values
    are bisected, or with `scan` tried in turn (an ok that does not stay true once it is)."""
    if offload is None:
        return None
    name, values = offload

    def ok(v: Any) -> bool:
        return _at(eng, spec, replace(settings, **{name: v}), devs, limits, goals, None, split_ok=True) is not None

    k = next((i for i, v in enumerate(values) if ok(v)), None) if scan else first_ok(values, ok)
    if k is None:
        return None
    s = replace(settings, **{name: values[k]})
    return _Candidate(s, spec, None, None, frozenset(), 0, ctx, 2, eng.estimate(spec, devs, s), offload=(name, values[k]))


# ---------------------------------------------------------------------------------------------------------
# What changed, and why


_WHY = {
    "kv": "a smaller KV cache type: the same context in fewer bytes",
    "context": "the largest context that fits",
    "weights": "a smaller weight format",
    "offload": "part of the model stays in system RAM (slower decode)",
    "layers": "every layer on the GPU: the engine's own estimate places fewer, but it passes a count it is given "
              "to the runner as is, and the runner's allocation holds them all",
}

_TP = "tensor parallel: each layer's weights and its KV cache split over {n} GPUs"

# What each settings field an engine's knobs (engines/*/knobs.py) may turn does, by the engine's own meaning of it
# ({n}: the new value). A field of the KV cache, the context or the offload is said by _WHY; every other field a
# choice sets has its own line here (tests/test_plan_explanations.py enumerates the knobs of every engine).
FIELD_WHY: dict[str, str] = {
    # vLLM engine/arg_utils.py EngineArgs; SGLang server_args.py ServerArgs
    "tensor_parallel_size": _TP,  # vLLM -tp
    "tp_size": _TP,  # SGLang --tp-size
    "pipeline_parallel_size": "pipeline parallel: the layers split into {n} stages, one after another, each on its "
                              "own GPUs (one stage per machine)",
    "enable_expert_parallel": "expert parallel: each GPU holds whole experts instead of a slice of every expert (a "
                              "block-FP8 checkpoint's slices at this tensor-parallel size are not whole blocks)",
    "nnodes": "the GPUs of {n} machines as one tensor-parallel group (SGLang --nnodes {n})",
    "max_num_seqs": "at most {n} sequences at once, the concurrency asked",
    "max_running_requests": "at most {n} requests at once, the concurrency asked",
    "max_num_batched_tokens": "a step's token budget of {n}, no less than the sequences at once (vLLM refuses a "
                              "budget below --max-num-seqs)",
    "gpu_memory_utilization": "the share of each GPU the engine claims ({n}): what other programs leave free",
    "quantization": "a smaller weight format: the weights quantized to {n} as they load, fewer bytes a parameter "
                    "than the checkpoint's",
    # llama.cpp common/arg.cpp
    "n_parallel": "{n} slots, one per sequence served at once (the context is shared among them)",
    "kv_unified": "one KV buffer shared by the slots (--kv-unified) only where several are asked",
    "tensor_split": "the layers split over the GPUs in proportion to their memory (-ts {n})",
    "n_gpu_layers": "every layer on the GPUs, typed (-ngl {n}), so --fit changes nothing at load",
    "flash_attn": "flash attention on: llama.cpp quantizes the V cache only with it (llama-context.cpp: \"V cache "
                  "quantization requires flash_attn\")",
    # Ollama envconfig / server
    "num_parallel": "{n} requests at once (OLLAMA_NUM_PARALLEL), each with its own context",
    "flash_attention": "flash attention on (OLLAMA_FLASH_ATTENTION): Ollama quantizes the KV cache only with it",
    # mlx_lm
    "q_bits": "a smaller weight format: the weights quantized to {n} bits (mlx_lm.convert -q --q-bits {n})",
    "batch": "{n} sequences decoded together, the concurrency asked",
    # transformers BitsAndBytesConfig
    "load_in_8bit": "a smaller weight format: the weights quantized to 8 bits as they load (bitsandbytes)",
    "load_in_4bit": "a smaller weight format: the weights quantized to 4 bits as they load (bitsandbytes)",
    "bnb_4bit_quant_type": "a smaller weight format: 4-bit weights of type {n} (bitsandbytes)",
    "batch_size": "{n} sequences in a batch, the concurrency asked",
}


def explain(field: str, value: Any) -> str | None:
    """What turning `field` to `value` does, in the engine's own meaning of the field; None: no line for it."""
    why = FIELD_WHY.get(field)
    if why is None:
        return None
    if isinstance(value, (list, tuple)):
        value = ",".join(map(str, value))
    return why.format(n=value)


def _changes(eng: EngineModule, old: Any, new: Any, before: MemoryEstimate, after: MemoryEstimate, model: str,
             quant: str | None, best: _Candidate) -> tuple[Change, ...]:
    saved = sum(u.total_bytes for u in before.devices) - sum(u.total_bytes for u in after.devices)  # on the GPUs
    out = []
    for f in fields(old):
        a, b = getattr(old, f.name), getattr(new, f.name)
        if a == b or f.name == "env" or before.settings.get(f.name, a) == after.settings.get(f.name, b):
            continue
        if best.relief is not None and f.name == best.relief[0]:
            why = best.relief[1]
        elif f.name == eng.context_field:
            why = _WHY["context"]
        elif best.offload is not None and f.name == best.offload[0]:
            why = _WHY["layers" if "layers" in best.knobs else "offload"]
        elif f.name in FIELD_WHY and f.name not in eng.kv_fields:
            why = explain(f.name, after.settings.get(f.name, b)) or _WHY["weights"]
        elif "kv" in best.knobs and f.name not in best.weight_fields:
            why = _WHY["kv"]
        elif "weights" not in best.knobs and "context" in best.knobs:
            why = _WHY["context"]  # a part of the context (mlx_lm's --prompt-tokens beside --max-tokens)
        else:
            why = _WHY["weights"]
        # shown as the engine runs them: the effective values (a context of 0 is the model's; Ollama's come from
        # OLLAMA_* variables, which the parsed settings keep in their environment)
        out.append(Change(f.name, before.settings.get(f.name, a), after.settings.get(f.name, b), why))
    if best.quant is not None or best.model is not None:
        was = f"{model}:{quant}" if quant else model
        now = f"{best.model or model}:{best.quant}" if best.quant else (best.model or model)
        if now != was:
            out.append(Change("model", was, now, _WHY["weights"] + _unlisted(best.model or model, best.quant)))
    if out:
        out[0] = replace(out[0], saves_bytes=saved)
    return tuple(out)


def _unlisted(model: str, quant: str | None) -> str:
    """What to say of a format named for a GGUF repo whose listing oomkit does not have (published.py)."""
    repo = published.gguf_repo_of(model)
    if repo is None or quant is None or published.published(model, quant) is not None:
        return ""
    return (f"; {repo} may not publish {quant.upper()} (oomkit has no listing of its files): make it with "
            "llama-quantize or download it from another GGUF repo of the model")


def _rename_model(argv: list[str], model: str, new_model: str | None, quant: str | None,
                  new_quant: str | None) -> list[str]:
    """The model argument with the new weight format: `repo:QUANT` (llama.cpp -hf, Ollama tags) or a variant repo.
    A llama.cpp command that names the file (-hff, which overrides a :QUANT tag and is all a build before PR #11195,
    b4470, takes) keeps the bare repo and gets the new quant's file: its name from the cached listing, else
    FILE-QUANT.gguf for the user to fill (HF_FILE_PLACEHOLDER; fit says so)."""
    if new_model is None and new_quant is None:
        return argv
    old = f"{model}:{quant}" if quant else model
    new = new_model or model
    at = next((i + 1 for i, a in enumerate(argv[:-1]) if a in HF_FILE_FLAGS), None)
    if at is not None and new_quant:
        argv = [*argv[:at], published_file(new, new_quant) or HF_FILE_PLACEHOLDER.format(new_quant.upper()),
                *argv[at + 1:]]
        return [new if a == old or a == model else a for a in argv]
    new = f"{new}:{new_quant}" if new_quant else new
    return [new if a == old or a == model else a for a in argv]


HF_FILE_FLAGS = ("-hff", "--hf-file")
