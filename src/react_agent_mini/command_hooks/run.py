"""One command hook: run it with the event's JSON on stdin, and read its answer as Claude Code does.

The command runs under `/bin/sh -c` in the workspace, in a process group of its own, with the environment Bash
commands get plus `CLAUDE_PROJECT_DIR`. Its answer:
- exit 0: stdout that is a JSON object is Claude Code's hook output (`decision`, `reason`, `continue`,
  `hookSpecificOutput`, ...); other stdout becomes context for the model for UserPromptSubmit and SessionStart,
  and is not shown elsewhere (Claude Code shows it only in its transcript view);
- exit 2: a block — stderr goes to the model for PreToolUse, PostToolUse, Stop and SubagentStop, to the user for
  UserPromptSubmit (whose prompt is not sent); for the other events it is only shown to the user;
- anything else: a non-blocking error, one line for the user; the session goes on as if the hook had not run.
A hook still running at its timeout (`hooks.Hooks` cancels it) or when the turn is interrupted is killed with its
whole process group.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from ..hooks import HookEntry, HookEvent, HookHandler, HookOutput
from ..tools.shell_env import guard_own_process
from .config import CommandHook

BLOCKING = frozenset({"PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SubagentStop"})
"""Events an exit code 2 blocks (the others only show its stderr)."""
CONTEXT_FROM_STDOUT = frozenset({"UserPromptSubmit", "SessionStart"})
"""Events whose plain stdout becomes context for the model."""
SHELL = "/bin/sh"
OUTPUT_CAP = 1 << 20
"""Characters of stdout and of stderr kept from one hook."""


class Finished(NamedTuple):
    code: int
    stdout: str
    stderr: str


async def run_command(command: str, stdin: bytes, cwd: Path, env: Mapping[str, str]) -> Finished:
    """Run `command` to its end, feeding it `stdin`; if this is cancelled meanwhile (a timeout, an interrupt), its
    process group is killed first."""
    guard_own_process()  # a hook must not read ram's own environment either
    proc = await asyncio.create_subprocess_exec(
        SHELL,
        "-c",
        command,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=cwd,
        env=dict(env),
        start_new_session=True,
    )
    try:
        out, err = await proc.communicate(stdin)
    except BaseException:
        _kill_group(proc.pid)
        raise
    code = proc.returncode if proc.returncode is not None else -1
    return Finished(code, _text(out), _text(err))


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _text(data: bytes) -> str:
    return data[:OUTPUT_CAP].decode("utf-8", "replace")


def read_answer(event: HookEvent, label: str, finished: Finished) -> HookOutput:
    """What the hook's exit code and output say (see the module docstring)."""
    code, stdout, stderr = finished
    if code == 0:
        text = stdout.strip()
        if text.startswith("{"):
            try:
                parsed = json.loads(text)
            except ValueError:
                parsed = None
            if isinstance(parsed, dict):
                return HookOutput.from_json(parsed)
        if text and event in CONTEXT_FROM_STDOUT:
            return HookOutput(additional_context=text)
        return HookOutput()
    why = stderr.strip()
    if code == 2:
        if event in BLOCKING:
            return HookOutput(block=True, reason=why)
        return HookOutput(system_message=f"{event} {label}: {why}" if why else "")
    first = why.splitlines()[0] if why else ""
    return HookOutput(system_message=f"warning: {event} {label} exited with {code}" + (f": {first}" if first else ""))


def label_of(command: str, limit: int = 60) -> str:
    """How messages name a hook: `hook` and its command, on one line, cut to `limit` characters."""
    flat = " ".join(command.split())
    return f"hook `{flat}`" if len(flat) <= limit else f"hook `{flat[: limit - 1]}…`"


def hook_entry(spec: CommandHook, cwd: Path, environment: Callable[[], Mapping[str, str]]) -> HookEntry:
    """`spec` as a hook of the session (`environment()` gives the variables it runs with)."""
    label = label_of(spec.command)

    async def handler(payload: dict[str, Any]) -> HookOutput:
        env = {**environment(), "CLAUDE_PROJECT_DIR": str(cwd)}
        stdin = json.dumps(payload, ensure_ascii=False, default=str).encode("utf-8")
        return read_answer(spec.event, label, await run_command(spec.command, stdin, cwd, env))

    runs: HookHandler = handler
    return HookEntry(spec.event, runs, spec.matcher, spec.timeout, label, source=spec.source)
