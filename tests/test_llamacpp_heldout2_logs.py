"""A second held-out set of llama.cpp start-up logs (tests/fixtures/engine_logs/llamacpp_heldout2/, each with its
source), chosen for the backends and features with the least evidence: Vulkan on an integrated GPU, SWA + MoE and
per-layer embeddings, SYCL, Metal, ROCm, `--fit` decisions. Read through oomkit with the log's own flags, build and
free memory, nothing tuned, by the held-out harness (tests/test_llamacpp_heldout_logs.py): model, KV, recurrent
state and output buffers exact, compute within 10%; a figure oomkit misses stays a strict xfail with its measured
error (the fixture's known_miss)."""

import json
from pathlib import Path

import pytest

from tests.test_llamacpp_heldout_logs import assert_cited_and_checked, check, params

FIXTURES = sorted((Path(__file__).parent / "fixtures" / "engine_logs" / "llamacpp_heldout2").glob("*.json"))


@pytest.mark.parametrize(("path", "what"), params(FIXTURES))
def test_held_out_log(path, what):
    check(json.loads(path.read_text()), what)


def test_held_out_logs_are_cited_and_checked():
    assert_cited_and_checked(FIXTURES, 6)
