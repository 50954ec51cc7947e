"""One GET, within limits: a time limit on the whole exchange, a size limit on the body, same-site redirects only.

`get` follows redirects itself (httpx's are off) so each hop is checked by `urls.same_site`; the first one that
leaves the site ends the fetch with a `Redirect` for the model to see. The body is read as it streams and reading
stops at `max_bytes` (compressed bodies are counted after decompression, so a small gzip bomb cannot blow up
memory either). The time limit covers connecting, every redirect and the whole body: a server that trickles bytes
is cut off as surely as one that never answers. Every failure is a `FetchFailed` with one line for the model.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING
from urllib.parse import urljoin

import msgspec

from .. import __version__
from .urls import same_site

if TYPE_CHECKING:
    import httpx

DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_BYTES = 10 * 1024 * 1024
MAX_REDIRECTS = 10
TIMEOUT_VARIABLE = "RAM_WEBFETCH_TIMEOUT"
HEADERS = {
    "User-Agent": f"react-agent-mini/{__version__} (WebFetch)",
    "Accept": "text/markdown, text/html;q=0.9, application/xhtml+xml;q=0.9, text/plain;q=0.8, "
    "application/json;q=0.8, */*;q=0.5",
}


class FetchLimits(msgspec.Struct, frozen=True):
    """How long and how much one fetch may take."""

    timeout: float = DEFAULT_TIMEOUT
    """Seconds for the whole exchange: connecting, redirects and the body (`RAM_WEBFETCH_TIMEOUT`)."""
    max_bytes: int = DEFAULT_MAX_BYTES
    """The body is read up to this many bytes; the rest is left unread."""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> FetchLimits:
        env = os.environ if env is None else env
        raw = env.get(TIMEOUT_VARIABLE, "").strip()
        try:
            timeout = float(raw) if raw else DEFAULT_TIMEOUT
        except ValueError:
            timeout = DEFAULT_TIMEOUT
        return cls(timeout=timeout if timeout > 0 else DEFAULT_TIMEOUT)


class Response(msgspec.Struct, frozen=True):
    """What the server answered (any status)."""

    url: str
    """The URL that answered (after same-site redirects)."""
    status: int
    reason: str
    content_type: str
    """The Content-Type header ("" when absent)."""
    body: bytes
    """Decompressed, at most `max_bytes`."""
    truncated: bool
    """True when the body went on past `max_bytes`."""


class Redirect(msgspec.Struct, frozen=True):
    """A redirect to another site, not followed."""

    url: str
    """The URL that redirected."""
    location: str
    """Where it points (absolute)."""
    status: int


class FetchFailed(Exception):
    """No usable answer; the message is one line for the model."""


async def get(url: str, limits: FetchLimits) -> Response | Redirect:
    """GET `url` (already checked by `urls.normalize`) within `limits`."""
    import httpx

    try:
        async with asyncio.timeout(limits.timeout):
            async with httpx.AsyncClient(follow_redirects=False, timeout=limits.timeout, headers=HEADERS) as client:
                return await _follow(client, url, limits)
    except TimeoutError:
        raise FetchFailed(
            f"{url} did not answer completely within {limits.timeout:g} s ({TIMEOUT_VARIABLE}), so nothing was read"
        ) from None
    except httpx.TimeoutException:
        raise FetchFailed(f"{url} timed out ({TIMEOUT_VARIABLE} is {limits.timeout:g} s)") from None
    except httpx.HTTPError as exc:
        raise FetchFailed(f"could not fetch {url}: {_describe(exc)}") from None
    except (httpx.InvalidURL, UnicodeError, ValueError) as exc:  # a host IDNA refuses (`xn--`), a bad redirect
        raise FetchFailed(f"could not fetch {url}: not a valid URL ({_describe(exc)})") from None


async def _follow(client: httpx.AsyncClient, url: str, limits: FetchLimits) -> Response | Redirect:
    current = url
    for _ in range(MAX_REDIRECTS + 1):
        async with client.stream("GET", current) as response:
            location = response.headers.get("location")
            if response.is_redirect and location:
                target = urljoin(current, location.strip())
                if not same_site(current, target):
                    return Redirect(current, target, response.status_code)
                current = target
                continue
            body, truncated = await _read(response, limits.max_bytes)
            return Response(
                str(response.url),
                response.status_code,
                response.reason_phrase,
                response.headers.get("content-type", ""),
                body,
                truncated,
            )
    raise FetchFailed(f"{url} redirected more than {MAX_REDIRECTS} times")


async def _read(response: httpx.Response, max_bytes: int) -> tuple[bytes, bool]:
    """The body up to `max_bytes`, and whether there was more (the rest is never read)."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        if size + len(chunk) > max_bytes:
            chunks.append(chunk[: max_bytes - size])
            return b"".join(chunks), True
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks), False


def _describe(exc: Exception) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
