"""llama.cpp's --fit (common/fit.cpp common_params_fit_impl), held against the rules of its source and the
public logs that print its decisions.

The expected figures come from outside the fit code: oomkit's own estimate of the same command with -fit off
(whose buffers are checked against llama.cpp in test_groundtruth_llamacpp.py and test_llamacpp_logs.py) plays
llama.cpp's dry runs, and the decision rules are the source's (each test names the step); the logs are cited.
"""

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

import oomkit
from oomkit.engines.base import get_engine
from oomkit.engines.llamacpp.fit import MOE_ALL, params_fit
from oomkit.engines.llamacpp.settings import LlamaCppSettings
from oomkit.memory import Device
from oomkit.request import resolve_model

MiB = 1 << 20
GiB = 1 << 30
LLAMA8 = "meta-llama/Llama-3.1-8B-Instruct"
FIXTURES = Path(__file__).parent / "fixtures" / "engine_logs" / "llamacpp_fit"


def gpu(i: int, free_mib: int, total_mib: int | None = None) -> Device:
    return Device(id=f"CUDA{i}", name="RTX 3090", memory_bytes=(total_mib or free_mib) * MiB, free_bytes=free_mib * MiB)


def spec_of(model: str, quant: str = "Q4_K_M"):
    return resolve_model(get_engine("llama.cpp"), model, quant)


def self_bytes(model, devices, **kw) -> list[int]:
    """What llama.cpp's dry run reports per device (model + context + compute) for the command as given."""
    est = oomkit.estimate(model, "llama.cpp", quant="Q4_K_M", devices=devices, find_max_context=False, fit=False,
                          **kw)
    return [u.weights_bytes + u.kv_cache_bytes + u.recurrent_state_bytes + u.compute_bytes for u in est.devices]


def test_no_change_when_every_device_keeps_its_margin():
    """Step 1: "will leave N >= 1024 MiB of free device memory, no changes needed" (llama.cpp PR #21489's demo
    log prints the same pair of lines for a model that fits)."""
    devs = (gpu(0, 40000),)
    r = params_fit(spec_of(LLAMA8), devs, LlamaCppSettings(n_ctx=8192))
    assert r.status == "unchanged" and r.settings == LlamaCppSettings(n_ctx=8192)
    used = self_bytes(LLAMA8, devs, n_ctx=8192)[0]
    assert r.lines == (f"projected to use {used // MiB} MiB of device memory vs. 40000 MiB of free device memory",
                       f"will leave {(40000 * MiB - used) // MiB} >= 1024 MiB of free device memory, no changes needed")


def test_context_is_the_straight_line_between_the_trained_and_the_least_context():
    """Step 2 (no -c): a dry run at the trained context and one at -fitc (4096); the context where the straight
    line between them meets free - margin, rounded down to a multiple of 256; one device: done."""
    devs = (gpu(0, 12000),)
    spec = spec_of(LLAMA8)
    full, low = self_bytes(LLAMA8, devs)[0], self_bytes(LLAMA8, devs, n_ctx=4096)[0]
    target = 12000 * MiB - 1024 * MiB
    expect = 4096 + (131072 - 4096) * (target - low) // (full - low)
    expect -= expect % 256
    r = params_fit(spec, devs, LlamaCppSettings())
    assert r.status == "fitted" and r.n_ctx == r.settings.n_ctx == expect
    assert r.lines[-2].startswith(f"context size reduced from 131072 to {expect} -> need ")
    assert r.lines[-1] == "entire model can be fit by reducing context"
    assert r.settings.n_gpu_layers == -1  # layers untouched
    # the fitted command leaves at least the margin (the KV cache is linear in the context)
    assert self_bytes(LLAMA8, devs, n_ctx=expect)[0] <= target


def test_fit_target_and_fit_ctx_are_honoured():
    devs = (gpu(0, 12000),)
    spec = spec_of(LLAMA8)
    a = params_fit(spec, devs, LlamaCppSettings(fit_target=(4096,)))
    b = params_fit(spec, devs, LlamaCppSettings())
    assert a.n_ctx < b.n_ctx and a.n_ctx % 256 == 0
    assert self_bytes(LLAMA8, devs, n_ctx=a.n_ctx)[0] <= (12000 - 4096) * MiB
    # a minimum above the trained context: "default model context size is ... <= the min. context size"
    c = params_fit(spec, devs, LlamaCppSettings(fit_ctx=200000))
    assert "default model context size is 131072 which is <= the min. context size of 200000 -> no change" in c.lines


def test_typed_context_is_kept_and_layers_move_instead():
    """-c typed: "context size set by user to N -> no change"; the dense layers are then filled back to front:
    the most layers whose dry run stays within free - margin (false position ends one layer short of the
    first count that does not fit)."""
    devs = (gpu(0, 8000),)
    spec = spec_of(LLAMA8)
    r = params_fit(spec, devs, LlamaCppSettings(n_ctx=65536))
    assert "context size set by user to 65536 -> no change" in r.lines
    assert r.status == "fitted" and r.settings.n_ctx == 65536
    ngl = r.n_gpu_layers
    assert 0 < ngl < 33 and r.layers_per_device == (ngl,) and r.overrides == ()
    target = (8000 - 1024) * MiB
    assert self_bytes(LLAMA8, devs, n_ctx=65536, n_gpu_layers=ngl)[0] <= target
    assert self_bytes(LLAMA8, devs, n_ctx=65536, n_gpu_layers=ngl + 1)[0] > target


def test_typed_gpu_layers_stop_the_fit_after_the_context():
    """-ngl typed: the context step still runs, then "n_gpu_layers already set by user to N, abort" and the
    load goes on with what was changed (common_fit_params returns FAILURE; the context stays reduced)."""
    r = params_fit(spec_of(LLAMA8), (gpu(0, 6000),), LlamaCppSettings(n_gpu_layers=99))
    assert r.status == "failed" and r.lines[-1].endswith("n_gpu_layers already set by user to 99, abort")
    assert r.settings.n_ctx == 4096 and r.settings.n_gpu_layers == 99


@pytest.mark.parametrize("kw,why", [
    (dict(tensor_split=(1.0, 1.0)), "model_params::tensor_split already set by user, abort"),
    (dict(split_mode="row"), "changing weight allocation for LLAMA_SPLIT_MODE_ROW not implemented, abort"),
    (dict(override_tensor=(("exps", "CPU"),)), "model_params::tensor_buft_overrides already set by user, abort"),
])
def test_refusals(kw, why):
    r = params_fit(spec_of(LLAMA8), (gpu(0, 3000), gpu(1, 3000)), LlamaCppSettings(n_ctx=8192, **kw))
    assert r.status == "failed" and r.lines[-1].endswith(why)


def test_two_devices_back_to_front():
    """Several devices: the last (with the output layer) is filled first, then the one before; -ts is written in
    layers per device and -ngl is their sum."""
    devs = (gpu(0, 4000), gpu(1, 4000))
    r = params_fit(spec_of(LLAMA8), devs, LlamaCppSettings(n_ctx=32768))
    assert r.status == "fitted"
    n0, n1 = r.layers_per_device
    assert r.settings.tensor_split == (float(n0), float(n1)) and r.n_gpu_layers == n0 + n1 < 33
    target = (4000 - 1024) * MiB
    used = self_bytes(LLAMA8, devs, n_ctx=32768, n_gpu_layers=n0 + n1, tensor_split=(n0, n1))
    assert all(u <= target for u in used)
    # the last device (it holds the output layer) was filled first: one more layer there does not fit
    assert self_bytes(LLAMA8, devs, n_ctx=32768, n_gpu_layers=n0 + n1 + 1, tensor_split=(n0, n1 + 1))[1] > target


def test_moe_experts_go_to_the_cpu_first():
    """A MoE model: first a dry run with every expert tensor on the CPU (pattern_moe_all), then dense-only layers
    that become full layers front to back; the overrides are the source's patterns, one per overflowing layer."""
    spec = spec_of("openai/gpt-oss-20b", "MXFP4_MOE")
    r = params_fit(spec, (gpu(0, 9000),), LlamaCppSettings(n_ctx=32768))
    assert any(line.startswith("with only dense weights in device memory there is a total surplus of")
               for line in r.lines)
    assert r.status == "fitted" and r.overrides
    pats = [p for p, _ in r.overrides]
    layers = [int(re.match(r"blk\\\.(\d+)\\\.", p).group(1)) for p in pats]
    assert layers == sorted(layers) and len(set(layers)) == len(layers)
    # all but possibly the first overflowing layer move their experts to the CPU with pattern_moe_all's form
    for p, b in r.overrides[1:]:
        assert re.fullmatch(r"blk\\\.\d+\\\.ffn_\(up\|down\|gate_up\|gate\)_\(ch\|\)exps", p) and b == "CPU"
    est = oomkit.estimate("openai/gpt-oss-20b", "llama.cpp", quant="MXFP4_MOE", devices=(gpu(0, 9000),),
                          find_max_context=False, n_ctx=32768, fit=False, override_tensor=r.overrides)
    u = est.devices[0]
    assert u.weights_bytes + u.kv_cache_bytes + u.compute_bytes <= (9000 - 1024) * MiB
    assert MOE_ALL == r"blk\.\d+\.ffn_(up|down|gate_up|gate)_(ch|)exps"


def test_engine_view_and_eras():
    """The estimate is the layout --fit loads: its n_ctx and buffers are the main keys, the command as typed is
    under typed_*, the decision under fit_*. Builds before --fit (PR #16653), -fit off and programs not built on
    common load as typed."""
    est = oomkit.estimate(LLAMA8, "llama.cpp", quant="Q4_K_M", devices=(gpu(0, 12000),), find_max_context=False)
    v = est.engine_view
    assert v["fit"] == "fitted" and v["typed_n_ctx"] == 131072 and v["n_ctx"] == v["fit_n_ctx"] < 131072
    assert v["fit_log"].splitlines()[-1] == "entire model can be fit by reducing context"
    assert v["fit_target_bytes"] == {"CUDA0": 1024 * MiB}
    assert est.settings["n_ctx"] == v["n_ctx"] and est.fits and v["typed_fits"] is False
    assert f"reduces the context from 131072 to {v['n_ctx']}" in " ".join(est.warnings)
    # b6000 predates --fit and took common_params' -c 4096 when none was given (programs.COMMON_CTX_ERAS)
    for kw, n_ctx in ((dict(engine_version="b6000"), 4096), (dict(fit=False), 131072),
                      (dict(program="llama-cpp-python"), 131072)):
        e = oomkit.estimate(LLAMA8, "llama.cpp", quant="Q4_K_M", devices=(gpu(0, 12000),), find_max_context=False,
                            **kw)
        v = e.engine_view
        assert v["fit"].startswith("off") and "fit_n_ctx" not in v and "typed_n_ctx" not in v
        assert v["n_ctx"] == n_ctx and e.fits == (n_ctx == 4096)


def test_fit_that_changes_nothing_changes_nothing():
    """Where the command already leaves the target free, the estimate is the command's, with no typed_* keys."""
    on = oomkit.estimate(LLAMA8, "llama.cpp", quant="Q4_K_M", devices=(gpu(0, 23000),), find_max_context=False,
                         n_ctx=8192)
    off = oomkit.estimate(LLAMA8, "llama.cpp", quant="Q4_K_M", devices=(gpu(0, 23000),), find_max_context=False,
                          n_ctx=8192, fit=False)
    assert on.engine_view["fit"] == "unchanged" and "typed_n_ctx" not in on.engine_view
    assert on.devices == off.devices and on.engine_view["memory_breakdown"] == off.engine_view["memory_breakdown"]


def test_memory_breakdown_table_form():
    """common_memory_breakdown_print: total = free + (self = model + context + compute) + unaccounted per device,
    the host's self = model + context + compute; sizes in whole MiB (the form of llama.cpp PR #25465's log)."""
    est = oomkit.estimate(LLAMA8, "llama.cpp", quant="Q4_K_M", devices=(gpu(0, 23000, 24576),),
                          find_max_context=False, n_ctx=8192, fit=False)
    rows = est.engine_view["memory_breakdown"].splitlines()
    assert re.fullmatch(r"\| memory breakdown \[MiB\] \| total +free +self +model +context +compute +unaccounted \|",
                        rows[0])
    m = re.fullmatch(r"\|   - CUDA0 \(RTX 3090\) +\| (\d+) = +(\d+) \+ \( *(\d+) = +(\d+) \+ +(\d+) \+ +(\d+)\) \+ +(-?\d+) \|",
                     rows[1])
    total, free, self_, model, ctx, comp, unacc = map(int, m.groups())
    u = est.devices[0]
    assert (total, model, ctx, comp) == (24576, u.weights_bytes // MiB, (u.kv_cache_bytes + u.recurrent_state_bytes)
                                         // MiB, u.compute_bytes // MiB)
    assert abs(total - free - self_ - unacc) <= 1 and abs(self_ - model - ctx - comp) <= 2
    assert rows[2].startswith("|   - Host")


def test_false_position_step_follows_the_sources_integer_types():
    """common_params_fit_impl: `uint32_t step_size = int64_t(delta) * (target - mem) / (mem_high - mem)`, then
    max(step, 1) and min(step, delta - 1): C++ truncates the division toward zero, and a negative quotient (the
    lower bound already over its target) wraps to a huge uint32, so the step becomes delta - 1, not 1."""
    from oomkit.engines.llamacpp.fit import _step

    assert _step(41, 945, 19112) == 2  # 41 * 945 / 19112 = 2.03
    assert _step(10, 5, 10) == 5
    assert _step(10, 0, 10) == 1  # at least one layer
    assert _step(10, -5, 10) == 9  # wrapped: delta - 1
    assert _step(10, 100, 10) == 9  # at most delta - 1


def test_fitted_settings_estimate_the_layout_fit_loads():
    """layout.fitted_settings: the command --fit runs (with -fit off, so it is not fitted twice); estimating it
    gives the typed command's estimate, whose figures are the fitted layout's."""
    from oomkit.engines.llamacpp.layout import estimate, fitted_settings

    spec, devs = spec_of(LLAMA8), (gpu(0, 12000),)
    typed = estimate(spec, devs, LlamaCppSettings())
    fitted = fitted_settings(spec, devs, LlamaCppSettings())
    assert not fitted.fit and fitted.n_ctx == typed.engine_view["fit_n_ctx"]
    run = estimate(spec, devs, fitted)
    assert run.devices == typed.devices and run.host == typed.host
    for k in ("n_ctx", "kv_buffer_bytes", "model_buffer_bytes", "compute_buffer_bytes", "memory_breakdown"):
        assert run.engine_view[k] == typed.engine_view[k], k
    assert typed.engine_view["typed_n_ctx"] == 131072
    assert fitted_settings(spec, devs, LlamaCppSettings(fit=False)) == LlamaCppSettings(fit=False)


def test_the_table_prints_the_engines_blocks_as_its_log_does():
    """The memory breakdown table and the --fit lines are printed under their key, one indented row per log line,
    never wrapped, whatever their width."""
    from oomkit.report.render import table

    est = oomkit.estimate(LLAMA8, "llama.cpp", quant="Q4_K_M", devices=(gpu(0, 12000),), find_max_context=False)
    out = table(est).splitlines()
    for key in ("memory_breakdown", "typed_memory_breakdown", "fit_log"):
        i = out.index(f"  {key}:")
        rows = est.engine_view[key].splitlines()
        assert out[i + 1:i + 1 + len(rows)] == [f"    {r}" for r in rows]
    assert any(line.startswith("    |   - CUDA0 (") for line in out)


def test_the_vram_tables_hold_the_layout_as_typed():
    """The hard-limits table asks what fits on a card of each size with every layer on it: llama.cpp's --fit,
    which would move layers to the CPU to make any context "fit", is off there."""
    from oomkit.limits import Target, build_tables

    eng = get_engine("llama.cpp")
    spec = spec_of(LLAMA8)
    t = build_tables(eng, spec, eng.settings(n_parallel=1), (Target("6 GB", (gpu(0, 6144, 6144),)),),
                     kv_types=("f16",), contexts=(2048,))
    n = t.limits["6 GB"]["f16"]
    assert n is not None and n < 131072
    s = eng.settings(n_parallel=1, fit=False)
    assert eng.estimate(spec, (gpu(0, 6144, 6144),), eng.with_context(s, n)).fits
    assert not eng.estimate(spec, (gpu(0, 6144, 6144),), eng.with_context(s, n + 256)).fits


def test_ollamas_llama_server_is_fitted_by_the_same_rule():
    """Ollama's llama-server runner gets no -ngl and llama-server's --fit places the layers (common_params_fit_impl,
    the one implementation in llamacpp/fit.py): -ngl N leaves the 1024 MiB target free on the card, N + 1 would
    not. Checked on llama.cpp estimates of the command Ollama builds, -fit off."""
    est = oomkit.estimate("llama3.1:70b", "ollama", vram="16GiB", find_max_context=False)
    view = est.engine_view
    assert view["ollama_era"] == "D" and est.fits is False
    ngl = int(view["offloaded_layers"].split("/")[0])
    assert 0 < ngl < 81 and view["ollama_launch"].endswith(f"-ngl {ngl}")
    assert any(w.startswith(f"Ollama's llama-server (--fit) offloads {ngl} of 81 layers to the GPU")
               for w in est.warnings)
    spec = resolve_model(get_engine("ollama"), "llama3.1:70b")
    for n, ok in ((ngl, True), (ngl + 1, False)):
        s = LlamaCppSettings(n_ctx=4096, n_parallel=1, kv_unified=False, flash_attn="auto", n_batch=512,
                             n_ubatch=512, n_gpu_layers=n, fit=False)
        u = oomkit.estimate(spec, "llama.cpp", vram="16GiB", settings=s, find_max_context=False).devices[0]
        assert (u.total_bytes - u.overhead_bytes <= 16 * 1024 * MiB - 457 * MiB - 1024 * MiB) is ok, n


def test_experts_moved_to_the_cpu_are_a_split_not_a_fit():
    """gpt-oss-20b at 32K on 9000 MiB: the fit keeps every layer but moves expert tensors to the CPU
    (pattern_moe_all's form); the estimate is that layout, the devices within memory, yet not a fit on the GPU."""
    est = oomkit.estimate("openai/gpt-oss-20b", "llama.cpp", quant="MXFP4_MOE", devices=(gpu(0, 9000),),
                          find_max_context=False, n_ctx=32768)
    v = est.engine_view
    n = sum(1 for o in v["fit_override_tensor"].split(",") if o.endswith("=CPU"))
    assert v["fit"] == "fitted" and n > 0 and v["offloaded_layers"] == v["typed_offloaded_layers"]
    assert all(u.fits for u in est.devices) and est.fits is False and v["typed_fits"] is False
    note = est.warnings[0]
    assert f"moves the expert tensors of {n} layers to the CPU (-ot)" in note and "split with the CPU" in note
    assert "add -fit off to keep every tensor on the GPU (which does not fit)" in note


# ---------------------------------------------------------------------------------------------------------
# The newest rules (common/fit.cpp@08033df0), by build (fit.FIT_ERAS)


def _measured_host(path, n_ctx):
    """llama.cpp's own host figures (MiB as printed) on this CPU through the binding: the dry run the host fit
    weighs loads without a mapping (LLAMA_LOAD_MODE_NONE) and with the CPU's extra buffer types; the buffers are
    sized without being allocated (no_alloc), the model buffers read from an allocated load at a small context."""
    from tests import gt_compare as g

    kw = dict(n_seq_max=1, kv_unified=True, use_mmap=False, use_extra_bufts=True, flash_attn="on", type_k="f16",
              type_v="f16", n_batch=2048, n_ubatch=512, swa_full=False)
    loaded = g.llamacpp_run.measure(path, n_ctx=4096, no_alloc=False, **kw)
    sized = g.llamacpp_run.measure(path, n_ctx=n_ctx, no_alloc=True, **kw)
    assert loaded["ok"] and sized["ok"], (loaded["error"], sized["error"])
    kv = sum(c["k_mib"] + c["v_mib"] for c in sized["kv_caches"])
    return loaded["model_buffer_mib"], kv, sum(sized["compute_buffer_mib"].values())


HOST_S = LlamaCppSettings(program="llama-server", n_parallel=1, flash_attn="on", engine_version="b9000")


def _host_fit_expected(path, total_mib, margin_mib=1024):
    """The context common_params_fit_impl picks on a host of total_mib with no device, from llama.cpp's own
    figures on this CPU at -fitc (4096) and at the trained 131072: model (the CPU buffer; CPU_REPACK is no host
    buffer type), K + V, compute; the straight line between them, rounded down to a multiple of 256."""
    model_lo, kv_lo, comp_lo = _measured_host(path, 4096)
    _, kv_hi, comp_hi = _measured_host(path, 131072)
    used_hi = model_lo["CPU"] + kv_hi + comp_hi
    used_lo = model_lo["CPU"] + kv_lo + comp_lo
    n = 4096 + int((131072 - 4096) * (total_mib - margin_mib - used_lo) / (used_hi - used_lo))
    return n - n % 256, used_lo, used_hi


def test_host_fit_against_llama_cpp_on_this_cpu():
    """No device (a CPU build), PR #21568: the host buffer types are held against the host's total memory and only
    the context is reduced. llama.cpp on this CPU (the binding's build; it has no fit routine to call: llama_params_fit
    is in libcommon, which the binding does not ship) gives the dry runs' figures for a 4-layer Llama-3.1-8B-shaped
    Q4_0 file: CPU 692.93 MiB of weights beside CPU_REPACK 468.00 MiB (not a host buffer type, so the fit does not
    count it), K + V 64 MiB at 4096 cells and 2048 MiB at 131072, compute 266.50 MiB. The context the fit picks on
    a fake 3000 MiB host is then the source's straight line through those two measured points."""
    pytest.importorskip("llama_cpp")
    from oomkit.engines.llamacpp.fit import dry_run
    from oomkit.model.gguf_file import read_gguf_spec
    from tests import gt_compare as g

    path = g.synth_file("llama-3.1-8b", 4)
    spec = read_gguf_spec(path)
    s = LlamaCppSettings(program="llama-server", n_parallel=1, flash_attn="on", engine_version="b9000")
    model_lo, kv_lo, comp_lo = _measured_host(path, 4096)
    _, kv_hi, comp_hi = _measured_host(path, 131072)
    assert model_lo == {"CPU": 692.93, "CPU_REPACK": 468.0} and (kv_lo, kv_hi) == (64.0, 2048.0)
    for n_ctx, kv, comp in ((4096, kv_lo, comp_lo), (131072, kv_hi, comp_hi)):
        host = dry_run(spec, (), replace(s, n_ctx=n_ctx))[-1]
        assert (round(host.model / MiB, 2), host.context / MiB) == (model_lo["CPU"], kv)
        assert abs(host.compute / MiB - comp) <= 0.1 * comp
    used_hi = model_lo["CPU"] + kv_hi + comp_hi
    used_lo = model_lo["CPU"] + kv_lo + comp_lo
    total, margin = 3000, 1024
    expect = 4096 + int((131072 - 4096) * (total - margin - used_lo) / (used_hi - used_lo))
    expect -= expect % 256
    r = params_fit(spec, (), s, host_total=total * MiB)
    assert r.status == "fitted" and r.settings.n_ctx == expect == 65024
    assert r.lines[0] == f"projected to use {int(used_hi)} MiB of host memory vs. {total} MiB of total host memory"
    assert r.lines[1] == f"cannot meet free memory target of {margin} MiB, need to reduce device memory by " \
                         f"{int(used_hi - (total - margin))} MiB"
    assert r.lines[-1] == "entire model can be fit by reducing context"
    # the result leaves the margin on the host, by llama.cpp's own figures (the KV cache is linear in the cells)
    assert model_lo["CPU"] + kv_lo * expect / 4096 + comp_hi <= total - margin


def test_host_fit_branches():
    """The host fit's other ends: a host that holds the command ("no changes needed" in system memory), a typed
    context (only the context may change, so the fit gives up: "was unable to fit model into system memory by
    reducing context"), builds before PR #21568 and an estimate without the host's size (not fitted)."""
    spec = spec_of(LLAMA8)
    big = params_fit(spec, (), LlamaCppSettings(n_ctx=8192), host_total=64 * GiB)
    assert big.status == "unchanged" and big.lines[-1].endswith("MiB of system memory, no changes needed")
    assert big.lines[-1].startswith("will leave ") and " >= 1024 MiB" in big.lines[-1]
    typed = params_fit(spec, (), LlamaCppSettings(n_ctx=131072), host_total=8 * GiB)
    assert typed.status == "failed" and "context size set by user to 131072 -> no change" in typed.lines
    assert typed.lines[-1].endswith("was unable to fit model into system memory by reducing context, abort")
    assert typed.settings.n_ctx == 131072
    # 4.6 GiB of Q4_K_M weights on a 4 GiB host: reduced to -fitc, then given up
    tiny = params_fit(spec, (), LlamaCppSettings(repack=False), host_total=4 * GiB)
    assert tiny.status == "failed" and tiny.settings.n_ctx == 4096
    assert "context size reduced from 131072 to 4096 -> need " in tiny.lines[-2]
    # with the CPU's repacked weights (Q4_K on x86) the host fit counts only what stays in the CPU buffer: the
    # source adds a buffer to the host row only when its type is a host type, and CPU_REPACK is not
    repacked = params_fit(spec, (), LlamaCppSettings(), host_total=4 * GiB)
    assert repacked.status == "fitted" and repacked.settings.n_ctx > 4096
    est = oomkit.estimate(LLAMA8, "llama.cpp", quant="Q4_K_M", cpu_only=True, find_max_context=False, n_ctx=4096,
                          mmap=False, fit=False)
    assert est.engine_view["model_buffer_bytes"]["CPU_REPACK"] > 3 * GiB  # the weights the host fit leaves out
    assert params_fit(spec, (), LlamaCppSettings(engine_version="b8000"), host_total=8 * GiB).status == "off"
    assert params_fit(spec, (), LlamaCppSettings()).status == "off"


def test_per_stream_context_without_a_unified_cache():
    """PR #27496 ("fit: also take into account n_streams", merged 2026-08-21): `--fit -no-kvu -np 4` with room for
    it sets n_ctx = 131072 * 4 = 524288 so that each slot gets the trained 131072 (the PR's tinygemma3 example);
    before it n_ctx stayed 131072 and each slot got 32768. Short of memory, the least context is 4 x -fitc and the
    context a multiple of 256 x 4."""
    spec = spec_of(LLAMA8)
    s = LlamaCppSettings(n_parallel=4, kv_unified=False)
    roomy = params_fit(spec, (gpu(0, 139000),), s)
    assert roomy.lines[0] == "context size unset and KV cache not unified -> using 524288 for 4 sequences:"
    assert roomy.status == "unchanged" and roomy.settings.n_ctx == 524288
    est = oomkit.estimate(LLAMA8, "llama.cpp", quant="Q4_K_M", devices=(gpu(0, 139000),), find_max_context=False,
                          n_parallel=4, kv_unified=False)
    assert (est.engine_view["n_ctx"], est.engine_view["n_ctx_seq"]) == (524288, 131072)
    assert "raises the context from 131072 to 524288" in est.warnings[0]
    old = params_fit(spec, (gpu(0, 139000),), replace(s, engine_version="b9500"))
    assert old.status == "unchanged" and old.settings.n_ctx == 0  # the trained context in total
    tight = params_fit(spec, (gpu(0, 24000),), s)
    assert tight.status == "fitted" and tight.n_ctx % 1024 == 0 and 4 * 4096 <= tight.n_ctx < 524288
    assert f"context size reduced from 524288 to {tight.n_ctx} -> need " in tight.lines[-2]
    # a unified cache (llama-server's -np auto: 4 slots, one cache) is one stream, as before
    assert params_fit(spec, (gpu(0, 24000),), LlamaCppSettings()).lines[0].startswith("projected to use")


def test_mmproj_is_added_to_the_target_of_its_device(tmp_path):
    """PR #21489 ("mtmd: fit_params now take into account mmproj"): llama-server adds the projector's memory to
    --fit-target of the device it loads on. Its demo log (Qwen2.5-Omni-3B, fixture
    llamacpp_fit/qwen2.5-omni-3b-mmproj-margin.json) prints "estimated memory usage of mmproj is 2447.80 MiB" and
    then "will leave 106812 >= 3471 MiB": 1024 + 2447.80, in whole MiB. oomkit takes the --mmproj file's size (the
    projector's compute buffer, which mtmd_get_memory_usage adds, is not counted)."""
    fx = json.loads((FIXTURES / "qwen2.5-omni-3b-mmproj-margin.json").read_text())
    mm = tmp_path / "mmproj.gguf"
    with open(mm, "wb") as f:
        f.truncate(round(fx["printed"]["mmproj_mib"] * MiB))
    s = LlamaCppSettings(n_ctx=8192, mmproj=str(mm))
    r = params_fit(spec_of(LLAMA8), (gpu(0, fx["printed"]["free_mib"]),), s)
    assert r.margins[0] // MiB == fx["printed"]["target_mib"] == 3471
    assert r.lines[-1].endswith(f" >= {fx['printed']['target_mib']} MiB of free device memory, no changes needed")
    assert params_fit(spec_of(LLAMA8), (gpu(0, 9000),), replace(s, engine_version="b8000")).margins[0] == 1024 * MiB
    assert params_fit(spec_of(LLAMA8), (gpu(0, 9000),), replace(s, no_mmproj=True)).margins[0] == 1024 * MiB


def test_degenerate_step_is_delta_minus_one():
    """common/fit.cpp@08033df0: `headroom > 0 ? delta * (target - mem) / headroom : delta - 1` (a device already
    full: its upper bound uses no more memory than its lower one)."""
    from oomkit.engines.llamacpp.fit import _step

    assert _step(10, 5, 0) == 9 and _step(10, 5, -3) == 9 and _step(2, 5, 0) == 1


def test_breakdown_table_prints_as_the_2026_builds_do():
    """common_memory_breakdown_print in the 2026 format (llama.cpp PR #25465's log, fixture
    llamacpp_fit/rtx5090-breakdown-table-2026.json): the same figures give the same text after the function name,
    the free memory of a dry run as reported and a negative unaccounted truncated toward zero (-17552, not -17553)."""
    from oomkit.engines.llamacpp.fit import Breakdown, breakdown_table

    fx = json.loads((FIXTURES / "rtx5090-breakdown-table-2026.json").read_text())
    dev, host = fx["printed"]["rows"]
    d = Device(id="CUDA0", name="RTX 5090", memory_bytes=dev["total"] * MiB + MiB // 4)
    bd = (Breakdown(dev["model"] * MiB, dev["context"] * MiB, dev["compute"] * MiB),
          Breakdown(host["model"] * MiB, host["context"] * MiB, host["compute"] * MiB))
    got = breakdown_table((d,), bd, [dev["free"] * MiB + MiB // 2], as_reported=True)
    want = [line.split("common_memory_breakdown_print: ", 1)[1] for line in fx["quoted"].splitlines()[:3]]
    assert got == want


def test_engine_view_holds_the_fit_lines_and_the_dry_run_table():
    """engine_view fit_log is llama_params_fit's lines (without the function name the log puts first); the table
    its first dry run prints (the command as typed, the free memory as reported) is FitResult.table, in the form
    the breakdown test above holds to the 2026 log."""
    est = oomkit.estimate(LLAMA8, "llama.cpp", quant="Q4_K_M", devices=(gpu(0, 12000, 24576),),
                          find_max_context=False)
    r = params_fit(spec_of(LLAMA8), (gpu(0, 12000, 24576),), LlamaCppSettings())
    assert est.engine_view["fit_log"].splitlines() == list(r.lines)
    rows = list(r.table)
    assert rows[0].startswith("| memory breakdown [MiB] | total ") and rows[2].startswith("|   - Host ")
    used = self_bytes(LLAMA8, (gpu(0, 12000, 24576),))[0]
    assert re.fullmatch(rf"\|   - CUDA0 \(RTX 3090\) +\| 24576 = 12000 \+ \( *{used // MiB} = .*\) \+ +-?\d+ \|", rows[1])
    assert r.to_dict()["table"] == rows


def test_log_names_by_build():
    """The prefix of the fit's lines: "llama_params_fit_impl:" in b8763 (issue #21801's log) and PR #21489's demo,
    "common_params_fit_impl:" from b9036 (PR #22546's log, "build_info: b9036-b863d41c7")."""
    from oomkit.engines.llamacpp.fit import log_names

    assert log_names(LlamaCppSettings(engine_version="b8763")) == ("llama_params_fit_impl", "llama_params_fit")
    assert log_names(LlamaCppSettings(engine_version="b9036")) == ("common_params_fit_impl", "common_fit_params")
    assert log_names(LlamaCppSettings())[0] == "common_params_fit_impl"
    fx = json.loads((FIXTURES / "qwen2.5-omni-3b-mmproj-margin.json").read_text())
    assert "\nllama_params_fit_impl: projected to use" in fx["quoted"]


# ---------------------------------------------------------------------------------------------------------
# The host fit wired into the estimate: --ram / ram= (else, with --cpu-only on the command line, this machine's
# total memory), through the CLI, the API and check


def test_host_fit_through_the_api_and_the_cli_on_a_fake_host(capsys):
    """A CPU-only llama-server of a build with the host fit (b9000): the estimate is the context the fit picks on a
    fake 3000 MiB host (ram=, --ram), the one the source's rule gives from llama.cpp's own dry-run figures on this
    CPU; its buffers are that context's, the command as typed under typed_*."""
    pytest.importorskip("llama_cpp")
    from oomkit.cli import main
    from tests import gt_compare as g

    path = g.synth_file("llama-3.1-8b", 4)
    expect, _, _ = _host_fit_expected(path, 3000)
    assert expect == 65024
    est = oomkit.estimate(str(path), "llama.cpp", cpu_only=True, ram="3000MiB", settings=HOST_S,
                          find_max_context=False)
    v = est.engine_view
    assert (v["fit"], v["n_ctx"], v["fit_n_ctx"], v["typed_n_ctx"]) == ("fitted", expect, expect, 131072)
    assert v["fit_target_bytes"] == {"CPU": 1024 * MiB} and v["fit_host_memory_bytes"] == 3000 * MiB
    assert v["fit_log"].splitlines()[0].endswith("MiB of host memory vs. 3000 MiB of total host memory")
    # the fitted layout's figures: K + V of the chosen context (64 MiB per 4096 cells as llama.cpp prints)
    assert v["kv_buffer_bytes"] == {"CPU": 64 * MiB * expect // 4096}
    assert v["memory_breakdown"].splitlines()[1].startswith("|   - Host ")
    assert est.warnings[0].startswith(f"llama.cpp's --fit (on by default) reduces the context from 131072 to {expect} "
                                      "to leave 1024 MiB of the host's 3000 MiB free")
    # the same through the command line
    rc = main(["estimate", str(path), "--cpu-only", "--ram", "3000MiB", "-np", "1", "-fa", "on", "--engine-version",
               "b9000", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["engine_view"]["n_ctx"] == expect and out["engine_view"]["fit"] == "fitted"
    # the size as an int of bytes
    assert oomkit.estimate(str(path), "llama.cpp", cpu_only=True, ram=3000 * MiB, settings=HOST_S,
                           find_max_context=False).engine_view["n_ctx"] == expect
    # other hosts: the same straight line through llama.cpp's two dry runs; below what -fitc needs plus the margin
    # (llama.cpp: 692.93 + 64 + 266.50 MiB at 4096 cells, + 1024) the fit reduces to 4096 and gives up
    for total in (2300, 4000):
        n, used_lo, _ = _host_fit_expected(path, total)
        assert total - 1024 > used_lo
        got = oomkit.estimate(str(path), "llama.cpp", cpu_only=True, ram=f"{total}MiB", settings=HOST_S,
                              find_max_context=False).engine_view
        assert (got["fit"], got["n_ctx"]) == ("fitted", n), total
    _, used_lo, _ = _host_fit_expected(path, 1800)
    assert 1800 - 1024 < used_lo
    low = oomkit.estimate(str(path), "llama.cpp", cpu_only=True, ram="1800MiB", settings=HOST_S,
                          find_max_context=False).engine_view
    assert (low["fit"], low["n_ctx"]) == ("failed", 4096)


def test_host_fit_eras_and_failures_through_the_api():
    """Builds before PR #21568 (fd1c0ec3f, master's 8834th commit: b8834) keep the trained context on the host
    ("fit: off", said why); without the
    host's size the fit is off and asks for --ram; a host that cannot hold the weights fails with llama.cpp's own
    message, the context reduced to -fitc first; a typed context that does not fit fails the same way."""
    kw = dict(quant="Q4_K_M", cpu_only=True, find_max_context=False, n_parallel=1)
    old = oomkit.estimate(LLAMA8, "llama.cpp", ram="8GiB", engine_version="b8700", **kw).engine_view
    assert old["fit"].startswith("off (no device: builds before b8834 (PR #21568)") and old["n_ctx"] == 131072
    assert oomkit.estimate(LLAMA8, "llama.cpp", ram="8GiB", engine_version="b8833", **kw).engine_view["fit"].startswith(
        "off (no device: builds before b8834")
    assert oomkit.estimate(LLAMA8, "llama.cpp", ram="8GiB", engine_version="b8834", **kw).engine_view["n_ctx"] < 131072
    unknown = oomkit.estimate(LLAMA8, "llama.cpp", **kw).engine_view
    assert unknown["fit"] == "off (no device, and the host's memory is not known: give --ram SIZE)"
    tiny = oomkit.estimate(LLAMA8, "llama.cpp", ram="4GiB", repack=False, **kw)
    v = tiny.engine_view
    assert v["fit"] == "failed" and v["n_ctx"] == 4096 and v["typed_n_ctx"] == 131072
    assert v["fit_log"].splitlines()[-1] == ("failed to fit params to free device memory: was unable to fit model "
                                             "into system memory by reducing context, abort")
    note = tiny.warnings[0]
    assert note.startswith("llama.cpp's --fit (on by default) fails on this host: \"failed to fit params to free "
                           "device memory: was unable to fit model into system memory by reducing context, abort\"")
    assert f"cannot hold the weights ({tiny.host.weights_bytes // MiB} MiB)" in note
    typed = oomkit.estimate(LLAMA8, "llama.cpp", ram="8GiB", n_ctx=131072, **kw)
    assert typed.engine_view["fit"] == "failed" and typed.engine_view["n_ctx"] == 131072
    assert "fails on this host" in typed.warnings[0]
    roomy = oomkit.estimate(LLAMA8, "llama.cpp", ram="64GiB", **kw).engine_view
    assert roomy["fit"] == "unchanged" and roomy["n_ctx"] == 131072 and "typed_n_ctx" not in roomy
    # with a GPU the host's size changes nothing (the fit weighs the devices)
    a = oomkit.estimate(LLAMA8, "llama.cpp", quant="Q4_K_M", devices=(gpu(0, 12000),), find_max_context=False)
    b = oomkit.estimate(LLAMA8, "llama.cpp", quant="Q4_K_M", devices=(gpu(0, 12000),), find_max_context=False,
                        ram="8GiB")
    assert a.engine_view["fit_log"] == b.engine_view["fit_log"] and a.devices == b.devices


def test_check_cpu_only_fits_the_context_to_the_hosts_total():
    """check --cpu-only hands the detected host's total memory to the fit (ggml_backend_dev_memory of the CPU
    device reports the total), and checks what it loads against the memory a new process can have."""
    from oomkit.check import check
    from oomkit.hardware.detect import Hardware, HostMemory

    hw = Hardware(gpus=(), host=HostMemory(total_bytes=16 * GiB, available_bytes=12 * GiB))
    r = check(LLAMA8, cpu_only=True, hardware=hw, n_parallel=1, repack=False)
    v = r.estimate.engine_view
    want = params_fit(spec_of(LLAMA8), (), LlamaCppSettings(n_parallel=1, repack=False), host_total=16 * GiB)
    assert v["fit"] == "fitted" and v["n_ctx"] == want.settings.n_ctx < 131072
    assert r.hardware == "cpu" and r.devices[0].budget_bytes == 12 * GiB


@pytest.mark.parametrize("argv,words", [
    (["--ram", "24"], "24 what? write 24GiB"),
    (["--ram", "0"], "must be positive"),
    (["--ram", "8GiB,8GiB"], "one size, the host's memory"),
    (["--ram", "lots"], "cannot read size"),
    (["--ram", "8GiB", "--engine", "vllm"], "does not size anything by the host's memory"),
])
def test_ram_is_read_as_vram_is(argv, words, capsys):
    from oomkit.cli import main

    assert main(["estimate", "llama3.1:8b", "--cpu-only", *argv]) == 2
    assert words in capsys.readouterr().err


@pytest.mark.parametrize("ram,words", [(1.5, "is a float"), (True, "is a bool"), (512, "512 what?"),
                                       ("2000000TiB", "up to 1 EiB"), ([8 * GiB], "is a list")])
def test_ram_api_argument_types(ram, words):
    from oomkit.errors import OomkitError

    with pytest.raises(OomkitError, match=re.escape(words)):
        oomkit.estimate(LLAMA8, "llama.cpp", cpu_only=True, ram=ram, find_max_context=False)


def test_mmproj_margin_on_the_host_and_what_it_leaves_out(tmp_path):
    """PR #21489 on a CPU build: the projector loads on the CPU, index 0 of the registry there, so its memory goes to
    fit_params_target[0], the margin the host fit keeps. llama.cpp adds mtmd_get_memory_usage: the weights and the
    compute buffer (clip_model_loader::alloc_compute_meta, the PR's description); oomkit adds the file's size and
    says the compute buffer is left out."""
    mm = tmp_path / "mmproj.gguf"
    with open(mm, "wb") as f:
        f.truncate(800 * MiB)
    est = oomkit.estimate(LLAMA8, "llama.cpp", quant="Q4_K_M", cpu_only=True, ram="8GiB", find_max_context=False,
                          n_parallel=1, mmproj=str(mm))
    v = est.engine_view
    assert v["fit_target_bytes"] == {"CPU": 1024 * MiB + 800 * MiB} and v["fit"] == "fitted"
    assert "to leave 1824 MiB of the host's 8192 MiB free" in est.warnings[0]
    assert est.warnings[0].endswith("its target holds the --mmproj file but not the projector's compute buffer, "
                                    "which llama.cpp adds too (engine_view fit_*, typed_*)")
    plain = oomkit.estimate(LLAMA8, "llama.cpp", quant="Q4_K_M", cpu_only=True, ram="8GiB", find_max_context=False,
                            n_parallel=1)
    assert v["n_ctx"] < plain.engine_view["n_ctx"]


def test_check_cpu_only_with_ram_is_a_planned_host(capsys):
    """check --cpu-only --ram SIZE: the verdict against a host of that size, all of it free, and the host fit
    weighing the same total; the context is the one the fit rule picks for it."""
    from oomkit.check import check
    from oomkit.cli import main

    r = check(LLAMA8, cpu_only=True, ram="16GiB", n_parallel=1, repack=False)
    want = params_fit(spec_of(LLAMA8), (), LlamaCppSettings(n_parallel=1, repack=False), host_total=16 * GiB)
    assert r.estimate.engine_view["n_ctx"] == want.settings.n_ctx < 131072
    assert r.devices[0].budget_bytes == r.devices[0].total_bytes == 16 * GiB
    assert r.fits and "--ram: a host of 16,384 MiB, all of it free" in r.hardware_notes
    main(["check", "llama3.1:8b", "--cpu-only", "--ram", "16GiB", "-np", "1", "--no-repack"])
    out = capsys.readouterr().out
    assert "hardware: CPU only: a planned host (--ram)" in out and f"context {want.settings.n_ctx}" in out


def test_breakdown_table_prints_repacked_weights_as_their_own_row():
    """common_memory_breakdown_print ends with "all remaining buffer types": a buffer type that is neither a host
    type nor on one of the model's devices gets its own row after the host, as CPU_REPACK does (is_host unset).
    llama.cpp's own buffers for the 4-layer Llama-3.1-8B Q4_0 file on this CPU without a mapping: CPU 692.93 MiB
    and CPU_REPACK 468.00 MiB, so the rows read 692 and 468 (whole MiB, truncated)."""
    pytest.importorskip("llama_cpp")
    from tests import gt_compare as g

    path = g.synth_file("llama-3.1-8b", 4)
    model, _, _ = _measured_host(path, 4096)
    assert model == {"CPU": 692.93, "CPU_REPACK": 468.0}
    est = oomkit.estimate(str(path), "llama.cpp", cpu_only=True, settings=replace(HOST_S, n_ctx=4096, mmap=False),
                          find_max_context=False)
    rows = est.engine_view["memory_breakdown"].splitlines()
    host = re.fullmatch(r"\|   - Host +\| +(\d+) = +(\d+) \+ +(\d+) \+ +(\d+) +\|", rows[1])
    repack = re.fullmatch(r"\|   - CPU_REPACK +\| +(\d+) = +(\d+) \+ +(\d+) \+ +(\d+) +\|", rows[2])
    assert host and repack and len(rows) == 3
    assert int(host.group(2)) == int(model["CPU"]) and int(host.group(3)) == 64
    assert tuple(map(int, repack.groups())) == (468, 468, 0, 0)


# ----------------------------------------------------------------------------------------------------------
# The projector's compute buffer in the mmproj margin, held to llama.cpp's own mtmd_get_memory_usage (the function
# llama-server calls before the fit) on this CPU, through the binding's libmtmd

_MTMD_USAGE = r"""
import ctypes, json, os, sys
import llama_cpp
from llama_cpp import mtmd_cpp as M
lib = ctypes.CDLL(os.path.join(os.path.dirname(llama_cpp.__file__), "lib", "libmtmd.so"))
fn = getattr(lib, "_Z21mtmd_get_memory_usagePKc19mtmd_context_params")  # std::map<dev, size_t> (const char *, params)
fn.argtypes = [ctypes.c_void_p, ctypes.c_char_p, M.mtmd_context_params]  # the map comes back through a hidden pointer
p = M.mtmd_context_params_default()
p.use_gpu, p.warmup, p.n_threads, p.flash_attn_type = False, True, 1, int(sys.argv[2])
buf = (ctypes.c_uint8 * 256)()
fn(ctypes.addressof(buf), sys.argv[1].encode(), p)
head = ctypes.addressof(buf) + 8  # libstdc++ _Rb_tree: compare, header {color, parent, left, right}, node count
out = []
def walk(n):
    if n:
        walk(ctypes.c_void_p.from_address(n + 16).value)
        out.append(ctypes.c_size_t.from_address(n + 40).value)  # pair<dev_t, size_t> after the 32-byte node base
        walk(ctypes.c_void_p.from_address(n + 24).value)
walk(ctypes.c_void_p.from_address(head + 8).value)
assert len(out) == ctypes.c_size_t.from_address(head + 32).value
print(json.dumps(out))
"""


def run_libmtmd(script: str, symbol: str, *args: str):
    """script run by a fresh interpreter (args after it) against the binding's libmtmd, skipped where the binding or
    its libmtmd lacks symbol; it must exit 0. -> the subprocess.CompletedProcess (text stdout and stderr)"""
    import subprocess
    import sys

    llama_cpp = pytest.importorskip("llama_cpp")
    lib = Path(llama_cpp.__file__).parent / "lib" / "libmtmd.so"
    if not lib.exists() or symbol not in lib.read_bytes().decode("latin-1"):
        pytest.skip(f"the binding's libmtmd has no {symbol}")
    r = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return r


def mtmd_memory_usage(path: Path, flash_attn: int) -> list[int]:
    """mtmd_get_memory_usage(path, params) per device, as llama-server adds it to fit_params_target (CPU only)."""
    r = run_libmtmd(_MTMD_USAGE, "mtmd_get_memory_usage", str(path), str(flash_attn))
    return json.loads(r.stdout.strip().splitlines()[-1])


def write_gemma3_mmproj(path: Path, n_layer: int = 2, image: int = 896, patch: int = 14, n_embd: int = 1152,
                        n_ff: int = 4304, n_head: int = 16, n_text: int = 2560) -> Path:
    """A Gemma 3 mmproj as convert_hf_to_gguf.py --mmproj writes it (clip.* keys, v.* SigLIP tensors, mm.* projector;
    matrices F16, norms and biases F32), Gemma 3 4B's widths (vision_config of google/gemma-3-4b-it: 896 px, patch 14,
    hidden 1152, intermediate 4304, 16 heads; text hidden 2560) and a few layers (the compute buffer does not depend on
    their count)."""
    import gguf
    import numpy as np

    w = gguf.GGUFWriter(str(path), "clip")
    w.add_string("clip.projector_type", "gemma3")
    w.add_bool("clip.has_vision_encoder", True)
    for k, v in (("image_size", image), ("patch_size", patch), ("embedding_length", n_embd),
                 ("feed_forward_length", n_ff), ("projection_dim", n_text), ("attention.head_count", n_head),
                 ("block_count", n_layer)):
        w.add_uint32(f"clip.vision.{k}", v)
    w.add_float32("clip.vision.attention.layer_norm_epsilon", 1e-6)
    w.add_array("clip.vision.image_mean", [0.5, 0.5, 0.5])
    w.add_array("clip.vision.image_std", [0.5, 0.5, 0.5])
    w.add_bool("clip.use_gelu", True)

    def t(name: str, *shape: int, dtype=np.float16) -> None:  # numpy order: the reverse of ggml's ne
        w.add_tensor(name, np.zeros(shape, dtype=dtype))

    t("v.patch_embd.weight", n_embd, 3, patch, patch)
    t("v.patch_embd.bias", n_embd, dtype=np.float32)
    t("v.position_embd.weight", (image // patch) ** 2, n_embd)
    for i in range(n_layer):
        for n in ("attn_q", "attn_k", "attn_v", "attn_out"):
            t(f"v.blk.{i}.{n}.weight", n_embd, n_embd)
            t(f"v.blk.{i}.{n}.bias", n_embd, dtype=np.float32)
        for n in ("ln1", "ln2"):
            t(f"v.blk.{i}.{n}.weight", n_embd, dtype=np.float32)
            t(f"v.blk.{i}.{n}.bias", n_embd, dtype=np.float32)
        t(f"v.blk.{i}.ffn_up.weight", n_ff, n_embd)
        t(f"v.blk.{i}.ffn_up.bias", n_ff, dtype=np.float32)
        t(f"v.blk.{i}.ffn_down.weight", n_embd, n_ff)
        t(f"v.blk.{i}.ffn_down.bias", n_embd, dtype=np.float32)
    t("v.post_ln.weight", n_embd, dtype=np.float32)
    t("v.post_ln.bias", n_embd, dtype=np.float32)
    t("mm.input_projection.weight", n_embd, n_text)
    t("mm.soft_emb_norm.weight", n_embd, dtype=np.float32)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


@pytest.mark.parametrize("shape", [
    {},  # Gemma 3 4B's tower: 121.25 MiB with flash attention, 1132.00 MiB without (gpustack/gguf-parser-go#44)
    {"n_text": 5376, "n_layer": 3},  # Gemma 3 27B's projection width
    {"n_ff": 8192},
    {"n_embd": 768, "n_ff": 3072, "n_head": 12},
    {"n_head": 8},
])
def test_mmproj_margin_is_mtmd_get_memory_usage(tmp_path, shape):
    """PR #21489: the margin llama-server adds is mtmd_get_memory_usage, the projector's weight buffer plus the
    compute buffer clip reserves for its warmup image. oomkit's margin for a gemma3 mmproj equals what the engine's
    own function returns on this CPU, byte for byte, with -fa on (and auto, which tries it first) and off."""
    mm = write_gemma3_mmproj(tmp_path / "mmproj.gguf", **shape)
    for fa, ggml_fa in (("on", 1), ("auto", -1), ("off", 0)):
        s = LlamaCppSettings(n_ctx=8192, mmproj=str(mm), flash_attn=fa)
        r = params_fit(spec_of(LLAMA8), (gpu(0, 24000),), s)
        (usage,) = mtmd_memory_usage(mm, ggml_fa)
        assert r.margins[0] - 1024 * MiB == usage, (fa, shape)


@pytest.mark.parametrize("shape", [{"image": 448}, {"image": 448, "n_text": 2048}, {"image": 560, "n_text": 5376}])
def test_mmproj_compute_of_small_images(tmp_path, shape):
    """Below 896 px the F16 transposed copy of mm.input_projection (2 E T bytes, placed early) no longer fits in a
    freed row of E once T > 2P: at 448 px (P = 1024, T 2560) it sets the peak with two more rows of E (projector.py);
    at T = 2P it still fits."""
    mm = write_gemma3_mmproj(tmp_path / "mmproj.gguf", **shape)
    for fa, ggml_fa in (("on", 1), ("off", 0)):
        s = LlamaCppSettings(n_ctx=8192, mmproj=str(mm), flash_attn=fa)
        assert params_fit(spec_of(LLAMA8), (gpu(0, 24000),), s).margins[0] - 1024 * MiB == \
            mtmd_memory_usage(mm, ggml_fa)[0]


def test_mmproj_compute_buffer_in_the_estimate(tmp_path):
    """What the projector allocates at run time is the same pair (the weight buffer, the warmup compute buffer kept
    by the scheduler): the estimate puts the weights and the compute buffer on the first GPU, and no note says the
    compute buffer is missing."""
    mm = write_gemma3_mmproj(tmp_path / "mmproj.gguf")
    (usage,) = mtmd_memory_usage(mm, 1)
    kw = dict(quant="Q4_K_M", vram="24GiB", find_max_context=False, n_ctx=8192, n_parallel=1, flash_attn="on")
    base = oomkit.estimate(LLAMA8, "llama.cpp", fit=False, **kw)
    est = oomkit.estimate(LLAMA8, "llama.cpp", fit=False, mmproj=str(mm), **kw)
    assert est.devices[0].total_bytes - base.devices[0].total_bytes == usage == est.engine_view["mmproj_bytes"]
    assert est.devices[0].compute_bytes - base.devices[0].compute_bytes == 4 * 4096 * (4304 + 3 * 1152)
    assert not any("compute buffer" in w for w in est.warnings)
    fitted = oomkit.estimate(LLAMA8, "llama.cpp", mmproj=str(mm), **kw)
    assert fitted.engine_view["fit_target_bytes"] == {"CUDA0": 1024 * MiB + usage}
    assert not any("compute buffer" in w for w in fitted.warnings)


# ----------------------------------------------------------------------------------------------------------
# The draft model (-md): a margin from b9305 (PR #23485), a second model in every dry run from the extra-model fit.
# llama.cpp's dry runs are played by oomkit's own estimate of the draft file with -fit off (held to llama.cpp
# elsewhere); the rules are server-context.cpp load_model (PR #23485) and common/fit.cpp add_extra_memory.


def _draft(tmp_path: Path, n_layers: int = 2) -> Path:
    """A small draft: a Llama-3-8B-shaped GGUF cut to a few layers (the same vocabulary as the main model)."""
    from tests.ggufs import write_llama_gguf

    return write_llama_gguf(tmp_path / "draft.gguf", n_layers=n_layers)


def _draft_self(path: Path, devices, **kw) -> list[int]:
    """The draft's dry run per device: model + context + compute, the command's context parameters and the draft's
    own -ngld / -ctkd / -ctvd (params_dft = params_base with the draft's fields)."""
    est = oomkit.estimate(str(path), "llama.cpp", devices=devices, find_max_context=False, fit=False, **kw)
    return [u.weights_bytes + u.kv_cache_bytes + u.recurrent_state_bytes + u.compute_bytes for u in est.devices]


def test_draft_flags_are_read():
    from oomkit.engines.llamacpp.args import format_command, parse_args

    _, _, s = parse_args(["-m", "x.gguf", "-md", "d.gguf", "-ngld", "99", "-ctkd", "q8_0", "-ctvd", "q8_0",
                          "--spec-type", "draft-mtp,ngram-mod"])
    assert (s.model_draft, s.n_gpu_layers_draft, s.cache_type_k_draft, s.cache_type_v_draft, s.spec_type) == \
        ("d.gguf", 99, "q8_0", "q8_0", ("draft-mtp", "ngram-mod"))
    _, _, t = parse_args(["-m", "x.gguf", "--spec-draft-model", "d.gguf", "--spec-draft-ngl", "all",
                          "--spec-draft-type-k", "q4_0"])
    assert (t.model_draft, t.n_gpu_layers_draft, t.cache_type_k_draft) == ("d.gguf", 10**6, "q4_0")
    assert format_command("x.gguf", s)[3:] == ["-md", "d.gguf", "-ngld", "99", "-ctkd", "q8_0", "-ctvd", "q8_0",
                                               "--spec-type", "draft-mtp,ngram-mod"]


def test_draft_margin_from_b9305(tmp_path):
    """PR #23485 (b9305; b9297 has no such step): the draft's dry run at the command's context, with its own -ctkd /
    -ctvd, is added to the target of its device before the fit; the log line "[spec] estimated memory usage of draft
    model is X MiB" comes first."""
    md = _draft(tmp_path)
    devs = (gpu(0, 24000),)
    s = LlamaCppSettings(n_ctx=8192, n_parallel=1, model_draft=str(md), cache_type_k_draft="q8_0",
                         cache_type_v_draft="q8_0", flash_attn="on", engine_version="b9400")
    (draft,) = _draft_self(md, devs, n_ctx=8192, n_parallel=1, cache_type_k="q8_0", cache_type_v="q8_0",
                           flash_attn="on", engine_version="b9400")
    r = params_fit(spec_of(LLAMA8), devs, s)
    assert r.margins[0] == 1024 * MiB + draft and r.draft[0] == draft
    assert r.lines[0] == f"[spec] estimated memory usage of draft model is {draft / MiB:.2f} MiB"
    used = self_bytes(LLAMA8, devs, n_ctx=8192, n_parallel=1, flash_attn="on", engine_version="b9400")[0]
    assert r.lines[-1] == (f"will leave {(24000 * MiB - used) // MiB} >= {(1024 * MiB + draft) // MiB} MiB of free "
                           "device memory, no changes needed")
    assert params_fit(spec_of(LLAMA8), devs, replace(s, engine_version="b9297")).margins[0] == 1024 * MiB
    # llama-cli shares the server context; the other programs load no draft in the fit
    assert params_fit(spec_of(LLAMA8), devs, replace(s, program="llama-perplexity")).margins[0] == 1024 * MiB


def test_draft_margin_at_the_trained_context_when_none_is_given(tmp_path):
    """Issue #25408 (b9893): with no -c the draft's dry run runs at n_ctx 0, its trained context, while the main
    context is then fitted below it: the margin holds the draft's full-context KV cache."""
    md = _draft(tmp_path)
    devs = (gpu(0, 22000),)
    s = LlamaCppSettings(n_parallel=1, model_draft=str(md), engine_version="b9893")
    (draft_full,) = _draft_self(md, devs, n_ctx=131072, n_parallel=1, engine_version="b9893")
    r = params_fit(spec_of(LLAMA8), devs, s)
    assert r.margins[0] == 1024 * MiB + draft_full
    plain = params_fit(spec_of(LLAMA8), devs, replace(s, model_draft=None))
    assert r.n_ctx < plain.n_ctx  # the main context gives way to the draft's reservation


def test_draft_fitted_beside_the_main_model(tmp_path):
    """common_fit_extra_model (the newest source; after b10636 by a fork's rebase notes): no margin; every dry run adds the draft's own at the same context,
    so the context where the straight line meets free - margin counts both models, and the draft shrinks with it."""
    md = _draft(tmp_path)
    devs = (gpu(0, 16000),)
    s = LlamaCppSettings(n_parallel=1, model_draft=str(md))
    r = params_fit(spec_of(LLAMA8), devs, s)
    assert r.margins[0] == 1024 * MiB and not any(x.startswith("[spec]") for x in r.lines)

    def both(n_ctx: int) -> int:
        return self_bytes(LLAMA8, devs, n_ctx=n_ctx, n_parallel=1)[0] + _draft_self(md, devs, n_ctx=n_ctx,
                                                                                        n_parallel=1)[0]

    full, low = both(131072), both(4096)
    target = 16000 * MiB - 1024 * MiB
    expect = 4096 + (131072 - 4096) * (target - low) // (full - low)
    expect -= expect % 256
    assert r.status == "fitted" and r.n_ctx == expect
    assert r.lines[0] == f"projected to use {full // MiB} MiB of device memory vs. 16000 MiB of free device memory"
    assert r.draft[0] == _draft_self(md, devs, n_ctx=expect, n_parallel=1)[0]
    assert both(expect) <= target
    alone = params_fit(spec_of(LLAMA8), devs, replace(s, model_draft=None))
    assert alone.n_ctx > r.n_ctx
    # a draft oomkit cannot read is left out, as the source fits without a draft it fails to measure
    assert params_fit(spec_of(LLAMA8), devs, replace(s, model_draft=str(tmp_path / "none.gguf"))).n_ctx == alone.n_ctx


def test_draft_in_the_estimate(tmp_path):
    """At run time llama-server loads the draft and its context beside the main model on the same devices: the
    estimate adds the draft's own buffers (its -fit off estimate less the driver context, counted once). Its context
    is the main one's where the draft is fitted beside it; in the margin era with no -c it is the draft's trained
    context (issue #25408: "the speculative context is initialized with n_ctx_train") beside a fitted main one."""
    md = _draft(tmp_path)
    devs = (gpu(0, 16000),)
    kw = dict(quant="Q4_K_M", devices=devs, find_max_context=False, n_parallel=1)
    base = oomkit.estimate(LLAMA8, "llama.cpp", fit=False, n_ctx=8192, **kw)
    est = oomkit.estimate(LLAMA8, "llama.cpp", fit=False, n_ctx=8192, model_draft=str(md), **kw)
    d = oomkit.estimate(str(md), "llama.cpp", devices=devs, find_max_context=False, fit=False, n_ctx=8192,
                        n_parallel=1)
    assert est.devices[0].total_bytes - base.devices[0].total_bytes == d.devices[0].total_bytes - \
        d.devices[0].overhead_bytes == est.engine_view["draft_bytes"]["CUDA0"]
    assert est.host.total_bytes - base.host.total_bytes == d.host.total_bytes - d.host.overhead_bytes
    assert est.engine_view["draft_n_ctx"] == 8192
    old = oomkit.estimate(LLAMA8, "llama.cpp", model_draft=str(md), engine_version="b9400", **kw)
    assert old.engine_view["draft_n_ctx"] == 131072 and old.engine_view["n_ctx"] < 131072
    new = oomkit.estimate(LLAMA8, "llama.cpp", model_draft=str(md), **kw)
    assert new.engine_view["draft_n_ctx"] == new.engine_view["n_ctx"] < 131072
    # what the fit left: the margin on the device once both models are in
    for e in (old, new):
        assert 16000 * MiB - (e.devices[0].total_bytes - e.devices[0].overhead_bytes) >= 1024 * MiB
    missing = oomkit.estimate(LLAMA8, "llama.cpp", fit=False, n_ctx=8192, model_draft=str(tmp_path / "no.gguf"), **kw)
    assert missing.devices[0].total_bytes == base.devices[0].total_bytes
    assert any("the draft model is not counted" in w for w in missing.warnings)


def test_draft_in_the_host_fit(tmp_path):
    """No device (a CPU build): the margin era adds the draft to no target (its dry run reports no device, and only
    devices are matched), while the extra-model fit adds its host row to every measurement, so the host's context
    gives way to it."""
    md = _draft(tmp_path)
    spec = spec_of(LLAMA8)
    s = LlamaCppSettings(n_parallel=1, model_draft=str(md))
    margin_era = params_fit(spec, (), replace(s, engine_version="b9400"), host_total=12 * GiB)
    plain = params_fit(spec, (), replace(s, model_draft=None, engine_version="b9400"), host_total=12 * GiB)
    assert margin_era.margins == plain.margins and margin_era.n_ctx == plain.n_ctx
    joint = params_fit(spec, (), s, host_total=12 * GiB)
    alone = params_fit(spec, (), replace(s, model_draft=None), host_total=12 * GiB)
    assert joint.status == alone.status == "fitted" and joint.n_ctx < alone.n_ctx
    assert len(joint.draft) == 1 and joint.draft[0] > 0 and not margin_era.draft  # the host row: the draft's buffers


def test_mmproj_on_the_cpu(tmp_path):
    """--no-mmproj-offload (mparams.use_gpu = false): clip loads on the CPU, whose registry index comes after the
    GPUs', so the server adds its memory to a fit_params_target entry no device of the fit reads; the estimate puts
    the projector's weights and compute buffer in system memory. On a build without a GPU the CPU is index 0: the host
    fit keeps it, as before."""
    mm = write_gemma3_mmproj(tmp_path / "mmproj.gguf")
    (usage,) = mtmd_memory_usage(mm, 1)
    s = LlamaCppSettings(n_ctx=8192, n_parallel=1, mmproj=str(mm), flash_attn="on", mmproj_offload=False)
    assert params_fit(spec_of(LLAMA8), (gpu(0, 24000),), s).margins[0] == 1024 * MiB
    assert params_fit(spec_of(LLAMA8), (), s, host_total=64 * GiB).margins[0] == 1024 * MiB + usage
    kw = dict(quant="Q4_K_M", vram="24GiB", find_max_context=False, fit=False, n_ctx=8192, n_parallel=1,
              flash_attn="on")
    on_gpu = oomkit.estimate(LLAMA8, "llama.cpp", mmproj=str(mm), **kw)
    on_cpu = oomkit.estimate(LLAMA8, "llama.cpp", mmproj=str(mm), mmproj_offload=False, **kw)
    assert on_gpu.devices[0].total_bytes - on_cpu.devices[0].total_bytes == usage
    assert on_cpu.host.total_bytes - on_gpu.host.total_bytes == usage


def test_a_build_past_the_dated_ones_is_told_which_newest_rules_it_gets():
    """The joint draft fit (common_fit_extra_model; a fork rebasing onto b10636 finds it in master) and the fit over
    the parallel streams (PR #27496, merged 2026-08-21, about b10527) sit at b9999, the newest source: a build
    between b10000 and those gets them, and the warning names each rule it may predate."""
    from oomkit.engines.llamacpp.fit import FIT_ERAS
    from oomkit.engines.llamacpp.settings import version_warning

    assert FIT_ERAS.reached(10100, "draft_joint") and FIT_ERAS.reached(10100, "fit_streams")
    w = version_warning("b10100")
    assert "common_fit_extra_model" in w and "PR #27496" in w and "may predate" in w
    w = version_warning("b10600")
    assert "common_fit_extra_model" in w and "PR #27496" not in w
    assert "PR #28630" in version_warning("b10700")
    assert version_warning("b10900").endswith("its newest rules apply")
    assert version_warning("b9999") is None


def test_draft_from_the_hub_and_its_devices():
    """-hfd REPO[:QUANT] ("Same as --hf-repo, but for the draft model", common/arg.cpp) names the draft as -hf names
    the model, and llama-server loads it the same way: the estimate adds the draft's own buffers, as for -md.
    -devd is params.speculative.devices (parse_device_list, as -dev): the draft's own devices (placed in
    tests/test_llamacpp_mtp_draft.py)."""
    from oomkit.engines.llamacpp.args import format_command, parse_args
    from oomkit.engines.llamacpp.fit import draft_model

    draft = "meta-llama/Llama-3.2-1B-Instruct"
    _, _, s = parse_args(["-m", "x.gguf", "-hfd", f"{draft}:Q8_0", "-devd", "CUDA0", "-dev", "CUDA0"])
    assert (s.hf_repo_draft, s.device_draft) == (f"{draft}:Q8_0", ("CUDA0",))
    _, _, t = parse_args(["-m", "x.gguf", "--spec-draft-hf", draft, "--spec-draft-device", "CUDA0,CUDA1"])
    assert (t.hf_repo_draft, t.device_draft) == (draft, ("CUDA0", "CUDA1"))
    assert "-hfd" in format_command("x.gguf", s) and "-devd" in format_command("x.gguf", s)
    assert draft_model(s)[0] == spec_of(draft, "Q8_0")
    assert draft_model(t)[1].device == ("CUDA0", "CUDA1")

    devs = (gpu(0, 16000),)
    kw = dict(quant="Q4_K_M", devices=devs, find_max_context=False, n_parallel=1, fit=False, n_ctx=8192)
    base = oomkit.estimate(LLAMA8, "llama.cpp", **kw)
    est = oomkit.estimate(LLAMA8, "llama.cpp", hf_repo_draft=f"{draft}:Q8_0", **kw)
    d = oomkit.estimate(draft, "llama.cpp", **{**kw, "quant": "Q8_0"})
    assert est.devices[0].total_bytes - base.devices[0].total_bytes == d.devices[0].total_bytes - \
        d.devices[0].overhead_bytes
    assert est.engine_view["draft_model"] == f"{draft}:Q8_0"
