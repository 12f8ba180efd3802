"""diagnose() on a fifth held-out set of public crash logs (tests/fixtures/diagnose/heldout5.jsonl), 2023-2026,
weighted to kinds the earlier sets had few of: llama.cpp tools that skip --fit (llama-bench, batched-bench), Ollama's
new-engine compute and KV failures (CUDA, Vulkan), the projector's warm-up buffer, Vulkan per-allocation limits,
vLLM V1 start-up checks, SGLang CUDA-graph capture failures that are not memory, FlashInfer's fixed workspace, Metal
command-buffer failures from MLX servers and macOS's own log, LM Studio's guardrail, PyTorch on ROCm and under WSL.
Each case is cited with the lines kept verbatim; it checks the program, the stage that ran out, the figures the text
carries and the fix the thread shows (`fix`: substrings of the fixes; `absent`: advice that would be wrong for that
log; `first`: what the first fix must say). `before` records what oomkit answered before the rules these logs led
to; a case still missed after a source-backed attempt carries `known_miss` (a strict xfail)."""

from __future__ import annotations

from tests.diagnose_heldout import heldout_tests

CASES, test_cases_are_cited_and_new, test_heldout_case = heldout_tests("heldout5.jsonl")
