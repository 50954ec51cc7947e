"""`SessionHost`, end to end: the real provider talking to the loopback fake LLM server (which refuses a history
whose tool calls are not all answered), real transcripts and their locks, a real MCP server process. Many turns on
one host; hooks seeing the session's fields and MCP tool names; a turn interrupted, cancelled or closed early
leaving a history the next turn can send; and `aclose` stopping everything, once, even when cancelled."""

from __future__ import annotations

import asyncio
import itertools
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from react_agent_mini import session_lock, transcript
from react_agent_mini.app import SessionOptions
from react_agent_mini.config import ProviderConfig
from react_agent_mini.events import Terminal, TextDelta, ToolFinished, ToolStarted
from react_agent_mini.hooks import HookEntry, HookOutput, Hooks
from react_agent_mini.host import HostEvent, SessionHost
from react_agent_mini.messages import Message, unanswered_tool_uses
from react_agent_mini.tools.base import Tool

from .fakes.fake_llm import FakeLLMServer, Reply, Stall, ToolCall
from .fakes.mcp_servers import support
from .hooks.test_hooks import ParkTool, Seen, hook, once_set

ECHO_TOOLS = ("default", "Echo")
"""The built-in tools and the Echo demo tool, which a real model is not offered unless named (issue 28)."""

INTERRUPTED = f"Error: {transcript.INTERRUPTED_RESULT}"
"""What the model reads for a call left without a result (OpenAI-compatible wire: errors say so)."""


def config(fake_llm: FakeLLMServer) -> ProviderConfig:
    return ProviderConfig("openai", "deepseek-chat", base_url=fake_llm.openai_base_url, api_key="test-key")


def build(
    fake_llm: FakeLLMServer,
    tmp_path: Path,
    *entries: HookEntry,
    extra_tools: Sequence[Tool] = (),
    mcp: bool = False,
) -> SessionHost:
    servers = {"toolbox": {"command": sys.executable, "args": [str(support.TOOLBOX)]}} if mcp else None
    options = SessionOptions(
        tmp_path, builtin_tools=ECHO_TOOLS, extra_tools=extra_tools, mcp_servers=servers, strict_mcp=True
    )
    return SessionHost.build(config(fake_llm), options, hooks=Hooks(entries))


async def turn(host: SessionHost, text: str) -> list[HostEvent]:
    return [e async for e in host.turn(text)]


def transcript_path(host: SessionHost) -> Path:
    opened = host.built.recorder.transcript
    assert opened is not None
    return opened.path


def sent_roles(fake_llm: FakeLLMServer, n: int) -> list[str]:
    return [m["role"] for m in fake_llm.requests[n].body["messages"]]


def tool_messages(fake_llm: FakeLLMServer, n: int) -> list[str]:
    return [m["content"] for m in fake_llm.requests[n].body["messages"] if m["role"] == "tool"]


def assert_saved(path: Path, messages: list[Message]) -> None:
    """The transcript on disk holds exactly the history, and it is valid as it is."""
    loaded = transcript.load(path)
    assert loaded.messages == messages and loaded.repaired == [] and loaded.answered_in_place == 0
    assert unanswered_tool_uses(messages) == []


def still_running() -> set[asyncio.Task[Any]]:
    return {t for t in asyncio.all_tasks() if t is not asyncio.current_task() and not t.done()}


async def test_many_turns_on_one_host_share_one_history_transcript_and_hooks(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("alpha\n")
    fake_llm.enqueue(
        Reply(text="Reading.", tool_calls=[ToolCall("Read", {"file_path": "notes.txt"})]),
        Reply(text="It says alpha."),
        Reply(text="You are welcome."),
        Reply(text="Echoing.", tool_calls=[ToolCall("Echo", {"message": "three"})]),
        Reply(text="Done."),
    )
    pre: Seen = []
    prompts: Seen = []
    host = build(fake_llm, tmp_path, hook("PreToolUse", seen=pre), hook("UserPromptSubmit", seen=prompts))
    async with host:
        terminals = [(await turn(host, text))[-1] for text in ("what is in notes.txt?", "thanks", "echo three")]
        path = transcript_path(host)
        assert session_lock.holder(path) is not None  # ours while the host is open
        messages = list(host.session.messages)
        session_id = host.session_id
    assert terminals == [Terminal("completed", 2), Terminal("completed", 1), Terminal("completed", 2)]
    bodies = [r.body["messages"] for r in fake_llm.requests]
    assert [len(b) for b in bodies] == [2, 4, 6, 8, 10]  # the system prompt, then the whole history each time
    for earlier, later in itertools.pairwise(bodies):
        assert later[: len(earlier)] == earlier
    assert tool_messages(fake_llm, 4)[-1] == "three"
    assert len(messages) == 10
    assert_saved(path, messages)
    assert session_lock.holder(path) is None  # closed: anyone may continue it
    # the hooks got Claude Code's common fields, naming this session and its transcript
    assert [p["tool_name"] for p in pre] == ["Read", "Echo"]
    assert {(p["session_id"], p["transcript_path"], p["cwd"], p["permission_mode"]) for p in pre} == {
        (session_id, str(path), str(tmp_path.resolve()), "default")
    }
    assert [p["prompt"] for p in prompts] == ["what is in notes.txt?", "thanks", "echo three"]


@pytest.mark.usefixtures("trusted")  # the project's own configuration applies
async def test_mcp_tools_meet_hooks_by_name_and_aclose_stops_the_server_and_frees_the_transcript(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm.enqueue(
        Reply(
            tool_calls=[
                ToolCall("mcp__toolbox__pid", {}),
                ToolCall("mcp__toolbox__echo", {"message": "hi"}),
                ToolCall("Echo", {"message": "plain"}),
            ]
        ),
        Reply(text="done"),
    )
    pre: Seen = []
    post: Seen = []
    host = build(
        fake_llm,
        tmp_path,
        hook("PreToolUse", {"decision": "block", "reason": "no echoes from servers"}, "mcp__toolbox__e.*", seen=pre),
        hook(
            "PostToolUse", {"hookSpecificOutput": {"additionalContext": "(from toolbox)"}}, "^mcp__toolbox__", seen=post
        ),
        mcp=True,
    )
    host.start()
    try:
        assert host.built.mcp.manager is not None
        assert await host.built.mcp.manager.wait_ready(120) == []
        events = await turn(host, "go")
        path = transcript_path(host)
    finally:
        await host.aclose()
    assert events[-1] == Terminal("completed", 2)
    pid_result, echo_result, plain = tool_messages(fake_llm, 1)
    assert echo_result == "Error: Blocked by a PreToolUse hook: no echoes from servers"  # as OpenAI gets errors
    assert plain == "plain"
    pid_text, note = pid_result.split("\n\n")
    assert note == "(from toolbox)"
    assert [p["tool_name"] for p in pre] == ["mcp__toolbox__echo"]
    assert [p["tool_name"] for p in post] == ["mcp__toolbox__pid"]
    # aclose: the server process is gone, the transcript closed and unlocked, nothing left running
    assert support.wait_until_gone([int(pid_text)]) == []
    assert session_lock.holder(path) is None
    assert still_running() == set()
    assert host.closed
    await host.aclose()  # a second close does nothing
    with pytest.raises(RuntimeError, match="closed"):
        await turn(host, "again")


@pytest.mark.usefixtures("trusted")  # the project's own configuration applies
async def test_aclose_cancelled_midway_still_closes_everything_before_it_returns(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm.enqueue(Reply(tool_calls=[ToolCall("mcp__toolbox__pid", {})]), Reply(text="done"))
    host = build(fake_llm, tmp_path, mcp=True)
    host.start()
    assert host.built.mcp.manager is not None
    assert await host.built.mcp.manager.wait_ready(120) == []
    await turn(host, "go")
    path = transcript_path(host)
    pid = int(tool_messages(fake_llm, 1)[0])
    closing = asyncio.ensure_future(host.aclose())
    await asyncio.sleep(0)  # it has begun stopping the MCP server
    closing.cancel()  # e.g. a second Ctrl+C, or the task running the session is cancelled
    with pytest.raises(asyncio.CancelledError):
        await closing
    # the cancellation came through, but only once every part was closed
    assert still_running() == set()
    assert session_lock.holder(path) is None
    assert support.wait_until_gone([pid]) == []
    await host.aclose()


async def test_a_turn_closed_early_leaves_a_history_the_next_turn_can_send(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm.enqueue(
        Reply(text="Echoing.", tool_calls=[ToolCall("Echo", {"message": "one"})]),
        Reply(text="Second turn answered."),
    )
    async with build(fake_llm, tmp_path) as host:
        events = host.turn("first")
        async for event in events:
            if isinstance(event, ToolStarted):  # the call is in the history, its result is not
                break
        await events.aclose()  # the client went away mid-turn
        assert not host.turn_in_progress
        assert unanswered_tool_uses(host.session.messages) == []
        second = await turn(host, "second")
        path = transcript_path(host)
        messages = list(host.session.messages)
    assert second[-1] == Terminal("completed", 1)  # the fake server accepted the history
    assert tool_messages(fake_llm, 1) == [INTERRUPTED]
    assert sent_roles(fake_llm, 1) == ["system", "user", "assistant", "tool", "user"]
    assert_saved(path, messages)


async def test_a_turn_closed_early_stops_the_calls_it_was_running(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    park = ParkTool(slow=1)
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("Park", {}), ToolCall("Park", {"quick": True})]),
        Reply(text="fine"),
    )
    async with build(fake_llm, tmp_path, extra_tools=[park]) as host:
        events = host.turn("park")
        async for event in events:
            if isinstance(event, ToolFinished):  # the quick one; the other is still running
                break
        await events.aclose()
        assert park.cancelled == 1
        assert not host.turn_in_progress
        assert (await turn(host, "next"))[-1] == Terminal("completed", 1)
        path = transcript_path(host)
        messages = list(host.session.messages)
    assert tool_messages(fake_llm, 1) == [INTERRUPTED] * 2
    assert_saved(path, messages)


async def test_a_turn_cancelled_mid_tool_leaves_a_history_the_next_turn_can_send(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    park = ParkTool(slow=1)
    fake_llm.enqueue(Reply(tool_calls=[ToolCall("Park", {})]), Reply(text="after the cancel"))
    async with build(fake_llm, tmp_path, extra_tools=[park]) as host:

        async def run() -> None:
            await turn(host, "park")

        task = asyncio.ensure_future(run())
        assert await once_set(park.started, task)
        task.cancel()  # a task that ignores the abort signal: the driver cancels it
        with pytest.raises(asyncio.CancelledError):
            await task
        assert park.cancelled == 1 and not host.turn_in_progress
        assert (await turn(host, "next"))[-1] == Terminal("completed", 1)
        path = transcript_path(host)
        messages = list(host.session.messages)
    assert tool_messages(fake_llm, 1) == [INTERRUPTED]
    assert_saved(path, messages)


async def test_interrupt_mid_stream_ends_the_turn_and_the_next_one_goes_on(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm.enqueue(Stall(Reply(text="a long answer that stops coming"), events=3), Reply(text="Back."))
    async with build(fake_llm, tmp_path) as host:
        assert not host.interrupt()  # nothing to interrupt yet
        first: list[HostEvent] = []
        async for event in host.turn("tell me"):
            first.append(event)
            if isinstance(event, TextDelta) and sum(isinstance(e, TextDelta) for e in first) == 1:
                assert host.interrupt("interrupted")
        assert not host.interrupt()
        second = await turn(host, "again")
        path = transcript_path(host)
        messages = list(host.session.messages)
    assert first[-1] == Terminal("aborted", 1)
    assert second[-1] == Terminal("completed", 1)
    assert sent_roles(fake_llm, 1) == ["system", "user", "user"]
    assert [m.text for m in messages] == ["tell me", "again", "Back."]
    assert_saved(path, messages)


async def test_a_blocked_prompt_reaches_neither_the_model_nor_the_transcript(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm.enqueue(Reply(text="Hello."))
    blocker = hook("UserPromptSubmit", {"decision": "block", "reason": "no secrets"})
    async with build(fake_llm, tmp_path, blocker) as host:
        events = await turn(host, "the key is sk-123")
        assert host.built.recorder.transcript is None  # nothing was ever written: no file
        assert host.session.messages == []
    assert events[-1] == Terminal("aborted", 0, "blocked by a UserPromptSubmit hook: no secrets")
    assert fake_llm.requests == []


async def test_interrupt_reaches_a_turn_waiting_on_its_prompt_hook(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    entered = asyncio.Event()

    async def slow(payload: dict[str, Any]) -> HookOutput:
        entered.set()
        await asyncio.Event().wait()
        return HookOutput()

    async with build(fake_llm, tmp_path, HookEntry("UserPromptSubmit", slow, timeout=30)) as host:
        running = asyncio.ensure_future(turn(host, "hello"))
        assert await once_set(entered, running)
        assert host.turn_in_progress and host.interrupt()
        events = await running
        assert events[-1] == Terminal("aborted", 0)
        assert not host.turn_in_progress and host.session.messages == []
    assert fake_llm.requests == []
