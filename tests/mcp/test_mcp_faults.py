"""Servers that misbehave: crash mid-call, die while idle, refuse to restart, never answer the handshake, exit at
start, are not installed, answer a megabyte, take too long, write garbage to stdout, start slowly. Each costs
one clear line (a warning or an error result), never a traceback, and the session goes on."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from react_agent_mini.mcp import McpError
from react_agent_mini.mcp.adapter import MAX_RESULT_CHARS, render_tool_result
from react_agent_mini.mcp.config import ServerConfig
from react_agent_mini.mcp.manager import McpManager
from react_agent_mini.mcp.transport import MAX_MESSAGE_BYTES
from react_agent_mini.tools.base import ToolContext, ToolOutput

from ..fakes.mcp_servers import support
from ..fakes.mcp_servers.rude_http import RudeHttp
from ..processes import pids_with, wait_until


@asynccontextmanager
async def connected(
    tmp_path: Path, configs: Mapping[str, ServerConfig], *, wait: float = 60, **options: float
) -> AsyncIterator[tuple[McpManager, list[str]]]:
    manager = McpManager(configs, log_dir=tmp_path / "logs", **options)
    manager.start()
    try:
        yield manager, await manager.wait_ready(wait)
    finally:
        await manager.aclose()


async def call(manager: McpManager, name: str, tmp_path: Path, **args: object) -> ToolOutput:
    tools = {t.name: t for t in manager.tools()}
    assert name in tools, f"{name} not among {list(tools)}; status: {manager.status()}"
    tool = tools[name]
    return await tool.call(tool.validate(args), ToolContext(cwd=tmp_path))


async def server_pid(manager: McpManager, tmp_path: Path, server: str = "toolbox") -> int:
    output = await call(manager, f"mcp__{server}__pid", tmp_path)
    assert not output.is_error, output.content
    return int(output.content)


def starts(log: Path) -> int:
    """How many times the server was spawned (each spawn writes one header line to its log)."""
    return log.read_text().count("starting MCP server") if log.exists() else 0


async def until(condition: Callable[[], bool]) -> None:
    import asyncio

    for _ in range(2000):  # a bound, not a timing assertion
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("condition never became true")


# ---- dying servers ----


async def test_crash_mid_call_restarts_without_repeating_a_write(tmp_path: Path) -> None:
    async with connected(tmp_path, {"toolbox": support.toolbox()}) as (manager, warnings):
        assert warnings == []
        first = await server_pid(manager, tmp_path)
        output = await call(manager, "mcp__toolbox__crash", tmp_path)
        assert output.is_error
        assert output.content == (
            "The MCP server toolbox stopped during the call to crash; it has been restarted, but the call was not "
            "repeated because it may already have had effects. Check, then call it again if needed."
        )
        second = await server_pid(manager, tmp_path)
        assert second != first and not support.alive(first)
        assert starts(tmp_path / "logs" / "toolbox.log") == 2


async def test_crash_mid_call_repeats_a_read_only_call(tmp_path: Path) -> None:
    marker = tmp_path / "crashed-once"
    async with connected(tmp_path, {"toolbox": support.toolbox()}) as (manager, _):
        first = await server_pid(manager, tmp_path)
        output = await call(manager, "mcp__toolbox__crash_once", tmp_path, marker=str(marker))
        assert not output.is_error
        assert marker.exists()  # it really did crash on the first try
        assert re.fullmatch(r"survived in \d+", output.content)
        assert int(output.content.split()[-1]) != first


async def test_a_call_refused_for_a_stale_tool_listing_is_resent_once(tmp_path: Path) -> None:
    marker = tmp_path / "refused-once"
    async with connected(tmp_path, {"toolbox": support.toolbox()}) as (manager, _):
        output = await call(manager, "mcp__toolbox__stale_once", tmp_path, marker=str(marker))
        assert marker.exists()  # the first call really was refused
        assert (output.content, output.is_error) == ("answered after a fresh listing", False)


async def test_a_server_asking_for_input_gets_a_clear_error(tmp_path: Path) -> None:
    async with connected(tmp_path, {"toolbox": support.toolbox()}) as (manager, _):
        output = await call(manager, "mcp__toolbox__ask_name", tmp_path)
        assert output.is_error
        assert output.content == (
            "The call to ask_name on the MCP server toolbox failed: the server asked for an answer from the user "
            "before answering, which react-agent-mini cannot provide"
        )
        assert (await call(manager, "mcp__toolbox__echo", tmp_path, message="still here")).content == (
            "echo: still here"
        )


async def test_a_server_defined_error_is_an_answer_not_a_dead_server(tmp_path: Path) -> None:
    # -32000 is also the SDK's own code for "connection closed": the server's message tells them apart
    async with connected(tmp_path, {"toolbox": support.toolbox()}) as (manager, _):
        pid = await server_pid(manager, tmp_path)
        output = await call(manager, "mcp__toolbox__refuse", tmp_path, message="record 42 does not exist")
        assert (output.content, output.is_error) == (
            "The call to refuse on the MCP server toolbox failed: record 42 does not exist (error -32000)",
            True,
        )
        assert await server_pid(manager, tmp_path) == pid  # not restarted
        assert starts(tmp_path / "logs" / "toolbox.log") == 1


async def test_a_server_that_exits_while_its_child_holds_stdout_is_noticed(tmp_path: Path) -> None:
    # the pipe never closes (the child has it), so only the exit itself can tell; the call must not wait out
    # its timeout, and the next call gets a fresh server
    async with connected(tmp_path, {"toolbox": support.toolbox()}, call_timeout=120) as (manager, _):
        first = await server_pid(manager, tmp_path)
        output = await call(manager, "mcp__toolbox__orphan_exit", tmp_path)
        assert output.is_error
        assert output.content.startswith("The MCP server toolbox stopped during the call to orphan_exit")
        second = await server_pid(manager, tmp_path)
        assert second != first
    # the child went with the old server's process group (a killed process may take a moment to go under load)
    assert wait_until(lambda: pids_with("sleep 120") == [])


async def test_a_message_over_the_size_limit_fails_its_call_at_once(tmp_path: Path) -> None:
    async with connected(tmp_path, {"toolbox": support.toolbox()}, call_timeout=120) as (manager, _):
        pid = await server_pid(manager, tmp_path)
        output = await call(manager, "mcp__toolbox__big", tmp_path, size=MAX_MESSAGE_BYTES + 1000)
        assert (output.content, output.is_error) == (
            "The call to big on the MCP server toolbox failed: the server's answer was over 32 MB, more than "
            "this client accepts (error -32603)",
            True,
        )
        assert await server_pid(manager, tmp_path) == pid  # the connection goes on
        assert (await call(manager, "mcp__toolbox__big", tmp_path, size=5)).content == "xxxxx"


async def test_a_tool_listed_twice_is_offered_once(tmp_path: Path) -> None:
    plain = support.stdio("plain", sys.executable, str(support.PLAIN), "--twice")
    async with connected(tmp_path, {"plain": plain}) as (manager, warnings):
        assert warnings == []
        assert [t.name for t in manager.tools()] == ["mcp__plain__shout"]


# ---- remote servers ----


async def test_a_remote_server_that_restarted_gets_a_new_session(tmp_path: Path) -> None:
    # server-everything forgets our session when it restarts and answers 400 "No valid session ID provided"
    command, port, env = support.everything_http()
    with support.http_server(command, port, env):
        async with connected(tmp_path, {"remote": support.remote("remote", f"http://127.0.0.1:{port}/mcp")}) as (
            manager,
            warnings,
        ):
            assert warnings == []
            first = await call(manager, "mcp__remote__echo", tmp_path, message="before")
            assert first.content == "Echo: before"
            with support.http_server(command, port, env):
                again = await call(manager, "mcp__remote__echo", tmp_path, message="after the restart")
                assert (again.content, again.is_error) == ("Echo: after the restart", False)
                assert manager.status()[0].state == "connected"


async def test_an_http_error_status_is_named(tmp_path: Path) -> None:
    with RudeHttp(status=401) as rude:
        async with connected(tmp_path, {"rude": support.remote("rude", rude.url)}) as (_, warnings):
            assert warnings == [
                f'MCP server "rude" failed to start: HTTP 401 Unauthorized from {rude.url} (check the server\'s '
                "headers in the MCP config); continuing without it"
            ]


async def test_a_failed_post_on_legacy_sse_is_named_at_once(tmp_path: Path) -> None:
    # the SDK stops sending after a failed POST and would leave the handshake waiting for its timeout
    with RudeHttp(status=500) as rude:
        old = support.remote("old", rude.url.replace("/mcp", "/sse"), "sse")
        async with connected(tmp_path, {"old": old}, connect_timeout=120) as (_, warnings):
            assert warnings == [
                f'MCP server "old" failed to start: HTTP 500 Internal Server Error from {rude.url[: -len("/mcp")]}'
                "/messages; continuing without it"
            ]


async def test_a_json_answer_over_the_size_limit_fails_its_call(tmp_path: Path) -> None:
    with RudeHttp(huge=MAX_MESSAGE_BYTES + 1000) as rude:
        async with connected(tmp_path, {"rude": support.remote("rude", rude.url)}) as (manager, _):
            output = await call(manager, "mcp__rude__hello", tmp_path)
            assert output.is_error
            limit = "the server's answer was over 32 MB, more than this client accepts"
            assert output.content.endswith(f"{limit} (error -32700)")
            assert rude.calls == 1


async def test_closing_does_not_wait_for_a_server_that_never_ends_the_session(tmp_path: Path) -> None:
    with RudeHttp(silent_delete=True) as rude:
        manager = McpManager({"rude": support.remote("rude", rude.url)}, log_dir=tmp_path / "logs")
        manager.start()
        assert await manager.wait_ready(30) == []
        assert (await call(manager, "mcp__rude__hello", tmp_path)).content == "hello"
        await asyncio.wait_for(manager.aclose(), 60)  # a bound on a hang (the SDK's own wait is 300 s)
        assert rude.deletes == 1


async def test_server_killed_while_idle_is_restarted_before_the_next_call(tmp_path: Path) -> None:
    async with connected(tmp_path, {"toolbox": support.toolbox()}) as (manager, _):
        pid = await server_pid(manager, tmp_path)
        os.kill(pid, signal.SIGKILL)
        await until(lambda: manager.status()[0].state == "failed")  # end of stream noticed
        assert manager.status()[0].detail.startswith("the server closed the connection")
        # known dead before the call, so even a tool that is not read-only runs (once, on the new process)
        output = await call(manager, "mcp__toolbox__write_note", tmp_path, text="after restart")
        assert (output.content, output.is_error) == ("noted: after restart", False)
        assert manager.status()[0].state == "connected"
        assert await server_pid(manager, tmp_path) != pid


async def test_a_failed_restart_is_reported_and_not_retried_at_once(tmp_path: Path) -> None:
    mark = tmp_path / "started"
    script = (
        f'if [ -e "{mark}" ]; then echo "cannot start twice" >&2; exit 4; fi; '
        f'touch "{mark}"; exec "{sys.executable}" "{support.TOOLBOX}"'
    )
    log = tmp_path / "logs" / "once.log"
    async with connected(tmp_path, {"once": support.stdio("once", "sh", "-c", script)}) as (manager, _):
        output = await call(manager, "mcp__once__crash", tmp_path)
        assert output.is_error
        assert output.content.startswith(
            "The MCP server once is not available: it stopped (the server closed the connection"
        )
        assert 'and restarting it failed: the server exited during startup; it said: "cannot start twice"' in (
            output.content
        )
        assert output.content.endswith(f"(log: {log}) (it stopped during the call to crash)")
        assert starts(log) == 2
        # right after a failed restart, calls fail at once instead of spawning again
        output = await call(manager, "mcp__once__echo", tmp_path, message="x")
        assert output.is_error and output.content.startswith("The MCP server once is not available: it stopped")
        assert starts(log) == 3 - 1
        # once the back-off has passed, the next call tries again (and fails the same way)
        manager.reconnect_backoff = 0
        output = await call(manager, "mcp__once__echo", tmp_path, message="x")
        assert output.is_error and starts(log) == 3
        assert manager.status()[0].state == "failed"


# ---- servers that never start ----


async def test_never_answering_the_handshake_times_out_and_is_stopped(tmp_path: Path) -> None:
    configs = {"hang": support.toolbox("hang", "--fault", "hang-init")}
    async with connected(tmp_path, configs, connect_timeout=8) as (manager, warnings):  # room to start under load
        assert len(warnings) == 1
        match = re.fullmatch(
            r'MCP server "hang" failed to start: no answer within 8 s; it said: "toolbox starting \(pid (\d+)\)" '
            r"\(log: .*/hang\.log\); continuing without it",
            warnings[0],
        )
        assert match, warnings[0]
        assert support.wait_until_gone([int(match.group(1))]) == []
        assert [s.state for s in manager.status()] == ["failed"]
        assert manager.tools() == []
        assert await manager.wait_ready(1) == []  # reported once


async def test_exit_at_start_shows_what_the_server_said(tmp_path: Path) -> None:
    configs = {"dies": support.toolbox("dies", "--fault", "exit-at-start")}
    async with connected(tmp_path, configs) as (_, warnings):
        assert warnings == [
            'MCP server "dies" failed to start: the server exited during startup; it said: "fatal: the database '
            f'password is wrong" (log: {tmp_path / "logs" / "dies.log"}); continuing without it'
        ]


async def test_missing_command_and_unreachable_url(tmp_path: Path) -> None:
    port = support.free_port()
    configs = {
        "nope": support.stdio("nope", "no-such-mcp-server-command"),
        "down": support.remote("down", f"http://127.0.0.1:{port}/mcp"),
    }
    async with connected(tmp_path, configs) as (manager, warnings):
        assert warnings == [
            'MCP server "nope" failed to start: command not found: no-such-mcp-server-command; continuing without it',
            f'MCP server "down" failed to start: cannot connect to http://127.0.0.1:{port}/mcp; continuing without it',
        ]
        assert manager.tools() == []
        with pytest.raises(McpError, match=r"^The MCP server nope is not connected: command not found"):
            await manager.read_resource("nope", "x://y")


async def test_slow_server_joins_when_ready(tmp_path: Path) -> None:
    barrier = tmp_path / "barrier"
    configs = {"slow": support.toolbox("slow", "--barrier", str(barrier), "--barrier-count", "2")}
    async with connected(tmp_path, configs, wait=0.5) as (manager, warnings):
        # it cannot be ready: it waits for a second server that only this test can stand in for
        assert warnings == ['MCP server "slow" is still starting after 0.5 s; continuing without it for now']
        assert manager.tools() == [] and manager.status()[0].state == "connecting"
        barrier.mkdir(exist_ok=True)
        (barrier / "stand-in").touch()
        assert await manager.wait_ready(60) == []
        assert "mcp__slow__echo" in [t.name for t in manager.tools()]
        output = await call(manager, "mcp__slow__echo", tmp_path, message="late")
        assert output.content == "echo: late"


# ---- bad answers ----


async def test_a_megabyte_result_is_cut_with_a_note(tmp_path: Path) -> None:
    async with connected(tmp_path, {"toolbox": support.toolbox()}) as (manager, _):
        output = await call(manager, "mcp__toolbox__big", tmp_path, size=1_000_000)
        note = f"\n\n[output truncated: the first {MAX_RESULT_CHARS} of 1000000 characters are shown]"
        assert not output.is_error
        assert output.content == "x" * MAX_RESULT_CHARS + note


async def test_a_call_that_takes_too_long_times_out_and_the_server_stays_usable(tmp_path: Path) -> None:
    async with connected(tmp_path, {"toolbox": support.toolbox()}) as (manager, _):
        pid = await server_pid(manager, tmp_path)
        manager.call_timeout = 1  # only for this call: a loaded machine must not fail the others
        output = await call(manager, "mcp__toolbox__sleep", tmp_path, seconds=30)
        manager.call_timeout = 60
        assert (output.content, output.is_error) == (
            "The call to sleep on the MCP server toolbox timed out after 1 s.",
            True,
        )
        assert (await call(manager, "mcp__toolbox__echo", tmp_path, message="still here")).content == "echo: still here"
        assert await server_pid(manager, tmp_path) == pid


async def test_garbage_on_stdout_does_not_break_the_connection(tmp_path: Path) -> None:
    async with connected(tmp_path, {"noisy": support.toolbox("noisy", "--fault", "noise")}) as (manager, warnings):
        assert warnings == []
        assert (await call(manager, "mcp__noisy__echo", tmp_path, message="ok")).content == "echo: ok"
        assert "warming up the flux capacitor" in (tmp_path / "logs" / "noisy.log").read_text()


async def test_unknown_tool_on_the_server_is_an_error_result(tmp_path: Path) -> None:
    async with connected(tmp_path, {"toolbox": support.toolbox()}) as (manager, _):
        result = await manager.call_tool("toolbox", "no_such_tool", {}, retry_safe=True)
        assert render_tool_result(result) == ToolOutput("Unknown tool: no_such_tool", is_error=True)
        with pytest.raises(McpError, match=r"^No MCP server named 'elsewhere'\.$"):
            await manager.call_tool("elsewhere", "echo", {}, retry_safe=True)


async def test_after_shutdown_calls_fail_cleanly(tmp_path: Path) -> None:
    async with connected(tmp_path, {"toolbox": support.toolbox()}) as (manager, _):
        tools = manager.tools()
    echo = next(t for t in tools if t.name == "mcp__toolbox__echo")
    output = await echo.call(echo.validate({"message": "x"}), ToolContext(cwd=tmp_path))
    assert (output.content, output.is_error) == ("The MCP servers have been shut down.", True)
    assert manager.status()[0].state == "closed"


async def test_aborting_a_running_call_leaves_the_server_usable(tmp_path: Path) -> None:
    import asyncio

    from react_agent_mini.abort import AbortSignal
    from react_agent_mini.events import ToolFinished
    from react_agent_mini.messages import ToolUseBlock
    from react_agent_mini.permissions.policy import allow_read_only
    from react_agent_mini.tools.base import ToolRegistry
    from react_agent_mini.tools.runner import INTERRUPTED, ToolRun, run_tool_calls

    trace = tmp_path / "trace.txt"
    async with connected(tmp_path, {"toolbox": support.toolbox(env={"TOOLBOX_TRACE": str(trace)})}) as (manager, _):
        pid = await server_pid(manager, tmp_path)
        signal_ = AbortSignal()
        run = ToolRun(ToolRegistry(manager.tools()), ToolContext(cwd=tmp_path), allow_read_only, signal_)
        uses = [ToolUseBlock("t1", "mcp__toolbox__sleep", {"seconds": 30})]

        async def abort_once_started() -> None:
            await until(lambda: trace.exists() and "sleep started" in trace.read_text())
            signal_.abort("interrupted")

        aborter = asyncio.ensure_future(abort_once_started())
        results = [e.result async for e in run_tool_calls(uses, run) if isinstance(e, ToolFinished)]
        await aborter
        assert [(r.content, r.is_error) for r in results] == [(INTERRUPTED, True)]
        assert (await call(manager, "mcp__toolbox__echo", tmp_path, message="still here")).content == "echo: still here"
        assert await server_pid(manager, tmp_path) == pid


async def test_http_server_that_went_away_and_came_back(tmp_path: Path) -> None:
    command, port = support.toolbox_http()
    url = f"http://127.0.0.1:{port}/mcp"
    with support.http_server(command, port):
        async with connected(tmp_path, {"web": support.remote("web", url)}) as (manager, warnings):
            assert warnings == []
            first = await server_pid(manager, tmp_path, "web")
            os.kill(first, signal.SIGKILL)
            assert support.wait_until_gone([first]) == []
            # the reconnect is tried at once, fails, and that is the error
            output = await call(manager, "mcp__web__write_note", tmp_path, text="lost")
            assert output.is_error
            assert output.content.startswith("The MCP server web is not available: it stopped (")
            assert f"restarting it failed: cannot connect to {url}" in output.content
            with support.http_server(command, port):
                manager.reconnect_backoff = 0
                # known to be down before this call, so even a write runs once the server is back
                output = await call(manager, "mcp__web__write_note", tmp_path, text="back")
                assert (output.content, output.is_error) == ("noted: back", False)
                assert await server_pid(manager, tmp_path, "web") != first
