"""Noticing that the client of `--input-format stream-json` went away while ram has nothing to write.

A client that dies (a crash, an OOM kill, `kill -9`) closes its end of our stdout, and nothing else tells us: stdin
ending is no sign (`echo '{"type":"user",...}' | ram --input-format stream-json` closes it at once, and that turn
must still run to its end), and a write fails only when there is one — during a slow stream without partial
messages, or a long command, that can be minutes of model tokens spent for nobody. A pipe or socket whose reader
is gone reports it to `poll()` as POLLERR (a pipe) or POLLHUP (a socket, which Node's child processes get), even
when no event is asked for; a thread waits for that and says so.
"""

from __future__ import annotations

import os
import select
import stat
import threading
from collections.abc import Callable


def watch_reader(fd: int, gone: Callable[[], None]) -> bool:
    """Call `gone()` (from a daemon thread) once nobody can read `fd` any more. False when `fd` cannot go away
    that way (a regular file, /dev/null) or cannot be watched."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)) or not hasattr(select, "poll"):
        return False
    threading.Thread(target=_wait, args=(fd, gone), name="stdout-watch", daemon=True).start()
    return True


def _wait(fd: int, gone: Callable[[], None]) -> None:
    poller = select.poll()
    poller.register(fd, 0)  # no events asked for: POLLERR, POLLHUP and POLLNVAL are reported all the same
    while True:
        try:
            ready = poller.poll()
        except OSError:
            return
        for _, events in ready:
            if events & (select.POLLERR | select.POLLHUP):
                gone()
                return
            if events & select.POLLNVAL:  # the descriptor was closed under us: the process is ending
                return
