"""`ram mcp list`: servers, their status and their tools, against real servers; the exit code says whether all
is well."""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path

from react_agent_mini.mcp.cli import mcp_list

from ..fakes.mcp_servers import support


def env_for(tmp_path: Path) -> dict[str, str]:
    """An environment in which the user trusts `tmp_path` (its `.mcp.json` starts servers only then)."""
    from react_agent_mini.trust.store import record_trust

    env = {"XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_STATE_HOME": str(tmp_path / "state")}
    record_trust(tmp_path, (), env, always=True)
    return env


def write_config(tmp_path: Path, servers: dict[str, object]) -> None:
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))


async def test_lists_servers_tools_and_failures(tmp_path: Path) -> None:
    write_config(
        tmp_path,
        {
            "toolbox": {"command": sys.executable, "args": [str(support.TOOLBOX)]},
            "time": {"command": support.time_server(), "args": ["--local-timezone", "UTC"]},
            "broken": {"command": "no-such-mcp-server-command"},
            "bad": {"command": 42},
        },
    )
    out = io.StringIO()
    code = await mcp_list(tmp_path, env_for(tmp_path), out)
    text = out.getvalue()
    lines = text.splitlines()
    assert code == 1
    assert lines[0] == (
        f'warning: MCP config {tmp_path / ".mcp.json"}: server "bad": "command" must be a non-empty string; '
        "server skipped"
    )
    assert lines[1] == "MCP servers: 3, from .mcp.json"
    assert any(
        line.startswith("toolbox (stdio): connected in ") and line.endswith(": toolbox 1.0, protocol 2026-07-28")
        for line in lines
    )
    assert re.search(r"^  mcp__toolbox__echo {2,}read-only  Echo the message back\.$", text, re.MULTILINE)
    assert re.search(
        r"^  mcp__toolbox__write_note {2,}may write  Pretend to write a note \(not read-only\)\.$", text, re.M
    )
    assert "  resources: attach with @toolbox:<uri>; the model has ListMcpResourcesTool" in lines
    assert "  prompts: /toolbox:plan_trip, /toolbox:summarise" in lines
    assert "  mcp__time__get_current_time  read-only  Get current time in a specific timezone" in lines
    assert "broken (stdio): failed: command not found: no-such-mcp-server-command" in lines
    assert "Traceback" not in text
    # the servers were stopped again, and their stderr went to the state directory
    assert (tmp_path / "state" / "react-agent-mini" / "mcp-logs" / "toolbox.log").exists()


async def test_all_well_exits_zero(tmp_path: Path) -> None:
    write_config(tmp_path, {"toolbox": {"command": sys.executable, "args": [str(support.TOOLBOX)]}})
    out = io.StringIO()
    assert await mcp_list(tmp_path, env_for(tmp_path), out) == 0
    assert "toolbox (stdio): connected in " in out.getvalue()


async def test_nothing_configured(tmp_path: Path) -> None:
    out = io.StringIO()
    assert await mcp_list(tmp_path, env_for(tmp_path), out) == 0
    user_file = tmp_path / "config" / "react-agent-mini" / "mcp.json"
    assert out.getvalue() == f"No MCP servers configured (looked in {user_file}, {tmp_path / '.mcp.json'}).\n"
