"""diagnose() on a ninth held-out set of public crash logs (tests/fixtures/diagnose/heldout9.jsonl), 2024-2026,
weighted to the newest engines and models: vLLM's model runner V2 warm-up (warmup_kernels) running out after the KV
cache, a 1M-token default context, V1's cache blocks in CI; Ollama's llama-server failing a pinned CUDA_Host buffer
(host RAM), its MLX runner's Metal SubmissionsIgnored (no shortage), system-memory refusals; llama.cpp's recurrent-state
(rs) cache, KV caches in host RAM under llama-cpp-python, llamafile and Khoj, ggml-metal and MLX command buffers out
of memory, a weights buffer under Jan's cortex, PyTorch's message in Gradio and a title; and two strict xfails whose
cause the text does not carry (an LM Studio loader bug, Ollama's context failure without its buffer). Each case is
cited with the lines kept verbatim (the checks: tests/diagnose_heldout.py); `before` records what oomkit answered
before the rules these logs led to.

The garble pass, through the command line, as in set 8: each log truncated, re-wrapped, ANSI-coloured, CRLF line
ends, interleaved with another case's log, its bytes corrupted and emptied: exit 0, 1 or 2 (one `oomkit: error:`
line), never an internal error or a traceback; colour codes, CRLF, an 80-column re-wrap and the log run together on
one line keep each case's engine and stage."""

from __future__ import annotations

from tests.diagnose_heldout import (
    garble_tests,
    heldout_tests,
)

CASES, test_cases_are_cited_and_new, test_heldout_case = heldout_tests("heldout9.jsonl")


def test_v2_warmup_is_no_graph_capture():
    """vLLM's model runner V2 warms up with a batch of up to max_num_seqs dummy requests (v1/worker/gpu/warmup.py
    warmup_kernels) and captures no CUDA graph in it: the first fix is fewer sequences, never --enforce-eager."""
    from oomkit.diagnose import diagnose

    case = next(c for c in CASES if c["id"] == "vllm-49475-gemma4-dspark-v2-warmup-28g")
    d = diagnose(case["text"])
    assert d.phase == "warm-up batch"
    assert d.fixes[0].flags[:1] == ("--max-num-seqs",)
    assert all("--enforce-eager" not in f.flags for f in d.fixes)


test_garbled_log_exits_cleanly, test_readable_garbles_keep_the_reading = garble_tests(CASES)
