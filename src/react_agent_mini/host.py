"""`SessionHost`: the one owner of a session's life — built once, used for many turns, closed once.

Every way of driving ram goes through it: headless runs, the REPL, the stream-json protocol (the Claude Agent SDK),
the Python library and the ACP agent. It holds the assembled parts (`app.Assembled`: session, provider,
permissions, knowledge, transcript, MCP servers) and does, in order, what each of them used to repeat:

    build (sync; the REPL does it in a thread)  →  start (MCP servers connect and SessionStart hooks run in the
                                                         background)
    turn(text) × N:  re-read changed settings → join ready MCP tools → attach @server:uri mentions (and, for
                     a message the user typed, its @path files: `mentions`) → the SessionStart hooks' context
                     (first turn) → run the turn (a command's `allowed-tools` and `model` for that turn only)
    aclose():  SessionEnd hooks, MCP servers, then the provider, then the transcript — each one even if another
               fails or the closing task is cancelled; a second call does nothing.

A turn that is cancelled (Ctrl+C on a task that ignores the abort signal, a client going away) still leaves a valid
history: every tool call without a result gets an "interrupted" one, on disk too.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, TypeAlias

import msgspec

from . import transcript
from .app import Assembled, ModelCalls, SessionOptions, build_session
from .config import ProviderConfig
from .custom_commands.scope import TurnScope as TurnScope  # front ends take it from here
from .custom_commands.scope import allowing
from .events import QueryEvent
from .hooks import Hooks, HookVerdict
from .mcp.attachment import McpAttachment
from .messages import Message, user_text
from .permissions.policy import Asker, PermissionPolicy
from .providers.retry import retrying
from .session import Session
from .subagents.definitions import AgentCatalog

if TYPE_CHECKING:
    from .context.knowledge import Knowledge
    from .custom_commands.catalog import CommandCatalog
    from .providers.base import ModelProvider
    from .tools.base import Tool


class Remark(msgspec.Struct, frozen=True):
    """A line about the session itself rather than the conversation (settings re-read, an MCP server that failed,
    resources attached), already prefixed `warning:` or `error:` where it is one."""

    text: str


class Waiting(msgspec.Struct, frozen=True):
    """The turn waits for something before its first model call (MCP servers still starting)."""

    what: str


HostEvent: TypeAlias = QueryEvent | Remark | Waiting


class SessionHost:
    """A session with its parts running; an async context manager."""

    def __init__(self, built: Assembled, config: ProviderConfig) -> None:
        self.built = built
        self.config = config
        """The provider configuration it was built from (its model may have been switched since)."""
        self._started = False
        self._closed = False
        self.opening = "startup"
        """SessionStart's `source`: `startup`, or `resume` for a session that continues a saved one."""
        self.end_reason = "other"
        """SessionEnd's `reason` when the host closes (the REPL says `prompt_input_exit`)."""
        self._start_hooks: asyncio.Future[HookVerdict] | None = None
        self.say: Callable[[str], None] = _to_stderr
        """Where lines about the session go when no turn is running to carry them (SessionEnd hooks)."""

    @classmethod
    def build(
        cls,
        config: ProviderConfig,
        options: SessionOptions,
        *,
        asker: Asker | None = None,
        hooks: Hooks | None = None,
        model_calls: ModelCalls = retrying,
    ) -> SessionHost:
        """Assemble the session (synchronous: reads files, may raise `SessionInUse` for a session being written);
        `model_calls`: how its model calls are made (`app.ModelCalls`)."""
        host = cls(build_session(config, options, asker=asker, hooks=hooks, model_calls=model_calls), config)
        if host.built.hooks is not None:
            host.built.hooks.base = host.hook_fields
        if options.resume is not None:
            host.opening = "resume"
        return host

    # ---- the parts ----

    @property
    def session(self) -> Session:
        """The conversation (history, totals, the running turn)."""
        return self.built.session

    @property
    def warnings(self) -> list[str]:
        """Setup problems found while building, one line each (the caller shows them)."""
        return self.built.warnings

    @property
    def policy(self) -> PermissionPolicy:
        """The permission policy (its `mode`, its `asker`)."""
        return self.built.policy

    @property
    def mcp(self) -> McpAttachment:
        """The MCP servers (`manager` is None when none are configured)."""
        return self.built.mcp

    @property
    def agents(self) -> AgentCatalog:
        """The agent types the Agent tool offers (a driving program may add some)."""
        return self.built.agents

    @property
    def provider(self) -> ModelProvider:
        """Where the model calls go (its `name`, `model` and `max_tokens`)."""
        return self.built.provider

    @property
    def knowledge(self) -> Knowledge:
        """Project context, memory and skills behind the system prompt."""
        return self.built.knowledge

    @property
    def hooks(self) -> Hooks | None:
        """Every hook of the session; None: there are none."""
        return self.built.hooks

    @property
    def commands(self) -> CommandCatalog:
        """The custom slash commands (`.claude/commands/`), found the first time they are asked for."""
        return self.built.commands

    @property
    def cwd(self) -> Path:
        """The session's workspace."""
        return self.built.session.context.cwd

    def tool(self, name: str) -> Tool | None:
        """The session's tool called `name` (MCP tools once joined), if it offers one."""
        return self.built.session.tools.get(name)

    @property
    def saved(self) -> bool:
        """Something of this conversation is in its transcript (it can be resumed)."""
        return self.built.recorder.saved

    def cut_conversation(self, kept: Sequence[Message], next_id: str) -> None:
        """`/rewind`: the history becomes `kept`, the first messages of it; the model no longer holds what it read
        in the dropped turns, compaction starts over, and the transcript records the cut (`next_id`: the id the
        next message continues from)."""
        session = self.built.session
        session.restore(kept)
        session.context.file_reads.clear()
        session.compaction.reset()
        self.built.recorder.rewound(len(kept), next_id)

    def set_prompts(self, base: str | None, extra: str) -> None:
        """Replace the system prompt's base instructions (None: ours) and what is appended to it."""
        self.built.session.system_prompt = self.built.knowledge.replace_prompts(base, extra)

    @property
    def session_id(self) -> str:
        return self.built.session.session_id

    @property
    def model(self) -> str:
        return self.built.provider.model

    def set_model(self, model: str) -> None:
        """Send the next model calls to `model` (same provider and endpoint); the context window follows it."""
        self.built.provider.model = model
        self.built.session.use_model(model)

    def hook_fields(self) -> dict[str, object]:
        """The fields every hook event carries (Claude Code's names)."""
        recorder = self.built.recorder.transcript
        return {
            "session_id": self.session_id,
            "transcript_path": str(recorder.path) if recorder is not None else "",
            "cwd": str(self.built.session.context.cwd),
            "permission_mode": self.built.policy.mode,
        }

    # ---- life ----

    def start(self) -> None:
        """Connect the MCP servers and run the SessionStart hooks in the background (inside the running event
        loop); once."""
        if not self._started:
            self._started = True
            self.built.mcp.start()
            self._begin(self.opening)

    def _begin(self, source: str) -> None:
        hooks = self.built.hooks
        if hooks is not None and hooks.active("SessionStart", source):
            self._start_hooks = asyncio.ensure_future(hooks.run("SessionStart", {"source": source}, source))

    async def _end(self, reason: str) -> None:
        """Run the SessionEnd hooks (their lines go to `say`)."""
        hooks = self.built.hooks
        if self._start_hooks is not None:
            self._start_hooks.cancel()
            self._start_hooks = None
        if hooks is None:
            return
        hooks.cancel_background()
        if hooks.active("SessionEnd", reason):
            verdict = await hooks.run("SessionEnd", {"reason": reason}, reason)
            for line in [*hooks.take_late(), *verdict.messages]:
                self.say(line)

    async def new_conversation(self) -> None:
        """`/clear`: SessionEnd (`clear`), a new conversation in a new session, SessionStart (`clear`)."""
        await self._end("clear")
        self.built.new_conversation()
        self._begin("clear")

    async def switch_to(self, path: Path) -> list[str]:
        """`/resume`: continue the saved session at `path` (see `Assembled.switch_to`); SessionStart (`resume`)
        runs for it. Warnings to show."""
        warnings = self.built.switch_to(path)
        self._begin("resume")
        return warnings

    async def __aenter__(self) -> SessionHost:
        self.start()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop the MCP servers, close the provider's connections and the transcript, in that order; each step
        runs even if an earlier one failed or this task is cancelled meanwhile."""
        if self._closed:
            return
        self._closed = True
        built = self.built
        cancelled = False
        if self._started:
            cancelled = await _to_the_end(self._end(self.end_reason))
        self._close_sandbox()
        for step in (built.mcp.aclose, built.provider.aclose):
            cancelled = await _to_the_end(step()) or cancelled
        try:
            built.recorder.close()
        finally:
            if cancelled:  # everything is closed: now let the cancellation through
                raise asyncio.CancelledError

    @property
    def closed(self) -> bool:
        return self._closed

    def _close_sandbox(self) -> None:
        """Bash's resident sandbox takes no more commands (a host in a long-lived process, `ram batch`'s workers,
        must not keep one per session)."""
        from .tools.builtin.bash import BashTool

        bash = self.tool("Bash")
        if isinstance(bash, BashTool) and bash.sandbox is not None:
            bash.sandbox.close()

    # ---- turns ----

    @property
    def turn_in_progress(self) -> bool:
        return self.built.session.turn_in_progress

    async def turn(
        self, text: str, *, inject: Sequence[Message] = (), scope: TurnScope | None = None, files: bool = False
    ) -> AsyncGenerator[HostEvent, None]:
        """Send `text` (after `inject`) and yield the turn's events; the last one is always a `Terminal`. `scope`:
        what this turn may do besides (a custom command's `allowed-tools` and `model`). `files`: `text` is what the
        user typed, so the files its `@path`s name are attached (`mentions`)."""
        if self._closed:
            raise RuntimeError("the session is closed")
        self.start()
        built = self.built
        for line in built.permission_settings.refresh(built.policy):  # a fixed settings file counts at once
            yield Remark(line)
        opened: list[Message] = []
        if self._start_hooks is not None:  # the SessionStart hooks' context goes before the first prompt
            starting, self._start_hooks = self._start_hooks, None
            verdict = await starting
            opened = [user_text(f"SessionStart hook additional context: {c}", meta=True) for c in verdict.context]
            for line in verdict.messages:
                yield Remark(line)
        for line in built.hooks.take_late() if built.hooks is not None else ():
            yield Remark(line)
        if built.mcp.may_wait:
            yield Waiting("Starting MCP servers…")
        for warning in await built.mcp.join(built.session.tools):
            yield Remark(f"warning: {warning}")
        attached: list[Message] = []
        if text:
            attached, warnings = await built.mcp.mentions(text)
            for warning in warnings:
                yield Remark(f"warning: {warning}")
            if attached:
                yield Remark(f"attached {len(attached)} MCP resource(s)")
            if files:
                from .mentions import attach_files

                found = await attach_files(built, text)
                attached += found.messages
                for line in found.lines:
                    yield Remark(line)
        typed = scope.typed if scope is not None else ""
        events = built.session.run_turn(text, inject_before=[*opened, *attached, *inject], typed=typed)
        with self._scoped(scope) as problems:
            for line in problems:
                yield Remark(f"warning: {line}")
            try:
                async for event in events:
                    yield event
            except (asyncio.CancelledError, GeneratorExit):
                # closed early (the client went away): close the turn now — not whenever it is garbage-collected,
                # maybe after the next turn began — so its calls stop and the session is free before the history
                # is mended
                try:
                    await events.aclose()
                finally:
                    self.repair()
                raise
        for line in built.hooks.take_late() if built.hooks is not None else ():
            yield Remark(line)

    @contextlib.contextmanager
    def _scoped(self, scope: TurnScope | None) -> Iterator[list[str]]:
        """`scope`'s rules and model in effect until the block ends; the lines about rules that do not parse."""
        if scope is None:
            yield []
            return
        notes = list(scope.notes)
        provider = self.built.provider
        model = provider.model
        with allowing(self.built.policy, scope.allowed_tools, scope.source) as problems:
            if scope.model:
                provider.model = scope.model
            try:
                yield [*notes, *problems]
            finally:
                provider.model = model

    def interrupt(self, reason: str = "interrupted") -> bool:
        """Stop the running turn (model stream, tools, their processes); False when none is running."""
        return self.built.session.abort_current_turn(reason)

    def repair(self) -> None:
        """After a turn stopped abruptly: answer any tool call left without a result, so the history (and the
        transcript) stays valid."""
        session = self.built.session
        repaired = transcript.repair(session.messages)
        if repaired:
            session.restore([*session.messages, *repaired])
            with contextlib.suppress(Exception):
                self.built.recorder.write(repaired)


def _to_stderr(line: str) -> None:
    from .terminal_text import visible

    sys.stderr.write(visible(line) + "\n")
    sys.stderr.flush()


async def _to_the_end(closing: Awaitable[None]) -> bool:
    """Await `closing` until it is done, even through cancellations (a failure is swallowed: one part that fails
    to close must not keep the others open); True when this task was cancelled meanwhile."""
    task = asyncio.ensure_future(closing)
    cancelled = False
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            cancelled = cancelled or not task.cancelled()  # our caller's cancellation, not the part's
        except Exception:
            pass
    if not task.cancelled():
        task.exception()  # retrieved: a part that failed to close is not reported as "never retrieved"
    return cancelled
