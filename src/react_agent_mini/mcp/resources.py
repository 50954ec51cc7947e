"""MCP resources: two tools for the model, and `@server:uri` mentions for the user.

ListMcpResourcesTool lists what servers offer (resources, and URI templates the model can fill in);
ReadMcpResourceTool reads one URI. Both exist only when a connected server declares the resources capability.
A mention `@server:uri` in the user's text reads exactly that resource and attaches it to the turn: resources are
always taken by reference, never mounted wholesale.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Annotated, Any, Protocol

import msgspec

from ..tools.base import ModelTool, ToolContext, ToolOutput
from . import McpError
from .adapter import cap_text, render_contents

if TYPE_CHECKING:
    import mcp_types

# `\b` in ASCII mode, as in the original JavaScript: trailing punctuation (ASCII or not) is not part of the URI
_MENTION = re.compile(r"(?:^|\s)@([^\s]+:[^\s]+)\b", re.ASCII)


class ResourceSource(Protocol):
    """What the resource tools need from the manager."""

    def server_names(self) -> list[str]:
        """Every configured server."""
        ...

    def resource_servers(self) -> list[str]:
        """Connected servers that declare resources."""
        ...

    async def list_resources(self, server: str) -> list[dict[str, Any]]:
        """Resource and template entries of one server (McpError on failure)."""
        ...

    async def read_resource(self, server: str, uri: str) -> mcp_types.ReadResourceResult:
        """One resource (McpError on failure)."""
        ...


class ListArgs(msgspec.Struct):
    server: Annotated[
        str | None, msgspec.Meta(description="Only this server's resources (default: every server's).")
    ] = None


class ReadArgs(msgspec.Struct):
    server: Annotated[str, msgspec.Meta(description="The MCP server's name, as ListMcpResourcesTool shows it.")]
    uri: Annotated[str, msgspec.Meta(description="The resource URI to read.")]


def _check_server(source: ResourceSource, server: str) -> str | None:
    """An error message when `server` cannot serve resources, else None."""
    if server not in source.server_names():
        available = ", ".join(source.resource_servers()) or "(none)"
        return f'Server "{server}" not found. Available servers: {available}'
    if server not in source.resource_servers():
        return f'Server "{server}" does not support resources (or is not connected).'
    return None


class ListMcpResourcesTool(ModelTool[ListArgs]):
    name = "ListMcpResourcesTool"
    description = (
        "List the resources (documents, files, records) that connected MCP servers offer: each entry has its "
        "server, uri, name and mimeType; entries with a uriTemplate describe families of URIs you can fill in. "
        "Read one with ReadMcpResourceTool."
    )
    args_model = ListArgs
    read_only = True
    concurrency_safe = True
    status_field = "server"

    def __init__(self, source: ResourceSource) -> None:
        self._source = source

    async def call(self, args: ListArgs, ctx: ToolContext) -> ToolOutput:
        if args.server is not None:
            if problem := _check_server(self._source, args.server):
                return ToolOutput(problem, is_error=True)
            servers = [args.server]
        else:
            servers = self._source.resource_servers()
        entries: list[dict[str, Any]] = []
        failures: list[str] = []
        for server in servers:
            try:
                entries += await self._source.list_resources(server)
            except McpError as exc:
                failures.append(str(exc))
        if not entries and failures:
            return ToolOutput("\n".join(failures), is_error=True)
        text = json.dumps(entries, ensure_ascii=False, indent=2) if entries else "No resources found."
        if failures:
            text += "\n\nNot listed: " + "; ".join(failures)
        return ToolOutput(cap_text(text))


class ReadMcpResourceTool(ModelTool[ReadArgs]):
    name = "ReadMcpResourceTool"
    description = (
        "Read one resource of an MCP server by its URI (see ListMcpResourcesTool). Text comes back as-is; "
        "binary content is described, not shown."
    )
    args_model = ReadArgs
    read_only = True
    concurrency_safe = True
    status_field = "uri"

    def __init__(self, source: ResourceSource) -> None:
        self._source = source

    async def call(self, args: ReadArgs, ctx: ToolContext) -> ToolOutput:
        if problem := _check_server(self._source, args.server):
            return ToolOutput(problem, is_error=True)
        try:
            result = await self._source.read_resource(args.server, args.uri)
        except McpError as exc:
            return ToolOutput(str(exc), is_error=True)
        return ToolOutput(cap_text(render_contents(result.contents)) or "(empty resource)")


def resource_entries(
    server: str, resources: list[mcp_types.Resource], templates: list[mcp_types.ResourceTemplate]
) -> list[dict[str, Any]]:
    """The JSON entries ListMcpResourcesTool shows (empty fields left out)."""
    entries: list[dict[str, Any]] = []
    for resource in resources:
        entry = {"server": server, "uri": resource.uri, "name": resource.name}
        entries.append(entry | _optional(mimeType=resource.mime_type, description=resource.description))
    for template in templates:
        entry = {"server": server, "uriTemplate": template.uri_template, "name": template.name}
        entries.append(entry | _optional(mimeType=template.mime_type, description=template.description))
    return entries


def _optional(**fields: str | None) -> dict[str, str]:
    return {k: v for k, v in fields.items() if v}


def parse_mentions(text: str) -> list[tuple[str, str]]:
    """The `@server:uri` mentions in `text`, in order, each once (the first `:` ends the server name)."""
    found: list[tuple[str, str]] = []
    for match in _MENTION.finditer(text):
        server, _, uri = match.group(1).partition(":")
        if server and uri and (server, uri) not in found:
            found.append((server, uri))
    return found


def mention_text(server: str, uri: str, body: str) -> str:
    """The meta message that attaches one mentioned resource."""
    return f'The user attached the MCP resource {uri} from the server "{server}":\n\n{body}'
