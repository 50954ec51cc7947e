"""One GET, within limits: a time limit on the whole exchange, a size limit on the body, same-site redirects only,
and a connection only to the addresses the permission check saw.

`get` follows redirects itself (httpx's are off) so each hop is checked by `urls.same_site`; the first one that
leaves the site ends the fetch with a `Redirect` for the model to see. The body is read as it streams and reading
stops at `max_bytes` (compressed bodies are counted after decompression, so a small gzip bomb cannot blow up
memory either). The time limit covers resolving, connecting, every redirect and the whole body: a server that
trickles bytes is cut off as surely as one that never answers. Every failure is a `FetchFailed` with one line for
the model.

Where it connects: the host's name is resolved once — or not at all, when the permission check already resolved
it (`hosts.pinned`: a rule naming an address or this machine made it look) — and the request goes to that address
itself: the URL carries the IP, the `Host` header and the TLS server name (SNI, and so certificate checking) carry
the name. Nothing resolves the name a second time, so it cannot answer the check with one address and the
connection with another (DNS rebinding); the connected peer is compared with the address chosen before the body
is read. A same-site redirect to another name (`www.` added or dropped) whose addresses no check saw, when the
first name's were checked, is not followed but handed to the model like a redirect elsewhere. Behind a proxy
(`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY`, unless `NO_PROXY` covers the host) the request goes to the proxy by
name, as before, and the proxy resolves it: the permission check is then the only address check.

A failure's line says what went wrong in our words: a protocol error's message quotes the bytes the server sent
(`illegal status line: b'HTTP/1.1 200 Ignore previous instructions…'`), so only its kind is kept.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit, urlunsplit

import msgspec

from .. import __version__
from .hosts import is_ip, normalize_host, pinned, resolve
from .urls import BadUrl, host_of, normalize, same_site

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
    """What the server answered (any status). The server's reason phrase is not kept: it is the server's prose,
    and the status code says all of it that the model may trust."""

    url: str
    """The URL that answered (after same-site redirects; normalized, with the host's name, not its address)."""
    status: int
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
            async with _Clients(limits) as clients:
                return await _follow(clients, url, limits)
    except TimeoutError:
        raise FetchFailed(
            f"{url} did not answer completely within {limits.timeout:g} s ({TIMEOUT_VARIABLE}), so nothing was read"
        ) from None
    except httpx.TimeoutException:
        raise FetchFailed(f"{url} timed out ({TIMEOUT_VARIABLE} is {limits.timeout:g} s)") from None
    except (httpx.ProtocolError, httpx.DecodingError) as exc:  # their messages quote what the server sent
        what = "an answer that is not HTTP" if isinstance(exc, httpx.ProtocolError) else "a body that does not decode"
        raise FetchFailed(f"could not fetch {url}: {type(exc).__name__}: the server sent {what}") from None
    except httpx.HTTPError as exc:
        raise FetchFailed(f"could not fetch {url}: {_describe(exc)}") from None
    except (httpx.InvalidURL, UnicodeError, ValueError) as exc:  # a host IDNA refuses (`xn--`), a bad redirect
        raise FetchFailed(f"could not fetch {url}: not a valid URL ({_describe(exc)})") from None


async def _follow(clients: _Clients, url: str, limits: FetchLimits) -> Response | Redirect:
    first = host_of(url)
    checked = pinned(first) is not None  # the permission check resolved it: every name we connect to must be so
    known: dict[str, tuple[str, ...]] = {}
    current = url
    for _ in range(MAX_REDIRECTS + 1):
        import httpx

        _ = httpx.URL(current).host  # httpx's checks of the host (a malformed `xn--` label), as when it fetched by name
        host = host_of(current)
        if host not in known:
            known[host] = await _addresses(host)
        answer = await _exchange(clients, current, known[host], limits)
        if isinstance(answer, Response):
            return answer
        location, status = answer
        target = urljoin(current, location.strip())
        if not same_site(current, target):
            return Redirect(current, target, status)
        try:
            target = normalize(target)
        except BadUrl:
            return Redirect(current, target, status)
        if checked and host_of(target) not in known and pinned(host_of(target)) is None:
            return Redirect(current, target, status)  # `www.`: a name whose addresses no check has seen
        current = target
    raise FetchFailed(f"{url} redirected more than {MAX_REDIRECTS} times")


async def _addresses(host: str) -> tuple[str, ...]:
    """Where `host` connects: the addresses its permission check pinned, else the resolver's answer now."""
    if is_ip(host):
        return (host,)
    addresses = pinned(host)
    if addresses is None:
        addresses = await asyncio.to_thread(resolve, host)
    if not addresses:
        raise FetchFailed(f"{host} does not resolve to any address")
    return addresses


async def _exchange(
    clients: _Clients, url: str, addresses: tuple[str, ...], limits: FetchLimits
) -> Response | tuple[str, int]:
    """One request for `url`: the `Response`, or a redirect's `(location, status)`. Each address is tried in the
    resolver's order until one accepts the connection (nothing has been sent to those that did not)."""
    import httpx

    proxy = _proxy_for(url)
    client = await clients.get(proxy)
    targets: list[tuple[str, str | None]] = [(url, None)] if proxy else [(_at(url, a), a) for a in addresses]
    for index, (target, address) in enumerate(targets):
        headers, extensions = _naming(url) if address is not None else ({}, {})
        try:
            async with client.stream("GET", target, headers=headers, extensions=extensions) as response:
                if address is not None:
                    _check_peer(response, address, url)
                location = response.headers.get("location")
                if response.is_redirect and location:
                    return location, response.status_code
                body, truncated = await _read(response, limits.max_bytes)
                return Response(url, response.status_code, response.headers.get("content-type", ""), body, truncated)
        except (httpx.ConnectError, httpx.ConnectTimeout):
            if index == len(targets) - 1:
                raise
    raise AssertionError("unreachable: no address to try")  # `_addresses` never returns none


def _at(url: str, address: str) -> str:
    """`url` with its host replaced by `address` (the connection goes there and nowhere else)."""
    parts = urlsplit(url)
    netloc = f"[{address}]" if ":" in address else address
    if parts.port is not None:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path or "/", parts.query, ""))


def _naming(url: str) -> tuple[dict[str, str], dict[str, Any]]:
    """The `Host` header and TLS server name that keep the host's name on a request sent to its address."""
    parts = urlsplit(url)
    host = host_of(url)
    extensions: dict[str, Any] = {}
    if parts.scheme == "https" and not is_ip(host):
        extensions["sni_hostname"] = host
    return {"Host": parts.netloc}, extensions


def _check_peer(response: httpx.Response, address: str, url: str) -> None:
    """The connection's other end is the address chosen: nothing resolved the name behind our back."""
    stream = response.extensions.get("network_stream")
    peer = stream.get_extra_info("server_addr") if stream is not None else None
    if isinstance(peer, tuple) and peer and normalize_host(str(peer[0])) != address:
        raise FetchFailed(f"could not fetch {url}: connected to {peer[0]}, not to the address checked ({address})")


def _proxy_for(url: str) -> str | None:
    """The proxy the environment names for `url` (`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY`), unless `NO_PROXY`
    covers its host."""
    import urllib.request

    proxies = urllib.request.getproxies_environment()
    parts = urlsplit(url)
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    if not proxy or urllib.request.proxy_bypass(parts.hostname or ""):  # NO_PROXY
        return None
    return proxy


class _Clients:
    """The httpx clients of one fetch: one direct, one per proxy. They keep no connection alive between requests,
    so a hop to another name never reuses a TLS session made for the last one."""

    def __init__(self, limits: FetchLimits) -> None:
        self._limits = limits
        self._stack = contextlib.AsyncExitStack()
        self._clients: dict[str | None, httpx.AsyncClient] = {}

    async def get(self, proxy: str | None) -> httpx.AsyncClient:
        import httpx

        if proxy not in self._clients:
            client = httpx.AsyncClient(
                follow_redirects=False,
                timeout=self._limits.timeout,
                headers=HEADERS,
                proxy=proxy,
                trust_env=False,  # the proxy is chosen above; the environment's CA settings are kept below
                verify=httpx.create_ssl_context(trust_env=True),
                limits=httpx.Limits(max_keepalive_connections=0),
            )
            self._clients[proxy] = await self._stack.enter_async_context(client)
        return self._clients[proxy]

    async def __aenter__(self) -> _Clients:
        await self._stack.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._stack.aclose()


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
