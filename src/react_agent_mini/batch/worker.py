"""One task from start to finish: workspace → setup → session → patch → test → outcome.

Engine-neutral: the local pool's worker processes and Ray's tasks both call `run_task`. The task's time limit
and the batch's stop (Ctrl+C, the budget) end a running session the gentle way — `SessionHost.interrupt`, so
every tool call gets its result and the transcript stays valid — and any other step by cancelling it (a setup
or test command's whole process group is killed).

The workspace is `<root>/<task's file stem>`, held under `workspace.claim` while the task runs; before it starts,
the task sweeps away what killed workers left in its root (on Ray, in every batch's root on the node), their
containers included. A task with an `image` runs its setup, test and Bash commands in a container of that image
(`environments.py`); the others on this machine. A task that
ends while the disk refuses ram's writes (`disk.py`) is not the task's failure: its outcome is `interrupted` with
`stop_batch` set, and the driver stops the batch.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import sys
import tempfile
import time
from collections.abc import AsyncGenerator, Callable
from pathlib import Path

import msgspec

from .. import transcript
from ..app import ModelCalls, SessionOptions
from ..events import AssistantTurn, ModelEvent, Terminal, ToolFinished
from ..host import Remark, SessionHost
from ..kit.setup import setup_report
from ..messages import Usage
from ..pricing import cost_usd
from ..providers.base import CallModel, ModelProvider, ModelRequest
from ..providers.retry import RetryPolicy, stream_with_retry
from ..terminal_text import visible
from ..tools.builtin.bash import BashTool
from . import disk, environments
from . import workspace as ws
from .limiter import Limiter, endpoint_key, gated
from .outcome import Outcome, Progress, Status, TaskResult
from .settings import RunSettings
from .tasks import BatchTask, file_stem

GRACE = 15.0
"""Seconds a session has to stop after it was interrupted before its task is cancelled outright."""
DEFAULT_ROOT = "ram-batch/workspaces"
"""The workspaces' root when the settings name none (in the temporary directory)."""


class SetupFailed(Exception):
    """A setup command exited non-zero."""


class _Run:
    """The state of one task while it runs."""

    def __init__(
        self, task: BatchTask, settings: RunSettings, limiter: Limiter, report: Callable[[Progress], None]
    ) -> None:
        self.task, self.settings, self.limiter, self.report = task, settings, limiter, report
        self.halted: Status | None = None
        """Set when the time limit or the batch's stop ended the task early."""
        self.host: SessionHost | None = None
        self.workspace: ws.Workspace | None = None
        self.terminal: Terminal | None = None
        self.usage = Usage()
        self.model = task.model or settings.provider.model
        self.denials = 0
        self.patch = ""
        self.test: ws.CommandResult | None = None
        self.transcript_path: Path | None = None
        relative = Path(settings.workspace_root or DEFAULT_ROOT)
        self.root = Path(tempfile.gettempdir(), relative)  # an absolute root stays as it is
        self.area = None if relative.is_absolute() else Path(tempfile.gettempdir(), relative.parts[0])
        """ram's folder of this machine's batch roots (a relative root: in the temporary directory), or None."""
        self.path = self.root / file_stem(task.id)
        self.claim: int | None = None
        """The descriptor holding the workspace's lock (`workspace.claim`)."""
        self.environment = environments.for_task(task.image)
        """Where its commands run: this machine, or the task's container."""

    async def body(self) -> None:
        task = self.task
        path = self.path
        self.claim = await ws.claim(path)
        await asyncio.to_thread(self._sweep)
        if path.exists():  # left by a run that was killed, or kept by --keep-workspaces
            await asyncio.to_thread(ws.remove, path)
        cache = Path(tempfile.gettempdir(), self.settings.repo_cache or "ram-batch/repos")
        self.workspace = await ws.create(task.repo, task.base_commit, path, cache)
        await self.environment.start(path)
        if task.setup:
            setup = await ws.run_commands(task.setup, path, self.environment.command)
            if setup.exit_code != 0:
                last = setup.output.strip().splitlines()[-1:]
                raise SetupFailed(f"setup failed (exit {setup.exit_code})" + (f": {last[0][:300]}" if last else ""))
        await ws.after_setup(self.workspace)
        await self.session(self.workspace)
        if self.halted == "interrupted":
            return
        self.patch = await ws.patch(self.workspace)
        if task.test and self.halted is None:
            self.test = await ws.run_commands(task.test, path, self.environment.command)

    async def session(self, workspace: ws.Workspace) -> None:
        task, settings = self.task, self.settings
        config = settings.provider
        if task.model:
            config = msgspec.structs.replace(config, model=task.model)
        options = SessionOptions(
            workspace.path,
            max_turns=task.max_turns or settings.max_turns,
            permissions=settings.permissions,
            strict_mcp=True,  # a task's repository does not get to start MCP servers
            sandbox=settings.sandbox,
        )
        key = endpoint_key(config.kind, config.base_url)
        host = self.host = SessionHost.build(config, options, model_calls=_gated(self.limiter, key))
        host.session.context.changes = None  # a throwaway clone: no checkpoints (no git snapshot per command)
        inside = self.environment.bash_sandbox(workspace.path)
        bash = host.session.tools.get("Bash")
        if inside is not None and isinstance(bash, BashTool):  # its commands run in the task's container
            bash.sandbox = inside
        self.model = host.model
        self.transcript_path = transcript.sessions_dir(workspace.path) / f"{host.session_id}.jsonl"
        report = setup_report(host, can_ask=False)
        for line in report.lines:
            _say(task, line)
        if report.refused:  # fail closed, as a headless run does
            await host.aclose()
            raise SetupFailed(f"settings: {report.refused}")
        try:
            async with host:
                async for event in host.turn(task.prompt):
                    if isinstance(event, AssistantTurn):
                        usage = host.session.totals.usage
                        self.report(Progress(task.id, host.session.totals.model_calls, cost_usd(host.model, usage)))
                    elif isinstance(event, ToolFinished) and event.denied:
                        self.denials += 1
                    elif isinstance(event, Terminal):
                        self.terminal = event
                    elif isinstance(event, Remark):
                        _say(task, event.text)
        finally:  # a cancelled session was paid for too
            self.usage = host.session.totals.usage

    def halt(self, reason: Status) -> bool:
        """End the task early; True when a running session was asked to stop (else the caller cancels)."""
        self.halted = reason
        host = self.host
        return host is not None and not host.closed and host.interrupt(reason)

    def status(self, failure: str | None) -> tuple[Status, str | None]:
        if self.halted == "timeout":
            return "timeout", f"stopped at the time limit ({self.task.timeout or self.settings.timeout:g} s)"
        if self.halted is not None:
            return self.halted, None
        if failure is not None:
            return "error", failure
        terminal = self.terminal or Terminal("error", 0, "the session ended without a result")
        if terminal.reason == "completed":
            if self.test is not None and self.test.exit_code != 0:
                return "failed", None
            return "completed", None
        if terminal.reason == "max_turns":
            return "max_turns", f"stopped at {terminal.turns} model calls (max_turns)"
        return "error", terminal.error or terminal.reason

    def outcome(self, failure: str | None, started: float) -> Outcome:
        status, error = self.status(failure)
        host = self.host
        result = TaskResult(
            id=self.task.id,
            status=status,
            num_turns=host.session.totals.model_calls if host is not None else 0,  # summary calls included
            usage=self.usage.to_dict(),
            cost_usd=cost_usd(self.model, self.usage),
            duration_s=round(time.monotonic() - started, 3),
            error=error,
            test_exit_code=self.test.exit_code if self.test is not None else None,
            test_output=self.test.output if self.test is not None else None,
            model=self.model,
            session_id=host.session_id if host is not None else None,
            permission_denials=self.denials,
            base_commit=self.workspace.base if self.workspace is not None else self.task.base_commit,
            finished_at=time.time(),
        )
        return Outcome(result, self.patch, self._take_transcript())

    def _take_transcript(self) -> str:
        """The session's transcript, moved out of ram's sessions directory (its workspace is gone, so it could
        not be continued from there)."""
        path = self.transcript_path
        if path is None:
            return ""
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = ""
        shutil.rmtree(path.parent, ignore_errors=True)
        return text

    def _sweep(self) -> None:
        """Remove what killed workers left: in this root, and on a node of Ray's, in every batch's root."""
        removed = ws.sweep(self.root, own=self.path)
        if self.area is not None:
            removed += ws.sweep_area(self.area, own=self.path)
        environments.remove_containers(removed)

    def disk_problem(self, body: asyncio.Future[None]) -> str | None:
        """Whether the disk refuses ram's writes: what the task's failure says, else a probe of the workspaces'
        and the transcripts' folders."""
        error = None if body.cancelled() else body.exception()
        if isinstance(error, ws.WorkspaceError) and error.disk:
            return error.disk
        return disk.from_exception(error) or disk.first_problem([self.root, transcript.data_dir() / "sessions"])

    def clean_up(self) -> str | None:
        """Remove the workspace (or say where it was kept) and let go of it."""
        if self.claim is None:
            return None
        self.environment.close()
        kept = self.settings.keep_workspaces and self.workspace is not None
        if not kept:
            ws.remove(self.path)
        ws.release(self.path, self.claim)
        self.claim = None
        if kept:
            return str(self.path)
        with contextlib.suppress(OSError):  # the batch's directory of workspaces goes with its last one
            self.root.rmdir()
        return None


async def run_task(
    task: BatchTask,
    settings: RunSettings,
    *,
    limiter: Limiter,
    stop: asyncio.Event,
    report: Callable[[Progress], None],
) -> Outcome:
    """Run `task` and return its outcome (never raises for a problem of the task itself)."""
    started = time.monotonic()
    run = _Run(task, settings, limiter, report)
    body = asyncio.ensure_future(run.body())
    stopped = asyncio.ensure_future(stop.wait())
    failure: str | None = None
    try:
        timeout = task.timeout or settings.timeout
        done, _ = await asyncio.wait({body, stopped}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        if body not in done:
            if not run.halt("interrupted" if stopped in done else "timeout"):
                body.cancel()
            done, _ = await asyncio.wait({body}, timeout=GRACE)
            if not done:
                body.cancel()
                await asyncio.wait({body})
        failure = _failure(body)
    finally:
        stopped.cancel()
        if not body.done():  # our own caller was cancelled: stop the task before going
            body.cancel()
            await asyncio.wait({body})
            await asyncio.to_thread(run.clean_up)
    outcome = run.outcome(failure, started)
    problem = await asyncio.to_thread(run.disk_problem, body)  # before clean-up: the disk as the task left it
    if problem:
        outcome.result.status, outcome.result.error, outcome.stop_batch = "interrupted", problem, problem
    outcome.result.workspace = await asyncio.to_thread(run.clean_up)
    return outcome


def _failure(body: asyncio.Future[None]) -> str | None:
    if body.cancelled():
        return None
    error = body.exception()
    if error is None:
        return None
    if isinstance(error, ws.WorkspaceError | SetupFailed | environments.EnvironmentError_):
        return str(error)
    return f"internal error: {type(error).__name__}: {error}"


def _gated(limiter: Limiter, key: str) -> ModelCalls:
    """The session's model calls routed through the shared limiter, inside the usual retries (each attempt waits
    for its slot); its summaries and subagents use them too."""

    def model_calls(provider: ModelProvider, policy: RetryPolicy) -> CallModel:
        def call_model(request: ModelRequest) -> AsyncGenerator[ModelEvent, None]:
            attempt = lambda: gated(lambda: provider.stream(request), limiter, key)  # noqa: E731
            return stream_with_retry(attempt, policy, request=request)

        return call_model

    return model_calls


def _say(task: BatchTask, text: str) -> None:
    with contextlib.suppress(OSError, ValueError):
        print(f"[{visible(task.id)}] {visible(text)}", file=sys.stderr, flush=True)
