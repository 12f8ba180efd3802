"""What every engine module shares: devices in, a MemoryEstimate out.

An engine module turns (ModelSpec, devices, its own Settings) into a MemoryEstimate, following that engine's
real allocation rules. Settings are per engine (their fields use the engine's own option names and defaults);
this module holds only the device description and the engine registry.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
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
    """What each engine module exposes as its module-level `ENGINE`."""

    name: str

    def settings(self, **options: Any) -> Any:
        """The engine's Settings (a frozen dataclass, fields named after the engine's own options)."""
        ...

    def with_context(self, settings: Any, n_ctx: int) -> Any:
        """The same settings at another context length (used to search the largest that fits)."""
        ...

    def estimate(self, spec: Any, devices: tuple[Device, ...], settings: Any) -> Any:
        """-> oomkit.estimate.MemoryEstimate, following the engine's real allocation rules."""
        ...

    def parse_args(self, argv: list[str], env: dict[str, str] | None = None) -> tuple[str | None, str | None, Any]:
        """The engine's own flags (no program name) -> (model argument, quant or None, Settings).
        env: the engine's environment variables (OLLAMA_*), None for os.environ."""
        ...

    def flag_takes_value(self, name: str, following: str | None) -> bool:
        """Whether flag `name` consumes the next argument."""
        ...

    def default_weight_format(self, config: dict[str, Any]) -> str | None:
        """The weight format the engine loads for a model named without one (None: the config's own)."""
        ...


def _as_published(config: dict[str, Any]) -> str | None:
    return None


@dataclass(frozen=True)
class EngineModule:
    """One engine module's pure functions behind the Engine protocol (each module's `ENGINE`)."""

    name: str
    Settings: type
    estimate_fn: Callable[..., Any]  # (spec, devices, settings) -> MemoryEstimate
    with_context_fn: Callable[[Any, int], Any]  # (settings, n_ctx) -> settings
    parse_args_fn: Callable[..., tuple[str | None, str | None, Any]]  # (argv, env) -> (model, quant, settings)
    flag_takes_value_fn: Callable[[str, str | None], bool]
    default_format_fn: Callable[[dict[str, Any]], str | None] = _as_published  # None: the checkpoint as published

    def settings(self, **options: Any) -> Any:
        return self.Settings(**options)

    def with_context(self, settings: Any, n_ctx: int) -> Any:
        return self.with_context_fn(settings, n_ctx)

    def estimate(self, spec: Any, devices: tuple[Device, ...], settings: Any) -> Any:
        return self.estimate_fn(spec, devices, settings)

    def parse_args(self, argv: list[str], env: dict[str, str] | None = None) -> tuple[str | None, str | None, Any]:
        return self.parse_args_fn(argv, env)

    def flag_takes_value(self, name: str, following: str | None) -> bool:
        return self.flag_takes_value_fn(name, following)

    def default_weight_format(self, config: dict[str, Any]) -> str | None:
        return self.default_format_fn(config)


# Engine name (and the spellings users type) -> module under oomkit.engines. Imported lazily.
_ENGINES = {"llama.cpp": "llamacpp", "vllm": "vllm", "sglang": "sglang", "ollama": "ollama",
            "transformers": "transformers", "mlx": "mlx"}
_ALIASES = {"llamacpp": "llama.cpp", "llama-cpp": "llama.cpp", "llama_cpp": "llama.cpp", "llama-server": "llama.cpp",
            "llama-cli": "llama.cpp", "lmstudio": "llama.cpp", "lm-studio": "llama.cpp"}


def get_engine(name: str) -> Engine:
    key = _ALIASES.get(name.lower(), name.lower())
    module = _ENGINES.get(key)
    if module is None:
        known = ", ".join(sorted(_ENGINES))
        raise OomkitError(f"unknown engine {name!r}: known engines are {known}")
    try:
        return importlib.import_module(f"oomkit.engines.{module}").ENGINE
    except ModuleNotFoundError as e:
        if e.name == f"oomkit.engines.{module}":
            raise OomkitError(f"the {key} engine is not available in this version of oomkit") from None
        raise
