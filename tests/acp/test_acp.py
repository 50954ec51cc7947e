"""`ram acp` driven by the `agent-client-protocol` package's client side, as an editor drives it: the loopback fake
LLM is the model, the tools run for real in a temporary workspace, and the editor (`acp_editor.Editor`) answers
what the agent asks.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block

from ..fakes.fake_llm import FakeLLMServer, Hang, Reply, ToolCall
from ..processes import pids_with
from ..test_cli import WIRES, env_for
from .acp_editor import Editor, agent


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "work"
    root.mkdir()
    (root / "hello.txt").write_text("hello from the file\n")
    return root


@pytest.fixture
def stderr(tmp_path: Path) -> Path:
    return tmp_path / "agent-stderr.txt"


def clean(stderr: Path) -> None:
    text = stderr.read_text() if stderr.exists() else ""
    assert "Traceback" not in text, text


def last_messages(server: FakeLLMServer) -> str:
    return json.dumps(server.requests[-1].body["messages"])


@pytest.mark.parametrize("wire", WIRES)
async def test_a_prompt_streams_thinking_text_and_a_read_card(
    wire: str, workspace: Path, stderr: Path, fake_llm: FakeLLMServer
) -> None:
    fake_llm.enqueue(
        Reply(
            thinking="The file first.",
            text="Let me read it.",
            tool_calls=[ToolCall("Read", {"file_path": "hello.txt"})],
        ),
        Reply(text="It says hello."),
    )
    editor = Editor()
    async with agent(editor, workspace, env_for(wire, fake_llm), stderr) as (conn, init):
        assert init.protocol_version == 1 and init.agent_capabilities is not None
        offered = init.agent_capabilities
        assert offered.load_session and offered.prompt_capabilities and offered.prompt_capabilities.embedded_context
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        answer = await conn.prompt(session_id=session.session_id, prompt=[text_block("What does hello.txt say?")])
    assert answer.stop_reason == "end_turn"
    assert editor.text("agent_thought_chunk") == "The file first."
    assert editor.text() == "Let me read it.It says hello."
    assert len([k for k in editor.kinds() if k == "agent_message_chunk"]) > 2  # streamed, not sent whole
    call_id = fake_llm.requests[1].body["messages"][-1].get("tool_call_id") or next(
        b["tool_use_id"] for b in fake_llm.requests[1].body["messages"][-1]["content"] if b["type"] == "tool_result"
    )
    card, started, finished = editor.tool_updates(call_id)
    assert card["sessionUpdate"] == "tool_call" and card["status"] == "pending"
    assert card["kind"] == "read" and card["title"] == "Read hello.txt"
    assert card["locations"] == [{"path": str(workspace / "hello.txt"), "line": 0}]
    assert card["rawInput"] == {"file_path": "hello.txt"}
    assert started == {"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": "in_progress"}
    assert finished["status"] == "completed"
    assert "1\thello from the file" in finished["content"][0]["content"]["text"]
    kinds = editor.kinds()
    assert kinds.index("tool_call") < kinds.index("tool_call_update")
    assert "hello from the file" in last_messages(fake_llm)
    clean(stderr)


async def test_an_edit_asks_then_allowed_once_changes_the_file_and_a_reject_leaves_it(
    workspace: Path, stderr: Path, fake_llm: FakeLLMServer
) -> None:
    app = workspace / "app.py"
    app.write_text("x = 1\n")
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("Read", {"file_path": "app.py"}, id="read1")]),
        Reply(
            tool_calls=[
                ToolCall("Edit", {"file_path": "app.py", "old_string": "x = 1", "new_string": "x = 2"}, id="e1")
            ]
        ),
        Reply(text="Changed it."),
        Reply(
            tool_calls=[
                ToolCall("Edit", {"file_path": "app.py", "old_string": "x = 2", "new_string": "x = 3"}, id="e2")
            ]
        ),
        Reply(text="Understood."),
    )
    editor = Editor(answers=["allow_once", "reject_once"])
    async with agent(editor, workspace, env_for("openai", fake_llm), stderr) as (conn, _):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        first = await conn.prompt(session_id=session.session_id, prompt=[text_block("set x to 2")])
        assert first.stop_reason == "end_turn" and app.read_text() == "x = 2\n"
        second = await conn.prompt(session_id=session.session_id, prompt=[text_block("now 3")])
        assert second.stop_reason == "end_turn" and app.read_text() == "x = 2\n"
        assert len(fake_llm.requests) == 4  # the refusal ended the turn: no model call after it
        third = await conn.prompt(session_id=session.session_id, prompt=[text_block("ok, leave it")])
    assert third.stop_reason == "end_turn"
    assert "doesn't want to proceed" in last_messages(fake_llm)  # the model read the refusal, in a valid history
    allowed, rejected = editor.asked
    assert allowed.tool_call.tool_call_id == "e1" and rejected.tool_call.tool_call_id == "e2"
    assert allowed.option_ids == ["allow_once", "allow_always", "reject_once", "reject_always"]
    assert [o.name for o in allowed.options][1] == "Always allow Edit(./app.py)"
    card, *_, done = editor.tool_updates("e1")
    diff = {"type": "diff", "path": str(app), "oldText": "x = 1", "newText": "x = 2"}
    assert card["kind"] == "edit" and card["title"] == "Edit app.py" and card["content"] == [diff]
    assert card["locations"] == [{"path": str(app), "line": 0}]
    assert done["status"] == "completed" and done["content"] == [diff]
    assert editor.tool_updates("e2")[-1]["status"] == "failed"
    clean(stderr)


async def test_allow_always_records_the_narrow_rule_and_reject_always_a_deny_rule(
    workspace: Path, stderr: Path, fake_llm: FakeLLMServer
) -> None:
    (workspace / "a.txt").write_text("a\n")
    (workspace / "b.txt").write_text("b\n")

    def edit(name: str, old: str, new: str, call: str) -> ToolCall:
        return ToolCall("Edit", {"file_path": name, "old_string": old, "new_string": new}, id=call)

    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("Read", {"file_path": "a.txt"}), ToolCall("Read", {"file_path": "b.txt"})]),
        Reply(tool_calls=[edit("a.txt", "a", "A", "a1")]),
        Reply(tool_calls=[edit("a.txt", "A", "AA", "a2")]),  # covered by the rule "always" recorded: not asked
        Reply(tool_calls=[edit("b.txt", "b", "B", "b1")]),  # reject always: denied, the turn ends
        Reply(tool_calls=[edit("b.txt", "b", "BB", "b2")]),  # the session deny rule refuses it without asking
        Reply(text="I cannot edit b.txt."),
    )
    editor = Editor(answers=["allow_always", "reject_always"])
    async with agent(editor, workspace, env_for("openai", fake_llm), stderr) as (conn, _):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("edit both")])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("try b again")])
    assert [a.tool_call.tool_call_id for a in editor.asked] == ["a1", "b1"]
    assert (workspace / "a.txt").read_text() == "AA\n" and (workspace / "b.txt").read_text() == "b\n"
    assert "deny rule Edit(./b.txt)" in last_messages(fake_llm)
    clean(stderr)


async def test_cancel_while_the_answer_streams_returns_cancelled_and_the_session_goes_on(
    workspace: Path, stderr: Path, fake_llm: FakeLLMServer
) -> None:
    fake_llm.enqueue(Reply(text="word " * 400, chunk_size=5, delay=0.02), Reply(text="Still here."))
    editor = Editor()
    async with agent(editor, workspace, env_for("openai", fake_llm), stderr) as (conn, _):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        turn = asyncio.ensure_future(conn.prompt(session_id=session.session_id, prompt=[text_block("talk")]))
        await editor.wait_until(lambda: "agent_message_chunk" in editor.kinds())
        await conn.cancel(session_id=session.session_id)
        assert (await turn).stop_reason == "cancelled"
        assert len(editor.text()) < len("word " * 400)
        after = await conn.prompt(session_id=session.session_id, prompt=[text_block("are you there?")])
    assert after.stop_reason == "end_turn" and editor.text().endswith("Still here.")
    assert "are you there?" in last_messages(fake_llm)
    clean(stderr)


async def test_cancel_stops_a_running_command_and_answers_its_call(
    workspace: Path, stderr: Path, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    marker = f"ram-acp-cancel-{tmp_path.name}"
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("Bash", {"command": f"sleep 300 # {marker}"}, id="long")]),
        Reply(text="Stopped."),
    )
    editor = Editor()
    async with agent(editor, workspace, env_for("openai", fake_llm), stderr) as (conn, _):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.set_session_mode(session_id=session.session_id, mode_id="bypassPermissions")
        turn = asyncio.ensure_future(conn.prompt(session_id=session.session_id, prompt=[text_block("wait")]))
        await editor.wait_until(lambda: any(u.get("status") == "in_progress" for u in editor.tool_updates("long")))
        while not pids_with(marker):
            await asyncio.sleep(0.05)
        await conn.cancel(session_id=session.session_id)
        assert (await turn).stop_reason == "cancelled"
        assert not pids_with(marker)
        assert editor.tool_updates("long")[-1]["status"] == "failed"
        await conn.prompt(session_id=session.session_id, prompt=[text_block("what happened?")])
    assert "Interrupted" in last_messages(fake_llm)  # the call was answered before the next request
    assert editor.asked == []
    clean(stderr)


async def test_cancel_while_waiting_for_the_model(workspace: Path, stderr: Path, fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue(Hang(), Reply(text="Back."))
    editor = Editor()
    async with agent(editor, workspace, env_for("openai", fake_llm), stderr) as (conn, _):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        turn = asyncio.ensure_future(conn.prompt(session_id=session.session_id, prompt=[text_block("hi")]))
        await fake_llm.wait_for_requests_async(1)
        await conn.cancel(session_id=session.session_id)
        assert (await turn).stop_reason == "cancelled"
        after = await conn.prompt(session_id=session.session_id, prompt=[text_block("again")])
    assert after.stop_reason == "end_turn" and editor.text() == "Back."
    clean(stderr)


async def test_load_replays_an_earlier_session_and_continues_it(
    workspace: Path, stderr: Path, fake_llm: FakeLLMServer
) -> None:
    fake_llm.enqueue(
        Reply(text="Reading.", tool_calls=[ToolCall("Read", {"file_path": "hello.txt"}, id="r1")]),
        Reply(text="It greets you."),
        Reply(text="Yes, hello."),
    )
    env = env_for("openai", fake_llm)
    first = Editor()
    async with agent(first, workspace, env, stderr) as (conn, _):
        session_id = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        await conn.prompt(session_id=session_id, prompt=[text_block("read hello.txt")])
        listed = await conn.list_sessions(cwd=str(workspace))
    assert [s.session_id for s in listed.sessions] == [session_id]
    assert listed.sessions[0].title == "read hello.txt"
    again = Editor()
    async with agent(again, workspace, env, stderr) as (conn, _):
        loaded = await conn.load_session(cwd=str(workspace), session_id=session_id, mcp_servers=[])
        assert loaded.modes is not None and loaded.modes.current_mode_id == "default"
        replayed = again.dumped()
        answer = await conn.prompt(session_id=session_id, prompt=[text_block("does it?")])
    shown = [
        (
            u["sessionUpdate"],
            u.get("content", {}).get("text") if u["sessionUpdate"].endswith("chunk") else u.get("status"),
        )
        for u in replayed
    ]
    assert shown == [
        ("user_message_chunk", "read hello.txt"),
        ("agent_message_chunk", "Reading."),
        ("tool_call", "pending"),
        ("tool_call_update", "completed"),
        ("agent_message_chunk", "It greets you."),
    ]
    assert replayed[2]["title"] == "Read hello.txt" and replayed[2]["toolCallId"] == "r1"
    assert answer.stop_reason == "end_turn"
    sent = last_messages(fake_llm)
    assert "read hello.txt" in sent and "hello from the file" in sent and "does it?" in sent
    clean(stderr)


async def test_loading_a_session_that_does_not_exist_is_a_readable_error(
    workspace: Path, stderr: Path, fake_llm: FakeLLMServer
) -> None:
    async with agent(Editor(), workspace, env_for("openai", fake_llm), stderr) as (conn, _):
        with pytest.raises(RequestError) as caught:
            await conn.load_session(cwd=str(workspace), session_id="no-such-session", mcp_servers=[])
        with pytest.raises(RequestError) as prompt_error:
            await conn.prompt(session_id="no-such-session", prompt=[text_block("hi")])
    assert "no saved session 'no-such-session'" in str(caught.value)
    assert "session/new or session/load first" in str(prompt_error.value)
    clean(stderr)


async def test_without_a_key_session_new_and_authenticate_say_which_variables_to_set(
    workspace: Path, stderr: Path
) -> None:
    async with agent(Editor(), workspace, env_for(None, None), stderr) as (conn, init):
        assert [m.id for m in init.auth_methods or []] == ["environment"]
        with pytest.raises(RequestError) as new:
            await conn.new_session(cwd=str(workspace), mcp_servers=[])
        with pytest.raises(RequestError) as auth:
            await conn.authenticate(method_id="environment")
    for caught in (new.value, auth.value):
        assert caught.code == -32000 and "OPENAI_API_KEY" in str(caught) and "ANTHROPIC_API_KEY" in str(caught)
    clean(stderr)


async def test_with_a_key_authenticate_succeeds_and_an_unknown_version_gets_ours(
    workspace: Path, stderr: Path, fake_llm: FakeLLMServer
) -> None:
    async with agent(Editor(), workspace, env_for("openai", fake_llm), stderr) as (conn, _):
        await conn.authenticate(method_id="environment")
        later = await conn.initialize(protocol_version=7)
    assert later.protocol_version == 1
    clean(stderr)


def test_broken_input_gets_json_rpc_errors_and_stdout_holds_only_protocol(
    workspace: Path, fake_llm: FakeLLMServer
) -> None:
    lines = [
        "this is not json",
        "[1, 2, 3]",
        '{"jsonrpc": "2.0", "id": 5, "method": 12}',
        '{"jsonrpc": "2.0", "id": 6, "method": "session/nonsense", "params": {}}',
        '{"jsonrpc": "2.0", "id": 7, "method": "session/prompt", "params": {"sessionId": 3}}',
        '{"jsonrpc": "2.0", "id": 8, "method": "initialize", "params": {"protocolVersion": 1}}',
    ]
    proc = subprocess.run(
        [sys.executable, "-m", "react_agent_mini", "acp"],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        cwd=workspace,
        env=env_for("openai", fake_llm),
    )
    assert proc.returncode == 0, proc.stderr
    answers: list[dict[str, Any]] = [json.loads(line) for line in proc.stdout.splitlines()]
    by_id = {a.get("id"): a for a in answers}
    unnamed = [a["error"]["message"] for a in answers if a.get("id") is None]
    assert [m.split(":")[0] for m in unnamed] == ["Parse error", "Invalid Request"]
    assert by_id[5]["error"]["code"] == -32600
    assert by_id[6]["error"]["code"] == -32601
    assert by_id[7]["error"]["code"] == -32602
    assert by_id[8]["result"]["protocolVersion"] == 1
    assert "Traceback" not in proc.stderr


async def test_modes_and_the_model_option(workspace: Path, stderr: Path, fake_llm: FakeLLMServer) -> None:
    (workspace / "a.txt").write_text("a\n")
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("Write", {"file_path": "new.txt", "content": "made\n"}, id="w1")]),
        Reply(text="Plan mode kept me from writing."),
    )
    editor = Editor()
    async with agent(editor, workspace, env_for("anthropic", fake_llm), stderr) as (conn, _):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        assert session.modes is not None
        assert [m.id for m in session.modes.available_modes] == ["default", "acceptEdits", "plan", "bypassPermissions"]
        (option,) = session.config_options or []
        assert option.id == "model" and option.category == "model"
        assert option.current_value == "claude-sonnet-4-5"
        with pytest.raises(RequestError) as unknown:
            await conn.set_session_mode(session_id=session.session_id, mode_id="yolo")
        await conn.set_session_mode(session_id=session.session_id, mode_id="plan")
        changed = await conn.set_config_option(
            config_id="model", session_id=session.session_id, value="claude-opus-4-5"
        )
        await conn.prompt(session_id=session.session_id, prompt=[text_block("make new.txt")])
        with pytest.raises(RequestError) as not_offered:
            await conn.set_config_option(config_id="model", session_id=session.session_id, value="gpt-99")
    assert "unknown mode 'yolo'" in str(unknown.value) and "claude-haiku-4-5" in str(not_offered.value)
    assert changed.config_options[0].current_value == "claude-opus-4-5"
    assert {r.body["model"] for r in fake_llm.requests} == {"claude-opus-4-5"}
    assert not (workspace / "new.txt").exists() and editor.asked == []
    assert "Plan mode is read-only" in last_messages(fake_llm)
    clean(stderr)
