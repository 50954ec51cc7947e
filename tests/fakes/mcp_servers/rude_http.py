"""A minimal streamable-HTTP MCP server (JSON answers, 2025-11-25 handshake, one tool) that misbehaves on purpose.

Runs in a thread of the test process (`RudeHttp(...)` as a context manager, `.url`). Modes:
- `status=N`: every POST is answered with HTTP N and an HTML page (a proxy in the way, a wrong token);
- `huge=N`: `tools/call` is answered with a JSON result of N characters;
- `silent_delete=True`: the DELETE that ends a session is never answered;
- `/sse` speaks the legacy SSE transport's first step (an `endpoint` event naming `/messages`); POSTs there get
  the same treatment (with `status=N`, HTTP N).
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any


class RudeHttp:
    def __init__(self, *, status: int = 0, huge: int = 0, silent_delete: bool = False) -> None:
        self.status, self.huge, self.silent_delete = status, huge, silent_delete
        self.calls = 0
        self.deletes = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._server.block_on_close = False  # a handler may sleep on purpose
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/mcp"

    def __enter__(self) -> RudeHttp:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._server.shutdown()
        self._server.server_close()

    def answer(self, message: dict[str, Any]) -> dict[str, Any] | None:
        method, request_id = message.get("method"), message.get("id")
        if request_id is None:
            return None
        if method == "initialize":
            result: dict[str, Any] = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "rude", "version": "1"},
            }
        elif method == "tools/list":
            result = {"tools": [{"name": "hello", "inputSchema": {"type": "object"}}]}
        elif method == "tools/call":
            self.calls += 1
            result = {"content": [{"type": "text", "text": "x" * self.huge if self.huge else "hello"}]}
        else:
            return {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "Method not found"}}
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        owner = self
        session = uuid.uuid4().hex

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                if not self.path.startswith("/sse"):
                    self.send_response(405)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                self.wfile.write(b"event: endpoint\ndata: /messages?sessionId=abc\n\n")
                self.wfile.flush()
                with contextlib.suppress(OSError):
                    for _ in range(600):  # keep the stream open (a daemon thread: it dies with the tests)
                        time.sleep(1)
                        self.wfile.write(b": keep-alive\n\n")
                        self.wfile.flush()

            def do_DELETE(self) -> None:
                owner.deletes += 1
                if owner.silent_delete:
                    time.sleep(600)  # a daemon thread: it dies with the test process
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_POST(self) -> None:
                message = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                if owner.status:
                    page = b"<html><body>go away</body></html>"
                    self.send_response(owner.status)
                    self.send_header("Content-Type", "text/html")
                    self.send_header("Content-Length", str(len(page)))
                    self.end_headers()
                    self.wfile.write(page)
                    return
                reply = owner.answer(message)
                body = json.dumps(reply).encode() if reply is not None else b""
                self.send_response(200 if reply is not None else 202)
                self.send_header("Mcp-Session-Id", session)
                if reply is not None:
                    self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        return Handler
