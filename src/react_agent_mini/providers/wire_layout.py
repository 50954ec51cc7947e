"""What both wire formats put around a request, as plain data: headers, tool lists, the system prompt block, and the
bytes a JSON body is sent as.

Only the standard library is used here, so that the first request can be built before anything heavy is imported
(`early/`); the providers (`openai_compat.py`, `anthropic.py`) build every request with these same functions, so
the first request sent early and the one the session would send are the same bytes.
"""

from __future__ import annotations

import json

from .. import __version__

TYPE_CHECKING = False  # not typing's: this module is on the early first-request path
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any, Protocol

    class Described(Protocol):
        """A tool as a request lists it (`ToolSpec`, or the prebuilt schemas of `early/`)."""

        @property
        def name(self) -> str: ...
        @property
        def description(self) -> str: ...
        @property
        def input_schema(self) -> Mapping[str, Any]: ...


API_VERSION = "2023-06-01"
"""The `anthropic-version` header."""
DEFAULT_MAX_TOKENS = 8192
"""Anthropic's `max_tokens` when nothing else sets it (the API requires one)."""
EPHEMERAL = {"type": "ephemeral"}
"""An Anthropic prompt-cache breakpoint."""
MAX_BREAKPOINTS = 4
"""The API refuses a request with more blocks marked `cache_control`."""
SSE_ACCEPT = "text/event-stream"
OPENAI_PATH = "/chat/completions"
"""Where Chat Completions requests go, after the base URL."""
ANTHROPIC_PATH = "/v1/messages"
"""Where Messages requests go, after the base URL."""
CONNECT_TIMEOUT = 15.0
"""Seconds to open a connection to the model's server."""
USER_AGENT = f"react-agent-mini/{__version__}"
"""Who is calling, on every model request."""


def openai_headers(api_key: str, auth_token: str = "") -> dict[str, str]:
    """The key as a bearer token."""
    return {"authorization": f"Bearer {auth_token or api_key}", "accept": SSE_ACCEPT}


def anthropic_headers(api_key: str, auth_token: str = "") -> dict[str, str]:
    """Auth and version headers: the key as `x-api-key`, or a bearer token when one is set."""
    headers = {"anthropic-version": API_VERSION, "accept": SSE_ACCEPT}
    if auth_token:
        headers["authorization"] = f"Bearer {auth_token}"
    else:
        headers["x-api-key"] = api_key
    return headers


def openai_tools(tools: Sequence[Described]) -> list[dict[str, Any]]:
    """Function tools carrying the full JSON Schema of each input."""
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": dict(t.input_schema)},
        }
        for t in tools
    ]


def anthropic_tools(tools: Sequence[Described], *, cache: bool = True) -> list[dict[str, Any]]:
    """Tools with their full JSON Schema; the last one closes the cached tools prefix when `cache`."""
    out: list[dict[str, Any]] = [
        {"name": t.name, "description": t.description, "input_schema": dict(t.input_schema)} for t in tools
    ]
    if out and cache:
        out[-1]["cache_control"] = EPHEMERAL
    return out


def anthropic_system(system: str) -> list[dict[str, Any]]:
    """The system prompt as one cached text block."""
    return [{"type": "text", "text": system, "cache_control": EPHEMERAL}] if system else []


def openai_body(
    model: str, messages: list[dict[str, Any]], tools: Sequence[Described], max_tokens: int | None
) -> dict[str, Any]:
    """A streamed Chat Completions request for `messages` (already in the server's dialect)."""
    body: dict[str, Any] = {
        "model": model,
        "messages": messages,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if tools:
        body["tools"] = openai_tools(tools)
    if max_tokens:
        body["max_tokens"] = max_tokens
    return body


def anthropic_body(
    model: str,
    max_tokens: int | None,
    messages: list[dict[str, Any]],
    system: str,
    tools: Sequence[Described],
    *,
    breakpoints: int,
) -> dict[str, Any]:
    """A streamed Messages request for `messages` (wire blocks, `breakpoints` of them marked for the cache)."""
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": max_tokens or DEFAULT_MAX_TOKENS,
        "messages": messages,
        "stream": True,
    }
    if system:
        body["system"] = anthropic_system(system)
        breakpoints += 1
    if tools:
        # The system prompt's breakpoint caches the tools too (they come first): theirs is the one to spare.
        body["tools"] = anthropic_tools(tools, cache=breakpoints < MAX_BREAKPOINTS)
    return body


def body_bytes(body: Mapping[str, Any]) -> bytes:
    """A JSON body as it goes on the wire (as httpx's `json=` encodes it: compact, UTF-8, no NaN)."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
