"""llama.cpp across several devices: the layer split by free memory, -sm / -mg, --rpc devices, -ot and --n-cpu-moe
as llama.cpp matches them, and pipeline parallelism's copies of the compute inputs.

Ground truth: public multi-GPU logs (tests/fixtures/engine_logs/llamacpp_multi/, each with its URL) and the
source's rules (llama.cpp src/llama.cpp llama_model_load_from_splits, src/llama-model.cpp load_tensors,
src/llama-context.cpp, ggml-backend.cpp), named in each test.
"""

import importlib.util
import json
import re
from dataclasses import replace
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


def test_eight_gpus_compute_from_the_cuda_flash_attention_copies():
    """The same log's compute column: 1553 (CUDA0) / 1617 (CUDA1-3) / 1601 (CUDA4-7) MiB printed. b9557 has PR
    #23907 (b9489): ggml-cuda sizes each flash-attention node with F16 copies of its q8_0 K and V views (2 x 128
    MiB at 131072 cells of 2 heads x 256), which the MMA kernel reads, and that block lands above everything alive
    at the full-attention layer. oomkit: 1536 / 1600 / 1600 (0.989 / 0.989 / 0.999); 1416 / 1480 (0.912 to 0.924)
    without the copies, as in a build before it. The pinned llama.cpp's scheduler over two CPU-backed devices with
    ggml-cuda's sizes gives 1553.19 / 1617.19 / 1601.19 for the three kinds of device
    (test_pipeline_parallel_devices_as_llama_cpp_schedules_them): the 17 MiB left on the devices whose first layer
    is a gated delta net are pipeline parallelism's copies (832.89 MiB over one device's 720.30 there; oomkit counts
    816.01: 3 x (the KQ mask, one hidden-state row, the positions))."""
    fx = json.loads((FIXTURES / "qwen3.5-397b-8x3090-fit-dry-run.json").read_text())
    devs = tuple(Device(id=f"CUDA{i}", name="RTX 3090", memory_bytes=24123 * MiB, free_bytes=f * MiB)
                 for i, f in enumerate(fx["free_mib"]))
    e = est(fx["catalog_model"], devs, fx["weight_format"], engine_version=fx["engine_version"], **fx["settings"])
    for u, printed in zip(e.devices, fx["printed"]["compute_mib"], strict=True):
        assert 0.98 <= u.compute_bytes / MiB / printed <= 1.02, (u.id, u.compute_bytes / MiB, printed)
    before = est(fx["catalog_model"], devs, fx["weight_format"], engine_version="b9480", **fx["settings"])
    assert [round(u.compute_bytes / MiB) for u in before.devices] == [1416] + [1480] * 7


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
    # b2450 prints the mapped weights' buffer as "CPU" ("CPU_Mapped" from b3990)
    assert round(v["model_buffer_bytes"]["CPU"] / MiB, 2) == fx["printed"]["cpu_model_mib"]
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
               dict(split_mode="row", engine_version="b9889")):  # -sm row on CUDA loads only before b9890
        off = est(devices=gpus(40000, 40000), **base, **kw)
        assert not off.engine_view["pipeline_parallel"], kw
    off = est(devices=gpus(40000, 40000), **base, override_tensor=(("ffn_down", "CUDA0"),))
    for dev, rows in (("CUDA0", 0), ("CUDA1", 4)):
        extra = on.engine_view["compute_buffer_bytes"][dev] - off.engine_view["compute_buffer_bytes"][dev]
        # three more copies of the mask, the hidden state handed over and the positions; on a device after the
        # first, four hidden-state rows more (measured: test_pipeline_parallel_devices_as_llama_cpp_schedules_them)
        assert extra == 3 * (mask + 4096 * 512 * 4 + 512 * 4) + rows * 4096 * 512 * 4
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


# llama.cpp (the pinned binding) with the model split over devices that are copies of its CPU device, each with a
# buffer type of its own that no other device accepts (not host, supported by that device alone), so that
# ggml_backend_sched splits the graph, copies each split's inputs and keeps GGML_SCHED_MAX_COPIES of them as it does
# between GPUs. A device of type CPU is skipped by llama_context's async/events check, so pipeline parallelism is on
# with two or more of them (FAKE_GPU=1 makes them GPUs without events: off; FAKE_HTP=1 gives them the op set of the
# 2025 Hexagon sessions, ggml-hexagon.cpp supports_op of PR #16547, and host-memory buffers; FAKE_CUDA_FA=1 sizes a
# FLASH_ATTN_EXT node as ggml-cuda's buffer type does from b9489, with F16 copies of a K / V of another type behind
# the output: ggml-cuda.cu ggml_backend_cuda_buffer_type_get_alloc_size, fattn-common.cuh
# ggml_cuda_flash_attn_ext_get_f16_extra_data, the MMA / tile kernels for batches of more than two tokens, the
# vector kernel, which converts nothing quantized, for one or two). Dry run (no_alloc): the reserve sizes.
# Struct layouts are those of ggml-backend-impl.h at the binding's llama.cpp: ggml_backend_device = 15 function
# pointers (get_name 0, get_type 3, init_backend 5, get_buffer_type 6, buffer_from_host_ptr 8, supports_buft 10),
# reg, context;
# ggml_backend_buffer_type = 6 (get_name 0, get_alloc_size 4, is_host 5), device, context; ggml_tensor: type 0,
# ne 16, op 80, src 152, view_src 232, view_offs 240.
_SPLIT_RUNNER = r'''
import ctypes as C, json, os, pathlib, re, sys
import llama_cpp
from llama_cpp import llama_cpp as L
path, split, s = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
G = C.CDLL(str(pathlib.Path(llama_cpp.__file__).parent / "lib" / "libggml.so"), mode=C.RTLD_GLOBAL)
VP = C.c_void_p
lines = []
@L.llama_log_callback
def _log(level, text, ud):
    lines.append(text.decode("utf-8", "replace"))
L.llama_log_set(_log, VP(0))
L.llama_backend_init()
G.ggml_backend_dev_get.restype, G.ggml_backend_dev_get.argtypes = VP, [C.c_size_t]
G.ggml_backend_dev_buffer_type.restype, G.ggml_backend_dev_buffer_type.argtypes = VP, [VP]
real = G.ggml_backend_dev_get(0)
rd = C.cast(real, C.POINTER(VP))
rbt = C.cast(G.ggml_backend_dev_buffer_type(real), C.POINTER(VP))
NAME, INIT, SUPBT = C.CFUNCTYPE(VP, VP), C.CFUNCTYPE(VP, VP, VP), C.CFUNCTYPE(C.c_bool, VP, VP)
ISHOST, TYPE = C.CFUNCTYPE(C.c_bool, VP), C.CFUNCTYPE(C.c_int, VP)
SUPOP = C.CFUNCTYPE(C.c_bool, VP, VP)
HTP = os.environ.get("FAKE_HTP")
def i32(p, off):
    return C.cast(p + off, C.POINTER(C.c_int))[0]
def i64(p, off):
    return C.cast(p + off, C.POINTER(C.c_int64))[0]
def htp_op(d, op):  # struct ggml_tensor: type 0, ne 16, op 80, op_params 84, src 152
    code, src = i32(op, 80), [C.cast(op + 152, C.POINTER(VP))[k] for k in range(3)]
    if code in (0, 36, 37, 38, 39):  # NONE, RESHAPE, VIEW, PERMUTE, TRANSPOSE
        return True
    if code in (29, 30):  # MUL_MAT, MUL_MAT_ID: q4_0 / q8_0 / mxfp4 weights of at most 16384 rows, f32 rows
        return (i32(src[0], 0) in (2, 8, 39) and i64(src[0], 16) % 32 == 0 and i64(src[0], 24) <= 16384
                and i32(src[1], 0) == 0)
    if code in (2, 3, 6, 7, 25, 48):  # ADD, ADD_ID, SUB, MUL, RMS_NORM, ROPE
        return i32(op, 0) == 0 and i32(src[0], 0) == 0
    if code == 46:  # SOFT_MAX without sinks
        return src[2] is None and i32(src[0], 0) == 0
    if code == 100:  # GLU: SWIGLU (2) only, and SWIGLU_OAI (3) when FAKE_HTP=oai
        return i32(op, 84) in ((2, 3) if HTP == "oai" else (2,)) and i32(src[0], 0) == 0
    return False
G.ggml_nbytes.restype, G.ggml_nbytes.argtypes = C.c_size_t, [VP]
G.ggml_nelements.restype, G.ggml_nelements.argtypes = C.c_int64, [VP]
G.ggml_op_name.restype, G.ggml_op_name.argtypes = C.c_char_p, [C.c_int]
FA_OP = next(i for i in range(200) if G.ggml_op_name(i) == b"FLASH_ATTN_EXT")
ALLOC = C.CFUNCTYPE(C.c_size_t, VP, VP)
def cuda_alloc_size(b, t):
    n = G.ggml_nbytes(t)
    if i32(t, 80) != FA_OP or not os.environ.get("FAKE_CUDA_FA"):
        return n
    q, k, v = [C.cast(t + 152, C.POINTER(VP))[j] for j in range(3)]
    big = i64(q, 24) > 2  # Q's tokens: MMA / tile kernels convert every type but F16, the vector one only F32
    pad = lambda x: (x + 127) // 128 * 128
    vsrc = lambda x: C.cast(x + 232, C.POINTER(VP))[0]
    v_is_k = vsrc(v) and (vsrc(v) == k or (vsrc(v) == vsrc(k) and i64(v, 240) == i64(k, 240)))
    if i32(k, 0) != 1 and (big or i32(k, 0) == 0):
        n = pad(n) + G.ggml_nelements(k) * 2
    if i32(v, 0) != 1 and (big or i32(v, 0) == 0) and not v_is_k:
        n = pad(n) + G.ggml_nelements(v) * 2
    return n
orig_init, keep = INIT(rd[5]), []
def fake(name):
    dev, bt = (VP * 17)(*[rd[k] for k in range(17)]), (VP * 8)(*[rbt[k] for k in range(8)])
    nm = C.create_string_buffer(name.encode())
    devp, btp = C.addressof(dev), C.addressof(bt)
    def init(d, params):
        be = orig_init(real, params)
        bp = C.cast(be, C.POINTER(VP))
        hits = [k for k in range(64) if bp[k] == real]
        assert len(hits) == 1, hits
        bp[hits[0]] = devp  # the backend's device: the fake one
        return be
    fns = [NAME(lambda d: C.addressof(nm)), INIT(init), NAME(lambda b: btp), SUPBT(lambda d, b: b == btp),
           ISHOST(lambda b: bool(HTP)), TYPE(lambda d: 1), SUPOP(htp_op),
           ALLOC(cuda_alloc_size)]
    keep.extend([dev, bt, nm, *fns])
    dev[0], dev[5], dev[6], dev[8], dev[10] = (C.cast(fns[0], VP), C.cast(fns[1], VP), C.cast(fns[2], VP), None,
                                               C.cast(fns[3], VP))
    if os.environ.get("FAKE_GPU") or HTP:
        dev[3] = C.cast(fns[5], VP)
    if HTP:  # the Hexagon sessions of 2025: their op set, buffers in host memory (GGML_HEXAGON_HOSTBUF=1)
        dev[9] = C.cast(fns[6], VP)
    bt[0], bt[5], bt[6] = C.cast(fns[0], VP), C.cast(fns[4], VP), devp  # its own name, not host, its device
    bt[4] = C.cast(fns[7], VP)  # ggml-cuda's FLASH_ATTN_EXT size under FAKE_CUDA_FA, else ggml_nbytes
    return devp
devs = [fake(f"DEV{i}") for i in range(len(split))]
arr = (VP * (len(devs) + 1))(*devs, None)
ts = (C.c_float * 128)(*split)
mp = L.llama_model_default_params()
mp.n_gpu_layers, mp.use_extra_bufts, mp.no_alloc, mp.load_mode, mp.split_mode = 999, False, True, 0, 1
mp.devices, mp.tensor_split = C.addressof(arr), C.cast(ts, C.POINTER(C.c_float))
model = L.llama_model_load_from_file(path.encode(), mp)
cp = L.llama_context_default_params()
cp.n_ctx, cp.n_ubatch, cp.n_batch, cp.n_seq_max = s["n_ctx"], s["n_ubatch"], s.get("n_batch", 4096), 1
cp.kv_unified, cp.flash_attn_type, cp.type_k, cp.type_v = True, 1, s["type"], s["type"]
cp.n_outputs_max, cp.n_threads = s.get("n_outputs_max", 1), 1
cp.swa_full = False
lines.clear()
ctx = L.llama_init_from_model(model, cp)
text = "".join(lines)
sizes = [float(m) for m in re.findall(r"compute buffer size = *([0-9.]+) MiB", text)]
print("@@" + json.dumps({"compute_mib": sizes, "pipeline_parallel": "pipeline parallelism enabled" in text}))
'''


def _scheduled_compute(path, split, fake_gpu=False, htp="", cuda_fa=False, **ctx) -> dict:
    import os
    import subprocess
    import sys

    env = dict(os.environ, **({"FAKE_GPU": "1"} if fake_gpu else {}), **({"FAKE_HTP": htp} if htp else {}),
               **({"FAKE_CUDA_FA": "1"} if cuda_fa else {}))
    out = subprocess.run([sys.executable, "-c", _SPLIT_RUNNER, str(path), json.dumps(split), json.dumps(ctx)],
                         capture_output=True, timeout=600, stdin=subprocess.DEVNULL, text=True, env=env)
    rows = [json.loads(ln[2:]) for ln in out.stdout.splitlines() if ln.startswith("@@")]
    assert rows, out.stderr[-2000:]
    return rows[0]


needs_llama_cpp = pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None,
                                     reason="llama-cpp-python not installed")


@needs_llama_cpp
@pytest.mark.parametrize("split,n_ctx,n_ubatch,cuda_fa", [([8, 9], 131072, 1024, False), ([8, 9], 32768, 512, False),
                                                          ([3, 14], 131072, 1024, False), ([8, 9], 131072, 1024, True),
                                                          ([6, 10], 131072, 1024, True), ([8, 9], 32768, 512, True)])
def test_pipeline_parallel_devices_as_llama_cpp_schedules_them(split, n_ctx, n_ubatch, cuda_fa):
    """Qwen3.5-397B-shaped (16 layers: gated delta nets, full attention every 4th, 512 experts) split over two
    devices the way the pinned llama.cpp's ggml_backend_sched splits it between GPUs (_SPLIT_RUNNER), pipeline
    parallel (4 copies), q8_0 cache, -fa on, one logits row. With the devices' buffers sized as ggml-cpu's (a build
    before b9489 for oomkit): llama.cpp prints 1417.19 / 1481.19 MiB at 128K -ub 1024 (the 8 x RTX 3090 log's
    shapes), 325.13 / 357.13 at 32K -ub 512; oomkit 1416 / 1480 and 324 / 356. The device after the first keeps
    four hidden-state rows more (its split inputs, printed by GGML_SCHED_DEBUG, are the same as the first's); a
    device holding only gated-delta-net layers (layers 0-2 with [3, 14]) takes no KQ mask at all: 392.00 printed,
    392.01 here (1416 before the masks were dropped there).
    Sized as ggml-cuda's from b9489 (cuda_fa: flash attention's F16 copies of the q8_0 K and V, 256 MiB at 128K):
    1553.19 / 1617.19 MiB, and 1601.19 on a second device whose first layer is a full-attention one ([6, 10]:
    layer 7), the 8 x RTX 3090 log's three figures (1553 / 1617 / 1601, test_eight_gpus_compute_from_the_cuda_
    flash_attention_copies); oomkit 1536 / 1600 / 1600; 329.13 / 361.13 at 32K -ub 512 (the copies, 64 MiB, fit
    below the feed-forward peak but for 4), oomkit 324 / 356."""
    from oomkit.model.gguf_file import read_gguf_spec
    from tests.groundtruth import synth
    from tests.test_llamacpp_compute import qwen35moe_397b

    path = synth.synth_path(qwen35moe_397b(n_layers=16), "q4_0")
    real = _scheduled_compute(path, split, cuda_fa=cuda_fa, n_ctx=n_ctx, n_ubatch=n_ubatch, type=8)
    assert real["pipeline_parallel"] and len(real["compute_mib"]) == len(split) + 1
    devs = tuple(Device(id=f"CUDA{i}", name="RTX 3090", memory_bytes=24000 * MiB, free_bytes=24000 * MiB)
                 for i in range(len(split)))
    e = oomkit.estimate(read_gguf_spec(path), "llama.cpp", devices=devs, find_max_context=False, fit=False,
                        program="llama-server", n_ctx=n_ctx, n_batch=4096, n_ubatch=n_ubatch, n_parallel=1,
                        kv_unified=True, cache_type_k="q8_0", cache_type_v="q8_0", flash_attn="on", mmap=False,
                        tensor_split=tuple(split), engine_version="b9557" if cuda_fa else "b9480")
    assert e.engine_view["pipeline_parallel"]
    for u, r in zip(e.devices, real["compute_mib"], strict=False):
        assert 0.98 <= u.compute_bytes / MiB / r <= 1.02, (u.id, u.compute_bytes / MiB, r)


@needs_llama_cpp
@pytest.mark.parametrize("key,n_layers,n_ctx,n_ubatch,added", [("llama-3.1-8b", 4, 32768, 512, 60.0),
                                                               ("llama-3.1-8b", 4, 131072, 1024, 376.0),
                                                               ("qwen3.5-27b", 8, 32768, 512, 86.0),
                                                               ("qwen3.5-27b", 8, 131072, 1024, 428.0)])
def test_cuda_flash_attention_copies_on_one_device(key, n_layers, n_ctx, n_ubatch, added):
    """One ggml-cuda device, q8_0 K and V, -fa on: what flash attention's F16 copies add to the device's compute
    buffer (PR #23907, b9489), replayed through the pinned llama.cpp's scheduler and ggml-alloc with ggml-cuda's sizes
    (_SPLIT_RUNNER, FAKE_CUDA_FA): Llama-3.1-8B-shaped 132.09 -> 192.09 MiB at 32K -ub 512 and 456.10 -> 832.10 at
    128K -ub 1024 (the rotated Q, then the output with its copies, above the rows); Qwen3.5-27B-shaped (gated Q,
    gated delta nets) 154.28 -> 240.28 and 500.30 -> 928.30. oomkit adds 60 / 376 and 76 / 408 (b9480 -> b9557):
    within 24 MiB of the replay, and the device's buffer within 10% of it with the copies (1.083, 1.038, 1.040,
    1.021; without them oomkit is 1.07 to 1.13 over on these few-layer files, the plain layer workspace)."""
    from oomkit.model.gguf_file import read_gguf_spec
    from tests import gt_compare as g

    path = g.synth_file(key, n_layers)
    spec = read_gguf_spec(path)
    real = [_scheduled_compute(path, [1], cuda_fa=fa, n_ctx=n_ctx, n_ubatch=n_ubatch, type=8)["compute_mib"][0]
            for fa in (False, True)]
    assert round(real[1] - real[0], 2) == added
    dev = (Device(id="CUDA0", name="RTX 3090", memory_bytes=1 << 40, free_bytes=1 << 40),)
    got = [oomkit.estimate(spec, "llama.cpp", devices=dev, find_max_context=False, fit=False, program="llama-server",
                           n_ctx=n_ctx, n_batch=4096, n_ubatch=n_ubatch, n_parallel=1, kv_unified=True,
                           cache_type_k="q8_0", cache_type_v="q8_0", flash_attn="on", mmap=False,
                           engine_version=v).devices[0].compute_bytes / MiB for v in ("b9480", "b9557")]
    assert abs((got[1] - got[0]) - added) <= 24, got
    assert 0.9 <= got[1] / real[1] <= 1.1, (got[1], real[1])


@needs_llama_cpp
@pytest.mark.parametrize("n_batch,printed", [(128, 16.06), (256, 32.13)])
def test_hexagon_sessions_of_2025_leave_swiglu_oai_to_the_cpu(n_batch, printed):
    """gpt-oss-20b-shaped (24 layers, q8_0 attention, mxfp4 experts) over four sessions that run only the HTP's ops
    of 2025 (_SPLIT_RUNNER with FAKE_HTP: no SWIGLU_OAI before PR #18114, no FLASH_ATTN_EXT, SET_ROWS, GET_ROWS,
    SCALE), the guide's -c 8192 -b 128 -ctk q8_0 -fa on, every token an output (llama-cli of b6733): each session
    prints 16.06 MiB, as the Hexagon developer guide's log does for HTP0-3 (tests/fixtures/engine_logs/llamacpp/
    backends_multi/hexagon-gpt-oss-20b-q4_0-4htp-8192-q8kv.json), and 21.69 with SWIGLU_OAI on the session. oomkit's
    b6733 Hexagon estimate: 16.0625 / 32.125 MiB (22.50 before the rule, 1.40 of the printed)."""
    from oomkit.model.gguf_file import read_gguf_spec
    from tests import gt_compare as g

    path = g.synth_file("gpt-oss-20b", 24)
    ctx = dict(n_ctx=8192, n_ubatch=512, n_batch=n_batch, type=8, n_outputs_max=0)
    real = _scheduled_compute(path, [7, 6, 6, 6], htp="1", **ctx)
    assert real["compute_mib"][:4] == [printed] * 4
    if n_batch == 128:
        assert _scheduled_compute(path, [7, 6, 6, 6], htp="oai", **ctx)["compute_mib"][:4] == [21.69] * 4
    devs = tuple(Device(id=f"HTP{i}", name="Hexagon", memory_bytes=2048 * MiB, free_bytes=2048 * MiB)
                 for i in range(4))
    _, _, s = parse_args(["-m", "x.gguf", "-c", "8192", "-b", str(n_batch), "-ctk", "q8_0", "-ctv", "q8_0", "-fa",
                          "on", "-ngl", "99", "--device", "HTP0,HTP1,HTP2,HTP3", "-fit", "off"], program="llama-cli")
    e = oomkit.estimate(read_gguf_spec(path), "llama.cpp", devices=devs, settings=s, find_max_context=False,
                        engine_version="b6733", backend="hexagon")
    for u in e.devices:
        assert abs(u.compute_bytes / MiB - printed) <= 0.01, (u.id, u.compute_bytes / MiB)  # alignment padding


def test_an_integrated_gpu_is_left_out_beside_a_discrete_one():
    """src/llama.cpp default device selection (PR #15797, b6451): an iGPU only when no other device was found, then
    only the first; PR #23868 (b9426): an RPC server no longer keeps it out. ggml-vulkan types its iGPUs from
    PR #15947 (b6454). HilbertraumAI's b9849 laptop log: the Radeon iGPU (Vulkan0) idle, every buffer on Vulkan1."""
    from oomkit.engines.llamacpp.split import model_devices

    igpu = Device(id="Vulkan0", name="Radeon iGPU", memory_bytes=8886 << 20, free_bytes=8441 << 20, integrated=True)
    card = Device(id="Vulkan1", name="RTX 3060 Laptop GPU", memory_bytes=5994 << 20, free_bytes=5223 << 20)

    def chosen(devs, version, *flags):
        _, _, s = parse_args(["-m", "x.gguf", *flags])
        return [d.id for d in model_devices(devs, replace(s, engine_version=version))]

    assert chosen((igpu, card), "b9849") == ["Vulkan1"]
    assert chosen((igpu, card), "b6450") == ["Vulkan0", "Vulkan1"]  # before the iGPU type
    assert chosen((igpu, replace(igpu, id="Vulkan1")), "b9849") == ["Vulkan0"]  # iGPUs alone: the first
    assert chosen((igpu, card), "b9849", "-dev", "Vulkan0") == ["Vulkan0"]  # -dev is honoured
    remote = Device(id="Vulkan2", memory_bytes=65536 << 20, free_bytes=65536 << 20)
    assert chosen((igpu, remote), "b9425", "--rpc", "10.0.0.2:50052") == ["RPC0[10.0.0.2:50052]"]
    assert chosen((igpu, remote), "b9426", "--rpc", "10.0.0.2:50052") == ["RPC0[10.0.0.2:50052]", "Vulkan0"]


def test_the_backend_names_the_devices():
    # ggml_backend_dev_name: a Vulkan build calls two NVIDIA cards Vulkan0 and Vulkan1, so -dev Vulkan1 (which
    # also says the build is a Vulkan one) picks the second card, and the fit log and breakdown name it so
    e = oomkit.estimate("Qwen/Qwen3-8B", "llama.cpp", quant="Q4_K_M", gpu="2x RTX 3090", device=("Vulkan1",))
    assert [u.id for u in e.devices] == ["Vulkan1"]
    assert e.engine_view["backend"] == "vulkan" and "Vulkan1" in e.engine_view["model_buffer_bytes"]
    both = oomkit.estimate("Qwen/Qwen3-32B", "llama.cpp", quant="Q4_K_M", gpu="2x RTX 3090", backend="vulkan")
    assert [u.id for u in both.devices] == ["Vulkan0", "Vulkan1"]
    assert "- Vulkan0 (NVIDIA GeForce RTX 3090)" in both.engine_view["memory_breakdown"]
    assert "CUDA" not in both.engine_view["memory_breakdown"] + str(both.engine_view.get("fit_target_bytes"))
    with pytest.raises(oomkit.errors.SettingsError, match="no device CUDA1 .there are Vulkan0, Vulkan1"):
        oomkit.estimate("Qwen/Qwen3-8B", "llama.cpp", quant="Q4_K_M", gpu="2x RTX 3090", backend="vulkan",
                        device=("CUDA1",))
    # a CUDA build keeps the catalog's names
    assert [u.id for u in oomkit.estimate("Qwen/Qwen3-8B", "llama.cpp", quant="Q4_K_M", gpu="2x RTX 3090",
                                          device=("CUDA1",)).devices] == ["CUDA1"]


def test_split_gguf_parts_map_one_cpu_range_each(tmp_path):
    """A split GGUF read from its parts: each tensor's offset is within its own part's data section, and
    load_tensors maps each part apart (src/llama-model.cpp: one CPU_Mapped buffer per file idx over
    llama_model_loader::get_mapping_range's [first, last) of that part's CPU tensors), so the CPU_Mapped figure is
    the parts' ranges summed, each without the padding after its last tensor."""
    from oomkit.model.resolve import resolve
    from tests.groundtruth import synth
    from tests.test_hub import FT, write_gguf

    model = synth.qwen3_30b_a3b(n_layers=2, n_experts=8)
    paths = write_gguf(model, tmp_path / "Qwen3-30B-A3B-BF16.gguf", "f16", int(FT.MOSTLY_BF16), split_max_tensors=12)
    assert len(paths) > 1
    spec = resolve(str(paths[0]))
    assert {t.file for t in spec.weights.tensors} == set(range(len(paths)))
    want = sum(max(t.offset + t.nbytes for t in part) - min(t.offset for t in part)
               for f in range(len(paths)) for part in [[t for t in spec.weights.tensors if t.file == f]])
    e = oomkit.estimate(str(paths[0]), "llama.cpp", devices=(), find_max_context=False, fit=False, n_ctx=512)
    assert e.engine_view["model_buffer_bytes"]["CPU_Mapped"] == want
