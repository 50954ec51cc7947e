"""OpenAI-compatible Chat Completions (DeepSeek, OpenAI, vLLM, Ollama, llama.cpp): our messages out, SSE in.

The wire format only: credentials, the client and the call itself are the shared provider part
(`http_provider.py`).

Wire facts this adapter relies on:
- tool results travel as `role: "tool"` messages right after the assistant message that called them;
- streamed tool calls arrive as fragments keyed by `index`, their `arguments` split anywhere inside the JSON;
- usage comes in a last chunk with empty `choices` when `stream_options.include_usage` is set; DeepSeek adds
  `prompt_cache_hit_tokens`, OpenAI `prompt_tokens_details.cached_tokens`;
- a call's `id` is not always unique or present (local servers number every call `call_0`, or send none);
  any id may be sent back, so repeats and blanks are replaced by fresh ones (`with_distinct_call_ids`);
- thinking models stream `reasoning_content`, which must be sent back on assistant turns that made tool calls
  (DeepSeek thinking mode) and must not be sent otherwise (legacy `deepseek-reasoner` rejects it).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from itertools import chain
from typing import Any, ClassVar

import msgspec

from ..events import ModelEvent, ModelResponse, StopReason, TextDelta, ThinkingDelta
from ..memo import IdentityMemo, PrefixMemo
from ..messages import (
    ContentBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)
from ..tools.spec import ToolSpec
from .base import ModelRequest, decode_json_event
from .errors import ProviderError, ServerError, StreamInterrupted
from .http_provider import HttpProvider

ERROR_PREFIX = "Error: "
"""OpenAI's tool message has no error flag; the content says it instead."""


# ---- our messages → the wire ----


def to_openai_messages(system: str, messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Chat Completions messages for a system prompt and our history. Each message is converted once (messages
    never change, and the history is resent on every call); the wire dicts are shared, so do not mutate them."""
    out: list[dict[str, Any]] = []
    if system:
        out.append({"role": "system", "content": system})
    out.extend(chain.from_iterable(_converted_history.each(messages, _converted)))
    return out


def _converted(message: Message) -> tuple[dict[str, Any], ...]:
    return _converted_messages(message, _message_to_openai)


def _message_to_openai(message: Message) -> tuple[dict[str, Any], ...]:
    if message.role == "assistant":
        return (_assistant_to_openai(message),)
    return tuple(_user_to_openai(message))


_converted_messages: IdentityMemo[tuple[dict[str, Any], ...]] = IdentityMemo()
_converted_history: PrefixMemo[Message, tuple[dict[str, Any], ...]] = PrefixMemo()


def _assistant_to_openai(message: Message) -> dict[str, Any]:
    text = "".join(b.text for b in message.content if isinstance(b, TextBlock))
    calls = [
        {
            "id": b.id,
            "type": "function",
            "function": {"name": b.name, "arguments": json.dumps(dict(b.input), ensure_ascii=False)},
        }
        for b in message.tool_uses
    ]
    out: dict[str, Any] = {"role": "assistant", "content": text or (None if calls else "")}
    if calls:
        out["tool_calls"] = calls
        reasoning = "".join(b.thinking for b in message.content if isinstance(b, ThinkingBlock))
        if reasoning:
            out["reasoning_content"] = reasoning
    return out


def _user_to_openai(message: Message) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    texts: list[str] = []
    for block in message.content:
        if isinstance(block, ToolResultBlock):
            content = block.content
            if block.is_error and not content.startswith(ERROR_PREFIX):
                content = ERROR_PREFIX + content
            out.append({"role": "tool", "tool_call_id": block.tool_use_id, "content": content})
        elif isinstance(block, TextBlock):
            texts.append(block.text)
    if texts:
        out.append({"role": "user", "content": "\n\n".join(texts)})
    return out


def to_openai_tools(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """Function tools carrying the full JSON Schema of each input."""
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": dict(t.input_schema)},
        }
        for t in tools
    ]


# ---- the wire → our events ----

_STOP_REASONS: dict[str, StopReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
}


class _ToolCallParts(msgspec.Struct):
    id: str = ""
    name: str = ""
    arguments: list[str] = msgspec.field(default_factory=list)


class OpenAIStreamAssembler(msgspec.Struct):
    """Accumulates chunk after chunk; `finish()` builds the response. Pure: no I/O."""

    reasoning: list[str] = msgspec.field(default_factory=list)
    text: list[str] = msgspec.field(default_factory=list)
    calls: dict[int, _ToolCallParts] = msgspec.field(default_factory=dict)
    finish_reason: str | None = None
    usage: Usage = msgspec.field(default_factory=Usage)
    stopped: bool = False
    """`data: [DONE]` came: the stream is over."""

    def take(self, data: str) -> Iterator[ModelEvent]:
        """One event's data: `[DONE]` ends the stream, anything else is a JSON chunk (`feed`)."""
        if data.strip() == "[DONE]":
            self.stopped = True
            return iter(())
        return self.feed(decode_json_event(data, "openai"))

    def feed(self, chunk: dict[str, Any]) -> Iterator[ModelEvent]:
        """Take one decoded chunk; yield the deltas it carries."""
        if isinstance(chunk.get("error"), dict | str):
            detail = chunk["error"].get("message") if isinstance(chunk["error"], dict) else chunk["error"]
            raise ServerError(f"openai API error in stream: {detail}")
        if isinstance(chunk.get("usage"), dict):
            self.usage = parse_usage(chunk["usage"])
        choices = chunk.get("choices") or []
        if not choices:
            return
        choice = choices[0]
        delta = choice.get("delta") or {}
        if reasoning := delta.get("reasoning_content"):
            self.reasoning.append(reasoning)
            yield ThinkingDelta(reasoning)
        if content := delta.get("content"):
            self.text.append(content)
            yield TextDelta(content)
        for fragment in delta.get("tool_calls") or []:
            parts = self.calls.setdefault(int(fragment.get("index", 0)), _ToolCallParts())
            parts.id = fragment.get("id") or parts.id
            function = fragment.get("function") or {}
            parts.name = function.get("name") or parts.name
            if function.get("arguments"):
                parts.arguments.append(function["arguments"])
        if choice.get("finish_reason"):
            self.finish_reason = choice["finish_reason"]

    def finish(self) -> ModelResponse:
        """The complete response; raises StreamInterrupted when the stream never said it finished."""
        if self.finish_reason is None:
            raise StreamInterrupted("openai API stream ended before the response was complete")
        cut = self.finish_reason == "length"
        blocks: list[ContentBlock] = []
        if self.reasoning:
            blocks.append(ThinkingBlock("".join(self.reasoning)))
        if self.text:
            blocks.append(TextBlock("".join(self.text)))
        for index in sorted(self.calls):
            blocks.append(_tool_use(self.calls[index], cut))
        stop = _STOP_REASONS.get(self.finish_reason, "other")
        if stop == "end_turn" and self.calls:
            stop = "tool_use"  # some local servers say "stop" after tool calls
        return ModelResponse(Message("assistant", tuple(blocks)), stop, self.usage)


def _tool_use(parts: _ToolCallParts, cut: bool) -> ToolUseBlock:
    raw = "".join(parts.arguments).strip() or "{}"
    call_id = parts.id  # "" when the server sent none: `with_distinct_call_ids` gives it one
    try:
        value = json.loads(raw)
    except ValueError as exc:
        reason = "cut off by the output limit" if cut else f"invalid JSON ({exc})"
        return ToolUseBlock(call_id, parts.name, {}, input_error=f"arguments were {reason}")
    if not isinstance(value, dict):
        return ToolUseBlock(call_id, parts.name, {}, input_error="arguments must be a JSON object")
    return ToolUseBlock(call_id, parts.name, value)


def parse_usage(raw: dict[str, Any]) -> Usage:
    """Usage with cache hits split out (DeepSeek's and OpenAI's field names both understood)."""
    prompt = int(raw.get("prompt_tokens") or 0)
    details = raw.get("prompt_tokens_details") or {}
    cached = int(raw.get("prompt_cache_hit_tokens") or details.get("cached_tokens") or 0)
    return Usage(
        input_tokens=max(0, prompt - cached),
        output_tokens=int(raw.get("completion_tokens") or 0),
        cache_read_input_tokens=cached,
    )


# ---- the provider ----


class OpenAICompatProvider(HttpProvider):
    """Streams chat completions from any OpenAI-compatible server."""

    name: ClassVar[str] = "openai"
    path: ClassVar[str] = "/chat/completions"
    id_prefix: ClassVar[str] = "call_"

    def build_body(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body of the request."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": to_openai_messages(request.system, request.messages),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if request.tools:
            body["tools"] = to_openai_tools(request.tools)
        max_tokens = request.max_tokens or self.max_tokens
        if max_tokens:
            body["max_tokens"] = max_tokens
        return body

    def headers(self) -> dict[str, str]:
        """The key as a bearer token."""
        return {"authorization": f"Bearer {self.auth_token or self.api_key}", "accept": "text/event-stream"}

    def new_stream(self) -> OpenAIStreamAssembler:
        return OpenAIStreamAssembler()


__all__ = ["OpenAICompatProvider", "ProviderError", "to_openai_messages", "to_openai_tools"]
