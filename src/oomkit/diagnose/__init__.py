"""Diagnose: read an out-of-memory error or a whole engine log; say which program failed, the stage that ran out,
the numbers behind it and the fix, computed (see reader.py for the rules and signatures.py for the messages)."""

from .reader import diagnose
from .result import Diagnosis, Fix
from .signatures import SIGNATURES, Signature

__all__ = ["SIGNATURES", "Diagnosis", "Fix", "Signature", "diagnose"]
