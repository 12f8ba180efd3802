"""The one-pass key search (scan.Text.hits on a large text) finds exactly what one `find` loop per key finds: the
same lines, the same key offsets, the same per-key limits, within the same bounds. Checked against that loop, written
out here, on the corpus's texts and on texts built to be hard: keys inside keys, keys split by chunk ends, lines
longer than the line window, keys repeated past their limits, bounds cutting keys."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from oomkit.diagnose import logread, scan
from oomkit.diagnose.scan import Text

CORPUS = Path(__file__).parent / "fixtures" / "diagnose" / "corpus.jsonl"


def find_loops(doc: Text, keys, limit, lo, hi):
    """The reference: each key in turn, one `find` after another from the end of the line of the last hit."""
    b = doc.b
    hi = len(b) if hi is None else hi
    found: dict[int, int] = {}
    for key in keys:
        pos, n = b.find(key, lo, hi), 0
        while pos >= 0 and n < limit:
            start, end = doc.line_at(pos)
            found.setdefault(start, pos)
            n += 1
            pos = b.find(key, end, hi)
    return sorted(found.items())


@pytest.fixture
def one_pass_everywhere(monkeypatch):
    """Every text through the one pass, with small chunks and a low bar for a key's own loop, so that chunk ends,
    keys leaving the pass and keys finished on their own all happen on small texts."""
    monkeypatch.setattr(scan, "ONE_PASS", 0)
    monkeypatch.setattr(scan, "CHUNK", 257)
    monkeypatch.setattr(scan, "HOT_SKIPS", 3)
    monkeypatch.setattr(scan, "SAMPLE", 64)


KEYSETS = (scan._BKEYS, logread._BKEYS, tuple(dict.fromkeys(scan._BKEYS + logread._BKEYS)))


def _check(b: bytes, rnd: random.Random, limits=(scan.MAX_HITS, 1, 5)):
    doc, n = Text(b), len(b)
    bounds = [(0, None), (rnd.randint(0, n), None), (rnd.randint(0, n // 2), rnd.randint(n // 2, n + 5))]
    for keys in KEYSETS:
        for limit in limits:
            for lo, hi in bounds:
                assert doc.hits(keys, limit, lo, hi) == find_loops(doc, keys, limit, lo, hi), (limit, lo, hi)


def test_corpus_texts(one_pass_everywhere):
    for line in CORPUS.read_text().splitlines():
        if line.strip():
            doc = Text(scan.normalize(json.loads(line)["text"]))
            for keys in KEYSETS[:2]:
                assert doc.hits(keys) == find_loops(doc, keys, scan.MAX_HITS, 0, None)


def _hard_text(rnd: random.Random, size: int, texts: list[bytes]) -> bytes:
    keys = list(KEYSETS[2])
    parts, total = [], 0
    while total < size:
        r = rnd.random()
        if r < 0.25:
            x = rnd.choice(texts)
        elif r < 0.45:
            x = rnd.choice(keys) * rnd.randint(1, 4)  # a key again and again on one line
        elif r < 0.5:
            x = b"x" * rnd.randint(100, 9000)  # a line longer than the window
        elif r < 0.6:
            x = b"\n" * rnd.randint(1, 3)
        elif r < 0.7:
            k = rnd.choice(keys)
            x = k[:rnd.randint(0, len(k))]  # a key cut short
        else:
            x = bytes(rnd.choice(b"abcdefghiklmnoprstuy ACDEFKMNOT_-[]():\"'0123456789.\n") for _ in range(rnd.randint(1, 200)))
        parts.append(x)
        total += len(x)
    return b"".join(parts)


def test_hard_texts(one_pass_everywhere, monkeypatch):
    monkeypatch.setattr(scan, "LINE_SCAN", 2048)  # lines longer than the window, on a small text
    rnd = random.Random(11)
    texts = [scan.normalize(json.loads(x)["text"]) for x in CORPUS.read_text().splitlines() if x.strip()]
    for size in (300, 5000, 40000):
        _check(_hard_text(rnd, size, texts), rnd)


def test_large_text_default_settings():
    """Above ONE_PASS with the shipped settings: the synthetic 50 MB log's first 4 MB and a dense mixture."""
    from tests.test_diagnose_fuzz import synthetic_log

    rnd = random.Random(5)
    b = scan.normalize(synthetic_log(size=4 << 20))
    texts = [scan.normalize(json.loads(x)["text"]) for x in CORPUS.read_text().splitlines() if x.strip()]
    b2 = _hard_text(rnd, 1 << 20, texts)
    for text in (b, b2):
        doc = Text(text)
        assert len(text) >= scan.ONE_PASS
        for keys in KEYSETS[:2]:
            for limit in (scan.MAX_HITS, 3):
                assert doc.hits(keys, limit) == find_loops(doc, keys, limit, 0, None)
