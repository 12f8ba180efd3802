"""The error band of an estimate: how far each figure can be trusted for that engine, engine era and cache layout,
from the project's own accuracy evidence (docs/accuracy.md). The figures live in data/band.json, written by
bench/band.py from the ground truth (llama.cpp run on the CPU over the test grid; the vLLM, SGLang and Ollama
start-up logs kept as fixtures); tests/test_error_band.py checks the file against the evidence.

Pure lookups over an estimate's plain fields (engine, settings, engine_view, model kinds, weights, labels): no
engine rule lives here. MLX has no evidence yet: its figures all say "unverified". Figures that rest on a guess (an assumed or inferred weight format, an engine release
newer or older than every log, a backend without a log, a catalog entry not read from the model's own config)
are listed under `guesses`.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # annotations only: the estimate type sits on this floor and imports this module
    from .memory import MemoryEstimate

DATA = Path(__file__).with_name("data") / "band.json"
SOURCE = "docs/accuracy.md (figures: bench/band.py)"


@lru_cache(maxsize=1)
def band_data() -> dict[str, Any]:
    try:
        return json.loads(DATA.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # a broken install: the estimate stands, every figure then says "unverified"
        return {}


def kind_group(kinds: dict[str, int]) -> str:
    """One word for a model's cache layout, the groups the evidence is kept by (bench/band.py uses the same)."""
    if "latent" in kinds:
        return "latent"
    if "recurrent" in kinds:
        return "hybrid" if set(kinds) - {"recurrent", "none"} else "recurrent"
    if "sliding" in kinds or "chunked" in kinds:
        return "sliding"
    return "full"


GROUP_WORDS = {"full": "full-attention", "sliding": "sliding-window", "latent": "MLA", "recurrent": "recurrent",
               "hybrid": "hybrid attention + recurrent"}


def _pct(x: float) -> str:
    """A bound, rounded up (1.048% -> "1.1%"), so "within" never understates the worst case."""
    return f"{math.ceil(x * 1000 - 1e-9) / 10:.1f}%" if x >= 0.001 else f"{math.ceil(x * 10000 - 1e-9) / 100:.2f}%"


def _version_key(v: str) -> tuple[int, ...]:
    return tuple(int(p) for p in "".join(c if c.isdigit() else " " for c in str(v)).split()[:3])


def _era(name: str, version: str | None, span: list[str]) -> str | None:
    """A guess when the estimate's release lies outside the releases the logs ran."""
    if not version or not span or not _version_key(version):
        return None
    lo, hi = span
    if _version_key(version) > _version_key(hi):
        return (f"{name} {version} is newer than every log in the evidence ({lo}–{hi}): the band assumes its memory "
                "rules did not change since")
    if _version_key(version) < _version_key(lo):
        return f"{name} {version} is older than every log in the evidence ({lo}–{hi}): the band is extrapolated"
    return None


def _fig(band: str, relative: float | None, cases: int, basis: str, of: str = "figure") -> dict[str, Any]:
    return {"band": band, "relative": relative, "of": of, "cases": cases, "basis": basis}


def _unverified(basis: str) -> dict[str, Any]:
    return _fig("unverified", None, 0, basis)


def _llamacpp(est: MemoryEstimate, d: dict[str, Any], guesses: list[str]) -> tuple[dict[str, Any], list[str]]:
    m = est.model
    kinds = m.kinds()
    group = kind_group(kinds)
    g = d["by_kind"].get(group)
    words = GROUP_WORDS[group]
    figs: dict[str, Any] = {}
    if g:
        archs = sorted({d["models"][k]["architecture"] for k in g["models"]})
        exact = g["exact"] == g["cases"]
        figs["kv_cache_bytes"] = _fig("exact" if exact else "unverified", 0.0 if exact else None, g["cases"],
                                      f"equal to llama.cpp's printed KV buffers on {g['exact']}/{g['cases']} cases "
                                      f"of {words} models ({', '.join(archs)})")
        compute = _fig(f"within {_pct(g['compute_worst'])}", g["compute_worst"], g["cases"],
                       f"llama.cpp's measured compute buffer on {g['cases']} cases of {words} models")
    else:
        figs["kv_cache_bytes"] = _unverified(f"no {words} model in the llama.cpp evidence")
        compute = _fig(f"within {_pct(d['compute_worst'])}", d["compute_worst"], d["cases"],
                       f"no {words} model in the evidence: the worst over all {d['cases']} llama.cpp cases")
    if "recurrent" in kinds:
        figs["recurrent_state_bytes"] = dict(figs["kv_cache_bytes"], basis=figs["kv_cache_bytes"]["basis"]
                                             .replace("KV buffers", "recurrent-state buffers"))
    if m.weights.exact:
        figs["weights_bytes"] = _fig("exact", 0.0, d["cases"], f"model buffer equal to llama.cpp's on {d['exact']}/"
                                     f"{d['cases']} cases (weights read from the file's tensor list)")
    else:
        figs["weights_bytes"] = _unverified(f"weights computed from the architecture and the {m.weights.format} "
                                            "recipe, not read from a GGUF header")
    backend = str(est.engine_view.get("backend") or "")
    gpu = d.get("gpu_compute")
    if backend and backend != "cpu" and gpu:
        # the CPU grid replays the graph node by node; a GPU backend's graph (fusions, its own buffers) is held to
        # the CUDA measurements, the larger bound of the two
        worst = max(compute["relative"] or 0.0, gpu["worst"])
        compute = _fig(f"within {_pct(worst)}", worst, compute["cases"] + gpu["cases"],
                       f"{compute['basis']}; on a GPU, llama.cpp's CUDA backend measured on an H200: within "
                       f"{_pct(gpu['worst'])} on {gpu['cases']} compute buffers")
    figs["compute_bytes"] = compute
    logs = d["backend_cases"].get(backend)
    if backend and not logs:
        guesses.append(f"no llama.cpp {backend} log in the evidence: its compute buffer and reserve follow the CPU "
                       "and CUDA figures, uncalibrated")
    elif backend and backend != "cpu":
        compute["basis"] += f"; {logs} real {backend} log(s) agree"
    figs["overhead_bytes"] = _unverified("the GPU runtime's fixed reserve per backend, not measured by the grid")
    # an Ollama estimate's engine_version is Ollama's release, not its runner's llama.cpp build (_ollama says its era)
    version, oldest = str(est.settings.get("engine_version") or ""), d["log_versions"][0]
    if est.engine == "llama.cpp" and version:
        # a date or an LM Studio runtime (lmstudio-2.44.0) compares as the build the engine read it as
        build = str(est.engine_view.get("build") or version)
        version = version if build == version else f"{version} ({build})"
    else:
        build = version
    if est.engine == "llama.cpp" and _version_key(build) and _version_key(build) < _version_key(oldest):
        guesses.append(f"llama.cpp {version} is older than every llama.cpp log in the evidence (the oldest {oldest}; "
                       "the CPU grid runs a recent build): its era's rules are followed unverified")
    if any("newer than the newest build oomkit models" in w for w in est.warnings):
        guesses.append("llama.cpp build newer than the newest modelled: its newest rules are assumed")
    summary = [f"KV {figs['kv_cache_bytes']['band']}", f"compute buffer {compute['band']} on {compute['cases']} "
               f"llama.cpp cases" + (f" of {words} models" if g else ""),
               f"weights {figs['weights_bytes']['band']}"]
    return figs, summary


def _vllm(est: MemoryEstimate, d: dict[str, Any], guesses: list[str]) -> tuple[dict[str, Any], list[str]]:
    f = d["figures"]
    w, a, t, r = f["weights"], f["available"], f["tokens"], f["refusal"]
    figs = {
        "weights_bytes": _fig(f"within {_pct(w['worst'])}", w["worst"], w["cases"],
                              f"'Model loading took' on {w['cases']} vLLM logs"),
        "kv_cache_bytes": _fig(f"within {_pct(a['worst'])} of GPU memory", a["worst"], a["cases"],
                               f"'Available KV cache memory' on {a['cases']} vLLM logs; KV tokens for a printed "
                               f"budget within {_pct(t['worst'])} on {t['cases']}", of="gpu_memory"),
        "compute_bytes": _fig(f"within {_pct(a['worst'])} of GPU memory", a["worst"], a["cases"],
                              "the profiled activation peak and CUDA graphs, checked through the available KV "
                              "memory they leave", of="gpu_memory"),
        "overhead_bytes": _fig(f"within {_pct(a['worst'])} of GPU memory", a["worst"], a["cases"],
                               "checked through the available KV memory it leaves", of="gpu_memory"),
        "refusal": {"band": f"agrees on {r['agree']}/{r['cases']} logs", "cases": r["cases"]},
    }
    if m_era := _era("vLLM", est.settings.get("engine_version"), d["versions"]):
        guesses.append(m_era)
    summary = [f"weights {figs['weights_bytes']['band']} on {w['cases']} vLLM logs",
               f"available KV {figs['kv_cache_bytes']['band']} on {a['cases']} logs",
               f"refusal agrees on {r['agree']}/{r['cases']}"]
    return figs, summary


def _sglang(est: MemoryEstimate, d: dict[str, Any], guesses: list[str]) -> tuple[dict[str, Any], list[str]]:
    f = d["figures"]
    pool, kv, w = f["tokens_end_to_end"], f["kv_size"], f["weights"]
    figs = {
        "weights_bytes": _fig(f"within {_pct(w['worst'])}", w["worst"], w["cases"],
                              f"weights per rank on {w['cases']} SGLang logs"),
        "kv_cache_bytes": _fig(f"within {_pct(pool['worst'])}", pool["worst"], pool["cases"],
                               f"token pool from the GPU's memory on {pool['cases']} SGLang logs; K/V sizes for a "
                               f"pool within {_pct(kv['worst'])} on {kv['cases']}"),
        "compute_bytes": _unverified("SGLang prints no activation figure; checked only through the token pool"),
        "overhead_bytes": _unverified("checked only through the token pool it leaves"),
    }
    if "state" in f and "recurrent" in est.model.kinds():
        s = f["state"]
        figs["recurrent_state_bytes"] = _fig(f"within {_pct(s['worst'])}", s["worst"], s["cases"],
                                             f"Mamba conv / ssm state on {s['cases']} SGLang log figures")
    if m_era := _era("SGLang", est.settings.get("engine_version"), d["versions"]):
        guesses.append(m_era)
    summary = [f"KV token pool {figs['kv_cache_bytes']['band']} on {pool['cases']} SGLang logs",
               f"weights {figs['weights_bytes']['band']} on {w['cases']}"]
    return figs, summary


def _ollama(est: MemoryEstimate, data: dict[str, Any], guesses: list[str]) -> tuple[dict[str, Any], list[str]]:
    figs, summary = _llamacpp(est, data["llama.cpp"], guesses)
    d = data["ollama"]
    req = d["figures"]["memory.required.partial"]
    kv = d["figures"]["memory.required.kv"]
    figs["ollama_estimate"] = _fig(f"within {_pct(max(req['worst'], d['figures']['memory.required.full']['worst']))}",
                                   req["worst"], req["cases"],
                                   f"Ollama's own memory.required on {req['cases']} Ollama logs (KV within "
                                   f"{_pct(kv['worst'])} on {kv['cases']})")
    if m_era := _era("Ollama", est.settings.get("engine_version"), d["versions"]):
        guesses.append(m_era)
    return figs, [*summary, f"Ollama's own estimate {figs['ollama_estimate']['band']} on {req['cases']} logs"]


def _transformers(est: MemoryEstimate, d: dict[str, Any], guesses: list[str]) -> tuple[dict[str, Any], list[str]]:
    group = kind_group(est.model.kinds())
    g = d["by_kind"].get(group)
    words = GROUP_WORDS[group]
    if g and g["exact"] == g["cases"]:
        kv = _fig("exact", 0.0, g["cases"], f"every cache tensor's bytes equal to transformers {d['version']}'s on "
                  f"{g['cases']} CPU generate runs of {words} models ({', '.join(g['models'])})")
    else:
        kv = _unverified(f"no {words} model among transformers' CPU runs")
    figs = {"kv_cache_bytes": kv,
            "weights_bytes": _unverified("weights are not among transformers' measured figures"),
            "compute_bytes": _unverified("activations are not among transformers' measured figures"),
            "overhead_bytes": _unverified("the CUDA context is not among transformers' measured figures")}
    version = str(est.settings.get("engine_version") or "")
    if version and version != d["version"]:
        guesses.append(f"transformers {version}: the cache evidence ran {d['version']}; the rules of {version} are "
                       "followed unverified")
    return figs, [f"KV {kv['band']}" + (f" on {g['cases']} transformers runs of {words} models" if g else ""),
                  "weights, activations and overhead unverified"]


def error_band(est: MemoryEstimate) -> dict[str, Any]:
    """The `error_band` JSON key: per figure a band ("exact", "within 1.1%", "within 1.0% of GPU memory",
    "unverified"), its relative size, the number of ground-truth cases and the basis; `guesses` for figures
    resting on guesses; `summary` one line for the table."""
    data = band_data()
    guesses: list[str] = []
    m = est.model
    # the engine's figures (Ollama's runner is llama.cpp's); none for an engine without evidence or a broken install
    known = all(k in data for k in {"ollama": ("ollama", "llama.cpp")}.get(est.engine, (est.engine,)))
    if known and est.engine == "llama.cpp":
        figs, summary = _llamacpp(est, data["llama.cpp"], guesses)
        evidence = data["llama.cpp"]["evidence"]
    elif known and est.engine == "ollama":
        figs, summary = _ollama(est, data, guesses)
        evidence = data["ollama"]["evidence"] + "; its runner's allocation as llama.cpp's"
    elif known and est.engine == "transformers":
        figs, summary = _transformers(est, data["transformers"], guesses)
        evidence = data["transformers"]["evidence"]
    elif known and est.engine in ("vllm", "sglang"):
        figs, summary = (_vllm if est.engine == "vllm" else _sglang)(est, data[est.engine], guesses)
        evidence = data[est.engine]["evidence"]
    else:
        figs = {k: _unverified(f"no {est.engine} accuracy figures in the band's evidence")
                for k in ("weights_bytes", "kv_cache_bytes", "compute_bytes", "overhead_bytes")}
        summary = [f"no accuracy figures for {est.engine}: every figure unverified"]
        evidence = ""
    if not m.weights.exact:
        guesses.append(f"weights computed from the architecture ({m.weights.format}), not read from file headers")
    if "(derived, not read from a verbatim copy" in m.source:
        guesses.append("catalog entry derived from a related model's config, not read from this model's own")
    guesses += [f"model: {label}" for label in m.labels]
    return {"summary": "; ".join(summary), "figures": figs, "guesses": guesses, "evidence": evidence,
            "source": SOURCE}
