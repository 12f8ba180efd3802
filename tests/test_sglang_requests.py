"""SGLang with a KV pool shorter than context_length: the server starts, its scheduler turns long prompts away.

SGLang's source (PyPI wheels 0.4.0-0.5.23): tp_worker.py sets max_req_len = min(context_len - 1,
max_total_num_tokens - 1) and max_req_input_len = max_req_len - 5, asserting only that both are positive; the
scheduler aborts a prompt of max_req_input_len tokens or more (managers/utils.py validate_input_length, 0.4.3.post4+:
"Input length (N tokens) exceeds the maximum allowed length (M tokens). Use a shorter input or enable
--allow-auto-truncate."), truncates it with --allow-auto-truncate, and in 0.4.0 truncated it with a warning. 0.5.23
also warns at start-up (tp_worker.py get_worker_info: "KV pool holds %d tokens, fewer than --context-length %d.").
The ground truth that it starts: qwq-32b-tp4-4xl4-capture-bs80 prints max_total_num_tokens=46611 with context_len=131072
and then "The server is fired up and ready to roll!".
"""

import re

from oomkit.check import check
from oomkit.engines import sglang as sg
from oomkit.engines.sglang.args import format_command, parse_args
from oomkit.engines.sglang.layout import request_limits
from oomkit.hardware.catalog import devices_for_names
from oomkit.model.resolve import resolve
from oomkit.report.check import text
from tests.sglang_cases import load, qwq_32b

QWEN3_8B = resolve("Qwen/Qwen3-8B")


def _check(*argv: str, version: str | None = None):
    _, _, s = parse_args(["--model-path", "Qwen/Qwen3-8B", *argv])
    if version:
        s = sg.SGLangSettings(**{**s.to_dict(), "engine_version": version})
    return check(QWEN3_8B, "sglang", settings=s, gpu="RTX 4090")


def test_the_qwq_log_starts_with_a_pool_shorter_than_its_context():
    d = load("qwq-32b-tp4-4xl4-capture-bs80")
    assert "max_total_num_tokens=46611" in d["quoted"] and "context_len=131072" in d["quoted"]
    assert d["quoted"].rstrip().endswith("The server is fired up and ready to roll!")
    # tp_worker.py on the printed pool: max_req_len = min(131072 - 1, 46611 - 1), the prompt 5 fewer
    assert request_limits(46611, 131072) == (46610, 46605)
    s = sg.SGLangSettings(tp_size=4, mem_fraction_static=0.85, chunked_prefill_size=2048, context_length=131072,
                          attention_backend="flashinfer", engine_version="0.4.3.post4")
    est = sg.ENGINE.estimate(qwq_32b(), devices_for_names("L4") * 4, s)
    view = est.engine_view
    tokens = view["max_total_num_tokens"]
    assert tokens < 131072  # end to end (GPU memory to pool) not validated on this log: the L4's free memory differs
    # it starts: no phase runs out, and every GPU holds what SGLang allocates, within its memory
    assert "failed_phase" not in view and all(u.total_bytes <= u.memory_bytes for u in est.devices)
    assert est.request_limit == view["max_req_input_len"] == tokens - 6 and view["max_req_len"] == tokens - 1
    assert est.fits is False  # ... but not at the context asked for
    note = next(w for w in est.warnings if w.startswith("SGLang starts, but "))
    assert f"the KV pool holds {tokens:,} tokens (max_total_num_tokens), fewer than context_length 131,072" in note
    assert f"the maximum allowed length ({tokens - 6} tokens)" in note and "aborted" in note


def test_qwen3_8b_on_a_4090_starts_and_says_how_to_serve_its_context():
    r = _check()
    est = r.estimate
    view = est.engine_view
    tokens = view["max_total_num_tokens"]
    assert tokens < 40960 and view["context_len"] == 40960
    # nothing runs out of memory: the KV shown is the pool SGLang allocates, free memory is left after both captures
    assert all(d.stage is None for d in r.devices) and r.stage == "engine" and not r.fits
    assert est.devices[0].kv_cache_bytes == view["k_bytes"] + view["v_bytes"]
    assert view["available_gpu_mem_bytes"] > 0 and "failed_phase" not in view
    out = text(r)
    verdict = next(line for line in out.splitlines() if line.startswith("verdict:"))
    assert verdict.startswith(f"verdict: DOES NOT FIT — sglang starts, but the KV pool holds {tokens:,} tokens "
                              "(max_total_num_tokens), fewer than context_length 40,960: ")
    assert f"a prompt of {tokens - 6:,} tokens or more is aborted" in verdict
    assert "fails first" not in out and "short by" not in out
    # every setting the verdict offers serves the full context when checked again
    ctx = int(re.search(r"--context-length to (\d+)", verdict).group(1))
    assert ctx == tokens and _check("--context-length", str(ctx)).fits
    fp8 = re.search(r"--kv-cache-dtype (fp8_e4m3) with --mem-fraction-static (0\.\d\d)", verdict)
    assert fp8 and _check("--kv-cache-dtype", "fp8_e4m3", "--mem-fraction-static", fp8.group(2)).fits
    assert not _check("--kv-cache-dtype", "fp8_e4m3", "--mem-fraction-static",
                      f"{float(fp8.group(2)) - 0.01:.2f}").fits  # the smallest such fraction
    # the raised fraction alone is not offered: the pool for 40,960 tokens leaves CUDA graph capture short
    assert "raise --mem-fraction-static" not in verdict


def test_a_raised_fraction_is_offered_when_the_graphs_still_fit():
    r = _check("--context-length", "16384")
    verdict = text(r).splitlines()[3]
    m = re.search(r"raise --mem-fraction-static to (0\.\d\d)", verdict)
    assert m and _check("--context-length", "16384", "--mem-fraction-static", m.group(1)).fits
    assert not _check("--context-length", "16384", "--mem-fraction-static", f"{float(m.group(1)) - 0.01:.2f}").fits


def test_largest_context_is_the_pool():
    r = _check()
    tokens = r.estimate.engine_view["max_total_num_tokens"]
    assert r.max_context == tokens - tokens % 256


def test_truncation_instead_of_abort():
    note = _check("--allow-auto-truncate").estimate.engine_view["error"]
    assert "is cut to" in note and "(--allow-auto-truncate)" in note and "aborted" not in note
    old = _check(version="0.4.0").estimate.engine_view["error"]  # scheduler.py handle_generate_request, 0.4.0
    assert "Truncated!!!" in old and "aborted" not in old


def test_the_start_up_warning_from_0_5_23():
    line = "KV pool holds {} tokens, fewer than --context-length 40960. One full-length request cannot fit"
    new = _check(version="0.5.23").estimate.engine_view
    assert line.format(new["max_total_num_tokens"]) in new["log"]
    old = _check(version="0.5.18").estimate.engine_view
    assert "fewer than --context-length" not in old["log"]


def test_allow_auto_truncate_round_trips():
    _, _, s = parse_args(["--model-path", "m", "--allow-auto-truncate"])
    assert s.allow_auto_truncate
    assert "--allow-auto-truncate" in format_command("m", s)


def test_fit_says_the_server_starts_and_shortens_the_context():
    """Qwen3-8B in bf16 on a 4090: SGLang starts, but its pool holds 7,777 tokens of the 40,960 a request may take.
    A 7,777-token context is below a usable one (fit's floor, 8192): the fix keeps the context and makes room
    (fp8 weights) so that a full-length request fits the pool; asked to go as low as 4096 (--min-ctx), the fix is
    the shorter context."""
    from oomkit.hardware.catalog import devices_for_names as gpus
    from oomkit.plan.fit import fit
    from oomkit.plan.options import Goals
    from oomkit.report.plan import fit_text

    argv = ["python", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B"]
    f = fit(argv, gpus("RTX 4090"))
    before = fit_text(f).splitlines()[1].strip()
    assert before.startswith("sglang starts, but the KV pool holds ") and "aborted" in before
    assert f.after.fits and f.after.engine_view["max_total_num_tokens"] >= f.after.settings["context_length"] >= 8192
    f = fit(argv, gpus("RTX 4090"), Goals(min_ctx=4096))
    assert f.after.fits and f.after.settings["context_length"] <= f.before.engine_view["max_total_num_tokens"]
    assert [c.flag for c in f.changes] == ["context_length"]
