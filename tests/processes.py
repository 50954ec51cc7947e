"""Finding the processes a test started, by their command line, and waiting for them to come or go."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path


def pids_with(text: str) -> list[int]:
    """Live processes (other than this one) whose command line contains `text` (zombies have an empty cmdline)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in cmdline:
            found.append(int(entry))
    return found


def wait_until(condition: Callable[[], object], timeout: float = 10) -> bool:
    """Poll `condition` until it is true or `timeout` seconds passed; its last truth value."""
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)
    return bool(condition())
