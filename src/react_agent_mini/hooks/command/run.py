"""One command hook: run it with the event's JSON on stdin, and read its answer as Claude Code does.

The command runs under `/bin/sh -c` in the workspace, in a process group of its own, with the environment Bash
commands get plus `CLAUDE_PROJECT_DIR`. Its answer:
- exit 0: stdout that is a JSON object is Claude Code's hook output (`decision`, `reason`, `continue`,
  `hookSpecificOutput`, ...); other stdout becomes context for the model for UserPromptSubmit and SessionStart,
  and is not shown elsewhere (Claude Code shows it only in its transcript view);
- exit 2: a block — stderr goes to the model for PreToolUse, PostToolUse, Stop and SubagentStop, to the user for
  UserPromptSubmit (whose prompt is not sent); for the other events it is only shown to the user;
- anything else: a non-blocking error, one line for the user; the session goes on as if the hook had not run.
A hook's stdout and stderr are read up to `OUTPUT_CAP` (1 MiB) each: one that prints more is stopped there, as
at a timeout, and read as if it had exited 0 with what it printed before, with one warning line saying so (a
JSON answer within the cap parses as ever). What reaches the model is cut further to its share of the window
(`hooks.Hooks`, `compact/hook_context.py`).
A hook still running at its timeout (`hooks.Hooks` cancels it) or when the turn is interrupted is killed with its
whole process group and what it started outside it. What a hook leaves running when it ends (`server &`, `setsid
...`) lives on, as a Bash command's background jobs do, and is stopped when ram exits: its processes carry a
RAM_COMMAND_ID and are found by it (`tools.leftovers`). Not at the hook's end, because hooks start servers on
purpose (a SessionStart hook that brings up a database), and Claude Code lets them run.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import json
import os
import signal
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

import msgspec

from ...tools.leftovers import MARK, Command, Scan, Targets, watch
from ...tools.shell_env import guard_own_process
from ..runner import HookEntry, HookEvent, HookHandler, HookOutput
from ..spec import EVENTS
from .config import CommandHook

BLOCKING = frozenset(event for event, spec in EVENTS.items() if spec.exit_2_blocks)
"""Events an exit code 2 blocks (the others only show its stderr): `hooks.spec` says which."""
CONTEXT_FROM_STDOUT = frozenset(event for event, spec in EVENTS.items() if spec.stdout_is_context)
"""Events whose plain stdout becomes context for the model: `hooks.spec` says which."""
SHELL = "/bin/sh"
OUTPUT_CAP = 1 << 20
"""Bytes of stdout and of stderr read from one hook (a JSON answer within them parses as it would whole)."""
CHUNK = 1 << 16


class Finished(NamedTuple):
    code: int
    stdout: str
    stderr: str
    cut: str = ""
    """The streams that passed `OUTPUT_CAP` (`stdout`, `stderr`, `stdout and stderr`): the hook was stopped there,
    and `code` is not its own."""


async def run_command(command: str, stdin: bytes, cwd: Path, env: Mapping[str, str]) -> Finished:
    """Run `command` to its end, feeding it `stdin`; if this is cancelled meanwhile (a timeout, an interrupt), its
    process group and what it started outside it are killed first. What it leaves running is stopped at ram's exit."""
    guard_own_process()  # a hook must not read ram's own environment either
    tracked = Command()
    proc = await asyncio.create_subprocess_exec(
        SHELL,
        "-c",
        command,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=cwd,
        env={**env, MARK: tracked.id},  # everything it starts is found by the mark, wherever it goes
        start_new_session=True,
    )
    tracked.started(proc.pid)
    poller = asyncio.ensure_future(watch(tracked))
    try:
        out, err, cut = await _communicate(proc, stdin, lambda: _kill_group(proc.pid, tracked))
    except BaseException:
        _kill_group(proc.pid, tracked)
        raise
    finally:
        poller.cancel()
        tracked.finished(Scan())  # what it left running is kept for the exit hook
    code = proc.returncode if proc.returncode is not None else -1
    return Finished(code, _text(out), _text(err), cut)


async def _communicate(
    proc: asyncio.subprocess.Process, stdin: bytes, stop: Callable[[], None]
) -> tuple[bytes, bytes, str]:
    """Feed `stdin`, read stdout and stderr to their ends, wait for the exit: (stdout, stderr, the streams cut).
    A stream is read up to `OUTPUT_CAP` bytes; one that goes past it has the hook stopped at once (`stop`): a
    hook that prints without end (`yes`, a runaway loop) would otherwise hold the turn, and a CPU, until its
    timeout, and nothing it prints past the cap is ever read. What is still in the pipes then is read and
    dropped, so memory stays within the cap whatever the hook prints."""
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    over: list[str] = []

    async def read(stream: asyncio.StreamReader, name: str) -> bytes:
        kept = bytearray()
        while chunk := await stream.read(CHUNK):
            if len(kept) + len(chunk) <= OUTPUT_CAP:
                kept += chunk
            elif name not in over:
                kept += chunk[: OUTPUT_CAP - len(kept)]
                over.append(name)
                stop()
        return bytes(kept)

    out, err, _fed = await asyncio.gather(read(proc.stdout, "stdout"), read(proc.stderr, "stderr"), _feed(proc, stdin))
    await proc.wait()
    return out, err, " and ".join(sorted(over, reverse=True))


async def _feed(proc: asyncio.subprocess.Process, stdin: bytes) -> None:
    """Write the event's JSON to the hook and close its stdin (a hook that does not read it, or that ended, is
    fine)."""
    assert proc.stdin is not None
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        proc.stdin.write(stdin)
        await proc.stdin.drain()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        proc.stdin.close()


def _kill_group(pid: int, tracked: Command) -> None:
    outside = Targets(p for p in tracked.find(Scan()) if p.pgid != pid)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    outside.signal(signal.SIGKILL)
    outside.close()


def _text(data: bytes) -> str:
    """`data` as text; a character cut in two at the cap is left out."""
    return codecs.getincrementaldecoder("utf-8")("replace").decode(data, final=False)


def read_answer(event: HookEvent, label: str, finished: Finished) -> HookOutput:
    """What the hook's exit code and output say (see the module docstring). A hook stopped at the output cap is
    read as if it had exited 0 with what it printed up to there, and one line tells the user."""
    code, stdout, stderr, cut = finished
    if cut:
        answer = read_answer(event, label, Finished(0, stdout, stderr))
        line = (
            f"warning: {event} {label} printed more than {OUTPUT_CAP >> 20} MiB on {cut}; ram stopped it there and "
            "read what came before"
        )
        return msgspec.structs.replace(answer, system_message="\n".join(filter(None, [line, answer.system_message])))
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
