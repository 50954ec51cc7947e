"""`McpAttachment`: a session's MCP servers — started in the background, their tools added to the session's table
as they become ready, `@server:uri` mentions resolved, and every child process stopped at the end.

The servers come from the config files (`.mcp.json`, `MCP_CONFIG`, the user's file) and from whoever drives the
session (`--mcp-config`, the library's `mcp_servers`), which win on a name clash; `strict` uses only the latter.
Nothing of the MCP SDK is imported unless a server is configured.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..messages import Message
from ..tools.base import ToolRegistry

if TYPE_CHECKING:
    from ..trust.gate import TrustGate
    from .manager import McpManager

MCP_FIRST_CALL_WAIT = 10.0
"""Seconds the first model call waits for MCP servers still starting (later ones join when they are ready)."""


class McpAttachment:
    """The session's MCP servers."""

    def __init__(
        self,
        cwd: Path,
        env: Mapping[str, str],
        warnings: list[str],
        *,
        extra: Mapping[str, Any] | None = None,
        strict: bool = False,
        trust: TrustGate | None,
    ) -> None:
        from .config import default_log_dir, load_mcp_config, mcp_timeouts, parse_servers

        servers, config_warnings = ({}, []) if strict else load_mcp_config(cwd, env, trust=trust)
        if extra:
            given, given_warnings = parse_servers(extra, cwd, env, source="--mcp-config")
            servers.update(given)
            config_warnings += given_warnings
        connect_timeout, call_timeout, timeout_warnings = mcp_timeouts(env)
        warnings += config_warnings + timeout_warnings
        self.manager: McpManager | None = None
        if servers:
            from .manager import McpManager

            self.manager = McpManager(
                servers, log_dir=default_log_dir(env), connect_timeout=connect_timeout, call_timeout=call_timeout
            )
        self._waited = False

    def start(self) -> None:
        """Connect every server concurrently (inside the running event loop)."""
        if self.manager is not None:
            self.manager.start()

    @property
    def may_wait(self) -> bool:
        """True when the next `join` may wait for servers still starting (only the first one does)."""
        return self.manager is not None and not self._waited

    async def join(self, tools: ToolRegistry) -> list[str]:
        """Add the tools of servers that are ready; the first time, wait a bounded time for the others.
        One warning line per server that failed or is still starting."""
        if self.manager is None:
            return []
        warnings = await self.manager.wait_ready(0 if self._waited else MCP_FIRST_CALL_WAIT)
        self._waited = True
        known = set(tools.names())
        for tool in self.manager.tools():
            if tool.name not in known:
                tools.add(tool)
        return warnings

    async def mentions(self, text: str) -> tuple[list[Message], list[str]]:
        """`@server:uri` resources named in `text`, as messages to put before it (read by reference only)."""
        if self.manager is None or "@" not in text:
            return [], []
        return await self.manager.resolve_mentions(text)

    def status(self) -> list[dict[str, str]]:
        """`{"name", "status"}` per server, for init events."""
        if self.manager is None:
            return []
        return [{"name": s.name, "status": s.state} for s in self.manager.status()]

    async def aclose(self) -> None:
        if self.manager is not None:
            await self.manager.aclose()
