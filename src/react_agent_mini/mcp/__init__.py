"""MCP client: the user's MCP servers (stdio, streamable HTTP, legacy SSE) as tools, resources and prompts.

- `config`: which servers (`.mcp.json` format, `${VAR}` expansion, MCP_CONFIG) — no SDK import;
- `manager`: `McpManager` connects every server concurrently in the background and owns their lifecycle;
- `connection`: one session with one server (handshake, what it offers, requests bounded by the call timeout);
- `failures`: a failure as one line, and whether the connection went with it (may a call be repeated?);
- `transport`: the stdio transport (spawned before the SDK is imported; stops the whole process group);
- `http`: our HTTP client for remote servers (names error statuses, notices a forgotten session, bounds sizes);
- `adapter`: an MCP tool as one of our `Tool`s (`mcp__<server>__<tool>`), results rendered as text;
- `resources`: ListMcpResourcesTool, ReadMcpResourceTool and `@server:uri` mentions;
- `prompts`: server prompts as `/server:prompt args` commands;
- `cli`: `ram mcp list`;
- `sdk`: the SDK's client side, imported without its server side, and `Session` (one negotiated connection).

The `mcp` SDK costs ≈1 s of CPU to import even so, so nothing here imports it until a server is started. This
module holds only the package's error type, so importing it is free.
"""

from __future__ import annotations


class McpError(Exception):
    """An MCP operation failed; the message is one line a user (or the model) can act on."""


__all__ = ["McpError"]
