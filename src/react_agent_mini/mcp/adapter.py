"""An MCP server's tool as one of our tools, and MCP content rendered as the text a tool_result carries.

Names are `mcp__<server>__<tool>` with every character outside `[A-Za-z0-9_-]` replaced by `_` and at most 64
characters (OpenAI's `^[A-Za-z0-9_-]{1,64}$`; Anthropic's is the same). Two tools that clean up to the same
name get `_2`, `_3`, ... in the order they are handed out (servers in config order, tools in listing order),
so the same configuration always yields the same names. The server's input schema goes to the model as-is;
`readOnlyHint: true` makes a tool read-only (no permission prompt, may run in parallel); everything else goes
through the permission policy. Tool results are text plus images: every image is named in a placeholder line
and, when it is a format the providers take (PNG, JPEG, GIF, WebP) and at most 5 MB, also sent as an image where
the provider accepts images in tool results (Anthropic); audio becomes a placeholder line.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from ..messages import ImageData
from ..tools.base import ToolContext, ToolInputError, ToolOutput
from . import McpError

if TYPE_CHECKING:
    import mcp_types

MAX_NAME = 64
MAX_DESCRIPTION = 2048
"""Characters of a server's tool description offered to the model (Claude Code's cap too)."""
MAX_RESULT_CHARS = 100_000
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
MAX_IMAGE_BYTES = 5 * 1024 * 1024
"""Anthropic's limit for one image."""
MAX_IMAGES = 20
"""Images kept from one result (more are only named)."""
"""Characters of one result kept (≈25k tokens, Claude Code's MCP output default); the rest is cut with a note."""

_INVALID = re.compile(r"[^A-Za-z0-9_-]")


def clean_name(part: str) -> str:
    """`part` with every character a provider rejects in a tool name replaced by `_`."""
    return _INVALID.sub("_", part) or "_"


def public_tool_name(server: str, tool: str) -> str:
    """`mcp__<server>__<tool>`, cleaned and cut to 64 characters (before collision handling)."""
    return f"mcp__{clean_name(server)}__{clean_name(tool)}"[:MAX_NAME]


class ToolNamer:
    """Hands out unique public names; the first (server, tool) to ask for a name gets it plain."""

    def __init__(self, taken: Iterable[str] = ()) -> None:
        self._taken = set(taken)
        self._given: dict[tuple[str, str], str] = {}

    def name(self, server: str, tool: str) -> str:
        """The public name of `tool` on `server` (the same answer every time it is asked)."""
        key = (server, tool)
        if key in self._given:
            return self._given[key]
        base = public_tool_name(server, tool)
        candidate, n = base, 1
        while candidate in self._taken:
            n += 1
            suffix = f"_{n}"
            candidate = base[: MAX_NAME - len(suffix)] + suffix
        self._taken.add(candidate)
        self._given[key] = candidate
        return candidate


class ToolCaller(Protocol):
    """What an MCP tool needs from the manager."""

    async def call_tool(
        self, server: str, tool: str, arguments: dict[str, Any], *, retry_safe: bool
    ) -> mcp_types.CallToolResult: ...


class McpTool:
    """One tool of one MCP server, satisfying our `Tool` protocol."""

    # No `path_fields`: a server's JSON Schema does not say which strings are paths, so the permission policy
    # keeps guessing them from the argument names (`file_path`, `notebook_path`, `path`) for MCP tools.

    def __init__(self, caller: ToolCaller, server: str, spec: mcp_types.Tool, public_name: str) -> None:
        self.name = public_name
        self.server = server
        """The server's configured name."""
        self.tool_name = spec.name
        """The tool's name on its server (what tools/call sends)."""
        self.description = _description(spec, server)
        hints = spec.annotations
        self.read_only = bool(hints and hints.read_only_hint is True)
        self.concurrency_safe = self.read_only
        # a repeat after the server died mid-call is harmless only for calls that change nothing twice
        self.retry_safe = self.read_only or bool(hints and hints.idempotent_hint is True)
        self._schema: Mapping[str, Any] = spec.input_schema or {"type": "object", "properties": {}}
        required = self._schema.get("required", [])
        self._required = [r for r in required if isinstance(r, str)] if isinstance(required, list) else []
        self._caller = caller

    def input_schema(self) -> Mapping[str, Any]:
        return self._schema

    def validate(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        # the server validates against its own schema; checking `required` here saves a round trip for the
        # commonest mistake and names the field
        for field in self._required:
            if field not in raw:
                raise ToolInputError(f"{field}: field required")
        return dict(raw)

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        try:
            result = await self._caller.call_tool(self.server, self.tool_name, args, retry_safe=self.retry_safe)
        except McpError as exc:
            return ToolOutput(str(exc), is_error=True)
        return render_tool_result(result)

    def describe_call(self, raw: Mapping[str, Any]) -> str:
        for value in raw.values():
            if isinstance(value, str) and value.strip():
                return _one_line(value)
        return _one_line(json.dumps(dict(raw), ensure_ascii=False)) if raw else ""


def _description(spec: mcp_types.Tool, server: str) -> str:
    text = (spec.description or "").strip() or f"Tool {spec.name} of the MCP server {server}."
    return text if len(text) <= MAX_DESCRIPTION else text[: MAX_DESCRIPTION - 1] + "…"


def _one_line(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


# ---- results ----


def render_tool_result(result: mcp_types.CallToolResult) -> ToolOutput:
    """A tools/call result as a tool output: every content block as text (images also as images), the
    structured content when no block is text, `isError` kept."""
    parts = [render_block(block) for block in result.content]
    structured = result.structured_content
    if structured is not None and not _has_text(result.content):
        parts.append(json.dumps(structured, ensure_ascii=False, indent=2))
    text = "\n".join(p for p in parts if p)
    if not text:
        text = "The MCP tool reported an error without details." if result.is_error else "(no content)"
    images = tuple(image for block in result.content if (image := sendable_image(block)) is not None)
    return ToolOutput(cap_text(text), is_error=result.is_error, images=images[:MAX_IMAGES])


def sendable_image(block: mcp_types.ContentBlock) -> ImageData | None:
    """An image block the model can be shown: a format the providers take, valid base64, at most 5 MB."""
    import mcp_types

    if not isinstance(block, mcp_types.ImageContent) or block.mime_type not in IMAGE_TYPES:
        return None
    try:
        size = len(base64.b64decode(block.data, validate=True))
    except (binascii.Error, ValueError):
        return None
    return ImageData(block.mime_type, block.data) if 0 < size <= MAX_IMAGE_BYTES else None


def render_block(block: mcp_types.ContentBlock) -> str:
    """One content block (of a tool result or a prompt message) as text."""
    import mcp_types  # already loaded: a result exists, so the SDK was imported

    if isinstance(block, mcp_types.TextContent):
        return block.text
    if isinstance(block, mcp_types.ImageContent):
        return f"[image: {block.mime_type}, {decoded_size(block.data)} bytes]"
    if isinstance(block, mcp_types.AudioContent):
        return f"[audio: {block.mime_type}, {decoded_size(block.data)} bytes]"
    if isinstance(block, mcp_types.EmbeddedResource):
        return f"[resource: {block.resource.uri}]\n{render_contents([block.resource])}"
    if isinstance(block, mcp_types.ResourceLink):
        details = ", ".join(x for x in (block.name, block.mime_type, block.description) if x)
        return f"[resource link: {block.uri}" + (f" ({details})" if details else "") + "]"
    return json.dumps(block.model_dump(mode="json", by_alias=True, exclude_none=True), ensure_ascii=False)


def render_contents(
    contents: Iterable[mcp_types.TextResourceContents | mcp_types.BlobResourceContents],
) -> str:
    """Resource contents as text: text as-is, binary as a placeholder line; parts separated by a blank line."""
    parts: list[str] = []
    for item in contents:
        text = getattr(item, "text", None)
        if isinstance(text, str):
            parts.append(text)
        else:
            blob = str(getattr(item, "blob", ""))
            parts.append(
                f"[binary content omitted: {item.mime_type or 'application/octet-stream'}, {decoded_size(blob)} bytes]"
            )
    return "\n\n".join(parts)


def decoded_size(data: str) -> int:
    """Bytes a base64 string decodes to (its length if it is not valid base64)."""
    try:
        return len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        return len(data)


def cap_text(text: str, limit: int = MAX_RESULT_CHARS) -> str:
    """`text`, or its first `limit` characters and a note saying how much there was."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n\n[output truncated: the first {limit} of {len(text)} characters are shown]"


def _has_text(content: Iterable[mcp_types.ContentBlock]) -> bool:
    """True when some block is text: the spec asks servers that return structured content to send its JSON as
    text too (and SDK servers wrap plain returns as `{"result": ...}`), so the text already says it."""
    return any(isinstance(getattr(block, "text", None), str) for block in content)
