"""Bash with `run_in_background`, BashOutput and KillShell, end to end: `ram` headless against the loopback fake LLM,
with real bash processes found under /proc. The call returns at once and the turn goes on; BashOutput reads what is new
since the last read (a filter keeps only the lines it matches); KillShell stops the command; output is kept bounded;
and what still runs when ram exits is stopped, in the one line ram prints on stderr. Both with the OS sandbox (where it
works, the default) and without it.

No wall-clock assumptions: a command prints only once a file the test writes exists, and says so by writing a file
back; the fake model waits for that file (generously) before it asks for the output.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ..fakes.fake_llm import FakeLLMServer, RecordedRequest, Reply, ToolCall
from ..processes import pids_with, wait_until
from ..test_cli import ECHO, assert_no_traceback, env_for, ram
from .test_tool_defects import tool_results

SANDBOX = [pytest.param((), id="sandbox-default"), pytest.param(("--sandbox", "off"), id="sandbox-off")]
WAIT = 30.0
"""Seconds the fake model waits for a command to have printed (it takes milliseconds)."""
STAMP = re.compile(r"\n\n<timestamp>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z</timestamp>$")


def background(command: str) -> ToolCall:
    return ToolCall("Bash", {"command": command, "run_in_background": True, "description": "Run in the background"})


def without_stamp(result: str) -> str:
    """A BashOutput result without its closing timestamp (checked to be there)."""
    assert STAMP.search(result), result
    return STAMP.sub("", result)


@contextlib.contextmanager
def killed_afterwards(*names: str) -> Iterator[None]:
    """Whatever happens in the test, no process whose command line holds one of `names` outlives it."""
    try:
        yield
    finally:
        for name in names:
            for pid in pids_with(name):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)


def tool_named(request: RecordedRequest, name: str) -> dict[str, Any]:
    """The JSON Schema of tool `name` as a request offered it (OpenAI's wire)."""
    for tool in request.body["tools"]:
        if tool["function"]["name"] == name:
            schema: dict[str, Any] = tool["function"]["parameters"]
            return schema
    raise AssertionError(f"{name} was not offered")


@pytest.mark.parametrize("flags", SANDBOX)
def test_a_background_command_returns_at_once_and_is_stopped_when_ram_exits(
    flags: tuple[str, ...], fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    name = f"sleep 318.{os.getpid()}{len(flags)}1"
    alive: list[list[int]] = []

    def model(request: RecordedRequest) -> Reply:
        if len(alive) == 1:  # the call has returned; the command may still be on its way (bwrap, then bash, then sleep)
            wait_until(lambda: pids_with(name), WAIT)
        alive.append(pids_with(name))
        if len(alive) == 1:
            return Reply(tool_calls=[background(name)])
        if len(alive) == 2:
            return Reply(tool_calls=[ToolCall("Echo", {"message": "the turn goes on"})])
        return Reply(text="done")

    fake_llm.set_responder(model)
    with killed_afterwards(name):
        env = env_for("openai", fake_llm, ALLOW_WRITE="1", PYTHONWARNINGS="default")
        proc = ram(*ECHO, *flags, "start it", env=env, cwd=tmp_path)
        assert_no_traceback(proc)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == "done\n"
        assert "Warning" not in proc.stderr  # bash was reaped once stopped, not dropped still running
        assert alive[0] == [] and len(alive[1]) == 1 and alive[2] == alive[1]  # it ran on while the turn went on
        started, echoed = tool_results(fake_llm.requests[-1])
        assert started == (
            'Command running in background with ID: bash_1. Read its new output with BashOutput (bash_id "bash_1"); '
            'stop it with KillShell (shell_id "bash_1"). It is stopped when the session ends.'
        )
        assert echoed == "the turn goes on"
        assert pids_with(name) == []
        stopped = [line for line in proc.stderr.splitlines() if line.startswith("stopped ")]
        assert stopped == [f"stopped 1 background process that commands left running: {name} (pid {alive[1][0]})"]
        # what the model is told: Bash's new field, and the two tools, with Claude Code's field names
        first = fake_llm.requests[0]
        assert tool_named(first, "Bash")["properties"]["run_in_background"]["type"] == "boolean"
        assert tool_named(first, "Bash")["required"] == ["command"]
        reader = tool_named(first, "BashOutput")
        assert set(reader["properties"]) == {"bash_id", "filter"} and reader["required"] == ["bash_id"]
        killer = tool_named(first, "KillShell")
        assert set(killer["properties"]) == {"shell_id"} and killer["required"] == ["shell_id"]


@pytest.mark.parametrize("flags", SANDBOX)
def test_bash_output_reads_what_is_new_and_kill_shell_stops_the_command(
    flags: tuple[str, ...], fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    mark = f"{os.getpid()}{len(flags)}2"
    rest = f"sleep 319.{mark}"
    script = (
        "".join(f"until [ -e go{i} ]; do sleep 0.05; done; echo out{i}; echo err{i} >&2; : > said{i}; " for i in (1, 2))
        + f"exec {rest}"
    )
    seen: dict[str, Any] = {}
    replies = iter(
        [
            Reply(tool_calls=[background(script)]),
            Reply(tool_calls=[ToolCall("BashOutput", {"bash_id": "bash_1"})]),
            Reply(tool_calls=[ToolCall("BashOutput", {"bash_id": "bash_1"})]),  # nothing new
            Reply(tool_calls=[ToolCall("BashOutput", {"bash_id": "bash_1", "filter": "^out"})]),
            Reply(tool_calls=[ToolCall("KillShell", {"shell_id": "bash_1"})]),
            Reply(tool_calls=[ToolCall("BashOutput", {"bash_id": "bash_1"})]),
            Reply(text="done"),
        ]
    )
    step = 0

    def model(request: RecordedRequest) -> Reply:
        nonlocal step
        step += 1
        if step in (2, 4):  # let the command print its next lines, and wait until it has
            number = 1 if step == 2 else 2
            (tmp_path / f"go{number}").touch()
            seen[f"said{number}"] = wait_until(lambda: (tmp_path / f"said{number}").exists(), WAIT)
        if step == 5:
            seen["before kill"] = wait_until(lambda: pids_with(rest), WAIT)
        if step == 6:
            seen["after kill"] = pids_with(rest)
        return next(replies)

    fake_llm.set_responder(model)
    with killed_afterwards(rest):
        # only Bash is allowed: BashOutput and KillShell need no permission of their own
        proc = ram(*flags, "--allowed-tools", "Bash", "watch it", env=env_for("openai", fake_llm), cwd=tmp_path)
        assert_no_traceback(proc)
        assert proc.returncode == 0, proc.stderr
        assert seen == {"said1": True, "said2": True, "before kill": True, "after kill": []}
        started, first, again, filtered, killed, last = tool_results(fake_llm.requests[-1])
        assert started.startswith("Command running in background with ID: bash_1.")
        assert without_stamp(first) == (
            "<status>running</status>\n\n<stdout>\nout1\n</stdout>\n\n<stderr>\nerr1\n</stderr>"
        )
        assert without_stamp(again) == "<status>running</status>"
        assert without_stamp(filtered) == "<status>running</status>\n\n<stdout>\nout2\n</stdout>"  # err2 is gone
        assert killed == f"Successfully killed shell: bash_1 ({script[:59]}…)"
        assert re.fullmatch(r"<status>killed</status>\n\n<exit_code>(143|137)</exit_code>", without_stamp(last))
        assert "stopped " not in proc.stderr  # nothing was left for the exit


def test_output_between_reads_is_bounded_and_bad_reads_are_one_line_errors(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    flood = f"yes x | tr -d '\\n' | head -c 200000; echo; echo end  # flood {os.getpid()}"
    fake_llm.enqueue(Reply(tool_calls=[background(flood)]))

    def model(request: RecordedRequest) -> Reply:
        assert wait_until(lambda: not pids_with(f"# flood {os.getpid()}"), WAIT)  # it has exited
        fake_llm.set_responder(None)
        fake_llm.enqueue(Reply(text="read"))
        return Reply(
            tool_calls=[
                ToolCall("BashOutput", {"bash_id": "bash_1"}),
                ToolCall("BashOutput", {"bash_id": "bash_1", "filter": "("}),
                ToolCall("BashOutput", {"bash_id": "bash_7"}),
                ToolCall("KillShell", {"shell_id": "bash_7"}),
            ]
        )

    fake_llm.set_responder(model)
    proc = ram("--sandbox", "off", "flood", env=env_for("openai", fake_llm, ALLOW_WRITE="1"), cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    started, output, bad_filter, unknown, unknown_kill = tool_results(fake_llm.requests[-1])
    assert started.startswith("Command running in background with ID: bash_1."), started
    head, tail = "x" * 15_000, "x" * (15_000 - 5)
    assert without_stamp(output) == (
        f"<status>completed</status>\n\n<exit_code>0</exit_code>\n\n<stdout>\n{head}\n"
        f"[... 170005 characters (0 lines) omitted ...]\n{tail}\nend\n</stdout>"
    )
    assert bad_filter == (
        "Error: Invalid input for BashOutput: filter: not a valid regular expression (missing ), unterminated "
        "subpattern at position 0)"
    )
    assert unknown == (
        "Error: No background shell has the ID 'bash_7'; the shells of this session are: bash_1 (completed)."
    )
    assert unknown_kill == unknown


def test_a_filtered_read_keeps_an_unfinished_line_for_the_next_read(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    rest = f"sleep 320.{os.getpid()}3"
    script = (
        "printf 'tick 1\\ntoc\\ntic'; : > half; until [ -e go ]; do sleep 0.05; done; printf 'k 2\\n'; : > whole; "
        f"exec {rest}"
    )
    read = ToolCall("BashOutput", {"bash_id": "bash_1", "filter": "tick"})
    replies = iter([Reply(tool_calls=[background(script)]), Reply(tool_calls=[read]), Reply(tool_calls=[read])])
    step = 0

    def model(request: RecordedRequest) -> Reply:
        nonlocal step
        step += 1
        if step == 2:
            assert wait_until(lambda: (tmp_path / "half").exists(), WAIT)
        if step == 3:  # the rest of the line comes
            (tmp_path / "go").touch()
            assert wait_until(lambda: (tmp_path / "whole").exists(), WAIT)
        return next(replies, Reply(text="done"))

    fake_llm.set_responder(model)
    with killed_afterwards(rest):
        proc = ram("--sandbox", "off", "tick", env=env_for("openai", fake_llm, ALLOW_WRITE="1"), cwd=tmp_path)
        assert_no_traceback(proc)
        assert proc.returncode == 0, proc.stderr
        _, first, second = tool_results(fake_llm.requests[-1])
        assert without_stamp(first) == "<status>running</status>\n\n<stdout>\ntick 1\n</stdout>"  # `toc` is used up
        assert without_stamp(second) == "<status>running</status>\n\n<stdout>\ntick 2\n</stdout>"  # `tic` + `k 2`
