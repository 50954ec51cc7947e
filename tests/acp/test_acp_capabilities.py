"""`ram acp` using what the editor offers: its buffers (`fs`), its terminal, its MCP servers (stdio and HTTP, merged
with `.mcp.json`), prompt content (resource links, embedded resources, images) and slash commands. The editor is
`acp_editor.Editor` on the package's client side, the model the loopback fake LLM.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from acp import text_block
from acp.schema import (
    EmbeddedResourceContentBlock,
    HttpHeader,
    HttpMcpServer,
    ImageContentBlock,
    McpServerStdio,
    ResourceContentBlock,
    TextResourceContents,
)

from ..fakes.fake_llm import FakeLLMServer, Reply, ToolCall
from ..fakes.mcp_servers import support
from ..test_cli import env_for
from .acp_editor import Editor, agent
from .test_acp import clean, last_messages, stderr, workspace

__all__ = ["stderr", "workspace"]  # fixtures


def tool_names(server: FakeLLMServer) -> list[str]:
    return [t["function"]["name"] for t in server.requests[0].body["tools"]]


async def test_with_fs_the_agent_reads_and_edits_the_editors_buffers(
    workspace: Path, stderr: Path, fake_llm: FakeLLMServer
) -> None:
    notes = workspace / "notes.txt"
    notes.write_text("saved text on disk\n")
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("Read", {"file_path": "notes.txt"})]),
        Reply(
            tool_calls=[ToolCall("Edit", {"file_path": "notes.txt", "old_string": "unsaved", "new_string": "edited"})]
        ),
        Reply(tool_calls=[ToolCall("Write", {"file_path": "sub/new.txt", "content": "brand new\n"})]),
        Reply(text="Done."),
    )
    editor = Editor(answers=["allow_once", "allow_once"], buffers={str(notes): "unsaved buffer text\n"})
    async with agent(editor, workspace, env_for("openai", fake_llm), stderr) as (conn, _):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        answer = await conn.prompt(session_id=session.session_id, prompt=[text_block("edit notes.txt")])
    assert answer.stop_reason == "end_turn"
    read_result = json.dumps(fake_llm.requests[1].body["messages"][-1])
    assert "1\\tunsaved buffer text" in read_result and "saved text on disk" not in read_result
    assert editor.written == {str(notes): "edited buffer text\n", str(workspace / "sub/new.txt"): "brand new\n"}
    assert notes.read_text() == "saved text on disk\n"  # the editor owns the buffer; nothing went to the disk
    assert not (workspace / "sub/new.txt").exists()
    assert "Edited notes.txt (1 replacement)" in last_messages(fake_llm)
    assert {"Read", "Write", "Edit"} <= set(tool_names(fake_llm))
    clean(stderr)


async def test_with_fs_an_edit_of_a_buffer_changed_since_it_was_read_is_refused(
    workspace: Path, stderr: Path, fake_llm: FakeLLMServer
) -> None:
    notes = workspace / "notes.txt"
    notes.write_text("one\n")
    editor = Editor(answers=["allow_once"], buffers={str(notes): "one\n"})
    edit = ToolCall("Edit", {"file_path": "notes.txt", "old_string": "one", "new_string": "two"})
    fake_llm.enqueue(Reply(tool_calls=[ToolCall("Read", {"file_path": "notes.txt"})]), Reply(text="Read it."))
    async with agent(editor, workspace, env_for("openai", fake_llm), stderr) as (conn, _):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("read notes")])
        assert editor.buffers is not None
        editor.buffers[str(notes)] = "one, typed by the user meanwhile\n"
        fake_llm.enqueue(Reply(tool_calls=[edit]), Reply(text="It changed."))
        await conn.prompt(session_id=session.session_id, prompt=[text_block("now edit it")])
    assert "changed since it was last read" in last_messages(fake_llm)
    assert editor.written == {}
    clean(stderr)


async def test_with_a_terminal_bash_runs_in_the_editors_terminal_without_our_credentials(
    workspace: Path, stderr: Path, fake_llm: FakeLLMServer
) -> None:
    (workspace / "sub").mkdir()
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("Bash", {"command": "cd sub && echo key=${OPENAI_API_KEY:-none}"}, id="b1")]),
        Reply(tool_calls=[ToolCall("Bash", {"command": "pwd; exit 3"}, id="b2")]),
        Reply(text="Ran both."),
    )
    editor = Editor(
        answers=["allow_once", "allow_once"],
        terminal=True,
        terminal_env={"OPENAI_API_KEY": "sk-editor", "PATH": "/usr/bin:/bin"},
    )
    async with agent(editor, workspace, env_for("openai", fake_llm), stderr) as (conn, _):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("run things")])
    first, second = editor.runs.values()
    assert first.command == "env" and "-u" in first.args and "OPENAI_API_KEY" in first.args
    assert first.cwd == str(workspace) and second.cwd == str(workspace / "sub")  # the cd carried over
    assert first.released and second.released
    messages = fake_llm.requests[-1].body["messages"]
    results = [m["content"] for m in messages if m["role"] == "tool"]
    assert results[0] == "key=none"
    assert results[1].endswith(f"{workspace / 'sub'}\n\nExit code 3")  # (the wire marks an error result)
    embedded = [
        u for u in editor.tool_updates("b1") if u.get("content") == [{"type": "terminal", "terminalId": "term-1"}]
    ]
    assert [u["status"] for u in embedded] == ["in_progress", "completed"]
    assert editor.tool_updates("b2")[-1]["status"] == "failed"
    clean(stderr)


@pytest.mark.usefixtures("trusted")  # the project's own configuration applies
async def test_the_editors_mcp_servers_join_those_of_mcp_json(
    workspace: Path, stderr: Path, fake_llm: FakeLLMServer
) -> None:
    (workspace / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"time": {"command": support.time_server(), "args": ["--local-timezone", "UTC"]}}})
    )
    command, port = support.toolbox_http()
    fake_llm.enqueue(
        Reply(
            tool_calls=[
                ToolCall("mcp__toolbox__echo", {"message": "ping"}),
                ToolCall("mcp__remote__authorization", {}),
            ]
        ),
        Reply(text="Both answered."),
    )
    editor = Editor()
    with support.http_server(command, port):
        async with agent(editor, workspace, env_for("openai", fake_llm), stderr) as (conn, _):
            servers: list[Any] = [
                McpServerStdio(name="toolbox", command=sys.executable, args=[str(support.TOOLBOX)], env=[]),
                HttpMcpServer(
                    type="http",
                    name="remote",
                    url=f"http://127.0.0.1:{port}/mcp",
                    headers=[HttpHeader(name="Authorization", value="Bearer from-the-editor")],
                ),
            ]
            session = await conn.new_session(cwd=str(workspace), mcp_servers=servers)
            answer = await conn.prompt(session_id=session.session_id, prompt=[text_block("call them")])
    assert answer.stop_reason == "end_turn"
    names = tool_names(fake_llm)
    assert "mcp__toolbox__echo" in names and "mcp__remote__authorization" in names
    assert any(name.startswith("mcp__time__") for name in names)
    sent = last_messages(fake_llm)
    assert "ping" in sent and "Bearer from-the-editor" in sent
    cards = [u for u in editor.dumped() if u["sessionUpdate"] == "tool_call"]
    assert cards[0]["title"].startswith("echo (toolbox)")
    commands = [u for u in editor.dumped() if u["sessionUpdate"] == "available_commands_update"]
    assert any(c["name"] == "toolbox:plan_trip" for c in commands[-1]["availableCommands"])
    clean(stderr)


async def test_resources_and_images_in_a_prompt(workspace: Path, stderr: Path, fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue(Reply(text="Seen."))
    editor = Editor()
    prompt: list[Any] = [
        text_block("compare "),
        ResourceContentBlock(type="resource_link", name="hello.txt", uri=(workspace / "hello.txt").as_uri()),
        text_block(" with "),
        EmbeddedResourceContentBlock(
            type="resource",
            resource=TextResourceContents(uri=(workspace / "draft.py").as_uri(), text="print('unsaved draft')"),
        ),
        ImageContentBlock(type="image", data="iVBORw0KGgo=", mime_type="image/png"),
    ]
    async with agent(editor, workspace, env_for("openai", fake_llm), stderr) as (conn, _):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=prompt)
    messages = fake_llm.requests[0].body["messages"]
    assert messages[-1] == {"role": "user", "content": "compare @hello.txt with @draft.py"}
    context = json.dumps(messages[-2])
    assert "print('unsaved draft')" in context and f'ref=\\"{(workspace / "draft.py").as_uri()}\\"' in context
    assert "an image (image/png" in context
    assert "ram cannot pass images" in editor.text()
    clean(stderr)


async def test_slash_commands_are_offered_and_run(workspace: Path, stderr: Path, fake_llm: FakeLLMServer) -> None:
    skill = workspace / ".agents/skills/greet/SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\ndescription: Greet someone warmly\n---\nGreet the person named in the arguments.\n")
    fake_llm.enqueue(Reply(text="Hello, Ada!"))
    editor = Editor()
    async with agent(editor, workspace, env_for("openai", fake_llm), stderr) as (conn, _):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await editor.wait_until(lambda: "available_commands_update" in editor.kinds())
        await conn.prompt(session_id=session.session_id, prompt=[text_block("/greet Ada")])
        unknown = await conn.prompt(session_id=session.session_id, prompt=[text_block("/compact")])
    offered = next(u for u in editor.dumped() if u["sessionUpdate"] == "available_commands_update")
    assert [c["name"] for c in offered["availableCommands"]] == ["compact", "init", "greet"]  # every front end's set
    assert offered["availableCommands"][2]["description"] == "Greet someone warmly"
    sent = json.dumps(fake_llm.requests[0].body["messages"])
    assert "Greet the person named in the arguments." in sent and '"content": "Ada"' in sent
    assert unknown.stop_reason == "end_turn" and len(fake_llm.requests) == 1  # too little to summarise: said so
    clean(stderr)


@pytest.mark.parametrize("mode", ["acceptEdits"])
async def test_a_starting_mode_from_the_command_line(
    mode: str, workspace: Path, stderr: Path, fake_llm: FakeLLMServer
) -> None:
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("Write", {"file_path": "made.txt", "content": "x\n"})]), Reply(text="Made.")
    )
    editor = Editor()
    command = [sys.executable, "-m", "react_agent_mini", "acp", "--permission-mode", mode]
    async with agent(editor, workspace, env_for("openai", fake_llm), stderr, *command) as (conn, _):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        assert session.modes is not None and session.modes.current_mode_id == mode
        await conn.prompt(session_id=session.session_id, prompt=[text_block("make it")])
    assert (workspace / "made.txt").read_text() == "x\n" and editor.asked == []
    clean(stderr)
