"""One choice of an engine's knob space on the devices: the option it gives (the context it reaches, the offload it
needs, its command line parsed back and estimated again), or none.

Every option is re-estimated from its own command line (parse_command of what it prints), so what the user runs is
what was measured.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, fields, is_dataclass, replace
from typing import Any

from .. import memo
from ..engines.base import Choice, EngineModule
from ..engines.cmdline import ParsedCommand, parse_command
from ..engines.llamacpp.args import download_command
from ..engines.llamacpp.backends import is_metal, metal_devices
from ..errors import OomkitError
from ..limits import STEP, beyond_runtime_fit, context_limit, largest_context
from ..memo import SEARCHING, ByObject
from ..memory import Device, MemoryEstimate
from ..model.spec import ModelSpec
from . import rating

HOST = "host"  # the key of system RAM among the budgets
DEFAULT_MIN_CTX = 8192  # the context an option must reach when none is asked (capped at the model's own)


@dataclass(frozen=True)
class Goals:
    """What the user asks of a plan."""

    min_ctx: int | None = None  # per sequence; None: DEFAULT_MIN_CTX or the model's maximum if smaller
    concurrency: int = 1  # sequences served at once, each with min_ctx
    reserve_bytes: int = 0  # per GPU: memory other programs hold
    headroom_bytes: int = 0  # per GPU: kept free beyond the estimate
    nodes: int = 1  # the devices are spread over this many machines
    ram_bandwidth_gbs: float | None = None  # system RAM bandwidth for offloaded parts (None: the stated default)
    ram_bytes: int | None = None  # system RAM the engine may fill (offloaded weights, host buffers); None: unchecked
    held: tuple[tuple[str, int], ...] = ()  # (device id, bytes) other models planned alongside hold (plan --also)

    def held_on(self, device_id: str) -> int:
        """What other programs and the models planned alongside hold on one GPU."""
        return self.reserve_bytes + sum(b for d, b in self.held if d == device_id)

    @property
    def most_held(self) -> int:
        """The most any one GPU has taken by others (what a memory fraction must leave: vLLM, SGLang)."""
        ids = {d for d, _ in self.held}
        return self.reserve_bytes + max((sum(b for d, b in self.held if d == i) for i in ids), default=0)

    def context_for(self, spec: ModelSpec) -> int:
        top = context_limit(spec)
        return min(self.min_ctx or DEFAULT_MIN_CTX, top)

    def to_dict(self) -> dict[str, Any]:
        return {"min_ctx": self.min_ctx, "concurrency": self.concurrency, "reserve_bytes": self.reserve_bytes,
                "headroom_bytes": self.headroom_bytes, "nodes": self.nodes,
                "ram_bandwidth_gbs": self.ram_bandwidth_gbs, "ram_bytes": self.ram_bytes,
                "held": [{"device": d, "bytes": b} for d, b in self.held]}


def most_at_once(eng: EngineModule, settings: Any) -> tuple[int, str] | None:
    """The most sequences a plan may serve at once with these settings, and the words for it: llama.cpp's own
    ceiling by build, else the range oomkit holds for the engine's "parallel" field; None when unbounded."""
    fields = eng.neutral_fields("parallel")
    limit = getattr(type(settings), "LIMITS", {}).get(fields[0]) if fields else None
    if eng.name == "llama.cpp":
        # llama.cpp's build tag and its ceiling by build, only for llama.cpp
        from ..engines.llamacpp.settings import build_number, max_seq_limit

        build = build_number(getattr(settings, "engine_version", None))
        n = max_seq_limit(build)
        if n is not None:
            return n, (f"llama.cpp serves at most {n:,} requests at once (LLAMA_MAX_SEQ, src/llama-cparams.h, "
                       f"at b{build})")
    if limit is None or limit.hi is None:
        return None
    return int(limit.hi), (f"oomkit plans at most {int(limit.hi):,} requests at once with {eng.name} (its range "
                           f"for {limit.flag or fields[0]})")


def check_concurrency(eng: EngineModule, settings: Any, concurrency: int) -> None:
    """Refuse a --concurrency the engine cannot serve at once, in the user's terms: no setting plan could turn
    reaches it, so planning fewer would answer another question."""
    bound = most_at_once(eng, settings)
    if bound is not None and concurrency > bound[0]:
        raise OomkitError(f"--concurrency {concurrency:,}: {bound[1]}; ask {bound[0]:,} or fewer, or run more "
                          "than one server")


@dataclass(frozen=True)
class Option:
    """One setting that fits, with everything the decision matrix shows."""

    tier: int  # 1 all on the GPU(s), 2 part in system RAM
    label: str
    model: str  # the model argument of the command
    quant: str | None
    settings: Any
    estimate: MemoryEstimate
    context: int  # per sequence
    weight_format: str
    kv_type: str
    argv: tuple[str, ...]
    headroom_bytes: int  # the least left on any GPU
    rating: rating.Rating
    offload: tuple[str, Any] | None = None  # (field, value) when part of the model is in system RAM
    rank: int = 0
    extras: tuple[tuple[str, str], ...] = ()  # other forms of the launch: an Ollama Modelfile, a Python snippet
    # oomkit's flags beyond the command that size it (engine.sizing_flags: MLX's prompt length), so that
    # `oomkit estimate -- COMMAND SIZING` gives back `estimate`; the command itself runs without them
    sizing: tuple[str, ...] = ()

    @property
    def command(self) -> str:
        return rating.shell_join(self.argv)

    def to_dict(self) -> dict[str, Any]:
        return {"rank": self.rank, "tier": self.tier, "label": self.label, "command": self.command,
                "settings": self.estimate.settings, "estimate": self.estimate.to_dict(), "context": self.context,
                "weight_format": self.weight_format, "kv_type": self.kv_type, "headroom_bytes": self.headroom_bytes,
                "offload": None if self.offload is None else {"field": self.offload[0], "value": self.offload[1]},
                "extras": dict(self.extras), "sizing": list(self.sizing),
                **self.rating.to_dict()}


# ---------------------------------------------------------------------------------------------------------
# Budgets and validity


# The estimates of one planner run (search.plan, with its third tier and a family's members): the search asks the
# engine the same question several times (the settled choice at the asked context, then its relief, then the first
# tier's test; the least offload and its neighbour; each option again from its own command line), each the same
# answer. Kept by the model spec's identity, the engine, the devices, the settings and the search's mode (SEARCHING:
# an estimate weighed roughly inside a search is not the exact one), for the run only.
_RUN_ESTIMATES: ContextVar[ByObject[Any] | None] = ContextVar("plan_estimates", default=None)


@contextmanager
def estimates_kept() -> Iterator[None]:
    """Within it, run_estimate answers a question asked before from the first answer (a run nested in another
    shares the outer table)."""
    if _RUN_ESTIMATES.get() is not None:
        yield
        return
    token = _RUN_ESTIMATES.set(ByObject(1 << 14))
    try:
        yield
    finally:
        _RUN_ESTIMATES.reset(token)


def run_estimate(eng: EngineModule, spec: ModelSpec, devs: tuple[Device, ...], settings: Any) -> MemoryEstimate:
    """eng.estimate(spec, devs, settings), its answer (or refusal) kept within estimates_kept."""
    table = _RUN_ESTIMATES.get()
    # the fields left out of the settings' equality (how a flag was typed: llama.cpp's n_ctx_typed) are echoed in the
    # estimate's settings: they are part of the question too
    typed = tuple(getattr(settings, f.name) for f in fields(settings) if not f.compare) if is_dataclass(settings) else ()
    key = (eng.name, devs, settings, typed, memo.SEARCHING.get())  # the mode the engine reads (memo's own)
    try:
        hash(key)
    except TypeError:  # settings holding a list or a dict: asked again
        table = None
    if table is None:
        return eng.estimate(spec, devs, settings)

    def ask() -> MemoryEstimate | OomkitError:
        try:
            return eng.estimate(spec, devs, settings)
        except OomkitError as e:
            return e

    got = table.get(spec, key, ask)
    if isinstance(got, OomkitError):
        raise got
    return got


def budgets(devices: tuple[Device, ...], goals: Goals) -> dict[str, int | None]:
    """What each GPU may hold: its usable memory less what other programs hold and the headroom asked. An Apple GPU
    named from the catalog offers Metal's working set (recommendedMaxWorkingSetSize), not all its unified memory:
    the budget every engine on it checks against (llama.cpp ggml-metal-device.m ggml_metal_device_get_memory and
    Ollama discover/gpu_darwin.go via llamacpp/backends.py metal_devices; mlx_lm generate.py wired_limit via
    mlx/layout.py metal_device, the same rule), and so the one `oomkit check` weighs."""
    out: dict[str, int | None] = {d.id: None if d.memory_bytes is None
                                  else d.memory_bytes - goals.held_on(d.id) - goals.headroom_bytes
                                  for d in metal_devices(devices)}
    out[HOST] = goals.ram_bytes
    # an Apple GPU from the catalog: its memory is the Mac's unified RAM, which the layers kept on the CPU fill too
    unified = [d.memory_bytes - goals.held_on(d.id) - goals.headroom_bytes for d in devices
               if is_metal(d) and d.memory_bytes and d.free_bytes is None]
    if unified:
        out[UNIFIED] = min(unified)
    return out


# The key of budgets() for an Apple GPU's unified memory (the catalog's RAM of the Mac): what the GPU's buffers and
# the CPU's together may hold. Ollama counts an integrated GPU's free memory as no more than the system's free memory
# (server/sched.go availableMemoryForGPU / availableMemoryForLoad: "use the smaller value for shared-memory GPUs"),
# and takes Metal on darwin/arm64 as integrated (discover/llama_server.go isIntegratedLlamaServerDevice), v0.33.0;
# but on macOS it checks no system memory for what stays on the CPU (discover/gpu_darwin.go GetCPUMem: "FreeSwap
# omitted as Darwin uses dynamic paging"), so a model larger than the RAM starts and pages its weights from disk.
# Layers moved off the GPU there free no memory: the second tier must fit in the same RAM.
UNIFIED = "unified"
_NOT_A_GPU = frozenset({HOST, UNIFIED})


def engine_devices(devices: tuple[Device, ...], goals: Goals) -> tuple[Device, ...]:
    """The devices as the engine sees them: other programs' memory is not free (vLLM compares its budget with the
    free memory; llama.cpp splits layers by it)."""
    if not goals.most_held:
        return devices
    return tuple(replace(d, free_bytes=d.memory_bytes - goals.held_on(d.id)) if d.memory_bytes else d
                 for d in devices)


def device_limits(est: MemoryEstimate, limits: dict[str, int | None]) -> list[tuple[Any, int | None]]:
    """Each GPU of the estimate with its budget: by id, or by position where the engine renamed its ranks (SGLang
    and vLLM name them "node1/GPU3 (rank 11)" under --nnodes; the estimate keeps the devices' order)."""
    by_position = [v for k, v in limits.items() if k not in _NOT_A_GPU]
    return [(u, limits[u.id] if u.id in limits else (by_position[i] if i < len(by_position) else None))
            for i, u in enumerate(est.devices)]


def slack(est: MemoryEstimate, limits: dict[str, int | None], split_ok: bool = False) -> int:
    """Bytes left on the tightest GPU (negative: short). An engine that refuses to start counts as just short; one
    that splits layers off the GPU by itself (Ollama) counts as short unless `split_ok`."""
    left = [lim - u.total_bytes for u, lim in device_limits(est, limits) if lim is not None]
    if not left:
        return -1
    worst = min(left)
    if limits.get(HOST) is not None and est.host.total_bytes > limits[HOST]:  # the offloaded part must fit in RAM
        worst = min(worst, limits[HOST] - est.host.total_bytes)
    if limits.get(UNIFIED) is not None:  # the GPU's buffers and the CPU's share the Mac's RAM: the larger at least
        # (ggml-metal maps the model file's pages as the GPU's buffer, which the CPU's layers read as well: the two
        # totals may count those pages twice, so not their sum)
        worst = min(worst, limits[UNIFIED] - max(sum(u.total_bytes for u in est.devices), est.host.total_bytes))
    if est.fits is False and not (split_ok and est.host.weights_bytes > 0):
        return min(worst, -1)
    return worst


# The engines that size one token pool shared by every running sequence: vLLM's "GPU KV cache size: N tokens"
# (engine_view kv_cache_tokens) and SGLang's max_total_num_tokens. MLX's kv_cache_tokens is another figure: the
# length of each sequence's own buffer (mlx_lm/models/cache.py KVCache: keys of shape (batch, heads, tokens, dim),
# grown per request), whose batch is the sequences served; a pool test there turned down every option at
# --concurrency 2 and more.
POOLED_ENGINES = frozenset({"vllm", "sglang"})


def pool_ok(est: MemoryEstimate, context: int, concurrency: int) -> bool:
    """For engines that size a token pool (vLLM, SGLang: engine_view kv_cache_tokens / max_total_num_tokens), the
    pool holds `concurrency` sequences of `context` tokens. The others hold each sequence's cache apart, sized by
    their own batch setting: nothing to test here."""
    if concurrency <= 1 or est.engine not in POOLED_ENGINES:
        return True
    view = est.engine_view
    tokens = view.get("kv_cache_tokens", view.get("max_total_num_tokens"))
    if isinstance(tokens, dict):
        tokens = min(tokens.values()) if tokens else None
    return tokens is None or tokens >= concurrency * context


def evaluate(eng: EngineModule, spec: ModelSpec, choice: Choice, ref: str, devices: tuple[Device, ...],
             goals: Goals, want: int, largest: bool = True, offload: bool = True) -> Option | None:
    """One choice on the devices: all on the GPUs at the largest context that fits (at least `want`; exactly `want`
    when not `largest`), else the least offload that fits `want`; None when neither does. Not `offload`: the caller
    takes only an option all on the GPUs (the third tier's hardware, a family's member), so the search for the least
    offload, whose every answer is a second-tier option, is not run (a 405B model beside one 24 GiB card: ~10
    estimates for each candidate machine it does not fit)."""
    limits = budgets(devices, goals)
    devs = engine_devices(devices, goals)
    top = context_limit(spec)
    f = choice.context_factor
    choice = _settled(eng, spec, devs, choice, want * f, goals.concurrency, limits)

    def measure(settings: Any, split_ok: bool) -> Callable[[int], int | None]:
        def at(n: int) -> int | None:
            try:
                est = run_estimate(eng, spec, devs, eng.with_context(settings, n * f))
            except OomkitError:
                return None
            if beyond_runtime_fit(est, n * f):
                return None
            if not pool_ok(est, n, goals.concurrency):
                return -1
            return slack(est, limits, split_ok)
        return at

    at_goal = measure(choice.settings, False)(want)  # one estimate tells whether the first tier is possible at all
    n = None
    if at_goal is not None and at_goal >= 0:
        n = largest_fitting(measure(choice.settings, False), top, STEP) if largest else want
    if n is not None and n >= want:
        return _option(eng, spec, choice, ref, devs, limits, choice.settings, n, tier=1, goals=goals, want=want)
    if choice.offload is None:
        # an engine that splits by itself (Ollama) places the layers its own estimate holds; where that estimate is
        # above what the runner allocates, every layer typed (num_gpu: passed to the runner as given, llm/server.go
        # NewLlamaServer; plan/fit.py _all_layers) keeps the model on the GPUs
        scan = eng.fit_offload(spec, devs, choice.settings)
        if scan is not None and getattr(choice.settings, scan[0]) < 0:
            s = replace(choice.settings, **{scan[0]: spec.n_trunk_layers + 1})
            at_all = measure(s, False)(want)
            if at_all is not None and at_all >= 0:
                n = largest_fitting(measure(s, False), top, STEP) if largest else want
                if n is not None and n >= want:
                    return _option(eng, spec, choice, ref, devs, limits, s, n, tier=1, goals=goals, want=want)
    # the second tier: at the asked context, the least offload that fits
    if choice.offload is not None:
        if not offload:
            return None
        name, values = choice.offload
        at_want = lambda v: measure(replace(choice.settings, **{name: v}), False)(want)  # noqa: E731
        token = SEARCHING.set("offload")  # the search may weigh roughly; its answer and its neighbours exactly
        try:
            k = first_ok(values, lambda v: (at_want(v) or -1) >= 0)
        finally:
            SEARCHING.reset(token)
        if k is None:
            return None
        if k > 0 and (at_want(values[k - 1]) or -1) >= 0:
            k -= 1
        for v in values[k:k + 2]:
            s = replace(choice.settings, **{name: v})
            opt = _option(eng, spec, choice, ref, devs, limits, s, want, tier=2, goals=goals, want=want,
                          offload=(name, v))
            if opt is not None:
                return opt
        return None
    # an engine that splits by itself (Ollama): its own split at the asked context
    at = measure(choice.settings, True)(want)
    if at is not None and at >= 0:
        return _option(eng, spec, choice, ref, devs, limits, choice.settings, want, tier=2, goals=goals, want=want)
    # where its own split overshoots a GPU, fewer layers on the GPUs, most first: the layer count fit turns
    # (engine.fit_offload; Ollama's num_gpu goes to the runner as --n-gpu-layers as given, llm/server.go
    # NewLlamaServer, where its estimate undercounts the buffers: ollama/ollama#9170 ran at 8 of 62 layers on two
    # A100 40GB where its own 13 ran out of memory)
    scan = eng.fit_offload(spec, devs, choice.settings)
    if scan is not None:
        name, values = scan
        for v in values:
            if v == getattr(choice.settings, name):
                continue
            s = replace(choice.settings, **{name: v})
            at = measure(s, True)(want)
            if at is not None and at >= 0:
                return _option(eng, spec, choice, ref, devs, limits, s, want, tier=2, goals=goals, want=want)
    return None


def _settled(eng: EngineModule, spec: ModelSpec, devs: tuple[Device, ...], choice: Choice, n_ctx: int,
             concurrency: int = 1, limits: dict[str, int | None] | None = None) -> Choice:
    """The choice with the fix the engine's own refusal of it names (engine.settle: vLLM's "lower max_num_seqs to
    at most N" for a model with Mamba-style state), so that a setting the engine would refuse at any context is
    planned as the engine asks, not dropped for system RAM or a larger GPU."""
    settings = choice.settings
    for _ in range(4):  # each fix may uncover the next phase's (the CUDA graphs, then the sampler warm-up)
        try:
            est = run_estimate(eng, spec, devs, eng.with_context(settings, n_ctx))
        except OomkitError:
            break
        settled = eng.settle(settings, est)
        if settled is None or settled == settings:
            break
        settings = settled
    settings = _relieved(eng, spec, devs, settings, n_ctx, concurrency, limits)
    return choice if settings is choice.settings else replace(choice, settings=settings)


# The share of each GPU an engine claims for weights and its KV pool whatever the context (vLLM
# --gpu-memory-utilization, config/cache.py CacheConfig; SGLang --mem-fraction-static, server_args.py): where the run
# starts but overshoots the plan's budgets (--reserve, --headroom) at every context, only a lower share brings it in.
BUDGET_FRACTIONS = frozenset({"gpu_memory_utilization", "mem_fraction_static"})


def _relieved(eng: EngineModule, spec: ModelSpec, devs: tuple[Device, ...], settings: Any, n_ctx: int,
              concurrency: int = 1, limits: dict[str, int | None] | None = None) -> Any:
    """Settings the engine refuses at every context (its start-up error, engine_view "error", at the shortest
    context too) with the engine's own move that costs no context (engine.relief) that lets it start at `n_ctx`
    and leaves the largest token pool, ties to the engine's order. vLLM's V1 engine (0.8.0 on) profiles the sampler
    for max_num_seqs sequences, 1024 by default on large GPUs, before the KV cache (v1 gpu_model_runner.py
    profile_run -> _dummy_sampler_run) and refuses with "No available memory for the cache blocks"; its OOM docs
    name --max-num-seqs (vllm-project/vllm#15357). SGLang's default --mem-fraction-static on a small card leaves
    the pool nothing ("Not enough memory. Please try to increase --mem-fraction-static", model_runner.py
    init_memory_pool). Without this, plan dropped such a choice for weights in system RAM or for lower-precision
    weights (vllm-project/vllm#17238: --cpu-offload-gb 2 where --max-num-seqs 8 ran; ai-dynamo/dynamo#9238:
    --quantization fp8 where --mem-fraction-static 0.9 ran). A move never caps the engine's running sequences
    (its "parallel" field) below the concurrency asked. With `limits` (the plan's budgets: --reserve and --headroom
    taken off each GPU), a move whose run stays within them comes before one that only lets the engine start; and a
    run that starts but overshoots them at every context, its memory fraction (BUDGET_FRACTIONS) claiming its share
    whatever the context, takes the engine's lower fraction that keeps within them and leaves the largest pool: 0.98,
    which vLLM's own warm-up fix leaves on 2 x H100 80GB for Llama 3.1 70B at --reserve 128MiB, keeps 0.07 GiB free
    per GPU and failed --headroom 128MiB at every context (every option dropped), where 0.97 keeps 0.74 GiB."""
    def estimate(s: Any, n: int) -> MemoryEstimate | None:
        try:
            return run_estimate(eng, spec, devs, eng.with_context(s, n))
        except OomkitError:
            return None

    def refused(est: MemoryEstimate | None) -> bool:
        return est is not None and est.fits is False and bool(est.engine_view.get("error"))

    here = estimate(settings, n_ctx)
    if here is None:
        return settings
    over = False  # the engine starts, but its memory fraction overshoots the plan's budgets at every context
    if not refused(here):
        if (limits is None or here.fits is not True or slack(here, limits) >= 0
                or not any(m[0] in BUDGET_FRACTIONS for m in eng.relief(settings, dict(here.settings)))):
            return settings
        short = estimate(settings, min(n_ctx, STEP))
        if short is None or slack(short, limits) >= 0:
            return settings
        over = True
    elif not refused(estimate(settings, min(n_ctx, STEP))):
        return settings
    parallel = set(eng.neutral_fields("parallel"))
    best, best_key = settings, (False, -1)
    for field, value, _why in eng.relief(settings, dict(here.settings)):
        if field in parallel and isinstance(value, int) and value < concurrency:
            continue
        if over and field not in BUDGET_FRACTIONS:
            continue
        moved = replace(settings, **{field: value})
        est = estimate(moved, n_ctx)
        if est is None or est.fits is not True or (over and slack(est, limits or {}) < 0):
            continue
        pool = est.engine_view.get("kv_cache_tokens", est.engine_view.get("max_total_num_tokens"))
        if isinstance(pool, dict):
            pool = min(pool.values()) if pool else 0
        pool = pool if isinstance(pool, int) else 0
        key = (limits is not None and slack(est, limits) >= 0, pool)
        if key > best_key:
            best, best_key = moved, key
    return best


def largest_fitting(slack_at: Callable[[int], int | None], top: int, step: int = STEP) -> int | None:
    """The largest context in [step, top] that fits, for a slack that may grow again past a context at which the
    engine changes its plan: vLLM's V0 engine turns chunked prefill on by itself above 32,768 tokens (0.5.3 on,
    engine/arg_utils.py EngineArgs.create_engine_config; engines/vllm/config.py), so its profile run drops from
    max_model_len tokens to the chunk and a longer context fits where a shorter one does not (vllm#10517 on an RTX
    3090 with Llama-3.1-8B: 29,000 refused, 35,000 and 45,000 started). largest_context assumes a slack that only
    shrinks; past each power of two above what it finds (where engines put such switches) the first grid point is
    estimated too, and from one that fits the search goes up again. Every answer is an estimate at that context."""
    n = largest_context(slack_at, top, step)
    edge = 1 << max(n or 0, step).bit_length()  # the least power of two above the answer
    while edge < top:
        probe = edge + step
        at = slack_at(probe)
        if at is not None and at >= 0:
            # above the switch the slack shrinks again: search from the probe up
            n = largest_context(lambda k, p=probe: slack_at(max(k, p)), top, step)
            edge = 1 << max(n or probe, probe).bit_length()
            continue
        edge <<= 1
    return n


def first_ok(values: tuple[Any, ...], ok: Callable[[Any], bool]) -> int | None:
    """The index of the first value that is ok, for an ok that stays true once it is (bisection)."""
    lo, hi = 0, len(values) - 1
    if not values or not ok(values[hi]):
        return None
    while lo < hi:
        mid = (lo + hi) // 2
        if ok(values[mid]):
            hi = mid
        else:
            lo = mid + 1
    return lo


def _option(eng: EngineModule, spec: ModelSpec, choice: Choice, ref: str, devs: tuple[Device, ...],
            limits: dict[str, int | None], settings: Any, context: int, *, tier: int, goals: Goals, want: int,
            offload: tuple[str, Any] | None = None) -> Option | None:
    """The option as the user will run it: its command line, parsed back and estimated again. Its decode speed
    bound is taken at the asked context `want`, so that options compare."""
    s = eng.with_context(settings, context * choice.context_factor)
    model_arg = choice.model or ref
    try:
        argv = eng.command(model_arg, s, choice.quant)
    except OomkitError:
        return None  # no command line runs it (MLX: bits no repo name carries, without mlx_lm.convert first)
    fetch = None
    if eng.name == "llama.cpp":
        # a llama.cpp build before -hfr loads a local file only: the command names where this download puts it
        fetch = download_command(model_arg, choice.quant, s)
    sizing = eng.sizing_flags(s, argv)  # sized by oomkit's flags the program has none of (MLX: the prompt's length)
    parsed = parse_back(eng, [*argv, *sizing])
    # the release the command is written for is no flag of it (--engine-version): it stays the one planned for
    release = {n: getattr(s, n) for n in eng.neutral_fields("engine_version")}
    parsed = replace(parsed, settings=replace(parsed.settings, **release))
    est = run_estimate(eng, spec, devs, parsed.settings)
    if slack(est, limits, split_ok=tier == 2) < 0:
        return None
    split = tier == 2 and offload is None and est.host.weights_bytes > 0
    tier = 2 if offload is not None or split else 1
    kv = kv_type_of(eng, est)
    fmt = choice.weight_format or spec.weights.format
    headroom = min(lim - u.total_bytes for u, lim in device_limits(est, limits) if lim is not None)
    r = rating.rate(est, fmt, kv, want, goals.ram_bandwidth_gbs)  # every option's speed at the asked context
    return Option(tier=tier, label=choice.label, model=model_arg, quant=choice.quant, settings=parsed.settings,
                  estimate=est, context=context, weight_format=fmt, kv_type=kv, argv=tuple(argv),
                  headroom_bytes=headroom, rating=r, offload=offload,
                  extras=tuple(eng.extras(model_arg, parsed.settings).items()) + ((("download", fetch),) if fetch else ()),
                  sizing=tuple(sizing))


def parse_back(eng: EngineModule, argv: list[str]) -> Any:
    """A command the planner wrote, read the way the user's copy of it will be read: an engine command line by
    parse_command; an engine without one of its own (transformers) in oomkit's options form
    (`MODEL --engine NAME flags...`, what `oomkit estimate` takes)."""
    if eng.programs or eng.python_modules:
        return parse_command(list(argv))
    rest = list(argv[1:])
    if rest[:1] == ["--engine"]:
        rest = rest[2:]
    model, quant, settings = eng.parse_args(rest)
    return ParsedCommand(eng.name, argv[0], settings, quant)


def kv_type_of(eng: EngineModule, est: MemoryEstimate) -> str:
    """The KV cache type the engine runs with, by its name, from the estimate's effective settings (Ollama's comes
    from OLLAMA_KV_CACHE_TYPE; llama.cpp's -ctk/-ctv are shown as one when they agree)."""
    values = [str(est.settings.get(f)) for f in eng.kv_fields]
    if not values:
        bits = est.settings.get("kv_bits")  # MLX: --kv-bits, no cache type of its own
        return f"{bits}bit" if bits else "auto"
    return values[0] if len(set(values)) == 1 else "/".join(values)
