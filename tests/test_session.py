"""Session (QueryEngine): history across turns, clear, injection, abort, usage totals."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from react_agent_mini.events import Compacted, QueryEvent, Terminal, TextDelta
from react_agent_mini.loop import QueryDeps
from react_agent_mini.messages import Usage, unanswered_tool_uses, user_text
from react_agent_mini.providers.base import ModelRequest
from react_agent_mini.providers.errors import error_for_status
from react_agent_mini.session import Session
from react_agent_mini.tools.base import ToolContext, ToolRegistry
from react_agent_mini.tools.builtin.echo import EchoTool

from .scripted import ScriptedModel, call, reply


def last_user_says(request: ModelRequest):
    return reply(f"got: {request.messages[-1].text}", usage=Usage(100, 10, 50))


def make(model: ScriptedModel, tmp_path: Path) -> Session:
    return Session(
        deps=QueryDeps(call_model=model),
        tools=ToolRegistry([EchoTool()]),
        context=ToolContext(cwd=tmp_path),
        system_prompt="project rules",
    )


async def turn(session: Session, text: str, **kw) -> list[QueryEvent]:
    return [e async for e in session.run_turn(text, **kw)]


async def test_history_accumulates_and_the_model_sees_it(tmp_path: Path) -> None:
    model = ScriptedModel([last_user_says])
    session = make(model, tmp_path)
    first = await turn(session, "My name is Alice")
    await turn(session, "What is my name?")
    assert any(isinstance(e, TextDelta) for e in first)
    assert [m.text for m in session.messages] == [
        "My name is Alice",
        "got: My name is Alice",
        "What is my name?",
        "got: What is my name?",
    ]
    assert [m.text for m in model.requests[1].messages] == [m.text for m in session.messages[:3]]
    assert session.totals.usage == Usage(200, 20, 100) and session.totals.model_calls == 2


async def test_clear_forgets_history_but_keeps_the_system_prompt(tmp_path: Path) -> None:
    model = ScriptedModel([last_user_says])
    session = make(model, tmp_path)
    await turn(session, "one")
    session.clear()
    assert session.messages == []
    await turn(session, "two")
    assert [r.system for r in model.requests] == ["project rules", "project rules"]
    assert [m.text for m in model.requests[1].messages] == ["two"]


async def test_inject_before_goes_before_the_user_text(tmp_path: Path) -> None:
    model = ScriptedModel([last_user_says])
    session = make(model, tmp_path)
    await turn(session, "question", inject_before=[user_text("resource body", meta=True)])
    sent = model.requests[0].messages
    assert [(m.text, m.meta) for m in sent] == [("resource body", True), ("question", False)]
    with pytest.raises(ValueError):
        await turn(session, "   ")


async def test_abort_current_turn_leaves_a_valid_history(tmp_path: Path) -> None:
    model = ScriptedModel(
        [reply(call("Echo", "e1", message="x")), reply("slow answer")], stream_delay=5, slow_calls={2}
    )
    session = make(model, tmp_path)  # the second call hangs until aborted

    async def abort_soon() -> None:
        while len(model.requests) < 2:
            await asyncio.sleep(0.01)
        assert session.turn_in_progress
        assert session.abort_current_turn()

    aborter = asyncio.create_task(abort_soon())
    events = await turn(session, "go")
    await aborter
    assert events[-1] == Terminal("aborted", 2)
    assert not session.turn_in_progress and not session.abort_current_turn()
    assert [m.role for m in session.messages] == ["user", "assistant", "user"]
    assert unanswered_tool_uses(session.messages) == []
    # and the session goes on
    model.slow_calls = set()
    model.steps = [reply("back")]
    model.requests.clear()
    assert (await turn(session, "again"))[-1] == Terminal("completed", 1)


async def test_a_context_length_refusal_compacts_once_and_tries_again(tmp_path: Path) -> None:
    too_long = error_for_status(
        400, "This model's maximum context length is 16000 tokens.", provider="openai", retry_after=None
    )
    model = ScriptedModel(
        [
            reply("first answer"),
            too_long,  # the second question does not fit
            reply("SUMMARY: the user asked a first question."),  # the side call
            last_user_says,  # the retry
        ]
    )
    session = make(model, tmp_path)
    await turn(session, "first question")
    events = await turn(session, "second question")
    assert events[-1] == Terminal("completed", 1)
    compacted = [e for e in events if isinstance(e, Compacted)]
    assert len(compacted) == 1 and compacted[0].notice.startswith("The model refused the request as too long.")
    retry = model.requests[-1]
    assert any("SUMMARY: the user asked a first question." in m.text for m in retry.messages)
    assert [m.text for m in retry.messages if m.is_user_text and not m.meta][-1] == "second question"
    assert session.compaction.window == 16000  # learned from the refusal
    assert unanswered_tool_uses(session.messages) == []


async def test_a_second_refusal_or_a_failed_summary_ends_the_turn_with_the_error(tmp_path: Path) -> None:
    too_long = error_for_status(400, "prompt is too long: 9000 tokens > 8000 maximum", provider="x", retry_after=None)
    model = ScriptedModel([reply("first answer"), too_long, reply("SUMMARY"), too_long])
    session = make(model, tmp_path)
    await turn(session, "first question")
    events = await turn(session, "second question")
    end = events[-1]
    assert isinstance(end, Terminal) and end.reason == "error" and "/compact" in end.error  # tried once, then said so
    assert len(model.requests) == 4
    failing = ScriptedModel([reply("first answer"), too_long])  # the summary call is refused too
    session = make(failing, tmp_path)
    await turn(session, "first question")
    events = await turn(session, "second question")
    end = events[-1]
    assert isinstance(end, Terminal) and end.reason == "error" and not any(isinstance(e, Compacted) for e in events)
