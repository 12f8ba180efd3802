"""llama.cpp logs beyond the backends of tests/test_llamacpp_logs.py: plain x86 CPU builds and OpenCL (Adreno)
(tests/fixtures/engine_logs/llamacpp_more/, each with its source). The checks are test_llamacpp_logs'
test_backend_log: KV, model and output buffers to the 0.01 MiB under the names printed, compute within 10%
(a miss is a strict xfail carrying the measured figures, the fixture's known_miss)."""

import json
from pathlib import Path

import pytest

import oomkit
from tests import test_llamacpp_logs as base

FIXTURES = sorted((Path(__file__).parent / "fixtures" / "engine_logs" / "llamacpp_more").glob("*.json"))


@pytest.mark.parametrize("path", [base._backend_param(p) for p in FIXTURES])
def test_more_log(path):
    base.test_backend_log(path)


def test_fixtures_are_cited_and_cover_x86_cpu_and_opencl():
    seen = set()
    for path in FIXTURES:
        fx = json.loads(path.read_text())
        assert fx["source"].startswith("https://github.com/") and fx["quoted"]
        lines = {"model_mib": "model buffer size", "kv_buffer_mib": "KV buffer size", "compute_mib": "compute buffer size"}
        for key, line in lines.items():
            assert (key in fx["printed"]) <= (line in fx["quoted"]), (path.name, line)
        seen.add(fx["backend"])
    assert {"cpu", "opencl"} <= seen


def test_x86_q4_k_repack_era():
    """The x86 Q4_K repack (PR #12332, March 2025): the b4329 / b4730 logs load a Q4_K_M file into CPU_Mapped
    alone; a later build moves its Q4_K matrices into CPU_AARCH64 beside the mapped file (CPU_REPACK after
    PR #13892), a Q8_0 file never."""
    def buffers(quant, version):
        fx = json.loads(FIXTURES[0].read_text())
        return oomkit.estimate("google/gemma-1.1-2b-it", "llama.cpp", quant=quant, find_max_context=False,
                               engine_version=version, cpu_only=True, fit=False,
                               **fx["settings"]).engine_view["model_buffer_bytes"]

    assert set(buffers("Q4_K_M", "b4730")) == {"CPU_Mapped"}
    assert set(buffers("Q4_K_M", "b5000")) == {"CPU_Mapped", "CPU_AARCH64"}
    assert set(buffers("Q4_K_M", "b6000")) == {"CPU_Mapped", "CPU_REPACK"}
    assert set(buffers("Q8_0", "b6000")) == {"CPU_Mapped"}
