"""What streams out of a model call and out of the agent loop.

A provider yields `TextDelta`/`ThinkingDelta` while the answer arrives, `StreamRetry` when it starts over, and
exactly one `ModelResponse` at the end. `query()` passes those through and adds tool progress, the messages it
appends to the history, notices, and finally one `Terminal`.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

import msgspec

from .messages import ContentBlock, Message, ToolResultBlock, ToolUseBlock, Usage

StopReason: TypeAlias = Literal["end_turn", "tool_use", "max_tokens", "other"]
TerminalReason: TypeAlias = Literal["completed", "max_turns", "aborted", "error"]


class TextDelta(msgspec.Struct, frozen=True):
    """A piece of the model's visible answer, as it arrives."""

    text: str


class ThinkingDelta(msgspec.Struct, frozen=True):
    """A piece of the model's reasoning, as it arrives."""

    text: str


class StreamRetry(msgspec.Struct, frozen=True):
    """The model call failed transiently and is being retried from the start."""

    attempt: int
    """The attempt about to start (2 = first retry)."""
    max_attempts: int
    """Attempts allowed in total."""
    delay: float
    """Seconds waited before the attempt."""
    reason: str
    """One line saying what failed."""
    discarded_output: bool
    """True when deltas of the failed attempt were already yielded (a renderer may have shown them)."""


class ModelResponse(msgspec.Struct, frozen=True):
    """The complete answer of one model call."""

    message: Message
    """The assistant message (text, reasoning and tool calls, in the order the model wrote them)."""
    stop_reason: StopReason
    """Why generation stopped; `max_tokens` means the output limit cut it."""
    usage: Usage
    """Tokens the provider reported for this call."""


ModelEvent: TypeAlias = TextDelta | ThinkingDelta | StreamRetry | ModelResponse


class AssistantTurn(msgspec.Struct, frozen=True):
    """The loop appended the model's assistant message to the history."""

    message: Message
    stop_reason: StopReason
    usage: Usage
    request: object = None
    """The `providers.base.ModelRequest` answered, which the transcript's call record measures (an object here:
    this module sits below the providers)."""
    kept: bool = True
    """False when the message does not join the history: an empty answer the loop asks for again (its cost counts)."""


class ToolStarted(msgspec.Struct, frozen=True):
    """A tool call is about to run (after validation and permission)."""

    tool_use: ToolUseBlock


class ToolFinished(msgspec.Struct, frozen=True):
    """A tool call produced its result."""

    tool_use: ToolUseBlock
    result: ToolResultBlock
    after: tuple[ContentBlock, ...] = ()
    """Blocks the tool asked to place after its result (e.g. a skill body)."""
    denied: bool = False
    """The permission check refused the call (it did not run)."""


class ToolProgress(msgspec.Struct, frozen=True):
    """An event from inside a tool call that is still running: each event of a subagent's loop, run by the Agent
    call `tool_use` (front ends show its tool calls; the session adds its usage to the totals)."""

    tool_use: ToolUseBlock
    event: QueryEvent


class ToolResults(msgspec.Struct, frozen=True):
    """The loop appended the user message answering every tool call of the last assistant message."""

    message: Message


class Followup(msgspec.Struct, frozen=True):
    """The loop appended a user message of its own and goes on (a Stop hook blocked the stop: its reason)."""

    message: Message


class Compacted(msgspec.Struct, frozen=True):
    """An LLM summary rewrote the history (autocompact or `/compact`): `messages` replace it from now on."""

    messages: tuple[Message, ...]
    """The new history: boundary, re-injected context, summary, every user message verbatim, recent tail."""
    notice: str
    """One line for the user, e.g. `Compacted the conversation: ~81% → ~22% of the context window.`"""


class Notice(msgspec.Struct, frozen=True):
    """Something the user should know that is not model output (one line)."""

    text: str


class Terminal(msgspec.Struct, frozen=True):
    """The loop ended; always the last event."""

    reason: TerminalReason
    turns: int
    """Model calls made in this run."""
    error: str = ""
    """One-line description when reason is `error`."""
    context_limit: int | None = None
    """Set when the error was the model refusing a request longer than its window: the window it stated (0 when
    it did not say). The session then compacts and tries once more."""
    configuration: bool = False
    """The error is the user's setup (the server has no such model, or is not this kind of endpoint): exit 2."""


QueryEvent: TypeAlias = (
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
    | Terminal
)
