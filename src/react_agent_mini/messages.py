"""The one internal message format: Anthropic-shaped content blocks.

Every part of the agent (loop, session, compaction, transcript) speaks these types; the provider adapters
translate them to and from their wire formats at the edge. Blocks and messages are frozen `msgspec.Struct`s
(cheap to define and to create), so a pipeline stage that changes nothing can hand back the very same objects
(identity is meaningful).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, TypeAlias

import msgspec

from .result_details import ToolDetails, from_record, loaded_text, recorded_text, to_record
from .shell_result import Omission


class TextBlock(msgspec.Struct, frozen=True):
    """Plain text written by the user or the model."""

    text: str
    """The text itself."""
    type: Literal["text"] = "text"


class ToolUseBlock(msgspec.Struct, frozen=True):
    """A tool call requested by the model."""

    id: str
    """Provider-assigned call id; the matching tool_result carries it as `tool_use_id`."""
    name: str
    """Tool name as the model sent it (may name an unknown tool)."""
    input: Mapping[str, Any]
    """Parsed JSON arguments (an empty mapping when the model sent invalid JSON)."""
    type: Literal["tool_use"] = "tool_use"
    input_error: str = ""
    """Set by a provider adapter when the arguments were not a JSON object; the loop then answers with this
    error instead of running the tool. Not part of the wire format."""
    provider_data: str = ""
    """JSON the provider attached to the call that must go back with it (Gemini's `extra_content`, which holds its
    thought signature); empty for none. Kept in transcripts, never shown."""


class ImageData(msgspec.Struct, frozen=True):
    """An image a tool returned (e.g. an MCP server's screenshot), base64-encoded."""

    media_type: str
    """`image/png`, `image/jpeg`, `image/gif` or `image/webp`."""
    data: str
    """The image, base64."""


class ImageBlock(msgspec.Struct, frozen=True):
    """An image in a user message (`@image.png`, a pasted image path), base64-encoded: Anthropic's image block; the
    OpenAI-compatible wire sends it as an `image_url` data URL."""

    media_type: str
    """`image/png`, `image/jpeg`, `image/gif` or `image/webp`."""
    data: str
    """The image, base64."""
    type: Literal["image"] = "image"


class ToolResultBlock(msgspec.Struct, frozen=True, weakref=True):
    """The answer to one tool_use, sent back to the model in a user message. (Weak-referenceable: what compaction
    computes from a result is remembered only as long as the result lives.)"""

    tool_use_id: str
    """The `id` of the tool_use this answers."""
    content: str
    """What the model reads: output, or an error it can act on. For each image it names it in a placeholder line,
    which is all a provider without images in tool results (the OpenAI-compatible ones) gets."""
    is_error: bool = False
    """True when the call failed, was denied, skipped or invalid."""
    type: Literal["tool_result"] = "tool_result"
    images: tuple[ImageData, ...] = ()
    """Images sent after the text where the provider takes them (Anthropic); compaction drops them with the text."""
    details: ToolDetails | None = None
    """The result as data (`result_details`: a Bash command's, which `content` renders; a Read's, a Grep's, a
    Glob's), kept in the transcript, never sent to a model. None for other tools and for errors."""
    cut: Omission | None = None
    """Set on the copy compaction sends in place of a result it cut from the middle: where its line is in `content`
    and what it stands for, so cutting that copy again counts it without reading the text. Never recorded or sent."""


class ThinkingBlock(msgspec.Struct, frozen=True):
    """Model reasoning kept intact so it can be sent back (Anthropic thinking, OpenAI-compatible reasoning_content)."""

    thinking: str
    """The reasoning text."""
    signature: str = ""
    """Anthropic's signature over the block; empty for OpenAI-compatible reasoning_content."""
    type: Literal["thinking"] = "thinking"
    provider_data: str = ""
    """How an OpenAI-compatible server sent this reasoning, where that decides how it goes back (`providers/
    dialects.py`): a JSON object; empty for `reasoning_content` and for Anthropic's thinking. Never shown."""


class RedactedThinkingBlock(msgspec.Struct, frozen=True):
    """Anthropic's encrypted reasoning; opaque, returned verbatim."""

    data: str
    """The opaque payload."""
    type: Literal["redacted_thinking"] = "redacted_thinking"


ContentBlock: TypeAlias = (
    TextBlock | ToolUseBlock | ToolResultBlock | ThinkingBlock | RedactedThinkingBlock | ImageBlock
)
Role: TypeAlias = Literal["user", "assistant"]


class Message(msgspec.Struct, frozen=True, weakref=True):
    """One conversation message: a role and its content blocks. (Weak-referenceable: what is computed from a
    message — its size, its wire form — is remembered only as long as the message lives.)"""

    role: Role
    """`user` (people, tool results, injected context) or `assistant` (the model)."""
    content: tuple[ContentBlock, ...]
    """Blocks in order; tool_result blocks come before any text in a user message."""
    meta: bool = False
    """True for messages the agent injected (context, skill bodies, notices) rather than the user typed."""
    id: str = ""
    """Stable id for transcripts (empty when not assigned)."""
    typed: str = ""
    """What the user typed when the text is what that expanded to (a custom command: `/review src/app.py`), for
    what lists the turns (`/rewind`); never sent to the model. Empty otherwise."""

    @property
    def tool_uses(self) -> list[ToolUseBlock]:
        """The tool_use blocks of this message, in order."""
        return [b for b in self.content if isinstance(b, ToolUseBlock)]

    @property
    def tool_results(self) -> list[ToolResultBlock]:
        """The tool_result blocks of this message, in order."""
        return [b for b in self.content if isinstance(b, ToolResultBlock)]

    @property
    def text(self) -> str:
        """All text blocks joined (no separator), as a reader would see them."""
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))

    @property
    def is_user_text(self) -> bool:
        """True for a user message made only of text (and images): a safe place to cut history."""
        return (
            self.role == "user"
            and bool(self.content)
            and any(isinstance(b, TextBlock) for b in self.content)
            and all(isinstance(b, (TextBlock, ImageBlock)) for b in self.content)
        )


def user_text(text: str, *, meta: bool = False, id: str = "", typed: str = "") -> Message:
    """A user message holding one text block."""
    return Message("user", (TextBlock(text),), meta=meta, id=id, typed=typed)


def assistant_text(text: str, *, id: str = "") -> Message:
    """An assistant message holding one text block."""
    return Message("assistant", (TextBlock(text),), id=id)


def tool_results_message(results: Iterable[ToolResultBlock], after: Sequence[ContentBlock] = ()) -> Message:
    """One user message answering a batch of tool calls; `after` (e.g. a skill body) follows the results."""
    return Message("user", (*results, *after))


class Usage(msgspec.Struct, frozen=True):
    """Token usage of one model call, normalised across providers (Anthropic semantics)."""

    input_tokens: int = 0
    """Input tokens billed at the plain rate (excludes cache reads and writes)."""
    output_tokens: int = 0
    """Generated tokens."""
    cache_read_input_tokens: int = 0
    """Input tokens served from the provider's prompt cache."""
    cache_creation_input_tokens: int = 0
    """Input tokens written to the prompt cache (Anthropic)."""
    cost_usd: float | None = None
    """What the provider said the call cost, in US dollars (OpenRouter's `usage.cost`); None when it did not."""

    @property
    def total_input_tokens(self) -> int:
        """Everything the model read on this call: the context size it saw."""
        return self.input_tokens + self.cache_read_input_tokens + self.cache_creation_input_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_input_tokens + other.cache_read_input_tokens,
            self.cache_creation_input_tokens + other.cache_creation_input_tokens,
            None if self.cost_usd is None and other.cost_usd is None else (self.cost_usd or 0) + (other.cost_usd or 0),
        )

    def to_dict(self) -> dict[str, int]:
        """Claude Code's usage field names."""
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
        }


# ---- (de)serialisation: the Anthropic-shaped JSON used by transcripts and --output-format json ----


def block_to_dict(block: ContentBlock, *, details: bool = False) -> dict[str, Any]:
    """A block as Anthropic-shaped JSON (`is_error` only when true, as the API writes it); `details`: with a
    tool_result's data (for the transcript, never for a model)."""
    match block:
        case TextBlock(text=text):
            return {"type": "text", "text": text}
        case ToolUseBlock(id=id_, name=name, input=input_, provider_data=data):
            use = {"type": "tool_use", "id": id_, "name": name, "input": dict(input_)}
            return {**use, "provider_data": data} if data else use
        case ToolResultBlock(tool_use_id=tid, content=content, is_error=is_error, images=images):
            out: dict[str, Any] = {"type": "tool_result", "tool_use_id": tid, "content": content}
            if images:
                out["content"] = [{"type": "text", "text": content}, *(image_to_dict(i) for i in images)]
            if is_error:
                out["is_error"] = True
            if details and block.details is not None:
                out["details"] = to_record(block.details)
                if not images and recorded_text(content, block.details) is None:  # the data renders it: not twice
                    del out["content"]
            return out
        case ThinkingBlock(thinking=thinking, signature=signature, provider_data=data):
            thought = {"type": "thinking", "thinking": thinking, "signature": signature}
            return {**thought, "provider_data": data} if data else thought
        case RedactedThinkingBlock(data=data):
            return {"type": "redacted_thinking", "data": data}
        case ImageBlock(media_type=kind, data=data):
            return image_to_dict(ImageData(kind, data))


def block_from_dict(raw: Mapping[str, Any]) -> ContentBlock:
    """Inverse of `block_to_dict`; raises ValueError on an unknown block type."""
    kind = raw.get("type")
    if kind == "text":
        return TextBlock(str(raw["text"]))
    if kind == "tool_use":
        data = str(raw.get("provider_data", ""))
        return ToolUseBlock(str(raw["id"]), str(raw["name"]), dict(raw.get("input") or {}), provider_data=data)
    if kind == "tool_result":
        recorded = raw.get("details")
        found = from_record(recorded) if isinstance(recorded, Mapping) else None
        content = raw.get("content")
        if content is None:  # not recorded beside data that renders it (`result_details.recorded_text`)
            content = loaded_text(found)
        images: tuple[ImageData, ...] = ()
        if isinstance(content, list):  # text and image parts
            text = "\n".join(
                str(p.get("text", "")) for p in content if isinstance(p, Mapping) and p.get("type") == "text"
            )
            images = tuple(image_from_dict(p) for p in content if isinstance(p, Mapping) and p.get("type") == "image")
            content = text
        return ToolResultBlock(
            str(raw["tool_use_id"]), str(content), bool(raw.get("is_error")), images=images, details=found
        )
    if kind == "thinking":
        data = str(raw.get("provider_data", ""))
        return ThinkingBlock(str(raw.get("thinking", "")), str(raw.get("signature", "")), provider_data=data)
    if kind == "redacted_thinking":
        return RedactedThinkingBlock(str(raw["data"]))
    if kind == "image":
        image = image_from_dict(raw)
        return ImageBlock(image.media_type, image.data)
    raise ValueError(f"unknown content block type: {kind!r}")


def image_to_dict(image: ImageData) -> dict[str, Any]:
    """Anthropic's image block."""
    return {"type": "image", "source": {"type": "base64", "media_type": image.media_type, "data": image.data}}


def image_from_dict(raw: Mapping[str, Any]) -> ImageData:
    """Inverse of `image_to_dict`."""
    source = raw.get("source")
    if not isinstance(source, Mapping):
        raise ValueError("an image block without a source")
    return ImageData(str(source.get("media_type", "")), str(source.get("data", "")))


def message_to_dict(message: Message, *, details: bool = False) -> dict[str, Any]:
    """A message as `{"role", "content": [...]}` plus `meta`/`id`/`typed` when set (`details`: and the data of
    its tool results, for the transcript)."""
    out: dict[str, Any] = {
        "role": message.role,
        "content": [block_to_dict(b, details=details) for b in message.content],
    }
    if message.meta:
        out["meta"] = True
    if message.id:
        out["id"] = message.id
    if message.typed:
        out["typed"] = message.typed
    return out


def message_from_dict(raw: Mapping[str, Any]) -> Message:
    """Inverse of `message_to_dict`."""
    role = raw.get("role")
    if role not in ("user", "assistant"):
        raise ValueError(f"unknown message role: {role!r}")
    blocks = tuple(block_from_dict(b) for b in raw.get("content", ()))
    typed = str(raw.get("typed", ""))
    return Message(role, blocks, meta=bool(raw.get("meta")), id=str(raw.get("id", "")), typed=typed)


def unanswered_tool_uses(messages: Sequence[Message]) -> list[ToolUseBlock]:
    """Tool calls in `messages` that no tool_result answers (should always be empty between model calls)."""
    answered = {r.tool_use_id for m in messages for r in m.tool_results}
    return [u for m in messages for u in m.tool_uses if u.id not in answered]
