"""One task, start to finish, without a person at the keyboard (`ram "task"`, `ram -p`).

Runs a single turn of a fresh Session, renders its events in the chosen output format, and returns the exit
code. Ctrl+C aborts the turn cleanly (the history stays valid); a second Ctrl+C exits at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from .app import PermissionOptions, build_session
from .config import ProviderConfig
from .events import AssistantTurn, Terminal, ToolFinished, ToolResults
from .messages import ToolUseBlock
from .output import (
    JsonRenderer,
    OutputFormat,
    Renderer,
    RunSummary,
    StreamJsonRenderer,
    TextRenderer,
    exit_code,
)
from .pricing import cost_usd
from .session import Session


def _describe(session: Session, use: ToolUseBlock) -> str:
    tool = session.tools.get(use.name)
    return tool.describe_call(use.input) if tool else ""


class Stopped:
    """Which signal stopped the run, if any (its exit code replaces the turn's)."""

    def __init__(self) -> None:
        self.exit_code: int | None = None


@contextlib.contextmanager
def interrupt_aborts_turn(session: Session) -> Iterator[Stopped]:
    """While a turn runs, Ctrl+C (SIGINT) or SIGTERM aborts it — the model stream, running tools and their process
    groups — and the run ends with 130 or 143; a second signal exits at once."""
    loop = asyncio.get_running_loop()
    stopped = Stopped()

    def on_signal(code: int) -> None:
        first = stopped.exit_code is None
        stopped.exit_code = code
        if not first or not session.abort_current_turn("interrupted" if code == 130 else "terminated"):
            sys.stderr.write("\nforced exit\n")
            sys.stderr.flush()
            raise SystemExit(code)

    installed = []
    for signum, code in ((signal.SIGINT, 130), (signal.SIGTERM, 143)):
        try:
            loop.add_signal_handler(signum, on_signal, code)
            installed.append(signum)
        except (NotImplementedError, RuntimeError):  # not the main thread, or no signal support
            pass
    try:
        yield stopped
    finally:
        for signum in installed:
            loop.remove_signal_handler(signum)


async def run_headless(
    config: ProviderConfig,
    task: str,
    *,
    max_turns: int = 20,
    output_format: OutputFormat = "text",
    permissions: PermissionOptions | None = None,
    resume: Path | None = None,
    cwd: Path | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Run `task` once and return the process exit code."""
    out = out or sys.stdout
    err = err or sys.stderr
    demo_pace = 0.012 if out.isatty() else 0.0  # the scripted demo streams at a readable pace on a terminal
    built = build_session(
        config,
        cwd=cwd or Path.cwd(),
        max_turns=max_turns,
        permissions=permissions,
        mock_chunk_delay=demo_pace,
        resume=resume,
    )
    session, provider = built.session, built.provider
    for warning in built.warnings:
        err.write(f"warning: {warning}\n")
    renderer: Renderer
    if output_format == "json":
        renderer = JsonRenderer(out)
    elif output_format == "stream-json":
        renderer = StreamJsonRenderer(out, session.session_id)
    else:
        renderer = TextRenderer(out, err, lambda use: _describe(session, use), stream=out.isatty())

    summary = RunSummary(session_id=session.session_id, model=provider.model)
    started = api_started = time.monotonic()
    api_seconds = 0.0
    terminal = Terminal("error", 0, "the turn ended without a result")
    stopped = Stopped()
    mcp = built.mcp
    try:
        mcp.start()
        for warning in await mcp.join(session.tools):
            err.write(f"warning: {warning}\n")
        if isinstance(renderer, StreamJsonRenderer):  # after MCP joined, so the tool list is complete
            manager = mcp.manager
            renderer.init(
                model=provider.model,
                provider=provider.name,
                cwd=str(session.context.cwd),
                tools=session.tools.names(),
                permission_mode=built.policy.mode,
                mcp_servers=[{"name": s.name, "status": s.state} for s in manager.status()] if manager else [],
            )
        attached, mention_warnings = await mcp.mentions(task)
        for warning in mention_warnings:
            err.write(f"warning: {warning}\n")
        with interrupt_aborts_turn(session) as stopped:
            async for event in session.run_turn(task, inject_before=attached):
                if isinstance(event, AssistantTurn):
                    api_seconds += time.monotonic() - api_started
                    summary.result = event.message.text
                elif isinstance(event, ToolResults):
                    api_started = time.monotonic()
                elif isinstance(event, ToolFinished) and event.denied:
                    use = event.tool_use
                    summary.permission_denials.append(
                        {"tool_name": use.name, "tool_use_id": use.id, "tool_input": dict(use.input)}
                    )
                elif isinstance(event, Terminal):
                    terminal = event
                renderer.event(event)
    finally:
        await mcp.aclose()
        await provider.aclose()
        built.recorder.close()
    summary.usage = session.totals.usage
    summary.total_cost_usd = cost_usd(provider.model, summary.usage)
    summary.duration_ms = round((time.monotonic() - started) * 1000)
    summary.duration_api_ms = round(api_seconds * 1000)
    renderer.finish(terminal, summary)
    return stopped.exit_code if stopped.exit_code is not None else exit_code(terminal)
