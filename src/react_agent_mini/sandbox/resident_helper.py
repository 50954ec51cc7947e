"""The helper a resident sandbox runs inside bwrap (`resident`): it starts each command it is sent and says when it
ended. Standard library only: it runs as `python -I -S /dev/fd/N FD ram-sandbox-helper`, N a memfd holding this
file, FD its end of the control socket (a SOCK_SEQPACKET socketpair, so each message arrives whole).

ram → helper: `C<id>` with three descriptors — a memfd holding the request (the working directory, the argument
count, the arguments and the environment's `NAME=value` entries, NUL-separated) and the command's stdout and stderr
pipes.

helper → ram: `R` once, when ready; for each request, from the forked child itself just before it `exec`s, `S<id>`
with SCM_CREDENTIALS (the kernel writes the sender's pid into them in ram's PID namespace: ram signals the command's
process group by that number); or `E<id> <reason>` when it could not start; then `X<id> <code>` when it ended (the
exit status, or minus the signal that killed it); `T<id>` when the sandbox's mounts are no longer the ones it
started with (a mount point replaced or removed from outside: the kernel detaches the mount in this namespace), after
which it starts nothing more (and still reports the commands it runs).

The helper cannot be traced or have its descriptors opened through /proc by the commands (PR_SET_DUMPABLE 0: they
run as the same user without CAP_SYS_PTRACE), so a command cannot send ram messages of its own. It exits when ram
closes its end; commands left running (`server &`) stay in the namespace with bwrap's init.
"""

import ctypes
import os
import selectors
import signal
import socket
import struct
import sys

PR_SET_DUMPABLE = 4


def _mounts() -> bytes:
    with open("/proc/self/mountinfo", "rb") as file:
        return file.read()


def _start(control: socket.socket, rid: bytes, request: list[bytes], out: int, err: int) -> int:
    """Fork and exec the command; the child's pid as seen here (0 when the fork failed)."""
    cwd, count = request[0], int(request[1])
    argv, env = request[2 : 2 + count], request[2 + count :]
    environ = dict(entry.split(b"=", 1) for entry in env if b"=" in entry)
    pid = os.fork()
    if pid:
        return pid
    try:  # the child: nothing here may return to the loop
        for number in (signal.SIGPIPE, signal.SIGCHLD, signal.SIGXFSZ):
            signal.signal(number, signal.SIG_DFL)
        signal.set_wakeup_fd(-1)
        os.setsid()
        os.chdir(cwd)
        stdin = os.open("/dev/null", os.O_RDONLY)
        os.dup2(stdin, 0)
        os.dup2(out, 1)
        os.dup2(err, 2)
        credentials = struct.pack("3i", os.getpid(), os.getuid(), os.getgid())
        control.sendmsg([b"S" + rid], [(socket.SOL_SOCKET, socket.SCM_CREDENTIALS, credentials)])
        os.execve(argv[0], argv, environ)
    except BaseException as exc:  # anything: report it and leave
        try:
            control.send(b"E" + rid + b" " + str(exc).encode(errors="replace")[:2000])
        finally:
            os._exit(127)
    os._exit(127)


def main() -> None:
    if sys.argv[0].startswith("/dev/fd/"):  # the memfd this file was read from: no command is to inherit it
        os.close(int(sys.argv[0].removeprefix("/dev/fd/")))
    control = socket.socket(fileno=int(sys.argv[1]))
    os.set_inheritable(control.fileno(), False)
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    mounts = _mounts()
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    running: dict[int, bytes] = {}
    stale = False
    selector = selectors.DefaultSelector()
    selector.register(control, selectors.EVENT_READ)
    selector.register(wake_r, selectors.EVENT_READ)
    credentials = struct.pack("3i", os.getpid(), os.getuid(), os.getgid())
    control.sendmsg([b"R"], [(socket.SOL_SOCKET, socket.SCM_CREDENTIALS, credentials)])
    fd_size = struct.calcsize("i")
    while True:
        for key, _ in selector.select():
            if key.fileobj is control:
                message, ancillary, _, _ = control.recvmsg(64, socket.CMSG_SPACE(3 * fd_size), socket.MSG_CMSG_CLOEXEC)
                if not message:
                    return  # ram is gone or done with this sandbox
                fds = [
                    number
                    for level, kind, data in ancillary
                    if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS
                    for number in struct.unpack(f"{len(data) // fd_size}i", data[: len(data) - len(data) % fd_size])
                ]
                try:
                    rid = message[1:]
                    if message[:1] != b"C" or len(fds) != 3:
                        continue
                    if stale or _mounts() != mounts:  # refused; the commands running are still reported
                        stale = True
                        control.send(b"T" + rid)
                        continue
                    with os.fdopen(os.dup(fds[0]), "rb") as file:
                        request = file.read().split(b"\0")[:-1]
                    pid = _start(control, rid, request, fds[1], fds[2])
                    running[pid] = rid
                except (OSError, ValueError, IndexError) as exc:
                    control.send(b"E" + message[1:] + b" " + str(exc).encode(errors="replace")[:2000])
                finally:
                    for number in fds:
                        os.close(number)
            else:
                os.read(wake_r, 512)
        while running:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if not pid:
                break
            rid = running.pop(pid, b"")
            if rid:
                code = os.waitstatus_to_exitcode(status)
                control.send(b"X" + rid + b" " + str(code).encode())


if __name__ == "__main__":
    main()
