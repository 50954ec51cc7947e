"""The bookkeeping of a turn that every front end needs: the calls a permission check refused, the budget, and what
the `system/init` line says about the session.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import __version__
from ..events import ToolFinished, ToolProgress
from ..messages import ToolUseBlock, Usage
from ..pricing import cost_usd

if TYPE_CHECKING:
    from ..config import ProviderConfig
    from ..host import SessionHost
    from .init_info import InitInfo


def denied_call(event: object) -> ToolUseBlock | None:
    """The call a permission check refused, when `event` says one was (a subagent's, inside a `ToolProgress`)."""
    if isinstance(event, ToolProgress):
        event = event.event
    return event.tool_use if isinstance(event, ToolFinished) and event.denied else None


def denial(use: ToolUseBlock) -> dict[str, object]:
    """A refused call as the `result` line's `permission_denials` lists it (Claude Code's fields)."""
    return {"tool_name": use.name, "tool_use_id": use.id, "tool_input": dict(use.input)}


def budget_applies(model: str) -> bool:
    """True when `model`'s price is known, so `--max-budget-usd` can be checked."""
    return cost_usd(model, Usage()) is not None


def budget_warning(host: SessionHost, limit: float | None) -> str:
    """The line saying a budget cannot be checked ("" when it can, or none was set)."""
    if limit is None or budget_applies(host.model):
        return ""
    return f"warning: --max-budget-usd: the price of {host.model} is not known, so no budget applies"


def over_budget(host: SessionHost, limit: float | None) -> bool:
    """True when the session's cost at list price has reached `limit` (never without a limit or a known price)."""
    if limit is None:
        return False
    spent = cost_usd(host.model, host.session.totals.usage)
    return spent is not None and spent >= limit


def init_info(host: SessionHost) -> InitInfo:
    """What the `system/init` line says about the session (after MCP servers joined)."""
    from .commands import offered
    from .init_info import InitInfo

    built = host.built
    skills = [skill.id for skill in built.knowledge.skills]
    agents = [agent.name for agent in built.agents.agents] if built.session.tools.get("Agent") is not None else []
    return InitInfo(
        session_id=host.session_id,
        cwd=str(built.session.context.cwd),
        model=host.model,
        provider=built.provider.name,
        tools=built.session.tools.names(),
        permission_mode=built.policy.mode,
        version=__version__,
        mcp_servers=built.mcp.status(),
        slash_commands=[offer.name for offer in offered(host)],
        skills=skills,
        agents=agents,
        api_key_source=key_source(host.config),
    )


def key_source(config: ProviderConfig) -> str:
    """Where the API key came from, as `system/init`'s `apiKeySource` says it: the variable the provider read its
    key (else its bearer token) from, by `provider_registry` (the one table of providers: one registered there is
    named here too); `none` for the offline demo and for a local server reached without a key."""
    from .. import provider_registry
    from ..provider_env import LOCAL_KEY

    spec = provider_registry.get(config.kind)
    if spec is None or spec.offline:
        return "none"
    if config.api_key and config.api_key != LOCAL_KEY:
        return spec.key_variable
    if config.auth_token and spec.token_variable:
        return spec.token_variable
    return "none"
