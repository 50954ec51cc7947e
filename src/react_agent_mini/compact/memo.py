"""Per-message memo for the estimates that run before every model call.

Messages are immutable, so a message's size never changes: computing it once is enough. The memo is keyed by
object identity and keeps the object alive while its entry exists, so an id can never be reused for another
message while its value is cached. It is bounded, and simply starts afresh when full.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

MAX_ENTRIES = 50_000


class IdentityMemo:
    """`memo(obj, compute)` → `compute(obj)`, computed once per object."""

    def __init__(self) -> None:
        self._values: dict[int, tuple[object, int]] = {}

    def __call__(self, obj: T, compute: Callable[[T], int]) -> int:
        entry = self._values.get(id(obj))
        if entry is not None and entry[0] is obj:
            return entry[1]
        value = compute(obj)
        if len(self._values) >= MAX_ENTRIES:
            self._values.clear()
        self._values[id(obj)] = (obj, value)
        return value
