"""diagnose() on a twelfth held-out set of public crash logs (tests/fixtures/diagnose/heldout12.jsonl), 17 logs new to
every diagnose fixture, 2024-2026: SGLang with --mem-fraction-static 0.95 running out in its symmetric-memory pool on
GB200, vLLM's DeepGEMM warm-up failing an assertion or missing its package, vLLM's custom all-reduce after CUDA-graph
capture, vLLM's capture notices and llama.cpp's --fit projection (start-up lines with memory words, no failure), a
SYCL device buffer on an Arc B580 and a SYCL regression, transformers' loading warm-up over MPS's single-buffer limit,
Metal command-buffer failures under MLX servers, Windows Ollama (a dropped runner connection, two GPUs in 0.1.30),
WSL's pinned-memory fallback and a PyTorch OOM in one process's generate. Each case is cited with the lines kept
verbatim and the fix its thread confirms; `before` records what oomkit answered before the rules these logs led to:
12 of 17 wrong (11 in engine or stage, 1 in the fix); 11 fixed by engine rules (DeepGEMM's DG_HOST_ASSERT and vLLM's
deep_gemm.py _missing as no shortage, vLLM's csrc/custom_all_reduce.cuh CUDACHECK as vLLM's, ggml-sycl.cpp's "can't
allocate N Bytes of memory on device", llama_params_fit_impl's projection and vLLM's capture notices as routine
notices read only when nothing else is there, SGLang's prealloc_symmetric_memory_pool as a phase after the KV cache
with its --config YAML's mem-fraction-static, PyTorch MPSAllocator's "Invalid buffer size" with transformers'
caching_allocator_warmup, Ollama's "POST predict" dropped connection, MLX's buffer cache limit beside its Metal
command-buffer failure); 1 still wrong as a strict xfail (a SYCL regression the text cannot show: oneDNN
says the same when an allocation fails). The checks: tests/diagnose_heldout.py check_case; the garble pass as in sets
6 to 11."""

from __future__ import annotations

from tests.diagnose_heldout import garble_tests, heldout_tests

CASES, test_cases_are_cited_and_new, test_heldout_case = heldout_tests("heldout12.jsonl", minimum=16, fix_required=True)


def test_notices_hide_no_failure():
    """vLLM's capture notice and llama.cpp's --fit projection are none only alone: beside PyTorch's out-of-memory the
    failure is read, and beside a traceback cut in capture_model the cut reading stays."""
    from oomkit.diagnose import diagnose

    notice = ("INFO 12-24 06:16:39 model_runner.py:1417] If out-of-memory error occurs during cudagraph capture, "
              "consider decreasing `gpu_memory_utilization` or switching to eager mode.")
    oom = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
           "23.57 GiB of which 1.10 GiB is free. Including non-PyTorch memory, this process has 22.46 GiB memory in "
           "use. Of the allocated memory 21.90 GiB is allocated by PyTorch, and 120.00 MiB is reserved by PyTorch but "
           "unallocated.")
    d = diagnose(f"{notice}\n{oom}\n")
    assert d.stage == "compute" and d.engine == "pytorch"
    cut = (f'(VllmWorker rank=0 pid=7) {notice}\n'
           '(VllmWorker rank=0 pid=7)   File "/usr/lib/python3/site-packages/vllm/worker/worker.py", line 310, '
           'in _warm_up_model\n'
           '(VllmWorker rank=0 pid=7)     self.model_runner.capture_model(self.gpu_cache)\n')
    assert diagnose(cut).stage == "compute"
    fit = ("llama_params_fit_impl: projected to use 410593 MiB of device memory vs. 97017 MiB of free device memory\n"
           "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 3040.00 MiB on device 0: cudaMalloc failed: out of "
           "memory\nalloc_tensor_range: failed to allocate CUDA0 buffer of size 3187671040\n"
           "llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache\n")
    assert diagnose(fit).stage == "kv_cache"


def test_custom_allreduce_by_its_path():
    """The custom all-reduce's CUDACHECK line is vLLM's under vLLM's csrc, SGLang's under sgl-kernel."""
    from oomkit.diagnose import diagnose

    vllm = "Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:164 'invalid argument'"
    assert (diagnose(vllm).engine, diagnose(vllm).stage) == ("vllm", "not_oom")
    sgl = "Failed: Cuda error /sgl-kernel/csrc/allreduce/custom_all_reduce.cuh:368 'invalid argument'"
    assert (diagnose(sgl).engine, diagnose(sgl).stage) == ("sglang", "not_oom")


def test_symmetric_memory_pool_from_its_progress_line():
    """SGLang's "Pre-allocating symmetric memory pool" line before PyTorch's out-of-memory places the phase (the start-up's
    last step) without the function's name."""
    from oomkit.diagnose import diagnose

    text = ("[2026-05-21 10:00:00 TP3] Capture cuda graph end. Time elapsed: 40.12 s. mem usage=3.10 GB. avail "
            "mem=6.21 GB.\n[2026-05-21 10:00:01 TP3] Pre-allocating symmetric memory pool with 4 GiB\n"
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB. GPU 3 has a total capacity of "
            "184.00 GiB of which 2.21 GiB is free. Including non-PyTorch memory, this process has 181.77 GiB memory "
            "in use.\n")
    d = diagnose(text)
    assert (d.host, d.stage, d.phase) == ("sglang", "compute", "symmetric memory pool")
    assert any(f.env and f.env[0][0] == "SGLANG_SYMM_MEM_PREALLOC_GB_SIZE" for f in d.fixes)


def test_mps_buffer_limit_outside_the_warm_up():
    """MPS's "Invalid buffer size" is one tensor over the single-buffer limit; outside transformers' warm-up the advice
    is the tensor's own size, not a transformers release."""
    from oomkit.diagnose import diagnose

    d = diagnose("RuntimeError: Invalid buffer size: 9.75 GB\n")
    assert (d.engine, d.stage, d.backend) == ("pytorch", "buffer_limit", "MPS")
    assert d.numbers["requested_bytes"] == int(9.75 * 2**30)
    assert not any("caching_allocator_warmup" in f.summary for f in d.fixes)


test_garbled_log_exits_cleanly, test_readable_garbles_keep_the_reading = garble_tests(CASES)
