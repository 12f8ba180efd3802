"""The error band's figures (src/oomkit/data/band.json), regenerated from the project's own accuracy evidence:
llama.cpp run on the CPU over the ground-truth grid (tests/test_groundtruth_llamacpp.py, as
bench/accuracy_llamacpp.py), the real start-up logs of vLLM, SGLang and Ollama kept as fixtures
(tests/test_vllm.py, tests/sglang_cases.py, tests/test_ollama.py), the llama.cpp GPU logs per backend, and
transformers' own cache tensors on the CPU (tests/test_transformers_engine.py).

    PYTHONPATH=. python bench/band.py            # print the figures
    PYTHONPATH=. python bench/band.py --write    # rewrite src/oomkit/data/band.json and docs/accuracy.md's table

tests/test_error_band.py recomputes the log-based figures and one llama.cpp model's grid and checks them against
the file, so the band cannot drift from the evidence. Errors are absolute relative errors (0.0105 = 1.05%).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
from pathlib import Path
from typing import Any

from oomkit.accuracy import kind_group
from oomkit.engines.versions import llamacpp_build_on

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "src" / "oomkit" / "data" / "band.json"
LOGS = ROOT / "tests" / "fixtures" / "engine_logs"


def _r(x: float) -> float:
    return round(x, 5)


def llamacpp_model(key: str, n_layers: int) -> dict[str, Any]:
    """One model's grid: cases llama.cpp ran, how many matched every exact figure, compute ratio median / worst."""
    from bench.accuracy_llamacpp import model_grid  # lazy: it loads the llama.cpp ground-truth grid's modules

    m = model_grid(key, n_layers)
    return {"architecture": m.spec.architecture, "kind": kind_group(m.spec.kinds()), "cases": m.cases,
            "exact": m.exact, "refused_too": m.refused_too,
            "compute_median": _r(abs(statistics.median(m.ratios) - 1)),
            "compute_worst": _r(max(abs(r - 1) for r in m.ratios))}


def llamacpp() -> dict[str, Any]:
    from tests import gt_compare as g

    models = {key: llamacpp_model(key, n) for key, n in g.MODELS}
    by_kind: dict[str, dict[str, Any]] = {}
    for key, m in models.items():
        k = by_kind.setdefault(m["kind"], {"models": [], "cases": 0, "exact": 0, "compute_worst": 0.0})
        k["models"].append(key)
        k["cases"] += m["cases"]
        k["exact"] += m["exact"]
        k["compute_worst"] = max(k["compute_worst"], m["compute_worst"])
    backends: dict[str, int] = {"cpu": sum(m["cases"] for m in models.values())}
    versions = []
    for p in sorted(LOGS.glob("llamacpp*/**/*.json")):  # every llama.cpp log set: backends, fit, multi-GPU ...
        fx = json.loads(p.read_text())
        backends[fx.get("backend") or "cuda"] = backends.get(fx.get("backend") or "cuda", 0) + 1
        versions.append(_llamacpp_build(str(fx.get("engine_version") or "")))
    return {"evidence": "llama.cpp@0c1e57098 (llama-cpp-python 0.3.36) run on the CPU over synthetic GGUFs "
                        "carrying real models' layer shapes; GPU logs per backend in tests/fixtures/engine_logs",
            "cases": sum(m["cases"] for m in models.values()),
            "exact": sum(m["exact"] for m in models.values()),
            "compute_worst": max(m["compute_worst"] for m in models.values()),
            "by_kind": dict(sorted(by_kind.items())), "models": models, "backend_cases": backends,
            "log_versions": _versions(versions), "gpu_compute": llamacpp_gpu()}


def llamacpp_gpu() -> dict[str, Any]:
    """The compute buffers of llama.cpp's CUDA backend as measured on an H200 (tests/fixtures/llamacpp_cuda/, the
    rows of bench/accuracy_llamacpp_cuda.py): the GPU's graph is replayed with ggml-cuda's fusions, not checked
    node by node as the CPU's, so a GPU estimate's compute band is this one."""
    from bench.accuracy_llamacpp_cuda import rows  # lazy: it loads the CUDA measurements' test module

    data = rows()
    errs = [x - 1 for a in data.values() for dev in ("CUDA0", "CUDA_Host") for x in a[dev]]
    return {**_fig(errs), "settings": sum(a["cases"] for a in data.values()),
            "evidence": "llama.cpp 0c1e57098 built for CUDA 13.0 (sm_90), run on one H200 (tools/cuda_groundtruth/)"}


def _fig(errs: list[float]) -> dict[str, Any]:
    errs = [abs(e) for e in errs]
    return {"cases": len(errs), "median": _r(statistics.median(errs)), "worst": _r(max(errs))}


def _llamacpp_build(version: str) -> str:
    """A fixture's llama.cpp release as a build number: a log known only by its date stands for the build of that day."""
    if len(version) == 10 and version[4] == "-" and version[7] == "-":
        return f"b{llamacpp_build_on(version)}"
    return version


def _versions(vs: list[str]) -> list[str]:
    def key(v: str) -> tuple[int, ...]:
        return tuple(int(p) for p in "".join(c if c.isdigit() else " " for c in v).split()[:3])

    vs = sorted({v for v in vs if v and any(c.isdigit() for c in v)}, key=key)
    return [vs[0], vs[-1]] if vs else []


def vllm() -> dict[str, Any]:
    from tests.test_vllm import all_cases

    cases = all_cases()
    figs = {f: _fig([c.errors[f] for c in cases if f in c.errors]) for f in ("tokens", "weights", "available")}
    refusal = [c.errors["refusal"] for c in cases if "refusal" in c.errors]
    figs["refusal"] = {"cases": len(refusal), "agree": sum(e == 0 for e in refusal)}
    return {"evidence": "vLLM start-up logs from public issues (tests/fixtures/engine_logs/vllm)",
            "logs": len(cases), "checkable": sum(1 for c in cases if c.errors),
            "versions": _versions([c.settings.engine_version for c in cases if c.settings and c.errors]),
            "figures": figs}


def sglang() -> dict[str, Any]:
    from tests import sglang_cases

    rows = sglang_cases.all_rows()
    groups = {"tokens_end_to_end": ("tokens (end to end)",), "tokens_from_free": ("tokens (printed avail)",),
              "kv_size": ("K size", "V size"), "weights": ("weights",), "state": ("conv state", "ssm state")}
    figs = {name: _fig([r.error for r in rows if r.figure in figures])
            for name, figures in groups.items() if any(r.figure in figures for r in rows)}
    # the fixtures carry no version field; each case names the release its log ran (SGLangSettings(engine_version=))
    versions = re.findall(r'engine_version="([^"]+)"', Path(sglang_cases.__file__).read_text())
    return {"evidence": "SGLang start-up logs from public issues (tests/fixtures/engine_logs/sglang)",
            "logs": len(sglang_cases.fixture_names()), "versions": _versions(versions), "figures": figs}


def ollama() -> dict[str, Any]:
    from tests.test_ollama import summary_rows

    used, rows = summary_rows()
    versions = [str(json.loads((LOGS / "ollama" / f"{u}.json").read_text()).get("engine_version") or "")
                for u in used if (LOGS / "ollama" / f"{u}.json").exists()]
    return {"evidence": "Ollama logs from public issues (tests/fixtures/engine_logs/ollama): its memory.* estimate",
            "logs": len(used), "versions": _versions(versions),
            "figures": {f: _fig(e) for f, e in rows.items()}}


def transformers() -> dict[str, Any]:
    """The KV cache transformers really allocates in a CPU `generate` (tests/test_transformers_engine.py: tiny
    random-weight models with real models' attention shapes), byte for byte per layer, against oomkit."""
    from oomkit.model.hf_config import spec_from_config
    from tests import test_transformers_engine as t

    by_kind: dict[str, dict[str, Any]] = {}
    for case, (slug, n_layers, over) in sorted(t.CASES.items()):
        for batch, prompt, new, dtype in ((1, 37, 4, "float32"), (2, 40, 9, "bfloat16")):
            cfg = t.real_config(slug, n_layers, dtype, **over)
            nbytes, storage = t.measure(t._hf_model(cfg), batch, prompt, new)
            pred = t.predict(cfg, batch, prompt, new)
            k = by_kind.setdefault(kind_group(spec_from_config(cfg, name="tiny").kinds()),
                                   {"models": [], "cases": 0, "exact": 0})
            k["models"] = sorted({*k["models"], case})
            k["cases"] += 1
            k["exact"] += [c.nbytes_end for c in pred] == nbytes and [c.storage_end for c in pred] == storage
    return {"evidence": "transformers run on the CPU: generate with tiny models carrying real attention shapes, "
                        "every cache tensor's bytes (tests/test_transformers_engine.py)",
            "version": t.installed_version(), "cases": sum(k["cases"] for k in by_kind.values()),
            "exact": sum(k["exact"] for k in by_kind.values()), "by_kind": dict(sorted(by_kind.items()))}


def build() -> dict[str, Any]:
    return {"generated_by": "PYTHONPATH=. python bench/band.py --write",
            "llama.cpp": llamacpp(), "vllm": vllm(), "sglang": sglang(), "ollama": ollama(),
            "transformers": transformers()}


DOC = ROOT / "docs" / "accuracy.md"
BEGIN, END = "<!-- band: bench/band.py -->", "<!-- /band -->"


def _p(x: float) -> str:
    from oomkit.accuracy import _pct

    return _pct(x)


def markdown(d: dict[str, Any]) -> str:
    """The band per engine for docs/accuracy.md (rounded up, as the estimates print it)."""
    from oomkit.accuracy import GROUP_WORDS

    ll, v, sg, ol, tf = d["llama.cpp"], d["vllm"], d["sglang"], d["ollama"], d["transformers"]
    kinds = ", ".join(f"{_p(k['compute_worst'])} ({GROUP_WORDS[name]}, {k['cases']} cases)"
                      for name, k in ll["by_kind"].items())
    vf, sf, of = v["figures"], sg["figures"], ol["figures"]
    req = max(of["memory.required.full"]["worst"], of["memory.required.partial"]["worst"])
    tkinds = ", ".join(f"{GROUP_WORDS[n]} {k['exact']}/{k['cases']}" for n, k in tf["by_kind"].items())
    rows = [
        ("llama.cpp, Ollama's runner", f"KV and recurrent state exact ({ll['exact']}/{ll['cases']}); compute buffer "
         f"within {kinds}; model buffer exact when read from a GGUF header",
         f"{ll['cases']} CPU cases of the grid above; GPU logs {ll['log_versions'][0]} to {ll['log_versions'][1]}"),
        ("vLLM", f"weights within {_p(vf['weights']['worst'])} ({vf['weights']['cases']} logs); available KV within "
         f"{_p(vf['available']['worst'])} of GPU memory ({vf['available']['cases']}); refusal agrees "
         f"{vf['refusal']['agree']}/{vf['refusal']['cases']}",
         f"{v['logs']} logs, {v['checkable']} checkable ({v['versions'][0]} to {v['versions'][1]})"),
        ("SGLang", f"token pool within {_p(sf['tokens_end_to_end']['worst'])} from the GPU's memory "
         f"({sf['tokens_end_to_end']['cases']} logs); K/V sizes within {_p(sf['kv_size']['worst'])} "
         f"({sf['kv_size']['cases']}); weights within {_p(sf['weights']['worst'])} ({sf['weights']['cases']})",
         f"{sg['logs']} logs ({sg['versions'][0]} to {sg['versions'][1]})"),
        ("Ollama's own estimate", f"memory.required within {_p(req)}; KV "
         + ("exact" if of["memory.required.kv"]["worst"] == 0 else f"within {_p(of['memory.required.kv']['worst'])}"),
         f"{ol['logs']} logs ({ol['versions'][0]} to {ol['versions'][1]})"),
        ("transformers", f"KV cache exact ({tkinds}); weights, activations and overhead unverified",
         f"{tf['cases']} CPU `generate` runs of transformers {tf['version']}"),
        ("MLX", 'no band figures: every figure says "unverified"', ""),
    ]
    return "\n".join([BEGIN, "", "| engine | band | from |", "|---|---|---|",
                      *(f"| {a} | {b} | {c} |" for a, b, c in rows), "", END])


def doc_updated(text: str, d: dict[str, Any]) -> str:
    a, b = text.index(BEGIN), text.index(END) + len(END)
    return text[:a] + markdown(d) + text[b:]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--write", action="store_true", help=f"rewrite {OUT.relative_to(ROOT)}")
    data = build()
    text = json.dumps(data, indent=1, sort_keys=False) + "\n"
    if ap.parse_args().write:
        OUT.parent.mkdir(parents=True, exist_ok=True)
        OUT.write_text(text)
        DOC.write_text(doc_updated(DOC.read_text(encoding="utf-8"), data), encoding="utf-8")
        print(f"wrote {OUT.relative_to(ROOT)} and the band table of {DOC.relative_to(ROOT)}")
    else:
        print(text)


if __name__ == "__main__":
    main()
