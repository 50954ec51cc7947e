"""The keyboard's terminal settings while the REPL runs: echo (and line editing) off between prompts and during
turns, so keys typed ahead neither scribble over the live display nor get lost (they reach the next prompt as
typed); keys typed ahead dropped before a permission prompt, so they can never answer it; and the settings found at
start put back at exit. Only `termios`, imported when used; a terminal that refuses is left as it is.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any


class TerminalModes:
    """The terminal settings to restore (`saved`: as `early.draw` found them, when it changed them already)."""

    def __init__(self, saved: list[Any] | None = None) -> None:
        self.saved = saved

    def quiet(self, *, keep_lines: bool) -> bool:
        """Turn the terminal's echo off, and with `keep_lines` False its line editing too (Ctrl+C still
        interrupts). True when changed; `restore` puts the original settings back."""
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
        if self.saved is None:
            self.saved = saved
        return True

    @contextlib.contextmanager
    def quiet_during_turn(self) -> Iterator[None]:
        """Echo off while a turn runs, so keys typed ahead do not scribble over the live display. With
        prompt_toolkit this is the terminal's state all along (see `Repl.main`); with plain lines, only during
        turns."""
        if self.saved is not None or not self.quiet(keep_lines=True):
            yield
            return
        try:
            yield
        finally:
            self.restore()

    def restore(self) -> None:
        saved, self.saved = self.saved, None
        if saved is None:
            return
        with contextlib.suppress(Exception):
            import termios

            termios.tcsetattr(sys.stdin.fileno(), termios.TCSADRAIN, saved)


def drop_typeahead() -> None:
    """Forget the keys typed but not read yet (before a permission prompt)."""
    with contextlib.suppress(Exception):  # best effort: a terminal that refuses is left as it is
        import termios

        if sys.stdin.isatty():
            termios.tcflush(sys.stdin.fileno(), termios.TCIFLUSH)
