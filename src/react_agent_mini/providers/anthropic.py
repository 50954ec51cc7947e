"""Anthropic Messages API: our messages out (they are already Anthropic-shaped), the event stream in.

Wire facts this adapter relies on:
- a stream is `message_start`, `ping`s, per block `content_block_start` / `_delta` / `_stop`, `message_delta`
  (stop_reason, output tokens) and `message_stop`; an `error` event can arrive at any point;
- tool input arrives as `input_json_delta.partial_json` fragments, parsed when the block stops;
- thinking blocks (with their signature) and redacted_thinking blocks must be sent back unchanged; reasoning another
  provider wrote (no signature, or an OpenAI-compatible server's `provider_data`) is never sent;
- a gateway or proxy may answer the streamed request with the whole message object (`"type": "message"`) or an
  error object as JSON: it is read as the complete answer it is, or as the error;
- prompt caching: up to 4 `cache_control` breakpoints. We mark the system prompt, the last tool, and the last
  block of the newest message (the moving tail), so each call reads the previous call's prefix from cache. When
  compaction (profile v2) says which prefixes stay put until its next cut (`cache_points` on the outbound list),
  the newest of them is marked too — then the tools' own mark goes when there are two — so a cut reads that
  prefix and writes only what follows it.

The wire format only: credentials, the client and the call itself are the shared provider part
(`http_provider.py`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

import msgspec

from ..events import ModelEvent, ModelResponse, StopReason, TextDelta, ThinkingDelta
from ..memo import IdentityMemo, PrefixMemo
from ..messages import (
    ContentBlock,
    Message,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    Usage,
    block_to_dict,
)
from .base import ModelRequest, decode_json_event
from .error_body import error_in
from .errors import STREAM_STATUS, MalformedStream, ProviderError, StreamInterrupted, error_in_stream
from .http_provider import HttpProvider
from .wire_layout import (
    ANTHROPIC_PATH,
    EPHEMERAL,
    anthropic_body,
    anthropic_headers,
    anthropic_tools,
)

# ---- our messages → the wire ----


def _sendable(block: ContentBlock) -> bool:
    if isinstance(block, TextBlock):
        return bool(block.text)  # the API rejects empty text blocks
    if isinstance(block, ThinkingBlock):
        return bool(block.signature) and not block.provider_data  # otherwise another provider wrote it
    return True


def _block_to_wire(block: ContentBlock) -> dict[str, Any]:
    wire = block_to_dict(block)
    wire.pop("provider_data", None)  # ours (what an OpenAI-compatible server attached), not the API's
    return wire


def to_anthropic_messages(
    messages: Sequence[Message], *, cache_tail: bool = True, max_points: int = 2
) -> list[dict[str, Any]]:
    """Wire messages; the newest cacheable block gets a cache breakpoint when `cache_tail`, and so does the
    last block of each of the newest `max_points` messages compaction named in `cache_points`. Each message is
    converted once (messages never change, and the history is resent on every call); the wire dicts are
    shared, so a breakpoint goes on a copy."""
    return _wire_messages(messages, cache_tail, max_points)[0]


def _wire_messages(messages: Sequence[Message], cache_tail: bool, max_points: int) -> tuple[list[dict[str, Any]], int]:
    """`to_anthropic_messages`, and how many breakpoints it placed."""
    # An empty message (the model said nothing) cannot be sent: it converts to None, which is left out.
    converted = _converted_history.each(messages, _converted)
    out: list[dict[str, Any]] = list(filter(None, converted))
    if not cache_tail or not out:
        return out, 0
    marks = {len(out) - 1}
    points: tuple[int, ...] = getattr(messages, "cache_points", ())
    for point in points[-max_points:] if max_points > 0 else ():
        if 0 <= point < len(messages) - 1:
            head = converted[: point + 1]
            marks.add(len(head) - head.count(None) - 1)  # its place on the wire (C-speed counting)
    placed = 0
    for index in marks:
        if index >= 0:
            out[index], marked = _with_breakpoint(out[index])
            placed += marked
    return out, placed


def _with_breakpoint(message: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """`message` with a breakpoint on its last block that is not reasoning (unchanged when it has none)."""
    blocks = list(message["content"])
    for index in reversed(range(len(blocks))):
        if blocks[index]["type"] not in ("thinking", "redacted_thinking"):
            blocks[index] = {**blocks[index], "cache_control": EPHEMERAL}
            return {**message, "content": blocks}, True
    return message, False


def _converted(message: Message) -> dict[str, Any] | None:
    return _converted_messages(message, _message_to_anthropic)


def _message_to_anthropic(message: Message) -> dict[str, Any] | None:
    blocks = [_block_to_wire(b) for b in message.content if _sendable(b)]
    return {"role": message.role, "content": blocks} if blocks else None


_converted_messages: IdentityMemo[dict[str, Any] | None] = IdentityMemo()
_converted_history: PrefixMemo[Message, dict[str, Any] | None] = PrefixMemo()


to_anthropic_tools = anthropic_tools


# ---- the wire → our events ----

_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "stop_sequence": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "model_context_window_exceeded": "max_tokens",  # cut where the window ended: a cut answer too
}
_BLOCK_KINDS = frozenset({"text", "thinking", "redacted_thinking", "tool_use"})
"""The blocks we keep; a server tool's blocks (`server_tool_use`, `web_search_tool_result`, …) are not ours."""


class _OpenBlock(msgspec.Struct):
    kind: str
    text: list[str] = msgspec.field(default_factory=list)
    signature: str = ""
    id: str = ""
    name: str = ""
    data: str = ""


class AnthropicStreamAssembler(msgspec.Struct):
    """Accumulates stream events; `finish()` builds the response. Pure: no I/O."""

    open: dict[int, _OpenBlock] = msgspec.field(default_factory=dict)
    done: dict[int, ContentBlock | None] = msgspec.field(default_factory=dict)
    usage: Usage = msgspec.field(default_factory=Usage)
    stop_reason: str | None = None
    stopped: bool = False
    """`message_stop` came: the stream is over."""

    def take(self, data: str) -> Iterator[ModelEvent]:
        """One event's data, a JSON object (`feed`)."""
        return self.feed(decode_json_event(data, "anthropic"))

    def end(self) -> Iterator[ModelEvent]:
        """Nothing is held back between events."""
        return iter(())

    def feed(self, event: dict[str, Any]) -> Iterator[ModelEvent]:
        """Take one decoded event (or a whole message object); yield the deltas it carries."""
        kind = event.get("type")
        if kind == "message" or (kind is None and isinstance(event.get("content"), list) and "role" in event):
            yield from self._whole(event)
        elif kind is None and "error" in event:
            raise _stream_error(event.get("error"))
        elif kind == "message_start":
            self.usage = _merge_usage(self.usage, event.get("message", {}).get("usage") or {})
        elif kind == "content_block_start":
            self._start(int(event["index"]), event.get("content_block") or {})
        elif kind == "content_block_delta":
            yield from self._delta(int(event["index"]), event.get("delta") or {})
        elif kind == "content_block_stop":
            index = int(event["index"])
            if index in self.open:
                self.done[index] = _close(self.open.pop(index), self.stop_reason)
        elif kind == "message_delta":
            self.stop_reason = (event.get("delta") or {}).get("stop_reason") or self.stop_reason
            self.usage = _merge_usage(self.usage, event.get("usage") or {})
        elif kind == "message_stop":
            self.stopped = True
        elif kind == "error":
            raise _stream_error(event.get("error") or {})
        # `ping` and unknown future events are ignored, as the API asks.

    def _whole(self, message: dict[str, Any]) -> Iterator[ModelEvent]:
        """A whole message object: its blocks as the stream would have brought them, and the stream over."""
        self.usage = _merge_usage(self.usage, message.get("usage") or {})
        self.stop_reason = message.get("stop_reason") or "end_turn"
        base = len(self.done) + len(self.open)
        for offset, block in enumerate(message.get("content") or ()):
            if not isinstance(block, dict):
                continue
            index = base + offset
            self._start(index, {**block, "text": "", "thinking": ""})
            opened = self.open[index]
            if block.get("type") == "text" and block.get("text"):
                yield from self._delta(index, {"type": "text_delta", "text": str(block["text"])})
            elif block.get("type") == "thinking":
                yield from self._delta(index, {"type": "thinking_delta", "thinking": str(block.get("thinking", ""))})
                opened.signature = str(block.get("signature") or "")
            elif block.get("type") == "tool_use":
                opened.text.append(json.dumps(block.get("input") or {}, ensure_ascii=False))
            self.done[index] = _close(self.open.pop(index), self.stop_reason)
        self.stopped = True

    def _start(self, index: int, block: dict[str, Any]) -> None:
        kind = str(block.get("type"))
        opened = _OpenBlock(kind, id=str(block.get("id", "")), name=str(block.get("name", "")))
        if kind == "text" and block.get("text"):
            opened.text.append(block["text"])
        elif kind == "thinking" and block.get("thinking"):
            opened.text.append(block["thinking"])
        elif kind == "redacted_thinking":
            opened.data = str(block.get("data", ""))
        self.open[index] = opened

    def _delta(self, index: int, delta: dict[str, Any]) -> Iterator[ModelEvent]:
        block = self.open.get(index)
        if block is None:
            raise MalformedStream(f"anthropic API sent a delta for unknown block {index}")
        kind = delta.get("type")
        if kind == "text_delta":
            block.text.append(delta.get("text", ""))
            yield TextDelta(delta.get("text", ""))
        elif kind == "thinking_delta":
            block.text.append(delta.get("thinking", ""))
            yield ThinkingDelta(delta.get("thinking", ""))
        elif kind == "signature_delta":
            block.signature += delta.get("signature", "")
        elif kind == "input_json_delta":
            block.text.append(delta.get("partial_json", ""))

    def finish(self) -> ModelResponse:
        """The complete response; raises StreamInterrupted if `message_stop` never came."""
        if not self.stopped:
            raise StreamInterrupted("anthropic API stream ended before the response was complete")
        for index, block in list(self.open.items()):  # blocks cut without a stop event
            self.done[index] = _close(block, self.stop_reason)
        content = tuple(block for _, block in sorted(self.done.items()) if block is not None)
        stop = _STOP_REASONS.get(self.stop_reason or "", "other")
        return ModelResponse(Message("assistant", content), stop, self.usage)


def _close(block: _OpenBlock, stop_reason: str | None) -> ContentBlock | None:
    if block.kind not in _BLOCK_KINDS:
        return None
    text = "".join(block.text)
    if block.kind == "tool_use":
        return _tool_use(block, text, cut=stop_reason == "max_tokens")
    if block.kind == "thinking":
        return ThinkingBlock(text, block.signature)
    if block.kind == "redacted_thinking":
        return RedactedThinkingBlock(block.data)
    return TextBlock(text)


def _tool_use(block: _OpenBlock, raw: str, *, cut: bool) -> ToolUseBlock:
    try:
        value = json.loads(raw or "{}")
    except ValueError as exc:
        reason = "cut off by the output limit" if cut else f"invalid JSON ({exc})"
        return ToolUseBlock(block.id, block.name, {}, input_error=f"arguments were {reason}")
    if not isinstance(value, dict):
        return ToolUseBlock(block.id, block.name, {}, input_error="arguments must be a JSON object")
    return ToolUseBlock(block.id, block.name, value)


def _merge_usage(usage: Usage, raw: dict[str, Any]) -> Usage:
    """`message_start` carries input counts, `message_delta` the (cumulative) output count."""
    changes: dict[str, int] = {}
    for key in ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"):
        if raw.get(key) is not None:
            changes[key] = int(raw[key])
    return msgspec.structs.replace(usage, **changes)


def _stream_error(error: Any) -> ProviderError:
    """An `error` event (or an error object answering the request): classified by its type, as the HTTP status
    that type stands for would be; a type the API does not document fails the call as it is."""
    info = error_in({"error": error}) if error else None
    kind = info.kind if info is not None else "error"
    detail = f"{kind}: {info.message}" if info is not None else "error"
    if kind not in STREAM_STATUS:
        return ProviderError(f"anthropic API error in stream: {detail}")
    return error_in_stream(detail, provider="anthropic", code=kind)


# ---- the provider ----


class AnthropicProvider(HttpProvider):
    """Streams responses from the Anthropic Messages API (or a compatible proxy)."""

    name: ClassVar[str] = "anthropic"
    path: ClassVar[str] = ANTHROPIC_PATH
    id_prefix: ClassVar[str] = "toolu_"

    def build_body(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body of the request."""
        messages, used = _wire_messages(request.messages, True, 2)
        max_tokens = request.max_tokens or self.max_tokens
        return anthropic_body(self.model, max_tokens, messages, request.system, request.tools, breakpoints=used)

    def headers(self) -> dict[str, str]:
        """Auth and version headers: the key as `x-api-key`, or a bearer token when one is set."""
        return anthropic_headers(self.api_key, self.auth_token)

    def new_stream(self) -> AnthropicStreamAssembler:
        return AnthropicStreamAssembler()
