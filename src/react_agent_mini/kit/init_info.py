"""What a session's `system/init` line reports (stream-json, the SDK's `initialize` answer), as the kit works it out
(`kit.tally.init_info`) for every front end that sends one.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec


class InitInfo(msgspec.Struct, frozen=True):
    """What a `system/init` line reports about the session."""

    session_id: str
    cwd: str
    model: str
    provider: str
    tools: Sequence[str]
    permission_mode: str
    version: str
    """ram's own version (the SDK reads `claude_code_version` and warns when it is missing)."""
    mcp_servers: Sequence[dict[str, str]] = ()
    slash_commands: Sequence[str] = ()
    skills: Sequence[str] = ()
    agents: Sequence[str] = ()
    """The agent types the Agent tool offers."""
    api_key_source: str = "none"
