"""One writer per session: the advisory lock a process holds while it appends to a session's transcript.

The lock is `flock(LOCK_EX | LOCK_NB)` on `<session-id>.lock` beside `<session-id>.jsonl`, taken before the
transcript is read for resuming or created, and held until the transcript is closed. The holder writes its pid and
command line into the file, so the process turned away can say who has the session. The kernel drops the lock
when the holder's last descriptor closes, however the process ends (`kill -9` included), so a stale file never
blocks anyone; the file itself stays (deleting it on release would let a third process lock a new file while a
second one still holds the old one). The descriptor is not inherited by tools' subprocesses, so a background job
started by the Bash tool cannot keep the session locked after `ram` exits.
"""

from __future__ import annotations

import fcntl
import os
import sys
import time
from pathlib import Path

from .terminal_text import visible

CONTENDED_RETRIES = (0.005, 0.01, 0.02)
"""Seconds to wait before trying a held lock again: a process that only checks whether a session is free (see
`holder`) holds the lock for microseconds, and must not turn a real writer away."""


class SessionInUse(Exception):
    """Another live process is appending to this session."""

    def __init__(self, session_id: str, holder: str) -> None:
        self.session_id = session_id
        self.holder = holder
        """Who holds it, e.g. `process 4242 (ram -c 'next task')`."""
        super().__init__(
            f"session {session_id[:12]} is in use by {holder}; wait for it to finish or start a new session"
        )


def lock_path(transcript_path: Path) -> Path:
    """The lock file of the transcript at `transcript_path`."""
    return transcript_path.with_suffix(".lock")


class SessionLock:
    """A held session lock; `release` (or the process ending) lets the next writer in."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd = fd

    @classmethod
    def acquire(cls, transcript_path: Path) -> SessionLock:
        """Lock the session of `transcript_path` for this process, or raise `SessionInUse` (OSError when the
        lock file cannot be made, e.g. a read-only data directory)."""
        path = lock_path(transcript_path)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            for pause in (*CONTENDED_RETRIES, None):
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if pause is None:
                        raise SessionInUse(transcript_path.stem, _holder(fd)) from None
                    time.sleep(pause)
            # Overwrite, then cut what is left of a longer previous holder's line (cutting to 0 first would free
            # and reallocate the file's block: 50 times slower).
            holder = f"{os.getpid()}\n{_command()}\n".encode("utf-8", "replace")
            os.pwrite(fd, holder, 0)
            os.ftruncate(fd, len(holder))
        except BaseException:
            os.close(fd)
            raise
        return cls(path, fd)

    def release(self) -> None:
        """Let the next writer in (closing the descriptor drops the lock; the file stays)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def holder(transcript_path: Path) -> str | None:
    """Who holds the session of `transcript_path` now (`process 4242 (ram -c …)`), or None when it is free."""
    try:
        lock = SessionLock.acquire(transcript_path)
    except SessionInUse as exc:
        return exc.holder
    except OSError:
        return None  # no lock file can be made here: whoever opens the session for writing will say so
    lock.release()
    return None


def _command() -> str:
    """This process's command line as the user typed it, shortened (it is shown to another process's user)."""
    import shlex

    line = " ".join(shlex.join(["ram", *sys.argv[1:]]).split())  # one line, whatever the task held
    return line if len(line) <= 80 else line[:79] + "…"


def _holder(fd: int) -> str:
    """The holder named in the lock file: `process PID (COMMAND)`."""
    try:
        text = os.pread(fd, 4096, 0).decode("utf-8", "replace")
    except OSError:
        text = ""
    pid, _, command = text.partition("\n")
    if not pid.strip().isdigit():
        return "another process"  # it has locked the file and not yet written its pid
    command = visible(" ".join(command.split()))  # written by another process: shown as text, on one line
    return f"process {pid.strip()} ({command})" if command else f"process {pid.strip()}"
