"""The REPL in a real pseudo-terminal, with the offline demo model; and the terminal driver the REPL tests share.

`Term` runs `python -m react_agent_mini ...` in a pty of 120×40, answers the cursor-position requests
prompt_toolkit sends (as a terminal emulator does), and matches text with ANSI escape sequences removed.
`read_until` is the older raw helper other pty tests use.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import signal
import struct
import sys
import termios
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType

CPR_REQUEST = b"\x1b[6n"
CPR_ANSWER = b"\x1b[1;1R"
ANSI = re.compile(r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][A-Za-z0-9]|\x1b[=>78]")
ROWS, COLS = 40, 120
AGENT = (sys.executable, "-m", "react_agent_mini")
"""How `Term` starts the agent unless told otherwise (the benchmarks start the `ram` script)."""


def read_until(fd: int, marker: str, timeout: float = 20.0) -> str:
    """Raw output (escape sequences included) up to `marker`; answers cursor-position requests on the way."""
    out = ""
    deadline = time.monotonic() + timeout
    while marker not in out and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                data = os.read(fd, 4096)
            except OSError:
                break
            if CPR_REQUEST in data:
                os.write(fd, CPR_ANSWER)
            out += data.decode(errors="replace")
    assert marker in out, out
    return out


def plain(text: str) -> str:
    """Terminal output as text: escape sequences removed, CRs dropped."""
    return ANSI.sub("", text).replace("\r", "")


class Term:
    """The agent on a pseudo-terminal."""

    def __init__(
        self,
        *args: str,
        env: Mapping[str, str],
        cwd: Path,
        program: Sequence[str] = (sys.executable, "-m", "react_agent_mini"),
    ) -> None:
        self.started = time.monotonic()
        """When it was launched (`time.monotonic()`, taken just before the fork)."""
        pid, fd = pty.fork()
        if pid == 0:  # the child: the agent (`program`, e.g. the `ram` script), with the pty as its terminal
            try:
                os.chdir(cwd)
                os.execve(program[0], [*program, *args], dict(env))
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
        self.raw = b""
        self.seen = 0
        """Characters of `text` already matched by `expect`."""
        self.status: int | None = None

    @property
    def text(self) -> str:
        return plain(self.raw.decode(errors="replace"))

    def _pump(self, wait: float) -> bool:
        """Read what is there within `wait` seconds; False at end of output."""
        ready, _, _ = select.select([self.fd], [], [], wait)
        if not ready:
            return True
        try:
            data = os.read(self.fd, 65536)
        except OSError:
            return False
        if not data:
            return False
        if CPR_REQUEST in data:
            os.write(self.fd, CPR_ANSWER * data.count(CPR_REQUEST))
        self.raw += data
        return True

    def expect(self, marker: str, timeout: float = 20.0) -> str:
        """Wait for `marker` after the last match; the text from there up to and including it."""
        deadline = time.monotonic() + timeout
        while True:
            at = self.text.find(marker, self.seen)
            if at >= 0:
                chunk = self.text[self.seen : at + len(marker)]
                self.seen = at + len(marker)
                return chunk
            if time.monotonic() > deadline or not self._pump(0.05):
                raise AssertionError(
                    f"{marker!r} did not appear; output after the last match:\n{self.text[self.seen :]}"
                )

    def screen(self) -> str:
        """What the terminal shows now (scrolled-off lines included), as a VT100 emulator draws the output:
        frames a live display redrew are gone, as they are for the user."""
        import pyte

        screen = pyte.HistoryScreen(COLS, ROWS, history=1000)
        stream = pyte.ByteStream(screen)
        stream.feed(self.raw)
        above = ["".join(char.data for char in line.values()) for line in screen.history.top]
        return "\n".join(line.rstrip() for line in [*above, *screen.display])

    def settle(self, seconds: float = 0.3) -> str:
        """Read for `seconds`; the text that came."""
        start = len(self.text)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and self._pump(0.05):
            pass
        return self.text[start:]

    def send(self, keys: str) -> None:
        os.write(self.fd, keys.encode())

    def line(self, text: str) -> None:
        """Type `text` and press Enter."""
        self.send(text + "\r")

    def prompt(self) -> None:
        """Wait for the input prompt (its placeholder shows when the line is empty)."""
        self.expect("Type a task, or /help")

    def wait(self, timeout: float = 20.0) -> int:
        """The exit code, once the process has ended (output is drained meanwhile)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            done, status = os.waitpid(self.pid, os.WNOHANG)
            if done:
                self.status = os.waitstatus_to_exitcode(status)
                while self._pump(0.05):
                    if not select.select([self.fd], [], [], 0)[0]:
                        break
                return self.status
            self._pump(0.05)
        raise AssertionError(f"the agent did not exit; output:\n{self.text[-3000:]}")

    def kill(self) -> None:
        if self.status is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
                _, status = os.waitpid(self.pid, 0)
                self.status = os.waitstatus_to_exitcode(status)
            except (ProcessLookupError, ChildProcessError):
                pass

    def __enter__(self) -> Term:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.kill()
        os.close(self.fd)


def mock_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "RAM_"))}
    env["QUERY_MOCK"] = "1"
    return env


def test_type_a_task_see_the_answer_then_leave_with_ctrl_d(tmp_path: Path) -> None:
    with Term(env=mock_env(tmp_path), cwd=tmp_path) as term:
        term.expect("mock:mock-scripted")  # the banner names the model
        term.prompt()
        term.line("echo hi there")
        answer = term.expect("out tokens")  # the answer, then the status line after the turn
        assert "● Echo hi there" in answer and "Echo reply: hi there" in answer and "ctx ~" in answer
        term.prompt()
        term.line("/nope")
        assert "unknown command /nope" in term.expect("/help lists the commands")
        term.line("/status")
        report = term.expect("session ")
        assert "mock:mock-scripted" in report and "context      ~" in report and "no price known" in report
        term.line("/compact")
        term.expect("Nothing to compact yet")
        term.line("/clear")
        term.expect("conversation cleared")
        term.prompt()
        term.send("\x04")
        assert term.wait() == 0
        assert "Traceback" not in term.text


def test_the_early_frame_quiets_the_keyboard_and_gives_it_back(tmp_path: Path) -> None:
    """`ram` draws the idle prompt before the REPL's imports, with echo and line editing off so typed keys wait;
    whatever happens next, the terminal gets its settings back."""
    script = (
        "import sys, termios\n"
        "from pathlib import Path\n"
        "from react_agent_mini.ui import early\n"
        "before = termios.tcgetattr(0)\n"
        "frame = early.draw('mock:m', Path('/tmp'), '0', interactive=True)\n"
        "during = termios.tcgetattr(0)\n"
        "frame.restore(); frame.restore()\n"
        "after = termios.tcgetattr(0)\n"
        "print()\n"
        "print('echo-during', bool(during[3] & termios.ECHO), 'icanon-during', bool(during[3] & termios.ICANON))\n"
        "print('restored', after == before, 'drawn', frame.prompt_drawn)\n"
    )
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(sys.executable, [sys.executable, "-c", script], dict(os.environ))
    out = b""
    while True:
        try:
            data = os.read(fd, 4096)
        except OSError:
            break
        if not data:
            break
        out += data
    os.waitpid(pid, 0)
    os.close(fd)
    text = plain(out.decode(errors="replace"))
    assert "> Type a task, or /help" in text  # the idle prompt, drawn at once
    assert "echo-during False icanon-during False" in text
    assert "restored True drawn True" in text
