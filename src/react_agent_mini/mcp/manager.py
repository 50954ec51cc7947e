"""Connections to the configured MCP servers: concurrent background start, calls, reconnects, clean shutdown.

`start()` launches every server at once in the background: stdio servers are spawned immediately, while the
SDK's client side (≈1 s of CPU on a small machine; see `sdk`) is imported in a worker thread, so both overlap
each other and the CLI's own start. `wait_ready(timeout)` is the only place anything waits for them, and only up
to its bound. A server that fails is reported once (name and reason) and skipped; one that is merely slow keeps
connecting and its tools appear in `tools()` once it is ready.

Each connection lives in one asyncio task that enters an SDK session (`sdk.Session`) and leaves it (the SDK's
task groups must be exited by the task that entered them). The task waits until the manager closes or the
transport reports end-of-stream (the server died), then leaves the session, which stops the process and its
whole process group (see `transport`). Server stderr goes to `<log_dir>/<server>.log`, the SDK's own log records
to `<log_dir>/client.log`: nothing reaches the terminal.

A call to a server found dead gets one reconnect attempt first (then, for `reconnect_backoff` seconds, uses fail
at once). A server that dies during a call is restarted too; the call is repeated only when that cannot do
anything twice: the tool is read-only or idempotent, or the request provably never reached the server.
Otherwise the model is told what happened.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import msgspec

from .. import __version__
from ..messages import Message, user_text
from ..tools.base import Tool
from . import McpError
from .adapter import MAX_DESCRIPTION, McpTool, ToolNamer, cap_text, clean_name, render_contents
from .config import DEFAULT_CALL_TIMEOUT, DEFAULT_CONNECT_TIMEOUT, ServerConfig, Transport
from .http import http_transport, sse_transport
from .prompts import PromptInfo, bind_arguments, prompt_info, prompt_messages
from .resources import ListMcpResourcesTool, ReadMcpResourceTool, mention_text, parse_mentions, resource_entries
from .sdk import Unanswerable, schema_problem
from .transport import StdioServer, last_log_line

if TYPE_CHECKING:
    import anyio
    import mcp_types
    from mcp.shared.message import SessionMessage

    from .sdk import Session

T = TypeVar("T")
_LOG_HANDLER = "react-agent-mini-mcp"
State = Literal["connecting", "connected", "failed", "closed"]

MAX_LIST_PAGES = 20
"""Pages read from one paginated list before stopping (a server whose cursor never ends cannot hang us)."""


class ServerStatus(msgspec.Struct, frozen=True):
    """One server as `ram mcp list` and `/status` show it."""

    name: str
    transport: Transport
    state: State
    detail: str = ""
    """The failure reason, or the server's name and version and the protocol in use."""
    tools: tuple[str, ...] = ()
    """Public names of its tools (those `tools()` has handed out, or would)."""
    resources: bool = False
    """True when it declares resources."""
    prompts: tuple[str, ...] = ()
    connect_seconds: float | None = None
    """How long its start took (spawn to tools listed)."""
    log_path: str = ""
    """Its stderr log (stdio servers)."""


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


class _Connection:
    """One session with one server, from spawn (or first request) to shutdown; a reconnect is a new one."""

    def __init__(
        self,
        config: ServerConfig,
        *,
        log_path: Path,
        connect_timeout: float,
        sdk: Awaitable[None],
        on_connected: Callable[[_Connection], None],
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
        if self.config.transport == "stdio" and not self.connected_once and _disconnect_kind(exc):
            return "the server exited during startup" + self._exit_hint()
        hint = "" if isinstance(_leaf(exc), FileNotFoundError | PermissionError) else self._exit_hint()
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
            self.tools = _first_of_each(await _paged(lambda cursor: client.list_tools(cursor), "tools"))
        self.has_resources = capabilities.resources is not None
        if capabilities.prompts is not None:
            try:
                self.prompts = _first_of_each(await _paged(lambda cursor: client.list_prompts(cursor), "prompts"))
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


class _Server:
    """A configured server across reconnects, with what its latest successful connection offered."""

    def __init__(self, config: ServerConfig, log_path: Path) -> None:
        self.config = config
        self.log_path = log_path
        self.conn: _Connection | None = None
        """The current connection (connecting, live, or the latest failed one)."""
        self.lock = asyncio.Lock()
        self.offers: _Connection | None = None
        """The latest connection that got through the handshake: its tools, prompts and resources stand for the
        server's, also while it is down."""
        self.failed_at: float | None = None
        """When the latest reconnect attempt failed (monotonic), if it did."""
        self.tools: list[McpTool] = []


class McpManager:
    """Every configured MCP server, for one session."""

    reconnect_backoff = 10.0
    """Seconds after a failed reconnect during which uses of that server fail at once instead of trying again
    (a dead server must not cost a full start timeout on every call)."""

    def __init__(
        self,
        servers: Mapping[str, ServerConfig],
        *,
        log_dir: Path,
        call_timeout: float = DEFAULT_CALL_TIMEOUT,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
    ) -> None:
        self.log_dir = log_dir
        self.call_timeout = call_timeout
        self.connect_timeout = connect_timeout
        self._servers = {name: _Server(config, log_dir / f"{clean_name(name)}.log") for name, config in servers.items()}
        self._namer = ToolNamer()
        self._resource_tools: list[Tool] = []
        self._reported: set[str] = set()
        self._sdk: asyncio.Future[None] | None = None
        self._closed = False

    # ---- lifecycle ----

    def start(self) -> None:
        """Connect every server concurrently in the background (call inside the running loop; once)."""
        if self._sdk is not None or not self._servers:
            return
        self._sdk = asyncio.ensure_future(asyncio.to_thread(_load_sdk, self.log_dir))
        for server in self._servers.values():
            self._connect(server)

    def _connect(self, server: _Server) -> _Connection:
        assert self._sdk is not None
        conn = _Connection(
            server.config,
            log_path=server.log_path,
            connect_timeout=self.connect_timeout,
            sdk=asyncio.shield(self._sdk),
            on_connected=lambda c: setattr(server, "offers", c),
        )
        server.conn = conn
        conn.start()
        return conn

    async def wait_ready(self, timeout: float) -> list[str]:
        """Wait until every server is connected or failed, at most `timeout` seconds; one warning line per
        failed or still-starting server not reported before."""
        self.start()
        waiting = [
            asyncio.ensure_future(s.conn.ready.wait())
            for s in self._servers.values()
            if s.conn is not None and not s.conn.ready.is_set()
        ]
        if waiting:
            _, pending = await asyncio.wait(waiting, timeout=timeout)
            for task in pending:
                task.cancel()
        warnings: list[str] = []
        for name, server in self._servers.items():
            conn = server.conn
            if conn is None or server.offers is not None or name in self._reported:
                continue
            if conn.ready.is_set():
                self._reported.add(name)
                warnings.append(f'MCP server "{name}" failed to start: {conn.error}; continuing without it')
            elif f"{name}:slow" not in self._reported:
                self._reported.add(f"{name}:slow")
                warnings.append(
                    f'MCP server "{name}" is still starting after {timeout:g} s; continuing without it for now'
                )
        return warnings

    async def aclose(self) -> None:
        """Stop every server and wait for their processes to be gone (idempotent)."""
        self._closed = True
        conns = [s.conn for s in self._servers.values() if s.conn is not None]
        await asyncio.gather(*(c.close() for c in conns), return_exceptions=True)
        if self._sdk is not None and not self._sdk.done():
            self._sdk.cancel()

    async def __aenter__(self) -> McpManager:
        self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    # ---- what the session sees ----

    def tools(self) -> list[Tool]:
        """Tools of every server that has connected, then the two resource tools when one has resources.

        The objects and their names are stable, so calling this again later (e.g. between turns, to add a slow
        server's tools) only adds; names are handed out in config order."""
        tools: list[Tool] = []
        for name, server in self._servers.items():
            if server.offers is not None and not server.tools:
                server.tools = [
                    McpTool(self, name, spec, self._namer.name(name, spec.name)) for spec in server.offers.tools
                ]
            tools += server.tools
        if self.resource_servers() and not self._resource_tools:
            self._resource_tools = [ListMcpResourcesTool(self), ReadMcpResourceTool(self)]
        return tools + self._resource_tools

    def status(self) -> list[ServerStatus]:
        """Every configured server, in config order."""
        out: list[ServerStatus] = []
        for name, server in self._servers.items():
            conn, offers = server.conn, server.offers
            state: State
            if conn is None:
                state, detail = "closed", "not started"
            elif conn.alive:
                state, detail = "connected", conn.detail
            elif not conn.ready.is_set():
                state, detail = "connecting", ""
            elif self._closed and offers is not None:
                state, detail = "closed", offers.detail
            else:
                state, detail = "failed", conn.error
            out.append(
                ServerStatus(
                    name,
                    server.config.transport,
                    state,
                    detail,
                    tuple(self._namer.name(name, t.name) for t in offers.tools) if offers else (),
                    bool(offers and offers.has_resources),
                    tuple(p.name for p in offers.prompts) if offers else (),
                    offers.connect_seconds if offers else None,
                    str(server.log_path) if server.config.transport == "stdio" else "",
                )
            )
        return out

    def server_names(self) -> list[str]:
        return list(self._servers)

    def resource_servers(self) -> list[str]:
        """Servers that declared resources when they connected."""
        return [name for name, s in self._servers.items() if s.offers is not None and s.offers.has_resources]

    def instructions(self) -> dict[str, str]:
        """What connected servers ask clients to tell the model about them (their `instructions`), by server,
        each cut to 2048 characters; a front end may add them to the system prompt."""
        return {
            name: s.offers.instructions[:MAX_DESCRIPTION]
            for name, s in self._servers.items()
            if s.offers is not None and s.offers.instructions
        }

    def prompts(self) -> list[PromptInfo]:
        """Prompts of every server that has connected, in config order."""
        return [prompt_info(name, p) for name, s in self._servers.items() if s.offers for p in s.offers.prompts]

    # ---- operations ----

    async def call_tool(
        self, server: str, tool: str, arguments: dict[str, Any], *, retry_safe: bool
    ) -> mcp_types.CallToolResult:
        """tools/call, with the per-call timeout and the reconnect rules; McpError on failure."""
        label = f"the call to {tool} on the MCP server {server}"
        conn = await self._live(server)
        try:
            return await self._call(conn, label, lambda c: c.call_tool(tool, arguments))
        except _Disconnected as gone:
            delivered = gone.delivered
        try:
            conn = await self._live(server)
        except McpError as exc:
            raise McpError(f"{exc} (it stopped during the call to {tool})" if delivered else str(exc)) from None
        if delivered and not retry_safe:
            raise McpError(
                f"The MCP server {server} stopped during the call to {tool}; it has been restarted, but the call "
                "was not repeated because it may already have had effects. Check, then call it again if needed."
            )
        try:
            return await self._call(conn, label, lambda c: c.call_tool(tool, arguments))
        except _Disconnected:
            raise McpError(f"The MCP server {server} stopped again during the call to {tool}.") from None

    async def list_resources(self, server: str) -> list[dict[str, Any]]:
        """Resources and templates of one server, as ListMcpResourcesTool shows them; McpError on failure."""
        label = f"listing the resources of the MCP server {server}"
        resources = await self._request(server, label, lambda c: _paged(lambda cur: c.list_resources(cur), "resources"))
        try:
            templates = await self._request(
                server, label, lambda c: _paged(lambda cur: c.list_resource_templates(cur), "resource_templates")
            )
        except McpError:
            templates = []  # templates are optional; many servers answer "method not found"
        return resource_entries(server, resources, templates)

    async def read_resource(self, server: str, uri: str) -> mcp_types.ReadResourceResult:
        """resources/read; McpError on failure."""
        label = f"reading {uri} from the MCP server {server}"
        return await self._request(server, label, lambda c: c.read_resource(uri))

    async def resolve_mentions(self, text: str) -> tuple[list[Message], list[str]]:
        """A meta user message for every `@server:uri` in `text` (read by reference, nothing else), and one
        warning line per mention that could not be read. Mentions of names that are no server are left alone
        unless they look like a resource URI (`scheme://`): `@user:pass` in a message is not a mention."""
        messages: list[Message] = []
        warnings: list[str] = []
        for server, uri in parse_mentions(text):
            if server not in self._servers:
                if "://" in uri:
                    warnings.append(f"@{server}:{uri}: there is no MCP server named {server!r}")
                continue
            if server not in self.resource_servers():
                warnings.append(f"@{server}:{uri}: the MCP server {server} is not connected or has no resources")
                continue
            try:
                result = await self.read_resource(server, uri)
            except McpError as exc:
                warnings.append(f"@{server}:{uri}: {exc}")
                continue
            body = cap_text(render_contents(result.contents))
            if body.strip():
                messages.append(user_text(mention_text(server, uri, body), meta=True))
        return messages, warnings

    async def run_prompt(self, server: str, name: str, args_line: str) -> list[Message]:
        """The messages of prompt `name` of `server` for `args_line`; McpError when they cannot be had."""
        info = next((p for p in self.prompts() if p.server == server and p.name == name), None)
        if info is None:
            known = ", ".join(f"/{p.command}" for p in self.prompts()) or "(none)"
            raise McpError(f"No MCP prompt /{server}:{name}. Available: {known}")
        arguments = bind_arguments(info, args_line)
        result = await self._request(
            server, f"getting the prompt /{server}:{name}", lambda c: c.get_prompt(name, arguments or None)
        )
        return prompt_messages(result)

    # ---- plumbing ----

    async def _live(self, name: str) -> _Connection:
        """A live connection to `name`: the current one or, if the server died, one reconnect attempt."""
        server = self._servers.get(name)
        if server is None:
            raise McpError(f"No MCP server named {name!r}.")
        if self._closed:
            raise McpError("The MCP servers have been shut down.")
        async with server.lock:
            conn = server.conn
            if conn is not None and conn.alive:
                return conn
            if conn is None or server.offers is None:
                reason = conn.error if conn is not None and conn.ready.is_set() else "it is still starting"
                raise McpError(f"The MCP server {name} is not connected: {reason}")
            if server.failed_at is not None and time.monotonic() - server.failed_at < self.reconnect_backoff:
                raise McpError(f"The MCP server {name} is not available: {conn.error}")
            why = conn.cause or conn.error or "the connection was lost"
            await conn.close()  # reap the dead process before starting another
            fresh = self._connect(server)
            await fresh.ready.wait()
            if not fresh.alive:
                server.failed_at = time.monotonic()
                fresh.cause = why
                fresh.error = f"it stopped ({why}), and restarting it failed: {fresh.error}"
                raise McpError(f"The MCP server {name} is not available: {fresh.error}")
            server.failed_at = None
            return fresh

    async def _request(self, server: str, label: str, send: Callable[[Session], Awaitable[T]]) -> T:
        """A request that may safely be sent twice: retried once on a fresh connection if the server died."""
        for attempt in range(2):
            conn = await self._live(server)
            try:
                return await self._call(conn, label, send)
            except _Disconnected:
                if attempt:
                    raise McpError(f"The server stopped while {label}.") from None
        raise AssertionError("unreachable")

    async def _call(self, conn: _Connection, label: str, send: Callable[[Session], Awaitable[T]]) -> T:
        """One request on `conn`, bounded by the call timeout; _Disconnected when the server went away."""
        import anyio

        client = conn.client
        if client is None:
            raise _Disconnected(delivered=False)
        # a refused connect proves the server never saw this request only if no other request was under way
        alone, refused = conn.busy == 0, conn.refused
        expired, http_errors = conn.expired, conn.http_errors
        conn.busy += 1
        conn.begun += 1
        begun = conn.begun
        try:
            with anyio.fail_after(self.call_timeout):
                return await send(client)
        except TimeoutError:
            raise McpError(f"{_capital(label)} timed out after {self.call_timeout:g} s.") from None
        except Exception as exc:
            if conn.http_errors > http_errors:  # the SDK's error says less than the status we saw
                raise McpError(f"{_capital(label)} failed: {conn.http_error}") from None
            if conn.expired > expired:  # the server forgot our session: it refused the request unprocessed
                conn.lost()
                raise _Disconnected(delivered=False) from None
            if gone := _disconnect_kind(exc):
                conn.lost()
                unsent = gone == "unsent" or (alone and conn.begun == begun and conn.refused > refused)
                raise _Disconnected(delivered=not unsent) from None
            if isinstance(exc, McpError):
                raise
            raise McpError(f"{_capital(label)} failed: {describe_error(exc, conn.config)}") from None
        finally:
            conn.busy -= 1


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


class _Disconnected(Exception):
    """The connection ended under a request."""

    def __init__(self, *, delivered: bool) -> None:
        super().__init__()
        self.delivered = delivered
        """False when the server certainly never got the request (so repeating it cannot do anything twice)."""


def _first_of_each(items: list[Any]) -> list[Any]:
    """Listed items with their name's first listing only (a server may list a name twice, or a cursor may
    serve a page again)."""
    first: dict[str, Any] = {}
    for item in items:
        first.setdefault(item.name, item)
    return list(first.values())


async def _paged(fetch: Callable[[str | None], Awaitable[Any]], field: str) -> list[Any]:
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


def _load_sdk(log_dir: Path) -> None:
    """Import the SDK (in a worker thread) and send its log records to a file instead of the terminal."""
    from . import sdk

    sdk.load()

    logger = logging.getLogger("mcp")
    for old in [h for h in logger.handlers if h.get_name() == _LOG_HANDLER]:
        logger.removeHandler(old)
        old.close()
    logger.propagate = False  # Python's last-resort handler would print warnings and tracebacks on stderr
    handler: logging.Handler
    try:
        log_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        handler = logging.FileHandler(log_dir / "client.log", encoding="utf-8", delay=True)
    except OSError:
        handler = logging.NullHandler()
    handler.set_name(_LOG_HANDLER)
    handler.setLevel(logging.WARNING)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING)


def _leaf(exc: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _disconnect_kind(exc: BaseException) -> Literal["", "unsent", "lost"]:
    """Whether `exc` says the connection is gone: "unsent" when the request certainly did not reach the server,
    "lost" when it may have; "" when it is an ordinary failure of the request."""
    try:
        import anyio
        import httpx2
        from mcp.shared.exceptions import MCPError
    except ImportError:
        return ""
    exc = _leaf(exc)
    if isinstance(exc, MCPError):  # (a forgotten HTTP session is seen by our HTTP client, see `http`)
        return "lost" if _closed_by_sdk(exc) else ""
    if isinstance(exc, httpx2.ConnectError):
        return "unsent"
    if isinstance(exc, anyio.BrokenResourceError | anyio.ClosedResourceError | httpx2.TransportError):
        return "lost"
    return ""


SDK_CLOSED_MESSAGES = frozenset({"Connection closed", "SSE stream ended without a response"})
"""What the SDK says when it fails a request because the connection ended. A server may send the same code
(-32000 is the first of JSON-RPC's server-defined errors) for its own failures: those are answers, not
disconnections."""


def _closed_by_sdk(exc: Any) -> bool:
    from mcp_types import CONNECTION_CLOSED

    return bool(exc.code == CONNECTION_CLOSED and exc.message in SDK_CLOSED_MESSAGES)


def describe_error(exc: BaseException, config: ServerConfig) -> str:
    """An exception from the SDK or a transport as one line (never a traceback)."""
    exc = _leaf(exc)
    try:
        import httpx2
        from mcp.shared.exceptions import MCPError
        from pydantic import ValidationError
    except ImportError:
        return f"the MCP SDK is not installed ({exc}); install it with: pip install mcp"
    if isinstance(exc, Unanswerable):
        return str(exc)
    if isinstance(exc, ValidationError):  # the server's answer breaks the MCP schema
        return f"the server's answer does not follow the MCP schema: {schema_problem(exc)}"
    if isinstance(exc, FileNotFoundError) and config.transport == "stdio":
        return f"command not found: {config.command}"
    if isinstance(exc, PermissionError) and config.transport == "stdio":
        return f"cannot run {config.command}: permission denied"
    if isinstance(exc, MCPError):
        if _closed_by_sdk(exc):
            return "the server closed the connection"
        lines = str(exc.message).strip().splitlines() or [""]  # the first line: the SDK may append a pydantic dump
        first = lines[0] if len(lines[0]) <= 300 else lines[0][:299] + "…"
        return f"{first} (error {exc.code})"
    if isinstance(exc, httpx2.HTTPStatusError):
        return f"HTTP {exc.response.status_code} from {config.url}"
    if isinstance(exc, httpx2.ConnectError):
        return f"cannot connect to {config.url}"
    if isinstance(exc, httpx2.TimeoutException):
        return f"{config.url} did not answer in time"
    if isinstance(exc, httpx2.TransportError):
        return f"connection to {config.url} failed: {type(exc).__name__}"
    message = " ".join(str(exc).split())
    text = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    return text if len(text) <= 300 else text[:299] + "…"
