"""`--ray [ADDRESS]`: the same tasks as Ray tasks on a cluster (`pip install 'react-agent-mini[ray]'`).

The driver connects to the cluster (`auto`, `host:port` or `ray://host:port`) and keeps at most `--workers` tasks
in flight, each reserving `num_cpus` (the task's, else `--ray-num-cpus`). A Ray task runs `worker.run_task` in
the worker's process, in a workspace in the node's temporary directory, and returns the whole outcome — results
line, patch, transcript — to the driver, which writes DIR as the local pool's driver does. One `Coordinator`
actor holds what the workers share: the 429 backoff per endpoint (`limiter.BackoffState`), progress for the
driver, and the stop switch the workers poll (Ray's own cancel cannot interrupt a task blocked in its event loop,
so it is kept for the last resort: killing a worker that does not stop).

The workers must be able to import ram: a cluster whose image has it, or a `--ray-runtime-env`, e.g.
`{"pip": ["react-agent-mini"]}`, or `{"py_modules": ["/path/to/src/react_agent_mini"], "pip": [its dependencies]}`
for a checkout. The driver adds its `ALLOW_WRITE`, `RAM_*` and compaction variables to the job's `env_vars`.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import os
import time
import uuid
from collections import deque
from collections.abc import Sequence
from typing import Any

import msgspec

from .engine import EngineUnavailable, Sink, lost
from .limiter import BackoffState
from .outcome import Outcome, Progress
from .settings import RunSettings, from_json, to_json
from .tasks import BatchTask

POLL = 0.5
"""Seconds between the workers' looks at the stop switch, and the driver's at progress."""
STOP_GRACE = 20.0
"""Seconds the tasks have to stop after the switch before their workers are killed."""
HARD_MARGIN = 45.0
"""Seconds past a task's time limit before its worker is killed (it stops the task itself well before)."""
_PASSED_VARIABLES = ("ALLOW_WRITE", "TRACE", "COMPACT", "AUTOCOMPACT", "CONTEXT_WINDOW_TOKENS")
_PASSED_PREFIXES = ("RAM_", "COMPACT_", "AUTOCOMPACT_")


class Coordinator:
    """The Ray actor the driver and every worker share."""

    def __init__(self) -> None:
        self._backoff: dict[str, BackoffState] = {}
        self._progress: list[bytes] = []
        self._stopped = False

    def reserve(self, key: str) -> float:
        return self._backoff.setdefault(key, BackoffState()).reserve(time.time())

    def penalize(self, key: str, retry_after: float | None) -> None:
        self._backoff.setdefault(key, BackoffState()).penalize(time.time(), retry_after)

    def succeeded(self, key: str) -> None:
        self._backoff.setdefault(key, BackoffState()).succeeded()

    def report(self, progress: bytes) -> None:
        self._progress.append(progress)

    def take_progress(self) -> list[bytes]:
        taken, self._progress = self._progress, []
        return taken

    def stop(self) -> None:
        self._stopped = True

    def stopped(self) -> bool:
        return self._stopped


class ActorLimiter:
    """`limiter.Limiter` over the coordinator actor (on the worker's side)."""

    def __init__(self, actor: Any) -> None:
        self.actor = actor

    async def reserve(self, key: str) -> float:
        wait: float = await self.actor.reserve.remote(key)
        return wait

    async def penalize(self, key: str, retry_after: float | None) -> None:
        await self.actor.penalize.remote(key, retry_after)

    async def succeeded(self, key: str) -> None:
        await self.actor.succeeded.remote(key)


def run_on_ray(task_json: bytes, settings_json: bytes, coordinator: Any) -> bytes:
    """The Ray task: run one batch task on this worker; its outcome as JSON."""
    return asyncio.run(_run_remote(from_json(task_json, BatchTask), from_json(settings_json, RunSettings), coordinator))


async def _run_remote(task: BatchTask, settings: RunSettings, coordinator: Any) -> bytes:
    from .worker import run_task

    stop = asyncio.Event()

    async def watch() -> None:
        while not await coordinator.stopped.remote():
            await asyncio.sleep(POLL)
        stop.set()

    def report(progress: Progress) -> None:
        coordinator.report.remote(to_json(progress))  # fire and forget

    watcher = asyncio.ensure_future(watch())
    try:
        outcome = await run_task(task, settings, limiter=ActorLimiter(coordinator), stop=stop, report=report)
    finally:
        watcher.cancel()
    return to_json(outcome)


def ram_version() -> str:
    """Run on a worker before the tasks: proves it can import ram (and which version it has)."""
    from .. import __version__

    return __version__


def _ray() -> Any:
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # connecting reports nothing unless the user opts in
    try:
        return importlib.import_module("ray")
    except ImportError:
        raise EngineUnavailable(
            "--ray needs Ray: pip install 'react-agent-mini[ray]' (or run without --ray: the local pool)"
        ) from None


def job_runtime_env(user: dict[str, Any] | None, env: dict[str, str]) -> dict[str, Any]:
    """The user's runtime_env with our settings variables added to `env_vars` (the user's values win)."""
    runtime = dict(user or {})
    passed = {
        name: value for name, value in env.items() if name in _PASSED_VARIABLES or name.startswith(_PASSED_PREFIXES)
    }
    runtime["env_vars"] = {**passed, **runtime.get("env_vars", {})}
    return runtime


class RayEngine:
    """Ray tasks on a cluster."""

    name = "ray"

    def __init__(
        self,
        settings: RunSettings,
        address: str,
        workers: int,
        num_cpus: float,
        runtime_env: dict[str, Any] | None,
    ) -> None:
        if settings.workspace_root is None:  # a directory of this batch's own in each node's /tmp
            settings = msgspec.structs.replace(settings, workspace_root=f"ram-batch/{uuid.uuid4().hex[:12]}")
        self.settings, self.address, self.workers = settings, address, workers
        self.num_cpus, self.runtime_env = num_cpus, runtime_env
        self._stopping = False
        self._force = False

    def stop(self, *, force: bool = False) -> None:
        self._stopping = True
        self._force = self._force or force

    def _connect(self, ray: Any) -> None:
        try:
            ray.init(
                address=self.address,
                runtime_env=job_runtime_env(self.runtime_env, dict(os.environ)),
                namespace="ram-batch",
                log_to_driver=False,
                logging_level=logging.ERROR,
            )
        except (ConnectionError, ValueError, RuntimeError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise EngineUnavailable(
                f"no Ray cluster at {self.address!r} ({first}); start one with `ray start --head` or pass its address"
            ) from None

    async def run(self, tasks: Sequence[BatchTask], sink: Sink) -> None:
        ray = _ray()
        self._connect(ray)
        try:
            await self._check_workers(ray)
            await self._run(ray, tasks, sink)
        finally:
            ray.shutdown()

    async def _check_workers(self, ray: Any) -> None:
        """One small task first: a cluster whose workers cannot import ram fails the batch at once, saying how to
        fix it, instead of failing every task."""
        from .. import __version__

        try:
            theirs = await asyncio.wrap_future(ray.remote(num_cpus=0)(ram_version).remote().future())
        except Exception as exc:
            text = [line for line in str(exc).splitlines() if line.strip()]
            raise EngineUnavailable(
                f"the Ray workers cannot run ram ({text[-1].strip()[:200] if text else type(exc).__name__}); "
                'give them ram with --ray-runtime-env \'{"pip": ["react-agent-mini"]}\' or an image that has it'
            ) from None
        if theirs != __version__:
            logging.getLogger(__name__).warning("the Ray workers have ram %s, this driver %s", theirs, __version__)

    async def _run(self, ray: Any, tasks: Sequence[BatchTask], sink: Sink) -> None:
        coordinator = ray.remote(num_cpus=0)(Coordinator).remote()
        remote = ray.remote(run_on_ray)
        settings = ray.put(to_json(self.settings))
        pending = deque(tasks)
        running: dict[asyncio.Future[Any], tuple[Any, BatchTask, float]] = {}
        stop_sent_at: float | None = None
        while running or (pending and not self._stopping):
            while pending and not self._stopping and len(running) < self.workers:
                task = pending.popleft()
                cpus = task.num_cpus if task.num_cpus is not None else self.num_cpus
                ref = remote.options(num_cpus=cpus, max_retries=0, name=f"ram-batch {task.id}"[:100]).remote(
                    to_json(task), settings, coordinator
                )
                running[asyncio.wrap_future(ref.future())] = (ref, task, time.monotonic())
                sink.started(task)
            if self._stopping and stop_sent_at is None:
                coordinator.stop.remote()
                stop_sent_at = time.monotonic()
            done, _ = await asyncio.wait(set(running), timeout=POLL, return_when=asyncio.FIRST_COMPLETED)
            await self._forward_progress(coordinator, sink)
            for future in done:
                ref, task, started = running.pop(future)
                sink.finished(_outcome(future, task, started))
            now = time.monotonic()
            for future, (ref, task, started) in list(running.items()):
                limit = task.timeout or self.settings.timeout
                overdue = limit is not None and now > started + limit + HARD_MARGIN
                unstoppable = stop_sent_at is not None and (self._force or now > stop_sent_at + STOP_GRACE)
                if overdue or unstoppable:
                    with contextlib.suppress(Exception):
                        ray.cancel(ref, force=True)
                    del running[future]
                    future.cancel()
                    if overdue and not unstoppable:
                        killed = f"the worker did not stop after {limit:g} s; killed"
                        sink.finished(lost(task, "timeout", killed, started))
                    else:
                        sink.finished(lost(task, "interrupted", "stopped", started))
        await self._forward_progress(coordinator, sink)

    async def _forward_progress(self, coordinator: Any, sink: Sink) -> None:
        with contextlib.suppress(Exception):
            for raw in await coordinator.take_progress.remote():
                sink.progressed(from_json(raw, Progress))


def _outcome(future: asyncio.Future[Any], task: BatchTask, started: float) -> Outcome:
    """What a finished Ray task returned, or the error it ended with."""
    try:
        return from_json(future.result(), Outcome)
    except Exception as exc:  # the task raised, or its worker died: the task's error, not the batch's
        text = str(exc).strip().splitlines()
        detail = next((line for line in reversed(text) if line.strip()), type(exc).__name__)
        return lost(task, "error", f"ray: {type(exc).__name__}: {detail[:300]}", started)
