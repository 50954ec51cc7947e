"""`!command` at the prompt: run a shell command yourself, as Claude Code's bash mode does. It is your own command,
so no permission question is asked and no sandbox applies (as the shell you started `ram` from). It runs in the
session's directory with bash; its output is shown, and the command and its output join the conversation as
Claude Code adds them — two user messages, `<bash-input>COMMAND</bash-input>` and
`<bash-stdout>OUT</bash-stdout><bash-stderr>ERR</bash-stderr>` — so the model sees them with your next message.
Nothing is sent now: no model call is made. Ctrl+C stops the command (its whole process group).

What joins the conversation is cut to `KEEP_CHARS` of each stream (the middle dropped, as the Bash tool's output
is), so one chatty command cannot fill the context window.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable
from pathlib import Path

from ..messages import Message, TextBlock

KEEP_CHARS = 30_000
"""Characters of each stream that join the conversation (Claude Code's Bash output limit)."""


def clipped(text: str, keep: int = KEEP_CHARS) -> str:
    """`text`, its middle dropped past `keep` characters (saying how much)."""
    if len(text) <= keep:
        return text
    half = keep // 2
    return f"{text[:half]}\n… [{len(text) - 2 * half:,} characters dropped] …\n{text[-half:]}"


def shell_messages(command: str, stdout: str, stderr: str) -> list[Message]:
    """The two user messages Claude Code adds for a `!command`."""
    out, err = clipped(stdout.rstrip("\n")), clipped(stderr.rstrip("\n"))
    return [
        Message("user", (TextBlock(f"<bash-input>{command}</bash-input>"),)),
        Message("user", (TextBlock(f"<bash-stdout>{out}</bash-stdout><bash-stderr>{err}</bash-stderr>"),)),
    ]


async def run_shell(command: str, cwd: Path) -> tuple[str, str, int]:
    """Run `command` with bash in `cwd`: (stdout, stderr, exit code). Cancelled: its process group is killed."""
    process = await asyncio.create_subprocess_exec(
        "bash",
        "-c",
        command,
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    try:
        out, err = await process.communicate()
    except asyncio.CancelledError:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            await asyncio.shield(process.wait())
        raise
    code = process.returncode if process.returncode is not None else -1
    return out.decode("utf-8", errors="replace"), err.decode("utf-8", errors="replace"), code


async def shell_escape(line: str, cwd: Path, add: Callable[[Message], None], say: Callable[[str, str], None]) -> None:
    """Run the `!command` of `line`, show its output (`say`) and `add` the two messages to the conversation."""
    command = line[1:].strip()
    say(f"! {command}", "bold")
    try:
        out, err, code = await run_shell(command, cwd)
    except OSError as exc:
        say(f"error: cannot run bash: {exc.strerror or exc}", "red")
        return
    if out.strip():
        say(out.rstrip("\n"), "")
    if err.strip():
        say(err.rstrip("\n"), "red")
    if code != 0:
        say(f"(exit code {code})", "dim")
    for message in shell_messages(command, out, err):
        add(message)
    say("(the command and its output join the conversation: the model sees them with your next message)", "dim")
