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
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from .. import __version__
from ..config import ProviderConfig
from .completion import Candidate, FileIndex, complete
from .prompt import Input, LineInput, PromptInterrupted, make_input
from .slash import SlashCommands, is_command

if TYPE_CHECKING:
    from rich.console import Console

    from ..app import Assembled, SessionOptions
    from ..custom_commands.catalog import CommandCatalog
    from ..host import SessionHost, TurnScope
    from ..messages import Message, ToolUseBlock
    from ..permissions.policy import Answer, PermissionRequest
    from ..tools.skill import SkillTool
    from .early import EarlyFrame
    from .permission_prompt import PermissionPrompt
    from .render import TurnView

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


class SetupFailed(Exception):
    """The session could not be built (the message is one line for the user)."""


def _style(line: str) -> str:
    """How a setup line is shown: errors red, warnings yellow, the rest dim."""
    if line.startswith("error:"):
        return "bold red"
    return "yellow" if line.startswith("warning:") else "dim"


def _one_line(text: str, limit: int = 300) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class Repl:
    """One interactive session."""

    def __init__(self, config: ProviderConfig, options: SessionOptions, *, early: EarlyFrame | None = None) -> None:
        self.config = config
        self.options = options
        self.early = early
        """The banner and idle prompt `ram` drew before this module was imported (see `early.py`)."""
        self.resume = options.resume
        self.cwd = options.cwd.resolve()
        self.host: SessionHost | None = None
        """The session's owner, once built (None while the first prompt is up)."""
        self.built: Assembled | None = None
        """The session and its parts (the host's), once built."""
        self.view: TurnView | None = None
        """The running turn's display."""
        self.commands = SlashCommands(self)
        self.input: Input | None = None
        self._console: Console | None = None
        self._build_task: asyncio.Future[Assembled] | None = None
        self._busy_task: asyncio.Future[bool] | None = None
        self._presses = 0
        self._interrupted = False
        self._exit_code: int | None = None
        self._last_idle_interrupt = -DOUBLE_PRESS_SECONDS
        self._saved_tty: list[Any] | None = None
        self._permission_prompt: PermissionPrompt | None = None
        self._permission_lock = asyncio.Lock()
        self._file_index = FileIndex(self.cwd)
        self._answered = False
        """A turn ended since the prompt was last shown: waiting for the user is worth a Notification hook."""
        self._early_commands: CommandCatalog | None = None
        """Custom commands found before the session is built (so /help and Tab have them at once)."""

    # ---- startup and shutdown ----

    async def main(self) -> int:
        loop = asyncio.get_running_loop()
        if self.early is None:
            self._banner()
        else:
            self._saved_tty = self.early.saved_tty
        self.input = make_input(self._complete, self._start_build, self._hand_over)
        if not isinstance(self.input, LineInput):
            # Between prompts the terminal stays without echo and line editing, so whatever is typed while a turn
            # runs (Ctrl+D included) reaches the next prompt as typed; prompt_toolkit sets raw mode over this.
            self._quiet_tty(keep_lines=False)
        installed = []
        handlers = (
            (signal.SIGINT, self._on_sigint),
            (signal.SIGTERM, lambda: self._on_sigterm(143)),
            (signal.SIGHUP, lambda: self._on_sigterm(129)),  # the terminal closed: as SIGTERM, so servers stop
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
        from .render import make_console, preload

        options = msgspec.structs.replace(self.options, mock_chunk_delay=MOCK_PACE)
        host = SessionHost.build(self.config, options, asker=self._ask_permission)
        host.end_reason = "prompt_input_exit"
        host.built.commands.commands  # noqa: B018 (found here, off the main thread, before /help or Tab needs them)
        preload()
        if self._console is None:
            self._console = make_console()
        return host

    async def _build(self) -> Assembled:
        try:
            host = await asyncio.to_thread(self._build_sync)
        except Exception as exc:
            from ..session_lock import SessionInUse

            in_use = isinstance(exc, SessionInUse)  # another process took the session since `ram` checked
            reason = _one_line(str(exc) or type(exc).__name__)
            message = f"error: {reason}" if in_use else f"error: cannot start the session: {reason}"
            self._exit_code = 2 if in_use else 1
            if self.input is not None:
                self.input.print_above(message)
                self.input.interrupt()
            raise SetupFailed(message) from None
        from ..permissions.configured import REPL_FAIL_CLOSED  # loaded by the build already

        self.host, self.built = host, host.built
        built = host.built
        host.start()
        lines = [f"warning: {warning}" for warning in built.warnings]
        lines += [f"error: {error.text} — {REPL_FAIL_CLOSED}" for error in built.permission_settings.errors]
        if self.resume is not None:
            lines.append(self.recap_text(f"resumed session {built.session.session_id[:12]}"))
        if lines and self.input is not None:
            self.input.print_above("\n".join(lines))
        return built

    async def ready(self) -> Assembled:
        """The built session (waiting for the build if it is still running)."""
        self._start_build()
        assert self._build_task is not None
        return await asyncio.shield(self._build_task)

    async def _close(self) -> None:
        self._restore_tty()
        if self._build_task is None:
            return
        try:
            await self._build_task
        except Exception:
            return
        host = self.host
        assert host is not None
        saved = host.built.recorder.saved
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
        while True:
            if self._exit_code is not None:
                return self._exit_code
            idle = self._idle_timer()
            try:
                line = await self.input.read()
            except PromptInterrupted:
                if self._exit_code is not None:
                    return self._exit_code
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
            leave = await self._busy(self._handle(line))
            if self._exit_code is not None:
                return self._exit_code
            if leave:
                return 0

    def _idle_timer(self) -> asyncio.TimerHandle | None:
        """After a turn: run the Notification hooks (`idle_prompt`) once the prompt has waited `idle_seconds()`."""
        hooks = self.built.hooks if self.built is not None else None
        if not self._answered or hooks is None:
            return None
        self._answered = False
        from ..session_hooks import NOTIFY_IDLE, notify

        def fire() -> None:
            notify(hooks, "ram is waiting for your input", NOTIFY_IDLE)

        return asyncio.get_running_loop().call_later(idle_seconds(), fire)

    async def _handle(self, line: str) -> bool:
        text = line.strip()
        if is_command(text):
            return await self.commands.run(text)
        await self.turn(text)
        return False

    async def _busy(self, work: Any) -> bool:
        """Run a command or a turn so that Ctrl+C can stop it; True when the REPL should exit."""
        task: asyncio.Future[bool] = asyncio.ensure_future(work)
        self._busy_task = task
        self._presses = 0
        self._interrupted = False
        try:
            return await task
        except asyncio.CancelledError:
            if not task.cancelled():
                raise
            self._repair()
            self.say("Interrupted.", "yellow")
            return False
        except SetupFailed:
            return False
        except Exception as exc:  # last resort: one line, the session goes on
            if os.environ.get("RAM_DEBUG") == "1":
                raise
            self._repair()
            self.say(f"error: internal error: {type(exc).__name__}: {_one_line(str(exc))}", "bold red")
            return False
        finally:
            self._busy_task = None

    def _on_sigint(self) -> None:
        task = self._busy_task
        if task is None or task.done():
            if self.input is not None:
                self.input.interrupt()
            return
        self._presses += 1
        self._interrupted = True
        if self._presses == 1:
            session = self.built.session if self.built is not None else None
            if session is None or not session.abort_current_turn("interrupted"):
                task.cancel()
        elif self._presses == 2:
            sys.stderr.write("\nforced exit\n")
            sys.stderr.flush()
            self._exit_code = 130
            task.cancel()
        else:  # the work ignores cancellation: leave now
            self._restore_tty()
            os._exit(130)

    def _on_sigterm(self, code: int) -> None:
        """SIGTERM (143) or SIGHUP (129): stop the running turn as Ctrl+C would (its processes too), then leave."""
        self._exit_code = code
        task = self._busy_task
        if task is not None and not task.done():
            session = self.built.session if self.built is not None else None
            if session is None or not session.abort_current_turn("terminated"):
                task.cancel()
        elif self.input is not None:
            self.input.interrupt()

    # ---- turns ----

    async def join_mcp(self, built: Assembled) -> None:
        """Add the tools of MCP servers that are ready (a command about to list them wants them)."""
        for warning in await built.mcp.join(built.session.tools):
            self.say(f"warning: {warning}", "yellow")

    async def turn(self, text: str, inject: Sequence[Message] = (), scope: TurnScope | None = None) -> None:
        """Send `text` (after `inject`) and show the turn until it ends, then the status line; `scope`: a custom
        command's allowed tools and model."""
        from ..events import Terminal
        from ..host import Remark, Waiting
        from .render import TurnView

        built = await self.ready()
        host = self.host
        assert host is not None
        view = TurnView(self.console, self._describe, built.session.context.cwd)
        self.view = view
        terminal = Terminal("error", 0, "the turn ended without a result")
        with self._quiet_keyboard():
            view.start()
            try:
                async for event in host.turn(text, inject=inject, scope=scope):
                    if isinstance(event, Remark):
                        self.say(event.text, _style(event.text))
                    elif isinstance(event, Waiting):
                        view.waiting = event.what
                    elif isinstance(event, Terminal):
                        terminal = event
                    else:
                        view.waiting = ""
                        view.event(event)
            except asyncio.CancelledError:
                self._interrupted = True
                terminal = Terminal("aborted", 0)
                self._repair()
            except Exception as exc:
                if os.environ.get("RAM_DEBUG") == "1":
                    raise
                terminal = Terminal("error", 0, f"internal error: {type(exc).__name__}: {_one_line(str(exc))}")
                self._repair()
            finally:
                self.view = None
                view.finish(terminal, interrupted=self._interrupted)
        self._answered = True
        self._status_line(built)

    def _repair(self) -> None:
        """After a turn stopped abruptly: answer any tool call left without a result, so the history stays valid."""
        if self.host is not None:
            self.host.repair()

    def _status_line(self, built: Assembled) -> None:
        from ..pricing import cost_usd, format_cost
        from .render import status_line

        session = built.session
        usage = session.totals.usage
        cost = cost_usd(built.provider.model, usage)
        line = status_line(
            session.context_reading().percent,
            usage.total_input_tokens,
            usage.output_tokens,
            format_cost(cost) if cost is not None else "",
        )
        self.console.print()
        self.console.print(line)
        self.console.print()

    def _describe(self, use: ToolUseBlock) -> str:
        tool = self.built.session.tools.get(use.name) if self.built is not None else None
        try:
            return tool.describe_call(use.input) if tool is not None else ""
        except Exception:  # a label is never worth a failure
            return ""

    # ---- permission prompts ----

    async def _ask_permission(self, request: PermissionRequest) -> Answer:
        async with self._permission_lock:
            answer = await self._prompt()(request)
            if answer == "no" and self.view is not None:
                self.view.declined = request.summary
            return answer

    def _prompt(self) -> PermissionPrompt:
        if self._permission_prompt is None:
            from .permission_prompt import PermissionPrompt

            assert self.input is not None
            self._permission_prompt = PermissionPrompt(
                self.console,
                self.cwd,
                self.input.ask,
                self._paused_for_prompt,
                self._shown,
                self._interrupt_turn,
            )
        return self._permission_prompt

    @contextlib.contextmanager
    def _paused_for_prompt(self) -> Iterator[None]:
        view = self.view
        with view.paused() if view is not None else contextlib.nullcontext():
            self._drop_typeahead()
            yield

    def _shown(self, request: PermissionRequest) -> None:
        from .render import call_key

        if self.view is not None:
            self.view.previewed.add(call_key(request.tool, request.args))

    def _interrupt_turn(self) -> None:
        self._interrupted = True
        if self.built is not None:
            self.built.session.abort_current_turn("interrupted")

    # ---- the terminal ----

    def _quiet_tty(self, *, keep_lines: bool) -> bool:
        """Turn the terminal's echo off, and with `keep_lines` False its line editing too (Ctrl+C still
        interrupts). True when changed; `_restore_tty` puts the original settings back."""
        try:
            import termios
        except ImportError:
            return False
        try:
            fd = sys.stdin.fileno()
            saved = termios.tcgetattr(fd)
            quiet: list[Any] = [list(item) if isinstance(item, list) else item for item in saved]
            lflag: int = quiet[3] & ~termios.ECHO
            if not keep_lines:  # as prompt_toolkit's raw mode, so keys typed ahead reach it as typed (see early.py)
                lflag &= ~termios.ICANON
                quiet[0] &= ~termios.ICRNL
                quiet[6][termios.VMIN], quiet[6][termios.VTIME] = 1, 0
            quiet[3] = lflag
            termios.tcsetattr(fd, termios.TCSANOW, quiet)
        except (OSError, ValueError, AttributeError, termios.error):
            return False
        if self._saved_tty is None:
            self._saved_tty = saved
        return True

    @contextlib.contextmanager
    def _quiet_keyboard(self) -> Iterator[None]:
        """Echo off while a turn runs, so keys typed ahead do not scribble over the live display. With
        prompt_toolkit this is the terminal's state all along (see `main`); with plain lines, only during turns."""
        if self._saved_tty is not None or not self._quiet_tty(keep_lines=True):
            yield
            return
        try:
            yield
        finally:
            self._restore_tty()

    def _restore_tty(self) -> None:
        saved, self._saved_tty = self._saved_tty, None
        if saved is None:
            return
        with contextlib.suppress(Exception):
            import termios

            termios.tcsetattr(sys.stdin.fileno(), termios.TCSADRAIN, saved)

    def _drop_typeahead(self) -> None:
        with contextlib.suppress(Exception):  # best effort: a terminal that refuses is left as it is
            import termios

            if sys.stdin.isatty():
                termios.tcflush(sys.stdin.fileno(), termios.TCIFLUSH)

    # ---- helpers for commands ----

    @property
    def console(self) -> Console:
        if self._console is None:
            from .render import make_console

            self._console = make_console()
        return self._console

    def say(self, text: str, style: str = "") -> None:
        """Print one message for the user (not model output)."""
        from rich.text import Text

        self.console.print(Text(text, style=style))

    def show_markdown(self, text: str) -> None:
        from .render import markdown

        self.console.print(markdown(text))

    async def ask(self, question: str) -> str:
        """One answer line; empty when the user pressed Ctrl+C or Ctrl+D."""
        assert self.input is not None
        try:
            return await self.input.ask(question)
        except (PromptInterrupted, EOFError):
            return ""

    def recap_text(self, title: str) -> str:
        """`title · N messages` and the last exchange, for a resumed session."""
        if self.built is None:
            return title
        messages = self.built.session.messages
        lines = [f"{title} · {len(messages)} messages"]
        asked = next(
            (i for i in range(len(messages) - 1, -1, -1) if messages[i].is_user_text and not messages[i].meta), -1
        )
        if asked >= 0:  # the last exchange: what the user said, and what came after it (if anything did)
            lines.append(f"  you: {_one_line(messages[asked].text, 200)}")
            answer = next((m.text for m in reversed(messages[asked:]) if m.role == "assistant" and m.text.strip()), "")
            lines.append(
                f"  agent: {_one_line(answer, 300)}" if answer else "  agent: (no answer: the turn did not finish)"
            )
        return "\n".join(lines)

    def recap(self, title: str) -> None:
        self.say(self.recap_text(title), "dim")

    def command_catalog(self) -> CommandCatalog:
        """The custom commands: the session's once it is built, found here before that (for /help and Tab)."""
        if self.built is not None:
            return self.built.commands
        if self._early_commands is None:
            from ..custom_commands.catalog import CommandCatalog

            self._early_commands = CommandCatalog(self.cwd, os.environ)
        return self._early_commands

    def skill_tool(self, built: Assembled) -> SkillTool | None:
        from ..tools.skill import SkillTool

        tool = built.session.tools.get("Skill")
        return tool if isinstance(tool, SkillTool) else None

    def _complete(self, before_cursor: str) -> list[Candidate]:
        built = self.built
        manager = built.mcp.manager if built is not None else None
        return complete(
            before_cursor,
            self.commands.completions(),
            root=self.cwd,
            arguments=self.commands.arguments,
            resource_servers=manager.resource_servers() if manager is not None else (),
            index=self._file_index,
        )


def run_repl(config: ProviderConfig, options: SessionOptions, *, early: EarlyFrame | None = None) -> int:
    """Run the REPL until the user leaves; the process exit code. `early`: the first frame `ram` already drew."""
    repl = Repl(config, options, early=early)
    try:
        with asyncio.Runner() as runner:
            return runner.run(repl.main())
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # last resort: one line, never a traceback
        if os.environ.get("RAM_DEBUG") == "1":
            raise
        print(f"error: internal error: {type(exc).__name__}: {_one_line(str(exc))}", file=sys.stderr)
        return 1
    finally:
        repl._restore_tty()
