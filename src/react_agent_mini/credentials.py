"""The environment variables that hold ram's own credentials: the keys it talks to its providers and search
backends with. Commands never see them (`tools.shell_env`), and a project's files never expand them
(`mcp.config`): a cloned repository must not be able to hand them to a program of its choosing."""

from __future__ import annotations

PROVIDER_CREDENTIALS = frozenset({"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"})
"""The variables `config.resolve_provider` reads keys and tokens from."""
SEARCH_CREDENTIALS = frozenset({"BRAVE_API_KEY", "TAVILY_API_KEY"})
"""The variables WebSearch's backends read keys from (`web.search_config`)."""
