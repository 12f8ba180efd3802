"""diagnose() on a fifth held-out set of public crash logs (tests/fixtures/diagnose/heldout5.jsonl), 2023-2026,
weighted to kinds the earlier sets had few of: llama.cpp tools that skip --fit (llama-bench, batched-bench), Ollama's
new-engine compute and KV failures (CUDA, Vulkan), the projector's warm-up buffer, Vulkan per-allocation limits,
vLLM V1 start-up checks, SGLang CUDA-graph capture failures that are not memory, FlashInfer's fixed workspace, Metal
command-buffer failures from MLX servers and macOS's own log, LM Studio's guardrail, PyTorch on ROCm and under WSL.
Each case is cited with the lines kept verbatim; it checks the program, the stage that ran out, the figures the text
carries and the fix the thread shows (`fix`: substrings of the fixes; `absent`: advice that would be wrong for that
log; `first`: what the first fix must say). `before` records what oomkit answered before the rules these logs led
to; a case still missed after a source-backed attempt carries `known_miss` (a strict xfail)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oomkit.diagnose import diagnose
from oomkit.diagnose.signatures import ENGINES, STAGES

FIXTURE = Path(__file__).parent / "fixtures" / "diagnose" / "heldout5.jsonl"
CASES = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_cases_are_cited_and_new():
    assert len(CASES) >= 20 and len({c["id"] for c in CASES}) == len(CASES)
    others = "".join(p.read_text(encoding="utf-8") for p in FIXTURE.parent.glob("*.jsonl") if p != FIXTURE)
    for c in CASES:
        assert c["source"].startswith("https://github.com/"), c["id"]
        assert c["source"] not in others, c["id"]  # held out: in no other diagnose fixture
        assert c["expected"]["stage"] in STAGES and c["expected"]["engine"] in ENGINES, c["id"]
        assert c["before"], c["id"]


def _fix_texts(d) -> list[str]:
    return [" ".join([f.summary, *f.flags, *(f"{k}={v}" for k, v in f.env)]) for f in d.fixes]


def _param(c):
    marks = [pytest.mark.xfail(reason=c["known_miss"], strict=True)] if c.get("known_miss") else []
    return pytest.param(c, id=c["id"], marks=marks)


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_heldout_case(case):
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
