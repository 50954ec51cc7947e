"""The unmodified Claude Agent SDK (`claude-agent-sdk` from PyPI) driving ram as its CLI.

`ClaudeAgentOptions(cli_path=...)` names a small wrapper script that runs `python -m react_agent_mini`; the SDK
starts it with its own argv, speaks its control protocol over stdin/stdout, and parses every line with its own
parser. The model is the loopback fake server; the tools run for real in a temporary workspace.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TextBlock,
    ToolPermissionContext,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    query,
)

from ..fakes.fake_llm import FakeLLMServer, Reply, ToolCall
from ..test_cli import WIRES, env_for


@pytest.fixture
def cli(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An executable that is ram, as the SDK's `cli_path` wants one."""
    path = tmp_path_factory.mktemp("bin") / "ram-cli"
    path.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m react_agent_mini "$@"\n')
    path.chmod(0o755)
    return path


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "hello.txt").write_text("hello from the file\n")
    return tmp_path


def options(
    cli: Path, workspace: Path, server: FakeLLMServer, stderr: list[str], wire: str = "openai", **more: Any
) -> ClaudeAgentOptions:
    env = env_for(wire, server)
    keys = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")
    return ClaudeAgentOptions(
        cli_path=str(cli),
        cwd=str(workspace),
        env={k: env[k] for k in keys if k in env},
        stderr=stderr.append,
        **more,
    )


async def collect(messages: AsyncIterator[Any]) -> list[Any]:
    return [message async for message in messages]


def tool_results(messages: list[Any]) -> list[ToolResultBlock]:
    return [b for m in messages if isinstance(m, UserMessage) for b in m.content if isinstance(b, ToolResultBlock)]


def sent_tool_results(server: FakeLLMServer) -> list[str]:
    """What the model was given back for its tool calls, in the last request (either wire)."""
    out: list[str] = []
    for message in server.requests[-1].body["messages"]:
        if message["role"] == "tool":
            out.append(str(message["content"]))
        elif isinstance(message.get("content"), list):
            out += [str(b.get("content")) for b in message["content"] if b.get("type") == "tool_result"]
    return out


@pytest.mark.parametrize("wire", WIRES)
async def test_query_with_read_and_bash(wire: str, cli: Path, workspace: Path, fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue(
        Reply(text="Reading first.", tool_calls=[ToolCall("Read", {"file_path": "hello.txt"})]),
        Reply(tool_calls=[ToolCall("Bash", {"command": "echo hi"})]),
        Reply(text="The file says hello; echo printed hi."),
    )
    stderr: list[str] = []
    messages = await collect(
        query(prompt="Read hello.txt and run echo hi", options=options(cli, workspace, fake_llm, stderr, wire))
    )
    assert not any("Traceback" in line for line in stderr), stderr
    init, *rest, result = messages
    assert isinstance(init, SystemMessage) and init.subtype == "init"
    assert init.data["cwd"] == str(workspace.resolve()) and "Bash" in init.data["tools"]
    assert isinstance(result, ResultMessage)
    assert result.subtype == "success" and not result.is_error and result.num_turns == 3
    assert result.result == "The file says hello; echo printed hi."
    assistants = [m for m in rest if isinstance(m, AssistantMessage)]
    assert [type(b).__name__ for m in assistants for b in m.content] == [
        "TextBlock",
        "ToolUseBlock",
        "ToolUseBlock",
        "TextBlock",
    ]
    assert all(m.model for m in assistants)
    results = tool_results(messages)
    assert "hello from the file" in str(results[0].content) and results[1].content == "hi"
    assert results[1].is_error is False
    assert result.session_id == init.data["session_id"]


async def test_a_client_over_several_turns_then_resume(cli: Path, workspace: Path, fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue(Reply(text="First answer."), Reply(text="Second answer."), Reply(text="Resumed answer."))
    stderr: list[str] = []
    async with ClaudeSDKClient(options(cli, workspace, fake_llm, stderr)) as client:
        await client.query("my first question")
        first = await collect(client.receive_response())
        await client.set_model("a-switched-model")
        await client.query("my second question")
        second = await collect(client.receive_response())
    results = [m for m in (*first, *second) if isinstance(m, ResultMessage)]
    assert [r.result for r in results] == ["First answer.", "Second answer."]
    session = results[0].session_id
    assert results[1].session_id == session
    # one conversation: the second call carries the first exchange
    assert [len(r.body["messages"]) for r in fake_llm.requests] == [2, 4]  # system + user; then + answer + user
    assert fake_llm.requests[1].body["model"] == "a-switched-model"
    second_assistant = next(m for m in second if isinstance(m, AssistantMessage))
    assert second_assistant.model == "a-switched-model"

    resumed = await collect(
        query(prompt="and a third", options=options(cli, workspace, fake_llm, stderr, resume=session))
    )
    assert isinstance(resumed[-1], ResultMessage) and resumed[-1].session_id == session
    assert "my first question" in json.dumps(fake_llm.requests[-1].body["messages"])


async def test_can_use_tool_allows_denies_and_changes_input(
    cli: Path, workspace: Path, fake_llm: FakeLLMServer
) -> None:
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("Write", {"file_path": "notes.txt", "content": "as the model wrote it\n"})]),
        Reply(tool_calls=[ToolCall("Bash", {"command": "touch forbidden.txt"})]),
        Reply(tool_calls=[ToolCall("Bash", {"command": "touch wanted.txt"})]),
        Reply(text="All done."),
    )
    asked: list[tuple[str, dict[str, Any], ToolPermissionContext]] = []

    async def decide(name: str, tool_input: dict[str, Any], context: ToolPermissionContext) -> Any:
        asked.append((name, tool_input, context))
        if name == "Write":
            return PermissionResultAllow()
        if tool_input["command"] == "touch forbidden.txt":
            return PermissionResultDeny(message="Not that file: create wanted.txt instead.")
        return PermissionResultAllow(updated_input={"command": "touch changed.txt"})

    async def prompt() -> AsyncIterator[dict[str, Any]]:  # can_use_tool needs a streamed prompt
        yield {"type": "user", "message": {"role": "user", "content": "make files"}, "parent_tool_use_id": None}

    stderr: list[str] = []
    messages = await collect(
        query(prompt=prompt(), options=options(cli, workspace, fake_llm, stderr, can_use_tool=decide))
    )
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.subtype == "success" and result.result == "All done."
    assert [name for name, _, _ in asked] == ["Write", "Bash", "Bash"]
    # allowed as it was
    assert (workspace / "notes.txt").read_text() == "as the model wrote it\n"
    # denied: the call did not run, the model read the message, and the turn went on
    assert not (workspace / "forbidden.txt").exists()
    denial = tool_results(messages)[1]
    assert denial.is_error is True and denial.content == "Not that file: create wanted.txt instead."
    assert "Not that file: create wanted.txt instead." in sent_tool_results(fake_llm)[1]
    assert result.permission_denials and result.permission_denials[0]["tool_name"] == "Bash"
    # allowed with other input: the command that ran is the callback's
    assert (workspace / "changed.txt").exists() and not (workspace / "wanted.txt").exists()
    # what the callback was told
    _, _, context = asked[1]
    uses = [b for m in messages if isinstance(m, AssistantMessage) for b in m.content if isinstance(b, ToolUseBlock)]
    assert context.tool_use_id == uses[1].id
    assert context.description == "Run: touch forbidden.txt"
    assert [s.to_dict() for s in context.suggestions] == [
        {"type": "addRules", "destination": "session", "rules": [{"toolName": "Bash", "ruleContent": "touch:*"}],
         "behavior": "allow"}
    ]  # fmt: skip


async def test_an_always_answer_records_a_session_rule(cli: Path, workspace: Path, fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("Bash", {"command": "touch one.txt"})]),
        Reply(tool_calls=[ToolCall("Bash", {"command": "touch two.txt"})]),
        Reply(text="done"),
    )
    asked: list[str] = []

    async def always(name: str, tool_input: dict[str, Any], context: ToolPermissionContext) -> Any:
        asked.append(tool_input["command"])
        return PermissionResultAllow(updated_permissions=context.suggestions)

    stderr: list[str] = []
    async with ClaudeSDKClient(options(cli, workspace, fake_llm, stderr, can_use_tool=always)) as client:
        await client.query("touch two files")
        messages = await collect(client.receive_response())
    assert isinstance(messages[-1], ResultMessage) and messages[-1].subtype == "success"
    assert asked == ["touch one.txt"]  # the rule `Bash(touch:*)` allowed the second without asking
    assert (workspace / "one.txt").exists() and (workspace / "two.txt").exists()


async def test_a_pre_tool_use_hook_blocks_bash(cli: Path, workspace: Path, fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("Read", {"file_path": "hello.txt"}), ToolCall("Bash", {"command": "touch x.txt"})]),
        Reply(text="Understood, no shell."),
    )
    seen: list[dict[str, Any]] = []

    async def guard(hook_input: Any, tool_use_id: str | None, context: Any) -> Any:
        seen.append({"input": hook_input, "tool_use_id": tool_use_id})
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "Shell commands are off today.",
            }
        }

    stderr: list[str] = []
    opts = options(
        cli, workspace, fake_llm, stderr, allowed_tools=["Bash(touch:*)"],
        hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[guard])]},
    )  # fmt: skip
    messages = await collect(query(prompt="read and touch", options=opts))
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "Understood, no shell."
    assert len(seen) == 1  # Read does not match "Bash"
    assert seen[0]["input"]["tool_name"] == "Bash" and seen[0]["input"]["tool_input"] == {"command": "touch x.txt"}
    assert seen[0]["input"]["hook_event_name"] == "PreToolUse" and seen[0]["tool_use_id"]
    assert not (workspace / "x.txt").exists()  # allowed by the rule, blocked by the hook
    sent = sent_tool_results(fake_llm)
    assert "hello from the file" in sent[0] and "Shell commands are off today." in sent[1]


async def test_interrupt_while_text_streams(cli: Path, workspace: Path, fake_llm: FakeLLMServer) -> None:
    slow = Reply(text="word " * 200, chunk_size=5, delay=0.02)  # 200 deltas, 4 s if nothing stops it
    fake_llm.enqueue(slow, Reply(text="After the interruption."))
    stderr: list[str] = []
    async with ClaudeSDKClient(options(cli, workspace, fake_llm, stderr, include_partial_messages=True)) as client:
        await client.query("talk for a long time")
        streamed: list[Any] = []
        deltas_seen = 0
        async for message in client.receive_response():
            streamed.append(message)
            if isinstance(message, StreamEvent) and message.event.get("type") == "content_block_delta":
                deltas_seen += 1
                if deltas_seen == 5:
                    await client.interrupt()
        await client.query("are you there?")
        after = await collect(client.receive_response())
    stopped = streamed[-1]
    assert isinstance(stopped, ResultMessage)
    assert stopped.subtype == "error_during_execution" and stopped.is_error and stopped.errors
    deltas = [m.event["delta"]["text"] for m in streamed if isinstance(m, StreamEvent)
              and m.event["type"] == "content_block_delta"]  # fmt: skip
    assert 0 < len(deltas) < 200  # the stream really stopped part way
    assert isinstance(after[-1], ResultMessage) and after[-1].result == "After the interruption."


async def test_set_permission_mode_lets_edits_through(cli: Path, workspace: Path, fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("Write", {"file_path": "a.txt", "content": "denied\n"})]),
        Reply(text="denied"),
        Reply(tool_calls=[ToolCall("Write", {"file_path": "a.txt", "content": "accepted\n"})]),
        Reply(text="written"),
    )
    stderr: list[str] = []
    async with ClaudeSDKClient(options(cli, workspace, fake_llm, stderr)) as client:
        await client.query("write a.txt")
        before = await collect(client.receive_response())
        await client.set_permission_mode("acceptEdits")
        with pytest.raises(Exception, match="allow-dangerously-skip-permissions"):
            await client.set_permission_mode("bypassPermissions")
        await client.query("write a.txt again")
        after = await collect(client.receive_response())
    assert isinstance(before[-1], ResultMessage) and before[-1].permission_denials
    status = [m for m in after if isinstance(m, SystemMessage) and m.subtype == "status"]
    assert status and status[0].data["permissionMode"] == "acceptEdits"
    init = next(m for m in after if isinstance(m, SystemMessage) and m.subtype == "init")
    assert init.data["permissionMode"] == "acceptEdits"
    assert (workspace / "a.txt").read_text() == "accepted\n"


async def test_partial_messages_carry_the_text_deltas(cli: Path, workspace: Path, fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue(Reply(text="Partial messages, piece by piece.", chunk_size=4))
    stderr: list[str] = []
    messages = await collect(
        query(
            prompt="stream",
            options=options(cli, workspace, fake_llm, stderr, "anthropic", include_partial_messages=True),
        )
    )
    events = [m for m in messages if isinstance(m, StreamEvent)]
    kinds = [e.event["type"] for e in events]
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
    text = "".join(e.event["delta"]["text"] for e in events if e.event["type"] == "content_block_delta")
    assert text == "Partial messages, piece by piece." and kinds.count("content_block_delta") > 3
    whole = next(m for m in messages if isinstance(m, AssistantMessage))
    assert [b.text for b in whole.content if isinstance(b, TextBlock)] == [text]
    assert {e.session_id for e in events} == {messages[-1].session_id}
