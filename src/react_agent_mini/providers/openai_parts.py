"""What an OpenAI-compatible message or delta says, in each server's words: its text and its reasoning.

`content` is a string for most servers and a list of typed parts for some: Mistral's Magistral streams
`[{"type": "thinking", "thinking": [{"type": "text", "text": "…"}]}, {"type": "text", "text": "…"}]` (in the whole
message and in each chunk's `delta.content`), and parts may be `refusal`, `image_url` or a `reference`. Reasoning
comes as `reasoning_content` (DeepSeek, Z.ai, vLLM before 0.10), `reasoning` (Groq, Cerebras, OpenRouter, Ollama,
vLLM), OpenRouter's `reasoning_details` (typed entries, `reasoning.text` / `reasoning.summary` /
`reasoning.encrypted`, streamed as pieces of one entry per `index`), or inside the text as `<think>` tags (read by
`think_tags.py`). Pure functions and one accumulator; no I/O.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

REASONING_FIELDS = ("reasoning_content", "reasoning")
"""The fields a reasoning string comes in, in the order they are believed when a server sends both."""


def content_pieces(content: Any) -> Iterator[tuple[str, str]]:
    """`("text" | "thinking", text)` for each piece of `content`: a string, one part, or a list of parts."""
    if isinstance(content, str):
        if content:
            yield "text", content
        return
    parts = [content] if isinstance(content, dict) else content if isinstance(content, list) else []
    for part in parts:
        if isinstance(part, str):
            if part:
                yield "text", part
            continue
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "thinking":
            if text := _joined_text(part.get("thinking")):
                yield "thinking", text
        elif kind == "refusal":
            if isinstance(part.get("refusal"), str) and part["refusal"]:
                yield "text", part["refusal"]
        elif kind in ("image_url", "image", "output_image"):
            yield "text", _image_line(part)
        elif isinstance(part.get("text"), str) and part["text"]:  # text, output_text, and kinds yet unknown
            yield "text", part["text"]


def _joined_text(value: Any) -> str:
    """Mistral's thinking: a list of text chunks (or, to be lenient, one string)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(
            str(chunk.get("text") or "") if isinstance(chunk, dict) else chunk if isinstance(chunk, str) else ""
            for chunk in value
        )
    return ""


def _image_line(part: dict[str, Any]) -> str:
    url = part.get("image_url")
    url = url.get("url") if isinstance(url, dict) else url
    if isinstance(url, str) and url and not url.startswith("data:"):
        return f"[image: {url}]"
    return "[image]"


def reasoning_string(part: dict[str, Any]) -> tuple[str, str]:
    """`(text, field)`: the reasoning string a message or delta carries and the field it came in; ("", "") for
    none. When both fields come (some gateways copy one into the other), the first of `REASONING_FIELDS` wins."""
    for field in REASONING_FIELDS:
        value = part.get(field)
        if isinstance(value, str) and value:
            return value, field
    return "", ""


def refusal(part: dict[str, Any]) -> str:
    """OpenAI's `refusal` field (a string when the model declined), shown as the answer."""
    value = part.get("refusal")
    return value if isinstance(value, str) else ""


class ReasoningDetails:
    """OpenRouter's `reasoning_details`, put together from the pieces a stream brings: entries of one `index` and
    `type` are one entry (their `text`, `summary` and `data` joined, their last `signature` kept), in the order
    they first came; everything else in an entry is kept as it came."""

    def __init__(self) -> None:
        self._entries: dict[tuple[Any, Any], dict[str, Any]] = {}

    def add(self, items: Any) -> str:
        """Take a list of entries; the reasoning text they carry (for showing: text and summaries, not data)."""
        shown: list[str] = []
        for position, item in enumerate(items if isinstance(items, list) else ()):
            if not isinstance(item, dict):
                continue
            key = (item.get("index", position), item.get("type"))
            entry = self._entries.get(key)
            if entry is None:
                self._entries[key] = entry = dict(item)
            else:
                for name, value in item.items():
                    if name in ("text", "summary", "data") and isinstance(value, str):
                        entry[name] = str(entry.get(name) or "") + value
                    elif (name == "signature" and value) or entry.get(name) is None:
                        entry[name] = value  # a signature comes last, whole; other members once
            for name in ("text", "summary"):
                if isinstance(item.get(name), str):
                    shown.append(item[name])
        return "".join(shown)

    def entries(self) -> list[dict[str, Any]]:
        """Every entry, whole, in order ([] when none came)."""
        return list(self._entries.values())
