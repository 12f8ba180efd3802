"""Every example in the docs runs, and prints what the page shows, so the docs cannot drift from the code.

- ```console blocks: each `$ oomkit ARGS` line runs in-process (oomkit.cli.main, stdout and stderr captured) with
  HF_HUB_OFFLINE=1; the lines after it, up to the next `$` line, are its output, compared with whitespace runs
  collapsed. An output line `...` stands for any number of lines (what depends on the machine or the day).
  A `$` line that is not oomkit (a shell step such as `pip install oomkit`) is shown, not run.
- ```python blocks run top to bottom, each page's blocks in one namespace.
- docs/errors.md is the index tools/build_errors_doc.py writes from oomkit/diagnose/signatures.py; the chart in
  docs/engines.md is what tools/build_memory_chart.py draws.

After a change that alters an output on purpose: `PYTHONPATH=. python tests/test_docs.py --refresh` rewrites the
outputs of the console blocks (blocks holding a `...` line are left as they are).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted([*DOCS.glob("*.md"), *DOCS.glob("commands/*.md")])
FENCE = re.compile(r"^```(\w+)[^\n]*\n(.*?)^```\s*$", re.S | re.M)


def blocks(page: Path, lang: str) -> list[tuple[int, str]]:
    text = page.read_text(encoding="utf-8")
    return [(m.start(2), m.group(2)) for m in FENCE.finditer(text) if m.group(1) == lang]


def examples(body: str) -> list[tuple[str, list[str]]]:
    """(command line, expected output lines) for each `$` line of a console block."""
    out: list[tuple[str, list[str]]] = []
    for line in body.splitlines():
        if line.startswith("$ "):
            out.append((line[2:], []))
        elif out:
            out[-1][1].append(line)
    return out


def run(command: str) -> tuple[int, str]:
    from oomkit.cli import main

    argv = shlex.split(command)
    buf = io.StringIO()
    old, cwd = os.environ.get("HF_HUB_OFFLINE"), os.getcwd()
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.chdir(ROOT)  # paths in the examples are relative to the repository
    try:
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
            try:
                rc = main(argv[1:])
            except SystemExit as e:  # argparse's --help
                rc = e.code if isinstance(e.code, int) else 0
    finally:
        os.chdir(cwd)
        if old is None:
            os.environ.pop("HF_HUB_OFFLINE", None)
        else:
            os.environ["HF_HUB_OFFLINE"] = old
    return rc or 0, buf.getvalue()


def _norm(line: str) -> str:
    return " ".join(line.split())


def matches(expected: list[str], actual: list[str]) -> bool:
    """Line by line after whitespace normalisation; `...` matches any run of lines (also none)."""
    exp = [_norm(x) for x in expected]
    act = [_norm(x) for x in actual]
    while exp and not exp[-1]:
        exp.pop()
    while act and not act[-1]:
        act.pop()

    def go(i: int, j: int) -> bool:
        if i == len(exp):
            return j == len(act)
        if exp[i] == "...":
            return any(go(i + 1, k) for k in range(j, len(act) + 1))
        return j < len(act) and exp[i] == act[j] and go(i + 1, j + 1)

    return go(0, 0)


CONSOLE = [(p, n, cmd, exp) for p in PAGES for _, body in blocks(p, "console")
           for n, (cmd, exp) in enumerate(examples(body)) if cmd.startswith("oomkit ")]
PYTHON = [p for p in PAGES if blocks(p, "python")]


def test_there_are_examples():
    assert len(CONSOLE) >= 20 and PYTHON


@pytest.mark.parametrize("page,n,command,expected", CONSOLE,
                         ids=[f"{p.relative_to(DOCS)}:{c[7:40]}" for p, _, c, _ in CONSOLE])
def test_console_example(page, n, command, expected):
    _, out = run(command)
    assert matches(expected, out.splitlines()), (f"{page.relative_to(ROOT)}: `{command}` printed:\n{out}\n"
                                                  "refresh with: PYTHONPATH=. python tests/test_docs.py --refresh")


@pytest.mark.parametrize("page", PYTHON, ids=[str(p.relative_to(DOCS)) for p in PYTHON])
def test_python_blocks(page, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    ns: dict = {"__name__": "__docs__"}
    with contextlib.redirect_stdout(io.StringIO()):
        for _, body in blocks(page, "python"):
            exec(compile(body, str(page), "exec"), ns)  # noqa: S102 - the docs' own examples


def test_error_index_is_current():
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import build_errors_doc
    finally:
        sys.path.pop(0)
    assert (DOCS / "errors.md").read_text(encoding="utf-8") == build_errors_doc.render(), \
        "docs/errors.md is stale: python tools/build_errors_doc.py"


def test_memory_chart_is_current(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import build_memory_chart
    finally:
        sys.path.pop(0)
    text = (DOCS / "engines.md").read_text(encoding="utf-8")
    assert build_memory_chart.updated(text) == text, "docs/engines.md's chart is stale: python tools/build_memory_chart.py"


def test_links_between_pages_resolve():
    broken = [f"{p.relative_to(DOCS)} -> {target}" for p in PAGES
              for target in re.findall(r"\]\(([^)#:]+\.md)(?:#[^)]*)?\)", p.read_text(encoding="utf-8"))
              if not (p.parent / target).exists()]
    assert not broken, broken


def test_every_command_has_a_page():
    from oomkit.cli import main

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.suppress(SystemExit):
        main(["--help"])
    commands = re.findall(r"^    (\w+)  ", buf.getvalue(), re.M)
    assert commands and all((DOCS / "commands" / f"{c}.md").exists() for c in commands), commands


def refresh() -> None:
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        out, last = [], 0
        for m in FENCE.finditer(text):
            if m.group(1) != "console" or any(_norm(x) == "..." for x in m.group(2).splitlines()):
                continue
            lines = []
            for cmd, _ in examples(m.group(2)):
                lines.append(f"$ {cmd}")
                if cmd.startswith("oomkit "):
                    lines += [x.rstrip() for x in run(cmd)[1].rstrip("\n").splitlines()]
            out += [text[last:m.start(2)], "\n".join(lines) + "\n"]
            last = m.end(2)
        new = "".join(out) + text[last:]
        if new != text:
            page.write_text(new, encoding="utf-8")
            print(f"refreshed {page.relative_to(ROOT)}")


if __name__ == "__main__" and "--refresh" in sys.argv:
    refresh()
