"""--engine-version numbers no release of the engine has (engines/versions.py parse_release): refused in one line,
as a release older than the oldest modelled already is (SGLang's 0.4.0, transformers' 4.36).

The releases: PyPI's vllm files (read 2026-12-07) number two releases with four numbers, 0.9.0.1 and 0.10.1.1, and
none 0.0.0 (the first is 0.0.1); no SGLang, transformers or mlx-lm release on PyPI and no Ollama tag has a fourth
number. Before: `--engine-version 0.0.0` ran vLLM's oldest rules without a word, and 0.10.1.1.1.1 and 0.10.1.2 were
read as 0.10.1.
"""

from __future__ import annotations

import pytest

from oomkit.engines.versions import parse_release
from oomkit.errors import OomkitError
from tests.sweep_harness import offline, run_cli  # noqa: F401 (autouse: no network, a fresh cache)

EX = "a release such as 0.10.2"


@pytest.mark.parametrize("text, words", [
    ("0.0.0", "no vLLM release is numbered 0.0.0"),
    ("v0.0.0", "no vLLM release is numbered 0.0.0"),
    ("0.0", "no vLLM release is numbered 0.0.0"),
    ("0.10.1.1.1.1", "the nearest is 0.10.1 or 0.10.1.1"),
    ("0.10.1.2", "the nearest is 0.10.1 or 0.10.1.1"),
    ("0.11.0.1", "the nearest is 0.11.0"),
])
def test_a_vllm_number_no_release_has_is_refused(text, words):
    with pytest.raises(OomkitError, match=words):
        parse_release(text, "0.33.0", "vLLM", EX, tail=r"(?s:.*)")
    rc, _, err = run_cli("estimate", "Qwen/Qwen3-8B", "--engine", "vllm", "--vram", "80GiB", "--engine-version", text)
    lines = err.splitlines()
    assert rc == 2 and len(lines) == 1 and lines[0].startswith("oomkit: error:") and words in lines[0], err


@pytest.mark.parametrize("text, read", [
    ("0.10.1.1", (0, 10, 1)),  # a release: its rules are 0.10.1's
    ("0.9.0.1", (0, 9, 0)),
    ("0.0.1", (0, 0, 1)),  # vLLM's first upload
    ("0.6.3.post1", (0, 6, 3)),
    ("0.10.1+cu128", (0, 10, 1)),
    ("0.11.0rc2", (0, 11, 0)),
    ("0.10.2.dev2+gf5635d62e.d20250807", (0, 10, 2)),
    # a development build after the four-number 0.10.1.1, as vLLM's GH200 start-up log prints its version
    # (tests/test_vllm.py's fixture): the code of the 0.10.1 line, not a release number to refuse
    ("0.10.1.2.dev0", (0, 10, 1)),
    ("0.10.1.2.dev0+g1234abcd.d20250821", (0, 10, 1)),
])
def test_vllm_releases_and_their_suffixes_still_read(text, read):
    assert parse_release(text, "0.33.0", "vLLM", EX, tail=r"(?s:.*)") == read


def test_the_other_engines_refuse_a_fourth_number_and_zero():
    with pytest.raises(OomkitError, match="its releases have three"):
        parse_release("0.31.3.1", "0.31.3", "mlx-lm", "a release such as 0.31.3")
    with pytest.raises(OomkitError, match="numbered 0.0.0"):
        parse_release("0.0.0", "0.31.3", "mlx-lm", "a release such as 0.31.3")
    assert parse_release("4.57.0.dev0", "4.57.6", "transformers", "4.57.6") == (4, 57, 0)
