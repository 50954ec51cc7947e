"""A worker process of the local pool: `python -m react_agent_mini.batch.child`.

Its stdin brings the settings (first line) and then one task per line; its stdout answers each task with JSON
lines — progress after every model call, then the outcome (both name their task). It runs each task as soon as it
arrives, several at once (the pool sends at most `TASKS_PER_PROCESS`): a task spends its time waiting for the
model, so one interpreter and one copy of ram's modules serve them all. Input ending means no more tasks: it
finishes the running ones and exits. It runs in a session of its own, so a terminal's
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
import time
from pathlib import Path

import msgspec

from .engine import lost
from .limiter import FileLimiter, Limiter, NoLimiter
from .outcome import Outcome, Progress
from .settings import RunSettings, from_json, to_json
from .tasks import BatchTask

LINE_LIMIT = 1 << 30
"""Longest line either side reads (an outcome carries its whole transcript)."""
TASKS_PER_PROCESS = 8
"""Most tasks a worker process runs at once (the pool starts a process per CPU, more past this many tasks each)."""


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

    async def one(task: BatchTask) -> None:
        started = time.monotonic()
        try:
            outcome = await run_task(
                task, settings, limiter=limiter, stop=stop, report=lambda p: send(ProgressLine(p))
            )  # fmt: skip
        except Exception as exc:  # a bug of ours: this task's error, not the end of the others
            outcome = lost(task, "error", f"internal error: {type(exc).__name__}: {exc}", started)
        send(OutcomeLine(outcome))

    watcher = asyncio.ensure_future(orphaned())
    stopping = asyncio.ensure_future(stop.wait())
    running: set[asyncio.Future[None]] = set()
    while not stop.is_set():
        reading = asyncio.ensure_future(reader.readline())
        await asyncio.wait({reading, stopping}, return_when=asyncio.FIRST_COMPLETED)
        if not reading.done():
            reading.cancel()
            break
        line = reading.result()
        if not line:
            break
        job = asyncio.ensure_future(one(from_json(line, BatchTask)))
        running.add(job)
        job.add_done_callback(running.discard)
    if running:  # stopping: they stop themselves (and say so); input ended: they finish
        await asyncio.wait(set(running))
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
