"""Answers kept per object: a plan or a fit asks the same model the same question many times (every option, every
try of a context or layer split), and a model spec is frozen but costly to hash whole, so the answers are keyed by
the object's identity and the other arguments. Each entry holds its object, so that the id cannot be reused by
another object while the answer is kept; a full table is cleared rather than aged (the next question refills it)."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from contextvars import ContextVar
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class ByObject(Generic[T]):
    """A bounded table of answers by (object identity, key)."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._table: dict[tuple[int, Hashable], tuple[Any, T]] = {}

    def get(self, obj: Any, key: Hashable, compute: Callable[[], T]) -> T:
        hit = self._table.get((id(obj), key))
        if hit is not None and hit[0] is obj:
            return hit[1]
        value = compute()
        if len(self._table) >= self._size:
            self._table.clear()
        if self._size:  # a table of size 0 keeps nothing (every call computes)
            self._table[(id(obj), key)] = (obj, value)
        return value


# Set while a search weighs many settings only for whether they fit, so that an engine may skip costly work that
# cannot change that answer: "fit" in limits.largest_context (llama.cpp: a layout --fit splits with the CPU does not
# fit whatever its compute buffer is); "offload" in the planner's search for the least offload, which weighs its
# answer again outside the search (llama.cpp: a partly offloaded layout takes the closed forms, not the scheduler
# replay); "least" in check's smallest requirement, which reads the figures exactly but not how an engine searched
# for them (llama.cpp: --fit's tries that cannot succeed are not weighed). None outside a search.
SEARCHING: ContextVar[str | None] = ContextVar("searching", default=None)
