"""oomkit: exactly how much memory an LLM takes with your engine and settings, before you load it."""

from __future__ import annotations

from .errors import HardwareError, HubError, ModelError, OomkitError, SettingsError
from .estimate import estimate  # the function shadows the submodule of the same name
from .memory import MemoryEstimate

__all__ = ["HardwareError", "HubError", "MemoryEstimate", "ModelError", "OomkitError", "SettingsError", "estimate"]
