"""The driver of a batch: which tasks to run, the engine, the budget, Ctrl+C, and the summary.

It is the one writer of DIR (`results.ResultStore`). Tasks with a result are skipped (with `--retry-failed`, only
completed ones). The first Ctrl+C (or SIGTERM, SIGHUP) asks the engine to stop its running tasks — each ends as
an `interrupted` outcome, which is not recorded, so the rerun runs it again — and the results recorded so far stay
as they are; a second one kills the workers. `--max-cost` stops the batch the same way once what the finished and
the running tasks spent reaches it, and so does a disk that refuses ram's writes (`disk.py`: a worker says so with
its outcome, or the driver finds DIR full before it records one): the task that saw it is not recorded, nor
after that any task that ends without completing (the disk may be why; space freed meanwhile hides it).
A rerun that skips tasks which did not complete says that `--retry-failed` runs them, and so does the summary.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

import msgspec

from ..messages import Usage
from ..pricing import cost_usd, format_cost
from . import disk
from .engine import Engine, EngineUnavailable
from .outcome import Outcome, Progress, TaskResult
from .progress import Display, make_display
from .results import DirectoryInUse, ResultStore
from .settings import RunSettings
from .tasks import BatchTask, read_tasks

EXIT_OK, EXIT_INCOMPLETE, EXIT_USAGE = 0, 1, 2
SIGNAL_EXITS = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}
GO_ON = "run the same command again to go on"
DISK_GO_ON = "free some space, then run the same command again to go on"


class BatchOptions(msgspec.Struct, frozen=True):
    """The driver's own options (the workers' are `RunSettings`)."""

    tasks_file: Path
    out: Path
    workers: int = 4
    retry_failed: bool = False
    max_cost: float | None = None
    """Stop the batch once the tasks have spent this many dollars (at list price)."""
    model_name: str | None = None
    """`model_name_or_path` in preds.json; None: each task's model id."""
    ray: str | None = None
    """A Ray address (`auto`, `host:port`, `ray://…`): run the tasks there instead of on the local pool."""
    ray_num_cpus: float = 1.0
    ray_runtime_env: dict[str, Any] | None = None


class _Driver:
    """The engine's sink: records results, shows progress, keeps the budget."""

    def __init__(self, store: ResultStore, display: Display, engine: Engine, max_cost: float | None) -> None:
        self.store, self.display, self.engine, self.max_cost = store, display, engine, max_cost
        self.recorded: list[TaskResult] = []
        self.running: dict[str, float] = {}
        self.dropped = 0
        self.dropped_cost = 0.0
        self.stopped: str | None = None
        """Why the batch stopped early (None: it did not)."""
        self.go_on = GO_ON
        """What to do about it."""

    @property
    def spent(self) -> float:
        done = sum(result.cost_usd or 0.0 for result in self.recorded)
        return done + self.dropped_cost + sum(self.running.values())

    def started(self, task: BatchTask) -> None:
        self.running[task.id] = 0.0
        self.display.started(task.id)

    def progressed(self, progress: Progress) -> None:
        if progress.id in self.running:
            self.running[progress.id] = progress.cost_usd or 0.0
        self.display.spent(self.spent)
        self._check_budget()

    def retried(self, task_id: str, note: str) -> None:
        """The engine runs the task again (its worker died): what the attempt spent stays spent."""
        self.dropped_cost += self.running.get(task_id, 0.0)
        self.running[task_id] = 0.0
        self.display.note(f"{task_id}: {note}")

    def finished(self, outcome: Outcome) -> None:
        result = outcome.result
        self.running.pop(result.id, None)
        if outcome.stop_batch is None and result.status != "interrupted":
            problem = disk.probe(self.store.out)  # a worker cannot see DIR's disk on Ray, nor after it died
            if problem:
                outcome.stop_batch, result.status = problem, "interrupted"
            elif self.go_on == DISK_GO_ON and result.status != "completed":
                result.status = "interrupted"  # it ran while the disk was full, which may be why it did not complete
        if result.status == "interrupted":
            self._drop(result)
            if outcome.stop_batch:
                self.stop_for_disk(outcome.stop_batch)
            return
        try:
            self.recorded.append(self.store.record(outcome))
        except OSError as exc:
            self._drop(result)
            problem = disk.from_exception(exc, self.store.out)
            if problem:
                self.stop_for_disk(problem)
            else:
                self.stop(f"results could not be written: {exc}")
            return
        self.display.finished(self.recorded[-1])
        self.display.spent(self.spent)
        self._check_budget()

    def _drop(self, result: TaskResult) -> None:
        self.dropped += 1
        self.dropped_cost += result.cost_usd or 0.0
        self.display.dropped(result.id)

    def stop_for_disk(self, problem: str) -> None:
        if self.stopped is None:
            self.go_on = DISK_GO_ON
        self.stop(problem, hint=f"; {DISK_GO_ON}")

    def _check_budget(self) -> None:
        if self.max_cost is not None and self.stopped is None and self.spent >= self.max_cost:
            self.stop(f"--max-cost {format_cost(self.max_cost)} reached ({format_cost(self.spent)} spent)")

    def stop(self, reason: str, *, force: bool = False, hint: str = "") -> None:
        """Stop the batch; `hint` follows the note of the running tasks (or the reason, when none runs)."""
        if self.stopped is None:
            self.stopped = reason
            running = len(self.running)
            asked = f"; {running} running task(s) asked to stop" if running else ""
            self.display.note(f"stopping: {reason}{asked}{hint}")
        self.engine.stop(force=force)


@contextlib.contextmanager
def _on_signals(driver: _Driver) -> Iterator[dict[str, int]]:
    """First signal: stop gently; second: kill the workers. Yields where the exit code of the signal lands."""
    loop = asyncio.get_running_loop()
    got: dict[str, int] = {}

    def on_signal(signum: signal.Signals) -> None:
        if "code" in got:
            driver.display.note("killing the workers")
            driver.stop("", force=True)
            return
        got["code"] = SIGNAL_EXITS[signum]
        hint = " (Ctrl+C again kills them)" if driver.running else ""
        driver.stop(f"interrupted ({signum.name})", hint=hint)

    for signum in SIGNAL_EXITS:
        loop.add_signal_handler(signum, on_signal, signum)
    try:
        yield got
    finally:
        for signum in SIGNAL_EXITS:
            loop.remove_signal_handler(signum)


def _engine(options: BatchOptions, settings: RunSettings) -> Engine:
    if options.ray is not None:
        from .ray_engine import RayEngine

        return RayEngine(
            settings, options.ray, options.workers, options.ray_num_cpus, options.ray_runtime_env, options.out / "logs"
        )
    from .pool import PoolEngine

    limited = msgspec.structs.replace(settings, limiter_dir=str(options.out / ".limits"))
    return PoolEngine(limited, options.workers, options.out / "logs")


async def run_batch(options: BatchOptions, settings: RunSettings, *, out: TextIO, err: TextIO) -> int:
    """Run the batch; the exit code (0: every task of the file has completed)."""
    try:
        tasks, bad = read_tasks(options.tasks_file)
    except OSError as exc:
        err.write(f"error: cannot read {options.tasks_file}: {exc.strerror or exc}\n")
        return EXIT_USAGE
    for line in bad:
        err.write(f"{options.tasks_file}:{line.line}: skipped: {line.reason}\n")
    try:
        store = ResultStore.open(options.out)
    except (DirectoryInUse, OSError) as exc:
        problem = disk.from_exception(exc, options.out)
        if problem:  # not a usage error: nothing ran, as when the disk fills up later
            err.write(f"error: {problem}; {DISK_GO_ON}\n")
            return EXIT_INCOMPLETE
        err.write(f"error: {exc}\n")
        return EXIT_USAGE
    try:
        for warning in store.warnings:
            err.write(f"warning: {warning}\n")
        return await _run(options, settings, store, tasks, len(bad), out, err)
    finally:
        store.close()


async def _run(
    options: BatchOptions,
    settings: RunSettings,
    store: ResultStore,
    tasks: Sequence[BatchTask],
    bad_lines: int,
    out: TextIO,
    err: TextIO,
) -> int:
    todo = [task for task in tasks if store.should_run(task.id, options.retry_failed)]
    skipped = len(tasks) - len(todo)
    chosen = {task.id for task in todo}
    not_completed = sum(1 for task in tasks if task.id not in chosen and _not_completed(store, task.id))
    if options.max_cost is not None:
        unknown = sorted({t.model or settings.provider.model for t in todo} - _priced_models(todo, settings))
        if unknown:
            err.write(f"warning: --max-cost: the price of {', '.join(unknown)} is not known; their cost counts as 0\n")
    engine = _engine(options, settings)
    started = time.monotonic()
    workers = min(options.workers, len(todo))  # no engine starts more workers than there are tasks
    retry = f"; {_retry_hint(not_completed)}" if not_completed else ""
    err.write(
        f"ram batch: {len(todo)} task(s) to run"
        + (f", {skipped} done before (skipped{retry})" if skipped else "")
        + (f" · {engine.name} · {workers} worker(s)" if workers else "")
        + "\n"
    )
    display = make_display(err, len(todo))
    driver = _Driver(store, display, engine, options.max_cost)
    code: int | None = None
    try:
        with _on_signals(driver) as got:
            if todo:
                await engine.run(todo, driver)
            code = got.get("code")
    except EngineUnavailable as exc:
        display.close()
        err.write(f"error: {exc}\n")
        return EXIT_USAGE
    finally:
        display.close()
        _write(driver, err, "preds.json", lambda: store.write_predictions([t.id for t in tasks], options.model_name))
        _write(driver, err, "results.jsonl", store.compact)
    summary = _summary(workers, engine, tasks, todo, skipped, bad_lines, driver, time.monotonic() - started)
    _write(driver, err, "summary.json", lambda: store.write_summary(summary))
    summary["stopped"] = driver.stopped  # a disk found full just now
    out.write(_summary_text(summary, options.out, driver.go_on))
    out.flush()
    if code is not None:
        return code
    every = all(store.latest.get(task.id) and store.latest[task.id].status == "completed" for task in tasks)
    return EXIT_OK if every and not bad_lines and driver.stopped is None else EXIT_INCOMPLETE


def _retry_hint(count: int) -> str:
    return f"{count} did not complete: --retry-failed runs {'it' if count == 1 else 'them'} again"


def _not_completed(store: ResultStore, task_id: str) -> bool:
    result = store.latest.get(task_id)
    return result is not None and result.status != "completed"


def _write(driver: _Driver, err: TextIO, name: str, write: Callable[[], object]) -> None:
    """One of the files written at the end; a disk that refuses it is said in one line (and stops the batch),
    unless the batch already stopped for it (the next run writes the file)."""
    try:
        write()
    except OSError as exc:
        problem = disk.from_exception(exc, driver.store.out)
        if problem and driver.go_on == DISK_GO_ON:
            return
        err.write(f"warning: {name} could not be written: {problem or exc}\n")
        if problem and driver.stopped is None:
            driver.stopped, driver.go_on = problem, DISK_GO_ON


def _priced_models(tasks: Sequence[BatchTask], settings: RunSettings) -> set[str]:
    names = {task.model or settings.provider.model for task in tasks}
    return {name for name in names if cost_usd(name, Usage()) is not None}


def _summary(
    workers: int,
    engine: Engine,
    tasks: Sequence[BatchTask],
    todo: Sequence[BatchTask],
    skipped: int,
    bad_lines: int,
    driver: _Driver,
    seconds: float,
) -> dict[str, Any]:
    usage: Counter[str] = Counter()
    for result in driver.recorded:
        usage.update(result.usage)
    statuses = Counter(result.status for result in driver.recorded)
    known = [result.cost_usd for result in driver.recorded if result.cost_usd is not None]
    latest = driver.store.latest
    completed_all = sum(1 for t in tasks if (r := latest.get(t.id)) is not None and r.status == "completed")
    return {
        "tasks": len(tasks),
        "bad_lines": bad_lines,
        "skipped": skipped,
        "ran": len(driver.recorded),
        "statuses": dict(statuses),
        "not_run": len(todo) - len(driver.recorded),
        "usage": dict(usage),
        "cost_usd": sum(known) + driver.dropped_cost if known or not driver.recorded else None,
        "duration_s": round(seconds, 3),
        "engine": engine.name,
        "workers": workers,
        "stopped": driver.stopped,
        "completed_of_all": completed_all,
        "not_completed_of_all": sum(1 for t in tasks if _not_completed(driver.store, t.id)),
    }


def _summary_text(summary: dict[str, Any], out: Path, go_on: str = GO_ON) -> str:
    statuses = summary["statuses"]
    order = ("completed", "failed", "error", "max_turns", "timeout")
    counts = " · ".join(f"{statuses.get(name, 0)} {name}" for name in order if statuses.get(name) or name in order[:2])
    usage = summary["usage"]
    tokens_in = usage.get("input_tokens", 0) + usage.get("cache_read_input_tokens", 0)
    tokens_in += usage.get("cache_creation_input_tokens", 0)
    cost = format_cost(summary["cost_usd"]) if summary["cost_usd"] is not None else "cost unknown"
    lines = [
        f"ram batch: {summary['ran']} ran ({counts}) · {summary['skipped']} skipped (done before) · "
        f"{summary['not_run']} not run" + (f" · {summary['bad_lines']} bad line(s)" if summary["bad_lines"] else ""),
        f"tokens {tokens_in:,} in / {usage.get('output_tokens', 0):,} out · {cost} · {summary['duration_s']:.1f} s · "
        f"{summary['engine']}" + (f" × {summary['workers']}" if summary["workers"] else ""),
        f"all tasks: {summary['completed_of_all']} of {summary['tasks']} completed · {out}/results.jsonl, "
        f"{out}/patches/, {out}/preds.json",
    ]
    if summary["not_completed_of_all"]:
        lines.append(_retry_hint(summary["not_completed_of_all"]))
    if summary["stopped"]:
        lines.insert(1, f"stopped early: {summary['stopped']} — {go_on}")
    return "\n".join(lines) + "\n"
