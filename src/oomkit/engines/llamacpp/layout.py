"""The estimate: llama.cpp's buffers per device, in the order it creates them (context, KV caches and recurrent
state, model buffers, output and compute buffers), and the figures it prints at start-up (engine_view)."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from ...memo import SEARCHING
from ...memory import Device, LayerUse, MemoryEstimate, Usage
from ...model.spec import ModelSpec
from ...units import GiB, MiB
from .backend_names import backend_of_names, infer_backend
from .backends import (
    backend_view,
    cpu_repack,
    hexagon_buffers,
    hexagon_compute,
    hexagon_refused,
    metal_devices,
    opencl_buffers,
    split_cpu_overrides,
    split_host_embeddings,
    split_repack,
)
from .compute import (
    BLAS_KEY,
    SCHED_MAX_COPIES,
    compute_by_device,
    device_auto_fa_off,
    device_fa_on_host,
    output_buffer_bytes,
    pipeline_parallel,
)
from .fit import (
    FIT_ERAS,
    GPU_RUNTIME_RESERVE,
    NO_FIT_PROGRAMS,
    ROUGH_SEARCHES,
    Breakdown,
    FitResult,
    StateByDevice,
    applies,
    breakdown_table,
    memory_breakdown,
    mmproj_compute_known,
    mmproj_margin,
    params_fit,
    state_by_device,
)
from .kv import Cache, Context, kv_bytes_per_token, kv_caches, recurrent_bytes_by_layer, resolve_context
from .mtp import engine_view as mtp_engine_view
from .mtp import mtp_context
from .settings import ERAS, LlamaCppSettings, build_number, check_build, fa_form_note, version_warning
from .split import has_split_buffers, model_devices, row_split_era
from .weights import ModelBuffers, Placement, converted_file, model_buffers, place_layers, pre_mla_file


def estimate(spec: ModelSpec, devices: tuple[Device, ...], s: LlamaCppSettings) -> MemoryEstimate:
    """What llama.cpp loads. With --fit (on by default since its build) it first fits the command to the free
    memory (common_params_fit_impl, fit.py); the estimate is then the fitted layout's, the command as typed is
    kept under engine_view typed_*, and fit_* record what the fit decided. A failed fit keeps what it changed
    before it gave up (the context: the source sets cparams.n_ctx before it throws)."""
    check_build(s)  # flags the build's own parser refuses (-fa's form, -cd, --spec-type names)
    if not ERAS.reached(build_number(s.engine_version), "mla_latent"):
        # builds before PR #12801 load only GGUFs converted before it (attn_kv_b whole, no *_mla keys): a
        # catalog-computed DeepSeek / Kimi spec is that file there (a spec read from a file stays as it is)
        spec = pre_mla_file(spec)
    spec = converted_file(spec, s)  # a catalog spec as the build's converter writes it (Qwen3.5's next-n block)
    given, devices = devices, metal_devices(model_devices(devices, s))  # an Apple GPU offers its working set
    fitted = params_fit(spec, devices, s, given=given) if applies(s, devices) else None
    # a host fit that fails with nothing changed (-c typed) still says so: llama.cpp logs it and loads as typed
    if fitted is None or (_same_layout(fitted.settings, s) and (devices or fitted.status != "failed")):
        return _estimate(spec, devices, s, fitted, rough=SEARCHING.get() == "offload")
    typed = _estimate(spec, devices, s, None)
    # in a search, a layout split with the CPU counts only as not fitting (FittedEstimate.fits): no exact replay
    est = _estimate(spec, devices, fitted.settings, fitted, typed,
                    rough=SEARCHING.get() in ROUGH_SEARCHES and _moves_weights(fitted, spec))
    view = est.engine_view
    view.update({f"typed_{k}": typed.engine_view[k] for k in TYPED_KEYS})
    view["typed_total_bytes"] = {u.id: u.total_bytes for u in typed.devices}
    view["typed_fits"] = typed.fits
    return FittedEstimate(**{f.name: getattr(est, f.name) for f in fields(MemoryEstimate)},
                          split=_moves_weights(fitted, spec))


@dataclass(frozen=True)
class FittedEstimate(MemoryEstimate):
    """The layout --fit loads. When the fit had to put weights in system RAM (fewer layers on the GPUs, expert or
    FFN tensors to the CPU) the command runs, split with the CPU: not a fit, as Ollama's split is not (the
    planner's second tier). A fit that only shrank the context is a fit."""

    split: bool = False

    @property
    def fits(self) -> bool | None:
        base = MemoryEstimate.fits.fget(self)
        return None if base is None else base and not self.split


def _moves_weights(fitted: FitResult, spec: ModelSpec) -> bool:
    """Whether the fit left weights in system RAM: fewer than every layer (the output layer counts as one) on the
    GPUs, or tensors overridden to the CPU (an overflow to the next GPU is not)."""
    return ((fitted.n_gpu_layers is not None and fitted.n_gpu_layers < spec.n_layers + 1)
            or any(b == "CPU" for _, b in fitted.overrides))


# the figures of the command as typed, kept beside the fitted layout's (engine_view typed_*)
TYPED_KEYS = ("n_ctx", "offloaded_layers", "model_buffer_bytes", "kv_buffer_bytes", "compute_buffer_bytes",
              "pipeline_parallel", "memory_breakdown")


def _same_layout(a: LlamaCppSettings, b: LlamaCppSettings) -> bool:
    return (a.n_ctx, a.n_gpu_layers, a.tensor_split, a.override_tensor, a.cpu_moe, a.n_cpu_moe) == (
        b.n_ctx, b.n_gpu_layers, b.tensor_split, b.override_tensor, b.cpu_moe, b.n_cpu_moe)


def fitted_settings(spec: ModelSpec, devices: tuple[Device, ...], s: LlamaCppSettings) -> LlamaCppSettings:
    """The settings llama.cpp runs with after --fit (the typed ones when the fit does not apply or changes
    nothing); --fit off so that estimating them again does not fit a second time."""
    given, devices = devices, metal_devices(model_devices(devices, s))
    if not applies(s, devices):
        return s
    return replace(params_fit(spec, devices, s, given=given).settings, fit=False)


def _estimate(spec: ModelSpec, devices: tuple[Device, ...], s: LlamaCppSettings,
              fitted: FitResult | None, typed: MemoryEstimate | None = None, rough: bool = False) -> MemoryEstimate:
    ctx = resolve_context(spec, s)
    caches = kv_caches(spec, ctx, s.swa_full)
    rs = recurrent_bytes_by_layer(spec, ctx, s)
    placement = place_layers(spec, devices, s)
    ctx = device_auto_fa_off(spec, ctx, placement, devices, s)  # -fa auto as llama_context resolves it
    # Hexagon: the weights an HTP session refuses stay in the CPU buffer (backends.hexagon_buffers)
    weights, htp_repack = hexagon_buffers(spec, devices, s, placement, model_buffers(spec, devices, s, placement))
    weights = opencl_buffers(spec, devices, s, placement, weights)  # OpenCL's own tensor sizes
    weights, repack = cpu_repack(spec, devices, s, weights, placement)
    state = state_by_device(caches, rs, placement, s)
    out_bytes = output_buffer_bytes(spec, ctx, s)
    compute = hexagon_compute(compute_by_device(spec, ctx, caches, placement, devices, s, rough), spec, ctx, caches,
                              placement, devices, s)
    weights, state, compute = row_split_era(spec, devices, s, placement, weights, state, compute)  # before b1843
    mtp = mtp_context(spec, devices, s, ctx.n_ctx, placement)  # --spec-type draft-mtp: a second context (mtp.py)
    mkv, mcomp = (mtp.kv, mtp.compute) if mtp else ({}, {})

    usages = tuple(Usage(
        id=dev.id, name=dev.name, memory_bytes=dev.memory_bytes, weights_bytes=weights.by_device.get(i, 0),
        kv_cache_bytes=state.kv.get(i, 0) + mkv.get(i, 0), recurrent_state_bytes=state.rs.get(i, 0),
        compute_bytes=compute.get(i, 0) + mcomp.get(i, 0), overhead_bytes=GPU_RUNTIME_RESERVE,
    ) for i, dev in enumerate(devices))
    host = Usage(id="CPU", name="host", weights_bytes=weights.host_weight_bytes + repack,
                 kv_cache_bytes=state.kv.get(-1, 0) + mkv.get(-1, 0),
                 recurrent_state_bytes=state.rs.get(-1, 0),
                 compute_bytes=sum(b for d, b in compute.items() if d < 0) + sum(b for d, b in mcomp.items() if d < 0),
                 overhead_bytes=out_bytes + (mtp.output if mtp else 0))
    view = engine_view(spec, devices, ctx, caches, rs, placement, weights, state, compute, out_bytes)
    view.update(mtp_engine_view(mtp, devices) if mtp else {})
    view["pipeline_parallel"] = pipeline_parallel(spec, placement, devices, s)
    view["n_copies"] = SCHED_MAX_COPIES if view["pipeline_parallel"] else 1
    view.update(_pipeline_parallel_view(view["pipeline_parallel"], devices))
    # common_memory_breakdown_print's table, as text
    view["memory_breakdown"] = "\n".join(breakdown_table(
        devices, memory_breakdown(weights, state, compute, len(devices)),
        others=(("CPU_REPACK", Breakdown(model=repack)),) if repack else ()))
    view.update(_fit_view(fitted, s, devices))
    if s.engine_version != f"b{ctx.build}":
        view["build"] = f"b{ctx.build}"  # the build a date or an LM Studio runtime reads as
    if repack:
        view["model_buffer_bytes"]["CPU_REPACK"] = repack
    view = backend_view(view, devices, s, ctx.build)  # the buffer names the backend prints
    view = split_repack(view, devices, htp_repack)
    view = split_host_embeddings(view, devices, s, weights, ctx.build)
    view = split_cpu_overrides(view, devices, s, spec, weights, ctx.build)
    return MemoryEstimate(model=spec, engine="llama.cpp", settings=_effective_settings(s, ctx, placement),
                          devices=usages, host=host, engine_view=view, kv_bytes_per_token=kv_bytes_per_token(spec, ctx),
                          layers=_layer_uses(spec, devices, rs, placement, state),
                          warnings=tuple(_warnings(spec, devices, s, ctx, fitted, typed, usages,
                                                     (host.total_bytes, repack, host.weights_bytes))))


def _pipeline_parallel_view(on: bool, devices: tuple[Device, ...]) -> dict[str, str]:
    """The line llama.cpp prints when it runs pipeline-parallel (llama_init_from_model, later llama_context:
    "pipeline parallelism enabled (n_copies=%d)", after the output buffer and before the compute buffers), so a log
    shows whether oomkit's assumption held. It rests on the build (compute.pipeline_parallel): ggml-cuda reports no
    events when compiled with GGML_CUDA_NO_PEER_COPY (an option, OFF by default for CUDA and HIP alike:
    ggml/CMakeLists.txt, ggml/src/ggml-hip/CMakeLists.txt), and a BLAS backend compiled in (GGML_BLAS: an ACCEL
    device in every context, which reports neither async compute nor events); such a build prints no line and keeps
    one copy of the inputs (the async_events setting)."""
    if not on:
        return {"pipeline_parallel_line": "", "pipeline_parallel_note": ""}
    note = ""
    if any(d.id.startswith(("CUDA", "ROCm", "HIP")) for d in devices):
        note = (f"oomkit assumes pipeline parallelism ({SCHED_MAX_COPIES} copies of the graph inputs); a build with "
                "-DGGML_CUDA_NO_PEER_COPY=ON or -DGGML_BLAS=ON reports no events, prints no such line and keeps one "
                "copy (async_events=False)")
    return {"pipeline_parallel_line": f"pipeline parallelism enabled (n_copies={SCHED_MAX_COPIES})",
            "pipeline_parallel_note": note}


def _fit_view(fitted: FitResult | None, s: LlamaCppSettings, devices: tuple[Device, ...]) -> dict[str, Any]:
    """What --fit decided (common_params_fit_impl), flat for the report: the status, the context, -ngl, -ts and
    -ot it set, the margin kept per device and its log lines."""
    if fitted is None:
        if not s.fit:
            why = "-fit off"
        elif s.program in NO_FIT_PROGRAMS:
            why = f"{s.program} does not fit"
        elif not devices and not ERAS.reached(build_number(s.engine_version), "params_fit"):
            why = f"build {s.engine_version} predates --fit"
        elif not devices and s.host_memory is None:
            why = "no device, and the host's memory is not known: give --ram SIZE"
        elif not devices:
            why = (f"no device: builds before b{FIT_ERAS['host_fit']} (PR #21568) do not fit the context to the "
                   "host's memory")
        elif any(d.memory_bytes is None and d.free_bytes is None for d in devices):
            why = "a device of unknown size"
        else:
            why = f"build {s.engine_version} predates --fit"
        return {"fit": f"off ({why})"}
    host = {} if devices else {"fit_host_memory_bytes": s.host_memory}  # the total the host fit weighs
    return {
        **host,
        "fit": fitted.status,
        "fit_n_ctx": fitted.n_ctx,
        "fit_n_gpu_layers": fitted.n_gpu_layers,
        "fit_tensor_split": ",".join(map(str, fitted.layers_per_device)) if len(devices) > 1 else "",
        "fit_override_tensor": ",".join(f"{p}={b}" for p, b in fitted.overrides),
        "fit_target_bytes": ({d.id: m for d, m in zip(devices, fitted.margins, strict=True)} if devices
                             else {"CPU": fitted.margins[0]}),
        "fit_dry_runs": fitted.dry_runs,
        "fit_log": "\n".join(fitted.lines),
        # common_memory_breakdown_print of the fit's first dry run (no_alloc), as the log prints it
        "fit_memory_breakdown": "\n".join(fitted.table),
        # the draft model's or MTP context's rows the fit counted per device, then the host (fit.py draft_at)
        **({"fit_draft_bytes": dict(zip([*(d.id for d in devices), "CPU"], fitted.draft, strict=False))}
           if fitted.draft else {}),
    }


def _dev_name(devices: tuple[Device, ...], d: int) -> str:
    return "CPU" if d < 0 else devices[d].id


def engine_view(spec: ModelSpec, devices: tuple[Device, ...], ctx: Context, caches: list[Cache],
                rs: dict[int, tuple[int, int]], placement: Placement, weights: ModelBuffers, state: StateByDevice,
                compute: dict[int, int], out_bytes: int) -> dict[str, Any]:
    """What llama.cpp prints at start-up (llama_context, llama_kv_cache, load_tensors), per buffer name."""
    def dev_name(d: int) -> str:
        return _dev_name(devices, d)

    swa = next((c for c in caches if c.name == "SWA"), None)
    model_buffers_view = {f"{dev_name(d)}": b for d, b in sorted(weights.by_device.items())}
    if weights.cpu_tensors:
        model_buffers_view[weights.host_buffer_type] = weights.host_buffer_bytes
    host_compute_name = "CPU" if not devices else f"{devices[0].id}_Host"
    return {
        "n_ctx": ctx.n_ctx,
        "n_ctx_seq": ctx.n_ctx_seq,
        "n_seq_max": ctx.n_seq_max,
        "kv_unified": ctx.kv_unified,
        "flash_attn": ctx.flash_attn,
        "n_ubatch": ctx.n_ubatch,
        "type_k": ctx.type_k.name,
        "type_v": ctx.type_v.name,
        "kv_buffer_bytes": {dev_name(d): b for d, b in sorted(state.kv.items())},
        "k_bytes": sum(c.k_bytes for c in caches),
        "v_bytes": sum(c.v_bytes for c in caches),
        "swa_kv_bytes": (swa.k_bytes + swa.v_bytes) if swa else 0,
        "kv_caches": [{"name": c.name, "cells": c.cells, "layers": len(c.layers), "k_bytes": c.k_bytes,
                       "v_bytes": c.v_bytes, "streams": ctx.n_stream} for c in caches],
        "n_rs_seq": ctx.n_rs_seq,  # "llama_context: n_rs_seq = N" (the draft's rollback snapshots per sequence)
        "recurrent_state_bytes": sum(r + st for r, st in rs.values()),
        "r_bytes": sum(r for r, _ in rs.values()),
        "s_bytes": sum(st for _, st in rs.values()),
        "rs_buffer_bytes": {dev_name(d): b for d, b in sorted(state.rs.items())},
        "model_buffer_bytes": model_buffers_view,
        "compute_buffer_bytes": {("CPU" if d == BLAS_KEY else host_compute_name if d < 0 else dev_name(d)): b
                                 for d, b in sorted(compute.items())},
        "output_buffer_bytes": out_bytes,
        "offloaded_layers": f"{placement.n_gpu_layers}/{spec.n_layers + 1}",
    }


def _warnings(spec: ModelSpec, devices: tuple[Device, ...], s: LlamaCppSettings, ctx: Context,
              fitted: FitResult | None = None, typed: MemoryEstimate | None = None,
              usages: tuple[Usage, ...] = (), host_bytes: tuple[int, int, int] = (0, 0, 0)) -> list[str]:
    warnings = []
    backend = infer_backend(devices, s.backend or backend_of_names(s.device)).name
    if s.split_mode == "row" and len(devices) > 1 and has_split_buffers(backend, build_number(s.engine_version)):
        # llama-model.cpp make_gpu_buft_list with LLAMA_SPLIT_MODE_ROW: layers, KV cache and compute follow the layer
        # split, but each device's list starts with a split buffer type (CUDA0_Split, ...) that cuts the layer's
        # matrices by rows over all devices (-ts); the model buffers per device are not modelled here
        warnings.append("-sm row keeps the layer split for layers, KV cache and compute but cuts each layer's weight "
                        f"matrices by rows over all devices ({devices[0].id}_Split ... buffers); oomkit shows each "
                        "layer's weights on its own device")
    elif (len(devices) > 1 and backend in ("cuda", "rocm") and place_layers(spec, devices, s).n_gpu_layers
          and not ERAS.reached(build_number(s.engine_version), "split_layer")):
        # split.row_split_era: the only multi-GPU layout before PR #4766 (b1843)
        warnings.append(f"llama.cpp before b{ERAS['split_layer']} cuts each offloaded weight matrix by rows over "
                        f"the GPUs (-ts) and keeps the KV cache and compute scratch on the main GPU (-mg); its "
                        "per-GPU cuBLAS buffer pool is not counted")
    elif s.split_mode == "row" and len(devices) > 1:
        # before b9890 make_gpu_buft_list passed over a backend without "ggml_backend_split_buffer_type" (Vulkan,
        # Metal, ...): its devices' default buffer types, the layers as -sm layer places them (split.has_split_buffers)
        warnings.append(f"-sm row: this build's {backend} backend has no split buffers, so the layers are placed as "
                        "with -sm layer (without its pipeline parallelism)")
    n_refused, refused_bytes = hexagon_refused(spec, devices, s, place_layers(spec, devices, s))
    if n_refused:
        # ggml-hexagon.cpp supports_op: select_weight_buft falls back to the CPU buffer for these (backends.htp_takes)
        warnings.append(f"the Hexagon NPU multiplies only Q4_0, Q8_0 and MXFP4 (and F16) weights: {n_refused} of the "
                        f"offloaded layers' matrices ({refused_bytes / GiB:.2f} GiB) are of other types and stay in the "
                        "CPU buffer, their matmuls on the CPU (a Q4_0 file keeps them on the NPU)")
    if fitted is not None and typed is not None:
        note = _fit_note(spec, fitted, typed, ctx, usages, host_bytes)
        if mmproj_margin(spec, fitted.settings) and not mmproj_compute_known(spec, fitted.settings):
            # PR #21489 adds the projector's weights and compute buffer; the latter is modelled for some graphs
            note = note.replace(" (engine_view fit_*", "; its target holds the --mmproj file but not the projector's "
                                "compute buffer, which llama.cpp adds too (engine_view fit_*", 1)
        warnings.append(note)
    if s.n_ctx and spec.n_ctx_train and ctx.n_ctx_seq > spec.n_ctx_train:
        warnings.append(f"n_ctx_seq ({ctx.n_ctx_seq}) > n_ctx_train ({spec.n_ctx_train}): the model was not "
                        "trained for this context; quality may drop unless RoPE scaling is set")
    if ctx.fa_auto_off:
        warnings.append("-fa auto: the GPU backend has no flash-attention kernel for this model's attention "
                        "(its heads; K and V caches of different types on Metal, or in CUDA / ROCm default builds "
                        "before PR #28079, which also lack q4_1 / q5_0 / q5_1 caches; or a Metal device without "
                        "simdgroup matrix multiplication), so llama.cpp turns flash attention off (\"Flash Attention "
                        "was auto, set to disabled\", later \"Flash Attention not supported, set to disabled\"); "
                        "the KV cache keeps its flash-attention layout")
    elif device_fa_on_host(spec, ctx, [], place_layers(spec, devices, s), devices, s)[0]:
        warnings.append("the GPU backend has no flash-attention kernel for this model's attention (its heads; "
                        "K and V caches of different types on Metal, or in CUDA / ROCm default builds before PR "
                        "#28079, which also lack q4_1 / q5_0 / q5_1 caches; or a Metal device without simdgroup "
                        "matrix multiplication): with -fa on, llama.cpp runs each layer's flash "
                        "attention on the CPU, with copies of the layer's K and V views in the host's compute buffer")
    if not devices:
        warnings.append("no GPU: every buffer is on the CPU")
    if (note := version_warning(s.engine_version)) is not None:
        warnings.append(note)
    if (note := fa_form_note(s)) is not None:
        warnings.append(note)
    return warnings


def _fit_note(spec: ModelSpec, fitted: FitResult, typed: MemoryEstimate, ctx: Context,
              usages: tuple[Usage, ...], host_bytes: tuple[int, int, int] = (0, 0, 0)) -> str:
    """What --fit changed against the typed command, in one line: the context it reduced, the layers and expert
    tensors it moved to the CPU, the margin it keeps; and whether the result fits."""
    tv = typed.engine_view
    what, keep = [], []
    if ctx.n_ctx != tv["n_ctx"]:  # raised: one trained context per stream without a unified cache (PR #27496)
        what.append(f"{'reduces' if ctx.n_ctx < tv['n_ctx'] else 'raises'} the context from {tv['n_ctx']} to "
                    f"{ctx.n_ctx}")
        keep.append(f"the context of {tv['n_ctx']}")
    typed_ngl = int(tv["offloaded_layers"].split("/")[0])
    if fitted.n_gpu_layers is not None and fitted.n_gpu_layers < typed_ngl:
        n = typed_ngl - fitted.n_gpu_layers
        what.append(f"moves {n} layer{'s' * (n != 1)} to the CPU (-ngl {fitted.n_gpu_layers})")
        keep.append("every layer on the GPU")
    if cpu := [p for p, b in fitted.overrides if b == "CPU"]:
        n, kind = len(cpu), "expert" if any(lay.ffn and lay.ffn.n_experts for lay in spec.layers) else "FFN"
        what.append(f"moves the {kind} tensors of {n} layer{'s' * (n != 1)} to the CPU (-ot)")
        if not keep or keep[-1] != "every layer on the GPU":
            keep.append("every tensor on the GPU")
    if len(fitted.layers_per_device) > 1:
        what.append(f"splits the layers {':'.join(map(str, fitted.layers_per_device))} over the devices (-ts)")
    margins = "/".join(str(m // MiB) for m in fitted.margins)
    fits = all(u.total_bytes <= u.memory_bytes for u in usages if u.memory_bytes is not None)
    host = fitted.settings.host_memory if not usages else None
    if host is not None:  # the host fit: llama.cpp's own words, and whether the host holds what it loads
        left = host - host_bytes[0]
        end = (f"it leaves {left // MiB} MiB of the host's {host // MiB} MiB" if left >= 0 else
               f"it needs {-left // MiB} MiB more than the host's {host // MiB} MiB")
        if left < 0 and host_bytes[2] > host:
            end += f", whose memory cannot hold the weights ({host_bytes[2] // MiB} MiB)"
        elif left < 0 and host_bytes[1] and fitted.status != "failed":
            # common_get_device_memory_data_impl adds no row for CPU_REPACK (not a host buffer type, and the CPU is
            # none of the model's devices): the fit leaves the repacked weights out
            end += f" (the fit does not count the {host_bytes[1] // MiB} MiB of repacked weights, CPU_REPACK)"
        if fitted.status == "failed":
            return (f"llama.cpp's --fit (on by default) fails on this host: \"failed to fit params to free device "
                    f"memory: {fitted.lines[-1].split(': ', 1)[-1]}\""
                    + (f"; it still {' and '.join(what)} and loads the rest as typed" if what else "")
                    + f"; {end} (engine_view fit_*, typed_*)")
        return (f"llama.cpp's --fit (on by default) {', '.join(what) or 'changes the layout'} to leave {margins} MiB "
                f"of the host's {host // MiB} MiB free; {end}"
                + (f"; add -fit off to keep {' and '.join(keep)}" if keep else "") + " (engine_view fit_*, typed_*)")
    if fitted.status == "failed":
        line = (f"llama.cpp's --fit (on by default) cannot fit this command ({fitted.lines[-1].split(': ', 1)[-1]})"
                + (f"; it still {' and '.join(what)}" if what else "") + " and loads the rest as typed")
    else:
        line = (f"llama.cpp's --fit (on by default) {', '.join(what) or 'changes the layout'} to leave "
                f"{margins} MiB free per device")
        if fits and _moves_weights(fitted, spec):
            line += ": it runs, split with the CPU (slower), not a fit on the GPU"
        line += ((f"; add -fit off to keep {' and '.join(keep)}" if keep else "")
                 + (" (which does not fit)" if keep and typed.fits is False else ""))
    if not fits:
        line += "; even so it does not fit: llama.cpp fails to allocate"
        if fitted.lines and fitted.lines[-1] == "entire model can be fit by reducing context" and any(
                c.name == "SWA" and c.cells < ctx.n_ctx for c in kv_caches(spec, ctx, fitted.settings.swa_full)):
            # common/fit.cpp (PR #18372): the context step interpolates between the dry runs at -fitc and at the
            # trained context and returns; an SWA / chunked cache of GGML_PAD(min(n_ctx, n_swa x n_seq + n_ubatch),
            # 256) cells (llama-kv-cache-iswa.cpp) is capped between the two, so the line under-reads it
            line += (": its fit draws a straight line in the context between two dry runs, at -fitc and at the "
                     "trained context, and does not measure the context it picks, but this model's capped "
                     "sliding-window / chunked cache does not grow in a straight line with the context")
    return line + " (engine_view fit_*, typed_*)"


def _layer_uses(spec: ModelSpec, devices: tuple[Device, ...], rs: dict[int, tuple[int, int]],
                placement: Placement, state: StateByDevice) -> tuple[LayerUse, ...]:
    by_layer: dict[int | None, int] = {}
    for t in spec.weights.tensors:  # one pass over the tensors, not one per layer
        by_layer[t.layer] = by_layer.get(t.layer, 0) + t.nbytes
    return tuple(
        LayerUse(index=layer.index, kind=layer.kind.value,
                 device=_dev_name(devices, placement.layer_device[layer.index]),
                 weights_bytes=by_layer.get(layer.index, 0),
                 kv_bytes=state.layer_kv.get(layer.index, 0), recurrent_bytes=sum(rs.get(layer.index, (0, 0))),
                 cells=state.layer_cells.get(layer.index))
        for layer in spec.layers
    )


def _effective_settings(s: LlamaCppSettings, ctx: Context, placement: Placement) -> dict[str, Any]:
    eff = s.to_dict()
    # server_extra_seq is no llama.cpp flag: it says whether the program is llama-server's own server.cpp (the
    # -np + 1 sequences of kv.server_extra_seq) or a copy of it that loads -np (Ollama's runner); the count it gives
    # is in engine_view n_seq_max, so the public settings leave it out
    eff.pop("server_extra_seq", None)
    eff.update(n_ctx=ctx.n_ctx, n_parallel=ctx.n_seq_max - ctx.n_seq_extra, kv_unified=ctx.kv_unified,
               flash_attn="on" if ctx.flash_attn else "off", n_ubatch=ctx.n_ubatch,
               n_gpu_layers=placement.n_gpu_layers)
    return eff
