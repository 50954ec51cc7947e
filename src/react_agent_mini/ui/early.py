"""The REPL's first frame, drawn before anything heavy is imported.

prompt_toolkit and asyncio take ~150–250 ms to import. So that the prompt is there to type in at once, `ram`
draws the banner and an idle `> ` prompt with plain escape sequences first, and switches the terminal's echo and
line buffering off: keys typed from then on wait in the terminal's input queue, unechoed, until prompt_toolkit
takes over the same line a moment later and reads them as typed. Nothing typed is lost and nothing scribbles
over the screen. Only `os`, `sys` and `termios` are used here.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PROMPT = "> "
PLACEHOLDER = "Type a task, or /help · Esc+Enter for a new line"
HINT = "/help for commands · Esc+Enter for a new line · Ctrl+C interrupts · Ctrl+D exits"


class EarlyFrame:
    """What `draw` did: the terminal settings to restore at exit (None if unchanged), and whether the idle
    prompt line is on screen (the cursor is then after `> `, and `hand_over` must run before prompt_toolkit)."""

    def __init__(self, saved_tty: list[Any] | None, prompt_drawn: bool) -> None:
        self.saved_tty = saved_tty
        self.prompt_drawn = prompt_drawn

    def restore(self) -> None:
        """Put the terminal back as it was (idempotent; the REPL does it too, this is for when it never ran)."""
        saved, self.saved_tty = self.saved_tty, None
        if saved is None:
            return
        try:
            import termios

            termios.tcsetattr(sys.stdin.fileno(), termios.TCSADRAIN, saved)
        except Exception:  # the terminal is gone: nothing to restore
            pass

    def hand_over(self) -> None:
        """Clear the idle prompt line and put the cursor at its start, where prompt_toolkit draws its own."""
        if self.prompt_drawn:
            self.prompt_drawn = False
            _write("\r\x1b[K")


def banner_lines(model: str, cwd: Path, version: str) -> tuple[str, str]:
    home = str(Path.home())
    where = str(cwd)
    where = "~" + where[len(home) :] if where == home or where.startswith(home + os.sep) else where
    return f"react-agent-mini {version} · {model} · {where}", HINT


def draw(model: str, cwd: Path, version: str, *, interactive: bool, signals: bool = True) -> EarlyFrame:
    """Print the banner; on a terminal (`interactive`), also quiet the keyboard and draw the idle prompt.
    `signals=False`: Ctrl+C is a key too, not SIGINT (for `early/typed_line.py`, which reads the keys)."""
    first, second = banner_lines(model, cwd, version)
    tty = sys.stdout.isatty()
    if tty:
        first, second = f"\x1b[1m{first}\x1b[0m", f"\x1b[2m{second}\x1b[0m"
    saved = _quiet_keyboard(signals) if interactive and tty else None
    idle = idle_line() if saved is not None else ""
    _write(f"{first}\n{second}\n\n{idle}")
    return EarlyFrame(saved, saved is not None)


def idle_line() -> str:
    """The empty prompt: `> ` and the placeholder, the cursor after `> ` (on the placeholder, as prompt_toolkit
    will show it)."""
    return f"\x1b[1m{PROMPT}\x1b[0m\x1b[38;5;244m{PLACEHOLDER}\x1b[0m\r\x1b[{len(PROMPT)}C"


def _quiet_keyboard(signals: bool = True) -> list[Any] | None:
    """Echo, line buffering and CR→LF translation off, as prompt_toolkit's raw mode will have them (the kernel
    translates a key when it arrives, not when it is read); Ctrl+C still interrupts unless not `signals`. The
    previous settings, or None if not a terminal."""
    try:
        import termios

        fd = sys.stdin.fileno()
        saved = termios.tcgetattr(fd)
        quiet: list[Any] = [list(item) if isinstance(item, list) else item for item in saved]
        quiet[0] = quiet[0] & ~termios.ICRNL  # keep Enter a CR, so Esc+Enter typed ahead stays a new line
        quiet[3] = quiet[3] & ~(termios.ECHO | termios.ICANON | (0 if signals else termios.ISIG))
        quiet[6][termios.VMIN], quiet[6][termios.VTIME] = 1, 0
        termios.tcsetattr(fd, termios.TCSANOW, quiet)
    except Exception:  # not a terminal after all, or no termios: the prompt simply comes with prompt_toolkit
        return None
    return saved


def _write(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()
