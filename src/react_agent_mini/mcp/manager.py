"""Connections to the configured MCP servers: concurrent background start, calls, reconnects, clean shutdown.

`start()` launches every server at once in the background: stdio servers are spawned immediately, while the
SDK's client side (≈1 s of CPU on a small machine; see `sdk`) is imported in a worker thread, so both overlap
each other and the CLI's own start. `wait_ready(timeout)` is the only place anything waits for them, and only up
to its bound. A server that fails is reported once (name and reason) and skipped; one that is merely slow keeps
connecting and its tools appear in `tools()` once it is ready.

Each server's session is one `connection.Connection`; the manager holds them, hands out their tools, resources
and prompts, and replaces a connection that died. Server stderr goes to `<log_dir>/<server>.log`, the SDK's own
log records to `<log_dir>/client.log`: nothing reaches the terminal. What a failure means, and whether a request
may have reached the server, is `failures`.

A call to a server found dead gets one reconnect attempt first (then, for `reconnect_backoff` seconds, uses fail
at once). A server that dies during a call is restarted too; the call is repeated only when that cannot do
anything twice: the tool is read-only or idempotent, or the request provably never reached the server.
Otherwise the model is told what happened.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import msgspec

from ..messages import Message, user_text
from ..tools.base import Tool
from . import McpError
from .adapter import MAX_DESCRIPTION, McpTool, ToolNamer, cap_text, clean_name, render_contents
from .config import DEFAULT_CALL_TIMEOUT, DEFAULT_CONNECT_TIMEOUT, ServerConfig, Transport
from .connection import Connection, paged
from .failures import Disconnected
from .prompts import PromptInfo, bind_arguments, prompt_info, prompt_messages
from .resources import ListMcpResourcesTool, ReadMcpResourceTool, mention_text, parse_mentions, resource_entries

if TYPE_CHECKING:
    import mcp_types

    from .sdk import Session

T = TypeVar("T")
_LOG_HANDLER = "react-agent-mini-mcp"
State = Literal["connecting", "connected", "failed", "closed"]


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


class _Server:
    """A configured server across reconnects, with what its latest successful connection offered."""

    def __init__(self, config: ServerConfig, log_path: Path) -> None:
        self.config = config
        self.log_path = log_path
        self.conn: Connection | None = None
        """The current connection (connecting, live, or the latest failed one)."""
        self.lock = asyncio.Lock()
        self.offers: Connection | None = None
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

    def _connect(self, server: _Server) -> Connection:
        assert self._sdk is not None
        conn = Connection(
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
            return await conn.request(label, lambda c: c.call_tool(tool, arguments), self.call_timeout)
        except Disconnected as gone:
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
            return await conn.request(label, lambda c: c.call_tool(tool, arguments), self.call_timeout)
        except Disconnected:
            raise McpError(f"The MCP server {server} stopped again during the call to {tool}.") from None

    async def list_resources(self, server: str) -> list[dict[str, Any]]:
        """Resources and templates of one server, as ListMcpResourcesTool shows them; McpError on failure."""
        label = f"listing the resources of the MCP server {server}"
        resources = await self._request(server, label, lambda c: paged(lambda cur: c.list_resources(cur), "resources"))
        try:
            templates = await self._request(
                server, label, lambda c: paged(lambda cur: c.list_resource_templates(cur), "resource_templates")
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

    async def _live(self, name: str) -> Connection:
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
                return await conn.request(label, send, self.call_timeout)
            except Disconnected:
                if attempt:
                    raise McpError(f"The server stopped while {label}.") from None
        raise AssertionError("unreachable")


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
