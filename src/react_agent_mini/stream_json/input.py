"""What arrives on stdin in `--input-format stream-json`: lines read from a descriptor in a thread, and the text of
a user message's content (a string, or Anthropic content blocks)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping


def read_lines(fd: int, deliver: Callable[[bytes | None], None]) -> None:
    """Hand each line read from `fd` to `deliver`, then None at its end. Runs in a thread, with `os.read` rather
    than a buffered file, so that a thread still blocked in it at exit holds no lock the interpreter needs."""
    pending = bytearray()
    try:
        while chunk := os.read(fd, 1 << 16):
            start = len(pending)
            pending += chunk
            while (end := pending.find(b"\n", start)) >= 0:
                deliver(bytes(pending[:end]))
                del pending[: end + 1]
                start = 0
    except OSError:
        pass
    finally:
        if pending.strip():
            deliver(bytes(pending))
        deliver(None)


def user_content(content: object) -> str | None:
    """The text of a user message's `content` (a string, or Anthropic content blocks); None when it is neither.
    Images and documents cannot reach the model from here yet: each becomes a line saying what was attached."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    parts: list[str] = []
    for block in content:
        if not isinstance(block, Mapping):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif kind in ("image", "document"):
            source = block.get("source")
            media = source.get("media_type", "") if isinstance(source, Mapping) else ""
            what = ("an image" if kind == "image" else "a document") + (f" ({media})" if media else "")
            parts.append(f"[The user attached {what}; ram cannot pass it to the model, so it is not shown here.]")
    return "\n\n".join(parts)


def short(text: str, limit: int = 80) -> str:
    """`text` cut to `limit` characters (for a warning that quotes a line)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"
