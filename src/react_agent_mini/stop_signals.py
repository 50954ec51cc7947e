"""Ctrl+C, SIGTERM and SIGHUP end a run cleanly, whatever it is doing.

Killed by a signal's default action, the process would leave its MCP servers running (they live in their own
sessions, so a closed terminal's hangup does not reach them, and atexit hooks do not run). So while a run lasts,
each of these signals first asks the caller to stop what it is doing (a turn aborts its stream, tools and their
process groups); when there is nothing to abort, the run's task is cancelled, so its `finally` blocks stop the
servers. The run then ends with 130, 143 or 129 (128 + the signal number); a second signal exits at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import Callable, Iterator

EXIT_CODES = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}


class Stopped:
    """Which signal stopped the run, if any (its exit code replaces the run's own)."""

    def __init__(self) -> None:
        self.exit_code: int | None = None


def _nothing_to_abort(code: int) -> bool:
    return False


@contextlib.contextmanager
def stop_on_signals(abort: Callable[[int], bool] = _nothing_to_abort) -> Iterator[Stopped]:
    """Inside a running event loop: on a signal, `abort(exit_code)`; if that returns False, cancel the current
    task (catch CancelledError there when `Stopped.exit_code` is set). The handlers are removed on leaving."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    stopped = Stopped()

    def on_signal(code: int) -> None:
        first = stopped.exit_code is None
        stopped.exit_code = code
        if first and abort(code):
            return
        if first and task is not None and not task.done():
            task.cancel()
            return
        sys.stderr.write("\nforced exit\n")
        sys.stderr.flush()
        raise SystemExit(code)

    installed = []
    for signum, code in EXIT_CODES.items():
        try:
            loop.add_signal_handler(signum, on_signal, code)
            installed.append(signum)
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no signal support
            pass
    try:
        yield stopped
    finally:
        for signum in installed:
            loop.remove_signal_handler(signum)


def was_stopped(stopped: Stopped) -> bool:
    """In an `except asyncio.CancelledError` block: True if a signal caused the cancellation (which is then
    consumed, so the task can finish normally), False if it came from elsewhere (re-raise it)."""
    if stopped.exit_code is None:
        return False
    task = asyncio.current_task()
    if task is not None:
        task.uncancel()
    return True
