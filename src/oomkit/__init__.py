"""oomkit: exactly how much memory an LLM takes with your engine and settings, before you load it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .errors import OomkitError

if TYPE_CHECKING:
    from .estimate import MemoryEstimate

__all__ = ["OomkitError", "estimate"]


def estimate(model: Any, engine: str = "llama.cpp", **kwargs: Any) -> MemoryEstimate:
    """See oomkit.estimate.estimate (imported lazily to keep `import oomkit` light)."""
    from .estimate import estimate as _estimate

    return _estimate(model, engine, **kwargs)
