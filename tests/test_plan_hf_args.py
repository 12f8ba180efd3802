"""The model argument plan writes for a Hugging Face GGUF repo, by what the llama.cpp build takes
(build = `git rev-list --count <commit>` on master):
- PR #6234 "common : add HF arg helpers" (80bd33bc, b2503): -hfr / --hf-repo REPO with -hff / --hf-file FILE in
  common.cpp (main); the file is required ("--hf-repo requires either --hf-file or --model", removed only by #11195);
- PR #6192 (f482bb2e, b2514): the server's own parser takes -hfr / -hff too;
- PR #11195 "common : support tag-based --hf-repo like on ollama" (00b4c3da, b4470): the -hf alias and REPO:QUANT;
- before -hfr, only -m FILE: plan writes `-m models/<owner>_<repo>_<file>` (the name llama.cpp's own cache gives a
  download from b4470, which check reads back as REPO:QUANT) with a curl download in its notes
  (tests/test_fit_outcomes7.py tests that cut-off).
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from oomkit.engines.base import get_engine
from oomkit.engines.llamacpp.args import format_command, model_args, published_file
from oomkit.model.hub_cache import cache_root, endpoint, repo_dir, site
from oomkit.plan.fit import fit
from oomkit.plan.search import plan
from oomkit.request import devices_from
from tests.sweep_harness import offline  # noqa: F401 (the autouse fixture: no network, a fresh cache)

REPO = "Qwen/Qwen1.5-14B-Chat-GGUF"
FILE = "qwen1_5-14b-chat-q4_k_m.gguf"


@pytest.mark.parametrize(("build", "hf_file", "want"), [
    (2513, FILE, ["-m", f"models/Qwen_Qwen1.5-14B-Chat-GGUF_{FILE}"]),  # before -hfr: the local path
    (2513, None, ["-m", "models/Qwen_Qwen1.5-14B-Chat-GGUF_FILE-Q4_K_M.gguf"]),
    (2514, FILE, ["-hfr", REPO, "-hff", FILE]),
    (4469, FILE, ["-hfr", REPO, "-hff", FILE]),
    (4469, None, ["-hfr", REPO, "-hff", "FILE-Q4_K_M.gguf"]),  # the file's name not known offline: a placeholder
    (4470, None, ["-hf", f"{REPO}:Q4_K_M"]),
    (None, None, ["-hf", f"{REPO}:Q4_K_M"]),
])
def test_model_args_by_build(build, hf_file, want):
    assert model_args(REPO, "Q4_K_M", build, hf_file) == want


def test_a_catalog_name_is_written_as_its_gguf_repo_in_every_build():
    # llama-server cannot load "qwen3:8b" (no file, no repo): the GGUF repo plan names, as each build takes a repo
    assert model_args("qwen3:8b", None) == ["-hf", "unsloth/Qwen3-8B-GGUF"]
    assert model_args("qwen3:8b", None, 4000) == ["-hfr", "unsloth/Qwen3-8B-GGUF", "-hff", "FILE-Q4_K_M.gguf"]
    assert model_args("qwen3:8b", None, 2000) == ["-m", "models/unsloth_Qwen3-8B-GGUF_FILE-Q4_K_M.gguf"]


def test_format_command_names_programs_and_model_by_era():
    eng = get_engine("llama.cpp")
    for version, head in [("b2400", ["server", "-m", "models/Qwen_Qwen1.5-14B-Chat-GGUF_FILE-Q4_K_M.gguf"]),
                          ("b3000", ["server", "-hfr", REPO, "-hff", "FILE-Q4_K_M.gguf"]),  # no listing cached
                          ("b3142", ["llama-server", "-hfr", REPO, "-hff", "FILE-Q4_K_M.gguf"]),
                          ("b4470", ["llama-server", "-hf", f"{REPO}:Q4_K_M"])]:
        argv = format_command(REPO, replace(eng.settings(), engine_version=version), "Q4_K_M")
        assert argv[:len(head)] == head


def test_plan_says_the_placeholder_is_one():
    eng = get_engine("llama.cpp")
    p = plan(f"{REPO}:Q4_K_M", "llama.cpp", devices=devices_from(gpu="T4"),
             settings=replace(eng.settings(), engine_version="b3000"), fixed_format=True, limit=None)
    assert p.options and all("-hf" not in o.argv for o in p.options)
    assert all(o.argv[:5] == ("server", "-hfr", REPO, "-hff", "FILE-Q4_K_M.gguf") for o in p.options)
    note = next(n for n in p.notes if n.startswith("FILE-Q4_K_M.gguf: a placeholder"))
    assert REPO in note


def _listed(repo: str, files: dict[str, int]) -> None:
    """The repo's listing in oomkit's hub cache (as model/hub.py writes it), the way a plan finds it offline."""
    d = repo_dir(cache_root(), site(endpoint()), repo, "main")
    d.mkdir(parents=True, exist_ok=True)
    (d / "info.json").write_text(json.dumps({"repo_id": repo, "revision": "main", "commit": "0" * 40,
                                             "files": {**files, "README.md": 1000}, "gated": False}))


def test_a_cached_listing_names_the_file_for_hff():
    _listed(REPO, {FILE: 9_000_000_000, "qwen1_5-14b-chat-q8_0.gguf": 15_000_000_000,
                   "big-Q6_K-00001-of-00002.gguf": 1, "big-Q6_K-00002-of-00002.gguf": 1})
    assert published_file(REPO, "Q4_K_M") == FILE
    assert published_file(REPO, "Q6_K") is None  # split in parts: -hff names one file
    assert published_file(REPO, "Q2_K") is None
    eng = get_engine("llama.cpp")
    argv = format_command(f"{REPO}:Q4_K_M", replace(eng.settings(), engine_version="b3000"))
    assert argv[:5] == ["server", "-hfr", REPO, "-hff", FILE]
    argv = format_command(f"{REPO}:Q4_K_M", replace(eng.settings(), engine_version="b2400"))
    assert argv[:3] == ["server", "-m", f"models/Qwen_Qwen1.5-14B-Chat-GGUF_{FILE}"]


HFF_COMMAND = ["server", "-hfr", REPO, "-hff", "qwen1_5-14b-chat-q8_0.gguf", "-c", "16384", "-ngl", "99"]


def test_fit_changes_the_file_hff_names_not_the_repo():
    """-hff overrides a :QUANT tag (common/arg.cpp "it will override the quant in --hf-repo"), and b3000 has no tag:
    a new weight format is a new -hff file, the repo stays bare (was `-hfr REPO:Q5_K_M -hff ...q8_0.gguf`)."""
    got = fit(HFF_COMMAND, devices_from(gpu="T4"), engine_version="b3000")
    argv = list(got.command)
    assert argv[1:3] == ["-hfr", REPO]
    quant = argv[4].removeprefix("FILE-").removesuffix(".gguf")
    assert argv[4] == f"FILE-{quant}.gguf" and quant != "Q8_0"
    assert any(n.startswith(f"FILE-{quant}.gguf is a placeholder") for n in got.notes)


def test_fit_names_the_listed_file():
    _listed(REPO, {"qwen1_5-14b-chat-q8_0.gguf": 15_000_000_000, "qwen1_5-14b-chat-q5_k_m.gguf": 10_500_000_000,
                   "qwen1_5-14b-chat-q4_k_m.gguf": 9_000_000_000, "qwen1_5-14b-chat-q3_k_m.gguf": 7_000_000_000})
    argv = list(fit(HFF_COMMAND, devices_from(gpu="T4"), engine_version="b3000").command)
    assert argv[1:3] == ["-hfr", REPO]
    assert argv[4] in ("qwen1_5-14b-chat-q5_k_m.gguf", "qwen1_5-14b-chat-q4_k_m.gguf", "qwen1_5-14b-chat-q3_k_m.gguf")
