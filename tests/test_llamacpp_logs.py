"""llama.cpp on a real GPU: oomkit against the buffer sizes a published llama.cpp log prints
(tests/fixtures/engine_logs/llamacpp/, each with its source). Model, KV and output buffers must equal the
printed figures to their 0.01 MiB; compute buffers within 10%."""

import json
from pathlib import Path

import pytest

import oomkit
from oomkit.memory import apple_default_gpu_share
from oomkit.request import devices_from

FIXTURES = sorted((Path(__file__).parent / "fixtures" / "engine_logs" / "llamacpp").glob("*.json"))
MiB = 1 << 20


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_gpu_log(path):
    fx = json.loads(path.read_text())
    p = fx["printed"]
    est = oomkit.estimate(fx["model"], "llama.cpp", quant=fx["weight_format"], vram="24GiB",
                          find_max_context=False, engine_version=fx["engine_version"], **fx["settings"])
    v = est.engine_view
    mib = lambda b: round(b / MiB, 2)  # noqa: E731
    assert mib(v["model_buffer_bytes"]["CUDA0"]) == p["cuda0_model_mib"]
    assert mib(v["model_buffer_bytes"]["CPU_Mapped"]) == p["cpu_mapped_model_mib"]
    assert v["kv_caches"][0]["cells"] == p["kv_size"]
    assert mib(v["kv_buffer_bytes"]["CUDA0"]) == p["cuda0_kv_mib"]
    assert (mib(v["k_bytes"]), mib(v["v_bytes"])) == (p["k_mib"], p["v_mib"])
    assert mib(v["output_buffer_bytes"]) == p["output_mib"]
    for key, dev in (("cuda0_compute_mib", "CUDA0"), ("cuda_host_compute_mib", "CUDA_Host")):
        ratio = v["compute_buffer_bytes"][dev] / MiB / p[key]
        assert 0.9 <= ratio <= 1.1, (dev, v["compute_buffer_bytes"][dev] / MiB, p[key])


# ---------------------------------------------------------------------------------------------------------
# Other backends (tests/fixtures/engine_logs/llamacpp/backends/): the buffer names each backend prints, the KV and
# output buffers to the 0.01 MiB, compute within 10% (where the log's graph is the single-device workspace)

BACKEND_FIXTURES = sorted((Path(__file__).parent / "fixtures" / "engine_logs" / "llamacpp" / "backends").glob("*.json"))


def backend_estimate(fx):
    gpus = fx.get("gpus") or []
    where = ({"gpu": gpus[0]["name"]} if fx["backend"] == "metal" else {"cpu_only": True} if fx["backend"] == "cpu"
             else {"vram": "256GiB"})
    # typed_as: the repo the log's file came from, where its publisher changes the file's types
    return oomkit.estimate(fx.get("typed_as") or fx["catalog_model"], "llama.cpp", quant=fx.get("weight_format") or "Q4_K_M",
                           find_max_context=False, engine_version=fx["engine_version"], backend=fx["backend"],
                           fit=False, **where, **fx["settings"])


def compute_ratios(fx, v):
    return {dev: v["compute_buffer_bytes"][dev] / MiB / mib for dev, mib in fx["printed"].get("compute_mib", {}).items()}


def _backend_param(path):
    """A log oomkit misses for a reason outside the backend rules is kept as a strict xfail (`known_miss`)."""
    miss = json.loads(path.read_text()).get("known_miss")
    marks = [pytest.mark.xfail(strict=True, reason=miss)] if miss else []
    return pytest.param(path, marks=marks, id=path.stem)


@pytest.mark.parametrize("path", [_backend_param(p) for p in BACKEND_FIXTURES])
def test_backend_log(path):
    fx = json.loads(path.read_text())
    p = fx["printed"]
    est = backend_estimate(fx)
    v = est.engine_view
    mib = lambda b: round(b / MiB, 2)  # noqa: E731
    assert v["backend"] == fx["backend"]
    if "kv_buffer_mib" in p:
        assert {k: mib(b) for k, b in v["kv_buffer_bytes"].items()} == p["kv_buffer_mib"]
    caches = [[c["cells"], c["layers"], mib(c["k_bytes"]), mib(c["v_bytes"])] for c in v["kv_caches"]]
    if "caches" in p:
        assert caches == p["caches"]
    elif "caches_shown" in p:  # the stored excerpt cuts the other cache's lines
        assert all(c in caches for c in p["caches_shown"]), caches
    else:
        assert v["kv_caches"][0]["cells"] == p["kv_size"]
        assert (mib(v["k_bytes"]), mib(v["v_bytes"])) == (p["k_mib"], p["v_mib"])
    if "model_mib" in p:
        assert {k: mib(b) for k, b in v["model_buffer_bytes"].items()} == p["model_mib"]
    if "output_mib" in p:
        assert mib(v["output_buffer_bytes"]) == p["output_mib"]
        assert v["output_buffer_name"] == p["output_buffer_name"]
    if "compute_mib" not in p:
        return
    assert set(v["compute_buffer_bytes"]) == set(p["compute_mib"])  # the backend's own buffer names
    if fx.get("compute_comparable", True):
        for dev, ratio in compute_ratios(fx, v).items():
            if dev not in fx.get("compute_known_miss", {}):  # held by test_backend_log_known_compute_miss
                assert 0.9 <= ratio <= 1.1, (dev, ratio)
    if "recommended_max_working_set_mb" in p:
        # the log's figure is its macOS release's share (a fixture of macOS 13-15 names it); --gpu takes the newest
        ram = devices_from(gpu=fx["gpus"][0]["name"])[0].memory_bytes
        assert round(apple_default_gpu_share(ram, fx.get("macos")) / 1e6, 2) == p["recommended_max_working_set_mb"]
        assert est.devices[0].memory_bytes == apple_default_gpu_share(ram)


KNOWN_COMPUTE_MISSES = [pytest.param(p, marks=pytest.mark.xfail(strict=True, reason=json.dumps(miss)), id=p.stem)
                        for p in BACKEND_FIXTURES
                        if (miss := json.loads(p.read_text()).get("compute_known_miss"))]


@pytest.mark.parametrize("path", KNOWN_COMPUTE_MISSES)
def test_backend_log_known_compute_miss(path):
    """Compute buffers oomkit misses by more than 10% on a backend log, each with its measured ratio and the reason
    in the fixture's compute_known_miss; strict, so a fix shows up as XPASS."""
    fx = json.loads(path.read_text())
    ratios = compute_ratios(fx, backend_estimate(fx).engine_view)
    assert all(0.9 <= ratios[dev] <= 1.1 for dev in fx["compute_known_miss"]), ratios


def test_backend_logs_cover_every_gpu_backend():
    seen = {json.loads(p.read_text())["backend"] for p in BACKEND_FIXTURES}
    assert {"metal", "vulkan", "rocm", "sycl"} <= seen
