"""mlx_lm's options by their own names, its defaults, and what it settles on from them (prompt and generated
tokens, the dtype, the model calls generate_step makes)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ...errors import OomkitError, SettingsError
from ...flags import INT32_MAX, Limit
from ...model.spec import ModelSpec
from ...quant.dtypes import FLOAT_BYTES, unquantized_dtype
from ..versions import Eras, Version, parse_release

NEWEST = "0.32.0"  # mlx-lm
LMS_PROGRAM = "lmstudio"  # `lms load` of an MLX model: LM Studio's mlx-engine (args.py from_lms)

# Release boundaries (the first mlx-lm release with the new rule), read in ml-explore/mlx-lm's history.
ERAS = Eras({
    # generate.py generate_step, PR #406 (24fefe3d, "only apply lm_head to the last token", first in v0.27.0): the
    # prompt runs in chunks while more than one token is left and the last token alone goes through _step. Before,
    # chunks of prefill_step_size ran while more than prefill_step_size tokens were left, and _step took the rest
    # (1 to prefill_step_size tokens), whose model call computes the logits of every one of them
    "lm_head_last": (0, 27, 0),
    # generate.py generate_step's prefill_step_size default: 512 until PR #40 ("Updates for causal mask", fd175f11,
    # 2025-03-21, in 0.22.2) made it 2048 (mlx-examples llms/mlx_lm/utils.py generate_step had 512 from #931 to the
    # move; mlx_lm.generate had no --prefill-step-size flag before PR #1781, so the default is what every CLI run got)
    "prefill_step_2048": (0, 22, 2),
    # utils.py quantize_model: nn.QuantizedLinear.quantize_module(model, ..., linear_class_predicate) until
    # nn.quantize(model, q_group_size, q_bits) in 0.10.0 (read in the 0.1.0-0.10.0 wheels): before it,
    # -q quantized nn.Linear layers only (predicate `isinstance(m, nn.Linear) and m.weight.shape[0] != 8`, which keeps
    # Mixtral's 8-expert gate in float), so embeddings stayed in the model dtype
    "quantize_embeddings": (0, 10, 0),
    # utils.py generate_step: maybe_quantize_kv_cache ran only in _step (after the model call of the prompt's last
    # chunk and of each generated token) from --kv-bits' first release, 0.19.3, to 0.20.3; commit 66dedd24 (#1144,
    # 2024-12-12, first in 0.20.4) calls it after every chunk of the prefill loop too (read in the 0.19.3, 0.20.3 and
    # 0.20.4 wheels). Before it a prompt's chunks all run on, and fill, the float cache
    "quantize_in_prefill": (0, 20, 4),
    # generate.py maybe_quantize_kv_cache: `prompt_cache[0].offset > quantized_kv_start` until commit 36963eec (#495,
    # first in 0.28.1; 0.28.0 and 0.28.1 wheels read) made it `c.offset >= quantized_kv_start`
    "quantize_at_start": (0, 28, 1),
    # models/gemma3_text.py Model: an lm_head nn.Linear of its own, which sanitize() filled with the embedding when the
    # checkpoint has no lm_head.weight (`weights["lm_head.weight"] = weights["model.embed_tokens.weight"]`, from
    # Gemma 3's first support, 70d555b3) until PR #373 (877cc38e, "properly tie embeddings and lm head for gemma3",
    # first in v0.26.4) ties them instead (sanitize pops lm_head, __call__ uses embed_tokens.as_linear)
    "gemma3_tied_head": (0, 26, 4),
})


def parse_version(version: str | None) -> Version:
    """"0.26.4", "v0.31.3" -> (major, minor, patch); None, "newest", "latest" -> NEWEST."""
    return parse_release(version, NEWEST, "mlx-lm", "a release such as 0.31.3")

# generate.py: DEFAULT_MAX_TOKENS (mlx_lm.generate --max-tokens), DEFAULT_QUANTIZED_KV_START
GENERATE_MAX_TOKENS = 100
DEFAULT_QUANTIZED_KV_START = 5000
# server.py: --max-tokens default 512, --decode-concurrency 32
SERVER_MAX_TOKENS = 512
# mx.quantize's bit widths (--kv-bits, --q-bits)
QUANT_BITS = (2, 3, 4, 5, 6, 8)
# the norm dtypes that name the model dtype (a float32 norm does not: such a checkpoint counts as bfloat16)
NORM_DTYPES = ("float16", "bfloat16")

# The engine-neutral CLI options -> these fields (commands/_model_args.py reads a module's NEUTRAL).
NEUTRAL = {"ctx": "context_length", "parallel": "batch", "engine_version": "engine_version"}


# oomkit's ceiling on the model calls of one run (prefill chunks + generated tokens): updates_for lists each one
# and the estimate steps through them, about 4 us a call; mlx_lm itself has none
MAX_CALLS = 1 << 18


@dataclass(frozen=True)
class MlxSettings:
    """mlx_lm's options by their own names (generate.py / server.py argparse defaults; generate_step's for
    prefill_step_size). context_length and prompt_tokens are oomkit's: prompt + generated tokens, and the prompt."""

    PROGRAM = "mlx_lm"  # class attributes, not fields (no annotation)
    # What mlx_lm accepts, held by flags.check_settings (flags and API arguments alike); the model calls of a run
    # have oomkit's ceiling, MAX_CALLS (resolve).
    LIMITS = {
        "max_tokens": Limit(None, INT32_MAX, "--max-tokens"),  # argparse type=int; negative (no limit): resolve refuses
        "prompt_tokens": Limit(1, INT32_MAX, ""),
        "context_length": Limit(1, INT32_MAX, "--ctx"),
        "max_kv_size": Limit(1, INT32_MAX, "--max-kv-size"),
        "kv_group_size": Limit(1, 1 << 16, "--kv-group-size"),
        "quantized_kv_start": Limit(0, INT32_MAX, "--quantized-kv-start"),
        "prefill_step_size": Limit(1, INT32_MAX, "--prefill-step-size"),
        "batch": Limit(1, 1 << 16, "--batch"),
        "q_group_size": Limit(1, 1 << 16, "--q-group-size"),
        "wired_limit_mb": Limit(0, 1 << 30, ""),
        "max_buffer_length": Limit(1, 1 << 60, ""),
    }

    program: str = "mlx_lm.generate"  # mlx_lm.generate | mlx_lm.server | lmstudio (LM Studio's mlx-engine)
    max_tokens: int | None = None  # --max-tokens / -m; None: 100 (generate), 512 (server)
    prompt_tokens: int | None = None  # None: context_length - max_tokens
    context_length: int | None = None  # prompt + max_tokens; None: the model's trained context
    max_kv_size: int | None = None  # --max-kv-size: RotatingKVCache(max_size, keep=4) on models without make_cache
    # (under lms load: the context, mlx-engine's load_model(max_kv_size=context_length); kv.layer_caches)
    kv_bits: int | None = None  # --kv-bits
    kv_group_size: int = 64  # --kv-group-size
    quantized_kv_start: int = DEFAULT_QUANTIZED_KV_START  # --quantized-kv-start
    prefill_step_size: int | None = None  # generate_step / --prefill-step-size; None: 2048 (512 before 0.22.2)
    batch: int = 1  # sequences decoded together (server: up to --decode-concurrency 32)
    q_bits: int | None = None  # weights from mlx_lm.convert -q --q-bits (4 by default): None = as the checkpoint
    q_group_size: int = 64  # mlx_lm.convert --q-group-size
    wired_limit_mb: int = 0  # sysctl iogpu.wired_limit_mb; 0 = macOS's default
    max_buffer_length: int | None = None  # mx.device_info()["max_buffer_length"]; None: estimated from the RAM
    # the mlx-community repo --model named where its name carries no bits ("mlx-community/gemma-3-1b-it-bf16"): an
    # mlx_lm.convert output without -q, which stores what the release's sanitize() added (weights.stored_head)
    converted_repo: str | None = None
    engine_version: str = NEWEST
    # flags of the command that change memory in a way oomkit does not count, each with what it changes: said in
    # the estimate's warnings (engines/base.py unmodelled_note), never dropped
    unmodelled: tuple[str, ...] = ()
    # how prompt_tokens was bounded from a --prompt text the command carries (args.py prompt_bound), said among the
    # estimate's guesses; "" where the tokens were given or taken as the context
    prompt_note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def with_context(s: MlxSettings, n_ctx: int) -> MlxSettings:
    """The same run at another prompt + generated length (under lms load, mlx-engine's cache cap with it:
    kv.layer_caches)."""
    return replace(s, context_length=n_ctx, prompt_tokens=None, prompt_note="")


# ---------------------------------------------------------------------------------------------------------
# What mlx_lm settles on


@dataclass(frozen=True)
class Resolved:
    prompt: int
    max_tokens: int
    total: int  # prompt + max_tokens: tokens in the cache at the end
    dtype: str
    dtype_bytes: int
    updates: tuple[int, ...]
    labels: tuple[str, ...] = ()
    logits_tokens: int = 1  # prompt tokens whose logits the last prompt call computes (before 0.27: all of its own)


def checkpoint_dtype(spec: ModelSpec) -> str:
    return unquantized_dtype(spec.weights.format, ((t.name, t.dtype) for t in spec.weights.tensors),
                             accept=NORM_DTYPES)


def updates_for(prompt: int, max_tokens: int, prefill_step: int, lm_head_last: bool = True) -> list[int]:
    """Token counts of each model call generate_step makes (generate.py generate_step): the prompt in chunks of
    prefill_step_size while more than one token is left, the rest in the first _step, then max_tokens calls of one
    token each (the loop computes one token ahead, so the cache ends with prompt + max_tokens tokens).
    lm_head_last False (mlx-lm before 0.27.0, ERAS): whole chunks while more than prefill_step_size tokens are left,
    the rest (up to prefill_step_size tokens) in the first _step."""
    out = []
    done = 0
    while prompt - done > (1 if lm_head_last else prefill_step):
        n = min(prefill_step, prompt - done - 1)
        out.append(n)
        done += n
    out.append(prompt - done)
    out.extend([1] * max_tokens)
    return out


def prefill_step_default(version: Version) -> int:
    """generate_step's prefill_step_size when none is given: 2048, 512 before mlx-lm 0.22.2 (ERAS)."""
    return 2048 if ERAS.reached(version, "prefill_step_2048") else 512


def _check(s: MlxSettings, max_tokens: int) -> None:
    """argparse's and mx.quantize's refusals."""
    if max_tokens < 0:
        raise OomkitError("--max-tokens must not be negative (mlx_lm's -1, no limit, has no end to size)")
    if s.batch < 1:
        raise OomkitError("batch must be at least 1")
    if s.prefill_step_size is not None and s.prefill_step_size < 1:
        raise OomkitError("--prefill-step-size must be positive")
    if s.kv_bits is not None and s.kv_bits not in QUANT_BITS:
        raise OomkitError(f"--kv-bits {s.kv_bits}: mx.quantize takes 2, 3, 4, 5, 6 or 8 bits")
    if s.q_bits is not None and s.q_bits not in QUANT_BITS:
        raise OomkitError(f"--q-bits {s.q_bits}: mx.quantize takes 2, 3, 4, 5, 6 or 8 bits")
    if s.max_kv_size is not None and s.max_kv_size < 1:
        raise OomkitError("--max-kv-size must be positive")


def resolve(spec: ModelSpec, s: MlxSettings) -> Resolved:
    if spec.architecture == "mllama":
        # utils.py _get_classes: importlib.import_module(f"mlx_lm.models.{model_type}") fails, and MODEL_REMAPPING
        # has no mllama (mlx_lm/models/ and utils.py read at 0.19.0, 0.24.0, 0.28.0, 0.32.2: no mllama at any)
        raise OomkitError("ValueError: Model type mllama not supported. (mlx-lm has no Llama 3.2 Vision model; "
                          "mlx-vlm runs it, and oomkit does not model mlx-vlm)")
    labels = []
    max_tokens = s.max_tokens
    if max_tokens is None:
        max_tokens = SERVER_MAX_TOKENS if s.program.endswith("server") else GENERATE_MAX_TOKENS
    _check(s, max_tokens)
    if s.prompt_tokens is not None:
        if s.prompt_tokens < 1:
            raise OomkitError("the prompt needs at least one token")
        prompt = s.prompt_tokens
        if s.prompt_note:
            labels.append(s.prompt_note)
        if s.context_length is not None:
            max_tokens = s.context_length - prompt
            if max_tokens < 0:
                raise OomkitError(f"context {s.context_length} is shorter than the prompt ({prompt})")
    else:
        total = s.context_length or spec.n_ctx_train
        if not total:
            raise OomkitError(f"{spec.name}: the model declares no trained context; give --ctx")
        if s.context_length is None:
            labels.append(f"no --ctx given: prompt + generated tokens = the trained context ({total})")
        if total <= max_tokens:
            max_tokens = total - 1
        prompt = total - max_tokens
    version = parse_version(s.engine_version)
    step = s.prefill_step_size or prefill_step_default(version)
    calls = -(-max(prompt - 1, 0) // step) + 1 + max_tokens
    if calls > MAX_CALLS:
        raise SettingsError(f"a run of {prompt:,} prompt tokens in steps of {step:,} and {max_tokens:,} "
                            f"generated tokens is {calls:,} model calls; oomkit steps through at most {MAX_CALLS:,} "
                            "(raise --prefill-step-size or lower --max-tokens)")
    dtype = checkpoint_dtype(spec)
    lm_head_last = ERAS.reached(version, "lm_head_last")
    updates = tuple(updates_for(prompt, max_tokens, step, lm_head_last))
    return Resolved(prompt=prompt, max_tokens=max_tokens, total=prompt + max_tokens, dtype=dtype,
                    dtype_bytes=FLOAT_BYTES[dtype], updates=updates, labels=tuple(labels),
                    logits_tokens=1 if lm_head_last else updates[len(updates) - max_tokens - 1])
