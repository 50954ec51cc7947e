"""Claude Code's stream-json protocol by hand: `ram --input-format stream-json` as a subprocess, fed NDJSON lines one
at a time, its stdout read line by line — control requests and their answers, malformed input, stdin's end,
signals, limits — and the Claude Code flags the Agent SDK passes, in one-shot runs too. Every line ram prints
must parse with the SDK's own parser (`claude_agent_sdk._internal.message_parser.parse_message`)."""

from __future__ import annotations

import json
import queue
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk._internal.message_parser import parse_message

from react_agent_mini.context.system_prompt import BASE_PROMPT

from ..fakes.fake_llm import FakeLLMServer, Hang, RecordedRequest, Reply, ToolCall
from ..test_cli import WIRES, env_for, ram

SDK_ARGV = ("--output-format", "stream-json", "--verbose", "--system-prompt", "", "--input-format", "stream-json")
"""What the Python SDK always passes (reference §1.1)."""
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
WAIT = 60.0
"""Seconds a read may take before the test gives up (a hang guard, not a speed requirement)."""


class Ram:
    """`ram --input-format stream-json` as a subprocess: lines in by hand, stdout lines out, in order."""

    def __init__(self, *args: str, env: dict[str, str], cwd: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "react_agent_mini", *SDK_ARGV, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=cwd,
        )
        self._lines: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        self._err: list[str] = []
        self._threads = [
            threading.Thread(target=self._read_out, daemon=True),
            threading.Thread(target=self._read_err, daemon=True),
        ]
        for thread in self._threads:
            thread.start()
        self._ids = 0

    def _read_out(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            self._lines.put(json.loads(raw))  # every line is one JSON object, or the test fails here
        self._lines.put(None)

    def _read_err(self) -> None:
        assert self.proc.stderr is not None
        self._err.extend(self.proc.stderr)

    @property
    def stderr(self) -> str:
        return "".join(self._err)

    def send_raw(self, text: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()

    def send(self, obj: dict[str, Any]) -> None:
        self.send_raw(json.dumps(obj))

    def user(self, content: object, **extra: Any) -> None:
        message = {"role": "user", "content": content}
        self.send({"type": "user", "session_id": "", "message": message, "parent_tool_use_id": None, **extra})

    def control(self, subtype: str, **fields: Any) -> str:
        self._ids += 1
        request_id = f"req_{self._ids}_test"
        self.send({"type": "control_request", "request_id": request_id, "request": {"subtype": subtype, **fields}})
        return request_id

    def answer(self, request_id: str, response: dict[str, Any]) -> None:
        body = {"subtype": "success", "request_id": request_id, "response": response}
        self.send({"type": "control_response", "response": body})

    def next(self) -> dict[str, Any]:
        line = self._lines.get(timeout=WAIT)
        assert line is not None, f"stdout ended; stderr: {self.stderr}"
        self.seen.append(line)
        return line

    def until(self, wanted: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        while not wanted(line := self.next()):
            pass
        return line

    def response(self, request_id: str) -> dict[str, Any]:
        line = self.until(lambda d: d["type"] == "control_response" and d["response"]["request_id"] == request_id)
        return dict(line["response"])

    def result(self) -> dict[str, Any]:
        return self.until(lambda d: d["type"] == "result")

    def close(self) -> int:
        """Close stdin; the exit code, once every line has been read."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        while (line := self._lines.get(timeout=WAIT)) is not None:
            self.seen.append(line)
        code = self.proc.wait(timeout=WAIT)
        for thread in self._threads:
            thread.join(timeout=WAIT)
        return code


def parsed_by_the_sdk(lines: list[dict[str, Any]]) -> None:
    """Every line but the control envelopes (which the SDK routes itself) parses as one of the SDK's messages."""
    for line in lines:
        if line["type"] in ("control_request", "control_response", "control_cancel_request"):
            continue
        parse_message(line)  # raises MessageParseError on a missing required field


def system_of(request: RecordedRequest) -> str:
    body = request.body
    if request.wire == "openai":
        first = body["messages"][0]
        return str(first["content"]) if first["role"] == "system" else ""
    system = body.get("system", "")
    return system if isinstance(system, str) else "".join(block.get("text", "") for block in system)


@pytest.mark.parametrize("wire", WIRES)
def test_a_session_over_stdin_with_tools_and_two_turns(wire: str, fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    (tmp_path / "hello.txt").write_text("hello\n")
    fake_llm.enqueue(
        Reply(text="Reading.", tool_calls=[ToolCall("Read", {"file_path": "hello.txt"})]),
        Reply(tool_calls=[ToolCall("Bash", {"command": "echo hi"})]),
        Reply(text="It says hello; the command printed hi."),
        Reply(text="Second answer."),
    )
    agent = Ram("--include-partial-messages", env=env_for(wire, fake_llm), cwd=tmp_path)
    init = agent.response(agent.control("initialize", hooks=None))
    assert init["subtype"] == "success"
    answer = init["response"]
    assert answer["models"] and answer["models"][0]["value"]  # claude-code-acp reads models[0]
    assert answer["claude_code_version"] == "0.1.0" and answer["current_permission_mode"] == "default"
    assert {"name": "compact", "description": answer["commands"][0]["description"], "argumentHint": "[focus]"} in (
        answer["commands"]
    )
    agent.user("Read hello.txt and run echo hi")
    first = agent.result()
    agent.user([{"type": "text", "text": "and again"}])
    second = agent.result()
    assert agent.close() == 0, agent.stderr
    assert "Traceback" not in agent.stderr
    parsed_by_the_sdk(agent.seen)

    assert first["subtype"] == "success" and first["is_error"] is False and first["num_turns"] == 3
    assert first["result"] == "It says hello; the command printed hi."
    assert second["subtype"] == "success" and second["result"] == "Second answer." and second["num_turns"] == 1
    session = first["session_id"]
    assert UUID.match(session) and second["session_id"] == session
    kinds = [(line["type"], line.get("subtype")) for line in agent.seen if line["type"] != "stream_event"]
    assert kinds == [
        ("control_response", None),
        ("system", "init"),  # once per turn, as Claude Code writes it
        ("assistant", None),
        ("user", None),
        ("assistant", None),
        ("user", None),
        ("assistant", None),
        ("result", "success"),
        ("system", "init"),
        ("assistant", None),
        ("result", "success"),
    ]
    messages = [line for line in agent.seen if line["type"] in ("assistant", "user")]
    for line in messages:
        assert line["session_id"] == session and line["parent_tool_use_id"] is None and UUID.match(line["uuid"])
    assert all(line["message"]["model"] for line in messages if line["type"] == "assistant")
    results = [line for line in messages if line["type"] == "user"]
    assert results[0]["message"]["content"][0]["content"] == "1\thello"
    assert results[1]["message"]["content"][0] == {
        "type": "tool_result",
        "tool_use_id": messages[2]["message"]["content"][0]["id"],
        "content": "hi",
        "is_error": False,
    }
    deltas = [
        line["event"]["delta"]["text"]
        for line in agent.seen
        if line["type"] == "stream_event"
        and line["event"]["type"] == "content_block_delta"
        and line["event"]["delta"]["type"] == "text_delta"
    ]
    assert "".join(deltas) == "Reading.It says hello; the command printed hi.Second answer."
    # the second turn continued the conversation: the model got the first exchange again
    last = fake_llm.requests[-1].body["messages"]
    assert "Read hello.txt and run echo hi" in json.dumps(last) and "and again" in json.dumps(last[-1])
    # `--system-prompt ""` (the SDK's default) keeps ram's own instructions
    assert BASE_PROMPT.splitlines()[0][:60] in system_of(fake_llm.requests[0])


def test_control_requests_errors_and_malformed_lines(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    skill = tmp_path / ".agents" / "skills" / "release"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: release\ndescription: Cut a release\n---\nSay RELEASED.\n")
    fake_llm.enqueue(Reply(text="released"))
    agent = Ram(env=env_for("openai", fake_llm), cwd=tmp_path)
    agent.send_raw("this is not json")
    agent.send_raw('["a list"]')
    agent.send_raw("")
    agent.send({"type": "mystery"})
    unknown = agent.response(agent.control("rewind_files", user_message_id="x"))  # before initialize, at once
    assert unknown["subtype"] == "error" and "rewind_files" in unknown["error"]
    init = agent.response(agent.control("initialize", hooks=None))["response"]
    assert {"name": "release", "description": "Cut a release", "argumentHint": "[arguments]"} in init["commands"]
    again = agent.response(agent.control("initialize", hooks=None))
    assert again["subtype"] == "error"
    status = agent.response(agent.control("mcp_status"))
    assert status["subtype"] == "success" and status["response"] == {"mcpServers": []}
    usage = agent.response(agent.control("get_context_usage"))["response"]
    assert usage["maxTokens"] > 0 and usage["model"] == init["models"][0]["value"]
    agent.user("/release v2")  # a skill's slash command: its body goes to the model, the arguments as the text
    result = agent.result()
    assert agent.close() == 0
    assert result["result"] == "released"
    sent = json.dumps(fake_llm.requests[0].body["messages"])
    assert "Say RELEASED." in sent and "v2" in sent
    lines = agent.stderr.splitlines()
    assert sum("not a JSON object" in line for line in lines) == 2
    assert any("'mystery'" in line for line in lines)
    assert "Traceback" not in agent.stderr


def test_stdin_closed_at_once_still_finishes_every_queued_turn(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    """As the SDK's `query("...")` does: the prompt, then EOF straight away."""
    fake_llm.enqueue(Reply(tool_calls=[ToolCall("Echo", {"message": "x"})]), Reply(text="one"), Reply(text="two"))
    agent = Ram(env=env_for("openai", fake_llm), cwd=tmp_path)
    agent.user("first")
    agent.user("second")
    assert agent.close() == 0
    results = [line for line in agent.seen if line["type"] == "result"]
    assert [r["result"] for r in results] == ["one", "two"]


def test_no_input_at_all_exits_0(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    agent = Ram(env=env_for("openai", fake_llm), cwd=tmp_path)
    assert agent.close() == 0
    assert agent.seen == [] and fake_llm.requests == []


def test_max_turns_is_reported_as_claude_code_does(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(Reply(tool_calls=[ToolCall("Echo", {"message": "x"})]), Reply(text="never"))
    agent = Ram("--max-turns", "1", env=env_for("openai", fake_llm), cwd=tmp_path)
    agent.user("loop")
    result = agent.result()
    assert agent.close() == 1  # the last result was an error
    assert result["subtype"] == "error_max_turns" and result["is_error"] is True
    assert "result" not in result and result["errors"] == ["Reached maximum number of turns (1)"]
    parsed_by_the_sdk(agent.seen)


@pytest.mark.parametrize("wire", WIRES)
def test_interrupt_mid_turn_then_the_session_goes_on(wire: str, fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(Hang(), Reply(text="after"))
    agent = Ram(env=env_for(wire, fake_llm), cwd=tmp_path)
    agent.user("wait for ever")
    agent.until(lambda d: d.get("subtype") == "init")
    fake_llm.wait_for_requests(1)
    interrupted = agent.response(agent.control("interrupt"))
    assert interrupted["subtype"] == "success" and interrupted["response"] == {"still_queued": []}
    stopped = agent.result()
    assert stopped["subtype"] == "error_during_execution" and stopped["is_error"] is True
    assert isinstance(stopped["errors"], list) and stopped["errors"]
    agent.user("go on")
    assert agent.result()["result"] == "after"
    assert agent.close() == 0  # the last result was not an error


def test_sigterm_during_a_turn_stops_it_and_exits_143(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(Hang())
    agent = Ram(env=env_for("openai", fake_llm), cwd=tmp_path)
    agent.user("hang")
    agent.until(lambda d: d.get("subtype") == "init")
    fake_llm.wait_for_requests(1)
    agent.proc.send_signal(signal.SIGTERM)
    result = agent.result()
    assert result["subtype"] == "error_during_execution"
    assert agent.proc.wait(timeout=WAIT) == 143
    assert "Traceback" not in agent.stderr


def test_can_use_tool_request_and_a_deny_that_interrupts(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("Bash", {"command": "touch made.txt"}), ToolCall("Echo", {"message": "m"})])
    )
    agent = Ram("--permission-prompt-tool", "stdio", env=env_for("openai", fake_llm), cwd=tmp_path)
    agent.response(agent.control("initialize", hooks=None))
    agent.user("make a file")
    ask = agent.until(lambda d: d["type"] == "control_request")
    request = ask["request"]
    assert request["subtype"] == "can_use_tool" and request["tool_name"] == "Bash"
    assert request["input"] == {"command": "touch made.txt"}
    assert request["tool_use_id"] == fake_llm_tool_id(agent, 0)
    assert request["description"] == "Run: touch made.txt" and "touch" in request["decision_reason"]
    assert request["permission_suggestions"] == [
        {"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "touch:*"}], "behavior": "allow",
         "destination": "session"}
    ]  # fmt: skip
    agent.answer(ask["request_id"], {"behavior": "deny", "message": "not now", "interrupt": True})
    result = agent.result()
    assert agent.close() == 1
    assert result["subtype"] == "error_during_execution"
    assert result["permission_denials"][0]["tool_name"] == "Bash"
    tool_results = next(line for line in agent.seen if line["type"] == "user")["message"]["content"]
    assert tool_results[0]["content"] == "not now" and tool_results[0]["is_error"] is True
    assert tool_results[1]["is_error"] is True  # the call after it was skipped: the turn ended
    assert not (tmp_path / "made.txt").exists()
    assert len(fake_llm.requests) == 1


def fake_llm_tool_id(agent: Ram, index: int) -> str:
    """The id of the `index`-th tool call in the assistant lines seen so far."""
    uses = [b for line in agent.seen if line["type"] == "assistant" for b in line["message"]["content"]]
    return str([b for b in uses if b["type"] == "tool_use"][index]["id"])


def test_without_a_prompt_tool_what_needs_asking_is_denied(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(Reply(tool_calls=[ToolCall("Bash", {"command": "touch made.txt"})]), Reply(text="ok"))
    agent = Ram(env=env_for("openai", fake_llm), cwd=tmp_path)
    agent.user("make a file")
    result = agent.result()
    assert agent.close() == 0
    assert not any(line["type"] == "control_request" for line in agent.seen)
    assert result["permission_denials"][0]["tool_input"] == {"command": "touch made.txt"}
    assert not (tmp_path / "made.txt").exists()


def test_set_permission_mode_answers_and_reports_the_new_mode(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(Reply(tool_calls=[ToolCall("Bash", {"command": "touch made.txt"})]), Reply(text="ok"))
    agent = Ram("--permission-prompt-tool", "stdio", env=env_for("openai", fake_llm), cwd=tmp_path)
    changed = agent.response(agent.control("set_permission_mode", mode="acceptEdits"))
    assert changed["response"] == {"mode": "acceptEdits"}
    status = agent.next()
    assert status["type"] == "system" and status["subtype"] == "status" and status["permissionMode"] == "acceptEdits"
    refused = agent.response(agent.control("set_permission_mode", mode="bypassPermissions"))
    assert refused["subtype"] == "error" and "--allow-dangerously-skip-permissions" in refused["error"]
    assert agent.response(agent.control("set_permission_mode", mode="sideways"))["subtype"] == "error"
    agent.response(agent.control("set_permission_mode", mode="dontAsk"))
    agent.user("make a file")
    result = agent.result()
    assert agent.close() == 0
    init = next(line for line in agent.seen if line.get("subtype") == "init")
    assert init["permissionMode"] == "dontAsk"
    # dontAsk: nobody is asked, even with a prompt tool; what would be asked is denied
    assert not any(line["type"] == "control_request" for line in agent.seen)
    assert result["permission_denials"] and not (tmp_path / "made.txt").exists()


def test_hooks_registered_at_initialize_and_a_client_that_went_away(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    """A PreToolUse hook nobody can answer any more (stdin closed) blocks its call: a guard fails closed."""
    fake_llm.enqueue(Reply(tool_calls=[ToolCall("Bash", {"command": "touch made.txt"})]), Reply(text="ok"))
    agent = Ram("--allowed-tools", "Bash(touch:*)", env=env_for("openai", fake_llm), cwd=tmp_path)
    hooks = {
        "PreToolUse": [{"matcher": "Bash", "hookCallbackIds": ["hook_0"], "timeout": 30}],
        "NoSuchEvent": [{"matcher": None, "hookCallbackIds": ["hook_1"]}],
    }
    agent.response(agent.control("initialize", hooks=hooks))
    agent.user("make a file")
    assert agent.close() == 0
    assert "NoSuchEvent" in agent.stderr
    result_block = next(line for line in agent.seen if line["type"] == "user")["message"]["content"][0]
    assert result_block["is_error"] is True and "gone away" in result_block["content"]
    assert not (tmp_path / "made.txt").exists()


def test_hook_callback_request_and_its_answer(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("Read", {"file_path": "a.txt"}), ToolCall("Bash", {"command": "echo hi"})]),
        Reply(text="ok"),
    )
    (tmp_path / "a.txt").write_text("a\n")
    agent = Ram(env=env_for("openai", fake_llm), cwd=tmp_path)
    agent.response(agent.control("initialize", hooks={"PreToolUse": [{"matcher": "Bash", "hookCallbackIds": ["h"]}]}))
    agent.user("go")
    ask = agent.until(lambda d: d["type"] == "control_request")["request"]
    assert ask["subtype"] == "hook_callback" and ask["callback_id"] == "h"
    hook_input = ask["input"]
    assert hook_input["hook_event_name"] == "PreToolUse" and hook_input["tool_name"] == "Bash"
    assert hook_input["tool_input"] == {"command": "echo hi"} and ask["tool_use_id"] == hook_input["tool_use_id"]
    assert hook_input["cwd"] == str(tmp_path.resolve()) and UUID.match(hook_input["session_id"])
    request_id = agent.seen[-1]["request_id"]
    agent.answer(request_id, {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                                     "permissionDecisionReason": "no shell"}})  # fmt: skip
    agent.result()
    assert agent.close() == 0
    sent = [m for m in fake_llm.requests[-1].body["messages"] if m["role"] == "tool"]
    assert sent[0]["content"] == "1\ta" and "no shell" in sent[1]["content"]
    assert sum(line["type"] == "control_request" for line in agent.seen) == 1  # Read did not match "Bash"


def test_a_budget_stops_the_turn(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(Reply(tool_calls=[ToolCall("Echo", {"message": "x"})]), Reply(text="never"))
    agent = Ram("--max-budget-usd", "0.00001", env=env_for("openai", fake_llm), cwd=tmp_path)
    agent.user("spend")
    result = agent.result()
    assert agent.close() == 1
    assert result["subtype"] == "error_max_budget_usd" and result["errors"] == ["Reached maximum budget ($1e-05)"]
    assert len(fake_llm.requests) == 1
    parsed_by_the_sdk(agent.seen)


def test_set_model_switches_and_default_switches_back(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(Reply(text="a"), Reply(text="b"))
    agent = Ram("--model", "first-model", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert "response" not in agent.response(agent.control("set_model", model="other-model"))
    agent.user("one")
    agent.result()
    agent.response(agent.control("set_model", model="default"))
    agent.user("two")
    agent.result()
    assert agent.close() == 0
    assert [r.body["model"] for r in fake_llm.requests] == ["other-model", "first-model"]
    models = [line["message"]["model"] for line in agent.seen if line["type"] == "assistant"]
    assert models == ["other-model", "first-model"]


# ---- the flags, in one-shot runs ----


def test_the_exact_claude_code_one_shot_command_line(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(Reply(text="streamed in pieces", chunk_size=3))
    proc = ram(
        "-p", "say it", "--output-format", "stream-json", "--verbose", "--include-partial-messages",
        env=env_for("anthropic", fake_llm), cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    parsed_by_the_sdk(lines)
    events = [line["event"] for line in lines if line["type"] == "stream_event"]
    assert [e["type"] for e in events][:2] == ["message_start", "content_block_start"]
    assert events[-1]["type"] == "message_stop"
    text = "".join(e["delta"]["text"] for e in events if e["type"] == "content_block_delta")
    assert text == "streamed in pieces"
    assert lines[0]["subtype"] == "init" and lines[-1]["result"] == "streamed in pieces"


def test_help_lists_the_compatibility_flags_and_unknown_flags_still_fail(tmp_path: Path) -> None:
    helped = ram("--help", env=env_for(None, None), cwd=tmp_path)
    assert helped.returncode == 0
    for flag in ("--input-format", "--system-prompt", "--permission-prompt-tool", "--mcp-config", "--session-id"):
        assert flag in helped.stdout
    assert "accepted for Claude Code compatibility, no effect" in helped.stdout
    assert "--fallback-model" in helped.stdout and "--max-thinking-tokens" in helped.stdout
    assert ram("-v", env=env_for(None, None), cwd=tmp_path).stdout.strip() == "react-agent-mini 0.1.0"
    unknown = ram("--no-such-flag", "x", env=env_for(None, None), cwd=tmp_path)
    assert unknown.returncode == 2 and "--no-such-flag" in unknown.stderr


def test_claude_code_acp_command_line_is_accepted(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    """claude-code-acp's argv, captured (reference §1.1): every flag parses; the SDK-hosted server costs a line."""
    session = "bad6679c-a901-4608-9d49-089a1dac4ae3"
    argv = [
        sys.executable, "-m", "react_agent_mini", "--output-format", "stream-json", "--verbose", "--input-format",
        "stream-json", "--permission-prompt-tool", "stdio", "--disallowedTools", "AskUserQuestion", "--tools",
        "default", "--mcp-config", '{"mcpServers":{"acp":{"type":"sdk","name":"acp"}}}', "--setting-sources",
        "user,project,local", "--permission-mode", "default", "--allow-dangerously-skip-permissions",
        "--include-partial-messages", "--session-id", session, "--max-thinking-tokens", "1024", "--effort", "high",
    ]  # fmt: skip
    fake_llm.enqueue(Reply(text="hi from ram"))
    user = {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "hello"}]},
            "session_id": session, "parent_tool_use_id": None}  # fmt: skip
    proc = subprocess.run(
        argv, input=json.dumps(user) + "\n", capture_output=True, text=True, env=env_for("openai", fake_llm),
        cwd=tmp_path, timeout=WAIT,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "'acp'" in proc.stderr and "skipped" in proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert lines[-1]["session_id"] == session and lines[-1]["result"] == "hi from ram"
    shells = ["BashOutput", "KillShell"]  # the background shells Bash starts (run_in_background)
    builtin = ["Read", "Write", "Edit", "Glob", "Grep", "Bash", *shells, "WebFetch", "TodoWrite", "Agent"]
    assert lines[0]["tools"] == builtin  # not the Echo demo tool (issue 28)


def test_system_prompt_flags(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("Project rule: tabs, never spaces.\n")
    (tmp_path / "prompt.txt").write_text("You are a file-based assistant.")
    fake_llm.enqueue(Reply(text="1"), Reply(text="2"), Reply(text="3"))
    env = env_for("openai", fake_llm)
    assert ram("--system-prompt", "You are terse.", "--append-system-prompt", "Sign off.", "q", env=env,
               cwd=tmp_path).returncode == 0  # fmt: skip
    assert ram("--system-prompt", "", "q", env=env, cwd=tmp_path).returncode == 0
    assert ram("--system-prompt-file", "prompt.txt", "q", env=env, cwd=tmp_path).returncode == 0
    replaced, own, from_file = (system_of(r) for r in fake_llm.requests)
    first_line = BASE_PROMPT.splitlines()[0][:60]
    assert replaced.startswith("You are terse.") and first_line not in replaced
    assert "tabs, never spaces" in replaced and replaced.rstrip().endswith("Sign off.")
    assert first_line in own and "tabs, never spaces" in own
    assert from_file.startswith("You are a file-based assistant.")
    both = ram("--system-prompt", "x", "--system-prompt-file", "prompt.txt", "q", env=env, cwd=tmp_path)
    missing = ram("--system-prompt-file", "nope.txt", "q", env=env, cwd=tmp_path)
    for proc in (both, missing):
        assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1 and "Traceback" not in proc.stderr


def test_tools_and_mcp_config_flags(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    from ..fakes.mcp_servers import support

    def init_of(*args: str) -> dict[str, Any]:
        fake_llm.enqueue(Reply(text="ok"))
        proc = ram("--output-format", "stream-json", *args, "q", env=env_for("openai", fake_llm), cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        return dict(json.loads(proc.stdout.splitlines()[0]))

    assert init_of("--tools", "Read,Grep")["tools"] == ["Read", "Grep"]
    assert init_of("--tools", "")["tools"] == []
    config = {"mcpServers": {"tb": {"command": sys.executable, "args": [str(support.TOOLBOX)]}}}
    (tmp_path / "servers.json").write_text(json.dumps(config))
    init = init_of("--tools", "Read", "--mcp-config", "servers.json", "--strict-mcp-config")
    assert "mcp__tb__echo" in init["tools"] and init["mcp_servers"] == [{"name": "tb", "status": "connected"}]
    bad = ram("--mcp-config", "{not json", "q", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert bad.returncode == 2 and bad.stderr.startswith("error: --mcp-config") and len(bad.stderr.splitlines()) == 1


@pytest.mark.usefixtures("trusted")  # the project's own configuration applies
def test_settings_and_setting_sources(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    (tmp_path / ".agents").mkdir()
    (tmp_path / ".agents" / "settings.json").write_text(json.dumps({"permissions": {"allow": ["Bash(touch:*)"]}}))

    def denied(*args: str) -> tuple[bool, str]:
        fake_llm.enqueue(Reply(tool_calls=[ToolCall("Bash", {"command": "touch made.txt"})]), Reply(text="ok"))
        proc = ram("--output-format", "json", *args, "q", env=env_for("openai", fake_llm), cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        (tmp_path / "made.txt").unlink(missing_ok=True)
        return bool(json.loads(proc.stdout)["permission_denials"]), proc.stderr

    assert denied() == (False, "")  # the project file allows it
    assert denied("--setting-sources", "user")[0] is True  # ...unless project files are not loaded
    assert denied("--setting-sources", "user,project")[0] is False
    given = json.dumps({"permissions": {"deny": ["Bash(touch:*)"]}, "sandbox": {"enabled": True}})
    refused, stderr = denied("--settings", given)
    assert refused is True and "ignored: sandbox" in stderr
    broken = ram("--settings", '{"permissions": {"deny": [', "q", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert broken.returncode == 2 and "--settings" in broken.stderr
    unknown = ram("--setting-sources", "user,team", "q", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert unknown.returncode == 2 and "'team'" in unknown.stderr


def test_session_flags(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    env = env_for("openai", fake_llm)
    chosen = "0b7e2f43-5a1c-4d2e-9f00-123456789abc"

    def run(*args: str) -> dict[str, Any]:
        fake_llm.enqueue(Reply(text="ok"))
        proc = ram("--output-format", "json", *args, env=env, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        return dict(json.loads(proc.stdout))

    assert run("--session-id", chosen, "first")["session_id"] == chosen
    taken = ram("--session-id", chosen, "again", env=env, cwd=tmp_path)
    assert taken.returncode == 2 and "already exists" in taken.stderr
    assert ram("--session-id", "not-a-uuid", "q", env=env, cwd=tmp_path).returncode == 2
    assert run(f"--resume={chosen}", "second")["session_id"] == chosen  # the SDK passes the `=` form
    assert "first" in json.dumps(fake_llm.requests[-1].body["messages"])
    forked = run(f"--resume={chosen}", "--fork-session", "third")
    assert forked["session_id"] != chosen and "second" in json.dumps(fake_llm.requests[-1].body["messages"])
    sessions = Path(env["XDG_DATA_HOME"]) / "react-agent-mini" / "sessions"
    before = sorted(sessions.rglob("*.jsonl"))
    unsaved = run("--no-session-persistence", "fourth")
    assert sorted(sessions.rglob("*.jsonl")) == before and unsaved["session_id"] not in json.dumps(
        [str(p) for p in before]
    )


def test_an_allow_that_switches_the_mode(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    """`updatedPermissions` with `setMode` (the suggestion offered for edits): later edits are not asked for."""
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("Write", {"file_path": "a.txt", "content": "a\n"})]),
        Reply(tool_calls=[ToolCall("Write", {"file_path": "b.txt", "content": "b\n"})]),
        Reply(text="both written"),
    )
    agent = Ram("--permission-prompt-tool", "stdio", env=env_for("openai", fake_llm), cwd=tmp_path)
    agent.user("write two files")
    ask = agent.until(lambda d: d["type"] == "control_request")
    suggestions = ask["request"]["permission_suggestions"]
    assert {"type": "setMode", "mode": "acceptEdits", "destination": "session"} in suggestions
    assert ask["request"]["blocked_path"] == str((tmp_path / "a.txt").resolve())
    answer = {"behavior": "allow", "updatedInput": ask["request"]["input"], "updatedPermissions": [suggestions[-1]]}
    agent.answer(ask["request_id"], answer)
    status = agent.until(lambda d: d["type"] == "system")
    assert status["subtype"] == "status" and status["permissionMode"] == "acceptEdits"
    assert agent.result()["result"] == "both written"
    assert agent.close() == 0
    assert sum(line["type"] == "control_request" for line in agent.seen) == 1
    assert (tmp_path / "a.txt").read_text() == "a\n" and (tmp_path / "b.txt").read_text() == "b\n"
