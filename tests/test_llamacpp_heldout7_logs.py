"""A seventh held-out set of llama.cpp start-up logs (tests/fixtures/engine_logs/llamacpp_heldout7/, each with its
source): the logs of TOSUKUi's blog post on an AMD Ryzen AI Max+ 395 (Strix Halo, Radeon 8060S gfx1151), committed
to the blog's repository, at build 5398: Qwen3-0.6B Q8_0 through Vulkan (RADV, uma) and through ROCm (HIP, the same
iGPU), and Qwen3-235B-A22B Q3_K_S through Vulkan with -ngl 93 (93 of 95 layers, layer 0 and the output on the host).
Read through oomkit with the log's own flags and build, nothing tuned, by the held-out harness
(tests/test_llamacpp_heldout_logs.py): model, KV and output buffers exact, compute within 10%; a figure oomkit misses
stays a strict xfail with its measured error (the fixture's known_miss)."""

import json
from pathlib import Path

import pytest

from tests.test_llamacpp_heldout_logs import assert_cited_and_checked, check, params

FIXTURES = sorted((Path(__file__).parent / "fixtures" / "engine_logs" / "llamacpp_heldout7").glob("*.json"))


@pytest.mark.parametrize(("path", "what"), params(FIXTURES))
def test_held_out_log(path, what):
    check(json.loads(path.read_text()), what)


def test_held_out_logs_are_cited_and_checked():
    assert_cited_and_checked(FIXTURES, 4)
