"""The seam between the loop and a model: what a request holds and what a provider must do.

A provider owns one wire format (messages out, stream in) and its credentials; it never decides what to do
with a response. Retries live in `retry.py`, wrapped around `ModelProvider.stream`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import Any, Protocol

import msgspec

from ..events import ModelEvent, ModelResponse
from ..messages import Message
from ..trace import trace
from .errors import MalformedStream


class ToolSpec(msgspec.Struct, frozen=True):
    """A tool as the model sees it."""

    name: str
    description: str
    input_schema: Mapping[str, Any]
    """Full JSON Schema of the input object."""


class ModelRequest(msgspec.Struct, frozen=True):
    """One model call."""

    system: str
    """System prompt ("" for none)."""
    messages: Sequence[Message]
    """The outbound copy of the history (after compaction)."""
    tools: Sequence[ToolSpec] = msgspec.field(default_factory=tuple)
    """Tools the model may call (empty for side calls such as summaries)."""
    max_tokens: int | None = None
    """Output limit for this call; None = the provider's configured default."""


class ModelProvider(Protocol):
    """Streams one model call as events ending in exactly one ModelResponse, or raises ProviderError."""

    @property
    def name(self) -> str:
        """`openai`, `anthropic` or `mock`."""
        ...

    @property
    def model(self) -> str:
        """The model id requests are sent with."""
        ...

    def stream(self, request: ModelRequest) -> AsyncGenerator[ModelEvent, None]:
        """Start the call; iterate to receive it."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...


def decode_json_event(data: str, provider: str) -> dict[str, Any]:
    """The JSON object in an SSE `data` field, or MalformedStream."""
    try:
        value = json.loads(data)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise MalformedStream(f"{provider} API sent a malformed stream event: {data[:80]!r}")
    return value


def trace_response(response: ModelResponse) -> None:
    """The `api.assistant` trace line for a finished response."""
    uses = response.message.tool_uses
    if uses:
        trace("api.assistant", kind="tool_use", tool_uses=len(uses), stop=response.stop_reason)
    else:
        trace("api.assistant", kind="text", text_len=len(response.message.text), stop=response.stop_reason)
