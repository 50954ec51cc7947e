"""Claude Code's extension points in an assembled session: what `app.build_session` adds for them.

- what comes back after a summary: the bodies of loaded skills and the TodoWrite list;
- the Agent tool (`Task` accepted too), bound to the session's parts (`subagents`);
- resetting and restoring the tools that keep state (`/clear`, `/resume`, a resumed session).
Hooks are assembled in `hooks.session`; custom commands and agent types are found on demand (`custom_commands`,
`subagents.definitions`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .compact.pipeline import CompactOptions
from .config import ProviderConfig
from .context.knowledge import Knowledge
from .hooks import Hooks
from .loop import QueryDeps
from .messages import Message
from .permissions.policy import PermissionPolicy
from .providers.base import ModelProvider
from .providers.retry import RetryPolicy
from .session import Session
from .subagents.definitions import AgentCatalog, AgentDefinition
from .tools.base import ToolContext, ToolOutput, ToolRegistry


def reinjected(tools: ToolRegistry) -> Callable[[], list[Message]]:
    """What a summary puts back after itself. Project context and memory live in the system prompt, which a
    summary never touches; the bodies of the skills loaded so far and the task list were in the history."""

    def reinject() -> list[Message]:
        from .tools.builtin.skill import SkillTool
        from .tools.builtin.todo import TodoWriteTool

        out: list[Message] = []
        skills = tools.get("Skill")
        if isinstance(skills, SkillTool) and (blocks := skills.reload_blocks()):
            out.append(Message("user", tuple(blocks), meta=True))
        todo = tools.get("TodoWrite")
        if isinstance(todo, TodoWriteTool):
            out += todo.reminder()
        return out

    return reinject


def add_agent_tool(
    session: Session,
    catalog: AgentCatalog,
    *,
    deps: QueryDeps,
    policy: PermissionPolicy,
    provider: ModelProvider,
    config: ProviderConfig,
    retry: RetryPolicy,
    knowledge: Knowledge,
    hooks: Hooks | None,
    transcript: Callable[[], Path | None],
) -> None:
    """Offer the Agent tool in `session` (and let `Task` name it). What runs a subagent is loaded at the first
    call, not at startup."""
    from .subagents.tool import ALIASES, AgentArgs, AgentTool

    def compact() -> CompactOptions:
        return session.compact

    async def run(agent: AgentDefinition, args: AgentArgs, ctx: ToolContext) -> ToolOutput:
        from .subagents.run import SessionParts, SubagentRunner

        parts = SessionParts(
            tools=lambda: session.tools,
            policy=policy,
            call_model=deps.call_model,
            provider=provider,
            config=config,
            retry=retry,
            knowledge=knowledge,
            compact=compact,
            max_turns=session.max_turns,
            max_tokens=session.max_tokens,
            hooks=hooks,
            transcript=transcript,
        )
        return await SubagentRunner(parts).run(agent, args, ctx)

    tool = AgentTool(catalog, run)
    session.tools.add(tool)
    for alias in ALIASES:
        session.tools.alias(alias, tool.name)


def reset_tools(session: Session) -> None:
    """Forget the loaded skills and the task list (`/clear`, `/resume`)."""
    from .tools.builtin.skill import SkillTool
    from .tools.builtin.todo import TodoWriteTool

    for tool in (session.tools.get("Skill"), session.tools.get("TodoWrite")):
        if isinstance(tool, SkillTool | TodoWriteTool):
            tool.reset()


def restore_tools(session: Session) -> None:
    """A session that continues a saved one: its task list as its history last left it."""
    from .tools.builtin.todo import TodoWriteTool

    todo = session.tools.get("TodoWrite")
    if isinstance(todo, TodoWriteTool):
        todo.restore(session.messages)
