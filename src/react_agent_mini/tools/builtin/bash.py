"""Bash: run a shell command in the workspace and return what it printed.

Each call is a fresh `/bin/bash -c` (never $SHELL: the model writes bash) in its own process group, so a
timeout or Ctrl+C can kill everything the command started, not only the shell; what left the group (`setsid`, a
daemon) is found and stopped with it by `leftovers`, which also stops background jobs when ram exits. Commands get
the user's environment without the credentials ram uses (`shell_env`). Only the working directory
carries over between calls: an EXIT trap records bash's final directory in a temp file, and the next call
starts there (or back at the workspace root if it left the workspace or vanished). In a session with an OS
sandbox (`sandbox`), bash starts under bwrap instead, everything else the same (`sandbox.runtime` says how).
With `run_in_background` the call returns at once with an id: `bash_background` runs the command, BashOutput reads
it and KillShell stops it.

Output is read from two pipes we own (not asyncio's subprocess pipes) so that we decide when to stop
reading: a background job (`server &`) keeps the pipes open after bash exits, and we must neither hang on
it nor close its stdout under it (it would die of SIGPIPE on its next write). Each stream keeps a bounded
head and a rolling tail, so a command printing gigabytes costs a few hundred kilobytes of memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import shlex
import signal
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Protocol

import msgspec

from ...shell_result import NO_OUTPUT as NO_OUTPUT  # what the model reads for a command that printed nothing
from ...shell_result import ShellResult
from ..base import ModelTool, ToolContext, ToolOutput
from ..declared import Touches
from ..leftovers import MARK, Command, Proc, Scan, Targets, stopped_line, watch
from ..paths import inside
from ..shell_env import command_environment, guard_own_process
from .bash_common import KILL_GRACE_S, OutputCapture, signal_name
from .bash_common import OUTPUT_LIMIT as OUTPUT_LIMIT  # the limit the description states, imported from here
from .bash_common import bash_path as bash_path  # acp.terminal runs the same bash

if TYPE_CHECKING:
    from ...sandbox.handle import Sandbox
    from ...sandbox.runtime import Runtime
    from .bash_background import BackgroundShells

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
PIPE_LINGER_S = 0.2
"""How long to wait for the pipes to close after bash exits before leaving background jobs to run."""

BACKGROUND_NOTE = (
    "(background processes are still running; their later output is not captured; they are stopped when the "
    "session ends)"
)


class BashArgs(msgspec.Struct):
    command: Annotated[str, msgspec.Meta(min_length=1, description="The command or script.")]
    timeout: Annotated[
        int, msgspec.Meta(gt=0, description=f"Milliseconds (default {DEFAULT_TIMEOUT_MS}, max {MAX_TIMEOUT_MS}).")
    ] = DEFAULT_TIMEOUT_MS
    description: Annotated[str, msgspec.Meta(description="What it does in 5-10 words, shown to the user.")] = ""
    run_in_background: Annotated[bool, msgspec.Meta(description="Return at once; see above.")] = False


_DESCRIPTION = f"""\
Run a bash command in the workspace and return its output. Use it for builds, tests, git, package managers and \
running programs, not to read, search or list files (Read, Grep and Glob do that).

- Each call is a new `bash -c`: a `cd` persists (inside the workspace), shell state (variables, `set`, activated \
virtualenvs) does not, so chain dependent steps with `&&`.
- Not interactive: stdin is empty, no terminal, no pager; pass flags such as `-y`.
- On timeout everything the command started is killed.
- `run_in_background: true` returns at once with a shell id (`bash_1`) for servers, watchers and long builds: read \
its new output with BashOutput, stop it with KillShell. A trailing `&` also leaves a process running (its later \
output is not captured). Background processes are stopped when the session ends.
- The credentials ram itself uses (its API keys, MCP server tokens) are not in the commands' environment.

Result layout: stdout; then, after a blank line, `stderr:` and the stderr text if there was any; \
`(no output)` if both were empty. Then, after a blank line, status lines when relevant: `Exit code N` \
(non-zero exit, reported as an error), `Killed by signal SIGxxx`, a timeout notice, a background-process \
notice, or `Shell cwd was reset to <dir>`. Each stream is limited to {OUTPUT_LIMIT} characters: beyond that \
its head and tail are kept around a `[... N characters (M lines) omitted ...]` marker."""


class BashTool(ModelTool[BashArgs]):
    name = "Bash"
    description = _DESCRIPTION
    args_model = BashArgs
    read_only = False
    family = "shell"
    concurrency_safe = False
    status_field = "command"

    def __init__(self, sandbox: Sandbox | None = None) -> None:
        from .bash_background import BackgroundShells

        self.sandbox = sandbox
        """The OS sandbox commands run in (`sandbox.handle`); None: none (a tool made outside a session)."""
        self.background: BackgroundShells = BackgroundShells()
        """The commands this tool runs in the background (BashOutput and KillShell get the same object)."""

    def touches(self, raw: Mapping[str, Any]) -> Touches:
        """The command line it runs: what that reads and writes, the shell analysis says (`permissions.bash`)."""
        command = raw.get("command")
        return Touches(command=command if isinstance(command, str) else "")

    def validate(self, raw: Mapping[str, Any]) -> BashArgs:
        """As the base class, with a too-large timeout clamped to the maximum rather than refused."""
        args = super().validate(raw)
        if args.timeout > MAX_TIMEOUT_MS:
            args = msgspec.structs.replace(args, timeout=MAX_TIMEOUT_MS)
        return args

    async def call(self, args: BashArgs, ctx: ToolContext) -> ToolOutput:
        notes: list[str] = []
        start = starting_dir(ctx, notes)
        jail, refusal = self.sandbox.runtime() if self.sandbox is not None else (None, "")
        if refusal:
            return ToolOutput(f"Not run: {refusal}.", is_error=True)
        if args.run_in_background:
            return self.background.start(args.command, command_env(ctx, start), start, notes, jail)
        # in the sandbox, the cwd file is in its private /tmp, where the command can write it
        fd, cwd_file = tempfile.mkstemp(
            prefix=".ram-bash-cwd-" if jail else "ram-bash-cwd-", dir=jail.temp_dir if jail else None
        )
        os.close(fd)
        try:
            return await _run(args, ctx, start, Path(cwd_file), notes, jail)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(cwd_file)


def starting_dir(ctx: ToolContext, notes: list[str]) -> Path:
    """Where this command starts: the remembered directory while it is still a directory in the workspace."""
    remembered = ctx.shell.cwd
    if remembered is None:
        return ctx.cwd
    if inside(ctx.cwd, remembered.resolve(strict=False)) and remembered.is_dir():
        return remembered
    ctx.shell.cwd = None
    notes.append(f"Shell cwd was reset to {ctx.cwd}")
    return ctx.cwd


def command_env(ctx: ToolContext, start: Path) -> dict[str, str]:
    """The environment a command starting in `start` runs with: the user's without ram's credentials, no pagers,
    no git prompts."""
    env = command_environment(os.environ, ctx.shell.withheld)
    env.update(PAGER="cat", GIT_PAGER="cat", GIT_TERMINAL_PROMPT="0", PWD=str(start))
    return env


def command_script(command: str, cwd_file: Path) -> str:
    """The user's command, verbatim, preceded on its first line by a trap that records the final directory.

    Sharing the first line keeps bash's line numbers in error messages equal to the model's. Nothing follows
    the command, so `exit`, a trailing heredoc without a final newline, or a trailing comment all behave as
    if the command ran alone. An EXIT trap also runs on `exit` and on SIGTERM, and does not change the exit
    status. `pwd -P` fails if the directory was deleted; $PWD then still names it, and the caller sees it is
    gone. If the command replaces the trap or `exec`s, nothing is recorded and the directory stays as before.
    """
    target = shlex.quote(str(cwd_file))
    trap = f'{{ builtin pwd -P || builtin printf "%s\\n" "$PWD"; }} >| {target} 2>/dev/null'
    return f"trap {shlex.quote(trap)} EXIT; {command}"


class _PipeReader(asyncio.Protocol):
    """Feeds a pipe into a capture until EOF; once detached, keeps draining it but discards the data."""

    def __init__(self, capture: OutputCapture) -> None:
        self._capture: OutputCapture | None = capture
        self.closed = asyncio.Event()

    def data_received(self, data: bytes) -> None:
        if self._capture is not None:
            self._capture.feed(data)

    def eof_received(self) -> bool | None:
        return None  # let the transport close itself

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed.set()

    def detach(self) -> None:
        self._capture = None


def _same(reader: _PipeReader) -> _PipeReader:
    return reader


async def _run(
    args: BashArgs, ctx: ToolContext, start: Path, cwd_file: Path, notes: list[str], jail: Runtime | None = None
) -> ToolOutput:
    timeout_ms = min(args.timeout, MAX_TIMEOUT_MS)
    command = Command()
    env = command_env(ctx, start)
    env[MARK] = command.id  # inherited by everything it starts, wherever that goes (see `leftovers`)

    guard_own_process()  # before the first command: ram's /proc/<pid>/environ holds the keys it withholds
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    launch = None
    proc: Running
    try:
        if jail is None:
            proc = await asyncio.create_subprocess_exec(
                bash_path(),
                "-c",
                command_script(args.command, cwd_file),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=out_w,
                stderr=err_w,
                cwd=start,
                env=env,
                start_new_session=True,  # its own process group: killpg reaches every descendant
            )
        else:
            script = functools.partial(_script_at, args.command)
            resident = await jail.start_resident(start, env, out_w, err_w, script, cwd_file)
            if resident is not None:  # forked in the session's running sandbox, in a session of its own
                launch, proc = resident
            else:  # under a bwrap of its own, in its process group: the pipes reach bash as extra descriptors
                launch = jail.launch(start, env, out_w, err_w, script, cwd_file)
                try:
                    proc = await asyncio.create_subprocess_exec(
                        *launch.argv,
                        stdin=asyncio.subprocess.DEVNULL,
                        stdout=asyncio.subprocess.DEVNULL,
                        stderr=launch.stderr,
                        pass_fds=launch.pass_fds,
                        cwd=start,
                        env=launch.env,
                        start_new_session=True,
                    )
                finally:
                    jail.started(launch)
    except (OSError, ValueError) as exc:  # E2BIG for a huge command, a NUL byte, a missing bash...
        for fd in (out_r, err_r):
            os.close(fd)
        return ToolOutput(f"Could not start bash: {exc}", is_error=True)
    finally:
        # Only the child may hold the write ends, or EOF would never come.
        os.close(out_w)
        os.close(err_w)
    command.started(proc.pid)
    poller = asyncio.ensure_future(watch(command))
    try:
        output = await _wait(args, ctx, proc, command, out_r, err_r, cwd_file, notes, timeout_ms)
    finally:
        poller.cancel()
        command.finished(Scan())  # what it leaves running is stopped when ram exits
    if jail is not None and launch is not None and isinstance(output.details, ShellResult):
        said = jail.finished(launch, output.content, output.is_error, output.details.silent)
        output = _with_sandbox(output, output.details, said)
    return output


def _script_at(command: str, inside: str) -> str:
    return command_script(command, Path(inside))


class Running(Protocol):
    """A started command as `_wait` sees it: an asyncio subprocess, or one in a resident sandbox."""

    @property
    def pid(self) -> int: ...
    @property
    def returncode(self) -> int | None: ...
    async def wait(self) -> int: ...


def _with_sandbox(output: ToolOutput, result: ShellResult, lines: list[str]) -> ToolOutput:
    """`output` with what the sandbox says about the run at its end."""
    if not lines:
        return output
    result = msgspec.structs.replace(result, sandbox=tuple(lines))
    return msgspec.structs.replace(output, content=result.text(), details=result)


async def _wait(
    args: BashArgs,
    ctx: ToolContext,
    proc: Running,
    command: Command,
    out_r: int,
    err_r: int,
    cwd_file: Path,
    notes: list[str],
    timeout_ms: int,
) -> ToolOutput:
    """Read the command's output until it ends or times out; its result."""
    loop = asyncio.get_running_loop()
    out, err = OutputCapture(), OutputCapture()
    # Unbuffered file objects: the transports take them over and close them at EOF.
    unconnected = [open(out_r, "rb", buffering=0), open(err_r, "rb", buffering=0)]  # noqa: SIM115
    readers: list[_PipeReader] = []
    timed_out = False
    outside: list[str] = []
    try:
        for capture in (out, err):
            reader = _PipeReader(capture)
            await loop.connect_read_pipe(functools.partial(_same, reader), unconnected[0])
            unconnected.pop(0)
            readers.append(reader)
        try:
            async with asyncio.timeout(timeout_ms / 1000):
                await proc.wait()
        except TimeoutError:
            timed_out = True
            outside = await _kill_group(proc, readers, command.find(Scan()))
        all_closed = await _pipes_closed(readers, PIPE_LINGER_S)
    except BaseException:  # cancelled (Ctrl+C), even while lingering: nothing it started may outlive it
        for pipe in unconnected:
            pipe.close()
        try:
            await _kill_group(proc, readers, command.find(Scan()))
        finally:
            for reader in readers:
                reader.detach()
        raise

    if not all_closed:
        for reader in readers:
            reader.detach()
        notes.insert(0, BACKGROUND_NOTE)
    out.finish()
    err.finish()

    returncode = proc.returncode if proc.returncode is not None else await proc.wait()
    status: list[str] = []
    if timed_out:
        status.append(f"Command timed out after {timeout_ms} ms; its process group was killed.")
        if outside:
            status.append(f"Also {stopped_line(outside, 'it had started outside its process group', '')}.")
    elif returncode < 0:
        status.append(f"Killed by signal {signal_name(-returncode)}")
    elif returncode > 0:
        status.append(f"Exit code {returncode}")

    record_cwd(ctx, cwd_file, notes)
    result = ShellResult(
        out.text(), err.text(), returncode, timed_out, tuple(status), tuple(notes),
        stdout_cut=out.cut(), stderr_cut=err.cut(),
    )  # fmt: skip
    return ToolOutput(result.text(), is_error=timed_out or returncode != 0, details=result)


async def _pipes_closed(readers: list[_PipeReader], within: float) -> bool:
    """True once every pipe reached EOF; False if some writer (a background job) still holds one open."""
    try:
        async with asyncio.timeout(within):
            for reader in readers:
                await reader.closed.wait()
    except TimeoutError:
        return False
    return True


async def _kill_group(proc: Running, readers: list[_PipeReader], found: list[Proc]) -> list[str]:
    """SIGTERM the whole group and the command's processes outside it (`found`: a new session, a daemon), give
    them a moment to clean up, then SIGKILL whatever is left. The names of those outside the group."""
    pgid = proc.pid
    outside = Targets(p for p in found if p.pgid != pgid)
    try:
        group = True
        try:
            os.killpg(pgid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            group = False  # the group is already gone
        outside.signal(signal.SIGTERM)  # after bash, or it reports its child's death on stderr
        loop = asyncio.get_running_loop()
        deadline = loop.time() + KILL_GRACE_S
        while (group or outside.alive()) and loop.time() < deadline:
            # The group is done early when bash is gone and nothing holds its pipes; the SIGKILL below still
            # sweeps up any member that redirected its output elsewhere.
            if proc.returncode is not None and all(r.closed.is_set() for r in readers):
                group = False
            try:
                os.killpg(pgid, 0)
            except (ProcessLookupError, PermissionError):
                group = False
            await asyncio.sleep(0.02)
    finally:
        # In `finally`, so a second cancellation during the grace period cannot skip it.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
        outside.signal(signal.SIGKILL)
        outside.close()
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(KILL_GRACE_S):
            await proc.wait()
    return outside.names


def record_cwd(ctx: ToolContext, cwd_file: Path, notes: list[str]) -> None:
    """Remember where bash ended up, or go back to the root if that is outside the workspace or gone."""
    try:
        recorded = cwd_file.read_text(encoding="utf-8", errors="replace").strip("\n")
    except OSError:
        recorded = ""
    if not recorded:
        return  # the trap did not run (exec, syntax error, replaced trap): keep the previous directory
    where = Path(recorded)
    root = ctx.cwd.resolve(strict=False)
    if where.is_absolute() and inside(root, where) and where.is_dir():
        ctx.shell.cwd = None if where == root else where
        return
    ctx.shell.cwd = None
    note = f"Shell cwd was reset to {ctx.cwd}"
    if note not in notes:
        notes.append(note)
