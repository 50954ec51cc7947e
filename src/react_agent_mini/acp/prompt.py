"""A `session/prompt`'s content blocks as what our session takes: the text the user typed, and context messages to
put before it.

- Text stays as it is.
- A resource link becomes a reference in the text, as the REPL's `@path` does. A file inside the workspace is
  written `@src/app.py`; any other location is written as its path or URI. The model can then read it with Read,
  and the permission rules apply as for any Read (outside the workspace it is asked for).
- An embedded resource (an editor's `@`-mention with its contents) also becomes `@src/app.py` in the text, and its
  text goes into one context message before the prompt, as `<context ref="…">…</context>`. It arrives as the
  editor has it, unsaved edits included. A binary one is named there but not included.
- Images and audio cannot be carried by our messages (their blocks are text, tool calls and tool results). The
  model is told that one was attached and not included, and the user gets a line saying so (`notes`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TypeAlias
from urllib.parse import unquote, urlparse

import msgspec
from acp.schema import (
    AudioContentBlock,
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
)

from ..messages import Message, user_text
from ..tools.paths import display, inside

PromptBlock: TypeAlias = (
    TextContentBlock | ImageContentBlock | AudioContentBlock | ResourceContentBlock | EmbeddedResourceContentBlock
)
NOT_CARRIED = (
    "ram cannot pass images or audio to the model yet, so {what} was not sent; the model was told it is missing."
)


class Prompt(msgspec.Struct):
    """A prompt as our session takes it."""

    text: str
    """What the user typed, with resources referred to by path."""
    context: list[Message]
    """Meta messages to put before the text (attached contents, notes on what could not be attached)."""
    notes: list[str]
    """Lines for the user about what could not reach the model."""


def convert(blocks: Sequence[PromptBlock], root: Path) -> Prompt:
    """`blocks` (in order) as text, context and notes."""
    parts: list[str] = []
    attached: list[str] = []
    notes: list[str] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, ResourceContentBlock):
            parts.append(reference(block.uri, root))
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            parts.append(reference(resource.uri, root))
            if isinstance(resource, BlobResourceContents):
                size = len(resource.blob) * 3 // 4
                attached.append(
                    f'<context ref="{resource.uri}">[binary data, {resource.mime_type or "unknown type"}, about '
                    f"{size:,} bytes: not included]</context>"
                )
            else:
                attached.append(f'<context ref="{resource.uri}">\n{resource.text}\n</context>')
        else:
            what = "an image" if isinstance(block, ImageContentBlock) else "an audio clip"
            size = len(block.data) * 3 // 4
            attached.append(
                f"[The user attached {what} ({block.mime_type}, about {size:,} bytes), which could not be passed to "
                "you: ram does not send images or audio in messages.]"
            )
            notes.append(NOT_CARRIED.format(what=what))
    context = [user_text("\n\n".join(attached), meta=True)] if attached else []
    return Prompt("".join(parts), context, notes)


def reference(uri: str, root: Path) -> str:
    """How the text refers to the resource at `uri`: `@path` inside the workspace, else its path or URI."""
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        path = Path(unquote(parsed.path)).resolve(strict=False)
        return f"@{display(root, path)}" if inside(root, path) else str(path)
    if not parsed.scheme and uri.startswith("/"):
        return reference(Path(uri).as_uri(), root)
    return uri
