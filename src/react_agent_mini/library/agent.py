"""`Agent`: ram as a Python library — a session you send tasks to, in async code; `run()` for scripts.

    async with Agent(cwd=".", tools=[word_count], can_use_tool=check) as agent:
        result = await agent.run("count the words in README.md")
        async for event in agent.stream("and now in CHANGELOG.md"):
            ...

One `Agent` is one session (a `SessionHost`): its history, permissions, tools and MCP servers live as long as it
does, and each `run`/`stream` is one turn of it. The turn runs in a task of its own that feeds a queue: the stream
reads the queue, so events the permission callback causes (`PermissionAsked`) reach the reader while the turn waits
for the answer. Stopping — `interrupt()`, closing the stream early, cancelling the task reading it — aborts the turn
and waits for it to end, and every tool call still gets a result, so the history stays valid for the next turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import warnings
from collections.abc import AsyncGenerator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Unpack

import msgspec

from ..config import ConfigError
from ..events import Notice
from ..hooks import Hooks
from ..host import SessionHost
from ..kit.setup import setup_report
from ..messages import Message, Usage
from ..pricing import cost_usd
from ..session_lock import SessionInUse
from .options import AgentOptions, resolve
from .permission import PermissionAsked, PermissionDecided, callback_asker, deny_unasked
from .results import AgentEvent, Result, TurnRecord


class _Failed(msgspec.Struct, frozen=True):
    """The turn's task raised: the stream raises it."""

    error: BaseException


class Agent:
    """A ram session driven from Python; an async context manager (`async with Agent(...) as agent`).

    Arguments left unset come from the environment and settings files, as for the `ram` command; `ConfigError`
    (one line saying what to fix) for a bad one — from `Agent(...)`, or from `async with` / the first `run` for what
    is only known when the session opens (a settings file that cannot be understood, a session another process
    is writing). Without `async with`, the session opens on the first `run`/`stream`; close it with
    `await agent.aclose()` (MCP servers, connections and the transcript stay open until then).
    """

    def __init__(self, **options: Unpack[AgentOptions]) -> None:
        """Takes `AgentOptions`' arguments, all by keyword: `Agent(cwd=".", model="m", can_use_tool=check)` or
        `Agent(**AgentOptions(...))`. See `AgentOptions` for each (`help(react_agent_mini.AgentOptions)`)."""
        resolved = resolve(options, os.environ)
        self._config, self._options = resolved["config"], resolved["options"]
        self._can_use_tool = resolved["can_use_tool"]
        self._hooks = resolved["hooks"]
        self._session_id = self._options.session_id or (self._options.resume.stem if self._options.resume else "")
        self._host: SessionHost | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: int | None = None
        self._closed = False
        self._turn: asyncio.Task[None] | None = None
        self._queue: asyncio.Queue[AgentEvent | _Failed] | None = None
        self._record: TurnRecord | None = None
        self._interrupted = ""
        self._notices: list[str] = []

    # ---- what it is ----

    @property
    def session_id(self) -> str:
        """The session's id (known from the start; `Agent(resume=...)` continues the session)."""
        return self._host.session_id if self._host is not None else self._session_id

    @property
    def cwd(self) -> Path:
        return self._options.cwd

    @property
    def model(self) -> str:
        return self._host.model if self._host is not None else self._config.model

    @property
    def messages(self) -> tuple[Message, ...]:
        """The whole history so far (empty until the session opens)."""
        return tuple(self._host.session.messages) if self._host is not None else ()

    @property
    def usage(self) -> Usage:
        """Tokens of every model call this Agent made."""
        return self._host.session.totals.usage if self._host is not None else Usage()

    @property
    def cost_usd(self) -> float | None:
        """What `usage` costs at list price; None when the model's price is not known."""
        return cost_usd(self.model, self.usage)

    @property
    def warnings(self) -> list[str]:
        """Setup problems found when the session opened (also yielded as `Notice`s by the first stream)."""
        return list(self._host.warnings) if self._host is not None else []

    # ---- life ----

    async def __aenter__(self) -> Agent:
        await self._open()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        await self.aclose()

    def _given_hooks(self) -> Hooks | None:
        """The typed hooks given as `Agent(hooks=...)`, as the session's hooks (None: none given)."""
        if self._hooks is None:
            return None
        from ..hooks.typed import hook_entries

        return Hooks(hook_entries(self._hooks))

    async def _open(self) -> SessionHost:
        if self._closed:
            raise RuntimeError("this Agent is closed")
        loop = asyncio.get_running_loop()
        if self._host is not None:
            if loop is not self._loop:
                raise RuntimeError("an Agent can only be used in the event loop it was opened in")
            return self._host
        asker = deny_unasked if self._can_use_tool is None else callback_asker(self._can_use_tool, self._emit)
        try:
            host = SessionHost.build(self._config, self._options, asker=asker, hooks=self._given_hooks())
        except SessionInUse as exc:
            raise ConfigError(str(exc)) from None
        problem = _setup_problem(host, self._options.extra_tools)
        if problem:
            await host.aclose()
            raise ConfigError(problem)
        session = host.session
        record_to_disk = session.on_message

        def on_message(message: Message) -> None:
            if self._record is not None:
                self._record.messages.append(message)
            if record_to_disk is not None:
                record_to_disk(message)

        session.on_message = on_message
        host.start()
        self._host, self._loop, self._thread = host, loop, threading.get_ident()
        self._notices = [f"warning: {line}" for line in host.warnings]
        return host

    async def aclose(self) -> None:
        """Stop a running turn, then close the MCP servers, the connections and the transcript; once."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._turn is not None:
                await self._settle(self._turn)
        finally:
            if self._host is not None:
                await self._host.aclose()

    def __del__(self) -> None:
        if getattr(self, "_host", None) is not None and not getattr(self, "_closed", True):
            warnings.warn(
                "an Agent was not closed: use `async with Agent(...)` or `await agent.aclose()`",
                ResourceWarning,
                stacklevel=1,
            )

    # ---- turns ----

    async def run(self, prompt: str) -> Result:
        """Send `prompt` and wait for the turn to end."""
        async with contextlib.aclosing(self.stream(prompt)) as events:
            async for event in events:
                if isinstance(event, Result):
                    return event
        raise RuntimeError("the turn ended without a result")  # stream() always ends with one

    async def stream(self, prompt: str) -> AsyncGenerator[AgentEvent, None]:
        """Send `prompt` and yield the turn's events as they happen; the last one is a `Result`.

        Leaving early — `break`, an exception, cancelling the task that reads — stops the turn once the generator is
        closed, which CPython does as soon as nothing refers to it (`contextlib.aclosing` makes it certain). One
        turn runs at a time: a `run`/`stream` started meanwhile waits for it to end."""
        if not prompt.strip():
            raise ValueError("the prompt is empty")
        host = await self._open()
        while self._turn is not None and not self._turn.done():  # one turn at a time: the next waits
            await asyncio.wait({self._turn})
        if self._closed:  # closed while this one waited
            raise RuntimeError("this Agent is closed")
        queue: asyncio.Queue[AgentEvent | _Failed] = asyncio.Queue()
        record = TurnRecord(host.session.totals.usage)
        self._queue, self._record, self._interrupted = queue, record, ""
        for line in self._notices:
            queue.put_nowait(Notice(line))
        self._notices = []
        task = asyncio.create_task(self._drive(host, prompt, queue, record))
        self._turn = task
        try:
            while True:
                item = await queue.get()
                if isinstance(item, _Failed):
                    raise item.error
                yield item
                if isinstance(item, Result):
                    return
        finally:
            await self._settle(task)

    async def _drive(
        self, host: SessionHost, prompt: str, queue: asyncio.Queue[AgentEvent | _Failed], record: TurnRecord
    ) -> None:
        """Run the turn, putting its events on `queue`, then its Result (or what it raised)."""
        try:
            async for event in host.turn(prompt):
                shown = record.see(event)
                if shown is not None:
                    queue.put_nowait(shown)
        except asyncio.CancelledError:
            if not self._interrupted:
                raise  # not ours: the event loop is going away
            # interrupted before the loop began (MCP servers starting, hooks): the host answered any open calls
        except Exception as exc:
            queue.put_nowait(_Failed(exc))
            return
        session = host.session
        queue.put_nowait(
            record.result(
                session_id=host.session_id,
                model=host.model,
                usage_after=session.totals.usage,
                history=session.messages,
                interrupted=self._interrupted,
            )
        )

    def _emit(self, event: PermissionAsked | PermissionDecided) -> None:
        """The permission callback's events join the running turn's stream, in order."""
        if self._queue is not None and self._record is not None:
            shown = self._record.see(event)
            if shown is not None:
                self._queue.put_nowait(shown)

    async def _settle(self, task: asyncio.Task[None]) -> None:
        """Stop `task`'s turn if it still runs, and wait until it has ended (the history is then valid)."""
        if not task.done():
            self._stop(task, "the stream was closed")
            try:
                await asyncio.wait({task})
            except asyncio.CancelledError:
                task.cancel()  # cancelled again while waiting: stop at once (the host still repairs)
                raise
        if self._turn is task:
            self._turn, self._queue, self._record = None, None, None

    def interrupt(self) -> bool:
        """Stop the running turn (the model stream, tools and their processes); its `Result` says `aborted`. True
        when a turn was running. Safe to call from any task, and from other threads."""
        task, loop = self._turn, self._loop
        if task is None or loop is None or task.done():
            return False
        if threading.get_ident() == self._thread:
            return self._stop(task, "interrupted")
        with contextlib.suppress(RuntimeError):  # the loop has closed: nothing runs any more
            loop.call_soon_threadsafe(self._stop, task, "interrupted")
            return True
        return False

    def _stop(self, task: asyncio.Task[None], reason: str) -> bool:
        if task.done():
            return False
        self._interrupted = self._interrupted or reason
        assert self._host is not None
        if not self._host.interrupt(reason):
            task.cancel()  # the loop has not begun (or has ended): nothing listens to the abort signal yet
        return True


def _setup_problem(host: SessionHost, tools: Sequence[Any]) -> str:
    """Why the session must not start: settings whose rules are unknown, a function that lost its name."""
    if refused := setup_report(host, can_ask=False).refused:
        return refused
    for tool in tools:
        if host.session.tools.get(tool.name) is not tool:
            return f"tools: {tool.name!r} is the name of a built-in tool; name the function with @tool(name=...)"
    return ""


def run(prompt: str, **options: Unpack[AgentOptions]) -> Result:
    """One task with a new `Agent`, for synchronous code (scripts): `Agent(**options).run(prompt)` in `asyncio.run`.
    In async code (a running event loop), use `async with Agent(...) as agent: await agent.run(prompt)`."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise RuntimeError(
            "react_agent_mini.run() cannot be called while an event loop is running; in async code use "
            "`async with Agent(...) as agent: result = await agent.run(prompt)`"
        )
    agent = Agent(**options)

    async def one_task() -> Result:
        async with agent:
            return await agent.run(prompt)

    return asyncio.run(one_task())
