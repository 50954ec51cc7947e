"""What command hooks leave running, end to end: `ram` headless against the loopback fake LLM, with a user-level
PreToolUse hook (user hooks need no trust) that starts background processes, found under /proc.

A hook's children that outlive it (`sleep 900 &`, `setsid sleep 901 &`) live on through the session, as a Bash
command's background jobs do (a hook may start a server on purpose), and are stopped when ram exits, named in the one
line ram prints on stderr. A hook killed at its timeout takes what it started outside its process group with it.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
from pathlib import Path

from ..fakes.fake_llm import FakeLLMServer, RecordedRequest, Reply, ToolCall
from ..processes import pids_with, wait_until
from ..test_cli import ECHO, assert_no_traceback, env_for, ram


def user_hooks(*commands: str, timeout: float | None = None) -> None:
    """PreToolUse hooks for every tool, in the user's settings file."""
    path = Path(os.environ["XDG_CONFIG_HOME"]) / "react-agent-mini" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    hooks = [{"type": "command", "command": c, **({"timeout": timeout} if timeout else {})} for c in commands]
    path.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "", "hooks": hooks}]}}))


def kill_all(*names: str) -> None:
    for name in names:
        for pid in pids_with(name):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_what_a_hook_leaves_running_lives_through_the_session_and_is_stopped_when_ram_exits(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    mark = f"{os.getpid()}7"
    plain, own_session = f"sleep 900.{mark}", f"sleep 901.{mark}"
    user_hooks(f"{plain} >/dev/null 2>&1 & setsid {own_session} >/dev/null 2>&1 &")
    alive: list[tuple[list[int], list[int]]] = []

    def model(request: RecordedRequest) -> Reply:
        alive.append((pids_with(plain), pids_with(own_session)))
        return Reply(tool_calls=[ToolCall("Echo", {"message": "hooked"})]) if len(alive) == 1 else Reply(text="done")

    fake_llm.set_responder(model)
    try:
        proc = ram(*ECHO, "go", env=env_for("openai", fake_llm), cwd=tmp_path)
        assert_no_traceback(proc)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == "done\n"
        assert alive[0] == ([], [])
        (first,), (second,) = alive[1]  # the hook ran before the Echo call, and both outlived it
        assert pids_with(plain) == [] and pids_with(own_session) == []
        stopped = [line for line in proc.stderr.splitlines() if line.startswith("stopped ")]
        assert stopped == [
            f"stopped 2 background processes that commands left running: {plain} (pid {first}), "
            f"{own_session} (pid {second})"
        ]
    finally:
        kill_all(plain, own_session)


def test_a_hook_killed_at_its_timeout_takes_what_it_started_in_a_new_session_with_it(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    mark = f"{os.getpid()}8"
    escaped, hung = f"sleep 902.{mark}", f"sleep 903.{mark}"
    user_hooks(f"setsid {escaped} >/dev/null 2>&1 & exec {hung}", timeout=1)
    gone_after_the_timeout: list[bool] = []

    def model(request: RecordedRequest) -> Reply:
        if len(fake_llm.requests) == 1:
            return Reply(tool_calls=[ToolCall("Echo", {"message": "after the hook"})])
        # the hook has timed out (before the Echo ran): what it started is being stopped
        gone_after_the_timeout.append(wait_until(lambda: not pids_with(escaped) and not pids_with(hung), 30))
        return Reply(text="done")

    fake_llm.set_responder(model)
    try:
        proc = ram(*ECHO, "go", env=env_for("openai", fake_llm), cwd=tmp_path)
        assert_no_traceback(proc)
        assert proc.returncode == 0, proc.stderr
        assert gone_after_the_timeout == [True]  # stopped at the timeout, not only at exit
        assert "stopped " not in proc.stderr  # so nothing was left for the exit
    finally:
        kill_all(escaped, hung)
