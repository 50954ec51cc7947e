"""How fast the REPL is ready to type in, and how fast the first answer comes after that.

`ram` with no task runs in a real pseudo-terminal (120×40) whose cursor-position requests are answered as a
terminal emulator does. Measured over N runs each (after one discarded warm-up run):

* launch → prompt ready: until the idle prompt is drawn (target ≤ 300 ms median). `ram` draws it before it
  imports prompt_toolkit and asyncio, with the keyboard's echo off, so keys typed from then on wait in the
  terminal and land in the prompt as typed (see `src/react_agent_mini/ui/early.py`);
* launch → typed keys shown: `hello` is typed as soon as the prompt is drawn; until prompt_toolkit shows it;
* launch → first request: then Enter; until that request reaches the loopback fake LLM server (the session is
  built in the background meanwhile, so this is not prompt + build);
* the same with the offline demo model (`QUERY_MOCK=1`), until its answer is on the screen.

Figures only, no pass/fail: shared machines are noisy, so compare medians and minimums, not single runs.
Run: `.venv/bin/python -m benchmarks.repl_startup [--runs N]` from the repo root.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import select
import signal
import struct
import sys
import tempfile
import termios
import time
from collections.abc import Mapping, Sequence

from tests.fakes.fake_llm import FakeLLMServer, Reply

from ._stats import line
from .startup import API_KEY, clean_env, ram_command

READY_TARGET = "target ≤ 300 ms"
PLACEHOLDER = b"Type a task"
CPR_REQUEST, CPR_ANSWER = b"\x1b[6n", b"\x1b[1;1R"


class Launch:
    """`ram` on a pseudo-terminal; `wait_for` reads until a marker shows up."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str], cwd: str) -> None:
        self.t0 = time.monotonic()
        pid, fd = pty.fork()
        if pid == 0:
            try:
                os.chdir(cwd)
                os.execve(argv[0], list(argv), dict(env))
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        self.out = b""

    def wait_for(self, marker: bytes, timeout: float = 30.0) -> float:
        """Seconds from launch until `marker` appeared in the output."""
        deadline = time.monotonic() + timeout
        while marker not in self.out:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{marker!r} did not appear: {self.out[-300:]!r}")
            if not self.pump(0.05):
                raise TimeoutError(f"the agent exited before {marker!r}: {self.out[-300:]!r}")
        return time.monotonic() - self.t0

    def pump(self, wait: float) -> bool:
        """Read what arrives within `wait` seconds, answering cursor-position requests; False once it exited."""
        ready, _, _ = select.select([self.fd], [], [], wait)
        if not ready:
            return True
        try:
            data = os.read(self.fd, 65536)
        except OSError:
            return False
        if CPR_REQUEST in data:
            os.write(self.fd, CPR_ANSWER * data.count(CPR_REQUEST))
        self.out += data
        return bool(data)

    def type(self, text: str) -> None:
        os.write(self.fd, text.encode())

    def close(self) -> None:
        try:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        os.close(self.fd)


Samples = list[float]


def measure(server: FakeLLMServer, runs: int, cwd: str) -> tuple[Samples, Samples, Samples, Samples, str]:
    """(prompt ready, keys shown, first request, mock answer on screen) samples, and the first failure if any."""
    argv = ram_command()
    if len(argv) > 1:  # `python -m react_agent_mini`: execve needs the interpreter's path first
        argv = [sys.executable, *argv[1:]]
    fake_env = clean_env({"OPENAI_API_KEY": API_KEY, "OPENAI_BASE_URL": server.openai_base_url})
    mock_env = clean_env({"QUERY_MOCK": "1"})
    ready: list[float] = []
    echoed: list[float] = []
    first: list[float] = []
    mock: list[float] = []
    failure = ""
    for i in range(runs + 1):
        seen = len(server.requests)
        server.enqueue(Reply(text="Hi there.", chunk_size=16))
        launch = Launch(argv, fake_env, cwd)
        try:
            up = launch.wait_for(PLACEHOLDER)
            launch.type("hello")
            shown = launch.wait_for(b"hello")
            launch.type("\r")
            deadline = time.monotonic() + 30
            while len(server.requests) == seen and time.monotonic() < deadline:
                launch.pump(0.002)  # a terminal answers prompt_toolkit's cursor-position requests meanwhile
            if len(server.requests) == seen:
                raise TimeoutError("no request reached the fake server")
            if i > 0:
                ready.append(up)
                echoed.append(shown)
                first.append(server.requests[seen].received_at - launch.t0)
        except TimeoutError as exc:
            failure = failure or str(exc)
        finally:
            launch.close()
        launch = Launch(argv, mock_env, cwd)
        try:
            launch.wait_for(PLACEHOLDER)
            launch.type("echo ping\r")
            answered = launch.wait_for(b"Echo reply: ping")
            if i > 0:
                mock.append(answered)
        except TimeoutError as exc:
            failure = failure or str(exc)
        finally:
            launch.close()
    return ready, echoed, first, mock, failure


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.repl_startup", description=(__doc__ or "").partition("\n")[0]
    )
    parser.add_argument("--runs", type=int, default=15, metavar="N", help="measured runs per figure (default 15)")
    args = parser.parse_args(argv)
    runs = max(1, args.runs)
    with tempfile.TemporaryDirectory(prefix="ram-bench-") as cwd, FakeLLMServer(api_key=API_KEY) as server:
        ready, echoed, first, mock, failure = measure(server, runs, cwd)
    version = sys.version.split()[0]
    print(f"repl startup: {' '.join(ram_command())} in a pty  (python {version}, {runs} runs + 1 warm-up)")
    print()
    print(line("launch → prompt ready", ready, READY_TARGET))
    print(line("launch → typed keys shown", echoed, "'hello' typed when the prompt is drawn"))
    print(line("launch → first request", first, "Enter pressed when it shows"))
    print(line("launch → mock answer on screen", mock, "'echo ping', offline demo model"))
    if failure:
        print(f"  ! some runs failed: {failure}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
