"""The held-out diagnose sets' shared check (tests/fixtures/diagnose/heldout4.jsonl to heldout9.jsonl): each case is
cited and new, and diagnose() answers with the program, the stage (and phase, host, backend), the figures the text
carries and the fix the thread shows (`fix`: substrings of the fixes; `absent`: advice that would be wrong for that
log; `first`: what the first fix must say); `known_miss` makes a case a strict xfail. The garble pass (sets 6 to 9):
each log garbled (`garbled`, `garbled_params`) and read through the command line (`check_garbled_exits_cleanly`);
the readable garbles keep each case's reading (`readable_garble_changes`, sets 7 to 9)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from oomkit import cli
from oomkit.diagnose import diagnose
from oomkit.diagnose.signatures import ENGINES, STAGES

FIXTURES = Path(__file__).parent / "fixtures" / "diagnose"


# TensorRT-LLM's executor refusing a component (_torch/pyexecutor/py_executor_creator.py
# _ExecutorMemoryMonitor._maybe_explain_if_oom, 1.0+), `{c}` its friendly name; sets 15 and 16 put their own head on it
TRTLLM_EXECUTOR_OOM = ("Executor creation failed due to insufficient GPU memory.\n\nThe following component could not "
                       "be created: {c}\nTotal GPU memory (GiB): 79.19\nFree GPU memory before component creation "
                       "attempt (GiB): 12.50\n")


def load_cases(name: str) -> list[dict]:
    return [json.loads(line) for line in (FIXTURES / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def check_cited_and_new(name: str, cases: list[dict], minimum: int = 20, fix_required: bool = False) -> None:
    """At least `minimum` cases, each from a GitHub thread that is no other diagnose fixture's source (the URL as a
    whole JSON string: issue 123 is not issue 1234), with what oomkit answered before (and, with fix_required, the
    fix its thread confirms)."""
    assert len(cases) >= minimum and len({c["id"] for c in cases}) == len(cases)
    others = "".join(p.read_text(encoding="utf-8") for p in FIXTURES.glob("*.jsonl") if p.name != name)
    for c in cases:
        assert c["source"].startswith("https://github.com/"), c["id"]
        assert f'"{c["source"]}"' not in others, c["id"]  # held out: in no other diagnose fixture
        assert c["expected"]["stage"] in STAGES and c["expected"]["engine"] in ENGINES, c["id"]
        assert c["before"], c["id"]
        assert c.get("fix_that_worked") or not fix_required, c["id"]


def _fix_texts(d) -> list[str]:
    return [" ".join([f.summary, *f.flags, *(f"{k}={v}" for k, v in f.env)]) for f in d.fixes]


def params(cases: list[dict]) -> list:
    return [pytest.param(c, id=c["id"], marks=[pytest.mark.xfail(reason=c["known_miss"], strict=True)]
                         if c.get("known_miss") else []) for c in cases]


def heldout_tests(name: str, minimum: int = 20, fix_required: bool = False) -> tuple:
    """A set's cases and its two tests, for the set's module to bind at module level (pytest collects them there):
    every case cited and new (check_cited_and_new), and each case read as its thread shows (check_case; a strict xfail
    where it carries known_miss). -> (cases, test_cases_are_cited_and_new, test_heldout_case)"""
    cases = load_cases(name)

    def test_cases_are_cited_and_new():
        check_cited_and_new(name, cases, minimum, fix_required)

    @pytest.mark.parametrize("case", params(cases))
    def test_heldout_case(case):
        check_case(case)

    return cases, test_cases_are_cited_and_new, test_heldout_case


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


def ansi(text: str) -> str:
    """Each line coloured the way a terminal log is (llama-server --log-colors, vLLM's coloured levels)."""
    return "\n".join(f"\x1b[3{i % 7 + 1}m{ln}\x1b[0m" if ln else ln for i, ln in enumerate(text.split("\n")))


def rewrapped(text: str, width: int = 60) -> str:
    """Each line re-wrapped at its spaces to `width` columns, as a narrow terminal or a mail client leaves a paste."""
    return "\n".join("\n".join(textwrap.wrap(ln, width, break_long_words=True, break_on_hyphens=False)) or ln
                     for ln in text.split("\n"))


def interleaved(text: str, other: str) -> str:
    """Two programs' lines alternating, as two processes writing to one terminal."""
    a, b = text.split("\n"), other.split("\n")
    out: list[str] = []
    for i in range(max(len(a), len(b))):
        out += ([a[i]] if i < len(a) else []) + ([b[i]] if i < len(b) else [])
    return "\n".join(out)


def garbled(text: str, other: str | None = None) -> dict[str, bytes]:
    """The log truncated (first half, second half, one line cut mid-way), its bytes corrupted (every seventh byte
    flipped, NUL bytes, CRLF line ends, a UTF-8 sequence cut in two) and emptied; with `other` (another case's log)
    also re-wrapped at 60 columns, ANSI-coloured and interleaved line by line with `other`."""
    raw = text.encode("utf-8")
    lines = text.split("\n")
    mid = max(1, len(lines) // 2)
    flipped = bytes(b ^ 0x5A if i % 7 == 3 else b for i, b in enumerate(raw))
    multibyte = next((i for i, b in enumerate(raw) if b >= 0xC0), None)
    out = {
        "first-half": raw[: len(raw) // 2],
        "second-half": raw[len(raw) // 2:],
        "line-cut": "\n".join([*lines[: mid - 1], lines[mid - 1][: len(lines[mid - 1]) // 2]]).encode("utf-8"),
    }
    if other is not None:
        out["rewrapped"] = rewrapped(text).encode("utf-8")
        out["ansi"] = ansi(text).encode("utf-8")
    out["crlf"] = raw.replace(b"\n", b"\r\n")
    if other is not None:
        out["interleaved"] = interleaved(text, other).encode("utf-8")
    out |= {
        "flipped": flipped,
        "nul": raw.replace(b" ", b"\x00", 40),
        "empty": b"",
        "whitespace": b" \n\t\n",
    }
    if multibyte is not None:
        out["utf8-cut"] = raw[: multibyte + 1] + raw[multibyte + 3:]
    return out


def garbled_params(cases: list[dict]) -> list:
    """Each case's garbles (garbled, with the next case's log as `other`) as (cid, kind, data) params."""
    return [pytest.param(c["id"], kind, data, id=f"{c['id']}-{kind}")
            for i, c in enumerate(cases)
            for kind, data in garbled(c["text"], cases[(i + 1) % len(cases)]["text"]).items()]


def readable_garble_changes(cases: list[dict], kind: str) -> list[tuple]:
    """The cases (outside known_miss) whose engine and stage change when the log is garbled as `kind`: "rewrapped-80"
    (re-wrapped at 80 columns), "run-together" (the whole log on one line) or a key of garbled() ("ansi", "crlf").
    -> [(id, engine, stage)]"""
    from oomkit.diagnose import diagnose

    changed = []
    for i, c in enumerate(cases):
        if c.get("known_miss"):
            continue
        if kind == "rewrapped-80":
            text = rewrapped(c["text"], 80)
        elif kind == "run-together":
            text = " ".join(c["text"].split("\n"))
        else:
            text = garbled(c["text"], cases[(i + 1) % len(cases)]["text"])[kind].decode("utf-8")
        d = diagnose(text)
        if (d.engine, d.stage) != (c["expected"]["engine"], c["expected"]["stage"]):
            changed.append((c["id"], d.engine, d.stage))
    return changed


def check_garbled_exits_cleanly(cid: str, kind: str, data: bytes, tmp_path: Path, capsys) -> None:
    """Through the command line (text and --json): exit 0 (placed), 1 (nothing placed) or 2 (unreadable, with one
    `oomkit: error:` line), never an internal error or a traceback."""
    path = tmp_path / "crash.log"
    path.write_bytes(data)
    for argv in (["diagnose", str(path)], ["diagnose", "--json", str(path)]):
        rc = cli.main(argv)
        out, err = capsys.readouterr()
        assert rc in (0, 1, 2), (cid, kind, rc, err)
        assert "Traceback" not in out + err and "internal error" not in err, (cid, kind, err)
        if rc == 2:
            lines = [ln for ln in err.splitlines() if ln.strip()]
            assert len(lines) == 1 and lines[0].startswith("oomkit: error:"), (cid, kind, err)
        else:
            assert out.strip(), (cid, kind)


READABLE_GARBLES = ("ansi", "crlf", "rewrapped-80", "run-together")


def garble_tests(cases: list[dict], kinds: tuple[str, ...] = READABLE_GARBLES) -> tuple:
    """A set's two garble tests, for the set's module to bind at module level: every garbled form of each log exits
    cleanly (check_garbled_exits_cleanly), and the readable ones (`kinds`: colour codes, CRLF line ends, a re-wrap at
    80 columns, the whole log run together on one line as a paste whose line ends were lost) change no case's engine
    and stage (at 60 columns a key can run over three lines, or a long path be cut inside it: that pass only has to
    exit cleanly). -> (test_garbled_log_exits_cleanly, test_readable_garbles_keep_the_reading)"""

    @pytest.mark.parametrize("cid,kind,data", garbled_params(cases))
    def test_garbled_log_exits_cleanly(cid, kind, data, tmp_path, capsys):
        check_garbled_exits_cleanly(cid, kind, data, tmp_path, capsys)

    @pytest.mark.parametrize("kind", list(kinds))
    def test_readable_garbles_keep_the_reading(kind):
        changed = readable_garble_changes(cases, kind)
        assert not changed, changed

    return test_garbled_log_exits_cleanly, test_readable_garbles_keep_the_reading
