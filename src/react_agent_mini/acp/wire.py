"""JSON-RPC on stdio for `ram acp`: descriptors only the protocol uses, and a transport broken input cannot stop.

`claim_stdio()` keeps duplicates of stdin and stdout for the protocol. Descriptor 1 then points at stderr and
descriptor 0 at /dev/null. After that, nothing else in the process can reach the protocol stream: not a stray
print, not a library warning, not a child process that inherits the descriptors.

`LineTransport` is the `acp` package's message transport (`send`, `receive`, `close`) over newline-delimited JSON on
those descriptors. A line that is not JSON gets a Parse error answer. A JSON value that is not a message gets an
Invalid Request answer: an array (batches are not part of ACP), a scalar, an object that is neither request nor
response, or a method that is not a string. A notification cannot be answered, so one whose parameters are not
what its method takes (`session/cancel` without a `sessionId`) is ignored with a warning on stderr. In every case
reading goes on. A thread reads the lines (`stream_json.input.read_lines`, as the stream-json driver does). Writes
are synchronous and in call order, so a response goes out before anything its handler scheduled after it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import threading
from collections.abc import Callable
from typing import Any

from ..stream_json.input import read_lines

PARSE_ERROR = -32700
INVALID_REQUEST = -32600


class ProtocolFds:
    """The duplicated descriptors the protocol reads from and writes to."""

    def __init__(self, read_fd: int, write_fd: int) -> None:
        self.read_fd = read_fd
        self.write_fd = write_fd


def claim_stdio() -> ProtocolFds:
    """Move the protocol off descriptors 0 and 1 (see the module docstring)."""
    read_fd, write_fd = os.dup(0), os.dup(1)
    os.dup2(2, 1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    return ProtocolFds(read_fd, write_fd)


class LineTransport:
    """JSON-RPC messages as lines on two descriptors."""

    def __init__(self, fds: ProtocolFds, complain: Callable[[str], None]) -> None:
        self._fds = fds
        self._complain = complain
        self._inbox: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._closed = False
        loop = asyncio.get_running_loop()

        def deliver(item: bytes | None) -> None:
            with contextlib.suppress(RuntimeError):  # the loop has closed: we are exiting
                loop.call_soon_threadsafe(self._inbox.put_nowait, item)

        threading.Thread(target=read_lines, args=(fds.read_fd, deliver), name="acp-stdin", daemon=True).start()

    async def receive(self) -> dict[str, Any] | None:
        """The next message; None once stdin has ended (or stdout was closed)."""
        while True:
            raw = await self._inbox.get()
            if raw is None:
                self._inbox.put_nowait(None)  # every later call sees the end too
                return None
            message = self._message(raw)
            if message is not None:
                return message

    async def send(self, message: dict[str, Any]) -> None:
        self._write(message)

    async def close(self) -> None:
        self._closed = True

    def _write(self, message: dict[str, Any]) -> None:
        if self._closed:
            raise ConnectionError("the connection is closed")
        data = (json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8", "replace")
        view = memoryview(data)
        try:
            while view:
                written = os.write(self._fds.write_fd, view)
                view = view[written:]
        except OSError as exc:  # the client closed our stdout: it is gone; end as at the end of stdin
            self._closed = True
            self._inbox.put_nowait(None)
            raise ConnectionError(f"the client closed the connection ({exc.strerror or exc})") from None

    def _message(self, raw: bytes) -> dict[str, Any] | None:
        """The line as a message, or None after answering (or reporting) why it is not one."""
        text = raw.decode("utf-8", "replace").strip()
        if not text:
            return None
        try:
            value = json.loads(text)
        except ValueError as exc:
            self._refuse(None, PARSE_ERROR, f"Parse error: a line that is not JSON was ignored ({exc})")
            return None
        if not isinstance(value, dict):
            kind = "a batch (an array)" if isinstance(value, list) else f"a JSON {type(value).__name__}"
            self._refuse(None, INVALID_REQUEST, f"Invalid Request: expected a JSON-RPC message object, got {kind}")
            return None
        request_id = value.get("id")
        if not isinstance(request_id, (str, int, type(None))) or isinstance(request_id, bool):
            self._refuse(None, INVALID_REQUEST, "Invalid Request: an id must be a string or a number")
            return None
        if "method" in value:
            if isinstance(value["method"], str):
                return value if "id" in value or self._fits(value) else None
            self._refuse(request_id, INVALID_REQUEST, "Invalid Request: the method must be a string")
            return None
        if "id" in value and ("result" in value or "error" in value):
            return value  # the answer to one of our requests
        self._refuse(request_id, INVALID_REQUEST, "Invalid Request: neither a request nor a response")
        return None

    def _fits(self, notification: dict[str, Any]) -> bool:
        """True when a notification's parameters are what its method takes (else the package would log a
        traceback for it); one that is not gets a warning, since no answer can say so."""
        from acp.schema import CancelNotification
        from pydantic import ValidationError

        method = notification["method"]
        model = {"session/cancel": CancelNotification}.get(method)
        if model is None:
            return True
        try:
            model.model_validate(notification.get("params"))
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(part) for part in error['loc']) or 'params'}: {error['msg']}" for error in exc.errors()
            )
            self._complain(f"warning: acp: a {method} notification with invalid params was ignored ({problems})")
            return False
        return True

    def _refuse(self, request_id: object, code: int, text: str) -> None:
        self._complain(f"warning: acp: {text}")
        with contextlib.suppress(ConnectionError):
            self._write({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": text}})
