"""The environment variables that hold ram's own credentials: the keys it talks to its providers and search
backends with. Commands never see them (`tools.shell_env`), and a project's files never expand them
(`mcp.config`): a cloned repository must not be able to hand them to a program of its choosing.

The providers' are not listed here but read from `provider_registry`, which lists every provider: one added there
is withheld without a line changed here (a test runs `printenv` in a real Bash command for each)."""

from __future__ import annotations

from .provider_registry import credential_variables as provider_credentials

__all__ = ["SEARCH_CREDENTIALS", "own_credentials", "provider_credentials"]

SEARCH_CREDENTIALS = frozenset({"BRAVE_API_KEY", "TAVILY_API_KEY"})
"""The variables WebSearch's backends read keys from (`web.search_config`)."""


def own_credentials() -> frozenset[str]:
    """Every variable named above: each registered provider's keys and tokens, read from `provider_registry` when
    asked (a provider registered at run time is withheld too), and the search backends'."""
    return provider_credentials() | SEARCH_CREDENTIALS
