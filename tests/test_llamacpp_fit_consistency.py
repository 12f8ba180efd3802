"""What llama.cpp's --fit picks, held against oomkit's own layout of the command it picked, over a grid of models
(dense, sliding-window, chunked attention, MoE, MLA, hybrid recurrent) x GPUs (8 to 128 GiB; CUDA, ROCm, Metal,
Vulkan; one card and two) x commands.

common/fit.cpp (ggml-org/llama.cpp@08033df0; src/llama.cpp llama_params_fit_impl before b8865) measures every try
with common_get_device_memory_data_impl: a no_alloc load (LLAMA_LOAD_MODE_NONE, nothing mapped) and a
llama_context of the same parameters, whose llama_get_memory_breakdown it reads per device. The load that follows
makes the same buffers. So, from the source:

1. the layout of the fitted command is the fit's own dry run of it, device by device -- save Metal's mapped
   weights (MTL0_Mapped spans the file from the device's first tensor to its last, holes included), which the dry
   run does not map: they add to the layout, never take away, and with --no-mmap the two are equal;
2. a command the fit keeps ("no changes needed") leaves the margin on every device;
3. with one device the context step draws a straight line between two dry runs (-fitc and the trained context)
   and returns at once ("entire model can be fit by reducing context"): no third dry run checks the point. Where
   the memory is a straight line in the context between the two, the layout keeps the margin. Where a cache is
   capped between them -- an SWA or chunked-attention cache holds GGML_PAD(min(n_ctx, n_swa x n_seq + n_ubatch),
   256) cells (llama-kv-cache-iswa.cpp), 4096 at -fitc and the cap at the trained context -- the line under-reads
   by that cache's chord and the load takes that much more than the fit projected. PR #18372, which brought the
   line in: "For Gemma 3 a linear interpolation is to my knowledge exact, in principle this could be extended to
   higher polynomial orders by adding more points". Llama 4 Scout with llama-server's four sequences is the case;
4. with several devices nothing is measured again once the devices before the last-filled one get their layers:
   pipeline parallelism (llama-context.cpp: several devices, every layer offloaded, -sm layer, no tensor
   overrides) turns on only then and grows the compute buffers of a device already filled.

(3) and (4) are the engine's own answers, which oomkit keeps: check then reports what the load will need.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest

from oomkit.check import check
from oomkit.engines.base import get_engine
from oomkit.engines.cmdline import parse_command
from oomkit.engines.llamacpp.backends import is_metal, metal_devices
from oomkit.engines.llamacpp.fit import FitResult, dry_run, free_memory, params_fit
from oomkit.engines.llamacpp.kv import kv_caches, resolve_context
from oomkit.engines.llamacpp.settings import LlamaCppSettings
from oomkit.engines.llamacpp.split import model_devices
from oomkit.engines.llamacpp.weights import converted_file
from oomkit.hardware.catalog import devices_for_names
from oomkit.memory import Device
from oomkit.request import resolve_model

MiB = 1 << 20

MODELS = [
    ("meta-llama/Llama-3.1-8B-Instruct", "Q4_K_M"),  # dense
    ("Qwen/Qwen3-32B", "Q4_K_M"),  # dense
    ("meta-llama/Llama-3.3-70B-Instruct", "Q4_K_M"),  # dense, split over two cards
    ("google/gemma-3-27b-it", "Q4_K_M"),  # sliding window
    ("google/gemma-3-4b-it", "Q4_K_M"),  # sliding window
    ("mistralai/Mistral-7B-v0.1", "Q4_K_M"),  # sliding window on every layer
    ("openai/gpt-oss-20b", "MXFP4"),  # sliding window + MoE
    ("meta-llama/Llama-4-Scout-17B-16E-Instruct", "Q4_K_M"),  # chunked attention + MoE
    ("Qwen/Qwen3-30B-A3B-Instruct-2507", "Q4_K_M"),  # MoE
    ("mistralai/Mixtral-8x7B-Instruct-v0.1", "Q4_K_M"),  # MoE
    ("deepseek-ai/DeepSeek-V2-Lite-Chat", "Q4_K_M"),  # MLA
    ("moonshotai/Kimi-Linear-48B-A3B-Instruct", "Q4_K_M"),  # MLA + recurrent
    ("ibm-granite/granite-4.0-h-small", "Q4_K_M"),  # hybrid recurrent + MoE
    ("ibm-granite/granite-4.0-h-tiny", "Q4_K_M"),  # hybrid recurrent + MoE
    ("tiiuae/Falcon-H1-7B-Instruct", "Q4_K_M"),  # hybrid recurrent
]
GPUS = [  # (catalog name, --backend): 8, 12, 16, 24, 32, 48, 80, 128 GiB and 2 x 24
    *((g, "") for g in ("RTX 4060", "RTX 3060", "RTX 4080", "RTX 4090", "RTX 5090", "RTX A6000", "H100 SXM",
                        "DGX Spark", "2x RTX 4090")),
    *((g, "") for g in ("RX 7600", "RX 6700 XT", "RX 7800 XT", "RX 7900 XTX", "R9700", "W7900",
                        "Strix Halo 128GB")),
    *((g, "") for g in ("M2 8GB", "M4 16GB", "M4 Pro 24GB", "M2 Max 32GB", "M4 Max 48GB", "M3 Max 128GB")),
    *((g, "vulkan") for g in ("RTX 3060", "RTX 4090", "RTX A6000", "H100 SXM")),
]
COMMANDS = {
    "llama-server": dict(program="llama-server"),
    "llama-server -np 1 -ctk q8_0 -ctv q8_0": dict(program="llama-server", n_parallel=1, cache_type_k="q8_0",
                                                  cache_type_v="q8_0"),
    "llama-cli -fa off": dict(program="llama-cli", flash_attn="off"),
    "llama-server --no-mmap": dict(program="llama-server", mmap=False),
    # a typed context: the fit keeps it ("context size set by user to 32768 -> no change", common/fit.cpp) and fits the layers,
    # so a model trained on 10M tokens (Llama 4 Scout) has commands the fit leaves unchanged too
    "llama-server -c 32768": dict(program="llama-server", n_ctx=32768),
}


@dataclass(frozen=True)
class Case:
    label: str
    settings: LlamaCppSettings
    devices: tuple[Device, ...]  # as llama.cpp sees them (an Apple GPU: its working set)
    fit: FitResult
    layout: tuple[int, ...]  # the layout's weights + cache + state + compute per device, for the fitted command
    dry: tuple[int, ...]  # the fit's dry run of the command it picked
    targets: tuple[int, ...]  # free - margin per device
    capped: bool  # a cache whose cells stop following the context between -fitc and the trained context


def _capped(spec, s: LlamaCppSettings, fitted: LlamaCppSettings) -> bool:
    """Whether any cache is neither a constant nor proportional to the context between the two dry runs the
    context step draws its line through (its -fitc and its trained context, times the streams)."""
    ctx0 = resolve_context(spec, s)
    streams = 1 if ctx0.kv_unified else max(1, ctx0.n_seq_max)
    lo, hi = s.fit_ctx * streams, spec.n_ctx_train * streams
    a = kv_caches(spec, resolve_context(spec, replace(fitted, n_ctx=lo)), s.swa_full)
    b = kv_caches(spec, resolve_context(spec, replace(fitted, n_ctx=hi)), s.swa_full)
    return any(x.cells != y.cells and x.cells * hi != y.cells * lo for x, y in zip(a, b, strict=True))


def cases(model: str, quant: str) -> list[Case]:
    eng = get_engine("llama.cpp")
    base = resolve_model(eng, model, quant)
    out = []
    for gpu, backend in GPUS:
        given = devices_for_names(gpu)
        for name, kw in COMMANDS.items():
            s = LlamaCppSettings(**kw, backend=backend)
            spec = eng.model_for(base, s)
            # the spec and devices llama.cpp's fit sees, as layout.estimate gives them to it
            fspec, devs = converted_file(spec, s), metal_devices(model_devices(given, s))
            fit = params_fit(fspec, devs, s, given=given)
            est = eng.estimate(spec, given, s)
            by_id = {u.id: u.weights_bytes + u.kv_cache_bytes + u.recurrent_state_bytes + u.compute_bytes
                     for u in est.devices}
            dry = dry_run(fspec, devs, fit.settings)
            out.append(Case(f"{model} {gpu}{' (Vulkan)' if backend else ''}: {name}", s, devs, fit,
                            tuple(by_id[d.id] for d in devs), tuple(dry[i].total for i in range(len(devs))),
                            tuple(free_memory(d) - fit.margins[i] for i, d in enumerate(devs)),
                            _capped(fspec, s, fit.settings)))
    return out


_CASES: dict[str, list[Case]] = {}


def grid(model: str, quant: str) -> list[Case]:
    if model not in _CASES:
        _CASES[model] = cases(model, quant)
    return _CASES[model]


def _mapped(c: Case) -> bool:
    return c.settings.mmap and any(is_metal(d) for d in c.devices)


@pytest.mark.parametrize(("model", "quant"), MODELS, ids=[m for m, _ in MODELS])
def test_the_layout_of_the_fitted_command_is_the_fits_dry_run(model, quant):
    """(1) Device by device, to the byte; Metal with mmap maps its range beside, never less than the dry run's
    tensors: the dry run maps nothing, so its Metal tensors take the MTL0 buffer type's ggml_nbytes at 32-byte
    alignment (ggml-metal.cpp ggml_backend_metal_buffer_type_get_alloc_size), as the --no-mmap load does, and the
    mapped range has no row padding either."""
    for c in grid(model, quant):
        assert c.fit.status in ("fitted", "unchanged"), c.label
        if _mapped(c):
            assert all(x >= y for x, y in zip(c.layout, c.dry, strict=True)), (c.label, c.layout, c.dry)
        else:
            assert c.layout == c.dry, (c.label, c.layout, c.dry)


@pytest.mark.parametrize(("model", "quant"), MODELS, ids=[m for m, _ in MODELS])
def test_a_command_the_fit_keeps_leaves_the_margin(model, quant):
    """(2) "no changes needed": every device keeps free - margin in the layout (Metal's mapped range aside)."""
    kept = [c for c in grid(model, quant) if c.fit.status == "unchanged" and not _mapped(c)]
    assert kept  # every model has commands the fit keeps (Llama 4 Scout, trained on 10M tokens: only at -c 32768)
    for c in kept:
        assert all(x <= t for x, t in zip(c.layout, c.targets, strict=True)), (c.label, c.layout, c.targets)


def _past_the_line(c: Case) -> bool:
    """A context fit the line may under-read: a cache capped between the two dry runs, oomkit's -fa off compute
    (no straight line in the context either), or several devices (the fit's context step weighs them together)."""
    return c.capped or c.settings.flash_attn == "off" or len(c.devices) != 1


@pytest.mark.parametrize(("model", "quant"), MODELS, ids=[m for m, _ in MODELS])
def test_a_context_fitted_on_one_device_keeps_the_margin_where_the_caches_follow_the_context(model, quant):
    """(3) One device, the context alone reduced ("entire model can be fit by reducing context"), every cache a
    constant or proportional to the context between the two dry runs, flash attention on: the layout keeps the
    margin. (With -fa off oomkit's compute figure is no straight line in the context either, and three such fits
    of the grid run past the line by 1 to 36 MiB: gpt-oss-20b on Vulkan by 25 at 79872.)"""
    fitted = [c for c in grid(model, quant) if c.fit.status == "fitted" and not _mapped(c)
              and c.fit.lines[-1] == "entire model can be fit by reducing context"]
    assert fitted  # every model's context is reduced somewhere in the grid
    checked = [c for c in fitted if not _past_the_line(c)]
    for c in checked:
        assert c.layout[0] <= c.targets[0], (c.label, c.fit.settings.n_ctx, (c.layout[0] - c.targets[0]) // MiB)
    # a model checks a handful of such fits, unless every context fit of its grid is one the line may under-read
    # (Gemma 3 and Llama 4 Scout: capped caches; gpt-oss-20b: context reduced only with -fa off)
    assert len(checked) >= 4 or not checked, [c.label for c in checked]


def test_every_one_device_context_past_its_margin_has_a_capped_cache():
    """(3) the other way: across the grid, a one-device context fit with flash attention on whose layout runs
    past the margin always has a cache capped between -fitc and the trained context (Gemma 3's SWA cache of
    1024 x 4 + 512 cells with llama-server's four sequences, Llama 4's chunked cache of 8192 x 4 + 512)."""
    past = [c for m, q in MODELS for c in grid(m, q)
            if len(c.devices) == 1 and c.fit.status == "fitted" and c.settings.flash_attn != "off"
            and not _mapped(c) and c.fit.lines[-1] == "entire model can be fit by reducing context"
            and c.layout[0] > c.targets[0]]
    assert past and all(c.capped for c in past), [c.label for c in past if not c.capped]


# Llama 4 Scout (meta-llama/Llama-4-Scout-17B-16E-Instruct config.json, text_config): 48 layers, every fourth a
# global attention layer without RoPE (no_rope_layers / nope_layer_interval 4), the other 36 chunked
# (attention_chunk_size 8192); 8 KV heads of 128; trained context 10485760. llama-server: -np auto = 4 sequences
# in one unified cache (PR #16736), -ub 512, f16 K and V: 2 x 8 x 128 x 2 B = 4096 B a layer per cell.
SCOUT = "unsloth/Llama-4-Scout-17B-16E-Instruct-GGUF:Q4_K_M"
SCOUT_FULL, SCOUT_CHUNKED, SCOUT_CELL = 12, 36, 2 * 8 * 128 * 2
SCOUT_TRAIN, FITC = 10485760, 4096
SCOUT_CAP = 8192 * 4 + 512  # GGML_PAD(n_swa * n_seq_max + n_ubatch, 256) = 33280


def test_scout_on_strix_halo_is_the_lines_under_read():
    """llama-server -hf unsloth/Llama-4-Scout-17B-16E-Instruct-GGUF:Q4_K_M on a 128 GB Strix Halo: oomkit's fit
    reduces the context from 10485760 to 1391872 and check says it does not fit. This is a consistency check of
    oomkit's fit against oomkit's own layout, not an engine print: the expected context is built from oomkit's
    own dry_run, and what it holds to is the property of llama.cpp's fit (common/fit.cpp) that its dry run of a
    command equals the load of it. The line through the dry runs at 4096 and 10485760 sees the 36 chunked layers at
    4096 cells and at 33280, so at 1391872 it misses 36 x 4096 B x (33280 - 4096) x (10485760 - 1391872) /
    (10485760 - 4096) = 3560.5 MiB that the chunked cache holds there; with its 1024 MiB margin the layout is
    2.5 GiB past the device."""
    p = parse_command(["llama-server", "-hf", SCOUT])
    r = check(p.model, p.engine, quant=p.quant, settings=p.settings, gpu="Strix Halo 128GB")
    view, dev = r.estimate.engine_view, r.estimate.devices[0]
    n = r.n_ctx
    assert f"context size reduced from {SCOUT_TRAIN} to {n} -> need" in view["fit_log"]
    assert view["fit_log"].endswith("entire model can be fit by reducing context")
    # the cache at that context, from the model's shapes and llama_kv_cache_iswa's sizes
    assert dev.kv_cache_bytes == (SCOUT_FULL * n + SCOUT_CHUNKED * SCOUT_CAP) * SCOUT_CELL
    # the line's point: the fit's own two dry runs (the command as typed at each context, no fit)
    eng = get_engine("llama.cpp")
    devs = metal_devices(devices_for_names("Strix Halo 128GB"))
    spec = converted_file(eng.model_for(resolve_model(eng, p.model, p.quant), p.settings), p.settings)
    lo, hi = (dry_run(spec, devs, replace(p.settings, n_ctx=c))[0].total for c in (FITC, SCOUT_TRAIN))
    target = free_memory(devs[0]) - 1024 * MiB
    expect = FITC + (SCOUT_TRAIN - FITC) * (target - lo) // (hi - lo)
    assert n == expect - expect % 256
    chord = SCOUT_CHUNKED * SCOUT_CELL * (SCOUT_CAP - FITC) * (SCOUT_TRAIN - n) / (SCOUT_TRAIN - FITC)
    self_bytes = dev.weights_bytes + dev.kv_cache_bytes + dev.compute_bytes
    over = self_bytes - target
    # past the target by the chord, give or take the compute buffer's own bend and the 256-token rounding (1%)
    assert abs(over - chord) < 0.01 * chord, (over / MiB, chord / MiB)
    assert r.fits is False and -r.margin_bytes == over - 1024 * MiB  # the runtime is in both free and needed
    note = next(w for w in r.estimate.warnings if w.startswith("llama.cpp's --fit"))
    assert "does not measure the context it picks" in note and "chunked cache" in note, note


def test_the_device_filled_first_is_not_measured_again():
    """(4) Llama 3.3 70B Q4_K_M on two RTX 4090s: the fit fills CUDA1 with layers (the output one among them)
    against its target, then CUDA0 with the rest. Only then is every layer offloaded, pipeline parallelism
    turns on and CUDA1's compute buffers grow; the source measures CUDA1 no more. Its weights and cache are what
    the fit measured: only the compute moved, and that is all it is over by."""
    eng = get_engine("llama.cpp")
    s = LlamaCppSettings(program="llama-server")
    devs = devices_for_names("2x RTX 4090")
    spec = converted_file(eng.model_for(resolve_model(eng, "meta-llama/Llama-3.3-70B-Instruct", "Q4_K_M"), s), s)
    fit = params_fit(spec, devs, s)
    n0, n1 = fit.layers_per_device
    assert n0 + n1 == 80 + 1 and fit.settings.n_gpu_layers == 81  # every layer offloaded, the output one too
    target = free_memory(devs[1]) - fit.margins[1]
    logged = next(ln for ln in fit.lines if ln.startswith("  - CUDA1") and " layers, " in ln)
    filled = replace(fit.settings, tensor_split=(0.0, float(n1)), n_gpu_layers=n1)  # CUDA1's try: CUDA0 empty
    at_fill, final = dry_run(spec, devs, filled)[1], dry_run(spec, devs, fit.settings)[1]
    assert f"{at_fill.total // MiB} MiB used" in logged and at_fill.total <= target
    assert (final.model, final.context) == (at_fill.model, at_fill.context)
    assert final.total > target and final.compute - at_fill.compute >= final.total - target


def test_an_apple_gpu_offers_the_fit_its_whole_working_set():
    """ggml-metal reads free = recommendedMaxWorkingSetSize - currentAllocatedSize (ggml-metal-device.m
    ggml_metal_device_get_memory), the Metal runtime's memory not in it. llama-completion b8164 on an Apple M5
    (24 GB; "recommendedMaxWorkingSetSize = 19069.67 MB") prints "vs. 18185 MiB of free device memory"
    (https://github.com/ontouchstart/rabbit-holes/blob/c3f36b2a72a76f6c2962075f4db4337e222f1f01/ggml-gpt-oss-20b-GGUF/ggml-gpt-oss-20b-GGUF-curl.md):
    the working set less 1 MiB, where a CUDA or ROCm card's free memory is after its runtime's share."""
    eng = get_engine("llama.cpp")
    s = LlamaCppSettings(program="llama-cli", engine_version="b8164")
    spec = eng.model_for(resolve_model(eng, "openai/gpt-oss-20b", "MXFP4"), s)
    devs = metal_devices(devices_for_names("M5 24GB"))
    assert round(devs[0].memory_bytes / 1e6, 2) == 19069.67  # the catalog's Mac gives the log's working set
    fit = params_fit(converted_file(spec, s), devs, s)
    free_mib = int(fit.lines[0].split(" MiB of device memory vs. ")[1].split()[0])
    assert abs(free_mib - 18185) <= 1, fit.lines[0]
    assert fit.status == "unchanged"  # the log: no changes needed, 131072 kept
