"""llama.cpp's OpenCL backend (Qualcomm Adreno) against public logs (tests/fixtures/engine_logs/llamacpp_opencl/, each
with its source; the Llama-3.2-3B tutorial excerpt stays in llamacpp_more/). The checks are test_llamacpp_logs'
backend checks, on what each log prints: model and KV buffers to the 0.01 MiB, OpenCL's own buffer names, compute
within 10%. Several public OpenCL logs are excerpts (a KV line without its K/V split, the OpenCL compute line
without the CPU one): `compute_lines_cut` says the log shows only some of the compute buffers, and only those are
compared. A device whose compute is off by more than 10% is listed in the fixture's compute_known_miss and held here
as a strict xfail."""

import json
from pathlib import Path

import pytest

from tests import test_llamacpp_logs as base

FIXTURES = sorted((Path(__file__).parent / "fixtures" / "engine_logs" / "llamacpp_opencl").glob("*.json"))
MiB = 1 << 20


def _mib(b: int) -> float:
    return round(b / MiB, 2)


@pytest.mark.parametrize("path", [base._backend_param(p) for p in FIXTURES])
def test_opencl_log(path):
    fx = json.loads(path.read_text())
    p = fx["printed"]
    v = base.backend_estimate(fx).engine_view
    assert v["backend"] == "opencl"
    if "kv_buffer_mib" in p:
        assert {k: _mib(b) for k, b in v["kv_buffer_bytes"].items()} == p["kv_buffer_mib"]
    if "kv_size" in p:
        assert v["kv_caches"][0]["cells"] == p["kv_size"]
    if "k_mib" in p:
        assert (_mib(v["k_bytes"]), _mib(v["v_bytes"])) == (p["k_mib"], p["v_mib"])
    if "model_mib" in p:
        assert {k: _mib(b) for k, b in v["model_buffer_bytes"].items()} == p["model_mib"]
    if "output_mib" in p:
        assert _mib(v["output_buffer_bytes"]) == p["output_mib"]
        assert v["output_buffer_name"] == p["output_buffer_name"]
    if "compute_mib" not in p:
        return
    names, printed = set(v["compute_buffer_bytes"]), set(p["compute_mib"])
    assert printed <= names if fx.get("compute_lines_cut") else printed == names  # the backend's own buffer names
    for dev, ratio in base.compute_ratios(fx, v).items():
        if dev not in fx.get("compute_known_miss", {}):  # held by test_opencl_log_known_compute_miss
            assert 0.9 <= ratio <= 1.1, (dev, ratio)


KNOWN_COMPUTE_MISSES = [pytest.param(p, marks=pytest.mark.xfail(strict=True, reason=json.dumps(miss)), id=p.stem)
                        for p in FIXTURES if (miss := json.loads(p.read_text()).get("compute_known_miss"))]


@pytest.mark.parametrize("path", KNOWN_COMPUTE_MISSES)
def test_opencl_log_known_compute_miss(path):
    fx = json.loads(path.read_text())
    ratios = base.compute_ratios(fx, base.backend_estimate(fx).engine_view)
    assert all(0.9 <= ratios[dev] <= 1.1 for dev in fx["compute_known_miss"]), ratios


def test_fixtures_are_cited_opencl_logs():
    assert len(FIXTURES) >= 4
    for path in FIXTURES:
        fx = json.loads(path.read_text())
        assert fx["backend"] == "opencl" and fx["source"].startswith("https://github.com/") and fx["quoted"]
        lines = fx["quoted"].splitlines()
        p = fx["printed"]
        for dev, mib in p.get("compute_mib", {}).items():  # every compared figure is in the quote
            failed = p.get("compute_failed_bytes", {}).get(dev)  # a failed reserve prints the exact byte count
            if failed is not None:
                assert round(failed / MiB, 2) == mib, (path.name, dev)
                assert any(dev in line and f"of size {failed}" in line for line in lines), (path.name, dev)
            else:
                assert any(dev in line and "compute buffer" in line and f"{mib:.2f} MiB" in line for line in lines), (
                    path.name, dev)
        for dev, mib in p.get("model_mib", {}).items():
            assert any(f"{dev} model buffer size" in line and f"{mib:.2f} MiB" in line for line in lines), (path.name, dev)
        for dev, mib in p.get("kv_buffer_mib", {}).items():
            assert any(f"{dev} KV buffer size" in line and f"{mib:.2f} MiB" in line for line in lines), (path.name, dev)
        for key in ("k_mib", "v_mib"):
            if key in p:
                assert f"{p[key]:.2f} MiB" in fx["quoted"], (path.name, key)


def test_granite_opencl_compute_needs_the_builds_flash_attention_default():
    """b6166 predates PR #15434 (b6325: -fa auto by default); with attention unfused the OpenCL workspace holds the
    KQ matrix: oomkit 217.00 MiB against the printed 235.16 (0.92), but 102.01 if flash attention were on."""
    path = next(p for p in FIXTURES if "granite" in p.name)
    fx = json.loads(path.read_text())
    on = dict(fx, settings=dict(fx["settings"], flash_attn="on"))
    assert base.compute_ratios(on, base.backend_estimate(on).engine_view)["OpenCL"] < 0.9
    assert 0.9 <= base.compute_ratios(fx, base.backend_estimate(fx).engine_view)["OpenCL"] <= 1.1


def test_opencl_model_buffer_reserves_the_soa_slack():
    """ggml-opencl's get_alloc_size (PR #25464, b9933) adds 4 x 128 bytes to every quantized weight: the Adreno 830
    log of Llama-3.2-3B Q4_K_M prints 1918.45 MiB where the same file on Vulkan prints 1918.35 (same document).
    Before b9933 the OpenCL buffer is the tensors' own 128-byte-aligned sizes."""
    path = next(p for p in FIXTURES if "llama-3.2-3b-q4_k_m-adreno-830" in p.name)
    fx = json.loads(path.read_text())
    now = base.backend_estimate(fx).engine_view["model_buffer_bytes"]["OpenCL"]
    before = dict(fx, engine_version="b9932")
    then = base.backend_estimate(before).engine_view["model_buffer_bytes"]["OpenCL"]
    vulkan = dict(fx, backend="vulkan")
    assert _mib(now) == 1918.45 and _mib(then) == 1918.35
    assert _mib(base.backend_estimate(vulkan).engine_view["model_buffer_bytes"]["Vulkan0"]) == 1918.35


def test_fit_dry_run_weighs_the_opencl_buffer_the_load_allocates():
    """--fit's dry run (common_get_device_memory_data) loads with the backend's own tensor sizes: on OpenCL the
    Adreno 830 log's 1918.45 MiB, not CUDA's row-padded sizes."""
    from oomkit.engines.llamacpp import fit
    from oomkit.engines.llamacpp.settings import LlamaCppSettings
    from oomkit.memory import Device
    from oomkit.model.resolve import resolve

    path = next(p for p in FIXTURES if "llama-3.2-3b-q4_k_m-adreno-830" in p.name)
    fx = json.loads(path.read_text())
    spec = resolve(f'{fx["catalog_model"]}:{fx["weight_format"]}')
    s = LlamaCppSettings(engine_version=fx["engine_version"], backend="opencl", n_ctx=512, n_parallel=1, fit=False)
    rows = fit.dry_run(spec, (Device("OpenCL0", memory_bytes=12 << 30),), s)
    assert _mib(rows[0].model) == 1918.45


def test_granite_opencl_host_split_is_the_imatrix_q4_1_down_product():
    """'graph splits = 10' on 32 layers: bartowski's Q4_0 files are imatrix quants, and llama-quantize gives the first
    n_layer/8 ffn_down (here ffn_down_exps) Q4_1 (llama_tensor_get_type, has_imatrix); ggml-opencl's MUL_MAT_ID has
    no Q4_1 kernel, so those four weights stay on the host and their products run on the CPU (two splits each,
    beside the embeddings'). Typed as bartowski's repo, the CPU buffer is the replay of those splits
    (compute.opencl_refused_down_exps_host) and the small graph inputs (compute.token_index_inputs): 34.01 MiB as
    printed (34.00 without the small inputs); the same Q4_0 made without an
    imatrix (the base model's name) has no Q4_1 tensor and no host split."""
    from oomkit.model.resolve import resolve

    path = next(p for p in FIXTURES if "granite" in p.name)
    fx = json.loads(path.read_text())
    spec = resolve(f'{fx["typed_as"]}:{fx["weight_format"]}')
    assert sorted(t.name for t in spec.weights.tensors if t.dtype == "q4_1") == [
        f"blk.{i}.ffn_down_exps.weight" for i in range(spec.n_trunk_layers // 8)]
    assert not any(t.dtype == "q4_1" for t in resolve(f'{fx["catalog_model"]}:{fx["weight_format"]}').weights.tensors)
    assert _mib(base.backend_estimate(fx).engine_view["compute_buffer_bytes"]["CPU"]) == 34.01
    plain = base.backend_estimate({k: v for k, v in fx.items() if k != "typed_as"})
    assert base.compute_ratios(fx, plain.engine_view)["CPU"] < 0.9
