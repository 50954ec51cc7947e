"""POST a JSON body and read the answer as server-sent events, mapping every transport failure to our errors.

Shared by both wire adapters: this is the one place where httpx exceptions and HTTP error statuses become
`ProviderError`s, and where a server that stays silent is given up (then retried as a dropped connection is).
Two limits, each with its variable:

- the first byte (`RAM_FIRST_BYTE_TIMEOUT`, 600 s): from sending the request until the headers and the first
  line of the answer have arrived. A model may think over a long prompt for minutes before it sends anything,
  so the default is the one both official SDKs use for a whole request (OpenAI's and Anthropic's: 10 minutes),
  and DeepSeek closes a request it has not started within 10 minutes itself;
- silence mid-answer (`RAM_STREAM_IDLE_TIMEOUT`, 60 s): between lines once the answer has started. Keep-alive
  comments and pings count as lines: a server that sends them is still there (OpenRouter sends long runs of
  `: OPENROUTER PROCESSING` while a model thinks).

Not every answer to a streamed request is a stream: servers and proxies that ignore `"stream": true`, or answer a
short reply or an error as JSON, send one JSON body (DeepSeek, Z.ai and Anthropic gateways do). An answer whose
first line is a JSON value rather than an SSE field is read whole and handed on as one event, whatever its
content type says; the wire format then reads it as the complete answer it is.
"""

from __future__ import annotations

import sys
import time
import types
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

from . import first_call
from .error_body import error_from_body
from .errors import (
    ConnectionFailed,
    FirstByteTimeout,
    MalformedStream,
    ProviderError,
    StreamInterrupted,
    base_url_variable,
    error_for_status,
)
from .sse import ServerSentEvent, iter_sse
from .wire_layout import CONNECT_TIMEOUT, USER_AGENT

if TYPE_CHECKING:
    import httpx

FIRST_BYTE_TIMEOUT = 600.0
"""Seconds from sending a request until the first line of its answer, after which the attempt counts as failed
and is retried (`RAM_FIRST_BYTE_TIMEOUT` overrides)."""
STREAM_IDLE_TIMEOUT = 60.0
"""Seconds without a byte, once the answer has started streaming, after which the stream counts as dropped
(`RAM_STREAM_IDLE_TIMEOUT` overrides). Keep-alive comments and pings count as bytes: a server that sends them
is still there."""
_SSE_FIELDS = ("data", "event", "id", "retry", ":")
"""How a line of a server-sent event stream starts."""
MAX_JSON_ANSWER = 64 * 1024 * 1024
"""Characters a whole JSON answer may have (a stream has no such bound: it is read as it comes)."""


def import_httpx() -> None:
    """Import httpx without its command-line tool.

    `httpx/__init__` imports `httpx._main` (its CLI) whenever `rich`, `click` and `pygments` are installed — and
    the MCP SDK installs them — which more than doubles the import (≈100–200 ms measured here). We never use that
    CLI, so a stand-in module takes its place before the first import."""
    if "httpx" in sys.modules:
        return
    stub = types.ModuleType("httpx._main")

    def main() -> None:  # pragma: no cover - httpx's CLI entry point, unused by us
        raise SystemExit("httpx's command-line tool is not available inside react-agent-mini")

    stub.main = main  # type: ignore[attr-defined]
    sys.modules.setdefault("httpx._main", stub)


def new_client(base_url: str) -> httpx.AsyncClient:
    """An HTTP client for one provider (httpx is imported here, off the `--version` path).

    A plain-http endpoint (a local server) gets no TLS setup at all: loading the CA bundle costs ≈60 ms of
    startup, and with redirects off no request can end up on https."""
    import_httpx()
    import httpx

    # No read timeout of httpx's own: every read is under one of ours (`post_sse`), which say which limit it was.
    timeout = httpx.Timeout(connect=CONNECT_TIMEOUT, read=None, write=60.0, pool=CONNECT_TIMEOUT)
    headers = {"User-Agent": USER_AGENT}
    if base_url.startswith("http://"):
        return httpx.AsyncClient(timeout=timeout, verify=False, follow_redirects=False, headers=headers)
    return httpx.AsyncClient(timeout=timeout, follow_redirects=True, headers=headers)


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds from `retry-after-ms`, `retry-after` (seconds or an HTTP date); None when absent or unreadable."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return float(ms) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    import email.utils  # rare path: keep it off startup

    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def error_detail(body: bytes) -> str:
    """The provider's own error message from an error body, in whichever shape it came (`error_body.py`)."""
    return error_from_body(body).message


async def post_sse(
    client: httpx.AsyncClient,
    url: str,
    *,
    headers: Mapping[str, str],
    body: Mapping[str, Any],
    provider: str,
    idle_timeout: float = STREAM_IDLE_TIMEOUT,
    first_byte_timeout: float = FIRST_BYTE_TIMEOUT,
    base_url: str = "",
) -> AsyncGenerator[ServerSentEvent, None]:
    """Stream the events of one request; raise a ProviderError on any failure (`base_url`: the endpoint as the
    user set it, for the hint when the server has no such model or is not this kind of endpoint)."""
    import asyncio

    import httpx

    received_any = False
    deadline = asyncio.get_running_loop().time() + first_byte_timeout
    try:
        request = client.build_request("POST", url, headers=dict(headers), json=body)
        early = first_call.take(url, headers, request.content) if first_call.waiting() else None  # `early/`
        try:
            async with asyncio.timeout_at(deadline):
                response = await early.response(request) if early is not None else None
                if response is not None and response.is_redirect and client.follow_redirects:
                    await response.aclose()  # as httpx would, from the start: its client follows redirects
                    response = None
                if response is None:
                    response = await client.send(request, stream=True)
        except TimeoutError:
            raise _no_first_byte(provider, first_byte_timeout, "no response headers") from None
        try:
            if response.status_code >= 400:
                try:
                    async with asyncio.timeout(idle_timeout):
                        raw = await response.aread()
                except TimeoutError:
                    raw = b""
                info = error_from_body(raw)
                raise error_for_status(
                    response.status_code,
                    info.message,
                    provider=provider,
                    retry_after=parse_retry_after(response.headers),
                    model=str(body.get("model") or ""),
                    url=url,
                    base_url=base_url,
                    code=info.code or info.kind,
                    failed_generation=info.failed_generation,
                )
            lines = _until_idle(response.aiter_lines(), idle_timeout, deadline, first_byte_timeout, provider)
            first = await _first_line(lines)
            if first is None:
                return
            if first.lstrip().startswith(("{", "[")):  # not a stream: one JSON answer
                whole = await _rest(first, lines, provider)
                received_any = True
                yield ServerSentEvent("message", whole)
                return
            if not first.startswith(_SSE_FIELDS):  # a web page, a proxy's notice: nothing a retry changes
                kind = response.headers.get("content-type", "no content type")
                raise MalformedStream(
                    f"{provider} API answered with neither a stream nor JSON ({kind}): {first.strip()[:80]!r}; "
                    f"check {base_url_variable(provider)} (requests go to {url})"
                )
            async for event in iter_sse(_after(first, lines)):
                received_any = True
                yield event
        finally:
            await response.aclose()
    except ProviderError:
        raise
    except httpx.TimeoutException as exc:
        raise ConnectionFailed(f"{provider} API timed out ({type(exc).__name__})") from exc
    except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
        raise ConnectionFailed(f"cannot connect to {provider} API at {url}: {exc}") from exc
    except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as exc:
        if received_any:
            raise StreamInterrupted(f"{provider} API stream dropped midway: {exc}") from exc
        raise ConnectionFailed(f"{provider} API closed the connection: {exc}") from exc
    except httpx.HTTPError as exc:
        raise ConnectionFailed(f"{provider} API request failed: {exc}") from exc


async def _first_line(lines: AsyncIterator[str]) -> str | None:
    """The first line that is not blank (None when the answer has none)."""
    async for line in lines:
        if line.strip():
            return line.removeprefix("\ufeff")  # a byte-order mark before the stream is not part of it
    return None


async def _after(first: str, lines: AsyncIterator[str]) -> AsyncIterator[str]:
    yield first
    async for line in lines:
        yield line


async def _rest(first: str, lines: AsyncIterator[str], provider: str) -> str:
    """`first` and every line after it: a whole JSON answer (bounded by `MAX_JSON_ANSWER`)."""
    parts, size = [first], len(first)
    async for line in lines:
        parts.append(line)
        size += len(line) + 1
        if size > MAX_JSON_ANSWER:
            raise MalformedStream(f"{provider} API answered with a JSON body over {MAX_JSON_ANSWER // 2**20} MiB")
    return "\n".join(parts)


def _no_first_byte(provider: str, limit: float, what: str) -> FirstByteTimeout:
    return FirstByteTimeout(f"{provider} API sent {what} within {limit:g}s (RAM_FIRST_BYTE_TIMEOUT)")


async def _until_idle(
    lines: AsyncIterator[str], idle_timeout: float, deadline: float, first_byte_timeout: float, provider: str
) -> AsyncIterator[str]:
    """`lines`: the first before `deadline` (the first-byte limit, which also counted the wait for the headers),
    then each within `idle_timeout` seconds of the one before; else FirstByteTimeout or StreamInterrupted."""
    import asyncio  # loaded long before a stream runs; importing it here keeps it off `config`'s import

    try:
        async with asyncio.timeout_at(deadline):
            first = await anext(lines)
    except StopAsyncIteration:
        return
    except TimeoutError:
        raise _no_first_byte(provider, first_byte_timeout, "headers but no answer") from None
    yield first
    while True:
        try:
            async with asyncio.timeout(idle_timeout):
                line = await anext(lines)
        except StopAsyncIteration:
            return
        except TimeoutError:
            raise StreamInterrupted(
                f"{provider} API stream stalled: no data for {idle_timeout:g}s (RAM_STREAM_IDLE_TIMEOUT)"
            ) from None
        yield line
