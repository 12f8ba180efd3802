"""Hostile input, sixteenth sweep."""

from __future__ import annotations

import re

import pytest

from oomkit.engines.command import QUOTE_LIMIT, clip_word
from tests.sweep_harness import offline, one_line_or_answer, run_cli  # noqa: F401 (autouse: no network)

_LLAMA = ["--", "llama-server", "-m", "qwen3:8b"]


# ---- an over-long argument in llama.cpp's -fa refusal gets the shared clip (its length said) ----

@pytest.mark.parametrize("flag", ["-fa", "--flash-attn"])
def test_an_over_long_fa_value_is_clipped_with_its_length(flag):
    word = "y" * 9000
    rc, _, err = run_cli("estimate", "--vram", "24GiB", *_LLAMA, flag, word)
    one_line_or_answer(rc, err, flag)
    assert rc == 2, err[:300]
    shown = clip_word(word)
    assert shown == "y" * QUOTE_LIMIT + "... (9,000 characters)"
    assert f"{flag} {shown}: llama.cpp stops: unkown value for --flash-attn: '{shown}'" in err, err[:600]
    assert "y" * (QUOTE_LIMIT + 1) not in err and len(err) < 600, err[:600]


@pytest.mark.parametrize("argv,words", [
    (["--override-kv", "a=q:" + "y" * 9000], r"--override-kv 'a=q:y{76}\.\.\.' \(9,004 characters\): the type must"),
    (["-hf", "https://" + "y" * 9000], r"-hf 'https://y{72}\.\.\.' \(9,008 characters\): llama\.cpp takes"),
])
def test_other_quoted_llama_refusals_say_the_length(argv, words):
    rc, _, err = run_cli("estimate", "--vram", "24GiB", "--", "llama-server", *(["-m", "qwen3:8b"] if argv[0] != "-hf"
                                                                              else []), *argv)
    one_line_or_answer(rc, err, argv[0])
    assert rc == 2 and re.search(words, err), err[:600]
