"""oomkit's own figures beside the engine's: when a log names a model the built-in catalog knows (no network),
estimate it with the settings the log says were in force and set each start-up figure the engine printed next to
the one oomkit predicts, so the component that differs stands out."""

from __future__ import annotations

import re
from dataclasses import fields as dc_fields
from typing import Any

from ..errors import OomkitError
from .result import Diagnosis

# the log's figure name (logread) -> the engine_view key of the estimate
_VLLM = {"model_loading_bytes": "model_loading_bytes", "available_kv_cache_bytes": "available_kv_cache_bytes",
         "kv_cache_tokens": "kv_cache_tokens", "num_gpu_blocks": "num_gpu_blocks",
         "cudagraph_bytes": "cudagraph_actual_bytes"}  # "Graph capturing finished ..., took X GiB"
_LLAMA = {"model": "model_buffer_bytes", "kv": "kv_buffer_bytes", "compute": "compute_buffer_bytes"}
# llama.cpp's "file type" line -> the GGUF file type name
_FTYPE = re.compile(r"^(I?Q[0-9]_[0-9A-Z_]+|F16|BF16|F32|Q8_0)\s*(?:-\s*(Small|Medium|Large|XS|XXS|S|M|L))?",
                    re.IGNORECASE)
NOMINAL_GPU = 80 << 30  # a GPU size for the figures that do not depend on it (the weights)
_SIZE_WORD = {"small": "S", "medium": "M", "large": "L", "xs": "XS", "xxs": "XXS", "s": "S", "m": "M", "l": "L"}


def prediction_for(d: Diagnosis) -> dict[str, Any] | None:
    runner = d.host or d.engine
    try:
        if runner == "vllm":
            return _vllm(d)
        if runner == "llama.cpp":
            return _llamacpp(d)
    except (OomkitError, ValueError, TypeError, KeyError, ZeroDivisionError):
        return None
    return None


_GGUF_TAIL = re.compile(r"(?:[-._](?:I?Q[0-9]_[A-Z0-9_]{1,8}|F16|BF16|F32|Q8_0))?(?:-[0-9]{5}-of-[0-9]{5})?$",
                        re.IGNORECASE)


def _candidates(name: str) -> list[str]:
    """The names a log's model reference may be known by: as printed, its last path part, without a GGUF file
    type or shard suffix, with spaces as dashes, without a 'Meta' publisher prefix (GGUF general.name)."""
    name = name.strip().rstrip("/\\")
    base = name.replace("\\", "/").rsplit("/", 1)[-1].removesuffix(".gguf")
    bare = _GGUF_TAIL.sub("", base)
    out = [name, base, bare, bare.replace(" ", "-")]
    out += [c.split("-", 1)[1] for c in out[2:] if c.lower().startswith("meta-")]
    return list(dict.fromkeys(c for c in out if c))


def _known(name: str | None) -> str | None:
    if not name:
        return None
    from ..model import catalog  # lazy: the catalog index loads only when a log names a model

    for cand in _candidates(name):
        if catalog.lookup(cand) is not None:
            return cand
    return None


def expert_count(d: Diagnosis) -> int | None:
    """The routed experts of the model the log is of: llama.cpp's own print (llama-model.cpp print_info / older
    llm_load_print_meta "n_expert = N", or the GGUF key "<arch>.expert_count"), else the catalog's entry of the model
    the log names (general.name, the GGUF path, the command's model); None when neither says."""
    n = d.settings.get("n_expert")
    if isinstance(n, int):
        return n
    for key in ("model_name", "model_path", "model_file", "model"):
        cand = _known(str(d.settings.get(key) or "")) if d.settings.get(key) else None
        if cand is None:
            continue
        from ..model.resolve import resolve  # lazy: the resolver only when a log names a catalog model

        try:
            spec = resolve(cand)
        except (OomkitError, ValueError, KeyError):
            return None
        return max((layer.ffn.n_experts for layer in spec.layers), default=0)
    return None


# Where vLLM's "Model loading took" line sits in v1/worker/gpu_model_runner.py, by release, as logs that print
# their release show it (vllm#23278 0.10.1: 2007; vllm PR #24577, main between 0.10.1 and 0.10.2: 2235;
# vllm#33155 0.14.1: 3905; TheBuccaneer/vllm-offload-profiles, whose README names vLLM 0.17.1: 4364; llm-d's v0.19.0
# sweep: 4820). A log that does not print its release is estimated as
# the release whose line is the nearest at or below its own (the file only grows), so an older log is not given a
# newer release's weight layout (gpt-oss's MXFP4 padding changed in 0.19).
_LOADING_LINE = ((2007, "0.10.1"), (2235, "0.10.2"), (3905, "0.14.1"), (4364, "0.17.1"), (4820, "0.19.0"))


def _vllm_version(d: Diagnosis) -> str | None:
    """The release the log is from: as printed, else placed by its "Model loading took" source line."""
    if d.engine_version:
        return d.engine_version
    line = d.settings.get("vllm_loading_line")
    if not isinstance(line, int) or line < _LOADING_LINE[0][0] or line > _LOADING_LINE[-1][0] + 500:
        return None  # not placeable: the engine's default release
    return [v for n, v in _LOADING_LINE if n <= line][-1]


def _vllm(d: Diagnosis) -> dict[str, Any] | None:
    model = _known(d.settings.get("model"))
    total = d.settings.get("total_gpu_memory_bytes") or d.numbers.get("total_bytes")
    if model is None:
        return None
    names = _VLLM
    if not total:  # the GPU's size is not in the text: only the weights do not depend on it
        total, names = NOMINAL_GPU, {"model_loading_bytes": "model_loading_bytes"}
    from ..engines.base import get_engine  # lazy: the engine records load on first use
    from ..estimate import estimate

    eng = get_engine("vllm")
    fields = {f.name for f in dc_fields(eng.Settings)}
    opts = {k: v for k, v in d.settings.items() if k in fields and v is not None}
    if _vllm_version(d):
        opts["engine_version"] = _vllm_version(d)
    est = estimate(model, "vllm", vram=int(total), find_max_context=False, **opts)
    return _compare(model, "vllm", opts, d.buffers, est.engine_view, names, est.fits)


def vllm_weights_per_gpu(settings: dict[str, Any]) -> tuple[str, int] | None:
    """oomkit's estimate of the bytes of weights vLLM loads on each GPU (engine_view model_loading_bytes of rank 0:
    the checkpoint's tensors sharded by tensor_parallel_size and split by pipeline_parallel_size, as vLLM's model
    loader places them) for the model a log names, with the sizes the log shows: (model, bytes), or None when the
    catalog does not know the model."""
    model = _known(settings.get("model"))
    if model is None:
        return None
    from ..engines.base import get_engine  # lazy: the engine records load on first use
    from ..estimate import estimate

    eng = get_engine("vllm")
    fields = {f.name for f in dc_fields(eng.Settings)}
    opts = {k: v for k, v in settings.items() if k in fields and v is not None}
    try:
        est = estimate(model, "vllm", vram=NOMINAL_GPU, find_max_context=False, **opts)
        per = est.engine_view["model_loading_bytes"]
        per = per.get("CUDA0", next(iter(per.values()))) if isinstance(per, dict) else per
    except (OomkitError, ValueError, TypeError, KeyError, ZeroDivisionError, StopIteration):
        return None
    return (model, int(per)) if isinstance(per, (int, float)) and per > 0 else None


def _llamacpp(d: Diagnosis) -> dict[str, Any] | None:
    s = d.settings
    model = None
    for cand in (_hub_repo(s.get("model_path")), s.get("model_name"), _stem(s.get("model_path")), s.get("model")):
        model = _known(cand)
        if model:
            break
    if model is None:
        return None
    quant = _quant(d)
    from ..engines.base import get_engine  # lazy: the engine records load on first use
    from ..estimate import estimate

    opts: dict[str, Any] = {}
    for k in ("n_ctx", "n_ubatch", "n_batch", "n_gpu_layers"):
        if s.get(k) is not None:
            opts[k] = int(s[k])
    if s.get("n_parallel"):
        opts["n_parallel"] = int(s["n_parallel"])
    for k in ("cache_type_k", "cache_type_v"):
        if s.get(k):
            opts[k] = s[k]
    fa = str(s.get("flash_attn", "")).lower()
    if fa:
        opts["flash_attn"] = "on" if fa in ("1", "on", "enabled", "true") else "off" if fa in (
            "0", "off", "disabled", "false") else "auto"
    if d.engine_version:
        opts["engine_version"] = d.engine_version
    get_engine("llama.cpp")
    free = d.buffers.get("device_free") or {}
    vram = ",".join(f"{v}" for v in free.values()) if free else "24GiB"
    est = estimate(model, "llama.cpp", quant=quant, vram=vram, find_max_context=False, **opts)
    return _compare(model, "llama.cpp", {**opts, "quant": quant}, d.buffers, est.engine_view, _LLAMA, est.fits)


def _hub_repo(path: str | None) -> str | None:
    """The GGUF repo a model path in the hub cache names (models--unsloth--Qwen3.6-27B-GGUF/snapshots/..., where
    llama.cpp's -hf downloads go), when the catalog knows its model: its owner picks the publisher's recipe for the
    file type (model/resolve.gguf_publisher), which the model's name alone does not."""
    from ..model import catalog, names  # lazy: as in _known

    cached = names.hub_cache_gguf(path) if path else None
    repo = cached.rsplit(":", 1)[0] if cached else None
    return repo if repo and catalog.lookup(repo) is not None else None


def _stem(path: str | None) -> str | None:
    if not path:
        return None
    return path.replace("\\", "/").rsplit("/", 1)[-1].removesuffix(".gguf")


def _compare(model: str, engine: str, settings: dict[str, Any], printed: dict[str, Any], view: dict[str, Any],
             names: dict[str, str], fits: bool | None) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    for ours, theirs in names.items():
        if ours not in printed or theirs not in view:
            continue
        p, o = printed[ours], view[theirs]
        if isinstance(p, dict) and isinstance(o, dict):
            for dev, pv in p.items():
                if dev in o:
                    figures[f"{theirs}[{dev}]"] = {"printed": pv, "oomkit": o[dev], "differs_by": o[dev] - pv}
        elif isinstance(p, (int, float)):
            if isinstance(o, dict) and o:  # per rank; the log line is rank 0's
                o = o.get("CUDA0", next(iter(o.values())))
            if isinstance(o, (int, float)):
                figures[theirs] = {"printed": p, "oomkit": o, "differs_by": o - p}
    out = {"model": model, "engine": engine, "settings": settings, "figures": figures, "fits": fits}
    if isinstance(view.get("log"), str):
        out["log"] = view["log"]  # the start-up lines oomkit predicts the engine prints
    return out


def largest_context(d: Diagnosis) -> dict[str, Any] | None:
    """oomkit's own answer to "what context fits": the largest context (vLLM: max_model_len; llama.cpp: -c) for the
    model the log names, with the settings it shows, on the memory it shows (vLLM: the GPU's total; llama.cpp: each
    device's free memory at load). None when the model or the memory is not in the text."""
    runner = d.host or d.engine
    try:
        if runner == "vllm":
            model = _known(d.settings.get("model"))
            total = d.settings.get("total_gpu_memory_bytes") or d.numbers.get("total_bytes")
            if model is None or not total:
                return None
            return _largest(d, model, "vllm", int(total), None, _vllm_opts(d))
        if runner == "llama.cpp":
            free = d.buffers.get("device_free") or {}
            model = next((m for m in (_hub_repo(d.settings.get("model_path")), _known(d.settings.get("model_name")),
                                      _known(_stem(d.settings.get("model_path"))),
                                      _known(d.settings.get("model"))) if m), None)
            if model is None or not free:
                return None
            opts = {k: int(d.settings[k]) for k in ("n_ubatch", "n_batch", "n_gpu_layers") if d.settings.get(k)}
            if d.settings.get("n_parallel"):
                opts["n_parallel"] = int(d.settings["n_parallel"])
            if d.engine_version:
                opts["engine_version"] = d.engine_version
            return _largest(d, model, "llama.cpp", tuple(free.values()), _quant(d), opts)
    except (OomkitError, ValueError, TypeError, KeyError, ZeroDivisionError):
        return None
    return None


def _vllm_opts(d: Diagnosis) -> dict[str, Any]:
    from ..engines.base import get_engine  # lazy: the engine records load on first use

    fields = {f.name for f in dc_fields(get_engine("vllm").Settings)}
    opts = {k: v for k, v in d.settings.items() if k in fields and v is not None}
    if _vllm_version(d):
        opts["engine_version"] = _vllm_version(d)
    return opts


_NAME_QUANT = re.compile(r"[-._](I?Q[0-9]_[A-Z0-9_]{1,8}|BF16|F16|F32)(?:-[0-9]{5}-of-[0-9]{5})?(?:\.gguf)?$", re.I)


def _quant(d: Diagnosis) -> str | None:
    """The GGUF file type: from llama.cpp's 'file type' line, else from the file's name (...-Q4_K_M.gguf)."""
    m = _FTYPE.match(str(d.settings.get("file_type", "")).strip())
    if m:
        return m.group(1).upper() + (f"_{_SIZE_WORD[m.group(2).lower()]}" if m.group(2) else "")
    for name in (d.settings.get("model_path"), d.settings.get("model")):
        n = _NAME_QUANT.search(str(name or ""))
        if n:
            return n.group(1).upper()
    return None


def _largest(d: Diagnosis, model: str, engine: str, vram: Any, quant: str | None, opts: dict[str, Any]
             ) -> dict[str, Any] | None:
    from ..engines.base import get_engine  # lazy: the engine records load on first use
    from ..limits import max_context
    from ..request import devices_from, resolve_model

    eng = get_engine(engine)
    spec = resolve_model(eng, model, quant)
    devs = devices_from(vram if not isinstance(vram, tuple) else list(vram))
    settings = eng.settings(**opts)
    out: dict[str, Any] = {"model": model, "engine": engine, "max_context": max_context(eng, spec, devs, settings)}
    for kv in eng.kv_types:
        if kv in ("q8_0", "fp8"):
            try:
                out[f"max_context_{kv}"] = max_context(eng, spec, devs, eng.with_kv_type(settings, kv))
            except OomkitError:
                pass
    return out


def post_kv_estimate(d: Diagnosis) -> dict[str, Any] | None:
    """oomkit's estimate of a vLLM run that allocated its KV cache and then ran out (CUDA-graph capture, sampler
    warm-up), with the settings the log shows, on the GPU it shows. The memory the run had is the GPU's total, or,
    where PyTorch's message says what this process held and what was still free, their sum (other processes
    held the rest: the phases after the KV cache run on what is left of it, engines/vllm/layout.py). None when
    the log does not name a model the catalog knows, its vLLM release (printed, or placed by its "Model loading
    took" line) and the GPU's memory."""
    if (d.host or d.engine) != "vllm":
        return None
    try:
        model = _known(d.settings.get("model"))
        version = _vllm_version(d)
        total = d.settings.get("total_gpu_memory_bytes") or d.numbers.get("total_bytes")
        if model is None or version is None or not total:
            return None
        n = d.numbers
        free = None
        if n.get("free_bytes") is not None and n.get("this_process_bytes") is not None:
            free = min(int(total), int(n["free_bytes"] + n["this_process_bytes"]))
        from ..estimate import estimate  # lazy: the catalog and the engines only when a log names a model
        from ..memory import Device

        dev = Device(id="CUDA0", memory_bytes=int(total), free_bytes=free)
        est = estimate(model, "vllm", devices=(dev,), find_max_context=False, **_vllm_opts(d))
    except (OomkitError, ValueError, TypeError, KeyError, ZeroDivisionError):
        return None
    view = est.engine_view
    return {"model": model, "engine_version": version, "version_printed": bool(d.engine_version or
                                                                              d.settings.get("vllm_version")),
            "total_bytes": int(total), "free_bytes": free,
            "failed_phase": view.get("failed_phase"), "fixes": list(view.get("fixes") or ()), "fits": est.fits,
            "settings": dict(est.settings)}
