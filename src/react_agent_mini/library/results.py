"""What one `agent.run` / `agent.stream` produces: the events it yields, and the `Result` that ends them.

`TurnRecord` watches a turn's events and the messages it appends, and makes the `Result` at the end.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, TypeAlias

import msgspec

from ..events import (
    AssistantTurn,
    Compacted,
    Followup,
    Notice,
    StreamRetry,
    Terminal,
    TerminalReason,
    TextDelta,
    ThinkingDelta,
    ToolFinished,
    ToolProgress,
    ToolResults,
    ToolStarted,
)
from ..host import HostEvent, Remark, Waiting
from ..messages import Message, Usage
from ..pricing import cost_usd
from .permission import Deny, PermissionAsked, PermissionDecided

StopReason: TypeAlias = TerminalReason
"""`completed`, `max_turns` (the model-call limit was reached), `aborted` (interrupted, or a `Deny` with
`interrupt=True`) or `error` (the API failed after retries)."""

_SUBTYPES: Mapping[TerminalReason, str] = {
    "completed": "success",
    "max_turns": "error_max_turns",
    "aborted": "error_during_execution",
    "error": "error_during_execution",
}


class PermissionDenial(msgspec.Struct, frozen=True):
    """A tool call the permission check refused (it did not run)."""

    tool_name: str
    tool_use_id: str
    tool_input: Mapping[str, Any]
    message: str
    """What the model read instead of the tool's output."""


class Result(msgspec.Struct, frozen=True, kw_only=True):
    """How one `run` / `stream` ended (the last event of `stream`)."""

    text: str
    """The last assistant message's text (empty when it had none, e.g. only tool calls)."""
    is_error: bool
    """True unless `stop_reason` is `completed`."""
    stop_reason: StopReason
    """`completed`, `max_turns`, `aborted` or `error`."""
    error: str = ""
    """One line saying what went wrong (empty when completed)."""
    usage: Usage
    """Tokens of this run's model calls (summaries made to compact the context included)."""
    cost_usd: float | None
    """What `usage` costs at list price; None when the model's price is not known."""
    num_turns: int
    """Model calls that answered in this run."""
    session_id: str
    """The session's id: `Agent(resume=...)` continues it."""
    messages: tuple[Message, ...]
    """The messages this run added to the history, in order: the prompt, the model's answers, tool results."""
    permission_denials: tuple[PermissionDenial, ...] = ()
    duration_ms: int = 0

    @property
    def subtype(self) -> str:
        """Claude Code's name for `stop_reason`: `success`, `error_max_turns` or `error_during_execution`."""
        return _SUBTYPES[self.stop_reason]


AgentEvent: TypeAlias = (
    TextDelta
    | ThinkingDelta
    | StreamRetry
    | AssistantTurn
    | ToolStarted
    | ToolFinished
    | ToolProgress
    | ToolResults
    | Followup
    | Compacted
    | Notice
    | PermissionAsked
    | PermissionDecided
    | Result
)
"""What `agent.stream()` yields; the last one is always a `Result`."""


class TurnRecord:
    """Collects what a turn did, from its events and the messages it appended."""

    def __init__(self, usage_before: Usage) -> None:
        self.messages: list[Message] = []
        """Every message appended to the history during the turn (the session tells us as it appends)."""
        self._usage_before = usage_before
        self._started = time.monotonic()
        self._text = ""
        self._turns = 0
        self._denials: list[PermissionDenial] = []
        self._terminal: Terminal | None = None
        self._ended_by = ""
        """Why a permission answer ended the turn (a `Deny` with `interrupt=True`)."""

    def see(self, event: HostEvent | PermissionAsked | PermissionDecided) -> AgentEvent | None:
        """Note `event`; what to yield for it (None: nothing)."""
        if isinstance(event, Remark):
            return Notice(event.text)
        if isinstance(event, Waiting):
            return None  # a UI hint ("Starting MCP servers…"), not part of the conversation
        if isinstance(event, Terminal):
            self._terminal = event
            return None
        if isinstance(event, AssistantTurn):
            self._turns += 1
            self._text = event.message.text
        elif isinstance(event, ToolFinished) and event.denied:
            use = event.tool_use
            self._denials.append(PermissionDenial(use.name, use.id, dict(use.input), event.result.content))
        elif isinstance(event, PermissionDecided) and isinstance(event.decision, Deny) and event.decision.interrupt:
            self._ended_by = f"can_use_tool denied {event.tool_name} and ended the turn: {event.decision.message}"
        return event

    def result(
        self, *, session_id: str, model: str, usage_after: Usage, history: list[Message], interrupted: str = ""
    ) -> Result:
        """The Result; `interrupted`: why the turn was stopped from outside, if it was (an interrupt that came too
        late to stop it changes nothing). `history` (the session's messages now) supplies what was appended without
        telling us: results for calls cut off by a cancellation."""
        terminal = self._terminal or Terminal("aborted", self._turns)  # none: cancelled before the loop began
        if terminal.reason == "aborted":
            error = self._ended_by or interrupted or terminal.error or "interrupted"
        elif terminal.reason == "max_turns":
            error = f"reached the limit of {self._turns} model calls (max_turns)"
        else:
            error = terminal.error
        usage = _minus(usage_after, self._usage_before)
        return Result(
            text=self._text,
            is_error=terminal.reason != "completed",
            stop_reason=terminal.reason,
            error=error,
            usage=usage,
            cost_usd=cost_usd(model, usage),
            num_turns=self._turns,
            session_id=session_id,
            messages=tuple(self.messages + _repaired(self.messages, history)),
            permission_denials=tuple(self._denials),
            duration_ms=round((time.monotonic() - self._started) * 1000),
        )


def _repaired(seen: list[Message], history: list[Message]) -> list[Message]:
    """Messages after the last one we were told of (a cancelled turn's "interrupted" results)."""
    if not seen:
        return []
    last = seen[-1]
    for index in range(len(history) - 1, -1, -1):
        if history[index] is last:
            return history[index + 1 :]
    return []


def _minus(after: Usage, before: Usage) -> Usage:
    return Usage(
        after.input_tokens - before.input_tokens,
        after.output_tokens - before.output_tokens,
        after.cache_read_input_tokens - before.cache_read_input_tokens,
        after.cache_creation_input_tokens - before.cache_creation_input_tokens,
    )
