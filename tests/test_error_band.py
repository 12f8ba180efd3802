"""The error band on every estimate (`error_band` in the JSON, a line in the table) and its data file.

src/oomkit/data/band.json is written by bench/band.py from the accuracy evidence. Here the log-based figures
(vLLM, SGLang, Ollama: every fixture) and one llama.cpp model's grid (llama.cpp run on the CPU) are recomputed
from the ground truth and must equal the file, so the band cannot drift from the evidence.
"""

from __future__ import annotations

import importlib.util
import io
import json
from contextlib import redirect_stdout
from pathlib import Path

import pytest

import oomkit
from oomkit import accuracy
from oomkit.cli import main

ROOT = Path(__file__).resolve().parents[1]


def _bench_band():
    spec = importlib.util.spec_from_file_location("bench_band", ROOT / "bench" / "band.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


DATA = json.loads((ROOT / "src" / "oomkit" / "data" / "band.json").read_text())


@pytest.mark.parametrize("engine", ["vllm", "sglang", "ollama"])
def test_log_figures_equal_the_evidence(engine):
    """Every vLLM / SGLang / Ollama figure of the band recomputed from all start-up log fixtures."""
    band = _bench_band()
    assert getattr(band, engine)() == DATA[engine], \
        "the evidence changed (a fixture added?): PYTHONPATH=. python bench/band.py --write"


def test_one_llamacpp_model_recomputed_from_llamacpp():
    pytest.importorskip("llama_cpp")
    band = _bench_band()
    assert band.llamacpp_model("llama-3.1-8b", 4) == DATA["llama.cpp"]["models"]["llama-3.1-8b"]


def test_llamacpp_gpu_compute_recomputed_from_the_cuda_measurements():
    assert _bench_band().llamacpp_gpu() == DATA["llama.cpp"]["gpu_compute"]


def test_transformers_cache_recomputed_from_transformers():
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    assert _bench_band().transformers() == DATA["transformers"]


def test_accuracy_page_shows_the_band_of_the_file():
    text = (ROOT / "docs" / "accuracy.md").read_text(encoding="utf-8")
    assert _bench_band().doc_updated(text, DATA) == text, "PYTHONPATH=. python bench/band.py --write"


def test_llamacpp_groups_add_up():
    """The per-kind groups and the totals are the per-model rows summed (the rows are what llama.cpp measured)."""
    d = DATA["llama.cpp"]
    models = d["models"]
    assert sum(g["cases"] for g in d["by_kind"].values()) == d["cases"] == sum(m["cases"] for m in models.values())
    for kind, g in d["by_kind"].items():
        assert all(models[k]["kind"] == kind for k in g["models"])
        assert g["compute_worst"] == max(models[k]["compute_worst"] for k in g["models"])
    # the published claim: every KV / state / model / output figure exact, the compute buffer within 7%
    assert d["exact"] == d["cases"] >= 200
    assert d["compute_worst"] < 0.07
    assert {"full", "sliding", "latent", "recurrent", "hybrid"} <= set(d["by_kind"])


@pytest.mark.parametrize("engine", ["llama.cpp", "vllm", "sglang", "ollama", "transformers", "mlx"])
def test_every_engine_estimate_carries_a_band(engine):
    d = oomkit.estimate("qwen3-8b", engine, vram="24GiB", find_max_context=False).to_dict()
    band = d["error_band"]
    assert band["summary"]
    assert {"weights_bytes", "kv_cache_bytes", "compute_bytes"} <= set(band["figures"])
    # the contract's keys are still there: the band is an addition
    assert {"weights_bytes", "kv_cache_bytes", "total_bytes", "warnings", "engine_view"} <= set(d)


def test_transformers_band():
    band = oomkit.estimate("gemma3:4b", "transformers", find_max_context=False).to_dict()["error_band"]
    assert band["figures"]["kv_cache_bytes"]["band"] == "exact"
    assert band["figures"]["weights_bytes"]["band"] == "unverified"
    mlx = oomkit.estimate("gemma3:4b", "mlx", find_max_context=False).to_dict()["error_band"]
    assert all(f["band"] == "unverified" for f in mlx["figures"].values())


def test_band_follows_the_architecture_kind():
    """On the CPU the compute band is the CPU grid's for the model's cache layout; on a GPU the CUDA backend's
    measured worst case joins it (its graph is not replayed node by node against llama.cpp's as the CPU's is)."""
    cpu = dict(cpu_only=True, ram="64GiB", find_max_context=False)
    full = oomkit.estimate("qwen3-8b", "llama.cpp", **cpu).to_dict()["error_band"]
    mla = oomkit.estimate("deepseek-v3", "llama.cpp", **cpu).to_dict()["error_band"]
    assert full["figures"]["compute_bytes"]["relative"] == DATA["llama.cpp"]["by_kind"]["full"]["compute_worst"]
    assert mla["figures"]["compute_bytes"]["relative"] == DATA["llama.cpp"]["by_kind"]["latent"]["compute_worst"]
    gpu = oomkit.estimate("qwen3-8b", "llama.cpp", find_max_context=False).to_dict()["error_band"]
    gpu_worst = DATA["llama.cpp"]["gpu_compute"]["worst"]
    assert gpu["figures"]["compute_bytes"]["relative"] == max(gpu_worst,
                                                             DATA["llama.cpp"]["by_kind"]["full"]["compute_worst"])
    # every CUDA0 compute buffer is exact since the Mamba-2 -nkvo replay (bench/accuracy_llamacpp_cuda.py): the worst
    # is a CUDA_Host buffer, gemma-3-12b's with layers on the host (0.974 of the measured)
    assert 0.02 < gpu_worst < 0.03
    assert "MLA" in mla["summary"] and "full-attention" in full["summary"]
    assert full["figures"]["kv_cache_bytes"]["band"] == "exact"


def test_vllm_band_is_the_logs_worst_case():
    band = oomkit.estimate("qwen3-8b", "vllm", vram="80GiB", find_max_context=False).to_dict()["error_band"]
    f = DATA["vllm"]["figures"]
    assert band["figures"]["kv_cache_bytes"]["relative"] == f["available"]["worst"]
    assert band["figures"]["kv_cache_bytes"]["of"] == "gpu_memory"
    assert band["figures"]["weights_bytes"]["relative"] == f["weights"]["worst"]
    # a bound is rounded up, never down: 1.048% is "within 1.1%"
    assert accuracy._pct(0.01048) == "1.1%"


def test_guesses_are_said(monkeypatch):
    """An assumed quant, a derived catalog entry, a backend without a log, a release newer than every log."""
    band = oomkit.estimate("qwen2.5-0.5b", "llama.cpp", backend="opencl", find_max_context=False).to_dict()[
        "error_band"]
    text = " | ".join(band["guesses"])
    assert "assuming Q4_K_M" in text
    assert "catalog entry derived" in text
    # the OpenCL logs are in the evidence: their count is said beside the compute figure, no guess
    opencl_logs = DATA["llama.cpp"]["backend_cases"]["opencl"]
    assert "no llama.cpp opencl log" not in text
    assert f"{opencl_logs} real opencl log(s) agree" in band["figures"]["compute_bytes"]["basis"]
    # a backend the evidence holds no log of is said to be a guess
    cases = {k: v for k, v in DATA["llama.cpp"]["backend_cases"].items() if k != "opencl"}
    monkeypatch.setattr(accuracy, "band_data", lambda: {**DATA, "llama.cpp": {**DATA["llama.cpp"], "backend_cases": cases}})
    g = oomkit.estimate("qwen2.5-0.5b", "llama.cpp", backend="opencl",
                        find_max_context=False).to_dict()["error_band"]["guesses"]
    assert any("no llama.cpp opencl log" in x for x in g)
    monkeypatch.undo()
    v = oomkit.estimate("qwen3-8b", "vllm", vram="80GiB", engine_version="0.33.0",
                        find_max_context=False).to_dict()["error_band"]["guesses"]
    assert any("newer than every log" in x for x in v)
    # qwen2 loads from b1923 (PR #5037); Qwen3 would be refused at b2000 (no qwen3 architecture before b5092)
    ancient = oomkit.estimate("qwen2.5-0.5b", "llama.cpp", engine_version="b2000",
                              find_max_context=False).to_dict()["error_band"]["guesses"]
    assert any("older than every llama.cpp log" in x for x in ancient)
    old = oomkit.estimate("qwen3-8b", "vllm", vram="80GiB", engine_version=DATA["vllm"]["versions"][1],
                          find_max_context=False).to_dict()["error_band"]["guesses"]
    assert not any("every log" in x for x in old)
    # an Ollama release is no llama.cpp build: only its own era is weighed
    ollama = oomkit.estimate("qwen3-8b", "ollama", vram="24GiB", engine_version="0.32.15",
                             find_max_context=False).to_dict()["error_band"]["guesses"]
    assert any(x.startswith("Ollama 0.32.15 is newer than every log") for x in ollama)
    assert not any("llama.cpp 0.32.15" in x for x in ollama)


def test_gguf_header_weights_are_exact(tmp_path):
    from tests.ggufs import write_llama_gguf

    path = write_llama_gguf(tmp_path / "m.gguf")
    band = oomkit.estimate(str(path), "llama.cpp", find_max_context=False).to_dict()["error_band"]
    assert band["figures"]["weights_bytes"]["band"] == "exact"
    assert not any("weights computed" in x for x in band["guesses"])


def test_cli_table_and_json_show_the_band():
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["estimate", "deepseek-v3", "--vram", "80GiB,80GiB,80GiB,80GiB"]) in (0, None)
    assert "error band: KV exact; compute buffer within" in out.getvalue()
    out = io.StringIO()
    with redirect_stdout(out):
        main(["estimate", "qwen3-8b", "--engine", "vllm", "--vram", "80GiB", "--json"])
    assert "within" in json.loads(out.getvalue())["error_band"]["summary"]


def test_web_calculator_shows_the_band():
    from oomkit.web.pages import calculator_page

    est = oomkit.estimate("qwen3-8b", "vllm", vram="24GiB")
    html = calculator_page({"model": "qwen3-8b", "engine": "vllm"}, est, None, None)
    worst = accuracy._pct(DATA["vllm"]["figures"]["available"]["worst"])
    assert 'id="error-band"' in html and f"available KV within {worst} of GPU memory" in html
    assert "resting on a guess: vLLM 0.34.0 is newer than every log" in html


def test_a_missing_data_file_leaves_the_estimate_standing(monkeypatch, tmp_path):
    accuracy.band_data.cache_clear()
    monkeypatch.setattr(accuracy, "DATA", tmp_path / "absent.json")
    try:
        d = oomkit.estimate("qwen3-8b", "vllm", vram="24GiB", find_max_context=False).to_dict()
        assert d["error_band"]["figures"]["kv_cache_bytes"]["band"] == "unverified"
        assert d["kv_cache_bytes"] > 0
    finally:
        accuracy.band_data.cache_clear()
