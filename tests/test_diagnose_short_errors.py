"""Short pastes: the last line of an out-of-memory error (or two), as people copy them into threads. Each must name
the part that ran out and the fix the engine's rule implies, say what the lines cannot tell (which program, the
figures) and ask for the lines that would; an unrelated line gets one line that says it is no out-of-memory error
oomkit knows. The lines are the threads' own (URL beside each) or, where none is cited, the engine's source text."""

from __future__ import annotations

import subprocess
import sys

import pytest

from oomkit.diagnose import diagnose
from oomkit.diagnose.text import render

CASES = [
    # (line(s), source, signature, stage, part that ran out (words), fix (words), what it cannot tell (words))
    ("torch.OutOfMemoryError: CUDA out of memory.",
     "https://github.com/vllm-project/vllm/issues/11560 (title)",
     "torch_cuda_oom_cut", "unknown", "GPU memory", "smaller batch", "which program ran PyTorch"),
    ("RuntimeError: CUDA out of memory.",
     "https://github.com/hongwang01/InDuDoNet/issues/1 (title; PyTorch before 1.13 raised a RuntimeError)",
     "torch_cuda_oom_cut", "unknown", "GPU memory", "smaller batch", "which program ran PyTorch"),
    ("CUDA error: out of memory",
     "https://github.com/TencentARC/GFPGAN/issues/274 (title)",
     "ggml_cuda_error_oom", "unknown", "raw CUDA call", "free the GPU", "which program: PyTorch"),
    ("RuntimeError: CUDA error: out of memory",
     "PyTorch c10/cuda/CUDAException.h C10_CUDA_CHECK (\"CUDA error: \" + cudaGetErrorString), as "
     "https://github.com/TencentARC/GFPGAN/issues/274 (title) with the traceback's exception name",
     "cuda_runtime_oom", "unknown", "raw CUDA runtime call", "free the GPU", "which program and which step"),
    ("CUDA out of memory. Tried to allocate 110.00 MiB. GPU",
     "https://github.com/opendatalab/MinerU/issues/1725 (title)",
     "torch_cuda_oom", "unknown", "GPU memory", "smaller batch", "total and free memory"),
    ("ggml_backend_cuda_buffer_type_alloc_buffer: allocating 204800.00 MiB on device 0: cudaMalloc failed: out of "
     "memory", "https://github.com/xorbitsai/inference/issues/2926",
     "ggml_cuda_malloc", "unknown", "GPU memory of the device", "-ngl fewer", "which buffer it was for"),
    ("failed to allocate memory for kv cache",
     "llama.cpp kv_cache_init, b183-b1842 (LLAMA_LOG_ERROR \"%s: failed to allocate memory for kv cache\")",
     "llama_kv_cache_old", "kv_cache", "KV cache", "-c smaller", "the context (-c)"),
    ("ErrorOutOfDeviceMemory",
     "https://github.com/ggml-org/llama.cpp/issues/15256 (title: 'Vulkan on linux always gives "
     "ErrorOutOfDeviceMemory')",
     "ggml_vulkan_alloc", "unknown", "Vulkan device memory", "-ngl fewer", "which program"),
    ("ggml_vulkan: Device memory allocation of size 118497280 failed.\n"
     "ggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory",
     "https://github.com/ggml-org/llama.cpp/issues/15256",
     "ggml_vulkan_alloc", "unknown", "Vulkan device memory", "-ngl fewer", "which buffer it was for"),
    ("HIP driver error 'hipErrorOutOfMemory'",
     "https://github.com/ROCm/rocprofiler-systems/issues/104 (title)",
     "cuda_runtime_oom", "unknown", "HIP (ROCm) runtime call", "rocm-smi", "which program and which step"),
    ("[metal::malloc] Resource limit (499000) exceeded.",
     "MLX mlx/backend/metal/allocator.cpp, from ml-explore/mlx PR #1718 (the 499000 fallback of iogpu.rsrc_limit)",
     "mlx_resource_limit", "buffer_limit", "count of live buffers", "mx.clear_cache()", "which MLX program"),
    ("Error: model requires more system memory (164.8 GiB) than is available (13.4 GiB)",
     "https://github.com/ollama/ollama/issues/10920",
     "ollama_system_memory", "host_ram", "host RAM", "free 151.40 GiB", "the Ollama version"),
    ("ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when "
     "initializing the engine.", "https://github.com/qi-hua/async_cosyvoice/issues/21",
     "vllm_no_cache_blocks", "kv_cache", "KV cache", "--gpu-memory-utilization", "the weights' size"),
    ("RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
     "https://github.com/sgl-project/sglang/issues/4330",
     "sglang_not_enough_memory", "kv_cache", "KV pool", "--mem-fraction-static higher",
     "the --mem-fraction-static in use"),
]


@pytest.mark.parametrize("text,source,sig,stage,part,fix,unknown", CASES, ids=[c[2] + ":" + c[0][:30] for c in CASES])
def test_short_paste_names_the_part_the_fix_and_what_it_cannot_tell(text, source, sig, stage, part, fix, unknown):
    d = diagnose(text)
    assert d.signature == sig and d.stage == stage, (d.signature, d.stage)
    assert d.short and part in d.short["ran_out"], d.short
    assert d.short["unknown"].startswith("from one line" if "\n" not in text else "from 2 lines")
    assert unknown in d.short["unknown"], d.short["unknown"]
    assert d.short["paste"]
    assert any(fix in f.summary or fix in " ".join(f.flags) for f in d.fixes), [f.summary for f in d.fixes]
    out = render(d)
    assert "ran out" in out and "unknown   from" in out and "paste     " in out


def test_the_bare_hip_error_says_rocm_not_nvidia():
    d = diagnose("HIP driver error 'hipErrorOutOfMemory'")  # ROCm/rocprofiler-systems#104
    assert d.backend == "ROCm" and "nvidia-smi" not in d.short["paste"]


def test_the_bare_cuda_error_claims_no_program():
    # PyTorch and llama.cpp print the same words; only llama.cpp's next line ('current device: ...') tells them apart
    d = diagnose("CUDA error: out of memory")  # TencentARC/GFPGAN#274
    assert d.engine == "cuda" and d.stage == "unknown" and d.confidence == "low"
    assert any(f.summary.startswith("llama.cpp") for f in d.fixes) and any("free the GPU" in f.summary for f in d.fixes)
    d = diagnose("ROCm error: out of memory")  # ggml_cuda_error's own words on ROCm (PyTorch says 'HIP error')
    assert d.engine == "llama.cpp"
    d = diagnose("CUDA error: out of memory\n  current device: 0, in function ggml_cuda_pool_malloc_vmm at ggml-cuda.cu:8583")
    assert d.engine == "llama.cpp" and d.stage == "compute"


def test_the_figures_given_are_not_asked_for():
    # ggml_vulkan's size line (llama.cpp#15256) carries the request: the answer does not ask for it again
    d = diagnose("ggml_vulkan: Device memory allocation of size 118497280 failed.\n"
                 "ggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory")
    assert d.numbers["requested_bytes"] == 118497280 and "size asked" not in d.short["unknown"]
    # SGLang's 'Current value' (sglang model_runner: "... Current value: {mem_fraction_static=}")
    d = diagnose("RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: "
                 "self.server_args.mem_fraction_static=0.2")
    assert d.numbers["mem_fraction_static"] == 0.2 and "in use" not in d.short["unknown"]


def test_the_context_line_alone_asks_for_its_reason():
    # llama.cpp src/llama-context.cpp llama_init_from_model (PR #12181, b4881+):
    # LLAMA_LOG_ERROR("%s: failed to initialize the context: %s\n", __func__, err.what()), cut at the colon
    d = diagnose("llama_init_from_model: failed to initialize the context")
    assert d.stage == "unknown" and d.engine == "llama.cpp"
    assert "reason" in d.short["unknown"] and "failed to allocate buffer for kv cache" in d.short["paste"]


def test_two_lines_kv_cache_then_the_context():
    d = diagnose("failed to allocate memory for KV cache\nllama_init_from_model: failed to initialize the context")
    assert d.stage == "kv_cache" and d.short["unknown"].startswith("from 2 lines")
    assert any("-c smaller" in f.summary for f in d.fixes)


@pytest.mark.parametrize("text", ["asdkjh qwe 12", "ImportError: No module named foo", "\x1b[0m}}}{{{ ~~~"])
def test_an_unrelated_line_gets_one_line(text):
    d = diagnose(text)
    assert d.stage == "unknown" and d.short and "unplaced" in d.short
    out = render(d)
    assert "\n" not in out and "not an out-of-memory error oomkit knows" in out


def test_a_whole_log_is_not_a_short_paste():
    log = "INFO loading\nINFO weights 14.0 GiB\nValueError: No available memory for the cache blocks"
    assert diagnose(log).short is None


def test_cli_short_unrelated_line_is_one_line_and_exit_1():
    # the CLI's contract (oomkit diagnose --help): 1 nothing in it could be placed, 2 unreadable input
    r = subprocess.run([sys.executable, "-m", "oomkit", "diagnose"], input="ImportError: No module named foo\n",
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and r.stdout.strip().count("\n") == 0 and "Traceback" not in r.stderr


@pytest.mark.parametrize("word", ["hipErrorOutOfMemory", "ErrorOutOfDeviceMemory", "cudaErrorMemoryAllocation"])
def test_an_error_name_alone_as_the_argument_is_the_message(word, capsys):
    """`oomkit diagnose hipErrorOutOfMemory`: no file of that name, and the word is an error's own name, so it is the
    text to read (a word like server.log or logs/x stays a file name: 'no such file', exit 2)."""
    from oomkit.cli import main  # the CLI entry, as a user runs it
    assert main(["diagnose", word]) == 1  # read, not placed: one line names no stage
    assert "diagnosing the argument as the error text" in capsys.readouterr().err
    assert main(["diagnose", "server.log"]) == 2
