"""diagnose() on a seventh held-out set of public crash logs (tests/fixtures/diagnose/heldout7.jsonl), 2025-2026,
weighted to what the earlier sets had few of: messages that are no shortage and must not be read as one (vLLM's
encoder-cache refusal and its chunked-multimodal start-up check, MLX's Invalid Resource and Impacting Interactivity,
ggml's pre-allocated tensor abort and its context pool, llama.cpp's model-file read error behind an mlock warning, a
kernel fault under vLLM), Vulkan's per-allocation limit (a compute buffer, and a single weight tensor no layer count
shrinks), ROCm on Strix Halo with the log run together on one line, a compute buffer multiplied by pipeline
parallelism, an MTP draft's compute buffer, vLLM's KV check under pipeline parallelism and its sampler warm-up,
Ollama's runner and system-memory errors and its layout backoff on Vulkan, accelerate's device-map check, a PyTorch
message wrapped mid-word from SGLang's fp8 load, an Ascend NPU's runtime failure under vLLM, MLX's Metal failure as a
Markdown table row, LM Studio's bare exit code (a strict xfail: nothing in it names a cause). Each case is
cited with the lines kept verbatim (the checks: tests/diagnose_heldout.py); `before` records what oomkit answered
before the rules these logs led to; a case still missed after a source-backed attempt is a strict xfail
(`known_miss`).

The garble pass, through the command line: each log truncated (its first half, its second half, one line cut
mid-way), re-wrapped at 60 columns, ANSI-coloured, CRLF line ends, interleaved line by line with another case's log,
its bytes corrupted (every seventh byte flipped, NUL bytes, a UTF-8 sequence cut in two) and emptied: exit 0
(placed), 1 (nothing placed) or 2 (unreadable, with one `oomkit: error:` line), never an internal error or a
traceback."""

from __future__ import annotations

import shlex

import pytest

from tests.diagnose_heldout import (
    garble_tests,
    heldout_tests,
    params,
)

CASES, test_cases_are_cited_and_new, test_heldout_case = heldout_tests("heldout7.jsonl")


@pytest.mark.parametrize("case", [c for c in params(CASES) if c.values[0].get("command")])
def test_the_threads_command_keeps_the_reading_and_is_rewritten(case):
    """With the command the thread gives, the reading holds and a fix that changes a flag comes back as that command
    with the flag set, every word quoted as the shell must read it back (a prompt with spaces)."""
    from oomkit.diagnose import diagnose

    argv = shlex.split(case["command"])
    d = diagnose(case["text"], command=argv)
    assert (d.engine, d.stage) == (case["expected"]["engine"], case["expected"]["stage"])
    lines = [f.command for f in d.fixes if f.command]
    assert lines, [f.summary for f in d.fixes]
    for line in lines:
        words = shlex.split(line)
        assert words[: len(argv)] == argv and len(words) > len(argv), line


test_garbled_log_exits_cleanly, test_readable_garbles_keep_the_reading = garble_tests(CASES, ("ansi", "crlf", "rewrapped-80"))
