"""The Python API with wrong types: `oomkit.estimate(...)` raises a documented oomkit error (SettingsError,
HardwareError, ModelError, all OomkitError) with a one-line message, never AttributeError / TypeError /
ZeroDivisionError / OverflowError from deep inside; a bool is no int, a float no byte count, NaN no setting.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from dataclasses import fields

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import oomkit
from oomkit import HardwareError, HubError, ModelError, OomkitError, SettingsError
from oomkit.engines.base import get_engine

TRIED: Counter[str] = Counter()
HYPO = settings(max_examples=40, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
ENGINES = ("llama.cpp", "vllm", "sglang", "ollama", "mlx", "transformers")
VRAM = {"vllm": "80GiB", "sglang": "80GiB"}

anything = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8), st.binary(max_size=4),
    st.lists(st.integers(min_value=-3, max_value=3), max_size=3), st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
    st.sampled_from([object(), 1j, (1, 2), ("a",), (math.nan,), [1.5], -1, 0, 1, 2**31, 2**63, "1_024", "²", "nan"]))


def call(family: str, *args, **kw):
    """oomkit.estimate(...) -> the result, or the OomkitError it raised; anything else fails the test."""
    TRIED[family] += 1
    t = time.perf_counter()
    try:
        return oomkit.estimate(*args, **kw)
    except OomkitError as e:
        assert "\n" not in str(e).strip(), str(e)
        return e
    finally:
        assert time.perf_counter() - t < 3.0, (args, kw)


def test_error_types_exported_and_documented():
    for cls in (SettingsError, HardwareError, ModelError, HubError):
        assert issubclass(cls, OomkitError) and cls.__name__ in oomkit.__all__
    assert issubclass(OomkitError, ValueError)  # existing `except ValueError` callers keep working
    text = (__import__("pathlib").Path(__file__).parent.parent / "docs" / "api.md").read_text(encoding="utf-8")
    for name in ("OomkitError", "SettingsError", "HardwareError", "ModelError", "HubError"):
        assert name in text


@pytest.mark.parametrize("kw,cls,words", [
    (dict(vram=24.5), SettingsError, "float"), (dict(vram=True), SettingsError, "bool"),
    (dict(vram=24), SettingsError, "24 what?"), (dict(vram="24"), SettingsError, "24 what?"),
    (dict(vram=0), HardwareError, "positive"), (dict(vram=-5), SettingsError, "negative"),
    (dict(vram=[]), SettingsError, "empty"), (dict(vram=[24.5]), SettingsError, "float"),
    (dict(vram={"a": 1}), SettingsError, "dict"), (dict(vram="24GiB," * 2000), SettingsError, "1,024"),
    (dict(vram=2**70), HardwareError, "EiB"),
    (dict(n_ctx=1.5), SettingsError, "float"), (dict(n_ctx=True), SettingsError, "boolean"),
    (dict(n_ctx=math.nan), SettingsError, "float"), (dict(n_ctx=-1), SettingsError, "n_ctx (-c) -1"),
    (dict(n_ctx="4096"), SettingsError, "str"), (dict(n_parallel=0), SettingsError, "-np"),
    (dict(cpu_only="no"), SettingsError, "cpu_only"), (dict(cpu_only=1), SettingsError, "cpu_only"),
    (dict(cpu_only=True, vram="24GiB"), SettingsError, "--cpu-only and --vram"),
    (dict(vram="24GiB", gpu="H100"), SettingsError, "both say the hardware"),
    (dict(gpu="99999999999x H100"), HardwareError, "1,024"), (dict(gpu=["H100"]), SettingsError, "gpu"),
    (dict(gpu="RTX 9999"), HardwareError, "unknown GPU"), (dict(devices="CUDA0"), SettingsError, "Device"),
    (dict(tensor_split=(math.nan, 1.0), vram="24GiB,24GiB"), SettingsError, "finite"),
    (dict(tensor_split=("a",)), SettingsError, "give a number"), (dict(bogus=1), SettingsError, "no option"),
    (dict(quant=5), SettingsError, "quant"), (dict(quant="Q8_0", model="llama3.1:8b:Q4_K_M"), SettingsError, "give one"),
    (dict(find_max_context="yes"), SettingsError, "find_max_context"), (dict(engine=None), SettingsError, "engine"),
    (dict(engine="nope"), OomkitError, "nope"), (dict(model=None), SettingsError, "model"),
    (dict(model=3), SettingsError, "model"), (dict(model=""), SettingsError, "model"),
    (dict(settings="x"), SettingsError, "settings"),
    (dict(engine="vllm", cpu_offload_gb=math.inf), SettingsError, "finite"),
    (dict(engine="vllm", block_size=0), SettingsError, "block_size"),
    (dict(engine="vllm", gpu_memory_utilization=1.5), SettingsError, "(0, 1]"),
    (dict(engine="sglang", swa_full_tokens_ratio=-1.0), SettingsError, "swa_full_tokens_ratio"),
    (dict(engine="ollama", num_ctx=-5), SettingsError, "num_ctx"),
    (dict(engine="mlx", batch=0), SettingsError, "batch"),
    (dict(engine="transformers", num_beams=True), SettingsError, "boolean"),
])
def test_wrong_types_and_values_raise_documented_errors(kw, cls, words):
    model = kw.pop("model", "llama3.1:8b")
    engine = kw.pop("engine", "llama.cpp")
    if "vram" not in kw and "gpu" not in kw and "devices" not in kw and "cpu_only" not in kw:
        kw["vram"] = VRAM.get(engine if isinstance(engine, str) else "", "24GiB")
    r = call("api:examples", model, engine, **kw)
    assert isinstance(r, cls) and words in str(r), (kw, r)


def test_right_types_still_work():
    """What the API documents: a size string, an int of bytes, a list of either, catalog names; GB and GiB apart."""
    a = call("api:valid", "llama3.1:8b", vram="24GB")
    b = call("api:valid", "llama3.1:8b", vram=24 * 10**9)
    c = call("api:valid", "llama3.1:8b", vram=[24 * 10**9])
    assert not isinstance(a, Exception) and a.to_dict() == b.to_dict() == c.to_dict()
    assert a.devices[0].memory_bytes == 24 * 10**9
    d = call("api:valid", "llama3.1:8b", vram="24GiB", n_ctx=8192, n_parallel=1)
    assert not isinstance(d, Exception) and d.devices[0].memory_bytes == 24 * 2**30 and d.settings["n_ctx"] == 8192
    assert not isinstance(call("api:valid", "llama3.1:8b", "vllm", gpu="H100", gpu_memory_utilization=1), Exception)
    assert not isinstance(call("api:valid", "llama3.1:8b", cpu_only=True, find_max_context=False), Exception)


@pytest.mark.parametrize("engine", ENGINES)
@given(data=st.data())
@HYPO
def test_every_option_of_every_engine_with_anything(engine, data):
    """Any value in any option: a result or an OomkitError, nothing else, in well under a second or three."""
    names = [f.name for f in fields(get_engine(engine).Settings)]
    name = data.draw(st.sampled_from(names))
    value = data.draw(anything)
    r = call(f"api:{engine}", "llama3.1:8b", engine, vram=VRAM.get(engine, "24GiB"), **{name: value})
    if isinstance(value, bool) and _annotation(engine, name) in ("int", "int | None", "float", "float | None"):
        assert isinstance(r, SettingsError), (name, value, r)
    if isinstance(value, float) and not math.isfinite(value) and "float" in _annotation(engine, name):
        assert isinstance(r, SettingsError), (name, value, r)


def _annotation(engine: str, name: str) -> str:
    return next(str(f.type) for f in fields(get_engine(engine).Settings) if f.name == name)


@given(vram=anything, gpu=st.one_of(st.none(), anything), cpu_only=st.one_of(st.booleans(), anything))
@HYPO
def test_hardware_arguments_with_anything(vram, gpu, cpu_only):
    r = call("api:hardware", "llama3.1:8b", vram=vram, gpu=gpu, cpu_only=cpu_only, find_max_context=False)
    if isinstance(vram, float) or isinstance(vram, bool) or not isinstance(cpu_only, bool):
        assert isinstance(r, SettingsError), (vram, gpu, cpu_only, r)


def test_zz_report_counts(capsys):
    with capsys.disabled():
        print("\nhostile API calls tried:", dict(sorted(TRIED.items())), "total", sum(TRIED.values()))
    assert sum(TRIED.values()) > 0
