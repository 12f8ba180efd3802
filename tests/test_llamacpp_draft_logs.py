"""llama-server with a draft model (-md): the draft's own context against public logs
(tests/fixtures/engine_logs/llamacpp_draft/, each with its source). llama-server loads the draft with the main
command's settings but its own -ngld / -ctkd / -ctvd (fit.read_draft, programs.with_draft); the draft context's KV
and output buffers must equal the printed figures to the 0.01 MiB, its compute within 10%."""

import json
from pathlib import Path

import pytest

import oomkit
from oomkit.engines.llamacpp.fit import read_draft
from oomkit.engines.llamacpp.settings import LlamaCppSettings

FIXTURES = sorted((Path(__file__).parent / "fixtures" / "engine_logs" / "llamacpp_draft").glob("*.json"))
MiB = 1 << 20
mib = lambda b: round(b / MiB, 2)  # noqa: E731


def _draft_repo(fx) -> str:
    return f'{fx["draft_catalog_model"]}:{fx["draft_weight_format"]}'


def _draft_view(fx) -> dict:
    """The draft context as llama-server creates it: read_draft's settings (the main command's, with the draft's
    -ngld and cache types) at the draft's context."""
    ds = read_draft(LlamaCppSettings(**fx["settings"], hf_repo_draft=_draft_repo(fx)))[1]
    return oomkit.estimate(fx["draft_catalog_model"], "llama.cpp", quant=fx["draft_weight_format"],
                           find_max_context=False, engine_version=fx["engine_version"], backend=fx["backend"],
                           fit=False, vram="256GiB", program=ds.program, n_ctx=fx["printed"]["draft"]["kv_size"],
                           n_parallel=ds.n_parallel, n_gpu_layers=ds.n_gpu_layers, flash_attn=ds.flash_attn,
                           cache_type_k=ds.cache_type_k, cache_type_v=ds.cache_type_v).engine_view


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_draft_context(path):
    fx = json.loads(path.read_text())
    p = fx["printed"]["draft"]
    v = _draft_view(fx)
    assert [(c["cells"], mib(c["k_bytes"]), mib(c["v_bytes"])) for c in v["kv_caches"]] == [
        (p["kv_size"], p["k_mib"], p["v_mib"])]
    assert {k: mib(b) for k, b in v["kv_buffer_bytes"].items()} == p["kv_buffer_mib"]
    assert (mib(v["output_buffer_bytes"]), v["output_buffer_name"]) == (p["output_mib"], p["output_buffer_name"])
    assert set(v["compute_buffer_bytes"]) == set(p["compute_mib"])
    for dev, printed in p["compute_mib"].items():
        assert 0.9 <= v["compute_buffer_bytes"][dev] / MiB / printed <= 1.1, (dev, mib(v["compute_buffer_bytes"][dev]))


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_draft_counted_beside_the_main_model(path):
    """The main estimate with the draft (-hfd for the file) carries the same draft context: its n_ctx and, on the
    GPU, the draft's weights, cache and compute (with_draft adds them to the main model's device)."""
    fx = json.loads(path.read_text())
    est = oomkit.estimate(fx["catalog_model"], "llama.cpp", quant=fx["weight_format"], find_max_context=False,
                          engine_version=fx["engine_version"], backend=fx["backend"], fit=False, vram="256GiB",
                          hf_repo_draft=_draft_repo(fx), **fx["settings"])
    view, d = est.engine_view, _draft_view(fx)
    assert view["draft_n_ctx"] == fx["printed"]["draft"]["kv_size"]
    gpu = next(k for k in view["draft_bytes"] if k != "CPU")
    on_gpu = sum(b for k, b in d["model_buffer_bytes"].items() if not k.startswith("CPU")) + sum(
        d["kv_buffer_bytes"].values()) + sum(b for k, b in d["compute_buffer_bytes"].items() if not k.endswith("_Host"))
    assert view["draft_bytes"][gpu] == on_gpu


def test_fixtures_are_cited():
    assert FIXTURES
    for path in FIXTURES:
        fx = json.loads(path.read_text())
        assert fx["source"].startswith("https://github.com/") and fx["quoted"]
        p = fx["printed"]["draft"]
        for dev, printed in (*p["kv_buffer_mib"].items(), *p["compute_mib"].items()):
            assert any(dev in line and f"{printed:.2f} MiB" in line for line in fx["quoted"].splitlines()), dev
