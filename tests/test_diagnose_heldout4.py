"""diagnose() on a fourth held-out set of public crash logs (tests/fixtures/diagnose/heldout4.jsonl), 2024-2026:
vLLM V0 / V1 / forks (Aphrodite, vLLM-Omni, a backport), SGLang's request-slot pool, Ollama's RAM refusals from the
API and the journal, MLX / mlx-vlm single-buffer limits, llama.cpp on Metal, ROCm and SYCL, LM Studio. Each case is
cited with the lines kept verbatim; it checks the program, the stage (and phase) that ran out, the figures the text
carries and the fix an experienced user would give (`fix`: substrings of the fixes; `absent`: advice that would be
wrong for that log; `first`: what the first fix must say). `before` records what oomkit answered before the rules
these logs led to; a case still missed after a source-backed attempt carries `known_miss` (a strict xfail)."""

from __future__ import annotations

from tests.diagnose_heldout import heldout_tests

CASES, test_cases_are_cited_and_new, test_heldout_case = heldout_tests("heldout4.jsonl")
