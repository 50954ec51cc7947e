"""A resident sandbox: one bwrap kept running for a session's commands while its mounts stay what they were, so a
Bash call costs a fork inside it instead of a new bwrap (new namespaces, /dev, /proc, a launcher shell: ~8 ms here,
against ~1 ms).

`Resident.start` runs `bwrap --args FD -- python -I -S /dev/fd/N FD ram-sandbox-helper` (N: a memfd holding
`resident_helper.py`; FD: its end of the control socket) with the same namespaces and mounts a
command would get (`runtime.Runtime` plans them afresh before every command, and a resident serves only commands
whose plan is exactly the one it was started with). The helper (`resident_helper`) forks each command with the
command's own pipes, in a session and process group of its own; its child tells ram its pid, which the kernel
translates into ram's PID namespace, so ram stops a command as it stops an unsandboxed one: `killpg` of its group,
and `leftovers` for what left it. The helper reports the exit status (`Started`, which the Bash tool waits on as it
waits on a subprocess).

What changes against one bwrap per command: the commands of one resident share its PID, IPC and network namespaces,
as the commands of one shell session do — a server one call started in the background is reachable from the next
call's `curl`, and a command sees (as the same user) the processes earlier ones left running. The mounts do not
change: a new plan (a deny rule added or removed, a file a rule covers appearing, a path changing where it points)
starts a new resident, and the helper refuses to start anything once its mount table differs from the one it began
with (the kernel detaches a mount in this namespace when its mount point is replaced from outside — an editor
saving a hidden `.env` by renaming onto it): ram then starts a new one for that command, and lets the old one go
once the commands it still runs have ended.

Anything unexpected — bwrap or the helper failing to start, the helper gone, an event loop other than the one it
was started on — and the command runs the old way, under a bwrap of its own (`Runtime.launch`), whose errors say
what is wrong.
"""

from __future__ import annotations

import array
import asyncio
import contextlib
import os
import signal
import socket
import struct
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from . import bwrap

HELPER_NAME = "ram-sandbox-helper"
"""The helper's last argument: what `ps` shows it by."""
READY_TIMEOUT_S = 20.0
"""A helper that has not said it is ready by then is given up on (the command then gets a bwrap of its own)."""
LOST_STATUS = 255
"""The exit code given to a command whose helper stopped before it said how the command ended."""
_FD_SIZE = struct.calcsize("i")
_CREDENTIALS = struct.calcsize("3i")


class Unavailable(Exception):
    """This resident cannot start the command (the caller starts it under a bwrap of its own)."""


class Started:
    """A command running in a resident sandbox, waited on as an `asyncio.subprocess.Process` is."""

    def __init__(self, pid: int, ended: asyncio.Future[int]) -> None:
        self.pid = pid
        """In ram's PID namespace; also its process group and session."""
        self._ended = ended
        self.lost = False
        """True when the helper stopped before it said how the command ended (the code is then LOST_STATUS)."""

    @property
    def returncode(self) -> int | None:
        return self._ended.result() if self._ended.done() else None

    async def wait(self) -> int:
        return await asyncio.shield(self._ended)


def interpreter() -> str | None:
    """The Python the helper runs on: the base interpreter (a virtualenv's `python` may lie under /tmp, which the
    sandbox replaces), or None when there is none to name."""
    base = getattr(sys, "_base_executable", "") or sys.executable
    return os.path.realpath(base) if base else None


def helper_source() -> bytes:
    """The helper's code (run from a memfd: the sandbox may hide or replace where ram is installed)."""
    return Path(__file__).with_name("resident_helper.py").read_bytes()


class Resident:
    """One bwrap with the helper in it, serving commands of one mount plan on one event loop."""

    def __init__(self, plan: Sequence[str], process: subprocess.Popen[bytes], control: socket.socket) -> None:
        self.plan = tuple(plan)
        self.process = process
        self._control = control
        self._loop = asyncio.get_running_loop()
        self._ids = 0
        self._requests: dict[bytes, _Request] = {}
        """The commands sent and not yet over, by request id."""
        self._ready: asyncio.Future[int] = self._loop.create_future()
        """Resolved with the helper's pid once it said it is ready."""
        self._init = -1
        """A pidfd of bwrap's init in the sandbox's PID namespace (the helper's parent): killing it ends them all."""
        self.alive = True
        """False once it takes no more commands."""
        self._retired = False
        self._loop.add_reader(control.fileno(), self._readable)

    @classmethod
    async def start(cls, binary: str, plan: Sequence[str], env: Mapping[str, str], stderr: int) -> Resident:
        """bwrap with `plan`'s namespaces and mounts and the helper in it, once the helper said it is ready."""
        python = interpreter()
        if python is None:
            raise Unavailable("no Python interpreter to run the helper")
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        ours.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        ours.setblocking(False)
        args_fd = bwrap.args_file(plan)
        source_fd = bwrap.data_file(helper_source())
        try:
            helper = [python, "-I", "-S", f"/dev/fd/{source_fd}", str(theirs.fileno()), HELPER_NAME]
            process = subprocess.Popen(
                bwrap.command_args(binary, args_fd, helper),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                pass_fds=(args_fd, source_fd, theirs.fileno()),
                env=dict(env),
                start_new_session=True,  # not in the group of ram's terminal: a Ctrl+C there is ram's to handle
            )
        except (OSError, ValueError) as exc:
            ours.close()
            raise Unavailable(str(exc)) from exc
        finally:
            os.close(args_fd)
            os.close(source_fd)
            theirs.close()
        resident = cls(plan, process, ours)
        try:
            async with asyncio.timeout(READY_TIMEOUT_S):
                helper_pid = await asyncio.shield(resident._ready)
        except (TimeoutError, Unavailable) as exc:
            resident.stop()
            raise Unavailable(str(exc) or "the helper did not start") from exc
        except BaseException:  # cancelled: nothing of it may be left running
            resident.stop()
            raise
        resident._init = _pidfd(_parent(helper_pid))
        return resident

    def serves(self, plan: Sequence[str]) -> bool:
        """True while it is up, on the running event loop, for exactly `plan`."""
        return self.alive and tuple(plan) == self.plan and asyncio.get_running_loop() is self._loop

    async def run(self, argv: Sequence[str], env: Mapping[str, str], cwd: Path, out_w: int, err_w: int) -> Started:
        """Start `argv` in `cwd` with `env`, its stdout and stderr the pipes `out_w` and `err_w` (ram keeps its
        copies: the caller closes them)."""
        self._ids += 1
        rid = str(self._ids).encode()
        entries = [os.fsencode(cwd), str(len(argv)).encode(), *map(os.fsencode, argv)]
        entries += [os.fsencode(name) + b"=" + os.fsencode(value) for name, value in env.items()]
        payload = bwrap.data_file(b"".join(entry + b"\0" for entry in entries))
        request = _Request(self._loop.create_future(), self._loop.create_future())
        self._requests[rid] = request
        try:
            fds = array.array("i", [payload, out_w, err_w])
            self._control.sendmsg([b"C" + rid], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])
        except OSError as exc:
            self._requests.pop(rid, None)
            self._shut()
            raise Unavailable(str(exc)) from exc
        finally:
            os.close(payload)
        pid = await request.started  # cancelled meanwhile: the command is killed as soon as its pid comes
        request.pidfd = _pidfd(pid)
        request.job = job = Started(pid, request.ended)
        if request.ended.done():  # its end came in the same read as its start
            self._finish(rid)
        elif self._control.fileno() < 0:  # the helper went between the two messages
            self._orphaned()
        return job

    def retire(self) -> None:
        """No more commands: once those running have ended, the helper is let go (it exits when its end of the
        socket closes; bwrap's init stays while background jobs do, and `stop` ends them all at exit)."""
        self.alive = False
        self._retired = True
        if not self._requests:
            self._shut()

    def _shut(self) -> None:
        if self._control.fileno() >= 0:
            with contextlib.suppress(ValueError, OSError, RuntimeError):
                self._loop.remove_reader(self._control.fileno())
            self._control.close()
        self._gone(Unavailable("the resident sandbox was closed"))

    def stop(self) -> None:
        """Close it and end its PID namespace with everything in it (at exit, after `leftovers` named what it stops:
        killing the namespace's init kills every process in it)."""
        self._shut()
        if self._init >= 0:
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(self._init, signal.SIGKILL)
            _close(self._init)
            self._init = -1
        with contextlib.suppress(OSError):
            self.process.send_signal(signal.SIGKILL)
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            self.process.wait(timeout=1.0)

    def ended(self) -> bool:
        """True once bwrap has exited (nothing of this sandbox runs any more)."""
        return self.process.poll() is not None

    def _readable(self) -> None:
        while True:
            try:
                message, ancillary, _, _ = self._control.recvmsg(4096, socket.CMSG_SPACE(_CREDENTIALS))
            except BlockingIOError:
                return
            except OSError:
                message, ancillary = b"", []
            if not message:
                self._shut()
                return
            self._received(message, ancillary)

    def _received(self, message: bytes, ancillary: list[tuple[int, int, bytes]]) -> None:
        kind, rest = message[:1], message[1:]
        rid, _, text = rest.partition(b" ")
        if kind == b"R":
            if not self._ready.done():
                self._ready.set_result(_sender(ancillary))
            return
        request = self._requests.get(rid)
        if request is None:
            return
        if kind == b"S":
            pid = _sender(ancillary)
            if request.started.cancelled():  # the call was interrupted meanwhile
                self._requests.pop(rid, None)
                if pid > 0:
                    with contextlib.suppress(OSError):
                        os.killpg(pid, signal.SIGKILL)
            elif not request.started.done():
                if pid > 0:
                    request.started.set_result(pid)
                else:
                    self._requests.pop(rid, None)
                    request.started.set_exception(Unavailable("the command's pid did not come through"))
        elif kind in (b"E", b"T"):
            if kind == b"T":
                self.alive = False  # it starts nothing more: let it go once the commands it runs have ended
                self._retired = True
            if not request.started.done():
                self._requests.pop(rid, None)
                request.started.set_exception(
                    OSError(text.decode(errors="replace")) if kind == b"E" else Unavailable("stale")
                )
            if self._retired and not self._requests:
                self._shut()
        elif kind == b"X":
            if not request.ended.done():
                request.ended.set_result(int(text or b"0"))
            if request.job is not None:
                self._finish(rid)

    def _finish(self, rid: bytes) -> None:
        request = self._requests.pop(rid, None)
        if request is not None:
            _close(request.pidfd)
            request.pidfd = -1
        if self._retired and not self._requests:
            self._shut()

    def _gone(self, why: Exception) -> None:
        self.alive = False
        if not self._ready.done():
            self._ready.set_exception(why)
            self._ready.exception()  # retrieved: `start` may have stopped waiting for it
        for rid, request in list(self._requests.items()):
            if not request.started.done():
                self._requests.pop(rid, None)
                request.started.set_exception(why)
                request.started.exception()
        self._orphaned()

    def _orphaned(self) -> None:
        """The helper is gone: each command still running ends, for us, when its process does."""
        for rid, request in list(self._requests.items()):
            job = request.job
            if job is None or request.ended.done():
                continue  # not started yet (its `run` sees `alive` is False), or its end came
            job.lost = True
            if request.pidfd < 0:
                request.ended.set_result(LOST_STATUS)
                self._finish(rid)
                continue

            def exited(rid: bytes = rid, request: _Request = request) -> None:
                with contextlib.suppress(ValueError, OSError):
                    self._loop.remove_reader(request.pidfd)
                self._finish(rid)
                if not request.ended.done():
                    request.ended.set_result(LOST_STATUS)

            self._loop.add_reader(request.pidfd, exited)


class _Request:
    """One command sent to the helper: its pid once it started, its exit code once it ended."""

    def __init__(self, started: asyncio.Future[int], ended: asyncio.Future[int]) -> None:
        self.started = started
        self.ended = ended
        self.job: Started | None = None
        """Set once `run` has the pid (until then an end that comes waits in `ended`)."""
        self.pidfd = -1


def _sender(ancillary: list[tuple[int, int, bytes]]) -> int:
    """The pid in a message's SCM_CREDENTIALS, as ram's PID namespace numbers it (0 when there are none)."""
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS and len(data) >= _CREDENTIALS:
            return int(struct.unpack("3i", data[:_CREDENTIALS])[0])
    return 0


def _parent(pid: int) -> int:
    """The parent of `pid` (0 when it cannot be read)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
        return int(stat[stat.rindex(b")") + 2 :].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def _pidfd(pid: int) -> int:
    """A pidfd of the command (readable once it exited), or -1 where the kernel has none."""
    if pid <= 0:
        return -1
    try:
        return os.pidfd_open(pid)
    except (OSError, AttributeError):
        return -1


def _close(fd: int) -> None:
    if fd >= 0:
        with contextlib.suppress(OSError):
            os.close(fd)
