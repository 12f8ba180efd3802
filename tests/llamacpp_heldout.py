"""The llama.cpp held-out log sets' shared pieces (tests/test_llamacpp_heldout10_logs.py, 13 and 14): a set's
fixtures, one fixture by its name's start, a byte count in MiB as llama.cpp prints it, and the check that each
fixture cites its page and quotes every buffer figure it checks (assert_cited_and_quoted)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.test_llamacpp_heldout_logs import assert_cited_and_checked

MiB = 1 << 20
ENGINE_LOGS = Path(__file__).parent / "fixtures" / "engine_logs"


def set_fixtures(name: str) -> list[Path]:
    """A held-out set's fixture files (tests/fixtures/engine_logs/<name>/*.json), sorted by name."""
    return sorted((ENGINE_LOGS / name).glob("*.json"))


def fixture_from(fixtures: list[Path], prefix: str) -> dict:
    """The first fixture whose file name starts with `prefix`."""
    return json.loads(next(p for p in fixtures if p.name.startswith(prefix)).read_text())


def mib(b: int) -> float:
    """Bytes in MiB to two places, as llama.cpp's buffer lines print them."""
    return round(b / MiB, 2)


def _assert_device_lines(fx: dict, name: str, key: str, what: str, summed: bool) -> None:
    """Each device's `<dev> <what> buffer size = <MiB>` line is quoted: the one line as printed (%8.2f), or, with
    `summed`, the device's lines of that kind added up (gpt-oss: its SWA and full caches, one line each)."""
    for dev, figure in (fx["printed"].get("buffers", {}).get(key) or {}).items():
        if summed:
            lines = [x for x in fx["quoted"].splitlines() if f" {dev} {what} buffer size" in x]
            assert lines, (name, dev, what)
            assert round(sum(float(x.split("=")[1].split()[0]) for x in lines), 2) == figure, (name, dev)
        else:
            assert f"{dev} {what} buffer size = {figure:8.2f} MiB" in fx["quoted"], (name, dev)


def assert_cited_and_quoted(fixtures: list[Path], at_least: int, summed: bool = False) -> None:
    """At least `at_least` fixtures (assert_cited_and_checked), each citing a GitHub page, and every buffer figure it
    checks a line it quotes: a device's model, KV and compute buffers (with `summed`, each the device's lines of that
    kind added up), the output buffer, the recurrent-state (RS) buffers and the KV cache's size line."""
    assert_cited_and_checked(fixtures, at_least)
    for path in fixtures:
        fx = json.loads(path.read_text())
        assert fx["source"].startswith("https://github.com/"), path.name
        for key, what in (("model_mib", "model"), ("kv_mib", "KV"), ("compute_mib", "compute")):
            _assert_device_lines(fx, path.name, key, what, summed)
        b = fx["printed"].get("buffers", {})
        if "output_mib" in b:
            assert f"output buffer size = {b['output_mib']:8.2f} MiB" in fx["quoted"], path.name
        for dev, figure in (fx["printed"].get("rs_mib") or {}).items():
            assert f"{dev} RS buffer size = {figure:8.2f} MiB" in fx["quoted"], path.name
        line = fx["printed"].get("kv_size_line")
        if line:
            assert f"size = {line['total_mib']:.2f} MiB (" in fx["quoted"], path.name
            assert f"{line['cells']} cells,  {line['layers']} layers" in fx["quoted"], path.name
