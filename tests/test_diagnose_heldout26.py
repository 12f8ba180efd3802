"""diagnose() on a twenty-sixth held-out set of public crash logs (tests/fixtures/diagnose/heldout26.jsonl), 8 logs
new to every test fixture, 2023-2025, in kinds the earlier sets held little of: vLLM runs that die after the KV
cache is allocated (CUDA-graph capture on RunPod's worker and on 8 RTX 4090s under Ray), a vLLM run with 8 GPUs
visible and no tensor parallelism, multi-GPU Ollama splits (4 mixed GPUs with pipeline parallelism, 2 A6000s),
Vulkan (KoboldCpp on an RX 5600 XT, the refused pinned buffer before the real failure), Windows (Ollama at 64k
context) and LM Studio's Vulkan runtime reading a 12 GB card's free memory as 19491 MiB.
Each case is cited with the lines kept verbatim and the fix its thread gives (where the thread confirms none, the
answer is held to what the log shows and the program's own rule), `expected_by_hand` the reading written before
oomkit was run; `before` records what oomkit answered before: 4 of 8 right (worker-vllm#40, ollama#7253, ollama#7867,
ollama#4225), 2 half (Qwen#819, koboldcpp#1054), 2 wrong (Qwen3#67, lmstudio-bug-tracker#1216); after: 8 right.
The rules, each from the engine's own behaviour: a raw CUDA error in a start-up phase after the KV cache (vLLM's
capture_model) is that phase's allocation (compute); vLLM loads each rank's weights before anything else, so where
oomkit's estimate of the named model's weights at the log's tensor_parallel_size is over the whole device the
weights ran out, and --tensor-parallel-size N (the smallest power of two leaving a fifth of the budget, a rule of thumb) is the fix,
the GPUs CUDA_VISIBLE_DEVICES lists named beside it; a backslash-continued command line is read as one; ggml-vulkan's
"Failed to allocate pinned memory." and the error after it are its fallback to a CPU buffer, not the failure, when a
device allocation fails later; KoboldCpp's "Automatic RoPE Scaling" note names its loader; a discrete card whose
Vulkan free memory is over the catalog's memory for it was split by a budget counting memory it does not have;
LM Studio's developer log ("... [DEBUG]" then the runtime's line indented) names LM Studio.
The checks: tests/diagnose_heldout.py check_case; the garble pass as in sets 6 to 25."""

from __future__ import annotations

from oomkit.diagnose import diagnose
from oomkit.diagnose.fixes import vulkan_overread
from tests.diagnose_heldout import garble_tests, heldout_tests

CASES, test_cases_are_cited_and_new, test_heldout_case = heldout_tests("heldout26.jsonl", minimum=8, fix_required=True)
test_garbled_log_exits_cleanly, test_readable_garbles_keep_the_reading = garble_tests(CASES)

MiB = 1 << 20
GiB = 1 << 30


def _case(prefix: str) -> dict:
    return next(c for c in CASES if c["id"].startswith(prefix))


def _texts(d) -> list[str]:
    return [" ".join([f.summary, *f.flags, *(f"{k}={v}" for k, v in f.env)]) for f in d.fixes]


def test_raw_cuda_error_without_a_phase_stays_unplaced():
    """The same raw CUDA error in a vLLM log with no capture line (the workers' notes dropped): no phase, so no
    compute reading."""
    text = "\n".join(ln for ln in _case("qwen-819")["text"].split("\n") if "RayWorkerVllm" not in ln)
    d = diagnose("INFO 12-18 21:40:00 llm_engine.py:73] Initializing an LLM engine (vllm)\n" + text)
    assert d.phase is None and d.stage == "unknown", d.to_dict()


def test_weights_reading_needs_the_weights_over_the_device():
    """The same command with --tensor-parallel-size 4: 33.66 GiB of weights per GPU fit the 79.33 GiB device, so the
    failure is not read as the weights, and no tensor-parallel size is offered as the fix."""
    text = _case("qwen3-67")["text"].replace("api_server \\\n", "api_server --tensor-parallel-size 4 \\\n")
    d = diagnose(text)
    assert d.settings.get("tensor_parallel_size") == 4 and d.stage != "weights", d.to_dict()
    assert not any("--tensor-parallel-size 8" in t or "(from 1)" in t for t in _texts(d)), _texts(d)


def test_continued_command_line_is_read_as_one():
    d = diagnose("python -m vllm.entrypoints.openai.api_server --port 8000 \\\n  --tensor-parallel-size 2 \\\n"
                 "  --model Qwen/Qwen2.5-72B-Instruct\nINFO started\n", predict=False)
    assert d.settings.get("tensor_parallel_size") == 2 and d.settings.get("model") == "Qwen/Qwen2.5-72B-Instruct"


def test_pinned_fallback_alone_stays_the_failure():
    """Without the device allocation after it, the refused pinned buffer's error is still the line read."""
    text = _case("koboldcpp-1054")["text"].split("ggml_vulkan: Device memory allocation of size")[0]
    d = diagnose(text)
    assert d.signature == "ggml_vulkan_buffer_limit", d.to_dict()


def test_rope_note_names_koboldcpp_only_in_its_own_words():
    text = _case("koboldcpp-1054")["text"].replace("Automatic RoPE Scaling: Using", "RoPE scaling:")
    assert diagnose(text).host is None


def test_vulkan_free_under_the_card_is_no_overread():
    """19491 MiB free on the 24 GB Arc B60 (under its memory), 11000 MiB on the A2000 12GB: nothing over-read."""
    text = _case("lmstudio-1216")["text"].replace("19491 MiB free", "11000 MiB free")
    d = diagnose(text)
    assert d.stage == "unknown" and not d.fixes, d.to_dict()
    assert vulkan_overread({"device_free": {"Vulkan0": 23607 * MiB}, "device_names": {"Vulkan0": "Intel(R) Arc(TM) "
                                                                                       "Pro B60 Graphics"}}) == []


def test_apu_budget_is_no_overread():
    """An APU's Vulkan budget is system memory by design (unified memory): no card ceiling to set it against."""
    assert vulkan_overread({"device_free": {"Vulkan0": 108782 * MiB},
                            "device_names": {"Vulkan0": "AMD Radeon(TM) 8060S Graphics"}}) == []


def test_overread_outside_lmstudio_is_a_tensor_split():
    """The same device lines in a llama-server log (no LM Studio developer-log lines): llama.cpp's -ts."""
    text = "\n".join(ln.strip() for ln in _case("lmstudio-1216")["text"].split("\n") if "[DEBUG]" not in ln)
    d = diagnose(text)
    assert d.host is None and d.stage == "weights" and _texts(d)[0].startswith("-ts / --tensor-split"), _texts(d)


def test_split_compute_buffer_is_not_sized_into_every_gpu():
    """ollama#7253: the 8574.52 MiB compute buffer failed on CUDA3 of a 4-GPU split (pipeline parallelism, n_copies=4).
    OLLAMA_GPU_OVERHEAD is subtracted from every GPU's free memory (llm/memory.go EstimateGPULayers, v0.3.10 on), so
    9 GiB of it would reserve 36 GiB over four GPUs for one device's buffer: the advice is the batch (num_batch, 512
    by default, the runner's --batch-size) and keeping the split off that GPU."""
    d = diagnose(_case("ollama-7253")["text"])
    texts = _texts(d)
    assert not any("OLLAMA_GPU_OVERHEAD=" in t for t in texts), texts
    assert any(t.startswith("num_batch 256 (from 512)") and "CUDA3" in t for t in texts), texts
    assert any(t.startswith("CUDA_VISIBLE_DEVICES") and "CUDA3" in t for t in texts), texts


def test_one_gpu_compute_buffer_overhead_says_it_is_per_gpu():
    """ollama#7867's kept lines show one device (CUDA0, 882903040 bytes): OLLAMA_GPU_OVERHEAD of 1 GiB (the buffer
    rounded up), said to be reserved on every GPU Ollama uses; with a CUDA1 buffer the same log is a split."""
    text = _case("ollama-7867")["text"]
    texts = _texts(diagnose(text))
    assert any(t.startswith("OLLAMA_GPU_OVERHEAD=1073741824") and "every GPU" in t for t in texts), texts
    texts = _texts(diagnose(text.replace("CUDA0 buffer", "CUDA1 buffer")))
    assert not any("OLLAMA_GPU_OVERHEAD=" in t for t in texts), texts
    assert any(t.startswith("num_batch 256") and "CUDA1" in t for t in texts), texts
