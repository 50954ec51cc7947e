"""The seam between the loop and a model: what a request holds and what a provider must do.

A provider owns one wire format (messages out, stream in) and its credentials; it never decides what to do
with a response. Retries live in `retry.py`, wrapped around `ModelProvider.stream`.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from typing import Any, Protocol

import msgspec

from ..events import ModelEvent, ModelResponse
from ..memo import PrefixUnion
from ..messages import ContentBlock, Message, ToolUseBlock
from ..tools.spec import ToolSpec
from ..trace import trace
from .errors import MalformedStream


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


CallModel = Callable[[ModelRequest], AsyncIterator[ModelEvent]]
"""What the loop and the summariser call: a request in, the model's streamed events out (a provider's `stream`,
usually behind `retry.retrying`)."""


class ModelProvider(Protocol):
    """Streams one model call as events ending in exactly one ModelResponse, or raises ProviderError."""

    @property
    def name(self) -> str:
        """`openai`, `anthropic` or `mock`."""
        ...

    model: str
    """The model id requests are sent with (a driving program may switch it between turns)."""

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


def with_distinct_call_ids(response: ModelResponse, earlier: Sequence[Message], prefix: str) -> ModelResponse:
    """`response` with every tool call's id unique: across its own calls and the calls in `earlier` (and in the
    requests of its conversation before it).

    Servers do not always keep their promise (some OpenAI-compatible ones number every call `call_0`, send `""`
    or no id at all; a proxy in front of Anthropic may do the same), and a result is matched to its call by id
    alone — on the wire, and in the history. A call whose id is empty or already taken gets a fresh one
    (`prefix` + 24 hex digits); the history then holds it, so the next request sends the same id with the call
    and with its result. A server's id is kept whenever it is unique."""
    uses = response.message.tool_uses
    if not uses:
        return response  # an answer without calls: nothing to look up in the history
    ids = [use.id for use in uses]
    known = _taken_ids(earlier)  # continued from the last call's: only what changed since costs work
    if all(ids) and len(set(ids)) == len(ids) and known.isdisjoint(ids):
        return response  # the usual case: nothing to rename
    taken = set(known)  # our own copy, for the renames below
    blocks: list[ContentBlock] = []
    for block in response.message.content:
        if isinstance(block, ToolUseBlock):
            if not block.id or block.id in taken:
                fresh = prefix + os.urandom(12).hex()
                trace("api.tool_id", was=block.id or "(none)", now=fresh)
                block = msgspec.structs.replace(block, id=fresh)
            taken.add(block.id)
        blocks.append(block)
    message = msgspec.structs.replace(response.message, content=tuple(blocks))
    return msgspec.structs.replace(response, message=message)


def _call_ids(message: Message) -> list[str]:
    return [use.id for use in message.tool_uses] if message.role == "assistant" else []


_taken_ids: PrefixUnion[Message, str] = PrefixUnion(_call_ids)
"""The call ids of the request and of the earlier requests of its conversation: an id a turn since dropped from
the request used is still in the history, so it is taken too."""


def trace_response(response: ModelResponse) -> None:
    """The `api.assistant` trace line for a finished response."""
    uses = response.message.tool_uses
    if uses:
        trace("api.assistant", kind="tool_use", tool_uses=len(uses), stop=response.stop_reason)
    else:
        trace("api.assistant", kind="text", text_len=len(response.message.text), stop=response.stop_reason)
