"""diagnose() on a sixteenth held-out set of public crash logs (tests/fixtures/diagnose/heldout16.jsonl), 13 logs new
to every diagnose fixture, 2023-2026, where coverage was thin: Ollama runners that die of no shortage (a ROCm library
of the wrong version: exit status 0xc0000139; a GPU build with no kernel for the card: 'invalid device function';
pinned-memory warnings the runner survived), Ollama's CUDA failing its free-memory query on a card already full, LM
Studio refusing every load when its resources monitor had stopped and exiting 134 in its Vulkan runtime, llama.cpp
on Intel SYCL (the compute buffer) and on two Radeons over Vulkan, under WSL 2 (pinned memory), text-generation-webui's llama.cpp loader on Colab,
and TensorRT-LLM (runtime buffers under gptManagerBenchmark and Triton; the executor's KV cache component on a
276.5 GiB GPU). Each case is cited with the lines kept verbatim and the fix its thread gives (where the thread
confirms none, the answer is held to what the log shows); `before` records what oomkit answered before:
before: 8 of 13 wrong (5 in stage, 3 in fix order or wording); after: 13 right.
The rules, each from the engine's own source or words: Ollama's runner reason 'invalid device function' (ggml-cuda
CUDA_CHECK) and the exit statuses 0xc0000139 / 0xc0000135 (Windows ntstatus.h entry point / DLL not found) are no
shortage; ggml-cuda's ggml_backend_cuda_device_get_memory (cudaMemGetInfo), asked by llama_model_load_from_file
before any buffer, failing out of memory is a card already full (other_process: free it, OLLAMA_GPU_OVERHEAD,
num_gpu); LM Studio's "Attempt to pull a snapshot of system resources failed" is its monitor, not memory;
TensorRT-LLM's executor names its own advice for each component (py_executor_creator.py
memory_type_tuning_suggestion: the KV cache's is "reduce free_gpu_memory_fraction"), which comes first; the 2023
ggml CUDA error's fixes name llama-cpp-python's n_gpu_layers; under WSL 2 (NVIDIA's CUDA on WSL guide: pinned memory
is limited) a ggml CUDA error leads with GGML_CUDA_NO_PINNED=1 (ggml-cuda.cu ggml_cuda_host_malloc). The checks: tests/diagnose_heldout.py check_case; the
garble pass as in sets 6 to 15."""

from __future__ import annotations

import pytest

from tests.diagnose_heldout import TRTLLM_EXECUTOR_OOM, garble_tests, heldout_tests

CASES, test_cases_are_cited_and_new, test_heldout_case = heldout_tests("heldout16.jsonl", minimum=13, fix_required=True)
test_garbled_log_exits_cleanly, test_readable_garbles_keep_the_reading = garble_tests(CASES)


_TRTLLM = "RuntimeError: " + TRTLLM_EXECUTOR_OOM


@pytest.mark.parametrize("component,first", [
    ("KV cache", "free_gpu_memory_fraction"),
    ("Initial KV cache (temporary for KV cache size estimation)", "max_num_tokens"),
    ("Model", "max_num_tokens"), ("Sampler", "max_seq_len"), ("Drafter", "max_draft_len"),
    ("Additional executor resources (temporary for KV cache size estimation)", "max_num_tokens")])
def test_trtllm_component_advice_comes_first(component, first):
    """py_executor_creator.py memory_type_tuning_suggestion: the engine's own advice for the component it names."""
    from oomkit.diagnose import diagnose

    d = diagnose(_TRTLLM.format(c=component))
    assert d.fixes and first in d.fixes[0].summary, [f.summary for f in d.fixes]


def test_trtllm_kv_fraction_said_once():
    """The canned '--kv_cache_free_gpu_memory_fraction' is not repeated after the engine's own advice."""
    from oomkit.diagnose import diagnose

    texts = [" ".join([f.summary, *f.flags]) for f in diagnose(_TRTLLM.format(c="KV cache")).fixes]
    assert sum("kv_cache_free_gpu_memory_fraction" in t for t in texts) == 1, texts


@pytest.mark.parametrize("status,engine", [("exit status 0xc0000139", "ollama"), ("exit status 0xc0000135", "ollama"),
                                           ("exit status 0xc0000409 CUDA error: invalid device function", "cuda")])
def test_ollama_runner_library_failures_are_not_oom(status, engine):
    """No memory advice; the GPU build's own error inside the runner's reads as on its own line (heldout5's
    ollama-11123: cuda in Ollama)."""
    from oomkit.diagnose import diagnose

    d = diagnose(f"Error: llama runner process has terminated: {status}\n")
    assert (d.engine, d.stage) == (engine, "not_oom"), d.to_dict()
    assert not any("num_ctx" in f.summary or "num_gpu" in f.summary for f in d.fixes), d.to_dict()


def test_ollama_runner_memory_reason_still_placed():
    """A memory reason after the runner's line keeps its reading (the library rules do not swallow it)."""
    from oomkit.diagnose import diagnose

    d = diagnose("Error: llama runner process has terminated: error loading model: unable to allocate backend "
                 "buffer\n")
    assert d.stage == "weights", d.to_dict()


def test_cuda_pool_oom_stays_compute():
    """ggml_cuda_error_oom in the pool (not the free-memory query) keeps its compute reading."""
    from oomkit.diagnose import diagnose

    d = diagnose("CUDA error: out of memory\n  current device: 0, in function alloc at ggml/src/ggml-cuda/"
                 "ggml-cuda.cu:420\n  ggml_cuda_device_malloc(&ptr, look_ahead_size, device)\n")
    assert d.stage == "compute", d.to_dict()


def test_cuda_error_without_wsl_names_no_pinned_fix():
    """GGML_CUDA_NO_PINNED is WSL 2's fix only: the same line elsewhere keeps the layers / context advice."""
    from oomkit.diagnose import diagnose

    line = "CUDA error 2 at /home/u/llama.cpp/ggml-cuda.cu:1241: out of memory\ncurrent device: 0\n"
    assert not any("NO_PINNED" in " ".join(f"{k}={v}" for k, v in f.env) for f in diagnose(line).fixes)
    d = diagnose("Ubuntu under WSL2, -ngl 10:\n" + line)
    assert d.fixes and ("GGML_CUDA_NO_PINNED", "1") in d.fixes[0].env, d.to_dict()


def test_accelerated_is_not_hugging_face_accelerate():
    """The English word does not name the accelerate library as the log's program."""
    from oomkit.diagnose.logread import host_of

    assert host_of("accelerated prompt processing is ok") is None
    assert host_of("File \"/usr/lib/python3/site-packages/accelerate/big_modeling.py\", line 3") == "transformers"
