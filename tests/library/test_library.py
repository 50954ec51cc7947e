"""ram as a Python library: `Agent` (async) and `run` (sync) against the loopback fake LLM — configuration from
arguments and from the environment, the permission callback, streamed events, interrupting, closing early,
resuming, MCP servers, the example script, and what importing the package costs."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

import react_agent_mini
from react_agent_mini import (
    Agent,
    AgentEvent,
    Allow,
    AssistantTurn,
    ConfigError,
    Deny,
    Notice,
    PermissionAsked,
    PermissionDecided,
    Result,
    TextDelta,
    ToolFinished,
    ToolStarted,
    run,
    tool,
)
from react_agent_mini.messages import unanswered_tool_uses

from ..fakes.fake_llm import FakeLLMServer, HttpError, RecordedRequest, Reply, ToolCall
from ..fakes.mcp_servers import support
from ..test_cli import env_for

REPO = Path(__file__).resolve().parents[2]


def connected(server: FakeLLMServer, cwd: Path, **options: Any) -> Agent:
    """An Agent talking to the fake server (given explicitly, not through the environment)."""
    return Agent(cwd=cwd, base_url=server.openai_base_url, api_key="test-key", **options)


def tool_messages(request: RecordedRequest) -> dict[str, str]:
    """The tool results of an OpenAI-wire request, by call id."""
    return {m["tool_call_id"]: m["content"] for m in request.body["messages"] if m["role"] == "tool"}


def roles(request: RecordedRequest) -> list[str]:
    return [m["role"] for m in request.body["messages"]]


async def collect(agent: Agent, prompt: str) -> list[AgentEvent]:
    return [event async for event in agent.stream(prompt)]


def shout(text: str) -> str:
    """Say it louder (not read-only: it needs permission)."""
    SHOUTED.append(text)
    return text.upper()


SHOUTED: list[str] = []


def named(name: str) -> Any:
    """A new function marked with the tool name `name` (`@tool` marks the function it is given)."""

    def fn(text: str) -> str:
        return text

    return tool(name=name)(fn)


@pytest.fixture(autouse=True)
def forget_shouts() -> None:
    SHOUTED.clear()


# ---- configuration ----


async def test_the_environment_alone_configures_the_agent(
    fake_llm: FakeLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.openai_base_url)
    monkeypatch.setenv("OPENAI_MODEL", "gpt-4.1")
    fake_llm.enqueue(Reply(text="Hello from the environment."))
    async with Agent(cwd=tmp_path) as agent:
        result = await agent.run("hi")
    assert result.text == "Hello from the environment."
    request = fake_llm.requests[0]
    assert request.headers["authorization"] == "Bearer test-key"
    assert request.body["model"] == "gpt-4.1"


async def test_arguments_win_over_the_environment_which_stays_as_it_was(
    fake_llm: FakeLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "wrong-key")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens there
    monkeypatch.setenv("QUERY_MOCK", "1")
    before = dict(os.environ)
    fake_llm.enqueue(Reply(text="from the fake"))
    async with connected(fake_llm, tmp_path, model="my-model") as agent:
        assert agent.model == "my-model"
        result = await agent.run("hi")
    assert result.text == "from the fake"
    assert fake_llm.requests[0].body["model"] == "my-model"
    assert dict(os.environ) == before


async def test_the_anthropic_provider(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(Reply(text="Claude here."))
    async with Agent(
        cwd=tmp_path, provider="anthropic", base_url=fake_llm.anthropic_base_url, api_key="test-key"
    ) as agent:
        result = await agent.run("hi")
    assert result.text == "Claude here."
    assert fake_llm.requests[0].path == "/v1/messages"
    assert fake_llm.requests[0].headers["x-api-key"] == "test-key"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({}, "No API key found: pass api_key= to Agent"),
        ({"provider": "openai", "base_url": "https://api.example.com/v1"}, "OPENAI_API_KEY is not set and no api_key"),
        ({"provider": "bogus"}, "provider must be 'openai', 'anthropic' or 'mock', got 'bogus'"),
        ({"provider": "mock", "permission_mode": "yolo"}, "permission_mode must be one of default, acceptEdits"),
        ({"provider": "mock", "max_turns": 0}, "max_turns must be a whole number of at least 1, got 0"),
        ({"provider": "mock", "disallowed_tools": ["Bash(rm:*"]}, "disallowed_tools: 'Bash(rm:*': "),
        ({"provider": "mock", "tools": [lambda x: x]}, "tools: tool name '<lambda>' must be"),
        ({"provider": "mock", "tools": [shout, shout]}, "tools: two tools are named 'shout'"),
        ({"provider": "mock", "tools": [named("Skill")]}, "tools: 'Skill' is the name of a built-in tool"),
        ({"provider": "mock", "mcp_servers": {"x": {"args": ["a"]}}}, 'MCP config mcp_servers: server "x": '),
        ({"provider": "mock", "resume": "0123abcd"}, "resume: no single saved session of "),
        ({"provider": "mock", "cwd": "missing-dir"}, "cwd 'missing-dir' is not a directory"),
    ],
    ids=[
        "no key",
        "no key for a remote endpoint",
        "provider",
        "mode",
        "max turns",
        "bad deny rule",
        "lambda",
        "two tools, one name",
        "reserved name",
        "mcp server",
        "resume",
        "cwd",
    ],
)
def test_a_bad_configuration_raises_config_error_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, options: dict[str, Any], message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as raised:
        Agent(**options)
    assert str(raised.value).startswith(message)
    assert "\n" not in str(raised.value)


async def test_what_only_the_opened_session_knows_raises_config_error_there(tmp_path: Path) -> None:
    agent = Agent(cwd=tmp_path, provider="mock", tools=[named("Read")])
    with pytest.raises(ConfigError, match=r"^tools: 'Read' is the name of a built-in tool"):
        async with agent:
            pass
    (tmp_path / ".agents").mkdir()
    (tmp_path / ".agents" / "settings.json").write_text('{"permissions": {"deny": [')
    with pytest.raises(ConfigError, match=r"settings\.json.* nothing runs while its permission rules are unknown$"):
        await Agent(cwd=tmp_path, provider="mock").run("hi")


async def test_setup_warnings_come_first_as_notices(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    (tmp_path / ".agents").mkdir()
    (tmp_path / ".agents" / "settings.json").write_text('{"permissions": {"allow": ["Bash(git diff:*"]}}')
    fake_llm.enqueue(Reply(text="ok"))
    async with connected(fake_llm, tmp_path) as agent:
        events = await collect(agent, "hi")
    assert isinstance(events[0], Notice) and events[0].text.startswith("warning: ")
    assert "Bash(git diff:*" in events[0].text
    assert agent.warnings and agent.warnings[0] in events[0].text


# ---- the permission callback ----


async def test_stream_yields_text_tool_and_permission_events_then_a_result(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    asked: list[tuple[str, dict[str, Any]]] = []

    def allow_all(tool_name: str, tool_input: dict[str, Any]) -> Allow:
        asked.append((tool_name, tool_input))
        return Allow()

    fake_llm.enqueue(
        Reply(text="Shouting now.", tool_calls=[ToolCall("shout", {"text": "hi"}, id="c1")]),
        Reply(text="Done: HI."),
    )
    async with connected(fake_llm, tmp_path, tools=[shout], can_use_tool=allow_all) as agent:
        events = await collect(agent, "shout hi")
    kinds = [type(e).__name__ for e in events]
    collapsed = [k for i, k in enumerate(kinds) if i == 0 or k != kinds[i - 1] or k != "TextDelta"]
    assert collapsed == [
        "TextDelta",
        "AssistantTurn",
        "ToolStarted",
        "PermissionAsked",
        "PermissionDecided",
        "ToolFinished",
        "ToolResults",
        "TextDelta",
        "AssistantTurn",
        "Result",
    ]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Shouting now.Done: HI."
    ask = next(e for e in events if isinstance(e, PermissionAsked))
    assert (ask.tool_name, dict(ask.tool_input), ask.tool_use_id) == ("shout", {"text": "hi"}, "c1")
    assert ask.summary == 'Call shout {"text": "hi"}' and ask.reason == "shout is not read-only"
    decided = next(e for e in events if isinstance(e, PermissionDecided))
    assert decided.decision == Allow() and decided.error == ""
    finished = next(e for e in events if isinstance(e, ToolFinished))
    assert finished.result.content == "HI" and not finished.denied
    assert asked == [("shout", {"text": "hi"})]
    assert tool_messages(fake_llm.requests[1]) == {"c1": "HI"}
    result = events[-1]
    assert isinstance(result, Result) and result.text == "Done: HI." and result.stop_reason == "completed"


async def test_a_denial_lets_the_turn_go_on_with_the_reason_for_the_model(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    async def not_today(tool_name: str, tool_input: dict[str, Any]) -> Deny:
        return Deny("Not today: ask again tomorrow.")

    fake_llm.enqueue(Reply(tool_calls=[ToolCall("shout", {"text": "hi"}, id="c1")]), Reply(text="I will wait."))
    async with connected(fake_llm, tmp_path, tools=[shout], can_use_tool=not_today) as agent:
        result = await agent.run("shout hi")
    assert SHOUTED == []
    assert tool_messages(fake_llm.requests[1]) == {"c1": "Error: Not today: ask again tomorrow."}
    assert result.stop_reason == "completed" and result.text == "I will wait."
    assert [(d.tool_name, d.tool_use_id, dict(d.tool_input), d.message) for d in result.permission_denials] == [
        ("shout", "c1", {"text": "hi"}, "Not today: ask again tomorrow.")
    ]


async def test_changed_input_is_the_input_that_runs(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    def quieter(tool_name: str, tool_input: dict[str, Any]) -> Allow:
        return Allow(updated_input={"text": tool_input["text"] + ", please"})

    fake_llm.enqueue(Reply(tool_calls=[ToolCall("shout", {"text": "hi"}, id="c1")]), Reply(text="ok"))
    async with connected(fake_llm, tmp_path, tools=[shout], can_use_tool=quieter) as agent:
        await agent.run("shout hi")
    assert SHOUTED == ["hi, please"]
    assert tool_messages(fake_llm.requests[1]) == {"c1": "HI, PLEASE"}


async def test_deny_with_interrupt_ends_the_turn_and_the_next_one_is_accepted(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    def stop(tool_name: str, tool_input: dict[str, Any]) -> Deny:
        return Deny("Stop everything.", interrupt=True)

    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("shout", {"text": "a"}, id="c1"), ToolCall("shout", {"text": "b"}, id="c2")]),
        Reply(text="Stopped, as asked."),
    )
    async with connected(fake_llm, tmp_path, tools=[shout], can_use_tool=stop) as agent:
        result = await agent.run("shout twice")
        assert result.stop_reason == "aborted" and result.is_error
        assert result.error == "can_use_tool denied shout and ended the turn: Stop everything."
        assert len(fake_llm.requests) == 1
        assert unanswered_tool_uses(agent.messages) == []
        follow_up = await agent.run("what happened?")
    assert follow_up.text == "Stopped, as asked."
    results = tool_messages(fake_llm.requests[1])
    assert results["c1"] == "Error: Stop everything."
    assert results["c2"].startswith("Error: Skipped")
    assert SHOUTED == []


async def test_a_callback_that_raises_or_answers_nonsense_denies_that_call(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    def broken(tool_name: str, tool_input: dict[str, Any]) -> Allow:
        if tool_input["text"] == "a":
            raise ZeroDivisionError("division by zero")
        return True  # type: ignore[return-value]

    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("shout", {"text": "a"}, id="c1"), ToolCall("shout", {"text": "b"}, id="c2")]),
        Reply(text="Both were refused."),
    )
    async with connected(fake_llm, tmp_path, tools=[shout], can_use_tool=broken) as agent:
        events = await collect(agent, "shout")
    results = tool_messages(fake_llm.requests[1])
    assert results["c1"] == (
        "Error: Permission check failed: the can_use_tool callback raised ZeroDivisionError: division by zero. "
        'Call shout {"text": "a"} was not run.'
    )
    assert "the can_use_tool callback returned bool, not Allow() or Deny(...)" in results["c2"]
    errors = [e.error for e in events if isinstance(e, PermissionDecided)]
    assert errors[0] == "the can_use_tool callback raised ZeroDivisionError: division by zero"
    assert errors[1].startswith("the can_use_tool callback returned bool")
    result = events[-1]
    assert isinstance(result, Result) and result.stop_reason == "completed" and len(result.permission_denials) == 2
    assert SHOUTED == []


async def test_without_a_callback_asks_are_denied_saying_how_to_allow(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    @tool(read_only=True)
    def peek(key: str) -> str:
        """Look a key up (changes nothing)."""
        return f"value of {key}"

    fake_llm.enqueue(
        Reply(
            tool_calls=[
                ToolCall("shout", {"text": "hi"}, id="c1"),
                ToolCall("peek", {"key": "k"}, id="c2"),
                ToolCall("Write", {"file_path": "new.txt", "content": "x"}, id="c3"),
            ]
        ),
        Reply(text="ok"),
    )
    async with connected(fake_llm, tmp_path, tools=[shout, peek]) as agent:
        events = await collect(agent, "go")
    results = tool_messages(fake_llm.requests[1])
    assert results["c1"] == (
        'Error: Permission denied: Call shout {"text": "hi"} needs approval (shout is not read-only), and this agent '
        "has no can_use_tool callback to ask. To allow it, give the Agent allowed_tools=['shout'] or a can_use_tool "
        "callback."
    )
    assert results["c2"] == "value of k"  # read-only: no asking
    assert results["c3"].endswith(
        "To allow it, give the Agent allowed_tools=['Edit(./new.txt)'], permission_mode=\"acceptEdits\" or a "
        "can_use_tool callback."
    )
    assert not (tmp_path / "new.txt").exists()
    assert not any(isinstance(e, PermissionAsked) for e in events)

    fake_llm.enqueue(Reply(tool_calls=[ToolCall("shout", {"text": "hi"}, id="c3")]), Reply(text="ok"))
    async with connected(fake_llm, tmp_path, tools=[shout], allowed_tools=["shout"]) as agent:
        await agent.run("go")
    assert tool_messages(fake_llm.requests[3]) == {"c3": "HI"}


async def test_the_callback_is_not_asked_about_reads_or_calls_a_rule_allows(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("hello\n")
    asked: list[str] = []

    def record(tool_name: str, tool_input: dict[str, Any]) -> Deny:
        asked.append(tool_name)
        return Deny("no")

    fake_llm.enqueue(
        Reply(
            tool_calls=[
                ToolCall("Read", {"file_path": "notes.txt"}, id="c1"),
                ToolCall("shout", {"text": "x"}, id="c2"),
                ToolCall("Bash", {"command": "rm notes.txt"}, id="c3"),
            ]
        ),
        Reply(text="ok"),
    )
    async with connected(
        fake_llm, tmp_path, tools=[shout], allowed_tools="shout", disallowed_tools=["Bash(rm:*)"], can_use_tool=record
    ) as agent:
        await agent.run("go")
    results = tool_messages(fake_llm.requests[1])
    assert "hello" in results["c1"] and results["c2"] == "X"
    assert "blocked by the deny rule Bash(rm:*)" in results["c3"]
    assert asked == []
    assert (tmp_path / "notes.txt").exists()


# ---- stopping ----


async def test_interrupt_from_another_task_while_text_streams(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(Reply(text="word " * 200, chunk_size=5, delay=0.02))
    async with connected(fake_llm, tmp_path) as agent:
        stopper: asyncio.Task[bool] | None = None
        async for event in agent.stream("write a lot"):
            if isinstance(event, TextDelta) and stopper is None:
                stopper = asyncio.create_task(_interrupt_soon(agent))
            if isinstance(event, Result):
                result = event
        assert stopper is not None and await stopper is True
        assert result.stop_reason == "aborted" and result.error == "interrupted" and result.text == ""
        assert [m.role for m in result.messages] == ["user"]
        assert agent.interrupt() is False  # nothing runs any more
        fake_llm.enqueue(Reply(text="Short this time."))
        again = await agent.run("shorter, please")
    assert again.stop_reason == "completed"
    assert roles(fake_llm.requests[1])[-2:] == ["user", "user"]


async def _interrupt_soon(agent: Agent) -> bool:
    await asyncio.sleep(0)
    return agent.interrupt()


async def test_interrupt_from_another_thread_during_a_tool_answers_the_call(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    started = threading.Event()
    cancelled: list[bool] = []

    @tool(read_only=True)
    async def wait_forever() -> str:
        """Wait for something that never comes."""
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return "never"

    fake_llm.enqueue(Reply(tool_calls=[ToolCall("wait_forever", {}, id="c1")]))
    async with connected(fake_llm, tmp_path, tools=[wait_forever]) as agent:
        answers: list[bool] = []

        def stop_when_started() -> None:
            started.wait()
            answers.append(agent.interrupt())

        other = threading.Thread(target=stop_when_started)
        other.start()
        result = await agent.run("wait")
        other.join()
        assert answers == [True] and cancelled == [True]
        assert result.stop_reason == "aborted"
        assert result.messages[-1].tool_results[0].content == "Interrupted by the user before it finished."
        assert unanswered_tool_uses(agent.messages) == []
        fake_llm.enqueue(Reply(text="Sorry about that."))
        await agent.run("never mind")
    assert tool_messages(fake_llm.requests[1]) == {"c1": "Error: Interrupted by the user before it finished."}


async def test_closing_the_stream_early_stops_the_turn_and_keeps_the_history_valid(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    cancelled: list[str] = []
    running = asyncio.Event()

    @tool(read_only=True)
    async def slow(label: str) -> str:
        """Take a long time."""
        running.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append(label)
            raise
        return "done"

    fake_llm.enqueue(Reply(tool_calls=[ToolCall("slow", {"label": "closed"}, id="c1")]))
    async with connected(fake_llm, tmp_path, tools=[slow]) as agent:
        async with contextlib.aclosing(agent.stream("go")) as events:
            async for event in events:
                if isinstance(event, ToolStarted):
                    await running.wait()  # the turn goes on while we wait: the tool is running now
                    break
        assert cancelled == ["closed"]  # stopped by the time the stream is closed
        assert unanswered_tool_uses(agent.messages) == []

        # Left without closing: CPython closes the generator once nothing refers to it, and the next turn waits
        # for that turn to have stopped.
        fake_llm.enqueue(Reply(tool_calls=[ToolCall("slow", {"label": "dropped"}, id="c2")]))
        running.clear()
        async for event in agent.stream("go again"):
            if isinstance(event, ToolStarted):
                await running.wait()
                break
        fake_llm.enqueue(Reply(text="fine"))
        result = await agent.run("and now?")
    assert cancelled == ["closed", "dropped"]
    assert result.text == "fine"
    assert tool_messages(fake_llm.requests[2]) == {
        "c1": "Error: Interrupted by the user before it finished.",
        "c2": "Error: Interrupted by the user before it finished.",
    }


async def test_cancelling_the_task_that_reads_stops_the_turn(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    started = asyncio.Event()

    @tool(read_only=True)
    async def slow() -> str:
        """Take a long time."""
        started.set()
        await asyncio.Event().wait()
        return "done"

    fake_llm.enqueue(Reply(tool_calls=[ToolCall("slow", {}, id="c1")]))
    async with connected(fake_llm, tmp_path, tools=[slow]) as agent:
        reader = asyncio.create_task(agent.run("go"))
        await started.wait()
        reader.cancel()
        with pytest.raises(asyncio.CancelledError):
            await reader
        assert unanswered_tool_uses(agent.messages) == []
        fake_llm.enqueue(Reply(text="fine"))
        assert (await agent.run("again")).text == "fine"
    assert tool_messages(fake_llm.requests[1]) == {"c1": "Error: Interrupted by the user before it finished."}


@pytest.mark.usefixtures("trusted")  # the project's own configuration applies
async def test_interrupt_before_the_first_model_call_stops_the_wait_for_mcp_servers(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    started = tmp_path / "server-started"
    never_ready = f"open({str(started)!r}, 'w').close(); import time; time.sleep(600)"
    servers = {"sleepy": {"command": sys.executable, "args": ["-c", never_ready]}}
    async with connected(fake_llm, tmp_path, mcp_servers=servers) as agent:
        reader = asyncio.create_task(agent.run("hi"))
        while not started.exists():  # the turn now waits for the server, before any model call
            await asyncio.sleep(0.01)
        assert agent.interrupt() is True
        result = await reader
    assert result.stop_reason == "aborted" and result.messages == () and result.num_turns == 0
    assert fake_llm.requests == []


async def test_turns_started_together_run_one_after_the_other(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(Reply(text="first answer", delay=0.01), Reply(text="second answer"))
    async with connected(fake_llm, tmp_path) as agent:
        first, second = await asyncio.gather(agent.run("one"), agent.run("two"))
    assert (first.text, second.text) == ("first answer", "second answer")
    sent = [(m["role"], m["content"]) for m in fake_llm.requests[1].body["messages"] if m["role"] != "system"]
    assert sent == [("user", "one"), ("assistant", "first answer"), ("user", "two")]


# ---- results, sessions, lifetime ----


async def test_a_result_says_what_the_run_did(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(Reply(tool_calls=[ToolCall("shout", {"text": "a"}, id="c1")]), Reply(text="All done."))
    async with connected(fake_llm, tmp_path, model="gpt-4.1", tools=[shout], allowed_tools=["shout"]) as agent:
        result = await agent.run("shout a")
        assert result.session_id == agent.session_id
        assert agent.usage == result.usage
    assert (result.stop_reason, result.subtype, result.is_error, result.error) == ("completed", "success", False, "")
    assert result.num_turns == 2
    assert (result.usage.input_tokens, result.usage.output_tokens) == (200, 40)  # the fake's 100/20 per call
    assert result.cost_usd is not None and result.cost_usd > 0
    assert [m.role for m in result.messages] == ["user", "assistant", "user", "assistant"]
    assert result.messages[0].text == "shout a" and result.messages[-1].text == "All done."
    assert result.duration_ms >= 0


async def test_max_turns_and_api_errors_are_results(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(Reply(text="Calling.", tool_calls=[ToolCall("shout", {"text": "a"}, id="c1")]))
    async with connected(fake_llm, tmp_path, tools=[shout], allowed_tools=["shout"], max_turns=1) as agent:
        limited = await agent.run("go")
        fake_llm.enqueue(HttpError(400, "this request is not acceptable"))
        failed = await agent.run("again")
    assert (limited.stop_reason, limited.subtype, limited.is_error) == ("max_turns", "error_max_turns", True)
    assert limited.error == "reached the limit of 1 model calls (max_turns)" and limited.text == "Calling."
    assert (failed.stop_reason, failed.is_error) == ("error", True)
    assert "this request is not acceptable" in failed.error
    assert failed.num_turns == 0


async def test_resume_by_session_id_in_a_new_agent(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(Reply(text="Nice to meet you, Ada."), Reply(text="You are Ada."))
    async with connected(fake_llm, tmp_path) as first:
        session_id = first.session_id
        await first.run("My name is Ada.")
    again = connected(fake_llm, tmp_path, resume=session_id[:8])
    assert again.session_id == session_id  # known before the session opens
    async with again:
        assert [m.text for m in again.messages] == ["My name is Ada.", "Nice to meet you, Ada."]
        result = await again.run("What is my name?")
    assert result.session_id == session_id
    sent = [(m["role"], m["content"]) for m in fake_llm.requests[1].body["messages"] if m["role"] != "system"]
    assert sent == [("user", "My name is Ada."), ("assistant", "Nice to meet you, Ada."), ("user", "What is my name?")]


async def test_an_agent_without_async_with_opens_on_first_use_and_must_be_closed(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    agent = connected(fake_llm, tmp_path)
    fake_llm.enqueue(Reply(text="one"))
    assert (await agent.run("first")).text == "one"
    with pytest.raises(ConfigError, match="is in use by process"):
        Agent(cwd=tmp_path, provider="mock", resume=agent.session_id)  # this process holds it while open
    await agent.aclose()
    await agent.aclose()  # once is enough; again does nothing
    with pytest.raises(RuntimeError, match="this Agent is closed"):
        await agent.run("second")
    fake_llm.enqueue(Reply(text="two"))
    async with connected(fake_llm, tmp_path, resume=agent.session_id) as resumed:
        assert (await resumed.run("second")).text == "two"


def test_run_from_synchronous_code(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(Reply(tool_calls=[ToolCall("shout", {"text": "sync"}, id="c1")]), Reply(text="SYNC it is."))
    result = run(
        "shout sync", cwd=tmp_path, base_url=fake_llm.openai_base_url, api_key="test-key", tools=[shout],
        allowed_tools=["shout"],
    )  # fmt: skip
    assert result.text == "SYNC it is." and result.stop_reason == "completed"
    assert tool_messages(fake_llm.requests[1]) == {"c1": "SYNC"}


async def test_run_inside_an_event_loop_says_what_to_use_instead(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match=r"an event loop is running; in async code use `async with Agent"):
        run("hi", cwd=tmp_path, provider="mock")


def test_run_takes_exactly_what_agent_takes() -> None:
    agent_params = list(inspect.signature(Agent.__init__).parameters.values())[1:]
    run_params = list(inspect.signature(run).parameters.values())[1:]
    assert [(p.name, p.default, p.annotation) for p in run_params] == [
        (p.name, p.default, p.annotation) for p in agent_params
    ]


@pytest.mark.usefixtures("trusted")  # the project's own configuration applies
async def test_mcp_servers_given_to_the_agent(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    servers = {"time": {"command": support.time_server(), "args": ["--local-timezone", "UTC"]}}
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("mcp__time__get_current_time", {"timezone": "UTC"}, id="c1")]),
        Reply(text="It is now."),
    )
    async with connected(fake_llm, tmp_path, mcp_servers=servers) as agent:
        result = await agent.run("what time is it in UTC?")
    offered = {t["function"]["name"] for t in fake_llm.requests[0].body["tools"]}
    assert "mcp__time__get_current_time" in offered
    answer = json.loads(tool_messages(fake_llm.requests[1])["c1"])
    assert answer["timezone"] == "UTC" and "datetime" in answer
    assert result.text == "It is now."


# ---- the package ----


def test_the_example_script_runs(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("ram reads this file in five words\n" * 3)
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("word_count", {"path": "README.md"}, id="c1")]),
        Reply(text="README.md has 21 words."),
    )
    proc = subprocess.run(
        [sys.executable, str(REPO / "examples" / "library_agent.py")],
        env=env_for("openai", fake_llm),
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("README.md has 21 words.\n[completed · 2 model calls · session ")
    assert tool_messages(fake_llm.requests[1]) == {"c1": "21"}
    assert fake_llm.requests[0].body["messages"][-1]["content"] == "How many words are in README.md?"


def test_importing_the_package_and_touching_agent_stays_cheap() -> None:
    probe = (
        "import sys, react_agent_mini as ram\n"
        "alone = sorted(m for m in sys.modules if m.startswith('react_agent_mini'))\n"
        "ram.Agent, ram.run, ram.Allow, ram.Result, ram.tool\n"
        "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'httpx', 'httpcore', 'mcp', 'anyio', 'pydantic',"
        " 'rich', 'prompt_toolkit', 'tree_sitter', 'yaml'})\n"
        "print(alone, heavy)\n"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert proc.stdout.strip() == "['react_agent_mini'] []"


def test_every_public_name_resolves_and_the_package_is_typed() -> None:
    exported = set(react_agent_mini.__all__)
    assert exported - {"__version__"} == set(react_agent_mini._EXPORTS)
    for name in exported:
        assert getattr(react_agent_mini, name) is not None
    assert exported <= set(dir(react_agent_mini))
    assert react_agent_mini.ConfigError is __import__("react_agent_mini.config").config.ConfigError
    assert react_agent_mini.AssistantTurn is AssistantTurn
    with pytest.raises(AttributeError, match="has no attribute 'Nope'"):
        _ = react_agent_mini.Nope
    assert (Path(react_agent_mini.__file__).parent / "py.typed").is_file()
