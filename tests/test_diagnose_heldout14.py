"""diagnose() on a fourteenth held-out set of public crash logs (tests/fixtures/diagnose/heldout14.jsonl), 10 logs new
to every diagnose fixture, 2024-2026, from failures after start-up that sets 12 and 13 left out: vLLM engines that
died serving a long prompt (V1's EngineCore in run_busy_loop, V0's MQEngineDeadError, a typed --enforce-eager and
--no-enable-chunked-prefill), transformers-style inference with one huge attention (a video model's 110 GiB tensor,
OmniGen's scaled_dot_product_attention), ComfyUI's "Allocation on device" (a KSampler report, Flux's sampler, a text
encoder's load), llama.cpp on Metal with the bare "command buffer 0 failed with status 5" and an Ollama runner whose
KV cache was 20 x num_ctx. Each case is cited with the lines kept verbatim and the fix its thread gives (vllm#15039's
thread, open, confirms none: its answer is held to what the log shows); `before` records what oomkit answered
before the rules these logs led to:
before: 9 of 10 wrong (5 in engine or stage, 4 in the fix); after: 10 right, no xfail.
The rules, each from the engine's own message: PyTorch's CUDAMallocAsyncAllocator.cpp "Allocation on device ",
device, " would exceed allowed memory" cut at the device index (an int8 streamed as a NUL character) is a CUDA
out-of-memory (ComfyUI's default allocator), placed by comfy/samplers.py's sampling_function / calc_cond_batch
frames, the error report's sampler node (compute) or comfy/model_patcher.py's load (weights); torch's
scaled_dot_product_attention source line places a PyTorch OOM in the forward pass; ggml-metal's "command buffer N
failed with status 5" (MTLCommandBufferStatusError) with no Metal code after it is read as the working set
(-c smaller), below any named code; vLLM's serving markers (core.py "EngineCore encountered a fatal error",
run_busy_loop, EngineDeadError, MQEngineDeadError, the API server's output_handler) give the serving fixes
(--gpu-memory-utilization lower, --max-num-batched-tokens) and no --enforce-eager; a typed --enforce-eager is not
offered again and a typed --no-enable-chunked-prefill (config/scheduler.py: a whole prompt a step) is dropped
first; llama.cpp's kv_size / n_ctx_per_seq gives Ollama's parallel slots where n_seq_max is not printed, and the
"KV self size" line (every KV buffer allocated) places the next failure in the compute buffer. The checks:
tests/diagnose_heldout.py check_case; the garble pass as in sets 6 to 13."""

from __future__ import annotations

from tests.diagnose_heldout import garble_tests, heldout_tests

CASES, test_cases_are_cited_and_new, test_heldout_case = heldout_tests("heldout14.jsonl", minimum=10, fix_required=True)
test_garbled_log_exits_cleanly, test_readable_garbles_keep_the_reading = garble_tests(CASES)


def test_allocation_on_device_with_its_number_stays_the_fraction_cap():
    """The whole message (a device index printed as a digit, with its figures) keeps the allowed-memory signature;
    only the message cut after "device" is the cudaMallocAsync reading."""
    from oomkit.diagnose import diagnose

    whole = ("torch.OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out of memory)\n"
             "Currently allocated     : 21.50 GiB\nRequested               : 1.00 GiB\n")
    assert diagnose(whole).signature == "torch_allowed_memory"
    assert diagnose("torch.OutOfMemoryError: Allocation on device \n").signature == "torch_mallocasync_oom"


def test_comfyui_older_message_alone_on_its_line():
    """ComfyUI before its error report (2024-08, kijai/ComfyUI-CogVideoXWrapper#26): "Error occurred when executing
    <node>:" then the cut message alone on its line."""
    from oomkit.diagnose import diagnose

    text = ("Error occurred when executing CogVideoDecode:\n\nAllocation on device\n\n"
            'File "E:\\ComfyUI_windows_portable\\ComfyUI\\execution.py", line 317, in execute\n')
    assert diagnose(text).signature == "torch_mallocasync_oom"
    assert diagnose("Allocation on device memory failed for the pool\n").signature != "torch_mallocasync_oom"


def test_named_metal_code_wins_over_the_bare_status():
    """A Metal error code after the status line decides: code 4 (submissions ignored) is no shortage."""
    from oomkit.diagnose import diagnose

    text = ("ggml_metal_graph_compute: command buffer 0 failed with status 5\n"
            "error: Ignored (for causing prior/excessive GPU errors) (00000004:kIOAccelCommandBufferCallbackError"
            "SubmissionsIgnored)\n")
    d = diagnose(text)
    assert d.stage != "host_ram" and not any("-c smaller" in f.summary for f in d.fixes), d.to_dict()


def test_the_bare_status_is_the_usual_cause_not_a_proven_one():
    """The status line alone reads as unified memory at medium confidence (janhq/jan#8206 shows the same bare line
    gone with a llama.cpp update); with Insufficient Memory named after it, high."""
    from oomkit.diagnose import diagnose

    bare = "ggml_metal_graph_compute: command buffer 0 failed with status 5\n"
    d = diagnose(bare)
    assert (d.stage, d.confidence) == ("host_ram", "medium"), d.to_dict()
    d = diagnose(bare + "error: Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)\n")
    assert (d.stage, d.confidence) == ("host_ram", "high"), d.to_dict()


def test_vllm_startup_oom_keeps_the_capture_fixes():
    """Without a serving marker a vLLM OOM keeps the start-up advice (--enforce-eager among it)."""
    from oomkit.diagnose import diagnose

    text = ("INFO 05-01 10:00:00 [gpu_model_runner.py:1] Capturing CUDA graphs (mixed prefill-decode, PIECEWISE)\n"
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
            "23.57 GiB of which 1.00 GiB is free.\n")
    d = diagnose(text)
    assert not any(c.startswith("vLLM ran out serving") for c in d.causes)
