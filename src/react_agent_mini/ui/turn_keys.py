"""The keyboard while a turn runs (prompt_toolkit input only): Esc interrupts the turn, as Claude Code's does; every
other key is kept, in order, for the next prompt (prompt_toolkit's typeahead), so typing ahead still works.

The terminal is in raw mode between prompts (`terminal.py`), so this reads stdin itself while the turn runs, through
prompt_toolkit's own VT100 parser. An Esc is told apart from the start of an escape sequence (an arrow key, Alt+key)
as prompt_toolkit tells it: a trailing ESC that nothing follows within `ESC_WAIT` seconds is the Esc key. An ESC
followed at once by more (Esc Enter typed ahead for a new line) is a key sequence, and kept for the prompt.

Before a permission prompt the watch pauses and forgets what it kept (as `terminal.drop_typeahead` does for the
keys still in the terminal), so keys typed ahead can never answer the question.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
from collections.abc import Callable, Iterator
from typing import Any

ESC_WAIT = 0.05
"""Seconds an ESC waits for the rest of a sequence before it counts as the Esc key (prompt_toolkit's ttimeoutlen
is 0.5 s; terminals send a sequence in one write, so much less is enough and the key feels immediate)."""


class TurnKeys:
    """Watches `fd` while a turn runs; `on_escape` is called for each Esc press."""

    def __init__(self, pt_input: Any, on_escape: Callable[[], None]) -> None:
        from prompt_toolkit.input.vt100_parser import Vt100Parser

        self._input = pt_input
        self._fd: int = pt_input.fileno()
        self._on_escape = on_escape
        self._kept: list[Any] = []
        self._flushing = False
        self._parser = Vt100Parser(self._key)
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._timer: asyncio.TimerHandle | None = None
        self._watching = False

    def _key(self, press: Any) -> None:
        from prompt_toolkit.keys import Keys

        if self._flushing and press.key == Keys.Escape:
            self._on_escape()
        elif press.key != Keys.CPRResponse:
            self._kept.append(press)

    def _readable(self) -> None:
        try:
            data = os.read(self._fd, 4096)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:  # the terminal went away: leave it to the prompt to find out
            self._stop_reading()
            return
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._parser.feed(self._decoder.decode(data))
        if data.endswith(b"\x1b"):
            self._timer = asyncio.get_running_loop().call_later(ESC_WAIT, self._flush)

    def _flush(self) -> None:
        self._timer = None
        self._flushing = True
        try:
            self._parser.flush()
        finally:
            self._flushing = False

    def start(self) -> None:
        if self._watching:
            return
        try:
            asyncio.get_running_loop().add_reader(self._fd, self._readable)
        except (OSError, ValueError, NotImplementedError):
            return
        self._watching = True

    def _stop_reading(self) -> None:
        if self._watching:
            self._watching = False
            with contextlib.suppress(Exception):
                asyncio.get_running_loop().remove_reader(self._fd)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def stop(self) -> None:
        """Stop watching; the keys kept go to the next prompt."""
        from prompt_toolkit.input.typeahead import store_typeahead

        self._stop_reading()
        self._parser.feed(self._decoder.decode(b"", final=True))
        self._parser.flush()  # a trailing ESC now is an Esc for the prompt, as prompt_toolkit would read it
        kept, self._kept = self._kept, []
        if kept:
            store_typeahead(self._input, kept)

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """Not watching while a question is asked; the keys kept so far are forgotten (never an answer)."""
        from prompt_toolkit.input.typeahead import clear_typeahead

        was = self._watching
        self._stop_reading()
        self._parser.reset()
        self._kept = []
        clear_typeahead(self._input)
        try:
            yield
        finally:
            if was:
                self.start()
