"""Bash in the client's terminal: `terminal/create`, then `terminal/wait_for_exit` and `terminal/output`,
`terminal/kill` on a timeout or a cancelled turn, and `terminal/release` in every case.

The command runs as the built-in Bash runs it:
- `/bin/bash -c` in the workspace;
- the working directory carries over between calls (an EXIT trap records where bash ended, in a temp file; the
  editor runs on this machine);
- without the credentials ram uses (`env -u NAME …`, because a client's terminal can add variables but not
  remove them);
- pagers off, and git never prompts.

Same name, schema and description as the built-in Bash. Permission is checked before it runs, as for ours. The
tool's card embeds the terminal, so the editor shows the output live. The model reads the output, at most the
last `OUTPUT_BYTES` (the client drops the oldest). Then comes `Exit code N`, `Killed by signal X` or the timeout
notice. The command does not run in ram's own sandbox: the editor runs it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from collections.abc import Awaitable, Mapping
from pathlib import Path
from typing import Any

import msgspec
from acp import RequestError
from acp.helpers import update_tool_call
from acp.schema import EnvVariable, TerminalToolCallContent

from ..tools.base import ModelTool, ToolContext, ToolOutput
from ..tools.builtin.bash import (
    MAX_TIMEOUT_MS,
    NO_OUTPUT,
    BashArgs,
    BashTool,
    bash_path,
    command_script,
    record_cwd,
    starting_dir,
)
from .link import ClientLink

OUTPUT_BYTES = 60_000
"""What the client keeps of a command's output (as much as the built-in Bash keeps of stdout and stderr)."""
QUIET = {"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"}


class ClientBash(ModelTool[BashArgs]):
    """Bash, in the editor's terminal."""

    name = BashTool.name
    description = BashTool.description
    args_model = BashArgs
    read_only = False
    concurrency_safe = False
    status_field = "command"

    def __init__(self, link: ClientLink) -> None:
        self.link = link
        self._cleanups: set[asyncio.Task[Any]] = set()

    def validate(self, raw: Mapping[str, Any]) -> BashArgs:
        """As the built-in Bash: a timeout above the maximum is clamped to it, not refused."""
        args = super().validate(raw)
        return msgspec.structs.replace(args, timeout=min(args.timeout, MAX_TIMEOUT_MS))

    async def call(self, args: BashArgs, ctx: ToolContext) -> ToolOutput:
        notes: list[str] = []
        start = starting_dir(ctx, notes)
        fd, name = tempfile.mkstemp(prefix="ram-bash-cwd-")
        os.close(fd)
        cwd_file = Path(name)
        try:
            output = await self._run(args, ctx, start, cwd_file)
            if not isinstance(output, ToolOutput):
                record_cwd(ctx, cwd_file, notes)
                text, failed = output
                return ToolOutput("\n\n".join([text, *notes]) if notes else text, is_error=failed)
            return output
        finally:
            with contextlib.suppress(OSError):
                cwd_file.unlink()

    async def _run(
        self, args: BashArgs, ctx: ToolContext, start: Path, cwd_file: Path
    ) -> ToolOutput | tuple[str, bool]:
        link, session = self.link, self.link.session_id
        withheld = [word for name in sorted(ctx.shell.withheld) for word in ("-u", name)]
        try:
            created = await link.conn.create_terminal(
                session_id=session,
                command="env",
                args=[*withheld, bash_path(), "-c", command_script(args.command, cwd_file)],
                env=[EnvVariable(name=k, value=v) for k, v in QUIET.items()],
                cwd=str(start),
                output_byte_limit=OUTPUT_BYTES,
            )
        except (RequestError, ConnectionError) as exc:
            return ToolOutput(f"Could not start the command in the editor's terminal: {exc}", is_error=True)
        terminal = created.terminal_id
        link.terminals[ctx.call_id] = terminal
        timed_out, finished = False, False
        try:
            with contextlib.suppress(RequestError, ConnectionError):  # the card still works without it
                embed = TerminalToolCallContent(type="terminal", terminal_id=terminal)
                await link.conn.session_update(
                    session_id=session, update=update_tool_call(ctx.call_id, status="in_progress", content=[embed])
                )
            try:
                async with asyncio.timeout(args.timeout / 1000):
                    await link.conn.wait_for_terminal_exit(session_id=session, terminal_id=terminal)
            except TimeoutError:
                timed_out = True
                await link.conn.kill_terminal(session_id=session, terminal_id=terminal)
            result = await link.conn.terminal_output(session_id=session, terminal_id=terminal)
            finished = True
        except (RequestError, ConnectionError) as exc:
            return ToolOutput(f"The editor's terminal failed: {exc}", is_error=True)
        finally:
            if not finished:  # cancelled (or failed): nothing may go on running
                self._later(link.conn.kill_terminal(session_id=session, terminal_id=terminal))
            self._later(link.conn.release_terminal(session_id=session, terminal_id=terminal))
        status = result.exit_status
        code = status.exit_code if status is not None else None
        signal = status.signal if status is not None else None
        text = result.output.rstrip("\n") or NO_OUTPUT
        if result.truncated:
            text = (
                f"[… the start of the output was dropped: the terminal keeps the last {OUTPUT_BYTES:,} bytes]\n{text}"
            )
        lines = [text]
        if timed_out:
            lines.append(f"Command timed out after {args.timeout} ms; it was killed.")
        elif signal:
            lines.append(f"Killed by signal {signal}")
        elif code:
            lines.append(f"Exit code {code}")
        return "\n\n".join(lines), bool(timed_out or signal or code)

    def _later(self, step: Awaitable[Any]) -> None:
        """Run a clean-up request to its end even when this call is being cancelled."""

        async def quietly() -> None:
            with contextlib.suppress(Exception):
                await step

        task = asyncio.ensure_future(quietly())
        self._cleanups.add(task)
        task.add_done_callback(self._cleanups.discard)
