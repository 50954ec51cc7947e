"""One 429 backoff shared by every worker of a batch, per endpoint (429 and Anthropic's 529 "overloaded").

Each worker still retries its own calls (`providers/retry.py`), but a 429 one worker gets pauses them all: every
model call first asks the shared state how long to wait. After a 429 the endpoint is paused for its `retry-after`
(or an exponential backoff when it gives none), and until a call succeeds again the calls are let through one at a
time, `SPACING` apart, so the workers do not all hit the endpoint in the same instant when the pause ends.

Where the state lives, by engine:
- the local pool: a small JSON file per endpoint in `DIR/.limits/`, read and written under `flock`. No broker
  process to start or to lose: a worker that dies drops its lock with it, any process on the machine can share it,
  and a pause seen just before Ctrl+C still holds for the rerun. (A multiprocessing manager would be one more
  process whose death breaks every worker's proxy, and it cannot outlive the run.)
- Ray: workers on other machines cannot see DIR, so the same `BackoffState` lives in a Ray actor
  (`ray_engine.Coordinator`).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import os
import random
import time
from collections.abc import AsyncGenerator, Callable
from pathlib import Path
from typing import Protocol

import msgspec

from ..events import ModelEvent
from ..providers.errors import ProviderError, RateLimitError

OVERLOADED = 529
"""Anthropic's "overloaded": like a 429, it is about the endpoint, not the call."""
SPACING = 0.25
"""Seconds between calls let through while an endpoint recovers from a 429."""
BASE_PAUSE = 1.0
"""The pause after a 429 without `retry-after`; doubled for each 429 in a row."""
MAX_PAUSE = 60.0
"""The longest pause (a server asking for more is capped, as `RetryPolicy.max_retry_after` does)."""


class BackoffState(msgspec.Struct):
    """An endpoint's shared backoff; times are seconds since the epoch (comparable across processes)."""

    paused_until: float = 0.0
    streak: int = 0
    """429s since the last call that succeeded."""
    next_slot: float = 0.0
    """While recovering: when the next call may go."""

    def reserve(self, now: float) -> float:
        """Seconds the caller must wait before its call (0 when the endpoint is not paused nor recovering)."""
        if self.streak == 0 and now >= self.paused_until:
            return 0.0
        slot = max(now, self.paused_until, self.next_slot)
        self.next_slot = slot + SPACING
        return slot - now

    def penalize(self, now: float, retry_after: float | None, rand: Callable[[], float] = random.random) -> float:
        """A call got a 429: pause the endpoint; the pause, in seconds."""
        self.streak += 1
        if retry_after is not None:
            pause = min(max(retry_after, 0.0), MAX_PAUSE)
        else:
            pause = min(MAX_PAUSE, BASE_PAUSE * 2 ** (self.streak - 1)) * (0.5 + rand() / 2)
        self.paused_until = max(self.paused_until, now + pause)
        self.next_slot = self.paused_until
        return pause

    def succeeded(self) -> bool:
        """A call went through; True when that ended a recovery (the state changed)."""
        if self.streak == 0:
            return False
        self.streak, self.next_slot = 0, 0.0
        return True


class Limiter(Protocol):
    """The shared state's home (a file, an actor); every method is safe to call from many processes."""

    async def reserve(self, key: str) -> float: ...

    async def penalize(self, key: str, retry_after: float | None) -> None: ...

    async def succeeded(self, key: str) -> None: ...


class FileLimiter:
    """`BackoffState`s in `directory`, one JSON file per endpoint, changed under an exclusive `flock`."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        with contextlib.suppress(OSError):  # made on first use then (a full disk: see `_change`)
            directory.mkdir(parents=True, exist_ok=True)

    async def reserve(self, key: str) -> float:
        return self._change(key, lambda state: state.reserve(time.time()))

    async def penalize(self, key: str, retry_after: float | None) -> None:
        self._change(key, lambda state: state.penalize(time.time(), retry_after))

    async def succeeded(self, key: str) -> None:
        self._change(key, lambda state: float(state.succeeded()))

    def _change(self, key: str, change: Callable[[BackoffState], float]) -> float:
        """Apply `change` to the key's state under the lock; written back only when it changed. A state that cannot
        be read or written (a full disk, which stops the batch anyway) holds no call back: 0."""
        # microseconds of work under the lock: taken in the event loop's thread on purpose
        path = self.directory / (hashlib.sha1(key.encode()).hexdigest()[:16] + ".json")
        try:
            return self._change_file(path, change)
        except OSError:
            return 0.0

    def _change_file(self, path: Path, change: Callable[[BackoffState], float]) -> float:
        self.directory.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            raw = os.pread(fd, 4096, 0)
            state = BackoffState()
            with contextlib.suppress(msgspec.DecodeError, msgspec.ValidationError):
                state = msgspec.json.decode(raw, type=BackoffState) if raw else state
            before = msgspec.json.encode(state)
            value = change(state)
            after = msgspec.json.encode(state)
            if after != before:
                os.ftruncate(fd, 0)
                os.pwrite(fd, after, 0)
            return value
        finally:
            os.close(fd)


class NoLimiter:
    """No shared state: each worker backs off on its own (as separate `ram` runs do)."""

    async def reserve(self, key: str) -> float:
        return 0.0

    async def penalize(self, key: str, retry_after: float | None) -> None:
        return None

    async def succeeded(self, key: str) -> None:
        return None


def endpoint_key(kind: str, base_url: str) -> str:
    """The limiter's key for an endpoint: rate limits belong to the endpoint (and key), not to one task."""
    return f"{kind} {base_url.rstrip('/')}"


async def gated(
    start: Callable[[], AsyncGenerator[ModelEvent, None]],
    limiter: Limiter,
    key: str,
) -> AsyncGenerator[ModelEvent, None]:
    """One attempt of a model call behind the shared gate: wait for its slot, then stream; a 429 (or 529) pauses
    everyone (and is raised on to the caller's own retry), a success ends a recovery."""
    wait = await limiter.reserve(key)
    if wait > 0:
        await asyncio.sleep(wait)
    try:
        async with contextlib.aclosing(start()) as events:
            async for event in events:
                yield event
    except ProviderError as error:
        if isinstance(error, RateLimitError) or error.status == OVERLOADED:
            await limiter.penalize(key, error.retry_after)
        raise
    await limiter.succeeded(key)
