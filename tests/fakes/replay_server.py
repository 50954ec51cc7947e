"""A loopback HTTP server that answers with recorded responses, byte for byte.

`fake_llm.py` *builds* its answers from scripts; this server *replays* them: each request gets the next
:class:`RecordedResponse` of its queue — the recorded status line, the recorded headers and the recorded body,
written in the recorded pieces (one HTTP chunk per piece when the recording was chunked). Nothing is parsed or
rebuilt on the way out, so an SSE stream with comments, an `event: error` line, a JSON body where a stream was
asked for, or an error status reaches the client exactly as the provider sent it.

Only the framing headers are the server's own: `content-length` / `transfer-encoding` (the recorded body may have
been decoded or redacted, so its length is counted again, and a recorded `content-encoding` is dropped: recordings
hold decoded bodies) and `connection: close` (one request per connection, as in `fake_llm.py`).

When the queue is empty the server answers with `then(request)` (a scripted follow-up, e.g. "done"), else repeats
the last recording when `repeat_last` (a client that retries an error gets the same error), else a 422 that says
the recording ran out (a status no client retries), so a request the test did not expect is visible in the
client's error, never answered by chance. Every request is recorded (:attr:`ReplayServer.requests`). The event
loop runs in a daemon thread, so a subprocess (the CLI) can talk to it while the test waits.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import traceback
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any

FRAMING_HEADERS = frozenset({"content-length", "transfer-encoding", "connection", "keep-alive", "content-encoding"})
"""Recorded headers the server does not send: it frames the body itself (see the module's docstring)."""


@dataclass(frozen=True)
class RecordedResponse:
    """One recorded HTTP response: status line, headers in order, and the body in the pieces it is written in."""

    status: int
    reason: str
    headers: tuple[tuple[str, str], ...]
    chunks: tuple[bytes, ...]
    chunked: bool = True
    """Sent with `transfer-encoding: chunked`, one HTTP chunk per piece (else one body with `content-length`)."""

    @property
    def body(self) -> bytes:
        return b"".join(self.chunks)

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)


@dataclass(frozen=True)
class ReceivedRequest:
    """What the client sent: method, path (with its query string), headers (lower-cased names), JSON body."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    """The body parsed as JSON (None when it was empty or not JSON)."""

    @property
    def route(self) -> str:
        """The path without its query string."""
        return self.path.partition("?")[0]


Responder = Callable[[ReceivedRequest], RecordedResponse]


def ran_out(request: ReceivedRequest) -> RecordedResponse:
    """What an unexpected request gets: a refusal no client retries, saying why."""
    body = json.dumps({"error": {"message": f"replay server: no recorded response left for {request.path}"}})
    headers = (("content-type", "application/json"),)
    return RecordedResponse(422, "Recording Exhausted", headers, (body.encode(),), chunked=False)


class ReplayServer:
    """Serves `responses` in order on 127.0.0.1, one per request (see the module's docstring)."""

    def __init__(
        self,
        responses: Sequence[RecordedResponse] = (),
        *,
        then: Responder | None = None,
        repeat_last: bool = False,
    ) -> None:
        self._queue: deque[RecordedResponse] = deque(responses)
        self._then = then
        self._repeat_last = repeat_last
        self._last: RecordedResponse | None = None
        self.requests: list[ReceivedRequest] = []
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._port = 0
        self._error: BaseException | None = None

    # ---- life --------------------------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """`http://127.0.0.1:PORT`, no trailing slash."""
        return f"http://127.0.0.1:{self._port}"

    def start(self) -> ReplayServer:
        self._thread = threading.Thread(target=self._thread_main, name="replay-server", daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._error is not None:
            raise RuntimeError(f"replay server failed to start: {self._error!r}")
        return self

    def stop(self) -> None:
        if self._loop is not None and self._stop is not None:
            with contextlib.suppress(RuntimeError):  # the loop already closed
                self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def __enter__(self) -> ReplayServer:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    def _thread_main(self) -> None:
        loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(self._main())
        except BaseException as exc:
            self._error = exc
        finally:
            self._ready.set()
            loop.close()

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        server = await asyncio.start_server(self._handle, "127.0.0.1", 0, limit=1 << 22)
        self._port = server.sockets[0].getsockname()[1]
        self._ready.set()
        try:
            await self._stop.wait()
        finally:
            server.close()
            await server.wait_closed()

    # ---- one connection ----------------------------------------------------------------------------------------

    def _next(self, request: ReceivedRequest) -> RecordedResponse:
        with self._lock:
            self.requests.append(request)
            if self._queue:
                self._last = self._queue.popleft()
                return self._last
            last = self._last
        if self._then is not None:
            return self._then(request)
        if self._repeat_last and last is not None:
            return last
        return ran_out(request)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.transport.set_write_buffer_limits(high=0)  # each piece reaches the kernel before the next is written
        try:
            request = await _read_request(reader)
            if request is not None:
                await _write_response(writer, self._next(request))
        except (ConnectionError, asyncio.IncompleteReadError):
            writer.transport.abort()
        except Exception:
            traceback.print_exc()
            writer.transport.abort()
        else:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()


async def _read_request(reader: asyncio.StreamReader) -> ReceivedRequest | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None  # a connection opened and closed without a request
    lines = head.decode("latin-1").split("\r\n")
    method, path, _ = lines[0].split(" ", 2)
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    raw = await reader.readexactly(int(headers.get("content-length", "0")))
    try:
        body = json.loads(raw) if raw else None
    except ValueError:
        body = None
    return ReceivedRequest(method, path, headers, body)


async def _write_response(writer: asyncio.StreamWriter, response: RecordedResponse) -> None:
    head = [f"HTTP/1.1 {response.status} {response.reason}"]
    head += [f"{name}: {value}" for name, value in response.headers if name.lower() not in FRAMING_HEADERS]
    if response.chunked:
        head.append("transfer-encoding: chunked")
    else:
        head.append(f"content-length: {len(response.body)}")
    head.append("connection: close")
    writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
    await writer.drain()
    if not response.chunked:
        writer.write(response.body)
        await writer.drain()
        return
    for piece in response.chunks:
        if piece:  # an empty chunk would end the body
            writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            await writer.drain()
    writer.write(b"0\r\n\r\n")
    await writer.drain()
