"""What a weight format or KV cache type costs in quality, from published measurements (``data/quality.json``).

Each figure is one measurement on one model (named with it): the perplexity over the 16-bit baseline in percent
(``ppl_delta_pct``), the mean KL divergence to the 16-bit model's token distribution (``kld``), or, where only a
benchmark was published, the change of its average in percent (``accuracy_delta_pct``). Other models lose more or
less; the figures order the options, they do not promise a score. Nothing measured: every figure None and the text
"unknown", never a guess.

The GGUF figures come from llama.cpp's LLaMA 3 8B scoreboard (tools/perplexity/README.md), one model and one
method for every type, so they order the types consistently. To place a format nobody measured, `rank_key` falls
back to its bits per weight, read against that same scoreboard (piecewise linear between the measured types'
bits per weight); the fallback is labelled as such by `expected_ppl_delta`.
"""

from __future__ import annotations

import functools
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import OomkitError
from ..quant import gguf_recipes

DATA_PATH = Path(__file__).resolve().parent / "data" / "quality.json"

_LABEL_BITS = re.compile(r"^(?P<name>.+?)-w(?P<bits>\d+)(?:-g\d+)?$")  # QuantFormat.label: "gptq-w4-g128"

# HF / MLX format words as oomkit spells them (model/resolve.py _HF_FORMATS, quant/hf_formats.py QuantFormat names)
# -> the quality.json hf_weights entry.
_HF_ALIASES = {
    "bf16": "bf16", "bfloat16": "bf16",
    "fp16": "fp16", "float16": "fp16",
    "fp32": "fp32", "float32": "fp32",
    "fp8": "fp8", "fp8-block": "fp8", "fp8-dynamic": "fp8", "fbgemm-fp8": "fp8", "modelopt-fp8": "fp8",
    "modelopt-fp8-pb-wo": "fp8",
    "ct-float-quantized": "fp8", "w8a8-fp8": "fp8", "float8": "fp8",
    "int8": "int8", "w8a8": "int8", "ct-int-quantized": "int8", "w8a8-int8": "int8",
    "gptq": "gptq", "w4a16": "gptq", "int4": "gptq", "ct-pack-quantized": "gptq", "gptq-int4": "gptq",
    "awq": "awq", "awq-int4": "awq",
    "nvfp4": "nvfp4", "modelopt-nvfp4": "nvfp4", "ct-nvfp4-pack-quantized": "nvfp4",
    "mxfp4": "mxfp4", "ct-mxfp4-pack-quantized": "mxfp4",
    "nf4": "nf4", "bnb-nf4": "nf4", "bnb-4bit": "nf4",
    "bitsandbytes": "nf4",  # vLLM --quantization bitsandbytes on a 16-bit checkpoint: nf4 in flight
    "bnb-fp4": "bnb-fp4",
    "bnb-int8": "bnb-int8", "bnb-8bit": "bnb-int8", "llm.int8": "bnb-int8",
    "mlx-4bit": "mlx-4bit", "mlx-q4": "mlx-4bit", "mlx4": "mlx-4bit", "4bit": "mlx-4bit",
    "mlx-8bit": "mlx-8bit", "mlx-q8": "mlx-8bit", "mlx8": "mlx-8bit", "8bit": "mlx-8bit",
}
# Integer formats whose entry was measured at 4 bits: another width (a "gptq-w8-g128" label) is not that entry.
_FOUR_BIT = frozenset({"gptq", "awq"})

# KV cache type names the engines take -> the quality.json kv entry. The model's own 16-bit precision is the
# baseline (llama.cpp / Ollama f16, vLLM / SGLang / transformers auto, MLX without --kv-bits).
_KV_ALIASES = {
    "f16": "f16", "fp16": "f16", "float16": "f16", "bf16": "f16", "bfloat16": "f16", "f32": "f16", "fp32": "f16",
    "float32": "f16", "auto": "f16", "default": "f16", "none": "f16",
    "q8_0": "q8_0", "q4_0": "q4_0",
    "fp8": "fp8", "fp8_e4m3": "fp8", "fp8_e4m3fn": "fp8", "fp8-e4m3": "fp8", "fp8_inc": "fp8",
    "fp8_e5m2": "fp8_e5m2", "fp8-e5m2": "fp8_e5m2",
    "8bit": "mlx-8bit", "8": "mlx-8bit", "mlx-8bit": "mlx-8bit", "kv8": "mlx-8bit",
    "4bit": "mlx-4bit", "4": "mlx-4bit", "mlx-4bit": "mlx-4bit", "kv4": "mlx-4bit",
}


@dataclass(frozen=True)
class Quality:
    """The published quality cost of one weight format or KV type; every figure None when nobody measured it."""

    source: str | None
    ppl_delta_pct: float | None
    kld: float | None
    note: str
    name: str = ""  # the entry, as the table names it ("Q4_K_M", "fp8", "q8_0")
    model: str = ""  # the model the figures were measured on
    accuracy_delta_pct: float | None = None  # a benchmark average's change, where no perplexity was published
    bits_per_weight: float | None = None

    @property
    def known(self) -> bool:
        return any(v is not None for v in (self.ppl_delta_pct, self.kld, self.accuracy_delta_pct))

    @property
    def text(self) -> str:
        """One line for the decision matrix: "Q4_K_M: +2.8 % ppl (LLaMA-3-8B)", or "unknown"."""
        if not self.known:  # a K/V pair keeps its name: "K q4_0 / V f16: not measured"
            return f"{self.name}: not measured" if self.name.startswith("K ") and " / V " in self.name else "unknown"
        if self.ppl_delta_pct == 0 and not self.kld and not self.accuracy_delta_pct:
            return f"{self.name}: baseline"
        if self.ppl_delta_pct is not None:
            figure = f"{self.ppl_delta_pct:+.{_decimals(self.ppl_delta_pct)}f} % ppl"
        elif self.kld is not None:
            figure = f"KLD {self.kld:.4g}"
        else:
            assert self.accuracy_delta_pct is not None
            figure = f"{self.accuracy_delta_pct:+.1f} % accuracy"
        model = _short_model(self.model)
        return f"{self.name}: {figure}" + (f" ({model})" if model else "")

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "source": self.source, "ppl_delta_pct": self.ppl_delta_pct, "kld": self.kld,
                "accuracy_delta_pct": self.accuracy_delta_pct, "model": self.model, "note": self.note,
                "text": self.text}


def _decimals(x: float) -> int:
    """Enough decimals to show a small delta: 0.074 -> 3, 2.816 -> 1, 309.1 -> 0."""
    a = abs(x)
    if a == 0 or a >= 100:
        return 0
    if a >= 1:
        return 1
    return min(3, 1 - math.floor(math.log10(a)))


def _short_model(model: str) -> str:
    """The model's name without the evaluation details: "LLaMA-3-8B (base), wikitext-2 ..." -> "LLaMA-3-8B"."""
    head = model.split(",")[0].split(";")[0].split(" (")[0].strip()
    return "" if head in ("any", "") or head.startswith("any ") else head


@functools.cache
def _table() -> dict[str, dict[str, dict[str, Any]]]:
    return json.loads(DATA_PATH.read_text(encoding="utf-8"))


def _quality(name: str, row: dict[str, Any]) -> Quality:
    return Quality(source=row.get("source"), ppl_delta_pct=row.get("ppl_delta_pct"), kld=row.get("kld"),
                   note=row.get("note", ""), name=name, model=row.get("model", ""),
                   accuracy_delta_pct=row.get("accuracy_delta_pct"), bits_per_weight=row.get("bits_per_weight"))


def unknown(name: str, why: str = "no published measurement found") -> Quality:
    return Quality(source=None, ppl_delta_pct=None, kld=None, note=f"unknown: {why}", name=name)


def weight_quality(fmt: str) -> Quality:
    """The quality cost of a weight format: a GGUF file type ("Q4_K_M", "q4_k_m", "Q4_K") or an HF / MLX format
    word ("fp8", "awq", "gptq-w4-g128", "nvfp4", "bnb-nf4", "bf16", "safetensors BF16", "mlx-4bit")."""
    text = str(fmt or "").strip()
    if not text:
        return unknown("", "no weight format given")
    if text.lower().startswith("safetensors "):
        text = text.split(None, 1)[1]
    key = text.lower().replace("_", "-")
    m = _LABEL_BITS.match(key)
    bits = None
    if m and m.group("name") in _HF_ALIASES:
        key, bits = m.group("name"), int(m.group("bits"))
    entry = _HF_ALIASES.get(key)
    if entry is not None:
        if entry in _FOUR_BIT and bits not in (None, 4):
            return unknown(text, f"the published {entry} figure is for 4-bit weights, not {bits}-bit")
        return _quality(entry, _table()["hf_weights"][entry])
    try:
        name = gguf_recipes.ftype_by_name(text).name
    except OomkitError:
        return unknown(text)
    row = _table()["weights"].get(name)
    return _quality(name, row) if row is not None else unknown(name)


def kv_quality(kv_type: str | int | None) -> Quality:
    """The quality cost of a KV cache type as the engines name it: llama.cpp / Ollama "f16", "q8_0", "q4_0";
    vLLM / SGLang / transformers "auto", "fp8", "fp8_e4m3", "fp8_e5m2"; MLX "8bit" / "4bit" (or --kv-bits 8 / 4).
    None or "auto": the model's own precision, the baseline. llama.cpp's K and V typed apart ("q8_0/f16", K first,
    options.py kv_type_of) have their own entry, measured with that pair ("K q8_0 / V f16"), never the figure of
    one of the two; a pair nobody measured is named as such."""
    text = "auto" if kv_type is None else str(kv_type).strip()
    if "/" in text:
        return _kv_pair_quality(text)
    entry = _KV_ALIASES.get(text.lower())
    if entry is None:
        return unknown(text)
    q = _quality(entry, _table()["kv"][entry])
    return q if entry != "f16" else Quality(q.source, q.ppl_delta_pct, q.kld, q.note, name=text, model=q.model)


def _kv_pair_quality(text: str) -> Quality:
    k, _, v = text.partition("/")
    ek, ev = _KV_ALIASES.get(k.strip().lower()), _KV_ALIASES.get(v.strip().lower())
    if ek is not None and ek == ev:
        return kv_quality(k.strip())  # the same type twice ("f16/bf16"): that type's figure
    name = f"K {k.strip()} / V {v.strip()}"
    row = _table()["kv"].get(f"{ek}/{ev}") if ek is not None and ev is not None else None
    if row is None:
        return Quality(source=None, ppl_delta_pct=None, kld=None, name=name,
                       note=f"unknown: no published measurement of K {k.strip()} with V {v.strip()}")
    return _quality(name, row)


@functools.cache
def _curve() -> tuple[tuple[float, float], ...]:
    """(bits per weight, ppl delta %) of the measured GGUF types, the lower envelope, sorted by bits."""
    points = sorted((r["bits_per_weight"], r["ppl_delta_pct"]) for r in _table()["weights"].values()
                    if r.get("bits_per_weight") is not None and r.get("ppl_delta_pct") is not None
                    and r["bits_per_weight"] <= 16.5)
    envelope: list[tuple[float, float]] = []
    for bpw, ppl in points:  # keep each bits-per-weight's best type, and only types better than all smaller ones
        if envelope and ppl >= envelope[-1][1]:
            continue
        envelope.append((bpw, ppl))
    return tuple(envelope)


def _interpolate(bpw: float) -> float:
    curve = _curve()
    if bpw <= curve[0][0]:
        return curve[0][1]
    if bpw >= curve[-1][0]:
        return curve[-1][1]
    for (x0, y0), (x1, y1) in zip(curve, curve[1:], strict=False):
        if x0 <= bpw <= x1:
            return y0 + (y1 - y0) * (bpw - x0) / (x1 - x0)
    return curve[-1][1]  # not reached: the curve covers [first, last]


def expected_ppl_delta(q: Quality, bits_per_weight: float | None = None) -> tuple[float | None, str]:
    """The perplexity cost the planner orders by, and its basis: the measured figure ("measured"), else the
    LLaMA 3 8B scoreboard read at the format's bits per weight ("assumed from N bits per weight"), else
    (None, "unknown")."""
    if q.ppl_delta_pct is not None:
        return q.ppl_delta_pct, "measured"
    bpw = bits_per_weight if bits_per_weight is not None else q.bits_per_weight
    if bpw is None or bpw <= 0:
        return None, "unknown"
    return _interpolate(bpw), f"assumed from {bpw:.2f} bits per weight (llama.cpp LLaMA 3 8B scoreboard)"


def rank_key(q: Quality, bits_per_weight: float | None = None) -> tuple[float, int, float]:
    """Sort key, best quality first: the expected perplexity cost (measured, else read from the bits per weight),
    a measured figure before an assumed one at the same cost, then more bits first; nothing known sorts last."""
    value, basis = expected_ppl_delta(q, bits_per_weight)
    bpw = bits_per_weight if bits_per_weight is not None else q.bits_per_weight
    return (math.inf if value is None else value, 0 if basis == "measured" else 1, -(bpw or 0.0))


def quality_text(q: Quality) -> str:
    """The matrix's one-line text ("Q4_K_M: +2.8 % ppl (LLaMA-3-8B)", "unknown")."""
    return q.text
