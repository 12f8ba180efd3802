"""oomkit: exactly how much memory an LLM takes with your engine and settings, before you load it.

`estimate` and `MemoryEstimate` load on first use (the module `__getattr__` below): every `oomkit` command imports
this package, and `oomkit --help`, `oomkit models` or `oomkit diagnose` need none of the estimator's modules.
"""

from __future__ import annotations

import sys
import types

from .errors import HardwareError, HubError, ModelError, OomkitError, SettingsError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few milliseconds of every command)
if TYPE_CHECKING:
    from typing import Any

    from .estimate import estimate
    from .memory import MemoryEstimate

__all__ = ["HardwareError", "HubError", "MemoryEstimate", "ModelError", "OomkitError", "SettingsError", "estimate"]


def __getattr__(name: str) -> Any:
    if name == "estimate":
        from .estimate import estimate  # lazy: the estimator on first use (_Package keeps the function)

        return estimate
    if name == "MemoryEstimate":
        from .memory import MemoryEstimate  # lazy: as above

        return MemoryEstimate
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


class _Package(types.ModuleType):
    """The package object: the function `estimate` shadows the submodule of the same name, whoever imports the
    submodule and whenever (the import system sets the package's attribute to a submodule it has just loaded)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "estimate" and isinstance(value, types.ModuleType) and value.__name__ == f"{__name__}.estimate":
            value = value.estimate
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
