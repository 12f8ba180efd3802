"""The hub walked by someone whose engine just ran out of memory, fifth time: a pasted SGLang command whose KV pool
is short of one request, a GPU picked from a list, the answer found on a phone and from the keyboard after the
form is sent, and odd input in the error index's search. Each case failed before; each figure or message is read
through the CLI (its --json or its text) or the API (web/api.py runs the CLI's code) for the same input, never
copied. The browser cases run as tests/test_browser.py runs them (Debian's Chromium, skipped where it is absent).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from urllib.parse import quote

import pytest

pytest.importorskip("fastapi")

from oomkit.hardware.catalog import all_gpus  # noqa: E402
from oomkit.web import api  # noqa: E402
from tests.test_browser import _page, browser, server  # noqa: E402,F401  (the same server and Chromium)


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "oomkit", *args], capture_output=True, text=True,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})


def _open(browser, width: int = 1280):  # noqa: F811
    """A page whose 4xx answers are expected (tests/test_browser.py's _page fails on their console line)."""
    ctx = browser.new_context(viewport={"width": width, "height": 900 if width > 600 else 844})
    return ctx, ctx.new_page()


# ---------------------------------------------------------------------------------------------------------
# SGLang's pool short of one full-length request: the verdict read "sglang starts, but, with 0.00 GiB left on the
# fullest GPU" (check.CheckResult.refusal_kind "starts, but" put before the margin); `oomkit check` says
# "sglang starts, but <why>", and the page now says the same why after "but"


SGLANG = {"command": "python -m sglang.launch_server --model-path Qwen/Qwen3-8B", "gpu": "RTX 4090"}


def test_sglang_short_of_one_request_reads_as_the_cli_says_it(server, browser):  # noqa: F811
    cli = _cli("check", "--gpu", SGLANG["gpu"], "--", *SGLANG["command"].split())
    assert cli.returncode == 1, cli.stderr
    why = re.search(r"verdict: DOES NOT FIT — sglang starts, but (.*)", cli.stdout).group(1)
    assert "the KV pool holds" in why  # SGLang's max_total_num_tokens below context_length
    with _page(browser, 375, server + "/") as page:
        page.fill("#f-gpu", SGLANG["gpu"])
        page.fill("#f-command", SGLANG["command"])
        with page.expect_navigation():
            page.click("form.card button[type=submit]")
        verdict = page.locator("#verdict").inner_text()
        assert "but," not in verdict, verdict
        assert verdict.startswith("Does not fit: sglang starts, with ") and ", but\n" in verdict, verdict
        assert why.split(":")[0] in verdict  # "the KV pool holds 7,611 tokens (max_total_num_tokens), fewer ..."
        want = api.estimate(SGLANG).data()["total_bytes"]
        assert int(page.get_attribute("#stat-total [data-bytes]", "data-bytes")) == want


# ---------------------------------------------------------------------------------------------------------
# Picking a GPU: the GPU fields took free text only, and the page's "unknown GPU" advice says "pick a GPU from the
# list"; the fields now offer the catalog's GPUs (datalist), each as the CLI's --gpu reads it


def test_the_gpu_fields_offer_the_catalog_and_a_pick_gives_the_clis_figures(server, browser):  # noqa: F811
    with _page(browser, 375, server + "/plan") as page:
        assert page.get_attribute("#f-gpu", "list") == "gpus" and page.get_attribute("#f-fit_gpu", "list") == "gpus"
        options = page.eval_on_selector_all("#gpus option", "os => os.map(o => o.value)")
    assert len(options) == len({g.aliases[0] if g.aliases else g.name for g in all_gpus()}) > 150
    assert "RTX 4060 Ti" in options and "H100" in options
    with _page(browser, 375, server + "/") as page:
        assert page.get_attribute("#f-gpu", "list") == "gpus"
        assert page.locator("#gpus").count() == 1
        page.fill("#f-model", "qwen3:8b")
        page.fill("#f-gpu", "RTX 4060 Ti")  # an option, as picked
        with page.expect_navigation():
            page.keyboard.press("Enter")
        cli = json.loads(_cli("estimate", "--json", "qwen3:8b", "--gpu", "RTX 4060 Ti").stdout)
        assert cli["devices"][0]["name"] == "NVIDIA GeForce RTX 4060 Ti 8GB"  # the size it is sold in first
        assert cli["devices"][0]["name"] in page.locator("main").inner_text()
        assert int(page.get_attribute("#stat-total [data-bytes]", "data-bytes")) == cli["total_bytes"]
    with _page(browser, 375, server + "/limits") as page:
        assert page.get_attribute("#f-gpu", "list") == "gpus" and page.locator("#gpus").count() == 1


# ---------------------------------------------------------------------------------------------------------
# The answer after the form is sent: on a 375 px phone the verdict began 980 px down (off the screen, the page at
# its top) and a keyboard took 26 Tabs through the form to reach the figures; the focus is now on the answer


def test_the_answer_is_on_screen_and_next_from_the_keyboard(server, browser):  # noqa: F811
    with _page(browser, 375, server + "/") as page:
        page.fill("#f-model", "qwen3:8b")
        page.fill("#f-gpu", "RTX 4060")
        with page.expect_navigation():
            page.keyboard.press("Enter")
        assert page.evaluate("document.activeElement.id") == "answer"
        top = page.evaluate("document.getElementById('verdict').getBoundingClientRect().top")
        assert -1 < top < 844 / 2, top
        page.keyboard.press("Tab")
        assert page.evaluate("!!document.activeElement.closest('#answer')")
    # a typo: the error is where the focus is, and the first Tab reaches the name it offers
    ctx, page = _open(browser, 375)
    try:
        page.goto(server + "/")
        page.focus("#f-model")
        page.keyboard.type("lama3.1:8b")
        with page.expect_navigation():
            page.keyboard.press("Enter")
        assert page.evaluate("document.activeElement.id") == "answer"
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.textContent") == "llama3.1:8b"
        with page.expect_navigation():
            page.keyboard.press("Enter")
        want = api.estimate({"model": "llama3.1:8b"}).data()["total_bytes"]
        assert int(page.get_attribute("#stat-total [data-bytes]", "data-bytes")) == want
    finally:
        ctx.close()


def test_the_fit_answer_is_the_one_in_view_on_the_plan_page(server, browser):  # noqa: F811
    """The plan page holds two forms: a sent fit command's answer is the one shown, not the plan's form above it."""
    cmd = "llama-server -m qwen3:8b -c 131072"
    with _page(browser, 375, server + f"/plan?fit_command={quote(cmd)}&fit_vram=12GiB") as page:
        assert page.evaluate("document.activeElement.id") == "answer"
        assert page.evaluate("!!document.activeElement.closest('#answer') && "
                             "!!document.querySelector('#answer #fit-verdict')")
        top = page.evaluate("document.getElementById('answer').getBoundingClientRect().top")
        assert -1 < top < 844 / 2, top
    with _page(browser, 375, server + "/plan") as page:  # nothing asked: the page starts at its top
        assert page.evaluate("window.scrollY") == 0 and page.evaluate("document.activeElement === document.body")


# ---------------------------------------------------------------------------------------------------------
# The error index's search: a NUL or a search over 500 characters answered 400 with the list empty and no word
# of why (the API says it); the page now says it, in the page's words


@pytest.mark.parametrize("typed, said", [("x" * 600, "the search is longer than 500 characters"),
                                         ("kv\x00", "the search holds a NUL character")])
def test_a_refused_search_says_why(server, browser, typed, said):  # noqa: F811
    import httpx

    refused = httpx.get(f"{server}/api/errors", params={"q": typed}, timeout=30)
    assert refused.status_code in (400, 413, 422)
    assert refused.json()["error"] == said.replace("the search", "q", 1)
    ctx, page = _open(browser, 375)
    try:
        resp = page.goto(f"{server}/errors?q={quote(typed)}")
        assert resp.status in (400, 413, 422)
        alert = page.locator("[role=alert]").inner_text()
        assert alert == f"Cannot answer: {said}", alert
        assert page.evaluate("document.activeElement.id") == "answer"
    finally:
        ctx.close()


# ---------------------------------------------------------------------------------------------------------
# "Check against this machine" ticked: the verdict is `oomkit check`'s, but the page's JSON link went to
# /api/estimate, whose answer has no verdict ("fits" null without hardware); it now goes to /api/check


def test_the_json_link_of_a_check_on_this_machine_is_the_check(server, browser):  # noqa: F811
    import httpx

    with _page(browser, 375, server + "/?model=qwen3%3A8b&here=1") as page:
        href = page.get_attribute("#json-link", "href")
        ok = "ok" in page.get_attribute("#verdict", "class").split()
        shown = int(page.get_attribute("#verdict [data-bytes]", "data-bytes"))
    assert href.startswith("/api/check?"), href
    got = httpx.get(server + href, timeout=60).json()
    assert got["fits"] is ok
    if got["hardware"] == "reference":  # no GPU here: the reference card, the same margin both times
        assert abs(got["margin_bytes"]) == shown
    with _page(browser, 375, server + "/?model=qwen3%3A8b&gpu=RTX+4060") as page:  # an estimate: its JSON
        assert page.get_attribute("#json-link", "href").startswith("/api/estimate?")


# ---------------------------------------------------------------------------------------------------------
# A slow answer: a plan of Llama 3.1 405B on one RTX 4090 takes some 10 s (`oomkit plan` itself takes as long), the
# page unchanged meanwhile, as if the click had not taken; the sent form now says it is working


def test_a_sent_form_says_it_is_working_until_the_answer(server, browser):  # noqa: F811
    form = "form[data-need=model]"
    state = (f"[document.querySelector('{form} button[type=submit]').textContent, "
             f"document.querySelector('{form}').getAttribute('aria-busy')]")
    with _page(browser, 375, server + "/plan") as page:
        page.fill("#f-model", "qwen3:8b")
        page.fill("#f-gpu", "RTX 4060")
        # the answer held back: a listener after the page's own ones stops the navigation once they have run
        page.evaluate(f"document.querySelector('{form}').addEventListener('submit', ev => ev.preventDefault())")
        page.click(f"{form} button[type=submit]")
        assert page.evaluate(state) == ["Working\u2026", "true"]
    with _page(browser, 375, server + "/plan") as page:
        page.fill("#f-model", "qwen3:8b")
        page.fill("#f-gpu", "RTX 4060")
        with page.expect_navigation():
            page.click(f"{form} button[type=submit]")
        assert page.evaluate(state) == ["Plan", None]
        page.go_back()  # from the back-forward cache or loaded again: the label back either way
        assert page.evaluate(state) == ["Plan", None]
    with _page(browser, 375, server + "/") as page:  # refused before it is sent (too long): nothing is working
        page.evaluate("document.getElementById('f-command').value = 'llama-server ' + 'x'.repeat(20000)")
        page.click("form.card button[type=submit]")
        page.locator(".too-long[role=alert]").wait_for()
        assert page.evaluate("document.querySelector('form.card button[type=submit]').textContent") == "Estimate"


# ---------------------------------------------------------------------------------------------------------
# A second command pasted over the first: the page had filled the model, context, weights and KV fields from the
# first, and refused the second for them ("the model field says 'unsloth/Qwen3-8B-GGUF' and the pasted command says
# 'Qwen/Qwen3-14B'"), fields the user never typed; editing the command now clears the fields still as filled


FIRST = "llama-server -hf unsloth/Qwen3-8B-GGUF:Q4_K_M -c 32768"
SECOND = "vllm serve Qwen/Qwen3-14B --max-model-len 16384"


def test_a_second_command_pasted_over_the_first_is_estimated(server, browser):  # noqa: F811
    with _page(browser, 375, server + "/") as page:
        page.fill("#f-gpu", "RTX 4090")
        page.fill("#f-command", FIRST)
        with page.expect_navigation():
            page.click("form.card button[type=submit]")
        assert page.input_value("#f-model") == "unsloth/Qwen3-8B-GGUF" and page.input_value("#f-ctx") == "32768"
        page.fill("#f-command", SECOND)
        assert page.input_value("#f-model") == "" and page.input_value("#f-ctx") == ""
        with page.expect_navigation():
            page.click("form.card button[type=submit]")
        assert page.locator("[role=alert]").count() == 0
        want = json.loads(_cli("estimate", "--json", "--gpu", "RTX 4090", "--", *SECOND.split()).stdout)
        assert int(page.get_attribute("#stat-total [data-bytes]", "data-bytes")) == want["total_bytes"]
        assert page.input_value("#f-model") == "Qwen/Qwen3-14B" and page.input_value("#f-engine") == "vllm"
    # a field typed over is the user's: kept, and said where it disagrees with the command, as before
    ctx, page = _open(browser, 375)
    try:
        page.goto(server + "/?" + f"gpu=RTX+4090&command={quote(FIRST)}")
        page.fill("#f-ctx", "8192")
        page.fill("#f-command", SECOND)
        assert page.input_value("#f-ctx") == "8192" and page.input_value("#f-model") == ""
        with page.expect_navigation():
            page.click("form.card button[type=submit]")
        assert "the context field says '8192'" in page.locator("[role=alert]").inner_text()
    finally:
        ctx.close()
