"""diagnose() on an eighth held-out set of public crash logs (tests/fixtures/diagnose/heldout8.jsonl), 2025-2026,
weighted to failures that are no shortage and must be read as none: an architecture the build does not know
(llama.cpp through a Rust binding, llama-cpp-python, --fit, Ollama's runner exit and LM Studio's dialog; vLLM's
registry, mlx-lm / mlx-vlm's model types, transformers' GGUF loader), a model file or config that is not there
(gguf_init_from_file beside common_init's --n-gpu-layers hint, vLLM without a config.json), a build without kernels
for a Blackwell card, a container without its GPU, SGLang's custom all-reduce failing CUDA-graph capture, --fit
skipping a tensor split; and next to them accelerate / transformers sending weights to disk, TGI's warm-up under
an input limit the fix must respect, MLX's buffer-count limit in LM Studio and Ollama's generic load failure. Each
case is cited with the lines kept verbatim (the checks: tests/diagnose_heldout.py); `before` records what oomkit
answered before the rules these logs led to.

The garble pass, through the command line: each log truncated (its first half, its second half, one line cut
mid-way), re-wrapped at 60 columns, ANSI-coloured, CRLF line ends, interleaved line by line with another case's log,
its bytes corrupted (every seventh byte flipped, NUL bytes, a UTF-8 sequence cut in two) and emptied: exit 0
(placed), 1 (nothing placed) or 2 (unreadable, with one `oomkit: error:` line), never an internal error or a
traceback; re-wrapped at 80 columns or run together on one line, each keeps its reading."""

from __future__ import annotations

from tests.diagnose_heldout import (
    garble_tests,
    heldout_tests,
)

CASES, test_cases_are_cited_and_new, test_heldout_case = heldout_tests("heldout8.jsonl")


def test_most_cases_are_no_shortage():
    """The set tests the not-memory reading: most of its logs are failures that no memory setting fixes."""
    assert sum(c["expected"]["stage"] == "not_oom" for c in CASES) >= 20


def test_tgi_prefill_fix_respects_the_input_limit():
    """TGI's launcher refuses --max-batch-prefill-tokens below --max-input-tokens (launcher/src/main.rs): a fix
    that lowers the prefill batch under the input limit the warm-up line shows lowers the input limit with it."""
    from oomkit.diagnose import diagnose

    case = next(c for c in CASES if c["id"] == "tgi-3130-gemma3-27b-warmup-31000-prefill")
    limit = 30000  # warmup{max_input_length=Some(30000) ...} in the case's line
    seen = 0
    for f in diagnose(case["text"]).fixes:
        flags = dict(zip(f.flags[::2], f.flags[1::2], strict=False))
        if "--max-batch-prefill-tokens" in flags:
            seen += 1
            prefill = int(flags["--max-batch-prefill-tokens"])
            assert prefill >= int(flags.get("--max-input-tokens", limit)), f.summary
    assert seen


test_garbled_log_exits_cleanly, test_readable_garbles_keep_the_reading = garble_tests(CASES)
