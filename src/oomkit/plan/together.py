"""Several models on one machine: what the models planned alongside the main one hold on each GPU (a draft model
for speculative decoding, an embedding model, a second server), estimated with their own engine and settings, so
the main model's plan fits in what they leave (Goals.held).

Each companion is a model name (run with the main model's engine, its defaults, at the asked context or its own
maximum if smaller) or a whole engine command ("llama-server -m draft.gguf -c 4096", "vllm serve BAAI/bge-m3
--gpu-memory-utilization 0.1").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..engines.base import EngineModule, get_engine
from ..engines.cmdline import parse_command, split_command
from ..errors import OomkitError
from ..limits import context_limit
from ..memory import Device
from ..request import resolve_model
from .rating import shell_join


@dataclass(frozen=True)
class Companion:
    ref: str  # as given
    engine: str
    command: str  # the command that runs it, as typed
    by_device: tuple[tuple[str, int], ...]  # (device id, bytes it holds there)
    host_bytes: int

    def to_dict(self) -> dict[str, Any]:
        return {"ref": self.ref, "engine": self.engine, "command": self.command,
                "devices": [{"id": d, "bytes": b} for d, b in self.by_device], "host_bytes": self.host_bytes}


def companion(item: str, main: EngineModule, devices: tuple[Device, ...], context: int) -> Companion:
    text = item.strip()
    if not text:
        raise OomkitError("--also takes a model name or an engine command")
    if " " in text:
        try:
            argv = split_command(text)
        except ValueError as e:
            raise OomkitError(f"cannot read --also {text!r}: {e}") from None
        parsed = parse_command(argv)
        if parsed.model is None:
            raise OomkitError(f"--also {text!r} names no model")
        eng, model, quant, settings = get_engine(parsed.engine), parsed.model, parsed.quant, parsed.settings
        spec = resolve_model(eng, model, quant)
    else:
        eng, model = main, text
        spec = resolve_model(eng, model)
        first = eng.knobs(model, spec, devices, eng.settings(), fixed_format=True)[0]  # its weights, default KV
        settings = eng.with_context(first.settings, min(context, context_limit(spec)) * first.context_factor)
        argv = eng.command(first.model or model, settings, first.quant)
    est = eng.estimate(spec, devices, settings)
    return Companion(ref=text, engine=eng.name, command=shell_join(argv),
                     by_device=tuple((u.id, u.total_bytes) for u in est.devices), host_bytes=est.host.total_bytes)


def held(companions: tuple[Companion, ...]) -> tuple[tuple[str, int], ...]:
    return tuple(pair for c in companions for pair in c.by_device)
