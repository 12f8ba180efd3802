"""diagnose() on a tenth held-out set of public crash logs (tests/fixtures/diagnose/heldout10.jsonl), 12 logs new to
every diagnose fixture: vLLM V0's and V1's KV checks (one V1 message wrapped over three lines, its parenthesis lost),
llama.cpp compute buffers on ROCm at the model's default context and on several GPUs, Ollama's compute buffers and a
CUDA backend loaded twice (a stale library from an older install), KoboldCpp's bare cudaMalloc line quoted in prose,
ggml-cuda's pinned-memory fallback (no failure), MLX's single-buffer and resource limits, and an LM Studio report whose
cause (another process holding the VRAM) is only in prose (a strict xfail). Each case is cited with the lines kept
verbatim and the fix its thread confirms; `before` records what oomkit answered before the rules these logs led to
(5 of 12 wrong). The checks: tests/diagnose_heldout.py check_case; the garble pass as in sets 6 to 9."""

from __future__ import annotations

from tests.diagnose_heldout import (
    garble_tests,
    heldout_tests,
    load_cases,
)

NAME = "heldout10.jsonl"
# 12 cases (the older sets have 20), each with the fix its thread confirms
CASES, test_cases_are_cited_and_new, test_heldout_case = heldout_tests(NAME, minimum=12, fix_required=True)


def test_backend_loaded_twice_needs_one_start_up():
    """Two libraries of one GPU backend in one start-up are the stale-copy failure (ollama#11388); the same backend
    loaded by separate processes far apart (Ollama's discovery runs each library alone), or the CPU backend's
    variants, are not."""
    from oomkit.diagnose.reader import _backend_loaded_twice

    case = next(c for c in CASES if c["id"] == "ollama-11388-cuda-backend-loaded-twice")
    lines = case["text"].splitlines()[:2]
    assert _backend_loaded_twice("\n".join(lines)) == ("CUDA", [ln.split(" from ", 1)[1] for ln in lines])
    apart = "\n".join([lines[0], *["time=... level=INFO source=server.go msg=\"waiting\""] * 20, lines[1]])
    assert _backend_loaded_twice(apart) is None
    assert _backend_loaded_twice("\n".join([lines[0], lines[0]])) is None
    cpu = ("load_backend: loaded CPU backend from C:\\ollama\\lib\\ollama\\ggml-cpu-haswell.dll\n"
           "load_backend: loaded CPU backend from C:\\ollama\\lib\\ollama\\ggml-cpu-icelake.dll")
    assert _backend_loaded_twice(cpu) is None


def test_backend_loaded_twice_names_the_stale_library_first():
    """The stale copy is the library directly in lib/ollama, not the one in its cuda_v12 folder (ollama#11211)."""
    from oomkit.diagnose import diagnose

    case = next(c for c in CASES if c["id"] == "ollama-11388-cuda-backend-loaded-twice")
    first = diagnose(case["text"]).fixes[0].summary
    assert first.startswith("remove the stale CUDA backend library D:\\Ollama\\OllamaInstall\\lib\\ollama\\ggml-cuda.dll")


def test_pinned_fallback_is_no_failure_beside_a_real_one():
    """ggml-cuda's pinned-memory line is a fallback: alone it is no shortage (llama.cpp#9629), and beside a real
    allocation failure that failure is the answer (ollama#8964, held-out set 7: weights)."""
    from oomkit.diagnose import diagnose

    alone = next(c for c in CASES if c["id"] == "llama-cpp-9629-pinned-memory-invalid-argument")
    d = diagnose(alone["text"])
    assert (d.stage, d.fixes) == ("not_oom", ())
    with_failure = next(c for c in load_cases("heldout7.jsonl") if c["id"] == "ollama-8964-r1-671b-two-3090-pinned-and-cuda0")
    assert diagnose(with_failure["text"]).stage == "weights"


test_garbled_log_exits_cleanly, test_readable_garbles_keep_the_reading = garble_tests(CASES)
