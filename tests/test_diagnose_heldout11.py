"""diagnose() on an eleventh held-out set of public crash logs (tests/fixtures/diagnose/heldout11.jsonl), 16 logs new to
every diagnose fixture, 2024-2026: MoE expert offload over two GPUs (ik_llama.cpp's model-load line), a multimodal
projector's buffer for a request's image (llama-server) and a vision model's graph on a second GPU (Ollama), MLX's
single-buffer limit for an image, Vulkan over two GPUs, vLLM and Ollama on Strix Halo APUs (ROCm), LM Studio's
guardrail in its 0.3 wording, and lines that are no out-of-memory (a Go nil pointer in Ollama's runner, Ollama's
eviction notice, LM Studio's estimate note, a ROCm 7.2 regression that says "out of memory"). Each case is cited with
the lines kept verbatim and the fix its thread confirms; `before` records what oomkit answered before the rules these
logs led to: 10 of 16 wrong; 5 fixed by engine rules (the model-load line, the Ollama runner's prompt-cache line as an
Ollama marker, the projector at request time, the nil pointer, the eviction notice), 2 by message signatures each met
once here (LM Studio's 0.3 guardrail wording, its estimate note); 3 still wrong as strict xfails (what decides them is
only in prose: a host-RAM shortage, a third Vulkan device, a ROCm 7.2 regression). The checks:
tests/diagnose_heldout.py check_case; the garble pass as in sets 6 to 10."""

from __future__ import annotations

import pytest

from tests.diagnose_heldout import (
    FIXTURES,
    check_case,
    garble_tests,
    load_cases,
    params,
)

NAME = "heldout11.jsonl"
CASES = load_cases(NAME)


def test_cases_are_cited_and_new():
    """16 cases, each from a GitHub thread in no other diagnose fixture."""
    from oomkit.diagnose.signatures import ENGINES, STAGES

    assert len(CASES) >= 16 and len({c["id"] for c in CASES}) == len(CASES)
    others = "".join(p.read_text(encoding="utf-8") for p in FIXTURES.glob("*.jsonl") if p.name != NAME)
    for c in CASES:
        assert c["source"].startswith("https://github.com/"), c["id"]
        assert f'{c["source"]}"' not in others, c["id"]
        assert c["expected"]["stage"] in STAGES and c["expected"]["engine"] in ENGINES, c["id"]
        assert c["before"] and c["fix_that_worked"], c["id"]


@pytest.mark.parametrize("case", params(CASES))
def test_heldout_case(case):
    check_case(case)


def test_model_load_line_names_the_weights_alone():
    """llama-model.cpp load_tensors' "Failed to allocate buffer type X" after ggml-cuda's cudaMalloc line is the model
    buffer (ik_llama.cpp PR #1464), whatever -ub the command line carries; the same cudaMalloc line followed by the
    graph allocator's line stays the compute buffer."""
    from oomkit.diagnose import diagnose

    cuda = "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 35378.09 MiB on device 1: cudaMalloc failed: out of memory"
    assert diagnose(f"{cuda}\nFailed to allocate buffer type CUDA1\n").stage == "weights"
    graph = f"{cuda}\nggml_gallocr_reserve_n: failed to allocate CUDA1 buffer of size 37096616448\n"
    assert diagnose(graph).stage == "compute"


def test_eviction_notice_beside_a_real_failure():
    """Ollama's eviction notice is no failure alone (ollama#12403) and does not hide one: the system-memory refusal
    after it is still host RAM (its wording 'than is available (X)' differs from the notice's 'than is currently
    available, evicting')."""
    from oomkit.diagnose import diagnose

    notice = ('time=2025-09-26T10:34:53.236+03:00 level=INFO source=server.go:511 msg="model requires more system '
              'memory than is currently available, evicting a model to make space"')
    assert diagnose(notice).stage == "not_oom"
    refusal = 'Error: model requires more system memory (18.4 GiB) than is available (14.6 GiB)'
    assert diagnose(f"{notice}\n{refusal}\n").stage == "host_ram"


def test_projector_at_request_time_not_at_warm_up():
    """The projector's buffer for a request's image (llama-server's 'processing image...') is advised as the
    projector's, and the language model's compute buffer without that line keeps the -ub advice."""
    from oomkit.diagnose import diagnose

    case = next(c for c in CASES if c["id"] == "llama-cpp-13414-mtmd-server-big-image-4514m")
    lines = case["text"].splitlines()
    without = diagnose("\n".join(lines[1:]))
    assert without.fixes[0].flags[:1] == ("-ub",)


test_garbled_log_exits_cleanly, test_readable_garbles_keep_the_reading = garble_tests(CASES)
