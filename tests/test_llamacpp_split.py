"""llama.cpp across several devices: the layer split by free memory, -sm / -mg, --rpc devices, -ot and --n-cpu-moe
as llama.cpp matches them, and pipeline parallelism's copies of the compute inputs.

Ground truth: public multi-GPU logs (tests/fixtures/engine_logs/llamacpp_multi/, each with its URL) and the
source's rules (llama.cpp src/llama.cpp llama_model_load_from_splits, src/llama-model.cpp load_tensors,
src/llama-context.cpp, ggml-backend.cpp), named in each test.
"""

import json
import re
from pathlib import Path

import pytest

import oomkit
from oomkit.engines.llamacpp.args import parse_args
from oomkit.errors import OomkitError
from oomkit.memory import Device

MiB = 1 << 20
FIXTURES = Path(__file__).parent / "fixtures" / "engine_logs" / "llamacpp_multi"
LLAMA8 = "meta-llama/Llama-3.1-8B-Instruct"


def gpus(*free_mib: int, total_mib: int | None = None, name: str = "RTX 3090") -> tuple[Device, ...]:
    return tuple(Device(id=f"CUDA{i}", name=name, memory_bytes=(total_mib or f) * MiB, free_bytes=f * MiB)
                 for i, f in enumerate(free_mib))


def est(model=LLAMA8, devices=(), quant="Q4_K_M", **kw):
    return oomkit.estimate(model, "llama.cpp", quant=quant, devices=devices, find_max_context=False, fit=False, **kw)


def layer_counts(e) -> list[int]:
    ids = [u.id for u in e.devices]
    devs = [lay.device for lay in e.layers]
    return [devs.count(i) for i in ids]


def test_eight_gpus_split_by_free_memory_context_per_device():
    """Issue #24608 (b9557, 8x RTX 3090, no -ts): the layers go by each device's free memory (seven equal, the
    last 12 MiB more), which the printed context column shows per device to the MiB: full-attention layers'
    q8_0 caches and the GDN layers' recurrent state follow their layer."""
    fx = json.loads((FIXTURES / "qwen3.5-397b-8x3090-fit-dry-run.json").read_text())
    devs = tuple(Device(id=f"CUDA{i}", name="RTX 3090", memory_bytes=fx["gpus"][0]["memory_total_mib"] * MiB,
                        free_bytes=f * MiB) for i, f in enumerate(fx["free_mib"]))
    e = est(fx["catalog_model"], devs, fx["weight_format"], **fx["settings"])
    context = [(u.kv_cache_bytes + u.recurrent_state_bytes) // MiB for u in e.devices]
    assert context == fx["printed"]["context_mib"]
    assert e.engine_view["pipeline_parallel"] and e.engine_view["n_copies"] == 4
    # the host side of the graph: 4 copies of the graph inputs (the KQ mask above all) with pipeline parallelism;
    # the printed Host row is self 2087 = model 1030 + context 0 + compute
    host_compute = fx["printed"]["host_self_mib"] - fx["printed"]["host_model_mib"]
    assert 0.9 <= e.host.compute_bytes / MiB / host_compute <= 1.1
    # the table prints the same columns
    rows = e.engine_view["memory_breakdown"].splitlines()[1:9]
    assert [int(re.search(r"\+ +(\d+) \+ +\d+\) \+", r).group(1)) for r in rows] == fx["printed"]["context_mib"]


@pytest.mark.xfail(strict=True, reason="1416 MiB predicted per device vs 1553-1617 printed (-9% to -12%): the MoE "
                                        "workspace (600 MiB, exact against llama.cpp's CPU dry run of the same "
                                        "layers, tests/test_llamacpp_compute.py) and 3 more copies of the inputs are "
                                        "in; the CUDA graph's other 140-200 MiB per device are not")
def test_eight_gpus_compute_within_ten_percent():
    fx = json.loads((FIXTURES / "qwen3.5-397b-8x3090-fit-dry-run.json").read_text())
    devs = tuple(Device(id=f"CUDA{i}", name="RTX 3090", memory_bytes=24123 * MiB, free_bytes=f * MiB)
                 for i, f in enumerate(fx["free_mib"]))
    e = est(fx["catalog_model"], devs, fx["weight_format"], **fx["settings"])
    for u, printed in zip(e.devices, fx["printed"]["compute_mib"], strict=True):
        assert 0.9 <= u.compute_bytes / MiB / printed <= 1.1


def test_two_gpus_pipeline_parallel_log():
    """PR #6122 (Command-R 35B on an RTX 4070 Ti + RTX 3090 Ti, "pipeline parallelism enabled (n_copies=4)"): the
    KV cache per device exact, the model buffers within a MiB (2024 padding), CUDA0's compute within 10%."""
    fx = json.loads((FIXTURES / "command-r-35b-4070ti-3090ti-pp.json").read_text())
    devs = tuple(Device(id=f"CUDA{i}", name=g["name"], memory_bytes=g["memory_mib"] * MiB)
                 for i, g in enumerate(fx["gpus"]))
    settings = dict(fx["settings"], tensor_split=tuple(fx["settings"]["tensor_split"]))
    e = est(fx["catalog_model"], devs, fx["weight_format"], engine_version=fx["engine_version"], **settings)
    v = e.engine_view
    assert v["pipeline_parallel"] and v["offloaded_layers"] == "41/41"
    assert [round(v["kv_buffer_bytes"][d] / MiB, 2) for d in ("CUDA0", "CUDA1")] == fx["printed"]["kv_mib"]
    for d, printed in zip(("CUDA0", "CUDA1"), fx["printed"]["model_mib"], strict=True):
        assert abs(v["model_buffer_bytes"][d] / MiB - printed) < 1.0
    assert round(v["model_buffer_bytes"]["CPU_Mapped"] / MiB, 2) == fx["printed"]["cpu_model_mib"]
    assert 0.9 <= v["compute_buffer_bytes"]["CUDA0"] / MiB / fx["printed"]["cuda0_compute_mib"] <= 1.1


def test_split_by_free_memory_and_by_tensor_split():
    """load_tensors: without -ts the split points are the devices' free memory, cumulative; layer il goes to
    the first device whose split point is above (il - i_gpu_start) / n_act (std::upper_bound)."""
    e = est(devices=gpus(8000, 24000), n_ctx=8192)
    # 33 layers (32 + output) at 1/4 : 3/4 -> il/33 < 0.25 for il = 0..8
    assert layer_counts(e) == [9, 23] and e.engine_view["offloaded_layers"] == "33/33"
    e = est(devices=gpus(8000, 24000), n_ctx=8192, tensor_split=(1.0, 1.0))
    assert layer_counts(e) == [17, 15]  # the output layer is the 33rd and goes with the last device


def test_split_mode_none_and_main_gpu():
    """-sm none: everything on -mg (llama_model_load_from_splits keeps only the main GPU); -mg out of range is
    an error."""
    e = est(devices=gpus(24000, 24000), n_ctx=8192, split_mode="none", main_gpu=1)
    assert layer_counts(e) == [0, 32] and e.engine_view["model_buffer_bytes"].get("CUDA0", 0) == 0
    assert not e.engine_view["pipeline_parallel"]
    with pytest.raises(OomkitError):
        est(devices=gpus(24000, 24000), n_ctx=8192, split_mode="none", main_gpu=2)


def test_rpc_devices_come_first_under_their_buffer_names():
    """src/llama.cpp: "add RPC servers at the front of the list to minimize network transfers"; the RPC
    backend's buffers are named RPC[host:port] (ggml-rpc.cpp); the split rule is the same (free memory). RPC
    devices report no async compute or events, so no pipeline parallelism."""
    _, _, s = parse_args(["-m", "x.gguf", "--rpc", "192.168.1.2:50052", "-c", "8192", "-fit", "off"])
    e = oomkit.estimate(LLAMA8, "llama.cpp", quant="Q4_K_M", devices=gpus(24000, 12000), settings=s,
                        find_max_context=False)
    assert [u.id for u in e.devices] == ["RPC0[192.168.1.2:50052]", "CUDA0"]
    assert layer_counts(e) == [11, 21]  # 12000 MiB of the remote card first: il/33 < 1/3
    v = e.engine_view
    assert set(v["model_buffer_bytes"]) >= {"RPC0[192.168.1.2:50052]", "CUDA0"}
    assert "RPC0[192.168.1.2:50052]" in v["kv_buffer_bytes"] and not v["pipeline_parallel"]
    # builds before multi-device rpc-servers (PR #16276) name the buffer without the device index
    _, _, old = parse_args(["-m", "x.gguf", "--rpc", "192.168.1.2:50052", "-c", "8192"])
    e_old = oomkit.estimate(LLAMA8, "llama.cpp", quant="Q4_K_M", devices=gpus(24000, 12000), settings=old,
                            find_max_context=False, engine_version="b6000")
    assert [u.id for u in e_old.devices] == ["RPC[192.168.1.2:50052]", "CUDA0"]
    # the last layers and the output layer stay local
    assert e.layers[-1].device == "CUDA0" and e.layers[0].device == "RPC0[192.168.1.2:50052]"


def test_rpc_devices_pipeline_parallel_from_their_events():
    """PR #18626 ("rpc : implement event and async backend APIs", merged 2026-08-26): the RPC backend reports async
    compute and events, so an RPC device no longer stops pipeline parallelism (src/llama-context.cpp requires both
    of every device). Builds from before it: no pipeline; builds after it: four copies of the inputs."""
    _, _, s = parse_args(["-m", "x.gguf", "--rpc", "192.168.1.2:50052", "-c", "8192", "-fit", "off"])
    run = lambda version: oomkit.estimate(LLAMA8, "llama.cpp", quant="Q4_K_M", devices=gpus(24000, 12000),  # noqa: E731
                                          settings=s, find_max_context=False, engine_version=version).engine_view
    before, after = run("2026-08-10"), run("2026-09-10")
    assert not before["pipeline_parallel"]
    assert after["pipeline_parallel"] and after["n_copies"] == 4
    # the copies of the graph inputs raise each device's compute buffer
    for dev in ("RPC0[192.168.1.2:50052]", "CUDA0"):
        assert after["compute_buffer_bytes"][dev] > before["compute_buffer_bytes"][dev]


def test_device_flag_orders_the_devices():
    """-dev is honoured verbatim: the named devices, in that order (RPC devices also as RPC0, RPC1...)."""
    _, _, s = parse_args(["-m", "x.gguf", "--rpc", "10.0.0.2:50052", "-dev", "CUDA0,RPC0", "-c", "8192"])
    e = oomkit.estimate(LLAMA8, "llama.cpp", quant="Q4_K_M", devices=gpus(12000, 12000), settings=s,
                        find_max_context=False)
    assert [u.id for u in e.devices] == ["CUDA0", "RPC0[10.0.0.2:50052]"]
    with pytest.raises(OomkitError):
        _, _, s = parse_args(["-m", "x.gguf", "-dev", "CUDA5"])
        oomkit.estimate(LLAMA8, "llama.cpp", quant="Q4_K_M", devices=gpus(12000), settings=s,
                        find_max_context=False)


def test_pipeline_parallelism_copies_the_inputs_four_times():
    """llama-context.cpp: pipeline parallelism when n_devices > 1, every layer offloaded, -sm layer, KV offloaded
    and no tensor override; ggml-backend.cpp then keeps GGML_SCHED_MAX_COPIES (4) copies of each device's inputs
    (unsloth PR #7637 traces the multi-GPU compute step to exactly this: 4 x the f16 KQ mask per device,
    "llama.cpp allocated 4.0 GiB per device" at 1M context and -ub 512)."""
    base = dict(n_ctx=131072, n_parallel=1, flash_attn="on")
    on = est(devices=gpus(40000, 40000), **base)
    assert on.engine_view["pipeline_parallel"]
    mask = 131072 * 512 * 2  # f16 [n_kv, n_ubatch]
    for kw in (dict(n_gpu_layers=32), dict(override_tensor=(("ffn_down", "CUDA0"),)), dict(no_kv_offload=True),
               dict(split_mode="row")):
        off = est(devices=gpus(40000, 40000), **base, **kw)
        assert not off.engine_view["pipeline_parallel"], kw
    off = est(devices=gpus(40000, 40000), **base, override_tensor=(("ffn_down", "CUDA0"),))
    for dev in ("CUDA0", "CUDA1"):
        extra = on.engine_view["compute_buffer_bytes"][dev] - off.engine_view["compute_buffer_bytes"][dev]
        # three more copies of the mask, the hidden state handed over and the positions
        assert extra == 3 * (mask + 4096 * 512 * 4 + 512 * 4)
    # one GPU: never
    assert not est(devices=gpus(40000), **base).engine_view["pipeline_parallel"]


@pytest.mark.parametrize("pattern,names", [
    # std::regex_search: a match anywhere in the tensor name, not the whole name
    ("exps", ["blk.0.ffn_up_exps.weight", "blk.0.ffn_gate_exps.weight", "blk.0.ffn_down_exps.weight"]),
    (r"^blk\.1\.", None),
    (r"blk\.(1[0-9]|2[0-3])\.ffn_.*_exps", None),
    ("ffn_(up|gate)_exps=CPU", None),
])
def test_override_tensor_is_a_regex_search(pattern, names):
    """common/arg.cpp --override-tensor: each PATTERN=BUFT becomes a std::regex; llama-model.cpp moves a tensor
    when std::regex_search(name, pattern) matches (first match wins)."""
    from oomkit.engines.base import get_engine
    from oomkit.engines.llamacpp.weights import override_patterns, tensor_device
    from oomkit.request import resolve_model

    spec = resolve_model(get_engine("llama.cpp"), "openai/gpt-oss-20b", "MXFP4_MOE")
    if "=" in pattern:
        pattern = pattern.split("=")[0]
    _, _, s = parse_args(["-m", "x.gguf", "-ot", f"{pattern}=CPU"])
    pats = override_patterns(s, spec)
    from oomkit.engines.llamacpp.weights import Placement
    pl = Placement(tuple([0] * spec.n_layers), 0, spec.n_layers + 1)
    moved = sorted(t.name for t in spec.weights.tensors if tensor_device(t, pl, pats, 1) == -1)
    expect = sorted(t.name for t in spec.weights.tensors
                    if re.search(pattern, t.name) or t.name.startswith("token_embd"))
    assert moved == expect
    if names:
        assert set(names) <= set(moved)


def test_cpu_moe_patterns_are_the_sources():
    """common/arg.cpp: --cpu-moe is "\\.ffn_(up|down|gate)_(ch|)exps" for every layer, --n-cpu-moe N the same per
    layer blk.i for i < N; both to the CPU."""
    from oomkit.engines.base import get_engine
    from oomkit.engines.llamacpp.weights import Placement, override_patterns, tensor_device
    from oomkit.request import resolve_model

    spec = resolve_model(get_engine("llama.cpp"), "openai/gpt-oss-20b", "MXFP4_MOE")
    pl = Placement(tuple([0] * spec.n_layers), 0, spec.n_layers + 1)
    _, _, s = parse_args(["-m", "x.gguf", "--n-cpu-moe", "3"])
    moved = {t.name for t in spec.weights.tensors if tensor_device(t, pl, override_patterns(s, spec), 1) == -1}
    assert {n for n in moved if not n.startswith("token_embd")} == {
        t.name for t in spec.weights.tensors
        if re.match(r"blk\.[0-2]\.ffn_(up|down|gate|gate_up)_(ch|)exps", t.name)}


def test_override_buffer_names_with_rpc_devices_first():
    """-ot BUFT names a buffer type: CUDA0 is the first local GPU even when RPC devices come first in the model's
    device list, and an RPC device is named by its buffer type (RPC0[host:port])."""
    _, _, s = parse_args(["-m", "x.gguf", "--rpc", "10.0.0.2:50052", "-c", "8192", "-fit", "off",
                          "-ot", r"blk\.0\.=CUDA0,blk\.31\.=RPC0[10.0.0.2:50052]"])
    e = oomkit.estimate(LLAMA8, "llama.cpp", quant="Q4_K_M", devices=gpus(12000, 12000), settings=s,
                        find_max_context=False)
    plain = oomkit.estimate(LLAMA8, "llama.cpp", quant="Q4_K_M", devices=gpus(12000, 12000),
                            settings=parse_args(["-m", "x.gguf", "--rpc", "10.0.0.2:50052", "-c", "8192",
                                                 "-fit", "off"])[2], find_max_context=False)
    rpc, local = "RPC0[10.0.0.2:50052]", "CUDA0"
    a, b = e.engine_view["model_buffer_bytes"], plain.engine_view["model_buffer_bytes"]
    # layer 0 (on the RPC device by the split) moves to CUDA0, layer 31 (on CUDA0) to the RPC device: equal sizes
    assert layer_counts(plain)[0] > 0 and a[rpc] == b[rpc] and a[local] == b[local]
    assert not e.engine_view["pipeline_parallel"]
    _, _, bad = parse_args(["-m", "x.gguf", "-ot", "ffn_down=CUDA3"])
    with pytest.raises(OomkitError):
        oomkit.estimate(LLAMA8, "llama.cpp", quant="Q4_K_M", devices=gpus(12000, 12000), settings=bad,
                        find_max_context=False)
