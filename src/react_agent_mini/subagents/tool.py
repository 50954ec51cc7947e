"""Agent: the tool that hands a task to a subagent (Claude Code's `Task`, with its fields: `description`, `prompt`,
`subagent_type`).

It needs no permission of its own — every call the subagent makes is checked by the session's policy — and is
concurrency-safe, so several Agent calls in one message run at once. Its description lists the agent types, read
the first time the model is told about the tools.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Annotated, Any

import msgspec

from ..tools.base import ToolContext, ToolInputError, ToolOutput, format_validation_error, struct_schema
from .definitions import AgentCatalog, AgentDefinition

NAME = "Agent"
ALIASES = ("Task",)
"""Other names a model may call it by (Claude Code's earlier name)."""


class AgentArgs(msgspec.Struct):
    description: Annotated[str, msgspec.Meta(description="The task in 3-5 words, shown to the user.")]
    prompt: Annotated[str, msgspec.Meta(min_length=1, description="The whole task.")]
    subagent_type: Annotated[str, msgspec.Meta(description="One of the types above.")] = "general-purpose"


INTRO = """\
Hand a multi-step task to a new agent that works on its own. Agent types (and their tools):
{agents}

Not for what one Read, Glob or Grep does. Several Agent calls in one message run in parallel. The agent knows \
nothing of this conversation: give it a self-contained prompt that says whether to change code or only research, \
and what to report. Its final message comes back to you, not to the user. Agents cannot start agents."""


class AgentTool:
    """The Agent tool; `run` does the work (`subagents.run.SubagentRunner.run`)."""

    name = NAME
    read_only = True  # what the subagent does is checked call by call
    concurrency_safe = True

    def __init__(
        self,
        catalog: AgentCatalog,
        run: Callable[[AgentDefinition, AgentArgs, ToolContext], Awaitable[ToolOutput]],
    ) -> None:
        self.catalog = catalog
        self.run = run
        self._description: str | None = None

    @property
    def description(self) -> str:
        if self._description is None:
            lines = [
                f"- {a.name}: {a.description} (Tools: {', '.join(a.tools) if a.tools else '*'})"
                for a in self.catalog.agents
            ]
            self._description = INTRO.format(agents="\n".join(lines))
        return self._description

    def forget_description(self) -> None:
        """The agent types changed: describe them again next time."""
        self._description = None

    def input_schema(self) -> Mapping[str, Any]:
        return struct_schema(AgentArgs)

    def validate(self, raw: Mapping[str, Any]) -> AgentArgs:
        try:
            return msgspec.convert(dict(raw), AgentArgs, strict=False)
        except msgspec.ValidationError as exc:
            raise ToolInputError(format_validation_error(str(exc))) from None

    def describe_call(self, raw: Mapping[str, Any]) -> str:
        kind = raw.get("subagent_type") or "general-purpose"
        return f"{raw.get('description', '')} ({kind})".strip()

    async def call(self, args: AgentArgs, ctx: ToolContext) -> ToolOutput:
        agent = self.catalog.find(args.subagent_type or "general-purpose")
        if agent is None:
            names = ", ".join(a.name for a in self.catalog.agents)
            return ToolOutput(
                f"Unknown agent type: {args.subagent_type}. Available agent types: {names}.", is_error=True
            )
        return await self.run(agent, args, ctx)
