"""diagnose() on a twenty-second held-out set of public crash logs (tests/fixtures/diagnose/heldout22.jsonl), 8 logs
new to every test fixture, 2024-2026, in kinds the earlier sets held little of: TGI's warm-up running out in the
prefill logits, KoboldCpp's Vulkan build failing a pinned host buffer and then the plain CPU one, Ollama on ROCm
aborting on a missing kernel with HSA's "Memory critical error", LM Studio's exit code printed unsigned, llama.cpp on
SYCL (Lunar Lake) refused one allocation over Level Zero's 4 GB, an MLX server at Metal's resource limit, Ollama 0.12's
"memory layout cannot be allocated" with a forced num_gpu, and SGLang's capture failing on a gloo timeout between
nodes. Each case is cited with the lines kept verbatim and the fix its thread gives (where the thread confirms none,
the answer is held to what the log shows and the engine's own rule); `before` records what oomkit answered before:
before: 5 of 8 right (TGI's warm-up without TGI's flag, KoboldCpp's host buffer read as the device's compute buffer
with llama.cpp's -ub, which KoboldCpp does not take, the SYCL allocation limit unplaced); after: 7 right, the SYCL
case a strict xfail (stage unknown; its fixes now name UR_L0_ENABLE_RELAXED_ALLOCATION_LIMITS=1).
The rules, each from the engine's own source: a PyTorch out-of-memory in TGI's compute with no prefill count printed
gets TGI's own advice, --max-batch-prefill-tokens lower (flash_causal_lm.py warmup's "You need to decrease
`--max-batch-prefill-tokens`"); ggml-alloc.c's graph reservation naming a host buffer type after a backend's pinned
allocation failed (ggml-vulkan.cpp's host buffer type falls back to a CPU buffer) is the compute graph's buffer in host
RAM, with the micro-batch's advice where the log printed n_ubatch; a KoboldCpp log (gpttype_load_model, its banner,
its libraries) is KoboldCpp's, its fixes in KoboldCpp's flags (koboldcpp.py: -b sets the micro-batch too, --quantkv,
--flashattention); a SYCL out-of-device-memory lists
UR_L0_ENABLE_RELAXED_ALLOCATION_LIMITS=1 (Level Zero refuses one allocation over max_mem_alloc_size without it).
The checks: tests/diagnose_heldout.py check_case; the garble pass as in sets 6 to 21."""

from __future__ import annotations

from oomkit.diagnose import diagnose
from tests.diagnose_heldout import garble_tests, heldout_tests

CASES, test_cases_are_cited_and_new, test_heldout_case = heldout_tests("heldout22.jsonl", minimum=8, fix_required=True)
test_garbled_log_exits_cleanly, test_readable_garbles_keep_the_reading = garble_tests(CASES)


def _case(prefix: str) -> dict:
    return next(c for c in CASES if c["id"].startswith(prefix))


def _texts(d) -> list[str]:
    return [" ".join([f.summary, *f.flags, *(f"{k}={v}" for k, v in f.env)]) for f in d.fixes]


def test_sycl_device_oom_names_the_relaxed_allocation_limit():
    """llama.cpp#25502: whatever the stage, the SYCL out-of-device-memory's fixes name the Level Zero setting the
    thread confirms (MUL_MAT passes with it)."""
    d = diagnose(_case("llamacpp-25502")["text"])
    assert (d.engine, d.backend) == ("llama.cpp", "SYCL"), d.to_dict()
    assert any("UR_L0_ENABLE_RELAXED_ALLOCATION_LIMITS=1" in t for t in _texts(d)), _texts(d)


def test_pinned_refusal_then_device_graph_buffer_stays_compute():
    """The pinned-host rule reads only a host buffer type: the graph reservation naming a device buffer after the
    same pinned-memory line is the device's compute buffer (koboldcpp#1882's lines with Vulkan1 in place of
    Vulkan_Host)."""
    lines = _case("koboldcpp-1882")["text"].replace("failed to allocate Vulkan_Host buffer",
                                                     "failed to allocate Vulkan1 buffer")
    lines = "\n".join(ln for ln in lines.split("\n") if "ggml_backend_cpu_buffer_type_alloc_buffer" not in ln)
    d = diagnose(lines)
    assert d.stage == "compute", d.to_dict()


def test_host_graph_buffer_without_micro_batch_keeps_the_message_advice():
    """Without n_ubatch in the log there is no micro-batch to halve: the reservation's own '-ub smaller' stays, in
    KoboldCpp's words (its -b sets the micro-batch)."""
    text = "\n".join(ln for ln in _case("koboldcpp-1882")["text"].split("\n") if "worst-case" not in ln)
    d = diagnose(text)
    assert d.stage == "host_ram" and "n_ubatch" not in d.settings, d.to_dict()
    assert _texts(d) and _texts(d)[0].startswith("-b smaller"), _texts(d)
    plain = diagnose(text.replace("gpttype_load_model", "llama_model_load_from_file_impl"))
    assert plain.host is None and _texts(plain)[0].startswith("-ub smaller"), plain.to_dict()


def test_koboldcpp_flags():
    """KoboldCpp's --batchsize choices are powers of two up to 4096, one --quantkv level for K and V (1 = q8,
    2 = q4), and --flashattention (koboldcpp.py 1.102 argparse); the flags it shares with llama.cpp pass unchanged."""
    from oomkit.diagnose.koboldcpp import as_koboldcpp  # the translation alone, outside a diagnosis
    from oomkit.diagnose.result import Fix

    out = as_koboldcpp([Fix(summary="-ub 384 (from 768): smaller", flags=("-ub", "384")),
                        Fix(summary="-ctk q8_0 -ctv q8_0 -fa on: half the cache", flags=("-ctk", "q8_0", "-ctv", "q8_0",
                                                                                           "-fa", "on")),
                        Fix(summary="-ngl 20 (from 41)", flags=("-ngl", "20"))])
    assert [(f.summary.split(":")[0], f.flags) for f in out] == [
        ("-b 256 (from 768)", ("-b", "256")), ("--quantkv 1 --flashattention", ("--quantkv", "1",
                                                                                    "--flashattention")),
        ("-ngl 20 (from 41)", ("-ngl", "20"))]


def test_tgi_prefill_count_still_halved_where_printed():
    """TGI's own warm-up error carries the count: the fix halves it (not the bare flag of a raw PyTorch error)."""
    d = diagnose("text_generation_launcher: Method Warmup encountered an error.\nRuntimeError: Not enough memory to "
                 "handle 4096 prefill tokens. You need to decrease `--max-batch-prefill-tokens`\n")
    assert d.engine == "tgi" and d.stage == "compute", d.to_dict()
    assert any("--max-batch-prefill-tokens 2048" in t for t in _texts(d)), _texts(d)


def test_lmstudio_unsigned_exit_code_reads_no_figure():
    """LM Studio 0.3's dialog with the exit status printed unsigned (lmstudio-bug-tracker#770): no exit code, stage or
    advice is made of it."""
    d = diagnose(_case("lmstudio-770")["text"])
    assert (d.engine, d.stage, d.fixes) == ("lmstudio", "unknown", ()), d.to_dict()
    assert "exit_code" not in d.numbers, d.numbers


def test_cut_message_claims_no_fragmentation():
    """tgi#2301's message is cut before what PyTorch reserved ('Of t'): no cause says the allocator's blocks are
    fragmented, and the shortage's own cause stays."""
    d = diagnose(_case("tgi-2301")["text"])
    assert not any("fragmented" in c for c in d.causes), d.causes
    assert any("needs more memory than the device has free" in c for c in d.causes), d.causes
