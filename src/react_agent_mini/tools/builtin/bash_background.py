"""Bash commands run with `run_in_background`: started at once, read with BashOutput, stopped with KillShell.

A background shell is a `bash -c COMMAND` like any Bash call: the same environment, starting directory, OS sandbox
(bwrap, when the session has one) and permission check (made before the call, as for every call). It has no
timeout, and where it ends up (`cd`) is not carried over to later calls. It gets Claude Code's kind of id (`bash_1`,
`bash_2`, ...) from the session's `BackgroundShells`, which the Bash, BashOutput and KillShell tools share and the
REPL's `/bashes` lists.

Output. The command writes to two pipes that a reader thread drains into two bounded buffers
(`bash_common.OutputCapture`): per stream, at most `OUTPUT_LIMIT` characters are kept between two reads — the head and
the tail, around a marker that says how much was left out — so a chatty server nobody reads costs tens of kilobytes,
never more. A thread rather than the event loop, because the pipes must be drained for as long as the command writes,
whatever event loop runs (or none: a library caller's `asyncio.run` may have ended); a pipe nobody reads blocks the
writer, and a pipe closed under it kills it with SIGPIPE. BashOutput drains the pipes itself before it takes the
buffers, so it always sees everything the command wrote before the call. With a `filter`, an unfinished last line waits
for the next read.

Processes. The command is a `leftovers.Command(background=True)`: bash and everything it starts carry its
RAM_COMMAND_ID, and ram's exit hook stops them, with the foreground commands' leftovers, in the one line it prints on
stderr. KillShell stops them at once: SIGTERM to the process group and to the command's processes outside it, up to
`KILL_GRACE_S` to exit, then SIGKILL. Bash is reaped only by its `Popen`, on the event loop's thread, never by the
reader thread: so its pid, and with it the process group's id, cannot be reused before the signals are sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import select
import signal
import subprocess
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ..base import ToolOutput
from ..leftovers import MARK, POLL_SECONDS, Command, Scan, Targets, after_exit_stop
from ..shell_env import guard_own_process
from .bash_common import KILL_GRACE_S, OUTPUT_LIMIT, OutputCapture, bash_path, signal_name

if TYPE_CHECKING:
    from ...sandbox.runtime import Launch, Runtime

Status = Literal["running", "completed", "killed"]

READ_CHUNK = 1 << 16
DRAIN_LIMIT = 1 << 22
"""Bytes one drain of a pipe reads at most: a flood cannot keep the buffers locked for long."""
QUICK_LOOKS = 10
"""A running command's processes are looked for every POLL_SECONDS this many times, then every 5 × POLL_SECONDS
(a daemon forks away early; a look costs a few milliseconds)."""
REAP_WAIT_S = 5.0
"""How long KillShell waits for a SIGKILLed bash to be reapable (it is at once, unless the machine is stalled)."""

_unreaped: set[BackgroundShell] = set()
"""The shells whose bash is not reaped yet, held here so that none is dropped still running (its `Popen` would warn
"subprocess N is still running"): `refresh` reaps it when it ends, `_reap_at_exit` once ram's exit hook stopped it."""


def _reap_at_exit() -> None:
    for shell in list(_unreaped):
        with contextlib.suppress(subprocess.TimeoutExpired, OSError):
            shell.popen.wait(timeout=1.0)  # stopped with SIGTERM, or SIGKILL at worst: it is gone or about to be


after_exit_stop(_reap_at_exit)


class BackgroundShell:
    """One command running (or run) in the background."""

    def __init__(
        self,
        shell_id: str,
        command: str,
        popen: subprocess.Popen[bytes],
        tracked: Command,
        pipes: tuple[int, int],
        sandbox: tuple[Runtime, Launch] | None,
    ) -> None:
        self.id = shell_id
        self.command = command
        self.popen = popen
        self.tracked = tracked
        self.started = time.monotonic()
        _unreaped.add(self)
        self.status: Status = "running"
        self.exit_code: int | None = None
        self._sandbox = sandbox
        self._notes: list[str] = []
        """Status lines for the next read (how it ended, the sandbox's findings)."""
        self._lock = threading.Lock()
        self._stdout, self._stderr = pipes
        self._captures = {self._stdout: OutputCapture(OUTPUT_LIMIT), self._stderr: OutputCapture(OUTPUT_LIMIT)}
        self._ended: set[int] = set()
        """Pipes at end of file (only the reader thread closes them, after that)."""
        for fd in pipes:
            os.set_blocking(fd, False)
        threading.Thread(target=self._pump, name=f"ram-{shell_id}-output", daemon=True).start()
        self._watcher: asyncio.Task[None] | None = None
        """Held here: an event loop keeps only a weak reference to its tasks."""
        with contextlib.suppress(RuntimeError):  # no event loop: it is looked for when read, killed, and at exit
            self._watcher = asyncio.get_running_loop().create_task(self._watch())

    # --- output ---

    def _pump(self) -> None:
        """The reader thread: drain both pipes as data comes, until both are at end of file; close them."""
        poller = select.poll()
        for fd in self._captures:
            poller.register(fd, select.POLLIN)
        left = set(self._captures)
        while left:
            for fd, _events in poller.poll():
                with self._lock:
                    self._drain(fd)
                    if fd in self._ended:
                        poller.unregister(fd)
                        with contextlib.suppress(OSError):
                            os.close(fd)
                        left.discard(fd)

    def _drain(self, fd: int) -> None:
        """Move what the pipe holds into its buffer (the lock is held)."""
        if fd in self._ended:
            return
        capture = self._captures[fd]
        taken = 0
        while taken < DRAIN_LIMIT:
            try:
                data = os.read(fd, READ_CHUNK)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:
                self._ended.add(fd)
                capture.finish()
                return
            capture.feed(data)
            taken += len(data)

    def read(self, pattern: re.Pattern[str] | None = None) -> str:
        """Claude Code's BashOutput result: the status, the exit code once there is one, and what the command
        printed since the last read (only the lines matching `pattern`, when given), stamped with the time."""
        status = self.refresh()
        with self._lock:
            texts = []
            for fd, capture in self._captures.items():
                self._drain(fd)
                texts.append(capture.take(whole_lines=pattern is not None and fd not in self._ended))
        stdout, stderr = (_matching(text, pattern) for text in texts)
        parts = [f"<status>{status}</status>"]
        if self.exit_code is not None:
            parts.append(f"<exit_code>{self.exit_code}</exit_code>")
        if stdout.strip():
            parts.append(f"<stdout>\n{stdout.rstrip(chr(10))}\n</stdout>")
        if stderr.strip():
            parts.append(f"<stderr>\n{stderr.rstrip(chr(10))}\n</stderr>")
        notes, self._notes = self._notes, []
        if notes:
            parts.append("\n".join(notes))
        stamp = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        parts.append(f"<timestamp>{stamp}</timestamp>")
        return "\n\n".join(parts)

    # --- the processes ---

    def refresh(self) -> Status:
        """The status now (a running command that exited is reaped and becomes `completed`)."""
        if self.status == "running" and self.popen.poll() is not None:
            self._ended_as("completed")
        return self.status

    def _ended_as(self, status: Status) -> None:
        _unreaped.discard(self)
        self.status = status
        code = self.popen.returncode
        self.exit_code = code if code >= 0 else 128 - code
        if code < 0 and status == "completed":
            self._notes.append(f"Killed by signal {signal_name(-code)}")
        if self._sandbox is not None:
            jail, launch = self._sandbox
            with self._lock:
                for fd in self._captures:
                    self._drain(fd)
                said = "".join(capture.text() for capture in self._captures.values())
            self._notes += jail.finished(launch, said, code != 0, not said.strip())
        self.tracked.finished(Scan())  # what it leaves running is stopped when ram exits

    async def _watch(self) -> None:
        """Look for its processes now and then while it runs (see `leftovers`), and notice when it ends."""
        looks = 0
        while self.refresh() == "running":
            await asyncio.sleep(POLL_SECONDS if looks < QUICK_LOOKS else 5 * POLL_SECONDS)
            looks += 1
            if self.status == "running":
                self.tracked.find(Scan())

    async def stop(self) -> list[str]:
        """Stop the command and everything it started (what a completed one left running, too); the names of the
        processes signalled. A running command is `killed` from then on."""
        running = self.refresh() == "running"
        targets = Targets(self.tracked.find(Scan()))
        group = running and self.popen.returncode is None  # bash not reaped: its group's id is still its own
        loop = asyncio.get_running_loop()
        try:
            self._signal(targets, group, signal.SIGTERM)
            deadline = loop.time() + KILL_GRACE_S
            while targets.alive() and loop.time() < deadline:
                await asyncio.sleep(0.02)
        finally:
            self._signal(targets, group, signal.SIGKILL)
            names = targets.names
            targets.close()
        if running:
            deadline = loop.time() + REAP_WAIT_S
            while self.popen.poll() is None and loop.time() < deadline:
                await asyncio.sleep(0.02)
            if self.popen.returncode is not None:
                self._ended_as("killed")
        else:
            self.tracked.finished(Scan())
        return names

    def _signal(self, targets: Targets, group: bool, signum: int) -> None:
        if group:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.popen.pid, signum)
        targets.signal(signum)

    @property
    def label(self) -> str:
        """The command on one line, at most 60 characters."""
        flat = " ".join(self.command.split())
        return flat if len(flat) <= 60 else flat[:59] + "…"

    def summary(self) -> str:
        """`running · 2m 03s`, `completed · exit code 0`, `killed`."""
        status = self.refresh()
        if status == "running":
            return f"running · {_duration(time.monotonic() - self.started)}"
        if status == "completed":
            return f"completed · exit code {self.exit_code}"
        return "killed"


class BackgroundShells:
    """The background shells of one session, by id."""

    def __init__(self) -> None:
        self._shells: dict[str, BackgroundShell] = {}

    def start(
        self, command: str, env: dict[str, str], start: Path, notes: list[str], jail: Runtime | None
    ) -> ToolOutput:
        """Start `command` in `start` with `env` (under `jail`'s bwrap when given); the Bash call's result."""
        guard_own_process()  # before the first command: ram's /proc/<pid>/environ holds the keys it withholds
        tracked = Command(background=True)
        env = {**env, MARK: tracked.id}  # inherited by everything it starts, wherever that goes (see `leftovers`)
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        sandbox: tuple[Runtime, Launch] | None = None
        try:
            if jail is None:
                popen = subprocess.Popen(
                    [bash_path(), "-c", command],
                    stdin=subprocess.DEVNULL,
                    stdout=out_w,
                    stderr=err_w,
                    cwd=start,
                    env=env,
                    start_new_session=True,  # its own process group: killpg reaches every descendant
                )
            else:  # under bwrap, as a foreground call runs (`sandbox.runtime`); nothing records its directory
                launch = jail.launch(start, env, out_w, err_w, lambda _inside: command, jail.temp_dir / ".ram-bg")
                try:
                    popen = subprocess.Popen(
                        launch.argv,
                        stdin=subprocess.DEVNULL,
                        stdout=subprocess.DEVNULL,
                        stderr=launch.stderr,
                        pass_fds=launch.pass_fds,
                        cwd=start,
                        env=launch.env,
                        start_new_session=True,
                    )
                finally:
                    jail.started(launch)
                sandbox = (jail, launch)
        except (OSError, ValueError, subprocess.SubprocessError) as exc:  # E2BIG, a NUL byte, a missing bash...
            for fd in (out_r, err_r):
                os.close(fd)
            return ToolOutput(f"Could not start bash: {exc}", is_error=True)
        finally:
            os.close(out_w)  # only the child may hold the write ends, or end of file would never come
            os.close(err_w)
        tracked.started(popen.pid, named=jail is None)
        shell_id = f"bash_{len(self._shells) + 1}"
        self._shells[shell_id] = BackgroundShell(shell_id, command, popen, tracked, (out_r, err_r), sandbox)
        lines = [
            f"Command running in background with ID: {shell_id}. Read its new output with BashOutput "
            f'(bash_id "{shell_id}"); stop it with KillShell (shell_id "{shell_id}"). It is stopped when the '
            "session ends.",
            *notes,
        ]
        return ToolOutput("\n\n".join(lines))

    def get(self, shell_id: str) -> BackgroundShell | None:
        return self._shells.get(shell_id.strip())

    def all(self) -> list[BackgroundShell]:
        """Every shell of the session, oldest first."""
        return list(self._shells.values())

    def running(self) -> list[BackgroundShell]:
        return [shell for shell in self._shells.values() if shell.refresh() == "running"]

    def unknown(self, shell_id: str) -> str:
        """The error for an id that names no shell."""
        known = ", ".join(f"{shell.id} ({shell.refresh()})" for shell in self._shells.values())
        listed = f"the shells of this session are: {known}" if known else "no background shell was started yet"
        return f"No background shell has the ID {shell_id!r}; {listed}."


def _matching(text: str, pattern: re.Pattern[str] | None) -> str:
    """The lines of `text` that `pattern` matches (all of it without one)."""
    if pattern is None or not text:
        return text
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return "".join(f"{line}\n" for line in lines if pattern.search(line))


def _duration(seconds: float) -> str:
    whole = int(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m {whole % 60:02d}s"
    return f"{whole // 3600}h {whole % 3600 // 60:02d}m"
