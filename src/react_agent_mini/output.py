"""Headless output: how loop events reach stdout and stderr in `text`, `json` and `stream-json` formats.

Field names follow Claude Code's `--output-format json|stream-json`, so scripts written for it work here:
a final `{"type": "result", "subtype", "is_error", "result", "num_turns", "session_id", "usage", ...}` object.
In `text`, the answer streams to stdout and one status line per tool call goes to stderr.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Literal, Protocol, TextIO

import msgspec

from .events import (
    AssistantTurn,
    Compacted,
    Notice,
    QueryEvent,
    StreamRetry,
    Terminal,
    TextDelta,
    ToolFinished,
    ToolResults,
    ToolStarted,
)
from .messages import ToolUseBlock, Usage, message_to_dict
from .terminal_text import visible

OutputFormat = Literal["text", "json", "stream-json"]

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_MAX_TURNS = 3
EXIT_ABORTED = 130

_SUBTYPES = {
    "completed": "success",
    "max_turns": "error_max_turns",
    "aborted": "error_during_execution",  # Claude Code has no subtype of its own for an interrupted run
    "error": "error_during_execution",
}
_EXIT_CODES = {
    "completed": EXIT_OK,
    "max_turns": EXIT_MAX_TURNS,
    "aborted": EXIT_ABORTED,
    "error": EXIT_ERROR,
}


def exit_code(terminal: Terminal) -> int:
    return _EXIT_CODES[terminal.reason]


def short(text: str, limit: int) -> str:
    """One line, at most `limit` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def tool_status(use: ToolUseBlock, label: str) -> str:
    """`[tool] Read: notes.txt`"""
    return f"[tool] {use.name}: {short(label, 80)}" if label else f"[tool] {use.name}"


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


def result_object(terminal: Terminal, summary: RunSummary) -> dict[str, Any]:
    """Claude Code's final `result` object."""
    out: dict[str, Any] = {
        "type": "result",
        "subtype": _SUBTYPES[terminal.reason],
        "is_error": terminal.reason != "completed",
        "duration_ms": summary.duration_ms,
        "duration_api_ms": summary.duration_api_ms,
        "num_turns": terminal.turns,
        "result": summary.result,
        "session_id": summary.session_id,
        "model": summary.model,
        "total_cost_usd": summary.total_cost_usd,
        "usage": summary.usage.to_dict(),
        "permission_denials": summary.permission_denials,
    }
    if terminal.error or terminal.reason == "aborted":
        out["error"] = terminal.error or "interrupted"
    return out


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
        if isinstance(event, TextDelta) and self.stream:
            self._write(event.text)
        elif isinstance(event, AssistantTurn):
            if not self.stream:
                self._write(event.message.text)
            self._close_line()
        elif isinstance(event, ToolStarted):
            self.err.write(self._show_err(tool_status(event.tool_use, self.describe(event.tool_use))) + "\n")
        elif isinstance(event, ToolFinished) and event.result.is_error:
            self.err.write(self._show_err(f"[tool] {event.tool_use.name} error — {short(event.result.content, 100)}\n"))
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

    def finish(self, terminal: Terminal, summary: RunSummary) -> None:
        self._close_line()
        if terminal.reason == "error":
            self.err.write(self._show_err(f"error: {terminal.error}\n"))
        elif terminal.reason == "max_turns":
            self.err.write(f"stopped: reached the limit of {terminal.turns} model calls (--max-turns)\n")
        elif terminal.reason == "aborted":
            self.err.write("interrupted\n")
        self.err.flush()


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
    """One JSON object per line: init, each message as it is appended, retries and notices, then the result."""

    def __init__(self, out: TextIO, session_id: str) -> None:
        self.out = out
        self.session_id = session_id

    def emit(self, obj: dict[str, Any]) -> None:
        self.out.write(json.dumps(obj, ensure_ascii=False) + "\n")
        self.out.flush()

    def init(
        self,
        *,
        model: str,
        provider: str,
        cwd: str,
        tools: list[str],
        permission_mode: str = "default",
        mcp_servers: list[dict[str, str]] | None = None,
    ) -> None:
        self.emit(
            {
                "type": "system",
                "subtype": "init",
                "session_id": self.session_id,
                "cwd": cwd,
                "model": model,
                "provider": provider,
                "tools": tools,
                "permissionMode": permission_mode,
                "mcp_servers": mcp_servers or [],
            }
        )

    def event(self, event: QueryEvent) -> None:
        if isinstance(event, AssistantTurn):
            self.emit(
                {
                    "type": "assistant",
                    "message": message_to_dict(event.message),
                    "session_id": self.session_id,
                }
            )
        elif isinstance(event, ToolResults):
            self.emit({"type": "user", "message": message_to_dict(event.message), "session_id": self.session_id})
        elif isinstance(event, StreamRetry):
            self.emit(
                {
                    "type": "system",
                    "subtype": "api_retry",
                    "attempt": event.attempt,
                    "max_retries": event.max_attempts - 1,
                    "retry_delay_ms": round(event.delay * 1000),
                    "error": event.reason,
                    "session_id": self.session_id,
                }
            )
        elif isinstance(event, Notice):
            self.emit({"type": "system", "subtype": "notice", "text": event.text, "session_id": self.session_id})
        elif isinstance(event, Compacted):
            self.emit(
                {
                    "type": "system",
                    "subtype": "compact_boundary",
                    "notice": event.notice,
                    "messages": len(event.messages),
                    "session_id": self.session_id,
                }
            )

    def finish(self, terminal: Terminal, summary: RunSummary) -> None:
        self.emit(result_object(terminal, summary))
