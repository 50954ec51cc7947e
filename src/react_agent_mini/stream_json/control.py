"""The control channel of Claude Code's stream-json protocol: requests in both directions, matched by id.

The client (the Claude Agent SDK, claude-code-acp) sends `control_request`s — `initialize`, `interrupt`,
`set_permission_mode`, ... — and we answer each with one `control_response` carrying its `request_id`.
We send our own `control_request`s — `can_use_tool`, `hook_callback` — and wait for the client's answer.
Envelopes (§2.2 of the protocol reference):
`{"type":"control_request","request_id":ID,"request":{"subtype":...}}`,
`{"type":"control_response","response":{"subtype":"success","request_id":ID,"response":{...}}}` or
`{..."subtype":"error","request_id":ID,"error":"text"}`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

from ..ids import new_uuid


class ControlError(Exception):
    """The client answered one of our requests with an error, or could not answer it."""


class ControlChannel:
    """Sends our requests and resolves them when answers arrive; builds answers to the client's requests."""

    def __init__(self, write: Callable[[dict[str, Any]], None]) -> None:
        self._write = write
        self._pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._closed = False

    async def request(self, subtype: str, fields: Mapping[str, Any], *, timeout: float | None = None) -> dict[str, Any]:
        """Send a request and wait for the answer's `response` object; ControlError when it failed, or the
        client went away. A cancelled wait withdraws the request (`control_cancel_request`)."""
        if self._closed:
            raise ControlError("the client has closed the connection")
        request_id = new_uuid()
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        self._write({"type": "control_request", "request_id": request_id, "request": {"subtype": subtype, **fields}})
        try:
            return await asyncio.wait_for(future, timeout)
        except asyncio.CancelledError:
            if not future.done():
                self._write({"type": "control_cancel_request", "request_id": request_id})
            raise
        except TimeoutError:
            raise ControlError(f"no answer to {subtype} within {timeout:.0f} s") from None
        finally:
            self._pending.pop(request_id, None)

    def answered(self, line: Mapping[str, Any]) -> None:
        """A `control_response` line arrived: resolve the request it answers (unknown ids are ignored)."""
        response = line.get("response")
        if not isinstance(response, Mapping):
            return
        future = self._pending.get(str(response.get("request_id", "")))
        if future is None or future.done():
            return
        if response.get("subtype") == "success":
            body = response.get("response")
            future.set_result(dict(body) if isinstance(body, Mapping) else {})
        else:
            future.set_exception(ControlError(str(response.get("error") or "the client refused the request")))

    @property
    def closed(self) -> bool:
        """True once the client can no longer answer (stdin ended)."""
        return self._closed

    def close(self) -> None:
        """The client went away: every waiting request fails."""
        self._closed = True
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ControlError("the client closed the connection before answering"))

    def reply(self, request_id: str, response: Mapping[str, Any] | None = None) -> None:
        """Answer one of the client's requests with success."""
        body: dict[str, Any] = {"subtype": "success", "request_id": request_id}
        if response is not None:
            body["response"] = dict(response)
        self._write({"type": "control_response", "response": body})

    def reply_error(self, request_id: str, error: str) -> None:
        """Answer one of the client's requests with an error."""
        self._write(
            {"type": "control_response", "response": {"subtype": "error", "request_id": request_id, "error": error}}
        )
