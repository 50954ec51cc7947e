"""What a failure of an MCP server means: one line a user (or the model) can act on, and whether the connection
went with it.

Exceptions come from the SDK, from our transports (`transport`, `http`) and from the server's answers, often
inside exception groups. `describe_error` says what happened in one line, never a traceback; `disconnect_kind`
tells a request the server may have got from one it certainly did not, which decides whether a call may be
repeated on a new connection (`Disconnected`). Nothing here imports the SDK until an error needs looking at.
"""

from __future__ import annotations

from typing import Any, Literal

from .config import ServerConfig
from .sdk import Unanswerable, schema_problem


class Disconnected(Exception):
    """The connection ended under a request."""

    def __init__(self, *, delivered: bool) -> None:
        super().__init__()
        self.delivered = delivered
        """False when the server certainly never got the request (so repeating it cannot do anything twice)."""


def leaf(exc: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def disconnect_kind(exc: BaseException) -> Literal["", "unsent", "lost"]:
    """Whether `exc` says the connection is gone: "unsent" when the request certainly did not reach the server,
    "lost" when it may have; "" when it is an ordinary failure of the request."""
    try:
        import anyio
        import httpx2
        from mcp.shared.exceptions import MCPError
    except ImportError:
        return ""
    exc = leaf(exc)
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
    exc = leaf(exc)
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
