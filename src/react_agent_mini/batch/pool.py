"""The default engine: `--workers N` worker processes on this machine, each running one task at a time.

A worker (`child.py`) is started once and runs task after task, so the interpreter and ram's modules load N times
per batch, not once per task. Each lane of the pool keeps one worker busy; a worker that dies is reported as its
task's `error` and replaced, and one that does not stop within `HARD_MARGIN` seconds after its task's time limit is
killed (its task: `timeout`). Stopping asks every worker to stop its task (SIGTERM; the outcome comes back as
`interrupted`); forcing kills their process groups.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from collections import deque
from collections.abc import Sequence
from pathlib import Path

from .child import LINE_LIMIT, ChildLine, OutcomeLine, ProgressLine
from .engine import Sink, lost
from .outcome import Outcome
from .settings import RunSettings, from_json, to_json
from .tasks import BatchTask
from .worker import GRACE

HARD_MARGIN = GRACE + 30.0
"""Seconds past a task's time limit before its worker is killed (it stops the task itself well before)."""


class _Worker:
    """One worker process."""

    def __init__(self, process: asyncio.subprocess.Process, log: Path) -> None:
        self.process = process
        self.log = log
        self.terminated = False
        """Asked to stop: if it dies now, its task was interrupted, not broken."""

    @classmethod
    async def start(cls, settings: RunSettings, log: Path) -> _Worker:
        with log.open("ab") as err:
            process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "react_agent_mini.batch.child",
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=err,
                start_new_session=True, limit=LINE_LIMIT,
            )  # fmt: skip
        worker = cls(process, log)
        worker._send(to_json(settings))
        return worker

    def _send(self, line: bytes) -> None:
        stdin = self.process.stdin
        if stdin is not None and not stdin.is_closing():
            stdin.write(line + b"\n")

    async def run(self, task: BatchTask, sink: Sink, timeout: float | None) -> Outcome:
        started = time.monotonic()
        self._send(to_json(task))
        deadline = None if timeout is None else started + timeout + HARD_MARGIN
        stdout = self.process.stdout
        assert stdout is not None
        while True:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                raw = await asyncio.wait_for(stdout.readline(), remaining)
            except TimeoutError:
                self.kill()
                return lost(task, "timeout", f"the worker did not stop after {timeout:g} s; killed", started)
            if not raw:
                code = await self.process.wait()
                if self.terminated:
                    return lost(task, "interrupted", "stopped", started)
                return lost(task, "error", f"the worker process died (exit {code}; see {self.log})", started)
            line: ChildLine = from_json(raw, ChildLine)  # type: ignore[arg-type]
            if isinstance(line, ProgressLine):
                sink.progressed(line.progress)
            elif isinstance(line, OutcomeLine):
                return line.outcome

    @property
    def alive(self) -> bool:
        return self.process.returncode is None

    def terminate(self) -> None:
        """Stop the running task gently and end (no more tasks are read)."""
        self.terminated = True
        with contextlib.suppress(ProcessLookupError):
            self.process.send_signal(signal.SIGTERM)
        if self.process.stdin is not None:
            self.process.stdin.close()

    def kill(self) -> None:
        self.terminated = True
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)

    async def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            await asyncio.wait_for(self.process.wait(), GRACE)
        except TimeoutError:
            self.kill()
            await self.process.wait()


class PoolEngine:
    """Worker processes on this machine."""

    name = "pool"

    def __init__(self, settings: RunSettings, workers: int, log_dir: Path) -> None:
        self.settings = settings
        self.workers = workers
        self.log_dir = log_dir
        self._stopping = False
        self._live: set[_Worker] = set()

    async def run(self, tasks: Sequence[BatchTask], sink: Sink) -> None:
        pending = deque(tasks)

        async def lane(number: int) -> None:
            worker: _Worker | None = None
            try:
                while pending and not self._stopping:
                    if worker is None or not worker.alive:
                        worker = await _Worker.start(self.settings, self.log_dir / f"worker-{number}.log")
                        self._live.add(worker)
                        if self._stopping:
                            break
                    task = pending.popleft()
                    sink.started(task)
                    sink.finished(await worker.run(task, sink, task.timeout or self.settings.timeout))
            finally:
                if worker is not None:
                    await worker.close()
                    self._live.discard(worker)

        await asyncio.gather(*(lane(n + 1) for n in range(min(self.workers, len(tasks)))))

    def stop(self, *, force: bool = False) -> None:
        self._stopping = True
        for worker in list(self._live):
            if force:
                worker.kill()
            else:
                worker.terminate()
