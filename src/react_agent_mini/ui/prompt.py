"""Reading what the user types: prompt_toolkit on a terminal, plain lines otherwise.

Keys at the `> ` prompt (bound in `prompt_keys.py`):
- Enter sends; Esc then Enter (Alt+Enter in most terminals), or a `\\` at the end of the line, starts a new line;
  pasted text keeps its newlines (bracketed paste);
- Tab completes slash commands, skills, MCP prompts and `@` paths (the menu also opens while typing `/` or `@`);
- Up and Down walk the history, kept in `$XDG_DATA_HOME/react-agent-mini/history`; a grey suggestion from it
  is taken with the right arrow;
- Shift+Tab cycles the permission mode (default → acceptEdits → plan; `modes.py`), shown before `> `;
- Ctrl+C clears the line, or on an empty line reports an interrupt (the REPL exits on a second one within a
  second); Ctrl+D on an empty line exits.

A question with a fixed set of answers (a permission prompt's `[y/a/N]`, the trust question) is answered by one
key, no Enter (`ask_key`; Enter or Esc: the default, no).

`LineInput` is the fallback when prompt_toolkit cannot take the terminal (output is not a terminal, or it fails
to start): one line per Enter, read without blocking the event loop — questions included. Both raise
`PromptInterrupted` for Ctrl+C and `EOFError` at the end of input, never KeyboardInterrupt (which would escape the
event loop).
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .completion import Candidate
from .early import PLACEHOLDER, PROMPT
from .prompt_base import Input, PromptInterrupted, write_lines, write_raw

if TYPE_CHECKING:
    from .modes import ModeSwitch
    from .turn_keys import TurnKeys


class PromptInput:
    """prompt_toolkit input with history, completion and the key bindings above."""

    def __init__(
        self,
        complete: Callable[[str], Sequence[Candidate]],
        on_first_render: Callable[[], None],
        before_draw: Callable[[], None] = lambda: None,
        modes: ModeSwitch | None = None,
        typeahead: bytes = b"",
    ) -> None:
        # prompt_toolkit is loaded here, after the first frame (early.py), and by this frame rather than by
        # prompt_keys's own imports: typed keys show ~4 ms sooner so (benchmarks/repl_startup.py).
        import prompt_toolkit  # noqa: F401

        from .prompt_keys import answer_session, message_session

        self._on_first_render = on_first_render
        self._before_draw = before_draw
        self._modes = modes
        self._session: Any = message_session(complete, self._placeholder, modes.cycle if modes else lambda: None)
        self._session.app.after_render += self._rendered
        self._asker: Any = answer_session()
        self._typeahead = typeahead
        """Keys read before prompt_toolkit was up (`early/typed_line.py`), replayed at the first `read`."""

    def _placeholder(self) -> Any:
        # hidden in the last render of a prompt left with Ctrl+C or Ctrl+D, so it does not stay on screen
        done = self._session.app.is_done
        return [] if done else [("class:placeholder", PLACEHOLDER)]

    def _rendered(self, _app: Any) -> None:
        self._session.app.after_render -= self._rendered
        self._on_first_render()

    async def read(self) -> str:
        self._before_draw()
        if self._typeahead:  # replayed in this prompt only: no other (a permission question) can take them
            self._replay_after_first_render(self._typeahead)
            self._typeahead = b""
        text: str = await self._session.prompt_async(self._prompt_line, handle_sigint=False)
        return text

    def remember(self, line: str) -> None:
        self._session.history.append_string(line)

    def _replay_after_first_render(self, typed: bytes) -> None:
        """Feed `typed` to the prompt as keys once it is drawn: its first render starts loading the history (so
        that Up finds it), and what is called soon after that runs after the load and before any key read from
        the terminal (which were typed later)."""
        from prompt_toolkit.input.vt100_parser import Vt100Parser

        keys: list[Any] = []
        parser = Vt100Parser(keys.append)
        parser.feed(typed.decode("utf-8", errors="replace"))
        parser.flush()
        app = self._session.app

        def feed() -> None:
            app.key_processor.feed_multiple(keys)
            app.key_processor.process_keys()

        def rendered(_app: Any) -> None:
            app.after_render -= rendered
            asyncio.get_running_loop().call_soon(feed)

        app.after_render += rendered

    def _prompt_line(self) -> list[tuple[str, str]]:
        label = self._modes.label() if self._modes is not None else ""
        mode = [("class:mode", f"{label} ")] if label else []
        return [*mode, ("class:prompt", PROMPT)]

    async def ask(self, question: str) -> str:
        self._before_draw()
        text: str = await self._asker.prompt_async([("class:question", question)], handle_sigint=False)
        return text

    async def ask_key(self, question: str, keys: str) -> str:
        from .prompt_keys import key_question
        from .terminal import drop_typeahead

        self._before_draw()
        drop_typeahead()  # one key answers: never one typed before the question was there to read
        answer: str = await key_question(question, keys).run_async(handle_sigint=False)
        return answer

    def interrupt(self) -> None:
        from prompt_toolkit.application import get_app_or_none

        app = get_app_or_none()
        future = app.future if app is not None and app.is_running else None
        if app is not None and future is not None and not future.done():
            app.exit(exception=PromptInterrupted())

    def turn_keys(self, on_escape: Callable[[], None]) -> TurnKeys | None:
        from .turn_keys import TurnKeys

        return TurnKeys(self._session.app.input, on_escape)

    def print_above(self, text: str) -> None:
        from prompt_toolkit.application import get_app_or_none, run_in_terminal

        app = get_app_or_none()
        if app is None or not app.is_running:
            write_lines(text)
            return
        run_in_terminal(lambda: write_lines(text))


class LineInput:
    """Plain line input (stdin not a terminal, or prompt_toolkit unavailable): `> ` then one line per Enter."""

    def __init__(self, fd: int | None = None, typeahead: bytes = b"") -> None:
        self.fd = sys.stdin.fileno() if fd is None else fd
        self._buffer = typeahead.replace(b"\r", b"\n")
        self._eof = False
        self._waiter: asyncio.Future[str] | None = None

    async def read(self) -> str:
        return await self._line(PROMPT)

    async def ask(self, question: str) -> str:
        return await self._line(question)

    async def ask_key(self, question: str, keys: str) -> str:
        return await self._line(question)  # no keys without a terminal: a line, as `ask` reads

    async def _line(self, prompt: str) -> str:
        write_raw(prompt)
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

    def remember(self, line: str) -> None:
        pass  # no history without a terminal

    def interrupt(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            write_raw("\n")
            self._waiter.set_exception(PromptInterrupted())

    def turn_keys(self, on_escape: Callable[[], None]) -> TurnKeys | None:
        return None  # no raw keys without a terminal: Ctrl+C interrupts

    def print_above(self, text: str) -> None:
        write_lines(text)


def make_input(
    complete: Callable[[str], Sequence[Candidate]],
    on_first_render: Callable[[], None],
    before_draw: Callable[[], None] = lambda: None,
    modes: ModeSwitch | None = None,
    typeahead: bytes = b"",
) -> Input:
    """prompt_toolkit when stdin and stdout are terminals and it starts; else plain lines. `before_draw` runs
    before the first prompt is drawn (it clears the idle prompt `early.py` put up); `typeahead`: keys read before
    (`early/typed_line.py`), which the first prompt gets as typed."""
    if sys.stdin.isatty() and sys.stdout.isatty() and os.environ.get("TERM") != "dumb":
        try:
            return PromptInput(complete, on_first_render, before_draw, modes, typeahead)
        except Exception:  # no usable terminal after all: plain lines still work
            pass
    before_draw()
    on_first_render()
    return LineInput(typeahead=typeahead)
