"""The default engine: `--workers N` tasks at once on this machine, in worker processes that run several each.

A worker (`child.py`) is started once and runs task after task, up to `TASKS_PER_PROCESS` at a time (a task mostly waits
for the model): one process per CPU, more only past `TASKS_PER_PROCESS` tasks each, so `--workers 8` on two CPUs is two
processes running four tasks each — the interpreter and ram's modules load twice, not eight times, and the batch takes
half the memory, as fast. Each lane of the pool keeps one task running in its slot's worker; a worker that dies is
reported as the `error` of each task it was running and replaced, and one that does not stop within `HARD_MARGIN`
seconds after a task's time limit is killed (that task: `timeout`; the others it ran: `error`, saying why). Stopping
asks every worker to stop its tasks (SIGTERM; their outcomes come back as `interrupted`); forcing kills their process
groups.
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

from .child import LINE_LIMIT, TASKS_PER_PROCESS, ChildLine, OutcomeLine, ProgressLine
from .engine import Sink, lost
from .outcome import Outcome
from .settings import RunSettings, from_json, to_json
from .tasks import BatchTask
from .worker import GRACE

HARD_MARGIN = GRACE + 30.0
"""Seconds past a task's time limit before its worker is killed (it stops the task itself well before)."""


class _Worker:
    """One worker process, running up to `TASKS_PER_PROCESS` tasks at once; one reader sorts its lines by task."""

    def __init__(self, process: asyncio.subprocess.Process, log: Path, sink: Sink) -> None:
        self.process = process
        self.log = log
        self.sink = sink
        self.terminated = False
        """Asked to stop: if it dies now, its tasks were interrupted, not broken."""
        self.killed_for: str | None = None
        """Why it was killed for one of its tasks (a task that did not stop)."""
        self._waiting: dict[str, asyncio.Future[Outcome | None]] = {}
        """Each running task's outcome to come (None: the process died first)."""
        self._reader = asyncio.ensure_future(self._read())

    @classmethod
    async def start(cls, settings: RunSettings, log: Path, sink: Sink) -> _Worker:
        with log.open("ab") as err:
            process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "react_agent_mini.batch.child",
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=err,
                start_new_session=True, limit=LINE_LIMIT,
            )  # fmt: skip
        worker = cls(process, log, sink)
        worker._send(to_json(settings))
        return worker

    def _send(self, line: bytes) -> None:
        stdin = self.process.stdin
        if stdin is not None and not stdin.is_closing():
            stdin.write(line + b"\n")

    async def _read(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        while raw := await stdout.readline():
            line: ChildLine = from_json(raw, ChildLine)  # type: ignore[arg-type]
            if isinstance(line, ProgressLine):
                self.sink.progressed(line.progress)
            elif isinstance(line, OutcomeLine):
                waiting = self._waiting.pop(line.outcome.result.id, None)
                if waiting is not None and not waiting.done():
                    waiting.set_result(line.outcome)
        await self.process.wait()
        for waiting in self._waiting.values():
            if not waiting.done():
                waiting.set_result(None)

    async def run(self, task: BatchTask, timeout: float | None) -> Outcome:
        started = time.monotonic()
        waiting: asyncio.Future[Outcome | None] = asyncio.get_running_loop().create_future()
        if self._reader.done():
            waiting.set_result(None)
        else:
            self._waiting[task.id] = waiting
            self._send(to_json(task))
        limit = None if timeout is None else timeout + HARD_MARGIN
        try:
            outcome = await asyncio.wait_for(asyncio.shield(waiting), limit)
        except TimeoutError:
            self.killed_for = f"task {task.id} did not stop after {timeout:g} s"
            self.kill()
            return lost(task, "timeout", f"the worker did not stop after {timeout:g} s; killed", started)
        if outcome is not None:
            return outcome
        if self.killed_for is not None:  # another task's: this one is not at fault, but it is gone
            return lost(task, "error", f"its worker process was killed ({self.killed_for})", started)
        if self.terminated:
            return lost(task, "interrupted", "stopped", started)
        code = self.process.returncode
        return lost(task, "error", f"the worker process died (exit {code}; see {self.log})", started)

    @property
    def alive(self) -> bool:
        return self.process.returncode is None and not self._reader.done()

    def terminate(self) -> None:
        """Stop the running tasks gently and end (no more tasks are read)."""
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
        await asyncio.wait({self._reader})


class _Slot:
    """A worker process shared by several lanes: started when the first needs it, again when it died, and
    closed when its last lane is done."""

    def __init__(self, engine: PoolEngine, number: int, lanes: int) -> None:
        self.engine, self.number, self.lanes = engine, number, lanes
        self.worker: _Worker | None = None
        self._lock = asyncio.Lock()

    async def get(self, sink: Sink) -> _Worker:
        async with self._lock:
            if self.worker is None or not self.worker.alive:
                log = self.engine.log_dir / f"worker-{self.number}.log"
                self.worker = await _Worker.start(self.engine.settings, log, sink)
                self.engine._live.add(self.worker)
            return self.worker

    async def leave(self) -> None:
        self.lanes -= 1
        if self.lanes == 0 and self.worker is not None:
            await self.worker.close()
            self.engine._live.discard(self.worker)


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
        lanes = min(self.workers, len(tasks))
        if lanes == 0:
            return
        count = max(-(-lanes // TASKS_PER_PROCESS), min(os.cpu_count() or 1, lanes))  # every CPU used
        slots = [_Slot(self, n + 1, len(range(n, lanes, count))) for n in range(count)]

        async def lane(slot: _Slot) -> None:
            try:
                while pending and not self._stopping:
                    worker = await slot.get(sink)
                    if self._stopping:
                        break
                    task = pending.popleft()
                    sink.started(task)
                    sink.finished(await worker.run(task, task.timeout or self.settings.timeout))
            finally:
                await slot.leave()

        await asyncio.gather(*(lane(slots[n % count]) for n in range(lanes)))

    def stop(self, *, force: bool = False) -> None:
        self._stopping = True
        for worker in list(self._live):
            if force:
                worker.kill()
            else:
                worker.terminate()
