"""The early request on the wire: a socket (TLS set up as httpx sets it up), the request's bytes as httpx writes
them, nothing read yet. Standard library only; any failure is a reason for not sending early, never an error
(the session's own call will meet it again, and say what it is)."""

from __future__ import annotations

import os
import socket

from ..providers.wire_layout import CONNECT_TIMEOUT, USER_AGENT

TYPE_CHECKING = False
if TYPE_CHECKING:
    import ssl
    from collections.abc import Mapping

    import httpx


class Sent:
    """A request that went early, and the socket its answer will come on."""

    __slots__ = ("body", "headers", "host", "sock", "target", "url")

    def __init__(
        self, sock: socket.socket, url: str, target: str, host: str, headers: dict[str, str], body: bytes
    ) -> None:
        self.sock = sock
        self.url = url
        """As the provider builds it: base URL + path."""
        self.target = target
        """The request line's path (and query)."""
        self.host = host
        """The Host header."""
        self.headers = headers
        """The provider's own headers (credentials, version, accept)."""
        self.body = body

    def close(self) -> None:
        self.sock.close()  # never raises for a socket

    def matches(self, url: str, headers: Mapping[str, str], content: bytes) -> bool:
        """`providers.first_call.Prepared`: compared in `adopt.py`, imported only now (it needs httpx)."""
        from .adopt import matches

        return matches(self, url, headers, content)

    async def response(self, request: httpx.Request) -> httpx.Response:
        """`providers.first_call.Prepared`: the answer, read in `adopt.py`."""
        from .adopt import response

        return await response(self, request)


def send(url: str, headers: Mapping[str, str], body: bytes) -> Sent | str:
    """POST `body` to `url` with `headers` (plus httpx's own: Host, Accept-Encoding, Connection, User-Agent, and
    the body's length and type); the request sent, or why it was not."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "the base URL does not parse"
    secure = parts.scheme == "https"
    if parts.scheme not in ("http", "https") or not parts.hostname or "@" in parts.netloc:
        return "the base URL is not plain http(s)"
    default_port = 443 if secure else 80
    host = parts.hostname
    host_header = parts.netloc if port not in (None, default_port) else (f"[{host}]" if ":" in host else host)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    lines = [
        f"POST {target} HTTP/1.1",
        f"Host: {host_header}",
        "Accept-Encoding: gzip, deflate",
        "Connection: keep-alive",
        f"User-Agent: {USER_AGENT}",
        *(f"{name}: {value}" for name, value in headers.items()),
        f"Content-Length: {len(body)}",
        "Content-Type: application/json",
    ]
    try:
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("ascii")
    except UnicodeEncodeError:
        return "a header is not ASCII"
    try:
        sock = socket.create_connection((host, port or default_port), timeout=CONNECT_TIMEOUT)
    except OSError as exc:
        return f"cannot connect ({exc.strerror or exc})"
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if secure:
            sock = _tls_context().wrap_socket(sock, server_hostname=host)
        sock.sendall(head + body)
    except OSError as exc:  # ssl.SSLError is an OSError too
        sock.close()
        return f"cannot send ({exc})"
    return Sent(sock, url, target, host_header, dict(headers), body)


def _tls_context() -> ssl.SSLContext:
    """What httpx verifies a server with (`httpx._config.create_ssl_context`: SSL_CERT_FILE, else SSL_CERT_DIR,
    else certifi's bundle), offering HTTP/1.1 only (as httpcore does without HTTP/2)."""
    import ssl

    if os.environ.get("SSL_CERT_FILE"):
        context = ssl.create_default_context(cafile=os.environ["SSL_CERT_FILE"])
    elif os.environ.get("SSL_CERT_DIR"):
        context = ssl.create_default_context(capath=os.environ["SSL_CERT_DIR"])
    else:
        import certifi

        context = ssl.create_default_context(cafile=certifi.where())
    context.set_alpn_protocols(["http/1.1"])
    return context
