"""Loopback fake LLM HTTP server speaking the OpenAI and Anthropic streaming wire formats.

This is the only model fake in the test suite: the agent's real httpx clients talk to it over
real TCP on 127.0.0.1, so it tries hard to look like the real providers on the wire:

* ``POST /v1/chat/completions`` (and ``/chat/completions``) answers as OpenAI / DeepSeek
  Chat Completions with ``stream: true``; ``POST /v1/messages`` answers as Anthropic Messages.
* Requests are authenticated and validated like the real APIs (tool-call pairing, tool name
  pattern, ``cache_control`` breakpoint limit, ...); invalid ones get the provider's error JSON
  and do not consume a script.
* Responses are scripted with :class:`Reply`, :class:`HttpError`, :class:`DropAfter`,
  :class:`Stall`, :class:`Malformed` and :class:`Hang` (fault injection), queued FIFO via
  :meth:`FakeLLMServer.enqueue` or computed by a responder function; :class:`Raw` replays a
  recorded answer byte for byte (an SSE body, comments and all, or a JSON body, with its status).
* Every request is recorded (:attr:`FakeLLMServer.requests`).

It is written with raw asyncio streams and hand-rolled HTTP/1.1 so that it has byte-level control
(abrupt disconnects, malformed SSE).  The event loop runs in a daemon thread, so synchronous tests,
async tests and subprocesses (give them :attr:`FakeLLMServer.url`) can all use it.  Run
``python -m tests.fakes.fake_llm --port 0 --script script.json`` for a standalone server.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import dataclasses
import email.utils
import hashlib
import http
import itertools
import json
import re
import signal
import sys
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, TypeAlias

# --------------------------------------------------------------------------------------------
# Scripts
# --------------------------------------------------------------------------------------------


@dataclass
class ToolCall:
    name: str
    arguments: dict[str, Any] | str  # str = raw JSON text sent as-is (may be invalid on purpose)
    id: str | None = None  # None = auto: "call_<n>" for OpenAI, "toolu_<n>" for Anthropic; "" is sent as ""
    omit_id: bool = False  # send no id field at all (some local OpenAI-compatible servers do)


@dataclass
class Usage:
    input_tokens: int = 100  # non-cached input tokens
    output_tokens: int = 20
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0  # Anthropic cache_creation_input_tokens (OpenAI ignores)


@dataclass
class Reply:
    """One successful streamed model response."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    thinking: str = ""  # OpenAI: delta.reasoning_content; Anthropic: thinking block + signature_delta
    stop: str | None = None  # None = auto; "length" = cut by the output limit
    usage: Usage = field(default_factory=Usage)
    chunk_size: int = 4  # characters per text/argument fragment
    delay: float = 0.0  # seconds to sleep between SSE events


@dataclass
class HttpError:
    """A non-streamed error response with the provider's JSON error shape."""

    status: int
    message: str = "fake error"
    retry_after: str | None = None


@dataclass
class DropAfter:
    """Stream ``reply`` but abort the TCP connection after ``events`` SSE events."""

    reply: Reply
    events: int = 3


@dataclass
class Stall:
    """Stream ``reply`` for ``events`` SSE events, then send nothing more, keeping the connection open (until
    the client gives up or the server stops): a provider that stalled mid-answer."""

    reply: Reply
    events: int = 3


@dataclass
class Malformed:
    """200 + SSE headers, two valid events, then a ``data:`` line that is not JSON."""

    reply: Reply = field(default_factory=Reply)


@dataclass
class Hang:
    """Accept the request and never answer (until the server stops)."""


@dataclass
class Raw:
    """Answer with these bytes as they are: a recorded response of a real provider (or one written to its
    documented format). An SSE body is written one event at a time (``piece=0``) or in writes of ``piece``
    bytes, ``delay`` seconds apart; any other body is written whole unless ``piece`` says otherwise."""

    body: bytes
    status: int = 200
    content_type: str = "text/event-stream"
    piece: int = 0
    delay: float = 0.0

    @classmethod
    def json(cls, value: Any, status: int = 200) -> Raw:
        """A JSON body (a whole answer, or an error object), as a server that does not stream sends it."""
        return cls(json.dumps(value).encode(), status, "application/json")

    def pieces(self) -> list[bytes]:
        if self.piece > 0:
            return [self.body[i : i + self.piece] for i in range(0, len(self.body), self.piece)]
        if "event-stream" in self.content_type:
            events = self.body.split(b"\n\n")
            return [e + b"\n\n" for e in events[:-1]] + ([events[-1]] if events[-1] else [])
        return [self.body]


Script: TypeAlias = Reply | HttpError | DropAfter | Stall | Malformed | Hang | Raw


@dataclass
class RecordedRequest:
    path: str  # without the query string
    headers: dict[str, str]  # lower-cased names
    body: dict[str, Any]  # parsed JSON ({} if the body was not a JSON object)
    wire: str  # "openai", "anthropic" (or "unknown" for 404s)
    received_at: float  # time.monotonic()


DEFAULT_TEXT = "(fake server: no script left)"
MAX_CACHE_BREAKPOINTS = 4
_TOOL_NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_ROUTES = {"/v1/chat/completions": "openai", "/chat/completions": "openai", "/v1/messages": "anthropic"}
_INSUFFICIENT_TOOL_MESSAGES = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
    "'tool_call_id'. (insufficient tool messages following tool_calls message)"
)
_EXTRA_REASONS = {529: "Site Overloaded"}

# --------------------------------------------------------------------------------------------
# Provider error shapes and request validation
# --------------------------------------------------------------------------------------------

_OPENAI_ERROR_KINDS: dict[int, tuple[str, str | None]] = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("permission_error", None),
    404: ("invalid_request_error", "unknown_url"),
    429: ("requests", "rate_limit_exceeded"),
}
_ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


class _Invalid(Exception):
    """Raised by validators; turned into a provider-shaped error response."""

    def __init__(self, status: int, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code


def error_body(wire: str, status: int, message: str, code: str | None = None) -> dict[str, Any]:
    """The provider's JSON error body for ``status`` on ``wire``."""
    if wire == "anthropic":
        default = "api_error" if status >= 500 else "invalid_request_error"
        kind = _ANTHROPIC_ERROR_TYPES.get(status, default)
        return {"type": "error", "error": {"type": kind, "message": message}}
    fallback = ("server_error", None) if status >= 500 else ("invalid_request_error", None)
    kind, default_code = _OPENAI_ERROR_KINDS.get(status, fallback)
    return {"error": {"message": message, "type": kind, "param": None, "code": code or default_code}}


def _check_tool_names(tools: Any, wire: str) -> None:
    if tools is None:
        return
    if not isinstance(tools, list):
        raise _Invalid(400, "tools: Input should be a valid list")
    for i, tool in enumerate(tools):
        spec = tool.get("function") if wire == "openai" and isinstance(tool, dict) else tool
        name = spec.get("name") if isinstance(spec, dict) else None
        if wire == "anthropic" and isinstance(tool, dict) and tool.get("type", "custom") != "custom":
            continue  # server tools such as {"type": "web_search_20250305", "name": "web_search"}
        if isinstance(name, str) and _TOOL_NAME_RE.match(name):
            continue
        if wire == "openai":
            raise _Invalid(
                400,
                f"Invalid 'tools[{i}].function.name': string does not match pattern. "
                "Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
                "invalid_value",
            )
        raise _Invalid(400, f"tools.{i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'")


def validate_openai(body: dict[str, Any]) -> None:
    if not isinstance(body.get("model"), str) or not body["model"]:
        raise _Invalid(400, "you must provide a model parameter")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _Invalid(400, "Invalid 'messages': empty array. Expected an array with minimum length 1.")
    if body.get("stream") is not True:
        raise _Invalid(400, "fake LLM server: only stream=true requests are supported")
    _check_tool_names(body.get("tools"), "openai")
    pending: set[str] = set()  # tool_call ids of the opening assistant message not answered yet
    answerable: set[str] = set()  # all tool_call ids of that assistant message
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict) or not isinstance(msg.get("role"), str):
            raise _Invalid(400, f"Invalid 'messages[{i}]': missing required parameter 'role'.")
        if msg["role"] == "tool":
            if msg.get("tool_call_id") not in answerable:
                raise _Invalid(
                    400,
                    "Invalid parameter: messages with role 'tool' must be a response to a "
                    "preceeding message with 'tool_calls'.",
                )
            pending.discard(msg["tool_call_id"])
            continue
        if pending:
            raise _Invalid(400, _INSUFFICIENT_TOOL_MESSAGES)
        calls = msg.get("tool_calls") if msg["role"] == "assistant" else None
        calls = calls if isinstance(calls, list) else []
        answerable = {c["id"] for c in calls if isinstance(c, dict) and isinstance(c.get("id"), str)}
        pending = set(answerable)
    if pending:
        raise _Invalid(400, _INSUFFICIENT_TOOL_MESSAGES)


def _anthropic_turns(messages: list[Any]) -> list[tuple[int, str, list[dict[str, Any]]]]:
    """Merge consecutive same-role messages like the real API: (first index, role, blocks)."""
    turns: list[tuple[int, str, list[dict[str, Any]]]] = []
    for i, msg in enumerate(messages):
        role = msg.get("role") if isinstance(msg, dict) else None
        if role not in ("user", "assistant"):
            raise _Invalid(400, f"messages.{i}.role: Input should be 'user' or 'assistant'")
        content = msg.get("content")
        if isinstance(content, str):
            blocks: list[dict[str, Any]] = [{"type": "text", "text": content}]
        elif isinstance(content, list) and all(isinstance(b, dict) for b in content):
            blocks = list(content)
        else:
            raise _Invalid(400, f"messages.{i}.content: Input should be a valid list")
        if turns and turns[-1][1] == role:
            turns[-1][2].extend(blocks)
        else:
            turns.append((i, role, blocks))
    return turns


def _missing_tool_results(index: int, missing: list[str]) -> _Invalid:
    return _Invalid(
        400,
        f"messages.{index}: `tool_use` ids were found without `tool_result` blocks immediately "
        f"after: {', '.join(missing)}. Each `tool_use` block must have a corresponding `tool_result` "
        "block in the next message.",
    )


def _check_tool_results(turns: list[tuple[int, str, list[dict[str, Any]]]]) -> None:
    """Turns alternate after merging, so every assistant turn is followed by a user turn or the end."""
    open_ids: list[str] = []  # tool_use ids of the previous (assistant) turn
    open_index = 0
    for index, role, blocks in turns:
        if role == "assistant":
            open_ids = [str(b.get("id")) for b in blocks if b.get("type") == "tool_use"]
            open_index = index
            continue
        answered: list[str] = []
        seen_other = False
        for pos, block in enumerate(blocks):
            if block.get("type") != "tool_result":
                seen_other = True
                continue
            use_id = str(block.get("tool_use_id"))
            if use_id not in open_ids:
                raise _Invalid(
                    400,
                    f"messages.{index}.content.{pos}: unexpected `tool_use_id` found in `tool_result` "
                    f"blocks: {use_id}. Each `tool_result` block must have a corresponding `tool_use` "
                    "block in the previous message.",
                )
            if seen_other:
                raise _Invalid(400, f"messages.{index}: `tool_result` blocks must come before any other content blocks")
            answered.append(use_id)
        missing = [i for i in open_ids if i not in answered]
        if missing:
            raise _missing_tool_results(open_index, missing)
        open_ids = []
    if open_ids:
        raise _missing_tool_results(open_index, open_ids)


def _check_unique_tool_use_ids(messages: list[Any]) -> None:
    """The real API refuses a request in which two tool_use blocks (anywhere in it) share an id."""
    seen: set[str] = set()
    for i, msg in enumerate(messages):
        content = msg.get("content")
        for j, block in enumerate(content if isinstance(content, list) else []):
            if block.get("type") != "tool_use":
                continue
            use_id = str(block.get("id"))
            if use_id in seen:
                raise _Invalid(400, f"messages.{i}.content.{j}: `tool_use` ids must be unique")
            seen.add(use_id)


def _count_cache_control(body: dict[str, Any], turns: list[tuple[int, str, list[dict[str, Any]]]]) -> int:
    blocks: list[Any] = []
    if isinstance(body.get("system"), list):
        blocks.extend(body["system"])
    blocks.extend(body.get("tools") or [])
    for _, _, content in turns:
        blocks.extend(content)
        for block in content:
            if block.get("type") == "tool_result" and isinstance(block.get("content"), list):
                blocks.extend(block["content"])
    return sum(1 for b in blocks if isinstance(b, dict) and b.get("cache_control") is not None)


def validate_anthropic(body: dict[str, Any]) -> None:
    if not isinstance(body.get("model"), str) or not body["model"]:
        raise _Invalid(400, "model: Field required")
    max_tokens = body.get("max_tokens")
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool):
        raise _Invalid(400, "max_tokens: Field required")
    messages = body.get("messages")
    if not isinstance(messages, list):
        raise _Invalid(400, "messages: Field required")
    if not messages:
        raise _Invalid(400, "messages: at least one message is required")
    if body.get("stream") is not True:
        raise _Invalid(400, "fake LLM server: only stream=true requests are supported")
    _check_tool_names(body.get("tools"), "anthropic")
    turns = _anthropic_turns(messages)
    _check_unique_tool_use_ids(messages)
    _check_tool_results(turns)
    breakpoints = _count_cache_control(body, turns)
    if breakpoints > MAX_CACHE_BREAKPOINTS:
        raise _Invalid(
            400,
            f"A maximum of {MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. Found {breakpoints}.",
        )


# --------------------------------------------------------------------------------------------
# Stream builders (each returns the list of complete SSE events as bytes)
# --------------------------------------------------------------------------------------------


def _sse(data: Any, event: str | None = None) -> bytes:
    payload = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    prefix = f"event: {event}\n" if event else ""
    return f"{prefix}data: {payload}\n\n".encode()


def _fragments(text: str, size: int) -> list[str]:
    size = max(1, size)
    return [text[i : i + size] for i in range(0, len(text), size)]


def _arguments_text(call: ToolCall) -> str:
    return call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)


def _stop_reason(reply: Reply, wire: str) -> str:
    if reply.stop is None:
        if wire == "openai":
            return "tool_calls" if reply.tool_calls else "stop"
        return "tool_use" if reply.tool_calls else "end_turn"
    if wire == "openai":
        mapping = {"max_tokens": "length", "end_turn": "stop", "tool_use": "tool_calls"}
    else:
        mapping = {"length": "max_tokens", "stop": "end_turn", "tool_calls": "tool_use"}
    return mapping.get(reply.stop, reply.stop)


def openai_events(reply: Reply, request: dict[str, Any], next_id: Callable[[], int]) -> list[bytes]:
    stream_options = request.get("stream_options")
    include_usage = isinstance(stream_options, dict) and stream_options.get("include_usage") is True
    base = {
        "id": f"chatcmpl-{next_id()}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": request.get("model"),
        "system_fingerprint": "fp_fake",
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return _sse({**base, "choices": [choice], **({"usage": None} if include_usage else {})})

    size = reply.chunk_size
    events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"content": None, "reasoning_content": f}) for f in _fragments(reply.thinking, size)]
    events += [chunk({"content": f}) for f in _fragments(reply.text, size)]
    for i, call in enumerate(reply.tool_calls):
        function = {"name": call.name, "arguments": ""}
        opening: dict[str, Any] = {"index": i, "type": "function", "function": function}
        if not call.omit_id:
            opening["id"] = call.id if call.id is not None else f"call_{next_id()}"
        events.append(chunk({"tool_calls": [opening]}))
        for frag in _fragments(_arguments_text(call), size):
            events.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": frag}}]}))
    events.append(chunk({}, _stop_reason(reply, "openai")))
    if include_usage:
        u = reply.usage
        prompt = u.input_tokens + u.cache_read_tokens
        usage = {
            "prompt_tokens": prompt,
            "completion_tokens": u.output_tokens,
            "total_tokens": prompt + u.output_tokens,
            "prompt_tokens_details": {"cached_tokens": u.cache_read_tokens},
            "prompt_cache_hit_tokens": u.cache_read_tokens,
            "prompt_cache_miss_tokens": u.input_tokens,
        }
        events.append(_sse({**base, "choices": [], "usage": usage}))
    events.append(b"data: [DONE]\n\n")
    return events


def anthropic_events(reply: Reply, request: dict[str, Any], next_id: Callable[[], int]) -> list[bytes]:
    u = reply.usage
    message: dict[str, Any] = {
        "id": f"msg_fake{next_id():08d}",
        "type": "message",
        "role": "assistant",
        "model": request.get("model"),
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {
            "input_tokens": u.input_tokens,
            "cache_creation_input_tokens": u.cache_write_tokens,
            "cache_read_input_tokens": u.cache_read_tokens,
            "output_tokens": 1,
        },
    }
    events = [_sse({"type": "message_start", "message": message}, "message_start")]
    events.append(_sse({"type": "ping"}, "ping"))

    index = 0

    def block(start: dict[str, Any], deltas: list[dict[str, Any]]) -> None:
        nonlocal index
        events.append(
            _sse({"type": "content_block_start", "index": index, "content_block": start}, "content_block_start")
        )
        for delta in deltas:
            events.append(_sse({"type": "content_block_delta", "index": index, "delta": delta}, "content_block_delta"))
        events.append(_sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
        index += 1

    size = reply.chunk_size
    if reply.thinking:
        signature = base64.b64encode(hashlib.sha256(reply.thinking.encode()).digest()).decode()
        thinking = [{"type": "thinking_delta", "thinking": f} for f in _fragments(reply.thinking, size)]
        block(
            {"type": "thinking", "thinking": ""},
            [*thinking, {"type": "signature_delta", "signature": signature}],
        )
    if reply.text or not reply.tool_calls:
        block(
            {"type": "text", "text": ""},
            [{"type": "text_delta", "text": f} for f in _fragments(reply.text, size)],
        )
    for call in reply.tool_calls:
        start: dict[str, Any] = {"type": "tool_use", "name": call.name, "input": {}}
        if not call.omit_id:
            start["id"] = call.id if call.id is not None else f"toolu_{next_id()}"
        parts = ["", *_fragments(_arguments_text(call), size)]
        block(start, [{"type": "input_json_delta", "partial_json": p} for p in parts])
    delta = {
        "type": "message_delta",
        "delta": {"stop_reason": _stop_reason(reply, "anthropic"), "stop_sequence": None},
    }
    events.append(_sse({**delta, "usage": {"output_tokens": u.output_tokens}}, "message_delta"))
    events.append(_sse({"type": "message_stop"}, "message_stop"))
    return events


# --------------------------------------------------------------------------------------------
# Raw HTTP/1.1
# --------------------------------------------------------------------------------------------


@dataclass
class RawRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


async def read_request(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> RawRequest | None:
    """One HTTP/1.1 request off `reader` (a `100 Continue` sent when asked, a chunked body joined); None when the
    client went away without one. Also the peers benchmark's server's (`benchmarks/_peer_server.py`)."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None  # client connected and went away without a request
    request_line, *header_lines = head.decode("latin-1").split("\r\n")
    method, target, _version = request_line.split(" ", 2)
    headers: dict[str, str] = {}
    for line in header_lines:
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    if headers.get("expect", "").lower() == "100-continue":
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    if "chunked" in headers.get("transfer-encoding", "").lower():
        parts: list[bytes] = []
        while size := int((await reader.readuntil(b"\r\n")).split(b";")[0].strip(), 16):
            parts.append(await reader.readexactly(size))
            await reader.readexactly(2)
        while await reader.readuntil(b"\r\n") != b"\r\n":
            pass  # trailers
        body = b"".join(parts)
    else:
        body = await reader.readexactly(int(headers.get("content-length", "0")))
    return RawRequest(method, target.split("?", 1)[0], headers, body)


def _response_head(status: int, headers: dict[str, str]) -> bytes:
    try:
        reason = http.HTTPStatus(status).phrase
    except ValueError:
        reason = _EXTRA_REASONS.get(status, "Unknown")
    lines = [f"HTTP/1.1 {status} {reason}", *(f"{k}: {v}" for k, v in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _as_chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


# --------------------------------------------------------------------------------------------
# Server
# --------------------------------------------------------------------------------------------


class FakeLLMServer:
    """Scripted fake OpenAI + Anthropic streaming server on 127.0.0.1 (own thread + event loop)."""

    def __init__(self, *, api_key: str = "test-key", port: int = 0) -> None:
        self.api_key = api_key
        self.requests: list[RecordedRequest] = []
        self._requested_port = port
        self._port: int | None = None
        self._cond = threading.Condition()  # guards requests, _queue and _responder
        self._queue: deque[Script] = deque()
        self._responder: Callable[[RecordedRequest], Script] | None = None
        self._ids = itertools.count(1)
        self._ready = threading.Event()
        self._startup_error: BaseException | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop_event: asyncio.Event | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    # ---- public API -------------------------------------------------------------------------

    @property
    def url(self) -> str:
        if self._port is None:
            raise RuntimeError("FakeLLMServer is not started")
        return f"http://127.0.0.1:{self._port}"

    @property
    def openai_base_url(self) -> str:
        return self.url + "/v1"

    @property
    def anthropic_base_url(self) -> str:
        return self.url

    def enqueue(self, *scripts: Script) -> None:
        with self._cond:
            self._queue.extend(scripts)

    def drop_queue(self) -> None:
        """Forget the scripts not yet asked for."""
        with self._cond:
            self._queue.clear()

    def set_responder(self, fn: Callable[[RecordedRequest], Script] | None) -> None:
        with self._cond:
            self._responder = fn

    def wait_for_requests(self, n: int, timeout: float = 10.0) -> None:
        with self._cond:
            if not self._cond.wait_for(lambda: len(self.requests) >= n, timeout):
                raise TimeoutError(f"expected {n} requests, got {len(self.requests)} within {timeout}s")

    async def wait_for_requests_async(self, n: int, timeout: float = 10.0) -> None:
        """Like :meth:`wait_for_requests` without blocking the caller's event loop."""
        await asyncio.to_thread(self.wait_for_requests, n, timeout)

    def start(self) -> FakeLLMServer:
        if self._thread is not None:
            raise RuntimeError("FakeLLMServer can only be started once")
        self._thread = threading.Thread(target=self._thread_main, name="fake-llm-server", daemon=True)
        self._thread.start()
        if not self._ready.wait(10) or self._port is None:
            raise RuntimeError("FakeLLMServer failed to start") from self._startup_error
        return self

    def stop(self) -> None:
        loop, stop_event, thread = self._loop, self._stop_event, self._thread
        if loop is not None and stop_event is not None:
            with contextlib.suppress(RuntimeError):  # loop already closed
                loop.call_soon_threadsafe(stop_event.set)
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=10)

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    # ---- event loop thread ------------------------------------------------------------------

    def _thread_main(self) -> None:
        loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(self._main())
        except BaseException as exc:
            self._startup_error = exc
            if self._ready.is_set():
                traceback.print_exc()
        finally:
            self._ready.set()
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop_event = asyncio.Event()
        server = await asyncio.start_server(self._handle, "127.0.0.1", self._requested_port, limit=1 << 20)
        self._port = server.sockets[0].getsockname()[1]
        self._ready.set()
        try:
            await self._stop_event.wait()
        finally:
            server.close()
            tasks = list(self._tasks)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        # With a zero high-water mark drain() waits until each event reached the kernel, so the
        # client receives one small piece per event and abort() never discards written events.
        writer.transport.set_write_buffer_limits(high=0)
        try:
            await self._serve(reader, writer)
        except asyncio.CancelledError:
            writer.transport.abort()
            raise
        except (ConnectionError, asyncio.IncompleteReadError):
            writer.transport.abort()  # the client went away
        except Exception:
            traceback.print_exc()
            writer.transport.abort()
        else:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()
        finally:
            if task is not None:
                self._tasks.discard(task)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        raw = await read_request(reader, writer)
        if raw is None:
            return
        wire = _ROUTES.get(raw.path) if raw.method == "POST" else None
        try:
            parsed = json.loads(raw.body or b"null")
        except ValueError:
            parsed = None
        body = parsed if isinstance(parsed, dict) else {}
        record = RecordedRequest(raw.path, raw.headers, body, wire or "unknown", time.monotonic())
        with self._cond:
            self.requests.append(record)
            self._cond.notify_all()
        if wire is None:
            message = f"Unknown request URL: {raw.method} {raw.path}."
            await self._send_json(writer, "openai", 404, error_body("openai", 404, message))
            return
        try:
            self._check_auth(wire, raw.headers)
            if not isinstance(parsed, dict):
                raise _Invalid(400, "The request body is not valid JSON (expected an object).")
            (validate_openai if wire == "openai" else validate_anthropic)(body)
        except _Invalid as exc:
            await self._send_json(writer, wire, exc.status, error_body(wire, exc.status, exc.message, exc.code))
            return
        await self._respond(writer, wire, body, self._next_script(record), reader)

    def _check_auth(self, wire: str, headers: dict[str, str]) -> None:
        if wire == "anthropic":
            if headers.get("x-api-key") != self.api_key:
                raise _Invalid(401, "invalid x-api-key")
            if not headers.get("anthropic-version"):
                raise _Invalid(400, "anthropic-version: header is required")
            return
        scheme, _, token = headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or token.strip() != self.api_key:
            raise _Invalid(401, "Incorrect API key provided", "invalid_api_key")

    def _next_script(self, record: RecordedRequest) -> Script:
        with self._cond:
            if self._queue:
                return self._queue.popleft()
            responder = self._responder
        if responder is None:
            return Reply(text=DEFAULT_TEXT)
        try:
            return responder(record)
        except Exception as exc:
            traceback.print_exc()
            return HttpError(500, f"fake LLM server responder raised {exc!r}")

    def _base_headers(self, wire: str) -> dict[str, str]:
        request_id = f"req_fake{next(self._ids):08d}"
        id_header = "request-id" if wire == "anthropic" else "x-request-id"
        return {"date": email.utils.formatdate(usegmt=True), id_header: request_id, "connection": "close"}

    async def _send_json(
        self,
        writer: asyncio.StreamWriter,
        wire: str,
        status: int,
        body: Any,
        extra: dict[str, str] | None = None,
    ) -> None:
        data = json.dumps(body).encode()
        headers = {"content-type": "application/json", "content-length": str(len(data)), **(extra or {})}
        writer.write(_response_head(status, {**self._base_headers(wire), **headers}) + data)
        await writer.drain()

    async def _respond(
        self,
        writer: asyncio.StreamWriter,
        wire: str,
        body: dict[str, Any],
        script: Script,
        reader: asyncio.StreamReader | None = None,
    ) -> None:
        if isinstance(script, Hang):
            assert self._stop_event is not None
            await self._stop_event.wait()
            return
        if isinstance(script, HttpError):
            extra = {"retry-after": script.retry_after} if script.retry_after is not None else {}
            await self._send_json(writer, wire, script.status, error_body(wire, script.status, script.message), extra)
            return
        if isinstance(script, Raw):
            head = {"content-type": script.content_type, "cache-control": "no-cache", "transfer-encoding": "chunked"}
            writer.write(_response_head(script.status, {**self._base_headers(wire), **head}))
            await self._write_events(writer, script.pieces(), script.delay)
            writer.write(b"0\r\n\r\n")
            await writer.drain()
            return
        reply = script if isinstance(script, Reply) else script.reply
        build = openai_events if wire == "openai" else anthropic_events
        events = build(reply, body, lambda: next(self._ids))
        sse_headers = {
            "content-type": "text/event-stream",
            "cache-control": "no-cache",
            "transfer-encoding": "chunked",
        }
        writer.write(_response_head(200, {**self._base_headers(wire), **sse_headers}))
        if isinstance(script, DropAfter):
            await self._write_events(writer, events[: script.events], reply.delay)
            writer.transport.abort()  # no terminating chunk, no [DONE] / message_stop
            return
        if isinstance(script, Stall):
            await self._write_events(writer, events[: script.events], reply.delay)
            await self._until_closed_or_stopped(reader)
            writer.transport.abort()
            return
        if isinstance(script, Malformed):
            bad = b"event: content_block_delta\ndata: {not json\n\n" if wire == "anthropic" else b"data: {not json\n\n"
            events = [*events[:2], bad]
        await self._write_events(writer, events, reply.delay)
        writer.write(b"0\r\n\r\n")
        await writer.drain()

    async def _until_closed_or_stopped(self, reader: asyncio.StreamReader | None) -> None:
        """Wait until the client closes its end of the connection, or the server stops."""
        assert self._stop_event is not None
        waits: list[asyncio.Future[Any]] = [asyncio.ensure_future(self._stop_event.wait())]
        if reader is not None:
            waits.append(asyncio.ensure_future(reader.read()))
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for wait in waits:
                wait.cancel()
            await asyncio.gather(*waits, return_exceptions=True)

    async def _write_events(self, writer: asyncio.StreamWriter, events: Sequence[bytes], delay: float) -> None:
        for i, event in enumerate(events):
            if delay > 0 and i > 0:
                await asyncio.sleep(delay)
            writer.write(_as_chunk(event))
            await writer.drain()


# --------------------------------------------------------------------------------------------
# Standalone use: python -m tests.fakes.fake_llm --port 0 --script script.json
# --------------------------------------------------------------------------------------------


def _reply_from_json(obj: dict[str, Any]) -> Reply:
    calls = [
        ToolCall(c["name"], c.get("arguments", {}), c.get("id"), bool(c.get("omit_id")))
        for c in obj.get("tool_calls", [])
    ]
    return Reply(
        text=obj.get("text", ""),
        tool_calls=calls,
        thinking=obj.get("thinking", ""),
        stop=obj.get("stop"),
        usage=Usage(**obj.get("usage", {})),
        chunk_size=obj.get("chunk_size", 4),
        delay=obj.get("delay", 0.0),
    )


def script_from_json(obj: dict[str, Any]) -> Script:
    """Decode one script: ``{"type": "reply", "text": "hi"}``, ``{"type": "http_error", "status": 429}``..."""
    kind = obj.get("type", "reply")
    if kind == "reply":
        return _reply_from_json(obj)
    if kind == "http_error":
        return HttpError(obj["status"], obj.get("message", "fake error"), obj.get("retry_after"))
    if kind == "drop_after":
        return DropAfter(_reply_from_json(obj.get("reply", {})), obj.get("events", 3))
    if kind == "stall":
        return Stall(_reply_from_json(obj.get("reply", {})), obj.get("events", 3))
    if kind == "malformed":
        return Malformed(_reply_from_json(obj.get("reply", {})))
    if kind == "hang":
        return Hang()
    if kind == "raw":
        body, content_type = obj["body"].encode(), obj.get("content_type", "text/event-stream")
        return Raw(body, obj.get("status", 200), content_type, obj.get("piece", 0), obj.get("delay", 0.0))
    raise ValueError(f"unknown script type {kind!r}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run the fake LLM server until SIGINT/SIGTERM.")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--api-key", default="test-key")
    parser.add_argument("--script", help="JSON file holding a list of scripts (see script_from_json)")
    parser.add_argument("--record", help="write the recorded requests to this JSONL file on exit")
    args = parser.parse_args(argv)
    server = FakeLLMServer(api_key=args.api_key, port=args.port).start()
    if args.script:
        with open(args.script, encoding="utf-8") as f:
            server.enqueue(*(script_from_json(o) for o in json.load(f)))
    done = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: done.set())
    print(server.url, flush=True)  # first stdout line: the base URL, for parent processes
    try:
        while not done.wait(0.2):
            pass
    finally:
        server.stop()
        if args.record:
            with open(args.record, "w", encoding="utf-8") as f:
                for request in server.requests:
                    f.write(json.dumps(dataclasses.asdict(request)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
