"""The planner: every setting an engine really has, tried against the devices; the ones that fit, as launch commands.

    plan("qwen3:8b", "llama.cpp", devices=..., goals=Goals(min_ctx=32768)) -> Plan

Each engine's knob space comes from its record (`engines/<engine>/knobs.py`): weight formats, KV cache types, flash
attention, parallel slots, tensor / pipeline parallelism, memory fractions, and the field that moves part of the
model to system RAM. For each choice the planner finds the largest context that fits (the same search `limits` uses)
and, when even the asked context does not fit on the GPUs, the least offload that makes it fit. The options are the
three tiers, in this order:

1. all on the GPU(s): a KV type, context, parallel slots or weight format that fits;
2. part of the model in system RAM (MoE experts first, then layers; Ollama splits by itself), with the speed cost;
3. nothing fits this hardware: the smallest GPU, or number of GPUs, from the GPU catalog that runs it (hardware.py).

Every option is re-estimated from its own command line (options.py).
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field, replace
from typing import Any

from ..engines.base import EngineModule, get_engine, unmodelled_note
from ..engines.command import COMMAND_BREAK
from ..engines.llamacpp.args import HF_FILE_PLACEHOLDER
from ..errors import OomkitError
from ..memory import Device
from ..model._bytes import check_path
from ..model.names import canonical_ref
from ..model.spec import ModelSpec
from ..request import model_and_quant, resolve_model
from . import published
from .family import family_members, survey
from .hardware import smallest_hardware
from .options import (
    DEFAULT_MIN_CTX,
    UNIFIED,
    Goals,
    Option,
    budgets,
    check_concurrency,
    estimates_kept,
    evaluate,
)
from .rating import USABLE_TOKENS_PER_S
from .speed import tps_number
from .together import Companion, companion, held


@dataclass(frozen=True)
class Plan:
    model: ModelSpec
    model_ref: str
    engine: str
    devices: tuple[Device, ...]
    goals: Goals
    options: tuple[Option, ...]  # the Pareto front, best first
    rejected: int  # choices that fit nowhere on this hardware
    smallest_hardware: Any = None  # hardware.Hardware when no option reaches the asked context on the GPUs
    notes: tuple[str, ...] = field(default=())
    companions: tuple[Companion, ...] = ()  # the models planned alongside

    @property
    def node_commands(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """The best option's launch on each machine when the GPUs span several (goals.nodes > 1)."""
        eng = get_engine(self.engine)
        if self.goals.nodes <= 1 or self.best is None or eng.cluster_fn is None:
            return ()
        return eng.cluster_fn(list(self.best.argv), self.goals.nodes)

    @property
    def best(self) -> Option | None:
        return self.options[0] if self.options else None

    @property
    def tier(self) -> int:
        """The best tier reached: 1, 2, or 3 (nothing fits this hardware)."""
        return self.best.tier if self.best is not None else 3

    def node_memory(self) -> list[int]:
        """What the best option holds on each machine's GPUs together (the devices split evenly by node)."""
        if self.best is None or self.goals.nodes <= 1:
            return []
        per = len(self.best.estimate.devices) // self.goals.nodes
        units = self.best.estimate.devices
        return [sum(u.total_bytes for u in units[i * per:(i + 1) * per]) for i in range(self.goals.nodes)]

    def to_dict(self) -> dict[str, Any]:
        m = self.model
        return {
            "plan": {
                "model": {"name": m.name, "ref": self.model_ref, "architecture": m.architecture,
                          "n_ctx_train": m.n_ctx_train, "params_total": m.params_total,
                          "params_active": m.params_active},
                "engine": self.engine,
                "devices": [{"id": d.id, "name": d.name, "memory_bytes": d.memory_bytes} for d in self.devices],
                "goals": {**self.goals.to_dict(), "min_ctx": self.goals.context_for(m)},
                "tier": self.tier,
                "options": [o.to_dict() for o in self.options],
                "smallest_hardware": None if self.smallest_hardware is None else self.smallest_hardware.to_dict(),
                "also": [c.to_dict() for c in self.companions],
                "nodes": [{"node": label, "commands": list(lines), "memory_bytes": mem}
                          for (label, lines), mem in zip(self.node_commands, self.node_memory(), strict=False)],
                "notes": list(self.notes),
            }
        }


# ---------------------------------------------------------------------------------------------------------
# The search


class _Model:
    """The model resolved once per weight format (resolving a GGUF recipe costs tens of milliseconds)."""

    def __init__(self, eng: EngineModule, ref: str | ModelSpec):
        self.eng, self.ref = eng, ref

    @functools.cache  # noqa: B019 - one planner run; the cache dies with it
    def spec(self, model: str | None, quant: str | None) -> ModelSpec:
        if isinstance(self.ref, ModelSpec):
            return self.ref
        return resolve_model(self.eng, model or self.ref, quant)


def plan(model: str | ModelSpec, engine: str = "llama.cpp", *, devices: tuple[Device, ...], goals: Goals | None = None,
         settings: Any = None, quant: str | None = None, fixed_format: bool | None = None,
         limit: int | None = 12, also: tuple[str, ...] = (), kv_type: str | None = None) -> Plan:
    """The settings of `engine` that run `model` on `devices` with `goals`, best first (at most `limit`).
    `model` may name a family ("qwen3", "llama 3.1"): the largest member that fits is planned (family.py).
    `also`: models planned alongside (a draft model, an embedding server: together.py), in what they leave.
    `kv_type`: the KV cache type asked for (--kv-type): only options with it are planned, and it is said so."""
    with estimates_kept():  # the run asks the engine some questions more than once: each answered once
        return _plan(model, engine, devices=devices, goals=goals, settings=settings, quant=quant,
                     fixed_format=fixed_format, limit=limit, also=also, kv_type=kv_type)


def _plan(model: str | ModelSpec, engine: str, *, devices: tuple[Device, ...], goals: Goals | None,
          settings: Any, quant: str | None, fixed_format: bool | None, limit: int | None, also: tuple[str, ...],
          kv_type: str | None) -> Plan:
    goals = goals or Goals()
    eng = get_engine(engine)
    check_concurrency(eng, settings if settings is not None else eng.settings(), goals.concurrency)
    if isinstance(model, str):
        model = canonical_ref(model)  # a pasted hub URL: the commands name the repo ("org/name"), not the URL
        model, quant = model_and_quant(model, quant)  # "X:Q4_K_M" keeps Q4_K_M, as --quant Q4_K_M does
    beside: tuple[Companion, ...] = ()
    if also:
        beside = tuple(companion(item, eng, devices, goals.min_ctx or DEFAULT_MIN_CTX) for item in also)
        goals = replace(goals, held=goals.held + held(beside))
    picked: tuple[str, ...] = ()
    if isinstance(model, str) and quant is None and not _is_file(model):
        members = family_members(model)
        if members:
            model, picked = _pick_member(model, members, eng, devices, goals, settings)
    base = settings if settings is not None else eng.settings()
    kv_fixed = {f: getattr(base, f) for f in eng.neutral_fields("kv_type")} if kv_type is not None else {}
    models = _Model(eng, model)
    spec = models.spec(None, quant)
    ref = model if isinstance(model, str) else spec.name
    if fixed_format is None:
        fixed_format = isinstance(model, ModelSpec) or quant is not None or _is_file(ref)
    if any(d.memory_bytes is None for d in devices) or not devices:
        raise OomkitError("plan needs the memory of every GPU: give --gpu NAME or --vram SIZE")
    choices = list(eng.knobs(ref, spec, devices, base, concurrency=goals.concurrency, fixed_format=fixed_format,
                             reserve_bytes=goals.most_held, nodes=goals.nodes))
    if kv_fixed:  # the KV cache type asked for is kept: only the choices with it
        eng.estimate(spec, devices, eng.with_context(base, 256))  # the engine's own refusal of a type it does not take
        choices = [c for c in choices if all(getattr(c.settings, f) == v for f, v in kv_fixed.items())]
        if not choices:
            raise OomkitError(f"--kv-type {kv_type}: plan tries {', '.join(eng.kv_types)} for {eng.name}; give one "
                              "of them, or no --kv-type to plan each")
    want = goals.context_for(spec)
    found: list[Option] = []
    rejected = 0
    unpublished: list[str] = []  # formats the named GGUF repo's listing does not hold
    unlisted: list[str] = []  # formats planned for the named GGUF repo without its listing
    named_repo = published.gguf_repo_of(ref)  # the user named a GGUF repo (not a tag or a checkpoint)
    for choice in choices:
        if not fixed_format and choice.quant:
            have = published.published(choice.model or ref, choice.quant)
            if have is False:
                rejected += 1
                unpublished.append(choice.quant)
                continue
            if have is None and named_repo is not None and published.gguf_repo_of(choice.model or ref) == named_repo:
                choice = replace(choice, label=choice.label.replace(" weights", f" weights {UNLISTED}", 1))
                unlisted.append(choice.quant)
        try:
            cspec = models.spec(choice.model if not fixed_format else None, choice.quant if not fixed_format else quant)
        except OomkitError:
            rejected += 1  # a format this model is not published in
            continue
        option = evaluate(eng, cspec, choice, ref, devices, goals, want)
        if option is None:
            rejected += 1
        else:
            found.append(option)
    front = rank(one_per_outcome(pareto(found)), ram_checked=goals.ram_bytes is not None)
    notes = picked + _notes(eng, spec, front, want, goals, ref, fixed_format,
                            offloads=any(c.offload is not None for c in choices),
                            unified=budgets(devices, goals).get(UNIFIED))
    if kv_type is not None:
        notes += (f"KV cache fixed at {kv_type} (--kv-type); other options vary the weights, context and placement",)
    if settings is not None and (untold := unmodelled_note(settings)) is not None:
        # the command's flags oomkit does not count: the commands below are written without them
        notes += (f"{untold}; the launch commands are written without them: add them back",)
    repo = named_repo
    if repo is not None and unpublished:
        found_in = published.listing(repo)
        notes += (f"not planned: {', '.join(dict.fromkeys(unpublished))}, which {repo} does not publish (per "
                  f"{found_in.source if found_in else 'its hub listing'})",)
    chosen = _shown(front, limit)
    # how to run a launch of two commands (Ollama's server with its variables, then the model)
    notes += tuple(dict.fromkeys(n for o in chosen if COMMAND_BREAK in o.argv for n in eng.command_notes(o.settings)))
    if sized := [o for o in chosen if o.sizing]:  # what the commands run with but carry no flag for (MLX: the prompt)
        notes += (sizing_note(sized),)
    if fetch := list(dict.fromkeys(f for o in chosen if (f := dict(o.extras).get("download")))):
        notes += (download_note(fetch),)
    shown_unlisted = [o.quant for o in chosen if o.quant in unlisted]
    if repo is not None and shown_unlisted:
        notes += (published.unlisted_text(repo, shown_unlisted),)
    smallest = None
    if not any(o.tier == 1 for o in chosen):

        smallest = smallest_hardware(eng, models, ref, base, goals, fixed_format, quant)
    if beside:
        notes = tuple(f"planned beside {c.ref} ({c.engine}): " + ", ".join(f"{d} {b / (1 << 30):.2f} GiB"
                                                                          for d, b in c.by_device)
                      + f"; run it with: {c.command}" for c in beside) + notes
    return Plan(model=spec, model_ref=ref, engine=eng.name, devices=devices, goals=goals, options=chosen,
                rejected=rejected, smallest_hardware=smallest, notes=notes, companions=beside)


def sizing_note(options: list[Option]) -> str:
    """The note on what the launch commands run with and have no flag for (Option.sizing: MLX's prompt length,
    which mlx_lm takes as text), by oomkit's spellings, to append to a command given to `oomkit estimate --`."""
    each = "; ".join(f"{o.rank}. {' '.join(o.sizing)}" for o in options)
    return (f"the commands run as written; their figures hold for what they carry no flag of ({each}: oomkit's "
            "flags, --prompt-tokens the prompt's length in tokens, sent with --prompt or - on stdin): add them to "
            "a command given to `oomkit estimate --` to check it")


def download_note(fetch: list[str]) -> str:
    """The note for launch commands of a llama.cpp build before -hfr (engines/llamacpp/args.py local_download): each
    loads a local file, which the command beside it downloads first; a FILE-QUANT.gguf in one is a placeholder."""
    unnamed = any(HF_FILE_PLACEHOLDER.split("{", 1)[0] in f for f in fetch)
    tail = (": FILE-QUANT.gguf is a placeholder where oomkit does not know the repo's file of that format: put its "
            "name in its place, in the URL and in the path" if unnamed else "")
    return ("this llama.cpp build takes no -hfr/-hff (PR #6192, b2514) and loads a local file only (-m): download each "
            "file first, " + "; ".join(f"`{f}`" for f in fetch) + tail)


UNLISTED = "(quantize or find elsewhere)"  # the label of a format the named GGUF repo may not publish (published.py)


def _pick_member(query: str, members: list[dict[str, Any]], eng: EngineModule, devices: tuple[Device, ...],
                 goals: Goals, settings: Any) -> tuple[str, tuple[str, ...]]:
    """The largest member of the family that fits at the engine's default weights (else the smallest member, whose
    plan then shows the second and third tiers), and a note saying which and why."""
    if any(d.memory_bytes is None for d in devices):
        raise OomkitError("plan needs the memory of every GPU: give --gpu NAME or --vram SIZE")
    found = survey(members, eng.name, devices, goals, settings, first_only=True)
    hit = next((f for f in found if f.option is not None), None)
    names = ", ".join(m["slug"] for m in members)
    if hit is None:
        last = members[-1]
        return last["hf_id"], (f"no {query} model fits entirely on these GPUs at the asked context with the "
                               f"engine's default weights; planning the smallest, {last['name']} (family: {names})",)
    return next(m["hf_id"] for m in members if m["slug"] == hit.slug), (
        f"the largest {query} model that fits with the engine's default weights at the asked context: {hit.name} "
        f"(family, largest first: {names})",)


def _is_file(ref: str) -> bool:
    from pathlib import Path  # lazy: only for a plan, to tell a local file from a name

    path = Path(os.path.expanduser(ref))  # "~nosuchuser/x" stays as typed, as a shell leaves it
    check_path(path)  # a part longer than a file name may be: the one line estimate gives, not the OS's errno
    return path.exists()


# ---------------------------------------------------------------------------------------------------------
# The Pareto front and the order the user sees


def _axes(o: Option) -> tuple[Any, ...]:
    """Larger is better on every axis: context, quality (bits per weight; the KV cache's order, rating.kv_order),
    decode speed bound."""
    speed = o.rating.tokens_per_s if o.rating.tokens_per_s is not None else 0.0
    return (float(o.context), round(o.rating.weight_bits, 3), o.rating.kv_order, round(speed, 3))


def dominates(a: Option, b: Option) -> bool:
    """a is at least as good as b on every axis and better on one (tier 1 beats tier 2 at equal axes)."""
    xa, xb = _axes(a), _axes(b)
    if not all(p >= q for p, q in zip(xa, xb, strict=True)):
        return False
    return any(p > q for p, q in zip(xa, xb, strict=True)) or a.tier < b.tier


def pareto(options: list[Option]) -> list[Option]:
    return [o for o in options if not any(dominates(p, o) for p in options if p is not o)]


def _outcome(o: Option) -> tuple[Any, ...]:
    """What the engine makes of an option: its tier, axes and the bytes it holds on each device and the host."""
    est = o.estimate
    return (o.tier, _axes(o), tuple((u.id, u.total_bytes) for u in est.devices), est.host.total_bytes)


def one_per_outcome(options: list[Option]) -> list[Option]:
    """Options the engine resolves to the same run (equal tier, axes and bytes on every device) are one option: the
    engine overrides what the longer command asks for, e.g. Ollama turns flash attention off for a model without it
    and then keeps the KV cache f16 whatever OLLAMA_KV_CACHE_TYPE says (llm/server.go NewLlamaServer, "quantized kv
    cache requested but flash attention disabled"; engines/ollama warns so). The shortest command is kept, the
    first of equals."""
    kept: dict[tuple[Any, ...], Option] = {}
    for o in options:
        key = _outcome(o)
        if key not in kept or len(o.argv) < len(kept[key].argv):
            kept[key] = o
    chosen = set(map(id, kept.values()))
    return [o for o in options if id(o) in chosen]


def rank(options: list[Option], ram_checked: bool = True) -> list[Option]:
    """Best first: tier 1 before tier 2; within a tier, options that decode at a usable speed before those whose
    bound is below it (too_slow); then the most bits per weight, then the KV cache's order (rating.kv_order: the least
    quality loss); then the longest context; then the fastest. Where the system RAM is not known (`ram_checked`
    False: --gpu / --vram without --ram), a second-tier option too slow to read along goes by the RAM it fills, the
    least first: whether it runs at all turns on that RAM, and its speed is no reason to prefer it, so the most bits
    of an option that may need more RAM than any desktop has do not put it first (Llama 3.1 405B in BF16 beside one
    24 GiB GPU: 744 GiB in RAM, 0.11 tok/s). A usable option reads little from RAM per token (at 5 tok/s and 89.6 GB/s,
    under 18 GB), and keeps the order by quality."""
    def unchecked_ram(o: Option) -> int:
        return o.estimate.host.total_bytes if o.tier == 2 and not ram_checked and too_slow(o) else 0

    ordered = sorted(options, key=lambda o: (o.tier, too_slow(o), unchecked_ram(o), -round(o.rating.weight_bits, 2),
                                             tuple(-b for b in o.rating.kv_order), -o.context,
                                             -(o.rating.tokens_per_s or 0.0)))
    return [replace(o, rank=i + 1) for i, o in enumerate(ordered)]


def too_slow(o: Option) -> bool:
    """Whether even the option's decode bound is below rating.USABLE_TOKENS_PER_S (reading speed)."""
    return o.rating.too_slow


LOW_BITS = 4.0  # below this many bits per weight the published scoreboard shows +10 % perplexity and worse (Q3_K_M)


def _shown(front: list[Option], limit: int | None) -> tuple[Option, ...]:
    """The first `limit` options, best first; when that would leave out every second-tier option while the
    first tier holds only weights under LOW_BITS, the best second-tier option takes the last place (what keeps the
    quality is worth seeing beside what keeps the speed). Ranks are renumbered in the order shown."""
    if not limit or len(front) <= limit:
        return tuple(front)
    shown = front[:limit]
    tier2 = [o for o in front if o.tier == 2]
    if tier2 and not any(o.tier == 2 for o in shown) and all(o.rating.weight_bits < LOW_BITS for o in shown):
        shown = shown[:-1] + [tier2[0]]
    return tuple(replace(o, rank=i + 1) for i, o in enumerate(shown))


def _quality_note(front: list[Option]) -> str | None:
    """When the best all-on-GPU option keeps few bits per weight and an option with part of the model in system RAM
    keeps many more, say what each costs."""
    best1 = next((o for o in front if o.tier == 1), None)
    best2 = next((o for o in front if o.tier == 2), None)
    if best1 is None or best2 is None or best1.rating.weight_bits >= LOW_BITS or best2.rating.weight_bits < LOW_BITS:
        return None
    return (f"all on the GPU needs {best1.weight_format} weights ({best1.rating.weight_quality.text}); with part of "
            f"the model in system RAM, {best2.weight_format} weights ({best2.rating.weight_quality.text}) run at a "
            f"bound of {_tps(best2)} instead of {_tps(best1)}")


def _tps(o: Option) -> str:
    t = o.rating.tokens_per_s
    return "unknown tok/s" if t is None else f"{tps_number(t)} tok/s"


def _gib(n: int) -> str:
    return f"{n / (1 << 30):,.1f} GiB"


def _speed_note(front: list[Option]) -> str | None:
    """When some options are too slow to use: that they are ranked after the usable ones of their tier."""
    slow = [o for o in front if too_slow(o)]
    if not slow:
        return None
    formats = ", ".join(dict.fromkeys(o.weight_format for o in slow))
    head = (f"{len(slow)} option(s) ({formats} weights) decode at under {USABLE_TOKENS_PER_S:g} tok/s even at their "
            f"upper bound, slower than reading speed (~238 words/min)")
    if len(slow) == len(front):
        return head + ": none of the options is fast enough to read along"
    return head + ": ranked after the faster options of their tier"


def _notes(eng: EngineModule, spec: ModelSpec, front: list[Option], want: int, goals: Goals, ref: str,
           fixed_format: bool, offloads: bool = True, unified: int | None = None) -> tuple[str, ...]:
    notes = []
    quality = _quality_note(front)
    if quality:
        notes.append(quality)
    speed = _speed_note(front)
    if speed:
        notes.append(speed)
    if goals.min_ctx and goals.min_ctx > want:
        notes.append(f"{goals.min_ctx} tokens asked; {spec.name} is trained for {want}: planned for {want}")
    if not front and unified is not None:
        # an Apple GPU: the CPU's layers fill the same RAM (options.UNIFIED), so no second tier frees any of it
        notes.append(f"nothing fits {want} tokens of context in this Mac's {_gib(unified)} of unified memory with "
                     f"{eng.name}: the GPU and the CPU share it, so layers kept on the CPU free none of it (the weights "
                     f"alone are {_gib(spec.weights.nbytes)}); an engine that still starts it pages the weights "
                     "from disk, far slower: smaller weights (a lower-bit quantization) or a smaller model fit")
    elif not front:
        # an engine (or release) with no way to keep weights in system RAM has no second tier to have tried
        notes.append(f"nothing fits {want} tokens of context on these GPUs with {eng.name}" + (
            ", even with part of the model in system RAM" if offloads else
            f" ({eng.name} as run here has no option to keep part of the weights in system RAM)"))
    elif front[0].tier == 2:
        notes.append("nothing fits entirely on the GPU(s) at the asked context: the options keep part of the model "
                     "in system RAM, at the decode speed shown")
    if goals.ram_bytes is None and any(o.tier == 2 for o in front):
        need = [o.estimate.host.total_bytes for o in front if o.tier == 2]
        notes.append(f"system RAM not checked for the offloaded options: they need {_gib(min(need))}"
                     + (f" to {_gib(max(need))}" if max(need) > min(need) else "")
                     + " of system RAM" + (", those too slow to read along ranked by it, the least first"
                                              if sum(too_slow(o) for o in front if o.tier == 2) > 1 else "")
                     + "; give --ram SIZE to keep only what fits it")
    if any(o.model.startswith("unsloth/") and o.model != ref for o in front):
        flag = "-hf" if any("-hf" in o.argv for o in front) else "the command"  # -hfr/-hff, or a file, before b4470
        notes.append(f"{flag} names unsloth's GGUF conversion of the model; any GGUF repo of it with the same :QUANT "
                     "file loads the same bytes")
    unnamed = [o for o in front if o.quant and HF_FILE_PLACEHOLDER.format(o.quant.upper()) in o.argv]
    if unnamed:
        files = ", ".join(dict.fromkeys(HF_FILE_PLACEHOLDER.format(o.quant.upper()) for o in unnamed if o.quant))
        notes.append(f"{files}: a placeholder: this llama.cpp build takes no -hf REPO:QUANT (from b4470), -hff names "
                     f"the file, and oomkit does not know the name of {unnamed[0].model}'s file of that format: put "
                     "it in its place")
    if fixed_format:
        notes.append(f"weights fixed at {spec.weights.format} (the file or format named); other options vary the "
                     "KV cache, context and placement only")
    return tuple(notes)
