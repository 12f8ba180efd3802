"""Plans over many models: a family ("qwen3", "llama 3.1": the largest member that fits) and the whole catalog
("which models fit on this GPU at 8K, and with what").

A member fits when the engine's own default weights (llama.cpp and Ollama: the Q4_K_M GGUF people download; vLLM
and SGLang: the checkpoint as published) run entirely on the GPUs at the asked context with one of the engine's KV
cache types. Members too large to fit by their parameter count alone (at 4 bits per weight) are not resolved.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..engines.base import EngineModule, get_engine
from ..errors import OomkitError
from ..memory import Device
from ..model import catalog
from ..request import resolve_model
from .options import Goals, Option, evaluate

MIN_BITS = 4  # bits per weight below which no default format goes: the prefilter on the parameter count


def family_members(query: str) -> list[dict[str, Any]]:
    """Catalog rows whose slug or name starts with the family words ("qwen3" -> qwen3-8b, qwen3-30b-a3b, ...),
    largest first. Empty when `query` names one model: a tag, a repo, a path, or a word with one member. A bare
    word that is also an Ollama tag ("qwen3" = qwen3:8b) is a family here: picking the size is the question."""
    if ":" in query or "/" in query or "\\" in query:
        return []
    key = "-".join(query.strip().lower().replace("_", " ").split())
    if not key:
        return []
    # "llama3.1" as the catalog spells it: "llama-3.1"; "qwen 2.5" as it spells that one: "qwen2.5"
    keys = {key, re.sub(r"([a-z])(\d)", r"\1-\2", key), re.sub(r"([a-z])-(\d)", r"\1\2", key)}
    rows = [r for r in catalog.entries() if r["family"] != "embedding"
            and any(r["slug"].startswith(k + "-") or r["name"].lower().replace(" ", "-").startswith(k + "-")
                    for k in keys)]
    if len(rows) < 2:
        return []

    def order(r: dict[str, Any]) -> tuple[float, bool]:
        # largest first, to two figures (a vision tower adds a few percent); at one size the plain model first
        special = any(w in r["slug"] and w not in f"-{key}-" for w in _SPECIAL)
        return (-float(f"{(r.get('params') or 0):.2g}"), special)

    return sorted(rows, key=order)


_SPECIAL = ("-vl-", "-coder-", "-math-", "-distill-", "-guard-")


@dataclass(frozen=True)
class Fitting:
    slug: str
    name: str
    params: int | None
    option: Option | None  # the best tier-1 option at the engine's default weights; None: does not fit

    def to_dict(self) -> dict[str, Any]:
        o = self.option
        return {"model": self.slug, "name": self.name, "params": self.params, "fits": o is not None,
                "command": None if o is None else o.command, "context": None if o is None else o.context,
                "kv_type": None if o is None else o.kv_type,
                "weight_format": None if o is None else o.weight_format,
                "total_bytes": None if o is None else sum(u.total_bytes for u in o.estimate.devices)}


def fits_at_default(eng: EngineModule, ref: str, devices: tuple[Device, ...], goals: Goals,
                    settings: Any = None, largest: bool = False) -> Option | None:
    """The first KV type with which the model's default weights fit entirely on the GPUs at the asked context
    (the option at that context; at the largest context that fits when `largest`)."""
    spec = resolve_model(eng, ref)
    base = settings if settings is not None else eng.settings()
    want = goals.context_for(spec)
    for choice in eng.knobs(ref, spec, devices, base, concurrency=goals.concurrency, fixed_format=True,
                            reserve_bytes=goals.most_held, nodes=goals.nodes):
        try:
            o = evaluate(eng, spec, choice, ref, devices, goals, want, largest=largest, offload=False)
        except OomkitError:
            continue
        if o is not None and o.tier == 1:
            return o
    return None


def survey(rows: list[dict[str, Any]], engine: str, devices: tuple[Device, ...], goals: Goals,
           settings: Any = None, first_only: bool = False) -> list[Fitting]:
    """Each row's fit at the engine's default weights, largest first; `first_only`: stop at the first that fits."""
    eng = get_engine(engine)
    total = sum(d.memory_bytes or 0 for d in devices)
    out = []
    for r in rows:
        params = r.get("params")
        if params and params * MIN_BITS / 8 > total:
            out.append(Fitting(r["slug"], r["name"], params, None))  # too large at any default format
            continue
        try:
            o = fits_at_default(eng, r["slug"], devices, goals, settings)
        except OomkitError:
            o = None
        out.append(Fitting(r["slug"], r["name"], params, o))
        if first_only and o is not None:
            break
    return out
