"""Assembly: turn a configuration into a ready Session (provider + retries, tools, permissions, deps).

The one place that knows which concrete parts production uses; tests build Sessions with their own deps.
"""

from __future__ import annotations

from pathlib import Path

from .config import ProviderConfig, build_provider
from .loop import QueryDeps
from .permissions.policy import CanUseTool, allow_read_only
from .providers.base import ModelProvider, ModelRequest
from .providers.retry import RetryPolicy, stream_with_retry
from .session import Session
from .tools.base import ToolContext, ToolRegistry
from .tools.echo import EchoTool

SYSTEM_PROMPT = (
    "You are react-agent-mini, a coding agent working in the user's terminal. Use the tools to inspect and "
    "change the workspace; read before you change; keep answers short and concrete."
)


def default_tools() -> ToolRegistry:
    """The built-in tools."""
    return ToolRegistry([EchoTool()])


def production_deps(provider: ModelProvider, policy: RetryPolicy, can_use_tool: CanUseTool) -> QueryDeps:
    """Deps whose model calls go to `provider`, retried per `policy`."""

    def call_model(request: ModelRequest):  # type: ignore[no-untyped-def]
        return stream_with_retry(lambda: provider.stream(request), policy)

    return QueryDeps(call_model=call_model, can_use_tool=can_use_tool)


def build_session(
    config: ProviderConfig,
    *,
    cwd: Path,
    max_turns: int = 20,
    can_use_tool: CanUseTool = allow_read_only,
    mock_chunk_delay: float = 0.0,
) -> tuple[Session, ModelProvider]:
    """A session for `config`; the caller closes the returned provider when done."""
    provider = build_provider(config, mock_chunk_delay=mock_chunk_delay)
    policy = RetryPolicy(max_attempts=config.max_retries + 1)
    session = Session(
        deps=production_deps(provider, policy, can_use_tool),
        tools=default_tools(),
        context=ToolContext(cwd=cwd),
        system_prompt=SYSTEM_PROMPT,
        max_turns=max_turns,
        max_tokens=config.max_output_tokens,
    )
    return session, provider
