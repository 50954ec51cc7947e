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
    ThinkingDelta,
    ToolFinished,
    ToolResults,
    ToolStarted,
)
from .messages import ToolUseBlock, Usage, message_to_dict
from .permissions.policy import shell_quote
from .terminal_text import visible

OutputFormat = Literal["text", "json", "stream-json"]

WAITING_AFTER = 5.0
"""Seconds of silence from the model after which a terminal says that it is waiting (the REPL's spinner, the
`[waiting]` line of headless text output)."""

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
        """On a terminal: one `[waiting]` line on stderr whenever a model call has sent nothing for `after`
        seconds. Runs beside the turn (started as it starts, cancelled when it ends)."""
        import asyncio

        if not _is_terminal(self.err):
            return
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
            self.err.write("interrupted\n")
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
