"""A first model request sent before the session existed, handed to the first call that would send the same.

The early lane (`early/`) puts a headless run's first request on the wire before this package is imported, and
leaves it here; `http.post_sse` offers its first call to it (`take`). Only the lane knows how to compare and read
what it sent: this module holds it, below both, so the providers never import the lane.
"""

from __future__ import annotations

from ..trace import trace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Protocol

    import httpx

    class Prepared(Protocol):
        """A request already sent, whose answer is not read yet."""

        def matches(self, url: str, headers: Mapping[str, str], content: bytes) -> bool:
            """Is this the request a call to `url` with these headers and body would send? (If not, it is
            closed unread.)"""
            ...

        async def response(self, request: httpx.Request) -> httpx.Response:
            """The answer, as httpx's streamed response to `request`."""
            ...


pending: Prepared | None = None
"""The request sent early, until the first call takes it (or closes it)."""
skipped = ""
"""Why no request was sent early ("" when one was, or when nothing tried)."""


def waiting() -> bool:
    """Is there an early request (or the reason there is none) for the first call to see?"""
    return pending is not None or bool(skipped)


def take(url: str, headers: Mapping[str, str], content: bytes) -> Prepared | None:
    """The early request when it is this call's (taken once: later calls get None); else None."""
    global pending, skipped
    prepared, pending = pending, None
    if prepared is None:
        if skipped:
            trace("early.skipped", reason=skipped)
            skipped = ""
        return None
    return prepared if prepared.matches(url, headers, content) else None
