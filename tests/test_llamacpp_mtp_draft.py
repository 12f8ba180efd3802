"""llama.cpp's speculative drafts beside the main model: the model's own next-n (MTP) block (--spec-type draft-mtp)
and a draft model on devices of its own (-devd).

MTP ground truth: llama-cpp-python 0.3.36's build runs MTP (llama_model_params.load_mtp, a second context with
ctx_type LLAMA_CONTEXT_TYPE_MTP and ctx_other = the target, as common_speculative_init_result makes it); the worker
below loads synthetic GGUFs with a next-n block, creates both contexts the way llama-server does (the MTP context at
the target's n_ctx, n_rs_seq 0, n_outputs_max = n_parallel with one per sequence) and reads the buffers llama.cpp
prints. The fit rules are the source's (common/fit.cpp add_extra_memory, common/common.cpp common_fit_extra_model
with shares_model, tools/server/server-context.cpp's margin block), played with oomkit's own -fit off figures as in
tests/test_llamacpp_fit.py.
"""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

import oomkit
from oomkit.engines.llamacpp import LlamaCppSettings, parse_args
from oomkit.engines.llamacpp.fit import dry_run, params_fit
from oomkit.engines.llamacpp.kv import resolve_context
from oomkit.engines.llamacpp.mtp import mtp_dry_run
from oomkit.errors import OomkitError, SettingsError
from oomkit.memory import Device
from oomkit.model.gguf_file import read_gguf_spec
from tests import ggufs
from tests.groundtruth import llamacpp_run, synth

MiB = 1 << 20

_WORKER = llamacpp_run.binding_script(r'''
def cparams(c, mtp, other=None):
    cp = llama_cpp.llama_context_default_params()
    cp.n_ctx, cp.n_batch, cp.n_ubatch, cp.n_seq_max = c["n_ctx"], 2048, 512, c["n_seq"]
    cp.n_threads = cp.n_threads_batch = 1
    cp.flash_attn_type = c["fa"]
    cp.kv_unified = c["kvu"]
    cp.n_outputs_max, cp.n_outputs_max_per_seq = c["n_seq"], 1
    if mtp:
        cp.type_k = cp.type_v = c["type_id"]
        cp.ctx_type = llama_cpp.LLAMA_CONTEXT_TYPE_MTP
        cp.n_rs_seq = 0
        cp.ctx_other = other
    return cp
for i, c in enumerate(contexts):
    os.write(2, f"@@MAIN {i}\n".encode())
    ctx = llama_cpp.llama_init_from_model(model, cparams(c, False))
    os.write(2, f"@@MTP {i}\n".encode())
    d = llama_cpp.llama_init_from_model(model, cparams(c, True, ctx))
    os.write(2, f"@@END {i} {bool(d)}\n".encode())
    llama_cpp.llama_free(d)
    llama_cpp.llama_free(ctx)
''', {'load_mode': '1', 'lazy_mode': '0', 'load_mtp': 'load_mtp'})
_TYPE_IDS = {"f16": 1, "q8_0": 8}


def _mib(pattern: str, text: str) -> float:
    return round(sum(float(x) for x in re.findall(pattern + r"\s*=\s*([0-9.]+) MiB", text)), 2)


def measure_mtp(path, grid: list[dict], load_mtp: bool = True) -> tuple[float, list[dict]]:
    """llama.cpp's model buffer (the next-n block loaded unless load_mtp is False) and, per setting, the MTP
    context's KV, compute and output buffers (MiB as printed)."""
    contexts = [{**c, "type_id": _TYPE_IDS[c["type"]]} for c in grid]
    log = llamacpp_run.run_binding_script(_WORKER, path, contexts, load_mtp)
    model = _mib(r"CPU_Mapped model buffer size", log)
    out = []
    for i in range(len(grid)):
        part = llamacpp_run.context_log(log, i, start="@@MTP")
        out.append({"kv": _mib(r"KV buffer size", part), "compute": _mib(r"compute buffer size", part),
                    "output": _mib(r"output buffer size", part),
                    "layers": [int(x) for x in re.findall(r"cells,\s*(\d+) layers", part)]})
    return model, out


def predicted(path, c: dict) -> dict:
    """oomkit's estimate of llama-server with --spec-type draft-mtp on the CPU: the model buffer and the MTP
    context's lines (engine_view mtp_*)."""
    est = oomkit.estimate(str(path), "llama.cpp", devices=(), find_max_context=False, fit=False, n_ctx=c["n_ctx"],
                          n_parallel=c["n_seq"], kv_unified=c["kvu"], flash_attn="on" if c["fa"] else "off",
                          cache_type_k_draft=c["type"], cache_type_v_draft=c["type"], spec_type=("draft-mtp",))
    v = est.engine_view
    return {"model": round(v["model_buffer_bytes"]["CPU_Mapped"] / MiB, 2),
            "kv": round(sum(v["mtp_kv_buffer_bytes"].values()) / MiB, 2),
            "compute": sum(v["mtp_compute_buffer_bytes"].values()) / MiB,
            "output": round(v["mtp_output_buffer_bytes"] / MiB, 2),
            "layers": [c["layers"] for c in v["mtp_kv_caches"]]}


# GLM-4.5-Air (2 trunk layers + its MTP block) and Qwen3.5-MoE's hybrid (4 trunk layers + an appended block):
# each setting's compute is held to 10% unless listed as a known miss with the measured figures
GRID = [dict(n_ctx=4096, n_seq=1, kvu=True, fa=1, type="f16"), dict(n_ctx=16384, n_seq=1, kvu=True, fa=1, type="f16"),
        dict(n_ctx=4096, n_seq=1, kvu=True, fa=0, type="f16"), dict(n_ctx=8192, n_seq=2, kvu=True, fa=1, type="q8_0"),
        dict(n_ctx=8192, n_seq=2, kvu=False, fa=1, type="f16")]
MODELS = {"glm4moe": lambda: ggufs.glm45_air(2),
          "qwen35moe": lambda: ggufs.with_nextn(ggufs.qwen_hybrid_moe("qwen35moe"), 3, 5120),
          "deepseek4": ggufs.NEXTN_VARIANTS["deepseek4"]}
# (model, grid index): oomkit / llama.cpp compute, measured, where not within 10%. None: GLM-4.5-Air's MTP block
# (compute.MTP_BLOCK_ROWS) is 0.99-1.01 of llama.cpp's (150.00 / 154.00 / 852.00 / 146.00 / 150.00 against 150.01 /
# 154.01 / 844.01 / 146.84 / 150.01 MiB; 170.00 at every flash-attention row before)
COMPUTE_MISSES: dict[tuple[str, int], str] = {}


@pytest.fixture(scope="module", params=sorted(MODELS))
def mtp_measured(request):
    if not llamacpp_run.available():
        pytest.skip("llama-cpp-python is not installed")
    path = synth.synth_path(MODELS[request.param](), "q4_0")
    return request.param, path, measure_mtp(path, GRID)


def test_mtp_weights_and_context_buffers_equal_llama_cpps(mtp_measured):
    """load_mtp puts the whole next-n block in the model buffer; the MTP context caches the next-n layer alone (one
    layer, the target's n_ctx cells, -ctkd / -ctvd; on DeepSeek-V4 its K and V rows at every cell, none of the main
    context's windowed or compressed caches), no recurrent state on the hybrid, and reserves the output buffer of
    n_parallel rows."""
    arch, path, (model, rows) = mtp_measured
    for c, m in zip(GRID, rows, strict=True):
        p = predicted(path, c)
        assert p["model"] == model, (arch, c)
        assert (p["kv"], p["output"], p["layers"]) == (m["kv"], m["output"], m["layers"]), (arch, c, p, m)
        assert m["layers"][-1] == 1 and sum(m["layers"]) == 1  # the next-n layer alone (DeepSeek-V4: an empty pair first)


def test_mtp_compute_within_ten_percent(mtp_measured):
    arch, path, (_, rows) = mtp_measured
    for i, (c, m) in enumerate(zip(GRID, rows, strict=True)):
        ratio = predicted(path, c)["compute"] / m["compute"]
        if (arch, i) in COMPUTE_MISSES:
            assert not 0.9 <= ratio <= 1.1, f"known miss now within 10%: {arch} {c} {ratio:.3f}"
            continue
        assert 0.9 <= ratio <= 1.1, (arch, c, ratio, m["compute"])


def test_mtp_weights_stay_out_without_the_flag():
    """Without draft-mtp the loader skips the block (TENSOR_SKIP; llama.cpp prints "model has unused tensor
    blk.2.nextn..."): a smaller model buffer and no MTP context lines."""
    path = synth.synth_path(ggufs.glm45_air(2), "q4_0")
    kw = dict(devices=(), find_max_context=False, fit=False, n_ctx=4096, n_parallel=1)
    on = oomkit.estimate(str(path), "llama.cpp", spec_type=("draft-mtp",), **kw)
    off = oomkit.estimate(str(path), "llama.cpp", **kw)
    assert on.engine_view["model_buffer_bytes"]["CPU_Mapped"] > off.engine_view["model_buffer_bytes"]["CPU_Mapped"]
    assert "mtp_n_ctx" not in off.engine_view and on.engine_view["mtp_n_ctx"] == 4096
    assert on.kv_cache_bytes == off.kv_cache_bytes + sum(on.engine_view["mtp_kv_buffer_bytes"].values())


def test_mtp_context_follows_the_next_n_layers_device():
    """llama_kv_cache puts each layer's K and V on its layer's device (model.dev_layer(il)), the next-n layer's
    included; -nkvo keeps them on the host. The next-n block is the last layer, so with two GPUs it is on the
    second; with -ngl 2 (the output layer, then the last layer) it stays on the GPU while the trunk is on the CPU."""
    path = _glm()
    devs = (_gpu(24000), replace(_gpu(24000), id="CUDA1"))
    kw = dict(devices=devs, find_max_context=False, fit=False, n_ctx=4096, n_parallel=1, spec_type=("draft-mtp",))
    est = oomkit.estimate(path, "llama.cpp", **kw)
    kv = 4096 * 8 * 128 * 2 * 2  # one layer of 8 KV heads of 128, K and V in f16
    assert est.layers[-1].device == "CUDA1" and est.engine_view["mtp_kv_buffer_bytes"] == {"CUDA1": kv}
    assert "CUDA1" in est.engine_view["mtp_compute_buffer_bytes"]
    part = oomkit.estimate(path, "llama.cpp", n_gpu_layers=2, **kw)
    assert [la.device for la in part.layers] == ["CPU", "CPU", "CUDA0"]
    assert part.engine_view["mtp_kv_buffer_bytes"] == {"CUDA0": kv}
    host = oomkit.estimate(path, "llama.cpp", no_kv_offload=True, **kw)
    assert host.engine_view["mtp_kv_buffer_bytes"] == {"CPU": kv}


def test_mtp_cache_held_every_layer_before_the_filter():
    """PR #28630 (issue #28626, b10820: glm4moe "allocating KV cache space for all layers instead of only NextN
    layers"; its table: 786432 B with a 2-layer trunk, 2359296 B with 8, 262144 B after the fix, i.e. trunk + 1
    layers before and one after): before it the MTP context caches all three layers of this 2-layer-trunk file,
    after it the next-n layer alone (measured above on the binding's build, which has the filter)."""
    path = _glm()
    kw = dict(devices=(), find_max_context=False, fit=False, n_ctx=4096, n_parallel=1, spec_type=("draft-mtp",))
    old = oomkit.estimate(path, "llama.cpp", engine_version="b9500", **kw).engine_view
    new = oomkit.estimate(path, "llama.cpp", **kw).engine_view
    assert [c["layers"] for c in old["mtp_kv_caches"]] == [3] and [c["layers"] for c in new["mtp_kv_caches"]] == [1]
    assert old["mtp_kv_buffer_bytes"]["CPU"] == 3 * new["mtp_kv_buffer_bytes"]["CPU"]
    # the graph runs the next-n block alone either way: the same compute buffer
    assert old["mtp_compute_buffer_bytes"] == new["mtp_compute_buffer_bytes"]


# Files with an appended next-n block whose loaders skip it unless load_mtp (model.archs.NEXTN_SKIPPED)
SKIPPING = {"qwen35": lambda: ggufs.with_nextn(synth.qwen35_27b(n_layers=4), 3, 5120),
            "qwen35moe": MODELS["qwen35moe"],
            "qwen3next": lambda: ggufs.with_nextn(ggufs.qwen_hybrid_moe("qwen3next"), 3, 5120),
            "deepseek32": lambda: ggufs.deepseek32_dsa(3, "deepseek32", nextn=1)}


@pytest.mark.parametrize("arch", sorted(SKIPPING))
def test_next_n_block_loaded_only_for_mtp(arch):
    """Without draft-mtp these loaders mark the block TENSOR_SKIP ("model has unused tensor blk.N.nextn...
    -- ignoring"); with it the block is in the model buffer. Both equal llama.cpp's CPU_Mapped buffer."""
    if not llamacpp_run.available():
        pytest.skip("llama-cpp-python is not installed")
    path = synth.synth_path(SKIPPING[arch](), "q4_0")
    kw = dict(devices=(), find_max_context=False, fit=False, n_ctx=4096, n_parallel=1, repack=False)
    for load in (False, True):
        got = oomkit.estimate(str(path), "llama.cpp", spec_type=("draft-mtp",) if load else (), **kw)
        assert round(got.engine_view["model_buffer_bytes"]["CPU_Mapped"] / MiB, 2) == \
            measure_mtp(path, [], load_mtp=load)[0], (arch, load)


# ---------------------------------------------------------------------------------------------------------
# Builds, programs and refusals


def _glm():
    return str(synth.synth_path(ggufs.glm45_air(2), "q4_0"))


def test_mtp_refused_before_its_build_and_without_a_next_n_block(tmp_path):
    """PR #22673 (first in b9180): older builds know no draft-mtp type; a model without next-n layers cannot make
    the MTP context ("failed to create MTP context"), nor one whose architecture has no MTP graph."""
    kw = dict(devices=(), find_max_context=False, fit=False, n_ctx=4096, spec_type=("draft-mtp",))
    with pytest.raises(SettingsError, match="b9180"):
        oomkit.estimate(_glm(), "llama.cpp", engine_version="b9100", **kw)
    oomkit.estimate(_glm(), "llama.cpp", engine_version="b9180", **kw)
    plain = ggufs.write_llama_gguf(tmp_path / "plain.gguf", n_layers=2)
    with pytest.raises(SettingsError, match="no next-n"):
        oomkit.estimate(str(plain), "llama.cpp", **kw)
    g5 = synth.synth_path(ggufs.NEXTN_VARIANTS["glm5-next"](), "q4_0")
    with pytest.raises(SettingsError, match="no MTP graph"):
        oomkit.estimate(str(g5), "llama.cpp", **kw)


def test_spec_type_names_are_llama_cpps():
    _, _, s = parse_args(["-m", "x.gguf", "--spec-type", "draft-mtp"])
    assert s.spec_type == ("draft-mtp",)
    with pytest.raises(OomkitError, match="unknown speculative decoding type: mtp"):
        parse_args(["-m", "x.gguf", "--spec-type", "mtp"])


def test_mtp_context_only_without_a_draft_model_and_in_the_server(tmp_path):
    """common_speculative_init_result: with -md the draft model drafts (the target still loads its next-n block);
    llama-server and llama-cli make the MTP context, the other programs none."""
    draft = ggufs.write_llama_gguf(tmp_path / "d.gguf", n_layers=2)
    kw = dict(devices=(), find_max_context=False, fit=False, n_ctx=4096, spec_type=("draft-mtp",))
    with_md = oomkit.estimate(_glm(), "llama.cpp", model_draft=str(draft), **kw)
    assert "mtp_n_ctx" not in with_md.engine_view
    alone = oomkit.estimate(_glm(), "llama.cpp", **kw)
    assert (with_md.engine_view["model_buffer_bytes"]["CPU_Mapped"]
            == alone.engine_view["model_buffer_bytes"]["CPU_Mapped"])
    assert "mtp_n_ctx" not in oomkit.estimate(_glm(), "llama.cpp", program="llama-perplexity", **kw).engine_view


# ---------------------------------------------------------------------------------------------------------
# --fit with the MTP context


def _gpu(free_mib: int) -> Device:
    return Device(id="CUDA0", name="RTX 3090", memory_bytes=free_mib * MiB, free_bytes=free_mib * MiB)


def _mtp_rows(spec, devs, s, n_ctx) -> int:
    return sum(c + k for c, k in mtp_dry_run(spec, devs, s, n_ctx)[: len(devs)])


def test_fit_counts_the_mtp_context_beside_the_main_model():
    """common_fit_extra_model with shares_model (the newest source): every dry run adds the MTP context's context and
    compute rows at the candidate context, not its weights (the next-n block is in the main dry run: load_mtp)."""
    spec = read_gguf_spec(_glm())
    free = 5990  # MiB: the trained context fits the target alone, not beside the MTP context (4972 MiB + the margin)
    devs = (_gpu(free),)
    s = LlamaCppSettings(n_parallel=1, spec_type=("draft-mtp",))
    r = params_fit(spec, devs, s)
    full = dry_run(spec, devs, replace(s, n_ctx=0))[0].total + _mtp_rows(spec, devs, s, 0)
    assert r.lines[0] == f"projected to use {full // MiB} MiB of device memory vs. {free} MiB of free device memory"
    low = dry_run(spec, devs, replace(s, n_ctx=4096))[0].total + _mtp_rows(spec, devs, s, 4096)
    n_train = resolve_context(spec, replace(s, n_ctx=0)).n_ctx
    expect = 4096 + (n_train - 4096) * (free * MiB - 1024 * MiB - low) // (full - low)
    expect -= expect % 256
    assert r.status == "fitted" and r.n_ctx == expect
    assert r.draft[0] == _mtp_rows(spec, devs, s, expect)
    # without the MTP context and the next-n block the trained context fits as it is
    assert params_fit(spec, devs, replace(s, spec_type=())).status == "unchanged"
    # the estimate loads the fitted context, its MTP context at the same n_ctx, and shows what the fit counted
    est = oomkit.estimate(_glm(), "llama.cpp", devices=devs, find_max_context=False, n_parallel=1,
                          spec_type=("draft-mtp",))
    v = est.engine_view
    assert v["n_ctx"] == v["mtp_n_ctx"] == expect and v["fit_draft_bytes"]["CUDA0"] == r.draft[0]


def test_fit_margin_for_the_mtp_context_from_b9305():
    """The margin era (PR #23485, b9305 up to the extra-model fit): llama-server dry-runs the MTP context at the
    command's -c and adds it to the target ("[spec] estimated memory usage of MTP context is X MiB"); builds from
    b9180 to b9304 count only the next-n weights."""
    spec = read_gguf_spec(_glm())
    devs = (_gpu(24000),)
    s = LlamaCppSettings(n_ctx=8192, n_parallel=1, spec_type=("draft-mtp",), engine_version="b9400")
    mtp = _mtp_rows(spec, devs, s, 8192)
    r = params_fit(spec, devs, s)
    assert r.margins[0] == 1024 * MiB + mtp and r.draft[0] == mtp
    assert r.lines[0] == f"[spec] estimated memory usage of MTP context is {mtp / MiB:.2f} MiB"
    early = params_fit(spec, devs, replace(s, engine_version="b9200"))
    assert early.margins[0] == 1024 * MiB and not early.draft


# ---------------------------------------------------------------------------------------------------------
# A draft model on devices of its own (-devd): common_base_params_to_speculative gives the draft -devd as its device
# list (else the main command's -dev, else every device), its own -ngld, -sm layer when one device is named, and the
# main command's -ts; the margin block (PR #23485) and add_extra_memory (the newest source) count each of its device
# rows on the main model's device of the same name and no other. The draft's own figures are oomkit's -fit off
# estimate of the draft file on its devices, as in tests/test_llamacpp_fit.py.

LLAMA8 = "meta-llama/Llama-3.1-8B-Instruct"


def _gpus(*free_mib: int) -> tuple[Device, ...]:
    return tuple(Device(id=f"CUDA{i}", name="RTX 3090", memory_bytes=f * MiB, free_bytes=f * MiB)
                 for i, f in enumerate(free_mib))


def _draft_file(tmp_path):
    return ggufs.write_llama_gguf(tmp_path / "draft.gguf", n_layers=2)


def _own(path, devices, **kw) -> dict[str, int]:
    """The draft's buffers per device (weights + KV + compute) and on the host, with -fit off on its devices."""
    est = oomkit.estimate(str(path), "llama.cpp", devices=devices, find_max_context=False, fit=False, **kw)
    return {u.id: u.total_bytes - u.overhead_bytes for u in (*est.devices, est.host)}


def test_draft_device_list_and_split_follow_the_source():
    from oomkit.engines.llamacpp.fit import read_draft

    path = synth.synth_path(ggufs.glm45_air(2), "q4_0")
    s = LlamaCppSettings(model_draft=str(path), tensor_split=(3.0, 1.0), split_mode="row")
    _, ds = read_draft(s)
    assert (ds.device, ds.tensor_split, ds.split_mode) == ((), (3.0, 1.0), "row")  # every device, the main -ts
    _, ds = read_draft(replace(s, device=("CUDA0", "CUDA1")))
    assert ds.device == ("CUDA0", "CUDA1")  # "default to global devices value"
    _, ds = read_draft(replace(s, device_draft=("CUDA1",)))
    assert (ds.device, ds.tensor_split, ds.split_mode) == (("CUDA1",), (3.0,), "layer")  # one device: -sm layer


def test_draft_on_a_device_the_main_model_does_not_use(tmp_path):
    """-dev CUDA0 -devd CUDA1: the main model's device keeps its own buffers, the draft's weights, cache and compute
    land on CUDA1 with that device's driver context."""
    md = _draft_file(tmp_path)
    devs = _gpus(16000, 8000)
    kw = dict(quant="Q4_K_M", devices=devs, find_max_context=False, n_parallel=1, fit=False, n_ctx=8192)
    base = oomkit.estimate(LLAMA8, "llama.cpp", device=("CUDA0",), **kw)
    est = oomkit.estimate(LLAMA8, "llama.cpp", device=("CUDA0",), model_draft=str(md), device_draft=("CUDA1",), **kw)
    own = _own(md, devs[1:], n_ctx=8192, n_parallel=1)
    assert [u.id for u in est.devices] == ["CUDA0", "CUDA1"] and est.engine_view["draft_devices"] == ["CUDA1"]
    assert est.devices[0].total_bytes == base.devices[0].total_bytes
    assert est.devices[1].total_bytes - est.devices[1].overhead_bytes == own["CUDA1"]
    assert est.host.total_bytes - base.host.total_bytes == own["CPU"]


def test_draft_split_over_its_own_devices(tmp_path):
    """Two GPUs for the main model, -devd CUDA1: the draft lies on CUDA1 alone; -devd CUDA0,CUDA1 with -dev CUDA0:
    the draft splits over both by free memory, CUDA1 joining the estimate."""
    md = _draft_file(tmp_path)
    devs = _gpus(16000, 8000)
    kw = dict(quant="Q4_K_M", devices=devs, find_max_context=False, n_parallel=1, fit=False, n_ctx=8192)
    base = oomkit.estimate(LLAMA8, "llama.cpp", **kw)
    est = oomkit.estimate(LLAMA8, "llama.cpp", model_draft=str(md), device_draft=("CUDA1",), **kw)
    own = _own(md, devs[1:], n_ctx=8192, n_parallel=1)
    assert est.devices[0].total_bytes == base.devices[0].total_bytes
    assert est.devices[1].total_bytes - base.devices[1].total_bytes == own["CUDA1"]
    both = oomkit.estimate(LLAMA8, "llama.cpp", device=("CUDA0",), model_draft=str(md),
                           device_draft=("CUDA0", "CUDA1"), **kw)
    alone = oomkit.estimate(LLAMA8, "llama.cpp", device=("CUDA0",), **kw)
    split = _own(md, devs, n_ctx=8192, n_parallel=1)
    assert split["CUDA0"] > 0 and split["CUDA1"] > 0
    assert both.devices[0].total_bytes - alone.devices[0].total_bytes == split["CUDA0"]
    assert both.devices[1].total_bytes - both.devices[1].overhead_bytes == split["CUDA1"]
    # -devd none: the draft on the CPU
    cpu = oomkit.estimate(LLAMA8, "llama.cpp", model_draft=str(md), device_draft=("none",), **kw)
    assert [u.total_bytes for u in cpu.devices] == [u.total_bytes for u in base.devices]
    assert cpu.host.total_bytes - base.host.total_bytes == _own(md, (), n_ctx=8192, n_parallel=1)["CPU"]


def test_fit_margin_counts_only_the_draft_rows_on_the_main_devices(tmp_path):
    """The margin block (PR #23485, b9305): the draft's dry run on its own devices; each row adds to the target of
    the main device of the same name (tgt_devices[i] == devs[j]), the logged total sums all of them."""
    md = _draft_file(tmp_path)
    devs = _gpus(24000, 24000)
    spec = oomkit.request.resolve_model(oomkit.engines.base.get_engine("llama.cpp"), LLAMA8, "Q4_K_M")
    s = LlamaCppSettings(n_ctx=8192, n_parallel=1, model_draft=str(md), device_draft=("CUDA1",),
                         engine_version="b9400")
    own = _own(md, devs[1:], n_ctx=8192, n_parallel=1, engine_version="b9400")["CUDA1"]
    r = params_fit(spec, devs, s, given=devs)
    assert r.margins == (1024 * MiB, 1024 * MiB + own)
    assert r.lines[0] == f"[spec] estimated memory usage of draft model is {own / MiB:.2f} MiB"
    # -dev CUDA0: the draft's CUDA1 row matches no main device; the total is still logged
    r = params_fit(spec, devs[:1], replace(s, device=("CUDA0",)), given=devs)
    assert r.margins == (1024 * MiB,) and r.lines[0].endswith(f"{own / MiB:.2f} MiB")


def test_fit_beside_the_main_model_drops_rows_off_its_devices(tmp_path):
    """add_extra_memory (the newest source): the extra model's rows on devices outside the main model's list are
    dropped, so a draft on a GPU of its own changes nothing of the main fit; one sharing CUDA0 counts its part."""
    md = _draft_file(tmp_path)
    devs = _gpus(9000, 9000)
    spec = oomkit.request.resolve_model(oomkit.engines.base.get_engine("llama.cpp"), LLAMA8, "Q4_K_M")
    s = LlamaCppSettings(n_parallel=1, device=("CUDA0",))
    alone = params_fit(spec, devs[:1], s, given=devs)
    apart = params_fit(spec, devs[:1], replace(s, model_draft=str(md), device_draft=("CUDA1",)), given=devs)
    assert alone.status == apart.status == "fitted" and apart.n_ctx == alone.n_ctx and apart.draft[0] == 0
    shared = params_fit(spec, devs[:1], replace(s, model_draft=str(md), device_draft=("CUDA0", "CUDA1")), given=devs)
    part = _own(md, devs, n_ctx=shared.settings.n_ctx, n_parallel=1)["CUDA0"]
    assert shared.draft[0] == part > 0 and shared.n_ctx < alone.n_ctx


def test_draft_expert_overrides_are_its_own(tmp_path):
    """-otd / -cmoed / -ncmoed fill params.speculative.draft.tensor_buft_overrides, which the draft loads with
    (result.tensor_buft_overrides = params_spec.tensor_buft_overrides); the main command's -cmoe is not the draft's."""
    from oomkit.engines.llamacpp.args import format_command
    from oomkit.engines.llamacpp.fit import read_draft

    md = _glm()  # a MoE draft: GLM-4.5-Air's shape cut to two layers
    _, _, s = parse_args(["-m", "x.gguf", "-md", md, "-cmoed", "--spec-draft-n-cpu-moe", "1", "-otd", "exps=CPU",
                          "-cmoe"])
    assert (s.cpu_moe_draft, s.n_cpu_moe_draft, s.override_tensor_draft, s.cpu_moe) == (True, 1, (("exps", "CPU"),),
                                                                                       True)
    cmd = format_command("x.gguf", s)
    assert "-otd" in cmd and "--cpu-moe-draft" in cmd and parse_args(cmd[1:])[2] == s  # written back as read
    _, ds = read_draft(s)
    assert (ds.cpu_moe, ds.n_cpu_moe, ds.override_tensor) == (True, 1, (("exps", "CPU"),))
    devs = _gpus(24000)
    kw = dict(quant="Q4_K_M", devices=devs, find_max_context=False, n_parallel=1, fit=False, n_ctx=4096)
    base = oomkit.estimate(LLAMA8, "llama.cpp", **kw)
    est = oomkit.estimate(LLAMA8, "llama.cpp", model_draft=md, cpu_moe_draft=True, **kw)
    own = _own(md, devs, n_ctx=4096, n_parallel=1, cpu_moe=True)
    assert est.devices[0].total_bytes - base.devices[0].total_bytes == own["CUDA0"]
    assert est.host.total_bytes - base.host.total_bytes == own["CPU"]
    assert own["CPU"] > _own(md, devs, n_ctx=4096, n_parallel=1)["CPU"]  # the experts moved to the host
