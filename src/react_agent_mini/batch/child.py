"""A worker process of the local pool: `python -m react_agent_mini.batch.child`.

Its stdin brings the settings (first line) and then one task per line; its stdout answers each task with JSON
lines — progress after every model call, then the outcome. It runs in a session of its own, so a terminal's
Ctrl+C reaches only the driver, which decides: SIGTERM (or stdin closing) stops the running task gently and ends
the process, and so does the driver's death (it would have nobody to report to); stderr (ram's warnings) goes to
a log file in DIR/logs — where a full disk makes a warning fail to be written, not the task.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import signal
import sys
from pathlib import Path

import msgspec

from .limiter import FileLimiter, Limiter, NoLimiter
from .outcome import Outcome, Progress
from .settings import RunSettings, from_json, to_json
from .tasks import BatchTask

LINE_LIMIT = 1 << 30
"""Longest line either side reads (an outcome carries its whole transcript)."""


class ProgressLine(msgspec.Struct, tag="progress"):
    progress: Progress


class OutcomeLine(msgspec.Struct, tag="outcome"):
    outcome: Outcome


ChildLine = ProgressLine | OutcomeLine


async def serve() -> int:
    from .worker import run_task

    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    first = await reader.readline()
    if not first:
        return 0
    settings = from_json(first, RunSettings)
    limiter: Limiter = FileLimiter(Path(settings.limiter_dir)) if settings.limiter_dir else NoLimiter()
    out = sys.stdout.buffer

    def send(line: ChildLine) -> None:
        out.write(to_json(line) + b"\n")
        out.flush()

    parent = os.getppid()

    async def orphaned() -> None:  # the driver was killed outright: stop too, rather than finish for nobody
        while os.getppid() == parent:
            await asyncio.sleep(1.0)
        stop.set()

    watcher = asyncio.ensure_future(orphaned())
    stopping = asyncio.ensure_future(stop.wait())
    while not stop.is_set():
        reading = asyncio.ensure_future(reader.readline())
        await asyncio.wait({reading, stopping}, return_when=asyncio.FIRST_COMPLETED)
        if not reading.done():
            reading.cancel()
            break
        line = reading.result()
        if not line:
            break
        task = from_json(line, BatchTask)
        outcome = await run_task(task, settings, limiter=limiter, stop=stop, report=lambda p: send(ProgressLine(p)))
        send(OutcomeLine(outcome))
    stopping.cancel()
    watcher.cancel()
    return 0


class _ForgivingText(io.TextIOWrapper):
    """stderr that drops what the disk refuses (the log is on DIR's disk) instead of raising at its writer."""

    def write(self, text: str) -> int:
        try:
            return super().write(text)
        except OSError:
            return len(text)

    def flush(self) -> None:
        with contextlib.suppress(OSError):
            super().flush()


def main() -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the driver decides what Ctrl+C does
    raw = io.FileIO(sys.stderr.fileno(), "w", closefd=False)
    sys.stderr = _ForgivingText(io.BufferedWriter(raw), errors="backslashreplace", line_buffering=True)
    try:
        return asyncio.run(serve())
    except BrokenPipeError:  # the driver is gone
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
