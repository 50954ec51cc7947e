"""MCP configuration: the `.mcp.json` format, `${VAR}` expansion, MCP_CONFIG merge order, the user file, and
one warning line per broken file or entry."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from react_agent_mini.mcp.config import (
    DEFAULT_CALL_TIMEOUT,
    DEFAULT_CONNECT_TIMEOUT,
    ServerConfig,
    config_files,
    load_mcp_config,
    mcp_timeouts,
    user_config_path,
)


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def servers(**entries: Any) -> dict[str, Any]:
    return {"mcpServers": entries}


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    """An environment whose user config lives under tmp_path (never the developer's own)."""
    return {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}


def test_no_files_means_no_servers_and_no_warnings(tmp_path: Path, home: dict[str, str]) -> None:
    assert load_mcp_config(tmp_path, home, trust=None) == ({}, [])


def test_stdio_entry_is_read_whole(tmp_path: Path, home: dict[str, str]) -> None:
    write(
        tmp_path / ".mcp.json",
        servers(demo={"command": "npx", "args": ["-y", "some-server"], "env": {"A": "1"}, "cwd": "sub"}),
    )
    found, warnings = load_mcp_config(tmp_path, home, trust=None)
    assert warnings == []
    assert found == {
        "demo": ServerConfig(
            "demo",
            "stdio",
            command="npx",
            args=("-y", "some-server"),
            env={"A": "1"},
            cwd=str(tmp_path / "sub"),
            source=str(tmp_path / ".mcp.json"),
            scope="project",
        )
    }


def test_stdio_runs_in_the_workspace_by_default(tmp_path: Path, home: dict[str, str]) -> None:
    write(tmp_path / ".mcp.json", servers(demo={"command": "srv"}))
    assert load_mcp_config(tmp_path, home, trust=None)[0]["demo"].cwd == str(tmp_path)


@pytest.mark.parametrize(
    ("kind", "transport"), [("http", "http"), ("streamable-http", "http"), ("sse", "sse"), (None, "http")]
)
def test_remote_entries(tmp_path: Path, home: dict[str, str], kind: str | None, transport: str) -> None:
    entry: dict[str, Any] = {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer t"}}
    if kind:
        entry["type"] = kind
    write(tmp_path / ".mcp.json", servers(remote=entry))
    found, warnings = load_mcp_config(tmp_path, home, trust=None)
    assert warnings == []
    server = found["remote"]
    assert (server.transport, server.url, server.headers) == (
        transport,
        "https://mcp.example.com/mcp",
        {"Authorization": "Bearer t"},
    )


def test_variables_are_expanded_in_values_with_defaults(tmp_path: Path, home: dict[str, str]) -> None:
    write(
        tmp_path / ".mcp.json",
        servers(
            local={
                "command": "${TOOLS}/srv",
                "args": ["--token=${TOKEN}", "--mode=${MODE:-fast}", "${EMPTY:-fallback}"],
                "env": {"KEY": "${TOKEN}", "${TOKEN}": "keys are not expanded"},
            },
            remote={"type": "http", "url": "${BASE}/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
        ),
    )
    env = home | {"TOOLS": "/opt/tools", "TOKEN": "s3cret", "BASE": "http://127.0.0.1:9", "EMPTY": ""}
    found, warnings = load_mcp_config(tmp_path, env, trust=None)
    assert warnings == []
    local, remote = found["local"], found["remote"]
    assert local.command == "/opt/tools/srv"
    assert local.args == ("--token=s3cret", "--mode=fast", "fallback")
    assert local.env == {"KEY": "s3cret", "${TOKEN}": "keys are not expanded"}
    assert remote.url == "http://127.0.0.1:9/mcp"
    assert remote.headers == {"Authorization": "Bearer s3cret"}


def test_unset_variable_skips_only_that_server(tmp_path: Path, home: dict[str, str]) -> None:
    path = write(
        tmp_path / ".mcp.json",
        servers(needs={"command": "srv", "env": {"API_KEY": "${MISSING_KEY}"}}, fine={"command": "ok"}),
    )
    found, warnings = load_mcp_config(tmp_path, home, trust=None)
    assert list(found) == ["fine"]
    assert warnings == [
        f'MCP config {path}: server "needs": environment variable MISSING_KEY is not set (used in env.API_KEY); '
        "server skipped"
    ]


def test_secrets_stay_out_of_repr(tmp_path: Path, home: dict[str, str]) -> None:
    write(
        tmp_path / ".mcp.json",
        servers(r={"type": "http", "url": "http://127.0.0.1:1/mcp", "headers": {"Authorization": "Bearer s3cret"}}),
    )
    assert "s3cret" not in repr(load_mcp_config(tmp_path, home, trust=None)[0]["r"])


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ("not an object", "expected an object"),
        ({}, '"command" must be a non-empty string'),
        ({"command": "  "}, '"command" must be a non-empty string'),
        ({"command": "srv", "args": "one two"}, '"args" must be a list of strings'),
        ({"command": "srv", "args": ["ok", 3]}, '"args" must be a list of strings'),
        ({"command": "srv", "env": ["A=1"]}, '"env" must be an object of strings'),
        ({"command": "srv", "env": {"A": 1}}, '"env" must be an object of strings'),
        ({"command": "srv", "cwd": 7}, '"cwd" must be a string'),
        ({"type": "websocket", "url": "ws://x"}, 'unknown "type" \'websocket\' (use "stdio", "http" or "sse")'),
        ({"type": "http"}, '"url" must be a non-empty string for a http server'),
        ({"type": "sse", "url": "ftp://x"}, "\"url\" must start with http:// or https://, got 'ftp://x'"),
        ({"type": "http", "url": "http://x", "headers": {"A": None}}, '"headers" must be an object of strings'),
    ],
)
def test_each_bad_entry_is_one_warning_and_the_rest_load(
    tmp_path: Path, home: dict[str, str], entry: Any, problem: str
) -> None:
    path = write(tmp_path / ".mcp.json", servers(bad=entry, good={"command": "ok"}))
    found, warnings = load_mcp_config(tmp_path, home, trust=None)
    assert list(found) == ["good"]
    assert warnings == [f'MCP config {path}: server "bad": {problem}; server skipped']


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("{not-json", "invalid JSON"),
        ("[]", 'expected {"mcpServers": {...}} at the top level'),
        ('{"servers": {}}', 'expected {"mcpServers": {...}} at the top level'),
        ('{"mcpServers": []}', 'expected {"mcpServers": {...}} at the top level'),
    ],
)
def test_broken_file_is_one_warning_naming_it(tmp_path: Path, home: dict[str, str], content: str, problem: str) -> None:
    path = write(tmp_path / ".mcp.json", content)
    found, warnings = load_mcp_config(tmp_path, home, trust=None)
    assert found == {}
    assert len(warnings) == 1
    assert warnings[0].startswith(f"MCP config {path}: {problem}")
    assert "\n" not in warnings[0]


def test_mcp_config_files_merge_in_order_later_wins(tmp_path: Path, home: dict[str, str]) -> None:
    write(tmp_path / "a.json", servers(one={"command": "one"}, shared={"command": "from-a", "args": ["x"]}))
    write(tmp_path / "cfg" / "b.json", servers(shared={"command": "from-b"}, two={"command": "two"}))
    write(tmp_path / ".mcp.json", servers(project={"command": "ignored when MCP_CONFIG is set"}))
    found, warnings = load_mcp_config(tmp_path, home | {"MCP_CONFIG": " a.json , cfg/b.json "}, trust=None)
    assert warnings == []
    assert list(found) == ["one", "shared", "two"]
    # a later file replaces the whole entry, not single fields
    assert (found["shared"].command, found["shared"].args) == ("from-b", ())
    assert found["shared"].source == str(tmp_path / "cfg" / "b.json")


def test_a_missing_file_named_in_mcp_config_is_reported(tmp_path: Path, home: dict[str, str]) -> None:
    write(tmp_path / "a.json", servers(one={"command": "one"}))
    found, warnings = load_mcp_config(tmp_path, home | {"MCP_CONFIG": "a.json,nope.json"}, trust=None)
    assert list(found) == ["one"]
    assert warnings == [f"MCP config {tmp_path / 'nope.json'}: file not found (named in MCP_CONFIG)"]


def test_user_file_loads_first_and_the_project_overrides_it(tmp_path: Path, home: dict[str, str]) -> None:
    user = write(user_config_path(home), servers(mine={"command": "u"}, shared={"command": "user"}))
    write(tmp_path / ".mcp.json", servers(shared={"command": "project"}))
    found, _ = load_mcp_config(tmp_path, home, trust=None)
    assert user == tmp_path / "xdg" / "react-agent-mini" / "mcp.json"
    assert {name: (s.command, s.scope) for name, s in found.items()} == {
        "mine": ("u", "user"),
        "shared": ("project", "project"),
    }


def test_config_files_lists_what_is_consulted(tmp_path: Path, home: dict[str, str]) -> None:
    assert [p for p, _, _ in config_files(tmp_path, home)] == [user_config_path(home), tmp_path / ".mcp.json"]
    assert [p for p, _, _ in config_files(tmp_path, home | {"MCP_CONFIG": "x.json"})] == [
        user_config_path(home),
        tmp_path / "x.json",
    ]


def test_timeouts_come_from_milliseconds_like_claude_code() -> None:
    assert mcp_timeouts({}) == (DEFAULT_CONNECT_TIMEOUT, DEFAULT_CALL_TIMEOUT, [])
    assert mcp_timeouts({"MCP_TIMEOUT": "5000", "MCP_TOOL_TIMEOUT": "250"}) == (5.0, 0.25, [])
    connect, call, warnings = mcp_timeouts({"MCP_TIMEOUT": "soon"})
    assert (connect, call) == (DEFAULT_CONNECT_TIMEOUT, DEFAULT_CALL_TIMEOUT)
    assert warnings == ["MCP_TIMEOUT must be a positive number of milliseconds, got 'soon'; using the default"]


def test_nothing_here_imports_the_sdk_until_a_server_starts() -> None:
    # the SDK costs about a second to import: loading config, manager and tools must not pay it
    code = (
        "import sys\n"
        "import react_agent_mini.mcp.config, react_agent_mini.mcp.manager, react_agent_mini.mcp.cli\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types', 'pydantic', 'httpx2')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# ---- end to end: what the config says reaches real servers ----


async def test_expanded_values_reach_the_servers(tmp_path: Path, home: dict[str, str]) -> None:
    from react_agent_mini.mcp.manager import McpManager
    from react_agent_mini.tools.base import ToolContext

    from ..fakes.mcp_servers import support

    command, port = support.toolbox_http()
    trace = tmp_path / "trace.txt"
    write(
        tmp_path / "servers.json",
        servers(
            web={
                "type": "http",
                "url": "http://127.0.0.1:${PORT}/mcp",
                "headers": {"Authorization": "Bearer ${TOKEN}"},
            },
            local={"command": "${PYTHON}", "args": [str(support.TOOLBOX)], "env": {"TOOLBOX_TRACE": "${TRACE}"}},
        ),
    )
    env = home | {
        "MCP_CONFIG": "servers.json",
        "PORT": str(port),
        "TOKEN": "s3cret",
        "PYTHON": sys.executable,
        "TRACE": str(trace),
    }
    found, warnings = load_mcp_config(tmp_path, env, trust=None)
    assert warnings == []
    ctx = ToolContext(cwd=tmp_path)
    with support.http_server(command, port):
        async with McpManager(found, log_dir=tmp_path / "logs") as manager:
            assert await manager.wait_ready(60) == []
            tools = {t.name: t for t in manager.tools()}
            output = await tools["mcp__web__authorization"].call({}, ctx)
            assert output.content == "Bearer s3cret"
            await tools["mcp__local__write_note"].call({"text": "env works"}, ctx)
    assert trace.read_text() == "write_note env works\n"


async def test_our_secrets_are_not_passed_to_stdio_servers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from react_agent_mini.mcp.manager import McpManager
    from react_agent_mini.tools.base import ToolContext

    from ..fakes.mcp_servers import support

    monkeypatch.setenv("OPENAI_API_KEY", "leak-me-not")
    monkeypatch.setenv("LANG", "C.UTF-8")
    config = support.stdio("env", support.node(), support.everything_js(), "stdio", env={"GIVEN": "on purpose"})
    async with McpManager({"env": config}, log_dir=tmp_path / "logs") as manager:
        assert await manager.wait_ready(60) == []
        tool = next(t for t in manager.tools() if t.name == "mcp__env__get-env")
        seen = json.loads((await tool.call({}, ToolContext(cwd=tmp_path))).content)
    assert seen["GIVEN"] == "on purpose"
    assert seen["LANG"] == "C.UTF-8"
    assert "PATH" in seen and "HOME" in seen
    assert "OPENAI_API_KEY" not in seen
