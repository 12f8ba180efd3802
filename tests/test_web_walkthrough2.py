"""The hub walked as a new user walks it, offline: a consumer card, a pasted engine command, a context that does not
fit, a field changed after a paste, a paste too long for a URL, a log over the limit. Each case is something the walk
found wrong; every figure the page shows is checked against the CLI's own JSON for the same input (the page computes
nothing of its own). The browser cases run as tests/test_browser.py runs them (Debian's Chromium, skipped where it is
absent; one browser for the module).
"""

from __future__ import annotations

import re

import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

from oomkit.web import api  # noqa: E402
from oomkit.web.app import create_app  # noqa: E402

# llama3.1:8b at its full 131,072-token context on a 12 GB RTX 3060: llama.cpp's --fit moves layers to the CPU, so
# `oomkit check` says "does not fit: llama.cpp runs these settings only split with the CPU, with N MiB left"
SPLIT = {"model": "llama3.1:8b", "ctx": "131072", "gpu": "RTX 3060 12GB"}
VLLM = "vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 32768"
LLAMA = "llama-server -hf unsloth/Qwen3-8B-GGUF:Q4_K_M -c 32768 -fa on"


@pytest.fixture(scope="module")
def client():
    mp = pytest.MonkeyPatch()
    mp.setenv("HF_HUB_OFFLINE", "1")
    yield TestClient(create_app())
    mp.undo()


def _verdict(html: str) -> str:
    m = re.search(r'id="verdict">(.*?)</div>', html, re.S)
    assert m, "no verdict on the page"
    return m.group(1)


def _total(html: str) -> int:
    return int(re.search(r'id="stat-total"><b><span data-bytes="(\d+)"', html).group(1))


def test_a_split_run_is_said_as_check_says_it(client):
    """The page read "Does not fit: -1.17 GiB short on the fullest GPU" where `oomkit check` says llama.cpp runs
    the settings only split with the CPU, with 1,196 MiB left: the verdict now follows check's rule and its bytes."""
    checked = api.check_fit(SPLIT).data()
    assert checked["fits"] is False and checked["stage"] == "engine" and checked["margin_bytes"] > 0
    r = client.get("/", params=SPLIT)
    assert r.status_code == 200
    v = _verdict(r.text)
    assert "runs these settings only split with the CPU" in v and "short" not in v
    assert f'data-bytes="{checked["margin_bytes"]}"' in v  # the bytes left, as check --json gives them
    assert "--fit" in v  # the engine's reason, not the GPU-size note the estimate lists first
    assert _total(r.text) == api.estimate(SPLIT).data()["total_bytes"]


def test_a_gpu_name_sold_in_several_sizes_is_said_to_be_assumed(client):
    """An M3 Max is sold with 36 to 128 GB: the size taken sat among the notes at the foot of the page."""
    html = client.get("/", params={"model": "llama3.3:70b", "engine": "ollama", "gpu": "M3 Max"}).text
    assumed = re.findall(r'<p class="note assumed">Assumed: (.*?)</p>', html)
    assert len(assumed) == 1 and "taken as 36 GB" in assumed[0]
    assert html.index('id="verdict"') < html.index('class="note assumed"') < html.index('id="stat-total"')


def test_a_pasted_command_of_another_engine_is_read_with_the_menu_left_as_it_was(client):
    """The engine menu always sends its choice (llama.cpp): a pasted `vllm serve` or `ollama run` was refused with
    "--engine llama.cpp and the vllm serve command (vllm) both say the engine"."""
    for command, gpu in ((VLLM, "RTX 4090"), ("ollama run llama3.1:8b", "RTX 4060 Laptop")):
        r = client.get("/", params={"engine": "llama.cpp", "gpu": gpu, "command": command})
        assert r.status_code == 200, r.text[-400:]
        assert _total(r.text) == api.estimate({"gpu": gpu, "command": command}).data()["total_bytes"]
    # the JSON API keeps the CLI's rule: two engines named is a refusal there
    assert client.get("/api/estimate", params={"engine": "llama.cpp", "command": VLLM}).status_code == 400


def test_a_pasted_command_sent_again_with_the_fields_it_filled(client):
    """The paste fills the form; sending that form again sent both, and the CLI refuses a model with a command
    ("give either MODEL with options, or an engine command after --, not both"); llama.cpp's parallel -1 (auto) was
    put in the parallel field, which then refused it."""
    first = client.get("/", params={"gpu": "RTX 3060", "command": LLAMA})
    assert first.status_code == 200
    filled = dict(re.findall(r'<input id="f-\w+" name="(\w+)" type="text" value="([^"]*)"', first.text))
    assert filled["model"] == "unsloth/Qwen3-8B-GGUF" and filled["ctx"] == "32768" and filled["parallel"] == ""
    again = client.get("/", params={**{k: v for k, v in filled.items() if v}, "engine": "llama.cpp",
                                    "command": LLAMA})
    assert again.status_code == 200 and _total(again.text) == _total(first.text)
    changed = client.get("/", params={**{k: v for k, v in filled.items() if v}, "ctx": "8192", "command": LLAMA})
    assert changed.status_code == 400
    alert = re.search(r'role="alert">(.*?)</div>', changed.text).group(1)
    assert "the context field says &#x27;8192&#x27; and the pasted command says &#x27;32768&#x27;" in alert
    assert "clear the command box" in alert
    assert 'name="ctx" type="text" value="8192"' in changed.text  # the form as sent, to correct


def test_the_same_inputs_links_carry_the_pasted_command(client):
    """The calculator's "limits and context tables" link after a paste carried only the fields the command filled
    (model, engine, ctx, kv_type): its flags were lost, so the tables were those of another run (here -ub 4096,
    whose larger compute buffer lowers the largest context on an 8 GB card)."""
    command = "llama-server -m qwen3:8b -c 32768 -ub 4096 -b 4096"
    html = client.get("/", params={"command": command, "gpu": "RTX 4090"}).text
    href = re.search(r'<a href="(/limits\?[^"]*)">limits and context tables', html).group(1).replace("&amp;", "&")
    limits = client.get(href)
    assert limits.status_code == 200 and 'id="for-command"' in limits.text
    table = api.table({"command": command, "gpu": "RTX 4090"}).data()  # `oomkit table --json -- COMMAND`
    fields = api.table({"model": "qwen3:8b", "engine": "llama.cpp", "ctx": "32768", "gpu": "RTX 4090"}).data()
    want = table["limits"][0]["max_context"]["f16"]
    assert want != fields["limits"][0]["max_context"]["f16"]  # the flags matter to this figure
    first_row = re.search(r'<table id="limits">.*?</tr><tr>(.*?)</tr>', limits.text, re.S).group(1)
    assert f'data-value="{want}"' in first_row
    kv = re.search(r'<a href="(/kv\?[^"]*)">the KV cache explained', html).group(1).replace("&amp;", "&")
    assert "command=" in kv and client.get(kv).status_code == 200


def test_the_kv_page_reads_a_pasted_command_of_another_engine(client):
    """/kv's form is the calculator's, with the engine menu: a `vllm serve` pasted there was refused the same way."""
    r = client.get("/kv", params={"engine": "llama.cpp", "command": VLLM})
    assert r.status_code == 200 and 'role="alert"' not in r.text
    r = client.get("/limits", params={"engine": "llama.cpp", "command": VLLM})
    assert r.status_code == 200 and 'role="alert"' not in r.text


def test_a_log_over_the_limit_sent_from_the_page_gets_the_page(client):
    """A 22 MB paste into /diagnose answered the API's JSON ({"error": ...}) in the browser's window."""
    r = client.post("/diagnose", content=b"text=" + b"x" * (22 * 1000 * 1000),
                    headers={"content-type": "application/x-www-form-urlencoded"})
    assert r.status_code == 413 and r.headers["content-type"].startswith("text/html")
    assert 'role="alert"' in r.text and "larger than 20 MB" in r.text and '<a class="brand" href="/">' in r.text
    api_r = client.post("/api/diagnose", content=b"x" * (22 * 1000 * 1000),
                        headers={"content-type": "application/json"})
    assert api_r.status_code == 413 and "20 MB" in api_r.json()["error"]


def test_the_long_fields_say_their_limit(client):
    html = client.get("/").text
    assert 'id="f-command" name="command" rows="2"' in html
    assert f'data-max="{api.MAX_COMMAND_CHARS}"' in html and f'data-max="{api.MAX_FIELD_CHARS}"' in html
    assert f'data-max="{api.MAX_LOG_BYTES}"' in client.get("/diagnose").text


# ---------------------------------------------------------------------------------------------------------
# In the browser

from tests.test_browser import _page, browser, server  # noqa: E402,F401  (the same server and Chromium)


def _open(browser, width: int = 1280):  # noqa: F811
    """A page whose 4xx answers are expected (tests/test_browser.py's _page fails on their console line)."""
    ctx = browser.new_context(viewport={"width": width, "height": 900 if width > 600 else 844})
    return ctx, ctx.new_page()


def test_pasting_a_vllm_command_into_a_fresh_form(server, browser):  # noqa: F811
    with _page(browser, 1280, server + "/") as page:
        page.fill("#f-command", VLLM)
        page.fill("#f-gpu", "RTX 4090")
        with page.expect_navigation():
            page.click("form.card button[type=submit]")
        assert page.locator("[role=alert]").count() == 0
        want = api.estimate({"gpu": "RTX 4090", "command": VLLM}).data()
        assert int(page.get_attribute("#stat-total [data-bytes]", "data-bytes")) == want["total_bytes"]
        assert page.input_value("#f-engine") == "vllm" and page.input_value("#f-model") == "Qwen/Qwen2.5-7B-Instruct"
        # sent again as it stands (the fields the paste filled): the same figures
        with page.expect_navigation():
            page.click("form.card button[type=submit]")
        assert int(page.get_attribute("#stat-total [data-bytes]", "data-bytes")) == want["total_bytes"]


def test_a_field_changed_after_a_paste_then_back(server, browser):  # noqa: F811
    ctx, page = _open(browser)
    try:
        page.goto(server + "/?" + "gpu=RTX+3060&command=" + LLAMA.replace(" ", "+").replace(":", "%3A"))
        before = page.get_attribute("#stat-total [data-bytes]", "data-bytes")
        page.fill("#f-ctx", "8192")
        with page.expect_navigation():
            page.press("#f-ctx", "Enter")
        assert "the context field says '8192'" in page.locator("[role=alert]").inner_text()
        page.go_back()
        assert page.get_attribute("#stat-total [data-bytes]", "data-bytes") == before
        assert page.input_value("#f-ctx") == "32768"
    finally:
        ctx.close()


def test_a_paste_too_long_for_a_url_is_said_in_the_page(server, browser):  # noqa: F811
    """A 100 KB command sent as a URL got uvicorn's bare "Invalid HTTP request received."; 3 MB, a blank page."""
    ctx, page = _open(browser, 375)
    try:
        page.goto(server + "/plan")
        page.evaluate("document.getElementById('f-fit_command').value = 'llama-server -m qwen3:8b ' + "
                      "'x'.repeat(100000)")
        page.click("form[data-need=fit_command] button")
        alert = page.locator(".too-long[role=alert]")
        alert.wait_for()
        assert "100,025 characters" in alert.inner_text() and f"{api.MAX_COMMAND_CHARS:,}" in alert.inner_text()
        assert page.url == server + "/plan"  # nothing sent
        assert page.evaluate("document.activeElement.id") == "f-fit_command"
        page.evaluate("document.getElementById('f-fit_command').value = 'ollama run llama3.1:8b'")
        page.fill("#f-fit_gpu", "RTX 4060 Laptop")
        with page.expect_navigation():
            page.click("form[data-need=fit_command] button")
        assert page.locator("#fit-verdict").count() == 1 and page.locator(".too-long").count() == 0
    finally:
        ctx.close()


def test_the_split_verdict_on_a_phone(server, browser):  # noqa: F811
    url = server + "/?model=llama3.1%3A8b&ctx=131072&gpu=RTX+3060+12GB"
    with _page(browser, 375, url) as page:
        text = page.locator("#verdict").inner_text()
        assert text.startswith("Does not fit: llama.cpp runs these settings only split with the CPU")
        assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 1
