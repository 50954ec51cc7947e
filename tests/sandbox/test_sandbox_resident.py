"""The resident sandbox (issue 28, item 3): a session's foreground Bash commands fork inside one running bwrap while
its mounts stay what they were, instead of one bwrap each. The real bwrap, the real helper, real files; the Bash
tool itself, and `ram` end to end against the loopback fake model.

Each behaviour that differs from one bwrap per command is shown against `RAM_SANDBOX_RESIDENT=0` (the old way), so
the tests can fail: commands share the namespace (a background job of one call is seen by the next); a mount point
replaced from outside makes a new resident rather than lift the mask; a command that kills the helper loses only
its own exit status; the helper's descriptors cannot be opened by a command.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import uuid
from pathlib import Path

import msgspec
import pytest

from react_agent_mini.permissions.rules import RuleSet
from react_agent_mini.sandbox import resident, runtime
from react_agent_mini.sandbox.handle import Sandbox
from react_agent_mini.sandbox.settings import SandboxConfig
from react_agent_mini.tools.base import ToolContext, ToolOutput
from react_agent_mini.tools.builtin.bash import BACKGROUND_NOTE, BashTool

from ..fakes.fake_llm import FakeLLMServer, Reply
from ..processes import pids_with, wait_until
from ..test_cli import assert_no_traceback, env_for, ram
from ..tools.test_tool_defects import bash, tool_results

PYTHON = resident.interpreter()
"""A Python the sandbox shows (this test run's may be a virtualenv under /tmp, which the sandbox replaces)."""


def sandboxed(ws: Path, deny: tuple[str, ...] = ()) -> BashTool:
    rules = RuleSet()
    for text in deny:
        rules.add("deny", text, "cli")
    return BashTool(Sandbox(SandboxConfig(mode="workspace-write", explicit=True), ws, lambda: rules))


async def run(tool: BashTool, ctx: ToolContext, command: str, **extra: object) -> ToolOutput:
    out = await tool.call(tool.validate({"command": command, **extra}), ctx)
    return msgspec.structs.replace(out, details=None)


def residents(tool: BashTool) -> list[resident.Resident]:
    assert tool.sandbox is not None
    jail, _ = tool.sandbox.runtime()
    assert isinstance(jail, runtime.Runtime)
    return jail._residents


@pytest.fixture(params=[True, False], ids=["resident", "per-command"])
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    monkeypatch.setattr(runtime, "RESIDENT", request.param)
    return bool(request.param)


async def test_commands_share_one_sandbox_and_a_background_job_is_seen_by_the_next_call(
    tmp_path: Path, mode: bool
) -> None:
    name = f"sleep 309.{uuid.uuid4().int % 10**9:09d}"
    tool, ctx = sandboxed(tmp_path), ToolContext(cwd=tmp_path)
    try:
        out = await run(tool, ctx, f"{name} >/dev/null 2>&1 & echo $!")
        assert not out.is_error, out.content
        inner = out.content.strip()
        seen = await run(tool, ctx, f"kill -0 {inner} && echo alive || echo gone")
        # in one namespace the next call sees the job; in a namespace each, that pid is nobody (or bash itself)
        assert ("alive" in seen.content) == mode, seen.content
        assert len(residents(tool)) == (1 if mode else 0)
        assert wait_until(lambda: len(pids_with(name)) == 1)
    finally:
        for pid in pids_with(name):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, 9)


async def test_a_server_one_call_started_answers_the_next_calls_request_on_loopback(tmp_path: Path, mode: bool) -> None:
    """No network, but one loopback for the session's commands: what `server &` then `curl localhost` needs."""
    tool, ctx = sandboxed(tmp_path), ToolContext(cwd=tmp_path)
    (tmp_path / "page.txt").write_text("served\n")
    serve = f"{PYTHON} -m http.server 8123 --bind 127.0.0.1 >/dev/null 2>&1 &"
    fetch = (
        "import sys, time, urllib.request\n"
        "for _ in range(int(sys.argv[1])):\n"
        "    try: sys.exit(print(urllib.request.urlopen('http://127.0.0.1:8123/page.txt').read().decode(), end=''))\n"
        "    except OSError: time.sleep(0.1)\n"
        "print('unreachable')\n"
    )
    (tmp_path / "fetch.py").write_text(fetch)
    try:
        assert not (await run(tool, ctx, serve)).is_error
        out = await run(tool, ctx, f"{PYTHON} fetch.py {300 if mode else 5}")  # 30 s to start, 0.5 s to fail
        assert out.content == ("served" if mode else "unreachable"), out.content
    finally:
        for pid in pids_with("http.server 8123 --bind"):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, 9)


async def test_output_exit_codes_cwd_and_environment_are_those_of_the_old_way(
    tmp_path: Path, mode: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAM_RESIDENT_TEST", "seen")
    tool, ctx = sandboxed(tmp_path), ToolContext(cwd=tmp_path)
    assert await run(tool, ctx, "echo out; echo err >&2; exit 3") == ToolOutput(
        "out\n\nstderr:\nerr\n\nExit code 3", is_error=True
    )
    assert await run(tool, ctx, "mkdir -p sub && cd sub && echo $0 $RAM_RESIDENT_TEST") == ToolOutput("/bin/bash seen")
    assert await run(tool, ctx, "pwd; touch $TMPDIR/x && echo wrote") == ToolOutput(f"{tmp_path}/sub\nwrote")
    assert await run(tool, ctx, "ls /proc/$$/fd") == ToolOutput("0\n1\n2")  # nothing of ram's or the helper's
    # stdin is empty, and SIGPIPE kills a writer whose reader left (the helper's Python ignores it; bash must not)
    assert await run(tool, ctx, "cat; yes | head -n 2; echo ${PIPESTATUS[0]}") == ToolOutput("y\ny\n141")
    out = await run(tool, ctx, "touch /usr/ram-resident-test 2>&1 || echo refused")
    assert "Read-only file system" in out.content and "refused" in out.content


async def test_a_new_deny_rule_or_a_file_it_comes_to_cover_starts_a_new_resident(tmp_path: Path) -> None:
    rules = RuleSet()
    tool = BashTool(Sandbox(SandboxConfig(mode="workspace-write", explicit=True), tmp_path, lambda: rules))
    ctx = ToolContext(cwd=tmp_path)
    (tmp_path / "notes.txt").write_text("visible\n")
    assert await run(tool, ctx, "cat notes.txt") == ToolOutput("visible")
    first = residents(tool)[-1]
    assert await run(tool, ctx, "cat notes.txt") == ToolOutput("visible")
    assert residents(tool)[-1] is first
    rules.add("deny", "Read(notes.txt)", "cli")
    assert "visible" not in (await run(tool, ctx, "cat notes.txt 2>&1")).content
    second = residents(tool)[-1]
    assert second is not first and not first.alive
    rules.add("deny", "Read(.env)", "cli")
    await run(tool, ctx, "true")
    (tmp_path / ".env").write_text("SECRET=1\n")
    assert "SECRET" not in (await run(tool, ctx, "cat .env 2>&1")).content
    assert residents(tool)[-1] is not second


async def test_commands_run_at_once_share_one_resident_and_each_gets_its_own_end(tmp_path: Path) -> None:
    """Subagents run Bash at once: they wait for one resident rather than start one each, and a command that ends
    at once (its end read with its start) is not waited for forever."""
    tool, ctx = sandboxed(tmp_path), ToolContext(cwd=tmp_path)
    commands = [f"echo {n}; exit {n % 3}" if n % 2 else f"echo {n}" for n in range(24)]
    outs = await asyncio.gather(*(run(tool, ctx, command) for command in commands))
    for n, out in enumerate(outs):
        code = n % 3 if n % 2 else 0
        assert out == ToolOutput(f"{n}" + (f"\n\nExit code {code}" if code else ""), is_error=bool(code)), n
    assert len(residents(tool)) == 1


@pytest.mark.parametrize("replace", ["rename", "unlink"])
async def test_a_hidden_file_replaced_from_outside_stays_hidden(tmp_path: Path, replace: str) -> None:
    """An editor saves by renaming a new file onto the old one: the kernel then detaches the mask mounted on the old
    one in the running sandbox. The next command must not see the new text."""
    secret = tmp_path / ".env"
    secret.write_text("OLD=1\n")
    tool, ctx = sandboxed(tmp_path, deny=("Read(.env)",)), ToolContext(cwd=tmp_path)
    assert "OLD" not in (await run(tool, ctx, "cat .env 2>&1")).content
    first = residents(tool)[-1]
    if replace == "rename":
        (tmp_path / ".env.new").write_text("NEW=1\n")
        os.replace(tmp_path / ".env.new", secret)
    else:
        secret.unlink()
        secret.write_text("NEW=1\n")
    out = await run(tool, ctx, "cat .env 2>&1; echo done")
    assert "NEW" not in out.content and "done" in out.content, out.content
    assert residents(tool)[-1] is not first and not first.serves(first.plan)


async def test_a_command_running_when_its_resident_goes_stale_still_gets_its_result(tmp_path: Path) -> None:
    secret = tmp_path / ".env"
    secret.write_text("OLD=1\n")
    tool, ctx = sandboxed(tmp_path, deny=("Read(.env)",)), ToolContext(cwd=tmp_path)
    long = asyncio.ensure_future(run(tool, ctx, "sleep 1; echo slow; exit 4"))
    await asyncio.sleep(0.3)
    first = residents(tool)[-1]
    (tmp_path / ".env.new").write_text("NEW=1\n")
    os.replace(tmp_path / ".env.new", secret)
    assert (await run(tool, ctx, "cat .env 2>&1 | grep -c NEW")).content.startswith("0")
    assert residents(tool)[-1] is not first
    assert await long == ToolOutput("slow\n\nExit code 4", is_error=True)  # reported by the stale helper
    assert await asyncio.to_thread(wait_until, first.ended)  # let go once its command ended


async def test_a_command_that_kills_the_helper_loses_only_its_own_exit_status(tmp_path: Path) -> None:
    tool, ctx = sandboxed(tmp_path), ToolContext(cwd=tmp_path)
    assert await run(tool, ctx, "echo one") == ToolOutput("one")
    first = residents(tool)[-1]
    out = await run(tool, ctx, "kill -9 $PPID; sleep 0.2; echo after")
    assert out.is_error and "after" in out.content
    assert "Sandbox: how the command ended is not known" in out.content, out.content
    assert not first.alive
    assert await run(tool, ctx, "echo two") == ToolOutput("two")
    assert residents(tool)[-1] is not first


async def test_a_command_cannot_open_the_helpers_descriptors_or_trace_it(tmp_path: Path) -> None:
    tool, ctx = sandboxed(tmp_path), ToolContext(cwd=tmp_path)
    attach = "import ctypes, sys; c = ctypes.CDLL(None, use_errno=True); print(c.ptrace(16, int(sys.argv[1]), 0, 0))"
    helper = "$PPID"  # the command's bash was forked by the helper
    looks = f"ls -l /proc/{helper}/fd/0 2>&1; cat /proc/{helper}/environ 2>&1"
    out = await run(tool, ctx, f"{looks}; {PYTHON} -c '{attach}' {helper}")
    lines = out.content.splitlines()
    assert "cannot read symbolic link '/proc/2/fd/0': Permission denied" in lines[0], out.content
    assert "cat: /proc/2/environ: Permission denied" in lines, out.content
    assert lines[-1] == "-1", out.content  # PTRACE_ATTACH refused
    mine = await run(tool, ctx, f"readlink /proc/$$/fd/0; {PYTHON} -c 'import os; print(os.getpid())'")
    assert mine.content.splitlines()[0] == "/dev/null"  # what the command may look at of its own


async def test_a_timeout_and_an_interruption_kill_the_command_and_leave_the_resident(tmp_path: Path) -> None:
    name = f"sleep 310.{uuid.uuid4().int % 10**9:09d}"
    tool, ctx = sandboxed(tmp_path), ToolContext(cwd=tmp_path)
    out = await run(tool, ctx, f"{name} & setsid {name}", timeout=1000)
    assert out.is_error and "Command timed out after 1000 ms; its process group was killed." in out.content
    assert wait_until(lambda: pids_with(name) == [])
    call = asyncio.ensure_future(run(tool, ctx, f"{name}; echo never"))
    assert await asyncio.to_thread(wait_until, lambda: len(pids_with(name)) == 2)  # bash -c and the sleep
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert await asyncio.to_thread(wait_until, lambda: pids_with(name) == [])
    assert await run(tool, ctx, "echo still") == ToolOutput("still")
    assert len(residents(tool)) == 1


async def test_where_no_helper_can_start_commands_get_a_bwrap_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(resident, "interpreter", lambda: "/nonexistent/python3")
    tool, ctx = sandboxed(tmp_path), ToolContext(cwd=tmp_path)
    for _ in range(3):
        assert await run(tool, ctx, "echo fine; touch made") == ToolOutput("fine")
    assert (tmp_path / "made").exists()
    assert residents(tool) == []
    assert tool.sandbox is not None
    jail, _ = tool.sandbox.runtime()
    assert isinstance(jail, runtime.Runtime) and jail._no_resident


def test_at_exit_ram_names_the_background_jobs_and_ends_the_sandbox(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    name = f"sleep 311.{uuid.uuid4().int % 10**9:09d}"
    ws = tmp_path / "ws"
    ws.mkdir()
    helpers: list[int] = []

    def later(request: object) -> Reply:
        found = [pid for pid in pids_with(resident.HELPER_NAME) if _under(pid, ram_pids())]  # bwrap's two too
        helpers.extend(pid for pid in found if not Path(f"/proc/{pid}/comm").read_text().startswith("bwrap"))
        return Reply(text="done")

    fake_llm.enqueue(Reply(tool_calls=[bash(f"{name} & echo started")]), Reply(tool_calls=[bash("echo again")]))
    fake_llm.set_responder(later)
    try:
        proc = ram("--permission-mode", "bypassPermissions", "go", env=env_for("openai", fake_llm), cwd=ws)
        assert_no_traceback(proc)
        assert proc.returncode == 0, proc.stderr
        assert tool_results(fake_llm.requests[-1]) == [f"started\n\n{BACKGROUND_NOTE}", "again"]
        assert f"stopped 1 background process that commands left running: {name} (pid " in proc.stderr
        assert wait_until(lambda: pids_with(name) == [])
        assert len(helpers) == 1  # one helper served both calls, and it is gone with ram
        assert wait_until(lambda: not os.path.exists(f"/proc/{helpers[0]}"))
    finally:
        for pid in pids_with(name):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, 9)


def ram_pids() -> set[int]:
    """The `ram` processes running under this test process."""
    return {pid for pid in pids_with("react_agent_mini") if _parent(pid) == os.getpid()}


def _parent(pid: int) -> int:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return 0
    return int(stat[stat.rindex(b")") + 2 :].split()[1])


def _under(pid: int, ancestors: set[int]) -> bool:
    while pid > 1:
        if pid in ancestors:
            return True
        pid = _parent(pid)
    return False
