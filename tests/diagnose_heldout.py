"""The held-out diagnose sets' shared check (tests/fixtures/diagnose/heldout4.jsonl to heldout6.jsonl): each case is
cited and new, and diagnose() answers with the program, the stage (and phase, host, backend), the figures the text
carries and the fix the thread shows (`fix`: substrings of the fixes; `absent`: advice that would be wrong for that
log; `first`: what the first fix must say); `known_miss` makes a case a strict xfail."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oomkit.diagnose import diagnose
from oomkit.diagnose.signatures import ENGINES, STAGES

FIXTURES = Path(__file__).parent / "fixtures" / "diagnose"


def load_cases(name: str) -> list[dict]:
    return [json.loads(line) for line in (FIXTURES / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def check_cited_and_new(name: str, cases: list[dict]) -> None:
    assert len(cases) >= 20 and len({c["id"] for c in cases}) == len(cases)
    others = "".join(p.read_text(encoding="utf-8") for p in FIXTURES.glob("*.jsonl") if p.name != name)
    for c in cases:
        assert c["source"].startswith("https://github.com/"), c["id"]
        assert c["source"] not in others, c["id"]  # held out: in no other diagnose fixture
        assert c["expected"]["stage"] in STAGES and c["expected"]["engine"] in ENGINES, c["id"]
        assert c["before"], c["id"]


def _fix_texts(d) -> list[str]:
    return [" ".join([f.summary, *f.flags, *(f"{k}={v}" for k, v in f.env)]) for f in d.fixes]


def params(cases: list[dict]) -> list:
    return [pytest.param(c, id=c["id"], marks=[pytest.mark.xfail(reason=c["known_miss"], strict=True)]
                         if c.get("known_miss") else []) for c in cases]


def check_case(case: dict) -> None:
    d = diagnose(case["text"])
    exp = case["expected"]
    assert (d.engine, d.stage) == (exp["engine"], exp["stage"]), d.to_dict()
    for key in ("host", "backend", "phase"):
        if key in exp:
            assert getattr(d, key) == exp[key], (key, getattr(d, key))
    for key, value in exp["numbers"].items():
        assert d.numbers.get(key) == value, (key, d.numbers)
    for key, value in exp.get("settings", {}).items():
        assert d.settings.get(key) == value, (key, d.settings)
    texts = _fix_texts(d)
    text = "\n".join(texts)
    for want in case["fix"]:
        assert want in text, (want, text)
    for wrong in case.get("absent", ()):
        assert wrong not in text, (wrong, text)
    for want in case.get("first", ()):
        assert texts and want in texts[0], (want, texts)
    for want in case.get("causes_any", ()):
        assert any(want in c for c in d.causes), (want, d.causes)
    if exp["stage"] in ("not_oom", "unknown") and not case["fix"]:
        assert not d.fixes or exp["stage"] == "unknown", texts
    json.dumps(d.to_dict())
