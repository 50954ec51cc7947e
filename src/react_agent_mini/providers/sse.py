"""Server-sent events: lines in, `(event, data)` pairs out (the WHATWG parsing rules we need).

Pure and incremental, so it can be fed whatever line boundaries the network produces.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator

import msgspec


class ServerSentEvent(msgspec.Struct, frozen=True):
    """One dispatched event."""

    event: str
    """The `event:` field, `message` when absent."""
    data: str
    """The `data:` lines joined with newlines."""


class SSEDecoder:
    """Feed it one line at a time (without the line terminator); it returns an event on each blank line."""

    def __init__(self) -> None:
        self._event = ""
        self._data: list[str] = []

    def feed(self, line: str) -> ServerSentEvent | None:
        if line == "":
            if not self._data and not self._event:
                return None
            event = ServerSentEvent(self._event or "message", "\n".join(self._data))
            self._event, self._data = "", []
            return event
        if line.startswith(":"):
            return None  # comment / keep-alive
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        # `id` and `retry` are irrelevant for one-shot model streams.
        return None

    def flush(self) -> ServerSentEvent | None:
        """The pending event when the stream ended without a final blank line."""
        return self.feed("")


async def iter_sse(lines: AsyncIterable[str]) -> AsyncIterator[ServerSentEvent]:
    """Decode an async stream of lines into events."""
    decoder = SSEDecoder()
    async for raw in lines:
        # httpx splits on \r, \n and \r\n already; a chunk may still carry several lines.
        for line in raw.splitlines() or [""]:
            event = decoder.feed(line)
            if event is not None:
                yield event
    tail = decoder.flush()
    if tail is not None:
        yield tail
