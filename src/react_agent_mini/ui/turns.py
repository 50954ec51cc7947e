"""Turn control: the REPL's work — a turn or a slash command — run so that Ctrl+C stops it, and a turn shown while
it runs (its live display, the permission prompts it asks and the question when the model repeats a call, the
status line after it).

Esc during a turn stops it as a first Ctrl+C does (`turn_keys.py`; other keys typed meanwhile reach the next
prompt). Ctrl+C during a turn (or a command): the first press aborts it — the model stream, running tools and their
subprocesses — and the history stays valid; a second press while it is still winding down exits (130); a third,
if the work ignores cancellation, leaves at once. SIGTERM (143) and SIGHUP (129) stop the turn as Ctrl+C would,
then the REPL leaves. With nothing running, a press goes to the prompt (`repl.Repl` counts those). No traceback
reaches the user: a failure inside a turn or a command is one line, and the session goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .printer import Printer, one_line, setup_style
from .terminal import TerminalModes, drop_typeahead

if TYPE_CHECKING:
    from ..host import SessionHost, TurnScope
    from ..messages import Message, ToolUseBlock
    from ..model_faults.doom_loop import RepeatedCall
    from ..permissions.policy import Answer, PermissionRequest
    from .permission_prompt import PermissionPrompt
    from .prompt_base import Input
    from .render import TurnView
    from .turn_keys import TurnKeys


class SetupFailed(Exception):
    """The session could not be built (the message is one line for the user, shown already)."""


class TurnControl:
    """Runs the REPL's work and shows its turns. `session` and `prompt` give the session's owner (None until it is
    built) and the input (None until the REPL starts): both come after this part, so it looks them up when needed."""

    def __init__(
        self,
        printer: Printer,
        terminal: TerminalModes,
        cwd: Path,
        session: Callable[[], SessionHost | None],
        prompt: Callable[[], Input | None],
    ) -> None:
        self.printer = printer
        self.terminal = terminal
        self.cwd = cwd
        self._session = session
        self._prompt = prompt
        self.view: TurnView | None = None
        """The running turn's display."""
        self.exit_code: int | None = None
        """Set when the REPL is to leave with this code (a second Ctrl+C, SIGTERM, a session that cannot start)."""
        self.answered = False
        """A turn ended since the prompt was last shown: waiting for the user is worth a Notification hook."""
        self._busy_task: asyncio.Future[bool] | None = None
        self._presses = 0
        self._interrupted = False
        self._permission_prompt: PermissionPrompt | None = None
        self._permission_lock = asyncio.Lock()
        self._keys: TurnKeys | None = None
        """What watches the keyboard while a turn runs (Esc), on a terminal."""

    # ---- the work, and Ctrl+C ----

    async def busy(self, work: Awaitable[bool]) -> bool:
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
            self.printer.say("Interrupted.", "yellow")
            return False
        except SetupFailed:
            return False
        except Exception as exc:  # last resort: one line, the session goes on
            if os.environ.get("RAM_DEBUG") == "1":
                raise
            self._repair()
            self.printer.say(f"error: internal error: {type(exc).__name__}: {one_line(str(exc))}", "bold red")
            return False
        finally:
            self._busy_task = None

    def on_sigint(self) -> None:
        task = self._busy_task
        if task is None or task.done():
            prompt = self._prompt()
            if prompt is not None:
                prompt.interrupt()
            return
        self._presses += 1
        self._interrupted = True
        if self._presses == 1:
            host = self._session()
            if host is None or not host.interrupt("interrupted"):
                task.cancel()
        elif self._presses == 2:
            sys.stderr.write("\nforced exit\n")
            sys.stderr.flush()
            self.exit_code = 130
            task.cancel()
        else:  # the work ignores cancellation: leave now
            self.terminal.restore()
            os._exit(130)

    def _escape(self) -> None:
        """Esc during a turn: stop it, as a first Ctrl+C does (a second Esc does nothing more)."""
        task = self._busy_task
        if self._interrupted or task is None or task.done():
            return
        self._interrupted = True
        host = self._session()
        if host is None or not host.interrupt("interrupted"):
            task.cancel()

    def on_sigterm(self, code: int) -> None:
        """SIGTERM (143) or SIGHUP (129): stop the running turn as Ctrl+C would (its processes too), then leave."""
        self.exit_code = code
        task = self._busy_task
        if task is not None and not task.done():
            host = self._session()
            if host is None or not host.interrupt("terminated"):
                task.cancel()
        else:
            prompt = self._prompt()
            if prompt is not None:
                prompt.interrupt()

    def _repair(self) -> None:
        """After a turn stopped abruptly: answer any tool call left without a result, so the history stays valid."""
        host = self._session()
        if host is not None:
            host.repair()

    # ---- a turn ----

    async def run(
        self,
        host: SessionHost,
        text: str,
        inject: Sequence[Message] = (),
        scope: TurnScope | None = None,
        files: bool = False,
    ) -> None:
        """Send `text` (after `inject`) and show the turn until it ends, then the status line; `scope`: a custom
        command's allowed tools and model; `files`: attach the files its `@path`s name (a message the user typed)."""
        from ..events import Terminal
        from ..host import Remark, Waiting
        from .render import TurnView

        view = TurnView(self.printer.console, self._describe, host.cwd)
        self.view = view
        terminal = Terminal("error", 0, "the turn ended without a result")
        host.session.deps.confirm_repeat = self.ask_repeat  # the model repeating a call: asked here
        prompt = self._prompt()
        self._keys = prompt.turn_keys(self._escape) if prompt is not None else None
        with self.terminal.quiet_during_turn():
            view.start()
            if self._keys is not None:
                self._keys.start()
            try:
                async for event in host.turn(text, inject=inject, scope=scope, files=files):
                    if isinstance(event, Remark):
                        self.printer.say(event.text, setup_style(event.text))
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
                terminal = Terminal("error", 0, f"internal error: {type(exc).__name__}: {one_line(str(exc))}")
                self._repair()
            finally:
                if self._keys is not None:
                    self._keys.stop()
                    self._keys = None
                self.view = None
                view.finish(terminal, interrupted=self._interrupted)
        self.answered = True
        self.printer.status(host)

    def _describe(self, use: ToolUseBlock) -> str:
        host = self._session()
        tool = host.tool(use.name) if host is not None else None
        try:
            return tool.describe_call(use.input) if tool is not None else ""
        except Exception:  # a label is never worth a failure
            return ""

    # ---- permission prompts ----

    async def ask_permission(self, request: PermissionRequest) -> Answer:
        """The session's asker: one prompt at a time, over the turn's display."""
        async with self._permission_lock:
            answer = await self._permission()(request)
            if answer == "no" and self.view is not None:
                self.view.declined = request.summary
            return answer

    async def ask_repeat(self, repeated: RepeatedCall) -> bool:
        """Whether to let the model go on making the same call (`ui/repeat_prompt.py`), one prompt at a time."""
        from .repeat_prompt import ask_repeat

        prompt = self._prompt()
        if prompt is None:
            return False
        async with self._permission_lock:
            return await ask_repeat(
                repeated, self.printer.console, prompt.ask_key, self._paused_for_prompt, self._interrupt_turn
            )

    def _permission(self) -> PermissionPrompt:
        if self._permission_prompt is None:
            from .permission_prompt import PermissionPrompt

            prompt = self._prompt()
            assert prompt is not None
            self._permission_prompt = PermissionPrompt(
                self.printer.console,
                self.cwd,
                prompt.ask_key,
                self._paused_for_prompt,
                self._shown,
                self._interrupt_turn,
            )
        return self._permission_prompt

    @contextlib.contextmanager
    def _paused_for_prompt(self) -> Iterator[None]:
        view, keys = self.view, self._keys
        with (
            view.paused() if view is not None else contextlib.nullcontext(),
            keys.paused() if keys is not None else contextlib.nullcontext(),
        ):
            drop_typeahead()
            yield

    def _shown(self, request: PermissionRequest) -> None:
        from .render import call_key

        if self.view is not None:
            self.view.previewed.add(call_key(request.tool, request.args))

    def _interrupt_turn(self) -> None:
        self._interrupted = True
        host = self._session()
        if host is not None:
            host.interrupt("interrupted")
