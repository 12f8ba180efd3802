"""llama.cpp on a real GPU: oomkit against the buffer sizes a published llama.cpp log prints
(tests/fixtures/engine_logs/llamacpp/, each with its source). Model, KV and output buffers must equal the
printed figures to their 0.01 MiB; compute buffers within 10%."""

import json
from pathlib import Path

import pytest

import oomkit

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
