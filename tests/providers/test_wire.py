"""Real providers over real HTTP against the loopback fake server, for both wire formats.

The fake validates requests like the providers do (tool-call pairing, cache breakpoints, auth), so a request
that would get a 400 from the real API fails here too.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from react_agent_mini.app import default_tools, production_deps
from react_agent_mini.events import QueryEvent, StreamRetry, Terminal, TextDelta
from react_agent_mini.messages import ThinkingBlock, Usage, unanswered_tool_uses
from react_agent_mini.permissions.policy import allow_read_only
from react_agent_mini.providers.anthropic import AnthropicProvider
from react_agent_mini.providers.base import ModelProvider
from react_agent_mini.providers.openai_compat import OpenAICompatProvider
from react_agent_mini.providers.retry import RetryPolicy
from react_agent_mini.session import Session
from react_agent_mini.tools.base import ToolContext

from ..fakes.fake_llm import DropAfter, FakeLLMServer, Hang, HttpError, Malformed, Reply, ToolCall
from ..fakes.fake_llm import Usage as WireUsage

WIRES = ["openai", "anthropic"]


def provider_for(wire: str, server: FakeLLMServer, key: str = "test-key") -> ModelProvider:
    if wire == "openai":
        return OpenAICompatProvider(key, server.openai_base_url, "deepseek-chat")
    return AnthropicProvider(key, server.anthropic_base_url, "claude-test")


def session_for(provider: ModelProvider, tmp_path: Path, *, attempts: int = 4) -> Session:
    deps = production_deps(provider, RetryPolicy(max_attempts=attempts, base_delay=0.01), allow_read_only)
    return Session(deps=deps, tools=default_tools(), context=ToolContext(cwd=tmp_path), system_prompt="be brief")


async def run_task(session: Session, text: str = "do it") -> list[QueryEvent]:
    return [e async for e in session.run_turn(text)]


def echo(message: str, id: str | None = None) -> ToolCall:
    return ToolCall("Echo", {"message": message}, id=id)


@pytest.mark.parametrize("wire", WIRES)
async def test_task_with_several_tool_calls_including_two_in_one_message(
    wire: str, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm.enqueue(
        Reply(text="Two at once.", tool_calls=[echo("alpha"), echo("beta")]),
        Reply(tool_calls=[echo("gamma")]),
        Reply(
            text="All done: alpha beta gamma.", usage=WireUsage(input_tokens=30, output_tokens=9, cache_read_tokens=400)
        ),
    )
    provider = provider_for(wire, fake_llm)
    session = session_for(provider, tmp_path)
    events = await run_task(session)
    await provider.aclose()

    assert events[-1] == Terminal("completed", 3)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Two at once.All done: alpha beta gamma."
    assert len(fake_llm.requests) == 3
    # the last request carries every call with its result, in order
    last = fake_llm.requests[-1].body
    if wire == "openai":
        calls = [c for m in last["messages"] if m["role"] == "assistant" for c in m.get("tool_calls", [])]
        results = [(m["tool_call_id"], m["content"]) for m in last["messages"] if m["role"] == "tool"]
        assert last["stream_options"] == {"include_usage": True}
        assert last["messages"][0] == {"role": "system", "content": "be brief"}
        assert last["messages"][2]["content"] == "Two at once."  # text kept beside the calls
    else:
        calls = [
            b for m in last["messages"] if m["role"] == "assistant" for b in m["content"] if b["type"] == "tool_use"
        ]
        results = [
            (b["tool_use_id"], b["content"])
            for m in last["messages"]
            if m["role"] == "user"
            for b in m["content"]
            if b["type"] == "tool_result"
        ]
        assert last["system"][0]["cache_control"] == {"type": "ephemeral"}
        assert json.dumps(last).count("cache_control") == 3
    assert [r[1] for r in results] == ["alpha", "beta", "gamma"]
    assert [r[0] for r in results] == [c["id"] for c in calls]
    assert unanswered_tool_uses(session.messages) == []
    assert session.totals.last_usage == Usage(30, 9, 400)


@pytest.mark.parametrize("wire", WIRES)
async def test_reasoning_is_sent_back_with_tool_calls(wire: str, fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(Reply(thinking="I will echo first.", tool_calls=[echo("x")]), Reply(text="ok"))
    provider = provider_for(wire, fake_llm)
    session = session_for(provider, tmp_path)
    await run_task(session)
    await provider.aclose()
    assert isinstance(session.messages[1].content[0], ThinkingBlock)
    sent = fake_llm.requests[1].body["messages"]
    if wire == "openai":
        assistant = next(m for m in sent if m["role"] == "assistant")
        assert assistant["reasoning_content"] == "I will echo first."
    else:
        block = sent[1]["content"][0]
        assert block["type"] == "thinking" and block["thinking"] == "I will echo first." and block["signature"]


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize(
    "fault",
    [
        HttpError(429, "slow down", retry_after="0"),
        HttpError(500, "boom"),
        HttpError(529, "overloaded"),
        "drop",
    ],
    ids=["429", "500", "529", "dropped-midway"],
)
async def test_transient_faults_are_retried(wire: str, fault: Any, fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    if fault == "drop":
        fault = DropAfter(Reply(text="a long answer that gets cut", chunk_size=2), events=5)
    fake_llm.enqueue(fault, Reply(text="recovered"))
    provider = provider_for(wire, fake_llm)
    session = session_for(provider, tmp_path)
    events = await run_task(session)
    await provider.aclose()
    assert events[-1] == Terminal("completed", 1)
    retries = [e for e in events if isinstance(e, StreamRetry)]
    assert len(retries) == 1 and retries[0].attempt == 2
    # never half an assistant message in history
    assert [m.text for m in session.messages] == ["do it", "recovered"]
    assert len(fake_llm.requests) == 2


@pytest.mark.parametrize("wire", WIRES)
async def test_malformed_stream_is_a_clear_error(wire: str, fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(Malformed(Reply(text="hello world")))
    provider = provider_for(wire, fake_llm)
    session = session_for(provider, tmp_path)
    events = await run_task(session)
    await provider.aclose()
    end = events[-1]
    assert isinstance(end, Terminal) and end.reason == "error"
    assert end.error.startswith(f"{wire} API sent a malformed stream event")
    assert [m.role for m in session.messages] == ["user"]


@pytest.mark.parametrize("wire", WIRES)
async def test_persistent_failure_gives_up_with_the_status(wire: str, fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(*[HttpError(503, "down for maintenance")] * 3)
    provider = provider_for(wire, fake_llm)
    session = session_for(provider, tmp_path, attempts=3)
    events = await run_task(session)
    await provider.aclose()
    assert events[-1] == Terminal("error", 1, f"{wire} API error 503: down for maintenance")
    assert len(fake_llm.requests) == 3


@pytest.mark.parametrize("wire", WIRES)
async def test_bad_key_is_not_retried(wire: str, fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    provider = provider_for(wire, fake_llm, key="wrong")
    session = session_for(provider, tmp_path)
    events = await run_task(session)
    await provider.aclose()
    end = events[-1]
    assert isinstance(end, Terminal) and end.reason == "error"
    assert f"{wire} API error 401" in end.error and "check your API key" in end.error
    assert "wrong" not in end.error
    assert len(fake_llm.requests) == 1


@pytest.mark.parametrize("wire", WIRES)
async def test_cut_tool_call_is_never_run(wire: str, fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("Echo", '{"message": "never sent in fu')], stop="length"), Reply(text="ok")
    )
    provider = provider_for(wire, fake_llm)
    session = session_for(provider, tmp_path)
    events = await run_task(session)
    await provider.aclose()
    assert events[-1] == Terminal("completed", 2)
    result = session.messages[2].tool_results[0]
    assert result.is_error and "cut off by the output token limit" in result.content


@pytest.mark.parametrize("wire", WIRES)
async def test_abort_while_waiting_for_the_model(wire: str, fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(Hang())
    provider = provider_for(wire, fake_llm)
    session = session_for(provider, tmp_path)

    async def abort_when_sent() -> None:
        await fake_llm.wait_for_requests_async(1)
        session.abort_current_turn()

    aborter = asyncio.create_task(abort_when_sent())
    events = await run_task(session)
    await aborter
    await provider.aclose()
    assert events[-1] == Terminal("aborted", 1)
    assert [m.role for m in session.messages] == ["user"]
