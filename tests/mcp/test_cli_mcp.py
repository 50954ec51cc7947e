"""MCP end to end: the CLI as a subprocess, the fake LLM server as the model, real MCP servers as tools.

A `.mcp.json` names mcp-server-time (stdio, PyPI), server-everything (stdio, npm) and server-everything over
streamable HTTP on 127.0.0.1; the model sees their tools, calls them, and gets their results.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ..fakes.fake_llm import FakeLLMServer, Reply, ToolCall
from ..fakes.mcp_servers import support
from ..processes import pids_with, wait_until
from ..test_cli import env_for, ram

pytestmark = pytest.mark.usefixtures("trusted")  # the project's own configuration applies (see trust/)


def test_headless_run_with_three_real_servers(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    command, port, env = support.everything_http()
    with support.http_server(command, port, env):
        config = {
            "mcpServers": {
                "time": {"command": support.time_server(), "args": ["--local-timezone", "UTC"]},
                "everything": {"command": support.node(), "args": [support.everything_js(), "stdio"]},
                "remote": {"type": "http", "url": f"http://127.0.0.1:{port}/mcp"},
            }
        }
        (tmp_path / ".mcp.json").write_text(json.dumps(config))
        fake_llm.enqueue(
            Reply(
                tool_calls=[
                    ToolCall("mcp__time__get_current_time", {"timezone": "Asia/Tokyo"}),
                    ToolCall("mcp__everything__echo", {"message": "hello over stdio"}),
                    ToolCall("mcp__remote__get-sum", {"a": 2, "b": 40}),
                ]
            ),
            Reply(text="done"),
        )
        proc = ram(
            "--allowed-tools",
            "mcp__everything,mcp__remote",
            "use the servers",
            env=env_for("openai", fake_llm),
            cwd=tmp_path,
        )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    offered = {t["function"]["name"] for t in fake_llm.requests[0].body["tools"]}
    assert {"mcp__time__get_current_time", "mcp__everything__echo", "mcp__remote__get-sum"} <= offered
    results = [m["content"] for m in fake_llm.requests[-1].body["messages"] if m["role"] == "tool"]
    assert "Asia/Tokyo" in results[0]
    assert "hello over stdio" in results[1]
    assert "42" in results[2]


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_an_image_reaches_the_model_where_the_provider_takes_images(
    fake_llm: FakeLLMServer, tmp_path: Path, provider: str
) -> None:
    config = {"mcpServers": {"everything": {"command": support.node(), "args": [support.everything_js(), "stdio"]}}}
    (tmp_path / ".mcp.json").write_text(json.dumps(config))
    fake_llm.enqueue(Reply(tool_calls=[ToolCall("mcp__everything__get-tiny-image", {})]), Reply(text="a tiny image"))
    proc = ram("--allowed-tools", "mcp__everything", "show me", env=env_for(provider, fake_llm), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    messages = fake_llm.requests[-1].body["messages"]
    if provider == "anthropic":  # a tool_result with a text part and an image part
        result = messages[-1]["content"][0]
        assert result["type"] == "tool_result" and isinstance(result["content"], list)
        text, image = result["content"][0], result["content"][-1]
        assert text["type"] == "text" and "[image: image/png" in text["text"]
        assert image["type"] == "image" and image["source"]["media_type"] == "image/png"
        assert base64.b64decode(image["source"]["data"]).startswith(b"\x89PNG")
    else:  # Chat Completions takes no images in tool messages: the placeholder line only
        result = next(m for m in messages if m["role"] == "tool")
        assert isinstance(result["content"], str) and "[image: image/png" in result["content"]
        assert "iVBOR" not in json.dumps(messages)


def test_a_dead_server_costs_one_warning_line(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    config = {
        "mcpServers": {
            "ghost": {"command": str(tmp_path / "no-such-server")},
            "time": {"command": support.time_server(), "args": ["--local-timezone", "UTC"]},
        }
    }
    (tmp_path / ".mcp.json").write_text(json.dumps(config))
    fake_llm.enqueue(Reply(tool_calls=[ToolCall("mcp__time__get_current_time", {"timezone": "UTC"})]), Reply(text="ok"))
    proc = ram("what time is it", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and '"ghost"' in warnings[0]
    results = [m["content"] for m in fake_llm.requests[-1].body["messages"] if m["role"] == "tool"]
    assert '"timezone": "UTC"' in results[0] or "UTC" in results[0]


def test_mcp_list_command(tmp_path: Path) -> None:
    config = {"mcpServers": {"time": {"command": support.time_server(), "args": ["--local-timezone", "UTC"]}}}
    (tmp_path / ".mcp.json").write_text(json.dumps(config))
    proc = ram("mcp", "list", env=env_for(None, None), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "mcp__time__get_current_time" in proc.stdout and "read-only" in proc.stdout


ESCAPES = r'printf "fatal: \033]0;PWNED\007\033[2J\n" >&2; exit 1'
"""A server that dies at start, after writing a line that would retitle the window and clear the screen."""


def test_what_a_server_says_cannot_steer_the_terminal(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    dies = {"command": "sh", "args": ["-c", ESCAPES]}
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"dies": dies}}))
    listed = ram("mcp", "list", env=env_for(None, None), cwd=tmp_path)
    fake_llm.enqueue(Reply(text="ok"))
    headless = ram("hello", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert (listed.returncode, headless.returncode) == (1, 0), headless.stderr
    assert 'fatal: ^[]0;PWNED^G^[[2J"' in listed.stdout and "\x1b" not in listed.stdout + listed.stderr
    warning = next(line for line in headless.stderr.splitlines() if line.startswith("warning:"))
    assert 'fatal: ^[]0;PWNED^G^[[2J"' in warning and "\x1b" not in headless.stderr


@pytest.mark.parametrize(
    ("args", "sig", "code"),
    [(["hello"], signal.SIGTERM, 143), (["hello"], signal.SIGHUP, 129), (["mcp", "list"], signal.SIGTERM, 143)],
)
def test_a_signal_while_servers_start_stops_them(
    fake_llm: FakeLLMServer, tmp_path: Path, args: list[str], sig: signal.Signals, code: int
) -> None:
    # the server waits at a barrier for a second server that never comes, so it is still starting when the
    # signal arrives; killed outright, the agent would leave it running (it has its own session)
    barrier = tmp_path / f"barrier-{os.getpid()}"
    waiting = ["--barrier", str(barrier), "--barrier-count", "2"]
    slow = {"command": sys.executable, "args": [str(support.TOOLBOX), *waiting]}
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"slow": slow}}))
    proc = subprocess.Popen(
        [sys.executable, "-m", "react_agent_mini", *args],
        env=env_for("openai", fake_llm, XDG_STATE_HOME=str(tmp_path / "state")),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert wait_until(lambda: barrier.is_dir() and any(barrier.iterdir()), timeout=30), "the server never started"
    proc.send_signal(sig)
    _out, err = proc.communicate(timeout=30)
    assert proc.returncode == code, err
    assert "Traceback" not in err
    assert wait_until(lambda: not pids_with(str(barrier)), timeout=10), "the server outlived the agent"
    assert fake_llm.requests == []
