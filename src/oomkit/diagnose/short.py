"""A paste of one or two lines: what ran out, what the lines cannot tell (which program, the figures) and the lines
to paste that would tell it. People copy only an error's last line from a thread; the engine's rule still names
the part and the fix (fixes.py, signatures.py), but the figures and often the program are not in it, so the answer
says so instead of guessing."""

from __future__ import annotations

import dataclasses
import re

from .result import Diagnosis, Fix
from .signatures import BY_ID

MAX_LINES = 2  # non-blank lines a paste may have to be read as a short one
MAX_CHARS = 65536  # a longer text is a log, whatever its line count (no long text is split into lines here)

# (what ran out, what the lines cannot tell, the lines to paste), by signature id
NOTES: dict[str, tuple[str, str, str]] = {
    "torch_cuda_oom_cut": (
        "GPU memory, asked through PyTorch's caching allocator",
        "which program ran PyTorch (vLLM, SGLang, transformers, a training script), what it was allocating, and the "
        "figures: the request, the GPU's total and free memory, what PyTorch holds",
        "the whole message (from 'Tried to allocate' to 'PYTORCH_CUDA_ALLOC_CONF') and the lines above the "
        "traceback (the engine's start-up log names the program and its settings)"),
    "torch_cuda_oom": (
        "GPU memory, asked through PyTorch's caching allocator",
        "which program ran PyTorch, and the GPU's total and free memory and PyTorch's reserved-but-unallocated "
        "memory: without them a full GPU, another process and fragmentation read the same",
        "the rest of the message ('GPU 0 has a total capacity of ... of which ... is free. ... reserved by PyTorch "
        "but unallocated') and the lines above the traceback"),
    "cuda_runtime_oom": (
        "GPU memory, taken by a raw CUDA runtime call (context creation, NCCL buffers, CUDA-graph capture), not by "
        "PyTorch's caching allocator",
        "which program and which step failed, and how full the GPU was: the message carries no figures",
        "the traceback's lines above it (the call that failed), the engine's start-up log and nvidia-smi's memory "
        "use at the time"),
    "ggml_cuda_malloc": (
        "GPU memory of the device the line names (a ggml cudaMalloc of the size it gives)",
        "which buffer it was for (weights, KV cache or compute) and how much the device had free; llama.cpp, "
        "Ollama, LM Studio and koboldcpp all print this line",
        "the lines after it (llama.cpp names the buffer: 'failed to allocate CUDA0 buffer of size ...', "
        "'llama_kv_cache', 'graph_reserve') and the load log ('load_tensors: offloaded N/M layers to GPU')"),
    "ggml_vulkan_alloc": (
        "Vulkan device memory (VK_ERROR_OUT_OF_DEVICE_MEMORY), or one allocation over the driver's "
        "maxMemoryAllocationSize",
        "which program (llama.cpp's Vulkan backend, Ollama, LM Studio, or another Vulkan program), the size asked "
        "and the device's heap: the bare error carries none",
        "the lines before it ('ggml_vulkan: Device memory allocation of size N failed', the device list "
        "'ggml_vulkan: 0 = ...') and the load log"),
    "llama_kv_cache_old": (
        "memory for the KV cache (llama.cpp's kv_cache_init, 2023 builds; the message of 2024+ builds says 'buffer', "
        "not 'memory')",
        "the context (-c), the layer count, the build and whether the cache was in RAM or offloaded, so the cache's "
        "size is not computed",
        "the command line and the load log ('llama_model_load_internal: n_ctx = ...', 'kv self size = ...')"),
    "mlx_resource_limit": (
        "Metal's count of live buffers (499000 is a count of buffers, not bytes)",
        "which MLX program (mlx-lm, mlx-vlm, LM Studio's MLX engine) and at which step (loading, prompt, "
        "generation), and the model and context",
        "the command and the lines above the error"),
    "ollama_system_memory": (
        "host RAM (or unified memory on a Mac), by Ollama's own estimate before loading",
        "the Ollama version, the model and num_ctx, and how much of the model was meant for the GPU",
        "the server log from the 'offload' / 'load_backend' lines to the error (journalctl -u ollama, or "
        "~/.ollama/logs/server.log)"),
    "vllm_no_cache_blocks": (
        "GPU memory for the KV cache: nothing was left of gpu_memory_utilization x total memory after the weights "
        "and the profiled activation peak",
        "the weights' size, the activation peak, the memory fraction set and the GPU's total: the line carries no "
        "figures, so the new fraction is a step from the 0.90 default, not computed",
        "the start-up lines 'Loading model weights took ... GiB' and 'Memory profiling takes ... model weights take "
        "...; PyTorch activation peak memory takes ...' and the command line"),
    "sglang_not_enough_memory": (
        "GPU memory for SGLang's KV pool: the weights take all of mem_fraction_static x total memory",
        "the --mem-fraction-static in use (newer SGLang prints 'Current value: ...'), the weights' size and the "
        "GPU's total",
        "the whole line (with 'Current value: ...') and the start-up lines 'Load weight end. ... avail mem=...' "
        "and the command line"),
}

UNPLACED = ("unknown: not an out-of-memory error oomkit knows (paste the engine's whole error and the lines above "
            "it; `oomkit errors` lists the messages it knows)")
STAGE_PARTS = {"weights": "memory for the model's weights", "kv_cache": "memory for the KV cache",
               "compute": "memory for the compute buffers / activations", "host_ram": "host RAM",
               "fragmentation": "contiguous free GPU memory (fragmentation)",
               "other_process": "GPU memory held by another process", "buffer_limit": "a per-buffer device limit"}
_GGML_CONTEXT = re.compile(r"current device|in function|ggml|\bb[0-9]{3,5}\b")  # a build tag names llama.cpp
_HIP = re.compile(r"\bHIP error: out of memory|hipErrorOutOfMemory")
_CONTEXT_FAILED = re.compile(r"failed to initialize the context:?\s*$")


def note(d: Diagnosis, text: str) -> Diagnosis:
    """The Diagnosis of a paste of at most MAX_LINES non-blank lines with what it cannot tell and the lines to ask
    for (Diagnosis.short); any other text unchanged."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", errors="replace")
    if not isinstance(text, str) or len(text) > MAX_CHARS:
        return d
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines or len(lines) > MAX_LINES or d.stage == "not_oom":
        return d
    n = len(lines)
    one = "one line" if n == 1 else f"{n} lines"
    backend = d.backend
    if d.signature == "ggml_cuda_error_oom" and "CUDA error: out of memory" in text and \
            not (_GGML_CONTEXT.search(text) or d.host or d.settings):  # ROCm/MUSA error: only ggml words it so
        return _bare_cuda_error(d, one)
    if d.signature == "cuda_runtime_oom" and _HIP.search(text):
        part, unknown, paste = NOTES["cuda_runtime_oom"]
        part = part.replace("CUDA runtime", "HIP (ROCm) runtime").replace(", not by", " on an AMD GPU, not by")
        paste = paste.replace("nvidia-smi's", "rocm-smi's (or amd-smi's)")
        backend = "ROCm"
    elif d.signature in NOTES:
        part, unknown, paste = NOTES[d.signature]
        if d.signature == "torch_cuda_oom" and not set(d.numbers) <= {"requested_bytes", "device"}:
            return d  # the message's figures are there
        if d.signature == "ggml_vulkan_alloc" and "requested_bytes" in d.numbers:  # ggml_vulkan's size line given
            unknown = ("which buffer it was for (weights, KV cache or compute), the device's heap and the driver's "
                       "maxMemoryAllocationSize")
            paste = "the device list ('ggml_vulkan: 0 = ...'), the load log and vulkaninfo's maxMemoryAllocationSize"
        if d.signature == "sglang_not_enough_memory" and "mem_fraction_static" in d.numbers:  # 'Current value: ...'
            unknown = "the weights' size and the GPU's total, so the fraction they need is not computed"
            paste = "the start-up lines 'Load weight end. ... avail mem=...' and the command line"
    elif d.signature is None and any(_CONTEXT_FAILED.search(ln) for ln in lines):
        part = "not said: this line only reports that llama.cpp could not create the context (KV cache and compute " \
               "buffers)"
        unknown = "why: the reason follows the colon on this line, or is on the lines above it"
        paste = "this line as printed (with what follows 'failed to initialize the context:') and the lines above " \
                "it ('failed to allocate ... buffer of size ...', 'failed to allocate buffer for kv cache')"
    elif d.signature is None and not d.recognised:
        if d.engine or d.stage != "unknown":
            return d
        return dataclasses.replace(d, short={"lines": n, "unplaced": UNPLACED})
    elif d.numbers or d.settings:
        return d  # a message that carries its figures: nothing to ask for
    else:
        part = STAGE_PARTS.get(d.stage, "not said by the line")
        unknown = ("which program and version, and " if not d.engine else "") + \
            "the figures (what was asked, what was free) and the settings in force"
        paste = "the lines above and below it and the engine's start-up log"
    short = {"lines": n, "ran_out": part, "unknown": f"from {one} oomkit cannot tell {unknown}", "paste": paste}
    return dataclasses.replace(d, short=short, backend=backend)



def _bare_cuda_error(d: Diagnosis, one: str) -> Diagnosis:
    """'CUDA error: out of memory' with nothing around it: PyTorch raises it from a raw CUDA call (prefixed
    'RuntimeError: ' or 'torch.AcceleratorError: ' when the traceback is copied), llama.cpp's ggml_cuda_error prints
    it followed by 'current device: N, in function ... at ggml-cuda...'. The line alone names neither, so no stage is
    claimed: the advice of both, each under its program's name."""
    raw = BY_ID["cuda_runtime_oom"]
    fixes = tuple(Fix(f) for f in raw.fixes) + tuple(
        Fix(f"llama.cpp (its compute pool): {f}") for f in BY_ID["ggml_cuda_error_oom"].fixes)
    short = {"lines": 1 if one == "one line" else 2,
             "ran_out": "GPU memory, taken by a raw CUDA call (not an allocator that prints figures)",
             "unknown": f"from {one} oomkit cannot tell which program: PyTorch (the same words after 'RuntimeError: "
                        "') or llama.cpp (followed by 'current device: N, in function ... at ggml-cuda...'), nor the "
                        "step that failed or how full the GPU was",
             "paste": "the lines after it (llama.cpp names the function and the device) or the traceback above it "
                      "(PyTorch), and the engine's start-up log"}
    return dataclasses.replace(d, engine="cuda", stage="unknown", confidence="low", causes=raw.causes, fixes=fixes,
                               short=short)
