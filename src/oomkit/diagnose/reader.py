"""`diagnose(text)`: the out-of-memory an error message or a whole log describes.

1. Every known message is found (scan.events). The FIRST out-of-memory in the text is the cause; later ones are
   consequences. One the engine recovered from (llama.cpp's retry without pipeline parallelism) is passed over
   when a later one exists.
2. The lines right after it may name its stage (llama.cpp: `cudaMalloc failed` is followed by the line saying
   whether it was the weights, the KV cache or the compute buffer).
3. A message without a stage of its own (PyTorch's, CUDA's) is placed by its numbers (a request larger than the
   device, memory held by another process, reserved-but-unallocated memory) and then by where the engine was:
   the traceback's frames, the last progress line before it. Nothing placed: `unknown`, with what was seen.
4. Look-alikes (driver mismatch, illegal memory access, disk full, a max_model_len over the model's) are
   `not_oom` when no out-of-memory is in the text.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
from typing import Any

from .fixes import (
    ASYNC_ROOM_CAUSE,
    COMFY_PATCH_CAUSE,
    COMFY_TILED_VAE_CAUSE,
    GARBAGE_CAUSE,
    GARBAGE_FACTOR,
    HALF_DEVICE_CAUSE,
    PINNED_HOST_CAUSE,
    PROFILE_RUN_CAUSE,
    PROFILE_RUN_MM,
    SDPA_MATH_CAUSE,
    SGLANG_STEP_CAUSE,
    SYSMEM_LENT_CAUSE,
    TRAINING_CAUSE,
    UNSLOTH_OFFLOAD_CAUSE,
    VLLM_SERVING_CAUSE,
    VULKAN_OVERREAD_CAUSE,
    async_had_room,
    async_outside,
    causes_for,
    fixes_for,
    metal_budget,
    other_processes,
    vulkan_overread,
)
from .logread import (
    DS4_MAPPED_VIEWS,
    FRAME_STAGES,
    METAL_DATA_BUFFER,
    calls,
    frames,
    host_of,
    in_profile_run,
    read_log,
    stage_from_frames,
    stage_from_markers,
    stage_from_next_marker,
)
from .result import Diagnosis, Fix
from .scan import Event, Text, events, normalize
from .short import note as short_note
from .signatures import BY_ID, FALLBACKS, GENERIC_OOM, HOSTED, NOTICES, Signature

OOM_ROLES = ("oom", "stage")
MAX_LINE_AFTER = 2048  # bytes a line after the failure is read for the step it names
STAGE_WINDOW = 8  # lines after an allocation failure in which a context line names its stage (llama.cpp)
WRAP_WINDOW = 60  # lines after a PyTorch OOM in which the engine's own wrapper may follow (chained traceback)
SETTINGS_REGION = 4_000_000  # bytes of start-up log read for settings from the start-up's first line
MAX_AFTER = 8000  # bytes after the failure's line still read for settings (pastes put lines out of order)
GiB = 1 << 30
MiB = 1 << 20
LLAMA_DEFAULT_UBATCH = 512  # llama.cpp common/common.h common_params.n_ubatch (every build since the -ub split)


def diagnose(text: str, *, predict: bool = True, command: list[str] | None = None) -> Diagnosis:
    """Read an error message or a whole log. predict: put oomkit's own figures beside the engine's when the log
    names a model oomkit knows (catalog only, no network). command: the engine command line that produced the
    text (argv); each fix then carries that command with only the flags it changes rewritten."""
    seed = _command_settings(list(command)) if command else {}
    # `lms load ...`: LM Studio runs the llama.cpp the text speaks of, so its fixes are LM Studio's (fixes.py)
    lms = bool(command) and re.sub(r"\.exe$", "", re.split(r"[/\\]", str(command[0]))[-1]) == "lms"
    d = _diagnose(text, predict, seed, host_hint="lmstudio" if lms else None)
    if command:
        d = _with_command(d, list(command))
    else:
        d = short_note(d, text)
    return d


def _command_settings(argv: list[str]) -> dict[str, Any]:
    """What the command line sets (the engine's own option names, only those that differ from its defaults, and the
    model argument): the log's own lines override them."""
    from ..engines.cmdline import parse_command  # lazy: only a diagnosis of a command line needs its parser
    from ..errors import OomkitError

    try:
        pc = parse_command(argv, env={})
    except OomkitError:
        return {}
    from dataclasses import fields  # lazy: as above

    from ..engines.base import get_engine  # lazy: as above

    default = get_engine(pc.engine).settings()
    out: dict[str, Any] = {f.name: getattr(pc.settings, f.name) for f in fields(pc.settings)
                           if f.name != "program" and getattr(pc.settings, f.name) != getattr(default, f.name)
                           and isinstance(getattr(pc.settings, f.name), (int, float, str, bool))}
    if pc.model:
        out["model"] = pc.model
    return out


def _with_command(d: Diagnosis, argv: list[str]) -> Diagnosis:
    """The fixes as the user's own command line: each fix's flags (or variables) applied to argv by the engine's
    parser, and argv rewritten with only the changed flags (the engine record's rewrite_command)."""
    from ..engines.cmdline import parse_command  # lazy: only a diagnosis of a command line needs its parser
    from ..errors import OomkitError

    try:
        before = parse_command(argv, env={})
    except OomkitError:
        return d
    from ..engines.base import get_engine  # lazy: as above

    eng = get_engine(before.engine)
    settings = {"command": " ".join(argv), **d.settings}
    if before.model:
        settings.setdefault("model", before.model)
    fixes = []
    for f in d.fixes:
        # a fix carrying its own command is kept as it is, unless it is `lms load` with flags (lmstudio.py): those
        # flags are lms load's own, so the user's `lms load` line takes them
        if (f.command and not (f.flags and f.command.startswith("lms load "))) or not (f.flags or f.env):
            fixes.append(f)
            continue
        try:
            env_words = [f"{k}={v}" for k, v in f.env]
            after = parse_command([*env_words, *argv, *f.flags], env={})
            words = eng.rewrite_command(argv, before.settings, after.settings)
            if f.command and f.command.startswith("lms load "):
                # a value equal to what oomkit takes for lms load's default is dropped by the rewrite; LM Studio's
                # own default may differ (its 0.4 loader logs n_parallel=4, lmstudio-bug-tracker#1606): say it
                alias = {"-c": "--context-length"}  # lms load.ts: "-c, --context-length <length>"
                said = {(alias.get(words[i], words[i]), words[i + 1]) for i in range(len(words) - 1)}
                words = [*words, *(w for n, v in zip(f.flags[::2], f.flags[1::2], strict=False)
                                   if (n, v) not in said
                                   for w in (n, v))]
            # each word as the shell must read it back (a prompt with spaces, a JSON value), "\n" between 2 commands
            line = " ".join(w if w == "\n" else shlex.quote(w)
                            for w in [*(w for w in env_words if w not in words), *words]).replace(" \n ", "\n")
        except (OomkitError, ValueError, TypeError):
            line = None
        fixes.append(Fix(**{**f.__dict__, "command": line}) if line else f)
    return Diagnosis(**{**d.__dict__, "settings": settings, "fixes": tuple(fixes)})


def _diagnose(text: str, predict: bool, seed: dict[str, Any], host_hint: str | None = None) -> Diagnosis:
    if not isinstance(text, str):
        text = bytes(text).decode("utf-8", "replace")
    doc = Text(normalize(text))
    evs = events(doc)
    recognised = tuple(dict.fromkeys(e.sig.id for e in evs))
    anchor = _cause(evs, doc)
    if anchor is not None and anchor.sig.id == "ollama_runner_terminated" and not _memory_reason(anchor) and any(
            e.role == "not_oom" and e.sig.id not in FALLBACKS + NOTICES for e in evs):
        # the runner stopped without a memory reason, and the log holds an error that is no shortage (a GPU kernel
        # missing for the device, a driver mismatch): that error is why it stopped
        anchor = None
    if anchor is None:
        d = _without_oom(doc, evs, recognised, predict)
        if seed:
            d = Diagnosis(**{**d.__dict__, "settings": {**seed, **d.settings}})
        if predict and d.settings.get("model") and d.stage != "not_oom":
            from .predict import prediction_for  # lazy: catalog and engines only for a named model

            d = Diagnosis(**{**d.__dict__, "prediction": prediction_for(d)})
        return d

    incident = [e for e in evs if anchor.line.no <= e.line.no <= anchor.line.no + WRAP_WINDOW]
    numbers = _merge_numbers(anchor, incident)
    settings, buffers = _startup(doc, anchor.line.start)
    settings = {**seed, **settings}
    around = doc.around(anchor.line.start, 120, WRAP_WINDOW)
    host = host_of(doc.slice(0, 200_000)) or host_of(around)
    if host_hint and anchor.sig.engine in ("llama.cpp", host_hint) and host in (None, "llama.cpp"):
        host = host_hint  # the command line names the program whose log it is
    engine = anchor.sig.engine
    if engine in HOSTED:  # the kernel's OOM killer, a library inside the engine: the log's program is the one to fix
        engine = host
    if anchor.sig.id == "metal_cmdbuf_oom" and host == "mlx":
        # kIOGPUCommandBufferCallbackErrorOutOfMemory is Metal's own error code (MTLCommandBufferError 8), which MLX
        # prints too (mlx/backend/metal/eval.cpp: "[METAL] Command buffer execution failed: " + the error's
        # description): in an MLX program's log it is MLX's failure, not llama.cpp's ggml-metal
        engine = "mlx"
    stage, confidence, why = _stage(doc, anchor, incident, numbers, around, settings, buffers)
    if anchor.sig.id == "ollama_runner_terminated" and stage == "other_process" and _CUDA_MEMINFO.search(around):
        # ggml-cuda's own failure carried in the runner's error: llama.cpp's, in Ollama's runner (as read from its line)
        engine, host = "llama.cpp", "ollama"
    if anchor.sig.id in ("ggml_cuda_error_oom", "ggml_cuda_error_oom_2023") and _WSL.search(doc.slice(0, 200_000)):
        # NVIDIA's CUDA on WSL User Guide (Known Limitations): pinned system memory available to applications is
        # limited under WSL 2; ggml-cuda.cu ggml_cuda_host_malloc pins its host buffers unless GGML_CUDA_NO_PINNED is
        # set (2023+), and its CUDA errors then say out of memory with the card's memory free (llama.cpp#1230, #1735)
        why = [*why, "under WSL 2 pinned host memory is limited (NVIDIA's CUDA on WSL guide): llama.cpp's pinned "
                     "buffers can run out with the GPU's memory free"]
    if anchor.sig.id == "ollama_runner_terminated" and stage == "not_oom" and \
            "invalid device function" in str(numbers.get("reason", "")).lower():
        # the CUDA / ROCm error carried in the runner's error is read as on its own line (invalid_device_function:
        # the GPU build's, in Ollama's runner)
        engine, host = "cuda", "ollama"
    over = vulkan_overread(buffers) if anchor.sig.engine == "llama.cpp" else []
    if over and stage not in ("not_oom", "host_ram"):
        why = [*why, _overread_cause(over[0])]
    if stage == "weights" and any(e.sig.id == "ggml_vulkan_buffer_limit" for e in incident[:STAGE_WINDOW]):
        # ggml-alloc.c ggml_backend_alloc_ctx_tensors_from_buft packs a context's tensors into buffers of at most the
        # buffer type's max size (ggml-vulkan.cpp: the device's max allocation size), so a weights buffer the driver
        # refuses as over its limit holds one tensor larger than that limit: fewer layers or more free memory do not
        # shrink it
        stage = "buffer_limit"
        why = [*why, "one weight tensor is larger than the Vulkan driver's per-allocation limit "
                     "(maxMemoryAllocationSize): ggml packs weights into buffers under that limit, so this buffer is a "
                     "single tensor; more free memory or fewer layers do not help"]
    if stage == "compute" and any(e.sig.id == "ggml_vulkan_buffer_limit" for e in incident[:STAGE_WINDOW]):
        # ggml-vulkan refuses a buffer over the device's maxBufferSize before allocating: free memory does not help
        why = [*why, "the Vulkan driver refuses one buffer this large (over its maxBufferSize): the compute buffer "
                     "itself must shrink; more free memory does not help"]
    if anchor.sig.id == "ollama_runner_terminated" and "POST predict" in anchor.line.text:
        # llm/server.go Completion: the runner's HTTP connection dropped mid-request (the runner process died)
        why = [*why, "the runner died while serving the request (its connection dropped): why it stopped is in Ollama's "
                     "server log (server.log), in the runner's last lines before the drop"]
    if anchor.sig.id == "torch_mps_buffer_size" and "caching_allocator_warmup" in frames(around):
        # transformers modeling_utils.py caching_allocator_warmup (4.50+): before the weights load, one torch.empty of
        # the bytes bound for each device (the model's size over a factor), so that the allocator is warmed in one
        # call; on MPS that single tensor is over maxBufferLength (transformers PR #46239, 2026-05, skips MPS)
        why = [*why, "transformers' loading warm-up (caching_allocator_warmup) asks for the model's bytes on the "
                     "device as one tensor before any weight is loaded: on MPS that one buffer is over Metal's "
                     "single-buffer limit, so the weights themselves never got to load"]
    if engine == "mlx" and stage == "buffer_limit":
        # mlx-vlm merging an image's features into the prompt (qwen2_vl _merge_input_ids_with_image_features,
        # get_input_embeddings): the buffer scales with the image's tokens, before any prefill step splits the prompt
        vision = next((n for n in frames(around) if re.search(r"image|vision|pixel", n)), None)
        if vision:
            why = [*why, f"the traceback runs through `{vision}` (image input): the buffer holds the image's "
                         "features, which grow with its resolution"]
    if stage == "host_ram" and _PROMPT_CACHE.search(doc.slice(max(0, anchor.line.start - 400_000),
                                                              anchor.line.start + 4 * MAX_LINE_AFTER)):
        # tools/server (server_slot::prompt_save, server_prompt_cache): llama-server copies a slot's KV state into a
        # prompt cache in host RAM when the slot turns to another prompt, up to --cache-ram MiB (8192 by default,
        # LLAMA_ARG_CACHE_RAM; Ollama's llama-server runners inherit the variable)
        why = [*why, "llama-server's prompt cache (prompt cache) holds slots' KV states in host RAM, up to --cache-ram "
                     "(8192 MiB by default), beside the model"]
    if anchor.sig.id in ("metal_cmdbuf_status5", "metal_cmdbuf_oom") and stage == "host_ram":
        buffers = {**_metal_figures(doc.slice(max(0, anchor.line.start - NEAR_REGION), anchor.line.start
                                              + 4 * MAX_LINE_AFTER)), **buffers}
        model, ws, ram = metal_budget(buffers)
        if model and ws and model > ws:
            # the weights' own Metal buffers (ggml-metal's 'data' buffers; ds4's mapped views) are over the working
            # set macOS lets the GPU keep resident (recommendedMaxWorkingSetSize): the command buffer that failed
            # could not page them in, whatever the context or the batch
            stage = "weights"
            of_ram = f" of the {ram / GiB:.0f} GiB RAM" if ram else ""
            why = [*why, f"the model's Metal buffers alone ({model / GiB:.2f} GiB) are over the {ws / GiB:.2f} GiB "
                         f"working set macOS lets the GPU keep{of_ram} (recommendedMaxWorkingSetSize): the weights "
                         "do not fit, whatever the context"]
    if engine == "pytorch" and stage == "unknown" and settings.get("comfyui_gpu_only") == "True":
        # comfy/cli_args.py --gpu-only: "Store and run everything (text encoders/CLIP models, etc... on the GPU)";
        # comfy/model_management.py text_encoder_device() / unet_offload_device() keep every model on the GPU
        stage, confidence = "weights", "medium"
        why = [*why, "ComfyUI runs with --gpu-only: every model it loads (text encoders, diffusion model, VAE) stays on "
                     "the GPU, and together they filled it"]
    if engine == "pytorch" and stage != "not_oom" and _COMFY_PATCH.search(_before_message(doc, anchor)):
        why = [*why, COMFY_PATCH_CAUSE]
    if engine == "pytorch" and stage in ("unknown", "compute") and _COMFY_TILED.search(
            doc.slice(max(0, anchor.line.start - PINNED_LOOKBACK), anchor.line.start + PINNED_LOOKBACK)):
        # the frame (or the call on its source line) of ComfyUI's tiled VAE retry around the message
        stage, confidence = "compute", "medium"
        why = [*why, COMFY_TILED_VAE_CAUSE]
    if stage == "buffer_limit" and engine == "pytorch" and "scaled_dot_product_attention" in _before_message(doc,
                                                                                                            anchor):
        why = [*why, SDPA_MATH_CAUSE]  # fixes.py: SDPA's math fallback, the fused kernels refusing the inputs
    twice = _backend_loaded_twice(doc.slice(max(0, anchor.line.start - NEAR_REGION), anchor.line.start + 4096))
    if twice and stage != "not_oom":
        name, paths = twice
        settings = {**settings, "backend_loaded_twice": {"backend": name, "paths": paths}}
        why = [*why, f"the {name} backend was loaded twice ({paths[0]} and {paths[1]}): ggml-backend-reg.cpp "
                     "load_backend registers every backend library it finds, so two copies of it drive the same GPU"]
    if stage == "compute" and anchor.sig.engine == "llama.cpp" and _image_encode(doc, anchor):
        # the same projector graph built for a request's image (tools/server: "processing image..." before
        # mtmd_helper_eval_chunk_single; mtmd-helper.cpp "encoding image slice..."): sized by that image's patches
        why = [*why, "the buffer is the multimodal projector's (mmproj) compute buffer for the image being encoded "
                     "(tools/mtmd/clip.cpp): it grows with the image's size, not with -ub or -c"]
    elif stage == "compute" and anchor.sig.engine == "llama.cpp" and _projector_warmup(doc, anchor):
        # tools/mtmd/clip.cpp warmup: the projector reserves its compute graph for a fixed largest image (its
        # image_max_pixels; Qwen-VL 1472 x 1472) at load, on the device it runs on (common/arg.cpp --mmproj-offload,
        # on by default), after the language model took its share: the micro-batch and the context do not touch it
        why = [*why, "the buffer is the multimodal projector's (mmproj) compute buffer, reserved at its warm-up for "
                     "the largest image it accepts (tools/mtmd/clip.cpp): it grows with that image, not with -ub or "
                     "-c, and the language model's layers had already taken the device"]
    if engine == "pytorch" and host not in SERVING_HOSTS and stage in ("compute", "unknown", "fragmentation") and \
            _TRAINING.search(doc.slice(max(0, anchor.line.start - NEAR_REGION), anchor.line.start + NEAR_REGION // 4)):
        why = [*why, TRAINING_CAUSE]
    phase = _phase(doc, anchor, incident, around, host or engine)
    if phase in _START_PHASES and stage == "unknown" and anchor.sig.role == "oom":
        # a raw CUDA error (cudaErrorMemoryAllocation, no PyTorch figures) raised in a start-up phase that runs after
        # the KV cache is allocated (vLLM worker/model_runner.py capture_model, V0 and V1; SGLang init_cuda_graphs):
        # what that phase allocates (the captured graphs' pool, their inputs) is what did not fit
        stage, confidence = "compute", "medium"
    total = numbers.get("total_bytes")
    if predict and stage == "unknown" and (host or engine) == "vllm" and settings.get("model") and \
            isinstance(total, int):
        from .predict import vllm_weights_per_gpu  # lazy: the catalog and the engines only for a named model

        per_gpu = vllm_weights_per_gpu(settings)
        if per_gpu and per_gpu[1] > total:
            # vLLM loads each rank's shard of the weights before it profiles or sizes anything (V0 worker/worker.py
            # Worker.load_model before determine_num_available_blocks; V1 v1/worker/gpu_worker.py load_model before
            # determine_available_memory, 0.2-0.3x): weights over the whole device fail there, whatever the context
            tp = settings.get("tensor_parallel_size") or 1
            stage, confidence = "weights", "medium"
            numbers = {**numbers, "weights_per_gpu_bytes": per_gpu[1]}
            why = [*why, f"oomkit's estimate of {per_gpu[0]}'s weights at tensor_parallel_size {tp} is "
                         f"{per_gpu[1] / GiB:.2f} GiB per GPU, more than the whole {total / GiB:.2f} GiB device: the "
                         "weights do not fit, whatever the context"]
    if phase and stage == "compute":
        why = [*why, *_post_kv_cause(phase, host or engine, buffers)]
    elif stage == "compute" and (host or engine) == "vllm" and _VLLM_SERVING.search(
            doc.slice(max(0, anchor.line.start - NEAR_REGION), anchor.line.start + NEAR_REGION // 4)):
        why = [*why, VLLM_SERVING_CAUSE]
    if stage == "buffer_limit" and anchor.sig.backend:
        row = next((r for k, r in (buffers.get("breakdown") or {}).items() if k.startswith(anchor.sig.backend)), None)
        if row:
            numbers.setdefault("device_total_bytes", row["total"])
            numbers.setdefault("device_free_bytes", row["free"])
    if anchor.sig.engine == "llama.cpp":
        # ggml-rpc.cpp ggml_backend_rpc_start_server: the rpc-server prints its device's free and total memory as a
        # client connects ("Accepted client connection, free_mem=N, total_mem=M"); the last one before the failure
        # is the device the buffer was asked of
        rpc = list(_RPC_ACCEPTED.finditer(doc.slice(max(0, anchor.line.start - NEAR_REGION), anchor.line.start)))
        if rpc:
            numbers.setdefault("free_bytes", int(rpc[-1].group(1)))
            numbers.setdefault("total_bytes", int(rpc[-1].group(2)))
        req, total = numbers.get("requested_bytes"), numbers.get("total_bytes")
        if isinstance(req, int) and isinstance(total, int) and req > total and stage != "not_oom":
            why = [*why, f"the buffer asked for ({req:,} bytes) is larger than the whole device ({total:,} bytes): "
                         "nothing freed on it makes room; the buffer has to be split across devices or made smaller"]
    if settings.get("n_ctx") is not None and "n_ctx" not in numbers:
        numbers["n_ctx"] = settings["n_ctx"]
    if "ollama_model" in settings and "ollama" not in (host, engine):
        settings = {k: v for k, v in settings.items() if k != "ollama_model"}  # a JSON "model" of another program
    version = _version(settings, engine)
    backend = anchor.sig.backend or _backend(anchor.line.text)
    if backend is None and anchor.sig.id == "ollama_runner_terminated":  # the runner's own line carried with it
        backend = next((b for e in incident[:STAGE_WINDOW] if e is not anchor and e.sig.engine == "llama.cpp"
                        for b in [e.sig.backend or _backend(e.line.text)] if b), None)
    if backend == "CUDA" and anchor.sig.engine == "llama.cpp":
        # ggml-cuda built for HIP names its buffers and errors "ROCm" (ggml-cuda/common.cuh GGML_CUDA_NAME) while
        # the allocation line keeps its CUDA function names (ggml_backend_cuda_buffer_type_alloc_buffer)
        # ggml-cuda.cu ggml_cuda_error prints the failing call on its own line ("  hipMalloc((void **) &ptr,
        # look_ahead_size)"): vendors/hip.h maps cudaMalloc to hipMalloc in a HIP build, so that line names ROCm
        # likewise ggml-backend.cpp alloc_tensor_range's "failed to allocate ROCm0 buffer" (the buffer type's name),
        # printed with or without its size
        if any("ROCm" in e.line.text or "hipMalloc" in e.line.text for e in incident[:STAGE_WINDOW]) or re.search(
                r"^\s{0,8}hip(?:Malloc|MemcpyAsync|MallocHost)\w{0,20}\(|failed to allocate ROCm[0-9]{1,2} buffer",
                around, re.MULTILINE):
            backend = "ROCm"
    d = Diagnosis(
        engine=engine, stage=stage, confidence=confidence, engine_version=version, numbers=numbers,
        settings=settings, host=host if host != engine else None, backend=backend, signature=anchor.sig.id,
        line=anchor.line.no, evidence=anchor.line.text.strip()[:400], recognised=recognised, buffers=buffers,
        phase=phase)
    advice = _advice(anchor, incident, stage)
    causes = tuple(why) + causes_for(Diagnosis(**{**d.__dict__, "causes": tuple(why)}), advice)
    fixes = fixes_for(Diagnosis(**{**d.__dict__, "causes": causes}), advice, predict=predict)
    prediction = None
    if predict:
        from .predict import prediction_for  # lazy: the catalog and the engines only when a log names a model

        prediction = prediction_for(d)
    return Diagnosis(**{**d.__dict__, "causes": causes, "fixes": fixes, "prediction": prediction})


# logread.py's Metal figures (ggml-metal's running total after the weights' 'data' buffer, ds4's mapped views) read
# across line ends too: a paste re-wrapped at its spaces splits those long lines
_METAL_FIGURES = (("metal_model_bytes", re.compile(METAL_DATA_BUFFER)), ("metal_model_bytes", re.compile(DS4_MAPPED_VIEWS)))


def _metal_figures(region: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for name, rx in _METAL_FIGURES:
        hits = [m for m in rx.finditer(region)]
        if hits and name not in out:
            try:
                out[name] = int(round(float(hits[-1].group(1).rstrip(".")) * (1 << 20)))
            except ValueError:
                continue
    return out


# lines that open an engine's start-up: the settings of the LAST start-up before the failure are the ones in force
STARTUP_MARKERS = (b"vLLM API server version", b"Initializing a V1 LLM engine", b"Initializing an LLM engine",
                   b"non-default args:", b"server_args=ServerArgs", b"llama_model_loader: loaded meta data",
                   b"build: ", b"msg=\"starting llama server\"", b"msg=\"server config\"", b"Args {")
STARTUP_SPAN = 200_000  # bytes one start-up's lines span at most
NEAR_REGION = 1_000_000  # bytes before the failure always read (figures printed late in the start-up)


def _startup(doc: Text, at: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """(settings, buffers) of the start-up the failure at byte `at` belongs to: from the last start-up marker
    before it (or the top of the text) for SETTINGS_REGION bytes, then the NEAR_REGION bytes before the failure."""
    last = max((doc.b.rfind(m, 0, at) for m in STARTUP_MARKERS), default=-1)
    if last > 0:  # the start-up's first marker: the earliest one within STARTUP_SPAN before the last
        firsts = [doc.b.find(m, max(0, last - STARTUP_SPAN), last + 200) for m in STARTUP_MARKERS]
        last = min(p for p in firsts if p >= 0)
        last = max(0, last - STARTUP_SPAN // 4)  # and the lines just before it (an estimate printed first)
    start = doc.b.rfind(b"\n", 0, last) + 1 if last > 0 else 0
    hi = min(at + MAX_AFTER, start + SETTINGS_REGION)
    settings, buffers = read_log(doc, start, hi)
    if hi < at + MAX_AFTER:
        s2, b2 = read_log(doc, max(hi, at - NEAR_REGION), at + MAX_AFTER)
        settings.update(s2)
        buffers.update(b2)
    return settings, buffers



def _memory_reason(e: Event) -> bool:
    r = str(e.numbers.get("reason", "")).lower()
    return any(w in r for w in ("memory", "alloc", "malloc", "killed"))


def _cause(evs: list[Event], doc: Text | None = None) -> Event | None:
    ooms = [e for e in evs if e.role in OOM_ROLES]
    if not ooms:
        return None
    if doc is not None and len(ooms) > 1:
        # ggml-vulkan.cpp ggml_vk_host_malloc: a refused pinned host buffer prints "Failed to allocate pinned memory."
        # then the driver's error, and the caller falls back to a plain CPU buffer (the load goes on): that error is
        # not the failure when a device allocation fails after it
        ooms = [e for e in ooms if not (_pinned_before(doc, e) and any(
            _at(o, last=True) > _at(e) and o.sig.backend == "Vulkan" and not _host_buffer(o.numbers.get("buffer"))
            for o in ooms))] or ooms
    if len(ooms) > 1:  # --fit's abort only foretells a shortage: the allocation that then fails names the stage
        ooms = [e for e in ooms if e.sig.id != "llama_fit_aborted"] or ooms
        # ggml-metal's bare status line is read only where no other line names the failure (Metal's own code after
        # it, kIOGPUCommandBufferCallbackErrorOutOfMemory, carries the working-set advice)
        ooms = [e for e in ooms if e.sig.id != "metal_cmdbuf_status5"] or ooms
    recovered = [e.line.no for e in evs if e.role == "recovered"]
    for e in ooms:
        # a failure the engine retried and recovered from is not the cause when another failure follows
        if any(0 <= r - e.line.no <= STAGE_WINDOW for r in recovered):
            if any(o.line.no > e.line.no + STAGE_WINDOW and not _is_retried(o, recovered) for o in ooms):
                continue
        return e
    return ooms[0]


_PINNED_VK = re.compile(r"ggml_vulkan:\s{1,4}Failed\s{1,4}to\s{1,4}allocate\s{1,4}pinned\s{1,4}memory\.")


def _at(e: Event, last: bool = False) -> int:
    """Where the event's message is in the text (its first match on its line, or the last: a log run together on
    one line holds several)."""
    ms = list(e.sig.regex().finditer(e.line.text)) if last else [e.sig.regex().search(e.line.text)]
    m = ms[-1] if ms and ms[-1] is not None else None
    return e.line.start + (m.start() if m else 0)


def _pinned_before(doc: Text, e: Event) -> bool:
    """ggml-vulkan's pinned-memory note within the three lines before the event's message (its error text after the
    note may be re-wrapped over two, or run onto the note's line)."""
    before = doc.slice(max(0, _at(e) - 600), _at(e)).split("\n")[-4:]
    return _PINNED_VK.search("\n".join(before)[-300:]) is not None
_WSL = re.compile(r"\bWSL ?2?\b|microsoft-standard-WSL")
# a training run in the text: transformers' Trainer (trainer.py train / _inner_training_loop / training_step), a
# backward pass (accelerate's Accelerator.backward, loss.backward(), torch/autograd backward), PEFT's or TRL's trainer
# modules, or a fine-tuning script named in it
_TRAINING = re.compile(r"trainer\.py(?:\"?, line |:)[0-9]{1,6}, in (?:Trainer\.)?(?:train|_inner_training_loop|training_step)\b|"
                       r"\b(?:accelerator|loss)\.backward\(|autograd[/\\]__init__\.py\"?, line [0-9]{1,6}, in backward|"
                       r"peft[/\\]tuners[/\\]|trl[/\\]trainer[/\\]|\b\w{0,40}fine-?tun\w{0,40}\.(?:sh|py)\b|"
                       r"\bq?lora\w{0,40}\.(?:sh|py)\b", re.IGNORECASE)
# serving engines' logs: a PyTorch failure there is the engine's, whatever the text says of training
SERVING_HOSTS = ("vllm", "sglang", "tgi", "ollama", "llama.cpp", "exllama", "mlx", "tensorrt-llm", "lmstudio",
                 "koboldcpp")
# the traceback's source line of a copy that PyTorch pins (fixes.PINNED_HOST_CAUSE): .to("cpu", ..., non_blocking=True)
# (quotes escaped where the paste went through JSON), .pin_memory()
_PINNED_COPY = re.compile(r"""\.to\(\s{0,4}(?:device\s{0,4}=\s{0,4})?\\?["']cpu\\?["'][^)\n]{0,120}?non_blocking\s{0,4}=\s{0,4}"""
                          r"""True|\.pin_memory\(\s{0,4}\)""")
_UNSLOTH_OFFLOAD = re.compile(r"Unsloth_Offloaded_Gradient_Checkpointer|unsloth_zoo[/\\]gradient_checkpointing\.py")
# comfy/model_patcher.py ModelPatcher.patch_weight_to_device (the traceback's frame): a weight with patches (LoRAs)
# is copied to the device in float32 to apply them (fixes.COMFY_PATCH_CAUSE)
_COMFY_PATCH = re.compile(r"\bin patch_weight_to_device\b")
# comfy/sd.py VAE.decode's tiled retry (fixes.COMFY_TILED_VAE_CAUSE): its frame, or the call on the frame's source line
_COMFY_TILED = re.compile(r"\bdecode_tiled_\b")
PINNED_LOOKBACK = 3000  # bytes before the message read for the traceback's last frames


def _before_message(doc: Text, anchor: Event) -> str:
    """The traceback's last frames above the message, with the message's own line (a paste run onto one line)."""
    return doc.slice(max(0, anchor.line.start - PINNED_LOOKBACK), anchor.line.start) + anchor.line.text


_CUDA_MEMINFO = re.compile(r"in function ggml_backend_cuda_device_get_memory|cudaMemGetInfo\(free, total\)")
_RPC_ACCEPTED = re.compile(r"Accepted client connection, free_mem=([0-9]{1,20}), total_mem=([0-9]{1,20})")


def _advice(anchor: Event, incident: list[Event], stage: str) -> Signature:
    """The message whose causes and fixes apply: the line that named the stage when it was not the anchor."""
    if anchor.sig.id == "radv_cs_enomem":
        # the refusal is of the device's buffers together (_radv_stage): its own advice at any stage, not the
        # advice of the stage's own buffer
        return anchor.sig
    if stage == "host_ram" and anchor.sig.id == "ggml_cpu_alloc_fail":
        # the CPU buffer that failed is the compute graph's when ggml-alloc.c ggml_gallocr_reserve_n follows (the
        # graph allocator is the only caller that logs "failed to allocate <buft> buffer of size N" for a graph):
        # host RAM ran out, but -ub / -b size that buffer, not the layers left on the CPU
        gal = next((e for e in incident if e.sig.id == "ggml_gallocr_fail"
                    and e.line.no <= anchor.line.no + STAGE_WINDOW), None)
        if gal is not None:
            return gal.sig
    if stage == "host_ram":
        gal = _host_graph_failure(anchor, [e for e in incident if e.line.no <= anchor.line.no + STAGE_WINDOW])
        if gal is not None:  # a pinned-host refusal before it (_stage_read): the graph's advice (-ub / -b)
            return gal.sig
    if anchor.sig.id == "ggml_cuda_error_oom" and stage == "other_process":
        # the free-memory query failed before any buffer (_stage_read): the pool's and the batch's advice is moot
        return dataclasses.replace(anchor.sig, causes=(), fixes=())
    if anchor.sig.id == "metal_cmdbuf_status5" and stage != anchor.sig.stage:
        # Metal named another failure after the status (_stage): none of the working-set advice applies
        return dataclasses.replace(anchor.sig, causes=(), fixes=())
    if anchor.sig.stage == stage or anchor.sig.id in ("ollama_runner_terminated", "ollama_layout", "tgi_prefill"):
        return anchor.sig
    for e in incident:
        if e is not anchor and e.sig.stage == stage and e.role in ("stage", "oom"):
            return e.sig
    # a llama.cpp allocation line names no buffer (ggml_backend_*_alloc_buffer serves the weights, the KV cache and
    # the compute graph alike): once the stage is placed otherwise (a progress line, the micro-batch), the advice is
    # that stage's own message's, not the allocation line's mix of all three
    if anchor.sig.engine == "llama.cpp" and anchor.sig.stage is None and stage in _LLAMA_STAGE_ADVICE:
        return BY_ID[_LLAMA_STAGE_ADVICE[stage]]
    if stage == "unknown" and anchor.sig.engine == "llama.cpp" and anchor.sig.stage is None:
        # a backend's allocation line (ggml_vulkan, ggml-cuda) followed by ggml-alloc.c alloc_tensor_range: the
        # buffer is a context's tensors (ggml_backend_alloc_ctx_tensors_from_buft: the weights in llama-model.cpp
        # load_tensors, the KV cache in llama-kv-cache.cpp), never the compute graph (ggml_gallocr): its advice,
        # not the allocation line's -ub
        rng = next((e for e in incident if e.sig.id == "ggml_alloc_tensor_range"), None)
        if rng is not None:
            return rng.sig
    return anchor.sig


_LLAMA_STAGE_ADVICE = {"weights": "llama_model_buffer", "kv_cache": "llama_kv_alloc_fail",
                       "compute": "llama_compute_buffers"}


def _is_retried(e: Event, recovered: list[int]) -> bool:
    return any(0 <= r - e.line.no <= STAGE_WINDOW for r in recovered)


def _merge_numbers(anchor: Event, incident: list[Event]) -> dict[str, Any]:
    numbers = dict(anchor.numbers)
    for e in incident:  # the engine's own wrapper further down names its knob (vLLM's sampler: max_num_seqs)
        if e is not anchor and e.role == "oom" and e.sig.stage and e.sig.engine not in (anchor.sig.engine, "pytorch",
                                                                                        "cuda"):
            for k, v in e.numbers.items():
                numbers.setdefault(k, v)
    for e in incident:
        if e is anchor or e.role not in OOM_ROLES or e.line.no > anchor.line.no + STAGE_WINDOW:
            continue
        if e.sig.engine != anchor.sig.engine and anchor.sig.engine not in ("ollama",):
            continue
        for k, v in e.numbers.items():
            numbers.setdefault(k, v)
    return numbers


# the llama.cpp messages that name the buffer a cudaMalloc failure was for, read on the same line when a paste ran
# the lines together
_RUN_ON_STAGES = tuple(BY_ID[i] for i in ("ggml_gallocr_fail", "llama_compute_buffers", "llama_kv_alloc_fail",
                                          "llama_model_buffer"))


def _host_buffer(name: Any) -> bool:
    """A ggml buffer type in host RAM: the CPU's, or a backend's pinned host buffer ("CUDA_Host", "ROCm_Host",
    "Vulkan_Host", "SYCL_Host": ggml-cuda.cu ggml_backend_cuda_host_buffer_type falls back to a CPU buffer when
    cudaMallocHost fails, so its failure is the CPU buffer's)."""
    return str(name or "").startswith("CPU") or str(name or "").endswith("_Host")


def _host_graph_failure(anchor: Event, events: list[Event]) -> Event | None:
    """ggml-alloc.c's graph reservation failing for a host buffer type at or after a llama.cpp allocation line that
    is not itself that reservation: the compute graph's buffer in host RAM was what failed."""
    if anchor.sig.engine != "llama.cpp" or anchor.sig.id == "ggml_gallocr_fail":
        return None
    return next((e for e in events if e.sig.id == "ggml_gallocr_fail" and e.line.no >= anchor.line.no
                 and _host_buffer(e.numbers.get("buffer"))), None)


def _stage(doc: Text, anchor: Event, incident: list[Event], numbers: dict[str, Any], around: str,
           settings: dict[str, Any] | None = None, buffers: dict[str, Any] | None = None
           ) -> tuple[str, str, list[str]]:
    """(stage, confidence, reasons) for the failure at `anchor`."""
    stage, confidence, why = _stage_read(doc, anchor, incident, numbers, around, settings, buffers)
    if (anchor.sig.id == "metal_cmdbuf_status5" and confidence == "high"
            and not _METAL_CODE.search(doc.slice(anchor.line.start, anchor.line.start + 4 * MAX_LINE_AFTER))):
        # the status alone, no code after it: out of memory is its usual cause, not a proven one (janhq/jan#8206 saw
        # the same bare line go away with a llama.cpp update)
        return stage, "medium", [*why, "Metal names no error code after the status: out of memory is the usual "
                                       "cause, not the proven one"]
    return stage, confidence, why


def _stage_read(doc: Text, anchor: Event, incident: list[Event], numbers: dict[str, Any], around: str,
                settings: dict[str, Any] | None = None, buffers: dict[str, Any] | None = None
                ) -> tuple[str, str, list[str]]:
    sig = anchor.sig
    if sig.id == "sglang_input_too_long":
        return _sglang_limit(numbers, settings or {}, buffers or {})
    req = numbers.get("requested_bytes")
    if isinstance(req, int) and 1 << 63 <= req < 1 << 64:
        # the allocators print the size as size_t (MLX backend/metal/allocator.cpp MetalAllocator::malloc(size_t),
        # ggml's size_t buffers): from 2^63 to 2^64 it is a negative size wrapped around, no real request (a figure
        # of 2^64 or more is no size_t at all: a size computed wrongly, read as such further on)
        return "not_oom", "high", [f"the size asked, {req:,} bytes, is 2^64 - {(1 << 64) - req:,}: a negative size "
                                   "printed unsigned, an integer overflow in the program (a tensor of 2^31 or more "
                                   "elements, a size computed in 32 bits), not a memory shortage; no memory "
                                   "setting helps: split the work into smaller tensors, or a release with the fix"]
    if sig.id == "ggml_cuda_error_oom" and _CUDA_MEMINFO.search(
            doc.slice(anchor.line.start, anchor.line.start + 4 * MAX_LINE_AFTER)):
        # ggml-cuda.cu ggml_backend_cuda_device_get_memory: CUDA_CHECK(cudaMemGetInfo(free, total)) aborts with the
        # device's out-of-memory when CUDA cannot even create this process's context on it; llama.cpp asks it before
        # any buffer (src/llama.cpp llama_model_load_from_file_impl: "using device ... - N MiB free", 2025+; Ollama's
        # runners the same): the memory was already held when the runner started (ollama#9562)
        return "other_process", "medium", ["CUDA failed its free-memory query (cudaMemGetInfo in "
                                           "ggml_backend_cuda_device_get_memory), which llama.cpp makes before any "
                                           "buffer: the GPU was already full when the runner started (another "
                                           "program, or a model still loaded)"]
    if sig.id == "cuda_runtime_oom" and _PINNED_COPY.search(_before_message(doc, anchor)):
        # fixes.PINNED_HOST_CAUSE: a bare CUDA error at a non-blocking copy to the CPU (or pin_memory) is the pinned
        # host allocation's (TensorConversions.cpp _to_copy's pin_out, cudaHostAlloc), not the device's
        why = [PINNED_HOST_CAUSE]
        if _UNSLOTH_OFFLOAD.search(_before_message(doc, anchor)):
            why.append(UNSLOTH_OFFLOAD_CAUSE)
        return "host_ram", "medium", why
    if sig.id == "metal_cmdbuf_status5":
        # ggml-metal prints Metal's own error for the failed command buffer right after the status (llama.cpp#7010+:
        # "error: <localizedDescription> (<code>:<name>)"): a code that is not Insufficient Memory (8) is no shortage
        named = _METAL_CODE.search(doc.slice(anchor.line.start, anchor.line.start + 4 * MAX_LINE_AFTER))
        if named and named.group(1) != "OutOfMemory":
            return "unknown", "low", [f"Metal names the command buffer's failure {named.group(1)} (not Insufficient "
                                      "Memory): the status alone says nothing of memory"]
    near = [e for e in incident if e is not anchor and e.line.no <= anchor.line.no + STAGE_WINDOW]
    if sig.id == "radv_cs_enomem":
        return _radv_stage(doc, anchor)
    # a context line right after names the stage (llama.cpp), and outranks the allocation line's own guess
    if sig.role == "stage" and _host_buffer(anchor.numbers.get("buffer")):
        return "host_ram", "high", ["the buffer that failed is in host RAM (CPU)"]
    if sig.id == "ggml_gallocr_fail" and _host_buffer(anchor.numbers.get("buffer")):
        # ggml-alloc.c's graph reservation failing for a CPU (or pinned host) buffer type: the compute graph's buffer
        # in host RAM, read as any other host buffer's failure; its advice stays the compute graph's (-ub)
        return "host_ram", "high", ["the buffer that failed is in host RAM (CPU): the compute graph's "
                                    "(ggml_gallocr_reserve_n), sized by -ub / -b and the context"]
    if _host_graph_failure(anchor, near) is not None:
        # the same reservation when a backend's pinned-host allocation is the anchor: ggml-vulkan.cpp
        # ggml_backend_vk_host_buffer_type_alloc_buffer falls back to ggml_backend_cpu_buffer_type when pinned memory
        # is refused (over max_buffer_size, "Failed to allocate pinned memory"), and the CPU buffer failing after it
        # is what ran out; ggml-alloc.c's line names the host buffer type (koboldcpp#1882: Vulkan_Host, 2.37 GiB)
        return "host_ram", "high", ["the buffer that failed is in host RAM (CPU): the compute graph's "
                                    "(ggml_gallocr_reserve_n), sized by -ub / -b and the context; the backend's "
                                    "pinned host memory was refused first and the plain CPU buffer then failed"]
    for e in near:
        if e.role == "stage" and e.sig.stage:
            if _host_buffer(e.numbers.get("buffer")) or sig.stage == "host_ram":
                part = ["the buffer is llama.cpp's KV cache (kv_cache), in RAM"] if e.sig.stage == "kv_cache" else []
                return "host_ram", "high", ["the buffer that failed is in host RAM (CPU)", *part]
            return e.sig.stage, "high", []
    if sig.id == "ggml_cuda_malloc":
        # a log pasted without its line ends: the caller's message that names the buffer (ggml-alloc.c's graph
        # reservation, llama-model.cpp's model buffer, the KV cache's) follows ggml-cuda's cudaMalloc line on the
        # same line, as it follows it on the next line in the log; the first one after it is the caller's
        m = sig.regex().search(anchor.line.text)
        rest = anchor.line.text[m.end():] if m else ""
        named = [(hit.start(), other.stage) for other in _RUN_ON_STAGES
                 if (hit := other.regex().search(rest)) is not None and other.stage]
        if named:
            return min(named)[1], "high", []
    if sig.id == "killed_signal":  # SIGKILL names no sender: the OOM killer is the likely one, not a proven one
        return "host_ram", "medium", []
    if sig.id == "ollama_layout":
        if numbers.get("num_gpu") is not None:
            return "weights", "high", ["num_gpu forces the number of layers on the GPU, so Ollama cannot back off"]
        return "kv_cache", "medium", ["no layout of the layers and the context's KV cache fits; the context is the "
                                      "usual cause (large defaults, clients sending num_ctx)"]
    if sig.id == "trtllm_executor":
        # _torch/pyexecutor/py_executor_creator.py (1.0+): the executor is built component by component, each in
        # _ExecutorMemoryMonitor.observe_creation_stage, and the one whose allocation raised is named by its
        # memory_type_friendly_names entry ("Model", "KV cache", "Sampler", ...)
        part = _TRTLLM_COMPONENT_STAGE.get(str(numbers.get("component", "")).split(" (")[0].strip())
        if part:
            return part, "high", [f"TensorRT-LLM names the component that could not be created: "
                                  f"{numbers['component']}"]
    if sig.id == "tgi_prefill":
        if numbers.get("total_tokens") or numbers.get("max_total_tokens"):
            return "kv_cache", "high", ["the batch's total tokens (the KV cache) do not fit"]
        return "compute", "high", ["the warm-up prefill batch does not fit"]
    if sig.id in ("lmstudio_guardrail", "lmstudio_resources") and "memory estimate unavailable" in around.lower():
        return "not_oom", "medium", ["LM Studio says its memory estimate is unavailable for this model: the guardrail "
                                     "refused without a figure, not on a measured shortage"]
    if sig.id == "lmstudio_guardrail" and "NaN" in anchor.line.text:
        return "not_oom", "medium", ["the guardrail's own estimate is NaN: LM Studio could not estimate this model "
                                     "(a bug of the app, fixed in later releases), not a shortage"]
    if sig.id == "lmstudio_failed_load_json":
        ram, cap = numbers.get("system_available_bytes"), numbers.get("ram_capacity_bytes")
        vram, vcap = numbers.get("free_bytes"), numbers.get("total_bytes")
        if ram is not None and cap and ram < cap // 50:
            return "host_ram", "high", [f"LM Studio reports {ram:,} bytes of RAM unused of {cap / 1e9:.2f} GB"]
        if vram is not None and vcap and vram < vcap // 50:
            return "kv_cache" if numbers.get("n_ctx", 0) > 32768 else "weights", "medium", []
        return "unknown", "low", []
    if sig.id == "exllama_insufficient":
        # exllamav3 model/model_ls.py _load_autosplit (exllamav2 the same): a module is loaded with its cache layers
        # and a forward chunk run through it; on an out-of-memory the next device is tried, and past the last the
        # message is raised. Weights or cache: the message cannot say
        return "kv_cache", "medium", ["ExLlama raises this when a module (its weights with its cache layers and a "
                                      "forward chunk) fits on no device: the weights or the cache; the cache, sized "
                                      "for the model's full context by default, is the usual cause"]
    if sig.id == "ollama_runner_terminated":
        reason = str(numbers.get("reason", ""))
        placed = _ollama_reason(reason)
        if placed[0] == "unknown":
            # llm/status.go keeps the runner's stderr from its first error prefix on, so the error Ollama returns
            # can carry the next runner line too: ggml-alloc.c ggml_gallocr_reserve_n's "failed to allocate
            # <buft> buffer of size N" is the compute graph's reservation (the only allocator that logs it)
            # a host buffer's failure first: ggml-cuda.cu's pinned CUDA_Host buffer falls back to a CPU buffer, and
            # that one's failure (ggml_backend_cpu_buffer_type_alloc_buffer) is what ran out, before the weights'
            # alloc_tensor_range line that names the pinned buffer
            named = min((e for e in near if e.sig.engine == "llama.cpp" and e.sig.stage
                         and e.role in ("oom", "stage")), key=lambda e: e.sig.stage != "host_ram", default=None)
            if named is not None:
                return named.sig.stage, "high", [f"the runner's own line names it: {named.line.text.strip()[:160]}"]
            if _RADV_TEXT.search(doc.slice(anchor.line.start, anchor.line.start + 2 * MAX_LINE_AFTER)):
                # the AMD driver's refusal (radv_cs_enomem) carried in the runner's error: read as on its own line
                st, conf, why = _radv_stage(doc, anchor)
                return st, conf, [*BY_ID["radv_cs_enomem"].causes, *why]
            if "out of memory" in around.lower() and _CUDA_MEMINFO.search(around):
                # the runner's CUDA error run into its line: the free-memory query failed (see ggml_cuda_error_oom)
                return "other_process", "medium", ["CUDA failed its free-memory query (cudaMemGetInfo in "
                                                   "ggml_backend_cuda_device_get_memory), which llama.cpp makes "
                                                   "before any buffer: the GPU was already full when the runner "
                                                   "started"]
            if "segmentation fault" in reason.lower():
                # Go's os/exec ExitError text for a runner killed by SIGSEGV (llm/server.go "llama runner process has
                # terminated: signal: segmentation fault"): a bad pointer in the runner; an allocation llama.cpp
                # cannot make is reported as such ("cudaMalloc failed", "unable to allocate ... buffer") and aborts,
                # and no such line is near it here
                return "not_oom", "medium", ["the runner crashed on a bad memory access (SIGSEGV), with no failed "
                                             "allocation reported before it: a bug in the runner or its GPU "
                                             "library for this setup, not memory; an Ollama update is the usual "
                                             "fix"]
        return placed
    wrapper = next((e for e in incident if e is not anchor and e.sig.stage and e.role == "oom"
                    and e.sig.engine not in ("pytorch", "cuda")), None)
    # the cut head is the whole message where its figures were read on the lines after it (a paste re-wrapped
    # right after "CUDA out of memory.")
    if sig.id in ("torch_cuda_oom", "torch_mps_oom") or (sig.id == "torch_cuda_oom_cut"
                                                          and numbers.get("requested_bytes") is not None):
        placed = _torch_stage(numbers)
        # the engine's own wrapper (vLLM's sampler warm-up) names the step that ran out; reserved-but-unallocated
        # memory at that moment is a fix beside it (fixes.py), not the stage
        if placed and placed[0] == "buffer_limit":
            names = frames(around)
            if stage_from_frames(names) == "kv_cache":  # the engine's KV pool, sized beyond the device
                placed = (*placed[:2], [f"the traceback runs through {_frame_hint(names, 'kv_cache')}: the engine "
                                        "sized its KV cache pool larger than the whole device"])
        if placed and not (placed[0] == "fragmentation" and wrapper is not None):
            return placed
        req, total = numbers.get("requested_bytes"), numbers.get("total_bytes")
        # one request of half the device or more is read as one activation (fixes.HALF_DEVICE_CAUSE: a rule of
        # thumb, not a PyTorch figure)
        if (not placed and wrapper is None and isinstance(req, int) and isinstance(total, int) and 2 * req >= total
                and host_of(around) not in SERVING_HOSTS and "caching_allocator_warmup" not in frames(around)):
            return "compute", "medium", [HALF_DEVICE_CAUSE]
        exl = _exllama_stage(around, numbers)
        if exl is not None:
            return exl
        if not placed and _VLLM_STEP_DUMP in around:
            # v1/engine/core.py execute_model_with_error_logging: a scheduled step raised, and
            # logging_utils/dump_input.py dump_engine_exception logged the batch: the engine was serving
            return "compute", "medium", ["vLLM dumped the scheduled batch after the failure (dump_input.py): it ran out "
                                         "running a step while serving, in what the KV cache leaves of the "
                                         "gpu_memory_utilization budget (activations of the batch)"]
    if sig.id == "llama_kv_alloc_fail" and "cpu_buffer_type_alloc_buffer: failed to allo" in anchor.line.text:
        # llama-kv-cache.cpp allocates each buffer type's tensors (ggml_backend_alloc_ctx_tensors_from_buft): where
        # ggml_backend_cpu_buffer_type_alloc_buffer is the one that failed, the cache was going to host RAM (-nkvo,
        # layers left on the CPU, a CPU build); read as the two lines are apart when a paste ran them together
        return "host_ram", "high", ["the KV cache's buffer that failed is a CPU buffer "
                                    "(ggml_backend_cpu_buffer_type_alloc_buffer): host RAM"]
    refused = _refused_with_room(sig, buffers or {})
    if refused:
        return "buffer_limit", "medium", [refused]
    if sig.stage:
        return sig.stage, "high", []
    # the engine's own wrapper further down a chained traceback (vLLM's sampler warm-up, TGI's prefill warm-up)
    for e in incident:
        if e is not anchor and e.sig.stage and e.role == "oom" and e.sig.engine not in ("pytorch", "cuda"):
            return e.sig.stage, "high", [f"{e.sig.engine} says: {e.line.text.strip()[:160]}"]
    for e in near:
        if e.sig.stage and e.role in OOM_ROLES:
            return e.sig.stage, "medium", []
    method = _V0_WORKER_METHOD.search(doc.slice(max(0, anchor.line.start - 400), anchor.line.start + MAX_LINE_AFTER))
    if method:
        return _V0_METHOD_STAGE[method.group(1)], "medium", [f"vLLM's worker names the method that raised: "
                                                             f"{method.group(1)}"]
    names = frames(around)
    if any(n in _VIT_ATTN for n in names):
        return "compute", "medium", [VIT_ATTN_CAUSE]
    st = stage_from_frames(names)
    if not st:  # the calls on the frames' source lines (a script's top-level line calls from_pretrained)
        names = calls(around)
        st = stage_from_frames(names)
    if st:
        return st, "medium", [f"the traceback runs through {_frame_hint(names, st)}"]
    if sig.engine == "pytorch" and _tgi_warmup_chain(doc, anchor):
        return "compute", "medium", [TGI_WARMUP_CHAIN_CAUSE]
    head, tail = _split_at_message(anchor)
    before = doc.slice(anchor.line.start - 400_000, anchor.line.start) + "\n" + head
    st = stage_from_markers(before)
    if st:
        if st == "compute" and in_profile_run(before) and host_of(before[-200_000:]) == "vllm":
            mm = "multi-modal" in before or "multimodal" in before
            return st, "low", [PROFILE_RUN_CAUSE + (PROFILE_RUN_MM if mm else "")]
        return st, "low", ["placed by the last start-up step the log printed before the failure"]
    after = doc.slice(anchor.line.start, anchor.line.start + STAGE_WINDOW * MAX_LINE_AFTER)
    st = stage_from_markers("\n".join(after.split("\n")[1: STAGE_WINDOW + 1])) or stage_from_next_marker(tail)
    if st:
        return st, "low", ["placed by the step the engine names right after the failure"]
    if _VLLM_SERVING.search(doc.slice(anchor.line.start, anchor.line.start + 2 * MAX_LINE_AFTER)):
        # the engine's serving loop reports the failure right after it (a message re-wrapped over many lines puts
        # the report past the line window above)
        return "compute", "low", ["vLLM's serving loop reports the failure right after it: a step run while serving"]
    served = doc.slice(max(0, anchor.line.start - NEAR_REGION), anchor.line.start)
    if re.search(_OPENAI_ACCESS, served) and host_of(served + "\n" + anchor.line.text) == "vllm":
        # the OpenAI server logged answering a request before the failure (uvicorn's access line): vLLM had started
        # and its engine was running that request's steps, so the failure is a step run while serving
        return "compute", "low", ["the OpenAI server answered a request before the failure (uvicorn's access line "
                                  "for /v1/chat/completions): a step run while serving"]
    moved = _after_message(doc, anchor)
    st = stage_from_next_marker(moved)
    if st:
        return st, "low", ["placed by the step the engine names right after the failure (the message re-wrapped)"]
    if sig.id == "torch_allowed_memory" and async_had_room(numbers):
        # c10/cuda/CUDAMallocAsyncAllocator.cpp mallocAsync (PyTorch 2.0+): one cudaMallocAsync call, then the
        # message with cudaMemGetInfo's free; free at least the request is the allocator's refusal, not a full device
        return "fragmentation", "medium", [ASYNC_ROOM_CAUSE.format(req=f"{numbers['requested_bytes'] / MiB:,.2f} MiB",
                                                                   free=f"{numbers['free_bytes'] / GiB:.2f} GiB")]
    outside = async_outside(numbers) if sig.id == "torch_allowed_memory" else None
    if outside is not None:
        # c10/cuda/CUDAMallocAsyncAllocator.cpp mallocAsync: under the fraction's limit, cudaMallocAsync itself found
        # no room; what is neither free nor this process's PyTorch allocations could have held the request
        total, alloc, req = numbers["total_bytes"], numbers["allocated_bytes"], numbers["requested_bytes"]
        return "other_process", "medium", [
            f"{outside / GiB:.2f} GiB of the {total / GiB:.2f} GiB device is held outside this process's PyTorch "
            f"allocations ({alloc / GiB:.2f} GiB): another program on the GPU, or this process's CUDA context and "
            f"non-PyTorch memory; the {req / MiB:,.2f} MiB requested would have fit in it"]
    ub = (settings or {}).get("n_ubatch")
    if sig.engine == "llama.cpp" and isinstance(ub, int) and ub > LLAMA_DEFAULT_UBATCH:
        return "compute", "low", [f"no line names the buffer; the micro-batch is {ub:,} tokens (-ub), "
                                  f"{ub / LLAMA_DEFAULT_UBATCH:g} x the default {LLAMA_DEFAULT_UBATCH}: the compute "
                                  "buffer grows with it, the weights and the KV cache do not"]
    return "unknown", "low", []


# V0 executor/multiproc_worker_utils.py _run_worker_process: "Exception in worker %s while processing method %s"
# names the worker method that raised (worker/worker.py): load_model builds and loads the weights, initialize_cache
# allocates the KV cache (determine_num_available_blocks, the profile run, is read by its own progress lines)
_V0_WORKER_METHOD = re.compile(r"while\s{1,4}processing\s{1,4}method\s{1,4}(load_model|initialize_cache)\b")
_V0_METHOD_STAGE = {"load_model": "weights", "initialize_cache": "kv_cache"}


def _split_at_message(anchor: Event) -> tuple[str, str]:
    """The failure's line cut where its message ends: (the text up to it, the text after it). A log whose line ends
    were lost runs the steps after the failure (a console printing newest first) onto the same line."""
    line = anchor.line.text
    ms = list(anchor.sig.regex().finditer(line))
    return (line[: ms[-1].end()], line[ms[-1].end():]) if ms else (line, "")


def _after_message(doc: Text, anchor: Event) -> str:
    """What follows the failure's line within 2 lines' worth of bytes, its whitespace (a re-wrap's line ends)
    folded to single spaces, so that a progress line cut at a space still reads whole."""
    return re.sub(r"\s+", " ", doc.slice(anchor.line.start + len(anchor.line.text),
                                          anchor.line.start + 2 * MAX_LINE_AFTER))


# what follows an AMD driver's refused command submission (radv_cs_enomem): llama.cpp's loader reporting the
# exception of load_tensors (src/llama.cpp llama_model_load: "error loading model: vk::Queue::submit:
# ErrorDeviceLost": the weights' upload), or a graph being run (ggml-backend.cpp ggml_backend_sched_graph_compute,
# ggml-vulkan.cpp ggml_vk_synchronize in the abort's backtrace; llama-context decode)
_RADV_AFTER = (("error loading model", "weights"), ("failed to load model", "weights"),
               ("graph_compute", "compute"), ("llama_decode", "compute"), ("decode() failed", "compute"),
               ("update_slots", "compute"))
# ggml-vulkan.cpp ggml_vk_print_gpu_info: "ggml_vulkan: 0 = <name> (RADV ...) | uma: 1 | ..." (the device shares
# system memory: an APU)
_VK_UMA = re.compile(r"\|\s{0,4}uma: ?1\b")
RADV_UMA_CAUSE = ("the Vulkan device is an APU (ggml_vulkan 'uma: 1'): its buffers live in the GTT share of system "
                  "memory, which the kernel bounds (amdgpu.gttsize; TTM's ttm.pages_limit, half of RAM by default, "
                  "drivers/gpu/drm/ttm/ttm_tt.c) below what the device reports free")


_RADV_TEXT = re.compile(r"Not\s{1,4}enough\s{1,4}memory\s{1,4}for\s{1,4}command\s{1,4}submission")


def _radv_stage(doc: Text, e: Event) -> tuple[str, str, list[str]]:
    """The stage of an AMD driver's refused command submission: what llama.cpp was doing, by what follows it (the
    first of _RADV_AFTER; before it, the last start-up step), the refusal itself naming no buffer."""
    tail = doc.slice(e.line.start, e.line.start + (STAGE_WINDOW + 4) * MAX_LINE_AFTER)
    m = _RADV_TEXT.search(tail)
    tail = tail[m.end():] if m else tail
    why: list[str] = []  # the refusal's own cause is the signature's (causes_for)
    if _VK_UMA.search(doc.slice(max(0, e.line.start - NEAR_REGION), e.line.start + 4 * MAX_LINE_AFTER)):
        why.append(RADV_UMA_CAUSE)
    hits = [(tail.find(k), st) for k, st in _RADV_AFTER if k in tail]
    if hits:
        hit = min(hits)[1]
        return hit, "high" if hit == "weights" else "medium", why
    st = stage_from_markers(doc.slice(max(0, e.line.start - 400_000), e.line.start))
    if st:
        return st, "low", [*why, "placed by the last start-up step the log printed before the failure"]
    return "unknown", "low", why


# ExLlamaV2 / V3 tracebacks, by the innermost exllama file: cache.py (ExLlamaV2CacheBase.create_state_tensors, the
# K/V tensors of max_seq_len tokens), device.py (ExLlamaV2DeviceContext.prepare: the device's scratch, reserved
# once, when model.py get_device_context first finds the device's context not ready, i.e. as the model's first
# module is loaded onto that device), the loaders (model.py load / load_gen, module.py load_weight, linear.py load)
_EXL_FILE = re.compile(r"exllamav[23][/\\](?:[\w.-]{1,60}[/\\]){0,3}(\w{1,40})\.py\b")
_EXL_LOADS = ("load", "load_gen", "load_weight", "load_multi", "load_autosplit", "load_tp")


def _exllama_stage(around: str, numbers: dict[str, Any]) -> tuple[str, str, list[str]] | None:
    files = _EXL_FILE.findall(around)
    if not files:
        return None
    last = files[-1]
    if last == "cache":
        return "kv_cache", "high", ["the traceback ends in ExLlama's cache.py (the cache's K/V tensors, sized for "
                                    "max_seq_len tokens)"]
    if last == "device":
        total, free = numbers.get("total_bytes"), numbers.get("free_bytes")
        held = numbers.get("this_process_bytes") or numbers.get("allocated_bytes")
        who = "this process already held"
        if not held and total and free is not None:
            held, who = total - free, "the device already had"
        if total and held and held >= total // 2:
            return "other_process", "medium", [
                f"ExLlamaV2 reserves a device's scratch (device.py ExLlamaV2DeviceContext.prepare) once, when the "
                f"model's first module is loaded onto it: {who} {held / GiB:.2f} GiB of the {total / GiB:.2f} GiB "
                "device in use before any of this model's weights were there, so a model (or its cache) loaded "
                "before holds it: a model switch while the previous one is still loaded or serving"]
        return "compute", "medium", ["the traceback ends in ExLlama's device.py: the device's scratch (the "
                                     "forward's working buffer), reserved as the model loads"]
    names = frames(around)
    if any(n in _EXL_LOADS for n in names):
        return "weights", "medium", ["the traceback runs through ExLlama's module loading (load / load_weight)"]
    return None


# text_generation_server/models/flash_causal_lm.py FlashCausalLM.warmup: `except torch.cuda.OutOfMemoryError as e:
# raise RuntimeError("Not enough memory to handle N prefill tokens. You need to decrease
# `--max-batch-prefill-tokens`") from e` (TGI 1.x to 3.x; some versions `except Exception: raise ...` without
# `from`): in a TGI log a PyTorch out-of-memory chained into another exception is that warm-up's, its own message
# cut from the paste
_CHAINED = ("The above exception was the direct cause of the following exception",
            "During handling of the above exception, another exception occurred")
TGI_WARMUP_CHAIN_CAUSE = ("the out-of-memory is chained into the exception after it, as TGI's warm-up re-raises it "
                          "(flash_causal_lm.py warmup: 'Not enough memory to handle N prefill tokens'): the prefill "
                          "batch of --max-batch-prefill-tokens tokens ran out")


def _tgi_warmup_chain(doc: Text, anchor: Event) -> bool:
    after = doc.slice(anchor.line.start, anchor.line.start + 8 * MAX_LINE_AFTER)
    if not any(k in after for k in _CHAINED):
        return False
    return host_of(doc.slice(0, 200_000)) == "tgi"


# py_executor_creator.py ExecutorMemoryType's memory_type_friendly_names (the "(temporary for KV cache size
# estimation)" suffix cut): the weights, the KV cache (its first, estimation-sized pool included: sized by
# max_num_tokens) and the runtime's working buffers
_TRTLLM_COMPONENT_STAGE = {"Model": "weights", "Draft model for speculative decoding": "weights",
                           "KV cache": "kv_cache", "Initial KV cache": "kv_cache", "Sampler": "compute",
                           "Drafter": "compute", "Additional executor resources": "compute",
                           "Model resources created during usage": "compute"}


# The phases that run after the KV cache is allocated (vLLM v1/worker/gpu_worker.py compile_or_warm_up_model:
# capture_model, then _dummy_sampler_run "after capture_model on purpose"; SGLang model_runner.py init_cuda_graphs
# after init_memory_pool): the frames and progress lines that show each
_PHASE_FRAMES = (("_dummy_sampler_run", "sampler warm-up"), ("capture_model", "CUDA graph capture"),
                 ("capture_one_batch_size", "CUDA graph capture"), ("init_cuda_graphs", "CUDA graph capture"),
                 ("cuda_graph_runner", "CUDA graph capture"), ("capture_end", "CUDA graph capture"),
                 ("capture_begin", "CUDA graph capture"),  # torch/cuda/graphs.py, under vLLM's compiled backends
                 # torch/cuda/graphs.py `graph`, the context manager that captures: vLLM V1's CUDAGraphWrapper
                 # (compilation/cuda_graph.py __call__) enters it only for a shape not yet captured, after
                 # compilation/monitor.py validate_cudagraph_capturing_enabled(), which raises once capture_model
                 # has closed the capture window
                 ("torch.cuda.graph", "CUDA graph capture"),
                 # model_executor/warmup/kernel_warmup.py kernel_warmup (gpu_worker.py compile_or_warm_up_model,
                 # after the KV cache): deep_gemm_warmup.py runs each FP8 GEMM at its largest M, its scratch tensors
                 # (torch.empty((MAX_M, n))) in what the KV cache left
                 ("deep_gemm_warmup", "kernel warm-up"),
                 ("_gemm_nt_contiguous_warmup", "kernel warm-up"),
                 # the model runner V2 (v1/worker/gpu/warmup.py warmup_kernels, from gpu_worker.py
                 # compile_or_warm_up_model after the KV cache, 2026): a prefill, then decode steps, of
                 # min(max_num_seqs, max_num_batched_tokens // (decode_query_len + 1)) dummy requests through
                 # execute_model and sample_tokens; its activations grow with that count, no CUDA graph is captured
                 ("warmup_kernels", "warm-up batch"))
_PHASE_MARKERS = (("Capturing CUDA graph", "CUDA graph capture"), ("Capturing cudagraphs", "CUDA graph capture"),
                  ("Capturing the model for CUDA graphs", "CUDA graph capture"),
                  ("Capture cuda graph begin", "CUDA graph capture"), ("Capturing batches", "CUDA graph capture"),
                  ("Graph capturing finished", "sampler warm-up"))  # vLLM V1 warms the sampler up next


# the phases above that run at start-up, after the KV cache, each allocating outside the budget that sized it ("sampling"
# is at serving time)
_START_PHASES = ("CUDA graph capture", "sampler warm-up", "kernel warm-up", "warm-up batch", "symmetric memory pool")


# TGI's capture frames: its own warm-up step and torch/cuda/graphs.py's capture calls under it
_TGI_CAPTURE_FRAMES = ("cuda_graph_warmup", "capture_begin", "capture_end", "torch.cuda.graph")


_SERVING = ("Application startup complete", "Starting vLLM API server", "Avg prompt throughput",
            "The server is fired up", "Prefill batch", "Decode batch", "KV cache usage")


def _phase(doc: Text, anchor: Event, incident: list[Event], around: str, runner: str | None) -> str | None:
    """The start-up phase after the KV cache that ran out, where the text shows it: the engine's own message, the
    traceback's frames, then the last progress line before the failure (vLLM and SGLang; TGI by its frames)."""
    if runner == "tgi":
        # TGI's warm-up (server/text_generation_server/models/flash_causal_lm.py FlashCausalLM.warmup, CUDA graphs
        # from 1.4 on): the KV blocks are sized from free memory less (1 - --cuda-memory-fraction) of the device, then
        # cuda_graph_warmup captures one graph per size in CUDA_GRAPHS (launcher --cuda-graphs) in what is left; only
        # a capture frame places it (TGI prints no progress line per graph)
        names = frames(around)
        hit = any(k in n for n in names for k in _TGI_CAPTURE_FRAMES)
        return "CUDA graph capture" if hit and anchor.sig.stage in (None, "compute") else None
    if runner not in ("vllm", "sglang"):
        return None
    if anchor.sig.id == "vllm_sampler_warmup" or any(e.sig.id == "vllm_sampler_warmup" for e in incident):
        return "sampler warm-up"
    if anchor.sig.id == "sglang_capture_oom":
        return "CUDA graph capture"
    if anchor.sig.stage not in (None, "compute"):
        return None
    names = frames(around)
    if runner == "sglang" and (any("prealloc_symmetric_memory_pool" in n for n in names)
                               or "prealloc_symmetric_memory_pool" in around
                               or "Pre-allocating symmetric memory pool" in doc.slice(anchor.line.start - 400_000,
                                                                                      anchor.line.start)):
        # model_runner.py ModelRunner.initialize's last step (after init_memory_pool and the CUDA graphs, with
        # --enable-symm-mem): torch.empty of SGLANG_SYMM_MEM_PREALLOC_GB_SIZE GiB in the symmetric-memory pool, in
        # what mem_fraction_static left; its name next to the failure (a frame, or quoted) places it
        return "symmetric memory pool"
    for key, phase in _PHASE_FRAMES:
        if any(key in n for n in names):
            return phase
    # the traceback in vLLM's sampler (v1/sample/: the top-k/top-p sort, logprobs over the batch's logits; V0
    # model_executor/layers/sampler.py) outside the warm-up: sampling while serving, its tensors one row per request
    serving = "sampling" if runner == "vllm" and ("/v1/sample/" in around or "layers/sampler.py" in around) else None
    head, tail = _split_at_message(anchor)
    before = doc.slice(anchor.line.start - 400_000, anchor.line.start) + "\n" + head
    best, at = None, -1
    for key, phase in _PHASE_MARKERS:
        p = before.rfind(key)
        if p > at:
            best, at = phase, p
    if best is None:
        # none before: a paste that put the error first and the log after it (a wrapper's "error message:" block
        # above the engine's lines), read as _stage_read reads the step named right after the failure
        after = doc.slice(anchor.line.start, anchor.line.start + STAGE_WINDOW * MAX_LINE_AFTER)
        after = tail + "\n" + "\n".join(after.split("\n")[1: STAGE_WINDOW + 1])
        if not any(k in after for k in _SERVING):
            hit = min(((after.find(k), phase) for k, phase in _PHASE_MARKERS if k in after), default=None)
            if hit is None:  # the same lines, the failure's own message re-wrapped over many of them
                moved = _after_message(doc, anchor)
                hit = min(((moved.find(k), phase) for k, phase in _PHASE_MARKERS if k in moved
                           and not any(s in moved for s in _SERVING)), default=None)
            if hit and not (hit[1] == "sampler warm-up" and runner != "vllm"):
                return hit[1]
        return serving
    # (Ray folds and reorders the workers' lines: only a new start-up's first step puts the marker in the past)
    later = max(before.rfind(k) for k in ("Starting to load model", "Load weight begin",
                                            "Loading safetensors checkpoint shards"))
    if later > at:  # a later start-up step: the marker belongs to an earlier start-up
        return serving
    # the server came up after it: the failure is at serving time, not in a start-up phase
    if any(before.rfind(k) > at for k in _SERVING):
        return serving
    if best == "sampler warm-up" and runner != "vllm":
        return None
    return best


def _post_kv_cause(phase: str, runner: str | None, buffers: dict[str, Any]) -> list[str]:
    """What the log says the engine had done before the phase that ran out."""
    who = {"vllm": "vLLM", "sglang": "SGLang", "tgi": "TGI"}.get(runner or "", runner or "the engine")
    kv = buffers.get("kv_cache_in_use_bytes") or buffers.get("available_kv_cache_bytes")
    tokens = buffers.get("kv_cache_tokens") or buffers.get("max_total_num_tokens")
    had = ""
    if kv is not None and kv > 0 or tokens:
        parts = [f"{kv / GiB:.2f} GiB" if kv else None, f"{tokens:,} tokens" if tokens else None]
        had = " (" + ", ".join(p for p in parts if p) + ")"
    if phase == "sampling":  # at serving time, not a start-up phase
        return [f"{who} ran out sampling a running batch (the sort of its logits for top-k / top-p: batch x "
                "vocabulary, in what the KV cache leaves of the budget)"]
    what = {"sampler warm-up": "the sampler warm-up (its dummy batch of max_num_seqs requests)",
            "CUDA graph capture": "CUDA-graph capture",
            "kernel warm-up": "the DeepGEMM kernels' warm-up (scratch tensors for their largest batch)",
            "warm-up batch": "the warm-up batch (warmup_kernels: a prefill and decode steps of up to max_num_seqs "
                             "dummy requests)",
            "symmetric memory pool": "the symmetric-memory pool's preallocation (SGLANG_SYMM_MEM_PREALLOC_GB_SIZE "
                                     "GiB, the start-up's last step)"}[phase]
    budget = {"vllm": "gpu_memory_utilization", "sglang": "mem_fraction_static",
              "tgi": "--cuda-memory-fraction"}.get(runner or "", "memory")
    return [f"{who} had allocated its KV cache{had}; then {what} ran out: it runs outside the {budget} budget "
            "that sized the KV cache, in what that budget leaves"]


def _sglang_limit(numbers: dict[str, Any], settings: dict[str, Any], buffers: dict[str, Any]
                  ) -> tuple[str, str, list[str]]:
    """Which limit SGLang's "Input length ... exceeds the maximum allowed length (M tokens)" is: M =
    min(context_length, max_total_num_tokens) - 6 (tp_worker.py max_req_len, max_req_input_len)."""
    m = numbers.get("max_req_input_len")
    if m is None:
        return "kv_cache", "low", []
    limit = m + 6
    numbers["request_limit_tokens"] = limit
    ctx = settings.get("context_length")
    pool = buffers.get("max_total_num_tokens") or settings.get("max_total_num_tokens")
    if pool is not None and pool == limit and (ctx is None or ctx > pool):
        numbers["kv_capacity_tokens"] = pool
        return "kv_cache", "high", [f"not an out-of-memory: the KV pool holds {pool:,} tokens (max_total_num_tokens), "
                                    f"fewer than the context{f' ({ctx:,})' if ctx else ''}, so SGLang aborts prompts "
                                    f"of {m:,} tokens or more"]
    if ctx is not None and ctx == limit and (pool is None or pool > ctx):
        return "not_oom", "high", [f"the prompt is longer than the context length ({ctx:,} tokens): not a memory "
                                   "limit; a shorter input, --allow-auto-truncate, or a model with a longer context"]
    return "kv_cache", "medium", [f"not an out-of-memory: the limit is min(context_length, max_total_num_tokens) - 6 "
                                  f"= {m:,}, so either --context-length is {limit:,} or the KV pool holds {limit:,} "
                                  "tokens (max_total_num_tokens, printed at start-up); a pool shorter than the "
                                  "model's context is the usual cause"]


def _refused_with_room(sig: Signature, buffers: dict[str, Any]) -> str | None:
    """llama.cpp's memory breakdown (llama_memory_breakdown_print) of the device the failure names projects all of
    its buffers within the free memory it measured, yet the driver refused an allocation: a limit on one allocation
    (the driver's maximum allocation size), not the device's memory."""
    rows = buffers.get("breakdown") or {}
    if sig.engine != "llama.cpp" or sig.stage is not None or not sig.backend:
        return None
    for dev, r in rows.items():
        if dev.startswith(sig.backend) and 0 < r["self"] <= r["free"]:
            return (f"llama.cpp's breakdown projects {r['self'] // MiB:,} MiB on {dev} ({r['model'] // MiB:,} MiB "
                    f"of it the model's weights) with {r['free'] // MiB:,} MiB free: the driver refused one "
                    "allocation with room to spare, a limit on a single allocation, not the device's memory")
    return None


def _frame_hint(names: list[str], stage: str) -> str:
    for key, st in FRAME_STAGES:
        if st == stage:
            for n in names:
                if key in n:
                    return f"`{n}` ({stage})"
    return stage


def _torch_stage(n: dict[str, Any]) -> tuple[str, str, list[str]] | None:
    req, total, free = n.get("requested_bytes"), n.get("total_bytes"), n.get("free_bytes")
    res_un = n.get("reserved_unallocated_bytes")
    mx, other = n.get("max_allowed_bytes"), n.get("other_allocations_bytes")
    if mx and other is not None and other >= mx // 2:  # MPS: unified memory held outside PyTorch's allocator
        return "other_process", "medium", [f"{other / GiB:.2f} GiB of the {mx / GiB:.2f} GiB allowed is held by "
                                           "other allocations (other processes, Metal buffers) in unified memory"]
    if req is not None and total and req >= GARBAGE_FACTOR * total:
        # c10/cuda/CUDACachingAllocator.cpp prints the size it was asked for: a thousand times the device (hundreds
        # of TiB and beyond) is no tensor a model makes but a size computed wrongly (an overflowed or uninitialised
        # shape), which the allocator refuses like any other
        return "buffer_limit", "high", [GARBAGE_CAUSE]
    alloc = n.get("allocated_bytes")
    if alloc and total and alloc > total:
        # before the request's own size: allocations past the device already succeeded (microsoft/WSL#11050: a first
        # 30 GiB tensor on a 15.99 GiB card, the second refused), so a request over the device is no shape error here
        return "unknown", "low", [SYSMEM_LENT_CAUSE.format(alloc=alloc / GiB, total=total / GiB)]
    if req is not None and total and req > total:
        return "buffer_limit", "high", ["one allocation is larger than the whole device: a shape or size error, "
                                        "or the device exposes less than expected"]
    others = other_processes(n)
    if others:
        held = sum(p["bytes"] for p in others)
        if total and held >= max(GiB, total // 10):
            who = ", ".join(f"PID {p['pid']} ({p['bytes'] / GiB:.2f} GiB)" for p in others[:4])
            return "other_process", "high", [f"other processes hold {held / GiB:.2f} GiB: {who}"]
    # held outside this process's PyTorch: total - free - (this process's use, or what PyTorch reserved)
    mine = n.get("this_process_bytes") or n.get("reserved_bytes")  # never guessed from the new form's parts
    if total and free is not None and mine is not None and not others:
        outside = total - free - mine
        if outside >= max(2 * GiB, total * 15 // 100):
            return "other_process", "medium", [f"{outside / GiB:.2f} GiB of the {total / GiB:.2f} GiB device is held "
                                               "outside this process's PyTorch (another process, or non-PyTorch "
                                               "memory)"]
    if res_un is not None and req is not None and res_un >= req and res_un >= GiB and (free is None or free < req):
        return "fragmentation", "high", [f"{res_un / GiB:.2f} GiB is reserved by PyTorch but unallocated, more "
                                         f"than the {req / MiB:.2f} MiB requested: the free blocks are fragmented"]
    return None


# llama-server's prompt cache as its log shows it ("updating prompt cache", "prompt_save:  - saving prompt with
# length N, total state size = X MiB") or as a text names it (the prompt-cache entries, its --cache-ram bound)
# ggml/src/ggml-backend-reg.cpp load_backend: "%s: loaded %s backend from %s" for each backend library loaded
_LOAD_BACKEND = re.compile(r"load_backend: loaded (\w{1,20}) backend from ([^\n]{1,400})")
TWICE_LINES = 12  # lines apart at most: one process's loads (Ollama's discovery runs each library in its own process)


def _backend_loaded_twice(region: str) -> tuple[str, list[str]] | None:
    """A GPU backend loaded from two different libraries in one start-up (ollama#11388: a stale lib/ollama/ggml-cuda.dll
    beside lib/ollama/cuda_v12/ggml-cuda.dll, ollama#11211): -> (backend, [paths]) or None."""
    last: dict[str, tuple[int, str]] = {}
    for m in _LOAD_BACKEND.finditer(region):
        name, path = m.group(1), m.group(2).strip()
        line = region.count("\n", 0, m.start())
        if name != "CPU" and name in last and last[name][1] != path and line - last[name][0] <= TWICE_LINES:
            return name, [last[name][1], path]
        last[name] = (line, path)
    return None


_PROMPT_CACHE = re.compile(r"prompt_save:|updating prompt cache|prompt-cache entries|LLAMA_ARG_CACHE_RAM")


# tools/mtmd/clip.cpp: the projector's lines around its warm-up reservation (the warm-up's own line before the
# allocation, its compute-buffer report after; alloc_compute_meta, reserve_compute_meta in later builds)
_PROJECTOR_BEFORE = ("warmup with image size", "clip_ctx: CLIP using")
_PROJECTOR_AFTER = ("alloc_compute_meta:", "reserve_compute_meta:")


# a request's image being encoded right before the failure: llama-server's server_tokens::process_chunk logs
# "processing image..." (SRV_INF, tools/server/utils.hpp, 2025-05+) and mtmd-helper.cpp "encoding image slice..."
_IMAGE_ENCODE_BEFORE = ("processing image...", "encoding image slice")


def _image_encode(doc: Text, anchor: Event) -> bool:
    before = doc.slice(anchor.line.start - 4 * MAX_LINE_AFTER, anchor.line.start).split("\n")[-4:]
    return any(k in line for line in before for k in _IMAGE_ENCODE_BEFORE)


def _projector_warmup(doc: Text, anchor: Event) -> bool:
    before = doc.slice(anchor.line.start - 4 * MAX_LINE_AFTER, anchor.line.start).split("\n")[-6:]
    after = doc.slice(anchor.line.start, anchor.line.start + 4 * MAX_LINE_AFTER).split("\n")[1:5]
    return (any(k in line for line in before for k in _PROJECTOR_BEFORE)
            or any(k in line for line in after for k in _PROJECTOR_AFTER))


def _ollama_reason(reason: str) -> tuple[str, str, list[str]]:
    r = reason.lower()
    # ggml-cuda.cu's CUDA_CHECK text for cudaErrorInvalidDeviceFunction / hipErrorInvalidDeviceFunction, carried into
    # Ollama's error (llm/status.go keeps the runner's stderr from "CUDA error" on): no kernel for this GPU; read
    # first, as the function it names (ggml_cuda_compute_forward) would read as a stage
    if "invalid device function" in r:
        return "not_oom", "high", ["the runner's GPU build has no kernels for this device's architecture ('invalid "
                                   "device function'): not memory"]
    # Windows NTSTATUS (ntstatus.h) STATUS_ENTRYPOINT_NOT_FOUND 0xC0000139 / STATUS_DLL_NOT_FOUND 0xC0000135 as the
    # runner's exit status (llm/server.go "llama runner process has terminated: exit status 0x..."): a GPU library
    # of another version than the runner was built against (likelovewant/ollama-for-amd#41: ROCm 5.7 libraries
    # for a HIP 6.1.2 build), before any memory is asked for
    if "0xc0000139" in r or "0xc0000135" in r:
        return "not_oom", "high", ["exit status 0xc0000139 / 0xc0000135 is Windows' entry point / DLL not found: "
                                   "the runner's GPU libraries are of another version than it was built for (the "
                                   "ROCm / CUDA libraries next to it), not memory"]
    if "kv cache" in r:
        return "kv_cache", "high", []
    if "compute" in r:
        return "compute", "high", []
    # before "unable to allocate": the weights' load names the buffer type that failed, and a host one is RAM.
    # ggml-backend.cpp ggml_backend_cpu_buffer_type_alloc_buffer: the host allocation of a CPU buffer failed;
    # ggml-cuda.cu ggml_backend_cuda_host_buffer_type_alloc_buffer: a pinned "CUDA_Host" buffer falls back to a CPU
    # buffer when cudaMallocHost fails, so its failure is the CPU buffer's, host RAM (likewise ROCm_Host)
    if "cpu_buffer_type_alloc_buffer" in r or "_host buffer" in r:
        return "host_ram", "high", ["llama.cpp could not allocate a buffer in host RAM "
                                    "(ggml_backend_cpu_buffer_type_alloc_buffer)"]
    if "unable to allocate" in r or "error loading model" in r:
        return "weights", "high", []
    # Go's runtime (runtime/signal_unix.go sigpanic -> panicmem): a nil or wild pointer in the runner's Go code
    # ("panic: runtime error: invalid memory address or nil pointer dereference", SIGSEGV / 0xc0000005): a crash,
    # not an allocation that failed (ollama#11280: a GGUF's vision tower the engine does not support)
    if "invalid memory address" in r or "nil pointer dereference" in r:
        return "not_oom", "high", ["the runner crashed on a nil pointer (Go's 'invalid memory address or nil pointer "
                                   "dereference'): a bug or a model file the engine does not support, not memory"]
    if "signal: terminated" in r:
        return "not_oom", "medium", ["the runner was stopped with SIGTERM (Ollama's load timeout or a shutdown), "
                                     "not killed for memory"]
    if "0xc000001d" in r:
        return "not_oom", "high", ["exit status 0xc000001d is an illegal instruction: the CPU lacks an instruction "
                                   "set the runner was built for (AVX)"]
    if "signal: killed" in r:
        return "host_ram", "medium", ["the runner was killed (SIGKILL): most often the kernel's OOM killer"]
    # llm/status.go keeps the runner's last stderr line from its first error prefix ("error:", "CUDA error",
    # "cudaMalloc failed", ...): "cudaMalloc failed" is then ggml-cuda's buffer allocation
    # (ggml_backend_cuda_buffer_type_alloc_buffer), the weights, the KV cache or the compute buffer, its line cut off
    if "cudamalloc failed" in r:
        return "unknown", "low", ["a ggml CUDA buffer could not be allocated (`cudaMalloc failed`): the weights, the "
                                  "KV cache or the compute buffer; the runner's line that named it is cut off here "
                                  "(`journalctl -u ollama` shows the lines before it)"]
    if "out of memory" in r:
        return "compute", "medium", ["a CUDA allocation failed while the runner was evaluating (its memory pool)"]
    return "unknown", "low", []


# a HIP build's fault: ggml-cuda's "ROCm error" (ggml-cuda.cu, CUDA_CHECK under GGML_USE_HIP), HIP's own error names,
# PyTorch's ROCm message ("Search for `hipErrorIllegalAddress'"; its debugging hint AMD_SERIALIZE_KERNEL=3, what
# torch/utils/hipify/cuda_to_hip_mappings.py turns CUDA_LAUNCH_BLOCKING=1 into): HIP reads AMD_SERIALIZE_KERNEL=3
# (wait for each kernel to finish) where CUDA reads CUDA_LAUNCH_BLOCKING=1
HIP_WINDOW = 4_000  # bytes either side of the fault's line: its own message block
_HIP_FAULT = re.compile(r"ROCm error|HIP error|hipError|AMD_SERIALIZE_KERNEL")
_HIP_FAULT_FIXES = (Fix(summary="AMD_SERIALIZE_KERNEL=3 (HIP's counterpart of CUDA_LAUNCH_BLOCKING=1) to find the "
                                "kernel; update the engine or ROCm; report the bug",
                        env=(("AMD_SERIALIZE_KERNEL", "3"),)),)


def _without_oom(doc: Text, evs: list[Event], recognised: tuple[str, ...], predict: bool = True) -> Diagnosis:
    look = [e for e in evs if e.role == "not_oom" and e.sig.id not in NOTICES]
    notices = [e for e in evs if e.role == "not_oom" and e.sig.id in NOTICES]
    settings, buffers = read_log(doc, 0, SETTINGS_REGION)

    def none_by(e: Event, confidence: str = "high") -> Diagnosis:
        host = host_of(doc.slice(0, 200_000))
        fixes, backend = _canned(e), e.sig.backend
        if e.sig.id == "illegal_memory_access" and _HIP_FAULT.search(doc.slice(max(0, e.line.start - HIP_WINDOW),
                                                                               e.line.start + HIP_WINDOW)):
            backend, fixes = "ROCm", _HIP_FAULT_FIXES
        return Diagnosis(engine=host if e.sig.engine in HOSTED else e.sig.engine, stage="not_oom", confidence=confidence,
                         numbers=dict(e.numbers), settings=settings, causes=e.sig.causes, fixes=fixes,
                         signature=e.sig.id, line=e.line.no, evidence=e.line.text.strip()[:400], recognised=recognised,
                         backend=backend, host=host if e.sig.engine not in (*HOSTED, host) else None,
                         engine_version=_version(settings, e.sig.engine), buffers=buffers)

    if look:
        return none_by(look[0])
    seen = [w for w in GENERIC_OOM if w.encode() in doc.b[:SETTINGS_REGION]]
    warns = [e for e in evs if e.role == "warn"]
    causes = []
    if seen:
        causes.append(f"the text mentions {', '.join(repr(w) for w in seen[:3])} but no message oomkit knows")
    for e in warns[:3]:
        causes.append(f"warning seen: {e.line.text.strip()[:160]}")
    if not causes:
        causes.append("no out-of-memory message oomkit knows")
    host = host_of(doc.slice(0, 200_000))
    if host == "vllm":
        tail = doc.slice(max(0, len(doc) - 60_000), len(doc))
        cut = _kv_check_frames(tail)
        if cut and _cut_in_traceback(tail):
            return _kv_check_cut(cut, settings, buffers, recognised, predict)
    if host in ("vllm", "sglang"):  # a traceback cut before its message, in a phase after the KV cache
        tail = _unwrap_prefixed(doc.slice(max(0, len(doc) - 60_000), len(doc)))
        # a frame's name, or the call on the last line of a cut traceback ("self.model_runner.capture_model()")
        hit = next(((k, ph) for k, ph in _PHASE_FRAMES if k + "(" in tail or any(k in n for n in frames(tail))),
                   None) if 'File "' in tail else None
        if hit and not warns and _cut_in_traceback(tail):
            return _cut_after_kv(hit, host, settings, buffers, recognised, predict)
        if hit:
            causes.append(f"the traceback runs through `{hit[0]}` ({hit[1]}, after the KV cache is allocated) but "
                          "the exception's own line is not in the text: paste the lines that follow it")
        joined = _unwrap_logged(tail)
        build = next((k for k in _BUILD_FRAMES if any(k in n for n in frames(joined))), None) \
            if 'File "' in tail and not hit else None
        if build and seen and not warns and _cut_in_traceback(joined):
            return _cut_in_build(build, host, settings, buffers, recognised, predict)
        joined = _join_frames(joined)
        if 'File "' in tail and not hit and not build and seen and not warns and _cut_in_traceback(joined):
            if host == "vllm" and in_profile_run(joined):
                return _cut_in_profile(joined, settings, buffers, recognised, predict)
            step = next((k for k in _SGLANG_STEP_FRAMES if any(k in n for n in frames(joined))), None) \
                if host == "sglang" else None
            if step:
                return _cut_in_step(step, settings, buffers, recognised, predict)
    if host == "transformers" and seen and not warns:
        tail = _join_frames(doc.slice(max(0, len(doc) - 60_000), len(doc)))
        st = stage_from_frames(frames(tail)) if 'File "' in tail else None
        if st and _cut_in_traceback(tail):
            return _cut_in_frames(st, tail, settings, buffers, recognised, predict)
    if notices and not seen and not warns and not _EXC_LINE.search(doc.slice(0, SETTINGS_REGION)) \
            and 'File "' not in doc.slice(0, SETTINGS_REGION):
        # only an engine's routine notices (--fit's first projection, vLLM's capture notices): nothing failed
        return none_by(notices[0], "medium")
    over = vulkan_overread(buffers)
    if over and not warns and not seen:
        # no failure line, but the device list shows the split's basis wrong (fixes.vulkan_overread): the layers
        # llama.cpp gave that card by its over-read free memory are what it cannot hold
        d = Diagnosis(engine="llama.cpp", stage="weights", confidence="low", settings=settings,
                      numbers={"device_free_bytes": over[0][2], "device_total_bytes": over[0][3]},
                      causes=(_overread_cause(over[0]),), recognised=recognised, backend="Vulkan", buffers=buffers,
                      host=host if host not in (None, "llama.cpp") else None,
                      engine_version=_version(settings, "llama.cpp"))
        quiet = dataclasses.replace(BY_ID["ggml_alloc_tensor_range"], causes=(), fixes=())
        return Diagnosis(**{**d.__dict__, "fixes": fixes_for(d, quiet, predict=predict)})
    return Diagnosis(engine=warns[0].sig.engine if warns else host, stage="unknown", confidence="low",
                     numbers=dict(warns[0].numbers) if warns else {},  # a warning's own figures
                     settings=settings, causes=tuple(causes), recognised=recognised, host=None,
                     engine_version=_version(settings, warns[0].sig.engine if warns else host), buffers=buffers,
                     signature=warns[0].sig.id if warns else None, line=warns[0].line.no if warns else None)


def _overread_cause(over: tuple[str, str, int, int]) -> str:
    dev, name, free, card = over
    return (f"{dev} ({name}) " + VULKAN_OVERREAD_CAUSE.format(free=free // MiB, card=f"{card / GiB:.0f} GiB")
            + ": the Vulkan driver's memory budget counts memory beyond the card's own (on Windows, shared GPU "
              "memory in system RAM), and llama.cpp splits the layers in proportion to the free memory each device "
              "reports, so this card is given more weights than it holds")


_EXC_WORD = re.compile(r"(?:Error|Exception|Exit|Interrupt|Warning)\b|Traceback \(most recent")
_EXC_LINE = re.compile(r"\b[A-Z]\w{0,60}(?:Error|Exception)(?::|\s*$)", re.M)  # "RuntimeError: ...", any rank
_METAL_CODE = re.compile(r"\(0000000[0-9a-f]:kIO(?:GPU|Accel)CommandBufferCallbackError(\w{1,60})\)")
_VLLM_STEP_DUMP = "Dumping input data for V1 LLM engine"
# the engine died serving, not starting: v1/engine/core.py run_engine_core logs "EngineCore encountered a fatal
# error." (a start-up failure logs "EngineCore failed to start.") from run_busy_loop / _process_engine_step;
# v1/engine/exceptions.py EngineDeadError ("EngineCore encountered an issue"), raised to the API server's
# output_handler / get_output_async; V0 engine/multiprocessing MQEngineDeadError ("Engine loop is not running");
# V0 engine/async_llm_engine.py _log_task_completion (the request loop's task ended on an exception, AsyncEngineDeadError);
# v1/engine/core.py execute_model_with_error_logging's batch dump; the OpenAI server's request handlers logging a
# request's failure (entrypoints/openai/serving_chat.py chat_completion_stream_generator / _full_generator,
# serving_completion.py: their logger's "serving_chat.py:661]" prefix), which run only once the server answers;
# uvicorn's access line for an OpenAI route (uvicorn/protocols/http/h11_impl.py and httptools_impl.py RequestResponseCycle
# send: '%s - "%s %s HTTP/%s" %d', as entrypoints/openai/api_server.py serves /v1/chat/completions and
# /v1/completions, every vLLM release): the server had started and was answering requests
_OPENAI_ACCESS = r'"POST\s{1,4}/v1/(?:chat/)?completions\s{1,4}HTTP/[0-9.]{1,3}"\s{1,4}[0-9]{3}\b'
_VLLM_SERVING = re.compile(r"EngineCore\s{1,4}encountered\s{1,4}(?:a\s{1,4}fatal\s{1,4}error|an\s{1,4}issue)|"
                           r"EngineDeadError|Engine\s{1,4}loop\s{1,4}is\s{1,4}not\s{1,4}running|\bin\s{1,4}"
                           r"(?:run_busy_loop|_process_engine_step|execute_model_with_error_logging|get_output_async|"
                           r"output_handler)\b|\b_log_task_completion\b|AsyncEngineDeadError|"
                           r"\bserving_(?:chat|completion)\.py:[0-9]{1,5}\]|" + _OPENAI_ACCESS + "|"
                           + re.escape(_VLLM_STEP_DUMP))
_PROC_PREFIX = re.compile(r"\((?:Worker|VllmWorker|EngineCore|RayWorkerWrapper|APIServer)[\w ]{0,40}pid=[0-9]{1,9}")


def _unwrap_prefixed(tail: str) -> str:
    """A vLLM log hard-wrapped at the terminal's width ('.../vllm/model_exe' + newline + 'cutor/warmup/...'):
    where the workers' lines carry their process prefix ("(Worker_TP2_EP2 pid=405)"), a line without one is the
    previous line's remainder, joined back so its frame reads whole."""
    lines = tail.split("\n")
    if sum(1 for ln in lines if _PROC_PREFIX.match(ln)) < 3:
        return tail
    out: list[str] = []
    for ln in lines:
        if out and ln.strip() and not _PROC_PREFIX.match(ln) and _PROC_PREFIX.match(out[-1]) \
                and not ln.startswith((" ", "\t", "[", "(", "INFO", "WARNING", "ERROR", "Traceback")):
            out[-1] += ln
        else:
            out.append(ln)
    return "\n".join(out)
# vLLM v1/attention/ops/vit_attn_wrappers.py: the vision encoders' attention. vit_torch_sdpa_wrapper runs
# torch_sdpa_wrapper, one F.scaled_dot_product_attention per image (cu_seqlens), whose scores are the image's
# patches squared per head where SDPA has no fused kernel (ROCm, older GPUs): it grows with the image's pixels
_VIT_ATTN = ("vit_torch_sdpa_wrapper", "torch_sdpa_wrapper", "vit_flash_attn_wrapper", "flash_attn_maxseqlen_wrapper")
VIT_ATTN_CAUSE = ("the traceback runs through vLLM's vision-encoder attention (vit_attn_wrappers.py): one image's "
                  "attention over its patches, which grows with the square of the image's patch count")
_CARETS = re.compile(r"(?:^|\s)[\^~]{2,}[\s^~]*$")  # a caret line, after any process or log prefix
_FRAME_LINE = re.compile(r'File "[^"\n]{1,400}", line [0-9]{1,20}, in \w{1,100}')
_CUT_FRAME = re.compile(r'^(?:[^"\n]{0,120}\]|\([^)\n]{0,80}\))?\s{1,8}File "[^"\n]{0,400}$')  # a frame line cut in its path


def _cut_in_traceback(tail: str) -> bool:
    """The text ends inside a traceback: after its last frame only that frame's source line (or nothing) follows,
    with no exception named, there or anywhere in the tail (a traceback that goes on to an exception oomkit does not
    know is not a cut one, nor is one cut beside another rank's exception)."""
    if _EXC_LINE.search(tail):
        return False
    last = max(_FRAME_LINE.finditer(tail), key=lambda m: m.start(), default=None)
    if last is None:
        return False
    # (Python 3.11+ prints a line of carets under the source line: part of the frame, not a message)
    # (a frame line cut before its line number - 'File "/usr/.../vl' - ends a paste inside the next frame)
    rest = [ln for ln in tail[last.end():].split("\n")[1:] if ln.strip() and not _CARETS.search(ln)
            and not _CUT_FRAME.search(ln)]
    return len(rest) <= 1 and not any(_EXC_WORD.search(ln) for ln in rest)


def _cut_after_kv(hit: tuple[str, str], host: str, settings: dict[str, Any], buffers: dict[str, Any],
                  recognised: tuple[str, ...], predict: bool) -> Diagnosis:
    """A vLLM / SGLang traceback cut before its exception's line, in a phase that runs after the KV cache is
    allocated (CUDA-graph capture, the sampler warm-up): these phases allocate outside the budget that sized the KV
    cache, so what they raise is, in the usual case, PyTorch's out-of-memory (placed `compute`, confidence low, the
    same fixes as that message would get; the missing line is asked for)."""
    key, phase = hit
    why = [f"the traceback runs through `{key}` ({phase}, after the KV cache is allocated) but the exception's own "
           "line is not in the text: read as the out-of-memory this phase usually raises (it allocates outside the "
           "budget that sized the KV cache); paste the lines that follow it to confirm", *_post_kv_cause(phase, host,
                                                                                                       buffers)]
    d = Diagnosis(engine=host, stage="compute", confidence="low", settings=settings, recognised=recognised,
                  engine_version=_version(settings, host), buffers=buffers, phase=phase)
    return Diagnosis(**{**d.__dict__, "causes": tuple(why), "fixes": fixes_for(d, BY_ID["torch_cuda_oom"], predict)})


# the model's construction and weight loading, before any KV cache or profile run: vLLM model_loader
# (utils.py initialize_model / loader.py _initialize_model, models/utils.py init_vllm_registered_model, each
# model's load_weights) and SGLang model_loader/loader.py load_model's _initialize_model: the layers' parameters are
# allocated on the device as they are built
_BUILD_FRAMES = ("_initialize_model", "initialize_model", "init_vllm_registered_model", "load_weights")


_LOG_PREFIX = re.compile(r"^(?:\S{1,40}\s)?(?:ERROR|INFO|WARNING|DEBUG)\s[0-9]{2}-[0-9]{2}\s[0-9:]{8}\s\[[\w./-]{1,80}:[0-9]{1,6}\]")


def _unwrap_logged(tail: str) -> str:
    """A vLLM log re-wrapped at a narrower width: where its lines carry the logger's prefix ("ERROR 05-13 21:09:41
    [core.py:396]"), a line without one is the previous line's remainder, joined back with a space (a wrap at a
    space dropped one) so that its frame reads whole."""
    lines = tail.split("\n")
    if sum(1 for ln in lines if _LOG_PREFIX.match(ln)) < 3:
        return tail
    out: list[str] = []
    for ln in lines:
        if out and ln.strip() and not _LOG_PREFIX.match(ln) and _LOG_PREFIX.match(out[-1]):
            out[-1] += " " + ln.strip()
        else:
            out.append(ln)
    return "\n".join(out)


def _cut_in_build(frame: str, host: str, settings: dict[str, Any], buffers: dict[str, Any],
                  recognised: tuple[str, ...], predict: bool) -> Diagnosis:
    """A vLLM / SGLang traceback cut before its exception's line inside the model's construction, in a text that
    says it ran out of memory (an issue's title, the user's words): the layers' parameters are allocated as they are
    built, so the weights did not fit (confidence low: the message is missing)."""
    why = (f"the traceback runs through `{frame}` (the model is being built and its weights allocated, before any "
           "KV cache) and the text says it ran out of memory, but the exception's own line is not in the text: read "
           "as the weights not fitting; paste the lines that follow it to confirm",)
    d = Diagnosis(engine=host, stage="weights", confidence="low", settings=settings, recognised=recognised,
                  engine_version=_version(settings, host), buffers=buffers)
    return Diagnosis(**{**d.__dict__, "causes": why, "fixes": fixes_for(d, BY_ID["torch_cuda_oom"], predict)})


# a frame line re-wrapped at a terminal's width ('File' / '"/usr/.../worker.py", line' / '114, in name'): the breaks a
# wrap at spaces leaves inside the frame's fixed words, joined back
_FRAME_BREAKS = re.compile(r'(?<=File)[ \t]*\r?\n[ \t]*(?=")|(?<=",)[ \t]*\r?\n[ \t]*(?=line\b)|'
                           r'(?<=\bline)[ \t]*\r?\n[ \t]*(?=[0-9])|(?<=[0-9],)[ \t]*\r?\n[ \t]*(?=in\b)|'
                           r'(?<=, in)[ \t]*\r?\n[ \t]*(?=\w)')


def _join_frames(text: str) -> str:
    return _FRAME_BREAKS.sub(" ", text)


def _cut_in_profile(joined: str, settings: dict[str, Any], buffers: dict[str, Any], recognised: tuple[str, ...],
                    predict: bool) -> Diagnosis:
    """A vLLM traceback cut before its exception's line inside the start-up profile run (V0 worker/worker.py
    determine_num_available_blocks and V1 v1/worker/gpu_worker.py determine_available_memory, both calling the model
    runner's profile_run; logread.py in_profile_run), in a text that says it ran out of memory (an issue's title):
    the profile's forward pass over max_num_seqs dummy sequences (for a multi-modal model, their images too) is what
    allocates there, before the KV cache is sized (confidence low: the message is missing)."""
    mm = "multi-modal" in joined or "multimodal" in joined
    why = (PROFILE_RUN_CAUSE + (PROFILE_RUN_MM if mm else ""),
           "the traceback is cut before the exception's own line, in a text that says it ran out of memory: paste "
           "the lines that follow it to confirm")
    d = Diagnosis(engine="vllm", stage="compute", confidence="low", settings=settings, recognised=recognised,
                  engine_version=_version(settings, "vllm"), buffers=buffers, causes=why)
    return Diagnosis(**{**d.__dict__, "fixes": fixes_for(d, BY_ID["torch_cuda_oom"], predict)})


def _cut_in_frames(stage: str, joined: str, settings: dict[str, Any], buffers: dict[str, Any],
                   recognised: tuple[str, ...], predict: bool) -> Diagnosis:
    """A transformers traceback (generate(), from_pretrained) cut before its exception's line, in a text that says
    it ran out of memory (an issue's title): placed by its frames as PyTorch's message would be (confidence low)."""
    names = frames(joined)
    why = (f"the traceback runs through {_frame_hint(names, stage)} and the text says it ran out of memory, but the "
           "exception's own line is not in the text: paste the lines that follow it to confirm",)
    d = Diagnosis(engine="pytorch", host="transformers", stage=stage, confidence="low", settings=settings,
                  recognised=recognised, buffers=buffers, causes=why)
    return Diagnosis(**{**d.__dict__, "fixes": fixes_for(d, BY_ID["torch_cuda_oom"], predict)})


# SGLang's scheduled steps while serving: 0.2.x managers/tp_worker.py ModelTpServer forward_decode_batch /
# forward_prefill_batch (forward_fill_batch in 0.1.x router/model_rpc.py), 0.3+ tp_worker.py TpModelWorker
# forward_batch_generation; the KV pool was sized at start-up by --mem-fraction-static, so what a step allocates
# (its activations, the sampler's batch x vocabulary probabilities) comes from what the pool left
_SGLANG_STEP_FRAMES = ("forward_decode_batch", "forward_prefill_batch", "forward_fill_batch",
                       "forward_batch_generation")
def _cut_in_step(frame: str, settings: dict[str, Any], buffers: dict[str, Any], recognised: tuple[str, ...],
                 predict: bool) -> Diagnosis:
    """An SGLang traceback cut before its exception's line inside a step run while serving (_SGLANG_STEP_FRAMES),
    in a text that says it ran out of memory: the step's memory outside the KV pool (confidence low)."""
    why = (SGLANG_STEP_CAUSE.format(frame=frame),
           "the traceback is cut before the exception's own line, in a text that says it ran out of memory: paste "
           "the lines that follow it to confirm")
    d = Diagnosis(engine="sglang", stage="compute", confidence="low", settings=settings, recognised=recognised,
                  engine_version=_version(settings, "sglang"), buffers=buffers, causes=why)
    return Diagnosis(**{**d.__dict__, "fixes": fixes_for(d, BY_ID["torch_cuda_oom"], predict)})


# vLLM's KV checks: every error these raise is the KV cache's (V0 worker.py raise_if_cache_size_invalid: "No
# available memory for the cache blocks" or "The model's max seq len (N) is larger than the maximum number of tokens
# that can be stored in KV cache (M)"; V1 core/kv_cache_utils.py check_enough_kv_cache_memory, _check_enough_...:
# the same first one, or "To serve at least one request with the model's max seq len ...")
_KV_CHECKS = ("raise_if_cache_size_invalid", "check_enough_kv_cache_memory")


def _kv_check_frames(tail: str) -> str | None:
    """The KV check a traceback runs through: a frame's name, or the call on a frame's source line (the frame of
    the check itself cut off)."""
    if 'File "' not in tail:
        return None
    names = frames(tail)
    return next((k for k in _KV_CHECKS if any(k in n for n in names) or k + "(" in tail), None)


def _kv_check_cut(frame: str, settings: dict[str, Any], buffers: dict[str, Any], recognised: tuple[str, ...],
                  predict: bool) -> Diagnosis:
    """A vLLM traceback through one of its KV-cache checks, cut before the exception's line: whatever it raised is
    one of that check's messages, all of which say the KV cache does not fit (confidence medium: the line is
    missing, the check is not)."""
    why = (f"the traceback runs through `{frame}`, vLLM's check that the KV cache fits: every error it raises says "
           "the KV cache has no room (no blocks at all, or fewer tokens than max_model_len); its own line, cut off "
           "here, carries the numbers",)
    d = Diagnosis(engine="vllm", stage="kv_cache", confidence="medium", settings=settings, recognised=recognised,
                  engine_version=_version(settings, "vllm"), buffers=buffers)
    return Diagnosis(**{**d.__dict__, "causes": why, "fixes": fixes_for(d, BY_ID["vllm_no_cache_blocks"], predict)})


def _canned(e: Event) -> tuple[Fix, ...]:
    return tuple(Fix(summary=f) for f in e.sig.fixes)


def _version(settings: dict[str, Any], engine: str | None = None) -> str | None:
    """The version of the program whose message it is, where the text shows it."""
    if engine == "pytorch":
        return settings.get("torch_version")
    if engine == "vllm" or (engine is None and settings.get("vllm_version")):
        return settings.get("vllm_version")
    if engine == "ollama" or (engine is None and settings.get("ollama_version")):
        return settings.get("ollama_version")
    if engine in ("llama.cpp", None) and settings.get("llama_cpp_build"):
        return f"b{settings['llama_cpp_build']}"
    if engine in ("llama.cpp", "lmstudio", None) and settings.get("lmstudio_runtime"):
        return f"lmstudio-{settings['lmstudio_runtime']}"  # LM Studio's llama.cpp runtime (engines/llamacpp/lmstudio.py)
    return None


def _backend(line: str) -> str | None:
    # (ggml's backends prefix their own messages in lower case: ggml_vulkan:, ggml_metal_..., ggml_sycl_...)
    for word, name in (("HIP", "ROCm"), ("ROCm", "ROCm"), ("XPU", "XPU"), ("NPU", "NPU"), ("CUDA", "CUDA"),
                       ("Metal", "Metal"), ("Vulkan", "Vulkan"), ("SYCL", "SYCL"), ("ggml_vulkan", "Vulkan"),
                       ("ggml_metal", "Metal"), ("ggml_sycl", "SYCL"), ("vk::", "Vulkan"),
                       ("ErrorOutOfDeviceMemory", "Vulkan")):
        if word in line:
            return name
    return None
