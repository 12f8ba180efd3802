"""diagnose() on a fifteenth held-out set of public crash logs (tests/fixtures/diagnose/heldout15.jsonl), 15 logs new
to every diagnose fixture, 2023-2026, across engines: TensorRT-LLM's executor refusing its KV cache component, vLLM
on Metal (vllm-metal) refusing a 262144-token context, MLX's Metal resource-count limit (mlx-lm's server, oMLX),
SGLang's graph capture failing on a kernel fault and on a missing kernel image, llama.cpp's Vulkan weights buffer on a
PCIe-attached Radeon, vLLM V0 behind Xinference and Dify (a second model on a taken card, a serving loop's death, the
capture notes pasted after the error), a V0 worker's load_model, a V1 traceback cut inside the model's construction,
cuBLAS failing its handle, vLLM on Intel XPU dying in a serving step and a vllm-omni CI stage without cache blocks.
Each case is cited with the lines kept verbatim and the fix its thread gives (where the thread confirms none, the
answer is held to what the log shows); `before` records what oomkit answered before the rules these logs led to:
before: 7 of 15 wrong (5 in engine or stage, 2 in host, phase or fix); after: 14 right, 1 strict xfail
(intel/llm-scaler#703: a serving traceback with no exception line; see its known_miss).
The rules, each from the engine's own source: TensorRT-LLM's _ExecutorMemoryMonitor._maybe_explain_if_oom
(_torch/pyexecutor/py_executor_creator.py) names the component that could not be created on its own line, read up
to "Total GPU memory" and placed by its memory_type_friendly_names entry (Model: weights, KV cache: kv_cache, the
runtime's buffers: compute); SGLang's cuda_graph_runner.py "Capture cuda graph failed: <error>" yields to CUDA's own
error after the colon (no kernel image, an illegal memory access) and names SGLang as the log's program; vLLM V0's
capture notes (worker/model_runner.py capture_model) name vLLM and place a failure pasted above them in the capture;
V0's multiproc_worker_utils.py "Exception in worker ... while processing method <m>" places load_model in the
weights (initialize_cache in the KV cache; the profile run keeps its own progress-line reading); V0's
async_llm_engine.py _log_task_completion (the request loop's death, AsyncEngineDeadError) is a serving step; a
vLLM / SGLang traceback cut inside the model's construction (initialize_model, init_vllm_registered_model,
load_weights) in a text that says it ran out of memory is the weights at low confidence. The checks:
tests/diagnose_heldout.py check_case; the garble pass as in sets 6 to 14."""

from __future__ import annotations

import pytest

from tests.diagnose_heldout import TRTLLM_EXECUTOR_OOM, garble_tests, heldout_tests

CASES, test_cases_are_cited_and_new, test_heldout_case = heldout_tests("heldout15.jsonl", minimum=15, fix_required=True)
test_garbled_log_exits_cleanly, test_readable_garbles_keep_the_reading = garble_tests(CASES)


_TRTLLM = "[TRT-LLM] [E] Failed to initialize executor on rank 0: " + TRTLLM_EXECUTOR_OOM


@pytest.mark.parametrize("component,stage", [
    ("Model", "weights"), ("KV cache", "kv_cache"), ("Sampler", "compute"),
    ("Initial KV cache (temporary for KV cache size estimation)", "kv_cache"),
    ("Additional executor resources (temporary for KV cache size estimation)", "compute")])
def test_trtllm_component_names_the_stage(component, stage):
    """py_executor_creator.py's friendly names, each on its own line as the message prints it."""
    from oomkit.diagnose import diagnose

    d = diagnose(_TRTLLM.format(c=component))
    assert (d.engine, d.stage, d.numbers["component"]) == ("tensorrt-llm", stage, component), d.to_dict()
    assert d.numbers["free_bytes"] == int(round(12.50 * 2**30))


def test_trtllm_run_together_keeps_the_component():
    """A paste whose line ends were lost: the component still stops at "Total GPU memory"."""
    from oomkit.diagnose import diagnose

    d = diagnose(" ".join(_TRTLLM.format(c="KV cache").split("\n")))
    assert (d.stage, d.numbers.get("component")) == ("kv_cache", "KV cache"), d.to_dict()


def test_v0_worker_method_places_the_failure():
    """multiproc_worker_utils.py names the worker method: initialize_cache is the KV cache's allocation."""
    from oomkit.diagnose import diagnose

    line = ("(VllmWorkerProcess pid=7) ERROR 10-15 14:51:47 multiproc_worker_utils.py:226] Exception in worker "
            "VllmWorkerProcess while processing method {m}: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has "
            "a total capacity of 23.68 GiB of which 1.00 GiB is free. Of the allocated memory 21.00 GiB is allocated "
            "by PyTorch, and 1.22 MiB is reserved by PyTorch but unallocated.\n")
    assert diagnose(line.format(m="load_model")).stage == "weights"
    assert diagnose(line.format(m="initialize_cache")).stage == "kv_cache"


def test_capture_failed_on_memory_stays_sglangs_capture_oom():
    """Only CUDA's own non-memory errors take over the capture wrapper; an out-of-memory after it stays its own."""
    from oomkit.diagnose import diagnose

    d = diagnose("Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 448.00 MiB. GPU 7 has a "
                 "total capacity of 95.00 GiB of which 128.00 MiB is free.\n")
    assert d.stage == "compute" and d.phase == "CUDA graph capture", d.to_dict()


def test_cut_build_traceback_without_oom_words_is_not_placed():
    """The construction frames alone (no out-of-memory said anywhere) place nothing."""
    from oomkit.diagnose import diagnose

    text = ("ERROR 05-13 21:09:41 [core.py:396] Traceback (most recent call last):\n"
            'ERROR 05-13 21:09:41 [core.py:396]   File "/usr/lib/vllm/model_executor/model_loader/loader.py", line '
            "133, in _initialize_model\n"
            "ERROR 05-13 21:09:41 [core.py:396]     return model_class(vllm_config=vllm_config, prefix=prefix)\n")
    assert diagnose(text).stage != "weights"
