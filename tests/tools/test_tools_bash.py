"""Bash tool: real bash subprocesses in tmp_path — output layout, exit status, cwd persistence, process-group
kills on timeout and cancellation, background jobs, output caps."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import uuid
from pathlib import Path

import msgspec
import pytest

from react_agent_mini.abort import Aborted, AbortSignal
from react_agent_mini.tools.base import ToolContext, ToolInputError, ToolOutput
from react_agent_mini.tools.builtin.bash import (
    BACKGROUND_NOTE,
    MAX_TIMEOUT_MS,
    NO_OUTPUT,
    OUTPUT_LIMIT,
    BashArgs,
    BashTool,
)
from react_agent_mini.tools.builtin.bash_common import OutputCapture

from ..processes import pids_with


def plain(out: ToolOutput) -> ToolOutput:
    """`out` without its data (`ToolOutput.details`): what these tests compare is the text the model reads."""
    return msgspec.structs.replace(out, details=None)


TOOL = BashTool()


async def run(ctx: ToolContext, command: str, **extra: object) -> ToolOutput:
    return await TOOL.call(TOOL.validate({"command": command, **extra}), ctx)


def marker() -> str:
    """A unique `sleep` duration, so /proc tells our processes apart from any other test's."""
    return f"300.{uuid.uuid4().int % 10**9:09d}"


async def wait_for_pids(text: str, count: int = 1) -> list[int]:
    for _ in range(500):
        found = pids_with(text)
        if len(found) >= count:
            return found
        await asyncio.sleep(0.01)
    raise AssertionError(f"no process with {text!r} appeared")


def kill_all(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path)


async def test_echo_returns_stdout(ctx: ToolContext) -> None:
    out = await run(ctx, "echo hello")
    assert plain(out) == ToolOutput("hello")


async def test_stderr_follows_stdout_after_a_blank_line(ctx: ToolContext) -> None:
    out = await run(ctx, "echo out; echo err >&2")
    assert out.content == "out\n\nstderr:\nerr"
    assert not out.is_error
    only_err = await run(ctx, "echo oops >&2")
    assert only_err.content == "stderr:\noops"


async def test_empty_output_is_marked(ctx: ToolContext) -> None:
    assert (await run(ctx, "true")).content == NO_OUTPUT


async def test_nonzero_exit_is_an_error_with_the_code(ctx: ToolContext) -> None:
    out = await run(ctx, "echo partial; exit 3")
    assert out.is_error
    assert out.content == "partial\n\nExit code 3"


async def test_exit_zero_inside_the_command_returns_normally(ctx: ToolContext) -> None:
    out = await run(ctx, "echo before; exit 0; echo after")
    assert plain(out) == ToolOutput("before")


async def test_killed_by_signal(ctx: ToolContext) -> None:
    out = await run(ctx, "kill -9 $$")
    assert out.is_error
    assert "Killed by signal SIGKILL" in out.content


async def test_cwd_persists_but_shell_variables_do_not(ctx: ToolContext, tmp_path: Path) -> None:
    await run(ctx, "mkdir sub && cd sub && FOO=bar && export BAZ=qux")
    out = await run(ctx, 'pwd; echo "[$FOO][$BAZ]"')
    assert out.content == f"{tmp_path.resolve() / 'sub'}\n[][]"
    assert ctx.shell.cwd == tmp_path.resolve() / "sub"


async def test_cwd_is_recorded_even_when_the_command_exits(ctx: ToolContext, tmp_path: Path) -> None:
    await run(ctx, "mkdir -p a/b && cd a/b && exit 4")
    assert (await run(ctx, "pwd")).content == str(tmp_path.resolve() / "a" / "b")


async def test_cwd_is_recorded_even_if_the_command_redefines_pwd(ctx: ToolContext, tmp_path: Path) -> None:
    await run(ctx, "pwd() { echo fake; }; mkdir x && cd x")
    assert ctx.shell.cwd == tmp_path.resolve() / "x"


async def test_cd_outside_the_workspace_resets_to_the_root(ctx: ToolContext, tmp_path: Path) -> None:
    out = await run(ctx, "cd / && echo moved")
    assert out.content == f"moved\n\nShell cwd was reset to {tmp_path}"
    assert ctx.shell.cwd is None
    assert (await run(ctx, "pwd")).content == str(tmp_path.resolve())


async def test_cwd_deleted_by_the_command_resets(ctx: ToolContext, tmp_path: Path) -> None:
    out = await run(ctx, "mkdir gone && cd gone && rmdir ../gone")
    assert f"Shell cwd was reset to {tmp_path}" in out.content
    assert (await run(ctx, "pwd")).content == str(tmp_path.resolve())


async def test_remembered_cwd_removed_between_calls_resets(ctx: ToolContext, tmp_path: Path) -> None:
    await run(ctx, "mkdir later && cd later")
    (tmp_path / "later").rmdir()
    out = await run(ctx, "pwd")
    assert out.content == f"{tmp_path.resolve()}\n\nShell cwd was reset to {tmp_path}"


async def test_uses_bash_not_shell_and_disables_pagers(ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHELL", "/bin/sh")
    out = await run(ctx, 'test -n "$BASH_VERSION" && echo "$PAGER $GIT_PAGER $GIT_TERMINAL_PROMPT"')
    assert plain(out) == ToolOutput("cat cat 0")


async def test_stdin_is_empty(ctx: ToolContext) -> None:
    assert (await run(ctx, "cat")).content == NO_OUTPUT
    assert (await run(ctx, "read line || echo eof")).content == "eof"


async def test_multiline_script_with_heredoc(ctx: ToolContext, tmp_path: Path) -> None:
    script = (
        "cat > notes.txt <<'EOF'\nfirst $HOME\nsecond\nEOF\n"
        + 'for i in 1 2; do\n  echo "n$i"\ndone\nwc -l < notes.txt'
    )
    out = await run(ctx, script)
    assert out.content == "n1\nn2\n2"
    assert (tmp_path / "notes.txt").read_text() == "first $HOME\nsecond\n"


async def test_error_line_numbers_match_the_command(ctx: ToolContext) -> None:
    out = await run(ctx, "echo ok\nno-such-command-xyz")
    assert out.is_error
    assert "line 2: no-such-command-xyz: command not found" in out.content
    assert "Exit code 127" in out.content


async def test_invalid_utf8_is_replaced(ctx: ToolContext) -> None:
    out = await run(ctx, r"printf 'a\xffb'")
    assert out.content == "a\ufffdb"


async def test_a_command_that_cannot_start_is_an_error_value(ctx: ToolContext) -> None:
    with pytest.raises(ToolInputError, match="command: contains a NUL character"):  # refused before it runs
        TOOL.validate({"command": "echo a\0b"})
    out = await TOOL.call(BashArgs(command="echo a\0b"), ctx)  # and the tool never raises on one either
    assert out.is_error
    assert out.content.startswith("Could not start bash:")


async def test_large_output_keeps_head_and_tail(ctx: ToolContext) -> None:
    out = await run(ctx, "printf START; head -c 200000 /dev/zero | tr '\\0' x; printf END")
    total = 200_008
    assert out.content.startswith("START")
    assert out.content.endswith("END")
    assert f"\n[... {total - OUTPUT_LIMIT} characters (0 lines) omitted ...]\n" in out.content
    assert out.content.count("x") == OUTPUT_LIMIT - len("STARTEND")


async def test_large_stderr_is_capped_separately(ctx: ToolContext) -> None:
    out = await run(ctx, "echo small; head -c 100000 /dev/zero | tr '\\0' y >&2")
    assert out.content.startswith("small\n\nstderr:\n")
    assert f"[... {100_000 - OUTPUT_LIMIT} characters (0 lines) omitted ...]" in out.content


def test_capture_memory_stays_bounded_and_decodes_split_characters() -> None:
    capture = OutputCapture(limit=100)
    for _ in range(10_000):
        capture.feed(b"0123456789")
        assert capture._head_len + capture._tail_len <= 50 + 2 * 50 + 10
    capture.feed("é".encode()[:1])
    capture.feed("é".encode()[1:])
    capture.finish()
    text = capture.text()
    assert text.startswith("0123456789" * 5 + "\n[... 99901 characters (0 lines) omitted ...]\n")
    assert text.endswith("é")
    assert capture.total == 100_001


def test_timeout_is_clamped_and_must_be_positive() -> None:
    assert TOOL.validate({"command": "true", "timeout": 10**9}).timeout == MAX_TIMEOUT_MS
    assert TOOL.validate({"command": "true", "timeout": "5000"}).timeout == 5000
    assert TOOL.validate({"command": "true"}).timeout == 120_000
    with pytest.raises(ToolInputError, match="timeout"):
        TOOL.validate({"command": "true", "timeout": 0})
    with pytest.raises(ToolInputError, match="command"):
        TOOL.validate({"command": ""})
    schema = TOOL.input_schema()
    assert schema["required"] == ["command"]
    assert set(schema["properties"]) == {"command", "timeout", "description", "run_in_background"}


async def test_timeout_kills_the_whole_process_group(ctx: ToolContext) -> None:
    mark = marker()
    out = await run(ctx, f"echo started; sleep {mark} & sleep {mark}1", timeout=500)
    assert out.is_error
    assert out.content == "started\n\nCommand timed out after 500 ms; its process group was killed."
    assert pids_with(mark) == []


async def test_timeout_escalates_to_sigkill_when_sigterm_is_ignored(ctx: ToolContext) -> None:
    mark = marker()
    # Ignored signals are inherited across exec, so the sleeps ignore SIGTERM too.
    out = await run(ctx, f"trap '' TERM; sleep {mark} & sleep {mark}1", timeout=300)
    assert "timed out after 300 ms" in out.content
    assert pids_with(mark) == []


async def test_cancellation_kills_the_group_and_reraises(ctx: ToolContext) -> None:
    mark = marker()
    task = asyncio.create_task(run(ctx, f"sleep {mark} & sleep {mark}1"))
    try:
        await wait_for_pids(f"sleep {mark}1")
    finally:
        task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert pids_with(mark) == []


async def test_abort_through_the_signal_kills_the_group(ctx: ToolContext) -> None:
    mark = marker()
    signal_ = AbortSignal()
    task = asyncio.create_task(signal_.race(run(ctx, f"sleep {mark} & sleep {mark}1")))
    try:
        await wait_for_pids(f"sleep {mark}1")
    finally:
        signal_.abort("user interrupt")
    with pytest.raises(Aborted):
        await task
    assert pids_with(mark) == []


async def test_background_job_is_left_running_and_noted(ctx: ToolContext) -> None:
    mark = marker()
    out = await run(ctx, f"sleep {mark} & echo started")
    try:
        assert plain(out) == ToolOutput(f"started\n\n{BACKGROUND_NOTE}")
        assert len(pids_with(f"sleep {mark}")) == 1  # not killed: the model may want its server
    finally:
        kill_all(pids_with(f"sleep {mark}"))
    await asyncio.sleep(0.05)  # let the draining pipe reader see EOF before the loop closes


async def test_background_job_with_redirected_output_needs_no_note(ctx: ToolContext) -> None:
    mark = marker()
    out = await run(ctx, f"sleep {mark} >/dev/null 2>&1 & echo started")
    try:
        assert plain(out) == ToolOutput("started")
    finally:
        kill_all(pids_with(f"sleep {mark}"))


def test_status_line_shows_the_command() -> None:
    assert TOOL.describe_call({"command": "pytest -q", "description": "Run tests"}) == "pytest -q"
