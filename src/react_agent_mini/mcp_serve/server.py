"""The MCP server: two tools on the session host (this module loads the `mcp` package: only `ram mcp serve` imports
it).

- `ram(prompt)`: a new session in the server's folder runs `prompt` (a task, or `/command args`) as one turn; the
  result carries its `session_id`.
- `ram_reply(session_id, prompt)`: the next turn of that session — still open in this server, or resumed from its
  saved transcript.

Each session keeps its host until the server ends; turns of one session run one after another. Permission questions
go to the client by elicitation when it supports it (`asker`), else what would be asked is refused.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import msgspec
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from .. import __version__, transcript
from ..app import SessionOptions
from ..config import ProviderConfig
from ..host import SessionHost
from ..kit.setup import setup_report
from ..terminal_text import visible
from .asker import ElicitingAsker, can_elicit
from .runs import run_turn


class Open(msgspec.Struct):
    """A session this server holds."""

    host: SessionHost
    asker: ElicitingAsker | None
    lock: asyncio.Lock


class Sessions:
    """The sessions of one client, by id."""

    def __init__(self, config: ProviderConfig, options: SessionOptions) -> None:
        self.config, self.options = config, options
        self.open: dict[str, Open] = {}

    async def run(self, context: Any, prompt: str, session_id: str | None = None) -> dict[str, Any]:
        """One turn (in a new session when `session_id` is None); `ValueError` for what the client must fix."""
        if not prompt.strip():
            raise ValueError("the prompt is empty")
        held = self.open.get(session_id) if session_id is not None else None
        if held is None:
            held = await self._start(context, session_id)
        async with held.lock:
            if held.asker is not None:
                held.asker.context = context
            try:
                return await run_turn(held.host, prompt, complain)
            finally:
                if held.asker is not None:
                    held.asker.context = None

    async def _start(self, context: Any, session_id: str | None) -> Open:
        options = self.options
        if session_id is not None:
            saved = transcript.sessions_dir(options.cwd.resolve()) / f"{session_id}.jsonl"
            if not saved.is_file():
                raise ValueError(f"no session {session_id!r} here (ram_reply continues a session ram started)")
            options = msgspec.structs.replace(options, resume=saved)
        asker = ElicitingAsker() if can_elicit(context) else None
        host = await asyncio.to_thread(SessionHost.build, self.config, options, asker=asker)
        report = setup_report(host, can_ask=asker is not None)
        for line in report.lines:
            complain(line)
        if report.refused:  # fail closed: nobody can be asked, so nothing may run
            await host.aclose()
            raise ValueError(report.refused)
        host.start()
        held = self.open[host.session_id] = Open(host, asker, asyncio.Lock())
        return held

    async def aclose(self) -> None:
        for held in list(self.open.values()):
            await held.host.aclose()
        self.open.clear()


def build_server(sessions: Sessions) -> MCPServer:
    """The `mcp` package's server with ram's tools."""
    server = MCPServer("ram", version=__version__, log_level="WARNING")  # stderr: our lines, not each request

    async def ram(prompt: str, ctx: Context) -> dict[str, Any]:
        try:
            return await sessions.run(ctx, prompt)
        except ValueError as exc:
            raise ToolError(str(exc)) from None

    async def ram_reply(session_id: str, prompt: str, ctx: Context) -> dict[str, Any]:
        try:
            return await sessions.run(ctx, prompt, session_id)
        except ValueError as exc:
            raise ToolError(str(exc)) from None

    server.tool(
        description=(
            f"Run a task with ram, a coding agent, in {Path.cwd()}: it reads, edits and runs what the task needs "
            "and answers. Returns the answer and a session_id; pass it to ram_reply to continue."
        )
    )(ram)
    server.tool(description="Continue a ram session (the session_id a ram call returned) with another prompt.")(
        ram_reply
    )
    return server


def complain(line: str) -> None:
    sys.stderr.write(visible(line) + "\n")
    sys.stderr.flush()
