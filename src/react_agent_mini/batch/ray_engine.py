"""`--ray [ADDRESS]`: the same tasks as Ray tasks on a cluster (`pip install 'react-agent-mini[ray]'`).

The driver connects to the cluster (`auto`, `host:port` or `ray://host:port`) and keeps at most `--workers` tasks
in flight, each reserving `num_cpus` (the task's, else `--ray-num-cpus`). A Ray task runs `worker.run_task` in
the worker's process, in a workspace in the node's temporary directory, and returns the whole outcome — results
line, patch, transcript — to the driver, which writes DIR as the local pool's driver does. One `Coordinator`
actor holds what the workers share: the 429 backoff per endpoint (`limiter.BackoffState`), progress for the
driver, and the stop switch the workers poll (Ray's own cancel cannot interrupt a task blocked in its event loop,
so it is kept for the last resort: killing a worker that does not stop).

A task whose worker died (killed, out of memory, its node lost) is run again by Ray, up to `MAX_RETRIES` times; each
attempt tells the coordinator it began, so the driver says so in one line, restarts the task's clock and keeps what
the dead attempt spent in the budget. When the last attempt dies too, the task's error is one line, "the Ray worker
died"; Ray's own multi-line report (the worker's address, its exit detail), which Ray prints on the driver's
stdout, goes to `DIR/logs/ray.log` instead, with every other failure's details.

Workspaces go to `ram-batch/<batch key>/<task>` in each node's temporary directory, the key derived from this
machine and DIR, so a task run again in a later run uses the same folder. A worker killed mid-task leaves its clone
behind with a lock nobody holds (`workspace.claim`): every task sweeps its node's `ram-batch` before it starts,
and at the end the driver sweeps every node its tasks ran on.

A task whose repository is on the driver's disk (a path, a `file://` URL) does not need a shared disk: the driver
packs the repository once as a git bundle and puts it in Ray's object store, and each node fetches it once, checks
it and keeps a copy for the batch (`shipping.py`); a node's copies go with the driver's sweep at the end. The driver
notes in the log how many nodes ran tasks and how many bytes the repositories took.

The workers must be able to import ram: a cluster whose image has it, or a `--ray-runtime-env`, e.g.
`{"pip": ["react-agent-mini"]}`, or `{"py_modules": ["/path/to/src/react_agent_mini"], "pip": [its dependencies]}`
for a checkout. The driver adds its `ALLOW_WRITE`, `RAM_*` and compaction variables to the job's `env_vars`.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import importlib
import logging
import os
import re
import socket
import tempfile
import time
from collections import deque
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

import msgspec

from . import shipping
from .engine import EngineUnavailable, Sink, lost
from .limiter import BackoffState
from .outcome import Outcome, Progress
from .settings import RunSettings, from_json, to_json
from .shipping import Shipment
from .tasks import BatchTask
from .workspace import WorkspaceError, sweep_area

POLL = 0.5
"""Seconds between the workers' looks at the stop switch, and the driver's at progress."""
STOP_GRACE = 20.0
"""Seconds the tasks have to stop after the switch before their workers are killed."""
HARD_MARGIN = 45.0
"""Seconds past a task's time limit before its worker is killed (it stops the task itself well before)."""
MAX_RETRIES = 2
"""Times Ray runs a task again whose worker died (not one that failed: that is the task's result)."""
SWEEP_WAIT = 60.0
"""Seconds the driver waits at the end for killed workers to be gone and for the nodes' sweeps."""
AREA = "ram-batch"
"""ram's folder in each node's temporary directory: one root of workspaces per batch, and the mirrors."""
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_PASSED_VARIABLES = ("ALLOW_WRITE", "TRACE", "COMPACT", "AUTOCOMPACT", "CONTEXT_WINDOW_TOKENS")
_PASSED_PREFIXES = ("RAM_", "COMPACT_", "AUTOCOMPACT_")


class Coordinator:
    """The Ray actor the driver and every worker share."""

    def __init__(self) -> None:
        self._backoff: dict[str, BackoffState] = {}
        self._news: list[tuple[str, bytes]] = []
        """In order: ("progress", a `Progress` as JSON) and ("again", a task id begun again)."""
        self._attempts: dict[str, int] = {}
        self._nodes: set[str] = set()
        self._stopped = False

    def began(self, task_id: str, node: str) -> int:
        """An attempt of the task began on `node`; which attempt it is (2 and on: its worker died before)."""
        attempt = self._attempts[task_id] = self._attempts.get(task_id, 0) + 1
        self._nodes.add(node)
        if attempt > 1:
            self._news.append(("again", task_id.encode()))
        return attempt

    def reserve(self, key: str) -> float:
        return self._backoff.setdefault(key, BackoffState()).reserve(time.time())

    def penalize(self, key: str, retry_after: float | None) -> None:
        self._backoff.setdefault(key, BackoffState()).penalize(time.time(), retry_after)

    def succeeded(self, key: str) -> None:
        self._backoff.setdefault(key, BackoffState()).succeeded()

    def report(self, progress: bytes) -> None:
        self._news.append(("progress", progress))

    def take_news(self) -> list[tuple[str, bytes]]:
        """What happened since the last call, in order (progress, and tasks begun again)."""
        news, self._news = self._news, []
        return news

    def nodes(self) -> list[str]:
        """Every node a task ran on."""
        return sorted(self._nodes)

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


def run_on_ray(
    task_json: bytes, settings_json: bytes, coordinator: Any, shipment_json: bytes | None = None, bundle: Any = None
) -> bytes:
    """The Ray task: run one batch task on this worker; its outcome as JSON. `shipment_json` and `bundle` (a list
    holding the bundle's reference, so that Ray leaves the fetching to us) for a repository that travels with it."""
    task, settings = from_json(task_json, BatchTask), from_json(settings_json, RunSettings)
    shipment = from_json(shipment_json, Shipment) if shipment_json is not None else None
    return asyncio.run(_run_remote(task, settings, coordinator, shipment, bundle))


async def _run_remote(
    task: BatchTask, settings: RunSettings, coordinator: Any, shipment: Shipment | None = None, bundle: Any = None
) -> bytes:
    from .worker import DEFAULT_ROOT, run_task

    stop = asyncio.Event()

    async def watch() -> None:
        while not await coordinator.stopped.remote():
            await asyncio.sleep(POLL)
        stop.set()

    def report(progress: Progress) -> None:
        coordinator.report.remote(to_json(progress))  # fire and forget

    import ray

    await coordinator.began.remote(task.id, ray.get_runtime_context().get_node_id())
    if shipment is not None:  # the repository travelled with the task: this node's verified copy of it
        root = Path(tempfile.gettempdir(), settings.workspace_root or DEFAULT_ROOT)
        try:
            copy = await shipping.receive(shipment, lambda: asyncio.wrap_future(bundle[0].future()), root)
        except (shipping.ShippingError, WorkspaceError) as exc:
            return to_json(lost(task, "error", str(exc), time.monotonic()))
        task = msgspec.structs.replace(task, repo=str(copy))
    watcher = asyncio.ensure_future(watch())
    try:
        outcome = await run_task(task, settings, limiter=ActorLimiter(coordinator), stop=stop, report=report)
    finally:
        watcher.cancel()
    return to_json(outcome)


def sweep_node(root: str) -> int:
    """Run on a node at the end: remove the workspaces of workers that died there, and the repositories that
    arrived for the batch whose root is `root`; how many workspaces."""
    removed = len(sweep_area(Path(tempfile.gettempdir(), AREA)))
    shipping.remove_shipped(Path(tempfile.gettempdir(), root))
    return removed


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
        log_dir: Path,
    ) -> None:
        if settings.workspace_root is None:  # a directory of this batch's own in each node's temporary directory
            key = hashlib.sha1(f"{socket.gethostname()}:{log_dir.parent}".encode()).hexdigest()[:12]
            settings = msgspec.structs.replace(settings, workspace_root=f"{AREA}/{key}")
        self.settings, self.address, self.workers = settings, address, workers
        self.num_cpus, self.runtime_env = num_cpus, runtime_env
        self.log_path = log_dir / "ray.log"
        self._stopping = False
        self._force = False
        self._log: TextIO | None = None

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
        with self._ray_output():
            self._connect(ray)
            try:
                await self._check_workers(ray)
                await self._run(ray, tasks, sink)
            finally:
                ray.shutdown()

    @contextlib.contextmanager
    def _ray_output(self) -> Iterator[None]:
        """What Ray prints on the driver's stdout while connected (a dead worker's report) goes to the log; the
        batch's own summary is written to the stream it was given, not to `sys.stdout`."""
        try:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            log: TextIO = self.log_path.open("a", encoding="utf-8", errors="replace")
        except OSError:
            log = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - closed below
        self._log = log
        try:
            with contextlib.redirect_stdout(_Uncolored(log)):
                yield
        finally:
            self._log = None
            with contextlib.suppress(OSError):
                log.close()

    def _note(self, text: str) -> None:
        """A line in the log (never raises: a full disk is found and said elsewhere)."""
        if self._log is not None:
            with contextlib.suppress(OSError, ValueError):
                self._log.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {text}\n")
                self._log.flush()

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
        shipper = shipping.Shipper(tasks, ray.put)
        pending = deque(tasks)
        running: dict[asyncio.Future[Any], tuple[Any, BatchTask, float]] = {}
        attempts: dict[str, int] = {}
        killed: list[Any] = []
        stop_sent_at: float | None = None
        while running or (pending and not self._stopping):
            while pending and not self._stopping and len(running) < self.workers:
                task = pending.popleft()
                sink.started(task)
                try:
                    sent, shipment, bundle = await shipper.ready(task)
                except shipping.ShippingError as exc:  # the task's error, as a worker would have found it
                    shipper.done(task)
                    sink.finished(lost(task, "error", str(exc), time.monotonic()))
                    continue
                cpus = task.num_cpus if task.num_cpus is not None else self.num_cpus
                options = {"num_cpus": cpus, "max_retries": MAX_RETRIES, "name": f"ram-batch {task.id}"[:100]}
                shipped = (to_json(shipment), [bundle]) if shipment is not None else ()
                ref = remote.options(**options).remote(to_json(sent), settings, coordinator, *shipped)
                running[asyncio.wrap_future(ref.future())] = (ref, task, time.monotonic())
                attempts[task.id] = 1
            if self._stopping and stop_sent_at is None:
                coordinator.stop.remote()
                stop_sent_at = time.monotonic()
            done, _ = await asyncio.wait(set(running), timeout=POLL, return_when=asyncio.FIRST_COMPLETED)
            await self._forward_news(coordinator, sink, running, attempts)
            for future in done:
                ref, task, started = running.pop(future)
                shipper.done(task)
                sink.finished(self._outcome(future, task, started, attempts.get(task.id, 1)))
            now = time.monotonic()
            for future, (ref, task, started) in list(running.items()):
                limit = task.timeout or self.settings.timeout
                overdue = limit is not None and now > started + limit + HARD_MARGIN
                unstoppable = stop_sent_at is not None and (self._force or now > stop_sent_at + STOP_GRACE)
                if overdue or unstoppable:
                    with contextlib.suppress(Exception):
                        ray.cancel(ref, force=True)
                    killed.append(ref)
                    shipper.done(task)
                    del running[future]
                    future.cancel()
                    if overdue and not unstoppable:
                        message = f"the worker did not stop after {limit:g} s; killed"
                        sink.finished(lost(task, "timeout", message, started))
                    else:
                        sink.finished(lost(task, "interrupted", "stopped", started))
        await self._forward_news(coordinator, sink, running, attempts)
        nodes: list[str] = []
        with contextlib.suppress(Exception):
            nodes = await coordinator.nodes.remote()
        self._note(
            f"tasks ran on {len(nodes)} node(s); {shipper.repositories} local repositories shipped as bundles "
            f"({shipper.sent_bytes} bytes, packed in {shipper.packing_s:.2f} s)"
        )
        if not self._force:
            with contextlib.suppress(Exception):
                await self._sweep(ray, killed, nodes)

    async def _forward_news(
        self,
        coordinator: Any,
        sink: Sink,
        running: dict[asyncio.Future[Any], tuple[Any, BatchTask, float]],
        attempts: dict[str, int],
    ) -> None:
        """Pass progress on to the sink, and say which tasks Ray runs again (restarting their clocks)."""
        try:
            news = await coordinator.take_news.remote()
        except Exception:
            return
        for kind, data in news:
            if kind == "progress":
                sink.progressed(from_json(data, Progress))
                continue
            task_id = data.decode()
            attempts[task_id] = attempts.get(task_id, 1) + 1
            for future, (ref, task, _started) in running.items():
                if task.id == task_id:  # its clock starts again with the new attempt
                    running[future] = (ref, task, time.monotonic())
            note = f"the Ray worker died; Ray runs the task again (attempt {attempts[task_id]} of {1 + MAX_RETRIES})"
            sink.retried(task_id, note)
            self._note(f"{task_id}: {note}")

    async def _sweep(self, ray: Any, killed: list[Any], nodes: list[str]) -> None:
        """Once the killed workers are gone (a live one still holds its workspace), sweep each node tasks ran on."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        deadline = time.monotonic() + SWEEP_WAIT
        await asyncio.to_thread(_settle, ray, killed, deadline)
        sweeper = ray.remote(num_cpus=0, max_retries=0)(sweep_node)
        refs = []
        for node in nodes:
            with contextlib.suppress(Exception):
                strategy = NodeAffinitySchedulingStrategy(node, soft=False)
                refs.append(sweeper.options(scheduling_strategy=strategy).remote(self.settings.workspace_root))
        for removed in await asyncio.to_thread(_settle, ray, refs, deadline):
            if removed:
                self._note(f"removed {removed} workspace(s) of workers that died")

    def _outcome(self, future: asyncio.Future[Any], task: BatchTask, started: float, attempts: int) -> Outcome:
        """What a finished Ray task returned, or the error it ended with (in one line; the details to the log)."""
        try:
            return from_json(future.result(), Outcome)
        except Exception as exc:  # the task raised, or its worker died: the task's error, not the batch's
            from ray import exceptions

            self._note(f"{task.id}: {type(exc).__name__}: {_ANSI.sub('', str(exc)).strip()}")
            details = f"details in {self.log_path}"
            died = (exceptions.WorkerCrashedError, exceptions.NodeDiedError, exceptions.LocalRayletDiedError)
            if isinstance(exc, (*died, exceptions.OutOfMemoryError)):
                why = " (out of memory)" if isinstance(exc, exceptions.OutOfMemoryError) else ""
                tries = f"{attempts} attempts; " if attempts > 1 else ""
                return lost(task, "error", f"the Ray worker died{why} ({tries}{details})", started)
            error: BaseException = exc
            if isinstance(exc, exceptions.RayTaskError) and isinstance(exc.cause, BaseException):
                error = exc.cause
            first = (_ANSI.sub("", str(error)).strip().splitlines() or [""])[0]
            return lost(task, "error", f"ray: {type(error).__name__}: {first[:300]} ({details})", started)


def _settle(ray: Any, refs: list[Any], deadline: float) -> list[Any]:
    """Wait (until `deadline`) for each of `refs`; what each returned (None for an error or the time running out).
    Getting them also keeps Ray from printing an error nobody fetched."""
    values = []
    for ref in refs:
        try:
            values.append(ray.get(ref, timeout=max(0.0, deadline - time.monotonic())))
        except Exception:
            values.append(None)
    return values


class _Uncolored:
    """A text stream writing into `log` without the terminal colours Ray adds."""

    def __init__(self, log: TextIO) -> None:
        self.log = log

    def write(self, text: str) -> int:
        with contextlib.suppress(OSError, ValueError):
            self.log.write(_ANSI.sub("", text))
        return len(text)

    def flush(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.log.flush()

    def isatty(self) -> bool:
        return False
