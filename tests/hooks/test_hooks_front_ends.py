"""The same settings-file hooks in every way of driving ram: the Python library, the Claude Agent SDK protocol (beside
the SDK's own hook callbacks, which feed the same mechanism) and ACP; with real shell commands as hooks and the
loopback fake LLM as the model. The headless CLI and the REPL have theirs in `test_cli_hooks` and
`test_repl_extensions`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from react_agent_mini import Agent

from ..acp.acp_editor import Editor, agent
from ..fakes.fake_llm import FakeLLMServer, RecordedRequest, Reply, ToolCall
from ..stream_json.test_sdk_protocol import Ram
from ..test_cli import env_for

pytestmark = pytest.mark.usefixtures("trusted")  # the project's own configuration applies (see trust/)

NO_RM = (
    'python3 -c \'import json,sys; c=json.load(sys.stdin)["tool_input"]["command"]; '
    'sys.exit(0) if c.split()[:1] != ["rm"] else (print("use trash/, not rm", file=sys.stderr), sys.exit(2))\''
)
REASON = "Error: Blocked by a PreToolUse hook: use trash/, not rm"


def project(root: Path, hooks: dict[str, Any]) -> Path:
    (root / ".claude").mkdir()
    (root / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    (root / "keep.txt").write_text("precious\n")
    return root


def group(command: str, matcher: str = "") -> list[dict[str, Any]]:
    return [{"matcher": matcher, "hooks": [{"type": "command", "command": command}]}]


def tool_contents(request: RecordedRequest) -> list[str]:
    return [str(m["content"]) for m in request.body["messages"] if m["role"] == "tool"]


async def test_the_library_runs_the_settings_hooks(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    log = tmp_path / "ended.log"
    root = project(tmp_path, {"PreToolUse": group(NO_RM, "Bash"), "SessionEnd": group(f"cat > {log}")})
    fake_llm.enqueue(Reply(tool_calls=[ToolCall("Bash", {"command": "rm keep.txt"})]), Reply(text="kept it"))
    async with Agent(cwd=root, base_url=fake_llm.openai_base_url, api_key="test-key") as lib:
        result = await lib.run("clean up")
    assert result.text == "kept it" and (root / "keep.txt").exists()
    assert tool_contents(fake_llm.requests[-1]) == [REASON]  # the hook's reason, not a permission denial
    assert result.permission_denials == ()
    assert json.loads(log.read_text())["hook_event_name"] == "SessionEnd"


def test_the_sdk_protocol_runs_them_beside_its_own_callbacks_and_after_compact(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    root = project(
        tmp_path,
        {"PreToolUse": group(NO_RM, "Bash"), "SessionStart": group("echo 'Tests live in tests/.'", "compact")},
    )
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("Bash", {"command": "rm keep.txt"})]),
        Reply(text="Kept it."),
        Reply(text="Second turn."),
        Reply(text="SUMMARY: kept keep.txt."),
        Reply(text="Where the tests are."),
    )
    sdk = Ram(env=env_for("openai", fake_llm), cwd=root)
    sdk.response(sdk.control("initialize", hooks={"PreToolUse": [{"matcher": "Bash", "hookCallbackIds": ["h"]}]}))
    sdk.user("clean up")
    ask = sdk.until(lambda line: line["type"] == "control_request")
    assert ask["request"]["subtype"] == "hook_callback" and ask["request"]["input"]["tool_input"] == {
        "command": "rm keep.txt"
    }
    sdk.answer(
        ask["request_id"], {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}
    )
    sdk.result()
    sdk.user("go on")
    sdk.result()
    sdk.user("/compact")
    compacted = sdk.result()
    sdk.user("where are the tests?")
    sdk.result()
    assert sdk.close() == 0
    assert tool_contents(fake_llm.requests[1]) == [REASON]  # the command's block beats the callback's allow
    assert (root / "keep.txt").exists()
    assert "Compacted the conversation" in compacted["result"]
    before = json.dumps(fake_llm.requests[2].body["messages"])
    after = json.dumps(fake_llm.requests[-1].body["messages"])
    assert "Tests live in tests/." not in before  # SessionStart `compact` runs for a summary only
    assert "SessionStart hook additional context: Tests live in tests/." in after


async def test_acp_runs_them(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    root = project(tmp_path, {"PreToolUse": group(NO_RM, "Bash")})
    fake_llm.enqueue(Reply(tool_calls=[ToolCall("Bash", {"command": "rm keep.txt"})]), Reply(text="Kept it."))
    editor = Editor(answers=["allow_once"])
    stderr = tmp_path / "stderr.txt"
    async with agent(editor, root, env_for("openai", fake_llm), stderr) as (conn, _):
        session = await conn.new_session(cwd=str(root), mcp_servers=[])
        answer = await conn.prompt(session_id=session.session_id, prompt=[text_block("clean up")])
    assert answer.stop_reason == "end_turn"
    assert tool_contents(fake_llm.requests[-1]) == [REASON]
    assert editor.asked == [] and (root / "keep.txt").exists()  # blocked before anyone was asked
    (card,) = [u for u in editor.dumped() if u["sessionUpdate"] == "tool_call"]
    assert editor.tool_updates(card["toolCallId"])[-1]["status"] == "failed"
    assert "Traceback" not in stderr.read_text()
