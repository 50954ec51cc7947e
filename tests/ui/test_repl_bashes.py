"""`/bashes` in the REPL: the background shells the model started (Bash with `run_in_background`), their status, and
`/bashes kill ID`; what still runs is stopped when the REPL exits, with one line naming it.

`ram` runs in a real pseudo-terminal against the loopback fake LLM server; the screen is read through a VT100
emulator, so what is asserted is what the user sees.
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

from ..fakes.fake_llm import FakeLLMServer, Reply, ToolCall
from ..processes import pids_with, wait_until
from .test_repl_pty import ram_term

BYPASS = ("--permission-mode", "bypassPermissions")


def background(command: str) -> ToolCall:
    return ToolCall("Bash", {"command": command, "run_in_background": True})


def test_slash_bashes_lists_the_background_shells_and_stops_one(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    server, watcher = f"sleep 318.{os.getpid()}5", f"sleep 319.{os.getpid()}5"
    fake_llm.enqueue(Reply(tool_calls=[background(server), background(watcher)]), Reply(text="both started"))
    try:
        with ram_term(fake_llm, tmp_path, *BYPASS) as term:
            term.prompt()
            term.line("/bashes")
            term.expect("no background shells in this session")
            term.line("start them")
            term.expect("both started")
            term.expect("out tokens")
            term.prompt()
            assert wait_until(lambda: len(pids_with(server)) == 1 and len(pids_with(watcher)) == 1, 30)
            term.line("/bashes")
            term.expect(watcher)
            shown = [line.strip() for line in term.screen().splitlines()]
            at = next(i for i, line in enumerate(shown) if line == "background shells (2 running):")
            first, second = shown[at + 1].split(), shown[at + 2].split()
            assert first[:3] == ["bash_1", "running", "·"] and first[-2:] == server.split()
            assert second[:3] == ["bash_2", "running", "·"] and second[-2:] == watcher.split()
            term.line("/bashes kill bash_1")
            term.expect(f"bash_1 killed: {server}")
            assert wait_until(lambda: not pids_with(server), 30)
            assert len(pids_with(watcher)) == 1
            term.line("/bashes")
            term.expect("background shells (1 running):")
            term.expect(watcher)
            shown = [line.strip() for line in term.screen().splitlines()]
            at = max(i for i, line in enumerate(shown) if line == "background shells (1 running):")
            assert shown[at + 1].split() == ["bash_1", "killed", *server.split()]
            term.line("/bashes kill bash_9")
            term.expect("No background shell has the ID 'bash_9'")
            term.line("/bashes stop")
            term.expect("usage: /bashes [kill ID]")
            pid = pids_with(watcher)[0]
            term.send("\x04")
            assert term.wait() == 0
        assert pids_with(watcher) == []
        assert f"stopped 1 background process that commands left running: {watcher} (pid {pid})" in term.text
        assert "Traceback" not in term.text
    finally:
        for name in (server, watcher):
            for leftover in pids_with(name):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(leftover, signal.SIGKILL)
