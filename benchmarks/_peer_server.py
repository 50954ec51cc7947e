"""A loopback fake model for the peers benchmark: one server, three wire formats, every request timed.

`POST /v1/messages` answers as Anthropic Messages and `POST /v1/chat/completions` as Chat Completions, with the
stream builders of `tests/fakes/fake_llm.py` (so ram meets the bytes its tests check); `POST /v1/responses` answers
as the OpenAI Responses API (`_responses_fake.py`). Unlike the test fake it keeps connections alive (as the real
APIs do, and as Claude Code's and Codex's HTTP clients expect), validates nothing (a peer's request shapes are
its own business: Claude Code puts `"role": "system"` messages in `messages`), and records for each request when
its head arrived and when the last byte of the answer was written, so a run's *server time* is known and wall
time minus server time is the program's own cost. `POST /v1/messages/count_tokens` gets a token count; any other
request a 404 (recorded too, so a peer reaching for something else shows).

The event loop runs in a daemon thread; `received_at` and `done_at` are `time.monotonic()`, the clock the
benchmark's `t0` comes from.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import itertools
import json
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from tests.fakes.fake_llm import Reply, anthropic_events, openai_events, read_request

from ._responses_fake import responses_events

ROUTES = {
    "/v1/messages": "anthropic",
    "/messages": "anthropic",
    "/v1/chat/completions": "openai",
    "/chat/completions": "openai",
    "/v1/responses": "responses",
    "/responses": "responses",
}


@dataclass
class Served:
    """One request and its answer."""

    method: str
    path: str
    wire: str  # "anthropic", "openai", "responses", or "other"
    headers: dict[str, str]
    body: dict[str, Any]
    size: int  # request body bytes
    received_at: float  # time.monotonic() when the request head had arrived
    done_at: float = 0.0  # … when the last byte of the answer was written
    answer: str = ""  # "tool:<name>", "text", or the status of a non-streamed answer

    @property
    def seconds(self) -> float:
        return max(0.0, self.done_at - self.received_at)


Responder = Callable[[Served], Reply]


@dataclass
class PeerServer:
    """Scripted loopback model server; `responder` picks each answer from the request."""

    responder: Responder
    requests: list[Served] = field(default_factory=list)
    _port: int | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _ready: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _loop: asyncio.AbstractEventLoop | None = None
    _stop: asyncio.Event | None = None

    @property
    def url(self) -> str:
        if self._port is None:
            raise RuntimeError("PeerServer is not started")
        return f"http://127.0.0.1:{self._port}"

    def since(self, n: int) -> list[Served]:
        """The requests recorded after the first `n`."""
        with self._lock:
            return list(self.requests[n:])

    def count(self) -> int:
        with self._lock:
            return len(self.requests)

    def __enter__(self) -> PeerServer:
        self._thread = threading.Thread(target=self._main, name="peer-fake", daemon=True)
        self._thread.start()
        if not self._ready.wait(10) or self._port is None:
            raise RuntimeError("PeerServer failed to start")
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._loop is not None and self._stop is not None:
            with contextlib.suppress(RuntimeError):
                self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _main(self) -> None:
        loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(self._serve_forever())
        finally:
            self._ready.set()
            loop.close()

    async def _serve_forever(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        server = await asyncio.start_server(self._connection, "127.0.0.1", 0, limit=1 << 24)
        self._port = server.sockets[0].getsockname()[1]
        self._ready.set()
        try:
            await self._stop.wait()
        finally:
            server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait_closed(), 2)

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while await self._one_request(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        except Exception:
            traceback.print_exc()
        finally:
            writer.transport.abort()

    async def _one_request(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Read one request, answer it; False when the client closed the connection or asked to."""
        request = await read_request(reader, writer)
        if request is None:
            return False
        received_at = time.monotonic()
        method, path, headers, raw = request.method, request.path, request.headers, request.body
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = None
        body = parsed if isinstance(parsed, dict) else {}
        wire = ROUTES.get(path, "other") if method == "POST" else "other"
        record = Served(method, path, wire, headers, body, len(raw), received_at)
        with self._lock:
            self.requests.append(record)
        if wire == "other":
            await self._other(writer, record)
        else:
            await self._stream(writer, record)
        record.done_at = time.monotonic()
        return headers.get("connection", "").lower() != "close"

    def _head(self, status: int, reason: str, headers: dict[str, str]) -> bytes:
        base = {"date": email.utils.formatdate(usegmt=True), "x-request-id": f"req_fake{next(self._ids):08d}"}
        lines = [f"HTTP/1.1 {status} {reason}", *(f"{k}: {v}" for k, v in {**base, **headers}.items())]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    async def _other(self, writer: asyncio.StreamWriter, record: Served) -> None:
        value: dict[str, Any]
        if record.method == "POST" and record.path.endswith("/messages/count_tokens"):
            status, reason, value = 200, "OK", {"input_tokens": 1000}
        else:
            status, reason = 404, "Not Found"
            value = {"error": {"type": "not_found_error", "message": f"{record.method} {record.path}"}}
        data = json.dumps(value).encode()
        record.answer = str(status)
        head = {"content-type": "application/json", "content-length": str(len(data))}
        writer.write(self._head(status, reason, head) + (b"" if record.method == "HEAD" else data))
        await writer.drain()

    async def _stream(self, writer: asyncio.StreamWriter, record: Served) -> None:
        try:
            reply = self.responder(record)
        except Exception:
            traceback.print_exc()
            reply = Reply(text="(the benchmark's responder failed)")
        record.answer = f"tool:{reply.tool_calls[0].name}" if reply.tool_calls else "text"
        build = {"anthropic": anthropic_events, "openai": openai_events, "responses": responses_events}[record.wire]
        events = build(reply, record.body, lambda: next(self._ids))
        head = {"content-type": "text/event-stream", "cache-control": "no-cache", "transfer-encoding": "chunked"}
        payload = b"".join(b"%x\r\n%s\r\n" % (len(e), e) for e in events) + b"0\r\n\r\n"
        writer.write(self._head(200, "OK", head) + payload)
        await writer.drain()
