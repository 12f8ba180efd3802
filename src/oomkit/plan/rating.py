"""What an option costs besides memory: the quality of its weights and KV cache (published measurements, plan/
quality.py) and its decode speed bound (plan/speed.py).

Options are ordered by what can be measured for every model: the bits each weight and each KV cache element
keeps (more bits, less loss, within one model), with the published perplexity / KL figures shown beside them;
the published figures come from other models and setups, so they inform but do not rank. A cache with K and V
typed apart ranks by its weaker half first, then K, then V (kv_order), not by the mean bits it holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..engines.command import join_command
from ..errors import OomkitError
from ..memory import MemoryEstimate
from ..quant import dtypes, ggml
from . import quality, speed

# The decode speed below which an option is not usable interactively: text that arrives slower than it is read.
# Adults read English non-fiction silently at 238 words per minute on average (Brysbaert 2019, "How many words do we
# read per minute? A review and meta-analysis of reading rate", Journal of Memory and Language 109, 104047), and a
# token is about 3/4 of a word (OpenAI, "What are tokens and how to count them?"): 238 / 60 / 0.75 = 5.3 tokens/s,
# taken down to 5. The decode figure is an upper bound (speed.py), so an option under this surely reads slower
# than its reader; one over it may still fall short (real engines reach a fraction of the bound).
USABLE_TOKENS_PER_S = 5.0

# Bits per KV cache element of the types that are neither a ggml type nor a plain float dtype: fp8 caches, the
# model's own dtype ("auto", taken as 16-bit), and MLX's quantized cache (a 16-bit scale and bias per group of 64).
_OTHER_KV_BITS = {"auto": 16.0, "fp8": 8.0, "fp8_e4m3": 8.0, "fp8_e5m2": 8.0, "8bit": 8.5, "4bit": 4.5}


def kv_bits(kv_type: str) -> float:
    """Bits per KV element for an engine's KV type name (llama.cpp's -ctk/-ctv from the ggml block sizes: q8_0 keeps
    34 bytes per 32 values); 16 for a name none of these know. A K/V pair ("q8_0/f16", kv_type_of) is the mean of
    the two: K and V hold as many elements per token outside MLA, whose latent cache has no V to type apart (PR
    #7412's table counts K q8_0 with V f16 as 12.25 bits per value, between f16's 16 and q8_0's 8.5)."""
    parts = kv_type.lower().split("/")
    return sum(_one_kv_bits(p) for p in parts) / len(parts)


def kv_order(kv_type: str) -> tuple[float, float, float]:
    """The quality order of a KV type, larger better: the bits of its weaker half, then of K, then of V. PR #7412
    (LLaMA-3-8B F16 weights, wikitext-2, KLD against FP16 logits; weights/K/V) measures the mean bits wrong twice:
    f16/f16/q5_1 (11.00 bits per value) loses more than f16/q8_0/q8_0 (8.50): KLD 0.001759 against 0.000980, ΔPPL
    0.006960 against 0.004616; and of two pairs of 12.25 bits, K q8_0 loses more than V q8_0 (f16/q8_0/f16 KLD
    0.000944, f16/f16/q8_0 0.000743): K is the more sensitive half. An unmeasured pair (K q4_0, V f16) so ranks
    with its weaker half, never above a cache whose both halves keep more bits (K and V q8_0)."""
    parts = kv_type.lower().split("/")
    k, v = _one_kv_bits(parts[0]), _one_kv_bits(parts[-1])
    return (min(k, v), k, v)


def _one_kv_bits(name: str) -> float:
    if name in _OTHER_KV_BITS:
        return _OTHER_KV_BITS[name]
    plain = dtypes.float_bytes(name)
    if plain is not None:
        return plain * 8.0
    try:
        return ggml.type_by_name(name).bits_per_weight
    except OomkitError:
        return 16.0


@dataclass(frozen=True)
class Rating:
    weight_bits: float  # bits per weight of the loaded weights (bytes x 8 / parameters)
    kv_bits: float  # the mean of K and V: what the cache holds per value
    kv_order: tuple[float, float, float]  # what ranks it (kv_order)
    weight_quality: quality.Quality
    kv_quality: quality.Quality
    bound: speed.SpeedBound

    @property
    def tokens_per_s(self) -> float | None:
        return self.bound.tokens_per_s

    @property
    def too_slow(self) -> bool:
        """Even the decode bound is below USABLE_TOKENS_PER_S (an unknown bound is not too slow)."""
        return self.tokens_per_s is not None and self.tokens_per_s < USABLE_TOKENS_PER_S

    @property
    def quality_note(self) -> str:
        return f"weights {self.weight_quality.text}; KV {self.kv_quality.text}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "weight_bits": round(self.weight_bits, 3), "kv_bits": self.kv_bits,
            "decode_tokens_per_s_bound": None if self.tokens_per_s is None else _tps_figure(self.tokens_per_s),
            "below_usable_speed": self.too_slow,
            "speed": self.bound.to_dict(),
            "quality": {"weights": self.weight_quality.to_dict(), "kv": self.kv_quality.to_dict(),
                        "note": self.quality_note},
        }


def rate(est: MemoryEstimate, weight_format: str, kv_type: str, context: int,
         ram_bandwidth_gbs: float | None = None) -> Rating:
    params = est.model.params_total or 1
    bits = est.weights_bytes * 8 / params  # as loaded: an fp8 conversion at load halves a bf16 checkpoint
    return Rating(weight_bits=bits, kv_bits=kv_bits(kv_type), kv_order=kv_order(kv_type),
                  weight_quality=quality.weight_quality(weight_format),
                  kv_quality=quality.kv_quality(kv_type),
                  bound=speed.decode_bound(est, context, ram_bandwidth_gbs=ram_bandwidth_gbs))


def shell_join(argv: tuple[str, ...] | list[str]) -> str:
    """The command as typed in a POSIX shell (leading VAR=value assignments stay unquoted when they can), one line
    per command where it runs two (Ollama's server, then the model: engines/command.py COMMAND_BREAK)."""
    return join_command(argv)


def _tps_figure(t: float) -> float:
    """A bound for JSON: one decimal from 1 tok/s up; below, two significant digits (0.11 for Llama 3.1 405B BF16
    mostly in system RAM), never a 0.0 that reads as no speed at all."""
    return round(t, 1) if t >= 1 else float(f"{t:.2g}")
