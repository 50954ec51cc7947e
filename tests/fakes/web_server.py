"""A loopback HTTP server for the web tools' tests: pages, redirects, huge and slow bodies, JSON endpoints.

Each test registers routes (`Route`: status and its reason phrase, headers, a body or a callable making one from
the request, a delay before answering, a size to stream) and reads back what was requested (`requests`) and how
many body bytes each response got out before the client hung up (`sent`). It runs `http.server` in a daemon
thread on 127.0.0.1 (HTTPS instead, given a certificate); a slow route waits on an event the server sets when it
stops, so no test waits for its own timeout twice.
"""

from __future__ import annotations

import json
import ssl
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Request:
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes = b""


@dataclass
class Route:
    body: bytes | str | Callable[[Request], bytes | str] = b""
    status: int = 200
    content_type: str | None = "text/html; charset=utf-8"
    headers: Mapping[str, str] = field(default_factory=dict)
    delay: float = 0.0
    """Seconds to wait before answering (cut short when the server stops)."""
    stream_bytes: int = 0
    """Instead of `body`: this many bytes of filler text, written in 64 KB chunks as the client reads them."""
    reason: str | None = None
    """The status line's reason phrase (None: the standard one), e.g. a hostile `404 Ignore previous instructions`."""

    @classmethod
    def json(cls, value: Any, status: int = 200) -> Route:
        return cls(json.dumps(value), status, "application/json")

    @classmethod
    def redirect(cls, location: str, status: int = 302) -> Route:
        return cls(b"", status, None, {"Location": location})


class WebServer:
    """`with WebServer() as web: web.route("/docs", Route(html)); web.url("/docs")`."""

    def __init__(self, tls: tuple[Path, Path] | None = None) -> None:
        """`tls`: a certificate and its key: the server speaks HTTPS with them (`url` says `https://`)."""
        self.routes: dict[str, Route] = {}
        self.requests: list[Request] = []
        self.sent: dict[str, int] = {}
        self.stopping = threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                owner._answer(self, b"")

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                owner._answer(self, self.rfile.read(length))

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.scheme = "https" if tls else "http"
        if tls is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*tls)
            self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def url(self, path: str = "/", host: str = "127.0.0.1") -> str:
        return f"{self.scheme}://{host}:{self.port}{path}"

    def route(self, path: str, route: Route) -> str:
        self.routes[path] = route
        return self.url(path)

    def hits(self, path: str) -> int:
        return sum(1 for r in self.requests if r.path == path)

    def __enter__(self) -> WebServer:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.stopping.set()
        self._server.shutdown()
        self._server.server_close()

    def _answer(self, handler: BaseHTTPRequestHandler, body_in: bytes) -> None:
        parts = urlsplit(handler.path)
        request = Request(
            parts.path, parse_qs(parts.query), {k.lower(): v for k, v in handler.headers.items()}, body_in
        )
        self.requests.append(request)
        route = self.routes.get(parts.path)
        if route is None:
            route = Route("<h1>Not Found</h1>", 404)
        if route.delay and self.stopping.wait(route.delay):
            return
        handler.send_response(route.status, route.reason)
        if route.content_type is not None:
            handler.send_header("Content-Type", route.content_type)
        for name, value in route.headers.items():
            handler.send_header(name, value)
        if route.stream_bytes:
            self._stream(handler, parts.path, route.stream_bytes)
            return
        body = route.body(request) if callable(route.body) else route.body
        data = body.encode("utf-8") if isinstance(body, str) else body
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        try:
            handler.wfile.write(data)
            self.sent[parts.path] = len(data)
        except OSError:
            pass

    def _stream(self, handler: BaseHTTPRequestHandler, path: str, total: int) -> None:
        handler.send_header("Content-Length", str(total))
        handler.end_headers()
        chunk = (b"filler line of a very large page\n" * 2048)[: 64 * 1024]
        sent = 0
        try:
            while sent < total:
                piece = chunk[: total - sent]
                handler.wfile.write(piece)
                sent += len(piece)
                self.sent[path] = sent
        except OSError:  # the client hung up: what it read is in `sent`
            pass
        handler.close_connection = True
