"""diagnose() on a thirty-second held-out set of public crash logs (tests/fixtures/diagnose/heldout32.jsonl), 7 logs of
llama.cpp-based programs new to every test fixture, 2023-2025: KoboldCpp's CUDA pool running out in the first
512-token batch of a 12710-token prompt (1.98), KoboldCpp 1.36's scratch pool overflowed by --blasbatchsize 1024
(1279262720 needed, 1197473792 = 8192/12 + 460 MiB in the pool), KoboldCpp 1.38's graph allocator out of free-list
entries at --blasbatchsize 1024 (ggml-alloc.c:216, MAX_FREE_BLOCKS 128), talk-llama-fast's 4679.55 MiB of weights on a GT 730,
llamafile 0.8.14's 1008 MiB compute buffer after f16 weights on a GTX 1070, GPT4All's Kompute backend refusing device
memory while loading, and text-generation-webui's llama.cpp (Vulkan) aborting on a full ggml context pool
(10711552 needed, 10711184 available). Each case is cited with the lines kept verbatim and the fix its thread gives
(where the thread confirms none, the answer is held to the program's own rule); `before` records what oomkit answered
before: 2 of 7 right (talk-llama-fast#34, textgen#7334), 2 half (koboldcpp#1711, llamafile#598), 3 wrong
(koboldcpp#331, koboldcpp#365, gpt4all#1541); after: 7 right.
The rules, each from the program's own source: gpttype_adapter.cpp's progress printf ("Processing Prompt [BLAS] (%d /
%zu tokens)") is KoboldCpp's, so its flags apply (koboldcpp.py); koboldcpp.py to 1.7x takes the batch as
--blasbatchsize alone (v1.36 choices -1, 32 ... 1024), which 1.10x keeps as an alias of --batchsize / -b, so a log
that spells it gets it (with --contextsize, --gpulayers, --tensor_split); llama.cpp's scratch pool before the graph
allocator is sized once from the context (MEM_REQ_SCRATCH0(n_ctx), 13B: n_ctx/12 + 460 MiB) for a 512-token batch
(KoboldCpp 1.43+ otherarch/llama_v3.cpp multiplies it by get_blas_batch_mul3), so a larger batch overflows it;
ggml-alloc.c of August 2023 keeps freed holes in a 128-entry array (256 from KoboldCpp 1.43's copy), so its assert is
a full list, not memory;
common/arg.cpp's -fa is a switch before PR #15434 (b6325) and in llamafile's fork; the Kompute backend's
ggml_vk_allocate_device_memory ("Error allocating vulkan memory.") is not ggml-vulkan, whose
GGML_VK_FORCE_MAX_ALLOCATION_SIZE and compute-buffer flags do not apply: GPT4All's GPT4All(..., ngl=N, device=...) do.
The checks: tests/diagnose_heldout.py check_case; the garble pass as in sets 6 to 31."""

from __future__ import annotations

from oomkit.diagnose import diagnose
from tests.diagnose_heldout import garble_tests, heldout_tests

CASES, test_cases_are_cited_and_new, test_heldout_case = heldout_tests("heldout32.jsonl", minimum=7, fix_required=True)
test_garbled_log_exits_cleanly, test_readable_garbles_keep_the_reading = garble_tests(CASES)


def _case(prefix: str) -> dict:
    return next(c for c in CASES if c["id"].startswith(prefix))


def _texts(d) -> list[str]:
    return [" ".join([f.summary, *f.flags, *(f"{k}={v}" for k, v in f.env)]) for f in d.fixes]


def test_new_koboldcpp_namespace_keeps_its_short_batch_flag():
    """The scratch-pool overflow with 1.10x's Namespace (batchsize=, no blasbatchsize): -b, the name 1.10x takes."""
    text = ("Welcome to KoboldCpp - Version 1.104\nNamespace(batchsize=1024, contextsize=8192)\n"
            "Processing Prompt [BLAS] (1024 / 3000 tokens)ggml_new_tensor_impl: not enough space in the scratch "
            "memory pool (needed 1279262720, available 1197473792)\n")
    texts = _texts(diagnose(text))
    assert not any("--blasbatchsize" in t for t in texts), texts
    assert texts[0].startswith("-b smaller"), texts


def test_scratch_pool_under_llama_cpp_names_its_batch():
    """The same message from llama.cpp itself with its batch printed: -b 512, the batch the pool was sized for."""
    text = ("llama_new_context_with_model: n_batch = 1024\n"
            "ggml_new_tensor_impl: not enough space in the scratch memory pool (needed 1279262720, available "
            "1197473792)\n")
    d = diagnose(text)
    assert (d.engine, d.stage, d.host) == ("llama.cpp", "compute", None), d.to_dict()
    assert _texts(d)[0].startswith("-b 512 (from 1024)"), _texts(d)


def test_fa_takes_on_from_b6325():
    """A compute-buffer failure of a build from PR #15434 keeps '-fa on'; one before it gets the bare switch."""
    tail = "ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size 1056964608\n"
    new = _texts(diagnose("build: 6325 (e81b8e4b7) with cc\n" + tail))
    old = _texts(diagnose("build: 6324 (abcdef012) with cc\n" + tail))
    assert any(t.startswith("-fa on") for t in new), new
    assert any(t.startswith("-fa:") for t in old) and not any("-fa on" in t for t in old), old


def test_kompute_message_alone_is_not_ggml_vulkan():
    """The Kompute line without GPT4All's call: still Kompute's advice, no ggml-vulkan variable."""
    d = diagnose("error loading model: Error allocating vulkan memory.\n")
    assert d.backend == "Kompute" and d.stage == "weights", d.to_dict()
    assert not any("GGML_VK_" in t for t in _texts(d)), _texts(d)
