"""The messages oomkit recognises, as data: one `Signature` per message an engine prints when memory runs out (or
prints something that looks like it and is not), with the program whose message it is, the stage it names, the
numbers each capture carries and the unit the engine meant, and the causes and fixes the index gives for it.

The texts come from the engines' own sources where possible (see the error index in the project's research
notes): PyTorch `c10/cuda/CUDACachingAllocator.cpp`, vLLM `v1/core/kv_cache_utils.py`, llama.cpp
`ggml-cuda.cu` / `ggml-alloc.c` / `llama-context.cpp` / `llama-kv-cache.cpp`, Ollama `llm/server.go` /
`llm/status.go`, MLX `backend/metal/allocator.cpp`, TGI `flash_causal_lm.py`, ExLlamaV2 `model.py`.

Matching is cheap and linear: a signature is tried on a line only when one of its `keys` (plain substrings) occurs
in it, and every pattern is a plain left-to-right regular expression without nested repetition, run on a line of
bounded length. Numbers are read by `fields`: small independent patterns, each giving one number.

roles:
  oom      an allocation failed (the cause when it is the first in a log)
  stage    a line that names the stage of a nearby allocation failure (llama.cpp's context lines)
  not_oom  a look-alike: the text is an error, but not an out-of-memory
  warn     a warning that often precedes a failure (Metal working set, mlx-lm wired memory)
  recovered the engine recovered from the failure just before (llama.cpp retries without pipeline parallelism)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

NUM = r"([0-9][0-9,]{0,24}(?:\.[0-9]{1,12})?)"  # a number as engines print it (thousands separators allowed)
SIZE = r"([0-9][0-9,]{0,24}(?:\.[0-9]{1,12})?) ?(bytes|B|KiB|MiB|GiB|TiB|KB|MB|GB|TB)\b"  # number + unit (two groups)

# programs whose messages appear inside another program's log (the kernel, a library the engine runs): the engine
# reported for them is the log's host
HOSTED = ("os", "flashinfer", "deepgemm")
# not_oom lines that report an allocation the engine recovered from by itself (ggml's pinned-memory fallback): no
# shortage alone, and never the reason a runner stopped
FALLBACKS = ("ggml_pinned_fallback",)
# not_oom lines that are an engine's routine notice at every start-up (--fit's first projection, vLLM's capture
# notices): no failure alone, and read as none only where the text shows nothing else (no out-of-memory word, no
# exception, no warning, no traceback cut in a phase after the KV cache)
NOTICES = ("llama_fit_projection", "vllm_capture_notice")
STAGES = ("weights", "kv_cache", "compute", "fragmentation", "other_process", "host_ram", "buffer_limit",
          "not_oom", "unknown")
ENGINES = ("pytorch", "cuda", "vllm", "sglang", "llama.cpp", "ollama", "lmstudio", "mlx", "tgi", "exllama",
           "tensorrt-llm", "transformers", "bitsandbytes")


@dataclass(frozen=True)
class Field:
    """One number of a message: `pattern` (searched in the message) captures it; `unit` says how to read it:
    "size" (number and unit captured; K/M/G/T read as binary, as PyTorch and MPS print them even as "MB"/"GB"),
    "size_as_written" (GiB is 2^30, GB is 10^9: Ollama's two formatters, LM Studio), "GiB", "MiB", "MB" (10^6),
    "bytes", "hex" (a byte count in hexadecimal), "int" (a count or length), "float", "str"."""

    key: str
    pattern: str
    unit: str = "size"


@dataclass(frozen=True)
class Signature:
    id: str
    engine: str  # the program whose message it is (DESIGN "Diagnose JSON" vocabulary)
    keys: tuple[str, ...]  # plain substrings; the signature is tried on a line holding any of them
    pattern: str  # must match (re.search) for the signature to apply
    role: str = "oom"
    stage: str | None = None  # the stage it names; None: decided from the numbers and the context
    fields: tuple[Field, ...] = ()
    message: str = ""  # the text as the engine prints it, with {placeholders}
    versions: str = ""
    backend: str | None = None  # CUDA, ROCm, Metal, Vulkan, MPS, XPU, ...
    causes: tuple[str, ...] = ()
    fixes: tuple[str, ...] = ()
    ignore_case: bool = False
    priority: int = 0  # higher wins when several signatures match one line
    span: int = 3  # lines after the match its numbers may be on (a wrapped line; a JSON block)

    def regex(self) -> re.Pattern[str]:
        return _compile(self.pattern, self.ignore_case)


_CACHE: dict[tuple[str, bool], re.Pattern[str]] = {}


def _compile(pattern: str, ignore_case: bool = False) -> re.Pattern[str]:
    key = (pattern, ignore_case)
    rx = _CACHE.get(key)
    if rx is None:
        rx = _CACHE[key] = re.compile(pattern, re.IGNORECASE if ignore_case else 0)
    return rx


# The PyTorch caching allocator's message (CUDA, HIP, XPU, NPU), new (>= 2.1) and old (<= 2.0) forms: each
# fragment on its own, so a fragment a version leaves out does not stop the others.
TORCH_FIELDS = (
    Field("requested_bytes", r"Tried to allocate " + SIZE),
    Field("device", r"(?:GPU|Device|NPU|MLU) ([0-9]{1,20})(?: has a total capac|;)", "int"),
    Field("total_bytes", r"total capac(?:i)?ty of " + SIZE),
    Field("free_bytes", r"of which " + SIZE + r" ?is free"),
    Field("total_bytes", SIZE + r" total capacity;"),
    Field("allocated_bytes", SIZE + r" already allocated;"),
    Field("free_bytes", SIZE + r" free;"),
    Field("allowed_bytes", SIZE + r" allowed;"),
    Field("reserved_bytes", SIZE + r" reserved in total by PyTorch"),
    Field("allocated_bytes", SIZE + r" is allocated by PyTorch"),
    Field("private_pool_bytes", r"with " + SIZE + r" allocated in private pools"),
    Field("reserved_unallocated_bytes", SIZE + r" is reserved by PyTorch but unallocated"),
    Field("this_process_bytes", r"this process has " + SIZE + r" memory in use"),
)
TORCH_CAUSES = (
    "the job needs more memory than the device has free: weights, activations of the batch/sequence, or caches",
    "reserved-but-unallocated memory large: the caching allocator's blocks are fragmented",
    "another process listed with `Process N has X memory in use` holds part of the device",
)
TORCH_FIXES = (
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True when the reserved-but-unallocated figure is large "
    "(PYTORCH_HIP_ALLOC_CONF / PYTORCH_ALLOC_CONF on ROCm builds; max_split_size_mb:<N> before 2.1)",
    "stop the other processes listed (nvidia-smi), or lower the engine's memory fraction",
    "a smaller batch or sequence length; a quantized model; more GPUs (tensor parallel)",
)

LLAMA_KV_FIXES = ("-c smaller (the KV cache is linear in the context)",
                  "-ctk q8_0 -ctv q8_0 -fa on (a q8_0 cache is 8.5/16 of f16)",
                  "-np smaller (parallel slots), or -nkvo to keep the cache in host RAM")
LLAMA_COMPUTE_FIXES = ("-ub smaller (and -b), e.g. -ub 256", "-fa on (flash attention: smaller compute buffer)",
                       "-c smaller", "rebalance -ts so the device holding the output layer has room")
LLAMA_WEIGHT_FIXES = ("-ngl fewer layers on the GPU (or --fit on)", "--n-cpu-moe N / --cpu-moe for MoE models",
                      "-ts to spread the layers across GPUs", "a smaller quant")

def _mlx_metal_fault(sid: str, code: int, error: str, description: str, causes: tuple[str, ...],
                     fixes: tuple[str, ...], pattern: str | None = None) -> Signature:
    """A Metal command buffer's failure MLX reports that is no shortage: mlx/backend/metal/eval.cpp's completion
    handler throws "[METAL] Command buffer execution failed: " + the error's localizedDescription, which ends in
    IOGPU's code and name (kIOGPUCommandBufferCallbackError<error>); the signature keys on that name."""
    name = f"kIOGPUCommandBufferCallbackError{error}"
    return Signature(sid, "mlx", (name,), pattern or name, role="not_oom", backend="Metal", priority=3,
                     message=f"[METAL] Command buffer execution failed: {description} ({code:08x}:{name})",
                     causes=causes, fixes=fixes)


def _lmstudio_notice(sid: str, key: str, pattern: str, message: str, causes: tuple[str, ...],
                     fixes: tuple[str, ...] = (), priority: int = 3, ignore_case: bool = False) -> Signature:
    """A line LM Studio 0.4.x's app (closed source; its words in its bug tracker) prints that is no memory
    shortage: a note about its own estimate, or a refusal that measured nothing."""
    return Signature(sid, "lmstudio", (key,), pattern, role="not_oom", priority=priority, ignore_case=ignore_case,
                     message=message, versions="LM Studio 0.4.x", causes=causes, fixes=fixes)


SIGNATURES: tuple[Signature, ...] = (
    # ------------------------------------------------------------------------------------ PyTorch allocators
    Signature(
        "torch_cuda_oom", "pytorch", ("out of memory. Tried to allocate", "Out of memory. Tried to allocate",
                                      "Tried to allocate"),
        # the message quoted without its "CUDA out of memory." head (a cut or re-wrapped paste): the allocator's own
        # next words, "GPU N has a total capacity" (>= 2.1) or "(GPU N; " (<= 2.0), are in no other program's text
        r"(CUDA|HIP|XPU|NPU|MLU)? ?[Oo]ut of memory\. Tried to allocate|Tried to allocate " + SIZE
        + r"(?:\. (?:GPU|Device) [0-9]{1,20} has a total capac| \((?:GPU|NPU) [0-9]{1,20}; )",
        fields=TORCH_FIELDS, priority=5,
        message="torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {REQ}. GPU {DEV} has a total capacity "
                "of {TOTAL} of which {FREE} is free. [Process {PID} has {X} memory in use. ]Of the allocated memory "
                "{ALLOC} is allocated by PyTorch, and {RES_UNALLOC} is reserved by PyTorch but unallocated. ...",
        versions="PyTorch >= 2.1 (2.1.x spells 'capacty'); <= 2.0: '(GPU 0; X total capacity; Y already "
                 "allocated; Z free; W reserved in total by PyTorch)'; HIP/XPU/NPU builds the same shape",
        causes=TORCH_CAUSES, fixes=TORCH_FIXES),
    Signature(
        # the same message cut after its first sentence, as an issue's title keeps it: torch/cuda/__init__.py
        # OutOfMemoryError (PyTorch >= 1.13; torch.OutOfMemoryError >= 2.5) is the class c10/cuda/
        # CUDACachingAllocator.cpp raises for "CUDA out of memory. Tried to allocate ..."; no figures, so the
        # traceback's frames place it. Before 1.13 the allocator raised a plain RuntimeError with the same words
        # (c10/cuda/CUDACachingAllocator.cpp TORCH_CHECK_WITH(CUDAOutOfMemoryError, ...), a RuntimeError in Python)
        "torch_cuda_oom_cut", "pytorch", ("OutOfMemoryError: CUDA out of memory.", "RuntimeError: CUDA out of memory"),
        r"\btorch(?:\.cuda)?\.OutOfMemoryError: CUDA out of memory\.(?! {0,4}Tried)|"
        r"\bRuntimeError: CUDA out of memory(?![. ]{0,5}Tried)(?! occurred)", priority=2,
        message="torch.cuda.OutOfMemoryError: CUDA out of memory. / RuntimeError: CUDA out of memory.",
        versions="PyTorch >= 1.13 (torch.cuda.OutOfMemoryError), >= 2.5 (torch.OutOfMemoryError); RuntimeError before "
                 "1.13",
        causes=TORCH_CAUSES[:1], fixes=TORCH_FIXES[2:]),
    Signature(
        # torch_npu's workspace allocator (Ascend NPUs; OpParamMaker.cpp): "NPU out of memory. NPUWorkspaceAllocator
        # tried to allocate 216.00 MiB(NPU 0; 61.27 GiB total capacity; 90.23 MiB free). If you want to reduce memory
        # usage, take a try to set the environment variable TASK_QUEUE_ENABLE=1." (Ascend/sglang#617)
        "torch_npu_workspace_oom", "pytorch", ("NPUWorkspaceAllocator tried to allocate",),
        r"NPUWorkspaceAllocator tried to allocate " + SIZE, backend="NPU", priority=5,
        fields=(Field("requested_bytes", r"tried to allocate " + SIZE),
                Field("device", r"\(NPU ([0-9]{1,20});", "int"),
                Field("total_bytes", SIZE + r" total capacity;"),
                Field("free_bytes", r"total capacity; " + SIZE + r" free\)")),
        message="NPU out of memory. NPUWorkspaceAllocator tried to allocate {REQ}(NPU {DEV}; {TOTAL} total capacity; "
                "{FREE} free). If you want to reduce memory usage, take a try to set the environment variable "
                "TASK_QUEUE_ENABLE=1.",
        versions="torch_npu (Ascend)",
        causes=("an operator's workspace on the NPU did not fit: the engine's static share (weights, KV pool) left "
                "too little",),
        fixes=("the engine's memory share lower (SGLang --mem-fraction-static, vLLM --gpu-memory-utilization)",
               "a smaller batch or sequence length; more NPUs (tensor parallel)")),
    Signature(
        # c10/cuda/CUDAMallocAsyncAllocator.cpp mallocAsync (PyTorch 2.0+, the cudaMallocAsync backend): one message
        # for two refusals. err is set to cudaErrorMemoryAllocation when pytorch_used_bytes + size exceeds
        # pytorch_memory_limits (set_per_process_memory_fraction; UINT64_MAX, printed 17179869184.00 GiB, when no
        # fraction is set), or comes from cudaMallocAsync itself when the device has no room; then it prints
        # pytorch_used_bytes, the size, cudaMemGetInfo's total and free, and the limit. fixes.torch_allowed reads
        # which of the two it was from those figures
        "torch_allowed_memory", "pytorch", ("would exceed allowed memory",),
        r"Allocation on device [0-9]{1,4} would exceed allowed memory", priority=5, span=6,
        fields=(Field("device", r"Allocation on device ([0-9]{1,4})", "int"),
                Field("allocated_bytes", r"Currently allocated\s{0,40}: " + SIZE),
                Field("requested_bytes", r"Requested\s{0,40}: " + SIZE),
                Field("total_bytes", r"Device limit\s{0,40}: " + SIZE),
                Field("free_bytes", r"Free \(according to CUDA\): " + SIZE),
                Field("fraction_limit_bytes", r"memory fraction\)(?:\s|\\n){0,40}: " + SIZE)),
        message="Allocation on device {DEV} would exceed allowed memory. (out of memory) / Currently allocated : {A} / "
                "Requested : {REQ} / Device limit : {TOTAL} / Free (according to CUDA): {FREE} / PyTorch limit (set "
                "by user-supplied memory fraction) : {LIMIT}",
        versions="PyTorch 2.0+ with the cudaMallocAsync allocator (PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync, "
                 "ComfyUI's default; TGI)",
        causes=("PyTorch's cudaMallocAsync allocator refused the allocation: the per-process memory fraction's limit, "
                "or the device itself out of room (the figures say which)",),
        fixes=()),
    Signature(
        # c10/cuda/CUDAMallocAsyncAllocator.cpp mallocAsync (PyTorch 2.x, the cudaMallocAsync backend that ComfyUI
        # turns on by default, cli_args --cuda-malloc): TORCH_CHECK_WITH(OutOfMemoryError, false, "Allocation on
        # device ", device, " would exceed allowed memory. (out of memory)", ...). device is a c10::DeviceIndex
        # (int8_t), streamed as a character: device 0 is a NUL byte, which ends the message as Python prints it, so
        # the exception reads "Allocation on device " and nothing more (ComfyUI's error report, its traceback)
        "torch_mallocasync_oom", "pytorch", ("Allocation on device",),
        # (ComfyUI before its error report, 2024: "Error occurred when executing <node>:" then the message alone on
        # its line)
        r"(?:OutOfMemoryError:?\*{0,2}:? {1,4}|Exception Message:\*\* {1,4}|Exception during processing !!! {1,4})"
        r"Allocation on device(?! ?[0-9])|^[ \t]{0,8}Allocation on device[ \t\x00]{0,8}$", backend="CUDA", priority=4,
        message="torch.OutOfMemoryError: Allocation on device {DEV as a character} would exceed allowed memory. "
                "(out of memory) ...",
        versions="PyTorch 2.x with PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync (ComfyUI's default --cuda-malloc)",
        causes=("the GPU ran out under PyTorch's cudaMallocAsync allocator (the message is cut after 'device' where "
                "the device index prints as a NUL character)",),
        fixes=("a smaller batch or resolution (the sampler's activations grow with both)",
               "ComfyUI: --lowvram (the model split and loaded in parts) or a smaller / quantized model",
               "ComfyUI: --disable-cuda-malloc (the caching allocator; on Windows the driver's sysmem fallback can "
               "then absorb a peak)")),
    Signature(
        "torch_mps_oom", "pytorch", ("MPS backend out of memory",),
        r"MPS backend out of memory", backend="MPS", priority=5,
        fields=(Field("allocated_bytes", r"MPS allocated: " + SIZE),
                Field("other_allocations_bytes", r"other allocations: " + SIZE),
                Field("max_allowed_bytes", r"max allowed: " + SIZE),
                Field("requested_bytes", r"Tried to allocate " + SIZE)),
        message="RuntimeError: MPS backend out of memory (MPS allocated: {A}, other allocations: {O}, max allowed: "
                "{MAX}). Tried to allocate {REQ} on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 ...",
        versions="MB/GB labels (binary) until 2025, MiB/GiB later",
        causes=("unified memory exhausted: model, activations and other Metal allocations in one pool",),
        fixes=("a smaller batch or model", "close other GPU apps",
               "PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 lifts the cap (may freeze the machine; last resort)")),
    Signature(
        # aten/src/ATen/mps/MPSAllocator.mm MPSHeapAllocatorImpl::alloc_buffer_block: TORCH_CHECK(size <
        # m_max_buffer_size, "Invalid buffer size: ", format_size(size)), m_max_buffer_size being the device's
        # MTLDevice maxBufferLength (about 2/3 to 3/4 of unified memory): one tensor larger than one Metal buffer may
        # be, refused before any allocation whatever is free (format_size: binary units, "GB" before 2025, "GiB" after)
        "torch_mps_buffer_size", "pytorch", ("Invalid buffer size: ",),
        r"Invalid buffer size: [0-9.]{1,12} ?(?:GiB|GB|MiB|MB|KiB|KB)\b", stage="buffer_limit", backend="MPS",
        priority=4,
        fields=(Field("requested_bytes", r"Invalid buffer size: " + SIZE),),
        message="RuntimeError: Invalid buffer size: {SIZE}",
        versions="PyTorch MPS backend (all releases)",
        causes=("one tensor is larger than Metal's single-buffer limit (maxBufferLength) on this Mac: free memory "
                "does not help, the tensor must be smaller",),
        fixes=("a smaller batch or sequence (the tensor's own dimensions)", "the model in float16 / a quantized model",
               "the CPU for this step")),
    Signature(
        "torch_cpu_alloc", "pytorch", ("DefaultCPUAllocator: can't allocate memory",),
        r"DefaultCPUAllocator: can't allocate memory", stage="host_ram", priority=4,
        fields=(Field("requested_bytes", r"you tried to allocate ([0-9]{1,20}) bytes", "bytes"),),
        message="RuntimeError: [enforce fail at alloc_cpu.cpp] . DefaultCPUAllocator: can't allocate memory: you "
                "tried to allocate {B} bytes. Error code 12 (Cannot allocate memory)",
        causes=("host RAM exhausted (weights loaded to the CPU first, or a CPU-offloaded part)",),
        fixes=("more RAM or swap; low_cpu_mem_usage=True / device_map to load straight to the GPU",
               "a smaller or quantized model")),
    Signature(
        "cuda_runtime_oom", "cuda", ("CUDA error: out of memory", "HIP error: out of memory",
                                     "hipErrorOutOfMemory", "cudaErrorMemoryAllocation"),
        r"(?:CUDA|HIP) error: out of memory|hipErrorOutOfMemory|cudaErrorMemoryAllocation", priority=1,
        message="RuntimeError: CUDA error: out of memory / CUDA kernel errors might be asynchronously reported ...",
        versions="any CUDA/ROCm program; raised by a raw CUDA call (context creation, NCCL, graph capture), not the "
                 "caching allocator, so it has no numbers",
        causes=("the device had no room left for a raw CUDA allocation (context, NCCL buffers, CUDA graphs)",),
        fixes=("free the GPU (nvidia-smi; rocm-smi or amd-smi on ROCm)",
               "leave more headroom: lower the engine's memory fraction",
               "--enforce-eager (vLLM) / --disable-cuda-graph (SGLang) when it happens at graph capture")),
    Signature(
        "cublas_alloc_failed", "cuda", ("CUBLAS_STATUS_ALLOC_FAILED",), r"CUBLAS_STATUS_ALLOC_FAILED",
        stage="compute", priority=2,
        message="RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
        causes=("cuBLAS could not get its workspace: the device is full",),
        fixes=("free the GPU; a smaller batch or model; run on a GPU with more free memory",)),
    Signature(
        "cudnn_alloc_failed", "cuda", ("CUDNN_STATUS_ALLOC_FAILED",), r"CUDNN_STATUS_ALLOC_FAILED", stage="compute",
        priority=2,
        message="RuntimeError: cuDNN error: CUDNN_STATUS_ALLOC_FAILED",
        causes=("cuDNN could not get its workspace: the device is full",),
        fixes=("a smaller batch; free the GPU; torch.backends.cudnn.benchmark = False (smaller workspaces)",)),
    Signature(
        "cublas_not_initialized", "cuda", ("CUBLAS_STATUS_NOT_INITIALIZED",), r"CUBLAS_STATUS_NOT_INITIALIZED",
        priority=1,
        message="RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`",
        versions="any PyTorch; often a device with no memory left for cuBLAS's handle, sometimes an indexing bug "
                 "(out-of-range token ids) that surfaces here",
        causes=("cuBLAS could not start: usually no memory left on the device for its handle and workspace",),
        fixes=("free the GPU or add GPUs; check token ids against the vocabulary size (CUDA_LAUNCH_BLOCKING=1)",)),
    # ------------------------------------------------------------------------------------------------ vLLM
    Signature(
        "vllm_v1_kv_insufficient", "vllm", ("To serve at least one request with the model",),
        r"To serve at least one request with the model\S{0,4} max seq len", stage="kv_cache", priority=8,
        fields=(Field("max_model_len", r"max seq len \(([0-9]{1,20})\)", "int"),
                # "(22.5 GiB KV cache is needed": the parenthesis is lost where a paste wraps the message there
                # (kaito#2132)
                Field("kv_needed_bytes", r"(?:\(|^|\s)([0-9.]{1,24}) GiB KV ?cache is needed", "GiB"),
                Field("kv_available_bytes", r"available KV cache memory \(([-0-9.]{1,24}) GiB\)", "GiB"),
                Field("estimated_max_len", r"estimated maximum model length is ([0-9]{1,20})", "int")),
        message="ValueError: To serve at least one request with the models's max seq len ({max_model_len}), "
                "({needed} GiB KV cache is needed, which is larger than the available KV cache memory ({available} "
                "GiB). Based on the available memory, the estimated maximum model length is {estimated}. Try "
                "increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
        versions="vLLM V1 (0.8+); 'models's' until ~0.30, 'model's' after; the estimate sentence is left out "
                 "when the estimate is 0",
        causes=("max_model_len defaults to the model's max_position_embeddings (32K-262K on modern models)",
                "the weights (and activation peak) take most of gpu_memory_utilization x total memory"),
        fixes=("--max-model-len <= the estimated maximum (or `auto` on newer vLLM)",
               "--gpu-memory-utilization higher (when nothing else shares the GPU)",
               "--kv-cache-dtype fp8 (half the KV bytes)", "--tensor-parallel-size N", "a quantized checkpoint")),
    Signature(
        "vllm_v0_kv_insufficient", "vllm", ("is larger than the maximum number of tokens that can be stored",),
        r"max seq len \([0-9]{1,20}\) is larger than the maximum number of tokens that can be stored in KV cache",
        stage="kv_cache", priority=8,
        fields=(Field("max_model_len", r"max seq len \(([0-9]{1,20})\)", "int"),
                Field("kv_capacity_tokens", r"stored in KV cache \(([0-9]{1,20})\)", "int")),
        message="ValueError: The model's max seq len ({max_model_len}) is larger than the maximum number of tokens "
                "that can be stored in KV cache ({tokens}). Try increasing `gpu_memory_utilization` or decreasing "
                "`max_model_len` when initializing the engine.",
        versions="vLLM V0, 0.2.6 (PR #2163) to 0.10",
        causes=("max_model_len (default: the model's maximum) needs more KV blocks than fit",),
        fixes=("--max-model-len below the printed token count", "--gpu-memory-utilization higher",
               "--kv-cache-dtype fp8", "--tensor-parallel-size N")),
    Signature(
        # sleep mode (--enable-sleep-mode, RL trainers sharing the GPU): vllm/device_allocator/cumem.py
        # CuMemAllocator.wake_up re-maps every allocation sleep() released (the weights, the KV pool sized by
        # gpu_memory_utilization) through csrc/cumem_allocator.cpp python_create_and_map, whose CUDA_CHECK raises
        # RuntimeError("CUDA Error: <cuGetErrorString> at <file>:<line>"): cuMemCreate out of memory because what
        # shares the GPU did not give that memory back (vLLM 0.7.2+)
        "vllm_cumem_oom", "vllm", ("cumem_allocator.cpp",),
        r"CUDA Error: out of memory at \S{0,200}cumem_allocator\.cpp", stage="kv_cache", priority=8,
        message="RuntimeError: CUDA Error: out of memory at /workspace/csrc/cumem_allocator.cpp:{line}",
        versions="vLLM 0.7.2-current with sleep mode (CuMemAllocator)",
        causes=("vLLM's sleep-mode allocator could not map its memory back (at wake_up: the weights and the KV pool "
                "sized by gpu_memory_utilization): what shares the GPU (a trainer's model, optimizer, cached "
                "blocks) still holds it",),
        fixes=("--gpu-memory-utilization lower (vLLM's share, mapped back at wake_up; in an RL trainer its rollout "
               "setting: OpenRLHF --vllm_gpu_memory_utilization, verl actor_rollout_ref.rollout.gpu_memory_utilization)",
               "free the training side's GPU memory before wake_up (offload its parameters and optimizer, "
               "torch.cuda.empty_cache())", "--tensor-parallel-size N (a smaller share per GPU)")),
    Signature(
        "vllm_no_cache_blocks", "vllm", ("No available memory for the cache blocks",),
        r"No available memory for the cache blocks", stage="kv_cache", priority=7,
        message="ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` "
                "when initializing the engine.",
        versions="vLLM V0 and V1",
        causes=("weights + activation peak (+ CUDA graphs) >= gpu_memory_utilization x total memory: nothing left "
                "for the KV cache",),
        fixes=("--gpu-memory-utilization HIGHER (it is a fraction of total memory)", "a smaller or quantized model",
               "--tensor-parallel-size N", "--max-num-batched-tokens / --max-num-seqs lower", "--enforce-eager")),
    Signature(
        # V1 gpu_worker.py determine_available_memory; V0 worker.py determine_num_available_blocks (0.6.5-0.10):
        # "... the rest of the memory reserved for KV Cache is {X}GiB.", then "# cuda blocks: 0" and
        # raise_if_cache_size_invalid's "No available memory for the cache blocks"
        "vllm_negative_kv", "vllm", ("Available KV cache memory: -", "reserved for KV Cache is -"),
        r"Available KV cache memory: -[0-9.]{1,24} ?GiB|reserved for KV Cache is -[0-9.]{1,24} ?GiB",
        stage="kv_cache", priority=7,
        fields=(Field("kv_available_bytes", r"Available KV cache memory: (-[0-9.]{1,24}) ?GiB", "GiB"),
                Field("kv_available_bytes", r"reserved for KV Cache is (-[0-9.]{1,24}) ?GiB", "GiB")),
        message="Available KV cache memory: -{X} GiB / EngineCore failed to start. (V0: model weights take {W}GiB; "
                "... the rest of the memory reserved for KV Cache is -{X}GiB.)",
        versions="vLLM V1 (the profile leaves a negative KV budget; later releases raise the KV check's error); "
                 "V0 0.6.5-0.10 prints the same budget in its profiling summary",
        causes=("weights + activation peak (+ CUDA graphs) exceed gpu_memory_utilization x total memory",),
        fixes=("--gpu-memory-utilization higher", "a smaller or quantized checkpoint", "--tensor-parallel-size N",
               "--max-num-batched-tokens lower (smaller activation peak)")),
    Signature(
        "vllm_free_memory_startup", "vllm", ("on startup is less than desired GPU memory utilization",),
        r"Free memory on device", stage="other_process", priority=7,
        fields=(Field("free_bytes", r"\(([0-9.]{1,24})/[0-9.]{1,24} GiB\) on startup", "GiB"),
                Field("total_bytes", r"\([0-9.]{1,24}/([0-9.]{1,24}) GiB\) on startup", "GiB"),
                Field("gpu_memory_utilization", r"memory utilization \(([0-9.]{1,24}),", "float"),
                Field("requested_bytes", r"memory utilization \([0-9.]{1,24}, ([0-9.]{1,24}) GiB\)", "GiB")),
        message="ValueError: Free memory on device {device} ({free}/{total} GiB) on startup is less than desired GPU "
                "memory utilization ({util}, {util_x_total} GiB). Decrease GPU memory utilization or reduce GPU "
                "memory used by other processes.",
        versions="vLLM V1 (the device name, e.g. 'cuda:0', in newer builds; their DEBUG line 'Free memory on device "
                 "(X/Y GiB) on startup. Desired GPU memory utilization is ...' is not an error)",
        causes=("another process (or a stale vLLM / container) holds part of the GPU",
                "two instances share one GPU with fractions summing over 1"),
        fixes=("free the GPU (nvidia-smi)", "--gpu-memory-utilization below free/total")),
    Signature(
        "vllm_sampler_warmup", "vllm", ("occurred when warming up sampler",),
        r"out of memory occurred when warming up sampler", stage="compute", priority=9,
        fields=(Field("max_num_seqs", r"sampler with ([0-9]{1,20}) dummy requests", "int"),),
        message="RuntimeError: CUDA out of memory occurred when warming up sampler with {N} dummy requests. Please "
                "try lowering `max_num_seqs` or `gpu_memory_utilization` when initializing the engine.",
        versions="vLLM V1",
        causes=("the sampler's warm-up batch (max_num_seqs dummy requests) does not fit",),
        fixes=("--max-num-seqs lower (64-256)", "--gpu-memory-utilization lower")),
    Signature(
        "vllm_profiling_error", "vllm", ("Error in memory profiling",),
        r"Error in memory profiling", role="not_oom", priority=6,
        fields=(Field("initial_free_bytes", r"Initial free memory ([0-9.]{1,24})", "GiB"),
                Field("current_free_bytes", r"current free memory ([0-9.]{1,24})", "GiB")),
        message="AssertionError: Error in memory profiling. Initial free memory {X} GiB, current free memory {Y} "
                "GiB. This happens when other processes sharing the same container release GPU memory ...",
        causes=("another process released GPU memory while vLLM profiled: free memory grew (not an OOM)",),
        fixes=("run vLLM alone on the GPU, or retry once memory is quiet",
               "set the KV cache size explicitly (kv_cache_memory_bytes) to skip the profile")),
    Signature(
        "vllm_max_model_len_too_large", "vllm", ("is greater than the derived max_model_len",),
        r"is greater than the derived max_model_len", role="not_oom", priority=6,
        fields=(Field("max_model_len", r"max_model_len \(([0-9]{1,20})\) is greater", "int"),
                Field("model_max_len", r"max_position_embeddings=([0-9]{1,20})", "int")),
        message="ValueError: User-specified max_model_len ({N}) is greater than the derived max_model_len "
                "(max_position_embeddings={M} or model_max_length=None in model's config.json).",
        causes=("--max-model-len asks for more than the model was trained for (not a memory error)",),
        fixes=("--max-model-len at most the model's own maximum",
               "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 with rope scaling, if intended")),
    Signature(
        # v1/engine/input_processor.py (processor.py before 0.11) _validate_model_input: a request whose one
        # multimodal item has more embeddings than the encoder cache sized at start-up is refused with a 400 ("with
        # length N" until 2025, "with N embedding tokens" after): the request is too large for a budget, nothing failed
        # to allocate
        "vllm_encoder_cache_exceeded", "vllm", ("exceeds the pre-allocated encoder cache size",),
        r"exceeds the pre-allocated encoder cache size", role="not_oom", priority=6, ignore_case=True,
        fields=(Field("mm_item_tokens", r"item with (?:length )?([0-9]{1,20})", "int"),
                Field("encoder_cache_tokens", r"encoder cache size ([0-9]{1,20})", "int")),
        message="The decoder prompt contains a(n) image item with length {N}, which exceeds the pre-allocated encoder "
                "cache size {M}. Please reduce the input size or increase the encoder cache size by setting "
                "--limit-mm-per-prompt at startup.",
        versions="vLLM V1 (0.10+)",
        causes=("one image/video/audio item of the request has more embedding tokens than the encoder cache vLLM "
                "sized at start-up: the request is refused (HTTP 400), no memory ran out",),
        fixes=("a smaller input item: a lower resolution (max_pixels in --mm-processor-kwargs), fewer frames or a "
               "shorter clip",
               "a larger encoder cache at start-up: --limit-mm-per-prompt with the item's size, or "
               "--max-num-batched-tokens at least the item's tokens")),
    Signature(
        # v1/core/encoder_cache_manager.py compute_mm_encoder_budget (compute_encoder_budget): with chunked MM input
        # disabled (models whose image tokens attend bidirectionally: Gemma 3/4) one item must fit a scheduler step,
        # so start-up stops with this ValueError ("max_tokens_per_mm_item=N is larger than max_num_batched_tokens=M"
        # in 0.11+); a configuration check, before any memory is measured
        "vllm_chunked_mm_budget", "vllm", ("Chunked MM input disabled but",),
        r"Chunked MM input disabled but max_tokens_per_mm_item", role="not_oom", priority=6,
        fields=(Field("max_tokens_per_mm_item", r"max_tokens_per_mm_item(?: \(|=)([0-9]{1,20})", "int"),
                Field("max_num_batched_tokens", r"larger than max_num_batched_tokens(?:\s{0,4}\(|=)([0-9]{1,20})",
                      "int")),
        message="ValueError: Chunked MM input disabled but max_tokens_per_mm_item ({N}) is larger than "
                "max_num_batched_tokens ({M}). Please increase max_num_batched_tokens.",
        versions="vLLM V1",
        causes=("the model's largest multimodal item (max_tokens_per_mm_item) does not fit one scheduler step and "
                "the model cannot split it (chunked MM input disabled): a start-up check, not a shortage",),
        fixes=("--max-num-batched-tokens at least max_tokens_per_mm_item",
               "--limit-mm-per-prompt '{\"image\": 0}' for text-only serving (no item to fit)")),
    Signature(
        # model_executor/models/registry.py _ModelRegistry._raise_for_unsupported: `raise ValueError(f"Model
        # architectures {architectures} are not supported for now. Supported architectures: {all_supported_archs}")`
        # (config.py's pydantic check prints it as "Value error, ..."); SGLang's registry borrowed the wording. The
        # config names an architecture this build has no class for: nothing was loaded
        "vllm_arch_unsupported", "vllm", ("Model architectures",),
        r"Model architectures \[[^\]\n]{1,400}\] are not supported for now", role="not_oom", priority=6,
        fields=(Field("architectures", r"Model architectures \[([^\]\n]{1,400})\]", "str"),),
        message="ValueError: Model architectures ['{arch}'] are not supported for now. Supported architectures: [...]",
        versions="vLLM 0.2-current (0.8+: 'Value error, ...' from the config's validation)",
        causes=("the model's config.json names an architecture this vLLM build has no implementation for (a model "
                "newer than the build, or one vLLM does not implement): not a memory problem",),
        fixes=("update vLLM to a release whose supported-models list has this architecture",
               "--model-impl transformers (vLLM's Transformers backend, for a model transformers itself can run; "
               "--trust-remote-code for a model whose own code defines it)")),
    Signature(
        # transformers_utils/config.py get_config: with config_format 'auto', neither config.json nor params.json
        # at the model path: `raise ValueError("Could not detect config format for no config file found. ...")`
        "vllm_no_config", "vllm", ("Could not detect config format",),
        r"Could not detect config format for no config file found", role="not_oom", priority=6,
        message="ValueError: Could not detect config format for no config file found. With config_format 'auto', "
                "ensure your model has either config.json (HF format) or params.json (Mistral format).",
        versions="vLLM 0.6-current",
        causes=("the model path or Hub repository holds no config.json (HF) or params.json (Mistral): a wrong path, "
                "a snapshot without its config, a diffusion or GGUF-only repository; nothing was loaded",),
        fixes=("point --model at the directory (or Hub repository) that holds config.json, e.g. the snapshot "
               "directory itself; for a GGUF file pass the .gguf path and --tokenizer <the original repository>",)),
    Signature(
        # model_executor/layers/linear.py UnquantizedLinearMethod.create_weights: the layer's parameter is created
        # at model construction; a torch.cuda.OutOfMemoryError there is logged ("Failed to create unquantized linear
        # weights: <PyTorch's message>", where PyTorch's own signature wins the line) and re-raised as this
        "vllm_linear_weights", "vllm", ("Failed to create unquantized linear weights",),
        r"Failed to create unquantized linear weights", stage="weights", priority=4,
        message="RuntimeError: Failed to create unquantized linear weights. This may be caused by insufficient "
                "memory to allocate the weight.",
        versions="vLLM 0.7-current (V0 and V1)",
        causes=("the model's weights do not fit in the share of the device vLLM may use on each GPU",),
        fixes=("--tensor-parallel-size N (the weights split across GPUs)", "a quantized checkpoint (AWQ, GPTQ, FP8)",
               "--gpu-memory-utilization higher when another engine shares the GPU", "a smaller model")),
    # ---------------------------------------------------------------------------------------------- SGLang
    Signature(
        "sglang_not_enough_memory", "sglang", ("Not enough memory. Please try to increase --mem-fraction-static",),
        r"Not enough memory\. Please try to increase --mem-fraction-static", stage="kv_cache", priority=7,
        fields=(Field("mem_fraction_static", r"mem_fraction_static=([0-9.]{1,24})", "float"),),
        message="RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
        versions="SGLang 2024-2026 (2026 appends 'Current value: mem_fraction_static={x}')",
        causes=("the weights take all of mem_fraction_static x total memory: no room for the KV pool",),
        fixes=("--mem-fraction-static HIGHER (the pool is what is left after the weights)",
               "a smaller or quantized model", "--tp N")),
    Signature(
        # mem_cache/common.py alloc_req_slots (schedule_batch.py before): ReqToTokenPool.alloc returned None. The
        # pool holds one row per running request (sized from --max-running-requests), not the KV slots; a hybrid
        # (Mamba) pool also needs a state per request, and its alloc fails when either runs out
        "sglang_req_slots", "sglang", ("alloc_req_slots runs out of memory",),
        r"alloc_req_slots runs out of memory", stage="kv_cache", priority=7,
        fields=(Field("req_pool_available", r"available_size\(\)=([0-9]{1,20})", "int"),
                Field("num_reqs", r"(?:num_reqs|len\(reqs\))=([0-9]{1,20})", "int")),
        message="RuntimeError: alloc_req_slots runs out of memory. Please set a smaller number for "
                "`--max-running-requests`. req_to_token_pool.available_size()={n}, num_reqs={m},",
        versions="SGLang 2024-2026",
        causes=("the scheduler admitted more requests than the request-to-token pool has rows (one row per running "
                "request): the pool's rows, not the GPU's memory, ran out",),
        fixes=("--max-running-requests smaller (the pool's rows)",)),
    Signature(
        # SGLang 0.1.x (2024-01 to 2024-05): router/infer_batch.py Batch.prepare_for_extend takes
        # req_pool_indices = self.req_to_token_pool.alloc(bs), and ReqToTokenPool.alloc returns None when fewer rows
        # are free than the batch has requests, so the next line raises on None. router/model_runner.py
        # init_memory_pool sized that pool int(max_total_num_token / context_len * 256) rows: a lower
        # --mem-fraction-static (fewer KV tokens) leaves fewer rows, and a gen() over many choices forks a request
        # per choice
        "sglang_req_slots_v01", "sglang", ("req_pool_indices.cpu()",),
        r"req_pool_indices_cpu = req_pool_indices\.cpu\(\)", stage="kv_cache", priority=6,
        message="req_pool_indices_cpu = req_pool_indices.cpu().numpy() / AttributeError: 'NoneType' object has no "
                "attribute 'cpu'",
        versions="SGLang 0.1.x (router/infer_batch.py prepare_for_extend)",
        causes=("the request-to-token pool had no free row for the batch (ReqToTokenPool.alloc returned None): its "
                "rows are max_total_num_token / context_len x 256, so a smaller KV pool gives fewer of them",),
        fixes=("--mem-fraction-static larger (back to the default or above): the pool's rows scale with the KV "
               "tokens it leaves", "fewer requests at once (a gen() with thousands of choices forks one per "
               "choice): smaller batches of choices")),
    Signature(
        # managers/schedule_batch.py alloc_token_slots (mem_cache/common.py from 2025): the token-to-KV pool gave no
        # slots for the batch even after evicting the radix cache: "{Prefill|Decode} out of memory. Try to lower
        # your batch size. / Try to allocate N tokens. / Avaliable tokens: M ..." ("Out of memory." once both
        # phases share it). The KV pool's token slots ran out, not the GPU's memory: the scheduler admitted more
        # than the pool holds (a page size above 1 counted by tokens, a leaked pool, retracted requests)
        "sglang_token_slots", "sglang", ("out of memory. Try to lower your batch size", "Out of memory. Try to lower "
                                         "your batch size"),
        r"(?:Prefill|Decode|^|[^A-Za-z]) ?[Oo]ut of memory\. Try to lower your batch size", stage="kv_cache",
        priority=7,
        fields=(Field("requested_tokens", r"Try to allocate ([0-9]{1,20}) tokens", "int"),
                Field("available_tokens", r"Ava(?:i)?liable tokens: ?([0-9]{1,20})", "int")),
        message="RuntimeError: Prefill out of memory. Try to lower your batch size. Try to allocate {N} tokens. "
                "Avaliable tokens: {M}",
        versions="SGLang 2024-2026 (exit(1) before 2025, RuntimeError after)",
        causes=("the KV cache pool's token slots ran out for the batch the scheduler admitted (its count of free "
                "slots disagreed with the pool: a page size above 1, a leak, retraction): the pool, not the GPU's "
                "free memory",),
        fixes=("--max-running-requests smaller and --chunked-prefill-size smaller (smaller batches, more headroom in "
               "the pool)", "--page-size 1 if a larger page size is set (slots counted by tokens)",
               "--mem-fraction-static higher (a larger KV pool), where the weights leave room",
               "a newer SGLang (the scheduler's slot accounting fixes)")),
    Signature(
        "sglang_no_kv_room", "sglang", ("leave no GPU memory for the KV cache",),
        r"Loaded weights leave no GPU memory for the KV cache", stage="kv_cache", priority=7,
        fields=(Field("mem_fraction_static", r"--mem-fraction-static=([0-9.]{1,24})", "float"),),
        message="ValueError: Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static={x}.",
        versions="SGLang 2026 (pool_configurator.py)",
        causes=("the weights take all of mem_fraction_static x total memory: no room for the KV pool",),
        fixes=("--mem-fraction-static HIGHER (above the weights' share of the GPU)", "--tp N", "a quantized model")),
    Signature(
        "sglang_profiled_negative", "sglang", ("is larger than the profiled value",),
        r"max_total_tokens=[0-9]{1,20} is larger than the profiled value -[0-9]{1,20}", stage="kv_cache", priority=6,
        fields=(Field("max_total_tokens", r"max_total_tokens=([0-9]{1,20})", "int"),),
        message="max_total_tokens={req} is larger than the profiled value {profiled}. Use the profiled value instead.",
        causes=("a negative profiled KV pool: the weights exceed the static memory budget",),
        fixes=("--mem-fraction-static higher", "--tp N", "a quantized model")),
    Signature(
        # SGLang's memory release / resume for RL trainers (release_memory_occupation / resume_memory_occupation,
        # --enable-memory-saver): sgl-project/torch_memory_saver re-creates the physical pages of its regions (the
        # weights, the KV pool sized by mem_fraction_static) with cuMemCreate; its CURESULT_CHECK prints
        # "[torch_memory_saver.cpp] CUresult error: <n> (<cuGetErrorString>) file=.. func=cu_mem_create line=.." and
        # exits (older: "CUresult error  result=<n> file=.. func=cu_mem_create"); 2 is CUDA_ERROR_OUT_OF_MEMORY
        "sglang_memory_saver_oom", "sglang", ("[torch_memory_saver.cpp] CUresult error",),
        r"\[torch_memory_saver\.cpp\] CUresult error(?::\s{0,4}2 \(out of memory\)|\s{1,4}result=2\b)",
        stage="kv_cache", backend="CUDA", priority=8,
        message="[torch_memory_saver.cpp] CUresult error: 2 (out of memory)  file=csrc/utils.h func=cu_mem_create "
                "line={n}",
        versions="torch_memory_saver 0.0.x (SGLang --enable-memory-saver; verl / slime rollouts), both forms",
        causes=("SGLang's memory saver could not re-create its released memory (the weights, the KV pool sized by "
                "mem_fraction_static) on resume: what shares the GPU (the trainer) still holds it",),
        fixes=("--mem-fraction-static lower (SGLang's share, re-created on resume; in verl "
               "actor_rollout_ref.rollout.gpu_memory_utilization)",
               "offload the trainer's parameters / optimizer before the rollout resumes, or more GPUs")),
    Signature(
        # model_executor/cuda_graph_runner.py CudaGraphRunner.__init__: `raise Exception(f"Capture cuda graph failed:
        # {e}\n{CUDA_GRAPH_CAPTURE_FAILED_MSG}")`: PyTorch's message on the same line when the capture ran out
        "sglang_capture_oom", "sglang", ("Capture cuda graph failed",),
        r"Capture cuda graph failed: [^\n]{0,80}?(?:out of memory|Out of memory)", stage="compute", priority=9,
        fields=TORCH_FIELDS,
        message="Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate {REQ}. GPU {DEV} has a "
                "total capacity of {TOTAL} of which {FREE} is free. ... / Possible solutions: 1. set "
                "--mem-fraction-static to a smaller value (e.g., 0.8 or 0.7) 2. set --cuda-graph-max-bs to a smaller "
                "value (e.g., 16) 3. disable torch compile by not using --enable-torch-compile 4. disable CUDA graph "
                "by --disable-cuda-graph. (Not recommended. Huge performance loss)",
        versions="SGLang 0.3-current (the KV pool is allocated first; the capture runs on the (1 - "
                 "mem_fraction_static) share left); 2026 builds name the flags --cuda-graph-max-bs-decode and "
                 "--cuda-graph-backend-decode=disabled, and the piecewise prefill capture has its own list "
                 "(--piecewise-cuda-graph-max-tokens, --disable-piecewise-cuda-graph)",
        causes=("the KV pool was allocated, then CUDA-graph capture (its batch sizes up to --cuda-graph-max-bs) ran "
                "out in the (1 - mem_fraction_static) share left outside the pool",),
        fixes=("--mem-fraction-static lower (a smaller KV pool leaves the capture more room)",
               "--cuda-graph-max-bs smaller", "--disable-cuda-graph (slower decoding)")),
    Signature(
        # the same raise with a cause that is no allocation failure (a kernel illegal under capture, a shape check):
        # CUDA-graph capture failed for a reason the memory knobs its advice lists do not touch
        "sglang_capture_failed", "sglang", ("Capture cuda graph failed",),
        # the error after the colon decides: an out-of-memory is sglang_capture_oom's, and CUDA's own errors that have
        # a signature of their own (no kernel image for the device, an illegal memory access) are read as those
        r"Capture cuda graph failed: (?![^\n]{0,80}?(?:out of memory|Out of memory|OutOfMemory|no kernel image is "
        r"available|illegal memory access))", role="not_oom",
        priority=4,
        message="Exception: Capture cuda graph failed: {cause}",
        versions="SGLang 0.3-current",
        causes=("CUDA-graph capture failed on the error after the colon (an operation not allowed under capture, a "
                "shape mismatch, a torch.compile incompatibility), not on memory",),
        fixes=("--disable-cuda-graph to confirm (slower decoding), then the fix for the error named",
               "drop --enable-torch-compile if it is set")),
    Signature(
        # managers/utils.py validate_input_length (scheduler.py handle_generate_request): a prompt of
        # max_req_input_len tokens or more is aborted; max_req_input_len = min(context_len, max_total_num_tokens)
        # - 6 (tp_worker.py: max_req_len = min(context_len - 1, max_total_num_tokens - 1), input 5 fewer)
        "sglang_input_too_long", "sglang", ("exceeds the maximum allowed length",),
        r"Input length \([0-9]{1,20} tokens\) exceeds the maximum allowed length \([0-9]{1,20} tokens\)", priority=6,
        fields=(Field("input_tokens", r"Input length \(([0-9]{1,20}) tokens\)", "int"),
                Field("max_req_input_len", r"maximum allowed length \(([0-9]{1,20}) tokens\)", "int")),
        message="Input length ({N} tokens) exceeds the maximum allowed length ({M} tokens). Use a shorter input or "
                "enable --allow-auto-truncate.",
        versions="SGLang 0.4.1-current (0.4.0 truncated: 'Request length is longer than the KV cache pool size or "
                 "the max context length. Truncated!!!')",
        causes=("SGLang keeps running: it aborts (or with --allow-auto-truncate cuts) each prompt over the limit",),
        fixes=("--context-length at most the KV pool's tokens (max_total_num_tokens), so the limit is stated",
               "--mem-fraction-static higher (a larger KV pool)", "--kv-cache-dtype fp8_e4m3 (twice the tokens)",
               "--allow-auto-truncate (cut long prompts instead of aborting)")),
    Signature(
        # vllm-metal (vLLM's Apple Silicon plugin, v1 worker's paged-attention plan): kv_budget = metal_limit x fraction
        # - model_memory - overhead (the profile run's peak), each printed in decimal GB (/ 1e9); older builds name
        # VLLM_METAL_MEMORY_FRACTION, newer ones --gpu-memory-utilization (currently X)
        "vllm_metal_kv_budget", "vllm", ("not enough Metal memory for KV cache",),
        r"not enough Metal memory for KV cache", stage="kv_cache", backend="Metal", priority=6, span=4,
        fields=(Field("total_bytes", r"metal_limit=" + SIZE, "size_as_written"),
                Field("memory_fraction", r"\bfraction=([0-9.]{1,12})", "float"),
                Field("model_required_bytes", r"model_memory=" + SIZE, "size_as_written"),
                Field("overhead_bytes", r"overhead=" + SIZE, "size_as_written"),
                Field("kv_available_bytes", r"kv_budget=(-?" + SIZE[1:], "size_as_written")),
        message="ValueError: Paged attention: not enough Metal memory for KV cache. metal_limit={L}GB, fraction={F}, "
                "usable_metal={U}GB, model_memory={W}GB, overhead={O}GB, kv_budget={B}GB. Mitigations: ...",
        versions="vllm-metal (Apple Silicon)",
        causes=("the weights and the profile run's peak (overhead) leave no KV cache within metal_limit x fraction",),
        fixes=("a smaller or more quantized model",)),
    Signature(
        "sglang_retract", "sglang", ("KV cache pool is full. Retract requests",),
        r"KV cache pool is full\. Retract requests", role="not_oom", priority=3,
        message="KV cache pool is full. Retract requests. #retracted_reqs: {n}, #new_token_ratio: {a} -> {b}",
        causes=("the KV pool is full at run time and requests are re-queued (a warning, not a crash)",),
        fixes=("--schedule-conservativeness 1.3 if frequent", "--max-running-requests lower")),
    Signature(
        # FlashInfer include/flashinfer/allocator.h AlignedAllocator::aligned_alloc: its plans (PrefillPlan's split-KV
        # temporaries batch_prefill_tmp_v / _s) are carved out of ONE workspace buffer the engine allocated once
        # (SGLang envs.SGLANG_FLASHINFER_WORKSPACE_SIZE, before it global_config.flashinfer_workspace_size, 384 MiB;
        # vLLM's FlashInfer backend its own): "Failed to allocate memory for X with size N and alignment A in
        # AlignedAllocator" (2024), later "Buffer overflow when allocating memory for X with size N and alignment
        # A, but only M bytes available in AlignedAllocator. Increase the workspace buffer size."
        "flashinfer_workspace", "flashinfer", ("in AlignedAllocator",),
        r"allocating memory for \w{1,80} with size [0-9]{1,20} and alignment|"
        r"Failed to allocate memory for \w{1,80} with size [0-9]{1,20} and alignment [0-9]{1,6} in AlignedAllocator",
        stage="buffer_limit", priority=6,
        fields=(Field("requested_bytes", r"with size ([0-9]{1,20}) and alignment", "bytes"),
                Field("max_buffer_bytes", r"but only ([0-9]{1,20}) bytes available", "bytes")),
        message="RuntimeError: Failed to allocate memory for batch_prefill_tmp_v with size {N} and alignment 16 in "
                "AlignedAllocator / Buffer overflow when allocating memory for {X} with size {N} and alignment 16, "
                "but only {M} bytes available in AlignedAllocator. Increase the workspace buffer size.",
        versions="FlashInfer (SGLang's and vLLM's FlashInfer attention backends)",
        causes=("the attention plan's temporaries outgrew the fixed FlashInfer workspace the engine allocated at "
                "start-up: not the device's memory",),
        fixes=("SGLANG_FLASHINFER_WORKSPACE_SIZE=<bytes> larger (SGLang; older releases: "
               "global_config.flashinfer_workspace_size)",
               "--chunked-prefill-size smaller (SGLang) / --max-num-batched-tokens smaller (vLLM): a smaller prefill "
               "plan", "another attention backend (--attention-backend triton or fa3)")),
    # -------------------------------------------------------------------------------------------- llama.cpp
    Signature(
        # the line without its function name: quoted in prose or cut at the left (koboldcpp#714); its own words
        # ("allocating N MiB on device D: cudaMalloc failed") are ggml-cuda.cu ggml_backend_cuda_buffer_type_alloc_buffer's
        "ggml_cuda_malloc", "llama.cpp", ("alloc_buffer: allocating", "Malloc failed"),
        r"(?:_buffer_type_alloc_buffer: )?allocating [0-9.]{1,24} MiB on device [0-9]{1,20}: (?:cuda|hip|musa)Malloc "
        r"failed",
        backend="CUDA", priority=4,
        fields=(Field("requested_bytes", r"allocating ([0-9.]{1,24}) MiB", "MiB"),
                Field("device", r"on device ([0-9]{1,20})", "int")),
        message="ggml_backend_cuda_buffer_type_alloc_buffer: allocating {MIB} MiB on device {DEV}: cudaMalloc "
                "failed: out of memory",
        versions="llama.cpp (CUDA, ROCm/HIP, MUSA); followed by a line naming the stage",
        causes=LLAMA_KV_FIXES[:0] + ("the buffer named on the following line (weights, KV cache or compute) does "
                                     "not fit in the device's free memory",),
        fixes=LLAMA_WEIGHT_FIXES[:1] + LLAMA_KV_FIXES[:2] + LLAMA_COMPUTE_FIXES[:1]),
    Signature(
        "ggml_gallocr_fail", "llama.cpp", ("ggml_gallocr_reserve_n",),
        r"ggml_gallocr_reserve_n(?:_impl)?: failed to allocate \S{1,200} buffer of size [0-9]{1,20}", stage="compute",
        priority=3,
        fields=(Field("requested_bytes", r"buffer of size ([0-9]{1,20})", "bytes"),
                Field("buffer", r"failed to allocate (\S{1,200}) buffer", "str")),
        message="ggml_gallocr_reserve_n: failed to allocate {BUFT} buffer of size {B}",
        versions="llama.cpp (2026: ggml_gallocr_reserve_n_impl)",
        causes=("the compute graph's buffer (scales with -ub, -c and the model's width) does not fit",),
        fixes=LLAMA_COMPUTE_FIXES),
    Signature(
        "ggml_alloc_tensor_range", "llama.cpp", ("alloc_tensor_range: failed to allocate",),
        r"alloc_tensor_range: failed to allocate \S{1,200} buffer of size [0-9]{1,20}", priority=3,
        fields=(Field("requested_bytes", r"buffer of size ([0-9]{1,20})", "bytes"),
                Field("buffer", r"failed to allocate (\S{1,200}) buffer", "str")),
        message="alloc_tensor_range: failed to allocate {BUFT} buffer of size {B}",
        causes=("a weights or KV tensor buffer does not fit (the next line says which)",),
        fixes=LLAMA_WEIGHT_FIXES[:1] + LLAMA_KV_FIXES[:1]),
    Signature(
        # ggml-backend.cpp ggml_backend_cpu_buffer_type_alloc_buffer logs under its own name only when the host
        # allocation failed ("%s: failed to allocate buffer of size %zu"): the name and "failed to allo" place it even
        # where a pasted line is cut short (a GitHub title stops at 256 characters, ollama#16968)
        "ggml_cpu_alloc_fail", "llama.cpp", ("cpu_buffer_type_alloc_buffer: failed to allo",),
        r"cpu_buffer_type_alloc_buffer: failed to allo", stage="host_ram", priority=3,
        fields=(Field("requested_bytes", r"buffer of size ([0-9]{1,20})", "bytes"),),
        message="ggml_backend_cpu_buffer_type_alloc_buffer: failed to allocate buffer of size {B}",
        causes=("host RAM: the CPU part (weights not offloaded, -nkvo KV, compute) does not fit",),
        fixes=("more layers on the GPU (-ngl)", "a smaller quant", "-c smaller", "more RAM or swap")),
    Signature(
        "llama_kv_alloc_fail", "llama.cpp", ("failed to allocate buffer for kv cache",
                                             "llama_kv_cache_init() failed", "failed to allocate buffer for rs cache"),
        r"failed to allocate buffer for (?:kv|rs) cache|llama_kv_cache_init\(\) failed", role="stage",
        stage="kv_cache", priority=6,
        message="llama_kv_cache_init: failed to allocate buffer for kv cache / llama_init_from_model: failed to "
                "initialize the context: failed to allocate buffer for kv cache",
        versions="llama.cpp 2024 (llama_new_context_with_model) and 2025+ (llama_init_from_model, exceptions)",
        causes=("the KV cache (context x parallel slots x cache type) does not fit after the weights",),
        fixes=LLAMA_KV_FIXES),
    Signature(
        # llama.cpp kv_cache_init, from PR #473 (b183, 7a9b6c3a) until the ggml-backend integration, PR #4766 (b1843,
        # e7e4df03): LLAMA_LOG_ERROR("%s: failed to allocate memory for kv cache\n") when the cache's context cannot be
        # made; the cache there is 2 x n_layer x n_ctx x n_embd_gqa elements of f16 (--memory-f32: f32)
        "llama_kv_cache_old", "llama.cpp", ("failed to allocate memory for kv cache",
                                            "failed to allocate memory for KV cache"),
        r"failed to allocate memory for (?:kv|KV) cache", stage="kv_cache", priority=5,
        message="kv_cache_init: failed to allocate memory for kv cache",
        versions="llama.cpp b183-b1842 (2023; kv_cache_init before the ggml-backend integration, PR #4766)",
        causes=("the KV cache (2 x n_layer x n_ctx x n_embd_gqa, f16) could not be allocated",),
        fixes=("-c smaller (the KV cache is linear in the context)", "a current llama.cpp build (-ctk q8_0 -ctv q8_0 "
               "for a cache of 8.5/16 the size)")),
    Signature(
        "llama_compute_buffers", "llama.cpp", ("failed to allocate compute buffers", "failed to allocate compute pp",
                                               "failed to allocate compute tg"),
        r"failed to allocate compute (?:buffers|pp buffers|tg buffers)", role="stage", stage="compute", priority=6,
        message="llama_new_context_with_model: failed to allocate compute buffers / graph_reserve: failed to "
                "allocate compute buffers / failed to initialize the context: failed to allocate compute pp buffers",
        causes=("the compute graph buffer (-ub x width, attention over -c) does not fit after weights and KV",),
        fixes=LLAMA_COMPUTE_FIXES),
    Signature(
        "llama_model_buffer", "llama.cpp", ("error loading model: unable to allocate", "unable to allocate backend buffer",
                                            "error loading model: vk::", "Failed to allocate buffer type"),
        # llama-model.cpp load_tensors throws "unable to allocate %s buffer" and llama.cpp's loader prints it after
        # "error loading model: " (its only "unable to allocate" message), so that prefix alone places it even where
        # the buffer's name was edited or cut ("unable to allocate CUDA0 <and Vulcan0> buffer", lmstudio#790).
        # src/llama.cpp llama_model_load prints any exception of load_tensors the same way (hyperparameters and
        # vocabulary have their own prefixes): Vulkan's own out-of-memory while the weights are uploaded
        # (vulkan.hpp's vk::OutOfDeviceMemoryError, "vk::Queue::submit: ErrorOutOfDeviceMemory") is the weights too
        # llama-model.cpp load_tensors (llama.cpp 2025 builds before "unable to allocate %s buffer", ik_llama.cpp
        # to date) logs "Failed to allocate buffer type %s" for the model buffer it could not get, then throws
        # "unable to allocate backend buffer": the line may stand alone in a paste (ik_llama.cpp PR #1464)
        r"unable to allocate (?:\S{1,200} )?(?:backend )?buffer|error loading model: unable to allocate|"
        r"error loading model: vk::\w{1,40}::\w{1,40}: ErrorOutOfDeviceMemory|"
        r"Failed to allocate buffer type \S{1,200}", role="stage",
        stage="weights", priority=6,
        fields=(Field("buffer", r"unable to allocate (\S{1,200}) buffer", "str"),),
        message="llama_model_load: error loading model: unable to allocate CUDA0 buffer",
        causes=("the model's weights on this device do not fit",),
        fixes=LLAMA_WEIGHT_FIXES),
    Signature(
        "llama_pp_retry", "llama.cpp", ("retrying without pipeline parallelism",),
        r"retrying without pipeline parallelism", role="recovered", priority=5,
        message="sched_reserve: compute buffer allocation failed, retrying without pipeline parallelism",
        causes=("pipeline parallelism multiplies compute buffers (n_copies); the engine retries without it",),
        fixes=("nothing, when the load then succeeds; else -ub smaller or rebalance -ts",)),
    Signature(
        "ggml_cuda_error_oom", "llama.cpp", ("CUDA error: out of memory", "ROCm error: out of memory",
                                             "MUSA error: out of memory"),
        r"(?<!Error: )(?:CUDA|ROCm|MUSA) error: out of memory", backend="CUDA", priority=2,
        stage="compute", fields=(Field("device", r"current device: ([0-9]{1,4})", "int"),),
        message="CUDA error: out of memory / current device: {DEV}, in function {FUNC} at {FILE}:{LINE}",
        versions="llama.cpp ggml_cuda_error, 2024+ (buffers of weights and KV return NULL instead: their failure "
                 "is 'cudaMalloc failed'; what aborts here is the memory pool or a kernel's own allocation)",
        causes=("a CUDA allocation inside a kernel or the memory pool failed during evaluation",),
        fixes=("-ub smaller, -c smaller, -fa on", "leave headroom for the pool (fewer layers, --fit-target)")),
    Signature(
        # ggml-cuda.cu of 2023 (llama.cpp 8e672ef, Nov 2023): CUDA_CHECK prints "CUDA error %d at %s:%d: %s" and
        # wraps every cudaMalloc: the pool (ggml_cuda_pool_malloc, compute), ggml_cuda_transform_tensor (weights),
        # ggml_cuda_assign_buffers_impl (KV cache, scratch). The line alone names none of them
        "ggml_cuda_error_oom_2023", "llama.cpp", ("CUDA error 2 at",),
        # the path may be broken by a re-wrap (a narrow terminal, a paste): anything up to the line's ": out of memory"
        r"(?<!Error: )CUDA error 2 at \S[^\n]{0,300}?: out of memory", backend="CUDA", priority=2,
        fields=(Field("device", r"current device: ([0-9]{1,4})", "int"),),
        message="CUDA error 2 at ggml-cuda.cu:{LINE}: out of memory / current device: {DEV}",
        versions="llama.cpp ggml-cuda.cu, 2023 (before backend buffers); also in Ollama 0.1.x runners",
        causes=("a cudaMalloc failed: the weights offloaded, the KV cache or the compute pool (this build's "
                "message does not say which)",),
        fixes=("-ngl fewer layers on the GPU (Ollama: num_gpu lower; llama-cpp-python and text-generation-webui: "
               "n_gpu_layers)", "-c smaller (Ollama: num_ctx; llama-cpp-python: n_ctx)", "-ub smaller")),
    Signature(
        # the Kompute backend's allocator (GPT4All's llama.cpp fork, Oct 2023+, and llama.cpp's ggml-kompute.cpp from
        # PR #4456, Jan 2024, until its removal): ggml_vk_allocate_device_memory prints "Error allocating memory
        # <vk::Result>" and throws "Error allocating vulkan memory." (the loader then prints it after "error loading
        # model: "). Not ggml-vulkan: GGML_VK_FORCE_MAX_ALLOCATION_SIZE and the -ub / -b of ggml-vulkan's compute
        # buffers do not apply; what Kompute holds is the offloaded layers (GPT4All: GPT4All(..., ngl=N, device=...)
        # in gpt4all-bindings/python gpt4all.py, the app's GPU Layers and Device settings)
        "kompute_alloc", "llama.cpp", ("Error allocating vulkan memory", "Error allocating memory "),
        r"Error allocating vulkan memory|Error allocating memory (?:ErrorOutOfDeviceMemory|ErrorOutOfHostMemory)",
        backend="Kompute", priority=4, stage="weights",
        message="Error allocating memory ErrorOutOfDeviceMemory / error loading model: Error allocating vulkan memory.",
        versions="GPT4All (Kompute, 2.5+ and its Python bindings), llama.cpp GGML_KOMPUTE builds (2024)",
        causes=("the Kompute backend could not allocate Vulkan device memory for the layers it offloads: the "
                "model's offloaded part does not fit the device it picked",),
        fixes=("fewer layers on the GPU (GPT4All: ngl=N in GPT4All(...) or the app's GPU Layers; llama.cpp: -ngl)",
               "a smaller model or quantization, or the CPU (GPT4All: device='cpu')",
               "the GPU by name where another Vulkan device (a display adapter, an integrated GPU) was picked "
               "(GPT4All: device='<the GPU's name>')")),
    Signature(
        "ggml_vulkan_alloc", "llama.cpp", ("ggml_vulkan: Device memory allocation of size",
                                           "ErrorOutOfDeviceMemory", "VK_ERROR_OUT_OF_DEVICE_MEMORY"),
        r"Device memory allocation of size [0-9]{1,20} failed|ErrorOutOfDeviceMemory|VK_ERROR_OUT_OF_DEVICE_MEMORY",
        backend="Vulkan", priority=3,
        fields=(Field("requested_bytes", r"allocation of size ([0-9]{1,20}) failed", "bytes"),),
        message="ggml_vulkan: Device memory allocation of size {B} failed. / ggml_vulkan: "
                "vk::Device::allocateMemory: ErrorOutOfDeviceMemory",
        causes=("device memory, or the driver's per-allocation limit (maxMemoryAllocationSize)",),
        fixes=("-ub / -b smaller", "-ngl fewer", "GGML_VK_FORCE_MAX_ALLOCATION_SIZE for the per-allocation cap")),
    Signature(
        # Mesa RADV (src/amd/vulkan/winsys/amdgpu/radv_amdgpu_cs.c, the submit path) prints this when the kernel's
        # command-submission ioctl returns -ENOMEM; the kernel logs it too (drivers/gpu/drm/amd/amdgpu/amdgpu_cs.c
        # amdgpu_cs_ioctl: "Not enough memory for command submission!"): the buffers the submission uses could not all
        # be made resident, in VRAM or, on an APU, in the GTT of system memory (bounded by amdgpu.gttsize and TTM's
        # ttm.pages_limit, half of RAM by default: drivers/gpu/drm/ttm/ttm_tt.c). vulkan.hpp then throws
        # vk::DeviceLostError from Queue::submit, which llama.cpp reports ("error loading model: vk::Queue::submit:
        # ErrorDeviceLost" while the weights upload; an abort in ggml_vk_synchronize while a graph runs)
        "radv_cs_enomem", "llama.cpp", ("Not enough memory for command submission",),
        r"radv/amdgpu: Not enough memory for command submission|amdgpu_cs_ioctl[^\n]{0,40}Not enough memory for "
        r"command submission", backend="Vulkan", priority=3,
        message="radv/amdgpu: Not enough memory for command submission. / vk::Queue::submit: ErrorDeviceLost",
        versions="Mesa RADV (AMD's Vulkan driver on Linux) under llama.cpp's Vulkan backend (Ollama, LM Studio, Jan)",
        causes=("the AMD kernel driver could not make the submission's buffers resident (amdgpu_cs_ioctl -ENOMEM; "
                "Mesa RADV: 'Not enough memory for command submission'), and Vulkan then reports the device lost: "
                "VRAM, or on an APU the GTT share of system memory, is exhausted",),
        fixes=("-ngl fewer layers on the GPU", "-c smaller (the KV cache is resident with the weights)")),
    Signature(
        # ggml-vulkan.cpp ggml_vk_create_buffer: `if (size > device->max_buffer_size) throw
        # vk::OutOfDeviceMemoryError("Requested buffer size exceeds device buffer size limit")`; builds of 2024-25
        # checked max_memory_allocation_size (maxMemoryAllocationSize) instead and said "device memory allocation
        # limit": either way one buffer over a per-buffer limit of the driver, refused before any allocation
        "ggml_vulkan_buffer_limit", "llama.cpp", ("Requested buffer size exceeds device buffer size limit",
                                                  "Requested buffer size exceeds device memory allocation limit"),
        # (not the driver's error ggml_vk_host_malloc prints after "Failed to allocate pinned memory.": a refused
        # pinned host buffer the caller replaces with a CPU one, read here where a log run onto one line holds both;
        # on lines of their own reader._cause passes over it)
        r"(?<!pinned memory\. ggml_vulkan: )Requested buffer size exceeds device (?:buffer size|memory allocation) "
        r"limit", stage="buffer_limit",
        backend="Vulkan", priority=4,
        message="Requested buffer size exceeds device buffer size limit (older: device memory allocation limit)",
        causes=("one buffer is larger than the Vulkan driver's maxBufferSize (maxMemoryAllocationSize in older "
                "builds)",),
        fixes=("-ub smaller", "-c smaller", "split the model across more buffers (-ngl)")),
    Signature(
        # (ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY: Level Zero's own code under the SYCL runtime, zeMemAllocDevice)
        "ggml_sycl_oom", "llama.cpp", ("PI_ERROR_OUT_OF_RESOURCES", "UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY",
                                       "PI_ERROR_OUT_OF_HOST_MEMORY", "UR_RESULT_ERROR_OUT_OF_HOST_MEMORY",
                                       "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY"),
        r"PI_ERROR_OUT_OF_RESOURCES|UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY|PI_ERROR_OUT_OF_HOST_MEMORY|"
        r"UR_RESULT_ERROR_OUT_OF_HOST_MEMORY|ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY", backend="SYCL", priority=3,
        message="Native API failed. Native API returns: -5 (PI_ERROR_OUT_OF_RESOURCES) / "
                "UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY",
        versions="llama.cpp SYCL backend (Intel GPUs; also ipex-llm)",
        causes=("the Intel GPU's memory (or the driver's allocation limit) is exhausted; OUT_OF_HOST_MEMORY is the "
                "host memory Level Zero allocates for the device's work (USM host and staging buffers)",),
        # Level Zero refuses one allocation above the device's max_mem_alloc_size (4 GB under the stateful addressing
        # model: compute-runtime's "Allocations greater than 4GB") unless the Unified Runtime's L0 adapter is told
        # UR_L0_ENABLE_RELAXED_ALLOCATION_LIMITS=1 (intel/llvm sycl/test-e2e/Plugin/max_malloc.cpp); ggml-sycl caps
        # its buffers at get_max_mem_alloc_size (ggml_backend_sycl_buffer_type_get_max_size), not an op's pool
        # temporaries (llama.cpp#25502: MUL_MAT with 27 GB free, passing with it)
        fixes=("-c smaller", "-ngl fewer layers on the GPU", "-ub smaller",
               "UR_L0_ENABLE_RELAXED_ALLOCATION_LIMITS=1 where the device had memory free: Level Zero refuses one "
               "allocation over 4 GB (the device's max_mem_alloc_size) without it")),
    Signature(
        # ggml-sycl.cpp ggml_backend_sycl_buffer_type_alloc_buffer: GGML_LOG_ERROR("%s: can't allocate %lu Bytes of
        # memory on device\n", __func__, size) when sycl::malloc_device returns null, then NULL to ggml-alloc: the
        # SYCL counterpart of ggml-cuda's "cudaMalloc failed" line, for weights, KV cache and compute alike (the
        # legacy pool's "... on device/GPU" is the same words); the line after it names the buffer
        "ggml_sycl_alloc", "llama.cpp", ("Bytes of memory on device",),
        r"can't allocate [0-9]{1,20} Bytes of memory on device", backend="SYCL", priority=3,
        fields=(Field("requested_bytes", r"can't allocate ([0-9]{1,20}) Bytes", "bytes"),),
        message="ggml_backend_sycl_buffer_type_alloc_buffer: can't allocate {B} Bytes of memory on device",
        versions="llama.cpp SYCL backend (Intel GPUs)",
        causes=("a SYCL device buffer (weights, KV cache or compute: the next line names it) did not fit in the "
                "Intel GPU's memory",),
        fixes=("-ngl fewer layers on the GPU (or --fit on)", "-c smaller", "-ub smaller")),
    Signature(
        # llama_params_fit_impl (src/llama.cpp, 2025-11; common/fit.cpp common_params_fit_impl from 2026) prints the
        # memory the parameters as given would use before it changes them ("projected to use X MiB of device memory
        # vs. Y MiB of free device memory", "cannot fulfill margin of M MiB on all devices, need to use N MiB less in
        # total", each device's "deficit"): the fit's starting point, after which it moves layers and experts to the
        # CPU; a failed fit says so in its own words (llama_fit_aborted) and a failed load in the allocator's
        "llama_fit_projection", "llama.cpp", ("of free device memory", "cannot fulfill margin of"),
        r"params_fit_impl: (?:projected to use [0-9]{1,12} MiB of device memory vs\. [0-9]{1,12} MiB of free device "
        r"memory|cannot fulfill margin of [0-9]{1,12} MiB)", role="not_oom", priority=1,
        message="llama_params_fit_impl: projected to use {X} MiB of device memory vs. {Y} MiB of free device memory / "
                "cannot fulfill margin of 1024 MiB on all devices, need to use {N} MiB less in total",
        versions="llama.cpp --fit / llama-fit-params (b7000+)",
        causes=("--fit's projection for the parameters as given, printed before it fits them: the load that follows "
                "uses the fitted parameters",)),
    Signature(
        # vllm/worker/model_runner.py (V0) capture_model logs before every capture "If out-of-memory error occurs
        # during cudagraph capture, consider decreasing `gpu_memory_utilization` ..."; V1's
        # vllm/config/compilation.py warns "Capping cudagraph capture sizes from max N to M to fit Mamba cache
        # blocks"; gpu_worker.py (0.18) notes "In v0.19, CUDA graph memory profiling will be enabled by default":
        # routine start-up notices with memory words, no failure
        "vllm_capture_notice", "vllm", ("If out-of-memory error occurs during cudagraph capture",
                                        "Capping cudagraph capture sizes", "CUDA graph memory profiling will be enabled"),
        r"If out-of-memory error occurs during cudagraph capture|Capping cudagraph capture sizes from max [0-9]{1,6} "
        r"to [0-9]{1,6}|CUDA graph memory profiling will be enabled by default", role="not_oom", priority=0,
        message="If out-of-memory error occurs during cudagraph capture, consider decreasing `gpu_memory_utilization` "
                "or switching to eager mode. / Capping cudagraph capture sizes from max 512 to 352 to fit Mamba cache "
                "blocks",
        versions="vLLM V0 (0.4-0.10) and V1 (0.11+)",
        causes=("vLLM's start-up notice about CUDA-graph memory, printed whether or not anything fails",)),
    Signature(
        # common/fit.cpp common_params_fit_impl throws common_params_fit_exception("<param> already set by user,
        # abort") for a user-set n_gpu_layers, tensor_split or tensor_buft_overrides (-ot, --cpu-moe, --n-cpu-moe);
        # common_fit_params logs it as a warning and loads with the unfitted parameters, after the fit's own
        # projection ("projected to use X MiB of device memory vs. Y MiB of free device memory ... need to reduce
        # device memory by N MiB"): the load that follows runs out unless the user's setting leaves room
        "llama_fit_aborted", "llama.cpp", ("failed to fit params to free device memory",),
        r"failed to fit params to free device memory: \S{1,80} already set by user, abort", priority=2,
        fields=(Field("fit_blocked_by", r"memory: (?:\w{1,40}::)?(\w{1,60}) already set by user", "str"),),
        message="common_fit_params: failed to fit params to free device memory: model_params::{param} already set by "
                "user, abort",
        versions="llama.cpp --fit (default on from late 2025; llama_params_fit_impl, then common/fit.cpp)",
        causes=("--fit gave up because a placement was set by hand (-ngl, -ts, -ot / --cpu-moe / --n-cpu-moe): the "
                "model loads as given, and the fit's projection said it does not fit the free memory",),
        fixes=("drop the hand-set placement the fit names (n_gpu_layers: -ngl; tensor_split: -ts; "
               "tensor_buft_overrides: -ot, --cpu-moe, --n-cpu-moe) so --fit places the layers and experts itself",
               "or cut what the fit said to reduce yourself: -c smaller (the KV cache and compute buffer), -ngl "
               "fewer")),
    Signature(
        # Intel's Unified Runtime under SYCL logs each failing call as "<adapter> backend failed with error: <code>
        # (<ur_result_t>)"; a result other than UR_RESULT_ERROR_OUT_OF_{DEVICE,HOST}_MEMORY / OUT_OF_RESOURCES
        # (INVALID_VALUE, UNSUPPORTED_FEATURE ...) is no shortage: ggml-sycl.cpp's CHECK_TRY_ERROR then aborts with
        # "SYCL error" whatever the call was (in llama.cpp#27128 its VMM pool's map() in alloc). DEVICE_LOST is left
        # out: a driver can lose the device on an allocation it could not back
        "sycl_ur_error", "llama.cpp", ("backend failed with error:",),
        r"backend failed with error: [0-9]{1,5} [(\[]UR_RESULT_ERROR_(?!OUT_OF_|DEVICE_LOST)[A-Z_]{1,60}[)\]]", role="not_oom",
        backend="SYCL", priority=2,
        fields=(Field("ur_result", r"\b(UR_RESULT_ERROR_[A-Z_]{1,60})", "str"),),
        message="level_zero backend failed with error: {N} ({UR_RESULT_ERROR_...})",
        versions="SYCL runtimes on Unified Runtime (oneAPI 2025+); llama.cpp and ipex-llm SYCL builds",
        causes=("a SYCL runtime call failed with an error that is not a memory shortage (the result named)",),
        fixes=("a newer Intel GPU driver / oneAPI runtime, or the Vulkan backend for the same model",)),
    Signature(
        "ggml_metal_buffer_fail", "llama.cpp", ("error: failed to allocate buffer, size",),
        r"metal_buffer_(?:init|map|type_alloc_buffer|from_ptr): error: failed to allocate buffer, size",
        backend="Metal", priority=3,
        fields=(Field("requested_bytes", r"size = {1,40}([0-9.]{1,24}) MiB", "MiB"),),
        message="ggml_metal_buffer_init: error: failed to allocate buffer, size = {MIB} MiB",
        causes=("Metal could not allocate: the working set (wired memory) limit or a single-buffer limit",),
        fixes=("-c smaller", "-ub smaller", "-fa on", "a smaller quant",
               "sudo sysctl iogpu.wired_limit_mb=N to raise the wired limit")),
    Signature(
        # Metal's API validation (MTLDebugDevice, on under Xcode's debugger and MTL_DEBUG_LAYER=1) asserting on
        # newBufferWithBytesNoCopy:length: over the device's maxBufferLength (2048 MB on iPhones): ggml-metal.m
        # ggml_backend_metal_buffer_type_alloc_buffer / _buffer_from_ptr (llama.cpp 2024) wraps each ggml buffer in
        # one MTLBuffer, and the compute buffer cannot be split (llama.cpp#6861: its 2248163328 bytes = 0x86004000)
        "metal_debug_buffer_length", "llama.cpp", ("must not exceed",),
        r"newBufferWith\*?:length 0x[0-9a-fA-F]{1,16} must not exceed [0-9]{1,8} ?MB", stage="buffer_limit",
        backend="Metal", priority=5,
        fields=(Field("requested_bytes", r"length 0x([0-9a-fA-F]{1,16}) must not exceed", "hex"),),
        message="-[MTLDebugDevice newBufferWithBytesNoCopy:length:options:deallocator:]:700: failed assertion `Buffer "
                "Validation / newBufferWith*:length 0x86004000 must not exceed 2048 MB.",
        versions="llama.cpp Metal (ggml-metal.m) under Metal's API validation, iOS / macOS",
        causes=("one Metal buffer is larger than the device's maxBufferLength: llama.cpp's compute buffer (it cannot "
                "be split), which grows with the micro-batch and the context",),
        fixes=("-ub smaller (e.g. -ub 64; n_ubatch in llama_context_params): the compute buffer shrinks with the "
               "micro-batch", "-fa on (flash_attn in llama_context_params): a far smaller compute buffer",
               "-c smaller (n_ctx): the attention part of the compute buffer and the KV cache grow with the context")),
    Signature(
        "ggml_metal_max_buffer_old", "llama.cpp", ("is larger than buffer maximum of",),
        r"buffer '\w{1,64}' size [0-9]{1,20} is larger than buffer maximum of [0-9]{1,20}", stage="buffer_limit",
        backend="Metal", priority=4,
        fields=(Field("requested_bytes", r"size ([0-9]{1,20}) is larger", "bytes"),
                Field("max_buffer_bytes", r"buffer maximum of ([0-9]{1,20})", "bytes")),
        message="ggml_metal_add_buffer: buffer 'data' size {B} is larger than buffer maximum of {MAX}",
        versions="llama.cpp Metal, 2023",
        causes=("one Metal buffer is larger than the device's maxBufferLength",),
        fixes=("a smaller quant", "a newer build (maps the model in several buffers)")),
    Signature(
        "mlx_cmdbuf_oom", "mlx", ("Command buffer execution failed",),
        r"Command buffer execution failed: Insufficient Memory", stage="host_ram", backend="Metal", priority=4,
        message="[METAL] Command buffer execution failed: Insufficient Memory "
                "(00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)",
        versions="MLX / mlx-lm (mlx/backend/metal/device.cpp)",
        causes=("unified memory exhausted: models, KV cache and other apps together (wired limit)",),
        # mlx/backend/metal/allocator.cpp MetalAllocator: freed buffers stay in its cache up to max_pool_size_,
        # which defaults to block_limit_ = min(1.5 x recommendedMaxWorkingSetSize, 0.95 x RAM) until set_cache_limit
        fixes=("fewer models loaded at once", "a smaller model or shorter context",
               "sudo sysctl iogpu.wired_limit_mb=N (above the model size, below RAM)",
               "mx.set_cache_limit(N) well under RAM (a server's own cache-limit setting): MLX keeps freed Metal "
               "buffers cached up to min(1.5 x the recommended working set, 0.95 x RAM) by default, so a long-running "
               "server's cache grows toward all of memory")),
    Signature(
        # Metal's own description of the failed command buffer (MTLCommandBufferError's localizedDescription), as
        # macOS's unified log keeps it ("IOGPUMetalError") when the program itself prints nothing: the program is
        # whichever runs Metal (the log's host: an MLX server, llama.cpp, ...)
        "metal_cmdbuf_aborted", "os", ("Execution of the command buffer was aborted",),
        r"Execution of the command buffer was aborted due to an error during execution\. Insufficient Memory",
        stage="host_ram", backend="Metal", priority=5,
        message="IOGPUMetalError: Execution of the command buffer was aborted due to an error during execution. "
                "Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)",
        versions="macOS (the unified log; `log show --predicate 'subsystem == \"com.apple.Metal\"'`)",
        causes=("unified memory exhausted: models, KV cache, activations and other apps together (wired limit)",),
        fixes=("fewer models loaded at once", "a smaller model or shorter context",
               "sudo sysctl iogpu.wired_limit_mb=N (above the model size, below RAM)")),
    Signature(
        "metal_cmdbuf_oom", "llama.cpp", ("kIOGPUCommandBufferCallbackErrorOutOfMemory",),
        r"kIOGPUCommandBufferCallbackErrorOutOfMemory", stage="host_ram", backend="Metal", priority=3,
        message="error: Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory) / "
                "ggml_metal_graph_compute: command buffer N failed with status 5",
        versions="llama.cpp Metal (and Ollama, koboldcpp on macOS)",
        causes=("unified memory exhausted: models, KV cache and other apps together (wired limit)",),
        fixes=("fewer models loaded at once", "a smaller model or shorter context",
               "sudo sysctl iogpu.wired_limit_mb=N (above the model size, below RAM)")),
    Signature(
        # ggml-metal.m ggml_metal_graph_compute (2023 to 2025-09: "command buffer %d failed with status %d") and
        # ggml-metal-context.m ggml_metal_synchronize (2025-09+: "error: command buffer %d failed with status %d"):
        # status 5 is MTLCommandBufferStatusError. Builds before llama.cpp#7010 (2024-04) print no error after it;
        # later ones add Metal's description ("error: Insufficient Memory (...)", read first by metal_cmdbuf_oom and
        # the _mlx_metal_fault codes below). Alone, it is the failure llama.cpp#6987 names: the graph's buffers
        # passed what Metal keeps resident (out of memory); a weaker reading than a named code
        "metal_cmdbuf_status5", "llama.cpp", ("failed with status 5",),
        r"ggml_metal_(?:graph_compute|synchronize): (?:error: )?command buffer [0-9]{1,4} failed with status 5",
        stage="host_ram", backend="Metal", priority=1,
        message="ggml_metal_graph_compute: command buffer {N} failed with status 5",
        versions="llama.cpp Metal (ggml-metal.m, ggml-metal-context.m); Ollama, LM Studio, Jan on macOS",
        causes=("a Metal command buffer failed (MTLCommandBufferStatusError); with no other code named, the usual "
                "cause is unified memory: the model, KV cache and compute buffers past the GPU working set",),
        fixes=("-c smaller (the KV cache and the attention's compute buffer grow with the context)",
               "a smaller quant", "sudo sysctl iogpu.wired_limit_mb=N (above the model size, below RAM)")),
    _mlx_metal_fault(
        "metal_impacting_interactivity", 0xE, "ImpactingInteractivity", "Impacting Interactivity",
        causes=("the GPU watchdog stopped a long command buffer (not an out-of-memory)",),
        fixes=("smaller prefill steps; run without a display attached to the GPU",), pattern=r"ImpactingInteractivity"),
    # code 9, a buffer the command buffer used was no longer valid (freed while in flight: mlx#3689), not a shortage
    # (that is code 8, Insufficient Memory)
    _mlx_metal_fault(
        "metal_invalid_resource", 9, "InvalidResource", "Invalid Resource",
        causes=("a Metal buffer was released or invalid while a command buffer still used it (a bug of the MLX "
                "build or the program), not an out-of-memory",),
        fixes=("update MLX (and the package running it); report the model and input that trigger it",)),
    # code 4, IOGPU's "Ignored (for causing prior/excessive GPU errors)": Metal stopped running this process's
    # command buffers after earlier ones faulted; no allocation failed in it. A code 8 (Insufficient Memory) earlier
    # in the text is read first
    _mlx_metal_fault(
        "metal_submissions_ignored", 4, "SubmissionsIgnored", "Ignored (for causing prior/excessive GPU errors)",
        causes=("Metal ignores the process's command buffers after earlier GPU errors (a kernel fault or a "
                "timeout): not an out-of-memory; the first [METAL] error of the run names the cause",),
        fixes=("update MLX (and the program running it; for one model alone, its runner's support of that model); "
               "the first [METAL] error of the run says what faulted",)),
    Signature(
        "ggml_metal_buffer_nil", "llama.cpp", ("ggml_metal_get_buffer: error: buffer is nil",),
        r"ggml_metal_get_buffer: error: buffer is nil", stage="host_ram", backend="Metal", priority=3,
        message="ggml_metal_get_buffer: error: buffer is nil",
        versions="llama.cpp Metal, 2023-24 (a buffer that could not be allocated is used anyway)",
        causes=("a Metal buffer could not be allocated: the allocations passed the recommended working set of "
                "unified memory",),
        fixes=("-c smaller", "a smaller quant", "sudo sysctl iogpu.wired_limit_mb=N (above the model, below RAM)")),
    Signature(
        "metal_working_set_warn", "llama.cpp", ("greater than the recommended max working set size",),
        r"greater than the recommended max working set size", role="warn", backend="Metal",
        message="ggml_metal_log_allocated_size: warning: current allocated size is greater than the recommended "
                "max working set size",
        causes=("the allocations exceed macOS's recommended GPU working set",),
        fixes=("-c smaller; a smaller quant; iogpu.wired_limit_mb",)),
    Signature(
        "llama_context_overflow", "llama.cpp", ("failed to find a memory slot", "increase KV cache size",
                                                "context shift is disabled"),
        r"failed to find a memory slot|increase KV cache size|context shift is disabled", role="not_oom",
        priority=1,
        message="decode: failed to find a memory slot for batch of size N / llama_decode failed - increase KV "
                "cache size",
        causes=("the context (KV cells) is full at run time: the prompt is longer than -c (not an allocation)",),
        fixes=("-c larger (if memory allows), or enable context shift",)),
    Signature(
        # src/llama-model.cpp make_gpu_buft_list: with LLAMA_SPLIT_MODE_ROW each model device's backend must export
        # "ggml_backend_split_buffer_type", else "device %s does not support split buffers" is thrown (the throw is
        # PR #24216 "CUDA: remove -sm row, refactor cuBLAS", 74976e1ae, b9890, which also removed CUDA's split buffer
        # type: from then only SYCL has one). A load refused for the split mode, before any buffer is allocated
        "llama_sm_row_no_split_buffers", "llama.cpp", ("does not support split buffers",),
        r"device \S{1,200} does not support split buffers", role="not_oom", priority=6,
        fields=(Field("device", r"device (\S{1,200}) does not support split buffers", "str"),),
        message="llama_model_load: error loading model: device CUDA0 does not support split buffers",
        versions="llama.cpp b9890+ (PR #24216 removed CUDA's -sm row; Vulkan, Metal, RPC never had split buffers)",
        causes=("not a memory problem: -sm row not supported in this build (its CUDA backend has no split buffers "
                "since b9890, PR #24216; only SYCL keeps them), so the model is refused before anything is "
                "allocated",),
        fixes=("-sm tensor (the build's replacement for -sm row: weights and KV split across the GPUs)",
               "-sm layer (the default: whole layers per GPU)")),
    Signature(
        # llama.cpp before the graph allocator (ggml.c ggml_new_tensor_impl with a scratch buffer set, mid-2023;
        # KoboldCpp keeps that code as otherarch/ggml_v3.c for its GGML-v3 models): "not enough space in the scratch
        # memory pool (needed N, available M)". The scratch buffer is sized once, at load, from the context alone
        # (llama.cpp MEM_REQ_SCRATCH0(n_ctx), 13B: n_ctx/12 + 460 MiB; KoboldCpp 1.36's llama.cpp the same), while
        # the intermediate tensors it holds grow with the batch evaluated: a batch over the 512 it was sized for
        # (KoboldCpp --blasbatchsize 1024) overflows it (KoboldCpp 1.43+ otherarch/llama_v3.cpp scales the pool
        # by get_blas_batch_mul3: x2 over 512, x4 over 1024)
        # (the pattern from "scratch memory pool (needed": a paste re-wrapped at 80 columns breaks the line before it)
        "ggml_scratch_pool", "llama.cpp", ("scratch memory pool",),
        r"scratch memory pool \(needed [0-9]", stage="compute", priority=5,
        fields=(Field("requested_bytes", r"scratch memory pool \(needed ([0-9]{1,20})", "bytes"),
                Field("max_buffer_bytes", r"scratch memory pool \(needed [0-9]{1,20}, available ([0-9]{1,20})",
                      "bytes")),
        message="ggml_new_tensor_impl: not enough space in the scratch memory pool (needed N, available M)",
        versions="llama.cpp before ggml-alloc (2023); KoboldCpp's GGML-v3 path (otherarch/ggml_v3.c)",
        causes=("the scratch buffer, sized at load for the context at a 512-token batch, is too small for the batch "
                "being evaluated: the prompt is processed in larger batches than the pool was sized for",)),
    Signature(
        # ggml-alloc.c of August 2023 (the first graph allocator; KoboldCpp 1.38's copy): ggml_allocr_free_tensor
        # keeps the holes it frees in a fixed array, `struct free_block free_blocks[MAX_FREE_BLOCKS]` with
        # MAX_FREE_BLOCKS 128, and asserts GGML_ASSERT(alloc->n_free_blocks < MAX_FREE_BLOCKS && "out of free
        # blocks") when one more would not fit: the buffer is fragmented into more holes than the list holds, which
        # a larger batch's graph does (KoboldCpp --blasbatchsize 1024 where 512 runs); no allocation failed. The
        # list holds 256 from KoboldCpp 1.43's ggml-alloc.c (and ggml/src/ggml-alloc.c to date)
        "ggml_alloc_free_blocks", "llama.cpp", ("out of free blocks",),
        r"MAX_FREE_BLOCKS[^\n]{0,40}out of free blocks", role="not_oom", priority=5,
        message='GGML_ASSERT: ggml-alloc.c:216: alloc->n_free_blocks < MAX_FREE_BLOCKS && "out of free blocks"',
        versions="ggml-alloc.c, August 2023 (llama.cpp's first graph allocator; KoboldCpp 1.38)",
        causes=("the graph allocator's list of free holes (128 entries) is full: the compute buffer is split into "
                "more holes than that build tracks, not a shortage of device or host memory",),
        fixes=("a batch of 512 or less (llama.cpp -b; KoboldCpp --blasbatchsize 512): a smaller graph frees into "
               "fewer holes", "a later build: the list holds 256 from KoboldCpp 1.43's ggml-alloc.c on")),
    Signature(
        # ggml/src/ggml.c ggml_new_object: a ggml context's metadata pool (tensor headers, sized by the caller at
        # ggml_init) is full, then GGML_ABORT: the caller counted too few tensor objects (llama.cpp PR #22616
        # "TP: fix ggml context size calculation"), no device or host memory ran out
        "ggml_context_pool", "llama.cpp", ("not enough space in the context's memory pool",),
        r"not enough space in the context's memory pool", role="not_oom", priority=5,
        fields=(Field("requested_bytes", r"memory pool \(needed ([0-9]{1,20})", "bytes"),),
        message="ggml_new_object: not enough space in the context's memory pool (needed N, available M)",
        causes=("a ggml context's tensor-metadata pool, sized by the program that made it, is too small: a bug in "
                "that build (or a binding built against another ggml), not the GPU's or the host's memory",),
        fixes=("another llama.cpp build (the fix of the caller's context size)", "report it with the command line")),
    Signature(
        # ggml/src/ggml-backend.cpp ggml_backend_sched_backend_id_from_cur: a tensor already allocated in a buffer
        # whose backend cannot run its op cannot be moved, so GGML_ABORT("pre-allocated tensor (%s) in a buffer (%s)
        # that cannot run the operation (%s)") (before 2025: "pre-allocated tensor in a backend that cannot run the
        # operation"): a placement the backends cannot serve (a draft model or split mode on another backend), no
        # allocation failed
        "ggml_preallocated_tensor", "llama.cpp", ("pre-allocated tensor",),
        r"pre-allocated tensor (?:\([^)\n]{0,200}\) )?in a (?:buffer|backend)[^\n]{0,200}?cannot run the operation",
        role="not_oom", priority=5,
        fields=(Field("tensor", r"pre-allocated tensor \(([^)\n]{1,200})\)", "str"),
                Field("buffer", r"in a buffer \(([^\n]{1,200}?)\) that cannot", "str")),
        message="ggml-backend.cpp: pre-allocated tensor (cache_k_l0) in a buffer (Vulkan0) that cannot run the "
                "operation (NONE)",
        causes=("a tensor sits in a buffer of a backend that cannot run its operation (a draft/MTP model or a split "
                "mode placed on a backend without that op): a placement error, not a shortage",),
        fixes=("--spec-draft-device (or -dev) naming the same backend as the main model",
               "-sm layer instead of -sm tensor; a build with one GPU backend")),
    Signature(
        # src/llama-model.cpp llama_model::load_arch: `throw std::runtime_error("unknown model architecture: '" +
        # ml.get_arch_name() + "'")`, rethrown by llama_model_load as "error loading model architecture: ..." and
        # printed "llama_model_load: error loading model: ..." (Ollama's runner and LM Studio's dialog relay it):
        # the GGUF's general.architecture is not one this build knows; no buffer was allocated
        "llama_unknown_arch", "llama.cpp", ("unknown model architecture",),
        r"unknown model architecture: '[^'\n]{1,60}'", role="not_oom", priority=7,
        fields=(Field("architecture", r"unknown model architecture: '([^'\n]{1,60})'", "str"),),
        message="llama_model_load: error loading model: error loading model architecture: unknown model "
                "architecture: '{arch}'",
        causes=("the GGUF's architecture (general.architecture) is newer than this llama.cpp build, or not one "
                "llama.cpp implements: not a memory problem",),
        fixes=("update llama.cpp (or the app's llama.cpp: Ollama, LM Studio's runtime, the binding) to a build that "
               "lists this architecture", "or a GGUF of an architecture this build supports")),
    Signature(
        # ggml/src/gguf.cpp gguf_init_from_file: `GGML_LOG_ERROR("%s: failed to open GGUF file '%s'\n", ...)` when
        # ggml_fopen fails (PR #18884, 2026-01, adds " (errno %s)"): the path cannot be opened; common_init's
        # "try reducing --n-gpu-layers if you're running out of VRAM" that follows is its generic hint
        "gguf_open_failed", "llama.cpp", ("failed to open GGUF file",),
        r"gguf_init_from_file: failed to open GGUF file", role="not_oom", priority=7,
        fields=(Field("path", r"failed to open GGUF file '([^'\n]{1,300})'", "str"),
                Field("reason", r"\(errno ([^)\n]{1,80})\)", "str")),
        message="gguf_init_from_file: failed to open GGUF file '{path}' (errno {reason})",
        causes=("the model file could not be opened (no such file, a path relative to another directory, no read "
                "permission, a volume not mounted in the container): nothing was allocated",),
        fixes=("check the model path (-m): it must exist and be readable by this process; a relative path is "
               "taken from the working directory",)),
    Signature(
        # src/llama.cpp llama_params_fit (common_fit_params prints it as a warning): the fitting step gives up for
        # a split mode it does not model and the load goes on with the settings as given; the draft model's
        # "failed to initialize the context: ... (this warning is normal during memory fitting)" comes with it
        "llama_fit_unsupported", "llama.cpp", ("llama_params_fit is not implemented for",),
        r"llama_params_fit is not implemented for", role="not_oom", priority=6,
        message="common_fit_params: failed to fit params to free device memory: llama_params_fit is not "
                "implemented for SPLIT_MODE_TENSOR, abort",
        causes=("--fit skipped itself for this split mode (a warning): the run goes on with the settings as given; "
                "no allocation failed here",)),
    Signature(
        # src/llama-mmap.cpp llama_file::impl::read_raw: fread/ReadFile failing throws
        # std::runtime_error(format("read error: %s", strerror(errno))), which llama_model_load prints as "error
        # loading model: read error: ...": the model file could not be read (a bad path, an unreadable or truncated
        # file, a driver's mapped memory refusing the read), before or while weights are copied, not a shortage
        "llama_read_error", "llama.cpp", ("error loading model: read error",),
        r"error loading model: read error", role="not_oom", priority=5,
        fields=(Field("reason", r"read error: ([^\n]{1,120})", "str"),),
        message="llama_model_load: error loading model: read error: Bad address",
        causes=("reading the model file failed (the OS error is printed): a file or runtime problem, not memory",),
        fixes=("another build of the runtime (LM Studio: an earlier llama.cpp runtime; a newer llama.cpp)",
               "check the model file (re-download it); try --no-mmap / --mmap the other way")),
    Signature(
        # ggml-cuda.cu ggml_cuda_host_malloc (ggml-cann's ggml_cann_host_malloc alike): cudaMallocHost failed, and
        # ggml_backend_cuda_host_buffer_type_alloc_buffer falls back to an ordinary CPU buffer ("fallback to cpu
        # buffer"), so the load goes on: the line alone is no failure (llama.cpp#9629, labelled low severity; in
        # ollama#8964 the failure is the CUDA0 buffer after it). The size may carry a decimal comma (a locale's)
        "ggml_pinned_fallback", "llama.cpp", ("of pinned memory",),
        r"\w{1,60}_host_malloc: failed to allocate [0-9.,]{1,24} MiB of pinned memory", role="not_oom", priority=1,
        fields=(Field("reason", r"of pinned memory: ([^\n]{1,120})", "str"),),
        message="ggml_cuda_host_malloc: failed to allocate {MIB} MiB of pinned memory: {reason}",
        causes=("pinned (page-locked) host memory was refused and ggml fell back to an ordinary host buffer: the "
                "load continues (a slower host-to-GPU copy), so this line is not the failure; GGML_CUDA_NO_PINNED=1 "
                "skips the attempt",),
        fixes=()),
    Signature(
        # ggml/src/ggml-alloc.c ggml_dyn_tallocr_alloc / ggml_tallocr_alloc (ggml_allocr_alloc in 2023 builds): the
        # graph allocator's buffer, reserved from a measured graph, is smaller than the graph it then allocates
        "ggml_alloc_buffer_short", "llama.cpp", ("not enough space in the buffer",),
        r"(?:ggml_allocr_alloc|ggml_tallocr_alloc|ggml_dyn_tallocr_alloc|ggml_gallocr\w*): not enough space in the "
        r"buffer", role="not_oom", priority=4,
        fields=(Field("requested_bytes", r"needed ([0-9]{1,20})", "bytes"),),
        message="ggml_allocr_alloc: not enough space in the buffer (needed N, largest block available M)",
        causes=("the graph allocator's buffer was reserved for a smaller graph than the one it is given (the "
                "measure pass and the run disagree): a bug of that build or binding, not the device running out",),
        fixes=("another llama.cpp (or binding) build", "report it with the command line")),
    Signature(
        # llama_decode's return 1: no free cells in the KV cache for the batch (include/llama.h: "1 - could not find
        # a KV slot for the batch (try reducing the size of the batch or increase the context)"). The context is
        # full: the cache was allocated at start-up and nothing is allocated here. Its wordings: llama-context.cpp
        # decode "failed to find a memory slot for batch of size N" (2025+; "failed to find KV cache slot for ubatch
        # of size N" before), llama_decode's "failed to decode, ret = 1", tools/server/server.cpp update_slots
        # "failed to find free space in the KV cache, retrying with smaller batch size", and the bindings' texts of
        # llama.h's (node-llama-cpp, LLamaSharp's NoKvSlot, Ollama's runner "could not find a KV slot for the batch
        # - try reducing ...")
        "llama_no_kv_slot", "llama.cpp", ("KV slot", "KV cache slot", "memory slot for batch", "free space in the KV "
                                          "cache", "NoKvSlot", "failed to decode, ret = 1"),
        r"could not find a KV slot for the batch|KV slot for the batch|failed to find (?:a )?KV cache slot|"
        r"failed to find a memory slot "
        r"for batch|failed to find free space in the KV cache|NoKvSlot|failed to decode, ret = 1\b",
        role="not_oom", priority=2,
        message="llama_decode returned 1: could not find a KV slot for the batch (try reducing the size of the batch "
                "or increase the context) / decode: failed to find a memory slot for batch of size N",
        versions="llama.cpp (all), through llama-server, Ollama's runner and the bindings",
        causes=("the context is full: the KV cache has no free cells for the batch (a long conversation, or -c split "
                "across -np slots); no memory ran out, the cache was sized at start-up",),
        fixes=("-c larger (the context size: num_ctx / OLLAMA_CONTEXT_LENGTH in Ollama, n_ctx / contextSize in a "
               "binding): room for the whole conversation",
               "-np fewer parallel slots: llama-server gives each slot -c / -np cells (or --kv-unified to share them)",
               "a shorter prompt or history: trim it, or let the client shift the context before it is full")),
    # ----------------------------------------------------------------------------------------------- Ollama
    Signature(
        "ollama_system_memory", "ollama", ("model requires more system memory",),
        # not the scheduler's notice "model requires more system memory than is currently available, evicting a
        # model to make space" (ollama_evicting)
        r"model requires more system memory(?! than is currently)", stage="host_ram", priority=7,
        fields=(Field("model_required_bytes", r"system memory \(" + SIZE + r"\)", "size_as_written"),
                Field("system_available_bytes", r"than is available \(" + SIZE + r"\)", "size_as_written")),
        message="Error: model requires more system memory ({X}) than is available ({Y})",
        versions="Ollama <= 0.2x (Linux/Windows; macOS has no pre-check); GiB (HumanBytes2) from ~0.1.33, GB "
                 "(decimal) before",
        causes=("host RAM plus swap is less than the model's CPU part (weights not on the GPU, KV on the CPU)",),
        fixes=("a smaller model or quant", "num_ctx / OLLAMA_CONTEXT_LENGTH smaller",
               "free RAM: ollama stop other models, OLLAMA_MAX_LOADED_MODELS=1", "add swap")),
    Signature(
        # x/mlxrunner/client.go Load (v0.18.2+, bbbad9768 "sched: Model eviction for MLX"): the MLX runner's one
        # check before it starts: the manifest's TotalTensorSize against the first GPU's free memory less
        # MinimumMemory() (ml/device.go: 512 MiB on Metal, 457 MiB elsewhere) + OLLAMA_GPU_OVERHEAD, each figure
        # format.HumanBytes2 (engines/ollama/mlx_runner.py load_check); the KV cache is not in it
        "ollama_mlx_load", "ollama", ("are available (after",),
        r"model requires " + SIZE + r" but only " + SIZE + r" are available \(after " + SIZE + r" overhead\)",
        stage="weights", priority=7,
        fields=(Field("model_required_bytes", r"model requires " + SIZE + " but only", "size_as_written"),
                Field("available_bytes", r"but only " + SIZE + r" are available", "size_as_written"),
                Field("overhead_bytes", r"\(after " + SIZE + r" overhead\)", "size_as_written")),
        message="Error: 500 Internal Server Error: model requires {X} but only {Y} are available (after {Z} overhead)",
        versions="Ollama >= 0.18.2, MLX library tags (x/mlxrunner)",
        causes=("the MLX build's weights (TotalTensorSize) are larger than the first GPU's free memory less the "
                "runner's minimum and OLLAMA_GPU_OVERHEAD; the MLX runner keeps every tensor on the GPU (no CPU "
                "split)",),
        fixes=("a smaller quantization of the same model (nvfp4 / int4 instead of mxfp8 / int8), or its GGUF tag: "
               "Ollama's llama.cpp runner splits a GGUF model between the GPU and the CPU",
               "close what else holds GPU memory (other apps; `ollama ps`, `ollama stop <model>`)",
               "OLLAMA_GPU_OVERHEAD lower or unset, if set")),
    Signature(
        # llm/server.go (Ollama 0.11+ layouts; sched.go before): when a model would not load fully beside the ones
        # already loaded, the scheduler logs this at INFO, unloads one (ErrLoadRequiredFull) and retries; in its
        # three wordings ("more memory", "more gpu memory", "more system memory"). Nothing failed
        "ollama_evicting", "ollama", ("evicting a model to make space",),
        r"evicting a model to make space", role="not_oom", priority=8,
        message='msg="model requires more [gpu |system ]memory than is currently available, evicting a model to '
                'make space"',
        versions="Ollama ~0.3 to 0.2x (INFO)",
        causes=("Ollama unloads another model to make room for this one and loads it again: a notice, not a failure",)),
    Signature(
        "ollama_layout", "ollama", ("emory layout cannot be allocated",),
        r"memory layout cannot be allocated", priority=7, ignore_case=True,
        fields=(Field("num_gpu", r"num_gpu = ([0-9]{1,20})", "int"),),
        message="memory layout cannot be allocated[ with num_gpu = {N}]",
        versions="Ollama ~0.12 to 0.2x (new memory management)",
        causes=("a large num_ctx (defaults up to 256K on >= 47 GiB VRAM; clients send large values) or a forced "
                "num_gpu leaves no layout that fits",),
        fixes=("OLLAMA_CONTEXT_LENGTH smaller (e.g. 32768) or num_ctx per request", "unset or lower num_gpu",
               "OLLAMA_NUM_PARALLEL=1", "OLLAMA_KV_CACHE_TYPE=q8_0 with OLLAMA_FLASH_ATTENTION=1")),
    Signature(
        # llm/server.go Completion (0.1-0.6): a request the runner dropped comes back as fmt.Errorf("POST predict:
        # %v", err) on its http://127.0.0.1:<port>/completion call ("wsarecv: An existing connection was forcibly
        # closed by the remote host" on Windows, "EOF" / "connection reset by peer" elsewhere): the runner died
        # during the request, its reason in the server log
        "ollama_runner_terminated", "ollama", ("process has terminated", "model runner has unexpectedly stopped",
                                               "reported out-of-memory during startup", "POST predict: Post"),
        r"(?:llama runner|llama-server) process has terminated|model runner has unexpectedly stopped|"
        r"reported out-of-memory during startup|POST predict: Post \"http://127\.0\.0\.1:[0-9]{1,5}/completion\": "
        r"[^\n]{0,200}?(?:forcibly closed by the remote host|connection reset by peer|EOF)", priority=7,
        fields=(Field("reason", r"process has terminated: ([^\"`\n]{1,300})", "str"),
                # v0.30+ llm/llama_server.go: the llama-server line that says what ran out
                Field("reason", r"reported out-of-memory during startup: ([^\"\n]{1,300})", "str")),
        message="Error: llama runner process has terminated: {reason} / model runner has unexpectedly stopped, "
                "this may be due to resource limitations or an internal error",
        versions="Ollama <= 0.2x 'llama runner', >= 0.30 'llama-server'",
        causes=("the runner (llama.cpp) failed: the reason after the colon names the stage",),
        fixes=("OLLAMA_CONTEXT_LENGTH / num_ctx smaller", "OLLAMA_FLASH_ATTENTION=1 and OLLAMA_KV_CACHE_TYPE=q8_0",
               "num_gpu lower; OLLAMA_GPU_OVERHEAD to leave headroom")),
    Signature(
        "ollama_insufficient_alloc", "ollama", ("insufficient memory - required allocations",),
        r"insufficient memory - required allocations", priority=6,
        message="insufficient memory - required allocations: {detail}",
        versions="Ollama new engine (ml/device.go ErrNoMem)",
        causes=("the new engine's allocations (weights, cache, graph) do not fit",),
        fixes=("OLLAMA_CONTEXT_LENGTH smaller", "num_gpu lower")),
    Signature(
        # llm/memory.go EstimateGPULayers (from 6fd04ca92 "Improve multi-gpu handling at the limit" until f560bd077
        # moved both engines to the new layouts): a GPU is left out when its free memory is below the graph
        # (max of partial and full offload) + its minimum + two layers (+ the first GPU's zero overhead)
        "ollama_gpu_skipped", "ollama", ("too little memory to allocate any layers",),
        r"gpu has too little memory to allocate any layers", stage="compute", priority=6,
        fields=(Field("total_bytes", r'total="' + SIZE, "size_as_written"),
                Field("free_bytes", r'available="' + SIZE, "size_as_written"),
                Field("graph_partial_bytes", r'partial_offload="' + SIZE, "size_as_written"),
                Field("graph_full_bytes", r'full_offload="' + SIZE, "size_as_written"),
                Field("layer_bytes", r'layer_size="' + SIZE, "size_as_written")),
        message='gpu has too little memory to allocate any layers id=... total="{T}" available="{A}" '
                'minimum_memory=N layer_size="{L}" partial_offload="{G}" full_offload="{G}"',
        versions="Ollama ~0.3 to 0.11 (the old memory estimate)",
        causes=("the compute graph Ollama reserves for the context (partial_offload / full_offload) plus the GPU's "
                "minimum and two layers exceed its free memory, so the GPU gets no layers: the model runs on the "
                "other GPUs or the CPU",),
        fixes=("num_ctx / OLLAMA_CONTEXT_LENGTH smaller (the graph grows with it)", "num_batch smaller",
               "OLLAMA_FLASH_ATTENTION=1", "free the GPU's memory (other processes, other loaded models)")),
    # --------------------------------------------------------------------------------------------- LM Studio
    Signature(
        # LM Studio 0.3.x words the same refusal "Model loading aborted due to insufficient system resources.
        # Overloading the system will likely cause it to freeze." (its guardrailHasEnoughResourcesForModelOrThrow in
        # the stack under it, lmstudio-bug-tracker#927): the models already loaded count against it
        "lmstudio_guardrail", "lmstudio", ("model loading was stopped due to insufficient system resources",
                                           "requires approximately",
                                           "insufficient system resources. Overloading the system"),
        r"requires approximately [0-9.]{1,24} ?GB of memory|loading was stopped due to insufficient system resources|"
        r"insufficient system resources\.\s{1,4}Overloading the system",
        stage="host_ram", priority=6, ignore_case=True,
        fields=(Field("model_required_bytes", r"requires approximately " + SIZE, "size_as_written"),),
        message="Model loading was stopped due to insufficient system resources. Under the current settings, this "
                "model requires approximately {X} GB of memory ...",
        causes=("LM Studio's guardrail: the estimate (weights + default context) exceeds free memory",),
        fixes=("Context Length smaller", "a smaller quant", "unload the models already loaded (they count against "
               "the guardrail)", "adjust the guardrail in settings if the estimate is wrong")),
    Signature(
        "lmstudio_resources", "lmstudio", ("Not enough resources to load the model",),
        r"Not enough resources to load the model", stage="host_ram", priority=5,
        message="Not enough resources to load the model with the current settings",
        causes=("the estimate does not fit the free memory (an already loaded model counts)",),
        fixes=("unload other models", "Context Length smaller", "GPU Offload lower")),
    _lmstudio_notice(
        # LM Studio 0.4's model loader when it has no estimate for a model: its guardrail then refuses on no figure
        # (the refusal that follows is not a measured shortage; the model loads when the guardrail is overridden)
        "lmstudio_estimate_unavailable", "memory estimate unavailable", r"memory estimate unavailable",
        "memory estimate unavailable for this model",
        ("LM Studio could not estimate this model's memory, so its guardrail refuses without a figure: not a "
         "shortage",),
        ("load it with the guardrail relaxed (Settings: model loading guardrails), or a newer LM Studio",),
        priority=5, ignore_case=True),
    _lmstudio_notice(
        # LM Studio 0.4.x's loader notes which context it used for its VRAM overflow estimate on one GPU (it then
        # loads with the context asked for): a notice, no failure (lmstudio-bug-tracker#1902)
        "lmstudio_overflow_estimate_note", "for VRAM overflow calculations",
        r"Not using full context length for VRAM overflow calculations",
        "Not using full context length for VRAM overflow calculations due to single GPU setup. Instead, using '{N}' "
        "as context length for the calculation. Original context length: '{M}'.",
        ("LM Studio's estimate of the VRAM overflow used a shorter context than the one loaded: a note about its "
         "estimate, not a failure",), priority=4),
    Signature(
        "lmstudio_failed_load_json", "lmstudio", ('"title": "Failed to load model"',),
        r'"title": "Failed to load model"', priority=3, span=30,
        fields=(Field("n_ctx", r'"n_ctx": ([0-9]{1,12})', "int"),
                Field("n_gpu_layers", r'"n_gpu_layers": (-?[0-9]{1,6})', "int"),
                Field("ram_capacity_bytes", r'"ram_capacity": "' + SIZE, "size_as_written"),
                Field("system_available_bytes", r'"ram_unused": "' + SIZE, "size_as_written"),
                Field("total_bytes", r'"vram_recommended_capacity": "' + SIZE, "size_as_written"),
                Field("free_bytes", r'"vram_unused": "' + SIZE, "size_as_written")),
        message='{"title": "Failed to load model", "errorData": {"n_ctx": N, "n_batch": N, "n_gpu_layers": N}, '
                '"data": {"memory": {"ram_capacity", "ram_unused"}, "gpu": {"vram_recommended_capacity", '
                '"vram_unused"}}}',
        versions="LM Studio 0.2.x (GB decimal)",
        causes=("the context (n_ctx) and the layers offloaded (n_gpu_layers) need more than RAM / VRAM has",),
        fixes=("Context Length smaller", "GPU Offload lower", "a smaller quant")),
    _lmstudio_notice(
        # LM Studio's own load error when its system-resources monitor cannot answer (the app, closed source; its
        # words in lmstudio-bug-tracker#1584, 0.4.5): "Attempt to pull a snapshot of system resources failed. Error:
        # 'System resources observer shutdown requested.'" - no model was loaded and nothing was measured, whatever
        # its size; a reinstall brought the monitor back
        "lmstudio_resources_snapshot", "snapshot of system resources failed",
        r"Attempt to pull a snapshot of system resources failed",
        "Failed to load the model / Attempt to pull a snapshot of system resources failed. Error: 'System resources "
        "observer shutdown requested.'",
        ("LM Studio's system-resources monitor had stopped, so it refused every load before measuring anything: not "
         "a memory shortage",),
        ("restart LM Studio; if every model still fails this way, reinstall it",)),
    Signature(
        # LM Studio 0.2.x's other load-error JSON: "cause": "(Exit code: N). Please check settings and try loading
        # the model again." (or "... Unknown error. Try a different model and/or config."), the memory it measured
        # under "data", "title": "Error loading model." last: the load worker exited without a message, so the exit
        # code, not a measured shortage, is all it says (lmstudio-bug-tracker#59 exit 6, .github#58 -1073740791)
        "lmstudio_load_exit_code", "lmstudio", ('"cause": "(Exit code:',),
        r'"cause": "\(Exit code: -?[0-9]{1,20}\)', role="warn", priority=3, span=30,
        fields=(Field("exit_code", r"Exit code: (-?[0-9]{1,20})\)", "int"),
                Field("ram_capacity_bytes", r'"ram_capacity": "' + SIZE, "size_as_written"),
                Field("system_available_bytes", r'"ram_unused": "' + SIZE, "size_as_written"),
                Field("total_bytes", r'"vram_recommended_capacity": "' + SIZE, "size_as_written"),
                Field("free_bytes", r'"vram_unused": "' + SIZE, "size_as_written")),
        message='{"cause": "(Exit code: N). Please check settings and try loading the model again.", "data": '
                '{"memory": {"ram_capacity", "ram_unused"}, "gpu": {"vram_recommended_capacity", "vram_unused"}}, '
                '"title": "Error loading model."}',
        versions="LM Studio 0.2.x (GB decimal)",
        causes=("LM Studio's load worker exited with this code and no message (6 is SIGABRT on macOS and Linux): "
                "what failed is not printed; the figures are what LM Studio measured before loading",)),
    Signature(
        "lmstudio_failed_load", "lmstudio", ("Failed to load model", "Failed to load the model"),
        r"Failed to load (?:the )?model", role="warn", priority=1,
        message="Failed to load model / errorData: {n_ctx, n_batch, n_gpu_layers}",
        causes=("LM Studio's wrapper around a llama.cpp or MLX failure",),
        fixes=("Context Length smaller; GPU Offload lower; 'Offload KV Cache to GPU' off",)),
    # -------------------------------------------------------------------------------------------------- MLX
    Signature(
        "mlx_max_buffer", "mlx", ("Attempting to allocate",),
        r"Attempting to allocate [0-9]{1,20} bytes which is greater",
        stage="buffer_limit", backend="Metal", priority=6,
        fields=(Field("requested_bytes", r"allocate ([0-9]{1,20}) bytes", "bytes"),
                Field("max_buffer_bytes", r"buffer size of ([0-9]{1,20}) bytes", "bytes")),
        message="[metal::malloc] Attempting to allocate {size} bytes which is greater than the maximum allowed "
                "buffer size of {maxBufferLength} bytes.",
        causes=("one buffer (the attention matrix of a long prefill step, or an image's features) is over Metal's "
                "maxBufferLength, however much memory is free",),
        fixes=("--prefill-step-size smaller", "--max-kv-size (rotating cache)", "--kv-bits 8 or 4")),
    Signature(
        # oMLX (jundot/omlx, an MLX server) refuses a request before its prefill when its memory guard predicts the
        # peak over its cap (_preflight_safety_rejection: the resident memory now + the prompt's new KV + the
        # smallest prefill chunk's transient at the prompt's length, against margin x the effective ceiling): the
        # server stays up; the message carries the KV length (prompt tokens - 1) and the guard's own advice
        "omlx_preflight_guard", "mlx", ("preflight safety guard",),
        r"Prefill context too large for available memory \(preflight safety guard", stage="host_ram",
        backend="Metal", priority=6, span=6,
        fields=(Field("input_tokens", r"kv_len=([0-9]{1,12})", "int"),),
        message="Prefill context too large for available memory (preflight safety guard, kv_len={N}, min_chunk={C}): "
                "predicted peak would require ~{X} (current {R} + KV {K} + min-chunk transient {T}) but prefill "
                "safety cap is {CAP} ({M}% of effective ceiling {E}). Reduce context length, free system memory, or "
                "loosen memory_guard_tier (safe → balanced → aggressive).",
        versions="oMLX (0.5.2 prints it; jundot/omlx#2321)",
        causes=("oMLX's memory guard refused the request before its prefill: what is resident now (the model, the "
                "caches) plus this prompt's KV and prefill would pass the guard's cap of unified memory",),
        fixes=("free unified memory: close other apps, unload other models",
               "memory_guard_tier one step looser (safe → balanced → aggressive): the guard's cap, not Metal, "
               "refused")),
    Signature(
        "mlx_resource_limit", "mlx", ("[metal::malloc] Resource limit",), r"Resource limit \([0-9]{1,20}\) exceeded",
        stage="buffer_limit", backend="Metal", priority=5,
        fields=(Field("resource_limit", r"Resource limit \(([0-9]{1,20})\)", "int"),),
        message="[metal::malloc] Resource limit ({n}) exceeded.",
        causes=("too many Metal buffers alive at once",), fixes=("fewer cached arrays; mx.clear_cache()",)),
    Signature(
        "mlx_unable_alloc", "mlx", ("[malloc] Unable to allocate",), r"\[malloc\] Unable to allocate [0-9]{1,20} bytes",
        stage="host_ram", priority=5,
        fields=(Field("requested_bytes", r"allocate ([0-9]{1,20}) bytes", "bytes"),),
        message="[malloc] Unable to allocate {size} bytes.",
        causes=("unified memory exhausted",), fixes=("a smaller model or context",)),
    Signature(
        "mlx_wired_warning", "mlx", ("which is close to the maximum recommended size",),
        r"requires [0-9]{1,20} MB which is close to the maximum recommended size", role="warn",
        fields=(Field("model_required_bytes", r"requires ([0-9]{1,20}) MB", "MB"),
                Field("max_recommended_bytes", r"recommended size of ([0-9]{1,20}) MB", "MB")),
        message="[WARNING] Generating with a model that requires {X} MB which is close to the maximum recommended "
                "size of {Y} MB. This can be slow.",
        causes=("the model is near macOS's wired-memory limit",),
        fixes=("sudo sysctl iogpu.wired_limit_mb=N (above the model size, below RAM)",)),
    Signature(
        # mlx_lm/utils.py _get_classes (mlx_vlm/utils.py get_model_and_args alike): `msg = f"Model type {model_type}
        # not supported."; logging.error(msg); raise ValueError(msg)` when mlx_lm.models.<model_type> does not import
        "mlx_model_type_unsupported", "mlx", ("Model type ",),
        r"Model type [A-Za-z0-9_.\-]{1,60} not supported\.", role="not_oom", priority=6,
        fields=(Field("model_type", r"Model type ([A-Za-z0-9_.\-]{1,60}) not supported", "str"),),
        message="ValueError: Model type {model_type} not supported.",
        causes=("this mlx-lm / mlx-vlm has no module for the model's model_type (a model newer than the "
                "release): not a memory problem",),
        fixes=("update mlx-lm / mlx-vlm (pip install -U mlx-lm mlx-vlm), or LM Studio's MLX runtime, to a release "
               "with this model type",)),
    # -------------------------------------------------------------------------------------------------- TGI
    Signature(
        "tgi_prefill", "tgi", ("Not enough memory to handle",), r"Not enough memory to handle", priority=7,
        fields=(Field("prefill_tokens", r"handle ([0-9]{1,20}) prefill tokens", "int"),
                Field("prefill_tokens", r"with ([0-9]{1,20}) prefill tokens", "int"),
                Field("total_tokens", r"handle ([0-9]{1,20}) total tokens", "int"),
                Field("max_total_tokens", r"handle `?max_total_tokens=([0-9]{1,20})", "int"),
                # the v3 router's warm-up span on the same line (backends/v3/src/client/mod.rs, tracing
                # `warmup{max_input_length=Some(N) max_prefill_tokens=P ...}`): the input limit in force
                Field("max_input_tokens", r"max_input_(?:length|tokens)=Some\(([0-9]{1,20})\)", "int")),
        message="Not enough memory to handle {N} prefill tokens. You need to decrease `--max-batch-prefill-tokens`",
        versions="TGI v1-v3 (2023: '{T} total tokens with {P} prefill tokens'; v2/v3 routers: "
                 "'max_total_tokens={N}')",
        causes=(),  # the stage says which: the prefill batch (compute) or the batch's total tokens (KV)
        fixes=("--max-batch-prefill-tokens lower (>= --max-input-tokens)", "--max-total-tokens lower",
               "--num-shard N", "--quantize ...")),
    # ---------------------------------------------------------------------------------------------- ExLlama
    Signature(
        "exllama_insufficient", "exllama", ("Insufficient VRAM", "Insufficient space in device allocation"),
        r"Insufficient VRAM (?:in split )?for model and cache|Insufficient space in device allocation",
        stage="kv_cache", priority=7,
        message="RuntimeError: Insufficient VRAM for model and cache (ExLlamaV3: 'Insufficient VRAM in split for "
                "model and cache')",
        versions="ExLlamaV2 autosplit, ExLlamaV3",
        causes=("the cache is sized for the model's full context by default",),
        fixes=("max_seq_len / -l smaller", "cache_mode Q8 / Q6 / Q4 (-cq4)", "gpu_split; cpu_moe_offload_layers")),
    # ---------------------------------------------------------------------------------------------- TRT-LLM
    Signature(
        "trtllm_malloc", "tensorrt-llm", ("CUDA runtime error in ::cudaMalloc", "[TensorRT-LLM][ERROR] CUDA runtime error"),
        r"CUDA runtime error in ::cudaMalloc\w{0,64}\(|\[TensorRT-LLM\]\[ERROR\] CUDA runtime error in [^:\n]{0,80}: out of "
        r"memory", stage="compute", priority=5,
        message="[TensorRT-LLM][ERROR] CUDA runtime error in ::cudaMallocAsync(ptr, n, mCudaStream->get()): out "
                "of memory (.../tllmBuffers.h:112)",
        causes=("runtime and decoder buffers sized by the engine's max_batch_size / max_num_tokens",),
        fixes=("rebuild the engine with a smaller --max_batch_size and --max_num_tokens",
               "kv_cache_free_gpu_mem_fraction lower")),
    Signature(
        "trtllm_executor", "tensorrt-llm", ("Executor creation failed due to insufficient GPU memory",),
        r"Executor creation failed due to insufficient GPU memory", priority=6, span=6,
        # _torch/pyexecutor/py_executor_creator.py _ExecutorMemoryMonitor._maybe_explain_if_oom (1.0+): the message,
        # a blank line, then "The following component could not be created: <friendly name>" and the totals, one a
        # line; a paste joined on one line runs the name into "Total GPU memory"
        fields=(Field("component", r"could not be created: ([A-Za-z][A-Za-z ()]{0,90}?)(?=\s{0,4}Total GPU memory|\s*$)",
                      "str"),
                Field("total_bytes", r"Total GPU memory \(GiB\): ([0-9.]{1,24})", "GiB"),
                Field("free_bytes", r"Free GPU memory before component creation attempt \(GiB\): ([0-9.]{1,24})", "GiB")),
        message="Executor creation failed due to insufficient GPU memory. The following component could not be "
                "created: {component}. Total GPU memory (GiB): {T}. Free GPU memory before component creation "
                "attempt (GiB): {F}",
        versions="TensorRT-LLM PyTorch backend (trtllm-serve >= 1.0)",
        causes=("the component named does not fit (KV cache: max_seq_len x max_batch_size)",),
        fixes=("--max_seq_len / --max_batch_size / --max_num_tokens lower", "--kv_cache_free_gpu_memory_fraction",
               "--tp_size / --ep_size")),
    # ------------------------------------------------------------------------------ transformers / bitsandbytes
    Signature(
        "hf_dispatch_cpu_disk", "transformers", ("Some modules are dispatched on the CPU or the disk",),
        r"Some modules are dispatched on the CPU or the disk", stage="weights", priority=6,
        message="ValueError: Some modules are dispatched on the CPU or the disk. Make sure you have enough GPU RAM "
                "to fit the quantized model. If you want to dispatch the model on the CPU or the disk while keeping "
                "these modules in 32-bit, you need to set `llm_int8_enable_fp32_cpu_offload=True` ...",
        versions="transformers bnb quantizers (2023 wording: load_in_8bit_fp32_cpu_offload)",
        causes=("device_map='auto' put layers on cpu/disk: the quantized model does not fit the GPU",
                "or bitsandbytes / CUDA cannot see the GPU, so everything mapped to the CPU"),
        fixes=("a smaller model or 4-bit instead of 8-bit", "free the GPU",
               "check the bitsandbytes CUDA build (python -m bitsandbytes)",
               "BitsAndBytesConfig(llm_int8_enable_fp32_cpu_offload=True) with an explicit device_map")),
    Signature(
        # accelerate/big_modeling.py dispatch_model: `raise ValueError("You are trying to offload the whole model to
        # the disk. Please use the `disk_offload` function instead.")` (every module of the device_map on disk);
        # accelerate/utils/modeling.py load_checkpoint_in_model: "At least one of the model submodule will be
        # offloaded to disk, please pass along an `offload_folder`."; transformers modeling_utils.py
        # from_pretrained: "The current `device_map` had weights offloaded to the disk. Please provide an
        # `offload_folder` for them." The device_map (infer_auto_device_map over max_memory) found no GPU or CPU
        # room for those modules
        "hf_offload_disk", "transformers", ("offload the whole model to the disk", "will be offloaded to disk",
                                            "had weights offloaded to the disk"),
        r"offload the whole model to the disk|submodule will be offloaded to disk|had weights offloaded to the disk",
        stage="weights", priority=6,
        message="ValueError: You are trying to offload the whole model to the disk. Please use the `disk_offload` "
                "function instead. / The current `device_map` had weights offloaded to the disk. Please provide an "
                "`offload_folder` for them.",
        versions="accelerate 0.2x-1.x, transformers 4.2x-4.5x",
        causes=("device_map put modules on disk: the weights do not fit the GPU and CPU memory the map was given "
                "(max_memory, or what accelerate measured free)",
                "with a CPU-only PyTorch (torch.cuda.is_available() False) the map has no GPU at all"),
        fixes=("a smaller model, or 4-bit weights (BitsAndBytesConfig(load_in_4bit=True))",
               "max_memory={0: '<GiB>', 'cpu': '<GiB>'} stating the room each device has; free RAM and VRAM",
               "offload_folder='offload' to let what does not fit go to disk (very slow)")),
    Signature(
        # transformers/modeling_gguf_pytorch_utils.py load_gguf_checkpoint: `raise ValueError(f"GGUF model with
        # architecture {architecture} is not supported yet.")` when integrations/ggml.py has no mapping for it
        "hf_gguf_arch_unsupported", "transformers", ("GGUF model with architecture",),
        r"GGUF model with architecture \S{1,60} is not supported yet", role="not_oom", priority=6,
        fields=(Field("architecture", r"GGUF model with architecture (\S{1,60}) is not supported", "str"),),
        message="ValueError: GGUF model with architecture {arch} is not supported yet.",
        causes=("transformers' GGUF loader has no tensor mapping for this architecture: not a memory problem",),
        fixes=("update transformers to a release whose GGUF loader maps this architecture, or load the original "
               "safetensors checkpoint",)),
    Signature(
        # accelerate/utils/modeling.py check_device_map (called by dispatch_model and transformers' from_pretrained
        # with a device_map): a hand-made or inferred map that leaves a parameter without a device is refused before
        # any weight moves; the memory behind the map is not the question
        "hf_device_map_uncovered", "transformers", ("does not give any device for the following parameters",),
        r"device_map provided does not give any device for the following parameters", role="not_oom", priority=6,
        fields=(Field("parameters", r"following parameters: ([^'\"\n]{1,200})", "str"),),
        message="ValueError: The device_map provided does not give any device for the following parameters: {names}",
        versions="accelerate (check_device_map), through transformers from_pretrained(device_map=...)",
        causes=("the device_map names no device for some parameters (a module infer_auto_device_map or a hand-made "
                "map left out, often one outside the repeated layers): a map error, not a shortage",),
        fixes=("add the named parameters' module to the device_map (or no_split_module_classes for the layer that "
               "holds them), or let device_map='auto' build the whole map",)),
    Signature(
        "bnb_no_gpu", "bitsandbytes", ("compiled without GPU support",), r"compiled without GPU support",
        role="not_oom", priority=4,
        message="The installed version of bitsandbytes was compiled without GPU support.",
        causes=("a CPU-only bitsandbytes build: not a memory shortage",),
        fixes=("install a CUDA build of bitsandbytes",)),
    # ------------------------------------------------------------------------------------------ look-alikes
    Signature(
        "driver_mismatch", "cuda", ("driver version is insufficient", "Driver/library version mismatch",
                                    "NVIDIA driver on your system is too old", "no CUDA-capable device",
                                    "Found no NVIDIA driver", "forward compatibility was attempted"),
        r"driver version is insufficient|Driver/library version mismatch|NVIDIA driver on your system is too old|"
        r"no CUDA-capable device|Found no NVIDIA driver|forward compatibility was attempted", role="not_oom",
        priority=3,
        message="CUDA driver version is insufficient for CUDA runtime version / Failed to initialize NVML: "
                "Driver/library version mismatch",
        causes=("the driver, the CUDA runtime and the build do not match (not an out-of-memory)",),
        fixes=("update the NVIDIA driver or install a build for this CUDA version; reboot after a driver update",)),
    Signature(
        # cudaErrorNoKernelImageForDevice (209): cudaGetErrorString gives "no kernel image is available for execution
        # on the device", as PyTorch ("RuntimeError: CUDA error: ...") and ggml-cuda's CUDA_CHECK ("CUDA error: ...")
        # print it: the binary holds no code for this GPU's compute capability (a Blackwell sm_120 card under a build
        # made before CUDA 12.8); a newer driver does not add it
        "no_kernel_image", "cuda", ("no kernel image is available",), r"no kernel image is available",
        role="not_oom", priority=3,
        message="CUDA error: no kernel image is available for execution on the device",
        causes=("the build has no GPU code for this device's compute capability (not an out-of-memory)",),
        fixes=("a build compiled for this GPU's compute capability: a PyTorch / engine image built with CUDA 12.8+ "
               "for Blackwell (sm_120), or llama.cpp built with CMAKE_CUDA_ARCHITECTURES including it",)),
    Signature(
        # c10/cuda/CUDAFunctions.cpp device_count_ensure_non_zero: `TORCH_CHECK(count, "No CUDA GPUs are
        # available")` when the process sees no CUDA device (CUDA_VISIBLE_DEVICES, a container without the GPU)
        "no_gpu_visible", "cuda", ("No CUDA GPUs are available",), r"No CUDA GPUs are available", role="not_oom",
        priority=3,
        message="RuntimeError: No CUDA GPUs are available",
        causes=("PyTorch sees no CUDA device in this process: nothing was allocated",),
        fixes=("make the GPU visible to the process: CUDA_VISIBLE_DEVICES naming a device that exists, Docker "
               "--gpus all (NVIDIA Container Toolkit), Kubernetes resources.limits nvidia.com/gpu; nvidia-smi inside "
               "the container must list it",)),
    Signature(
        # sgl-kernel csrc/allreduce/custom_all_reduce.cuh CUDACHECK (the JIT kernel's RuntimeCheck in 2026 builds):
        # a CUDA call of the custom all-reduce (its IPC handles for the graph buffers, registered during CUDA-graph
        # capture) failing with "invalid argument": peer access / IPC between the GPUs, not memory
        "sglang_custom_allreduce", "sglang", ("custom_all_reduce",),
        r"custom_all_reduce\w{0,8}\.cuh:[0-9]{1,6}", role="not_oom", priority=5,
        message="RuntimeError: Runtime check failed at .../custom_all_reduce.cuh:37: CUDA error: invalid argument / "
                "Exception: Capture cuda graph failed",
        causes=("SGLang's custom all-reduce kernel failed a CUDA call (its CUDA IPC between the GPUs) during "
                "CUDA-graph capture: not an out-of-memory",),
        fixes=("--disable-custom-all-reduce (NCCL's all-reduce instead)",
               "--disable-cuda-graph to confirm (slower decoding)")),
    Signature(
        # vLLM csrc/custom_all_reduce.cuh CUDACHECK: printf("Failed: Cuda error %s:%d '%s'\n", __FILE__, __LINE__,
        # cudaGetErrorString(e)) then exit (2024 builds: "Failed: %s:%d '%s'"), the file being vLLM's csrc (a wheel
        # built under /workspace or a runner's .../vllm/csrc); its IPC buffers are registered after each CUDA-graph
        # capture, so an "invalid argument" there (peer access between the GPUs) stops the start-up: not memory
        "vllm_custom_allreduce", "vllm", ("custom_all_reduce.cuh:",),
        r"Failed: (?:Cuda error )?(?![^\n']{0,300}sgl)[^\n']{0,300}custom_all_reduce\.cuh:[0-9]{1,6} '",
        role="not_oom", priority=6,
        message="Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:{LINE} 'invalid argument' (2024: Failed: "
                ".../vllm/csrc/custom_all_reduce.cuh:{LINE} 'invalid argument')",
        versions="vLLM 0.4+ (custom all-reduce with tensor parallelism and CUDA graphs)",
        causes=("vLLM's custom all-reduce failed a CUDA call (the IPC registration of its graph buffers between the "
                "GPUs) after CUDA-graph capture: not an out-of-memory",),
        fixes=("--disable-custom-all-reduce (NCCL's all-reduce instead)",
               "--enforce-eager to confirm (no CUDA graphs; slower decoding)")),
    Signature(
        # DeepGEMM csrc/utils/exception.hpp: DG_HOST_ASSERT / DG_HOST_UNREACHABLE throw DGException("Assertion",
        # __FILE__, __LINE__, cond), whose what() is "Assertion error (<file>:<line>): <cond or reason>" (PyTorch
        # relays it as a RuntimeError): a kernel's precondition (an architecture or recipe it has no kernel for), in
        # vLLM's and SGLang's FP8 paths and their DeepGEMM warm-up; no allocation
        "deepgemm_assert", "deepgemm", ("Assertion error (",),
        r"Assertion error \([^()\n]{0,400}deep_?gemm[^()\n]{0,400}:[0-9]{1,6}\)", role="not_oom", priority=3,
        ignore_case=True,
        message="RuntimeError: Assertion error (.../deepgemm-src/csrc/.../layout.hpp:76): Unknown recipe",
        versions="DeepGEMM (vLLM's and SGLang's FP8 GEMMs and their kernel warm-up)",
        causes=("a DeepGEMM kernel refused its inputs (an assertion: a GPU architecture or scaling recipe this "
                "DeepGEMM build has no kernel for): not an out-of-memory",),
        fixes=("a DeepGEMM build that supports this GPU (or the engine release pinned to one)",
               "VLLM_USE_DEEP_GEMM=0 (vLLM) to use its other FP8 kernels; VLLM_DEEP_GEMM_WARMUP=skip skips the "
               "warm-up only")),
    Signature(
        # vllm/utils/deep_gemm.py _missing: each DeepGEMM entry point when the deep_gemm package is absent or too old
        # raises RuntimeError("DeepGEMM backend is not available or outdated. Please install or update the
        # `deep_gemm` to a newer version to enable FP8 kernels."); the kernel warm-up (model_executor/warmup/
        # kernel_warmup.py) calls it at start-up even for models with no FP8 layers in some releases
        "vllm_deepgemm_missing", "vllm", ("DeepGEMM backend is not available",),
        r"DeepGEMM backend is not available or outdated", role="not_oom", priority=3,
        message="RuntimeError: DeepGEMM backend is not available or outdated. Please install or update the "
                "`deep_gemm` to a newer version to enable FP8 kernels.",
        versions="vLLM 0.10+ (DeepGEMM FP8 kernels and their warm-up)",
        causes=("vLLM called DeepGEMM, and the deep_gemm package is missing or too old: not an out-of-memory",),
        fixes=("VLLM_DEEP_GEMM_WARMUP=skip (no DeepGEMM warm-up) or VLLM_USE_DEEP_GEMM=0 (no DeepGEMM kernels)",
               "install the deep_gemm release this vLLM pins (tools/install_deepgemm.sh)")),
    Signature(
        # hipErrorInvalidDeviceFunction / cudaErrorInvalidDeviceFunction ("invalid device function"), as ggml-cuda's
        # CUDA_CHECK prints it ("ROCm error: invalid device function"): the binary holds no kernel for this GPU's
        # architecture (an AMD gfx target the build or HSA_OVERRIDE_GFX_VERSION does not match); ROCr's "Memory
        # critical error ... Reason: Memory in use" that follows is its teardown after the abort
        "invalid_device_function", "cuda", ("invalid device function", "InvalidDeviceFunction"),
        r"invalid device function|(?:hip|cuda)ErrorInvalidDeviceFunction", role="not_oom", priority=3,
        message="ROCm error: invalid device function / current device: N, in function ggml_cuda_compute_forward",
        causes=("the build has no GPU kernels for this device's architecture (not an out-of-memory)",),
        fixes=("a build with kernels for this GPU's architecture (its gfx target); HSA_OVERRIDE_GFX_VERSION only to "
               "a compatible gfx version",)),
    Signature(
        # ROCr's GPU page-fault report (ROCR-Runtime runtime/hsa-runtime/core/runtime/runtime.cc
        # Runtime::VMFaultHandler: "Memory access fault by GPU node-%u (Agent handle: %p) on address %p%s. Reason:
        # %s."): a kernel touched an address with no page behind it, which HSA reports and aborts on; an allocation
        # that fails returns hipErrorOutOfMemory instead ("ROCm error: out of memory"), so this is no shortage of memory
        "rocr_memory_access_fault", "cuda", ("Memory access fault by GPU",),
        r"Memory access fault by GPU node-[0-9]{1,4}", role="not_oom", priority=3, backend="ROCm",
        message="Memory access fault by GPU node-N (Agent handle: 0x...) on address 0x.... Reason: Page not present "
                "or supervisor privilege.",
        versions="any ROCm program (ROCr runtime)",
        causes=("a GPU kernel read or wrote an unmapped address (a kernel built for another gfx target than the GPU, "
                "as HSA_OVERRIDE_GFX_VERSION forces, a driver / ROCm mismatch, or a bug): not an out-of-memory",),
        fixes=("a build with kernels for this GPU's gfx target, or HSA_OVERRIDE_GFX_VERSION set to its own family "
               "(or unset); a kernel driver and ROCm release that match; AMD_SERIALIZE_KERNEL=3 to find the kernel",)),
    Signature(
        # the CUDA runtime's capture errors (cudaGetErrorString of cudaErrorStreamCaptureUnsupported /
        # cudaErrorStreamCaptureInvalidated) and PyTorch's refusal under capture (CUDAGeneratorImpl.cpp): a CUDA
        # graph capture stopped by an operation it cannot record
        "cuda_capture_illegal", "cuda", ("when stream is capturing", "due to a previous error during capture",
                                         "during CUDA graph capture"),
        r"operation not permitted when stream is capturing|operation failed due to a previous error during capture|"
        r"Cannot call \S{1,80} during CUDA graph capture", role="not_oom", priority=2,
        message="RuntimeError: CUDA error: operation not permitted when stream is capturing",
        causes=("an operation that a CUDA graph cannot record ran during capture (a kernel, a host sync, a random "
                "seed): not an out-of-memory",),
        fixes=("run without CUDA graphs (vLLM --enforce-eager, SGLang --disable-cuda-graph) or without "
               "torch.compile; update the engine",)),
    Signature(
        # triton/runtime/errors.py OutOfResources.__str__: "out of resource: {name}, Required: {required}, Hardware
        # limit: {limit}. Reducing block sizes or `num_stages` may help.", raised by compiler.py CompiledKernel
        # _init_handles when a compiled kernel's shared memory (metadata.shared) is over the device's per-block
        # maximum (an AMD CU's 64 KiB LDS, an NVIDIA SM's opt-in limit): the kernel's tile configuration, fixed at
        # compile time, which no memory setting of the engine changes
        "triton_out_of_resources", "cuda", ("out of resource:",),
        r"out of resource: [a-z_ ]{1,40}, Required: [0-9]{1,12}, Hardware limit: [0-9]{1,12}", role="not_oom",
        priority=4,
        # the figures in bytes only for shared memory (registers are counted per thread)
        fields=(Field("shared_memory_required_bytes", r"shared memory, Required: ([0-9]{1,12})", "bytes"),
                Field("shared_memory_limit_bytes", r"shared memory, Required: [0-9]{1,12}, Hardware limit: "
                      r"([0-9]{1,12})", "bytes")),
        message="triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: {REQUIRED}, "
                "Hardware limit: {LIMIT}. Reducing block sizes or `num_stages` may help.",
        versions="Triton 2.1+ (vLLM's and SGLang's Triton kernels: attention backends, MoE, at warm-up or CUDA-graph "
                 "capture)",
        causes=("a Triton kernel's tile needs more on-chip shared memory per block than this GPU has (a kernel "
                "configuration tuned for another GPU): not an out-of-memory of device memory",),
        fixes=("another attention or kernel backend for this GPU (SGLang --attention-backend, vLLM "
               "VLLM_ATTENTION_BACKEND), or an engine release whose Triton configs fit it; no memory setting helps",)),
    Signature(
        "illegal_memory_access", "cuda", ("illegal memory access", "device-side assert triggered",
                                          "misaligned address", "CUDA_ERROR_ILLEGAL_ADDRESS"),
        r"illegal memory access|device-side assert triggered|misaligned address|CUDA_ERROR_ILLEGAL_ADDRESS",
        role="not_oom", priority=2,
        message="RuntimeError: CUDA error: an illegal memory access was encountered",
        causes=("a kernel read or wrote out of bounds (a bug or a bad input), not a shortage of memory",),
        fixes=("CUDA_LAUNCH_BLOCKING=1 to find the kernel; update the engine; report the bug",)),
    Signature(
        "disk_full", "os", ("No space left on device", "no space left on device", "[Errno 28]", "ENOSPC",
                                 "not enough disk space"),
        r"No space left on device|\[Errno 28\]|ENOSPC|not enough disk space", role="not_oom", priority=2,
        ignore_case=True,
        message="OSError: [Errno 28] No space left on device",
        causes=("the disk (or /dev/shm, or the HF cache) is full: not GPU or host memory",),
        fixes=("free disk space or point HF_HOME / the cache to a larger disk; raise --shm-size in Docker",)),
    Signature(
        # triton/runtime/build.py: each compiled kernel's launcher is built with the C compiler and linked with
        # -lcuda (backends/nvidia/driver.py libraries); torch.compile (vLLM V1 at start-up, SGLang's kernels) fails
        # here when only libcuda.so.1 is on the linker's path: the engine then reports a failed start, no memory
        "libcuda_link", "os", ("cannot find -lcuda",), r"cannot find -lcuda", role="not_oom", priority=2,
        message="/usr/bin/ld: cannot find -lcuda: No such file or directory / collect2: error: ld returned 1 exit "
                "status",
        versions="Triton (torch.compile, vLLM V1, SGLang)",
        causes=("Triton could not link a kernel launcher against libcuda.so (the driver library is not where the "
                "linker looks: a container or environment with only libcuda.so.1), not an out-of-memory",),
        fixes=("make libcuda.so findable (`ldconfig -p | grep libcuda`; TRITON_LIBCUDA_PATH=<its directory>)",
               "--enforce-eager (vLLM: no torch.compile at start-up)")),
    Signature(
        # (Kubernetes' container status reason OOMKilled and Docker's State.OOMKilled: the container's cgroup ran out
        # of its memory limit and the kernel killed it; "OOMKilled": false is Docker saying the opposite)
        "oom_killer", "os", ("oom-kill", "Out of memory: Killed process", "oom_kill_process", "invoked oom-killer",
                             "OOMKilled"),
        r"oom-kill|Out of memory: Killed process|oom_kill_process|invoked oom-killer|"
        r"OOMKilled(?![\"']?\s{0,3}[:=]\s{0,3}false)", stage="host_ram",
        priority=4,
        message="systemd: ollama.service: Failed with result 'oom-kill' / kernel: Out of memory: Killed process / "
                "Kubernetes: Last State: Terminated, Reason: OOMKilled",
        causes=("the kernel's OOM killer ended the process: host RAM (and swap) ran out",),
        fixes=("a smaller model or context; more layers on the GPU; add swap",)),
    Signature(
        "killed_signal", "os", ("signal: killed", "exit code 137", "exited with code 137", "Killed"),
        # bash's "Killed", Go's "signal: killed", Docker's 137 (128 + SIGKILL): most often the kernel's OOM killer
        # while the weights load into host RAM, though nothing in the text proves it
        r"signal: killed|exit(?:ed with)? code:? 137|^\s{0,40}Killed\s{0,40}$", stage="host_ram", priority=1,
        message="signal: killed / Killed / exit code 137",
        causes=("the process was killed by SIGKILL: most often the kernel's OOM killer when host RAM (and swap) ran "
                "out, though a supervisor, a timeout or a user can send it too",),
        fixes=("check `dmesg | grep -i oom` (or `docker inspect` OOMKilled); if it was the OOM killer: a smaller "
               "model or context, or more RAM or swap",)),
    Signature(
        "terminated_signal", "os", ("SIGTERM", "received signal 15", "Terminated"),
        r"SIGTERM|received signal 15|^\s{0,40}Terminated\s{0,40}$", role="not_oom", priority=0,
        message="received SIGTERM / Terminated",
        causes=("the process was asked to stop (SIGTERM): not an out-of-memory",),
        fixes=("look for the reason the supervisor stopped it",)),
)

BY_ID = {s.id: s for s in SIGNATURES}

# Lines that carry an out-of-memory word but match no signature: recognised as "some out-of-memory", unplaced.
GENERIC_OOM = ("out of memory", "OutOfMemory", "OOM", "cannot allocate memory", "Cannot allocate memory",
               "failed to allocate", "insufficient memory", "Insufficient Memory")
