"""llama.cpp over several devices, as public logs print it: multi-GPU ROCm and SYCL, --rpc hosts and Hexagon NPU sessions
(tests/fixtures/engine_logs/llamacpp/backends_multi/, each fixture with its URL and the arithmetic that
identifies the model).

Each fixture gives the devices in oomkit's order (the local GPUs, then one per --rpc endpoint: split.model_devices
puts the RPC servers first, as src/llama.cpp llama_model_load_from_splits does), the flags as typed, and the
figures as printed under the backend's own buffer names. Checked: the KV buffer of every device and the KV totals
to the 0.01 MiB (the layer split by free memory decides them), the output buffer, the model buffers where printed
(to the 0.01 MiB, or the split alone where the file's own layout differs), the compute buffers within 10%.
A figure oomkit cannot reproduce is a strict xfail with the measured figures (the fixture's known_misses).
"""

import json
from pathlib import Path

import pytest

import oomkit
from oomkit.engines.base import get_engine
from oomkit.engines.llamacpp.args import parse_args
from oomkit.engines.llamacpp.weights import pre_mla_file
from oomkit.memory import Device
from oomkit.request import resolve_model

MiB = 1 << 20
FIXTURES = sorted((Path(__file__).parent / "fixtures" / "engine_logs" / "llamacpp" / "backends_multi").glob("*.json"))


def load(path: Path) -> dict:
    return json.loads(path.read_text())


def devices(fx: dict) -> tuple[Device, ...]:
    out = []
    for d in fx["devices"]:
        total = d.get("memory_bytes") or d["memory_mib"] * MiB
        free = d.get("free_bytes") or (d["free_mib"] * MiB if "free_mib" in d else None)
        out.append(Device(id=d["id"], name=d["name"], memory_bytes=total, free_bytes=free))
    return tuple(out)


_CACHE: dict[str, object] = {}


def estimate(path: Path):
    if path.name not in _CACHE:
        fx = load(path)
        _, _, s = parse_args(["-m", "x.gguf", *fx["args"]], program=fx.get("program", "llama-server"))
        model, quant = fx["catalog_model"], fx["weight_format"]
        if fx.get("gguf_layout") == "pre-mla":  # a DeepSeek file converted before llama.cpp PR #12801
            model, quant = pre_mla_file(resolve_model(get_engine("llama.cpp"), model, quant)), None
        _CACHE[path.name] = oomkit.estimate(model, "llama.cpp", quant=quant,
                                            devices=devices(fx), settings=s, find_max_context=False,
                                            engine_version=fx["engine_version"], backend=fx["backend"],
                                            **fx.get("options", {}))
    return _CACHE[path.name]


def checks() -> list:
    """One case per printed figure: (fixture, kind, buffer name); a known miss is a strict xfail."""
    params = []
    for path in FIXTURES:
        fx = load(path)
        p, misses = fx["printed"], fx.get("known_misses", {})
        cases = [("kv", name) for name in p.get("kv_mib", {})]
        cases += [("kv_total", "K+V")] if "k_mib" in p else []
        cases += [("caches", "cells/layers/K/V")] if "caches" in p else []
        cases += [("kv_cells", f"{cells} cells") for cells in p.get("kv_mib_by_cells", {})]
        cases += [("cache", name) for name in p.get("cache_bytes", {})]
        cases += [("output", p["output_buffer_name"])] if "output_mib" in p else []
        cases += [("model", name) for name in p.get("model_mib", {})]
        cases += [("split", "layers")] if "split_within_mib" in p or "layers" in p else []
        cases += [("compute", name) for name in p.get("compute_mib", {})]
        cases += [("pipeline", "n_copies")] if "pipeline_parallel" in p else []
        for kind, name in cases:
            reason = misses.get(f"{kind}:{name}")
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            params.append(pytest.param(path, kind, name, marks=marks, id=f"{path.stem}-{kind}-{name}"))
    return params


@pytest.mark.parametrize("path,kind,name", checks())
def test_multi_device_log(path, kind, name):
    fx = load(path)
    p = fx["printed"]
    est = estimate(path)
    v = est.engine_view
    mib = lambda b: round(b / MiB, 2)  # noqa: E731
    if kind == "kv":
        assert mib(v["kv_buffer_bytes"].get(name, 0)) == p["kv_mib"][name]
    elif kind == "kv_total":
        assert v["kv_caches"][0]["cells"] == p["kv_size"]
        assert (mib(v["k_bytes"]), mib(v["v_bytes"])) == (p["k_mib"], p["v_mib"])
    elif kind == "kv_cells":  # one cache's KV buffer per device (an iSWA pair prints each cache's lines apart)
        cells = int(name.split()[0])
        by_dev: dict[str, int] = {}
        for lay in est.layers:
            if lay.cells == cells and lay.kv_bytes:
                by_dev[lay.device] = by_dev.get(lay.device, 0) + lay.kv_bytes
        assert {d: mib(b) for d, b in by_dev.items()} == p["kv_mib_by_cells"][str(cells)]
    elif kind == "caches":  # each cache (an iSWA pair: the full and the sliding one): cells, layers, K, V
        got = [[c["cells"], c["layers"], mib(c["k_bytes"]), mib(c["v_bytes"])] for c in v["kv_caches"]]
        assert got == p["caches"]
    elif kind == "cache":  # a cache whose buffer is printed in bytes (a failed allocation): cells and K+V exact
        cache = next(c for c in v["kv_caches"] if c["name"] == name)
        assert [cache["cells"], cache["k_bytes"] + cache["v_bytes"]] == p["cache_bytes"][name]
    elif kind == "output":
        assert v["output_buffer_name"] == name
        assert mib(v["output_buffer_bytes"]) == p["output_mib"]
    elif kind == "model":
        assert mib(v["model_buffer_bytes"].get(name, 0)) == p["model_mib"][name]
    elif kind == "split":
        # every device holds the layers oomkit gives it: the printed buffers differ from oomkit's by less than a
        # fraction of one layer (the fixture says how close), and the printed per-device layer counts match
        if "layers" in p:
            counts = {u.id: sum(1 for lay in est.layers if lay.device == u.id) for u in est.devices}
            assert {k: counts.get(k, 0) for k in p["layers"]} == p["layers"]
        if "offloaded_layers" in p:
            assert v["offloaded_layers"] == p["offloaded_layers"]
        if "split_within_mib" in p:
            for dev, printed in p["model_mib"].items():
                got = v["model_buffer_bytes"].get(dev)
                if got is None:  # the host buffer, under another name (see the fixture's notes)
                    continue
                assert abs(got / MiB - printed) < p["split_within_mib"], (dev, got / MiB, printed)
    elif kind == "compute":
        ratio = v["compute_buffer_bytes"].get(name, 0) / MiB / p["compute_mib"][name]
        assert 0.9 <= ratio <= 1.1, (name, ratio)
    elif kind == "pipeline":
        assert v["pipeline_parallel"] == p["pipeline_parallel"]


def test_fixtures_cover_rocm_sycl_and_rpc():
    seen = {path.name.split("-")[0] for path in FIXTURES}
    assert {"rocm", "sycl", "rpc"} <= seen
    for path in FIXTURES:
        fx = load(path)
        assert fx["source"].startswith("https://github.com/") and fx["quoted"]
        rpc = [d for d in fx["devices"] if d.get("rpc")]
        assert ("--rpc" in fx["args"]) == bool(rpc)


def test_host_side_names_with_rpc_devices():
    """llama-context.cpp gives the CPU side of the graph the host buffer type of the model's first device only,
    and llama_context::output_reserve the output buffer that of the output layer's device; ggml-rpc.cpp's device
    has no host buffer type. So: RPC servers first (the default order), the CPU compute buffer is plain CPU while
    the output buffer follows the local GPU that holds the output layer (ggml-org/llama.cpp#15463, an RPC server
    plus a local CUDA GPU: 'CUDA_Host  output buffer size =     2.90 MiB'); an RPC-only client (a CPU build) has
    no pinned host buffer at all."""
    _, _, s = parse_args(["-m", "x.gguf", "--rpc", "10.0.0.2:50052", "-c", "4096", "-fit", "off"])
    gpu = lambda i: Device(id=f"CUDA{i}", name="RTX 3090", memory_bytes=24 << 30, free_bytes=24 << 30)  # noqa: E731
    e = oomkit.estimate("meta-llama/Llama-3.1-8B-Instruct", "llama.cpp", quant="Q4_K_M", devices=(gpu(0), gpu(1)),
                        settings=s, find_max_context=False)
    v = e.engine_view
    assert [u.id for u in e.devices] == ["RPC0[10.0.0.2:50052]", "CUDA0"]
    assert "CPU" in v["compute_buffer_bytes"] and "CUDA_Host" not in v["compute_buffer_bytes"]
    assert v["output_buffer_name"] == "CUDA_Host"
    # an RPC-only client, no --backend given: nothing local names a host buffer type
    e = oomkit.estimate("meta-llama/Llama-3.1-8B-Instruct", "llama.cpp", quant="Q4_K_M", devices=(gpu(0),),
                        settings=s, find_max_context=False)
    v = e.engine_view
    assert set(v["compute_buffer_bytes"]) == {"RPC0[10.0.0.2:50052]", "CPU"}
    assert v["output_buffer_name"] == "CPU" and v["backend"] == "cpu"
    # -dev with the local GPU first: its pinned buffer serves the graph's CPU side again
    _, _, s = parse_args(["-m", "x.gguf", "--rpc", "10.0.0.2:50052", "-dev", "CUDA0,RPC0", "-c", "4096",
                          "-fit", "off"])
    v = oomkit.estimate("meta-llama/Llama-3.1-8B-Instruct", "llama.cpp", quant="Q4_K_M", devices=(gpu(0), gpu(1)),
                        settings=s, find_max_context=False).engine_view
    assert "CUDA_Host" in v["compute_buffer_bytes"] and v["output_buffer_name"] == "CPU"


def test_pre_mla_file_layout():
    """weights.pre_mla_file: a DeepSeek GGUF of before llama.cpp PR #12801 holds attn_kv_b whole at the file type's
    default type and caches K and V per head; the two DeepSeek-R1 fixtures above hold it to the printed buffers.
    A model without MLA is left as it is."""
    eng = get_engine("llama.cpp")
    spec = resolve_model(eng, "deepseek-ai/DeepSeek-R1", "Q4_K_M")
    old = pre_mla_file(spec)
    names = {t.name for t in old.weights.tensors}
    assert "blk.5.attn_kv_b.weight" in names and "blk.5.attn_k_b.weight" not in names
    assert "blk.5.attn_v_b.weight" not in names
    kv_b = next(t for t in old.weights.tensors if t.name == "blk.5.attn_kv_b.weight")
    assert (kv_b.shape, kv_b.dtype) == ((512, 32768), "q4_K")
    assert not any(la.attention.latent_cache for la in old.layers if la.attention is not None)
    dense = resolve_model(eng, "meta-llama/Llama-3.1-8B-Instruct", "Q4_K_M")
    assert pre_mla_file(dense) == dense


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_pipeline_parallel_line_against_the_quoted_log(path):
    """engine_view pipeline_parallel_line is the line llama.cpp prints when it runs pipeline-parallel; where the
    quoted log covers the lines between the output and the compute buffers, oomkit's line is in it (or it prints
    none). The MI50 build printed none where the command meets every condition: its fixture gives
    async_events=False (a build with GGML_CUDA_NO_PEER_COPY or GGML_BLAS), read off the missing line."""
    fx = load(path)
    quoted = fx["quoted"]
    if "output buffer size" not in quoted or "compute buffer size" not in quoted:
        pytest.skip("the quoted excerpt does not cover the lines around the compute buffers")
    v = estimate(path).engine_view
    line = v["pipeline_parallel_line"]
    assert bool(line) == v["pipeline_parallel"]
    assert (line in quoted) if line else ("pipeline parallelism enabled" not in quoted)


def test_async_events_off_keeps_one_copy_of_the_inputs():
    """The MI50 log's command with the default build (async_events True): llama_init_from_model of b4873 runs
    pipeline-parallel and keeps GGML_SCHED_MAX_COPIES = 4 copies of the inputs, which the note says rests on the
    build; with async_events False (GGML_CUDA_NO_PEER_COPY, or GGML_BLAS's ACCEL device) one copy, as printed."""
    path = next(p for p in FIXTURES if p.stem == "rocm-qwen2.5-32b-5x-mi50-32k")
    fx = load(path)
    _, _, s = parse_args(["-m", "x.gguf", *fx["args"]], program=fx["program"])
    on = oomkit.estimate(fx["catalog_model"], "llama.cpp", quant=fx["weight_format"], devices=devices(fx),
                         settings=s, find_max_context=False, engine_version=fx["engine_version"],
                         backend=fx["backend"]).engine_view
    off = estimate(path).engine_view
    assert on["pipeline_parallel"] and on["n_copies"] == 4 and not off["pipeline_parallel"] and off["n_copies"] == 1
    assert on["pipeline_parallel_line"] == "pipeline parallelism enabled (n_copies=4)"
    assert "GGML_CUDA_NO_PEER_COPY" in on["pipeline_parallel_note"] and "GGML_BLAS" in on["pipeline_parallel_note"]
    mib = lambda b: round(b / MiB, 2)  # noqa: E731
    # the 4 copies: 3 more of the F32 KQ mask (64 MiB) and the token ids and positions on the host side; one copy:
    # the mask, the token rows and the small inputs (compute.token_index_inputs: 3 x 2 KiB), 74.01 as printed
    assert mib(on["compute_buffer_bytes"]["ROCm_Host"]) == 266.02
    assert mib(off["compute_buffer_bytes"]["ROCm_Host"]) == 74.01 == fx["printed"]["compute_mib"]["ROCm_Host"]
    assert {mib(off["compute_buffer_bytes"][f"ROCm{i}"]) for i in range(5)} == {2664.0}
