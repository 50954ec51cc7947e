"""Our turn's events as the `session/update` notifications an editor shows, in order.

- Answer and reasoning deltas become `agent_message_chunk` and `agent_thought_chunk`. When nothing streamed, the
  whole text is sent at the end of the model call.
- The assistant message becomes one `tool_call` per tool use: `pending`, with its card (kind, title, locations),
  its raw input, and for Edit and Write the diff. The editor can show the diff while asking permission.
- A call that is reached becomes `tool_call_update` `in_progress`. Its result becomes `completed` or `failed`. The
  content is the diff for an Edit or Write that succeeded, the client's terminal for Bash run there, and otherwise
  the result text (cut to `RESULT_CHARS`; output in a code block).
- A TodoWrite call that succeeded becomes a `plan` update: its items, with their status (and priority, when the
  model gave one; else medium).
- A subagent's tool calls (an Agent call's `ToolProgress`) get cards of their own, as the main agent's do; its
  text stays out of the answer (the main agent reports what matters).
- Notices and compaction become a paragraph of the answer.
- At the end, any call that was announced but never answered becomes `failed`, so no card keeps spinning.

The updates are the `acp` package's pydantic models. `stop_reason()` turns the turn's end into ACP's stop reason.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import TypeAlias

from acp.helpers import plan_entry, start_tool_call, text_block, tool_content, update_plan, update_tool_call
from acp.helpers import update_agent_message_text as message_chunk
from acp.helpers import update_agent_thought_text as thought_chunk
from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    ContentToolCallContent,
    FileEditToolCallContent,
    StopReason,
    TerminalToolCallContent,
    ToolCallProgress,
    ToolCallStart,
)

from ..builtin_tools import family_named
from ..events import (
    AssistantTurn,
    Compacted,
    Notice,
    StreamRetry,
    Terminal,
    TextDelta,
    ThinkingDelta,
    ToolFinished,
    ToolProgress,
    ToolStarted,
)
from ..events import (
    StopReason as ModelStop,
)
from ..host import HostEvent
from ..messages import ThinkingBlock, ToolResultBlock, ToolUseBlock
from .cards import Card, OldText, card

Update: TypeAlias = AgentMessageChunk | AgentThoughtChunk | ToolCallStart | ToolCallProgress | AgentPlanUpdate
ToolContent: TypeAlias = ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent

RESULT_CHARS = 20_000
"""A tool result shown in its card is cut here (the model still gets the whole result)."""
FENCED_FAMILIES = frozenset({"read", "shell", "search"})
"""The tool families whose output is shown as a code block (Read, Bash, Grep, Glob)."""
RETRY_NOTE = "(the connection to the model dropped; the answer starts again)"


class TurnUpdates:
    """The updates of one turn, event by event."""

    def __init__(self, root: Path, old_text: OldText, terminals: Mapping[str, str]) -> None:
        self.root = root
        self.old_text = old_text
        self.terminals = terminals
        """Tool call id → client terminal id, for Bash calls that ran in the client's terminal."""
        self.cards: dict[str, Card] = {}
        self.open: dict[str, None] = {}
        """Calls announced and not answered yet, in order."""
        self.streamed_text = False
        self.streamed_thinking = False
        self.last_stop: ModelStop | None = None
        """Why the last model call stopped (`max_tokens` when its answer was cut)."""

    def feed(self, event: HostEvent) -> list[Update]:
        """The updates `event` makes (none for most bookkeeping events)."""
        if isinstance(event, TextDelta):
            self.streamed_text = True
            return [message_chunk(event.text)] if event.text else []
        if isinstance(event, ThinkingDelta):
            self.streamed_thinking = True
            return [thought_chunk(event.text)] if event.text else []
        if isinstance(event, StreamRetry) and event.discarded_output:
            return [message_chunk(f"\n\n{RETRY_NOTE}\n\n")]
        if isinstance(event, AssistantTurn):
            return self._assistant(event)
        if isinstance(event, ToolStarted):
            if event.tool_use.id not in self.open:
                return []
            return [update_tool_call(event.tool_use.id, status="in_progress")]
        if isinstance(event, ToolFinished):
            out = self.finish(event.tool_use, event.result)
            if event.tool_use.name == "TodoWrite" and not event.result.is_error:
                out += plan(event.tool_use.input)
            return out
        if isinstance(event, ToolProgress):
            return self._inner(event.event)
        if isinstance(event, Notice):
            return [message_chunk(f"\n\n> {event.text}\n\n")]
        if isinstance(event, Compacted):
            return [message_chunk(f"\n\n> {event.notice}\n\n")]
        if isinstance(event, Terminal):
            left, self.open = list(self.open), {}
            return [update_tool_call(call_id, status="failed") for call_id in left]
        return []

    def _assistant(self, event: AssistantTurn) -> list[Update]:
        self.last_stop = event.stop_reason
        out: list[Update] = []
        if not self.streamed_thinking:
            thinking = "".join(b.thinking for b in event.message.content if isinstance(b, ThinkingBlock))
            if thinking:
                out.append(thought_chunk(thinking))
        if not self.streamed_text and event.message.text:
            out.append(message_chunk(event.message.text))
        self.streamed_text = self.streamed_thinking = False
        out += [self.announce(use) for use in event.message.tool_uses]
        return out

    def _inner(self, event: HostEvent) -> list[Update]:
        """A subagent's event: cards for its tool calls, nothing else."""
        if isinstance(event, AssistantTurn):
            return [self.announce(use) for use in event.message.tool_uses]
        if isinstance(event, ToolStarted | ToolFinished):
            return self.feed(event)
        return []

    def announce(self, use: ToolUseBlock) -> ToolCallStart:
        """The `tool_call` for `use` (pending)."""
        shown = card(use.name, use.input, self.root, self.old_text)
        self.cards[use.id] = shown
        self.open[use.id] = None
        return start_tool_call(
            use.id,
            shown.title,
            kind=shown.kind,
            status="pending",
            content=[shown.diff] if shown.diff is not None else None,
            locations=list(shown.locations) or None,
            raw_input=dict(use.input),
        )

    def finish(self, use: ToolUseBlock, result: ToolResultBlock) -> list[Update]:
        """The `tool_call_update` closing the card of `use` (none for a call never announced)."""
        if use.id not in self.open:
            return []
        del self.open[use.id]
        return [finished_update(use.name, result, self.cards.get(use.id), self.terminals.get(use.id))]


def plan(raw: Mapping[str, object]) -> list[Update]:
    """The `plan` update for a TodoWrite input (none when it does not parse)."""
    from ..tools.builtin.todo import parse_todos

    todos = parse_todos(raw)
    if todos is None:
        return []
    return [update_plan([plan_entry(t.content, priority=t.priority or "medium", status=t.status) for t in todos])]


def finished_update(name: str, result: ToolResultBlock, shown: Card | None, terminal: str | None) -> ToolCallProgress:
    """The `tool_call_update` that closes a call's card."""
    content: list[ToolContent]
    if terminal is not None:
        content = [TerminalToolCallContent(type="terminal", terminal_id=terminal)]
    elif not result.is_error and shown is not None and shown.diff is not None:
        content = [shown.diff]
    else:
        content = [tool_content(text_block(result_text(name, result)))]
    return update_tool_call(result.tool_use_id, status="failed" if result.is_error else "completed", content=content)


def result_text(name: str, result: ToolResultBlock) -> str:
    """A tool result as its card shows it."""
    text = result.content
    if len(text) > RESULT_CHARS:
        text = text[:RESULT_CHARS] + f"\n… ({len(result.content) - RESULT_CHARS:,} more characters)"
    if result.is_error or family_named(name) not in FENCED_FAMILIES:
        return text
    return fenced(text)


def fenced(text: str) -> str:
    """`text` in a Markdown code block whose fence no line of it can close."""
    longest = max((len(run) for run in re.findall(r"^`{3,}", text, flags=re.MULTILINE)), default=2)
    fence = "`" * (longest + 1)
    return f"{fence}\n{text}\n{fence}"


def stop_reason(terminal: Terminal, last_stop: ModelStop | None, cancelled: bool) -> StopReason:
    """ACP's stop reason for a turn that ended with `terminal` (a turn the client cancelled is `cancelled`;
    one a refused permission ended is an ordinary `end_turn`)."""
    if cancelled:
        return "cancelled"
    if terminal.reason == "max_turns":
        return "max_turn_requests"
    if last_stop == "max_tokens":
        return "max_tokens"
    return "end_turn"
