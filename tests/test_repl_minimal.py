"""The minimal interactive loop in a real pseudo-terminal (the full REPL has its own issue)."""

from __future__ import annotations

import os
import pty
import select
import sys
import time


def read_until(fd: int, marker: str, timeout: float = 20.0) -> str:
    out = ""
    deadline = time.monotonic() + timeout
    while marker not in out and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                out += os.read(fd, 4096).decode(errors="replace")
            except OSError:
                break
    assert marker in out, out
    return out


def test_type_a_task_see_the_answer_then_leave_with_ctrl_d() -> None:
    pid, fd = pty.fork()
    if pid == 0:  # the child: the agent on a terminal, with the offline model
        os.environ["QUERY_MOCK"] = "1"
        os.execv(sys.executable, [sys.executable, "-m", "react_agent_mini"])
    read_until(fd, "> ")
    os.write(fd, b"echo hi there\n")
    answer = read_until(fd, "out tokens")  # the answer, then the status line after the turn
    assert "[tool] Echo: hi there" in answer and "Echo reply: hi there" in answer and "ctx ~" in answer
    os.write(fd, b"/nope\n")
    assert "unknown command /nope" in read_until(fd, "/help lists")
    os.write(fd, b"/status\n")
    report = read_until(fd, "model calls:")
    assert "model: mock:mock-scripted" in report and "context: ~" in report
    os.write(fd, b"/compact\n")
    read_until(fd, "Nothing to compact yet")
    os.write(fd, b"/clear\n")
    read_until(fd, "conversation cleared")
    os.write(fd, b"\x04")
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
