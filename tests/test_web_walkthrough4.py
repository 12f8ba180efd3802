"""The hub walked by someone whose model just ran out of memory: a pasted llama-server command that loads a local
GGUF file, a vLLM refusal read on a phone, the engine's own figures, the limits table, a plan with a name pasted
wrong, and bad input in every field. Each case failed before; each figure is read through the CLI (its --json, or
its error line) or the API (web/api.py runs the CLI's code) for the same input, never copied. The browser cases run
as tests/test_browser.py runs them (Debian's Chromium, skipped where it is absent).
"""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys

import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

from oomkit.units import fmt_bytes  # noqa: E402
from oomkit.web import api  # noqa: E402
from oomkit.web.app import create_app  # noqa: E402
from tests.test_browser import _page, browser, server  # noqa: E402,F401  (the same server and Chromium)


@pytest.fixture(scope="module")
def client():
    mp = pytest.MonkeyPatch()
    mp.setenv("HF_HUB_OFFLINE", "1")
    yield TestClient(create_app())
    mp.undo()


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "oomkit", *args], capture_output=True, text=True,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})


def _alert(page: str) -> str:
    m = re.search(r'role="alert">(.*?)</div>', page, re.S)
    assert m, "no error on the page"
    return html.unescape(re.sub(r"<[^>]+>", "", m.group(1)))


def _open(browser, width: int = 1280):  # noqa: F811
    """A page whose 4xx answers are expected (tests/test_browser.py's _page fails on their console line)."""
    ctx = browser.new_context(viewport={"width": width, "height": 900 if width > 600 else 844})
    return ctx, ctx.new_page()


# ---------------------------------------------------------------------------------------------------------
# A pasted command that loads a local GGUF file: the page said only that it opens no file; the CLI names the model
# the file's name says. The page now says the same name and links to the command with it in the path's place.

GGUF = "~/oomkit-absent/Qwen3-8B-Q4_K_M.gguf"
COMMAND = f"./llama-server -m {GGUF} -c 8192 -ngl 99"


def test_a_local_gguf_in_a_pasted_command_leads_to_the_name_the_cli_gives(server, browser):  # noqa: F811
    cli = _cli("estimate", "--gpu", "RTX 4090", "--", *COMMAND.split())
    assert cli.returncode == 2
    named = re.search(r"its name says (\S+): give that", cli.stderr).group(1)  # Qwen/Qwen3-8B:Q4_K_M
    ctx, page = _open(browser, 375)
    try:
        page.goto(server + "/")
        page.fill("#f-gpu", "RTX 4090")
        page.fill("#f-command", COMMAND)
        page.focus("#f-command")
        with page.expect_navigation():
            page.keyboard.press("Control+Enter")
        alert = page.locator("[role=alert]").inner_text()
        assert "reads as a file path" in alert and f"its name says {named}" in alert
        link = page.locator("#did-you-mean a")
        assert link.inner_text() == named
        link.focus()
        with page.expect_navigation():
            page.keyboard.press("Enter")
        fixed = COMMAND.replace(GGUF, named)
        want = json.loads(_cli("estimate", "--json", "--gpu", "RTX 4090", "--", *fixed.split()).stdout)
        assert int(page.get_attribute("#stat-total [data-bytes]", "data-bytes")) == want["total_bytes"]
        assert page.input_value("#f-command") == fixed and page.input_value("#f-gpu") == "RTX 4090"
        assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 1
    finally:
        ctx.close()


def test_the_fit_form_offers_the_name_with_its_gpu_kept(client):
    p = {"fit_command": "llama-server -m ./Qwen3-8B-Q4_K_M.gguf -c 131072", "fit_gpu": "RTX 4060"}
    r = client.get("/plan", params=p)
    assert r.status_code == 400
    named = re.search(r"its name says (\S+): give that", _cli("fit", "--gpu", "RTX 4060", "--",
                                                              *p["fit_command"].split()).stderr).group(1)
    href = html.unescape(re.search(r'id="fit-did-you-mean">Did you mean: <a href="([^"]+)"', r.text).group(1))
    followed = client.get(href)
    assert followed.status_code == 200 and 'role="alert"' not in followed.text
    assert "fit_gpu=RTX+4060" in href and named.replace("/", "%2F").replace(":", "%3A") in href


# ---------------------------------------------------------------------------------------------------------
# A name too long for any model: the plan page answered 500 (the planner asked the OS whether it was a file)


def test_a_model_name_too_long_is_one_line_on_every_page_not_a_500(client, server, browser):  # noqa: F811
    name = "x" * 300
    for path in ("/", "/kv", "/limits", "/plan"):
        r = client.get(path, params={"model": name, "gpu": "RTX 4090"} if path != "/limits" else {"model": name})
        assert r.status_code == 400, path
        assert "no catalog name, Ollama tag or Hugging Face id" in _alert(r.text)
    r = client.post("/api/plan", json={"model": name, "gpu": "RTX 4090"})
    assert r.status_code == 400 and "\n" not in r.json()["error"]
    ctx, page = _open(browser)
    try:
        answer = page.goto(server + "/plan?gpu=RTX+4090&model=" + name)
        assert answer.status == 400
        assert page.locator("[role=alert]").count() == 1
    finally:
        ctx.close()


# ---------------------------------------------------------------------------------------------------------
# Bad input named by the page's own field, not the API's parameter (ctx) nor the CLI's option (--cpu-only, --gpu)


@pytest.mark.parametrize("path, p, says, not_said", [
    ("/", {"model": "llama3.1:8b", "ctx": "abc"}, "context (tokens)", "ctx "),
    ("/", {"model": "llama3.1:8b", "ctx": "-1"}, "context (tokens) must be between", "ctx "),
    ("/", {"model": "llama3.1:8b", "parallel": "0"}, "parallel sequences must be between", "parallel must"),
    ("/", {"model": "llama3.1:8b", "vram": "1.5"}, "VRAM per GPU 1.5: 1.5 what?", "vram 1.5"),
    ("/", {"model": "llama3.1:8b", "ram": "1.5", "cpu_only": "1"}, "host memory 1.5: 1.5 what?", "ram 1.5"),
    ("/", {"model": "llama3.1:8b", "cpu_only": "1", "gpu": "RTX 4090"}, "“no GPU” and GPU RTX 4090", "--cpu-only"),
    ("/", {"model": "llama3.1:8b", "vram": "24GiB", "gpu": "RTX 4090"}, "VRAM per GPU 24GiB and GPU RTX 4090",
     "--vram"),
    ("/", {"model": "llama3.1:8b", "gpu": "RTX\u202e4090"}, "GPU 'RTX", "--gpu"),
    ("/", {"model": "llama3.1:8b", "flags": "-1"}, "not an engine flag", "MODEL"),
    ("/", {"model": "lama-nonexistent-9b"}, "not in the built-in catalog", "not a file"),
    ("/", {"command": "ollama serve", "gpu": "RTX 4090"}, "give it in the model field", "MODEL before the --"),
    ("/limits", {"model": "llama3.1:8b", "sizes": "0"}, "VRAM sizes 0", "--sizes"),
    ("/limits", {"model": "llama3.1:8b", "vram": "0"}, "VRAM per GPU: GPU memory must be positive", "--vram"),
    ("/plan", {"model": "llama3.1:8b", "gpu": "RTX 4090", "min_ctx": "0"}, "context each sequence needs", "min_ctx"),
    ("/plan", {"model": "llama3.1:8b", "gpu": "RTX 4090", "concurrency": "x"}, "sequences at once", "concurrency"),
    ("/plan", {"model": "llama3.1:8b", "gpu": "RTX 4090", "ram": "0"}, "host memory", "--ram"),
])
def test_bad_input_is_named_by_the_pages_field(client, path, p, says, not_said):
    r = client.get(path, params=p)
    assert r.status_code == 400
    text = _alert(r.text)
    assert says in text and not_said not in text, text
    # the API keeps its parameter names (the page's words are the page's): the same request is refused there too
    if path == "/":
        refused = client.get("/api/estimate", params=p)
        assert refused.status_code in (400, 422)


def test_a_bad_context_typed_from_the_keyboard_names_the_field(server, browser):  # noqa: F811
    ctx, page = _open(browser, 375)
    try:
        page.goto(server + "/")
        page.focus("#f-model")
        page.keyboard.type("llama3.1:8b")
        page.keyboard.press("Tab")  # the engine
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.id") == "f-ctx"
        page.keyboard.type("32k tokens")
        with page.expect_navigation():
            page.keyboard.press("Enter")
        assert page.locator("[role=alert]").inner_text().startswith("Cannot answer: context (tokens)")
        assert page.input_value("#f-ctx") == "32k tokens"
    finally:
        ctx.close()


# ---------------------------------------------------------------------------------------------------------
# vLLM's refusal on a phone: its message (with a long URL) ran 215 px past a 375 px screen


def test_a_vllm_refusal_fits_a_phone(server, browser):  # noqa: F811
    p = {"command": "vllm serve Qwen/Qwen3-8B", "gpu": "RTX 4090"}
    checked = api.check_fit(p).data()
    assert checked["fits"] is False
    with _page(browser, 375, server + "/") as page:
        page.fill("#f-gpu", p["gpu"])
        page.fill("#f-command", p["command"])
        with page.expect_navigation():
            page.click("form.card button[type=submit]")
        assert page.locator("#verdict").inner_text().startswith("Does not fit")
        assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 1
        want = api.estimate(p).data()
        assert int(page.get_attribute("#stat-total [data-bytes]", "data-bytes")) == want["total_bytes"]


# ---------------------------------------------------------------------------------------------------------
# "What the engine will print": a 64 KiB vLLM page read "0 MiB", a 2.25 MiB block "2 MiB", a flag "True"


def test_the_engines_figures_keep_their_size_and_json_words(server, browser):  # noqa: F811
    p = {"command": "vllm serve Qwen/Qwen3-8B --max-model-len 8192", "gpu": "RTX 4090"}
    view = json.loads(_cli("estimate", "--json", "--gpu", p["gpu"], "--", *p["command"].split()).stdout)["engine_view"]
    page_bytes, block = view["kv_cache_groups"][0]["page_bytes"], view["kv_block_bytes"]
    assert page_bytes < 1 << 20 and block % (1 << 20)  # the sizes that lost their figure
    with _page(browser, 1280, server + "/") as page:
        page.fill("#f-gpu", p["gpu"])
        page.fill("#f-command", p["command"])
        with page.expect_navigation():
            page.click("form.card button[type=submit]")
        shown = {int(el.get_attribute("data-bytes")): el.inner_text()
                 for el in page.locator("h2:has-text('will print') + dl [data-bytes]").all()}
        assert shown[page_bytes] == f"{page_bytes / 1024:g} KiB"
        assert shown[block] == f"{block / (1 << 20):.2f} MiB"
        # a size of whole MiB and more as the CLI's text prints it ("model_loading_bytes: CUDA0 15,634.54 MiB")
        said = _cli("estimate", "--gpu", p["gpu"], "--", *p["command"].split()).stdout
        loading = re.search(r"^  model_loading_bytes: (.+)$", said, re.M).group(1).strip()
        assert page.locator("dt:text-is('model_loading_bytes') + dd").inner_text().strip() == loading
        phases = page.locator("dt:text-is('phases') + dd").inner_text()
        assert f"in_budget {json.dumps(view['phases'][0]['in_budget'])}" in phases
        assert "True" not in phases and "False" not in phases


# ---------------------------------------------------------------------------------------------------------
# The limits table: the planned GPU's row lost its memory, the trained-context cap its "(max)", and the footer
# its KV bytes per token; the title its sequences and flash attention (report/tables.py prints them all)


def test_the_limits_page_says_what_the_cli_table_says(server, browser):  # noqa: F811
    p = {"model": "qwen3:8b", "vram": "24GiB"}
    data = api.table(p).data()
    planned = next(t for t in data["targets"] if t["kind"] == "planned")
    trained = data["model"]["n_ctx_train"]
    with _page(browser, 375, server + "/limits") as page:
        page.fill("#f-model", p["model"])
        page.fill("#f-vram", p["vram"])
        with page.expect_navigation():
            page.click("form.card button[type=submit]")
        rows = page.locator("#limits tr").all_inner_texts()
        assert any(r.startswith(f"{planned['label']} ({fmt_bytes(planned['memory_bytes'])})") for r in rows), rows
        capped = [c for row in data["limits"] for c in row["max_context"].values() if c == trained]
        assert capped and page.locator("#limits td", has_text="(max)").count() == len(capped)
        per = page.locator("#kv-per-token").inner_text()
        for kv, n in data["kv_bytes_per_token"].items():
            assert f"{kv} {fmt_bytes(n)}" in per
        title = page.locator("#limits-title").inner_text()
        s = data["settings"]
        assert f"{s['n_parallel']} sequences" in title and f"flash attention {s['flash_attn']}" in title
        assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 1


# ---------------------------------------------------------------------------------------------------------
# Fit: a rewrite that keeps experts in system RAM lost the CLI's decode bound ("decode ≤ 38 tok/s (upper bound)")


def test_a_fit_that_moves_experts_to_ram_says_the_decode_bound_the_cli_says(server, browser):  # noqa: F811
    command = "llama-server -hf unsloth/Qwen3-30B-A3B-GGUF:Q4_K_M -c 32768 -ngl 99"
    cli = _cli("fit", "--gpu", "RTX 4070", "--", *command.split())
    assert cli.returncode == 0, cli.stderr
    line = next(x for x in cli.stdout.splitlines() if x.startswith("part of the model in system RAM: "))
    with _page(browser, 375, server + "/plan") as page:
        page.fill("#f-fit_command", command)
        page.fill("#f-fit_gpu", "RTX 4070")
        with page.expect_navigation():
            page.click("button:text-is('Fit it')")
        assert page.locator("#fit-decode").inner_text() == line.split(": ", 1)[1]
        assert page.locator("#fit-out").inner_text() == cli.stdout.strip().splitlines()[-1]
        assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 1


# ---------------------------------------------------------------------------------------------------------
# "Check against this machine" on a machine without a GPU: the CLI's advice ("give --gpu NAME or --vram SIZE for
# yours, or --cpu-only ...") was shown as it is, naming options the page does not have


@pytest.mark.parametrize("p, args", [({"model": "qwen3:8b", "here": "1"}, ()),
                                     ({"model": "qwen3:8b", "here": "1", "cpu_only": "1", "ram": "32GiB"},
                                      ("--cpu-only", "--ram", "32GiB"))])
def test_checking_this_machine_speaks_of_the_pages_fields(server, browser, p, args):  # noqa: F811
    cli = _cli("check", "qwen3:8b", *args).stdout.splitlines()
    with _page(browser, 1280, server + "/") as page:
        page.fill("#f-model", p["model"])
        page.check("#f-here" if page.locator("#f-here").count() else "input[name=here]")
        if p.get("cpu_only"):
            page.check("input[name=cpu_only]")
            page.fill("#f-ram", p["ram"])
        with page.expect_navigation():
            page.click("form.card button[type=submit]")
        shown = page.locator("#check").inner_text().splitlines()
    assert not any(re.search(r"--(gpu|vram|cpu-only|ram)\b", x) for x in shown), shown
    verdict = next(x for x in cli if x.startswith("verdict:"))
    assert verdict in shown  # FITS / DOES NOT FIT and the MiB left, as the CLI says them
    assert len(shown) == len(cli) and shown[0] == cli[0]


# ---------------------------------------------------------------------------------------------------------
# A mixture of experts: the page gave its total parameters only; the CLI says the active ones beside them


def test_a_mixture_of_experts_shows_its_active_parameters(server, browser):  # noqa: F811
    command = "llama-server -hf unsloth/Qwen3-30B-A3B-GGUF:Q4_K_M -c 32768 -ngl 99 -fa on -ctk q8_0 -ctv q8_0"
    first = _cli("estimate", "--gpu", "RTX 4090", "--", *command.split()).stdout.splitlines()[0]
    active = re.search(r"\(([\d.]+B) active\)", first).group(1)
    with _page(browser, 375, server + "/") as page:
        page.fill("#f-gpu", "RTX 4090")
        page.fill("#f-command", command)
        with page.expect_navigation():
            page.click("form.card button[type=submit]")
        line = page.locator("#model-line").inner_text()
        assert f"({active} active)" in line and first.split(" · weights ")[0] in line


# ---------------------------------------------------------------------------------------------------------
# A config.json uploaded beside a pasted command: the page cleared the command and estimated the upload at the
# engine's defaults (vLLM's full 40,960 tokens for --max-model-len 8192, llama.cpp's f16 KV for -ctk q8_0); now the
# upload stands for the model the command names, with its flags, as the CLI reads `-- vllm serve CONFIG ...`

CONFIG = "tests/fixtures/hub/Qwen3-30B-A3B.config.json"


@pytest.mark.parametrize("gpu, quant, command", [
    ("H100", None, "vllm serve ./my-finetune --max-model-len 8192"),
    ("RTX 4090", "Q4_K_M", "llama-server -m ./my-finetune.gguf -c 8192 -ctk q8_0 -ctv q8_0 -fa on"),
])
def test_an_uploaded_config_takes_the_pasted_commands_flags(server, browser, gpu, quant, command):  # noqa: F811
    argv = command.split()
    model = argv.index("-m") + 1 if "-m" in argv else 2
    cli_argv = [*argv[:model], CONFIG, *argv[model + 1:]]
    want = json.loads(_cli("estimate", "--json", "--gpu", gpu, *(("--quant", quant) if quant else ()), "--",
                           *cli_argv).stdout)
    with _page(browser, 1280, server + "/") as page:
        page.fill("#f-gpu", gpu)
        if quant:
            page.fill("#f-quant", quant)
        page.fill("#f-command", command)
        with page.expect_navigation():
            page.set_input_files("#f-config", CONFIG)
        assert page.locator("[role=alert]").count() == 0
        assert int(page.get_attribute("#stat-total [data-bytes]", "data-bytes")) == want["total_bytes"]
        assert int(page.get_attribute("#stat-kv [data-bytes]", "data-bytes")) == want["kv_cache_bytes"]
        assert page.input_value("#f-command") == command


# ---------------------------------------------------------------------------------------------------------
# The plan page did not say what it planned for (the CLI's "goal: 32768 tokens of context × 4 sequences") nor what
# its decode column bounds


@pytest.mark.parametrize("field, value, flag", [("min_ctx", "32768", "--min-ctx"), ("concurrency", "4", "--concurrency")])
def test_the_plan_says_its_goal_as_the_cli_does(server, browser, field, value, flag):  # noqa: F811
    cli = _cli("plan", "qwen3:8b", "--gpu", "RTX 4060", flag, value).stdout.splitlines()
    goal = next(x for x in cli if x.startswith("goal: "))
    bound = next(x for x in cli if x.startswith("decode tok/s is"))
    with _page(browser, 375, server + "/plan") as page:
        page.fill("#f-model", "qwen3:8b")
        page.fill("#f-gpu", "RTX 4060")
        page.fill(f"#f-{field}", value)
        with page.expect_navigation():
            page.locator("#f-model").press("Enter")
        assert page.locator("#plan-goal").inner_text() == goal
        assert page.locator("#plan-tps").inner_text() == bound


# ---------------------------------------------------------------------------------------------------------
# The settings the figures assume: the CLI's second line (vLLM's default gpu_memory_utilization 0.92 and 256
# sequences, llama.cpp's 4 slots); the page did not say them


@pytest.mark.parametrize("command", ["vllm serve Qwen/Qwen3-8B", "llama-server -hf unsloth/Qwen3-8B-GGUF:Q4_K_M"])
def test_the_settings_the_figures_assume_are_said_as_the_cli_says_them(server, browser, command):  # noqa: F811
    out = _cli("estimate", "--gpu", "RTX 4090", "--", *command.split()).stdout.splitlines()
    end = next(i for i, x in enumerate(out) if x.startswith("devices:"))
    said = " ".join(x.strip() for x in out[1:end])
    with _page(browser, 1280, server + "/") as page:
        page.fill("#f-gpu", "RTX 4090")
        page.fill("#f-command", command)
        with page.expect_navigation():
            page.click("form.card button[type=submit]")
        assert page.locator("#settings-line").inner_text() == said


# ---------------------------------------------------------------------------------------------------------
# The CLI's notes shown as they are named its options: "--gpu 'A100' is sold with 40 or 80 GB", "no --ctx given",
# "name a format with :QUANT or --quant", "(give --gpu NAME or --vram SIZE)"; the page says its fields instead

_OPTION = re.compile(r"--(vram|gpu|ram|cpu-only|ctx|quant)\b")


@pytest.mark.parametrize("path, p", [
    ("/", {"model": "qwen3:8b", "gpu": "A100", "engine": "vllm"}),
    ("/", {"model": "deepseek-r1:671b", "gpu": "H100", "engine": "transformers"}),
    ("/plan", {"model": "qwen3:8b"}),
    ("/plan", {"model": "llama3.3:70b", "gpu": "M2 Pro"}),
])
def test_the_clis_notes_name_the_pages_fields(server, browser, path, p):  # noqa: F811
    cli = _cli("estimate" if path == "/" else "plan", p["model"], *(("--gpu", p["gpu"]) if "gpu" in p else ()),
               *(("--engine", p["engine"]) if "engine" in p else ()))
    said = cli.stdout + cli.stderr
    assert _OPTION.search(said)  # the CLI's own words name its options
    with _page(browser, 375, server + path) as page:
        for k, v in p.items():
            if k == "engine":
                page.select_option("#f-engine", v)
            else:
                page.fill(f"#f-{k}", v)
        with page.expect_navigation():
            page.locator("#f-model").press("Enter")
        notes = page.locator("main .note, main ul.notes li").all_inner_texts()
        assert notes and not any(_OPTION.search(n) for n in notes), [n for n in notes if _OPTION.search(n)]
        taken = re.search(r"taken as [^;]+", said)
        if taken:  # the size a GPU name was taken as, in the CLI's words
            assert any(taken.group(0) in n for n in notes)


# ---------------------------------------------------------------------------------------------------------
# An uploaded config.json that declares no trained context: the CLI says "give -c"; the page has a context field


def test_an_upload_without_a_trained_context_points_at_the_context_field(client):
    config = {"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
              "vocab_size": 32000, "intermediate_size": 11008}
    refused = client.post("/api/estimate", json={"config": config, "gpu": "RTX 4090"})
    assert refused.status_code == 400 and "declares no trained context" in refused.json()["error"]
    r = client.post("/", data={"config": json.dumps(config), "gpu": "RTX 4090"})
    assert r.status_code == 400 and _alert(r.text).endswith("give it in the context field")
    fixed = client.post("/", data={"config": json.dumps(config), "gpu": "RTX 4090", "ctx": "4096"})
    want = client.post("/api/estimate", json={"config": config, "gpu": "RTX 4090", "ctx": 4096}).json()
    assert int(re.search(r'id="stat-total"><b><span data-bytes="(\d+)"', fixed.text).group(1)) == want["total_bytes"]


# ---------------------------------------------------------------------------------------------------------
# The calculator's "limits and context tables" link brings its GPUs (a planned row of theirs); the limits form had no
# GPU field, so "Show tables" again dropped that row without a word


def test_the_limits_form_keeps_the_gpus_the_calculator_sent(server, browser):  # noqa: F811
    p = {"model": "qwen3:8b", "gpu": "RTX 4090"}
    data = api.table(p).data()
    planned = next(t for t in data["targets"] if t["kind"] == "planned")
    with _page(browser, 375, server + "/?model=qwen3%3A8b&gpu=RTX+4090") as page:
        with page.expect_navigation():
            page.click("a:text-is('limits and context tables')")
        assert page.input_value("#f-gpu") == p["gpu"]
        page.fill("#f-parallel", "1")
        with page.expect_navigation():
            page.locator("#f-model").press("Enter")
        rows = page.locator("#limits tr").all_inner_texts()
        assert any(r.startswith(planned["label"]) for r in rows), rows
        want = api.table({**p, "parallel": "1"}).data()
        row = next(r for r in want["limits"] if r["target"] == planned["label"])
        cells = page.locator("#limits tr", has_text=planned["label"]).locator("td[data-value]")
        assert [c.get_attribute("data-value") for c in cells.all()] == [str(v or "") for v in row["max_context"].values()]
