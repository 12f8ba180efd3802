"""Which releases' parsers take a flag: the per-release spans read from the wheels (engines/data/vllm_flags.json,
tools/build_vllm_flags.py; engines/data/sglang_flags.json, tools/build_sglang_flags.py).

An engine's flag table is the union over the releases read, so that any flag some release has is parsed; this
module then holds the flags typed against the release chosen (--engine-version, an image tag, else the newest)
and refuses the ones its parser does not have, as that parser refuses them ("unrecognized arguments").

Between two releases read the answer is only known where both agree: a flag absent from both the nearest older
and the nearest newer release read is refused; one present in either is given the benefit of the doubt. Before
the oldest release read, that release's table answers; after the newest, the newest's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from pathlib import Path

from ..errors import OomkitError

_DATA = Path(__file__).parent / "data"

# The release whose parser reads the command being parsed, where it is known before the flags are read
# (--engine-version, a container image's tag): an abbreviation is matched against that parser's flags only, as
# argparse's allow_abbrev matches it (argparse.py ArgumentParser._parse_optional / _get_option_tuples).
_READING: ContextVar[str | None] = ContextVar("oomkit_release_read", default=None)


def release_key(name: str) -> tuple[int, ...]:
    """"0.8.5.post1" -> (0, 8, 5, 1), "0.11.0" -> (0, 11, 0, 0), "0.5.0rc2" -> (0, 5, 0, -98): a release's number,
    its post release (or, below zero, its release candidate) last."""
    m = re.match(r"v?(\d+)\.(\d+)(?:\.(\d+))?(?:\.?post(\d+)|rc(\d+))?", name)
    if m is None:
        return (0, 0, 0, 0)
    major, minor, patch, post, rc = m.groups()
    return (int(major), int(minor), int(patch or 0), int(post) if post else (-100 + int(rc) if rc else 0))


@lru_cache(maxsize=4)
def _table(file: str) -> tuple[list[str], dict[str, list[list[str]]], dict[str, list[str]]]:
    data = json.loads((_DATA / file).read_text(encoding="utf-8"))
    return list(data.get("releases", [])), dict(data.get("spans", {})), dict(data.get("deprecated", {}))


def _has(spans: list[list[str]], rel: str) -> bool:
    k = release_key(rel)
    return any(release_key(a) <= k <= release_key(b) for a, b in spans)


def varies(file: str, flag: str) -> bool:
    """Whether `flag` needs checking against a release: missing from some release read, or deprecated from one
    (SGLang 0.5.14-0.5.23's --disable-cuda-graph, in every wheel read; deprecation_notes)."""
    releases, spans, dep = _table(file)
    s = spans.get(flag)
    return bool(releases) and s is not None and (flag in dep or not all(_has(s, r) for r in releases))


def known_in(file: str, flag: str, version: tuple[int, ...]) -> bool | None:
    """Whether the parser of `version` has `flag`: True, False, or None where the table does not list the flag."""
    releases, spans, _ = _table(file)
    s = spans.get(flag)
    if s is None or not releases:
        return None
    v = (tuple(version) + (0, 0, 0, 0))[:4]
    older = [r for r in releases if release_key(r) <= v]
    newer = [r for r in releases if release_key(r) >= v]
    lo, hi = (older[-1] if older else None), (newer[0] if newer else None)
    return any(r is not None and _has(s, r) for r in (lo, hi))


def why_not(file: str, flag: str, version: tuple[int, ...]) -> str:
    """Where `flag` is, in words: "first in 0.10.0" (a newer flag) or "last in 0.17.1, gone from 0.18.0"."""
    releases, spans, dep = _table(file)
    s = spans.get(flag, [])
    v = (tuple(version) + (0, 0, 0, 0))[:4]
    before = [(a, b) for a, b in s if release_key(b) < v]
    after = [(a, b) for a, b in s if release_key(a) > v]
    parts = []
    if before:
        last = before[-1][1]
        gone = next((r for r in releases if release_key(r) > release_key(last)), None)
        parts.append(f"last read in the {last} wheel" + (f", gone from {gone}'s" if gone else "")
                     + f" (--engine-version {last} takes it)")
        note = dep.get(flag)
        if note and note[1] and note[1] != "deprecated":
            parts.append(f"its help there: {note[1]!r}")
        elif note:
            parts.append(f"deprecated from {note[0]}")
    if after:
        first = after[0][0]
        prev = next((r for r in reversed(releases) if release_key(r) < release_key(first)), None)
        parts.append(f"first in {first}" + (f", not in {prev}'s parser" if prev else "")
                     + f" (--engine-version {first} takes it)")
    return "; ".join(parts)


def deprecation(file: str, flag: str, version: tuple[int, ...]) -> str | None:
    """The deprecation note the parser of `version` prints for `flag` (its help text), if it marks the flag so."""
    _, _, dep = _table(file)
    note = dep.get(flag)
    v = (tuple(version) + (0, 0, 0, 0))[:4]
    if note is None or release_key(note[0]) > v:
        return None
    return note[1]


def deprecation_notes(file: str, typed: Iterable[str], version: tuple[int, ...], release: str) -> list[str]:
    """The estimate's notes for the typed flags the parser of `version` still takes but marks deprecated, each with
    the note it prints (deprecation): vLLM 0.16.0's `--disable-log-requests` (argparse deprecated=True, "[DEPRECATED]
    Disable logging requests."), SGLang 0.5.13-0.5.19's `--nsa-prefill-backend` (a DeprecatedAliasStoreAction of
    --dsa-prefill-backend that logs "'--nsa-prefill-backend' is deprecated and will be removed in a future release.
    Use '--dsa-prefill-backend' instead.": 0.5.14 wheel, arg_groups/argparse_actions.py). `release` names the
    release in words ("SGLang 0.5.14")."""
    notes = []
    for f in dict.fromkeys(typed):
        if (note := deprecation(file, f, version)) is not None:
            notes.append(f"{f} is deprecated in {release}" + (f": {note}" if note != "deprecated" else ""))
    return notes


def refuse_unknown(file: str, typed: Iterable[str], version: tuple[int, ...], program: str, release: str,
                   hints: Mapping[str, str] | None = None) -> None:
    """Refuse the typed flags the parser of `version` does not have, as argparse refuses them ("<program>: error:
    unrecognized arguments: ..."), each with where it is (why_not) and an engine's own hint for it; `release` names
    the release in words ("vLLM 0.33.0")."""
    missing = [f for f in dict.fromkeys(typed) if known_in(file, f, version) is False]
    if missing:
        hints = hints or {}
        why = "; ".join(f"{f}: " + "; ".join(p for p in (why_not(file, f, version), hints.get(f), _read_as(file, f, version))
                                             if p)
                        for f in missing)
        raise OomkitError(f"{program}: error: unrecognized arguments: {' '.join(missing)} ({release} has no such "
                          f"flag: {why})")


def _longer(file: str, flag: str, version: tuple[int, ...]) -> list[str]:
    """The long options of the parser of `version` that `flag` (one it does not have) is a prefix of, as argparse's
    allow_abbrev matches them (argparse.py ArgumentParser._get_option_tuples): 0.5.20's --cuda-graph-max-bs starts
    --cuda-graph-max-bs-decode and --cuda-graph-max-bs-prefill (arg_groups/fields/exec_.py)."""
    _, spans, _ = _table(file)
    if "=" in flag or not flag.startswith("--"):
        return []
    return sorted(f for f in spans if f != flag and f.startswith(flag) and _present(file, f, version))


def _read_as(file: str, flag: str, version: tuple[int, ...]) -> str:
    """How argparse's allow_abbrev takes a flag gone from this parser that starts some of its flags, in words."""
    longer = _longer(file, flag, version)
    if len(longer) > 1:
        return f"this parser takes it as an abbreviation: 'ambiguous option: {flag} could match {', '.join(longer[:6])}'"
    if len(longer) == 1:
        return f"this parser takes it as an abbreviation of {longer[0]}, a different option"
    return ""


def resolve_abbreviations(file: str, typed: Iterable[tuple[str, str]], version: tuple[int, ...], program: str,
                          release: str) -> None:
    """The abbreviations typed that name two or more flags of the releases' union (args.parse_args keeps one whose
    flags take the same kind of value and change the same settings, "--disable-overlap" with its candidates
    "--disable-overlap-cg-plan --disable-overlap-schedule"), matched as argparse's allow_abbrev matches them
    (argparse.py ArgumentParser._parse_optional / _get_option_tuples): against the long options of the parser of
    `version` only. One flag of that parser: its reading; two or more: refused with argparse's "ambiguous option:
    X could match A, B"; none: "unrecognized arguments". A flag between two releases read counts as there when
    either has it (known_in); vLLM's `--no-X` as its switch --X."""
    for name, joined in dict.fromkeys(typed):
        candidates = joined.split()
        hits = [f for f in candidates if _present(file, f, version)]
        if len(hits) > 1:
            raise OomkitError(f"{program}: error: ambiguous option: {name} could match {', '.join(hits)} "
                              f"({release})")
        if not hits:
            why = "; ".join(f"{f}: {why_not(file, f, version)}" for f in candidates)
            raise OomkitError(f"{program}: error: unrecognized arguments: {name} ({release} has no flag it "
                              f"abbreviates: {why})")


@contextmanager
def reading_release(version: str | None) -> Iterator[None]:
    """The engine commands parsed inside are read at `version` (--engine-version, an image's tag); None leaves
    the release already set, or none (then every release's flags are read, and the one chosen later holds them)."""
    token = _READING.set(version) if version else None
    try:
        yield
    finally:
        if token is not None:
            _READING.reset(token)


def release_being_read() -> str | None:
    return _READING.get()


def at_release_read(file: str, name: str, hits: list[str], program: str) -> list[str]:
    """The flags of the releases' union an abbreviation may name (two or more), narrowed to the parser of the
    release being read (reading_release): one is argparse's reading there; two or more its "ambiguous option: X
    could match A, B"; none its "unrecognized arguments". No release known (or a llama.cpp build): all of them."""
    version = _READING.get()
    if len(hits) < 2 or not version or not re.match(r"v?\d+\.\d+", version):
        return hits
    key = release_key(version)
    at = [f for f in hits if _present(file, f, key)]
    if len(at) > 1:
        raise OomkitError(f"{program}: error: ambiguous option: {name} could match {', '.join(at[:6])} (the parser "
                          f"of {version})")
    if not at:
        raise OomkitError(f"{program}: error: unrecognized arguments: {name} (the parser of {version} has no flag "
                          "it abbreviates)")
    return at


def _present(file: str, flag: str, version: tuple[int, ...]) -> bool:
    known = known_in(file, flag, version)
    if known is None and flag.startswith("--no-"):  # BooleanOptionalAction's negative form: its switch's releases
        known = known_in(file, "--" + flag[5:], version)
    return known is not False


def unique_readings(file: str, candidates: Iterable[str]) -> str:
    """Where an abbreviation of `candidates` names one flag only, in words for its refusal: "the parsers of 0.3.6 to
    0.5.20 read it as --context-length" (the releases read whose parser has one of the candidates alone); "" if
    none."""
    releases, _, _ = _table(file)
    found: dict[str, list[str]] = {}
    for r in releases:
        hits = [f for f in candidates if _present(file, f, release_key(r))]
        if len(hits) == 1:
            found.setdefault(hits[0], []).append(r)
    return "; ".join(f"the parser{'s' if len(rs) > 1 else ''} of {rs[0]}" + (f" to {rs[-1]}" if len(rs) > 1 else "")
                     + f" read it as {f}" for f, rs in found.items())
