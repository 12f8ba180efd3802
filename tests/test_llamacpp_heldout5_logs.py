"""A fifth held-out set of llama.cpp start-up logs (tests/fixtures/engine_logs/llamacpp_heldout5/, each with its
source): the 2026 models the catalog gained from the GGUF metadata these same logs print (Qwen3.5 9B / 4B / 2B,
Granite 4.1 8B, Ministral 3 8B, Gemma 4 E4B and 12B; HilbertraumAI/HilbertRaum's b9849 Vulkan sweep on an RTX 3090).
The catalog entries took the shapes from the logs' metadata only; the buffers below were not used to build them.
Read through oomkit with the log's own flags, build and free memory, nothing tuned, by the held-out harness
(tests/test_llamacpp_heldout_logs.py): model, KV, recurrent state and output buffers exact, compute within 10%; a
figure oomkit misses stays a strict xfail with its measured error (the fixture's known_miss)."""

import json
from pathlib import Path

import pytest

from tests.test_llamacpp_heldout_logs import assert_cited_and_checked, check, params

FIXTURES = sorted((Path(__file__).parent / "fixtures" / "engine_logs" / "llamacpp_heldout5").glob("*.json"))


@pytest.mark.parametrize(("path", "what"), params(FIXTURES))
def test_held_out_log(path, what):
    check(json.loads(path.read_text()), what)


def test_held_out_logs_are_cited_and_checked():
    assert_cited_and_checked(FIXTURES, 7)
