"""Diagnose: read an out-of-memory error or a whole engine log; say which program failed, the stage that ran out,
the numbers behind it and the fix, computed (see reader.py for the rules and signatures.py for the messages)."""

from .reader import diagnose
from .result import Diagnosis, Fix
from .signatures import SIGNATURES, Signature


def errors_index(query: str | None = None) -> list[dict]:
    """The index of known messages (program, versions, stage, causes, fixes); with a query, those whose any field
    holds every word of it (case-insensitive)."""
    from .text import index_entry  # lazy: the text forms only when the index is asked for

    rows = [index_entry(s) for s in SIGNATURES]
    if not query:
        return rows
    words = query.lower().split()

    def hay(r: dict) -> str:
        return " ".join(str(v) for v in r.values()).lower()

    return [r for r in rows if all(w in hay(r) for w in words)]


__all__ = ["SIGNATURES", "Diagnosis", "Fix", "Signature", "diagnose", "errors_index"]
