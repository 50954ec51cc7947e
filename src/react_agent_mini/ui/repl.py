"""The interactive REPL (`ram` with no task, on a terminal): read a message or a slash command, run it, repeat.

Startup is arranged so the prompt is up at once: only prompt_toolkit is loaded before it is drawn; the session
(provider, tools, permissions, project context, transcript) is built in a worker thread right after the first
render, rich is preloaded there too, and MCP servers start in the background, joined before the first turn.

Ctrl+C: during a turn (or a command), the first press aborts it — the model stream, running tools and their
subprocesses — and the history stays valid; a second press while it is still winding down exits (130). At an
empty prompt, a second press within a second exits (130); Ctrl+D exits (0). The turn itself runs with the
terminal's echo off, so keys typed ahead do not scribble over the live display (they reach the next prompt);
keys typed ahead are dropped before a permission prompt, so they can never answer it. No traceback reaches the
user: a failure inside a turn or a command is one line, and the session goes on.

`Repl` builds the session and runs the prompt loop; the rest are parts it wires together: the input
(`prompt.py`), the terminal's settings (`terminal.py`), what it prints (`printer.py`; a turn's display is
`render.py`), turn control (`turns.py`: running a turn, Ctrl+C and signals, permission prompts) and the slash
commands (`slash.py`), which see the REPL as a `slash.SlashHost`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .. import __version__
from ..config import ProviderConfig
from .completion import Candidate, FileIndex, complete
from .modes import ModeSwitch
from .printer import Printer, one_line, recap_text
from .prompt import LineInput, make_input
from .prompt_base import Input, PromptInterrupted
from .slash import SlashCommands, is_command, is_shell_escape
from .terminal import TerminalModes
from .turns import SetupFailed, TurnControl

if TYPE_CHECKING:
    from ..app import SessionOptions
    from ..custom_commands.catalog import CommandCatalog
    from ..host import SessionHost, TurnScope
    from ..messages import Message
    from .early import EarlyFrame

DOUBLE_PRESS_SECONDS = 1.0
IDLE_NOTIFY_SECONDS = 60.0
"""How long the prompt waits after a turn before the Notification hooks say so (Claude Code's default)."""


def idle_seconds() -> float:
    """`RAM_IDLE_NOTIFY_SECONDS`, else `IDLE_NOTIFY_SECONDS`."""
    try:
        return max(0.0, float(os.environ.get("RAM_IDLE_NOTIFY_SECONDS", IDLE_NOTIFY_SECONDS)))
    except ValueError:
        return IDLE_NOTIFY_SECONDS


MOCK_PACE = 0.01
"""Seconds between chunks of the offline demo model, so its answers stream visibly."""


class Repl:
    """One interactive session: its parts, and the loop that reads the prompt (a `slash.SlashHost`)."""

    def __init__(
        self,
        config: ProviderConfig,
        options: SessionOptions,
        *,
        early: EarlyFrame | None = None,
        first_message: str | None = None,
        typeahead: bytes = b"",
    ) -> None:
        self.config = config
        self.options = options
        self.early = early
        """The banner and idle prompt `ram` drew before this module was imported (see `early.py`)."""
        self.first_message = first_message
        """The first message, typed before this module was imported (`early/repl.py`); run before any prompt."""
        self.typeahead = typeahead
        """Keys typed before this module was imported, for the first prompt."""
        self.resume = options.resume
        self.cwd = options.cwd.resolve()
        self.host: SessionHost | None = None
        """The session's owner, once built (None while the first prompt is up): the REPL sees the session through
        it."""
        self.input: Input | None = None
        self.printer = Printer()
        self.terminal = TerminalModes()
        self.turns = TurnControl(self.printer, self.terminal, self.cwd, lambda: self.host, lambda: self.input)
        self.commands = SlashCommands(self)
        self.modes = ModeSwitch()
        """The permission mode the prompt shows and Shift+Tab cycles."""
        self._build_task: asyncio.Future[SessionHost] | None = None
        self._last_idle_interrupt = -DOUBLE_PRESS_SECONDS
        self._file_index = FileIndex(self.cwd)
        self._early_commands: CommandCatalog | None = None
        """Custom commands found before the session is built (so /help and Tab have them at once)."""
        self._trust_settled: asyncio.Future[None] | None = None
        """Done once the folder's trust is settled (asked about when needed); the build waits for it."""

    # ---- startup and shutdown ----

    async def main(self) -> int:
        loop = asyncio.get_running_loop()
        self._trust_settled = loop.create_future()
        if self.early is None:
            self._banner()
        else:
            self.terminal.saved = self.early.saved_tty
        self.input = make_input(self._complete, self._start_build, self._hand_over, self.modes, self.typeahead)
        try:
            await self._settle_trust()
        finally:
            self._trust_settled.set_result(None)
        if not isinstance(self.input, LineInput):
            # Between prompts the terminal stays without echo and line editing, so whatever is typed while a turn
            # runs (Ctrl+D included) reaches the next prompt as typed; prompt_toolkit sets raw mode over this.
            self.terminal.quiet(keep_lines=False)
        installed = []
        turns = self.turns
        handlers = (
            (signal.SIGINT, turns.on_sigint),
            (signal.SIGTERM, lambda: turns.on_sigterm(143)),
            (signal.SIGHUP, lambda: turns.on_sigterm(129)),  # the terminal closed: as SIGTERM, so servers stop
        )
        for signum, handler in handlers:
            try:
                loop.add_signal_handler(signum, handler)
                installed.append(signum)
            except (NotImplementedError, RuntimeError, ValueError):  # no signals here: Ctrl+C still works as a key
                pass
        try:
            return await self._loop()
        finally:
            for signum in installed:
                loop.remove_signal_handler(signum)
            await self._close()

    def _banner(self) -> None:
        from .early import draw

        self.early = draw(f"{self.config.kind}:{self.config.model}", self.cwd, __version__, interactive=False)

    def _start_build(self) -> None:
        if self._build_task is None:
            self._build_task = asyncio.ensure_future(self._build())

    def _build_sync(self) -> SessionHost:
        import msgspec

        from ..host import SessionHost
        from .render import preload

        options = msgspec.structs.replace(self.options, mock_chunk_delay=MOCK_PACE)
        host = SessionHost.build(self.config, options, asker=self.turns.ask_permission)
        host.end_reason = "prompt_input_exit"
        host.commands.commands  # noqa: B018 (found here, off the main thread, before /help or Tab needs them)
        preload()
        self.printer.console  # noqa: B018 (made here too)
        return host

    async def _settle_trust(self) -> None:
        """Before the session is built: when the folder's own configuration has parts nobody approved (hooks, MCP
        servers, allow rules), show them and ask once whether to trust the folder; the answer is kept (`trust/`)."""
        import msgspec

        from ..trust.gate import TrustGate, trust_gate

        if isinstance(self.options.trust, TrustGate):
            return
        gate = trust_gate(self.cwd, explicit=self.options.trust)
        self.options = msgspec.structs.replace(self.options, trust=gate)
        if gate.everything:
            return
        from ..trust_review.inventory import describe, project_items

        items = await asyncio.to_thread(project_items, self.cwd, os.environ, self.options.permissions.setting_sources)
        pending = [item for item in items if not gate.permits(item)]
        if not pending or self.input is None:
            return
        if gate.recorded:
            heading = "This folder's own configuration changed since you trusted it. Its new parts would:"
        else:
            heading = "This folder has its own configuration. Trusting it lets it:"
        footer = (
            "Its deny rules, CLAUDE.md, memory and skills apply either way; untrusted, these parts are left out. "
            "Only trust a folder whose files you know (a cloned repository can run anything here)."
        )
        self.input.print_above("\n".join([heading, *describe(pending), footer]))
        answer = (await self.ask("Trust this folder? [y/N] ", keys="yn")).strip().lower()
        if answer not in ("y", "yes"):
            self.say("not trusted: those parts are left out this session (you will be asked again next time)", "dim")
            return
        from ..trust.store import record_trust

        keys = frozenset(item.key for item in items)
        try:
            record_trust(self.cwd, keys)
        except OSError as exc:
            self.say(f"warning: trusted for this session only: the trust store cannot be written ({exc})", "yellow")
        gate.approve(keys)
        self.say("trusted: its hooks, MCP servers and rules apply (ram trust --revoke undoes it)", "dim")

    async def _build(self) -> SessionHost:
        if self._trust_settled is not None:
            await asyncio.shield(self._trust_settled)
        try:
            host = await asyncio.to_thread(self._build_sync)
        except Exception as exc:
            from ..session_lock import SessionInUse

            in_use = isinstance(exc, SessionInUse)  # another process took the session since `ram` checked
            reason = one_line(str(exc) or type(exc).__name__)
            message = f"error: {reason}" if in_use else f"error: cannot start the session: {reason}"
            self.turns.exit_code = 2 if in_use else 1
            if self.input is not None:
                self.input.print_above(message)
                self.input.interrupt()
            raise SetupFailed(message) from None
        from ..kit.setup import setup_report

        self.host = host
        self.modes.attach(host.policy)
        host.start()
        lines = setup_report(host, can_ask=True).lines  # broken settings: every call is asked for
        if self.resume is not None:
            lines.append(recap_text(host, f"resumed session {host.session_id[:12]}"))
        if lines and self.input is not None:
            self.input.print_above("\n".join(lines))
        return host

    async def ready(self) -> SessionHost:
        """The session's owner (waiting for the build if it is still running)."""
        self._start_build()
        assert self._build_task is not None
        return await asyncio.shield(self._build_task)

    async def _close(self) -> None:
        self.terminal.restore()
        if self._build_task is None:
            return
        try:
            await self._build_task
        except Exception:
            return
        host = self.host
        assert host is not None
        saved = host.saved
        with contextlib.suppress(Exception):
            await host.aclose()
        if host.session.messages and saved:
            self.say("resume this conversation with: ram --continue", "dim")

    def _hand_over(self) -> None:
        if self.early is not None:
            self.early.hand_over()

    # ---- the loop ----

    async def _loop(self) -> int:
        assert self.input is not None
        turns = self.turns
        while True:
            if turns.exit_code is not None:
                return turns.exit_code
            idle = self._idle_timer()
            try:
                first, self.first_message = self.first_message, None
                if first is not None:  # typed before the prompt was up: it runs as if sent from it
                    self.input.remember(first)
                    line = first
                else:
                    line = await self.input.read()
            except PromptInterrupted:
                if turns.exit_code is not None:
                    return turns.exit_code
                now = time.monotonic()
                if now - self._last_idle_interrupt < DOUBLE_PRESS_SECONDS:
                    return 130
                self._last_idle_interrupt = now
                self.input.print_above("(press Ctrl+C again to exit, or Ctrl+D)")
                continue
            except (EOFError, OSError):  # Ctrl+D, or the terminal went away
                return 0
            finally:
                if idle is not None:
                    idle.cancel()
            if not line.strip():
                continue
            leave = await turns.busy(self._handle(line))
            if turns.exit_code is not None:
                return turns.exit_code
            if leave:
                return 0

    def _idle_timer(self) -> asyncio.TimerHandle | None:
        """After a turn: run the Notification hooks (`idle_prompt`) once the prompt has waited `idle_seconds()`."""
        hooks = self.host.hooks if self.host is not None else None
        if not self.turns.answered or hooks is None:
            return None
        self.turns.answered = False
        from ..hooks.session import NOTIFY_IDLE, notify

        def fire() -> None:
            notify(hooks, "ram is waiting for your input", NOTIFY_IDLE)

        return asyncio.get_running_loop().call_later(idle_seconds(), fire)

    async def _handle(self, line: str) -> bool:
        text = line.strip()
        if is_command(text):
            return await self.commands.run(text)
        if is_shell_escape(text):
            from .shell_escape import shell_escape

            host = await self.ready()
            await shell_escape(text, host.cwd, host.session.add_message, self.say)
            return False
        await self.turn(text, files=True)
        return False

    def _complete(self, before_cursor: str) -> list[Candidate]:
        manager = self.host.mcp.manager if self.host is not None else None
        return complete(
            before_cursor,
            self.commands.completions(),
            root=self.cwd,
            arguments=self.commands.arguments,
            resource_servers=manager.resource_servers() if manager is not None else (),
            index=self._file_index,
        )

    # ---- what slash commands use (slash.SlashHost) ----

    async def turn(
        self, text: str, inject: Sequence[Message] = (), scope: TurnScope | None = None, files: bool = False
    ) -> None:
        """Send `text` (after `inject`) and show the turn until it ends, then the status line; `scope`: a custom
        command's allowed tools and model; `files`: attach the files its `@path`s name (a message the user typed)."""
        await self.ready()
        assert self.host is not None
        await self.turns.run(self.host, text, inject, scope, files)

    def say(self, text: str, style: str = "") -> None:
        """Print one message for the user (not model output)."""
        self.printer.say(text, style)

    def show_markdown(self, text: str) -> None:
        self.printer.markdown(text)

    async def ask(self, question: str, keys: str = "") -> str:
        """One answer line (with `keys`: one key of them on a terminal, "" for Enter); empty when the user pressed
        Ctrl+C or Ctrl+D."""
        assert self.input is not None
        try:
            return await (self.input.ask_key(question, keys) if keys else self.input.ask(question))
        except (PromptInterrupted, EOFError):
            return ""

    def show_context(self, host: SessionHost) -> None:
        from .context_view import context_report

        grid, table, notes = context_report(host)
        console = self.printer.console
        console.print(grid, end="")
        console.print(table)
        console.print(notes, style="dim")

    def recap(self, title: str) -> None:
        self.say(recap_text(self.host, title), "dim")

    def command_catalog(self) -> CommandCatalog:
        """The custom commands: the session's once it is built, found here before that (for /help and Tab)."""
        if self.host is not None:
            return self.host.commands
        if self._early_commands is None:
            from ..custom_commands.catalog import CommandCatalog

            self._early_commands = CommandCatalog(self.cwd, os.environ)
        return self._early_commands


def run_repl(
    config: ProviderConfig,
    options: SessionOptions,
    *,
    early: EarlyFrame | None = None,
    first_message: str | None = None,
    typeahead: bytes = b"",
) -> int:
    """Run the REPL until the user leaves; the process exit code. `early`: the first frame `ram` already drew;
    `first_message` and `typeahead`: what was typed in it (`early/repl.py`)."""
    repl = Repl(config, options, early=early, first_message=first_message, typeahead=typeahead)
    try:
        with asyncio.Runner() as runner:
            return runner.run(repl.main())
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # last resort: one line, never a traceback
        if os.environ.get("RAM_DEBUG") == "1":
            raise
        print(f"error: internal error: {type(exc).__name__}: {one_line(str(exc))}", file=sys.stderr)
        return 1
    finally:
        repl.terminal.restore()
