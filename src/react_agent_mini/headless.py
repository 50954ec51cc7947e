"""One task, start to finish, without a person at the keyboard (`ram "task"`, `ram -p`).

Runs a single turn on a `SessionHost`, renders its events in the chosen output format, and returns the exit
code. Ctrl+C, SIGTERM or SIGHUP abort the turn cleanly (the history stays valid) or, before it starts, stop the
MCP servers and end the run (130, 143, 129); a second signal exits at once (see `stop_signals`).
"""

from __future__ import annotations

import asyncio
import sys
import time
from typing import TYPE_CHECKING, TextIO

import msgspec

from .app import SessionOptions
from .config import ProviderConfig
from .events import AssistantTurn, Terminal, ToolResults
from .host import Remark, SessionHost, Waiting
from .kit.commands import Done, Send, is_command, resolve
from .kit.setup import setup_report
from .kit.tally import budget_warning, denial, denied_call, init_info, over_budget
from .messages import Message, ToolUseBlock
from .output import (
    EXIT_USAGE,
    WAITING_AFTER,
    DenialFix,
    JsonRenderer,
    OutputFormat,
    Renderer,
    RunSummary,
    StreamJsonRenderer,
    TextRenderer,
    exit_code,
)
from .permissions.policy import Allow, PermissionPolicy
from .pricing import cost_usd
from .session import Session
from .stop_signals import stop_on_signals, was_stopped
from .terminal_text import visible

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, Sequence

    from .host import HostEvent


def _describe(session: Session, use: ToolUseBlock) -> str:
    tool = session.tools.get(use.name)
    return tool.describe_call(use.input) if tool else ""


async def _fix_for(host: SessionHost, use: ToolUseBlock) -> DenialFix:
    """What would allow a denied call on a rerun: the narrow rules an "always" answer records, and ALLOW_WRITE=1,
    each kept only if the real decision then allows the call (so never for a deny rule or plan mode)."""
    policy, tool = host.policy, host.session.tools.get(use.name)
    if tool is None:
        return DenialFix()

    async def allows(rules: tuple[str, ...], allow_write: bool) -> bool:
        trial = policy.rules.copy()
        for text in rules:
            trial.add("allow", text, "cli")
        judge = PermissionPolicy(policy.root, policy.mode, trial, None, allow_write=allow_write, shell=policy.shell)
        try:
            return isinstance(await judge.decide(tool, use.input), Allow)
        except Exception:  # an input that defeats the check was refused; nothing to suggest for it
            return False

    rules = policy.rules_to_allow(tool, use.input)
    by_rules = bool(rules) and await allows(rules, policy.allow_write)
    return DenialFix(rules if by_rules else (), await allows((), True))


async def run_headless(
    config: ProviderConfig,
    task: str,
    options: SessionOptions,
    *,
    output_format: OutputFormat = "text",
    partial: bool = False,
    max_budget_usd: float | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Run `task` once and return the process exit code. `partial`: stream-json also carries `stream_event`s;
    `max_budget_usd`: stop once the run's cost at list price reaches it (an error)."""
    out = out or sys.stdout
    err = err or sys.stderr
    if out.isatty():  # the scripted demo streams at a readable pace on a terminal
        options = msgspec.structs.replace(options, mock_chunk_delay=0.012)
    host = SessionHost.build(config, options)
    session = host.session
    report = setup_report(host, can_ask=False)
    for line in [*report.lines, budget_warning(host, max_budget_usd)]:
        if line:
            err.write(f"{visible(line)}\n")
    if report.refused:  # fail closed: the rules are unknown, so nothing may run
        await host.aclose()
        return EXIT_USAGE
    renderer: Renderer
    if output_format == "json":
        renderer = JsonRenderer(out)
    elif output_format == "stream-json":
        renderer = StreamJsonRenderer(out, session.session_id, host.model, partial=partial)
    else:
        renderer = TextRenderer(out, err, lambda use: _describe(session, use), stream=out.isatty())

    summary = RunSummary(session_id=session.session_id, model=host.model, max_turns=options.max_turns)
    started = api_started = time.monotonic()
    api_seconds = 0.0
    terminal = Terminal("error", 0, "the turn ended without a result")
    watcher: asyncio.Future[None] | None = None
    announced = False
    reasons = {130: "interrupted", 143: "terminated", 129: "hung up"}
    with stop_on_signals(lambda code: host.interrupt(reasons[code])) as stopped:
        try:
            async with host:
                text, scope, typed = task, None, True  # a plain task: its @files attach
                inject: Sequence[Message] = ()
                outcome = await resolve(host, task) if is_command(task) else None
                for note in outcome.notes if isinstance(outcome, Send | Done) else ():
                    err.write(f"{visible(note)}\n")
                if isinstance(outcome, Send):  # /init, a custom command, an MCP prompt, a skill
                    text, inject, scope, typed = outcome.text, outcome.context, outcome.scope, False
                elif isinstance(outcome, Done):  # /compact, or a command that cannot run
                    text = ""
                    terminal = _done(host, outcome, summary, renderer)
                if text and isinstance(renderer, TextRenderer):  # says so when the model is silent (from the request)
                    after = min(WAITING_AFTER, config.stream_idle_timeout / 2)
                    watcher = asyncio.ensure_future(renderer.watch_silence(after))
                async for event in host.turn(text, inject=inject, scope=scope, files=typed) if text else _nothing():
                    if isinstance(event, Remark):
                        err.write(f"{visible(event.text)}\n")
                        continue
                    if isinstance(event, Waiting):
                        continue
                    if not announced:  # after MCP joined, so the tool list is complete
                        announced = True
                        if isinstance(renderer, StreamJsonRenderer):
                            renderer.init(init_info(host))
                    if isinstance(event, AssistantTurn):
                        api_seconds += time.monotonic() - api_started
                        summary.result = event.message.text
                        summary.stop_reason = event.stop_reason
                        if over_budget(host, max_budget_usd) and summary.over_budget is None:
                            summary.over_budget = max_budget_usd
                            host.interrupt("budget")
                    elif isinstance(event, ToolResults):
                        api_started = time.monotonic()
                    elif (use := denied_call(event)) is not None:  # a subagent's denials count too
                        summary.permission_denials.append(denial(use))
                        summary.denial_fixes.append(await _fix_for(host, use))
                    elif isinstance(event, Terminal):
                        terminal = event
                    renderer.event(event)
        except asyncio.CancelledError:  # a signal before or between the turn's steps: stop everything, then end
            if not was_stopped(stopped):
                raise
            terminal = Terminal("aborted", 0)
        finally:
            if watcher is not None:
                watcher.cancel()
    summary.model = host.model
    summary.usage = session.totals.usage
    summary.total_cost_usd = cost_usd(host.model, summary.usage)
    summary.duration_ms = round((time.monotonic() - started) * 1000)
    summary.duration_api_ms = round(api_seconds * 1000)
    if summary.over_budget is not None:
        from .stream_json.lines import budget_error

        terminal = Terminal("error", terminal.turns, f"{budget_error(summary.over_budget)} (--max-budget-usd)")
    renderer.finish(terminal, summary)
    return stopped.exit_code if stopped.exit_code is not None else exit_code(terminal)


def _done(host: SessionHost, done: Done, summary: RunSummary, renderer: Renderer) -> Terminal:
    """A command that ran without a turn (`/compact`) or could not run: its line is the result."""
    if isinstance(renderer, StreamJsonRenderer):
        renderer.init(init_info(host))
    if done.compacted is not None:
        renderer.event(done.compacted)
    if done.kind == "builtin":
        summary.result = done.text
    if done.error:
        return Terminal("error", 0, done.text)
    if done.compacted is None and isinstance(renderer, TextRenderer):  # "Nothing to compact yet", where the
        renderer.out.write(f"{done.text}\n")  # answer would be
    return Terminal("completed", 0)


async def _nothing() -> AsyncGenerator[HostEvent, None]:
    return
    yield
