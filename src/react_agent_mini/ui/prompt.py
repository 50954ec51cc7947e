"""Reading what the user types: prompt_toolkit on a terminal, plain lines otherwise.

Keys at the `> ` prompt:
- Enter sends; Esc then Enter (Alt+Enter in most terminals), or a `\\` at the end of the line, starts a new line;
  pasted text keeps its newlines (bracketed paste);
- Tab completes slash commands, skills, MCP prompts and `@` paths (the menu also opens while typing `/` or `@`);
- Up and Down walk the history, kept in `$XDG_DATA_HOME/react-agent-mini/history`; a grey suggestion from it
  is taken with the right arrow;
- Ctrl+C clears the line, or on an empty line reports an interrupt (the REPL exits on a second one within a
  second); Ctrl+D on an empty line exits.

`LineInput` is the fallback when prompt_toolkit cannot take the terminal (output is not a terminal, or it fails
to start): one line per Enter, read without blocking the event loop. Both raise `PromptInterrupted` for Ctrl+C
and `EOFError` at the end of input, never KeyboardInterrupt (which would escape the event loop).
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from ..terminal_text import visible
from .completion import Candidate
from .early import PLACEHOLDER, PROMPT


class PromptInterrupted(Exception):
    """Ctrl+C while waiting for input."""


class Input(Protocol):
    async def read(self) -> str:
        """The next message (may hold newlines); PromptInterrupted on Ctrl+C, EOFError at the end."""
        ...

    async def ask(self, question: str) -> str:
        """One answer line after `question` (no history, no completion)."""
        ...

    def interrupt(self) -> None:
        """Make a pending `read`/`ask` raise PromptInterrupted (a SIGINT arrived)."""
        ...

    def print_above(self, text: str) -> None:
        """Print `text` (complete lines) without disturbing a prompt being edited."""
        ...


def history_path() -> Path:
    from ..transcript import data_dir

    return data_dir() / "history"


class PromptInput:
    """prompt_toolkit input with history, completion and the key bindings above."""

    def __init__(
        self,
        complete: Callable[[str], Sequence[Candidate]],
        on_first_render: Callable[[], None],
        before_draw: Callable[[], None] = lambda: None,
    ) -> None:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.auto_suggest import AutoSuggestFromHistory
        from prompt_toolkit.completion import Completer, Completion, ThreadedCompleter
        from prompt_toolkit.history import FileHistory, History, InMemoryHistory
        from prompt_toolkit.key_binding import KeyBindings
        from prompt_toolkit.styles import Style

        class _Completer(Completer):
            def get_completions(self, document: Any, complete_event: Any) -> Any:
                try:
                    found = complete(document.text_before_cursor)
                except Exception:  # completion must never break typing
                    return
                for item in found:
                    yield Completion(
                        item.text,
                        start_position=-item.length,
                        display=item.display or item.text,
                        display_meta=item.meta,
                    )

        history: History
        try:
            path = history_path()
            path.parent.mkdir(parents=True, exist_ok=True)
            history = FileHistory(str(path))
        except OSError:
            history = InMemoryHistory()

        keys = KeyBindings()

        @keys.add("escape", "enter")
        def _newline(event: Any) -> None:
            event.current_buffer.insert_text("\n")

        @keys.add("tab")
        def _tab(event: Any) -> None:
            # prompt_toolkit drops a Tab that comes while the menu's completions are still loading (typed fast,
            # or pasted), so a single candidate is taken here at once, computed on the spot.
            buffer = event.current_buffer
            state = buffer.complete_state
            if state is not None and state.completions:
                buffer.complete_next()
                return
            try:
                found = list(complete(buffer.document.text_before_cursor))
            except Exception:
                found = []
            if len(found) == 1:
                buffer.cancel_completion()
                buffer.delete_before_cursor(found[0].length)
                buffer.insert_text(found[0].text)
            elif found:
                buffer.cancel_completion()
                buffer.start_completion(insert_common_part=True)

        @keys.add("enter")
        def _enter(event: Any) -> None:
            buffer = event.current_buffer
            if buffer.document.is_cursor_at_the_end and buffer.text.endswith("\\"):
                buffer.delete_before_cursor(1)
                buffer.insert_text("\n")
                return
            buffer.validate_and_handle()

        @keys.add("c-c")
        def _interrupt(event: Any) -> None:
            buffer = event.current_buffer
            if buffer.text:
                buffer.reset()
            else:
                event.app.exit(exception=PromptInterrupted())

        self._on_first_render = on_first_render
        self._before_draw = before_draw
        self._session: Any = PromptSession(
            history=history,
            completer=ThreadedCompleter(_Completer()),
            complete_while_typing=True,
            auto_suggest=AutoSuggestFromHistory(),
            key_bindings=keys,
            multiline=False,
            prompt_continuation=lambda width, line_number, wrap_count: " " * width,
            placeholder=self._placeholder,
            style=Style.from_dict({"prompt": "bold", "placeholder": "#808080", "question": "bold"}),
            enable_suspend=True,
        )
        self._session.app.after_render += self._rendered

        answer_keys = KeyBindings()

        @answer_keys.add("c-c")
        def _interrupt_answer(event: Any) -> None:
            event.app.exit(exception=PromptInterrupted())

        self._asker: Any = PromptSession(key_bindings=answer_keys, style=Style.from_dict({"question": "bold"}))

    def _placeholder(self) -> Any:
        # hidden in the last render of a prompt left with Ctrl+C or Ctrl+D, so it does not stay on screen
        done = self._session.app.is_done
        return [] if done else [("class:placeholder", PLACEHOLDER)]

    def _rendered(self, _app: Any) -> None:
        self._session.app.after_render -= self._rendered
        self._on_first_render()

    async def read(self) -> str:
        self._before_draw()
        text: str = await self._session.prompt_async([("class:prompt", PROMPT)], handle_sigint=False)
        return text

    async def ask(self, question: str) -> str:
        self._before_draw()
        text: str = await self._asker.prompt_async([("class:question", question)], handle_sigint=False)
        return text

    def interrupt(self) -> None:
        from prompt_toolkit.application import get_app_or_none

        app = get_app_or_none()
        future = app.future if app is not None and app.is_running else None
        if app is not None and future is not None and not future.done():
            app.exit(exception=PromptInterrupted())

    def print_above(self, text: str) -> None:
        from prompt_toolkit.application import get_app_or_none, run_in_terminal

        app = get_app_or_none()
        if app is None or not app.is_running:
            _write(text)
            return
        run_in_terminal(lambda: _write(text))


def _write(text: str) -> None:
    text = visible(text)  # warnings quote files and servers: nothing in them may steer the terminal
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    sys.stdout.flush()


class LineInput:
    """Plain line input (stdin not a terminal, or prompt_toolkit unavailable): `> ` then one line per Enter."""

    def __init__(self, fd: int | None = None) -> None:
        self.fd = sys.stdin.fileno() if fd is None else fd
        self._buffer = b""
        self._eof = False
        self._waiter: asyncio.Future[str] | None = None

    async def read(self) -> str:
        return await self._line(PROMPT)

    async def ask(self, question: str) -> str:
        return await self._line(question)

    async def _line(self, prompt: str) -> str:
        _write_raw(prompt)
        if b"\n" in self._buffer or self._eof:
            return self._take()
        loop = asyncio.get_running_loop()
        self._waiter = waiter = loop.create_future()

        def readable() -> None:
            try:
                chunk = os.read(self.fd, 65536)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            self._eof = self._eof or not chunk
            self._buffer += chunk
            if (b"\n" in self._buffer or self._eof) and not waiter.done():
                try:
                    waiter.set_result(self._take())
                except EOFError as exc:
                    waiter.set_exception(exc)

        loop.add_reader(self.fd, readable)
        try:
            line: str = await waiter
            return line
        finally:
            loop.remove_reader(self.fd)
            self._waiter = None

    def _take(self) -> str:
        line, newline, rest = self._buffer.partition(b"\n")
        if not newline and not line and self._eof:
            raise EOFError
        self._buffer = rest
        return line.decode("utf-8", errors="replace").rstrip("\r")

    def interrupt(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            _write_raw("\n")
            self._waiter.set_exception(PromptInterrupted())

    def print_above(self, text: str) -> None:
        _write(text)


def _write_raw(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def make_input(
    complete: Callable[[str], Sequence[Candidate]],
    on_first_render: Callable[[], None],
    before_draw: Callable[[], None] = lambda: None,
) -> Input:
    """prompt_toolkit when stdin and stdout are terminals and it starts; else plain lines. `before_draw` runs
    before the first prompt is drawn (it clears the idle prompt `early.py` put up)."""
    if sys.stdin.isatty() and sys.stdout.isatty() and os.environ.get("TERM") != "dumb":
        try:
            return PromptInput(complete, on_first_render, before_draw)
        except Exception:  # no usable terminal after all: plain lines still work
            pass
    before_draw()
    on_first_render()
    return LineInput()
