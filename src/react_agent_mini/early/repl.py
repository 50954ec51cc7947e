"""The REPL's first request, on the wire as soon as its first line is typed.

When nothing configured can change the first request (`lane.knowable`: the same checks as a headless task's),
`ram` on a terminal draws the banner and the idle prompt at once, starts loading the REPL (prompt_toolkit, asyncio,
the session's modules) in a thread, and meanwhile reads the first line itself (`typed_line.py`). Enter on a plain
message sends its request there and then (`wire.py`), and the REPL, once loaded, runs that message as its first
turn: the session's first call takes the early answer (`providers.first_call`). If the REPL is loaded before Enter,
or the line turns out to be a command or not plain text, the keys read so far are handed to prompt_toolkit as
typed ahead, and everything goes on as without this module.
"""

from __future__ import annotations

import os
import sys
import threading

from ..providers import first_call
from .lane import knowable, put_on_wire, task_reason, unusual_flag

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

    from ..ui.early import EarlyFrame
    from .lane import Known
    from .typed_line import LineEcho

PROMPT_MODES = (None, "default")
"""Permission modes whose prompt is the plain `> ` the early frame draws (the others show a label before it; the
first request is the same in more: `lane.PLAIN_MODES`)."""
WARM = (
    "react_agent_mini.claude_flags",
    "react_agent_mini.config",
    "react_agent_mini.sandbox.settings",
    "react_agent_mini.trust.gate",
    "react_agent_mini.ui.repl",
    "react_agent_mini.ui.prompt_keys",
)
"""What the REPL imports before its prompt is up, loaded in the thread while the first line is typed."""
SWITCH_SECONDS = 0.0005
"""How long the loading thread may keep the interpreter while a key waits (Python's default: 5 ms)."""


class EarlyRepl:
    """What `start` did: the frame it drew, the keys to hand to prompt_toolkit, the first message if it was
    typed to its end (its request is then on the wire, or the reason it is not in `first_call.skipped`)."""

    __slots__ = ("frame", "keys", "message")

    def __init__(self, frame: EarlyFrame) -> None:
        self.frame = frame
        self.keys = b""
        """Typed ahead: the unfinished line's keys, or those typed after the first message's Enter."""
        self.message: str | None = None


def start(parser: argparse.ArgumentParser, args: argparse.Namespace) -> EarlyRepl | None:
    """Draw the REPL's first frame and read its first line while the REPL loads, when its first request is known
    but for that line; None (nothing drawn, nothing read) when it is not, or not on a terminal."""
    if not sys.stdout.isatty() or os.environ.get("TERM") == "dumb":
        return None
    try:
        if args.permission_mode not in PROMPT_MODES:
            first_call.skipped = f"--permission-mode {args.permission_mode}"
            return None
        flag = unusual_flag(parser, args)
        if flag:
            first_call.skipped = flag
            return None
        known = knowable(args, os.environ, repl=True)
    except Exception as exc:  # never a reason for the REPL to fail: it starts as without this module
        first_call.skipped = f"{type(exc).__name__}: {exc}"
        return None
    if isinstance(known, str):
        first_call.skipped = known
        return None
    from pathlib import Path

    from .. import __version__
    from ..ui import early

    endpoint = known.endpoint
    model = f"{endpoint.kind}:{endpoint.model}"
    frame = early.draw(model, Path.cwd().resolve(), __version__, interactive=True, signals=False)
    started = EarlyRepl(frame)
    if frame.saved_tty is not None:
        _first_line(started, known)
    return started


def _first_line(started: EarlyRepl, known: Known) -> None:
    """Read the first line while `WARM` loads; send its request if it was typed to its end."""
    wake_out, wake_in = os.pipe()
    loader = threading.Thread(target=_warm, args=(wake_in,), name="ram-warm", daemon=True)
    switching = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_SECONDS)  # a key or Enter gets the interpreter soon from the loading thread
    from . import body, wire  # noqa: F401 (what Enter needs: quicker now than beside the loading thread)

    loader.start()
    try:
        echo = _read(wake_out)
        if echo.submitted:
            started.message = echo.text
            started.frame.prompt_drawn = False  # the line stays: prompt_toolkit does not draw over it
            started.keys = bytes(echo.rest)
            _signals_on()  # Ctrl+C interrupts again while the REPL loads to run it
            _send(known, echo.text)
        else:
            started.keys = bytes(echo.keys)
        sys.setswitchinterval(switching)
        loader.join()
    finally:
        sys.setswitchinterval(switching)
        os.close(wake_out)


def _read(wake: int) -> LineEcho:
    """The first line (the frame has the terminal's signals off: Ctrl+C is a key, for prompt_toolkit)."""
    from ..ui.early import _write
    from .typed_line import LineEcho, read_line

    try:
        columns = os.get_terminal_size(sys.stdout.fileno()).columns
    except OSError:
        columns = 80
    echo = LineEcho(lambda text: not task_reason(text) and not text.startswith("!"), columns)
    try:
        read_line(sys.stdin.fileno(), wake, echo, _write)
    except (OSError, ValueError):  # the terminal went away: what was read goes on, and the REPL will see that too
        echo.done = True
    return echo


def _signals_on() -> None:
    import termios

    try:
        fd = sys.stdin.fileno()
        settings: list[Any] = termios.tcgetattr(fd)
        settings[3] |= termios.ISIG
        termios.tcsetattr(fd, termios.TCSANOW, settings)
    except (OSError, termios.error):  # the terminal is gone: the REPL will see that
        pass


def _send(known: Known, message: str) -> None:
    try:
        planned: tuple[str, dict[str, str], bytes] | str = known.request(message)
    except Exception as exc:  # the session's own request goes out instead
        planned = f"{type(exc).__name__}: {exc}"
    put_on_wire(planned)


def _warm(wake: int) -> None:
    import importlib

    try:
        for name in WARM:
            importlib.import_module(name)
    except Exception:  # the REPL imports them again, and reports what fails
        pass
    finally:
        os.write(wake, b".")
        os.close(wake)
