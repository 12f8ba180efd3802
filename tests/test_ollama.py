"""The Ollama engine: Ollama's own memory.* figures held against real logs, hand-worked formula cases, Ollama's
defaults and environment, and the command line.

Ground truth: tests/fixtures/engine_logs/ollama/*.json, real Ollama log lines from public issues (source in
each file). Ollama prints sizes with format.HumanBytes2 (one decimal in GiB/MiB), so a printed value is only
known to half a unit; the error reported is what lies beyond that rounding.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from oomkit.engines import ollama as ol
from oomkit.errors import OomkitError
from oomkit.estimate import estimate
from oomkit.memory import Device
from oomkit.model.hf_config import spec_from_config
from oomkit.model.resolve import resolve

FIXTURES = Path(__file__).parent / "fixtures" / "engine_logs" / "ollama"
MiB, GiB = 1 << 20, 1 << 30

# Allowed error beyond the printed rounding, per field. KV and graph are closed formulas of the model's shape:
# they must land on the printed value. Weights come from oomkit's computed GGUF recipe, not the file Ollama
# pulled (a few tensors may differ in type): 3%. The required.* totals add the weights of the offloaded layers
# and depend on where the last layer falls: 5%.
TOLERANCE = {"memory.required.kv": 0.005, "memory.graph.full": 0.005, "memory.graph.partial": 0.005,
             "projector.graph": 0.005, "projector.weights": 0.03,
             "memory.weights.total": 0.03, "memory.weights.repeating": 0.03, "memory.weights.nonrepeating": 0.03,
             "memory.required.full": 0.05, "memory.required.partial": 0.05}


@pytest.fixture(autouse=True)
def _no_ollama_env(monkeypatch):
    for k in list(os.environ):
        if k.startswith("OLLAMA_") or k.startswith("LLAMA_ARG_FIT"):
            monkeypatch.delenv(k, raising=False)


def gpu(gib: float, i: int = 0) -> Device:
    return Device(id=f"CUDA{i}", name="GPU", memory_bytes=int(gib * GiB))


# ---------------------------------------------------------------------------------------------------------
# Real logs


def _fixtures() -> list[Path]:
    return sorted(FIXTURES.glob("*.json"))


def _load(path: Path) -> dict:
    fx = json.loads(path.read_text())
    fx["_stem"] = path.stem
    return fx


def _unit(printed: str) -> int:
    """Half of the last printed digit, in bytes (HumanBytes2: one decimal)."""
    unit = printed.split()[-1]
    return {"GiB": GiB, "MiB": MiB, "KiB": 1024, "B": 1}[unit] // 20 if unit != "B" else 0


# Releases a log's own figures pin down where the fixture states none (its date alone points elsewhere):
# graph.partial = 2 x graph.full and "flash attention enabled but not supported by model" exist only in
# 0.11.2 (8253ad4d2 added the warning, fcec04bf4 in 0.11.3 made partial = full); released the day before.
CONTENT_VERSIONS = {"gpt-oss-20b-4060ti-16gb-partial": "0.11.2",
                    # layers.split="" on one GPU: the string of v0.11.4 and before (v0.11.5, d5a0d8d90, prints
                    # a Go slice, "[19]"); the macOS app was not yet updated to the 0.11.5 of the log's date
                    "gemma3-270m-f16-metal-16gib-ctx4096": "0.11.4",
                    # device.go:233/238 and server.go:720: the line numbers of v0.12.4-v0.12.5 only, and
                    # server.go:720 is ollamaServer.Load (the Ollama engine), which v0.12.5 did not run qwen3 on
                    # (its OllamaEngineRequired list lacks qwen3: 3d32249c7, #12556; back in v0.12.6): v0.12.4
                    "qwen3-32b-multi-gpu-0.13-debug-memory": "0.12.4",
                    # sched.go:472 msg="loaded runners": v0.7.0-rc1 to v0.7.1-rc1 (v0.7.1 prints it from :483), and
                    # of those only v0.7.0's largest-layer buffer drops the 4.6 GiB card (the rc0/rc1 of v0.7.1
                    # already have 3fe74fba4's blk.0 buffer): tests/test_ollama_heldout.py
                    "gemma3-12b-qat-2gpu-split-ctx24576-0.7": "0.7.0"}
# Figures that depend on a file Ollama quantized differently from what oomkit computes (not comparable). None
# left: mistral-small3.1's blob 1fa8532d (attn_v F16, output.weight Q4_K) is Ollama v0.6.2-v0.6.8's quantizer,
# mirrored in engines/ollama/weights.py; gemma3:12b-it-qat's blob 1fb99eda86dc (token_embd F16) is Google's QAT
# file, likewise mirrored there.
FILE_DIFFERENCES: dict[str, set[str]] = {}
# Held-out logs with a gap left: strict xfails in test_real_logs with the error measured, out of the summary. None
# left: gemma3:12b-it-qat's 37,0 split (ollama/ollama#8430) is v0.7.0's buffer rule on the QAT file's F16 token_embd
XFAIL_LOGS: dict[str, str] = {}
# Logs of builds between two releases: the rules of the release before them hold for some figures only, so their own
# tests hold those (tests/test_ollama_heldout.py) and the release-by-release checks here leave them out
BETWEEN_RELEASES = {"deepseek-coder-v2-16b-q4_0-metal-96gib-pr5117":
                    "PR #5117's branch (359b15a59): v0.1.44's KV and graph, v0.1.45's log line and weights split"}


def _log_version(fx: dict) -> str:
    """The release the log came from: as stated, else the newest release on the log's date."""
    if fx.get("_stem") in CONTENT_VERSIONS:
        return CONTENT_VERSIONS[fx["_stem"]]
    stated = fx.get("engine_version")
    if stated:
        try:
            return ol.version_str(ol.parse_version(stated))
        except OomkitError:
            pass  # "0.12.4-0.13.2 (one of ...)": fall back to the date
    date = fx.get("log_date")
    if not date:
        m = re.search(r"time=(\d{4}-\d{2}-\d{2})", fx.get("quoted", ""))
        if not m:
            pytest.skip("fixture has neither a version nor a dated log line")
        date = m.group(1)
    return ol.version_at(date)


def _weights_format(quant: str) -> str:
    q = re.match(r"[A-Za-z0-9_]+", quant or "Q4_K_M").group(0)
    return {"MXFP4": "MXFP4_MOE"}.get(q.upper(), q)


def _spec(fx: dict):
    quant = _weights_format(fx["settings"].get("weights_quant"))
    if "config" in fx:
        return spec_from_config(fx["config"], name=fx["model"], weight_format=quant)
    try:
        return resolve(fx["model"].split()[0], quant)
    except OomkitError:
        pytest.skip(f"no config.json in the fixture and {fx['model']!r} is not in the catalog")


def _run_fixture(fx: dict, free_shift: float = 0.0):
    s = fx["settings"]
    p = fx["printed"]
    if not any(k in p for k in TOLERANCE):
        pytest.skip("the fixture prints none of Ollama's memory.* estimate fields")
    if fx.get("_stem") in BETWEEN_RELEASES:
        pytest.skip(f"a build between releases: {BETWEEN_RELEASES[fx['_stem']]}")
    cpu_only = p.get("library") == "cpu" or "CPU only" in str(s.get("device", ""))
    spec = _spec(fx)
    # a CPU-only log's memory.available is system RAM: oomkit's CPU-only estimate (no devices)
    free = [] if cpu_only else (p.get("memory.available_bytes") or [])
    devices = tuple(Device(id=f"GPU{i}", name="GPU", memory_bytes=int(f + free_shift * GiB),
                           free_bytes=int(f + free_shift * GiB)) for i, f in enumerate(free))
    library = "" if cpu_only else (s.get("library") or p.get("library") or "cuda")
    requested = p.get("layers.requested")
    num_gpu = requested if isinstance(requested, int) and requested >= 0 else -1
    fa = s.get("flash_attention")
    settings = ol.OllamaSettings(num_ctx=s.get("num_ctx") or 0,
                                 flash_attention={True: "1", False: ""}.get(fa, "") if isinstance(fa, bool) else "",
                                 num_parallel=s["num_parallel"] if isinstance(s.get("num_parallel"), int) else 0,
                                 num_gpu=num_gpu, library=library,
                                 env=tuple(sorted((fx.get("env") or {}).items())), engine_version=_log_version(fx))
    return ol.ENGINE.estimate(spec, devices, settings)


def _errors(fx: dict, est) -> dict[str, float]:
    """field -> relative error beyond the printed rounding."""
    mine = est.engine_view["ollama_memory"]
    out = {}
    for field in TOLERANCE:
        if field not in fx["printed"] or field in FILE_DIFFERENCES.get(fx.get("_stem"), ()):
            continue
        if field.startswith("memory.required.") and field != "memory.required.kv" and any(
                k.startswith("projector.") for k in fx["printed"]) and "projector.weights" not in mine:
            continue  # the vision projector is part of required.*: comparable where oomkit counts it
        if field not in mine:
            continue
        printed, want = fx["printed"][field], fx["printed"][field + "_bytes"]
        if isinstance(printed, list):  # one GPU's figure per entry: compare the sum
            printed, want = printed[0], sum(want)
        got = mine[field]
        if isinstance(got, dict):
            got = sum(got.values())
        beyond = max(0, abs(got - want) - _unit(printed))
        out[field] = beyond / want if want else float(got != 0)
    return out


def _best_run(fx: dict):
    """memory.available is printed rounded too: try the free memory at both ends of its rounding interval."""
    best = None
    half = 0.049
    for shift in (0.0, -half, half):
        est = _run_fixture(fx, shift)
        err = _errors(fx, est)
        offload_ok = "layers.offload" not in fx["printed"] or _logged_offload(est) == fx["printed"]["layers.offload"]
        score = (not offload_ok, sum(err.values()))
        if best is None or score < best[0]:
            best = (score, est, err)
    return best[1], best[2]


@pytest.mark.parametrize("path", [pytest.param(p, marks=pytest.mark.xfail(strict=True, reason=XFAIL_LOGS[p.stem]))
                                  if p.stem in XFAIL_LOGS else p for p in _fixtures()], ids=lambda p: p.stem)
def test_real_logs(path):
    fx = _load(path)
    est, err = _best_run(fx)
    for field, e in err.items():
        assert e <= TOLERANCE[field], f"{field}: {e:.2%} beyond rounding ({est.engine_view['ollama_log']})"
    projector_known = ("projector.weights" in est.engine_view["ollama_memory"]
                       and "projector.weights" not in FILE_DIFFERENCES.get(fx["_stem"], ()))
    if "layers.offload" in fx["printed"] and "layers.offload" not in FILE_DIFFERENCES.get(fx["_stem"], ()) \
            and (not any(k.startswith("projector.") for k in fx["printed"]) or projector_known):
        assert _logged_offload(est) == fx["printed"]["layers.offload"]


def _logged_offload(est) -> int:
    """layers.offload of the msg=offload line (with OLLAMA_NEW_ESTIMATES in v0.11.x that is the old estimator's
    figure, printed next to the layout the runner really gets: engine_view["ollama_layers"])."""
    return int(re.search(r"layers\.offload=(\d+)", est.engine_view["ollama_log"]).group(1))


def summary_rows() -> tuple[list[str], dict[str, list[float]]]:
    """The fixtures that ran and, per field, the error beyond the printed rounding of each (bench/accuracy_ollama.py
    prints them)."""
    rows: dict[str, list[float]] = {}
    used = []
    for path in _fixtures():
        if path.stem in XFAIL_LOGS:
            continue
        fx = _load(path)
        try:
            _, err = _best_run(fx)
        except pytest.skip.Exception:
            continue
        used.append(path.stem)
        for field, e in err.items():
            rows.setdefault(field, []).append(e)
    return used, rows


def test_real_logs_summary():
    """The worst error per field over all fixtures stays within TOLERANCE (the table: bench/accuracy_ollama.py)."""
    used, rows = summary_rows()
    assert len(used) >= 5
    for field, errs in rows.items():
        assert max(errs) <= TOLERANCE[field]


def test_exact_reproduction_of_a_log_line():
    """Where the model file is known exactly (F16, Q8_0), every printed figure is reproduced digit for digit."""
    fx = json.loads((FIXTURES / "ollama-eng-qwen2-14b-f16-4080s-2k.json").read_text())
    est = _run_fixture(fx)
    line = fx["quoted"].splitlines()[0]
    for field in (f for f in TOLERANCE if not f.startswith("projector.")):  # a text model: no projector
        printed = re.search(rf'{re.escape(field)}="([^"]+)"', line).group(1)
        assert ol.human_bytes2(est.engine_view["ollama_memory"][field]) == printed, field
    assert est.engine_view["ollama_layers"] == "24/49"


# ---------------------------------------------------------------------------------------------------------
# Formulas worked by hand (research note llamacpp-ollama-memory.md §3.2)


def test_gpt_oss_120b_kv_450_mib():
    spec = ol.ollama_gguf(resolve("gpt-oss:120b", default_format=ol.ENGINE.default_weight_format))
    g = ol.gguf_view(spec)
    gr = ol.graph_size(g, (0, 11, 5), num_ctx=8192, num_batch=512, num_parallel=1, kvct="", flash_attention=True)
    # 36 layers x (64 + 64) x 8 kv heads x 2 B: even layers 4096 + 512 tokens, odd layers 8192
    assert gr.kv_total == 18 * 2048 * (4096 + 512) + 18 * 2048 * 8192 == 471_859_200
    assert ol.human_bytes2(gr.kv_total) == "450.0 MiB"


def test_phi4_graph_default_formula():
    g = ol.gguf_view(resolve("phi4:14b", "Q4_K_M"))
    gr = ol.graph_size(g, (0, 9, 0), num_ctx=2048, num_batch=512, num_parallel=1, kvct="", flash_attention=False)
    # phi3 has no graph formula: partial = full = (heads / kv heads) * kvTotal / 6 = 4 * 400 MiB / 6
    kv_total = 40 * 2048 * (128 + 128) * 10 * 2
    assert gr.kv_total == kv_total == 400 * MiB
    assert gr.partial == gr.full == 4 * kv_total // 6
    assert ol.human_bytes2(gr.partial) == "266.7 MiB"


def test_gemma3_27b_parallel_2_kv():
    g = ol.gguf_view(resolve("gemma3:27b", "Q4_K_M"))
    gr = ol.graph_size(g, (0, 6, 3), num_ctx=4096, num_batch=512, num_parallel=2, kvct="", flash_attention=False)
    # 52 sliding layers hold 2 x 1024 + 512 tokens, 10 global layers 2 x 4096; (128 + 128) x 16 x 2 B per token
    assert gr.kv_total == 8192 * (52 * 2560 + 10 * 8192)
    assert ol.human_bytes2(gr.kv_total) == "1.6 GiB"
    # before v0.6.3 Ollama sized every layer at the full context
    old = ol.graph_size(g, (0, 6, 0), num_ctx=4096, num_batch=512, num_parallel=2, kvct="", flash_attention=False)
    assert old.kv_total == 62 * 8192 * 8192


def test_ollama_counts_q8_0_as_one_byte_the_runner_does_not():
    spec = resolve("llama3.1:8b", "Q4_K_M")
    env = (("OLLAMA_FLASH_ATTENTION", "1"), ("OLLAMA_KV_CACHE_TYPE", "q8_0"))
    est = ol.ENGINE.estimate(spec, (gpu(24),), ol.OllamaSettings(engine_version="0.12.10", num_ctx=8192, env=env))
    f16 = 32 * 8192 * 1024 * 2 * 2  # 32 layers x 8192 tokens x 8 x 128 (K and V) x 2 B
    assert est.settings["kv_cache_type"] == "q8_0"
    assert est.engine_view["ollama_memory"]["memory.required.kv"] == f16 // 2  # 1 byte per element
    assert est.kv_cache_bytes == f16 // 2 * 34 // 32  # q8_0 blocks: 34 bytes per 32 elements
    q4 = ol.ENGINE.estimate(spec, (gpu(24),), ol.OllamaSettings(
        engine_version="0.12.10", num_ctx=8192, env=(("OLLAMA_FLASH_ATTENTION", "1"), ("OLLAMA_KV_CACHE_TYPE", "q4_0"))))
    assert q4.engine_view["ollama_memory"]["memory.required.kv"] == f16 // 4  # 0.5 byte
    assert q4.kv_cache_bytes == f16 // 4 * 18 // 16


def test_embedding_model_estimated_with_kv():
    # a BERT GGUF carries no head_count_kv nor key_length: Ollama's reader defaults them to 1 and n_embd / heads
    # (fs/ggml KV.HeadCountKV), so it charges one 64-wide head of K and V per layer and token -- the figure behind
    # nomic-embed-text's 1.0 GiB in ollama/ollama#6448 (fixture nomic-embed-text-4070-parallel4-0.3)
    spec = resolve("nomic-embed-text", "F16")
    est = ol.ENGINE.estimate(spec, (gpu(8),), ol.OllamaSettings(engine_version="0.9.0", num_ctx=2048))
    assert est.kv_cache_bytes == 0  # the runner allocates no cache for an encoder
    kv = est.engine_view["ollama_memory"]["memory.required.kv"]
    np_ = est.settings["num_parallel"]
    assert kv == 12 * 2048 * np_ * (64 + 64) * 1 * 2
    assert est.engine_view["ollama_memory"]["memory.graph.full"] == 12 * kv // 6  # heads / kv heads = 12
    assert any("embedding model" in w for w in est.warnings)


def test_gpt_oss_graph_with_flash_attention():
    spec = ol.ollama_gguf(resolve("gpt-oss:20b", default_format=ol.ENGINE.default_weight_format))
    g = ol.gguf_view(spec)
    gr = ol.graph_size(g, (0, 12, 0), num_ctx=8192, num_batch=512, num_parallel=1, kvct="", flash_attention=True)
    assert gr.partial == gr.full == (4 * 1 + (8192 >> 10) + 110) * MiB  # 122 MiB


# ---------------------------------------------------------------------------------------------------------
# Defaults, environment, launch rules


@pytest.mark.parametrize("version,vram,want", [
    ("0.6.6", 24, 2048), ("0.6.7", 24, 4096), ("0.15.4", 80, 4096),
    ("0.15.5", 16, 4096), ("0.15.5", 24, 32768), ("0.32.15", 48, 262144), ("0.32.15", 46, 32768),
])
def test_default_context_by_version_and_vram_tier(version, vram, want):
    n, _ = ol.default_num_ctx(ol.parse_version(version), (gpu(vram),), 0)
    assert n == want


def test_default_context_is_clamped_to_the_trained_context():
    spec = resolve("llama3.1:8b", "Q4_K_M")  # 131072 trained
    est = ol.ENGINE.estimate(spec, (gpu(80),), ol.OllamaSettings())
    assert est.settings["num_ctx"] == 131072
    est = ol.ENGINE.estimate(spec, (gpu(24),), ol.OllamaSettings())
    assert est.settings["num_ctx"] == 32768 and est.engine_view["n_ctx"] == 32768


def test_context_length_env_and_its_version():
    spec = resolve("llama3.1:8b", "Q4_K_M")
    env = (("OLLAMA_CONTEXT_LENGTH", "8192"),)
    assert ol.ENGINE.estimate(spec, (gpu(24),), ol.OllamaSettings(env=env)).settings["num_ctx"] == 8192
    # the variable arrived in v0.5.13; before, the default 2048 applies
    old = ol.ENGINE.estimate(spec, (gpu(24),), ol.OllamaSettings(env=env, engine_version="0.5.12"))
    assert old.settings["num_ctx"] == 2048
    # an explicit num_ctx beats the variable
    assert ol.ENGINE.estimate(spec, (gpu(24),), ol.OllamaSettings(env=env, num_ctx=4096)).settings["num_ctx"] == 4096


def test_environment_read_from_os_environ(monkeypatch):
    monkeypatch.setenv("OLLAMA_CONTEXT_LENGTH", "16384")
    monkeypatch.setenv("OLLAMA_NUM_PARALLEL", "2")
    _, _, s = ol.parse_args(["run", "llama3.1:8b"])
    assert dict(s.env) == {"OLLAMA_CONTEXT_LENGTH": "16384", "OLLAMA_NUM_PARALLEL": "2"}
    _, _, s2 = ol.parse_args(["run", "llama3.1:8b"], env={"OLLAMA_KV_CACHE_TYPE": "q8_0", "PATH": "/bin"})
    assert s2.env == (("OLLAMA_KV_CACHE_TYPE", "q8_0"),)


def test_num_parallel_multiplies_the_context():
    spec = resolve("llama3.1:8b", "Q4_K_M")
    one = ol.ENGINE.estimate(spec, (gpu(48),), ol.OllamaSettings(num_ctx=8192, engine_version="0.32.15"))
    two = ol.ENGINE.estimate(spec, (gpu(48),), ol.OllamaSettings(
        num_ctx=8192, engine_version="0.32.15", env=(("OLLAMA_NUM_PARALLEL", "2"),)))
    assert one.engine_view["n_ctx"] == 8192 and two.engine_view["n_ctx"] == 16384
    # -np explicit: not unified, one stream per slot of num_ctx cells
    assert two.engine_view["n_seq_max"] == 2 and two.engine_view["kv_unified"] is False
    assert two.engine_view["n_ctx_seq"] == 8192
    assert two.kv_cache_bytes == 2 * one.kv_cache_bytes
    assert "-c 16384 -np 2" in two.engine_view["ollama_launch"]
    # era A: Ollama's own estimate multiplies too
    a1 = ol.ENGINE.estimate(spec, (gpu(48),), ol.OllamaSettings(num_ctx=8192, num_parallel=1, engine_version="0.9.0"))
    a2 = ol.ENGINE.estimate(spec, (gpu(48),), ol.OllamaSettings(num_ctx=8192, num_parallel=2, engine_version="0.9.0"))
    kv = "memory.required.kv"
    assert a2.engine_view["ollama_memory"][kv] == 2 * a1.engine_view["ollama_memory"][kv]


def test_automatic_parallel_before_0_9_7():
    spec = resolve("llama3.1:8b", "Q4_K_M")
    # fits with 4 slots in v0.6.6 (defaultParallel 4), 2 in v0.6.7 - v0.9.6, then always 1
    assert ol.ENGINE.estimate(spec, (gpu(24),), ol.OllamaSettings(engine_version="0.6.6")).settings["num_parallel"] == 4
    assert ol.ENGINE.estimate(spec, (gpu(24),), ol.OllamaSettings(engine_version="0.9.6")).settings["num_parallel"] == 2
    assert ol.ENGINE.estimate(spec, (gpu(24),), ol.OllamaSettings(engine_version="0.10.0")).settings["num_parallel"] == 1
    # no full fit with 2 slots: back to 1
    big = resolve("llama3.1:70b", "Q4_K_M")
    assert ol.ENGINE.estimate(big, (gpu(24),), ol.OllamaSettings(engine_version="0.9.6")).settings["num_parallel"] == 1


def test_parallel_forced_to_one_for_some_architectures():
    spec = resolve("qwen3.5:35b", "Q4_K_M")
    est = ol.ENGINE.estimate(spec, (gpu(48),), ol.OllamaSettings(env=(("OLLAMA_NUM_PARALLEL", "4"),)))
    assert est.settings["num_parallel"] == 1
    assert any("one parallel slot" in w for w in est.warnings)


def test_quantized_kv_only_with_flash_attention():
    spec = resolve("llama3.1:8b", "Q4_K_M")
    env = (("OLLAMA_KV_CACHE_TYPE", "q8_0"),)
    off = ol.ENGINE.estimate(spec, (gpu(24),), ol.OllamaSettings(engine_version="0.12.10", env=env))
    assert off.settings["flash_attention"] == "off" and off.settings["kv_cache_type"] == "f16"
    assert any("needs flash attention" in w for w in off.warnings)
    on = ol.ENGINE.estimate(spec, (gpu(24),), ol.OllamaSettings(
        engine_version="0.12.10", env=env + (("OLLAMA_FLASH_ATTENTION", "true"),)))
    assert on.settings["flash_attention"] == "on" and on.settings["kv_cache_type"] == "q8_0"
    assert on.kv_cache_bytes < off.kv_cache_bytes
    # qwen3 has flash attention on by default from v0.12.4 (fs/ggml FlashAttention())
    q3 = ol.ENGINE.estimate(resolve("qwen3:8b", "Q4_K_M"), (gpu(24),), ol.OllamaSettings(engine_version="0.12.4",
                                                                                          env=env))
    assert q3.settings["kv_cache_type"] == "q8_0"
    # and gemma2 never supports it
    g2 = ol.ENGINE.estimate(resolve("gemma2:9b", "Q4_K_M"), (gpu(24),), ol.OllamaSettings(
        engine_version="0.12.10", env=env + (("OLLAMA_FLASH_ATTENTION", "1"),)))
    assert g2.settings["flash_attention"] == "off" and g2.settings["kv_cache_type"] == "f16"


def test_gpt_oss_rejects_quantized_kv():
    spec = resolve("gpt-oss:20b", default_format=ol.ENGINE.default_weight_format)
    env = (("OLLAMA_KV_CACHE_TYPE", "q8_0"), ("OLLAMA_FLASH_ATTENTION", "1"))
    rejected = ol.ENGINE.estimate(spec, (gpu(24),), ol.OllamaSettings(engine_version="0.11.8", env=env))
    assert rejected.settings["kv_cache_type"] == "f16"
    assert any("gpt-oss rejects a quantized KV cache" in w for w in rejected.warnings)
    allowed = ol.ENGINE.estimate(spec, (gpu(24),), ol.OllamaSettings(engine_version="0.12.4", env=env))
    assert allowed.settings["kv_cache_type"] == "q8_0"
    with pytest.raises(OomkitError, match="16946"):
        ol.ENGINE.estimate(spec, (gpu(24),), ol.OllamaSettings(engine_version="0.30.1", env=env))


def test_gpt_oss_minimum_context_and_swa_memory():
    spec = resolve("gpt-oss:20b", default_format=ol.ENGINE.default_weight_format)
    est = ol.ENGINE.estimate(spec, (gpu(24),), ol.OllamaSettings(engine_version="0.12.0", num_ctx=4096))
    assert est.settings["num_ctx"] == 8192  # server/routes.go: max(num_ctx, 8192) outside low-VRAM mode
    low = ol.ENGINE.estimate(spec, (gpu(16),), ol.OllamaSettings(engine_version="0.12.0", num_ctx=4096))
    assert low.settings["num_ctx"] == 4096
    # the Ollama engine keeps 4096 tokens of sliding window (NewSWAMemCache(128, 4096)): PAD(4096 + 512, 256)
    cells = {c["cells"] for c in est.engine_view["kv_caches"]}
    assert cells == {4608, 8192}


def test_ollama_per_gpu_reserve_and_overhead():
    spec = resolve("llama3.1:8b", "Q4_K_M")
    est = ol.ENGINE.estimate(spec, (gpu(24),), ol.OllamaSettings(env=(("OLLAMA_GPU_OVERHEAD", str(GiB)),)))
    assert est.devices[0].overhead_bytes == 457 * MiB + GiB
    metal = ol.ENGINE.estimate(spec, (Device("Metal", memory_bytes=32 * GiB),), ol.OllamaSettings(library="metal"))
    assert metal.devices[0].overhead_bytes == 512 * MiB


def test_warning_when_ollamas_estimate_is_off():
    spec = resolve("gemma3:27b", "Q4_K_M")
    est = ol.ENGINE.estimate(spec, (gpu(24),), ol.OllamaSettings(engine_version="0.32.15"))
    cmp = est.engine_view["ollama_vs_runner"]
    assert cmp["ratio"] > 1.1  # PredictServerVRAM: f16 KV of every layer at the full context
    assert any("Ollama's own estimate" in w for w in est.warnings)
    near = ol.ENGINE.estimate(resolve("llama3.1:8b", "Q4_K_M"), (gpu(24),), ol.OllamaSettings(engine_version="0.9.0"))
    assert abs(near.engine_view["ollama_vs_runner"]["ratio"] - 1) < 0.1
    assert not any("Ollama's own estimate" in w for w in near.warnings)


def test_partial_offload_does_not_fit():
    spec = resolve("llama3.1:70b", "Q4_K_M")
    est = ol.ENGINE.estimate(spec, (gpu(24),), ol.OllamaSettings(engine_version="0.9.0", num_ctx=4096))
    layers, total = est.engine_view["ollama_layers"].split("/")
    assert int(layers) < int(total) == 81
    assert est.devices[0].fits and est.fits is False  # runs, split with the CPU: not a fit
    assert est.settings["n_ctx"] == 4096 and est.engine_view["offloaded_layers"] == f"{layers}/81"


def test_single_gpu_preferred_when_the_model_fits_on_one():
    spec = resolve("llama3.1:8b", "Q4_K_M")
    est = ol.ENGINE.estimate(spec, (gpu(24, 0), gpu(24, 1)), ol.OllamaSettings(engine_version="0.9.0"))
    assert est.devices[0].total_bytes > 0 and est.devices[1].total_bytes == 0


def test_eras_and_their_figures():
    spec = resolve("qwen2.5:32b", "Q4_K_M")
    a = ol.ENGINE.estimate(spec, (gpu(24),), ol.OllamaSettings(engine_version="0.11.4", num_ctx=4096))
    c = ol.ENGINE.estimate(spec, (gpu(24),), ol.OllamaSettings(engine_version="0.13.0", num_ctx=4096))
    d = ol.ENGINE.estimate(spec, (gpu(24),), ol.OllamaSettings(engine_version="0.30.1", num_ctx=4096))
    assert a.engine_view["ollama_era"] == "A" and "memory.required.full" in a.engine_view["ollama_memory"]
    assert c.engine_view["ollama_era"] == "C" and "total memory" in c.engine_view["ollama_memory"]
    assert d.engine_view["ollama_era"] == "D" and "predicted" in d.engine_view["ollama_memory"]
    # the same KV formula in eras A and C, and the runner's KV the same in all three
    assert a.engine_view["ollama_memory"]["memory.required.kv"] == c.engine_view["ollama_memory"]["kv cache"]["CUDA0"]
    assert a.kv_cache_bytes == c.kv_cache_bytes == d.kv_cache_bytes == 64 * 4096 * 1024 * 2 * 2
    # llama.cpp build of the runner: vendored before v0.30, LLAMA_CPP_VERSION after
    # v0.7.0-v0.11.4: Makefile.sync FETCH_HEAD de4c07f93, master's 5359th commit
    assert ol.runner_build((0, 30, 1)) == 9479 and ol.runner_build((0, 11, 4)) == 5359


def test_versions():
    assert ol.parse_version("v0.12.10") == (0, 12, 10)
    assert ol.parse_version(None) == ol.parse_version(ol.NEWEST)
    assert ol.version_at("2025-03-12") == "0.6.0"
    with pytest.raises(OomkitError):
        ol.parse_version("b6500")


def test_default_weight_format():
    assert ol.ENGINE.default_weight_format({"model_type": "qwen2"}) == "Q4_K_M"
    assert ol.ENGINE.default_weight_format({"quantization_config": {"quant_method": "mxfp4"}}) == "MXFP4_MOE"
    spec = ol.ollama_gguf(resolve("gpt-oss:20b", default_format=ol.ENGINE.default_weight_format))
    dtypes = {t.name.split(".", 2)[-1]: t.dtype for t in spec.weights.tensors if t.layer == 0}
    assert dtypes["ffn_up_exps.weight"] == "mxfp4" and dtypes["attn_q.weight"] == "bf16"
    assert dtypes["ffn_gate_inp.weight"] == "f32"


def test_parse_args():
    model, quant, s = ol.parse_args(["run", "qwen2.5:32b", "--verbose", "--keepalive", "5m", "hello", "world"], env={})
    assert (model, quant) == ("qwen2.5:32b", None) and s.program == "ollama run"
    _, _, s = ol.parse_args(["--num-ctx", "8192", "--num-gpu=20", "--gpu-overhead", "1GiB"], env={})
    assert (s.num_ctx, s.num_gpu, s.gpu_overhead) == (8192, 20, GiB)
    model, _, _ = ol.parse_args(["serve"], env={})
    assert model is None
    with pytest.raises(OomkitError, match="unknown flag"):
        ol.parse_args(["run", "qwen2.5:32b", "--ctx-size", "4"], env={})


def test_python_api_neutral_names():
    est = estimate("llama3.1:8b", "ollama", quant="Q4_K_M", vram="24GiB", num_ctx=8192, engine_version="0.12.10")
    assert est.engine == "ollama" and est.settings["num_ctx"] == 8192 and est.fits is True
    assert est.max_context is not None and est.max_context >= 8192


# ---------------------------------------------------------------------------------------------------------
# Command line


def cli(*args, env_extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("OLLAMA_")}
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-m", "oomkit", *args], capture_output=True, text=True, env=env)


def test_cli_command_form():
    r = cli("estimate", "--json", "--", "ollama", "run", "qwen2.5:32b")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["engine"] == "ollama" and d["model"]["architecture"] == "qwen2"
    assert d["model"]["weights_format"] == "Q4_K_M"
    for key in ("ollama_memory", "ollama_vs_runner", "n_ctx", "kv_buffer_bytes", "compute_buffer_bytes"):
        assert key in d["engine_view"]
    assert d["settings"]["engine_version"] == ol.NEWEST and d["fits"] is None  # no GPU size given


def test_cli_environment_and_env_option():
    r = cli("estimate", "--json", "--vram", "24GiB", "--", "ollama", "run", "qwen2.5:32b",
            env_extra={"OLLAMA_CONTEXT_LENGTH": "8192"})
    assert json.loads(r.stdout)["settings"]["num_ctx"] == 8192
    r = cli("estimate", "--json", "--vram", "24GiB", "--env", "OLLAMA_CONTEXT_LENGTH=8192", "--env",
            "OLLAMA_NUM_PARALLEL=2", "--", "ollama", "run", "qwen2.5:32b")
    d = json.loads(r.stdout)
    assert d["settings"]["num_ctx"] == 8192 and d["engine_view"]["n_ctx"] == 16384
    r = cli("estimate", "--json", "--vram", "24GiB", "--", "OLLAMA_CONTEXT_LENGTH=4096", "ollama", "serve")
    assert r.returncode == 2 and "names no model" in r.stderr
    r = cli("estimate", "qwen2.5:32b", "--json", "--vram", "24GiB", "--", "OLLAMA_CONTEXT_LENGTH=4096", "ollama",
            "serve")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["settings"]["num_ctx"] == 4096


def test_cli_options_form():
    r = cli("estimate", "qwen2.5:32b", "--engine", "ollama", "--vram", "24GiB", "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["settings"]["num_ctx"] == 32768  # v0.15.5+ VRAM tier: 24 GiB -> 32768
    assert d["devices"][0]["memory_bytes"] == 24 * GiB
    r = cli("estimate", "qwen2.5:32b", "--engine", "ollama", "--vram", "24GiB", "--ctx", "8192", "--kv-type", "q8_0",
            "--parallel", "2", "--engine-version", "0.12.10", "--env", "OLLAMA_FLASH_ATTENTION=1", "--json")
    d = json.loads(r.stdout)
    s = d["settings"]
    assert (s["num_ctx"], s["num_parallel"], s["kv_cache_type"], s["engine_version"]) == (8192, 2, "q8_0", "0.12.10")
    r = cli("estimate", "qwen2.5:32b", "--engine", "ollama", "--vram", "24GiB", "--engine-version", "0.9.0")
    assert r.returncode == 0, r.stderr
    assert "memory.required.full" in r.stdout and "ollama_vs_runner" in r.stdout


def test_cli_errors_are_one_line():
    r = cli("estimate", "qwen2.5:32b", "--engine", "ollama", "--engine-version", "seven")
    assert r.returncode == 2 and "Ollama version" in r.stderr and "Traceback" not in r.stderr
    r = cli("estimate", "gpt-oss:20b", "--engine", "ollama", "--env", "OLLAMA_KV_CACHE_TYPE=q8_0")
    assert r.returncode == 2 and "16946" in r.stderr
