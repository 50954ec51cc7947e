"""The environment Bash commands run with: the user's, minus the credentials ram itself uses.

A command the model runs must not see the keys ram talks to its providers with (`printenv OPENAI_API_KEY` is
read-only and runs unasked), nor those of the web search backends (`BRAVE_API_KEY`, `TAVILY_API_KEY`), nor the
tokens ram sends to remote MCP servers (the `${VAR}`s in their `url` and `headers`): the model would read them,
and they would go into the transcript and to the provider. Everything else is passed on, as Codex's shell
environment policy does. The user opts a credential back in with
`{"shellEnvironment": {"passCredentials": ["OPENAI_API_KEY"]}}` in the user settings file
(`permissions.settings.load_pass_credentials`). MCP stdio servers are not affected: they get what their config
names.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

import msgspec

PROVIDER_CREDENTIALS = frozenset({"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"})
"""The variables `config.resolve_provider` reads keys and tokens from."""
SEARCH_CREDENTIALS = frozenset({"BRAVE_API_KEY", "TAVILY_API_KEY"})
"""The variables WebSearch's backends read keys from (`web.search_config`)."""

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)")
"""The start of a `${VAR}` or `${VAR:-default}` reference (the syntax `mcp.config` expands)."""


def command_environment(base: Mapping[str, str], withheld: Collection[str]) -> dict[str, str]:
    """`base` without the variables named in `withheld`."""
    return {name: value for name, value in base.items() if name not in withheld}


def credential_variables(cwd: Path, env: Mapping[str, str]) -> frozenset[str]:
    """Every variable holding a credential ram uses: the provider and search keys, and each variable a remote MCP
    server's `url` or `headers` refers to in the MCP config files (unreadable files are skipped: the MCP loader
    reports them)."""
    from ..mcp.config import config_files

    names = set(PROVIDER_CREDENTIALS | SEARCH_CREDENTIALS)
    for path, _scope, _named in config_files(cwd, env):
        try:
            data: Any = msgspec.json.decode(path.read_bytes())
        except (OSError, msgspec.DecodeError):
            continue
        servers = data.get("mcpServers") if isinstance(data, dict) else None
        if not isinstance(servers, dict):
            continue
        for entry in servers.values():
            if isinstance(entry, dict):
                names.update(_remote_references(entry))
    return frozenset(names)


def _remote_references(entry: Mapping[str, Any]) -> set[str]:
    """The variables a server entry's `url` and `headers` values refer to (stdio entries have neither)."""
    values: list[object] = [entry.get("url")]
    headers = entry.get("headers")
    if isinstance(headers, dict):
        values += headers.values()
    return {name for value in values if isinstance(value, str) for name in _VAR.findall(value)}
