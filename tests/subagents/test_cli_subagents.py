"""Subagents end to end: `ram` with the Agent tool, agent files in `.claude/agents/`, the loopback fake LLM answering
the main agent and each subagent by what it was asked (`Conversations`), real tools and real shell commands."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from ..fakes.fake_llm import FakeLLMServer, RecordedRequest, Reply, Script, ToolCall
from ..test_cli import assert_no_traceback, env_for, ram

MAIN = "main"


class Conversations:
    """A responder for the fake server: the main agent's requests get the `MAIN` replies in order; a subagent's (its
    system prompt is not ram's) get the replies listed under the words its task starts with."""

    def __init__(self, replies: dict[str, Sequence[Script]]) -> None:
        self.replies = {key: list(value) for key, value in replies.items()}
        self.seen: dict[str, list[RecordedRequest]] = {key: [] for key in replies}
        self.lock = threading.Lock()

    def key(self, request: RecordedRequest) -> str:
        messages = request.body["messages"]
        if messages[0]["content"].startswith("You are react-agent-mini"):
            return MAIN
        first = next(m["content"] for m in messages if m["role"] == "user")
        return next(key for key in self.replies if key != MAIN and first.startswith(key))

    def __call__(self, request: RecordedRequest) -> Script:
        with self.lock:
            key = self.key(request)
            self.seen[key].append(request)
            return self.replies[key].pop(0) if self.replies[key] else Reply(text=f"({key}: no reply left)")


def agent(description: str, prompt: str, kind: str | None = None, name: str = "Agent") -> ToolCall:
    args = {"description": description, "prompt": prompt}
    if kind is not None:
        args["subagent_type"] = kind
    return ToolCall(name, args)


def tool_results(request: RecordedRequest) -> list[str]:
    return [str(m["content"]) for m in request.body["messages"] if m["role"] == "tool"]


def tool_names(request: RecordedRequest) -> list[str]:
    return [t["function"]["name"] for t in request.body["tools"]]


REVIEWER = """\
---
name: code-reviewer
description: Reviews code for bugs. Use after changing code.
tools: Read, Grep, Glob
---

You are a strict reviewer. Report problems with file and line.
"""


def project(tmp_path: Path) -> Path:
    (tmp_path / ".claude" / "agents").mkdir(parents=True)
    (tmp_path / ".claude" / "agents" / "code-reviewer.md").write_text(REVIEWER)
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    return tmp_path


def test_a_subagent_reads_files_and_its_report_is_the_tool_result(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    root = project(tmp_path)
    talk = Conversations(
        {
            MAIN: [
                Reply(tool_calls=[agent("review calc", "Review calc.py for bugs", "code-reviewer")]),
                Reply(text="The reviewer found that add subtracts."),
            ],
            "Review calc.py": [
                Reply(
                    tool_calls=[
                        ToolCall("Read", {"file_path": "calc.py"}),
                        ToolCall("Write", {"file_path": "calc.py", "content": "fixed"}),
                    ]
                ),
                Reply(text="calc.py:2 add() returns a - b; it should be a + b."),
            ],
        }
    )
    fake_llm.set_responder(talk)
    proc = ram("--output-format", "stream-json", "review my code", env=env_for("openai", fake_llm), cwd=root)
    assert_no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    main, sub = talk.seen[MAIN], talk.seen["Review calc.py"]
    assert len(main) == 2 and len(sub) == 2
    # its own context: its system prompt is the agent file's body, its history only the task
    assert sub[0].body["messages"][0]["content"].startswith("You are a strict reviewer.")
    assert [m["role"] for m in sub[0].body["messages"]] == ["system", "user"]
    assert tool_names(sub[0]) == ["Read", "Glob", "Grep"]  # the definition's tools, in the session's order
    assert tool_results(sub[1]) == [
        "1\tdef add(a, b):\n2\t    return a - b",
        "Error: Unknown tool: Write. Available tools: Read, Glob, Grep.",
    ]
    assert (root / "calc.py").read_text() == "def add(a, b):\n    return a - b\n"  # the restriction held
    assert tool_results(main[1]) == ["calc.py:2 add() returns a - b; it should be a + b."]
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    agent_call = lines[1]["message"]["content"][0]
    assert agent_call["name"] == "Agent"
    inner = [line for line in lines if line.get("parent_tool_use_id")]
    assert [line["type"] for line in inner] == ["assistant", "user", "assistant"]
    assert {line["parent_tool_use_id"] for line in inner} == {agent_call["id"]}
    result = lines[-1]
    assert result["type"] == "result" and result["usage"]["input_tokens"] == 400  # its two calls count too
    assert lines[0]["agents"] == ["code-reviewer", "general-purpose", "Explore"]
    # its transcript, beside the session's
    session_file = next((Path(os.environ["XDG_DATA_HOME"]) / "react-agent-mini" / "sessions").rglob("*.jsonl"))
    kept = list(session_file.with_suffix("").glob("subagents/agent-*.jsonl"))
    assert len(kept) == 1
    records = [json.loads(line) for line in kept[0].read_text().splitlines()]
    assert records[0]["type"] == "meta" and records[0]["agent_type"] == "code-reviewer"
    assert records[0]["parent_session_id"] == session_file.stem
    assert [r["message"]["role"] for r in records[1:] if r["type"] == "message"] == [
        "user",
        "assistant",
        "user",
        "assistant",
    ]
    assert [r["type"] for r in records].count("call") == 2  # each of its model calls, with what it cost


def test_a_subagent_cannot_start_subagents_and_task_names_the_agent_tool(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    talk = Conversations(
        {
            MAIN: [Reply(tool_calls=[agent("dig", "Dig into the repo", name="Task")]), Reply(text="done")],
            "Dig into": [Reply(tool_calls=[agent("deeper", "Go deeper")]), Reply(text="could not go deeper")],
        }
    )
    fake_llm.set_responder(talk)
    proc = ram("dig", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    sub = talk.seen["Dig into"]
    assert "Agent" not in tool_names(sub[0]) and "TodoWrite" not in tool_names(sub[0])
    assert tool_results(sub[1])[0].startswith("Error: Unknown tool: Agent.")
    assert tool_results(talk.seen[MAIN][1]) == ["could not go deeper"]
    shown = proc.stderr.splitlines()
    at = shown.index("[tool] Task: dig (general-purpose)")  # the subagent's own calls, indented under it
    assert shown[at + 1] == "  [tool] Agent: deeper (general-purpose)"
    assert shown[at + 2].startswith("  [tool] Agent error — Unknown tool: Agent. Available tools: Read, Write, ")


def test_two_subagents_run_in_parallel(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    # Each one waits for the other's file: run one after the other, the first would wait for ever (its Bash
    # command times out after 20 s and the test fails); run together, both finish.
    def meet(mine: str, other: str) -> ToolCall:
        command = f"touch {mine}.ready && while [ ! -e {other}.ready ]; do sleep 0.05; done && echo met {other}"
        return ToolCall("Bash", {"command": command, "timeout": 20000})

    talk = Conversations(
        {
            MAIN: [
                Reply(tool_calls=[agent("left", "Left side: wait for right"), agent("right", "Right side: wait")]),
                Reply(text="both met"),
            ],
            "Left side": [Reply(tool_calls=[meet("left", "right")]), Reply(text="left met right")],
            "Right side": [Reply(tool_calls=[meet("right", "left")]), Reply(text="right met left")],
        }
    )
    fake_llm.set_responder(talk)
    proc = ram("meet", env=env_for("openai", fake_llm, ALLOW_WRITE="1"), cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    assert tool_results(talk.seen["Left side"][1]) == ["met right"]
    assert tool_results(talk.seen["Right side"][1]) == ["met left"]
    assert tool_results(talk.seen[MAIN][1]) == ["left met right", "right met left"]  # in call order


def test_the_sessions_permissions_apply_to_a_subagent(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    (tmp_path / ".agents").mkdir()
    (tmp_path / ".agents" / "settings.json").write_text(json.dumps({"permissions": {"deny": ["Read(./secret.txt)"]}}))
    (tmp_path / "secret.txt").write_text("hunter2\n")
    talk = Conversations(
        {
            MAIN: [Reply(tool_calls=[agent("peek", "Peek at files")]), Reply(text="ok")],
            "Peek": [
                Reply(
                    tool_calls=[
                        ToolCall("Read", {"file_path": "secret.txt"}),
                        ToolCall("Write", {"file_path": "new.txt", "content": "x"}),
                    ]
                ),
                Reply(text="denied twice"),
            ],
        }
    )
    fake_llm.set_responder(talk)
    proc = ram("--output-format", "json", "peek", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    read, write = tool_results(talk.seen["Peek"][1])
    assert "blocked by the deny rule Read(./secret.txt)" in read and "hunter2" not in json.dumps(
        fake_llm.requests[-1].body
    )
    assert (
        write.startswith("Error: Permission denied: Write new.txt needs approval")
        and not (tmp_path / "new.txt").exists()
    )
    result = json.loads(proc.stdout)
    assert [d["tool_name"] for d in result["permission_denials"]] == ["Read", "Write"]


def test_the_explore_agent_is_read_only_in_any_mode(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    talk = Conversations(
        {
            MAIN: [Reply(tool_calls=[agent("look", "Look around", "Explore")]), Reply(text="ok")],
            "Look around": [Reply(tool_calls=[ToolCall("Bash", {"command": "touch made.txt"})]), Reply(text="looked")],
        }
    )
    fake_llm.set_responder(talk)
    env = env_for("openai", fake_llm, ALLOW_WRITE="1")
    proc = ram("--permission-mode", "bypassPermissions", "look", env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert tool_results(talk.seen["Look around"][1]) == [
        "Error: This agent is read-only, so Run: touch made.txt was not run. Use read-only tools, and put what should "
        "change in your report."
    ]
    assert not (tmp_path / "made.txt").exists()


@pytest.mark.usefixtures("trusted")  # the project's own configuration applies
def test_a_subagent_stop_hook_sees_the_agent(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    seen = tmp_path / "subagent-stop.json"
    hooks: dict[str, Any] = {"SubagentStop": [{"hooks": [{"type": "command", "command": f"cat > {seen}"}]}]}
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    talk = Conversations(
        {
            MAIN: [Reply(tool_calls=[agent("count", "Count files", "Explore")]), Reply(text="ok")],
            "Count": [Reply(text="3")],
        }
    )
    fake_llm.set_responder(talk)
    proc = ram("count", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    event = json.loads(seen.read_text())
    assert event["hook_event_name"] == "SubagentStop" and event["agent_type"] == "Explore"
    assert event["stop_hook_active"] is False and len(event["agent_id"]) == 16
    assert event["agent_transcript_path"].endswith(f"agent-{event['agent_id']}.jsonl")


def test_agent_files_are_found_nearest_first_with_the_users_last(tmp_path: Path) -> None:
    from react_agent_mini.subagents.definitions import discover_agents

    user = Path(os.environ["XDG_CONFIG_HOME"]) / "react-agent-mini"
    files = {
        tmp_path / ".claude/agents/code-reviewer.md": REVIEWER,
        tmp_path / ".agents/agents/reviewer-too.md": "---\nname: code-reviewer\n---\nOurs wins.\n",
        tmp_path
        / ".claude/agents/listed.md": "---\ndescription: >\n  Two\n  lines\ntools:\n  - Read\n  - Bash(git log:*)\n"
        "model: haiku\n---\nList things.\n",
        tmp_path / ".claude/agents/empty.md": "---\nname: empty\n---\n\n",
        user / "agents/helper.md": "Help out.\n",
        user / "agents/listed.md": "The project's listed wins.\n",
    }
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    found, warnings = discover_agents(tmp_path, user)
    shown = [(a.name, a.description, a.tools, a.model, a.scope, a.prompt) for a in found]
    assert shown == [
        ("code-reviewer", "the code-reviewer agent (reviewer-too.md)", None, "", "project", "Ours wins."),
        ("listed", "Two lines", ("Read", "Bash"), "haiku", "project", "List things."),
        ("helper", "the helper agent (helper.md)", None, "", "user", "Help out."),
    ]
    assert warnings == [
        f"{tmp_path / '.claude/agents/empty.md'}: the agent has no system prompt (its body is empty); agent skipped"
    ]


def test_agents_a_driving_program_defines_at_initialize(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    from ..stream_json.test_sdk_protocol import Ram

    talk = Conversations(
        {
            MAIN: [Reply(tool_calls=[agent("haiku", "Write a haiku about tests", "poet")]), Reply(text="here it is")],
            "Write a haiku": [Reply(text="green bar at midnight")],
        }
    )
    fake_llm.set_responder(talk)
    sdk = Ram(env=env_for("openai", fake_llm), cwd=tmp_path)
    poet = {"description": "Writes haiku", "prompt": "You write haiku.", "tools": ["Read"], "model": "inherit"}
    init = sdk.response(sdk.control("initialize", agents={"poet": poet, "broken": {"description": "no prompt"}}))
    assert [a["name"] for a in init["response"]["agents"]] == ["poet", "general-purpose", "Explore"]
    sdk.user("write one")
    result = sdk.result()
    assert sdk.close() == 0
    assert result["result"] == "here it is"
    sub = talk.seen["Write a haiku"][0]
    assert sub.body["messages"][0]["content"].startswith("You write haiku.") and tool_names(sub) == ["Read"]
    assert "- poet: Writes haiku (Tools: Read)" in json.dumps(talk.seen[MAIN][0].body["tools"])
    assert "warning: initialize: agents: 'broken' needs a `prompt`; ignored" in sdk.stderr
