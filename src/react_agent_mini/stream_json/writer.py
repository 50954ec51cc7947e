"""`StreamJsonWriter`: a session's events as Claude Code's stream-json lines, written as they happen.

Used by `--output-format stream-json` (one turn) and by the long-lived `--input-format stream-json` process (a
`system/init` and a `result` per turn). Lines are built by `lines`; this holds what they need across a turn:
the session id, the model, partial-message state (`--include-partial-messages`) and the last stop reason.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..events import (
    AssistantTurn,
    Compacted,
    Followup,
    Notice,
    QueryEvent,
    StopReason,
    StreamRetry,
    Terminal,
    TextDelta,
    ThinkingDelta,
    ToolProgress,
    ToolResults,
)
from . import lines
from .lines import InitInfo, PartialMessages, TurnSummary


class StreamJsonWriter:
    """Turns events into lines and hands each to `write` (one JSON object, no newline)."""

    def __init__(
        self, write: Callable[[dict[str, Any]], None], session_id: str, model: str, *, partial: bool = False
    ) -> None:
        self.write = write
        self.session_id = session_id
        self.model = model
        self.partial: PartialMessages | None = PartialMessages(session_id, model) if partial else None
        """Set under `--include-partial-messages`: text and thinking also stream as `stream_event` lines."""
        self.stop_reason: StopReason | None = None
        """Why the turn's last model call stopped (for the result line)."""

    def init(self, info: InitInfo) -> None:
        self.write(lines.init_line(info))

    def system(self, subtype: str, **fields: Any) -> None:
        self.write(lines.system_line(subtype, self.session_id, **fields))

    def event(self, event: QueryEvent) -> None:
        partial = self.partial
        if isinstance(event, TextDelta | ThinkingDelta):
            if partial is not None:
                for line in partial.delta(event):
                    self.write(line)
        elif isinstance(event, AssistantTurn):
            self.stop_reason = event.stop_reason
            if partial is not None:
                for line in partial.finish(event):
                    self.write(line)
            self.write(
                lines.assistant_line(
                    event.message,
                    session_id=self.session_id,
                    model=self.model,
                    usage=event.usage,
                    stop_reason=event.stop_reason,
                )
            )
        elif isinstance(event, ToolResults | Followup):
            self.write(lines.user_line(event.message, session_id=self.session_id))
        elif isinstance(event, ToolProgress):
            self.subagent(event)
        elif isinstance(event, StreamRetry):
            if partial is not None:
                partial.reset()
            self.system(
                "api_retry",
                attempt=event.attempt,
                max_retries=event.max_attempts - 1,
                retry_delay_ms=round(event.delay * 1000),
                error=event.reason,
            )
        elif isinstance(event, Notice):
            self.system("notice", text=event.text)
        elif isinstance(event, Compacted):
            self.system("compact_boundary", notice=event.notice, messages=len(event.messages))

    def subagent(self, progress: ToolProgress) -> None:
        """A subagent's messages, as Claude Code writes them: `parent_tool_use_id` is the Agent call's id."""
        event, parent = progress.event, progress.tool_use.id
        if isinstance(event, AssistantTurn):
            line = lines.assistant_line(
                event.message,
                session_id=self.session_id,
                model=self.model,
                usage=event.usage,
                stop_reason=event.stop_reason,
                parent_tool_use_id=parent,
            )
            self.write(line)
        elif isinstance(event, ToolResults | Followup):
            self.write(lines.user_line(event.message, session_id=self.session_id, parent_tool_use_id=parent))

    def result(self, terminal: Terminal, summary: TurnSummary) -> dict[str, Any]:
        """Write the turn's `result` line (and return it)."""
        if summary.stop_reason is None:
            summary.stop_reason = self.stop_reason
        line = lines.result_line(terminal, summary)
        self.write(line)
        self.stop_reason = None
        return line
