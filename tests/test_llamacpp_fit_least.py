"""check's smallest requirement (memo.SEARCHING "least") lets llama.cpp's --fit skip the layer splits whose weights
and state alone are over the device's target: no such try can succeed, so the fitted settings, the log and every
figure are those of the full search; only the count of dry runs, which that caller does not read, is smaller."""

from __future__ import annotations

from oomkit.check import check
from oomkit.engines.base import get_engine
from oomkit.engines.llamacpp import fit
from oomkit.memo import SEARCHING
from oomkit.request import devices_from, resolve_model


def _fits(vram: str, kv: str):
    eng = get_engine("llama.cpp")
    s = eng.with_context(eng.with_kv_type(eng.settings(), kv), 256)
    spec = eng.model_for(resolve_model(eng, "llama3.1:8b", None), s)
    devs = devices_from(vram, None)
    full = fit.params_fit(spec, devs, s)
    token = SEARCHING.set("least")
    try:
        least = fit.params_fit(spec, devs, s)
    finally:
        SEARCHING.reset(token)
    return full, least


def test_least_keeps_the_fitted_settings_and_log():
    for vram, kv in (("0.5GB", "f16"), ("1GB", "q4_0"), ("6GB", "q8_0")):
        full, least = _fits(vram, kv)
        assert (least.settings, least.status, least.lines) == (full.settings, full.status, full.lines)
        assert least.dry_runs <= full.dry_runs


def test_least_skips_the_tries_that_cannot_fit():
    full, least = _fits("0.5GB", "f16")
    assert full.settings.n_gpu_layers == 0  # not even one layer beside the runtime
    assert full.dry_runs > 30 and least.dry_runs < 5


def test_estimate_figures_with_the_skipped_tries():
    """The estimate check's smallest requirement takes, with and without the skipped tries: the same buffers on
    every device and the same engine view but for the count of dry runs."""
    eng = get_engine("llama.cpp")
    s = eng.with_context(eng.settings(), 256)
    spec = eng.model_for(resolve_model(eng, "llama3.1:8b", None), s)
    devs = devices_from("0.5GB", None)
    full = eng.estimate(spec, devs, s)
    token = SEARCHING.set("least")
    try:
        least = eng.estimate(spec, devs, s)
    finally:
        SEARCHING.reset(token)
    assert [u.to_dict() for u in least.devices] == [u.to_dict() for u in full.devices]
    assert least.host.to_dict() == full.host.to_dict()
    view = {k: v for k, v in full.engine_view.items() if k != "fit_dry_runs"}
    assert {k: v for k, v in least.engine_view.items() if k != "fit_dry_runs"} == view
    assert least.engine_view["fit_dry_runs"] < full.engine_view["fit_dry_runs"]
    r = check("llama3.1:8b", "llama.cpp", vram="0.5GB")
    assert r.impossible and r.min_required_kv is not None
    assert SEARCHING.get() is None  # reset after the smallest requirement
