"""The HTTP side of remote servers (streamable HTTP and legacy SSE): our own httpx client, which watches what the
SDK cannot tell us.

The SDK turns most HTTP failures into a generic JSON-RPC error ("Server returned an error response"), so the
client's transport reports them to the connection (`HttpWatcher`) as it sees them:
- a request refused at connect: the server never saw it, so a call that failed that way may be sent again;
- a 404 (or a 400 that names the session) on a request carrying `Mcp-Session-Id`: the server forgot our session
  (it restarted). The spec's answer is a new session; the request was not processed, so it may be sent again;
- any other error status, as `HTTP 401 Unauthorized from <url>`, so a bad token does not look like an outage;
  on the legacy SSE transport a failed POST also ends the connection, since the SDK would otherwise leave the
  request waiting for its timeout.
It also bounds two things the SDK does not: a JSON answer over `MAX_MESSAGE_BYTES` fails its request (as on
stdio) instead of being held in memory, and the DELETE that ends a session waits `CLOSE_TIMEOUT` at most.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from .transport import MAX_MESSAGE_BYTES, TOO_LARGE

if TYPE_CHECKING:
    import httpx2

HTTP_TIMEOUT = 30.0
HTTP_READ_TIMEOUT = 300.0
"""The SDK's own HTTP defaults: 30 s to connect and write, 300 s of silence on a response stream."""
CLOSE_TIMEOUT = 5.0
"""Seconds the DELETE that ends a session may take (the server may be gone)."""
MAX_ERROR_BODY = 65536
"""An error answer at most this long is read to see whether it is about the session."""


class HttpWatcher(Protocol):
    def on_refused(self) -> None: ...
    def on_session_expired(self) -> None: ...
    def on_http_error(self, text: str, *, fatal: bool) -> None: ...


def http_client(headers: Mapping[str, str], watcher: HttpWatcher, *, legacy_sse: bool = False) -> Any:
    """An httpx client with the SDK's timeouts and the configured headers, reporting to `watcher`."""
    import httpx2

    class CappedStream(httpx2.AsyncByteStream):
        def __init__(self, inner: Any) -> None:
            self._inner = inner

        async def __aiter__(self) -> AsyncIterator[bytes]:
            seen = 0
            async for chunk in self._inner:
                seen += len(chunk)
                if seen > MAX_MESSAGE_BYTES:
                    raise httpx2.StreamError(TOO_LARGE)
                yield chunk

        async def aclose(self) -> None:
            await self._inner.aclose()

    class Watched(httpx2.AsyncBaseTransport):
        def __init__(self) -> None:
            self._inner = httpx2.AsyncHTTPTransport()

        async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
            if request.method == "DELETE":
                request.extensions["timeout"] = dict.fromkeys(("connect", "read", "write", "pool"), CLOSE_TIMEOUT)
            try:
                response = await self._inner.handle_async_request(request)
            except httpx2.ConnectError:
                watcher.on_refused()
                raise
            if response.status_code >= 400 and request.method == "POST":  # a GET may be refused harmlessly
                await self._judge(request, response)
            if response.headers.get("content-type", "").lower().startswith("application/json"):
                response.stream = CappedStream(response.stream)
            return response

        async def _judge(self, request: httpx2.Request, response: httpx2.Response) -> None:
            """An error status on a POST (a message to the server)."""
            in_session = bool(request.headers.get("mcp-session-id"))
            if in_session and (response.status_code == 404 or await _names_the_session(response)):
                watcher.on_session_expired()
                return
            url = request.url.copy_with(query=None)  # a query may carry a session id or a token
            text = f"HTTP {response.status_code} {response.reason_phrase} from {url}".replace("  ", " ")
            if response.status_code in (401, 403):
                text += " (check the server's headers in the MCP config)"
            watcher.on_http_error(text, fatal=legacy_sse)

        async def aclose(self) -> None:
            await self._inner.aclose()

    return httpx2.AsyncClient(
        headers=dict(headers) or None,
        timeout=httpx2.Timeout(HTTP_TIMEOUT, read=HTTP_READ_TIMEOUT),
        transport=Watched(),
    )


async def _names_the_session(response: httpx2.Response) -> bool:
    """A short 400 answer that speaks of the session (servers answer a forgotten session with 400 or 404).
    The body read here stays cached for the SDK."""
    if response.status_code != 400:
        return False
    size = response.headers.get("content-length", "")
    if not size.isdigit() or int(size) > MAX_ERROR_BODY:
        return False
    return b"session" in (await response.aread()).lower()


@contextlib.asynccontextmanager
async def http_transport(url: str, headers: Mapping[str, str], watcher: HttpWatcher) -> AsyncIterator[Any]:
    """Streamable HTTP over our client, closing it afterwards."""
    from mcp.client.streamable_http import streamable_http_client

    http = http_client(headers, watcher)
    async with http, streamable_http_client(url, http_client=http) as streams:
        yield streams


def sse_transport(url: str, headers: Mapping[str, str], watcher: HttpWatcher) -> Any:
    """Legacy SSE over our client (the SDK builds it through a factory; it passes the headers and timeouts)."""
    from mcp.client.sse import sse_client

    def factory(
        headers: dict[str, str] | None = None, timeout: httpx2.Timeout | None = None, auth: httpx2.Auth | None = None
    ) -> httpx2.AsyncClient:

        client: httpx2.AsyncClient = http_client(headers or {}, watcher, legacy_sse=True)
        if timeout is not None:
            client.timeout = timeout
        if auth is not None:
            client.auth = auth
        return client

    return sse_client(url, headers=dict(headers) or None, httpx_client_factory=factory)
