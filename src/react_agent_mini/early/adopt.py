"""The session's first model call takes the early request's answer, if the call is the request that went early.

`matches` compares what the call would send — URL, the provider's headers, the body's bytes — with what went
early (`providers.first_call.pending`). The same: the answer is read from the early socket and handed on as the
`httpx.Response` httpx would have returned, parsed by h11 as httpcore parses it, so the caller's time limits,
error mapping and retries apply unchanged (a socket error is `httpx.ReadError`, a broken answer
`httpx.RemoteProtocolError`). Different: the early connection is closed before anything is read (the server gets
no complete answer to send), and the call goes out as always — an error instead under `CHECK_VARIABLE`, which the
tests set.
"""

from __future__ import annotations

import asyncio
import os
import socket
import ssl
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Protocol

import h11
import httpx

from ..trace import trace

_CHUNK = 65536
CHECK_VARIABLE = "REACT_AGENT_MINI_EARLY_CHECK"
"""Set to 1 (the test suite does), an early request that the session's first call does not match is an error
instead of a silent resend: what would only cost time in use fails the tests."""


class Sent(Protocol):
    """What went early (`wire.Sent`, which calls in here: named by its shape, not imported)."""

    sock: socket.socket
    url: str
    target: str
    host: str
    headers: dict[str, str]
    body: bytes

    def close(self) -> None: ...


class EarlyRequestDiffers(RuntimeError):
    """The early request is not the session's first (only raised under `CHECK_VARIABLE`)."""


def matches(sent: Sent, url: str, headers: Mapping[str, str], content: bytes) -> bool:
    """Is `sent` the request a call to `url` with `headers` and `content` would send? If not, it is closed unread."""
    differs = [
        what
        for what, same in (
            ("url", url == sent.url),
            ("headers", {k.lower(): v for k, v in headers.items()} == {k.lower(): v for k, v in sent.headers.items()}),
            ("body", content == sent.body),
        )
        if not same
    ]
    if not differs:
        trace("early.taken", bytes=len(content))
        return True
    sent.close()
    trace("early.differs", what=",".join(differs))
    if os.environ.get(CHECK_VARIABLE) == "1":
        raise EarlyRequestDiffers(f"the early first request differs from the session's in its {', '.join(differs)}")
    return False


async def response(sent: Sent, request: httpx.Request) -> httpx.Response:
    """The answer to `sent` as httpx's streamed response to `request`: status and headers read, body to come."""
    reader = _Reader(sent.sock)
    connection = h11.Connection(our_role=h11.CLIENT)
    try:
        _replay(connection, sent)
        while True:
            event = connection.next_event()
            if event is h11.NEED_DATA:
                connection.receive_data(await reader.recv())
            elif isinstance(event, h11.Response):
                break
            elif not isinstance(event, h11.InformationalResponse):
                raise httpx.RemoteProtocolError(f"unexpected {type(event).__name__} before the answer")
    except h11.RemoteProtocolError as exc:
        reader.close()
        raise httpx.RemoteProtocolError(str(exc)) from exc
    except BaseException:
        reader.close()
        raise
    return httpx.Response(
        event.status_code,
        headers=[(name, value) for name, value in event.headers],
        stream=_Body(connection, reader),
        request=request,
        extensions={"http_version": b"HTTP/" + event.http_version, "reason_phrase": event.reason},
    )


def _replay(connection: h11.Connection, sent: Sent) -> None:
    """Tell h11 what was sent (it reads the answer knowing the request, as httpcore's connection does)."""
    headers = [("Host", sent.host), ("Content-Length", str(len(sent.body)))]
    connection.send(h11.Request(method="POST", target=sent.target, headers=headers))
    connection.send(h11.Data(data=sent.body))
    connection.send(h11.EndOfMessage())


class _Body(httpx.AsyncByteStream):
    """The answer's body as it arrives (chunked, sized or to the end: h11 decides); closing closes the socket."""

    def __init__(self, connection: h11.Connection, reader: _Reader) -> None:
        self._connection = connection
        self._reader = reader

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            while True:
                event = self._connection.next_event()
                if event is h11.NEED_DATA:
                    self._connection.receive_data(await self._reader.recv())
                elif isinstance(event, h11.Data):
                    yield bytes(event.data)
                elif isinstance(event, h11.EndOfMessage):
                    return
                else:
                    raise httpx.RemoteProtocolError(f"unexpected {type(event).__name__} in the answer")
        except h11.RemoteProtocolError as exc:
            raise httpx.RemoteProtocolError(str(exc)) from exc

    async def aclose(self) -> None:
        self._reader.close()


class _Reader:
    """Non-blocking reads of a plain or TLS socket on the running loop (asyncio's own `sock_recv` takes no TLS
    socket): try to read, else wait until the socket is ready and try again."""

    def __init__(self, sock: socket.socket) -> None:
        sock.setblocking(False)
        self._sock = sock

    async def recv(self) -> bytes:
        loop = asyncio.get_running_loop()
        while True:
            try:
                return self._sock.recv(_CHUNK)
            except (BlockingIOError, InterruptedError, ssl.SSLWantReadError):
                await self._ready(loop, loop.add_reader, loop.remove_reader)
            except ssl.SSLWantWriteError:
                await self._ready(loop, loop.add_writer, loop.remove_writer)
            except OSError as exc:
                raise httpx.ReadError(str(exc) or type(exc).__name__) from exc

    async def _ready(
        self,
        loop: asyncio.AbstractEventLoop,
        add: Callable[[int, Callable[[], None]], object],
        remove: Callable[[int], object],
    ) -> None:
        ready: asyncio.Future[None] = loop.create_future()

        def wake() -> None:
            if not ready.done():
                ready.set_result(None)

        fd = self._sock.fileno()
        add(fd, wake)
        try:
            await ready
        finally:
            remove(fd)

    def close(self) -> None:
        self._sock.close()  # never raises for a socket
