"""One session with one MCP server, from spawn (or first request) to shutdown: the handshake and what the server
offers, requests bounded by the call timeout, and noticing that the server went away.

Each connection lives in one asyncio task that enters an SDK session (`sdk.Session`) and leaves it (the SDK's
task groups must be exited by the task that entered them). The task waits until the manager closes or the
transport reports end-of-stream (the server died), then leaves the session, which stops the process and its
whole process group (see `transport`). Server stderr goes to `<log_dir>/<server>.log`, the server's own log
notifications too. A reconnect is a new connection (`manager`).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from .. import __version__
from . import McpError
from .config import ServerConfig
from .failures import Disconnected, describe_error, disconnect_kind, leaf
from .http import http_transport, sse_transport
from .transport import StdioServer, last_log_line

if TYPE_CHECKING:
    import anyio
    import mcp_types
    from mcp.shared.message import SessionMessage

    from .sdk import Session

T = TypeVar("T")

MAX_LIST_PAGES = 20
"""Pages read from one paginated list before stopping (a server whose cursor never ends cannot hang us)."""


class _EofWatch:
    """The transport's read stream, reporting end-of-stream (the server went away) to the connection."""

    def __init__(self, inner: Any, on_eof: Callable[[], None]) -> None:
        self._inner = inner
        self._on_eof = on_eof

    @property
    def last_context(self) -> Any:  # the dispatcher reads it from context-carrying streams
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        import anyio

        try:
            item: SessionMessage | Exception = await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self._on_eof()
            raise
        return item

    def __aiter__(self) -> _EofWatch:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _EofWatch:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


class _WatchedTransport:
    """Any SDK transport, with its read stream wrapped in `_EofWatch`."""

    def __init__(self, inner: AbstractAsyncContextManager[tuple[Any, Any]], on_eof: Callable[[], None]) -> None:
        self._inner = inner
        self._on_eof = on_eof

    async def __aenter__(self) -> tuple[Any, Any]:
        read, write = await self._inner.__aenter__()
        return _EofWatch(read, self._on_eof), write

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        return await self._inner.__aexit__(exc_type, exc, tb)


class Connection:
    """One session with one server, from spawn (or first request) to shutdown; a reconnect is a new one."""

    def __init__(
        self,
        config: ServerConfig,
        *,
        log_path: Path,
        connect_timeout: float,
        sdk: Awaitable[None],
        on_connected: Callable[[Connection], None],
    ) -> None:
        self.config = config
        self.log_path = log_path
        self.connect_timeout = connect_timeout
        self.ready = asyncio.Event()
        """Set once connected or failed."""
        self.alive = False
        """True from the end of the handshake until the server goes away or we close."""
        self.error = ""
        self.client: Session | None = None
        self.tools: list[mcp_types.Tool] = []
        self.prompts: list[mcp_types.Prompt] = []
        self.has_resources = False
        self.refused = 0
        """HTTP: requests that could not even connect (so the server never saw them)."""
        self.expired = 0
        """HTTP: requests refused because the server forgot our session (so it did not process them)."""
        self.http_errors = 0
        self.http_error = ""
        """HTTP: error statuses seen, and the latest as a line (the SDK reports most as a generic error)."""
        self.busy = 0
        """Requests under way."""
        self.begun = 0
        """Requests begun so far."""
        self.instructions = ""
        self.detail = ""
        self.cause = ""
        """Why the first of a run of failed restarts was needed (so failures do not nest in the message)."""
        self.connect_seconds: float | None = None
        self._sdk = sdk
        self._on_connected = on_connected
        self._wake = asyncio.Event()
        self._closing = False
        self._scope: anyio.CancelScope | None = None
        self._task: asyncio.Task[None] | None = None
        self._stdio: StdioServer | None = None

    @property
    def connected_once(self) -> bool:
        return self.connect_seconds is not None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=f"mcp:{self.config.name}")

    def _on_eof(self) -> None:
        if self.alive and not self._closing:
            self.error = "the server closed the connection" + self._exit_hint()
        self.alive = False
        self._wake.set()

    # ---- what our HTTP client reports (see `http`) ----

    def on_refused(self) -> None:
        self.refused += 1

    def on_session_expired(self) -> None:
        self.expired += 1

    def on_http_error(self, text: str, *, fatal: bool) -> None:
        self.http_errors += 1
        self.http_error = text
        if fatal:  # legacy SSE: the SDK stops sending after a failed POST; a new connection must take over
            self.lost()

    def lost(self) -> None:
        """A request found the connection gone (HTTP servers give no end-of-stream to notice it by)."""
        if self.alive and not self.error:
            self.error = "the connection was lost" + self._exit_hint()
        self.alive = False
        self._wake.set()

    async def close(self) -> None:
        """Stop the server (idempotent); returns once its process is gone."""
        self._closing = True
        self._wake.set()
        if not self.ready.is_set() and self._task is not None:
            if self._scope is not None:
                self._scope.cancel()  # still connecting: abandon the handshake
            else:
                self._task.cancel()  # still spawning or importing the SDK
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self) -> None:
        started = time.monotonic()
        try:
            if self.config.transport == "stdio":
                # spawn before the SDK is imported: the server's start and our import overlap
                self._stdio = StdioServer(self.config, self.log_path)
                await self._stdio.spawn()
            await self._sdk
            import anyio

            if self._closing:
                return
            remaining = self.connect_timeout - (time.monotonic() - started)
            self._scope = anyio.CancelScope(deadline=anyio.current_time() + remaining)
            with self._scope:
                async with AsyncExitStack() as stack:
                    client = self._client()
                    await stack.enter_async_context(client)
                    await self._discover(client)
                    self._scope.deadline = math.inf
                    self.client = client
                    self.connect_seconds = time.monotonic() - started
                    self.alive = True
                    self._on_connected(self)
                    self.ready.set()
                    await self._wake.wait()
                    self.alive = False
            if self._scope.cancelled_caught and not self._closing and not self.ready.is_set():
                self.error = f"no answer within {self.connect_timeout:g} s" + self._exit_hint()
        except Exception as exc:  # every failure of a server is a line in a warning, never a crash
            self.error = self._describe_failure(exc)
        finally:
            self.alive = False
            self.client = None
            if self._closing and not self.error:
                self.error = "closed"
            self.ready.set()
            if self._stdio is not None:
                await self._stdio.stop()  # normally done already, on leaving the client

    def _describe_failure(self, exc: Exception) -> str:
        if self.http_error:
            return self.http_error
        if self.config.transport == "stdio" and not self.connected_once and disconnect_kind(exc):
            return "the server exited during startup" + self._exit_hint()
        hint = "" if isinstance(leaf(exc), FileNotFoundError | PermissionError) else self._exit_hint()
        return describe_error(exc, self.config) + hint

    def _client(self) -> Session:
        import mcp_types

        from .sdk import Session

        transport: AbstractAsyncContextManager[tuple[Any, Any]]
        config = self.config
        if self._stdio is not None:
            transport = self._stdio.streams()
        elif config.transport == "sse":
            transport = sse_transport(config.url, config.headers, self)
        else:
            transport = http_transport(config.url, config.headers, self)
        return Session(
            _WatchedTransport(transport, self._on_eof),  # 2026-07-28 discover first, else 2025-11-25 initialize
            client_info=mcp_types.Implementation(name="react-agent-mini", version=__version__),
            logging_callback=self._server_log,
        )

    async def _discover(self, client: Session) -> None:
        capabilities = client.server_capabilities
        info = client.server_info
        who = f"{info.name} {info.version}".strip() if info else "unnamed server"
        self.detail = f"{who}, protocol {client.protocol_version}"
        self.instructions = (client.instructions or "").strip()
        if capabilities.tools is not None:
            self.tools = first_of_each(await paged(lambda cursor: client.list_tools(cursor), "tools"))
        self.has_resources = capabilities.resources is not None
        if capabilities.prompts is not None:
            try:
                self.prompts = first_of_each(await paged(lambda cursor: client.list_prompts(cursor), "prompts"))
            except Exception:  # a broken prompt listing must not cost the server its tools
                self.prompts = []

    async def _server_log(self, params: mcp_types.LoggingMessageNotificationParams) -> None:
        # servers' notifications/message go to the same log as their stderr
        if self.config.transport != "stdio":
            return
        with contextlib.suppress(OSError), self.log_path.open("a", encoding="utf-8") as log:
            log.write(f"[{params.level}] {params.logger or ''} {params.data}\n")

    def _exit_hint(self) -> str:
        """For stdio servers: the last line the server wrote to stderr, and where the rest is."""
        if self.config.transport != "stdio":
            return ""
        last = last_log_line(self.log_path)
        return f'; it said: "{last}" (log: {self.log_path})' if last else ""

    async def request(self, label: str, send: Callable[[Session], Awaitable[T]], timeout: float) -> T:
        """One request on this connection, bounded by `timeout` seconds (the call timeout); Disconnected when the
        server went away. `label` names the request in errors ("the call to X on the MCP server Y")."""
        import anyio

        client = self.client
        if client is None:
            raise Disconnected(delivered=False)
        # a refused connect proves the server never saw this request only if no other request was under way
        alone, refused = self.busy == 0, self.refused
        expired, http_errors = self.expired, self.http_errors
        self.busy += 1
        self.begun += 1
        begun = self.begun
        try:
            with anyio.fail_after(timeout):
                return await send(client)
        except TimeoutError:
            raise McpError(f"{_capital(label)} timed out after {timeout:g} s.") from None
        except Exception as exc:
            if self.http_errors > http_errors:  # the SDK's error says less than the status we saw
                raise McpError(f"{_capital(label)} failed: {self.http_error}") from None
            if self.expired > expired:  # the server forgot our session: it refused the request unprocessed
                self.lost()
                raise Disconnected(delivered=False) from None
            if gone := disconnect_kind(exc):
                self.lost()
                unsent = gone == "unsent" or (alone and self.begun == begun and self.refused > refused)
                raise Disconnected(delivered=not unsent) from None
            if isinstance(exc, McpError):
                raise
            raise McpError(f"{_capital(label)} failed: {describe_error(exc, self.config)}") from None
        finally:
            self.busy -= 1


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def first_of_each(items: list[Any]) -> list[Any]:
    """Listed items with their name's first listing only (a server may list a name twice, or a cursor may
    serve a page again)."""
    first: dict[str, Any] = {}
    for item in items:
        first.setdefault(item.name, item)
    return list(first.values())


async def paged(fetch: Callable[[str | None], Awaitable[Any]], field: str) -> list[Any]:
    """Every item of a paginated list result."""
    items: list[Any] = []
    cursor: str | None = None
    for _ in range(MAX_LIST_PAGES):
        page = await fetch(cursor)
        items += getattr(page, field)
        cursor = page.next_cursor
        if not cursor:
            break
    return items
