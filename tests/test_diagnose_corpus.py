"""diagnose() against real error texts and logs from public issues (tests/fixtures/diagnose/corpus.jsonl, each with
its source URL). The expected program, stage and numbers were read from each text; the numbers are the engine's
printed figures converted to bytes the way that engine meant its units."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oomkit.diagnose import diagnose
from oomkit.diagnose.signatures import ENGINES, STAGES

CORPUS = Path(__file__).parent / "fixtures" / "diagnose" / "corpus.jsonl"
CASES = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_corpus_is_large_and_cited():
    assert len(CASES) >= 80
    assert len({c["id"] for c in CASES}) == len(CASES)
    for c in CASES:
        assert c["source"].startswith("https://github.com/"), c["id"]
        assert c["expected"]["stage"] in STAGES, c["id"]
        assert c["expected"]["engine"] in (*ENGINES, None), c["id"]


def _param(c):
    marks = [pytest.mark.xfail(reason=c["known_miss"], strict=True)] if c.get("known_miss") else []
    return pytest.param(c, id=c["id"], marks=marks)


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_corpus_case(case):
    d = diagnose(case["text"])
    exp = case["expected"]
    assert (d.engine, d.stage) == (exp["engine"], exp["stage"]), d.to_dict()
    for key, value in exp["numbers"].items():
        assert d.numbers.get(key) == value, (key, d.numbers)
    if "host" in exp:
        assert d.host == exp["host"]
    if "phase" in exp:  # the start-up phase after the KV cache that ran out
        assert d.phase == exp["phase"]
    for key, value in exp.get("settings", {}).items():  # what a start-up log says was in force
        assert d.settings.get(key) == value, (key, d.settings)
    for key, value in exp.get("buffers", {}).items():  # the engine's own start-up figures
        assert d.buffers.get(key) == value, (key, d.buffers)
    out = d.to_dict()
    json.dumps(out)  # serialisable
    if d.stage not in ("not_oom", "unknown"):
        assert out["fixes"], "an out-of-memory with no fix"
