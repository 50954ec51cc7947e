"""How a batch shows itself while it runs: a live bar on a terminal (rich), one plain line per finished task
otherwise (a log file, CI). Both on stderr; the summary at the end goes to stdout."""

from __future__ import annotations

import time
from typing import Protocol, TextIO

from ..pricing import format_cost
from ..terminal_text import visible
from .outcome import TaskResult


class Display(Protocol):
    def started(self, task_id: str) -> None: ...

    def spent(self, cost: float) -> None: ...

    def finished(self, result: TaskResult) -> None: ...

    def dropped(self, task_id: str) -> None:
        """The task stopped without a result (Ctrl+C, the budget)."""
        ...

    def note(self, text: str) -> None: ...

    def close(self) -> None: ...


def describe(result: TaskResult) -> str:
    """`completed · 3 turns · $0.0012 · 4.1 s` (and the error, if any)."""
    parts = [result.status, f"{result.num_turns} turns"]
    if result.cost_usd is not None:
        parts.append(format_cost(result.cost_usd))
    parts.append(f"{result.duration_s:.1f} s")
    if result.test_exit_code not in (None, 0):
        parts.append(f"test exit {result.test_exit_code}")
    if result.error:
        parts.append(result.error)
    return " · ".join(visible(part) for part in parts)


class PlainDisplay:
    """`[ 3/20] t07 completed · 3 turns · $0.0001 · 1.2 s`, one line per finished task."""

    def __init__(self, stream: TextIO, total: int) -> None:
        self.stream, self.total, self.done = stream, total, 0

    def started(self, task_id: str) -> None:
        return None

    def spent(self, cost: float) -> None:
        return None

    def finished(self, result: TaskResult) -> None:
        self.done += 1
        width = len(str(self.total))
        self.note(f"[{self.done:>{width}}/{self.total}] {visible(result.id)} {describe(result)}")

    def dropped(self, task_id: str) -> None:
        return None

    def note(self, text: str) -> None:
        self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        return None


class LiveDisplay:
    """A rich progress bar: done / failed / running, cost and time; finished tasks that did not complete are
    printed above it."""

    def __init__(self, stream: TextIO, total: int) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.console = Console(file=stream, highlight=False, markup=False, emoji=False)
        self.progress = Progress(
            TextColumn("ram batch"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[counts]}"),
            TimeElapsedColumn(),
            console=self.console,
            transient=False,
        )
        self.bar = self.progress.add_task("batch", total=total, counts="")
        self.running: set[str] = set()
        self.completed = self.not_completed = 0
        self.cost = 0.0
        self.started_at = time.monotonic()
        self.progress.start()
        self._refresh()

    def _refresh(self) -> None:
        counts = f"✓ {self.completed}  ✗ {self.not_completed}  ● {len(self.running)} running  {format_cost(self.cost)}"
        self.progress.update(self.bar, counts=counts)

    def started(self, task_id: str) -> None:
        self.running.add(task_id)
        self._refresh()

    def spent(self, cost: float) -> None:
        self.cost = cost
        self._refresh()

    def finished(self, result: TaskResult) -> None:
        self.running.discard(result.id)
        if result.status == "completed":
            self.completed += 1
        else:
            self.not_completed += 1
            self.console.print(f"{visible(result.id)}: {describe(result)}")
        self.progress.advance(self.bar)
        self._refresh()

    def dropped(self, task_id: str) -> None:
        self.running.discard(task_id)
        self._refresh()

    def note(self, text: str) -> None:
        self.console.print(text)

    def close(self) -> None:
        self.progress.stop()


def make_display(stream: TextIO, total: int) -> Display:
    """The live bar when `stream` is a terminal, plain lines otherwise."""
    if stream.isatty():
        return LiveDisplay(stream, total)
    return PlainDisplay(stream, total)
