"""An OpenAI-compatible answer, chunk by chunk, into our events and one response.

What it reads, from every server ram has met:
- streamed chunks (`choices[0].delta`) and whole answers (`choices[0].message`: a server that ignored
  `"stream": true`, or a `data:` event carrying a whole `chat.completion`) through one path, so both give the same
  response;
- text as a string or as a list of parts, and reasoning in every dialect (`openai_parts.py`), `<think>` tags in the
  text included (`think_tags.py`); each reasoning block keeps how it came (`dialects.thinking_data`), which decides
  how it goes back;
- tool calls as fragments keyed by `index` (arguments split anywhere inside the JSON), or whole, with what a server
  attached to them (Gemini's `extra_content`);
- usage in the last chunk, or in Groq's `x_groq` (`openai_usage.py`);
- errors: an error object in the stream (OpenRouter's `data: {"error": …}`, Groq's `event: error`) or as the whole
  answer is classified like the HTTP error it stands for (`errors.error_in_stream`); one that comes after the
  answer said it finished does not undo the answer (OpenRouter sends "Token limit reached" after `finish_reason:
  "length"`, with the usage): the response stands, cut when it was cut.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import msgspec

from ..events import ModelEvent, ModelResponse, StopReason, TextDelta, ThinkingDelta
from ..messages import ContentBlock, Message, TextBlock, ThinkingBlock, ToolUseBlock, Usage
from ..trace import trace
from . import dialects
from .error_body import error_in
from .errors import MalformedStream, ProviderError, StreamInterrupted, error_in_stream
from .openai_parts import ReasoningDetails, content_pieces, reasoning_string, refusal
from .openai_usage import parse_usage, usage_in
from .think_tags import ThinkTagSplitter

PROVIDER = "openai"
STOP_REASONS: dict[str, StopReason] = {
    "stop": "end_turn",
    "end_turn": "end_turn",
    "stop_sequence": "end_turn",
    "eos": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "tool_use": "tool_use",
    "length": "max_tokens",
    "max_tokens": "max_tokens",
}
_CUT = ("length", "max_tokens")
NOTHING_BEFORE_LIMIT = (
    "the output token limit ended the answer before any of it was written; RAM_MAX_OUTPUT_TOKENS raises the limit"
)


class _ToolCallParts(msgspec.Struct):
    id: str = ""
    name: str = ""
    arguments: list[str] = msgspec.field(default_factory=list)
    extras: dict[str, Any] = msgspec.field(default_factory=dict)


class OpenAIStreamAssembler:
    """Accumulates chunk after chunk; `finish()` builds the response. Pure: no I/O.

    `open_at_start`: the server was seen starting its content inside the reasoning (a lone `</think>`), so this
    answer's content starts as reasoning until it says otherwise."""

    def __init__(self, *, open_at_start: bool = False) -> None:
        self.thinking: list[str] = []
        self.via = ""
        """The field the reasoning came in (`reasoning_content`, `reasoning`, `parts`, `tags`)."""
        self.details = ReasoningDetails()
        self.text: list[str] = []
        self.tags = ThinkTagSplitter(open_at_start=open_at_start)
        self.calls: dict[int, _ToolCallParts] = {}
        self.message_extras: dict[str, Any] = {}
        self.finish_reason: str | None = None
        self.usage = Usage()
        self.stopped = False
        """`data: [DONE]` came: the stream is over."""
        self.seen = ""
        """The server the answer named by a field only it sends (`dialects.seen`), once one did."""
        self.late_error = ""

    @property
    def lone_close(self) -> bool:
        """The content began inside the reasoning: it closed a `</think>` it never opened."""
        return self.tags.lone_close

    def take(self, data: str) -> Iterator[ModelEvent]:
        """One event's data: `[DONE]` ends the stream, anything else is a JSON chunk or a whole answer (`feed`)."""
        if data.strip() == "[DONE]":
            self.stopped = True
            return iter(())
        try:
            value = json.loads(data)
        except ValueError:
            raise MalformedStream(f"openai API sent a malformed stream event: {data[:80]!r}") from None
        if isinstance(value, list):  # Gemini answers errors as a list
            info = error_in(value)
            if info is None:
                raise MalformedStream(f"openai API sent a malformed stream event: {data[:80]!r}")
            value = {"error": {"message": info.message, "code": info.code, "type": info.kind}}
        if not isinstance(value, dict):
            raise MalformedStream(f"openai API sent a malformed stream event: {data[:80]!r}")
        return self.feed(value)

    def feed(self, chunk: dict[str, Any]) -> Iterator[ModelEvent]:
        """Take one decoded chunk (or whole answer); yield the deltas it carries."""
        if not self.seen:
            self.seen = dialects.seen(chunk)
        usage = usage_in(chunk)
        if usage is not None:
            self.usage = parse_usage(usage)
        if chunk.get("error"):  # some servers send `"error": null` in every chunk
            self._error(chunk)
            return
        choices = chunk.get("choices")
        if not isinstance(choices, list):
            self._not_a_chunk(chunk)
            return
        choice = choices[0] if choices and isinstance(choices[0], dict) else {}
        message = choice.get("message")
        if isinstance(message, dict) and not isinstance(choice.get("delta"), dict):
            yield from self._part(message, whole=True)
            yield from self._flush()
            self.finish_reason = choice.get("finish_reason") or ("tool_calls" if self.calls else "stop")
            return
        delta = choice.get("delta")
        if isinstance(delta, dict):
            yield from self._part(delta, whole=False)
        reason = choice.get("finish_reason")
        if isinstance(reason, str) and reason and reason != "error":
            self.finish_reason = reason
            yield from self._flush()

    def end(self) -> Iterator[ModelEvent]:
        """The stream ended: what the tag splitter still held, and an answer that only looked like reasoning."""
        yield from self._flush()
        if self.via == "tags" and self.tags.only_assumed:
            # Started inside the reasoning (`open_at_start`) but never closed it: it was the answer after all.
            moved = "".join(self.thinking)
            self.thinking, self.via = [], ""
            if moved:
                self.text.insert(0, moved)
                yield TextDelta(moved)

    def finish(self) -> ModelResponse:
        """The complete response; raises StreamInterrupted when the stream never said it finished."""
        if self.finish_reason is None:
            raise StreamInterrupted("openai API stream ended before the response was complete")
        if self.late_error:
            trace("api.late_error", error=self.late_error[:200], finish=self.finish_reason)
        cut = self.finish_reason in _CUT
        blocks: list[ContentBlock] = []
        details = self.details.entries()
        if self.thinking or details:
            via = self.via or ("reasoning" if details else dialects.VIA_REASONING_CONTENT)
            blocks.append(ThinkingBlock("".join(self.thinking), provider_data=dialects.thinking_data(via, details)))
        text = "".join(self.text)
        if text.strip() or (text and not self.calls):
            blocks.append(TextBlock(text))
        for position, index in enumerate(sorted(self.calls)):
            parts = self.calls[index]
            if position == 0 and self.message_extras and not parts.extras:
                parts.extras = {"extra_content": self.message_extras}  # an older Gemini put it on the message
            blocks.append(_tool_use(parts, cut))
        stop = STOP_REASONS.get(self.finish_reason, "other")
        if stop == "end_turn" and self.calls:
            stop = "tool_use"  # some local servers say "stop" after tool calls
        return ModelResponse(Message("assistant", tuple(blocks)), stop, self.usage)

    # ---- the parts of a delta or a message ----

    def _part(self, part: dict[str, Any], *, whole: bool) -> Iterator[ModelEvent]:
        reasoning, field = reasoning_string(part)
        shown_details = self.details.add(part.get("reasoning_details"))
        if (reasoning or shown_details) and not self.text and not self.thinking:
            self.tags.drop_assumption()  # the server parses reasoning out: the content starts outside it
        if reasoning:
            yield from self._think(reasoning, field)
        elif shown_details:
            yield from self._think(shown_details, "reasoning")
        for kind, piece in content_pieces(part.get("content")):
            if kind == "thinking":
                yield from self._think(piece, "parts")
            else:
                yield from self._said(piece)
        if said := refusal(part):
            self.text.append(said)
            yield TextDelta(said)
        extras = part.get("extra_content")
        if isinstance(extras, dict):
            self.message_extras = extras
        calls = part.get("tool_calls")
        for position, fragment in enumerate(calls if isinstance(calls, list) else ()):
            if isinstance(fragment, dict):
                self._call(fragment, position if whole else None)

    def _think(self, text: str, via: str) -> Iterator[ModelEvent]:
        self.thinking.append(text)
        self.via = self.via or via
        yield ThinkingDelta(text)

    def _said(self, text: str) -> Iterator[ModelEvent]:
        """Content text, its `<think>` sections split off (and the line breaks that follow one)."""
        was_lone = self.tags.lone_close
        for is_reasoning, piece in self.tags.feed(text):
            if self.tags.lone_close and not was_lone:
                was_lone = True
                self._reasoning_was_open()
            if is_reasoning:
                yield from self._think(piece, "tags")
                continue
            if self.tags.closed and not self.text:
                piece = piece.lstrip()
            if piece:
                self.text.append(piece)
                yield TextDelta(piece)
        if self.tags.lone_close and not was_lone:
            self._reasoning_was_open()

    def _reasoning_was_open(self) -> None:
        """A lone `</think>`: the content so far was reasoning. Its deltas went out as text; the response says it."""
        if self.text:
            self.thinking.insert(0, "".join(self.text))
            self.text = []
        self.via = self.via or "tags"

    def _flush(self) -> Iterator[ModelEvent]:
        for is_reasoning, piece in self.tags.flush():
            if is_reasoning:
                yield from self._think(piece, "tags")
            else:
                self.text.append(piece)
                yield TextDelta(piece)

    def _call(self, fragment: dict[str, Any], position: int | None) -> None:
        if position is None:
            index = fragment.get("index")
            if not isinstance(index, int):  # no index: a new call when it brings a new id, else the last one's piece
                last = max(self.calls, default=-1)
                new_id = fragment.get("id")
                index = last + 1 if last < 0 or (new_id and new_id != self.calls[last].id) else last
        else:
            index = position
        parts = self.calls.setdefault(int(index), _ToolCallParts())
        parts.id = fragment.get("id") or parts.id
        function = fragment.get("function") or {}
        parts.name = function.get("name") or parts.name
        arguments = function.get("arguments")
        if isinstance(arguments, str) and arguments:
            parts.arguments.append(arguments)
        elif isinstance(arguments, dict):  # some servers send the arguments as an object
            parts.arguments.append(json.dumps(arguments, ensure_ascii=False))
        extras = fragment.get("extra_content")
        if isinstance(extras, dict):
            parts.extras = {"extra_content": extras}

    # ---- what is not an answer ----

    def _error(self, chunk: dict[str, Any]) -> None:
        info = error_in(chunk)
        if info is None:
            return
        if self.finish_reason is not None:  # the answer said it finished: it stands (with this chunk's usage)
            if self.finish_reason in _CUT and not self.calls and not "".join(self.text).strip():
                error = ProviderError(f"openai API error in stream: {info.message} ({NOTHING_BEFORE_LIMIT})")
                error.usage = self.usage
                raise error
            self.late_error = info.message
            return
        error = error_in_stream(
            info.message,
            provider=PROVIDER,
            status=info.status,
            code=info.code,
            kind=info.kind,
            failed_generation=info.failed_generation,
        )
        error.usage = self.usage if usage_in(chunk) is not None else None
        raise error

    def _not_a_chunk(self, value: dict[str, Any]) -> None:
        """An object that is neither a chunk nor an answer: say what it is rather than wait for more."""
        if value.get("object") == "response" or isinstance(value.get("output"), list):
            raise MalformedStream(
                "openai API answered in the Responses API format, not Chat Completions: "
                "check OPENAI_BASE_URL (requests go to <base>/chat/completions)"
            )
        for key in ("message", "detail"):
            if isinstance(value.get(key), str) and value[key]:
                raise ProviderError(f"openai API answered: {value[key][:300]}")


def _tool_use(parts: _ToolCallParts, cut: bool) -> ToolUseBlock:
    raw = "".join(parts.arguments).strip() or "{}"
    call_id = parts.id  # "" when the server sent none: `with_distinct_call_ids` gives it one
    data = json.dumps(parts.extras, ensure_ascii=False, separators=(",", ":")) if parts.extras else ""
    try:
        value = json.loads(raw)
    except ValueError as exc:
        reason = "cut off by the output limit" if cut else f"invalid JSON ({exc})"
        return ToolUseBlock(call_id, parts.name, {}, input_error=f"arguments were {reason}", provider_data=data)
    if not isinstance(value, dict):
        return ToolUseBlock(call_id, parts.name, {}, input_error="arguments must be a JSON object", provider_data=data)
    return ToolUseBlock(call_id, parts.name, value, provider_data=data)
