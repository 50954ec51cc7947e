"""One user message of the stream-json protocol: its `system/init`, the turn's lines and one `result` — or, for a
line starting with `/`, what the kit resolves it to (`kit.commands`): a command that runs without a turn answers at
once with its `result`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import msgspec

from ..events import AssistantTurn, Terminal, ToolResults
from ..host import Remark, SessionHost, TurnScope, Waiting
from ..kit.commands import Done, Send, Unknown, resolve
from ..kit.tally import denial, denied_call, init_info, over_budget
from ..messages import Message
from ..pricing import cost_usd
from .input import user_content
from .lines import InitInfo, TurnSummary
from .modes import Modes
from .writer import StreamJsonWriter


class Turns:
    """Runs the user messages of one session, one at a time."""

    def __init__(
        self,
        host: SessionHost,
        writer: StreamJsonWriter,
        modes: Modes,
        *,
        max_turns: int,
        max_budget_usd: float | None,
        complain: Callable[[str], None],
        gone: Callable[[], bool],
    ) -> None:
        self.host, self.writer, self.modes = host, writer, modes
        self.max_turns, self.max_budget_usd = max_turns, max_budget_usd
        self.complain, self.gone = complain, gone
        self.running = False
        self.interrupt_pending = False
        """An interrupt came before the turn's model call started: stop it as soon as it can be."""
        self.last_error = False
        """The last `result` was an error (the exit code says so)."""

    def interrupt(self, reason: str) -> None:
        """Stop the running turn (now, or at its next event if its model call has not started)."""
        if self.running and not self.host.interrupt(reason):
            self.interrupt_pending = True

    def init_info(self) -> InitInfo:
        return msgspec.structs.replace(init_info(self.host), permission_mode=self.modes.current())

    async def run(self, line: Mapping[str, Any]) -> None:
        """One user message: `system/init`, the turn's lines, one `result`."""
        host, writer = self.host, self.writer
        writer.model = host.model
        if writer.partial is not None:
            writer.partial.model = host.model
        message = line.get("message")
        content = user_content(message.get("content") if isinstance(message, Mapping) else None)
        started = time.monotonic()
        summary = TurnSummary(session_id=host.session_id, model=host.model, max_turns=self.max_turns)
        if content is None or not content.strip():  # refused as a UserPromptSubmit hook refuses a prompt
            self.complain("warning: stdin: a user message without text, answered with an error")
            writer.init(self.init_info())
            refused = Terminal("aborted", 0, "the user message has no text content; nothing was sent to the model")
            self.finish(refused, summary, started, 0.0)
            return
        inject: Sequence[Message] = []
        scope: TurnScope | None = None
        if not line.get("client_composed") and content.startswith("/"):
            command = await self.slash(content, summary, started)
            if command is None:
                return
            content, inject, scope = command
        if self.gone():  # the client went away while a command was being looked up: nobody waits for this turn
            return
        await self.turn(content, inject, scope, summary, started)

    async def turn(
        self, content: str, inject: Sequence[Message], scope: TurnScope | None, summary: TurnSummary, started: float
    ) -> None:
        host, writer = self.host, self.writer
        self.running, self.interrupt_pending = True, False
        terminal = Terminal("error", 0, "the turn ended without a result")
        api_seconds = 0.0
        try:
            if host.mcp.manager is not None:  # join the servers first, so that init lists their tools
                for warning in await host.mcp.join(host.session.tools):
                    self.complain(f"warning: {warning}")
            writer.init(self.init_info())  # at the start of the turn, before the model answers, as Claude Code
            api_started = time.monotonic()
            async for event in host.turn(content, inject=inject, scope=scope):
                if self.interrupt_pending and host.interrupt("interrupted by the client"):
                    self.interrupt_pending = False
                if isinstance(event, Remark):
                    self.complain(event.text)
                    continue
                if isinstance(event, Waiting):
                    continue
                if isinstance(event, AssistantTurn):
                    api_seconds += time.monotonic() - api_started
                    summary.result = event.message.text
                    if over_budget(host, self.max_budget_usd) and summary.over_budget is None:
                        summary.over_budget = self.max_budget_usd
                        host.interrupt("budget")
                elif isinstance(event, ToolResults):
                    api_started = time.monotonic()
                elif (use := denied_call(event)) is not None:
                    summary.permission_denials.append(denial(use))
                elif isinstance(event, Terminal):
                    terminal = event
                writer.event(event)
        except Exception as exc:  # a bug ends this turn with an error result, never the session
            host.repair()
            terminal = Terminal("error", terminal.turns, f"internal error: {type(exc).__name__}: {exc}")
        finally:
            self.running = False
        self.finish(terminal, summary, started, api_seconds)

    async def slash(
        self, text: str, summary: TurnSummary, started: float
    ) -> tuple[str, Sequence[Message], TurnScope | None] | None:
        """A command that runs without a turn (`/compact`) or cannot run answers here (None: done); one that
        becomes a turn gives its text, context and scope; anything else is sent as typed (`kit.commands`)."""
        outcome = await resolve(self.host, text)
        for note in outcome.notes if isinstance(outcome, Send | Done) else ():
            self.complain(note)
        if isinstance(outcome, Send):
            return outcome.text, outcome.context, outcome.scope
        if isinstance(outcome, Unknown):
            return text, [], None
        self.writer.init(self.init_info())
        if outcome.compacted is not None:
            self.writer.event(outcome.compacted)
        if outcome.kind == "builtin":
            summary.result = outcome.text
        terminal = Terminal("error", 0, outcome.text) if outcome.error else Terminal("completed", 0)
        self.finish(terminal, summary, started, 0.0)
        return None

    def finish(self, terminal: Terminal, summary: TurnSummary, started: float, api_seconds: float) -> None:
        """Write the `result` line."""
        host = self.host
        summary.model = host.model
        summary.usage = host.session.totals.usage
        summary.total_cost_usd = cost_usd(host.model, summary.usage)
        summary.duration_ms = round((time.monotonic() - started) * 1000)
        summary.duration_api_ms = round(api_seconds * 1000)
        result = self.writer.result(terminal, summary)
        self.last_error = bool(result["is_error"])
