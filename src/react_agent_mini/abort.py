"""Cooperative cancellation for one turn: set once, observed by the model stream and by running tools."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")


class Aborted(Exception):
    """The turn was aborted while waiting."""


class AbortSignal:
    """An abort flag that can also interrupt whatever is being awaited through `race`."""

    def __init__(self) -> None:
        self._event = asyncio.Event()
        self.reason = ""

    @property
    def aborted(self) -> bool:
        return self._event.is_set()

    def abort(self, reason: str = "aborted") -> None:
        if not self._event.is_set():
            self.reason = reason
            self._event.set()

    async def race(self, awaitable: Awaitable[T]) -> T:
        """Await `awaitable`, or cancel it and raise Aborted as soon as the signal is set."""
        if self.aborted:
            if asyncio.iscoroutine(awaitable):
                awaitable.close()
            raise Aborted(self.reason)
        task = asyncio.ensure_future(awaitable)
        waiter = asyncio.ensure_future(self._event.wait())
        try:
            await asyncio.wait((task, waiter), return_when=asyncio.FIRST_COMPLETED)
        except BaseException:
            task.cancel()  # our caller was cancelled: do not leave the work running
            raise
        finally:
            waiter.cancel()
        if task.done():
            return task.result()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
        raise Aborted(self.reason)
