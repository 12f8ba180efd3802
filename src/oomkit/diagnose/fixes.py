"""The fix, computed from the numbers the text carries: the exact flags or variables for the engine the user runs
and the memory each saves. Where the text lacks a number a fix needs, the fix says what to change without a
figure; the index's general advice follows the computed fixes.

Rules used (each from the engine's own behaviour, see the error index):
- vLLM's KV check: KV bytes are linear in max_model_len (needed / max_model_len per token); vLLM prints its own
  estimate of the largest length; gpu_memory_utilization is a fraction of TOTAL memory.
- llama.cpp: the KV cache is linear in -c (padded to 256 cells); q8_0 stores 34 bytes per 32 values (8.5 bits)
  against f16's 16, so q8_0 K and V save 1 - 8.5/16 of an f16 cache; the compute buffer scales with -ub.
- Ollama: its estimate (memory.required.full / .kv, memory.available) is linear in the context the same way.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable
from typing import Any

from ..memory import MACOS_STEPPED, apple_default_gpu_share
from .koboldcpp import as_koboldcpp
from .llamafactory import as_llamafactory
from .lmstudio import as_lmstudio, model_key
from .lmstudio import defaults as lms_defaults
from .result import Diagnosis, Fix
from .signatures import BY_ID, Signature
from .vllm_python import as_vllm_python

# how a fix says its step is oomkit's choice, not a figure or rule read from the engine's source
RULE_OF_THUMB = "a rule of thumb, not an engine figure"

GiB = 1 << 30
MiB = 1 << 20
Q8_SAVES = 1 - 8.5 / 16  # share of an f16 cache that q8_0 K and V save (ggml block_q8_0: 34 bytes / 32 values)
VLLM_BLOCK = 16  # vLLM's default KV block (tokens)
LLAMA_PAD = 256  # llama.cpp pads n_ctx to 256 cells


def _g(n: float | int | None) -> str:
    return "?" if n is None else f"{n / GiB:.2f} GiB"


def _m(n: float | int | None) -> str:
    return "?" if n is None else f"{n / MiB:,.0f} MiB"


def causes_for(d: Diagnosis, sig: Signature) -> tuple[str, ...]:
    if d.stage == "not_oom" and sig.stage not in (None, "not_oom"):
        return ()  # the message's memory causes do not hold for a failure read as no shortage
    if PINNED_HOST_CAUSE in d.causes:
        return ()  # the device's causes do not hold for a pinned host allocation (reader.py)
    if d.stage in ("fragmentation", "other_process", "buffer_limit") and sig.engine == "pytorch":
        return ()
    if d.phase and sig.engine == "pytorch":  # the phase after the KV cache says more than PyTorch's general causes
        return ()
    ru, req = d.numbers.get("reserved_unallocated_bytes"), d.numbers.get("requested_bytes")
    if sig.engine == "pytorch" and ru is not None and req is not None and ru < req:
        # the message says how much the allocator holds unused: less than the request is no fragmentation
        return tuple(c for c in sig.causes[:2] if "fragmented" not in c)
    if sig.engine == "pytorch" and ru is None and d.numbers.get("reserved_bytes") is None \
            and d.numbers.get("total_bytes") is not None:
        # the message read up to its figures but cut before what PyTorch reserved (a paste ending "Of t"): nothing
        # says the allocator holds memory unused
        return tuple(c for c in sig.causes[:2] if "fragmented" not in c)
    return sig.causes[:2]


def fixes_for(d: Diagnosis, sig: Signature, predict: bool = True) -> tuple[Fix, ...]:
    runner = d.host or d.engine
    if d.stage == "not_oom" or (d.stage == "unknown" and sig.id == "ollama_runner_terminated"
                                and "out of memory" not in str(d.numbers.get("reason", "")).lower()):
        return ()  # not a memory failure (or nothing says it is one): no memory advice
    computed: list[Fix] = []
    fn = _BY_SIGNATURE.get(sig.id)
    if d.phase and d.stage == "compute" and runner in _BY_PHASE:
        computed += _BY_PHASE[runner](d, predict)
    elif fn is not None:
        computed += fn(d)
    for key in ((runner, d.stage), (d.engine, d.stage)):  # the runner's rule, else the engine's
        if computed:
            break
        fn = _BY_STAGE.get(key)
        if fn is not None:
            computed += fn(d)
    if predict and d.stage == "kv_cache":
        computed += _by_estimate(d)
    if runner == "vllm":
        computed[:0] = _vllm_offload_ignored(d)
    if d.engine == "llama.cpp" and any("under WSL 2 pinned host memory" in c for c in d.causes):
        # reader.py: a ggml CUDA error under WSL 2, where pinned memory is limited (ggml-cuda.cu
        # ggml_cuda_host_malloc reads GGML_CUDA_NO_PINNED: no pinned host buffers)
        computed[:0] = [Fix(summary="GGML_CUDA_NO_PINNED=1: under WSL 2 pinned host memory is limited; without pinned "
                                    "buffers llama.cpp loads (a slower host-to-GPU copy)",
                            env=(("GGML_CUDA_NO_PINNED", "1"),))]
    computed[:0] = _pinned_host(d)
    computed[1:1] = _unnamed_model_buffer(d)
    computed[:0] = _sysmem_lent(d)
    computed[:0] = _backend_twice(d)
    computed[:0] = _vulkan_overread(d)
    if any(c.startswith("the Vulkan device is an APU") for c in d.causes):
        # reader.py RADV_UMA_CAUSE: an APU's buffers are GTT pages of system memory, bounded by the kernel's
        # amdgpu.gttsize (MiB) and TTM's ttm.pages_limit (4 KiB pages, half of RAM by default)
        computed[1:1] = [Fix(summary="raise the kernel's GTT limits for the APU (boot parameters amdgpu.gttsize=<MiB> "
                                     "and ttm.pages_limit=<4 KiB pages>, e.g. 3/4 of RAM): by default TTM lets "
                                     "the GPU keep at most half of RAM resident")]
    # nothing useful fits: the change of hardware or model is the answer; a context under MIN_USEFUL_CONTEXT is none
    tier = _next_tier(d, computed)
    if tier:
        computed = tier + [f for f in computed if not (len(f.flags) == 2 and f.flags[0] in ("--max-model-len", "-c")
                                                       and f.flags[1].isdigit()
                                                       and int(f.flags[1]) < MIN_USEFUL_CONTEXT)]
    req, total = d.numbers.get("requested_bytes"), d.numbers.get("total_bytes")
    if d.engine == "llama.cpp" and isinstance(req, int) and isinstance(total, int) and req > total:
        # one ggml buffer larger than the device's whole memory (reader.py: the rpc-server's total_mem, a device
        # table): no -c or -ub on that device makes it fit; llama.cpp splits a model's layers by -ts
        # (common/arg.cpp --tensor-split; llama-bench takes its values separated by '/')
        computed[:0] = [Fix(summary=f"-ts / --tensor-split to spread the layers over the devices: this one buffer "
                                    f"({_g(req)}) is larger than the whole device ({_g(total)}); llama-bench "
                                    "separates -ts values with '/'")]
    computed[:0] = _llama_split_off(d, computed)
    computed[:0] = _training(d)
    if _comfy_gpu_only(d):
        computed = _comfy_gpu_only_fix(d) + [f for f in computed if "device_map" not in f.summary]
    if _comfyui(d) and COMFY_TILED_VAE_CAUSE in d.causes:
        computed[:0] = _comfy_tiled_vae(d)
    for stage, engine, first, build in _STAGE_FIXES:
        if d.stage == stage and engine in (None, d.engine):
            more = build(d, computed)
            computed = more + computed if first else computed + more
    canned = [Fix(summary=t) for t in sig.fixes
              if not any(drops(t, d, computed, runner) for _, drops in _CANNED_DROPS)]
    if runner == "koboldcpp" and d.engine == "llama.cpp":
        # KoboldCpp takes most of llama.cpp's flags as aliases, but no -ub, -ctk / -ctv or -fa (koboldcpp.py)
        # (1.10x takes -b as an alias of --batchsize; a log whose command or Namespace spells --blasbatchsize is of
        # a version whose batch flag is that name alone: koboldcpp.py argparse to 1.7x)
        legacy = d.settings.get("koboldcpp_batch_flag") == "blasbatchsize"
        computed, canned = as_koboldcpp(computed, legacy), as_koboldcpp(canned, legacy)
    if runner == "llama.cpp" and _fa_is_switch(d):
        computed, canned = _fa_switch(computed), _fa_switch(canned)
    if runner == "vllm" and d.settings.get("llamafactory"):
        # LLaMA-Factory's CLI takes its own names for vLLM's settings (llamafactory.py)
        computed, canned = as_llamafactory(computed), as_llamafactory(canned)
    elif runner == "vllm" and d.settings.get("vllm_python_api"):
        # a script's LLM(...) takes EngineArgs' names as keyword arguments, not vllm serve's flags (vllm_python.py)
        computed, canned = as_vllm_python(computed), as_vllm_python(canned)
    if runner == "lmstudio" and d.engine in ("llama.cpp", "lmstudio"):
        # LM Studio's users have its settings and `lms load`, not llama-server's flags (lmstudio.py)
        computed = as_lmstudio(d, computed)
        canned = as_lmstudio(d, canned)
        canned = [f for f in canned if f.summary not in {c.summary for c in computed}
                  and not (f.command and f.command in {c.command for c in computed})]
    return tuple(computed + canned[: max(0, 4 - len(computed))])


def _llama_devices(d: Diagnosis) -> list[str]:
    """The GPUs a llama.cpp log shows (ggml_cuda_init's "Device N: NAME, compute capability", llama_model_load's
    "using device CUDA0 (...) - N MiB free"), as CUDA0, CUDA1, ..."""
    names = d.buffers.get("device_names") or {}
    free = d.buffers.get("device_free") or {}
    return sorted(set(names) | set(free))


def _llama_split_off(d: Diagnosis, computed: list[Fix]) -> list[Fix]:
    """A llama.cpp buffer on one GPU of several failed (the weights of its layers, their KV cache, or its compute
    buffer): llama.cpp gives each device a share of the layers in proportion to -ts / --tensor-split (common/arg.cpp;
    llama-model.cpp load_tensors splits the layers by the cumulative split, and without -ts by each device's free
    memory when the model loads), so the layers -- with their weights and KV cache -- move to the other devices by
    lowering that device's share; a device another program also uses (a display, an image model) is the one that runs
    out first. KoboldCpp spells it --tensor_split with the values space-separated."""
    buf = str(d.numbers.get("buffer") or "")
    devices = _llama_devices(d)
    split = d.settings.get("tensor_split")
    if (d.engine != "llama.cpp" or d.stage in ("host_ram", "not_oom", "buffer_limit")
            or not re.fullmatch(r"[A-Za-z]{2,8}[0-9]{1,2}", buf) or buf.startswith("CPU")
            or not (len(devices) >= 2 or (split and len(str(split).replace(",", " ").split()) >= 2))
            or any(f.flags[:1] == ("-ts",) or f.summary.startswith("-ts") for f in computed)):
        return []
    others = [x for x in devices if x != buf] or ["the other devices"]
    was = f" (now {split})" if split else ""
    return [Fix(summary=f"-ts / --tensor-split{was}: a smaller share for {buf}, where the buffer failed, and more for "
                        f"{', '.join(others)}: its layers, with their weights and KV cache, move there (KoboldCpp: "
                        "--tensor_split, values separated by spaces)", flags=("-ts",))]


# The stage's own fix beside what the message's rules computed, one row a rule: (stage, engine or None for any,
# first (else last), builder(d, computed) -> fixes)
_STAGE_FIXES: tuple[tuple[str, str | None, bool, Callable[[Diagnosis, list[Fix]], list[Fix]]], ...] = (
    # the allocator's own setting first: reserved-but-unallocated memory is what the message shows
    ("fragmentation", None, True, lambda d, computed: [_fragmentation(d)]),
    # the other processes first, unless a computed fix already runs a command (nvidia-smi)
    ("other_process", None, True,
     lambda d, computed: [] if any(f.command for f in computed) or _held_by_self(d) else _other_process(d)),
    ("buffer_limit", "pytorch", False, lambda d, computed: _torch_buffer_limit(d)),
    ("compute", "pytorch", True, lambda d, computed: _torch_one_activation(d)),
    ("host_ram", None, True, lambda d, computed: _prompt_cache(d)),
)


def _prompt_cache_in(d: Diagnosis) -> bool:
    return any("(prompt cache)" in c for c in d.causes)


def _prompt_cache(d: Diagnosis) -> list[Fix]:
    """llama-server's host-RAM prompt cache (reader: its prompt_save lines or the text naming it) grew beside the
    model: common/arg.cpp --cache-ram N (MiB; 0 turns it off), LLAMA_ARG_CACHE_RAM, 8192 MiB by default."""
    if not _prompt_cache_in(d):
        return []
    if (d.host or d.engine) == "ollama":
        return [Fix(summary="LLAMA_ARG_CACHE_RAM=512 in Ollama's environment: its llama-server runners inherit it and "
                            "cap their prompt cache at 512 MiB each (0 turns it off; llama.cpp's default is 8192 MiB "
                            "a runner)", env=(("LLAMA_ARG_CACHE_RAM", "512"),))]
    return [Fix(summary="--cache-ram 0 (or a few hundred MiB): llama-server's prompt cache in host RAM, 8192 MiB by "
                        "default; 0 turns it off (one slot's state alone can pass a small limit)",
                flags=("--cache-ram", "0"))]


def _dense(d: Diagnosis) -> bool:
    """The log's model has no routed experts (llama.cpp's n_expert = 0, or the catalog's entry of the model it
    names)."""
    from .predict import expert_count  # lazy: the catalog only when a fix names the MoE offload

    return expert_count(d) == 0


def _beyond_reserve(d: Diagnosis) -> bool:
    ru, req, free = (d.numbers.get(k) for k in ("reserved_unallocated_bytes", "requested_bytes", "free_bytes"))
    return ru is not None and req is not None and free is not None and free + ru < req


def _large_reserve(d: Diagnosis) -> bool:
    """The message's reserved-but-unallocated memory is large: 1 GiB, or at least the request and 5% of the device."""
    ru, req = d.numbers.get("reserved_unallocated_bytes"), d.numbers.get("requested_bytes")
    total = d.numbers.get("total_bytes")
    return ru is not None and (ru >= GiB or bool(total and req and ru >= req and ru >= total // 20))


# The index's general fixes of a message (Signature.fixes) follow the computed ones; a row drops one where it does not
# apply. (why, drops(text, d, computed, runner))
_CANNED_DROPS: tuple[tuple[str, Callable[[str, Diagnosis, list[Fix], str | None], bool]], ...] = (
    ("a computed fix already says it", lambda t, d, c, r: _covered(t, c)),
    ("the MLX runner's load check: its computed fixes give each of the message's fixes with the figures",
     lambda t, d, c, r: d.signature == "ollama_mlx_load" and bool(c)),
    # common/arg.cpp --cpu-moe / --n-cpu-moe keep the ffn_*_exps tensors on the CPU: a dense model has none
    ("a dense model (no experts): the MoE offload moves nothing",
     lambda t, d, c, r: "cpu-moe" in t and _dense(d)),
    ("the MoE offload's fix names -ngl beside --n-cpu-moe",
     lambda t, d, c, r: t.startswith("-ngl fewer") and any(f.summary.startswith("--n-cpu-moe higher") for f in c)),
    # reader.py GARBAGE_CAUSE: a size computed wrongly; no batch, quantization or GPU count makes it fit
    ("a wrong size, not a shortage", lambda t, d, c, r: GARBAGE_CAUSE in d.causes),
    # PyTorch's message carries several: its allocator settings only where the allocator holds much unused
    ("no large reserved-but-unallocated share, or a stage the allocator does not explain",
     lambda t, d, c, r: ("expandable_segments" in t or "max_split_size_mb" in t)
     and not (d.stage in ("fragmentation", "unknown", "compute") and _large_reserve(d))),
    # the allocator's settings only rearrange what it holds: with expandable segments a request can use the
    # reserved-but-unallocated blocks and the device's free memory together, never more than both
    ("a request larger than the free memory and the allocator's unused blocks together",
     lambda t, d, c, r: ("expandable_segments" in t or "max_split_size_mb" in t) and _beyond_reserve(d)),
    ("fewer layers on the GPU put more of the model in the RAM that ran out",
     lambda t, d, c, r: d.stage == "host_ram" and ("num_gpu lower" in t or "GPU_OVERHEAD" in t)),
    ("an fp8 KV cache is already in force",
     lambda t, d, c, r: "kv-cache-dtype fp8" in t and str(d.settings.get("kv_cache_dtype", "")).startswith("fp8")),
    ("an image's features, merged before any prefill step splits the prompt",
     lambda t, d, c, r: "prefill-step-size" in t and any("(image input)" in x for x in d.causes)),
    # -ts moves layers between GPUs (common/arg.cpp --tensor-split): it frees no host memory, where the buffer that
    # failed was (a CUDA_Host or CPU buffer, placed host_ram)
    ("a host buffer is on no GPU to rebalance", lambda t, d, c, r: d.stage == "host_ram" and "rebalance -ts" in t),
    ("the weights are loaded before any batch runs", lambda t, d, c, r: "smaller batch" in t and d.stage == "weights"),
    ("one weight tensor over the driver's per-allocation limit: the micro-batch and the context do not touch it",
     lambda t, d, c, r: t.startswith(("-ub", "-c ", "split the model")) and any("one weight tensor is larger" in x
                                                                                 for x in d.causes)),
    # Ollama's runner takes num_ctx / num_batch (llm/server.go passes them to llama.cpp): llama-server's -c / -ub
    # are not settings an Ollama user has
    ("llama-server's -c / -ub flags under Ollama",
     lambda t, d, c, r: r == "ollama" and t.startswith(("-c smaller", "-c ", "-ub "))),
    ("only where the message lists other processes",
     lambda t, d, c, r: "other processes listed" in t
     and not (d.stage == "other_process" or (d.stage == "unknown" and bool(other_processes(d.numbers))))),
    ("llama.cpp's own flags beside their Ollama options already given (num_batch, num_ctx)",
     lambda t, d, c, r: r == "ollama" and t.startswith("-") and any("num_" in f.summary for f in c)),
    ("LM Studio's settings already given by their names in its UI",
     lambda t, d, c, r: r == "lmstudio" and t.startswith("-") and bool(c)),
    ("one allocation refused with room to spare: the context and batch flags do not touch it",
     lambda t, d, c, r: d.stage == "buffer_limit" and r == "llama.cpp" and d.backend == "SYCL" and bool(c)),
    ("the projector's warm-up buffer: the language model's batch and context do not size it",
     lambda t, d, c, r: _projector(d) and bool(c)),
    ("a computed fix already sets the wired limit, or says none makes the weights fit",
     lambda t, d, c, r: "iogpu.wired_limit_mb" in t and any("iogpu.wired_limit_mb" in f.summary for f in c)),
    ("ComfyUI keeps every model on the GPU under --gpu-only: transformers' device_map is no setting of it",
     lambda t, d, c, r: _comfy_gpu_only(d) and "device_map" in t),
    ("ComfyUI's own log: transformers' loading options are no settings of it",
     lambda t, d, c, r: _comfyui(d) and ("device_map" in t or "bitsandbytes" in t)),
    ("a pinned host allocation failed: the GPU's own memory settings do not touch it",
     lambda t, d, c, r: PINNED_HOST_CAUSE in d.causes),
    ("the prompt cache grew, not the model: more of it on the GPU frees no host RAM",
     lambda t, d, c, r: _prompt_cache_in(d) and "more layers on the GPU" in t),
)


def _vllm_offload_ignored(d: Diagnosis) -> list[Fix]:
    """--cpu-offload-gb under model runner V2 before 0.28 (engines/vllm/weights.py offload_ignored: no offloader is
    installed, vllm#51396): the weights the user meant to keep in host memory were all on the GPU."""
    gb = d.settings.get("cpu_offload_gb")
    if not gb or d.settings.get("vllm_runner") != "V2" or d.stage in ("not_oom", "host_ram"):
        return []
    from ..engines.vllm.settings import ERAS  # lazy: the vLLM rules only for a V2 log that offloads

    printed = str(d.settings.get("vllm_version") or "")
    m = re.match(r"v?(\d+)\.(\d+)(?:\.(\d+))?", printed)
    version = tuple(int(x or 0) for x in m.groups()) if m else None
    if version and ERAS.reached(version, "runner_v2_offload"):
        return []
    rel = f"vLLM {printed}" if version else "vLLM before 0.28"
    return [Fix(summary=f"VLLM_USE_V2_MODEL_RUNNER=0 (keep --cpu-offload-gb {gb:g}): the log says 'Using V2 Model "
                        f"Runner', which in {rel} installs no weight offloader (vllm#51396), so the {gb:g} GiB meant "
                        "for host memory stayed on the GPU; the V1 runner offloads them",
                env=(("VLLM_USE_V2_MODEL_RUNNER", "0"),))]


def vulkan_overread(buffers: dict[str, Any]) -> list[tuple[str, str, int, int]]:
    """The Vulkan devices llama.cpp's load lines list with more free memory than the card has ("using device Vulkan1
    (NVIDIA RTX A2000 12GB) ... - 19491 MiB free", llama.cpp llama_model_load_from_file_impl from
    ggml_backend_vk_get_device_memory, the device-local heap's budget from VK_EXT_memory_budget): the catalog's
    memory of a discrete card is its ceiling, so a budget above it counts memory the card does not have (on Windows
    the driver's budget takes in shared GPU memory, system RAM), and llama.cpp sizes its split of the layers by it
    (llama-model.cpp: each device's share in proportion to its free memory). -> [(device, name, free, card)]"""
    from ..hardware import catalog  # lazy: the GPU catalog loads only when a log lists its devices

    out = []
    names = buffers.get("device_names") or {}
    for dev, free in (buffers.get("device_free") or {}).items():
        if not str(dev).startswith("Vulkan") or not isinstance(free, int):
            continue
        spec = catalog.lookup(str(names.get(dev, "")))
        card = getattr(spec, "memory_bytes", None) if spec is not None else None
        if spec is None or spec.unified_memory or not isinstance(card, int) or card <= 0:
            continue  # an APU's or an unknown device's budget has no card memory to set against
        if free > card + max(512 << 20, card // 20):  # past rounding (GB / GiB, a driver's reserve): a twentieth
            out.append((str(dev), spec.name, free, card))
    return out


VULKAN_OVERREAD_CAUSE = "reports {free} MiB free, more than the {card} the card has"


def _vulkan_overread(d: Diagnosis) -> list[Fix]:
    over = vulkan_overread(d.buffers)
    if not over:
        return []
    dev, name, free, card = over[0]
    cuda = " (for an NVIDIA card, the CUDA backend reads its dedicated memory)" if "NVIDIA" in name else ""
    if (d.host or d.engine) == "lmstudio":
        return [Fix(summary=f"{dev} ({name}) was sized from {free // 2**20} MiB free, more than its {_g(card)}: "
                            "switch that card to LM Studio's CUDA llama.cpp runtime (it reads the card's own memory), "
                            "or set Split Strategy / GPU Offload so that card gets no more than its "
                            f"{_g(card)}{cuda}")]
    return [Fix(summary=f"-ts / --tensor-split giving {dev} ({name}) no more than its {_g(card)}: llama.cpp split the "
                        f"layers by the {free // 2**20} MiB free it read, which counts memory the card does not have"
                        f"{cuda}", flags=("-ts",))]


def _backend_twice(d: Diagnosis) -> list[Fix]:
    """The same GPU backend loaded from two libraries (reader._backend_loaded_twice): the stale copy goes first. The
    shallower path is the stale one (Ollama installs its GPU libraries in lib/ollama/cuda_vNN, rocm, vulkan; a ggml
    library directly in lib/ollama is an older install's, ollama#11211)."""
    twice = d.settings.get("backend_loaded_twice")
    if not twice:
        return []
    name, paths = twice["backend"], list(twice["paths"])
    stale = min(paths, key=lambda p: len(re.split(r"[/\\]", p)))
    return [Fix(summary=f"remove the stale {name} backend library {stale}: the {name} backend was loaded twice "
                        f"({' and '.join(paths)}), two copies driving one GPU; delete the stale file (or reinstall "
                        "cleanly) so that one library is loaded")]


# reader.py _diagnose: the text shows a training run (transformers' Trainer, a backward pass, PEFT / TRL, a
# fine-tuning script)
TRAINING_CAUSE = ("the text shows a training run (a Trainer step, a backward pass, PEFT / TRL, a fine-tuning "
                  "script): beside the weights it keeps every layer's activations for the backward pass, the "
                  "gradients and the optimizer's states")


def _comfy_gpu_only(d: Diagnosis) -> bool:
    return d.engine == "pytorch" and d.settings.get("comfyui_gpu_only") == "True" and d.stage != "not_oom"


def _comfy_gpu_only_fix(d: Diagnosis) -> list[Fix]:
    """ComfyUI started with --gpu-only (logread.py): comfy/cli_args.py "Store and run everything (text encoders/CLIP
    models, etc... on the GPU)"; comfy/model_management.py text_encoder_device() and unet_offload_device() return the
    GPU under it, so the text encoders, the diffusion model and the VAE all stay resident. Without it ComfyUI picks its
    VRAM state from the device (NORMAL_VRAM / LOW_VRAM) and moves the models not in use to host RAM."""
    total = d.numbers.get("total_bytes")
    on = f" on the {_g(total)} device" if isinstance(total, int) else ""
    return [Fix(summary=f"start ComfyUI without --gpu-only: under it every model it loads (text encoders, diffusion "
                        f"model, VAE) stays resident{on}; without it ComfyUI offloads the ones not running to host "
                        "RAM (--lowvram splits the diffusion model too)"),
            Fix(summary="smaller quants of the models the workflow keeps loaded (the text encoder's above all: a GGUF "
                        "Q4 / fp8 T5)")]


def _training(d: Diagnosis) -> list[Fix]:
    """A training step's memory (transformers training_args.py): the activations kept for the backward pass scale
    with per_device_train_batch_size x the sequence length and go with gradient_checkpointing (recomputed in the
    backward pass; peft utils/other.py prepare_model_for_kbit_training turns it on by default);
    gradient_accumulation_steps keeps the effective batch while the per-step batch shrinks."""
    if TRAINING_CAUSE not in d.causes or d.stage not in ("compute", "unknown", "fragmentation"):
        return []
    return [Fix(summary="gradient checkpointing (TrainingArguments(gradient_checkpointing=True) or "
                        "model.gradient_checkpointing_enable(); PEFT's prepare_model_for_kbit_training turns it on): "
                        "the layers' activations are recomputed in the backward pass instead of kept"),
            Fix(summary="per_device_train_batch_size smaller with gradient_accumulation_steps raised by the same "
                        "factor (the same effective batch), or a shorter maximum sequence length")]


# reader.py _torch_stage: a request this many times the device's whole memory is a size computed wrongly, not a
# model's tensor
GARBAGE_FACTOR = 1024
GARBAGE_CAUSE = ("the size asked for is over a thousand times the whole device: no model's tensor, but a size the "
                 "calling code computed wrongly (an overflowed or uninitialised shape): not a shortage of memory")


def _torch_buffer_limit(d: Diagnosis) -> list[Fix]:
    req, total = d.numbers.get("requested_bytes"), d.numbers.get("total_bytes")
    if any("(kv_cache)" in c for c in d.causes):  # the engine's KV pool, sized from a wrong free-memory figure
        runner = d.host or d.engine
        knob = {"sglang": "--max-total-tokens N (a pool you size) or --mem-fraction-static lower",
                "vllm": "--kv-cache-memory-bytes N (a pool you size) or --gpu-memory-utilization lower"}.get(runner or "")
        what = f": {knob}" if knob else ": give the pool's size yourself"
        return [Fix(summary=f"the KV cache pool was sized at {_g(req)} on a device of {_g(total)}, so the engine's "
                            f"free-memory profile was wrong{what}")]
    if any("caching_allocator_warmup" in c for c in d.causes):  # transformers' loading warm-up: _mps_buffer's fix
        return []
    if GARBAGE_CAUSE in d.causes:
        return [Fix(summary=f"no memory setting helps: {_g(req)} on a device of {_g(total)} is a wrong size, not a "
                            "large tensor; change the call that computed it (the options it was given, its inputs' "
                            "shapes) or the library version, and report it with those options")]
    device = f"on a device of {_g(total)}" if total else "over the device's single-buffer limit"
    if SDPA_MATH_CAUSE in d.causes:
        out = [Fix(summary=f"one tensor of {_g(req)} {device} inside scaled_dot_product_attention, its math "
                           "fallback's score matrix: inputs a fused kernel takes (fp16 below sm80), an attention "
                           "library the program can use instead (xformers, SageAttention), or fewer tokens (frames, "
                           "resolution, sequence)")]
    else:
        out = [Fix(summary=f"one tensor of {_g(req)} {device}: no setting of the allocator helps; find the operation "
                           "(an eager attention matrix is the usual one: use flash / SDPA attention) and shrink its "
                           "batch, sequence or resolution")]
    if d.backend == "ROCm":
        out.append(Fix(summary=f"on an AMD APU the {_g(total)} PyTorch sees is the VRAM carve-out (or GTT): raise it "
                               "in the firmware or the kernel's amdgpu.gttsize / ttm limits"))
    return out


# reader.py: a request over the device raised inside torch.nn.functional.scaled_dot_product_attention (the frame or
# its source line). SDPA picks a fused kernel when one takes the inputs and else runs its math form, which
# materialises the scores (batch x heads x queries x keys): aten/src/ATen/native/transformers/cuda/sdp_utils.cpp
# select_sdp_backend (PyTorch 2.0+) tries flash (sm80+, fp16 / bf16), the memory-efficient kernel (bf16 only on
# sm80+) and cuDNN, then math; the fused kernels allocate no score matrix, so an allocation that size is math's
SDPA_MATH_CAUSE = ("the allocation is inside scaled_dot_product_attention, already the SDPA path: a tensor that size "
                   "there is its math fallback's score matrix (batch x heads x queries x keys), taken when no fused "
                   "kernel accepts the inputs (flash needs sm80+; the memory-efficient kernel takes bf16 only on "
                   "sm80+)")
# reader.py: a PyTorch request of half the device or more, outside a serving engine (whose KV pool is one tensor)
# and outside transformers' loading warm-up (caching_allocator_warmup): the weights load tensor by tensor. The half
# is a rule of thumb, not a PyTorch or engine figure: a model whose weights fit the device has no single weight tensor
# near that size (the largest is an embedding or one layer's projection), so such a request is most likely one
# activation
HALF_DEVICE_CAUSE = ("one allocation of half the device or more (a rule of thumb: the weights load tensor by tensor, "
                     "and no one weight tensor of a model that fits the device is near that size), so most likely "
                     "one activation, usually an attention score matrix materialised whole (heads x tokens x tokens) "
                     "over a long sequence or a large image / video")
# reader.py: a bare CUDA "out of memory" raised at a copy to the CPU with non_blocking=True or at pin_memory. PyTorch
# gives a non-blocking CUDA-to-CPU copy a pinned destination (aten/src/ATen/native/TensorConversions.cpp _to_copy:
# pin_out = non_blocking && self.is_cuda() && options.device().is_cpu(), PyTorch 2.x), allocated by the CUDA host
# allocator with cudaHostAlloc; its failure is a CUDA error, not the caching allocator's OutOfMemoryError, so it
# carries no figures. Pinned memory is a budget of its own: NVIDIA's CUDA on WSL guide (Known Limitations) caps it
# under WSL 2 (unsloth-zoo#1257: unsloth#338 / #1744 / #1797, all on WSL with most of the card free)
PINNED_HOST_CAUSE = ("the failure is at a copy to the CPU with non_blocking=True (or pin_memory): PyTorch puts that "
                     "copy in pinned (page-locked) host memory (TensorConversions.cpp _to_copy; cudaHostAlloc), and "
                     "the pinned allocation is what failed, not the GPU's memory; pinned memory is a budget of its "
                     "own, small under WSL 2 (NVIDIA's CUDA on WSL guide)")
# unsloth_zoo/gradient_checkpointing.py Unsloth_Offloaded_Gradient_Checkpointer.forward: use_gradient_checkpointing=
# "unsloth" saves each layer's input with hidden_states.to("cpu", non_blocking=True); True checkpoints on the GPU
UNSLOTH_OFFLOAD_CAUSE = ("the copy is unsloth's offloaded gradient checkpointing (use_gradient_checkpointing="
                         "\"unsloth\", unsloth_zoo gradient_checkpointing.py), which moves every layer's activations "
                         "to pinned host memory")


# reader.py _torch_stage: PyTorch's own count of what it allocated (c10/cuda/CUDACachingAllocator.cpp, "Of the
# allocated memory X is allocated by PyTorch" / "X already allocated") above the device's total (cudaMemGetInfo): the
# driver backs device allocations with system memory (Windows' shared GPU memory under the CUDA Sysmem Fallback
# Policy, driver 536.40+; WSL 2's GPU paravirtualisation; a unified-memory device), and that budget ran out too
SYSMEM_LENT_CAUSE = ("PyTorch reports {alloc:.2f} GiB allocated on a {total:.2f} GiB device: the driver lends system "
                     "memory beyond the device (the Windows driver's system-memory fallback, WSL 2, or a "
                     "unified-memory device), so these figures do not place the shortage")


def _sysmem_lent(d: Diagnosis) -> list[Fix]:
    """SYSMEM_LENT_CAUSE: what this process already holds past the device is slow system memory, and it ran out."""
    alloc, total = d.numbers.get("allocated_bytes"), d.numbers.get("total_bytes")
    if not (alloc and total and any(c.startswith("PyTorch reports") and "lends system memory" in c
                                    for c in d.causes)):
        return []
    out = []
    req = d.numbers.get("requested_bytes")
    if isinstance(req, int) and req > total and req > alloc:
        # one request over the whole device and larger than all that was lent so far: every byte of it would have to
        # be lent on top (where an allocation that size already went through, freeing what is held comes first)
        out.append(Fix(summary=f"one allocation of {_g(req)}, {req / total:.1f}x the {_g(total)} device, on top of "
                               f"the {_g(alloc)} already held: the operation itself is the size to cut (frames, "
                               "resolution, batch or sequence): it alone is larger than the device"))
    return out + [Fix(summary=f"free what the process already holds before the next allocation ({_g(alloc)} allocated, "
                        f"{_g(alloc - total)} of it past the {_g(total)} device, lent from system RAM and slow): "
                        "del the tensors no longer needed (a name rebound to a new tensor keeps the old one until "
                        "the new one exists), torch.cuda.empty_cache(); else a job that fits the device itself")]


# reader.py: ComfyUI's comfy/model_patcher.py patch_weight_to_device (2024: temp_weight =
# comfy.model_management.cast_to_device(weight, device_to, torch.float32, copy=True), then the patches applied and
# the result cast back to the weight's dtype): each patched weight passes through the GPU in float32 while loading
COMFY_PATCH_CAUSE = ("ComfyUI was applying patches (LoRAs) to a weight as it loaded the model: comfy/model_patcher.py "
                     "patch_weight_to_device copies the weight to the GPU in float32 to apply them (four bytes a "
                     "value, four times an fp8 weight) before casting it back")


def _comfyui(d: Diagnosis) -> bool:
    """A ComfyUI log (logread.py: its modules in the traceback, its own lines): transformers' loading options
    (device_map, bitsandbytes) are no settings of it."""
    return d.engine == "pytorch" and (d.settings.get("comfyui") == "True" or bool(d.settings.get("comfyui_model")))


def _comfyui_weights(d: Diagnosis) -> list[Fix]:
    """ComfyUI's own switches for a model that does not fit (comfy/cli_args.py --lowvram: 'Split the unet in parts
    to use less vram'; model_management.py loads the rest as it runs, offloaded to RAM)."""
    out = [Fix(summary="ComfyUI: --lowvram (the model is loaded in parts, the rest kept in RAM) or a smaller "
                       "checkpoint (an fp8 or GGUF quant of the model)", flags=("--lowvram",))]
    if COMFY_PATCH_CAUSE in d.causes:
        out.insert(0, Fix(summary="fewer LoRAs, or LoRAs merged into the checkpoint beforehand: each patched weight "
                                  "is copied to the GPU in float32 while ComfyUI applies them; under --lowvram the "
                                  "weights left off the GPU are patched layer by layer as they are used"))
    return out


# reader.py: ComfyUI's comfy/sd.py VAE.decode (2023+) catches the whole decode's out-of-memory and retries with
# decode_tiled_; that frame (or its call on the frame's source line) at the failure is the tiled retry running out
COMFY_TILED_VAE_CAUSE = ("ComfyUI's VAE decode ran out and its tiled retry ran out too (comfy/sd.py VAE.decode "
                         "falls back to decode_tiled_ on an out-of-memory): the decode's activations")


def _comfy_tiled_vae(d: Diagnosis) -> list[Fix]:
    """An out-of-memory in ComfyUI's tiled VAE decode: comfy/sd.py VAE.decode catches the whole decode's
    out-of-memory and retries with decode_tiled_ (64-latent tiles, 512 pixels; 2023+), so the tiles ran out too. Its
    own ways past: the VAE Decode (Tiled) node (nodes.py VAEDecodeTiled, a tile_size input) with smaller tiles, or
    the VAE on the CPU (comfy/cli_args.py --cpu-vae: 'Run the VAE on the CPU.')."""
    req, free = d.numbers.get("requested_bytes"), d.numbers.get("free_bytes")
    def size(n: int) -> str:
        return _g(n) if n >= GiB else f"{n / MiB:,.2f} MiB"

    short = f" ({size(req)} asked for, {size(free)} free)" if isinstance(req, int) and isinstance(free, int) else ""
    return [Fix(summary="ComfyUI already retried the VAE decode in tiles (the whole decode ran out first) and a tile "
                        f"ran out too{short}: a VAE Decode (Tiled) node with a smaller tile_size, or --cpu-vae (the "
                        "VAE on the CPU, slower), or a smaller image", flags=("--cpu-vae",))]


# llama.cpp's llm_load_tensors before b3893 (d5ac8cf2, 2024-10-07: "unable to allocate %s buffer" with the buffer
# type's name from then on): every buffer type's tensors were allocated alike (ggml_backend_alloc_ctx_tensors_from_buft)
# and any refusal threw "unable to allocate backend buffer", the CPU's (no mmap, a pinned host buffer) as the GPU's
_UNNAMED_BUFFER = re.compile(r"unable to allocate backend buffer")


def _unnamed_model_buffer(d: Diagnosis) -> list[Fix]:
    """The model's buffer refused with no buffer type named, and no line before it naming the device's allocation:
    host RAM is as likely as the GPU (ollama#6606: the reporter's RAM was short)."""
    text = " ".join((d.evidence or "", str(d.numbers.get("reason", ""))))
    if d.stage != "weights" or not _UNNAMED_BUFFER.search(text) or d.backend:
        return []
    return [Fix(summary="free RAM (close other programs) or a smaller model or quant: this message (llama.cpp before "
                        "b3893, 2024-10) names no buffer, and the one refused may be the CPU's part of the model, "
                        "not the GPU's")]


def _pinned_host(d: Diagnosis) -> list[Fix]:
    """PINNED_HOST_CAUSE: the copy's pinned destination is what to change, not the GPU's memory."""
    if PINNED_HOST_CAUSE not in d.causes:
        return []
    out = [Fix(summary="non_blocking=False on that copy (or pin_memory=False in the DataLoader): the copy then lands "
                       "in pageable RAM, slower but outside the pinned-memory limit")]
    if UNSLOTH_OFFLOAD_CAUSE in d.causes:
        out.insert(0, Fix(summary="use_gradient_checkpointing=True instead of \"unsloth\": checkpointing on the GPU "
                                  "copies no activations to pinned host memory (more VRAM, which the card has)"))
    return out


# ComfyUI's own log lines (comfy/model_management.py load_models_gpu: "Requested to load <model>"; its error report)
_COMFYUI = re.compile(r"\bRequested to load \w{1,80}|\bComfyUI\b")


def _torch_one_activation(d: Diagnosis) -> list[Fix]:
    """HALF_DEVICE_CAUSE: the operation that made the tensor is what to change; in ComfyUI its attention options
    (comfy/cli_args.py --use-split-cross-attention, --use-quad-cross-attention: the score matrix in slices / the
    sub-quadratic algorithm) are the settings that bound it."""
    if HALF_DEVICE_CAUSE not in d.causes:
        return []
    req, total = d.numbers.get("requested_bytes"), d.numbers.get("total_bytes")
    out = [Fix(summary=f"one tensor of {_g(req)} on a device of {_g(total)}: a memory-efficient attention (flash / "
                       "SDPA, or one computed in slices) never holds the whole score matrix; else fewer tokens "
                       "(a lower resolution, fewer frames, a shorter sequence)")]
    if _COMFYUI.search(d.evidence or "") or any("ComfyUI" in c for c in d.causes) or d.settings.get("comfyui_model"):
        out.insert(0, Fix(summary="ComfyUI: --use-split-cross-attention (or --use-quad-cross-attention) computes the "
                                  "attention in slices instead of one score matrix; or a lower resolution / fewer "
                                  "frames", flags=("--use-split-cross-attention",)))
    return out


MIN_USEFUL_CONTEXT = 4096  # below this, a context that fits is no answer: the next tier is


def _next_tier(d: Diagnosis, fixes: list[Fix]) -> list[Fix]:
    """When the largest context that fits is too short to be useful, the change of hardware or model that is."""
    if d.stage != "kv_cache":
        return []
    lengths = [int(f.flags[1]) for f in fixes if len(f.flags) >= 2 and f.flags[0] in ("--max-model-len", "-c")
               and f.flags[1].isdigit()]
    if not lengths or max(lengths) >= MIN_USEFUL_CONTEXT:
        return []
    runner = d.host or d.engine
    asked = d.numbers.get("max_model_len")
    if runner in ("vllm", "sglang") and asked and 2 * max(lengths) >= asked:
        return []  # the fp8 KV cache offered beside it (twice the tokens in the same memory) reaches the length asked
    if runner in ("vllm", "sglang"):
        tp = d.settings.get("tensor_parallel_size") or d.settings.get("tp_size") or 1
        flag = "--tensor-parallel-size" if runner == "vllm" else "--tp-size"
        gpus = "two GPUs" if tp == 1 else f"{2 * tp} GPUs instead of {tp}"
        text = (f"the next tier: nothing useful fits on this GPU; {flag} {2 * tp} (the KV cache and weights "
                f"split across {gpus}), or a quantized checkpoint (AWQ / GPTQ / FP8), or a GPU with more memory")
    else:
        moe = "" if _dense(d) else ", or --n-cpu-moe for MoE"
        text = (f"the next tier: nothing useful fits; fewer layers on the GPU (-ngl{moe}), a smaller quant, or a GPU "
                "with more memory")
    return [Fix(summary=text)]


def _by_estimate(d: Diagnosis) -> list[Fix]:
    """The largest context oomkit's own estimate finds for the model the log names, with its settings and memory."""
    from .predict import largest_context  # lazy: the catalog and the engines only when a log names a model

    lc = largest_context(d)
    if not lc or not lc.get("max_context"):
        return []
    runner = d.host or d.engine
    flag = "--max-model-len" if lc["engine"] == "vllm" else "-c"
    if runner == "ollama":
        flag = "OLLAMA_CONTEXT_LENGTH"
    now = d.numbers.get("max_model_len") or d.settings.get("max_model_len") or d.numbers.get("n_ctx") \
        or d.settings.get("n_ctx")
    if now and lc["max_context"] >= int(now):
        return [Fix(summary=f"oomkit's estimate of {lc['model']} fits {flag} {now} on the memory the log printed: the "
                            "memory the engine found was smaller than that (another process, or the estimate is off "
                            "for this build)")]
    out = [Fix(summary=f"{flag} {lc['max_context']}: the largest context oomkit's estimate of {lc['model']} fits with "
                       "these settings on this memory", flags=(flag, str(lc["max_context"])))]
    for key, kv in (("max_context_fp8", "fp8"), ("max_context_q8_0", "q8_0")):
        if lc.get(key):
            extra = ("--kv-cache-dtype", "fp8") if kv == "fp8" else ("-ctk", "q8_0", "-ctv", "q8_0", "-fa", "on")
            out.append(Fix(summary=f"{flag} {lc[key]} with a {kv} KV cache (oomkit's estimate of {lc['model']})",
                           flags=(flag, str(lc[key]), *extra)))
    return out


def _covered(text: str, fixes: list[Fix]) -> bool:
    flags = {f.flags[0] for f in fixes if f.flags} | {k for f in fixes for k, _ in f.env}
    flags |= {f.summary.split(" ", 1)[0] for f in fixes if f.summary.startswith(("-", "PYTORCH", "OLLAMA"))}
    if any(f.command and "nvidia-smi" in f.command for f in fixes) and "nvidia-smi" in text:
        return True
    return any(flag in text for flag in flags) or any(f.summary.startswith(text) for f in fixes)


# ---------------------------------------------------------------------------------------------------------
# PyTorch


def _fragmentation(d: Diagnosis) -> Fix:
    n = d.numbers
    if async_had_room(n):  # expandable segments are the native allocator's: the cudaMallocAsync backend has none
        return _async_room(d)
    var = "PYTORCH_CUDA_ALLOC_CONF"
    ev = d.evidence or ""
    if "PYTORCH_HIP_ALLOC_CONF" in ev or d.backend == "ROCm":
        var = "PYTORCH_HIP_ALLOC_CONF"
    if "PYTORCH_ALLOC_CONF=" in ev:
        var = "PYTORCH_ALLOC_CONF"
    if d.backend == "NPU" or "PYTORCH_NPU_ALLOC_CONF" in ev:  # torch_npu reads its own variable
        var = "PYTORCH_NPU_ALLOC_CONF"
    ru = n.get("reserved_unallocated_bytes")
    return Fix(summary=f"{var}=expandable_segments:True: {_g(ru)} is reserved but unallocated (fragmented)",
               env=((var, "expandable_segments:True"),), saves_bytes=ru)


def other_processes(n: dict[str, Any]) -> list[dict[str, int]]:
    """The processes of a PyTorch OOM other than the failing one. With `this process has X` named, every listed
    process is another; without it, the one whose use covers what PyTorch holds is taken to be this one."""
    procs = list(n.get("processes") or ())
    if not procs:
        return []
    if n.get("this_process_bytes") is not None:
        mine = n["this_process_bytes"]
        return [p for p in procs if abs(p["bytes"] - mine) > MiB]
    held_by_torch = (n.get("allocated_bytes") or 0) + (n.get("reserved_unallocated_bytes") or 0)
    procs.sort(key=lambda p: -p["bytes"])
    candidates = [p for p in procs if p["bytes"] >= held_by_torch]
    if not candidates:  # none covers PyTorch's share: this process is not listed (a container); all are others
        return procs
    me = min(candidates, key=lambda p: p["bytes"])
    return [p for p in procs if p is not me]


# c10/cuda/CUDAMallocAsyncAllocator.cpp mallocAsync (PyTorch 2.0+): "Currently allocated" is pytorch_used_bytes (what
# this process's PyTorch holds through the allocator, which caches nothing), "Device limit" / "Free" cudaMemGetInfo's
# total and free, the last figure pytorch_memory_limits (the memory fraction; UINT64_MAX when none is set)
def async_limit_hit(n: dict[str, Any]) -> bool:
    """The memory fraction refused it: allocated + requested over the PyTorch limit, a limit below the device."""
    alloc, req, limit, total = (n.get(k) for k in ("allocated_bytes", "requested_bytes", "fraction_limit_bytes",
                                                   "total_bytes"))
    return (isinstance(alloc, int) and isinstance(req, int) and isinstance(limit, int) and alloc + req > limit
            and not (isinstance(total, int) and limit > total))


def async_outside(n: dict[str, Any]) -> int | None:
    """The device refused it (free below the request, under the fraction's limit) while memory held outside this
    process's PyTorch allocations (total - free - allocated: other programs on the GPU, or this process's CUDA context
    and non-PyTorch libraries) could have held the request: -> those bytes, else None."""
    alloc, req, total, free = (n.get(k) for k in ("allocated_bytes", "requested_bytes", "total_bytes", "free_bytes"))
    if not all(isinstance(v, int) for v in (alloc, req, total, free)) or async_limit_hit(n) or free >= req:
        return None
    outside = total - free - alloc
    return outside if outside >= req else None


def async_had_room(n: dict[str, Any]) -> bool:
    """cudaMallocAsync itself refused (under the fraction's limit) while the device, read right after
    (cudaMemGetInfo), had the request free: mallocAsync makes one cudaMallocAsync call and no second try, where the
    native allocator (c10/cuda/CUDACachingAllocator.cpp malloc) frees its cached blocks and allocates again."""
    req, free = n.get("requested_bytes"), n.get("free_bytes")
    return (isinstance(req, int) and isinstance(free, int) and free >= req and n.get("fraction_limit_bytes") is not None
            and not async_limit_hit(n))


# reader.py: the cudaMallocAsync backend's refusal with the device's room free (async_had_room); c10/cuda/
# CUDAMallocAsyncAllocator.cpp lazy_init_device keeps the pool's freed memory (release threshold UINT64_MAX), which
# cudaMemGetInfo counts as used, so the free figure is room outside the pool
ASYNC_ROOM_CAUSE = ("PyTorch's cudaMallocAsync allocator refused {req} while the device had {free} free "
                    "(cudaMemGetInfo, read right after): not the device's capacity but that allocator, which asks "
                    "the driver once and does not retry")


def _async_room(d: Diagnosis) -> Fix:
    """The native allocator instead of cudaMallocAsync: PyTorch's allocator config takes backend:native /
    backend:cudaMallocAsync (c10/cuda/CUDAAllocatorConfig.cpp parseAllocatorConfig); ComfyUI sets
    backend:cudaMallocAsync itself on PyTorch 2.0+ (cuda_malloc.py) unless started with --disable-cuda-malloc."""
    n = d.numbers
    req = n.get("requested_bytes")
    where = f" ({_g(n.get('free_bytes'))} was free, {req / MiB:,.2f} MiB asked for)" if isinstance(req, int) else ""
    if _comfyui(d):
        return Fix(summary="ComfyUI: --disable-cuda-malloc (PyTorch's native allocator, which frees its cache and "
                           f"retries before it gives up, instead of cudaMallocAsync){where}",
                   flags=("--disable-cuda-malloc",))
    return Fix(summary="PYTORCH_CUDA_ALLOC_CONF=backend:native (the native allocator, which frees its cache and "
                       f"retries, instead of cudaMallocAsync; ComfyUI: --disable-cuda-malloc){where}",
               env=(("PYTORCH_CUDA_ALLOC_CONF", "backend:native"),))


def _sycl_moe(d: Diagnosis) -> list[Fix]:
    """A SYCL failure with llama.cpp's MoE offload on the command line: the experts it leaves on the GPUs
    (common/arg.cpp --n-cpu-moe N keeps those of the first N layers on the CPU, -ngl the rest of each layer) are the
    weights to move back; the SYCL maintainers' answer to a model larger than the GPUs (llama.cpp#25812)."""
    flag = d.settings.get("cpu_moe_flag")
    if not flag:
        return []
    return [Fix(summary=f"--n-cpu-moe higher (more layers' experts kept in host RAM; {flag} was given) or -ngl fewer: "
                        "the experts left on the GPUs are the weights that did not fit")]


def _torch_allowed(d: Diagnosis) -> list[Fix]:
    n = d.numbers
    alloc, req, limit = n.get("allocated_bytes"), n.get("requested_bytes"), n.get("fraction_limit_bytes")
    if async_limit_hit(n):
        return [Fix(summary=f"a larger memory fraction (torch.cuda.set_per_process_memory_fraction; TGI: "
                            f"--cuda-memory-fraction): {_g(alloc)} allocated + {_g(req)} requested exceed the "
                            f"{_g(limit)} it allows"),
                Fix(summary="a smaller batch / prefill")]
    outside = async_outside(n)
    out = []
    if outside is not None:
        # first where the reading placed the shortage outside PyTorch (reader.py); after the batch where a step of
        # the program's own placed it (TGI's warm-up), where that memory may be its own non-PyTorch use
        out.append(Fix(summary=f"close the other programs using this GPU (`nvidia-smi` lists them; a browser or the "
                               f"desktop on the same GPU counts): {_g(outside)} of the {_g(n['total_bytes'])} device "
                               f"is held outside PyTorch's {_g(alloc)}, and the {_g(req)} request would fit in it",
                       command="nvidia-smi --query-compute-apps=pid,used_memory --format=csv",
                       saves_bytes=outside))
    smaller = Fix(summary="a smaller batch, resolution or prefill, or a smaller / quantized model"
                          + (f": PyTorch itself holds {_g(alloc)}" if isinstance(alloc, int) else ""))
    return out + [smaller] if d.stage == "other_process" else [smaller] + out


def _other_process(d: Diagnosis) -> list[Fix]:
    out = []
    for p in other_processes(d.numbers)[:3]:
        out.append(Fix(summary=f"free the {_g(p['bytes'])} held by PID {p['pid']} (`nvidia-smi` shows it; stop it "
                               f"or move it to another GPU)",
                       command=f"nvidia-smi --query-compute-apps=pid,used_memory --format=csv  # then: kill {p['pid']}",
                       saves_bytes=p["bytes"]))
    if not out and d.numbers.get("free_bytes") is not None:
        out.append(Fix(summary="free the GPU: other processes hold memory (`nvidia-smi`)",
                       command="nvidia-smi --query-compute-apps=pid,used_memory --format=csv"))
    return out


# ---------------------------------------------------------------------------------------------------------
# vLLM


def _vllm_util(d: Diagnosis) -> float:
    u = d.settings.get("gpu_memory_utilization")
    if u:
        return float(u)
    v = d.engine_version or ""
    parts = v.split(".")
    try:
        newer = (int(parts[0]), int(parts[1])) >= (0, 20)
    except (ValueError, IndexError):
        newer = False
    # EngineArgs default: 0.92 from 0.20 (config/cache.py; engines/vllm/settings.py ERAS cudagraph_budget)
    return 0.92 if newer else 0.9


def _vllm_total(d: Diagnosis) -> int | None:
    return d.settings.get("total_gpu_memory_bytes") or d.numbers.get("total_bytes")


def _vllm_kv_v1(d: Diagnosis) -> list[Fix]:
    n = d.numbers
    m, need, avail = n.get("max_model_len"), n.get("kv_needed_bytes"), n.get("kv_available_bytes")
    if not m or not need:
        return []
    per_token = need / m
    out = []
    est = n.get("estimated_max_len")
    if est is None and avail and avail > 0:
        est = int(avail / per_token) // VLLM_BLOCK * VLLM_BLOCK
    if est and est > 0:
        out.append(Fix(summary=f"--max-model-len {est}: the longest request the {_g(avail)} of KV cache holds "
                               f"({per_token / 1024:.1f} KiB per token)",
                       flags=("--max-model-len", str(est)), saves_bytes=int(need - per_token * est)))
    else:
        out.append(Fix(summary="no KV cache room at all: the weights and activations take the whole "
                               "gpu_memory_utilization share; a quantized checkpoint or more GPUs "
                               "(--tensor-parallel-size) first"))
    short = need - (avail or 0)
    total, u = _vllm_total(d), _vllm_util(d)
    if total:
        new_u = math.ceil((u + short / total) * 100) / 100
        if new_u <= 0.98:
            tokens = int(((avail or 0) + (new_u - u) * total) / per_token)
            out.append(Fix(summary=f"--gpu-memory-utilization {new_u:.2f} (from {u:.2f}): {_g(short)} more for the "
                                   f"KV cache, room for {tokens:,} tokens at --max-model-len {m} (only when "
                                   "nothing else uses the GPU)",
                           flags=("--gpu-memory-utilization", f"{new_u:.2f}"), saves_bytes=None))
    else:
        out.append(Fix(summary=f"--gpu-memory-utilization higher than {u:.2f}: the KV cache needs {_g(short)} more "
                               f"(raise it by {_g(short)} / the GPU's memory; only when nothing else uses the GPU)"))
    kvd = str(d.settings.get("kv_cache_dtype", "auto"))
    if not kvd.startswith("fp8"):
        half = need / 2
        flags: tuple[str, ...] = ("--kv-cache-dtype", "fp8")
        longest = None
        if avail and half <= avail:
            summary = f"--kv-cache-dtype fp8: half the KV bytes ({_g(half)}), so {m} tokens fit"
        elif est and est > 0:
            longest = min(m, 2 * est // VLLM_BLOCK * VLLM_BLOCK)
        elif avail and avail > 0:
            longest = int(avail / (per_token / 2)) // VLLM_BLOCK * VLLM_BLOCK
        else:
            summary = "--kv-cache-dtype fp8: half the KV bytes"
        if longest:
            summary = f"--kv-cache-dtype fp8 --max-model-len {longest}: half the KV bytes a token, so twice the length"
            flags += ("--max-model-len", str(longest))
        out.append(Fix(summary=summary, flags=flags, saves_bytes=int(half)))
    return out


def _vllm_kv_v0(d: Diagnosis) -> list[Fix]:
    n = d.numbers
    m, cap = n.get("max_model_len"), n.get("kv_capacity_tokens")
    if not m or not cap:
        return []
    kv = d.buffers.get("available_kv_cache_bytes")
    per_token = kv / cap if kv else None
    new = cap // VLLM_BLOCK * VLLM_BLOCK
    out = [Fix(summary=f"--max-model-len {new}: the KV cache holds {cap:,} tokens",
               flags=("--max-model-len", str(new)),
               saves_bytes=int((m - new) * per_token) if per_token else None)]
    total, u = _vllm_total(d), _vllm_util(d)
    if per_token and total:
        short = (m - cap) * per_token
        new_u = math.ceil((u + short / total) * 100) / 100
        if new_u <= 0.98:
            out.append(Fix(summary=f"--gpu-memory-utilization {new_u:.2f} (from {u:.2f}): {_g(short)} more KV cache "
                                   f"holds {m} tokens", flags=("--gpu-memory-utilization", f"{new_u:.2f}")))
    if not str(d.settings.get("kv_cache_dtype", "auto")).startswith("fp8"):  # fp8 / fp8_e5m2 / fp8_e4m3 in force
        out.append(Fix(summary="--kv-cache-dtype fp8: twice the tokens in the same memory",
                       flags=("--kv-cache-dtype", "fp8"), saves_bytes=int(kv / 2) if kv else None))
    return out


def _vllm_free_startup(d: Diagnosis) -> list[Fix]:
    n = d.numbers
    free, total, u = n.get("free_bytes"), n.get("total_bytes"), n.get("gpu_memory_utilization")
    if not free or not total or not u:
        return []
    new_u = math.floor(free / total * 100) / 100 - 0.01
    out = [Fix(summary=f"free the {_g(total - free)} other processes hold (`nvidia-smi`), or a stale vLLM",
               command="nvidia-smi --query-compute-apps=pid,used_memory --format=csv", saves_bytes=total - free)]
    if new_u > 0.05:
        out.append(Fix(summary=f"--gpu-memory-utilization {new_u:.2f} (from {u:.2f}): below the free share "
                               f"{free / total:.3f} of {_g(total)}", flags=("--gpu-memory-utilization", f"{new_u:.2f}"),
                       saves_bytes=int((u - new_u) * total)))
    return out


def _vllm_no_blocks(d: Diagnosis) -> list[Fix]:
    total, u = _vllm_total(d), _vllm_util(d)
    w = d.buffers.get("model_loading_bytes")
    out = []
    if total and w:
        need = w / total
        new_u = min(0.98, max(u + 0.05, math.ceil((need + 0.08) * 100) / 100))
        out.append(Fix(summary=f"--gpu-memory-utilization {new_u:.2f} (from {u:.2f}): the weights alone take "
                               f"{_g(w)} = {need:.0%} of {_g(total)}; the KV cache gets what is left of "
                               "utilization x total after weights and activations",
                       flags=("--gpu-memory-utilization", f"{new_u:.2f}")))
    else:
        # a fraction of total memory, at most 1 (vLLM's CacheConfig); the flag above the value in force or none
        new_u = min(0.98, math.floor((u + 0.05) * 100 + 1e-6) / 100)
        out.append(Fix(summary=f"--gpu-memory-utilization higher than {u:.2f} (a fraction of TOTAL memory: the "
                               "KV cache gets what is left after weights and activations)",
                       flags=("--gpu-memory-utilization", f"{new_u:.2f}") if new_u > u else ()))
    return out


def _vllm_negative_kv(d: Diagnosis) -> list[Fix]:
    short = -(d.numbers.get("kv_available_bytes") or 0)
    total, u = _vllm_total(d), _vllm_util(d)
    w = d.buffers.get("model_loading_bytes")
    what = f" (the weights alone take {_g(w)})" if w else ""
    if total:
        # the KV room left beside the shortfall: 2 GiB up to 0.98; less room rather than a fraction above 0.95
        for room, cap in ((2 * GiB, 0.98), (GiB, 0.95), (GiB // 2, 0.95)):
            new_u = math.ceil((u + (short + room) / total) * 100) / 100
            if new_u <= cap:
                return [Fix(summary=f"--gpu-memory-utilization {new_u:.2f} (from {u:.2f}): {_g(short)} short before "
                                    f"any KV cache{what}; this leaves about {_g(room)} for it",
                            flags=("--gpu-memory-utilization", f"{new_u:.2f}"))]
    return [Fix(summary=f"the KV budget is {_g(short)} short of zero{what}: raise --gpu-memory-utilization by more "
                        "than that share of the GPU if it allows, else a smaller or quantized checkpoint or "
                        "--tensor-parallel-size 2")]


def _vllm_metal_budget(d: Diagnosis) -> list[Fix]:
    """vllm-metal's KV budget (worker's paged-attention plan): metal_limit x fraction - model_memory - overhead <= 0.
    The fraction that leaves KV room when one does, else what shrinks the two terms: the overhead is the profile run's
    peak, measured at --max-num-batched-tokens tokens, and the weights."""
    n = d.numbers
    limit, frac = n.get("total_bytes"), n.get("memory_fraction")
    w, o = n.get("model_required_bytes"), n.get("overhead_bytes")
    if not (limit and frac and w is not None and o is not None):
        return []
    env = "VLLM_METAL_MEMORY_FRACTION" in (d.evidence or "") or d.settings.get("vllm_metal_env")
    out: list[Fix] = []
    room = GiB  # a KV pool of about 1 GiB beside the two terms
    need = math.ceil((w + o + room) / limit * 100) / 100
    if need <= 0.95:
        out.append(Fix(summary=f"{'VLLM_METAL_MEMORY_FRACTION' if env else '--gpu-memory-utilization'} {need:.2f} "
                               f"(from {frac:g}): the weights ({w / 1e9:.2f} GB) and the profile's overhead "
                               f"({o / 1e9:.2f} GB) with about 1 GiB of KV cache in {limit / 1e9:.2f} GB of Metal memory",
                       **({"env": (("VLLM_METAL_MEMORY_FRACTION", f"{need:.2f}"),)} if env else
                          {"flags": ("--gpu-memory-utilization", f"{need:.2f}")})))
    mbt = d.settings.get("max_num_batched_tokens")
    if need > 0.95 or (o > w and o > GiB):
        if mbt and int(mbt) > 2048:
            out.append(Fix(summary=f"--max-num-batched-tokens 2048 (from {mbt}): the overhead ({o / 1e9:.2f} GB) is "
                                   "the profile run's peak at that many tokens (vllm serve's default is 2048)",
                           flags=("--max-num-batched-tokens", "2048")))
        else:
            out.append(Fix(summary=f"--max-num-batched-tokens smaller: the overhead ({o / 1e9:.2f} GB) is the profile "
                                   "run's peak at that many tokens"))
    if need > 0.95:
        out.append(Fix(summary=f"a smaller or more quantized model: the weights ({w / 1e9:.2f} GB) and the overhead "
                               f"({o / 1e9:.2f} GB) pass {0.95 * limit / 1e9:.2f} GB, 0.95 of the Metal limit, so no "
                               "fraction leaves a KV cache"))
    return out


def _vllm_sampler(d: Diagnosis) -> list[Fix]:
    n = d.numbers.get("max_num_seqs") or d.settings.get("max_num_seqs")
    if not n:
        return []
    new = max(16, min(256, int(n) // 4))
    return [Fix(summary=f"--max-num-seqs {new} (from {n}): the sampler warms up with one dummy request per "
                        "sequence", flags=("--max-num-seqs", str(new)))]


# the reason reader.py gives a failure placed in vLLM's start-up profile run (logread.py in_profile_run), and its
# multi-modal addition: the fixes below key on them
PROFILE_RUN_CAUSE = ("placed in vLLM's start-up profile run (determine_num_available_blocks / "
                     "determine_available_memory -> profile_run): a forward pass of a dummy batch of max_num_seqs "
                     "sequences, before the KV cache is sized and before any CUDA graph is captured")
PROFILE_RUN_MM = ("; for a multi-modal model the dummy batch also carries the worst-case images per prompt "
                  "(multimodal/profiling.py)")


def _vllm_profile_run(d: Diagnosis) -> list[Fix]:
    """The start-up profile run ran out (PROFILE_RUN_CAUSE): its dummy batch is max_num_seqs sequences (V0
    worker/model_runner.py profile_run; V1 gpu_model_runner.py profile_run / _dummy_run) and, for a multi-modal model,
    their images (multimodal/profiling.py: limit_mm_per_prompt items each); CUDA graphs come after it (--enforce-eager
    does not lower it) and --gpu-memory-utilization only sizes the KV cache that follows."""
    seqs = d.settings.get("max_num_seqs")
    new = max(1, int(seqs) // 4) if seqs else 16
    out = [Fix(summary=f"--max-num-seqs {new}{f' (from {seqs})' if seqs else ''}: the profile run's dummy batch is "
                       "max_num_seqs sequences (for an encoder-decoder vision model, that many images too)",
               flags=("--max-num-seqs", str(new)))]
    if any(c.endswith(PROFILE_RUN_MM) for c in d.causes):
        out.append(Fix(summary="--limit-mm-per-prompt with fewer images (and videos) per prompt: the profile run "
                               "reserves the worst case of each for every sequence"))
    out.append(Fix(summary="--max-model-len smaller: the profile run's sequences are as long as the model's context "
                           "(max_num_batched_tokens / max_num_seqs)"))
    return out


# vLLM's engine died on a scheduled step while serving (reader.py _VLLM_SERVING: v1/engine/core.py run_engine_core's
# "EngineCore encountered a fatal error." from run_busy_loop, v1/engine/exceptions.py EngineDeadError, V0's
# MQEngineDeadError "Engine loop is not running"): past start-up, so no graph is being captured and no dummy batch run
VLLM_SERVING_CAUSE = ("vLLM ran out serving a scheduled step (its engine core died in run_busy_loop after start-up): "
                      "the step's activations run in what the KV cache leaves of the gpu_memory_utilization budget, "
                      "and a long prompt's step needed more than the start-up profile measured")


def _vllm_serving(d: Diagnosis) -> list[Fix]:
    """A step that ran out while serving: a smaller KV cache leaves its activations room (the budget's remainder is
    what the start-up profile run measured for a max_num_batched_tokens batch; the attention over a long cached
    context, the backend's scratch and a LoRA's buffers come on top), and smaller prefill chunks shrink them
    (v1/core/sched/scheduler.py schedules at most max_num_batched_tokens tokens a step). CUDA graphs were captured
    at start-up, so --enforce-eager is no fix for a step that fails later."""
    n = d.numbers
    u, total = _vllm_util(d), _vllm_total(d)
    req, free = n.get("requested_bytes"), n.get("free_bytes")
    step = 0.05
    if req is not None and free is not None and total and req > free:
        step = max(step, math.ceil((req - free) / total * 100) / 100)
    new_u = round(max(0.3, u - step), 2)
    out = [Fix(summary=f"--gpu-memory-utilization {new_u:.2f} (from {u:.2f}): a KV cache "
                       f"{_g(round(u - new_u, 2) * total) if total else f'{u - new_u:.2f} of the GPU'} smaller leaves "
                       "the step's activations room beyond what the start-up profile measured",
               flags=("--gpu-memory-utilization", f"{new_u:.2f}"),
               saves_bytes=int(round(u - new_u, 2) * total) if total else None)]
    mbt = d.settings.get("max_num_batched_tokens")
    new = max(512, int(mbt) // 2) if mbt else 2048
    out.append(Fix(summary=f"--max-num-batched-tokens {new}{f' (from {mbt})' if mbt else ''}: a long prompt is "
                           "prefilled in chunks of at most that many tokens a step; the chunk's activations shrink "
                           "with it", flags=("--max-num-batched-tokens", str(new))))
    return out


def _vllm_chunked_off(d: Diagnosis) -> list[Fix]:
    """--no-enable-chunked-prefill typed: config/scheduler.py then sets max_num_batched_tokens = max(max_model_len,
    2048), so a prompt as long as the context runs in one step, all its activations at once."""
    if str(d.settings.get("enable_chunked_prefill")) != "False":
        return []
    ctx = d.settings.get("max_model_len")
    return [Fix(summary="drop --no-enable-chunked-prefill: without it vLLM prefills a prompt in chunks "
                        "(max_num_batched_tokens a step); with it a prompt of up to max_model_len"
                        + (f" ({int(ctx):,})" if ctx else "") + " tokens runs in one step, its activations at once")]


def _vllm_compute(d: Diagnosis) -> list[Fix]:
    if any(c.startswith(PROFILE_RUN_CAUSE) for c in d.causes):
        return _vllm_profile_run(d)
    if any(c.startswith(VLLM_SERVING_CAUSE) for c in d.causes):
        return _vllm_chunked_off(d) + _vllm_serving(d)
    if any(c.startswith("the traceback runs through vLLM's vision-encoder attention") for c in d.causes):
        # the encoder's per-image attention (reader.py VIT_ATTN_CAUSE): the image's size sets it, not the text
        # budget; the start-up profile runs it on the largest image the processor accepts
        return [Fix(summary="smaller images: --mm-processor-kwargs '{\"max_pixels\": N}' (Qwen-VL processors) caps "
                            "the patches per image, and the encoder's attention shrinks with their square"),
                Fix(summary="--limit-mm-per-prompt '{\"image\": 0}' if no images are needed: no encoder run, no "
                            "encoder profile at start-up")]
    mm = _mm_limit_fix(d)
    if mm:  # several images or videos per prompt reserved for every sequence: the run's usual multi-modal cost
        return [mm, *_vllm_compute_generic(d)]
    return _vllm_compute_generic(d)


_MM_COUNTS = re.compile(r"['\"]?(image|video|audio)['\"]?\s{0,2}[:=]\s{0,2}([0-9]{1,4})")


def _mm_limit_fix(d: Diagnosis) -> Fix | None:
    """limit_mm_per_prompt above one item of a kind (logread.py reads it from the command or the script): vLLM's
    profile run (multimodal/profiling.py MultiModalProfiler.get_dummy_data / V1 gpu_model_runner.py profile_run's
    encoder budget) builds each dummy sequence with that many items at their largest size, so the start-up
    activations grow with the counts."""
    raw = str(d.settings.get("limit_mm_per_prompt") or "")
    counts = {k: int(v) for k, v in _MM_COUNTS.findall(raw)}
    if not counts or max(counts.values()) <= 1:
        return None
    now = ", ".join(f"{k} {v}" for k, v in counts.items())
    return Fix(summary=f"--limit-mm-per-prompt with fewer items (now {now}): the profile run builds every dummy "
                       "sequence with that many images / videos at their largest size")


def _vllm_compute_generic(d: Diagnosis) -> list[Fix]:
    u = _vllm_util(d)
    # a typed --enforce-eager (logread.py) is in force already: no fix offers it again
    eager = str(d.settings.get("enforce_eager")) == "True"
    out = _vllm_chunked_off(d) + ([] if eager else [
        Fix(summary="--enforce-eager: no CUDA graphs (their capture and memory pool go)", flags=("--enforce-eager",))])
    seqs = d.settings.get("max_num_seqs")
    out.append(Fix(summary=f"--max-num-seqs {max(16, int(seqs) // 2) if seqs else 128}: a smaller batch at graph "
                           "capture and warm-up", flags=("--max-num-seqs", str(max(16, int(seqs) // 2) if seqs else 128))))
    set_u = d.settings.get("gpu_memory_utilization")
    if set_u and float(set_u) >= 0.98:
        # the fraction of the whole device vLLM may use (worker.py determine_num_available_blocks in V0,
        # v1/worker/gpu_worker.py determine_available_memory): the KV cache gets total x utilization less the
        # profiled peak, so at 0.98-1.0 it takes all the profile left, and what allocates after it (CUDA-graph
        # capture, the sampler's warm-up, an encoder's first real input, cuBLAS / NCCL workspaces the profile did not
        # see) has nothing: vLLM's own default leaves that margin
        default = _vllm_util(dataclasses.replace(d, settings={k: v for k, v in d.settings.items()
                                                              if k != "gpu_memory_utilization"}))
        out.insert(0, Fix(summary=f"--gpu-memory-utilization {default:.2f} (from {float(set_u):.2f}, vLLM's default): "
                                  f"at {float(set_u):.2f} the KV cache is sized to take everything the profile run left, and "
                                  "what allocates after it (CUDA graphs, the sampler's warm-up, an image's encoder "
                                  "activations) has no room",
                          flags=("--gpu-memory-utilization", f"{default:.2f}")))
        return out
    out.append(Fix(summary=f"--gpu-memory-utilization {max(0.5, u - 0.05):.2f} (from {u:.2f}): leaves more room "
                           "outside the KV cache for activations and graphs",
                   flags=("--gpu-memory-utilization", f"{max(0.5, u - 0.05):.2f}")))
    return out


def _vllm_fragmentation(d: Diagnosis) -> list[Fix]:
    """A PyTorch failure in a vLLM log whose allocator holds blocks unused (reader.py _torch_stage: fragmentation):
    vLLM sizes its KV cache to total x gpu_memory_utilization less the profiled peak (V1 gpu_worker.py
    determine_available_memory; V0 worker.py determine_num_available_blocks), so everything PyTorch allocates after
    it (CUDA graphs, the sampler's warm-up, a step's activations) comes out of the rest of the device. Beside the
    allocator's setting (fixes_for: _STAGE_FIXES), a lower fraction widens that rest."""
    u = _vllm_util(d)
    n = d.numbers
    total, alloc = n.get("total_bytes"), n.get("allocated_bytes")
    held = (f": PyTorch holds {_g(alloc)} of the {_g(total)} device, past vLLM's budget of {u:.2f} x {_g(total)} = "
            f"{_g(total * u)}" if isinstance(total, int) and isinstance(alloc, int) and alloc > total * u else "")
    lower = max(0.5, u - 0.05)
    return [Fix(summary=f"--gpu-memory-utilization {lower:.2f} (from {u:.2f}){held}; the KV cache is sized to "
                        "total x utilization less the profiled peak, and what allocates after it comes out of the rest",
                flags=("--gpu-memory-utilization", f"{lower:.2f}"))]


_EST_FIX = re.compile(r"(--[a-z][a-z0-9-]{0,60})(?: to ([0-9][0-9.]{0,12}))?")


def _vllm_post_kv(d: Diagnosis, predict: bool = True) -> list[Fix]:
    """A run that allocated its KV cache, then ran out capturing CUDA graphs or warming up the sampler. With the
    model, release and GPU in the log: oomkit's estimate of that run, and the changes with which its every phase
    fits (engines/vllm/layout.py _post_kv_fixes: --max-num-seqs halved, --gpu-memory-utilization in 0.01 steps,
    --enforce-eager when the capture runs out). Else the changes the log's own numbers give."""
    out: list[Fix] = []
    if d.phase == "sampling":  # at serving time: the batch's sampling tensors, not a start-up phase
        return _vllm_sampling(d) + _alloc_fix(d)
    if predict:
        from .predict import post_kv_estimate  # lazy: the catalog and engines only when a log names a model

        pk = post_kv_estimate(d)
        if pk is not None:
            fp = pk.get("failed_phase") or {}
            on = f"{_g(pk['free_bytes'])} of the {_g(pk['total_bytes'])} GPU (the rest held by other processes)" \
                if pk.get("free_bytes") and pk["free_bytes"] < pk["total_bytes"] else f"a {_g(pk['total_bytes'])} GPU"
            if fp.get("after_kv") and pk["fixes"]:
                rel = pk["engine_version"] if pk.get("version_printed") else \
                    f"{pk['engine_version']} (the release its 'Model loading took' line places it at)"
                why = (f"oomkit's estimate of {pk['model']} on vLLM {rel} with {on}: KV cache allocated, then the "
                       f"{fp['phase']} needs {_m(fp['needed_bytes'])} with {_m(fp['left_bytes'])} left")
                now = pk.get("settings") or {}
                for text in pk["fixes"]:
                    m = _EST_FIX.search(text)
                    if not m:
                        continue
                    flag, value = m.group(1), m.group(2)
                    was = now.get(flag.removeprefix("--").replace("-", "_"))
                    frm = f" (from {was})" if value and was is not None else ""
                    out.append(Fix(summary=f"{flag}{' ' + value if value else ''}{frm}: {why}; with it every phase "
                                           "fits", flags=(flag, value) if value else (flag,)))
                return out + _alloc_fix(d)
            if pk.get("fits"):
                out.append(Fix(summary=f"oomkit's estimate of {pk['model']} on vLLM {pk['engine_version']} has every "
                                       f"phase fit with {on}: less was free than that (a display, another process, "
                                       "driver memory), or this build needs more after the KV cache; the fixes "
                                       "below come from the log's own numbers"))
    nums = _vllm_post_kv_numbers(d)
    if d.phase == "kernel warm-up":
        # envs.py VLLM_DEEP_GEMM_WARMUP ("skip", "full", "relax"): the warm-up is a speed step, skippable; no CUDA
        # graph or max_num_seqs advice, neither sizes it
        u = _vllm_util(d)
        nums = [Fix(summary="VLLM_DEEP_GEMM_WARMUP=skip: no DeepGEMM warm-up at start-up (the kernels compile on "
                            "first use instead)", env=(("VLLM_DEEP_GEMM_WARMUP", "skip"),)),
                *(f for f in nums if f.flags[:1] == ("--gpu-memory-utilization",))]
        if len(nums) == 1:
            nums.append(Fix(summary=f"--gpu-memory-utilization {max(0.5, u - 0.05):.2f} (from {u:.2f}): a smaller "
                                    "KV cache leaves the warm-up's scratch tensors room",
                            flags=("--gpu-memory-utilization", f"{max(0.5, u - 0.05):.2f}")))
    if d.phase == "warm-up batch" and not any(f.flags[:1] == ("--max-num-seqs",) for f in nums):
        # v1/worker/gpu/warmup.py warmup_kernels: num_reqs = min(max_num_seqs, max_num_batched_tokens //
        # (decode_query_len + 1)); no CUDA graph is captured in it, so no --enforce-eager
        seqs = d.numbers.get("max_num_seqs") or d.settings.get("max_num_seqs")
        new = max(1, int(seqs) // 2) if seqs else 128
        frm = f" (from {seqs})" if seqs else " (the default is 256; 1024 on V1 GPUs of 70 GiB and more)"
        nums.insert(0, Fix(summary=f"--max-num-seqs {new}{frm}: the warm-up runs one dummy request per sequence "
                                   "slot through a prefill and decode steps", flags=("--max-num-seqs", str(new))))
    if not nums:
        nums = _vllm_sampler(d) if d.phase == "sampler warm-up" else _vllm_compute(d)
    return out + nums + _alloc_fix(d)


def _vllm_sampling(d: Diagnosis) -> list[Fix]:
    """vLLM ran out in its sampler while serving (v1/sample/ops/topk_topp_sampler.py apply_top_k_top_p sorts the
    logits, batch x vocabulary in float32, and keeps the indices): fewer requests in a batch, or a smaller KV cache
    leaving the room. No CUDA-graph advice: the sampler runs outside the captured graphs."""
    n = d.numbers
    req, free = n.get("requested_bytes"), n.get("free_bytes")
    total, u = _vllm_total(d), _vllm_util(d)
    seqs = d.settings.get("max_num_seqs")
    new = max(1, int(seqs) // 2) if seqs else 128
    frm = f" (from {seqs})" if seqs else " (the default is 256; 1024 on V1 GPUs of 70 GiB and more)"
    out = [Fix(summary=f"--max-num-seqs {new}{frm}: the sampler's tensors are one row of the vocabulary per running "
                       "request", flags=("--max-num-seqs", str(new)))]
    if req is not None and free is not None and total and req > free:
        step = max(0.01, math.ceil((req - free) / total * 100) / 100)
        new_u = round(u - step, 2)
        if new_u >= 0.3:
            out.append(Fix(summary=f"--gpu-memory-utilization {new_u:.2f} (from {u:.2f}): a KV cache "
                                   f"{_g(step * total)} smaller leaves the sampler the {_m(req - free)} it lacked",
                           flags=("--gpu-memory-utilization", f"{new_u:.2f}"), saves_bytes=int(step * total)))
    return out


def _vllm_post_kv_numbers(d: Diagnosis) -> list[Fix]:
    """From PyTorch's message alone: the allocation that failed (R) and what was free (F). The KV cache is the
    budget's remainder, so each 0.01 of --gpu-memory-utilization taken off leaves 0.01 x total more for the phases
    after it; the sampler's tensors are (dummy requests x vocabulary) each, so they shrink with --max-num-seqs. R
    - F is the least the phase lacked (it may allocate more after the request that failed)."""
    n = d.numbers
    req, free = n.get("requested_bytes"), n.get("free_bytes")
    total, u = _vllm_total(d), _vllm_util(d)
    if req is None or free is None or not total or req <= free:
        return []
    short = req - free
    step = max(0.01, math.ceil(short / total * 100) / 100)
    new_u = round(u - step, 2)
    out = []
    seqs = n.get("max_num_seqs") or d.settings.get("max_num_seqs")
    if d.phase in ("sampler warm-up", "warm-up batch") and seqs:
        k = int(seqs)
        while k > 1 and req * k / int(seqs) > free:
            k //= 2
        if k < int(seqs):
            out.append(Fix(summary=f"--max-num-seqs {k} (from {seqs}): the warm-up's tensors are one row per dummy "
                                   f"request, so the {_m(req)} that failed becomes {_m(req * k / int(seqs))}, within "
                                   f"the {_m(free)} that was free", flags=("--max-num-seqs", str(k)),
                           saves_bytes=int(req - req * k / int(seqs))))
    if new_u >= 0.3:
        out.append(Fix(summary=f"--gpu-memory-utilization {new_u:.2f} (from {u:.2f}): a KV cache {_g(step * total)} "
                               f"smaller leaves the {d.phase} the {_m(short)} it lacked at the allocation that failed "
                               "(at least that; lower it more if it fails again)",
                       flags=("--gpu-memory-utilization", f"{new_u:.2f}"), saves_bytes=int(step * total)))
    if d.phase == "CUDA graph capture":
        pool = d.buffers.get("cudagraph_bytes") or n.get("private_pool_bytes")
        out.insert(0, Fix(summary="--enforce-eager: no CUDA graphs, so nothing is captured"
                                  + (f" (their pool held {_g(pool)} when it failed)" if pool else "")
                                  + "; decoding is slower", flags=("--enforce-eager",), saves_bytes=pool))
        if seqs:
            out.append(Fix(summary=f"--max-num-seqs {max(1, int(seqs) // 2)} (from {seqs}): fewer and smaller batch "
                                   "sizes are captured", flags=("--max-num-seqs", str(max(1, int(seqs) // 2)))))
        else:
            out.append(Fix(summary="--max-num-seqs lower than the default (V0: 256; V1: 256, or 1024 on GPUs of 70 "
                                   "GiB and more): fewer and smaller batch sizes are captured"))
    return out


def _alloc_fix(d: Diagnosis) -> list[Fix]:
    """PyTorch held more reserved-but-unallocated memory than the request that failed: with expandable segments
    the allocator maps it instead of asking for a new block."""
    n = d.numbers
    ru, req = n.get("reserved_unallocated_bytes"), n.get("requested_bytes")
    if ru is None or req is None or ru < req:
        return []
    f = _fragmentation(d)
    return [Fix(summary=f"{f.env[0][0]}=expandable_segments:True as well: {_g(ru)} was reserved by PyTorch but "
                        f"unallocated, more than the {_m(req)} asked", env=f.env, saves_bytes=None)]


def _sglang_post_kv(d: Diagnosis, predict: bool = True) -> list[Fix]:
    """SGLang allocated its KV pool, then CUDA-graph capture ran out in what (1 - mem_fraction_static) left: a
    smaller static fraction by what was short (the estimate's rule, engines/sglang/layout.py: mem_fraction_static
    - short / memory - 0.005), a smaller largest captured batch, or no graphs."""
    del predict
    n = d.numbers
    mfs = d.settings.get("mem_fraction_static")
    req, free, total = n.get("requested_bytes"), n.get("free_bytes"), n.get("total_bytes")
    what = "the symmetric-memory pool" if d.phase == "symmetric memory pool" else "the capture"
    out = []
    if mfs and req is not None and free is not None and total and req > free:
        short = req - free
        new = round(float(mfs) - short / total - 0.005, 2)
        out.append(Fix(summary=f"--mem-fraction-static {new:.2f} (from {mfs}): a KV pool {_g((float(mfs) - new) * total)} "
                               f"smaller leaves {what} the {_m(short)} it lacked at the allocation that failed "
                               "(at least that)", flags=("--mem-fraction-static", f"{new:.2f}"),
                       saves_bytes=int((float(mfs) - new) * total)))
    elif mfs:
        new = round(float(mfs) - 0.05, 2)
        out.append(Fix(summary=f"--mem-fraction-static {new:.2f} (from {mfs}): a smaller KV pool leaves {what} "
                               "more room", flags=("--mem-fraction-static", f"{new:.2f}")))
    else:
        out.append(Fix(summary="--mem-fraction-static lower than the default in force (the KV pool is that share of "
                               f"the GPU less the weights; {what} runs in the rest)"))
    if d.phase == "symmetric memory pool":
        # model_runner.py prealloc_symmetric_memory_pool returns at once when SGLANG_SYMM_MEM_PREALLOC_GB_SIZE <= 0
        # (or without --enable-symm-mem): a smaller preallocation, or none, is the other way
        out.append(Fix(summary="SGLANG_SYMM_MEM_PREALLOC_GB_SIZE smaller, or 0 to skip the preallocation",
                       env=(("SGLANG_SYMM_MEM_PREALLOC_GB_SIZE", "0"),)))
        return out
    bs = d.settings.get("cuda_graph_max_bs")
    out.append(Fix(summary=f"--cuda-graph-max-bs {max(1, int(bs) // 2) if bs else 16}"
                           + (f" (from {bs})" if bs else "") + ": fewer and smaller batches captured",
                   flags=("--cuda-graph-max-bs", str(max(1, int(bs) // 2) if bs else 16))))
    out.append(Fix(summary="--disable-cuda-graph: nothing captured (slower decoding)", flags=("--disable-cuda-graph",)))
    return out


def _sglang_short_pool(d: Diagnosis) -> list[Fix]:
    """SGLang aborted a prompt over max_req_input_len = min(context_length, max_total_num_tokens) - 6: a context
    length the pool holds, a larger pool (mem_fraction_static), or an FP8 KV cache (twice the tokens)."""
    n = d.numbers
    limit, asked = n.get("request_limit_tokens"), n.get("input_tokens")
    pool = n.get("kv_capacity_tokens")
    out = []
    if limit:
        out.append(Fix(summary=f"--context-length {limit}: the length this SGLang can serve, so it states it at "
                               f"start-up and clients keep to it (prompts up to {limit - 6:,} tokens)",
                       flags=("--context-length", str(limit))))
    mfs = d.settings.get("mem_fraction_static")
    k, v = d.buffers.get("k_bytes"), d.buffers.get("v_bytes")
    kv = (k + v) if k and v else d.buffers.get("kv_bytes")  # MHA's K and V, or an MLA pool's one KV size
    tokens = d.buffers.get("max_total_num_tokens") or pool
    avail, weights = d.buffers.get("avail_mem_after_weights_bytes"), d.buffers.get("model_loading_bytes")
    if mfs and kv and tokens and asked and avail and weights:
        cell = kv / tokens
        gpu = avail + weights  # as _sglang_not_enough: free after the weights plus the weights
        need = (asked + 6 - tokens) * cell
        new = math.ceil((float(mfs) + need / gpu) * 100) / 100
        if new <= 0.95:
            out.append(Fix(summary=f"--mem-fraction-static {new:.2f} (from {mfs}): {_g(need)} more KV pool "
                                   f"({cell / 1024:.1f} KiB a token) holds a prompt of {asked:,} tokens",
                           flags=("--mem-fraction-static", f"{new:.2f}")))
    else:
        out.append(Fix(summary="--mem-fraction-static higher: the KV pool is that share of the GPU less the weights"
                               + (f"; a {asked:,}-token prompt needs {asked + 6:,} tokens of pool" if asked else "")))
    kvd = str(d.settings.get("kv_cache_dtype", "auto"))
    if not kvd.startswith("fp8"):
        out.append(Fix(summary="--kv-cache-dtype fp8_e4m3: half the bytes a token, so the same pool holds twice the "
                               "tokens" + (f" (about {2 * tokens:,})" if tokens else ""),
                       flags=("--kv-cache-dtype", "fp8_e4m3")))
    return out


def _tgi_post_kv(d: Diagnosis, predict: bool = True) -> list[Fix]:
    """TGI sized its KV blocks from free memory less (1 - --cuda-memory-fraction) of the device, then captured its
    decode CUDA graphs in what was left (flash_causal_lm.py FlashCausalLM.warmup; launcher/src/main.rs --cuda-graphs:
    'Specify the batch sizes to compute cuda graphs for. Use "0" to disable. Default = "1,2,4,8,16,32"'). The warm-up
    catches only torch.cuda.OutOfMemoryError around the capture: a raw CUDA error kills the shard."""
    del d, predict
    return [Fix(summary="--cuda-graphs 1,2,4,8 (from the default 1,2,4,8,16,32): fewer and smaller decode graphs "
                        "captured; --cuda-graphs 0 captures none (slower decoding)", flags=("--cuda-graphs", "1,2,4,8")),
            Fix(summary="--cuda-memory-fraction 0.9 (the default is 1.0): the KV blocks are then sized to leave 10% "
                        "of the GPU unused, room for the graphs", flags=("--cuda-memory-fraction", "0.9"))]


_BY_PHASE = {"vllm": _vllm_post_kv, "sglang": _sglang_post_kv, "tgi": _tgi_post_kv}


# ---------------------------------------------------------------------------------------------------------
# SGLang, TGI, MLX


def _sglang_not_enough(d: Diagnosis) -> list[Fix]:
    mfs = d.numbers.get("mem_fraction_static") or d.settings.get("mem_fraction_static")
    avail, weights = d.buffers.get("avail_mem_after_weights_bytes"), d.buffers.get("model_loading_bytes")
    if avail and weights:
        # model_runner_kv_cache_mixin: rest = available - total x (1 - mem_fraction_static) must be > 0; the GPU's
        # total is taken as what was free after the weights plus the weights ("Load weight end" line)
        total = avail + weights
        least = 1 - avail / total
        new = math.ceil((least + 0.02) * 100) / 100
        kv = avail - total * (1 - new)
        out = [Fix(summary=f"--mem-fraction-static {new:.2f}" + (f" (from {mfs})" if mfs else "") + f": the weights "
                           f"take {_g(weights)} of about {_g(total)} per GPU, so any fraction above {least:.4f} leaves "
                           f"a KV pool; {new:.2f} leaves about {_g(kv)}",
                   flags=("--mem-fraction-static", f"{new:.2f}"))]
        if new > 0.95:
            out.append(Fix(summary="over 0.95 leaves little for activations: more GPUs (--tp) or a quantized "
                                   "checkpoint instead"))
        return out
    if not mfs:
        return [Fix(summary="--mem-fraction-static higher (the KV pool is what is left of it after the weights)",
                     flags=("--mem-fraction-static", "0.9"))]
    if float(mfs) < 0.5:  # a fraction set far under the ones SGLang picks itself (knobs.py: up to 0.9)
        return [Fix(summary=f"--mem-fraction-static 0.85 (from {mfs}): {mfs} gives weights and KV pool together "
                            f"only {float(mfs):.0%} of the GPU, far under the fractions SGLang picks by itself (0.8-0.9 "
                            "on most GPUs); or leave the flag out", flags=("--mem-fraction-static", "0.85"))]
    new = min(0.95, round(float(mfs) + 0.05, 2))
    return [Fix(summary=f"--mem-fraction-static {new} (from {mfs}): the weights need a larger static share",
                flags=("--mem-fraction-static", str(new)))]


def _sglang_req_slots(d: Diagnosis) -> list[Fix]:
    """SGLang's request-to-token pool had fewer free rows than the requests admitted (mem_cache/common.py
    alloc_req_slots). With rows to spare, a hybrid pool's Mamba states are what ran out (HybridReqToTokenPool.alloc
    needs a row and a state per request)."""
    n = d.numbers
    free, want = n.get("req_pool_available"), n.get("num_reqs")
    running = d.settings.get("max_running_requests")
    if free is not None and want is not None and free >= want:
        return [Fix(summary=f"{free} request rows were free for {want} requests: the hybrid (Mamba) pool's states ran "
                            "out, not the rows; --max-mamba-cache-size higher, or --max-running-requests smaller",
                    flags=("--max-mamba-cache-size",))]
    new = f" {max(1, int(running) // 2)} (from {running})" if running else ""
    return [Fix(summary=f"--max-running-requests{new}: the scheduler admitted {want or 'more'} requests with "
                        f"{free if free is not None else 'too few'} rows of the request-to-token pool free; the pool "
                        "has one row per running request, so the KV cache is not what ran out",
                flags=("--max-running-requests",) + ((str(max(1, int(running) // 2)),) if running else ()))]


def _vllm_kv_alloc(d: Diagnosis) -> list[Fix]:
    """A PyTorch out-of-memory while vLLM allocates its KV cache tensors (reader.py: the traceback runs through
    worker/cache_engine.py CacheEngine._allocate_kv_cache in V0, gpu_model_runner.py's KV-cache allocation in V1): the
    pool was sized before, at the profile (V0 worker.py determine_num_available_blocks: total x
    gpu_memory_utilization - the profiled peak, the peak read as total - free so other processes' use counts; V1
    gpu_worker.py determine_available_memory likewise), so allocating it found less free than the profile did:
    something took memory in between (another process, another engine in the same process or notebook), or the
    budget left no margin."""
    if d.engine != "pytorch" or not any("allocate_kv_cache" in c or "initialize_kv_cache" in c for c in d.causes):
        return []
    u = _vllm_util(d)
    return [Fix(summary="free the GPU of what took memory after vLLM's profile: another process, or an earlier "
                        "vLLM instance in the same notebook or script (`nvidia-smi`); the KV cache was sized for "
                        "the memory free at the profile",
                command="nvidia-smi --query-compute-apps=pid,used_memory --format=csv"),
            Fix(summary=f"--gpu-memory-utilization {max(0.5, u - 0.05):.2f} (from {u:.2f}): vLLM sizes the KV cache "
                        "from total x gpu_memory_utilization less the profiled peak, so a lower fraction leaves "
                        "room for what appeared since",
                flags=("--gpu-memory-utilization", f"{max(0.5, u - 0.05):.2f}"))]


def _sglang_kv_alloc(d: Diagnosis) -> list[Fix]:
    """A PyTorch out-of-memory while SGLang allocates its KV pool (reader.py: the traceback runs through
    model_executor/model_runner.py init_memory_pool or mem_cache/memory_pool.py's _create_buffers). The pool was sized
    just before (model_runner.py profile_max_num_token, 0.4-0.5.13; kv_cache_configurator.py _profile_available_bytes
    from 0.5.14): rest = the free memory after the weights - total x (1 - mem_fraction_static), the total being the
    free memory before the load (the least over the TP ranks), and the pool is rest / the bytes of a token. A lower
    fraction makes it smaller by the GPU's memory times the step. Memory other processes hold at the failure was
    taken after that reading; a process that holds nearly the whole GPU has weights and pool together over it, which
    only more GPUs (--tp-size, whose ranks each hold 1/tp of the weights) or fewer weight bytes change."""
    if d.engine != "pytorch" or not any("init_memory_pool" in c or "_create_buffers" in c for c in d.causes):
        return []
    n = d.numbers
    free, total, mine = n.get("free_bytes"), n.get("total_bytes"), n.get("this_process_bytes")
    mfs = d.settings.get("mem_fraction_static")
    out: list[Fix] = []
    others = total - free - mine if total and free is not None and mine else None
    if others is not None and others >= GiB:
        out.append(Fix(summary=f"free the {_g(others)} other processes hold on this GPU (`nvidia-smi`): SGLang sized "
                               "its KV pool from the memory free after the weights, before they took it",
                       command="nvidia-smi --query-compute-apps=pid,used_memory --format=csv"))
    if mfs:
        new = round(float(mfs) - 0.05, 2)
        out.append(Fix(summary=f"--mem-fraction-static {new:.2f} (from {mfs}): the KV pool is the memory free after "
                               "the weights less (1 - mem_fraction_static) of the GPU, so "
                               + (f"{_g(0.05 * total)} smaller" if total else "smaller"),
                       flags=("--mem-fraction-static", f"{new:.2f}"),
                       saves_bytes=int(0.05 * total) if total else None))
    else:
        out.append(Fix(summary="--mem-fraction-static lower than the one SGLang picked: the KV pool is the memory "
                               "free after the weights less (1 - mem_fraction_static) of the GPU"))
    if total and mine and mine >= 0.95 * total:
        known = d.settings.get("tp_size") or d.settings.get("tensor_parallel_size")
        tp = int(known or 1)
        # first: at any fraction the pool needs room the weights already take
        out.insert(0, Fix(summary=f"--tp-size {2 * tp}" + (f" (from {tp})" if known else "")
                          + f": this process holds {_g(mine)} of the {_g(total)} GPU while its pool is still being "
                          "allocated, weights and pool together over it; each of "
                          f"{2 * tp} ranks holds 1/{2 * tp} of the weights (or a quantized checkpoint)",
                          flags=("--tp-size", str(2 * tp))))
    return out


def _vllm_weights(d: Diagnosis) -> list[Fix]:
    """vLLM ran out while loading or post-processing the weights (model_loader load_model, the quantization's
    process_weights_after_loading repacks): its own knobs, not transformers' device_map."""
    total = d.numbers.get("total_bytes")
    on = f" on the {_g(total)} GPU" if total else ""
    # the sizes in force, or at least the worker ranks the log shows (Worker_PP1_TP3: PP >= 2, TP >= 4)
    tp = d.settings.get("tensor_parallel_size") or d.settings.get("tp_ranks_seen") or 1
    pp = d.settings.get("pipeline_parallel_size") or d.settings.get("pp_ranks_seen") or 1
    now = f" (the log shows {pp} x {tp} workers)" if tp * pp > 1 else ""
    first: list[Fix] = []
    per, util = d.numbers.get("weights_per_gpu_bytes"), _vllm_util(d)
    if isinstance(per, int) and isinstance(total, int) and total > 0:
        # vLLM shards the weights over --tensor-parallel-size GPUs (model_executor/layers/linear.py: each rank loads
        # 1/TP of every column- or row-parallel tensor; config ParallelConfig.tensor_parallel_size defaults to 1 in
        # every release, whatever CUDA_VISIBLE_DEVICES lists). The size offered is the smallest power of two whose
        # share leaves a fifth of the budget (total x gpu_memory_utilization) to the KV cache and activations: a rule
        # of thumb, not vLLM's (vLLM only refuses a start whose KV cache cannot hold one max_model_len sequence)
        whole, n = per * tp, 2 * tp
        while whole / n > 0.8 * util * total and n < 64:
            n *= 2
        seen = d.settings.get("visible_devices")
        k = len(str(seen).split(",")) if seen else None
        vis = (f"; {k} GPUs are visible but vLLM's tensor_parallel_size defaults to 1, so all of it went to one"
               if k and k > 1 and tp == 1 else "")
        first = [Fix(summary=f"--tensor-parallel-size {n} (from {tp}): the weights ({_g(whole)} in all) split over "
                             f"{n} GPUs, {_g(whole / n)} each, leaving about a fifth of each GPU's budget to the KV "
                             f"cache and activations (a rule of thumb){vis}", flags=("--tensor-parallel-size", str(n)))]
    return first + [Fix(summary=f"the weights (and the repacked copy a quantization makes after loading) do not fit{on}: "
                        f"more GPUs{now}, --pipeline-parallel-size {2 * pp} or --tensor-parallel-size {2 * tp}",
                flags=("--pipeline-parallel-size", str(2 * pp))),
            Fix(summary="--cpu-offload-gb N: N GiB of each GPU's weights stay in host RAM and stream in (slower)",
                flags=("--cpu-offload-gb",)),
            Fix(summary="a smaller or more quantized checkpoint")]


# the reason reader.py gives an SGLang traceback cut inside a step run while serving (reader._SGLANG_STEP_FRAMES)
SGLANG_STEP_CAUSE = ("SGLang ran out running a scheduled step while serving ({frame}): the KV pool was sized at "
                     "start-up by --mem-fraction-static, and the step's activations and sampling buffers live in "
                     "what it left")


def _sglang_step(d: Diagnosis) -> list[Fix]:
    """A step that ran out while serving (SGLANG_STEP_CAUSE): the pool that --mem-fraction-static sized leaves the
    step its room (server_args.py: 'If you see out-of-memory errors during serving, reduce --mem-fraction-static'),
    and fewer running requests shrink a decode batch (its sampler's batch x vocabulary probabilities:
    schedule_batch.py sample -> flashinfer top_k_top_p_sampling_from_probs); a prefill's activations shrink with
    --chunked-prefill-size."""
    mfs = d.settings.get("mem_fraction_static")
    new = round(float(mfs) - 0.1, 2) if mfs else None
    out = [Fix(summary=(f"--mem-fraction-static {new} (from {mfs})" if new else "--mem-fraction-static lower than "
                        "the default (e.g. 0.8)") + ": a smaller KV pool leaves the step's activations and sampling "
                       "buffers room", flags=("--mem-fraction-static", str(new) if new else "0.8")),
           Fix(summary="--max-running-requests smaller: a smaller decode batch (the sampler's probabilities are "
                       "batch x vocabulary)", flags=("--max-running-requests",))]
    if any("prefill" in c.split(":")[0] or "forward_fill_batch" in c.split(":")[0] for c in d.causes):
        out.append(Fix(summary="--chunked-prefill-size 4096 (or 2048): smaller prefill activations",
                       flags=("--chunked-prefill-size", "4096")))
    return out


def _sglang_compute(d: Diagnosis) -> list[Fix]:
    if any(c.startswith(SGLANG_STEP_CAUSE.split("(")[0]) for c in d.causes):
        return _sglang_step(d)
    mfs = d.settings.get("mem_fraction_static")
    out = [Fix(summary="--chunked-prefill-size 4096 (or 2048): smaller prefill activations",
               flags=("--chunked-prefill-size", "4096"))]
    if mfs:
        new = round(float(mfs) - 0.05, 2)
        out.append(Fix(summary=f"--mem-fraction-static {new} (from {mfs}): more room outside the KV pool",
                       flags=("--mem-fraction-static", str(new))))
    else:
        # server_args.py's help for --mem-fraction-static (SGLang 0.1.x through 2026): "The fraction of the memory
        # used for static allocation (model weights and KV cache memory pool). Use a smaller value if you see
        # out-of-memory errors."
        # Unset, the server picks it from the GPU's size (server_args.py __post_init__ / _handle_gpu_memory_settings)
        out.append(Fix(summary="--mem-fraction-static lower than the one the server picked (e.g. 0.8): a smaller KV "
                               "pool leaves more room outside it (a vision encoder's activations, the step's buffers)",
                       flags=("--mem-fraction-static", "0.8")))
    out.append(Fix(summary="--cuda-graph-max-bs smaller or --disable-cuda-graph", flags=("--disable-cuda-graph",)))
    return out


def _mps_buffer(d: Diagnosis) -> list[Fix]:
    """MPS refused one tensor over maxBufferLength: where it is transformers' loading warm-up (one tensor of the
    model's size), the warm-up is what to avoid, not the model."""
    if not any("caching_allocator_warmup" in c for c in d.causes):
        return []
    return [Fix(summary="a transformers release that skips caching_allocator_warmup on MPS (PR #46239, 2026-05); on "
                        "older ones load to the CPU (no device_map=\"mps\") and move the model with .to(\"mps\"), "
                        "which allocates tensor by tensor")]


def _tgi_prefill(d: Diagnosis) -> list[Fix]:
    total = d.numbers.get("total_tokens") or d.numbers.get("max_total_tokens")
    if d.stage == "kv_cache" and total:
        new = int(total) // 2
        return [Fix(summary=f"--max-batch-total-tokens {new} (from {total}): the KV blocks for the whole batch do "
                            "not fit after the weights (or leave it unset: TGI then infers the largest that fits)",
                    flags=("--max-batch-total-tokens", str(new)))]
    p = d.numbers.get("prefill_tokens") or d.settings.get("max_batch_prefill_tokens")
    if not p:
        # a PyTorch out-of-memory in TGI's prefill with no count printed (the raw error before flash_causal_lm.py's
        # warmup re-raises it as "Not enough memory to handle N prefill tokens. You need to decrease
        # `--max-batch-prefill-tokens`"): TGI's own advice, without a figure to halve
        return [Fix(summary="--max-batch-prefill-tokens lower: the largest prefill batch TGI runs (warm-up runs one of "
                            "that many tokens, its activations and logits); it must stay >= --max-input-tokens, so "
                            "lower that too where it is as large", flags=("--max-batch-prefill-tokens",))]
    new = max(512, int(p) // 2)
    inp = d.numbers.get("max_input_tokens") or d.settings.get("max_input_tokens")
    if inp and int(inp) > new:
        # launcher/src/main.rs refuses `max_batch_prefill_tokens` below `max_input_tokens` ("must be >=
        # max_input_tokens"): a smaller prefill batch needs the input limit (--max-input-length before TGI 2.1) down
        # with it, and --max-total-tokens stays above it
        return [Fix(summary=f"--max-input-tokens {new} --max-batch-prefill-tokens {new} (from {inp} and {p}): warm-up "
                            f"runs one prefill of --max-batch-prefill-tokens tokens, and TGI refuses it below "
                            f"--max-input-tokens, so both come down",
                    flags=("--max-input-tokens", str(new), "--max-batch-prefill-tokens", str(new)))]
    return [Fix(summary=f"--max-batch-prefill-tokens {new} (from {p}; it must stay >= --max-input-tokens)",
                flags=("--max-batch-prefill-tokens", str(new)))]


def _mlx_max_buffer(d: Diagnosis) -> list[Fix]:
    req, mx = d.numbers.get("requested_bytes"), d.numbers.get("max_buffer_bytes")
    if not req or not mx:
        return []
    k = math.ceil(req / mx)
    if any("(image input)" in c for c in d.causes):
        # the image's features, not a prefill chunk: a smaller image (mlx_vlm.generate --resize-shape H W)
        side = int(math.sqrt(mx / req) * 100) / 100
        return [Fix(summary=f"--resize-shape H W (mlx_vlm.generate; or resize the image yourself): the buffer for "
                            f"the image's features is {req / mx:.2f}x Metal's single-buffer limit of {_g(mx)}; it "
                            f"grows with the image's pixels, so each side at most {side:.2f}x as long",
                    flags=("--resize-shape",), saves_bytes=req - mx),
                Fix(summary="fewer images in one request")]
    step = max(64, 2048 // (1 << max(0, math.ceil(math.log2(k)))))
    return [Fix(summary=f"--prefill-step-size {step}: the buffer asked for is {req / mx:.2f}x Metal's single-buffer "
                        f"limit of {_g(mx)}; it shrinks with the prefill step", flags=("--prefill-step-size", str(step)),
                saves_bytes=req - mx),
            Fix(summary="--max-kv-size N (a rotating cache) or --kv-bits 8 for long contexts",
                flags=("--kv-bits", "8"))]


# ---------------------------------------------------------------------------------------------------------
# llama.cpp and Ollama


def _llama_kv_total(d: Diagnosis) -> int | None:
    """The whole KV cache the failed start-up asked for: the buffers printed before the failure plus the one
    that failed."""
    printed = sum((d.buffers.get("kv") or {}).values())
    req = d.numbers.get("requested_bytes")
    if req is None:
        return d.buffers.get("kv_total_bytes")
    return printed + req


def metal_budget(buffers: dict[str, Any]) -> tuple[int | None, int | None, int | None]:
    """(model, working set, RAM) in bytes of a Metal log: the model's Metal bytes (its "Metal" model buffers;
    logread.py metal_model_bytes: ggml-metal's running total after the weights' 'data' buffer, ds4's mapped views),
    the working set macOS lets the GPU keep resident (ggml-metal's recommendedMaxWorkingSetSize) and the RAM. Each is
    read from the other when the log shows one, by macOS's default share (memory.py apple_default_gpu_share, either
    era): 11453.25 MB is a 16 GiB Mac on macOS 13-15 (llama.cpp#4495), 12713.12 MB one on macOS 26."""
    model = buffers.get("metal_model_bytes") or sum(
        v for k, v in (buffers.get("model") or {}).items() if str(k).startswith(("Metal", "MTL"))) or None
    ws, ram = buffers.get("metal_working_set_bytes"), buffers.get("metal_ram_bytes")
    if ws and not ram:
        ram = _mac_ram_for(ws)
    if ram and not ws:
        ws = apple_default_gpu_share(ram, MACOS_STEPPED - 1)  # the older, smaller share: the log names no release
    return model, ws, ram


# the unified memory sizes Apple sells (M1 to M5: 8 GiB up to the 512 GiB M3 Ultra)
MAC_RAM_GIB = (8, 16, 18, 24, 32, 36, 48, 64, 96, 128, 192, 256, 512)


def _mac_ram_for(ws: int) -> int | None:
    """The Mac RAM whose default working set (on either macOS era) is within 1 % of `ws`; None for a set limit."""
    best = min((abs(apple_default_gpu_share(g * GiB, macos) - ws), g * GiB)
                for g in MAC_RAM_GIB for macos in (MACOS_STEPPED - 1, MACOS_STEPPED))
    return best[1] if best[0] <= ws // 100 else None


# mlx-lm's README ("Large Models", github.com/ml-explore/mlx-lm README.md) gives the only engine rule for the value:
# larger than the model in MB, smaller than the machine's memory. Where in that range is a rule of thumb, not an
# engine's figure: 2 GiB over the model's Metal bytes (METAL_MODEL_MARGIN) and at least 8 GiB of RAM left to macOS
# and the apps (METAL_OS_HEADROOM)
METAL_OS_HEADROOM = 8 * GiB
METAL_MODEL_MARGIN = 2 * GiB


def _metal_weights(d: Diagnosis) -> list[Fix]:
    """The model's own Metal buffers are over the working set (reader.py: stage weights): no context or batch helps.
    Where the model fits in RAM with room for macOS, raising the wired limit (sysctl iogpu.wired_limit_mb, the
    GPU's share of unified memory; it resets at reboot) lets Metal keep it resident; else only a smaller model."""
    model, ws, ram = metal_budget(d.buffers)
    if not model or not ws:
        return []
    if ram and model + METAL_MODEL_MARGIN <= ram - METAL_OS_HEADROOM:
        mb = math.ceil((model + METAL_MODEL_MARGIN) / GiB) * 1024
        return [Fix(summary=f"sudo sysctl iogpu.wired_limit_mb={mb}: the model's {_g(model)} is over the {_g(ws)} "
                            f"macOS lets the GPU keep by default (of the {_g(ram)} RAM); mlx-lm's README puts the value "
                            f"over the model's size and under the RAM: {mb} MiB is the model and about 2 GiB, leaving "
                            "at least 8 GiB to macOS (both margins a rule of thumb; the setting resets at reboot)",
                    command=f"sudo sysctl iogpu.wired_limit_mb={mb}"),
                Fix(summary=f"a smaller quant of the model (under {_g(ws)}), which needs no wired limit")]
    over_ram = "" if not ram else (f" and more than the Mac's {_g(ram)} RAM" if model > ram
                                   else f" and too much of the Mac's {_g(ram)} RAM to leave macOS about 8 GiB "
                                        "(a rule of thumb)")
    return [Fix(summary=f"a smaller quant or a smaller model: the weights ({_g(model)}) are over the {_g(ws)} working "
                        f"set{over_ram}: no iogpu.wired_limit_mb makes them fit, and the context is not what fills it")]


def _metal_status5(d: Diagnosis) -> list[Fix]:
    """ggml-metal's bare status line placed on the weights (reader.py): their advice; otherwise the stage's rule."""
    return _metal_weights(d) if d.stage == "weights" else []


def _llama_metal_working_set(d: Diagnosis) -> list[Fix]:
    """A Metal command buffer that ran out (kIOGPUCommandBufferCallbackErrorOutOfMemory) after a start-up whose Metal
    buffers (model, KV cache, compute) add up past the device's recommendedMaxWorkingSetSize: where the KV cache is
    the largest of them, the context that brings the sum back under the working set (the KV cache is linear in -c);
    where the model alone is over it (reader.py: stage weights), _metal_weights."""
    if d.stage == "weights":
        return _metal_weights(d)
    b = d.buffers
    ws = b.get("metal_working_set_bytes")

    def metal(kind: str) -> int:
        return sum(v for k, v in (b.get(kind) or {}).items() if str(k).startswith(("Metal", "MTL")))

    kv, compute, model = metal("kv"), metal("compute"), metal("model")
    if not ws or not kv or kv < max(compute, model):
        return []
    total = kv + compute + model
    if total <= ws:
        return []
    keep = ws - GiB - compute - model  # a GiB of the working set left for the rest of the process
    if keep <= 0:
        return []
    share = keep / kv
    n_ctx = d.settings.get("n_ctx")
    runner = d.host or d.engine
    flag = _ctx_flag(runner or "llama.cpp")
    if n_ctx:
        ctx = max(256, int(n_ctx * share) // 256 * 256)
        how: dict[str, Any] = {"flags": (flag, str(ctx))} if flag.startswith("-") else {"env": ((flag, str(ctx)),)}
        return [Fix(summary=f"{flag} {ctx} (from {n_ctx}): the Metal buffers (KV cache {_g(kv)}, compute {_g(compute)}"
                            + (f", model {_g(model)}" if model else "") + f") pass the {_g(ws)} working set Metal "
                            "keeps resident; the KV cache is linear in the context",
                    saves_bytes=int(kv * (1 - ctx / n_ctx)), **how)]
    return [Fix(summary=f"{flag} to {int(share * 100)}% of the context in force or less: the Metal buffers (KV cache "
                        f"{_g(kv)}, compute {_g(compute)}" + (f", model {_g(model)}" if model else "")
                        + f") pass the {_g(ws)} working set Metal keeps resident; the KV cache is linear in the "
                        "context")]


def _ctx_flag(runner: str) -> str:
    return "OLLAMA_CONTEXT_LENGTH" if runner == "ollama" else "-c"


def _llama_kv(d: Diagnosis) -> list[Fix]:
    runner = d.host or d.engine
    if "for rs cache" in (d.evidence or ""):
        # llama-memory-recurrent.cpp llama_memory_recurrent: the recurrent-state cache of a Mamba / gated-delta-net
        # model (or of a hybrid's recurrent layers) holds mem_size = max(1, n_seq_max) states (llama-model.cpp
        # create_memory, 2025+): one per parallel sequence, whatever the context; -c sizes the attention KV only
        # One sequence already (a typed `-np 1` / `lms load --parallel 1`, or the log's n_seq_max, logread.py's
        # n_parallel): -np 1 changes nothing. Left unset, llama-server's -np auto and LM Studio 0.4's Max Concurrent
        # Predictions both run 4 (engines/llamacpp/kv.py _sequences, programs.lms_slots), so the fix stands
        one = str(d.settings.get("n_parallel") or "") == "1"
        rest = [Fix(summary="free host or device memory for the state (fewer -ngl layers moves it to RAM), or a "
                            "smaller model")]
        if one:
            return rest
        why = " (LM Studio 0.4 runs 4 unless told)" if d.host == "lmstudio" else ""
        return [Fix(summary=f"-np 1 (fewer parallel slots{why}): the recurrent-state (rs) cache holds one state per "
                            "sequence, whatever the context; -c does not change it", flags=("-np", "1")), *rest]
    n_ctx = d.numbers.get("n_ctx") or d.settings.get("n_ctx")
    kv = _llama_kv_total(d)
    req = d.numbers.get("requested_bytes")
    dev = d.numbers.get("device")
    out: list[Fix] = []
    free = None
    if dev is not None and d.buffers.get("device_free"):
        key = f"CUDA{dev}"
        if key in d.buffers["device_free"]:
            free = d.buffers["device_free"][key] - (d.buffers.get("model") or {}).get(key, 0)
    if n_ctx and kv:
        per_token = kv / n_ctx
        on_dev = req if req else kv
        dev_per_token = on_dev / n_ctx
        if free is not None and free > 0:
            margin = 512 * MiB  # the compute buffer still to come
            ctx = int((free - margin) / dev_per_token) // LLAMA_PAD * LLAMA_PAD
            ctx_q8 = int((free - margin) / (dev_per_token * (1 - Q8_SAVES))) // LLAMA_PAD * LLAMA_PAD
            basis = f"{_m(free)} free on CUDA{dev} after its weights, ~512 MiB kept for the compute buffer"
        else:
            ctx = (n_ctx // 2) // LLAMA_PAD * LLAMA_PAD
            ctx_q8 = None
            basis = "half the context (the free memory is not in the text)"
        if LLAMA_PAD <= ctx < n_ctx:
            out.append(_ctx_fix(runner, ctx, n_ctx, per_token, basis))
        elif ctx >= n_ctx:
            out.append(Fix(summary=f"the {_m(free)} free on CUDA{dev} after its weights would hold this KV cache: "
                                   "something took that memory between load and the KV allocation (another process, "
                                   "another model): `nvidia-smi`",
                           command="nvidia-smi --query-compute-apps=pid,used_memory --format=csv"))
        q8 = int(kv * Q8_SAVES)
        if runner == "ollama":
            out.append(Fix(summary=f"OLLAMA_KV_CACHE_TYPE=q8_0 with OLLAMA_FLASH_ATTENTION=1: saves {_g(q8)} of the "
                                   f"{_g(kv)} KV cache", env=(("OLLAMA_FLASH_ATTENTION", "1"),
                                                              ("OLLAMA_KV_CACHE_TYPE", "q8_0")), saves_bytes=q8))
        else:
            flags: tuple[str, ...] = ("-ctk", "q8_0", "-ctv", "q8_0", "-fa", "on")
            extra = ""
            if ctx_q8 and LLAMA_PAD <= ctx_q8 < n_ctx:
                extra, flags = f"; with it -c {ctx_q8} fits", ("-c", str(ctx_q8), *flags)
            out.append(Fix(summary=f"-ctk q8_0 -ctv q8_0 -fa on: a q8_0 cache saves {_g(q8)} of the {_g(kv)} KV "
                                   f"cache{extra}", flags=flags, saves_bytes=q8))
        npar = d.settings.get("n_parallel") or d.settings.get("OLLAMA_NUM_PARALLEL")
        if npar and int(npar) > 1 and runner == "ollama":
            out.append(Fix(summary=f"OLLAMA_NUM_PARALLEL=1 (from {npar}): the context is multiplied by the slots",
                           env=(("OLLAMA_NUM_PARALLEL", "1"),), saves_bytes=int(kv * (1 - 1 / int(npar)))))
    elif req:
        half = req // 2
        out.append(Fix(summary=f"{'OLLAMA_CONTEXT_LENGTH / num_ctx' if runner == 'ollama' else '-c'} half as large "
                               f"halves the {_m(req)} KV buffer that failed", saves_bytes=half))
        out.append(Fix(summary=f"-ctk q8_0 -ctv q8_0 -fa on: saves {_m(req * Q8_SAVES)} of it",
                       flags=("-ctk", "q8_0", "-ctv", "q8_0", "-fa", "on"), saves_bytes=int(req * Q8_SAVES)))
    return out


def _ctx_fix(runner: str, ctx: int, n_ctx: int, per_token: float, basis: str) -> Fix:
    saves = int((n_ctx - ctx) * per_token) if n_ctx > ctx else 0
    if runner == "ollama":
        return Fix(summary=f"OLLAMA_CONTEXT_LENGTH={ctx} (or num_ctx {ctx} per request; from {n_ctx}): {basis}",
                   env=(("OLLAMA_CONTEXT_LENGTH", str(ctx)),), saves_bytes=saves)
    return Fix(summary=f"-c {ctx} (from {n_ctx}): {basis}", flags=("-c", str(ctx)), saves_bytes=saves)


def _projector(d: Diagnosis) -> bool:
    """The compute buffer that failed is the multimodal projector's warm-up reservation (reader._projector_warmup)."""
    return any("(mmproj)" in c for c in d.causes)


def _llama_projector(d: Diagnosis) -> list[Fix]:
    """llama-server / llama-mtmd-cli's projector (tools/mtmd/clip.cpp) reserves its compute graph for the largest
    image at its warm-up, on the GPU unless --no-mmproj-offload (common/arg.cpp); its attention follows -fa."""
    out = [Fix(summary="--no-mmproj-offload: the projector and its compute buffer stay in host RAM (images are "
                       "encoded on the CPU, slower); the language model keeps the GPU", flags=("--no-mmproj-offload",))]
    fa = str(d.settings.get("flash_attn", "")).lower()
    if fa not in ("1", "on", "enabled", "true"):
        out.append(Fix(summary="-fa on: the projector's attention over the image's patches is not materialised",
                       flags=("-fa", "on")))
    out.append(Fix(summary="leave the projector room on the GPU: -ngl lower, or a larger --fit-target margin (the fit "
                           "does not count the projector)"))
    return out


_DEVICE_INDEX = re.compile(r"^[A-Za-z_]{1,20}?([0-9]{1,3})$")


def _split_device(d: Diagnosis) -> str | None:
    """The failed buffer's device ('CUDA3') where the log shows a split over several GPUs: the device's index is 1 or
    more, llama.cpp enabled pipeline parallelism (n_copies > 1: llama_new_context_with_model / llama-context.cpp
    set pipeline_parallel only where the model has more than one device), or the model's buffers name several
    devices; else None."""
    buf, idx = d.numbers.get("buffer"), d.numbers.get("device")
    m = _DEVICE_INDEX.match(str(buf or ""))
    if not isinstance(idx, int) and m:
        idx = int(m.group(1))
    model = d.buffers.get("model")
    devices = [k for k in model if _DEVICE_INDEX.match(str(k))] if isinstance(model, dict) else []
    if not ((isinstance(idx, int) and idx >= 1) or int(d.settings.get("n_copies") or 1) > 1 or len(devices) > 1):
        return None
    return str(buf) if buf else (f"device {idx}" if isinstance(idx, int) else "the device that failed")


# a long context, a rule of thumb (not an engine figure): from 32k cells on the KV cache of a dense model is GiBs, the
# largest buffer after the weights
LONG_CONTEXT = 32768


def _ollama_long_context_kv(d: Diagnosis, n_ctx: Any) -> Fix | None:
    """A compute-time failure at a long num_ctx with an f16 cache: Ollama quantises the KV cache from v0.5.0
    (envconfig KvCacheType, OLLAMA_KV_CACHE_TYPE q8_0 / q4_0; llm/server.go applies it only with flash attention on),
    so q8_0 holds the cache at 8.5/16 of f16 and the GPU memory it frees takes the compute buffer. None below
    LONG_CONTEXT, before v0.5.0, or where the cache is already quantised."""
    try:
        ctx = int(n_ctx or 0)
    except (TypeError, ValueError):
        return None
    kv_type = str(d.settings.get("OLLAMA_KV_CACHE_TYPE") or "f16").lower()
    version = str(d.settings.get("ollama_version") or d.engine_version or "")
    m = re.match(r"([0-9]{1,3})\.([0-9]{1,3})", version)
    if ctx < LONG_CONTEXT or kv_type not in ("", "f16") or (m and (int(m.group(1)), int(m.group(2))) < (0, 5)):
        return None
    return Fix(summary=f"OLLAMA_KV_CACHE_TYPE=q8_0 with OLLAMA_FLASH_ATTENTION=1 (Ollama v0.5.0+): at num_ctx {ctx:,} "
                       "the KV cache is the largest buffer after the weights; q8_0 holds it at 8.5/16 of f16 and the "
                       "memory it frees takes the compute buffer",
               env=(("OLLAMA_FLASH_ATTENTION", "1"), ("OLLAMA_KV_CACHE_TYPE", "q8_0")))


# an integrated GPU's marketing name: AMD's APUs report "AMD Radeon(TM) Graphics" or "AMD Radeon 780M Graphics" (no
# RX / Pro / Instinct model), Intel's "Intel(R) UHD / Iris / HD Graphics"; the catalog marks the APUs it knows
_IGPU_NAME = re.compile(r"^(?:AMD Radeon(?:\(TM\))?(?: [0-9]{3,4}M)? Graphics|Intel\(R\) (?:UHD|Iris|HD)\b.*)$")


def _integrated(name: str) -> bool:
    from ..hardware import catalog  # lazy: the GPU catalog loads only when a log names its devices

    spec = catalog.lookup(name) if name else None
    return bool(_IGPU_NAME.match(name.strip())) or bool(spec is not None and spec.unified_memory)


def _integrated_split(d: Diagnosis, dev: str | None) -> Fix | None:
    """The device that failed is an integrated GPU beside a discrete one: ggml-cuda (ROCm / CUDA builds) takes every
    device the runtime lists (ggml_cuda_init), and the layer split gives each a share by its free memory, so the
    APU's small carve-out holds layers and buffers of its own; hiding it from the runtime (ROCm: ROCR_VISIBLE_DEVICES
    / HIP_VISIBLE_DEVICES, CUDA: CUDA_VISIBLE_DEVICES) leaves the discrete card alone. None otherwise."""
    names = {k: str(v) for k, v in (d.buffers.get("device_names") or {}).items()}
    m = _DEVICE_INDEX.match(str(dev or "").replace("device ", "dev"))
    if dev is None or not m or len(names) < 2:
        return None
    idx = int(m.group(1))
    failed = next((v for k, v in names.items() if (_DEVICE_INDEX.match(k) or [None, None])[1] == str(idx)), "")
    keep = [int(mm.group(1)) for k, v in names.items() if (mm := _DEVICE_INDEX.match(k)) and not _integrated(v)]
    if not failed or not _integrated(failed) or not keep:
        return None
    var = "ROCR_VISIBLE_DEVICES" if d.backend == "ROCm" else "CUDA_VISIBLE_DEVICES"
    value = ",".join(str(i) for i in sorted(keep))
    also = " (or HIP_VISIBLE_DEVICES)" if d.backend == "ROCm" else ""
    return Fix(summary=f"{var}={value}{also}: device {idx} is an integrated GPU ({failed}) whose small share of system "
                       "memory took part of the split; hide it and the discrete GPU holds the model alone",
               env=((var, value),))


def _llama_compute(d: Diagnosis) -> list[Fix]:
    runner = d.host or d.engine
    req = d.numbers.get("requested_bytes")
    ub = d.settings.get("n_ubatch") or 512
    if runner == "llama.cpp" and _projector(d):
        return _llama_projector(d)
    out = []
    if runner == "ollama":
        # llama-graph.cpp build_attn_mha: without flash attention the graph holds the attention scores (kq: n_kv x
        # n_tokens x n_head, n_kv up to the context), so the compute buffer grows with num_ctx as with num_batch
        # (the runner's n_ubatch); the load request says which attention is in force (FlashAttention:...)
        fa = str(d.settings.get("flash_attn") or d.settings.get("OLLAMA_FLASH_ATTENTION") or "").lower()
        fa_on = fa in ("1", "on", "enabled", "true")
        if not fa_on:
            out.append(Fix(summary="OLLAMA_FLASH_ATTENTION=1: a much smaller compute buffer",
                           env=(("OLLAMA_FLASH_ATTENTION", "1"),)))
        # the sequences the cache was sized for (logread.py: kv_size / n_ctx_per_seq where n_seq_max is not printed):
        # without flash attention the scores span all kv_size cells, so more slots grow the buffer as num_ctx does
        kv_size, per_seq = d.settings.get("kv_size"), d.settings.get("n_ctx_per_seq")
        npar = d.settings.get("n_parallel") or d.settings.get("OLLAMA_NUM_PARALLEL") or (
            int(kv_size) // int(per_seq) if kv_size and per_seq else None)
        if npar and int(npar) > 1:
            out.insert(0, Fix(summary=f"OLLAMA_NUM_PARALLEL=1 (from {npar}): the context in force is num_ctx x the "
                                      "parallel slots" + (f" ({int(kv_size):,} = {npar} x {int(per_seq):,} cells)"
                                                          if kv_size and per_seq else "")
                                      + ", and the compute buffer grows with it",
                              env=(("OLLAMA_NUM_PARALLEL", "1"),)))
        n_ctx = d.settings.get("n_ctx") or d.numbers.get("n_ctx")
        out.append(Fix(summary="num_ctx / OLLAMA_CONTEXT_LENGTH smaller" + (f" (from {n_ctx})" if n_ctx else "")
                               + (": the attention part of the compute buffer grows with the context" if fa_on else
                                  ": without flash attention the compute buffer holds the attention scores over the "
                                  "whole context")))
        kv_fix = _ollama_long_context_kv(d, n_ctx)
        if kv_fix is not None:
            out.append(kv_fix)
        dev = _split_device(d)
        igpu = _integrated_split(d, dev)
        if igpu is not None:
            out.insert(0, igpu)
        if dev is not None:
            # a split over several GPUs: OLLAMA_GPU_OVERHEAD is subtracted from EVERY GPU's free memory (envconfig
            # GpuOverhead; llm/memory.go EstimateGPULayers as read at v0.3.10 to v0.11.0, server/sched.go now),
            # so sizing it from one device's buffer reserves that much on each GPU. What shrinks the buffer on its
            # own device: the batch (api/types.go NumBatch, 512 by default, is the runner's --batch-size; llama.cpp
            # clamps n_ubatch to it, and the compute graph scales with n_ubatch), or keeping the split off that GPU
            nb = int(d.settings.get("n_batch") or 512)
            # halving, with 32 as the floor, is a rule of thumb (the buffer scales with the batch; no engine rule
            # names the step), and the summary says so
            out.append(Fix(summary=f"num_batch {max(32, nb // 2)} (from {nb}): the compute buffer on {dev} scales with "
                                   "the batch; OLLAMA_GPU_OVERHEAD would reserve room on every GPU of the split, not "
                                   f"only on this one (halving, floor 32: {RULE_OF_THUMB})"))
            if igpu is None:  # else the integrated GPU's own fix, first, says it
                out.append(Fix(summary=f"CUDA_VISIBLE_DEVICES (or ROCR_VISIBLE_DEVICES) on the Ollama server without "
                                       f"the GPU that held {dev}, or OLLAMA_SCHED_SPREAD unset where it is set (Ollama "
                                       "then tries each GPU alone before splitting): the split then leaves that GPU "
                                       "out"))
        else:
            # envconfig.go GpuOverhead: bytes Ollama's layout subtracts from each GPU's free memory before placing
            # layers (llm/memory.go EstimateGPULayers, v0.3.10 to v0.11.0); the failed buffer's own size, where the
            # runner printed it, rounded up to whole GiB, else 1 GiB: the log shows one GPU (on several the reserve
            # is on each)
            gib = max(1, -(-int(req) // (1 << 30))) if isinstance(req, int) and req > 0 else 1
            out.append(Fix(summary=f"OLLAMA_GPU_OVERHEAD={gib << 30}: leave {gib} GiB for the compute buffer (Ollama "
                                   "reserves it on every GPU it uses)",
                           env=(("OLLAMA_GPU_OVERHEAD", str(gib << 30)),)))
        out.append(Fix(summary="num_gpu lower (fewer layers on the GPU): the room they leave holds the compute "
                               "buffer"))
        return out
    new_ub = max(32, int(ub) // 2)
    out.append(Fix(summary=f"-ub {new_ub} (from {ub}): the compute buffer scales with the micro-batch"
                           + (f"; about {_m(req / 2)} of the {_m(req)} that failed" if req else ""),
                   flags=("-ub", str(new_ub)), saves_bytes=int(req / 2) if req else None))
    fa = str(d.settings.get("flash_attn", "")).lower()
    if fa in ("0", "off", "disabled", "false", ""):
        out.append(Fix(summary="-fa on: flash attention does not materialise the attention matrix",
                       flags=("-fa", "on")))
    if d.settings.get("n_copies", 1) > 1:
        out.append(Fix(summary=f"pipeline parallelism keeps {d.settings['n_copies']} copies of the compute buffers: "
                               "-sm row or fewer devices, or a build that retries without it"))
    return out


def _llama_weights(d: Diagnosis) -> list[Fix]:
    runner = d.host or d.engine
    ngl, total = d.settings.get("n_gpu_layers"), d.settings.get("n_layers_total")
    models = d.buffers.get("model") or {}
    gpu_weights = sum(v for k, v in models.items() if not k.startswith("CPU"))
    req = d.numbers.get("requested_bytes")
    if runner == "ollama":
        return [*_ollama_fits(d),
                Fix(summary="num_gpu lower (PARAMETER num_gpu N in a Modelfile, or the request's options): fewer "
                            "layers on the GPU")]
    if ngl and gpu_weights and req:
        per_layer = gpu_weights / ngl
        k = math.ceil(req / per_layer / 4) or 1
        return [Fix(summary=f"-ngl {max(0, ngl - k)} (from {ngl}): about {_m(per_layer)} per layer; or --fit on "
                            "to let llama.cpp choose", flags=("-ngl", str(max(0, ngl - k))),
                    saves_bytes=int(k * per_layer))]
    if ngl:
        return [Fix(summary=f"-ngl lower than {ngl} (or --fit on)", flags=("-ngl", str(max(0, int(ngl) * 3 // 4))))]
    del total
    return []


def _llama_host_kv(d: Diagnosis) -> list[Fix]:
    """llama.cpp's KV cache could not be allocated in host RAM (a CPU build, -nkvo, or the layers left on the CPU):
    it is linear in -c (llama-kv-cache.cpp: n_ctx cells of every layer), so the buffer that failed over n_ctx is its
    size a token."""
    if not any("(kv_cache)" in c for c in d.causes):
        if d.settings.get("n_ubatch") and any("compute graph's (ggml_gallocr_reserve_n)" in c for c in d.causes):
            # reader: the compute graph's buffer in host RAM; -ub (and -fa) size it wherever it is allocated, so the
            # micro-batch the log printed halves as on a device (without it, the message's own "-ub smaller")
            return _llama_compute(d)
        return []
    req, n_ctx = d.numbers.get("requested_bytes"), d.numbers.get("n_ctx") or d.settings.get("n_ctx")
    if not req or not n_ctx:
        return [Fix(summary="-c smaller: the KV cache in host RAM is linear in the context")]
    per = req / n_ctx
    new = max(LLAMA_PAD, int(n_ctx) // 2 // LLAMA_PAD * LLAMA_PAD)
    return [Fix(summary=f"-c {new} (from {n_ctx}): the KV cache in host RAM is {per / 1024:.1f} KiB a token, "
                        f"{_g(req)} at {n_ctx} tokens; each halving of -c halves it",
                flags=("-c", str(new)), saves_bytes=int(req - per * new)),
            Fix(summary=f"-ctk q8_0 -ctv q8_0 -fa on: saves {_g(req * Q8_SAVES)} of it",
                flags=("-ctk", "q8_0", "-ctv", "q8_0", "-fa", "on"), saves_bytes=int(req * Q8_SAVES))]


def _llama_one_allocation(d: Diagnosis) -> list[Fix]:
    """llama.cpp's buffers fit the free memory but the driver refused one allocation (reader._refused_with_room).
    ggml allocates a model's weights in buffers no larger than the buffer type's get_max_size
    (ggml_backend_alloc_ctx_tensors_from_buft splits at it): on SYCL that is the device's reported maximum
    allocation, which llama.cpp #28953 (2026-09) cuts to 60% on Arc Pro B65 / B70, whose driver refuses less than
    it reports."""
    if d.backend == "Vulkan" and any("one weight tensor is larger" in c for c in d.causes):
        # reader: a weights buffer over the driver's per-allocation limit is one tensor on its own (ggml-alloc.c
        # packs the rest under the limit); ggml-vulkan.cpp refuses any buffer over the limit, so only the tensor's
        # placement or another backend changes it (Gemma 3n/4's per-layer embeddings: 4697620480 bytes in F16)
        size = d.numbers.get("requested_bytes")
        of = f" ({_m(size)})" if size else ""
        return [Fix(summary=f"-ot <tensor>=CPU (--override-tensor) for the one tensor over the limit{of}: it stays in "
                            "host RAM and the rest loads on the GPU (Ollama: a runner without that tensor on Vulkan)"),
                Fix(summary="the ROCm or CUDA backend, whose allocations have no 4 GiB per-buffer cap; or a quant "
                            "that makes that tensor smaller than the cap")]
    if d.backend != "SYCL":
        return []
    return [Fix(summary="a llama.cpp build with #28953 (2026-09-15): SYCL then reports 60% of the device's maximum "
                        "allocation on Arc Pro B65 / B70, so the weights are split into buffers the driver accepts"),
            Fix(summary="the Vulkan backend (it splits buffers at the driver's maxMemoryAllocationSize), or -ngl lower "
                        "for a smaller weights buffer on the device")]


def _ollama_fits(d: Diagnosis) -> list[Fix]:
    """Ollama's own layout (the scheduler's "offload" line: memory.required.full against memory.available, the free
    memory it measured) had every layer fitting, yet a buffer could not be allocated: not the model's size, but
    memory taken after Ollama measured it, or a driver fault."""
    b = d.buffers
    full, avail = b.get("ollama_required_full_bytes"), b.get("ollama_available_bytes")
    layers, offload = d.settings.get("ollama_layers_model"), d.settings.get("ollama_layers_offload")
    if not full or not avail or full > avail or (layers and offload is not None and offload < layers):
        return []
    tool = "rocm-smi --showmeminfo vram" if d.backend == "ROCm" else "nvidia-smi"
    return [Fix(summary=f"Ollama's own layout fits ({_g(full)} of the {_g(avail)} it measured free, all layers on "
                        f"the GPU): the allocation failed for another reason than the model's size; memory taken "
                        f"since (another process: `{tool}`) or a driver fault (restart Ollama, check the driver / "
                        "runtime version)", command=tool)]


def _ollama_estimate(d: Diagnosis) -> list[Fix]:
    b = d.buffers
    full, kv, avail = b.get("ollama_required_full_bytes"), b.get("ollama_required_kv_bytes"), \
        b.get("ollama_available_bytes")
    n_ctx = d.settings.get("n_ctx") or d.settings.get("OLLAMA_CONTEXT_LENGTH")
    out: list[Fix] = []
    if full and kv and avail and n_ctx:
        room = avail - (full - kv)
        if room > 0:
            ctx = int(n_ctx * room / kv) // LLAMA_PAD * LLAMA_PAD
            if ctx >= LLAMA_PAD and ctx < n_ctx:
                out.append(Fix(summary=f"OLLAMA_CONTEXT_LENGTH={ctx} (from {n_ctx}): Ollama's own estimate "
                                       f"({_g(full)} of which KV {_g(kv)}) then fits the {_g(avail)} available",
                               env=(("OLLAMA_CONTEXT_LENGTH", str(ctx)),), saves_bytes=int(kv * (1 - ctx / n_ctx))))
        else:
            out.append(Fix(summary=f"the weights alone ({_g(full - kv)}) exceed the {_g(avail)} available: a smaller "
                                   "quant or model, or accept CPU offload"))
        out.append(Fix(summary=f"OLLAMA_KV_CACHE_TYPE=q8_0 with OLLAMA_FLASH_ATTENTION=1: saves {_g(kv * Q8_SAVES)}",
                       env=(("OLLAMA_FLASH_ATTENTION", "1"), ("OLLAMA_KV_CACHE_TYPE", "q8_0")),
                       saves_bytes=int(kv * Q8_SAVES)))
    return out


def _ollama_weight_bytes(name: str | None) -> tuple[str, int] | None:
    """(format, bytes) of the weights of an Ollama model the catalog knows (no network: names outside it are left
    alone), at the format its tag implies (Ollama's default Q4_K_M)."""
    if not name:
        return None
    # lazy: the catalog and the resolver only when a text names an Ollama model
    from ..errors import OomkitError
    from ..model import catalog, names
    from ..model.resolve import resolve

    try:
        if catalog.lookup(name) is None and names.ollama_tag(name) is None:
            return None
        w = resolve(name).weights
    except (OomkitError, ValueError, KeyError):
        return None
    return (w.format or "?", int(w.nbytes)) if w and w.nbytes else None


def _ollama_system(d: Diagnosis) -> list[Fix]:
    req, avail = d.numbers.get("model_required_bytes"), d.numbers.get("system_available_bytes")
    if not req or not avail:
        return []
    short = req - avail
    model = d.settings.get("ollama_model")
    known = _ollama_weight_bytes(model)
    ctx: list[Fix] = []
    if known and req >= 2 * known[1]:
        # Ollama's system-memory check (llm/server.go) sums the weights, the KV cache of num_ctx x
        # OLLAMA_NUM_PARALLEL and the graph: with the weights less than half of it, the context is what asks
        fmt, w = known
        ctx = [Fix(summary=f"num_ctx / OLLAMA_CONTEXT_LENGTH smaller, and OLLAMA_NUM_PARALLEL=1: {model}'s weights "
                           f"({fmt}) are {_g(w)} of the {_g(req)} asked; the other {_g(req - w)} is the KV cache and "
                           "compute buffer of the context (num_ctx x parallel requests)",
                   env=(("OLLAMA_NUM_PARALLEL", "1"),), saves_bytes=None)]
    return ctx + [Fix(summary=f"free {_g(short)} of RAM (or swap): the model needs {_g(req)}, {_g(avail)} is available; "
                        "`ollama stop` other models, OLLAMA_MAX_LOADED_MODELS=1",
                env=(("OLLAMA_MAX_LOADED_MODELS", "1"),), saves_bytes=None),
            Fix(summary="a smaller quant of the same model (e.g. the q4_K_M tag) or a smaller model")]


def _mlx_build_sizes(model: str | None) -> tuple[str, str, dict[str, int]] | None:
    """(the GGUF tag of the same model, the build's quantization, TotalTensorSize of each x/create quantization) for
    an Ollama MLX library tag whose model the catalog holds (engines/ollama/mlx_runner.py total_tensor_size); None
    for other names (no network)."""
    if not model:
        return None
    # lazy: the catalog, the resolver and the MLX runner's sizes only when a refusal names an MLX tag
    from ..engines.ollama import mlx_runner
    from ..errors import OomkitError
    from ..model import names
    from ..model.resolve import resolve

    try:
        build = names.ollama_mlx_build(model)
        if build is None:
            return None
        spec = resolve(model)
        return build[0], build[1], {q: mlx_runner.total_tensor_size(spec, q).total for q in mlx_runner.QUANT}
    except (OomkitError, ValueError, KeyError):
        return None


def _ollama_mlx_load(d: Diagnosis) -> list[Fix]:
    """Ollama's MLX runner refused the build before it started (x/mlxrunner/client.go Load, v0.18.2+): the weights
    (the manifest's TotalTensorSize) must fit the first GPU's free memory less MinimumMemory() (ml/device.go: 512 MiB
    on Metal, 457 MiB elsewhere) and OLLAMA_GPU_OVERHEAD. The runner keeps every tensor on that GPU: no num_gpu or
    num_ctx changes the figure; fewer weight bytes, or more free memory, do."""
    req, avail, over = (d.numbers.get(k) for k in ("model_required_bytes", "available_bytes", "overhead_bytes"))
    if not isinstance(req, int) or not isinstance(avail, int):
        return []
    short = max(req - avail, 0)
    out: list[Fix] = []
    model = d.settings.get("ollama_model")
    sizes = _mlx_build_sizes(model)
    if sizes:
        gguf, q, by_q = sizes
        fit = sorted((b, k) for k, b in by_q.items() if k != q and b <= avail)
        if fit:
            listed = ", ".join(f"{k} {_g(b)}" for b, k in fit)
            out.append(Fix(summary=f"a smaller quantization of the same model that fits the {_g(avail)} available: "
                                   f"{listed} (TotalTensorSize of x/create's quantization; {q} is {_g(by_q[q])})"))
        else:
            b, k = min((b, k) for k, b in by_q.items())
            if k != q:
                out.append(Fix(summary=f"no MLX quantization of this model fits the {_g(avail)} available: the "
                                       f"smallest, {k}, is {_g(b)} ({_g(b - avail)} over; {q} is {_g(by_q[q])})"))
        known = _ollama_weight_bytes(gguf)
        tail = f" ({known[0]}, {_g(known[1])} of weights)" if known else ""
        out.append(Fix(summary=f"{gguf}, the GGUF tag of the same model{tail}: Ollama's llama.cpp runner splits its "
                               "layers between the GPU and the CPU (slower), where the MLX runner must hold all "
                               f"{_g(req)} on the GPU"))
    else:
        out.append(Fix(summary=f"a smaller quantization of the same model, {_g(short)} smaller at least (nvfp4 / int4 "
                               f"instead of mxfp8 / int8: 4 bits a weight against 8), or its GGUF tag, which Ollama's "
                               f"llama.cpp runner splits between the GPU and the CPU: the MLX build's weights are "
                               f"{_g(req)}, {_g(avail)} is available"))
    free = avail + over if isinstance(over, int) else None
    had = f" (it had {_g(free)} free)" if free is not None else ""
    out.append(Fix(summary=f"free {_g(short)} more on the first GPU{had}: close other apps, `ollama stop` other "
                           "loaded models (`ollama ps` lists them)", command="ollama ps"))
    if isinstance(over, int):
        # the overhead printed is MinimumMemory() + OLLAMA_GPU_OVERHEAD, HumanBytes2's one decimal
        minimum = min((512 * MiB, 457 * MiB), key=lambda m: abs(over - m))
        env = over - minimum
        if env > MiB:
            enough = "enough" if env >= short else f"not enough alone ({_g(short)} short)"
            out.append(Fix(summary=f"OLLAMA_GPU_OVERHEAD lower or unset: the {_m(over)} overhead holds about {_m(env)} "
                                   f"of it beside the runner's {_m(minimum)} minimum; {enough}",
                           env=(("OLLAMA_GPU_OVERHEAD", "0"),), saves_bytes=env))
    return out


def _mlx_host_ram(d: Diagnosis) -> list[Fix]:
    """An MLX program's Metal command buffer ran out of memory where the signature's own fixes do not name MLX's
    cache: mlx/backend/metal/allocator.cpp MetalAllocator keeps freed buffers cached up to max_pool_size_ (by default
    block_limit_ = min(1.5 x recommendedMaxWorkingSetSize, 0.95 x RAM)) until mx.set_cache_limit lowers it, so a
    server's memory grows request by request; vllm-mlx 0.2.x read MLX_BUFFER_CACHE_LIMIT for it (its #442; 0.3.0's
    engine/batched.py sets 32 GB itself, #619)."""
    sig = BY_ID.get(d.signature or "")
    if sig is not None and any("set_cache_limit" in t for t in sig.fixes):
        return []
    return [Fix(summary="cap MLX's buffer cache: mx.set_cache_limit(N) well under RAM, or the server's own setting "
                        "(vllm-mlx 0.2.x: MLX_BUFFER_CACHE_LIMIT=8GB): MLX keeps freed Metal buffers cached up to "
                        "min(1.5 x the recommended working set, 0.95 x RAM), so a long-running server grows toward "
                        "all of memory")]


def _ollama_host_ram(d: Diagnosis) -> list[Fix]:
    """The runner could not get host RAM (a CPU buffer of llama.cpp): more of the model on the GPU, or less of it.
    On Metal the RAM is the GPU's too: what Metal refused is the working set (recommendedMaxWorkingSetSize), which the
    context's KV cache and compute buffer fill; Ollama's runner takes the context as num_ctx (llama-server's -c is
    not Ollama's setting)."""
    if d.backend == "Metal":
        return [Fix(summary="num_ctx smaller (PARAMETER num_ctx in the Modelfile, the request's options, or "
                            "OLLAMA_CONTEXT_LENGTH): the KV cache and the compute buffer grow with the context, past "
                            "what Metal keeps resident"),
                Fix(summary="a smaller quant of the same model (e.g. the q4_K_M tag) or a smaller model")]
    return [Fix(summary="free host RAM (or add swap): `ollama stop` other models, OLLAMA_MAX_LOADED_MODELS=1",
                env=(("OLLAMA_MAX_LOADED_MODELS", "1"),)),
            Fix(summary="a smaller quant of the same model (e.g. the q4_K_M tag) or a smaller model")]


def _ollama_buffer_limit(d: Diagnosis) -> list[Fix]:
    """A compute buffer over the driver's single-buffer limit under Ollama: its batch is num_batch (the runner gives
    llama.cpp n_batch = n_ubatch = num_batch), and the attention part scales with the context."""
    if not {"ggml_gallocr_fail", "llama_compute_buffers"} & set(d.recognised):  # not the compute buffer
        return []
    ub = int(d.settings.get("n_ubatch") or 512)
    new = max(32, ub // 2)
    return [Fix(summary=f"num_batch {new} (from {ub}): the compute buffer over the driver's single-buffer limit "
                        "scales with the batch (PARAMETER num_batch in a Modelfile, or the request's options; "
                        f"halving, floor 32: {RULE_OF_THUMB})"),
            Fix(summary="num_ctx / OLLAMA_CONTEXT_LENGTH smaller: the attention part of that buffer scales with the "
                        "context")]


def _lmstudio_llama(d: Diagnosis) -> list[Fix]:
    """llama.cpp's failure inside LM Studio: llama.cpp's own rule for the stage (fixes_for words it as LM Studio's
    settings and `lms load`, lmstudio.py), else LM Studio's settings for the stage by their names in its app."""
    fn = _BY_STAGE.get(("llama.cpp", d.stage))
    return (fn(d) if fn is not None and d.engine == "llama.cpp" else []) or lms_defaults(d)


def _ollama_layout(d: Diagnosis) -> list[Fix]:
    out = _ollama_estimate(d)
    if d.numbers.get("num_gpu") is not None:
        out.append(Fix(summary=f"unset num_gpu (now {d.numbers['num_gpu']}): a forced layer count disables Ollama's "
                               "back-off"))
    if not out:
        n_ctx = d.settings.get("n_ctx") or d.settings.get("OLLAMA_CONTEXT_LENGTH")
        ctx = max(2048, int(n_ctx) // 2) if n_ctx else 8192
        out.append(Fix(summary=f"OLLAMA_CONTEXT_LENGTH={ctx}" + (f" (from {n_ctx})" if n_ctx else ""),
                       env=(("OLLAMA_CONTEXT_LENGTH", str(ctx)),)))
    return out


def _exllama(d: Diagnosis) -> list[Fix]:
    """ExLlama's cache: max_seq_len tokens of K/V for every layer (exllamav2 cache.py create_state_tensors), the
    model's full context unless told (exllamav2 model_init.py -l / --length sets config.max_seq_len; TabbyAPI
    max_seq_len), at the precision of its cache type (examples/chat.py -c8 / -cq4 / -cq6 / -cq8; TabbyAPI
    cache_mode FP16 / Q8 / Q6 / Q4)."""
    out = [Fix(summary="max_seq_len smaller (the cache is sized for the model's full context by default; the "
                       "example scripts' -l / --length N, TabbyAPI's max_seq_len)")]
    mode = str(d.settings.get("exllama_cache_mode") or "").lower()
    if mode in ("q4", "4"):
        out[0] = Fix(summary="max_seq_len smaller (-l / --length N; TabbyAPI max_seq_len): the cache is already Q4 "
                             "(-cq4), so only fewer tokens shrink it; it is sized for the model's full context by "
                             "default")
    else:
        out.append(Fix(summary="cache_mode: Q8 (or Q4): a quarter to a half of the FP16 cache"))
    moe = d.settings.get("cpu_moe_offload_layers")
    if isinstance(moe, int):  # an MoE model with its first layers' experts already on the CPU (layer split only)
        out.insert(0, Fix(summary=f"cpu_moe_offload_layers above {moe}: each layer moved takes its routed experts "
                                  "out of VRAM (exllamav3 --moe_cpu_offload: the first N block-sparse MoE layers "
                                  "run on the CPU)"))
    return out


def _lmstudio(d: Diagnosis) -> list[Fix]:
    """LM Studio 0.2's load error with its n_ctx: half the context, half the KV cache (`lms load --context-length`,
    lmstudio.py)."""
    n_ctx = d.numbers.get("n_ctx")
    if not n_ctx:
        return []
    half = max(256, int(n_ctx) // 2 // LLAMA_PAD * LLAMA_PAD)
    cmd = f"lms load {model_key(d)} --context-length {half}"
    return [Fix(summary=f"Context Length {half} (from {n_ctx:,}): the KV cache grows with it (half the context, half "
                        f"the cache); `{cmd}`", flags=("--context-length", str(half)), command=cmd)]


def _ollama_held(d: Diagnosis) -> list[Fix]:
    """The GPU was full before the runner allocated anything (reader.py: CUDA's free-memory query failed): what holds
    it is to be freed, or left alone by Ollama's layout (envconfig OLLAMA_GPU_OVERHEAD, bytes reserved per GPU;
    num_gpu, the layers it puts there), as the maintainers advise (ollama#9562)."""
    return [Fix(summary="free the GPU first: `nvidia-smi` shows what holds it (another program, a model still loaded: "
                        "`ollama ps`, `ollama stop <model>`)",
                command="nvidia-smi --query-compute-apps=pid,used_memory --format=csv"),
            Fix(summary="OLLAMA_GPU_OVERHEAD=1073741824: leave 1 GiB per GPU that Ollama's layout does not count on",
                env=(("OLLAMA_GPU_OVERHEAD", "1073741824"),)),
            Fix(summary="num_gpu lower (fewer layers on the GPU)")]


def _fa_is_switch(d: Diagnosis) -> bool:
    """-fa without a value: llama.cpp's common/arg.cpp before PR #15434 (b6325, 2025-08-30; engines/versions.py)
    read -fa / --flash-attn as a switch (params.flash_attn = true), and llamafile's fork of that code keeps it
    (llamafile 0.8.x-0.9.x llama.cpp/common.cpp: `if (arg == "-fa" || arg == "--flash-attn")` sets it on)."""
    if d.settings.get("llamafile_version"):
        return True
    build = str(d.settings.get("llama_cpp_build") or "")
    return build.isdigit() and int(build) < 6325


def _fa_switch(fixes: list[Fix]) -> list[Fix]:
    out = []
    for f in fixes:
        flags = list(f.flags)
        for i in range(len(flags) - 1):
            if flags[i] == "-fa" and flags[i + 1] == "on":
                del flags[i + 1]
                break
        out.append(dataclasses.replace(f, summary=re.sub(r"(?<![\w-])-fa on\b", "-fa", f.summary),
                                       flags=tuple(flags)))
    return out


def _scratch_pool(d: Diagnosis) -> list[Fix]:
    """llama.cpp's scratch buffer before the graph allocator (signatures.py ggml_scratch_pool): sized at load from
    the context for a 512-token batch (llama.cpp MEM_REQ_SCRATCH0(n_ctx), mid-2023; KoboldCpp 1.36), so a batch over
    512 overflows it. KoboldCpp 1.43+ (otherarch/llama_v3.cpp) multiplies the pool by get_blas_batch_mul3 (x2 over
    512, x4 over 1024), and llama.cpp's graph allocator (ggml-alloc, from July 2023) measures the graph instead."""
    nb = d.settings.get("n_batch")
    need, pool = d.numbers.get("requested_bytes"), d.numbers.get("max_buffer_bytes")
    figures = f" ({_m(need)} needed, {_m(pool)} in the pool)" if need and pool else ""
    if isinstance(nb, int) and nb > 512:
        out = [Fix(summary=f"-b 512 (from {nb}): the scratch pool was sized at load for a 512-token batch{figures}; "
                           "a larger batch overflows it", flags=("-b", "512"))]
    else:
        out = [Fix(summary=f"-b smaller: the scratch pool holds one batch's intermediate tensors{figures}")]
    out.append(Fix(summary="-c smaller: the pool is sized from the context, and so is the attention part of what "
                           "it holds"))
    out.append(Fix(summary="a newer build: KoboldCpp 1.43+ sizes this pool by the batch, and llama.cpp from the graph "
                           "allocator (ggml-alloc, July 2023) measures the graph instead"))
    return out


def _radv(d: Diagnosis) -> list[Fix]:
    """An AMD driver's refused command submission (radv_cs_enomem): the kernel makes every buffer the submission
    uses resident at once (weights, KV cache, compute), so at any stage the weights on the device are the largest
    share to move off it (-ngl), with llama.cpp's per-layer figure where the log printed the buffers."""
    out = _llama_weights(d) if d.stage == "weights" else []
    return out or [Fix(summary="-ngl fewer layers on the GPU: a submission needs every buffer of the device resident "
                               "at once (weights, KV cache, compute), and the weights are the largest")]


def _exllama_held(d: Diagnosis) -> list[Fix]:
    """The device was held by this same process before the model's first module reached it (reader.py
    _exllama_stage): a model loaded before it, still resident; TabbyAPI unloads a model on POST /v1/model/unload
    (endpoints/core/router.py), and loading a model while another serves requests is what tabbyAPI#305 serialises."""
    return [Fix(summary="unload the model already loaded before loading another (TabbyAPI: POST /v1/model/unload, "
                        "or let running generations finish before a switch); one model on the GPU at a time"),
            Fix(summary="gpu_split / autosplit_reserve: keep the second model on another GPU, if both must stay "
                        "loaded")]


def _held_by_self(d: Diagnosis) -> bool:
    """The message says this process holds what the device has in use (PyTorch's "this process has X memory in use"
    covering total - free): stopping other processes frees nothing."""
    total, free, mine = (d.numbers.get(k) for k in ("total_bytes", "free_bytes", "this_process_bytes"))
    return bool(total and free is not None and mine and total - free - mine < GiB and not other_processes(d.numbers))


def _omlx_guard(d: Diagnosis) -> list[Fix]:
    """oMLX's preflight guard refused a prompt of kv_len + 1 tokens (_preflight_safety_rejection): its KV and
    prefill grow with the prompt, so a shorter one is its first advice."""
    n = d.numbers.get("input_tokens")
    return [Fix(summary=(f"a prompt shorter than {int(n) + 1:,} tokens" if n else "a shorter prompt")
                        + " (trim the conversation, or lower the client's context): its KV and prefill grow with it; "
                          "the guard's own first advice, 'Reduce context length'")]


# TensorRT-LLM _torch/pyexecutor/py_executor_creator.py _ExecutorMemoryMonitor.memory_type_tuning_suggestion
# (1.0+): the engine's own advice, per component, printed under "Possible options include:" after the component
# that could not be created (its friendly name, memory_type_friendly_names); the KV cache is sized from
# KvCacheConfig.free_gpu_memory_fraction (0.9 by default) of the memory left after the model
_TRTLLM_TUNING = (
    ("Initial KV cache", "reduce max_num_tokens (the temporary KV cache used to estimate the real one's size)"),
    ("KV cache", "kv_cache_config.free_gpu_memory_fraction lower (trtllm-serve --kv_cache_free_gpu_memory_fraction; "
                 "0.9 by default): TensorRT-LLM's own advice for the KV cache, 'reduce free_gpu_memory_fraction'"),
    ("Draft model", "reduce max_num_tokens and/or shard the draft model's weights (--tp_size / --pp_size)"),
    ("Model resources created during usage", "reduce max_num_tokens"),
    ("Model", "reduce max_num_tokens and/or shard the model weights across GPUs (--tp_size / --pp_size)"),
    ("Sampler", "reduce max_seq_len and/or max_attention_window_size"),
    ("Drafter", "reduce max_seq_len and/or max_draft_len"),
    ("Additional executor resources", "reduce max_num_tokens"),
)


def _trtllm_executor(d: Diagnosis) -> list[Fix]:
    comp = str(d.numbers.get("component") or "")
    return [Fix(summary=advice, flags=("--kv_cache_free_gpu_memory_fraction",) if name == "KV cache" else ())
            for name, advice in _TRTLLM_TUNING if comp.startswith(name)][:1]


_BY_SIGNATURE = {
    "trtllm_executor": _trtllm_executor,
    "torch_allowed_memory": _torch_allowed,
    "ggml_sycl_oom": _sycl_moe,
    "vllm_v1_kv_insufficient": _vllm_kv_v1,
    "vllm_v0_kv_insufficient": _vllm_kv_v0,
    "vllm_free_memory_startup": _vllm_free_startup,
    "vllm_no_cache_blocks": _vllm_no_blocks,
    "vllm_metal_kv_budget": _vllm_metal_budget,
    "metal_cmdbuf_oom": _llama_metal_working_set,
    "metal_cmdbuf_status5": _metal_status5,
    "vllm_sampler_warmup": _vllm_sampler,
    "sglang_not_enough_memory": _sglang_not_enough,
    "sglang_profiled_negative": _sglang_not_enough,
    "sglang_no_kv_room": _sglang_not_enough,
    "sglang_input_too_long": _sglang_short_pool,
    "sglang_req_slots": _sglang_req_slots,
    "vllm_negative_kv": _vllm_negative_kv,
    "tgi_prefill": _tgi_prefill,
    "mlx_max_buffer": _mlx_max_buffer,
    "torch_mps_buffer_size": _mps_buffer,
    "ollama_system_memory": _ollama_system,
    "ollama_mlx_load": _ollama_mlx_load,
    "ollama_layout": _ollama_layout,
    "exllama_insufficient": _exllama,
    "omlx_preflight_guard": _omlx_guard,
    "radv_cs_enomem": _radv,
    "ggml_scratch_pool": _scratch_pool,
    "lmstudio_failed_load_json": _lmstudio,
}
def _torch_weights(d: Diagnosis) -> list[Fix]:
    """PyTorch ran out while loading the weights (from_pretrained, load_state_dict): no batch or sequence is involved
    yet, so only fewer weight bytes on this device help."""
    if _comfyui(d):
        return _comfyui_weights(d)
    total = d.numbers.get("total_bytes")
    on = f" on the {_g(total)} device" if total else ""
    return [Fix(summary=f"the weights do not fit{on}: a quantized checkpoint (4-bit / 8-bit: bitsandbytes, GPTQ, AWQ) "
                        "or a smaller model"),
            Fix(summary="device_map='auto' with max_memory={0: '<GiB>', 'cpu': '<GiB>'}: the layers that do not fit "
                        "stay in host RAM (slower), or more GPUs")]


_BY_STAGE: dict[tuple[str | None, str], Any] = {
    ("pytorch", "weights"): _torch_weights,
    ("vllm", "weights"): _vllm_weights,
    ("vllm", "kv_cache"): _vllm_kv_alloc,
    ("sglang", "kv_cache"): _sglang_kv_alloc,
    ("llama.cpp", "kv_cache"): _llama_kv,
    ("ollama", "kv_cache"): _llama_kv,
    ("llama.cpp", "compute"): _llama_compute,
    ("ollama", "compute"): _llama_compute,
    ("llama.cpp", "weights"): _llama_weights,
    ("llama.cpp", "buffer_limit"): _llama_one_allocation,
    ("llama.cpp", "host_ram"): _llama_host_kv,
    ("ollama", "weights"): _llama_weights,
    ("ollama", "host_ram"): _ollama_host_ram,
    ("mlx", "host_ram"): _mlx_host_ram,
    ("ollama", "other_process"): _ollama_held,
    ("lmstudio", "weights"): _lmstudio_llama,
    ("lmstudio", "kv_cache"): _lmstudio_llama,
    ("lmstudio", "compute"): _lmstudio_llama,
    ("ollama", "buffer_limit"): _ollama_buffer_limit,
    ("vllm", "compute"): _vllm_compute,
    ("vllm", "unknown"): _vllm_compute,  # a PyTorch OOM inside vLLM with nothing placing it: vLLM's own knobs
    ("sglang", "unknown"): _sglang_compute,
    ("sglang", "compute"): _sglang_compute,
    # fragmentation while serving: the allocator's fix first (fixes_for), then the engine's own runtime peak
    ("sglang", "fragmentation"): _sglang_compute,
    ("vllm", "fragmentation"): _vllm_fragmentation,
    ("tgi", "compute"): _tgi_prefill,
    ("exllama", "kv_cache"): _exllama,
    ("exllama", "other_process"): _exllama_held,
}
