"""One ACP session: a `SessionHost`, the prompt turn running in it, cancelling it, and what the editor is offered.

The host is built as the client's capabilities allow. With `fs`, Read, Write and Edit go through the client
(`files`). With `terminal`, Bash runs in the client's terminal (`terminal`). Otherwise the built-in tools run. The
permission checks are the same either way, and every "ask" becomes a `session/request_permission`
(`permission`).

A prompt runs as a task of its own, and `session/cancel` stops it. When the loop is running, the host's interrupt
stops the model stream, the tools and their processes, and answers every tool call. Before the loop starts (MCP
servers still starting, `/compact`), the task is cancelled, and the host repairs the history. Either way the
prompt then answers `cancelled`. A turn that fails answers with a JSON-RPC error carrying the reason. Setup warnings
and the host's remarks go to stderr. Notices about the conversation go into the answer (see `updates`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from acp.helpers import update_agent_message_text, update_available_commands
from acp.interfaces import Client
from acp.schema import AvailableCommand, ClientCapabilities, PromptResponse

from ..app import SessionOptions, default_tools
from ..config import ProviderConfig
from ..events import Terminal
from ..host import Remark, SessionHost, TurnScope, Waiting
from ..kit.setup import setup_report
from ..mcp.attachment import MCP_FIRST_CALL_WAIT
from ..messages import Message
from ..permissions.configured import PermissionOptions
from ..permissions.rules import PermissionMode
from ..tools.base import Tool
from . import commands, errors
from .cards import disk_text
from .files import client_file_tools
from .link import ClientLink
from .permission import EditorAsker
from .prompt import PromptBlock, convert
from .terminal import ClientBash
from .updates import TurnUpdates, Update, stop_reason


class SessionSetup:
    """How the sessions of one `ram acp` are made (its flags), and where its remarks go."""

    def __init__(
        self,
        config: ProviderConfig,
        complain: Callable[[str], None],
        *,
        mode: PermissionMode | None = None,
        max_turns: int = 20,
    ) -> None:
        self.config = config
        self.complain = complain
        self.mode = mode
        """`--permission-mode`; None: the settings files' `defaultMode`, else `default`."""
        self.max_turns = max_turns


class AcpSession:
    """A session an editor drives."""

    def __init__(self, host: SessionHost, link: ClientLink, config: ProviderConfig) -> None:
        self.host = host
        self.link = link
        self.config = config
        self.root = host.session.context.cwd
        self.turn: asyncio.Task[PromptResponse] | None = None
        self.cancelled = False
        """`session/cancel` came for the running turn."""
        self.offered: list[AvailableCommand] | None = None
        """The commands last sent in `available_commands_update`."""
        self._background: set[asyncio.Task[Any]] = set()

    @classmethod
    async def open(
        cls,
        conn: Client,
        setup: SessionSetup,
        capabilities: ClientCapabilities,
        cwd: Path,
        session_id: str,
        *,
        servers: dict[str, Any],
        resume: Path | None = None,
    ) -> AcpSession:
        """Build the session (its files are read in a worker thread) and start its MCP servers."""
        link = ClientLink(conn, session_id, capabilities, setup.complain)
        built: list[SessionHost] = []
        asker = EditorAsker(link, lambda: built[0].policy, cwd)
        replaced: list[Tool] = [
            *(client_file_tools(link) if link.files else []),
            *([ClientBash(link)] if link.terminal else []),
        ]
        gone = {tool.name for tool in replaced}
        options = SessionOptions(
            cwd,
            max_turns=setup.max_turns,
            permissions=PermissionOptions(setup.mode),
            resume=resume,
            session_id=None if resume is not None else session_id,
            builtin_tools=[name for name in [*default_tools(echo=False).names(), "Skill", "Agent"] if name not in gone],
            extra_tools=replaced,
            mcp_servers=servers or None,
        )
        host = await asyncio.to_thread(SessionHost.build, setup.config, options, asker=asker)
        built.append(host)
        for line in setup_report(host, can_ask=True).lines:  # broken settings: every call is asked for
            setup.complain(line)
        host.start()
        session = cls(host, link, setup.config)
        session.later(session.when_servers_ready())
        return session

    # ---- what the editor is offered ----

    @property
    def mode(self) -> str:
        return self.host.policy.mode

    async def announce_commands(self) -> None:
        """Send `available_commands_update` when the commands changed since the last one."""
        offered = commands.available(self.host)
        if offered != self.offered:
            self.offered = offered
            await self.send(update_available_commands(offered))

    async def when_servers_ready(self) -> None:
        """Once the MCP servers have started (or failed), offer their prompts too."""
        await asyncio.sleep(0)  # after the answer to session/new or session/load
        manager = self.host.mcp.manager
        if manager is not None:
            for warning in await manager.wait_ready(MCP_FIRST_CALL_WAIT):
                self.link.complain(f"warning: {warning}")
        await self.announce_commands()

    # ---- turns ----

    async def prompt(self, blocks: Sequence[PromptBlock]) -> PromptResponse:
        """Run one prompt turn to its end; its stop reason."""
        if self.turn is not None and not self.turn.done():
            raise errors.invalid_request("a prompt is already running in this session; cancel it or wait for it")
        self.cancelled = False
        task = asyncio.ensure_future(self._turn(blocks))
        self.turn = task
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError:  # the connection is closing: the turn stops with it
            self.stop("the client went away")
            raise
        if task.cancelled():
            return PromptResponse(stop_reason="cancelled")
        return task.result()

    def cancel(self) -> None:
        """`session/cancel`: stop the running turn (nothing happens when none runs)."""
        if self.turn is not None and not self.turn.done():
            self.cancelled = True
            self.stop("cancelled by the client")

    def stop(self, reason: str) -> None:
        task = self.turn
        if task is not None and not task.done() and not self.host.interrupt(reason):
            task.cancel()  # the loop has not begun (or has ended): nothing listens to the abort signal yet

    async def _turn(self, blocks: Sequence[PromptBlock]) -> PromptResponse:
        prompt = convert(blocks, self.root)
        for note in prompt.notes:
            await self.send(update_agent_message_text(f"> {note}\n\n"))
        text, context = prompt.text, list(prompt.context)
        if text.startswith("/"):
            outcome = await commands.run(self.host, text)
            if isinstance(outcome, commands.Done):
                await self.send(update_agent_message_text(outcome.text))
                return PromptResponse(stop_reason="cancelled" if self.cancelled else "end_turn")
            text, context, scope = outcome.text, [*context, *outcome.context], outcome.scope
        else:
            scope = None
        if not text.strip() and not context:
            raise errors.invalid_params("the prompt is empty")
        return await self._run(text, context, scope)

    async def _run(self, text: str, context: list[Message], scope: TurnScope | None = None) -> PromptResponse:
        updates = TurnUpdates(self.root, disk_text, self.link.terminals)
        terminal = Terminal("error", 0, "the turn ended without a result")
        try:
            async for event in self.host.turn(text, inject=context, scope=scope):
                if isinstance(event, Remark):
                    self.link.complain(event.text)
                    continue
                if isinstance(event, Waiting):
                    continue
                if isinstance(event, Terminal):
                    terminal = event
                for update in updates.feed(event):
                    await self.send(update)
        except Exception as exc:  # a bug ends this turn with an error answer, never the session
            self.host.repair()
            raise errors.internal(f"ram: internal error: {type(exc).__name__}: {exc}") from exc
        self.later(self.announce_commands())
        if terminal.reason == "error" and not self.cancelled:
            raise errors.internal(f"ram: {terminal.error}", {"turns": terminal.turns})
        return PromptResponse(stop_reason=stop_reason(terminal, updates.last_stop, self.cancelled))

    # ---- the connection ----

    async def send(self, update: Update | Any) -> None:
        """One `session/update`; when the client is gone, the turn stops (nobody sees it any more)."""
        try:
            await self.link.conn.session_update(session_id=self.link.session_id, update=update)
        except ConnectionError:
            self.stop("the client went away")

    def later(self, work: Any) -> None:
        """Run `work` (a coroutine) in the background, held until it ends; a failure costs a line on stderr."""

        async def guarded() -> None:
            try:
                await work
            except Exception as exc:
                self.link.complain(f"warning: acp: {type(exc).__name__}: {exc}")

        task = asyncio.ensure_future(guarded())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def aclose(self) -> None:
        """Stop the running turn, then close the session (MCP servers, connections, transcript)."""
        self.stop("the session is closing")
        if self.turn is not None:
            with contextlib.suppress(BaseException):
                await asyncio.wait({self.turn})
        for task in list(self._background):
            task.cancel()
        await self.host.aclose()
