"""The hub in a real browser: Playwright driving Debian's Chromium (/usr/bin/chromium, installed by
tools/install_browser.sh; never a Playwright browser download) against `oomkit serve`'s app on a free loopback port.

Every page loads with no console error at a laptop (1280 px) and a phone (390 px) width, with nothing wider than
the phone's screen but the tables' own scrolling; a screenshot of each is kept (in $OOMKIT_SCREENSHOTS when set).
The calculator, filled by hand, shows the API's numbers; a real error from the diagnose corpus, pasted, is placed
at its stage; a shared URL reproduces the page.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
uvicorn = pytest.importorskip("uvicorn")
httpx = pytest.importorskip("httpx")
sync_api = pytest.importorskip("playwright.sync_api")

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
CORPUS = ROOT / "tests" / "fixtures" / "diagnose" / "corpus.jsonl"

PAGES = {
    "calculator": "/?model=llama3.1%3A8b&ctx=32768&vram=24GiB&flags=-fa+on",
    "calculator-empty": "/",
    "calculator-2gpu": "/?model=qwen3%3A32b&ctx=65536&gpu=2x+RTX+3090&kv_type=q8_0&flags=-fa+on",
    "limits": "/limits?model=gemma-3-27b-it",
    "plan": "/plan?model=qwen3%3A8b&gpu=RTX+4060&min_ctx=16384"
            "&fit_command=llama-server+-m+qwen3%3A8b+-c+131072&fit_vram=12GiB",
    "diagnose": "/diagnose",
    "errors": "/errors",
    "error-entry": None,  # the first entry of the index, filled in below
    "kv": "/kv?model=deepseek-r1%3A671b&ctx=32768",
    "machine": "/machine",
}


def _chromium() -> Path:
    if not CHROMIUM.exists():
        subprocess.run([str(ROOT / "tools" / "install_browser.sh")], check=False, timeout=600)
    if not CHROMIUM.exists():
        pytest.skip("Debian's Chromium is not at /usr/bin/chromium and tools/install_browser.sh could not install "
                    "it (needs apt-get as root or passwordless sudo)")
    return CHROMIUM


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    from oomkit.web.app import LOOPBACK_NAMES, create_app

    mp = pytest.MonkeyPatch()
    mp.setenv("HF_HUB_OFFLINE", "1")
    port = _free_port()
    srv = uvicorn.Server(uvicorn.Config(create_app(hosts=LOOPBACK_NAMES), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.time() + 30
    while not srv.started and time.time() < deadline:
        time.sleep(0.05)
    assert srv.started, "the server did not start"
    yield f"http://127.0.0.1:{port}"
    srv.should_exit = True
    thread.join(10)
    mp.undo()


@pytest.fixture(scope="module")
def browser():
    exe = _chromium()
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(exe), args=ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    d = os.environ.get("OOMKIT_SCREENSHOTS")
    path = Path(d) if d else tmp_path_factory.mktemp("screens")
    path.mkdir(parents=True, exist_ok=True)
    return path


@contextmanager
def _page(browser, width: int, url: str | None = None) -> Iterator:
    """A fresh page `width` px wide, opened on `url` when given; it must end with no console or page error."""
    ctx = browser.new_context(viewport={"width": width, "height": 900 if width > 600 else 844},
                              device_scale_factor=1)
    page = ctx.new_page()
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    try:
        if url is not None:
            page.goto(url, wait_until="load")
        yield page
        assert not problems, problems
    finally:
        ctx.close()


@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize("name", list(PAGES))
def test_page_loads_cleanly(server, browser, shots, name, width):
    url = PAGES[name]
    if url is None:
        first = httpx.get(f"{server}/api/errors", timeout=30).json()[0]["id"]
        url = f"/errors/{first}"
    with _page(browser, width) as page:
        resp = page.goto(server + url, wait_until="load", timeout=60000)
        assert resp is not None and resp.status == 200, (resp and resp.status)
        assert page.locator("h1").count() == 1
        assert "Cannot answer" not in page.content()
        # nothing wider than the screen: the wide tables scroll inside their own box
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 1, f"{name} at {width}px is {overflow}px wider than the window"
        page.screenshot(path=str(shots / f"{name}-{width}.png"), full_page=True)


def test_calculator_shows_the_api_numbers(server, browser):
    with _page(browser, 1280, server + "/") as page:
        page.fill("#f-model", "qwen3:14b")
        page.select_option("#f-engine", "llama.cpp")
        page.fill("#f-ctx", "32768")
        page.fill("#f-kv_type", "q8_0")
        page.fill("#f-flags", "-fa on")
        page.fill("#f-vram", "24GiB")
        with page.expect_navigation():
            page.click("form.card button[type=submit]")
        assert "model=qwen3%3A14b" in page.url and "ctx=32768" in page.url
        api = httpx.get(f"{server}/api/estimate", params={"model": "qwen3:14b", "engine": "llama.cpp",
                                                          "ctx": "32768", "kv_type": "q8_0", "flags": "-fa on",
                                                          "vram": "24GiB"}, timeout=60).json()
        for ident, key in (("stat-total", "total_bytes"), ("stat-weights", "weights_bytes"),
                           ("stat-kv", "kv_cache_bytes"), ("stat-compute", "compute_bytes")):
            shown = page.get_attribute(f"#{ident} [data-bytes]", "data-bytes")
            assert int(shown) == api[key], key
        assert int(page.get_attribute("#stat-maxctx [data-value]", "data-value")) == api["max_context"]
        dev = api["devices"][0]
        row = page.locator("#devices tr").nth(1).locator("[data-bytes]")
        assert [int(row.nth(i).get_attribute("data-bytes")) for i in range(2)] == [dev["memory_bytes"],
                                                                                    dev["weights_bytes"]]
        assert page.locator("#verdict").inner_text().startswith("Fits" if api["fits"] else "Does not fit")
        assert "llama-server" in page.locator("#engine-cmd").inner_text()


def test_the_calculator_without_a_gpu(server, browser):
    """No GPU and a 16 GiB host, ticked and typed by hand: llama.cpp's fit picks the context, the page shows the
    API's numbers and weighs them against the host's memory."""
    with _page(browser, 1280, server + "/") as page:
        page.fill("#f-model", "llama3.1:8b")
        page.fill("#f-flags", "-np 1")
        page.check("input[name=cpu_only]")
        page.fill("#f-ram", "16GiB")
        with page.expect_navigation():
            page.click("form.card button[type=submit]")
        assert "cpu_only=1" in page.url and "ram=16GiB" in page.url
        api = httpx.get(f"{server}/api/estimate", params={"model": "llama3.1:8b", "flags": "-np 1", "cpu_only": "1",
                                                          "ram": "16GiB"}, timeout=60).json()
        assert api["engine_view"]["n_ctx"] == 109056  # llama.cpp's fit on a 16 GiB host (docs/commands/estimate.md)
        assert int(page.get_attribute("#stat-total [data-bytes]", "data-bytes")) == api["total_bytes"]
        verdict = page.locator("#verdict")
        assert verdict.inner_text().startswith("Does not fit in the host")
        short = int(verdict.locator("[data-bytes]").nth(1).get_attribute("data-bytes"))
        assert short == api["total_bytes"] - (16 << 30)
        assert page.is_checked("input[name=cpu_only]")


def test_the_model_field_suggests_catalog_names(server, browser):
    """Typing part of a name offers the catalog's names, HF ids, aliases and Ollama tags (from /api/models)."""
    with _page(browser, 1280, server + "/") as page:
        page.fill("#f-model", "llama3.1")
        page.wait_for_function("Array.from(document.querySelectorAll('#models option'))"
                               ".some(o => o.value === 'llama3.1:8b')", timeout=10000)
        values = page.eval_on_selector_all("#models option", "os => os.map(o => o.value)")
        assert "meta-llama/Llama-3.1-8B-Instruct" in values and len(values) < 200


def test_an_uploaded_config(server, browser, tmp_path):
    from oomkit.model import catalog

    config = catalog.lookup("gemma-3-27b-it").config
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    api = httpx.post(f"{server}/api/estimate", json={"config": config, "ctx": "16384", "vram": "24GiB"},
                     timeout=60).json()
    with _page(browser, 390, server + "/?ctx=16384&vram=24GiB") as page:
        with page.expect_navigation():
            page.set_input_files("#f-config", str(path))
        assert int(page.get_attribute("#stat-total [data-bytes]", "data-bytes")) == api["total_bytes"]


def test_a_real_error_pasted_into_diagnose(server, browser, shots):
    rows = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
    row = next(r for r in rows if r["id"] == "vllm-10517-v0-kv-29k")
    with _page(browser, 390, server + "/diagnose") as page:
        page.fill("#f-text", row["text"])
        with page.expect_navigation():
            page.click("form.card button[type=submit]")
        assert page.locator("#stage").inner_text() == row["expected"]["stage"] == "kv_cache"
        assert "vllm" in page.locator("dl.kv").first.inner_text().lower()
        assert page.locator("#fixes li").count() >= 1
        page.screenshot(path=str(shots / "diagnose-result-390.png"), full_page=True)


def test_a_shared_url_reproduces_the_page(server, browser):
    url = server + "/?command=llama-server+-m+gemma-3-27b-it%3AQ4_K_M+-c+65536+-np+2+-fa+on&vram=24GiB%2C24GiB"
    with _page(browser, 1280, url) as page:
        first = page.get_attribute("#stat-total [data-bytes]", "data-bytes")
        assert page.input_value("#f-model") == "gemma-3-27b-it:Q4_K_M"  # the pasted command filled the form
        assert page.input_value("#f-ctx") == "65536"
        with _page(browser, 390, url) as page2:
            assert page2.get_attribute("#stat-total [data-bytes]", "data-bytes") == first


def test_the_error_index_filters_as_you_type(server, browser):
    with _page(browser, 1280, server + "/errors") as page:
        total = page.locator("ul.errs li").count()
        page.fill("#errfilter", "vllm kv")
        visible = page.locator("ul.errs li:visible").count()
        want = len(httpx.get(f"{server}/api/errors", params={"q": "vllm kv"}, timeout=30).json())
        assert 0 < visible == want < total


def test_the_machine_page_refreshes(server, browser):
    with _page(browser, 390, server + "/machine") as page:
        page.wait_for_function("document.getElementById('updated').textContent !== 'on load'", timeout=10000)
