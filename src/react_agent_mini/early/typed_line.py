"""The REPL's first line, read and echoed while the rest of ram loads (`repl.py`).

prompt_toolkit takes ~150–250 ms to import. Until it is up, this reads the keyboard itself, in the idle prompt
`ui/early.py` drew: plain characters and Backspace are echoed as prompt_toolkit would show them, and Enter on a
line `sendable` accepts ends it there (the line is then the first message, whose request can go at once). Anything
else — a control key, Esc and the sequences it starts, Tab, a line too long for one screen row, a character that
is not plain text, Enter on a line that is a command — ends the reading, and every byte read so far is handed to
prompt_toolkit as typed-ahead keys: it replays them, so the line it shows is the one typed, with its own editing,
completion and commands. The same happens when `wake` becomes readable (the rest has loaded) in mid-line.

`LineEcho` is the editing, a pure state machine over bytes; `read_line` runs it on the terminal. Only the standard
library.
"""

from __future__ import annotations

import codecs
import os
import select
import unicodedata
from collections.abc import Callable

from ..ui.early import PROMPT, idle_line

ENTER = 0x0D
BACKSPACES = (0x7F, 0x08)


class LineEcho:
    """The line typed so far and what to write to the screen for each byte (`feed`)."""

    def __init__(self, sendable: Callable[[str], bool], columns: int) -> None:
        self.sendable = sendable
        self.columns = columns
        self.text = ""
        self.keys = bytearray()
        """Every byte fed until the line ended (Enter included when it ended on one)."""
        self.rest = bytearray()
        """Bytes fed after the line was submitted: keys typed ahead for the next prompt."""
        self.done = False
        self.submitted = False
        self._decoder = codecs.getincrementaldecoder("utf-8")()

    def feed(self, data: bytes) -> str:
        """Take the bytes read; what to write to the screen."""
        out: list[str] = []
        for at, byte in enumerate(data):
            if self.done:  # the rest of what was read: after a message, for the next prompt; else with the line
                (self.rest if self.submitted else self.keys).extend(data[at:])
                break
            self.keys.append(byte)
            out.append(self._key(byte))
        return "".join(out)

    def _key(self, byte: int) -> str:
        if byte == ENTER:
            self.done = True
            self.submitted = bool(self.text.strip()) and self.sendable(self.text)
            return "\r\n" if self.submitted else ""
        if byte in BACKSPACES and not self._decoder.getstate()[0]:
            if not self.text:
                return ""
            self.text = self.text[:-1]
            return "\r\x1b[K" + (idle_line() if not self.text else f"\x1b[1m{PROMPT}\x1b[0m{self.text}\x1b[K")
        if byte < 0x20:  # Esc, Tab, Ctrl+anything: prompt_toolkit's
            self.done = True
            return ""
        try:
            chars = self._decoder.decode(bytes([byte]))
        except UnicodeDecodeError:
            self.done = True
            return ""
        shown: list[str] = []
        for char in chars:
            if not plain(char) or len(PROMPT) + len(self.text) + 2 >= self.columns:
                self.done = True
                return "".join(shown)
            if not self.text:
                shown.append("\x1b[K")  # the placeholder goes with the first character, as prompt_toolkit's
            self.text += char
            shown.append(char)
        return "".join(shown)


def plain(char: str) -> bool:
    """A character shown as one cell: printable (no control, format or separator but the space), not wide, not
    combining."""
    return (
        char.isprintable() and unicodedata.category(char)[0] != "M" and unicodedata.east_asian_width(char) not in "WF"
    )


def read_line(fd: int, wake: int, echo: LineEcho, write: Callable[[str], None]) -> LineEcho:
    """Feed what is typed on `fd` to `echo`, writing what it shows, until the line ends or `wake` is readable."""
    while not echo.done:
        ready, _, _ = select.select([fd, wake], [], [])
        if fd in ready:
            try:
                data = os.read(fd, 1024)
            except OSError:
                data = b""
            if not data:  # the terminal went away: prompt_toolkit will see that too
                echo.done = True
                break
            shown = echo.feed(data)
            if shown:
                write(shown)
        elif wake in ready:
            break
    return echo
