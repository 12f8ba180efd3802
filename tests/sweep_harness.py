"""The real-world sweeps' shared harness (tests/test_real_world_sweep4.py, tests/test_real_world_sweep5.py): a case
(a real input cited by its thread), oomkit's command line run in this process, the promise every run keeps (an
answer, or exit 2 with one `oomkit: error:` line), a case's own expectation and the mutation pass. A sweep imports
`offline` (an autouse fixture: no network, a fresh cache) with the rest."""

from __future__ import annotations

import contextlib
import io
import json
import random
from collections.abc import Callable
from typing import NamedTuple

import pytest

from oomkit.cli import main
from oomkit.engines.shell_words import split_command

FIXED, STILL, RIGHT = "fixed", "still wrong", "right"  # wrong before this sweep and right now / still wrong / right before


@pytest.fixture(autouse=True)
def offline(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("OOMKIT_CACHE", str(tmp_path / "cache"))


def run_cli(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    """oomkit's command line in this process (a sweep runs it hundreds of times): exit code, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.ExitStack() as stack:
        if stdin is not None:
            stack.enter_context(_stdin(stdin))
        stack.enter_context(contextlib.redirect_stdout(out))
        stack.enter_context(contextlib.redirect_stderr(err))
        try:
            rc = main(list(args))
        except SystemExit as e:
            rc = e.code if isinstance(e.code, int) else 2
    return rc, out.getvalue(), err.getvalue()


@contextlib.contextmanager
def _stdin(text: str):
    import sys

    old = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(text.encode()), encoding="utf-8")
    try:
        yield
    finally:
        sys.stdin = old


def one_line_or_answer(rc: int, err: str, what: object) -> None:
    """The promise: an answer (0 / 1), or exit 2 with one `oomkit: error:` line; never a traceback or a bug exit."""
    assert rc in (0, 1, 2) and "Traceback" not in err and "internal error" not in err, (what, rc, err[-600:])
    if rc == 2:
        assert len([ln for ln in err.splitlines() if ln.startswith("oomkit: error:")]) == 1, (what, err)


class Case(NamedTuple):
    id: str
    url: str
    kind: str  # cmd: an engine command as posted; model: text pasted as MODEL; diag: an error message or log excerpt
    hardware: str | None  # --gpu as the thread names it (or --vram)
    version: str | None  # --engine-version: the release the thread names or dates
    status: str  # FIXED / STILL / RIGHT (see above)
    text: str
    expect: tuple


def hardware_args(c: Case) -> list[str]:
    if c.hardware is None:
        return []
    return ["--vram", c.hardware] if c.hardware.endswith("iB") else ["--gpu", c.hardware]


def version_args(c: Case) -> list[str]:
    return ["--engine-version", c.version] if c.version else []


def check_case(c: Case) -> None:
    """The case's own expectation, on `check` (or `diagnose`): the engine and model read (or the refusal), and where
    the case gives them the context, the settings, llama.cpp's n_ctx, whether it fits and a warning."""
    what, want = c.expect
    if c.kind == "diag":
        rc, out, err = run_cli("diagnose", "--json", "-", stdin=c.text)
        one_line_or_answer(rc, err, c.id)
        doc = json.loads(out)
        assert (doc["engine"], doc["stage"]) == (want["engine"], want["stage"]), (c.url, doc["engine"], doc["stage"])
        return
    args = ["check", c.text] if c.kind == "model" else ["check", "--json", *version_args(c), "--",
                                                         *split_command(c.text)]
    rc, out, err = run_cli(*args[:2], *hardware_args(c), *args[2:])
    one_line_or_answer(rc, err, c.id)
    if what == "refuses":
        assert rc == 2 and want in err, (c.url, err)
        return
    assert rc in (0, 1), (c.url, err)
    e = json.loads(out)["estimate"]
    assert e["engine"] == want["engine"] and want["model"] in e["model"]["name"], (c.url, e["engine"], e["model"])
    s = e["settings"]
    if "ctx" in want:
        assert want["ctx"] in (s.get("n_ctx"), s.get("max_model_len"), s.get("context_length")), (c.url, s)
    for key, value in want.get("settings", {}).items():
        assert s.get(key) == value, (c.url, key, s.get(key))
    if "n_ctx" in want:
        assert e["engine_view"]["n_ctx"] == want["n_ctx"], (c.url, e["engine_view"].get("n_ctx"))
    if "fits" in want:
        assert e["fits"] is want["fits"], (c.url, e["fits"], e["warnings"])
    if "warn" in want:
        assert any(want["warn"] in w for w in e["warnings"]), (c.url, e["warnings"])


def check_reading_case(c: Case, engine: str) -> None:
    """Sweeps 15 to 18: the reading (sweep 11's checks) or the refusal of `check` with `engine` (a MODEL case) or the
    command, and where the case gives them: the KV bytes a token, the devices (name, MiB) the --gpu words make, a
    context no larger than a bound, a note that must not appear."""
    from tests.test_real_world_sweep11 import _check_reading  # lazy: sweep 11 imports this module
    what, want = c.expect
    if c.kind == "model":
        rc, out, err = run_cli("check", c.text, "--engine", engine, *hardware_args(c), *version_args(c),
                               "--json")
    else:
        rc, out, err = run_cli("check", "--json", *hardware_args(c), *version_args(c), "--", *split_command(c.text))
    one_line_or_answer(rc, err, c.id)
    if what == "refuses":
        assert rc == 2 and want in err, (c.url, err)
        return
    assert rc in (0, 1), (c.url, err)
    e = json.loads(out)["estimate"]
    _check_reading(c, e, want)
    if "kv_tok" in want:
        assert e["kv_bytes_per_token"] == want["kv_tok"], (c.url, e["kv_bytes_per_token"], want["kv_tok"])
    if "devices" in want:
        got = [(d["name"], d["memory_bytes"] // 2**20) for d in e["devices"]]
        assert len(got) == len(want["devices"]) and all(
            name in g and mib == m for (name, mib), (g, m) in zip(want["devices"], got, strict=True)), (c.url, got)
    if "ctx_at_most" in want:
        s = e["settings"]
        ctx = s.get("context_length") or s.get("n_ctx") or s.get("max_model_len")
        assert ctx is not None and ctx <= want["ctx_at_most"], (c.url, ctx)
    if "no_warn" in want:
        assert not any(want["no_warn"] in w for w in e["warnings"]), (c.url, e["warnings"])


def case_params(cases: list[Case], still_wrong: dict[str, str]) -> list:
    """Each case, a strict xfail with its reason where it is still wrong (STILL)."""
    return [pytest.param(c, id=c.id, marks=pytest.mark.xfail(strict=True, reason=still_wrong[c.id]))
            if c.status == STILL else pytest.param(c, id=c.id) for c in cases]


def check_every_form(c: Case) -> None:
    """The command quoted as MODEL answers as `check -- ...` does; fit and plan answer or refuse, never crash."""
    argv = split_command(c.text)
    rc, _, err = run_cli("check", c.text, *hardware_args(c), *version_args(c))
    one_line_or_answer(rc, err, c.id)
    rc2, _, err2 = run_cli("check", *hardware_args(c), *version_args(c), "--", *argv)
    assert (rc == 2) == (rc2 == 2), (c.id, err, err2)
    for cmd in (["fit", "--json"], ["plan", "--limit", "1", "--json"]):
        rc, out, err = run_cli(*cmd, *hardware_args(c), *version_args(c), "--", *argv)
        one_line_or_answer(rc, err, (c.id, cmd[0]))


def sweep_tests(cases: list[Case], still_wrong: dict[str, str], check: Callable[[Case], None] = check_case) -> tuple:
    """A sweep's two tests over its cases, for the sweep's module to bind at module level (pytest collects them
    there): each case answers as its thread shows (`check`; a strict xfail where still wrong), and every form of each
    command answers or refuses in one line (check_every_form).
    -> (test_a_real_input_answers_as_the_thread_shows, test_every_form_of_a_real_command_answers_or_refuses_in_one_line)"""

    @pytest.mark.parametrize("c", case_params(cases, still_wrong))
    def test_a_real_input_answers_as_the_thread_shows(c):
        check(c)

    @pytest.mark.parametrize("c", [c for c in cases if c.kind == "cmd"], ids=lambda c: c.id)
    def test_every_form_of_a_real_command_answers_or_refuses_in_one_line(c):
        check_every_form(c)

    return test_a_real_input_answers_as_the_thread_shows, test_every_form_of_a_real_command_answers_or_refuses_in_one_line


def mutations(argv: list[str], rng: random.Random, garbles: tuple[str, ...] = ()) -> list[list[str]]:
    """The command cut, a word dropped, doubled or garbled (reversed, a combining mark and a full-width digit added,
    emptied, 40 nines, -1, and `garbles`)."""
    n = len(argv)
    out = [argv[:k] for k in rng.sample(range(1, n), min(n - 1, 3))] if n > 1 else []
    for k in rng.sample(range(n), min(n, 2)):
        out += [argv[:k] + argv[k + 1:], argv[:k + 1] + argv[k:]]
    for k in rng.sample(range(n), min(n, 2)):
        w = argv[k]
        out += [argv[:k] + [g] + argv[k + 1:] for g in (w[::-1], w + "\u0301\uff10", "", "9" * 40, "-1", *garbles)]
    return out
