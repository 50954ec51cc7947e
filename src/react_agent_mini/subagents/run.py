"""One subagent's run: a fresh `query()` loop over one prompt, with the parts of the session it may use.

- Tools: the session's (MCP tools included), narrowed to the agent's `tools`; never Agent (a subagent cannot start
  subagents: depth 1) nor TodoWrite (the task list is the main agent's).
- Permissions: the session's policy object and asker, so a subagent never gets more than its parent (deny rules,
  mode, "always" answers all apply), judged against the subagent's own Bash state (its working directory starts
  where the session's is). A read-only agent (Explore) is refused whatever does not only read.
- Hooks: the session's, with `agent_id` and `agent_type` in every event; SubagentStop runs when it stops.
- Model: the session's, or the agent's `model` (`model_choice`) on a provider of the same kind, closed after.
- Its events go out as they happen (`ToolContext.progress`, which the runner turns into `ToolProgress`); the session
  adds its usage to the totals. Its transcript is written beside the session's, as
  `<session-dir>/<session-id>/subagents/agent-<id>.jsonl`, in the same format.
- The report is its last answer. Ctrl+C cancels the call, which stops its model stream and tools.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

from .. import transcript
from ..abort import AbortSignal
from ..call_record import call_fields
from ..compact.pipeline import CompactOptions
from ..config import ProviderConfig, build_provider
from ..context.knowledge import Knowledge
from ..events import AssistantTurn, Followup, ModelEvent, QueryEvent, Terminal, ToolFinished, ToolResults
from ..hooks import Hooks
from ..ids import new_hex_id
from ..loop import QueryDeps, QueryParams, query
from ..messages import Message, user_text
from ..permissions.policy import NO_INFO, REJECT_MESSAGE, Decision, PermissionPolicy, ToolCallInfo
from ..providers.base import ModelProvider, ModelRequest
from ..providers.retry import RetryPolicy, stream_with_retry
from ..tools.base import ShellState, Tool, ToolContext, ToolOutput, ToolRegistry
from .definitions import AgentDefinition
from .tool import AgentArgs

NOT_FOR_SUBAGENTS = frozenset({"Agent", "TodoWrite"})
EMPTY_REPORT = "(The agent finished without a report.)"
DECLINED = (
    "The user declined a tool call of this agent, so it stopped. STOP what you are doing and wait for the user to "
    "tell you how to proceed."
)


class SubagentPermissions:
    """The session's policy, judging a subagent's calls against its own Bash state (and read-only if it is)."""

    def __init__(self, policy: PermissionPolicy, shell: ShellState, read_only: bool) -> None:
        self.policy, self.shell, self.read_only = policy, shell, read_only

    async def __call__(self, tool: Tool, args: Mapping[str, Any], info: ToolCallInfo = NO_INFO, /) -> Decision:
        return await self.policy.decide(tool, args, info, shell=self.shell, read_only=self.read_only)


class SessionParts(msgspec.Struct):
    """What of the session a subagent uses (looked up at each run: tools join and settings change meanwhile)."""

    tools: Callable[[], ToolRegistry]
    policy: PermissionPolicy
    call_model: Callable[[ModelRequest], AsyncIterator[ModelEvent]]
    provider: ModelProvider
    config: ProviderConfig
    retry: RetryPolicy
    knowledge: Knowledge
    compact: Callable[[], CompactOptions]
    max_turns: int
    max_tokens: int | None
    hooks: Hooks | None
    transcript: Callable[[], Path | None]
    """The session's transcript file (None: nothing is saved)."""


class SubagentRunner:
    """Runs subagents for one session."""

    def __init__(self, parts: SessionParts) -> None:
        self.parts = parts

    def tools_for(self, agent: AgentDefinition) -> ToolRegistry:
        offered = [tool for tool in self.parts.tools() if tool.name not in NOT_FOR_SUBAGENTS]
        if agent.tools is not None:
            wanted = set(agent.tools)
            offered = [tool for tool in offered if tool.name in wanted]
        return ToolRegistry(offered)

    async def run(self, agent: AgentDefinition, args: AgentArgs, ctx: ToolContext) -> ToolOutput:
        parts = self.parts
        agent_id = new_hex_id()[:16]
        tools = self.tools_for(agent)
        shell = ShellState(cwd=ctx.shell.cwd, withheld=ctx.shell.withheld)
        context = ToolContext(cwd=ctx.cwd, shell=shell, read_denied=ctx.read_denied)
        saved = _transcript_path(parts.transcript(), agent_id)
        fields = {"agent_id": agent_id, "agent_type": agent.name, "agent_transcript_path": str(saved or "")}
        call_model, own_provider = self._model(agent)
        deps = QueryDeps(
            call_model=call_model,
            can_use_tool=SubagentPermissions(parts.policy, shell, agent.read_only),
            hooks=parts.hooks.derived(**fields) if parts.hooks is not None else None,
            stop_event="SubagentStop",
        )
        first = user_text(args.prompt, id=deps.new_id())
        params = QueryParams(
            messages=[first],
            tools=tools,
            context=context,
            system=parts.knowledge.agent_prompt(agent.prompt, skills=tools.get("Skill") is not None),
            max_turns=parts.max_turns,
            compact=parts.compact(),
            signal=AbortSignal(),
            max_tokens=parts.max_tokens,
        )
        record = _Record(saved, agent, args, ctx, own_provider or parts.provider)
        record.add(first)
        terminal: Terminal | None = None
        declined = False
        try:
            async with contextlib.aclosing(query(params, deps)) as events:
                async for event in events:
                    if ctx.progress is not None:
                        ctx.progress(event)
                    record.see(event)
                    if isinstance(event, ToolFinished) and event.denied and event.result.content == REJECT_MESSAGE:
                        declined = True
                    if isinstance(event, Terminal):
                        terminal = event
        finally:
            record.close()
            if own_provider is not None:
                with contextlib.suppress(Exception):
                    await own_provider.aclose()
        return _report(terminal, record.last_text, declined)

    def _model(self, agent: AgentDefinition) -> tuple[Callable[[ModelRequest], AsyncIterator[ModelEvent]], Any]:
        """The calls for the agent's model: the session's own, or those of a provider made for it."""
        from ..model_choice import chosen_model

        parts = self.parts
        model = chosen_model(parts.provider.name, parts.provider.model, agent.model)
        if model == parts.provider.model:
            return parts.call_model, None
        provider = build_provider(msgspec.structs.replace(parts.config, model=model))

        def call_model(request: ModelRequest) -> AsyncIterator[ModelEvent]:
            return stream_with_retry(lambda: provider.stream(request), parts.retry, request=request)

        return call_model, provider


def _report(terminal: Terminal | None, text: str, declined: bool) -> ToolOutput:
    """The Agent call's result for how the subagent ended."""
    if terminal is None:  # query() always ends with one; a missing one is a bug, answered anyway
        return ToolOutput("The agent ended without a result.", is_error=True)
    if declined:
        return ToolOutput(DECLINED, is_error=True, end_turn=True)
    if terminal.reason == "completed":
        return ToolOutput(text or EMPTY_REPORT)
    if terminal.reason == "max_turns":
        note = f"[The agent stopped at its limit of {terminal.turns} model calls before it finished.]"
        return ToolOutput(f"{text}\n\n{note}" if text else note)
    if terminal.reason == "error":
        return ToolOutput(f"The agent failed: {terminal.error}", is_error=True)
    return ToolOutput(f"The agent was stopped before it finished. {text}".strip(), is_error=True)


def _transcript_path(session_file: Path | None, agent_id: str) -> Path | None:
    if session_file is None:
        return None
    return session_file.with_suffix("") / "subagents" / f"agent-{agent_id}.jsonl"


class _Record:
    """The subagent's transcript, written as its messages come (a disk problem only stops the writing)."""

    def __init__(
        self, path: Path | None, agent: AgentDefinition, args: AgentArgs, ctx: ToolContext, provider: ModelProvider
    ) -> None:
        self.messages: list[Message] = []
        self.last_text = ""
        self._file: transcript.Transcript | None = None
        self._provider = provider
        if path is None:
            return
        meta = {
            "agent_type": agent.name,
            "description": args.description,
            "parent_session_id": path.parent.parent.name,
            "parent_tool_use_id": ctx.call_id,
            "cwd": str(ctx.cwd),
            "model": provider.model,
            "provider": provider.name,
        }
        with contextlib.suppress(Exception):
            self._file = transcript.Transcript.create(path.parent, path.stem, meta)

    def see(self, event: QueryEvent) -> None:
        if isinstance(event, AssistantTurn):
            self.add(event.message)
            self._called(event)
            if event.message.text.strip():
                self.last_text = event.message.text.strip()
        elif isinstance(event, ToolResults | Followup):
            self.add(event.message)

    def add(self, message: Message) -> None:
        self.messages.append(message)
        self._write([message])

    def _called(self, turn: AssistantTurn) -> None:
        """Its calls are recorded here, as the session's are in its own (`ram usage` counts them into it)."""
        if self._file is None:
            return
        try:
            self._file.called(call_fields(turn.usage, self._provider.model, turn))
        except OSError:
            self.close()

    def _write(self, messages: Sequence[Message]) -> None:
        if self._file is None:
            return
        try:
            for message in messages:
                self._file.append(message)
        except OSError:
            self.close()

    def close(self) -> None:
        """Answer any call left open (a cancelled run), then close the file."""
        repaired = transcript.repair(self.messages)
        if repaired:
            self.messages += repaired
            self._write(repaired)
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.close()
            self._file = None
