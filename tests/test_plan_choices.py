"""What plan and fit offer beyond fitting: an option too slow to read along ranks after the usable ones of its tier,
and a weight format is named for a GGUF repo only when its listing has it (else labelled as one to make or find)."""

from __future__ import annotations

import json
import shlex

import pytest

from oomkit.cli import main
from oomkit.model.hub_cache import cache_root, endpoint, repo_dir, site
from oomkit.plan import published
from oomkit.plan.fit import fit
from oomkit.plan.options import Goals
from oomkit.plan.search import UNLISTED, plan
from oomkit.request import devices_from

# Reading speed: 238 words per minute (Brysbaert 2019, J. Memory and Language 109, 104047), a token ~3/4 of a word.
READING_TOKENS_PER_S = 238 / 60 / 0.75  # 5.3


# ---------------------------------------------------------------------------------------------------------
# 1. Speed within the GPU+RAM tier


def test_options_too_slow_to_read_rank_after_the_usable_ones():
    """Qwen3 32B on an 8 GB RTX 4060: nothing fits on the GPU, so every option keeps layers in system RAM. BF16
    weights are 2 bytes x 32.8 B parameters = 65.5 GB, 1.02 GB per layer of 64: an 8 GiB card holds at most 8
    layers, so one token reads >= 56/64 x 65.5 GB = 57 GB from RAM at 89.6 GB/s (the stated default): <= 1.57 tok/s.
    Such an option used to rank first (most bits per weight); now every option whose bound reaches reading speed
    comes first, the most bits among them first."""
    p = plan("qwen3:32b", "llama.cpp", devices=devices_from(gpu="RTX 4060"), goals=Goals(), limit=None)
    assert p.tier == 2 and all(o.tier == 2 for o in p.options)
    bf16 = [o for o in p.options if o.weight_format == "BF16"]
    assert bf16 and all(o.rating.tokens_per_s < 89.6e9 / (56 / 64 * 2 * 32.8e9) for o in bf16)
    slow = [o.rating.tokens_per_s < 5.0 for o in p.options]
    assert not slow[0] and any(slow) and slow == sorted(slow)  # every usable option before every slow one
    best = p.best
    assert best.rating.tokens_per_s >= 5.0 and best.weight_format != "BF16"
    usable = [o for o in p.options if o.rating.tokens_per_s >= 5.0]
    assert best.rating.weight_bits == max(o.rating.weight_bits for o in usable)
    assert any("under 5 tok/s" in n and "ranked after" in n for n in p.notes)
    assert 5.0 <= READING_TOKENS_PER_S < 5.5  # the threshold is reading speed, rounded down


def test_json_marks_the_options_below_a_usable_speed(capsys):
    assert main(["plan", "qwen3:32b", "--gpu", "RTX 4060", "--json", "--limit", "40"]) == 0
    options = json.loads(capsys.readouterr().out)["plan"]["options"]
    flags = [o["below_usable_speed"] for o in options]
    assert flags == sorted(flags) and True in flags and False in flags
    assert all(o["below_usable_speed"] == (o["decode_tokens_per_s_bound"] < 5.0) for o in options
               if abs(o["decode_tokens_per_s_bound"] - 5.0) > 0.05)


# ---------------------------------------------------------------------------------------------------------
# 2. Formats a named GGUF repo publishes

# The GGUF files of Qwen/Qwen3-8B-GGUF as a second-hand page lists them (https://blog.exeip.com/archives/
# qwen3-ggufmo-xing-zhong-ji-zhong-bu-tong-liang-hua-mo-xing-de-qu-bie: Q4_K_M, Q5_0, Q5_K_M, Q6_K, Q8_0), written
# into a temporary hub cache the way model/hub.py stores the hub's listing; the commit is a placeholder.
QWEN_LISTING = {f"Qwen3-8B-{q}.gguf": 1 << 30 for q in ("Q4_K_M", "Q5_0", "Q5_K_M", "Q6_K", "Q8_0")}
LISTED = {"Q4_K_M", "Q5_0", "Q5_K_M", "Q6_K", "Q8_0"}


@pytest.fixture
def hub_cache(tmp_path, monkeypatch):
    """An empty hub cache of this test's own, offline; listings written into it with `listed`."""
    monkeypatch.setenv("OOMKIT_CACHE", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def listed(repo: str, files: dict[str, int]) -> None:
    d = repo_dir(cache_root(), site(endpoint()), repo, "main")
    d.mkdir(parents=True, exist_ok=True)
    (d / "info.json").write_text(json.dumps({"repo_id": repo, "revision": "main", "commit": "0" * 40,
                                             "files": {**files, "README.md": 1000}, "gated": False}))


def test_gguf_repo_of_a_model_argument():
    assert published.gguf_repo_of("Qwen/Qwen3-8B-GGUF") == "Qwen/Qwen3-8B-GGUF"
    assert published.gguf_repo_of("Qwen/Qwen3-8B-GGUF:Q8_0") == "Qwen/Qwen3-8B-GGUF"
    assert published.gguf_repo_of("hf.co/bartowski/Qwen_Qwen3-8B-GGUF:Q4_K_M") == "bartowski/Qwen_Qwen3-8B-GGUF"
    for other in ("qwen3:8b", "Qwen/Qwen3-8B", "./model.gguf", "", None):
        assert published.gguf_repo_of(other) is None


def test_plan_names_only_the_formats_the_repo_lists(hub_cache):
    listed("Qwen/Qwen3-8B-GGUF", QWEN_LISTING)
    p = plan("Qwen/Qwen3-8B-GGUF", "llama.cpp", devices=devices_from(gpu="RTX 4060"), goals=Goals(min_ctx=40960),
             limit=None)
    assert p.options and {o.quant for o in p.options} <= LISTED
    assert all("-hf Qwen/Qwen3-8B-GGUF:" in o.command for o in p.options)
    assert not any(UNLISTED in o.label for o in p.options)
    note = next(n for n in p.notes if n.startswith("not planned:"))
    assert "IQ2_XXS" in note and "Qwen/Qwen3-8B-GGUF" in note


def test_plan_labels_formats_of_a_repo_it_has_no_listing_of(hub_cache):
    p = plan("Qwen/Qwen3-8B-GGUF", "llama.cpp", devices=devices_from(gpu="RTX 4060"), goals=Goals(min_ctx=40960))
    assert p.options and all(UNLISTED in o.label for o in p.options)
    note = next(n for n in p.notes if "does not know which GGUF files it publishes" in n)
    assert "llama-quantize" in note and p.options[0].quant in note


def test_plan_of_a_catalog_name_is_unchanged_by_listings(hub_cache):
    """A name that is no GGUF repo (qwen3:8b): the planner's own -hf repo carries no label."""
    p = plan("qwen3:8b", "llama.cpp", devices=devices_from(gpu="RTX 4060"), goals=Goals(min_ctx=40960), limit=3)
    assert p.options and not any(UNLISTED in o.label for o in p.options)


FIT_ARGV = shlex.split("llama-server -hf Qwen/Qwen3-8B-GGUF:Q8_0 -c 40960")


def test_fit_turns_to_a_format_the_repo_lists(hub_cache):
    """8B at Q8_0 with 40K of context on 7 GiB: the fix used to name Q3_K_M, which Qwen's own repo does not
    publish; with the repo's listing known, only its files are suggested."""
    listed("Qwen/Qwen3-8B-GGUF", QWEN_LISTING)
    f = fit(FIT_ARGV, devices_from("7GiB"))
    assert f.fits and f.tier == 1
    model = next(c for c in f.changes if c.flag == "model")
    assert model.after.rsplit(":", 1)[1] in LISTED
    assert "may not publish" not in model.why


def test_fit_labels_a_format_of_a_repo_it_has_no_listing_of(hub_cache):
    f = fit(FIT_ARGV, devices_from("6GiB"))
    model = next(c for c in f.changes if c.flag == "model")
    quant = model.after.rsplit(":", 1)[1]
    assert f"Qwen/Qwen3-8B-GGUF may not publish {quant}" in model.why and "llama-quantize" in model.why


def test_a_model_name_longer_than_a_file_name_is_refused_in_the_words_estimate_uses():
    # plan looks the name up as a local file first; the OS refuses a path part over NAME_MAX (255) with
    # ENAMETOOLONG, which reached the user as "[Errno 36] File name too long: '<300 characters>'"
    from tests.sweep_harness import run_cli  # the CLI in this process

    rc, out, err = run_cli("plan", "a" * 300, "--vram", "24GiB")
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and "a path part is 300 bytes, more than the 255 a file name may have" in err
    assert "Errno" not in err
