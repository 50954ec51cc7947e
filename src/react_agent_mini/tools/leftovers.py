"""The processes Bash commands and command hooks leave running, found under /proc and stopped: those of one command
when it times out or is interrupted, and all of them when ram exits.

A command runs in its own process group, but what it starts can outlive it or leave the group: `cmd &` and
`nohup cmd &` stay in the group after bash exits, `setsid cmd` starts a new session, a daemon forks twice and is
reparented to init. A process counts as a command's when any of these holds:

- its environment carries the command's `RAM_COMMAND_ID` (`<ram pid>-<n>`), which every child inherits wherever
  it is reparented (read from /proc/<pid>/environ);
- its session or process group is the one the command's bash led, seen while bash runs or just after it exited,
  or later beside a member already counted (Linux does not reuse a pid number while a session or group uses it,
  but may once none does);
- it descends (by ppid) from the command's bash while bash runs, or from a process already counted;
- it was counted before (pid and start time, so a reused pid is never mistaken for it).

A look reads /proc/<pid>/stat only of the processes whose pid was handed out since the command's bash was (a
`Window`): everything the command starts gets a pid after its bash's, and Linux hands pids out in a circle
(`/proc/loadavg` names the latest), so the look costs what the command and the machine started meanwhile, not
everything running (issue 28: 8 ms per Bash call on a busy machine). When that cannot be trusted — more processes
created since (`/proc/stat`) than half the pid space, which could have wrapped the circle; `pid_max` changed; no
/proc/loadavg — the look reads every process, as the exit hook always does.

Each command is looked at when it ends, every `POLL_SECONDS` while it runs (`watch`: so a process that clears its
environment and leaves the session is seen while its parents still link it to bash), at a timeout or interruption
(before its group is killed), and at exit. Background processes are not stopped when their command returns: a
server started with `&` is there for the next call's `curl`. They are stopped when ram exits (an atexit hook, so
every way out that runs Python's exit handlers: the end of a run, Ctrl+C, SIGTERM, SIGHUP), with one line on
stderr naming them. Signals go through pidfds where the kernel has them, so a pid reused meanwhile is never hit.

Three kinds of command are tracked alike: a Bash call; a Bash call with `run_in_background` (`bash_background`),
whose bash is itself one of its processes (`Command(background=True)`: nobody waits for it, and it is stopped at
exit with the rest); and a command hook (`hooks.command.run`), whose children that outlive it (`server &`,
`setsid ...`) live on, as a Bash call's do, until ram exits.

ram does not make itself a child subreaper (PR_SET_CHILD_SUBREAPER): orphans would then become its children, but
nothing would tell them from its own (MCP servers, rg), and it would have to reap every orphan of those too. The
environment mark finds a reparented process wherever it went.

A sandboxed command (`sandbox`) runs in a PID namespace of its own: /proc shows its processes under our numbers and
their environments carry the mark as usual; the namespace's init (bwrap's reaper, which lives as long as a background
job does) is stopped with them but not named or counted.

Linux only: without /proc nothing is found, and only the process group is stopped, as before.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import select
import signal
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import NamedTuple

from ..terminal_text import visible

MARK = "RAM_COMMAND_ID"
"""The environment variable that marks everything a command starts."""
POLL_SECONDS = 1.0
"""How often a running command's processes are looked for (a look reads /proc/<pid>/stat of each process started
since the command: about 0.5 ms per 100 processes)."""
EXIT_GRACE_SECONDS = 1.0
"""At exit, time between SIGTERM and SIGKILL."""
NAMES_SHOWN = 5
"""A line naming stopped processes names at most this many."""

_PROC = Path("/proc")
_MARK_BYTES = MARK.encode() + b"="
_marks: dict[tuple[int, int], str] = {}
"""(pid, start time) → mark, for the processes alive at the latest scan: each environment is read once."""
_unnamed: set[tuple[int, int]] = set()
"""(pid, start time) of processes stopped but not named: the bwrap a sandboxed background command runs under."""


class Proc(NamedTuple):
    """One process, as /proc/<pid>/stat shows it."""

    pid: int
    ppid: int
    pgid: int
    sid: int
    start: int
    """Start time in clock ticks after boot: with the pid, it names one process for good."""
    zombie: bool


def _stat(pid: int) -> Proc | None:
    try:
        raw = (_PROC / str(pid) / "stat").read_bytes()
    except OSError:
        return None
    # "pid (comm) state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime cutime
    # cstime priority nice num_threads itrealvalue starttime ...": comm may hold spaces and parentheses.
    fields = raw[raw.rfind(b")") + 2 :].split()
    try:
        return Proc(pid, int(fields[1]), int(fields[2]), int(fields[3]), int(fields[19]), fields[0] in (b"Z", b"X"))
    except (IndexError, ValueError):
        return None


class Clock(NamedTuple):
    """Where the kernel's pid counter stood at one moment."""

    last: int
    """The pid handed out last in our pid namespace (the last field of /proc/loadavg)."""
    forks: int
    """Processes and threads created since boot, in every namespace (`processes` in /proc/stat): at least as many
    pids as were handed out here."""
    pid_max: int
    """Pids go from 1 to pid_max - 1, then wrap around (to 300)."""

    @classmethod
    def now(cls) -> Clock | None:
        """The counter now, or None where /proc does not say."""
        try:
            last = int((_PROC / "loadavg").read_bytes().split()[-1])
            pid_max = int((_PROC / "sys" / "kernel" / "pid_max").read_bytes())
            stat = (_PROC / "stat").read_bytes()
            at = stat.index(b"\nprocesses ") + len(b"\nprocesses ")
            forks = int(stat[at : stat.index(b"\n", at)])
        except (OSError, ValueError, IndexError):
            return None
        return cls(last, forks, pid_max)


class Window(NamedTuple):
    """The pids handed out since a command's bash got its own: the only ones that can be the command's."""

    first: int
    """Bash's pid."""
    since: Clock
    """Read just after bash started."""

    def covers(self, now: Clock | None) -> Callable[[int], bool] | None:
        """A test of whether a pid was handed out between bash's and `now`; None when that cannot be told (every
        pid may be the command's)."""
        if now is None or now.pid_max != self.since.pid_max or now.forks - self.since.forks >= now.pid_max // 2:
            return None
        first, size = self.first, now.pid_max
        span = (now.last - first) % size
        return lambda pid: (pid - first) % size <= span


class Scan:
    """The processes alive at one moment: their pids listed from /proc, each one's stat read the first time a look
    needs it (a command's look needs only its `Window`), its mark too."""

    def __init__(self) -> None:
        try:
            self.pids = [int(entry) for entry in os.listdir(_PROC) if entry.isdigit()]
        except OSError:
            self.pids = []
        self.clock = Clock.now()
        self._stats: dict[int, Proc | None] = {}
        alive = set(self.pids)
        for key in [key for key in _marks if key[0] not in alive]:
            del _marks[key]

    def get(self, pid: int) -> Proc | None:
        """The process `pid` as /proc shows it (read once per scan), None if it is gone."""
        if pid not in self._stats:
            self._stats[pid] = _stat(pid)
        return self._stats[pid]

    @property
    def procs(self) -> dict[int, Proc]:
        """Every process (each stat read)."""
        return self.within(None)

    def within(self, window: Window | None) -> dict[int, Proc]:
        """The processes whose pid `window` covers (all of them for None, or when it cannot be told)."""
        covers = window.covers(self.clock) if window is not None else None
        pids = self.pids if covers is None else [pid for pid in self.pids if covers(pid)]
        return {pid: proc for pid in pids if (proc := self.get(pid)) is not None}

    def mark(self, pid: int) -> str:
        """The process's RAM_COMMAND_ID, or '' (also when its environment cannot be read: another user's).

        Read once per process (pid and start time): an environment changes only at an exec, and a process once
        seen marked stays the command's even if it then runs a program with a cleaned environment."""
        proc = self.get(pid)
        key = (pid, proc.start if proc is not None else -1)
        if key not in _marks:
            _marks[key] = _read_mark(pid)
        return _marks[key]


def _children(procs: dict[int, Proc]) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for proc in procs.values():
        out.setdefault(proc.ppid, []).append(proc.pid)
    return out


def _read_mark(pid: int) -> str:
    try:
        environ = (_PROC / str(pid) / "environ").read_bytes()
    except OSError:
        return ""
    for entry in environ.split(b"\0"):
        if entry.startswith(_MARK_BYTES):
            return entry[len(_MARK_BYTES) :].decode(errors="replace")
    return ""


class Command:
    """One Bash call (or command hook): its mark, its bash, and the processes counted as its so far."""

    _count = 0

    def __init__(self, background: bool = False) -> None:
        Command._count += 1
        self.id = f"{os.getpid()}-{Command._count}"
        self.background = background
        """True for a command run in the background: its bash is one of its processes (nobody waits for it)."""
        self.bash_pid = 0
        self._bash_start: int | None = None
        self._window: Window | None = None
        """The pids that can be the command's (None: any)."""
        self._known: dict[int, int] = {}
        self._ended = False
        """Set once bash has exited and been looked at: from then on the pid number may be reused."""

    def started(self, pid: int, named: bool = True) -> None:
        """Bash runs as `pid`; from now on the command is looked for at exit too. `named`: False when `pid` is not
        bash but the sandbox's launcher, which a line naming what was stopped leaves out."""
        self.bash_pid = pid
        proc = _stat(pid)
        self._bash_start = proc.start if proc is not None else None
        clock = Clock.now()
        # bash must be visible in our /proc by that number (else /proc and loadavg may count another namespace)
        self._window = Window(pid, clock) if proc is not None and clock is not None else None
        if not named and proc is not None:
            _unnamed.add((pid, proc.start))
        _register(self)

    def find(self, scan: Scan) -> list[Proc]:
        """Its processes alive in `scan`, recorded for later looks. Bash itself is left out (its caller waits for
        it and owns it) unless the command runs in the background."""
        me, bash = os.getpid(), self.bash_pid
        skipped = (me,) if self.background else (me, bash)
        procs = scan.within(self._window)
        candidates = [p for p in procs.values() if p.pid not in skipped and not p.zombie]
        verified = {
            p.pid
            for p in candidates
            if self._known.get(p.pid) == p.start or (p.ppid not in (0, 2) and scan.mark(p.pid) == self.id)
        }
        leader = procs.get(bash)
        bash_ours = leader is not None and leader.start == self._bash_start
        # Bash's session and group are the command's while bash holds the number, or just after it exited (no
        # pid could be reused yet); later only while a member already known to be the command's is in them:
        # the number is not reused while any member lives, and a stranger may take it once none does.
        in_session = [p.pid for p in candidates if bash in (p.sid, p.pgid)]
        if bash_ours or (leader is None and not self._ended) or any(pid in verified for pid in in_session):
            verified.update(in_session)
        found = set(verified)
        children = _children(procs)
        todo = [*found, *([bash] if bash_ours and leader is not None and not leader.zombie else [])]
        while todo:
            for child in children.get(todo.pop(), ()):
                proc = procs[child]
                if child not in found and child != me and not proc.zombie:
                    found.add(child)
                    todo.append(child)
        self._known = {pid: procs[pid].start for pid in found}
        return sorted((procs[pid] for pid in found), key=lambda p: p.pid)

    def finished(self, scan: Scan) -> list[Proc]:
        """After bash exited: what it left running (kept for the exit hook), or nothing (then it is forgotten)."""
        left = self.find(scan)
        self._ended = True
        if not left:
            _forget(self)
        return left


async def watch(command: Command, every: float = POLL_SECONDS) -> None:
    """Look for the command's processes every `every` seconds, while its process tree still links them to bash;
    until cancelled."""
    while True:
        await asyncio.sleep(every)
        command.find(Scan())


# --- stopping ----------------------------------------------------------------------------------------------


class Targets:
    """Processes to stop, held by pidfd where the kernel has them: signals can never reach a reused pid."""

    def __init__(self, procs: Iterable[Proc]) -> None:
        self._held: list[tuple[Proc, int | None]] = []
        self.names: list[str] = []
        """`sleep 300 (pid 123)` for each held process, read while it still runs."""
        for proc in procs:
            try:
                fd: int | None = os.pidfd_open(proc.pid)
            except (AttributeError, OSError):  # gone, or no pidfds (old kernel, not Linux)
                fd = None
            current = _stat(proc.pid)
            if current is None or current.start != proc.start:  # gone or reused before we held it
                if fd is not None:
                    os.close(fd)
                continue
            self._held.append((proc, fd))
            # a sandbox's PID 1, or its bwrap, is plumbing, not something the command ran
            if not _namespace_init(proc.pid) and (proc.pid, proc.start) not in _unnamed:
                self.names.append(f"{_command_line(proc.pid)} (pid {proc.pid})")

    @property
    def procs(self) -> list[Proc]:
        return [proc for proc, _ in self._held]

    def signal(self, signum: int) -> None:
        for proc, fd in self._held:
            with contextlib.suppress(OSError):
                if fd is not None:
                    signal.pidfd_send_signal(fd, signum)
                elif (current := _stat(proc.pid)) is not None and current.start == proc.start:
                    os.kill(proc.pid, signum)

    def alive(self) -> bool:
        """True while any of them has not exited (a zombie has)."""
        for proc, fd in self._held:
            if fd is not None:
                if not select.select([fd], [], [], 0)[0]:
                    return True
            elif (current := _stat(proc.pid)) is not None and current.start == proc.start and not current.zombie:
                return True
        return False

    def close(self) -> None:
        for _, fd in self._held:
            if fd is not None:
                os.close(fd)
        self._held = []


def stop_now(procs: Iterable[Proc], grace: float = EXIT_GRACE_SECONDS) -> list[str]:
    """SIGTERM, up to `grace` seconds to exit, then SIGKILL; the names of the processes that were signalled."""
    targets = Targets(procs)
    try:
        targets.signal(signal.SIGTERM)
        deadline = time.monotonic() + grace
        while targets.alive() and time.monotonic() < deadline:
            time.sleep(0.02)
        targets.signal(signal.SIGKILL)
        return targets.names
    finally:
        targets.close()


def stopped_line(names: list[str], what: str, kind: str = "background ") -> str:
    """`stopped 2 background processes <what>: sleep 300 (pid 123), ...`, naming at most NAMES_SHOWN."""
    shown = names[:NAMES_SHOWN]
    if len(names) > NAMES_SHOWN:
        shown.append(f"and {len(names) - NAMES_SHOWN} more")
    count = f"1 {kind}process" if len(names) == 1 else f"{len(names)} {kind}processes"
    return f"stopped {count} {what}: {', '.join(shown)}"


def _namespace_init(pid: int) -> bool:
    """True for the init (PID 1) of a PID namespace below ours: bwrap's reaper for a sandboxed command, which lives
    as long as that command's background jobs. It is stopped with them (that ends its whole namespace) but not
    named or counted."""
    try:
        status = (_PROC / str(pid) / "status").read_text(errors="replace")
    except OSError:
        return False
    for line in status.splitlines():
        if line.startswith("NSpid:"):
            ids = line.split()[1:]
            return len(ids) > 1 and ids[-1] == "1"
    return False


def _command_line(pid: int) -> str:
    try:
        raw = (_PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        raw = b""
    text = " ".join(part.decode(errors="replace") for part in raw.split(b"\0") if part)
    if not text:
        with contextlib.suppress(OSError):
            text = (_PROC / str(pid) / "comm").read_text(errors="replace").strip()
    text = visible(text or "?")
    return text if len(text) <= 60 else text[:59] + "…"


# --- the commands that may still have processes, and the exit hook ----------------------------------------

_live: dict[str, Command] = {}
_hooked = False
_after_stop: list[Callable[[], None]] = []


def after_exit_stop(then: Callable[[], None]) -> None:
    """Have `then` run right after the exit hook stopped every leftover (to reap what it stopped)."""
    _after_stop.append(then)


def _register(command: Command) -> None:
    global _hooked
    _live[command.id] = command
    if not _hooked:
        atexit.register(stop_all_at_exit)
        _hooked = True


def _forget(command: Command) -> None:
    _live.pop(command.id, None)


def leftovers() -> list[Proc]:
    """Every process a command of this ram left running."""
    scan = Scan()
    found: dict[int, Proc] = {}
    for command in list(_live.values()):
        found.update((p.pid, p) for p in command.find(scan))
    return sorted(found.values(), key=lambda p: p.pid)


def stop_all_at_exit() -> None:
    """Stop every leftover, and say so in one line on stderr."""
    stopped = stop_now(leftovers())
    _live.clear()
    for then in _after_stop:
        then()
    if stopped:
        with contextlib.suppress(OSError, ValueError):  # stderr closed
            sys.stderr.write(stopped_line(stopped, "that commands left running") + "\n")
            sys.stderr.flush()
