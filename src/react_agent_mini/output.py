"""Headless output: how loop events reach stdout and stderr in `text`, `json` and `stream-json` formats.

Field names follow Claude Code's `--output-format json|stream-json`, so scripts written for it work here:
a final `{"type": "result", "subtype", "is_error", "result", "num_turns", "session_id", "usage", ...}` object.
In `text`, the answer streams to stdout and one status line per tool call goes to stderr.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, Protocol, TextIO

import msgspec

from .events import (
    AssistantTurn,
    Compacted,
    Notice,
    QueryEvent,
    StopReason,
    StreamRetry,
    Terminal,
    TextDelta,
    ThinkingDelta,
    ToolFinished,
    ToolProgress,
    ToolResults,
    ToolStarted,
)
from .messages import ToolUseBlock, Usage
from .permissions.policy import shell_quote
from .terminal_text import visible

if TYPE_CHECKING:
    from .stream_json.lines import InitInfo, TurnSummary

OutputFormat = Literal["text", "json", "stream-json"]

WAITING_AFTER = 5.0
"""Seconds of silence from the model after which a terminal says that it is waiting (the REPL's spinner, the
`[waiting]` line of headless text output)."""
WAITING_AFTER_OFF_TERMINAL = 15.0
"""The same for headless text output whose stderr is a file or a pipe (a log, a CI job): later, as short waits are
normal and each line stays."""

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_MAX_TURNS = 3
EXIT_ABORTED = 130

_EXIT_CODES = {
    "completed": EXIT_OK,
    "max_turns": EXIT_MAX_TURNS,
    "aborted": EXIT_ABORTED,
    "error": EXIT_ERROR,
}


def exit_code(terminal: Terminal) -> int:
    if terminal.reason == "error" and terminal.configuration:  # e.g. a model the server does not have
        return EXIT_USAGE
    if terminal.reason == "aborted" and terminal.error:  # refused rather than interrupted (a UserPromptSubmit hook)
        return EXIT_ERROR
    return _EXIT_CODES[terminal.reason]


def short(text: str, limit: int) -> str:
    """One line, at most `limit` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def tool_status(use: ToolUseBlock, label: str) -> str:
    """`[tool] Read: notes.txt`"""
    return f"[tool] {use.name}: {short(label, 80)}" if label else f"[tool] {use.name}"


class DenialFix(msgspec.Struct, frozen=True):
    """What would let a rerun make one call the permission check denied (checked against the real decision)."""

    rules: tuple[str, ...] = ()
    """Narrow allow rules that would allow exactly this call (those an "always" answer records); empty: none can."""
    allow_write: bool = False
    """`ALLOW_WRITE=1` would allow it."""


class RunSummary(msgspec.Struct):
    """What the final result object reports."""

    session_id: str
    model: str
    usage: Usage = msgspec.field(default_factory=Usage)
    result: str = ""
    """Text of the last assistant message."""
    duration_ms: int = 0
    duration_api_ms: int = 0
    total_cost_usd: float | None = None
    """At list price, when the model's price is known."""
    permission_denials: list[dict[str, Any]] = msgspec.field(default_factory=list)
    """Calls the permission check refused: `tool_name`, `tool_use_id`, `tool_input` (Claude Code's shape)."""
    denial_fixes: list[DenialFix] = msgspec.field(default_factory=list)
    """For each of `permission_denials`, what would allow it on a rerun (text output sums them up at the end)."""
    stop_reason: StopReason | None = None
    """Why the last model call stopped."""
    max_turns: int = 0
    """The limit, for the max-turns error text."""
    over_budget: float | None = None
    """The `--max-budget-usd` limit the run's cost reached (None: not reached, or no limit)."""


def denials_line(fixes: list[DenialFix]) -> str:
    """`2 actions were denied — rerun with ALLOW_WRITE=1 or --allowed-tools "Edit(./a.py),Bash(rm:*)"`"""
    count = len(fixes)
    head = f"{count} action was denied" if count == 1 else f"{count} actions were denied"
    fixable = [fix for fix in fixes if fix.rules or fix.allow_write]
    if not fixable:
        them = "it" if count == 1 else "them"
        return f"{head} (see above); no --allowed-tools rule or ALLOW_WRITE=1 would allow {them}"
    by_write = all(fix.allow_write for fix in fixable)
    by_rules = all(fix.rules for fix in fixable)
    # when neither covers every call alone, the rules are for the calls ALLOW_WRITE=1 does not cover
    ruled = fixable if by_rules else [fix for fix in fixable if not fix.allow_write]
    flag = "--allowed-tools " + shell_quote(",".join(dict.fromkeys(rule for fix in ruled for rule in fix.rules)))
    if by_write and by_rules:
        how = f"ALLOW_WRITE=1 or {flag}"
    elif by_write:
        how = "ALLOW_WRITE=1"
    elif by_rules:
        how = flag
    else:
        how = f"ALLOW_WRITE=1 {flag}"
    part = "" if len(fixable) == count else f" to allow {len(fixable)} of them"
    return f"{head} — rerun with {how}{part}"


def result_object(terminal: Terminal, summary: RunSummary) -> dict[str, Any]:
    """Claude Code's final `result` object (see `stream_json.lines.result_line`)."""
    from .stream_json.lines import result_line

    return result_line(terminal, turn_summary(summary))


def turn_summary(summary: RunSummary) -> TurnSummary:
    from .stream_json.lines import TurnSummary

    return TurnSummary(
        session_id=summary.session_id,
        model=summary.model,
        usage=summary.usage,
        result=summary.result,
        stop_reason=summary.stop_reason,
        duration_ms=summary.duration_ms,
        duration_api_ms=summary.duration_api_ms,
        total_cost_usd=summary.total_cost_usd,
        permission_denials=summary.permission_denials,
        max_turns=summary.max_turns,
        over_budget=summary.over_budget,
    )


class Renderer(Protocol):
    def event(self, event: QueryEvent) -> None: ...
    def finish(self, terminal: Terminal, summary: RunSummary) -> None: ...


class TextRenderer:
    """Answer text to stdout as it streams; tool status, notices and errors to stderr."""

    def __init__(
        self, out: TextIO, err: TextIO, describe: Callable[[ToolUseBlock], str], *, stream: bool = True
    ) -> None:
        self.out, self.err = out, err
        self.describe = describe
        """The status-line label of a call (the caller knows the tools)."""
        self.stream = stream
        """True: write text as it arrives (a terminal). False: write each complete message once (a pipe), so a
        retried stream never leaves a partial answer in the output."""
        self._line_open = False
        self._denials = 0
        self._quiet_since: float | None = None
        """Since when a model call has been waiting with nothing from the model (None: none is waiting)."""
        self._waiting_shown = False
        self._show_out = visible if _is_terminal(out) else str
        self._show_err = visible if _is_terminal(err) else str
        """What reaches a terminal has its control characters made visible; a pipe gets the text as it is."""

    def _write(self, text: str) -> None:
        if text:
            self.out.write(self._show_out(text))
            self.out.flush()
            self._line_open = not text.endswith("\n")

    def _close_line(self) -> None:
        if self._line_open:
            self.out.write("\n")
            self.out.flush()
            self._line_open = False

    def event(self, event: QueryEvent) -> None:
        if isinstance(event, TextDelta | ThinkingDelta | StreamRetry | ToolResults | Compacted):
            self._quiet_since, self._waiting_shown = time.monotonic(), False  # a model call is under way
        elif isinstance(event, AssistantTurn | Terminal):
            self._quiet_since = None
        if isinstance(event, TextDelta) and self.stream:
            self._write(event.text)
        elif isinstance(event, AssistantTurn):
            if not self.stream:
                self._write(event.message.text)
            self._close_line()
        elif isinstance(event, ToolStarted):
            self.err.write(self._show_err(tool_status(event.tool_use, self.describe(event.tool_use))) + "\n")
        elif isinstance(event, ToolFinished) and event.denied:
            self._denied(event)
        elif isinstance(event, ToolFinished) and event.result.is_error:
            self.err.write(self._show_err(f"[tool] {event.tool_use.name} error — {short(event.result.content, 100)}\n"))
        elif isinstance(event, ToolProgress):  # a subagent's calls, indented under its Agent line
            inner = event.event
            if isinstance(inner, ToolStarted):
                self.err.write(self._show_err("  " + tool_status(inner.tool_use, self.describe(inner.tool_use))) + "\n")
            elif isinstance(inner, ToolFinished) and inner.result.is_error:
                self.err.write(
                    self._show_err(f"  [tool] {inner.tool_use.name} error — {short(inner.result.content, 100)}\n")
                )
        elif isinstance(event, Notice):
            self._close_line()
            self.err.write(self._show_err(f"[note] {event.text}\n"))
        elif isinstance(event, Compacted):
            self._close_line()
            self.err.write(f"[compact] {event.notice}\n")
        elif isinstance(event, StreamRetry):
            if event.discarded_output and self.stream and self._line_open:
                self._write(" [interrupted; retrying]")
            self._close_line()
            self.err.write(
                f"[retry] {short(event.reason, 120)} — attempt {event.attempt}/{event.max_attempts} "
                f"in {event.delay:.1f}s\n"
            )
        self.err.flush()

    async def watch_silence(self, after: float) -> None:
        """One `[waiting]` line on stderr whenever a model call (from the request on: the wait for the headers
        counts) has sent nothing for `after` seconds on a terminal, `WAITING_AFTER_OFF_TERMINAL` elsewhere. Runs
        beside the turn (started as it starts, cancelled when it ends)."""
        import asyncio

        if not _is_terminal(self.err):
            after = max(after, WAITING_AFTER_OFF_TERMINAL)
        self._quiet_since, self._waiting_shown = time.monotonic(), False
        while True:
            await asyncio.sleep(min(1.0, after / 4))
            since = self._quiet_since
            if since is None or self._waiting_shown or time.monotonic() - since < after:
                continue
            self._waiting_shown = True
            self._close_line()
            self.err.write(f"[waiting] waiting for the model… (nothing received for {time.monotonic() - since:.0f}s)\n")
            self.err.flush()

    def _denied(self, event: ToolFinished) -> None:
        """The first denial in full (it says how to allow such calls); later ones by their first sentence (what
        was denied and why), as the summary at the end says how to allow them all."""
        self._denials += 1
        reason = " ".join(event.result.content.removeprefix("Permission denied: ").split())
        if self._denials > 1:
            reason = short(_FIRST_SENTENCE.sub(r"\1", reason), 160)
        self.err.write(self._show_err(f"[tool] {event.tool_use.name} denied — {reason}") + "\n")

    def finish(self, terminal: Terminal, summary: RunSummary) -> None:
        self._close_line()
        if terminal.reason == "error":
            self.err.write(self._show_err(f"error: {terminal.error}\n"))
        elif terminal.reason == "max_turns":
            self.err.write(f"stopped: reached the limit of {terminal.turns} model calls (--max-turns)\n")
        elif terminal.reason == "aborted":
            self.err.write(self._show_err(f"stopped: {terminal.error}\n") if terminal.error else "interrupted\n")
        if summary.denial_fixes:
            self.err.write(self._show_err(denials_line(summary.denial_fixes)) + "\n")
        self.err.flush()


_FIRST_SENTENCE = re.compile(r"^(.+?\.)\s+[A-Z].*$")


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False


class JsonRenderer:
    """Nothing until the end, then one result object on stdout."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def event(self, event: QueryEvent) -> None:
        return None

    def finish(self, terminal: Terminal, summary: RunSummary) -> None:
        self.out.write(json.dumps(result_object(terminal, summary), ensure_ascii=False) + "\n")
        self.out.flush()


class StreamJsonRenderer:
    """One JSON object per line, as Claude Code writes them: init, each message as it is appended (and, with
    `partial`, `stream_event`s as text arrives), retries and notices, then the result."""

    def __init__(self, out: TextIO, session_id: str, model: str, *, partial: bool = False) -> None:
        from .stream_json.writer import StreamJsonWriter

        self.out = out
        self.writer = StreamJsonWriter(self.emit, session_id, model, partial=partial)

    def emit(self, obj: dict[str, Any]) -> None:
        self.out.write(json.dumps(obj, ensure_ascii=False) + "\n")
        self.out.flush()

    def init(self, info: InitInfo) -> None:
        self.writer.init(info)

    def event(self, event: QueryEvent) -> None:
        self.writer.event(event)

    def finish(self, terminal: Terminal, summary: RunSummary) -> None:
        self.writer.result(terminal, turn_summary(summary))
