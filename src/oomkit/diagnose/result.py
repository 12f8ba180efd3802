"""The answer of `diagnose`: frozen dataclasses whose `to_dict()` is the "Diagnose JSON" of the design handbook."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Fix:
    """One change that makes it fit: engine flags, environment variables or a command to run, and the memory it
    saves (bytes; None when the text does not carry enough to compute it)."""

    summary: str
    flags: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    command: str | None = None
    saves_bytes: int | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"summary": self.summary}
        if self.flags:
            d["flags"] = list(self.flags)
        if self.env:
            d["env"] = dict(self.env)
        if self.command:
            d["command"] = self.command
        d["saves_bytes"] = self.saves_bytes
        return d


@dataclass(frozen=True)
class Diagnosis:
    engine: str | None  # the program whose message it is
    stage: str
    confidence: str = "low"  # high | medium | low
    engine_version: str | None = None
    numbers: dict[str, Any] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    causes: tuple[str, ...] = ()
    fixes: tuple[Fix, ...] = ()
    # additions to the contract
    host: str | None = None  # the program whose log it is (vLLM for a PyTorch OOM in a vLLM log)
    backend: str | None = None  # CUDA, ROCm, Metal, Vulkan, MPS ...
    signature: str | None = None  # the id of the message (oomkit errors lists them)
    line: int | None = None  # line number of the message in the text
    evidence: str | None = None  # the line itself
    recognised: tuple[str, ...] = ()  # every signature seen, in order of first appearance
    buffers: dict[str, Any] = field(default_factory=dict)  # the engine's start-up figures, bytes
    prediction: dict[str, Any] | None = None  # oomkit's own figures for the same model and settings
    phase: str | None = None  # the start-up phase that ran out after the KV cache ("CUDA graph capture", "sampler
    # warm-up"), where the text shows it
    short: dict[str, Any] | None = None  # a paste of one or two lines: ran_out, unknown (what the lines cannot tell)
    # and paste (the lines that would tell it); or unplaced, the one-line answer to a short text oomkit places nowhere

    def to_dict(self) -> dict[str, Any]:
        return {
            "engine": self.engine,
            "engine_version": self.engine_version,
            "confidence": self.confidence,
            "stage": self.stage,
            "numbers": dict(self.numbers),
            "settings": dict(self.settings),
            "causes": list(self.causes),
            "fixes": [f.to_dict() for f in self.fixes],
            "host": self.host,
            "backend": self.backend,
            "signature": self.signature,
            "line": self.line,
            "evidence": self.evidence,
            "recognised": list(self.recognised),
            "buffers": self.buffers,
            "prediction": self.prediction,
            "phase": self.phase,
            "short": self.short,
        }
