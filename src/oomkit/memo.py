"""Answers kept per object: a plan or a fit asks the same model the same question many times (every option, every
try of a context or layer split), and a model spec is frozen but costly to hash whole, so the answers are keyed by
the object's identity and the other arguments. Each entry holds its object, so that the id cannot be reused by
another object while the answer is kept; a full table is cleared rather than aged (the next question refills it)."""

from __future__ import annotations

from collections.abc import Callable, Hashable
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
