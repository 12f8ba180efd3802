"""The hub walked by new users, sixth time: a llama-server that died on an 8 GB laptop GPU, its log pasted; a
command on that GPU where no context fits; a fit that changes three flags; a screen reader and a keyboard; and the
MCP server's tools called with odd arguments. Each case failed before; each figure or message is read through the
CLI (its --json or its text) or the API (web/api.py runs the CLI's code) for the same input, never copied. The
browser cases run as tests/test_browser.py runs them (Debian's Chromium, skipped where it is absent).
"""

from __future__ import annotations

import asyncio
import html
import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import quote

import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

from oomkit.web import api  # noqa: E402
from oomkit.web.app import create_app  # noqa: E402
from tests.test_browser import _page, browser, server  # noqa: E402,F401  (the same server and Chromium)


@pytest.fixture(scope="module")
def client():
    mp = pytest.MonkeyPatch()
    mp.setenv("HF_HUB_OFFLINE", "1")
    yield TestClient(create_app())
    mp.undo()


def _cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "oomkit", *args], capture_output=True, text=True, input=stdin,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})


def _cli_json(*args: str, stdin: str | None = None) -> dict:
    out = _cli(*args, stdin=stdin)
    assert out.stdout, out.stderr
    return json.loads(out.stdout)


# ---------------------------------------------------------------------------------------------------------
# A llama-server that died on an 8 GB laptop GPU, its command and log pasted into /diagnose. The page's "Estimate"
# link and each fix's link went to the calculator with the model alone: no build (the newest's defaults: n_ctx
# 40960, 4 sequences, every layer on the GPU, where b6100 runs 4096, 1 and -ngl 0), no weights format, no layers, no
# GPU ("Fit unknown"): an estimate of another run than the one that failed. They now carry what the diagnosis
# estimated the log with (diagnose/predict.py): the build, the file type, -ngl and each GPU's free memory; a fix's
# -ngl replaces the log's. The lines are llama.cpp's own messages (llama_model_load_from_file_impl's "using device
# %s (%s) - %zu MiB free", load_tensors' "offloaded %d/%d layers to GPU", ggml-cuda's cudaMalloc failure); the
# model, build and free memory are this walk's input, not figures compared against.

LOG = """$ llama-server -m ~/models/Qwen3-14B-Q4_K_M.gguf -ngl 99
ggml_cuda_init: found 1 CUDA devices:
  Device 0: NVIDIA GeForce RTX 4060 Laptop GPU, compute capability 8.9, VMM: yes
build: 6100 (1d72c841) with cc (Ubuntu 13.3.0-6ubuntu2~24.04) 13.3.0 for x86_64-linux-gnu
llama_model_load_from_file_impl: using device CUDA0 (NVIDIA GeForce RTX 4060 Laptop GPU) - 7805 MiB free
llama_model_loader: loaded meta data with 32 key-value pairs and 443 tensors from /home/u/models/Qwen3-14B-Q4_K_M.gguf (version GGUF V3 (latest))
print_info: file type   = Q4_K - Medium
load_tensors: offloading 40 repeating layers to GPU
load_tensors: offloading output layer to GPU
load_tensors: offloaded 41/41 layers to GPU
ggml_backend_cuda_buffer_type_alloc_buffer: allocating 8148.38 MiB on device 0: cudaMalloc failed: out of memory
alloc_tensor_range: failed to allocate CUDA0 buffer of size 8544195707
llama_model_load: error loading model: unable to allocate CUDA0 buffer
main: exiting due to model loading error
"""


def _estimate_cli(d: dict, *flags: str) -> dict:
    """`oomkit estimate` of the model the log names with the settings `oomkit diagnose --json` read from it."""
    p = d["prediction"]
    free = ",".join(f"{v // (1 << 20)}MiB" for v in d["buffers"]["device_free"].values())
    return _cli_json("estimate", p["model"], "--engine", "llama.cpp", "--engine-version", d["engine_version"],
                     "--quant", p["settings"]["quant"], "--vram", free, *flags, "--json")


def test_a_dead_llama_server_log_leads_to_the_run_that_failed(server, browser):  # noqa: F811
    d = _cli_json("diagnose", "--json", stdin=LOG)
    assert d["engine_version"] == "b6100" and d["settings"]["n_gpu_layers"] == 41  # as the log printed them
    assert d["prediction"]["fits"] is False  # the diagnosis's own estimate of that run: it does not fit
    ngl = d["settings"]["n_gpu_layers"]
    fix = next(" ".join(f["flags"]) for f in d["fixes"] if f.get("flags") and f["flags"][0] == "-ngl")
    with _page(browser, 375, server + "/diagnose") as page:
        page.fill("#f-text", LOG)
        with page.expect_navigation():
            page.click("form.card button[type=submit]")
        note = page.locator("#to-estimate").inner_text()
        assert "b6100" in note and "7,805 MiB" in note and "the hardware you give there" not in note, note
        fix_href = next(h for h in page.eval_on_selector_all("a.fix-estimate", "as => as.map(a => a.href)")
                        if "-ngl" in h)
        with page.expect_navigation():
            page.click("#to-estimate a")
        assert page.input_value("#f-engine_version") == d["engine_version"]
        assert page.input_value("#f-flags") == f"-ngl {ngl}"
        want = _estimate_cli(d, "-ngl", str(ngl))
        assert int(page.get_attribute("#stat-total [data-bytes]", "data-bytes")) == want["total_bytes"]
        assert want["fits"] is False and "bad" in page.get_attribute("#verdict", "class").split()
        page.goto(fix_href)  # the fix: its -ngl in the log's place, not beside it
        assert page.input_value("#f-flags") == fix
        want = _estimate_cli(d, *fix.split())
        assert int(page.get_attribute("#stat-total [data-bytes]", "data-bytes")) == want["total_bytes"]
        assert ("ok" in page.get_attribute("#verdict", "class").split()) is want["fits"]


def test_a_log_without_a_model_oomkit_knows_keeps_its_old_link(client):
    """Where the diagnosis made no estimate (the model is no catalog name), nothing is carried but what was before."""
    text = LOG.replace("Qwen3-14B-Q4_K_M", "my-own-finetune-Q4_K_M")
    d = api.diagnose_text({"text": text}).data()
    assert d["prediction"] is None
    assert 'id="to-estimate"' not in client.post("/diagnose", data={"text": text}).text


# ---------------------------------------------------------------------------------------------------------
# The same log pasted into the calculator's command box: the answer was "invalid argument: ggml_cuda_init: (not a
# llama-server flag; oomkit's own options go before the --)", the CLI's advice about a `--` the page has not. The
# page now says the box holds a log and sends it to Diagnose with one button; a command continued over lines with
# backslashes is still one command.


def _alert(page: str) -> str:
    m = re.search(r'role="alert">(.*?)</div>', page, re.S)
    assert m, "no error on the page"
    return html.unescape(re.sub(r"<[^>]+>", "", m.group(1)))


def test_a_log_pasted_as_the_command_goes_to_diagnose(server, browser):  # noqa: F811
    d = _cli_json("diagnose", "--json", stdin=LOG)
    ctx = browser.new_context(viewport={"width": 375, "height": 844})  # the first answer is a 400: no _page
    try:
        page = ctx.new_page()
        page.goto(server + "/")
        page.fill("#f-command", LOG)
        with page.expect_navigation():
            page.click("form.card button[type=submit]")
        alert = page.locator("[role=alert]").inner_text()
        assert f"holds {len(LOG.strip().splitlines())} lines, not one engine command" in alert, alert
        assert "before the --" not in alert
        page.keyboard.press("Tab")  # from the answer, the button is next
        assert page.evaluate("document.activeElement.textContent") == "Diagnose this log"
        with page.expect_navigation():
            page.keyboard.press("Enter")
        assert page.locator("#stage").inner_text() == d["stage"]
        assert page.input_value("#f-text").strip() == LOG.strip()
    finally:
        ctx.close()


def test_a_command_over_several_lines_is_one_command(client):
    command = "llama-server -hf unsloth/Qwen3-8B-GGUF -c 8192 \\\n  -ngl 99"
    page = client.get("/", params={"command": command, "gpu": "RTX 4060 Laptop"})
    want = _cli_json("estimate", "--json", "--gpu", "RTX 4060 Laptop", "--", *command.replace("\\\n", " ").split())
    assert page.status_code == 200 and 'id="to-diagnose"' not in page.text
    assert f'data-bytes="{want["total_bytes"]}"' in page.text


@pytest.mark.parametrize("flag, field", [("--vram", "VRAM per GPU"), ("--gpu", "GPU"), ("--foo", None)])
def test_a_flag_the_program_lacks_is_quoted_as_typed(client, flag, field):
    """oomkit's --vram typed inside a pasted llama-server command: the page read "invalid argument: VRAM per GPU
    (...)", the user's flag renamed to a field's label; it now quotes the flag, as the CLI does, and names the field."""
    command = f"llama-server -m qwen3:8b {flag} 0"
    cli = _cli_error("estimate", "--", *command.split())
    head = cli.split(" (")[0]
    assert head == f"invalid argument: {flag}"
    alert = _alert(client.get("/", params={"command": command}).text)
    where = f"the {field} field above gives it" if field else "oomkit's own settings go in the fields above"
    assert alert == f"Cannot answer: {head} (not a llama-server flag; {where})", alert


# ---------------------------------------------------------------------------------------------------------
# No context fits: every layer of Qwen3-14B Q4_K_M on the 8 GB laptop GPU. `oomkit check` says "largest context that
# fits with these settings: none"; the page's figure was a blank "-" (as where no GPU is given)

FULL = "llama-server -hf unsloth/Qwen3-14B-GGUF:Q4_K_M -c 32768 -ngl 99"


def test_no_context_that_fits_reads_none(client):
    said = _cli("check", "--gpu", "RTX 4060 Laptop", "--", *FULL.split())
    assert said.returncode == 1, said.stderr
    assert "largest context that fits with these settings: none" in said.stdout
    page = client.get("/", params={"command": FULL, "gpu": "RTX 4060 Laptop"}).text
    cell = re.search(r'id="stat-maxctx"><b><span data-value="">([^<]*)</span>', page)
    assert cell and cell.group(1) == "none"
    page = client.get("/", params={"command": FULL}).text  # no GPU given: unknown, not none
    assert re.search(r'id="stat-maxctx"><b><span data-value="">([^<]*)</span>', page).group(1) == "-"


# ---------------------------------------------------------------------------------------------------------
# A fit of three changes (q4_0 K, q4_0 V, a smaller weight format): the page's table put the saving of all three on
# the first row ("cache_type_k f16 q4_0 saves 6.31 GiB"), as if the K cache type alone saved it; `oomkit fit` says
# "together they save ..." of them all. The saving is now one cell over the rows, "together".


def test_the_saving_of_several_changes_is_theirs_together(client):
    cli = _cli("fit", "--gpu", "RTX 4060 Laptop", "--", *FULL.split())
    together = re.search(r"together they save (\S+ \S+) on the GPUs", cli.stdout).group(1)
    fit = _cli_json("fit", "--json", "--gpu", "RTX 4060 Laptop", "--", *FULL.split())["fit"]
    n = len(fit["changes"])
    assert n >= 2
    page = client.get("/plan", params={"fit_command": FULL, "fit_gpu": "RTX 4060 Laptop"}).text
    cells = re.findall(r'<td rowspan="(\d+)">(.*?)</td>', page)
    assert len(cells) == 1 and int(cells[0][0]) == n
    assert html.unescape(re.sub(r"<[^>]+>", "", cells[0][1])) == f"{together} together"
    rows = re.findall(r"<tr><td class=\"l\">", page)
    assert len(rows) == n


# ---------------------------------------------------------------------------------------------------------
# A screen reader: the diagnose page's and an error entry's sections were h3 under the page's h1 (a level skipped);
# the menu marked the page shown by colour only (no aria-current); every "copy" button of a plan read "copy, button"
# with nothing of what it copies; the green of "Fits" and of a limit that fits was 3.9:1 and 4.4:1 against its
# background, and "does not fit" grey 2.6:1, under the 4.5:1 WCAG AA asks of text


_HEADINGS = "[...document.querySelectorAll('h1,h2,h3,h4')].map(h => +h.tagName[1])"


@pytest.mark.parametrize("path", ["/diagnose?text=" + quote(LOG), "/errors/ggml_cuda_malloc",
                                  "/plan?fit_command=" + quote(FULL) + "&fit_gpu=RTX+4060+Laptop"])
def test_headings_go_down_one_level_at_a_time(server, browser, path):  # noqa: F811
    with _page(browser, 1280, server + path) as page:
        levels = page.evaluate(_HEADINGS)
        assert levels[0] == 1 and len(levels) > 2
        assert all(b <= a + 1 for a, b in zip(levels, levels[1:], strict=False)), levels


def test_the_menu_says_which_page_is_shown(server, browser):  # noqa: F811
    for path, label in (("/", "Calculator"), ("/plan", "Plan / fit"), ("/diagnose", "Diagnose"),
                        ("/errors/ggml_cuda_malloc", "Error index")):
        with _page(browser, 390, server + path) as page:
            current = page.eval_on_selector_all("header nav a[aria-current=page]", "as => as.map(a => a.textContent)")
            assert current == [label], (path, current)


def test_each_copy_button_names_the_command_it_copies(server, browser):  # noqa: F811
    with _page(browser, 390, server + "/plan?model=qwen3%3A8b&gpu=RTX+4060") as page:
        pairs = page.eval_on_selector_all(
            "button[data-copy]", "bs => bs.map(b => [b.getAttribute('aria-describedby'), b.getAttribute('data-copy'),"
                                 " document.getElementById(b.getAttribute('aria-describedby')).textContent])")
    assert len(pairs) > 1
    assert all(a == c and text.split()[0] in ("llama-server", "llama-cli") for a, c, text in pairs), pairs


_CONTRAST = """sel => [...document.querySelectorAll(sel)].map(el => {
  const rgb = s => s.match(/[\\d.]+/g).map(Number);
  const lum = c => { const a = c.slice(0, 3).map(v => { v /= 255; return v <= 0.03928 ? v / 12.92
                     : Math.pow((v + 0.055) / 1.055, 2.4); }); return 0.2126 * a[0] + 0.7152 * a[1] + 0.0722 * a[2]; };
  let b = el; while (b && rgb(getComputedStyle(b).backgroundColor)[3] === 0) b = b.parentElement;
  const f = lum(rgb(getComputedStyle(el).color)), g = lum(rgb(getComputedStyle(b || document.body).backgroundColor));
  return (Math.max(f, g) + 0.05) / (Math.min(f, g) + 0.05);
})"""


@pytest.mark.parametrize("path, selector", [("/?model=qwen3%3A8b&gpu=RTX+4060", "#verdict.ok"),
                                            ("/limits?model=qwen3%3A8b", "td.yes"),
                                            ("/limits?model=gemma-3-27b-it", "td.nofit")])
def test_the_verdicts_colours_are_readable(server, browser, path, selector):  # noqa: F811
    with _page(browser, 1280, server + path) as page:
        ratios = page.evaluate(_CONTRAST, selector)
    assert ratios and min(ratios) >= 4.5, ratios


# ---------------------------------------------------------------------------------------------------------
# The MCP server's tools: a bad argument was answered in the CLI's words, naming options and a MODEL argument the
# tool does not have ("--vram 24: 24 what?", "give its memory with --vram SIZE", "no MODEL given (try: oomkit estimate
# llama3.1:8b)", "give either MODEL with options, or an engine command after --"); the tool's caller passes `vram`,
# `model`, `command`. The message is the CLI's otherwise; an engine's own flags in it stay as the engine spells them.


def _tool_error(name: str, args: dict) -> str:
    pytest.importorskip("mcp")
    from oomkit.web.mcp_server import build_server  # the mcp extra: only where it is installed

    async def call() -> str:
        try:
            await build_server().call_tool(name, args)
        except Exception as e:  # noqa: BLE001  (mcp's ToolError)
            return str(e)
        raise AssertionError(f"{name} {args} answered")

    # in a thread of its own: the browser cases' Playwright keeps an event loop running in this one
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, call()).result()


def _cli_error(*args: str) -> str:
    out = _cli(*args)
    assert out.returncode == 2, out.stdout
    return out.stderr.strip().removeprefix("oomkit: error: ")


@pytest.mark.parametrize("tool, args, cli, said", [
    ("estimate", {"model": "qwen3:8b", "vram": "24"}, ("estimate", "qwen3:8b", "--vram", "24"),
     lambda m: m.replace("--vram 24:", "vram 24:")),
    ("check", {"model": "qwen3:8b", "gpu": "RTX 9999"}, ("check", "qwen3:8b", "--gpu", "RTX 9999"),
     lambda m: m.replace("give its memory with --vram SIZE", 'give its memory in vram (e.g. "8GiB")')),
    ("estimate", {"model": "qwen3:8b", "command": "llama-server -m qwen3:8b"},
     ("estimate", "qwen3:8b", "--", "llama-server", "-m", "qwen3:8b"),
     lambda m: m.replace("MODEL with options, or an engine command after --", "model with options, or command")),
])
def test_a_tool_error_names_the_tools_arguments(tool, args, cli, said):
    message = _tool_error(tool, args)
    want = said(_cli_error(*cli))
    assert message.endswith(want), (message, want)
    assert "--vram" not in message and "MODEL" not in message


def test_a_tool_without_a_model_says_which_arguments_give_one():
    estimate, plan = _tool_error("estimate", {}), _tool_error("plan", {"model": ""})
    assert "no MODEL given" in _cli_error("estimate")  # the CLI's words, for its MODEL argument
    assert estimate.endswith("no model given: give model (a catalog name, an Ollama tag or an HF id, e.g. qwen3:8b) "
                             "or command (a whole engine command line)")
    assert plan.endswith("no model given: give model (a catalog name, an Ollama tag or an HF id, e.g. qwen3:8b)")


def test_an_engine_flag_in_a_tool_error_is_the_engines():
    command = "vllm serve Qwen/Qwen3-8B --max-model-len abc"
    message = _tool_error("estimate", {"command": command})
    assert message.endswith(_cli_error("estimate", "--", *command.split()))
    assert "--max-model-len" in message


def test_check_without_a_model_is_refused_as_estimate_is():
    """`oomkit check` without MODEL runs its built-in example (llama3.1:8b, its --help says so); the check tool called
    with no model answered that example's verdict, a model the caller never named, where estimate says none was
    given. The tool now says so, as estimate does."""
    assert _cli_json("check", "--json", "--vram", "8GiB")["estimate"]["model"]["name"].startswith("Llama 3.1 8B")
    for args in ({}, {"model": " ", "vram": "8GiB"}):
        assert _tool_error("check", args) == _tool_error("estimate", args).replace("tool estimate", "tool check")


# ---------------------------------------------------------------------------------------------------------
# The diagnose page labelled the error index's id of the message "message" (ggml_cuda_malloc), where `oomkit
# diagnose` calls the log's own line "message"; the page shows that line as "evidence", and the id as what it is.


def test_the_index_id_is_not_called_the_message(client):
    said = _cli("diagnose", stdin=LOG).stdout
    line = re.search(r"^message +line \d+: (.*)$", said, re.M).group(1)
    page = client.post("/diagnose", data={"text": LOG}).text
    d = api.diagnose_text({"text": LOG}).data()
    assert f"<dt>in the error index</dt><dd><a href=\"/errors/{d['signature']}\">" in page
    assert "<dt>message</dt>" not in page
    assert f"<dt>evidence</dt><dd><code>{html.escape(line)}</code>" in page


# ---------------------------------------------------------------------------------------------------------
# Each device's bar is an image to a screen reader (role=img), which hides its parts' titles: every bar read "memory
# use" and nothing else. Its label now says the parts and what is free or over, as `oomkit estimate --json` has them.


@pytest.mark.parametrize("gpu, flags", [("RTX 4060", ""), ("RTX 3050 4GB", "-fit off -ngl 99")])  # room; over
def test_a_bar_says_its_parts_to_a_screen_reader(server, browser, gpu, flags):  # noqa: F811
    from oomkit.web.svg import PARTS, gib  # the page's own GiB format

    cli = _cli_json("estimate", "qwen3:8b", "--gpu", gpu, *flags.split(), "--json")
    dev = cli["devices"][0]
    used = sum(dev[k] for k, _, _ in PARTS)
    said = [f"{label} {gib(dev[k])}" for k, label, _ in PARTS if dev[k] > 0]
    said.append(f"free {gib(dev['memory_bytes'] - used)}" if dev["memory_bytes"] >= used
                else f"{gib(used - dev['memory_bytes'])} over its memory")
    with _page(browser, 390, server + "/?model=qwen3%3A8b&gpu=" + quote(gpu) + "&flags=" + quote(flags)) as page:
        label = page.get_attribute(f".bar[data-device={dev['id']}] svg", "aria-label")
    assert label == "memory use: " + ", ".join(said)
    assert ("over its memory" in label) is (flags != "")


# ---------------------------------------------------------------------------------------------------------
# Llama 3.3 70B on 2x H100 with vLLM and no -tp: the page said "Does not fit: 57.16 GiB short on the fullest GPU"
# and nothing of why; that vLLM uses one of the two GPUs and refuses at the weights ("Use more GPUs
# (--tensor-parallel-size ...)") stood among the notes at the foot of the page. `oomkit check` says it under its
# verdict ("fails first at the weights: vllm refuses to start: ..."); the page now says the same line there.


@pytest.mark.parametrize("model, engine, gpu", [("meta-llama/Llama-3.3-70B-Instruct", "vllm", "2x H100"),
                                                ("qwen3:32b", "sglang", "RTX 4090")])
def test_why_it_is_short_is_under_the_verdict(client, model, engine, gpu):
    said = _cli("check", model, "--engine", engine, "--gpu", gpu)
    assert said.returncode == 1, said.stderr
    line = next(x.strip() for x in said.stdout.splitlines() if x.strip().startswith("fails first"))
    page = client.get("/", params={"model": model, "engine": engine, "gpu": gpu}).text
    m = re.search(r'<div class="verdict bad" id="verdict">Does not fit: .*? short on the fullest GPU'
                  r'<br><small id="fails-first">(.*?)</small></div>', page)
    assert m and html.unescape(m.group(1)) == line, line
    if engine == "vllm":
        assert "--tensor-parallel-size" in line


def test_a_shortfall_without_the_engines_words_keeps_the_plain_verdict(client):
    """llama.cpp names no failure of its own here (every layer on a 4 GB card, --fit off): `oomkit check` says
    where it fails first in its own words, and the page, as before, only how far short it is."""
    p = {"model": "qwen3:8b", "gpu": "RTX 3050 4GB", "flags": "-fit off -ngl 99"}
    assert api.check_fit(p).obj.engine_failure is None
    page = client.get("/", params=p).text
    assert 'id="fails-first"' not in page and "short on the fullest GPU" in page


# ---------------------------------------------------------------------------------------------------------
# The plan tool's answer for Llama 3.3 70B on 2x H100 says "system RAM not checked for the offloaded options: ...
# give --ram SIZE to keep only what fits it", and the tool took no `ram` (nor `reserve` / `headroom`, which the web
# API's plan takes); the check tool took no `engine_version`, which estimate takes. Each now takes them, and
# answers as the CLI does with the same options.


def _tool_json(name: str, args: dict) -> dict:
    pytest.importorskip("mcp")
    from oomkit.web.mcp_server import build_server  # the mcp extra: only where it is installed

    async def call() -> dict:
        r = await build_server().call_tool(name, args)
        content = r.content if hasattr(r, "content") else r  # mcp 2's CallToolResult, mcp 1's list
        return json.loads("".join(c.text for c in content if getattr(c, "type", "") == "text"))

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, call()).result()


def test_the_plan_tool_takes_the_ram_its_notes_ask_for():
    model, gpu = "meta-llama/Llama-3.3-70B-Instruct", "2x H100 SXM"  # one size: no note of the size taken
    unchecked = _tool_json("plan", {"model": model, "engine": "vllm", "gpu": gpu})
    assert any("give --ram SIZE" in n for n in unchecked["plan"]["notes"])
    for extra in ({"ram": "2GiB", "headroom": "128MiB"}, {"reserve": "1GiB"}):
        got = _tool_json("plan", {"model": model, "engine": "vllm", "gpu": gpu, **extra})
        flags = [x for k, v in extra.items() for x in (f"--{k}", v)]
        assert got == _cli_json("plan", model, "--engine", "vllm", "--gpu", gpu, *flags, "--json"), extra
    got = _tool_json("plan", {"model": model, "engine": "vllm", "gpu": gpu, "ram": "2GiB"})
    assert len(got["plan"]["options"]) < len(unchecked["plan"]["options"])  # the option needing 4.3 GiB: gone


def test_the_check_tool_takes_an_engine_version():
    got = _tool_json("check", {"model": "qwen3:8b", "vram": "8GiB", "engine_version": "b6100"})
    want = _cli_json("check", "qwen3:8b", "--vram", "8GiB", "--engine-version", "b6100", "--json")
    assert got == want and got["estimate"]["settings"]["engine_version"] == "b6100"


# ---------------------------------------------------------------------------------------------------------
# A phone (375 px): the hard-limits table's label "planned: NVIDIA GeForce RTX 4060 (8.00 GiB)" did not wrap, and held
# every figure past the screen's edge: the table showed its VRAM column only. The label now wraps; the planned GPU's
# largest context with the first KV type is on screen, the figure of `oomkit table --json`.


def test_the_planned_gpus_limit_is_on_a_phones_screen(server, browser):  # noqa: F811
    data = _cli_json("table", "qwen3:8b", "--gpu", "RTX 4060", "--json")
    planned = next(r for r in data["limits"] if r["target"].startswith("planned: "))
    first = data["kv_types"][0]
    with _page(browser, 375, server + "/limits?model=qwen3%3A8b&gpu=RTX+4060") as page:
        cell = page.locator("#limits tr:last-child td:nth-child(2)")
        assert cell.inner_text().replace(",", "") == str(planned["max_context"][first])
        box = cell.bounding_box()
        assert box["x"] + box["width"] <= 375, box
        assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 1
