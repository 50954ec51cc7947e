"""What the driver needs of an engine (the local pool, Ray), and what an engine tells the driver."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Protocol

from .outcome import Outcome, Progress, Status, TaskResult
from .tasks import BatchTask


class EngineUnavailable(Exception):
    """The engine cannot run here (Ray not installed, no cluster at the address); the message says what to do."""


class Sink(Protocol):
    """The driver's side: told as tasks start, progress and finish (all in the driver's event loop)."""

    def started(self, task: BatchTask) -> None: ...

    def progressed(self, progress: Progress) -> None: ...

    def finished(self, outcome: Outcome) -> None: ...

    def retried(self, task_id: str, note: str) -> None:
        """The engine runs a task again after its worker died (Ray); `note` says so in a line."""
        ...


class Engine(Protocol):
    """Runs tasks somewhere and reports to a sink."""

    name: str
    """What the summary calls it (`pool`, `ray`)."""

    async def run(self, tasks: Sequence[BatchTask], sink: Sink) -> None:
        """Run every task (each outcome goes to `sink.finished`); return when all are done, or — after `stop` —
        when the running ones have stopped and reported."""
        ...

    def stop(self, *, force: bool = False) -> None:
        """Start no more tasks and stop the running ones (their outcome: `interrupted`); `force`: kill them now."""
        ...


def lost(task: BatchTask, status: Status, error: str, started: float) -> Outcome:
    """The outcome of a task whose worker went away without one."""
    duration = round(time.monotonic() - started, 3)
    return Outcome(TaskResult(task.id, status, error=error, duration_s=duration, finished_at=time.time()))
