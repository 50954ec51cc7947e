"""What WebFetch fetched in the last 15 minutes, so asking about the same page again costs no request.

Keyed by the URL as fetched (after the https upgrade); entries expire 15 minutes after they were fetched, and the
least recently used go first once the cache holds more than 50 MB. One cache per session (the tool's); the
permission check runs before it, so a cached page is never shown to a call that would not have been allowed.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

TTL_SECONDS = 15 * 60
MAX_BYTES = 50_000_000

T = TypeVar("T")


class TimedCache(Generic[T]):
    """Values by key, each for `ttl` seconds, within `max_bytes` (as `size` counts them)."""

    def __init__(
        self,
        size: Callable[[T], int],
        *,
        ttl: float = TTL_SECONDS,
        max_bytes: int = MAX_BYTES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._size = size
        self._ttl = ttl
        self._max = max_bytes
        self._clock = clock
        self._entries: OrderedDict[str, tuple[float, T]] = OrderedDict()
        self._bytes = 0

    def get(self, key: str) -> T | None:
        """The value stored for `key` less than `ttl` seconds ago, or None."""
        entry = self._entries.get(key)
        if entry is None:
            return None
        stored, value = entry
        if self._clock() - stored >= self._ttl:
            self._drop(key)
            return None
        self._entries.move_to_end(key)
        return value

    def put(self, key: str, value: T) -> None:
        """Store `value` (one larger than the whole cache is not kept)."""
        if key in self._entries:
            self._drop(key)
        size = self._size(value)
        if size > self._max:
            return
        self._entries[key] = (self._clock(), value)
        self._bytes += size
        while self._bytes > self._max:
            self._drop(next(iter(self._entries)))

    def _drop(self, key: str) -> None:
        _, value = self._entries.pop(key)
        self._bytes -= self._size(value)

    def __len__(self) -> int:
        return len(self._entries)
