"""What every engine module shares: devices in, a MemoryEstimate out.

An engine module turns (ModelSpec, devices, its own Settings) into a MemoryEstimate, following that engine's
real allocation rules. Settings are per engine (their fields use the engine's own option names and defaults);
this module holds only the device description and the engine registry.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Protocol

from ..errors import OomkitError


@dataclass(frozen=True)
class Device:
    """One accelerator. memory_bytes None: size unknown (nothing to check the estimate against)."""

    id: str  # "CUDA0", "CUDA1", ...
    name: str = "GPU"
    memory_bytes: int | None = None
    free_bytes: int | None = None


class Engine(Protocol):
    name: str

    def parse_args(self, argv: list[str], env: dict[str, str] | None = None) -> tuple[str | None, Any]:
        """A real command line (without the program name) -> (model argument, Settings)."""
        ...

    def settings(self, **options: Any) -> Any:
        """Settings from engine-neutral and engine-specific keyword options."""
        ...

    def estimate(self, spec: Any, devices: tuple[Device, ...], settings: Any) -> Any:
        ...


# Engine name (and the spellings users type) -> module under oomkit.engines. Imported lazily.
_ENGINES = {"llama.cpp": "llamacpp"}
_ALIASES = {"llamacpp": "llama.cpp", "llama-cpp": "llama.cpp", "llama_cpp": "llama.cpp", "llama-server": "llama.cpp",
            "llama-cli": "llama.cpp", "lmstudio": "llama.cpp", "lm-studio": "llama.cpp"}


def get_engine(name: str) -> Engine:
    key = _ALIASES.get(name.lower(), name.lower())
    module = _ENGINES.get(key)
    if module is None:
        known = ", ".join(sorted(_ENGINES))
        raise OomkitError(f"unknown engine {name!r}: known engines are {known}")
    return importlib.import_module(f"oomkit.engines.{module}").ENGINE
