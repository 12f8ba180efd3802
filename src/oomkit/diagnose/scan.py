"""Reading a log: clean it (ANSI codes, \\r\\n, progress bars), find the lines worth a look without walking every
line in Python, and turn each into an `Event` (a signature that matched, with its numbers).

Work is bounded whatever the input: the keys are found in one pass over the text (one compiled pattern for all of
them, Text.hits; a short text, one `bytes.find` per key), at most `MAX_HITS` lines per key are looked at, a line is
considered only up to `MAX_LINE` characters around the key, and the patterns tried on it are plain ones
(signatures.py). A 50 MB log costs a few passes of C-speed byte loops, not one per key.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..units import GiB, KiB, MiB, TiB
from .signatures import SIGNATURES, Field, Signature, _compile

MAX_LINE = 4096  # bytes of a line considered around a key
LINE_SCAN = 65536  # bytes searched either side of a key for its line's ends
MAX_HITS = 4000  # lines looked at per key (the first OOM is the cause: the first hits are the ones that count)
ONE_PASS = 1 << 18  # bytes from which the keys are searched for in one pass rather than one `find` each
HOT_SKIPS = 1000  # occurrences of a key on lines it already counted before it is left to its own `find` loop
SAMPLE = 1 << 12  # bytes of each of the 8 places the text's pairs of bytes are counted at
FALSE_MAX = 1e-4  # share of the text's bytes a key's marked form may start at (by its bytes' shares) in the pass
RUN = 2  # marked bytes in a row the pass looks for (the regex engine checks a run's bytes after the first in C)
ALONE = 0.02  # share of the sample's bytes a key's run may add to the marked runs before the key is searched for on its own
CHUNK = 1 << 20  # bytes of text marked at a time (a copy this size, not of the whole text)
MARK = 0  # the byte each key's anchor byte is read as (normalize removes every NUL from the text)
CONTINUATION = 3  # lines joined to a message for numbers a wrapped line carried on

_ANSI = re.compile(rb"\x1b\[[0-9;?]{0,32}[ -/]{0,4}[@-~]|\x1b\][^\x07\x1b\n]{0,256}(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]")
# prefixes a continuation line may carry: "(EngineCore_DP0 pid=316) ", "vllm-1  | ", "[rank0]: "
_PREFIX = re.compile(r"^\s{0,8}(?:\([\w.:-]{1,40}(?: pid=[0-9]{1,10})?(?:, ip=[0-9.]{1,40})?\)\s{0,4}|"
                     r"[\w.-]{1,40}\s{1,8}\|\s|\[rank[0-9]{1,5}\]:\s?)")


def normalize(text: str | bytes) -> bytes:
    """The text as UTF-8 bytes, one b'\\n' per line: ANSI escapes removed, \\r\\n and lone \\r (progress bars) turned
    into line breaks. Bytes, because searching bytes is several times faster than searching a str holding
    non-ASCII characters (progress bars, CJK), which Python stores in 2 or 4 bytes a character."""
    data = text.encode("utf-8", errors="replace") if isinstance(text, str) else bytes(text)
    if b"\x1b" in data:
        data = _ANSI.sub(b"", data)
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    if b"\x00" in data:
        data = data.replace(b"\x00", b"")
    if any(r.search(data) for r in _UNICODE_LEADS):
        # a log copied from a web page or chat: no-break and other Unicode spaces read as spaces, zero-width
        # characters and a BOM dropped ("2.00\u00a0GiB" is the engine's "2.00 GiB")
        data = _UNICODE_SPACE.sub(b" ", _ZERO_WIDTH.sub(b"", data))
    return data


# U+00A0, U+2000-U+200A, U+202F, U+205F, U+3000 (Unicode's space separators) and U+200B-U+200D, U+2060, U+FEFF
_UNICODE_SPACE = re.compile(b"\xc2\xa0|\xe2\x80[\x80-\x8a\xaf]|\xe2\x81\x9f|\xe3\x80\x80")
_ZERO_WIDTH = re.compile(b"\xe2\x80[\x8b-\x8d]|\xe2\x81\xa0|\xef\xbb\xbf")
# the bytes one of them starts with, each looked for alone (a regex with a literal head: a plain byte loop, faster
# than `in` on a 50 MB text)
_UNICODE_LEADS = tuple(re.compile(re.escape(x)) for x in (b"\xc2\xa0", b"\xe2\x80", b"\xe3\x80\x80", b"\xef\xbb\xbf"))


@dataclass(frozen=True)
class Line:
    no: int  # 1-based line number in the normalized text
    start: int  # byte offset of the line's start
    text: str  # the line (at most MAX_LINE bytes around the key), decoded


@dataclass(frozen=True)
class Event:
    sig: Signature
    line: Line
    numbers: dict[str, Any] = field(default_factory=dict)

    @property
    def role(self) -> str:
        return self.sig.role


def _dec(b: bytes) -> str:
    return b.decode("utf-8", errors="replace")


class Text:
    """The normalized log (bytes) with line lookup by offset (line numbers counted incrementally)."""

    def __init__(self, data: bytes):
        self.b = data

    def __len__(self) -> int:
        return len(self.b)

    def slice(self, lo: int, hi: int | None = None) -> str:
        """Bytes [lo, hi) decoded, widened to whole lines at a cut character."""
        lo = max(0, lo)
        return _dec(self.b[lo: len(self.b) if hi is None else max(lo, hi)])

    def line_at(self, pos: int) -> tuple[int, int]:
        """(start, end) of the line holding offset pos. A line longer than LINE_SCAN bytes either side of pos is
        cut there (a megabyte line is read as pieces, so finding its ends never rescans the text)."""
        b = self.b
        lo = max(0, pos - LINE_SCAN)
        nl = b.rfind(b"\n", lo, pos)
        start = nl + 1 if nl >= 0 else lo
        hi = min(len(b), pos + LINE_SCAN)
        end = b.find(b"\n", pos, hi)
        return start, (hi if end < 0 else end)

    def hits(self, keys: tuple[bytes, ...] | list[bytes], limit: int = MAX_HITS,
             lo: int = 0, hi: int | None = None) -> list[tuple[int, int]]:
        """(line start, key offset) of each line in [lo, hi) holding one of `keys`, in order, at most `limit` per
        key. The line of a key's first `limit` occurrences, each searched for from the end of the line of its
        previous one; a line held by several keys carries the offset of the earliest key in `keys`."""
        b = self.b
        hi = len(b) if hi is None else min(hi, len(b))
        lo = max(0, lo)
        keys = tuple(dict.fromkeys(keys))
        found: dict[int, tuple[int, int]] = {}
        if hi - lo < ONE_PASS or len(keys) < 4 or limit <= 0 or not all(keys):
            for i in range(len(keys)):
                self._hits_of(keys, i, limit, lo, hi, lo, 0, found)
        else:
            self._hits_one_pass(keys, limit, lo, hi, found)
        return sorted((s, pos) for s, (_, pos) in found.items())

    def _hits_of(self, keys: tuple[bytes, ...], i: int, limit: int, lo: int, hi: int, frm: int, n: int,
                 found: dict[int, tuple[int, int]]) -> None:
        """keys[i]'s lines from offset `frm` on, `n` of its `limit` already found (one `find` after another)."""
        b, key = self.b, keys[i]
        pos = b.find(key, frm, hi)
        while pos >= 0 and n < limit:
            start, end = self.line_at(pos)
            if start not in found or found[start][0] > i:
                found[start] = (i, pos)
            n += 1
            pos = b.find(key, end, hi)

    def _hits_one_pass(self, keys: tuple[bytes, ...], limit: int, lo: int, hi: int,
                       found: dict[int, tuple[int, int]]) -> None:
        """`hits` in one pass over [lo, hi): one compiled pattern finds every key at once (see _Pattern), and each
        key's occurrences are taken as its own `find` loop would take them. A key that reaches its limit leaves the
        pattern; one found again and again on lines already counted (a megabyte line) finishes with its own loop."""
        b = self.b
        anchor, marks, alone = _anchors(keys, b, lo, hi)
        table = bytes(MARK if c in marks else c for c in range(256))
        live = [i for i in range(len(keys)) if i not in alone]
        n = [0] * len(keys)  # lines counted per key
        nxt = [lo] * len(keys)  # where each key's next occurrence may start (the end of its last line)
        skipped = [0] * len(keys)
        hot = set(alone)  # keys left to their own loop
        longest = max(map(len, keys))
        pat = _pattern(tuple(keys[i] for i in live), tuple(anchor[i] for i in live), table) if live else None
        at = lo  # the next anchor offset to look at
        while pat is not None and live and at < hi:
            # a chunk of the text with its anchor bytes marked, and the longest key's length on either side
            top = min(hi, at + CHUNK)
            base = max(lo, at - longest)
            chunk = b[base: min(hi, top + longest)].translate(table)
            m = pat.rx.search(chunk, at - base)
            at = top
            while m is not None and base + m.start() < top:
                p = base + m.start()
                g = pat.order[m.lastindex - 1]
                gone = False
                for a in (g, *pat.same_place[g]):
                    key, q = pat.keys[a], p - pat.anchor[a]
                    if q < lo or not b.startswith(key, q, hi):  # MARK stands for several bytes
                        continue
                    i = live[a]
                    if q < nxt[i]:  # on the line of its last occurrence counted
                        skipped[i] += 1
                        if skipped[i] >= HOT_SKIPS:
                            hot.add(i)
                            gone = True
                        continue
                    start, end = self.line_at(q)
                    if start not in found or found[start][0] > i:
                        found[start] = (i, q)
                    n[i] += 1
                    nxt[i] = end
                    if n[i] >= limit:
                        gone = True
                if gone:  # the pattern without the keys that left, from the next byte on
                    live = [i for i in live if n[i] < limit and i not in hot]
                    pat = _pattern(tuple(keys[i] for i in live), tuple(anchor[i] for i in live), table) if live else None
                    at = p + 1
                    break
                m = pat.rx.search(chunk, p + 1 - base)  # on at the next byte: keys overlap
        for i in sorted(hot):  # after the pass: each key's lines were taken in order up to where it left
            self._hits_of(keys, i, limit, lo, hi, nxt[i], n[i], found)

    def numbered(self, starts: list[int]) -> dict[int, int]:
        """Line number of each line start (sorted), counted once across the text."""
        out, no, last = {}, 1, 0
        for s in starts:
            no += self.b.count(b"\n", last, s)
            last = s
            out[s] = no
        return out

    def line(self, start: int, key_pos: int, no: int) -> Line:
        b = self.b
        hi = min(len(b), max(start, key_pos) + LINE_SCAN)
        end = b.find(b"\n", start, hi)
        end = hi if end < 0 else end
        if end - start > MAX_LINE:
            lo = max(start, key_pos - MAX_LINE // 4)
            return Line(no, start, _dec(b[lo: min(end, lo + MAX_LINE)]))
        return Line(no, start, _dec(b[start:end]))

    def following(self, line: Line, n: int) -> list[str]:
        """The n lines after `line`, prefixes removed, each capped."""
        b, out = self.b, []
        pos = b.find(b"\n", line.start, line.start + LINE_SCAN)
        while pos >= 0 and len(out) < n:
            hi = min(len(b), pos + 1 + LINE_SCAN)
            end = b.find(b"\n", pos + 1, hi)
            end = hi if end < 0 else end
            out.append(_PREFIX.sub("", _dec(b[pos + 1: min(end, pos + 1 + MAX_LINE)]), count=1))
            pos = end if end < len(b) else -1
        return out

    def around(self, pos: int, before: int, after: int) -> str:
        """About `before` lines before offset pos and `after` lines after it (at most MAX_LINE bytes a line)."""
        b = self.b
        floor, ceiling = max(0, pos - before * MAX_LINE), min(len(b), pos + (after + 1) * MAX_LINE)
        lo = pos
        for _ in range(before):
            if lo <= floor:
                break
            nl = b.rfind(b"\n", floor, lo - 1)
            lo = nl + 1 if nl >= 0 else floor
        hi = pos
        for _ in range(after + 1):
            p = b.find(b"\n", hi + 1, ceiling)
            if p < 0:
                hi = ceiling
                break
            hi = p
        return _dec(b[lo:hi])


def _anchors(keys: tuple[bytes, ...], b: bytes, lo: int, hi: int) -> tuple[tuple[int, ...], bytes, tuple[int, ...]]:
    """(anchors, marks, alone): each key's anchor, the offset in it of RUN bytes in a row all in `marks`, the bytes
    chosen so that RUN of them in a row are rare in the text (counted in 8 samples of SAMPLE bytes spread over
    [lo, hi)); `alone`, the keys left to be searched for on their own: those whose every run is common there, and
    those mostly of marks (a short key), which the pass would find, marked, in many places where they are not."""
    step = (hi - lo) // 8
    sample = b"".join(b[x: x + SAMPLE] for x in range(lo, lo + 8 * step, step)) if step > SAMPLE else b[lo:hi]
    runs = Counter(_runs(sample))
    near: dict[int, list[tuple[tuple[int, ...], int]]] = {}  # the runs each byte is in
    for r, c in runs.items():
        for x in set(r):
            near.setdefault(x, []).append((r, c))
    marks: set[int] = set()

    def gained(new: set[int]) -> int:  # runs of the sample all marks once `new` are
        both = marks | new
        return sum(dict(rc for x in new for rc in near.get(x, ()) if all(y in both for y in rc[0])).values())

    anchor, alone = [0] * len(keys), []
    # the keys whose own runs are the most common first
    for j in sorted(range(len(keys)), key=lambda j: -min((runs[r] for r in _runs(keys[j])), default=0)):
        k = keys[j]
        if len(k) < RUN:
            alone.append(j)
            continue
        free = next((i for i in range(len(k) - RUN + 1) if all(c in marks for c in k[i: i + RUN])), None)
        if free is not None:
            anchor[j] = free
            continue
        cost, i = min((gained(set(k[i: i + RUN]) - marks), i) for i in range(len(k) - RUN + 1))
        if cost > ALONE * len(sample):
            alone.append(j)
            continue
        anchor[j] = i
        marks |= set(k[i: i + RUN])
    share, size = Counter(sample), max(1, len(sample))
    marked = sum(share[c] for c in marks) / size
    for j, k in enumerate(keys):
        if j not in alone and math.prod(marked if c in marks else share[c] / size for c in k) > FALSE_MAX:
            alone.append(j)
    return tuple(anchor), bytes(sorted(marks)), tuple(sorted(alone))


def _runs(b: bytes) -> zip:
    """Each RUN bytes in a row of b, as a tuple."""
    return zip(*(b[j:] for j in range(RUN)), strict=False)


class _Pattern:
    """Every key of `keys` found by one compiled pattern, run over the text with each key's anchor byte (see
    _anchors) read as MARK (`table`): the pattern starts with that one byte, which the regex engine looks for at C
    speed, then reads the rest of the key as a tree of the keys' remainders (a wrong byte ends the try at once) and
    last checks the key's head with a look-behind. `()` at the end of each alternative says which key matched. MARK
    stands for several bytes, so each key found is checked in the text itself, with `same_place[a]`, the keys that
    can hold the same anchor byte as key a at once (one inside another): the regex engine gives only the first."""

    def __init__(self, keys: tuple[bytes, ...], anchor: tuple[int, ...], table: bytes):
        self.keys, self.anchor = keys, anchor
        marked = [k.translate(table) for k in keys]
        order: list[int] = []
        tail = _tree([(k[i + RUN:], a) for a, (k, i) in enumerate(zip(marked, anchor, strict=True))], marked, anchor,
                     order)
        self.rx = re.compile(re.escape(bytes([MARK] * RUN)) + tail)
        self.order = tuple(order)
        # two keys held at once agree on the byte after the run where both have one: only those are compared
        after: dict[int | None, list[int]] = {}
        for a, (k, i) in enumerate(zip(marked, anchor, strict=True)):
            after.setdefault(k[i + RUN] if i + RUN < len(k) else None, []).append(a)
        self.same_place = tuple(
            tuple(sorted(o for o in (range(len(keys)) if x is None else after.get(x, []) + after.get(None, []))
                         if o != a and _overlap(marked, anchor, a, o)))
            for a, x in ((a, k[i + RUN] if i + RUN < len(k) else None)
                         for a, (k, i) in enumerate(zip(marked, anchor, strict=True))))


def _tree(rest: list[tuple[bytes, int]], marked: list[bytes], anchor: tuple[int, ...], order: list[int]) -> bytes:
    """The pattern reading each key's remainder after its anchor (`rest`: (remainder, key)), as a tree: keys with
    the same next byte share a branch, a run of bytes all of them share is read once."""
    alts = []
    for a in [a for r, a in rest if not r]:  # the key read to its end: the whole of it, behind (a head before the anchor)
        alts.append((b"(?<=" + re.escape(marked[a]) + b")" if anchor[a] else b"") + b"()")
        order.append(a)
    groups: dict[int, list[tuple[bytes, int]]] = {}
    for r, a in rest:
        if r:
            groups.setdefault(r[0], []).append((r, a))
    for members in groups.values():
        n = 1
        while all(len(r) > n for r, _ in members) and len({r[n] for r, _ in members}) == 1:
            n += 1
        common = members[0][0][:n]
        alts.append(re.escape(common) + _tree([(r[n:], a) for r, a in members], marked, anchor, order))
    return alts[0] if len(alts) == 1 else b"(?:" + b"|".join(alts) + b")"


def _overlap(keys: list[bytes], anchor: tuple[int, ...], a: int, o: int) -> bool:
    """Whether keys a and o, each placed with its anchor on the same byte, agree wherever both lie."""
    ka, ia, ko, io = keys[a], anchor[a], keys[o], anchor[o]
    before, after = min(ia, io), min(len(ka) - ia, len(ko) - io)
    return ka[ia - before: ia + after] == ko[io - before: io + after]


_PATTERNS: dict[tuple[tuple[bytes, ...], tuple[int, ...], bytes], _Pattern] = {}


def _pattern(keys: tuple[bytes, ...], anchor: tuple[int, ...], table: bytes) -> _Pattern:
    pat = _PATTERNS.get((keys, anchor, table))
    if pat is None:
        if len(_PATTERNS) >= 64:
            _PATTERNS.clear()
        pat = _PATTERNS[(keys, anchor, table)] = _Pattern(keys, anchor, table)
    return pat


# ---------------------------------------------------------------------------------------------------------
# Numbers, read as the engine meant them

_BIN = {"b": 1, "bytes": 1, "kb": KiB, "kib": KiB, "mb": MiB, "mib": MiB, "gb": GiB, "gib": GiB, "tb": TiB,
        "tib": TiB}
_DEC = {"b": 1, "bytes": 1, "kb": 1000, "kib": KiB, "mb": 1000**2, "mib": MiB, "gb": 1000**3, "gib": GiB,
        "tb": 1000**4, "tib": TiB}


def _num(s: str) -> float:
    return float(s.replace(",", "").rstrip("."))


def read_field(f: Field, m: re.Match[str]) -> Any:
    g = m.groups()
    if f.unit in ("size", "size_as_written"):
        table = _BIN if f.unit == "size" else _DEC
        return int(round(_num(g[0]) * table[g[1].lower()]))
    if f.unit == "GiB":
        return int(round(_num(g[0]) * GiB))
    if f.unit == "MiB":
        return int(round(_num(g[0]) * MiB))
    if f.unit == "MB":
        return int(round(_num(g[0]) * 1000**2))
    if f.unit == "bytes":
        return int(_num(g[0]))
    if f.unit == "hex":
        return int(g[0], 16)
    if f.unit == "int":
        return int(_num(g[0]))
    if f.unit == "float":
        return _num(g[0])
    return g[0].strip()


def read_fields(fields: tuple[Field, ...], variants: list[str]) -> dict[str, Any]:
    """Each field from the first text variant it is found in (the line alone, then joined with what follows)."""
    out: dict[str, Any] = {}
    for f in fields:
        if f.key in out:
            continue
        for text in variants:
            m = _compile(f.pattern).search(text)
            if m:
                try:
                    out[f.key] = read_field(f, m)
                except ValueError:  # digits and dots that make no number ("1.2.3"): the field is not read
                    continue
                break
    return out


_PROCESS = re.compile(r"Process ([0-9]{1,10}) has ([0-9][0-9,]{0,24}(?:\.[0-9]{1,12})?) ?(bytes|B|KiB|MiB|GiB|TiB|KB|MB|GB|TB)"
                      r" memory in use")


def processes(text: str) -> list[dict[str, int]]:
    """`Process N has X memory in use` fragments of a PyTorch OOM: [{pid, bytes}], each PID once (c10/cuda/
    CUDACachingAllocator.cpp reportProcessMemoryInfo writes one per NVML compute process; a re-wrapped message, read
    as its line joined with the lines after it and then with its continuation again, repeats the fragment)."""
    out: dict[int, dict[str, int]] = {}
    for m in _PROCESS.finditer(text[:MAX_LINE * 2]):
        out.setdefault(int(m.group(1)), {"pid": int(m.group(1)),
                                         "bytes": int(round(_num(m.group(2)) * _BIN[m.group(3).lower()]))})
    return list(out.values())


# ---------------------------------------------------------------------------------------------------------
# Events

_KEYS: dict[str, list[Signature]] = {}
for _sig in SIGNATURES:
    for _k in _sig.keys:
        _KEYS.setdefault(_k, []).append(_sig)


# Shorter phrases, each inside several keys and still rare in a healthy log: a line holding a key holds one of
# them, so the text is searched for these (fewer passes) and each line found is then checked for the keys.
TRIGGERS = ("out of memory", "Out of memory", "OutOfMemory", "failed to allocate", "unable to allocate",
            "Malloc failed", "driver", "Insufficient", "insufficient", "Not enough", "llegal", "space left",
            "Killed", "killed", "oom-kill", "memory layout")


def scan_keys(keys: list[str] | tuple[str, ...]) -> tuple[bytes, ...]:
    """The substrings to search the text for: each key, or a trigger inside it."""
    out: dict[bytes, None] = {}
    for k in keys:
        t = next((t for t in TRIGGERS if t in k), k)
        out[t.encode()] = None
    return tuple(out)


_BKEYS = scan_keys(tuple(_KEYS))


WRAP_JOIN = 3  # lines of a message re-wrapped at its spaces read as one (a key running over a line end)
WRAP_SCAN = 256 << 10  # bytes of text searched a second time for keys over a line end (a pasted quote)


def _wrapped_hits(doc: Text, seen: set[int]) -> dict[int, int]:
    """{line start: key offset} of the keys that run over a line end: a message re-wrapped at a space (a narrow
    terminal, a mail client, a quote re-flowed) has its line ends where the engine printed spaces. The text with its
    line ends read as spaces keeps every offset, so a key found there across a line end starts on the line it
    starts on; lines a key already starts on are left to the line's own reading."""
    b = doc.b
    if len(b) > WRAP_SCAN or b.count(b"\n", 0, 1 << 20) < 2:  # a re-wrapped paste is a quote, not a server's log
        return {}
    joined = b.replace(b"\n", b" ")
    out: dict[int, int] = {}
    for key in _BKEYS:
        pos, n = joined.find(key), 0
        while pos >= 0 and n < MAX_HITS:
            if b.find(b"\n", pos, pos + len(key)) >= 0:
                start, _ = doc.line_at(pos)
                if start not in seen:
                    out.setdefault(start, pos)
                n += 1
            pos = joined.find(key, pos + len(key))
    return out


def _joined_line(doc: Text, line: Line) -> Line:
    """The line and the next WRAP_JOIN - 1 lines as one, joined by the spaces the re-wrap took."""
    more = doc.following(line, WRAP_JOIN - 1)
    return Line(line.no, line.start, " ".join([line.text, *(m.strip() for m in more)])[:MAX_LINE])


def events(doc: Text) -> list[Event]:
    """Every signature that matches a line, one per line (the highest priority), in line order."""
    hits = doc.hits(_BKEYS)
    wrapped = _wrapped_hits(doc, {s for s, _ in hits})
    if wrapped:
        hits = sorted([*hits, *wrapped.items()])
    numbers = doc.numbered([s for s, _ in hits])
    out: list[Event] = []
    # what a line's text reads as, by its text: a log repeats its lines (a warning per request, a worker's note)
    read: dict[str, tuple[Signature | None, list[tuple[Signature, re.Match[str]]]]] = {}
    read_joined: dict[tuple[str, int], Signature | None] = {}
    for start, pos in hits:
        line = doc.line(start, pos, numbers[start])
        if start in wrapped:
            line = _joined_line(doc, line)
        best: Signature | None
        found: list[tuple[Signature, re.Match[str]]]
        if line.text in read:
            best, found = read[line.text]
        else:
            best, found = None, []
            for key, sigs in _KEYS.items():
                if key not in line.text:
                    continue
                for sig in sigs:
                    m = sig.regex().search(line.text)
                    if m is None:
                        continue
                    found.append((sig, m))
                    if best is None or sig.priority > best.priority:
                        best = sig
            read[line.text] = best, found
        if best is None and start not in wrapped and doc.b.find(b"\n", start, start + 2 * MAX_LINE) >= 0:
            # a key on the line whose message carries on past the line's end (re-wrapped at a space): the line
            # and the next read as one
            joined, alone = _joined_line(doc, line), len(line.text)
            if (joined.text, alone) in read_joined:
                best = read_joined[joined.text, alone]
            else:
                for key, sigs in _KEYS.items():
                    if key not in joined.text:
                        continue
                    for sig in sigs:
                        m = sig.regex().search(joined.text)
                        if m is not None and m.start() < alone and (best is None or sig.priority > best.priority):
                            best = sig
                read_joined[joined.text, alone] = best
            if best is not None:
                line = joined
            found = [(best, m)] if best is not None and (m := best.regex().search(line.text)) else []
        if best is None:
            continue
        nums = _numbers(doc, best, line)
        if len(found) > 1:
            # a log pasted without its line ends runs the engine's messages together on one line ("...cudaMalloc
            # failed: out of memory alloc_tensor_range: failed to allocate ROCm0 buffer of size N llama_init_from_model:
            # ..."): the figures of the engine's other messages further along the line are read too
            at = next(m for s, m in found if s is best)
            for sig, m in found:
                if sig is not best and sig.engine == best.engine and sig.fields and (m.start() >= at.end()
                                                                                      or m.end() <= at.start()):
                    for k, v in read_fields(sig.fields, [line.text[m.start():]]).items():
                        nums.setdefault(k, v)
        out.append(Event(best, line, nums))
    return out


def _numbers(doc: Text, sig: Signature, line: Line) -> dict[str, Any]:
    if not sig.fields:
        return {}
    variants = [line.text]
    nums = read_fields(sig.fields, variants)
    joined = None
    if len(nums) < len({f.key for f in sig.fields}):
        more = doc.following(line, max(CONTINUATION, sig.span))
        # a wrapped message carries on over the next lines: joined with a space (wrapped at a word) and without
        # (wrapped mid-word); a line holding another signature's key starts something else
        cont: list[str] = []
        for s in more:
            if any(k in s for k in sig.keys):
                break
            cont.append(s.strip() if sig.span > CONTINUATION else s)
        if cont:
            # at a word the next line's indent goes too (a message re-wrapped inside an indented quote)
            variants = [line.text + " " + " ".join(c.strip() for c in cont), line.text + "".join(cont)]
            joined = variants[0]
            for k, v in read_fields(sig.fields, variants).items():
                nums.setdefault(k, v)
    if sig.id == "torch_cuda_oom":
        procs = processes(line.text)
        if joined is not None:  # the list wrapped onto the lines that carry the message on
            procs = max(procs, processes(joined), key=len)
        if procs:
            nums["processes"] = procs
        if "reserved_bytes" in nums and "allocated_bytes" in nums and "reserved_unallocated_bytes" not in nums:
            # PyTorch <= 2.0 prints what it reserved; the part not allocated is what 2.1+ prints directly
            nums["reserved_unallocated_bytes"] = max(0, nums["reserved_bytes"] - nums["allocated_bytes"])
    return nums
