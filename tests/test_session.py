"""Session (QueryEngine): history across turns, clear, injection, abort, usage totals."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from react_agent_mini.events import QueryEvent, Terminal, TextDelta
from react_agent_mini.loop import QueryDeps
from react_agent_mini.messages import Usage, unanswered_tool_uses, user_text
from react_agent_mini.providers.base import ModelRequest
from react_agent_mini.session import Session
from react_agent_mini.tools.base import ToolContext, ToolRegistry
from react_agent_mini.tools.echo import EchoTool

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
