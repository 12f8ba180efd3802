"""The hub walked by new users of other kinds, offline: a Mac with an mlx-community repo, a two- and four-GPU server
with vLLM's and SGLang's parallel flags, a crash log pasted into /diagnose and followed back to the estimate, a fit
that has to change flags, an Ollama user's num_ctx, an unknown GPU, a typo in a model's name, a shared URL, the back
button, a phone and a keyboard. Each figure a page shows is checked against the CLI's own JSON for the same input
(web/api.py runs the CLI's code: the page computes nothing of its own) or against the engine's own log; each case
that failed before says how. The browser cases run as tests/test_browser.py runs them (Debian's Chromium, skipped
where it is absent).
"""

from __future__ import annotations

import html
import json
import re

import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

from oomkit.web import api  # noqa: E402
from oomkit.web.app import create_app  # noqa: E402

CORPUS = "tests/fixtures/diagnose/corpus.jsonl"


@pytest.fixture(scope="module")
def client():
    mp = pytest.MonkeyPatch()
    mp.setenv("HF_HUB_OFFLINE", "1")
    yield TestClient(create_app())
    mp.undo()


def _corpus(ident: str) -> dict:
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / CORPUS
    return next(r for r in map(json.loads, path.read_text(encoding="utf-8").splitlines()) if r and r["id"] == ident)


def _alert(page: str) -> str:
    m = re.search(r'role="alert">(.*?)</div>', page, re.S)
    assert m, "no error on the page"
    return html.unescape(re.sub(r"<[^>]+>", "", m.group(1)))


def _total(page: str) -> int:
    return int(re.search(r'id="stat-total"><b><span data-bytes="(\d+)"', page).group(1))


def _verdict_bytes(page: str) -> int:
    return int(re.search(r'id="verdict">[^<]*<span data-bytes="(-?\d+)"', page).group(1))


def _href(page: str, ident: str) -> list[str]:
    block = re.search(rf'id="{ident}">(.*?)</p>', page, re.S).group(1)
    return [html.unescape(h) for h in re.findall(r'href="([^"]+)"', block)]


# ---------------------------------------------------------------------------------------------------------
# Journeys the page already answered as the CLI does (kept so that they stay so)


@pytest.mark.parametrize("p", [
    {"model": "mlx-community/Llama-3.3-70B-Instruct-4bit", "engine": "mlx", "gpu": "M4 Max 128GB", "ctx": "32768"},
    {"command": "lms load mlx-community/Qwen3-30B-A3B-4bit", "gpu": "M3 Pro 36GB"},
    {"command": "python -m sglang.launch_server --model-path Qwen/Qwen2.5-7B-Instruct --dp 2", "gpu": "2x RTX 3090"},
])
def test_a_mac_and_a_data_parallel_server_read_as_check_reads_them(client, p):
    r = client.get("/", params=p)
    assert r.status_code == 200 and 'role="alert"' not in r.text
    assert _total(r.text) == api.estimate(p).data()["total_bytes"]
    checked = api.check_fit(p).data()
    assert checked["fits"] is True and _verdict_bytes(r.text) == checked["margin_bytes"]


def test_tensor_parallel_that_vllm_refuses_is_said_in_its_words(client):
    """`vllm serve <70B> --tensor-parallel-size 4` on 4x A100 40GB: the weights fit, the KV cache gets nothing."""
    p = {"command": "vllm serve meta-llama/Llama-3.3-70B-Instruct --tensor-parallel-size 4", "gpu": "4x A100 40GB"}
    page = client.get("/", params=p).text
    checked = api.check_fit(p).data()
    assert checked["stage"] == "engine" and checked["margin_bytes"] > 0
    assert "vllm refuses these settings" in page and _verdict_bytes(page) == checked["margin_bytes"]
    assert "No available memory for the cache blocks" in page  # vLLM's own message
    assert len(re.findall(r'data-device="CUDA\d"', page)) == 4


# ---------------------------------------------------------------------------------------------------------
# What the walk found wrong


def test_an_ollama_users_num_ctx_in_the_flags_field_is_refused_not_dropped(client):
    """`num_ctx=32768` in the engine flags field was read as a shell's `NAME=value` before a command and dropped: the
    page answered 200 with Ollama's default 4,096-token context, where `oomkit estimate llama3.1:8b --engine ollama
    num_ctx=32768` refuses the argument."""
    p = {"model": "llama3.1:8b", "engine": "ollama", "flags": "num_ctx=32768"}
    r = client.get("/", params=p)
    assert r.status_code == 400 and "'num_ctx=32768' is not an engine flag" in _alert(r.text)
    assert "context field" in _alert(r.text)
    assert client.get("/api/estimate", params=p).status_code == 400
    ok = {"model": "llama3.1:8b", "engine": "ollama", "flags": "--num-ctx 32768"}  # Ollama's own flag is read
    assert api.estimate(ok).data()["settings"]["num_ctx"] == 32768
    assert _total(client.get("/", params=ok).text) == api.estimate(ok).data()["total_bytes"]


def test_flags_beside_a_pasted_command_get_a_page_answer(client):
    """A pasted `ollama run` with `--num-ctx 32768` in the flags field got the CLI's "give either MODEL with options,
    or an engine command after --, not both": there was no MODEL on the page."""
    r = client.get("/", params={"command": "ollama run llama3.1:8b", "flags": "--num-ctx 32768"})
    assert r.status_code == 400
    said = _alert(r.text)
    assert "engine flags field" in said and "clear the command box" in said and "MODEL" not in said


def test_a_typo_offers_the_names_as_links_that_keep_the_rest(client):
    r = client.get("/", params={"model": "lama3.1:8b", "ctx": "16384", "gpu": "RTX 4060"})
    assert r.status_code == 400 and "did you mean llama3.1:8b" in _alert(r.text)
    first = _href(r.text, "did-you-mean")[0]
    assert first == "/?model=llama3.1%3A8b&ctx=16384&gpu=RTX+4060"
    fixed = client.get(first)
    want = {"model": "llama3.1:8b", "ctx": "16384", "gpu": "RTX 4060"}
    assert fixed.status_code == 200 and _total(fixed.text) == api.estimate(want).data()["total_bytes"]
    plan = client.get("/plan", params={"model": "qwen3:8bb", "gpu": "RTX 4090"}).text
    assert _href(plan, "did-you-mean")[0] == "/plan?model=qwen3%3A8b&gpu=RTX+4090"


def test_the_fit_form_and_the_kv_page_offer_the_names_too(client):
    r = client.get("/plan", params={"fit_command": "ollama run llama3.1:8b", "fit_gpu": "RTX 4600"})
    offered = _href(r.text, "fit-did-you-mean")
    assert r.status_code == 400 and offered[0] == "/plan?fit_command=ollama+run+llama3.1%3A8b&fit_gpu=RTX+4060"
    fixed = client.get(offered[0])
    want = api.fit_command({"command": "ollama run llama3.1:8b", "gpu": "RTX 4060"}).data()["fit"]["command"]
    assert fixed.status_code == 200 and html.escape(want) in fixed.text
    assert _href(client.get("/kv", params={"model": "qwen3:8bb"}).text, "did-you-mean")[0] == "/kv?model=qwen3%3A8b"


def test_a_hub_id_typo_offline_gives_one_piece_of_advice(client):
    """The page said both "unset HF_HUB_OFFLINE to look it up" (the terminal's advice, which a hub user cannot
    follow) and "start it with `oomkit serve --hub`"."""
    p = {"model": "Qwen/Qwen2.5-7B-Instrut", "engine": "vllm"}
    for said in (_alert(client.get("/", params=p).text), client.get("/api/estimate", params=p).json()["error"]):
        assert "unset HF_HUB_OFFLINE" not in said and said.count("oomkit serve --hub") == 1
        assert "did you mean Qwen/Qwen2.5-7B-Instruct" in said
    r = client.get("/", params=p)
    assert _href(r.text, "did-you-mean")[0] == "/?model=Qwen%2FQwen2.5-7B-Instruct&engine=vllm"


def test_an_unknown_gpu_points_at_the_pages_field(client):
    """"give its memory with --vram SIZE" on a page whose field is "VRAM per GPU"; the names offered are links."""
    r = client.get("/", params={"model": "qwen3:8b", "gpu": "Radeon 7900"})
    said = _alert(r.text)
    assert r.status_code == 400 and "--vram" not in said and "VRAM field" in said
    offered = _href(r.text, "did-you-mean")
    assert offered and all(h.startswith("/?model=qwen3%3A8b&gpu=") for h in offered)
    fit = client.get("/plan", params={"fit_command": "ollama run llama3.3:70b", "fit_gpu": "Unknown GPU 9000"})
    assert fit.status_code == 400 and "VRAM field" in _alert(fit.text)
    assert 'give its memory in vram (e.g. "8GiB")' in client.get(
        "/api/estimate", params={"model": "qwen3:8b", "gpu": "Unknown GPU 9000"}).json()["error"]  # the API's field


def test_a_size_without_a_unit_names_the_pages_field(client):
    """"--vram 24: 24 what? ..." on a page whose field is "VRAM per GPU" (the CLI's option named as typed there)."""
    said = _alert(client.get("/", params={"model": "qwen3:8b", "vram": "24"}).text)
    assert said.startswith("Cannot answer: VRAM per GPU 24: 24 what? write 24GiB")
    said = _alert(client.get("/", params={"model": "qwen3:8b", "cpu_only": "1", "ram": "64"}).text)
    assert said.startswith("Cannot answer: host memory 64: 64 what?")
    assert client.get("/api/estimate", params={"model": "qwen3:8b", "vram": "24"}).json()["error"].startswith(
        "vram 24: 24 what?")
    said = _alert(client.get("/limits", params={"model": "qwen3:8b", "sizes": "abc"}).text)
    assert said.startswith("Cannot answer: VRAM sizes: cannot read 'abc' as a size")


@pytest.mark.parametrize("p", [{"model": "llama3.1:8b", "here": "1", "cpu_only": "1", "ctx": "8192"},
                               {"model": "llama3.1:8b", "here": "1", "ctx": "8192"}])
def test_checking_this_machine_gives_one_verdict(client, p):
    """"Check against this machine" with no GPU ticked: `oomkit check --cpu-only` said "FITS with 1,058 MiB left" (the
    available RAM) while the verdict above it said "Fits in the host's 23.59 GiB, with 2.77 GiB left" (all of it).
    The verdict is now check's own, with the same margin, and says what it was checked against."""
    page = client.get("/", params=p).text
    said = html.unescape(re.search(r'<pre id="check">(.*?)</pre>', page, re.S).group(1))
    m = re.search(r"verdict: \D*([\d,]+) MiB", said)  # FITS with N MiB left / DOES NOT FIT by N MiB / ... N MiB left
    margin = _verdict_bytes(page)
    assert m and f"{abs(margin) / (1 << 20):,.0f}" == m.group(1)
    assert ("checked against this machine&#x27;s available RAM" in page) == ("cpu_only" in p)


def test_the_plan_weighs_the_host_memory_given_on_the_page(client):
    """Llama 3.1 405B on one RTX 4090: without the host's RAM the plan ranks BF16 with 3 layers on the GPU first
    (about 760 GB left in system RAM) and notes the RAM unchecked, "give --ram SIZE"; the page had no such field.
    With 64 GiB, `oomkit plan llama3.1:405b --gpu "RTX 4090" --ram 64GiB --json` has no option and tier 3 only."""
    bare = client.get("/plan", params={"model": "llama3.1:405b", "gpu": "RTX 4090"}).text
    assert 'id="f-ram" name="ram"' in bare and 'id="matrix"' in bare
    assert "fill in the host memory field" in bare and "--ram" not in bare
    p = {"model": "llama3.1:405b", "gpu": "RTX 4090", "ram": "64GiB"}
    want = api.plan_options(p).data()["plan"]
    assert want["options"] == [] and want["smallest_hardware"]["count"] == 8
    page = client.get("/plan", params=p).text
    assert 'id="matrix"' not in page and "Nothing fits on these GPUs" in page
    tier3 = re.search(r'id="tier3">(.*?)</div>', page, re.S).group(1)
    assert f'data-bytes="{want["smallest_hardware"]["memory_bytes"]}"' in tier3
    assert f'data-bytes="{want["smallest_hardware"]["needed_bytes"]}"' in tier3
    assert html.escape(want["notes"][0]) in page
    assert 'name="ram" value="64GiB"' in page  # the fit form below keeps it


def test_fit_names_an_unset_flag_as_the_cli_does(client):
    """`oomkit fit --gpu "2x RTX 3090" -- vllm serve <70B>` prints `quantization: the engine's default ->
    bitsandbytes`; the page's table showed an empty "from" cell."""
    from oomkit.report.plan import fit_text

    command = "vllm serve meta-llama/Llama-3.3-70B-Instruct"
    fit = api.fit_command({"command": command, "gpu": "2x RTX 3090"}).obj
    unset = [c for c in fit.changes if c.before is None]
    assert unset and f"{unset[0].flag}: the engine's default ->" in fit_text(fit)
    page = client.get("/plan", params={"fit_command": command, "fit_gpu": "2x RTX 3090"}).text
    row = re.search(rf'<td class="l">{unset[0].flag}</td><td class="l">(.*?)</td>', page).group(1)
    assert html.unescape(row) == "the engine's default"


def test_a_torch_oom_shows_the_bytes_the_log_printed(client):
    """vllm-15598: "GPU 6 has a total capacity of 44.53 GiB of which 448.00 KiB is free"; the page said free 0 MiB
    where `oomkit diagnose` says 458,752 bytes."""
    row = _corpus("vllm-15598-graph-capture")
    page = client.post("/diagnose", data={"text": row["text"]}).text
    numbers = re.search(r'<ul id="numbers">(.*?)</ul>', page, re.S).group(1)
    assert '<li data-key="free_bytes" data-bytes="458752">free 458,752 bytes</li>' in numbers  # 448 KiB
    assert "total 44.53 GiB" in numbers and "requested 2.00 MiB" in numbers
    assert "compute (activations, compute buffers, warm-up, CUDA graphs)" in page  # the stage, in the CLI's words


def test_a_llamacpp_kv_failure_shows_the_buffers_the_engine_printed(client):
    """gpustack-1269: llama.cpp printed a 3,840 MiB KV buffer on CUDA0..2 before 4,480 MiB failed on device 3; the
    CLI lists those buffers and every message seen, the page showed neither."""
    from oomkit.diagnose.text import render

    row = _corpus("gpustack-1269-kv")
    said = render(api.diagnose_text({"text": row["text"]}).obj)
    page = html.unescape(client.post("/diagnose", data={"text": row["text"]}).text)
    assert "kv CUDA0 3.75 GiB, CUDA1 3.75 GiB, CUDA2 3.75 GiB" in said.replace("buffers   ", "")
    assert "kv CUDA0 3.75 GiB, CUDA1 3.75 GiB, CUDA2 3.75 GiB" in page
    assert "ggml_cuda_malloc, llama_kv_alloc_fail" in page
    assert re.search(r'id="stage">kv_cache</b>: KV cache / context', page)


def test_a_vllm_log_shows_its_phase_as_the_cli_does(client):
    from oomkit.diagnose.text import render

    rows = [json.loads(x) for x in open(CORPUS, encoding="utf-8") if x.strip()]
    row = next(r for r in rows if r["id"] == "vllm-14452-sampler-warmup-ranks")
    said = render(api.diagnose_text({"text": row["text"]}).obj)
    phase = next(x for x in said.splitlines() if x.startswith("phase"))[10:]
    assert phase == "sampler warm-up (after the KV cache was allocated)"
    assert phase in html.unescape(client.post("/diagnose", data={"text": row["text"]}).text)


def test_oomkits_figures_beside_the_log_as_the_cli_prints_them(client):
    """A vLLM 0.x log on an RTX 3090 with its weights, KV memory and KV tokens printed: `oomkit diagnose` sets oomkit's
    prediction beside each printed figure; the page showed none of them."""
    from oomkit.diagnose.text import render

    row = _corpus("vllm-offload-profiles-3090-sampler-warmup")
    answer = api.diagnose_text({"text": row["text"]})
    figures = [x.strip() for x in render(answer.obj).splitlines() if x.startswith(" " * 10) and "printed" in x]
    assert len(figures) == len(answer.data()["prediction"]["figures"]) == 3
    page = html.unescape(client.post("/diagnose", data={"text": row["text"]}).text)
    assert all(f in page for f in figures)
    assert "printed vs predicted" in page


def test_a_fix_is_followed_back_to_the_estimate(client):
    """The vLLM log's sampler warm-up failure (max_model_len 8192 in its arguments) offers --max-num-seqs 128: the fix
    links to the calculator with the log's model, engine and context and the fix's flags, whose figures are the
    CLI's for `oomkit estimate meta-llama/Llama-3.1-8B-Instruct --engine vllm --ctx 8192 --engine-version 0.17.1
    --max-num-seqs 128`."""
    row = _corpus("vllm-offload-profiles-3090-sampler-warmup")
    d = api.diagnose_text({"text": row["text"]}).data()
    assert d["settings"]["max_model_len"] == 8192
    page = client.post("/diagnose", data={"text": row["text"]}).text
    fixes = [html.unescape(h) for h in re.findall(r'class="fix-estimate" href="([^"]+)"', page)]
    flags = [" ".join(f["flags"]) for f in d["fixes"] if f.get("flags")]
    assert len(fixes) == len(flags) and flags[0] == "--max-num-seqs 128"
    # the release diagnose placed the log at (its "Model loading took" line) and estimated it with: carried along
    assert d["prediction"]["settings"]["engine_version"] == "0.17.1"
    assert fixes[0] == ("/?model=meta-llama%2FLlama-3.1-8B-Instruct&engine=vllm&ctx=8192&engine_version=0.17.1"
                        "&flags=--max-num-seqs+128")
    r = client.get(fixes[0])
    want = api.estimate({"model": "meta-llama/Llama-3.1-8B-Instruct", "engine": "vllm", "ctx": "8192",
                         "engine_version": "0.17.1", "flags": "--max-num-seqs 128"}).data()
    assert r.status_code == 200 and want["settings"]["max_num_seqs"] == 128
    assert _total(r.text) == want["total_bytes"]
    assert 'value="--max-num-seqs 128"' in r.text  # the fix stands in the flags field, to change


def test_an_ollama_memory_refusal_leads_back_to_the_estimate(client):
    """ollama/ollama#10920's `ollama run deepseek-v2.5`: "model requires more system memory (164.8 GiB) than is
    available (13.4 GiB)". The page had no way back to the model's estimate."""
    row = _corpus("ollama-10920-system-memory")
    page = client.post("/diagnose", data={"text": row["text"]}).text
    assert "model required 164.80 GiB" in page and "system available 13.40 GiB" in page  # the log's figures
    href = _href(page, "to-estimate")[0]
    assert href == "/?model=deepseek-v2.5&engine=ollama"
    estimate = client.get(href)
    want = api.estimate({"model": "deepseek-v2.5", "engine": "ollama"}).data()
    assert estimate.status_code == 200 and _total(estimate.text) == want["total_bytes"]


def test_a_vllm_log_leads_to_the_model_oomkit_compared_it_with(client):
    """qwen3-12: vLLM printed `model='data/Qwen1.5-14B-Chat'`; oomkit's figures beside the log are those of
    Qwen1.5-14B-Chat, and the link goes to that estimate; a log naming an absolute path offers none."""
    row = _corpus("qwen3-12-no-cache-blocks")
    d = api.diagnose_text({"text": row["text"]}).data()
    page = client.post("/diagnose", data={"text": row["text"]}).text
    href = _href(page, "to-estimate")[0]
    assert href == f"/?model={d['prediction']['model']}&engine=vllm"
    want = api.estimate({"model": d["prediction"]["model"], "engine": "vllm"}).data()["total_bytes"]
    assert _total(client.get(href).text) == want
    text = row["text"].replace("data/Qwen1.5-14B-Chat", "/data/Qwen1.5-14B-Chat")
    assert "model" not in api.diagnose_text({"text": text}).data()["settings"]
    assert 'id="to-estimate"' not in client.post("/diagnose", data={"text": text}).text


# ---------------------------------------------------------------------------------------------------------
# In the browser

from tests.test_browser import _page, browser, server  # noqa: E402,F401  (the same server and Chromium)


def _open(browser, width: int = 1280):  # noqa: F811
    """A page whose 4xx answers are expected (tests/test_browser.py's _page fails on their console line)."""
    ctx = browser.new_context(viewport={"width": width, "height": 900 if width > 600 else 844})
    return ctx, ctx.new_page()


def test_a_typo_fixed_by_keyboard_then_back(server, browser):  # noqa: F811
    """Keyboard only: the model typed wrong, Enter, Tab to the offered name, Enter; then the back button."""
    ctx, page = _open(browser, 375)
    try:
        page.goto(server + "/")
        page.keyboard.press("Tab")
        page.keyboard.press("Enter")  # the skip link
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.id") == "f-model"
        page.keyboard.type("lama3.1:8b")
        page.evaluate("document.getElementById('f-ctx').focus()")
        page.keyboard.type("16384")
        with page.expect_navigation():
            page.keyboard.press("Enter")
        assert "did you mean llama3.1:8b" in page.locator("[role=alert]").inner_text()
        page.locator("#did-you-mean a").first.focus()
        with page.expect_navigation():
            page.keyboard.press("Enter")
        want = api.estimate({"model": "llama3.1:8b", "ctx": "16384"}).data()["total_bytes"]
        assert int(page.get_attribute("#stat-total [data-bytes]", "data-bytes")) == want
        assert page.input_value("#f-model") == "llama3.1:8b" and page.input_value("#f-ctx") == "16384"
        page.go_back()
        assert page.input_value("#f-model") == "lama3.1:8b"
        assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 1
    finally:
        ctx.close()


def test_a_pasted_ollama_log_on_a_phone_and_back_to_the_estimate(server, browser):  # noqa: F811
    row = _corpus("ollama-10920-system-memory")
    with _page(browser, 375, server + "/diagnose") as page:
        page.fill("#f-text", row["text"])
        with page.expect_navigation():
            page.click("form.card button[type=submit]")
        assert page.locator("#stage").inner_text() == row["expected"]["stage"]
        assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 1
        with page.expect_navigation():
            page.click("#to-estimate a")
        want = api.estimate({"model": "deepseek-v2.5", "engine": "ollama"}).data()["total_bytes"]
        assert int(page.get_attribute("#stat-total [data-bytes]", "data-bytes")) == want
        assert page.input_value("#f-engine") == "ollama"


def test_a_shared_multi_gpu_url_reloads_to_the_same_figures(server, browser):  # noqa: F811
    p = {"command": "python -m sglang.launch_server --model-path Qwen/Qwen2.5-7B-Instruct --dp 2",
         "gpu": "2x RTX 3090"}
    want = api.estimate(p).data()["total_bytes"]
    with _page(browser, 1280, server + "/") as page:
        page.fill("#f-command", p["command"])
        page.fill("#f-gpu", p["gpu"])
        with page.expect_navigation():
            page.click("form.card button[type=submit]")
        shared = page.url
        assert int(page.get_attribute("#stat-total [data-bytes]", "data-bytes")) == want
        page.goto(shared)
        page.reload()
        assert int(page.get_attribute("#stat-total [data-bytes]", "data-bytes")) == want
        assert page.locator("[data-device]").count() == 3  # CUDA0, CUDA1 and the host


def test_a_pasted_command_is_sent_from_the_keyboard(server, browser):  # noqa: F811
    """Enter in the command box starts a new line; Ctrl+Enter sends the form, as Enter does from a field (the box's
    label says so). Here a two-GPU `vllm serve --tensor-parallel-size 2`, whose figures are the CLI's."""
    command = "vllm serve Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size 2 --max-model-len 32768"
    with _page(browser, 1280, server + "/") as page:
        assert "Ctrl+Enter sends it" in page.locator("label[for=f-command]").inner_text()
        page.focus("#f-gpu")
        page.keyboard.type("2x RTX 3090")
        page.focus("#f-command")
        page.keyboard.type(command)
        with page.expect_navigation():
            page.keyboard.press("Control+Enter")
        want = api.estimate({"gpu": "2x RTX 3090", "command": command}).data()
        assert int(page.get_attribute("#stat-total [data-bytes]", "data-bytes")) == want["total_bytes"]
        assert [d["id"] for d in want["devices"]] == ["CUDA0", "CUDA1"]
        assert page.locator("[data-device=CUDA1]").count() == 1
