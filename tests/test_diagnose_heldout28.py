"""diagnose() on a twenty-eighth held-out set of public crash logs (tests/fixtures/diagnose/heldout28.jsonl), 6 logs
new to every test fixture, 2024-2026: PyTorch's cudaMallocAsync refusal with its figures (ComfyUI on a 24 GB card)
and cut after "device" (ComfyUI's Flux2 report), llama.cpp's SYCL backend out of host memory with an MoE offload on
six Arc A770s, two HIP illegal-address faults (Ollama's ROCm 7.2 runner, ComfyUI on PyTorch ROCm 7.2) and SGLang's
DeepSeek V3.2 image without kernels for B300 after an MLA KV pool. Each case is cited with the lines kept verbatim and
the fix its thread gives (where the thread confirms none, the answer is held to what the log shows and the
program's own rule), `expected_by_hand` the reading written before oomkit was run; `before` records what oomkit
answered before: 1 of 6 right (ComfyUI#10906), 4 half (llama.cpp#25812, ollama#16771, ROCm#6003, sglang#14700),
1 wrong (ComfyUI#3278); after: 6 right.
The rules, each from the program's own source: c10/cuda/CUDAMallocAsyncAllocator.cpp mallocAsync prints one message
for the memory fraction's limit and for the device itself running out; allocated + requested over the printed PyTorch
limit is the fraction, else what is neither free nor PyTorch's allocations (total - free - allocated) is held outside
this process's PyTorch, and where the request would have fit in it that is the shortage (other programs on the GPU);
a HIP build's illegal address ("ROCm error", hipError..., PyTorch's ROCm hint) is debugged with AMD_SERIALIZE_KERNEL=3,
not CUDA_LAUNCH_BLOCKING=1; llama.cpp's --n-cpu-moe named beside a SYCL failure puts "--n-cpu-moe higher" first (the
experts left on the GPUs); SGLang's MLA pool prints one "KV size" (mem_cache/memory_pool.py), not a V size.
The checks: tests/diagnose_heldout.py check_case; the garble pass as in sets 6 to 27."""

from __future__ import annotations

import json
from pathlib import Path

from oomkit.diagnose import diagnose
from tests.diagnose_heldout import garble_tests, heldout_tests

CASES, test_cases_are_cited_and_new, test_heldout_case = heldout_tests("heldout28.jsonl", minimum=6, fix_required=True)
test_garbled_log_exits_cleanly, test_readable_garbles_keep_the_reading = garble_tests(CASES)

GiB = 1 << 30


def _case(prefix: str) -> dict:
    return next(c for c in CASES if c["id"].startswith(prefix))


def _texts(d) -> list[str]:
    return [" ".join([f.summary, *f.flags, *(f"{k}={v}" for k, v in f.env)]) for f in d.fixes]


def test_mallocasync_over_the_fraction_is_the_fraction():
    """ComfyUI#3278's message with a PyTorch limit of 22.00 GiB (a fraction set): 21.55 GiB allocated + 952 MiB
    requested exceed it, so the fraction refused the allocation, not the device; no other-programs reading."""
    text = _case("comfyui-3278")["text"].replace("17179869184.00 GiB", "22.00 GiB")
    d = diagnose(text)
    assert d.stage != "other_process" and d.numbers["fraction_limit_bytes"] == 22 * GiB, d.to_dict()
    texts = _texts(d)
    assert texts[0].startswith("a larger memory fraction"), texts
    assert not any("close the other programs" in t for t in texts), texts


def test_mallocasync_with_room_outside_too_small_stays_unplaced():
    """The same message where what is held outside PyTorch (24.00 - 0 - 23.50 = 0.50 GiB) is less than the 952 MiB
    requested: the request would not have fit in it, so nothing is said about other programs."""
    text = _case("comfyui-3278")["text"].replace("21.55 GiB", "23.50 GiB")
    d = diagnose(text)
    assert d.stage != "other_process", d.to_dict()
    assert not any("close the other programs" in t for t in _texts(d))


def test_tgi_warmup_keeps_its_stage_and_puts_the_batch_first():
    """TGI's warm-up with the same allocator (corpus tgi-563: 16.08 GiB allocated, 4.83 GiB requested, 11.12 MiB free
    of 22.20 GiB): the warm-up places it (compute) and the batch comes first; the memory outside PyTorch
    (6.11 GiB) is offered after it."""
    corpus = Path(__file__).parent / "fixtures" / "diagnose" / "corpus.jsonl"
    case = next(json.loads(ln) for ln in corpus.read_text(encoding="utf-8").splitlines()
                if '"tgi-563-allowed-memory"' in ln)
    d = diagnose(case["text"])
    texts = _texts(d)
    assert d.stage == "compute" and texts[0].startswith("a smaller batch"), (d.stage, texts)
    assert any("6.11 GiB of the 22.20 GiB device" in t for t in texts), texts


def test_cuda_illegal_address_keeps_cuda_launch_blocking():
    """The HIP wording (ROCm error, hipError, AMD_SERIALIZE_KERNEL) decides; a CUDA build's fault keeps
    CUDA_LAUNCH_BLOCKING=1 and no backend."""
    d = diagnose("RuntimeError: CUDA error: an illegal memory access was encountered\nCUDA kernel errors might be "
                 "asynchronously reported at some other API call\nFor debugging consider passing "
                 "CUDA_LAUNCH_BLOCKING=1\n")
    assert d.stage == "not_oom" and d.backend is None, d.to_dict()
    assert _texts(d)[0].startswith("CUDA_LAUNCH_BLOCKING=1"), _texts(d)


def test_sglang_mha_pool_keeps_k_and_v():
    """MHATokenToKVPool's line ("K size: X GB, V size: Y GB") is still read as K and V, with no KV size; the MLA
    pool's single "KV size" (sglang#14700) is read as kv only."""
    mha = diagnose("[2025-03-28 04:27:07 TP0] KV Cache is allocated. #tokens: 46045, K size: 2.99 GB, V size: 2.99 GB\n"
                   "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.\n")
    assert mha.buffers.get("k_bytes") == mha.buffers.get("v_bytes") == round(2.99 * GiB), mha.buffers
    assert "kv_bytes" not in mha.buffers
    mla = diagnose(_case("sglang-14700")["text"])
    assert mla.buffers.get("kv_bytes") == round(162.38 * GiB) and "v_bytes" not in mla.buffers, mla.buffers


def test_ollama_num_batch_halving_says_it_is_a_rule_of_thumb():
    """The num_batch halving (floor 32) under Ollama is oomkit's step, not an engine figure, and says so
    (ollama#13029's compute buffer over the Vulkan single-buffer limit, tests/fixtures/diagnose/heldout3.jsonl)."""
    held3 = Path(__file__).parent / "fixtures" / "diagnose" / "heldout3.jsonl"
    case = next(json.loads(ln) for ln in held3.read_text(encoding="utf-8").splitlines()
                if '"ollama-13029-windows-vulkan-compute-over-buffer-limit"' in ln)
    texts = _texts(diagnose(case["text"]))
    hit = [t for t in texts if t.startswith("num_batch 256 (from 512)")]
    assert hit and "rule of thumb" in hit[0], texts
