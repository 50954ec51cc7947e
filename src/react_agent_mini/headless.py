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
from pathlib import Path
from typing import TextIO

from .app import PermissionOptions, build_session
from .config import ProviderConfig
from .events import AssistantTurn, Terminal, ToolResults
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
from .session import Session


def _describe(session: Session, use: ToolUseBlock) -> str:
    tool = session.tools.get(use.name)
    return tool.describe_call(use.input) if tool else ""


@contextlib.contextmanager
def interrupt_aborts_turn(session: Session):  # type: ignore[no-untyped-def]
    """While a turn runs, Ctrl+C aborts it; a second Ctrl+C exits immediately with 130."""
    loop = asyncio.get_running_loop()
    presses = 0

    def on_sigint() -> None:
        nonlocal presses
        presses += 1
        if presses > 1 or not session.abort_current_turn("interrupted"):
            sys.stderr.write("\nforced exit\n")
            sys.stderr.flush()
            raise SystemExit(130)

    try:
        loop.add_signal_handler(signal.SIGINT, on_sigint)
        installed = True
    except (NotImplementedError, RuntimeError):  # not the main thread, or no signal support
        installed = False
    try:
        yield
    finally:
        if installed:
            loop.remove_signal_handler(signal.SIGINT)


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
    mcp = built.mcp
    try:
        mcp.start()
        for warning in await mcp.join(session.tools):
            err.write(f"warning: {warning}\n")
        if isinstance(renderer, StreamJsonRenderer):  # after MCP joined, so the tool list is complete
            renderer.init(
                model=provider.model, provider=provider.name, cwd=str(session.context.cwd), tools=session.tools.names()
            )
        attached, mention_warnings = await mcp.mentions(task)
        for warning in mention_warnings:
            err.write(f"warning: {warning}\n")
        with interrupt_aborts_turn(session):
            async for event in session.run_turn(task, inject_before=attached):
                if isinstance(event, AssistantTurn):
                    api_seconds += time.monotonic() - api_started
                    summary.result = event.message.text
                elif isinstance(event, ToolResults):
                    api_started = time.monotonic()
                elif isinstance(event, Terminal):
                    terminal = event
                renderer.event(event)
    finally:
        await mcp.aclose()
        await provider.aclose()
        built.recorder.close()
    summary.usage = session.totals.usage
    summary.duration_ms = round((time.monotonic() - started) * 1000)
    summary.duration_api_ms = round(api_seconds * 1000)
    renderer.finish(terminal, summary)
    return exit_code(terminal)
