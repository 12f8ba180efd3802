"""diagnose() on a sixth held-out set of public crash logs (tests/fixtures/diagnose/heldout6.jsonl), 2024-2026,
weighted to kinds the earlier sets had few of: llama.cpp's --fit giving up on a hand-set placement, Vulkan and SYCL
failures (one that is no shortage), Ollama 0.11-0.12 runner errors that carry the compute buffer's line (ROCm,
Metal) and its layout refusal, vLLM V1 0.10-0.20 (CUDA-graph capture cut short under TP, a DeepGEMM warm-up under
TP+EP, a serving-time step, the vision encoder's attention on ROCm, free memory on start-up), SGLang's capture
failing without a cause and its KV pool's token slots running out, MLX and its servers (single-buffer and buffer-count limits, command-buffer failures, one
of 2024 without the [metal::malloc] prefix), LM Studio's dialog and Vulkan runtime, PyTorch on ROCm. Each case is
cited with the lines kept verbatim (the checks: tests/diagnose_heldout.py); `before` records what oomkit answered
before the rules these logs led to; a case still missed after a source-backed attempt is a strict xfail
(`known_miss`).

The garble pass: each log truncated (its first half, its second half, one line cut mid-way), its bytes corrupted
(every seventh byte flipped, NUL bytes, a UTF-8 sequence cut in two, CRLF line ends) and emptied, through the
command line: exit 0 (placed), 1 (nothing placed) or 2 (unreadable, with one `oomkit: error:` line), never an
internal error or a traceback."""

from __future__ import annotations

import pytest

from tests.diagnose_heldout import check_garbled_exits_cleanly, garbled, heldout_tests

CASES, test_cases_are_cited_and_new, test_heldout_case = heldout_tests("heldout6.jsonl")


GARBLED = [pytest.param(c["id"], kind, data, id=f"{c['id']}-{kind}")
           for c in CASES for kind, data in garbled(c["text"]).items()]


@pytest.mark.parametrize("cid,kind,data", GARBLED)
def test_garbled_log_exits_cleanly(cid, kind, data, tmp_path, capsys):
    check_garbled_exits_cleanly(cid, kind, data, tmp_path, capsys)
