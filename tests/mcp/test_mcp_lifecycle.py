"""Lifecycle: servers start concurrently, every child process is gone after shutdown (grandchildren too, and on
Ctrl+C), and nothing a server or the SDK writes reaches the terminal."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from react_agent_mini.mcp.manager import McpManager
from react_agent_mini.tools.base import ToolContext

from ..fakes.mcp_servers import support


async def test_servers_connect_concurrently(tmp_path: Path) -> None:
    # each server waits at the barrier until all three have started: connecting them one after the other could
    # never get past the first one, so success proves they start together (without timing anything)
    barrier = tmp_path / "barrier"
    configs = {
        name: support.toolbox(name, "--barrier", str(barrier), "--barrier-count", "3") for name in ("a", "b", "c")
    }
    manager = McpManager(configs, log_dir=tmp_path / "logs", connect_timeout=60)
    manager.start()
    try:
        assert await manager.wait_ready(90) == []
        assert [s.state for s in manager.status()] == ["connected"] * 3
        assert len(list(barrier.iterdir())) == 3
    finally:
        await manager.aclose()


async def test_shutdown_leaves_no_child_process(tmp_path: Path) -> None:
    configs = {"toolbox": support.toolbox(), "time": support.time_config(), "everything": support.everything_config()}
    before = set(support.children())
    manager = McpManager(configs, log_dir=tmp_path / "logs")
    manager.start()
    try:
        assert await manager.wait_ready(120) == []
        spawned = sorted(set(support.children()) - before)
        assert len(spawned) == 3
    finally:
        await manager.aclose()
    assert support.wait_until_gone(spawned) == []
    assert set(support.children()) - before == set()
    await manager.aclose()  # idempotent


async def test_shutdown_also_stops_what_the_server_started(tmp_path: Path) -> None:
    # a wrapper that leaves a long-lived child behind in the server's process group (like npx does)
    script = f'sleep 600 & exec "{sys.executable}" "{support.TOOLBOX}"'
    manager = McpManager({"wrapped": support.stdio("wrapped", "sh", "-c", script)}, log_dir=tmp_path / "logs")
    manager.start()
    try:
        assert await manager.wait_ready(60) == []
        tool = next(t for t in manager.tools() if t.name == "mcp__wrapped__pid")
        leader = int((await tool.call({}, ToolContext(cwd=tmp_path))).content)
        members = support.group_members(leader)
        assert leader in members and len(members) == 2  # the server and its sleeping child
    finally:
        await manager.aclose()
    assert support.wait_until_gone(members) == []


CTRL_C_SCRIPT = """
import asyncio, json, sys
from pathlib import Path
from react_agent_mini.mcp.config import parse_server
from react_agent_mini.mcp.manager import McpManager

async def main() -> None:
    configs = {{
        "noisy": parse_server("noisy", {{"command": sys.executable, "args": [{toolbox!r}, "--fault", "noise"]}},
                              Path.cwd(), {{}}),
        "everything": parse_server("everything", {{"command": {node!r}, "args": [{everything!r}, "stdio"]}},
                                   Path.cwd(), {{}}),
    }}
    manager = McpManager(configs, log_dir=Path({logs!r}))
    manager.start()
    {body}

try:
    asyncio.run(main())
except KeyboardInterrupt:
    sys.exit(130)
"""

WITH_CLEANUP = """try:
        await report(manager)
    finally:
        await manager.aclose()"""

WITHOUT_CLEANUP = "await report(manager)  # no aclose: what asyncio.run's own teardown and atexit do must suffice"

REPORT = """
async def report(manager):
    import os
    warnings = await manager.wait_ready(120)
    kids = sorted(int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit() and _ppid(p) == os.getpid())
    print(json.dumps({"warnings": warnings, "pids": kids}), flush=True)
    await asyncio.sleep(3600)

def _ppid(p):
    try:
        stat = (p / "stat").read_text()
    except OSError:
        return -1
    return int(stat[stat.rindex(")") + 2 :].split()[1])
"""


@pytest.mark.parametrize("body", [WITH_CLEANUP, WITHOUT_CLEANUP], ids=["aclose-in-finally", "no-aclose"])
def test_ctrl_c_stops_every_server_and_the_terminal_stays_clean(tmp_path: Path, body: str) -> None:
    script = CTRL_C_SCRIPT.format(
        toolbox=str(support.TOOLBOX),
        node=support.node(),
        everything=support.everything_js(),
        logs=str(tmp_path / "logs"),
        body=body,
    )
    (tmp_path / "agent.py").write_text(textwrap.dedent(REPORT) + script)
    agent = subprocess.Popen(
        [sys.executable, str(tmp_path / "agent.py")],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(support.REPO / "src")},
    )
    try:
        assert agent.stdout is not None
        line = agent.stdout.readline()
        report = json.loads(line)
        assert report["warnings"] == []
        pids = report["pids"]
        assert len(pids) == 2
        agent.send_signal(signal.SIGINT)
        _, stderr = agent.communicate(timeout=60)
    finally:
        agent.kill()
    assert agent.returncode == 130
    assert stderr == ""  # no traceback, no server chatter, no SDK log record
    assert support.wait_until_gone(pids) == []
    assert "warming up the flux capacitor" in (tmp_path / "logs" / "noisy.log").read_text()
