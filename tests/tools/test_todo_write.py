"""TodoWrite: the task list with Claude Code's fields — kept by the tool, put back after `/compact`, taken from the
history of a resumed session, carried in stream-json as the tool call itself and sent to an editor as an ACP
`plan` (where a subagent's calls get cards too, and custom commands are offered)."""

from __future__ import annotations

import json
from pathlib import Path

from acp import text_block

from react_agent_mini.messages import Message, ToolResultBlock, ToolUseBlock
from react_agent_mini.tools.base import ToolContext
from react_agent_mini.tools.builtin.todo import Todo, TodoWriteTool

from ..acp.acp_editor import Editor, agent
from ..fakes.fake_llm import FakeLLMServer, Reply, ToolCall
from ..stream_json.test_sdk_protocol import Ram
from ..test_cli import env_for

PLAN = {
    "todos": [
        {"content": "Read the code", "status": "completed", "activeForm": "Reading the code"},
        {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
        {"content": "Run the tests", "status": "pending", "activeForm": "Running the tests"},
    ]
}


async def test_the_tool_keeps_the_latest_list_and_reminds_of_it(tmp_path: Path) -> None:
    tool = TodoWriteTool()
    schema = tool.input_schema()
    item = schema["properties"]["todos"]["items"]
    assert item["required"] == ["content", "status", "activeForm"] and set(item["properties"]) == set(item["required"])
    output = await tool.call(tool.validate(PLAN), ToolContext(cwd=tmp_path))
    assert output.content.startswith("Todos have been modified successfully.") and not output.is_error
    assert tool.todos[1] == Todo("Fix the bug", "in_progress", "Fixing the bug")
    assert tool.describe_call(PLAN) == "1/3 done"
    (reminder,) = tool.reminder()
    assert reminder.meta and reminder.text.splitlines()[1:] == [
        "[x] Read the code",
        "[~] Fix the bug",
        "[ ] Run the tests",
    ]
    lenient = tool.validate({"todos": [{"content": "x", "status": "pending", "id": "1", "priority": "high"}]})
    assert lenient.todos[0].active_form == "" and lenient.todos[0].priority == "high"
    done = {"todos": [{**t, "status": "completed"} for t in PLAN["todos"]]}
    await tool.call(tool.validate(done), ToolContext(cwd=tmp_path))
    assert tool.reminder() == []  # nothing left to do: nothing to remind of


def test_a_resumed_session_takes_the_list_from_its_last_successful_call() -> None:
    older = {"todos": [{"content": "old", "status": "pending", "activeForm": "Doing old"}]}
    history = [
        Message("assistant", (ToolUseBlock("a", "TodoWrite", older),)),
        Message("user", (ToolResultBlock("a", "ok"),)),
        Message("assistant", (ToolUseBlock("b", "TodoWrite", PLAN),)),
        Message("user", (ToolResultBlock("b", "failed", is_error=True),)),
    ]
    tool = TodoWriteTool()
    tool.restore(history)
    assert [t.content for t in tool.todos] == ["old"]


def test_the_list_survives_compact(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("TodoWrite", PLAN)]),
        Reply(text="Planned."),
        Reply(text="Working on it."),
        Reply(text="SUMMARY: read the code, fixing the bug."),
        Reply(text="Still on it."),
    )
    agent = Ram(env=env_for("openai", fake_llm), cwd=tmp_path)
    agent.user("plan the fix")
    agent.result()
    agent.user("go on")
    agent.result()
    agent.user("/compact")
    compacted = agent.result()
    agent.user("status?")
    agent.result()
    assert agent.close() == 0
    assert compacted["is_error"] is False and "Compacted the conversation" in compacted["result"]
    call = next(line for line in agent.seen if line["type"] == "assistant")["message"]["content"][0]
    assert call["type"] == "tool_use" and call["name"] == "TodoWrite" and call["input"] == PLAN  # as the SDK sees it
    after = json.dumps(fake_llm.requests[-1].body["messages"])
    assert "Your todo list (TodoWrite) as it stood before the conversation was summarised" in after
    assert "[~] Fix the bug" in after and "SUMMARY: read the code" in after


async def test_acp_gets_a_plan_cards_for_a_subagents_calls_and_the_custom_commands(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    (tmp_path / ".claude" / "commands").mkdir(parents=True)
    (tmp_path / ".claude" / "commands" / "plan.md").write_text("---\ndescription: Plan the work\n---\nPlan $1.\n")
    (tmp_path / "a.txt").write_text("a\n")
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("TodoWrite", PLAN)]),
        Reply(
            tool_calls=[
                ToolCall("Agent", {"description": "read a", "prompt": "Read a.txt", "subagent_type": "Explore"})
            ]
        ),
        Reply(tool_calls=[ToolCall("Read", {"file_path": "a.txt"})]),
        Reply(text="a.txt holds a"),
        Reply(text="Done."),
    )
    editor = Editor()
    stderr = tmp_path / "stderr.txt"
    async with agent(editor, tmp_path, env_for("openai", fake_llm), stderr) as (conn, _):
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        await editor.wait_until(lambda: "available_commands_update" in editor.kinds())
        answer = await conn.prompt(session_id=session.session_id, prompt=[text_block("/plan the fix")])
    assert answer.stop_reason == "end_turn"
    assert fake_llm.requests[0].body["messages"][-1]["content"] == "Plan the."  # `$1` is the first word
    updates = editor.dumped()
    offered = next(u for u in updates if u["sessionUpdate"] == "available_commands_update")
    listed = {c["name"]: c for c in offered["availableCommands"]}
    assert list(listed)[:3] == ["compact", "init", "plan"]  # every front end's built-ins, then the commands
    assert {"name": "plan", "description": "Plan the work"}.items() <= listed["plan"].items()
    (plan,) = [u for u in updates if u["sessionUpdate"] == "plan"]
    assert plan["entries"] == [
        {"content": "Read the code", "priority": "medium", "status": "completed"},
        {"content": "Fix the bug", "priority": "medium", "status": "in_progress"},
        {"content": "Run the tests", "priority": "medium", "status": "pending"},
    ]
    cards = [u for u in updates if u["sessionUpdate"] == "tool_call"]
    assert [c["title"].split()[0] for c in cards] == ["TodoWrite", "Agent", "Read"]  # the subagent's Read too
    read_id = cards[2]["toolCallId"]
    assert editor.tool_updates(read_id)[-1]["status"] == "completed"
    assert "a.txt holds a" not in editor.text()  # the subagent's words are for the main agent
    assert "Traceback" not in stderr.read_text()
