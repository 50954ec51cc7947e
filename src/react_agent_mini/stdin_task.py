"""What stdin holds for a headless run's task (`ram -p < task.txt`, `git diff | ram "review"`): read by the run, or
by the early lane before it (`early/`), the same way."""

from __future__ import annotations

import os
import sys

STDIN_WAIT_SECONDS = 3.0
"""With a task argument, how long a pipe on stdin may stay silent before the run goes on without it."""


def read_stdin(wait: float | None) -> str:
    """What stdin (not a terminal) holds, as `ram "task" < file` or `git diff | ram "task"` give it.

    `wait` None: stdin is the task, so read it to the end however long that takes. Otherwise a file is read, and a
    pipe or socket only if it has data (or its end) within `wait` seconds: a pipe a parent holds open and never
    writes to (a CI runner, `subprocess.Popen` with stdin inherited) must not hold the run forever. Devices
    (`/dev/null`) give nothing.
    """
    import select
    import stat

    if sys.stdin is None:  # started with stdin closed
        return ""
    try:
        fd = sys.stdin.fileno()
        kind = os.fstat(fd).st_mode
        if wait is not None and not stat.S_ISREG(kind):
            if not (stat.S_ISFIFO(kind) or stat.S_ISSOCK(kind)):
                return ""
            if not select.select([fd], [], [], wait)[0]:
                print(
                    f"warning: nothing arrived on stdin within {wait:g} s, so it was not read (to wait for a slow "
                    "command, pass -p; to skip this wait, use < /dev/null)",
                    file=sys.stderr,
                )
                return ""
        return sys.stdin.buffer.read().decode("utf-8", "replace")
    except (OSError, ValueError) as exc:  # unreadable (e.g. a closed descriptor): as if nothing was piped
        print(f"warning: could not read stdin ({exc}); going on without it", file=sys.stderr)
        return ""
