"""oomkit beside the calculators people would pick instead, on the same ground truth: llama.cpp's own figures for
real models at full depth (the synthetic GGUFs of tests/groundtruth carrying each model's real header; llama.cpp
sizes them with its `no_alloc` dry run, as bench/accuracy_llamacpp.py), per figure (weights, KV cache + recurrent
state, compute buffer, total) and per architecture kind. The peers:

- llmfit (PyPI `llmfit`, a Rust binary with its own embedded model catalog): `llmfit plan NAME --context N
  --quant Q [--kv-quant T] --json`; weights = disk_size_gb, KV = the kv_alternatives row of that KV type, total =
  minimum.vram_gb (its "gb" read as 10^9 bytes, as its field names say). It has no engine choice, no parallel
  sequences, no compute-buffer figure.
- hf-mem (PyPI `hf-mem`): `--gguf-file F --experimental --max-model-len N --batch-size B` reads the GGUF header
  from the hub. It reads https://huggingface.co directly (HF_ENDPOINT is not honoured), so a local stand-in for
  the hub serves the same GGUF file: its HTTP client gets an in-process transport answering the repository listing
  and the Range reads from the file (/tmp, nothing leaves the machine). weights = memory, KV = kv_cache, total =
  total_memory; no engine choice, no compute-buffer figure.

The peers live in their own virtual environment outside the repository:

    python -m venv /tmp/peers-venv && /tmp/peers-venv/bin/pip install llmfit hf-mem
    PYTHONPATH=. .venv/bin/python bench/peers.py --peers /tmp/peers-venv

Errors are signed, relative to llama.cpp's figure; "n/a" where the peer has no such figure, and the reason where it
cannot express the case.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

MiB = 1 << 20

# llama.cpp ground-truth case -> (the name llmfit's catalog knows it by, its --quant for the GGUF's recipe)
LLMFIT = {
    "llama-3.1-8b": ("meta-llama/Llama-3.1-8B-Instruct", "Q4_0"),
    "qwen3-30b-a3b": ("Qwen/Qwen3-30B-A3B", "Q4_0"),
    "gemma-3-12b": ("google/gemma-3-12b-it", "Q4_0"),
    "gpt-oss-20b": ("openai/gpt-oss-20b", "MXFP4"),
    "deepseek-v3": ("deepseek-ai/DeepSeek-V3", "Q4_0"),
    "qwen3.5-27b": ("Qwen/Qwen3.5-27B", "Q4_0"),
    "mamba2-2.7b": ("state-spaces/mamba2-2.7b", "Q4_0"),
}
LLMFIT_KV = {"f16": "fp16", "q8_0": "q8_0", "q4_0": "q4_0"}

# hf-mem under a local stand-in for the hub: run by the peers' own interpreter
HFMEM_DRIVER = r'''
import importlib, json, os, sys
import httpx2
R = importlib.import_module("hf_mem.run")
path, n_ctx, batch, kv = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
name, size = os.path.basename(path), os.path.getsize(path)

def handler(request):
    url = str(request.url)
    if "/api/models/" in url:
        return httpx2.Response(200, json=[{"type": "file", "path": name, "size": size}])
    if url.endswith(name):
        a, b = request.headers.get("range", "bytes=0-").split("=")[1].split("-")
        a, b = int(a), min(int(b or size - 1), size - 1)
        with open(path, "rb") as f:
            f.seek(a)
            return httpx2.Response(206, content=f.read(b - a + 1))
    return httpx2.Response(404)

real = httpx2.AsyncClient
R.httpx2.AsyncClient = lambda **kw: real(transport=httpx2.MockTransport(handler), follow_redirects=True)
res = R.run(model_id="local/stand-in", experimental=True, max_model_len=n_ctx, batch_size=batch, gguf_file=name,
            kv_cache_dtype=kv)
print(json.dumps(res.to_json(), default=str))
'''


def truth_and_oomkit(key: str, over: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], Path, Any]:
    from oomkit.model.gguf_file import read_gguf_spec
    from tests import gt_compare as g

    s = dict(next(g.settings_grid()), no_alloc=True, use_mmap=False, **over)
    path = g.synth_file(key, None)
    spec = read_gguf_spec(path)
    m = g.llamacpp_run.measure(path, **s)
    e, o = _figures(g.engine_figures(m)), _figures(g.oomkit_figures(spec, s))
    # the dry run allocates no model buffer: the weights come from a real (mmap) load at the grid's base settings
    base = next(g.settings_grid())
    e["weights"] = g.engine_figures(g.llamacpp_run.measure(path, **base))["model_mib"]
    o["weights"] = g.oomkit_figures(spec, base)["model_mib"]
    for f in (e, o):
        f["total"] += f["weights"]
    return s, {"engine": e, "oomkit": o}, path, spec


def _figures(f: dict[str, Any]) -> dict[str, float]:
    """MiB per figure from gt_compare's figure dicts (weights added by the caller)."""
    kv = sum(k + v for _, _, k, v in f["caches"]) + f["r_mib"] + f["s_mib"]
    return {"weights": 0.0, "kv": kv, "compute": f["compute_mib"], "total": kv + f["compute_mib"] + f["output_mib"]}


def llmfit(peers: Path, key: str, s: dict[str, Any]) -> dict[str, Any]:
    exe = peers / "bin" / "llmfit"
    if not exe.exists():
        return {"error": "not installed"}
    if s["n_seq_max"] > 1 and not s["kv_unified"]:
        return {"error": f"no parallel sequences ({s['n_seq_max']} separate caches)"}
    # a unified cache: the sequences share n_ctx cells, so the total context is the question llmfit can take
    name, quant = LLMFIT[key]
    kv = LLMFIT_KV.get(s["type_k"])
    argv = [str(exe), "plan", name, "--context", str(s["n_ctx"]), "--quant", quant, "--kv-quant", kv, "--json"]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    try:
        d = json.loads(r.stdout)
    except json.JSONDecodeError:
        return {"error": (r.stdout + r.stderr).strip().splitlines()[-1][:120] if (r.stdout + r.stderr).strip()
                else f"exit {r.returncode}"}
    row = next((a for a in d.get("kv_alternatives", []) if a.get("kv_quant") == kv), None)
    gb = 1e9 / MiB
    return {"weights": d["disk_size_gb"] * gb, "kv": row["kv_cache_gb"] * gb if row else None, "compute": None,
            "total": d["minimum"]["vram_gb"] * gb, "as": f"{name} --quant {quant} --kv-quant {kv}"}


def hfmem(peers: Path, path: Path, s: dict[str, Any]) -> dict[str, Any]:
    py = peers / "bin" / "python"
    if not (peers / "bin" / "hf-mem").exists():
        return {"error": "not installed"}
    kv = {"f16": "F16", "q8_0": "Q8_0", "q4_0": "Q4_0"}[s["type_k"]]
    # a unified cache shares n_ctx cells among the sequences (llama.cpp kv_unified); separate ones hold n_ctx each
    batch = 1 if s["kv_unified"] else s["n_seq_max"]
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(HFMEM_DRIVER)
    r = subprocess.run([str(py), f.name, str(path), str(s["n_ctx"]), str(batch), kv], capture_output=True,
                       text=True, timeout=300)
    Path(f.name).unlink()
    if r.returncode:
        return {"error": r.stderr.strip().splitlines()[-1][:160] if r.stderr.strip() else f"exit {r.returncode}"}
    d = json.loads(r.stdout)
    return {"weights": d["memory"] / MiB, "kv": d.get("kv_cache", 0) / MiB, "compute": None,
            "total": d["total_memory"] / MiB}


def err(pred: float | None, truth: float) -> str:
    if pred is None:
        return "n/a"
    if truth == 0:
        return "exact" if pred == 0 else f"{pred:,.0f} MiB vs 0"
    e = (pred - truth) / truth
    return "exact" if abs(e) < 5e-5 else f"{e:+.1%}"


# The logged GPU engines: what oomkit's band rests on (src/oomkit/data/band.json, bench/band.py) and why neither
# peer can be held against those logs.
LOG_ROWS = (
    ("vLLM", "available KV memory, share of GPU memory", "available",
     "no engine choice: one figure for every engine, no gpu_memory_utilization / profiled activations / CUDA graphs",
     "KV for max_model_len x batch, not vLLM's available KV pool; weights need the safetensors headers, which the "
     "log fixtures do not hold"),
    ("vLLM", "weights ('Model loading took')", "weights", "its catalog's size at a GGUF quant, not the checkpoint",
     "the safetensors headers are not in the fixtures (no stand-in possible without them)"),
    ("SGLang", "token pool from the GPU's memory", "tokens_end_to_end", "no engine choice, no token pool",
     "no mem_fraction_static, no token pool"),
    ("Ollama", "its own memory.required estimate", "memory.required.partial", "no Ollama estimate, no num_parallel",
     "no Ollama estimate"),
)


def log_rows() -> list[str]:
    from oomkit.accuracy import band_data

    d = band_data()
    out = ["| engine | figure | oomkit (worst / median, logs) | llmfit | hf-mem |", "|---|---|---|---|---|"]
    for engine, figure, key, why_llmfit, why_hfmem in LOG_ROWS:
        f = d[engine.lower()]["figures"][key]
        out.append(f"| {engine} | {figure} | {f['worst']:.2%} / {f['median']:.2%}, {f['cases']} | cannot: "
                   f"{why_llmfit} | cannot: {why_hfmem} |")
    return out


def main() -> None:
    from oomkit.accuracy import GROUP_WORDS, kind_group
    from tests.test_groundtruth_llamacpp import FULL_DEPTH

    ap = argparse.ArgumentParser()
    ap.add_argument("--peers", type=Path, default=Path("/tmp/peers-venv"))
    args = ap.parse_args()
    head = ["case", "kind", "figure", "llama.cpp (MiB)", "oomkit", "llmfit", "hf-mem"]
    print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    for key, over in FULL_DEPTH:
        s, figs, path, spec = truth_and_oomkit(key, over)
        peers = {"llmfit": llmfit(args.peers, key, s), "hf-mem": hfmem(args.peers, path, s)}
        case = (f"{key} ({spec.n_layers} layers, n_ctx {s['n_ctx']}, {s['n_seq_max']} seq, KV {s['type_k']})")
        kind = GROUP_WORDS[kind_group(spec.kinds())]
        for fig in ("weights", "kv", "compute", "total"):
            t = figs["engine"][fig]
            cells = [case, kind, {"kv": "KV + state"}.get(fig, fig), f"{t:,.1f}", err(figs["oomkit"][fig], t)]
            for p in peers.values():
                cells.append(f"cannot: {p['error']}" if "error" in p else err(p[fig], t))
            print("| " + " | ".join(cells) + " |")
            case = kind = ""
    print("\n" + "\n".join(log_rows()))


if __name__ == "__main__":
    main()
