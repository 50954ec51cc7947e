"""Our messages → Chat Completions messages, in the dialect of the server they go to (`dialects.py`).

Tool results travel as `role: "tool"` messages right after the assistant message that called them; the text of a
user message with results follows them as a `user` message. Reasoning goes back only in the form and the turns
the server asks for; what a server attached to a call or to its reasoning (`provider_data`) goes back as it came,
to the servers that take it. Each message is converted once per dialect (messages never change, and the history
is resent on every call); the wire dicts are shared, so do not mutate them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from itertools import chain
from typing import Any

from ..memo import IdentityMemo, PrefixMemo
from ..messages import ImageBlock, Message, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from .dialects import (
    GENERIC,
    VIA_REASONING_CONTENT,
    Dialect,
    call_extras,
    short_call_id,
    thinking_details,
    thinking_via,
)
from .wire_layout import openai_tools

ERROR_PREFIX = "Error: "
"""OpenAI's tool message has no error flag; the content says it instead."""

Wire = tuple[dict[str, Any], ...]


def to_openai_messages(
    system: str, messages: Sequence[Message], dialect: Dialect = GENERIC, *, images: bool = True
) -> list[dict[str, Any]]:
    """Chat Completions messages for a system prompt and our history, as `dialect` wants them; `images`: the model
    takes images (else they are left out, their text lines stay)."""
    out: list[dict[str, Any]] = []
    if system:
        out.append({"role": "system", "content": system})
    out.extend(chain.from_iterable(_converted_history.each(messages, _converter(dialect, images))))
    return _without_user_after_tool(out) if dialect.no_user_after_tool else out


@cache
def _converter(dialect: Dialect, images: bool) -> Any:
    """One conversion function per dialect (and images or not): the history memo keys its results by it."""

    def convert(message: Message) -> Wire:
        return _converted_messages(message, lambda m: _message_to_openai(m, dialect, images), key=(dialect, images))

    return convert


_converted_messages: IdentityMemo[Wire] = IdentityMemo()
_converted_history: PrefixMemo[Message, Wire] = PrefixMemo()


def _message_to_openai(message: Message, dialect: Dialect, images: bool = True) -> Wire:
    if message.role == "assistant":
        return (_assistant_to_openai(message, dialect),)
    return tuple(_user_to_openai(message, dialect, images))


def _call_id(call_id: str, dialect: Dialect) -> str:
    return short_call_id(call_id) if dialect.short_call_ids else call_id


def _assistant_to_openai(message: Message, dialect: Dialect) -> dict[str, Any]:
    text = "".join(b.text for b in message.content if isinstance(b, TextBlock))
    calls = [_call_to_openai(b, dialect) for b in message.tool_uses]
    out: dict[str, Any] = {"role": "assistant", "content": text or (None if calls else "")}
    if calls:
        out["tool_calls"] = calls
    thoughts = [b for b in message.content if isinstance(b, ThinkingBlock)]
    if dialect.reasoning_details:
        details = [entry for b in thoughts for entry in thinking_details(b.provider_data)]
        if details:
            out["reasoning_details"] = details
    if calls and dialect.reasoning_back != "never":
        # Only reasoning that came as `reasoning_content` goes back as it (never Groq's, Ollama's or tags' text).
        reasoning = "".join(b.thinking for b in thoughts if thinking_via(b.provider_data) == VIA_REASONING_CONTENT)
        if reasoning or dialect.reasoning_back == "every_tool_turn":
            out["reasoning_content"] = reasoning
    return out


def _call_to_openai(use: ToolUseBlock, dialect: Dialect) -> dict[str, Any]:
    call: dict[str, Any] = {
        "id": _call_id(use.id, dialect),
        "type": "function",
        "function": {"name": use.name, "arguments": json.dumps(dict(use.input), ensure_ascii=False)},
    }
    if dialect.call_extras and use.provider_data:
        call.update(call_extras(use.provider_data))
    return call


def _image_url(media_type: str, data: str) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": f"data:{media_type};base64,{data}"}}


def _user_to_openai(message: Message, dialect: Dialect, images: bool = True) -> list[dict[str, Any]]:
    """Tool results as `tool` messages (text only: their images follow in a user message, as a tool message
    takes no images), then the text and images as one user message."""
    out: list[dict[str, Any]] = []
    texts: list[str] = []
    parts: list[dict[str, Any]] = []
    result_images: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, ToolResultBlock):
            content = block.content
            if block.is_error and not content.startswith(ERROR_PREFIX):
                content = ERROR_PREFIX + content
            if block.images and not images:
                content += f"\n({len(block.images)} image(s) not sent: this model does not take images)"
            out.append({"role": "tool", "tool_call_id": _call_id(block.tool_use_id, dialect), "content": content})
            if images:
                result_images += [_image_url(i.media_type, i.data) for i in block.images]

        elif isinstance(block, TextBlock):
            texts.append(block.text)
            parts.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageBlock) and images:
            parts.append(_image_url(block.media_type, block.data))
    if result_images:
        note = {"type": "text", "text": "The images the tool results above name, in order:"}
        out.append({"role": "user", "content": [note, *result_images]})
    if len(parts) > len(texts):  # images: content parts
        out.append({"role": "user", "content": parts})
    elif texts:
        out.append({"role": "user", "content": "\n\n".join(texts)})
    return out


def _without_user_after_tool(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Mistral refuses a `user` message right after a `tool` one: its text joins the last tool result."""
    out: list[dict[str, Any]] = []
    for message in messages:
        before = out[-1] if out else None
        merge = isinstance(message["content"], str) and before is not None and isinstance(before["content"], str)
        if message["role"] == "user" and merge and before is not None and before["role"] == "tool":
            out[-1] = {**before, "content": f"{before['content']}\n\n{message['content']}"}
        else:
            out.append(message)
    return out


to_openai_tools = openai_tools
