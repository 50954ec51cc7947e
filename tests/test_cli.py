"""The CLI end to end, as a user runs it: a subprocess talking to the loopback fake server."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from react_agent_mini.compact.tokens import estimate_tokens

from .fakes.fake_llm import DropAfter, FakeLLMServer, Hang, HttpError, Malformed, Reply, ToolCall
from .processes import pids_with, wait_until

WIRES = ["openai", "anthropic"]


def env_for(wire: str | None, server: FakeLLMServer | None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "RAM_"))}
    env.pop("QUERY_MOCK", None)
    env.pop("TRACE", None)
    if wire == "openai" and server:
        env.update(OPENAI_API_KEY="test-key", OPENAI_BASE_URL=server.openai_base_url)
    elif wire == "anthropic" and server:
        env.update(ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=server.anthropic_base_url)
    env.update(extra)
    return env


def ram(*args: str, env: dict[str, str], cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "react_agent_mini", *args],
        env=env,
        cwd=cwd,
        input=stdin,
        stdin=subprocess.DEVNULL if stdin is None else None,  # not the runner's stdin: a task argument reads it
        capture_output=True,
        text=True,
        timeout=60,
    )


def assert_no_traceback(proc: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout


def echo(message: str) -> ToolCall:
    return ToolCall("Echo", {"message": message})


ECHO = ("--tools", "default,Echo")
"""The built-in tools and the Echo demo tool, which a real model is not offered unless named (issue 28)."""


def test_version_and_help(tmp_path: Path) -> None:
    version = ram("--version", env=env_for(None, None), cwd=tmp_path)
    assert version.returncode == 0 and version.stdout.strip() == "react-agent-mini 0.1.0"
    helped = ram("--help", env=env_for(None, None), cwd=tmp_path)
    assert helped.returncode == 0
    for option in ("--print", "--provider", "--model", "--mock", "--max-turns", "--output-format", "--version"):
        assert option in helped.stdout
    for fact in ("OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "TRACE=1", "exit codes", "130"):
        assert fact in helped.stdout


@pytest.mark.parametrize("wire", WIRES)
def test_headless_task_streams_answer_and_tool_lines(wire: str, fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(
        Reply(text="Checking both.", tool_calls=[echo("one"), echo("two")]),
        Reply(tool_calls=[echo("three")]),
        Reply(text="Done: one two three."),
    )
    proc = ram(*ECHO, "summarise", "this", env=env_for(wire, fake_llm), cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "Checking both.\nDone: one two three.\n"
    assert proc.stderr.splitlines() == ["[tool] Echo: one", "[tool] Echo: two", "[tool] Echo: three"]
    first = fake_llm.requests[0].body
    user_text = first["messages"][-1]["content"]
    assert "summarise this" in json.dumps(user_text)


@pytest.mark.parametrize("wire", WIRES)
def test_json_output(wire: str, fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(Reply(tool_calls=[echo("x")]), Reply(text="The answer."))
    proc = ram("--output-format", "json", "q", env=env_for(wire, fake_llm), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["type"] == "result" and result["subtype"] == "success" and result["is_error"] is False
    assert result["result"] == "The answer." and result["num_turns"] == 2
    assert result["usage"]["input_tokens"] == 200 and result["usage"]["output_tokens"] == 40
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", result["session_id"])


@pytest.mark.parametrize("wire", WIRES)
def test_stream_json_output(wire: str, fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(Reply(tool_calls=[echo("x")]), Reply(text="fin"))
    proc = ram(*ECHO, "--output-format", "stream-json", "q", env=env_for(wire, fake_llm), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [(e["type"], e.get("subtype")) for e in events] == [
        ("system", "init"),
        ("assistant", None),
        ("user", None),
        ("assistant", None),
        ("result", "success"),
    ]
    shells = ["BashOutput", "KillShell"]  # the background shells Bash starts (run_in_background)
    builtin = ["Read", "Write", "Edit", "Glob", "Grep", "Bash", *shells, "WebFetch", "Echo", "TodoWrite", "Agent"]
    assert events[0]["tools"] == builtin
    assert events[2]["message"]["content"][0]["type"] == "tool_result"
    assert events[2]["message"]["content"][0]["content"] == "x"
    assert len({e["session_id"] for e in events}) == 1


def test_pipe_reads_the_task_from_stdin(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(Reply(text="piped ok"))
    proc = ram("-p", env=env_for("openai", fake_llm), cwd=tmp_path, stdin="task from stdin\n")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "piped ok\n"
    assert fake_llm.requests[0].body["messages"][-1] == {"role": "user", "content": "task from stdin"}


def test_no_key_is_one_clear_line_and_exit_2(tmp_path: Path) -> None:
    proc = ram("do something", env=env_for(None, None), cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "OPENAI_API_KEY" in proc.stderr and "--mock" in proc.stderr
    assert proc.stdout == ""


@pytest.mark.parametrize("wire", WIRES)
def test_faults_end_in_a_clear_message_and_nonzero_exit(wire: str, fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(HttpError(500, "internal", retry_after="0"), HttpError(500, "internal", retry_after="0"))
    proc = ram("q", env=env_for(wire, fake_llm, RAM_MAX_RETRIES="1"), cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[-1] == f"error: {wire} API error 500: internal"
    assert "[retry]" in proc.stderr

    fake_llm.enqueue(Malformed())
    proc = ram("q", env=env_for(wire, fake_llm), cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 1 and "malformed stream event" in proc.stderr


@pytest.mark.parametrize("wire", WIRES)
def test_a_stream_dropped_midway_leaves_no_partial_answer(wire: str, fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(DropAfter(Reply(text="partial partial partial", chunk_size=3), events=6), Reply(text="whole"))
    proc = ram("q", env=env_for(wire, fake_llm), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "whole\n"
    assert "[retry]" in proc.stderr and "dropped midway" in proc.stderr


def test_max_turns_exit_code(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.set_responder(lambda request: Reply(tool_calls=[echo("again")]))
    proc = ram("--max-turns", "2", "--output-format", "json", "loop", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert proc.returncode == 3
    result = json.loads(proc.stdout)
    assert result["subtype"] == "error_max_turns" and result["is_error"] is True and result["num_turns"] == 2


def test_trace_lines_never_show_the_key(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(Reply(tool_calls=[echo("x")]), Reply(text="ok"))
    proc = ram(*ECHO, "q", env=env_for("openai", fake_llm, TRACE="1"), cwd=tmp_path)
    assert proc.returncode == 0
    traces = [line for line in proc.stderr.splitlines() if line.startswith("[trace]")]
    assert traces[0] == "[trace] cli.start mode=headless provider=openai"
    assert "[trace] api.request messages=1 tools=12 model=deepseek-chat" in traces  # the built-in tools and Echo
    assert "[trace] permission tool=Echo decision=allow" in traces
    assert "[trace] api.assistant kind=tool_use tool_uses=1 stop=tool_use" in traces
    assert traces[-1] == "[trace] query.turn_end reason=completed turn=2"
    assert "test-key" not in proc.stderr


def test_mock_demo_explores_the_workspace_offline(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "loop.py").write_text('"""The loop."""\n\n\nasync def query():\n    return 1\n')
    (tmp_path / "other.py").write_text("x = 1\n")
    proc = ram("--mock", "show me", env=env_for(None, None), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "scripted demo model" in proc.stdout
    # Glob and Grep in one message, then a Read of what Grep found
    assert proc.stderr.splitlines() == [
        "[tool] Glob: **/*",
        r"[tool] Grep: \b(def|class|function|func|fn)\b",
        "[tool] Read: pkg/loop.py",
    ]
    assert "Found 2 file(s), 1 with definitions in them. Reading pkg/loop.py." in proc.stdout
    assert 'it opens with: \'"""The loop."""\'' in proc.stdout


@pytest.mark.parametrize("wire", WIRES)
def test_a_real_model_is_not_offered_the_echo_demo_tool(wire: str, fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(Reply(text="ok"), Reply(text="ok"))
    assert ram("q", env=env_for(wire, fake_llm), cwd=tmp_path).returncode == 0
    assert ram(*ECHO, "q", env=env_for(wire, fake_llm), cwd=tmp_path).returncode == 0
    plain, named = ([t.get("name") or t["function"]["name"] for t in r.body["tools"]] for r in fake_llm.requests)
    assert "Echo" not in plain and "Read" in plain and "Agent" in plain  # every other built-in tool
    assert named == [*plain[: plain.index("TodoWrite")], "Echo", *plain[plain.index("TodoWrite") :]]
    mock = ram("--mock", "--output-format", "stream-json", "q", env=env_for(None, None), cwd=tmp_path)
    assert "Echo" in json.loads(mock.stdout.splitlines()[0])["tools"]  # the offline demo model calls it
    # what the first request costs before the task: system prompt and tool definitions within 3.5k tokens, counted
    # by ram's own estimator (cl100k gives within 2% of it: benchmarks/first_request.py)
    body = fake_llm.requests[0].body
    system = body["system"] if wire == "anthropic" else body["messages"][0]["content"]
    system_text = system if isinstance(system, str) else "".join(block["text"] for block in system)
    tools = json.dumps(body["tools"], separators=(",", ":"), ensure_ascii=False)
    assert estimate_tokens(system_text) + estimate_tokens(tools) <= 3_500


def test_mock_demo_in_an_empty_directory_and_the_seed_echo(tmp_path: Path) -> None:
    proc = ram("--mock", "show me", env=env_for(None, None), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "no files for me to look at" in proc.stdout
    seed_style = ram("echo hello world", env=env_for(None, None, QUERY_MOCK="1"), cwd=tmp_path)
    assert seed_style.stdout == "Echo reply: hello world\n"


def test_ctrl_c_interrupts_cleanly(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(Hang())
    proc = subprocess.Popen(
        [sys.executable, "-m", "react_agent_mini", "wait forever"],
        env=env_for("openai", fake_llm),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    fake_llm.wait_for_requests(1)
    time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert err.strip().splitlines()[-1] == "interrupted"
    assert "Traceback" not in err


def test_sigterm_stops_a_running_command_and_its_process_group(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    marker = f"313.{os.getpid()}"
    fake_llm.enqueue(Reply(tool_calls=[ToolCall("Bash", {"command": f"sleep {marker} & sleep {marker}"})]))
    proc = subprocess.Popen(
        [sys.executable, "-m", "react_agent_mini", "run it"],
        env=env_for("openai", fake_llm, ALLOW_WRITE="1"),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert wait_until(lambda: pids_with(f"sleep {marker}"), timeout=20), "the command never started"
    proc.send_signal(signal.SIGTERM)
    _out, err = proc.communicate(timeout=30)
    assert proc.returncode == 143 and "Traceback" not in err
    gone = wait_until(lambda: not pids_with(f"sleep {marker}"), timeout=30)
    assert gone, "the command's processes outlived the agent"
