"""diagnose() on a twenty-seventh held-out set of public crash logs (tests/fixtures/diagnose/heldout27.jsonl), 6 logs
new to every test fixture, 2024-2026, in kinds the earlier sets held little of: ROCm (Ollama's memory pool on an APU's
integrated GPU beside a discrete card, ROCr's GPU page-fault report, a Strix Halo APU whose HIP runtime capped one
allocation at 61.35 GB, written up in a repository), a long-context Ollama run whose thread's fix was KV-cache
quantisation, an Ollama runner's segmentation fault on three RX 7900 XTX, and mlx-vlm's Metal single-buffer limit.
Each case is cited with the lines kept verbatim and the fix its thread gives (where the thread confirms none, the
answer is held to what the log shows and the program's own rule), `expected_by_hand` the reading written before
oomkit was run; `before` records what oomkit answered before: 1 of 6 right (mlx-vlm#740), 3 half (ollama#738,
ollama#6741, the Strix Halo write-up), 2 wrong (ollama#8851, ollama#5708); after: 5 right, the Strix Halo write-up a
strict xfail (its kept lines name no buffer, so the stage stays unknown; -ngl fewer layers is already first).
The rules, each from the engine's own behaviour: ggml-cuda takes every device the runtime lists and splits the layers
by free memory, so a failure on an integrated GPU (AMD's "Radeon Graphics" APUs, Intel's UHD / Iris, the catalog's
unified-memory parts) beside a discrete card is first answered by hiding it (ROCR_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES
on ROCm); an Ollama Modelfile's PARAMETER num_ctx is read as the context, and a compute-time failure at a long context
(32k cells or more, a rule of thumb) with an f16 cache is offered OLLAMA_KV_CACHE_TYPE=q8_0 with flash attention
(Ollama v0.5.0+); ROCr's "Memory access fault by GPU node-N ... Reason: ..." is a GPU page fault, not an
out-of-memory; an Ollama runner's "signal: segmentation fault" with no failed allocation near it is a crash; and
ggml's "failed to allocate ROCm0 buffer" names a HIP build.
The checks: tests/diagnose_heldout.py check_case; the garble pass as in sets 6 to 26."""

from __future__ import annotations

from oomkit.diagnose import diagnose
from tests.diagnose_heldout import garble_tests, heldout_tests

CASES, test_cases_are_cited_and_new, test_heldout_case = heldout_tests("heldout27.jsonl", minimum=6, fix_required=True)
test_garbled_log_exits_cleanly, test_readable_garbles_keep_the_reading = garble_tests(CASES)


def _case(prefix: str) -> dict:
    return next(c for c in CASES if c["id"].startswith(prefix))


def _texts(d) -> list[str]:
    return [" ".join([f.summary, *f.flags, *(f"{k}={v}" for k, v in f.env)]) for f in d.fixes]


def test_discrete_second_gpu_gets_no_integrated_gpu_fix():
    """ollama#738's log with device 1 a discrete card (an RX 6600): no GPU to hide as integrated, the split's own
    fixes stay (flash attention first)."""
    text = _case("ollama-738")["text"].replace("Device 1: AMD Radeon Graphics", "Device 1: AMD Radeon RX 6600")
    texts = _texts(diagnose(text))
    assert not any("integrated GPU" in t for t in texts), texts
    assert texts[0].startswith("OLLAMA_FLASH_ATTENTION=1"), texts


def test_short_or_old_context_gets_no_kv_quantisation():
    """ollama#6741 at num_ctx 8192, or on Ollama 0.3.10 (before OLLAMA_KV_CACHE_TYPE, v0.5.0): no KV-cache type fix."""
    text = _case("ollama-6741")["text"]
    short = _texts(diagnose(text.replace("num_ctx 131072", "num_ctx 8192")))
    assert not any("OLLAMA_KV_CACHE_TYPE" in t for t in short), short
    old = _texts(diagnose("ollama version is 0.3.10\n" + text))
    assert not any("OLLAMA_KV_CACHE_TYPE" in t for t in old), old


def test_oom_before_a_page_fault_stays_the_oom():
    """ggml-cuda's pool out-of-memory (ollama#738's lines) before ROCr's page-fault report: the first out-of-memory is
    the cause, the fault its aftermath."""
    text = _case("ollama-738")["text"] + _case("ollama-8851")["text"]
    d = diagnose(text)
    assert d.stage == "compute" and d.backend == "ROCm", d.to_dict()


def test_segfault_after_a_failed_allocation_is_read_as_the_allocation():
    """The runner's segmentation fault with ggml's failed buffer allocation on the lines before it: the allocation."""
    text = ("ggml_backend_cuda_buffer_type_alloc_buffer: allocating 9866.00 MiB on device 1: cudaMalloc failed: out of "
            "memory\nggml_gallocr_reserve_n: failed to allocate CUDA1 buffer of size 10345253120\n"
            + _case("ollama-5708")["text"])
    assert diagnose(text).stage == "compute"


def test_rocm_buffer_name_sets_the_backend():
    """ggml-backend.cpp alloc_tensor_range names the buffer type that failed ("failed to allocate ROCm0 buffer"):
    a HIP build, though ggml_backend_cuda_buffer_type_alloc_buffer keeps its CUDA names; CUDA0 stays CUDA."""
    head = ("ggml_backend_cuda_buffer_type_alloc_buffer: allocating 21760.00 MiB on device 0: cudaMalloc failed: out "
            "of memory\nalloc_tensor_range: failed to allocate {} buffer of size 22817013760\n"
            "llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache\n")
    assert diagnose(head.format("ROCm0")).backend == "ROCm"
    assert diagnose(head.format("CUDA0")).backend == "CUDA"
