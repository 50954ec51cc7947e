"""The ACP edges a newcomer meets first: the README's client example, run exactly as printed; a permission request
that names its call as the editor's card does; and a `session/cancel` without a `sessionId`, which cannot be
answered (it is a notification) and so is ignored with one line on stderr — no traceback."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from acp import text_block

from ..fakes.fake_llm import FakeLLMServer, Reply, ToolCall
from ..test_cli import env_for
from .acp_editor import Editor, agent

README = Path(__file__).resolve().parents[2] / "README.md"
GENEROUS = 300
"""Seconds the example may take before the test gives up (a hang guard: it takes a few seconds)."""


def readme_acp_example() -> str:
    section = README.read_text().split("\n### From an editor (Agent Client Protocol)\n", 1)[1]
    section = re.split(r"\n#{2,3} ", section, maxsplit=1)[0]
    (code,) = re.findall(r"```python\n(.*?)```", section, re.DOTALL)
    return str(code)


def test_the_readme_client_example_drives_ram_acp(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    work = tmp_path / "work"
    work.mkdir()
    haiku = "Grey waves fold and break\n"
    fake_llm.enqueue(
        Reply(text="Writing it.", tool_calls=[ToolCall("Write", {"file_path": "notes.txt", "content": haiku})]),
        Reply(text="Done: notes.txt holds the haiku."),
    )
    example = tmp_path / "client.py"
    example.write_text(readme_acp_example())
    env = env_for("openai", fake_llm)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # `ram` is the venv's
    proc = subprocess.run(
        [sys.executable, str(example)], cwd=work, env=env, capture_output=True, text=True, timeout=GENEROUS
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "Writing it.",
        "[edit] Write notes.txt",
        "allowing once: Write notes.txt",
        "Done: notes.txt holds the haiku.",
        "stop reason: end_turn",
    ]
    assert (work / "notes.txt").read_text() == "Grey waves fold and break\n"
    assert "Traceback" not in proc.stderr


async def test_a_permission_request_carries_the_calls_title_and_kind(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    (tmp_path / "calc.py").write_text("x = 1\n")
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("Read", {"file_path": "calc.py"})]),
        Reply(tool_calls=[ToolCall("Edit", {"file_path": "calc.py", "old_string": "1", "new_string": "2"}, id="e")]),
        Reply(tool_calls=[ToolCall("Bash", {"command": "touch made.txt"}, id="b")]),
        Reply(text="Both refused."),
    )
    editor = Editor(answers=["reject_once", "reject_once"])
    async with agent(editor, tmp_path, env_for("openai", fake_llm), tmp_path / "stderr.txt") as (conn, _):
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("change calc.py")])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("then make a file")])
    edit, bash = editor.asked
    assert (edit.tool_call.title, edit.tool_call.kind) == ("Edit calc.py", "edit")
    assert (bash.tool_call.title, bash.tool_call.kind) == ("Run `touch made.txt`", "execute")
    cards = {u["toolCallId"]: u["title"] for u in editor.dumped() if u["sessionUpdate"] == "tool_call"}
    assert (cards["e"], cards["b"]) == (edit.tool_call.title, bash.tool_call.title)  # the same as the cards'


def test_session_cancel_without_a_session_id_is_ignored_with_one_line(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
        {"jsonrpc": "2.0", "method": "session/cancel", "params": {}},
        {"jsonrpc": "2.0", "method": "session/cancel"},
        {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": 7}},
        {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "no-such-session"}},  # fine: nothing
        {"jsonrpc": "2.0", "id": 2, "method": "authenticate", "params": {"methodId": "environment"}},
    ]
    proc = subprocess.run(
        [sys.executable, "-m", "react_agent_mini", "acp"],
        input="".join(json.dumps(line) + "\n" for line in lines),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env_for("openai", fake_llm),
        timeout=GENEROUS,
    )
    assert proc.returncode == 0, proc.stderr
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [a["id"] for a in answers] == [1, 2] and all("result" in a for a in answers)  # none for a notification
    assert "Traceback" not in proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if "session/cancel" in line]
    assert warnings == [
        "warning: acp: a session/cancel notification with invalid params was ignored (sessionId: Field required)",
        "warning: acp: a session/cancel notification with invalid params was ignored (params: Input should be a "
        "valid dictionary or instance of CancelNotification)",
        "warning: acp: a session/cancel notification with invalid params was ignored (sessionId: Input should be a "
        "valid string)",
    ]
