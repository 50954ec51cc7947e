"""claude-code-acp (`@zed-industries/claude-code-acp`, the npm bridge editors use to run Claude Code) with ram as its
Claude Code executable (`CLAUDE_CODE_EXECUTABLE`), driven end to end by the ACP client side as an editor drives it:
the bridge speaks ACP to us and Claude Code's stream-json protocol to ram, and ram's model is the loopback fake LLM.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from acp import text_block

from ..fakes.fake_llm import FakeLLMServer, Reply, ToolCall
from ..fakes.mcp_servers.support import SERVERS_DIR, node, require
from ..test_cli import env_for
from .acp_editor import Editor, agent
from .test_acp import clean

BRIDGE = SERVERS_DIR / "node_modules/@zed-industries/claude-code-acp/dist/index.js"


@pytest.fixture
def ram_executable(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """ram as an executable file, which the bridge's SDK checks for and runs with Claude Code's argv."""
    path = tmp_path_factory.mktemp("bin") / "ram-cli"
    path.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m react_agent_mini "$@"\n')
    path.chmod(0o755)
    return path


async def test_claude_code_acp_drives_ram_text_cards_and_a_permission(
    tmp_path: Path, ram_executable: Path, fake_llm: FakeLLMServer
) -> None:
    workspace = tmp_path / "work"
    workspace.mkdir()
    (workspace / "hello.txt").write_text("hello from the file\n")
    fake_llm.enqueue(
        Reply(text="Let me read it.", tool_calls=[ToolCall("Read", {"file_path": "hello.txt"}, id="r1")]),
        Reply(tool_calls=[ToolCall("Bash", {"command": "touch made.txt"}, id="b1")]),
        Reply(text="Read it and made the file."),
    )
    env = env_for(
        "openai",
        fake_llm,
        CLAUDE_CODE_EXECUTABLE=str(ram_executable),
        CLAUDE_CONFIG_DIR=str(tmp_path / "claude-config"),
    )
    editor = Editor(answers=["allow_once"])
    stderr = tmp_path / "bridge-stderr.txt"
    async with agent(editor, workspace, env, stderr, node(), str(require(BRIDGE, "claude-code-acp (npm)"))) as (
        conn,
        init,
    ):
        assert init.agent_info is not None and init.agent_info.name == "@zed-industries/claude-code-acp"
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        answer = await conn.prompt(session_id=session.session_id, prompt=[text_block("read hello.txt, then touch")])
    assert answer.stop_reason == "end_turn"
    assert editor.text() == "Let me read it.Read it and made the file."
    assert len([k for k in editor.kinds() if k == "agent_message_chunk"]) > 3  # streamed (stream_event lines)
    read = editor.tool_updates("r1")
    assert read[0]["sessionUpdate"] == "tool_call" and read[0]["kind"] == "read"
    assert read[-1]["status"] == "completed" and "hello from the file" in read[-1]["rawOutput"]
    (asked,) = editor.asked
    assert asked.tool_call.tool_call_id == "b1" and asked.tool_call.raw_input == {"command": "touch made.txt"}
    assert (workspace / "made.txt").exists()
    assert editor.tool_updates("b1")[-1]["status"] == "completed"
    clean(stderr)
