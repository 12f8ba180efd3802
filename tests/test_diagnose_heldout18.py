"""diagnose() on an eighteenth held-out set of public crash logs (tests/fixtures/diagnose/heldout18.jsonl), 4 logs new
to every test fixture, 2023-2024 (a short set: collected after set 17 in the time left): SGLang 0.1.x failing on a
request pool its lowered --mem-fraction-static shrank, and three chat front ends over transformers whose prompt grew
with the conversation (TavernAI over KoboldAI, text-generation-webui twice: a generate() traceback cut before its
message under the issue's title, and a message cut at its end). Each case is cited with the lines kept verbatim and
the fix its thread gives; `before` records what oomkit answered before:
before: 2 of 4 right (2 wrong in stage); after: 4 right.
The rules, each from the engine's own source: SGLang 0.1.x router/infer_batch.py prepare_for_extend calls .cpu() on
ReqToTokenPool.alloc's None when the pool has no free row, and router/model_runner.py init_memory_pool sizes that
pool max_total_num_token / context_len x 256 rows, so the fix is a larger --mem-fraction-static (not a lower one);
a transformers traceback cut before its message, in a text that says it ran out of memory, is placed by its frames
(generate -> compute) as PyTorch's message would be. The checks: tests/diagnose_heldout.py check_case; the garble
pass as in sets 6 to 17."""

from __future__ import annotations

from oomkit.diagnose import diagnose
from tests.diagnose_heldout import garble_tests, heldout_tests

CASES, test_cases_are_cited_and_new, test_heldout_case = heldout_tests("heldout18.jsonl", minimum=4, fix_required=True)
# (no re-wrap at 80 columns among the readable garbles: textgen-960's Windows paths run past 80 columns unbroken, so
# the wrap cuts the word 'transformers' itself and the program's name is no longer in the text)
test_garbled_log_exits_cleanly, test_readable_garbles_keep_the_reading = garble_tests(
    CASES, kinds=("ansi", "crlf", "run-together"))


def test_transformers_cut_traceback_needs_an_out_of_memory_word():
    text = next(c for c in CASES if c["id"].startswith("textgen-960"))["text"]
    d = diagnose(text.replace("CUDA out of memory - during a conversation", "crash during a conversation"))
    assert d.stage == "unknown", d.to_dict()


def test_sglang_v01_request_pool_reads_without_the_attribute_error_line():
    """The source line alone (a paste cut before the AttributeError) still names the request pool."""
    d = diagnose('  File "/w/sglang/python/sglang/srt/managers/router/infer_batch.py", line 203, in prepare_for_extend\n'
                 "    req_pool_indices_cpu = req_pool_indices.cpu().numpy()\n")
    assert (d.engine, d.stage) == ("sglang", "kv_cache"), d.to_dict()
