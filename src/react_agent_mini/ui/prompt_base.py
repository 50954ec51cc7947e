"""What the REPL's two inputs share (`prompt.PromptInput` on a terminal, `prompt.LineInput` otherwise): the `Input`
protocol, `PromptInterrupted`, and printing lines for the user without letting them steer the terminal.

Kept apart from both so that the prompt_toolkit side (`prompt_keys.py`) and the plain side need nothing of each
other; only `terminal_text` is imported here.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from ..terminal_text import visible

if TYPE_CHECKING:
    from .turn_keys import TurnKeys


class PromptInterrupted(Exception):
    """Ctrl+C while waiting for input."""


class Input(Protocol):
    async def read(self) -> str:
        """The next message (may hold newlines); PromptInterrupted on Ctrl+C, EOFError at the end."""
        ...

    async def ask(self, question: str) -> str:
        """One answer line after `question` (no history, no completion)."""
        ...

    async def ask_key(self, question: str, keys: str) -> str:
        """The answer to `question`: on a terminal one key of `keys` (a lowercase letter; "" for Enter or Esc, the
        default), else a line as `ask` reads it."""
        ...

    def remember(self, line: str) -> None:
        """Keep `line` in the prompt's history as if it had been typed there (the first message typed before the
        prompt was up)."""
        ...

    def interrupt(self) -> None:
        """Make a pending `read`/`ask` raise PromptInterrupted (a SIGINT arrived)."""
        ...

    def turn_keys(self, on_escape: Callable[[], None]) -> TurnKeys | None:
        """What watches the keyboard while a turn runs (Esc calls `on_escape`), on a terminal; else None."""
        ...

    def print_above(self, text: str) -> None:
        """Print `text` (complete lines) without disturbing a prompt being edited."""
        ...


def write_lines(text: str) -> None:
    """`text` on stdout as complete lines, its control characters made visible."""
    text = visible(text)  # warnings quote files and servers: nothing in them may steer the terminal
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    sys.stdout.flush()


def write_raw(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()
