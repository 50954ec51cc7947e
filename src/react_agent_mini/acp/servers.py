"""The client's MCP servers (`session/new`'s `mcpServers`, in ACP's form) as `.mcp.json` entries, which the session
merges with the project's and the user's config files (the client's win on a name clash).

ACP gives a stdio server as `command`, `args` and `env` as a list of `{name, value}`. An HTTP or SSE server has a
`url` and `headers` as such a list. An `acp` server (reached through the client, an unstable part of the
protocol) is left out, and a warning line says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeAlias

from acp.schema import AcpMcpServer, HttpMcpServer, McpServerStdio, SseMcpServer

ClientServer: TypeAlias = HttpMcpServer | SseMcpServer | AcpMcpServer | McpServerStdio


def mcp_json(servers: Sequence[ClientServer]) -> tuple[dict[str, Any], list[str]]:
    """`{"name": entry}` in `.mcp.json`'s shape, and one warning line per server left out."""
    out: dict[str, Any] = {}
    warnings: list[str] = []
    for server in servers:
        if isinstance(server, McpServerStdio):
            entry: dict[str, Any] = {"command": server.command, "args": list(server.args)}
            if server.env:
                entry["env"] = {variable.name: variable.value for variable in server.env}
        elif isinstance(server, (HttpMcpServer, SseMcpServer)):
            entry = {"type": "http" if isinstance(server, HttpMcpServer) else "sse", "url": server.url}
            if server.headers:
                entry["headers"] = {header.name: header.value for header in server.headers}
        else:
            warnings.append(f'MCP server "{server.name}": servers reached through the client are not supported')
            continue
        if server.name in out:
            warnings.append(f'MCP server "{server.name}" is given twice; the last one is used')
        out[server.name] = entry
    return out, warnings
